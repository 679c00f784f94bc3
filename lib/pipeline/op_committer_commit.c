/*
 * The committer's commits (op_committer_int.h): once a checkpoint is sealed, its pending
 * tables, each through its attempts (tjob: the skip checks, the files, per attempt the
 * ledger position, completeness mark and deletion vectors, the catalog's answer, a retry
 * after a lost race), alone (commit_one) or, with a catalog that commits several tables at
 * once, in one cut (commit_batch); the compactions maintenance finished; and the order of
 * it all (w2l__cm_complete, the operator's notify_complete).
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_committer_int.h"
#include "complete.h"
#include "rewrites.h"
#include "../parquet/parquet.h"

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
    w2l_rc rc = w2l__cm_handle_get(c, p->ns, p->table, &h, err);
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
    h->max_ckpt = w2l__cm_job_ckpt(c, h->t->meta, err, &r2);
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
        w2l__cm_handle_drop(c, jb->h);
        return W2L_OK;
    }
    if (rc != W2L_OK || jb->stale) w2l__cm_handle_drop(c, jb->h); /* its metadata may be stale */
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
        w2l_rc rc =
            w2l__cm_handle_get(c, w2l__maint_result_ns(r), w2l__maint_result_table(r), &h, &e1);
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
            if (h) w2l__cm_handle_drop(c, h); /* its metadata may be stale */
        }
    }
}

w2l_rc w2l__cm_complete(w2l_operator *self, uint64_t ckpt, w2l_error *err)
{
    committer *c = (committer *)self;
    w2l_rc first = W2L_OK;
    if (c->owner && w2l__owner_generation(c->owner) != c->generation) {
        /* table operations were applied since our handles were loaded: the handles of
         * the tables they touched go (all of them when the owner's log is too short) */
        uint64_t since = c->generation;
        c->generation = w2l__owner_generation(c->owner);
        if (!w2l__owner_touched_since(c->owner, since, w2l__cm_drop_touched, c))
            while (c->lru_head) w2l__cm_handle_drop(c, c->lru_head);
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
        if (w2l__cm_ensure_catalog(c, &e0) == W2L_OK) { /* else one by one: the load says why */
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
            w2l__cm_pend_free(p);
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
