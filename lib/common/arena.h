/*
 * Arenas: memory for one batch of changes, taken in large blocks and freed at once, so a
 * batch of thousands of rows costs a handful of mallocs (w2l-design(7) section 1).
 *
 * A pool keeps the full-size blocks of released arenas for the next arenas to take. A
 * stream of batches made on one thread and freed on others would otherwise cycle through
 * malloc, which hands the freed memory back to the kernel (heap trim) and faults fresh pages
 * in for every batch; with a pool the same few megabytes are reused.
 */
#ifndef W2L_ARENA_H
#define W2L_ARENA_H

#include "common.h"

typedef struct w2l__arena_block w2l__arena_block;
typedef struct w2l__arena_pool w2l__arena_pool;
typedef struct w2l__arena {
    w2l__arena_block *head;
    w2l__arena_pool *pool; /* where full-size blocks come from and go back to; NULL none */
    size_t block_size; /* the largest block; requests over a quarter of it get their own */
    size_t next;       /* the next block's size: blocks start at 1 KiB and double up to
                          block_size, so thousands of small arenas (one per table) stay small */
    size_t used;       /* bytes handed out, for memory budgets */
} w2l__arena;

void w2l__arena_init(w2l__arena *a, size_t block_size);
/* As w2l__arena_init with the pool's block size; the arena takes a reference to pool, which
 * w2l__arena_release() gives back (a released arena no longer uses the pool). Only blocks of
 * the full size come from and go back to the pool: the small first blocks and the one-off
 * large ones are malloc'd and freed as in any arena. */
void w2l__arena_init_pooled(w2l__arena *a, w2l__arena_pool *pool);
/* 16-byte aligned memory valid until w2l__arena_release(); NULL when out of memory. */
void *w2l__arena_alloc(w2l__arena *a, size_t n);
/* A NUL-terminated copy of n bytes of s. */
char *w2l__arena_strndup(w2l__arena *a, const char *s, size_t n);
/* Frees the arena's memory (full-size blocks go back to its pool while it has room). The
 * arena may be used again, unpooled. Any thread may release an arena of a pool. */
void w2l__arena_release(w2l__arena *a);

/* A pool of arena blocks of block_size bytes holding at most max_blocks of them; blocks
 * given back beyond that are freed. Thread-safe. The caller owns one reference and each
 * pooled arena holds one until released, so arenas may outlive the pool's maker; the last
 * reference frees the pool and its blocks. NULL when out of memory. */
w2l__arena_pool *w2l__arena_pool_new(size_t block_size, size_t max_blocks);
void w2l__arena_pool_unref(w2l__arena_pool *pool); /* NULL is a no-op */
/* Blocks the pool holds now (for tests and statistics). */
size_t w2l__arena_pool_blocks(w2l__arena_pool *pool);

#endif
