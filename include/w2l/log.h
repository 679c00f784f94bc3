/*
 * Logging with levels. By default lines go to stderr as
 * "2026-11-29T15:40:17.123Z warn  committer: orders: ...", or, with w2l_log_set_format(),
 * as one JSON object per line. A host routes them elsewhere with w2l_log_set_callback().
 */
#ifndef W2L_LOG_H
#define W2L_LOG_H

#include <stddef.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum w2l_log_level {
    W2L_LOG_ERROR = 0, W2L_LOG_WARN = 1, W2L_LOG_INFO = 2, W2L_LOG_DEBUG = 3, W2L_LOG_TRACE = 4
} w2l_log_level;

/* Receives one message (without the timestamp and level prefix the default sink adds, and
 * without a newline) on the thread that logs it; calls are serialised, so fn need not lock,
 * and fn must not call w2l_log_set_callback(). The line is borrowed for the call only. */
typedef void (*w2l_log_fn)(void *opaque, w2l_log_level level, const char *line);

/* Lines above level are dropped (default W2L_LOG_INFO). Thread-safe. See w2l_log_set_level(3). */
W2L_API void w2l_log_set_level(w2l_log_level level);
W2L_API w2l_log_level w2l_log_get_level(void);

/* Routes lines to fn (NULL restores stderr). Thread-safe. See w2l_log_set_level(3). */
W2L_API void w2l_log_set_callback(w2l_log_fn fn, void *opaque);

/* Parses "error", "warn", "info", "debug", "trace". Returns 0 on success, -1 otherwise.
 * See w2l_log_set_level(3). */
W2L_API int w2l_log_level_parse(const char *name, w2l_log_level *out);

/* The name of a level ("warn"). Static. See w2l_log_set_level(3). */
W2L_API const char *w2l_log_level_name(w2l_log_level level);

typedef enum w2l_log_format { W2L_LOG_FORMAT_TEXT = 0, W2L_LOG_FORMAT_JSON = 1 } w2l_log_format;

/* The format of the lines the default sink writes and w2l_log_format_line() returns
 * (default text); a callback still receives the bare message. Thread-safe.
 * See w2l_log_set_format(3). */
W2L_API void w2l_log_set_format(w2l_log_format format);
W2L_API w2l_log_format w2l_log_get_format(void);

/* Writes into buf (size bytes, NUL-terminated, no newline) the line the default sink would
 * write for a message: "TIME LEVEL line" or a JSON object, which carries the table and
 * fields the library attached when called inside a callback with the line it received.
 * Returns the length written (0 when size < 256 in the JSON format). Thread-safe.
 * See w2l_log_set_format(3). */
W2L_API size_t w2l_log_format_line(char *buf, size_t size, w2l_log_level level,
                                   const char *line);

#ifdef __cplusplus
}
#endif
#endif
