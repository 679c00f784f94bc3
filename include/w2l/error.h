/*
 * Errors: every fallible call returns a w2l_rc and fills a caller-owned w2l_error.
 * The error path never allocates, so an out-of-memory condition can still be reported.
 */
#ifndef W2L_ERROR_H
#define W2L_ERROR_H

#include <stddef.h>
#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes. The numbers are pinned forever; new codes go at the end. */
typedef enum w2l_rc {
    W2L_OK = 0,         /* success */
    W2L_ERROR = 1,      /* generic failure; msg says more */
    W2L_NOMEM = 2,      /* an allocation failed */
    W2L_IO = 3,         /* a read, write, fsync, rename ... failed */
    W2L_CORRUPT = 4,    /* input does not follow its format */
    W2L_MISUSE = 5,     /* the caller broke an API contract */
    W2L_NOTFOUND = 6,   /* no such key, file, table or plug-in */
    W2L_EXISTS = 7,     /* it is already there */
    W2L_CONFLICT = 8,   /* an optimistic commit lost the race */
    W2L_UNAVAILABLE = 9,/* a server or service cannot be reached */
    W2L_SCHEMA = 10,    /* a schema change or type that is not allowed */
    W2L_SOURCE = 11,    /* the change source failed or sent bad data */
    W2L_AGAIN = 12,     /* nothing yet; call again */
    W2L_CANCELLED = 13, /* stopped on request */
    W2L_CONFIG = 14,    /* bad configuration: unknown key, wrong type, missing value */
    W2L_DONE = 15,      /* the source has nothing more (end of stream) */
    W2L_BUSY = 16       /* another process holds it (a state store in use by another job) */
} w2l_rc;

/* Flags of a w2l_error. */
enum {
    W2L_ERR_RETRIABLE = 1u << 0, /* trying the same call again may succeed */
    W2L_ERR_FATAL = 1u << 1      /* the pipeline must stop */
};

/* Detail of a failure. Owned by the caller, usually on its stack; never allocated. */
typedef struct w2l_error {
    w2l_rc code;     /* the same code the call returned */
    int sys_errno;   /* errno, HTTP status or MariaDB errno; 0 if none */
    unsigned flags;  /* W2L_ERR_* */
    char msg[512];   /* "commit: manifest m1.avro: write: No space left on device" */
} w2l_error;

/* The name of a code, e.g. "W2L_IO". Static, never NULL (unknown codes give "W2L_?").
 * Thread-safe. See w2l_rc_name(3). */
W2L_API const char *w2l_rc_name(w2l_rc rc);

/* Resets *err to W2L_OK with an empty message. err may be NULL. See w2l_error_clear(3). */
W2L_API void w2l_error_clear(w2l_error *err);

/* Sets *err (when err is not NULL) to code with a printf-formatted message, truncated to
 * fit, and returns code, so plug-ins can write `return w2l_error_set(err, W2L_IO, ...)`.
 * Never allocates. See w2l_error_set(3). */
W2L_API w2l_rc w2l_error_set(w2l_error *err, w2l_rc code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
