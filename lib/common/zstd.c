/*
 * The one file that includes <zstd.h> (RFC 8878 frames): one-shot compression and
 * decompression for Parquet pages (lib/parquet/pq_zstd.c) and a streaming decompressor for
 * MySQL's TRANSACTION_PAYLOAD, whose frames need not state their size
 * (lib/source/binlog_mysql.c). No zstd type leaves this file: each handle of zstd.h is the
 * zstd context itself, cast, so wrapping costs no allocation of its own.
 * zstd allocates through the library's allocator (ZSTD_customMem), so out-of-memory tests
 * reach it too; its memory errors become W2L_NOMEM.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_create?Ctx_advanced */
#include <zstd.h>
#include <zstd_errors.h>

#include "zstd.h"

static void *zalloc(void *opaque, size_t n)
{
    (void)opaque;
    return w2l__malloc(n);
}

static void zfree(void *opaque, void *p)
{
    (void)opaque;
    w2l__free(p);
}

static const ZSTD_customMem zmem = {zalloc, zfree, NULL};

/* zstd's error r as W2L_NOMEM, or as code, "zstd: " + its name. */
static w2l_rc zfail(size_t r, w2l_rc code, w2l_error *err)
{
    if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation) code = W2L_NOMEM;
    return w2l__fail(err, code, "zstd: %s", ZSTD_getErrorName(r));
}

/* ---- compression ---- */

w2l__zstd_cctx *w2l__zstd_cctx_new(void)
{
    return (w2l__zstd_cctx *)ZSTD_createCCtx_advanced(zmem);
}

void w2l__zstd_cctx_free(w2l__zstd_cctx *c) { ZSTD_freeCCtx((ZSTD_CCtx *)c); }

w2l_rc w2l__zstd_cctx_set(w2l__zstd_cctx *c, const w2l__zstd_params *p, w2l_error *err)
{
    ZSTD_CCtx *z = (ZSTD_CCtx *)c;
    /* forget what an earlier call set: an unset field then takes the level's value */
    size_t r = ZSTD_CCtx_reset(z, ZSTD_reset_parameters);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, p->level);
    if (!ZSTD_isError(r) && p->hash_log) r = ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, p->hash_log);
    if (!ZSTD_isError(r) && p->chain_log)
        r = ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, p->chain_log);
    if (!ZSTD_isError(r) && p->min_match)
        r = ZSTD_CCtx_setParameter(z, ZSTD_c_minMatch, p->min_match);
    if (ZSTD_isError(r))
        return w2l__fail(err, W2L_MISUSE, "zstd level %d (tables 2^%d, 2^%d, matches of %d): %s",
                         p->level, p->hash_log, p->chain_log, p->min_match,
                         ZSTD_getErrorName(r));
    return W2L_OK;
}

size_t w2l__zstd_bound(size_t n) { return ZSTD_compressBound(n); }

w2l_rc w2l__zstd_compress(w2l__zstd_cctx *c, void *dst, size_t dst_cap, const void *src,
                          size_t n, size_t *out_len, w2l_error *err)
{
    size_t r = ZSTD_compress2((ZSTD_CCtx *)c, dst, dst_cap, src, n);
    if (ZSTD_isError(r)) return zfail(r, W2L_ERROR, err);
    *out_len = r;
    return W2L_OK;
}

/* RFC 8878: magic, a frame header of one segment stating its content size, then raw blocks
 * (3-byte header: last flag, type 0 = raw, size << 3) of at most 128 KiB each. */
size_t w2l__zstd_stored_bound(size_t n) { return 4 + 1 + 8 + 3 * (n / ZSTD_BLOCKSIZE_MAX + 1) + n; }

w2l_rc w2l__zstd_store(void *dst, size_t dst_cap, const void *src, size_t n, size_t *out_len,
                       w2l_error *err)
{
    if (dst_cap < w2l__zstd_stored_bound(n))
        return w2l__fail(err, W2L_MISUSE, "zstd: %zu bytes stored into %zu", n, dst_cap);
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t o;
    w2l__put_le(d, ZSTD_MAGICNUMBER, 4);
    o = 4;
    /* descriptor: single segment (bit 5) and the content size field's width (bits 6-7):
     * 1 byte (below 256), 2 bytes (n - 256, below 65792), 4 or 8 bytes */
    if (n < 256) {
        d[o++] = 0x20;
        d[o++] = (uint8_t)n;
    } else if (n < 65536 + 256) {
        d[o++] = 0x60;
        w2l__put_le(d + o, n - 256, 2);
        o += 2;
    } else if ((uint64_t)n <= UINT32_MAX) {
        d[o++] = 0xA0;
        w2l__put_le(d + o, n, 4);
        o += 4;
    } else {
        d[o++] = 0xE0;
        w2l__put_le(d + o, n, 8);
        o += 8;
    }
    size_t at = 0;
    do {
        size_t b = n - at < ZSTD_BLOCKSIZE_MAX ? n - at : ZSTD_BLOCKSIZE_MAX;
        uint32_t bh = (uint32_t)(b << 3) | (at + b == n ? 1u : 0u);
        w2l__put_le(d + o, bh, 3);
        if (b) memcpy(d + o + 3, s + at, b);
        o += 3 + b;
        at += b;
    } while (at < n);
    *out_len = o;
    return W2L_OK;
}

/* ---- one-shot decompression ---- */

w2l__zstd_dctx *w2l__zstd_dctx_new(void)
{
    return (w2l__zstd_dctx *)ZSTD_createDCtx_advanced(zmem);
}

void w2l__zstd_dctx_free(w2l__zstd_dctx *d) { ZSTD_freeDCtx((ZSTD_DCtx *)d); }

int w2l__zstd_frame_size(const void *src, size_t n, uint64_t *size)
{
    unsigned long long s = ZSTD_getFrameContentSize(src, n);
    if (s == ZSTD_CONTENTSIZE_UNKNOWN || s == ZSTD_CONTENTSIZE_ERROR) return 0;
    *size = s;
    return 1;
}

w2l_rc w2l__zstd_decompress(w2l__zstd_dctx *d, void *dst, size_t dst_cap, const void *src,
                            size_t n, size_t *out_len, w2l_error *err)
{
    size_t r = ZSTD_decompressDCtx((ZSTD_DCtx *)d, dst, dst_cap, src, n);
    if (ZSTD_isError(r)) return zfail(r, W2L_CORRUPT, err);
    *out_len = r;
    return W2L_OK;
}

/* ---- streaming decompression ---- */

w2l__zstd_stream *w2l__zstd_stream_new(void)
{
    return (w2l__zstd_stream *)ZSTD_createDStream_advanced(zmem);
}

void w2l__zstd_stream_free(w2l__zstd_stream *s) { ZSTD_freeDStream((ZSTD_DStream *)s); }

w2l_rc w2l__zstd_stream_reset(w2l__zstd_stream *s, w2l_error *err)
{
    size_t r = ZSTD_initDStream((ZSTD_DStream *)s);
    if (ZSTD_isError(r)) return w2l__fail(err, W2L_NOMEM, "zstd: %s", ZSTD_getErrorName(r));
    return W2L_OK;
}

w2l_rc w2l__zstd_stream_step(w2l__zstd_stream *s, const void *in, size_t in_len,
                             size_t *in_pos, void *out, size_t out_cap, size_t *out_pos,
                             int *frame_end, w2l_error *err)
{
    ZSTD_inBuffer ib = {in, in_len, *in_pos};
    ZSTD_outBuffer ob = {out, out_cap, *out_pos};
    size_t r = ZSTD_decompressStream((ZSTD_DStream *)s, &ob, &ib);
    if (ZSTD_isError(r)) return zfail(r, W2L_CORRUPT, err);
    *in_pos = ib.pos;
    *out_pos = ob.pos;
    *frame_end = r == 0; /* 0: a frame is done and flushed; else a hint of input to come */
    return W2L_OK;
}
