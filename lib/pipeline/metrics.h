/*
 * Metrics of a running pipeline (w2l_pipeline_metrics(3), w2l_pipeline_stats(3)): per table
 * rows in (by operation), files and bytes written, commits and their latency, the last
 * committed checkpoint and when, rows a committed checkpoint holds, schema changes,
 * quarantine, maintenance; per pipeline checkpoint durations and failures and the committed
 * completeness mark. The runtime feeds them from what it routes — batches from the source,
 * SCHEMAs from DDL handlers, WRITE_RESULTs from writers to committers, committers' completed
 * checkpoints, the coordinator's barriers and seals — so any operator implementation is
 * measured the same. Best effort: an allocation failure loses a sample, never the pipeline.
 * Thread-safe.
 */
#ifndef W2L_METRICS_H
#define W2L_METRICS_H

#include "../common/common.h"

typedef struct w2l__metrics w2l__metrics;

/* The histograms' bucket bounds (W2L_LATENCY_BOUNDS), and the bucket of a duration. */
extern const double w2l__latency_bounds[W2L_LATENCY_BUCKETS];
unsigned w2l__latency_bucket(double secs);

w2l__metrics *w2l__metrics_new(void);
void w2l__metrics_free(w2l__metrics *m);
/* n changes of ns.table entered the pipeline (changes: counted by operation). */
void w2l__metrics_rows(w2l__metrics *m, const char *ns, const char *table,
                       const w2l_change *changes, size_t n);
/* A DDL handler sent a schema of ns.table downstream. */
void w2l__metrics_schema(w2l__metrics *m, const char *ns, const char *table);
/* A quarantined table (ddl.policy=quarantine): n more of its changes dropped. */
void w2l__metrics_quarantined(w2l__metrics *m, const char *ns, const char *table, uint64_t n,
                              const char *reason);
void w2l__metrics_released(w2l__metrics *m, const char *ns, const char *table);
/* The metrics of the pipeline whose operator runs on the calling thread (NULL outside), for
 * built-in operators that measure what the runtime cannot see (rows a DDL handler drops). */
void w2l__metrics_set_current(w2l__metrics *m);
w2l__metrics *w2l__metrics_current(void);
/* A writer's result for (table, ckpt) on its way to committer `committer`; payload is the
 * built-in writer's JSON (lib/pipeline/ops.h): its files and sizes are counted. */
void w2l__metrics_result(w2l__metrics *m, const char *ns, const char *table, uint64_t ckpt,
                         unsigned committer, const char *payload, size_t len);
/* Committer `committer` committed checkpoint ckpt (and every one before it), the commit
 * having taken secs. */
void w2l__metrics_committed(w2l__metrics *m, unsigned committer, uint64_t ckpt, double secs);
/* Checkpoint barrier id placed: the rows each table has so far are in it. */
void w2l__metrics_barrier(w2l__metrics *m, uint64_t id);
/* Checkpoint id sealed secs after its barrier was placed. */
void w2l__metrics_sealed(w2l__metrics *m, uint64_t id, double secs);
/* A checkpoint failed to seal or to commit. */
void w2l__metrics_ckpt_failed(w2l__metrics *m);
/* Every committer committed checkpoint id, whose completeness mark is mark_ms (-1 none). */
void w2l__metrics_all_committed(w2l__metrics *m, uint64_t id, int64_t mark_ms);
/* A maintenance action on a table: compactions committed (0 or 1) and the files they
 * replaced, snapshots expired, files removed. */
void w2l__metrics_maint(w2l__metrics *m, const char *ns, const char *table, uint64_t compactions,
                        uint64_t files_compacted, uint64_t snapshots_expired,
                        uint64_t files_removed);
/* The writers' key indexes changed by these many keys, bytes in memory and on disk, and
 * rebuilds (loads from the lake). */
void w2l__metrics_key_index(w2l__metrics *m, int64_t keys, int64_t mem, int64_t disk,
                            uint64_t rebuilds);
/* Calls fn for every table, in first-seen order; lag_ms goes into every entry. */
w2l_rc w2l__metrics_each(w2l__metrics *m, int64_t lag_ms,
                         int (*fn)(void *, const w2l_table_metrics *), void *ctx, w2l_error *err);
/* The pipeline-wide figures metrics keep (checkpoints, sums over tables) into info. */
void w2l__metrics_totals(w2l__metrics *m, w2l_pipeline_info *info);

#endif
