/*
 * Checkpoint state store registry, URI resolution ("NAME" or "NAME:REST") and the
 * wrappers through which the core calls every method: they check arguments and the
 * protocol's one ordering rule that a store cannot check for itself (no put into a
 * checkpoint at or below the sealed one).
 */
#include <stdio.h>
#include <unistd.h>

#include "state_int.h"

w2l__registry w2l__state_registry;

w2l_rc w2l_state_register(const w2l_state_methods *m, int make_default)
{
    if (!m || m->version < W2L_STATE_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->put || !m->get || !m->keys || !m->seal || !m->latest || !m->prune || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__state_registry, "state", m->name, m, make_default);
}

const w2l_state_methods *w2l_state_find(const char *name)
{
    return w2l__registry_find(&w2l__state_registry, name);
}

w2l_rc w2l_state_open(const char *uri, const w2l_conf *conf, w2l_state **out, w2l_error *err)
{
    *out = NULL;
    char name[64] = "";
    const char *rest = NULL;
    if (uri && *uri) {
        size_t n = strcspn(uri, ":");
        if (n >= sizeof name)
            return w2l__fail(err, W2L_CONFIG,
                             "state: bad URI '%s' (expected NAME or NAME:LOCATION)", uri);
        memcpy(name, uri, n);
        name[n] = '\0';
        if (uri[n] == ':') rest = uri + n + 1;
    }
    const w2l_state_methods *m = w2l_state_find(name[0] ? name : NULL);
    if (!m) {
        char known[256];
        w2l__registry_names(&w2l__state_registry, known, sizeof known);
        return w2l__fail(err, W2L_CONFIG, "state: unknown store '%s' (known: %s)",
                         name[0] ? name : "(default)", known);
    }
    w2l_state *st = w2l__calloc(1, m->size > sizeof *st ? m->size : sizeof *st);
    W2L_NOMEM_IF(!st, err);
    st->methods = m;
    w2l_rc rc = m->open(m, conf, rest, st, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "state %s: ", m->name);
        w2l__free(st);
        return rc;
    }
    *out = st;
    return W2L_OK;
}

void w2l_state_close(w2l_state *st)
{
    if (!st) return;
    st->methods->close(st);
    w2l__free(st);
}

w2l_rc w2l_state_put(w2l_state *st, uint64_t ckpt, const char *key, const void *val, size_t len,
                     w2l_error *err)
{
    if (!key || !*key || (!val && len))
        return w2l__fail(err, W2L_MISUSE, "state put: bad argument");
    if (ckpt == 0)
        return w2l__fail(err, W2L_MISUSE, "state put %s: checkpoint ids start at 1", key);
    uint64_t latest = 0;
    w2l_rc rc = st->methods->latest(st, &latest, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    if (ckpt <= latest)
        return w2l__fail(err, W2L_MISUSE, "state put %s: checkpoint %llu is already sealed", key,
                         (unsigned long long)ckpt);
    return st->methods->put(st, ckpt, key, val, len, err);
}

w2l_rc w2l_state_get(w2l_state *st, uint64_t ckpt, const char *key, w2l_buf *out,
                     w2l_error *err)
{
    if (!key || !out) return w2l__fail(err, W2L_MISUSE, "state get: bad argument");
    return st->methods->get(st, ckpt, key, out, err);
}

w2l_rc w2l_state_keys(w2l_state *st, uint64_t ckpt, const char *prefix,
                      int (*fn)(void *, const char *), void *ctx, w2l_error *err)
{
    return st->methods->keys(st, ckpt, prefix ? prefix : "", fn, ctx, err);
}

w2l_rc w2l_state_seal(w2l_state *st, uint64_t ckpt, w2l_error *err)
{
    uint64_t latest = 0;
    w2l_rc rc = st->methods->latest(st, &latest, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    if (rc == W2L_OK && ckpt <= latest)
        return w2l__fail(err, W2L_MISUSE, "state seal %llu: checkpoint %llu is already sealed",
                         (unsigned long long)ckpt, (unsigned long long)latest);
    return st->methods->seal(st, ckpt, err);
}

w2l_rc w2l_state_latest(w2l_state *st, uint64_t *ckpt, w2l_error *err)
{
    *ckpt = 0;
    return st->methods->latest(st, ckpt, err);
}

w2l_rc w2l_state_prune(w2l_state *st, uint64_t keep_from, w2l_error *err)
{
    return st->methods->prune(st, keep_from, err);
}

/* The error a second job sees: the store's location (err's message, from the store) and
 * who holds it. */
static w2l_rc busy_error(w2l_error *err, const w2l_state_holder *o)
{
    char loc[sizeof err->msg];
    char since[32];
    snprintf(loc, sizeof loc, "%s", err && err->msg[0] ? err->msg : "(this store)");
    w2l__format_utc_ms(o->since_ms, since, sizeof since);
    if (!o->pid && !o->host[0])
        return w2l__fail(err, W2L_BUSY,
                         "state store %s is in use by another job (it left no record of "
                         "itself); stop that job first, or give this one its own warehouse",
                         loc);
    return w2l__fail(err, W2L_BUSY,
                     "state store %s is in use by job \"%s\" (pid %lld on host %s, running "
                     "since %s UTC, w2l %s); stop that job first, or give this one its own "
                     "warehouse",
                     loc, o->job[0] ? o->job : "(none)", o->pid, o->host, since,
                     o->version[0] ? o->version : "?");
}

w2l_rc w2l_state_lock(w2l_state *st, const char *job, w2l_error *err)
{
    const w2l_state_methods *m = st->methods;
    if (m->version < W2L_STATE_METHODS_V2 || !m->lock) return W2L_OK;
    w2l_state_holder me, other;
    memset(&me, 0, sizeof me);
    memset(&other, 0, sizeof other);
    snprintf(me.job, sizeof me.job, "%s", job ? job : "");
    if (gethostname(me.host, sizeof me.host - 1) != 0) snprintf(me.host, sizeof me.host, "?");
    me.pid = (long long)getpid();
    me.since_ms = w2l__now_ms();
    snprintf(me.version, sizeof me.version, "%s", W2L_VERSION_STRING);
    if (err) err->msg[0] = '\0';
    w2l_rc rc = m->lock(st, &me, &other, err);
    if (rc == W2L_BUSY) return busy_error(err, &other);
    if (rc == W2L_OK)
        w2l__log(W2L_LOG_DEBUG, "state: taken by pid %lld (lock epoch %llu)", me.pid,
                 (unsigned long long)me.epoch);
    return rc;
}

w2l_rc w2l_state_holder_get(w2l_state *st, w2l_state_holder *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    const w2l_state_methods *m = st->methods;
    if (m->version < W2L_STATE_METHODS_V2 || !m->holder) return W2L_NOTFOUND;
    return m->holder(st, out, err);
}

w2l_rc w2l_state_renew(w2l_state *st, int64_t *expires_ms, w2l_error *err)
{
    int64_t end = 0;
    const w2l_state_methods *m = st->methods;
    w2l_rc rc = m->version >= W2L_STATE_METHODS_V3 && m->renew ? m->renew(st, &end, err) : W2L_OK;
    if (expires_ms) *expires_ms = rc == W2L_OK ? end : 0;
    return rc;
}
