/*
 * debezium-json envelopes, with or without the "schema" part (cdc_int.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"

/* ---- debezium-json ---- */

/* Describes one Kafka Connect field of a debezium value schema. */
static w2l_rc dbz_field(w2l__cdc *d, const table *t, const w2l__json *f, w2l_error *err)
{
    const char *name = w2l__cdc_str(f, "field"), *type = w2l__cdc_str(f, "type"), *sem = w2l__cdc_str(f, "name");
    if (!name || !type) return w2l__cdc_missing(d, "schema.fields.field", err);
    int optional = 1;
    w2l__json_bool(w2l__json_get(f, "optional"), &optional);
    w2l_type ty = {W2L_TYPE_STRING, 0, 0};
    unsigned cv = CV_PLAIN;
    int ok = 1;
    if (!sem) sem = "";
    if (!strcmp(type, "boolean")) ty.id = W2L_TYPE_BOOLEAN;
    else if (!strcmp(type, "int8") || !strcmp(type, "int16") || !strcmp(type, "int32")) {
        ty.id = W2L_TYPE_INT;
        if (!strcmp(sem, "io.debezium.time.Date") || !strcmp(sem, "org.apache.kafka.connect.data.Date"))
            ty.id = W2L_TYPE_DATE, cv = CV_DAYS;
        else if (!strcmp(sem, "io.debezium.time.Time") || !strcmp(sem, "org.apache.kafka.connect.data.Time"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_MS;
    } else if (!strcmp(type, "int64")) {
        ty.id = W2L_TYPE_LONG;
        if (!strcmp(sem, "io.debezium.time.Timestamp") || !strcmp(sem, "org.apache.kafka.connect.data.Timestamp"))
            ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_MS;
        else if (!strcmp(sem, "io.debezium.time.MicroTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_US;
        else if (!strcmp(sem, "io.debezium.time.NanoTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_NS;
        else if (!strcmp(sem, "io.debezium.time.MicroTime"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_US;
        else if (!strcmp(sem, "io.debezium.time.NanoTime"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_NS;
        else if (*sem && strcmp(sem, "io.debezium.time.Year")) ok = 0;
    } else if (!strcmp(type, "float32")) ty.id = W2L_TYPE_FLOAT;
    else if (!strcmp(type, "float64")) ty.id = W2L_TYPE_DOUBLE;
    else if (!strcmp(type, "string")) {
        if (!strcmp(sem, "io.debezium.time.ZonedTimestamp")) ty.id = W2L_TYPE_TIMESTAMPTZ, cv = CV_ZONED;
        else if (!strcmp(sem, "io.debezium.data.Json")) cv = CV_JSON;
    } else if (!strcmp(type, "bytes")) {
        ty.id = W2L_TYPE_BINARY;
        const w2l__json *params = w2l__json_get(f, "parameters");
        if (!strcmp(sem, "org.apache.kafka.connect.data.Decimal")) {
            const char *sc = w2l__cdc_str(params, "scale"), *pr = w2l__cdc_str(params, "connect.decimal.precision");
            int s = sc ? atoi(sc) : 0, p = pr ? atoi(pr) : 38;
            if (p < 1 || p > 38 || s < 0 || s > p) ok = 0;
            ty.id = W2L_TYPE_DECIMAL;
            ty.precision = (uint8_t)p;
            ty.scale = (uint8_t)s;
            cv = CV_DECIMAL_B64;
        } else if (!strcmp(sem, "io.debezium.data.Bits")) {
            const char *len = w2l__cdc_str(params, "length");
            ty.id = len && atoi(len) == 1 ? W2L_TYPE_BOOLEAN : W2L_TYPE_LONG;
            cv = CV_BITS_B64;
        }
    } else ok = 0;
    if (!ok)
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: unknown type %s%s%s", d->what, t->db,
                         t->name, name, type, *sem ? " " : "", sem);
    return w2l__cdc_col_add(d, name, ty, cv, !optional, err);
}

static w2l_rc dbz_describe_schema(w2l__cdc *d, table *t, const w2l__json *schema, const char *image,
                                  w2l_error *err)
{
    const w2l__json *st = NULL;
    for (w2l__json *f = w2l__json_first(w2l__json_get(schema, "fields")); f; f = w2l__json_next(f)) {
        const char *fn = w2l__cdc_str(f, "field");
        if (fn && !strcmp(fn, image)) st = f;
    }
    if (!st || !w2l__json_get(st, "fields")) return w2l__cdc_missing(d, "schema.fields", err);
    w2l__cdc_describe_reset(d);
    for (w2l__json *f = w2l__json_first(w2l__json_get(st, "fields")); f; f = w2l__json_next(f))
        W2L_TRY(dbz_field(d, t, f, err));
    for (size_t i = 0; i < t->npk; i++)
        if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
    return w2l__cdc_describe_commit(d, t, 0, 0, err);
}

/* tableChanges[].table: columns (typeExpression or typeName, length, scale, optional)
 * and primaryKeyColumnNames, as the MySQL connector writes them. */
static w2l_rc dbz_table_change(w2l__cdc *d, const w2l__json *tc, const char *defdb, table **out,
                               w2l_error *err)
{
    *out = NULL;
    const char *type = w2l__cdc_str(tc, "type"), *id = w2l__cdc_str(tc, "id");
    if (!type || !id) return w2l__cdc_missing(d, "tableChanges.id", err);
    /* id: "db"."table" (quoted) or db.table */
    char db[256], tn[256];
    const char *p = id;
    size_t k = 0;
    char *dst = db;
    int part = 0;
    while (*p) {
        if (*p == '"') { p++; continue; }
        if (*p == '.' && part == 0) { dst[k] = '\0'; dst = tn; k = 0; part = 1; p++; continue; }
        if (k < 255) dst[k++] = *p;
        p++;
    }
    dst[k] = '\0';
    if (part == 0) {
        snprintf(tn, sizeof tn, "%s", db);
        snprintf(db, sizeof db, "%s", defdb ? defdb : "");
    }
    table *t;
    if (!strcmp(type, "DROP")) {
        W2L_TRY(w2l__cdc_table_get(d, db, tn, 0, &t, err));
        if (t) w2l__cdc_table_forget(t);
        return W2L_OK;
    }
    const w2l__json *tab = w2l__json_get(tc, "table");
    if (!tab) return w2l__cdc_missing(d, "tableChanges.table", err);
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    w2l__cdc_describe_reset(d);
    char tt[160];
    for (w2l__json *c = w2l__json_first(w2l__json_get(tab, "columns")); c; c = w2l__json_next(c)) {
        const char *name = w2l__cdc_str(c, "name"), *te = w2l__cdc_str(c, "typeExpression"), *tnm = w2l__cdc_str(c, "typeName");
        if (!name || (!te && !tnm)) return w2l__cdc_missing(d, "tableChanges.table.columns", err);
        int64_t len = -1, scale = -1;
        w2l__json_int64(w2l__json_get(c, "length"), &len);
        w2l__json_int64(w2l__json_get(c, "scale"), &scale);
        const char *base = tnm ? tnm : te;
        /* typeName carries UNSIGNED; length/scale give the parentheses */
        if (len >= 0 && scale >= 0) snprintf(tt, sizeof tt, "%s(%lld,%lld)", base, (long long)len, (long long)scale);
        else if (len >= 0) snprintf(tt, sizeof tt, "%s(%lld)", base, (long long)len);
        else snprintf(tt, sizeof tt, "%s", base);
        /* "BIGINT UNSIGNED(20)" -> "BIGINT(20) UNSIGNED" */
        char *u = strstr(tt, " UNSIGNED");
        if (u && strchr(u, '(')) {
            char rest[160];
            snprintf(rest, sizeof rest, "%s", u + 9);
            snprintf(u, sizeof tt - (size_t)(u - tt), "%s UNSIGNED", rest);
        }
        /* enum/set: the values list instead of a length */
        const w2l__json *ev = w2l__json_get(c, "enumValues");
        if (ev && w2l__json_size(ev)) {
            size_t n = (size_t)snprintf(tt, sizeof tt, "%s(", base);
            for (w2l__json *v = w2l__json_first(ev); v && n < sizeof tt; v = w2l__json_next(v)) {
                const char *vs = w2l__json_str(v);
                int quoted = vs && vs[0] == '\'';
                n += (size_t)snprintf(tt + n, sizeof tt - n, "%s%s%s%s", v == w2l__json_first(ev) ? "" : ",",
                                      quoted ? "" : "'", vs ? vs : "", quoted ? "" : "'");
            }
            if (n < sizeof tt) snprintf(tt + n, sizeof tt - n, ")");
        }
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(w2l__cdc_mysql_type(d, db, tn, name, tt, &ty, &info, err));
        int optional = 1;
        w2l__json_bool(w2l__json_get(c, "optional"), &optional);
        W2L_TRY(w2l__cdc_col_add(d, name, ty, w2l__cdc_mysql_dbz_cv(&info, ty), !optional, err));
    }
    for (w2l__json *p2 = w2l__json_first(w2l__json_get(tab, "primaryKeyColumnNames")); p2; p2 = w2l__json_next(p2))
        if (w2l__json_str(p2)) W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p2), err));
    W2L_TRY(w2l__cdc_table_set_pk(t, d->pks, d->npks, err));
    W2L_TRY(w2l__cdc_describe_commit(d, t, 1, 0, err));
    *out = t;
    return W2L_OK;
}

/* The payload of a debezium message (the envelope itself when it has no schema part) and
 * its schema (NULL without); payload NULL for a tombstone. */
void w2l__cdc_dbz_parts(const w2l__json *msg, const w2l__json **schema, const w2l__json **payload)
{
    *schema = w2l__json_get(msg, "schema");
    *payload = w2l__json_get(msg, "payload");
    if (*schema && *payload) {
        if (w2l__cdc_null(*payload)) *payload = NULL;
    } else if (*schema && w2l__json_size(msg) == 2 && w2l__json_get(msg, "payload")) {
        *payload = NULL;
    } else {
        *schema = NULL;
        *payload = msg;
    }
    if (*schema && w2l__json_type(*schema) == W2L_JSON_NULL) *schema = NULL;
}

w2l_rc w2l__cdc_dbz_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const w2l__json *schema, *payload;
    w2l__cdc_dbz_parts(msg, &schema, &payload);
    if (!payload) return W2L_OK; /* tombstone */
    const w2l__json *source = w2l__json_get(payload, "source");
    int64_t ts = w2l__cdc_ms(source, "ts_ms", 1);
    if (!ts) ts = w2l__cdc_ms(payload, "ts_ms", 1);
    if (w2l__cdc_str(payload, "status")) return W2L_OK; /* transaction metadata */
    const char *ddl = w2l__cdc_str(payload, "ddl");
    if (ddl) {
        const char *db = w2l__cdc_str(payload, "databaseName");
        if (!db) db = w2l__cdc_str(source, "db");
        table *last = NULL;
        size_t nt = 0;
        for (w2l__json *tc = w2l__json_first(w2l__json_get(payload, "tableChanges")); tc; tc = w2l__json_next(tc)) {
            W2L_TRY(dbz_table_change(d, tc, db, &last, err));
            nt++;
        }
        const char *tn = nt == 1 && last ? last->name : w2l__cdc_str(source, "table");
        if (tn && strchr(tn, ',')) tn = NULL; /* a statement over several tables */
        return w2l__cdc_add_ddl(d, db, tn, ddl, nt == 1 && last ? last->cur.schema : NULL, ts, err);
    }
    const char *op = w2l__cdc_str(payload, "op");
    if (!op) return w2l__cdc_missing(d, "op", err);
    const char *db = w2l__cdc_str(source, "db"), *tn = w2l__cdc_str(source, "table");
    if (!db || !tn) return w2l__cdc_missing(d, "source.db/source.table", err);
    const w2l__json *before = w2l__json_get(payload, "before"), *after = w2l__json_get(payload, "after");
    if (!strcmp(op, "t")) {
        char *sql = w2l__asprintf("TRUNCATE TABLE `%s`.`%s`", db, tn);
        W2L_NOMEM_IF(!sql, err);
        char *p = w2l__cdc_alloc(&d->mem, strlen(sql) + 1);
        if (p) memcpy(p, sql, strlen(sql) + 1);
        w2l__free(sql);
        W2L_NOMEM_IF(!p, err);
        return w2l__cdc_add_ddl(d, db, tn, p, NULL, ts, err);
    }
    if (!strcmp(op, "m")) return W2L_OK; /* a logical-decoding message: no rows */
    w2l_op wop;
    if (!strcmp(op, "c") || !strcmp(op, "r")) wop = W2L_OP_INSERT;
    else if (!strcmp(op, "u")) wop = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(op, "d")) wop = W2L_OP_DELETE;
    else return w2l__fail(err, W2L_SOURCE, "%s: unknown op \"%s\"", d->what, op);
    if (wop != W2L_OP_DELETE && w2l__cdc_null(after)) return w2l__cdc_missing(d, "after", err);
    if (wop != W2L_OP_INSERT && w2l__cdc_null(before)) return w2l__cdc_missing(d, "before", err);
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    if (schema) {
        W2L_TRY(dbz_describe_schema(d, t, schema, wop == W2L_OP_DELETE ? "before" : "after", err));
    } else if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && wop != W2L_OP_INSERT) return w2l__cdc_never_described(d, t, err);
        w2l__cdc_describe_reset(d);
        if (!w2l__cdc_null(before)) W2L_TRY(w2l__cdc_infer_cols(d, t, before, err));
        if (!w2l__cdc_null(after)) W2L_TRY(w2l__cdc_infer_cols(d, t, after, err));
        for (size_t i = 0; i < t->npk; i++)
            if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
        W2L_TRY(w2l__cdc_describe_commit(d, t, 0, 0, err));
    }
    if (wop == W2L_OP_UPDATE_AFTER) W2L_TRY(w2l__cdc_add_change(d, t, W2L_OP_UPDATE_BEFORE, before, NULL, ts, err));
    return w2l__cdc_add_change(d, t, wop, wop == W2L_OP_DELETE ? before : after, NULL, ts, err);
}


enum tx w2l__cdc_dbz_txn(const w2l__json *msg, char *key, size_t size)
{
    const w2l__json *schema, *payload;
    w2l__cdc_dbz_parts(msg, &schema, &payload);
    if (!payload) return TX_NONE;
    const char *status = w2l__cdc_str(payload, "status");
    if (status) {
        const char *id = w2l__cdc_str(payload, "id");
        snprintf(key, size, "%s", id ? id : "");
        return !strcmp(status, "END") ? TX_END : TX_BEGIN;
    }
    if (w2l__cdc_str(payload, "ddl")) return TX_OWN;
    const w2l__json *source = w2l__json_get(payload, "source");
    const char *id = w2l__cdc_str(w2l__json_get(payload, "transaction"), "id");
    if (!id) id = w2l__cdc_str(source, "gtid");
    int64_t v;
    if (id) snprintf(key, size, "%s", id);
    else if (source && w2l__json_int64(w2l__json_get(source, "txId"), &v) == 0)
        snprintf(key, size, "txId:%lld", (long long)v);
    return key[0] ? TX_PART : TX_OWN;
}
