/*
 * Page codecs, write and read side (Parquet CompressionCodec UNCOMPRESSED = 0 and ZSTD = 6):
 * one zstd frame per page, with the content size in the frame header, which must agree with
 * the page header's uncompressed size. zstd itself is wrapped by lib/common/zstd.c (the one
 * file that includes zstd.h, allocating through the library's allocator); its contexts are
 * made on first use and reused for every page, and for every file of a thread that passes
 * them in w2l__pq_options.codec_ctx (a pipeline writer does). UNCOMPRESSED is a copy; GZIP
 * is read by pq_gzip.c. The codec set stays open: a new codec is a case here and a value in
 * parquet.h.
 */
#include "pq_int.h"
#include "../common/zstd.h"

struct w2l__pq_codec {
    w2l__zstd_cctx *cctx;
    w2l__zstd_dctx *dctx;
    int level; /* level cctx is set to, 0 = not yet */
};

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
    w2l__zstd_cctx_free(c->cctx);
    w2l__zstd_dctx_free(c->dctx);
    w2l__free(c);
}

size_t w2l__pq_compress_bound(int codec, size_t n)
{
    return codec == W2L_PQ_ZSTD ? w2l__zstd_bound(n) : n;
}

/* c's compression context, made on first use, set to level. */
static w2l_rc cctx_at(w2l__pq_codec *c, int level, w2l_error *err)
{
    if (!c->cctx) {
        c->cctx = w2l__zstd_cctx_new();
        W2L_NOMEM_IF(!c->cctx, err);
    }
    if (c->level != level) {
        W2L_TRY(w2l__zstd_cctx_level(c->cctx, level, err));
        /* For inputs of a page's size, level 2 (strategy fast) has one table, of 2^16
         * entries; level 3 (double-fast) a long-match table of 2^17 and a short-match table
         * of 2^16 (4 bytes an entry). Smaller ones stay in a core's cache. Level 2 takes
         * 2^15 (BENCH=parquet's orders compress 15% faster, 0.8% larger); level 3 2^16 and
         * 2^13: the pages of a 1M-row orders table compress about 11% faster than with
         * 2^15 and 2^16 (five interleaved runs of each) and 0.45% smaller, 0.3% larger than
         * with zstd's own sizes */
        int hash_log = level == 2 ? 15 : level == 3 ? 16 : 0;
        W2L_TRY(w2l__zstd_cctx_tables(c->cctx, hash_log, level == 3 ? 13 : 0, err));
        c->level = level;
    }
    return W2L_OK;
}

w2l_rc w2l__pq_compress_into(w2l__pq_codec *c, int codec, int level, const void *src, size_t n,
                             void *dst, size_t cap, size_t *out_len, w2l_error *err)
{
    if (codec == W2L_PQ_UNCOMPRESSED) {
        if (cap < n) return w2l__fail(err, W2L_MISUSE, "page of %zu bytes into %zu", n, cap);
        if (n) memcpy(dst, src, n);
        *out_len = n;
        return W2L_OK;
    }
    if (codec != W2L_PQ_ZSTD) return w2l__fail(err, W2L_MISUSE, "codec %d not supported", codec);
    W2L_TRY(cctx_at(c, level, err));
    return w2l__zstd_compress(c->cctx, dst, cap, src, n, out_len, err);
}

w2l_rc w2l__pq_compress(w2l__pq_codec *c, int codec, int level, const void *src, size_t n,
                        w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    if (codec == W2L_PQ_UNCOMPRESSED) return w2l__pq_put(out, src, n, err);
    size_t bound = w2l__pq_compress_bound(codec, n);
    W2L_TRY(w2l__buf_reserve(out, bound, err));
    return w2l__pq_compress_into(c, codec, level, src, n, out->data, bound, &out->len, err);
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
        c->dctx = w2l__zstd_dctx_new();
        W2L_NOMEM_IF(!c->dctx, err);
    }
    uint64_t want;
    if (w2l__zstd_frame_size(src, n, &want) && want != dst_len)
        return w2l__fail(err, W2L_CORRUPT, "zstd frame holds %llu bytes, page header says %zu",
                         (unsigned long long)want, dst_len);
    size_t got;
    W2L_TRY(w2l__zstd_decompress(c->dctx, dst, dst_len, src, n, &got, err));
    if (got != dst_len)
        return w2l__fail(err, W2L_CORRUPT, "zstd: %zu bytes, page header says %zu", got, dst_len);
    return W2L_OK;
}
