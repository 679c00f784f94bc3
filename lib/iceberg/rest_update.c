/*
 * A REST catalog commit from two table metadata documents (rest.h): the library builds a
 * table's whole next metadata, as for the other catalogs; a REST catalog instead takes the
 * changes (updates) and the facts they rest on (requirements), and writes the metadata
 * file itself. Both lists come from comparing the base the commit started from with the
 * next metadata: schemas, specs, sort orders and snapshots by their ids, refs and
 * properties by value. Written from the Iceberg REST catalog specification's
 * TableRequirement and TableUpdate objects.
 */
#include <stdio.h>

#include "rest.h"

static int64_t i64(const w2l__json *obj, const char *key, int64_t dflt)
{
    int64_t v;
    return w2l__json_int64(w2l__json_get(obj, key), &v) == 0 ? v : dflt;
}

/* The member of array arr whose key has the integer value id, or NULL. */
static const w2l__json *find_id(const w2l__json *arr, const char *key, int64_t id)
{
    for (const w2l__json *e = w2l__json_first(arr); e; e = w2l__json_next(e))
        if (i64(e, key, INT64_MIN) == id) return e;
    return NULL;
}

static int same(const w2l__json *a, const w2l__json *b)
{
    if (!a || !b) return a == b;
    char *x = w2l__json_print(a, 0), *y = w2l__json_print(b, 0);
    int eq = x && y && strcmp(x, y) == 0;
    w2l__free(x);
    w2l__free(y);
    return eq;
}

/* The snapshot id main points at (the refs, else current-snapshot-id), -1 for none. */
static int64_t main_snapshot(const w2l__json *m)
{
    const w2l__json *main = w2l__json_get(w2l__json_get(m, "refs"), "main");
    if (main) return i64(main, "snapshot-id", -1);
    int64_t cur = i64(m, "current-snapshot-id", -1);
    return cur < 0 ? -1 : cur;
}

int w2l__rest_has_snapshot(const w2l__json *m, int64_t id)
{
    return find_id(w2l__json_get(m, "snapshots"), "snapshot-id", id) != NULL;
}

int64_t w2l__rest_added_snapshot(const w2l__json *base, const w2l__json *next)
{
    int64_t id = -1;
    const w2l__json *bs = base ? w2l__json_get(base, "snapshots") : NULL;
    for (const w2l__json *s = w2l__json_first(w2l__json_get(next, "snapshots")); s;
         s = w2l__json_next(s)) {
        int64_t sid = i64(s, "snapshot-id", -1);
        if (sid >= 0 && !find_id(bs, "snapshot-id", sid)) id = sid;
    }
    return id;
}

/* A fresh {"<kind_key>": kind} object. */
static w2l__json *typed(const char *kind_key, const char *kind)
{
    w2l__json *o = w2l__json_new_object();
    if (o && w2l__json_add(o, kind_key, w2l__json_new_string(kind)) != 0) {
        w2l__json_free(o);
        return NULL;
    }
    return o;
}

typedef struct lists {
    w2l__json *req, *upd;
    int nomem;
} lists;

/* Appends o to arr; out of memory (o NULL included) is kept in l. */
static w2l__json *put(lists *l, w2l__json *arr, w2l__json *o)
{
    if (w2l__json_append(arr, o) != 0) {
        l->nomem = 1;
        return NULL;
    }
    return o;
}

static void add_i64(lists *l, w2l__json *o, const char *key, int64_t v)
{
    if (o && w2l__json_add(o, key, w2l__json_new_int64(v)) != 0) l->nomem = 1;
}

static void add_str(lists *l, w2l__json *o, const char *key, const char *v)
{
    if (o && w2l__json_add(o, key, w2l__json_new_string(v)) != 0) l->nomem = 1;
}

static void add_copy(lists *l, w2l__json *o, const char *key, const w2l__json *v)
{
    if (o && w2l__json_add(o, key, w2l__json_dup(v)) != 0) l->nomem = 1;
}

static w2l__json *requirement(lists *l, const char *type)
{
    return put(l, l->req, typed("type", type));
}

static w2l__json *update(lists *l, const char *action)
{
    return put(l, l->upd, typed("action", action));
}

/* add-X for each element of next's array (by id key) that base lacks, then set-default-X
 * when the default differs (-1: "the one added last", as the specification allows, since a
 * server may number an added element itself). */
static void elements(lists *l, const w2l__json *base, const w2l__json *next, const char *arr,
                     const char *id_key, const char *add_action, const char *add_member,
                     const char *default_key, const char *set_action, const char *set_member)
{
    const w2l__json *ba = base ? w2l__json_get(base, arr) : NULL;
    int64_t def = i64(next, default_key, INT64_MIN), added_last = INT64_MIN;
    for (const w2l__json *e = w2l__json_first(w2l__json_get(next, arr)); e;
         e = w2l__json_next(e)) {
        int64_t id = i64(e, id_key, INT64_MIN);
        if (ba && find_id(ba, id_key, id)) continue;
        w2l__json *u = update(l, add_action);
        add_copy(l, u, add_member, e);
        if (u && strcmp(add_action, "add-schema") == 0)
            add_i64(l, u, "last-column-id", i64(next, "last-column-id", 0));
        added_last = id;
    }
    if (def == INT64_MIN || (base && i64(base, default_key, INT64_MIN) == def)) return;
    add_i64(l, update(l, set_action), set_member, def == added_last ? -1 : def);
}

static void properties(lists *l, const w2l__json *base, const w2l__json *next)
{
    const w2l__json *bp = base ? w2l__json_get(base, "properties") : NULL;
    const w2l__json *np = w2l__json_get(next, "properties");
    w2l__json *set = NULL, *rm = NULL;
    for (const w2l__json *p = w2l__json_first(np); p; p = w2l__json_next(p)) {
        const char *k = w2l__json_key(p);
        const char *bv = w2l__json_str(w2l__json_get(bp, k)), *nv = w2l__json_str(p);
        if (!nv || (bv && strcmp(bv, nv) == 0)) continue;
        if (!set) {
            w2l__json *u = update(l, "set-properties");
            if (!u || w2l__json_add(u, "updates", set = w2l__json_new_object()) != 0) {
                l->nomem = 1;
                return;
            }
        }
        add_str(l, set, k, nv);
    }
    for (const w2l__json *p = w2l__json_first(bp); p; p = w2l__json_next(p)) {
        if (w2l__json_get(np, w2l__json_key(p))) continue;
        if (!rm) {
            w2l__json *u = update(l, "remove-properties");
            if (!u || w2l__json_add(u, "removals", rm = w2l__json_new_array()) != 0) {
                l->nomem = 1;
                return;
            }
        }
        if (w2l__json_append(rm, w2l__json_new_string(w2l__json_key(p))) != 0) l->nomem = 1;
    }
}

/* The refs of m: its "refs", or for metadata without them main at current-snapshot-id. */
static w2l__json *refs_of(const w2l__json *m)
{
    const w2l__json *r = m ? w2l__json_get(m, "refs") : NULL;
    if (r) return w2l__json_dup(r);
    w2l__json *o = w2l__json_new_object();
    int64_t cur = m ? i64(m, "current-snapshot-id", -1) : -1;
    if (o && cur >= 0) {
        w2l__json *main = typed("type", "branch");
        if (!main || w2l__json_add(main, "snapshot-id", w2l__json_new_int64(cur)) != 0 ||
            w2l__json_add(o, "main", main) != 0) {
            w2l__json_free(o);
            return NULL;
        }
    }
    return o;
}

static void snapshots(lists *l, const w2l__json *base, const w2l__json *next)
{
    const w2l__json *bs = base ? w2l__json_get(base, "snapshots") : NULL;
    const w2l__json *ns = w2l__json_get(next, "snapshots");
    for (const w2l__json *s = w2l__json_first(ns); s; s = w2l__json_next(s))
        if (!find_id(bs, "snapshot-id", i64(s, "snapshot-id", -1)))
            add_copy(l, update(l, "add-snapshot"), "snapshot", s);
    w2l__json *br = refs_of(base), *nr = refs_of(next);
    if (!br || !nr) l->nomem = 1;
    for (const w2l__json *r = w2l__json_first(br); r; r = w2l__json_next(r))
        if (!w2l__json_get(nr, w2l__json_key(r)))
            add_str(l, update(l, "remove-snapshot-ref"), "ref-name", w2l__json_key(r));
    for (const w2l__json *r = w2l__json_first(nr); r; r = w2l__json_next(r)) {
        if (same(w2l__json_get(br, w2l__json_key(r)), r)) continue;
        w2l__json *u = update(l, "set-snapshot-ref");
        add_str(l, u, "ref-name", w2l__json_key(r));
        /* the ref's own members: type, snapshot-id and the retention settings */
        for (const w2l__json *f = w2l__json_first(r); f; f = w2l__json_next(f))
            add_copy(l, u, w2l__json_key(f), f);
    }
    w2l__json_free(br);
    w2l__json_free(nr);
    w2l__json *ids = NULL;
    for (const w2l__json *s = w2l__json_first(bs); s; s = w2l__json_next(s)) {
        int64_t id = i64(s, "snapshot-id", -1);
        if (find_id(ns, "snapshot-id", id)) continue;
        if (!ids) {
            w2l__json *u = update(l, "remove-snapshots");
            if (!u || w2l__json_add(u, "snapshot-ids", ids = w2l__json_new_array()) != 0) {
                l->nomem = 1;
                return;
            }
        }
        if (w2l__json_append(ids, w2l__json_new_int64(id)) != 0) l->nomem = 1;
    }
}

w2l_rc w2l__rest_diff(const w2l__json *base, const w2l__json *next, w2l__json **requirements,
                      w2l__json **updates, w2l_error *err)
{
    *requirements = *updates = NULL;
    const char *nu = w2l__json_str(w2l__json_get(next, "table-uuid"));
    const char *loc = w2l__json_str(w2l__json_get(next, "location"));
    int64_t fv = i64(next, "format-version", -1);
    if (!nu || !loc || fv < 1 || !w2l__json_get(next, "schemas"))
        return w2l__fail(err, W2L_CORRUPT, "rest commit: the new table metadata lacks its uuid, "
                         "location, format-version or schemas");
    const char *bu = base ? w2l__json_str(w2l__json_get(base, "table-uuid")) : NULL;
    if (base && bu && strcmp(bu, nu) != 0)
        return w2l__fail(err, W2L_MISUSE, "rest commit: table %s is not table %s", nu, bu);
    lists l = {w2l__json_new_array(), w2l__json_new_array(), 0};
    if (!l.req || !l.upd) l.nomem = 1;

    if (!l.nomem && !base) {
        requirement(&l, "assert-create");
    } else if (!l.nomem) {
        if (bu) add_str(&l, requirement(&l, "assert-table-uuid"), "uuid", bu);
        w2l__json *r = requirement(&l, "assert-ref-snapshot-id");
        add_str(&l, r, "ref", "main");
        int64_t ms = main_snapshot(base);
        if (r && w2l__json_add(r, "snapshot-id",
                               ms < 0 ? w2l__json_new_null() : w2l__json_new_int64(ms)) != 0)
            l.nomem = 1;
        add_i64(&l, requirement(&l, "assert-current-schema-id"), "current-schema-id",
                i64(base, "current-schema-id", 0));
        add_i64(&l, requirement(&l, "assert-last-assigned-field-id"), "last-assigned-field-id",
                i64(base, "last-column-id", 0));
        add_i64(&l, requirement(&l, "assert-default-spec-id"), "default-spec-id",
                i64(base, "default-spec-id", 0));
    }

    if (!base) add_str(&l, update(&l, "assign-uuid"), "uuid", nu);
    if (!base || fv > i64(base, "format-version", 1))
        add_i64(&l, update(&l, "upgrade-format-version"), "format-version", fv);
    elements(&l, base, next, "schemas", "schema-id", "add-schema", "schema", "current-schema-id",
             "set-current-schema", "schema-id");
    elements(&l, base, next, "partition-specs", "spec-id", "add-spec", "spec", "default-spec-id",
             "set-default-spec", "spec-id");
    elements(&l, base, next, "sort-orders", "order-id", "add-sort-order", "sort-order",
             "default-sort-order-id", "set-default-sort-order", "sort-order-id");
    const char *bl = base ? w2l__json_str(w2l__json_get(base, "location")) : NULL;
    if (!bl || strcmp(bl, loc) != 0) add_str(&l, update(&l, "set-location"), "location", loc);
    properties(&l, base, next);
    snapshots(&l, base, next);

    if (l.nomem) {
        w2l__json_free(l.req);
        w2l__json_free(l.upd);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *requirements = l.req;
    *updates = l.upd;
    return W2L_OK;
}

w2l_rc w2l__rest_fail(w2l_error *err, const char *method, const char *path, long status,
                      const char *body, size_t len)
{
    w2l__json *j = NULL;
    w2l_error e2;
    const char *type = NULL, *msg = NULL;
    if (body && len && w2l__json_parse(body, len, &j, &e2) == W2L_OK) {
        const w2l__json *e = w2l__json_get(j, "error");
        type = w2l__json_str(w2l__json_get(e, "type"));
        msg = w2l__json_str(w2l__json_get(e, "message"));
        if (w2l__json_str(e)) { /* an OAuth2 error: {"error":"invalid_client", ...} */
            type = w2l__json_str(e);
            msg = w2l__json_str(w2l__json_get(j, "error_description"));
        }
    }
    w2l_rc code = status == 404                    ? W2L_NOTFOUND
                  : status == 409                  ? W2L_CONFLICT
                  : status == 400 || status == 401 || status == 403 ? W2L_CONFIG
                  : status == 429 || status >= 500 ? W2L_UNAVAILABLE
                                                   : W2L_ERROR;
    char shown[160] = "";
    if (!type && !msg && body && len) { /* not an ErrorModel: the start of what came */
        size_t n = W2L_MIN(len, sizeof shown - 1);
        for (size_t i = 0; i < n; i++)
            shown[i] = body[i] == '\n' || body[i] == '\r' ? ' ' : body[i];
        shown[n] = '\0';
    }
    w2l__fail(err, code, "rest catalog: %s %s: HTTP %ld%s%s%s%s", method, path, status,
              type ? " " : "", type ? type : "", msg || *shown ? ": " : "", msg ? msg : shown);
    if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
    w2l__json_free(j);
    return code;
}
