/*
 * Vended credentials: the process-wide registry of storage credentials a catalog hands out
 * per table (w2l-s3(7), w2l-catalogs(7)). A catalog that loads (or stages) a table puts the
 * credentials for the table's location (or for each prefix the catalog names); every S3
 * request of every file IO of the process asks here first and signs with the entry of the
 * longest prefix that holds its object, else with its own credentials.
 *
 * Owner and lifetime: the registry owns the entries, for the process (w2l__vend_reset, from
 * w2l_global_cleanup, frees them). An entry is the credentials of one catalog (its group:
 * the catalog's URI and warehouse) for one prefix; a later put of the same group and prefix
 * replaces it. Catalog handles come and go (commands, committers and DDL open their own):
 * each open one attaches as a refresher of its group and detaches at close, after any
 * refresh of its in flight; an entry outlives the handle that put it.
 *
 * Refresh: an entry due (within min(5 minutes, half its lifetime) of expiry), or refused by
 * the store (a 403 with it), is refreshed by an attached refresher of its group, which loads
 * the table again and puts the new credentials. One refresh per entry at a time: other
 * threads wait for it. Refreshers run without the registry lock (they put). With none
 * attached, credentials not yet expired are used; expired ones are an error.
 *
 * Secrets are copied in and out, wiped before their memory is freed, and never logged.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "s3.h"

#define REFRESH_MAX_MS (5 * 60 * 1000)

typedef struct vend_entry {
    char *group;
    char *prefix;     /* "bucket/path", without a scheme or a trailing '/' */
    char *ns, *table; /* whose credentials, for the refresher and messages */
    char *hint;       /* the catalog's note on how to get them again, NULL none */
    w2l__aws_cred cred;
    char region[64]; /* "" none */
    int64_t got_ms;  /* when put */
    unsigned gen;    /* bumped by every put */
    int refreshing;
    uint64_t seq; /* order of puts: the newest of equal prefixes wins */
} vend_entry;

typedef struct vend_refresher {
    const void *owner;
    char *group;
    w2l__vend_refresh_fn fn;
    int busy; /* refreshes in flight */
} vend_refresher;

static struct {
    mtx_t mu;
    cnd_t cv;
    vend_entry **e;
    size_t n, cap;
    vend_refresher *r;
    size_t nr, rcap;
    uint64_t seq;
} reg;
static once_flag reg_once = ONCE_FLAG_INIT;

static void reg_init(void)
{
    mtx_init(&reg.mu, mtx_plain);
    cnd_init(&reg.cv);
}

/* "s3://b/p/" (s3a, s3n too) or "b/p" → "b/p"; fresh. */
static char *norm_prefix(const char *p)
{
    const char *s = strstr(p, "://");
    if (s) p = s + 3;
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == '/') n--;
    return w2l__strndup(p, n);
}

static void entry_free(vend_entry *e)
{
    if (!e) return;
    w2l__aws_cred_clear(&e->cred);
    w2l__free(e->group);
    w2l__free(e->prefix);
    w2l__free(e->ns);
    w2l__free(e->table);
    w2l__free(e->hint);
    w2l__free(e);
}

static w2l_rc copy_cred(w2l__aws_cred *dst, const w2l__aws_cred *src, w2l_error *err)
{
    w2l__aws_cred n = { w2l__strdup(src->access_key), w2l__strdup(src->secret_key),
                        src->session_token ? w2l__strdup(src->session_token) : NULL,
                        src->expires_ms };
    if (!n.access_key || !n.secret_key || (src->session_token && !n.session_token)) {
        w2l__aws_cred_clear(&n);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *dst = n;
    return W2L_OK;
}

w2l_rc w2l__vend_attach(const void *owner, const char *group, w2l__vend_refresh_fn fn,
                        w2l_error *err)
{
    call_once(&reg_once, reg_init);
    if (!owner || !group || !fn) return w2l__fail(err, W2L_MISUSE, "w2l__vend_attach: NULL");
    char *g = w2l__strdup(group);
    W2L_NOMEM_IF(!g, err);
    mtx_lock(&reg.mu);
    if (reg.nr == reg.rcap) {
        size_t cap = reg.rcap ? reg.rcap * 2 : 8;
        vend_refresher *a = w2l__realloc(reg.r, cap * sizeof *a);
        if (a) {
            reg.r = a;
            reg.rcap = cap;
        }
    }
    int ok = reg.nr < reg.rcap;
    if (ok) reg.r[reg.nr++] = (vend_refresher){ owner, g, fn, 0 };
    mtx_unlock(&reg.mu);
    if (ok) return W2L_OK;
    w2l__free(g);
    return w2l__fail(err, W2L_NOMEM, "out of memory");
}

void w2l__vend_detach(const void *owner)
{
    call_once(&reg_once, reg_init);
    mtx_lock(&reg.mu);
    for (size_t i = 0; i < reg.nr;) {
        if (reg.r[i].owner != owner) {
            i++;
            continue;
        }
        if (reg.r[i].busy) { /* its refresh in flight calls into it: wait */
            cnd_wait(&reg.cv, &reg.mu);
            i = 0;
            continue;
        }
        w2l__free(reg.r[i].group);
        reg.r[i] = reg.r[--reg.nr];
    }
    mtx_unlock(&reg.mu);
}

w2l_rc w2l__vend_put(const char *group, const char *prefix, const char *ns, const char *table,
                     const char *hint, const w2l__aws_cred *cred, const char *region,
                     w2l_error *err)
{
    call_once(&reg_once, reg_init);
    if (!group || !prefix || !ns || !table || !cred || !cred->access_key || !cred->secret_key)
        return w2l__fail(err, W2L_MISUSE, "w2l__vend_put: missing argument");
    if (region && strlen(region) >= sizeof ((vend_entry *)0)->region)
        return w2l__fail(err, W2L_CONFIG, "vended credentials of %s.%s: region too long", ns,
                         table);
    w2l__aws_cred c;
    W2L_TRY(copy_cred(&c, cred, err));
    char *p = norm_prefix(prefix), *h = hint ? w2l__strdup(hint) : NULL;
    if (!p || (hint && !h)) {
        w2l__free(p);
        w2l__free(h);
        w2l__aws_cred_clear(&c);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    mtx_lock(&reg.mu);
    vend_entry *e = NULL;
    for (size_t i = 0; i < reg.n && !e; i++)
        if (strcmp(reg.e[i]->group, group) == 0 && strcmp(reg.e[i]->prefix, p) == 0) e = reg.e[i];
    w2l_rc rc = W2L_OK;
    if (!e) {
        e = w2l__calloc(1, sizeof *e);
        char *g = e ? w2l__strdup(group) : NULL;
        char *n = e ? w2l__strdup(ns) : NULL, *t = e ? w2l__strdup(table) : NULL;
        if (reg.n == reg.cap && e) {
            size_t cap = reg.cap ? reg.cap * 2 : 16;
            vend_entry **a = w2l__realloc(reg.e, cap * sizeof *a);
            if (a) {
                reg.e = a;
                reg.cap = cap;
            }
        }
        if (!e || !g || !n || !t || reg.n == reg.cap) {
            w2l__free(g);
            w2l__free(n);
            w2l__free(t);
            w2l__free(e);
            e = NULL;
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        } else {
            e->group = g;
            e->prefix = p;
            p = NULL;
            e->ns = n;
            e->table = t;
            reg.e[reg.n++] = e;
        }
    }
    if (e) {
        w2l__aws_cred_clear(&e->cred);
        e->cred = c;
        memset(&c, 0, sizeof c);
        w2l__free(e->hint);
        e->hint = h;
        h = NULL;
        snprintf(e->region, sizeof e->region, "%s", region ? region : "");
        e->got_ms = w2l__now_ms();
        e->gen++;
        e->seq = ++reg.seq;
        w2l__log(W2L_LOG_DEBUG, "vended credentials for %s.%s under %s%s", ns, table, e->prefix,
                 cred->expires_ms ? " (expiring)" : "");
    }
    mtx_unlock(&reg.mu);
    w2l__aws_cred_clear(&c);
    w2l__free(p);
    w2l__free(h);
    return rc;
}

void w2l__vend_reset(void)
{
    call_once(&reg_once, reg_init);
    mtx_lock(&reg.mu);
    for (size_t i = 0; i < reg.n; i++) entry_free(reg.e[i]);
    w2l__free(reg.e);
    reg.e = NULL;
    reg.n = reg.cap = 0;
    if (!reg.nr) { /* refreshers are the catalogs' to detach; their array goes once empty */
        w2l__free(reg.r);
        reg.r = NULL;
        reg.rcap = 0;
    }
    mtx_unlock(&reg.mu);
}

size_t w2l__vend_count(void)
{
    call_once(&reg_once, reg_init);
    mtx_lock(&reg.mu);
    size_t n = reg.n;
    mtx_unlock(&reg.mu);
    return n;
}

/* Does prefix p hold object o ("bucket/key")? At a '/' boundary only. */
static int holds(const char *p, const char *o)
{
    size_t n = strlen(p);
    return strncmp(p, o, n) == 0 && (o[n] == '\0' || o[n] == '/');
}

static vend_entry *best(const char *obj)
{
    vend_entry *b = NULL;
    size_t blen = 0;
    for (size_t i = 0; i < reg.n; i++) {
        vend_entry *e = reg.e[i];
        size_t l = strlen(e->prefix);
        if (!holds(e->prefix, obj)) continue;
        if (!b || l > blen || (l == blen && e->seq > b->seq)) {
            b = e;
            blen = l;
        }
    }
    return b;
}

static int due(const vend_entry *e, int64_t now)
{
    if (!e->cred.expires_ms) return 0;
    int64_t margin = (e->cred.expires_ms - e->got_ms) / 2;
    if (margin > REFRESH_MAX_MS) margin = REFRESH_MAX_MS;
    if (margin < 0) margin = 0;
    return now >= e->cred.expires_ms - margin;
}

static vend_refresher *refresher_of(const char *group)
{
    for (size_t i = 0; i < reg.nr; i++)
        if (strcmp(reg.r[i].group, group) == 0) return &reg.r[i];
    return NULL;
}

w2l_rc w2l__vend_get(const char *bucket, const char *key, unsigned refused_gen,
                     w2l__vend_use *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    call_once(&reg_once, reg_init);
    mtx_lock(&reg.mu);
    size_t n = reg.n; /* none: the common case, every S3 request of a lake without them */
    mtx_unlock(&reg.mu);
    if (!n) return W2L_OK;
    char *obj = w2l__asprintf("%s/%s", bucket, key ? key : "");
    W2L_NOMEM_IF(!obj, err);
    w2l_rc rc = W2L_OK;
    int refreshed = 0;
    mtx_lock(&reg.mu);
    for (;;) {
        vend_entry *e = reg.n ? best(obj) : NULL;
        if (!e) break;
        if (e->refreshing) {
            cnd_wait(&reg.cv, &reg.mu);
            continue;
        }
        int refused = refused_gen && refused_gen == e->gen;
        int64_t now = w2l__now_ms();
        vend_refresher *r = refresher_of(e->group);
        if (!refreshed && (due(e, now) || refused) && r) {
            const void *owner = r->owner;
            w2l__vend_refresh_fn fn = r->fn;
            char *hint = e->hint ? w2l__strdup(e->hint) : NULL; /* a put replaces it */
            if (e->hint && !hint) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            r->busy++; /* r moves when others detach: found again by owner below */
            e->refreshing = 1;
            mtx_unlock(&reg.mu);
            w2l__log(W2L_LOG_DEBUG, "vended credentials of %s.%s: %s, loading the table again",
                     e->ns, e->table, refused ? "refused by the store" : "expiring");
            rc = fn(owner, e->ns, e->table, hint, err);
            w2l__free(hint);
            mtx_lock(&reg.mu);
            for (size_t i = 0; i < reg.nr; i++)
                if (reg.r[i].owner == owner && reg.r[i].busy) {
                    reg.r[i].busy--;
                    break;
                }
            e->refreshing = 0;
            cnd_broadcast(&reg.cv);
            if (rc != W2L_OK) {
                if (!refused && e->cred.expires_ms && w2l__now_ms() < e->cred.expires_ms) {
                    /* the current ones still work for a while: use them, try again later */
                    w2l__log(W2L_LOG_WARN, "%s; using the current ones until they expire",
                             err ? err->msg : "refresh failed");
                    rc = W2L_OK;
                } else {
                    if (err) err->flags |= W2L_ERR_RETRIABLE;
                    break;
                }
            }
            refreshed = 1;
            continue; /* the refresher may have put under another prefix */
        }
        if (!refreshed && !r && e->cred.expires_ms && now >= e->cred.expires_ms) {
            rc = w2l__fail(err, W2L_UNAVAILABLE,
                           "vended credentials of table %s.%s (under s3://%s) expired, and no "
                           "catalog is open to refresh them", e->ns, e->table, e->prefix);
            break;
        }
        rc = copy_cred(&out->cred, &e->cred, err);
        if (rc == W2L_OK) {
            out->found = 1;
            out->gen = e->gen;
            memcpy(out->region, e->region, sizeof out->region);
        }
        break;
    }
    mtx_unlock(&reg.mu);
    w2l__free(obj);
    return rc;
}
