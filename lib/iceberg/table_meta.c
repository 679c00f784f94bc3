/*
 * Table metadata: the in-memory model of an Iceberg table metadata file and its JSON form
 * (Iceberg spec: "Table Metadata" and its field table for format version 2, "Snapshots",
 * "Snapshot References", Appendix C "JSON serialization" of schemas, partition specs, sort
 * orders). Every required v2 field is read and written, and for format version 3 the row
 * lineage fields (next-row-id; a snapshot's first-row-id and added-rows); snapshots, snapshot-log,
 * metadata-log and refs are always written (w2l-design(7) section 5, project convention).
 * Members this model does not know (statistics, partition-statistics, ...) are kept and
 * written back unchanged, so a commit by this library never drops what another engine put
 * there. Schemas are kept as the JSON read (for exact round trips) and, when they hold only
 * primitive fields, as a w2l_schema.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "iceberg.h"

/* ---- random ids ---- */

static void random_bytes(void *p, size_t n)
{
    unsigned char *b = p;
    while (n) {
        ssize_t r = getrandom(b, n, 0);
        if (r <= 0) { /* fall back to a clock-seeded generator; never fails */
            static uint64_t x = 0x9E3779B97F4A7C15u;
            x ^= (uint64_t)w2l__mono_ns();
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                b[i] = (unsigned char)x;
            }
            return;
        }
        b += r;
        n -= (size_t)r;
    }
}

void w2l__ice_uuid(char out[37])
{
    unsigned char u[16];
    random_bytes(u, sizeof u);
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
}

int64_t w2l__ice_random_id(void)
{
    uint64_t v = 0;
    while (v == 0) {
        random_bytes(&v, sizeof v);
        v &= INT64_MAX;
    }
    return (int64_t)v;
}

/* ---- properties ---- */

const char *w2l__ice_props_get(const w2l__ice_props *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) return p->kv[i].value;
    return NULL;
}

w2l_rc w2l__ice_props_set(w2l__ice_props *p, const char *key, const char *value, w2l_error *err)
{
    char *v = w2l__strdup(value);
    W2L_NOMEM_IF(!v, err);
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            w2l__free(p->kv[i].value);
            p->kv[i].value = v;
            return W2L_OK;
        }
    char *k = w2l__strdup(key);
    w2l__ice_kv *n = k ? w2l__realloc(p->kv, (p->n + 1) * sizeof *n) : NULL;
    if (!n) {
        w2l__free(k);
        w2l__free(v);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    p->kv = n;
    p->kv[p->n].key = k;
    p->kv[p->n].value = v;
    p->n++;
    return W2L_OK;
}

void w2l__ice_props_remove(w2l__ice_props *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            w2l__free(p->kv[i].key);
            w2l__free(p->kv[i].value);
            memmove(&p->kv[i], &p->kv[i + 1], (p->n - i - 1) * sizeof *p->kv);
            p->n--;
            return;
        }
}

void w2l__ice_props_clear(w2l__ice_props *p)
{
    for (size_t i = 0; i < p->n; i++) {
        w2l__free(p->kv[i].key);
        w2l__free(p->kv[i].value);
    }
    w2l__free(p->kv);
    p->kv = NULL;
    p->n = 0;
}

/* ---- free ---- */

static void spec_clear(w2l__ice_spec *s) { w2l__ice_spec_release(s); }

void w2l__ice_meta_free(w2l__ice_meta *m)
{
    if (!m) return;
    w2l__free(m->location);
    for (size_t i = 0; i < m->nschemas; i++) {
        w2l__json_free(m->schemas[i].json);
        w2l_schema_unref(m->schemas[i].schema);
    }
    w2l__free(m->schemas);
    for (size_t i = 0; i < m->nspecs; i++) spec_clear(&m->specs[i]);
    w2l__free(m->specs);
    w2l__json_free(m->sort_orders);
    w2l__ice_props_clear(&m->props);
    for (size_t i = 0; i < m->nsnapshots; i++) {
        w2l__free(m->snapshots[i].manifest_list);
        w2l__ice_props_clear(&m->snapshots[i].summary);
    }
    w2l__free(m->snapshots);
    w2l__free(m->snap_log);
    for (size_t i = 0; i < m->nmeta_log; i++) w2l__free(m->meta_log[i].file);
    w2l__free(m->meta_log);
    for (size_t i = 0; i < m->nrefs; i++) {
        w2l__free(m->refs[i].name);
        w2l__json_free(m->refs[i].json);
    }
    w2l__free(m->refs);
    w2l__json_free(m->extra);
    w2l__free(m);
}

/* ---- lookups ---- */

const w2l__ice_snapshot *w2l__ice_meta_snapshot(const w2l__ice_meta *m, int64_t id)
{
    for (size_t i = 0; i < m->nsnapshots; i++)
        if (m->snapshots[i].snapshot_id == id) return &m->snapshots[i];
    return NULL;
}

typedef struct snap_ix {
    int64_t id;
    size_t i;
} snap_ix;

static int snap_ix_cmp(const void *a, const void *b)
{
    const snap_ix *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

w2l_rc w2l__ice_meta_ancestry(const w2l__ice_meta *m,
                              int (*fn)(void *ctx, const w2l__ice_snapshot *s, size_t depth),
                              void *ctx, w2l_error *err)
{
    if (!m->nsnapshots || m->current_snapshot_id == -1) return W2L_OK;
    snap_ix *ix = w2l__malloc(m->nsnapshots * sizeof *ix);
    W2L_NOMEM_IF(!ix, err);
    for (size_t i = 0; i < m->nsnapshots; i++) ix[i] = (snap_ix){m->snapshots[i].snapshot_id, i};
    qsort(ix, m->nsnapshots, sizeof *ix, snap_ix_cmp);
    int64_t id = m->current_snapshot_id;
    for (size_t depth = 0; id != -1 && depth < m->nsnapshots; depth++) {
        snap_ix key = {id, 0};
        const snap_ix *hit = bsearch(&key, ix, m->nsnapshots, sizeof *ix, snap_ix_cmp);
        if (!hit) break; /* expired: the history ends here */
        const w2l__ice_snapshot *s = &m->snapshots[hit->i];
        if (fn(ctx, s, depth)) break;
        id = s->parent_id;
    }
    w2l__free(ix);
    return W2L_OK;
}

typedef struct newest_ctx {
    const char *job;
    const w2l__ice_snapshot *found;
} newest_ctx;

static int newest_step(void *ctx, const w2l__ice_snapshot *s, size_t depth)
{
    (void)depth;
    newest_ctx *c = ctx;
    const char *j = w2l__ice_props_get(&s->summary, "w2l.job-id");
    if (w2l__ice_props_get(&s->summary, "w2l.checkpoint-id") &&
        (!c->job || (j && strcmp(j, c->job) == 0)))
        c->found = s;
    return c->found != NULL;
}

const w2l__ice_snapshot *w2l__ice_meta_newest_checkpoint(const w2l__ice_meta *m, const char *job,
                                                         w2l_rc *rc, w2l_error *err)
{
    newest_ctx c = {job, NULL};
    *rc = w2l__ice_meta_ancestry(m, newest_step, &c, err);
    return c.found;
}

const w2l__ice_schema_entry *w2l__ice_meta_schema(const w2l__ice_meta *m, int32_t id)
{
    for (size_t i = 0; i < m->nschemas; i++)
        if (m->schemas[i].schema_id == id) return &m->schemas[i];
    return NULL;
}

const w2l__ice_spec *w2l__ice_meta_spec(const w2l__ice_meta *m, int32_t id)
{
    for (size_t i = 0; i < m->nspecs; i++)
        if (m->specs[i].spec_id == id) return &m->specs[i];
    return NULL;
}

const w2l_schema *w2l__ice_meta_current_schema(const w2l__ice_meta *m)
{
    const w2l__ice_schema_entry *e = w2l__ice_meta_schema(m, m->current_schema_id);
    return e ? e->schema : NULL;
}

/* The type of field id in the newest schema that has it. */
static int find_field_type(const w2l__ice_meta *m, int32_t id, w2l_type *out)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(m);
    if (cur) {
        long i = w2l_schema_index_of_id(cur, id);
        if (i >= 0) {
            *out = w2l_schema_field(cur, (size_t)i)->type;
            return 1;
        }
    }
    for (size_t k = m->nschemas; k-- > 0;) {
        const w2l_schema *s = m->schemas[k].schema;
        long i = s ? w2l_schema_index_of_id(s, id) : -1;
        if (i >= 0) {
            *out = w2l_schema_field(s, (size_t)i)->type;
            return 1;
        }
    }
    return 0;
}

w2l_rc w2l__ice_meta_set_spec(w2l__ice_meta *m, const w2l__ice_spec *spec, int *changed,
                              w2l_error *err)
{
    *changed = 0;
    int32_t max_id = -1;
    for (size_t i = 0; i < m->nspecs; i++) {
        max_id = W2L_MAX(max_id, m->specs[i].spec_id);
        if (w2l__ice_spec_same(&m->specs[i], spec)) {
            *changed = m->default_spec_id != m->specs[i].spec_id;
            m->default_spec_id = m->specs[i].spec_id;
            return W2L_OK;
        }
    }
    w2l__ice_spec *ns = w2l__realloc(m->specs, (m->nspecs + 1) * sizeof *ns);
    W2L_NOMEM_IF(!ns, err);
    m->specs = ns;
    w2l__ice_spec *n = &ns[m->nspecs];
    memset(n, 0, sizeof *n);
    n->spec_id = max_id + 1;
    n->fields = w2l__calloc(spec->nfields + 1, sizeof *n->fields);
    W2L_NOMEM_IF(!n->fields, err);
    int32_t last = m->last_partition_id;
    for (size_t i = 0; i < spec->nfields; i++) {
        w2l__ice_pfield *f = &n->fields[i];
        *f = spec->fields[i];
        f->name = w2l__strdup(spec->fields[i].name);
        if (!f->name) {
            w2l__ice_spec_release(n);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        n->nfields++;
        f->field_id = 0;
        for (size_t s = 0; s < m->nspecs && !f->field_id; s++)
            for (size_t k = 0; k < m->specs[s].nfields; k++) {
                const w2l__ice_pfield *o = &m->specs[s].fields[k];
                if (o->source_id == f->source_id && o->transform.kind == f->transform.kind &&
                    o->transform.param == f->transform.param) {
                    f->field_id = o->field_id;
                    break;
                }
            }
        if (!f->field_id) f->field_id = ++last;
    }
    m->nspecs++;
    m->last_partition_id = last;
    m->default_spec_id = n->spec_id;
    *changed = 1;
    return w2l__ice_meta_resolve_specs(m, err);
}

w2l_rc w2l__ice_meta_resolve_specs(w2l__ice_meta *m, w2l_error *err)
{
    for (size_t i = 0; i < m->nspecs; i++)
        for (size_t k = 0; k < m->specs[i].nfields; k++) {
            w2l__ice_pfield *f = &m->specs[i].fields[k];
            w2l_type src;
            if (!find_field_type(m, f->source_id, &src)) {
                /* a source column that no schema we can represent holds: treat as int */
                f->type = (w2l_type){W2L_TYPE_INT, 0, 0};
                continue;
            }
            if (w2l__ice_transform_result(f->transform, src, &f->type, err) != W2L_OK) {
                w2l__error_prefix(err, "partition field %s: ", f->name);
                return W2L_CORRUPT;
            }
        }
    return W2L_OK;
}

/* ---- parsing ---- */

#define BAD(what) w2l__fail(err, W2L_CORRUPT, "table metadata: %s", what)

/* An integer member. Ids beyond INT64_MAX (some hand-made tables use unsigned 64-bit
 * snapshot ids) are taken modulo 2^64, as a Java long would hold them. */
static int json_i64(const w2l__json *j, int64_t *out)
{
    if (!j) return -1;
    if (w2l__json_int64(j, out) == 0) return 0;
    char t[32], *end;
    if (w2l__json_number_text(j, t, sizeof t) != 0 || t[0] == '-') return -1;
    errno = 0;
    unsigned long long u = strtoull(t, &end, 10);
    if (errno || *end) return -1;
    *out = (int64_t)u;
    return 0;
}

static w2l_rc req_i64(const w2l__json *o, const char *key, int64_t *out, w2l_error *err)
{
    const w2l__json *j = w2l__json_get(o, key);
    if (!j || json_i64(j, out) != 0)
        return w2l__fail(err, W2L_CORRUPT, "table metadata: \"%s\" missing or not an integer", key);
    return W2L_OK;
}

static w2l_rc req_i32(const w2l__json *o, const char *key, int32_t *out, w2l_error *err)
{
    int64_t v;
    W2L_TRY(req_i64(o, key, &v, err));
    if (v < INT32_MIN || v > INT32_MAX)
        return w2l__fail(err, W2L_CORRUPT, "table metadata: \"%s\" out of range", key);
    *out = (int32_t)v;
    return W2L_OK;
}

static int opt_i64(const w2l__json *o, const char *key, int64_t *out)
{
    const w2l__json *j = w2l__json_get(o, key);
    return j && json_i64(j, out) == 0;
}

static w2l_rc parse_props(const w2l__json *o, w2l__ice_props *p, w2l_error *err)
{
    if (!o) return W2L_OK;
    if (w2l__json_type(o) != W2L_JSON_OBJECT) return BAD("a string map is not an object");
    for (const w2l__json *j = w2l__json_first(o); j; j = w2l__json_next(j)) {
        const char *v = w2l__json_str(j);
        char num[64];
        if (!v && w2l__json_number_text(j, num, sizeof num) == 0) v = num;
        if (!v) {
            int b;
            if (w2l__json_bool(j, &b) == 0) v = b ? "true" : "false";
        }
        if (!v)
            return w2l__fail(err, W2L_CORRUPT,
                             "table metadata: map value of \"%s\" is not a string",
                             w2l__json_key(j));
        W2L_TRY(w2l__ice_props_set(p, w2l__json_key(j), v, err));
    }
    return W2L_OK;
}

static w2l_rc add_schema_json(w2l__ice_meta *m, const w2l__json *js, w2l_error *err)
{
    int32_t id = 0;
    if (w2l__json_get(js, "schema-id")) W2L_TRY(req_i32(js, "schema-id", &id, err));
    w2l__ice_schema_entry *n = w2l__realloc(m->schemas, (m->nschemas + 1) * sizeof *n);
    W2L_NOMEM_IF(!n, err);
    m->schemas = n;
    w2l__ice_schema_entry *e = &m->schemas[m->nschemas];
    memset(e, 0, sizeof *e);
    e->schema_id = id;
    e->json = w2l__json_dup(js);
    W2L_NOMEM_IF(!e->json, err);
    m->nschemas++;
    char *text = w2l__json_print(js, 0);
    W2L_NOMEM_IF(!text, err);
    w2l_error e2;
    w2l_rc rc = w2l_schema_from_json(text, strlen(text), &e->schema, &e2);
    w2l__free(text);
    if (rc == W2L_NOMEM) return w2l__fail(err, W2L_NOMEM, "%s", e2.msg);
    if (rc != W2L_OK) {
        /* nested or unknown types: kept as JSON only; scans of such tables fail later */
        w2l__log(W2L_LOG_DEBUG, "schema %d kept as JSON only: %s", (int)id, e2.msg);
        e->schema = NULL;
    }
    return W2L_OK;
}

static w2l_rc parse_spec(const w2l__json *js, w2l__ice_spec *s, w2l_error *err)
{
    memset(s, 0, sizeof *s);
    if (w2l__json_get(js, "spec-id")) W2L_TRY(req_i32(js, "spec-id", &s->spec_id, err));
    const w2l__json *fields =
        w2l__json_type(js) == W2L_JSON_ARRAY ? js : w2l__json_get(js, "fields");
    if (w2l__json_type(fields) != W2L_JSON_ARRAY) return BAD("partition spec without fields");
    size_t n = w2l__json_size(fields);
    s->fields = w2l__calloc(n ? n : 1, sizeof *s->fields);
    W2L_NOMEM_IF(!s->fields, err);
    int32_t next_id = 1000;
    for (const w2l__json *f = w2l__json_first(fields); f; f = w2l__json_next(f)) {
        w2l__ice_pfield *pf = &s->fields[s->nfields];
        const char *name = w2l__json_str(w2l__json_get(f, "name"));
        const char *tr = w2l__json_str(w2l__json_get(f, "transform"));
        if (!name || !tr) return BAD("partition field without name or transform");
        pf->name = w2l__strdup(name);
        W2L_NOMEM_IF(!pf->name, err);
        s->nfields++;
        W2L_TRY(req_i32(f, "source-id", &pf->source_id, err));
        if (w2l__json_get(f, "field-id")) W2L_TRY(req_i32(f, "field-id", &pf->field_id, err));
        else pf->field_id = next_id; /* v1 specs may omit field ids */
        next_id = pf->field_id + 1;
        w2l_rc rc = w2l__ice_transform_parse(tr, &pf->transform, err);
        if (rc != W2L_OK) return w2l__fail(err, W2L_CORRUPT, "table metadata: %s", err->msg);
    }
    return W2L_OK;
}

w2l_rc w2l__ice_spec_from_json(const w2l__json *j, w2l__ice_spec *out, w2l_error *err)
{
    w2l_rc rc = parse_spec(j, out, err);
    if (rc != W2L_OK) w2l__ice_spec_release(out);
    return rc;
}

static w2l_rc parse_snapshot(const w2l__json *js, w2l__ice_snapshot *s, w2l_error *err)
{
    memset(s, 0, sizeof *s);
    s->parent_id = -1;
    s->schema_id = -1;
    W2L_TRY(req_i64(js, "snapshot-id", &s->snapshot_id, err));
    opt_i64(js, "parent-snapshot-id", &s->parent_id);
    if (!opt_i64(js, "sequence-number", &s->seq)) s->seq = 0;
    W2L_TRY(req_i64(js, "timestamp-ms", &s->timestamp_ms, err));
    int64_t sid;
    if (opt_i64(js, "schema-id", &sid)) s->schema_id = (int32_t)sid;
    if (opt_i64(js, "first-row-id", &s->first_row_id)) {
        s->has_row_range = 1;
        if (!opt_i64(js, "added-rows", &s->added_rows)) s->added_rows = 0;
    }
    const char *ml = w2l__json_str(w2l__json_get(js, "manifest-list"));
    if (!ml)
        return BAD("snapshot without \"manifest-list\" (v1 manifests lists are not supported)");
    s->manifest_list = w2l__strdup(ml);
    W2L_NOMEM_IF(!s->manifest_list, err);
    const w2l__json *sum = w2l__json_get(js, "summary");
    /* "operation" first, as writers print it */
    const char *op = w2l__json_str(w2l__json_get(sum, "operation"));
    W2L_TRY(w2l__ice_props_set(&s->summary, "operation", op ? op : "append", err));
    return parse_props(sum, &s->summary, err);
}

static const char *const known_keys[] = {
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
    "last-column-id", "schemas", "schema", "current-schema-id", "partition-specs",
    "partition-spec", "default-spec-id", "last-partition-id", "sort-orders",
    "default-sort-order-id", "properties", "current-snapshot-id", "snapshots", "snapshot-log",
    "metadata-log", "refs", "next-row-id"};

static w2l_rc parse_tree(const w2l__json *root, w2l__ice_meta *m, w2l_error *err)
{
    if (w2l__json_type(root) != W2L_JSON_OBJECT) return BAD("not a JSON object");
    int32_t fv;
    W2L_TRY(req_i32(root, "format-version", &fv, err));
    if (fv < 1 || fv > 3)
        return w2l__fail(err, W2L_CORRUPT, "table metadata: format-version %d not supported",
                         (int)fv);
    m->format_version = fv;
    const char *uuid = w2l__json_str(w2l__json_get(root, "table-uuid"));
    if (fv >= 2 && !uuid) return BAD("\"table-uuid\" missing");
    snprintf(m->uuid, sizeof m->uuid, "%s", uuid ? uuid : "");
    const char *loc = w2l__json_str(w2l__json_get(root, "location"));
    if (!loc) return BAD("\"location\" missing");
    m->location = w2l__strdup(loc);
    W2L_NOMEM_IF(!m->location, err);
    if (fv >= 2) W2L_TRY(req_i64(root, "last-sequence-number", &m->last_seq, err));
    if (fv >= 3) W2L_TRY(req_i64(root, "next-row-id", &m->next_row_id, err));
    W2L_TRY(req_i64(root, "last-updated-ms", &m->last_updated_ms, err));
    W2L_TRY(req_i32(root, "last-column-id", &m->last_column_id, err));

    const w2l__json *schemas = w2l__json_get(root, "schemas");
    if (w2l__json_type(schemas) == W2L_JSON_ARRAY) {
        for (const w2l__json *s = w2l__json_first(schemas); s; s = w2l__json_next(s))
            W2L_TRY(add_schema_json(m, s, err));
        W2L_TRY(req_i32(root, "current-schema-id", &m->current_schema_id, err));
    } else if (w2l__json_get(root, "schema")) {
        W2L_TRY(add_schema_json(m, w2l__json_get(root, "schema"), err));
        m->current_schema_id = m->schemas[0].schema_id;
    } else {
        return BAD("\"schemas\" missing");
    }
    if (!w2l__ice_meta_schema(m, m->current_schema_id))
        return BAD("current-schema-id names no schema");

    const w2l__json *specs = w2l__json_get(root, "partition-specs");
    if (w2l__json_type(specs) == W2L_JSON_ARRAY) {
        size_t n = w2l__json_size(specs);
        m->specs = w2l__calloc(n ? n : 1, sizeof *m->specs);
        W2L_NOMEM_IF(!m->specs, err);
        for (const w2l__json *s = w2l__json_first(specs); s; s = w2l__json_next(s)) {
            m->nspecs++;
            W2L_TRY(parse_spec(s, &m->specs[m->nspecs - 1], err));
        }
        W2L_TRY(req_i32(root, "default-spec-id", &m->default_spec_id, err));
    } else if (w2l__json_get(root, "partition-spec")) {
        m->specs = w2l__calloc(1, sizeof *m->specs);
        W2L_NOMEM_IF(!m->specs, err);
        m->nspecs = 1;
        W2L_TRY(parse_spec(w2l__json_get(root, "partition-spec"), &m->specs[0], err));
    } else {
        return BAD("\"partition-specs\" missing");
    }
    if (!opt_i64(root, "last-partition-id", &(int64_t){0})) {
        int32_t mx = 999;
        for (size_t i = 0; i < m->nspecs; i++)
            for (size_t k = 0; k < m->specs[i].nfields; k++)
                mx = W2L_MAX(mx, m->specs[i].fields[k].field_id);
        m->last_partition_id = mx;
    } else {
        W2L_TRY(req_i32(root, "last-partition-id", &m->last_partition_id, err));
    }

    const w2l__json *so = w2l__json_get(root, "sort-orders");
    m->sort_orders = so ? w2l__json_dup(so) : w2l__json_new_array();
    W2L_NOMEM_IF(!m->sort_orders, err);
    int64_t dso = 0;
    opt_i64(root, "default-sort-order-id", &dso);
    m->default_sort_order_id = (int32_t)dso;
    W2L_TRY(parse_props(w2l__json_get(root, "properties"), &m->props, err));

    m->current_snapshot_id = -1;
    opt_i64(root, "current-snapshot-id", &m->current_snapshot_id);
    const w2l__json *snaps = w2l__json_get(root, "snapshots");
    if (snaps) {
        size_t n = w2l__json_size(snaps);
        m->snapshots = w2l__calloc(n ? n : 1, sizeof *m->snapshots);
        W2L_NOMEM_IF(!m->snapshots, err);
        for (const w2l__json *s = w2l__json_first(snaps); s; s = w2l__json_next(s)) {
            m->nsnapshots++;
            W2L_TRY(parse_snapshot(s, &m->snapshots[m->nsnapshots - 1], err));
        }
    }
    if (m->current_snapshot_id != -1 && !w2l__ice_meta_snapshot(m, m->current_snapshot_id))
        return BAD("current-snapshot-id names no snapshot");

    const w2l__json *sl = w2l__json_get(root, "snapshot-log");
    size_t nsl = sl ? w2l__json_size(sl) : 0;
    m->snap_log = w2l__calloc(nsl ? nsl : 1, sizeof *m->snap_log);
    W2L_NOMEM_IF(!m->snap_log, err);
    for (const w2l__json *e = w2l__json_first(sl); e; e = w2l__json_next(e)) {
        w2l__ice_log_entry *le = &m->snap_log[m->nsnap_log++];
        W2L_TRY(req_i64(e, "timestamp-ms", &le->timestamp_ms, err));
        W2L_TRY(req_i64(e, "snapshot-id", &le->snapshot_id, err));
    }
    const w2l__json *ml = w2l__json_get(root, "metadata-log");
    size_t nml = ml ? w2l__json_size(ml) : 0;
    m->meta_log = w2l__calloc(nml ? nml : 1, sizeof *m->meta_log);
    W2L_NOMEM_IF(!m->meta_log, err);
    for (const w2l__json *e = w2l__json_first(ml); e; e = w2l__json_next(e)) {
        w2l__ice_log_entry *le = &m->meta_log[m->nmeta_log];
        W2L_TRY(req_i64(e, "timestamp-ms", &le->timestamp_ms, err));
        const char *f = w2l__json_str(w2l__json_get(e, "metadata-file"));
        if (!f) return BAD("metadata-log entry without metadata-file");
        le->file = w2l__strdup(f);
        W2L_NOMEM_IF(!le->file, err);
        m->nmeta_log++;
    }
    const w2l__json *refs = w2l__json_get(root, "refs");
    size_t nr = refs ? w2l__json_size(refs) : 0;
    m->refs = w2l__calloc(nr ? nr : 1, sizeof *m->refs);
    W2L_NOMEM_IF(!m->refs, err);
    for (const w2l__json *r = w2l__json_first(refs); r; r = w2l__json_next(r)) {
        w2l__ice_ref *ref = &m->refs[m->nrefs];
        W2L_TRY(req_i64(r, "snapshot-id", &ref->snapshot_id, err));
        ref->name = w2l__strdup(w2l__json_key(r));
        ref->json = w2l__json_dup(r);
        if (!ref->name || !ref->json) {
            w2l__free(ref->name);
            w2l__json_free(ref->json);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        m->nrefs++;
    }
    if (fv >= 2 && m->current_snapshot_id != -1 && m->nrefs == 0) {
        /* older writers: main is implied by current-snapshot-id */
    }
    m->extra = w2l__json_new_object();
    W2L_NOMEM_IF(!m->extra, err);
    for (const w2l__json *j = w2l__json_first(root); j; j = w2l__json_next(j)) {
        int known = 0;
        for (size_t i = 0; i < W2L_ARRAY_LEN(known_keys); i++)
            known |= strcmp(w2l__json_key(j), known_keys[i]) == 0;
        if (!known && w2l__json_add(m->extra, w2l__json_key(j), w2l__json_dup(j)) != 0)
            return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    return w2l__ice_meta_resolve_specs(m, err);
}

w2l_rc w2l__ice_meta_parse(const char *json, size_t len, w2l__ice_meta **out, w2l_error *err)
{
    *out = NULL;
    w2l__json *root;
    W2L_TRY(w2l__json_parse(json, len, &root, err));
    w2l__ice_meta *m = w2l__calloc(1, sizeof *m);
    if (!m) {
        w2l__json_free(root);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l_rc rc = parse_tree(root, m, err);
    w2l__json_free(root);
    if (rc != W2L_OK) {
        w2l__ice_meta_free(m);
        return rc;
    }
    *out = m;
    return W2L_OK;
}

/* ---- printing ---- */

w2l__json *w2l__ice_spec_to_json(const w2l__ice_spec *s)
{
    w2l__json *o = w2l__json_new_object(), *fields = w2l__json_new_array();
    int bad = !o || w2l__json_add(o, "spec-id", w2l__json_new_int64(s->spec_id)) ||
              w2l__json_add(o, "fields", fields);
    if (!o) w2l__json_free(fields);
    for (size_t i = 0; !bad && i < s->nfields; i++) {
        const w2l__ice_pfield *f = &s->fields[i];
        char tb[48];
        w2l__ice_transform_format(f->transform, tb, sizeof tb);
        w2l__json *jf = w2l__json_new_object();
        bad = w2l__json_append(fields, jf) ||
              w2l__json_add(jf, "name", w2l__json_new_string(f->name)) ||
              w2l__json_add(jf, "transform", w2l__json_new_string(tb)) ||
              w2l__json_add(jf, "source-id", w2l__json_new_int64(f->source_id)) ||
              w2l__json_add(jf, "field-id", w2l__json_new_int64(f->field_id));
    }
    if (bad) {
        w2l__json_free(o);
        return NULL;
    }
    return o;
}

static void props_write(w2l__json_writer *w, const char *key, const w2l__ice_props *p)
{
    w2l__json_w_object(w, key);
    for (size_t i = 0; i < p->n; i++) w2l__json_w_string(w, p->kv[i].key, p->kv[i].value);
    w2l__json_w_close(w);
}

static void spec_write(w2l__json_writer *w, const w2l__ice_spec *s)
{
    w2l__json_w_object(w, NULL);
    w2l__json_w_int64(w, "spec-id", s->spec_id);
    w2l__json_w_array(w, "fields");
    for (size_t i = 0; i < s->nfields; i++) {
        const w2l__ice_pfield *f = &s->fields[i];
        char tb[48];
        w2l__ice_transform_format(f->transform, tb, sizeof tb);
        w2l__json_w_object(w, NULL);
        w2l__json_w_string(w, "name", f->name);
        w2l__json_w_string(w, "transform", tb);
        w2l__json_w_int64(w, "source-id", f->source_id);
        w2l__json_w_int64(w, "field-id", f->field_id);
        w2l__json_w_close(w);
    }
    w2l__json_w_close(w);
    w2l__json_w_close(w);
}

/* The metadata file's text, written as it goes (it is printed on every commit, and grows
 * with the snapshots kept). */
w2l_rc w2l__ice_meta_print(const w2l__ice_meta *m, char **out, size_t *len, w2l_error *err)
{
    w2l__json_writer w;
    w2l__json_w_init(&w, 1);
    w2l__json_w_object(&w, NULL);
    w2l__json_w_int64(&w, "format-version", m->format_version);
    w2l__json_w_string(&w, "table-uuid", m->uuid);
    w2l__json_w_string(&w, "location", m->location);
    w2l__json_w_int64(&w, "last-sequence-number", m->last_seq);
    if (m->format_version >= 3) w2l__json_w_int64(&w, "next-row-id", m->next_row_id);
    w2l__json_w_int64(&w, "last-updated-ms", m->last_updated_ms);
    w2l__json_w_int64(&w, "last-column-id", m->last_column_id);
    w2l__json_w_array(&w, "schemas");
    for (size_t i = 0; i < m->nschemas; i++) w2l__json_w_tree(&w, NULL, m->schemas[i].json);
    w2l__json_w_close(&w);
    w2l__json_w_int64(&w, "current-schema-id", m->current_schema_id);
    w2l__json_w_array(&w, "partition-specs");
    for (size_t i = 0; i < m->nspecs; i++) spec_write(&w, &m->specs[i]);
    w2l__json_w_close(&w);
    w2l__json_w_int64(&w, "default-spec-id", m->default_spec_id);
    w2l__json_w_int64(&w, "last-partition-id", m->last_partition_id);
    w2l__json_w_tree(&w, "sort-orders", m->sort_orders);
    w2l__json_w_int64(&w, "default-sort-order-id", m->default_sort_order_id);
    props_write(&w, "properties", &m->props);
    w2l__json_w_int64(&w, "current-snapshot-id", m->current_snapshot_id);
    w2l__json_w_array(&w, "snapshots");
    for (size_t i = 0; i < m->nsnapshots; i++) {
        const w2l__ice_snapshot *s = &m->snapshots[i];
        w2l__json_w_object(&w, NULL);
        w2l__json_w_int64(&w, "snapshot-id", s->snapshot_id);
        if (s->parent_id != -1) w2l__json_w_int64(&w, "parent-snapshot-id", s->parent_id);
        w2l__json_w_int64(&w, "sequence-number", s->seq);
        w2l__json_w_int64(&w, "timestamp-ms", s->timestamp_ms);
        w2l__json_w_string(&w, "manifest-list", s->manifest_list);
        props_write(&w, "summary", &s->summary);
        if (s->schema_id >= 0) w2l__json_w_int64(&w, "schema-id", s->schema_id);
        if (s->has_row_range) {
            w2l__json_w_int64(&w, "first-row-id", s->first_row_id);
            w2l__json_w_int64(&w, "added-rows", s->added_rows);
        }
        w2l__json_w_close(&w);
    }
    w2l__json_w_close(&w);
    w2l__json_w_array(&w, "snapshot-log");
    for (size_t i = 0; i < m->nsnap_log; i++) {
        w2l__json_w_object(&w, NULL);
        w2l__json_w_int64(&w, "timestamp-ms", m->snap_log[i].timestamp_ms);
        w2l__json_w_int64(&w, "snapshot-id", m->snap_log[i].snapshot_id);
        w2l__json_w_close(&w);
    }
    w2l__json_w_close(&w);
    w2l__json_w_array(&w, "metadata-log");
    for (size_t i = 0; i < m->nmeta_log; i++) {
        w2l__json_w_object(&w, NULL);
        w2l__json_w_int64(&w, "timestamp-ms", m->meta_log[i].timestamp_ms);
        w2l__json_w_string(&w, "metadata-file", m->meta_log[i].file);
        w2l__json_w_close(&w);
    }
    w2l__json_w_close(&w);
    w2l__json_w_object(&w, "refs");
    for (size_t i = 0; i < m->nrefs; i++) w2l__json_w_tree(&w, m->refs[i].name, m->refs[i].json);
    w2l__json_w_close(&w);
    for (const w2l__json *j = w2l__json_first(m->extra); j; j = w2l__json_next(j))
        w2l__json_w_tree(&w, w2l__json_key(j), j);
    w2l__json_w_close(&w);
    char *text = w2l__json_w_finish(&w, len);
    W2L_NOMEM_IF(!text, err);
    *out = text;
    return W2L_OK;
}

/* ---- construction and schema changes ---- */

static w2l_schema *copy_with_id(const w2l_schema *s, int32_t id, w2l_error *err)
{
    w2l_schema *n = w2l_schema_new(id);
    if (!n) {
        w2l__fail(err, W2L_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < w2l_schema_field_count(s); i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        if (w2l_schema_add_field(n, f->id, f->name, f->type, f->required, err) != W2L_OK) {
            w2l_schema_unref(n);
            return NULL;
        }
    }
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(s, &nid);
    if (w2l_schema_set_identifier(n, ids, nid, err) != W2L_OK) {
        w2l_schema_unref(n);
        return NULL;
    }
    return n;
}

static int same_schema(const w2l_schema *a, const w2l_schema *b)
{
    size_t n = w2l_schema_field_count(a), na, nb;
    if (n != w2l_schema_field_count(b)) return 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *x = w2l_schema_field(a, i), *y = w2l_schema_field(b, i);
        if (x->id != y->id || strcmp(x->name, y->name) != 0 || x->type.id != y->type.id ||
            x->type.precision != y->type.precision || x->type.scale != y->type.scale ||
            x->required != y->required)
            return 0;
    }
    const int32_t *ia = w2l_schema_identifier(a, &na), *ib = w2l_schema_identifier(b, &nb);
    return na == nb && (na == 0 || memcmp(ia, ib, na * sizeof *ia) == 0);
}

w2l_rc w2l__ice_meta_set_schema(w2l__ice_meta *m, w2l_schema *schema, w2l_error *err)
{
    int32_t max_id = -1;
    for (size_t i = 0; i < m->nschemas; i++) {
        if (m->schemas[i].schema && same_schema(m->schemas[i].schema, schema)) {
            m->current_schema_id = m->schemas[i].schema_id;
            return W2L_OK;
        }
        max_id = W2L_MAX(max_id, m->schemas[i].schema_id);
    }
    w2l_schema *s = copy_with_id(schema, max_id + 1, err);
    if (!s) return err->code;
    char *text = NULL;
    w2l__json *j = NULL;
    w2l_rc rc = w2l_schema_to_json(s, &text, err);
    if (rc == W2L_OK) rc = w2l__json_parse(text, strlen(text), &j, err);
    w2l__free(text);
    w2l__ice_schema_entry *n =
        rc == W2L_OK ? w2l__realloc(m->schemas, (m->nschemas + 1) * sizeof *n) : NULL;
    if (!n) {
        w2l_schema_unref(s);
        w2l__json_free(j);
        return rc != W2L_OK ? rc : w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    m->schemas = n;
    m->schemas[m->nschemas].schema_id = max_id + 1;
    m->schemas[m->nschemas].json = j;
    m->schemas[m->nschemas].schema = s;
    m->nschemas++;
    m->current_schema_id = max_id + 1;
    m->last_column_id = W2L_MAX(m->last_column_id, w2l_schema_max_field_id(s));
    return w2l__ice_meta_resolve_specs(m, err);
}

w2l_rc w2l__ice_meta_new(const char *location, w2l_schema *schema, const w2l__ice_spec *spec,
                         const w2l__ice_props *props, w2l__ice_meta **out, w2l_error *err)
{
    *out = NULL;
    w2l__ice_meta *m = w2l__calloc(1, sizeof *m);
    W2L_NOMEM_IF(!m, err);
    w2l_rc rc = W2L_NOMEM;
    m->format_version = 2;
    w2l__ice_uuid(m->uuid);
    m->location = w2l__strdup(location);
    m->last_updated_ms = w2l__now_ms();
    m->current_snapshot_id = -1;
    m->last_partition_id = 999;
    m->specs = w2l__calloc(1, sizeof *m->specs);
    /* the unsorted order 0, the only one this library writes */
    w2l__json *so = w2l__json_new_object();
    if (so && (w2l__json_add(so, "order-id", w2l__json_new_int64(0)) ||
               w2l__json_add(so, "fields", w2l__json_new_array()))) {
        w2l__json_free(so);
        so = NULL;
    }
    m->sort_orders = w2l__json_new_array();
    if (!m->sort_orders) w2l__json_free(so);
    if (!m->location || !m->specs || !m->sort_orders || !so ||
        w2l__json_append(m->sort_orders, so)) {
        w2l__fail(err, W2L_NOMEM, "out of memory");
        goto fail;
    }
    m->extra = w2l__json_new_object();
    if (!m->extra) {
        w2l__fail(err, W2L_NOMEM, "out of memory");
        goto fail;
    }
    m->nspecs = 1;
    if (spec && spec->nfields) {
        m->specs[0].fields = w2l__calloc(spec->nfields, sizeof *m->specs[0].fields);
        if (!m->specs[0].fields) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            goto fail;
        }
        for (size_t i = 0; i < spec->nfields; i++) {
            w2l__ice_pfield *f = &m->specs[0].fields[i];
            *f = spec->fields[i];
            f->field_id = 1000 + (int32_t)i;
            f->name = w2l__strdup(spec->fields[i].name);
            m->specs[0].nfields++;
            if (!f->name) {
                w2l__fail(err, W2L_NOMEM, "out of memory");
                goto fail;
            }
            if (w2l_schema_index_of_id(schema, f->source_id) < 0) {
                rc = w2l__fail(err, W2L_SCHEMA, "partition field %s: no source field %d", f->name,
                               (int)f->source_id);
                goto fail;
            }
        }
        m->last_partition_id = 999 + (int32_t)spec->nfields;
    }
    for (size_t i = 0; props && i < props->n; i++) {
        /* "format-version" is the table's version, no property (as Iceberg's reserved
         * table property of that name) */
        if (strcmp(props->kv[i].key, "format-version") == 0) {
            const char *v = props->kv[i].value;
            if (!v || (strcmp(v, "2") != 0 && strcmp(v, "3") != 0)) {
                rc = w2l__fail(err, W2L_MISUSE, "format-version '%s': 2 or 3", v ? v : "");
                goto fail;
            }
            m->format_version = v[0] - '0';
            continue;
        }
        if ((rc = w2l__ice_props_set(&m->props, props->kv[i].key, props->kv[i].value, err)) !=
            W2L_OK)
            goto fail;
    }
    m->current_schema_id = -1;
    if ((rc = w2l__ice_meta_set_schema(m, schema, err)) != W2L_OK) goto fail;
    *out = m;
    return W2L_OK;
fail:
    w2l__ice_meta_free(m);
    return err->code ? err->code : rc;
}
