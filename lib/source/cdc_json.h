/*
 * CDC JSON decoders (w2l-design(7) section 9): one JSON message of canal-json, debezium-json or
 * maxwell-json in, the row changes and DDL it carries out. Used by the file source (and
 * later by the Kafka source), which owns the reading and the positions.
 *
 * A decoder keeps per-table source schemas (field ids 1..n in column order, identifier =
 * the format's primary key) and the events of the open transaction. Nothing is emitted by
 * the decoder: the caller emits a transaction's events once the transaction is whole, so a
 * bad message never leaves half a transaction in the pipeline.
 *
 * Memory: events, rows and their bytes live in chunks the decoder reuses from one
 * transaction to the next; a steady stream allocates only for the JSON tree.
 */
#ifndef W2L_CDC_JSON_H
#define W2L_CDC_JSON_H

#include "../common/common.h"

typedef enum w2l__cdc_format {
    W2L__CDC_CANAL = 1,
    W2L__CDC_DEBEZIUM = 2,
    W2L__CDC_MAXWELL = 3
} w2l__cdc_format;

/* "canal-json" | "debezium-json" | "maxwell-json" (len bytes) -> 0, else -1. */
int w2l__cdc_format_parse(const char *name, size_t len, w2l__cdc_format *out);
const char *w2l__cdc_format_name(w2l__cdc_format f);
#define W2L__CDC_FORMATS "canal-json|debezium-json|maxwell-json"

typedef struct w2l__cdc_opts {
    int tinyint1_as_boolean; /* source.tinyint1-as-boolean */
    int time_as_string;      /* source.time-as-string */
    int32_t tz_offset_s;     /* source.timezone as a fixed offset east of UTC, seconds */
    char maxwell_database[65]; /* source.maxwell-database: maxwell-json rows and DDL of this
                                  database (Maxwell's own bookkeeping) are dropped; "" keeps all */
    const struct w2l__tfilter *filter; /* include / exclude (borrowed); NULL: every table */
} w2l__cdc_opts;

/* Parses a fixed zone: "UTC", "GMT", "Z", "+08:00", "-0530", "+08". W2L_CONFIG otherwise
 * (named zones such as "Asia/Shanghai" are not supported: no tz database here). */
w2l_rc w2l__cdc_tz_parse(const char *text, int32_t *offset_s, w2l_error *err);

typedef struct w2l__cdc w2l__cdc;

/* NULL when out of memory. */
w2l__cdc *w2l__cdc_new(w2l__cdc_format f, const w2l__cdc_opts *opts);
void w2l__cdc_free(w2l__cdc *d); /* NULL is a no-op */

/* What a message did to the open transaction. */
typedef enum w2l__cdc_step {
    W2L__CDC_MORE = 0,   /* consumed; its transaction may continue */
    W2L__CDC_END = 1,    /* consumed; it ended a transaction: emit the pending events */
    W2L__CDC_BEFORE = 2  /* NOT consumed: the pending transaction ended before this message
                            (it belongs to another one). Emit the pending events, commit,
                            w2l__cdc_clear(), then pass the same message again. */
} w2l__cdc_step;

/* Decodes one message of len bytes (one line, without its newline) and appends its
 * events to the pending transaction. Blank lines and tombstones ("null") are consumed
 * without events. On failure (W2L_SOURCE naming what, W2L_NOMEM) the message added no
 * event; the caller drops the pending transaction with w2l__cdc_clear().
 * replay: 1 while rebuilding schema state from the stream before a restored position:
 * schemas and DDL are tracked, row values are not converted and no events are kept. */
w2l_rc w2l__cdc_decode(w2l__cdc *d, const char *text, size_t len, int replay,
                       w2l__cdc_step *step, w2l_error *err);

/* 1 when the pending events form a whole transaction at the end of the stream (formats
 * whose transactions end only when the next one starts), 0 when the transaction is
 * unfinished (maxwell without its commit row). */
int w2l__cdc_pending_complete(const w2l__cdc *d);

/* One decoded event; pointers are borrowed until w2l__cdc_clear(). */
typedef struct w2l__cdc_event {
    int is_ddl;
    int owns_schema;   /* change.schema holds a reference of its own (its shape was replaced
                          since); else it is the table's current shape's */
    w2l_change change; /* when !is_ddl */
    w2l_ddl ddl;       /* when is_ddl */
} w2l__cdc_event;

/* The pending events, in order. */
const w2l__cdc_event *w2l__cdc_events(const w2l__cdc *d, size_t *n);

/* Drops the pending events (after emitting them, or after a failure). */
void w2l__cdc_clear(w2l__cdc *d);

/* Quarantine (ddl.policy=quarantine, per table). After a failed w2l__cdc_decode(): 1 and
 * the table the message named (borrowed until w2l__cdc_free()), or 0 when the failure
 * names none (a malformed message, say). */
int w2l__cdc_failed_table(const w2l__cdc *d, const char **db, const char **table);
/* From now on the table's rows are dropped without converting a value (its schema is still
 * followed, so the decoder stays in step with the stream); each one is counted. */
w2l_rc w2l__cdc_skip_table(w2l__cdc *d, const char *db, const char *table, w2l_error *err);
int w2l__cdc_table_skipped(w2l__cdc *d, const char *db, const char *table);
/* The rows of the table dropped since the last call. */
uint64_t w2l__cdc_take_skipped(w2l__cdc *d, const char *db, const char *table);
/* The table's rows are decoded again (its quarantine ended). */
void w2l__cdc_unskip_table(w2l__cdc *d, const char *db, const char *table);

#endif
