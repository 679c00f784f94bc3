/*
 * lib/io/sha256.c and lib/io/sigv4.c: SHA-256 against the FIPS 180-4 examples, HMAC-SHA256
 * against RFC 4231, and AWS Signature Version 4 against the four worked examples of the S3
 * API reference ("Signature Calculations for the Authorization Header: Transferring
 * Payload in a Single Chunk"), plus URI/query encoding and the signer's refusals.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "io/s3.h"
#include "support/support.h"

static void hex_of(const unsigned char d[32], char out[65])
{
    w2l__hex(d, 32, out);
}

static void check_sha(const void *p, size_t n, const char *want)
{
    unsigned char d[32];
    char hex[65];
    w2l__sha256(p, n, d);
    hex_of(d, hex);
    ck_assert_str_eq(hex, want);
}

START_TEST(sha256_fips_vectors)
{
    check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha(m448, strlen(m448),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    /* one million 'a', fed in odd-sized chunks that straddle block boundaries */
    static const size_t chunks[] = {1, 3, 7, 13, 55, 56, 63, 64, 65, 127, 129, 1000, 4097};
    char a[4097];
    memset(a, 'a', sizeof a);
    w2l__sha256_ctx s;
    w2l__sha256_init(&s);
    size_t left = 1000000, k = 0;
    while (left) {
        size_t n = W2L_MIN(chunks[k++ % W2L_ARRAY_LEN(chunks)], left);
        w2l__sha256_update(&s, a, n);
        left -= n;
    }
    w2l__sha256_update(&s, NULL, 0);
    unsigned char d[32];
    char hex[65];
    w2l__sha256_final(&s, d);
    hex_of(d, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* Every split of every length up to 3 blocks hashes as the one-shot call does (the
 * padding paths: 55, 56, 63, 64 bytes in the last block). */
START_TEST(sha256_streaming_matches_one_shot)
{
    unsigned char msg[192];
    for (size_t i = 0; i < sizeof msg; i++) msg[i] = (unsigned char)(i * 131 + 7);
    for (size_t n = 0; n <= sizeof msg; n++) {
        unsigned char want[32];
        w2l__sha256(msg, n, want);
        for (size_t cut = 0; cut <= n; cut += 1 + (n > 100) * 6) {
            w2l__sha256_ctx s;
            unsigned char got[32];
            w2l__sha256_init(&s);
            w2l__sha256_update(&s, msg, cut);
            w2l__sha256_update(&s, msg + cut, n - cut);
            w2l__sha256_final(&s, got);
            ck_assert_msg(memcmp(got, want, 32) == 0, "length %zu split at %zu", n, cut);
        }
    }
}
END_TEST

static void check_hmac(const void *key, size_t klen, const void *msg, size_t n,
                       const char *want)
{
    unsigned char d[32];
    char hex[65];
    w2l__hmac_sha256(key, klen, msg, n, d);
    hex_of(d, hex);
    ck_assert_str_eq(hex, want);
}

START_TEST(hmac_rfc4231)
{
    unsigned char key[131], data[50];
    /* test case 1 */
    memset(key, 0x0b, 20);
    check_hmac(key, 20, "Hi There", 8,
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    /* test case 2: a key shorter than the output */
    check_hmac("Jefe", 4, "what do ya want for nothing?", 28,
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* test case 4: key 0x01..0x19, 50 bytes of 0xcd */
    for (int i = 0; i < 25; i++) key[i] = (unsigned char)(i + 1);
    memset(data, 0xcd, sizeof data);
    check_hmac(key, 25, data, 50,
               "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    /* test case 6: a 131-byte key, hashed first */
    memset(key, 0xaa, 131);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    check_hmac(key, 131, m6, strlen(m6),
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

START_TEST(hex_is_lower_case)
{
    static const unsigned char b[] = {0x00, 0x0f, 0xa0, 0xff, 0x5c};
    char out[11];
    memset(out, 'x', sizeof out);
    w2l__hex(b, sizeof b, out);
    ck_assert_str_eq(out, "000fa0ff5c");
    w2l__hex(b, 0, out);
    ck_assert_str_eq(out, "");
}
END_TEST

/* ---- SigV4: AWS's worked examples ---- */

#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define EX_HOST "examplebucket.s3.amazonaws.com"
#define EX_DATE "20130524T000000Z"
#define EX_CRED \
    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"

static w2l__aws_cred example_cred(void)
{
    w2l__aws_cred c = {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", NULL,
                       0};
    return c;
}

static void check_signed(const w2l__sigv4_req *r, const w2l__aws_cred *cred,
                         const char *want_canonical, const char *want_sts,
                         const char *want_auth)
{
    w2l_buf auth = {0}, cr = {0}, sts = {0};
    w2l_error err;
    ck_assert_ok(w2l__sigv4_sign(r, cred, &auth, &cr, &sts, &err), err);
    ck_assert_str_eq((const char *)cr.data, want_canonical);
    ck_assert_uint_eq(cr.len, strlen(want_canonical));
    ck_assert_str_eq((const char *)sts.data, want_sts);
    ck_assert_str_eq((const char *)auth.data, want_auth);
    ck_assert_uint_eq(auth.len, strlen(want_auth));
    w2l_buf_release(&auth);
    w2l_buf_release(&cr);
    w2l_buf_release(&sts);
}

START_TEST(aws_example_get_object)
{
    /* header names as the request spells them, in its order */
    const w2l__http_header h[] = {{"Host", EX_HOST},
                                  {"Range", "bytes=0-9"},
                                  {"x-amz-content-sha256", EMPTY_SHA},
                                  {"x-amz-date", EX_DATE}};
    w2l__sigv4_req r = {"GET", "/test.txt", "", h, 4, EMPTY_SHA, "us-east-1", "s3", EX_DATE};
    w2l__aws_cred c = example_cred();
    check_signed(&r, &c,
                 "GET\n"
                 "/test.txt\n"
                 "\n"
                 "host:examplebucket.s3.amazonaws.com\n"
                 "range:bytes=0-9\n"
                 "x-amz-content-sha256:" EMPTY_SHA "\n"
                 "x-amz-date:20130524T000000Z\n"
                 "\n"
                 "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA,
                 "AWS4-HMAC-SHA256\n"
                 "20130524T000000Z\n"
                 "20130524/us-east-1/s3/aws4_request\n"
                 "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
                 EX_CRED ", SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                         "Signature="
                         "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}
END_TEST

START_TEST(aws_example_put_object)
{
    const char *body = "Welcome to Amazon S3.";
    unsigned char d[32];
    char body_sha[65];
    w2l__sha256(body, strlen(body), d);
    w2l__hex(d, 32, body_sha);
    ck_assert_str_eq(body_sha, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    /* the key "test$file.text" encoded by us */
    w2l_buf uri = {0};
    w2l_error err;
    ck_assert_ok(w2l__aws_uri_encode(&uri, "/test$file.text", 15, 1, &err), err);
    ck_assert_str_eq((const char *)uri.data, "/test%24file.text");
    const w2l__http_header h[] = {{"Host", EX_HOST},
                                  {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                                  {"x-amz-date", EX_DATE},
                                  {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                                  {"x-amz-content-sha256", body_sha}};
    w2l__sigv4_req r = {"PUT", (const char *)uri.data, "", h, 5, body_sha, "us-east-1", "s3",
                        EX_DATE};
    w2l__aws_cred c = example_cred();
    check_signed(&r, &c,
                 "PUT\n"
                 "/test%24file.text\n"
                 "\n"
                 "date:Fri, 24 May 2013 00:00:00 GMT\n"
                 "host:examplebucket.s3.amazonaws.com\n"
                 "x-amz-content-sha256:"
                 "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
                 "x-amz-date:20130524T000000Z\n"
                 "x-amz-storage-class:REDUCED_REDUNDANCY\n"
                 "\n"
                 "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
                 "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
                 "AWS4-HMAC-SHA256\n"
                 "20130524T000000Z\n"
                 "20130524/us-east-1/s3/aws4_request\n"
                 "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
                 EX_CRED ", SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;"
                         "x-amz-storage-class, "
                         "Signature="
                         "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    w2l_buf_release(&uri);
}
END_TEST

START_TEST(aws_example_get_lifecycle)
{
    w2l_buf q = {0};
    w2l_error err;
    const w2l__query_param p[] = {{"lifecycle", ""}};
    ck_assert_ok(w2l__sigv4_query(&q, p, 1, &err), err);
    ck_assert_str_eq((const char *)q.data, "lifecycle=");
    const w2l__http_header h[] = {{"Host", EX_HOST},
                                  {"x-amz-date", EX_DATE},
                                  {"x-amz-content-sha256", EMPTY_SHA}};
    w2l__sigv4_req r = {"GET", "/", (const char *)q.data, h, 3, EMPTY_SHA, "us-east-1", "s3",
                        EX_DATE};
    w2l__aws_cred c = example_cred();
    check_signed(&r, &c,
                 "GET\n"
                 "/\n"
                 "lifecycle=\n"
                 "host:examplebucket.s3.amazonaws.com\n"
                 "x-amz-content-sha256:" EMPTY_SHA "\n"
                 "x-amz-date:20130524T000000Z\n"
                 "\n"
                 "host;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA,
                 "AWS4-HMAC-SHA256\n"
                 "20130524T000000Z\n"
                 "20130524/us-east-1/s3/aws4_request\n"
                 "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
                 EX_CRED ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                         "Signature="
                         "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    w2l_buf_release(&q);
}
END_TEST

START_TEST(aws_example_list_objects)
{
    w2l_buf q = {0};
    w2l_error err;
    /* given out of order: the canonical form sorts them */
    const w2l__query_param p[] = {{"prefix", "J"}, {"max-keys", "2"}};
    ck_assert_ok(w2l__sigv4_query(&q, p, 2, &err), err);
    ck_assert_str_eq((const char *)q.data, "max-keys=2&prefix=J");
    const w2l__http_header h[] = {{"Host", EX_HOST},
                                  {"x-amz-date", EX_DATE},
                                  {"x-amz-content-sha256", EMPTY_SHA}};
    w2l__sigv4_req r = {"GET", "/", (const char *)q.data, h, 3, EMPTY_SHA, "us-east-1", "s3",
                        EX_DATE};
    w2l__aws_cred c = example_cred();
    check_signed(&r, &c,
                 "GET\n"
                 "/\n"
                 "max-keys=2&prefix=J\n"
                 "host:examplebucket.s3.amazonaws.com\n"
                 "x-amz-content-sha256:" EMPTY_SHA "\n"
                 "x-amz-date:20130524T000000Z\n"
                 "\n"
                 "host;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA,
                 "AWS4-HMAC-SHA256\n"
                 "20130524T000000Z\n"
                 "20130524/us-east-1/s3/aws4_request\n"
                 "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
                 EX_CRED ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                         "Signature="
                         "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    w2l_buf_release(&q);
}
END_TEST

static const char *signature_of(const char *auth)
{
    const char *s = strstr(auth, "Signature=");
    ck_assert_ptr_nonnull(s);
    return s + 10;
}

START_TEST(session_token_is_signed)
{
    const char *token = "FQoGZXIvYXdzEXAMPLE/token+with=odd/chars";
    w2l__http_header h[] = {{"Host", EX_HOST},
                            {"x-amz-content-sha256", EMPTY_SHA},
                            {"x-amz-date", EX_DATE},
                            {"X-Amz-Security-Token", token}};
    w2l__sigv4_req r = {"GET", "/test.txt", "", h, 3, EMPTY_SHA, "us-east-1", "s3", EX_DATE};
    w2l__aws_cred c = example_cred();
    w2l_buf plain = {0}, with = {0}, cr = {0};
    w2l_error err;
    ck_assert_ok(w2l__sigv4_sign(&r, &c, &plain, NULL, NULL, &err), err);
    r.nheaders = 4;
    c.session_token = (char *)token;
    ck_assert_ok(w2l__sigv4_sign(&r, &c, &with, &cr, NULL, &err), err);
    ck_assert_ptr_nonnull(strstr((const char *)with.data,
                                 "SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
                                 "x-amz-security-token, "));
    ck_assert_ptr_nonnull(strstr((const char *)cr.data,
                                 "\nx-amz-date:20130524T000000Z\n"
                                 "x-amz-security-token:FQoGZXIvYXdzEXAMPLE/token+with=odd/chars\n"
                                 "\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\n"));
    const char *s1 = signature_of((const char *)plain.data);
    const char *s2 = signature_of((const char *)with.data);
    ck_assert_uint_eq(strlen(s1), 64);
    ck_assert_uint_eq(strlen(s2), 64);
    ck_assert_str_ne(s1, s2);
    /* the unsigned variant is the AWS GET example without the range header */
    ck_assert_ptr_nonnull(strstr((const char *)plain.data,
                                 "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "));
    w2l_buf_release(&plain);
    w2l_buf_release(&with);
    w2l_buf_release(&cr);
}
END_TEST

/* Names lower-cased and sorted, values trimmed with inner runs folded, a repeated header's
 * values joined by ',' in the order given; outputs are appended, not replaced. */
START_TEST(canonical_headers_are_normalised)
{
    const w2l__http_header h[] = {{"X-Amz-Meta-B", "  two \t  words  "},
                                  {"HOST", "h.example"},
                                  {"x-amz-meta-a", "\"a   b   c\""},
                                  {"X-AMZ-META-B", "second"},
                                  {"x-amz-date", EX_DATE},
                                  {"x-amz-meta-empty", "   "}};
    w2l__sigv4_req r = {"POST", "/b/k%20ey", "uploads=", h, 6, "UNSIGNED-PAYLOAD", "eu-west-3",
                        "s3", EX_DATE};
    w2l__aws_cred c = example_cred();
    w2l_buf auth = {0}, cr = {0}, sts = {0};
    w2l_error err;
    w2l_buf_append(&auth, "prefix|", 7, &err);
    ck_assert_ok(w2l__sigv4_sign(&r, &c, &auth, &cr, &sts, &err), err);
    ck_assert_str_eq((const char *)cr.data,
                     "POST\n/b/k%20ey\nuploads=\n"
                     "host:h.example\n"
                     "x-amz-date:20130524T000000Z\n"
                     "x-amz-meta-a:\"a b c\"\n"
                     "x-amz-meta-b:two words,second\n"
                     "x-amz-meta-empty:\n"
                     "\n"
                     "host;x-amz-date;x-amz-meta-a;x-amz-meta-b;x-amz-meta-empty\n"
                     "UNSIGNED-PAYLOAD");
    /* the string to sign hashes exactly that text */
    unsigned char d[32];
    char hex[65];
    w2l__sha256(cr.data, cr.len, d);
    w2l__hex(d, 32, hex);
    ck_assert_ptr_nonnull(strstr((const char *)sts.data, "\n20130524/eu-west-3/s3/aws4_request\n"));
    ck_assert_str_eq((const char *)sts.data + sts.len - 64, hex);
    ck_assert_int_eq(strncmp((const char *)auth.data,
                             "prefix|AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
                             "eu-west-3/s3/aws4_request, SignedHeaders=host;x-amz-date;"
                             "x-amz-meta-a;x-amz-meta-b;x-amz-meta-empty, Signature=",
                             strlen("prefix|AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/"
                                    "20130524/eu-west-3/s3/aws4_request, SignedHeaders=host;"
                                    "x-amz-date;x-amz-meta-a;x-amz-meta-b;x-amz-meta-empty, "
                                    "Signature=")),
                     0);
    /* the header order given does not change the signature */
    const w2l__http_header h2[] = {h[5], h[4], h[0], h[2], h[1], h[3]};
    r.headers = h2;
    w2l_buf auth2 = {0};
    ck_assert_ok(w2l__sigv4_sign(&r, &c, &auth2, NULL, NULL, &err), err);
    ck_assert_str_eq((const char *)auth2.data, (const char *)auth.data + 7);
    w2l_buf_release(&auth);
    w2l_buf_release(&auth2);
    w2l_buf_release(&cr);
    w2l_buf_release(&sts);
}
END_TEST

/* ---- encoding ---- */

static void check_enc(const char *in, int keep_slash, const char *want)
{
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__aws_uri_encode(&b, in, strlen(in), keep_slash, &err), err);
    ck_assert_str_eq((const char *)b.data, want);
    ck_assert_uint_eq(b.len, strlen(want));
    w2l_buf_release(&b);
}

START_TEST(uri_encoding)
{
    check_enc("", 0, "");
    check_enc("AZaz09-._~", 0, "AZaz09-._~");
    check_enc("a b", 1, "a%20b");
    check_enc("caf\xc3\xa9", 1, "caf%C3%A9");
    check_enc("a+b=c", 1, "a%2Bb%3Dc");
    check_enc("dir/sub/file name.txt", 1, "dir/sub/file%20name.txt");
    check_enc("dir/sub/file name.txt", 0, "dir%2Fsub%2Ffile%20name.txt");
    check_enc("~user", 0, "~user");
    check_enc("100%", 1, "100%25");
    check_enc("%2F", 0, "%252F"); /* already-encoded text is encoded again */
    check_enc("*!'();:@&$,?#[]", 0, "%2A%21%27%28%29%3B%3A%40%26%24%2C%3F%23%5B%5D");
    check_enc("\x01\x7f\xff", 0, "%01%7F%FF");
    /* appends, counting only what it wrote; an embedded NUL is a byte like any other */
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l_buf_append(&b, "x=", 2, &err), err);
    ck_assert_ok(w2l__aws_uri_encode(&b, "a\0b", 3, 0, &err), err);
    ck_assert_uint_eq(b.len, 7);
    ck_assert_int_eq(memcmp(b.data, "x=a%00b", 7), 0);
    w2l_buf_release(&b);
}
END_TEST

static void check_query(const w2l__query_param *p, size_t n, const char *want)
{
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__sigv4_query(&b, p, n, &err), err);
    ck_assert_str_eq(b.data ? (const char *)b.data : "", want);
    ck_assert_uint_eq(b.len, strlen(want));
    w2l_buf_release(&b);
}

START_TEST(query_canonical_form)
{
    check_query(NULL, 0, "");
    const w2l__query_param up[] = {{"uploads", ""}};
    check_query(up, 1, "uploads=");
    const w2l__query_param list[] = {{"prefix", "a/b c"},
                                     {"list-type", "2"},
                                     {"continuation-token", "1Ab/c+d=="},
                                     {"delimiter", "/"}};
    check_query(list, 4,
                "continuation-token=1Ab%2Fc%2Bd%3D%3D&delimiter=%2F&list-type=2&prefix=a%2Fb%20c");
    /* sorted by encoded name in byte order: upper case before lower, a prefix first, and
     * "z{" (encoded "z%7B") before "zz" although '{' sorts after 'z' unencoded */
    const w2l__query_param odd[] = {{"b", "1"}, {"B", "2"}, {"a b", "3"}, {"a", "4"},
                                    {"_", "5"}, {"zz", "6"}, {"z{", "7"}};
    check_query(odd, 7, "B=2&_=5&a=4&a%20b=3&b=1&z%7B=7&zz=6");
    /* equal names sort by encoded value; NULL value as empty */
    const w2l__query_param dup[] = {{"k", "z"}, {"k", "+"}, {"k", "a"}, {"k", NULL}};
    check_query(dup, 4, "k=&k=%2B&k=a&k=z");
    const w2l__query_param utf[] = {{"prefix", "\xc3\xa9t\xc3\xa9/"}, {"uploadId", "x~y"}};
    check_query(utf, 2, "prefix=%C3%A9t%C3%A9%2F&uploadId=x~y");
    /* refusals */
    w2l_buf b = {0};
    w2l_error err;
    const w2l__query_param bad[] = {{"ok", "1"}, {"", "2"}};
    ck_assert_int_eq(w2l__sigv4_query(&b, bad, 2, &err), W2L_MISUSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "parameter 1 has no name"));
    ck_assert_uint_eq(b.len, 0);
    w2l_buf_release(&b);
}
END_TEST

/* ---- refusals ---- */

static void check_refused(const w2l__sigv4_req *r, const w2l__aws_cred *c, const char *what)
{
    w2l_buf auth = {0};
    w2l_error err;
    ck_assert_int_eq(w2l__sigv4_sign(r, c, &auth, NULL, NULL, &err), W2L_MISUSE);
    ck_assert_msg(strstr(err.msg, what) != NULL, "\"%s\" not in \"%s\"", what, err.msg);
    if (c->secret_key && c->secret_key[0])
        ck_assert_msg(strstr(err.msg, c->secret_key) == NULL, "secret in \"%s\"", err.msg);
    ck_assert_uint_eq(auth.len, 0);
    w2l_buf_release(&auth);
}

START_TEST(signer_refuses_bad_input)
{
    w2l__http_header h[] = {{"Host", EX_HOST}, {"x-amz-date", EX_DATE}};
    const w2l__sigv4_req good = {"GET", "/k", "", h, 2, EMPTY_SHA, "us-east-1", "s3", EX_DATE};
    w2l__aws_cred c = example_cred();
    w2l__sigv4_req r = good;

    c.access_key = NULL;
    check_refused(&r, &c, "no access key id");
    c.access_key = "";
    check_refused(&r, &c, "no access key id");
    c.access_key = "AKIA/X";
    check_refused(&r, &c, "access key id has");
    c = example_cred();
    c.secret_key = NULL;
    check_refused(&r, &c, "AKIAIOSFODNN7EXAMPLE have no secret access key");
    c.secret_key = "";
    check_refused(&r, &c, "no secret access key");
    c = example_cred();

    h[0].name = "Ho st";
    check_refused(&r, &c, "header 0 name \"Ho st\" has a character not allowed");
    h[0].name = "Host:";
    check_refused(&r, &c, "byte 0x3a at offset 4");
    h[0].name = "";
    check_refused(&r, &c, "header 0 has no name");
    h[0].name = "Host";
    h[1].value = "2013\r\nx-evil: 1";
    check_refused(&r, &c, "header x-amz-date value has a control character");
    h[1].value = NULL;
    check_refused(&r, &c, "header x-amz-date has no value");
    h[1].value = EX_DATE;
    h[0].name = "x-host";
    check_refused(&r, &c, "no host header");
    h[0].name = "Host";

    static const char *bad_dates[] = {"20130524", "20130524T000000", "20130524T000000ZZ",
                                      "2013-05-24T00:00:00Z", "20130524t000000Z",
                                      "2013052AT000000Z", "20130524T00000xZ", ""};
    for (size_t i = 0; i < W2L_ARRAY_LEN(bad_dates); i++) {
        r.amz_date = bad_dates[i];
        check_refused(&r, &c, "is not of the form YYYYMMDDTHHMMSSZ");
    }
    r.amz_date = NULL;
    check_refused(&r, &c, "amz_date \"(null)\"");
    r = good;
    r.canonical_uri = "k";
    check_refused(&r, &c, "does not start with '/'");
    r.canonical_uri = "/a b";
    check_refused(&r, &c, "must be URI-encoded");
    r = good;
    r.canonical_query = "a=b c";
    check_refused(&r, &c, "canonical query has a byte 0x20");
    r = good;
    r.region = "us/east";
    check_refused(&r, &c, "region \"us/east\"");
    r = good;
    r.service = "";
    check_refused(&r, &c, "service \"\"");
    r = good;
    r.method = "GE T";
    check_refused(&r, &c, "HTTP method \"GE T\" is not a token");
    r = good;
    r.payload_hash = "";
    check_refused(&r, &c, "payload hash");
    r = good;
    r.headers = NULL;
    check_refused(&r, &c, "NULL headers");
    r.nheaders = 0;
    check_refused(&r, &c, "no host header");

    /* and the good request still signs */
    w2l_buf auth = {0};
    w2l_error err;
    ck_assert_ok(w2l__sigv4_sign(&good, &c, &auth, NULL, NULL, &err), err);
    ck_assert_uint_gt(auth.len, 64);
    w2l_buf_release(&auth);
}
END_TEST

START_TEST(amz_date_from_ms)
{
    char d[17];
    w2l__amz_date(0, d);
    ck_assert_str_eq(d, "19700101T000000Z");
    w2l__amz_date(1369353600000LL, d);
    ck_assert_str_eq(d, "20130524T000000Z");
    w2l__amz_date(1709210096789LL, d); /* a leap day */
    ck_assert_str_eq(d, "20240229T123456Z");
    w2l__amz_date(978307199999LL, d); /* the last millisecond of a year */
    ck_assert_str_eq(d, "20001231T235959Z");
    w2l__amz_date(-1, d);
    ck_assert_str_eq(d, "19691231T235959Z");
    w2l__amz_date(INT64_MAX, d);
    ck_assert_str_eq(d, "99991231T235959Z");
    w2l__amz_date(INT64_MIN, d);
    ck_assert_str_eq(d, "00000101T000000Z");
}
END_TEST

Suite *suite_sigv4(void)
{
    Suite *s = suite_create("sigv4");
    TCase *hash = tcase_create("sha256");
    tcase_add_test(hash, sha256_fips_vectors);
    tcase_add_test(hash, sha256_streaming_matches_one_shot);
    tcase_add_test(hash, hmac_rfc4231);
    tcase_add_test(hash, hex_is_lower_case);
    suite_add_tcase(s, hash);
    TCase *aws = tcase_create("aws_examples");
    tcase_add_test(aws, aws_example_get_object);
    tcase_add_test(aws, aws_example_put_object);
    tcase_add_test(aws, aws_example_get_lifecycle);
    tcase_add_test(aws, aws_example_list_objects);
    tcase_add_test(aws, session_token_is_signed);
    tcase_add_test(aws, canonical_headers_are_normalised);
    suite_add_tcase(s, aws);
    TCase *enc = tcase_create("encoding");
    tcase_add_test(enc, uri_encoding);
    tcase_add_test(enc, query_canonical_form);
    suite_add_tcase(s, enc);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, signer_refuses_bad_input);
    tcase_add_test(edge, amz_date_from_ms);
    suite_add_tcase(s, edge);
    return s;
}
