/*
 * CDC JSON types and values (cdc_int.h): MySQL type text to Iceberg types, and JSON
 * values of each format to w2l values (w2l-design(7) sections 4 and 9).
 *
 * Numbers are exact: a JSON number's text as written (lib/json keeps it) or a canal string
 * is converted straight into the column's type, never through a double unless the column
 * is float or double:
 *   decimal(p,s)   exact, exponent forms included ("1.5E+3", "12345e-2", "-0.0", "+1");
 *                  a value that would need rounding to s digits or more than p digits is
 *                  an error naming table, column and value (1e400 and 1e-400 are errors,
 *                  never inf or 0)
 *   int, long      exact integers, also "5.0" and "1e3"; out of range is an error
 *   float, double  strtof/strtod of the text (correctly rounded); beyond the range is an
 *                  error, below it rounds to 0 as IEEE does
 *   string         the number's text as written; DECIMAL(p > 38) columns hold the exact
 *                  plain text with the column's s fraction digits ("1.5E+3" -> "1500.00")
 *   boolean        true/false, or an integer: 0 false, other values true (MySQL's rule for
 *                  TINYINT(1) as boolean; logged once per column when not 0/1)
 *   BIT(n > 1)     long holding the bit pattern: values up to 18446744073709551615 (2^64-1)
 *                  keep their 64 bits (so those >= 2^63 are negative longs)
 *
 * Canal: values are strings. ENUM arrives as its 1-based index and SET as its bitmask
 * ("1", "3"); they become the member text ("value1", "a,b") from the members its
 * mysqlType lists, kept with the shape (colaux). A value is read as an index / bitmask
 * only when it is all digits, in range and not itself a member, so producers that send
 * the text keep working; index 0 and the empty bitmask are "" (MySQL's error value, the
 * empty set). GEOMETRY is ISO-8859-1 text of MySQL's stored form (4-byte SRID, then WKB):
 * the column gets the WKB.
 *
 * Debezium values follow its encodings (see cdc_debezium.c for the types): epoch days,
 * Time/MicroTime/NanoTime, Timestamp/MicroTimestamp/NanoTimestamp, ZonedTimestamp text,
 * Decimal as base64 big-endian unscaled bytes, or a JSON number (JsonConverter
 * decimal.format=NUMERIC), or text (decimal.handling.mode=string); VariableScaleDecimal
 * {scale, value} as exact text; Bits as base64 little-endian; geometry structs {wkb, srid}
 * and points {x, y} as WKB; structs, arrays and maps as their JSON text.
 */
#define W2L__TIME_HINT                                                                             \
    "set source.time-as-string (--source.time-as-string); a table the lake has already keeps its " \
    "time column: w2l-types(7)"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"

static int parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t v = 0;
    for (size_t e = n - i > 19 ? i + 19 : n; i < e; i++) { /* 19 digits cannot overflow */
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9) return -1;
        v = v * 10 + dg;
    }
    for (; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9) return -1;
        if (v > (UINT64_MAX - dg) / 10) return -1;
        v = v * 10 + dg;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

/* The exact integer of numeric text in any form ("12", "-5.0", "1e3", "+7"); -1 when it
 * is not an integer or has more than 38 digits. */
static int text_int128(const char *s, size_t n, w2l_int128 *out)
{
    int64_t v;
    if (parse_i64(s, n, &v) == 0) { /* the common case, without the general parser */
        *out = w2l__i128_from_i64(v);
        return 0;
    }
    w2l_error e;
    return w2l__decimal_parse(s, n, W2L_DECIMAL_MAX_PRECISION, 0, out, &e) == W2L_OK ? 0 : -1;
}

/* An exact integer of text within [lo, hi]. */
static int text_int64(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
    w2l_int128 v;
    int64_t r;
    if (text_int128(s, n, &v) || w2l__i128_to_i64(v, &r) || r < lo || r > hi) return -1;
    *out = r;
    return 0;
}

/* The 64-bit pattern of an integer in [INT64_MIN, 2^64 - 1] (BIT(64) values). */
static int text_bits64(const char *s, size_t n, uint64_t *out)
{
    w2l_int128 v;
    if (text_int128(s, n, &v)) return -1;
    if (v.hi != 0 && !(v.hi == -1 && (v.lo >> 63))) return -1;
    *out = v.lo;
    return 0;
}

int w2l__cdc_text_is_integer(const char *text, unsigned maxdigits)
{
    const char *p = text;
    if (*p == '-') p++;
    while (*p == '0' && p[1]) p++;
    size_t n = strspn(p, "0123456789");
    return n && !p[n] && n <= maxdigits;
}

/* The digits of numeric text without leading and trailing zeros, and the power of ten of
 * its first digit: "0.0120" -> "12", -2; "1.5e3" -> "15", 3. Zero gives "" and 0. */
static void dec_norm(const char *s, char *dig, size_t size, long *exp10, int *neg)
{
    size_t nd = 0;
    long pos = 0, first = -1, nint = -1, e = 0; /* pos: index among the mantissa's digits */
    *neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    for (; *s; s++) {
        if (*s == '.') {
            nint = pos;
            continue;
        }
        if (*s == 'e' || *s == 'E') {
            e = strtol(s + 1, NULL, 10);
            break;
        }
        if (!isdigit((unsigned char)*s)) break;
        if (first < 0 && *s != '0') first = pos;
        if (first >= 0 && nd + 1 < size) dig[nd++] = *s;
        pos++;
    }
    if (nint < 0) nint = pos;
    while (nd && dig[nd - 1] == '0') nd--;
    dig[nd] = '\0';
    *exp10 = first >= 0 ? nint - 1 - first + e : 0;
}

int w2l__cdc_double_exact(const char *text)
{
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (!isfinite(v)) return 0;
    char back[40], a[420], b[40];
    w2l__double_format(v, back, sizeof back);
    long ea, eb;
    int na, nb;
    dec_norm(text, a, sizeof a, &ea, &na);
    dec_norm(back, b, sizeof b, &eb, &nb);
    if (!a[0] || !b[0]) return !a[0] && !b[0]; /* zero, whatever its sign */
    return na == nb && ea == eb && strcmp(a, b) == 0;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int w2l__cdc_b64_decode(const char *s, size_t n, unsigned char *out, size_t *outlen)
{
    while (n && s[n - 1] == '=') n--;
    if (n % 4 == 1) return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    *outlen = o;
    return 0;
}

/* ---- MySQL type text ---- */

/* The Iceberg type of a MySQL column type, from the DDL module's type map; info gets
 * the parsed type (class, fsp, bits, enum/set members kept in d->desc until the next
 * w2l__cdc_describe_reset) for the value encodings. */
w2l_rc w2l__cdc_mysql_type(w2l__cdc *d, const char *db, const char *tn, const char *col,
                           const char *text, w2l_type *out, w2l__mysql_type *info, w2l_error *err)
{
    w2l__type_opts o = {0};
    o.tinyint1_as_boolean = d->opts.tinyint1_as_boolean;
    o.time_as_string = d->opts.time_as_string;
    w2l_rc rc = w2l__mysql_type_map_text(text, strlen(text), &o, col, &d->desc, out, info, err);
    if (rc == W2L_OK || rc == W2L_NOMEM) return rc;
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why);
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: unknown type \"%s\" (%s)",
                     d->what, db, tn, col, text, why);
}

/* cv of a MySQL column in canal or maxwell (JSON native) messages. */
unsigned w2l__cdc_mysql_cv(const w2l__mysql_type *info, w2l_type t)
{
    if (info->cls == W2L_MYSQL_GEOMETRY) return CV_GEOM;
    if (info->cls == W2L_MYSQL_BIT && t.id == W2L_TYPE_LONG) return CV_BITS_U64;
    if (t.id != W2L_TYPE_STRING) return CV_PLAIN;
    switch (info->cls) {
    case W2L_MYSQL_SET: return CV_SET;
    case W2L_MYSQL_ENUM: return CV_ENUM;
    case W2L_MYSQL_JSON: return CV_JSON;
    case W2L_MYSQL_DECIMAL: return CV_DECIMAL_TEXT;
    default: return CV_PLAIN;
    }
}

/* cv of a MySQL column in debezium messages without the schema part (its default
 * converters: time.precision.mode=adaptive_time_microseconds, decimal.handling.mode=
 * precise, bigint.unsigned.handling.mode=long, geometry as {wkb, srid}). */
unsigned w2l__cdc_mysql_dbz_cv(const w2l__mysql_type *info, w2l_type t)
{
    switch (info->cls) {
    case W2L_MYSQL_DATE: return CV_DAYS;
    case W2L_MYSQL_TIME: return CV_TIME_US;
    case W2L_MYSQL_DATETIME: return info->fsp > 3 ? CV_TS_US : CV_TS_MS;
    case W2L_MYSQL_TIMESTAMP: return CV_ZONED;
    case W2L_MYSQL_BIT: return CV_BITS_B64;
    case W2L_MYSQL_JSON: return CV_JSON;
    case W2L_MYSQL_GEOMETRY: return CV_GEOM;
    case W2L_MYSQL_DECIMAL: return CV_DECIMAL_ANY;
    case W2L_MYSQL_INT: return t.id == W2L_TYPE_DECIMAL ? CV_UBIGINT : CV_PLAIN;
    default: return CV_PLAIN;
    }
}

/* ---- values ---- */

static w2l_rc bad_value(const vctx *x, const char *text, size_t len, const char *why,
                        w2l_error *err)
{
    char shown[80];
    size_t n = len < 64 ? len : 64;
    memcpy(shown, text, n);
    strcpy(shown + n, len > 64 ? "..." : "");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)shown[i] < 0x20) shown[i] = '?';
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: value \"%s\": %s", x->d->what,
                     x->t->db, x->t->name, x->col, shown, why);
}

/* The model's own message (why the text does not fit) goes after the value. */
static w2l_rc bad_value_err(const vctx *x, const char *text, size_t len, w2l_error *err)
{
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why);
    return bad_value(x, text, len, why, err);
}

static int is_zero_date(const char *s, size_t n)
{
    if (n < 10 || memcmp(s, "0000-00-00", 10) != 0) return 0;
    for (size_t i = 10; i < n; i++)
        if (s[i] != '0' && s[i] != ' ' && s[i] != ':' && s[i] != '.' && s[i] != 'T') return 0;
    return 1;
}

/* TIME text outside 00:00..24:00 gets its own message. */
static w2l_rc time_text(const vctx *x, const char *s, size_t n, int64_t *us, w2l_error *err)
{
    size_t h = 0;
    while (h < n && s[h] >= '0' && s[h] <= '9') h++;
    if ((n && s[0] == '-') || h > 2 || (h == 2 && (s[0] - '0') * 10 + (s[1] - '0') >= 24))
        return bad_value(x, s, n,
                         "TIME outside 00:00:00..23:59:59.999999 (" W2L__TIME_HINT ")", err);
    if (w2l__time_parse(s, n, us, err) != W2L_OK) return bad_value_err(x, s, n, err);
    return W2L_OK;
}

/* n bytes copied into the decoder's chunks. */
static w2l_rc keep_bytes(const vctx *x, const void *p, size_t n, w2l_value *out, w2l_error *err)
{
    char *c = w2l__cdc_alloc(&x->d->mem, n ? n : 1);
    W2L_NOMEM_IF(!c, err);
    if (n) memcpy(c, p, n);
    out->is_null = 0;
    out->v.bytes.ptr = c;
    out->v.bytes.len = n;
    return W2L_OK;
}

/* Canal writes binary columns as ISO-8859-1 text: one character per byte. */
static w2l_rc latin1_bytes(const vctx *x, const char *s, size_t n, w2l_value *out, w2l_error *err)
{
    unsigned char *p = w2l__cdc_alloc(&x->d->mem, n ? n : 1);
    W2L_NOMEM_IF(!p, err);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) p[o++] = c;
        else if ((c == 0xc2 || c == 0xc3) && i + 1 < n && ((unsigned char)s[i + 1] & 0xc0) == 0x80)
            p[o++] = (unsigned char)(((c & 0x03) << 6) | ((unsigned char)s[++i] & 0x3f));
        else return bad_value(x, s, n, "binary text beyond ISO-8859-1", err);
    }
    out->is_null = 0;
    out->v.bytes.ptr = (const char *)p;
    out->v.bytes.len = o;
    return W2L_OK;
}

/* Plain decimal text ("-12.375", "513.3961163221494", "694.17757432106112"): at most 19
 * digits m with k fraction digits, correctly rounded as strtod does, or -1 for any other
 * text (strtod decides). m and 10^k are exact doubles when m < 2^53 and k <= 22, and one
 * IEEE division is correctly rounded. Beyond, with a long double of at least 64 bits: m
 * (below 2^64) and 10^k (k <= 27: 5^27 < 2^64) are exact there, the quotient is correctly
 * rounded to 64 bits, and rounding that to a double gives the double nearest the exact
 * value unless the quotient lies exactly halfway between two doubles (then the exact
 * value may lie off the halfway point, on either side): that case goes to strtod. */
static int double_fast(const char *s, size_t n, double *out)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0, nd = 0, k = 0;
    int neg = 0;
    uint64_t m = 0;
    uint32_t v8;
    unsigned dg;
    if (i < n && s[i] == '-') neg = 1, i++;
    for (int part = 0; part < 2; part++) { /* the digits before the point, then after it */
        size_t b = i;
        for (; i + 8 <= n && w2l__eight_digits(s + i, &v8); i += 8) m = m * 100000000 + v8;
        for (; i < n && (dg = (unsigned)((unsigned char)s[i] - '0')) <= 9; i++) m = m * 10 + dg;
        nd += i - b;
        if (part) {
            if (!(k = i - b)) return -1; /* "5." */
        } else if (i < n && s[i] == '.') {
            i++;
        } else {
            break;
        }
    }
    if (i != n || !nd || nd > 19) return -1; /* more than 19 digits: m wrapped, unused */
    double v;
    if (m < (uint64_t)1 << 53 && k <= 22) {
        v = (double)m / p10[k];
    } else {
#if LDBL_MANT_DIG >= 64
        /* literals, exact in 64 bits, not products: a host that sets the x87 to double
         * precision would round those (one rounded division is still right then) */
        static const long double p10l[] = {
            1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
            1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
            1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
        if (k > 27) return -1;
        long double q = (long double)m / p10l[k];
        v = (double)q;
        long double below = (long double)v - q;
        if (below != 0) { /* v's neighbour on q's side (v >= 0, finite: one step of its bits) */
            uint64_t bits;
            double other;
            memcpy(&bits, &v, 8);
            bits = below > 0 ? bits - 1 : bits + 1;
            memcpy(&other, &bits, 8);
            if ((long double)other - q == -below) return -1; /* halfway */
        }
#else
        return -1;
#endif
    }
    *out = neg ? -v : v;
    return 0;
}

/* A float or double from number text, correctly rounded by strtof/strtod. */
static w2l_rc float_text(const vctx *x, w2l_type t, const char *s, size_t n, w2l_value *out,
                         w2l_error *err)
{
    char buf[64];
    const char *z = s;
    if (t.id == W2L_TYPE_DOUBLE && double_fast(s, n, &out->v.f64) == 0) {
        out->is_null = 0;
        return W2L_OK;
    }
    if (n == 0 || isspace((unsigned char)s[0]) || memchr(s, 'x', n) || memchr(s, 'X', n))
        return bad_value(x, s, n, "not a number", err);
    if (s[n] != '\0') { /* not NUL-terminated there: copy (numbers longer than this are
                           always NUL-terminated JSON text) */
        if (n >= sizeof buf) return bad_value(x, s, n, "not a number", err);
        memcpy(buf, s, n);
        buf[n] = '\0';
        z = buf;
    }
    char *end;
    double dv = strtod(z, &end);
    if (*end) return bad_value(x, s, n, "not a number", err);
    int inf_text = isinf(dv) && (strchr(z, 'n') || strchr(z, 'N')); /* "inf", "Infinity" */
    if (t.id == W2L_TYPE_FLOAT) {
        float f = strtof(z, NULL);
        if (isinf(f) && !inf_text) return bad_value(x, s, n, "out of range for float", err);
        out->v.f32 = f;
    } else {
        if (isinf(dv) && !inf_text) return bad_value(x, s, n, "out of range for double", err);
        out->v.f64 = dv;
    }
    out->is_null = 0;
    return W2L_OK;
}

/* Exact plain decimal text for a string column (DECIMAL(p > 38), Decimal with a precision
 * beyond Iceberg's): scale from the column (-1: as the text implies). */
static w2l_rc decimal_string(const vctx *x, const char *s, size_t n, int scale, w2l_value *out,
                             w2l_error *err)
{
    char buf[W2L_DECIMAL_TEXT_MAX + 8];
    size_t len;
    w2l_rc rc = w2l__decimal_text_plain(s, n, 0, scale, buf, sizeof buf, &len, err);
    if (rc != W2L_OK) return bad_value_err(x, s, n, err);
    return keep_bytes(x, buf, len, out, err);
}

/* Exact text of n big-endian two's-complement bytes with scale fraction digits. */
static w2l_rc decimal_string_be(const vctx *x, const char *orig, size_t olen,
                                const unsigned char *p, size_t n, int scale, w2l_value *out,
                                w2l_error *err)
{
    char buf[W2L_DECIMAL_BE_MAX * 3 + W2L_DECIMAL_TEXT_MAX + 8];
    int len = w2l__decimal_text_from_be(p, n, scale, buf, sizeof buf);
    if (len < 0)
        return bad_value(
            x, orig, olen,
            n ? "decimal wider than 1024 bits or scale out of range" : "empty decimal bytes", err);
    return keep_bytes(x, buf, (size_t)len, out, err);
}

static int col_scale(const vctx *x) { return x->aux ? x->aux->scale : -1; }

/* Text of a scalar of type t: canal values, maxwell dates/times and strings, and the
 * text of JSON numbers. latin1: canal binary text. */
static w2l_rc value_from_text(const vctx *x, w2l_type t, const char *s, size_t n, int latin1,
                              int required, w2l_value *out, w2l_error *err)
{
    int64_t v;
    out->is_null = 0;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        if ((n == 1 && s[0] == '1') || (n == 4 && !memcmp(s, "true", 4))) out->v.i32 = 1;
        else if ((n == 1 && s[0] == '0') || (n == 5 && !memcmp(s, "false", 5))) out->v.i32 = 0;
        else if (text_int64(s, n, INT64_MIN, INT64_MAX, &v) == 0) {
            /* TINYINT(1) as boolean holding another value: MySQL's truth, nonzero is true */
            if (v != 1) w2l__cdc_warn_once(x->d, x->t, x->col, "value %lld in a boolean column "
                                      "(TINYINT(1) as boolean) becomes true", (long long)v);
            out->v.i32 = v != 0;
        } else {
            return bad_value(x, s, n, "not a boolean (0 or 1)", err);
        }
        return W2L_OK;
    case W2L_TYPE_INT: /* plain digits first, then any exact integer text ("1e3") */
        if ((parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX) &&
            text_int64(s, n, INT32_MIN, INT32_MAX, &v))
            return bad_value(x, s, n, "not an int (32-bit)", err);
        out->v.i32 = (int32_t)v;
        return W2L_OK;
    case W2L_TYPE_LONG:
        if (parse_i64(s, n, &v) && text_int64(s, n, INT64_MIN, INT64_MAX, &v))
            return bad_value(x, s, n, "not a long (64-bit)", err);
        out->v.i64 = v;
        return W2L_OK;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE:
        return float_text(x, t, s, n, out, err);
    case W2L_TYPE_DECIMAL:
        if (w2l__decimal_parse(s, n, t.precision, t.scale, &out->v.dec, err) != W2L_OK)
            return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_DATE:
        if (is_zero_date(s, n) && !required) break;
        if (w2l__date_parse(s, n, &out->v.i32, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_TIME:
        return time_text(x, s, n, &out->v.i64, err);
    case W2L_TYPE_TIMESTAMP:
        if (is_zero_date(s, n) && !required) break;
        if (w2l__timestamp_parse(s, n, 0, &out->v.i64, err) != W2L_OK)
            return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_TIMESTAMPTZ: {
        if (is_zero_date(s, n) && !required) break;
        /* a zone in the text wins; else the text is in source.timezone */
        int zoned = n > 10 && (s[n - 1] == 'Z' || s[n - 1] == 'z' || memchr(s + 10, '+', n - 10) ||
                               memchr(s + 10, '-', n - 10));
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK)
            return bad_value_err(x, s, n, err);
        if (!zoned) out->v.i64 -= (int64_t)x->d->opts.tz_offset_s * 1000000;
        return W2L_OK;
    }
    case W2L_TYPE_STRING:
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return W2L_OK;
    case W2L_TYPE_BINARY:
        if (latin1) return latin1_bytes(x, s, n, out, err);
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return W2L_OK;
    }
    out->is_null = 1; /* all-zero date in a nullable column */
    return W2L_OK;
}

/* The JSON text of any value, into the chunks. */
static w2l_rc json_text(const vctx *x, const w2l__json *j, w2l_value *out, w2l_error *err)
{
    char *s = w2l__json_print(j, 0);
    W2L_NOMEM_IF(!s, err);
    w2l_rc rc = keep_bytes(x, s, strlen(s), out, err);
    w2l__free(s);
    return rc;
}

static w2l_rc b64_value(const vctx *x, const char *s, size_t n, const unsigned char **p,
                        size_t *len, w2l_error *err)
{
    unsigned char *o = w2l__cdc_alloc(&x->d->mem, n / 4 * 3 + 4);
    W2L_NOMEM_IF(!o, err);
    if (w2l__cdc_b64_decode(s, n, o, len)) return bad_value(x, s, n, "not base64", err);
    *p = o;
    return W2L_OK;
}

/* Time of day in micros from a debezium duration; time-as-string columns get its text. */
static w2l_rc dbz_time(const vctx *x, w2l_type t, int64_t us, const char *orig, size_t olen,
                       w2l_value *out, w2l_error *err)
{
    if (t.id == W2L_TYPE_STRING) {
        char *p = w2l__cdc_alloc(&x->d->mem, 40);
        W2L_NOMEM_IF(!p, err);
        uint64_t a = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
        uint64_t sec = a / 1000000, frac = a % 1000000;
        int n = snprintf(p, 40, "%s%02llu:%02u:%02u", us < 0 ? "-" : "",
                         (unsigned long long)(sec / 3600), (unsigned)(sec / 60 % 60),
                         (unsigned)(sec % 60));
        if (frac) n += snprintf(p + n, 40 - (size_t)n, ".%06u", (unsigned)frac);
        out->v.bytes.ptr = p;
        out->v.bytes.len = (size_t)n;
        return W2L_OK;
    }
    if (us < 0 || us >= W2L_MICROS_PER_DAY)
        return bad_value(x, orig, olen,
                         "TIME outside 00:00:00..23:59:59.999999 (" W2L__TIME_HINT ")", err);
    out->v.i64 = us;
    return W2L_OK;
}

/* Unscaled big-endian two's-complement bytes into a decimal column, or, for a string
 * column, its exact text with the column's scale. */
static w2l_rc decimal_be(const vctx *x, w2l_type t, const char *orig, size_t olen,
                         const unsigned char *p, size_t len, w2l_value *out, w2l_error *err)
{
    if (t.id == W2L_TYPE_STRING)
        return decimal_string_be(x, orig, olen, p, len, col_scale(x) < 0 ? 0 : col_scale(x), out,
                                 err);
    if (t.id != W2L_TYPE_DECIMAL)
        return bad_value(x, orig, olen, "a decimal in a column that is not one", err);
    while (len > 16 && (p[0] == 0 || p[0] == 0xff) && ((p[1] ^ p[0]) & 0x80) == 0) p++, len--;
    w2l_int128 v = {0, 0};
    if (len == 0) return bad_value(x, orig, olen, "empty decimal bytes", err);
    if (len > 16 || w2l__decimal_from_be(p, len, &v) || !w2l__decimal_fits(v, t.precision)) {
        char txt[W2L_DECIMAL_BE_MAX * 3 + 8], why[W2L_DECIMAL_BE_MAX * 3 + 64];
        if (w2l__decimal_text_from_be(p, len, t.scale, txt, sizeof txt) < 0)
            snprintf(txt, sizeof txt, "(%zu bytes)", len);
        snprintf(why, sizeof why, "%.200s does not fit decimal(%u,%u)", txt, t.precision, t.scale);
        return bad_value(x, orig, olen, why, err);
    }
    out->v.dec = v;
    return W2L_OK;
}

/* Is s decimal text at all: [+-]digits[.digits][e[+-]digits]? */
static int looks_decimal_text_any(const char *s, size_t n)
{
    size_t i = n && (s[0] == '-' || s[0] == '+') ? 1 : 0, d = 0, dots = 0;
    for (; i < n && (isdigit((unsigned char)s[i]) || s[i] == '.'); i++)
        d += s[i] != '.', dots += s[i] == '.';
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        if (i == n) return 0;
        while (i < n && isdigit((unsigned char)s[i])) i++;
    }
    return d && dots <= 1 && i == n;
}

/* Is s a decimal written as text rather than base64 ("-12.50", "12", "1E+3")? Base64 has
 * no '.' and no leading '-', and comes in groups of 4. */
static int looks_decimal_text(const char *s, size_t n)
{
    if (!n) return 0;
    size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0, d = 0, dots = 0;
    for (; i < n; i++) {
        if (isdigit((unsigned char)s[i])) d++;
        else if (s[i] == '.') dots++;
        else if ((s[i] == 'e' || s[i] == 'E') && d) break;
        else return 0;
    }
    return d && dots <= 1 && (dots || s[0] == '-' || n % 4) && looks_decimal_text_any(s, n);
}

/* Debezium Decimal / DECIMAL column: base64 unscaled bytes, a JSON number (NUMERIC), or
 * text (decimal.handling.mode=string). A string is text when it cannot be the converter's
 * base64 (a '.', a leading '-', a length that is not a multiple of 4); digits alone in
 * groups of 4 are base64, the connector's default, with one warning per column unless
 * the schema said bytes (strict_b64). */
static w2l_rc dbz_decimal(const vctx *x, w2l_type t, const w2l__json *j, int strict_b64,
                          w2l_value *out, w2l_error *err)
{
    char nb[32];
    const char *s = w2l__json_str(j);
    if (!s) {
        s = w2l__json_number_str(j, nb, sizeof nb);
        if (!s)
            return bad_value(x, "(non-number)", 12, "not a decimal (base64, number or text)", err);
    } else {
        size_t n = strlen(s), len;
        int text = looks_decimal_text(s, n);
        unsigned char *p = w2l__cdc_alloc(&x->d->mem, n / 4 * 3 + 4);
        W2L_NOMEM_IF(!p, err);
        if (!text && w2l__cdc_b64_decode(s, n, p, &len) == 0) {
            if (!strict_b64 && strspn(s, "0123456789") == n)
                w2l__cdc_warn_once(
                    x->d, x->t, x->col,
                    "the string \"%.40s\" is read as base64 (Debezium's "
                    "decimal.handling.mode=precise); a connector with decimal.handling.mode=string "
                    "needs the JSON converter's schemas here",
                    s);
            return decimal_be(x, t, s, n, p, len, out, err);
        }
        if (!text) return bad_value(x, s, n, "not base64 and not a decimal", err);
    }
    if (t.id == W2L_TYPE_STRING) return decimal_string(x, s, strlen(s), col_scale(x), out, err);
    return value_from_text(x, t, s, strlen(s), 0, 0, out, err);
}

/* io.debezium.data.VariableScaleDecimal: {"scale": n, "value": base64 unscaled}. */
static w2l_rc dbz_vsdec(const vctx *x, const w2l__json *j, w2l_value *out, w2l_error *err)
{
    int64_t scale;
    const char *v = w2l__json_str(w2l__json_get(j, "value"));
    if (!v || w2l__json_int64(w2l__json_get(j, "scale"), &scale) || scale < -W2L_DECIMAL_TEXT_MAX ||
        scale > W2L_DECIMAL_TEXT_MAX) {
        const char *s = w2l__json_str(j); /* decimal.handling.mode=string */
        if (s) return decimal_string(x, s, strlen(s), -1, out, err);
        return bad_value(x, "{...}", 5, "not a VariableScaleDecimal {scale, value}", err);
    }
    const unsigned char *p;
    size_t len;
    W2L_TRY(b64_value(x, v, strlen(v), &p, &len, err));
    return decimal_string_be(x, v, strlen(v), p, len, (int)scale, out, err);
}

static uint32_t get_u32(const unsigned char *p, int le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

/* WKB as the column keeps it: PostGIS-style EWKB (type flag 0x20000000 and a 4-byte SRID
 * after the type) loses its SRID, as MySQL's WKB has none. */
static w2l_rc wkb_value(const vctx *x, const unsigned char *p, size_t n, const char *orig,
                        size_t olen, w2l_value *out, w2l_error *err)
{
    if (n < 5 || p[0] > 1) return bad_value(x, orig, olen, "not WKB (byte order, type)", err);
    uint32_t type = get_u32(p + 1, p[0]);
    if ((type & 0x20000000u) && n >= 9) {
        unsigned char *q = w2l__cdc_alloc(&x->d->mem, n - 4);
        W2L_NOMEM_IF(!q, err);
        type &= ~0x20000000u;
        q[0] = p[0];
        for (int i = 0; i < 4; i++)
            q[1 + i] = (unsigned char)(p[0] ? type >> (8 * i) : type >> (24 - 8 * i));
        memcpy(q + 5, p + 9, n - 9);
        p = q;
        n -= 4;
    }
    out->is_null = 0;
    out->v.bytes.ptr = (const char *)p;
    out->v.bytes.len = n;
    return W2L_OK;
}

static void put_f64le(unsigned char *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(u >> (8 * i));
}

/* GEOMETRY: canal's SRID + WKB text, debezium's {wkb, srid} and {x, y, wkb}, or base64. */
static w2l_rc geom_value(const vctx *x, const w2l__json *j, w2l_value *out, w2l_error *err)
{
    size_t n = 0;
    const char *s = w2l__json_strn(j, &n);
    const unsigned char *p = NULL;
    size_t len = 0;
    if (x->d->fmt == W2L__CDC_CANAL) {
        W2L_TRY(latin1_bytes(x, s, n, out, err));
        if (out->v.bytes.len < 4 + 5)
            return bad_value(x, s, n, "GEOMETRY shorter than SRID + WKB", err);
        p = (const unsigned char *)out->v.bytes.ptr + 4;
        return wkb_value(x, p, out->v.bytes.len - 4, s, n, out, err);
    }
    if (w2l__json_type(j) == W2L_JSON_OBJECT) {
        const char *wkb = w2l__json_str(w2l__json_get(j, "wkb"));
        if (wkb) {
            W2L_TRY(b64_value(x, wkb, strlen(wkb), &p, &len, err));
            return wkb_value(x, p, len, wkb, strlen(wkb), out, err);
        }
        double px, py;
        if (w2l__json_double(w2l__json_get(j, "x"), &px) == 0 &&
            w2l__json_double(w2l__json_get(j, "y"), &py) == 0) {
            unsigned char *q = w2l__cdc_alloc(&x->d->mem, 21); /* WKB Point, little-endian */
            W2L_NOMEM_IF(!q, err);
            q[0] = 1;
            q[1] = 1, q[2] = q[3] = q[4] = 0;
            put_f64le(q + 5, px);
            put_f64le(q + 13, py);
            return keep_bytes(x, q, 21, out, err);
        }
        return bad_value(x, "{...}", 5, "geometry struct without wkb (or x and y)", err);
    }
    if (s && x->d->fmt == W2L__CDC_MAXWELL)
        return w2l__cdc_maxwell_wkt(x, s, n, out, err); /* WKT */
    if (s) {
        W2L_TRY(b64_value(x, s, strlen(s), &p, &len, err));
        return wkb_value(x, p, len, s, strlen(s), out, err);
    }
    return bad_value(x, "(non-string)", 12, "not a geometry", err);
}

/* Canal ENUM index / SET bitmask (see the file header); 0 when s is the text itself. */
static int member_of(const colaux *a, const char *s)
{
    for (size_t i = 0; i < a->nmembers; i++)
        if (!strcmp(a->members[i], s)) return 1;
    return 0;
}

static w2l_rc canal_enum_set(const vctx *x, int set, const char *s, w2l_value *out, w2l_error *err,
                             int *done)
{
    const colaux *a = x->aux;
    size_t n = strlen(s);
    uint64_t v = 0;
    *done = 0;
    if (!a || !a->nmembers || !n || n > 20 || strspn(s, "0123456789") != n || member_of(a, s))
        return W2L_OK;
    for (size_t i = 0; i < n; i++) {
        if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) return W2L_OK;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (!set) {
        if (v > a->nmembers) return W2L_OK;
        *done = 1;
        if (v == 0) return keep_bytes(x, "", 0, out, err);
        return keep_bytes(x, a->members[v - 1], strlen(a->members[v - 1]), out, err);
    }
    if (a->nmembers < 64 && v >> a->nmembers) return W2L_OK;
    size_t total = 0;
    for (size_t i = 0; i < a->nmembers && i < 64; i++)
        if (v >> i & 1) total += strlen(a->members[i]) + 1;
    char *p = w2l__cdc_alloc(&x->d->mem, total ? total : 1);
    W2L_NOMEM_IF(!p, err);
    size_t o = 0;
    for (size_t i = 0; i < a->nmembers && i < 64; i++) {
        if (!(v >> i & 1)) continue;
        if (o) p[o++] = ',';
        size_t m = strlen(a->members[i]);
        memcpy(p + o, a->members[i], m);
        o += m;
    }
    *done = 1;
    out->is_null = 0;
    out->v.bytes.ptr = p;
    out->v.bytes.len = o;
    return W2L_OK;
}

/* A BIT(n > 1) value's 64-bit pattern, as two's complement. */
static w2l_rc bits_u64(const vctx *x, const char *txt, w2l_value *out, w2l_error *err)
{
    uint64_t u;
    if (text_bits64(txt, strlen(txt), &u))
        return bad_value(x, txt, strlen(txt), "not a BIT value (0 to 18446744073709551615)", err);
    out->v.i64 = (int64_t)u;
    return W2L_OK;
}

int w2l__cdc_str_cv(unsigned cv)
{
    return cv == CV_PLAIN || cv == CV_ENUM || cv == CV_SET || cv == CV_JSON ||
           cv == CV_DECIMAL_TEXT || cv == CV_BITS_U64;
}

w2l_rc w2l__cdc_str_value(const vctx *x, w2l_type t, unsigned cv, int required, const char *s,
                          size_t n, w2l_value *out, w2l_error *err)
{
    int canal = x->d->fmt == W2L__CDC_CANAL;
    out->is_null = 0;
    switch (cv) {
    case CV_JSON:
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return W2L_OK;
    case CV_SET:
    case CV_ENUM:
        if (canal && t.id == W2L_TYPE_STRING) {
            int done;
            W2L_TRY(canal_enum_set(x, cv == CV_SET, s, out, err, &done));
            if (done) return W2L_OK;
        }
        break;
    case CV_DECIMAL_TEXT:
        if (t.id != W2L_TYPE_STRING) break;
        return decimal_string(x, s, strlen(s), col_scale(x), out, err);
    case CV_BITS_U64:
        if (t.id != W2L_TYPE_LONG) break;
        return bits_u64(x, s, out, err);
    default:
        break;
    }
    if (t.id == W2L_TYPE_BINARY && !canal) { /* maxwell and debezium: base64 */
        const unsigned char *p = NULL;
        size_t len = 0;
        W2L_TRY(b64_value(x, s, n, &p, &len, err));
        out->v.bytes.ptr = (const char *)p;
        out->v.bytes.len = len;
        return W2L_OK;
    }
    return value_from_text(x, t, s, n, canal, required, out, err);
}

/* Whether a byte of x is c (a zero byte of x ^ c...c; exact for "any"). */
static int has_byte(uint64_t x, unsigned char c)
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    uint64_t y = x ^ (ones * c);
    return ((y - ones) & ~y & UINT64_C(0x8080808080808080)) != 0;
}

/* A timestamptz without a zone, in source.timezone. The '+' and '-' a zone would start
 * with are looked for in two words that cover s[10..n) (19 <= n <= 26). Its own function:
 * tz_offset_s and out live across the parse, which would make every column of
 * w2l__cdc_text_quick save registers. */
__attribute__((noinline)) static int quick_tstz(int32_t tz_offset_s, const char *s, size_t n,
                                                w2l_value *out, w2l_error *scratch)
{
    uint64_t a, b;
    if (n < 19 || n > 26 || s[n - 1] < '0' || s[n - 1] > '9') return -1;
    a = w2l__load_le64(s + 10), b = w2l__load_le64(s + n - 8);
    if (has_byte(a, '+') || has_byte(a, '-') || has_byte(b, '+') || has_byte(b, '-') ||
        w2l__timestamp_parse(s, n, 1, &out->v.i64, scratch) != W2L_OK)
        return -1;
    out->v.i64 -= (int64_t)tz_offset_s * 1000000;
    return 0;
}

/* As value_from_text for the text it takes: a value_from_text case that succeeded, minus
 * the checks whose failure it leaves to it (zero dates, boolean words, exponents). Every
 * case returns straight from its conversion, with nothing to keep across a call, so that
 * the common columns (strings, integers) cost no register saves. */
int w2l__cdc_text_quick(w2l_type t, unsigned cv, int32_t tz_offset_s, const char *s, size_t n,
                        w2l_value *out, w2l_error *scratch)
{
    int64_t v;
    if (cv != CV_PLAIN) return -1;
    out->is_null = 0; /* also when -1: w2l__cdc_str_value sets it again */
    switch (t.id) {
    case W2L_TYPE_STRING:
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return 0;
    case W2L_TYPE_LONG:
        if (parse_i64(s, n, &v)) return -1;
        out->v.i64 = v;
        return 0;
    case W2L_TYPE_INT:
        if (parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX) return -1;
        out->v.i32 = (int32_t)v;
        return 0;
    case W2L_TYPE_BOOLEAN:
        if (n != 1 || (s[0] != '0' && s[0] != '1')) return -1;
        out->v.i32 = s[0] == '1';
        return 0;
    case W2L_TYPE_DOUBLE:
        return double_fast(s, n, &out->v.f64);
    case W2L_TYPE_DECIMAL:
        return w2l__decimal_parse(s, n, t.precision, t.scale, &out->v.dec, scratch) != W2L_OK
                   ? -1
                   : 0;
    case W2L_TYPE_DATE: /* a zero date ("0000-00-00") never parses */
        return w2l__date_parse(s, n, &out->v.i32, scratch) != W2L_OK ? -1 : 0;
    case W2L_TYPE_TIMESTAMP:
        return w2l__timestamp_parse(s, n, 0, &out->v.i64, scratch) != W2L_OK ? -1 : 0;
    case W2L_TYPE_TIMESTAMPTZ:
        return quick_tstz(tz_offset_s, s, n, out, scratch);
    default:
        return -1;
    }
}

/* A JSON value (not null) of column type t with encoding cv. canal: latin1 binary. */
w2l_rc w2l__cdc_value(const vctx *x, w2l_type t, unsigned cv, int required,
                              const w2l__json *j, w2l_value *out, w2l_error *err)
{
    w2l__json_kind k = w2l__json_type(j);
    char nb[64];
    size_t n = 0;
    const char *s = w2l__json_strn(j, &n); /* NUL bytes included (canal binary text) */
    int64_t iv;
    int canal = x->d->fmt == W2L__CDC_CANAL;
    out->is_null = 0;
    if (k == W2L_JSON_STRING && w2l__cdc_str_cv(cv))
        return w2l__cdc_str_value(x, t, cv, required, s, n, out, err);
    if (cv == CV_JSON) {
        if (k == W2L_JSON_STRING) {
            out->v.bytes.ptr = s;
            out->v.bytes.len = n;
            return W2L_OK;
        }
        return json_text(x, j, out, err);
    }
    if (cv == CV_SET && k == W2L_JSON_ARRAY) {
        size_t total = 0;
        for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e)) {
            const char *es = w2l__json_str(e);
            if (!es) return bad_value(x, "[...]", 5, "SET element is not a string", err);
            total += strlen(es) + 1;
        }
        char *p = w2l__cdc_alloc(&x->d->mem, total ? total : 1);
        W2L_NOMEM_IF(!p, err);
        size_t o = 0;
        for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e)) {
            const char *es = w2l__json_str(e);
            if (o) p[o++] = ',';
            memcpy(p + o, es, strlen(es));
            o += strlen(es);
        }
        out->v.bytes.ptr = p;
        out->v.bytes.len = o;
        return W2L_OK;
    }
    if (canal && k != W2L_JSON_STRING)
        return bad_value(x, "(non-string)", 12, "canal values are strings or null", err);
    switch (cv) {
    case CV_DAYS:
        if (w2l__json_int64(j, &iv) || iv < INT32_MIN || iv > INT32_MAX) break;
        out->v.i32 = (int32_t)iv;
        return W2L_OK;
    case CV_TIME_MS:
    case CV_TIME_US:
    case CV_TIME_NS: {
        if (w2l__json_int64(j, &iv)) break;
        if (cv == CV_TIME_MS && (iv > INT64_MAX / 1000 || iv < INT64_MIN / 1000)) break;
        int64_t us = cv == CV_TIME_MS   ? iv * 1000
                     : cv == CV_TIME_NS ? w2l__floor_div(iv, 1000)
                                        : iv;
        const char *txt = w2l__json_number_str(j, nb, sizeof nb);
        return dbz_time(x, t, us, txt, strlen(txt), out, err);
    }
    case CV_TS_MS:
    case CV_TS_US:
    case CV_TS_NS:
        if (w2l__json_int64(j, &iv)) break;
        if (cv == CV_TS_MS) {
            if (iv > INT64_MAX / 1000 || iv < INT64_MIN / 1000) break;
            iv *= 1000;
        } else if (cv == CV_TS_NS) {
            iv = w2l__floor_div(iv, 1000);
        }
        out->v.i64 = iv;
        return W2L_OK;
    case CV_ZONED:
        if (!s) break;
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK)
            return bad_value_err(x, s, n, err);
        return W2L_OK;
    case CV_DECIMAL_B64:
    case CV_DECIMAL_ANY:
        if (k != W2L_JSON_STRING && k != W2L_JSON_NUMBER) break;
        return dbz_decimal(x, t, j, cv == CV_DECIMAL_B64, out, err);
    case CV_UBIGINT:
        if (k == W2L_JSON_STRING) return dbz_decimal(x, t, j, 1, out, err);
        if (k == W2L_JSON_NUMBER && t.id == W2L_TYPE_DECIMAL && w2l__json_int64(j, &iv) == 0 &&
            iv < 0) {
            /* bigint.unsigned.handling.mode=long: values >= 2^63 arrive as negative longs */
            out->v.dec.hi = 0;
            out->v.dec.lo = (uint64_t)iv;
            return W2L_OK;
        }
        break;
    case CV_DECIMAL_TEXT: { /* a number (strings: w2l__cdc_str_value) */
        const char *txt = w2l__json_number_str(j, nb, sizeof nb);
        if (!txt || t.id != W2L_TYPE_STRING) break;
        return decimal_string(x, txt, strlen(txt), col_scale(x), out, err);
    }
    case CV_VSDEC:
        if (t.id != W2L_TYPE_STRING) break;
        return dbz_vsdec(x, j, out, err);
    case CV_GEOM:
        if (t.id != W2L_TYPE_BINARY) break;
        return geom_value(x, j, out, err);
    case CV_BITS_U64: { /* a number */
        const char *txt = w2l__json_number_str(j, nb, sizeof nb);
        if (!txt || t.id != W2L_TYPE_LONG) break;
        return bits_u64(x, txt, out, err);
    }
    case CV_BITS_B64:
        if (s) {
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            uint64_t v = 0;
            for (size_t i = 0; i < len; i++) {
                if (i >= 8 && p[i]) return bad_value(x, s, n, "BIT wider than 64 bits", err);
                if (i < 8) v |= (uint64_t)p[i] << (8 * i);
            }
            if (t.id == W2L_TYPE_BOOLEAN) out->v.i32 = v != 0;
            else if (t.id == W2L_TYPE_LONG) out->v.i64 = (int64_t)v;
            else break;
            return W2L_OK;
        }
        break;
    default:
        break;
    }
    /* plain: by the Iceberg type and the JSON kind */
    if (k == W2L_JSON_NUMBER) {
        const char *txt = w2l__json_number_str(j, nb, sizeof nb);
        if (t.id == W2L_TYPE_STRING) return keep_bytes(x, txt, strlen(txt), out, err);
        if (t.id == W2L_TYPE_BOOLEAN || t.id == W2L_TYPE_INT || t.id == W2L_TYPE_LONG ||
            t.id == W2L_TYPE_FLOAT || t.id == W2L_TYPE_DOUBLE || t.id == W2L_TYPE_DECIMAL)
            return value_from_text(x, t, txt, strlen(txt), 0, required, out, err);
        char why[64];
        snprintf(why, sizeof why, "not a %s", w2l__type_name(t.id));
        return bad_value(x, txt, strlen(txt), why, err);
    }
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: {
        int b;
        if (w2l__json_bool(j, &b) == 0) {
            out->v.i32 = b;
            return W2L_OK;
        }
        break;
    }
    case W2L_TYPE_STRING:
        if (k == W2L_JSON_BOOL || k == W2L_JSON_OBJECT || k == W2L_JSON_ARRAY)
            return json_text(x, j, out, err);
        break;
    default:
        break;
    }
    if (s) return w2l__cdc_str_value(x, t, CV_PLAIN, required, s, n, out, err);
    snprintf(nb, sizeof nb, "(%s)", w2l__json_kind_name(k));
    char why[64];
    snprintf(why, sizeof why, "not a %s", w2l__type_name(t.id));
    return bad_value(x, nb, strlen(nb), why, err);
}
