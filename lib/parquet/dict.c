/*
 * The dictionary of one column chunk: distinct values in first-seen order, found through an
 * open-addressing hash table (linear probing, load factor at most 1/2). The entries are kept
 * directly as the dictionary page body, which is PLAIN-encoded (Parquet "Encodings.md",
 * dictionary encoding): fixed-width values back to back, byte arrays as
 *   entry := le32(length) bytes
 * so writing the dictionary page copies nothing. Example: "paid", "", "paid" give two entries,
 * 04 00 00 00 70 61 69 64 | 00 00 00 00 (12 bytes), and indices 0 1 0.
 * Each slot holds the entry's 32-bit hash and its index + 1 (0 = empty), so a probe touches
 * one cache line of the table and compares bytes only on a hash match, and growing the
 * table never looks at the values.
 */
#include "pq_int.h"

void w2l__pq_dict_init(w2l__pq_dict *d, int width)
{
    memset(d, 0, sizeof *d);
    d->width = width;
}

/* A table that is much smaller than its last chunk's dictionary needed gives the memory
 * back at the next chunk: a writer keeps one dictionary per column of every open table,
 * and thousands of tables that were busy once must not keep their peak. */
#define DICT_FIRST_SLOTS 16
#define DICT_KEEP_SLOTS 1024

void w2l__pq_dict_reset(w2l__pq_dict *d)
{
    if (d->nslots > DICT_KEEP_SLOTS && (size_t)d->count * 16 < d->nslots) {
        w2l__free(d->slots);
        w2l__free(d->offs);
        d->slots = NULL;
        d->offs = NULL;
        d->nslots = d->offs_cap = 0;
        w2l_buf_release(&d->vals);
    }
    d->count = 0;
    d->vals.len = 0;
    /* the slots are cleared by the next put, not here: a dictionary given up at its first
     * page is reset then and again at the end of the chunk (which releases a big table),
     * and the last chunk of a file is reset for a next one that does not come */
    d->dirty = d->slots != NULL;
}

void w2l__pq_dict_free(w2l__pq_dict *d)
{
    w2l__free(d->slots);
    w2l__free(d->offs);
    w2l_buf_release(&d->vals);
    memset(d, 0, sizeof *d);
}

static inline uint32_t hash_value(const w2l__pq_dict *d, const void *p, size_t n)
{
    uint64_t k = 0;
    switch (d->width) {
    case 4:
    case 8: /* as w2l__pq_dict_find_fixed reads them (little-endian) */
        k = d->width == 4 ? w2l__ld32(p) : w2l__ld64(p);
        return w2l__pq_dict_hash_fixed(k);
    default:
        return w2l__pq_dict_hash_bytes(p, n);
    }
}

static w2l_rc grow(w2l__pq_dict *d, w2l_error *err)
{
    size_t ns = d->nslots ? d->nslots * 2 : DICT_FIRST_SLOTS;
    uint64_t *slots = w2l__calloc(ns, sizeof *slots);
    W2L_NOMEM_IF(!slots, err);
    for (size_t i = 0; i < d->nslots; i++) {
        uint64_t e = d->slots[i];
        if (!e) continue;
        size_t s = (size_t)(e >> 32) & (ns - 1);
        while (slots[s]) s = (s + 1) & (ns - 1);
        slots[s] = e;
    }
    w2l__free(d->slots);
    d->slots = slots;
    d->nslots = ns;
    return W2L_OK;
}

static w2l_rc grow_entries(w2l__pq_dict *d, w2l_error *err)
{
    size_t cap = d->offs_cap ? d->offs_cap * 2 : DICT_FIRST_SLOTS / 2;
    size_t *o = w2l__realloc(d->offs, cap * sizeof *o);
    W2L_NOMEM_IF(!o, err);
    d->offs = o;
    d->offs_cap = cap;
    return W2L_OK;
}

static inline int same(const w2l__pq_dict *d, uint32_t i, const void *p, size_t n)
{
    const uint8_t *v;
    switch (d->width) {
    case 0: {
        const uint8_t *ent = d->vals.data + d->offs[i];
        return w2l__ld32(ent) == n && w2l__pq_bytes_eq(ent + 4, (const uint8_t *)p, n);
    }
    case 4: {
        uint32_t a, b;
        memcpy(&a, d->vals.data + (size_t)i * 4, 4);
        memcpy(&b, p, 4);
        return a == b;
    }
    case 8: {
        uint64_t a, b;
        memcpy(&a, d->vals.data + (size_t)i * 8, 8);
        memcpy(&b, p, 8);
        return a == b;
    }
    default:
        v = d->vals.data + (size_t)i * (size_t)d->width;
        return memcmp(v, p, (size_t)d->width) == 0;
    }
}

const uint8_t *w2l__pq_dict_get(const w2l__pq_dict *d, uint32_t i, size_t *len)
{
    if (d->width) {
        *len = (size_t)d->width;
        return d->vals.data + (size_t)i * (size_t)d->width;
    }
    const uint8_t *e = d->vals.data + d->offs[i];
    *len = w2l__ld32(e);
    return e + 4;
}

w2l_rc w2l__pq_dict_put(w2l__pq_dict *d, const void *p, size_t n, uint32_t *idx, int *added,
                        w2l_error *err)
{
    if (d->dirty) {
        memset(d->slots, 0, d->nslots * sizeof *d->slots);
        d->dirty = 0;
    }
    if (2 * ((size_t)d->count + 1) > d->nslots) W2L_TRY(grow(d, err));
    const uint32_t h = hash_value(d, p, n);
    const size_t mask = d->nslots - 1;
    size_t s = h & mask;
    for (;;) {
        uint64_t e = d->slots[s];
        if (!e) break;
        if ((uint32_t)(e >> 32) == h && same(d, (uint32_t)e - 1, p, n)) {
            *idx = (uint32_t)e - 1;
            *added = 0;
            return W2L_OK;
        }
        s = (s + 1) & mask;
    }
    if (d->count == UINT32_MAX - 1) return w2l__fail(err, W2L_ERROR, "dictionary full");
    if (d->width) {
        W2L_TRY(w2l__pq_put(&d->vals, p, (size_t)d->width, err));
    } else {
        if (d->count >= d->offs_cap) W2L_TRY(grow_entries(d, err));
        if (n > UINT32_MAX) return w2l__fail(err, W2L_ERROR, "value of %zu bytes too large", n);
        W2L_TRY(w2l__buf_reserve(&d->vals, 4 + n, err));
        d->offs[d->count] = d->vals.len;
        w2l__le32(d->vals.data + d->vals.len, (uint32_t)n);
        if (n) memcpy(d->vals.data + d->vals.len + 4, p, n);
        d->vals.len += 4 + n;
    }
    d->slots[s] = (uint64_t)h << 32 | (uint64_t)(d->count + 1);
    *idx = d->count++;
    *added = 1;
    return W2L_OK;
}
