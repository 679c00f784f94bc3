/*
 * The "rest" catalog: tables kept by a server speaking the Iceberg REST catalog protocol
 * (w2l-catalogs(7)), through lib/io/http.c. URI: rest:http[s]://HOST[:PORT][/PATH], the
 * part before "/v1/". Keys (w2l-config(5)): catalog.warehouse, catalog.credential
 * (ID:SECRET, OAuth2 client credentials), catalog.token, catalog.oauth2-server-uri,
 * catalog.scope, catalog.headers ("Name: value; Name: value"), catalog.rest.sigv4-enabled,
 * catalog.rest.signing-region, catalog.rest.signing-name (AWS Signature Version 4 with the
 * credentials of the S3 file IO's chain instead of a token: Glue "glue", S3 Tables
 * "s3tables").
 *
 * Open: an OAuth2 token when a credential is set, then GET /v1/config?warehouse=W, whose
 * "overrides" win over the keys and the keys over its "defaults" (the "prefix" of every
 * path, the "warehouse"); when it lists "endpoints", only those are called.
 *
 * Namespaces: a library namespace "a.b" is the multi-level namespace [a, b] ("a%1Fb" in
 * paths); a missing one is made (each level) before a table is created or renamed into it.
 *
 * Commit: the library hands the base metadata location and the whole next metadata; the
 * base is read through the file IO and the REST requirements and updates come from the two
 * (rest_update.c), POSTed to the table; the server writes the metadata file and answers
 * its location. A create is the same POST with assert-create. Outcomes:
 *   200      committed;
 *   409      a requirement failed, or an earlier try of ours landed (a request the HTTP
 *            layer sent again on a fresh connection after the reused one died without an
 *            answer, a lost answer): the table is reloaded and holds our change →
 *            committed, else W2L_CONFLICT (W2L_EXISTS for a create; the committer reloads
 *            and retries);
 *   5xx, timeout, reset
 *            the state is unknown: the table is reloaded; our change there → committed;
 *            the table still at the base → the POST is sent again (the requirements make a
 *            second landing impossible); moved on without it → W2L_CONFLICT; no answer to
 *            the reload either → W2L_UNAVAILABLE, files kept (they may be live).
 * "Our change" is the snapshot the commit adds (its random 63-bit id); a commit without a
 * snapshot (a schema or property change) is there when the reloaded metadata has no other
 * change of those against the next one; a create, when the table has our (random) uuid, and
 * a create that finds no table on reload is sent again. A POST sent again that meets its
 * own earlier landing gets a 409, settled as above.
 *
 * Multi-table commits (commit_tables, when the server lists POST
 * /v1/{prefix}/transactions/commit): the tables' CommitTableRequests in one
 * CommitTransactionRequest, applied all or none; outcomes settled per table by reloading,
 * as above (r_commit_tables says how).
 *
 * Vended credentials (catalog.access-delegation=vended-credentials): table loads send
 * X-Iceberg-Access-Delegation; the s3.* credentials of a LoadTableResult's "config" (for the
 * table's location) and of its "storage-credentials" (for each prefix) go to the process-
 * wide registry of lib/io/s3_vend.c, which every S3 file IO consults before its own
 * credentials. The registry keeps them for the process, by catalog (URI and warehouse);
 * every open handle of that catalog is attached as their refresher (detached at close): it
 * loads the table again when they near s3.session-token-expires-at-ms or the store refused
 * them. A table about to be made (its files are written before the commit that
 * creates it) is staged first (w2l__rest_stage_create: POST .../tables with stage-create,
 * which creates nothing) for the credentials of its location; its refresh stages it again
 * until the create lands (the request rides with the credentials in the registry as their
 * hint). A create is followed by a load, for the credentials.
 *
 * Requests: a pool of connections (reused), a timeout per request, reads retried with
 * backoff on 429/503 and on transport errors, any request once on a 401 after a fresh
 * token; the token is fetched again before it expires. Errors name the method, path,
 * HTTP status and the server's error type and message. Credentials, tokens and header
 * values are never logged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../common/thread.h"
#include "../io/s3.h"
#include "rest.h"

enum {
    CONNECT_TIMEOUT_MS = 10000,
    REQUEST_TIMEOUT_MS = 60000,
    READ_TRIES = 5,      /* a read (or a reload that settles a commit) */
    COMMIT_TRIES = 4,    /* POSTs of one commit while the table stays at the base */
    MAX_HEADERS = 16,
};
#define MAX_ANSWER ((size_t)512 << 20)

typedef struct rest_catalog {
    w2l_catalog base;
    w2l_fileio *io;
    w2l__http *http;
    char *uri;        /* without a trailing '/' */
    char *warehouse;  /* catalog.warehouse, NULL when none */
    char *prefix;     /* path prefix from the config ("" none), ends without '/' */
    char *credential; /* ID:SECRET */
    char *oauth_uri, *scope;
    char *headers_text; /* catalog.headers, split in place */
    w2l__http_header extra[MAX_HEADERS];
    size_t nextra;
    char **endpoints; /* "METHOD /v1/{prefix}/..." the server lists; NULL: all */
    size_t nendpoints;
    int listed;
    mtx_t mu; /* the token */
    int have_mu;
    char *token;
    int64_t token_expires_ms; /* 0: no expiry known */
    /* SigV4 (catalog.rest.sigv4-enabled): credentials of the AWS chain */
    w2l__cred_chain *aws;
    char *sign_region, *sign_name;
    char *delegation; /* catalog.access-delegation: "vended-credentials", NULL none */
    char *group;      /* "URI warehouse": whose credentials, in lib/io/s3_vend.c */
    int attached;     /* a refresher of the group's credentials */
    char *host;      /* of uri: "glue.us-east-1.amazonaws.com" */
    char *base_path; /* of uri, "" or "/iceberg" */
} rest_catalog;

/* ------------------------------------------------------------- helpers ---- */

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void free_str(char **p)
{
    if (*p) { /* secrets are overwritten before they go back to the allocator */
        memset(*p, 0, strlen(*p));
        w2l__free(*p);
        *p = NULL;
    }
}

static const char *conf_str(const w2l_conf *conf, const char *key)
{
    const char *v = NULL;
    if (conf && w2l_conf_get(conf, key, &v, NULL) == W2L_OK && v && *v) return v;
    return NULL;
}

/* Appends s form- or path-encoded (everything but A-Z a-z 0-9 - . _ ~ as %XX). */
static w2l_rc enc(w2l_buf *b, const char *s, w2l_error *err)
{
    return w2l__aws_uri_encode(b, s, strlen(s), 0, err);
}

/* The path form of a namespace: its '.'-separated levels encoded, joined by %1F. */
static w2l_rc enc_ns(w2l_buf *b, const char *ns, w2l_error *err)
{
    for (const char *p = ns;;) {
        size_t n = strcspn(p, ".");
        W2L_TRY(w2l__aws_uri_encode(b, p, n, 0, err));
        if (!p[n]) return W2L_OK;
        W2L_TRY(w2l_buf_append(b, "%1F", 3, err));
        p += n + 1;
    }
}

/* A JSON array of the namespace's levels. */
static w2l__json *ns_array(const char *ns)
{
    w2l__json *a = w2l__json_new_array();
    for (const char *p = ns; a;) {
        size_t n = strcspn(p, ".");
        if (w2l__json_append(a, w2l__json_new_stringn(p, n)) != 0) {
            w2l__json_free(a);
            return NULL;
        }
        if (!p[n]) break;
        p += n + 1;
    }
    return a;
}

/* {"namespace":[..],"name":table} */
static w2l__json *identifier(const char *ns, const char *table)
{
    w2l__json *o = w2l__json_new_object();
    if (o && (w2l__json_add(o, "namespace", ns_array(ns)) != 0 ||
              w2l__json_add(o, "name", w2l__json_new_string(table)) != 0)) {
        w2l__json_free(o);
        return NULL;
    }
    return o;
}

/* "/v1/PREFIX/namespaces/NS[/tables[/TABLE]]" (the part after the base URI) into b. */
static w2l_rc path_of(rest_catalog *c, w2l_buf *b, const char *ns, const char *table,
                      int tables, w2l_error *err)
{
    b->len = 0;
    W2L_TRY(w2l_buf_append(b, "/v1/", 4, err));
    if (*c->prefix) {
        W2L_TRY(w2l_buf_append(b, c->prefix, strlen(c->prefix), err));
        W2L_TRY(w2l_buf_append(b, "/", 1, err));
    }
    W2L_TRY(w2l_buf_append(b, "namespaces", 10, err));
    if (ns) {
        W2L_TRY(w2l_buf_append(b, "/", 1, err));
        W2L_TRY(enc_ns(b, ns, err));
    }
    if (tables) W2L_TRY(w2l_buf_append(b, "/tables", 7, err));
    if (table) {
        W2L_TRY(w2l_buf_append(b, "/", 1, err));
        W2L_TRY(enc(b, table, err));
    }
    return w2l__buf_cstr(b, err);
}

/* May the endpoint ("POST /v1/{prefix}/tables/rename") be called? */
static w2l_rc need(rest_catalog *c, const char *endpoint, w2l_error *err)
{
    if (!c->listed) return W2L_OK;
    for (size_t i = 0; i < c->nendpoints; i++)
        if (strcmp(c->endpoints[i], endpoint) == 0) return W2L_OK;
    return w2l__fail(err, W2L_CONFIG, "rest catalog %s: the server does not offer %s", c->uri,
                     endpoint);
}

/* ---------------------------------------------------------------- OAuth2 ---- */

/* A token for the client credential (caller holds mu). */
static w2l_rc fetch_token(rest_catalog *c, w2l_error *err)
{
    const char *colon = strchr(c->credential, ':');
    w2l_buf form = {0}, out = {0};
    w2l_rc rc = w2l_buf_append(&form, "grant_type=client_credentials&client_id=", 40, err);
    if (rc == W2L_OK)
        rc = w2l__aws_uri_encode(&form, c->credential,
                                 colon ? (size_t)(colon - c->credential) : strlen(c->credential),
                                 0, err);
    if (rc == W2L_OK && colon) rc = w2l_buf_append(&form, "&client_secret=", 15, err);
    if (rc == W2L_OK && colon) rc = enc(&form, colon + 1, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&form, "&scope=", 7, err);
    if (rc == W2L_OK) rc = enc(&form, c->scope, err);
    w2l__http_header h[MAX_HEADERS + 2] = {
        {"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
    size_t nh = 2;
    for (size_t i = 0; i < c->nextra; i++) h[nh++] = c->extra[i];
    w2l__http_resp resp;
    if (rc == W2L_OK) {
        w2l__http_req req = {.method = "POST", .url = c->oauth_uri, .headers = h,
                             .nheaders = nh, .body = form.data, .body_len = form.len,
                             .out = &out, .max_out = 1 << 20, .timeout_ms = REQUEST_TIMEOUT_MS,
                             .connect_timeout_ms = CONNECT_TIMEOUT_MS};
        rc = w2l__http_do(c->http, &req, &resp, err);
    }
    if (form.data) memset(form.data, 0, form.len);
    w2l_buf_release(&form);
    if (rc == W2L_OK && resp.transport_error)
        rc = w2l__fail(err, W2L_UNAVAILABLE, "rest catalog: token from %s: %s", c->oauth_uri,
                       resp.error);
    else if (rc == W2L_OK && resp.status != 200)
        rc = w2l__rest_fail(err, "POST", c->oauth_uri, resp.status, (const char *)out.data,
                            out.len);
    w2l__json *j = NULL;
    if (rc == W2L_OK) rc = w2l__json_parse((const char *)out.data, out.len, &j, err);
    const char *tok = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "access_token")) : NULL;
    if (rc == W2L_OK && !tok)
        rc = w2l__fail(err, W2L_CORRUPT, "rest catalog: token from %s: no access_token",
                       c->oauth_uri);
    if (rc == W2L_OK) {
        free_str(&c->token);
        c->token = w2l__strdup(tok);
        int64_t secs = 0;
        c->token_expires_ms =
            w2l__json_int64(w2l__json_get(j, "expires_in"), &secs) == 0 && secs > 0
                ? w2l__now_ms() + secs * 1000
                : 0;
        if (!c->token) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__json_free(j);
    if (out.data) memset(out.data, 0, out.len);
    w2l_buf_release(&out);
    if (rc != W2L_OK) err->flags |= rc == W2L_UNAVAILABLE ? W2L_ERR_RETRIABLE : 0;
    return rc;
}

/* "Bearer TOKEN" into auth[size], fetching a token first when there is none or it expires
 * within a tenth of its life (at least 10 s); force: a new one whatever. "" when the
 * catalog has no token. */
static w2l_rc bearer(rest_catalog *c, int force, char *auth, size_t size, w2l_error *err)
{
    auth[0] = '\0';
    mtx_lock(&c->mu);
    w2l_rc rc = W2L_OK;
    if (c->credential) {
        int64_t now = w2l__now_ms();
        int stale = !c->token || force ||
                    (c->token_expires_ms && now + 10000 >= c->token_expires_ms);
        if (stale) rc = fetch_token(c, err);
    }
    if (rc == W2L_OK && c->token) {
        int n = snprintf(auth, size, "Bearer %s", c->token);
        if (n < 0 || (size_t)n >= size)
            rc = w2l__fail(err, W2L_CONFIG, "rest catalog: token longer than %zu bytes", size);
    }
    mtx_unlock(&c->mu);
    return rc;
}

/* ------------------------------------------------------------- requests ---- */

typedef struct call {
    const char *method;
    const char *path;  /* after the base URI: "/v1/config" */
    const char *query; /* without '?', NULL none */
    const char *body;  /* JSON, NULL none */
    int idempotent;    /* retried on 429/503 and transport errors */
    int delegate;      /* a table load or create: X-Iceberg-Access-Delegation when asked */
    /* out */
    long status;     /* 0: no answer */
    int unknown;     /* no answer, and the request may have reached the server */
    w2l_buf answer;
} call;

/* ------------------------------------------------------------------ SigV4 ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The query (pairs already encoded) with its pairs sorted, as SigV4's canonical query
 * wants it; the URL sends the same text. NULL stays NULL. */
static w2l_rc sorted_query(const char *q, char **out, w2l_error *err)
{
    *out = NULL;
    if (!q) return W2L_OK;
    char *copy = w2l__strdup(q);
    size_t n = 1;
    for (const char *p = q; *p; p++) n += *p == '&';
    char **v = w2l__calloc(n, sizeof *v);
    w2l_buf b = {0};
    w2l_rc rc = copy && v ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    size_t k = 0;
    for (char *p = copy, *save = NULL, *t; rc == W2L_OK && (t = strtok_r(p, "&", &save));
         p = NULL)
        v[k++] = t;
    if (rc == W2L_OK) qsort(v, k, sizeof *v, cmp_str);
    for (size_t i = 0; rc == W2L_OK && i < k; i++) {
        if (i) rc = w2l_buf_append(&b, "&", 1, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&b, v[i], strlen(v[i]), err);
    }
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    if (rc == W2L_OK) *out = (char *)b.data;
    else w2l_buf_release(&b);
    w2l__free(v);
    w2l__free(copy);
    return rc;
}

/* The headers that sign a request with AWS Signature Version 4 for signing name and region
 * (host, x-amz-date, x-amz-content-sha256, x-amz-security-token, Authorization), appended
 * to h (room for 5 more), their texts kept in keep[5] (freed by the caller). The canonical
 * URI is the request path encoded once more, as AWS services other than S3 want it. */
static w2l_rc sign(rest_catalog *c, const char *method, const char *path, const char *query,
                   const char *body, w2l__http_header *h, size_t *nh, w2l_buf keep[5],
                   w2l_error *err)
{
    w2l__aws_cred cred = {0};
    W2L_TRY(w2l__cred_get(c->aws, &cred, NULL, err));
    char *full = w2l__asprintf("%s%s", c->base_path, path);
    w2l_rc rc = full ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = w2l__aws_uri_encode(&keep[0], full, strlen(full), 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&keep[0], err);
    w2l__free(full);
    unsigned char d[32];
    w2l__sha256(body ? body : "", body ? strlen(body) : 0, d);
    char hash[65], date[17];
    w2l__hex(d, 32, hash);
    w2l__amz_date(w2l__now_ms(), date);
    if (rc == W2L_OK) rc = w2l_buf_append(&keep[1], hash, 65, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&keep[2], date, 17, err);
    size_t n0 = *nh;
    if (rc == W2L_OK) {
        h[(*nh)++] = (w2l__http_header){"host", c->host};
        h[(*nh)++] = (w2l__http_header){"x-amz-date", (char *)keep[2].data};
        h[(*nh)++] = (w2l__http_header){"x-amz-content-sha256", (char *)keep[1].data};
        if (cred.session_token) {
            rc = w2l_buf_append(&keep[3], cred.session_token, strlen(cred.session_token) + 1,
                                err);
            if (rc == W2L_OK)
                h[(*nh)++] = (w2l__http_header){"x-amz-security-token", (char *)keep[3].data};
        }
    }
    if (rc == W2L_OK) {
        w2l__sigv4_req r = {.method = method, .canonical_uri = (char *)keep[0].data,
                            .canonical_query = query ? query : "", .headers = h + n0,
                            .nheaders = *nh - n0, .payload_hash = hash,
                            .region = c->sign_region, .service = c->sign_name,
                            .amz_date = date};
        rc = w2l__sigv4_sign(&r, &cred, &keep[4], NULL, NULL, err);
    }
    if (rc == W2L_OK) rc = w2l__buf_cstr(&keep[4], err);
    if (rc == W2L_OK) h[(*nh)++] = (w2l__http_header){"Authorization", (char *)keep[4].data};
    w2l__aws_cred_clear(&cred);
    return rc;
}

/* One request with its retries. W2L_OK when an answer came (any status: call.status);
 * W2L_UNAVAILABLE (retriable) when none did (call.unknown tells whether it may have been
 * acted on). */
static w2l_rc do_call(rest_catalog *c, call *k, w2l_error *err)
{
    char *query = NULL;
    W2L_TRY(sorted_query(k->query, &query, err));
    char *url = w2l__asprintf("%s%s%s%s", c->uri, k->path, query ? "?" : "", query ? query : "");
    if (!url) {
        w2l__free(query);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    char auth[8192];
    w2l_rc rc = W2L_OK;
    int refreshed = 0;
    long backoff = 100;
    k->status = 0;
    k->unknown = 0;
    for (int attempt = 1;; attempt++) {
        rc = bearer(c, 0, auth, sizeof auth, err);
        if (rc != W2L_OK) break;
        w2l__http_header h[MAX_HEADERS + 8];
        size_t nh = 0;
        h[nh++] = (w2l__http_header){"Accept", "application/json"};
        if (k->body) h[nh++] = (w2l__http_header){"Content-Type", "application/json"};
        if (*auth) h[nh++] = (w2l__http_header){"Authorization", auth};
        for (size_t i = 0; i < c->nextra; i++) h[nh++] = c->extra[i];
        if (k->delegate && c->delegation)
            h[nh++] = (w2l__http_header){"X-Iceberg-Access-Delegation", c->delegation};
        w2l_buf keep[5] = {{0}};
        if (c->aws) rc = sign(c, k->method, k->path, query, k->body, h, &nh, keep, err);
        if (rc != W2L_OK) {
            for (int i = 0; i < 5; i++) w2l_buf_release(&keep[i]);
            break;
        }
        k->answer.len = 0;
        w2l__http_req req = {.method = k->method, .url = url, .headers = h, .nheaders = nh,
                             .body = k->body, .body_len = k->body ? strlen(k->body) : 0,
                             .out = &k->answer, .max_out = MAX_ANSWER,
                             .timeout_ms = REQUEST_TIMEOUT_MS,
                             .connect_timeout_ms = CONNECT_TIMEOUT_MS};
        w2l__http_resp resp;
        rc = w2l__http_do(c->http, &req, &resp, err);
        for (int i = 0; i < 5; i++) w2l_buf_release(&keep[i]);
        if (rc != W2L_OK) break;
        int again = 0;
        if (resp.transport_error) {
            k->status = 0;
            k->unknown = resp.sent;
            again = k->idempotent || !resp.sent;
            rc = w2l__fail(err, W2L_UNAVAILABLE, "rest catalog: %s %s: %s", k->method, k->path,
                           resp.error);
            err->flags |= W2L_ERR_RETRIABLE;
        } else {
            k->status = resp.status;
            k->unknown = 0;
            if (resp.status == 401 && c->credential && !refreshed) {
                refreshed = 1; /* the token expired or was revoked: once with a new one */
                rc = bearer(c, 1, auth, sizeof auth, err);
                if (rc != W2L_OK) break;
                attempt--;
                continue;
            }
            again = k->idempotent && (resp.status == 429 || resp.status == 503);
            if (again) {
                long ra = atol(resp.retry_after);
                if (ra > 0) backoff = W2L_MIN(ra * 1000, 10000);
            }
        }
        if (!again || attempt >= READ_TRIES) break;
        w2l__log(W2L_LOG_DEBUG, "rest catalog: %s %s: %s, again in %ld ms", k->method,
                 k->path, k->status ? "busy" : "no answer", backoff);
        pause_ms(backoff);
        backoff = W2L_MIN(backoff * 2, 5000);
    }
    if (rc == W2L_OK && k->status == 0)
        rc = w2l__fail(err, W2L_UNAVAILABLE, "rest catalog: %s %s: no answer", k->method,
                       k->path);
    memset(auth, 0, sizeof auth);
    w2l__free(url);
    w2l__free(query);
    return rc;
}

/* do_call, then any status but 2xx as an error naming the call. *j (optional) receives the
 * parsed answer. */
static w2l_rc call_ok(rest_catalog *c, call *k, w2l__json **j, w2l_error *err)
{
    if (j) *j = NULL;
    W2L_TRY(do_call(c, k, err));
    if (k->status < 200 || k->status > 299)
        return w2l__rest_fail(err, k->method, k->path, k->status, (const char *)k->answer.data,
                              k->answer.len);
    if (!j) return W2L_OK;
    w2l_rc rc = w2l__json_parse((const char *)k->answer.data, k->answer.len, j, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "rest catalog: %s %s: ", k->method, k->path);
    return rc;
}

/* ----------------------------------------------------------------- open ---- */

static w2l_rc set_str(char **dst, const char *v, w2l_error *err)
{
    free_str(dst);
    if (!v) return W2L_OK;
    *dst = w2l__strdup(v);
    W2L_NOMEM_IF(!*dst, err);
    return W2L_OK;
}

/* catalog.headers: "Name: value; Name: value" split in place. */
static w2l_rc parse_headers(rest_catalog *c, w2l_error *err)
{
    for (char *p = c->headers_text; p && *p;) {
        char *semi = strchr(p, ';');
        if (semi) *semi = '\0';
        while (*p == ' ') p++;
        char *colon = strchr(p, ':');
        if (*p) {
            if (!colon || colon == p || c->nextra == MAX_HEADERS)
                return w2l__fail(err, W2L_CONFIG,
                                 "catalog.headers: want at most %d 'Name: value' separated "
                                 "by ';'", MAX_HEADERS);
            *colon = '\0';
            char *v = colon + 1, *e = colon - 1;
            while (e > p && *e == ' ') *e-- = '\0';
            while (*v == ' ') v++;
            for (char *t = v + strlen(v); t > v && t[-1] == ' ';) *--t = '\0';
            c->extra[c->nextra++] = (w2l__http_header){p, v};
        }
        p = semi ? semi + 1 : NULL;
    }
    return W2L_OK;
}

/* A config value: overrides, then ours, then defaults. */
static const char *pick(const w2l__json *cfg, const char *key, const char *ours)
{
    const char *o = w2l__json_str(w2l__json_get(w2l__json_get(cfg, "overrides"), key));
    if (o) return o;
    if (ours) return ours;
    return w2l__json_str(w2l__json_get(w2l__json_get(cfg, "defaults"), key));
}

static w2l_rc load_config(rest_catalog *c, w2l_error *err)
{
    w2l_buf q = {0};
    w2l_rc rc = W2L_OK;
    if (c->warehouse) {
        rc = w2l_buf_append(&q, "warehouse=", 10, err);
        if (rc == W2L_OK) rc = enc(&q, c->warehouse, err);
        if (rc == W2L_OK) rc = w2l__buf_cstr(&q, err);
    }
    call k = {.method = "GET", .path = "/v1/config", .query = c->warehouse ? (char *)q.data : NULL,
              .idempotent = 1};
    w2l__json *j = NULL;
    if (rc == W2L_OK) rc = call_ok(c, &k, &j, err);
    if (rc == W2L_OK) {
        const char *prefix = pick(j, "prefix", NULL);
        while (prefix && *prefix == '/') prefix++;
        rc = set_str(&c->prefix, prefix ? prefix : "", err);
        size_t n = c->prefix ? strlen(c->prefix) : 0;
        while (n > 0 && c->prefix[n - 1] == '/') c->prefix[--n] = '\0';
    }
    const char *wh = rc == W2L_OK ? pick(j, "warehouse", c->warehouse) : NULL;
    if (rc == W2L_OK && wh && wh != c->warehouse) rc = set_str(&c->warehouse, wh, err);
    const w2l__json *eps = rc == W2L_OK ? w2l__json_get(j, "endpoints") : NULL;
    if (eps && w2l__json_size(eps) > 0) {
        c->endpoints = w2l__calloc(w2l__json_size(eps), sizeof *c->endpoints);
        if (!c->endpoints) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (const w2l__json *e = w2l__json_first(eps); rc == W2L_OK && e;
             e = w2l__json_next(e)) {
            const char *s = w2l__json_str(e);
            if (s && !(c->endpoints[c->nendpoints++] = w2l__strdup(s)))
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        c->listed = 1;
    }
    w2l__json_free(j);
    w2l_buf_release(&k.answer);
    w2l_buf_release(&q);
    return rc;
}

/* catalog.rest.sigv4-enabled: the AWS credential chain (s3.profile), the signing region
 * (catalog.rest.signing-region, else s3.region, AWS_REGION, the profile's region) and name
 * (catalog.rest.signing-name, default execute-api). */
static w2l_rc sigv4_setup(rest_catalog *c, const w2l_conf *conf, w2l_error *err)
{
    int64_t on = 0;
    if (!conf || w2l_conf_get_int(conf, "catalog.rest.sigv4-enabled", &on, NULL) != W2L_OK ||
        !on)
        return W2L_OK;
    if (c->credential || c->token)
        return w2l__fail(err, W2L_CONFIG, "rest catalog: catalog.rest.sigv4-enabled signs "
                         "requests itself; leave catalog.credential and catalog.token unset");
    const char *h = strstr(c->uri, "://") + 3;
    size_t hl = strcspn(h, "/");
    c->host = w2l__strndup(h, hl);
    c->base_path = w2l__strdup(h + hl);
    W2L_NOMEM_IF(!c->host || !c->base_path, err);
    w2l__cred_opts o = {.profile = conf_str(conf, "s3.profile")};
    W2L_TRY(w2l__cred_chain_new(&o, c->http, &c->aws, err));
    const char *region = conf_str(conf, "catalog.rest.signing-region");
    if (!region) region = conf_str(conf, "s3.region");
    if (!region && getenv("AWS_REGION") && *getenv("AWS_REGION")) region = getenv("AWS_REGION");
    if (!region) region = w2l__cred_region(c->aws);
    if (!region)
        return w2l__fail(err, W2L_CONFIG, "rest catalog: SigV4 needs a region: set "
                         "catalog.rest.signing-region (or s3.region, AWS_REGION)");
    W2L_TRY(set_str(&c->sign_region, region, err));
    const char *name = conf_str(conf, "catalog.rest.signing-name");
    return set_str(&c->sign_name, name ? name : "execute-api", err);
}

static w2l_rc vend_refresh(const void *owner, const char *ns, const char *table,
                           const char *hint, w2l_error *err);

static void r_close(w2l_catalog *self)
{
    rest_catalog *c = (rest_catalog *)self;
    if (c->attached) w2l__vend_detach(c); /* before anything a refresh of ours uses goes */
    w2l__cred_chain_free(c->aws);
    w2l__http_free(c->http);
    for (size_t i = 0; i < c->nendpoints; i++) w2l__free(c->endpoints[i]);
    w2l__free(c->endpoints);
    free_str(&c->uri);
    free_str(&c->warehouse);
    free_str(&c->prefix);
    free_str(&c->credential);
    free_str(&c->oauth_uri);
    free_str(&c->scope);
    free_str(&c->headers_text);
    free_str(&c->token);
    free_str(&c->sign_region);
    free_str(&c->sign_name);
    free_str(&c->delegation);
    free_str(&c->group);
    free_str(&c->host);
    free_str(&c->base_path);
    if (c->have_mu) mtx_destroy(&c->mu);
}

static w2l_rc r_open(const w2l_catalog_methods *m, const w2l_conf *conf, const char *uri,
                     const char *warehouse, w2l_fileio *io, w2l_catalog *self, w2l_error *err)
{
    (void)m, (void)warehouse;
    rest_catalog *c = (rest_catalog *)self;
    if (!io) return w2l__fail(err, W2L_MISUSE, "rest catalog: needs a file IO");
    c->io = io;
    if (mtx_init(&c->mu, mtx_plain) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "rest catalog: mtx_init failed");
    c->have_mu = 1;
    const char *u = strncmp(uri, "rest:", 5) == 0 ? uri + 5 : uri;
    if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "rest catalog: URI must be rest:http[s]://HOST[:PORT][/PATH] (the part "
                         "before /v1/), not '%s'", uri);
    W2L_TRY(set_str(&c->uri, u, err));
    size_t n = strlen(c->uri);
    while (n > 0 && c->uri[n - 1] == '/') c->uri[--n] = '\0';
    if (n >= 3 && strcmp(c->uri + n - 3, "/v1") == 0) c->uri[n - 3] = '\0';
    W2L_TRY(set_str(&c->prefix, "", err));
    W2L_TRY(set_str(&c->warehouse, conf_str(conf, "catalog.warehouse"), err));
    W2L_TRY(set_str(&c->credential, conf_str(conf, "catalog.credential"), err));
    W2L_TRY(set_str(&c->token, conf_str(conf, "catalog.token"), err));
    W2L_TRY(set_str(&c->scope, conf_str(conf, "catalog.scope"), err));
    if (!c->scope) W2L_TRY(set_str(&c->scope, "PRINCIPAL_ROLE:ALL", err));
    W2L_TRY(set_str(&c->oauth_uri, conf_str(conf, "catalog.oauth2-server-uri"), err));
    if (!c->oauth_uri) {
        c->oauth_uri = w2l__asprintf("%s/v1/oauth/tokens", c->uri);
        W2L_NOMEM_IF(!c->oauth_uri, err);
    }
    W2L_TRY(set_str(&c->headers_text, conf_str(conf, "catalog.headers"), err));
    const char *del = conf_str(conf, "catalog.access-delegation");
    if (del && strcmp(del, "remote-signing") == 0)
        return w2l__fail(err, W2L_CONFIG,
                         "catalog.access-delegation: remote-signing is not supported; use "
                         "vended-credentials or none");
    if (del && strcmp(del, "none") != 0 && strcmp(del, "vended-credentials") != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "catalog.access-delegation: '%s' is none of vended-credentials, none",
                         del);
    if (del && strcmp(del, "none") != 0) W2L_TRY(set_str(&c->delegation, del, err));
    W2L_TRY(parse_headers(c, err));
    W2L_TRY(w2l__http_new(&c->http, err));
    W2L_TRY(sigv4_setup(c, conf, err));
    w2l_rc rc = load_config(c, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "opening the catalog at %s: ", c->uri);
        return rc;
    }
    c->group = w2l__asprintf("%s %s", c->uri, c->warehouse ? c->warehouse : "");
    W2L_NOMEM_IF(!c->group, err);
    W2L_TRY(w2l__vend_attach(c, c->group, vend_refresh, err));
    c->attached = 1;
    return W2L_OK;
}

static w2l_rc r_open_or_clean(const w2l_catalog_methods *m, const w2l_conf *conf,
                              const char *uri, const char *warehouse, w2l_fileio *io,
                              w2l_catalog *self, w2l_error *err)
{
    w2l_rc rc = r_open(m, conf, uri, warehouse, io, self, err);
    if (rc != W2L_OK) r_close(self);
    return rc;
}

/* ----------------------------------------------------------- namespaces ---- */

/* Makes ns and each level above it (an existing one is fine). */
static w2l_rc ensure_namespace(rest_catalog *c, const char *ns, w2l_error *err)
{
    W2L_TRY(need(c, "POST /v1/{prefix}/namespaces", err));
    w2l_buf path = {0};
    w2l_rc rc = path_of(c, &path, NULL, NULL, 0, err);
    for (const char *p = ns; rc == W2L_OK;) {
        size_t n = strcspn(p, ".");
        char *level = w2l__strndup(ns, (size_t)(p - ns) + n);
        w2l__json *body = w2l__json_new_object();
        if (!level || !body || w2l__json_add(body, "namespace", ns_array(level)) != 0 ||
            w2l__json_add(body, "properties", w2l__json_new_object()) != 0) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        char *text = rc == W2L_OK ? w2l__json_print(body, 0) : NULL;
        if (rc == W2L_OK && !text) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        call k = {.method = "POST", .path = (const char *)path.data, .body = text,
                  .idempotent = 1}; /* making it twice is a 409 */
        if (rc == W2L_OK) rc = do_call(c, &k, err);
        if (rc == W2L_OK && k.status != 409 && (k.status < 200 || k.status > 299))
            rc = w2l__rest_fail(err, k.method, k.path, k.status, (const char *)k.answer.data,
                                k.answer.len);
        w2l_buf_release(&k.answer);
        w2l__free(text);
        w2l__json_free(body);
        w2l__free(level);
        if (!p[n]) break;
        p += n + 1;
    }
    w2l_buf_release(&path);
    return rc;
}

/* --------------------------------------------------------------- tables ---- */

static w2l_rc load(rest_catalog *c, const char *ns, const char *table, w2l_buf *location,
                   w2l__json **answer, w2l_error *err);
static w2l_rc stage(rest_catalog *c, const char *ns, const char *table, const char *body,
                    w2l_error *err);

/* The refresher of our group's registry entries: the table loaded again puts fresh ones;
 * one staged (hint: its CreateTableRequest) and not made yet is staged again. */
static w2l_rc vend_refresh(const void *owner, const char *ns, const char *table,
                           const char *hint, w2l_error *err)
{
    rest_catalog *c = (rest_catalog *)owner;
    w2l_rc rc = load(c, ns, table, NULL, NULL, err);
    if (rc == W2L_NOTFOUND && hint) rc = stage(c, ns, table, hint, err);
    if (rc != W2L_OK)
        w2l__error_prefix(err, "refreshing the vended credentials of table %s.%s from the "
                          "catalog at %s: ", ns, table, c->uri);
    return rc;
}

/* s3.* credentials of a storage config object (LoadTableResult "config", or a
 * StorageCredential's) into the registry for prefix; none there is no error. */
static w2l_rc vend_put(rest_catalog *c, const char *ns, const char *table, const char *prefix,
                       const char *hint, const w2l__json *cfg, w2l_error *err)
{
    const char *ak = w2l__json_str(w2l__json_get(cfg, "s3.access-key-id"));
    const char *sk = w2l__json_str(w2l__json_get(cfg, "s3.secret-access-key"));
    if (!ak && !sk) return W2L_OK;
    if (!ak || !sk || !prefix || !*prefix)
        return w2l__fail(err, W2L_CORRUPT,
                         "rest catalog: table %s.%s: vended credentials without %s", ns, table,
                         !ak ? "s3.access-key-id" : !sk ? "s3.secret-access-key" : "a location");
    const w2l__json *exp = w2l__json_get(cfg, "s3.session-token-expires-at-ms");
    int64_t expires = 0;
    if (exp && w2l__json_int64(exp, &expires) != 0) {
        const char *t = w2l__json_str(exp);
        char *end = NULL;
        expires = t ? strtoll(t, &end, 10) : 0;
        if (!t || !*t || *end || expires < 0)
            return w2l__fail(err, W2L_CORRUPT,
                             "rest catalog: table %s.%s: s3.session-token-expires-at-ms is not "
                             "a number of milliseconds", ns, table);
    }
    w2l__aws_cred cred = {(char *)ak, (char *)sk,
                          (char *)w2l__json_str(w2l__json_get(cfg, "s3.session-token")),
                          expires}; /* borrowed: w2l__vend_put copies */
    const char *region = w2l__json_str(w2l__json_get(cfg, "s3.region"));
    if (!region) region = w2l__json_str(w2l__json_get(cfg, "client.region"));
    return w2l__vend_put(c->group, prefix, ns, table, hint, &cred, region, err);
}

/* The credentials a LoadTableResult carries: "storage-credentials" [{prefix, config}], and
 * the s3.* keys of "config" for the table's location. hint: the staging request, for a
 * staged table. */
static w2l_rc vend_all(rest_catalog *c, const char *ns, const char *table, const char *hint,
                       const w2l__json *j, w2l_error *err)
{
    const char *loc = w2l__json_str(w2l__json_get(w2l__json_get(j, "metadata"), "location"));
    w2l_rc rc = vend_put(c, ns, table, loc, hint, w2l__json_get(j, "config"), err);
    const w2l__json *sc = w2l__json_get(j, "storage-credentials");
    for (const w2l__json *e = w2l__json_first(sc); e && rc == W2L_OK; e = w2l__json_next(e)) {
        const char *p = w2l__json_str(w2l__json_get(e, "prefix"));
        if (p && (strncmp(p, "s3://", 5) == 0 || strncmp(p, "s3a://", 6) == 0 ||
                  strncmp(p, "s3n://", 6) == 0))
            rc = vend_put(c, ns, table, p, hint, w2l__json_get(e, "config"), err);
    }
    return rc;
}

/* GET the table: its metadata-location appended to location (when not NULL; kept
 * NUL-terminated) and, when answer is not NULL, its parsed answer (LoadTableResult). The
 * storage credentials it carries go to the registry. */
static w2l_rc load(rest_catalog *c, const char *ns, const char *table, w2l_buf *location,
                   w2l__json **answer, w2l_error *err)
{
    if (answer) *answer = NULL;
    W2L_TRY(need(c, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
    w2l_buf path = {0};
    w2l__json *j = NULL;
    call k = {.method = "GET", .idempotent = 1, .delegate = 1};
    w2l_rc rc = path_of(c, &path, ns, table, 1, err);
    k.path = (const char *)path.data;
    if (rc == W2L_OK) rc = call_ok(c, &k, &j, err);
    if (rc == W2L_OK) rc = vend_all(c, ns, table, NULL, j, err);
    if (rc == W2L_NOTFOUND) /* keep the server's words, say which table */
        w2l__error_prefix(err, "table %s.%s not found: ", ns, table);
    const char *loc = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "metadata-location")) : NULL;
    if (rc == W2L_OK && !loc)
        rc = w2l__fail(err, W2L_CORRUPT, "rest catalog: GET %s: no metadata-location", k.path);
    if (rc == W2L_OK && location) rc = w2l_buf_append(location, loc, strlen(loc), err);
    if (rc == W2L_OK && location) rc = w2l__buf_cstr(location, err); /* settle compares it */
    if (rc == W2L_OK && answer) {
        *answer = j;
        j = NULL;
    }
    w2l__json_free(j);
    w2l_buf_release(&k.answer);
    w2l_buf_release(&path);
    return rc;
}

/* POSTs a CreateTableRequest with stage-create (nothing is created) for its credentials. */
static w2l_rc stage(rest_catalog *c, const char *ns, const char *table, const char *body,
                    w2l_error *err)
{
    W2L_TRY(need(c, "POST /v1/{prefix}/namespaces/{namespace}/tables", err));
    w2l_buf path = {0};
    w2l__json *j = NULL;
    w2l_rc rc = path_of(c, &path, ns, NULL, 0, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&path, "/tables", 7, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&path, err);
    call k = {.method = "POST", .path = (const char *)path.data, .body = body,
              .idempotent = 1, .delegate = 1}; /* staging twice changes nothing */
    if (rc == W2L_OK) rc = call_ok(c, &k, &j, err);
    if (rc == W2L_OK) rc = vend_all(c, ns, table, body, j, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "staging table %s.%s: ", ns, table);
    w2l__json_free(j);
    w2l_buf_release(&k.answer);
    w2l_buf_release(&path);
    return rc;
}

/* A deep copy of j (NULL when out of memory). */
static w2l__json *clone(const w2l__json *j)
{
    char *text = w2l__json_print(j, 0);
    w2l__json *out = NULL;
    w2l_error e;
    if (text && w2l__json_parse(text, strlen(text), &out, &e) != W2L_OK) out = NULL;
    w2l__free(text);
    return out;
}

/* The member of array arr whose id_key equals id, else its first. */
static const w2l__json *by_id(const w2l__json *arr, const char *id_key, const w2l__json *id)
{
    int64_t want = 0, have = 0;
    int known = id && w2l__json_int64(id, &want) == 0;
    for (const w2l__json *e = w2l__json_first(arr); e && known; e = w2l__json_next(e))
        if (w2l__json_int64(w2l__json_get(e, id_key), &have) == 0 && have == want) return e;
    return w2l__json_first(arr);
}

w2l_rc w2l__rest_stage_create(w2l_catalog *cat, const char *ns, const char *table,
                              const char *metadata, size_t len, w2l_error *err)
{
    if (!cat || cat->methods != &w2l__catalog_rest) return W2L_OK;
    rest_catalog *c = (rest_catalog *)cat;
    if (!c->delegation) return W2L_OK;
    w2l__json *m = NULL, *req = NULL;
    char *body = NULL;
    w2l_rc rc = w2l__json_parse(metadata, len, &m, err);
    if (rc == W2L_OK) {
        req = w2l__json_new_object();
        /* the current schema, default spec and sort order: what a create starts from */
        const w2l__json *parts[5] = {
            w2l__json_get(m, "location"),
            by_id(w2l__json_get(m, "schemas"), "schema-id", w2l__json_get(m, "current-schema-id")),
            by_id(w2l__json_get(m, "partition-specs"), "spec-id",
                  w2l__json_get(m, "default-spec-id")),
            by_id(w2l__json_get(m, "sort-orders"), "order-id",
                  w2l__json_get(m, "default-sort-order-id")),
            w2l__json_get(m, "properties")};
        static const char *const names[5] = {"location", "schema", "partition-spec",
                                             "write-order", "properties"};
        if (!req || w2l__json_add(req, "name", w2l__json_new_string(table)) != 0)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (int i = 0; i < 5 && rc == W2L_OK; i++) {
            if (!parts[i]) continue;
            w2l__json *copy = clone(parts[i]);
            if (!copy || w2l__json_add(req, names[i], copy) != 0)
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        if (rc == W2L_OK && w2l__json_add(req, "stage-create", w2l__json_new_bool(1)) != 0)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK && !(body = w2l__json_print(req, 0)))
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK) rc = ensure_namespace(c, ns, err);
    if (rc == W2L_OK) rc = stage(c, ns, table, body, err);
    w2l__free(body);
    w2l__json_free(req);
    w2l__json_free(m);
    return rc;
}

static w2l_rc r_load(w2l_catalog *self, const char *ns, const char *table, w2l_buf *location,
                     w2l_error *err)
{
    return load((rest_catalog *)self, ns, table, location, NULL, err);
}

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
    bad = bad || w2l__json_add(body, "identifier", identifier(ns, table)) != 0;
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
static w2l_rc settle(rest_catalog *c, const char *ns, const char *table, const char *base,
                     const w2l__json *basej, const w2l__json *next, const w2l_error *why,
                     w2l_buf *new_location, w2l_error *err)
{
    w2l_buf cur = {0};
    w2l__json *loaded = NULL;
    w2l_rc rc = load(c, ns, table, &cur, &loaded, err);
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

static w2l_rc r_commit(w2l_catalog *self, const char *ns, const char *table, const char *base,
                       const char *metadata, size_t len, w2l_buf *new_location, w2l_error *err)
{
    rest_catalog *c = (rest_catalog *)self;
    W2L_TRY(need(c, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
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
        rc = ensure_namespace(c, ns, err);
    }
    if (rc == W2L_OK) rc = commit_body(ns, table, basej, next, &text, err);
    if (rc == W2L_OK) rc = path_of(c, &path, ns, table, 1, err);
    int unknown = 0; /* an earlier POST of this commit may have landed */
    for (int attempt = 1; rc == W2L_OK; attempt++) {
        call k = {.method = "POST", .path = (const char *)path.data, .body = text};
        rc = do_call(c, &k, err);
        w2l_error why = *err;
        if (rc == W2L_OK && k.status >= 200 && k.status <= 299) {
            w2l__json *ans = NULL;
            w2l_error e2;
            const char *loc = NULL;
            if (w2l__json_parse((const char *)k.answer.data, k.answer.len, &ans, &e2) == W2L_OK)
                loc = w2l__json_str(w2l__json_get(ans, "metadata-location"));
            /* a table just made: its load carries the credentials for its files */
            rc = loc ? w2l_buf_append(new_location, loc, strlen(loc), err)
                     : load(c, ns, table, new_location, NULL, err);
            if (rc == W2L_OK && loc && !base && c->delegation)
                rc = load(c, ns, table, NULL, NULL, err);
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
                pause_ms(100L << attempt);
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
static int txn_where(rest_catalog *c, w2l_catalog_commit *it, const w2l__rest_change *ch)
{
    w2l_buf cur = {0};
    w2l__json *loaded = NULL;
    w2l_rc rc = load(c, it->ns, it->table, &cur, &loaded, &it->err);
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
static w2l_rc r_commit_tables(w2l_catalog *self, w2l_catalog_commit *items, size_t n,
                              w2l_error *err)
{
    rest_catalog *c = (rest_catalog *)self;
    w2l_rc rc = need(c, "POST /v1/{prefix}/transactions/commit", err);
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
        call k = {.method = "POST", .path = path, .body = text};
        rc = do_call(c, &k, err);
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
                it->rc = load(c, it->ns, it->table, &it->new_location, &loaded, &it->err);
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
            pause_ms(100L << attempt);
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
                    it->rc = r_commit(self, it->ns, it->table, it->base, it->metadata, it->len,
                                      &it->new_location, &it->err);
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

static w2l_rc r_drop(w2l_catalog *self, const char *ns, const char *table, int purge,
                     w2l_error *err)
{
    rest_catalog *c = (rest_catalog *)self;
    W2L_TRY(need(c, "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
    w2l_buf loc = {0}, path = {0};
    w2l__ice_meta *m = NULL;
    w2l_rc rc = W2L_OK;
    if (purge) { /* what to purge, read before the table is forgotten */
        void *data = NULL;
        size_t len = 0;
        rc = w2l__catalog_load(self, ns, table, &loc, err);
        if (rc == W2L_OK)
            rc = w2l_fileio_read_all(c->io, w2l__ice_local_path((const char *)loc.data), &data,
                                     &len, err);
        if (rc == W2L_OK) rc = w2l__ice_meta_parse(data, len, &m, err);
        w2l__free(data);
    }
    call k = {.method = "DELETE", .query = "purgeRequested=false"};
    if (rc == W2L_OK) rc = path_of(c, &path, ns, table, 1, err);
    k.path = (const char *)path.data;
    if (rc == W2L_OK) rc = call_ok(c, &k, NULL, err);
    if (rc == W2L_OK && purge) {
        rc = w2l__ice_purge(c->io, m, (const char *)loc.data, err);
        const char *tl = m->location ? w2l__ice_local_path(m->location) : "";
        if (rc == W2L_OK && *tl) rc = w2l__ice_remove_tree(c->io, tl, err);
    }
    w2l__ice_meta_free(m);
    w2l_buf_release(&k.answer);
    w2l_buf_release(&path);
    w2l_buf_release(&loc);
    return rc;
}

static w2l_rc r_rename(w2l_catalog *self, const char *ns, const char *table, const char *to_ns,
                       const char *to_table, w2l_error *err)
{
    rest_catalog *c = (rest_catalog *)self;
    W2L_TRY(need(c, "POST /v1/{prefix}/tables/rename", err));
    W2L_TRY(ensure_namespace(c, to_ns, err));
    char *path = w2l__asprintf("/v1/%s%stables/rename", c->prefix, *c->prefix ? "/" : "");
    w2l__json *body = w2l__json_new_object();
    char *text = NULL;
    w2l_rc rc = W2L_OK;
    if (!path || !body || w2l__json_add(body, "source", identifier(ns, table)) != 0 ||
        w2l__json_add(body, "destination", identifier(to_ns, to_table)) != 0 ||
        !(text = w2l__json_print(body, 0)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    call k = {.method = "POST", .path = path, .body = text};
    if (rc == W2L_OK) rc = call_ok(c, &k, NULL, err);
    if (rc == W2L_CONFLICT) rc = err->code = W2L_EXISTS;
    if (rc != W2L_OK) w2l__error_prefix(err, "rename %s.%s to %s.%s: ", ns, table, to_ns, to_table);
    w2l_buf_release(&k.answer);
    w2l__free(text);
    w2l__json_free(body);
    w2l__free(path);
    return rc;
}

/* ---------------------------------------------------------------- lists ---- */

/* The levels of a namespace array joined by '.' (fresh memory). */
static char *ns_join(const w2l__json *levels)
{
    w2l_buf b = {0};
    w2l_error e2;
    for (const w2l__json *l = w2l__json_first(levels); l; l = w2l__json_next(l)) {
        const char *s = w2l__json_str(l);
        if (!s || (b.len && w2l_buf_append(&b, ".", 1, &e2) != W2L_OK) ||
            w2l_buf_append(&b, s, strlen(s), &e2) != W2L_OK ||
            w2l__buf_cstr(&b, &e2) != W2L_OK) {
            w2l_buf_release(&b);
            return NULL;
        }
    }
    if (!b.data) return w2l__strdup("");
    return (char *)b.data;
}

/* Every page of a list call: fn(ctx, element) for each element of the answer's member
 * (nonzero stops). */
static w2l_rc pages(rest_catalog *c, const char *path, const char *query, const char *member,
                    w2l_rc (*fn)(void *ctx, const w2l__json *e, int *stop, w2l_error *err),
                    void *ctx, w2l_error *err)
{
    char *token = NULL;
    w2l_rc rc = W2L_OK;
    for (int stop = 0; rc == W2L_OK && !stop;) {
        w2l_buf q = {0};
        if (query) rc = w2l_buf_append(&q, query, strlen(query), err);
        if (rc == W2L_OK && token) {
            if (q.len) rc = w2l_buf_append(&q, "&", 1, err);
            if (rc == W2L_OK) rc = w2l_buf_append(&q, "pageToken=", 10, err);
            if (rc == W2L_OK) rc = enc(&q, token, err);
        }
        if (rc == W2L_OK && q.len) rc = w2l__buf_cstr(&q, err);
        call k = {.method = "GET", .path = path, .query = q.len ? (char *)q.data : NULL,
                  .idempotent = 1};
        w2l__json *j = NULL;
        if (rc == W2L_OK) rc = call_ok(c, &k, &j, err);
        for (const w2l__json *e = w2l__json_first(w2l__json_get(j, member));
             rc == W2L_OK && e && !stop; e = w2l__json_next(e))
            rc = fn(ctx, e, &stop, err);
        const char *nt = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "next-page-token")) : NULL;
        if (nt && token && strcmp(nt, token) == 0) /* the same page again: it would not end */
            rc = w2l__fail(err, W2L_CORRUPT, "rest catalog: GET %s: next-page-token %s repeats",
                           path, nt);
        w2l__free(token);
        token = nt && *nt ? w2l__strdup(nt) : NULL;
        if (nt && *nt && !token) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (!token) stop = 1;
        w2l__json_free(j);
        w2l_buf_release(&k.answer);
        w2l_buf_release(&q);
    }
    w2l__free(token);
    return rc;
}

typedef struct lister {
    rest_catalog *c;
    int (*fn)(void *ctx, const char *ns, const char *table);
    void *ctx;
    int stopped;
    size_t depth; /* levels of the namespace being listed below */
} lister;

static w2l_rc on_table(void *ctx, const w2l__json *e, int *stop, w2l_error *err)
{
    lister *l = ctx;
    const char *name = w2l__json_str(w2l__json_get(e, "name"));
    char *ns = ns_join(w2l__json_get(e, "namespace"));
    W2L_NOMEM_IF(!ns, err);
    if (name && l->fn(l->ctx, ns, name)) *stop = l->stopped = 1;
    w2l__free(ns);
    return W2L_OK;
}

static w2l_rc list_ns_tables(lister *l, const char *ns, w2l_error *err)
{
    W2L_TRY(need(l->c, "GET /v1/{prefix}/namespaces/{namespace}/tables", err));
    w2l_buf path = {0};
    w2l_rc rc = path_of(l->c, &path, ns, NULL, 1, err);
    if (rc == W2L_OK)
        rc = pages(l->c, (const char *)path.data, NULL, "identifiers", on_table, l, err);
    w2l_buf_release(&path);
    return rc;
}

/* Tables of every namespace below parent (NULL: the top), depth first. */
static w2l_rc on_namespace(void *ctx, const w2l__json *e, int *stop, w2l_error *err);

static w2l_rc list_below(lister *l, const char *parent, w2l_error *err)
{
    W2L_TRY(need(l->c, "GET /v1/{prefix}/namespaces", err));
    w2l_buf path = {0}, q = {0};
    w2l_rc rc = path_of(l->c, &path, NULL, NULL, 0, err);
    if (rc == W2L_OK && parent) {
        rc = w2l_buf_append(&q, "parent=", 7, err);
        if (rc == W2L_OK) rc = enc_ns(&q, parent, err);
        if (rc == W2L_OK) rc = w2l__buf_cstr(&q, err);
    }
    if (rc == W2L_OK)
        rc = pages(l->c, (const char *)path.data, parent ? (const char *)q.data : NULL,
                   "namespaces", on_namespace, l, err);
    w2l_buf_release(&q);
    w2l_buf_release(&path);
    return rc;
}

static w2l_rc on_namespace(void *ctx, const w2l__json *e, int *stop, w2l_error *err)
{
    lister *l = ctx;
    char *ns = ns_join(e);
    W2L_NOMEM_IF(!ns, err);
    /* only names below the parent: a server that ignores "parent" would make a loop */
    size_t depth = w2l__json_size(e), up = l->depth;
    w2l_rc rc = *ns && depth > up ? list_ns_tables(l, ns, err) : W2L_OK;
    if (rc == W2L_OK && !l->stopped && *ns && depth > up) {
        l->depth = depth;
        rc = list_below(l, ns, err);
        l->depth = up;
    }
    if (rc == W2L_NOTFOUND) rc = W2L_OK; /* dropped meanwhile */
    *stop = l->stopped;
    w2l__free(ns);
    return rc;
}

static w2l_rc r_list(w2l_catalog *self, const char *ns,
                     int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                     w2l_error *err)
{
    lister l = {(rest_catalog *)self, fn, ctx, 0, 0};
    if (ns) {
        w2l_rc rc = list_ns_tables(&l, ns, err);
        return rc == W2L_NOTFOUND ? W2L_OK : rc; /* no namespace: no tables */
    }
    return list_below(&l, NULL, err);
}

const w2l_catalog_methods w2l__catalog_rest = {
    .version = W2L_CATALOG_METHODS_V2,
    .name = "rest",
    .size = sizeof(rest_catalog),
    .open = r_open_or_clean,
    .load_table = r_load,
    .commit_table = r_commit,
    .drop_table = r_drop,
    .rename_table = r_rename,
    .list_tables = r_list,
    .close = r_close,
    .commit_tables = r_commit_tables,
};
