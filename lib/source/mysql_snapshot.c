/*
 * Snapshot reading of the "mysql" source: one chunk of a table in primary-key order, the
 * first key column within a range, by keyset pagination (WHERE key > last key ORDER BY key
 * LIMIT n), on a connection that holds a START TRANSACTION WITH CONSISTENT SNAPSHOT open
 * for this one chunk (mysql_snap_workers.c), so the chunk is the table's rows at the
 * binlog position of that snapshot.
 *
 * Values come through the text protocol (mysql_use_result: rows are converted as they
 * arrive, nothing is buffered) and are converted to the columns' Iceberg types with the
 * same rules as the binlog decoder (binlog.c): FLOAT is selected as CAST(.. AS DOUBLE) so
 * its exact value survives the text form; BIT as c+0; TIMESTAMP in the session zone
 * '+00:00' (UTC); zero dates become NULL; TINYINT(1) as boolean is "not 0" (values
 * other than 0/1 are reported to the caller, which warns); DECIMAL(p > 38) is the text
 * MySQL prints; GEOMETRY arrives in MySQL's stored form, a 4-byte SRID and the WKB, of
 * which the WKB is kept.
 * Composite keys page with (a > x) OR (a = x AND b > y) ..., which every MariaDB version
 * turns into an index range.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_int.h"
#include "../model/model.h"

static w2l_rc add(w2l_buf *b, w2l_error *err, const char *s)
{
    return w2l_buf_append(b, s, strlen(s), err);
}

static w2l_rc add_ident(w2l_buf *b, w2l_error *err, const char *s)
{
    W2L_TRY(add(b, err, "`"));
    for (const char *p = s; *p; p++)
        W2L_TRY(w2l_buf_append(b, *p == '`' ? "``" : p, *p == '`' ? 2 : 1, err));
    return add(b, err, "`");
}

static w2l_rc add_literal(w2l__my *c, w2l_buf *b, const w2l__snap_col *col, const char *v, size_t n,
                          w2l_error *err)
{
    W2L_TRY(w2l__buf_reserve(b, 2 * n + 16, err));
    if (col->ice.id == W2L_TYPE_BINARY) W2L_TRY(add(b, err, "_binary"));
    W2L_TRY(add(b, err, "'"));
    W2L_TRY(w2l__buf_reserve(b, 2 * n + 4, err));
    b->len += w2l__my_escape(c, (char *)b->data + b->len, v, n);
    return add(b, err, "'");
}

static int is_zero_date(const char *s, size_t n)
{
    /* 0000-00-00, or a date with a zero month or day (allowed by some sql_modes) */
    return n >= 10 && (memcmp(s + 5, "00", 2) == 0 || memcmp(s + 8, "00", 2) == 0);
}

/* *odd is set when a boolean column held a value other than 0 and 1. */
static w2l_rc convert(const w2l__snap_col *col, const char *s, size_t n, w2l_value *v, int *odd,
                      w2l_error *err)
{
    memset(v, 0, sizeof *v);
    if (!s) {
        v->is_null = 1;
        return W2L_OK;
    }
    switch (col->mt.cls) {
    case W2L_MYSQL_DATE: case W2L_MYSQL_DATETIME: case W2L_MYSQL_TIMESTAMP:
        if (is_zero_date(s, n)) {
            v->is_null = 1;
            return W2L_OK;
        }
        break;
    default: break;
    }
    switch (col->ice.id) {
    case W2L_TYPE_BOOLEAN:
        v->v.i32 = !(n == 1 && s[0] == '0');
        if (!(n == 1 && (s[0] == '0' || s[0] == '1'))) *odd = 1;
        return W2L_OK;
    case W2L_TYPE_BINARY:
        if (col->mt.cls != W2L_MYSQL_GEOMETRY) return w2l_value_parse(col->ice, s, n, v, err);
        if (n < 4 + 5)
            return w2l__fail(err, W2L_CORRUPT,
                             "column '%s': geometry value of %zu bytes (want a 4-byte SRID "
                             "and WKB)",
                             col->name, n);
        v->v.bytes.ptr = s + 4; /* the WKB */
        v->v.bytes.len = n - 4;
        return W2L_OK;
    case W2L_TYPE_INT: case W2L_TYPE_LONG: {
        char buf[32];
        if (n >= sizeof buf) break;
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *e;
        long long x = buf[0] == '-' ? strtoll(buf, &e, 10)
                                    : (long long)strtoull(buf, &e, 10); /* BIT(64): bits kept */
        if (*e) break;
        if (col->ice.id == W2L_TYPE_INT) v->v.i32 = (int32_t)x;
        else v->v.i64 = x;
        return W2L_OK;
    }
    case W2L_TYPE_FLOAT: {
        char buf[64];
        if (n >= sizeof buf) break;
        memcpy(buf, s, n);
        buf[n] = '\0';
        v->v.f32 = (float)strtod(buf, NULL);
        return W2L_OK;
    }
    case W2L_TYPE_TIMESTAMPTZ: {
        w2l_type t = {W2L_TYPE_TIMESTAMP, 0, 0}; /* the session zone is UTC */
        return w2l_value_parse(t, s, n, v, err);
    }
    case W2L_TYPE_TIME:
        if (n && s[0] == '-') break;
        if (n >= 3 && s[2] != ':') break;                     /* 100 hours and more */
        if (n >= 2 && (s[0] > '2' || (s[0] == '2' && s[1] >= '4'))) break; /* 24-99 */
        return w2l_value_parse(col->ice, s, n, v, err);
    default: return w2l_value_parse(col->ice, s, n, v, err);
    }
    return w2l__fail(err, W2L_SCHEMA, "column '%s': value '%.40s' does not fit %s%s", col->name, s,
                     w2l__type_name(col->ice.id),
                     col->ice.id == W2L_TYPE_TIME
                         ? " (Iceberg time holds 00:00:00-23:59:59.999999: set "
                           "source.time-as-string (--source.time-as-string); a table the lake has "
                           "already keeps its time column: w2l-types(7))"
                         : "");
}

w2l_rc w2l__snap_select(w2l__my *c, const char *db, const char *table, const w2l__snap_col *cols,
                        size_t ncols, const size_t *pk, size_t npk, const char *lo,
                        size_t lo_len, const char *hi, size_t hi_len, char *const *after,
                        const size_t *after_len, size_t limit, w2l_buf *q, w2l_error *err)
{
    q->len = 0;
    W2L_TRY(add(q, err, "SELECT "));
    for (size_t i = 0; i < ncols; i++) {
        if (i) W2L_TRY(add(q, err, ","));
        if (cols[i].mt.cls == W2L_MYSQL_FLOAT) {
            W2L_TRY(add(q, err, "CAST("));
            W2L_TRY(add_ident(q, err, cols[i].name));
            W2L_TRY(add(q, err, " AS DOUBLE)"));
        } else if (cols[i].mt.cls == W2L_MYSQL_BIT) {
            W2L_TRY(add_ident(q, err, cols[i].name));
            W2L_TRY(add(q, err, "+0"));
        } else W2L_TRY(add_ident(q, err, cols[i].name));
    }
    W2L_TRY(add(q, err, " FROM "));
    W2L_TRY(add_ident(q, err, db));
    W2L_TRY(add(q, err, "."));
    W2L_TRY(add_ident(q, err, table));
    const char *word = " WHERE ";
    if (npk && lo) {
        W2L_TRY(add(q, err, word));
        W2L_TRY(add_ident(q, err, cols[pk[0]].name));
        W2L_TRY(add(q, err, " >= "));
        W2L_TRY(add_literal(c, q, &cols[pk[0]], lo, lo_len, err));
        word = " AND ";
    }
    if (npk && hi) {
        W2L_TRY(add(q, err, word));
        W2L_TRY(add_ident(q, err, cols[pk[0]].name));
        W2L_TRY(add(q, err, " < "));
        W2L_TRY(add_literal(c, q, &cols[pk[0]], hi, hi_len, err));
        word = " AND ";
    }
    if (npk && after) {
        W2L_TRY(add(q, err, word));
        W2L_TRY(add(q, err, "("));
        for (size_t k = 0; k < npk; k++) {
            W2L_TRY(add(q, err, k ? " OR (" : "("));
            for (size_t j = 0; j <= k; j++) {
                if (j) W2L_TRY(add(q, err, " AND "));
                W2L_TRY(add_ident(q, err, cols[pk[j]].name));
                W2L_TRY(add(q, err, j == k ? " > " : " = "));
                W2L_TRY(add_literal(c, q, &cols[pk[j]], after[j], after_len[j], err));
            }
            W2L_TRY(add(q, err, ")"));
        }
        W2L_TRY(add(q, err, ")"));
    }
    if (npk) {
        W2L_TRY(add(q, err, " ORDER BY "));
        for (size_t k = 0; k < npk; k++) {
            if (k) W2L_TRY(add(q, err, ","));
            W2L_TRY(add_ident(q, err, cols[pk[k]].name));
        }
        if (limit) W2L_TRY(w2l__buf_printf(q, err, " LIMIT %zu", limit));
    }
    return w2l__buf_cstr(q, err);
}

w2l_rc w2l__snap_rows(w2l__my *c, const char *sql, const w2l__snap_col *cols, size_t ncols,
                      w2l__snap_row_fn row, void *ctx, size_t *nrows, uint8_t *coerced,
                      w2l_error *err)
{
    w2l_value *vals = w2l__calloc(ncols ? ncols : 1, sizeof *vals);
    if (!vals) return w2l__fail(err, W2L_NOMEM, "out of memory");
    *nrows = 0;
    w2l__my_res *r = NULL;
    w2l_rc rc = w2l__my_query(c, sql, 1, &r, err);
    char **rowv = NULL;
    unsigned long *lens = NULL;
    int k = 0;
    while (rc == W2L_OK && (k = w2l__my_row(r, &rowv, &lens, err)) > 0) {
        for (size_t i = 0; i < ncols && rc == W2L_OK; i++) {
            int odd = 0;
            rc = convert(&cols[i], rowv[i], lens[i], &vals[i], &odd, err);
            if (odd && coerced) coerced[i / 8] |= (uint8_t)(1u << (i % 8));
        }
        if (rc == W2L_OK) rc = row(ctx, vals, rowv, lens, err);
        if (rc == W2L_OK) (*nrows)++;
    }
    if (k < 0 && rc == W2L_OK) rc = err->code;
    w2l__my_res_free(r);
    w2l__free(vals);
    return rc;
}
