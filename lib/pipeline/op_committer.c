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
 */
#include <stdio.h>
#include <stdlib.h>

#include "../event/emit.h"
#include "ops.h"
#include "complete.h"
#include "ledger.h"
#include "maintenance.h"
#include "owner.h"
#include "rewrites.h"
#include "../parquet/parquet.h"
#include "../model/model.h"

/* Loaded tables kept by all committers together (each keeps its share, at least 256). A
 * handle is the table's metadata (a few KiB for a table whose snapshots maintenance
 * expires); one dropped is loaded again at its next commit (version hint, metadata JSON,
 * ancestry), which cost more than the commit itself when a thousand tables cycled through
 * 256 handles: tables commit in the same order every checkpoint, so an LRU smaller than
 * the committer's tables keeps none of them. */
#define HANDLE_CACHE_TOTAL 16384
#define HANDLE_CACHE_MAX(c) W2L_MAX(256, HANDLE_CACHE_TOTAL / (c)->n)

typedef struct pend {         /* one table's files of one checkpoint, not yet committed */
    uint64_t ckpt;
    char *ns, *table;
    char *value;              /* the state value (ops.h), NUL-terminated */
    size_t len;
    int restored;             /* from the restored checkpoint: written by an earlier run */
    struct pend *next;
} pend;

typedef struct acc {          /* WRITE_RESULTs of the checkpoint in progress, one table */
    uint64_t h;
    char *ns, *table;
    w2l_buf files;            /* file objects, comma-separated */
    size_t nfiles;
    int32_t schema_id;
    int truncate;             /* a writer saw a TRUNCATE of the table in this checkpoint */
    struct acc *chain;
} acc;

typedef struct handle {       /* a loaded table */
    uint64_t h;
    w2l__ice_table *t;
    uint64_t max_ckpt;        /* this job's newest checkpoint in the ancestry; 0: none */
    struct handle *chain, *prev, *next; /* bucket chain; LRU list, most recent first */
} handle;

typedef struct committer {
    w2l_operator base;
    const w2l_conf *conf;
    unsigned index, n;
    w2l_state *st;
    char *job_id;
    uint64_t epoch;
    int retries;
    w2l_fileio *io;
    w2l_catalog *cat;
    /* this checkpoint */
    acc **abuckets;
    size_t acap;
    acc **alist;
    size_t an, alcap;
    /* pending, in commit order */
    pend *phead, *ptail;
    /* table handles */
    handle **hbuckets;
    size_t hcap, hcount;
    handle *lru_head, *lru_tail;
    w2l__owner *owner;
    w2l__claims *claims, *own_claims; /* the owner's; without an owner, our own */
    uint64_t generation;      /* the owner's count of applied operations our handles know */
    w2l__maint *maint;        /* NULL: no maintenance (w2l recover, tests) */
    w2l__ledger *ledger;      /* a shared source: positions per table (ledger.h); else NULL */
    int64_t batch_max;        /* tables per multi-table commit; 0: table by table */
} committer;

/* ------------------------------------------------------------------- job id ------- */

char *w2l__ops_job_id(const w2l_conf *conf)
{
    const char *id = NULL, *wh = NULL, *src = NULL;
    w2l_conf_get(conf, "job-id", &id, NULL);
    if (id && *id) return w2l__strdup(id);
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    w2l_conf_get(conf, "source", &src, NULL);
    uint64_t h = w2l__hash64(wh ? wh : "", wh ? strlen(wh) : 0, 0x6a6f62);
    h = w2l__hash64(src ? src : "", src ? strlen(src) : 0, h);
    return w2l__asprintf("w2l-%016llx", (unsigned long long)h);
}

w2l_rc w2l__ops_job_restored(const w2l_conf *conf, w2l_state *st, uint64_t restored, char **out,
                             w2l_error *err)
{
    *out = NULL;
    if (restored && st && !w2l_conf_is_set(conf, "job-id")) {
        w2l_buf b = {0};
        w2l_rc rc = w2l_state_get(st, restored, W2L_OPS_JOB_KEY, &b, err);
        if (rc == W2L_OK && (rc = w2l__buf_cstr(&b, err)) == W2L_OK) {
            *out = (char *)b.data;
            return W2L_OK;
        }
        w2l_buf_release(&b);
        if (rc != W2L_NOTFOUND) return rc;
    }
    *out = w2l__ops_job_id(conf);
    W2L_NOMEM_IF(!*out, err);
    return W2L_OK;
}

/* ------------------------------------------------------------ file objects -------- */

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static w2l_rc unhex(const char *s, w2l__arena *a, w2l__ice_bytes *out, w2l_error *err)
{
    size_t n = strlen(s);
    if (n % 2) return w2l__fail(err, W2L_CORRUPT, "bound '%.40s' is not hex", s);
    unsigned char *p = w2l__arena_alloc(a, n / 2 + 1);
    W2L_NOMEM_IF(!p, err);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return w2l__fail(err, W2L_CORRUPT, "bound '%.40s' is not hex", s);
        p[i] = (unsigned char)(hi << 4 | lo);
    }
    *out = (w2l__ice_bytes){p, n / 2};
    return W2L_OK;
}

static int get_i64(const w2l__json *o, const char *k, int64_t *v)
{
    return w2l__json_int64(w2l__json_get(o, k), v);
}

/* The partition tuple of a file object: "spec-id" and "partition" (ops.h), decoded with
 * the types of that spec of meta. */
static w2l_rc parse_partition(const w2l__json *j, const w2l__ice_meta *meta, w2l__arena *a,
                              w2l__ice_data_file *df, w2l_error *err)
{
    int64_t sid;
    if (w2l__json_int64(w2l__json_get(j, "spec-id"), &sid) != 0) return W2L_OK; /* default */
    const w2l__ice_spec *spec = meta ? w2l__ice_meta_spec(meta, (int32_t)sid) : NULL;
    if (!spec)
        return w2l__fail(err, W2L_SCHEMA, "%s: partition spec %lld is not the table's", df->path,
                         (long long)sid);
    const w2l__json *pv = w2l__json_get(j, "partition");
    if (w2l__json_size(pv) != spec->nfields)
        return w2l__fail(err, W2L_CORRUPT, "%s: %zu partition values for spec %d of %zu fields",
                         df->path, w2l__json_size(pv), (int)spec->spec_id, spec->nfields);
    df->spec_id = spec->spec_id;
    df->npart = spec->nfields;
    df->partition = w2l__arena_alloc(a, (spec->nfields + 1) * sizeof *df->partition);
    W2L_NOMEM_IF(!df->partition, err);
    size_t i = 0;
    for (const w2l__json *v = w2l__json_first(pv); v; v = w2l__json_next(v), i++) {
        w2l_value *o = &df->partition[i];
        memset(o, 0, sizeof *o);
        if (w2l__json_type(v) == W2L_JSON_NULL) {
            o->is_null = 1;
            continue;
        }
        const char *hex = w2l__json_str(v);
        w2l__ice_bytes b;
        if (!hex) return w2l__fail(err, W2L_CORRUPT, "%s: bad partition value", df->path);
        W2L_TRY(unhex(hex, a, &b, err));
        /* a file written before its partition column was widened (int -> long, float ->
         * double) in the same checkpoint holds the narrower value */
        w2l_type ty = spec->fields[i].type;
        w2l_rc rc;
        if ((ty.id == W2L_TYPE_LONG || ty.id == W2L_TYPE_DOUBLE) && b.len == 4) {
            w2l_value narrow;
            w2l_type nt = {ty.id == W2L_TYPE_LONG ? W2L_TYPE_INT : W2L_TYPE_FLOAT, 0, 0};
            rc = w2l__value_from_bytes(nt, b.ptr, b.len, &narrow, err);
            if (ty.id == W2L_TYPE_LONG) o->v.i64 = narrow.v.i32;
            else o->v.f64 = narrow.v.f32;
        } else {
            rc = w2l__value_from_bytes(ty, b.ptr, b.len, o, err);
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s: partition field %s: ", df->path, spec->fields[i].name);
            return rc;
        }
    }
    return W2L_OK;
}

w2l_rc w2l__ops_file_parse(const w2l__json *j, const w2l__ice_meta *meta, w2l__arena *a,
                           w2l__ice_data_file *df, w2l_error *err)
{
    memset(df, 0, sizeof *df);
    df->spec_id = -1;
    int64_t content, v;
    const char *path = w2l__json_str(w2l__json_get(j, "path"));
    if (!path || get_i64(j, "content", &content) || content < 0 || content > 2 ||
        get_i64(j, "record-count", &df->record_count) || get_i64(j, "file-size", &df->file_size))
        return w2l__fail(err, W2L_CORRUPT,
                         "file entry without path, content, record-count or file-size");
    df->content = (int)content;
    df->path = w2l__arena_strndup(a, path, strlen(path));
    df->format = "PARQUET";
    W2L_NOMEM_IF(!df->path, err);
    const w2l__json *cols = w2l__json_get(j, "columns");
    df->ncols = w2l__json_size(cols);
    df->cols = w2l__arena_alloc(a, (df->ncols + 1) * sizeof *df->cols);
    W2L_NOMEM_IF(!df->cols, err);
    size_t i = 0;
    for (const w2l__json *c = w2l__json_first(cols); c; c = w2l__json_next(c), i++) {
        w2l__ice_colstat *o = &df->cols[i];
        memset(o, 0, sizeof *o);
        if (get_i64(c, "id", &v)) return w2l__fail(err, W2L_CORRUPT, "%s: column without id", path);
        o->field_id = (int32_t)v;
        o->has_size = !get_i64(c, "size", &o->column_size);
        o->has_values = !get_i64(c, "values", &o->value_count);
        o->has_nulls = !get_i64(c, "nulls", &o->null_count);
        o->has_nans = !get_i64(c, "nans", &o->nan_count);
        const char *lo = w2l__json_str(w2l__json_get(c, "lower"));
        const char *hi = w2l__json_str(w2l__json_get(c, "upper"));
        if (lo) {
            W2L_TRY(unhex(lo, a, &o->lower, err));
            o->has_lower = 1;
        }
        if (hi) {
            W2L_TRY(unhex(hi, a, &o->upper, err));
            o->has_upper = 1;
        }
    }
    const w2l__json *so = w2l__json_get(j, "split-offsets");
    df->nsplits = w2l__json_size(so);
    df->split_offsets = w2l__arena_alloc(a, (df->nsplits + 1) * sizeof *df->split_offsets);
    W2L_NOMEM_IF(!df->split_offsets, err);
    i = 0;
    for (const w2l__json *c = w2l__json_first(so); c; c = w2l__json_next(c), i++)
        if (w2l__json_int64(c, &df->split_offsets[i]))
            return w2l__fail(err, W2L_CORRUPT, "%s: bad split offset", path);
    if (df->content == W2L_ICE_EQ_DELETES) {
        const w2l__json *eq = w2l__json_get(j, "equality-ids");
        df->neq = w2l__json_size(eq);
        if (!df->neq)
            return w2l__fail(err, W2L_CORRUPT, "%s: equality deletes without equality-ids", path);
        df->equality_ids = w2l__arena_alloc(a, df->neq * sizeof *df->equality_ids);
        W2L_NOMEM_IF(!df->equality_ids, err);
        i = 0;
        for (const w2l__json *c = w2l__json_first(eq); c; c = w2l__json_next(c), i++) {
            if (w2l__json_int64(c, &v))
                return w2l__fail(err, W2L_CORRUPT, "%s: bad equality id", path);
            df->equality_ids[i] = (int32_t)v;
        }
    }
    W2L_TRY(parse_partition(j, meta, a, df, err));
    return W2L_OK;
}

/* ------------------------------------------------------------- state keys --------- */

static w2l_rc put_enc(w2l_buf *b, const char *s, w2l_error *err)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '%' || c == '/' || c == '.' || c < 0x20)
            W2L_TRY(w2l__buf_printf(b, err, "%%%02X", c));
        else W2L_TRY(w2l_buf_append(b, s, 1, err));
    }
    return W2L_OK;
}

static w2l_rc files_key(w2l_buf *b, uint64_t ckpt, const char *ns, const char *table,
                        w2l_error *err)
{
    b->len = 0;
    W2L_TRY(w2l__buf_printf(b, err, W2L_OPS_FILES_PREFIX "%020llu/", (unsigned long long)ckpt));
    W2L_TRY(put_enc(b, ns, err));
    W2L_TRY(w2l_buf_append(b, ".", 1, err));
    W2L_TRY(put_enc(b, table, err));
    return w2l__buf_cstr(b, err);
}

/* Decodes percent-encoded s[0..n) into fresh memory. */
static char *dec(const char *s, size_t n)
{
    char *o = w2l__malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n + 1 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            o[k++] = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return o;
}

/* ------------------------------------------------------------------ pending -------- */

static void pend_free(pend *p)
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
        pe->ns = dec(end + 1, (size_t)(dot - end - 1));
        pe->table = dec(dot + 1, strlen(dot + 1));
    }
    if (!pe || !pe->ns || !pe->table) {
        pend_free(pe);
        r->rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
        return 1;
    }
    if (w2l__table_hash(pe->ns, pe->table) % c->n != c->index) { /* another committer's table */
        pend_free(pe);
        return 0;
    }
    w2l_buf b = {0};
    r->rc = w2l_state_get(c->st, r->ckpt, key, &b, r->err);
    if (r->rc == W2L_OK) r->rc = w2l__buf_cstr(&b, r->err);
    if (r->rc != W2L_OK) {
        w2l_buf_release(&b);
        pend_free(pe);
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
        rc = files_key(&key, p->ckpt, p->ns, p->table, err);
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

/* ------------------------------------------------------------ table handles ------- */

static void lru_unlink(committer *c, handle *h)
{
    if (h->prev) h->prev->next = h->next;
    else c->lru_head = h->next;
    if (h->next) h->next->prev = h->prev;
    else c->lru_tail = h->prev;
    h->prev = h->next = NULL;
}

static void lru_front(committer *c, handle *h)
{
    h->next = c->lru_head;
    h->prev = NULL;
    if (c->lru_head) c->lru_head->prev = h;
    c->lru_head = h;
    if (!c->lru_tail) c->lru_tail = h;
}

static handle **bucket_of(committer *c, uint64_t h) { return &c->hbuckets[h & (c->hcap - 1)]; }

static void handle_drop(committer *c, handle *h)
{
    for (handle **pp = bucket_of(c, h->h); *pp; pp = &(*pp)->chain)
        if (*pp == h) {
            *pp = h->chain;
            break;
        }
    lru_unlink(c, h);
    w2l__ice_table_free(h->t);
    w2l__free(h);
    c->hcount--;
}

static handle *handle_find(committer *c, const char *ns, const char *table)
{
    if (!c->hcap) return NULL;
    uint64_t hh = w2l__table_hash(ns, table);
    for (handle *h = *bucket_of(c, hh); h; h = h->chain)
        if (h->h == hh && strcmp(h->t->ns, ns) == 0 && strcmp(h->t->name, table) == 0) return h;
    return NULL;
}

/* The checkpoint of the newest snapshot of this job in the table's ancestry (0: none). Along
 * one job's ancestry checkpoint ids only grow, so the newest is the largest. */
static uint64_t job_ckpt(const committer *c, const w2l__ice_meta *m, w2l_error *err, w2l_rc *rc)
{
    const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(m, c->job_id, rc, err);
    return s ? strtoull(w2l__ice_props_get(&s->summary, "w2l.checkpoint-id"), NULL, 10) : 0;
}

/* Claims p's table before its files are committed (owner.h); when refused, they stay in the
 * checkpoint state for a run that adopts the table. */
static w2l_rc claim(const committer *c, const pend *p, const handle *h, w2l_error *err)
{
    w2l_rc rc = w2l__claims_check(c->claims, p->ns, p->table, h->t->meta, err);
    size_t n = rc == W2L_BUSY ? strlen(err->msg) : sizeof err->msg;
    if (n + 1 < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - n,
                 " (its rows of checkpoint %llu stay in this job's state until then)",
                 (unsigned long long)p->ckpt);
    return rc;
}

static w2l_rc ensure_catalog(committer *c, w2l_error *err)
{
    if (c->cat) return W2L_OK;
    return w2l__catalog_open_conf(c->conf, &c->io, &c->cat, err);
}

/* The handle of ns.table, loaded when not cached. W2L_NOTFOUND when the table is gone. */
static void drop_touched(void *ctx, const char *ns, const char *table)
{
    committer *c = ctx;
    handle *h = handle_find(c, ns, table);
    if (h) handle_drop(c, h);
}

static w2l_rc handle_get(committer *c, const char *ns, const char *table, handle **out,
                         w2l_error *err)
{
    handle *h = handle_find(c, ns, table);
    if (h) {
        lru_unlink(c, h);
        lru_front(c, h);
        *out = h;
        return W2L_OK;
    }
    W2L_TRY(ensure_catalog(c, err));
    if (!c->hcap) {
        c->hcap = 512; /* a power of two (bucket_of), at least twice the handles */
        while (c->hcap < 2 * (size_t)HANDLE_CACHE_MAX(c)) c->hcap *= 2;
        c->hbuckets = w2l__calloc(c->hcap, sizeof *c->hbuckets);
        if (!c->hbuckets) {
            c->hcap = 0;
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    }
    while (c->hcount >= (size_t)HANDLE_CACHE_MAX(c)) handle_drop(c, c->lru_tail);
    w2l__ice_table *t;
    W2L_TRY(w2l__ice_table_load(c->cat, c->io, ns, table, &t, err));
    h = w2l__calloc(1, sizeof *h);
    if (!h) {
        w2l__ice_table_free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    h->t = t;
    h->h = w2l__table_hash(ns, table);
    /* table.format-version is for new tables: one already there keeps its version */
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", ns, table);
    const char *fv = NULL;
    w2l_conf_get_for_table(c->conf, fq, "table.format-version", &fv, NULL);
    if (fv && atoi(fv) > t->meta->format_version)
        w2l__log_table(W2L_LOG_WARN, ns, table,
                       "committer %u: %s.%s is a format version %d table and stays one "
                       "(table.format-version %s applies to new tables only)",
                       c->index, ns, table, t->meta->format_version, fv);
    w2l_rc rc;
    h->max_ckpt = job_ckpt(c, t->meta, err, &rc);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t);
        w2l__free(h);
        return rc;
    }
    handle **b = bucket_of(c, h->h);
    h->chain = *b;
    *b = h;
    lru_front(c, h);
    c->hcount++;
    *out = h;
    return W2L_OK;
}

/* ----------------------------------------------------------------- commits -------- */

/* Position deletes may name data files a compaction removed since they were made: those
 * of a checkpoint an earlier run wrote (whatever it committed since), those made before
 * every writer took a compaction this run committed (rewrites.h), and (raced) those of a
 * commit that lost a race to another process, which may have compacted the table. They are
 * moved onto the files that hold the rows now (w2l__ice_rebase_pos_deletes). */
static w2l_rc rebase_deletes(committer *c, const pend *p, handle *h, const w2l__ice_data_file *data,
                             size_t nd, w2l__ice_data_file *dels, size_t nx, int raced,
                             w2l__arena *a, size_t *nmoved, w2l_error *err)
{
    if (nmoved) *nmoved = 0;
    char **onto = NULL;
    size_t nonto = 0;
    w2l__rewrites *rw = w2l__maint_rewrites(c->maint);
    int anywhere = p->restored || raced; /* not only onto this run's compactions' files */
    int need = anywhere || w2l__rewrites_pending(rw, p->ns, p->table, p->ckpt, &onto, &nonto);
    if (!need) return W2L_OK;
    w2l__pq_options pq;
    size_t moved = 0;
    int64_t t0 = w2l__now_ms();
    w2l_rc rc = w2l__ops_pq_options(c->conf, &pq, err);
    if (rc == W2L_OK)
        rc = w2l__ice_rebase_pos_deletes(h->t->io, h->t->meta, &pq, dels, nx, data, nd,
                                         anywhere ? NULL : (const char *const *)onto, nonto, a,
                                         &moved, err);
    w2l__rewrites_onto_free(onto, nonto);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s.%s checkpoint %llu: ", p->ns, p->table,
                          (unsigned long long)p->ckpt);
        return rc;
    }
    if (nmoved) *nmoved = moved;
    if (moved)
        w2l__log_table(W2L_LOG_INFO, p->ns, p->table,
                       "committer %u: %s.%s checkpoint %llu: %zu position deletes moved onto "
                       "compacted files (%lld ms)",
                       c->index, p->ns, p->table, (unsigned long long)p->ckpt, moved,
                       (long long)(w2l__now_ms() - t0));
    return W2L_OK;
}

/* One table's commit of one checkpoint, through its attempts: tjob_start (the skip checks,
 * the files), then per attempt tjob_prelude (the ledger position, the completeness mark,
 * v3 deletion vectors against the table as this attempt finds it) and the table's
 * prepare (w2l__ice_table_prepare), the catalog's answer (alone, or in a multi-table
 * commit with the other tables of the checkpoint), tjob_after (done, or again after a lost
 * race), and tjob_end. */
typedef struct tjob {
    const pend *p;
    handle *h;
    int live;                 /* more attempts to make */
    int attempt;
    int stale;                /* a maintenance commit after ours failed: reload the table */
    w2l_rc rc;                /* the outcome once not live */
    w2l_error err;
    w2l__json *j;
    w2l__ice_change ch;
    w2l__ice_data_file *data, *dels;
    size_t nd, nx;
    int truncate, dvs, have_mark;
    int64_t mark_ms;
    const char *pos;
    char ck[24], ep[24], mtext[24], kc[40];
    w2l__ice_kv summary[5], sum[7];
    size_t base_n;
    char *merged, *rows;
    w2l__ice_dv_plan plan;
    w2l__ice_prep *prep;      /* the attempt prepared, waiting for the catalog */
} tjob;

static void tjob_done(tjob *jb, w2l_rc rc)
{
    jb->live = 0;
    jb->rc = rc;
}

/* Loads the table and its files of the checkpoint; not live when there is nothing to do. */
static void tjob_start(committer *c, const pend *p, tjob *jb)
{
    memset(jb, 0, sizeof *jb);
    jb->p = p;
    w2l__ice_change_init(&jb->ch, W2L_ICE_OP_APPEND);
    w2l_error *err = &jb->err;
    handle *h = NULL;
    w2l_rc rc = handle_get(c, p->ns, p->table, &h, err);
    if (rc == W2L_NOTFOUND) {
        w2l__log_table(
            W2L_LOG_INFO, p->ns, p->table,
            "committer %u: table %s.%s was dropped; its files of checkpoint %llu are discarded",
            c->index, p->ns, p->table, (unsigned long long)p->ckpt);
        tjob_done(jb, W2L_OK);
        return;
    }
    if (rc != W2L_OK) {
        tjob_done(jb, rc);
        return;
    }
    if (h->max_ckpt >= p->ckpt) {
        /* every table a restored checkpoint touched says so at each restart: debug */
        w2l__log_table(
            W2L_LOG_DEBUG, p->ns, p->table,
            "committer %u: %s.%s has checkpoint %llu of job %s already (up to %llu); skipped",
            c->index, p->ns, p->table, (unsigned long long)p->ckpt, c->job_id,
            (unsigned long long)h->max_ckpt);
        tjob_done(jb, W2L_OK);
        return;
    }
    if ((rc = claim(c, p, h, err)) != W2L_OK) {
        tjob_done(jb, rc);
        return;
    }
    jb->h = h;
    rc = w2l__json_parse(p->value, p->len, &jb->j, err);
    if (rc != W2L_OK) {
        tjob_done(jb, rc);
        return;
    }
    const w2l__json *files = w2l__json_get(jb->j, "files");
    size_t nf = w2l__json_size(files), nstale = 0;
    jb->data = w2l__arena_alloc(&jb->ch.arena, (nf + 1) * sizeof *jb->data);
    jb->dels = w2l__arena_alloc(&jb->ch.arena, (nf + 1) * sizeof *jb->dels);
    if (!jb->data || !jb->dels) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (const w2l__json *f = w2l__json_first(files); rc == W2L_OK && f; f = w2l__json_next(f)) {
        /* files of another incarnation of the name (dropped, or renamed away): discarded */
        const char *fu = w2l__json_str(w2l__json_get(f, "table-uuid"));
        if (fu && strcmp(fu, h->t->meta->uuid) != 0) {
            nstale++;
            continue;
        }
        w2l__ice_data_file df;
        rc = w2l__ops_file_parse(f, h->t->meta, &jb->ch.arena, &df, err);
        if (rc != W2L_OK) break;
        if (df.content == W2L_ICE_DATA) jb->data[jb->nd++] = df;
        else jb->dels[jb->nx++] = df;
    }
    if (rc == W2L_OK && jb->nx)
        rc = rebase_deletes(c, p, h, jb->data, jb->nd, jb->dels, jb->nx, 0, &jb->ch.arena, NULL,
                            err);
    if (rc != W2L_OK) {
        tjob_done(jb, rc);
        return;
    }
    jb->pos = w2l__json_str(w2l__json_get(jb->j, "source-position"));
    jb->have_mark = w2l__json_int64(w2l__json_get(jb->j, "complete-through-ms"), &jb->mark_ms) == 0;
    snprintf(jb->ck, sizeof jb->ck, "%llu", (unsigned long long)p->ckpt);
    snprintf(jb->ep, sizeof jb->ep, "%llu", (unsigned long long)c->epoch);
    jb->summary[0] = (w2l__ice_kv){ "w2l.job-id", c->job_id };
    jb->summary[1] = (w2l__ice_kv){ "w2l.epoch", jb->ep };
    jb->summary[2] = (w2l__ice_kv){ "w2l.checkpoint-id", jb->ck };
    jb->summary[3] = (w2l__ice_kv){ "w2l.source-position", (char *)(jb->pos ? jb->pos : "") };
    jb->summary[4] = (w2l__ice_kv){ "w2l.row-partition", "" };
    if (w2l__json_bool(w2l__json_get(jb->j, "truncate"), &jb->truncate) != 0) jb->truncate = 0;
    if (nstale) {
        w2l__log_table(
            W2L_LOG_INFO, p->ns, p->table,
            "committer %u: %s.%s checkpoint %llu: %zu files of a dropped table of that name "
            "discarded",
            c->index, p->ns, p->table, (unsigned long long)p->ckpt, nstale);
        if (!jb->nd && !jb->nx) jb->truncate = 0; /* the truncate was the old table's */
    }
    for (size_t i = 0; h->t->meta->format_version >= 3 && i < jb->nx; i++)
        jb->dvs |= jb->dels[i].content == W2L_ICE_POS_DELETES;
    if (!(jb->nd + jb->nx > 0 || jb->truncate)) {
        tjob_done(jb, W2L_OK);
        return;
    }
    w2l__ice_change *ch = &jb->ch;
    /* after a TRUNCATE: the rows written after it replace the table, in one snapshot */
    ch->op = jb->truncate ? W2L_ICE_OP_TRUNCATE : jb->nx ? W2L_ICE_OP_ROW_DELTA : W2L_ICE_OP_APPEND;
    ch->files = jb->data;
    ch->nfiles = jb->nd;
    ch->deletes = jb->dels;
    ch->ndeletes = jb->nx;
    ch->summary = jb->summary;
    ch->nsummary = jb->pos ? 4 : 3;
    jb->live = 1;
}

/* What an attempt adds to the change against the table as it finds it (the ledger's
 * position, the completeness mark, deletion vectors); then the attempt is prepared. */
static w2l_rc tjob_prepare(committer *c, tjob *jb, w2l_error *err)
{
    const pend *p = jb->p;
    handle *h = jb->h;
    w2l__ice_change *ch = &jb->ch;
    w2l_rc rc = W2L_OK;
    if (c->ledger && jb->pos) { /* the table's position, merged with ours (ledger.h) */
        w2l__free(jb->merged);
        w2l__free(jb->rows);
        jb->merged = jb->rows = NULL;
        const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(h->t->meta, NULL, &rc, err);
        const w2l__ice_props *sp = s ? &s->summary : NULL;
        if (rc == W2L_OK)
            rc = w2l__ledger_merge(c->ledger, p->ns, p->table, h->t->meta->uuid,
                                   sp ? w2l__ice_props_get(sp, "w2l.source-position") : NULL,
                                   sp ? w2l__ice_props_get(sp, "w2l.row-partition") : NULL,
                                   jb->pos, &jb->merged, &jb->rows, err);
        if (rc != W2L_OK) return rc;
        jb->summary[3].value = jb->merged;
        jb->summary[4].value = jb->rows;
        ch->nsummary = *jb->rows ? 5 : 4;
    }
    /* the completeness mark, never below the table's last one (a replay after a crash,
     * another job): on every snapshot committed anyway (complete.h) */
    size_t ns = ch->nsummary;
    memcpy(jb->sum, jb->summary, ns * sizeof *jb->sum);
    int64_t m = w2l__complete_summary_mark(h->t->meta);
    if (jb->have_mark && jb->mark_ms > m) m = jb->mark_ms;
    if (m >= 0) {
        snprintf(jb->mtext, sizeof jb->mtext, "%lld", (long long)m);
        w2l__time_format_kc(m, jb->kc, sizeof jb->kc);
        jb->sum[ns++] = (w2l__ice_kv){ W2L_COMPLETE_KEY, jb->mtext };
        jb->sum[ns++] = (w2l__ice_kv){ W2L_COMPLETE_KC_KEY, jb->kc };
    }
    /* a v3 table: the position deletes become deletion vectors, merged with those of the
     * table as this attempt finds it (dv.c); a retry merges anew */
    if (jb->dvs) {
        if (jb->plan.deletes) {
            w2l__ice_dv_plan_abandon(h->t->io, &jb->plan);
            w2l__ice_change_unwrite(ch, h->t->io);
        }
        rc = w2l__ice_dv_merge(h->t->io, h->t->meta, jb->dels, jb->nx, !jb->truncate,
                               &ch->arena, &jb->plan, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "table %s.%s checkpoint %llu: ", p->ns, p->table,
                              (unsigned long long)p->ckpt);
            return rc;
        }
        ch->deletes = jb->plan.deletes;
        ch->ndeletes = jb->plan.ndeletes;
        ch->removed = jb->plan.removed;
        ch->nremoved = jb->plan.nremoved;
    }
    jb->base_n = ch->nsummary;
    ch->summary = jb->sum;
    ch->nsummary = ns;
    rc = w2l__ice_table_prepare(h->t, ch, &jb->prep, err);
    ch->summary = jb->summary;
    ch->nsummary = jb->base_n;
    return rc;
}

/* After an attempt whose outcome is rc (the table finished with the catalog's answer):
 * done, or live for another attempt after a lost race. */
static void tjob_after(committer *c, tjob *jb, w2l_rc rc)
{
    const pend *p = jb->p;
    handle *h = jb->h;
    w2l__ice_change *ch = &jb->ch;
    w2l_error *err = &jb->err;
    if (rc == W2L_OK) {
        /* the Parquet position deletes live on in the deletion vectors only */
        w2l_error e2;
        for (size_t i = 0; jb->dvs && i < jb->plan.nconsumed; i++)
            w2l_fileio_remove(h->t->io, w2l__ice_local_path(jb->plan.consumed[i]), &e2);
        if (jb->merged)
            w2l__ledger_done(c->ledger, p->ns, p->table, h->t->meta->uuid, jb->pos, jb->merged);
        h->max_ckpt = p->ckpt;
        w2l__log_field fl[] = {{"checkpoint", NULL, (long long)p->ckpt},
                               {"data_files", NULL, (long long)jb->nd},
                               {"delete_files", NULL, (long long)jb->nx}};
        w2l__log_ex(W2L_LOG_DEBUG,
                    &(w2l__log_meta){.db = p->ns, .table = p->table, .fields = fl, .nfields = 3},
                    "committer %u: %s.%s checkpoint %llu committed (%zu data, %zu delete files)",
                    c->index, p->ns, p->table, (unsigned long long)p->ckpt, jb->nd, jb->nx);
        jb->stale = w2l__maint_committed(c->maint, c->index, h->t);
        tjob_done(jb, W2L_OK);
        return;
    }
    if (rc != W2L_CONFLICT) {
        tjob_done(jb, rc);
        return;
    }
    if (jb->dvs) { /* not committed: this attempt's vectors and manifests go */
        w2l__ice_dv_plan_abandon(h->t->io, &jb->plan);
        w2l__ice_change_unwrite(ch, h->t->io);
        jb->plan.deletes = NULL;
    }
    /* another writer moved the table (the attempt reloaded it): did it commit ours? */
    w2l_rc r2;
    h->max_ckpt = job_ckpt(c, h->t->meta, err, &r2);
    if (r2 != W2L_OK) {
        tjob_done(jb, r2);
        return;
    }
    if (h->max_ckpt >= p->ckpt) {
        tjob_done(jb, W2L_OK);
        return;
    }
    if ((r2 = claim(c, p, h, err)) != W2L_OK) { /* was it another job? */
        tjob_done(jb, r2);
        return;
    }
    if (jb->attempt >= c->retries) {
        tjob_done(jb, W2L_CONFLICT);
        return;
    }
    jb->attempt++;
    w2l__log_table(W2L_LOG_INFO, p->ns, p->table,
                   "committer %u: %s.%s checkpoint %llu lost a race (attempt %d); retrying",
                   c->index, p->ns, p->table, (unsigned long long)p->ckpt, jb->attempt);
    /* the winner may have compacted files our deletes name: they follow their rows, and
     * the change's manifests (never published: the race was lost) are made again from the
     * deletes as they are now */
    size_t moved = 0;
    if (jb->nx && (rc = rebase_deletes(c, p, h, jb->data, jb->nd, jb->dels, jb->nx, 1,
                                       &ch->arena, &moved, err)) != W2L_OK) {
        tjob_done(jb, rc);
        return;
    }
    if (moved) w2l__ice_change_unwrite(ch, h->t->io);
}

/* Releases the job; its outcome (*err set when not W2L_OK). */
static w2l_rc tjob_end(committer *c, tjob *jb, w2l_error *err)
{
    const pend *p = jb->p;
    w2l_rc rc = jb->rc;
    /* manifests of a failed commit stay: an ambiguous failure may have published them */
    w2l__ice_change_release(&jb->ch, jb->h ? jb->h->t->io : NULL, 0);
    w2l__json_free(jb->j);
    w2l__free(jb->merged);
    w2l__free(jb->rows);
    if (rc != W2L_OK && err) *err = jb->err;
    if (!jb->h) return rc;
    if (rc == W2L_NOTFOUND) {
        w2l__log_table(
            W2L_LOG_WARN, p->ns, p->table,
            "committer %u: table %s.%s was dropped before checkpoint %llu committed; skipped",
            c->index, p->ns, p->table, (unsigned long long)p->ckpt);
        handle_drop(c, jb->h);
        return W2L_OK;
    }
    if (rc != W2L_OK || jb->stale) handle_drop(c, jb->h); /* its metadata may be stale */
    return rc;
}

/* Commits one table's files of one checkpoint (p), unless the table has it already. */
static w2l_rc commit_one(committer *c, const pend *p, w2l_error *err)
{
    tjob jb;
    tjob_start(c, p, &jb);
    while (jb.live) {
        w2l_rc rc = tjob_prepare(c, &jb, &jb.err);
        if (rc == W2L_OK) {
            w2l__ice_table *t = jb.h->t;
            size_t len;
            const char *text = w2l__ice_prep_metadata(jb.prep, &len);
            w2l_buf loc = {0};
            w2l_error cerr;
            w2l_error_clear(&cerr);
            rc = w2l__catalog_commit(t->catalog, t->ns, t->name, w2l__ice_prep_base(jb.prep),
                                     text, len, &loc, &cerr);
            rc = w2l__ice_table_finish(t, jb.prep, rc, (const char *)loc.data, &cerr, &jb.err);
            jb.prep = NULL;
            w2l_buf_release(&loc);
        }
        tjob_after(c, &jb, rc);
    }
    return tjob_end(c, &jb, err);
}

/* Commits the tables of one checkpoint, ps[0..n) (n at most the batch size), in
 * multi-table commits of the catalog, so a reader sees all of them at the checkpoint or
 * none; each one's outcome into rcs[i] and errs[i]. A table that loses a race is reloaded
 * and prepared again, with the others still to commit, in the next batch. When the catalog
 * refuses multi-table commits, the prepared ones are committed table by table, and so is
 * everything after (c->batch_max 0). */
static void commit_batch(committer *c, pend **ps, size_t n, w2l_rc *rcs, w2l_error *errs)
{
    tjob *jobs = w2l__calloc(n, sizeof *jobs);
    w2l_catalog_commit *items = w2l__calloc(n, sizeof *items);
    tjob **prep = w2l__calloc(n, sizeof *prep);
    if (!jobs || !items || !prep) {
        for (size_t i = 0; i < n; i++) rcs[i] = w2l__fail(&errs[i], W2L_NOMEM, "out of memory");
        w2l__free(jobs), w2l__free(items), w2l__free(prep);
        return;
    }
    for (size_t i = 0; i < n; i++) tjob_start(c, ps[i], &jobs[i]);
    for (int round = 0;; round++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            tjob *jb = &jobs[i];
            if (!jb->live) continue;
            w2l_rc rc = tjob_prepare(c, jb, &jb->err);
            if (rc != W2L_OK) {
                tjob_after(c, jb, rc);
                continue;
            }
            size_t len;
            items[k] = (w2l_catalog_commit){.ns = jb->h->t->ns, .table = jb->h->t->name,
                                            .base = w2l__ice_prep_base(jb->prep),
                                            .new_location = items[k].new_location};
            items[k].metadata = w2l__ice_prep_metadata(jb->prep, &len);
            items[k].len = len;
            prep[k++] = jb;
        }
        if (!k) break;
        w2l_error berr;
        w2l_error_clear(&berr);
        int64_t t0 = w2l__now_ms();
        w2l_rc brc = c->batch_max ? w2l__catalog_commit_tables(c->cat, items, k, &berr)
                                  : W2L_NOTFOUND;
        if (brc == W2L_NOTFOUND && c->batch_max) {
            w2l__log(W2L_LOG_INFO, "committer %u: the catalog refuses multi-table commits (%s); "
                     "tables are committed one by one", c->index, berr.msg);
            c->batch_max = 0;
        }
        for (size_t i = 0; i < k; i++) {
            w2l_catalog_commit *it = &items[i];
            tjob *jb = prep[i];
            w2l__ice_table *t = jb->h->t;
            if (brc == W2L_NOTFOUND) { /* one by one, the metadata already prepared */
                w2l_error_clear(&it->err);
                it->rc = w2l__catalog_commit(t->catalog, t->ns, t->name, it->base, it->metadata,
                                             it->len, &it->new_location, &it->err);
            } else if (brc != W2L_OK) {
                it->rc = brc;
                it->err = berr;
            }
            w2l_rc rc = w2l__ice_table_finish(t, jb->prep, it->rc,
                                              (const char *)it->new_location.data, &it->err,
                                              &jb->err);
            jb->prep = NULL;
            tjob_after(c, jb, rc);
        }
        if (brc == W2L_OK)
            w2l__log(W2L_LOG_DEBUG, "committer %u: checkpoint %llu: %zu tables in one "
                     "transaction (round %d, %lld ms)", c->index,
                     (unsigned long long)ps[0]->ckpt, k, round + 1,
                     (long long)(w2l__now_ms() - t0));
    }
    for (size_t i = 0; i < n; i++) {
        w2l_buf_release(&items[i].new_location);
        rcs[i] = tjob_end(c, &jobs[i], &errs[i]);
    }
    w2l__free(jobs);
    w2l__free(items);
    w2l__free(prep);
}

/* Commits the compactions the maintenance threads finished for our tables. A failure is
 * logged, never returned: maintenance does not stop ingestion. */
static void commit_maintenance(committer *c)
{
    for (w2l__maint_result *r = w2l__maint_take(c->maint, c->index), *next; r; r = next) {
        next = w2l__maint_result_next(r);
        handle *h = NULL;
        w2l_error e1;
        w2l_error_clear(&e1);
        w2l_rc rc = handle_get(c, w2l__maint_result_ns(r), w2l__maint_result_table(r), &h, &e1);
        if (rc == W2L_NOTFOUND) {
            w2l__maint_drop(c->maint, r);
            continue;
        }
        if (rc == W2L_OK)
            rc = w2l__claims_check(c->claims, h->t->ns, h->t->name, h->t->meta, &e1);
        if (rc == W2L_OK) rc = w2l__maint_commit(c->maint, r, h->t, c->retries, &e1);
        else w2l__maint_drop(c->maint, r);
        if (rc != W2L_OK) {
            w2l__log(W2L_LOG_ERROR, "committer %u: maintenance commit: %s", c->index, e1.msg);
            if (h) handle_drop(c, h); /* its metadata may be stale */
        }
    }
}

static w2l_rc cm_complete(w2l_operator *self, uint64_t ckpt, w2l_error *err)
{
    committer *c = (committer *)self;
    w2l_rc first = W2L_OK;
    if (c->owner && w2l__owner_generation(c->owner) != c->generation) {
        /* table operations were applied since our handles were loaded: the handles of
         * the tables they touched go (all of them when the owner's log is too short) */
        uint64_t since = c->generation;
        c->generation = w2l__owner_generation(c->owner);
        if (!w2l__owner_touched_since(c->owner, since, drop_touched, c))
            while (c->lru_head) handle_drop(c, c->lru_head);
    }
    if (c->maint) commit_maintenance(c);
    pend *keep_head = NULL, *keep_tail = NULL, *p = c->phead;
    /* tables that failed in this call: their later checkpoints wait (order per table) */
    char **failed = NULL;
    size_t nfailed = 0;
    /* with a catalog that commits several tables at once: the tables of a checkpoint in
     * groups of at most batch_max, each group one multi-table commit */
    size_t gmax = 1;
    if (c->batch_max && p && p->ckpt <= ckpt) {
        w2l_error e0;
        if (ensure_catalog(c, &e0) == W2L_OK) { /* else table by table: handle_get says why */
            /* a batch holds its tables' handles: never more than the cache keeps, so
             * loading one of them never evicts another */
            if (w2l__catalog_has_batch(c->cat))
                gmax = (size_t)W2L_MIN(c->batch_max, (int64_t)HANDLE_CACHE_MAX(c) - 1);
            else c->batch_max = 0;
        }
    }
    pend **group = gmax > 1 ? w2l__calloc(gmax, sizeof *group) : NULL;
    w2l_rc *grc = gmax > 1 ? w2l__calloc(gmax, sizeof *grc) : NULL;
    w2l_error *gerr = gmax > 1 ? w2l__calloc(gmax, sizeof *gerr) : NULL;
    if (!group || !grc || !gerr) gmax = 1; /* table by table, as without the catalog's batch */
    size_t gi = 0, gn = 0; /* the group being handed out: group[gi..gn) */
    while (p && p->ckpt <= ckpt) {
        pend *next = p->next;
        int blocked = 0;
        for (size_t i = 0; i < nfailed && !blocked; i++)
            blocked = strcmp(failed[i], p->ns) == 0 &&
                      strcmp(failed[i] + strlen(failed[i]) + 1, p->table) == 0;
        w2l_error e1;
        w2l_error_clear(&e1);
        w2l_rc rc;
        if (gmax > 1 && !blocked && gi == gn) { /* the next group: this checkpoint's tables */
            gi = gn = 0;
            for (pend *q = p; q && q->ckpt == p->ckpt && gn < gmax; q = q->next) {
                int qb = 0;
                for (size_t i = 0; i < nfailed && !qb; i++)
                    qb = strcmp(failed[i], q->ns) == 0 &&
                         strcmp(failed[i] + strlen(failed[i]) + 1, q->table) == 0;
                if (!qb) group[gn++] = q;
            }
            commit_batch(c, group, gn, grc, gerr);
        }
        if (blocked) {
            rc = W2L_ERROR;
        } else if (gmax > 1 && gi < gn && group[gi] == p) {
            rc = grc[gi];
            e1 = gerr[gi];
            gi++;
        } else {
            rc = commit_one(c, p, &e1);
        }
        if (rc == W2L_OK) {
            pend_free(p);
        } else {
            if (!blocked) {
                w2l__error_prefix(&e1, "table %s.%s, checkpoint %llu: ", p->ns, p->table,
                                  (unsigned long long)p->ckpt);
                w2l__log(W2L_LOG_ERROR, "committer %u: %s", c->index, e1.msg);
                if (first == W2L_OK) {
                    first = rc;
                    if (err) *err = e1;
                }
                size_t ln = strlen(p->ns), lt = strlen(p->table);
                char *k = w2l__malloc(ln + lt + 2);
                char **nfl = w2l__realloc(failed, (nfailed + 1) * sizeof *nfl);
                if (nfl) failed = nfl;
                if (k && nfl) {
                    memcpy(k, p->ns, ln + 1);
                    memcpy(k + ln + 1, p->table, lt + 1);
                    failed[nfailed++] = k;
                } else {
                    w2l__free(k);
                }
            }
            p->next = NULL;
            if (keep_tail) keep_tail->next = p;
            else keep_head = p;
            keep_tail = p;
        }
        p = next;
    }
    /* what failed stays first, before the checkpoints above ckpt */
    if (keep_tail) {
        keep_tail->next = p;
        c->phead = keep_head;
    } else {
        c->phead = p;
    }
    if (!c->phead) c->ptail = NULL;
    else if (!p) c->ptail = keep_tail;
    for (size_t i = 0; i < nfailed; i++) w2l__free(failed[i]);
    w2l__free(failed);
    w2l__free(group);
    w2l__free(grc);
    w2l__free(gerr);
    return first;
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
        handle *h = handle_find(c, e->ns, e->table);
        if (h) handle_drop(c, h);
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
        pend_free(c->phead);
        c->phead = n;
    }
    while (c->lru_head) handle_drop(c, c->lru_head);
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
    .notify_complete = cm_complete,
    .close = cm_close,
};
