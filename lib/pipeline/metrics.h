/*
 * Per-table metrics of a running pipeline (w2l_pipeline_metrics(3)): rows in, files and
 * bytes written, commits, the last committed checkpoint and when. The runtime feeds them
 * from what it routes — batches from the source, WRITE_RESULTs from writers to committers,
 * committers' completed checkpoints — so any operator implementation is measured the same.
 * Best effort: an allocation failure loses a sample, never the pipeline. Thread-safe.
 */
#ifndef W2L_METRICS_H
#define W2L_METRICS_H

#include "../common/common.h"

typedef struct w2l__metrics w2l__metrics;

w2l__metrics *w2l__metrics_new(void);
void w2l__metrics_free(w2l__metrics *m);
void w2l__metrics_rows(w2l__metrics *m, const char *ns, const char *table, uint64_t n);
/* A quarantined table (ddl.policy=quarantine): n more of its changes dropped. */
void w2l__metrics_quarantined(w2l__metrics *m, const char *ns, const char *table, uint64_t n,
                              const char *reason);
/* The metrics of the pipeline whose operator runs on the calling thread (NULL outside), for
 * built-in operators that measure what the runtime cannot see (rows a DDL handler drops). */
void w2l__metrics_set_current(w2l__metrics *m);
w2l__metrics *w2l__metrics_current(void);
/* A writer's result for (table, ckpt) on its way to committer `committer`; payload is the
 * built-in writer's JSON (lib/pipeline/ops.h): its files and sizes are counted. */
void w2l__metrics_result(w2l__metrics *m, const char *ns, const char *table, uint64_t ckpt,
                         unsigned committer, const char *payload, size_t len);
/* Committer `committer` committed every checkpoint up to ckpt. */
void w2l__metrics_committed(w2l__metrics *m, unsigned committer, uint64_t ckpt);
/* A maintenance action on a table: compactions committed (0 or 1) and the files they
 * replaced, snapshots expired, files removed. */
void w2l__metrics_maint(w2l__metrics *m, const char *ns, const char *table, uint64_t compactions,
                        uint64_t files_compacted, uint64_t snapshots_expired,
                        uint64_t files_removed);
/* Calls fn for every table, in first-seen order; lag_ms goes into every entry. */
w2l_rc w2l__metrics_each(w2l__metrics *m, int64_t lag_ms,
                         int (*fn)(void *, const w2l_table_metrics *), void *ctx, w2l_error *err);

#endif
