/*
 * Page codecs: the one file that includes zstd.h (Parquet CompressionCodec ZSTD = 6, one
 * zstd frame per page, content size in the frame header). UNCOMPRESSED is a copy. The codec
 * set stays open: a new codec is a case here and a value in parquet.h.
 * zstd allocates through the library's allocator (ZSTD_customMem), so out-of-memory tests
 * reach it too.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_createCCtx_advanced */
#include <zstd.h>
#include <zstd_errors.h>

#include "pq_int.h"

struct w2l__pq_codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    int level; /* level cctx is set to, 0 = not yet */
};

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

w2l_rc w2l__pq_codec_new(w2l__pq_codec **out, w2l_error *err)
{
    w2l__pq_codec *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    *out = c;
    return W2L_OK;
}

void w2l__pq_codec_free(w2l__pq_codec *c)
{
    if (!c) return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    w2l__free(c);
}

size_t w2l__pq_compress_bound(int codec, size_t n)
{
    return codec == W2L_PQ_ZSTD ? ZSTD_compressBound(n) : n;
}

w2l_rc w2l__pq_compress(w2l__pq_codec *c, int codec, int level, const void *src, size_t n,
                        w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    if (codec == W2L_PQ_UNCOMPRESSED) return w2l__pq_put(out, src, n, err);
    if (codec != W2L_PQ_ZSTD) return w2l__fail(err, W2L_MISUSE, "codec %d not supported", codec);
    if (!c->cctx) {
        c->cctx = ZSTD_createCCtx_advanced(zmem);
        W2L_NOMEM_IF(!c->cctx, err);
    }
    if (c->level != level) {
        size_t r = ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
        if (ZSTD_isError(r))
            return w2l__fail(err, W2L_MISUSE, "zstd level %d: %s", level, ZSTD_getErrorName(r));
        c->level = level;
    }
    size_t bound = ZSTD_compressBound(n);
    W2L_TRY(w2l__buf_reserve(out, bound, err));
    size_t r = ZSTD_compress2(c->cctx, out->data, bound, src, n);
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
            return w2l__fail(err, W2L_NOMEM, "zstd: %s", ZSTD_getErrorName(r));
        return w2l__fail(err, W2L_ERROR, "zstd: %s", ZSTD_getErrorName(r));
    }
    out->len = r;
    return W2L_OK;
}

w2l_rc w2l__pq_decompress(w2l__pq_codec *c, int codec, const void *src, size_t n, void *dst,
                          size_t dst_len, w2l_error *err)
{
    if (codec == W2L_PQ_UNCOMPRESSED) {
        if (n != dst_len)
            return w2l__fail(err, W2L_CORRUPT, "uncompressed page: %zu bytes, header says %zu", n,
                             dst_len);
        if (n) memcpy(dst, src, n);
        return W2L_OK;
    }
    if (codec != W2L_PQ_ZSTD) return w2l__fail(err, W2L_CORRUPT, "unsupported codec %d", codec);
    if (!c->dctx) {
        c->dctx = ZSTD_createDCtx_advanced(zmem);
        W2L_NOMEM_IF(!c->dctx, err);
    }
    unsigned long long want = ZSTD_getFrameContentSize(src, n);
    if (want != ZSTD_CONTENTSIZE_UNKNOWN && want != dst_len)
        return w2l__fail(err, W2L_CORRUPT, "zstd frame holds %llu bytes, page header says %zu",
                         want, dst_len);
    size_t r = ZSTD_decompressDCtx(c->dctx, dst, dst_len, src, n);
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
            return w2l__fail(err, W2L_NOMEM, "zstd: %s", ZSTD_getErrorName(r));
        return w2l__fail(err, W2L_CORRUPT, "zstd: %s", ZSTD_getErrorName(r));
    }
    if (r != dst_len)
        return w2l__fail(err, W2L_CORRUPT, "zstd: %zu bytes, page header says %zu", r, dst_len);
    return W2L_OK;
}
