/*
 * The writer's key map and the lake's data files (op_writer_int.h): keys read back from the
 * files a table's rows are in. Delete mode "position" loads a table's map from its current
 * snapshot before the table's first change; when the key columns change, the live rows of
 * the checkpoint are keyed anew from their files; when a compaction commits, the entries of
 * the files it removed move onto the files it added, found by their keys. The map itself
 * (lookups, spilling, compaction) is op_writer_keys.c.
 */
#include <stdlib.h>

#include "op_writer_int.h"
#include "../io/io.h"
#include "../model/model.h"
#include "metrics.h"
#include "owner.h"

/* ------------------------------------------------------------- rereading -------- */

static int live_cmp(const void *a, const void *b)
{
    const kent *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The key columns changed (set_schema, with the new ones in t): the n live rows of this
 * checkpoint get their keys under the new columns, read back from their data files (a
 * column a file lacks is NULL; a value of a column widened since is widened). */
/* Reads the key columns of data file path back, under t's key columns now (a column the
 * file lacks is NULL, a value of a column widened since is widened): for the rows at the
 * sorted positions pos[0..n) (pos NULL: every row) calls fn with the row's position and its
 * key in w->key. */
static w2l_rc file_keys(writer *w, tstate *t, const char *path, const int64_t *pos, size_t n,
                        w2l_rc (*fn)(void *ctx, int64_t pos, w2l_error *err), void *ctx,
                        w2l_error *err)
{
    w2l__pq_reader *r = NULL;
    W2L_TRY(w2l__pq_reader_open(w->io, w2l__ice_local_path(path), &r, err));
    const w2l_schema *fs = w2l__pq_reader_schema(r);
    size_t nf = w2l_schema_field_count(t->schema);
    w2l_value *row = w2l__calloc(nf + 1, sizeof *row);
    w2l_value **vals = w2l__calloc(t->neq + 1, sizeof *vals);
    long *at = w2l__calloc(t->neq + 1, sizeof *at);
    w2l_type_id *ft = w2l__calloc(t->neq + 1, sizeof *ft);
    w2l_rc rc = row && vals && at && ft ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; i < nf && row; i++) row[i].is_null = 1;
    for (size_t i = 0; rc == W2L_OK && i < t->neq; i++) {
        at[i] = w2l_schema_index_of_id(fs, t->eq_ids[i]);
        ft[i] = at[i] >= 0 ? w2l_schema_field(fs, (size_t)at[i])->type.id : 0;
    }
    w2l_change c = {0};
    c.row = row;
    c.ncols = nf;
    c.schema = t->schema;
    uint64_t first = 0;
    size_t k = 0; /* pos[k]: the next position wanted */
    for (size_t rg = 0; rc == W2L_OK && rg < w2l__pq_reader_num_row_groups(r) && (!pos || k < n);
         first += w2l__pq_reader_row_group_rows(r, rg), rg++) {
        uint64_t rows = w2l__pq_reader_row_group_rows(r, rg);
        size_t m = rows; /* the rows wanted of this group */
        if (pos)
            for (m = 0; k + m < n && (uint64_t)pos[k + m] < first + rows;) m++;
        if (!m) continue;
        for (size_t i = 0; rc == W2L_OK && i < t->neq; i++) {
            w2l__free(vals[i]);
            vals[i] = NULL;
            if (at[i] < 0) continue;
            vals[i] = w2l__calloc(rows + 1, sizeof **vals);
            rc = vals[i] ? w2l__pq_reader_read_column(r, rg, (size_t)at[i], vals[i], err)
                         : w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        for (size_t j = 0; rc == W2L_OK && j < m; j++) {
            size_t q = pos ? (size_t)((uint64_t)pos[k + j] - first) : j;
            for (size_t i = 0; i < t->neq; i++) {
                w2l_value v = {0};
                v.is_null = 1;
                if (at[i] >= 0) v = vals[i][q];
                if (!v.is_null && ft[i] == W2L_TYPE_INT && t->eq_type[i] == W2L_TYPE_LONG)
                    v.v.i64 = v.v.i32;
                if (!v.is_null && ft[i] == W2L_TYPE_FLOAT && t->eq_type[i] == W2L_TYPE_DOUBLE)
                    v.v.f64 = v.v.f32;
                row[t->eq_idx[i]] = v;
            }
            rc = w2l__wr_encode_key(&w->key, t, &c, err);
            if (rc == W2L_OK) rc = fn(ctx, (int64_t)(first + q), err);
        }
        if (pos) k += m;
    }
    if (rc == W2L_OK && pos && k < n)
        rc = w2l__fail(err, W2L_CORRUPT, "row %lld is past the end of the file",
                       (long long)pos[k]);
    for (size_t i = 0; vals && i < t->neq; i++) w2l__free(vals[i]);
    w2l__free(vals);
    w2l__free(at);
    w2l__free(ft);
    w2l__free(row);
    w2l__pq_reader_close(r);
    if (rc != W2L_OK && rc != W2L_NOMEM) w2l__error_prefix(err, "reading back %s: ", path);
    return rc;
}

typedef struct rekey_ctx {
    writer *w;
    tstate *t;
    uint32_t file;
} rekey_ctx;

/* A live row keyed anew: an entry of its new key. */
static w2l_rc rekeyed(void *x, int64_t pos, w2l_error *err)
{
    rekey_ctx *k = x;
    tstate *t = k->t;
    const w2l_buf *key = &k->w->key;
    kslot *s;
    W2L_TRY(w2l__wr_key_get(t, key, w2l__wr_key_hash(key->data, key->len), 1, &s, err));
    W2L_TRY(w2l__wr_add_entry(t, s, 1, err));
    t->ke[s->head].file = k->file;
    t->ke[s->head].pos = pos;
    return W2L_OK;
}

w2l_rc w2l__wr_reread_keys(writer *w, tstate *t, kent *live, size_t n, w2l_error *err)
{
    qsort(live, n, sizeof *live, live_cmp);
    if (w->pend.n) W2L_TRY(w2l__wr_close_pending(w, err));
    int64_t *pos = w2l__malloc((n + 1) * sizeof *pos);
    w2l_rc rc = pos ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t k = 0, end; rc == W2L_OK && k < n; k = end) {
        for (end = k; end < n && live[end].file == live[k].file; end++)
            pos[end - k] = live[end].pos;
        rekey_ctx x = {w, t, live[k].file};
        rc = file_keys(w, t, t->files[live[k].file].path, pos, end - k, rekeyed, &x, err);
        if (rc != W2L_OK && rc != W2L_NOMEM)
            w2l__error_prefix(err, "table %s: the key columns changed; ", t->fq);
    }
    w2l__free(pos);
    if (rc == W2L_OK)
        w2l__log(W2L_LOG_DEBUG,
                 "writer %u: %s: key columns changed; %zu live rows keyed anew",
                 w->index, t->fq, n);
    else w2l__wr_keymap_clear(t);
    /* several writers share the table by the hash of the key (pipeline_nodes.c): under the
     * new key a row may go to another writer, whose map lacks the rows written here */
    const char *par = NULL;
    if (rc == W2L_OK &&
        w2l_conf_get_for_table(w->conf, t->fq, "table-parallelism", &par, NULL) == W2L_OK &&
        par && strtol(par, NULL, 10) > 1 && w->n > 1)
        w2l__log(W2L_LOG_WARN,
                 "writer %u: %s: the key columns changed within a checkpoint that wrote %zu "
                 "rows of the table here; with table-parallelism %s an update or delete of one "
                 "of them after the change may reach another writer and leave the old row in "
                 "the lake (table.%s.table-parallelism=1 keeps the table on one writer)",
                 w->index, t->fq, n, par, t->fq);
    return rc;
}

/* ------------------------------------------------------------------ loading ------ */

typedef struct load_ctx {
    writer *w;
    tstate *t;
    const w2l__ice_scan *scan;
    uint32_t file;
    w2l_value *row;           /* one value per column of t->schema; the key columns set */
    w2l_change c;
    size_t dups;
    uint64_t rows;
    w2l_rc rc;
    w2l_error *err;
} load_ctx;

/* One live row of the table (the key columns, in t->eq_schema's order). */
static int load_row(void *x, const w2l_value *vals, size_t n)
{
    load_ctx *l = x;
    tstate *t = l->t;
    for (size_t i = 0; i < n && i < t->neq; i++) l->row[t->eq_idx[i]] = vals[i];
    w2l_rc rc = w2l__wr_encode_key(&l->w->key, t, &l->c, l->err);
    uint64_t h = rc == W2L_OK ? w2l__wr_key_hash(l->w->key.data, l->w->key.len) : 0;
    kslot *s = NULL;
    if (rc == W2L_OK) rc = w2l__wr_key_get(t, &l->w->key, h, 1, &s, l->err);
    /* a primary key with two live rows (a lake written wrong before): the one read first
     * goes, by position, with the next checkpoint */
    if (rc == W2L_OK && t->policy == POL_PK && s->head >= 0) {
        l->dups++;
        rc = w2l__wr_delete_head(t, s, l->err);
    }
    if (rc == W2L_OK) rc = w2l__wr_add_entry(t, s, t->policy == POL_FULL_ROW, l->err);
    if (rc == W2L_OK) {
        t->ke[s->head].file = l->file;
        t->ke[s->head].pos = l->scan->pos;
    }
    /* a table larger than writer.key-index-memory spills while it loads */
    if (rc == W2L_OK && (++l->rows & 0xffff) == 0 && w2l__wr_map_bytes(t) > l->w->kbudget / 2)
        rc = w2l__wr_index_spill(l->w, t, 0, 0, l->err);
    l->rc = rc;
    return rc != W2L_OK;
}

/* The partition key of data file f as the writer encodes its partitions. */
static w2l_rc lake_part_key(const tstate *t, const w2l__ice_meta *m, const w2l__ice_data_file *f,
                            w2l_buf *b, w2l_error *err)
{
    const w2l__ice_spec *spec = w2l__ice_meta_spec(m, f->spec_id);
    size_t n = spec ? spec->nfields : 0;
    if (n != f->npart)
        return w2l__fail(err, W2L_CORRUPT,
                         "table %s: data file %s has %zu partition values for spec %d of %zu "
                         "fields",
                         t->fq, f->path, f->npart, (int)f->spec_id, n);
    int32_t sid = !n && !t->spec.spec ? -1 : f->spec_id;
    return w2l__wr_part_key(b, sid, spec, f->partition, err);
}

static w2l_rc load_lake(writer *w, tstate *t, const w2l__ice_table *it, size_t *nfiles,
                        size_t *dups, w2l_error *err)
{
    w2l__ice_scan *scan = NULL;
    W2L_TRY(w2l__ice_scan_plan(it->io, it->meta, -1, NULL, NULL, &scan, err));
    /* the key columns only, with the types the writer keys them by (older files' narrower
     * values are widened by the scan) */
    scan->schema = t->eq_schema;
    size_t nf = w2l_schema_field_count(t->schema);
    load_ctx l = {0};
    l.w = w, l.t = t, l.scan = scan, l.err = err;
    l.row = w2l__calloc(nf + 1, sizeof *l.row);
    w2l_rc rc = l.row ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; i < nf && l.row; i++) l.row[i].is_null = 1;
    l.c.row = l.row;
    l.c.ncols = nf;
    l.c.schema = t->schema;
    w2l_buf pk = {0};
    for (size_t i = 0; rc == W2L_OK && i < scan->ntasks; i++) {
        const w2l__ice_data_file *f = scan->tasks[i].file;
        rc = lake_part_key(t, it->meta, f, &pk, err);
        char *path = rc == W2L_OK ? w2l__strdup(f->path) : NULL;
        if (rc == W2L_OK && !path) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK) rc = w2l__wr_file_add(t, path, pk.data, pk.len, NO_PART, &l.file, err);
        if (rc == W2L_OK) rc = w2l__ice_scan_read_task(it->io, scan, i, load_row, &l, err);
        if (rc == W2L_CANCELLED) rc = l.rc;
    }
    *nfiles = scan->ntasks;
    *dups = l.dups;
    w2l_buf_release(&pk);
    w2l__free(l.row);
    w2l__ice_scan_free(scan);
    return rc;
}

w2l_rc w2l__wr_index_load(writer *w, tstate *t, w2l_error *err)
{
    if (t->policy != POL_PK && t->policy != POL_FULL_ROW) {
        t->loaded = 1;
        return W2L_OK;
    }
    int64_t t0 = w2l__now_ms();
    /* the rows of every checkpoint before this one are in the lake once committed: ours
     * of the table start with this change, but another writer (before a RENAME, another
     * parallelism) may have written some in the last one */
    w2l__owner *o = w2l__owner_current();
    if (o) W2L_TRY(w2l__owner_wait_done(o, w->barrier, err));
    if (!w->cat) W2L_TRY(w2l__catalog_open_conf(w->conf, &w->io, &w->cat, err));
    w2l__ice_table *it = NULL;
    w2l_rc rc = w2l__ice_table_load(w->cat, w->io, t->ns, t->table, &it, err);
    size_t nfiles = 0, dups = 0;
    if (rc == W2L_NOTFOUND) {
        rc = W2L_OK; /* no table yet: no rows */
    } else if (rc == W2L_OK && (!t->uuid[0] || !strcmp(it->meta->uuid, t->uuid))) {
        /* another job's table: refused before its rows are read (owner.h) */
        rc = w2l__claims_check(w2l__owner_claims(o), t->ns, t->table, it->meta, err);
        if (rc == W2L_OK) rc = load_lake(w, t, it, &nfiles, &dups, err);
    }
    w2l__ice_table_free(it);
    if (rc != W2L_OK) {
        w2l__wr_keymap_clear(t);
        w2l__error_prefix(err, "table %s: loading its key index from the lake: ", t->fq);
        return rc;
    }
    t->loaded = 1;
    w2l__metrics *mt = w2l__metrics_current();
    if (mt) w2l__metrics_key_index(mt, 0, 0, 0, 1);
    if (dups)
        w2l__log_table(W2L_LOG_WARN, t->ns, t->table,
                       "writer %u: %s: %zu primary keys had two live rows in the lake; the "
                       "older ones are deleted with the next commit",
                       w->index, t->fq, dups);
    w2l__log(W2L_LOG_DEBUG,
             "writer %u: %s: key index loaded: %llu keys, %zu files, %llu bytes, %lld ms "
             "(%llu keys on disk, %llu bytes there)",
             w->index, t->fq, (unsigned long long)(t->kcount + w2l__wr_runs_records(t)),
             nfiles, (unsigned long long)w2l__wr_index_bytes(t), (long long)(w2l__now_ms() - t0),
             (unsigned long long)w2l__wr_runs_records(t), (unsigned long long)w2l__wr_runs_disk(t));
    return W2L_OK;
}

/* ------------------------------------------------------------- compactions ------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds to *live the runs' rows in the files dead marks (of keys the map does not hide, and
 * for the older run, the young one does not hold). */
static w2l_rc run_rows_in(const tstate *t, const unsigned char *dead, size_t nold, size_t *live,
                          w2l_error *err)
{
    w2l__krun *src[2] = {t->young, t->run};
    w2l_rc rc = W2L_OK;
    for (int k = 0; rc == W2L_OK && k < 2; k++) {
        if (!src[k]) continue;
        w2l__krun_iter *it;
        W2L_TRY(w2l__krun_iter_open(src[k], &it, err));
        for (;;) {
            w2l__krec r;
            int end;
            if ((rc = w2l__krun_iter_next(it, &r, &end, err)) != W2L_OK || end) break;
            if (r.file == KTOMB || r.file >= nold || !dead[r.file]) continue;
            uint64_t h = w2l__wr_key_hash(r.key, r.len);
            if (w2l__wr_key_find(t, r.key, r.len, h)) continue;
            if (k == 1 && t->young) {
                const w2l__krec *y;
                size_t n;
                if ((rc = w2l__krun_find(t->young, r.key, r.len, h, &y, &n, err)) != W2L_OK)
                    break;
                if (n) continue;
            }
            (*live)++;
        }
        w2l__krun_iter_free(it);
    }
    return rc;
}

typedef struct remap_ctx {
    writer *w;
    tstate *t;
    uint32_t gi;
    const unsigned char *dead;
    size_t *moved;
} remap_ctx;

/* A row of a compacted file: the entry of its key that is in a removed file moves here. */
static w2l_rc remapped(void *x, int64_t pos, w2l_error *err)
{
    remap_ctx *m = x;
    tstate *t = m->t;
    const w2l_buf *key = &m->w->key;
    kslot *s;
    W2L_TRY(w2l__wr_key_get(t, key, w2l__wr_key_hash(key->data, key->len), 0, &s, err));
    for (int32_t e = s ? s->head : -1; e >= 0; e = t->ke[e].next)
        if (m->dead[t->ke[e].file]) {
            t->ke[e].file = m->gi;
            t->ke[e].pos = pos;
            (*m->moved)++;
            break;
        }
    return W2L_OK;
}

w2l_rc w2l__wr_index_rewritten(writer *w, tstate *t, const char *const *removed, size_t nremoved,
                               const char *const *added, size_t nadded, w2l_error *err)
{
    if (!t->posmode || !t->loaded || !t->nfiles || !nremoved) return W2L_OK;
    const char **rm = w2l__malloc(nremoved * sizeof *rm);
    W2L_NOMEM_IF(!rm, err);
    memcpy(rm, removed, nremoved * sizeof *rm);
    qsort(rm, nremoved, sizeof *rm, str_cmp);
    size_t nold = t->nfiles, ndead = 0;
    unsigned char *dead = w2l__calloc(nold + nadded + 1, 1);
    w2l_rc rc = dead ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nold; i++)
        ndead += dead[i] = bsearch(&t->files[i].path, rm, nremoved, sizeof *rm, str_cmp) != NULL;
    size_t live = 0, moved = 0;
    for (size_t i = 0; rc == W2L_OK && ndead && i < t->kcount; i++)
        for (int32_t e = t->ks[i].head; e >= 0; e = t->ke[e].next) live += dead[t->ke[e].file];
    if (rc == W2L_OK && ndead && t->run) rc = run_rows_in(t, dead, nold, &live, err);
    int64_t t0 = w2l__now_ms();
    for (size_t g = 0; rc == W2L_OK && live && moved < live && g < nadded; g++) {
        /* an added file is in the directory (the partition) of the files it replaced */
        size_t like = nold;
        for (size_t i = 0; i < nold && like == nold; i++)
            if (dead[i] && w2l__ice_same_dir(t->files[i].path, added[g])) like = i;
        if (like == nold) continue; /* another partition's, none of whose files we hold */
        char *p = w2l__strdup(added[g]);
        uint32_t gi;
        rc = p ? w2l__wr_file_add(t, p, t->files[like].pkey, t->files[like].klen, NO_PART, &gi,
                                  err)
               : w2l__fail(err, W2L_NOMEM, "out of memory");
        remap_ctx x = {w, t, gi, dead, &moved};
        if (rc == W2L_OK) rc = file_keys(w, t, added[g], NULL, 0, remapped, &x, err);
    }
    w2l__free(rm);
    w2l__free(dead);
    if (rc == W2L_OK && moved < live) {
        /* rows the compaction did not carry: the map no longer matches the lake, and the
         * rows of this checkpoint are not in the lake yet to load it again from */
        rc = w2l__fail(err, W2L_CORRUPT,
                       "%zu rows of the key index are in none of the %zu files a compaction "
                       "wrote (a restart loads the index from the lake)",
                       live - moved, nadded);
    } else if (rc == W2L_OK && live) {
        w2l__log(W2L_LOG_DEBUG,
                 "writer %u: %s: %zu rows of the key index moved onto %zu compacted files in "
                 "%lld ms",
                 w->index, t->fq, moved, nadded, (long long)(w2l__now_ms() - t0));
    }
    if (rc != W2L_OK) w2l__error_prefix(err, "table %s: following a compaction: ", t->fq);
    return rc;
}
