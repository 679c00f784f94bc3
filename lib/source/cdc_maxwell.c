/*
 * maxwell-json rows and DDL (cdc_int.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"

/* ---- maxwell-json ---- */

/* A maxwell def column as MySQL type text: {"type":"decimal","precision":12,"scale":2},
 * {"type":"bigint","signed":false}, {"type":"datetime","column-length":6},
 * {"type":"enum","enum-values":["a","b"]}. */
static w2l_rc maxwell_def_type(w2l__cdc *d, const w2l__json *c, char *tt, size_t size, w2l_error *err)
{
    const char *type = w2l__cdc_str(c, "type");
    if (!type) return w2l__cdc_missing(d, "def.columns.type", err);
    int64_t p = -1, s = -1, len = -1;
    w2l__json_int64(w2l__json_get(c, "precision"), &p);
    w2l__json_int64(w2l__json_get(c, "scale"), &s);
    w2l__json_int64(w2l__json_get(c, "column-length"), &len);
    int sgn = 1;
    w2l__json_bool(w2l__json_get(c, "signed"), &sgn);
    size_t n;
    if (p >= 0) n = (size_t)snprintf(tt, size, "%s(%lld,%lld)", type, (long long)p, (long long)(s < 0 ? 0 : s));
    else if (len >= 0) n = (size_t)snprintf(tt, size, "%s(%lld)", type, (long long)len);
    else n = (size_t)snprintf(tt, size, "%s", type);
    if (!sgn && n < size) n += (size_t)snprintf(tt + n, size - n, " unsigned");
    const w2l__json *vals = w2l__json_get(c, "enum-values");
    if (!vals) vals = w2l__json_get(c, "set-values");
    if (vals && n < size) {
        n += (size_t)snprintf(tt + n, size - n, "(");
        for (w2l__json *v = w2l__json_first(vals); v && n < size; v = w2l__json_next(v)) {
            const char *vs = w2l__json_str(v);
            n += (size_t)snprintf(tt + n, size - n, "%s'", v == w2l__json_first(vals) ? "" : ",");
            for (; vs && *vs && n + 2 < size; vs++) {
                if (*vs == '\'') tt[n++] = '\'';
                tt[n++] = *vs;
            }
            if (n < size) n += (size_t)snprintf(tt + n, size - n, "'");
        }
        if (n < size) snprintf(tt + n, size - n, ")");
    }
    return W2L_OK;
}

static w2l_rc maxwell_def(w2l__cdc *d, const w2l__json *def, table **out, w2l_error *err)
{
    const char *db = w2l__cdc_str(def, "database"), *tn = w2l__cdc_str(def, "table");
    if (!db || !tn) return w2l__cdc_missing(d, "def.database/def.table", err);
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    w2l__cdc_describe_reset(d);
    char tt[512];
    for (w2l__json *c = w2l__json_first(w2l__json_get(def, "columns")); c; c = w2l__json_next(c)) {
        const char *name = w2l__cdc_str(c, "name");
        if (!name) return w2l__cdc_missing(d, "def.columns.name", err);
        W2L_TRY(maxwell_def_type(d, c, tt, sizeof tt, err));
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(w2l__cdc_mysql_type(d, db, tn, name, tt, &ty, &info, err));
        W2L_TRY(w2l__cdc_col_add(d, name, ty, w2l__cdc_mysql_cv(&info, ty), 0, err));
    }
    for (w2l__json *p = w2l__json_first(w2l__json_get(def, "primary-key")); p; p = w2l__json_next(p))
        if (w2l__json_str(p)) W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p), err));
    for (w2l__json *p = w2l__json_first(w2l__json_get(def, "primarykey")); p; p = w2l__json_next(p))
        if (w2l__json_str(p)) W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p), err));
    W2L_TRY(w2l__cdc_table_set_pk(t, d->pks, d->npks, err));
    W2L_TRY(w2l__cdc_describe_commit(d, t, 1, 0, err));
    *out = t;
    return W2L_OK;
}

w2l_rc w2l__cdc_maxwell_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const char *type = w2l__cdc_str(msg, "type"), *db = w2l__cdc_str(msg, "database"), *tn = w2l__cdc_str(msg, "table");
    if (!type) return w2l__cdc_missing(d, "type", err);
    int64_t ts = w2l__cdc_ms(msg, "ts", 1000);
    if (!strncmp(type, "table-", 6) || !strncmp(type, "database-", 9)) {
        const char *sql = w2l__cdc_str(msg, "sql");
        if (!sql) return w2l__cdc_missing(d, "sql", err);
        const w2l__json *def = w2l__json_get(msg, "def");
        table *t = NULL;
        if (!strcmp(type, "table-drop")) {
            W2L_TRY(w2l__cdc_table_get(d, db ? db : "", tn ? tn : "", 0, &t, err));
            if (t) w2l__cdc_table_forget(t);
            return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err);
        }
        if (def && !w2l__cdc_null(def)) {
            const w2l__json *olddef = w2l__json_get(msg, "old");
            W2L_TRY(maxwell_def(d, def, &t, err));
            /* a rename: the old name is gone */
            const char *odb = w2l__cdc_str(olddef, "database"), *otn = w2l__cdc_str(olddef, "table");
            if (odb && otn && (strcmp(odb, t->db) || strcmp(otn, t->name))) {
                table *o;
                W2L_TRY(w2l__cdc_table_get(d, odb, otn, 0, &o, err));
                if (o) w2l__cdc_table_forget(o);
            }
            return w2l__cdc_add_ddl(d, t->db, t->name, sql, t->cur.schema, ts, err);
        }
        return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err);
    }
    if (!strcmp(type, "bootstrap-start") || !strcmp(type, "bootstrap-complete")) return W2L_OK;
    w2l_op op;
    if (!strcmp(type, "insert") || !strcmp(type, "bootstrap-insert")) op = W2L_OP_INSERT;
    else if (!strcmp(type, "update")) op = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(type, "delete")) op = W2L_OP_DELETE;
    else return w2l__fail(err, W2L_SOURCE, "%s: unknown type \"%s\"", d->what, type);
    if (!db) return w2l__cdc_missing(d, "database", err);
    if (!tn) return w2l__cdc_missing(d, "table", err);
    const w2l__json *data = w2l__json_get(msg, "data"), *old = w2l__json_get(msg, "old");
    if (!data || w2l__json_type(data) != W2L_JSON_OBJECT) return w2l__cdc_missing(d, "data", err);
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && op != W2L_OP_INSERT) return w2l__cdc_never_described(d, t, err);
        w2l__cdc_describe_reset(d);
        W2L_TRY(w2l__cdc_infer_cols(d, t, data, err));
        const w2l__json *pkc = w2l__json_get(msg, "primary_key_columns");
        for (w2l__json *p = w2l__json_first(pkc); p; p = w2l__json_next(p))
            if (w2l__json_str(p) && w2l__cdc_col_find(d, w2l__json_str(p)) >= 0) W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p), err));
        if (!pkc)
            for (size_t i = 0; i < t->npk; i++)
                if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
        W2L_TRY(w2l__cdc_describe_commit(d, t, 0, 0, err));
    }
    if (op == W2L_OP_UPDATE_AFTER) {
        if (old && w2l__json_type(old) != W2L_JSON_OBJECT && w2l__json_type(old) != W2L_JSON_NULL)
            return w2l__cdc_missing(d, "old", err);
        W2L_TRY(w2l__cdc_add_change(d, t, W2L_OP_UPDATE_BEFORE, data, w2l__cdc_null(old) ? NULL : old, ts, err));
    }
    return w2l__cdc_add_change(d, t, op, data, NULL, ts, err);
}


enum tx w2l__cdc_maxwell_txn(const w2l__json *msg, char *key, size_t size)
{
    const char *type = w2l__cdc_str(msg, "type");
    int64_t xid;
    if (!type || !strncmp(type, "table-", 6) || !strncmp(type, "database-", 9) ||
        w2l__json_int64(w2l__json_get(msg, "xid"), &xid))
        return TX_OWN;
    snprintf(key, size, "xid:%lld", (long long)xid);
    int commit = 0;
    w2l__json_bool(w2l__json_get(msg, "commit"), &commit);
    return commit ? TX_LAST : TX_PART;
}
