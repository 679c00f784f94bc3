/*
 * The writer operator's files (op_writer_int.h): a table's data, equality-delete and
 * position-delete files opened, rolled and completed into its results for the checkpoint,
 * and the memory its open files hold.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_writer_int.h"
#include "owner.h"

/* --------------------------------------------------------------------- files ------- */

static w2l_rc ensure_location(writer *w, tstate *t, w2l_error *err)
{
    if (t->location) return W2L_OK;
    /* no SCHEMA element described this table (a custom DDL operator): ask the catalog */
    if (!w->cat) W2L_TRY(w2l__catalog_open_conf(w->conf, &w->io, &w->cat, err));
    w2l__ice_table *it;
    w2l_rc rc = w2l__ice_table_load(w->cat, w->io, t->ns, t->table, &it, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s: finding its location: ", t->fq);
        return rc;
    }
    /* no DDL handler claimed it for this job (owner.h) */
    rc = w2l__claims_check(w2l__owner_claims(w2l__owner_current()), t->ns, t->table, it->meta,
                           err);
    if (rc == W2L_OK) t->location = w2l__strdup(it->meta->location);
    w2l__ice_table_free(it);
    W2L_TRY(rc);
    W2L_NOMEM_IF(!t->location, err);
    return W2L_OK;
}

static char *new_path(const tstate *t, const wpart *p, const char *prefix)
{
    w2l__ice_meta m;
    memset(&m, 0, sizeof m);
    m.location = t->location;
    w2l__ice_table it;
    memset(&it, 0, sizeof it);
    it.meta = &m;
    return w2l__ice_new_data_path(&it, p ? p->dir : NULL, prefix);
}

w2l_rc w2l__wr_open_file(writer *w, tstate *t, const wpart *p, const w2l_schema *s,
                         const char *prefix, char **path_out, w2l__pq_writer **out,
                         w2l_error *err)
{
    W2L_TRY(ensure_location(w, t, err));
    char *path = new_path(t, p, prefix);
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = w2l__pq_writer_open(w->io, path, W2L_CREATE_EXCL, s, &w->pq, NULL, 0, out, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s: ", t->fq); /* the file is named below */
        w2l__free(path);
        return rc;
    }
    *path_out = path;
    return W2L_OK;
}

static w2l_rc add_result(tstate *t, const wpart *p, int content, const char *path,
                         const w2l__file_stats *st, w2l_error *err)
{
    if (t->nresults) W2L_TRY(w2l_buf_append(&t->results, ",", 1, err));
    int32_t sid = w2l_schema_id(t->schema);
    W2L_TRY(w2l__ops_file_json(&t->results, content, path, st, t->eq_ids, t->neq, sid, p->spec,
                               p->vals, err));
    t->nresults++;
    t->results_schema = sid;
    return W2L_OK;
}

/* Files closed together at most: each holds a descriptor until then. */
#define PEND_MAX 64

w2l_rc w2l__wr_close_pending(writer *w, w2l_error *err)
{
    w2l_rc rc = w2l__file_batch_close(w->io, &w->pend, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "writer %u: ", w->index);
    return rc;
}

static w2l_rc close_file(writer *w, tstate *t, const wpart *p, int content, const char *path,
                         w2l__pq_writer *pw, w2l_error *err)
{
    w2l__file_stats st;
    memset(&st, 0, sizeof st);
    w2l_file *f = NULL;
    w2l_rc rc = w->defer ? w2l__pq_writer_finish(pw, &st, &f, err)
                         : w2l__pq_writer_close(pw, &st, err);
    if (rc == W2L_OK) rc = add_result(t, p, content, path, &st, err);
    else w2l__error_prefix(err, "table %s: ", t->fq); /* the file is named below */
    w2l__file_stats_release(&st);
    if (f && rc != W2L_OK) w2l_file_abort(f);
    else if (f) rc = w2l__file_batch_add(&w->pend, f, err);
    if (rc == W2L_OK && w->pend.n == PEND_MAX) rc = w2l__wr_close_pending(w, err);
    return rc;
}

static void closed_one(tstate *t, const wpart *p)
{
    if (!p->dw && !p->ew && t->nopen) t->nopen--;
}

w2l_rc w2l__wr_complete_data(writer *w, tstate *t, wpart *p, w2l_error *err)
{
    if (!p->dw) return W2L_OK;
    w2l__pq_writer *pw = p->dw;
    p->dw = NULL;
    p->drows = 0;
    closed_one(t, p);
    return close_file(w, t, p, W2L_ICE_DATA, t->files[p->dpath].path, pw, err);
}

w2l_rc w2l__wr_complete_eq(writer *w, tstate *t, wpart *p, w2l_error *err)
{
    if (!p->ew) return W2L_OK;
    w2l__pq_writer *pw = p->ew;
    char *path = p->epath;
    p->ew = NULL;
    p->epath = NULL;
    closed_one(t, p);
    w2l_rc rc = close_file(w, t, p, W2L_ICE_EQ_DELETES, path, pw, err);
    w2l__free(path);
    return rc;
}

/* position deletes in the order of their files' partitions, then paths, then positions
 * (file holds the path's rank while sorting; part its partition) */
typedef struct pdsort {
    uint32_t part, file;
    int64_t pos;
} pdsort;

static int pdsort_cmp(const void *a, const void *b)
{
    const pdsort *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* the files being ranked by complete_pos(), for qsort's comparator (per thread) */
static _Thread_local const wfile *tl_files;
static int path_idx_cmp(const void *a, const void *b)
{
    return strcmp(tl_files[*(const uint32_t *)a].path, tl_files[*(const uint32_t *)b].path);
}

/* Writes one position-delete file of sorted deletes d[0..n) of partition p. */
static w2l_rc write_pos(writer *w, tstate *t, const wpart *p, const pdsort *d, size_t n,
                        const uint32_t *order, w2l_value *rows, w2l_error *err)
{
    char *path = NULL;
    w2l__pq_writer *pw = NULL;
    w2l_rc rc = w2l__wr_open_file(w, t, p, w->pos_schema, "pos-delete", &path, &pw, err);
    for (size_t i = 0; rc == W2L_OK && i < n; i += CHUNK_ROWS) {
        size_t m = W2L_MIN((size_t)CHUNK_ROWS, n - i);
        for (size_t k = 0; k < m; k++) {
            const char *fp = t->files[order[d[i + k].file]].path;
            memset(&rows[2 * k], 0, 2 * sizeof *rows);
            rows[2 * k].v.bytes.ptr = fp;
            rows[2 * k].v.bytes.len = strlen(fp);
            rows[2 * k + 1].v.i64 = d[i + k].pos;
        }
        rc = w2l__pq_write_rows(pw, rows, m, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "table %s: ", t->fq); /* the file is named below */
    }
    if (rc == W2L_OK) {
        rc = close_file(w, t, p, W2L_ICE_POS_DELETES, path, pw, err);
        pw = NULL;
    }
    w2l__pq_writer_abort(pw);
    w2l__free(path);
    return rc;
}

/* Writes the table's position deletes, one file per partition of the data files they
 * point into, sorted by data file path then position (the spec's order for
 * position-delete files). */
static w2l_rc complete_pos(writer *w, tstate *t, w2l_error *err)
{
    if (!t->npd) return W2L_OK;
    /* a data file of an earlier checkpoint: its deletes go to its partition, made again */
    for (size_t i = 0; i < t->npd; i++) {
        wfile *f = &t->files[t->pd[i].file];
        if (f->part != NO_PART) continue;
        wpart *p;
        W2L_TRY(w2l__wr_part_by_key(w, t, f->pkey, f->klen, &p, err));
        f->part = p->idx;
    }
    uint32_t *order = w2l__malloc((t->nfiles + 1) * sizeof *order);
    uint32_t *rank = w2l__malloc((t->nfiles + 1) * sizeof *rank);
    pdsort *d = w2l__malloc(t->npd * sizeof *d);
    w2l_value *rows = w2l__malloc(2 * CHUNK_ROWS * sizeof *rows);
    w2l_rc rc = order && rank && d && rows ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        for (uint32_t i = 0; i < t->nfiles; i++) order[i] = i;
        tl_files = t->files;
        qsort(order, t->nfiles, sizeof *order, path_idx_cmp);
        tl_files = NULL;
        for (uint32_t i = 0; i < t->nfiles; i++) rank[order[i]] = i;
        for (size_t i = 0; i < t->npd; i++)
            d[i] = (pdsort){t->files[t->pd[i].file].part, rank[t->pd[i].file], t->pd[i].pos};
        qsort(d, t->npd, sizeof *d, pdsort_cmp);
    }
    for (size_t i = 0, j; rc == W2L_OK && i < t->npd; i = j) {
        for (j = i + 1; j < t->npd && d[j].part == d[i].part;) j++;
        rc = write_pos(w, t, t->parts[d[i].part], &d[i], j - i, order, rows, err);
    }
    w2l__free(order);
    w2l__free(rank);
    w2l__free(d);
    w2l__free(rows);
    w2l__free(t->pd);
    t->pd = NULL;
    t->npd = t->pdcap = 0;
    return rc;
}

static uint64_t table_mem(const writer *w, const tstate *t)
{
    uint64_t rg = w->pq.row_group_bytes, m = t->npd * sizeof(pdel);
    for (size_t i = 0; i < t->nparts; i++) {
        const wpart *p = t->parts[i];
        if (p->dw) m += W2L_MIN(w2l__pq_writer_bytes(p->dw), rg);
        if (p->ew) m += W2L_MIN(w2l__pq_writer_bytes(p->ew), rg);
    }
    return m;
}

void w2l__wr_account(writer *w, tstate *t)
{
    uint64_t m = table_mem(w, t);
    w->mem = w->mem - t->mem + m;
    t->mem = m;
}

w2l_rc w2l__wr_complete_part(writer *w, tstate *t, wpart *p, w2l_error *err)
{
    W2L_TRY(w2l__wr_complete_data(w, t, p, err));
    return w2l__wr_complete_eq(w, t, p, err);
}

/* Completes every open file of the table (the buffers are empty between elements). */
w2l_rc w2l__wr_complete_all(writer *w, tstate *t, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < t->nparts; i++)
        rc = w2l__wr_complete_part(w, t, t->parts[i], err);
    if (rc == W2L_OK) rc = complete_pos(w, t, err);
    w2l__wr_account(w, t);
    return rc;
}

void w2l__wr_abort_all(tstate *t)
{
    for (size_t i = 0; i < t->nparts; i++) {
        wpart *p = t->parts[i];
        w2l__pq_writer_abort(p->dw);
        w2l__pq_writer_abort(p->ew);
        p->dw = p->ew = NULL;
        w2l__free(p->epath);
        p->epath = NULL;
        p->drows = 0;
        p->nrows = p->ndels = 0;
    }
    t->nopen = 0;
}
