/*
 * A format version 3 table's deletes as deletion vectors (Iceberg spec "Deletion Vectors":
 * a position delete of a v3 table is a deletion vector, and a data file has at most one;
 * a writer adding deletes to a file that has one writes the union and removes the old one
 * in the same commit, and folds position delete files of that data file in likewise).
 *
 * Writers keep writing position-delete Parquet files (the checkpoint state records them as
 * it always did); the commit turns them into deletion vectors against the table as it is
 * at that attempt (w2l__ice_dv_merge), so a commit retried on a newer base (another
 * writer, a compaction) merges with what is live then, and a replay after a crash does the
 * same as the first try: the merge reads only the table and the change's files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"

w2l_rc w2l__ice_dv_file_write(w2l_fileio *io, const char *beside, const char *referenced,
                              const uint64_t *pos, size_t n, w2l__arena *a,
                              w2l__ice_data_file *df, w2l_error *err)
{
    const char *slash = strrchr(beside, '/');
    size_t dl = slash ? (size_t)(slash - beside) : 0;
    char uuid[37];
    w2l__ice_uuid(uuid);
    char *path = w2l__asprintf("%.*s/dv-%s.puffin", (int)dl, beside, uuid);
    W2L_NOMEM_IF(!path, err);
    w2l__puffin_blob pb;
    w2l_rc rc = w2l__puffin_dv_write(io, path, referenced, pos, n, &pb, err);
    char *ap = rc == W2L_OK ? w2l__arena_strndup(a, path, strlen(path)) : NULL;
    char *ref = ap ? w2l__arena_strndup(a, referenced, strlen(referenced)) : NULL;
    if (rc == W2L_OK && (!ap || !ref)) {
        w2l_error e2;
        w2l_fileio_remove(io, w2l__ice_local_path(path), &e2);
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__free(path);
    if (rc != W2L_OK) return rc;
    int32_t spec_id = df->spec_id;
    size_t npart = df->npart;
    w2l_value *part = df->partition;
    memset(df, 0, sizeof *df);
    df->content = W2L_ICE_POS_DELETES;
    df->path = ap;
    df->format = "PUFFIN";
    df->spec_id = spec_id;
    df->npart = npart;
    df->partition = part;
    df->record_count = (int64_t)n;
    df->file_size = pb.file_size;
    df->referenced_data_file = ref;
    df->has_content_range = 1;
    df->content_offset = pb.offset;
    df->content_size = pb.length;
    return W2L_OK;
}

typedef struct target {   /* one data file the change deletes rows of */
    const char *path;
    const w2l__ice_data_file *src; /* a delete file of the change naming it (its partition) */
    uint64_t *pos;        /* the union so far, sorted */
    size_t n;
} target;

static int target_cmp(const void *a, const void *b)
{
    return strcmp(((const target *)a)->path, ((const target *)b)->path);
}

static target *target_find(target *v, size_t n, const char *path)
{
    target key = {path, NULL, NULL, 0};
    return bsearch(&key, v, n, sizeof *v, target_cmp);
}

/* Adds the sorted positions p[0..n) to t. */
static w2l_rc target_add(target *t, const uint64_t *p, size_t n, w2l_error *err)
{
    uint64_t *u;
    size_t nu;
    W2L_TRY(w2l__roaring64_union(t->pos, t->n, p, n, &u, &nu, err));
    w2l__free(t->pos);
    t->pos = u;
    t->n = nu;
    return W2L_OK;
}

/* Adds the rows of refs[0..n) (any order; sorted here) that name a target. */
static w2l_rc targets_add_refs(target *v, size_t nv, w2l__ice_posref *refs, size_t n,
                               w2l_error *err)
{
    if (!n) return W2L_OK;
    qsort(refs, n, sizeof *refs, w2l__ice_posref_cmp);
    uint64_t *buf = w2l__malloc((n + 1) * sizeof *buf);
    W2L_NOMEM_IF(!buf, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0, j; rc == W2L_OK && i < n; i = j) {
        for (j = i + 1; j < n && !strcmp(refs[j].path, refs[i].path);) j++;
        target *t = target_find(v, nv, refs[i].path);
        if (!t) continue;
        size_t k = 0;
        for (size_t x = i; x < j; x++)
            if (refs[x].pos >= 0 && (!k || buf[k - 1] != (uint64_t)refs[x].pos))
                buf[k++] = (uint64_t)refs[x].pos;
        rc = target_add(t, buf, k, err);
    }
    w2l__free(buf);
    return rc;
}

/* Whether delete file d (live in the table) may name rows of a target: a deletion vector or
 * a single-file position delete naming one, or a position delete file of several files. */
static target *names_target(target *v, size_t nv, const w2l__ice_data_file *d, int *several)
{
    *several = 0;
    if (d->content != W2L_ICE_POS_DELETES) return NULL;
    if (d->referenced_data_file) return target_find(v, nv, d->referenced_data_file);
    *several = 1;
    return NULL;
}

w2l_rc w2l__ice_dv_merge(w2l_fileio *io, const w2l__ice_meta *m, const w2l__ice_data_file *dels,
                         size_t ndels, int with_table, w2l__arena *a, w2l__ice_dv_plan *out,
                         w2l_error *err)
{
    memset(out, 0, sizeof *out);
    w2l__arena tmp;
    w2l__arena_init(&tmp, 1 << 14);
    target *tv = NULL;
    size_t nt = 0, cap = 0;
    w2l__ice_posref *refs = NULL;
    size_t nrefs = 0;
    w2l_rc rc = W2L_OK;
    /* the change's rows, and the data files they name (each with a delete file of the
     * change naming it: the partition its deletion vector goes to) */
    w2l__ice_posref *all = NULL;
    const w2l__ice_data_file **from = NULL;
    size_t nall = 0, acap = 0;
    out->consumed = w2l__arena_alloc(a, (ndels + 1) * sizeof *out->consumed);
    if (!out->consumed) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t d = 0; rc == W2L_OK && d < ndels; d++) {
        if (dels[d].content != W2L_ICE_POS_DELETES) continue;
        w2l__free(refs);
        refs = NULL;
        rc = w2l__ice_pos_file_read(io, &dels[d], &tmp, &refs, &nrefs, err);
        if (rc == W2L_OK && nall + nrefs > acap) {
            acap = W2L_MAX(2 * acap, nall + nrefs + 16);
            w2l__ice_posref *na = w2l__realloc(all, acap * sizeof *na);
            if (na) all = na;
            const w2l__ice_data_file **nf = na ? w2l__realloc(from, acap * sizeof *nf) : NULL;
            if (nf) from = nf;
            if (!na || !nf) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        for (size_t i = 0; rc == W2L_OK && i < nrefs; i++) {
            from[nall] = &dels[d];
            all[nall++] = refs[i];
        }
        if (rc == W2L_OK && !w2l__ice_is_dv(&dels[d]))
            out->consumed[out->nconsumed++] = dels[d].path;
    }
    for (size_t i = 0; rc == W2L_OK && i < nall; i++) {
        if (nt && !strcmp(tv[nt - 1].path, all[i].path)) continue;
        int seen = 0;
        for (size_t k = nt; k > 0 && !seen && nt - k < 8; k--)
            seen = !strcmp(tv[k - 1].path, all[i].path);
        if (seen) continue;
        if (nt == cap) {
            cap = cap ? cap * 2 : 16;
            target *nv = w2l__realloc(tv, cap * sizeof *nv);
            if (!nv) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            tv = nv;
        }
        tv[nt++] = (target){all[i].path, from[i], NULL, 0};
    }
    /* distinct targets by path (the scan above drops only near repeats) */
    if (rc == W2L_OK && nt) {
        qsort(tv, nt, sizeof *tv, target_cmp);
        size_t w = 0;
        for (size_t i = 0; i < nt; i++)
            if (!w || strcmp(tv[w - 1].path, tv[i].path) != 0) tv[w++] = tv[i];
        nt = w;
    }
    if (rc == W2L_OK) rc = targets_add_refs(tv, nt, all, nall, err);
    w2l__free(from);
    out->deletes = rc == W2L_OK ? w2l__arena_alloc(a, (ndels + nt + 1) * sizeof *out->deletes)
                                : NULL;
    if (rc == W2L_OK && !out->deletes) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t d = 0; rc == W2L_OK && d < ndels; d++) /* equality deletes stay as they are */
        if (dels[d].content != W2L_ICE_POS_DELETES) out->deletes[out->ndeletes++] = dels[d];
    /* the table's live deletes of those files: merged in, and the one-file ones replaced */
    const w2l__ice_snapshot *cur = with_table && m->current_snapshot_id != -1
                                       ? w2l__ice_meta_snapshot(m, m->current_snapshot_id)
                                       : NULL;
    w2l__ice_manifest *ml = NULL;
    size_t nml = 0, rcap = 0;
    if (rc == W2L_OK && cur && nt)
        rc = w2l__ice_manifest_list_read(io, cur->manifest_list, &tmp, &ml, &nml, err);
    for (size_t i = 0; rc == W2L_OK && i < nml; i++) {
        if (ml[i].content != W2L_ICE_MANIFEST_DELETES ||
            ml[i].added_files + ml[i].existing_files == 0)
            continue;
        w2l__ice_entry *e;
        size_t ne;
        rc = w2l__ice_manifest_read(io, &ml[i], w2l__ice_meta_spec(m, ml[i].spec_id), &tmp, &e, &ne,
                                    err);
        for (size_t q = 0; rc == W2L_OK && q < ne; q++) {
            if (e[q].status == W2L_ICE_DELETED) continue;
            int several;
            target *t = names_target(tv, nt, &e[q].file, &several);
            if (!t && !several) continue;
            w2l__free(refs);
            refs = NULL;
            rc = w2l__ice_pos_file_read(io, &e[q].file, &tmp, &refs, &nrefs, err);
            if (rc == W2L_OK) rc = targets_add_refs(tv, nt, refs, nrefs, err);
            if (rc != W2L_OK || !t) continue; /* a file of several data files' rows stays */
            if (out->nremoved == rcap) {
                rcap = rcap ? rcap * 2 : 16;
                const char **nv = w2l__arena_alloc(a, rcap * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                if (out->nremoved) memcpy(nv, out->removed, out->nremoved * sizeof *nv);
                out->removed = nv;
            }
            const char *p = w2l__arena_strndup(a, e[q].file.path, strlen(e[q].file.path));
            if (!p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else out->removed[out->nremoved++] = p;
        }
    }
    /* one deletion vector per data file */
    out->written = w2l__arena_alloc(a, (nt + 1) * sizeof *out->written);
    if (rc == W2L_OK && !out->written) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nt; i++) {
        w2l__ice_data_file df = *tv[i].src;
        rc = w2l__ice_dv_file_write(io, tv[i].src->path, tv[i].path, tv[i].pos, tv[i].n, a, &df,
                                    err);
        if (rc != W2L_OK) break;
        out->written[out->nwritten++] = df.path;
        out->deletes[out->ndeletes++] = df;
    }
    for (size_t i = 0; i < nt; i++) w2l__free(tv[i].pos);
    w2l__free(tv);
    w2l__free(refs);
    w2l__free(all);
    w2l__arena_release(&tmp);
    if (rc != W2L_OK) {
        w2l__ice_dv_plan_abandon(io, out);
        w2l__error_prefix(err, "deletion vectors: ");
    }
    return rc;
}

void w2l__ice_dv_plan_abandon(w2l_fileio *io, w2l__ice_dv_plan *p)
{
    w2l_error e2;
    for (size_t i = 0; i < p->nwritten; i++)
        w2l_fileio_remove(io, w2l__ice_local_path(p->written[i]), &e2);
    p->nwritten = 0;
}
