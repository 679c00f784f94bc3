/*
 * An allocator that fails on request: counts calls since arm and returns NULL at the
 * chosen one, so a test can walk every allocation of an operation (SQLite's malloc fault
 * loop). Also counts live blocks, so a failure path that leaks shows up.
 */
#include <stdlib.h>

#include "support.h"

static long fail_at = -1, calls, live;

static void *fa_malloc(size_t n)
{
    if (fail_at >= 0 && calls++ == fail_at) return NULL;
    void *p = malloc(n);
    if (p) live++;
    return p;
}

static void *fa_realloc(void *p, size_t n)
{
    if (fail_at >= 0 && calls++ == fail_at) return NULL;
    void *q = realloc(p, n);
    if (q && !p) live++;
    return q;
}

static void fa_free(void *p)
{
    if (p) live--;
    free(p);
}

void fail_alloc_install(void)
{
    w2l_global_cleanup();
    ck_assert_int_eq(w2l_set_allocator(fa_malloc, fa_realloc, fa_free), W2L_OK);
    w2l_error err;
    ck_assert_int_eq(w2l_global_init(&err), W2L_OK);
}

void fail_alloc_arm(long nth)
{
    fail_at = nth;
    calls = 0;
}

long fail_alloc_count(void) { return calls; }
long fail_alloc_outstanding(void) { return live; }
