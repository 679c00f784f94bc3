/*
 * "mem" checkpoint state store: a sorted list of (ckpt, key, value) in memory. Sealing is
 * a single assignment under the lock, so it is trivially atomic; nothing survives the
 * process. For tests, and for hosts that keep state elsewhere and only want the protocol.
 */
#include "state_int.h"
#include "../common/thread.h"

typedef struct mem_kv {
    uint64_t ckpt;
    char *key;
    unsigned char *val;
    size_t len;
    struct mem_kv *next;
} mem_kv;

typedef struct mem_state {
    w2l_state base;
    mtx_t mtx;
    mem_kv *head; /* ordered by (ckpt, key) */
    uint64_t sealed;
} mem_state;

static int kv_cmp(const mem_kv *e, uint64_t ckpt, const char *key)
{
    if (e->ckpt != ckpt) return e->ckpt < ckpt ? -1 : 1;
    return strcmp(e->key, key);
}

static void kv_free(mem_kv *e)
{
    w2l__free(e->key);
    w2l__free(e->val);
    w2l__free(e);
}

static w2l_rc ms_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                      w2l_state *self, w2l_error *err)
{
    (void)m, (void)conf, (void)uri;
    mem_state *s = (mem_state *)self;
    if (mtx_init(&s->mtx, mtx_plain) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "mutex init failed");
    return W2L_OK;
}

static w2l_rc ms_put(w2l_state *self, uint64_t ckpt, const char *key, const void *val,
                     size_t len, w2l_error *err)
{
    mem_state *s = (mem_state *)self;
    unsigned char *copy = w2l__malloc(len);
    W2L_NOMEM_IF(!copy, err);
    if (len) memcpy(copy, val, len);
    w2l_rc rc = W2L_OK;
    mtx_lock(&s->mtx);
    if (ckpt <= s->sealed) {
        rc = w2l__fail(err, W2L_MISUSE, "put %s into checkpoint %llu, already sealed", key,
                       (unsigned long long)ckpt);
    } else {
        mem_kv **p = &s->head;
        while (*p && kv_cmp(*p, ckpt, key) < 0) p = &(*p)->next;
        if (*p && kv_cmp(*p, ckpt, key) == 0) {
            w2l__free((*p)->val);
            (*p)->val = copy;
            (*p)->len = len;
            copy = NULL;
        } else {
            mem_kv *e = w2l__calloc(1, sizeof *e);
            char *k = w2l__strdup(key);
            if (!e || !k) {
                w2l__free(e);
                w2l__free(k);
                rc = w2l__fail(err, W2L_NOMEM, "put %s: out of memory", key);
            } else {
                e->ckpt = ckpt;
                e->key = k;
                e->val = copy;
                e->len = len;
                e->next = *p;
                *p = e;
                copy = NULL;
            }
        }
    }
    mtx_unlock(&s->mtx);
    w2l__free(copy);
    return rc;
}

static w2l_rc ms_get(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out,
                     w2l_error *err)
{
    mem_state *s = (mem_state *)self;
    w2l_rc rc = W2L_NOTFOUND;
    mtx_lock(&s->mtx);
    for (mem_kv *e = s->head; e; e = e->next)
        if (kv_cmp(e, ckpt, key) == 0) {
            rc = w2l_buf_append(out, e->val, e->len, err);
            break;
        }
    mtx_unlock(&s->mtx);
    if (rc == W2L_NOTFOUND)
        w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key, (unsigned long long)ckpt);
    return rc;
}

static w2l_rc ms_keys(w2l_state *self, uint64_t ckpt, const char *prefix,
                      int (*fn)(void *, const char *), void *ctx, w2l_error *err)
{
    mem_state *s = (mem_state *)self;
    size_t pl = strlen(prefix);
    /* copy the matching keys out so fn may call back into the store */
    w2l_buf keys = {0};
    size_t count = 0;
    w2l_rc rc = W2L_OK;
    mtx_lock(&s->mtx);
    for (mem_kv *e = s->head; e && rc == W2L_OK; e = e->next)
        if (e->ckpt == ckpt && strncmp(e->key, prefix, pl) == 0) {
            rc = w2l_buf_append(&keys, e->key, strlen(e->key) + 1, err);
            count++;
        }
    mtx_unlock(&s->mtx);
    const char *k = (const char *)keys.data;
    for (size_t i = 0; rc == W2L_OK && i < count; i++, k += strlen(k) + 1)
        if (fn(ctx, k)) break;
    w2l_buf_release(&keys);
    return rc;
}

static w2l_rc ms_seal(w2l_state *self, uint64_t ckpt, w2l_error *err)
{
    (void)err;
    mem_state *s = (mem_state *)self;
    mtx_lock(&s->mtx);
    s->sealed = ckpt;
    mtx_unlock(&s->mtx);
    return W2L_OK;
}

static w2l_rc ms_latest(w2l_state *self, uint64_t *ckpt, w2l_error *err)
{
    mem_state *s = (mem_state *)self;
    mtx_lock(&s->mtx);
    *ckpt = s->sealed;
    mtx_unlock(&s->mtx);
    if (*ckpt == 0) return w2l__fail(err, W2L_NOTFOUND, "no sealed checkpoint");
    return W2L_OK;
}

static w2l_rc ms_prune(w2l_state *self, uint64_t keep_from, w2l_error *err)
{
    (void)err;
    mem_state *s = (mem_state *)self;
    mtx_lock(&s->mtx);
    if (keep_from > s->sealed) keep_from = s->sealed;
    mem_kv **p = &s->head;
    while (*p && (*p)->ckpt < keep_from) {
        mem_kv *e = *p;
        *p = e->next;
        kv_free(e);
    }
    mtx_unlock(&s->mtx);
    return W2L_OK;
}

static void ms_close(w2l_state *self)
{
    mem_state *s = (mem_state *)self;
    mem_kv *e = s->head;
    while (e) {
        mem_kv *n = e->next;
        kv_free(e);
        e = n;
    }
    mtx_destroy(&s->mtx);
}

const w2l_state_methods w2l__state_mem = {
    .version = W2L_STATE_METHODS_V1,
    .name = "mem",
    .size = sizeof(mem_state),
    .open = ms_open,
    .put = ms_put,
    .get = ms_get,
    .keys = ms_keys,
    .seal = ms_seal,
    .latest = ms_latest,
    .prune = ms_prune,
    .close = ms_close,
};
