/*
 * The pipeline: source -> DDL handler -> writer -> committer -> check-commit sink, each
 * operator instance one thread, bounded channels between them, checkpoint barriers in band
 * (w2l-design(7) sections 1-3, w2l-checkpoints(7)).
 *
 * Two ways to feed it: a source plug-in named by the "source" key (a URI), or, with no
 * source, the push API: a host service emits changes through w2l_pipeline_emitter() and
 * triggers checkpoints with w2l_pipeline_checkpoint().
 *
 * Operators are plug-ins too (w2l_operator_methods): the built-in DDL handler, writer and
 * committer are registered under "default"; a host may register its own kind of operator
 * and select it with the "operator.<kind>" keys.
 *
 * THREAD SAFETY: a w2l_pipeline is used from one thread, except w2l_pipeline_stop(),
 * which is safe from any thread or a signal handler, and w2l_pipeline_metrics(), which is
 * safe from any thread while the pipeline lives (e.g. a progress display).
 */
#ifndef W2L_PIPELINE_H
#define W2L_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"
#include "event.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_pipeline w2l_pipeline;

/* ---- Host API ---------------------------------------------------------------------- */

/* Builds a pipeline from conf (copied): resolves the source, state store, catalog and file
 * IO plug-ins and restores the newest sealed checkpoint. Nothing runs yet.
 * W2L_CONFIG names a missing or bad key. See w2l_pipeline_new(3). */
W2L_API w2l_rc w2l_pipeline_new(const w2l_conf *conf, w2l_pipeline **out, w2l_error *err);

/* Starts the operator threads and returns. See w2l_pipeline_new(3). */
W2L_API w2l_rc w2l_pipeline_start(w2l_pipeline *p, w2l_error *err);

/* Push API: the emitter through which the host hands changes, DDL and transaction ends
 * (w2l_emit_change(3)). Borrowed, valid until w2l_pipeline_free(). NULL when the pipeline
 * has a source. See w2l_pipeline_emitter(3). */
W2L_API w2l_emitter *w2l_pipeline_emitter(w2l_pipeline *p);

/* Triggers a checkpoint at the next transaction end (for the push API: at once, as the
 * host calls it between transactions) and, if wait is non-zero, blocks until it is
 * sealed and committed. *ckpt receives its id. See w2l_pipeline_checkpoint(3). */
W2L_API w2l_rc w2l_pipeline_checkpoint(w2l_pipeline *p, int wait, uint64_t *ckpt,
                                       w2l_error *err);

/* Runs until the source is done (with --until-caught-up), w2l_pipeline_stop(), or a
 * failure; takes a final checkpoint and commits it on a clean end. Starts the pipeline if
 * needed. Returns the first operator's error. See w2l_pipeline_run(3). */
W2L_API w2l_rc w2l_pipeline_run(w2l_pipeline *p, w2l_error *err);

/* Push API: ends the stream (a final checkpoint), waits for every thread. */
W2L_API w2l_rc w2l_pipeline_finish(w2l_pipeline *p, w2l_error *err);

/* Asks the pipeline to stop after the checkpoint in flight. Async-signal-safe.
 * See w2l_pipeline_run(3). */
W2L_API void w2l_pipeline_stop(w2l_pipeline *p);

/* Stops (if running) and frees. NULL is a no-op. See w2l_pipeline_new(3). */
W2L_API void w2l_pipeline_free(w2l_pipeline *p);

/* Upper bounds (seconds) of the latency histograms' buckets (commit latency, checkpoint
 * duration). Fixed forever: the arrays below are ABI. */
#define W2L_LATENCY_BUCKETS 14
#define W2L_LATENCY_BOUNDS 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120

/* Per-table metrics, as of the call. */
typedef struct w2l_table_metrics {
    const char *ns, *table;       /* borrowed for the callback */
    uint64_t rows_in, files_written, bytes_written, commits;
    uint64_t last_committed_ckpt;
    double secs_since_commit;     /* -1 before the first commit */
    int64_t source_lag_ms;        /* the source's lag; -1: not known (no event yet, the
                                     source unreachable) */
    /* maintenance (w2l-design(7) section 10) */
    uint64_t compactions;         /* compaction commits */
    uint64_t files_compacted;     /* data and delete files they replaced */
    uint64_t snapshots_expired;
    uint64_t files_removed;       /* by expiry and orphan removal */
    double secs_since_compaction; /* -1 before the first compaction */
    /* quarantine (ddl.policy=quarantine; new members only ever go at the end): */
    int quarantined;              /* set aside in this run (w2l_emit_quarantine(3), or an
                                     unsupported schema change) */
    uint64_t rows_quarantined;    /* its changes dropped since, in this run */
    /* appended with the operations endpoint (metrics.listen, w2l_pipeline_endpoint(3)): */
    uint64_t rows_inserted, rows_updated, rows_deleted; /* rows_in by operation (an update
                                     counts once, its before and after images together) */
    uint64_t rows_committed;      /* rows_in that a committed checkpoint holds */
    uint64_t schema_changes;      /* schemas its DDL handler sent (a new table's first too) */
    uint64_t pending_checkpoints; /* checkpoints with its files, not committed yet */
    uint64_t commit_latency[W2L_LATENCY_BUCKETS + 1]; /* commits by how long the commit
                                     took: [i]: at most the i-th of W2L_LATENCY_BOUNDS s,
                                     not cumulative; the last one above them all */
    double commit_latency_sum;    /* seconds, over all of them */
    int64_t complete_through_ms;  /* the completeness mark committed to it (w2l_emit_progress(3));
                                     -1 none (or quarantined) */
} w2l_table_metrics;

/* Calls fn for every table the pipeline has seen (on the calling thread, with a copy taken
 * at the call). Safe from any thread while the pipeline lives. See w2l_pipeline_metrics(3). */
W2L_API w2l_rc w2l_pipeline_metrics(w2l_pipeline *p,
                                    int (*fn)(void *ctx, const w2l_table_metrics *m),
                                    void *ctx, w2l_error *err);

/* The figures of the whole pipeline, as of the call (w2l_pipeline_stats(3)). New members
 * only ever go at the end: callers pass sizeof, and the library fills what both know. */
typedef struct w2l_pipeline_info {
    uint64_t sealed, committed;      /* newest checkpoint sealed; committed to every table */
    uint64_t checkpoints_completed;  /* committed in this run */
    uint64_t checkpoints_failed;     /* seal or commit failures (each stops the run) */
    uint64_t checkpoint_duration[W2L_LATENCY_BUCKETS + 1]; /* barrier placed -> sealed, as
                                        w2l_table_metrics.commit_latency */
    double checkpoint_duration_sum;
    int64_t source_lag_ms;           /* the source's lag_ms(): position time vs now; -1: not
                                        known (no event yet, the source unreachable) */
    int source_snapshot;             /* 1 while the source takes its initial snapshot */
    uint64_t source_reconnects;
    uint64_t rows_in, rows_committed; /* all tables; the difference is "events behind" */
    uint64_t tables, tables_quarantined;
    uint64_t compactions, snapshots_expired, files_removed; /* maintenance, all tables */
    int64_t complete_through_ms;     /* committed completeness mark; -1 none */
    int healthy, ready;              /* what /healthz and /readyz answer (1: 200) */
    double max_stall_secs;           /* longest a running stage went without progress now */
    int failed;                      /* the pipeline stopped on an error */
    int http_port;                   /* metrics.listen's bound port; 0: not serving */
    uint64_t process_rss_bytes;
    double process_cpu_secs;         /* user + system, the whole process */
    /* appended with the commit lag (new members only ever go at the end): */
    int64_t commit_lag_ms;           /* how long the oldest change read and not committed yet
                                        has waited; 0: every change read is committed */
    /* appended with the bounded key index (write.delete-mode "position"), all writers: */
    uint64_t key_index_keys;         /* keys held (in memory and spilled) */
    uint64_t key_index_memory_bytes; /* bytes in memory (writer.key-index-memory bounds it) */
    uint64_t key_index_disk_bytes;   /* bytes of spilled runs (writer.spill-dir) */
    uint64_t key_index_rebuilds;     /* tables' indexes loaded from the lake in this run */
    /* appended with the chunked snapshot (the mysql source; all 0 when no snapshot ran in
       this run; after it ends, its final figures, source_snapshot 0): */
    uint64_t snapshot_tables;        /* tables the snapshot reads in this run, in all */
    uint64_t snapshot_tables_done;   /* of them, read */
    uint64_t snapshot_rows;          /* rows read (since this run resumed it) */
    uint64_t snapshot_rows_estimated; /* the server's estimate of all its rows; 0: none */
    uint64_t snapshot_chunks;        /* chunks read */
    int64_t snapshot_started_ms;     /* wall clock when it began (or this run resumed it) */
} w2l_pipeline_info;

/* Fills *out (size: sizeof *out as the caller knows it). Safe from any thread while the
 * pipeline lives. See w2l_pipeline_stats(3). */
W2L_API w2l_rc w2l_pipeline_stats(w2l_pipeline *p, w2l_pipeline_info *out, size_t size,
                                  w2l_error *err);

/* Answers one request of the operations endpoint as metrics.listen serves it: GET (or HEAD)
 * of /metrics (Prometheus text format 0.0.4), /healthz, /readyz, /status (JSON); *status
 * gets 200, 503 (not healthy, not ready), 404 or 405; *content_type a static string; body
 * (caller-owned, appended to) the text. For an embedder's own HTTP server. Safe from any
 * thread while the pipeline lives. See w2l_pipeline_endpoint(3). */
W2L_API w2l_rc w2l_pipeline_endpoint(w2l_pipeline *p, const char *method, const char *path,
                                     int *status, const char **content_type, w2l_buf *body,
                                     w2l_error *err);

/* Asks the running pipeline's source to read table ns.table again whole, with its chunked
 * snapshot, while every other table streams; the table's rows in the lake are then
 * replaced at one commit (readers see the old rows until then, never a partial table), its
 * schema taken afresh from the source. Returns once the source took the request (it runs
 * on; a restart goes on with it). W2L_NOTFOUND: the source does not read that table;
 * W2L_CONFIG: the source cannot (only the mysql source can); W2L_UNAVAILABLE: the pipeline
 * is not running. Any thread. See w2l_pipeline_resync(3). */
W2L_API w2l_rc w2l_pipeline_resync(w2l_pipeline *p, const char *ns, const char *table,
                                   w2l_error *err);

/* w2l_pipeline_resync() of the pipeline of another process, through its metrics endpoint
 * (metrics.listen; POST /resync?table=NS.TABLE): endpoint is HOST:PORT or a URL. answer
 * (may be NULL) gets the endpoint's one-line answer. W2L_UNAVAILABLE when nothing answers
 * there; the codes of w2l_pipeline_resync() otherwise. See w2l_pipeline_resync(3). */
W2L_API w2l_rc w2l_resync_remote(const char *endpoint, const char *ns, const char *table,
                                 char *answer, size_t size, w2l_error *err);

/* w2l recover: from the newest sealed checkpoint, commits every table's checkpoints not yet
 * committed, without a source. Safe to run twice. See w2l_recover(3). */
W2L_API w2l_rc w2l_recover(const w2l_conf *conf, w2l_error *err);

/* ---- Operator API ------------------------------------------------------------------ */

/* What travels between operators. Numbers pinned. */
typedef enum w2l_element_kind {
    W2L_ELEM_CHANGES = 1,       /* source/ddl -> writer: changes of one table */
    W2L_ELEM_DDL = 2,           /* source -> ddl handler: one statement */
    W2L_ELEM_BARRIER = 3,       /* everywhere: checkpoint ckpt at a transaction boundary */
    W2L_ELEM_WRITER_COMMIT = 4, /* ddl -> writer: complete the table's files (fence ddl_id);
                                   writer -> ddl: the fence is done */
    W2L_ELEM_WRITE_RESULT = 5,  /* writer -> committer: files of one table for ckpt */
    W2L_ELEM_SCHEMA = 6,        /* ddl -> writer, committer: the table's new schema */
    W2L_ELEM_END = 7,           /* end of stream */
    W2L_ELEM_QUARANTINE = 8     /* source -> ddl handler: set the table aside
                                   (w2l_emit_quarantine(3)); payload: JSON
                                   {"reason": text or null, "rows": changes the source
                                   dropped itself}. A DDL operator may ignore it. */
} w2l_element_kind;

/* One element, borrowed for the process() call that receives it. All changes of one
 * CHANGES element belong to one table and share one schema. During process() the
 * receiving instance owns the changes array: it may re-point each change's schema (e.g.
 * at its table's schema) and forward the same array with w2l_collect(), which then
 * hands the rows on without copying them. */
typedef struct w2l_element {
    w2l_element_kind kind;
    const char *ns, *table;       /* all but BARRIER and END */
    uint64_t ckpt;                /* BARRIER, WRITE_RESULT */
    const w2l_change *changes;    /* CHANGES */
    size_t nchanges;
    const w2l_ddl *ddl;           /* DDL */
    uint64_t ddl_id;              /* DDL, WRITER_COMMIT, SCHEMA */
    const w2l_schema *schema;     /* SCHEMA */
    const char *payload;          /* WRITE_RESULT: JSON of data and delete files */
    size_t payload_len;
} w2l_element;

/* Where an operator sends its output; the core routes it (by table, by key hash). */
typedef struct w2l_collector w2l_collector;

/* Sends one element downstream (copied). May block (backpressure). See
 * w2l_operator_methods(3). */
W2L_API w2l_rc w2l_collect(w2l_collector *out, const w2l_element *e, w2l_error *err);

typedef enum w2l_operator_kind {
    W2L_OPERATOR_DDL = 1, W2L_OPERATOR_WRITER = 2, W2L_OPERATOR_COMMITTER = 3
} w2l_operator_kind;

typedef struct w2l_operator w2l_operator;

#define W2L_OPERATOR_METHODS_V1 1

typedef struct w2l_operator_methods {
    int version;            /* W2L_OPERATOR_METHODS_V1 */
    const char *name;       /* registry key within its kind; built-ins are "default" */
    w2l_operator_kind kind;
    size_t size;            /* sizeof impl struct; the core allocates and zeroes it */
    void *app_data;
    /* Instance index of n, on its own thread; st is the pipeline's state store (borrowed),
     * restored_ckpt the sealed checkpoint to restore from (0: fresh). */
    w2l_rc (*open)(const struct w2l_operator_methods *m, const w2l_conf *conf, unsigned index,
                   unsigned n, w2l_state *st, uint64_t restored_ckpt, w2l_operator *self,
                   w2l_error *err);
    /* One element in; any number out. A BARRIER arrives once every input delivered it
     * (aligned): the operator saves its state for e->ckpt into st, then forwards it. */
    w2l_rc (*process)(w2l_operator *self, const w2l_element *e, w2l_collector *out,
                      w2l_error *err);
    /* Checkpoint ckpt is sealed (all operators saved it): committers commit here. */
    w2l_rc (*notify_complete)(w2l_operator *self, uint64_t ckpt, w2l_error *err);
    void (*close)(w2l_operator *self);
} w2l_operator_methods;
struct w2l_operator { const w2l_operator_methods *methods; };

/* Registers an operator implementation. See w2l_operator_methods(3). */
W2L_API w2l_rc w2l_operator_register(const w2l_operator_methods *m);
W2L_API const w2l_operator_methods *w2l_operator_find(w2l_operator_kind kind,
                                                      const char *name);

#ifdef __cplusplus
}
#endif
#endif
