/*
 * MySQL's binary JSON (the value of a JSON column in a MySQL 5.7/8.x row event) as JSON
 * text, and the JSON diffs of PARTIAL_UPDATE_ROWS applied to a before image.
 *
 * Binary grammar (all integers little-endian; "osz" is 2 in the small and 4 in the large
 * form of a container):
 *   doc       := type(1) value                    an empty doc is JSON null
 *   object    := count(osz) size(osz) key-entry{count} value-entry{count} keys values
 *   array     := count(osz) size(osz) value-entry{count} values
 *   key-entry := key-offset(osz) key-length(2)
 *   value-entry := type(1) offset-or-inlined(osz)
 *   string    := varlen bytes                     varlen: 7 bits a byte, low first, the top
 *                                                 bit set on all but the last (≤ 5 bytes)
 *   opaque    := field-type(1) varlen bytes
 * Types: 0/1 small/large object, 2/3 small/large array, 4 literal (0 null, 1 true,
 * 2 false), 5 int16, 6 uint16, 7 int32, 8 uint32, 9 int64, 10 uint64, 11 double,
 * 12 string, 15 opaque. Offsets count from a container's first count byte; literal,
 * int16 and uint16 (and int32/uint32 in the large form) are inlined in the value entry.
 * Keys are stored sorted by length, then bytes. Example, {"a": 2} in 13 bytes:
 *   00 | 01 00 | 0c 00 | 0b 00 01 00 | 05 02 00 | 61
 *   small object, 1 member, 12 bytes; key at 11, 1 byte; int16 2 inlined; "a".
 *
 * Text: what `SELECT json_col` prints on MySQL 8, so the lake holds the server's text:
 *   - `{"a": 1, "b": [1, 2]}`: ", " between members and elements, ": " after a key, no
 *     other space; members in stored order (length, then bytes); {} and [] when empty.
 *   - strings escape '"', '\\', \b \f \n \r \t, other bytes below 0x20 and 0x7f as \u00xx
 *     (lower-case hex); every other byte, UTF-8 included, is copied as it is.
 *   - integers in decimal; a double as the server's my_gcvt with its JSON field width
 *     (34): the shortest digits that read back to the same double, fixed notation while
 *     the decimal exponent is within -14..15 and the text fits, else "1.5e-20" / "1e300"
 *     (no '+', no leading zeros); ".0" appended when the text has neither '.' nor 'e'
 *     ("1.0"), as the server marks a double. NaN and infinities cannot be stored and are
 *     corrupt.
 *   - opaque DECIMAL: a number with the column's scale ("9.00", "-0.1"); DATE
 *     "2015-01-15"; DATETIME and TIMESTAMP "2015-01-15 23:24:25.000000" and TIME
 *     "-838:59:59.000000" (always six fraction digits), quoted; any other opaque value
 *     (BLOB, BIT, VARCHAR, geometry) "base64:type<field type>:<base64>", quoted. One
 *     deliberate difference: the server's base64 breaks a line after every 76 characters
 *     and prints that newline raw inside the string, which is not valid JSON; here it is
 *     escaped as \n, so the text parses and its value is the server's string.
 * Depth: containers nest at most 100 deep (MySQL's JSON_DOCUMENT_MAX_DEPTH); deeper is
 * W2L_CORRUPT. Every length, offset and count is checked against the bytes of the
 * enclosing container (a container's declared size must fit in what its parent has), so
 * a hostile value gives W2L_CORRUPT naming what is wrong and its byte offset.
 *
 * Diffs (PARTIAL_UPDATE_ROWS with binlog_row_value_options=PARTIAL_JSON), one after the
 * other until the bytes end; lenenc is the protocol's length-encoded integer (< 0xfb: the
 * byte; 0xfc, 0xfd, 0xfe: 2, 3, 8 bytes follow):
 *   diff := operation(1: 0 REPLACE, 1 INSERT, 2 REMOVE) lenenc(path) path
 *           [lenenc(value) value]                 value (a doc) not for REMOVE
 * Paths are MySQL's: `$`, then legs `.name` or `."quoted name"` (JSON escapes) and `[N]`,
 * `[last]`, `[last-N]`; wildcards (`.*`, `[*]`, `**`) and ranges (`[1 to 3]`) are refused.
 * Applying: the before image is a tree whose containers are decoded only along the diffs'
 * paths; everything else stays binary and is printed by the same printer as
 * w2l__myjson_text, so both render identically. REPLACE and REMOVE need the path to
 * exist; INSERT adds a member (in the server's key order; an existing member is
 * replaced) or inserts into an array at the index (past the end: appended), and needs
 * the parent to exist.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mysql_json.h"

#define MYJ_MAX_DEPTH 100 /* MySQL's JSON_DOCUMENT_MAX_DEPTH */
#define MYJ_GCVT_WIDTH 34 /* the field width MySQL's JSON printer gives my_gcvt */
#define MYJ_F_MAX_DECPT 15 /* fixed notation up to this decimal exponent (DBL_DIG) */

enum {
    J_SOBJ = 0, J_LOBJ = 1, J_SARR = 2, J_LARR = 3, J_LITERAL = 4, J_INT16 = 5, J_UINT16 = 6,
    J_INT32 = 7, J_UINT32 = 8, J_INT64 = 9, J_UINT64 = 10, J_DOUBLE = 11, J_STRING = 12,
    J_OPAQUE = 15
};
/* The field types an opaque value names that print as something other than base64. */
enum { F_TIMESTAMP = 7, F_DATE = 10, F_TIME = 11, F_DATETIME = 12, F_NEWDECIMAL = 246 };
enum { OP_REPLACE = 0, OP_INSERT = 1, OP_REMOVE = 2 };

/* Where bytes come from, for error messages: offsets count from base. */
typedef struct src {
    const char *name;
    const uint8_t *base;
} src;

static w2l_rc corrupt(w2l_error *err, const src *s, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static w2l_rc corrupt(w2l_error *err, const src *s, const uint8_t *at, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return w2l__fail(err, W2L_CORRUPT, "MySQL binary JSON: %s: %s at byte %zu", s->name, msg,
                     (size_t)(at - s->base));
}

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static w2l_rc put(w2l_buf *out, const char *s, size_t n, w2l_error *err)
{
    return w2l_buf_append(out, s, n, err);
}
static w2l_rc puts_(w2l_buf *out, const char *s, w2l_error *err)
{
    return w2l_buf_append(out, s, strlen(s), err);
}

/* ---- scalars ------------------------------------------------------------------------ */

/* The string's bytes as a quoted JSON string, escaped as MySQL escapes. */
static w2l_rc put_quoted(w2l_buf *out, const uint8_t *s, size_t n, w2l_error *err)
{
    static const char hex[] = "0123456789abcdef";
    W2L_TRY(w2l__buf_reserve(out, n + 2, err));
    out->data[out->len++] = '"';
    size_t run = 0; /* start of the bytes copied as they are */
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t el = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            if (c >= 0x20 && c != 0x7f) continue;
            esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
            el = 6;
        }
        W2L_TRY(put(out, (const char *)s + run, i - run, err));
        W2L_TRY(put(out, esc, el, err));
        run = i + 1;
    }
    W2L_TRY(put(out, (const char *)s + run, n - run, err));
    return put(out, "\"", 1, err);
}

/* A variable-length size at p (at most 5 bytes, within n); *used its bytes. */
static w2l_rc read_varlen(const src *s, const uint8_t *p, size_t n, uint32_t *len, size_t *used,
                          w2l_error *err)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 5; i++) {
        if (i >= n) return corrupt(err, s, p + i, "length truncated");
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (v > UINT32_MAX) return corrupt(err, s, p, "length beyond 32 bits");
            *len = (uint32_t)v;
            *used = i + 1;
            return W2L_OK;
        }
    }
    return corrupt(err, s, p, "length of more than 5 bytes");
}

/* d as MySQL's JSON printer writes a double (see the head comment). */
static int format_double(double d, char *buf, size_t size)
{
    char e[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    /* e is [-]D[.DDD]e±XX: its digits (trailing zeros dropped) and decimal exponent */
    char dig[24];
    int len = 0, neg = e[0] == '-';
    const char *q = e + neg;
    for (; *q && *q != 'e' && *q != 'E'; q++)
        if (*q >= '0' && *q <= '9' && len < 20) dig[len++] = *q;
    int x = *q ? atoi(q + 1) : 0;
    while (len > 1 && dig[len - 1] == '0') len--;
    dig[len] = 0;
    int decpt = x + 1; /* the value is 0.DIGITS × 10^decpt */
    if (len == 1 && dig[0] == '0') decpt = 1;
    int width = MYJ_GCVT_WIDTH - neg;
    int flen = decpt <= 0 ? 2 - decpt + len : decpt < len ? len + 1 : decpt;
    size_t o = 0;
    char t[64];
    if (neg) t[o++] = '-';
    if (flen <= width && decpt <= MYJ_F_MAX_DECPT && decpt > -MYJ_F_MAX_DECPT + 1) {
        if (decpt <= 0) {
            t[o++] = '0', t[o++] = '.';
            for (int i = 0; i < -decpt; i++) t[o++] = '0';
            for (int i = 0; i < len; i++) t[o++] = dig[i];
        } else {
            for (int i = 0; i < decpt; i++) t[o++] = i < len ? dig[i] : '0';
            if (decpt < len) {
                t[o++] = '.';
                for (int i = decpt; i < len; i++) t[o++] = dig[i];
            } else {
                t[o++] = '.', t[o++] = '0';
            }
        }
        t[o] = 0;
    } else {
        t[o++] = dig[0];
        if (len > 1) {
            t[o++] = '.';
            for (int i = 1; i < len; i++) t[o++] = dig[i];
        }
        snprintf(t + o, sizeof t - o, "e%d", decpt - 1);
    }
    return snprintf(buf, size, "%s", t);
}

static const int dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

/* MySQL's binary DECIMAL (precision, scale, then the digits in groups of nine) as a
 * number with scale fraction digits. */
static w2l_rc put_decimal(w2l_buf *out, const src *s, const uint8_t *p, uint32_t n,
                          w2l_error *err)
{
    if (n < 2) return corrupt(err, s, p, "opaque DECIMAL of %u bytes", n);
    unsigned prec = p[0], scale = p[1];
    if (prec < 1 || prec > 65 || scale > 30 || scale > prec)
        return corrupt(err, s, p, "DECIMAL(%u,%u) impossible", prec, scale);
    unsigned intg = prec - scale;
    unsigned ig = intg / 9, ix = intg % 9, fg = scale / 9, fx = scale % 9;
    unsigned bytes = (unsigned)dig2bytes[ix] + ig * 4 + fg * 4 + (unsigned)dig2bytes[fx];
    if (n - 2 != bytes)
        return corrupt(err, s, p, "DECIMAL(%u,%u) of %u bytes, needs %u", prec, scale, n - 2,
                       bytes);
    uint8_t b[40];
    memcpy(b, p + 2, bytes);
    int neg = !(b[0] & 0x80);
    b[0] ^= 0x80;
    if (neg)
        for (unsigned i = 0; i < bytes; i++) b[i] ^= 0xff;
    char t[100];
    size_t o = 0, k = 0;
    /* groups in order: leading partial, whole integer groups, whole fraction groups,
     * trailing partial; each a big-endian number of its digits */
    unsigned ndig[40], ng = 0;
    if (ix) ndig[ng++] = ix;
    for (unsigned i = 0; i < ig; i++) ndig[ng++] = 9;
    unsigned nint = ng;
    for (unsigned i = 0; i < fg; i++) ndig[ng++] = 9;
    if (fx) ndig[ng++] = fx;
    char digits[100];
    size_t nd = 0;
    for (unsigned g = 0; g < ng; g++) {
        unsigned nb = (unsigned)dig2bytes[ndig[g]];
        uint32_t v = 0;
        for (unsigned i = 0; i < nb; i++) v = v << 8 | b[k++];
        uint32_t lim = 1;
        for (unsigned i = 0; i < ndig[g]; i++) lim *= 10;
        if (v >= lim)
            return corrupt(err, s, p, "DECIMAL(%u,%u) digit group %u is %u", prec, scale, g, v);
        nd += (size_t)snprintf(digits + nd, sizeof digits - nd, "%0*u", (int)ndig[g], v);
    }
    size_t intlen = 0;
    for (unsigned g = 0; g < nint; g++) intlen += ndig[g];
    if (neg) t[o++] = '-';
    size_t z = 0;
    while (z < intlen && digits[z] == '0') z++;
    if (z == intlen) t[o++] = '0';
    for (; z < intlen; z++) t[o++] = digits[z];
    if (scale) {
        t[o++] = '.';
        for (size_t i = intlen; i < nd; i++) t[o++] = digits[i];
    }
    return put(out, t, o, err);
}

/* The packed 64-bit temporal values of MySQL (TIME_to_longlong_*_packed). */
static w2l_rc put_temporal(w2l_buf *out, const src *s, unsigned ftype, const uint8_t *p,
                           uint32_t n, w2l_error *err)
{
    if (n != 8) return corrupt(err, s, p, "opaque temporal value of %u bytes, not 8", n);
    int64_t v = (int64_t)rd64(p);
    int neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    unsigned frac = (unsigned)(u & 0xffffff);
    uint64_t hi = u >> 24;
    if (frac > 999999) return corrupt(err, s, p, "temporal fraction %u", frac);
    char t[64];
    if (ftype == F_TIME) {
        unsigned hour = (unsigned)(hi >> 12) % 1024, min = (unsigned)(hi >> 6) & 63,
                 sec = (unsigned)hi & 63;
        if (min > 59 || sec > 59) return corrupt(err, s, p, "TIME %u:%u:%u", hour, min, sec);
        snprintf(t, sizeof t, "\"%s%02u:%02u:%02u.%06u\"", neg ? "-" : "", hour, min, sec, frac);
        return puts_(out, t, err);
    }
    if (neg) return corrupt(err, s, p, "negative date");
    uint64_t ymd = hi >> 17, ym = ymd >> 5;
    unsigned hms = (unsigned)(hi & 0x1ffff), day = (unsigned)(ymd & 31),
             month = (unsigned)(ym % 13), hour = hms >> 12, min = (hms >> 6) & 63, sec = hms & 63;
    uint64_t year = ym / 13;
    if (year > 9999 || min > 59 || sec > 59 || hour > 23)
        return corrupt(err, s, p, "date %llu-%u-%u %u:%u:%u", (unsigned long long)year, month,
                       day, hour, min, sec);
    if (ftype == F_DATE)
        snprintf(t, sizeof t, "\"%04u-%02u-%02u\"", (unsigned)year, month, day);
    else
        snprintf(t, sizeof t, "\"%04u-%02u-%02u %02u:%02u:%02u.%06u\"", (unsigned)year, month,
                 day, hour, min, sec, frac);
    return puts_(out, t, err);
}

/* "base64:typeN:..." as MySQL prints an opaque value it has no text for. */
static w2l_rc put_base64(w2l_buf *out, unsigned ftype, const uint8_t *p, uint32_t n,
                         w2l_error *err)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    W2L_TRY(w2l__buf_printf(out, err, "\"base64:type%u:", ftype));
    size_t need = ((size_t)n + 2) / 3 * 4;
    W2L_TRY(w2l__buf_reserve(out, need + need / 76 * 2 + 1, err));
    char *o = (char *)out->data + out->len;
    size_t line = 0;
    for (uint32_t i = 0; i < n; i += 3) {
        if (line == 76) *o++ = '\\', *o++ = 'n', line = 0;
        uint32_t c = (uint32_t)p[i] << 16;
        if (i + 1 < n) c |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) c |= p[i + 2];
        *o++ = b64[c >> 18];
        *o++ = b64[(c >> 12) & 63];
        *o++ = i + 1 < n ? b64[(c >> 6) & 63] : '=';
        *o++ = i + 2 < n ? b64[c & 63] : '=';
        line += 4;
    }
    out->len = (size_t)(o - (char *)out->data);
    return put(out, "\"", 1, err);
}

/* ---- containers --------------------------------------------------------------------- */

/* One container's header, checked: count entries, size bytes from p. */
typedef struct hdr {
    const uint8_t *p;
    uint32_t count, size, osz;
    int large, object;
} hdr;

static w2l_rc read_hdr(const src *s, uint8_t type, const uint8_t *p, size_t n, hdr *h,
                       w2l_error *err)
{
    h->p = p;
    h->large = type == J_LOBJ || type == J_LARR;
    h->object = type == J_SOBJ || type == J_LOBJ;
    h->osz = h->large ? 4 : 2;
    const char *what = h->object ? "object" : "array";
    if (n < 2 * (size_t)h->osz) return corrupt(err, s, p, "%s header truncated", what);
    h->count = h->large ? rd32(p) : rd16(p);
    h->size = h->large ? rd32(p + h->osz) : rd16(p + h->osz);
    if (h->size > n)
        return corrupt(err, s, p, "%s of %u bytes in %zu available", what, h->size, n);
    uint64_t need = 2 * (uint64_t)h->osz +
                    (uint64_t)h->count * ((h->object ? h->osz + 2u : 0u) + 1u + h->osz);
    if (need > h->size)
        return corrupt(err, s, p, "%s of %u entries does not fit in its %u bytes", what,
                       h->count, h->size);
    return W2L_OK;
}

static w2l_rc entry_key(const src *s, const hdr *h, uint32_t i, const uint8_t **key,
                        size_t *klen, w2l_error *err)
{
    const uint8_t *e = h->p + 2 * h->osz + (size_t)i * (h->osz + 2);
    uint32_t off = h->large ? rd32(e) : rd16(e), len = rd16(e + h->osz);
    if (off > h->size || len > h->size - off)
        return corrupt(err, s, e, "key %u (offset %u, %u bytes) beyond the object's %u bytes", i,
                       off, len, h->size);
    *key = h->p + off;
    *klen = len;
    return W2L_OK;
}

/* Entry i's value: its type and bytes (inlined ones: the entry's osz bytes; others: from
 * its offset to the container's end). */
static w2l_rc entry_value(const src *s, const hdr *h, uint32_t i, uint8_t *type,
                          const uint8_t **vp, size_t *vn, w2l_error *err)
{
    const uint8_t *e = h->p + 2 * h->osz + (h->object ? (size_t)h->count * (h->osz + 2) : 0) +
                       (size_t)i * (1 + h->osz);
    uint8_t t = e[0];
    *type = t;
    if (t == J_LITERAL || t == J_INT16 || t == J_UINT16 ||
        (h->large && (t == J_INT32 || t == J_UINT32))) {
        *vp = e + 1;
        *vn = h->osz;
        return W2L_OK;
    }
    uint32_t off = h->large ? rd32(e + 1) : rd16(e + 1);
    if (off >= h->size)
        return corrupt(err, s, e, "value %u at offset %u beyond the container's %u bytes", i,
                       off, h->size);
    *vp = h->p + off;
    *vn = h->size - off;
    return W2L_OK;
}

/* The value of the given type at p (n bytes available) as text; depth: the containers
 * around it. */
static w2l_rc print_value(const src *s, uint8_t type, const uint8_t *p, size_t n, int depth,
                          w2l_buf *out, w2l_error *err)
{
    char t[64];
    switch (type) {
    case J_SOBJ:
    case J_LOBJ:
    case J_SARR:
    case J_LARR: {
        if (depth >= MYJ_MAX_DEPTH)
            return corrupt(err, s, p, "nested deeper than %d", MYJ_MAX_DEPTH);
        hdr h;
        W2L_TRY(read_hdr(s, type, p, n, &h, err));
        W2L_TRY(put(out, h.object ? "{" : "[", 1, err));
        for (uint32_t i = 0; i < h.count; i++) {
            if (i) W2L_TRY(put(out, ", ", 2, err));
            if (h.object) {
                const uint8_t *k;
                size_t kl;
                W2L_TRY(entry_key(s, &h, i, &k, &kl, err));
                W2L_TRY(put_quoted(out, k, kl, err));
                W2L_TRY(put(out, ": ", 2, err));
            }
            uint8_t vt;
            const uint8_t *vp = NULL;
            size_t vn = 0;
            W2L_TRY(entry_value(s, &h, i, &vt, &vp, &vn, err));
            W2L_TRY(print_value(s, vt, vp, vn, depth + 1, out, err));
        }
        return put(out, h.object ? "}" : "]", 1, err);
    }
    case J_LITERAL:
        if (n < 1) return corrupt(err, s, p, "literal truncated");
        if (p[0] > 2) return corrupt(err, s, p, "literal %u unknown", p[0]);
        return puts_(out, p[0] == 0 ? "null" : p[0] == 1 ? "true" : "false", err);
    case J_INT16:
    case J_UINT16:
        if (n < 2) return corrupt(err, s, p, "int16 truncated");
        snprintf(t, sizeof t, "%d", type == J_INT16 ? (int)(int16_t)rd16(p) : (int)rd16(p));
        return puts_(out, t, err);
    case J_INT32:
    case J_UINT32:
        if (n < 4) return corrupt(err, s, p, "int32 truncated");
        if (type == J_INT32)
            snprintf(t, sizeof t, "%ld", (long)(int32_t)rd32(p));
        else
            snprintf(t, sizeof t, "%lu", (unsigned long)rd32(p));
        return puts_(out, t, err);
    case J_INT64:
    case J_UINT64:
        if (n < 8) return corrupt(err, s, p, "int64 truncated");
        if (type == J_INT64)
            snprintf(t, sizeof t, "%lld", (long long)(int64_t)rd64(p));
        else
            snprintf(t, sizeof t, "%llu", (unsigned long long)rd64(p));
        return puts_(out, t, err);
    case J_DOUBLE: {
        if (n < 8) return corrupt(err, s, p, "double truncated");
        uint64_t bits = rd64(p);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d)) return corrupt(err, s, p, "double not finite");
        format_double(d, t, sizeof t);
        return puts_(out, t, err);
    }
    case J_STRING: {
        uint32_t len = 0;
        size_t used = 0;
        W2L_TRY(read_varlen(s, p, n, &len, &used, err));
        if (len > n - used)
            return corrupt(err, s, p, "string of %u bytes in %zu available", len, n - used);
        return put_quoted(out, p + used, len, err);
    }
    case J_OPAQUE: {
        if (n < 1) return corrupt(err, s, p, "opaque value truncated");
        unsigned ft = p[0];
        uint32_t len = 0;
        size_t used = 0;
        W2L_TRY(read_varlen(s, p + 1, n - 1, &len, &used, err));
        if (len > n - 1 - used)
            return corrupt(err, s, p, "opaque value of %u bytes in %zu available", len,
                           n - 1 - used);
        const uint8_t *d = p + 1 + used;
        switch (ft) {
        case F_NEWDECIMAL: return put_decimal(out, s, d, len, err);
        case F_DATE:
        case F_TIME:
        case F_DATETIME:
        case F_TIMESTAMP: return put_temporal(out, s, ft, d, len, err);
        default: return put_base64(out, ft, d, len, err);
        }
    }
    default: return corrupt(err, s, p, "value type %u unknown", type);
    }
}

/* A whole doc (type byte first; empty: null). */
static w2l_rc print_doc(const src *s, const uint8_t *p, size_t n, int depth, w2l_buf *out,
                        w2l_error *err)
{
    if (n == 0) return puts_(out, "null", err);
    return print_value(s, p[0], p + 1, n - 1, depth, out, err);
}

w2l_rc w2l__myjson_text(const uint8_t *p, size_t n, w2l_buf *out, w2l_error *err)
{
    size_t len0 = out->len;
    const src s = {"value", p};
    w2l_rc rc = print_doc(&s, p, n, 0, out, err);
    if (rc != W2L_OK) out->len = len0;
    return rc;
}

/* ---- diffs: a tree decoded only along the paths ---------------------------------------- */

typedef struct node node;
typedef struct member {
    const uint8_t *key; /* object members only */
    size_t klen;
    node *v;
} member;
/* Raw (binary, printed by print_value) until expand() turns a container into kids. */
struct node {
    const src *s;
    uint8_t type;
    const uint8_t *p;
    size_t n;
    int expanded, object;
    member *kids;
    size_t nkids, cap;
};

typedef struct tree {
    void **allocs; /* everything below, freed together */
    size_t nallocs, cap;
    w2l_error *err;
} tree;

static void *tree_alloc(tree *t, size_t n)
{
    if (t->nallocs == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        void **a = w2l__realloc(t->allocs, cap * sizeof *a);
        if (!a) return NULL;
        t->allocs = a;
        t->cap = cap;
    }
    void *p = w2l__calloc(1, n ? n : 1);
    if (p) t->allocs[t->nallocs++] = p;
    return p;
}

static void tree_free(tree *t)
{
    for (size_t i = 0; i < t->nallocs; i++) w2l__free(t->allocs[i]);
    w2l__free(t->allocs);
}

static node *new_raw(tree *t, const src *s, uint8_t type, const uint8_t *p, size_t n)
{
    node *v = tree_alloc(t, sizeof *v);
    if (v) v->s = s, v->type = type, v->p = p, v->n = n;
    return v;
}

static w2l_rc kids_reserve(tree *t, node *v, size_t want)
{
    if (want <= v->cap) return W2L_OK;
    size_t cap = v->cap ? v->cap : 4;
    while (cap < want) cap *= 2;
    member *k = tree_alloc(t, cap * sizeof *k);
    W2L_NOMEM_IF(!k, t->err);
    if (v->nkids) memcpy(k, v->kids, v->nkids * sizeof *k);
    v->kids = k; /* the old array stays in the tree's list until the end */
    v->cap = cap;
    return W2L_OK;
}

static int is_container(uint8_t type)
{
    return type <= J_LARR;
}

static w2l_rc expand(tree *t, node *v)
{
    if (v->expanded) return W2L_OK;
    hdr h;
    W2L_TRY(read_hdr(v->s, v->type, v->p, v->n, &h, t->err));
    W2L_TRY(kids_reserve(t, v, h.count));
    for (uint32_t i = 0; i < h.count; i++) {
        member *m = &v->kids[i];
        if (h.object) W2L_TRY(entry_key(v->s, &h, i, &m->key, &m->klen, t->err));
        uint8_t vt;
        const uint8_t *vp = NULL;
        size_t vn = 0;
        W2L_TRY(entry_value(v->s, &h, i, &vt, &vp, &vn, t->err));
        m->v = new_raw(t, v->s, vt, vp, vn);
        W2L_NOMEM_IF(!m->v, t->err);
    }
    v->nkids = h.count;
    v->object = h.object;
    v->expanded = 1;
    return W2L_OK;
}

static w2l_rc print_node(const node *v, int depth, w2l_buf *out, w2l_error *err)
{
    if (!v->expanded) return print_value(v->s, v->type, v->p, v->n, depth, out, err);
    if (depth >= MYJ_MAX_DEPTH)
        return corrupt(err, v->s, v->p, "nested deeper than %d", MYJ_MAX_DEPTH);
    W2L_TRY(put(out, v->object ? "{" : "[", 1, err));
    for (size_t i = 0; i < v->nkids; i++) {
        if (i) W2L_TRY(put(out, ", ", 2, err));
        if (v->object) {
            W2L_TRY(put_quoted(out, v->kids[i].key, v->kids[i].klen, err));
            W2L_TRY(put(out, ": ", 2, err));
        }
        W2L_TRY(print_node(v->kids[i].v, depth + 1, out, err));
    }
    return put(out, v->object ? "}" : "]", 1, err);
}

/* One leg of a path. */
typedef struct leg {
    int member;        /* 1: .key; 0: [index] */
    const uint8_t *key;
    size_t klen;
    int last;          /* [last-index] */
    uint32_t index;
} leg;

typedef struct path {
    const char *text; /* for messages */
    size_t len;
    leg legs[MYJ_MAX_DEPTH];
    int n;
} path;

static w2l_rc path_fail(w2l_error *err, const path *pa, unsigned diff, const char *why)
{
    return w2l__fail(err, W2L_CORRUPT, "MySQL JSON diff %u: path '%.*s': %s", diff,
                     (int)W2L_MIN(pa->len, 200), pa->text, why);
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Appends code point cp as UTF-8. */
static size_t utf8_put(uint8_t *o, uint32_t cp)
{
    if (cp < 0x80) return o[0] = (uint8_t)cp, 1;
    if (cp < 0x800) return o[0] = (uint8_t)(0xc0 | cp >> 6), o[1] = (uint8_t)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xe0 | cp >> 12), o[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
        o[2] = (uint8_t)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (uint8_t)(0xf0 | cp >> 18), o[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 63)), o[3] = (uint8_t)(0x80 | (cp & 63));
    return 4;
}

static int read_u4(const char *q, const char *end, uint32_t *v)
{
    if (end - q < 4) return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)q[i]);
        if (h < 0) return -1;
        *v = *v << 4 | (uint32_t)h;
    }
    return 0;
}

/* A quoted member name from q (at its '"') unescaped into o (end - q bytes at least);
 * returns the end of the name, NULL when it is malformed. */
static const char *parse_quoted(const char *q, const char *end, uint8_t *o, leg *lg)
{
    size_t n = 0;
    for (q++; q < end && *q != '"'; q++) {
        if (*q != '\\') {
            o[n++] = (uint8_t)*q;
            continue;
        }
        if (++q >= end) return NULL;
        switch (*q) {
        case '"': case '\\': case '/': o[n++] = (uint8_t)*q; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (read_u4(q + 1, end, &cp)) return NULL;
            q += 4;
            if (cp >= 0xd800 && cp < 0xdc00) {
                if (end - q < 7 || q[1] != '\\' || q[2] != 'u' || read_u4(q + 3, end, &lo) ||
                    lo < 0xdc00 || lo > 0xdfff)
                    return NULL;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                q += 6;
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return NULL;
            }
            n += utf8_put(o + n, cp);
            break;
        }
        default: return NULL;
        }
    }
    if (q >= end) return NULL;
    lg->key = o;
    lg->klen = n;
    return q + 1;
}

static w2l_rc parse_path(tree *t, path *pa, unsigned diff)
{
    const char *q = pa->text, *end = q + pa->len;
    while (q < end && *q == ' ') q++;
    if (q >= end || *q != '$') return path_fail(t->err, pa, diff, "does not start with '$'");
    q++;
    pa->n = 0;
    for (;;) {
        while (q < end && *q == ' ') q++;
        if (q >= end) return W2L_OK;
        if (pa->n == MYJ_MAX_DEPTH) return path_fail(t->err, pa, diff, "deeper than the limit");
        leg *lg = &pa->legs[pa->n];
        memset(lg, 0, sizeof *lg);
        if (*q == '.') {
            q++;
            while (q < end && *q == ' ') q++;
            lg->member = 1;
            if (q < end && *q == '"') {
                uint8_t *o = tree_alloc(t, (size_t)(end - q));
                W2L_NOMEM_IF(!o, t->err);
                const char *r = parse_quoted(q, end, o, lg);
                if (!r) return path_fail(t->err, pa, diff, "bad quoted member name");
                q = r;
            } else {
                const char *k = q;
                while (q < end && *q != '.' && *q != '[' && *q != ' ') {
                    if (*q == '*')
                        return path_fail(t->err, pa, diff, "wildcards are not supported");
                    q++;
                }
                if (q == k) return path_fail(t->err, pa, diff, "empty member name");
                lg->key = (const uint8_t *)k;
                lg->klen = (size_t)(q - k);
            }
        } else if (*q == '[') {
            q++;
            while (q < end && *q == ' ') q++;
            if (q < end && *q == '*')
                return path_fail(t->err, pa, diff, "wildcards are not supported");
            int number = 1;
            if (end - q >= 4 && !memcmp(q, "last", 4)) {
                lg->last = 1;
                q += 4;
                while (q < end && *q == ' ') q++;
                number = q < end && *q == '-';
                if (number) q++;
                while (q < end && *q == ' ') q++;
            }
            if (number) {
                if (q >= end || *q < '0' || *q > '9')
                    return path_fail(t->err, pa, diff, "bad array index");
                uint64_t v = 0;
                while (q < end && *q >= '0' && *q <= '9') {
                    v = v * 10 + (uint64_t)(*q++ - '0');
                    if (v > UINT32_MAX)
                        return path_fail(t->err, pa, diff, "array index too large");
                }
                lg->index = (uint32_t)v;
            }
            while (q < end && *q == ' ') q++;
            if (q < end && *q != ']')
                return path_fail(t->err, pa, diff, "array ranges are not supported");
            if (q >= end) return path_fail(t->err, pa, diff, "unterminated '['");
            q++;
        } else if (*q == '*') {
            return path_fail(t->err, pa, diff, "wildcards are not supported");
        } else {
            return path_fail(t->err, pa, diff, "bad path leg");
        }
        pa->n++;
    }
}

/* Position of lg in the expanded container v: found 1 (at *pos) or 0 (*pos: where a
 * member would be inserted, or the clamped array index). -1: leg and container differ. */
static int find(const node *v, const leg *lg, size_t *pos)
{
    if (lg->member != v->object) return -1;
    if (!lg->member) {
        size_t i;
        if (lg->last) {
            if (lg->index >= v->nkids) return *pos = 0, 0;
            i = v->nkids - 1 - lg->index;
        } else {
            i = lg->index;
        }
        if (i < v->nkids) return *pos = i, 1;
        return *pos = v->nkids, 0;
    }
    for (size_t i = 0; i < v->nkids; i++) {
        const member *m = &v->kids[i];
        if (m->klen == lg->klen && !memcmp(m->key, lg->key, lg->klen)) return *pos = i, 1;
    }
    /* the server's key order: by length, then bytes */
    size_t i = 0;
    while (i < v->nkids &&
           (v->kids[i].klen < lg->klen ||
            (v->kids[i].klen == lg->klen && memcmp(v->kids[i].key, lg->key, lg->klen) < 0)))
        i++;
    return *pos = i, 0;
}

static w2l_rc apply_one(tree *t, node **root, int op, path *pa, node *val, unsigned diff)
{
    if (pa->n == 0) {
        if (op != OP_REPLACE) return path_fail(t->err, pa, diff, "cannot insert or remove '$'");
        *root = val;
        return W2L_OK;
    }
    node *cur = *root;
    for (int i = 0; i < pa->n; i++) {
        if (!is_container(cur->type) && !cur->expanded)
            return path_fail(t->err, pa, diff, "not in the document (a scalar on the way)");
        W2L_TRY(expand(t, cur));
        size_t pos;
        int f = find(cur, &pa->legs[i], &pos);
        if (f < 0)
            return path_fail(t->err, pa, diff,
                             cur->object ? "an array index into an object"
                                         : "a member name into an array");
        if (i + 1 < pa->n) {
            if (!f) return path_fail(t->err, pa, diff, "not in the document");
            cur = cur->kids[pos].v;
            continue;
        }
        if (op == OP_REPLACE || (op == OP_INSERT && f && cur->object)) {
            if (!f) return path_fail(t->err, pa, diff, "not in the document");
            cur->kids[pos].v = val;
        } else if (op == OP_REMOVE) {
            if (!f) return path_fail(t->err, pa, diff, "not in the document");
            memmove(cur->kids + pos, cur->kids + pos + 1, (cur->nkids - pos - 1) * sizeof(member));
            cur->nkids--;
        } else {
            W2L_TRY(kids_reserve(t, cur, cur->nkids + 1));
            memmove(cur->kids + pos + 1, cur->kids + pos, (cur->nkids - pos) * sizeof(member));
            cur->kids[pos] = (member){pa->legs[i].key, pa->legs[i].klen, val};
            cur->nkids++;
        }
    }
    return W2L_OK;
}

/* The protocol's length-encoded integer at *q (within end). */
static w2l_rc read_lenenc(const src *s, const uint8_t **q, const uint8_t *end, uint64_t *v,
                          w2l_error *err)
{
    const uint8_t *p = *q;
    if (p >= end) return corrupt(err, s, p, "length truncated");
    size_t nb = p[0] < 0xfb ? 0 : p[0] == 0xfc ? 2 : p[0] == 0xfd ? 3 : p[0] == 0xfe ? 8 : 9;
    if (nb == 9) return corrupt(err, s, p, "length byte 0x%02x invalid", p[0]);
    if ((size_t)(end - p) < 1 + nb) return corrupt(err, s, p, "length truncated");
    if (!nb) {
        *v = p[0];
    } else {
        *v = 0;
        for (size_t i = 0; i < nb; i++) *v |= (uint64_t)p[1 + i] << (8 * i);
    }
    *q = p + 1 + nb;
    return W2L_OK;
}

static w2l_rc apply_diffs(tree *t, const src *bs, const src *ds, const uint8_t *before,
                          size_t blen, const uint8_t *diffs, size_t dlen, w2l_buf *out)
{
    w2l_error *err = t->err;
    static const uint8_t null_doc[] = {J_LITERAL, 0};
    node *root = blen ? new_raw(t, bs, before[0], before + 1, blen - 1)
                      : new_raw(t, bs, J_LITERAL, null_doc + 1, 1);
    W2L_NOMEM_IF(!root, err);
    const uint8_t *q = diffs, *end = diffs + dlen;
    path *pa = tree_alloc(t, sizeof *pa);
    W2L_NOMEM_IF(!pa, err);
    for (unsigned diff = 0; q < end; diff++) {
        const uint8_t *at = q;
        int op = *q++;
        if (op > OP_REMOVE) return corrupt(err, ds, at, "diff %u: operation %d unknown", diff, op);
        uint64_t plen, vlen;
        W2L_TRY(read_lenenc(ds, &q, end, &plen, err));
        if (plen > (uint64_t)(end - q))
            return corrupt(err, ds, at, "diff %u: path of %llu bytes in %zu available", diff,
                           (unsigned long long)plen, (size_t)(end - q));
        pa->text = (const char *)q;
        pa->len = (size_t)plen;
        q += plen;
        node *val = NULL;
        if (op != OP_REMOVE) {
            const uint8_t *vat = q;
            W2L_TRY(read_lenenc(ds, &q, end, &vlen, err));
            if (vlen > (uint64_t)(end - q))
                return corrupt(err, ds, vat, "diff %u: value of %llu bytes in %zu available",
                               diff, (unsigned long long)vlen, (size_t)(end - q));
            if (vlen == 0) return corrupt(err, ds, vat, "diff %u: empty value", diff);
            val = new_raw(t, ds, q[0], q + 1, (size_t)vlen - 1);
            W2L_NOMEM_IF(!val, err);
            q += vlen;
        }
        W2L_TRY(parse_path(t, pa, diff));
        W2L_TRY(apply_one(t, &root, op, pa, val, diff));
    }
    return print_node(root, 0, out, err);
}

w2l_rc w2l__myjson_apply_diffs(const uint8_t *before, size_t blen, const uint8_t *diffs,
                               size_t dlen, w2l_buf *out, w2l_error *err)
{
    size_t len0 = out->len;
    const src bs = {"before image", before}, ds = {"diffs", diffs};
    tree t = {NULL, 0, 0, err};
    w2l_rc rc = apply_diffs(&t, &bs, &ds, before, blen, diffs, dlen, out);
    tree_free(&t);
    if (rc != W2L_OK) out->len = len0;
    return rc;
}
