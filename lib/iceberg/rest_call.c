/*
 * The "rest" catalog's requests (rest.h): one call to the catalog server with its retries,
 * the OAuth2 token it carries, or its AWS Signature Version 4 headers, and the paths and
 * bodies every call builds on (namespaces in paths, table identifiers).
 *
 * A call: a pool of connections (reused), a timeout per request, reads retried with
 * backoff on 429/503 and on transport errors, any request once on a 401 after a fresh
 * token; the token is fetched again before it expires. Credentials, tokens and header
 * values are never logged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rest.h"

enum {
    CONNECT_TIMEOUT_MS = 10000,
    REQUEST_TIMEOUT_MS = 60000,
    READ_TRIES = 5, /* a read (or a reload that settles a commit) */
};
#define MAX_ANSWER ((size_t)512 << 20)

/* ------------------------------------------------------------- helpers ---- */

void w2l__rest_pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void w2l__rest_free_secret(char **p)
{
    if (*p) { /* secrets are overwritten before they go back to the allocator */
        memset(*p, 0, strlen(*p));
        w2l__free(*p);
        *p = NULL;
    }
}

/* Appends s form- or path-encoded (everything but A-Z a-z 0-9 - . _ ~ as %XX). */
w2l_rc w2l__rest_enc(w2l_buf *b, const char *s, w2l_error *err)
{
    return w2l__aws_uri_encode(b, s, strlen(s), 0, err);
}

/* The path form of a namespace: its '.'-separated levels encoded, joined by %1F. */
w2l_rc w2l__rest_enc_ns(w2l_buf *b, const char *ns, w2l_error *err)
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
w2l__json *w2l__rest_ns_array(const char *ns)
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
w2l__json *w2l__rest_identifier(const char *ns, const char *table)
{
    w2l__json *o = w2l__json_new_object();
    if (o && (w2l__json_add(o, "namespace", w2l__rest_ns_array(ns)) != 0 ||
              w2l__json_add(o, "name", w2l__json_new_string(table)) != 0)) {
        w2l__json_free(o);
        return NULL;
    }
    return o;
}

/* "/v1/PREFIX/namespaces/NS[/tables[/TABLE]]" (the part after the base URI) into b. */
w2l_rc w2l__rest_path(w2l__rest_catalog *c, w2l_buf *b, const char *ns, const char *table,
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
        W2L_TRY(w2l__rest_enc_ns(b, ns, err));
    }
    if (tables) W2L_TRY(w2l_buf_append(b, "/tables", 7, err));
    if (table) {
        W2L_TRY(w2l_buf_append(b, "/", 1, err));
        W2L_TRY(w2l__rest_enc(b, table, err));
    }
    return w2l__buf_cstr(b, err);
}

/* May the endpoint ("POST /v1/{prefix}/tables/rename") be called? */
w2l_rc w2l__rest_need(w2l__rest_catalog *c, const char *endpoint, w2l_error *err)
{
    if (!c->listed) return W2L_OK;
    for (size_t i = 0; i < c->nendpoints; i++)
        if (strcmp(c->endpoints[i], endpoint) == 0) return W2L_OK;
    return w2l__fail(err, W2L_CONFIG, "rest catalog %s: the server does not offer %s", c->uri,
                     endpoint);
}

/* ---------------------------------------------------------------- OAuth2 ---- */

/* A token for the client credential (caller holds mu). */
static w2l_rc fetch_token(w2l__rest_catalog *c, w2l_error *err)
{
    const char *colon = strchr(c->credential, ':');
    w2l_buf form = {0}, out = {0};
    w2l_rc rc = w2l_buf_append(&form, "grant_type=client_credentials&client_id=", 40, err);
    if (rc == W2L_OK)
        rc = w2l__aws_uri_encode(&form, c->credential,
                                 colon ? (size_t)(colon - c->credential) : strlen(c->credential),
                                 0, err);
    if (rc == W2L_OK && colon) rc = w2l_buf_append(&form, "&client_secret=", 15, err);
    if (rc == W2L_OK && colon) rc = w2l__rest_enc(&form, colon + 1, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&form, "&scope=", 7, err);
    if (rc == W2L_OK) rc = w2l__rest_enc(&form, c->scope, err);
    w2l__http_header h[W2L__REST_MAX_HEADERS + 2] = {
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
        w2l__rest_free_secret(&c->token);
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
static w2l_rc bearer(w2l__rest_catalog *c, int force, char *auth, size_t size, w2l_error *err)
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
static w2l_rc sign(w2l__rest_catalog *c, const char *method, const char *path, const char *query,
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

/* ------------------------------------------------------------- requests ---- */

/* One request with its retries (rest.h). */
w2l_rc w2l__rest_do(w2l__rest_catalog *c, w2l__rest_call *k, w2l_error *err)
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
        w2l__http_header h[W2L__REST_MAX_HEADERS + 8];
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
        w2l__rest_pause_ms(backoff);
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

/* w2l__rest_do, then any status but 2xx as an error (rest.h). */
w2l_rc w2l__rest_do_ok(w2l__rest_catalog *c, w2l__rest_call *k, w2l__json **j, w2l_error *err)
{
    if (j) *j = NULL;
    W2L_TRY(w2l__rest_do(c, k, err));
    if (k->status < 200 || k->status > 299)
        return w2l__rest_fail(err, k->method, k->path, k->status, (const char *)k->answer.data,
                              k->answer.len);
    if (!j) return W2L_OK;
    w2l_rc rc = w2l__json_parse((const char *)k->answer.data, k->answer.len, j, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "rest catalog: %s %s: ", k->method, k->path);
    return rc;
}
