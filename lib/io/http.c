/*
 * HTTP for the "s3" file IO: the one file that includes libcurl. A w2l__http is a pool of
 * curl easy handles behind a mutex: a request takes a handle from the free list (or makes
 * one), and gives it back when done, so the handle's live connections and DNS cache serve the
 * next request (curl_easy_reset keeps both). Bodies are sent from the caller's memory without
 * a copy; the answer's body goes to a w2l_buf with a size limit, and the headers S3 clients
 * need (Content-Length, ETag, Last-Modified, Content-Range, x-amz-request-id, Retry-After)
 * are copied into the response. Header values are never logged: they carry signatures and
 * session tokens.
 */
#include <ctype.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <curl/curl.h>

#include "../common/thread.h"
#include "s3.h"

/* Idle handles kept beyond this are closed when given back. */
#define POOL_KEEP 64

struct w2l__http {
    mtx_t mu;
    CURL *idle[POOL_KEEP];
    size_t nidle;
};

w2l_rc w2l__http_global_init(w2l_error *err)
{
    CURLcode c = curl_global_init(CURL_GLOBAL_ALL);
    if (c != CURLE_OK)
        return w2l__fail(err, W2L_ERROR, "curl_global_init: %s", curl_easy_strerror(c));
    return W2L_OK;
}

void w2l__http_global_cleanup(void) { curl_global_cleanup(); }

w2l_rc w2l__http_new(w2l__http **out, w2l_error *err)
{
    *out = NULL;
    w2l__http *h = w2l__calloc(1, sizeof *h);
    W2L_NOMEM_IF(!h, err);
    if (mtx_init(&h->mu, mtx_plain) != thrd_success) {
        w2l__free(h);
        return w2l__fail(err, W2L_ERROR, "http: mtx_init failed");
    }
    *out = h;
    return W2L_OK;
}

void w2l__http_free(w2l__http *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->nidle; i++) curl_easy_cleanup(h->idle[i]);
    mtx_destroy(&h->mu);
    w2l__free(h);
}

static CURL *take(w2l__http *h)
{
    CURL *c = NULL;
    mtx_lock(&h->mu);
    if (h->nidle > 0) c = h->idle[--h->nidle];
    mtx_unlock(&h->mu);
    if (c) curl_easy_reset(c);
    else c = curl_easy_init();
    return c;
}

static void give_back(w2l__http *h, CURL *c)
{
    mtx_lock(&h->mu);
    if (h->nidle < POOL_KEEP) {
        h->idle[h->nidle++] = c;
        c = NULL;
    }
    mtx_unlock(&h->mu);
    if (c) curl_easy_cleanup(c);
}

typedef struct xfer {
    const w2l__http_req *req;
    w2l__http_resp *resp;
    size_t got;   /* body bytes received */
    int too_long; /* the body passed max_out */
    int nomem;
} xfer;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (x->req->max_out && n > x->req->max_out - x->got) {
        x->too_long = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    x->got += n;
    if (!x->req->out) return n;
    w2l_error e;
    if (w2l_buf_append(x->req->out, p, n, &e) != W2L_OK) {
        x->nomem = 1;
        return 0;
    }
    return n;
}

/* Copies value[0..n) without surrounding blanks (and without quotes when unquote) into
 * dst[size], cut to fit. */
static void set_field(char *dst, size_t size, const char *v, size_t n, int unquote)
{
    while (n > 0 && (v[0] == ' ' || v[0] == '\t')) v++, n--;
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
    if (unquote && n >= 2 && v[0] == '"' && v[n - 1] == '"') v++, n -= 2;
    if (n >= size) n = size - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int name_is(const char *line, size_t nlen, const char *name)
{
    return strlen(name) == nlen && strncasecmp(line, name, nlen) == 0;
}

/* One header line per call ("Name: value\r\n"), the status line of each answer included:
 * a new status line (after a 1xx) starts the fields over. */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    w2l__http_resp *r = x->resp;
    size_t len = n;
    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n')) len--;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        r->content_length = UINT64_MAX;
        r->etag[0] = r->last_modified[0] = r->content_range[0] = '\0';
        r->request_id[0] = r->retry_after[0] = r->meta_sha256[0] = '\0';
        return n;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon) return n;
    size_t nlen = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vlen = len - nlen - 1;
    if (name_is(p, nlen, "content-length")) {
        char num[32];
        set_field(num, sizeof num, v, vlen, 0);
        char *end;
        unsigned long long cl = strtoull(num, &end, 10);
        if (end != num && *end == '\0' && num[0] != '-') r->content_length = cl;
    } else if (name_is(p, nlen, "x-amz-meta-w2l-sha256")) {
        set_field(r->meta_sha256, sizeof r->meta_sha256, v, vlen, 0);
    } else if (name_is(p, nlen, "etag")) {
        set_field(r->etag, sizeof r->etag, v, vlen, 1);
    } else if (name_is(p, nlen, "last-modified")) {
        set_field(r->last_modified, sizeof r->last_modified, v, vlen, 0);
    } else if (name_is(p, nlen, "content-range")) {
        set_field(r->content_range, sizeof r->content_range, v, vlen, 0);
    } else if (name_is(p, nlen, "x-amz-request-id")) {
        set_field(r->request_id, sizeof r->request_id, v, vlen, 0);
    } else if (name_is(p, nlen, "retry-after")) {
        set_field(r->retry_after, sizeof r->retry_after, v, vlen, 0);
    }
    return n;
}

/* The URL up to its query, for messages (a query may carry a presigned signature). */
static void url_for_msg(const char *url, char *out, size_t size)
{
    size_t n = strcspn(url, "?#");
    snprintf(out, size, "%.*s", (int)W2L_MIN(n, 200), url);
}

/* 1 unless the request certainly never reached a server. */
static int maybe_sent(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
        return 0;
    default:
        return 1;
    }
}

static w2l_rc build_headers(const w2l__http_req *req, struct curl_slist **list, w2l_error *err)
{
    int has_type = 0;
    for (size_t i = 0; i < req->nheaders; i++) {
        const w2l__http_header *hd = &req->headers[i];
        if (!hd->name || !*hd->name || strpbrk(hd->name, ":\r\n") ||
            (hd->value && strpbrk(hd->value, "\r\n")))
            return w2l__fail(err, W2L_MISUSE, "http: header %zu has a bad name or value", i);
        if (strcasecmp(hd->name, "content-type") == 0) has_type = 1;
        /* "Name;" is libcurl's way to send a header with an empty value */
        char *line = hd->value && *hd->value ? w2l__asprintf("%s: %s", hd->name, hd->value)
                                             : w2l__asprintf("%s;", hd->name);
        W2L_NOMEM_IF(!line, err);
        struct curl_slist *l = curl_slist_append(*list, line);
        w2l__free(line);
        W2L_NOMEM_IF(!l, err);
        *list = l;
    }
    /* No "Expect: 100-continue" round trip, and no form Content-Type on POST/PUT bodies:
     * "Name:" removes a header libcurl would add. */
    struct curl_slist *l = curl_slist_append(*list, "Expect:");
    W2L_NOMEM_IF(!l, err);
    *list = l;
    if (!has_type) {
        l = curl_slist_append(*list, "Content-Type:");
        W2L_NOMEM_IF(!l, err);
        *list = l;
    }
    return W2L_OK;
}

static w2l_rc setup(CURL *c, const w2l__http_req *req, xfer *x, struct curl_slist *hdrs,
                    char *errbuf, w2l_error *err)
{
    const char *m = req->method ? req->method : "GET";
    CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                      \
    if (rc == CURLE_OK) rc = curl_easy_setopt(c, opt, val)
    SET(CURLOPT_URL, req->url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SET(CURLOPT_HTTPHEADER, hdrs);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    if (req->timeout_ms > 0) SET(CURLOPT_TIMEOUT_MS, req->timeout_ms);
    if (req->connect_timeout_ms > 0) SET(CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
    if (strcmp(m, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (strcmp(m, "PUT") == 0 || strcmp(m, "POST") == 0) {
        /* POSTFIELDS sends from the caller's memory (no copy) with a Content-Length,
         * also for an empty body, which S3 wants on PUT and POST */
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        SET(CURLOPT_POSTFIELDS, req->body_len ? (const char *)req->body : "");
        if (strcmp(m, "PUT") == 0) SET(CURLOPT_CUSTOMREQUEST, "PUT");
    } else if (strcmp(m, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, m);
    }
#undef SET
    if (rc != CURLE_OK)
        return w2l__fail(err, W2L_ERROR, "http: curl_easy_setopt: %s", curl_easy_strerror(rc));
    return W2L_OK;
}

w2l_rc w2l__http_do(w2l__http *h, const w2l__http_req *req, w2l__http_resp *resp,
                    w2l_error *err)
{
    memset(resp, 0, sizeof *resp);
    resp->content_length = UINT64_MAX;
    if (!h || !req || !req->url)
        return w2l__fail(err, W2L_MISUSE, "w2l__http_do: NULL pool, request or URL");
    if (req->body_len && !req->body)
        return w2l__fail(err, W2L_MISUSE, "w2l__http_do: body_len without a body");
    const char *m = req->method ? req->method : "GET";
    if (!*m || strpbrk(m, " \r\n"))
        return w2l__fail(err, W2L_MISUSE, "w2l__http_do: bad method");
    char where[220];
    url_for_msg(req->url, where, sizeof where);

    struct curl_slist *hdrs = NULL;
    w2l_rc rc = build_headers(req, &hdrs, err);
    if (rc != W2L_OK) {
        curl_slist_free_all(hdrs);
        return rc;
    }
    CURL *c = take(h);
    if (!c) {
        curl_slist_free_all(hdrs);
        return w2l__fail(err, W2L_NOMEM, "http: curl_easy_init failed");
    }
    size_t out_len0 = req->out ? req->out->len : 0;
    xfer x = {.req = req, .resp = resp};
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';
    rc = setup(c, req, &x, hdrs, errbuf, err);
    if (rc == W2L_OK) {
        CURLcode cc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        resp->status = status;
        if (x.nomem) {
            rc = w2l__fail(err, W2L_NOMEM, "http %s %s: out of memory for the answer", m, where);
        } else if (x.too_long) {
            rc = w2l__fail(err, W2L_IO, "http %s %s: answer longer than %zu bytes", m, where,
                           req->max_out);
        } else if (cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL) {
            rc = w2l__fail(err, W2L_CONFIG, "http: bad URL '%s': %s", where,
                           errbuf[0] ? errbuf : curl_easy_strerror(cc));
        } else if (cc == CURLE_OUT_OF_MEMORY) {
            rc = w2l__fail(err, W2L_NOMEM, "http %s %s: libcurl out of memory", m, where);
        } else if (cc != CURLE_OK) {
            resp->transport_error = 1;
            resp->sent = maybe_sent(cc);
            snprintf(resp->error, sizeof resp->error, "%s",
                     errbuf[0] ? errbuf : curl_easy_strerror(cc));
            w2l__log(W2L_LOG_DEBUG, "http %s %s: %s", m, where, resp->error);
        } else {
            resp->sent = 1;
        }
        if (rc != W2L_OK && req->out) req->out->len = out_len0;
    }
    /* the handle must not keep pointers to this call's header list or error buffer */
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, (char *)NULL);
    give_back(h, c);
    curl_slist_free_all(hdrs);
    return rc;
}
