/*
 * Iceberg's binary single-value serialization (spec appendix D), the form of lower and
 * upper bounds in manifests:
 *   boolean            1 byte, 0x00 or 0x01
 *   int, date          4 bytes little-endian
 *   long, time,        8 bytes little-endian (micros for time and timestamps)
 *   timestamp(tz)
 *   float, double      IEEE 754 bits, 4 or 8 bytes little-endian
 *   decimal            unscaled value, big-endian two's complement, fewest bytes
 *   string, binary     the bytes themselves, no length
 * Example: long 1 -> 01 00 00 00 00 00 00 00; decimal(9,2) -1.28 -> 80.
 */
#include "model.h"

static uint64_t get_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
    return v;
}

size_t w2l__value_to_bytes(w2l_type t, const w2l_value *v, unsigned char *out, size_t cap)
{
    unsigned char tmp[16];
    size_t n = 0;
    uint32_t u32;
    uint64_t u64;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        tmp[0] = v->v.i32 != 0;
        n = 1;
        break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE:
        w2l__put_le(tmp, (uint32_t)v->v.i32, n = 4);
        break;
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ:
        w2l__put_le(tmp, (uint64_t)v->v.i64, n = 8);
        break;
    case W2L_TYPE_FLOAT:
        memcpy(&u32, &v->v.f32, 4);
        w2l__put_le(tmp, u32, n = 4);
        break;
    case W2L_TYPE_DOUBLE:
        memcpy(&u64, &v->v.f64, 8);
        w2l__put_le(tmp, u64, n = 8);
        break;
    case W2L_TYPE_DECIMAL:
        n = w2l__decimal_to_be_min(v->v.dec, tmp);
        break;
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY:
        if (v->v.bytes.len <= cap && v->v.bytes.len) memcpy(out, v->v.bytes.ptr, v->v.bytes.len);
        return v->v.bytes.len;
    }
    if (n <= cap) memcpy(out, tmp, n);
    return n;
}

w2l_rc w2l__value_from_bytes(w2l_type t, const unsigned char *p, size_t n, w2l_value *out,
                             w2l_error *err)
{
    size_t want = 0;
    w2l_value v;
    memset(&v, 0, sizeof v);
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: want = 1; break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE:
    case W2L_TYPE_FLOAT: want = 4; break;
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ:
    case W2L_TYPE_DOUBLE: want = 8; break;
    case W2L_TYPE_DECIMAL:
        if (w2l__decimal_from_be(p, n, &v.v.dec) != 0)
            return w2l__fail(err, W2L_CORRUPT, "decimal bound of %zu bytes (need 1..16)", n);
        *out = v;
        return W2L_OK;
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY:
        v.v.bytes.ptr = (const char *)p;
        v.v.bytes.len = n;
        *out = v;
        return W2L_OK;
    default:
        return w2l__fail(err, W2L_MISUSE, "single value of unknown type %d", (int)t.id);
    }
    if (n != want)
        return w2l__fail(err, W2L_CORRUPT, "%s bound of %zu bytes (need %zu)", w2l__type_name(t.id),
                         n, want);
    uint64_t u = get_le(p, n);
    uint32_t u32 = (uint32_t)u;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: v.v.i32 = p[0] != 0; break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: memcpy(&v.v.i32, &u32, 4); break;
    case W2L_TYPE_FLOAT: memcpy(&v.v.f32, &u32, 4); break;
    case W2L_TYPE_DOUBLE: memcpy(&v.v.f64, &u, 8); break;
    default: memcpy(&v.v.i64, &u, 8); break;
    }
    *out = v;
    return W2L_OK;
}
