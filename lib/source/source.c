/*
 * Source plug-in registry, keyed by URI scheme ("mysql", "file"), and the wrappers through
 * which the core calls every method (w2l_source_methods(3)): they resolve the URI, check
 * arguments and what a method returns, and keep the protocol's ordering rules that a
 * source cannot check for itself — next() is not called again after W2L_DONE, and
 * checkpoint_complete() hears checkpoint ids in increasing order, each once.
 *
 * The core allocates each instance behind a small header of its own (source_box), so the
 * wrappers keep that bookkeeping without a member in the public base struct.
 */
#include <stddef.h>
#include <stdio.h>

#include "source_int.h"

w2l__registry w2l__source_registry;

/* What the core keeps beside an instance; the implementation's struct (its first member
 * the w2l_source base) follows at impl. */
typedef struct source_box {
    uint64_t completed; /* the newest checkpoint told complete; 0: none */
    int done;           /* next() returned W2L_DONE */
    _Alignas(max_align_t) unsigned char impl[];
} source_box;

static source_box *box_of(w2l_source *src)
{
    return (source_box *)(void *)((unsigned char *)src - offsetof(source_box, impl));
}

w2l_rc w2l_source_register(const w2l_source_methods *m, int make_default)
{
    if (!m || m->version < W2L_SOURCE_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->next || !m->checkpoint_complete || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__source_registry, "source", m->name, m, make_default);
}

const w2l_source_methods *w2l_source_find(const char *name)
{
    return w2l__registry_find(&w2l__source_registry, name);
}

/* The plug-in of uri's scheme (copied into scheme, for messages), or NULL. */
static const w2l_source_methods *find_for(const char *uri, char scheme[32])
{
    size_t sl = strcspn(uri, ":");
    if (sl >= 32) sl = 31;
    snprintf(scheme, 32, "%.*s", (int)sl, uri);
    return w2l_source_find(scheme);
}

w2l_rc w2l__source_open(const char *uri, const w2l_conf *conf, const char *restored,
                        w2l_source **out, w2l_error *err)
{
    *out = NULL;
    if (!uri || !*uri) return w2l__fail(err, W2L_MISUSE, "source: no URI");
    char scheme[32];
    const w2l_source_methods *m = find_for(uri, scheme);
    if (!m) {
        char known[256];
        w2l__registry_names(&w2l__source_registry, known, sizeof known);
        return w2l__fail(err, W2L_CONFIG, "source: unknown kind '%s' (known: %s)", scheme, known);
    }
    size_t size = m->size > sizeof(w2l_source) ? m->size : sizeof(w2l_source);
    source_box *box = w2l__calloc(1, offsetof(source_box, impl) + size);
    W2L_NOMEM_IF(!box, err);
    w2l_source *src = (w2l_source *)(void *)box->impl;
    src->methods = m;
    w2l_rc rc = m->open(m, conf, uri, restored, src, err);
    if (rc != W2L_OK) {
        /* a plug-in's open cleans up after itself on failure (w2l_source_methods(3)) */
        if (err && !err->msg[0])
            w2l__fail(err, rc, "source %s: open failed (%s)", m->name, w2l_rc_name(rc));
        w2l__free(box);
        return rc;
    }
    *out = src;
    return W2L_OK;
}

w2l_rc w2l__source_next(w2l_source *src, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    if (!src || !em || timeout_ms < 0)
        return w2l__fail(err, W2L_MISUSE, "source next: bad argument");
    source_box *box = box_of(src);
    if (box->done)
        return w2l__fail(err, W2L_MISUSE, "source %s: next() after the end of the source",
                         src->methods->name);
    w2l_rc rc = src->methods->next(src, em, timeout_ms, err);
    if (rc == W2L_DONE) box->done = 1;
    else if (rc != W2L_OK && rc != W2L_AGAIN && err && !err->msg[0])
        w2l__fail(err, rc, "source %s: next failed (%s)", src->methods->name, w2l_rc_name(rc));
    return rc;
}

int w2l__source_shared(const char *uri, const w2l_conf *conf)
{
    char scheme[32];
    const w2l_source_methods *m = uri && *uri ? find_for(uri, scheme) : NULL;
    return m && m->version >= W2L_SOURCE_METHODS_V2 && m->shared && m->shared(conf, uri);
}

int w2l__source_wants_position(const w2l_source *src)
{
    return src && src->methods->version >= W2L_SOURCE_METHODS_V2 &&
           src->methods->checkpoint_done;
}

void w2l__source_attach(w2l_source *src, const w2l_source_lake *lake)
{
    if (src && src->methods->version >= W2L_SOURCE_METHODS_V2 && src->methods->attach)
        src->methods->attach(src, lake);
}

w2l_rc w2l__source_checkpoint_complete(w2l_source *src, uint64_t ckpt, const char *position,
                                       w2l_error *err)
{
    if (!src) return w2l__fail(err, W2L_MISUSE, "source checkpoint complete: bad argument");
    source_box *box = box_of(src);
    if (ckpt == 0 || ckpt <= box->completed)
        return w2l__fail(err, W2L_MISUSE,
                         "source %s: checkpoint %llu complete after checkpoint %llu",
                         src->methods->name, (unsigned long long)ckpt,
                         (unsigned long long)box->completed);
    box->completed = ckpt; /* told, whatever the outcome: the next call covers it too */
    const w2l_source_methods *m = src->methods;
    w2l_rc rc = m->version >= W2L_SOURCE_METHODS_V2 && m->checkpoint_done
                    ? m->checkpoint_done(src, ckpt, position, err)
                    : m->checkpoint_complete(src, ckpt, err);
    if (rc != W2L_OK) {
        if (err && !err->msg[0]) w2l__fail(err, rc, "failed (%s)", w2l_rc_name(rc));
        w2l__error_prefix(err, "source %s: checkpoint %llu complete: ", src->methods->name,
                          (unsigned long long)ckpt);
        return rc;
    }
    return W2L_OK;
}

int64_t w2l__source_lag_ms(w2l_source *src)
{
    if (!src || !src->methods->lag_ms) return 0;
    int64_t lag = src->methods->lag_ms(src);
    return lag < 0 ? -1 : lag;
}

void w2l__source_close(w2l_source *src)
{
    if (!src) return;
    src->methods->close(src);
    w2l__free(box_of(src));
}

w2l_rc w2l__source_resync(w2l_source *src, const char *db, const char *table, w2l_error *err)
{
    const w2l_source_methods *m = src ? src->methods : NULL;
    if (!m || m->version < W2L_SOURCE_METHODS_V3 || !m->resync)
        return w2l__fail(err, W2L_CONFIG, "source %s cannot read a table again (resync)",
                         m ? m->name : "(none)");
    return m->resync(src, db, table, err);
}
