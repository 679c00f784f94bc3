/*
 * The record of a pipeline's last run (lastrun.c): WAREHOUSE/_w2l/last-run.json, written
 * through the warehouse's file IO (so on S3 too) when a run starts ("running"), and when it
 * ends ("ok", or "failed" with the error), and read without any lock by w2l_lake_last_run(3)
 * (`w2l status`):
 *
 *   {"outcome": "failed", "started-ms": 1733300000000, "ended-ms": 1733300012345,
 *    "error": "source: ...", "job-id": "w2l-...", "pid": 4242, "host": "db-sync-1",
 *    "rows": 1000, "checkpoint": 7}
 *
 * One file per warehouse: with several jobs on one warehouse, the job whose run started or
 * ended last. A configuration refused by w2l_pipeline_new() (W2L_CONFIG, a usage error) is
 * no run and writes nothing. Only a pipeline that opened its checkpoint state writes it, so a
 * second process turned away from a job that runs does not overwrite the running one's record.
 * Writing it is best effort: a failure is logged as a warning, never fails the run.
 */
#ifndef W2L_PIPELINE_LASTRUN_H
#define W2L_PIPELINE_LASTRUN_H

#include <w2l.h>

#define W2L_LASTRUN_FILE "_w2l/last-run.json"

typedef struct w2l__lastrun {
    const char *outcome;  /* "running", "ok", "failed" */
    int64_t started_ms;
    int64_t ended_ms;     /* -1: running */
    const char *error;    /* failed: the message (passwords of URIs masked); else NULL */
    const char *job_id;   /* NULL: unknown */
    uint64_t rows;        /* rows read by the run */
    uint64_t checkpoint;  /* newest checkpoint committed to every table; 0: none */
} w2l__lastrun;

/* Writes r (with this process's pid and host) under conf's warehouse; nothing when conf has
 * no warehouse. Logs a warning on failure. */
void w2l__lastrun_write(const w2l_conf *conf, const w2l__lastrun *r);

/* The record as it is before a run writes its own (fresh memory, *len bytes), so that a
 * run refused for its configuration can put it back; NULL when there is none. */
char *w2l__lastrun_save(const w2l_conf *conf, size_t *len);
/* Puts back what w2l__lastrun_save() returned: saved (len bytes), or no file when NULL. */
void w2l__lastrun_restore(const w2l_conf *conf, const char *saved, size_t len);

/* Reads warehouse's record into *out (strings in *hold, which the caller frees with
 * w2l__free); W2L_NOTFOUND when no run recorded one, W2L_CORRUPT naming the file. */
w2l_rc w2l__lastrun_read(w2l_fileio *io, const char *warehouse, w2l_run_info *out, char **hold,
                         w2l_error *err);

#endif
