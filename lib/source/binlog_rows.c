/*
 * Row images of the binlog stream (binlog.c; the format is described there): each present
 * value decoded from its binary form and converted to the column's Iceberg type, into
 * scratch memory reused across rows.
 */
#include <stdio.h>
#include <stdlib.h>

#include "binlog_int.h"
#include "mysql_int.h"
#include "mysql_json.h"
#include "../model/model.h"

__extension__ typedef unsigned __int128 u128;

/* ---- scratch ---- */

typedef struct w2l__bl_chunk {
    struct w2l__bl_chunk *next;
    size_t cap, used;
    _Alignas(16) char data[];
} w2l__bl_chunk;

void w2l__bl_scratch_reset(w2l__bl_scratch *s)
{
    for (w2l__bl_chunk *c = s->head; c; c = c->next) c->used = 0;
    s->cur = s->head;
}

void w2l__bl_scratch_free(w2l__bl_scratch *s)
{
    for (w2l__bl_chunk *c = s->head, *n; c; c = n) {
        n = c->next;
        w2l__free(c);
    }
    s->head = s->cur = NULL;
    w2l_buf_release(&s->json);
    w2l__free(s->jdoc);
    w2l__free(s->jlen);
    s->jdoc = NULL;
    s->jlen = NULL;
    s->jcap = 0;
}

char *w2l__bl_scratch_alloc(w2l__bl_scratch *s, size_t n)
{
    for (;;) {
        w2l__bl_chunk *c = s->cur;
        if (c && c->cap - c->used >= n) {
            char *p = c->data + c->used;
            c->used += n;
            return p;
        }
        if (c && c->next) {
            s->cur = c->next;
            continue;
        }
        size_t cap = n > 60000 ? n : 64 * 1024;
        w2l__bl_chunk *nc = w2l__malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->next = NULL;
        nc->cap = cap;
        nc->used = 0;
        if (c) c->next = nc;
        else s->head = nc;
        s->cur = nc;
    }
}

/* ---- row images ---- */

static w2l_rc short_image(const w2l__bl_tmap *tm, size_t i, w2l_error *err)
{
    return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated at column '%s'",
                     tm->db, tm->table, tm->cols[i].name);
}

static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

static size_t decimal_size(unsigned prec, unsigned scale)
{
    unsigned ig = prec - scale;
    return (ig / 9) * 4 + dig2bytes[ig % 9] + (scale / 9) * 4 + dig2bytes[scale % 9];
}

/* Binary DECIMAL to digits text (no dot) and sign; returns the digit count. */
static size_t decimal_digits(const uint8_t *src, unsigned prec, unsigned scale, char *digits,
                             int *neg)
{
    uint8_t buf[40];
    size_t n = decimal_size(prec, scale);
    memcpy(buf, src, n);
    *neg = !(buf[0] & 0x80);
    buf[0] ^= 0x80;
    if (*neg)
        for (size_t i = 0; i < n; i++) buf[i] ^= 0xFF;
    unsigned ig = prec - scale, ig0 = ig / 9, igx = ig % 9, fr0 = scale / 9, frx = scale % 9;
    const uint8_t *p = buf;
    size_t d = 0;
    if (igx) {
        d += (size_t)sprintf(digits + d, "%0*llu", (int)igx,
                             (unsigned long long)w2l__bl_be(p, dig2bytes[igx]));
        p += dig2bytes[igx];
    }
    for (unsigned k = 0; k < ig0; k++, p += 4)
        d += (size_t)sprintf(digits + d, "%09llu", (unsigned long long)w2l__bl_be(p, 4));
    for (unsigned k = 0; k < fr0; k++, p += 4)
        d += (size_t)sprintf(digits + d, "%09llu", (unsigned long long)w2l__bl_be(p, 4));
    if (frx)
        d += (size_t)sprintf(digits + d, "%0*llu", (int)frx,
                             (unsigned long long)w2l__bl_be(p, dig2bytes[frx]));
    return d;
}

/* Fast path for DECIMAL into a 128-bit unscaled value. */
static void decimal_i128(const uint8_t *src, unsigned prec, unsigned scale, w2l_int128 *out)
{
    static const uint32_t p10[10] = { 1,      10,      100,      1000,      10000,
                                      100000, 1000000, 10000000, 100000000, 1000000000 };
    uint8_t buf[40];
    size_t n = decimal_size(prec, scale);
    memcpy(buf, src, n);
    int neg = !(buf[0] & 0x80);
    buf[0] ^= 0x80;
    if (neg)
        for (size_t i = 0; i < n; i++) buf[i] ^= 0xFF;
    unsigned ig = prec - scale, ig0 = ig / 9, igx = ig % 9, fr0 = scale / 9, frx = scale % 9;
    const uint8_t *p = buf;
    u128 v = 0;
    if (igx) {
        v = w2l__bl_be(p, dig2bytes[igx]);
        p += dig2bytes[igx];
    }
    for (unsigned k = 0; k < ig0 + fr0; k++, p += 4)
        v = v * 1000000000u + (uint32_t)w2l__bl_be(p, 4);
    if (frx) v = v * p10[frx] + (uint32_t)w2l__bl_be(p, dig2bytes[frx]);
    if (neg) v = (u128)0 - v;
    out->lo = (uint64_t)v;
    out->hi = (int64_t)(uint64_t)(v >> 64);
}

/* cp1252 (MySQL's latin1) to UTF-8. */
static const uint16_t cp1252_hi[32] = {0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021,
                                       0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
                                       0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                       0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178};

/* Collation ids of MySQL's latin1 (cp1252). utf8mb4_0900_* (255-323, 8.0+) and every other
 * id are taken as UTF-8 text, as utf8mb4/utf8mb3/ascii are. */
static int is_latin1(uint32_t cs)
{
    return cs == 5 || cs == 8 || cs == 15 || cs == 31 || cs == 47 || cs == 48 || cs == 49 ||
           cs == 94;
}

static w2l_rc text_value(const w2l__bl_col *c, const uint8_t *s, size_t n, w2l_value *v,
                         w2l__bl_scratch *sc, w2l_error *err)
{
    if (c->ice.id == W2L_TYPE_STRING && is_latin1(c->charset)) {
        size_t hi = 0;
        for (size_t i = 0; i < n; i++) hi += s[i] >= 0x80;
        if (hi) {
            char *o = w2l__bl_scratch_alloc(sc, n + hi * 2);
            W2L_NOMEM_IF(!o, err);
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t u = s[i] < 0x80 ? s[i] : s[i] < 0xA0 ? cp1252_hi[s[i] - 0x80] : s[i];
                if (u < 0x80) o[k++] = (char)u;
                else if (u < 0x800) {
                    o[k++] = (char)(0xC0 | u >> 6);
                    o[k++] = (char)(0x80 | (u & 0x3F));
                } else {
                    o[k++] = (char)(0xE0 | u >> 12);
                    o[k++] = (char)(0x80 | ((u >> 6) & 0x3F));
                    o[k++] = (char)(0x80 | (u & 0x3F));
                }
            }
            v->v.bytes.ptr = o;
            v->v.bytes.len = k;
            return W2L_OK;
        }
    }
    v->v.bytes.ptr = (const char *)s;
    v->v.bytes.len = n;
    return W2L_OK;
}

/* *odd is set when a boolean column held a value other than 0 and 1 (it becomes true). */
static w2l_rc int_value(const w2l__bl_col *c, uint64_t u, int64_t sv, w2l_value *v, int *odd,
                        w2l_error *err)
{
    switch (c->ice.id) {
    case W2L_TYPE_BOOLEAN: {
        uint64_t x = c->is_unsigned ? u : (uint64_t)sv;
        v->v.i32 = x != 0;
        if (x > 1) *odd = 1;
        break;
    }
    case W2L_TYPE_INT: v->v.i32 = c->is_unsigned ? (int32_t)u : (int32_t)sv; break;
    case W2L_TYPE_LONG: v->v.i64 = c->is_unsigned ? (int64_t)u : sv; break;
    case W2L_TYPE_DECIMAL:
        if (c->is_unsigned) v->v.dec.lo = u, v->v.dec.hi = 0;
        else v->v.dec.lo = (uint64_t)sv, v->v.dec.hi = sv < 0 ? -1 : 0;
        break;
    case W2L_TYPE_DOUBLE: v->v.f64 = c->is_unsigned ? (double)u : (double)sv; break;
    default:
        return w2l__fail(err, W2L_SCHEMA, "column '%s': integer value for a %s column", c->name,
                         w2l__type_name(c->ice.id));
    }
    return W2L_OK;
}

static int64_t frac_micros(const uint8_t *p, unsigned fsp, int is_signed)
{
    switch ((fsp + 1) / 2) {
    case 1: return (int64_t)(is_signed ? (int8_t)p[0] : p[0]) * 10000;
    case 2:
        return (int64_t)(is_signed ? (int16_t)w2l__bl_be(p, 2) : (int64_t)w2l__bl_be(p, 2)) * 100;
    case 3: {
        int64_t x = (int64_t)w2l__bl_be(p, 3);
        if (is_signed && x >= 0x800000) x -= 0x1000000;
        return x;
    }
    default: return 0;
    }
}

static w2l_rc time_value(const w2l__bl_col *c, int neg, int64_t h, int64_t mi, int64_t s,
                         int64_t us, unsigned fsp, w2l_value *v, w2l__bl_scratch *sc,
                         w2l_error *err)
{
    if (c->ice.id == W2L_TYPE_STRING) {
        char *o = w2l__bl_scratch_alloc(sc, 32);
        W2L_NOMEM_IF(!o, err);
        int k = snprintf(o, 32, "%s%02lld:%02lld:%02lld", neg ? "-" : "", (long long)h,
                         (long long)mi, (long long)s);
        if (fsp) {
            char f[16];
            snprintf(f, sizeof f, "%06lld", (long long)us);
            k += snprintf(o + k, 32 - (size_t)k, ".%.*s", (int)fsp, f);
        }
        v->v.bytes.ptr = o;
        v->v.bytes.len = (size_t)k;
        return W2L_OK;
    }
    if (neg || h >= 24)
        return w2l__fail(err, W2L_SCHEMA,
                         "column '%s': TIME value %s%02lld:%02lld:%02lld is outside 00:00-24:00 "
                         "(set source.time-as-string (--source.time-as-string); a table the lake "
                         "has already keeps its time column: w2l-types(7))",
                         c->name, neg ? "-" : "", (long long)h, (long long)mi, (long long)s);
    v->v.i64 = ((h * 60 + mi) * 60 + s) * 1000000 + us;
    return W2L_OK;
}

static w2l_rc datetime_value(const w2l__bl_col *c, int64_t y, int64_t mo, int64_t d, int64_t h,
                             int64_t mi, int64_t s, int64_t us, w2l_value *v, w2l_error *err)
{
    if (mo == 0 || d == 0) { /* zero dates (0000-00-00) and dates with zero parts */
        v->is_null = 1;
        return W2L_OK;
    }
    /* no server writes these (a negative DATETIME2, a 13th month, a 25th hour): the bytes
     * are damaged, and the arithmetic below would overflow */
    if (y < 0 || y > 9999 || mo < 0 || mo > 12 || d < 0 || d > 31 || h < 0 || h > 23 || mi < 0 ||
        mi > 59 || s < 0 || s > 59 || us < 0 || us > 999999)
        return w2l__fail(
            err, W2L_CORRUPT,
            "column '%s': date/time value %lld-%lld-%lld %lld:%lld:%lld.%06lld is out of range",
            c->name, (long long)y, (long long)mo, (long long)d, (long long)h, (long long)mi,
            (long long)s, (long long)us);
    int64_t days = w2l__days_from_civil(y, (unsigned)mo, (unsigned)d);
    if (c->ice.id == W2L_TYPE_DATE) v->v.i32 = (int32_t)days;
    else if (c->ice.id == W2L_TYPE_TIMESTAMP || c->ice.id == W2L_TYPE_TIMESTAMPTZ)
        v->v.i64 = days * W2L_MICROS_PER_DAY + ((h * 60 + mi) * 60 + s) * 1000000 + us;
    else
        return w2l__fail(err, W2L_SCHEMA, "column '%s': date value for a %s column", c->name,
                         w2l__type_name(c->ice.id));
    return W2L_OK;
}

/* The images of MySQL's PARTIAL_UPDATE_ROWS: a before image whose JSON documents are kept,
 * and an after image whose JSON columns may be diffs against them. */
enum { IMG_PLAIN = 0, IMG_PARTIAL_BEFORE = 1, IMG_PARTIAL_AFTER = 2 };
#define JSON_ABSENT ((size_t)-1)

/* A MySQL JSON column's value as JSON text in scratch: the binary document doc..+n, or,
 * when diffs is not NULL, the before image's document with the diffs applied. */
static w2l_rc json_value(const w2l__bl_tmap *tm, size_t i, const uint8_t *doc, size_t n,
                         const uint8_t *diffs, size_t dlen, w2l_value *v, w2l__bl_scratch *sc,
                         w2l_error *err)
{
    sc->json.len = 0;
    w2l_rc rc = diffs ? w2l__myjson_apply_diffs(doc, n, diffs, dlen, &sc->json, err)
                      : w2l__myjson_text(doc, n, &sc->json, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "binlog: column '%s' of %s.%s: ", tm->cols[i].name, tm->db,
                          tm->table);
        return rc;
    }
    char *o = w2l__bl_scratch_alloc(sc, sc->json.len ? sc->json.len : 1);
    W2L_NOMEM_IF(!o, err);
    if (sc->json.len) memcpy(o, sc->json.data, sc->json.len);
    v->v.bytes.ptr = o;
    v->v.bytes.len = sc->json.len;
    return W2L_OK;
}

static w2l_rc decode_image(const w2l__bl_tmap *tm, const uint8_t *bitmap, const uint8_t **pp,
                           const uint8_t *end, w2l_value *vals, uint8_t *present,
                           uint8_t *coerced, w2l__bl_scratch *sc, int mode, w2l_error *err)
{
    const uint8_t *p = *pp;
    size_t n = tm->ncols, npresent = 0;
    const uint8_t *partial = NULL; /* after image: one bit per JSON column of the table */
    size_t njson = 0;
    if (mode != IMG_PLAIN) {
        if (sc->jcap < n) {
            size_t cap = n < 16 ? 16 : n;
            const uint8_t **d = w2l__realloc(sc->jdoc, cap * sizeof *d);
            if (d) sc->jdoc = d;
            size_t *l = w2l__realloc(sc->jlen, cap * sizeof *l);
            if (l) sc->jlen = l;
            W2L_NOMEM_IF(!d || !l, err);
            sc->jcap = cap;
        }
        if (mode == IMG_PARTIAL_BEFORE)
            for (size_t i = 0; i < n; i++) sc->jdoc[i] = NULL, sc->jlen[i] = JSON_ABSENT;
    }
    if (mode == IMG_PARTIAL_AFTER) { /* value options, then the partial bits */
        uint64_t opts;
        if (w2l__bl_lenenc(&p, end, &opts))
            return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated", tm->db,
                             tm->table);
        for (size_t i = 0; i < n; i++) njson += tm->cols[i].type == BL_JSON;
        if (opts & 1) { /* PARTIAL_JSON_UPDATES */
            if ((size_t)(end - p) < (njson + 7) / 8)
                return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated",
                                 tm->db, tm->table);
            partial = p;
            p += (njson + 7) / 8;
        }
    }
    size_t kjson = 0; /* index among the table's JSON columns */
    for (size_t i = 0; i < n; i++) npresent += (bitmap[i / 8] >> (i % 8)) & 1;
    size_t nb = (npresent + 7) / 8;
    if ((size_t)(end - p) < nb)
        return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated", tm->db,
                         tm->table);
    const uint8_t *nulls = p;
    p += nb;
    memset(present, 0, (n + 7) / 8);
    size_t k = 0; /* index among present columns */
    for (size_t i = 0; i < n; i++) {
        w2l_value *v = &vals[i];
        memset(v, 0, sizeof *v);
        int is_partial = 0;
        if (tm->cols[i].type == BL_JSON) {
            is_partial = partial && (partial[kjson / 8] >> (kjson % 8) & 1);
            kjson++;
        }
        if (!((bitmap[i / 8] >> (i % 8)) & 1)) {
            v->is_null = 1;
            continue;
        }
        present[i / 8] |= (uint8_t)(1u << (i % 8));
        int isnull = (nulls[k / 8] >> (k % 8)) & 1;
        k++;
        if (isnull) {
            v->is_null = 1;
            if (mode == IMG_PARTIAL_BEFORE) sc->jlen[i] = 0;
            continue;
        }
        const w2l__bl_col *c = &tm->cols[i];
        size_t left = (size_t)(end - p);
        int odd = 0;
#define NEED(x)                                                                                   \
    do {                                                                                          \
        if (left < (size_t)(x)) return short_image(tm, i, err);                                   \
    } while (0)
        switch (c->type) {
        case BL_TINY:
            NEED(1);
            W2L_TRY(int_value(c, p[0], (int8_t)p[0], v, &odd, err));
            p += 1;
            break;
        case BL_SHORT:
            NEED(2);
            W2L_TRY(int_value(c, w2l__bl_le(p, 2), (int16_t)w2l__bl_le(p, 2), v, &odd, err));
            p += 2;
            break;
        case BL_INT24: {
            NEED(3);
            uint64_t u = w2l__bl_le(p, 3);
            int64_t s = u & 0x800000 ? (int64_t)u - 0x1000000 : (int64_t)u;
            W2L_TRY(int_value(c, u, s, v, &odd, err));
            p += 3;
            break;
        }
        case BL_LONG:
            NEED(4);
            W2L_TRY(int_value(c, w2l__bl_le(p, 4), (int32_t)w2l__bl_le(p, 4), v, &odd, err));
            p += 4;
            break;
        case BL_LONGLONG:
            NEED(8);
            W2L_TRY(int_value(c, w2l__bl_le(p, 8), (int64_t)w2l__bl_le(p, 8), v, &odd, err));
            p += 8;
            break;
        case BL_YEAR: NEED(1); v->v.i32 = p[0] ? 1900 + p[0] : 0; p += 1; break;
        case BL_FLOAT: {
            NEED(4);
            uint32_t u = (uint32_t)w2l__bl_le(p, 4);
            float f;
            memcpy(&f, &u, 4);
            if (c->ice.id == W2L_TYPE_DOUBLE) v->v.f64 = f;
            else v->v.f32 = f;
            p += 4;
            break;
        }
        case BL_DOUBLE: {
            NEED(8);
            uint64_t u = w2l__bl_le(p, 8);
            memcpy(&v->v.f64, &u, 8);
            p += 8;
            break;
        }
        case BL_NEWDECIMAL: {
            unsigned prec = c->meta >> 8, scale = c->meta & 0xFF;
            if (prec < 1 || prec > 65 || scale > 30 || scale > prec)
                return w2l__fail(err, W2L_CORRUPT, "binlog: column '%s': DECIMAL(%u,%u)", c->name,
                                 prec, scale);
            size_t sz = decimal_size(prec, scale);
            NEED(sz);
            if (c->ice.id == W2L_TYPE_DECIMAL && prec <= 38) {
                decimal_i128(p, prec, scale, &v->v.dec);
                if (c->ice.scale != scale) {
                    w2l_int128 r;
                    if (w2l__decimal_rescale(v->v.dec, scale, c->ice.scale, &r))
                        return w2l__fail(err, W2L_SCHEMA, "column '%s': decimal does not fit",
                                         c->name);
                    v->v.dec = r;
                }
            } else if (c->ice.id == W2L_TYPE_STRING) {
                char digits[96];
                int neg;
                size_t nd = decimal_digits(p, prec, scale, digits, &neg);
                char *o = w2l__bl_scratch_alloc(sc, nd + 4);
                W2L_NOMEM_IF(!o, err);
                size_t ip = nd - scale, st = 0, ko = 0;
                while (st + 1 < ip && digits[st] == '0') st++;
                if (neg) o[ko++] = '-';
                memcpy(o + ko, digits + st, ip - st);
                ko += ip - st;
                if (ip == st) o[ko++] = '0';
                if (scale) {
                    o[ko++] = '.';
                    memcpy(o + ko, digits + ip, scale);
                    ko += scale;
                }
                v->v.bytes.ptr = o;
                v->v.bytes.len = ko;
            } else
                return w2l__fail(err, W2L_SCHEMA, "column '%s': decimal for a %s column", c->name,
                                 w2l__type_name(c->ice.id));
            p += sz;
            break;
        }
        case BL_BIT: {
            size_t nbytes = (c->meta + 7) / 8;
            NEED(nbytes);
            uint64_t u = w2l__bl_be(p, (int)nbytes); /* BIT(64): all 64 bits, >= 2^63 negative */
            if (c->ice.id == W2L_TYPE_BOOLEAN) v->v.i32 = u != 0;
            else v->v.i64 = (int64_t)u;
            p += nbytes;
            break;
        }
        case BL_DATE: case BL_NEWDATE: {
            NEED(3);
            uint32_t u = (uint32_t)w2l__bl_le(p, 3);
            W2L_TRY(datetime_value(c, u >> 9, (u >> 5) & 15, u & 31, 0, 0, 0, 0, v, err));
            p += 3;
            break;
        }
        case BL_DATETIME2: {
            size_t fb = (c->meta + 1) / 2;
            NEED(5 + fb);
            int64_t ip = (int64_t)w2l__bl_be(p, 5) - INT64_C(0x8000000000);
            int64_t us = frac_micros(p + 5, c->meta, 1);
            if (us < 0) { /* never for valid datetimes; keep the arithmetic right anyway */
                ip -= 1;
                us += 1000000;
            }
            int64_t ymd = ip >> 17, ym = ymd >> 5, hms = ip % (1 << 17);
            W2L_TRY(datetime_value(c, ym / 13, ym % 13, ymd % 32, hms >> 12, (hms >> 6) % 64,
                                   hms % 64, us, v, err));
            p += 5 + fb;
            break;
        }
        case BL_DATETIME: { /* old format: YYYYMMDDhhmmss as an integer */
            NEED(8);
            uint64_t x = w2l__bl_le(p, 8);
            uint64_t d = x / 1000000, t = x % 1000000;
            W2L_TRY(datetime_value(c, (int64_t)(d / 10000), (int64_t)(d / 100 % 100),
                                   (int64_t)(d % 100), (int64_t)(t / 10000),
                                   (int64_t)(t / 100 % 100), (int64_t)(t % 100), 0, v, err));
            p += 8;
            break;
        }
        case BL_TIMESTAMP2: case BL_TIMESTAMP: {
            size_t fb = c->type == BL_TIMESTAMP2 ? (c->meta + 1) / 2 : 0;
            NEED(4 + fb);
            int64_t s =
                c->type == BL_TIMESTAMP2 ? (int64_t)w2l__bl_be(p, 4) : (int64_t)w2l__bl_le(p, 4);
            int64_t us = fb ? frac_micros(p + 4, c->meta, 0) : 0;
            if (s == 0 && us == 0) v->is_null = 1; /* the zero timestamp */
            else if (c->ice.id == W2L_TYPE_TIMESTAMPTZ || c->ice.id == W2L_TYPE_TIMESTAMP)
                v->v.i64 = s * 1000000 + us;
            else
                return w2l__fail(err, W2L_SCHEMA, "column '%s': timestamp for a %s column", c->name,
                                 w2l__type_name(c->ice.id));
            p += 4 + fb;
            break;
        }
        case BL_TIME2: {
            size_t fb = (c->meta + 1) / 2;
            NEED(3 + fb);
            int64_t packed;
            int64_t ip = (int64_t)w2l__bl_be(p, 3) - 0x800000;
            switch (fb) {
            case 1: {
                int64_t f = p[3];
                if (ip < 0 && f) ip++, f -= 0x100;
                packed = ip * (1 << 24) + f * 10000;
                break;
            }
            case 2: {
                int64_t f = (int64_t)w2l__bl_be(p + 3, 2);
                if (ip < 0 && f) ip++, f -= 0x10000;
                packed = ip * (1 << 24) + f * 100;
                break;
            }
            case 3: packed = (int64_t)w2l__bl_be(p, 6) - INT64_C(0x800000000000); break;
            default: packed = ip * (1 << 24);
            }
            int neg = packed < 0;
            if (neg) packed = -packed;
            int64_t hms = packed >> 24, us = packed % (1 << 24);
            W2L_TRY(time_value(c, neg, (hms >> 12) % (1 << 10), (hms >> 6) % 64, hms % 64, us,
                               c->meta, v, sc, err));
            p += 3 + fb;
            break;
        }
        case BL_TIME: { /* old format: [-]HHMMSS as a 3-byte integer */
            NEED(3);
            int64_t x = (int64_t)w2l__bl_le(p, 3);
            if (x & 0x800000) x -= 0x1000000;
            int neg = x < 0;
            if (neg) x = -x;
            W2L_TRY(time_value(c, neg, x / 10000, x / 100 % 100, x % 100, 0, 0, v, sc, err));
            p += 3;
            break;
        }
        case BL_VARCHAR: case BL_VAR_STRING: case BL_STRING: {
            size_t lb = c->meta > 255 ? 2 : 1;
            NEED(lb);
            size_t l = (size_t)w2l__bl_le(p, (int)lb);
            NEED(lb + l);
            if (c->type == BL_STRING && c->ice.id == W2L_TYPE_BINARY && c->charset == 63 &&
                l < c->meta) {
                char *o = w2l__bl_scratch_alloc(
                    sc, c->meta); /* BINARY(n): restore the stripped 0x00 padding */
                W2L_NOMEM_IF(!o, err);
                memcpy(o, p + lb, l);
                memset(o + l, 0, c->meta - l);
                v->v.bytes.ptr = o;
                v->v.bytes.len = c->meta;
            } else
                W2L_TRY(text_value(c, p + lb, l, v, sc, err));
            p += lb + l;
            break;
        }
        case BL_BLOB:
        case BL_TINY_BLOB:
        case BL_MEDIUM_BLOB:
        case BL_LONG_BLOB:
        case BL_JSON:
        case BL_VECTOR:
        case BL_GEOMETRY: {
            size_t lb = c->meta >= 1 && c->meta <= 4 ? c->meta : 4;
            NEED(lb);
            size_t l = (size_t)w2l__bl_le(p, (int)lb);
            NEED(lb + l);
            if (c->type == BL_GEOMETRY) { /* 4-byte LE SRID, then the WKB: the WKB is the value */
                if (l < 4 + 5)
                    return w2l__fail(err, W2L_CORRUPT,
                                     "binlog: column '%s' of %s.%s: geometry value of %zu bytes "
                                     "(want a 4-byte SRID and WKB)",
                                     c->name, tm->db, tm->table, l);
                v->v.bytes.ptr = (const char *)p + lb + 4;
                v->v.bytes.len = l - 4;
            } else if (c->type == BL_JSON && tm->mysql) { /* binary JSON */
                if (mode == IMG_PARTIAL_BEFORE) {
                    sc->jdoc[i] = p + lb;
                    sc->jlen[i] = l;
                }
                if (is_partial) {
                    if (!sc->jdoc[i] || sc->jlen[i] == JSON_ABSENT)
                        return w2l__fail(
                            err, W2L_SOURCE,
                            "binlog: column '%s' of %s.%s: a partial JSON update (the source "
                            "runs with binlog_row_value_options=PARTIAL_JSON) whose before "
                            "image %s the document; set binlog_row_value_options='' (or "
                            "binlog_row_image=FULL) on the source",
                            c->name, tm->db, tm->table,
                            sc->jlen[i] == JSON_ABSENT ? "lacks" : "has NULL for");
                    W2L_TRY(json_value(tm, i, sc->jdoc[i], sc->jlen[i], p + lb, l, v, sc, err));
                } else W2L_TRY(json_value(tm, i, p + lb, l, NULL, 0, v, sc, err));
            } else if (c->type == BL_VECTOR) { /* 4-byte floats, as stored */
                v->v.bytes.ptr = (const char *)p + lb;
                v->v.bytes.len = l;
            } else W2L_TRY(text_value(c, p + lb, l, v, sc, err));
            p += lb + l;
            break;
        }
        case BL_ENUM: {
            size_t lb = c->meta == 2 ? 2 : 1;
            NEED(lb);
            uint64_t idx = w2l__bl_le(p, (int)lb);
            if (idx == 0) v->v.bytes.ptr = "", v->v.bytes.len = 0;
            else if (idx <= c->nvalues) {
                v->v.bytes.ptr = c->values[idx - 1];
                v->v.bytes.len = strlen(c->values[idx - 1]);
            } else
                return w2l__fail(
                    err, W2L_CORRUPT,
                    "binlog: column '%s': ENUM index %llu of %zu values (no FULL row metadata?)",
                    c->name, (unsigned long long)idx, c->nvalues);
            p += lb;
            break;
        }
        case BL_SET: {
            size_t lb = c->meta >= 1 && c->meta <= 8 ? c->meta : 8;
            NEED(lb);
            uint64_t mask = w2l__bl_le(p, (int)lb);
            size_t total = 0;
            for (size_t b = 0; b < c->nvalues && b < 64; b++)
                if (mask >> b & 1) total += strlen(c->values[b]) + 1;
            char *o = w2l__bl_scratch_alloc(sc, total + 1);
            W2L_NOMEM_IF(!o, err);
            size_t ko = 0;
            for (size_t b = 0; b < c->nvalues && b < 64; b++)
                if (mask >> b & 1) {
                    if (ko) o[ko++] = ',';
                    size_t l = strlen(c->values[b]);
                    memcpy(o + ko, c->values[b], l);
                    ko += l;
                }
            v->v.bytes.ptr = o;
            v->v.bytes.len = ko;
            p += lb;
            break;
        }
        case BL_NULL: v->is_null = 1; break;
        default:
            return w2l__fail(err, W2L_SCHEMA,
                             "binlog: column '%s' of %s.%s: binlog type %u is not supported",
                             c->name, tm->db, tm->table, c->type);
        }
#undef NEED
        if (odd && coerced) coerced[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    *pp = p;
    return W2L_OK;
}

w2l_rc w2l__bl_decode_row(const w2l__bl_tmap *tm, const uint8_t *bitmap, const uint8_t **pp,
                          const uint8_t *end, w2l_value *vals, uint8_t *present, uint8_t *coerced,
                          w2l__bl_scratch *sc, w2l_error *err)
{
    return decode_image(tm, bitmap, pp, end, vals, present, coerced, sc, IMG_PLAIN, err);
}

w2l_rc w2l__bl_decode_image(const w2l__bl_event *ev, int after, const uint8_t **pp,
                            w2l_value *vals, uint8_t *present, uint8_t *coerced,
                            w2l__bl_scratch *sc, w2l_error *err)
{
    const w2l__bl_tmap *tm = ev->tmap;
    if (!tm)
        return w2l__fail(err, W2L_CORRUPT, "binlog: rows event for table id %llu, never mapped",
                         (unsigned long long)ev->table_id);
    int mode = !ev->partial_json ? IMG_PLAIN : after ? IMG_PARTIAL_AFTER : IMG_PARTIAL_BEFORE;
    return decode_image(tm, after ? ev->bitmap2 : ev->bitmap1, pp, ev->end, vals, present,
                        coerced, sc, mode, err);
}
