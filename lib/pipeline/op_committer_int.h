/*
 * The committer operator's insides (op_committer.c holds the operator and describes it):
 * its state, and what op_committer.c (the operator: WRITE_RESULTs gathered, pending
 * checkpoints, the barrier's state), op_committer_state.c (the job id, file objects and
 * state keys), op_committer_tables.c (the table-handle cache) and op_committer_commit.c
 * (a sealed checkpoint's commits: per table, or one cut of several) share.
 */
#ifndef W2L_OP_COMMITTER_INT_H
#define W2L_OP_COMMITTER_INT_H

#include "../event/emit.h"
#include "ops.h"
#include "ledger.h"
#include "maintenance.h"
#include "owner.h"

/* Loaded tables kept by all committers together (each keeps its share, at least 256). A
 * handle is the table's metadata (a few KiB for a table whose snapshots maintenance
 * expires); one dropped is loaded again at its next commit (version hint, metadata JSON,
 * ancestry), which cost more than the commit itself when a thousand tables cycled through
 * 256 handles: tables commit in the same order every checkpoint, so an LRU smaller than
 * the committer's tables keeps none of them. */
#define HANDLE_CACHE_TOTAL 16384
#define HANDLE_CACHE_MAX(c) W2L_MAX(256, HANDLE_CACHE_TOTAL / (c)->n)

typedef struct pend {         /* one table's files of one checkpoint, not yet committed */
    uint64_t ckpt;
    char *ns, *table;
    char *value;              /* the state value (ops.h), NUL-terminated */
    size_t len;
    int restored;             /* from the restored checkpoint: written by an earlier run */
    struct pend *next;
} pend;

typedef struct acc acc;       /* WRITE_RESULTs of one table, being gathered (op_committer.c) */

typedef struct handle {       /* a loaded table */
    uint64_t h;
    w2l__ice_table *t;
    uint64_t max_ckpt;        /* this job's newest checkpoint in the ancestry; 0: none */
    struct handle *chain, *prev, *next; /* bucket chain; LRU list, most recent first */
} handle;

typedef struct committer {
    w2l_operator base;
    const w2l_conf *conf;
    unsigned index, n;
    w2l_state *st;
    char *job_id;
    uint64_t epoch;
    int retries;
    w2l_fileio *io;
    w2l_catalog *cat;
    /* this checkpoint */
    acc **abuckets;
    size_t acap;
    acc **alist;
    size_t an, alcap;
    /* pending, in commit order */
    pend *phead, *ptail;
    /* table handles */
    handle **hbuckets;
    size_t hcap, hcount;
    handle *lru_head, *lru_tail;
    w2l__owner *owner;
    w2l__claims *claims, *own_claims; /* the owner's; without an owner, our own */
    uint64_t generation;      /* the owner's count of applied operations our handles know */
    w2l__maint *maint;        /* NULL: no maintenance (w2l recover, tests) */
    w2l__ledger *ledger;      /* a shared source: positions per table (ledger.h); else NULL */
    int64_t batch_max;        /* tables per multi-table commit; 0: table by table */
} committer;

/* op_committer.c: frees a pending table's files (NULL: nothing). */
void w2l__cm_pend_free(pend *p);

/* op_committer_state.c: the state key of ns.table's files of checkpoint ckpt (ops.h) into
 * b, NUL-terminated; ns and table percent-encoded. */
w2l_rc w2l__cm_files_key(w2l_buf *b, uint64_t ckpt, const char *ns, const char *table,
                         w2l_error *err);
/* Decodes percent-encoded s[0..n) (a part of a files key) into fresh memory; NULL: no
 * memory. */
char *w2l__cm_key_decode(const char *s, size_t n);

/* op_committer_tables.c: the handle of ns.table when cached, else NULL. */
handle *w2l__cm_handle_find(committer *c, const char *ns, const char *table);
/* The handle of ns.table, loaded when not cached (the least recently used one dropped when
 * the cache is full). W2L_NOTFOUND when the table is gone. */
w2l_rc w2l__cm_handle_get(committer *c, const char *ns, const char *table, handle **out,
                          w2l_error *err);
/* Drops h from the cache and frees it (its metadata may be stale, or the table is gone). */
void w2l__cm_handle_drop(committer *c, handle *h);
/* A w2l__owner_touched_since callback (ctx: the committer): drops ns.table's handle. */
void w2l__cm_drop_touched(void *ctx, const char *ns, const char *table);
/* The checkpoint of the newest snapshot of this job in m's ancestry (0: none); *rc. */
uint64_t w2l__cm_job_ckpt(const committer *c, const w2l__ice_meta *m, w2l_error *err,
                          w2l_rc *rc);
/* Opens the catalog (conf's) on first use. */
w2l_rc w2l__cm_ensure_catalog(committer *c, w2l_error *err);

/* op_committer_commit.c: the operator's notify_complete: commits the pending checkpoints up
 * to ckpt (and the compactions maintenance finished); the first failure's outcome. */
w2l_rc w2l__cm_complete(w2l_operator *self, uint64_t ckpt, w2l_error *err);

#endif
