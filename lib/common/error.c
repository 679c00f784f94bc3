/*
 * The w2l_rc + caller-owned w2l_error convention: formatting into the fixed buffer, never
 * allocating, so even an out-of-memory failure can be described.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>

#include "common.h"

static const char *const rc_names[] = {
    "W2L_OK", "W2L_ERROR", "W2L_NOMEM", "W2L_IO", "W2L_CORRUPT", "W2L_MISUSE",
    "W2L_NOTFOUND", "W2L_EXISTS", "W2L_CONFLICT", "W2L_UNAVAILABLE", "W2L_SCHEMA",
    "W2L_SOURCE", "W2L_AGAIN", "W2L_CANCELLED", "W2L_CONFIG", "W2L_DONE",
    "W2L_BUSY",
};

const char *w2l_rc_name(w2l_rc rc)
{
    if ((unsigned)rc < W2L_ARRAY_LEN(rc_names)) return rc_names[rc];
    return "W2L_?";
}

void w2l_error_clear(w2l_error *err)
{
    if (!err) return;
    err->code = W2L_OK;
    err->sys_errno = 0;
    err->flags = 0;
    err->msg[0] = '\0';
}

static w2l_rc vfail(w2l_error *err, w2l_rc code, int e, const char *fmt, va_list ap)
{
    if (!err) return code;
    err->code = code;
    err->sys_errno = e;
    err->flags = 0;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (e) {
        size_t n = strlen(err->msg);
        char eb[128];
        /* strerror_r (POSIX form) keeps this thread-safe */
        if (strerror_r(e, eb, sizeof eb) != 0) snprintf(eb, sizeof eb, "errno %d", e);
        snprintf(err->msg + n, sizeof err->msg - n, ": %s", eb);
    }
    if (code == W2L_UNAVAILABLE || code == W2L_CONFLICT || code == W2L_AGAIN)
        err->flags |= W2L_ERR_RETRIABLE;
    return code;
}

w2l_rc w2l_error_set(w2l_error *err, w2l_rc code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

w2l_rc w2l__fail(w2l_error *err, w2l_rc code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

w2l_rc w2l__fail_errno(w2l_error *err, w2l_rc code, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, e, fmt, ap);
    va_end(ap);
    return code;
}

/* Does msg begin with the n bytes of name, as a whole name ("table a.b" of "table a.b not
 * found", not of "table a.bc")? */
static int begins_with_name(const char *msg, const char *name, size_t n)
{
    if (n == 0 || strncmp(msg, name, n) != 0) return 0;
    char c = msg[n];
    return !(isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == '/');
}

/* How much of head ("mysql source: snapshot: ") the layer below said already: all of it
 * when msg begins with what the whole head names, its first context ("mysql source: ")
 * when msg begins with that one, else nothing. */
static size_t said_already(const char *msg, const char *head)
{
    size_t n = strlen(head);
    while (n > 0 && (head[n - 1] == ' ' || head[n - 1] == ':')) n--;
    if (begins_with_name(msg, head, n)) return strlen(head);
    const char *sep = strstr(head, ": ");
    if (sep && begins_with_name(msg, head, (size_t)(sep - head))) return (size_t)(sep + 2 - head);
    return 0;
}

void w2l__error_prefix(w2l_error *err, const char *fmt, ...)
{
    if (!err) return;
    char head[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    const char *h = head + said_already(err->msg, head);
    memcpy(old, err->msg, sizeof old);
    size_t hl = strlen(h), ol = strlen(old);
    if (hl == 0) return;
    if (hl > sizeof err->msg - 1) hl = sizeof err->msg - 1;
    if (ol > sizeof err->msg - 1 - hl) ol = sizeof err->msg - 1 - hl;
    memcpy(err->msg, h, hl);
    memcpy(err->msg + hl, old, ol);
    err->msg[hl + ol] = '\0';
}
