/*
 * Standby records (standbys.c): a process waiting for a job's state store (ha.c, `w2l run
 * --standby`) says so in WAREHOUSE/_w2l/standby/HOST-PID.json, through the warehouse's file
 * IO (so on S3 too), so that `w2l status` (w2l_lake_standbys(3)) can show who stands by:
 *
 *   {"job":"w2l-...","host":"db-sync-2","pid":4243,"since-ms":T,"expires-ms":E,"version":"V"}
 *
 * A standby writes its record when it starts waiting and again at each of its polls, with
 * an end well past the next poll; it removes it when it takes over or stops. A standby that
 * was killed leaves a record that ends on its own: readers skip the ones past their end.
 * Writing is best effort: a failure is a warning, never stops the standby.
 */
#ifndef W2L_PIPELINE_STANDBYS_H
#define W2L_PIPELINE_STANDBYS_H

#include <w2l.h>

#define W2L_STANDBY_DIR "_w2l/standby"

/* Writes (or refreshes) this process's record for job under conf's warehouse, valid until
 * expires_ms; since_ms when it began to wait. Nothing when conf has no warehouse. */
void w2l__standby_note(const w2l_conf *conf, const char *job, int64_t since_ms,
                       int64_t expires_ms);
/* Removes this process's record (best effort). */
void w2l__standby_forget(const w2l_conf *conf);

/* The live standbys of the warehouse (records not past their end, oldest first) into out
 * (at most max; *n how many there are, which may be more). */
w2l_rc w2l__standby_list(w2l_fileio *io, const char *warehouse, w2l_state_holder *out, size_t max,
                         size_t *n, w2l_error *err);

#endif
