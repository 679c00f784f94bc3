/*
 * A compaction brought up to the table's current snapshot before it commits
 * (w2l__ice_compaction_rebase, iceberg.h). Position deletes and deletion vectors committed
 * since its base that name files it rewrote follow their rows into its output: the moves
 * prepare recorded (runs of positions, file to file) give each row's new file and
 * position; a delete file all of whose rows were followed goes with the compaction. In a
 * format version 3 table a vector committed meanwhile for a file the compaction keeps, where
 * the compaction wrote one too, is merged with it (one vector per data file), and a base
 * vector a commit replaced since is gone already.
 */
#include <stdio.h>
#include <stdlib.h>

#include "compaction_int.h"

/* The move holding row pos of file path; NULL: the compaction did not carry that row (it
 * was deleted at the base, or the file was not rewritten). */
static const move *move_find(const w2l__ice_compaction *k, const char *path, int64_t pos)
{
    size_t lo = 0, hi = k->nmoves; /* first move after (path, pos) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const move *x = &k->moves[mid];
        int c = strcmp(x->from, path);
        if (c < 0 || (c == 0 && x->from_pos <= pos)) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    const move *x = &k->moves[lo - 1];
    return strcmp(x->from, path) == 0 && pos < x->from_pos + x->n ? x : NULL;
}

/* A delete committed since the base, moved onto its row's place in an output data file
 * (one of k->data; the files of one group share their partition values' array). */
typedef struct rref {
    const w2l__ice_data_file *df;
    int64_t pos;
} rref;

static int cmp_rref(const void *x, const void *y)
{
    const rref *a = x, *b = y;
    if (a->df->partition != b->df->partition)
        return (uintptr_t)a->df->partition < (uintptr_t)b->df->partition ? -1 : 1;
    if (a->df != b->df) return strcmp(a->df->path, b->df->path);
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

typedef struct outmap { /* an output data file by its path pointer */
    const char *path;
    const w2l__ice_data_file *df;
} outmap;

static int cmp_outmap(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)((const outmap *)x)->path, b = (uintptr_t)((const outmap *)y)->path;
    return a < b ? -1 : a > b;
}

typedef struct rebaser {
    w2l__ice_compaction *k;
    const w2l__ice_pathset *rm;
    outmap *om;
    rref *v;
    size_t n, cap;
    size_t others;            /* rows of the file at hand that name files the compaction keeps */
} rebaser;

/* Position delete (path, pos) committed since the base: when path is a file the compaction
 * rewrote, the row it names is followed to its output (a row the compaction did not carry
 * was deleted at the base already: nothing to do). */
static w2l_rc rebase_one(rebaser *b, const char *path, int64_t pos, w2l_error *err)
{
    if (!w2l__ice_pathset_has(b->rm, path)) {
        b->others++;
        return W2L_OK;
    }
    const move *mv = move_find(b->k, path, pos);
    if (!mv) return W2L_OK;
    outmap key = {mv->to, NULL};
    const outmap *o = bsearch(&key, b->om, b->k->data.n, sizeof *b->om, cmp_outmap);
    if (!o) return w2l__fail(err, W2L_ERROR, "compaction: no output file %s", mv->to);
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        rref *nv = w2l__realloc(b->v, cap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = (rref){o->df, mv->to_pos + (pos - mv->from_pos)};
    return W2L_OK;
}

/* The rows of position delete file (or deletion vector) d that name rewritten files.
 * *consumed: every row of d does (the compaction then removes d, which would name no live
 * file once it commits: a deletion vector must name a live one). */
static w2l_rc rebase_file(rebaser *b, w2l_fileio *io, const w2l__ice_data_file *d, w2l__arena *a,
                          int *consumed, w2l_error *err)
{
    w2l__ice_posref *v;
    size_t n;
    W2L_TRY(w2l__ice_pos_file_read(io, d, a, &v, &n, err));
    w2l_rc rc = W2L_OK;
    b->others = 0;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) rc = rebase_one(b, v[i].path, v[i].pos, err);
    w2l__free(v);
    *consumed = rc == W2L_OK && b->others == 0;
    return rc;
}

/* A format version 3 table's rebased deletes: one deletion vector per output file of
 * b->v[i0..i1) (sorted by file, then position); the outputs are new, so no other vector
 * names them. */
static w2l_rc rebase_write_dvs(rebaser *b, w2l_fileio *io, size_t i0, size_t i1,
                               w2l_error *err)
{
    uint64_t *pos = w2l__malloc((i1 - i0 + 1) * sizeof *pos);
    W2L_NOMEM_IF(!pos, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = i0, j; rc == W2L_OK && i < i1; i = j) {
        const w2l__ice_data_file *df = b->v[i].df;
        size_t k = 0;
        for (j = i; j < i1 && b->v[j].df == df; j++)
            if (!k || pos[k - 1] != (uint64_t)b->v[j].pos) pos[k++] = (uint64_t)b->v[j].pos;
        w2l__ice_data_file out;
        memset(&out, 0, sizeof out);
        out.spec_id = df->spec_id;
        out.npart = df->npart;
        out.partition = df->partition;
        rc = w2l__ice_dv_file_write(io, df->path, df->path, pos, k, &b->k->arena, &out, err);
        if (rc != W2L_OK) break;
        rc = w2l__ice_compaction_push_out(b->k, &out, err);
        if (rc != W2L_OK) {
            w2l_error e2;
            w2l_fileio_remove(io, w2l__ice_local_path(out.path), &e2);
        }
    }
    w2l__free(pos);
    return rc;
}

/* Writes the rebased deletes b->v (sorted), one position delete file per output group. */
static w2l_rc rebase_write(rebaser *b, w2l_fileio *io, const w2l__ice_meta *m, w2l_error *err)
{
    w2l__ice_compaction *k = b->k;
    w2l_rc rc = W2L_OK;
    w2l__ice_posref *pd = b->n ? w2l__malloc(b->n * sizeof *pd) : NULL;
    if (b->n && !pd) return w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i0 = 0, i1; rc == W2L_OK && i0 < b->n; i0 = i1) {
        const w2l__ice_data_file *df = b->v[i0].df;
        for (i1 = i0; i1 < b->n && b->v[i1].df->partition == df->partition; i1++) {}
        if (m->format_version >= 3) {
            rc = rebase_write_dvs(b, io, i0, i1, err);
            continue;
        }
        for (size_t i = i0; i < i1; i++)
            pd[i - i0] = (w2l__ice_posref){ b->v[i].df->path, b->v[i].pos };
        const w2l__ice_spec *spec = w2l__ice_meta_spec(m, df->spec_id);
        if (!spec) {
            rc = w2l__fail(err, W2L_CORRUPT, "compaction: %s has an unknown spec %d", df->path,
                           (int)df->spec_id);
            break;
        }
        char *dir = w2l__ice_partition_path(spec, df->partition);
        w2l__ice_table t;
        memset(&t, 0, sizeof t);
        t.meta = (w2l__ice_meta *)m;
        char *path = dir ? w2l__ice_new_data_path(&t, dir, "compacted-pos-delete") : NULL;
        w2l__free(dir);
        if (!path) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        w2l__ice_data_file out;
        rc = w2l__ice_pos_file_write(io, path, &k->pq, pd, i1 - i0, &k->arena, &out, err);
        if (rc == W2L_OK) {
            out.spec_id = df->spec_id;
            out.npart = df->npart;
            out.partition = df->partition;
            rc = w2l__ice_compaction_push_out(k, &out, err);
            if (rc != W2L_OK) {
                w2l_error e2;
                w2l_fileio_remove(io, w2l__ice_local_path(path), &e2);
            }
        }
        w2l__free(path);
    }
    w2l__free(pd);
    return rc;
}

/* A format version 3 table holds one deletion vector per data file: a vector committed
 * since the base for a file the compaction keeps, where the compaction wrote one too (a
 * large file whose deletes it gathered), is merged with the compaction's (the union, in a
 * new vector of the compaction) and removed by it; the compaction's own vector is left out
 * (superseded[j]); d's path is added to extra (in k's arena). */
static w2l_rc merge_kept_dv(w2l__ice_compaction *k, w2l_fileio *io, const w2l__ice_data_file *d,
                            unsigned char *superseded, const char **extra, size_t *nextra,
                            w2l_error *err)
{
    size_t j = 0;
    for (; j < k->ndels_own; j++) {
        const w2l__ice_data_file *o = &k->dels.v[j];
        if (w2l__ice_is_dv(o) && !superseded[j] && o->referenced_data_file &&
            !strcmp(o->referenced_data_file, d->referenced_data_file))
            break;
    }
    if (j == k->ndels_own) return W2L_OK;
    uint64_t *x = NULL, *y = NULL, *u = NULL;
    size_t nx = 0, ny = 0, nu = 0;
    w2l_rc rc = w2l__ice_dv_read(io, &k->dels.v[j], &x, &nx, err);
    if (rc == W2L_OK) rc = w2l__ice_dv_read(io, d, &y, &ny, err);
    if (rc == W2L_OK) rc = w2l__roaring64_union(x, nx, y, ny, &u, &nu, err);
    w2l__ice_data_file out;
    memset(&out, 0, sizeof out);
    out.spec_id = k->dels.v[j].spec_id;
    out.npart = k->dels.v[j].npart;
    out.partition = k->dels.v[j].partition;
    if (rc == W2L_OK)
        rc = w2l__ice_dv_file_write(io, d->referenced_data_file, d->referenced_data_file, u, nu,
                                    &k->arena, &out, err);
    if (rc == W2L_OK) {
        rc = w2l__ice_compaction_push_out(k, &out, err);
        if (rc != W2L_OK) {
            w2l_error e2;
            w2l_fileio_remove(io, w2l__ice_local_path(out.path), &e2);
        }
    }
    const char *p = rc == W2L_OK ? w2l__arena_strndup(&k->arena, d->path, strlen(d->path)) : NULL;
    if (rc == W2L_OK && !p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        superseded[j] = 1;
        extra[(*nextra)++] = p;
    }
    w2l__free(x);
    w2l__free(y);
    w2l__free(u);
    return rc;
}

w2l_rc w2l__ice_compaction_rebase(w2l_fileio *io, const w2l__ice_meta *m, w2l__ice_compaction *k,
                                  int *changed, w2l_error *err)
{
    /* what an earlier attempt rebased goes: the deletes since the base are read again */
    *changed = k->dels.n > k->ndels_own || k->ncdels != k->dels.n || k->ncremoved != k->nremoved;
    for (size_t i = k->ndels_own; i < k->dels.n; i++) {
        w2l_error e2;
        w2l_fileio_remove(io, w2l__ice_local_path(k->dels.v[i].path), &e2);
    }
    k->dels.n = k->ndels_own;
    k->st.deletes_out -= k->rebased_rows;
    k->rebased_rows = 0;
    W2L_TRY(w2l__ice_compaction_lists(k, NULL, NULL, NULL, 0, err));
    const w2l__ice_snapshot *cur =
        m->current_snapshot_id != -1 ? w2l__ice_meta_snapshot(m, m->current_snapshot_id) : NULL;
    if (!cur) return w2l__fail(err, W2L_CONFLICT, "compaction: the table has no snapshot any more");
    if (cur->snapshot_id == k->base_id) return W2L_OK;
    w2l__ice_pathset rm = {0}, live = {0};
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < k->nremoved; i++)
        if (w2l__ice_pathset_add(&rm, k->removed[i]) < 0)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    rebaser b = {k, &rm, w2l__malloc((k->data.n + 1) * sizeof *b.om), NULL, 0, 0, 0};
    unsigned char *superseded = w2l__calloc(k->ndels_own + 1, 1);
    unsigned char *gone = w2l__calloc(k->nremoved + 1, 1);
    const char **extra = NULL;
    size_t nextra = 0, capextra = 0;
    if (rc == W2L_OK && (!b.om || !superseded || !gone))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < k->data.n; i++)
        b.om[i] = (outmap){k->data.v[i].path, &k->data.v[i]};
    if (rc == W2L_OK) qsort(b.om, k->data.n, sizeof *b.om, cmp_outmap);
    w2l__arena a;
    w2l__arena_init(&a, 1 << 14);
    w2l__ice_manifest *ml = NULL;
    size_t n = 0;
    if (rc == W2L_OK)
        rc = w2l__ice_manifest_list_read(io, w2l__ice_local_path(cur->manifest_list), &a, &ml, &n,
                                         err);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        if (ml[i].content != W2L_ICE_MANIFEST_DELETES) continue;
        w2l__ice_entry *e;
        size_t ne;
        rc = w2l__ice_manifest_read(io, &ml[i], w2l__ice_meta_spec(m, ml[i].spec_id), &a, &e, &ne,
                                    err);
        for (size_t q = 0; rc == W2L_OK && q < ne; q++) {
            const w2l__ice_data_file *d = &e[q].file;
            if (e[q].status == W2L_ICE_DELETED) continue;
            if (w2l__ice_pathset_add(&live, d->path) < 0) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            if (d->content != W2L_ICE_POS_DELETES || e[q].seq <= k->base_seq) continue;
            int kept =
                d->referenced_data_file && !w2l__ice_pathset_has(&rm, d->referenced_data_file);
            if (kept && !w2l__ice_is_dv(d)) continue;
            if (nextra == capextra) { /* room for d's path */
                capextra = capextra ? capextra * 2 : 16;
                const char **nv = w2l__realloc(extra, capextra * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                extra = nv;
            }
            if (kept) {
                rc = merge_kept_dv(k, io, d, superseded, extra, &nextra, err);
                continue;
            }
            int consumed = 0;
            rc = rebase_file(&b, io, d, &a, &consumed, err);
            if (rc == W2L_OK && consumed) {
                const char *p = w2l__arena_strndup(&k->arena, d->path, strlen(d->path));
                if (!p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                else extra[nextra++] = p;
            }
        }
    }
    if (rc == W2L_OK && b.n) {
        qsort(b.v, b.n, sizeof *b.v, cmp_rref);
        rc = rebase_write(&b, io, m, err);
        k->rebased_rows = rc == W2L_OK ? (int64_t)b.n : 0;
        k->st.deletes_out += k->rebased_rows;
    }
    /* a delete file of the base that a commit since removed (a deletion vector replaced by
     * its union with newer deletes) is gone already */
    for (size_t i = 0; rc == W2L_OK && i < k->nremoved; i++)
        gone[i] = k->removed_del[i] && !w2l__ice_pathset_has(&live, k->removed[i]);
    if (rc == W2L_OK) rc = w2l__ice_compaction_lists(k, superseded, gone, extra, nextra, err);
    if (rc == W2L_OK)
        *changed |= k->dels.n > k->ndels_own || k->ncdels != k->dels.n ||
                    k->ncremoved != k->nremoved;
    w2l__free(extra);
    w2l__free(superseded);
    w2l__free(gone);
    w2l__free(b.v);
    w2l__free(b.om);
    w2l__ice_pathset_free(&rm);
    w2l__ice_pathset_free(&live);
    w2l__arena_release(&a);
    return rc;
}
