/*
 * Allocation through one replaceable hook (w2l_set_allocator), as zstd and libuv do, so
 * a host can account memory and the tests can fail the Nth allocation. The hook is fixed
 * while the library is initialised (lib/init.c says when, through w2l__allocator_fix()).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

static w2l_malloc_fn m_malloc = malloc;
static w2l_realloc_fn m_realloc = realloc;
static w2l_free_fn m_free = free;
static int fixed;

void w2l__allocator_fix(int on) { fixed = on; }

w2l_rc w2l_set_allocator(w2l_malloc_fn m, w2l_realloc_fn r, w2l_free_fn f)
{
    if (!m || !r || !f || fixed) return W2L_MISUSE;
    m_malloc = m;
    m_realloc = r;
    m_free = f;
    return W2L_OK;
}

void *w2l__malloc(size_t n) { return m_malloc(n ? n : 1); }
void *w2l__realloc(void *p, size_t n) { return m_realloc(p, n ? n : 1); }
void w2l__free(void *p)
{
    if (p) m_free(p);
}

void *w2l__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = w2l__malloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

char *w2l__strndup(const char *s, size_t n)
{
    char *d = w2l__malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *w2l__strdup(const char *s) { return s ? w2l__strndup(s, strlen(s)) : NULL; }

char *w2l__asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = w2l__malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void *w2l_malloc(size_t size) { return w2l__malloc(size); }
void *w2l_realloc(void *ptr, size_t size) { return w2l__realloc(ptr, size); }
void w2l_free(void *ptr) { w2l__free(ptr); }
