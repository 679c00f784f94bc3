/*
 * A stream of CDC JSON messages into the pipeline: the part the "file" and "kafka" sources
 * share. It owns the decoder (cdc_json.h), the options read from the configuration, and
 * the quarantine of tables (ddl.policy=quarantine): decode a message, emit the pending
 * events of a finished transaction with the source's position. The source owns the
 * reading, the positions and the wording of where a message came from ("file F: line L",
 * "kafka topic T partition P offset O").
 *
 * Quarantine. When a message fails for a table whose ddl.policy is quarantine
 * (table.<db>.<table>.ddl.policy), or the pipeline refuses one of its rows (W2L_SCHEMA
 * from w2l_emit_change(), a NULL key say), the table is set aside instead: the decoder
 * drops its rows from then on without converting them (and still follows its schema), the
 * message is decoded again without it, so the other tables of the message and of its
 * transaction go through, and the pipeline is told with w2l_emit_quarantine() — before the
 * transaction's events, so nothing of the table from that transaction on reaches the
 * lake — along with how many rows of it were dropped since. The DDL handler keeps the
 * quarantine in its state; after a restart the first failing row of the table sets it
 * aside here again (and messages replayed to rebuild schemas tolerate the same failures).
 */
#ifndef W2L_CDC_STREAM_H
#define W2L_CDC_STREAM_H

#include "table_filter.h"
#include "cdc_json.h"

/* Where a message or transaction came from, put into words only when something fails
 * (formatting it for every message would cost more than decoding some of them). */
typedef struct w2l__cdc_where {
    const char *topic; /* Kafka: the topic; NULL for a file */
    int32_t partition; /* Kafka */
    uint64_t n;        /* file: line (decode) or byte offset (emit); Kafka: offset */
    int is_offset;     /* file: n is a byte offset */
} w2l__cdc_where;

/* "line 12", "byte offset 4096", "topic t partition 0 offset 7" into buf. */
void w2l__cdc_where_text(const w2l__cdc_where *w, char *buf, size_t size);

typedef struct w2l__cdc_stream {
    w2l__cdc *dec;
    w2l__cdc_format fmt;
    w2l_conf *conf; /* a copy: per-table ddl.policy */
    char *origin;   /* "file PATH", "kafka BROKERS": begins quarantine reasons */
    int until_caught_up;
    struct w2l__cdc_qtable { /* tables set aside (quarantine), in order */
        char *db, *table, *reason;
        int reported;     /* the pipeline knows */
        uint64_t dropped; /* its events dropped here, not yet told */
    } *q;
    size_t nq;
    int64_t last_ts_ms; /* source time of the last transaction emitted */
    w2l__tfilter filter; /* include / exclude, which the decoder borrows */
} w2l__cdc_stream;

/* Reads the source.* options of conf (NULL: defaults) and makes the decoder. */
w2l_rc w2l__cdc_stream_init(w2l__cdc_stream *st, w2l__cdc_format fmt, const w2l_conf *conf,
                            const char *origin, w2l_error *err);
void w2l__cdc_stream_free(w2l__cdc_stream *st);

/* Decodes one message (replay: rebuilding schemas before a restored position, nothing
 * kept). A failure for a table under ddl.policy=quarantine sets the table aside and
 * decodes again; where ("line 12", "topic t partition 0 offset 7") names the message in
 * the reason. On failure the message added no event (the pending ones stay: the caller
 * drops them with w2l__cdc_clear() or, skipping the message, goes on) and err says what
 * (the caller prefixes where). *step as w2l__cdc_decode(); W2L__CDC_BEFORE is handled by
 * the caller. */
w2l_rc w2l__cdc_stream_decode(w2l__cdc_stream *st, const char *text, size_t len, int replay,
                              const w2l__cdc_where *where, w2l__cdc_step *step,
                              w2l_error *err);

/* Emits the pending events (after telling the pipeline of new quarantines) and then
 * w2l_emit_commit(pos) — unless there was nothing of a transaction, when no commit is made
 * and *emitted is 0 (the position may lag). *emitted: events emitted, at least 1 when
 * something was. where names the transaction in quarantine reasons. Clears the pending
 * events in every case. */
w2l_rc w2l__cdc_stream_emit(w2l__cdc_stream *st, w2l_emitter *em, const char *pos, size_t pl,
                            const w2l__cdc_where *where, size_t *emitted, w2l_error *err);

/* A message's source order, read without parsing it whole (cdc_peek.c): *k1 then *k2
 * order messages across partitions. Debezium: source.ts_ms, then the binlog file and
 * position; canal: es, then the batch id; Maxwell: ts (in ms), then the binlog position.
 * 0 for what the message lacks. */
void w2l__cdc_peek_order(w2l__cdc_format fmt, const char *t, size_t len, int64_t *k1,
                         int64_t *k2);
/* The database and table a message is about, read without parsing it whole, into db and tb
 * (size bytes each), and whether it holds row changes (*rows; not DDL); 0 when it names no
 * table (a database DDL, say) or a name is escaped or too long. */
int w2l__cdc_peek_table(w2l__cdc_format fmt, const char *t, size_t len, char *db, char *tb,
                        size_t size, int *rows);

#endif
