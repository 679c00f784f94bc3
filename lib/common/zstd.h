/*
 * zstd for the rest of the library (zstd.c, the only file that includes <zstd.h>): a
 * compression context for one-shot frames (Parquet pages), a decompression context for
 * one-shot frames, and a streaming decompressor for frames whose size is not known up front
 * (MySQL's TRANSACTION_PAYLOAD). Every context allocates through w2l__malloc, so
 * out-of-memory tests reach zstd too. Contexts are reusable and belong to one thread.
 *
 * Errors: W2L_NOMEM when zstd could not allocate; otherwise "zstd: " and zstd's own text
 * (W2L_ERROR when compressing, W2L_CORRUPT when decompressing).
 */
#ifndef W2L_ZSTD_H
#define W2L_ZSTD_H

#include "common.h"

typedef struct w2l__zstd_cctx w2l__zstd_cctx;
typedef struct w2l__zstd_dctx w2l__zstd_dctx;
typedef struct w2l__zstd_stream w2l__zstd_stream;

/* A compression context at zstd's default level; NULL when out of memory. */
w2l__zstd_cctx *w2l__zstd_cctx_new(void);
void w2l__zstd_cctx_free(w2l__zstd_cctx *c); /* NULL is a no-op */
/* How c compresses: a level, and the sizes of its match finder's tables and its shortest
 * match where they differ from the level's (0: the level's). hash_log: 2^hash_log entries in
 * the main table (ZSTD_c_hashLog); chain_log: the second (ZSTD_c_chainLog: the chain table,
 * or for the double-fast levels the short-match table); min_match: ZSTD_c_minMatch. */
typedef struct w2l__zstd_params {
    int level, hash_log, chain_log, min_match;
} w2l__zstd_params;
/* Sets the parameters of the frames c makes from now on (all of them: a field left 0 takes
 * the level's value, not an earlier call's); W2L_MISUSE ("zstd level N ...: ...") when zstd
 * rejects one. */
w2l_rc w2l__zstd_cctx_set(w2l__zstd_cctx *c, const w2l__zstd_params *p, w2l_error *err);
/* The most bytes one frame of n input bytes can take. */
size_t w2l__zstd_bound(size_t n);
/* Compresses src[0, n) into one frame (its content size in the header) in dst, which holds
 * dst_cap bytes (w2l__zstd_bound(n) always suffice); *out_len its length. */
w2l_rc w2l__zstd_compress(w2l__zstd_cctx *c, void *dst, size_t dst_cap, const void *src,
                          size_t n, size_t *out_len, w2l_error *err);

/* The most bytes w2l__zstd_store takes for n bytes. */
size_t w2l__zstd_stored_bound(size_t n);
/* Stores src[0, n) as one frame of raw blocks (no compression, no context: for data that
 * does not compress, at the cost of a copy); any zstd decoder reads it. */
w2l_rc w2l__zstd_store(void *dst, size_t dst_cap, const void *src, size_t n, size_t *out_len,
                       w2l_error *err);

/* A decompression context for whole frames; NULL when out of memory. */
w2l__zstd_dctx *w2l__zstd_dctx_new(void);
void w2l__zstd_dctx_free(w2l__zstd_dctx *d); /* NULL is a no-op */
/* The content size the frame header at src[0, n) states: 1 and *size when it states one,
 * 0 when it does not or cannot be read (decompressing then says why). */
int w2l__zstd_frame_size(const void *src, size_t n, uint64_t *size);
/* Decompresses the frames in src[0, n) into dst (dst_cap bytes); *out_len the bytes made. */
w2l_rc w2l__zstd_decompress(w2l__zstd_dctx *d, void *dst, size_t dst_cap, const void *src,
                            size_t n, size_t *out_len, w2l_error *err);

/* A streaming decompressor; NULL when out of memory. Reset before each new input. */
w2l__zstd_stream *w2l__zstd_stream_new(void);
void w2l__zstd_stream_free(w2l__zstd_stream *s); /* NULL is a no-op */
/* Forgets a frame in progress: the next step starts a new one. */
w2l_rc w2l__zstd_stream_reset(w2l__zstd_stream *s, w2l_error *err);
/* One step: inflates from in[*in_pos, in_len) into out[*out_pos, out_cap), moving both
 * positions on. *frame_end is 1 when a frame ended and all of it is in out (another may
 * follow), else 0: the frame needs more input, or more room when out is full. */
w2l_rc w2l__zstd_stream_step(w2l__zstd_stream *s, const void *in, size_t in_len,
                             size_t *in_pos, void *out, size_t out_cap, size_t *out_pos,
                             int *frame_end, w2l_error *err);

#endif
