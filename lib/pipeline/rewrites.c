/*
 * The compactions a pipeline committed, told to its writers: see rewrites.h.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "rewrites.h"

typedef struct rewrite {
    uint64_t seq;
    char *ns, *table;
    char **removed, **added;
    size_t nremoved, nadded;
    unsigned taken;           /* writers that took it */
    uint64_t clean;           /* the largest first_clean of those */
    struct rewrite *next;
} rewrite;

struct w2l__rewrites {
    mtx_t mtx;
    unsigned nwriters;
    _Atomic uint64_t newest;
    rewrite *head, *tail;
};

w2l__rewrites *w2l__rewrites_new(unsigned nwriters)
{
    w2l__rewrites *r = w2l__calloc(1, sizeof *r);
    if (!r) return NULL;
    if (mtx_init(&r->mtx, mtx_plain) != thrd_success) {
        w2l__free(r);
        return NULL;
    }
    r->nwriters = nwriters;
    return r;
}

static void strs_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) w2l__free(v[i]);
    w2l__free(v);
}

static void rewrite_free(rewrite *w)
{
    if (!w) return;
    w2l__free(w->ns);
    w2l__free(w->table);
    strs_free(w->removed, w->nremoved);
    strs_free(w->added, w->nadded);
    w2l__free(w);
}

void w2l__rewrites_free(w2l__rewrites *r)
{
    if (!r) return;
    for (rewrite *w = r->head, *n; w; w = n) {
        n = w->next;
        rewrite_free(w);
    }
    mtx_destroy(&r->mtx);
    w2l__free(r);
}

static char **strs_dup(const char *const *v, size_t n)
{
    char **o = w2l__calloc(n + 1, sizeof *o);
    for (size_t i = 0; o && i < n; i++)
        if (!(o[i] = w2l__strdup(v[i]))) {
            strs_free(o, i);
            return NULL;
        }
    return o;
}

w2l_rc w2l__rewrites_post(w2l__rewrites *r, const char *ns, const char *table,
                          const char *const *removed, size_t nremoved, const char *const *added,
                          size_t nadded, w2l_error *err)
{
    rewrite *w = w2l__calloc(1, sizeof *w);
    if (w) {
        w->ns = w2l__strdup(ns);
        w->table = w2l__strdup(table);
        w->removed = strs_dup(removed, nremoved);
        w->added = strs_dup(added, nadded);
        w->nremoved = nremoved;
        w->nadded = nadded;
    }
    if (!w || !w->ns || !w->table || !w->removed || !w->added) {
        rewrite_free(w);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    mtx_lock(&r->mtx);
    w->seq = atomic_load(&r->newest) + 1;
    if (r->tail) r->tail->next = w;
    else r->head = w;
    r->tail = w;
    atomic_store(&r->newest, w->seq);
    mtx_unlock(&r->mtx);
    return W2L_OK;
}

uint64_t w2l__rewrites_newest(w2l__rewrites *r) { return r ? atomic_load(&r->newest) : 0; }

w2l_rc w2l__rewrites_take(w2l__rewrites *r, uint64_t *seen, uint64_t first_clean,
                          w2l_rc (*fn)(void *ctx, const char *ns, const char *table,
                                       const char *const *removed, size_t nremoved,
                                       const char *const *added, size_t nadded,
                                       w2l_error *err),
                          void *ctx, w2l_error *err)
{
    while (atomic_load(&r->newest) > *seen) {
        /* the next one: not freed before every writer took it, so it is read unlocked */
        mtx_lock(&r->mtx);
        rewrite *w = r->head;
        while (w && w->seq <= *seen) w = w->next;
        mtx_unlock(&r->mtx);
        if (!w) break;
        W2L_TRY(fn(ctx, w->ns, w->table, (const char *const *)w->removed, w->nremoved,
                   (const char *const *)w->added, w->nadded, err));
        mtx_lock(&r->mtx);
        *seen = w->seq; /* before it may be freed */
        w->taken++;
        if (first_clean > w->clean) w->clean = first_clean;
        mtx_unlock(&r->mtx);
    }
    return W2L_OK;
}

void w2l__rewrites_onto_free(char **onto, size_t n) { strs_free(onto, n); }

int w2l__rewrites_pending(w2l__rewrites *r, const char *ns, const char *table, uint64_t ckpt,
                          char ***onto, size_t *nonto)
{
    *onto = NULL;
    *nonto = 0;
    if (!r || !atomic_load(&r->newest)) return 0;
    int any = 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    mtx_lock(&r->mtx);
    for (rewrite **pp = &r->head; *pp;) {
        rewrite *w = *pp;
        if (strcmp(w->ns, ns) != 0 || strcmp(w->table, table) != 0) {
            pp = &w->next;
            continue;
        }
        if (w->taken >= r->nwriters && ckpt >= w->clean) { /* no delete names its files */
            *pp = w->next;
            if (r->tail == w) {
                r->tail = NULL;
                for (rewrite *x = r->head; x; x = x->next) r->tail = x;
            }
            rewrite_free(w);
            continue;
        }
        any = 1;
        for (size_t i = 0; i < w->nadded; i++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                char **nv = w2l__realloc(v, cap * sizeof *nv);
                if (!nv) break;
                v = nv;
            }
            if ((v[n] = w2l__strdup(w->added[i])) != NULL) n++;
        }
        pp = &w->next;
    }
    mtx_unlock(&r->mtx);
    *onto = v;
    *nonto = n;
    return any;
}
