/*
 * The "s3" file IO, internal side: the pieces it is built from, one file each.
 *
 *   sha256.c     SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104)
 *   sigv4.c      AWS Signature Version 4: URI encoding, canonical request, signature
 *   http.c       the only user of libcurl: one request, pooled connections
 *   s3_xml.c     the few XML answers S3 gives (errors, listings, uploads)
 *   s3_cred.c    credentials: environment, shared profile files, instance metadata
 *   s3_vend.c    credentials a catalog vends per table location, refreshed through it
 *   s3_client.c  S3 operations with retries (PUT, ranged GET, HEAD, list, delete, multipart)
 *   fileio_s3.c  the w2l_fileio plug-in on top of s3_client.c
 * Described for users in w2l-s3(7).
 */
#ifndef W2L_S3_H
#define W2L_S3_H

#include "io.h"

/* ---- sha256.c ---- */
typedef struct w2l__sha256_ctx { /* not "w2l__sha256": that names the one-shot function */
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} w2l__sha256_ctx;
void w2l__sha256_init(w2l__sha256_ctx *s);
void w2l__sha256_update(w2l__sha256_ctx *s, const void *p, size_t n);
void w2l__sha256_final(w2l__sha256_ctx *s, unsigned char out[32]);
void w2l__sha256(const void *p, size_t n, unsigned char out[32]);
void w2l__hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
                      unsigned char out[32]);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void w2l__hex(const unsigned char *p, size_t n, char *out);

/* ---- sigv4.c ---- */
typedef struct w2l__aws_cred {
    char *access_key, *secret_key, *session_token; /* session_token may be NULL */
    int64_t expires_ms;                             /* 0: does not expire */
} w2l__aws_cred;

typedef struct w2l__http_header {
    const char *name, *value;
} w2l__http_header;

typedef struct w2l__query_param {
    const char *name, *value; /* not encoded; value "" for a bare "?uploads" */
} w2l__query_param;

/* Appends s[0..n) encoded as AWS wants in URIs: A-Z a-z 0-9 - . _ ~ stay, '/' stays when
 * keep_slash, every other byte becomes %XX (upper-case hex; a space is %20, never '+'). */
w2l_rc w2l__aws_uri_encode(w2l_buf *out, const char *s, size_t n, int keep_slash,
                           w2l_error *err);
/* Appends the canonical query string of params: each name and value encoded, pairs sorted by
 * encoded name then value, joined by '&' ("list-type=2&prefix=a%2Fb"). The same string serves
 * as the query of the URL sent. */
w2l_rc w2l__sigv4_query(w2l_buf *out, const w2l__query_param *params, size_t n,
                        w2l_error *err);

typedef struct w2l__sigv4_req {
    const char *method;           /* "GET" */
    const char *canonical_uri;    /* path, already encoded: "/bucket/a%20b.txt" */
    const char *canonical_query;  /* from w2l__sigv4_query, or "" */
    const w2l__http_header *headers; /* every header to sign (host, x-amz-date,
                                      * x-amz-content-sha256, range, x-amz-security-token ...) */
    size_t nheaders;
    const char *payload_hash;     /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *region, *service; /* "us-east-1", "s3" */
    const char *amz_date;         /* "20130524T000000Z"; its first 8 characters are the date */
} w2l__sigv4_req;

/* Signs r: appends the value of the Authorization header to auth ("AWS4-HMAC-SHA256
 * Credential=AK/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;...,
 * Signature=<64 hex>"). Header names are lower-cased, values trimmed with inner runs of
 * spaces folded, headers sorted by name. canonical and string_to_sign, when not NULL,
 * receive the intermediate texts (for tests and for explaining SignatureDoesNotMatch). */
w2l_rc w2l__sigv4_sign(const w2l__sigv4_req *r, const w2l__aws_cred *cred, w2l_buf *auth,
                       w2l_buf *canonical, w2l_buf *string_to_sign, w2l_error *err);
/* "20130524T000000Z" for ms since the epoch (UTC) into out[17]. */
void w2l__amz_date(int64_t ms, char out[17]);

/* ---- http.c ---- */
typedef struct w2l__http w2l__http; /* a pool of connections; thread-safe */

typedef struct w2l__http_req {
    const char *method; /* GET, PUT, POST, HEAD, DELETE */
    const char *url;    /* full URL, query included */
    const w2l__http_header *headers;
    size_t nheaders;
    const void *body; /* request body (PUT/POST), may be NULL */
    size_t body_len;
    /* Response body: appended to `out` when not NULL, and at most max_out bytes of it
     * (0: no limit); a longer body fails with W2L_IO. */
    w2l_buf *out;
    size_t max_out;
    long timeout_ms;         /* whole request; 0: none */
    long connect_timeout_ms; /* 0: libcurl's default */
} w2l__http_req;

typedef struct w2l__http_resp {
    long status;             /* 0 when no answer came */
    int transport_error;     /* 1: connection refused, reset, timed out, cut mid-answer */
    int sent;                /* 1: the request may have reached the server (outcome unknown
                              * when transport_error) */
    uint64_t content_length; /* Content-Length, or UINT64_MAX when absent */
    char etag[128];          /* ETag without quotes */
    char last_modified[64];  /* Last-Modified as sent */
    char content_range[96];  /* Content-Range as sent */
    char request_id[96];     /* x-amz-request-id */
    char retry_after[32];    /* Retry-After */
    char meta_sha256[72];    /* x-amz-meta-w2l-sha256: what the s3 file IO stores with each
                              * object it writes, to recognise its own body after a lost answer */
    char error[256];         /* libcurl's message when transport_error */
} w2l__http_resp;

w2l_rc w2l__http_global_init(w2l_error *err); /* from w2l_global_init() */
void w2l__http_global_cleanup(void);
w2l_rc w2l__http_new(w2l__http **out, w2l_error *err);
void w2l__http_free(w2l__http *h); /* NULL is a no-op */
/* Performs one request. W2L_OK whenever the request ran, whatever the status or transport
 * error (both in *resp); another code only for what prevents trying (out of memory, a bad
 * URL). */
w2l_rc w2l__http_do(w2l__http *h, const w2l__http_req *req, w2l__http_resp *resp,
                    w2l_error *err);

/* ---- s3_xml.c ---- */
/* The text of the first <tag>...</tag> in xml[0..n), entities decoded, into out (replaced,
 * NUL-terminated); 0 when absent. Namespaces and attributes are ignored. */
int w2l__xml_text(const char *xml, size_t n, const char *tag, w2l_buf *out);
/* Calls fn for each <tag>...</tag> element in xml[0..n) with its inner text (raw, for
 * nested w2l__xml_text calls); stops when fn returns non-zero. Returns elements seen. */
size_t w2l__xml_each(const char *xml, size_t n, const char *tag,
                     int (*fn)(void *ctx, const char *inner, size_t len), void *ctx);
/* An S3 <Error> body as "NoSuchBucket: The specified bucket does not exist" into out;
 * 0 when xml holds no <Error>. */
int w2l__s3_error_text(const char *xml, size_t n, char *out, size_t size);

/* ---- s3_cred.c ---- */
typedef struct w2l__cred_chain w2l__cred_chain; /* thread-safe; refreshes before expiry */

typedef struct w2l__cred_opts {
    const char *profile;        /* s3.profile, else AWS_PROFILE, else "default" */
    const char *imds_endpoint;  /* NULL: http://169.254.169.254 (tests point it elsewhere) */
    int imds_disabled;          /* AWS_EC2_METADATA_DISABLED=true also disables it */
} w2l__cred_opts;

/* Finds credentials in the order AWS tools use: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 * / AWS_SESSION_TOKEN; then the profile in AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials)
 * and AWS_CONFIG_FILE (~/.aws/config, "[profile NAME]" sections); then IMDSv2. The first
 * source that has a key pair wins. W2L_NOTFOUND names every place looked at. */
w2l_rc w2l__cred_chain_new(const w2l__cred_opts *o, w2l__http *http, w2l__cred_chain **out,
                           w2l_error *err);
void w2l__cred_chain_free(w2l__cred_chain *c);
/* A copy of the current credentials (refreshed when within 5 minutes of expiry) into out;
 * free with w2l__aws_cred_clear. "where" names the source for messages ("environment",
 * "profile default in ~/.aws/credentials", "instance metadata"). */
w2l_rc w2l__cred_get(w2l__cred_chain *c, w2l__aws_cred *out, const char **where,
                     w2l_error *err);
void w2l__aws_cred_clear(w2l__aws_cred *c);
/* The region from the profile's config section ("region = ..."), or NULL; static storage
 * of the chain, valid while it lives. */
const char *w2l__cred_region(w2l__cred_chain *c);

/* ---- s3_vend.c ---- */
/* Loads table ns.table again so that fresh credentials are put (w2l__vend_put); hint is
 * the entry's (NULL none). An error names the table, the catalog and the HTTP status.
 * Called without locks held, at most once at a time per entry. */
typedef w2l_rc (*w2l__vend_refresh_fn)(const void *owner, const char *ns, const char *table,
                                       const char *hint, w2l_error *err);

/* A catalog handle (owner) open for group (the catalog's identity: URI and warehouse) that
 * can refresh the group's entries with fn; detach before the owner goes (waits for a
 * refresh of its in flight). */
w2l_rc w2l__vend_attach(const void *owner, const char *group, w2l__vend_refresh_fn fn,
                        w2l_error *err);
void w2l__vend_detach(const void *owner);

/* Puts (or replaces) group's credentials for every object under prefix ("s3://bucket/path";
 * s3a://, s3n:// alike; matched at '/' boundaries), vended for table ns.table. hint: what
 * the group's refresher needs to get them again besides the table (NULL none). region: the
 * region to sign for, NULL: the file IO's. cred->expires_ms 0: they do not expire. The
 * strings are copied; the entry lives until w2l__vend_reset. */
w2l_rc w2l__vend_put(const char *group, const char *prefix, const char *ns, const char *table,
                     const char *hint, const w2l__aws_cred *cred, const char *region,
                     w2l_error *err);
/* Forgets every entry (w2l_global_cleanup; tests). */
void w2l__vend_reset(void);
/* Entries registered (tests). */
size_t w2l__vend_count(void);

typedef struct w2l__vend_use {
    int found;          /* 0: no entry holds the object; sign with the file IO's own */
    w2l__aws_cred cred; /* a copy: w2l__aws_cred_clear */
    char region[64];    /* "" none */
    unsigned gen;       /* which put these came from (for refused_gen) */
} w2l__vend_use;
/* The credentials for s3://bucket/key (key may be a listing prefix): the entry with the
 * longest prefix holding it (the newest of equal ones), refreshed first, by a refresher of
 * its group, when due or when refused_gen (non-zero) is its generation (the store answered
 * 403 with them). A failed refresh of credentials not yet expired (and not refused) logs a
 * warning and uses them; otherwise it is the refresher's error (retriable). Expired ones
 * with no refresher attached: W2L_UNAVAILABLE naming the table. */
w2l_rc w2l__vend_get(const char *bucket, const char *key, unsigned refused_gen,
                     w2l__vend_use *out, w2l_error *err);

/* ---- s3_client.c ---- */
typedef struct w2l__s3 w2l__s3; /* thread-safe */

/* Where and how to reach the store, from the s3.* configuration keys (w2l-s3(7)). */
w2l_rc w2l__s3_open(const w2l_conf *conf, w2l__s3 **out, w2l_error *err);
void w2l__s3_close(w2l__s3 *s); /* NULL is a no-op */
uint64_t w2l__s3_part_size(const w2l__s3 *s);
uint64_t w2l__s3_multipart_threshold(const w2l__s3 *s);
int w2l__s3_upload_concurrency(const w2l__s3 *s);

/* Splits "s3://bucket/key" (also s3a:// and s3n://) into fresh bucket and key (key may be
 * ""); W2L_CONFIG naming the path when it is not one. */
w2l_rc w2l__s3_split(const char *uri, char **bucket, char **key, w2l_error *err);

typedef struct w2l__s3_obj {
    uint64_t size;
    int64_t mtime_ms;
    char etag[128];
} w2l__s3_obj;

enum {
    W2L__S3_IF_NONE_MATCH = 1u << 0 /* fail with W2L_EXISTS when the key exists (412) */
};

/* One PUT of len bytes. W2L_EXISTS when W2L__S3_IF_NONE_MATCH and the key exists (and it
 * is not this very body, landed by an attempt whose answer was lost). */
w2l_rc w2l__s3_put(w2l__s3 *s, const char *bucket, const char *key, const void *body,
                   size_t len, unsigned flags, w2l_error *err);
/* Bytes [off, off+len) into buf (exactly len; W2L_CORRUPT "short read" past the end). */
w2l_rc w2l__s3_get(w2l__s3 *s, const char *bucket, const char *key, uint64_t off, size_t len,
                   void *buf, w2l_error *err);
/* The whole object into out and its ETag (without quotes) into etag; W2L_NOTFOUND. */
w2l_rc w2l__s3_get_all(w2l__s3 *s, const char *bucket, const char *key, w2l_buf *out,
                       char etag[128], w2l_error *err);
/* A conditional PUT: with If-Match: "if_etag", or If-None-Match: * when if_etag is NULL;
 * W2L_CONFLICT when the server refuses it (412, or 409 from a concurrent conditional
 * write), unless it is this very body, landed by an attempt whose answer was lost. */
w2l_rc w2l__s3_put_if(w2l__s3 *s, const char *bucket, const char *key, const void *body,
                      size_t len, const char *if_etag, w2l_error *err);
w2l_rc w2l__s3_head(w2l__s3 *s, const char *bucket, const char *key, w2l__s3_obj *out,
                    w2l_error *err); /* W2L_NOTFOUND */
w2l_rc w2l__s3_delete(w2l__s3 *s, const char *bucket, const char *key,
                      w2l_error *err); /* W2L_OK when absent */
/* DeleteObjects, 1,000 keys a request; a key absent is no error. */
w2l_rc w2l__s3_delete_many(w2l__s3 *s, const char *bucket, const char *const *keys, size_t n,
                           w2l_error *err);
/* ListObjectsV2 under prefix with delimiter (NULL: none), following continuation tokens:
 * fn(ctx, key, obj (NULL for a common prefix)) for each; stops when fn returns non-zero.
 * W2L_NOTFOUND for a missing bucket. */
w2l_rc w2l__s3_list(w2l__s3 *s, const char *bucket, const char *prefix, const char *delimiter,
                    int (*fn)(void *ctx, const char *key, const w2l__s3_obj *obj), void *ctx,
                    w2l_error *err);

/* Multipart upload: create, parts 1..10000 (each but the last >= 5 MiB), complete, abort. */
w2l_rc w2l__s3_mpu_create(w2l__s3 *s, const char *bucket, const char *key, char **upload_id,
                          w2l_error *err);
w2l_rc w2l__s3_mpu_part(w2l__s3 *s, const char *bucket, const char *key, const char *upload_id,
                        int part, const void *body, size_t len, char etag[128], w2l_error *err);
w2l_rc w2l__s3_mpu_complete(w2l__s3 *s, const char *bucket, const char *key,
                            const char *upload_id, char (*etags)[128], int nparts,
                            unsigned flags, w2l_error *err);
void w2l__s3_mpu_abort(w2l__s3 *s, const char *bucket, const char *key, const char *upload_id);

#endif
