/*
 * debezium-json envelopes, with or without the "schema" part (cdc_int.h).
 *
 * With the JSON converter's schema envelope, each message's `after` (or `before`) struct
 * describes the columns in Kafka Connect types as Debezium's MySQL connector uses them:
 *   int8 int16 int32 -> int          int64 -> long          boolean -> boolean
 *   float32 (float) -> float         float64 (double) -> double
 *   string -> string                 bytes -> binary        struct array map -> string (JSON)
 * refined by the logical name:
 *   Kafka Connect Decimal (bytes; parameters scale, connect.decimal.precision) ->
 *     decimal(p,s); p absent -> 38 unless the message's values need more; p > 38 ->
 *     string holding the exact text. Values: base64 big-endian unscaled, or a JSON number
 *     (decimal.format=NUMERIC), or text
 *   Kafka Connect Date, io.debezium.time.Date (epoch days) -> date
 *   Kafka Connect Time, io.debezium.time.Time (ms), MicroTime (us), NanoTime (ns) -> time
 *     (string with source.time-as-string)
 *   Kafka Connect Timestamp, io.debezium.time.Timestamp (ms), MicroTimestamp, NanoTimestamp
 *     -> timestamp;  ZonedTimestamp (ISO text with offset) -> timestamptz
 *   io.debezium.time.ZonedTime, Interval, io.debezium.data.Enum, EnumSet, Uuid, Xml -> string
 *   io.debezium.data.Json -> string (the JSON text);  io.debezium.time.Year -> int;
 *   MicroDuration -> long
 *   io.debezium.data.VariableScaleDecimal {scale, value} -> string with the exact text
 *   io.debezium.data.Bits (bytes, little-endian; parameter length) -> boolean for 1, else long
 *   io.debezium.data.geometry.Geometry, Geography {wkb, srid}, Point {x, y, wkb, srid} ->
 *     binary holding the WKB (without SRID)
 * Unknown logical names fall back to the base type; only an unknown base type is an error.
 *
 * Without the envelope, a table's last tableChanges (schema-change events) describes it in
 * MySQL types (cdc_value.c: w2l__cdc_mysql_dbz_cv gives the connector's default encodings);
 * else the shape is inferred from the JSON values (cdc_json.c), where decimals stay base64
 * text and dates integers, with one warning per table and column that looks encoded.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"

/* ---- debezium-json ---- */

/* Kafka Connect logical names (Debezium's MySQL connector and Kafka Connect's own). */
#define KC "org.apache.kafka.connect.data."
#define DT "io.debezium.time."
#define DD "io.debezium.data."

/* Decimal without connect.decimal.precision: decimal(38, s) unless this message's values
 * need more digits, or the column already holds text; then a string with the exact text. */
static int dbz_decimal_wide(const table *t, const char *name, int scale,
                            const w2l__json *const img[2])
{
    long k = t->cur.schema ? w2l_schema_index_of_name(t->cur.schema, name) : -1;
    if (k >= 0 && w2l_schema_field(t->cur.schema, (size_t)k)->type.id == W2L_TYPE_STRING) return 1;
    for (int i = 0; i < 2; i++) {
        const w2l__json *v = img[i] ? w2l__json_get(img[i], name) : NULL;
        const char *s = w2l__json_str(v);
        char nb[32];
        if (s) { /* base64 of the unscaled value: beyond 38 digits? */
            unsigned char b[W2L_DECIMAL_BE_MAX];
            size_t n = strlen(s), len;
            w2l_int128 u;
            if (n / 4 * 3 > sizeof b - 4 || w2l__cdc_b64_decode(s, n, b, &len)) {
                if (n / 4 * 3 > sizeof b - 4) return 1;
                continue; /* not base64: the value reports it */
            }
            if (len > 16 || (len && (w2l__decimal_from_be(b, len, &u) ||
                                     !w2l__decimal_fits(u, W2L_DECIMAL_MAX_PRECISION))))
                return 1;
        } else if ((s = w2l__json_number_str(v, nb, sizeof nb)) != NULL) {
            w2l_int128 u;
            w2l_error e;
            if (scale <= W2L_DECIMAL_MAX_PRECISION &&
                w2l__decimal_parse(s, strlen(s), W2L_DECIMAL_MAX_PRECISION, (unsigned)scale, &u,
                                   &e) != W2L_OK &&
                strstr(e.msg, "precision"))
                return 1;
        }
    }
    return 0;
}

/* The MySQL type the table's last tableChanges gave column name, or NULL. */
static const char *dbz_ddl_type(const table *t, const char *name)
{
    for (const char *p = t->dbz_types; p && *p; p += strlen(p) + 1) {
        const char *ty = p + strlen(p) + 1;
        if (!strcmp(p, name)) return ty;
        p = ty;
    }
    return NULL;
}

/* A field the envelope types plainly while the table's DDL is exact: DECIMAL sent as text
 * or double (decimal.handling.mode=string/double) becomes the DDL's decimal (or exact text
 * beyond 38 digits), converted from the value's text; BIGINT UNSIGNED sent as int64
 * (bigint.unsigned.handling.mode=long) becomes decimal(20,0). 1 when refined. */
static int dbz_refine(w2l__cdc *d, const table *t, const char *name, w2l_type *ty, unsigned *cv,
                      w2l__mysql_type *info)
{
    const char *ddl = *cv == CV_PLAIN ? dbz_ddl_type(t, name) : NULL;
    w2l_type dt;
    w2l_error e;
    if (!ddl || w2l__cdc_mysql_type(d, t->db, t->name, name, ddl, &dt, info, &e) != W2L_OK)
        return 0;
    if (info->cls == W2L_MYSQL_DECIMAL &&
        (ty->id == W2L_TYPE_STRING || ty->id == W2L_TYPE_DOUBLE || ty->id == W2L_TYPE_FLOAT)) {
        *ty = dt;
        *cv = dt.id == W2L_TYPE_STRING ? CV_DECIMAL_TEXT : CV_PLAIN;
        return 1;
    }
    if (info->cls == W2L_MYSQL_INT && dt.id == W2L_TYPE_DECIMAL && ty->id == W2L_TYPE_LONG) {
        *ty = dt;
        *cv = CV_UBIGINT;
        return 1;
    }
    return 0;
}

/* Describes one Kafka Connect field of a debezium value schema: base type (int8, int16,
 * int32, int64, float32, float64 and the aliases float, double, boolean, string, bytes,
 * array, map, struct) and logical name; an unknown logical name falls back to its base
 * type, an unknown base type is an error. img: the message's before and after images, for
 * decimals without a precision. */
static w2l_rc dbz_field(w2l__cdc *d, const table *t, const w2l__json *f,
                        const w2l__json *const img[2], w2l_error *err)
{
    const char *name = w2l__cdc_str(f, "field"), *type = w2l__cdc_str(f, "type"),
               *sem = w2l__cdc_str(f, "name");
    if (!name || !type) return w2l__cdc_missing(d, "schema.fields.field", err);
    int optional = 1;
    w2l__json_bool(w2l__json_get(f, "optional"), &optional);
    const w2l__json *params = w2l__json_get(f, "parameters");
    w2l_type ty = {W2L_TYPE_STRING, 0, 0};
    w2l_type time_ty = {d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, 0, 0};
    unsigned cv = CV_PLAIN;
    int scale = -1; /* a decimal kept as text: its scale */
    if (!sem) sem = "";
    if (!strcmp(type, "boolean")) {
        ty.id = W2L_TYPE_BOOLEAN;
    } else if (!strcmp(type, "int8") || !strcmp(type, "int16") || !strcmp(type, "int32")) {
        ty.id = W2L_TYPE_INT; /* also io.debezium.time.Year */
        if (!strcmp(sem, DT "Date") || !strcmp(sem, KC "Date")) ty.id = W2L_TYPE_DATE, cv = CV_DAYS;
        else if (!strcmp(sem, DT "Time") || !strcmp(sem, KC "Time")) ty = time_ty, cv = CV_TIME_MS;
    } else if (!strcmp(type, "int64")) {
        ty.id = W2L_TYPE_LONG; /* also io.debezium.time.MicroDuration, Year */
        if (!strcmp(sem, DT "Timestamp") || !strcmp(sem, KC "Timestamp"))
            ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_MS;
        else if (!strcmp(sem, DT "MicroTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_US;
        else if (!strcmp(sem, DT "NanoTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_NS;
        else if (!strcmp(sem, DT "MicroTime")) ty = time_ty, cv = CV_TIME_US;
        else if (!strcmp(sem, DT "NanoTime")) ty = time_ty, cv = CV_TIME_NS;
        else if (!strcmp(sem, KC "Time")) ty = time_ty, cv = CV_TIME_MS;
        else if (!strcmp(sem, DT "Date") || !strcmp(sem, KC "Date"))
            ty.id = W2L_TYPE_DATE, cv = CV_DAYS;
    } else if (!strcmp(type, "float32") || !strcmp(type, "float")) {
        ty.id = W2L_TYPE_FLOAT;
    } else if (!strcmp(type, "float64") || !strcmp(type, "double")) {
        ty.id = W2L_TYPE_DOUBLE;
    } else if (!strcmp(type, "string")) {
        /* ZonedTime, Enum, EnumSet, Uuid, Xml, Interval and the rest stay text */
        if (!strcmp(sem, DT "ZonedTimestamp")) ty.id = W2L_TYPE_TIMESTAMPTZ, cv = CV_ZONED;
        else if (!strcmp(sem, DD "Json")) cv = CV_JSON;
    } else if (!strcmp(type, "bytes")) {
        ty.id = W2L_TYPE_BINARY;
        if (!strcmp(sem, KC "Decimal")) {
            const char *sc = w2l__cdc_str(params, "scale"),
                       *pr = w2l__cdc_str(params, "connect.decimal.precision");
            char *end = NULL;
            long sv = sc ? strtol(sc, &end, 10) : 0, pv = pr ? strtol(pr, &end, 10) : 0;
            if ((sc && (!*sc || *end)) || sv < 0 || sv > W2L_DECIMAL_TEXT_MAX || (pr && pv < 1))
                return w2l__fail(err, W2L_SOURCE,
                                 "%s: table %s.%s column %s: Decimal with scale \"%s\" and "
                                 "precision \"%s\"",
                                 d->what, t->db, t->name, name, sc ? sc : "", pr ? pr : "");
            int wide =
                pr ? pv > W2L_DECIMAL_MAX_PRECISION || sv > pv
                   : sv > W2L_DECIMAL_MAX_PRECISION || dbz_decimal_wide(t, name, (int)sv, img);
            cv = CV_DECIMAL_B64;
            if (wide) {
                ty.id = W2L_TYPE_STRING; /* beyond Iceberg's 38 digits: the exact text */
                scale = (int)sv;
            } else {
                ty.id = W2L_TYPE_DECIMAL;
                ty.precision = (uint8_t)(pr ? pv : W2L_DECIMAL_MAX_PRECISION);
                ty.scale = (uint8_t)sv;
            }
        } else if (!strcmp(sem, DD "Bits")) {
            const char *len = w2l__cdc_str(params, "length");
            ty.id = len && atoi(len) == 1 ? W2L_TYPE_BOOLEAN : W2L_TYPE_LONG;
            cv = CV_BITS_B64;
        }
    } else if (!strcmp(type, "struct")) {
        if (!strcmp(sem, DD "VariableScaleDecimal")) cv = CV_VSDEC;
        else if (!strcmp(sem, DD "geometry.Geometry") || !strcmp(sem, DD "geometry.Point") ||
                 !strcmp(sem, DD "geometry.Geography"))
            ty.id = W2L_TYPE_BINARY, cv = CV_GEOM;
        else cv = CV_JSON;
    } else if (!strcmp(type, "array") || !strcmp(type, "map")) {
        cv = CV_JSON;
    } else {
        return w2l__fail(err, W2L_SOURCE,
                         "%s: table %s.%s column %s: unknown Kafka Connect type %s%s%s", d->what,
                         t->db, t->name, name, type, *sem ? " " : "", sem);
    }
    w2l__mysql_type ddl;
    int refined = dbz_refine(d, t, name, &ty, &cv, &ddl);
    W2L_TRY(w2l__cdc_col_add(d, name, ty, cv, !optional, err));
    if (refined) W2L_TRY(w2l__cdc_col_info(d, &ddl, ty, err));
    if (scale >= 0) {
        w2l__mysql_type info;
        memset(&info, 0, sizeof info);
        info.cls = W2L_MYSQL_DECIMAL;
        info.scale = scale;
        W2L_TRY(w2l__cdc_col_info(d, &info, ty, err));
    }
    return W2L_OK;
}

static w2l_rc dbz_describe_schema(w2l__cdc *d, table *t, const w2l__json *schema, const char *image,
                                  const w2l__json *const img[2], w2l_error *err)
{
    const w2l__json *st = NULL;
    for (w2l__json *f = w2l__json_first(w2l__json_get(schema, "fields")); f;
         f = w2l__json_next(f)) {
        const char *fn = w2l__cdc_str(f, "field");
        if (fn && !strcmp(fn, image)) st = f;
    }
    if (!st || !w2l__json_get(st, "fields")) return w2l__cdc_missing(d, "schema.fields", err);
    w2l__cdc_describe_reset(d);
    for (w2l__json *f = w2l__json_first(w2l__json_get(st, "fields")); f; f = w2l__json_next(f))
        W2L_TRY(dbz_field(d, t, f, img, err));
    for (size_t i = 0; i < t->npk; i++)
        if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
    return w2l__cdc_describe_commit(d, t, 0, 0, err);
}

/* The columns of tableChanges[].table.columns (typeExpression or typeName, length, scale,
 * optional), described into d, and "name\0type\0" of each appended to types. */
static w2l_rc dbz_columns(w2l__cdc *d, const w2l__json *tab, const char *db, const char *tn,
                          w2l_buf *types, w2l_error *err)
{
    char tt[160];
    for (w2l__json *c = w2l__json_first(w2l__json_get(tab, "columns")); c; c = w2l__json_next(c)) {
        const char *name = w2l__cdc_str(c, "name"), *te = w2l__cdc_str(c, "typeExpression"),
                   *tnm = w2l__cdc_str(c, "typeName");
        if (!name || (!te && !tnm)) return w2l__cdc_missing(d, "tableChanges.table.columns", err);
        int64_t len = -1, scale = -1;
        w2l__json_int64(w2l__json_get(c, "length"), &len);
        w2l__json_int64(w2l__json_get(c, "scale"), &scale);
        const char *base = tnm ? tnm : te;
        /* typeName carries UNSIGNED; length/scale give the parentheses */
        if (len >= 0 && scale >= 0)
            snprintf(tt, sizeof tt, "%s(%lld,%lld)", base, (long long)len, (long long)scale);
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
                n += (size_t)snprintf(tt + n, sizeof tt - n, "%s%s%s%s",
                                      v == w2l__json_first(ev) ? "" : ",", quoted ? "" : "'",
                                      vs ? vs : "", quoted ? "" : "'");
            }
            if (n < sizeof tt) snprintf(tt + n, sizeof tt - n, ")");
        }
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(w2l__cdc_mysql_type(d, db, tn, name, tt, &ty, &info, err));
        int optional = 1;
        w2l__json_bool(w2l__json_get(c, "optional"), &optional);
        W2L_TRY(w2l__cdc_col_add(d, name, ty, w2l__cdc_mysql_dbz_cv(&info, ty), !optional, err));
        W2L_TRY(w2l__cdc_col_info(d, &info, ty, err));
        W2L_TRY(w2l_buf_append(types, name, strlen(name) + 1, err));
        W2L_TRY(w2l_buf_append(types, tt, strlen(tt) + 1, err));
    }
    return W2L_OK;
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
        if (t) w2l__cdc_table_forget(d, t);
        return W2L_OK;
    }
    const w2l__json *tab = w2l__json_get(tc, "table");
    if (!tab) return w2l__cdc_missing(d, "tableChanges.table", err);
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    w2l__cdc_describe_reset(d);
    w2l_buf types = {0};
    w2l_rc rc = dbz_columns(d, tab, db, tn, &types, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&types, "", 1, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&types);
        return rc;
    }
    w2l__free(t->dbz_types);
    t->dbz_types = (char *)types.data; /* the buffer's memory, now the table's */
    for (w2l__json *p2 = w2l__json_first(w2l__json_get(tab, "primaryKeyColumnNames")); p2;
         p2 = w2l__json_next(p2))
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
        for (w2l__json *tc = w2l__json_first(w2l__json_get(payload, "tableChanges")); tc;
             tc = w2l__json_next(tc)) {
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
    const w2l__json *before = w2l__json_get(payload, "before"),
                    *after = w2l__json_get(payload, "after");
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
        const w2l__json *const img[2] = {before, after};
        W2L_TRY(
            dbz_describe_schema(d, t, schema, wop == W2L_OP_DELETE ? "before" : "after", img, err));
    } else if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && wop != W2L_OP_INSERT) return w2l__cdc_never_described(d, t, err);
        w2l__cdc_describe_reset(d);
        if (!w2l__cdc_null(before)) W2L_TRY(w2l__cdc_infer_cols(d, t, before, err));
        if (!w2l__cdc_null(after)) W2L_TRY(w2l__cdc_infer_cols(d, t, after, err));
        for (size_t i = 0; i < t->npk; i++)
            if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
        W2L_TRY(w2l__cdc_describe_commit(d, t, 0, 0, err));
    }
    if (wop == W2L_OP_UPDATE_AFTER)
        W2L_TRY(w2l__cdc_add_change(d, t, W2L_OP_UPDATE_BEFORE, before, NULL, ts, err));
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
