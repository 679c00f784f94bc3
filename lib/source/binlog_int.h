/*
 * What the binlog decoder's two files share: binlog.c (the stream, TABLE_MAP, fetching)
 * and binlog_rows.c (row images and the scratch memory their values live in).
 */
#ifndef W2L_BINLOG_INT_H
#define W2L_BINLOG_INT_H

#include <stdint.h>

#include "mysql_int.h"

static inline uint64_t w2l__bl_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint64_t w2l__bl_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* Length-encoded integer; 0 on success, -1 when it runs past end. */
static inline int w2l__bl_lenenc(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end) return -1;
    int n = *p < 0xFB ? 0 : *p == 0xFC ? 2 : *p == 0xFD ? 3 : *p == 0xFE ? 8 : -1;
    if (n < 0 || end - p < 1 + n) return -1;
    *out = n == 0 ? *p : w2l__bl_le(p + 1, n);
    *pp = p + 1 + n;
    return 0;
}

/* n bytes from scratch memory (binlog_rows.c), valid until w2l__bl_scratch_reset; NULL when
 * out of memory. */
char *w2l__bl_scratch_alloc(w2l__bl_scratch *s, size_t n);

#endif
