/*
 * Table maintenance (w2l-design(7) section 10): what keeps a table that takes a commit every few
 * seconds healthy for months. Manifest merging happens in every commit (snapshot.c); this
 * file holds the three actions that run apart from commits:
 *
 *   expiry      which snapshots go (the table's history.expire.* properties, else the
 *               policy), and after the EXPIRE commit, which files only they reached:
 *               every manifest list, manifest, data and delete file that no retained
 *               snapshot reaches. Reachability is computed from what remains, so a file is
 *               removed only when no retained snapshot lists it as live.
 *   compaction  from a base snapshot (sequence number n), one partition of one spec after
 *               another: small data files and files with many deleted rows are rewritten
 *               with every delete applied into files of that partition, large files with a
 *               few deleted rows get their positions in one position delete file of that
 *               partition (format version 3: one deletion vector per such file, the union
 *               of all its deletes), and a delete file of the base goes once every data file it
 *               applies to is dealt with. The new files keep data sequence number n
 *               (Iceberg's starting-sequence-number rule), so equality deletes committed
 *               after the base (n+1 and later) still apply to them; nothing older than the
 *               compaction needs an equality delete any more. Before it commits,
 *               compact_rebase.c brings it up to the table's current snapshot.
 *   orphans     files under the table's data/ and metadata/ that no snapshot and no
 *               metadata file reaches, older than a safety age, and that the caller does
 *               not hold (the files of sealed, uncommitted checkpoints).
 *
 * Nothing here commits: the callers (the pipeline's committers, the owners of the tables,
 * and w2l_maintain) commit the changes these functions prepare.
 */
#include <stdio.h>
#include <stdlib.h>

#include "compaction_int.h"
#include "../parquet/parquet.h"

void w2l__ice_policy_default(w2l__ice_policy *p)
{
    memset(p, 0, sizeof *p);
    p->max_snapshot_age_ms = 3600 * 1000LL;
    p->min_snapshots = 10;
    p->target_file_bytes = 128LL << 20;
    p->compact_small_files = 16;
    p->compact_delete_files = 16;
    p->compact_delete_ratio = 0.10;
    p->rewrite_delete_ratio = 0.20;
    p->orphan_age_ms = 86400 * 1000LL;
}

/* ---- a set of paths (open addressing; the strings are borrowed) ---- */

static uint64_t path_hash(const char *p)
{
    p = w2l__ice_local_path(p);
    return w2l__hash64(p, strlen(p), 0x70617468);
}

int w2l__ice_pathset_has(const w2l__ice_pathset *s, const char *p)
{
    if (!s->cap) return 0;
    const char *lp = w2l__ice_local_path(p);
    for (size_t i = path_hash(p) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->v[i]) return 0;
        if (strcmp(w2l__ice_local_path(s->v[i]), lp) == 0) return 1;
    }
}

int w2l__ice_pathset_add(w2l__ice_pathset *s, const char *p)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        const char **nv = w2l__calloc(cap, sizeof *nv);
        if (!nv) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i])
                for (size_t k = path_hash(s->v[i]) & (cap - 1);; k = (k + 1) & (cap - 1))
                    if (!nv[k]) {
                        nv[k] = s->v[i];
                        break;
                    }
        w2l__free(s->v);
        s->v = nv;
        s->cap = cap;
    }
    const char *lp = w2l__ice_local_path(p);
    for (size_t i = path_hash(p) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->v[i]) {
            s->v[i] = p;
            s->n++;
            return 1;
        }
        if (strcmp(w2l__ice_local_path(s->v[i]), lp) == 0) return 0;
    }
}

void w2l__ice_pathset_free(w2l__ice_pathset *s)
{
    w2l__free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- policy from the table's properties ---- */

static int64_t prop_i64(const w2l__ice_meta *m, const char *key, int64_t dflt)
{
    const char *v = w2l__ice_props_get(&m->props, key);
    char *end;
    long long x = v ? strtoll(v, &end, 10) : -1;
    return v && end != v && !*end && x >= 0 ? (int64_t)x : dflt;
}

/* ================================================================= expiry ======== */

typedef struct retain_ctx {
    const w2l__ice_meta *m;
    unsigned char *keep;
    int64_t min_keep, cutoff;
    int seen_w2l;
} retain_ctx;

/* The current history: the newest min_keep, those younger than the cutoff, and every one
 * down to the newest that carries a w2l checkpoint (restore reads it there). */
static int keep_step(void *ctx, const w2l__ice_snapshot *s, size_t depth)
{
    retain_ctx *k = ctx;
    size_t i = (size_t)(s - k->m->snapshots);
    k->keep[i] = (int64_t)depth < k->min_keep || s->timestamp_ms >= k->cutoff || !k->seen_w2l;
    k->seen_w2l |= w2l__ice_props_get(&s->summary, "w2l.checkpoint-id") != NULL;
    return 0;
}

w2l_rc w2l__ice_expire_select(const w2l__ice_meta *m, const w2l__ice_policy *p, int64_t now_ms,
                              int64_t **ids, size_t *n, w2l_error *err)
{
    *ids = NULL;
    *n = 0;
    if (!m->nsnapshots) return W2L_OK;
    const int64_t max_age =
        prop_i64(m, "history.expire.max-snapshot-age-ms", p->max_snapshot_age_ms);
    const int64_t min_keep =
        W2L_MAX(1, prop_i64(m, "history.expire.min-snapshots-to-keep", p->min_snapshots));
    const int64_t cutoff = now_ms - max_age;
    unsigned char *keep = w2l__calloc(m->nsnapshots, 1);
    int64_t *out = w2l__malloc(m->nsnapshots * sizeof *out);
    if (!keep || !out) {
        w2l__free(keep);
        w2l__free(out);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    /* snapshots off the current history: by age alone */
    for (size_t i = 0; i < m->nsnapshots; i++) keep[i] = m->snapshots[i].timestamp_ms >= cutoff;
    retain_ctx k = {m, keep, min_keep, cutoff, 1};
    for (size_t i = 0; i < m->nsnapshots && k.seen_w2l; i++)
        if (w2l__ice_props_get(&m->snapshots[i].summary, "w2l.checkpoint-id")) k.seen_w2l = 0;
    w2l_rc rc = w2l__ice_meta_ancestry(m, keep_step, &k, err);
    if (rc != W2L_OK) {
        w2l__free(keep);
        w2l__free(out);
        return rc;
    }
    for (size_t r = 0; r < m->nrefs; r++)
        for (size_t i = 0; i < m->nsnapshots; i++)
            if (m->snapshots[i].snapshot_id == m->refs[r].snapshot_id) keep[i] = 1;
    for (size_t i = 0; i < m->nsnapshots; i++)
        if (!keep[i] && m->snapshots[i].snapshot_id != m->current_snapshot_id)
            out[(*n)++] = m->snapshots[i].snapshot_id;
    w2l__free(keep);
    if (!*n) {
        w2l__free(out);
        return W2L_OK;
    }
    *ids = out;
    return W2L_OK;
}

/* Reads the manifest list at path into a; a missing list gives none. */
static w2l_rc read_list(w2l_fileio *io, const char *path, w2l__arena *a, w2l__ice_manifest **ml,
                        size_t *n, w2l_error *err)
{
    w2l_error e2;
    w2l_rc rc = w2l__ice_manifest_list_read(io, w2l__ice_local_path(path), a, ml, n, &e2);
    if (rc == W2L_NOTFOUND) {
        *ml = NULL;
        *n = 0;
        return W2L_OK;
    }
    if (rc != W2L_OK && err) *err = e2;
    return rc;
}

/* Files to remove, sent in batches (one DeleteObjects request on an object store). The
 * paths are borrowed until the next flush. */
#define RM_BATCH 1000
typedef struct remover {
    w2l_fileio *io;
    int dry_run;
    w2l__ice_maint_stats *st;
    const char *paths[RM_BATCH];
    int64_t sizes[RM_BATCH];
    size_t n;
} remover;

static w2l_rc rm_flush(remover *r, w2l_error *err)
{
    if (r->n && !r->dry_run) {
        w2l_rc rc = w2l_fileio_remove_many(r->io, r->paths, r->n, err);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) {
            r->n = 0;
            return rc;
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        r->st->files_removed++;
        r->st->bytes_removed += r->sizes[i] > 0 ? r->sizes[i] : 0;
    }
    r->n = 0;
    return W2L_OK;
}

static w2l_rc rm_add(remover *r, const char *path, int64_t size, w2l_error *err)
{
    r->paths[r->n] = w2l__ice_local_path(path);
    r->sizes[r->n++] = size;
    return r->n == RM_BATCH ? rm_flush(r, err) : W2L_OK;
}

w2l_rc w2l__ice_expire_cleanup(w2l_fileio *io, const w2l__ice_meta *after, char *const *lists,
                               size_t nlists, int dry_run, w2l__ice_maint_stats *st,
                               w2l_error *err)
{
    int64_t t0 = w2l__now_ms();
    w2l__arena a;
    w2l__arena_init(&a, 1 << 16);
    w2l__ice_pathset kept_m = {0}, live = {0}, gone_m = {0}, cand = {0};
    w2l_rc rc = W2L_OK;
    /* manifests the retained snapshots list */
    w2l__ice_manifest **rm = NULL;
    size_t nrm = 0, caprm = 0;
    for (size_t i = 0; rc == W2L_OK && i < after->nsnapshots; i++) {
        w2l__ice_manifest *ml;
        size_t n;
        rc = read_list(io, after->snapshots[i].manifest_list, &a, &ml, &n, err);
        for (size_t k = 0; rc == W2L_OK && k < n; k++) {
            int added = w2l__ice_pathset_add(&kept_m, ml[k].path);
            if (added < 0) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            if (added <= 0) continue;
            if (nrm == caprm) {
                caprm = caprm ? caprm * 2 : 64;
                w2l__ice_manifest **nv = w2l__realloc(rm, caprm * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                rm = nv;
            }
            rm[nrm++] = &ml[k];
        }
    }
    /* manifests only the expired snapshots list, and the files they name */
    typedef struct cfile {
        const char *path;
        int64_t size;
    } cfile;
    cfile *cf = NULL;
    size_t ncf = 0, capcf = 0;
    w2l__ice_manifest *gm = NULL;
    size_t ngm = 0, capgm = 0;
    for (size_t i = 0; rc == W2L_OK && i < nlists; i++) {
        w2l__ice_manifest *ml;
        size_t n;
        rc = read_list(io, lists[i], &a, &ml, &n, err);
        for (size_t k = 0; rc == W2L_OK && k < n; k++) {
            if (w2l__ice_pathset_has(&kept_m, ml[k].path)) continue;
            int added = w2l__ice_pathset_add(&gone_m, ml[k].path);
            if (added < 0) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            if (added <= 0) continue;
            if (ngm == capgm) {
                capgm = capgm ? capgm * 2 : 64;
                w2l__ice_manifest *nv = w2l__realloc(gm, capgm * sizeof *nv);
                if (!nv) {
                    rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    break;
                }
                gm = nv;
            }
            gm[ngm++] = ml[k];
            w2l__ice_entry *e;
            size_t ne;
            w2l_error e2;
            w2l_rc r2 = w2l__ice_manifest_read(io, &ml[k], w2l__ice_meta_spec(after, ml[k].spec_id),
                                               &a, &e, &ne, &e2);
            if (r2 == W2L_NOTFOUND) continue; /* removed by an earlier, interrupted cleanup */
            if (r2 != W2L_OK) {
                rc = r2;
                if (err) *err = e2;
                break;
            }
            for (size_t q = 0; rc == W2L_OK && q < ne; q++) {
                int ad = w2l__ice_pathset_add(&cand, e[q].file.path);
                if (ad < 0) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                if (ad <= 0) continue;
                if (ncf == capcf) {
                    capcf = capcf ? capcf * 2 : 256;
                    cfile *nv = w2l__realloc(cf, capcf * sizeof *nv);
                    if (!nv) {
                        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                        break;
                    }
                    cf = nv;
                }
                cf[ncf++] = (cfile){e[q].file.path, e[q].file.file_size};
            }
        }
    }
    /* files the retained snapshots still hold live */
    for (size_t i = 0; rc == W2L_OK && ncf && i < nrm; i++) {
        w2l__ice_entry *e;
        size_t ne;
        rc = w2l__ice_manifest_read(io, rm[i], w2l__ice_meta_spec(after, rm[i]->spec_id), &a, &e,
                                    &ne, err);
        for (size_t q = 0; rc == W2L_OK && q < ne; q++)
            if (e[q].status != W2L_ICE_DELETED && w2l__ice_pathset_add(&live, e[q].file.path) < 0)
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    /* data and delete files first, then the manifests, then the lists: an interruption
     * leaves unreachable files for orphan removal, never a reachable manifest without its
     * files */
    remover *r = rc == W2L_OK ? w2l__calloc(1, sizeof *r) : NULL;
    if (rc == W2L_OK && !r) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (r) *r = (remover){ .io = io, .dry_run = dry_run, .st = st };
    for (size_t i = 0; rc == W2L_OK && i < ncf; i++)
        if (!w2l__ice_pathset_has(&live, cf[i].path)) rc = rm_add(r, cf[i].path, cf[i].size, err);
    if (rc == W2L_OK) rc = rm_flush(r, err);
    for (size_t i = 0; rc == W2L_OK && i < ngm; i++) rc = rm_add(r, gm[i].path, gm[i].length, err);
    if (rc == W2L_OK) rc = rm_flush(r, err);
    for (size_t i = 0; rc == W2L_OK && i < nlists; i++)
        if (!w2l__ice_pathset_has(&kept_m, lists[i])) rc = rm_add(r, lists[i], 0, err);
    if (rc == W2L_OK) rc = rm_flush(r, err);
    w2l__free(r);
    w2l__free(cf);
    w2l__free(gm);
    w2l__free(rm);
    w2l__ice_pathset_free(&kept_m);
    w2l__ice_pathset_free(&live);
    w2l__ice_pathset_free(&gone_m);
    w2l__ice_pathset_free(&cand);
    w2l__arena_release(&a);
    st->ms += w2l__now_ms() - t0;
    return rc;
}

/* ============================================================= compaction ======== */

static int64_t sum_i64(const w2l__ice_props *p, const char *key)
{
    const char *v = w2l__ice_props_get(p, key);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* What the snapshots since the last compaction added, along the current history. */
typedef struct since_ctx {
    int64_t added, added_deletes;
    int reached_replace;
} since_ctx;

static int since_step(void *ctx, const w2l__ice_snapshot *x, size_t depth)
{
    (void)depth;
    since_ctx *c = ctx;
    const char *op = w2l__ice_props_get(&x->summary, "operation");
    if (op && strcmp(op, "replace") == 0) return c->reached_replace = 1;
    c->added += sum_i64(&x->summary, "added-data-files");
    c->added_deletes += sum_i64(&x->summary, "added-delete-files");
    return 0;
}

int w2l__ice_compact_due(const w2l__ice_meta *m, const w2l__ice_policy *p)
{
    const w2l__ice_snapshot *cur =
        m->current_snapshot_id != -1 ? w2l__ice_meta_snapshot(m, m->current_snapshot_id) : NULL;
    if (!cur) return 0;
    const w2l__ice_props *s = &cur->summary;
    since_ctx c = {0, 0, 0};
    if (w2l__ice_meta_ancestry(m, since_step, &c, NULL) != W2L_OK) return 0;
    /* delete files added since the last compaction: the position delete files a compaction
     * leaves (one per partition, for large files with few deleted rows) do not count, or a
     * partitioned table would be due forever */
    int64_t deletes = c.reached_replace ? c.added_deletes : sum_i64(s, "total-delete-files");
    if (deletes >= p->compact_delete_files) return 1;
    int64_t records = sum_i64(s, "total-records");
    int64_t deleted = sum_i64(s, "total-equality-deletes") + sum_i64(s, "total-position-deletes");
    /* the share of deleted rows matters once there are enough of them to slow a read */
    if (p->compact_delete_ratio > 0 && deleted >= W2L_ICE_COMPACT_MIN_DELETES &&
        (double)deleted >= p->compact_delete_ratio * (double)records)
        return 1;
    /* small files: the data files added since the last compaction (its output is at most a
     * few files) */
    int64_t small = c.reached_replace ? c.added : W2L_MAX(c.added, sum_i64(s, "total-data-files"));
    return small >= p->compact_small_files && sum_i64(s, "total-data-files") >= 2;
}

static w2l_rc move_add(w2l__ice_compaction *k, const char *from, int64_t from_pos,
                       const char *to, int64_t to_pos, w2l_error *err)
{
    move *l = k->nmoves ? &k->moves[k->nmoves - 1] : NULL;
    if (l && l->from == from && l->to == to && l->from_pos + l->n == from_pos &&
        l->to_pos + l->n == to_pos) {
        l->n++;
        return W2L_OK;
    }
    if (k->nmoves == k->capmoves) {
        size_t cap = k->capmoves ? k->capmoves * 2 : 64;
        move *nv = w2l__realloc(k->moves, cap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        k->moves = nv;
        k->capmoves = cap;
    }
    k->moves[k->nmoves++] = (move){from, to, from_pos, to_pos, 1};
    return W2L_OK;
}

static int cmp_move(const void *x, const void *y)
{
    const move *a = x, *b = y;
    int c = strcmp(a->from, b->from);
    if (c) return c;
    return a->from_pos < b->from_pos ? -1 : a->from_pos > b->from_pos;
}

w2l_rc w2l__ice_compaction_push_out(w2l__ice_compaction *k, const w2l__ice_data_file *df,
                                    w2l_error *err)
{
    filevec *o = df->content == W2L_ICE_DATA ? &k->data : &k->dels;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        w2l__ice_data_file *nv = w2l__realloc(o->v, cap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        o->v = nv;
        o->cap = cap;
    }
    o->v[o->n++] = *df;
    return W2L_OK;
}

static w2l_rc push_removed(w2l__ice_compaction *k, const w2l__ice_data_file *f, w2l_error *err)
{
    if (k->nremoved == k->capremoved) {
        size_t cap = k->capremoved ? k->capremoved * 2 : 64;
        const char **nv = w2l__realloc(k->removed, cap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        k->removed = nv;
        unsigned char *nd = w2l__realloc(k->removed_del, cap);
        W2L_NOMEM_IF(!nd, err);
        k->removed_del = nd;
        k->capremoved = cap;
    }
    char *p = w2l__arena_strndup(&k->arena, f->path, strlen(f->path));
    W2L_NOMEM_IF(!p, err);
    k->removed_del[k->nremoved] = f->content != W2L_ICE_DATA;
    k->removed[k->nremoved++] = p;
    k->st.files_in++;
    k->st.bytes_in += f->file_size;
    return W2L_OK;
}

/* Whether the change (as the last rebase left it) commits delete file path. */
static int committed_del(const w2l__ice_compaction *k, const char *path)
{
    for (size_t i = 0; i < k->ncdels; i++)
        if (k->cdels[i].path == path) return 1;
    return 0;
}

void w2l__ice_compaction_free(w2l__ice_compaction *k, w2l_fileio *io, int remove_outputs)
{
    if (!k) return;
    const filevec *o[2] = {&k->data, &k->dels};
    for (int j = 0; j < 2; j++)
        for (size_t i = 0; io && i < o[j]->n; i++) {
            /* committed or not: a file the last change left out (a vector superseded by a
             * merged one) is in no attempt that may have landed */
            if (!remove_outputs && (j == 0 || committed_del(k, o[j]->v[i].path))) continue;
            w2l_error e2;
            w2l_fileio_remove(io, w2l__ice_local_path(o[j]->v[i].path), &e2);
        }
    w2l__free(k->data.v);
    w2l__free(k->dels.v);
    w2l__free(k->cdels);
    w2l__free(k->cremoved);
    w2l__free(k->removed_del);
    w2l__free(k->removed);
    w2l__free(k->moves);
    w2l__arena_release(&k->arena);
    w2l__free(k);
}

w2l_rc w2l__ice_compaction_lists(w2l__ice_compaction *k, const unsigned char *superseded,
                                 const unsigned char *gone, const char *const *extra,
                                 size_t nextra, w2l_error *err)
{
    w2l__ice_data_file *cd = w2l__realloc(k->cdels, (k->dels.n + 1) * sizeof *cd);
    W2L_NOMEM_IF(!cd, err);
    k->cdels = cd;
    const char **cr = w2l__realloc(k->cremoved, (k->nremoved + nextra + 1) * sizeof *cr);
    W2L_NOMEM_IF(!cr, err);
    k->cremoved = cr;
    k->ncdels = k->ncremoved = 0;
    for (size_t i = 0; i < k->dels.n; i++)
        if (i >= k->ndels_own || !superseded || !superseded[i]) cd[k->ncdels++] = k->dels.v[i];
    for (size_t i = 0; i < k->nremoved; i++)
        if (!gone || !gone[i]) cr[k->ncremoved++] = k->removed[i];
    for (size_t i = 0; i < nextra; i++) cr[k->ncremoved++] = extra[i];
    return W2L_OK;
}

void w2l__ice_compaction_change(const w2l__ice_compaction *k, w2l__ice_change *c)
{
    c->op = W2L_ICE_OP_REPLACE;
    c->files = k->data.v;
    c->nfiles = k->data.n;
    c->deletes = k->cdels;
    c->ndeletes = k->ncdels;
    c->data_seq = k->base_seq;
    c->removed = k->cremoved;
    c->nremoved = k->ncremoved;
}

const w2l__ice_maint_stats *w2l__ice_compaction_stats(const w2l__ice_compaction *k)
{
    return &k->st;
}
int64_t w2l__ice_compaction_base(const w2l__ice_compaction *k) { return k->base_id; }

/* One partition of one spec: the files compacted together, and what their outputs are
 * stamped with (values in the compaction's arena; dir: the partition's directory under
 * data/, "" when unpartitioned). */
typedef struct group {
    int32_t spec_id;
    size_t npart;
    w2l_value *values;
    char *dir;
} group;

/* The group of f (of spec, whose fields it has values for): its values copied. */
static w2l_rc group_open(w2l__ice_compaction *k, const w2l__ice_spec *spec,
                         const w2l__ice_data_file *f, group *g, w2l_error *err)
{
    memset(g, 0, sizeof *g);
    g->spec_id = spec->spec_id;
    g->npart = spec->nfields;
    g->values = w2l__arena_alloc(&k->arena, (g->npart ? g->npart : 1) * sizeof *g->values);
    W2L_NOMEM_IF(!g->values, err);
    for (size_t i = 0; i < g->npart; i++) {
        w2l_value *v = &g->values[i];
        *v = f->partition[i];
        w2l_type_id t = spec->fields[i].type.id;
        if (v->is_null || (t != W2L_TYPE_STRING && t != W2L_TYPE_BINARY)) continue;
        char *b = w2l__arena_alloc(&k->arena, v->v.bytes.len + 1);
        W2L_NOMEM_IF(!b, err);
        if (v->v.bytes.len) memcpy(b, v->v.bytes.ptr, v->v.bytes.len);
        v->v.bytes.ptr = b;
    }
    g->dir = w2l__ice_partition_path(spec, g->values);
    W2L_NOMEM_IF(!g->dir, err);
    return W2L_OK;
}

static void stamp(w2l__ice_data_file *df, const group *g)
{
    df->spec_id = g->spec_id;
    df->npart = g->npart;
    df->partition = g->values;
}

/* A candidate file: its task and spec. Sorted by spec id, then partition values ("Scan
 * Planning": a partitioned delete applies within one spec and partition), then task. */
typedef struct member {
    size_t task;
    const w2l__ice_data_file *f;
    const w2l__ice_spec *spec;
} member;

/* Orders the partitions of files of one spec id (same spec: same field types). */
static int cmp_partition(const member *a, const member *b)
{
    if (a->f->spec_id != b->f->spec_id) return a->f->spec_id < b->f->spec_id ? -1 : 1;
    for (size_t i = 0; i < a->spec->nfields; i++) {
        int c = w2l_value_compare(a->spec->fields[i].type, &a->f->partition[i],
                                  &b->f->partition[i]);
        if (c) return c;
    }
    return 0;
}

static int cmp_member(const void *x, const void *y)
{
    const member *a = x, *b = y;
    int c = cmp_partition(a, b);
    if (c) return c;
    return a->task < b->task ? -1 : a->task > b->task;
}

/* The rewriting side: one output file at a time, rolled at the target size, in the
 * partition of the group at hand. */
typedef struct rewriter {
    w2l__ice_compaction *k;
    w2l_fileio *io;
    const w2l__ice_meta *m;
    const w2l_schema *schema;
    const w2l__pq_options *pq;
    int64_t target;
    const group *g;
    w2l__pq_writer *w;
    char *path;
    const char *to;           /* path, in the compaction's arena: the output's data file path */
    const char *from;         /* the file being rewritten (arena) */
    /* pass 1 of a large file: which positions survive */
    unsigned char *alive;
    int64_t nalive_cap;
    w2l__ice_scan *scan;
    w2l_rc rc;
    w2l_error *err;
} rewriter;

static w2l_rc rw_close(rewriter *r)
{
    if (!r->w) return W2L_OK;
    w2l__file_stats fst;
    memset(&fst, 0, sizeof fst);
    w2l__pq_writer *w = r->w;
    r->w = NULL;
    uint64_t rows = w2l__pq_writer_rows(w);
    w2l_rc rc = w2l__pq_writer_close(w, &fst, r->err);
    char *path = r->path;
    r->path = NULL;
    const char *ap = r->to;
    r->to = NULL;
    if (rc == W2L_OK && rows) {
        w2l__ice_data_file df;
        rc = ap ? w2l__ice_data_file_from_stats(&r->k->arena, W2L_ICE_DATA, ap, &fst, NULL, 0, &df,
                                                r->err)
                : w2l__fail(r->err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK) {
            stamp(&df, r->g);
            rc = w2l__ice_compaction_push_out(r->k, &df, r->err);
        }
        if (rc == W2L_OK) {
            r->k->st.files_out++;
            r->k->st.bytes_out += (int64_t)fst.file_size;
        } else {
            w2l_error e2;
            w2l_fileio_remove(r->io, w2l__ice_local_path(path), &e2);
        }
    } else if (rc == W2L_OK) { /* nothing written: the empty file goes */
        w2l_error e2;
        w2l_fileio_remove(r->io, w2l__ice_local_path(path), &e2);
    }
    w2l__file_stats_release(&fst);
    w2l__free(path);
    return rc;
}

static void rw_abort(rewriter *r)
{
    if (!r->w) return;
    w2l__pq_writer_abort(r->w);
    r->w = NULL;
    w2l__free(r->path);
    r->path = NULL;
    r->to = NULL;
}

static int rw_row(void *ctx, const w2l_value *row, size_t n)
{
    (void)n;
    rewriter *r = ctx;
    if (!r->w) {
        w2l__ice_table t;
        memset(&t, 0, sizeof t);
        t.meta = (w2l__ice_meta *)r->m;
        r->path = w2l__ice_new_data_path(&t, r->g->dir, "compacted");
        r->to = r->path ? w2l__arena_strndup(&r->k->arena, r->path, strlen(r->path)) : NULL;
        if (!r->to) {
            w2l__free(r->path);
            r->path = NULL;
            r->rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
            return 1;
        }
        r->rc = w2l__pq_writer_open(r->io, w2l__ice_local_path(r->path), W2L_CREATE_EXCL, r->schema,
                                    r->pq, NULL, 0, &r->w, r->err);
        if (r->rc != W2L_OK) {
            w2l__free(r->path);
            r->path = NULL;
            return 1;
        }
    }
    /* where the row goes, so a delete committed meanwhile can follow it (rebase) */
    r->rc = move_add(r->k, r->from, r->scan->pos, r->to, (int64_t)w2l__pq_writer_rows(r->w),
                     r->err);
    if (r->rc == W2L_OK) r->rc = w2l__pq_write_row(r->w, row, r->err);
    if (r->rc == W2L_OK) r->k->st.rows_out++;
    if (r->rc == W2L_OK && (int64_t)w2l__pq_writer_bytes(r->w) >= r->target) r->rc = rw_close(r);
    return r->rc != W2L_OK;
}

static int mark_alive(void *ctx, const w2l_value *row, size_t n)
{
    (void)row;
    (void)n;
    rewriter *r = ctx;
    int64_t pos = r->scan->pos;
    if (pos >= 0 && pos < r->nalive_cap) r->alive[pos] = 1;
    return 0;
}

/* A format version 3 table's: one deletion vector per data file of pd[0..n) (sorted), each
 * the union of every delete that applied to the file (pass 1 read them all), so the file's
 * earlier vector goes with the base's deletes. */
static w2l_rc write_dvs(rewriter *r, const w2l__ice_posref *pd, size_t n)
{
    uint64_t *pos = w2l__malloc((n + 1) * sizeof *pos);
    W2L_NOMEM_IF(!pos, r->err);
    w2l__ice_table t;
    memset(&t, 0, sizeof t);
    t.meta = (w2l__ice_meta *)r->m;
    w2l_rc rc = W2L_OK;
    for (size_t i = 0, j; rc == W2L_OK && i < n; i = j) {
        size_t k = 0;
        for (j = i; j < n && !strcmp(pd[j].path, pd[i].path); j++)
            if (!k || pos[k - 1] != (uint64_t)pd[j].pos) pos[k++] = (uint64_t)pd[j].pos;
        char *beside = w2l__ice_new_data_path(&t, r->g->dir, "compacted");
        if (!beside) {
            rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
            break;
        }
        w2l__ice_data_file df;
        memset(&df, 0, sizeof df);
        stamp(&df, r->g);
        rc = w2l__ice_dv_file_write(r->io, beside, pd[i].path, pos, k, &r->k->arena, &df, r->err);
        w2l__free(beside);
        if (rc != W2L_OK) break;
        rc = w2l__ice_compaction_push_out(r->k, &df, r->err);
        if (rc == W2L_OK) {
            r->k->st.files_out++;
            r->k->st.bytes_out += df.file_size;
            r->k->st.deletes_out += (int64_t)k;
        } else {
            w2l_error e2;
            w2l_fileio_remove(r->io, w2l__ice_local_path(df.path), &e2);
        }
    }
    w2l__free(pos);
    return rc;
}

/* The position delete file of the group at hand: its partition is that of the data files
 * it names ("Position Delete Files"; applied within one partition, "Scan Planning"). */
static w2l_rc write_posdeletes(rewriter *r, w2l__ice_posref *pd, size_t n)
{
    if (!n) return W2L_OK;
    qsort(pd, n, sizeof *pd, w2l__ice_posref_cmp);
    if (r->m->format_version >= 3) return write_dvs(r, pd, n);
    w2l__ice_table t;
    memset(&t, 0, sizeof t);
    t.meta = (w2l__ice_meta *)r->m;
    char *path = w2l__ice_new_data_path(&t, r->g->dir, "compacted-pos-delete");
    W2L_NOMEM_IF(!path, r->err);
    w2l__ice_data_file df;
    w2l_rc rc = w2l__ice_pos_file_write(r->io, path, r->pq, pd, n, &r->k->arena, &df, r->err);
    if (rc == W2L_OK) {
        stamp(&df, r->g);
        rc = w2l__ice_compaction_push_out(r->k, &df, r->err);
        if (rc == W2L_OK) {
            r->k->st.files_out++;
            r->k->st.bytes_out += df.file_size;
            r->k->st.deletes_out += (int64_t)n;
        } else {
            w2l_error e2;
            w2l_fileio_remove(r->io, w2l__ice_local_path(path), &e2);
        }
    }
    w2l__free(path);
    return rc;
}

/* The positions pass 1 found deleted in f, added to the group's position deletes. */
static w2l_rc add_posdeletes(const w2l__ice_data_file *f, const unsigned char *alive,
                             int64_t nrec, w2l__ice_posref **pd, size_t *npd, size_t *cap,
                             w2l_error *err)
{
    for (int64_t q = 0; q < nrec; q++) {
        if (alive[q]) continue;
        if (*npd == *cap) {
            size_t nc = *cap ? *cap * 2 : 1024;
            w2l__ice_posref *nv = w2l__realloc(*pd, nc * sizeof *nv);
            W2L_NOMEM_IF(!nv, err);
            *pd = nv;
            *cap = nc;
        }
        (*pd)[(*npd)++] = (w2l__ice_posref){f->path, q};
    }
    return W2L_OK;
}

/* Whether t's only delete is a position delete file that names t's file alone (a deletion
 * vector always does: it counts only while its share of the file's rows is under
 * rewrite_ratio, past which the file is rewritten). */
static int own_posdeletes_only(const w2l__ice_task *t, double rewrite_ratio)
{
    const w2l__ice_data_file *d = t->ndeletes == 1 ? t->deletes[0] : NULL;
    if (d && w2l__ice_is_dv(d) &&
        (double)d->record_count >= rewrite_ratio * (double)t->file->record_count)
        return 0;
    return d && d->content == W2L_ICE_POS_DELETES && d->referenced_data_file &&
           strcmp(w2l__ice_local_path(d->referenced_data_file),
                  w2l__ice_local_path(t->file->path)) == 0;
}

/* Compacts the files mv[0..n) of one group. handled[task]: the file's deletes are dealt
 * with (its rows rewritten without them, its deleted positions written, or none of its
 * rows deleted). pd: the group's position deletes (scratch, kept across groups). */
static w2l_rc compact_group(rewriter *r, const w2l__ice_policy *p, const member *mv, size_t n,
                            unsigned char *handled, w2l__ice_posref **pd, size_t *cappd)
{
    w2l__ice_scan *scan = r->scan;
    const int64_t small_below = r->target / W2L_ICE_SMALL_FILE_RATIO;
    size_t nsmall = 0, nwith = 0;
    for (size_t q = 0; q < n; q++) {
        nsmall += mv[q].f->file_size < small_below;
        nwith += scan->tasks[mv[q].task].ndeletes > 0;
    }
    if (nsmall < 2 && !nwith) return W2L_OK; /* a lone small file, or large ones: as they are */
    group g;
    w2l_rc rc = group_open(r->k, mv[0].spec, mv[0].f, &g, r->err);
    r->g = &g;
    size_t npd = 0;
    for (size_t q = 0; rc == W2L_OK && q < n; q++) {
        size_t i = mv[q].task;
        const w2l__ice_task *t = &scan->tasks[i];
        const w2l__ice_data_file *f = t->file;
        int small = f->file_size < small_below;
        /* nothing deletes from it, and it is large or the group's only small file: stays */
        if (!t->ndeletes && (!small || nsmall < 2)) continue;
        /* a large file whose only delete is a position delete file of its own (as this
         * writes them) is as compact as it gets: it stays, and so does that file */
        if (!small && own_posdeletes_only(t, p->rewrite_delete_ratio)) continue;
        if (!small) {
            /* pass 1: which rows survive the deletes */
            int64_t nrec = f->record_count > 0 ? f->record_count : 0;
            unsigned char *alive = w2l__calloc((size_t)nrec + 1, 1);
            if (!alive) {
                rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
                break;
            }
            r->alive = alive;
            r->nalive_cap = nrec;
            rc = w2l__ice_scan_read_task(r->io, scan, i, mark_alive, r, r->err);
            r->alive = NULL;
            int64_t dead = 0;
            for (int64_t x = 0; x < nrec; x++) dead += !alive[x];
            if (rc == W2L_OK && dead == 0) { /* the deletes match nothing in it */
                handled[i] = 1;
                w2l__free(alive);
                continue;
            }
            if (rc == W2L_OK && (double)dead < p->rewrite_delete_ratio * (double)nrec) {
                /* a few rows gone: their positions, and the file stays */
                rc = add_posdeletes(f, alive, nrec, pd, &npd, cappd, r->err);
                handled[i] = rc == W2L_OK;
                w2l__free(alive);
                continue;
            }
            w2l__free(alive);
            if (rc != W2L_OK) break;
        }
        /* rewritten: its surviving rows go to the group's output, the file goes */
        r->from = w2l__arena_strndup(&r->k->arena, f->path, strlen(f->path));
        if (!r->from) {
            rc = w2l__fail(r->err, W2L_NOMEM, "out of memory");
            break;
        }
        rc = w2l__ice_scan_read_task(r->io, scan, i, rw_row, r, r->err);
        if (rc == W2L_CANCELLED) rc = r->rc;
        if (rc == W2L_OK) rc = push_removed(r->k, f, r->err);
        handled[i] = rc == W2L_OK;
    }
    /* the group's outputs are complete before the next group starts */
    if (rc == W2L_OK) rc = rw_close(r);
    else rw_abort(r);
    if (rc == W2L_OK) rc = write_posdeletes(r, *pd, npd);
    w2l__free(g.dir);
    r->g = NULL;
    return rc;
}

w2l_rc w2l__ice_compact_prepare(w2l_fileio *io, const w2l__ice_meta *m,
                                const w2l__ice_policy *p, const struct w2l__pq_options *pq,
                                w2l__ice_compaction **out, w2l_error *err)
{
    *out = NULL;
    const w2l__ice_snapshot *base =
        m->current_snapshot_id != -1 ? w2l__ice_meta_snapshot(m, m->current_snapshot_id) : NULL;
    if (!base) return W2L_OK;
    int64_t t0 = w2l__now_ms();
    w2l__ice_scan *scan;
    W2L_TRY(w2l__ice_scan_plan(io, m, -1, NULL, NULL, &scan, err));
    const int64_t target = p->target_file_bytes > 0 ? p->target_file_bytes : 128LL << 20;
    size_t nsmall = 0;
    for (size_t i = 0; i < scan->ntasks; i++)
        nsmall += scan->tasks[i].file->file_size < target / W2L_ICE_SMALL_FILE_RATIO;
    if (scan->ndelete_files == 0 && nsmall < 2) {
        w2l__ice_scan_free(scan);
        return W2L_OK;
    }
    w2l__ice_compaction *k = w2l__calloc(1, sizeof *k);
    member *mv = w2l__malloc((scan->ntasks + 1) * sizeof *mv);
    unsigned char *handled = w2l__calloc(scan->ntasks + 1, 1);
    unsigned char *keep = w2l__calloc(scan->ndelete_files + 1, 1);
    if (!k || !mv || !handled || !keep) {
        w2l__free(k);
        w2l__free(mv);
        w2l__free(handled);
        w2l__free(keep);
        w2l__ice_scan_free(scan);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__arena_init(&k->arena, 1 << 14);
    k->base_id = base->snapshot_id;
    k->base_seq = base->seq;
    k->pq = *pq;
    k->pq.codec_ctx = NULL; /* rebase may run on another thread, after the caller's is gone */
    /* files of every spec are compacted within their own spec and partition (files written
     * under an older spec keep it: "Partition Evolution"); a file whose spec the metadata
     * lacks, or whose partition does not fit its spec, stays */
    size_t nm = 0;
    for (size_t i = 0; i < scan->ntasks; i++) {
        const w2l__ice_data_file *f = scan->tasks[i].file;
        const w2l__ice_spec *spec = w2l__ice_meta_spec(m, f->spec_id);
        if (spec && spec->nfields == f->npart) mv[nm++] = (member){i, f, spec};
        else
            w2l__log(W2L_LOG_DEBUG, "compaction of %s: %s (spec %d) stays", m->location, f->path,
                     (int)f->spec_id);
    }
    qsort(mv, nm, sizeof *mv, cmp_member);
    rewriter r = {.k = k, .io = io, .m = m, .schema = scan->schema, .pq = pq, .target = target,
                  .scan = scan, .rc = W2L_OK, .err = err};
    w2l__ice_posref *pd = NULL;
    size_t cappd = 0;
    w2l_rc rc = W2L_OK;
    for (size_t g0 = 0, g1; rc == W2L_OK && g0 < nm; g0 = g1) {
        g1 = g0 + 1;
        while (g1 < nm && cmp_partition(&mv[g0], &mv[g1]) == 0) g1++;
        rc = compact_group(&r, p, mv + g0, g1 - g0, handled, &pd, &cappd);
    }
    w2l__free(pd);
    /* a delete file goes when every data file it applies to is handled: its rows are gone
     * from the rewritten files, its positions are in a new position delete file, or it
     * matched nothing. With deletes scoped to a partition ("Scan Planning"), every file
     * with deletes is handled in its group; a file that stays keeps its deletes. */
    for (size_t i = 0; rc == W2L_OK && i < scan->ntasks; i++) {
        const w2l__ice_task *t = &scan->tasks[i];
        if (handled[i]) continue;
        for (size_t d = 0; d < t->ndeletes; d++)
            for (size_t x = 0; x < scan->ndelete_files; x++)
                if (scan->delete_files[x] == t->deletes[d]) keep[x] = 1;
    }
    for (size_t d = 0; rc == W2L_OK && d < scan->ndelete_files; d++)
        if (!keep[d]) rc = push_removed(k, scan->delete_files[d], err);
    w2l__free(mv);
    w2l__free(handled);
    w2l__free(keep);
    w2l__ice_scan_free(scan);
    if (rc == W2L_OK && !k->nremoved) { /* nothing changed after all */
        w2l__ice_compaction_free(k, io, 1);
        return W2L_OK;
    }
    if (rc != W2L_OK) {
        w2l__ice_compaction_free(k, io, 1);
        return rc;
    }
    k->ndels_own = k->dels.n;
    if (k->nmoves) qsort(k->moves, k->nmoves, sizeof *k->moves, cmp_move);
    rc = w2l__ice_compaction_lists(k, NULL, NULL, NULL, 0, err);
    if (rc != W2L_OK) {
        w2l__ice_compaction_free(k, io, 1);
        return rc;
    }
    k->st.ms = w2l__now_ms() - t0;
    *out = k;
    return W2L_OK;
}

/* ================================================================ orphans ======== */

typedef struct lister {
    const char *dir;
    char **paths;
    w2l_file_stat *stats; /* size UINT64_MAX: not known from the listing */
    size_t n, cap;
    int oom;
} lister;

static int collect_file(void *ctx, const char *rel, const w2l_file_stat *st)
{
    lister *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        char **nv = w2l__realloc(l->paths, cap * sizeof *nv);
        if (nv) l->paths = nv;
        w2l_file_stat *ns = nv ? w2l__realloc(l->stats, cap * sizeof *ns) : NULL;
        if (!ns) return l->oom = 1;
        l->stats = ns;
        l->cap = cap;
    }
    if (!(l->paths[l->n] = w2l__asprintf("%s/%s", l->dir, rel))) return l->oom = 1;
    l->stats[l->n] = st ? *st : (w2l_file_stat){ .size = UINT64_MAX };
    l->n++;
    return 0;
}

/* Every file below dir (recursively) into out, as full paths. */
static w2l_rc list_tree(w2l_fileio *io, const char *dir, lister *out, w2l_error *err)
{
    out->dir = dir;
    w2l_rc rc = w2l_fileio_list_tree(io, dir, collect_file, out, err);
    if (rc == W2L_OK && out->oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    return rc;
}

w2l_rc w2l__ice_remove_orphans(w2l_fileio *io, const char *location,
                               const w2l__ice_meta *const *metas, const char *const *meta_files,
                               size_t ntables, const w2l__ice_policy *p, int64_t now_ms,
                               int (*keep)(void *ctx, const char *path), void *keep_ctx,
                               int dry_run, w2l__ice_maint_stats *st, w2l_error *err)
{
    int64_t t0 = w2l__now_ms();
    w2l__arena a;
    w2l__arena_init(&a, 1 << 16);
    w2l__ice_pathset reach = {0};
    w2l_rc rc = W2L_OK;
#define REACH(x)                                                                     \
    do {                                                                             \
        if (rc == W2L_OK && w2l__ice_pathset_add(&reach, (x)) < 0)                            \
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");                         \
    } while (0)
    for (size_t t = 0; rc == W2L_OK && t < ntables; t++) {
        const w2l__ice_meta *m = metas[t];
        if (meta_files && meta_files[t]) REACH(meta_files[t]);
        for (size_t i = 0; i < m->nmeta_log; i++) REACH(m->meta_log[i].file);
        for (size_t i = 0; rc == W2L_OK && i < m->nsnapshots; i++) {
            REACH(m->snapshots[i].manifest_list);
            w2l__ice_manifest *ml;
            size_t n;
            rc = read_list(io, m->snapshots[i].manifest_list, &a, &ml, &n, err);
            for (size_t k = 0; rc == W2L_OK && k < n; k++) {
                int ad = w2l__ice_pathset_add(&reach, ml[k].path);
                if (ad < 0) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                if (ad <= 0) continue;
                w2l__ice_entry *e;
                size_t ne;
                rc = w2l__ice_manifest_read(io, &ml[k], w2l__ice_meta_spec(m, ml[k].spec_id), &a,
                                            &e, &ne, err);
                for (size_t q = 0; rc == W2L_OK && q < ne; q++) REACH(e[q].file.path);
            }
        }
    }
#undef REACH
    lister files = { 0 };
    remover *r = w2l__calloc(1, sizeof *r);
    if (!r) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    else *r = (remover){ .io = io, .dry_run = dry_run, .st = st };
    size_t ll = strlen(location);
    while (ll > 1 && location[ll - 1] == '/') ll--;
    static const char *const dirs[] = {"data", "metadata"};
    for (size_t d = 0; rc == W2L_OK && d < 2; d++) {
        char *dir = w2l__asprintf("%.*s/%s", (int)ll, w2l__ice_local_path(location), dirs[d]);
        if (!dir) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else rc = list_tree(io, dir, &files, err);
        w2l__free(dir);
    }
    for (size_t i = 0; rc == W2L_OK && i < files.n; i++) {
        const char *f = files.paths[i];
        const char *base = strrchr(f, '/');
        base = base ? base + 1 : f;
        if (strcmp(base, "version-hint.text") == 0) continue; /* the hadoop catalog's pointer */
        if (w2l__ice_pathset_has(&reach, f)) continue;
        if (keep && keep(keep_ctx, f)) continue;
        w2l_file_stat fs = files.stats[i];
        if (fs.size == UINT64_MAX) {
            rc = w2l_fileio_stat(io, f, &fs, err);
            if (rc == W2L_NOTFOUND) {
                rc = W2L_OK;
                continue;
            }
            if (rc != W2L_OK) break;
        }
        if (now_ms - fs.mtime_ms < p->orphan_age_ms) continue;
        /* a batch that cannot go does not stop the others */
        w2l_error e2;
        if (rm_add(r, f, (int64_t)fs.size, &e2) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "orphans stay: %s", e2.msg);
    }
    w2l_error e2;
    if (rc == W2L_OK && rm_flush(r, &e2) != W2L_OK)
        w2l__log(W2L_LOG_WARN, "orphans stay: %s", e2.msg);
    w2l__free(r);
    for (size_t i = 0; i < files.n; i++) w2l__free(files.paths[i]);
    w2l__free(files.paths);
    w2l__free(files.stats);
    w2l__ice_pathset_free(&reach);
    w2l__arena_release(&a);
    st->ms += w2l__now_ms() - t0;
    return rc;
}
