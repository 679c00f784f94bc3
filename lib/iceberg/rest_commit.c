/*
 * The "rest" catalog's commits (rest.h): one table's CommitTableRequest, POSTed to the
 * table, and several tables' CommitTransactionRequest, POSTed to
 * /v1/{prefix}/transactions/commit, each settled by reloading the table(s) when the
 * outcome is unknown. catalog_rest.c says what each answer means for the caller.
 */
#include <string.h>

#include "rest.h"

enum {
    COMMIT_TRIES = 4, /* POSTs of one commit while the table stays at the base */
};

/* Does the table as loaded (LoadTableResult) hold the change from base to next? The
 * snapshot the change adds is there; or, adding none, no schema, spec, sort order,
 * location or property differs from next. */
static int holds(const w2l__json *loaded, const w2l__json *base, const w2l__json *next)
{
    const w2l__json *m = w2l__json_get(loaded, "metadata");
    if (!m) return 0;
    if (!base) { /* a create: the table is ours when it has our (random) uuid */
        const char *u = w2l__json_str(w2l__json_get(m, "table-uuid"));
        const char *nu = w2l__json_str(w2l__json_get(next, "table-uuid"));
        if (!u || !nu || strcmp(u, nu) != 0) return 0;
    }
    int64_t sid = w2l__rest_added_snapshot(base, next);
    if (sid >= 0) return w2l__rest_has_snapshot(m, sid);
    w2l__json *req = NULL, *upd = NULL;
    w2l_error e2;
    if (w2l__rest_diff(m, next, &req, &upd, &e2) != W2L_OK) return 0;
    int left = 0;
    for (const w2l__json *u = w2l__json_first(upd); u; u = w2l__json_next(u)) {
        const char *a = w2l__json_str(w2l__json_get(u, "action"));
        if (a && !strstr(a, "snapshot")) { /* another writer's snapshots: fine */
            left = 1;
            w2l__log(W2L_LOG_DEBUG, "rest catalog: the table differs from the commit: %s", a);
        }
    }
    w2l__json_free(req);
    w2l__json_free(upd);
    return !left;
}

/* The CommitTableRequest object of the change from basej (NULL: a create) to next. */
static w2l_rc commit_obj(const char *ns, const char *table, const w2l__json *basej,
                         const w2l__json *next, w2l__json **out, w2l_error *err)
{
    w2l__json *req = NULL, *upd = NULL;
    *out = NULL;
    W2L_TRY(w2l__rest_diff(basej, next, &req, &upd, err));
    w2l__json *body = w2l__json_new_object();
    int bad = !body;
    bad = bad || w2l__json_add(body, "identifier", w2l__rest_identifier(ns, table)) != 0;
    bad = bad || w2l__json_add(body, "requirements", req) != 0;
    req = NULL; /* owned by body, or freed by the failed add */
    bad = bad || w2l__json_add(body, "updates", upd) != 0;
    upd = NULL;
    w2l__json_free(req);
    w2l__json_free(upd);
    if (bad) {
        w2l__json_free(body);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *out = body;
    return W2L_OK;
}

/* The CommitTableRequest text of the change from basej (NULL: a create) to next. */
static w2l_rc commit_body(const char *ns, const char *table, const w2l__json *basej,
                          const w2l__json *next, char **text, w2l_error *err)
{
    w2l__json *body;
    W2L_TRY(commit_obj(ns, table, basej, next, &body, err));
    *text = w2l__json_print(body, 0);
    w2l__json_free(body);
    W2L_NOMEM_IF(!*text, err);
    return W2L_OK;
}

w2l_rc w2l__rest_txn_body(const w2l__rest_change *ch, size_t n, char **text, w2l_error *err)
{
    *text = NULL;
    w2l__json *body = w2l__json_new_object(), *list = w2l__json_new_array();
    w2l_rc rc = body && list && w2l__json_add(body, "table-changes", list) == 0
                    ? W2L_OK
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK && body) list = NULL; /* freed by the failed add */
    if (rc != W2L_OK) w2l__json_free(list);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        w2l__json *o = NULL;
        if (!ch[i].base)
            rc = w2l__fail(err, W2L_MISUSE, "rest transaction: %s.%s is a create", ch[i].ns,
                           ch[i].table);
        if (rc == W2L_OK) rc = commit_obj(ch[i].ns, ch[i].table, ch[i].base, ch[i].next, &o, err);
        if (rc == W2L_OK && w2l__json_append(list, o) != 0)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc != W2L_OK) w2l__error_prefix(err, "%s.%s: ", ch[i].ns, ch[i].table);
    }
    if (rc == W2L_OK && !(*text = w2l__json_print(body, 0)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l__json_free(body);
    return rc;
}

w2l__rest_txn_outcome w2l__rest_txn_answer(long status, const char *body, size_t len)
{
    if (status >= 200 && status <= 299) return W2L__REST_TXN_DONE;
    if (status == 405 || status == 501) return W2L__REST_TXN_REFUSED;
    if (status == 404) { /* a table of the batch is gone, or no such endpoint */
        w2l__json *j = NULL;
        w2l_error e2;
        const char *type = NULL;
        if (body && len && w2l__json_parse(body, len, &j, &e2) == W2L_OK)
            type = w2l__json_str(w2l__json_get(w2l__json_get(j, "error"), "type"));
        int table = type && (strcmp(type, "NoSuchTableException") == 0 ||
                             strcmp(type, "NoSuchNamespaceException") == 0);
        w2l__json_free(j);
        return table ? W2L__REST_TXN_CONFLICT : W2L__REST_TXN_REFUSED;
    }
    if (status == 409) return W2L__REST_TXN_CONFLICT;
    if (status == 0 || status >= 500) return W2L__REST_TXN_UNKNOWN;
    return W2L__REST_TXN_FAILED;
}

/* After a POST whose outcome is unknown or refused (why): reloads the table and decides.
 * W2L_OK with new_location set: it landed; W2L_AGAIN: nothing landed and the table did not
 * move, the same POST may go again; else the error to return. */
static w2l_rc settle(w2l__rest_catalog *c, const char *ns, const char *table, const char *base,
                     const w2l__json *basej, const w2l__json *next, const w2l_error *why,
                     w2l_buf *new_location, w2l_error *err)
{
    w2l_buf cur = {0};
    w2l__json *loaded = NULL;
    w2l_rc rc = w2l__rest_load(c, ns, table, &cur, &loaded, err);
    if (rc == W2L_OK && holds(loaded, basej, next)) {
        w2l__log(W2L_LOG_INFO, "rest commit %s.%s: committed (%s)", ns, table, why->msg);
        rc = w2l_buf_append(new_location, cur.data, cur.len, err);
    } else if ((rc == W2L_OK && base && strcmp((const char *)cur.data, base) == 0) ||
               (rc == W2L_NOTFOUND && !base)) {
        rc = W2L_AGAIN;
    } else if (rc == W2L_OK && !base) {
        rc = w2l__fail(err, W2L_EXISTS, "table %s.%s exists", ns, table);
    } else if (rc == W2L_OK) {
        rc = w2l__fail(err, W2L_CONFLICT,
                       "commit %s.%s: %s; another writer committed first (the table is at %s)",
                       ns, table, why->msg, (const char *)cur.data);
    } else {
        w2l__error_prefix(err, "commit %s.%s: outcome unknown (%s), and reloading failed: ", ns,
                          table, why->msg);
        rc = err->code = W2L_UNAVAILABLE;
        err->flags |= W2L_ERR_RETRIABLE;
    }
    w2l__json_free(loaded);
    w2l_buf_release(&cur);
    return rc;
}

w2l_rc w2l__rest_commit_table(w2l_catalog *self, const char *ns, const char *table,
                              const char *base, const char *metadata, size_t len,
                              w2l_buf *new_location, w2l_error *err)
{
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
    W2L_TRY(w2l__rest_need(c, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
    w2l__json *next = NULL, *basej = NULL;
    char *text = NULL;
    w2l_buf path = {0};
    w2l_rc rc = w2l__json_parse(metadata, len, &next, err);
    if (rc == W2L_OK && base) {
        void *data = NULL;
        size_t blen = 0;
        rc = w2l_fileio_read_all(c->io, w2l__ice_local_path(base), &data, &blen, err);
        if (rc == W2L_OK) rc = w2l__json_parse(data, blen, &basej, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "rest commit %s.%s: base %s: ", ns, table, base);
        w2l__free(data);
    } else if (rc == W2L_OK) {
        rc = w2l__rest_ensure_namespace(c, ns, err);
    }
    if (rc == W2L_OK) rc = commit_body(ns, table, basej, next, &text, err);
    if (rc == W2L_OK) rc = w2l__rest_path(c, &path, ns, table, 1, err);
    int unknown = 0; /* an earlier POST of this commit may have landed */
    for (int attempt = 1; rc == W2L_OK; attempt++) {
        w2l__rest_call k = {.method = "POST", .path = (const char *)path.data, .body = text};
        rc = w2l__rest_do(c, &k, err);
        w2l_error why = *err;
        if (rc == W2L_OK && k.status >= 200 && k.status <= 299) {
            w2l__json *ans = NULL;
            w2l_error e2;
            const char *loc = NULL;
            if (w2l__json_parse((const char *)k.answer.data, k.answer.len, &ans, &e2) == W2L_OK)
                loc = w2l__json_str(w2l__json_get(ans, "metadata-location"));
            /* a table just made: its load carries the credentials for its files */
            rc = loc ? w2l_buf_append(new_location, loc, strlen(loc), err)
                     : w2l__rest_load(c, ns, table, new_location, NULL, err);
            if (rc == W2L_OK && loc && !base && c->delegation)
                rc = w2l__rest_load(c, ns, table, NULL, NULL, err);
            w2l__json_free(ans);
        } else if (rc == W2L_OK && k.status != 409 && k.status < 500) {
            rc = w2l__rest_fail(err, k.method, k.path, k.status, (const char *)k.answer.data,
                                k.answer.len);
        } else if (rc == W2L_OK || (rc == W2L_UNAVAILABLE && (k.unknown || unknown))) {
            /* 409 (maybe our own earlier try), 5xx, or no answer: what is there now? */
            if (rc == W2L_OK)
                w2l__rest_fail(&why, k.method, k.path, k.status, (const char *)k.answer.data,
                               k.answer.len);
            unknown |= k.status != 409;
            rc = settle(c, ns, table, base, basej, next, &why, new_location, err);
            if (rc == W2L_AGAIN && (k.status == 409 || attempt >= COMMIT_TRIES)) {
                *err = why; /* certainly not committed */
                rc = k.status == 409 ? W2L_CONFLICT : W2L_UNAVAILABLE;
            } else if (rc == W2L_AGAIN) {
                w2l__log(W2L_LOG_WARN, "rest commit %s.%s: not committed (%s); again", ns, table,
                         why.msg);
                w2l__rest_pause_ms(100L << attempt);
                rc = W2L_OK;
                w2l_buf_release(&k.answer);
                continue;
            }
        }
        w2l_buf_release(&k.answer);
        break;
    }
    w2l_buf_release(&path);
    w2l__free(text);
    w2l__json_free(next);
    w2l__json_free(basej);
    return rc;
}

/* ------------------------------------------------------- transactions ---- */

/* Is the table as loaded exactly the commit from base to next: its current snapshot the
 * one the commit adds (or, adding none, holds)? */
static int is_current(const w2l__json *loaded, const w2l__json *base, const w2l__json *next)
{
    int64_t sid = w2l__rest_added_snapshot(base, next), cur = -1;
    if (sid < 0) return holds(loaded, base, next);
    const w2l__json *m = w2l__json_get(loaded, "metadata");
    return w2l__json_int64(w2l__json_get(m, "current-snapshot-id"), &cur) == 0 && cur == sid;
}

enum { LANDED = 1, AT_BASE, MOVED, GONE, UNSURE };

/* Where item i stands after a refused or unanswered transaction: reloaded, LANDED (our
 * change is there: new_location set), AT_BASE, MOVED (another writer), GONE, or UNSURE
 * (the reload failed: it->err). */
static int txn_where(w2l__rest_catalog *c, w2l_catalog_commit *it, const w2l__rest_change *ch)
{
    w2l_buf cur = {0};
    w2l__json *loaded = NULL;
    w2l_rc rc = w2l__rest_load(c, it->ns, it->table, &cur, &loaded, &it->err);
    int where = UNSURE;
    if (rc == W2L_OK && holds(loaded, ch->base, ch->next)) {
        it->new_location.len = 0;
        where = w2l_buf_append(&it->new_location, cur.data, cur.len, &it->err) == W2L_OK
                    ? LANDED
                    : UNSURE;
    } else if (rc == W2L_OK) {
        where = strcmp((const char *)cur.data, it->base) == 0 ? AT_BASE : MOVED;
    } else if (rc == W2L_NOTFOUND) {
        where = GONE;
    }
    w2l__json_free(loaded);
    w2l_buf_release(&cur);
    return where;
}

/* POST /v1/{prefix}/transactions/commit: every table's requirements and updates in one
 * CommitTransactionRequest; the server applies all or none. Outcomes:
 *   204      committed: each table is loaded for its new metadata location (its current
 *            snapshot must be ours; moved on already → W2L_UNAVAILABLE, left to a reload);
 *   404/405/501 (not a table's 404), or the endpoint not listed
 *            the server offers none: W2L_NOTFOUND, nothing applied;
 *   409, or 404 naming a table
 *            nothing applied (or an earlier try of ours landed, its answer lost): each table
 *            is reloaded; ours there → committed, gone → W2L_NOTFOUND, else W2L_CONFLICT;
 *   5xx, timeout, reset
 *            unknown: each table is reloaded; all at the base → the POST goes again
 *            (COMMIT_TRIES in all); ours there → committed; if only some landed (the spec
 *            says it cannot be, but a server might), the others are committed one by one;
 *            a reload that fails → W2L_UNAVAILABLE for that table (its files kept). */
w2l_rc w2l__rest_commit_tables(w2l_catalog *self, w2l_catalog_commit *items, size_t n,
                              w2l_error *err)
{
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
    w2l_rc rc = w2l__rest_need(c, "POST /v1/{prefix}/transactions/commit", err);
    if (rc != W2L_OK) return err->code = W2L_NOTFOUND;
    w2l__rest_change *ch = w2l__calloc(n + 1, sizeof *ch);
    int *where = w2l__calloc(n + 1, sizeof *where);
    W2L_NOMEM_IF(!ch || !where, err);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        w2l_catalog_commit *it = &items[i];
        w2l__json *b = NULL, *nx = NULL;
        void *data = NULL;
        size_t blen = 0;
        ch[i].ns = it->ns;
        ch[i].table = it->table;
        rc = w2l__json_parse(it->metadata, it->len, &nx, err);
        if (rc == W2L_OK && it->base)
            rc = w2l_fileio_read_all(c->io, w2l__ice_local_path(it->base), &data, &blen, err);
        if (rc == W2L_OK && it->base) rc = w2l__json_parse(data, blen, &b, err);
        if (rc != W2L_OK)
            w2l__error_prefix(err, "rest transaction %s.%s: base %s: ", it->ns, it->table,
                              it->base ? it->base : "(none)");
        w2l__free(data);
        ch[i].base = b;
        ch[i].next = nx;
    }
    char *text = NULL, *path = NULL;
    if (rc == W2L_OK) rc = w2l__rest_txn_body(ch, n, &text, err);
    if (rc == W2L_OK &&
        !(path = w2l__asprintf("/v1/%s%stransactions/commit", c->prefix, *c->prefix ? "/" : "")))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (int attempt = 1; rc == W2L_OK; attempt++) {
        w2l__rest_call k = {.method = "POST", .path = path, .body = text};
        rc = w2l__rest_do(c, &k, err);
        if (rc != W2L_OK && !(rc == W2L_UNAVAILABLE && k.unknown)) break;
        w2l_error why = *err;
        if (rc == W2L_OK && k.status != 0)
            w2l__rest_fail(&why, k.method, k.path, k.status, (const char *)k.answer.data,
                           k.answer.len);
        w2l__rest_txn_outcome o = rc == W2L_OK ? w2l__rest_txn_answer(k.status,
                                                     (const char *)k.answer.data, k.answer.len)
                                               : W2L__REST_TXN_UNKNOWN;
        rc = W2L_OK;
        w2l_buf_release(&k.answer);
        if (o == W2L__REST_TXN_REFUSED) {
            *err = why;
            rc = err->code = W2L_NOTFOUND;
            break;
        }
        if (o == W2L__REST_TXN_FAILED) {
            *err = why;
            rc = why.code;
            break;
        }
        if (o == W2L__REST_TXN_DONE) {
            for (size_t i = 0; i < n; i++) {
                w2l_catalog_commit *it = &items[i];
                w2l__json *loaded = NULL;
                it->new_location.len = 0;
                it->rc = w2l__rest_load(c, it->ns, it->table, &it->new_location, &loaded, &it->err);
                if (it->rc != W2L_OK) { /* committed, but where is unknown */
                    w2l__error_prefix(&it->err, "committed in a transaction, then: ");
                    it->rc = it->err.code = W2L_UNAVAILABLE;
                } else if (!is_current(loaded, ch[i].base, ch[i].next)) {
                    /* another writer committed on top before the load: the location is
                     * not the metadata of our commit */
                    it->rc = w2l__fail(&it->err, W2L_UNAVAILABLE,
                                       "commit %s.%s: committed in a transaction, but the "
                                       "table moved on before its new location was read",
                                       it->ns, it->table);
                }
                w2l__json_free(loaded);
            }
            break;
        }
        size_t landed = 0, at_base = 0;
        for (size_t i = 0; i < n; i++) {
            where[i] = txn_where(c, &items[i], &ch[i]);
            landed += where[i] == LANDED;
            at_base += where[i] == AT_BASE;
        }
        if (o == W2L__REST_TXN_UNKNOWN && at_base == n && attempt < COMMIT_TRIES) {
            w2l__log(W2L_LOG_WARN, "rest transaction of %zu tables: not committed (%s); again",
                     n, why.msg);
            w2l__rest_pause_ms(100L << attempt);
            continue;
        }
        w2l__log(landed ? W2L_LOG_INFO : W2L_LOG_DEBUG,
                 "rest transaction of %zu tables: %s; %zu landed, %zu at their base", n,
                 why.msg, landed, at_base);
        for (size_t i = 0; i < n; i++) {
            w2l_catalog_commit *it = &items[i];
            switch (where[i]) {
            case LANDED: it->rc = W2L_OK; break;
            case GONE:
                it->rc = w2l__fail(&it->err, W2L_NOTFOUND, "table %s.%s not found (%s)", it->ns,
                                   it->table, why.msg);
                break;
            case UNSURE:
                w2l__error_prefix(&it->err, "commit %s.%s: outcome unknown (%s), and reloading "
                                  "failed: ", it->ns, it->table, why.msg);
                it->rc = it->err.code = W2L_UNAVAILABLE;
                it->err.flags |= W2L_ERR_RETRIABLE;
                break;
            case AT_BASE:
                if (landed) { /* others of the batch landed: this one alone */
                    w2l__log(W2L_LOG_WARN, "rest transaction: %s.%s did not land with the "
                             "others; committed alone", it->ns, it->table);
                    it->new_location.len = 0;
                    it->rc = w2l__rest_commit_table(self, it->ns, it->table, it->base, it->metadata,
                                                    it->len, &it->new_location, &it->err);
                    break;
                }
                if (o == W2L__REST_TXN_UNKNOWN) { /* tried COMMIT_TRIES times */
                    it->err = why;
                    it->rc = it->err.code = W2L_UNAVAILABLE;
                    it->err.flags |= W2L_ERR_RETRIABLE;
                    break;
                }
                /* a requirement of another table failed: a conflict, as below */
                it->rc = w2l__fail(&it->err, W2L_CONFLICT,
                                   "commit %s.%s in a transaction of %zu tables: %s", it->ns,
                                   it->table, n, why.msg);
                break;
            default:
                it->rc = w2l__fail(&it->err, W2L_CONFLICT,
                                   "commit %s.%s in a transaction of %zu tables: %s", it->ns,
                                   it->table, n, why.msg);
            }
        }
        break;
    }
    for (size_t i = 0; i < n; i++) {
        w2l__json_free((w2l__json *)ch[i].base);
        w2l__json_free((w2l__json *)ch[i].next);
    }
    w2l__free(ch);
    w2l__free(where);
    w2l__free(text);
    w2l__free(path);
    return rc;
}
