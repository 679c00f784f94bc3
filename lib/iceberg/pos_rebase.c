/*
 * Position-delete files: written (w2l__ice_pos_file_write, also compaction's), and moved
 * onto rewritten files. A writer that keeps a key index (delete mode
 * "position") names each deleted row by data file and position; when a compaction commits
 * between the writer's lookup and the commit of its delete, the data file it names is no
 * longer live and its rows sit in the compaction's output files, at other positions. A
 * delete committed as it is would apply to nothing (Iceberg spec, "Scan Planning": a
 * position delete applies to the data file whose path it names), and the row would come
 * back. So before such a commit every position delete naming a data file that is not live
 * is moved onto the live row of the same key (the table's identifier columns, or every
 * column without one) in the live data files of the delete's partition, found with their
 * own deletes applied; the delete file is written again beside the old one. A deletion
 * vector (format version 3) is read and written again the same way (w2l__ice_pos_file_read
 * reads either kind), its rows staying on one data file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"
#include "../model/model.h"
#include "../parquet/parquet.h"

typedef struct rrow {         /* one row of a position-delete file */
    const char *path;
    int64_t pos;
    int dead;
} rrow;

typedef struct rkey {         /* a live row by key */
    const unsigned char *k;
    size_t n;
    const char *path;
    int64_t pos;
    int used;
} rkey;

typedef struct pset {         /* paths (borrowed), open addressing */
    const char **v;
    size_t cap;
} pset;

static uint64_t phash(const char *p) { return w2l__hash64(p, strlen(p), 0x72626173); }

static w2l_rc pset_add(pset *s, const char *p, w2l_error *err)
{
    size_t i = phash(p) & (s->cap - 1);
    while (s->v[i]) {
        if (!strcmp(s->v[i], p)) return W2L_OK;
        i = (i + 1) & (s->cap - 1);
    }
    s->v[i] = p;
    (void)err;
    return W2L_OK;
}

static int pset_has(const pset *s, const char *p)
{
    for (size_t i = phash(p) & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
        if (!strcmp(s->v[i], p)) return 1;
    return 0;
}

static int rkey_cmp(const void *a, const void *b)
{
    const rkey *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->k, y->k, n) : 0;
    if (c) return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

static int rrow_cmp(const void *a, const void *b)
{
    const rrow *x = a, *y = b;
    w2l__ice_posref p = {x->path, x->pos}, q = {y->path, y->pos};
    return w2l__ice_posref_cmp(&p, &q);
}

/* Appends value v of type t to b: a 0xff byte for NULL, else 0, a 4-byte length and the
 * single-value bytes. */
static w2l_rc key_add(w2l_buf *b, w2l_type t, const w2l_value *v, w2l_error *err)
{
    if (v->is_null) return w2l_buf_append(b, "\xff", 1, err);
    size_t need = w2l__value_to_bytes(t, v, NULL, 0);
    W2L_TRY(w2l__buf_reserve(b, need + 5, err));
    unsigned char *o = b->data + b->len;
    uint32_t len = (uint32_t)need;
    o[0] = 0;
    memcpy(o + 1, &len, 4);
    w2l__value_to_bytes(t, v, o + 5, need);
    b->len += need + 5;
    return W2L_OK;
}

/* A value of file type ft as key type kt (int -> long, float -> double). */
static w2l_value widen(w2l_type_id ft, w2l_type_id kt, w2l_value v)
{
    if (v.is_null) return v;
    if (ft == W2L_TYPE_INT && kt == W2L_TYPE_LONG) v.v.i64 = v.v.i32;
    else if (ft == W2L_TYPE_FLOAT && kt == W2L_TYPE_DOUBLE) v.v.f64 = v.v.f32;
    return v;
}

typedef struct rb {
    w2l_fileio *io;
    const w2l__ice_meta *m;
    const w2l_schema *ks;     /* the key columns, current types */
    w2l__arena *tmp;
    w2l__ice_scan *scan;
    rkey *keys;               /* live rows of the partition at hand */
    size_t nkeys, kcap;
    w2l_buf b;
    w2l_rc rc;
    w2l_error *err;
} rb;

static int take_live(void *x, const w2l_value *row, size_t n)
{
    rb *r = x;
    r->b.len = 0;
    for (size_t i = 0; r->rc == W2L_OK && i < n; i++)
        r->rc = key_add(&r->b, w2l_schema_field(r->ks, i)->type, &row[i], r->err);
    if (r->rc == W2L_OK && r->nkeys == r->kcap) {
        size_t cap = r->kcap ? r->kcap * 2 : 256;
        rkey *nk = w2l__realloc(r->keys, cap * sizeof *nk);
        if (!nk) r->rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
        else r->keys = nk, r->kcap = cap;
    }
    unsigned char *k = r->rc == W2L_OK ? w2l__arena_alloc(r->tmp, r->b.len + 1) : NULL;
    if (r->rc == W2L_OK && !k) r->rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
    if (r->rc != W2L_OK) return 1;
    if (r->b.len) memcpy(k, r->b.data, r->b.len);
    r->keys[r->nkeys++] = (rkey){k, r->b.len, NULL, r->scan->pos, 0};
    return 0;
}

static int same_part(const w2l__ice_meta *m, const w2l__ice_data_file *d,
                     const w2l__ice_data_file *f)
{
    int32_t sid = d->spec_id < 0 ? m->default_spec_id : d->spec_id;
    const w2l__ice_spec *spec = w2l__ice_meta_spec(m, sid);
    if (!spec || !spec->nfields) return 1; /* an unpartitioned delete applies everywhere */
    if (f->spec_id != sid || f->npart != d->npart) return 0;
    for (size_t i = 0; i < d->npart; i++) {
        const w2l_value *x = &d->partition[i], *y = &f->partition[i];
        if (x->is_null != y->is_null) return 0;
        if (!x->is_null && w2l_value_compare(spec->fields[i].type, x, y) != 0) return 0;
    }
    return 1;
}

/* The live rows of d's partition (only those of files in onto, when given), by key,
 * sorted. */
static w2l_rc live_keys(rb *r, const w2l__ice_data_file *d, const pset *onto)
{
    r->nkeys = 0;
    for (size_t i = 0; r->rc == W2L_OK && i < r->scan->ntasks; i++) {
        const w2l__ice_data_file *f = r->scan->tasks[i].file;
        if (onto ? !pset_has(onto, f->path) : !same_part(r->m, d, f)) continue;
        size_t from = r->nkeys;
        w2l_rc rc = w2l__ice_scan_read_task(r->io, r->scan, i, take_live, r, r->err);
        if (rc == W2L_CANCELLED) rc = r->rc;
        if (rc != W2L_OK) return r->rc = rc;
        for (size_t k = from; k < r->nkeys; k++) r->keys[k].path = f->path;
    }
    if (r->rc == W2L_OK && r->nkeys) qsort(r->keys, r->nkeys, sizeof *r->keys, rkey_cmp);
    return r->rc;
}

/* The keys of the dead rows v[0..n) of data file path (sorted by position). */
static w2l_rc dead_keys(rb *r, const char *path, rrow *v, size_t n, rkey *out)
{
    w2l__pq_reader *pr = NULL;
    W2L_TRY(w2l__pq_reader_open(r->io, w2l__ice_local_path(path), &pr, r->err));
    const w2l_schema *fs = w2l__pq_reader_schema(pr);
    size_t nk = w2l_schema_field_count(r->ks);
    long *at = w2l__calloc(nk + 1, sizeof *at);
    w2l_value **cols = w2l__calloc(nk + 1, sizeof *cols);
    w2l_rc rc = at && cols ? W2L_OK : w2l__fail(r->err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nk; i++)
        at[i] = w2l_schema_index_of_id(fs, w2l_schema_field(r->ks, i)->id);
    uint64_t first = 0;
    size_t k = 0;
    for (size_t rg = 0; rc == W2L_OK && rg < w2l__pq_reader_num_row_groups(pr) && k < n; rg++) {
        uint64_t rows = w2l__pq_reader_row_group_rows(pr, rg);
        if ((uint64_t)v[k].pos >= first + rows) {
            first += rows;
            continue;
        }
        for (size_t i = 0; rc == W2L_OK && i < nk; i++) {
            w2l__free(cols[i]);
            cols[i] = NULL;
            if (at[i] < 0) continue;
            cols[i] = w2l__calloc(rows + 1, sizeof **cols);
            rc = cols[i] ? w2l__pq_reader_read_column(pr, rg, (size_t)at[i], cols[i], r->err)
                         : w2l__fail(r->err, W2L_NOMEM, "out of memory");
        }
        for (; rc == W2L_OK && k < n && (uint64_t)v[k].pos < first + rows; k++) {
            size_t ri = (size_t)((uint64_t)v[k].pos - first);
            r->b.len = 0;
            for (size_t i = 0; rc == W2L_OK && i < nk; i++) {
                const w2l_field *kf = w2l_schema_field(r->ks, i);
                w2l_value val = {0};
                val.is_null = 1;
                if (at[i] >= 0)
                    val = widen(w2l_schema_field(fs, (size_t)at[i])->type.id, kf->type.id,
                                cols[i][ri]);
                rc = key_add(&r->b, kf->type, &val, r->err);
            }
            unsigned char *kb = rc == W2L_OK ? w2l__arena_alloc(r->tmp, r->b.len + 1) : NULL;
            if (rc == W2L_OK && !kb) rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
            if (rc == W2L_OK) {
                if (r->b.len) memcpy(kb, r->b.data, r->b.len);
                out[k] = (rkey){kb, r->b.len, path, v[k].pos, 0};
            }
        }
        first += rows;
    }
    if (rc == W2L_OK && k < n)
        rc = w2l__fail(r->err, W2L_CORRUPT, "row %lld is past the end of the file",
                       (long long)v[k].pos);
    for (size_t i = 0; cols && i < nk; i++) w2l__free(cols[i]);
    w2l__free(cols);
    w2l__free(at);
    w2l__pq_reader_close(pr);
    if (rc != W2L_OK && rc != W2L_NOMEM) w2l__error_prefix(r->err, "reading %s: ", path);
    return rc;
}

w2l_rc w2l__ice_pos_file_read(w2l_fileio *io, const w2l__ice_data_file *d, w2l__arena *a,
                              w2l__ice_posref **out, size_t *nout, w2l_error *err)
{
    *out = NULL;
    *nout = 0;
    if (w2l__ice_is_dv(d)) { /* a deletion vector: the rows of its one data file */
        uint64_t *pos;
        size_t n;
        W2L_TRY(w2l__ice_dv_read(io, d, &pos, &n, err));
        const char *ref = d->referenced_data_file
                              ? w2l__arena_strndup(a, d->referenced_data_file,
                                                   strlen(d->referenced_data_file))
                              : NULL;
        w2l__ice_posref *v = w2l__malloc((n + 1) * sizeof *v);
        w2l_rc rc = W2L_OK;
        if (!d->referenced_data_file)
            rc = w2l__fail(err, W2L_CORRUPT, "deletion vector %s names no data file", d->path);
        else if (!ref || !v) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t i = 0; rc == W2L_OK && i < n; i++)
            v[i] = (w2l__ice_posref){ref, (int64_t)pos[i]};
        w2l__free(pos);
        if (rc != W2L_OK) {
            w2l__free(v);
            return rc;
        }
        *out = v;
        *nout = n;
        return W2L_OK;
    }
    w2l__pq_reader *pr = NULL;
    W2L_TRY(w2l__pq_reader_open(io, w2l__ice_local_path(d->path), &pr, err));
    const w2l_schema *fs = w2l__pq_reader_schema(pr);
    long cp = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_FILE_PATH);
    long cq = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_POS);
    size_t nf = w2l_schema_field_count(fs);
    size_t total = (size_t)w2l__pq_reader_num_rows(pr);
    w2l__ice_posref *v = w2l__malloc((total + 1) * sizeof *v);
    w2l_rc rc = v ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && (cp < 0 || cq < 0))
        rc = w2l__fail(err, W2L_CORRUPT, "not a position-delete file (no file_path or pos)");
    size_t n = 0;
    const char *last = NULL;
    for (size_t rg = 0; rc == W2L_OK && rg < w2l__pq_reader_num_row_groups(pr); rg++) {
        const w2l_value *rows;
        size_t nr = w2l__pq_reader_row_group_rows(pr, rg);
        rc = w2l__pq_reader_read_row_group(pr, rg, &rows, err);
        for (size_t i = 0; rc == W2L_OK && i < nr && n < total; i++) {
            const w2l_value *p = &rows[i * nf + (size_t)cp];
            if (p->is_null || rows[i * nf + (size_t)cq].is_null) continue;
            /* rows come sorted by path: one copy per path */
            const char *s = last;
            if (!s || strlen(s) != p->v.bytes.len || memcmp(s, p->v.bytes.ptr, p->v.bytes.len))
                s = last = w2l__arena_strndup(a, p->v.bytes.ptr, p->v.bytes.len);
            if (!s) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else v[n++] = (w2l__ice_posref){s, rows[i * nf + (size_t)cq].v.i64};
        }
    }
    w2l__pq_reader_close(pr);
    if (rc != W2L_OK) {
        w2l__free(v);
        if (rc != W2L_NOMEM) w2l__error_prefix(err, "reading %s: ", d->path);
        return rc;
    }
    *out = v;
    *nout = n;
    return W2L_OK;
}

/* The rows of position-delete file (or deletion vector) d, in *out (strings in r->tmp). */
static w2l_rc read_deletes(rb *r, const w2l__ice_data_file *d, rrow **out, size_t *nout)
{
    w2l__ice_posref *p;
    size_t n;
    W2L_TRY(w2l__ice_pos_file_read(r->io, d, r->tmp, &p, &n, r->err));
    rrow *v = w2l__malloc((n + 1) * sizeof *v);
    if (!v) {
        w2l__free(p);
        return w2l__fail(r->err, W2L_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) v[i] = (rrow){p[i].path, p[i].pos, 0};
    w2l__free(p);
    *out = v;
    *nout = n;
    return W2L_OK;
}

int w2l__ice_posref_cmp(const void *a, const void *b)
{
    const w2l__ice_posref *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c) return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

w2l_rc w2l__ice_pos_file_write(w2l_fileio *io, const char *path,
                               const struct w2l__pq_options *pq, const w2l__ice_posref *v,
                               size_t n, w2l__arena *a, w2l__ice_data_file *df, w2l_error *err)
{
    w2l_schema *s = w2l_schema_new(0);
    W2L_NOMEM_IF(!s, err);
    w2l_rc rc = w2l_schema_add_field(s, W2L_PQ_FIELD_ID_FILE_PATH, "file_path",
                                     (w2l_type){ W2L_TYPE_STRING, 0, 0 }, 1, err);
    if (rc == W2L_OK)
        rc = w2l_schema_add_field(s, W2L_PQ_FIELD_ID_POS, "pos", (w2l_type){ W2L_TYPE_LONG, 0, 0 },
                                  1, err);
    w2l__pq_writer *w = NULL;
    if (rc == W2L_OK)
        rc = w2l__pq_writer_open(io, w2l__ice_local_path(path), W2L_CREATE_EXCL, s, pq, NULL, 0,
                                 &w, err);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        if (i && !strcmp(v[i].path, v[i - 1].path) && v[i].pos == v[i - 1].pos) continue;
        w2l_value row[2];
        memset(row, 0, sizeof row);
        row[0].v.bytes.ptr = v[i].path;
        row[0].v.bytes.len = strlen(v[i].path);
        row[1].v.i64 = v[i].pos;
        rc = w2l__pq_write_row(w, row, err);
    }
    w2l__file_stats fst;
    memset(&fst, 0, sizeof fst);
    if (rc == W2L_OK) {
        rc = w2l__pq_writer_close(w, &fst, err);
        w = NULL;
    }
    int opened = rc == W2L_OK || w;
    w2l__pq_writer_abort(w);
    w2l_schema_unref(s);
    char *ap = rc == W2L_OK ? w2l__arena_strndup(a, path, strlen(path)) : NULL;
    if (rc == W2L_OK && !ap) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK)
        rc = w2l__ice_data_file_from_stats(a, W2L_ICE_POS_DELETES, ap, &fst, NULL, 0, df, err);
    w2l__file_stats_release(&fst);
    /* positions of one data file name it ("Manifests", referenced_data_file): the file then
     * applies to that data file alone */
    if (rc == W2L_OK && n && !strcmp(v[0].path, v[n - 1].path)) {
        df->referenced_data_file = w2l__arena_strndup(a, v[0].path, strlen(v[0].path));
        if (!df->referenced_data_file) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc != W2L_OK && opened) {
        w2l_error e2;
        w2l_fileio_remove(io, w2l__ice_local_path(path), &e2);
    }
    return rc;
}

/* Writes rows v[0..n) (sorted) as a new position-delete file (a deletion vector when d is
 * one: its rows then all name one data file) beside d, and makes *d it. */
static w2l_rc write_deletes(rb *r, const struct w2l__pq_options *pq, w2l__ice_data_file *d,
                            const rrow *v, size_t n, w2l__arena *a)
{
    if (w2l__ice_is_dv(d)) {
        for (size_t i = 1; i < n; i++)
            if (strcmp(v[i].path, v[0].path) != 0)
                return w2l__fail(r->err, W2L_CORRUPT,
                                 "deletion vector %s: its rows moved onto two data files (%s, %s)",
                                 d->path, v[0].path, v[i].path);
        uint64_t *pos = w2l__malloc((n + 1) * sizeof *pos);
        W2L_NOMEM_IF(!pos, r->err);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!k || pos[k - 1] != (uint64_t)v[i].pos) pos[k++] = (uint64_t)v[i].pos;
        w2l__ice_data_file nd = *d;
        w2l_rc rc = n ? w2l__ice_dv_file_write(r->io, d->path, v[0].path, pos, k, a, &nd, r->err)
                      : W2L_OK;
        w2l__free(pos);
        if (rc == W2L_OK) *d = nd;
        return rc;
    }
    w2l__ice_posref *refs = w2l__malloc((n + 1) * sizeof *refs);
    W2L_NOMEM_IF(!refs, r->err);
    for (size_t i = 0; i < n; i++) refs[i] = (w2l__ice_posref){v[i].path, v[i].pos};
    /* beside the old file: its partition's directory */
    const char *slash = strrchr(d->path, '/');
    size_t dl = slash ? (size_t)(slash - d->path) : 0;
    char uuid[37];
    w2l__ice_uuid(uuid);
    char *path = w2l__asprintf("%.*s/rebased-pos-delete-%s.parquet", (int)dl, d->path, uuid);
    w2l__ice_data_file nd;
    w2l_rc rc = path ? w2l__ice_pos_file_write(r->io, path, pq, refs, n, a, &nd, r->err)
                     : w2l__fail(r->err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        nd.spec_id = d->spec_id;
        nd.npart = d->npart;
        nd.partition = d->partition;
        *d = nd;
    }
    w2l__free(path);
    w2l__free(refs);
    return rc;
}

static w2l_rc key_schema(const w2l__ice_meta *m, w2l_schema **out, w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(m);
    if (!cur) return w2l__fail(err, W2L_CORRUPT, "the table has no current schema");
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(cur, &nid);
    size_t n = nid ? nid : w2l_schema_field_count(cur);
    w2l_schema *s = w2l_schema_new(0);
    W2L_NOMEM_IF(!s, err);
    for (size_t i = 0; i < n; i++) {
        long at = nid ? w2l_schema_index_of_id(cur, ids[i]) : (long)i;
        if (at < 0) continue;
        const w2l_field *f = w2l_schema_field(cur, (size_t)at);
        w2l_rc rc = w2l_schema_add_field(s, f->id, f->name, f->type, 0, err);
        if (rc != W2L_OK) {
            w2l_schema_unref(s);
            return rc;
        }
    }
    *out = s;
    return W2L_OK;
}

w2l_rc w2l__ice_rebase_pos_deletes(w2l_fileio *io, const w2l__ice_meta *m,
                                   const struct w2l__pq_options *pq, w2l__ice_data_file *dels,
                                   size_t ndels, const w2l__ice_data_file *own, size_t nown,
                                   const char *const *onto, size_t nonto, w2l__arena *a,
                                   size_t *moved, w2l_error *err)
{
    *moved = 0;
    size_t npos = 0;
    for (size_t i = 0; i < ndels; i++) npos += dels[i].content == W2L_ICE_POS_DELETES;
    if (!npos || m->current_snapshot_id < 0) return W2L_OK;
    rb r;
    memset(&r, 0, sizeof r);
    r.io = io, r.m = m, r.err = err;
    w2l__arena tmp;
    w2l__arena_init(&tmp, 1 << 16);
    r.tmp = &tmp;
    w2l_schema *ks = NULL;
    pset live = {0};
    rrow *v = NULL;
    rkey *dk = NULL;
    w2l_rc rc = w2l__ice_scan_plan(io, m, -1, NULL, NULL, &r.scan, err);
    if (rc == W2L_OK) {
        live.cap = 16;
        while (live.cap < 2 * (r.scan->ntasks + nown) + 2) live.cap *= 2;
        live.v = w2l__calloc(live.cap, sizeof *live.v);
        if (!live.v) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    for (size_t i = 0; rc == W2L_OK && r.scan && i < r.scan->ntasks; i++)
        rc = pset_add(&live, r.scan->tasks[i].file->path, err);
    for (size_t i = 0; rc == W2L_OK && i < nown; i++) rc = pset_add(&live, own[i].path, err);
    pset into = {0};
    if (rc == W2L_OK && onto) {
        into.cap = 16;
        while (into.cap < 2 * nonto + 2) into.cap *= 2;
        into.v = w2l__calloc(into.cap, sizeof *into.v);
        if (!into.v) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t i = 0; rc == W2L_OK && i < nonto; i++) rc = pset_add(&into, onto[i], err);
    }
    for (size_t d = 0; rc == W2L_OK && d < ndels; d++) {
        if (dels[d].content != W2L_ICE_POS_DELETES) continue;
        size_t n = 0, ndead = 0;
        w2l__free(v);
        v = NULL;
        rc = read_deletes(&r, &dels[d], &v, &n);
        for (size_t i = 0; rc == W2L_OK && i < n; i++)
            if ((v[i].dead = !pset_has(&live, v[i].path)) != 0) ndead++;
        if (rc != W2L_OK || !ndead) continue;
        if (!ks && (rc = key_schema(m, &ks, err)) != W2L_OK) break;
        r.ks = ks;
        r.scan->schema = ks;
        rc = live_keys(&r, &dels[d], onto ? &into : NULL);
        /* the dead rows' keys, file by file */
        qsort(v, n, sizeof *v, rrow_cmp);
        w2l__free(dk);
        dk = w2l__calloc(n + 1, sizeof *dk);
        if (rc == W2L_OK && !dk) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t i = 0, j; rc == W2L_OK && i < n; i = j) {
            for (j = i; j < n && !strcmp(v[j].path, v[i].path);) j++;
            if (v[i].dead) rc = dead_keys(&r, v[i].path, &v[i], j - i, &dk[i]);
        }
        for (size_t i = 0; rc == W2L_OK && i < n; i++) {
            if (!v[i].dead) continue;
            size_t lo = 0, hi = r.nkeys; /* the first live row with the key not taken yet */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (rkey_cmp(&r.keys[mid], &dk[i]) < 0) lo = mid + 1;
                else hi = mid;
            }
            while (lo < r.nkeys && !rkey_cmp(&r.keys[lo], &dk[i]) && r.keys[lo].used) lo++;
            if (lo >= r.nkeys || rkey_cmp(&r.keys[lo], &dk[i]) != 0) {
                rc = w2l__fail(err, W2L_CORRUPT,
                               "position delete %s: row %lld of %s, which is not live any "
                               "more (rewritten by a compaction), has no live row with its key "
                               "in its partition",
                               dels[d].path, (long long)v[i].pos, v[i].path);
                break;
            }
            r.keys[lo].used = 1;
            v[i].path = r.keys[lo].path;
            v[i].pos = r.keys[lo].pos;
            (*moved)++;
        }
        if (rc == W2L_OK) {
            qsort(v, n, sizeof *v, rrow_cmp);
            rc = write_deletes(&r, pq, &dels[d], v, n, a);
        }
    }
    w2l__free(v);
    w2l__free(dk);
    w2l__free(live.v);
    w2l__free(into.v);
    w2l__free(r.keys);
    w2l_buf_release(&r.b);
    w2l_schema_unref(ks);
    w2l__ice_scan_free(r.scan);
    w2l__arena_release(&tmp);
    return rc;
}
