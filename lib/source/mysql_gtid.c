/*
 * MySQL GTID sets (see mysql_gtid.h): the executed set of a MySQL source as text, as the
 * binary form of COM_BINLOG_DUMP_GTID and PREVIOUS_GTIDS, and in memory.
 *
 * In memory a set is an array of entries, one per (source UUID, tag), sorted by UUID bytes
 * and then tag ("" first); each entry holds its closed intervals [lo, hi] sorted, disjoint
 * and never adjacent (1-3 and 4-5 are kept as 1-5). A GTID number lies in 1..2^63-2, as
 * MySQL's (an interval's exclusive end must fit in a signed 64-bit integer).
 *
 * Text (MySQL's gtid_executed): sets joined by ',', each UUID[:ELEMENT]... where an ELEMENT
 * is an interval N or N-M, or a tag (8.3+: a letter or '_', then letters, digits and '_',
 * at most 32, case-insensitive and kept in lower case) that applies to the intervals after
 * it. White space may stand around every part. The canonical text prints each UUID once:
 * its untagged intervals, then each tag and its intervals.
 *
 * Binary form, all integers little-endian:
 *   classic: u64 n_sids, then per entry: uuid[16], u64 n_intervals, n_intervals x
 *            (u64 start, u64 end), end exclusive.
 *   tagged (8.3+): u64 header = 1 << 56 | n_sids << 8 | 1 (format byte 1 in the top and
 *            bottom bytes, n_sids in the 48 bits between), then per entry: uuid[16], the
 *            tag's length as a variable-length integer, the tag bytes, u64 n_intervals,
 *            intervals as above.
 *   The variable-length integer is that of MySQL's serialization format: the number of
 *   trailing one bits of the first byte is the count of bytes after it (eight: a 9-byte
 *   form, the value in the next 8 bytes); the value is the little-endian number over those
 *   bytes shifted right by count + 1. A tag length (at most 32) fits one byte: len << 1.
 *   Example, "3e11fa47-71ca-11e1-9e33-c80aa9429562:web:1-2" in the tagged form (52 bytes):
 *     01 01 00 00 00 00 00 01    header: format 1, n_sids 1
 *     3e 11 fa 47 71 ca 11 e1 9e 33 c8 0a a9 42 95 62    uuid
 *     06 77 65 62                tag length 3 (3 << 1), "web"
 *     01 00 00 00 00 00 00 00    n_intervals 1
 *     01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00    [1, 3)
 * A set is encoded in the tagged form only when it holds a tag, so servers before 8.3
 * always get the classic one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_gtid.h"

#define GNO_MAX ((int64_t)0x7ffffffffffffffeLL) /* the last number whose end fits int64 */
#define TAG_MAX 32

typedef struct ivl {
    int64_t lo, hi; /* closed */
} ivl;

typedef struct entry {
    uint8_t sid[16];
    char tag[TAG_MAX + 1];
    size_t tag_len;
    ivl *iv;
    size_t n, cap;
} entry;

struct w2l__mygtids {
    entry *e;
    size_t n, cap;
};

w2l__mygtids *w2l__mygtids_new(void) { return w2l__calloc(1, sizeof(w2l__mygtids)); }

void w2l__mygtids_free(w2l__mygtids *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) w2l__free(s->e[i].iv);
    w2l__free(s->e);
    w2l__free(s);
}

int w2l__mygtids_empty(const w2l__mygtids *s) { return !s || s->n == 0; }

static int entry_cmp(const uint8_t sid[16], const char *tag, size_t tag_len, const entry *e)
{
    int c = memcmp(sid, e->sid, 16);
    if (c) return c;
    size_t m = tag_len < e->tag_len ? tag_len : e->tag_len;
    c = memcmp(tag, e->tag, m);
    return c ? c : tag_len < e->tag_len ? -1 : tag_len > e->tag_len;
}

/* Index of the entry (sid, tag), or of where it would go (*found 0). */
static size_t find_entry(const w2l__mygtids *s, const uint8_t sid[16], const char *tag,
                         size_t tag_len, int *found)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = entry_cmp(sid, tag, tag_len, &s->e[mid]);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    *found = 0;
    return lo;
}

/* A tag is a letter or '_', then letters, digits or '_'; 1..32 bytes; lower-cased into out. */
static int tag_ok(const char *t, size_t n, char *out)
{
    if (n == 0 || n > TAG_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && (i == 0 || c < '0' || c > '9')) return 0;
        out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    return 1;
}

static entry *get_entry(w2l__mygtids *s, const uint8_t sid[16], const char *tag, size_t tag_len)
{
    int found;
    size_t i = find_entry(s, sid, tag, tag_len, &found);
    if (found) return &s->e[i];
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4;
        entry *ne = w2l__realloc(s->e, nc * sizeof *ne);
        if (!ne) return NULL;
        s->e = ne;
        s->cap = nc;
    }
    memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof *s->e);
    s->n++;
    entry *e = &s->e[i];
    memset(e, 0, sizeof *e);
    memcpy(e->sid, sid, 16);
    memcpy(e->tag, tag, tag_len);
    e->tag_len = tag_len;
    return e;
}

/* Adds [lo, hi] to e, merging what overlaps or touches it. 0, or -1 out of memory. */
static int add_interval(entry *e, int64_t lo, int64_t hi)
{
    /* the common case: the next number of the last interval */
    if (e->n && lo <= e->iv[e->n - 1].hi + 1 && lo >= e->iv[e->n - 1].lo) {
        if (hi > e->iv[e->n - 1].hi) e->iv[e->n - 1].hi = hi;
        return 0;
    }
    /* first interval that ends at or after lo - 1 (it may touch or overlap) */
    size_t a = 0, b = e->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (e->iv[m].hi < lo - 1) a = m + 1;
        else b = m;
    }
    size_t k = a; /* intervals k..j-1 merge with [lo, hi] */
    size_t j = k;
    while (j < e->n && e->iv[j].lo <= hi + 1) {
        if (e->iv[j].lo < lo) lo = e->iv[j].lo;
        if (e->iv[j].hi > hi) hi = e->iv[j].hi;
        j++;
    }
    if (j > k) { /* replace k..j-1 by one */
        e->iv[k].lo = lo;
        e->iv[k].hi = hi;
        memmove(&e->iv[k + 1], &e->iv[j], (e->n - j) * sizeof *e->iv);
        e->n -= j - k - 1;
        return 0;
    }
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 2;
        ivl *ni = w2l__realloc(e->iv, nc * sizeof *ni);
        if (!ni) return -1;
        e->iv = ni;
        e->cap = nc;
    }
    memmove(&e->iv[k + 1], &e->iv[k], (e->n - k) * sizeof *e->iv);
    e->iv[k].lo = lo;
    e->iv[k].hi = hi;
    e->n++;
    return 0;
}

static w2l_rc add_range(w2l__mygtids *s, const uint8_t sid[16], const char *tag, size_t tag_len,
                        int64_t lo, int64_t hi, w2l_error *err)
{
    entry *e = get_entry(s, sid, tag, tag_len);
    if (!e || add_interval(e, lo, hi)) return w2l__fail(err, W2L_NOMEM, "out of memory");
    return W2L_OK;
}

w2l_rc w2l__mygtids_add(w2l__mygtids *s, const uint8_t sid[16], const char *tag, size_t tag_len,
                        int64_t gno, w2l_error *err)
{
    char t[TAG_MAX + 1] = "";
    if (tag_len && !tag_ok(tag, tag_len, t))
        return w2l__fail(err, W2L_CORRUPT, "MySQL GTID: tag '%.*s' is not valid",
                         (int)(tag_len > 40 ? 40 : tag_len), tag);
    if (gno < 1 || gno > GNO_MAX)
        return w2l__fail(err, W2L_CORRUPT, "MySQL GTID: transaction number %lld is outside 1..%lld",
                         (long long)gno, (long long)GNO_MAX);
    return add_range(s, sid, t, tag_len, gno, gno, err);
}

int w2l__mygtids_contains(const w2l__mygtids *s, const uint8_t sid[16], const char *tag,
                          size_t tag_len, int64_t gno)
{
    char t[TAG_MAX + 1] = "";
    if (!s || (tag_len && !tag_ok(tag, tag_len, t))) return 0;
    int found;
    size_t i = find_entry(s, sid, t, tag_len, &found);
    if (!found) return 0;
    const entry *e = &s->e[i];
    size_t a = 0, b = e->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (e->iv[m].hi < gno) a = m + 1;
        else b = m;
    }
    return a < e->n && e->iv[a].lo <= gno;
}

/* ---- text ---- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int hexv(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* 36 characters 8-4-4-4-12 with dashes, or 32 hex digits. 1 when s[0..n) is a UUID. */
static int parse_uuid(const char *s, size_t n, uint8_t out[16])
{
    if (n != 36 && n != 32) return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (n == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (s[i] != '-') return 0;
            continue;
        }
        int h = hexv(s[i]), l = i + 1 < n ? hexv(s[i + 1]) : -1;
        if (h < 0 || l < 0) return 0;
        out[k++] = (uint8_t)(h << 4 | l);
        i++;
    }
    return k == 16;
}

/* A decimal GTID number in 1..GNO_MAX. */
static int parse_gno(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 19) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v < 1 || v > (uint64_t)GNO_MAX) return 0;
    *out = (int64_t)v;
    return 1;
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_space(**s)) (*s)++, (*n)--;
    while (*n && is_space((*s)[*n - 1])) (*n)--;
}

static w2l_rc bad_text(w2l_error *err, const char *text, const char *part, size_t pn,
                       const char *what)
{
    size_t tl = strlen(text);
    return w2l__fail(err, W2L_CONFIG, "MySQL GTID set '%.80s%s': '%.*s' %s", text,
                     tl > 80 ? "..." : "", (int)(pn > 60 ? 60 : pn), part, what);
}

/* Meant as an interval, not a tag: starts with a digit and holds a '-' or only digits. */
static int is_interval_text(const char *s, size_t n)
{
    if (!n || s[0] < '0' || s[0] > '9') return 0;
    int digits = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-') return 1;
        digits &= s[i] >= '0' && s[i] <= '9';
    }
    return digits;
}

/* One "UUID[:ELEMENT]..." of text. */
static w2l_rc parse_one(w2l__mygtids *s, const char *text, const char *p, size_t n,
                        w2l_error *err)
{
    const char *colon = memchr(p, ':', n);
    const char *u = p;
    size_t un = colon ? (size_t)(colon - p) : n;
    trim(&u, &un);
    uint8_t sid[16];
    if (!parse_uuid(u, un, sid))
        return bad_text(err, text, u, un, "is not a UUID (8-4-4-4-12 hexadecimal digits)");
    if (!colon) return bad_text(err, text, u, un, "has no transaction interval (UUID:N[-M])");
    char tag[TAG_MAX + 1] = "";
    size_t tag_len = 0;
    int intervals_since_tag = 1;
    const char *q = colon + 1, *end = p + n;
    for (;;) {
        const char *next = memchr(q, ':', (size_t)(end - q));
        const char *el = q;
        size_t en = (size_t)((next ? next : end) - q);
        trim(&el, &en);
        if (!en) return bad_text(err, text, u, un, "has an empty element after ':'");
        if (is_interval_text(el, en)) { /* N or N-M */
            const char *dash = memchr(el, '-', en);
            int64_t lo, hi;
            const char *a = el, *b = dash ? dash + 1 : el;
            size_t an = dash ? (size_t)(dash - el) : en, bn = dash ? (size_t)(el + en - b) : en;
            trim(&a, &an);
            trim(&b, &bn);
            if (!parse_gno(a, an, &lo) || !parse_gno(b, bn, &hi))
                return bad_text(err, text, el, en,
                                "is not an interval N or N-M of numbers in 1..2^63-2");
            if (hi < lo)
                return bad_text(err, text, el, en, "is an interval that ends before it starts");
            W2L_TRY(add_range(s, sid, tag, tag_len, lo, hi, err));
            intervals_since_tag = 1;
        } else {
            if (!intervals_since_tag)
                return bad_text(err, text, tag, tag_len, "is a tag without intervals");
            if (!tag_ok(el, en, tag))
                return bad_text(err, text, el, en,
                                "is not a tag (a letter or '_', then letters, digits or '_', "
                                "at most 32)");
            tag_len = en;
            intervals_since_tag = 0;
        }
        if (!next) break;
        q = next + 1;
    }
    if (!intervals_since_tag)
        return bad_text(err, text, tag, tag_len, "is a tag without intervals");
    return W2L_OK;
}

w2l_rc w2l__mygtids_parse(w2l__mygtids *s, const char *text, w2l_error *err)
{
    const char *p = text ? text : "";
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *one = p;
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        trim(&one, &n);
        if (n) W2L_TRY(parse_one(s, text, one, n, err));
        else if (comma || p != text) /* ",x", "x,,y" or "x," */
            return bad_text(err, text, ",", 1, "separates nothing (an empty set)");
        if (!comma) return W2L_OK;
        p = comma + 1;
    }
}

char *w2l__mygtids_format(const w2l__mygtids *s)
{
    w2l_buf b = {0};
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; s && i < s->n && rc == W2L_OK; i++) {
        const entry *e = &s->e[i];
        if (i == 0 || memcmp(e->sid, s->e[i - 1].sid, 16)) {
            const uint8_t *d = e->sid;
            rc =
                w2l__buf_printf(&b, NULL,
                                "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x"
                                "%02x",
                                i ? "," : "", d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8],
                                d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
        }
        if (rc == W2L_OK && e->tag_len) rc = w2l__buf_printf(&b, NULL, ":%s", e->tag);
        for (size_t k = 0; k < e->n && rc == W2L_OK; k++) {
            if (e->iv[k].lo == e->iv[k].hi)
                rc = w2l__buf_printf(&b, NULL, ":%lld", (long long)e->iv[k].lo);
            else
                rc = w2l__buf_printf(&b, NULL, ":%lld-%lld", (long long)e->iv[k].lo,
                                     (long long)e->iv[k].hi);
        }
    }
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, NULL);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return NULL;
    }
    return (char *)b.data; /* from w2l__malloc through the buffer */
}

/* ---- binary form ---- */

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

w2l_rc w2l__mygtids_encode(const w2l__mygtids *s, w2l_buf *out, w2l_error *err)
{
    size_t n = s ? s->n : 0;
    int tagged = 0;
    size_t need = 8;
    for (size_t i = 0; i < n; i++) {
        tagged |= s->e[i].tag_len != 0;
        need += 16 + 1 + TAG_MAX + 8 + 16 * s->e[i].n;
    }
    W2L_TRY(w2l__buf_reserve(out, need, err));
    uint8_t *p = (uint8_t *)out->data + out->len;
    put_u64(p, tagged ? (uint64_t)1 << 56 | (uint64_t)n << 8 | 1 : (uint64_t)n);
    p += 8;
    for (size_t i = 0; i < n; i++) {
        const entry *e = &s->e[i];
        memcpy(p, e->sid, 16);
        p += 16;
        if (tagged) {
            *p++ = (uint8_t)(e->tag_len << 1); /* a 1-byte varlen: at most 32 << 1 */
            memcpy(p, e->tag, e->tag_len);
            p += e->tag_len;
        }
        put_u64(p, e->n);
        p += 8;
        for (size_t k = 0; k < e->n; k++) {
            put_u64(p, (uint64_t)e->iv[k].lo);
            put_u64(p + 8, (uint64_t)e->iv[k].hi + 1);
            p += 16;
        }
    }
    out->len = (size_t)(p - (uint8_t *)out->data);
    return W2L_OK;
}

/* MySQL's serialization varlen integer at *p (advanced); 0, or -1 when truncated. */
static int get_varlen(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    if (*p >= end) return -1;
    unsigned ones = 0;
    while (ones < 8 && ((*p)[0] >> ones & 1)) ones++;
    if ((size_t)(end - *p) < ones + 1u) return -1;
    if (ones == 8) {
        *out = get_u64(*p + 1);
    } else {
        uint64_t v = 0;
        for (int i = (int)ones; i >= 0; i--) v = v << 8 | (*p)[i];
        *out = v >> (ones + 1);
    }
    *p += ones + 1;
    return 0;
}

w2l_rc w2l__mygtids_decode(w2l__mygtids *s, const uint8_t *p, size_t n, w2l_error *err)
{
    const uint8_t *end = p + n, *start = p;
#define NEED(k, what)                                                                          \
    do {                                                                                       \
        if ((size_t)(end - p) < (size_t)(k))                                                   \
            return w2l__fail(err, W2L_CORRUPT,                                                 \
                             "MySQL GTID set (binary, %zu bytes): truncated in %s at byte %zu", \
                             n, what, (size_t)(p - start));                                    \
    } while (0)
    NEED(8, "the header");
    uint64_t h = get_u64(p);
    p += 8;
    int tagged = (h >> 56) != 0;
    if (tagged && ((h >> 56) != 1 || (h & 0xff) != 1))
        return w2l__fail(err, W2L_CORRUPT, "MySQL GTID set (binary): unknown format %u",
                         (unsigned)(h >> 56));
    uint64_t nsids = tagged ? (h >> 8) & (((uint64_t)1 << 48) - 1) : h;
    if (nsids > n / 24)
        return w2l__fail(err, W2L_CORRUPT,
                         "MySQL GTID set (binary, %zu bytes): %llu source UUIDs cannot fit", n,
                         (unsigned long long)nsids);
    for (uint64_t i = 0; i < nsids; i++) {
        uint8_t sid[16];
        NEED(16, "a UUID");
        memcpy(sid, p, 16);
        p += 16;
        char tag[TAG_MAX + 1] = "";
        uint64_t tl = 0;
        if (tagged) {
            if (get_varlen(&p, end, &tl))
                return w2l__fail(err, W2L_CORRUPT,
                                 "MySQL GTID set (binary, %zu bytes): truncated in a tag length",
                                 n);
            if (tl > TAG_MAX)
                return w2l__fail(err, W2L_CORRUPT,
                                 "MySQL GTID set (binary): a tag of %llu bytes (at most %d)",
                                 (unsigned long long)tl, TAG_MAX);
            NEED(tl, "a tag");
            if (tl && !tag_ok((const char *)p, (size_t)tl, tag))
                return w2l__fail(err, W2L_CORRUPT,
                                 "MySQL GTID set (binary): tag '%.*s' is not valid", (int)tl,
                                 (const char *)p);
            p += tl;
        }
        NEED(8, "an interval count");
        uint64_t ni = get_u64(p);
        p += 8;
        if (ni > (uint64_t)(end - p) / 16)
            return w2l__fail(err, W2L_CORRUPT,
                             "MySQL GTID set (binary, %zu bytes): truncated in %llu intervals at "
                             "byte %zu",
                             n, (unsigned long long)ni, (size_t)(p - start));
        for (uint64_t k = 0; k < ni; k++) {
            uint64_t lo = get_u64(p), hi = get_u64(p + 8);
            p += 16;
            if (lo < 1 || hi <= lo || hi - 1 > (uint64_t)GNO_MAX)
                return w2l__fail(err, W2L_CORRUPT,
                                 "MySQL GTID set (binary): interval [%llu, %llu) is not within "
                                 "1..2^63-2",
                                 (unsigned long long)lo, (unsigned long long)hi);
            W2L_TRY(add_range(s, sid, tag, (size_t)tl, (int64_t)lo, (int64_t)hi - 1, err));
        }
    }
#undef NEED
    if (p != end)
        return w2l__fail(err, W2L_CORRUPT,
                         "MySQL GTID set (binary): %zu bytes after the last UUID's intervals",
                         (size_t)(end - p));
    return W2L_OK;
}
