/*
 * Iceberg-side statistics of a written file (pq_stats.h): releasing them, and the bound
 * truncation Iceberg allows (spec "Metrics", default mode truncate(16)).
 *
 * Strings: the lower bound is the first N code points; the upper bound is the first N code
 * points with the last one incremented, skipping the surrogate range U+D800..U+DFFF; when
 * that code point is already U+10FFFF it is dropped and the one before is incremented; when
 * none can be, there is no upper bound (the writer then leaves both bounds out).
 * Example, N = 2: "ab\xF4\x8F\xBF\xBF" has lower "ab" and upper "ac".
 * Binary: the same over bytes, incrementing the last byte below 0xFF.
 */
#include "pq_int.h"

void w2l__file_stats_release(w2l__file_stats *s)
{
    if (!s) return;
    w2l__free(s->cols);
    w2l__free(s->split_offsets);
    memset(s, 0, sizeof *s);
}

/* Length of the UTF-8 sequence starting with byte b (1 for invalid lead bytes, so
 * truncation always progresses). */
static size_t seq_len(uint8_t b)
{
    if (b < 0x80) return 1;
    if ((b & 0xE0) == 0xC0) return 2;
    if ((b & 0xF0) == 0xE0) return 3;
    if ((b & 0xF8) == 0xF0) return 4;
    return 1;
}

size_t w2l__utf8_truncate_lower(const uint8_t *s, size_t n, size_t max_cp)
{
    size_t i = 0, cp = 0;
    while (i < n && cp < max_cp) {
        size_t l = seq_len(s[i]);
        if (i + l > n) break;
        i += l;
        cp++;
    }
    return i;
}

static uint32_t decode(const uint8_t *p, size_t l)
{
    switch (l) {
    case 1: return p[0];
    case 2: return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
    case 3: return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
    default:
        return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
               (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
    }
}

static size_t encode(uint32_t c, uint8_t *d)
{
    if (c < 0x80) { d[0] = (uint8_t)c; return 1; }
    if (c < 0x800) {
        d[0] = (uint8_t)(0xC0 | c >> 6);
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        d[0] = (uint8_t)(0xE0 | c >> 12);
        d[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        d[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | c >> 18);
    d[1] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
    d[2] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
    d[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

size_t w2l__utf8_truncate_upper(const uint8_t *s, size_t n, size_t max_cp, uint8_t *dst)
{
    size_t len = w2l__utf8_truncate_lower(s, n, max_cp);
    if (len) memcpy(dst, s, len);
    if (len == n) return n; /* fits: the value itself */
    /* offsets of the code points in the prefix */
    size_t starts[64], k = 0, i = 0;
    while (i < len && k < 64) {
        starts[k++] = i;
        i += seq_len(s[i]);
    }
    while (k > 0) {
        size_t at = starts[--k], l = seq_len(s[at]);
        uint32_t c = at + l <= len ? decode(s + at, l) : 0x10FFFF;
        if (c < 0x10FFFF) {
            c++;
            if (c >= 0xD800 && c <= 0xDFFF) c = 0xE000;
            return at + encode(c, dst + at);
        }
    }
    return 0;
}

size_t w2l__bin_truncate_upper(const uint8_t *s, size_t n, size_t max, uint8_t *dst)
{
    if (n <= max) {
        if (n) memcpy(dst, s, n);
        return n;
    }
    memcpy(dst, s, max);
    for (size_t i = max; i > 0; i--) {
        if (dst[i - 1] != 0xFF) {
            dst[i - 1]++;
            return i;
        }
    }
    return 0;
}
