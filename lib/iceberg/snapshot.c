/*
 * Snapshot-producing operations and schema changes (Iceberg spec: "Snapshots", "Sequence
 * Numbers", "Manifests" (entry status), "Snapshot Summary" conventions of the Java
 * implementation's SnapshotSummary keys, "Schema Evolution" and "Column Projection" rules
 * for ids). Each operation turns a base metadata into the next one:
 *   append     one new data manifest; the parent's live manifests carried by reference
 *   row delta  a data manifest and a delete manifest (position + equality deletes)
 *   truncate   the parent's live entries rewritten as DELETED (operation "delete")
 *   replace    (compaction) the removed files' entries rewritten as DELETED, the new files
 *              ADDED with the data sequence number of the compaction's base, so equality
 *              deletes committed after the base still apply to them (operation "replace")
 *   expire     snapshots removed from the metadata (no snapshot); the caller then removes
 *              the files only they reached (maintain.c)
 *   schema     a new schema (new id; field ids never reused: new columns get ids above
 *              last-column-id), no snapshot
 * The manifests of the change's own files are written once, at the first attempt; their
 * ADDED entries inherit the sequence number, so a retry on a newer base only writes a new
 * manifest list (and, for truncate, the DELETED manifests of that base).
 *
 * Manifest merging (the idea of Iceberg's commit.manifest.min-count-to-merge and
 * commit.manifest.target-size-bytes): once a snapshot would list min-count manifests of one
 * content and spec, the small ones carried from the parent are merged into manifests of up
 * to the target size, their DELETED entries dropped and ADDED ones made EXISTING. A snapshot
 * so lists a bounded number of manifests whatever the history, and a manifest is rewritten
 * about once per min-count commits until it reaches the target size.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"
#include "../model/model.h"

void w2l__ice_change_init(w2l__ice_change *c, w2l__ice_op op)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    w2l__arena_init(&c->arena, 1 << 14);
}

void w2l__ice_change_release(w2l__ice_change *c, w2l_fileio *io, int remove_files)
{
    if (remove_files && io) w2l__ice_change_unwrite(c, io);
    w2l__arena_release(&c->arena);
    c->have_manifests = 0;
    c->own = NULL;
    c->nown = 0;
}

void w2l__ice_change_unwrite(w2l__ice_change *c, w2l_fileio *io)
{
    w2l_error e2;
    for (size_t i = 0; i < c->nown; i++) w2l_fileio_remove(io, c->own[i].path, &e2);
    c->nown = 0;
    c->have_manifests = 0;
}

char *w2l__ice_new_data_path(const w2l__ice_table *t, const char *partition_path,
                             const char *prefix)
{
    char u[37];
    w2l__ice_uuid(u);
    const char *loc = t->meta->location;
    size_t n = strlen(loc);
    while (n > 1 && loc[n - 1] == '/') n--;
    int part = partition_path && *partition_path;
    return w2l__asprintf("%.*s/data/%s%s%s-%s.parquet", (int)n, loc, part ? partition_path : "",
                         part ? "/" : "", prefix ? prefix : "data", u);
}

static char *metadata_file(const w2l__ice_meta *m, const char *fmt, int64_t id)
{
    char u[37];
    w2l__ice_uuid(u);
    const char *loc = m->location;
    size_t n = strlen(loc);
    while (n > 1 && loc[n - 1] == '/') n--;
    char name[128];
    snprintf(name, sizeof name, fmt, (long long)id, u);
    return w2l__asprintf("%.*s/metadata/%s", (int)n, loc, name);
}

/* ---- schema changes ---- */

static int is_identifier(const w2l_schema *s, int32_t id)
{
    size_t n;
    const int32_t *ids = w2l_schema_identifier(s, &n);
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

typedef struct fld {
    int32_t id;
    char *name;
    w2l_type type;
    int required;
} fld;

static w2l_rc apply_schema(w2l__ice_meta *m, const w2l__ice_change *c, w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(m);
    if (!cur)
        return w2l__fail(err, W2L_SCHEMA, "schema change: the current schema has nested types");
    size_t n = w2l_schema_field_count(cur), cap = n + c->nschema_changes + 1;
    fld *f = w2l__calloc(cap, sizeof *f);
    W2L_NOMEM_IF(!f, err);
    size_t nid;
    const int32_t *cid = w2l_schema_identifier(cur, &nid);
    int32_t *ident = w2l__calloc(cap + nid, sizeof *ident);
    w2l_rc rc = ident ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && nid) memcpy(ident, cid, nid * sizeof *cid);
    for (size_t i = 0; i < n; i++) {
        const w2l_field *x = w2l_schema_field(cur, i);
        f[i] = (fld){x->id, (char *)x->name, x->type, x->required};
    }
    int32_t next_id = m->last_column_id;
    /* a change that sets the identifier may drop (or make optional) a field of the old one */
    int sets_identifier = 0;
    for (size_t k = 0; k < c->nschema_changes; k++)
        sets_identifier |= c->schema_changes[k].op == W2L_ICE_SET_IDENTIFIER;
    for (size_t k = 0; rc == W2L_OK && k < c->nschema_changes; k++) {
        const w2l__ice_schema_change *sc = &c->schema_changes[k];
        long at = -1;
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].name, sc->name) == 0) at = (long)i;
        switch (sc->op) {
        case W2L_ICE_ADD_COLUMN:
            if (at >= 0) { /* retried on a base that has it already: same column is a no-op */
                if (f[at].type.id == sc->type.id && f[at].type.precision == sc->type.precision &&
                    f[at].type.scale == sc->type.scale)
                    break;
                rc = w2l__fail(err, W2L_SCHEMA, "add column %s: the column exists", sc->name);
                break;
            }
            if (sc->required) {
                rc = w2l__fail(err, W2L_SCHEMA, "add column %s: a new column must be optional",
                               sc->name);
                break;
            }
            f[n++] = (fld){++next_id, (char *)sc->name, sc->type, 0};
            break;
        case W2L_ICE_DROP_COLUMN:
            if (at < 0) break; /* already gone */
            if (is_identifier(cur, f[at].id) && !sets_identifier) {
                rc = w2l__fail(err, W2L_SCHEMA, "drop column %s: it is an identifier field",
                               sc->name);
                break;
            }
            for (size_t s = 0; s < m->nspecs; s++)
                for (size_t p = 0; p < m->specs[s].nfields; p++)
                    if (m->specs[s].spec_id == m->default_spec_id &&
                        m->specs[s].fields[p].source_id == f[at].id)
                        rc = w2l__fail(err, W2L_SCHEMA,
                                       "drop column %s: the table is partitioned by it (field "
                                       "%s); partition it without the column first "
                                       "(partition-by)",
                                       sc->name, m->specs[s].fields[p].name);
            if (rc == W2L_OK) {
                memmove(&f[at], &f[at + 1], (n - (size_t)at - 1) * sizeof *f);
                n--;
            }
            break;
        case W2L_ICE_RENAME_COLUMN: {
            long to = -1;
            for (size_t i = 0; i < n; i++)
                if (strcmp(f[i].name, sc->new_name) == 0) to = (long)i;
            if (at < 0 && to >= 0) break; /* already renamed */
            if (at < 0 || to >= 0) {
                rc = w2l__fail(err, W2L_SCHEMA, "rename column %s to %s: %s", sc->name,
                               sc->new_name, at < 0 ? "no such column" : "the new name is taken");
                break;
            }
            f[at].name = (char *)sc->new_name;
            break;
        }
        case W2L_ICE_WIDEN_COLUMN:
            if (at < 0) {
                rc = w2l__fail(err, W2L_SCHEMA, "widen column %s: no such column", sc->name);
                break;
            }
            if (!w2l_type_can_promote(f[at].type, sc->type)) {
                char a[32], b[32];
                rc = w2l__fail(err, W2L_SCHEMA, "column %s: %s cannot become %s", sc->name,
                               w2l_type_format(f[at].type, a, sizeof a),
                               w2l_type_format(sc->type, b, sizeof b));
                break;
            }
            f[at].type = sc->type;
            break;
        case W2L_ICE_MAKE_OPTIONAL:
            if (at < 0) {
                rc = w2l__fail(err, W2L_SCHEMA, "make optional %s: no such column", sc->name);
                break;
            }
            if (is_identifier(cur, f[at].id) && !sets_identifier) {
                rc = w2l__fail(err, W2L_SCHEMA, "make optional %s: it is an identifier field",
                               sc->name);
                break;
            }
            f[at].required = 0;
            break;
        case W2L_ICE_MAKE_REQUIRED:
            if (at < 0) {
                rc = w2l__fail(err, W2L_SCHEMA, "make required %s: no such column", sc->name);
                break;
            }
            f[at].required = 1;
            break;
        case W2L_ICE_MOVE_COLUMN: {
            long to = -1;
            for (size_t i = 0; sc->new_name && i < n; i++)
                if (strcmp(f[i].name, sc->new_name) == 0) to = (long)i;
            if (at < 0 || (sc->new_name && (to < 0 || to == at))) {
                rc = w2l__fail(err, W2L_SCHEMA, "move column %s after %s: %s", sc->name,
                               sc->new_name ? sc->new_name : "(first)",
                               at < 0 || to < 0 ? "no such column"
                                                : "a column cannot follow itself");
                break;
            }
            fld x = f[at];
            memmove(&f[at], &f[at + 1], (n - (size_t)at - 1) * sizeof *f);
            if (to > at) to--;
            size_t dst = (size_t)(to + 1); /* first: to = -1 */
            memmove(&f[dst + 1], &f[dst], (n - 1 - dst) * sizeof *f);
            f[dst] = x;
            break;
        }
        case W2L_ICE_SET_IDENTIFIER: {
            nid = 0;
            const char *p = sc->name;
            while (rc == W2L_OK && p && *p) {
                size_t len = strcspn(p, ",");
                long hit = -1;
                for (size_t i = 0; i < n; i++)
                    if (strlen(f[i].name) == len && strncmp(f[i].name, p, len) == 0) hit = (long)i;
                if (hit < 0)
                    rc = w2l__fail(err, W2L_SCHEMA, "identifier %.*s: no such column", (int)len, p);
                else ident[nid++] = f[hit].id;
                p += len;
                if (*p == ',') p++;
            }
            break;
        }
        }
    }
    w2l_schema *s = NULL;
    if (rc == W2L_OK) {
        s = w2l_schema_new(0);
        if (!s) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    for (size_t i = 0; rc == W2L_OK && i < n; i++)
        rc = w2l_schema_add_field(s, f[i].id, f[i].name, f[i].type, f[i].required, err);
    /* identifier fields that were dropped cannot remain (rejected above) */
    if (rc == W2L_OK) rc = w2l_schema_set_identifier(s, ident, nid, err);
    if (rc == W2L_OK) rc = w2l__ice_meta_set_schema(m, s, err);
    if (rc == W2L_OK) m->last_column_id = W2L_MAX(m->last_column_id, next_id);
    w2l_schema_unref(s);
    w2l__free(f);
    w2l__free(ident);
    return rc;
}

/* ---- snapshots ---- */

typedef struct totals {
    int64_t records, files_size, data_files, delete_files, pos_deletes, eq_deletes;
} totals;

static int64_t sum_get(const w2l__ice_props *p, const char *key, int *missing)
{
    const char *v = w2l__ice_props_get(p, key);
    if (!v) {
        *missing = 1;
        return 0;
    }
    return strtoll(v, NULL, 10);
}

static void account(totals *t, const w2l__ice_data_file *f, int sign)
{
    t->files_size += sign * f->file_size;
    if (f->content == W2L_ICE_DATA) {
        t->data_files += sign;
        t->records += sign * f->record_count;
    } else {
        t->delete_files += sign;
        if (f->content == W2L_ICE_POS_DELETES) t->pos_deletes += sign * f->record_count;
        else t->eq_deletes += sign * f->record_count;
    }
}

/* Totals of the parent from its summary, or (tables from other writers without them)
 * counted from its manifests. */
static w2l_rc parent_totals(w2l_fileio *io, const w2l__ice_meta *m, const w2l__ice_snapshot *p,
                            const w2l__ice_manifest *ml, size_t nml, w2l__arena *a, totals *t,
                            w2l_error *err)
{
    memset(t, 0, sizeof *t);
    if (!p) return W2L_OK;
    int missing = 0;
    t->records = sum_get(&p->summary, "total-records", &missing);
    t->files_size = sum_get(&p->summary, "total-files-size", &missing);
    t->data_files = sum_get(&p->summary, "total-data-files", &missing);
    t->delete_files = sum_get(&p->summary, "total-delete-files", &missing);
    t->pos_deletes = sum_get(&p->summary, "total-position-deletes", &missing);
    t->eq_deletes = sum_get(&p->summary, "total-equality-deletes", &missing);
    if (!missing) return W2L_OK;
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < nml; i++) {
        w2l__ice_entry *e;
        size_t n;
        W2L_TRY(w2l__ice_manifest_read(io, &ml[i], w2l__ice_meta_spec(m, ml[i].spec_id), a, &e, &n,
                                       err));
        for (size_t k = 0; k < n; k++)
            if (e[k].status != W2L_ICE_DELETED) account(t, &e[k].file, 1);
    }
    return W2L_OK;
}

static w2l_rc put_num(w2l__ice_props *p, const char *key, int64_t v, int always, w2l_error *err)
{
    if (!always && v == 0) return W2L_OK;
    char b[24];
    snprintf(b, sizeof b, "%lld", (long long)v);
    return w2l__ice_props_set(p, key, b, err);
}

/* The spec a change's file is written in: its own, or (-1) the default one, and its
 * partition tuple must have one value per field of it. */
static w2l_rc file_spec(const w2l__ice_meta *m, const w2l__ice_data_file *f,
                        const w2l__ice_spec **out, w2l_error *err)
{
    const w2l__ice_spec *spec = w2l__ice_meta_spec(m, f->spec_id < 0 ? m->default_spec_id
                                                                     : f->spec_id);
    if (!spec)
        return w2l__fail(err, W2L_SCHEMA, "file %s: partition spec %d is not the table's", f->path,
                         (int)(f->spec_id < 0 ? m->default_spec_id : f->spec_id));
    if (spec->nfields != f->npart)
        return w2l__fail(err, W2L_SCHEMA,
                         "file %s: %zu partition values for partition spec %d of %zu fields",
                         f->path, f->npart, (int)spec->spec_id, spec->nfields);
    *out = spec;
    return W2L_OK;
}

/* Writes the change's files into manifests, one per content class and partition spec. */
static w2l_rc write_own_manifests(w2l__ice_table *t, w2l__ice_change *c, int64_t sid,
                                  w2l_error *err)
{
    const w2l__ice_data_file *lists[2] = {c->files, c->deletes};
    size_t counts[2] = {c->nfiles, c->ndeletes};
    c->own = w2l__arena_alloc(&c->arena, (c->nfiles + c->ndeletes + 1) * sizeof *c->own);
    w2l__ice_entry *e = w2l__arena_alloc(&c->arena, (c->nfiles + c->ndeletes + 1) * sizeof *e);
    const w2l__ice_spec **specs =
        w2l__malloc((c->nfiles + c->ndeletes + 1) * sizeof *specs);
    w2l_rc rc = c->own && e && specs ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    c->nown = 0;
    for (int k = 0; rc == W2L_OK && k < 2; k++) {
        for (size_t i = 0; rc == W2L_OK && i < counts[k]; i++) {
            if ((k == 0) != (lists[k][i].content == W2L_ICE_DATA))
                rc = w2l__fail(err, W2L_MISUSE, "file %s: content %d in the %s list",
                               lists[k][i].path, lists[k][i].content, k ? "delete" : "data");
            else rc = file_spec(t->meta, &lists[k][i], &specs[i], err);
        }
        /* one manifest per spec, in the order the specs first appear */
        for (size_t i = 0; rc == W2L_OK && i < counts[k]; i++) {
            size_t first = 0, n = 0;
            while (first < i && specs[first] != specs[i]) first++;
            if (first < i) continue; /* its spec's manifest is written */
            for (size_t j = i; j < counts[k]; j++) {
                if (specs[j] != specs[i]) continue;
                e[n] = (w2l__ice_entry){ W2L_ICE_ADDED, sid, c->data_seq > 0 ? c->data_seq : -1,
                                         -1, lists[k][j] };
                e[n++].file.spec_id = specs[i]->spec_id;
            }
            char name[64];
            snprintf(name, sizeof name, "%%lld-%%s-m%zu.avro", c->nown);
            char *path = metadata_file(t->meta, name, sid);
            char *apath = path ? w2l__arena_strndup(&c->arena, path, strlen(path)) : NULL;
            w2l__free(path);
            if (!apath) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            rc = w2l__ice_manifest_write(t->io, t->pending, apath, t->meta, specs[i],
                                         k ? W2L_ICE_MANIFEST_DELETES : W2L_ICE_MANIFEST_DATA, sid,
                                         e, n, &c->arena, &c->own[c->nown], err);
            if (rc == W2L_OK) c->nown++;
        }
    }
    w2l__free(specs);
    if (rc != W2L_OK) {
        w2l_error e2;
        for (size_t i = 0; i < c->nown; i++) w2l_fileio_remove(t->io, c->own[i].path, &e2);
        c->nown = 0;
        return rc;
    }
    c->have_manifests = 1;
    return W2L_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The hashes of the partitions (spec and values) a snapshot adds or removes files in, to
 * count them for changed-partition-count. */
typedef struct phashes {
    uint64_t *v;
    size_t n, cap;
} phashes;

static void phash_add(phashes *h, const w2l__ice_meta *m, const w2l__ice_data_file *f,
                      int32_t sid)
{
    const w2l__ice_spec *spec = w2l__ice_meta_spec(m, sid);
    uint64_t x = w2l__hash64(&sid, sizeof sid, 0x63707274);
    for (size_t j = 0; spec && j < f->npart && j < spec->nfields; j++) {
        unsigned char b[32];
        size_t len = 0;
        if (!f->partition[j].is_null) {
            len = w2l__value_to_bytes(spec->fields[j].type, &f->partition[j], b, sizeof b);
            if (len > sizeof b) /* a long string or binary: its own bytes */
                x = w2l__hash64(f->partition[j].v.bytes.ptr, f->partition[j].v.bytes.len, x);
        }
        x = w2l__hash64(b, W2L_MIN(len, sizeof b), x ^ (f->partition[j].is_null ? 1 : 2));
    }
    if (h->n == h->cap) { /* a summary figure: no room is not worth failing the commit */
        size_t cap = h->cap ? h->cap * 2 : 64;
        uint64_t *nv = w2l__realloc(h->v, cap * sizeof *nv);
        if (!nv) return;
        h->v = nv;
        h->cap = cap;
    }
    h->v[h->n++] = x;
}

static int64_t phash_distinct(phashes *h)
{
    qsort(h->v, h->n, sizeof *h->v, cmp_u64);
    int64_t d = 0;
    for (size_t i = 0; i < h->n; i++) d += i == 0 || h->v[i] != h->v[i - 1];
    return d;
}

typedef struct attempt {
    char **files; /* manifests and the list written for this attempt only */
    size_t n, cap;
} attempt;

/* Keeps path (taken) among the attempt's files; 0 when out of memory (path freed). */
static int attempt_keep(attempt *at, char *path)
{
    if (!path) return 0;
    if (at->n == at->cap) {
        size_t ncap = at->cap ? at->cap * 2 : 8;
        char **nf = w2l__realloc(at->files, ncap * sizeof *nf);
        if (!nf) {
            w2l__free(path);
            return 0;
        }
        at->files = nf;
        at->cap = ncap;
    }
    at->files[at->n++] = path;
    return 1;
}

static void attempt_cleanup(attempt *at, w2l_fileio *io, int remove)
{
    w2l_error e2;
    for (size_t i = 0; i < at->n; i++) {
        if (remove) w2l_fileio_remove(io, at->files[i], &e2);
        w2l__free(at->files[i]);
    }
    w2l__free(at->files);
    at->files = NULL;
    at->n = at->cap = 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int64_t prop_i64(const w2l__ice_meta *m, const char *key, int64_t dflt)
{
    const char *v = w2l__ice_props_get(&m->props, key);
    char *end;
    long long x = v ? strtoll(v, &end, 10) : 0;
    return v && end != v && x > 0 ? (int64_t)x : dflt;
}

/* Merges list[nown..nl) (the manifests carried from the parent) as the comment at the top
 * says; the change's own manifests (the first nown) and those written by this snapshot stay
 * as they are. */
static w2l_rc merge_manifests(w2l__ice_table *t, int64_t sid, int64_t seq, w2l__ice_manifest *list,
                              size_t *nl, size_t nown, attempt *at, w2l__arena *a, size_t *merged,
                              w2l_error *err)
{
    w2l__ice_meta *m = t->meta;
    const char *en = w2l__ice_props_get(&m->props, "commit.manifest-merge.enabled");
    if (en && strcmp(en, "false") == 0) return W2L_OK;
    const size_t min_count = (size_t)W2L_MAX(
        2, prop_i64(m, "commit.manifest.min-count-to-merge", W2L_ICE_MERGE_MIN_COUNT));
    const int64_t target =
        prop_i64(m, "commit.manifest.target-size-bytes", W2L_ICE_MERGE_TARGET_BYTES);
    size_t n = *nl;
    unsigned char *gone = w2l__arena_alloc(a, n + 1), *seen = w2l__arena_alloc(a, n + 1);
    W2L_NOMEM_IF(!gone || !seen, err);
    memset(gone, 0, n + 1);
    memset(seen, 0, n + 1);
    w2l__ice_manifest *made = w2l__arena_alloc(a, (n + 1) * sizeof *made);
    W2L_NOMEM_IF(!made, err);
    size_t nmade = 0;
    w2l_rc rc = W2L_OK;
    for (size_t g = 0; rc == W2L_OK && g < n; g++) {
        if (seen[g]) continue;
        const int content = list[g].content;
        const int32_t spec_id = list[g].spec_id;
        size_t count = 0;
        for (size_t i = g; i < n; i++)
            if (list[i].content == content && list[i].spec_id == spec_id) {
                seen[i] = 1;
                count++;
            }
        if (count < min_count) continue;
        const w2l__ice_spec *spec = w2l__ice_meta_spec(m, spec_id);
        if (!spec) continue; /* unknown spec: left alone */
        /* bins of small carried manifests, in list order, up to the target size each */
        size_t i = g;
        while (rc == W2L_OK && i < n) {
            size_t members[4096], nm = 0;
            int64_t bytes = 0;
            for (; i < n && nm < W2L_ARRAY_LEN(members) && bytes < target; i++) {
                const w2l__ice_manifest *x = &list[i];
                if (i < nown || x->content != content || x->spec_id != spec_id || x->seq == seq ||
                    x->length >= target)
                    continue;
                members[nm++] = i;
                bytes += x->length;
            }
            if (nm < 2) break;
            w2l__ice_entry *all = NULL;
            size_t nall = 0, cap = 0;
            for (size_t k = 0; rc == W2L_OK && k < nm; k++) {
                w2l__ice_entry *e;
                size_t ne;
                rc = w2l__ice_manifest_read(t->io, &list[members[k]], spec, a, &e, &ne, err);
                for (size_t q = 0; rc == W2L_OK && q < ne; q++) {
                    if (e[q].status == W2L_ICE_DELETED) continue;
                    if (nall == cap) {
                        cap = cap ? cap * 2 : 256;
                        w2l__ice_entry *na = w2l__realloc(all, cap * sizeof *na);
                        if (!na) {
                            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                            break;
                        }
                        all = na;
                    }
                    all[nall] = e[q];
                    all[nall++].status = W2L_ICE_EXISTING;
                }
            }
            if (rc == W2L_OK && nall) {
                char *path = metadata_file(m, "%lld-%s-m.avro", sid);
                if (!attempt_keep(at, path)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                else
                    rc = w2l__ice_manifest_write(t->io, t->pending, path, m, spec, content,
                                                 sid, all, nall, a, &made[nmade], err);
                if (rc == W2L_OK) nmade++;
            }
            w2l__free(all);
            for (size_t k = 0; rc == W2L_OK && k < nm; k++) gone[members[k]] = 1;
            if (rc == W2L_OK) *merged += nm;
        }
    }
    if (rc != W2L_OK || !nmade) {
        if (rc == W2L_OK) { /* bins without live entries only: drop them */
            size_t w = 0;
            for (size_t i = 0; i < n; i++)
                if (!gone[i]) list[w++] = list[i];
            *nl = w;
        }
        return rc;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!gone[i]) list[w++] = list[i];
    for (size_t i = 0; i < nmade; i++) list[w++] = made[i];
    *nl = w;
    return W2L_OK;
}

static w2l_rc add_snapshot(w2l__ice_table *t, w2l__ice_change *c, attempt *at, w2l_error *err)
{
    w2l__ice_meta *m = t->meta;
    if (m->format_version != 2 && m->format_version != 3)
        return w2l__fail(err, W2L_MISUSE, "commits need a format version 2 or 3 table");
    if (!w2l__ice_meta_spec(m, m->default_spec_id))
        return w2l__fail(err, W2L_CORRUPT, "default-spec-id names no spec");
    if (!c->snapshot_id) c->snapshot_id = w2l__ice_random_id();
    const int64_t sid = c->snapshot_id, seq = m->last_seq + 1;
    if (w2l__ice_meta_snapshot(m, sid))
        return w2l__fail(err, W2L_EXISTS, "snapshot %lld exists", (long long)sid);
    if (!c->have_manifests) {
        W2L_TRY(write_own_manifests(t, c, sid, err));
    } else { /* a retry: the specs the manifests were written in must still be there */
        for (size_t i = 0; i < c->nown; i++)
            if (!w2l__ice_meta_spec(m, c->own[i].spec_id))
                return w2l__fail(err, W2L_SCHEMA, "partition spec %d vanished under the change",
                                 (int)c->own[i].spec_id);
    }

    const w2l__ice_snapshot *parent =
        m->current_snapshot_id != -1 ? w2l__ice_meta_snapshot(m, m->current_snapshot_id) : NULL;
    w2l__arena a;
    w2l__arena_init(&a, 1 << 16);
    w2l__ice_manifest *pl = NULL;
    size_t npl = 0;
    w2l_rc rc = W2L_OK;
    if (parent) rc = w2l__ice_manifest_list_read(t->io, parent->manifest_list, &a, &pl, &npl, err);
    totals tot = {0}, added = {0}, removed = {0};
    if (rc == W2L_OK) rc = parent_totals(t->io, m, parent, pl, npl, &a, &tot, err);

    size_t cap = npl + c->nown + 1, nl = 0;
    w2l__ice_manifest *list = w2l__arena_alloc(&a, cap * sizeof *list);
    if (rc == W2L_OK && !list) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < c->nown; i++) list[nl++] = c->own[i];
    phashes parts = {0};
    for (size_t i = 0; i < c->nfiles + c->ndeletes; i++) {
        const w2l__ice_data_file *f = i < c->nfiles ? &c->files[i] : &c->deletes[i - c->nfiles];
        account(&added, f, 1);
        phash_add(&parts, m, f, f->spec_id < 0 ? m->default_spec_id : f->spec_id);
    }

    /* replace: the removed paths, sorted, and which of them were found live; row delta of
     * a v3 table: the deletion vectors its own replace (merged into them, dv.c) */
    const char **rm = NULL;
    unsigned char *rm_hit = NULL;
    if (rc == W2L_OK && (c->op == W2L_ICE_OP_REPLACE || c->op == W2L_ICE_OP_ROW_DELTA) &&
        c->nremoved) {
        rm = w2l__arena_alloc(&a, c->nremoved * sizeof *rm);
        rm_hit = w2l__arena_alloc(&a, c->nremoved);
        if (!rm || !rm_hit) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else {
            memcpy(rm, c->removed, c->nremoved * sizeof *rm);
            memset(rm_hit, 0, c->nremoved);
            qsort(rm, c->nremoved, sizeof *rm, cmp_path);
        }
    }
    for (size_t i = 0; rc == W2L_OK && i < npl; i++) {
        const w2l__ice_manifest *pm = &pl[i];
        if (pm->added_files + pm->existing_files == 0) continue; /* nothing live: dropped */
        if (c->op != W2L_ICE_OP_TRUNCATE && !rm) {
            list[nl++] = *pm;
            continue;
        }
        /* truncate: every live entry goes; replace (and a row delta's replaced deletion
         * vectors): the removed files go. Either way the manifest is rewritten with those
         * entries DELETED, the others EXISTING. */
        w2l__ice_entry *e;
        size_t ne;
        rc =
            w2l__ice_manifest_read(t->io, pm, w2l__ice_meta_spec(m, pm->spec_id), &a, &e, &ne, err);
        size_t out = 0, hits = 0;
        for (size_t k = 0; rc == W2L_OK && k < ne; k++) {
            if (e[k].status == W2L_ICE_DELETED) continue;
            w2l__ice_entry x = e[k];
            int gone = c->op == W2L_ICE_OP_TRUNCATE;
            if (!gone) {
                const char *key = x.file.path;
                const char **f = bsearch(&key, rm, c->nremoved, sizeof *rm, cmp_path);
                if (f) {
                    gone = 1;
                    rm_hit[f - rm] = 1;
                }
            }
            if (gone) {
                x.status = W2L_ICE_DELETED;
                x.snapshot_id = sid;
                account(&removed, &x.file, 1);
                phash_add(&parts, m, &x.file, pm->spec_id);
                hits++;
            } else {
                x.status = W2L_ICE_EXISTING;
            }
            e[out++] = x;
        }
        if (rc != W2L_OK) break;
        if (!hits) {
            list[nl++] = *pm;
            continue;
        }
        const w2l__ice_spec *ps = w2l__ice_meta_spec(m, pm->spec_id);
        if (!ps) {
            rc = w2l__fail(err, W2L_CORRUPT, "%s: %s has an unknown partition spec",
                           c->op == W2L_ICE_OP_TRUNCATE ? "truncate" : "replace", pm->path);
            break;
        }
        char *path = metadata_file(m, "%lld-%s-d.avro", sid);
        if (!attempt_keep(at, path)) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        rc = w2l__ice_manifest_write(t->io, t->pending, path, m, ps, pm->content, sid, e, out,
                                     &a, &list[nl], err);
        if (rc == W2L_OK) {
            list[nl].seq = seq; /* written by this snapshot */
            if (list[nl].min_seq < 0) list[nl].min_seq = seq;
            nl++;
        }
    }
    for (size_t i = 0; rc == W2L_OK && rm && i < c->nremoved; i++)
        if (!rm_hit[i])
            rc = w2l__fail(err, W2L_CONFLICT, "%s: %s is no longer live in the table",
                           c->op == W2L_ICE_OP_REPLACE ? "replace" : "row delta", rm[i]);
    size_t nown = c->nown;
    c->merged_manifests = 0;
    if (rc == W2L_OK)
        rc = merge_manifests(t, sid, seq, list, &nl, nown, at, &a, &c->merged_manifests, err);
    char *list_path = NULL;
    if (rc == W2L_OK) {
        char fmt[64];
        snprintf(fmt, sizeof fmt, "snap-%%lld-%lld-%%s.avro", (long long)seq);
        list_path = metadata_file(m, fmt, sid);
        if (!attempt_keep(at, list_path)) {
            list_path = NULL;
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    }
    /* row lineage (v3): the change's own data manifests get the next row ids, in list
     * order; the others keep theirs */
    int64_t first_row_id = m->next_row_id, added_rows = 0;
    for (size_t i = 0; rc == W2L_OK && m->format_version >= 3 && i < nown; i++) {
        if (list[i].content != W2L_ICE_MANIFEST_DATA || list[i].has_first_row_id) continue;
        list[i].has_first_row_id = 1;
        list[i].first_row_id = first_row_id + added_rows;
        added_rows += list[i].added_rows + list[i].existing_rows;
    }
    if (rc == W2L_OK)
        rc = w2l__ice_manifest_list_write(t->io, t->pending, list_path, m->format_version, sid,
                                          parent ? parent->snapshot_id : -1, seq, list, nl, err);

    /* the snapshot */
    w2l__ice_snapshot s;
    memset(&s, 0, sizeof s);
    s.snapshot_id = sid;
    s.parent_id = parent ? parent->snapshot_id : -1;
    s.seq = seq;
    s.timestamp_ms = W2L_MAX(w2l__now_ms(), m->last_updated_ms);
    s.schema_id = m->current_schema_id;
    if (m->format_version >= 3) {
        s.has_row_range = 1;
        s.first_row_id = first_row_id;
        s.added_rows = added_rows;
    }
    const char *op = c->op == W2L_ICE_OP_TRUNCATE
                         ? (c->nfiles || c->ndeletes ? "overwrite" : "delete")
                     : c->op == W2L_ICE_OP_REPLACE ? "replace"
                     : c->ndeletes                 ? "overwrite"
                                                   : "append";
    w2l__ice_props *sum = &s.summary;
    if (rc == W2L_OK) rc = w2l__ice_props_set(sum, "operation", op, err);
    int64_t add_eq_files = 0, add_pos_files = 0;
    for (size_t i = 0; i < c->ndeletes; i++) {
        if (c->deletes[i].content == W2L_ICE_EQ_DELETES) add_eq_files++;
        else add_pos_files++;
    }
    struct { const char *k; int64_t v; int always; } kv[] = {
        {"added-data-files", added.data_files, 0},
        {"added-records", added.records, 0},
        {"added-files-size", added.files_size, 0},
        {"added-delete-files", added.delete_files, 0},
        {"added-equality-delete-files", add_eq_files, 0},
        {"added-position-delete-files", add_pos_files, 0},
        {"added-equality-deletes", added.eq_deletes, 0},
        {"added-position-deletes", added.pos_deletes, 0},
        {"deleted-data-files", removed.data_files, 0},
        {"deleted-records", removed.records, 0},
        {"removed-files-size", removed.files_size, 0},
        {"removed-delete-files", removed.delete_files, 0},
        {"removed-equality-deletes", removed.eq_deletes, 0},
        {"removed-position-deletes", removed.pos_deletes, 0},
        {"changed-partition-count", phash_distinct(&parts), 0},
        {"total-records", tot.records + added.records - removed.records, 1},
        {"total-files-size", tot.files_size + added.files_size - removed.files_size, 1},
        {"total-data-files", tot.data_files + added.data_files - removed.data_files, 1},
        {"total-delete-files", tot.delete_files + added.delete_files - removed.delete_files, 1},
        {"total-position-deletes", tot.pos_deletes + added.pos_deletes - removed.pos_deletes, 1},
        {"total-equality-deletes", tot.eq_deletes + added.eq_deletes - removed.eq_deletes, 1},
    };
    for (size_t i = 0; rc == W2L_OK && i < W2L_ARRAY_LEN(kv); i++)
        rc = put_num(sum, kv[i].k, kv[i].v, kv[i].always, err);
    /* a maintenance commit carries the w2l.* keys forward: restore finds the job's last
     * checkpoint in the newest snapshot that has them (and a scheduler reading the current
     * snapshot's completeness mark still finds it, Kafka Connect's key included) */
    for (size_t i = 0;
         rc == W2L_OK && c->op == W2L_ICE_OP_REPLACE && parent && i < parent->summary.n; i++)
        if (strncmp(parent->summary.kv[i].key, "w2l.", 4) == 0 ||
            strcmp(parent->summary.kv[i].key, "kafka.connect.valid-through-ts") == 0)
            rc = w2l__ice_props_set(sum, parent->summary.kv[i].key, parent->summary.kv[i].value,
                                    err);
    if (rc == W2L_OK && c->merged_manifests)
        rc = put_num(sum, "manifests-replaced", (int64_t)c->merged_manifests, 0, err);
    for (size_t i = 0; rc == W2L_OK && i < c->nsummary; i++)
        rc = w2l__ice_props_set(sum, c->summary[i].key, c->summary[i].value, err);
    if (rc == W2L_OK) {
        s.manifest_list = w2l__strdup(list_path);
        if (!s.manifest_list) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__ice_snapshot *ns =
        rc == W2L_OK ? w2l__realloc(m->snapshots, (m->nsnapshots + 1) * sizeof *ns) : NULL;
    w2l__ice_log_entry *nlog =
        ns ? w2l__realloc(m->snap_log, (m->nsnap_log + 1) * sizeof *nlog) : NULL;
    if (ns) m->snapshots = ns;
    if (nlog) m->snap_log = nlog;
    if (rc == W2L_OK && (!ns || !nlog)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        w2l__free(s.manifest_list);
        w2l__ice_props_clear(&s.summary);
        w2l__arena_release(&a);
        w2l__free(parts.v);
        return rc;
    }
    w2l__free(parts.v);
    m->snapshots[m->nsnapshots++] = s;
    m->snap_log[m->nsnap_log++] = (w2l__ice_log_entry){s.timestamp_ms, sid, NULL};
    m->current_snapshot_id = sid;
    m->last_seq = seq;
    if (m->format_version >= 3) m->next_row_id = first_row_id + added_rows;
    m->last_updated_ms = s.timestamp_ms;
    /* refs.main follows the current snapshot */
    w2l__ice_ref *main_ref = NULL;
    for (size_t i = 0; i < m->nrefs; i++)
        if (strcmp(m->refs[i].name, "main") == 0) main_ref = &m->refs[i];
    w2l__json *rj = w2l__json_new_object();
    if (!rj || w2l__json_add(rj, "snapshot-id", w2l__json_new_int64(sid)) ||
        w2l__json_add(rj, "type", w2l__json_new_string("branch"))) {
        w2l__json_free(rj);
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    } else if (main_ref) {
        w2l__json_free(main_ref->json);
        main_ref->json = rj;
        main_ref->snapshot_id = sid;
    } else {
        w2l__ice_ref *nr = w2l__realloc(m->refs, (m->nrefs + 1) * sizeof *nr);
        char *name = w2l__strdup("main");
        if (!nr || !name) {
            if (nr) m->refs = nr;
            w2l__free(name);
            w2l__json_free(rj);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        } else {
            m->refs = nr;
            m->refs[m->nrefs++] = (w2l__ice_ref){name, sid, rj};
        }
    }
    w2l__arena_release(&a);
    return rc;
}

/* Removes the snapshots c->expire_ids names, except the current one and those a ref names;
 * their manifest lists go to c->expired_lists. The snapshot-log keeps the entries after the
 * newest removed one. */
static w2l_rc apply_expire(w2l__ice_meta *m, w2l__ice_change *c, w2l_error *err)
{
    c->expired_lists = NULL;
    c->nexpired_lists = 0;
    if (!c->nexpire || !m->nsnapshots) return W2L_OK;
    int64_t *ids = w2l__arena_alloc(&c->arena, c->nexpire * sizeof *ids);
    char **lists = w2l__arena_alloc(&c->arena, m->nsnapshots * sizeof *lists);
    W2L_NOMEM_IF(!ids || !lists, err);
    memcpy(ids, c->expire_ids, c->nexpire * sizeof *ids);
    qsort(ids, c->nexpire, sizeof *ids, cmp_id);
    size_t w = 0, n = 0;
    for (size_t i = 0; i < m->nsnapshots; i++) {
        w2l__ice_snapshot *s = &m->snapshots[i];
        int drop = bsearch(&s->snapshot_id, ids, c->nexpire, sizeof *ids, cmp_id) != NULL &&
                   s->snapshot_id != m->current_snapshot_id;
        for (size_t r = 0; drop && r < m->nrefs; r++)
            if (m->refs[r].snapshot_id == s->snapshot_id) drop = 0;
        if (!drop) {
            m->snapshots[w++] = *s;
            continue;
        }
        lists[n] = w2l__arena_strndup(&c->arena, s->manifest_list, strlen(s->manifest_list));
        if (!lists[n]) { /* keep it rather than lose track of its files */
            m->snapshots[w++] = *s;
            continue;
        }
        n++;
        w2l__free(s->manifest_list);
        w2l__ice_props_clear(&s->summary);
    }
    m->nsnapshots = w;
    /* snapshot-log: only entries after the newest removed snapshot */
    size_t cut = 0;
    for (size_t i = 0; i < m->nsnap_log; i++)
        if (!w2l__ice_meta_snapshot(m, m->snap_log[i].snapshot_id)) cut = i + 1;
    if (cut) {
        for (size_t i = 0; i < cut; i++) w2l__free(m->snap_log[i].file);
        memmove(m->snap_log, m->snap_log + cut, (m->nsnap_log - cut) * sizeof *m->snap_log);
        m->nsnap_log -= cut;
    }
    c->expired_lists = lists;
    c->nexpired_lists = n;
    m->last_updated_ms = W2L_MAX(w2l__now_ms(), m->last_updated_ms);
    return W2L_OK;
}

static w2l_rc apply(w2l__ice_table *t, w2l__ice_change *c, attempt *at, w2l_error *err)
{
    switch (c->op) {
    case W2L_ICE_OP_SCHEMA:
        W2L_TRY(apply_schema(t->meta, c, err));
        t->meta->last_updated_ms = W2L_MAX(w2l__now_ms(), t->meta->last_updated_ms);
        return W2L_OK;
    case W2L_ICE_OP_APPEND:
        if (c->ndeletes) return w2l__fail(err, W2L_MISUSE, "append with delete files");
        return add_snapshot(t, c, at, err);
    case W2L_ICE_OP_ROW_DELTA:
        return add_snapshot(t, c, at, err);
    case W2L_ICE_OP_TRUNCATE:
        /* every live file goes; files of the change (rows written after the truncate)
         * come in, in the same snapshot: an overwrite of the whole table */
        return add_snapshot(t, c, at, err);
    case W2L_ICE_OP_REPLACE:
        if (c->data_seq <= 0 || c->data_seq > t->meta->last_seq)
            return w2l__fail(err, W2L_MISUSE,
                             "replace: data sequence number %lld is not the table's",
                             (long long)c->data_seq);
        return add_snapshot(t, c, at, err);
    case W2L_ICE_OP_EXPIRE:
        return apply_expire(t->meta, c, err);
    }
    return w2l__fail(err, W2L_MISUSE, "unknown operation %d", (int)c->op);
}

w2l_rc w2l__ice_apply(w2l__ice_table *t, w2l__ice_change *c, w2l_error *err)
{
    attempt at = {0};
    w2l_rc rc = apply(t, c, &at, err);
    attempt_cleanup(&at, t->io, rc != W2L_OK);
    return rc;
}

/* ---- commit orchestration lives in table.c; this is the per-attempt step it uses ---- */

/* 1 when path is the metadata file loc or one m's metadata-log keeps. */
static int names_live_metadata(const w2l__ice_meta *m, const char *loc, const char *path)
{
    const char *p = w2l__ice_local_path(path);
    if (strcmp(p, w2l__ice_local_path(loc)) == 0) return 1;
    for (size_t i = 0; i < m->nmeta_log; i++)
        if (strcmp(p, w2l__ice_local_path(m->meta_log[i].file)) == 0) return 1;
    return 0;
}

struct w2l__ice_prep {
    char *base;       /* the metadata location the change was applied to */
    attempt at;       /* the attempt's files (manifests, list) */
    char **trimmed;   /* metadata files that fell out of the log */
    size_t ntrimmed;
    char *text;       /* the new metadata */
    size_t len;
};

const char *w2l__ice_prep_base(const w2l__ice_prep *p) { return p->base; }

const char *w2l__ice_prep_metadata(const w2l__ice_prep *p, size_t *len)
{
    *len = p->len;
    return p->text;
}

/* Frees p; remove: also the attempt's files (never committed). */
static void prep_free(w2l__ice_prep *p, w2l_fileio *io, int remove)
{
    attempt_cleanup(&p->at, io, remove);
    for (size_t i = 0; i < p->ntrimmed; i++) w2l__free(p->trimmed[i]);
    w2l__free(p->trimmed);
    w2l__free(p->text);
    w2l__free(p->base);
    w2l__free(p);
}

/* Back to what the catalog says after a failed attempt (t->meta holds the failed change):
 * rc, or the reload's error. */
static w2l_rc back_to_catalog(w2l__ice_table *t, w2l_rc rc, w2l_error *err)
{
    w2l_error e2;
    w2l_rc rr = w2l__ice_table_refresh(t, &e2);
    if (rr != W2L_OK) { /* never retry on the half-applied metadata */
        w2l__log(W2L_LOG_WARN, "reload after failed commit: %s", e2.msg);
        if (err) *err = e2;
        return rr == W2L_CONFLICT ? W2L_ERROR : rr;
    }
    return rc;
}

w2l_rc w2l__ice_table_prepare(w2l__ice_table *t, w2l__ice_change *c, w2l__ice_prep **out,
                              w2l_error *err)
{
    *out = NULL;
    w2l__ice_prep *pr = w2l__calloc(1, sizeof *pr);
    if (!pr || !(pr->base = w2l__strdup(t->meta_location))) {
        w2l__free(pr);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    const char *base = pr->base;
    int64_t base_ts = t->meta->last_updated_ms;
    /* the attempt's manifests and list are closed together, durable before the metadata
     * that names them is committed (w2l_file_close_many: one wait on the disk) */
    w2l__file_batch pend = {0};
    t->pending = &pend;
    int own_pending = !c->have_manifests;
    w2l_rc rc = apply(t, c, &pr->at, err);
    t->pending = NULL;
    if (rc == W2L_OK) rc = w2l__file_batch_close(t->io, &pend, err);
    w2l__file_batch_release(&pend);
    if (rc != W2L_OK && own_pending && c->have_manifests)
        w2l__ice_change_unwrite(c, t->io); /* they were among them: written again by a retry */
    w2l__ice_meta *m = t->meta;
    const char *dac = w2l__ice_props_get(&m->props, "write.metadata.delete-after-commit.enabled");
    const int delete_old = dac && strcmp(dac, "true") == 0;
    if (rc == W2L_OK) { /* metadata-log: the file this commit replaces */
        const char *keep_s = w2l__ice_props_get(&m->props, "write.metadata.previous-versions-max");
        size_t keep = keep_s ? (size_t)strtoul(keep_s, NULL, 10) : 100;
        w2l__ice_log_entry *nl = w2l__realloc(m->meta_log, (m->nmeta_log + 1) * sizeof *nl);
        char *f = w2l__strdup(base);
        if (!nl || !f) {
            if (nl) m->meta_log = nl;
            w2l__free(f);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        } else {
            m->meta_log = nl;
            m->meta_log[m->nmeta_log++] = (w2l__ice_log_entry){base_ts, 0, f};
            while (keep && m->nmeta_log > keep) {
                char **nt = delete_old
                                ? w2l__realloc(pr->trimmed, (pr->ntrimmed + 1) * sizeof *nt)
                                : NULL;
                if (nt) {
                    pr->trimmed = nt;
                    pr->trimmed[pr->ntrimmed++] = m->meta_log[0].file;
                } else {
                    w2l__free(m->meta_log[0].file);
                }
                memmove(m->meta_log, m->meta_log + 1, (m->nmeta_log - 1) * sizeof *m->meta_log);
                m->nmeta_log--;
            }
        }
    }
    if (rc == W2L_OK) rc = w2l__ice_meta_print(m, &pr->text, &pr->len, err);
    if (rc != W2L_OK) {
        prep_free(pr, t->io, 1);
        return back_to_catalog(t, rc, err);
    }
    *out = pr;
    return W2L_OK;
}

w2l_rc w2l__ice_table_finish(w2l__ice_table *t, w2l__ice_prep *pr, w2l_rc rc, const char *loc,
                             const w2l_error *cerr, w2l_error *err)
{
    /* the catalog could not tell whether the commit landed: what it names may be live */
    int outcome_unknown = rc == W2L_UNAVAILABLE;
    if (rc != W2L_OK && err && cerr) *err = *cerr;
    char *newloc = rc == W2L_OK ? w2l__strdup(loc) : NULL;
    if (rc == W2L_OK && !newloc) {
        /* committed, but the location cannot be kept: the table is reloaded below */
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        outcome_unknown = 1;
    }
    attempt_cleanup(&pr->at, t->io, rc != W2L_OK && !outcome_unknown);
    for (size_t i = 0; i < pr->ntrimmed; i++) {
        w2l_error e2;
        /* only a file beside the new one (a renamed table's log still names the files of its
         * old directory, where a table created under the old name now writes its own), and
         * never a name the new metadata still uses: the hadoop catalog reuses vN names after a
         * table is dropped and renamed back, so an old log entry may name a live file */
        if (rc == W2L_OK &&
            w2l__ice_same_dir(w2l__ice_local_path(pr->trimmed[i]), w2l__ice_local_path(loc)) &&
            !names_live_metadata(t->meta, loc, pr->trimmed[i]))
            w2l_fileio_remove(t->io, w2l__ice_local_path(pr->trimmed[i]), &e2);
    }
    prep_free(pr, t->io, 0);
    if (rc == W2L_OK) {
        w2l__free(t->meta_location);
        t->meta_location = newloc;
        return W2L_OK;
    }
    return back_to_catalog(t, rc, err);
}

w2l_rc w2l__ice_table_try_commit(w2l__ice_table *t, w2l__ice_change *c, w2l_error *err)
{
    w2l__ice_prep *pr;
    W2L_TRY(w2l__ice_table_prepare(t, c, &pr, err));
    size_t len;
    const char *text = w2l__ice_prep_metadata(pr, &len);
    w2l_buf loc = {0};
    w2l_error cerr;
    w2l_error_clear(&cerr);
    w2l_rc rc = w2l__catalog_commit(t->catalog, t->ns, t->name, pr->base, text, len, &loc, &cerr);
    rc = w2l__ice_table_finish(t, pr, rc, (const char *)loc.data, &cerr, err);
    w2l_buf_release(&loc);
    return rc;
}
