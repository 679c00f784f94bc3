/*
 * Lake inspection's own insides (lake.c): the source's snapshot as a checkpoint's position
 * records it, for w2l_lake_checkpoints(3). A pure function, so that tests can feed it any
 * position.
 */
#ifndef W2L_LAKE_INT_H
#define W2L_LAKE_INT_H

#include "../common/common.h"

/* The "chunks" member of a source position (lib/source/mysql_snap_plan.c writes it while
 * the mysql source's snapshot runs). Owns its strings. */
typedef struct w2l__lake_snap {
    int running;                 /* the position has "chunks" */
    char *next_ns, *next_table;  /* "next"; NULL: none */
    uint64_t skipped;            /* entries of "skip" */
    w2l_snapshot_table *active;  /* "active": names, "rows", the ranges left ("r") */
    size_t nactive;
} w2l__lake_snap;

/* Reads pos[0..len) into *out (zeroed first). A position that is not a JSON object, or
 * has no "chunks", leaves it not running; malformed entries of "chunks" are skipped.
 * W2L_NOMEM only. Free with w2l__lake_snap_free(). */
w2l_rc w2l__lake_snap_parse(const char *pos, size_t len, w2l__lake_snap *out, w2l_error *err);
void w2l__lake_snap_free(w2l__lake_snap *s);

#endif
