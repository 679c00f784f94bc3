/*
 * CDC JSON types and values (cdc_int.h): MySQL type text to Iceberg types, and JSON
 * values of each format to w2l values.
 */
#include <ctype.h>
#include <math.h>
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

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Decodes base64 (standard or URL alphabet, padding optional) into out (at least
 * n * 3 / 4 + 3 bytes); -1 when malformed. */
static int b64_decode(const char *s, size_t n, unsigned char *out, size_t *outlen)
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
 * the parsed type (class, fsp, bits) for the value encodings. */
w2l_rc w2l__cdc_mysql_type(w2l__cdc *d, const char *db, const char *tn, const char *col, const char *text,
                         w2l_type *out, w2l__mysql_type *info, w2l_error *err)
{
    w2l__type_opts o = {0};
    o.tinyint1_as_boolean = d->opts.tinyint1_as_boolean;
    o.time_as_string = d->opts.time_as_string;
    w2l_rc rc = w2l__mysql_type_map_text(text, strlen(text), &o, col, NULL, out, info, err);
    if (rc == W2L_OK || rc == W2L_NOMEM) return rc;
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why);
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: unknown type \"%s\" (%s)", d->what,
                     db, tn, col, text, why);
}

/* cv of a MySQL column in canal or maxwell (JSON native) messages. */
unsigned w2l__cdc_mysql_cv(const w2l__mysql_type *info, w2l_type t)
{
    if (t.id == W2L_TYPE_STRING && info->cls == W2L_MYSQL_SET) return CV_SET;
    if (t.id == W2L_TYPE_STRING && info->cls == W2L_MYSQL_JSON) return CV_JSON;
    return CV_PLAIN;
}

/* cv of a MySQL column in debezium messages without the schema part (its default
 * converters: time.precision.mode=adaptive_time_microseconds, decimal.handling.mode=
 * precise, bigint.unsigned.handling.mode=precise when mapped to decimal). */
unsigned w2l__cdc_mysql_dbz_cv(const w2l__mysql_type *info, w2l_type t)
{
    switch (info->cls) {
    case W2L_MYSQL_DATE: return CV_DAYS;
    case W2L_MYSQL_TIME: return CV_TIME_US;
    case W2L_MYSQL_DATETIME: return info->fsp > 3 ? CV_TS_US : CV_TS_MS;
    case W2L_MYSQL_TIMESTAMP: return CV_ZONED;
    case W2L_MYSQL_BIT: return CV_BITS_B64;
    case W2L_MYSQL_JSON: return CV_JSON;
    default: break;
    }
    if (t.id == W2L_TYPE_DECIMAL) return CV_DECIMAL_B64;
    return CV_PLAIN;
}


/* ---- values ---- */

static w2l_rc bad_value(const vctx *x, const char *text, size_t len, const char *why, w2l_error *err)
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
        return bad_value(x, s, n, "TIME outside 00:00:00..23:59:59.999999 (set source.time-as-string)", err);
    if (w2l__time_parse(s, n, us, err) != W2L_OK) return bad_value_err(x, s, n, err);
    return W2L_OK;
}

/* Text of a scalar of type t: canal values, maxwell dates/times and strings. */
static w2l_rc value_from_text(const vctx *x, w2l_type t, const char *s, size_t n, int latin1,
                              int required, w2l_value *out, w2l_error *err)
{
    int64_t v;
    char buf[64];
    out->is_null = 0;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        if ((n == 1 && s[0] == '1') || (n == 4 && !memcmp(s, "true", 4))) out->v.i32 = 1;
        else if ((n == 1 && s[0] == '0') || (n == 5 && !memcmp(s, "false", 5))) out->v.i32 = 0;
        else return bad_value(x, s, n, "not a boolean (0 or 1)", err);
        return W2L_OK;
    case W2L_TYPE_INT:
        if (parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
            return bad_value(x, s, n, "not an int (32-bit)", err);
        out->v.i32 = (int32_t)v;
        return W2L_OK;
    case W2L_TYPE_LONG:
        if (parse_i64(s, n, &v)) return bad_value(x, s, n, "not a long (64-bit)", err);
        out->v.i64 = v;
        return W2L_OK;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE: {
        if (n == 0 || n >= sizeof buf) return bad_value(x, s, n, "not a number", err);
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end;
        double dv = strtod(buf, &end);
        if (*end || isspace((unsigned char)buf[0])) return bad_value(x, s, n, "not a number", err);
        if (t.id == W2L_TYPE_FLOAT) {
            float f = strtof(buf, NULL);
            if (isinf(f) && !isinf(dv)) return bad_value(x, s, n, "out of range for float", err);
            out->v.f32 = f;
        } else {
            out->v.f64 = dv;
        }
        return W2L_OK;
    }
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
        if (w2l__timestamp_parse(s, n, 0, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_TIMESTAMPTZ: {
        if (is_zero_date(s, n) && !required) break;
        /* a zone in the text wins; else the text is in source.timezone */
        int zoned = n > 10 && (s[n - 1] == 'Z' || s[n - 1] == 'z' || memchr(s + 10, '+', n - 10) ||
                               memchr(s + 10, '-', n - 10));
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        if (!zoned) out->v.i64 -= (int64_t)x->d->opts.tz_offset_s * 1000000;
        return W2L_OK;
    }
    case W2L_TYPE_STRING:
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return W2L_OK;
    case W2L_TYPE_BINARY:
        if (!latin1) {
            out->v.bytes.ptr = s;
            out->v.bytes.len = n;
            return W2L_OK;
        } else {
            /* canal writes binary columns as ISO-8859-1 text: one char per byte */
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
            out->v.bytes.ptr = (const char *)p;
            out->v.bytes.len = o;
            return W2L_OK;
        }
    }
    out->is_null = 1; /* all-zero date in a nullable column */
    return W2L_OK;
}

/* A JSON number as exact decimal text: integers as written, other numbers through their
 * shortest round-trip form (exact for up to 15 significant digits). */
static int number_text(const w2l__json *j, char *buf, size_t size)
{
    int64_t iv;
    if (w2l__json_int64(j, &iv) == 0) return snprintf(buf, size, "%lld", (long long)iv) < (int)size ? 0 : -1;
    double dv;
    char tmp[64];
    if (w2l__json_number_text(j, tmp, sizeof tmp) == 0 && tmp[0] && strpbrk(tmp, ".eE") == NULL) {
        snprintf(buf, size, "%s", tmp); /* a big integer kept as digits */
        return 0;
    }
    if (w2l__json_double(j, &dv)) return -1;
    w2l__double_format(dv, buf, size);
    return 0;
}

/* The JSON text of any value, into the chunks. */
static w2l_rc json_text(const vctx *x, const w2l__json *j, w2l_value *out, w2l_error *err)
{
    char *s = w2l__json_print(j, 0);
    W2L_NOMEM_IF(!s, err);
    size_t n = strlen(s);
    char *p = w2l__cdc_alloc(&x->d->mem, n ? n : 1);
    if (!p) {
        w2l__free(s);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    memcpy(p, s, n);
    w2l__free(s);
    out->is_null = 0;
    out->v.bytes.ptr = p;
    out->v.bytes.len = n;
    return W2L_OK;
}

static w2l_rc b64_value(const vctx *x, const char *s, size_t n, const unsigned char **p,
                        size_t *len, w2l_error *err)
{
    unsigned char *o = w2l__cdc_alloc(&x->d->mem, n / 4 * 3 + 4);
    W2L_NOMEM_IF(!o, err);
    if (b64_decode(s, n, o, len)) return bad_value(x, s, n, "not base64", err);
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
        int n = snprintf(p, 40, "%s%02llu:%02u:%02u", us < 0 ? "-" : "", (unsigned long long)(sec / 3600),
                         (unsigned)(sec / 60 % 60), (unsigned)(sec % 60));
        if (frac) n += snprintf(p + n, 40 - (size_t)n, ".%06u", (unsigned)frac);
        out->v.bytes.ptr = p;
        out->v.bytes.len = (size_t)n;
        return W2L_OK;
    }
    if (us < 0 || us >= W2L_MICROS_PER_DAY)
        return bad_value(x, orig, olen, "TIME outside 00:00:00..23:59:59.999999 (set source.time-as-string)", err);
    out->v.i64 = us;
    return W2L_OK;
}

/* A JSON value (not null) of column type t with encoding cv. canal: latin1 binary. */
w2l_rc w2l__cdc_value(const vctx *x, w2l_type t, unsigned cv, int required,
                              const w2l__json *j, w2l_value *out, w2l_error *err)
{
    w2l__json_kind k = w2l__json_type(j);
    char nb[64];
    const char *s = w2l__json_str(j);
    size_t n = s ? strlen(s) : 0;
    int64_t iv;
    int canal = x->d->fmt == W2L__CDC_CANAL;
    out->is_null = 0;
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
        int64_t us = cv == CV_TIME_MS ? iv * 1000 : cv == CV_TIME_NS ? w2l__floor_div(iv, 1000) : iv;
        if (cv == CV_TIME_MS && (iv > INT64_MAX / 1000 || iv < INT64_MIN / 1000)) break;
        number_text(j, nb, sizeof nb);
        return dbz_time(x, t, us, nb, strlen(nb), out, err);
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
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case CV_DECIMAL_B64:
        if (k == W2L_JSON_NUMBER) break; /* decimal.handling.mode=double: by the number */
        if (s) {
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            while (len > 16 && (p[0] == 0 || p[0] == 0xff) && ((p[1] ^ p[0]) & 0x80) == 0) p++, len--;
            w2l_int128 v = {0, 0};
            if (len > 16 || (len && w2l__decimal_from_be(p, len, &v)))
                return bad_value(x, s, n, "decimal wider than 128 bits", err);
            if (!w2l__decimal_fits(v, t.precision)) {
                char txt[48];
                w2l__decimal_format(v, t.scale, txt, sizeof txt);
                char why[128];
                snprintf(why, sizeof why, "%s does not fit decimal(%u,%u)", txt, t.precision, t.scale);
                return bad_value(x, s, n, why, err);
            }
            out->v.dec = v;
            return W2L_OK;
        }
        break;
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
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: {
        int b;
        if (w2l__json_bool(j, &b) == 0) {
            out->v.i32 = b;
            return W2L_OK;
        }
        if (w2l__json_int64(j, &iv) == 0 && (iv == 0 || iv == 1)) {
            out->v.i32 = (int32_t)iv;
            return W2L_OK;
        }
        break;
    }
    case W2L_TYPE_INT:
    case W2L_TYPE_LONG:
        if (k == W2L_JSON_NUMBER) {
            if (w2l__json_int64(j, &iv) ||
                (t.id == W2L_TYPE_INT && (iv < INT32_MIN || iv > INT32_MAX))) {
                number_text(j, nb, sizeof nb);
                return bad_value(x, nb, strlen(nb), t.id == W2L_TYPE_INT ? "not an int (32-bit)" : "not a long (64-bit)", err);
            }
            if (t.id == W2L_TYPE_INT) out->v.i32 = (int32_t)iv;
            else out->v.i64 = iv;
            return W2L_OK;
        }
        break;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE: {
        double dv;
        if (k == W2L_JSON_NUMBER && w2l__json_double(j, &dv) == 0) {
            if (t.id == W2L_TYPE_FLOAT) out->v.f32 = (float)dv;
            else out->v.f64 = dv;
            return W2L_OK;
        }
        break;
    }
    case W2L_TYPE_DECIMAL:
        if (k == W2L_JSON_NUMBER) {
            if (number_text(j, nb, sizeof nb)) break;
            return value_from_text(x, t, nb, strlen(nb), 0, required, out, err);
        }
        break;
    case W2L_TYPE_STRING:
        if (k == W2L_JSON_NUMBER || k == W2L_JSON_BOOL || k == W2L_JSON_OBJECT || k == W2L_JSON_ARRAY)
            return json_text(x, j, out, err);
        break;
    case W2L_TYPE_BINARY:
        if (s && !canal) { /* maxwell and debezium: base64 */
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            out->v.bytes.ptr = (const char *)p;
            out->v.bytes.len = len;
            return W2L_OK;
        }
        break;
    default:
        break;
    }
    if (s) return value_from_text(x, t, s, n, canal, required, out, err);
    if (k == W2L_JSON_NUMBER) number_text(j, nb, sizeof nb);
    else snprintf(nb, sizeof nb, "(%s)", w2l__json_kind_name(k));
    char why[64];
    snprintf(why, sizeof why, "not a %s", w2l__type_name(t.id));
    return bad_value(x, nb, strlen(nb), why, err);
}

