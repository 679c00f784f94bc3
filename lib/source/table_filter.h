/*
 * Which source tables a pipeline syncs: the include and exclude keys (w2l-config(5)),
 * regular expressions over "db.table" that every built-in source applies before it does
 * any work for a table (the mysql source before it decodes a table's rows or snapshots it,
 * the CDC JSON decoders before they read a message's columns).
 */
#ifndef W2L_SOURCE_TABLE_FILTER_H
#define W2L_SOURCE_TABLE_FILTER_H

#include <regex.h>

#include "../common/common.h"

typedef struct w2l__tfilter {
    int has_include, has_exclude;
    regex_t include, exclude;  /* POSIX extended, anchored: the whole "db.table" */
} w2l__tfilter;

/* From conf's include and exclude (unset: every table; conf NULL: no filter). W2L_CONFIG
 * names the key of an expression that does not compile. */
w2l_rc w2l__tfilter_init(w2l__tfilter *f, const w2l_conf *conf, w2l_error *err);
/* 1 when db.table is included and not excluded. */
int w2l__tfilter_ok(const w2l__tfilter *f, const char *db, const char *table);
void w2l__tfilter_free(w2l__tfilter *f);

#endif
