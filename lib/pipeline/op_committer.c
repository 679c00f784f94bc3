/*
 * The built-in committer operator (w2l-design(7) section 2, the second phase of the two-phase
 * commit): collects the writers' WRITE_RESULTs of its tables per checkpoint, records them in
 * the checkpoint state at the barrier, and once the checkpoint is sealed (notify_complete,
 * on this operator's own thread) commits ONE Iceberg snapshot per table and checkpoint —
 * never two checkpoints in one snapshot, since the sequence numbers that decide which
 * equality deletes apply come from the snapshot.
 *
 * Tables: the owner (owner.h) applies the checkpoint's table operations before this
 * committer commits the checkpoint, so a table is always the incarnation of its name the
 * files were written for, or another one: every file names its table-uuid, and files of a
 * dropped (or dropped and re-created) table are discarded, never committed. Cached table
 * handles are dropped when operations were applied.
 *
 * Exactly once: every snapshot's summary carries w2l.job-id, w2l.epoch, w2l.checkpoint-id
 * and w2l.source-position. Before committing checkpoint C to a table, the committer reads
 * the table's snapshot ancestry (newest first) for this job's newest checkpoint; C at or
 * below it is skipped, whatever the state says. A commit that loses a race (to another
 * process: nothing inside the pipeline writes the table meanwhile) reloads the table and
 * checks again before retrying, so a retry after an ambiguous failure cannot commit twice
 * either. Each commit and retry first claims the table for this job (owner.h): a table
 * another job owns stops the job, its files kept in the state.
 *
 * State (keys in ops.h): at barrier N every table's file list of N, plus those of older
 * checkpoints not yet committed (carried forward), so the newest sealed checkpoint alone
 * says what is left to commit after a crash; open() with a restored checkpoint loads it and
 * the first notify_complete() commits it. The epoch is the restored one plus one.
 *
 * Manifests are written at commit time, by w2l__ice_table_commit's first attempt, not at
 * the barrier (w2l-design(7) section 2): the state is the durable record of the files, and a
 * manifest written per barrier would be one more file per table and checkpoint to orphan
 * when a commit is retried on another base.
 *
 * Format version 3 tables: the writers' position-delete files become deletion vectors at
 * each commit attempt (w2l__ice_dv_merge against the table as that attempt finds it: one
 * vector per data file, the table's earlier one merged in and removed in the same
 * snapshot); an attempt that loses a race drops its vectors and manifests and the next
 * merges anew; once committed, the Parquet files are removed (no table names them).
 *
 * One cut (a catalog with multi-table commits, catalog.rest.transaction-max-tables): the
 * tables of a checkpoint are prepared (each its change applied, manifests and list written,
 * the new metadata made: the same per-attempt work as alone, ledger position, completeness
 * mark, deletion vectors and rebased deletes included) and handed to the catalog in
 * batches of at most that many; each is finished with its own outcome, and those that lost
 * a race are reloaded and prepared again for the next batch. The pipeline runs one
 * committer then, so a checkpoint's tables all meet here. A catalog that refuses the batch
 * gets the prepared tables one by one, and so everything after.
 *
 * Scale: WRITE_RESULTs are gathered in a hash map per checkpoint, pending checkpoints in
 * one list in commit order, table handles in a hash map with an LRU bound; nothing walks
 * all tables per table. Different tables commit independently: a table that fails is
 * reported (the check-commit sink stops the job) after the others of the checkpoint were
 * committed.
 *
 * Files (op_committer_int.h is what they share): this one is the operator (open, process,
 * close): WRITE_RESULTs gathered per table, the pending checkpoints, the barrier's state
 * and the restored one's read back. op_committer_state.c: the job id, the file objects
 * parsed into data files, the state keys encoded and decoded. op_committer_tables.c: the
 * table-handle cache. op_committer_commit.c: the commits of a sealed checkpoint, one table
 * through its attempts, alone or in one cut, and the compactions maintenance finished.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_committer_int.h"
#include "complete.h"

struct acc {                  /* WRITE_RESULTs of the checkpoint in progress, one table */
    uint64_t h;
    char *ns, *table;
    w2l_buf files;            /* file objects, comma-separated */
    size_t nfiles;
    int32_t schema_id;
    int truncate;             /* a writer saw a TRUNCATE of the table in this checkpoint */
    struct acc *chain;
};

/* ------------------------------------------------------------------ pending -------- */

void w2l__cm_pend_free(pend *p)
{
    if (!p) return;
    w2l__free(p->ns);
    w2l__free(p->table);
    w2l__free(p->value);
    w2l__free(p);
}

static void pend_append(committer *c, pend *p)
{
    p->next = NULL;
    if (c->ptail) c->ptail->next = p;
    else c->phead = p;
    c->ptail = p;
}

typedef struct restore_ctx {
    committer *c;
    uint64_t ckpt;
    w2l_error *err;
    w2l_rc rc;
} restore_ctx;

static int restore_key(void *x, const char *key)
{
    restore_ctx *r = x;
    committer *c = r->c;
    const char *p = key + strlen(W2L_OPS_FILES_PREFIX);
    char *end;
    unsigned long long ck = strtoull(p, &end, 10);
    const char *dot = *end == '/' ? strchr(end + 1, '.') : NULL;
    if (!dot || ck == 0) {
        w2l__log(W2L_LOG_WARN, "committer %u: state key %s of checkpoint %llu is not ours; ignored",
                 c->index, key, (unsigned long long)r->ckpt);
        return 0;
    }
    pend *pe = w2l__calloc(1, sizeof *pe);
    if (pe) {
        pe->ckpt = ck;
        pe->ns = w2l__cm_key_decode(end + 1, (size_t)(dot - end - 1));
        pe->table = w2l__cm_key_decode(dot + 1, strlen(dot + 1));
    }
    if (!pe || !pe->ns || !pe->table) {
        w2l__cm_pend_free(pe);
        r->rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
        return 1;
    }
    if (w2l__table_hash(pe->ns, pe->table) % c->n != c->index) { /* another committer's table */
        w2l__cm_pend_free(pe);
        return 0;
    }
    w2l_buf b = {0};
    r->rc = w2l_state_get(c->st, r->ckpt, key, &b, r->err);
    if (r->rc == W2L_OK) r->rc = w2l__buf_cstr(&b, r->err);
    if (r->rc != W2L_OK) {
        w2l_buf_release(&b);
        w2l__cm_pend_free(pe);
        return 1;
    }
    pe->value = (char *)b.data;
    pe->len = b.len;
    pe->restored = 1;
    pend_append(c, pe);
    return 0;
}

/* ------------------------------------------------------------- accumulation ------- */

static void acc_clear(committer *c)
{
    for (size_t i = 0; i < c->an; i++) {
        acc *a = c->alist[i];
        w2l__free(a->ns);
        w2l__free(a->table);
        w2l_buf_release(&a->files);
        w2l__free(a);
    }
    c->an = 0;
    if (c->abuckets) memset(c->abuckets, 0, c->acap * sizeof *c->abuckets);
}

static w2l_rc acc_get(committer *c, const char *ns, const char *table, acc **out, w2l_error *err)
{
    uint64_t h = w2l__table_hash(ns, table);
    if (c->acap)
        for (acc *a = c->abuckets[h & (c->acap - 1)]; a; a = a->chain)
            if (a->h == h && strcmp(a->ns, ns) == 0 && strcmp(a->table, table) == 0) {
                *out = a;
                return W2L_OK;
            }
    if (c->an + 1 > c->acap) { /* grow the buckets with the table count: load <= 1 */
        size_t ncap = c->acap ? c->acap * 2 : 64;
        acc **nb = w2l__calloc(ncap, sizeof *nb);
        W2L_NOMEM_IF(!nb, err);
        for (size_t i = 0; i < c->an; i++) {
            acc *a = c->alist[i];
            a->chain = nb[a->h & (ncap - 1)];
            nb[a->h & (ncap - 1)] = a;
        }
        w2l__free(c->abuckets);
        c->abuckets = nb;
        c->acap = ncap;
    }
    if (c->an == c->alcap) {
        size_t ncap = c->alcap ? c->alcap * 2 : 64;
        acc **nl = w2l__realloc(c->alist, ncap * sizeof *nl);
        W2L_NOMEM_IF(!nl, err);
        c->alist = nl;
        c->alcap = ncap;
    }
    acc *a = w2l__calloc(1, sizeof *a);
    W2L_NOMEM_IF(!a, err);
    a->h = h;
    a->ns = w2l__strdup(ns);
    a->table = w2l__strdup(table);
    if (!a->ns || !a->table) {
        w2l__free(a->ns), w2l__free(a->table), w2l__free(a);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    a->chain = c->abuckets[h & (c->acap - 1)];
    c->abuckets[h & (c->acap - 1)] = a;
    c->alist[c->an++] = a;
    *out = a;
    return W2L_OK;
}

static w2l_rc on_result(committer *c, const w2l_element *e, w2l_error *err)
{
    w2l__json *j;
    w2l_rc rc =
        w2l__json_parse(e->payload ? e->payload : "", e->payload ? e->payload_len : 0, &j, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "WRITE_RESULT of %s.%s: ", e->ns, e->table);
        return rc;
    }
    acc *a = NULL;
    rc = acc_get(c, e->ns, e->table, &a, err);
    int64_t sid = -1;
    if (rc == W2L_OK && !w2l__json_int64(w2l__json_get(j, "schema-id"), &sid))
        a->schema_id = (int32_t)sid;
    int tr = 0;
    if (rc == W2L_OK && !w2l__json_bool(w2l__json_get(j, "truncate"), &tr) && tr) a->truncate = 1;
    /* each file names the table incarnation it was written for */
    const char *uuid = w2l__json_str(w2l__json_get(j, "table-uuid"));
    for (w2l__json *f = (w2l__json *)w2l__json_first(w2l__json_get(j, "files")); rc == W2L_OK && f;
         f = (w2l__json *)w2l__json_next(f)) {
        if (uuid && w2l__json_add(f, "table-uuid", w2l__json_new_string(uuid))) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        char *text = w2l__json_print(f, 0);
        if (!text) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK && a->nfiles) rc = w2l_buf_append(&a->files, ",", 1, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&a->files, text, strlen(text), err);
        w2l__free(text);
        a->nfiles++;
    }
    w2l__json_free(j);
    return rc;
}

static w2l_rc on_barrier(committer *c, uint64_t ckpt, w2l_error *err)
{
    w2l_buf pos = {0}, v = {0}, key = {0};
    w2l_rc rc = w2l_state_get(c->st, ckpt, "source/position", &pos, err);
    if (rc == W2L_NOTFOUND) rc = W2L_OK;
    else if (rc == W2L_OK) rc = w2l__buf_cstr(&pos, err);
    w2l__json *posj = NULL;
    if (rc == W2L_OK && pos.len) posj = w2l__json_new_stringn((const char *)pos.data, pos.len);
    char *pos_text = posj ? w2l__json_print(posj, 0) : NULL;
    if (rc == W2L_OK && pos.len && !pos_text) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    /* the checkpoint's completeness mark, for the summaries (complete.h) */
    char mark[48] = "";
    if (rc == W2L_OK) {
        w2l_buf mb = { 0 };
        w2l_rc r = w2l_state_get(c->st, ckpt, W2L_COMPLETE_STATE_KEY, &mb, err);
        if (r == W2L_OK && (r = w2l__buf_cstr(&mb, err)) == W2L_OK)
            snprintf(mark, sizeof mark, "\"complete-through-ms\":%lld,",
                     strtoll((const char *)mb.data, NULL, 10));
        w2l_buf_release(&mb);
        if (r != W2L_OK && r != W2L_NOTFOUND) rc = r;
    }
    /* this checkpoint's tables join the pending list */
    for (size_t i = 0; rc == W2L_OK && i < c->an; i++) {
        acc *a = c->alist[i];
        if (!a->nfiles && !a->truncate) continue;
        w2l__json *ns = w2l__json_new_string(a->ns), *tb = w2l__json_new_string(a->table);
        char *nst = ns ? w2l__json_print(ns, 0) : NULL, *tbt = tb ? w2l__json_print(tb, 0) : NULL;
        w2l__json_free(ns);
        w2l__json_free(tb);
        v.len = 0;
        if (!nst || !tbt) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else
            rc = w2l__buf_printf(
                &v, err,
                "{\"ns\":%s,\"table\":%s,\"checkpoint\":%llu,\"source-position\":%s,"
                "\"schema-id\":%d,%s%s\"files\":[%.*s]}",
                nst, tbt, (unsigned long long)ckpt, pos_text ? pos_text : "null", (int)a->schema_id,
                mark, a->truncate ? "\"truncate\":true," : "", (int)a->files.len,
                a->files.data ? (const char *)a->files.data : "");
        w2l__free(nst);
        w2l__free(tbt);
        if (rc == W2L_OK) rc = w2l__buf_cstr(&v, err);
        pend *p = rc == W2L_OK ? w2l__calloc(1, sizeof *p) : NULL;
        if (rc == W2L_OK && !p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK) {
            p->ckpt = ckpt;
            p->ns = a->ns;
            p->table = a->table;
            a->ns = a->table = NULL;
            p->value = (char *)v.data;
            p->len = v.len;
            memset(&v, 0, sizeof v);
            pend_append(c, p);
        }
    }
    acc_clear(c);
    /* everything not yet committed goes into this checkpoint's state */
    for (pend *p = c->phead; rc == W2L_OK && p; p = p->next) {
        rc = w2l__cm_files_key(&key, p->ckpt, p->ns, p->table, err);
        if (rc == W2L_OK)
            rc = w2l_state_put(c->st, ckpt, (const char *)key.data, p->value, p->len, err);
    }
    if (rc == W2L_OK) {
        char e[24];
        int n = snprintf(e, sizeof e, "%llu", (unsigned long long)c->epoch);
        rc = w2l_state_put(c->st, ckpt, W2L_OPS_EPOCH_KEY, e, (size_t)n, err);
    }
    if (rc == W2L_OK)
        rc = w2l_state_put(c->st, ckpt, W2L_OPS_JOB_KEY, c->job_id, strlen(c->job_id), err);
    w2l__json_free(posj);
    w2l__free(pos_text);
    w2l_buf_release(&pos);
    w2l_buf_release(&v);
    w2l_buf_release(&key);
    return rc;
}

/* ------------------------------------------------------------------ operator API --- */

static w2l_rc cm_open(const w2l_operator_methods *m, const w2l_conf *conf, unsigned index,
                      unsigned n, w2l_state *st, uint64_t restored, w2l_operator *self,
                      w2l_error *err)
{
    (void)m;
    committer *c = (committer *)self;
    c->conf = conf;
    c->index = index;
    c->n = n ? n : 1;
    c->st = st;
    c->epoch = 1;
    c->owner = w2l__owner_current();
    c->maint = w2l__maint_current();
    c->ledger = w2l__ledger_current();
    if (c->owner) c->generation = w2l__owner_generation(c->owner);
    int64_t v;
    W2L_TRY(w2l_conf_get_int(conf, "commit-retries", &v, err));
    c->retries = (int)v;
    W2L_TRY(w2l_conf_get_int(conf, "catalog.rest.transaction-max-tables", &v, err));
    c->batch_max = v > 1 ? v : 0;
    w2l_buf b = {0};
    if (restored) {
        w2l_rc rc = w2l_state_get(st, restored, W2L_OPS_EPOCH_KEY, &b, err);
        if (rc == W2L_OK && (rc = w2l__buf_cstr(&b, err)) == W2L_OK)
            c->epoch = strtoull((char *)b.data, NULL, 10) + 1;
        w2l_buf_release(&b);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    }
    W2L_TRY(w2l__ops_job_restored(conf, st, restored, &c->job_id, err));
    c->claims = w2l__owner_claims(c->owner);
    if (!c->claims) W2L_TRY(w2l__claims_new(conf, c->job_id, &c->own_claims, err));
    if (!c->claims) c->claims = c->own_claims;
    if (restored) {
        restore_ctx r = {c, restored, err, W2L_OK};
        W2L_TRY(w2l_state_keys(st, restored, W2L_OPS_FILES_PREFIX, restore_key, &r, err));
        W2L_TRY(r.rc);
    }
    w2l__log(W2L_LOG_DEBUG, "committer %u: job %s, epoch %llu", index, c->job_id,
             (unsigned long long)c->epoch);
    return W2L_OK;
}

static w2l_rc cm_process(w2l_operator *self, const w2l_element *e, w2l_collector *out,
                         w2l_error *err)
{
    (void)out;
    committer *c = (committer *)self;
    switch (e->kind) {
    case W2L_ELEM_WRITE_RESULT: return on_result(c, e, err);
    case W2L_ELEM_BARRIER: return on_barrier(c, e->ckpt, err);
    case W2L_ELEM_SCHEMA: {
        /* the table changed under us: the next commit reloads it */
        handle *h = w2l__cm_handle_find(c, e->ns, e->table);
        if (h) w2l__cm_handle_drop(c, h);
        return W2L_OK;
    }
    default: return W2L_OK;
    }
}

static void cm_close(w2l_operator *self)
{
    committer *c = (committer *)self;
    acc_clear(c);
    w2l__free(c->abuckets);
    w2l__free(c->alist);
    while (c->phead) {
        pend *n = c->phead->next;
        w2l__cm_pend_free(c->phead);
        c->phead = n;
    }
    while (c->lru_head) w2l__cm_handle_drop(c, c->lru_head);
    w2l__free(c->hbuckets);
    w2l__catalog_close(c->cat);
    w2l_fileio_close(c->io);
    w2l__free(c->job_id);
    w2l__claims_free(c->own_claims);
    memset((char *)c + sizeof c->base, 0, sizeof *c - sizeof c->base);
}

const w2l_operator_methods w2l__op_committer = {
    .version = W2L_OPERATOR_METHODS_V1,
    .name = "default",
    .kind = W2L_OPERATOR_COMMITTER,
    .size = sizeof(committer),
    .open = cm_open,
    .process = cm_process,
    .notify_complete = w2l__cm_complete,
    .close = cm_close,
};
