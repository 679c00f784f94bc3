/*
 * Verification: compare a MySQL/MariaDB source with the lake, per primary-key range, by row
 * counts and row checksums computed in the server (SQL) and from the lake's rows (the
 * library's own scan). `w2l verify` is built on this call alone. See w2l_verify(3) and
 * w2l-verify(1), which lists the canonical row text both sides hash.
 *
 * THREAD SAFETY: w2l_verify opens its own connection and lake; concurrent calls are
 * independent. Callbacks run on the calling thread.
 */
#ifndef W2L_VERIFY_H
#define W2L_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One key range that differs after the re-check. Strings borrowed for the callback. */
typedef struct w2l_verify_range {
    const char *db, *table;      /* the source table */
    const char *ns, *lake_table; /* its lake table */
    const char *lo;              /* the range's keys are above lo: "(10)", "(3, 'b')"; NULL:
                                    from the first key (and for a table without a key) */
    const char *hi;              /* ... and at most hi; NULL: to the last key */
    uint64_t source_rows, lake_rows;
    uint64_t source_checksum, lake_checksum; /* BIT_XOR of the row hashes */
    const char *what;            /* "rows" (the counts differ), "checksum" (same count,
                                    other rows or values) or "no lake table" */
    size_t nkeys;                /* keys that differ, found by comparing the range row by
                                    row; at most the limit asked for; 0 for a table
                                    without a key */
    const char *const *keys;     /* "(10)" ... */
    const char *const *key_what; /* per key: "missing" (in the source, not the lake),
                                    "extra" (in the lake only) or "changed" */
    int more_keys;               /* more keys differ than keys lists */
} w2l_verify_range;

/* Progress, after each range of the first pass and of the re-check. */
typedef struct w2l_verify_progress {
    uint64_t tables_done, tables;
    uint64_t ranges_done;
    uint64_t rows;               /* source and lake rows read so far */
    int64_t elapsed_ms;
    int recheck;                 /* 1 during the re-check */
} w2l_verify_progress;

typedef struct w2l_verify_summary {
    uint64_t tables;             /* tables compared */
    uint64_t tables_skipped;     /* tables not compared: a route merges them with others */
    uint64_t ranges;             /* ranges compared */
    uint64_t ranges_rechecked;   /* ranges that differed at first and were compared again */
    uint64_t ranges_differing;   /* ranges that still differ: w2l_verify_range calls */
    uint64_t source_rows, lake_rows; /* counted in the first pass */
    uint64_t columns_excluded;   /* columns left out of the checksums (a warning each) */
    int64_t elapsed_ms;
} w2l_verify_summary;

#define W2L_VERIFY_OPTS_V1 1

typedef struct w2l_verify_opts {
    int version;                 /* W2L_VERIFY_OPTS_V1 */
    const char *table;           /* "db.table" of the source; NULL: every selected table */
    int64_t timeout_ms;          /* how long to wait for the lake's next commit of a table
                                    that differs, while a job runs (0: 60 s) */
    int64_t settle_ms;           /* no job runs: wait this long, then re-check (0: 2 s; -1:
                                    re-check at once) */
    size_t key_limit;            /* keys named per range (0: 10) */
    int (*on_range)(void *ctx, const w2l_verify_range *r); /* non-zero stops: W2L_CANCELLED */
    void (*on_progress)(void *ctx, const w2l_verify_progress *p); /* may be NULL */
    void *ctx;
} w2l_verify_opts;

/* Compares the source conf's "source" names (a mysql:// URI, its parameters and source.*
 * keys as for w2l run; databases=, tables=, include, exclude select the tables) with the
 * lake of conf's "warehouse" (catalog, fileio): per table, ranges of about
 * verify.chunk-rows keys, each compared by row count and checksum. Ranges that differ are
 * compared again after the lake's next commit of the table (rows in flight), and those
 * that still differ row by row, naming their keys; each one then goes to on_range.
 * Returns W2L_OK when the comparison ran (out->ranges_differing says whether anything
 * differs); errors name the server, the table or the lake: W2L_UNAVAILABLE (a server that
 * cannot be reached), W2L_NOTFOUND (opts->table is not a source table or has no lake
 * table), W2L_CONFIG. out (may be NULL) is filled in either case. See w2l_verify(3). */
W2L_API w2l_rc w2l_verify(const w2l_conf *conf, const w2l_verify_opts *opts,
                          w2l_verify_summary *out, w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
