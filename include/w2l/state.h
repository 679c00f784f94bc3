/*
 * Checkpoint state store plug-in. Operators put values under (checkpoint, key); seal()
 * makes checkpoint N durable and visible atomically — after a crash, latest() returns the
 * newest sealed checkpoint and get() returns exactly what was put for it before seal().
 * Built in: "mem" (tests), "file" (default, inside the warehouse), "mysql".
 * Implementer's contract: w2l_state_methods(3).
 */
#ifndef W2L_STATE_H
#define W2L_STATE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable byte buffer whose memory comes from w2l_malloc(). */
typedef struct w2l_buf {
    unsigned char *data;
    size_t len, cap;
} w2l_buf;

/* Appends len bytes, growing the buffer. W2L_NOMEM on failure (buf unchanged).
 * See w2l_buf_append(3). */
W2L_API w2l_rc w2l_buf_append(w2l_buf *b, const void *p, size_t len, w2l_error *err);
/* Frees the memory and zeroes the struct. See w2l_buf_append(3). */
W2L_API void w2l_buf_release(w2l_buf *b);

typedef struct w2l_state w2l_state;

/* The process that holds a state store (w2l_state_lock): one job writes to a store at a
 * time. See w2l_state_lock(3). */
typedef struct w2l_state_holder {
    char job[128];      /* its job id; "" when it had none */
    char host[256];     /* its host name */
    long long pid;      /* its process id on host */
    int64_t since_ms;   /* when it took the store, ms since 1970-01-01 UTC */
    int64_t expires_ms; /* a lease: when it ends unless renewed; 0: held until the holder ends */
    char version[32];   /* its libwholedb2lake version */
    uint64_t epoch;     /* one more at each taking: a fencing token */
} w2l_state_holder;

#define W2L_STATE_METHODS_V1 1
#define W2L_STATE_METHODS_V2 2 /* adds lock and holder */
#define W2L_STATE_METHODS_V3 3 /* adds renew */

typedef struct w2l_state_methods {
    int version;      /* W2L_STATE_METHODS_V1 */
    const char *name; /* registry key: "file", "mem", "mysql" */
    size_t size;      /* sizeof impl struct; the core allocates and zeroes it */
    void *app_data;   /* for the implementer; the core never reads it */
    /* uri: what followed "NAME:" in the --state URI, or NULL. */
    w2l_rc (*open)(const struct w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                   w2l_state *self, w2l_error *err);
    /* Stores val under (ckpt, key) for a checkpoint not yet sealed; replaces an earlier put. */
    w2l_rc (*put)(w2l_state *self, uint64_t ckpt, const char *key, const void *val,
                  size_t len, w2l_error *err);
    /* Appends the value to out; W2L_NOTFOUND when absent. */
    w2l_rc (*get)(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out,
                  w2l_error *err);
    /* Calls fn with each key of ckpt that starts with prefix, in byte order. */
    w2l_rc (*keys)(w2l_state *self, uint64_t ckpt, const char *prefix,
                   int (*fn)(void *ctx, const char *key), void *ctx, w2l_error *err);
    /* Atomically makes ckpt the newest sealed checkpoint. Must be durable on W2L_OK. */
    w2l_rc (*seal)(w2l_state *self, uint64_t ckpt, w2l_error *err);
    /* The newest sealed checkpoint; W2L_NOTFOUND when none. */
    w2l_rc (*latest)(w2l_state *self, uint64_t *ckpt, w2l_error *err);
    /* Forgets every checkpoint below keep_from (never the latest sealed one). */
    w2l_rc (*prune)(w2l_state *self, uint64_t keep_from, w2l_error *err);
    void (*close)(w2l_state *self); /* cannot fail; releases what lock took */
    /* V2. Takes the store for the process described by *me, exclusively, until close:
     * sets me->epoch (the previous holder's plus one) and, for a lease, me->expires_ms.
     * When another live process holds it: W2L_BUSY, *other filled, and err's message the
     * store's location only (e.g. "file:/lake/_w2l/state"); the core words the error.
     * Once taken, seal and prune fail with W2L_BUSY when the store was taken over; for a
     * lease the write itself is conditional (a holder paused between check and write must
     * not overwrite the next one's). */
    w2l_rc (*lock)(w2l_state *self, w2l_state_holder *me, w2l_state_holder *other,
                   w2l_error *err);
    /* V2. The live holder into *out, without taking anything; W2L_NOTFOUND when none. */
    w2l_rc (*holder)(w2l_state *self, w2l_state_holder *out, w2l_error *err);
    /* V3 (may be NULL). Renews what lock took, after checking it is still this process's:
     * *expires_ms (never NULL) the lease's new end, or 0 for a lock held until the process
     * ends. W2L_BUSY, worded ("fenced: ..." naming the new holder), once another took it. */
    w2l_rc (*renew)(w2l_state *self, int64_t *expires_ms, w2l_error *err);
} w2l_state_methods;
struct w2l_state { const w2l_state_methods *methods; };

/* Registry, as for file IO. See w2l_state_register(3). */
W2L_API w2l_rc w2l_state_register(const w2l_state_methods *m, int make_default);
W2L_API const w2l_state_methods *w2l_state_find(const char *name); /* NULL name: default */

/* Opens a store from a URI "NAME" or "NAME:REST" (e.g. "file:/lake/_w2l_state",
 * "mysql://user@127.0.0.1:3306/db"), NULL for the default. See w2l_state_open(3). */
W2L_API w2l_rc w2l_state_open(const char *uri, const w2l_conf *conf, w2l_state **out,
                              w2l_error *err);
W2L_API void w2l_state_close(w2l_state *st); /* NULL is a no-op */

/* Wrappers: the only way the core calls the methods. See w2l_state_open(3). */
W2L_API w2l_rc w2l_state_put(w2l_state *st, uint64_t ckpt, const char *key, const void *val,
                             size_t len, w2l_error *err);
W2L_API w2l_rc w2l_state_get(w2l_state *st, uint64_t ckpt, const char *key, w2l_buf *out,
                             w2l_error *err);
W2L_API w2l_rc w2l_state_keys(w2l_state *st, uint64_t ckpt, const char *prefix,
                              int (*fn)(void *ctx, const char *key), void *ctx,
                              w2l_error *err);
W2L_API w2l_rc w2l_state_seal(w2l_state *st, uint64_t ckpt, w2l_error *err);
W2L_API w2l_rc w2l_state_latest(w2l_state *st, uint64_t *ckpt, w2l_error *err);
W2L_API w2l_rc w2l_state_prune(w2l_state *st, uint64_t keep_from, w2l_error *err);

/* Takes the store for this process (job: its job id, or NULL) until w2l_state_close: a
 * second job on the same store gets W2L_BUSY, naming the first's job, pid, host and start.
 * A store of version 1 cannot be locked: W2L_OK, nothing taken. See w2l_state_lock(3). */
W2L_API w2l_rc w2l_state_lock(w2l_state *st, const char *job, w2l_error *err);
/* Renews this process's hold on a store it locked (a lease: checked, then extended by
 * ha.lease-timeout; the mysql store's lease beside its named lock too): *expires_ms the
 * lease's new end (ms since 1970 UTC), 0 for a lock that needs no renewal (a lock file).
 * W2L_BUSY naming the new holder once another process took the store over (this one
 * must then write nothing more). A store below version 3, or not locked: W2L_OK and 0.
 * Thread-safe. See w2l_state_lock(3). */
W2L_API w2l_rc w2l_state_renew(w2l_state *st, int64_t *expires_ms, w2l_error *err);
/* Who holds the store now; W2L_NOTFOUND when nobody (or a version 1 store). Takes
 * nothing, so a reader beside a running job may call it. See w2l_state_lock(3). */
W2L_API w2l_rc w2l_state_holder_get(w2l_state *st, w2l_state_holder *out, w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
