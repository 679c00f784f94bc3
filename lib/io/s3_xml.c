/*
 * The few XML answers S3 gives (Error, ListBucketResult, InitiateMultipartUploadResult,
 * DeleteResult), read without an XML library: a scanner that finds elements by local name
 * (a prefix such as "s3:" is dropped, attributes are skipped, <Tag/> is empty) and decodes
 * the five predefined entities and numeric character references (XML 1.0 sections 4.1, 4.6)
 * into UTF-8. Every read is bounded by the length given, so truncated or garbage input
 * yields "absent", never a read past the end. It does not validate: S3 answers are
 * well-formed, and anything else only needs to not crash.
 */
#include <stdio.h>

#include "s3.h"

enum { T_NONE, T_START, T_EMPTY, T_END };

typedef struct xtag {
    int kind;
    const char *name; /* local name, without a prefix */
    size_t nlen;
    const char *begin; /* at '<' */
    const char *after; /* just past '>' */
} xtag;

static const char *find2(const char *p, const char *end, const char *pat)
{
    size_t k = strlen(pat);
    for (; p + k <= end; p++)
        if (memcmp(p, pat, k) == 0) return p;
    return NULL;
}

static int is_name_end(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '/' || c == '>';
}

/* The next start, empty or end tag at or after p; comments, CDATA, processing instructions
 * and declarations are stepped over. T_NONE when there is none before end. */
static xtag next_tag(const char *p, const char *end)
{
    xtag t = {T_NONE, NULL, 0, NULL, NULL};
    for (;;) {
        p = p < end ? memchr(p, '<', (size_t)(end - p)) : NULL;
        if (!p) return t;
        const char *q = p + 1;
        if (q >= end) return t;
        const char *close = NULL;
        if (end - q >= 3 && memcmp(q, "!--", 3) == 0) close = find2(q + 3, end, "-->");
        else if (end - q >= 8 && memcmp(q, "![CDATA[", 8) == 0) close = find2(q + 8, end, "]]>");
        else if (*q == '?') close = find2(q + 1, end, "?>");
        else if (*q == '!') close = memchr(q, '>', (size_t)(end - q));
        if (*q == '!' || *q == '?') {
            if (!close) return t;
            p = close + 1;
            continue;
        }
        int kind = T_START;
        if (*q == '/') kind = T_END, q++;
        const char *name = q;
        while (q < end && !is_name_end(*q)) q++;
        if (q >= end) return t;
        if (q == name) { /* "<>" or "< x": not a tag */
            p++;
            continue;
        }
        size_t nlen = (size_t)(q - name);
        const char *colon = memchr(name, ':', nlen);
        if (colon) {
            /* only a simple prefix: "s3:Key" */
            nlen -= (size_t)(colon + 1 - name);
            name = colon + 1;
        }
        /* to '>', past quoted attribute values (which may hold '>') */
        char quote = 0;
        while (q < end && (quote || *q != '>')) {
            if (quote && *q == quote) quote = 0;
            else if (!quote && (*q == '"' || *q == '\'')) quote = *q;
            q++;
        }
        if (q >= end) return t;
        if (kind == T_START && q[-1] == '/') kind = T_EMPTY;
        t.kind = kind;
        t.name = name;
        t.nlen = nlen;
        t.begin = p;
        t.after = q + 1;
        return t;
    }
}

static int tag_is(const xtag *t, const char *name, size_t len)
{
    return t->nlen == len && memcmp(t->name, name, len) == 0;
}

/* The first <name> element at or after p: its inner text [*in, *in + *inlen) and the end of
 * the element (*next). 0 when there is none, or its end tag is missing. */
static int find_elem(const char *p, const char *end, const char *name, const char **in,
                     size_t *inlen, const char **next)
{
    size_t len = strlen(name);
    for (;;) {
        xtag t = next_tag(p, end);
        if (t.kind == T_NONE) return 0;
        p = t.after;
        if ((t.kind != T_START && t.kind != T_EMPTY) || !tag_is(&t, name, len)) continue;
        if (t.kind == T_EMPTY) {
            *in = t.after;
            *inlen = 0;
            *next = t.after;
            return 1;
        }
        const char *body = t.after;
        int depth = 1;
        for (;;) {
            xtag u = next_tag(p, end);
            if (u.kind == T_NONE) return 0;
            p = u.after;
            if (!tag_is(&u, name, len)) continue;
            if (u.kind == T_START) depth++;
            else if (u.kind == T_END && --depth == 0) {
                *in = body;
                *inlen = (size_t)(u.begin - body);
                *next = u.after;
                return 1;
            }
        }
    }
}

static size_t put_utf8(unsigned long cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes one reference at s[0] == '&' into o (room for 4 bytes); returns the bytes of s it
 * takes, or 0 when it is not a reference (then '&' stays as it is). */
static size_t entity(const char *s, const char *end, char *o, size_t *olen)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    size_t avail = (size_t)(end - s) - 1;
    for (size_t i = 0; i < W2L_ARRAY_LEN(named); i++) {
        size_t k = strlen(named[i].name);
        if (avail >= k && memcmp(s + 1, named[i].name, k) == 0) {
            o[0] = named[i].c;
            *olen = 1;
            return k + 1;
        }
    }
    if (avail < 3 || s[1] != '#') return 0;
    const char *p = s + 2;
    int hex = *p == 'x' || *p == 'X';
    if (hex) p++;
    unsigned long cp = 0;
    int digits = 0;
    for (; p < end && *p != ';'; p++, digits++) {
        int d;
        if (*p >= '0' && *p <= '9') d = *p - '0';
        else if (hex && *p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
        else if (hex && *p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
        else return 0;
        if (digits >= 8) return 0;
        cp = cp * (hex ? 16 : 10) + (unsigned long)d;
    }
    if (p >= end || digits == 0) return 0;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    *olen = put_utf8(cp, o);
    return (size_t)(p + 1 - s);
}

/* Decodes s[0..n) into dst[size] (cut to fit, NUL-terminated; size > 0); CDATA sections
 * are copied as they are. Returns the bytes written. The decoded text is never longer
 * than the raw one. */
static size_t decode(const char *s, size_t n, char *dst, size_t size)
{
    const char *end = s + n;
    size_t w = 0;
    while (s < end && w + 1 < size) {
        char tmp[4];
        size_t tl = 0, used = 0;
        if (*s == '&' && (used = entity(s, end, tmp, &tl)) > 0) {
            if (w + tl + 1 > size) break;
            memcpy(dst + w, tmp, tl);
            w += tl;
            s += used;
        } else if (*s == '<' && end - s >= 9 && memcmp(s, "<![CDATA[", 9) == 0) {
            const char *c = find2(s + 9, end, "]]>");
            const char *stop = c ? c : end;
            size_t k = W2L_MIN((size_t)(stop - (s + 9)), size - 1 - w);
            memcpy(dst + w, s + 9, k);
            w += k;
            s = c ? c + 3 : end;
        } else {
            dst[w++] = *s++;
        }
    }
    dst[w] = '\0';
    return w;
}

int w2l__xml_text(const char *xml, size_t n, const char *tag, w2l_buf *out)
{
    const char *in, *next;
    size_t len;
    if (out) out->len = 0;
    if (!xml || !tag || !find_elem(xml, xml + n, tag, &in, &len, &next)) {
        if (out && out->data) out->data[0] = '\0';
        return 0;
    }
    if (!out) return 1;
    w2l_error e;
    if (w2l__buf_reserve(out, len + 1, &e) != W2L_OK) {
        w2l__log(W2L_LOG_WARN, "xml: out of memory decoding <%s>", tag);
        if (out->data) out->data[0] = '\0';
        return 0;
    }
    out->len = decode(in, len, (char *)out->data, len + 1);
    return 1;
}

size_t w2l__xml_each(const char *xml, size_t n, const char *tag,
                     int (*fn)(void *ctx, const char *inner, size_t len), void *ctx)
{
    if (!xml || !tag) return 0;
    const char *p = xml, *end = xml + n, *in;
    size_t len, seen = 0;
    while (p < end && find_elem(p, end, tag, &in, &len, &p)) {
        seen++;
        if (fn && fn(ctx, in, len)) break;
    }
    return seen;
}

/* The decoded text of <name> inside [p, end) into dst[size]; 0 when absent. */
static int field(const char *p, const char *end, const char *name, char *dst, size_t size)
{
    const char *in, *next;
    size_t len;
    dst[0] = '\0';
    if (!find_elem(p, end, name, &in, &len, &next)) return 0;
    decode(in, len, dst, size);
    return 1;
}

int w2l__s3_error_text(const char *xml, size_t n, char *out, size_t size)
{
    const char *in, *next;
    size_t len;
    if (out && size) out[0] = '\0';
    if (!xml || !find_elem(xml, xml + n, "Error", &in, &len, &next)) return 0;
    if (!out || size == 0) return 1;
    const char *end = in + len;
    char code[128], msg[512], res[800], bucket[256], key[512];
    field(in, end, "Code", code, sizeof code);
    field(in, end, "Message", msg, sizeof msg);
    if (!field(in, end, "Resource", res, sizeof res)) {
        int hb = field(in, end, "BucketName", bucket, sizeof bucket) && bucket[0];
        int hk = field(in, end, "Key", key, sizeof key) && key[0];
        snprintf(res, sizeof res, "%s%s%s", hb ? bucket : "", hb && hk ? "/" : "",
                 hk ? key : "");
    }
    const char *c = code[0] ? code : "Error";
    if (msg[0]) snprintf(out, size, "%s: %s", c, msg);
    else snprintf(out, size, "%s", c);
    size_t k = strlen(out);
    if (res[0] && k + 1 < size) snprintf(out + k, size - k, " (resource %s)", res);
    return 1;
}
