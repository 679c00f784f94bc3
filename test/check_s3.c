/*
 * lib/io, the S3 client (s3_client.c) and the "s3" file IO (fileio_s3.c) against the test
 * HTTP server (test/support/http_stub.c): what is sent (signed headers, bodies, queries),
 * retries, lost answers, errors named with bucket and key, multipart uploads and their
 * abort, batch deletes, listings; the registry of vended credentials (s3_vend.c) and the
 * client signing with them. Stores without the behaviour under test (conditional
 * writes, 200 answers carrying an error) are only reachable this way.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg.h"
#include "common/thread.h"
#include "io/s3.h"
#include "support/http_stub.h"
#include "support/support.h"

#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static w2l_error err;
static http_stub *stub;
static w2l_conf *conf;

/* A conf pointing at the stub, with fixed keys (no credential chain) and max-retries n. */
static w2l_conf *stub_conf(int retries)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ptr_nonnull(c);
    char n[16];
    snprintf(n, sizeof n, "%d", retries);
    ck_assert_ok(w2l_conf_set(c, "s3.endpoint", http_stub_url(stub), &err), err);
    ck_assert_ok(w2l_conf_set(c, "s3.access-key-id", "AKIDTEST", &err), err);
    ck_assert_ok(w2l_conf_set(c, "s3.secret-access-key", SECRET, &err), err);
    ck_assert_ok(w2l_conf_set(c, "s3.max-retries", n, &err), err);
    ck_assert_ok(w2l_conf_set(c, "s3.multipart-threshold", "5MiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "s3.part-size", "5MiB", &err), err);
    return c;
}

static w2l__s3 *start(const http_stub_route *routes, size_t n, int retries)
{
    stub = http_stub_start(routes, n);
    conf = stub_conf(retries);
    w2l__s3 *s;
    ck_assert_ok(w2l__s3_open(conf, &s, &err), err);
    return s;
}

static void stop(w2l__s3 *s)
{
    w2l__s3_close(s);
    w2l_conf_free(conf);
    http_stub_stop(stub);
    conf = NULL;
    stub = NULL;
}

static void hex_sha256(const void *p, size_t n, char out[65])
{
    unsigned char d[32];
    w2l__sha256(p, n, d);
    w2l__hex(d, 32, out);
}

static const char *hdr(const http_stub_request *r, const char *name)
{
    static char v[1024];
    return http_stub_header(r, name, v, sizeof v);
}

#define SLOWDOWN "<Error><Code>SlowDown</Code><Message>Please reduce your request " \
                 "rate.</Message></Error>"

START_TEST(put_signed_and_retried)
{
    static const http_stub_route r[] = {
        {.method = "PUT", .prefix = "/bkt/a%20b/k%2Bv.txt", .status = 503, .count = 2,
         .body = SLOWDOWN},
        {.method = "PUT", .prefix = "/bkt/a%20b/k%2Bv.txt", .status = 200,
         .headers = "ETag: \"e1\"\r\n"},
    };
    w2l__s3 *s = start(r, 2, 3);
    const char body[] = "hello, lake";
    ck_assert_ok(w2l__s3_put(s, "bkt", "a b/k+v.txt", body, strlen(body), W2L__S3_IF_NONE_MATCH,
                             &err), err);
    ck_assert_uint_eq(http_stub_nrequests(stub), 3);
    char hex[65];
    hex_sha256(body, strlen(body), hex);
    for (size_t i = 0; i < 3; i++) {
        const http_stub_request *q = http_stub_get(stub, i);
        ck_assert_str_eq(q->body, body);
        /* over http the payload is signed with its real digest */
        ck_assert_str_eq(hdr(q, "x-amz-content-sha256"), hex);
        ck_assert_str_eq(hdr(q, "x-amz-meta-w2l-sha256"), hex);
        ck_assert_str_eq(hdr(q, "If-None-Match"), "*");
        const char *auth = hdr(q, "Authorization");
        ck_assert_ptr_nonnull(auth);
        ck_assert_msg(strncmp(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/", 37) == 0, "%s", auth);
        ck_assert_msg(strstr(auth, "/us-east-1/s3/aws4_request"), "%s", auth);
        ck_assert_msg(strstr(auth, "host;if-none-match;x-amz-content-sha256;x-amz-date;"
                                   "x-amz-meta-w2l-sha256"), "%s", auth);
        ck_assert_ptr_null(strstr(q->headers, SECRET));
    }
    stop(s);
}
END_TEST

START_TEST(put_gives_up_naming_bucket_and_key)
{
    static const http_stub_route r[] = {
        {.method = "PUT", .status = 500,
         .body = "<Error><Code>InternalError</Code><Message>We encountered an internal error."
                 "</Message><RequestId>RQ9</RequestId></Error>"},
    };
    w2l__s3 *s = start(r, 1, 1);
    w2l_rc rc = w2l__s3_put(s, "bkt", "lake/db/t/data/x.parquet", "x", 1, 0, &err);
    ck_assert_int_eq(rc, W2L_UNAVAILABLE);
    ck_assert_uint_eq(http_stub_nrequests(stub), 2);
    ck_assert_msg(strstr(err.msg, "s3://bkt/lake/db/t/data/x.parquet") &&
                      strstr(err.msg, "InternalError") && strstr(err.msg, "2 attempts"),
                  "%s", err.msg);
    ck_assert_ptr_null(strstr(err.msg, SECRET));
    stop(s);
}
END_TEST

START_TEST(errors_are_named)
{
    static const http_stub_route r[] = {
        {.method = "GET", .prefix = "/nob/", .status = 404,
         .body = "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist"
                 "</Message><BucketName>nob</BucketName></Error>"},
        {.method = "PUT", .prefix = "/bkt/denied", .status = 403,
         .body = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"},
        {.method = "PUT", .prefix = "/bkt/sig", .status = 403,
         .body = "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we "
                 "calculated does not match the signature you provided.</Message></Error>"},
        {.method = "HEAD", .prefix = "/bkt/none", .status = 404},
        {.method = "PUT", .prefix = "/bkt/taken", .status = 412},
    };
    w2l__s3 *s = start(r, W2L_ARRAY_LEN(r), 2);
    char buf[4];
    ck_assert_int_eq(w2l__s3_get(s, "nob", "k", 0, 4, buf, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "NoSuchBucket") && strstr(err.msg, "s3://nob/k"), "%s",
                  err.msg);
    ck_assert_int_eq(w2l__s3_put(s, "bkt", "denied", "x", 1, 0, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "AccessDenied") && strstr(err.msg, "s3://bkt/denied"), "%s",
                  err.msg);
    ck_assert_int_eq(w2l__s3_put(s, "bkt", "sig", "x", 1, 0, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "SignatureDoesNotMatch"), "%s", err.msg);
    w2l__s3_obj o;
    ck_assert_int_eq(w2l__s3_head(s, "bkt", "none", &o, &err), W2L_NOTFOUND);
    /* a conditional PUT refused, with no attempt lost: the object is someone else's */
    ck_assert_int_eq(w2l__s3_put(s, "bkt", "taken", "x", 1, W2L__S3_IF_NONE_MATCH, &err),
                     W2L_EXISTS);
    /* 4xx are not retried */
    ck_assert_uint_eq(http_stub_nrequests(stub), 5);
    stop(s);
}
END_TEST

/* The answer of the first PUT is lost (the connection closes), the retry meets 412: the
 * object there is ours when it carries our digest. */
static char ours_hdr[128], theirs_hdr[128];

START_TEST(lost_answer_then_412)
{
    const char body[] = "{\"format-version\":2}";
    char hex[65];
    hex_sha256(body, strlen(body), hex);
    snprintf(ours_hdr, sizeof ours_hdr, "x-amz-meta-w2l-sha256: %s\r\n", hex);
    snprintf(theirs_hdr, sizeof theirs_hdr, "x-amz-meta-w2l-sha256: %064d\r\n", 0);
    static http_stub_route r[] = {
        {.method = "PUT", .prefix = "/bkt/m1", .status = 0, .count = 1},
        {.method = "PUT", .prefix = "/bkt/m1", .status = 412},
        {.method = "HEAD", .prefix = "/bkt/m1", .status = 200},
        {.method = "PUT", .prefix = "/bkt/m2", .status = 0, .count = 1},
        {.method = "PUT", .prefix = "/bkt/m2", .status = 412},
        {.method = "HEAD", .prefix = "/bkt/m2", .status = 200},
    };
    r[2].headers = ours_hdr;
    r[5].headers = theirs_hdr;
    w2l__s3 *s = start(r, W2L_ARRAY_LEN(r), 2);
    ck_assert_ok(w2l__s3_put(s, "bkt", "m1", body, strlen(body), W2L__S3_IF_NONE_MATCH, &err),
                 err);
    ck_assert_int_eq(http_stub_hits(stub, 2), 1);
    ck_assert_int_eq(w2l__s3_put(s, "bkt", "m2", body, strlen(body), W2L__S3_IF_NONE_MATCH, &err),
                     W2L_EXISTS);
    stop(s);
}
END_TEST

/* The lease's conditional writes: a whole GET gives the ETag; a PUT over it sends
 * If-Match with it, quoted, and a first PUT If-None-Match: *; 412 (or 409, a concurrent
 * conditional write) is W2L_CONFLICT. */
START_TEST(conditional_put_and_tagged_get)
{
    static const http_stub_route r[] = {
        {.method = "GET", .prefix = "/bkt/LEASE", .status = 200, .body = "{\"epoch\":3}",
         .headers = "ETag: \"abc123\"\r\n", .count = 1},
        {.method = "GET", .prefix = "/bkt/LEASE", .status = 404,
         .body = "<Error><Code>NoSuchKey</Code></Error>"},
        {.method = "PUT", .prefix = "/bkt/LEASE", .status = 200, .count = 2},
        {.method = "PUT", .prefix = "/bkt/LEASE", .status = 412, .count = 1,
         .body = "<Error><Code>PreconditionFailed</Code></Error>"},
        {.method = "PUT", .prefix = "/bkt/LEASE", .status = 409,
         .body = "<Error><Code>ConditionalRequestConflict</Code></Error>"},
    };
    w2l__s3 *s = start(r, W2L_ARRAY_LEN(r), 0);
    w2l_buf b = {0};
    char etag[128];
    ck_assert_ok(w2l__s3_get_all(s, "bkt", "LEASE", &b, etag, &err), err);
    ck_assert_str_eq(etag, "abc123");
    ck_assert_int_eq(b.len, 11);
    ck_assert_int_eq(memcmp(b.data, "{\"epoch\":3}", 11), 0);
    ck_assert_str_eq(hdr(http_stub_get(stub, 0), "Range") ? "ranged" : "whole", "whole");
    b.len = 0;
    ck_assert_int_eq(w2l__s3_get_all(s, "bkt", "LEASE", &b, etag, &err), W2L_NOTFOUND);
    w2l_buf_release(&b);
    ck_assert_ok(w2l__s3_put_if(s, "bkt", "LEASE", "x", 1, "abc123", &err), err);
    ck_assert_str_eq(hdr(http_stub_get(stub, 2), "If-Match"), "\"abc123\"");
    ck_assert_ptr_null(hdr(http_stub_get(stub, 2), "If-None-Match"));
    ck_assert_ok(w2l__s3_put_if(s, "bkt", "LEASE", "y", 1, NULL, &err), err);
    ck_assert_str_eq(hdr(http_stub_get(stub, 3), "If-None-Match"), "*");
    ck_assert_ptr_null(hdr(http_stub_get(stub, 3), "If-Match"));
    ck_assert_int_eq(w2l__s3_put_if(s, "bkt", "LEASE", "z", 1, "abc123", &err), W2L_CONFLICT);
    ck_assert_msg(strstr(err.msg, "s3://bkt/LEASE") && strstr(err.msg, "412"), "%s", err.msg);
    ck_assert_int_eq(w2l__s3_put_if(s, "bkt", "LEASE", "z", 1, "abc123", &err), W2L_CONFLICT);
    stop(s);
}
END_TEST

START_TEST(ranged_get)
{
    static const http_stub_route r[] = {
        {.method = "GET", .prefix = "/bkt/f", .status = 206, .body = "0123456789",
         .headers = "Content-Range: bytes 10-19/100\r\n"},
        {.method = "GET", .prefix = "/bkt/short", .status = 206, .body = "0123"},
        {.method = "GET", .prefix = "/bkt/past", .status = 416,
         .body = "<Error><Code>InvalidRange</Code></Error>"},
    };
    w2l__s3 *s = start(r, W2L_ARRAY_LEN(r), 0);
    char buf[10];
    ck_assert_ok(w2l__s3_get(s, "bkt", "f", 10, 10, buf, &err), err);
    ck_assert_int_eq(memcmp(buf, "0123456789", 10), 0);
    ck_assert_str_eq(hdr(http_stub_get(stub, 0), "Range"), "bytes=10-19");
    ck_assert_int_eq(w2l__s3_get(s, "bkt", "short", 0, 10, buf, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "short read"), "%s", err.msg);
    ck_assert_int_eq(w2l__s3_get(s, "bkt", "past", 200, 10, buf, &err), W2L_CORRUPT);
    stop(s);
}
END_TEST

START_TEST(session_token_signed)
{
    static const http_stub_route r[] = {{.method = "DELETE", .status = 204}};
    stub = http_stub_start(r, 1);
    conf = stub_conf(0);
    ck_assert_ok(w2l_conf_set(conf, "s3.session-token", "TOKEN/1+x=", &err), err);
    w2l__s3 *s;
    ck_assert_ok(w2l__s3_open(conf, &s, &err), err);
    ck_assert_ok(w2l__s3_delete(s, "bkt", "gone", &err), err);
    const http_stub_request *q = http_stub_get(stub, 0);
    ck_assert_str_eq(hdr(q, "x-amz-security-token"), "TOKEN/1+x=");
    ck_assert_msg(strstr(hdr(q, "Authorization"), "x-amz-security-token"), "%s",
                  hdr(q, "Authorization"));
    /* the empty body's digest */
    ck_assert_str_eq(hdr(q, "x-amz-content-sha256"),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    stop(s);
}
END_TEST

START_TEST(bad_configuration)
{
    static const http_stub_route r[] = {{.status = 200}};
    stub = http_stub_start(r, 1);
    conf = stub_conf(0);
    w2l__s3 *s = NULL;
    ck_assert_ok(w2l_conf_set(conf, "s3.endpoint", "ftp://x", &err), err);
    ck_assert_int_eq(w2l__s3_open(conf, &s, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "s3.endpoint"), "%s", err.msg);
    w2l_conf_free(conf);
    conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(conf, "s3.access-key-id", "AK", &err), err);
    ck_assert_int_eq(w2l__s3_open(conf, &s, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "s3.secret-access-key"), "%s", err.msg);
    char *b, *k;
    ck_assert_int_eq(w2l__s3_split("/local/path", &b, &k, &err), W2L_CONFIG);
    ck_assert_int_eq(w2l__s3_split("s3://", &b, &k, &err), W2L_CONFIG);
    ck_assert_ok(w2l__s3_split("s3a://bk/x/y", &b, &k, &err), err);
    ck_assert_str_eq(b, "bk");
    ck_assert_str_eq(k, "x/y");
    w2l__free(b);
    w2l__free(k);
    stop(NULL);
}
END_TEST

/* ---- the file IO ---- */

static w2l_fileio *io_open(const http_stub_route *routes, size_t n, int retries)
{
    stub = http_stub_start(routes, n);
    conf = stub_conf(retries);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("s3", conf, &io, &err), err);
    return io;
}

static void io_close(w2l_fileio *io)
{
    w2l_fileio_close(io);
    stop(NULL);
}

static size_t count(const char *method, const char *needle)
{
    size_t n = 0;
    for (size_t i = 0; i < http_stub_nrequests(stub); i++) {
        const http_stub_request *q = http_stub_get(stub, i);
        if (strcmp(q->method, method) == 0 && strstr(q->target, needle)) n++;
    }
    return n;
}

#define MIB (1u << 20)

static unsigned char *pattern(size_t n)
{
    unsigned char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 2654435761u >> 13);
    return p;
}

static const http_stub_route mpu_routes[] = {
    {.method = "POST", .prefix = "/bkt/big?uploads", .status = 200,
     .body = "<InitiateMultipartUploadResult><Bucket>bkt</Bucket><Key>big</Key>"
             "<UploadId>UP-1</UploadId></InitiateMultipartUploadResult>"},
    {.method = "PUT", .prefix = "/bkt/big?partNumber=", .status = 200,
     .headers = "ETag: \"part-etag\"\r\n"},
    {.method = "POST", .prefix = "/bkt/big?uploadId=UP-1", .status = 200,
     .body = "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag>"
             "</CompleteMultipartUploadResult>"},
    {.method = "DELETE", .prefix = "/bkt/big?uploadId=UP-1", .status = 204},
};

START_TEST(multipart_upload)
{
    w2l_fileio *io = io_open(mpu_routes, W2L_ARRAY_LEN(mpu_routes), 0);
    size_t n = 11 * MIB + 12345;
    unsigned char *p = pattern(n);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, "s3://bkt/big", W2L_CREATE_EXCL, &f, &err), err);
    /* below the threshold nothing is sent */
    ck_assert_ok(w2l_file_write(f, p, 4 * MIB, &err), err);
    ck_assert_uint_eq(http_stub_nrequests(stub), 0);
    for (size_t at = 4 * MIB; at < n; at += 999983)
        ck_assert_ok(w2l_file_write(f, p + at, W2L_MIN(n - at, (size_t)999983), &err), err);
    ck_assert_ok(w2l_file_close(f, &err), err);
    ck_assert_uint_eq(count("POST", "?uploads"), 1);
    ck_assert_uint_eq(count("PUT", "partNumber="), 3);
    ck_assert_uint_eq(count("POST", "?uploadId=UP-1"), 1);
    ck_assert_uint_eq(count("DELETE", "uploadId"), 0);
    /* the parts (sent concurrently, so in any order) are the bytes written; all but the
     * last are 5 MiB */
    size_t total = 0;
    for (size_t i = 0; i < http_stub_nrequests(stub); i++) {
        const http_stub_request *q = http_stub_get(stub, i);
        if (strcmp(q->method, "PUT") != 0) continue;
        int num = 0;
        ck_assert_int_eq(sscanf(q->target, "/bkt/big?partNumber=%d&uploadId=UP-1", &num), 1);
        size_t at = (size_t)(num - 1) * 5 * MIB;
        ck_assert_uint_le(at + q->body_len, n);
        ck_assert_int_eq(memcmp(q->body, p + at, q->body_len), 0);
        if (at + q->body_len < n) ck_assert_uint_eq(q->body_len, 5 * MIB);
        total += q->body_len;
    }
    ck_assert_uint_eq(total, n);
    const http_stub_request *done = http_stub_get(stub, http_stub_nrequests(stub) - 1);
    ck_assert_msg(strstr(done->body, "<PartNumber>3</PartNumber><ETag>\"part-etag\"</ETag>"), "%s",
                  done->body);
    ck_assert_str_eq(hdr(done, "If-None-Match"), "*");
    free(p);
    io_close(io);
}
END_TEST

/* A part that keeps failing fails the file at close, which aborts the upload. */
START_TEST(multipart_failure_aborts)
{
    static const http_stub_route r[] = {
        {.method = "POST", .prefix = "/bkt/big?uploads", .status = 200,
         .body = "<InitiateMultipartUploadResult><UploadId>UP-1</UploadId>"
                 "</InitiateMultipartUploadResult>"},
        {.method = "PUT", .prefix = "/bkt/big?partNumber=", .status = 500,
         .body = "<Error><Code>InternalError</Code></Error>"},
        {.method = "DELETE", .prefix = "/bkt/big?uploadId=UP-1", .status = 204},
    };
    w2l_fileio *io = io_open(r, W2L_ARRAY_LEN(r), 0);
    size_t n = 6 * MIB;
    unsigned char *p = pattern(n);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, "s3://bkt/big", W2L_CREATE_EXCL, &f, &err), err);
    /* the part travels in the background: the write is queued, close reports the failure
     * and aborts the upload */
    ck_assert_ok(w2l_file_write(f, p, n, &err), err);
    ck_assert_int_eq(w2l_file_close(f, &err), W2L_UNAVAILABLE);
    ck_assert_msg(strstr(err.msg, "part ") && strstr(err.msg, "s3://bkt/big"), "%s", err.msg);
    ck_assert_uint_eq(count("DELETE", "uploadId=UP-1"), 1);
    free(p);
    io_close(io);
}
END_TEST

/* S3 may answer CompleteMultipartUpload with 200 and an error in the body. */
START_TEST(multipart_complete_error_body)
{
    static const http_stub_route r[] = {
        {.method = "POST", .prefix = "/bkt/big?uploads", .status = 200,
         .body = "<InitiateMultipartUploadResult><UploadId>UP-1</UploadId>"
                 "</InitiateMultipartUploadResult>"},
        {.method = "PUT", .prefix = "/bkt/big?partNumber=", .status = 200,
         .headers = "ETag: \"p\"\r\n"},
        {.method = "POST", .prefix = "/bkt/big?uploadId=UP-1", .status = 200,
         .body = "<Error><Code>InternalError</Code><Message>We encountered an internal error."
                 "</Message></Error>"},
        {.method = "DELETE", .prefix = "/bkt/big?uploadId=UP-1", .status = 204},
    };
    w2l_fileio *io = io_open(r, W2L_ARRAY_LEN(r), 0);
    size_t n = 7 * MIB;
    unsigned char *p = pattern(n);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, "s3://bkt/big", W2L_CREATE_REPLACE, &f, &err), err);
    ck_assert_ok(w2l_file_write(f, p, n, &err), err);
    ck_assert_int_eq(w2l_file_close(f, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "InternalError") && strstr(err.msg, "s3://bkt/big"), "%s",
                  err.msg);
    ck_assert_uint_eq(count("DELETE", "uploadId=UP-1"), 1);
    free(p);
    io_close(io);
}
END_TEST

START_TEST(small_file_one_put_and_read_window)
{
    static char body[300000];
    static char len_hdr[64];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (char)('a' + i % 26);
    snprintf(len_hdr, sizeof len_hdr, "Content-Length: %zu\r\n", sizeof body);
    static http_stub_route r[] = {
        {.method = "PUT", .prefix = "/bkt/d/f.parquet", .status = 200,
         .headers = "ETag: \"e\"\r\n"},
        {.method = "HEAD", .prefix = "/bkt/d/f.parquet", .status = 200},
        /* the tail window: bytes 300000-262144 .. 299999 */
        {.method = "GET", .prefix = "/bkt/d/f.parquet", .status = 206},
    };
    r[1].headers = len_hdr;
    r[1].body = body;
    r[1].body_len = sizeof body;
    r[2].body = body + (sizeof body - (256u << 10));
    r[2].body_len = 256u << 10;
    w2l_fileio *io = io_open(r, W2L_ARRAY_LEN(r), 0);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, "s3://bkt/d/f.parquet", W2L_CREATE_EXCL, &f, &err), err);
    ck_assert_ok(w2l_file_write(f, body, sizeof body, &err), err);
    ck_assert_ok(w2l_file_close(f, &err), err);
    ck_assert_uint_eq(count("PUT", "f.parquet"), 1);
    ck_assert_uint_eq(http_stub_get(stub, 0)->body_len, sizeof body);
    w2l_rfile *rf;
    ck_assert_ok(w2l_fileio_open_read(io, "s3://bkt/d/f.parquet", &rf, &err), err);
    ck_assert_uint_eq(w2l_rfile_size(rf), sizeof body);
    /* a footer read: the last 8 bytes, then the 1000 before them: one GET */
    char buf[1000];
    ck_assert_ok(w2l_rfile_pread(rf, buf, 8, sizeof body - 8, &err), err);
    ck_assert_int_eq(memcmp(buf, body + sizeof body - 8, 8), 0);
    ck_assert_ok(w2l_rfile_pread(rf, buf, 1000, sizeof body - 1008, &err), err);
    ck_assert_int_eq(memcmp(buf, body + sizeof body - 1008, 1000), 0);
    ck_assert_uint_eq(count("GET", "f.parquet"), 1);
    char rng[64];
    snprintf(rng, sizeof rng, "bytes=%zu-%zu", sizeof body - (256u << 10), sizeof body - 1);
    ck_assert_str_eq(hdr(http_stub_get(stub, 2), "Range"), rng);
    ck_assert_int_eq(w2l_rfile_pread(rf, buf, 8, sizeof body - 4, &err), W2L_CORRUPT);
    w2l_rfile_close(rf);
    io_close(io);
}
END_TEST

static const char list_page1[] =
    "<ListBucketResult><IsTruncated>true</IsTruncated>"
    "<NextContinuationToken>T/1+=</NextContinuationToken>"
    "<Contents><Key>w/t/data/a.parquet</Key><Size>10</Size>"
    "<LastModified>2026-01-02T03:04:05.000Z</LastModified></Contents>"
    "<Contents><Key>w/t/data/b.parquet</Key><Size>20</Size>"
    "<LastModified>2026-01-02T03:04:05.000Z</LastModified></Contents>"
    "</ListBucketResult>";
static const char list_page2[] =
    "<ListBucketResult><IsTruncated>false</IsTruncated>"
    "<Contents><Key>w/t/metadata/v1.metadata.json</Key><Size>30</Size>"
    "<LastModified>2026-01-02T03:04:06.000Z</LastModified></Contents>"
    "<Contents><Key>w/t/x&amp;y</Key><Size>1</Size>"
    "<LastModified>2026-01-02T03:04:06.000Z</LastModified></Contents>"
    "</ListBucketResult>";

static int add_name(void *ctx, const char *name)
{
    char *s = ctx;
    strcat(s, name);
    strcat(s, ";");
    return 0;
}

static int add_tree(void *ctx, const char *rel, const w2l_file_stat *st)
{
    char *s = ctx;
    char x[128];
    snprintf(x, sizeof x, "%s=%llu@%lld;", rel, (unsigned long long)st->size,
             (long long)st->mtime_ms);
    strcat(s, x);
    return 0;
}

START_TEST(listing_and_batch_delete)
{
    static const http_stub_route r[] = {
        {.method = "GET", .prefix = "/bkt/?continuation-token=T%2F1%2B%3D&list-type=2&prefix=w%2Ft%"
                                    "2F",
         .status = 200, .body = list_page2},
        {.method = "GET", .prefix = "/bkt/?list-type=2&prefix=w%2Ft%2F", .status = 200,
         .body = list_page1},
        {.method = "POST", .prefix = "/bkt/?delete", .status = 200,
         .body = "<DeleteResult><Deleted><Key>k0</Key></Deleted><Error><Key>k7</Key>"
                 "<Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
                 "</DeleteResult>"},
    };
    w2l_fileio *io = io_open(r, W2L_ARRAY_LEN(r), 0);
    char names[512] = "";
    ck_assert_ok(w2l_fileio_list(io, "s3://bkt/w/t", add_name, names, &err), err);
    ck_assert_str_eq(names, "data;metadata;x&y;");
    char tree[1024] = "";
    ck_assert_ok(w2l_fileio_list_tree(io, "s3://bkt/w/t/", add_tree, tree, &err), err);
    ck_assert_str_eq(tree, "data/a.parquet=10@1767323045000;data/b.parquet=20@1767323045000;"
                           "metadata/v1.metadata.json=30@1767323046000;x&y=1@1767323046000;");
    int ex = 0;
    ck_assert_ok(w2l_fileio_exists(io, "s3://bkt/w/t", &ex, &err), err);
    ck_assert_int_eq(ex, 1);
    /* 1,500 keys: two DeleteObjects requests, each with a checksum of its body */
    static char keys[1500][32];
    const char *paths[1500];
    for (int i = 0; i < 1500; i++) {
        snprintf(keys[i], sizeof keys[i], "s3://bkt/k%d", i);
        paths[i] = keys[i];
    }
    ck_assert_int_eq(w2l_fileio_remove_many(io, paths, 1000, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "k7") && strstr(err.msg, "AccessDenied"), "%s", err.msg);
    size_t before = count("POST", "?delete");
    ck_assert_int_eq(w2l_fileio_remove_many(io, paths, 1500, &err), W2L_IO); /* k7 again */
    ck_assert_uint_eq(count("POST", "?delete") - before, 1); /* stops at the failed batch */
    const http_stub_request *q = http_stub_get(stub, http_stub_nrequests(stub) - 1);
    ck_assert_ptr_nonnull(strstr(q->body, "<Object><Key>k999</Key></Object></Delete>"));
    unsigned char d[32];
    w2l__sha256(q->body, q->body_len, d);
    ck_assert_ptr_nonnull(hdr(q, "x-amz-checksum-sha256"));
    io_close(io);
}
END_TEST

START_TEST(hadoop_catalog_refused)
{
    static const http_stub_route r[] = {{.status = 404}};
    w2l_fileio *io = io_open(r, 1, 0);
    w2l_catalog *cat = NULL;
    w2l_rc rc = w2l__catalog_open("hadoop", conf, "s3://bkt/lake", io, &cat, &err);
    ck_assert_int_eq(rc, W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "sql catalog") && strstr(err.msg, "s3://bkt/lake"), "%s",
                  err.msg);
    io_close(io);
}
END_TEST

/* ---- vended credentials (s3_vend.c) ---- */

static w2l__aws_cred vcred(const char *ak, int64_t expires_ms)
{
    return (w2l__aws_cred){(char *)ak, (char *)"vsecret", (char *)"vtoken", expires_ms};
}

static void get_key(const char *bucket, const char *key, const char *want)
{
    w2l__vend_use u;
    ck_assert_ok(w2l__vend_get(bucket, key, 0, &u, &err), err);
    if (!want) {
        ck_assert_int_eq(u.found, 0);
        return;
    }
    ck_assert_msg(u.found, "no credentials for %s/%s", bucket, key);
    ck_assert_str_eq(u.cred.access_key, want);
    w2l__aws_cred_clear(&u.cred);
}

START_TEST(vend_longest_prefix_wins)
{
    w2l__aws_cred c1 = vcred("AK1", 0), c2 = vcred("AK2", 0), c3 = vcred("AK3", 0),
                  c4 = vcred("AK4", 0);
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", NULL, &c1, NULL, &err), err);
    ck_assert_ok(w2l__vend_put("G", "s3a://b/wh/ns/t/data/", "ns", "t", NULL, &c2, "eu-west-1",
                               &err), err);
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/tt", "ns", "tt", NULL, &c3, NULL, &err), err);
    ck_assert_uint_eq(w2l__vend_count(), 3);
    get_key("b", "wh/ns/t/metadata/m.json", "AK1");
    get_key("b", "wh/ns/t", "AK1");
    get_key("b", "wh/ns/t/data/f.parquet", "AK2");
    get_key("b", "wh/ns/tt/x", "AK3");
    get_key("b", "wh/ns/tx/x", NULL); /* a prefix holds at '/' boundaries only */
    get_key("b", "wh/_w2l/state", NULL);
    get_key("other", "wh/ns/t/x", NULL);
    w2l__vend_use u;
    ck_assert_ok(w2l__vend_get("b", "wh/ns/t/data/f", 0, &u, &err), err);
    ck_assert_str_eq(u.region, "eu-west-1");
    ck_assert_str_eq(u.cred.session_token, "vtoken");
    w2l__aws_cred_clear(&u.cred);
    /* the same prefix from another catalog: the newer wins; a put of the same group and
     * prefix replaces */
    ck_assert_ok(w2l__vend_put("H", "s3://b/wh/ns/t", "ns", "t", NULL, &c4, NULL, &err), err);
    get_key("b", "wh/ns/t/x", "AK4");
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", NULL, &c1, NULL, &err), err);
    get_key("b", "wh/ns/t/x", "AK1");
    ck_assert_uint_eq(w2l__vend_count(), 4);
    w2l__vend_reset();
    ck_assert_uint_eq(w2l__vend_count(), 0);
    get_key("b", "wh/ns/t/x", NULL);
}
END_TEST

/* A refresher that puts fresh credentials (or fails, when fail is set). */
static struct {
    atomic_int calls, inside, overlap;
    int fail;
    int64_t ttl_ms;
    const char *prefix; /* where it puts; NULL: s3://b/wh/ns/t */
    char last_hint[64];
} rf;

static w2l_rc refresh_fn(const void *owner, const char *ns, const char *table, const char *hint,
                         w2l_error *e)
{
    ck_assert_ptr_eq(owner, &rf);
    if (atomic_fetch_add(&rf.inside, 1) != 0) atomic_fetch_add(&rf.overlap, 1);
    int n = atomic_fetch_add(&rf.calls, 1) + 1;
    snprintf(rf.last_hint, sizeof rf.last_hint, "%s", hint ? hint : "");
    w2l_rc rc;
    if (rf.fail) {
        rc = w2l__fail(e, W2L_CONFIG, "refreshing %s.%s: HTTP 403", ns, table);
    } else {
        char ak[32];
        snprintf(ak, sizeof ak, "AK-R%d", n);
        w2l__aws_cred c = vcred(ak, rf.ttl_ms ? w2l__now_ms() + rf.ttl_ms : 0);
        rc = w2l__vend_put("G", rf.prefix ? rf.prefix : "s3://b/wh/ns/t", ns, table, NULL, &c,
                           NULL, e);
    }
    atomic_fetch_sub(&rf.inside, 1);
    return rc;
}

START_TEST(vend_refreshed_when_due_or_refused)
{
    memset(&rf, 0, sizeof rf);
    int64_t now = w2l__now_ms();
    w2l__aws_cred far = vcred("AK-FAR", now + 600000);
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", "staged", &far, NULL, &err),
                 err);
    /* expired, and no catalog attached to refresh them */
    w2l__aws_cred old = vcred("AK-OLD", now - 1);
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", "staged", &old, NULL, &err),
                 err);
    w2l__vend_use u;
    ck_assert_int_eq(w2l__vend_get("b", "wh/ns/t/x", 0, &u, &err), W2L_UNAVAILABLE);
    ck_assert_msg(strstr(err.msg, "ns.t") && strstr(err.msg, "expired"), "%s", err.msg);
    ck_assert_ptr_null(strstr(err.msg, "vsecret"));

    ck_assert_ok(w2l__vend_attach(&rf, "G", refresh_fn, &err), err);
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", "staged", &far, NULL, &err),
                 err);
    get_key("b", "wh/ns/t/x", "AK-FAR"); /* 10 minutes left: not due */
    ck_assert_int_eq(atomic_load(&rf.calls), 0);
    /* within the margin (half the lifetime when short): refreshed first, with the hint */
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", "staged", &old, NULL, &err),
                 err);
    get_key("b", "wh/ns/t/x", "AK-R1");
    ck_assert_int_eq(atomic_load(&rf.calls), 1);
    ck_assert_str_eq(rf.last_hint, "staged");
    get_key("b", "wh/ns/t/x", "AK-R1"); /* no expiry now: no more refreshes */
    ck_assert_int_eq(atomic_load(&rf.calls), 1);
    /* refused by the store (its generation): refreshed even though not due; a refused_gen
     * of an older generation does not refresh again */
    ck_assert_ok(w2l__vend_get("b", "wh/ns/t/x", 0, &u, &err), err);
    unsigned gen = u.gen;
    w2l__aws_cred_clear(&u.cred);
    ck_assert_ok(w2l__vend_get("b", "wh/ns/t/x", gen, &u, &err), err);
    ck_assert_str_eq(u.cred.access_key, "AK-R2");
    ck_assert_uint_ne(u.gen, gen);
    w2l__aws_cred_clear(&u.cred);
    ck_assert_ok(w2l__vend_get("b", "wh/ns/t/x", gen, &u, &err), err);
    ck_assert_str_eq(u.cred.access_key, "AK-R2");
    w2l__aws_cred_clear(&u.cred);
    ck_assert_int_eq(atomic_load(&rf.calls), 2);
    /* a failed refresh of refused credentials is the refresher's error */
    rf.fail = 1;
    ck_assert_ok(w2l__vend_get("b", "wh/ns/t/x", 0, &u, &err), err);
    gen = u.gen;
    w2l__aws_cred_clear(&u.cred);
    ck_assert_int_eq(w2l__vend_get("b", "wh/ns/t/x", gen, &u, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "ns.t: HTTP 403"), "%s", err.msg);
    ck_assert_int_eq(u.found, 0);
    w2l__vend_detach(&rf);
    w2l__vend_reset();
}
END_TEST

static int getter(void *arg)
{
    (void)arg;
    w2l_error e;
    for (int i = 0; i < 200; i++) {
        w2l__vend_use u;
        if (w2l__vend_get("b", "wh/ns/t/data/x", 0, &u, &e) != W2L_OK || !u.found) return 1;
        int bad = strncmp(u.cred.access_key, "AK-", 3) != 0;
        w2l__aws_cred_clear(&u.cred);
        if (bad) return 1;
    }
    return 0;
}

START_TEST(vend_threads_refresh_one_at_a_time)
{
    memset(&rf, 0, sizeof rf);
    rf.ttl_ms = 1; /* every refresh gives ones due a millisecond later */
    ck_assert_ok(w2l__vend_attach(&rf, "G", refresh_fn, &err), err);
    w2l__aws_cred c = vcred("AK-0", w2l__now_ms() - 1); /* expired: the first get refreshes */
    ck_assert_ok(w2l__vend_put("G", "s3://b/wh/ns/t", "ns", "t", NULL, &c, NULL, &err), err);
    thrd_t th[4];
    for (int i = 0; i < 4; i++) ck_assert_int_eq(thrd_create(&th[i], getter, NULL), thrd_success);
    for (int i = 0; i < 4; i++) {
        int res = -1;
        thrd_join(th[i], &res);
        ck_assert_int_eq(res, 0);
    }
    ck_assert_int_ge(atomic_load(&rf.calls), 1);
    ck_assert_int_le(atomic_load(&rf.calls), 800);
    ck_assert_int_eq(atomic_load(&rf.overlap), 0);
    w2l__vend_detach(&rf);
    ck_assert_uint_eq(w2l__vend_count(), 1);
    w2l__vend_reset();
}
END_TEST

START_TEST(vend_signs_requests_and_refreshes_on_403)
{
    memset(&rf, 0, sizeof rf);
    static const http_stub_route r[] = {
        {.method = "PUT", .prefix = "/bkt/wh/ns/t/", .status = 403, .count = 1,
         .body = "<Error><Code>ExpiredToken</Code><Message>expired</Message></Error>"},
        {.method = "PUT", .status = 200, .headers = "ETag: \"e1\"\r\n"},
    };
    w2l__s3 *s = start(r, 2, 0);
    ck_assert_ok(w2l__vend_attach(&rf, "G", refresh_fn, &err), err);
    w2l__aws_cred c = vcred("AK-V", 0);
    ck_assert_ok(w2l__vend_put("G", "s3://bkt/wh/ns/t", "ns", "t", NULL, &c, NULL, &err), err);
    rf.prefix = "s3://bkt/wh/ns/t";
    ck_assert_ok(w2l__s3_put(s, "bkt", "wh/other/x", "x", 1, 0, &err), err);
    /* refused (403): refreshed, and sent once more with the fresh ones */
    ck_assert_ok(w2l__s3_put(s, "bkt", "wh/ns/t/data/f", "x", 1, 0, &err), err);
    ck_assert_int_eq(atomic_load(&rf.calls), 1);
    ck_assert_uint_eq(http_stub_nrequests(stub), 3);
    const char *a0 = hdr(http_stub_get(stub, 0), "Authorization");
    ck_assert_msg(strstr(a0, "Credential=AKIDTEST/"), "outside the prefix: %s", a0);
    const http_stub_request *q1 = http_stub_get(stub, 1);
    ck_assert_msg(strstr(hdr(q1, "Authorization"), "Credential=AK-V/"), "%s",
                  hdr(q1, "Authorization"));
    ck_assert_str_eq(hdr(q1, "x-amz-security-token"), "vtoken");
    const char *a2 = hdr(http_stub_get(stub, 2), "Authorization");
    ck_assert_msg(strstr(a2, "Credential=AK-R1/"), "after the refresh: %s", a2);
    ck_assert_ptr_null(strstr(http_stub_get(stub, 2)->headers, "vsecret"));
    w2l__vend_detach(&rf);
    w2l__vend_reset();
    stop(s);
}
END_TEST

Suite *suite_s3(void)
{
    Suite *s = suite_create("s3");
    TCase *c = tcase_create("client");
    tcase_set_timeout(c, 30);
    tcase_add_test(c, put_signed_and_retried);
    tcase_add_test(c, put_gives_up_naming_bucket_and_key);
    tcase_add_test(c, errors_are_named);
    tcase_add_test(c, lost_answer_then_412);
    tcase_add_test(c, ranged_get);
    tcase_add_test(c, conditional_put_and_tagged_get);
    tcase_add_test(c, session_token_signed);
    tcase_add_test(c, bad_configuration);
    suite_add_tcase(s, c);
    TCase *f = tcase_create("fileio");
    tcase_set_timeout(f, 30);
    tcase_add_test(f, multipart_upload);
    tcase_add_test(f, multipart_failure_aborts);
    tcase_add_test(f, multipart_complete_error_body);
    tcase_add_test(f, small_file_one_put_and_read_window);
    tcase_add_test(f, listing_and_batch_delete);
    tcase_add_test(f, hadoop_catalog_refused);
    suite_add_tcase(s, f);
    TCase *v = tcase_create("vend");
    tcase_set_timeout(v, 30);
    tcase_add_test(v, vend_longest_prefix_wins);
    tcase_add_test(v, vend_refreshed_when_due_or_refused);
    tcase_add_test(v, vend_threads_refresh_one_at_a_time);
    tcase_add_test(v, vend_signs_requests_and_refreshes_on_403);
    suite_add_tcase(s, v);
    return s;
}
