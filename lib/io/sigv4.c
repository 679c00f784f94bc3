/*
 * AWS Signature Version 4, header form, as the S3 API reference describes it
 * ("Signature Calculations for the Authorization Header"): URI encoding, the canonical
 * query string, the canonical request, the string to sign, the derived signing key and
 * the Authorization value. test/check_sigv4.c holds AWS's worked examples.
 *
 * The secret key never reaches a message or a log line; only the HMAC chain reads it.
 */
#include <stdlib.h>

#include "s3.h"

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

w2l_rc w2l__aws_uri_encode(w2l_buf *out, const char *s, size_t n, int keep_slash,
                           w2l_error *err)
{
    static const char digits[] = "0123456789ABCDEF";
    if (!out || (!s && n)) return w2l__fail(err, W2L_MISUSE, "aws uri encode: NULL argument");
    if (n > (SIZE_MAX - 1) / 3)
        return w2l__fail(err, W2L_NOMEM, "aws uri encode: %zu bytes too long", n);
    W2L_TRY(w2l__buf_reserve(out, 3 * n + 1, err));
    unsigned char *d = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (c == '/' && keep_slash)) {
            *d++ = c;
        } else {
            *d++ = '%';
            *d++ = (unsigned char)digits[c >> 4];
            *d++ = (unsigned char)digits[c & 15];
        }
    }
    out->len = (size_t)(d - out->data);
    *d = '\0'; /* reserved above; not counted */
    return W2L_OK;
}

/* ---- canonical query string ---- */

typedef struct qpair {
    const unsigned char *name, *value; /* into the scratch buffer, once it stops growing */
    size_t name_off, name_len, value_off, value_len;
} qpair;

static int cmp_bytes(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    int c = memcmp(a, b, W2L_MIN(alen, blen));
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int cmp_qpair(const void *x, const void *y)
{
    const qpair *a = x, *b = y;
    int c = cmp_bytes(a->name, a->name_len, b->name, b->name_len);
    return c ? c : cmp_bytes(a->value, a->value_len, b->value, b->value_len);
}

w2l_rc w2l__sigv4_query(w2l_buf *out, const w2l__query_param *params, size_t n,
                        w2l_error *err)
{
    if (!out || (!params && n)) return w2l__fail(err, W2L_MISUSE, "sigv4 query: NULL argument");
    if (n == 0) return w2l__buf_cstr(out, err);
    for (size_t i = 0; i < n; i++) {
        if (!params[i].name || !params[i].name[0])
            return w2l__fail(err, W2L_MISUSE, "sigv4 query: parameter %zu has no name", i);
    }
    qpair *v = w2l__calloc(n, sizeof *v);
    W2L_NOMEM_IF(!v, err);
    w2l_buf enc = {0};
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < n && rc == W2L_OK; i++) {
        const char *name = params[i].name, *value = params[i].value ? params[i].value : "";
        v[i].name_off = enc.len;
        rc = w2l__aws_uri_encode(&enc, name, strlen(name), 0, err);
        if (rc != W2L_OK) break;
        v[i].name_len = enc.len - v[i].name_off;
        v[i].value_off = enc.len;
        rc = w2l__aws_uri_encode(&enc, value, strlen(value), 0, err);
        v[i].value_len = enc.len - v[i].value_off;
    }
    if (rc == W2L_OK) {
        for (size_t i = 0; i < n; i++) {
            v[i].name = enc.data + v[i].name_off;
            v[i].value = enc.data + v[i].value_off;
        }
        qsort(v, n, sizeof *v, cmp_qpair);
        size_t total = 0;
        for (size_t i = 0; i < n; i++) total += v[i].name_len + v[i].value_len + 2;
        rc = w2l__buf_reserve(out, total + 1, err);
    }
    if (rc == W2L_OK) {
        for (size_t i = 0; i < n; i++) {
            if (i) out->data[out->len++] = '&';
            memcpy(out->data + out->len, v[i].name, v[i].name_len);
            out->len += v[i].name_len;
            out->data[out->len++] = '=';
            memcpy(out->data + out->len, v[i].value, v[i].value_len);
            out->len += v[i].value_len;
        }
        out->data[out->len] = '\0';
    }
    w2l_buf_release(&enc);
    w2l__free(v);
    return rc;
}

/* ---- the signature ---- */

typedef struct hdr {
    const char *name, *value;
    size_t name_len, idx;
} hdr;

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* RFC 9110 token characters. */
static int tchar(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* By lower-cased name; headers of the same name keep the order given (their values are
 * joined with ',' in that order). */
static int cmp_hdr(const void *x, const void *y)
{
    const hdr *a = x, *b = y;
    size_t n = W2L_MIN(a->name_len, b->name_len);
    for (size_t i = 0; i < n; i++) {
        unsigned char ca = lower((unsigned char)a->name[i]), cb = lower((unsigned char)b->name[i]);
        if (ca != cb) return ca < cb ? -1 : 1;
    }
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int same_name(const hdr *a, const hdr *b)
{
    if (a->name_len != b->name_len) return 0;
    for (size_t i = 0; i < a->name_len; i++)
        if (lower((unsigned char)a->name[i]) != lower((unsigned char)b->name[i])) return 0;
    return 1;
}

/* Appends the value trimmed, with each inner run of spaces and tabs folded to one space. */
static w2l_rc put_value(w2l_buf *b, const char *v, w2l_error *err)
{
    size_t n = strlen(v);
    W2L_TRY(w2l__buf_reserve(b, n + 1, err));
    int pending_space = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == ' ' || c == '\t') {
            pending_space = any;
            continue;
        }
        if (pending_space) b->data[b->len++] = ' ';
        pending_space = 0;
        any = 1;
        b->data[b->len++] = c;
    }
    return W2L_OK;
}

/* A printable, non-empty word without the characters that would change the structure of
 * the text it goes into (scope '/', list ',', ';', whitespace). */
static int plain_word(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c >= 0x7f || c == '/' || c == ',' || c == ';' || c == '=') return 0;
    }
    return 1;
}

static int amz_date_ok(const char *d)
{
    if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z') return 0;
    for (int i = 0; i < 15; i++)
        if (i != 8 && (d[i] < '0' || d[i] > '9')) return 0;
    return 1;
}

static w2l_rc check_request(const w2l__sigv4_req *r, const w2l__aws_cred *cred, w2l_error *err)
{
    if (!r || !cred) return w2l__fail(err, W2L_MISUSE, "sigv4: NULL request or credentials");
    if (!cred->access_key || !cred->access_key[0])
        return w2l__fail(err, W2L_MISUSE, "sigv4: credentials have no access key id");
    if (!plain_word(cred->access_key))
        return w2l__fail(err, W2L_MISUSE,
                         "sigv4: access key id has a space, control character, '/', ',', ';' "
                         "or '=' in it");
    if (!cred->secret_key || !cred->secret_key[0])
        return w2l__fail(err, W2L_MISUSE, "sigv4: credentials for access key %s have no secret "
                         "access key", cred->access_key);
    if (!r->method || !r->method[0])
        return w2l__fail(err, W2L_MISUSE, "sigv4: no HTTP method");
    for (const char *p = r->method; *p; p++)
        if (!tchar((unsigned char)*p))
            return w2l__fail(err, W2L_MISUSE, "sigv4: HTTP method \"%s\" is not a token",
                             r->method);
    if (!r->canonical_uri || r->canonical_uri[0] != '/')
        return w2l__fail(err, W2L_MISUSE, "sigv4: canonical URI \"%s\" does not start with '/'",
                         r->canonical_uri ? r->canonical_uri : "(null)");
    for (const char *p = r->canonical_uri; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
            return w2l__fail(err, W2L_MISUSE,
                             "sigv4: canonical URI has a byte 0x%02x at offset %zu; it must be "
                             "URI-encoded", (unsigned char)*p, (size_t)(p - r->canonical_uri));
    if (r->canonical_query)
        for (const char *p = r->canonical_query; *p; p++)
            if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
                return w2l__fail(err, W2L_MISUSE,
                                 "sigv4: canonical query has a byte 0x%02x at offset %zu; it "
                                 "must be URI-encoded", (unsigned char)*p,
                                 (size_t)(p - r->canonical_query));
    if (!plain_word(r->region))
        return w2l__fail(err, W2L_MISUSE, "sigv4: region \"%s\" is empty or has a character "
                         "not allowed", r->region ? r->region : "(null)");
    if (!plain_word(r->service))
        return w2l__fail(err, W2L_MISUSE, "sigv4: service \"%s\" is empty or has a character "
                         "not allowed", r->service ? r->service : "(null)");
    if (!amz_date_ok(r->amz_date))
        return w2l__fail(err, W2L_MISUSE,
                         "sigv4: amz_date \"%.40s\" is not of the form YYYYMMDDTHHMMSSZ",
                         r->amz_date ? r->amz_date : "(null)");
    if (!plain_word(r->payload_hash))
        return w2l__fail(err, W2L_MISUSE, "sigv4: payload hash is empty or has a character "
                         "not allowed");
    if (!r->headers && r->nheaders)
        return w2l__fail(err, W2L_MISUSE, "sigv4: NULL headers");
    int have_host = 0;
    for (size_t i = 0; i < r->nheaders; i++) {
        const char *name = r->headers[i].name, *value = r->headers[i].value;
        if (!name || !name[0])
            return w2l__fail(err, W2L_MISUSE, "sigv4: header %zu has no name", i);
        for (const char *p = name; *p; p++)
            if (!tchar((unsigned char)*p))
                return w2l__fail(err, W2L_MISUSE,
                                 "sigv4: header %zu name \"%.64s\" has a character not allowed "
                                 "(byte 0x%02x at offset %zu)", i, name, (unsigned char)*p,
                                 (size_t)(p - name));
        if (!value) return w2l__fail(err, W2L_MISUSE, "sigv4: header %s has no value", name);
        for (const char *p = value; *p; p++)
            if (((unsigned char)*p < ' ' && *p != '\t') || *p == 0x7f)
                return w2l__fail(err, W2L_MISUSE,
                                 "sigv4: header %s value has a control character (byte 0x%02x "
                                 "at offset %zu)", name, (unsigned char)*p, (size_t)(p - value));
        if (strlen(name) == 4 && lower((unsigned char)name[0]) == 'h' &&
            lower((unsigned char)name[1]) == 'o' && lower((unsigned char)name[2]) == 's' &&
            lower((unsigned char)name[3]) == 't')
            have_host = 1;
    }
    if (!have_host) return w2l__fail(err, W2L_MISUSE, "sigv4: no host header among those to sign");
    return W2L_OK;
}

static w2l_rc put_lower(w2l_buf *b, const char *s, size_t n, w2l_error *err)
{
    W2L_TRY(w2l__buf_reserve(b, n + 1, err));
    for (size_t i = 0; i < n; i++) b->data[b->len++] = lower((unsigned char)s[i]);
    return W2L_OK;
}

/* Canonical headers ("name:value\n" each) into cr, the signed-header list into signed_. */
static w2l_rc canonical_headers(const w2l__sigv4_req *r, w2l_buf *cr, w2l_buf *signed_,
                                w2l_error *err)
{
    hdr *h = w2l__calloc(r->nheaders, sizeof *h);
    W2L_NOMEM_IF(!h, err);
    for (size_t i = 0; i < r->nheaders; i++) {
        h[i].name = r->headers[i].name;
        h[i].name_len = strlen(h[i].name);
        h[i].value = r->headers[i].value;
        h[i].idx = i;
    }
    qsort(h, r->nheaders, sizeof *h, cmp_hdr);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < r->nheaders && rc == W2L_OK; i++) {
        int same = i && same_name(&h[i - 1], &h[i]);
        if (same) {
            rc = w2l_buf_append(cr, ",", 1, err);
        } else {
            if (i) rc = w2l_buf_append(cr, "\n", 1, err);
            if (rc == W2L_OK && i) rc = w2l_buf_append(signed_, ";", 1, err);
            if (rc == W2L_OK) rc = put_lower(signed_, h[i].name, h[i].name_len, err);
            if (rc == W2L_OK) rc = put_lower(cr, h[i].name, h[i].name_len, err);
            if (rc == W2L_OK) rc = w2l_buf_append(cr, ":", 1, err);
        }
        if (rc == W2L_OK) rc = put_value(cr, h[i].value, err);
    }
    if (rc == W2L_OK) rc = w2l_buf_append(cr, "\n", 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(signed_, err);
    w2l__free(h);
    return rc;
}

static void signing_key(const char *secret, const char *date8, const char *region,
                        const char *service, unsigned char out[32])
{
    unsigned char k[32];
    w2l__sha256_ctx s;
    /* HMAC keyed with "AWS4" + secret, hashed first when longer than a block (RFC 2104),
     * fed without copying the secret anywhere. */
    size_t slen = strlen(secret);
    unsigned char key[64] = {0};
    if (4 + slen > 64) {
        w2l__sha256_init(&s);
        w2l__sha256_update(&s, "AWS4", 4);
        w2l__sha256_update(&s, secret, slen);
        w2l__sha256_final(&s, key);
        w2l__hmac_sha256(key, 32, date8, 8, k);
    } else {
        memcpy(key, "AWS4", 4);
        memcpy(key + 4, secret, slen);
        w2l__hmac_sha256(key, 4 + slen, date8, 8, k);
    }
    w2l__hmac_sha256(k, 32, region, strlen(region), k);
    w2l__hmac_sha256(k, 32, service, strlen(service), k);
    w2l__hmac_sha256(k, 32, "aws4_request", 12, out);
    memset(key, 0, sizeof key);
    memset(k, 0, sizeof k);
}

w2l_rc w2l__sigv4_sign(const w2l__sigv4_req *r, const w2l__aws_cred *cred, w2l_buf *auth,
                       w2l_buf *canonical, w2l_buf *string_to_sign, w2l_error *err)
{
    if (!auth) return w2l__fail(err, W2L_MISUSE, "sigv4: NULL output buffer");
    W2L_TRY(check_request(r, cred, err));
    const char *query = r->canonical_query ? r->canonical_query : "";
    w2l_buf cr = {0}, sh = {0}, sts = {0};
    unsigned char digest[32], key[32];
    char hex[65], date8[9];
    memcpy(date8, r->amz_date, 8);
    date8[8] = '\0';

    w2l_rc rc = w2l__buf_printf(&cr, err, "%s\n%s\n%s\n", r->method, r->canonical_uri, query);
    if (rc == W2L_OK) rc = canonical_headers(r, &cr, &sh, err);
    if (rc == W2L_OK)
        rc = w2l__buf_printf(&cr, err, "\n%s\n%s", (const char *)sh.data, r->payload_hash);
    if (rc != W2L_OK) goto done;
    w2l__sha256(cr.data, cr.len, digest);
    w2l__hex(digest, 32, hex);
    rc = w2l__buf_printf(&sts, err, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s",
                         r->amz_date, date8, r->region, r->service, hex);
    if (rc != W2L_OK) goto done;

    signing_key(cred->secret_key, date8, r->region, r->service, key);
    w2l__hmac_sha256(key, 32, sts.data, sts.len, digest);
    memset(key, 0, sizeof key);
    w2l__hex(digest, 32, hex);

    if (canonical) rc = w2l_buf_append(canonical, cr.data, cr.len, err);
    if (rc == W2L_OK && canonical) rc = w2l__buf_cstr(canonical, err);
    if (rc == W2L_OK && string_to_sign) rc = w2l_buf_append(string_to_sign, sts.data, sts.len, err);
    if (rc == W2L_OK && string_to_sign) rc = w2l__buf_cstr(string_to_sign, err);
    if (rc == W2L_OK)
        rc = w2l__buf_printf(auth, err,
                             "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, "
                             "SignedHeaders=%s, Signature=%s",
                             cred->access_key, date8, r->region, r->service,
                             (const char *)sh.data, hex);
done:
    w2l_buf_release(&cr);
    w2l_buf_release(&sh);
    w2l_buf_release(&sts);
    return rc;
}

/* Days since 1970-01-01 to a civil date, proleptic Gregorian (eras of 400 years, years
 * starting in March so the leap day comes last). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void put_digits(char *p, unsigned v, int n)
{
    while (n--) {
        p[n] = (char)('0' + v % 10);
        v /= 10;
    }
}

void w2l__amz_date(int64_t ms, char out[17])
{
    /* Four-digit years only: clamp to 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59Z. */
    const int64_t lo = -62167219200000LL, hi = 253402300799999LL;
    if (ms < lo) ms = lo;
    if (ms > hi) ms = hi;
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    put_digits(out, (unsigned)y, 4);
    put_digits(out + 4, m, 2);
    put_digits(out + 6, d, 2);
    out[8] = 'T';
    put_digits(out + 9, (unsigned)(rem / 3600), 2);
    put_digits(out + 11, (unsigned)(rem / 60 % 60), 2);
    put_digits(out + 13, (unsigned)(rem % 60), 2);
    out[15] = 'Z';
    out[16] = '\0';
}
