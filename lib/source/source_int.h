/*
 * The source module, internal side: the wrappers through which the core calls a source
 * (source.c), and the built-in source plug-ins that lib/builtins.c registers.
 */
#ifndef W2L_SOURCE_INT_H
#define W2L_SOURCE_INT_H

#include "../common/common.h"

/* Opens a source for URI (its scheme picks the plug-in: "mysql://...", "file:..."),
 * restored: the position saved at the checkpoint the pipeline restarts from, or NULL.
 * *out is set only on W2L_OK; an unknown scheme is W2L_CONFIG naming the known ones. */
w2l_rc w2l__source_open(const char *uri, const w2l_conf *conf, const char *restored,
                        w2l_source **out, w2l_error *err);
/* next(): W2L_OK, W2L_AGAIN or W2L_DONE, else an error; W2L_MISUSE once the source ended. */
w2l_rc w2l__source_next(w2l_source *src, w2l_emitter *em, int timeout_ms, w2l_error *err);
/* checkpoint_complete(): ids strictly increasing (W2L_MISUSE otherwise); errors are
 * prefixed "source NAME: checkpoint N complete: ". Called on the thread that calls next(). */
w2l_rc w2l__source_checkpoint_complete(w2l_source *src, uint64_t ckpt, const char *position,
                                       w2l_error *err);
/* Whether uri names a source this process reads with others (w2l_source_methods(3), V2). */
int w2l__source_shared(const char *uri, const w2l_conf *conf);
void w2l__source_attach(w2l_source *src, const w2l_source_lake *lake);
/* Whether checkpoint_complete() passes the position on (V2 checkpoint_done): else the
 * caller need not look it up. */
int w2l__source_wants_position(const w2l_source *src);
/* lag_ms(), 0 when the plug-in has none. Any thread. */
int64_t w2l__source_lag_ms(w2l_source *src);
/* The source's resync() (V3); W2L_CONFIG when it has none. */
w2l_rc w2l__source_resync(w2l_source *src, const char *db, const char *table, w2l_error *err);
/* close(), then frees the instance. NULL: no-op. */
void w2l__source_close(w2l_source *src);

/* "file": CDC JSON lines (canal-json, debezium-json, maxwell-json) from a local file,
 * file_source.c. */
extern const w2l_source_methods w2l__source_file;
/* "kafka": the same CDC JSON from Kafka topics, kafka.c. */
extern const w2l_source_methods w2l__source_kafka;

#endif
