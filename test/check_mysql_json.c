/*
 * lib/source/mysql_json.c: MySQL's binary JSON as the text MySQL 8 prints, and the JSON
 * diffs of PARTIAL_UPDATE_ROWS. Vectors from other decoders (test/data/mysql_json/
 * vectors.txt: vitess's unit vectors and the JSON column of rust_mysql_common's recorded
 * json-opaque binlog), hand-written ones for every type and both sizes (hand.txt) and for
 * diffs (diffs.txt; both written by gen_vectors.py, expected texts by hand); then every
 * truncation and seeded random byte flips of them (W2L_OK or W2L_CORRUPT, out untouched
 * on failure, never a crash), error messages with offsets, and out-of-memory on every
 * allocation of a diff.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/mysql_json.h"
#include "support/support.h"

static w2l_error err;

/* ---- the vector files ---------------------------------------------------------------- */

typedef struct vec {
    uint8_t *a, *b; /* value (or before image) and diffs */
    size_t alen, blen;
    char *want;    /* expected text, or "!corrupt" */
    int line;
} vec;

typedef struct vecs {
    vec *v;
    size_t n;
} vecs;

static uint8_t *unhex(const char *h, size_t *len)
{
    size_t n = strcmp(h, "-") ? strlen(h) / 2 : 0;
    uint8_t *b = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(b);
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        ck_assert_int_eq(sscanf(h + 2 * i, "%2x", &x), 1);
        b[i] = (uint8_t)x;
    }
    *len = n;
    return b;
}

/* Lines "hex \t want" (fields 2) or "hex \t hex \t want" (fields 3); '#' lines skipped. */
static vecs load(const char *name, int fields)
{
    char path[1024];
    const char *src = getenv("W2L_SRCDIR");
    snprintf(path, sizeof path, "%s/test/data/mysql_json/%s", src && *src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    vecs vs = {NULL, 0};
    size_t cap = 0, lcap = 1 << 16;
    char *line = malloc(lcap);
    int lineno = 0;
    for (;;) {
        size_t l = 0;
        int c;
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if (l + 1 >= lcap) line = realloc(line, lcap *= 2);
            line[l++] = (char)c;
        }
        if (c == EOF && l == 0) break;
        line[l] = 0;
        lineno++;
        if (line[0] == '#' || line[0] == 0) continue;
        char *t1 = strchr(line, '\t');
        ck_assert_msg(t1 != NULL, "%s:%d: no tab", name, lineno);
        *t1 = 0;
        char *rest = t1 + 1, *t2 = NULL;
        if (fields == 3) {
            t2 = strchr(rest, '\t');
            ck_assert_msg(t2 != NULL, "%s:%d: no second tab", name, lineno);
            *t2 = 0;
        }
        if (vs.n == cap) vs.v = realloc(vs.v, (cap = cap ? cap * 2 : 64) * sizeof *vs.v);
        vec *v = &vs.v[vs.n++];
        memset(v, 0, sizeof *v);
        v->line = lineno;
        v->a = unhex(line, &v->alen);
        if (fields == 3) {
            v->b = unhex(rest, &v->blen);
            v->want = strdup(t2 + 1);
        } else {
            v->want = strdup(rest);
        }
    }
    free(line);
    fclose(f);
    ck_assert_uint_gt(vs.n, 0);
    return vs;
}

static void unload(vecs *vs)
{
    for (size_t i = 0; i < vs->n; i++) free(vs->v[i].a), free(vs->v[i].b), free(vs->v[i].want);
    free(vs->v);
}

static int is_corrupt(const vec *v)
{
    return !strcmp(v->want, "!corrupt");
}

/* Runs text (diffs NULL) or apply_diffs into a buffer that already holds "<<", so that a
 * failure must leave it as it was. Returns the rc; *text the output after "<<". */
static w2l_rc run(const uint8_t *a, size_t alen, const uint8_t *d, size_t dlen, int diffs,
                  w2l_buf *out)
{
    out->len = 0;
    ck_assert_ok(w2l_buf_append(out, "<<", 2, &err), err);
    memset(&err, 0, sizeof err);
    w2l_rc rc = diffs ? w2l__myjson_apply_diffs(a, alen, d, dlen, out, &err)
                      : w2l__myjson_text(a, alen, out, &err);
    ck_assert_msg(rc == W2L_OK || rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    if (rc != W2L_OK) {
        ck_assert_uint_eq(out->len, 2);
        ck_assert_msg(strstr(err.msg, "MySQL"), "%s", err.msg);
    }
    ck_assert_ok(w2l__buf_cstr(out, &err), err);
    return rc;
}

static void check_file(const char *name, int diffs)
{
    vecs vs = load(name, diffs ? 3 : 2);
    w2l_buf out = {0};
    for (size_t i = 0; i < vs.n; i++) {
        const vec *v = &vs.v[i];
        w2l_rc rc = run(v->a, v->alen, v->b, v->blen, diffs, &out);
        if (is_corrupt(v)) {
            ck_assert_msg(rc == W2L_CORRUPT, "%s:%d: accepted as %.200s", name, v->line,
                          (char *)out.data + 2);
            continue;
        }
        ck_assert_msg(rc == W2L_OK, "%s:%d: %s", name, v->line, err.msg);
        ck_assert_msg(!strcmp((char *)out.data + 2, v->want), "%s:%d:\n got %.300s\nwant %.300s",
                      name, v->line, (char *)out.data + 2, v->want);
    }
    w2l_buf_release(&out);
    unload(&vs);
}

START_TEST(vectors_of_other_decoders)
{
    check_file("vectors.txt", 0);
}
END_TEST

START_TEST(hand_vectors_every_type)
{
    check_file("hand.txt", 0);
}
END_TEST

START_TEST(diff_vectors)
{
    check_file("diffs.txt", 1);
}
END_TEST

/* The example of mysql_json.c's head comment. */
START_TEST(head_comment_example)
{
    static const uint8_t doc[] = {0x00, 0x01, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x01,
                                  0x00, 0x05, 0x02, 0x00, 0x61};
    w2l_buf out = {0};
    ck_assert_ok(w2l__myjson_text(doc, sizeof doc, &out, &err), err);
    ck_assert_ok(w2l__buf_cstr(&out, &err), err);
    ck_assert_str_eq((char *)out.data, "{\"a\": 2}");
    w2l_buf_release(&out);
}
END_TEST

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v & 0xffff), put16(p + 2, v >> 16);
}

/* A document that is large because of its size: {"big": ["a", <66000 x>]}, an object
 * whose one member is a large array, as the server writes it past 64 KiB; and a diff on
 * it. */
START_TEST(large_by_size)
{
    const uint32_t slen = 66000;
    /* array: count, size, 2 entries of 5 bytes, then "a" (2 bytes), the long string */
    uint32_t ahdr = 8 + 2 * 5, asize = ahdr + 2 + 3 + slen;
    /* object: count, size, 1 key entry (6), 1 value entry (5), key "big", the array */
    uint32_t ohdr = 8 + 6 + 5, osize = ohdr + 3 + asize;
    size_t n = 1 + osize;
    uint8_t *d = calloc(1, n), *a = d + 1 + ohdr + 3;
    d[0] = 1;
    put32(d + 1, 1), put32(d + 5, osize);
    put32(d + 9, ohdr), put16(d + 13, 3);
    d[15] = 3, put32(d + 16, ohdr + 3);
    memcpy(d + 1 + ohdr, "big", 3);
    put32(a, 2), put32(a + 4, asize);
    a[8] = 12, put32(a + 9, ahdr);
    a[13] = 12, put32(a + 14, ahdr + 2);
    a[ahdr] = 1, a[ahdr + 1] = 'a';
    a[ahdr + 2] = (uint8_t)(0x80 | (slen & 0x7f));
    a[ahdr + 3] = (uint8_t)(0x80 | ((slen >> 7) & 0x7f));
    a[ahdr + 4] = (uint8_t)(slen >> 14);
    memset(a + ahdr + 5, 'x', slen);
    w2l_buf out = {0};
    ck_assert_int_eq(run(d, n, NULL, 0, 0, &out), W2L_OK);
    const char *t = (char *)out.data + 2;
    ck_assert_int_eq(strncmp(t, "{\"big\": [\"a\", \"xxx", 17), 0);
    ck_assert_uint_eq(strlen(t), 15 + slen + 3);
    ck_assert_str_eq(t + strlen(t) - 4, "x\"]}");
    /* REPLACE $.big[0] with true; REMOVE $.big[1] */
    static const uint8_t diffs[] = {0, 8, '$', '.', 'b', 'i', 'g', '[', '0', ']', 2, 4, 1,
                                    2, 8, '$', '.', 'b', 'i', 'g', '[', '1', ']'};
    ck_assert_int_eq(run(d, n, diffs, sizeof diffs, 1, &out), W2L_OK);
    ck_assert_str_eq((char *)out.data + 2, "{\"big\": [true]}");
    /* a truncated large document */
    ck_assert_int_eq(run(d, n - 1, NULL, 0, 0, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "at byte"), "%s", err.msg);
    w2l_buf_release(&out);
    free(d);
}
END_TEST

/* Errors name what is wrong and where. */
START_TEST(errors_name_the_offset)
{
    w2l_buf out = {0};
    /* [1, "ab" with a length of 5] */
    static const uint8_t s[] = {2, 2, 0, 11, 0, 5, 1, 0, 12, 10, 0, 5, 'a', 'b'};
    ck_assert_int_eq(run(s, sizeof s, NULL, 0, 0, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "string of 5 bytes") && strstr(err.msg, "at byte 11"), "%s",
                  err.msg);
    static const uint8_t t[] = {2, 1, 0, 7, 0, 13, 0, 0};
    ck_assert_int_eq(run(t, sizeof t, NULL, 0, 0, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "value type 13 unknown"), "%s", err.msg);
    static const uint8_t big[] = {0, 1, 0, 0, 1};
    ck_assert_int_eq(run(big, sizeof big, NULL, 0, 0, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "object of 256 bytes in 4 available") &&
                      strstr(err.msg, "at byte 1"),
                  "%s", err.msg);
    /* diffs: a path the document lacks, an unknown operation, a truncated value */
    static const uint8_t doc[] = {0, 1, 0, 12, 0, 11, 0, 1, 0, 5, 2, 0, 'a'};
    static const uint8_t d1[] = {2, 3, '$', '.', 'b'};
    ck_assert_int_eq(run(doc, sizeof doc, d1, sizeof d1, 1, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "diff 0: path '$.b': not in the document"), "%s", err.msg);
    static const uint8_t d2[] = {2, 3, '$', '.', 'a', 7, 1, '$'};
    ck_assert_int_eq(run(doc, sizeof doc, d2, sizeof d2, 1, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "diff 1: operation 7 unknown") && strstr(err.msg, "at byte 5"),
                  "%s", err.msg);
    static const uint8_t d3[] = {0, 3, '$', '.', 'a', 3, 5, 1};
    ck_assert_int_eq(run(doc, sizeof doc, d3, sizeof d3, 1, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "value of 3 bytes in 2 available"), "%s", err.msg);
    static const uint8_t d4[] = {0, 5, '$', '[', '*', ']', '.', 2, 4, 1};
    ck_assert_int_eq(run(doc, sizeof doc, d4, sizeof d4, 1, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "wildcards"), "%s", err.msg);
    /* a bad value inserted by a diff is found when printing, located in the diffs */
    static const uint8_t d5[] = {1, 3, '$', '.', 'b', 2, 4, 9};
    ck_assert_int_eq(run(doc, sizeof doc, d5, sizeof d5, 1, &out), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "diffs: literal 9 unknown at byte 7"), "%s", err.msg);
    /* an empty before image is null: nothing to remove from */
    ck_assert_int_eq(run(NULL, 0, d1, sizeof d1, 1, &out), W2L_CORRUPT);
    /* no diffs at all: the before image */
    ck_assert_int_eq(run(doc, sizeof doc, NULL, 0, 1, &out), W2L_OK);
    ck_assert_str_eq((char *)out.data + 2, "{\"a\": 2}");
    w2l_buf_release(&out);
}
END_TEST

/* Each prefix of every valid vector (the documents and the diffs) exactly k bytes long, so
 * that valgrind and ASan see any overread: W2L_OK or W2L_CORRUPT. */
START_TEST(every_truncation)
{
    static const char *const files[] = {"vectors.txt", "hand.txt", "diffs.txt"};
    w2l_buf out = {0};
    long tried = 0;
    for (size_t f = 0; f < W2L_ARRAY_LEN(files); f++) {
        int diffs = f == 2;
        vecs vs = load(files[f], diffs ? 3 : 2);
        for (size_t i = 0; i < vs.n; i++) {
            const vec *v = &vs.v[i];
            if (is_corrupt(v) || v->alen > 4096) continue;
            for (size_t k = 0; k < v->alen; k++) {
                uint8_t *c = malloc(k ? k : 1);
                memcpy(c, v->a, k);
                run(c, k, v->b, v->blen, diffs, &out);
                free(c);
                tried++;
            }
            for (size_t k = 0; diffs && k < v->blen; k++) {
                uint8_t *c = malloc(k ? k : 1);
                memcpy(c, v->b, k);
                run(v->a, v->alen, c, k, diffs, &out);
                free(c);
                tried++;
            }
        }
        unload(&vs);
    }
    ck_assert_int_gt(tried, 3000);
    w2l_buf_release(&out);
}
END_TEST

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Seeded random damage: one to four bytes of a valid vector set to random values. */
START_TEST(random_byte_flips)
{
    static const char *const files[] = {"vectors.txt", "hand.txt", "diffs.txt"};
    w2l_buf out = {0};
    long ok = 0, bad = 0;
    for (size_t f = 0; f < W2L_ARRAY_LEN(files); f++) {
        int diffs = f == 2;
        vecs vs = load(files[f], diffs ? 3 : 2);
        for (size_t i = 0; i < vs.n; i++) {
            const vec *v = &vs.v[i];
            if (is_corrupt(v) || v->alen == 0 || v->alen > 4096) continue;
            for (int round = 0; round < 200; round++) {
                uint8_t *a = malloc(v->alen), *b = malloc(v->blen ? v->blen : 1);
                memcpy(a, v->a, v->alen);
                if (v->blen) memcpy(b, v->b, v->blen);
                int flips = 1 + (int)(next_rand() % 4);
                for (int k = 0; k < flips; k++) {
                    if (diffs && v->blen && (next_rand() & 1))
                        b[next_rand() % v->blen] = (uint8_t)next_rand();
                    else
                        a[next_rand() % v->alen] = (uint8_t)next_rand();
                }
                if (run(a, v->alen, b, v->blen, diffs, &out) == W2L_OK)
                    ok++;
                else
                    bad++;
                free(a), free(b);
            }
        }
        unload(&vs);
    }
    ck_assert_int_gt(ok, 100);
    ck_assert_int_gt(bad, 100);
    w2l_buf_release(&out);
}
END_TEST

/* Out of memory on every allocation of a diff: W2L_NOMEM, nothing leaked. */
START_TEST(oom_on_every_allocation)
{
    vecs vs = load("diffs.txt", 3);
    const vec *v = &vs.v[5]; /* a nested REPLACE and an INSERT */
    fail_alloc_install();
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        w2l_buf out = {0};
        fail_alloc_arm(nth);
        w2l_rc rc = w2l__myjson_apply_diffs(v->a, v->alen, v->b, v->blen, &out, &err);
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
        if (rc == W2L_OK) {
            ck_assert_int_eq(strncmp((char *)out.data, v->want, strlen(v->want)), 0);
            ck_assert_uint_eq(out.len, strlen(v->want));
        }
        w2l_buf_release(&out);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (rc == W2L_OK) break;
        ck_assert_int_lt(nth, 500);
    }
    unload(&vs);
}
END_TEST

Suite *suite_mysql_json(void)
{
    Suite *s = suite_create("mysql_json");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, head_comment_example);
    tcase_add_test(basic, vectors_of_other_decoders);
    tcase_add_test(basic, hand_vectors_every_type);
    tcase_add_test(basic, diff_vectors);
    tcase_add_test(basic, large_by_size);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, errors_name_the_offset);
    tcase_add_test(edge, every_truncation);
    tcase_add_test(edge, random_byte_flips);
    tcase_set_timeout(edge, 120);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, oom_on_every_allocation);
    suite_add_tcase(s, faults);
    return s;
}
