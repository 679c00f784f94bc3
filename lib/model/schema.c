/*
 * Table schemas: ordered primitive fields with Iceberg field ids, a schema id and the
 * identifier (primary-key) fields; reference counted and immutable once shared. Also the
 * Iceberg JSON form of a schema (table metadata "schemas" entries, spec "Schemas").
 *
 * Lookup by id and by name goes through open-addressing hash tables of field indexes,
 * so tables with thousands of columns stay O(1) per lookup.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "json/json.h"
#include "model.h"

struct w2l_schema {
    atomic_int refs;
    int32_t schema_id;
    int32_t max_id;
    w2l_field *fields;
    size_t n, cap;
    int32_t *ident;
    size_t nident;
    /* slots hold field index + 1, 0 for empty; nslots is a power of two */
    uint32_t *by_id, *by_name;
    size_t nslots;
};

w2l_schema *w2l_schema_new(int32_t schema_id)
{
    w2l_schema *s = w2l__calloc(1, sizeof *s);
    if (!s) return NULL;
    atomic_init(&s->refs, 1);
    s->schema_id = schema_id;
    return s;
}

w2l_schema *w2l_schema_ref(w2l_schema *s)
{
    if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void w2l_schema_unref(w2l_schema *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    for (size_t i = 0; i < s->n; i++) w2l__free((char *)s->fields[i].name);
    w2l__free(s->fields);
    w2l__free(s->ident);
    w2l__free(s->by_id);
    w2l__free(s->by_name);
    w2l__free(s);
}

static int shared(const w2l_schema *s) { return atomic_load(&((w2l_schema *)s)->refs) > 1; }

static size_t hash_id(int32_t id) { return (size_t)w2l__hash64(&id, sizeof id, 0x5eed); }
static size_t hash_name(const char *name) { return (size_t)w2l__hash64(name, strlen(name), 0); }

static void slot_put(uint32_t *slots, size_t nslots, size_t h, size_t idx)
{
    size_t mask = nslots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask)
        if (!slots[i]) {
            slots[i] = (uint32_t)(idx + 1);
            return;
        }
}

/* Makes room for one more field in the tables (load <= 1/2). */
static int grow_index(w2l_schema *s)
{
    if ((s->n + 1) * 2 <= s->nslots) return 0;
    size_t ns = s->nslots ? s->nslots * 2 : 16;
    uint32_t *bi = w2l__calloc(ns, sizeof *bi);
    uint32_t *bn = w2l__calloc(ns, sizeof *bn);
    if (!bi || !bn) {
        w2l__free(bi);
        w2l__free(bn);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        slot_put(bi, ns, hash_id(s->fields[i].id), i);
        slot_put(bn, ns, hash_name(s->fields[i].name), i);
    }
    w2l__free(s->by_id);
    w2l__free(s->by_name);
    s->by_id = bi;
    s->by_name = bn;
    s->nslots = ns;
    return 0;
}

w2l_rc w2l_schema_add_field(w2l_schema *s, int32_t id, const char *name, w2l_type type,
                            int required, w2l_error *err)
{
    if (!s || !name) return w2l__fail(err, W2L_MISUSE, "w2l_schema_add_field: NULL argument");
    if (shared(s))
        return w2l__fail(err, W2L_MISUSE, "add field '%.200s': the schema is shared (immutable)",
                         name);
    if (id < 1) return w2l__fail(err, W2L_SCHEMA, "field '%.200s': id %d is < 1", name, (int)id);
    if (!name[0]) return w2l__fail(err, W2L_SCHEMA, "field id %d: empty name", (int)id);
    if (!w2l__type_valid(type)) {
        char tn[24];
        return w2l__fail(err, W2L_SCHEMA, "field '%.200s': invalid type %s", name,
                         w2l_type_format(type, tn, sizeof tn));
    }
    long at = w2l_schema_index_of_id(s, id);
    if (at >= 0)
        return w2l__fail(err, W2L_SCHEMA, "field '%.200s': id %d is already used by '%.200s'",
                         name, (int)id, s->fields[at].name);
    if (w2l_schema_index_of_name(s, name) >= 0)
        return w2l__fail(err, W2L_SCHEMA, "field '%.200s': name already used", name);
    if (s->n >= UINT32_MAX - 1) return w2l__fail(err, W2L_SCHEMA, "too many fields");

    /* allocate everything first, so a failure leaves the schema as it was */
    char *copy = w2l__strdup(name);
    W2L_NOMEM_IF(!copy, err);
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 8;
        w2l_field *f = w2l__realloc(s->fields, nc * sizeof *f);
        if (!f) {
            w2l__free(copy);
            return w2l__fail(err, W2L_NOMEM, "out of memory adding field '%.200s'", name);
        }
        s->fields = f;
        s->cap = nc;
    }
    if (grow_index(s) != 0) {
        w2l__free(copy);
        return w2l__fail(err, W2L_NOMEM, "out of memory adding field '%.200s'", name);
    }
    w2l_field *f = &s->fields[s->n];
    f->id = id;
    f->name = copy;
    f->type = type;
    f->required = required ? 1 : 0;
    slot_put(s->by_id, s->nslots, hash_id(id), s->n);
    slot_put(s->by_name, s->nslots, hash_name(copy), s->n);
    s->n++;
    if (id > s->max_id) s->max_id = id;
    return W2L_OK;
}

w2l_rc w2l_schema_set_identifier(w2l_schema *s, const int32_t *ids, size_t n, w2l_error *err)
{
    if (!s || (!ids && n))
        return w2l__fail(err, W2L_MISUSE, "w2l_schema_set_identifier: NULL argument");
    if (shared(s))
        return w2l__fail(err, W2L_MISUSE, "set identifier: the schema is shared (immutable)");
    for (size_t i = 0; i < n; i++) {
        long at = w2l_schema_index_of_id(s, ids[i]);
        if (at < 0)
            return w2l__fail(err, W2L_SCHEMA, "identifier field id %d: no such field", (int)ids[i]);
        const w2l_field *f = &s->fields[at];
        if (!f->required)
            return w2l__fail(err, W2L_SCHEMA, "identifier field '%.200s' (id %d) must be required",
                             f->name, (int)f->id);
        if (f->type.id == W2L_TYPE_FLOAT || f->type.id == W2L_TYPE_DOUBLE)
            return w2l__fail(err, W2L_SCHEMA,
                             "identifier field '%.200s' (id %d) cannot be float or double",
                             f->name, (int)f->id);
        for (size_t j = 0; j < i; j++)
            if (ids[j] == ids[i])
                return w2l__fail(err, W2L_SCHEMA, "identifier field '%.200s' (id %d) listed twice",
                                 f->name, (int)f->id);
    }
    int32_t *copy = NULL;
    if (n) {
        copy = w2l__malloc(n * sizeof *copy);
        W2L_NOMEM_IF(!copy, err);
        memcpy(copy, ids, n * sizeof *copy);
    }
    w2l__free(s->ident);
    s->ident = copy;
    s->nident = n;
    return W2L_OK;
}

int32_t w2l_schema_id(const w2l_schema *s) { return s ? s->schema_id : 0; }
size_t w2l_schema_field_count(const w2l_schema *s) { return s ? s->n : 0; }

const w2l_field *w2l_schema_field(const w2l_schema *s, size_t i)
{
    return s && i < s->n ? &s->fields[i] : NULL;
}

const w2l_field *w2l__schema_fields(const w2l_schema *s, size_t *n)
{
    *n = s ? s->n : 0;
    return s ? s->fields : NULL;
}

long w2l_schema_index_of_id(const w2l_schema *s, int32_t id)
{
    if (!s || !s->nslots) return -1;
    size_t mask = s->nslots - 1;
    for (size_t i = hash_id(id) & mask; s->by_id[i]; i = (i + 1) & mask)
        if (s->fields[s->by_id[i] - 1].id == id) return (long)s->by_id[i] - 1;
    return -1;
}

long w2l_schema_index_of_name(const w2l_schema *s, const char *name)
{
    if (!s || !name || !s->nslots) return -1;
    size_t mask = s->nslots - 1;
    for (size_t i = hash_name(name) & mask; s->by_name[i]; i = (i + 1) & mask)
        if (strcmp(s->fields[s->by_name[i] - 1].name, name) == 0) return (long)s->by_name[i] - 1;
    return -1;
}

const int32_t *w2l_schema_identifier(const w2l_schema *s, size_t *n)
{
    if (n) *n = s ? s->nident : 0;
    return s ? s->ident : NULL;
}

int32_t w2l_schema_max_field_id(const w2l_schema *s) { return s ? s->max_id : 0; }

w2l_rc w2l_schema_check_row(const w2l_schema *s, const w2l_value *row, size_t n,
                            w2l_error *err)
{
    if (!s || (!row && n)) return w2l__fail(err, W2L_MISUSE, "w2l_schema_check_row: NULL argument");
    if (n != s->n)
        return w2l__fail(err, W2L_SCHEMA, "row has %zu values, schema %d has %zu fields", n,
                         (int)s->schema_id, s->n);
    for (size_t i = 0; i < n; i++)
        if (row[i].is_null && s->fields[i].required)
            return w2l__fail(err, W2L_SCHEMA, "field '%.200s' (id %d) is required but NULL",
                             s->fields[i].name, (int)s->fields[i].id);
    return W2L_OK;
}

/* ---- JSON ---- */

w2l_rc w2l_schema_to_json(const w2l_schema *s, char **out, w2l_error *err)
{
    if (!s || !out) return w2l__fail(err, W2L_MISUSE, "w2l_schema_to_json: NULL argument");
    *out = NULL;
    w2l__json *root = w2l__json_new_object(), *ids = NULL, *fields = NULL;
    int bad = !root;
    bad = bad || w2l__json_add(root, "type", w2l__json_new_string("struct"));
    bad = bad || w2l__json_add(root, "schema-id", w2l__json_new_int64(s->schema_id));
    if (!bad) {
        ids = w2l__json_new_array();
        bad = w2l__json_add(root, "identifier-field-ids", ids);
    }
    for (size_t i = 0; !bad && i < s->nident; i++)
        bad = w2l__json_append(ids, w2l__json_new_int64(s->ident[i]));
    if (!bad) {
        fields = w2l__json_new_array();
        bad = w2l__json_add(root, "fields", fields);
    }
    for (size_t i = 0; !bad && i < s->n; i++) {
        const w2l_field *f = &s->fields[i];
        char tn[24];
        w2l__json *o = w2l__json_new_object();
        bad = w2l__json_append(fields, o);
        bad = bad || w2l__json_add(o, "id", w2l__json_new_int64(f->id));
        bad = bad || w2l__json_add(o, "name", w2l__json_new_string(f->name));
        bad = bad || w2l__json_add(o, "required", w2l__json_new_bool(f->required));
        bad = bad || w2l__json_add(o, "type",
                                   w2l__json_new_string(w2l_type_format(f->type, tn, sizeof tn)));
    }
    char *text = bad ? NULL : w2l__json_print(root, 0);
    w2l__json_free(root);
    W2L_NOMEM_IF(!text, err);
    *out = text;
    return W2L_OK;
}

static w2l_rc get_int32(const w2l__json *j, const char *what, int32_t *out, w2l_error *err)
{
    int64_t v;
    if (!j || w2l__json_int64(j, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: %s must be a 32-bit integer", what);
    *out = (int32_t)v;
    return W2L_OK;
}

static w2l_rc add_json_field(w2l_schema *s, const w2l__json *jf, size_t i, w2l_error *err)
{
    char what[96];
    if (w2l__json_type(jf) != W2L_JSON_OBJECT)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: fields[%zu] is not an object", i);
    const char *name = w2l__json_str(w2l__json_get(jf, "name"));
    if (!name) return w2l__fail(err, W2L_CORRUPT, "schema JSON: fields[%zu]: no \"name\"", i);
    int32_t id = 0;
    snprintf(what, sizeof what, "\"id\" of field '%.60s'", name);
    W2L_TRY(get_int32(w2l__json_get(jf, "id"), what, &id, err));
    int required = 0;
    const w2l__json *jr = w2l__json_get(jf, "required");
    if (!jr || w2l__json_bool(jr, &required) != 0)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: field '%.200s': \"required\" must be a "
                         "boolean", name);
    const w2l__json *jt = w2l__json_get(jf, "type");
    if (w2l__json_type(jt) == W2L_JSON_OBJECT)
        return w2l__fail(err, W2L_SCHEMA, "nested type not supported: field %.200s", name);
    const char *tname = w2l__json_str(jt);
    if (!tname)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: field '%.200s': \"type\" must be a "
                         "string", name);
    w2l_type t;
    if (w2l_type_parse(tname, &t, err) != W2L_OK) {
        w2l__error_prefix(err, "field %.200s: ", name);
        return W2L_SCHEMA;
    }
    return w2l_schema_add_field(s, id, name, t, required, err);
}

static w2l_rc from_tree(const w2l__json *root, w2l_schema **out, w2l_error *err)
{
    if (w2l__json_type(root) != W2L_JSON_OBJECT)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: not an object");
    const w2l__json *jt = w2l__json_get(root, "type");
    if (jt && (!w2l__json_str(jt) || strcmp(w2l__json_str(jt), "struct") != 0))
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: \"type\" must be \"struct\"");
    int32_t sid = 0;
    const w2l__json *js = w2l__json_get(root, "schema-id");
    if (js) W2L_TRY(get_int32(js, "\"schema-id\"", &sid, err));
    const w2l__json *jfields = w2l__json_get(root, "fields");
    if (w2l__json_type(jfields) != W2L_JSON_ARRAY)
        return w2l__fail(err, W2L_CORRUPT, "schema JSON: \"fields\" must be an array");
    const w2l__json *jids = w2l__json_get(root, "identifier-field-ids");
    if (jids && w2l__json_type(jids) != W2L_JSON_ARRAY)
        return w2l__fail(err, W2L_CORRUPT,
                         "schema JSON: \"identifier-field-ids\" must be an array");

    w2l_schema *s = w2l_schema_new(sid);
    W2L_NOMEM_IF(!s, err);
    w2l_rc rc = W2L_OK;
    size_t i = 0;
    for (const w2l__json *jf = w2l__json_first(jfields); jf && rc == W2L_OK;
         jf = w2l__json_next(jf), i++)
        rc = add_json_field(s, jf, i, err);
    size_t nids = jids ? w2l__json_size(jids) : 0;
    int32_t *ids = NULL;
    if (rc == W2L_OK && nids) {
        ids = w2l__malloc(nids * sizeof *ids);
        if (!ids) rc = w2l__fail(err, W2L_NOMEM, "out of memory reading schema JSON");
        size_t k = 0;
        for (const w2l__json *j = w2l__json_first(jids); rc == W2L_OK && j;
             j = w2l__json_next(j))
            rc = get_int32(j, "an identifier field id", &ids[k++], err);
    }
    if (rc == W2L_OK) rc = w2l_schema_set_identifier(s, ids, nids, err);
    w2l__free(ids);
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

w2l_rc w2l_schema_from_json(const char *json, size_t len, w2l_schema **out, w2l_error *err)
{
    if (!out || (!json && len))
        return w2l__fail(err, W2L_MISUSE, "w2l_schema_from_json: NULL argument");
    *out = NULL;
    w2l__json *root;
    W2L_TRY(w2l__json_parse(json ? json : "", len, &root, err));
    w2l_rc rc = from_tree(root, out, err);
    w2l__json_free(root);
    return rc;
}
