/*
 * The ledger of a shared source (w2l_source_methods(3), V2): what this process knows of each
 * table's position in the lake when several processes read one source together, each a share
 * of its partitions (kafka://...&group=G).
 *
 * A table's position is the newest w2l snapshot's w2l.source-position, and in this mode it is
 * the table's own: {"NAME":{"STREAM":{"PART":NEXT}}} says that for every partition named, the
 * table holds every change below NEXT. Each commit writes the table's position merged with the
 * committing process's offsets of the partitions it read the table's changes from (per
 * partition the larger offset), so the newest snapshot alone tells every partition the table
 * has changes in, whoever read it last, and a table names only those (not every partition of
 * every process: a thousand tables, one partition each, stay small).
 *
 *   - The source asks committed() before decoding a message of table T from partition P at
 *     offset o, and skips it when o is below T's NEXT for P: a partition that moved from a
 *     process that committed some tables and died resumes where each table stands.
 *   - Before committing T, the committer calls merge(): for every partition of this process
 *     whose T offset the source asked since it was assigned, the lake must still say what the
 *     source was told (or what this process last committed). Anything else means that another
 *     process committed T's changes of that partition meanwhile — a member that lost the
 *     partition (fenced by a rebalance it did not hear of in time) or the one that took it
 *     over — and this process may hold the same changes: W2L_CONFLICT, "fenced", and the
 *     pipeline stops with nothing of it committed to T. The first to commit wins.
 *   - After a commit, done() records the merged position as this process's knowledge.
 * assigned() forgets what was read of a partition: it is read from the lake again when asked.
 * A table's rows must come from one partition (its DDL may come from another: canal sends
 * DDL to partition 0): each commit records it as w2l.row-partition, and rows from a second
 * one — seen here, or recorded by another member — are W2L_CONFIG.
 */
#ifndef W2L_PIPELINE_LEDGER_H
#define W2L_PIPELINE_LEDGER_H

#include "../common/common.h"

/* The error for a table whose rows come from two partitions (ns, table, both as "T/P"). */
#define W2L__LEDGER_SPREAD                                                                    \
    "table %s.%s: its rows come from partition %s and from %s; members of a consumer group "  \
    "would apply them in no order (a key moved between partitions, a delete before its "     \
    "insert): partition the topic by table (w2l-kafka(7)), or read it without group="

typedef struct w2l__ledger w2l__ledger;

/* conf is borrowed; the catalog is opened on first use. */
w2l__ledger *w2l__ledger_new(const w2l_conf *conf);
void w2l__ledger_free(w2l__ledger *l); /* NULL is a no-op */

/* w2l_source_lake's committed() and assigned(). rows: the message holds row changes. */
w2l_rc w2l__ledger_committed(w2l__ledger *l, const char *ns, const char *table,
                             const char *stream, int32_t part, int rows, int64_t *next,
                             w2l_error *err);
void w2l__ledger_assigned(w2l__ledger *l, const char *stream, int32_t part);

/* uuid: the table's, as loaded; base and base_rows: its w2l.source-position and
 * w2l.row-partition in the lake now (NULL/"" none); mine: the position of the checkpoint
 * being committed. *merged and *rows (what to record; w2l_free) on W2L_OK. */
w2l_rc w2l__ledger_merge(w2l__ledger *l, const char *ns, const char *table, const char *uuid,
                         const char *base, const char *base_rows, const char *mine,
                         char **merged, char **rows, w2l_error *err);
/* ns.table was committed at merged (what merge() gave); mine as passed to merge(). */
void w2l__ledger_done(w2l__ledger *l, const char *ns, const char *table, const char *uuid,
                      const char *mine, const char *merged);

/* The ledger of the pipeline whose operator runs on the calling thread (NULL: none). */
void w2l__ledger_set_current(w2l__ledger *l);
w2l__ledger *w2l__ledger_current(void);

#endif
