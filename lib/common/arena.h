/*
 * Arenas: memory for one batch of changes, taken in large blocks and freed at once, so a
 * batch of thousands of rows costs a handful of mallocs (w2l-design(7) section 1).
 */
#ifndef W2L_ARENA_H
#define W2L_ARENA_H

#include "common.h"

typedef struct w2l__arena_block w2l__arena_block;
typedef struct w2l__arena {
    w2l__arena_block *head;
    size_t block_size; /* the largest block; requests over a quarter of it get their own */
    size_t next;       /* the next block's size: blocks start at 1 KiB and double up to
                          block_size, so thousands of small arenas (one per table) stay small */
    size_t used;       /* bytes handed out, for memory budgets */
} w2l__arena;

void w2l__arena_init(w2l__arena *a, size_t block_size);
/* 16-byte aligned memory valid until w2l__arena_release(); NULL when out of memory. */
void *w2l__arena_alloc(w2l__arena *a, size_t n);
/* A NUL-terminated copy of n bytes of s. */
char *w2l__arena_strndup(w2l__arena *a, const char *s, size_t n);
void w2l__arena_release(w2l__arena *a);

#endif
