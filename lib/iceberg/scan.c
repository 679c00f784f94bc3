/*
 * Scans: which files make up a snapshot and which delete files apply to each data file
 * (Iceberg spec: "Scan Planning" — delete file applicability by data sequence numbers:
 * a position delete applies to a data file when its data sequence number is >= the data
 * file's, an equality delete when it is strictly greater, and both only within the same
 * partition unless the delete file's spec is unpartitioned; "Position Delete Files",
 * "Equality Delete Files" — equality on the values of equality_ids, null equal to null;
 * "Deletion Vectors" (format version 3) — the positions of the one data file a vector
 * names, read from its blob in a Puffin file (puffin.c);
 * "Schema Evolution" — columns matched by field id, missing columns null, int->long and
 * float->double promotion), then reading the rows through lib/parquet's reader.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"
#include "../model/model.h"
#include "../parquet/parquet.h"

static void dcache_free(struct w2l__ice_dcache *c);

void w2l__ice_scan_free(w2l__ice_scan *s)
{
    if (!s) return;
    dcache_free(s->dcache);
    w2l__arena_release(&s->arena);
    w2l__free(s);
}

typedef struct live {
    w2l__ice_entry *e;
    const w2l__ice_spec *spec;
} live;

static int same_partition(const w2l__ice_spec *spec, const w2l__ice_data_file *a,
                          const w2l__ice_data_file *b)
{
    if (a->spec_id != b->spec_id || a->npart != b->npart) return 0;
    for (size_t i = 0; i < a->npart; i++) {
        const w2l_value *x = &a->partition[i], *y = &b->partition[i];
        if (x->is_null != y->is_null) return 0;
        if (x->is_null) continue;
        w2l_type t =
            spec && i < spec->nfields ? spec->fields[i].type : (w2l_type){ W2L_TYPE_LONG, 0, 0 };
        if (w2l_value_compare(t, x, y) != 0) return 0;
    }
    return 1;
}

static int delete_applies(const live *d, const live *f)
{
    const w2l__ice_data_file *df = &d->e->file, *ff = &f->e->file;
    int64_t ds = d->e->seq, fs = f->e->seq;
    int unpartitioned = !d->spec || d->spec->nfields == 0;
    if (!unpartitioned && !same_partition(d->spec, df, ff)) return 0;
    if (df->content == W2L_ICE_POS_DELETES) {
        if (df->referenced_data_file && strcmp(df->referenced_data_file, ff->path) != 0) return 0;
        return ds >= fs;
    }
    return ds > fs;
}

w2l_rc w2l__ice_older_data_specs(w2l_fileio *io, const w2l__ice_meta *m, int32_t **ids,
                                 size_t *n, w2l_error *err)
{
    *ids = NULL;
    *n = 0;
    const w2l__ice_snapshot *cur =
        m->current_snapshot_id != -1 ? w2l__ice_meta_snapshot(m, m->current_snapshot_id) : NULL;
    if (!cur || m->nspecs < 2) return W2L_OK;
    w2l__arena a;
    w2l__arena_init(&a, 1 << 14);
    w2l__ice_manifest *ml;
    size_t nml;
    w2l_rc rc = w2l__ice_manifest_list_read(io, cur->manifest_list, &a, &ml, &nml, err);
    int32_t *v = rc == W2L_OK ? w2l__malloc((nml + 1) * sizeof *v) : NULL;
    if (rc == W2L_OK && !v) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == W2L_OK && i < nml; i++) {
        const w2l__ice_manifest *mf = &ml[i];
        if (mf->content != W2L_ICE_MANIFEST_DATA || mf->spec_id == m->default_spec_id ||
            mf->added_files + mf->existing_files == 0)
            continue;
        size_t j = 0;
        while (j < k && v[j] != mf->spec_id) j++;
        if (j == k) v[k++] = mf->spec_id;
    }
    w2l__arena_release(&a);
    if (rc != W2L_OK) {
        w2l__free(v);
        return rc;
    }
    *ids = v;
    *n = k;
    return W2L_OK;
}

w2l_rc w2l__ice_scan_plan(w2l_fileio *io, const w2l__ice_meta *meta, int64_t snapshot_id,
                          const char *relocate_from, const char *relocate_to,
                          w2l__ice_scan **out, w2l_error *err)
{
    *out = NULL;
    w2l__ice_scan *s = w2l__calloc(1, sizeof *s);
    W2L_NOMEM_IF(!s, err);
    w2l__arena_init(&s->arena, 1 << 16);
    s->meta = meta;
    s->relocate_from = relocate_from;
    s->relocate_to = relocate_to;
    s->snapshot_id = snapshot_id == -1 ? meta->current_snapshot_id : snapshot_id;
    const w2l__ice_snapshot *snap =
        s->snapshot_id != -1 ? w2l__ice_meta_snapshot(meta, s->snapshot_id) : NULL;
    int32_t sid = meta->current_schema_id;
    if (snapshot_id != -1 && snap && snap->schema_id >= 0) sid = snap->schema_id;
    const w2l__ice_schema_entry *se = w2l__ice_meta_schema(meta, sid);
    w2l_rc rc = W2L_OK;
    if (!se || !se->schema)
        rc = w2l__fail(err, W2L_SCHEMA, "scan: schema %d is not readable here (nested types)",
                       (int)sid);
    else s->schema = se->schema;
    if (rc == W2L_OK && s->snapshot_id != -1 && !snap)
        rc = w2l__fail(err, W2L_NOTFOUND, "scan: no snapshot %lld", (long long)s->snapshot_id);
    if (rc != W2L_OK || !snap) {
        if (rc != W2L_OK) w2l__ice_scan_free(s);
        else *out = s;
        return rc;
    }
    char *lp = NULL;
    w2l__ice_manifest *ml = NULL;
    size_t nml = 0;
    {
        const char *p = snap->manifest_list;
        if (strncmp(p, "file://", 7) == 0) p += 7;
        else if (strncmp(p, "file:", 5) == 0) p += 5;
        if (relocate_from && strncmp(p, relocate_from, strlen(relocate_from)) == 0)
            lp = w2l__asprintf("%s%s", relocate_to, p + strlen(relocate_from));
        else
            lp = w2l__strdup(p);
    }
    if (!lp) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = w2l__ice_manifest_list_read(io, lp, &s->arena, &ml, &nml, err);
    w2l__free(lp);
    live *data = NULL, *dels = NULL;
    size_t nd = 0, ndel = 0, capd = 0, capdel = 0;
    for (size_t i = 0; rc == W2L_OK && i < nml; i++) {
        w2l__ice_manifest mf = ml[i];
        char *mp = NULL;
        if (strncmp(mf.path, "file://", 7) == 0) mf.path += 7;
        else if (strncmp(mf.path, "file:", 5) == 0) mf.path += 5;
        if (relocate_from && strncmp(mf.path, relocate_from, strlen(relocate_from)) == 0) {
            mp = w2l__asprintf("%s%s", relocate_to, mf.path + strlen(relocate_from));
            if (!mp) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            mf.path = mp;
        }
        const w2l__ice_spec *spec = w2l__ice_meta_spec(meta, mf.spec_id);
        w2l__ice_entry *es;
        size_t ne;
        rc = w2l__ice_manifest_read(io, &mf, spec, &s->arena, &es, &ne, err);
        w2l__free(mp);
        for (size_t k = 0; rc == W2L_OK && k < ne; k++) {
            if (es[k].status == W2L_ICE_DELETED) continue;
            int is_del = es[k].file.content != W2L_ICE_DATA;
            live **v = is_del ? &dels : &data;
            size_t *n = is_del ? &ndel : &nd, *cap = is_del ? &capdel : &capd;
            if (*n == *cap) {
                *cap = *cap ? *cap * 2 : 64;
                live *nv = w2l__realloc(*v, *cap * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                *v = nv;
            }
            (*v)[(*n)++] = (live){&es[k], spec};
        }
    }
    if (rc == W2L_OK) {
        s->tasks = w2l__arena_alloc(&s->arena, (nd ? nd : 1) * sizeof *s->tasks);
        if (!s->tasks) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    for (size_t i = 0; rc == W2L_OK && i < nd; i++) {
        w2l__ice_task *t = &s->tasks[s->ntasks++];
        t->file = &data[i].e->file;
        t->seq = data[i].e->seq;
        size_t n = 0;
        for (size_t k = 0; k < ndel; k++) n += delete_applies(&dels[k], &data[i]);
        t->ndeletes = n;
        t->deletes = w2l__arena_alloc(&s->arena, (n ? n : 1) * sizeof *t->deletes);
        int64_t *seqs = w2l__arena_alloc(&s->arena, (n ? n : 1) * sizeof *seqs);
        if (!t->deletes || !seqs) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        n = 0;
        for (size_t k = 0; k < ndel; k++)
            if (delete_applies(&dels[k], &data[i])) {
                seqs[n] = dels[k].e->seq;
                t->deletes[n++] = &dels[k].e->file;
            }
        t->delete_seqs = seqs;
    }
    s->ndelete_files = ndel;
    if (rc == W2L_OK) {
        s->delete_files = w2l__arena_alloc(&s->arena, (ndel ? ndel : 1) * sizeof *s->delete_files);
        if (!s->delete_files) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t k = 0; rc == W2L_OK && k < ndel; k++) s->delete_files[k] = &dels[k].e->file;
    }
    w2l__free(data);
    w2l__free(dels);
    if (rc != W2L_OK) {
        w2l__ice_scan_free(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

/* ---- reading ---- */

static char *local(const w2l__ice_scan *s, const char *p)
{
    p = w2l__ice_local_path(p);
    if (s->relocate_from && strncmp(p, s->relocate_from, strlen(s->relocate_from)) == 0)
        return w2l__asprintf("%s%s", s->relocate_to, p + strlen(s->relocate_from));
    return w2l__strdup(p);
}

/* Canonical key text of values (equality deletes compare values, not physical types). */
static w2l_rc key_append(w2l_buf *b, w2l_type t, const w2l_value *v, w2l_error *err)
{
    char tmp[128];
    if (v->is_null) return w2l_buf_append(b, "\x01N\x1f", 3, err);
    if (t.id == W2L_TYPE_STRING || t.id == W2L_TYPE_BINARY) {
        W2L_TRY(w2l_buf_append(b, "\x02", 1, err));
        W2L_TRY(w2l_buf_append(b, v->v.bytes.ptr, v->v.bytes.len, err));
        return w2l_buf_append(b, "\x1f", 1, err);
    }
    w2l_value x = *v;
    w2l_type tt = t;
    if (t.id == W2L_TYPE_INT) { /* int and long keys compare as numbers */
        tt.id = W2L_TYPE_LONG;
        x.v.i64 = v->v.i32;
    } else if (t.id == W2L_TYPE_FLOAT) {
        tt.id = W2L_TYPE_DOUBLE;
        x.v.f64 = v->v.f32;
    }
    size_t n = w2l_value_format(tt, &x, tmp, sizeof tmp);
    W2L_TRY(w2l_buf_append(b, "\x03", 1, err));
    W2L_TRY(w2l_buf_append(b, tmp, W2L_MIN(n, sizeof tmp - 1), err));
    return w2l_buf_append(b, "\x1f", 1, err);
}

typedef struct keyset {
    const int32_t *ids;
    size_t nids;
    char **keys;
    size_t n, cap;
} keyset;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct posent {
    uint32_t path; /* index into the file's distinct paths */
    int64_t pos;
} posent;

static int cmp_posent(const void *a, const void *b)
{
    const posent *x = a, *y = b;
    if (x->path != y->path) return x->path < y->path ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* One delete file as read: equality keys (sorted) or positions by data file path. */
typedef struct dfile {
    const w2l__ice_data_file *d;
    int loaded;
    keyset ks;
    char **paths;        /* position deletes: distinct data file paths */
    size_t npaths;
    posent *pe;          /* sorted by (path, pos) */
    size_t npe, cappe;
} dfile;

struct w2l__ice_dcache {
    dfile *v;            /* open addressing by the delete file's address */
    size_t cap;
};

static void dfile_release(dfile *f)
{
    for (size_t k = 0; k < f->ks.n; k++) w2l__free(f->ks.keys[k]);
    w2l__free(f->ks.keys);
    for (size_t k = 0; k < f->npaths; k++) w2l__free(f->paths[k]);
    w2l__free(f->paths);
    w2l__free(f->pe);
    memset(f, 0, sizeof *f);
}

static void dcache_free(struct w2l__ice_dcache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++)
        if (c->v[i].d) dfile_release(&c->v[i]);
    w2l__free(c->v);
    w2l__free(c);
}

static dfile *dcache_slot(w2l__ice_scan *s, const w2l__ice_data_file *d)
{
    if (!s->dcache) {
        s->dcache = w2l__calloc(1, sizeof *s->dcache);
        if (!s->dcache) return NULL;
        size_t cap = 16;
        while (cap < 2 * (s->ndelete_files + 1)) cap *= 2;
        s->dcache->v = w2l__calloc(cap, sizeof *s->dcache->v);
        if (!s->dcache->v) {
            w2l__free(s->dcache);
            s->dcache = NULL;
            return NULL;
        }
        s->dcache->cap = cap;
    }
    struct w2l__ice_dcache *c = s->dcache;
    uint64_t h = w2l__hash64(&d, sizeof d, 0x64656c);
    for (size_t i = 0; i < c->cap; i++) {
        dfile *f = &c->v[(h + i) & (c->cap - 1)];
        if (f->d == d || !f->d) {
            f->d = d;
            return f;
        }
    }
    return NULL; /* cannot happen: the table holds twice the scan's delete files */
}

/* A deletion vector (format version 3): the positions of its one data file. */
static w2l_rc load_dv(w2l_fileio *io, const w2l__ice_scan *s, dfile *f, w2l_error *err)
{
    w2l__ice_data_file d = *f->d;
    if (!d.referenced_data_file)
        return w2l__fail(err, W2L_CORRUPT, "deletion vector %s names no data file", d.path);
    char *p = local(s, d.path);
    W2L_NOMEM_IF(!p, err);
    d.path = p;
    uint64_t *v = NULL;
    size_t n = 0;
    w2l_rc rc = w2l__ice_dv_read(io, &d, &v, &n, err);
    w2l__free(p);
    W2L_TRY(rc);
    f->paths = w2l__malloc(sizeof *f->paths);
    f->pe = w2l__malloc((n + 1) * sizeof *f->pe);
    char *ref = f->paths ? w2l__strdup(d.referenced_data_file) : NULL;
    if (!f->paths || !f->pe || !ref) {
        w2l__free(ref);
        w2l__free(v);
        const w2l__ice_data_file *orig = f->d;
        dfile_release(f);
        f->d = orig; /* the slot stays claimed, unloaded */
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    f->paths[0] = ref;
    f->npaths = 1;
    for (size_t i = 0; i < n; i++) f->pe[i] = (posent){0, (int64_t)v[i]};
    f->npe = f->cappe = n;
    f->loaded = 1;
    w2l__free(v);
    return W2L_OK;
}

static w2l_rc load_delete(w2l_fileio *io, const w2l__ice_scan *s, dfile *f, w2l_error *err)
{
    const w2l__ice_data_file *d = f->d;
    if (w2l__ice_is_dv(d)) return load_dv(io, s, f, err);
    char *p = local(s, d->path);
    W2L_NOMEM_IF(!p, err);
    w2l__pq_reader *r;
    w2l_rc rc = w2l__pq_reader_open(io, p, &r, err);
    w2l__free(p);
    W2L_TRY(rc);
    keyset *ks = &f->ks;
    ks->ids = d->equality_ids;
    ks->nids = d->neq;
    const w2l_schema *fs = w2l__pq_reader_schema(r);
    size_t nf = w2l_schema_field_count(fs);
    long ipath = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_FILE_PATH);
    long ipos = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_POS);
    if (d->content == W2L_ICE_POS_DELETES && (ipath < 0 || ipos < 0))
        rc = w2l__fail(err, W2L_CORRUPT, "position delete file %s without file_path/pos", d->path);
    w2l_buf key = {0};
    for (size_t rg = 0; rc == W2L_OK && rg < w2l__pq_reader_num_row_groups(r); rg++) {
        const w2l_value *rows;
        size_t nrows = w2l__pq_reader_row_group_rows(r, rg);
        rc = w2l__pq_reader_read_row_group(r, rg, &rows, err);
        for (size_t i = 0; rc == W2L_OK && i < nrows; i++) {
            const w2l_value *row = &rows[i * nf];
            if (d->content == W2L_ICE_POS_DELETES) {
                const w2l_value *fp = &row[ipath];
                if (fp->is_null || row[ipos].is_null) continue;
                size_t pi = f->npaths;
                /* rows come sorted by path: the last path is the likely one */
                if (pi && strlen(f->paths[pi - 1]) == fp->v.bytes.len &&
                    memcmp(f->paths[pi - 1], fp->v.bytes.ptr, fp->v.bytes.len) == 0)
                    pi--;
                else
                    for (size_t k = 0; k < f->npaths; k++)
                        if (strlen(f->paths[k]) == fp->v.bytes.len &&
                            memcmp(f->paths[k], fp->v.bytes.ptr, fp->v.bytes.len) == 0)
                            pi = k;
                if (pi == f->npaths) {
                    char **np = w2l__realloc(f->paths, (f->npaths + 1) * sizeof *np);
                    if (np) f->paths = np;
                    char *dup =
                        np ? w2l__strndup((const char *)fp->v.bytes.ptr, fp->v.bytes.len) : NULL;
                    if (!dup) {
                        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                        break;
                    }
                    f->paths[f->npaths++] = dup;
                }
                if (f->npe == f->cappe) {
                    f->cappe = f->cappe ? f->cappe * 2 : 64;
                    posent *nv = w2l__realloc(f->pe, f->cappe * sizeof *nv);
                    if (!nv) {
                        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                        break;
                    }
                    f->pe = nv;
                }
                f->pe[f->npe++] = (posent){(uint32_t)pi, row[ipos].v.i64};
                continue;
            }
            key.len = 0;
            for (size_t k = 0; rc == W2L_OK && k < ks->nids; k++) {
                long c = w2l_schema_index_of_id(fs, ks->ids[k]);
                if (c < 0) {
                    rc = w2l__fail(err, W2L_CORRUPT, "equality delete file %s lacks field %d",
                                   d->path, (int)ks->ids[k]);
                    break;
                }
                rc = key_append(&key, w2l_schema_field(fs, (size_t)c)->type, &row[c], err);
            }
            if (rc == W2L_OK) rc = w2l__buf_cstr(&key, err);
            if (rc != W2L_OK) break;
            if (ks->n == ks->cap) {
                ks->cap = ks->cap ? ks->cap * 2 : 64;
                char **nv = w2l__realloc(ks->keys, ks->cap * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                ks->keys = nv;
            }
            if (!(ks->keys[ks->n] = w2l__strndup((const char *)key.data, key.len))) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            ks->n++;
        }
    }
    w2l_buf_release(&key);
    w2l__pq_reader_close(r);
    if (rc == W2L_OK) {
        if (ks->n) qsort(ks->keys, ks->n, sizeof *ks->keys, cmp_str);
        if (f->npe) qsort(f->pe, f->npe, sizeof *f->pe, cmp_posent);
        f->loaded = 1;
    } else {
        dfile_release(f);
        f->d = d; /* the slot stays claimed, unloaded */
    }
    return rc;
}

/* The positions f deletes from the data file at path, appended to *v. */
static w2l_rc positions_of(const dfile *f, const char *path, int64_t **v, size_t *n, size_t *cap,
                           w2l_error *err)
{
    for (size_t k = 0; k < f->npaths; k++) {
        if (strcmp(f->paths[k], path) != 0) continue;
        posent probe = {(uint32_t)k, INT64_MIN};
        size_t lo = 0, hi = f->npe; /* first entry >= probe */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_posent(&f->pe[mid], &probe) < 0) lo = mid + 1;
            else hi = mid;
        }
        for (size_t i = lo; i < f->npe && f->pe[i].path == k; i++) {
            if (*n == *cap) {
                *cap = *cap ? *cap * 2 : 64;
                int64_t *nv = w2l__realloc(*v, *cap * sizeof *nv);
                W2L_NOMEM_IF(!nv, err);
                *v = nv;
            }
            (*v)[(*n)++] = f->pe[i].pos;
        }
    }
    return W2L_OK;
}

/* Reads one data file, applying its deletes. */
static w2l_rc read_task(w2l_fileio *io, w2l__ice_scan *s, const w2l__ice_task *t,
                        int (*fn)(void *, const w2l_value *, size_t), void *ctx, w2l_error *err)
{
    const w2l_schema *out = s->schema;
    size_t nout = w2l_schema_field_count(out);
    int64_t *pv = NULL;
    size_t npv = 0, cappv = 0;
    const dfile **ds = w2l__calloc(t->ndeletes + 1, sizeof *ds);
    w2l_value *row = w2l__calloc(nout + 1, sizeof *row);
    long *map = w2l__calloc(nout + 1, sizeof *map);
    w2l_rc rc = ds && row && map ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < t->ndeletes; i++) {
        dfile *f = dcache_slot(s, t->deletes[i]);
        if (!f) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else if (!f->loaded) rc = load_delete(io, s, f, err);
        if (rc != W2L_OK) break;
        ds[i] = f;
        if (t->deletes[i]->content == W2L_ICE_POS_DELETES)
            rc = positions_of(f, t->file->path, &pv, &npv, &cappv, err);
    }
    if (rc == W2L_OK && npv) qsort(pv, npv, sizeof *pv, cmp_i64);
    char *p = rc == W2L_OK ? local(s, t->file->path) : NULL;
    if (rc == W2L_OK && !p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l__pq_reader *r = NULL;
    if (rc == W2L_OK) rc = w2l__pq_reader_open(io, p, &r, err);
    w2l__free(p);
    const w2l_schema *fs = r ? w2l__pq_reader_schema(r) : NULL;
    size_t nf = fs ? w2l_schema_field_count(fs) : 0;
    for (size_t i = 0; rc == W2L_OK && i < nout; i++)
        map[i] = w2l_schema_index_of_id(fs, w2l_schema_field(out, i)->id);
    /* identity-partitioned columns missing from the file take the partition value */
    const w2l__ice_spec *spec = rc == W2L_OK ? w2l__ice_meta_spec(s->meta, t->file->spec_id) : NULL;
    /* the file's columns the output and the equality deletes need: when they are not all,
     * only those are decoded (a key index load reads the key columns of wide tables) */
    size_t *need = rc == W2L_OK ? w2l__calloc(nf + 1, sizeof *need) : NULL;
    size_t nneed = 0;
    if (rc == W2L_OK && !need) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t c = 0; rc == W2L_OK && c < nf; c++) {
        int32_t id = w2l_schema_field(fs, c)->id;
        int used = 0;
        for (size_t i = 0; !used && i < nout; i++) used = map[i] == (long)c;
        for (size_t d = 0; !used && d < t->ndeletes; d++)
            for (size_t k = 0; !used && t->deletes[d]->content == W2L_ICE_EQ_DELETES &&
                               k < ds[d]->ks.nids;
                 k++)
                used = ds[d]->ks.ids[k] == id;
        if (used) need[nneed++] = c;
    }
    const int bycol = nneed < nf;
    w2l_value **cv = bycol ? w2l__calloc(nf + 1, sizeof *cv) : NULL;
    w2l_value *srow = bycol ? w2l__calloc(nf + 1, sizeof *srow) : NULL;
    size_t cvrows = 0;
    if (rc == W2L_OK && bycol && (!cv || !srow)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l_buf key = {0};
    int64_t pos = 0;
    for (size_t rg = 0; rc == W2L_OK && rg < w2l__pq_reader_num_row_groups(r); rg++) {
        const w2l_value *rows = NULL;
        size_t nrows = w2l__pq_reader_row_group_rows(r, rg);
        if (!bycol) {
            rc = w2l__pq_reader_read_row_group(r, rg, &rows, err);
        } else {
            for (size_t j = 0; rc == W2L_OK && nrows > cvrows && j < nneed; j++) {
                w2l_value *nv = w2l__realloc(cv[need[j]], nrows * sizeof *nv);
                if (!nv) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                else cv[need[j]] = nv;
            }
            if (rc == W2L_OK && nrows > cvrows) cvrows = nrows;
            for (size_t j = 0; rc == W2L_OK && j < nneed; j++)
                rc = w2l__pq_reader_read_column(r, rg, need[j], cv[need[j]], err);
        }
        for (size_t i = 0; rc == W2L_OK && i < nrows; i++, pos++) {
            if (npv && bsearch(&pos, pv, npv, sizeof *pv, cmp_i64)) continue;
            const w2l_value *src = rows ? &rows[i * nf] : srow;
            for (size_t j = 0; !rows && j < nneed; j++) srow[need[j]] = cv[need[j]][i];
            int deleted = 0;
            for (size_t d = 0; rc == W2L_OK && !deleted && d < t->ndeletes; d++) {
                if (t->deletes[d]->content != W2L_ICE_EQ_DELETES || !ds[d]->ks.n) continue;
                const keyset *ks = &ds[d]->ks;
                key.len = 0;
                for (size_t k = 0; rc == W2L_OK && k < ks->nids; k++) {
                    long c = w2l_schema_index_of_id(fs, ks->ids[k]);
                    w2l_value nul = {.is_null = 1};
                    w2l_type ty = c >= 0 ? w2l_schema_field(fs, (size_t)c)->type
                                         : (w2l_type){ W2L_TYPE_LONG, 0, 0 };
                    rc = key_append(&key, ty, c >= 0 ? &src[c] : &nul, err);
                }
                if (rc == W2L_OK) rc = w2l__buf_cstr(&key, err);
                const char *kp = (const char *)key.data;
                if (rc == W2L_OK && bsearch(&kp, ks->keys, ks->n, sizeof *ks->keys, cmp_str))
                    deleted = 1;
            }
            if (deleted || rc != W2L_OK) continue;
            for (size_t c = 0; c < nout; c++) {
                const w2l_field *of = w2l_schema_field(out, c);
                if (map[c] < 0) {
                    memset(&row[c], 0, sizeof row[c]);
                    row[c].is_null = 1;
                    for (size_t k = 0; spec && k < spec->nfields && k < t->file->npart; k++)
                        if (spec->fields[k].source_id == of->id &&
                            spec->fields[k].transform.kind == W2L_ICE_T_IDENTITY)
                            row[c] = t->file->partition[k];
                    continue;
                }
                row[c] = src[map[c]];
                w2l_type_id ft = w2l_schema_field(fs, (size_t)map[c])->type.id;
                if (!row[c].is_null && ft == W2L_TYPE_INT && of->type.id == W2L_TYPE_LONG)
                    row[c].v.i64 = src[map[c]].v.i32;
                else if (!row[c].is_null && ft == W2L_TYPE_FLOAT && of->type.id == W2L_TYPE_DOUBLE)
                    row[c].v.f64 = src[map[c]].v.f32;
            }
            s->pos = pos;
            if (fn(ctx, row, nout))
                rc = w2l__fail(err, W2L_CANCELLED, "scan stopped by the callback");
        }
    }
    w2l_buf_release(&key);
    w2l__pq_reader_close(r);
    for (size_t j = 0; cv && j < nneed; j++) w2l__free(cv[need[j]]);
    w2l__free(cv);
    w2l__free(srow);
    w2l__free(need);
    w2l__free(pv);
    w2l__free(ds);
    w2l__free(row);
    w2l__free(map);
    return rc;
}

w2l_rc w2l__ice_scan_read_task(w2l_fileio *io, w2l__ice_scan *scan, size_t i,
                               int (*fn)(void *ctx, const w2l_value *row, size_t n), void *ctx,
                               w2l_error *err)
{
    if (i >= scan->ntasks) return w2l__fail(err, W2L_MISUSE, "scan: no task %zu", i);
    w2l_rc rc = read_task(io, scan, &scan->tasks[i], fn, ctx, err);
    if (rc != W2L_OK && rc != W2L_CANCELLED)
        w2l__error_prefix(err, "scan %s: ", scan->tasks[i].file->path);
    return rc;
}

w2l_rc w2l__ice_scan_read(w2l_fileio *io, w2l__ice_scan *scan,
                          int (*fn)(void *ctx, const w2l_value *row, size_t n), void *ctx,
                          w2l_error *err)
{
    for (size_t i = 0; i < scan->ntasks; i++)
        W2L_TRY(w2l__ice_scan_read_task(io, scan, i, fn, ctx, err));
    return W2L_OK;
}
