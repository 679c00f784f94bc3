/*
 * The emitter: how changes enter the pipeline, from a source plug-in or from a host through
 * the push API (w2l_emit_change(3)). It validates each change, copies it into a per-table
 * batch whose memory is one arena (freed at once downstream), and hands over whole batches,
 * so a channel operation and an allocation are paid per batch, not per row.
 *
 * Ordering: within one table, changes and DDL keep their source order (a DDL first hands
 * over every open batch). Across tables there is no order, except within a group
 * (w2l__emitter_set_group). Transaction ends are
 * reported to the owner (hooks.commit) with the resume position; the owner places
 * checkpoint barriers there after w2l__emitter_flush().
 */
#ifndef W2L_EMIT_H
#define W2L_EMIT_H

#include <stdatomic.h>

#include "../common/arena.h"
#include "../common/common.h"

/* Changes of one table under one schema. Owns its arena; values' bytes point into it. */
typedef struct w2l__batch {
    char *ns, *table;       /* in the arena */
    w2l_schema *schema;     /* one reference held */
    w2l_change *changes;    /* n entries; each row points into the arena */
    size_t n, cap;
    uint64_t table_hash;    /* w2l__table_hash(ns, table), for routing */
    atomic_int refs;        /* the pipeline splits a batch over writers without copying rows */
    w2l__arena arena;
} w2l__batch;

/* The routing hash of a table: the same everywhere (emitter, pipeline, operators). */
uint64_t w2l__table_hash(const char *ns, const char *table);
w2l__batch *w2l__batch_ref(w2l__batch *b);

/* One DDL statement, copied into its own arena. */
typedef struct w2l__ddl_elem {
    w2l_ddl ddl;            /* pointers into arena; schema_after referenced if not NULL */
    w2l__arena arena;
} w2l__ddl_elem;

void w2l__batch_free(w2l__batch *b);       /* drops one reference; NULL is a no-op */
void w2l__ddl_elem_free(w2l__ddl_elem *d); /* NULL is a no-op */

typedef struct w2l__emit_hooks {
    /* Each takes ownership of what it is given, also when it fails. */
    w2l_rc (*batch)(void *ctx, w2l__batch *b, w2l_error *err);
    w2l_rc (*ddl)(void *ctx, w2l__ddl_elem *d, w2l_error *err);
    /* A transaction ended; position (not NUL-terminated) is where to resume after it. */
    w2l_rc (*commit)(void *ctx, const char *position, size_t len, w2l_error *err);
    void *ctx;
} w2l__emit_hooks;

/* w2l_emit_quarantine(), called after the table's open batch was handed over (ctx: the
 * hooks'). An emitter without it refuses quarantines. */
typedef w2l_rc (*w2l__emit_quarantine_fn)(void *ctx, const char *ns, const char *table,
                                          const char *reason, uint64_t rows, w2l_error *err);

/* batch_rows: hand a table's batch over once it holds this many changes. */
w2l_emitter *w2l__emitter_new(const w2l__emit_hooks *hooks, size_t batch_rows);
void w2l__emitter_free(w2l_emitter *em); /* drops open batches */
void w2l__emitter_set_quarantine(w2l_emitter *em, w2l__emit_quarantine_fn fn);

/* Tables whose changes must reach the pipeline in their source order among each other,
 * not only within each table (the source tables a route merges, route.h): fn (called with
 * the hooks' ctx, once per table) names the group of ns.table, NULL for none. A group
 * holds at most one open batch: a change of another of its tables hands it over first. */
typedef const char *(*w2l__emit_group_fn)(void *ctx, const char *ns, const char *table);
void w2l__emitter_set_group(w2l_emitter *em, w2l__emit_group_fn fn);

/* Hands over every open batch (before a checkpoint barrier, at end of stream). */
w2l_rc w2l__emitter_flush(w2l_emitter *em, w2l_error *err);

/* The position of the last w2l_emit_commit(), borrowed (NULL before the first). */
const char *w2l__emitter_position(const w2l_emitter *em, size_t *len);
/* Changes accepted since the emitter was made. */
uint64_t w2l__emitter_rows(const w2l_emitter *em);
/* 1 while a transaction is open (a change or DDL since the last commit). */
int w2l__emitter_in_txn(const w2l_emitter *em);
/* The source's phase and connection, for the operations endpoint: a built-in source sets
 * the snapshot flag while it takes its initial snapshot and counts its reconnects; any
 * thread reads them. */
void w2l__emitter_set_snapshot(w2l_emitter *em, int on);
int w2l__emitter_snapshot(const w2l_emitter *em);

/* How far the source's snapshot is (the mysql source's chunked snapshot), set by the
 * source thread, read from any thread (w2l_pipeline_stats). */
typedef struct w2l__snap_progress {
    uint64_t tables, tables_done;  /* tables it reads in all, read */
    uint64_t rows, rows_estimated; /* rows read; the server's estimate of them all (0: none) */
    uint64_t chunks;               /* chunks emitted */
    int64_t started_ms;            /* wall clock when it began; 0: no snapshot */
} w2l__snap_progress;
void w2l__emitter_set_snapshot_progress(w2l_emitter *em, const w2l__snap_progress *p);
void w2l__emitter_snapshot_progress(const w2l_emitter *em, w2l__snap_progress *out);
void w2l__emitter_reconnected(w2l_emitter *em);
/* Wall ms since which the emitter holds rows no flush has handed over (the oldest change
 * read and not yet behind a checkpoint barrier, at most); 0 when none. Any thread. */
int64_t w2l__emitter_held_ms(const w2l_emitter *em);
uint64_t w2l__emitter_reconnects(const w2l_emitter *em);
/* The largest w2l_emit_progress() mark so far; -1 before the first. */
int64_t w2l__emitter_progress(const w2l_emitter *em);

#endif
