/*
 * Which source tables a pipeline syncs: the include and exclude keys (w2l-config(5)),
 * regular expressions over "db.table" that every built-in source applies before it does
 * any work for a table (the mysql source before it decodes a table's rows or snapshots it,
 * the CDC JSON decoders before they read a message's columns).
 *
 * A filter remembers what it was asked about (the first few tables it left out, and
 * whether any table passed), so that a source can say so when a pattern matched nothing:
 * a pattern that names the table without its database ('accounts' for shop.accounts) is
 * the usual slip, and it otherwise ends as a run that synced nothing.
 */
#ifndef W2L_SOURCE_TABLE_FILTER_H
#define W2L_SOURCE_TABLE_FILTER_H

#include <regex.h>

#include "../common/common.h"

#define W2L__TFILTER_SEEN 8 /* tables left out that a report names */

/* What w2l__tfilter_ok was asked (written through a const filter: the decoders borrow it). */
typedef struct w2l__tfilter_seen {
    unsigned long long passed, left_out; /* answers given */
    char *names[W2L__TFILTER_SEEN];      /* "db.table" of the first tables left out, owned */
    size_t nnames;
    int more;                            /* more tables were left out than names holds */
} w2l__tfilter_seen;

typedef struct w2l__tfilter {
    int has_include, has_exclude;
    regex_t include, exclude;  /* POSIX extended, anchored: the whole "db.table" */
    char *include_text, *exclude_text; /* as given, for messages; NULL when unset */
    w2l__tfilter_seen *seen;   /* allocated with a pattern; NULL without one */
} w2l__tfilter;

/* From conf's include and exclude (unset: every table; conf NULL: no filter). W2L_CONFIG
 * names the key of an expression that does not compile. */
w2l_rc w2l__tfilter_init(w2l__tfilter *f, const w2l_conf *conf, w2l_error *err);
/* 1 when db.table is included and not excluded. */
int w2l__tfilter_ok(const w2l__tfilter *f, const char *db, const char *table);
/* How the patterns are matched, for messages: "patterns match DB.TABLE, whole, e.g.
 * 'DB\.NAME' or '.*\.NAME'", NAME the pattern when it is a plain name (no dot, no
 * backslash), else "accounts"; DB a database of the source (NULL: "shop"). */
void w2l__tfilter_hint(const char *pattern, const char *db, char *buf, size_t size);
/* At the end of a finite run (until-caught-up) of a source named who: a WARN line when
 * include / exclude let no table through while tables were seen, naming the pattern, how
 * it is matched and the tables seen. Nothing without a pattern, or when a table passed. */
void w2l__tfilter_report(const w2l__tfilter *f, const char *who);
void w2l__tfilter_free(w2l__tfilter *f);

#endif
