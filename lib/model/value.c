/*
 * Values: parsing and writing the canonical text of each Iceberg primitive, and the order
 * Iceberg uses for bounds.
 *
 * Canonical text (what w2l_value_format writes and w2l_value_parse reads back exactly):
 *   boolean     true, false
 *   int, long   -12
 *   float       shortest text that reads back as the same value, in Python repr() layout:
 *   double      1.0, -0.0, 0.1, 1e+16, 1.5e-05, NaN, Infinity, -Infinity
 *   decimal     exactly scale fraction digits: -5.00, 0.01, 123 (scale 0)
 *   date        2024-02-29 (years beyond 0000..9999 as +10000-01-01 / -0001-01-01)
 *   time        23:59:59.000001 (always 6 fraction digits)
 *   timestamp   2024-02-29T12:00:00.500000
 *   timestamptz 2024-02-29T12:00:00.500000+00:00
 *   string      the bytes as they are
 *   binary      lowercase hex (parsing takes the text as the raw bytes, not hex)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

/* ---- floats ---- */

/* Lays out sign, significant digits d[0..nd) and decimal exponent e (value = d.ddd x 10^e)
 * as Python's repr() does: positional for -4 <= e < 16 with at least one fraction digit,
 * scientific with a signed two-digit-minimum exponent otherwise. */
static size_t layout(int neg, const char *d, int nd, int e, char *out)
{
    size_t n = 0;
    if (neg) out[n++] = '-';
    if (e < -4 || e >= 16) {
        out[n++] = d[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, d + 1, (size_t)nd - 1);
            n += (size_t)nd - 1;
        }
        n += (size_t)sprintf(out + n, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (e < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int k = 0; k < -e - 1; k++) out[n++] = '0';
        memcpy(out + n, d, (size_t)nd);
        n += (size_t)nd;
    } else {
        for (int k = 0; k <= e; k++) out[n++] = k < nd ? d[k] : '0';
        out[n++] = '.';
        if (nd > e + 1) {
            memcpy(out + n, d + e + 1, (size_t)(nd - e - 1));
            n += (size_t)(nd - e - 1);
        } else {
            out[n++] = '0';
        }
    }
    out[n] = '\0';
    return n;
}

static size_t emit(const char *tmp, size_t n, char *buf, size_t size)
{
    if (size) {
        size_t c = n < size ? n : size - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

/* Special values and zero; 0 when v is an ordinary non-zero number. */
static size_t special(double v, char *tmp)
{
    const char *s = NULL;
    if (isnan(v)) s = "NaN";
    else if (isinf(v)) s = v < 0 ? "-Infinity" : "Infinity";
    else if (v == 0) s = signbit(v) ? "-0.0" : "0.0";
    if (!s) return 0;
    strcpy(tmp, s);
    return strlen(s);
}

/* From "%.*e" text ("-1.2345e+06") to digits and exponent, then the repr layout. Only
 * digits are taken before the 'e', so the locale's decimal point (printf follows
 * setlocale(), and it may be "," or several bytes) never reaches the output. */
static size_t from_sci(const char *sci, char *out)
{
    int neg = sci[0] == '-';
    const char *p = sci + neg;
    char d[24];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < (int)sizeof d) d[nd++] = *p;
    int e = atoi(p + 1);
    while (nd > 1 && d[nd - 1] == '0') nd--;
    return layout(neg, d, nd, e, out);
}

size_t w2l__double_format(double v, char *buf, size_t size)
{
    char tmp[48], sci[48];
    size_t n = special(v, tmp);
    if (!n) {
        /* the fewest significant digits that read back exactly (17 always do). If p
         * correctly rounded digits read back, so do p + 1 (they are at least as close),
         * so a binary search finds the least p. */
        int lo = 1, hi = 17;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            snprintf(sci, sizeof sci, "%.*e", mid - 1, v);
            if (strtod(sci, NULL) == v) hi = mid;
            else lo = mid + 1;
        }
        snprintf(sci, sizeof sci, "%.*e", lo - 1, v);
        n = from_sci(sci, tmp);
    }
    return emit(tmp, n, buf, size);
}

size_t w2l__float_format(float v, char *buf, size_t size)
{
    char tmp[48], sci[48];
    size_t n = special(v, tmp);
    if (!n) {
        int lo = 1, hi = 9;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            snprintf(sci, sizeof sci, "%.*e", mid - 1, (double)v);
            if (strtof(sci, NULL) == v) hi = mid;
            else lo = mid + 1;
        }
        snprintf(sci, sizeof sci, "%.*e", lo - 1, (double)v);
        n = from_sci(sci, tmp);
    }
    return emit(tmp, n, buf, size);
}

/* ---- parsing ---- */

static w2l_rc bad(w2l_error *err, w2l_type t, const char *text, size_t len, const char *why)
{
    char tn[24];
    int shown = len > 64 ? 64 : (int)len;
    return w2l__fail(err, W2L_CORRUPT, "invalid %s value '%.*s%s': %s",
                     w2l_type_format(t, tn, sizeof tn), shown, text, len > 64 ? "..." : "", why);
}

/* [+-]digits within [lo, hi]. */
static w2l_rc parse_int(w2l_type t, const char *text, size_t len, int64_t lo, int64_t hi,
                        int64_t *out, w2l_error *err)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    if (i == len) return bad(err, t, text, len, "not an integer");
    uint64_t mag = 0;
    const uint64_t lim = neg ? (uint64_t)0 - (uint64_t)lo : (uint64_t)hi;
    for (; i < len; i++) {
        char c = text[i];
        if (c < '0' || c > '9') return bad(err, t, text, len, "not an integer");
        unsigned dgt = (unsigned)(c - '0');
        if (mag > (lim - dgt) / 10) return bad(err, t, text, len, "out of range");
        mag = mag * 10 + dgt;
    }
    /* mag <= lim, so these conversions are exact */
    *out = neg ? (mag == 0 ? 0 : -(int64_t)(mag - 1) - 1) : (int64_t)mag;
    return W2L_OK;
}

static int ieq(const char *a, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != lit[i]) return 0;
    }
    return 1;
}

/* Reads [+-](digits[.digits]|.digits)[(e|E)[+-]digits], or NaN / Inf / Infinity in any
 * case with an optional sign. strtod() follows the process locale's decimal point, so the
 * number is first rewritten without a point ("12.5e3" -> "125e2"): digits, signs and 'e'
 * mean the same in every locale. Hex floats are not accepted. */
static w2l_rc parse_float(w2l_type t, const char *text, size_t len, w2l_value *out,
                          w2l_error *err)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    double special_v = 0;
    if (ieq(text + i, len - i, "nan")) special_v = NAN;
    else if (ieq(text + i, len - i, "inf") || ieq(text + i, len - i, "infinity"))
        special_v = INFINITY;
    if (special_v != 0 || isnan(special_v)) {
        if (neg) special_v = -special_v;
        if (t.id == W2L_TYPE_FLOAT) out->v.f32 = (float)special_v;
        else out->v.f64 = special_v;
        return W2L_OK;
    }
    char tmp[600];
    size_t o = 0;
    if (neg) tmp[o++] = '-';
    size_t nd = 0, nfrac = 0;
    size_t first = o; /* leading zeros are dropped; they do not count toward the limit */
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++, nd++)
        if (o < 520 && (o > first || text[i] != '0')) tmp[o++] = text[i];
    if (i < len && text[i] == '.')
        for (i++; i < len && text[i] >= '0' && text[i] <= '9'; i++, nd++, nfrac++)
            if (o < 520 && (o > first || text[i] != '0')) tmp[o++] = text[i];
    if (nd == 0) return bad(err, t, text, len, "not a number");
    if (o >= 520) return bad(err, t, text, len, "too many significant digits");
    if (o == first) tmp[o++] = '0';
    long exp = 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        int eneg = 0;
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-')) eneg = text[i++] == '-';
        if (i >= len || text[i] < '0' || text[i] > '9')
            return bad(err, t, text, len, "bad exponent");
        for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
            if (exp < 1000000) exp = exp * 10 + (text[i] - '0'); /* beyond: 0 or inf anyway */
        if (eneg) exp = -exp;
    }
    if (i != len) return bad(err, t, text, len, "not a number");
    snprintf(tmp + o, sizeof tmp - o, "e%ld", exp - (long)nfrac);
    errno = 0;
    if (t.id == W2L_TYPE_FLOAT) {
        float f = strtof(tmp, NULL);
        if (errno == ERANGE && isinf(f)) return bad(err, t, text, len, "out of range");
        out->v.f32 = f;
    } else {
        double d = strtod(tmp, NULL);
        if (errno == ERANGE && isinf(d)) return bad(err, t, text, len, "out of range");
        out->v.f64 = d;
    }
    return W2L_OK;
}

w2l_rc w2l_value_parse(w2l_type t, const char *text, size_t len, w2l_value *out,
                       w2l_error *err)
{
    if (!out || (!text && len)) return w2l__fail(err, W2L_MISUSE, "w2l_value_parse: NULL argument");
    if (!text) text = "";
    if (!w2l__type_valid(t)) {
        char tn[24];
        return w2l__fail(err, W2L_MISUSE, "w2l_value_parse: invalid type %s",
                         w2l_type_format(t, tn, sizeof tn));
    }
    w2l_value v;
    memset(&v, 0, sizeof v);
    int64_t i64;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        if (ieq(text, len, "true") || ieq(text, len, "1")) v.v.i32 = 1;
        else if (ieq(text, len, "false") || ieq(text, len, "0")) v.v.i32 = 0;
        else return bad(err, t, text, len, "expected true or false");
        break;
    case W2L_TYPE_INT:
        W2L_TRY(parse_int(t, text, len, INT32_MIN, INT32_MAX, &i64, err));
        v.v.i32 = (int32_t)i64;
        break;
    case W2L_TYPE_LONG:
        W2L_TRY(parse_int(t, text, len, INT64_MIN, INT64_MAX, &v.v.i64, err));
        break;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE:
        W2L_TRY(parse_float(t, text, len, &v, err));
        break;
    case W2L_TYPE_DECIMAL:
        W2L_TRY(w2l__decimal_parse(text, len, t.precision, t.scale, &v.v.dec, err));
        break;
    case W2L_TYPE_DATE:
        W2L_TRY(w2l__date_parse(text, len, &v.v.i32, err));
        break;
    case W2L_TYPE_TIME:
        W2L_TRY(w2l__time_parse(text, len, &v.v.i64, err));
        break;
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ:
        W2L_TRY(w2l__timestamp_parse(text, len, t.id == W2L_TYPE_TIMESTAMPTZ, &v.v.i64, err));
        break;
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY:
        v.v.bytes.ptr = text;
        v.v.bytes.len = len;
        break;
    }
    *out = v;
    return W2L_OK;
}

/* ---- formatting ---- */

static size_t format_hex(const char *p, size_t len, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t need = len * 2;
    if (size) {
        size_t pairs = (size - 1) / 2 < len ? (size - 1) / 2 : len;
        for (size_t i = 0; i < pairs; i++) {
            unsigned char b = (unsigned char)p[i];
            buf[2 * i] = hex[b >> 4];
            buf[2 * i + 1] = hex[b & 15];
        }
        size_t n = 2 * pairs;
        if (n < need && n + 1 < size) { /* room for one more nibble */
            buf[n] = hex[(unsigned char)p[pairs] >> 4];
            n++;
        }
        buf[n] = '\0';
    }
    return need;
}

size_t w2l_value_format(w2l_type t, const w2l_value *v, char *buf, size_t size)
{
    char tmp[64];
    if (!v || v->is_null) return emit("null", 4, buf, size);
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        return v->v.i32 ? emit("true", 4, buf, size) : emit("false", 5, buf, size);
    case W2L_TYPE_INT:
        return emit(tmp, (size_t)snprintf(tmp, sizeof tmp, "%ld", (long)v->v.i32), buf, size);
    case W2L_TYPE_LONG:
        return emit(tmp, (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)v->v.i64), buf,
                    size);
    case W2L_TYPE_FLOAT: return w2l__float_format(v->v.f32, buf, size);
    case W2L_TYPE_DOUBLE: return w2l__double_format(v->v.f64, buf, size);
    case W2L_TYPE_DECIMAL: return w2l__decimal_format(v->v.dec, t.scale, buf, size);
    case W2L_TYPE_DATE: return w2l__date_format(v->v.i32, buf, size);
    case W2L_TYPE_TIME: return w2l__time_format(v->v.i64, buf, size);
    case W2L_TYPE_TIMESTAMP: return w2l__timestamp_format(v->v.i64, 0, buf, size);
    case W2L_TYPE_TIMESTAMPTZ: return w2l__timestamp_format(v->v.i64, 1, buf, size);
    case W2L_TYPE_STRING:
        if (size) {
            size_t c = v->v.bytes.len < size ? v->v.bytes.len : size - 1;
            if (c) memcpy(buf, v->v.bytes.ptr, c);
            buf[c] = '\0';
        }
        return v->v.bytes.len;
    case W2L_TYPE_BINARY: return format_hex(v->v.bytes.ptr, v->v.bytes.len, buf, size);
    }
    return emit("?", 1, buf, size);
}

/* ---- order ---- */

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int cmp_double(double a, double b)
{
    int an = isnan(a) != 0, bn = isnan(b) != 0;
    if (an || bn) return an - bn; /* NaN (of either sign) after every number */
    if (a != b) return a < b ? -1 : 1;
    if (a == 0) return (signbit(b) != 0) - (signbit(a) != 0); /* -0.0 before +0.0 */
    return 0;
}

static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0; /* memcmp compares as unsigned char */
    if (c) return c < 0 ? -1 : 1;
    return CMP(alen, blen);
}

int w2l_value_compare(w2l_type t, const w2l_value *a, const w2l_value *b)
{
    int an = !a || a->is_null, bn = !b || b->is_null;
    if (an || bn) return bn - an; /* NULL first */
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: return CMP(a->v.i32 != 0, b->v.i32 != 0);
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: return CMP(a->v.i32, b->v.i32);
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ: return CMP(a->v.i64, b->v.i64);
    case W2L_TYPE_FLOAT: return cmp_double(a->v.f32, b->v.f32);
    case W2L_TYPE_DOUBLE: return cmp_double(a->v.f64, b->v.f64);
    case W2L_TYPE_DECIMAL: return w2l__i128_cmp(a->v.dec, b->v.dec);
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY:
        return cmp_bytes(a->v.bytes.ptr, a->v.bytes.len, b->v.bytes.ptr, b->v.bytes.len);
    }
    return 0;
}
