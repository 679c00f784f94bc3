/*
 * Parquet's RLE / bit-packing hybrid: definition levels and dictionary indices
 * (Parquet "Encodings.md", RLE = 3).
 *
 * Byte grammar:
 *   runs          := run*
 *   run           := rle-run | bit-packed-run
 *   rle-run       := varint(count << 1) value       value: ceil(width/8) bytes, little endian
 *   bit-packed-run:= varint(groups << 1 | 1) packed packed: groups * width bytes holding
 *                    groups*8 values, LSB first (value k at bit k*width)
 * Example, width 1, the 12 values 1 1 1 1 1 1 1 1 1 1 0 1 take 4 bytes:
 *   14 01     RLE run: count 10 (header 10 << 1 = 0x14), value byte 0x01
 *   03 02     bit-packed run: 1 group (header 1 << 1 | 1), values 0 1 then six zero pads
 * and a run of 100 ones alone is c8 01 01 (header 200 as a varint, value 1): 3 bytes.
 *
 * Encoder: values repeated 8 or more times become an RLE run; everything else is gathered
 * into bit-packed groups of 8. A run that starts inside a pending group first lends values to
 * complete that group, so bit-packed runs stay multiples of 8 except the final one, which is
 * padded with zeros (readers stop at the value count they know).
 */
#include "pq_int.h"

void w2l__bitpack_u32(const uint32_t *v, size_t n, int w, uint8_t *dst)
{
    if (w == 0) return;
    if (w == 1) {
        for (size_t i = 0; i < n; i += 8)
            *dst++ = (uint8_t)(v[i] | v[i + 1] << 1 | v[i + 2] << 2 | v[i + 3] << 3 |
                               v[i + 4] << 4 | v[i + 5] << 5 | v[i + 6] << 6 | v[i + 7] << 7);
        return;
    }
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (uint64_t)v[i] << bits;
        bits += w;
        while (bits >= 8) {
            *dst++ = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

static void bitpack_u8(const uint8_t *v, size_t n, int w, uint8_t *dst)
{
    if (w == 0) return;
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (uint64_t)v[i] << bits;
        bits += w;
        while (bits >= 8) {
            *dst++ = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

static size_t worst_case(size_t n, int w)
{
    /* a literal group of 8 costs w bytes, an RLE run of >= 8 values at most 10 + 4 bytes;
     * plus headers and the final padded group */
    return (n / 8 + 2) * ((size_t)w + 15) + 16;
}

/* The end of the run of v that continues at a[j] (definition levels: a page of a column
 * without NULLs is one run of 1s, so eight bytes are compared at a time). */
static inline size_t run_end_u8(const uint8_t *a, size_t j, size_t n, uint8_t v)
{
    const uint64_t all = 0x0101010101010101ULL * v;
    for (uint64_t w; j + 8 <= n; j += 8) {
        memcpy(&w, a + j, 8);
        if (w != all) break;
    }
    while (j < n && a[j] == v) j++;
    return j;
}

static inline size_t run_end_u32(const uint32_t *a, size_t j, size_t n, uint32_t v)
{
    while (j < n && a[j] == v) j++;
    return j;
}

#define RLE_ENCODER(NAME, T, PACK, RUN_END)                                                 \
    w2l_rc NAME(const T *a, size_t n, int w, w2l_buf *out, w2l_error *err)                  \
    {                                                                                       \
        W2L_TRY(w2l__buf_reserve(out, worst_case(n, w), err));                              \
        uint8_t *o = out->data + out->len;                                                  \
        const int vbytes = (w + 7) / 8;                                                     \
        size_t lit = 0, i = 0;                                                              \
        while (i < n) {                                                                     \
            const T v = a[i];                                                               \
            size_t j = RUN_END(a, i + 1, n, v);                                             \
            size_t run = j - i;                                                             \
            if (run >= 8) {                                                                 \
                size_t pad = (8 - (i - lit) % 8) % 8;                                       \
                if (run - pad >= 8) {                                                       \
                    size_t nlit = i - lit + pad;                                            \
                    if (nlit) {                                                             \
                        o += w2l__uvarint_put(o, (uint64_t)(nlit / 8) << 1 | 1);            \
                        PACK(a + lit, nlit, w, o);                                          \
                        o += nlit / 8 * (size_t)w;                                          \
                    }                                                                       \
                    o += w2l__uvarint_put(o, (uint64_t)(run - pad) << 1);                   \
                    for (int k = 0; k < vbytes; k++) *o++ = (uint8_t)((uint64_t)v >> (8 * k)); \
                    lit = j;                                                                \
                }                                                                           \
            }                                                                               \
            i = j;                                                                          \
        }                                                                                   \
        if (lit < n) {                                                                      \
            size_t nlit = n - lit, full = nlit / 8 * 8;                                     \
            o += w2l__uvarint_put(o, (uint64_t)((nlit + 7) / 8) << 1 | 1);                  \
            PACK(a + lit, full, w, o);                                                      \
            o += full / 8 * (size_t)w;                                                      \
            if (full < nlit) {                                                              \
                T tail[8] = {0};                                                            \
                for (size_t k = 0; k < nlit - full; k++) tail[k] = a[lit + full + k];       \
                PACK(tail, 8, w, o);                                                        \
                o += (size_t)w;                                                             \
            }                                                                               \
        }                                                                                   \
        out->len = (size_t)(o - out->data);                                                 \
        return W2L_OK;                                                                      \
    }

RLE_ENCODER(w2l__rle_encode_u32, uint32_t, w2l__bitpack_u32, run_end_u32)
RLE_ENCODER(w2l__rle_encode_u8, uint8_t, bitpack_u8, run_end_u8)

w2l_rc w2l__rle_decode_u32(const uint8_t *src, size_t len, int w, uint32_t *out, size_t n,
                           uint32_t max_value, size_t *used, w2l_error *err)
{
    if (w < 0 || w > 32) return w2l__fail(err, W2L_CORRUPT, "RLE bit width %d", w);
    const uint8_t *p = src, *end = src + len;
    const int vbytes = (w + 7) / 8;
    size_t o = 0;
    while (o < n) {
        uint64_t h = 0;
        int shift = 0;
        for (;;) {
            if (p >= end)
                return w2l__fail(err, W2L_CORRUPT, "RLE runs end after %zu of %zu values", o, n);
            if (shift > 56) return w2l__fail(err, W2L_CORRUPT, "RLE run header too long");
            uint8_t b = *p++;
            h |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (h & 1) {
            uint64_t groups = h >> 1;
            if (groups == 0) return w2l__fail(err, W2L_CORRUPT, "empty bit-packed run");
            size_t want = n - o;
            if (groups < (want + 7) / 8) want = (size_t)groups * 8;
            size_t need = (want * (size_t)w + 7) / 8;
            if (need > (size_t)(end - p))
                return w2l__fail(err, W2L_CORRUPT,
                                 "bit-packed run of %zu values needs %zu bytes, %zu left",
                                 want, need, (size_t)(end - p));
            uint64_t acc = 0;
            int bits = 0;
            const uint8_t *q = p;
            uint32_t mask = w == 32 ? 0xffffffffu : ((1u << w) - 1);
            for (size_t k = 0; k < want; k++) {
                while (bits < w) {
                    acc |= (uint64_t)*q++ << bits;
                    bits += 8;
                }
                uint32_t v = (uint32_t)acc & mask;
                acc >>= w;
                bits -= w;
                if (v > max_value)
                    return w2l__fail(err, W2L_CORRUPT, "RLE value %u above %u at value %zu", v,
                                     max_value, o + k);
                out[o + k] = v;
            }
            o += want;
            /* skip the rest of the run (padding), as far as the bytes go */
            uint64_t run_bytes = groups * (uint64_t)w;
            p = run_bytes > (uint64_t)(end - p) ? end : p + run_bytes;
        } else {
            uint64_t count = h >> 1;
            if (count == 0) return w2l__fail(err, W2L_CORRUPT, "empty RLE run");
            if (vbytes > end - p)
                return w2l__fail(err, W2L_CORRUPT, "RLE run value truncated");
            uint32_t v = 0;
            for (int k = 0; k < vbytes; k++) v |= (uint32_t)p[k] << (8 * k);
            p += vbytes;
            if (v > max_value)
                return w2l__fail(err, W2L_CORRUPT, "RLE value %u above %u at value %zu", v,
                                 max_value, o);
            size_t take = count < n - o ? (size_t)count : n - o;
            for (size_t k = 0; k < take; k++) out[o + k] = v;
            o += take;
        }
    }
    if (used) *used = (size_t)(p - src);
    return W2L_OK;
}
