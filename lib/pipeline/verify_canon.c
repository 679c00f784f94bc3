/*
 * w2l verify's canonical row text: one SQL expression per column for the source, one C
 * rendering per column for the lake, that agree byte for byte (w2l-verify(1) lists them).
 *
 *   integers, YEAR     (c+0)                                  the integer, in decimal
 *   boolean, BIT(1)    (c<>0)                                 1 or 0
 *   BIT(n)             (c+0)                                  the long as unsigned
 *   DECIMAL            CAST(c AS CHAR)                        the decimal, scale digits
 *   FLOAT, DOUBLE      FORMAT(c,6) without its commas         the value rounded as the
 *                                                             server's FORMAT rounds it
 *   DATE, DATETIME,    DATE_FORMAT / TIME_FORMAT with %f      fixed width, 6 fraction
 *   TIMESTAMP, TIME                                           digits (session zone UTC)
 *   strings, ENUM,     HEX(CONVERT(c USING utf8mb4))          the UTF-8 bytes in hex
 *   SET, JSON
 *   binaries           HEX(c)                                 the bytes in hex
 *   geometry           HEX(ST_AsBinary(c))                    the WKB in hex
 *
 * Zero dates read as NULL (the lake holds them as NULL).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/s3.h"
#include "../model/model.h"
#include "verify_int.h"

#define PUT(b, s, n) W2L_TRY(w2l_buf_append((b), (s), (n), err))
#define PUTS(b, s) PUT((b), (s), strlen(s))

w2l__vform w2l__verify_form(const w2l__mysql_type *mt, w2l_type lake)
{
    int id = lake.id;
    switch (mt->cls) {
    case W2L_MYSQL_INT:
    case W2L_MYSQL_YEAR:
    case W2L_MYSQL_BOOL:
        if (id == W2L_TYPE_INT || id == W2L_TYPE_LONG) return VF_NUM;
        if (id == W2L_TYPE_DECIMAL && lake.scale == 0) return VF_NUM;
        if (id == W2L_TYPE_BOOLEAN) return VF_BOOL;
        return VF_NONE;
    case W2L_MYSQL_BIT:
        if (id == W2L_TYPE_LONG || id == W2L_TYPE_INT) return VF_BITS;
        if (id == W2L_TYPE_BOOLEAN) return VF_BOOL;
        return VF_NONE;
    case W2L_MYSQL_DECIMAL:
        return id == W2L_TYPE_DECIMAL || id == W2L_TYPE_STRING ? VF_DEC : VF_NONE;
    case W2L_MYSQL_FLOAT:
    case W2L_MYSQL_DOUBLE:
        return id == W2L_TYPE_FLOAT || id == W2L_TYPE_DOUBLE ? VF_REAL : VF_NONE;
    case W2L_MYSQL_DATE: return id == W2L_TYPE_DATE ? VF_DATE : VF_NONE;
    case W2L_MYSQL_DATETIME:
    case W2L_MYSQL_TIMESTAMP:
        return id == W2L_TYPE_TIMESTAMP || id == W2L_TYPE_TIMESTAMPTZ ? VF_DATETIME : VF_NONE;
    case W2L_MYSQL_TIME:
        if (id == W2L_TYPE_TIME) return VF_TIME;
        return id == W2L_TYPE_STRING ? VF_TEXTHEX : VF_NONE;
    case W2L_MYSQL_TEXT:
    case W2L_MYSQL_ENUM:
    case W2L_MYSQL_SET:
    case W2L_MYSQL_JSON:
        return id == W2L_TYPE_STRING ? VF_TEXTHEX : VF_NONE;
    case W2L_MYSQL_BINARY: return id == W2L_TYPE_BINARY ? VF_BINHEX : VF_NONE;
    case W2L_MYSQL_GEOMETRY: return id == W2L_TYPE_BINARY ? VF_WKB : VF_NONE;
    default: return VF_NONE;
    }
}

w2l__vkey w2l__verify_key_kind(const w2l__mysql_type *mt, w2l_type lake)
{
    switch (w2l__verify_form(mt, lake)) {
    case VF_NUM:
    case VF_BOOL:
    case VF_BITS:
    case VF_DEC: return lake.id == W2L_TYPE_STRING ? VK_NONE : VK_NUM;
    case VF_DATE:
    case VF_DATETIME:
    case VF_TIME: return VK_FIXED;
    case VF_TEXTHEX:
        return mt->cls == W2L_MYSQL_TEXT || mt->cls == W2L_MYSQL_TIME ? VK_STR : VK_NONE;
    case VF_BINHEX: return VK_BIN;
    default: return VK_NONE;
    }
}

w2l_rc w2l__verify_ident(const char *name, w2l_buf *b, w2l_error *err)
{
    PUT(b, "`", 1);
    for (const char *p = name; *p; p++) {
        if (*p == '`') PUT(b, "`", 1);
        PUT(b, p, 1);
    }
    PUT(b, "`", 1);
    return W2L_OK;
}

/* The text of a date, datetime or time column in SQL, NULL for a zero date. */
static w2l_rc sql_temporal(w2l__vform f, const char *col, w2l_buf *b, w2l_error *err)
{
    if (f == VF_TIME) {
        PUTS(b, "TIME_FORMAT(");
        W2L_TRY(w2l__verify_ident(col, b, err));
        PUTS(b, ",'%H:%i:%s.%f')");
        return W2L_OK;
    }
    const char *fmt = f == VF_DATE ? "'%Y-%m-%d'" : "'%Y-%m-%d %H:%i:%s.%f'";
    const char *zero = f == VF_DATE ? "'0000-00-00'" : "'0000-00-00 00:00:00.000000'";
    PUTS(b, "NULLIF(DATE_FORMAT(");
    W2L_TRY(w2l__verify_ident(col, b, err));
    return w2l__buf_printf(b, err, ",%s),%s)", fmt, zero);
}

w2l_rc w2l__verify_sql_expr(w2l__vform f, const char *col, w2l_buf *b, w2l_error *err)
{
    const char *pre = NULL, *post = NULL;
    switch (f) {
    case VF_NUM:
    case VF_BITS: pre = "(", post = "+0)"; break;
    case VF_BOOL: pre = "(", post = "<>0)"; break;
    case VF_DEC: pre = "CAST(", post = " AS CHAR)"; break;
    case VF_REAL:
        pre = "REPLACE(REPLACE(FORMAT(", post = ",6,'en_US'),',',''),'-0.000000','0.000000')";
        break;
    case VF_DATE:
    case VF_DATETIME:
    case VF_TIME: return sql_temporal(f, col, b, err);
    case VF_TEXTHEX: pre = "HEX(CONVERT(", post = " USING utf8mb4))"; break;
    case VF_BINHEX: pre = "HEX(", post = ")"; break;
    case VF_WKB: pre = "HEX(ST_AsBinary(", post = "))"; break;
    default: return w2l__fail(err, W2L_MISUSE, "column %s has no canonical form", col);
    }
    PUTS(b, pre);
    W2L_TRY(w2l__verify_ident(col, b, err));
    PUTS(b, post);
    return W2L_OK;
}

w2l_rc w2l__verify_sql_key(w2l__vkey k, w2l__vform f, const char *col, w2l_buf *b,
                           w2l_error *err)
{
    if (k == VK_STR || k == VK_BIN) return w2l__verify_ident(col, b, err);
    return w2l__verify_sql_expr(f, col, b, err);
}

static w2l_rc put_hex(const char *p, size_t n, w2l_buf *b, w2l_error *err)
{
    static const char hx[] = "0123456789ABCDEF";
    W2L_TRY(w2l__buf_reserve(b, n * 2, err));
    for (size_t i = 0; i < n; i++) {
        b->data[b->len++] = (unsigned char)hx[(unsigned char)p[i] >> 4];
        b->data[b->len++] = (unsigned char)hx[(unsigned char)p[i] & 15];
    }
    return W2L_OK;
}

/* What MariaDB's FORMAT(x, 6) prints (without the grouping commas): x rounded as
 * my_double_round rounds it (rint of x * 10^6, back), then printed as my_fcvt prints it
 * (dtoa mode 5): the shortest digits that read back as it when they need at most 6
 * decimals (padded with zeros), else the value correctly rounded to 6 decimals; a rounded
 * zero without its sign. */
static w2l_rc put_real(double x, w2l_buf *b, w2l_error *err)
{
    if (isnan(x) || isinf(x)) return w2l__buf_printf(b, err, "%s", isnan(x) ? "nan" : "inf");
    double t = x * 1e6;
    if (!isinf(t)) x = rint(t) / 1e6;
    char s[400], e[40];
    int n, prec = 0;
    for (; prec <= 16; prec++) { /* the shortest digits: d.ddd e+XX */
        snprintf(e, sizeof e, "%.*e", prec, x);
        if (strtod(e, NULL) == x) break;
    }
    int ex = atoi(strchr(e, 'e') + 1);
    int frac = prec - ex; /* decimals the shortest digits need */
    if (x == 0 || frac > 6) {
        n = snprintf(s, sizeof s, "%.6f", x);
    } else {
        char dig[20];
        const char *p = e;
        int neg = *p == '-', nd = 0;
        if (neg) p++;
        for (; *p && *p != 'e' && nd < 17; p++)
            if (*p != '.') dig[nd++] = *p;
        n = 0;
        if (neg) s[n++] = '-';
        if (ex < 0) s[n++] = '0';
        for (int i = 0; i <= ex && n < 360; i++) s[n++] = i < nd ? dig[i] : '0';
        s[n++] = '.';
        for (int i = ex + 1; i < ex + 7; i++) s[n++] = i >= 0 && i < nd ? dig[i] : '0';
        s[n] = '\0';
    }
    if (n < 0 || (size_t)n >= sizeof s) return w2l__fail(err, W2L_ERROR, "number too long");
    if (!strcmp(s, "-0.000000")) memmove(s, s + 1, (size_t)n--);
    PUT(b, s, (size_t)n);
    return W2L_OK;
}

static w2l_rc put_date(int64_t days, w2l_buf *b, w2l_error *err)
{
    int64_t y;
    unsigned m, d;
    w2l__civil_from_days(days, &y, &m, &d);
    return w2l__buf_printf(b, err, "%04lld-%02u-%02u", (long long)y, m, d);
}

static w2l_rc put_time(int64_t us, w2l_buf *b, w2l_error *err)
{
    int64_t s = us / 1000000, f = us % 1000000;
    return w2l__buf_printf(b, err, "%02lld:%02lld:%02lld.%06lld", (long long)(s / 3600),
                           (long long)(s / 60 % 60), (long long)(s % 60), (long long)f);
}

static w2l_rc put_datetime(int64_t us, w2l_buf *b, w2l_error *err)
{
    int64_t days = w2l__floor_div(us, W2L_MICROS_PER_DAY);
    W2L_TRY(put_date(days, b, err));
    PUT(b, " ", 1);
    return put_time(w2l__floor_mod(us, W2L_MICROS_PER_DAY), b, err);
}

static w2l_rc put_num(w2l_type t, const w2l_value *v, int as_unsigned, w2l_buf *b,
                      w2l_error *err)
{
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: return w2l__buf_printf(b, err, "%d", v->v.i32 ? 1 : 0);
    case W2L_TYPE_INT:
        if (as_unsigned) return w2l__buf_printf(b, err, "%u", (unsigned)v->v.i32);
        return w2l__buf_printf(b, err, "%d", (int)v->v.i32);
    case W2L_TYPE_LONG:
        if (as_unsigned)
            return w2l__buf_printf(b, err, "%llu", (unsigned long long)(uint64_t)v->v.i64);
        return w2l__buf_printf(b, err, "%lld", (long long)v->v.i64);
    case W2L_TYPE_DECIMAL: {
        char s[64];
        size_t n = w2l__decimal_format(v->v.dec, t.scale, s, sizeof s);
        PUT(b, s, n < sizeof s ? n : sizeof s - 1);
        return W2L_OK;
    }
    case W2L_TYPE_STRING: PUT(b, v->v.bytes.ptr, v->v.bytes.len); return W2L_OK;
    default: return w2l__fail(err, W2L_MISUSE, "not a number");
    }
}

w2l_rc w2l__verify_canon(w2l__vform f, w2l_type t, const w2l_value *v, w2l_buf *b,
                         w2l_error *err)
{
    if (v->is_null) {
        PUT(b, "~", 1);
        return W2L_OK;
    }
    switch (f) {
    case VF_NUM:
    case VF_DEC: return put_num(t, v, 0, b, err);
    case VF_BITS: return put_num(t, v, 1, b, err);
    case VF_BOOL:
        if (t.id == W2L_TYPE_BOOLEAN) return w2l__buf_printf(b, err, "%d", v->v.i32 ? 1 : 0);
        return w2l__buf_printf(b, err, "%d", t.id == W2L_TYPE_LONG ? v->v.i64 != 0 : v->v.i32 != 0);
    case VF_REAL: return put_real(t.id == W2L_TYPE_FLOAT ? (double)v->v.f32 : v->v.f64, b, err);
    case VF_DATE: return put_date(v->v.i32, b, err);
    case VF_DATETIME: return put_datetime(v->v.i64, b, err);
    case VF_TIME: return put_time(v->v.i64, b, err);
    case VF_TEXTHEX:
    case VF_BINHEX:
    case VF_WKB: return put_hex(v->v.bytes.ptr, v->v.bytes.len, b, err);
    default: return w2l__fail(err, W2L_MISUSE, "no canonical form");
    }
}

w2l_rc w2l__verify_key_text(w2l__vkey k, w2l__vform f, w2l_type t, const w2l_value *v,
                            w2l_buf *b, w2l_error *err)
{
    if (k == VK_STR || k == VK_BIN) {
        PUT(b, v->v.bytes.ptr, v->v.bytes.len);
        return W2L_OK;
    }
    return w2l__verify_canon(f, t, v, b, err);
}

uint64_t w2l__verify_hash(const void *text, size_t n)
{
    unsigned char d[32];
    w2l__sha256(text, n, d);
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h = h << 8 | d[i];
    return h;
}

/* A decimal text split: sign, integer digits without leading zeros, fraction digits
 * without trailing zeros. */
typedef struct num {
    int neg;
    const char *ip, *fp;
    size_t il, fl;
} num;

static num num_of(const char *s, size_t n)
{
    num x = {0, s, s, 0, 0};
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) x.neg = s[i++] == '-';
    while (i < n && s[i] == '0') i++;
    x.ip = s + i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, x.il++;
    if (i < n && s[i] == '.') {
        x.fp = s + ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, x.fl++;
        while (x.fl && x.fp[x.fl - 1] == '0') x.fl--;
    }
    if (!x.il && !x.fl) x.neg = 0; /* -0 */
    return x;
}

static int mag_cmp(const num *a, const num *b)
{
    if (a->il != b->il) return a->il < b->il ? -1 : 1;
    int c = memcmp(a->ip, b->ip, a->il);
    if (c) return c < 0 ? -1 : 1;
    size_t m = a->fl < b->fl ? a->fl : b->fl;
    c = memcmp(a->fp, b->fp, m);
    if (c) return c < 0 ? -1 : 1;
    return a->fl == b->fl ? 0 : a->fl < b->fl ? -1 : 1;
}

int w2l__verify_key_cmp(w2l__vkey k, const char *a, size_t al, const char *b, size_t bl)
{
    if (k == VK_NUM) {
        num x = num_of(a, al), y = num_of(b, bl);
        if (x.neg != y.neg) return x.neg ? -1 : 1;
        int c = mag_cmp(&x, &y);
        return x.neg ? -c : c;
    }
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c < 0 ? -1 : 1;
    return al == bl ? 0 : al < bl ? -1 : 1;
}

int w2l__verify_keys_cmp(const w2l__vkey *ks, size_t n, w2l__vkeyval a, w2l__vkeyval b)
{
    for (size_t i = 0; i < n; i++) {
        int c = w2l__verify_key_cmp(ks[i], a.p[i], a.len[i], b.p[i], b.len[i]);
        if (c) return c;
    }
    return 0;
}

size_t w2l__verify_bucket(const w2l__vkey *ks, size_t n, const w2l__vkeyval *bounds, size_t nb,
                          w2l__vkeyval key)
{
    size_t lo = 0, hi = nb; /* the first bound >= key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w2l__verify_keys_cmp(ks, n, bounds[mid], key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

w2l_rc w2l__verify_literal(w2l__vkey k, const char *s, size_t len, w2l__vquote_fn q, void *qctx,
                           w2l_buf *b, w2l_error *err)
{
    if (k == VK_NUM) {
        for (size_t i = 0; i < len; i++)
            if (!strchr("0123456789.-+", s[i]) || !s[i])
                return w2l__fail(err, W2L_CORRUPT, "'%.*s' is not a number", (int)len, s);
        if (!len) return w2l__fail(err, W2L_CORRUPT, "an empty number");
        PUT(b, s, len);
        return W2L_OK;
    }
    if (k == VK_BIN) {
        PUT(b, "X'", 2);
        W2L_TRY(put_hex(s, len, b, err));
        PUT(b, "'", 1);
        return W2L_OK;
    }
    return q(qctx, b, s, len, err);
}

w2l_rc w2l__verify_key_show(const w2l__vkey *ks, size_t n, w2l__vkeyval key, w2l_buf *b,
                            w2l_error *err)
{
    PUT(b, "(", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) PUT(b, ", ", 2);
        const char *s = key.p[i];
        size_t l = key.len[i];
        if (ks[i] == VK_NUM) {
            PUT(b, s, l);
        } else if (ks[i] == VK_BIN) {
            PUT(b, "0x", 2);
            W2L_TRY(put_hex(s, l, b, err));
        } else {
            PUT(b, "'", 1);
            for (size_t j = 0; j < l; j++) {
                unsigned char c = (unsigned char)s[j];
                if (c == '\'') PUT(b, "''", 2);
                else if (c < 0x20 || c == 0x7f) W2L_TRY(w2l__buf_printf(b, err, "\\x%02x", c));
                else PUT(b, s + j, 1);
            }
            PUT(b, "'", 1);
        }
    }
    PUT(b, ")", 1);
    return W2L_OK;
}
