/*
 * Thrift compact protocol, the encoding of Parquet's footer (FileMetaData) and page headers.
 * Only what parquet.thrift uses: structs, i8..i64, bool, binary, list.
 *
 * Byte grammar (Apache Thrift "compact protocol" specification):
 *   struct      := field* 0x00
 *   field       := (delta<<4 | type) value          delta = id - previous id, 1..15
 *                | (type) zigzag-varint(id) value   otherwise
 *   bool field  := the type nibble itself is 1 (true) or 2 (false); no value byte
 *   i16/i32/i64 := zigzag, then ULEB128 varint      zigzag(n) = (n << 1) ^ (n >> 63)
 *   binary      := varint(length) bytes
 *   list        := (size<<4 | elemtype) elems       size 0..14
 *                | (0xF0 | elemtype) varint(size) elems
 * Example: struct { 1: i32 = 3, 2: binary = "ab", 4: bool = true } is 7 bytes:
 *   15 06 | 18 02 61 62 | 21 | 00
 *   (0x15: delta 1, i32; 6 = zigzag(3); 0x18: delta 1, binary, length 2; 0x21: delta 2,
 *   true; 0x00 stop).
 *
 * The reader never trusts a length: every varint is bounded to 10 bytes, every binary and
 * list size is checked against the bytes left, nesting is limited to 32 levels.
 */
#include <stdio.h>

#include "pq_int.h"

/* ---- writer ---- */

void w2l__tc_writer_init(w2l__tc_writer *w, w2l_buf *out, w2l_error *err)
{
    w->out = out;
    w->err = err;
    w->rc = W2L_OK;
    w->depth = 0;
    w->last[0] = 0;
}

size_t w2l__uvarint_put(uint8_t *dst, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        dst[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[n++] = (uint8_t)v;
    return n;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static void put(w2l__tc_writer *w, const void *p, size_t n)
{
    if (w->rc != W2L_OK) return;
    w->rc = w2l__pq_put(w->out, p, n, w->err);
}

static void put_uvarint(w2l__tc_writer *w, uint64_t v)
{
    uint8_t b[10];
    put(w, b, w2l__uvarint_put(b, v));
}

static void field_header(w2l__tc_writer *w, int16_t id, int type)
{
    int16_t *last = &w->last[w->depth];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        uint8_t b = (uint8_t)(delta << 4 | type);
        put(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)type;
        put(w, &b, 1);
        put_uvarint(w, zigzag(id));
    }
    *last = id;
}

void w2l__tc_struct_begin(w2l__tc_writer *w)
{
    if (w->depth + 1 >= W2L__TC_MAX_DEPTH) {
        if (w->rc == W2L_OK) w->rc = w2l__fail(w->err, W2L_ERROR, "thrift: nesting too deep");
        return;
    }
    w->last[++w->depth] = 0;
}

void w2l__tc_struct_end(w2l__tc_writer *w)
{
    uint8_t stop = TC_STOP;
    put(w, &stop, 1);
    if (w->depth > 0) w->depth--;
}

void w2l__tc_field_bool(w2l__tc_writer *w, int16_t id, int v)
{
    field_header(w, id, v ? TC_TRUE : TC_FALSE);
}

void w2l__tc_field_i32(w2l__tc_writer *w, int16_t id, int32_t v)
{
    field_header(w, id, TC_I32);
    put_uvarint(w, zigzag(v));
}

void w2l__tc_field_i64(w2l__tc_writer *w, int16_t id, int64_t v)
{
    field_header(w, id, TC_I64);
    put_uvarint(w, zigzag(v));
}

void w2l__tc_field_binary(w2l__tc_writer *w, int16_t id, const void *p, size_t n)
{
    field_header(w, id, TC_BINARY);
    w2l__tc_binary(w, p, n);
}

void w2l__tc_field_string(w2l__tc_writer *w, int16_t id, const char *s)
{
    w2l__tc_field_binary(w, id, s, strlen(s));
}

void w2l__tc_field_struct(w2l__tc_writer *w, int16_t id)
{
    field_header(w, id, TC_STRUCT);
    w2l__tc_struct_begin(w);
}

void w2l__tc_field_list(w2l__tc_writer *w, int16_t id, int elem_type, size_t n)
{
    field_header(w, id, TC_LIST);
    if (n < 15) {
        uint8_t b = (uint8_t)(n << 4 | (size_t)elem_type);
        put(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)(0xF0 | elem_type);
        put(w, &b, 1);
        put_uvarint(w, n);
    }
}

void w2l__tc_i32(w2l__tc_writer *w, int32_t v) { put_uvarint(w, zigzag(v)); }

void w2l__tc_binary(w2l__tc_writer *w, const void *p, size_t n)
{
    put_uvarint(w, n);
    if (n) put(w, p, n);
}

/* ---- reader ---- */

void w2l__tc_reader_init(w2l__tc_reader *r, const void *p, size_t n, const char *what,
                         w2l_error *err)
{
    r->base = r->p = p;
    r->end = r->p + n;
    r->err = err;
    r->rc = W2L_OK;
    r->depth = 0;
    r->what = what;
}

w2l_rc w2l__tc_corrupt(w2l__tc_reader *r, const char *fmt, ...)
{
    if (r->rc != W2L_OK) return r->rc;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->rc = w2l__fail(r->err, W2L_CORRUPT, "%s: %s at byte %zu", r->what, msg,
                      (size_t)(r->p - r->base));
    r->p = r->end; /* every later read sees no bytes */
    return r->rc;
}

uint64_t w2l__tc_read_uvarint(w2l__tc_reader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) {
            w2l__tc_corrupt(r, "truncated varint");
            return 0;
        }
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) break;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    w2l__tc_corrupt(r, "varint longer than 64 bits");
    return 0;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int w2l__tc_next_field(w2l__tc_reader *r, int16_t *last, int *type, int16_t *id)
{
    if (r->rc != W2L_OK) return 0;
    if (r->p >= r->end) {
        w2l__tc_corrupt(r, "truncated struct");
        return 0;
    }
    uint8_t b = *r->p++;
    if (b == TC_STOP) return 0;
    *type = b & 0x0f;
    int delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last + delta);
    } else {
        int64_t v = unzigzag(w2l__tc_read_uvarint(r));
        if (v < INT16_MIN || v > INT16_MAX) {
            w2l__tc_corrupt(r, "field id %lld out of range", (long long)v);
            return 0;
        }
        *id = (int16_t)v;
    }
    if (*type > TC_STRUCT) {
        w2l__tc_corrupt(r, "unknown field type %d", *type);
        return 0;
    }
    *last = *id;
    return r->rc == W2L_OK;
}

int64_t w2l__tc_read_int(w2l__tc_reader *r, int type)
{
    switch (type) {
    case TC_BYTE:
        if (r->p >= r->end) {
            w2l__tc_corrupt(r, "truncated byte");
            return 0;
        }
        return (int8_t)*r->p++;
    case TC_I16:
    case TC_I32:
    case TC_I64: {
        int64_t v = unzigzag(w2l__tc_read_uvarint(r));
        if (type == TC_I16 && (v < INT16_MIN || v > INT16_MAX))
            w2l__tc_corrupt(r, "i16 out of range");
        if (type == TC_I32 && (v < INT32_MIN || v > INT32_MAX))
            w2l__tc_corrupt(r, "i32 out of range");
        return r->rc == W2L_OK ? v : 0;
    }
    default:
        w2l__tc_corrupt(r, "expected an integer, found type %d", type);
        return 0;
    }
}

int w2l__tc_read_bool(w2l__tc_reader *r, int type)
{
    if (type == TC_TRUE) return 1;
    if (type == TC_FALSE) return 0;
    w2l__tc_corrupt(r, "expected a bool, found type %d", type);
    return 0;
}

const uint8_t *w2l__tc_read_binary(w2l__tc_reader *r, size_t *len)
{
    uint64_t n = w2l__tc_read_uvarint(r);
    *len = 0;
    if (r->rc != W2L_OK) return NULL;
    if (n > (uint64_t)(r->end - r->p)) {
        w2l__tc_corrupt(r, "binary of %llu bytes exceeds the %zu left", (unsigned long long)n,
                        (size_t)(r->end - r->p));
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    *len = (size_t)n;
    return p;
}

size_t w2l__tc_read_list(w2l__tc_reader *r, int *elem_type)
{
    if (r->p >= r->end) {
        w2l__tc_corrupt(r, "truncated list header");
        return 0;
    }
    uint8_t b = *r->p++;
    *elem_type = b & 0x0f;
    uint64_t n = b >> 4;
    if (n == 15) n = w2l__tc_read_uvarint(r);
    if (r->rc != W2L_OK) return 0;
    /* every element takes at least one byte, except bools packed in the header (never in
     * Parquet) */
    if (n > (uint64_t)(r->end - r->p)) {
        w2l__tc_corrupt(r, "list of %llu elements exceeds the %zu bytes left",
                        (unsigned long long)n, (size_t)(r->end - r->p));
        return 0;
    }
    if (*elem_type > TC_STRUCT || *elem_type == TC_STOP) {
        w2l__tc_corrupt(r, "unknown list element type %d", *elem_type);
        return 0;
    }
    return (size_t)n;
}

int w2l__tc_enter(w2l__tc_reader *r)
{
    if (r->rc != W2L_OK) return 0;
    if (++r->depth > W2L__TC_MAX_DEPTH) {
        w2l__tc_corrupt(r, "nesting deeper than %d", W2L__TC_MAX_DEPTH);
        return 0;
    }
    return 1;
}

void w2l__tc_leave(w2l__tc_reader *r) { r->depth--; }

void w2l__tc_skip(w2l__tc_reader *r, int type)
{
    if (r->rc != W2L_OK) return;
    switch (type) {
    case TC_TRUE:
    case TC_FALSE:
        return; /* value in the field header; in lists handled by the caller */
    case TC_BYTE:
    case TC_I16:
    case TC_I32:
    case TC_I64:
        (void)w2l__tc_read_int(r, type);
        return;
    case TC_DOUBLE:
        if (r->end - r->p < 8) {
            w2l__tc_corrupt(r, "truncated double");
            return;
        }
        r->p += 8;
        return;
    case TC_BINARY: {
        size_t n;
        (void)w2l__tc_read_binary(r, &n);
        return;
    }
    case TC_LIST:
    case TC_SET: {
        int et;
        size_t n = w2l__tc_read_list(r, &et);
        if (!w2l__tc_enter(r)) return;
        for (size_t i = 0; i < n && r->rc == W2L_OK; i++) {
            if (et == TC_TRUE || et == TC_FALSE) {
                if (r->p >= r->end) w2l__tc_corrupt(r, "truncated bool");
                else r->p++;
            } else {
                w2l__tc_skip(r, et);
            }
        }
        w2l__tc_leave(r);
        return;
    }
    case TC_MAP: {
        uint64_t n = w2l__tc_read_uvarint(r);
        if (n == 0 || r->rc != W2L_OK) return;
        if (r->p >= r->end || n > (uint64_t)(r->end - r->p)) {
            w2l__tc_corrupt(r, "map of %llu entries exceeds the bytes left", (unsigned long long)n);
            return;
        }
        uint8_t kv = *r->p++;
        if (!w2l__tc_enter(r)) return;
        for (uint64_t i = 0; i < n && r->rc == W2L_OK; i++) {
            w2l__tc_skip(r, kv >> 4);
            w2l__tc_skip(r, kv & 0x0f);
        }
        w2l__tc_leave(r);
        return;
    }
    case TC_STRUCT: {
        if (!w2l__tc_enter(r)) return;
        int16_t last = 0, id;
        int t;
        while (w2l__tc_next_field(r, &last, &t, &id)) w2l__tc_skip(r, t);
        w2l__tc_leave(r);
        return;
    }
    default:
        w2l__tc_corrupt(r, "cannot skip type %d", type);
    }
}
