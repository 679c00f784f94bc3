/*
 * Bounded channels between operator threads: a ring of pointers guarded by a mutex with
 * two condition variables (zstd's POOL queue). A full channel blocks the sender, which is
 * how backpressure reaches the source. Any number of senders and receivers.
 *
 * Ownership: w2l__chan_send() hands the item over on W2L_OK; the sender must not touch it
 * afterwards. On any other result the sender still owns it.
 */
#ifndef W2L_CHAN_H
#define W2L_CHAN_H

#include "common.h"

typedef struct w2l__chan w2l__chan;

/* A channel holding at most capacity items (>= 1). NULL when out of memory. */
w2l__chan *w2l__chan_new(size_t capacity);
/* Frees the channel; items still queued are passed to drop (if not NULL). */
void w2l__chan_free(w2l__chan *c, void (*drop)(void *item));

/* Blocks while full, at most timeout_ms (< 0: forever). W2L_OK, W2L_AGAIN on time-out,
 * W2L_CANCELLED once the channel is closed. */
w2l_rc w2l__chan_send(w2l__chan *c, void *item, int64_t timeout_ms);
/* Blocks while empty, at most timeout_ms (< 0: forever). W2L_OK with *item, W2L_AGAIN on
 * time-out, W2L_DONE when closed and drained. */
w2l_rc w2l__chan_recv(w2l__chan *c, void **item, int64_t timeout_ms);
/* No more sends; receivers drain what is queued, then get W2L_DONE. Idempotent. */
void w2l__chan_close(w2l__chan *c);
size_t w2l__chan_len(w2l__chan *c);

#ifdef W2L_TESTING
/* Test hook: when non-zero, every new channel gets this capacity. */
extern size_t w2l__chan_capacity_override;
#endif

#endif
