/*
 * GZIP and zlib inflation (gzip.c, the one file including zlib.h): the Parquet reader's
 * GZIP codec and MariaDB's compressed binlog events; and zlib's CRC-32, for the binlog
 * events' checksums.
 */
#ifndef W2L_COMMON_GZIP_H
#define W2L_COMMON_GZIP_H

#include "common.h"

/* Inflates src[0, n) (one or more gzip members, or a zlib stream) into exactly dst_len
 * bytes at dst. W2L_CORRUPT ("gzip: ...") for bad data or another length, W2L_NOMEM. */
w2l_rc w2l__gzip_decompress(const void *src, size_t n, void *dst, size_t dst_len,
                            w2l_error *err);

/* CRC-32 (IEEE 802.3, reflected, as zlib and the binlog's CRC32 checksums compute it) of
 * p[0, n): zlib's crc32(), several bytes a step (a byte-at-a-time table is 2-3x slower). */
uint32_t w2l__zlib_crc32(const void *p, size_t n);

#endif
