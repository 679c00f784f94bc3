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
    a->used = 0;
}

void *w2l__arena_alloc(w2l__arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    w2l__arena_block *b = a->head;
    if (!b || b->size - b->off < n) {
        size_t sz = n > a->block_size / 4 ? n : a->block_size;
        b = w2l__malloc(sizeof *b + sz);
        if (!b) return NULL;
        b->size = sz;
        b->off = 0;
        if (a->head && sz == n && a->head->size - a->head->off > 0) {
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
    a->used = 0;
}
