/*
 * Table maintenance on demand (`w2l maintain`): snapshot expiry, compaction and orphan
 * removal of the tables of a lake, the same steps a running pipeline takes by itself
 * (w2l-design(7) section 10, w2l_maintain(3)). Manifest merging needs no call: every commit
 * does it.
 *
 * Policy comes from the configuration keys maintenance.* (per table as
 * table.<db>.<table>.maintenance.*) and, for expiry, from a table's own Iceberg properties
 * history.expire.max-snapshot-age-ms and history.expire.min-snapshots-to-keep when set.
 *
 * A table that a running pipeline writes may be maintained meanwhile: each commit is an
 * optimistic swap, and a compaction that loses the race to a commit touching its input is
 * dropped (its files removed), never retried on a base it was not planned against.
 *
 * THREAD SAFETY: w2l_maintain() uses only what it opens; calls are independent.
 */
#ifndef W2L_MAINTAIN_H
#define W2L_MAINTAIN_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Actions (bits of w2l_maintain_options.actions). */
enum {
    W2L_MAINTAIN_EXPIRE = 1u << 0,  /* snapshot expiry and the files only expired ones reach */
    W2L_MAINTAIN_COMPACT = 1u << 1, /* bin-pack small files, apply deletes */
    W2L_MAINTAIN_ORPHANS = 1u << 2, /* files no snapshot and no sealed checkpoint references */
    W2L_MAINTAIN_ALL = 7u
};

typedef struct w2l_maintain_options {
    unsigned actions;    /* W2L_MAINTAIN_* bits; 0 means W2L_MAINTAIN_ALL */
    const char *ns;      /* with table: only NS.TABLE; both NULL: every table */
    const char *table;
    int dry_run;         /* count what would go; change nothing */
    int force_compact;   /* compact even below the thresholds */
} w2l_maintain_options;

/* What one action did to one table (or, for orphans, one table location). */
typedef struct w2l_maintain_report {
    const char *ns, *table;      /* borrowed for the callback */
    const char *action;          /* "expire", "compact" or "orphans" */
    int dry_run;
    int skipped;                 /* nothing to do (below thresholds, nothing expired) */
    uint64_t files_in, files_out;   /* compaction: files replaced, files written */
    uint64_t bytes_in, bytes_out;
    uint64_t rows_out;
    uint64_t snapshots_expired;
    uint64_t files_removed, bytes_removed; /* expiry, orphans */
    int64_t ms;                  /* wall time of the action */
    size_t table_index, ntables; /* progress: this table's position, 1-based, of ntables */
} w2l_maintain_report;

/* Runs the chosen actions over the tables of the lake conf names ("warehouse", "catalog",
 * "fileio"; "state" for orphan removal, which never removes a file a sealed checkpoint
 * still holds for `w2l recover`). fn (may be NULL) is called once per action and table;
 * returning non-zero stops with W2L_CANCELLED. A table that fails stops the call with the
 * table named in err. See w2l_maintain(3). */
W2L_API w2l_rc w2l_maintain(const w2l_conf *conf, const w2l_maintain_options *opt,
                            int (*fn)(void *ctx, const w2l_maintain_report *r), void *ctx,
                            w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
