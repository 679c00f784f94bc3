/*
 * Fuzz target for the JSON parser and tree (lib/json): each input is parsed; a document
 * that parses is walked node by node with every accessor (kind, key, strings with their
 * length, number text, int64, double, bool, get by each member's name, size), printed
 * compact and pretty, and both prints are parsed again and must walk the same; a copy
 * (w2l__json_dup) must walk the same too. A rejected input must say why with a located
 * W2L_CORRUPT. w2l__json_parse_raw (canal's members kept as text) must agree with the
 * parser on every input. A crash, an ASan/UBSan report, a hang or an abort() here is a finding.
 *
 * Built two ways by `make fuzz` (Makefile), like fuzz_binlog.c:
 *   - with clang: a libFuzzer target (-DW2L_LIBFUZZER, -fsanitize=fuzzer), with a seed
 *     corpus of lines from test/data/cdc;
 *   - otherwise: the standalone driver of fuzz_main.h, which mutates the seed files (one
 *     document per line) with a fixed seed for N iterations or S seconds, whichever ends
 *     first:
 *       fuzz_json [-n N] [-s SEED] [-t SECONDS] SEED_FILE...
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

typedef struct digest {
    char *p;
    size_t n, cap;
} digest;

static void put(digest *d, const void *s, size_t n)
{
    if (d->cap - d->n < n) {
        size_t cap = d->cap ? d->cap : 1024;
        while (cap - d->n < n) cap *= 2;
        d->p = realloc(d->p, cap);
        if (!d->p) abort();
        d->cap = cap;
    }
    memcpy(d->p + d->n, s, n);
    d->n += n;
}

static void put_num(digest *d, uint64_t v) { put(d, &v, sizeof v); }

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_json: %s\n", what);
        abort();
    }
}

/* Everything the accessors say about j and below, in order. */
static void walk(digest *d, const w2l__json *j, const w2l__json *parent)
{
    w2l__json_kind k = w2l__json_type(j);
    check(k != W2L_JSON_INVALID, "a node of no kind");
    check(w2l__json_kind_name(k)[0] != 'i', "kind name");
    put_num(d, (uint64_t)k);
    const char *key = w2l__json_key(j);
    if (parent && w2l__json_type(parent) == W2L_JSON_OBJECT) {
        check(key != NULL, "an object member without a name");
        put(d, key, strlen(key) + 1);
        const w2l__json *first = w2l__json_get(parent, key);
        check(first != NULL, "get misses a member");
        check(strcmp(w2l__json_key(first), key) == 0, "get finds another name");
    }
    size_t n;
    const char *s = w2l__json_strn(j, &n);
    check((s != NULL) == (k == W2L_JSON_STRING), "strn of a non-string");
    if (s) {
        check(s[n] == '\0', "string not terminated");
        check(strlen(w2l__json_str(j)) <= n, "str longer than strn");
        put_num(d, n);
        put(d, s, n);
    }
    char buf[64];
    const char *t = w2l__json_number_str(j, buf, sizeof buf);
    check((t != NULL) == (k == W2L_JSON_NUMBER), "number text of a non-number");
    int64_t iv;
    double dv;
    int bv;
    check((w2l__json_double(j, &dv) == 0) == (k == W2L_JSON_NUMBER), "double of a non-number");
    check((w2l__json_bool(j, &bv) == 0) == (k == W2L_JSON_BOOL), "bool of a non-boolean");
    if (t) {
        put(d, t, strlen(t) + 1);
        if (w2l__json_int64(j, &iv) == 0) {
            put_num(d, (uint64_t)iv);
            check(isfinite(dv), "an integer read as a non-finite double");
        }
        put(d, &dv, sizeof dv);
        char small[4];
        int r = w2l__json_number_text(j, small, sizeof small);
        check(r == 0 ? strlen(small) < 4 : small[0] == '\0', "number_text into a small buffer");
    }
    if (k == W2L_JSON_BOOL) put_num(d, (uint64_t)bv);
    size_t count = 0;
    for (const w2l__json *c = w2l__json_first(j); c; c = w2l__json_next(c), count++)
        walk(d, c, j);
    check(count == w2l__json_size(j), "size differs from the children");
    check(count == 0 || k == W2L_JSON_ARRAY || k == W2L_JSON_OBJECT, "children of a scalar");
    put_num(d, count);
}

static void same_walk(const digest *a, const w2l__json *j, const char *what)
{
    digest b = {0};
    walk(&b, j, NULL);
    check(a->n == b.n && memcmp(a->p, b.p, a->n) == 0, what);
    free(b.p);
}

static void reparse(const digest *a, const char *text, const char *what)
{
    w2l__json *j = NULL;
    w2l_error err = {0};
    check(text != NULL, "print returned NULL");
    check(w2l__json_parse(text, strlen(text), &j, &err) == W2L_OK, what);
    same_walk(a, j, what);
    w2l__json_free(j);
}

/* The first canal mysqlType seen, as a known text for w2l__json_parse_raw. */
static char known_buf[256];
static size_t known_len;

static size_t known(void *ctx, size_t i, const char *p, size_t avail)
{
    (void)ctx;
    return i == 0 && known_len && known_len <= avail && !memcmp(p, known_buf, known_len)
               ? known_len
               : 0;
}

/* w2l__json_parse_raw (canal's members kept as text, with and without a known text) must
 * accept and reject what the parser does, with the same message, and each raw member
 * must parse as the parser's own tree of it prints. */
static void check_raw(const uint8_t *data, size_t size, w2l_rc want, const char *msg,
                      const w2l__json *j)
{
    static const char *const names[] = {"mysqlType", "pkNames", NULL};
    for (int k = 0; k < 2; k++) {
        const w2l__json_rawspec spec = {names, k ? known : NULL, NULL};
        w2l__json *r = NULL;
        w2l_error err = {0};
        w2l_rc rc = w2l__json_parse_raw((const char *)data, size, &spec, &r, &err);
        check(rc == want, "parse_raw accepts or rejects differently");
        if (rc != W2L_OK) {
            check(strcmp(err.msg, msg) == 0, "parse_raw fails with another message");
            continue;
        }
        for (const w2l__json *m = w2l__json_first(r), *n = w2l__json_first(j); m && n;
             m = w2l__json_next(m), n = w2l__json_next(n)) {
            size_t len;
            const char *raw = w2l__json_raw(m, &len);
            if (!raw) continue;
            w2l__json *sub = NULL;
            check(w2l__json_parse(raw, len, &sub, &err) == W2L_OK, "a raw member does not parse");
            char *a = w2l__json_print(sub, 0), *b = w2l__json_print(n, 0);
            check(a && b && strcmp(a, b) == 0, "a raw member differs from its tree");
            if (!known_len && !strcmp(w2l__json_key(m), "mysqlType") && len < sizeof known_buf) {
                memcpy(known_buf, raw, len);
                known_len = len;
            }
            w2l_free(a);
            w2l_free(b);
            w2l__json_free(sub);
        }
        w2l__json_free(r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    w2l__json *j = NULL;
    w2l_error err = {0};
    w2l_rc rc = w2l__json_parse((const char *)data, size, &j, &err);
    check_raw(data, size, rc, err.msg, j);
    if (rc != W2L_OK) {
        check(rc == W2L_CORRUPT && j == NULL, "a failure other than W2L_CORRUPT");
        check(strstr(err.msg, "invalid JSON") != NULL, "an unlocated error");
        return 0;
    }
    digest a = {0};
    walk(&a, j, NULL);
    char *c = w2l__json_print(j, 0), *p = w2l__json_print(j, 1);
    reparse(&a, c, "the compact print does not parse back the same");
    reparse(&a, p, "the pretty print does not parse back the same");
    w2l__json *dup = w2l__json_dup(j);
    check(dup != NULL, "dup failed");
    same_walk(&a, dup, "the copy differs");
    w2l__json_free(dup);
    w2l_free(c);
    w2l_free(p);
    free(a.p);
    w2l__json_free(j);
    return 0;
}

#ifndef W2L_LIBFUZZER

/* ---- the standalone driver (fuzz_main.h) ---- */

#define FUZZ_NAME   "fuzz_json"
#define FUZZ_TOKENS "{}[]\",:\\u0123456789-+.eE \t\nntfrlasd\x01\xff"
#include "fuzz_main.h"

#endif
