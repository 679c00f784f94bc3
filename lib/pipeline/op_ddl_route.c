/*
 * The DDL handler's routes and metadata columns (op_ddl_int.h; w2l-routes(7)).
 *
 * Routes: a source table a route matches is handled as its target: its rows, its
 * statements and its quarantine reach the target's table. The target merges its sources:
 *   - its schema is the union of theirs: a column a source brings is added (optional), a
 *     wider type widens it, a column a source drops stays (other sources may have it); a
 *     type no promotion joins fails under ddl.policy. ALTER TABLE on one source is applied
 *     in that spirit (w2l__evolve_opts.merge), so the same ALTER on each source changes
 *     the target once;
 *   - TRUNCATE, DROP and RENAME of one source leave the target's rows as they are: they
 *     are logged and followed by nothing (the target holds other sources' rows too);
 *   - keys: with route.NAME.key-with-source=true the target's key is _source_db,
 *     _source_table and the source's key; unset, rows with a key from a second source
 *     table stop the job (their keys may collide), naming both tables and the key.
 *
 * Metadata columns (metadata-columns, and _source_db/_source_table for key-with-source):
 * columns the handler adds to a table and fills in every row it forwards: _op_ts
 * (timestamptz, the source commit time), _source_db, _source_table (string, where the row
 * came from) and _op (string, INSERT or UPDATE: the row's last operation; DELETE in a
 * delete's before image). A table created with them has them from its first schema; an
 * existing table gets them added (optional) when it is first loaded.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"
#include "route.h"

static const struct {
    const char *key, *column;
    w2l_type_id type;
} xcols[W2L__DDL_NEXTRA] = {
    {"op_ts", "_op_ts", W2L_TYPE_TIMESTAMPTZ},
    {"source_db", "_source_db", W2L_TYPE_STRING},
    {"source_table", "_source_table", W2L_TYPE_STRING},
    {"op", "_op", W2L_TYPE_STRING},
};
enum { X_OP_TS, X_SOURCE_DB, X_SOURCE_TABLE, X_OP };

/* ------------------------------------------------------------ names ------------------ */

w2l_rc w2l__ddlop_tbl_source(ddl_op *op, const char *db, const char *table, tbl **out,
                             w2l_error *err)
{
    const char *ns, *name;
    const w2l__route *r;
    W2L_TRY(w2l__routes_map(op->routes, db, table, &ns, &name, &r, err));
    W2L_TRY(w2l__ddlop_tbl_get(op, ns, name, out, err));
    if (r && !(*out)->route) (*out)->route = r;
    return W2L_OK;
}

/* ------------------------------------------------------------ metadata columns ------- */

/* Parses a metadata-columns value into a mask; W2L_CONFIG names key and the bad word. */
static w2l_rc parse_mask(const char *v, const char *key, unsigned *mask, w2l_error *err)
{
    *mask = 0;
    for (const char *p = v ? v : ""; *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t') p++;
        size_t n = strcspn(p, " ,\t");
        if (!n) break;
        size_t k = 0;
        while (k < W2L__DDL_NEXTRA && (strlen(xcols[k].key) != n || strncmp(xcols[k].key, p, n)))
            k++;
        if (k == W2L__DDL_NEXTRA)
            return w2l__fail(err, W2L_CONFIG,
                             "%s: '%.*s' is not a metadata column (op_ts, source_db, "
                             "source_table, op)",
                             key, (int)n, p);
        *mask |= 1u << k;
        p += n;
    }
    return W2L_OK;
}

w2l_rc w2l__ddlop_check_extras(const w2l_conf *conf, w2l_error *err)
{
    const char *v = NULL;
    unsigned mask;
    w2l_conf_get(conf, "metadata-columns", &v, NULL);
    return parse_mask(v, "metadata-columns", &mask, err);
}

/* The extra columns t carries (computed once): metadata-columns for its name, and the
 * source columns its route's key needs. */
static w2l_rc want_of(ddl_op *op, tbl *t, w2l_error *err)
{
    if (t->xknown) return W2L_OK;
    char full[600], key[700];
    snprintf(full, sizeof full, "%s.%s", t->ns, t->name);
    snprintf(key, sizeof key, "table.%s.metadata-columns", full);
    const char *v = NULL;
    w2l_conf_get_for_table(op->conf, full, "metadata-columns", &v, NULL);
    W2L_TRY(parse_mask(v, key, &t->xwant, err));
    if (t->route && t->route->key_with_source == 1)
        t->xwant |= 1u << X_SOURCE_DB | 1u << X_SOURCE_TABLE;
    t->xknown = 1;
    return W2L_OK;
}

int w2l__ddlop_is_extra_name(const tbl *t, const char *name)
{
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        if (t->xwant >> k & 1 && !strcmp(name, xcols[k].column)) return 1;
    return 0;
}

static int key_with_source(const tbl *t)
{
    return t->route && t->route->key_with_source == 1;
}

w2l_rc w2l__ddlop_with_extras(ddl_op *op, tbl *t, w2l_schema *s, w2l_schema **out, w2l_error *err)
{
    *out = NULL;
    W2L_TRY(want_of(op, t, err));
    int missing = 0;
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        if (t->xwant >> k & 1 && w2l__ddlop_index_of_name(s, xcols[k].column) < 0) missing = 1;
    if (!missing && !key_with_source(t)) {
        *out = w2l_schema_ref(s);
        return W2L_OK;
    }
    size_t n = w2l_schema_field_count(s), nid;
    const int32_t *sid = w2l_schema_identifier(s, &nid);
    w2l_schema *x = w2l_schema_new(w2l_schema_id(s));
    int32_t *ids = w2l__calloc(nid + 3, sizeof *ids);
    w2l_rc rc = x && ids ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    int32_t next = w2l_schema_max_field_id(s);
    size_t nk = 0;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        int src_key = key_with_source(t) && (!strcmp(f->name, xcols[X_SOURCE_DB].column) ||
                                             !strcmp(f->name, xcols[X_SOURCE_TABLE].column));
        rc = w2l_schema_add_field(x, f->id, f->name, f->type, f->required || src_key, err);
    }
    for (size_t k = 0; rc == W2L_OK && k < W2L__DDL_NEXTRA; k++) {
        if (!(t->xwant >> k & 1) || w2l__ddlop_index_of_name(s, xcols[k].column) >= 0) continue;
        int req = key_with_source(t) && (k == X_SOURCE_DB || k == X_SOURCE_TABLE);
        rc = w2l_schema_add_field(x, ++next, xcols[k].column, (w2l_type){xcols[k].type, 0, 0},
                                  req, err);
    }
    if (rc == W2L_OK && key_with_source(t)) {
        ids[nk++] = w2l_schema_field(x, (size_t)w2l__ddlop_index_of_name(
                                               x, xcols[X_SOURCE_DB].column))->id;
        ids[nk++] = w2l_schema_field(x, (size_t)w2l__ddlop_index_of_name(
                                               x, xcols[X_SOURCE_TABLE].column))->id;
    }
    for (size_t i = 0; rc == W2L_OK && i < nid; i++) {
        int dup = 0;
        for (size_t j = 0; j < nk; j++) dup |= ids[j] == sid[i];
        if (!dup) ids[nk++] = sid[i];
    }
    if (rc == W2L_OK) rc = w2l_schema_set_identifier(x, ids, nk, err);
    w2l__free(ids);
    if (rc != W2L_OK) {
        w2l_schema_unref(x);
        return rc;
    }
    *out = x;
    return W2L_OK;
}

w2l_rc w2l__ddlop_tbl_extras(ddl_op *op, tbl *t, w2l_error *err)
{
    W2L_TRY(want_of(op, t, err));
    if (!t->xwant) return W2L_OK;
    const w2l_schema *s = w2l__ice_meta_current_schema(t->ice->meta);
    if (!s) return W2L_OK; /* nested: tbl_sync names it */
    w2l__ice_schema_change ops[W2L__DDL_NEXTRA];
    size_t nops = 0;
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        if (t->xwant >> k & 1 && w2l__ddlop_index_of_name(s, xcols[k].column) < 0)
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, xcols[k].column, NULL,
                                                   {xcols[k].type, 0, 0}, 0};
    if (key_with_source(t)) {
        size_t nid;
        const int32_t *ids = w2l_schema_identifier(s, &nid);
        long a = w2l__ddlop_index_of_name(s, xcols[X_SOURCE_DB].column),
             b = w2l__ddlop_index_of_name(s, xcols[X_SOURCE_TABLE].column);
        if (nops || nid < 2 || a < 0 || b < 0 || ids[0] != w2l_schema_field(s, (size_t)a)->id ||
            ids[1] != w2l_schema_field(s, (size_t)b)->id)
            return w2l__fail(err, W2L_CONFIG,
                             "route.%s.key-with-source=true: table %s.%s is in the lake without "
                             "_source_db and _source_table at the head of its key (Iceberg cannot "
                             "add a required key column to a table with data): drop it, or give "
                             "the route a new target",
                             t->route->name, t->ns, t->name);
    }
    if (!nops) return W2L_OK;
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: table %s.%s: adding %zu metadata column(s)",
                   t->ns, t->name, nops);
    /* the handler's copy is not synced yet: commit_ops syncs it */
    return w2l__ddlop_commit_ops(op, t, ops, nops, err);
}

static void resolve_extras(tbl *t)
{
    if (t->xfor == t->schema) return;
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        t->xidx[k] = t->xwant >> k & 1 ? w2l__ddlop_index_of_name(t->schema, xcols[k].column) : -1;
    t->xfor = t->schema;
}

int w2l__ddlop_has_extras(tbl *t)
{
    resolve_extras(t);
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        if (t->xidx[k] >= 0) return 1;
    return 0;
}

int w2l__ddlop_is_extra_id(tbl *t, int32_t id)
{
    resolve_extras(t);
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++)
        if (t->xidx[k] >= 0 && w2l_schema_field(t->schema, (size_t)t->xidx[k])->id == id) return 1;
    return 0;
}

static w2l_value str_value(const char *s)
{
    w2l_value v = {0};
    v.is_null = !s;
    v.v.bytes.ptr = s ? s : "";
    v.v.bytes.len = s ? strlen(s) : 0;
    return v;
}

void w2l__ddlop_fill_extras(tbl *t, const w2l_change *c, w2l_value *row, uint8_t *present)
{
    resolve_extras(t);
    for (size_t k = 0; k < W2L__DDL_NEXTRA; k++) {
        long i = t->xidx[k];
        if (i < 0) continue;
        w2l_value v = {0};
        switch (k) {
        case X_OP_TS:
            v.is_null = c->ts_ms == 0;
            v.v.i64 = c->ts_ms * 1000;
            break;
        case X_SOURCE_DB: v = str_value(c->db); break;
        case X_SOURCE_TABLE: v = str_value(c->table); break;
        default:
            v = str_value(c->op == W2L_OP_INSERT         ? "INSERT"
                          : c->op == W2L_OP_DELETE ? "DELETE"
                                                   : "UPDATE");
        }
        row[i] = v;
        if (present) present[i / 8] = (uint8_t)(present[i / 8] | 1u << (i % 8));
    }
}

/* ------------------------------------------------------------ routed tables ---------- */

w2l_rc w2l__ddlop_route_rows(ddl_op *op, tbl *t, const w2l_change *c, w2l_error *err)
{
    (void)op;
    if (!t->route || t->route->key_with_source != -1 || !c->db || !c->table) return W2L_OK;
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(c->schema, &nid);
    if (!nid) return W2L_OK;
    if (!t->shard) {
        t->shard = w2l__asprintf("%s.%s", c->db, c->table);
        W2L_NOMEM_IF(!t->shard, err);
        return W2L_OK;
    }
    size_t dl = strlen(c->db);
    if (!strncmp(t->shard, c->db, dl) && t->shard[dl] == '.' &&
        !strcmp(t->shard + dl + 1, c->table))
        return W2L_OK;
    char keys[300] = "";
    for (size_t i = 0, at = 0; i < nid && at < sizeof keys; i++) {
        long x = w2l_schema_index_of_id(c->schema, ids[i]);
        at += (size_t)snprintf(keys + at, sizeof keys - at, "%s%s", i ? ", " : "",
                               x >= 0 ? w2l_schema_field(c->schema, (size_t)x)->name : "?");
    }
    return w2l__fail(err, W2L_CONFIG,
                     "route %s: table %s.%s receives rows of %s and of %s.%s, keyed by (%s): "
                     "keys unique only per source table would collide. Set "
                     "route.%s.key-with-source=true to key the target by _source_db, "
                     "_source_table and (%s), or =false when the keys are unique across the "
                     "route's tables",
                     t->route->name, t->ns, t->name, t->shard, c->db, c->table, keys,
                     t->route->name, keys);
}

/* The source table a statement's sub-th unit names, for messages. */
static void unit_name(const w2l__ddl_stmt *st, size_t sub, char *buf, size_t size)
{
    const w2l__ddl_name *n = &st->table;
    if (st->kind == W2L_DDL_DROP_TABLE && sub < st->ntables) n = &st->tables[sub];
    if (st->kind == W2L_DDL_RENAME_TABLE && sub < st->nrenames) n = &st->renames[sub].from;
    snprintf(buf, size, "%s%s%s", n->db ? n->db : "", n->db ? "." : "", n->name ? n->name : "?");
}

int w2l__ddlop_route_skips(const tbl *t, const w2l__ddl_stmt *st, size_t sub)
{
    if (!t->route) return 0;
    const char *what = NULL;
    switch (st->kind) {
    case W2L_DDL_TRUNCATE_TABLE: what = "TRUNCATE"; break;
    case W2L_DDL_DROP_TABLE: what = "DROP TABLE"; break;
    case W2L_DDL_RENAME_TABLE:
        if (sub == SUB_SWAP) return 0;
        what = "RENAME TABLE";
        break;
    default: return 0;
    }
    char src[300];
    unit_name(st, sub, src, sizeof src);
    w2l__log(W2L_LOG_WARN,
             "ddl: %s of %s, one of the tables route %s merges into %s.%s: the target keeps "
             "the rows that table sent (w2l-routes(7))",
             what, src, t->route->name, t->ns, t->name);
    return 1;
}

int w2l__ddlop_route_onto(ddl_op *op, const tbl *t, const char *ns, const char *name)
{
    const char *tns, *tname;
    const w2l__route *r = NULL;
    if (w2l__routes_map(op->routes, ns, name, &tns, &tname, &r, NULL) != W2L_OK || !r) return 0;
    w2l__log_table(
        W2L_LOG_WARN, t->ns, t->name,
        "ddl: RENAME of %s.%s to %s.%s, one of the tables route %s merges into %s.%s: the "
        "lake table %s.%s stays as it is, and the rows of %s.%s go to %s.%s",
        t->ns, t->name, ns, name, r->name, tns, tname, t->ns, t->name, ns, name, tns, tname);
    return 1;
}
