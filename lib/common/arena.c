/* Bump allocator over a list of blocks, and the pool of full-size blocks; see arena.h. */
#include <stdatomic.h>

#include "arena.h"
#include "thread.h"

struct w2l__arena_block {
    w2l__arena_block *next;
    size_t size, off;
    _Alignas(16) unsigned char data[];
};

struct w2l__arena_pool {
    mtx_t mtx;               /* guards free and nfree */
    w2l__arena_block *free;  /* a stack: the block given back last is taken first (warm) */
    size_t nfree, max;
    size_t block_size;
    atomic_size_t refs;
};

w2l__arena_pool *w2l__arena_pool_new(size_t block_size, size_t max_blocks)
{
    w2l__arena_pool *p = w2l__malloc(sizeof *p);
    if (!p) return NULL;
    if (mtx_init(&p->mtx, mtx_plain) != thrd_success) {
        w2l__free(p);
        return NULL;
    }
    p->free = NULL;
    p->nfree = 0;
    p->max = max_blocks;
    p->block_size = block_size ? block_size : 64 * 1024;
    atomic_init(&p->refs, 1);
    return p;
}

static w2l__arena_pool *pool_ref(w2l__arena_pool *p)
{
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}

void w2l__arena_pool_unref(w2l__arena_pool *p)
{
    /* acq_rel: the last owner sees every block the others gave back */
    if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) > 1) return;
    while (p->free) {
        w2l__arena_block *b = p->free;
        p->free = b->next;
        w2l__free(b);
    }
    mtx_destroy(&p->mtx);
    w2l__free(p);
}

size_t w2l__arena_pool_blocks(w2l__arena_pool *p)
{
    mtx_lock(&p->mtx);
    size_t n = p->nfree;
    mtx_unlock(&p->mtx);
    return n;
}

static w2l__arena_block *pool_take(w2l__arena_pool *p)
{
    mtx_lock(&p->mtx);
    w2l__arena_block *b = p->free;
    if (b) {
        p->free = b->next;
        p->nfree--;
    }
    mtx_unlock(&p->mtx);
    return b;
}

/* Gives back a chain of blocks of the pool's size under one lock; what does not fit is
 * freed outside it. */
static void pool_give(w2l__arena_pool *p, w2l__arena_block *first)
{
    w2l__arena_block *extra;
    mtx_lock(&p->mtx);
    while (first && p->nfree < p->max) {
        w2l__arena_block *b = first;
        first = b->next;
        b->next = p->free;
        p->free = b;
        p->nfree++;
    }
    extra = first;
    mtx_unlock(&p->mtx);
    while (extra) {
        w2l__arena_block *b = extra;
        extra = b->next;
        w2l__free(b);
    }
}

void w2l__arena_init(w2l__arena *a, size_t block_size)
{
    a->head = NULL;
    a->pool = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->next = 0;
    a->used = 0;
}

void w2l__arena_init_pooled(w2l__arena *a, w2l__arena_pool *pool)
{
    w2l__arena_init(a, pool->block_size);
    a->pool = pool_ref(pool);
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
        b = a->pool && sz == a->block_size ? pool_take(a->pool) : NULL;
        if (!b) {
            b = w2l__malloc(sizeof *b + sz);
            if (!b) return NULL;
            b->size = sz;
        }
        if (!own) a->next = sz * 2 < a->block_size ? sz * 2 : a->block_size;
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
    w2l__arena_pool *pool = a->pool;
    w2l__arena_block *keep = NULL, *b = a->head;
    while (b) {
        w2l__arena_block *next = b->next;
        if (pool && b->size == pool->block_size) {
            b->next = keep;
            keep = b;
        } else {
            w2l__free(b);
        }
        b = next;
    }
    if (keep) pool_give(pool, keep);
    w2l__arena_pool_unref(pool);
    a->head = NULL;
    a->pool = NULL;
    a->next = 0;
    a->used = 0;
}
