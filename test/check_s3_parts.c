/*
 * lib/io, the parts of the "s3" file IO below the client: http.c against the test HTTP
 * server (test/support/http_stub.c), the S3 XML scanner (s3_xml.c), and the credential
 * chain (s3_cred.c: environment, profile files, IMDSv2).
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/s3.h"
#include "support/http_stub.h"
#include "support/support.h"

static w2l_error err;

/* A port nothing listens on: bound, never listened to, closed. */
static unsigned closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd);
    return ntohs(a.sin_port);
}

static w2l__http *new_http(void)
{
    w2l__http *h;
    ck_assert_ok(w2l__http_new(&h, &err), err);
    return h;
}

/* ---- http.c ------------------------------------------------------------------------ */

static const char big_body[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij";

static const http_stub_route http_routes[] = {
    {.method = "GET", .prefix = "/b/hello", .status = 200,
     .headers = "x-amz-request-id: RID-1234\r\nETag: \"9b2cf535f27731c974343645a3985328\"\r\n"
                "Last-Modified: Wed, 01 Jan 2025 00:00:00 GMT\r\n",
     .body = "hello world"},
    {.method = "HEAD", .prefix = "/b/hello", .status = 200,
     .headers = "ETag: \"e-1\"\r\nX-AMZ-REQUEST-ID: RID-HEAD\r\n", .body = "0123456789"},
    {.method = "PUT", .prefix = "/b/", .status = 200, .headers = "ETag: \"put-etag\"\r\n"},
    {.method = "POST", .prefix = "/b/", .status = 200, .body = "<ok/>"},
    {.method = "GET", .prefix = "/b/big", .status = 200, .body = big_body},
    {.method = "GET", .prefix = "/b/cut", .status = 200, .body = big_body, .cut = 1,
     .cut_at = 5},
    {.method = "GET", .prefix = "/b/busy", .status = 503, .count = 2,
     .headers = "Retry-After: 3\r\nx-amz-request-id: RID-503\r\n", .body = "<Error/>"},
    {.method = "GET", .prefix = "/b/busy", .status = 200, .body = "finally"},
    {.method = "DELETE", .prefix = "/b/", .status = 204},
};

static http_stub *stub;
static w2l__http *http;
static char url[512];

static void http_setup(void)
{
    stub = http_stub_start(http_routes, W2L_ARRAY_LEN(http_routes));
    http = new_http();
}

static void http_teardown(void)
{
    w2l__http_free(http);
    http_stub_stop(stub);
}

static const char *U(const char *path)
{
    snprintf(url, sizeof url, "%s%s", http_stub_url(stub), path);
    return url;
}

START_TEST(http_get_body_and_headers)
{
    w2l_buf out = {0};
    w2l__http_header h[] = {{"X-Test", "v1"}, {"x-amz-date", "20250101T000000Z"}};
    w2l__http_req rq = {.method = "GET", .url = U("/b/hello?x=1"), .headers = h,
                        .nheaders = 2, .out = &out};
    w2l__http_resp rs;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_int_eq(rs.transport_error, 0);
    ck_assert_int_eq(rs.sent, 1);
    ck_assert_uint_eq(out.len, 11);
    ck_assert_mem_eq(out.data, "hello world", 11);
    ck_assert_uint_eq(rs.content_length, 11);
    ck_assert_str_eq(rs.request_id, "RID-1234");
    ck_assert_str_eq(rs.etag, "9b2cf535f27731c974343645a3985328");
    ck_assert_str_eq(rs.last_modified, "Wed, 01 Jan 2025 00:00:00 GMT");
    ck_assert_str_eq(rs.retry_after, "");
    ck_assert_uint_eq(http_stub_nrequests(stub), 1);
    const http_stub_request *r = http_stub_get(stub, 0);
    ck_assert_str_eq(r->method, "GET");
    ck_assert_str_eq(r->target, "/b/hello?x=1");
    char v[64];
    ck_assert_str_eq(http_stub_header(r, "x-test", v, sizeof v), "v1");
    ck_assert_str_eq(http_stub_header(r, "X-Amz-Date", v, sizeof v), "20250101T000000Z");
    ck_assert_ptr_null(http_stub_header(r, "Expect", v, sizeof v));
    ck_assert_ptr_null(http_stub_header(r, "Content-Type", v, sizeof v));
    /* the body is appended to what out held */
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_uint_eq(out.len, 22);
    ck_assert_mem_eq(out.data + 11, "hello world", 11);
    w2l_buf_release(&out);
}
END_TEST

START_TEST(http_head_length_and_etag)
{
    w2l_buf out = {0};
    w2l__http_req rq = {.method = "HEAD", .url = U("/b/hello"), .out = &out};
    w2l__http_resp rs;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_uint_eq(rs.content_length, 10);
    ck_assert_str_eq(rs.etag, "e-1");
    ck_assert_str_eq(rs.request_id, "RID-HEAD"); /* header names in any case */
    ck_assert_uint_eq(out.len, 0);
    ck_assert_str_eq(http_stub_get(stub, 0)->method, "HEAD");
    /* DELETE: 204, no Content-Length answer body */
    rq.method = "DELETE";
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.status, 204);
    ck_assert_str_eq(http_stub_get(stub, 1)->method, "DELETE");
    w2l_buf_release(&out);
}
END_TEST

START_TEST(http_put_and_post_bodies_intact)
{
    size_t n = 200000;
    unsigned char *body = malloc(n);
    for (size_t i = 0; i < n; i++) body[i] = (unsigned char)(i * 131 + (i >> 9));
    w2l__http_req rq = {.method = "PUT", .url = U("/b/obj"), .body = body, .body_len = n};
    w2l__http_resp rs;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_str_eq(rs.etag, "put-etag");
    const http_stub_request *r = http_stub_get(stub, 0);
    ck_assert_str_eq(r->method, "PUT");
    ck_assert_uint_eq(r->body_len, n);
    ck_assert_mem_eq(r->body, body, n);
    char v[64];
    ck_assert_str_eq(http_stub_header(r, "Content-Length", v, sizeof v), "200000");
    ck_assert_ptr_null(http_stub_header(r, "Expect", v, sizeof v));
    ck_assert_ptr_null(http_stub_header(r, "Content-Type", v, sizeof v));
    /* an empty PUT still says Content-Length: 0 */
    w2l__http_req e = {.method = "PUT", .url = U("/b/empty")};
    ck_assert_ok(w2l__http_do(http, &e, &rs, &err), err);
    ck_assert_str_eq(http_stub_header(http_stub_get(stub, 1), "Content-Length", v, sizeof v),
                     "0");
    /* POST with the caller's Content-Type */
    w2l_buf out = {0};
    w2l__http_header h[] = {{"Content-Type", "application/xml"}};
    const char *xml = "<Delete><Object><Key>a</Key></Object></Delete>";
    w2l__http_req p = {.method = "POST", .url = U("/b/?delete"), .headers = h, .nheaders = 1,
                       .body = xml, .body_len = strlen(xml), .out = &out};
    ck_assert_ok(w2l__http_do(http, &p, &rs, &err), err);
    r = http_stub_get(stub, 2);
    ck_assert_str_eq(r->method, "POST");
    ck_assert_str_eq(r->target, "/b/?delete");
    ck_assert_str_eq(r->body, xml);
    ck_assert_str_eq(http_stub_header(r, "Content-Type", v, sizeof v), "application/xml");
    ck_assert_uint_eq(out.len, 5);
    w2l_buf_release(&out);
    free(body);
}
END_TEST

START_TEST(http_max_out_exceeded_is_io)
{
    w2l_buf out = {0};
    w2l__http_req rq = {.method = "GET", .url = U("/b/big"), .out = &out, .max_out = 10};
    w2l__http_resp rs;
    ck_assert_int_eq(w2l__http_do(http, &rq, &rs, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "longer than 10 bytes") && strstr(err.msg, "/b/big"), "%s",
                  err.msg);
    ck_assert_uint_eq(out.len, 0);
    /* exactly the limit is fine */
    rq.max_out = sizeof big_body - 1;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_uint_eq(out.len, sizeof big_body - 1);
    w2l_buf_release(&out);
}
END_TEST

START_TEST(http_refused_is_not_sent)
{
    char u[128];
    snprintf(u, sizeof u, "http://127.0.0.1:%u/b/k", closed_port());
    w2l__http_req rq = {.method = "PUT", .url = u, .body = "x", .body_len = 1,
                        .connect_timeout_ms = 1000, .timeout_ms = 2000};
    w2l__http_resp rs;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.transport_error, 1);
    ck_assert_int_eq(rs.sent, 0);
    ck_assert_int_eq(rs.status, 0);
    ck_assert_uint_eq(rs.content_length, UINT64_MAX);
    ck_assert_msg(rs.error[0] != '\0', "no error text");
}
END_TEST

START_TEST(http_cut_mid_body_is_sent)
{
    w2l_buf out = {0};
    w2l__http_req rq = {.method = "GET", .url = U("/b/cut"), .out = &out};
    w2l__http_resp rs;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.transport_error, 1);
    ck_assert_int_eq(rs.sent, 1);
    ck_assert_msg(rs.error[0] != '\0', "no error text");
    ck_assert_uint_eq(rs.content_length, sizeof big_body - 1);
    w2l_buf_release(&out);
}
END_TEST

START_TEST(http_route_count_and_retry_after)
{
    w2l_buf out = {0};
    w2l__http_req rq = {.method = "GET", .url = U("/b/busy"), .out = &out};
    w2l__http_resp rs;
    for (int i = 0; i < 2; i++) {
        out.len = 0;
        ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
        ck_assert_int_eq(rs.status, 503);
        ck_assert_str_eq(rs.retry_after, "3");
        ck_assert_str_eq(rs.request_id, "RID-503");
    }
    out.len = 0;
    ck_assert_ok(w2l__http_do(http, &rq, &rs, &err), err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_str_eq(rs.retry_after, "");
    ck_assert_mem_eq(out.data, "finally", 7);
    ck_assert_int_eq(http_stub_hits(stub, 6), 2);
    ck_assert_int_eq(http_stub_hits(stub, 7), 1);
    w2l_buf_release(&out);
}
END_TEST

START_TEST(http_bad_url_and_no_route)
{
    w2l__http_req rq = {.method = "GET", .url = "nosuch://x/y?secret=1"};
    w2l__http_resp rs;
    ck_assert_int_eq(w2l__http_do(http, &rq, &rs, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "nosuch://x/y") && !strstr(err.msg, "secret"), "%s",
                  err.msg);
    w2l_buf out = {0};
    w2l__http_req nr = {.method = "GET", .url = U("/elsewhere"), .out = &out};
    ck_assert_ok(w2l__http_do(http, &nr, &rs, &err), err);
    ck_assert_int_eq(rs.status, 404);
    ck_assert_int_eq(http_stub_get(stub, 0)->route, -1);
    w2l_buf_release(&out);
}
END_TEST

/* ---- s3_xml.c ---------------------------------------------------------------------- */

static const char list_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>bucket</Name><Prefix>t/</Prefix><KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys>"
    "<IsTruncated>true</IsTruncated>"
    "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
    "<Contents><Key>t/a&amp;b.parquet</Key><LastModified>2025-01-01T00:00:00.000Z</LastModified>"
    "<ETag>&quot;abc&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>t/&#x4e2d;&#25991;&lt;&gt;&apos;.txt</Key><Size>7</Size></Contents>"
    "<Contents>\n  <Key>t/x y</Key>\n  <Size>0</Size>\n</Contents>"
    "<CommonPrefixes><Prefix>t/p1/</Prefix></CommonPrefixes>"
    "<CommonPrefixes><Prefix>t/p2/</Prefix></CommonPrefixes>"
    "</ListBucketResult>";

typedef struct collect {
    char keys[8][64];
    long sizes[8];
    int n, stop_at;
} collect;

static int on_contents(void *ctx, const char *inner, size_t len)
{
    collect *c = ctx;
    w2l_buf b = {0};
    ck_assert(w2l__xml_text(inner, len, "Key", &b));
    snprintf(c->keys[c->n], sizeof c->keys[0], "%s", (char *)b.data);
    ck_assert(w2l__xml_text(inner, len, "Size", &b));
    c->sizes[c->n] = atol((char *)b.data);
    w2l_buf_release(&b);
    return ++c->n == c->stop_at;
}

START_TEST(xml_list_bucket_result)
{
    size_t n = strlen(list_xml);
    w2l_buf b = {0};
    ck_assert(w2l__xml_text(list_xml, n, "IsTruncated", &b));
    ck_assert_str_eq((char *)b.data, "true");
    ck_assert(w2l__xml_text(list_xml, n, "NextContinuationToken", &b));
    ck_assert_str_eq((char *)b.data, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
    ck_assert(w2l__xml_text(list_xml, n, "Prefix", &b)); /* the first one: the request's */
    ck_assert_str_eq((char *)b.data, "t/");
    ck_assert(!w2l__xml_text(list_xml, n, "ContinuationToken", &b));
    ck_assert_uint_eq(b.len, 0);
    collect c = {.stop_at = -1};
    ck_assert_uint_eq(w2l__xml_each(list_xml, n, "Contents", on_contents, &c), 3);
    ck_assert_int_eq(c.n, 3);
    ck_assert_str_eq(c.keys[0], "t/a&b.parquet");
    ck_assert_int_eq(c.sizes[0], 123);
    ck_assert_str_eq(c.keys[1], "t/\xe4\xb8\xad\xe6\x96\x87<>'.txt");
    ck_assert_str_eq(c.keys[2], "t/x y");
    ck_assert_int_eq(c.sizes[2], 0);
    /* the ETag entity */
    ck_assert(w2l__xml_text(list_xml, n, "ETag", &b));
    ck_assert_str_eq((char *)b.data, "\"abc\"");
    /* the callback stops the walk */
    collect s = {.stop_at = 2};
    ck_assert_uint_eq(w2l__xml_each(list_xml, n, "Contents", on_contents, &s), 2);
    /* common prefixes */
    const char *cp = strstr(list_xml, "<CommonPrefixes>");
    size_t cpn = n - (size_t)(cp - list_xml);
    ck_assert_uint_eq(w2l__xml_each(cp, cpn, "CommonPrefixes", NULL, NULL), 2);
    ck_assert_uint_eq(w2l__xml_each(cp, cpn, "Prefix", NULL, NULL), 2);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(xml_uploads_and_delete_result)
{
    const char *init = "<?xml version=\"1.0\"?><InitiateMultipartUploadResult xmlns=\"x\">"
                       "<Bucket>b</Bucket><Key>k</Key><UploadId>VXBsb2FkIElE.2~x</UploadId>"
                       "</InitiateMultipartUploadResult>";
    w2l_buf b = {0};
    ck_assert(w2l__xml_text(init, strlen(init), "UploadId", &b));
    ck_assert_str_eq((char *)b.data, "VXBsb2FkIElE.2~x");
    const char *del = "<DeleteResult><Deleted><Key>a</Key></Deleted>"
                      "<Error><Key>b&amp;c</Key><Code>AccessDenied</Code>"
                      "<Message>Access Denied</Message></Error>"
                      "<Error><Key>d</Key><Code>InternalError</Code>"
                      "<Message>We encountered an internal error.</Message></Error>"
                      "</DeleteResult>";
    ck_assert_uint_eq(w2l__xml_each(del, strlen(del), "Deleted", NULL, NULL), 1);
    ck_assert_uint_eq(w2l__xml_each(del, strlen(del), "Error", NULL, NULL), 2);
    char t[200];
    ck_assert(w2l__s3_error_text(del, strlen(del), t, sizeof t));
    ck_assert_str_eq(t, "AccessDenied: Access Denied (resource b&c)");
    /* prefixes, attributes (with '>' inside a value), self-closing, comments */
    const char *odd = "<!-- <Key>no</Key> --><s3:R><s3:Key a=\"x>y\" b='1'>v&#65;</s3:Key>"
                      "<Prefix/><Empty></Empty><X><![CDATA[<raw>&amp;]]></X></s3:R>";
    ck_assert(w2l__xml_text(odd, strlen(odd), "Key", &b));
    ck_assert_str_eq((char *)b.data, "vA");
    ck_assert(w2l__xml_text(odd, strlen(odd), "Prefix", &b));
    ck_assert_uint_eq(b.len, 0);
    ck_assert_str_eq((char *)b.data, "");
    ck_assert(w2l__xml_text(odd, strlen(odd), "Empty", &b));
    ck_assert_uint_eq(b.len, 0);
    ck_assert(w2l__xml_text(odd, strlen(odd), "X", &b));
    ck_assert_str_eq((char *)b.data, "<raw>&amp;");
    /* entities that are not: kept as they are */
    const char *bad = "<K>&bogus; &#; &#xZZ; &amp &#0; &#1114112;</K>";
    ck_assert(w2l__xml_text(bad, strlen(bad), "K", &b));
    ck_assert_str_eq((char *)b.data, "&bogus; &#; &#xZZ; &amp \xef\xbf\xbd \xef\xbf\xbd");
    w2l_buf_release(&b);
}
END_TEST

START_TEST(xml_error_bodies)
{
    char t[300];
    const char *nb = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchBucket</Code>"
                     "<Message>The specified bucket does not exist</Message>"
                     "<BucketName>my-bucket</BucketName><RequestId>R1</RequestId>"
                     "<HostId>h</HostId></Error>";
    ck_assert(w2l__s3_error_text(nb, strlen(nb), t, sizeof t));
    ck_assert_str_eq(t, "NoSuchBucket: The specified bucket does not exist (resource my-bucket)");
    const char *ad = "<Error><Code>AccessDenied</Code><Message>Access Denied</Message>"
                     "<Resource>/my-bucket/t/a.parquet</Resource></Error>";
    ck_assert(w2l__s3_error_text(ad, strlen(ad), t, sizeof t));
    ck_assert_str_eq(t, "AccessDenied: Access Denied (resource /my-bucket/t/a.parquet)");
    const char *sig = "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature "
                      "we calculated does not match the signature you provided. Check your key "
                      "and signing method.</Message><AWSAccessKeyId>AKIDEXAMPLE</AWSAccessKeyId>"
                      "<StringToSign>AWS4-HMAC-SHA256\n20250101T000000Z</StringToSign>"
                      "<CanonicalRequest>GET\n/</CanonicalRequest></Error>";
    ck_assert(w2l__s3_error_text(sig, strlen(sig), t, sizeof t));
    ck_assert_str_eq(t, "SignatureDoesNotMatch: The request signature we calculated does not "
                        "match the signature you provided. Check your key and signing method.");
    const char *nk = "<Error><Code>NoSuchKey</Code><Message>gone</Message>"
                     "<BucketName>b</BucketName><Key>k/1</Key></Error>";
    ck_assert(w2l__s3_error_text(nk, strlen(nk), t, sizeof t));
    ck_assert_str_eq(t, "NoSuchKey: gone (resource b/k/1)");
    /* bounded */
    char small[12];
    ck_assert(w2l__s3_error_text(nb, strlen(nb), small, sizeof small));
    ck_assert_str_eq(small, "NoSuchBucke");
    /* not an error body */
    ck_assert(!w2l__s3_error_text(list_xml, strlen(list_xml), t, sizeof t));
    ck_assert_str_eq(t, "");
    const char *bare = "<Error/>";
    ck_assert(w2l__s3_error_text(bare, strlen(bare), t, sizeof t));
    ck_assert_str_eq(t, "Error");
}
END_TEST

static int count_cb(void *ctx, const char *inner, size_t len)
{
    (void)inner;
    *(size_t *)ctx += len;
    return 0;
}

START_TEST(xml_truncated_and_garbage)
{
    /* every prefix of the documents, each in a buffer of exactly its length (ASan sees a read
     * past the end) */
    const char *docs[] = {list_xml, "<Error><Code>A</Code><Message>m &#x4e2d;</Message>"
                                    "<Resource>r</Resource></Error>"};
    w2l_buf b = {0};
    char t[256];
    for (size_t d = 0; d < W2L_ARRAY_LEN(docs); d++) {
        size_t n = strlen(docs[d]);
        for (size_t k = 0; k <= n; k++) {
            char *p = malloc(k ? k : 1);
            memcpy(p, docs[d], k);
            size_t total = 0;
            int has_key = w2l__xml_text(p, k, "Key", &b);
            w2l__xml_each(p, k, "Contents", count_cb, &total);
            int has_err = w2l__s3_error_text(p, k, t, sizeof t);
            w2l__xml_text(p, k, "Message", &b);
            if (d == 0 && k < (size_t)(strstr(docs[0], "</Key>") - docs[0] + 6))
                ck_assert_int_eq(has_key, 0);
            if (d == 1) ck_assert_int_eq(has_err, k == n);
            free(p);
        }
    }
    /* garbage: a fixed pseudo-random sequence over the characters that matter */
    const char alphabet[] = "<>/&#;x:=\"' ErorCdeKy!-[]?amp0123456789";
    unsigned long seed = 12345;
    for (int round = 0; round < 3000; round++) {
        size_t k = (size_t)(round % 97);
        char *p = malloc(k ? k : 1);
        for (size_t i = 0; i < k; i++) {
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            p[i] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
        }
        size_t total = 0;
        if (w2l__xml_text(p, k, "Key", &b)) ck_assert_uint_le(b.len, k);
        w2l__xml_each(p, k, "Error", count_cb, &total);
        ck_assert_uint_le(total, k);
        w2l__s3_error_text(p, k, t, sizeof t);
        ck_assert_uint_lt(strlen(t), sizeof t);
        free(p);
    }
    w2l_buf_release(&b);
}
END_TEST

/* ---- s3_cred.c --------------------------------------------------------------------- */

static const char *env_names[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                  "AWS_SESSION_TOKEN", "AWS_PROFILE",
                                  "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "HOME",
                                  "AWS_EC2_METADATA_DISABLED"};
static char *env_saved[W2L_ARRAY_LEN(env_names)];
static char home[600];

static void cred_setup(void)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(env_names); i++) {
        const char *v = getenv(env_names[i]);
        env_saved[i] = v ? strdup(v) : NULL;
        unsetenv(env_names[i]);
    }
    snprintf(home, sizeof home, "%s", tmpdir_make("s3cred"));
    setenv("HOME", home, 1);
}

static void cred_teardown(void)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(env_names); i++) {
        if (env_saved[i]) setenv(env_names[i], env_saved[i], 1);
        else unsetenv(env_names[i]);
        free(env_saved[i]);
        env_saved[i] = NULL;
    }
    tmpdir_remove(home);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void no_secrets(const char *msg)
{
    static const char *secrets[] = {"SECRETenv", "TOKENenv", "SECRETfile", "TOKENfile",
                                    "SECRETcfg", "SECRETimds", "TOKENimds", "IMDSTOKEN"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(secrets); i++)
        ck_assert_msg(!strstr(msg, secrets[i]), "secret %s in: %s", secrets[i], msg);
}

START_TEST(cred_env_only)
{
    setenv("AWS_ACCESS_KEY_ID", "AKIDenv", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETenv", 1);
    setenv("AWS_SESSION_TOKEN", "TOKENenv", 1);
    w2l__cred_opts o = {.imds_disabled = 1};
    w2l__cred_chain *c;
    ck_assert_ok(w2l__cred_chain_new(&o, NULL, &c, &err), err);
    w2l__aws_cred cr;
    const char *where;
    ck_assert_ok(w2l__cred_get(c, &cr, &where, &err), err);
    ck_assert_str_eq(cr.access_key, "AKIDenv");
    ck_assert_str_eq(cr.secret_key, "SECRETenv");
    ck_assert_str_eq(cr.session_token, "TOKENenv");
    ck_assert_int_eq(cr.expires_ms, 0);
    ck_assert_str_eq(where, "environment");
    ck_assert_ptr_null(w2l__cred_region(c));
    w2l__aws_cred_clear(&cr);
    ck_assert_ptr_null(cr.secret_key);
    w2l__cred_chain_free(c);
    /* without the token */
    unsetenv("AWS_SESSION_TOKEN");
    ck_assert_ok(w2l__cred_chain_new(&o, NULL, &c, &err), err);
    ck_assert_ok(w2l__cred_get(c, &cr, NULL, &err), err);
    ck_assert_ptr_null(cr.session_token);
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
}
END_TEST

START_TEST(cred_env_half_pair)
{
    w2l__cred_opts o = {.imds_disabled = 1};
    w2l__cred_chain *c = NULL;
    setenv("AWS_ACCESS_KEY_ID", "AKIDenv", 1);
    ck_assert_int_eq(w2l__cred_chain_new(&o, NULL, &c, &err), W2L_CONFIG);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err.msg, "AWS_SECRET_ACCESS_KEY is not"), "%s", err.msg);
    unsetenv("AWS_ACCESS_KEY_ID");
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETenv", 1);
    ck_assert_int_eq(w2l__cred_chain_new(&o, NULL, &c, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "AWS_ACCESS_KEY_ID is not"), "%s", err.msg);
    no_secrets(err.msg);
}
END_TEST

START_TEST(cred_profile_files)
{
    char dir[700], cpath[800], gpath[800];
    snprintf(dir, sizeof dir, "%s/.aws", home);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(cpath, sizeof cpath, "%s/credentials", dir);
    snprintf(gpath, sizeof gpath, "%s/config", dir);
    write_file(cpath, "# comment\n; another\n[default]\n  AWS_Access_Key_ID  =  AKIDfile  \n"
                      "aws_secret_access_key=SECRETfile\r\n\n[x]\naws_access_key_id = AKIDx\n"
                      "aws_secret_access_key = SECRETfile\naws_session_token = TOKENfile\n");
    write_file(gpath, "[default]\nregion = eu-west-1\naws_access_key_id = AKIDcfg\n"
                      "aws_secret_access_key = SECRETcfg\n"
                      "[profile x]\nregion=us-west-2\naws_access_key_id = AKIDcfgx\n"
                      "[profile y]\n# only here\naws_access_key_id = AKIDy\n"
                      "aws_secret_access_key = SECRETcfg\nregion = ap-south-1\n"
                      "[y]\nregion = ignored-1\n");
    w2l__cred_opts o = {.imds_disabled = 1};
    w2l__cred_chain *c;
    w2l__aws_cred cr;
    const char *where;
    /* default: ~/.aws/credentials wins over config for the keys; region from config */
    ck_assert_ok(w2l__cred_chain_new(&o, NULL, &c, &err), err);
    ck_assert_ok(w2l__cred_get(c, &cr, &where, &err), err);
    ck_assert_str_eq(cr.access_key, "AKIDfile");
    ck_assert_str_eq(cr.secret_key, "SECRETfile");
    ck_assert_ptr_null(cr.session_token);
    ck_assert_msg(strstr(where, "profile default in ") && strstr(where, cpath), "%s", where);
    ck_assert_str_eq(w2l__cred_region(c), "eu-west-1");
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
    /* x from AWS_PROFILE: keys from credentials, region from "[profile x]" */
    setenv("AWS_PROFILE", "x", 1);
    ck_assert_ok(w2l__cred_chain_new(&o, NULL, &c, &err), err);
    ck_assert_ok(w2l__cred_get(c, &cr, &where, &err), err);
    ck_assert_str_eq(cr.access_key, "AKIDx");
    ck_assert_str_eq(cr.session_token, "TOKENfile");
    ck_assert_str_eq(w2l__cred_region(c), "us-west-2");
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
    /* y named in opts (over AWS_PROFILE), only in config, files named by the env vars */
    char c2[800], g2[800];
    snprintf(c2, sizeof c2, "%s/creds2", home);
    snprintf(g2, sizeof g2, "%s/config2", home);
    ck_assert_int_eq(rename(cpath, c2), 0);
    ck_assert_int_eq(rename(gpath, g2), 0);
    setenv("AWS_SHARED_CREDENTIALS_FILE", c2, 1);
    setenv("AWS_CONFIG_FILE", g2, 1);
    o.profile = "y";
    ck_assert_ok(w2l__cred_chain_new(&o, NULL, &c, &err), err);
    ck_assert_ok(w2l__cred_get(c, &cr, &where, &err), err);
    ck_assert_str_eq(cr.access_key, "AKIDy");
    ck_assert_str_eq(cr.secret_key, "SECRETcfg");
    ck_assert_msg(strstr(where, "profile y in ") && strstr(where, g2), "%s", where);
    ck_assert_str_eq(w2l__cred_region(c), "ap-south-1");
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
    /* a named profile that exists nowhere */
    o.profile = "nope";
    c = NULL;
    ck_assert_int_eq(w2l__cred_chain_new(&o, NULL, &c, &err), W2L_CONFIG);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err.msg, "'nope'") && strstr(err.msg, c2) && strstr(err.msg, g2),
                  "%s", err.msg);
    no_secrets(err.msg);
    /* half a pair in a profile: the config's x has no secret when credentials has no x */
    write_file(c2, "[default]\n");
    o.profile = "x";
    ck_assert_int_eq(w2l__cred_chain_new(&o, NULL, &c, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "'x'") && strstr(err.msg, "aws_secret_access_key"), "%s",
                  err.msg);
    no_secrets(err.msg);
}
END_TEST

static const char imds_json_old[] =
    "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"2025-01-01T00:00:00Z\",\n"
    "  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"AKIDimds1\",\n"
    "  \"SecretAccessKey\" : \"SECRETimds\\/1\",\n  \"Token\" : \"TOKENimds1\",\n"
    "  \"Expiration\" : \"2098-12-01T18:00:00Z\"\n}";
static const char imds_json_new[] =
    "{\"Code\":\"Success\",\"Ttl\":21600,\"AccessKeyId\":\"AKIDimds2\","
    "\"SecretAccessKey\":\"SECRETimds2\",\"Token\":\"TOKENimds2\","
    "\"Expiration\":\"2099-01-02T03:04:05Z\"}";

static const http_stub_route imds_routes[] = {
    {.method = "PUT", .prefix = "/latest/api/token", .status = 200, .body = "IMDSTOKEN-1"},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/my-role",
     .status = 200, .body = imds_json_old, .count = 1},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/my-role",
     .status = 200, .body = imds_json_new},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/", .status = 200,
     .body = "my-role\n"},
};

START_TEST(cred_imds_v2)
{
    stub = http_stub_start(imds_routes, W2L_ARRAY_LEN(imds_routes));
    http = new_http();
    w2l__cred_opts o = {.imds_endpoint = http_stub_url(stub)};
    w2l__cred_chain *c;
    ck_assert_ok(w2l__cred_chain_new(&o, http, &c, &err), err);
    ck_assert_uint_eq(http_stub_nrequests(stub), 3);
    const http_stub_request *r0 = http_stub_get(stub, 0), *r1 = http_stub_get(stub, 1),
                            *r2 = http_stub_get(stub, 2);
    char v[64];
    ck_assert_str_eq(r0->method, "PUT");
    ck_assert_str_eq(r0->target, "/latest/api/token");
    ck_assert_str_eq(http_stub_header(r0, "X-aws-ec2-metadata-token-ttl-seconds", v, sizeof v),
                     "21600");
    ck_assert_ptr_null(http_stub_header(r0, "X-aws-ec2-metadata-token", v, sizeof v));
    ck_assert_str_eq(r1->method, "GET");
    ck_assert_str_eq(r1->target, "/latest/meta-data/iam/security-credentials/");
    ck_assert_str_eq(http_stub_header(r1, "X-aws-ec2-metadata-token", v, sizeof v),
                     "IMDSTOKEN-1");
    ck_assert_str_eq(r2->target, "/latest/meta-data/iam/security-credentials/my-role");
    ck_assert_str_eq(http_stub_header(r2, "X-aws-ec2-metadata-token", v, sizeof v),
                     "IMDSTOKEN-1");
    /* the first credentials expire on 2098-12-01T18:00:00Z: far from any test run */
    struct tm tm = {.tm_year = 198, .tm_mon = 11, .tm_mday = 1, .tm_hour = 18};
    int64_t exp1 = (int64_t)timegm(&tm) * 1000;
    w2l__aws_cred cr;
    const char *where;
    ck_assert_ok(w2l__cred_get(c, &cr, &where, &err), err);
    ck_assert_str_eq(cr.access_key, "AKIDimds1");
    ck_assert_str_eq(cr.secret_key, "SECRETimds/1");
    ck_assert_str_eq(cr.session_token, "TOKENimds1");
    ck_assert_int_eq(cr.expires_ms, exp1);
    ck_assert_msg(strstr(where, "instance metadata") && strstr(where, "my-role"), "%s", where);
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
    w2l__http_free(http);
    http_stub_stop(stub);
}
END_TEST

static const http_stub_route imds_refresh_routes[] = {
    {.method = "PUT", .prefix = "/latest/api/token", .status = 200, .body = "IMDSTOKEN-2"},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/r",
     .status = 200, .count = 1,
     .body = "{\"AccessKeyId\":\"AKIDold\",\"SecretAccessKey\":\"SECRETimds\","
             "\"Token\":\"TOKENimds\",\"Expiration\":\"2001-02-03T04:05:06.500Z\"}"},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/r",
     .status = 200, .body = imds_json_new},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/", .status = 200,
     .body = "r"},
};

START_TEST(cred_imds_refresh_near_expiry)
{
    stub = http_stub_start(imds_refresh_routes, W2L_ARRAY_LEN(imds_refresh_routes));
    http = new_http();
    w2l__cred_opts o = {.imds_endpoint = http_stub_url(stub)};
    w2l__cred_chain *c;
    ck_assert_ok(w2l__cred_chain_new(&o, http, &c, &err), err);
    ck_assert_uint_eq(http_stub_nrequests(stub), 3);
    w2l__aws_cred cr;
    ck_assert_ok(w2l__cred_get(c, &cr, NULL, &err), err); /* the old ones expired: refetched */
    ck_assert_uint_eq(http_stub_nrequests(stub), 6);
    ck_assert_str_eq(cr.access_key, "AKIDimds2");
    struct tm tm = {.tm_year = 199, .tm_mon = 0, .tm_mday = 2, .tm_hour = 3, .tm_min = 4,
                    .tm_sec = 5};
    ck_assert_int_eq(cr.expires_ms, (int64_t)timegm(&tm) * 1000);
    w2l__aws_cred_clear(&cr);
    /* fresh now: no more requests */
    ck_assert_ok(w2l__cred_get(c, &cr, NULL, &err), err);
    ck_assert_uint_eq(http_stub_nrequests(stub), 6);
    w2l__aws_cred_clear(&cr);
    w2l__cred_chain_free(c);
    w2l__http_free(http);
    http_stub_stop(stub);
}
END_TEST

static const http_stub_route imds_bad_routes[] = {
    {.method = "PUT", .prefix = "/latest/api/token", .status = 200, .body = "IMDSTOKEN-3"},
    {.method = "GET", .prefix = "/latest/meta-data/iam/security-credentials/", .status = 404},
};

START_TEST(cred_nothing_found_lists_places)
{
    http = new_http();
    char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%u", closed_port());
    w2l__cred_opts o = {.imds_endpoint = ep};
    w2l__cred_chain *c = NULL;
    ck_assert_int_eq(w2l__cred_chain_new(&o, http, &c, &err), W2L_NOTFOUND);
    ck_assert_ptr_null(c);
    char cpath[700], gpath[700];
    snprintf(cpath, sizeof cpath, "%s/.aws/credentials", home);
    snprintf(gpath, sizeof gpath, "%s/.aws/config", home);
    ck_assert_msg(strstr(err.msg, "AWS_ACCESS_KEY_ID") && strstr(err.msg, cpath) &&
                      strstr(err.msg, gpath) && strstr(err.msg, ep) &&
                      strstr(err.msg, "profile 'default'") && strstr(err.msg, "/latest/api/token"),
                  "%s", err.msg);
    /* an instance without a role */
    stub = http_stub_start(imds_bad_routes, W2L_ARRAY_LEN(imds_bad_routes));
    o.imds_endpoint = http_stub_url(stub);
    ck_assert_int_eq(w2l__cred_chain_new(&o, http, &c, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "HTTP 404") && strstr(err.msg, "no IAM role"), "%s", err.msg);
    no_secrets(err.msg);
    /* disabled: IMDS is not asked */
    setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
    size_t before = http_stub_nrequests(stub);
    ck_assert_int_eq(w2l__cred_chain_new(&o, http, &c, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "disabled"), "%s", err.msg);
    ck_assert_uint_eq(http_stub_nrequests(stub), before);
    w2l__http_free(http);
    http_stub_stop(stub);
}
END_TEST

Suite *suite_s3_parts(void)
{
    Suite *s = suite_create("s3_parts");
    TCase *h = tcase_create("http");
    tcase_add_checked_fixture(h, http_setup, http_teardown);
    tcase_add_test(h, http_get_body_and_headers);
    tcase_add_test(h, http_head_length_and_etag);
    tcase_add_test(h, http_put_and_post_bodies_intact);
    tcase_add_test(h, http_max_out_exceeded_is_io);
    tcase_add_test(h, http_refused_is_not_sent);
    tcase_add_test(h, http_cut_mid_body_is_sent);
    tcase_add_test(h, http_route_count_and_retry_after);
    tcase_add_test(h, http_bad_url_and_no_route);
    suite_add_tcase(s, h);
    TCase *x = tcase_create("xml");
    tcase_add_test(x, xml_list_bucket_result);
    tcase_add_test(x, xml_uploads_and_delete_result);
    tcase_add_test(x, xml_error_bodies);
    tcase_add_test(x, xml_truncated_and_garbage);
    suite_add_tcase(s, x);
    TCase *c = tcase_create("cred");
    tcase_add_checked_fixture(c, cred_setup, cred_teardown);
    tcase_add_test(c, cred_env_only);
    tcase_add_test(c, cred_env_half_pair);
    tcase_add_test(c, cred_profile_files);
    tcase_add_test(c, cred_imds_v2);
    tcase_add_test(c, cred_imds_refresh_near_expiry);
    tcase_add_test(c, cred_nothing_found_lists_places);
    suite_add_tcase(s, c);
    return s;
}
