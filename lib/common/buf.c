/*
 * Growable byte buffers (w2l_buf). Growth doubles, so appends are amortised O(1); memory
 * comes from the allocator hook so plug-ins and core share one accounting.
 */
#include <stdio.h>

#include "common.h"

w2l_rc w2l__buf_reserve(w2l_buf *b, size_t extra, w2l_error *err)
{
    if (b->cap - b->len >= extra && b->data) return W2L_OK;
    if (extra > SIZE_MAX / 2 - b->len)
        return w2l__fail(err, W2L_NOMEM, "buffer of %zu bytes too large", b->len + extra);
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < extra) cap *= 2;
    unsigned char *d = w2l__realloc(b->data, cap);
    if (!d) return w2l__fail(err, W2L_NOMEM, "out of memory growing a buffer to %zu bytes", cap);
    b->data = d;
    b->cap = cap;
    return W2L_OK;
}

w2l_rc w2l_buf_append(w2l_buf *b, const void *p, size_t len, w2l_error *err)
{
    if (!b || (!p && len)) return w2l__fail(err, W2L_MISUSE, "w2l_buf_append: NULL argument");
    W2L_TRY(w2l__buf_reserve(b, len, err));
    if (len) memcpy(b->data + b->len, p, len);
    b->len += len;
    return W2L_OK;
}

void w2l_buf_release(w2l_buf *b)
{
    if (!b) return;
    w2l__free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

w2l_rc w2l__buf_printf(w2l_buf *b, w2l_error *err, const char *fmt, ...)
{
    /* printed into the free room first: formatted twice only when it does not fit */
    size_t room = b->data ? b->cap - b->len : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? (char *)b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) return w2l__fail(err, W2L_ERROR, "bad format");
    if ((size_t)n >= room) {
        W2L_TRY(w2l__buf_reserve(b, (size_t)n + 1, err));
        va_start(ap, fmt);
        vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
    return W2L_OK;
}

w2l_rc w2l__buf_cstr(w2l_buf *b, w2l_error *err)
{
    W2L_TRY(w2l__buf_reserve(b, 1, err));
    b->data[b->len] = '\0';
    return W2L_OK;
}
