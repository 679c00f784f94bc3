/*
 * S3 operations over http.c, signed with sigv4.c: PUT, ranged GET, HEAD, DELETE,
 * DeleteObjects, ListObjectsV2 and multipart uploads, each retried as w2l-s3(7) says.
 *
 * Retries: a broken connection, a timeout, 5xx, 429 and 400 RequestTimeout are retried up to
 * s3.max-retries times after a wait drawn uniformly from [0, min(20 s, 100 ms * 2^attempt)]
 * ("full jitter"), or the server's Retry-After when it sends one. Every attempt is signed
 * anew (the date is part of the signature).
 *
 * Lost answers: a PUT whose answer never came may have landed. A retry with If-None-Match
 * then meets 412; the object is ours when it carries our x-amz-meta-w2l-sha256 (every PUT
 * stores the SHA-256 of its body there), so that 412 is success. A CompleteMultipartUpload
 * retried after a lost answer meets 404 NoSuchUpload: the upload was completed by the lost
 * attempt when the object exists now (an upload's digest is not known when it starts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "s3.h"
#include "../common/thread.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MAX_BACKOFF_MS 20000
#define DELETE_BATCH 1000

struct w2l__s3 {
    w2l__http *http;
    w2l__cred_chain *chain;   /* NULL when the keys are given in the configuration */
    w2l__aws_cred fixed;      /* s3.access-key-id ... */
    char *scheme;             /* "https" */
    char *host;               /* "s3.us-east-1.amazonaws.com" or "127.0.0.1:4568" */
    char *base_path;          /* a path prefix of the endpoint ("" mostly) */
    char *region;
    int path_style, sign_payload, max_retries, upload_concurrency;
    long timeout_ms, connect_timeout_ms;
    uint64_t part_size, threshold;
};

uint64_t w2l__s3_part_size(const w2l__s3 *s) { return s->part_size; }
uint64_t w2l__s3_multipart_threshold(const w2l__s3 *s) { return s->threshold; }
int w2l__s3_upload_concurrency(const w2l__s3 *s) { return s->upload_concurrency; }

/* ---- configuration ---- */

static const char *conf_str(const w2l_conf *conf, const char *key)
{
    const char *v = NULL;
    if (conf) w2l_conf_get(conf, key, &v, NULL);
    return v && *v ? v : NULL;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static w2l_rc parse_endpoint(w2l__s3 *s, const char *ep, w2l_error *err)
{
    const char *p = strstr(ep, "://");
    if (!p || (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0))
        return w2l__fail(err, W2L_CONFIG, "s3.endpoint %s: expected http://HOST[:PORT] or "
                         "https://HOST[:PORT]", ep);
    s->scheme = w2l__strndup(ep, (size_t)(p - ep));
    p += 3;
    size_t hl = strcspn(p, "/?#");
    if (hl == 0) return w2l__fail(err, W2L_CONFIG, "s3.endpoint %s: no host", ep);
    s->host = w2l__strndup(p, hl);
    const char *path = p + hl;
    size_t pl = strcspn(path, "?#");
    while (pl > 0 && path[pl - 1] == '/') pl--;
    s->base_path = w2l__strndup(path, pl);
    W2L_NOMEM_IF(!s->scheme || !s->host || !s->base_path, err);
    return W2L_OK;
}

static w2l_rc read_size(const w2l_conf *conf, const char *key, uint64_t *out, w2l_error *err)
{
    int64_t v;
    W2L_TRY(w2l_conf_get_int(conf, key, &v, err));
    *out = (uint64_t)v;
    return W2L_OK;
}

w2l_rc w2l__s3_open(const w2l_conf *conf, w2l__s3 **out, w2l_error *err)
{
    *out = NULL;
    w2l__s3 *s = w2l__calloc(1, sizeof *s);
    W2L_NOMEM_IF(!s, err);
    w2l_rc rc = W2L_OK;
    int64_t v;
    s->part_size = 8u << 20;
    s->threshold = 16u << 20;
    s->max_retries = 5;
    s->upload_concurrency = 4;
    s->timeout_ms = 300000;
    s->connect_timeout_ms = 10000;
    if (conf) {
        if (rc == W2L_OK) rc = read_size(conf, "s3.part-size", &s->part_size, err);
        if (rc == W2L_OK) rc = read_size(conf, "s3.multipart-threshold", &s->threshold, err);
        if (rc == W2L_OK && (rc = w2l_conf_get_int(conf, "s3.max-retries", &v, err)) == W2L_OK)
            s->max_retries = (int)v;
        if (rc == W2L_OK &&
            (rc = w2l_conf_get_int(conf, "s3.upload-concurrency", &v, err)) == W2L_OK)
            s->upload_concurrency = (int)v;
        if (rc == W2L_OK &&
            (rc = w2l_conf_get_int(conf, "s3.request-timeout", &v, err)) == W2L_OK)
            s->timeout_ms = (long)v;
        if (rc == W2L_OK &&
            (rc = w2l_conf_get_int(conf, "s3.connect-timeout", &v, err)) == W2L_OK)
            s->connect_timeout_ms = (long)v;
    }
    if (rc == W2L_OK) rc = w2l__http_new(&s->http, err);

    const char *ak = conf_str(conf, "s3.access-key-id");
    const char *sk = conf_str(conf, "s3.secret-access-key");
    if (rc == W2L_OK && (ak || sk)) {
        if (!ak || !sk)
            rc = w2l__fail(err, W2L_CONFIG, "s3.%s is set but s3.%s is not",
                           ak ? "access-key-id" : "secret-access-key",
                           ak ? "secret-access-key" : "access-key-id");
        const char *tok = conf_str(conf, "s3.session-token");
        if (rc == W2L_OK) {
            s->fixed.access_key = w2l__strdup(ak);
            s->fixed.secret_key = w2l__strdup(sk);
            s->fixed.session_token = tok ? w2l__strdup(tok) : NULL;
            if (!s->fixed.access_key || !s->fixed.secret_key || (tok && !s->fixed.session_token))
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    } else if (rc == W2L_OK) {
        w2l__cred_opts o = { .profile = conf_str(conf, "s3.profile") };
        rc = w2l__cred_chain_new(&o, s->http, &s->chain, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "s3 credentials: ");
    }

    const char *region = conf_str(conf, "s3.region");
    if (!region) region = env("AWS_REGION");
    if (!region) region = env("AWS_DEFAULT_REGION");
    if (!region && s->chain) region = w2l__cred_region(s->chain);
    if (!region) region = "us-east-1";
    if (rc == W2L_OK && !(s->region = w2l__strdup(region)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");

    const char *ep = conf_str(conf, "s3.endpoint");
    if (!ep) ep = env("AWS_ENDPOINT_URL_S3");
    if (!ep) ep = env("AWS_ENDPOINT_URL");
    const char *ps = conf_str(conf, "s3.path-style");
    if (rc == W2L_OK) {
        if (ep) {
            rc = parse_endpoint(s, ep, err);
            s->path_style = !ps || strcmp(ps, "false") != 0;
        } else {
            char *aws = w2l__asprintf("https://s3.%s.amazonaws.com", s->region);
            rc = aws ? parse_endpoint(s, aws, err) : w2l__fail(err, W2L_NOMEM, "out of memory");
            w2l__free(aws);
            s->path_style = ps && strcmp(ps, "true") == 0;
        }
    }
    const char *sign = conf_str(conf, "s3.payload-signing");
    if (rc == W2L_OK)
        s->sign_payload = sign && strcmp(sign, "auto") != 0 ? strcmp(sign, "true") == 0
                                                           : strcmp(s->scheme, "http") == 0;
    if (rc != W2L_OK) {
        w2l__s3_close(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

void w2l__s3_close(w2l__s3 *s)
{
    if (!s) return;
    w2l__cred_chain_free(s->chain);
    w2l__aws_cred_clear(&s->fixed);
    w2l__http_free(s->http);
    w2l__free(s->scheme);
    w2l__free(s->host);
    w2l__free(s->base_path);
    w2l__free(s->region);
    w2l__free(s);
}

w2l_rc w2l__s3_split(const char *uri, char **bucket, char **key, w2l_error *err)
{
    *bucket = *key = NULL;
    const char *p = NULL;
    if (strncmp(uri, "s3://", 5) == 0) p = uri + 5;
    else if (strncmp(uri, "s3a://", 6) == 0 || strncmp(uri, "s3n://", 6) == 0) p = uri + 6;
    size_t bl = p ? strcspn(p, "/") : 0;
    if (!p || bl == 0)
        return w2l__fail(err, W2L_CONFIG, "%s: not an S3 location (expected s3://BUCKET/KEY)",
                         uri);
    const char *k = p + bl;
    while (*k == '/') k++;
    *bucket = w2l__strndup(p, bl);
    *key = w2l__strdup(k);
    if (!*bucket || !*key) {
        w2l__free(*bucket);
        w2l__free(*key);
        *bucket = *key = NULL;
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    return W2L_OK;
}

/* ---- one signed request, retried ---- */

typedef struct s3_call {
    const char *method, *bucket, *key; /* key may be NULL (bucket requests) */
    const w2l__query_param *query;
    size_t nquery;
    const w2l__http_header *headers; /* extra headers, signed */
    size_t nheaders;
    const void *body;
    size_t body_len;
    const char *body_sha256; /* hex, when known; else computed when signing payloads */
    const char *cred_key;    /* a request on the bucket: the key its vended credentials are
                              * looked up for (a listing's prefix, a deletion's first key) */
    w2l_buf *out;
    size_t max_out;
    /* out: */
    w2l__http_resp resp;
    int attempts;
    int lost_answer; /* an attempt may have been applied without its answer reaching us */
    unsigned vend_gen;    /* vended credentials of the last attempt (s3_vend.c), 0: none */
    unsigned refused_gen; /* those the store answered 403 to: refreshed, then once more */
} s3_call;

static int retryable_status(long st, const char *body, size_t len)
{
    if (st >= 500 || st == 429) return 1;
    if (st == 400 && body && len) {
        /* S3 answers a request it waited too long for with 400 RequestTimeout */
        char text[64];
        w2l_buf code = { 0 };
        int has = w2l__xml_text(body, len, "Code", &code);
        snprintf(text, sizeof text, "%s", has && code.data ? (const char *)code.data : "");
        w2l_buf_release(&code);
        return strcmp(text, "RequestTimeout") == 0;
    }
    return 0;
}

static uint64_t jitter_state(void)
{
    static thread_local uint64_t x;
    if (!x) x = (uint64_t)w2l__mono_ns() ^ ((uint64_t)(uintptr_t)&x << 17) ^ 0x9E3779B97F4A7C15ULL;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

static void backoff(int attempt, const char *retry_after)
{
    long ms;
    if (retry_after && *retry_after && strspn(retry_after, "0123456789") == strlen(retry_after)) {
        ms = atol(retry_after) * 1000;
        if (ms > MAX_BACKOFF_MS) ms = MAX_BACKOFF_MS;
    } else {
        long cap = 100L << (attempt < 8 ? attempt : 8);
        if (cap > MAX_BACKOFF_MS) cap = MAX_BACKOFF_MS;
        ms = (long)(jitter_state() % (uint64_t)(cap + 1));
    }
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Path-style for this bucket? A bucket name with dots cannot be a TLS host name label. */
static int path_style(const w2l__s3 *s, const char *bucket)
{
    return s->path_style || strchr(bucket, '.') != NULL;
}

/* The URL path and canonical URI (the same text) of bucket/key. */
static w2l_rc build_path(w2l__s3 *s, const char *bucket, const char *key, w2l_buf *path,
                         w2l_error *err)
{
    W2L_TRY(w2l_buf_append(path, s->base_path, strlen(s->base_path), err));
    if (path_style(s, bucket)) {
        W2L_TRY(w2l_buf_append(path, "/", 1, err));
        W2L_TRY(w2l__aws_uri_encode(path, bucket, strlen(bucket), 0, err));
    }
    W2L_TRY(w2l_buf_append(path, "/", 1, err));
    if (key) W2L_TRY(w2l__aws_uri_encode(path, key, strlen(key), 1, err));
    return w2l__buf_cstr(path, err);
}

static w2l_rc get_cred(w2l__s3 *s, w2l__aws_cred *c, w2l_error *err)
{
    if (!s->chain) {
        *c = s->fixed; /* borrowed: attempt() clears only what the chain gave */
        return W2L_OK;
    }
    const char *where = NULL;
    return w2l__cred_get(s->chain, c, &where, err);
}

static w2l_rc attempt(w2l__s3 *s, s3_call *c, w2l_error *err)
{
    w2l_buf path = { 0 }, query = { 0 }, url = { 0 }, auth = { 0 }, hostb = { 0 };
    w2l__aws_cred cred = { 0 };
    w2l_rc rc = build_path(s, c->bucket, c->key, &path, err);
    if (rc == W2L_OK) rc = w2l__sigv4_query(&query, c->query, c->nquery, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&query, err);
    if (rc == W2L_OK)
        rc = path_style(s, c->bucket) ? w2l__buf_printf(&hostb, err, "%s", s->host)
                           : w2l__buf_printf(&hostb, err, "%s.%s", c->bucket, s->host);
    if (rc == W2L_OK)
        rc = w2l__buf_printf(&url, err, "%s://%s%s%s%s", s->scheme, (char *)hostb.data,
                             (char *)path.data, query.len ? "?" : "",
                             query.len ? (char *)query.data : "");
    /* credentials a catalog vended for this object's table come first */
    w2l__vend_use v = { 0 };
    if (rc == W2L_OK)
        rc = w2l__vend_get(c->bucket, c->key ? c->key : c->cred_key ? c->cred_key : "",
                           c->refused_gen, &v, err);
    c->vend_gen = v.found ? v.gen : 0;
    if (rc == W2L_OK && v.found)
        cred = v.cred;
    else if (rc == W2L_OK)
        rc = get_cred(s, &cred, err);

    char date[17], hash[65];
    w2l__amz_date(w2l__now_ms(), date);
    if (c->body_len == 0) {
        memcpy(hash, EMPTY_SHA256, 65);
    } else if (c->body_sha256 && s->sign_payload) {
        memcpy(hash, c->body_sha256, 65);
    } else if (s->sign_payload) {
        unsigned char d[32];
        w2l__sha256(c->body, c->body_len, d);
        w2l__hex(d, 32, hash);
    } else {
        strcpy(hash, "UNSIGNED-PAYLOAD");
    }
    w2l__http_header hs[24];
    size_t nh = 0;
    if (rc == W2L_OK) {
        hs[nh++] = (w2l__http_header){ "host", (char *)hostb.data };
        hs[nh++] = (w2l__http_header){ "x-amz-date", date };
        hs[nh++] = (w2l__http_header){ "x-amz-content-sha256", hash };
        if (cred.session_token)
            hs[nh++] = (w2l__http_header){ "x-amz-security-token", cred.session_token };
        for (size_t i = 0; i < c->nheaders && nh < W2L_ARRAY_LEN(hs) - 1; i++)
            hs[nh++] = c->headers[i];
        w2l__sigv4_req r = { .method = c->method,
                             .canonical_uri = (char *)path.data,
                             .canonical_query = query.len ? (char *)query.data : "",
                             .headers = hs,
                             .nheaders = nh,
                             .payload_hash = hash,
                             .region = v.region[0] ? v.region : s->region,
                             .service = "s3",
                             .amz_date = date };
        rc = w2l__sigv4_sign(&r, &cred, &auth, NULL, NULL, err);
        if (rc == W2L_OK) rc = w2l__buf_cstr(&auth, err);
    }
    if (rc == W2L_OK) {
        hs[nh++] = (w2l__http_header){ "Authorization", (char *)auth.data };
        if (c->out) c->out->len = 0;
        w2l__http_req hr = { .method = c->method,
                             .url = (char *)url.data,
                             .headers = hs,
                             .nheaders = nh,
                             .body = c->body,
                             .body_len = c->body_len,
                             .out = c->out,
                             .max_out = c->max_out,
                             .timeout_ms = s->timeout_ms,
                             .connect_timeout_ms = s->connect_timeout_ms };
        rc = w2l__http_do(s->http, &hr, &c->resp, err);
    }
    if (v.found || s->chain) w2l__aws_cred_clear(&cred);
    w2l_buf_release(&path);
    w2l_buf_release(&query);
    w2l_buf_release(&url);
    w2l_buf_release(&auth);
    w2l_buf_release(&hostb);
    return rc;
}

/* "s3 PUT s3://b/k: " prefix of messages. */
#define WHERE_FMT "s3 %s s3://%s/%s"
#define WHERE_ARGS(c) (c)->method, (c)->bucket, (c)->key ? (c)->key : ""

/* Runs c with retries. W2L_OK when an answer came that is not worth retrying (any status:
 * the caller reads c->resp.status); W2L_UNAVAILABLE when retries ran out. */
static w2l_rc call(w2l__s3 *s, s3_call *c, w2l_error *err)
{
    w2l_buf tmp = { 0 };
    w2l_buf *out = c->out ? c->out : &tmp;
    c->out = out;
    if (!c->max_out) c->max_out = 1 << 20; /* error bodies and listings are small */
    w2l_rc rc = W2L_OK;
    for (c->attempts = 0;; c->attempts++) {
        memset(&c->resp, 0, sizeof c->resp);
        rc = attempt(s, c, err);
        if (rc != W2L_OK) break;
        const w2l__http_resp *r = &c->resp;
        int again = r->transport_error ||
                    retryable_status(r->status, (const char *)out->data, out->len);
        if (r->transport_error && r->sent) c->lost_answer = 1;
        if (!again && r->status == 403 && c->vend_gen && !c->refused_gen) {
            /* vended credentials refused (revoked, expired early): fresh ones, once more */
            w2l__log(W2L_LOG_INFO, WHERE_FMT ": HTTP 403 with vended credentials; "
                     "refreshing them", WHERE_ARGS(c));
            c->refused_gen = c->vend_gen;
            continue;
        }
        if (!again) break;
        if (c->attempts >= s->max_retries) {
            char why[320];
            if (r->transport_error) {
                snprintf(why, sizeof why, "%s", r->error);
            } else {
                char x[256];
                if (!w2l__s3_error_text((const char *)out->data, out->len, x, sizeof x))
                    snprintf(x, sizeof x, "no error body");
                snprintf(why, sizeof why, "HTTP %ld %s", r->status, x);
            }
            rc = w2l__fail(err, W2L_UNAVAILABLE,
                           WHERE_FMT ": %s (gave up after %d attempts; s3.max-retries=%d)",
                           WHERE_ARGS(c), why, c->attempts + 1, s->max_retries);
            break;
        }
        w2l__log(W2L_LOG_DEBUG, WHERE_FMT ": attempt %d failed (%s%ld), retrying", WHERE_ARGS(c),
                 c->attempts + 1, r->transport_error ? "connection, " : "HTTP ", r->status);
        backoff(c->attempts, r->retry_after);
    }
    w2l_buf_release(&tmp);
    if (c->out == &tmp) c->out = NULL;
    return rc;
}

/* An error for a final non-2xx answer. */
static w2l_rc status_error(const s3_call *c, const w2l_buf *body, w2l_error *err)
{
    char x[256];
    long st = c->resp.status;
    if (!body || !w2l__s3_error_text((const char *)body->data, body->len, x, sizeof x)) {
        const char *w = st == 404 ? "NoSuchKey or NoSuchBucket"
                        : st == 403 ? "AccessDenied (check the credentials and the bucket "
                                      "policy)"
                        : st == 412 ? "PreconditionFailed"
                                    : "no error body";
        snprintf(x, sizeof x, "%s", w);
    }
    w2l_rc code = st == 404 ? W2L_NOTFOUND : st == 412 ? W2L_EXISTS : W2L_IO;
    return w2l__fail((w2l_error *)err, code, WHERE_FMT ": HTTP %ld %s%s%s%s", WHERE_ARGS(c), st,
                     x, c->resp.request_id[0] ? " (request id " : "", c->resp.request_id,
                     c->resp.request_id[0] ? ")" : "");
}

static int ok_status(long st) { return st >= 200 && st < 300; }

/* ---- objects ---- */

static int64_t parse_http_date(const char *s)
{
    /* "Wed, 01 Dec 2026 12:00:00 GMT" (RFC 7231 IMF-fixdate) */
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int d, y, hh, mm, ss;
    char mon[4];
    if (sscanf(s, "%*3s, %d %3s %d %d:%d:%d", &d, mon, &y, &hh, &mm, &ss) != 6) return 0;
    const char *m = strstr(months, mon);
    if (!m) return 0;
    int mo = (int)(m - months) / 3 + 1;
    /* days from civil (proleptic Gregorian) */
    int yy = y - (mo <= 2);
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    return ((days * 86400) + hh * 3600 + mm * 60 + ss) * 1000;
}

/* ISO 8601 "2026-12-01T12:00:00.000Z" of listings. */
static int64_t parse_iso_date(const char *s)
{
    int y, mo, d, hh, mm, ss;
    if (sscanf(s, "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &hh, &mm, &ss) != 6) return 0;
    static const char *mons[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    if (mo < 1 || mo > 12) return 0;
    char buf[40];
    snprintf(buf, sizeof buf, "Xxx, %02d %s %04d %02d:%02d:%02d GMT", d, mons[mo - 1], y, hh, mm,
             ss);
    return parse_http_date(buf);
}

w2l_rc w2l__s3_head(w2l__s3 *s, const char *bucket, const char *key, w2l__s3_obj *out,
                    w2l_error *err)
{
    memset(out, 0, sizeof *out);
    s3_call c = { .method = "HEAD", .bucket = bucket, .key = key };
    W2L_TRY(call(s, &c, err));
    if (c.resp.status == 404)
        return w2l__fail(err, W2L_NOTFOUND, "s3://%s/%s: no such object", bucket, key);
    if (!ok_status(c.resp.status)) return status_error(&c, NULL, err);
    out->size = c.resp.content_length == UINT64_MAX ? 0 : c.resp.content_length;
    out->mtime_ms = parse_http_date(c.resp.last_modified);
    snprintf(out->etag, sizeof out->etag, "%s", c.resp.etag);
    return W2L_OK;
}

/* Is bucket/key an object whose stored digest is hex? (settles a lost answer) */
static int is_ours(w2l__s3 *s, const char *bucket, const char *key, const char *hex)
{
    s3_call c = { .method = "HEAD", .bucket = bucket, .key = key };
    w2l_error e = { 0 };
    if (call(s, &c, &e) != W2L_OK) return 0;
    return ok_status(c.resp.status) && strcmp(c.resp.meta_sha256, hex) == 0;
}

w2l_rc w2l__s3_put(w2l__s3 *s, const char *bucket, const char *key, const void *body,
                   size_t len, unsigned flags, w2l_error *err)
{
    unsigned char d[32];
    char hex[65];
    w2l__sha256(body, len, d);
    w2l__hex(d, 32, hex);
    w2l__http_header hs[3];
    size_t nh = 0;
    hs[nh++] = (w2l__http_header){ "x-amz-meta-w2l-sha256", hex };
    if (flags & W2L__S3_IF_NONE_MATCH) hs[nh++] = (w2l__http_header){ "If-None-Match", "*" };
    w2l_buf out = { 0 };
    s3_call c = { .method = "PUT", .bucket = bucket, .key = key, .headers = hs, .nheaders = nh,
                  .body = body, .body_len = len, .body_sha256 = hex, .out = &out };
    w2l_rc rc = call(s, &c, err);
    if (rc == W2L_OK && !ok_status(c.resp.status)) {
        if (c.resp.status == 412 && c.lost_answer && is_ours(s, bucket, key, hex))
            rc = W2L_OK; /* an earlier attempt landed; its answer was lost */
        else if (c.resp.status == 412)
            rc = w2l__fail(err, W2L_EXISTS, "s3://%s/%s exists already", bucket, key);
        else
            rc = status_error(&c, &out, err);
    }
    w2l_buf_release(&out);
    return rc;
}

w2l_rc w2l__s3_get(w2l__s3 *s, const char *bucket, const char *key, uint64_t off, size_t len,
                   void *buf, w2l_error *err)
{
    if (len == 0) return W2L_OK;
    char range[64];
    snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off,
             (unsigned long long)(off + len - 1));
    w2l__http_header hs[1] = { { "Range", range } };
    w2l_buf out = { 0 };
    s3_call c = { .method = "GET", .bucket = bucket, .key = key, .headers = hs, .nheaders = 1,
                  .out = &out, .max_out = len + (1 << 16) };
    w2l_rc rc = call(s, &c, err);
    if (rc == W2L_OK) {
        long st = c.resp.status;
        if (st == 416)
            rc = w2l__fail(err, W2L_CORRUPT, "s3://%s/%s: short read (%zu bytes at %llu are "
                           "past the end)", bucket, key, len, (unsigned long long)off);
        else if (!ok_status(st))
            rc = status_error(&c, &out, err);
        else if (st == 200 && out.len >= off + len)
            memcpy(buf, out.data + off, len); /* a server that ignores Range */
        else if (out.len < len)
            rc = w2l__fail(err, W2L_CORRUPT, "s3://%s/%s: short read (%zu of %zu bytes at %llu)",
                           bucket, key, out.len, len, (unsigned long long)off);
        else
            memcpy(buf, out.data, len);
    }
    w2l_buf_release(&out);
    return rc;
}

w2l_rc w2l__s3_get_all(w2l__s3 *s, const char *bucket, const char *key, w2l_buf *out,
                       char etag[128], w2l_error *err)
{
    etag[0] = '\0';
    s3_call c = { .method = "GET", .bucket = bucket, .key = key, .out = out,
                  .max_out = 1 << 20 };
    W2L_TRY(call(s, &c, err));
    if (c.resp.status == 404)
        return w2l__fail(err, W2L_NOTFOUND, "s3://%s/%s: no such object", bucket, key);
    if (!ok_status(c.resp.status)) {
        w2l_rc rc = status_error(&c, out, err);
        out->len = 0;
        return rc;
    }
    snprintf(etag, 128, "%s", c.resp.etag);
    return W2L_OK;
}

w2l_rc w2l__s3_put_if(w2l__s3 *s, const char *bucket, const char *key, const void *body,
                      size_t len, const char *if_etag, w2l_error *err)
{
    unsigned char d[32];
    char hex[65], quoted[132];
    w2l__sha256(body, len, d);
    w2l__hex(d, 32, hex);
    w2l__http_header hs[2];
    hs[0] = (w2l__http_header){ "x-amz-meta-w2l-sha256", hex };
    if (if_etag) {
        snprintf(quoted, sizeof quoted, "\"%s\"", if_etag);
        hs[1] = (w2l__http_header){ "If-Match", quoted };
    } else {
        hs[1] = (w2l__http_header){ "If-None-Match", "*" };
    }
    w2l_buf out = { 0 };
    s3_call c = { .method = "PUT", .bucket = bucket, .key = key, .headers = hs, .nheaders = 2,
                  .body = body, .body_len = len, .body_sha256 = hex, .out = &out };
    w2l_rc rc = call(s, &c, err);
    long st = c.resp.status;
    if (rc == W2L_OK && !ok_status(st)) {
        if ((st == 412 || st == 409) && c.lost_answer && is_ours(s, bucket, key, hex))
            rc = W2L_OK; /* an earlier attempt landed; its answer was lost */
        else if (st == 412 || st == 409 || (st == 404 && if_etag))
            rc = w2l__fail(err, W2L_CONFLICT, "s3://%s/%s changed meanwhile (HTTP %ld)", bucket,
                           key, st);
        else
            rc = status_error(&c, &out, err);
    }
    w2l_buf_release(&out);
    return rc;
}

w2l_rc w2l__s3_delete(w2l__s3 *s, const char *bucket, const char *key, w2l_error *err)
{
    w2l_buf out = { 0 };
    s3_call c = { .method = "DELETE", .bucket = bucket, .key = key, .out = &out };
    w2l_rc rc = call(s, &c, err);
    if (rc == W2L_OK && !ok_status(c.resp.status) && c.resp.status != 404)
        rc = status_error(&c, &out, err);
    w2l_buf_release(&out);
    return rc;
}

static void base64(const unsigned char *p, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        out[o++] = a[v >> 18 & 63];
        out[o++] = a[v >> 12 & 63];
        out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? a[v & 63] : '=';
    }
    out[o] = '\0';
}

static w2l_rc xml_escape(w2l_buf *b, const char *s, w2l_error *err)
{
    for (; *s; s++) {
        const char *r = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;"
                        : *s == '"' ? "&quot;" : *s == '\'' ? "&apos;" : NULL;
        W2L_TRY(r ? w2l_buf_append(b, r, strlen(r), err) : w2l_buf_append(b, s, 1, err));
    }
    return W2L_OK;
}

typedef struct del_err {
    w2l_buf text;
    size_t n;
} del_err;

static int one_delete_error(void *ctx, const char *inner, size_t len)
{
    del_err *d = ctx;
    w2l_buf k = { 0 };
    char x[256];
    w2l__xml_text(inner, len, "Key", &k);
    /* the error text helper wants an <Error> element: wrap the item */
    w2l_buf wrapped = { 0 };
    w2l_error e = { 0 };
    if (w2l_buf_append(&wrapped, "<Error>", 7, &e) == W2L_OK &&
        w2l_buf_append(&wrapped, inner, len, &e) == W2L_OK &&
        w2l_buf_append(&wrapped, "</Error>", 8, &e) == W2L_OK &&
        w2l__s3_error_text((const char *)wrapped.data, wrapped.len, x, sizeof x)) {
        if (d->n++ < 3)
            w2l__buf_printf(&d->text, &e, "%s%s: %s", d->n > 1 ? "; " : "",
                            k.data ? (char *)k.data : "?", x);
    }
    w2l_buf_release(&wrapped);
    w2l_buf_release(&k);
    return 0;
}

w2l_rc w2l__s3_delete_many(w2l__s3 *s, const char *bucket, const char *const *keys, size_t n,
                           w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    for (size_t at = 0; rc == W2L_OK && at < n; at += DELETE_BATCH) {
        size_t m = W2L_MIN(n - at, (size_t)DELETE_BATCH);
        w2l_buf body = { 0 }, out = { 0 };
        rc = w2l__buf_printf(&body, err, "<Delete><Quiet>true</Quiet>");
        for (size_t i = 0; rc == W2L_OK && i < m; i++) {
            rc = w2l__buf_printf(&body, err, "<Object><Key>");
            if (rc == W2L_OK) rc = xml_escape(&body, keys[at + i], err);
            if (rc == W2L_OK) rc = w2l__buf_printf(&body, err, "</Key></Object>");
        }
        if (rc == W2L_OK) rc = w2l__buf_printf(&body, err, "</Delete>");
        if (rc == W2L_OK) {
            /* DeleteObjects needs a body checksum: Content-MD5 or a SHA-256 one */
            unsigned char d[32];
            char b64[48], hex[65];
            w2l__sha256(body.data, body.len, d);
            base64(d, 32, b64);
            w2l__hex(d, 32, hex);
            w2l__http_header hs[3] = { { "x-amz-checksum-sha256", b64 },
                                       { "x-amz-sdk-checksum-algorithm", "SHA256" },
                                       { "Content-Type", "application/xml" } };
            w2l__query_param q[1] = { { "delete", "" } };
            s3_call c = { .method = "POST", .bucket = bucket, .query = q, .nquery = 1,
                          .headers = hs, .nheaders = 3, .body = body.data,
                          .body_len = body.len, .body_sha256 = hex, .cred_key = keys[at],
                          .out = &out };
            rc = call(s, &c, err);
            if (rc == W2L_OK && !ok_status(c.resp.status)) {
                rc = status_error(&c, &out, err);
            } else if (rc == W2L_OK) {
                del_err d2 = { { 0 }, 0 };
                w2l__xml_each((const char *)out.data, out.len, "Error", one_delete_error, &d2);
                if (d2.n)
                    rc = w2l__fail(err, W2L_IO, "s3 DeleteObjects s3://%s: %zu of %zu keys not "
                                   "deleted: %s%s", bucket, d2.n, m,
                                   d2.text.data ? (char *)d2.text.data : "",
                                   d2.n > 3 ? "; ..." : "");
                w2l_buf_release(&d2.text);
            }
        }
        w2l_buf_release(&body);
        w2l_buf_release(&out);
    }
    return rc;
}

typedef struct list_ctx {
    int (*fn)(void *ctx, const char *key, const w2l__s3_obj *obj);
    void *ctx;
    int stop;
} list_ctx;

static int list_content(void *ctx, const char *inner, size_t len)
{
    list_ctx *l = ctx;
    w2l_buf k = { 0 }, v = { 0 };
    w2l__s3_obj o = { 0 };
    if (w2l__xml_text(inner, len, "Key", &k) && k.data) {
        if (w2l__xml_text(inner, len, "Size", &v) && v.data)
            o.size = strtoull((char *)v.data, NULL, 10);
        if (w2l__xml_text(inner, len, "LastModified", &v) && v.data)
            o.mtime_ms = parse_iso_date((char *)v.data);
        if (w2l__xml_text(inner, len, "ETag", &v) && v.data) {
            const char *e = (char *)v.data;
            size_t el = strlen(e);
            if (el >= 2 && e[0] == '"') e++, el -= 2;
            snprintf(o.etag, sizeof o.etag, "%.*s", (int)el, e);
        }
        l->stop = l->fn(l->ctx, (char *)k.data, &o);
    }
    w2l_buf_release(&k);
    w2l_buf_release(&v);
    return l->stop;
}

static int list_prefix(void *ctx, const char *inner, size_t len)
{
    list_ctx *l = ctx;
    w2l_buf k = { 0 };
    if (w2l__xml_text(inner, len, "Prefix", &k) && k.data)
        l->stop = l->fn(l->ctx, (char *)k.data, NULL);
    w2l_buf_release(&k);
    return l->stop;
}

w2l_rc w2l__s3_list(w2l__s3 *s, const char *bucket, const char *prefix, const char *delimiter,
                    int (*fn)(void *ctx, const char *key, const w2l__s3_obj *obj), void *ctx,
                    w2l_error *err)
{
    w2l_buf out = { 0 }, token = { 0 }, trunc = { 0 };
    list_ctx l = { fn, ctx, 0 };
    w2l_rc rc = W2L_OK;
    for (int page = 0;; page++) {
        w2l__query_param q[4];
        size_t nq = 0;
        q[nq++] = (w2l__query_param){ "list-type", "2" };
        q[nq++] = (w2l__query_param){ "prefix", prefix ? prefix : "" };
        if (delimiter) q[nq++] = (w2l__query_param){ "delimiter", delimiter };
        if (page > 0) q[nq++] = (w2l__query_param){ "continuation-token", (char *)token.data };
        s3_call c = { .method = "GET", .bucket = bucket, .query = q, .nquery = nq,
                      .cred_key = prefix ? prefix : "", .out = &out, .max_out = 64 << 20 };
        rc = call(s, &c, err);
        if (rc != W2L_OK) break;
        if (c.resp.status == 404) {
            rc = w2l__fail(err, W2L_NOTFOUND, "s3 list s3://%s/%s: no such bucket", bucket,
                           prefix ? prefix : "");
            break;
        }
        if (!ok_status(c.resp.status)) {
            rc = status_error(&c, &out, err);
            break;
        }
        const char *x = (const char *)out.data;
        w2l__xml_each(x, out.len, "Contents", list_content, &l);
        if (!l.stop) w2l__xml_each(x, out.len, "CommonPrefixes", list_prefix, &l);
        if (l.stop) break;
        int more = w2l__xml_text(x, out.len, "IsTruncated", &trunc) && trunc.data &&
                   strcmp((char *)trunc.data, "true") == 0;
        if (!more) break;
        if (!w2l__xml_text(x, out.len, "NextContinuationToken", &token) || !token.data ||
            !*(char *)token.data) {
            rc = w2l__fail(err, W2L_CORRUPT, "s3 list s3://%s/%s: truncated listing without "
                           "NextContinuationToken", bucket, prefix ? prefix : "");
            break;
        }
    }
    w2l_buf_release(&out);
    w2l_buf_release(&token);
    w2l_buf_release(&trunc);
    return rc;
}

/* ---- multipart uploads ---- */

w2l_rc w2l__s3_mpu_create(w2l__s3 *s, const char *bucket, const char *key, char **upload_id,
                          w2l_error *err)
{
    *upload_id = NULL;
    w2l_buf out = { 0 }, id = { 0 };
    w2l__query_param q[1] = { { "uploads", "" } };
    s3_call c = { .method = "POST", .bucket = bucket, .key = key, .query = q, .nquery = 1,
                  .out = &out };
    w2l_rc rc = call(s, &c, err);
    if (rc == W2L_OK && !ok_status(c.resp.status)) rc = status_error(&c, &out, err);
    if (rc == W2L_OK) {
        if (!w2l__xml_text((const char *)out.data, out.len, "UploadId", &id) || !id.data ||
            !*(char *)id.data)
            rc = w2l__fail(err, W2L_CORRUPT, "s3 multipart upload of s3://%s/%s: no UploadId "
                           "in the answer", bucket, key);
        else if (!(*upload_id = w2l__strdup((char *)id.data)))
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l_buf_release(&out);
    w2l_buf_release(&id);
    return rc;
}

w2l_rc w2l__s3_mpu_part(w2l__s3 *s, const char *bucket, const char *key, const char *upload_id,
                        int part, const void *body, size_t len, char etag[128], w2l_error *err)
{
    char pn[16];
    snprintf(pn, sizeof pn, "%d", part);
    w2l__query_param q[2] = { { "partNumber", pn }, { "uploadId", upload_id } };
    w2l_buf out = { 0 };
    s3_call c = { .method = "PUT", .bucket = bucket, .key = key, .query = q, .nquery = 2,
                  .body = body, .body_len = len, .out = &out };
    w2l_rc rc = call(s, &c, err);
    if (rc == W2L_OK && !ok_status(c.resp.status)) rc = status_error(&c, &out, err);
    if (rc == W2L_OK && !c.resp.etag[0])
        rc = w2l__fail(err, W2L_CORRUPT, "s3 upload of part %d of s3://%s/%s: no ETag in the "
                       "answer", part, bucket, key);
    if (rc == W2L_OK) snprintf(etag, 128, "%s", c.resp.etag);
    if (rc != W2L_OK) w2l__error_prefix(err, "part %d: ", part);
    w2l_buf_release(&out);
    return rc;
}

w2l_rc w2l__s3_mpu_complete(w2l__s3 *s, const char *bucket, const char *key,
                            const char *upload_id, char (*etags)[128], int nparts,
                            unsigned flags, w2l_error *err)
{
    w2l_buf body = { 0 }, out = { 0 };
    w2l_rc rc = w2l__buf_printf(&body, err, "<CompleteMultipartUpload>");
    for (int i = 0; rc == W2L_OK && i < nparts; i++)
        rc = w2l__buf_printf(&body, err, "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag>"
                             "</Part>", i + 1, etags[i]);
    if (rc == W2L_OK) rc = w2l__buf_printf(&body, err, "</CompleteMultipartUpload>");
    w2l__query_param q[1] = { { "uploadId", upload_id } };
    w2l__http_header hs[2] = { { "Content-Type", "application/xml" }, { "If-None-Match", "*" } };
    s3_call c = { .method = "POST", .bucket = bucket, .key = key, .query = q, .nquery = 1,
                  .headers = hs, .nheaders = (flags & W2L__S3_IF_NONE_MATCH) ? 2 : 1,
                  .body = body.data, .body_len = body.len, .out = &out };
    if (rc == W2L_OK) rc = call(s, &c, err);
    if (rc == W2L_OK) {
        char x[256];
        if (c.resp.status == 404 && c.lost_answer) {
            /* NoSuchUpload after a lost answer: completed by that attempt if the object is
             * there now */
            w2l__s3_obj o;
            w2l_error e2 = { 0 };
            if (w2l__s3_head(s, bucket, key, &o, &e2) != W2L_OK)
                rc = status_error(&c, &out, err);
        } else if (c.resp.status == 412) {
            rc = w2l__fail(err, W2L_EXISTS, "s3://%s/%s exists already", bucket, key);
        } else if (!ok_status(c.resp.status)) {
            rc = status_error(&c, &out, err);
        } else if (w2l__s3_error_text((const char *)out.data, out.len, x, sizeof x)) {
            /* S3 may answer 200 and report the failure in the body */
            rc = w2l__fail(err, W2L_IO, "s3 complete multipart upload of s3://%s/%s: %s",
                           bucket, key, x);
        }
    }
    w2l_buf_release(&body);
    w2l_buf_release(&out);
    return rc;
}

void w2l__s3_mpu_abort(w2l__s3 *s, const char *bucket, const char *key, const char *upload_id)
{
    w2l__query_param q[1] = { { "uploadId", upload_id } };
    s3_call c = { .method = "DELETE", .bucket = bucket, .key = key, .query = q, .nquery = 1 };
    w2l_error e = { 0 };
    if (call(s, &c, &e) != W2L_OK || (!ok_status(c.resp.status) && c.resp.status != 404))
        w2l__log(W2L_LOG_WARN, "s3: abort of multipart upload of s3://%s/%s failed (%s%ld); "
                 "its parts stay until a lifecycle rule (AbortIncompleteMultipartUpload) "
                 "removes them", bucket, key, e.msg[0] ? e.msg : "HTTP ", c.resp.status);
}
