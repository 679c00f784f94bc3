/*
 * Bounded MPMC channel: see chan.h. Approach: a fixed ring (head, count) under one mutex;
 * senders wait on not_full, receivers on not_empty; close broadcasts both.
 */
#include "chan.h"
#include "thread.h"

#ifdef W2L_TESTING
size_t w2l__chan_capacity_override;
#endif

struct w2l__chan {
    mtx_t mtx;
    cnd_t not_full, not_empty;
    size_t cap, head, count;
    int closed;
    void **ring;
};

w2l__chan *w2l__chan_new(size_t capacity)
{
#ifdef W2L_TESTING
    if (w2l__chan_capacity_override) capacity = w2l__chan_capacity_override;
#endif
    if (capacity == 0) capacity = 1;
    w2l__chan *c = w2l__calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ring = w2l__calloc(capacity, sizeof *c->ring);
    if (!c->ring) {
        w2l__free(c);
        return NULL;
    }
    c->cap = capacity;
    if (mtx_init(&c->mtx, mtx_plain) != thrd_success) goto fail_mtx;
    if (cnd_init(&c->not_full) != thrd_success) goto fail_nf;
    if (cnd_init(&c->not_empty) != thrd_success) goto fail_ne;
    return c;
fail_ne:
    cnd_destroy(&c->not_full);
fail_nf:
    mtx_destroy(&c->mtx);
fail_mtx:
    w2l__free(c->ring);
    w2l__free(c);
    return NULL;
}

void w2l__chan_free(w2l__chan *c, void (*drop)(void *item))
{
    if (!c) return;
    for (size_t i = 0; i < c->count; i++) {
        void *it = c->ring[(c->head + i) % c->cap];
        if (drop) drop(it);
    }
    cnd_destroy(&c->not_empty);
    cnd_destroy(&c->not_full);
    mtx_destroy(&c->mtx);
    w2l__free(c->ring);
    w2l__free(c);
}

/* Waits on cv until pred() or time-out; returns 0 on time-out. */
static int wait_on(w2l__chan *c, cnd_t *cv, int64_t timeout_ms, const struct timespec *dl)
{
    if (timeout_ms < 0) return cnd_wait(cv, &c->mtx) == thrd_success;
    return cnd_timedwait(cv, &c->mtx, dl) != thrd_timedout;
}

w2l_rc w2l__chan_send(w2l__chan *c, void *item, int64_t timeout_ms)
{
    struct timespec dl = w2l__deadline_ms(timeout_ms < 0 ? 0 : timeout_ms);
    w2l_rc rc = W2L_OK;
    mtx_lock(&c->mtx);
    while (!c->closed && c->count == c->cap) {
        if (timeout_ms == 0 || !wait_on(c, &c->not_full, timeout_ms, &dl)) {
            if (!c->closed && c->count == c->cap) rc = W2L_AGAIN;
            break;
        }
    }
    if (rc == W2L_OK) {
        if (c->closed) {
            rc = W2L_CANCELLED;
        } else {
            c->ring[(c->head + c->count) % c->cap] = item;
            c->count++;
            cnd_signal(&c->not_empty);
        }
    }
    mtx_unlock(&c->mtx);
    return rc;
}

w2l_rc w2l__chan_recv(w2l__chan *c, void **item, int64_t timeout_ms)
{
    struct timespec dl = w2l__deadline_ms(timeout_ms < 0 ? 0 : timeout_ms);
    w2l_rc rc = W2L_OK;
    mtx_lock(&c->mtx);
    while (c->count == 0 && !c->closed) {
        if (timeout_ms == 0 || !wait_on(c, &c->not_empty, timeout_ms, &dl)) {
            if (c->count == 0 && !c->closed) rc = W2L_AGAIN;
            break;
        }
    }
    if (rc == W2L_OK) {
        if (c->count == 0) {
            rc = W2L_DONE;
        } else {
            *item = c->ring[c->head];
            c->head = (c->head + 1) % c->cap;
            c->count--;
            cnd_signal(&c->not_full);
        }
    }
    mtx_unlock(&c->mtx);
    return rc;
}

void w2l__chan_close(w2l__chan *c)
{
    mtx_lock(&c->mtx);
    c->closed = 1;
    cnd_broadcast(&c->not_full);
    cnd_broadcast(&c->not_empty);
    mtx_unlock(&c->mtx);
}

size_t w2l__chan_len(w2l__chan *c)
{
    mtx_lock(&c->mtx);
    size_t n = c->count;
    mtx_unlock(&c->mtx);
    return n;
}
