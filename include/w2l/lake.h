/*
 * Lake inspection: what landed, read back through the library's own Iceberg reader and
 * checkpoint state, without another engine. `w2l tables`, `w2l cat` and `w2l status` are
 * built on these calls alone; a program linking the library can do the same.
 *
 * A w2l_lake is read-only: it opens the file IO, the catalog and (on demand) the state
 * store that the configuration names, and never writes. Results are passed to callbacks,
 * borrowed for the duration of each call.
 *
 * THREAD SAFETY: a w2l_lake is used by one thread at a time; distinct lakes are
 * independent.
 */
#ifndef W2L_LAKE_H
#define W2L_LAKE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"
#include "types.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_lake w2l_lake;

/* Opens the lake conf describes (copied): "warehouse" (required, must exist), "catalog"
 * and "fileio". *out is set only on W2L_OK; the caller owns it and closes it with
 * w2l_lake_close(). W2L_CONFIG when warehouse is unset, W2L_NOTFOUND when it does not
 * exist. See w2l_lake_open(3). */
W2L_API w2l_rc w2l_lake_open(const w2l_conf *conf, w2l_lake **out, w2l_error *err);

/* Closes the lake and everything it opened. NULL is a no-op. See w2l_lake_open(3). */
W2L_API void w2l_lake_close(w2l_lake *lake);

/* One table of the lake, as of its current metadata. Strings borrowed for the callback. */
typedef struct w2l_table_info {
    const char *ns, *table;
    const char *metadata;        /* the current metadata file */
    uint64_t snapshots;          /* snapshots in the metadata */
    int64_t current_snapshot_id; /* -1: none (an empty table) */
    uint64_t rows;               /* total-records of the current snapshot: records in the
                                    live data files, before deletes are applied */
    uint64_t data_files, delete_files;
    uint64_t bytes;              /* total-files-size of the current snapshot */
    uint64_t last_checkpoint;    /* w2l.checkpoint-id of the newest snapshot carrying one,
                                    of any job; 0: none */
    const char *job_id;          /* w2l.job-id of that snapshot; NULL: none */
    int32_t schema_id;           /* the current schema */
    int64_t last_commit_ms;      /* timestamp of the current snapshot; -1: none */
    /* appended with table maintenance (new members only ever go at the end): */
    uint64_t manifests;          /* manifests in the current snapshot's manifest list */
    uint64_t equality_deletes, position_deletes; /* total-equality-deletes and
                                    total-position-deletes of the current snapshot */
    int64_t last_compaction_ms;  /* timestamp of the newest snapshot whose operation is
                                    "replace" (a compaction); -1: none */
    /* appended with partitioned tables: */
    int32_t spec_id;             /* the default partition spec */
    const char *partition_by;    /* it as a partition-by clause ("day(ts), bucket(16, id)");
                                    "" unpartitioned */
} w2l_table_info;

/* Calls fn for every table of the catalog, ordered by namespace then name; fn returning
 * non-zero stops the walk (W2L_OK). Reads each table's current metadata and its current
 * manifest list; a table whose metadata or manifest list cannot be read fails the call
 * with the table named in err. See w2l_lake_tables(3). */
W2L_API w2l_rc w2l_lake_tables(w2l_lake *lake,
                               int (*fn)(void *ctx, const w2l_table_info *info), void *ctx,
                               w2l_error *err);

/* Reads the rows of ns.table at snapshot_id (-1: the current snapshot) with every delete
 * applied, calling fn with the read schema and one value per field, both borrowed for the
 * call; fn returning non-zero stops with W2L_CANCELLED. No snapshot: no rows.
 * W2L_NOTFOUND names a missing table or snapshot. See w2l_lake_scan(3). */
W2L_API w2l_rc w2l_lake_scan(w2l_lake *lake, const char *ns, const char *table,
                             int64_t snapshot_id,
                             int (*fn)(void *ctx, const w2l_schema *schema,
                                       const w2l_value *row, size_t n),
                             void *ctx, w2l_error *err);

/* A table the source's initial snapshot is reading, as a checkpoint's source position
 * records it (w2l_checkpoint_info.snapshot_active). Strings borrowed for the callback. */
typedef struct w2l_snapshot_table {
    const char *ns, *table;
    uint64_t rows;               /* its rows read so far */
    uint64_t ranges;             /* key ranges it has left to read */
} w2l_snapshot_table;

/* The newest sealed checkpoint and, per table, how far its commits are behind it. The
 * first call describes the checkpoint (ns and table NULL); then one call per table of
 * the catalog or of the state. Strings borrowed for the callback. */
typedef struct w2l_checkpoint_info {
    uint64_t sealed;             /* newest sealed checkpoint; 0: none yet */
    const char *job_id;          /* job that sealed it; NULL when unknown */
    uint64_t epoch;              /* its run's epoch; 0 when unknown */
    const char *source_position; /* JSON text where the source resumes; NULL: none */
    const char *ns, *table;      /* NULL in the first call */
    uint64_t committed;          /* the table's newest checkpoint committed by job_id (by
                                    any job when job_id is NULL); 0: none */
    uint64_t pending;            /* sealed checkpoints with changes to the table not yet
                                    committed to it: the lag, in checkpoints */
    uint64_t oldest_pending;     /* the oldest of them; 0 when pending is 0 */
    /* appended with quarantine (new members only ever go at the end): */
    const char *quarantined;     /* the table is set aside (ddl.policy=quarantine) as of the
                                    sealed checkpoint: why; NULL when it is not */
    uint64_t rows_quarantined;   /* its changes dropped since, as of that checkpoint */
    /* appended with the chunked snapshot (every call, as source_position; from its
       "chunks" member, which the mysql source writes until its snapshot is done): */
    int snapshot;                /* 1: the source's initial snapshot is not done */
    const char *snapshot_next_ns, *snapshot_next_table; /* the first table not started
                                    (those after it too, but snapshot_skipped); NULL: none */
    uint64_t snapshot_skipped;   /* tables after the next one already read */
    const w2l_snapshot_table *snapshot_active; /* the tables being read */
    size_t snapshot_nactive;
} w2l_checkpoint_info;

/* Opens the state store conf "state" names (read-only use) and reports as described at
 * w2l_checkpoint_info; fn returning non-zero stops (W2L_OK). W2L_CORRUPT names the store
 * when its state cannot be read. See w2l_lake_checkpoints(3). */
W2L_API w2l_rc w2l_lake_checkpoints(w2l_lake *lake,
                                    int (*fn)(void *ctx, const w2l_checkpoint_info *info),
                                    void *ctx, w2l_error *err);

/* How far a table is complete in source time (w2l_table_complete_through(3)): every source
 * transaction committed at or before through_ms (ms since the epoch, UTC) is readable in
 * the table. Strings borrowed until the next call with the lake or its close. */
typedef struct w2l_complete_info {
    int64_t through_ms;          /* the larger of the two below; -1: unknown */
    const char *source;          /* where through_ms comes from: "summary" or "job-file";
                                    NULL when unknown */
    int64_t summary_ms;          /* w2l.complete-through-ms of the newest snapshot having
                                    it; -1: none */
    int64_t job_file_ms;         /* complete-through-ms of the job file, when it applies to
                                    the table (its checkpoint >= checkpoint); -1: not */
    const char *job_id;          /* the job of the table's newest w2l snapshot; NULL: none */
    uint64_t checkpoint;         /* that snapshot's checkpoint; 0: none */
    uint64_t job_file_checkpoint; /* the job file's checkpoint; 0: no job file */
    int64_t snapshot_id;         /* the current snapshot of the metadata read; -1: none */
} w2l_complete_info;

/* Fills *out for ns.table from its current metadata and its job's completeness file under
 * WAREHOUSE/_w2l/complete, read in the order that makes the answer safe for any reader
 * that starts after the call. W2L_NOTFOUND names a missing table. See
 * w2l_table_complete_through(3). */
W2L_API w2l_rc w2l_table_complete_through(w2l_lake *lake, const char *ns, const char *table,
                                          w2l_complete_info *out, w2l_error *err);

/* The record of the last run of a pipeline on the warehouse (w2l_lake_last_run(3)),
 * WAREHOUSE/_w2l/last-run.json, written when a run starts and when it ends. Strings
 * borrowed until the next call with the lake or its close. */
typedef struct w2l_run_info {
    const char *outcome;         /* "running" (started, no end recorded: running, or killed
                                    before it could record one), "ok" or "failed" */
    int64_t started_ms;          /* ms since the epoch */
    int64_t ended_ms;            /* -1 while "running" */
    const char *error;           /* "failed": the error that stopped it; NULL otherwise */
    const char *job_id;          /* NULL when unknown */
    const char *host;            /* the host it ran on; NULL when unknown */
    int64_t pid;                 /* its process id; 0 when unknown */
    uint64_t rows;               /* rows it read */
    uint64_t checkpoint;         /* the newest checkpoint committed when it recorded; 0 none */
} w2l_run_info;

/* Reads the last run's record into *out, without a lock (any file IO, S3 included).
 * W2L_NOTFOUND when no run has recorded one, W2L_CORRUPT naming the file when it cannot be
 * read. See w2l_lake_last_run(3). */
W2L_API w2l_rc w2l_lake_last_run(w2l_lake *lake, w2l_run_info *out, w2l_error *err);

/* The job that holds the lake's checkpoint state store now (w2l_state_lock(3)) into *out,
 * taking nothing: W2L_NOTFOUND when no job runs on it (or its store cannot be locked, as
 * "mem"). See w2l_lake_last_run(3). */
W2L_API w2l_rc w2l_lake_holder(w2l_lake *lake, w2l_state_holder *out, w2l_error *err);

/* The processes standing by to take the lake's job over (`w2l run --standby`), oldest
 * first, into out (at most max; expires_ms is when the record ends unless renewed, epoch 0);
 * *n how many there are, which may exceed max. Each refreshes its record while it waits; a
 * killed one drops out once its record ends. See w2l_lake_standbys(3). */
W2L_API w2l_rc w2l_lake_standbys(w2l_lake *lake, w2l_state_holder *out, size_t max, size_t *n,
                                 w2l_error *err);

/* Parses a time: ms since the epoch (digits only), or ISO-8601 YYYY-MM-DD, optionally
 * followed by T (or a space) HH:MM[:SS[.fraction]] and Z or an offset +HH[:MM] / -HH[:MM]
 * (no zone: UTC). *out_ms is set only on W2L_OK; W2L_CONFIG names what is wrong. See
 * w2l_time_parse(3). */
W2L_API w2l_rc w2l_time_parse(const char *text, int64_t *out_ms, w2l_error *err);

/* Formats ms since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (24 bytes suffice).
 * Returns what snprintf returns. See w2l_time_parse(3). */
W2L_API int w2l_time_format(int64_t ms, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
