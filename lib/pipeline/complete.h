/*
 * Completeness marks for schedulers (README "Completeness for schedulers", w2l-design(7)
 * section 11): how far each table is complete in source time, where engines read it without
 * w2l, and the on-complete hook.
 *
 * "Complete through T" (ms since the epoch, UTC): every source transaction committed at or
 * before T is committed in the lake. Sources report it (w2l_emit_progress()); each
 * checkpoint records the emitter's mark under W2L_COMPLETE_STATE_KEY; the committer puts a
 * checkpoint's mark in the summary of every snapshot it commits anyway (W2L_COMPLETE_KEY and
 * Kafka Connect's W2L_COMPLETE_KC_KEY), never below the table's previous one. Tables without
 * changes get no snapshot: once a checkpoint is committed to every table it touched, the
 * completer writes the job file
 *
 *   WAREHOUSE/_w2l/complete/<job-id>.json
 *   {"job-id": "...", "checkpoint": C, "complete-through-ms": X, "updated-ms": T,
 *    "on-complete": {"every": "hour", "fired-through-ms": B}}      (only with on-complete)
 *
 * through the lake's file IO, atomically replaced, never with a smaller checkpoint or mark.
 * The rule readers apply (w2l__complete_of_table): a table whose newest w2l snapshot is job
 * J's checkpoint c_T is complete through max(its summary mark, X of J's file when the file's
 * checkpoint >= c_T) — checkpoint C was committed to every table with changes in it, so a
 * table whose last commit is c_T <= C had none in (c_T, C].
 */
#ifndef W2L_PIPELINE_COMPLETE_H
#define W2L_PIPELINE_COMPLETE_H

#include "../common/common.h"
#include "../iceberg/iceberg.h"

#define W2L_COMPLETE_KEY "w2l.complete-through-ms"
#define W2L_COMPLETE_KC_KEY "kafka.connect.valid-through-ts"
#define W2L_COMPLETE_STATE_KEY "source/complete-through-ms"
#define W2L_COMPLETE_DIR "_w2l/complete"

/* ms as Java's OffsetDateTime.toString() in UTC, what Kafka Connect's Iceberg sink writes
 * under kafka.connect.valid-through-ts: "2024-05-01T09:59:59.999Z"; seconds and the
 * fraction are left out when zero ("2024-05-01T10:00Z"). Returns the length (snprintf). */
int w2l__time_format_kc(int64_t ms, char *buf, size_t size);

/* The mark of the newest snapshot in m's current history that has one; -1 when none. */
int64_t w2l__complete_summary_mark(const w2l__ice_meta *m);

/* WAREHOUSE/_w2l/complete/<job>.json, fresh memory; NULL when out of memory. */
char *w2l__complete_path(const char *warehouse, const char *job);

typedef struct w2l__complete_file {
    uint64_t checkpoint;     /* 0: none */
    int64_t through_ms;      /* -1: none */
    int64_t updated_ms;
    char every[8];           /* the on-complete period the hook state is for; "" none */
    int64_t fired_ms;        /* the last boundary whose hooks ran; -1 none */
} w2l__complete_file;

/* Reads a job file; W2L_NOTFOUND when there is none, W2L_CORRUPT when it is not one. */
w2l_rc w2l__complete_read(w2l_fileio *io, const char *path, w2l__complete_file *out,
                          w2l_error *err);
/* Writes f to path atomically, merged with what the file holds (checkpoint and mark only
 * ever grow); *f becomes what was written. */
w2l_rc w2l__complete_write(w2l_fileio *io, const char *path, const char *job,
                           w2l__complete_file *f, w2l_error *err);

/* The completeness of ns.table (include/w2l/lake.h), read as readers read the lake: the
 * job file first, then the table's current metadata. *job (fresh memory, or NULL) is the
 * job of the table's newest w2l snapshot. */
w2l_rc w2l__complete_of_table(w2l_catalog *cat, w2l_fileio *io, const char *warehouse,
                              const char *ns, const char *table, w2l_complete_info *out,
                              char **job, w2l_error *err);

/* The completer: one thread per pipeline that writes the job file after each fully
 * committed checkpoint (off the committers' path) and runs the on-complete hook, one
 * command at a time. */
typedef struct w2l__completer w2l__completer;

/* NULL in *out (W2L_OK) when there is nothing to do: no warehouse. conf is copied. */
w2l_rc w2l__completer_new(const w2l_conf *conf, const char *job_id, w2l__completer **out,
                          w2l_error *err);
/* Checkpoint ckpt is committed to every table it touched; through_ms its mark (-1: none).
 * Never blocks on IO. NULL c is a no-op. */
void w2l__completer_post(w2l__completer *c, uint64_t ckpt, int64_t through_ms);
/* Finishes what was posted (the job file and due hooks), then stops. NULL is a no-op. */
void w2l__completer_free(w2l__completer *c);

#endif
