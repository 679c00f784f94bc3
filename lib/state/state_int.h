/* Checkpoint state module, internal side. */
#ifndef W2L_STATE_INT_H
#define W2L_STATE_INT_H

#include "../common/common.h"

extern const w2l_state_methods w2l__state_mem;
extern const w2l_state_methods w2l__state_file;
extern const w2l_state_methods w2l__state_mysql;
extern w2l__registry w2l__state_registry;

/* ---- state_kv.c: one checkpoint's entries, sorted by key; and the unsealed ones ---- */
typedef struct w2l__kv_entry {
    char *key;
    unsigned char *val;
    size_t len;
} w2l__kv_entry;

typedef struct w2l__kv_table {
    uint64_t ckpt;
    w2l__kv_entry *e;
    size_t n, cap;
} w2l__kv_table;

typedef struct w2l__kv_pending {
    w2l__kv_table *t;
    size_t n;
} w2l__kv_pending;

void w2l__kv_clear(w2l__kv_table *t);
const w2l__kv_entry *w2l__kv_find(const w2l__kv_table *t, const char *key);
/* Inserts or replaces key; takes ownership of val (also on failure). */
w2l_rc w2l__kv_put(w2l__kv_table *t, const char *key, unsigned char *val, size_t len,
                   w2l_error *err);
w2l_rc w2l__kv_put_copy(w2l__kv_table *t, const char *key, const void *val, size_t len,
                        w2l_error *err);
/* Appends the NUL-terminated keys of t starting with prefix to out (so a keys() method can
 * call back after releasing its lock) and counts them; then w2l__kv_call_keys. */
w2l_rc w2l__kv_collect_keys(const w2l__kv_table *t, const char *prefix, w2l_buf *out, size_t *count,
                            w2l_error *err);
void w2l__kv_call_keys(const w2l_buf *keys, size_t count, int (*fn)(void *, const char *),
                       void *ctx);
/* The unsealed table of ckpt (created when asked); NULL when absent or out of memory. */
w2l__kv_table *w2l__kv_pending_get(w2l__kv_pending *p, uint64_t ckpt, int create, w2l_error *err);
/* Seal time: moves ckpt's table into *out (empty when none was put; returns 1 when found)
 * and drops every pending table below ckpt, which can never be sealed. */
int w2l__kv_pending_take(w2l__kv_pending *p, uint64_t ckpt, w2l__kv_table *out);
void w2l__kv_pending_free(w2l__kv_pending *p);

/* ---- state_lock.c: who holds a store; a lock file (local) or a lease (any file IO) ---- */
/* The holder record as one JSON object (fresh memory in *out), and back (-1: not one). */
w2l_rc w2l__holder_encode(const w2l_state_holder *h, char **out, w2l_error *err);
int w2l__holder_decode(const char *text, size_t len, w2l_state_holder *h);
/* 1 when h names a process of this host that no longer runs. */
int w2l__holder_gone(const w2l_state_holder *h);
/* The lock file at path: taken (fd into *fd, me->epoch set, the record written), or
 * W2L_BUSY with *other read from the file. probe: the holder, W2L_NOTFOUND when none. */
w2l_rc w2l__lockfile_take(const char *path, w2l_state_holder *me, w2l_state_holder *other,
                          int *fd, w2l_error *err);
w2l_rc w2l__lockfile_probe(const char *path, w2l_state_holder *out, w2l_error *err);
void w2l__lockfile_release(int fd);
/* The lease object at path, of timeout_ms: take (W2L_BUSY with *other when live and not
 * ours); check before each seal and prune (W2L_BUSY, worded, when taken over; renews it
 * once a third of its time has passed, or always with force); probe (the live holder, or
 * W2L_NOTFOUND); release (ends it when still ours, keeping its epoch for the next, or
 * removes it with remove). */
w2l_rc w2l__lease_take(w2l_fileio *io, const char *path, int64_t timeout_ms,
                       w2l_state_holder *me, w2l_state_holder *other, w2l_error *err);
w2l_rc w2l__lease_check(w2l_fileio *io, const char *path, int64_t timeout_ms, int force,
                        w2l_state_holder *me, w2l_error *err);
w2l_rc w2l__lease_probe(w2l_fileio *io, const char *path, w2l_state_holder *out, w2l_error *err);
void w2l__lease_release(w2l_fileio *io, const char *path, const w2l_state_holder *me,
                        int remove);

#endif
