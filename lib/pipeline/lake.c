/*
 * Lake inspection (include/w2l/lake.h): the public, read-only view of a warehouse that
 * `w2l tables`, `w2l cat` and `w2l status` use. Tables come from the catalog and their
 * current metadata (snapshot summaries: total-records, total-files-size, ...; the w2l.*
 * keys of w2l-design(7) section 2.4; the current manifest list, for its manifest count), rows from
 * the Iceberg scan of lib/iceberg (deletes applied), and checkpoint progress from the state store:
 * the newest sealed checkpoint, its source position, and the committer's pending file lists
 * (lib/pipeline/ops.h), which say per table which sealed checkpoints are not yet committed.
 *
 * Nothing here writes: the state store is opened, read and closed within one call.
 */
#include <stdlib.h>
#include <string.h>

#include "complete.h"
#include "lake_int.h"
#include "lastrun.h"
#include "standbys.h"
#include "ops.h"
#include "../io/io.h"

struct w2l_lake {
    w2l_conf *conf;
    char *warehouse;
    w2l_fileio *io;
    w2l_catalog *cat;
    char *complete_job; /* w2l_complete_info.job_id of the last w2l_table_complete_through() */
    char *last_run;     /* the strings of the last w2l_lake_last_run() */
};

w2l_rc w2l_lake_open(const w2l_conf *conf, w2l_lake **out, w2l_error *err)
{
    if (!out) return w2l__fail(err, W2L_MISUSE, "w2l_lake_open: NULL out");
    *out = NULL;
    if (!conf) return w2l__fail(err, W2L_MISUSE, "w2l_lake_open: NULL conf");
    W2L_TRY(w2l_conf_require(conf, "warehouse", err));
    w2l_lake *l = w2l__calloc(1, sizeof *l);
    W2L_NOMEM_IF(!l, err);
    const char *wh = NULL, *cat = NULL;
    w2l_rc rc = W2L_OK;
    l->conf = w2l_conf_dup(conf);
    if (!l->conf) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = w2l_conf_get(l->conf, "warehouse", &wh, err);
    if (rc == W2L_OK) {
        /* the catalog and file IO expect no trailing slash; "/" stays "/" */
        size_t n = strlen(wh);
        while (n > 1 && wh[n - 1] == '/') n--;
        l->warehouse = w2l__strndup(wh, n);
        if (!l->warehouse) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l_conf_get(l->conf, "catalog", &cat, NULL);
    if (rc == W2L_OK) rc = w2l__fileio_open_for(l->conf, l->warehouse, &l->io, err);
    if (rc == W2L_OK) {
        int exists = 0;
        rc = w2l_fileio_exists(l->io, l->warehouse, &exists, err);
        if (rc == W2L_OK && !exists)
            rc = w2l__fail(err, W2L_NOTFOUND, "warehouse %s: no such directory", l->warehouse);
    }
    if (rc == W2L_OK) rc = w2l__catalog_open(cat, l->conf, l->warehouse, l->io, &l->cat, err);
    if (rc != W2L_OK) {
        w2l_lake_close(l);
        return rc;
    }
    *out = l;
    return W2L_OK;
}

void w2l_lake_close(w2l_lake *l)
{
    if (!l) return;
    w2l__catalog_close(l->cat);
    w2l_fileio_close(l->io);
    w2l__free(l->warehouse);
    w2l__free(l->complete_job);
    w2l__free(l->last_run);
    w2l_conf_free(l->conf);
    w2l__free(l);
}

/* ------------------------------------------------------------------ table names ----- */

typedef struct tname {
    char *ns, *table;
    uint64_t committed;
    uint64_t pending, oldest;
    uint64_t last_seen; /* the last pending checkpoint counted (keys come in order) */
    char *quarantined;  /* why the table is set aside, from the DDL handlers' state; NULL */
    uint64_t rows_quarantined;
} tname;

typedef struct tlist {
    tname *v;
    size_t n, cap;
    int oom;
} tlist;

static tname *tlist_add(tlist *l, const char *ns, const char *table)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tname *v = w2l__realloc(l->v, cap * sizeof *v);
        if (!v) return NULL;
        l->v = v;
        l->cap = cap;
    }
    tname *t = &l->v[l->n];
    memset(t, 0, sizeof *t);
    t->ns = w2l__strdup(ns);
    t->table = w2l__strdup(table);
    if (!t->ns || !t->table) {
        w2l__free(t->ns);
        w2l__free(t->table);
        return NULL;
    }
    l->n++;
    return t;
}

static void tlist_free(tlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        w2l__free(l->v[i].ns);
        w2l__free(l->v[i].table);
        w2l__free(l->v[i].quarantined);
    }
    w2l__free(l->v);
    memset(l, 0, sizeof *l);
}

static int tname_cmp(const void *a, const void *b)
{
    const tname *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->table, y->table);
}

static int collect_table(void *ctx, const char *ns, const char *table)
{
    tlist *l = ctx;
    if (!tlist_add(l, ns, table)) {
        l->oom = 1;
        return 1;
    }
    return 0;
}

/* Every table of the catalog, sorted. */
static w2l_rc list_tables(w2l_lake *l, tlist *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    w2l_rc rc = w2l__catalog_list(l->cat, NULL, collect_table, out, err);
    if (rc == W2L_OK && out->oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        tlist_free(out);
        return rc;
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, tname_cmp);
    return W2L_OK;
}

static tname *tlist_find(tlist *l, const char *ns, const char *table)
{
    tname key;
    memset(&key, 0, sizeof key);
    key.ns = (char *)ns;
    key.table = (char *)table;
    return l->n ? bsearch(&key, l->v, l->n, sizeof *l->v, tname_cmp) : NULL;
}

/* ------------------------------------------------------------------ snapshots ------- */

static uint64_t sum_u64(const w2l__ice_snapshot *s, const char *key)
{
    const char *v = s ? w2l__ice_props_get(&s->summary, key) : NULL;
    return v ? strtoull(v, NULL, 10) : 0;
}

/* The timestamp of the newest snapshot of m whose operation is "replace" (a compaction);
 * -1 when none is left in the metadata (expiry removes old ones). */
static int64_t last_compaction(const w2l__ice_meta *m)
{
    int64_t ts = -1;
    for (size_t i = 0; i < m->nsnapshots; i++) {
        const char *op = w2l__ice_props_get(&m->snapshots[i].summary, "operation");
        if (op && strcmp(op, "replace") == 0 && m->snapshots[i].timestamp_ms > ts)
            ts = m->snapshots[i].timestamp_ms;
    }
    return ts;
}

/* How many manifests the manifest list of snapshot s names (0 without a snapshot). */
static w2l_rc count_manifests(w2l_fileio *io, const w2l__ice_snapshot *s, uint64_t *out,
                              w2l_error *err)
{
    *out = 0;
    if (!s || !s->manifest_list) return W2L_OK;
    w2l__arena a;
    w2l__arena_init(&a, 1 << 14);
    w2l__ice_manifest *ml = NULL;
    size_t n = 0;
    w2l_rc rc = w2l__ice_manifest_list_read(io, s->manifest_list, &a, &ml, &n, err);
    if (rc == W2L_OK) *out = n;
    w2l__arena_release(&a);
    return rc;
}

w2l_rc w2l_lake_tables(w2l_lake *l, int (*fn)(void *ctx, const w2l_table_info *info), void *ctx,
                       w2l_error *err)
{
    if (!l || !fn) return w2l__fail(err, W2L_MISUSE, "w2l_lake_tables: NULL lake or callback");
    tlist names;
    W2L_TRY(list_tables(l, &names, err));
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < names.n; i++) {
        w2l__ice_table *t = NULL;
        rc = w2l__ice_table_load(l->cat, l->io, names.v[i].ns, names.v[i].table, &t, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "table %s.%s: ", names.v[i].ns, names.v[i].table);
            break;
        }
        const w2l__ice_meta *m = t->meta;
        const w2l__ice_snapshot *cur =
            m->current_snapshot_id == -1 ? NULL : w2l__ice_meta_snapshot(m, m->current_snapshot_id);
        const w2l__ice_snapshot *ck = w2l__ice_meta_newest_checkpoint(m, NULL, &rc, err);
        w2l_table_info info;
        memset(&info, 0, sizeof info);
        info.ns = t->ns;
        info.table = t->name;
        info.metadata = t->meta_location;
        info.snapshots = m->nsnapshots;
        info.current_snapshot_id = cur ? cur->snapshot_id : -1;
        info.rows = sum_u64(cur, "total-records");
        info.data_files = sum_u64(cur, "total-data-files");
        info.delete_files = sum_u64(cur, "total-delete-files");
        info.bytes = sum_u64(cur, "total-files-size");
        info.last_checkpoint = sum_u64(ck, "w2l.checkpoint-id");
        info.job_id = ck ? w2l__ice_props_get(&ck->summary, "w2l.job-id") : NULL;
        info.schema_id = m->current_schema_id;
        info.last_commit_ms = cur ? cur->timestamp_ms : -1;
        info.equality_deletes = sum_u64(cur, "total-equality-deletes");
        info.position_deletes = sum_u64(cur, "total-position-deletes");
        info.last_compaction_ms = last_compaction(m);
        info.spec_id = m->default_spec_id;
        char *pby = w2l__ice_spec_format(w2l__ice_meta_spec(m, m->default_spec_id),
                                         w2l__ice_meta_current_schema(m));
        if (!pby && rc == W2L_OK) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        info.partition_by = pby;
        if (rc == W2L_OK) {
            rc = count_manifests(l->io, cur, &info.manifests, err);
            if (rc != W2L_OK) w2l__error_prefix(err, "table %s.%s: ", t->ns, t->name);
        }
        int stop = rc == W2L_OK ? fn(ctx, &info) : 0;
        w2l__free(pby);
        w2l__ice_table_free(t);
        if (stop) break;
    }
    tlist_free(&names);
    return rc;
}

/* ------------------------------------------------------------------ scan ------------ */

typedef struct scan_ctx {
    const w2l_schema *schema;
    int (*fn)(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n);
    void *ctx;
} scan_ctx;

static int scan_row(void *ctx, const w2l_value *row, size_t n)
{
    scan_ctx *s = ctx;
    return s->fn(s->ctx, s->schema, row, n);
}

w2l_rc w2l_lake_scan(w2l_lake *l, const char *ns, const char *table, int64_t snapshot_id,
                     int (*fn)(void *ctx, const w2l_schema *schema, const w2l_value *row, size_t n),
                     void *ctx, w2l_error *err)
{
    if (!l || !ns || !table || !fn)
        return w2l__fail(err, W2L_MISUSE, "w2l_lake_scan: NULL argument");
    if (snapshot_id < -1)
        return w2l__fail(err, W2L_MISUSE, "w2l_lake_scan: snapshot id %lld",
                         (long long)snapshot_id);
    w2l__ice_table *t = NULL;
    w2l_rc rc = w2l__ice_table_load(l->cat, l->io, ns, table, &t, err);
    if (rc != W2L_OK) {
        if (rc == W2L_NOTFOUND)
            return w2l__fail(err, W2L_NOTFOUND, "table %s.%s not found in warehouse %s", ns, table,
                             l->warehouse);
        w2l__error_prefix(err, "table %s.%s: ", ns, table);
        return rc;
    }
    w2l__ice_scan *s = NULL;
    rc = w2l__ice_scan_plan(l->io, t->meta, snapshot_id, NULL, NULL, &s, err);
    if (rc == W2L_NOTFOUND && snapshot_id != -1)
        rc = w2l__fail(err, W2L_NOTFOUND, "table %s.%s has no snapshot %lld", ns, table,
                       (long long)snapshot_id);
    else if (rc == W2L_OK && !s->schema)
        rc = w2l__fail(err, W2L_SCHEMA,
                       "table %s.%s: the schema has types this reader does not support", ns, table);
    if (rc == W2L_OK) {
        scan_ctx sc = {s->schema, fn, ctx};
        rc = w2l__ice_scan_read(l->io, s, scan_row, &sc, err);
        if (rc != W2L_OK && rc != W2L_CANCELLED) w2l__error_prefix(err, "table %s.%s: ", ns, table);
    } else if (rc != W2L_NOTFOUND) {
        w2l__error_prefix(err, "table %s.%s: ", ns, table);
    }
    w2l__ice_scan_free(s);
    w2l__ice_table_free(t);
    return rc;
}

/* ------------------------------------------------------------------ checkpoints ----- */

typedef struct keys_ctx {
    w2l_state *st;
    uint64_t sealed;
    tlist *tables;  /* sorted: the catalog's */
    tlist extra;    /* tables only the state names, in first-seen order */
    w2l_rc rc;
    w2l_error *err;
} keys_ctx;

/* One "committer/files/<C>/<ns>.<table>" key: count C for its table. The value names
 * the table and checkpoint plainly (the key percent-encodes them). */
static int pending_key(void *ctx, const char *key)
{
    keys_ctx *k = ctx;
    w2l_buf b = {0};
    w2l__json *j = NULL;
    k->rc = w2l_state_get(k->st, k->sealed, key, &b, k->err);
    if (k->rc == W2L_OK)
        k->rc = w2l__json_parse(b.data ? (const char *)b.data : "", b.len, &j, k->err);
    const char *ns = j ? w2l__json_str(w2l__json_get(j, "ns")) : NULL;
    const char *table = j ? w2l__json_str(w2l__json_get(j, "table")) : NULL;
    int64_t ck = 0;
    if (k->rc == W2L_OK &&
        (!ns || !table || w2l__json_int64(w2l__json_get(j, "checkpoint"), &ck) || ck < 1))
        k->rc = w2l__fail(k->err, W2L_CORRUPT,
                          "state key %s of checkpoint %llu: expected ns, table and checkpoint", key,
                          (unsigned long long)k->sealed);
    if (k->rc == W2L_OK) {
        tname *t = tlist_find(k->tables, ns, table);
        for (size_t i = 0; !t && i < k->extra.n; i++)
            if (strcmp(k->extra.v[i].ns, ns) == 0 && strcmp(k->extra.v[i].table, table) == 0)
                t = &k->extra.v[i];
        if (!t && !(t = tlist_add(&k->extra, ns, table)))
            k->rc = w2l__fail(k->err, W2L_NOMEM, "out of memory");
        /* keys come in byte order, checkpoint first (20 digits): one count per checkpoint */
        if (t && (uint64_t)ck > t->committed && (uint64_t)ck != t->last_seen) {
            t->pending++;
            if (!t->oldest || (uint64_t)ck < t->oldest) t->oldest = (uint64_t)ck;
            t->last_seen = (uint64_t)ck;
        }
    }
    w2l__json_free(j);
    w2l_buf_release(&b);
    return k->rc != W2L_OK;
}

/* The table's entry: the catalog's, or one of the state's only (added). NULL: no memory. */
static tname *state_table(keys_ctx *k, const char *ns, const char *table)
{
    tname *t = tlist_find(k->tables, ns, table);
    for (size_t i = 0; !t && i < k->extra.n; i++)
        if (strcmp(k->extra.v[i].ns, ns) == 0 && strcmp(k->extra.v[i].table, table) == 0)
            t = &k->extra.v[i];
    return t ? t : tlist_add(&k->extra, ns, table);
}

/* One "ddl/<index>" key (lib/pipeline/op_ddl.c): the tables it holds quarantined, with
 * the reason and the changes dropped since. "ddl/ops/..." keys are the owner's. */
static int ddl_key(void *ctx, const char *key)
{
    keys_ctx *k = ctx;
    if (!strncmp(key, W2L_OPS_DDL_OPS_PREFIX, strlen(W2L_OPS_DDL_OPS_PREFIX))) return 0;
    w2l_buf b = {0};
    w2l__json *j = NULL;
    k->rc = w2l_state_get(k->st, k->sealed, key, &b, k->err);
    if (k->rc == W2L_OK)
        k->rc = w2l__json_parse(b.data ? (const char *)b.data : "", b.len, &j, k->err);
    if (k->rc != W2L_OK && k->rc != W2L_NOMEM)
        w2l__error_prefix(k->err, "state key %s of checkpoint %llu: ", key,
                          (unsigned long long)k->sealed);
    for (w2l__json *o = j ? w2l__json_first(w2l__json_get(j, "tables")) : NULL;
         k->rc == W2L_OK && o; o = w2l__json_next(o)) {
        int q = 0;
        const char *ns = w2l__json_str(w2l__json_get(o, "ns")),
                   *table = w2l__json_str(w2l__json_get(o, "table"));
        if (!ns || !table || w2l__json_bool(w2l__json_get(o, "quarantined"), &q) || !q) continue;
        const char *reason = w2l__json_str(w2l__json_get(o, "reason"));
        int64_t rows = 0;
        w2l__json_int64(w2l__json_get(o, "rows-quarantined"), &rows);
        tname *t = state_table(k, ns, table);
        char *r = t ? w2l__strdup(reason && *reason ? reason : "(no reason recorded)") : NULL;
        if (!r) {
            k->rc = w2l__fail(k->err, W2L_NOMEM, "out of memory");
            break;
        }
        w2l__free(t->quarantined);
        t->quarantined = r;
        t->rows_quarantined = rows > 0 ? (uint64_t)rows : 0;
    }
    w2l__json_free(j);
    w2l_buf_release(&b);
    return k->rc != W2L_OK;
}

/* The value of key at ckpt as a fresh C string; *out NULL when absent. */
static w2l_rc state_text(w2l_state *st, uint64_t ckpt, const char *key, char **out, w2l_error *err)
{
    *out = NULL;
    w2l_buf b = {0};
    w2l_rc rc = w2l_state_get(st, ckpt, key, &b, err);
    if (rc == W2L_NOTFOUND) return W2L_OK;
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    if (rc == W2L_OK) *out = (char *)b.data;
    else w2l_buf_release(&b);
    return rc;
}

/* The committed checkpoint of each catalog table (of job, or of any job when NULL). */
static w2l_rc committed_of(w2l_lake *l, tlist *tables, const char *job, w2l_error *err)
{
    for (size_t i = 0; i < tables->n; i++) {
        tname *tn = &tables->v[i];
        w2l__ice_table *t = NULL;
        w2l_rc rc = w2l__ice_table_load(l->cat, l->io, tn->ns, tn->table, &t, err);
        if (rc == W2L_NOTFOUND) continue; /* dropped meanwhile */
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "table %s.%s: ", tn->ns, tn->table);
            return rc;
        }
        const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(t->meta, job, &rc, err);
        tn->committed = sum_u64(s, "w2l.checkpoint-id");
        w2l__ice_table_free(t);
        W2L_TRY(rc);
    }
    return W2L_OK;
}

/* ---------------------------------------------------------- the snapshot's progress ---- */

void w2l__lake_snap_free(w2l__lake_snap *s)
{
    w2l__free(s->next_ns);
    w2l__free(s->next_table);
    for (size_t i = 0; i < s->nactive; i++) {
        w2l__free((char *)s->active[i].ns);
        w2l__free((char *)s->active[i].table);
    }
    w2l__free(s->active);
    memset(s, 0, sizeof *s);
}

/* A [db, name] pair: 1 when it is one. */
static int pair(const w2l__json *j, const char **db, const char **name)
{
    const w2l__json *a = w2l__json_type(j) == W2L_JSON_ARRAY ? w2l__json_first(j) : NULL;
    const w2l__json *b = a ? w2l__json_next(a) : NULL;
    *db = w2l__json_str(a);
    *name = w2l__json_str(b);
    return *db && *name;
}

w2l_rc w2l__lake_snap_parse(const char *pos, size_t len, w2l__lake_snap *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    w2l__json *j = NULL;
    w2l_error local;
    w2l_rc rc = w2l__json_parse(pos, len, &j, &local);
    if (rc == W2L_NOMEM) return w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) return W2L_OK; /* not JSON: no snapshot of ours */
    const w2l__json *c = w2l__json_type(j) == W2L_JSON_OBJECT ? w2l__json_get(j, "chunks") : NULL;
    if (!c || w2l__json_type(c) != W2L_JSON_OBJECT) {
        w2l__json_free(j);
        return W2L_OK;
    }
    out->running = 1;
    const char *db, *name;
    if (pair(w2l__json_get(c, "next"), &db, &name) &&
        (!(out->next_ns = w2l__strdup(db)) || !(out->next_table = w2l__strdup(name))))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (w2l__json *k = w2l__json_first(w2l__json_get(c, "skip")); k; k = w2l__json_next(k))
        out->skipped += (uint64_t)pair(k, &db, &name);
    const w2l__json *act = w2l__json_get(c, "active");
    size_t n = w2l__json_type(act) == W2L_JSON_ARRAY ? w2l__json_size(act) : 0;
    if (rc == W2L_OK && n && !(out->active = w2l__calloc(n, sizeof *out->active)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (w2l__json *a = n ? w2l__json_first(act) : NULL; a && rc == W2L_OK; a = w2l__json_next(a)) {
        if (!pair(w2l__json_get(a, "t"), &db, &name)) continue;
        w2l_snapshot_table *t = &out->active[out->nactive];
        int64_t rows = 0;
        if (w2l__json_int64(w2l__json_get(a, "rows"), &rows) != 0 || rows < 0) rows = 0;
        const w2l__json *r = w2l__json_get(a, "r");
        t->rows = (uint64_t)rows;
        t->ranges = w2l__json_type(r) == W2L_JSON_ARRAY ? w2l__json_size(r) : 0;
        t->ns = w2l__strdup(db);
        t->table = w2l__strdup(name);
        out->nactive++;
        if (!t->ns || !t->table) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__json_free(j);
    if (rc != W2L_OK) w2l__lake_snap_free(out);
    return rc;
}

w2l_rc w2l_lake_checkpoints(w2l_lake *l, int (*fn)(void *ctx, const w2l_checkpoint_info *info),
                            void *ctx, w2l_error *err)
{
    if (!l || !fn) return w2l__fail(err, W2L_MISUSE, "w2l_lake_checkpoints: NULL lake or callback");
    const char *uri = NULL;
    w2l_conf_get(l->conf, "state", &uri, NULL);
    w2l_state *st = NULL;
    W2L_TRY(w2l_state_open(uri, l->conf, &st, err));
    tlist tables;
    memset(&tables, 0, sizeof tables);
    keys_ctx k;
    memset(&k, 0, sizeof k);
    char *job = NULL, *epoch = NULL, *pos = NULL;
    uint64_t sealed = 0;
    w2l_rc rc = w2l_state_latest(st, &sealed, err);
    if (rc == W2L_NOTFOUND) {
        rc = W2L_OK;
        sealed = 0;
    }
    if (rc == W2L_OK && sealed) rc = state_text(st, sealed, W2L_OPS_JOB_KEY, &job, err);
    if (rc == W2L_OK && sealed) rc = state_text(st, sealed, W2L_OPS_EPOCH_KEY, &epoch, err);
    if (rc == W2L_OK && sealed) rc = state_text(st, sealed, "source/position", &pos, err);
    if (rc == W2L_OK) rc = list_tables(l, &tables, err);
    if (rc == W2L_OK) rc = committed_of(l, &tables, job, err);
    if (rc == W2L_OK && sealed) {
        k = (keys_ctx){st, sealed, &tables, {0}, W2L_OK, err};
        rc = w2l_state_keys(st, sealed, W2L_OPS_FILES_PREFIX, pending_key, &k, err);
        if (rc == W2L_OK) rc = k.rc;
        if (rc == W2L_OK) rc = w2l_state_keys(st, sealed, "ddl/", ddl_key, &k, err);
        if (rc == W2L_OK) rc = k.rc;
    }
    w2l__lake_snap snap;
    memset(&snap, 0, sizeof snap);
    if (rc == W2L_OK && pos) rc = w2l__lake_snap_parse(pos, strlen(pos), &snap, err);
    if (rc == W2L_OK) {
        w2l_checkpoint_info info;
        memset(&info, 0, sizeof info);
        info.sealed = sealed;
        info.job_id = job;
        info.epoch = epoch ? strtoull(epoch, NULL, 10) : 0;
        info.source_position = pos;
        info.snapshot = snap.running;
        info.snapshot_next_ns = snap.next_ns;
        info.snapshot_next_table = snap.next_table;
        info.snapshot_skipped = snap.skipped;
        info.snapshot_active = snap.active;
        info.snapshot_nactive = snap.nactive;
        int stop = fn(ctx, &info);
        for (int pass = 0; pass < 2 && !stop; pass++) {
            tlist *tl = pass ? &k.extra : &tables;
            for (size_t i = 0; i < tl->n && !stop; i++) {
                info.ns = tl->v[i].ns;
                info.table = tl->v[i].table;
                info.committed = tl->v[i].committed;
                info.pending = tl->v[i].pending;
                info.oldest_pending = tl->v[i].oldest;
                info.quarantined = tl->v[i].quarantined;
                info.rows_quarantined = tl->v[i].rows_quarantined;
                stop = fn(ctx, &info);
            }
        }
    }
    w2l__lake_snap_free(&snap);
    tlist_free(&k.extra);
    tlist_free(&tables);
    w2l__free(job);
    w2l__free(epoch);
    w2l__free(pos);
    w2l_state_close(st);
    return rc;
}

/* ------------------------------------------------------------------ completeness ---- */

w2l_rc w2l_table_complete_through(w2l_lake *l, const char *ns, const char *table,
                                  w2l_complete_info *out, w2l_error *err)
{
    if (!l || !ns || !table || !out)
        return w2l__fail(err, W2L_MISUSE, "w2l_table_complete_through: NULL argument");
    w2l__free(l->complete_job);
    l->complete_job = NULL;
    w2l_rc rc =
        w2l__complete_of_table(l->cat, l->io, l->warehouse, ns, table, out, &l->complete_job, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s.%s: ", ns, table);
        return rc;
    }
    out->job_id = l->complete_job;
    return W2L_OK;
}

/* ------------------------------------------------------------------- last run ------- */

w2l_rc w2l_lake_last_run(w2l_lake *lake, w2l_run_info *out, w2l_error *err)
{
    if (!lake || !out) return w2l__fail(err, W2L_MISUSE, "w2l_lake_last_run: NULL argument");
    w2l__free(lake->last_run);
    lake->last_run = NULL;
    return w2l__lastrun_read(lake->io, lake->warehouse, out, &lake->last_run, err);
}

w2l_rc w2l_lake_standbys(w2l_lake *lake, w2l_state_holder *out, size_t max, size_t *n,
                         w2l_error *err)
{
    if (!lake || !n || (max && !out))
        return w2l__fail(err, W2L_MISUSE, "w2l_lake_standbys: NULL argument");
    return w2l__standby_list(lake->io, lake->warehouse, out, max, n, err);
}

w2l_rc w2l_lake_holder(w2l_lake *lake, w2l_state_holder *out, w2l_error *err)
{
    if (!lake || !out) return w2l__fail(err, W2L_MISUSE, "w2l_lake_holder: NULL argument");
    memset(out, 0, sizeof *out);
    const char *uri = NULL;
    w2l_conf_get(lake->conf, "state", &uri, NULL);
    w2l_state *st = NULL;
    W2L_TRY(w2l_state_open(uri, lake->conf, &st, err));
    w2l_rc rc = w2l_state_holder_get(st, out, err);
    w2l_state_close(st);
    return rc;
}
