/*
 * Table maintenance inside a pipeline (w2l-design(7) section 10) and on demand (w2l_maintain):
 * snapshot expiry, compaction and orphan removal around the Iceberg-level actions of
 * lib/iceberg/maintain.c.
 *
 * In a pipeline the committers own their tables, so every maintenance commit is made by the
 * table's committer, between checkpoint commits, and never races the pipeline:
 *   - after committing a table, the committer asks w2l__maint_committed(); it expires the
 *     table's snapshots itself once maintenance.expire-every have become expirable (a
 *     metadata-only commit) and hands the removal of the files they alone reached to a
 *     maintenance thread; it queues a compaction when a threshold is passed (from the
 *     snapshot summary: no IO);
 *   - maintenance threads (maintenance.threads) rewrite files beside ingestion, against the
 *     snapshot current when they start, and leave the result in the committer's inbox;
 *   - at its next checkpoint the committer takes its inbox (w2l__maint_take) and commits
 *     each compaction, or drops it (its files removed) when the table changed under it;
 *   - every maintenance.orphan-interval a maintenance thread removes orphan files of the
 *     tables this pipeline committed to, never one the newest sealed checkpoint holds.
 * Each action logs one line (table, action, files in/out, bytes, ms) and counts in the
 * table's metrics. Nothing walks every table: work is queued per table as its commits pass
 * a threshold, at most one compaction per table at a time.
 */
#ifndef W2L_PIPELINE_MAINTENANCE_H
#define W2L_PIPELINE_MAINTENANCE_H

#include "../common/common.h"
#include "../iceberg/iceberg.h"
#include "metrics.h"

/* The policy of table fq ("db.table") from conf: maintenance.* (per-table overrides) and
 * writer.target-file-bytes. *enabled from maintenance.enabled. */
void w2l__maint_policy(const w2l_conf *conf, const char *fq, w2l__ice_policy *p, int *enabled);

typedef struct w2l__maint w2l__maint;

/* conf and metrics are borrowed for the maintainer's life; ncommit committers. Starts the
 * threads. *out stays NULL (no maintenance) without a warehouse, or with a committer other
 * than the built-in one. */
w2l_rc w2l__maint_new(const w2l_conf *conf, w2l__metrics *metrics, unsigned ncommit,
                      w2l__maint **out, w2l_error *err);
/* Stops the threads (the action in progress finishes) and drops what was not committed,
 * removing its files. NULL is a no-op. */
void w2l__maint_free(w2l__maint *m);

/* The maintainer of the pipeline whose operator runs on the calling thread (NULL outside). */
void w2l__maint_set_current(w2l__maint *m);
w2l__maint *w2l__maint_current(void);

/* Committer `committer` committed to t (t->meta is the new metadata): expires when due
 * (committing through t) and queues work. Failures are logged, never returned: maintenance
 * must not stop ingestion. Returns 1 when an expiry failed so that t may be stale: the
 * caller drops it and loads the table again. */
int w2l__maint_committed(w2l__maint *m, unsigned committer, w2l__ice_table *t);

/* A compaction ready to commit. */
typedef struct w2l__maint_result w2l__maint_result;
/* The results for committer `committer` (a list; NULL when none). */
w2l__maint_result *w2l__maint_take(w2l__maint *m, unsigned committer);
w2l__maint_result *w2l__maint_result_next(const w2l__maint_result *r);
const char *w2l__maint_result_ns(const w2l__maint_result *r);
const char *w2l__maint_result_table(const w2l__maint_result *r);
/* Validates and commits r through t (the committer's handle of its table): W2L_OK also when
 * r had to be dropped (the table changed under it); an error leaves t stale. Frees r. */
w2l_rc w2l__maint_commit(w2l__maint *m, w2l__maint_result *r, w2l__ice_table *t, int retries,
                         w2l_error *err);
/* The pipeline's writers, which take the compactions committed (rewrites.h); until this is
 * called none are posted. */
struct w2l__rewrites;
w2l_rc w2l__maint_set_writers(w2l__maint *m, unsigned nwriters, w2l_error *err);
/* The compactions committed (NULL: none are posted, or no maintainer). */
struct w2l__rewrites *w2l__maint_rewrites(w2l__maint *m);
/* Drops r (its files removed): the table is gone. */
void w2l__maint_drop(w2l__maint *m, w2l__maint_result *r);

/* Removes orphan files of the catalog's tables (only ns.table when given), grouping tables
 * by location so that a table renamed away from a directory and one re-created in it are
 * judged together. Files the newest sealed checkpoint of the state store conf names still
 * holds stay. report (may be NULL) is called per location with what went. */
w2l_rc w2l__maint_orphans(const w2l_conf *conf, w2l_catalog *cat, w2l_fileio *io,
                          const char *ns, const char *table, int dry_run,
                          void (*report)(void *ctx, const char *ns, const char *table,
                                         const w2l__ice_maint_stats *st),
                          void *ctx, w2l_error *err);

#endif
