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
 * Commit (rest_commit.c): the library hands the base metadata location and the whole next
 * metadata; the base is read through the file IO and the REST requirements and updates come
 * from the two (rest_update.c), POSTed to the table; the server writes the metadata file and
 * answers its location. A create is the same POST with assert-create. Outcomes: 200      committed;
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
 * Requests (rest_call.c): a pool of connections (reused), a timeout per request, reads
 * retried with backoff on 429/503 and on transport errors, any request once on a 401 after
 * a fresh token; the token is fetched again before it expires. Errors name the method,
 * path, HTTP status and the server's error type and message. Credentials, tokens and header
 * values are never logged.
 *
 * This file: open and close, namespaces, loads and vended credentials, drop, rename and
 * lists; the commits above are in rest_commit.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rest.h"

static const char *conf_str(const w2l_conf *conf, const char *key)
{
    const char *v = NULL;
    if (conf && w2l_conf_get(conf, key, &v, NULL) == W2L_OK && v && *v) return v;
    return NULL;
}

/* ----------------------------------------------------------------- open ---- */

static w2l_rc set_str(char **dst, const char *v, w2l_error *err)
{
    w2l__rest_free_secret(dst);
    if (!v) return W2L_OK;
    *dst = w2l__strdup(v);
    W2L_NOMEM_IF(!*dst, err);
    return W2L_OK;
}

/* catalog.headers: "Name: value; Name: value" split in place. */
static w2l_rc parse_headers(w2l__rest_catalog *c, w2l_error *err)
{
    for (char *p = c->headers_text; p && *p;) {
        char *semi = strchr(p, ';');
        if (semi) *semi = '\0';
        while (*p == ' ') p++;
        char *colon = strchr(p, ':');
        if (*p) {
            if (!colon || colon == p || c->nextra == W2L__REST_MAX_HEADERS)
                return w2l__fail(err, W2L_CONFIG,
                                 "catalog.headers: want at most %d 'Name: value' separated "
                                 "by ';'", W2L__REST_MAX_HEADERS);
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

static w2l_rc load_config(w2l__rest_catalog *c, w2l_error *err)
{
    w2l_buf q = {0};
    w2l_rc rc = W2L_OK;
    if (c->warehouse) {
        rc = w2l_buf_append(&q, "warehouse=", 10, err);
        if (rc == W2L_OK) rc = w2l__rest_enc(&q, c->warehouse, err);
        if (rc == W2L_OK) rc = w2l__buf_cstr(&q, err);
    }
    w2l__rest_call k = { .method = "GET",
                         .path = "/v1/config",
                         .query = c->warehouse ? (char *)q.data : NULL,
                         .idempotent = 1 };
    w2l__json *j = NULL;
    if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, &j, err);
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
static w2l_rc sigv4_setup(w2l__rest_catalog *c, const w2l_conf *conf, w2l_error *err)
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
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
    if (c->attached) w2l__vend_detach(c); /* before anything a refresh of ours uses goes */
    w2l__cred_chain_free(c->aws);
    w2l__http_free(c->http);
    for (size_t i = 0; i < c->nendpoints; i++) w2l__free(c->endpoints[i]);
    w2l__free(c->endpoints);
    w2l__rest_free_secret(&c->uri);
    w2l__rest_free_secret(&c->warehouse);
    w2l__rest_free_secret(&c->prefix);
    w2l__rest_free_secret(&c->credential);
    w2l__rest_free_secret(&c->oauth_uri);
    w2l__rest_free_secret(&c->scope);
    w2l__rest_free_secret(&c->headers_text);
    w2l__rest_free_secret(&c->token);
    w2l__rest_free_secret(&c->sign_region);
    w2l__rest_free_secret(&c->sign_name);
    w2l__rest_free_secret(&c->delegation);
    w2l__rest_free_secret(&c->group);
    w2l__rest_free_secret(&c->host);
    w2l__rest_free_secret(&c->base_path);
    if (c->have_mu) mtx_destroy(&c->mu);
}

static w2l_rc r_open(const w2l_catalog_methods *m, const w2l_conf *conf, const char *uri,
                     const char *warehouse, w2l_fileio *io, w2l_catalog *self, w2l_error *err)
{
    (void)m, (void)warehouse;
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
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

/* Makes ns and each level above it (rest.h). */
w2l_rc w2l__rest_ensure_namespace(w2l__rest_catalog *c, const char *ns, w2l_error *err)
{
    W2L_TRY(w2l__rest_need(c, "POST /v1/{prefix}/namespaces", err));
    w2l_buf path = {0};
    w2l_rc rc = w2l__rest_path(c, &path, NULL, NULL, 0, err);
    for (const char *p = ns; rc == W2L_OK;) {
        size_t n = strcspn(p, ".");
        char *level = w2l__strndup(ns, (size_t)(p - ns) + n);
        w2l__json *body = w2l__json_new_object();
        if (!level || !body || w2l__json_add(body, "namespace", w2l__rest_ns_array(level)) != 0 ||
            w2l__json_add(body, "properties", w2l__json_new_object()) != 0) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        char *text = rc == W2L_OK ? w2l__json_print(body, 0) : NULL;
        if (rc == W2L_OK && !text) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__rest_call k = {.method = "POST", .path = (const char *)path.data, .body = text,
                  .idempotent = 1}; /* making it twice is a 409 */
        if (rc == W2L_OK) rc = w2l__rest_do(c, &k, err);
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

static w2l_rc stage(w2l__rest_catalog *c, const char *ns, const char *table, const char *body,
                    w2l_error *err);

/* The refresher of our group's registry entries: the table loaded again puts fresh ones;
 * one staged (hint: its CreateTableRequest) and not made yet is staged again. */
static w2l_rc vend_refresh(const void *owner, const char *ns, const char *table,
                           const char *hint, w2l_error *err)
{
    w2l__rest_catalog *c = (w2l__rest_catalog *)owner;
    w2l_rc rc = w2l__rest_load(c, ns, table, NULL, NULL, err);
    if (rc == W2L_NOTFOUND && hint) rc = stage(c, ns, table, hint, err);
    if (rc != W2L_OK)
        w2l__error_prefix(err, "refreshing the vended credentials of table %s.%s from the "
                          "catalog at %s: ", ns, table, c->uri);
    return rc;
}

/* s3.* credentials of a storage config object (LoadTableResult "config", or a
 * StorageCredential's) into the registry for prefix; none there is no error. */
static w2l_rc vend_put(w2l__rest_catalog *c, const char *ns, const char *table, const char *prefix,
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
static w2l_rc vend_all(w2l__rest_catalog *c, const char *ns, const char *table, const char *hint,
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

/* GET the table (rest.h). */
w2l_rc w2l__rest_load(w2l__rest_catalog *c, const char *ns, const char *table, w2l_buf *location,
                   w2l__json **answer, w2l_error *err)
{
    if (answer) *answer = NULL;
    W2L_TRY(w2l__rest_need(c, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
    w2l_buf path = {0};
    w2l__json *j = NULL;
    w2l__rest_call k = {.method = "GET", .idempotent = 1, .delegate = 1};
    w2l_rc rc = w2l__rest_path(c, &path, ns, table, 1, err);
    k.path = (const char *)path.data;
    if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, &j, err);
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
static w2l_rc stage(w2l__rest_catalog *c, const char *ns, const char *table, const char *body,
                    w2l_error *err)
{
    W2L_TRY(w2l__rest_need(c, "POST /v1/{prefix}/namespaces/{namespace}/tables", err));
    w2l_buf path = {0};
    w2l__json *j = NULL;
    w2l_rc rc = w2l__rest_path(c, &path, ns, NULL, 0, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&path, "/tables", 7, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&path, err);
    w2l__rest_call k = {.method = "POST", .path = (const char *)path.data, .body = body,
              .idempotent = 1, .delegate = 1}; /* staging twice changes nothing */
    if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, &j, err);
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
    w2l__rest_catalog *c = (w2l__rest_catalog *)cat;
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
    if (rc == W2L_OK) rc = w2l__rest_ensure_namespace(c, ns, err);
    if (rc == W2L_OK) rc = stage(c, ns, table, body, err);
    w2l__free(body);
    w2l__json_free(req);
    w2l__json_free(m);
    return rc;
}

static w2l_rc r_load(w2l_catalog *self, const char *ns, const char *table, w2l_buf *location,
                     w2l_error *err)
{
    return w2l__rest_load((w2l__rest_catalog *)self, ns, table, location, NULL, err);
}

static w2l_rc r_drop(w2l_catalog *self, const char *ns, const char *table, int purge,
                     w2l_error *err)
{
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
    W2L_TRY(w2l__rest_need(c, "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}", err));
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
    w2l__rest_call k = {.method = "DELETE", .query = "purgeRequested=false"};
    if (rc == W2L_OK) rc = w2l__rest_path(c, &path, ns, table, 1, err);
    k.path = (const char *)path.data;
    if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, NULL, err);
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
    w2l__rest_catalog *c = (w2l__rest_catalog *)self;
    W2L_TRY(w2l__rest_need(c, "POST /v1/{prefix}/tables/rename", err));
    W2L_TRY(w2l__rest_ensure_namespace(c, to_ns, err));
    char *path = w2l__asprintf("/v1/%s%stables/rename", c->prefix, *c->prefix ? "/" : "");
    w2l__json *body = w2l__json_new_object();
    char *text = NULL;
    w2l_rc rc = W2L_OK;
    if (!path || !body || w2l__json_add(body, "source", w2l__rest_identifier(ns, table)) != 0 ||
        w2l__json_add(body, "destination", w2l__rest_identifier(to_ns, to_table)) != 0 ||
        !(text = w2l__json_print(body, 0)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l__rest_call k = {.method = "POST", .path = path, .body = text};
    if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, NULL, err);
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
static w2l_rc pages(w2l__rest_catalog *c, const char *path, const char *query, const char *member,
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
            if (rc == W2L_OK) rc = w2l__rest_enc(&q, token, err);
        }
        if (rc == W2L_OK && q.len) rc = w2l__buf_cstr(&q, err);
        w2l__rest_call k = {.method = "GET", .path = path, .query = q.len ? (char *)q.data : NULL,
                  .idempotent = 1};
        w2l__json *j = NULL;
        if (rc == W2L_OK) rc = w2l__rest_do_ok(c, &k, &j, err);
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
    w2l__rest_catalog *c;
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
    W2L_TRY(w2l__rest_need(l->c, "GET /v1/{prefix}/namespaces/{namespace}/tables", err));
    w2l_buf path = {0};
    w2l_rc rc = w2l__rest_path(l->c, &path, ns, NULL, 1, err);
    if (rc == W2L_OK)
        rc = pages(l->c, (const char *)path.data, NULL, "identifiers", on_table, l, err);
    w2l_buf_release(&path);
    return rc;
}

/* Tables of every namespace below parent (NULL: the top), depth first. */
static w2l_rc on_namespace(void *ctx, const w2l__json *e, int *stop, w2l_error *err);

static w2l_rc list_below(lister *l, const char *parent, w2l_error *err)
{
    W2L_TRY(w2l__rest_need(l->c, "GET /v1/{prefix}/namespaces", err));
    w2l_buf path = {0}, q = {0};
    w2l_rc rc = w2l__rest_path(l->c, &path, NULL, NULL, 0, err);
    if (rc == W2L_OK && parent) {
        rc = w2l_buf_append(&q, "parent=", 7, err);
        if (rc == W2L_OK) rc = w2l__rest_enc_ns(&q, parent, err);
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
    lister l = {(w2l__rest_catalog *)self, fn, ctx, 0, 0};
    if (ns) {
        w2l_rc rc = list_ns_tables(&l, ns, err);
        return rc == W2L_NOTFOUND ? W2L_OK : rc; /* no namespace: no tables */
    }
    return list_below(&l, NULL, err);
}

const w2l_catalog_methods w2l__catalog_rest = {
    .version = W2L_CATALOG_METHODS_V2,
    .name = "rest",
    .size = sizeof(w2l__rest_catalog),
    .open = r_open_or_clean,
    .load_table = r_load,
    .commit_table = w2l__rest_commit_table,
    .drop_table = r_drop,
    .rename_table = r_rename,
    .list_tables = r_list,
    .close = r_close,
    .commit_tables = w2l__rest_commit_tables,
};
