/*
 * Page codecs, write and read side (Parquet CompressionCodec UNCOMPRESSED = 0 and ZSTD = 6):
 * one zstd frame per page, with the content size in the frame header, which must agree with
 * the page header's uncompressed size. zstd itself is wrapped by lib/common/zstd.c (the one
 * file that includes zstd.h, allocating through the library's allocator); its contexts are
 * made on first use and reused for every page, and for every file of a thread that passes
 * them in w2l__pq_options.codec_ctx (a pipeline writer does). UNCOMPRESSED is a copy; GZIP
 * is read by ../common/gzip.c. The codec set stays open: a new codec is a case here and a
 * value in parquet.h.
 */
#include "pq_int.h"
#include "../common/zstd.h"

struct w2l__pq_codec {
    w2l__zstd_cctx *cctx;
    w2l__zstd_dctx *dctx;
    int level;                /* level cctx is set to, 0 = not yet */
    w2l__pq_zpage zpage;      /* ... and the kind of page */
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
    if (codec != W2L_PQ_ZSTD) return n;
    size_t a = w2l__zstd_bound(n), b = w2l__zstd_stored_bound(n);
    return a > b ? a : b;
}

/* How pages of kind zpage compress at level. Tables: for inputs of a page's size, level 2
 * (strategy fast) has one table, of 2^16 entries; level 3 (double-fast) a long-match table of
 * 2^17 and a short-match table of 2^16 (4 bytes an entry). Smaller ones stay in a core's
 * cache. Level 2 takes 2^15 (BENCH=parquet's orders compress 15% faster, 0.8% larger);
 * level 3 2^16 and 2^13: the pages of a 1M-row orders table compress about 11% faster than
 * with 2^15 and 2^16 (five interleaved runs of each) and 0.45% smaller, 0.3% larger than
 * with zstd's own sizes.
 * PLAIN fixed-width pages at level 3: the strategy of level 1 with a table of 2^16 finds the
 * high bytes that mostly distinct values share as well as double-fast does, in fewer
 * instructions; its shortest match is 7 bytes for 4-byte values (5 makes ~2.5x the
 * instructions for the same size: matches of a value's zero bytes cost more sequences than
 * they save) and 5 for 8-byte ones. 8-byte decimals keep double-fast with matches of 7: the
 * fast strategy made the amounts of the canal orders benchmark 14% larger. Per 1M benchmark
 * rows (zstd instructions, bytes) against level 3: int32 ids 180M -> 65M, same size;
 * timestamps 355M -> 314M and 440M -> 368M, 3.02M -> 3.02M and 4.80M -> 4.63M; increasing
 * ids 272M -> 263M, 1.02M -> 1.02M; decimal amounts 397M -> 377M, 3.28M -> 3.14M; random
 * doubles unchanged. */
static w2l__zstd_params zparams(int level, w2l__pq_zpage zpage)
{
    if (level == 3 && (zpage == PQ_Z_FIXED4 || zpage == PQ_Z_FIXED8))
        return (w2l__zstd_params){1, 16, 0, zpage == PQ_Z_FIXED4 ? 7 : 5};
    if (level == 3) return (w2l__zstd_params){3, 16, 13, zpage == PQ_Z_DEC8 ? 7 : 0};
    return (w2l__zstd_params){level, level == 2 ? 15 : 0, 0, 0};
}

/* c's compression context, made on first use, set for pages of kind zpage at level. */
static w2l_rc cctx_at(w2l__pq_codec *c, int level, w2l__pq_zpage zpage, w2l_error *err)
{
    if (!c->cctx) {
        c->cctx = w2l__zstd_cctx_new();
        W2L_NOMEM_IF(!c->cctx, err);
    }
    if (level != 3) zpage = PQ_Z_GENERIC; /* one setting per level there */
    if (c->level != level || c->zpage != zpage) {
        const w2l__zstd_params p = zparams(level, zpage);
        c->level = 0; /* unknown until set */
        W2L_TRY(w2l__zstd_cctx_set(c->cctx, &p, err));
        c->level = level;
        c->zpage = zpage;
    }
    return W2L_OK;
}

w2l_rc w2l__pq_compress_into(w2l__pq_codec *c, int codec, int level, w2l__pq_zpage zpage,
                             const void *src, size_t n, void *dst, size_t cap, size_t *out_len,
                             w2l_error *err)
{
    if (codec == W2L_PQ_UNCOMPRESSED) {
        if (cap < n) return w2l__fail(err, W2L_MISUSE, "page of %zu bytes into %zu", n, cap);
        if (n) memcpy(dst, src, n);
        *out_len = n;
        return W2L_OK;
    }
    if (codec != W2L_PQ_ZSTD) return w2l__fail(err, W2L_MISUSE, "codec %d not supported", codec);
    if (zpage == PQ_Z_STORE) return w2l__zstd_store(dst, cap, src, n, out_len, err);
    W2L_TRY(cctx_at(c, level, zpage, err));
    return w2l__zstd_compress(c->cctx, dst, cap, src, n, out_len, err);
}

w2l_rc w2l__pq_compress(w2l__pq_codec *c, int codec, int level, const void *src, size_t n,
                        w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    if (codec == W2L_PQ_UNCOMPRESSED) return w2l__pq_put(out, src, n, err);
    size_t bound = w2l__pq_compress_bound(codec, n);
    W2L_TRY(w2l__buf_reserve(out, bound, err));
    return w2l__pq_compress_into(c, codec, level, PQ_Z_GENERIC, src, n, out->data, bound,
                                 &out->len, err);
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
