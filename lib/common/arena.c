/* Bump allocator over a list of blocks; see arena.h. */
#include "arena.h"

struct w2l__arena_block {
    w2l__arena_block *next;
    size_t size, off;
    _Alignas(16) unsigned char data[];
};

void w2l__arena_init(w2l__arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->next = 0;
    a->used = 0;
}

#define ARENA_FIRST_BLOCK 1024

void *w2l__arena_alloc(w2l__arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    w2l__arena_block *b = a->head;
    if (!b || b->size - b->off < n) {
        int own = n > a->block_size / 4;
        size_t sz = n;
        if (!own) {
            sz = a->next ? a->next
                         : a->block_size < ARENA_FIRST_BLOCK ? a->block_size : ARENA_FIRST_BLOCK;
            while (sz < n) sz *= 2;
            if (sz > a->block_size) sz = a->block_size;
        }
        b = w2l__malloc(sizeof *b + sz);
        if (!b) return NULL;
        if (!own) a->next = sz * 2 < a->block_size ? sz * 2 : a->block_size;
        b->size = sz;
        b->off = 0;
        if (a->head && own && a->head->size - a->head->off > 0) {
            /* a large one-off block goes behind the current one, which keeps its free room */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->data + b->off;
    b->off += n;
    a->used += n;
    return p;
}

char *w2l__arena_strndup(w2l__arena *a, const char *s, size_t n)
{
    char *d = w2l__arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void w2l__arena_release(w2l__arena *a)
{
    w2l__arena_block *b = a->head;
    while (b) {
        w2l__arena_block *next = b->next;
        w2l__free(b);
        b = next;
    }
    a->head = NULL;
    a->next = 0;
    a->used = 0;
}
