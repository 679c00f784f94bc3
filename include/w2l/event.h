/*
 * Change events and DDL events: what a source (or a host service through the push API)
 * hands to a pipeline, through an emitter. Everything passed in is copied by the emitter,
 * so a source may reuse its buffers as soon as a call returns.
 */
#ifndef W2L_EVENT_H
#define W2L_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row operations. An UPDATE is two changes: UPDATE_BEFORE (the old image, which holds the
 * old primary key when the key changed) followed by UPDATE_AFTER. Numbers pinned. */
typedef enum w2l_op {
    W2L_OP_INSERT = 1,
    W2L_OP_UPDATE_BEFORE = 2,
    W2L_OP_UPDATE_AFTER = 3,
    W2L_OP_DELETE = 4
} w2l_op;

/* One row change. Every pointer is borrowed for the call that passes it. */
typedef struct w2l_change {
    const char *db;           /* source database (the Iceberg namespace after routing) */
    const char *table;        /* source table */
    const w2l_schema *schema; /* the table's schema as the source sees it at this change */
    w2l_op op;
    const w2l_value *row;     /* one value per schema field, in field order */
    size_t ncols;             /* == w2l_schema_field_count(schema) */
    const uint8_t *present;   /* NULL: all columns present; else bit i (LSB first) set when
                                 column i is in the image (binlog MINIMAL/NOBLOB images) */
    int64_t ts_ms;            /* source commit time, ms since epoch; 0 when unknown */
} w2l_change;

/* One DDL statement. */
typedef struct w2l_ddl {
    const char *db;           /* default database of the statement (USE db), may be NULL */
    const char *sql;          /* the statement text, authoritative */
    size_t sql_len;
    const char *table;        /* the table it names when the source knows it, else NULL */
    const w2l_schema *schema_after; /* the table's schema after it, when the source carries
                                       one (debezium schema, binlog metadata); else NULL */
    int64_t ts_ms;
} w2l_ddl;

/* Where changes go. Sources get one in next(); a host service pushes through the
 * pipeline's (w2l_pipeline_emitter()). Used by one thread at a time. */
typedef struct w2l_emitter w2l_emitter;

/* Hands over one change (copied). W2L_SCHEMA when the row does not fit its schema,
 * W2L_CANCELLED when the pipeline is stopping. May block when the pipeline is full
 * (backpressure). See w2l_emit_change(3). */
W2L_API w2l_rc w2l_emit_change(w2l_emitter *em, const w2l_change *c, w2l_error *err);

/* Hands over one DDL statement (copied). See w2l_emit_change(3). */
W2L_API w2l_rc w2l_emit_ddl(w2l_emitter *em, const w2l_ddl *d, w2l_error *err);

/* Sets table db.table aside (its ddl.policy is quarantine and the source met something of
 * it the lake cannot take, such as a value it cannot convert): the pipeline drops the
 * table's changes from here on and counts them (w2l_table_metrics.rows_quarantined), keeps
 * every other table flowing, and records reason (copied; NULL when the table is
 * quarantined already) in its checkpoint state, so a restart keeps the table aside and
 * w2l status names it with the reason. rows: changes of the table the caller dropped
 * itself since its last call (counted too). Calling it again for the same table only adds
 * rows. See w2l_emit_change(3). */
W2L_API w2l_rc w2l_emit_quarantine(w2l_emitter *em, const char *db, const char *table,
                                   const char *reason, uint64_t rows, w2l_error *err);

/* Ends a source transaction. position (copied, JSON text, len bytes) is where to resume
 * after it; checkpoint barriers are placed only here, so a transaction is never split
 * across checkpoints. See w2l_emit_change(3). */
W2L_API w2l_rc w2l_emit_commit(w2l_emitter *em, const char *position, size_t len,
                               w2l_error *err);

/* Reports completeness: every source transaction committed at or before through_ms (ms
 * since the epoch, UTC) has been handed over (its w2l_emit_commit() returned). The emitter
 * keeps the largest value reported; each checkpoint records it, and the tables committed
 * for that checkpoint carry it (w2l.complete-through-ms). Call it only between
 * transactions. W2L_MISUSE for a negative through_ms. See w2l_emit_change(3). */
W2L_API w2l_rc w2l_emit_progress(w2l_emitter *em, int64_t through_ms, w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
