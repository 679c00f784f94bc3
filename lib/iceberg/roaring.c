/*
 * 64-bit Roaring bitmaps in the "portable" serialization, as the Iceberg spec ("Deletion
 * Vectors") stores a deletion vector's positions: the number of 32-bit-key buckets as an
 * 8-byte little-endian integer, then per bucket, in ascending key order, the key (the high
 * 32 bits of its positions) as 4 bytes little-endian and the bucket's low 32 bits as a
 * 32-bit Roaring bitmap in the standard portable format (Roaring format specification):
 *
 *   cookie   without run containers: 12346 as 4 bytes LE, then the container count (4 LE);
 *            with: 12347 | (count - 1) << 16 (4 LE), then one bit per container (is it a
 *            run container) in (count + 7) / 8 bytes
 *   header   per container: its key (the high 16 bits of its values) and cardinality - 1,
 *            2 bytes LE each, keys ascending
 *   offsets  per container its byte offset from the cookie (4 LE); absent when the bitmap
 *            has run containers and fewer than 4 containers
 *   data     array container (cardinality <= 4096): the low 16 bits of each value (2 LE),
 *            ascending; bitmap container: 1024 words of 8 bytes LE, bit i of the container
 *            = value i; run container: the run count (2 LE), then per run its start and
 *            length - 1 (2 LE each)
 *
 * Written: array containers up to 4096 values, bitmap containers above (no run
 * containers). Read: all three kinds, every count, order and bound checked, so corrupt input
 * is an error naming the byte offset, never a wild read. The bitmap in memory is a sorted
 * array of distinct positions: a deletion vector is read whole, merged and written whole.
 */
#include <stdlib.h>

#include "iceberg.h"

#define COOKIE_NO_RUN 12346u
#define COOKIE_RUN 12347u
#define ARRAY_MAX 4096
#define NO_OFFSET_THRESHOLD 4

static void put16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Appends the 32-bit bitmap of the low halves of v[0..n) (one bucket: same high half). */
static w2l_rc write32(w2l_buf *out, const uint64_t *v, size_t n, w2l_error *err)
{
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        nc += i == 0 || (uint32_t)v[i] >> 16 != (uint32_t)v[i - 1] >> 16;
    size_t start = out->len, hdr = 8 + 8 * nc;
    W2L_TRY(w2l__buf_reserve(out, hdr, err));
    unsigned char *h = out->data + start;
    put32(h, COOKIE_NO_RUN);
    put32(h + 4, (uint32_t)nc);
    out->len += hdr;
    size_t c = 0;
    for (size_t i = 0, j; i < n; i = j, c++) {
        uint32_t key = (uint32_t)v[i] >> 16;
        for (j = i + 1; j < n && (uint32_t)v[j] >> 16 == key; j++) {}
        size_t card = j - i;
        h = out->data + start; /* the buffer may have moved */
        put16(h + 8 + 4 * c, key);
        put16(h + 10 + 4 * c, (uint32_t)(card - 1));
        put32(h + 8 + 4 * nc + 4 * c, (uint32_t)(out->len - start));
        size_t bytes = card <= ARRAY_MAX ? 2 * card : 8192;
        W2L_TRY(w2l__buf_reserve(out, bytes, err));
        unsigned char *d = out->data + out->len;
        if (card <= ARRAY_MAX) {
            for (size_t k = i; k < j; k++) put16(d + 2 * (k - i), (uint32_t)v[k] & 0xffff);
        } else {
            memset(d, 0, 8192);
            for (size_t k = i; k < j; k++) {
                uint32_t lo = (uint32_t)v[k] & 0xffff;
                d[lo >> 3] |= (unsigned char)(1u << (lo & 7));
            }
        }
        out->len += bytes;
    }
    return W2L_OK;
}

w2l_rc w2l__roaring64_serialize(const uint64_t *v, size_t n, w2l_buf *out, w2l_error *err)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] <= v[i - 1])
            return w2l__fail(err, W2L_MISUSE, "roaring: positions not ascending at %zu", i);
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) nb += i == 0 || v[i] >> 32 != v[i - 1] >> 32;
    W2L_TRY(w2l__buf_reserve(out, 8, err));
    put64(out->data + out->len, (uint64_t)nb);
    out->len += 8;
    for (size_t i = 0, j; i < n; i = j) {
        uint64_t key = v[i] >> 32;
        for (j = i + 1; j < n && v[j] >> 32 == key; j++) {}
        W2L_TRY(w2l__buf_reserve(out, 4, err));
        put32(out->data + out->len, (uint32_t)key);
        out->len += 4;
        W2L_TRY(write32(out, v + i, j - i, err));
    }
    return W2L_OK;
}

size_t w2l__roaring64_size(const uint64_t *v, size_t n)
{
    size_t bytes = 8;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j] >> 32 == v[i] >> 32; j++) {}
        bytes += 4 + 8;
        for (size_t a = i, b; a < j; a = b) {
            for (b = a + 1; b < j && (uint32_t)v[b] >> 16 == (uint32_t)v[a] >> 16; b++) {}
            bytes += 8 + (b - a <= ARRAY_MAX ? 2 * (b - a) : 8192);
        }
    }
    return bytes;
}

typedef struct posvec {
    uint64_t *v;
    size_t n, cap;
} posvec;

static w2l_rc push(posvec *o, uint64_t x, w2l_error *err)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        uint64_t *nv = w2l__realloc(o->v, cap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        o->v = nv;
        o->cap = cap;
    }
    o->v[o->n++] = x;
    return W2L_OK;
}

#define NEED(k, what)                                                                          \
    do {                                                                                       \
        if ((size_t)(k) > len - at)                                                            \
            return w2l__fail(err, W2L_CORRUPT, "roaring: %s truncated at byte %zu", what,      \
                             base + at);                                                       \
    } while (0)

/* Reads the 32-bit bitmap at p[0..len) (base: its offset in the whole input, for messages)
 * into o with high half hi; *used: its bytes. */
static w2l_rc read32(const unsigned char *p, size_t len, size_t base, uint64_t hi, posvec *o,
                     size_t *used, w2l_error *err)
{
    size_t at = 0;
    NEED(4, "cookie");
    uint32_t cookie = get32(p);
    at = 4;
    size_t nc;
    const unsigned char *runflags = NULL;
    if ((cookie & 0xffff) == COOKIE_RUN) {
        nc = (size_t)(cookie >> 16) + 1;
        NEED((nc + 7) / 8, "run flags");
        runflags = p + at;
        at += (nc + 7) / 8;
    } else if (cookie == COOKIE_NO_RUN) {
        NEED(4, "container count");
        nc = get32(p + at);
        at += 4;
        if (nc > 65536)
            return w2l__fail(err, W2L_CORRUPT, "roaring: %zu containers at byte %zu", nc, base);
    } else {
        return w2l__fail(err, W2L_CORRUPT, "roaring: bad cookie %u at byte %zu", (unsigned)cookie,
                         base);
    }
    NEED(4 * nc, "container header");
    const unsigned char *hdr = p + at;
    at += 4 * nc;
    if (!runflags || nc >= NO_OFFSET_THRESHOLD) {
        NEED(4 * nc, "offset header");
        at += 4 * nc;
    }
    for (size_t c = 0; c < nc; c++) {
        uint32_t key = get16(hdr + 4 * c), card = get16(hdr + 4 * c + 2) + 1;
        if (c && key <= get16(hdr + 4 * (c - 1)))
            return w2l__fail(err, W2L_CORRUPT, "roaring: container keys not ascending at byte %zu",
                             base + 8 + 4 * c);
        uint64_t top = hi << 32 | (uint64_t)key << 16;
        size_t before = o->n;
        if (runflags && (runflags[c / 8] >> (c % 8) & 1)) {
            NEED(2, "run container");
            uint32_t nr = get16(p + at);
            at += 2;
            NEED(4 * (size_t)nr, "run container");
            int64_t last = -1;
            for (uint32_t r = 0; r < nr; r++) {
                uint32_t s = get16(p + at + 4 * r), l = get16(p + at + 4 * r + 2);
                if ((int64_t)s <= last || s + l > 0xffff)
                    return w2l__fail(err, W2L_CORRUPT, "roaring: bad run at byte %zu",
                                     base + at + 4 * r);
                for (uint32_t x = s; x <= s + l; x++) W2L_TRY(push(o, top | x, err));
                last = (int64_t)s + l;
            }
            at += 4 * (size_t)nr;
        } else if (card <= ARRAY_MAX) {
            NEED(2 * (size_t)card, "array container");
            for (uint32_t k = 0; k < card; k++) {
                uint32_t x = get16(p + at + 2 * k);
                if (k && x <= get16(p + at + 2 * (k - 1)))
                    return w2l__fail(err, W2L_CORRUPT,
                                     "roaring: array values not ascending at byte %zu",
                                     base + at + 2 * k);
                W2L_TRY(push(o, top | x, err));
            }
            at += 2 * (size_t)card;
        } else {
            NEED(8192, "bitmap container");
            for (uint32_t x = 0; x < 65536; x++)
                if (p[at + (x >> 3)] >> (x & 7) & 1) W2L_TRY(push(o, top | x, err));
            at += 8192;
        }
        if (o->n - before != card)
            return w2l__fail(err, W2L_CORRUPT,
                             "roaring: container %zu holds %zu values, its header says %u", c,
                             o->n - before, (unsigned)card);
    }
    *used = at;
    return W2L_OK;
}

w2l_rc w2l__roaring64_deserialize(const unsigned char *p, size_t len, uint64_t **out, size_t *n,
                                  w2l_error *err)
{
    *out = NULL;
    *n = 0;
    posvec o = {0};
    w2l_rc rc = W2L_OK;
    size_t at = 0;
    if (len < 8) return w2l__fail(err, W2L_CORRUPT, "roaring: bucket count truncated at byte 0");
    uint64_t nb = get64(p);
    at = 8;
    if (nb > (len - 8) / 12)
        return w2l__fail(err, W2L_CORRUPT, "roaring: %llu buckets in %zu bytes",
                         (unsigned long long)nb, len);
    int64_t last = -1;
    for (uint64_t b = 0; rc == W2L_OK && b < nb; b++) {
        if (len - at < 4) {
            rc = w2l__fail(err, W2L_CORRUPT, "roaring: bucket key truncated at byte %zu", at);
            break;
        }
        uint32_t key = get32(p + at);
        if ((int64_t)key <= last) {
            rc = w2l__fail(err, W2L_CORRUPT, "roaring: bucket keys not ascending at byte %zu", at);
            break;
        }
        last = key;
        at += 4;
        size_t used = 0;
        rc = read32(p + at, len - at, at, key, &o, &used, err);
        at += used;
    }
    if (rc == W2L_OK && at != len)
        rc = w2l__fail(err, W2L_CORRUPT, "roaring: %zu bytes after the bitmap", len - at);
    if (rc != W2L_OK) {
        w2l__free(o.v);
        return rc;
    }
    *out = o.v;
    *n = o.n;
    return W2L_OK;
}

w2l_rc w2l__roaring64_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
                            uint64_t **out, size_t *n, w2l_error *err)
{
    *out = NULL;
    *n = 0;
    uint64_t *v = w2l__malloc((na + nb + 1) * sizeof *v);
    W2L_NOMEM_IF(!v, err);
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        uint64_t x;
        if (j == nb || (i < na && a[i] < b[j])) x = a[i++];
        else if (i == na || b[j] < a[i]) x = b[j++];
        else {
            x = a[i++];
            j++;
        }
        if (!k || v[k - 1] != x) v[k++] = x;
    }
    *out = v;
    *n = k;
    return W2L_OK;
}
