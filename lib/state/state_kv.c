/*
 * Sorted in-memory key/value tables of one checkpoint, and the set of checkpoints put but
 * not yet sealed: what the "file" and "mysql" stores hold between put() and seal().
 */
#include <stdlib.h>

#include "state_int.h"

void w2l__kv_clear(w2l__kv_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        w2l__free(t->e[i].key);
        w2l__free(t->e[i].val);
    }
    w2l__free(t->e);
    memset(t, 0, sizeof *t);
}

/* The index of the first entry whose key is not below key (t->n when none). */
static size_t lower_bound(const w2l__kv_table *t, const char *key)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(t->e[mid].key, key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const w2l__kv_entry *w2l__kv_find(const w2l__kv_table *t, const char *key)
{
    size_t i = lower_bound(t, key);
    return i < t->n && strcmp(t->e[i].key, key) == 0 ? &t->e[i] : NULL;
}

w2l_rc w2l__kv_put(w2l__kv_table *t, const char *key, unsigned char *val, size_t len,
                   w2l_error *err)
{
    /* found by binary search, not by a walk from the end: a checkpoint of 10,000 tables
     * puts 10,000 keys in no order */
    size_t i = lower_bound(t, key);
    if (i < t->n && strcmp(t->e[i].key, key) == 0) {
        w2l__free(t->e[i].val);
        t->e[i].val = val;
        t->e[i].len = len;
        return W2L_OK;
    }
    char *k = w2l__strdup(key);
    if (k && t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        w2l__kv_entry *ne = w2l__realloc(t->e, cap * sizeof *ne);
        if (ne) {
            t->e = ne;
            t->cap = cap;
        } else {
            w2l__free(k);
            k = NULL;
        }
    }
    if (!k) {
        w2l__free(val);
        return w2l__fail(err, W2L_NOMEM, "state put %s: out of memory", key);
    }
    memmove(&t->e[i + 1], &t->e[i], (t->n - i) * sizeof *t->e);
    t->e[i].key = k;
    t->e[i].val = val;
    t->e[i].len = len;
    t->n++;
    return W2L_OK;
}

w2l_rc w2l__kv_put_copy(w2l__kv_table *t, const char *key, const void *val, size_t len,
                        w2l_error *err)
{
    unsigned char *copy = w2l__malloc(len);
    W2L_NOMEM_IF(!copy, err);
    if (len) memcpy(copy, val, len);
    return w2l__kv_put(t, key, copy, len, err);
}

w2l_rc w2l__kv_collect_keys(const w2l__kv_table *t, const char *prefix, w2l_buf *out, size_t *count,
                            w2l_error *err)
{
    size_t pl = strlen(prefix);
    for (size_t i = 0; t && i < t->n; i++)
        if (strncmp(t->e[i].key, prefix, pl) == 0) {
            W2L_TRY(w2l_buf_append(out, t->e[i].key, strlen(t->e[i].key) + 1, err));
            (*count)++;
        }
    return W2L_OK;
}

void w2l__kv_call_keys(const w2l_buf *keys, size_t count, int (*fn)(void *, const char *),
                       void *ctx)
{
    const char *k = (const char *)keys->data;
    for (size_t i = 0; i < count; i++, k += strlen(k) + 1)
        if (fn(ctx, k)) break;
}

w2l__kv_table *w2l__kv_pending_get(w2l__kv_pending *p, uint64_t ckpt, int create, w2l_error *err)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].ckpt == ckpt) return &p->t[i];
    if (!create) return NULL;
    w2l__kv_table *nt = w2l__realloc(p->t, (p->n + 1) * sizeof *nt);
    if (!nt) {
        w2l__fail(err, W2L_NOMEM, "out of memory");
        return NULL;
    }
    p->t = nt;
    memset(&nt[p->n], 0, sizeof *nt);
    nt[p->n].ckpt = ckpt;
    return &nt[p->n++];
}

int w2l__kv_pending_take(w2l__kv_pending *p, uint64_t ckpt, w2l__kv_table *out)
{
    int found = 0;
    memset(out, 0, sizeof *out);
    out->ckpt = ckpt;
    for (size_t i = 0; i < p->n;) {
        if (p->t[i].ckpt == ckpt) {
            *out = p->t[i];
            found = 1;
        } else if (p->t[i].ckpt > ckpt) {
            i++;
            continue;
        } else {
            w2l__kv_clear(&p->t[i]); /* below the sealed one: can never seal */
        }
        memmove(&p->t[i], &p->t[i + 1], (p->n - i - 1) * sizeof *p->t);
        p->n--;
    }
    return found;
}

void w2l__kv_pending_free(w2l__kv_pending *p)
{
    for (size_t i = 0; i < p->n; i++) w2l__kv_clear(&p->t[i]);
    w2l__free(p->t);
    memset(p, 0, sizeof *p);
}
