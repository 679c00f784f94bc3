/*
 * lib/json: the parser and tree — exact 64-bit integers and long numbers through a parse and
 * print round trip, escapes and surrogates, NUL bytes, the depth limit, every truncation of
 * a few documents, whitespace, duplicate keys, located syntax errors, building (also into
 * parsed trees), printing as before, and out-of-memory on every allocation.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "support/support.h"

static w2l_error err;

START_TEST(big_integers_are_exact)
{
    const char *t = "{\"snapshot-id\": 4327154639183968397, \"neg\": -9223372036854775808,"
                    " \"max\": 9223372036854775807, \"small\": 42, \"ids\": [9876543210123456789]}";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    int64_t v;
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "snapshot-id"), &v), 0);
    ck_assert(v == 4327154639183968397LL);
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "neg"), &v), 0);
    ck_assert(v == INT64_MIN);
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "max"), &v), 0);
    ck_assert(v == INT64_MAX);
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "small"), &v), 0);
    ck_assert_int_eq(v, 42);
    /* beyond int64: not an integer, but its text is kept */
    ck_assert_int_eq(w2l__json_int64(w2l__json_first(w2l__json_get(j, "ids")), &v), -1);
    char num[64];
    ck_assert_int_eq(
        w2l__json_number_text(w2l__json_first(w2l__json_get(j, "ids")), num, sizeof num), 0);
    ck_assert_str_eq(num, "9876543210123456789");
    ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "max")), W2L_JSON_NUMBER);
    char *out = w2l__json_print(j, 0);
    ck_assert_ptr_nonnull(strstr(out, "\"snapshot-id\":4327154639183968397"));
    ck_assert_ptr_nonnull(strstr(out, "9876543210123456789"));
    w2l_free(out);
    w2l__json_free(j);
    w2l__json *n = w2l__json_new_int64(INT64_MIN);
    out = w2l__json_print(n, 0);
    ck_assert_str_eq(out, "-9223372036854775808");
    w2l_free(out);
    w2l__json_free(n);
}
END_TEST

START_TEST(long_decimals_keep_their_text)
{
    const char *t = "[12345678901234567.891, 0.000000000000000000123456789012345678, 1.5, 1e300]";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    char num[80];
    w2l__json *e = w2l__json_first(j);
    ck_assert_int_eq(w2l__json_number_text(e, num, sizeof num), 0);
    ck_assert_str_eq(num, "12345678901234567.891");
    e = w2l__json_next(e);
    ck_assert_int_eq(w2l__json_number_text(e, num, sizeof num), 0);
    ck_assert_str_eq(num, "0.000000000000000000123456789012345678");
    double d;
    ck_assert_int_eq(w2l__json_double(e, &d), 0);
    ck_assert(d > 1.23e-19 && d < 1.24e-19);
    e = w2l__json_next(e);
    ck_assert_int_eq(w2l__json_double(e, &d), 0);
    ck_assert(d == 1.5);
    w2l__json_free(j);
}
END_TEST

/* Every number keeps its exact text; integers are read exactly from any form. */
START_TEST(numbers_keep_their_text)
{
    const char *t = "[1.50, -0.0, 1e400, 1e-400, 1.5E+3, 5.0, 1e3, 12345e-2, 0.1, 42, -7,"
                    " 123456789012345678901]";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    static const char *const text[] = { "1.50",   "-0.0", "1e400", "1e-400",
                                        "1.5E+3", "5.0",  "1e3",   "12345e-2",
                                        "0.1",    "42",   "-7",    "123456789012345678901" };
    char nb[32];
    size_t i = 0;
    for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e), i++) {
        ck_assert_int_eq(w2l__json_type(e), W2L_JSON_NUMBER);
        ck_assert_str_eq(w2l__json_number_str(e, nb, sizeof nb), text[i]);
    }
    ck_assert_uint_eq(i, W2L_ARRAY_LEN(text));
    /* exact integers from any form (-0.0, 1.5E+3, 5.0, 1e3), never a fraction or beyond 64 bits */
    static const struct { size_t at; int ok; int64_t v;
    } ints[] = { { 0, 0, 0 },    { 1, 1, 0 },  { 2, 0, 0 },    { 3, 0, 0 },
                 { 4, 1, 1500 }, { 5, 1, 5 },  { 6, 1, 1000 }, { 7, 0, 0 },
                 { 8, 0, 0 },    { 9, 1, 42 }, { 10, 1, -7 },  { 11, 0, 0 } };
    for (size_t k = 0; k < W2L_ARRAY_LEN(ints); k++) {
        w2l__json *e = w2l__json_first(j);
        for (size_t m = 0; m < ints[k].at; m++) e = w2l__json_next(e);
        int64_t v = -99;
        ck_assert_int_eq(w2l__json_int64(e, &v), ints[k].ok ? 0 : -1);
        if (ints[k].ok) ck_assert(v == ints[k].v);
    }
    double d;
    w2l__json *e = w2l__json_next(w2l__json_next(w2l__json_first(j)));
    ck_assert_int_eq(w2l__json_double(e, &d), 0);
    ck_assert(isinf(d)); /* 1e400 read as a double: as strtod */
    char *out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "[1.50,-0.0,1e400,1e-400,1.5E+3,5.0,1e3,12345e-2,0.1,42,"
                          "-7,123456789012345678901]");
    w2l_free(out);
    w2l__json_free(j);
    /* keeping a number's text never makes a malformed one acceptable */
    static const char *const bad[] = {"[-]", "[1e]", "[1e+]", "[1e5.]", "[.5]", "[+1]", "[1E--1]"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(bad); k++)
        ck_assert_msg(w2l__json_parse(bad[k], strlen(bad[k]), &j, &err) == W2L_CORRUPT, "%s",
                      bad[k]);
}
END_TEST

/* Strings holding NUL bytes (canal's binary text) keep their length, also in a copy. */
START_TEST(strings_with_nul_bytes)
{
    const char *t = "{\"k\\u0000\": \"a\", \"g\": \"x\\u0000y\\u00ffz\\ud83d\\ude00\", \"n\": 1.5,"
                    " \"s\": \"plain\"}";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    size_t n;
    const char *s = w2l__json_strn(w2l__json_get(j, "g"), &n);
    /* x 00 y c3bf z f09f9880 */
    ck_assert_uint_eq(n, 10);
    ck_assert(memcmp(s, "x\0y\xc3\xbfz\xf0\x9f\x98\x80", 10) == 0);
    ck_assert_str_eq(w2l__json_str(w2l__json_get(j, "g")), "x");
    s = w2l__json_strn(w2l__json_get(j, "s"), &n);
    ck_assert_uint_eq(n, 5);
    ck_assert_ptr_null(w2l__json_strn(w2l__json_get(j, "n"), &n));
    w2l__json *d = w2l__json_dup(j);
    s = w2l__json_strn(w2l__json_get(d, "g"), &n);
    ck_assert_uint_eq(n, 10);
    ck_assert(memcmp(s, "x\0y\xc3\xbfz\xf0\x9f\x98\x80", 10) == 0);
    w2l__json_free(d);
    w2l__json_free(j);
}
END_TEST

START_TEST(marker_like_strings_stay_strings)
{
    /* a real string starting with U+0001, next to a protected number */
    const char *t = "{\"\\u0001123\": \"\\u0001456\", \"big\": 12345678901234567890,"
                    " \"s\": \"\\u0001789\"}";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    w2l__json *m = w2l__json_first(j);
    ck_assert_str_eq(w2l__json_key(m), "\x01" "123");
    ck_assert_int_eq(w2l__json_type(m), W2L_JSON_STRING);
    ck_assert_str_eq(w2l__json_str(m), "\x01" "456");
    ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "big")), W2L_JSON_NUMBER);
    ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "s")), W2L_JSON_STRING);
    ck_assert_str_eq(w2l__json_str(w2l__json_get(j, "s")), "\x01" "789");
    w2l__json_free(j);
}
END_TEST

START_TEST(syntax_errors_are_located)
{
    w2l__json *j;
    const char *t = "{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}";
    ck_assert_int_eq(w2l__json_parse(t, strlen(t), &j, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "line 3"), "%s", err.msg);
    ck_assert_int_eq(w2l__json_parse("", 0, &j, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "empty"), "%s", err.msg);
    ck_assert_int_eq(w2l__json_parse("{} x", 4, &j, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "after the value"), "%s", err.msg);
    ck_assert_int_eq(w2l__json_parse("\"abc", 4, &j, &err), W2L_CORRUPT);
    /* len-bounded: the NUL-less tail is not read */
    ck_assert_ok(w2l__json_parse("[1]garbage", 3, &j, &err), err);
    w2l__json_free(j);
}
END_TEST

START_TEST(build_set_remove_print)
{
    w2l__json *o = w2l__json_new_object();
    ck_assert_int_eq(w2l__json_add(o, "name", w2l__json_new_string("orders")), 0);
    ck_assert_int_eq(w2l__json_add(o, "n", w2l__json_new_int64(3)), 0);
    ck_assert_int_eq(w2l__json_set(o, "n", w2l__json_new_int64(4)), 0);
    ck_assert_int_eq(w2l__json_set(o, "ok", w2l__json_new_bool(1)), 0);
    w2l__json *a = w2l__json_new_array();
    ck_assert_int_eq(w2l__json_append(a, w2l__json_new_stringn("ab\0cd", 2)), 0);
    ck_assert_int_eq(w2l__json_append(a, w2l__json_new_null()), 0);
    ck_assert_int_eq(w2l__json_add(o, "a", a), 0);
    ck_assert_int_eq(w2l__json_add(o, "x", NULL), -1); /* a failed constructor is caught */
    w2l__json_remove(o, "ok");
    w2l__json_remove(o, "absent");
    char *out = w2l__json_print(o, 0);
    ck_assert_str_eq(out, "{\"name\":\"orders\",\"n\":4,\"a\":[\"ab\",null]}");
    w2l_free(out);
    w2l__json *d = w2l__json_dup(o);
    ck_assert_uint_eq(w2l__json_size(d), 3);
    w2l__json_free(d);
    w2l__json_free(o);
}
END_TEST

START_TEST(oom_on_every_allocation)
{
    fail_alloc_install();
    const char *t = "{\"id\": 4327154639183968397, \"a\": [1, 2, {\"b\": \"c\\u0000d\"}],"
                    " \"d\": 1.5}";
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        fail_alloc_arm(nth);
        w2l__json *j = NULL;
        w2l_rc rc = w2l__json_parse(t, strlen(t), &j, &err);
        char *out = rc == W2L_OK ? w2l__json_print(j, 1) : NULL;
        w2l__json *dup = out ? w2l__json_dup(j) : NULL;
        if (!dup) {
            w2l_free(out);
            out = NULL;
        }
        w2l__json_free(dup);
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
        w2l_free(out);
        w2l__json_free(j);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (rc == W2L_OK && out) break;
        ck_assert_int_lt(nth, 500);
    }
}
END_TEST

static w2l__json *parse_ok(const char *t)
{
    w2l__json *j = NULL;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    return j;
}

static void parse_bad(const char *t, size_t len, const char *why)
{
    w2l__json *j = NULL;
    ck_assert_msg(w2l__json_parse(t, len, &j, &err) == W2L_CORRUPT, "accepted: %.*s", (int)len, t);
    ck_assert_ptr_null(j);
    ck_assert_msg(strstr(err.msg, "invalid JSON"), "%s", err.msg);
    if (why) ck_assert_msg(strstr(err.msg, why), "%.*s: %s", (int)len, t, err.msg);
}

START_TEST(escapes_and_surrogates)
{
    w2l__json *j = parse_ok("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\\ud83d\\ude00\","
                            " \"\\u0041\"]");
    size_t n;
    const char *s = w2l__json_strn(w2l__json_first(j), &n);
    ck_assert_uint_eq(n, 8);
    ck_assert(memcmp(s, "\"\\/\b\f\n\r\t", 8) == 0);
    s = w2l__json_strn(w2l__json_next(w2l__json_first(j)), &n);
    ck_assert_uint_eq(n, 2 + 3 + 4);
    ck_assert(memcmp(s, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9) == 0);
    ck_assert_str_eq(w2l__json_str(w2l__json_next(w2l__json_next(w2l__json_first(j)))), "A");
    /* printing escapes what must be and keeps UTF-8 as it is */
    char *out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "[\"\\\"\\\\/\\b\\f\\n\\r\\t\",\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
                          "\"A\"]");
    w2l_free(out);
    w2l__json_free(j);
    /* lone and reversed surrogates are rejected (as cJSON did), as are bad escapes */
    parse_bad("[\"\\ud800\"]", 10, "surrogate");
    parse_bad("[\"\\udc00\"]", 10, "surrogate");
    parse_bad("[\"\\ud800\\u0041\"]", 16, "surrogate");
    parse_bad("[\"\\ude00\\ud83d\"]", 16, "surrogate");
    parse_bad("[\"\\ud800x\"]", 11, "surrogate");
    parse_bad("[\"\\x\"]", 6, "escape");
    parse_bad("[\"\\u12G4\"]", 10, "hex");
    parse_bad("[\"\\u12\"]", 8, "hex");
    parse_bad("\"abc\\", 5, "unterminated");
    /* the error names where: line 1, column 2 is the escape's backslash */
    parse_bad("\"\\q\"", 4, "line 1, column 2");
}
END_TEST

/* NUL bytes survive a print and a re-parse. */
START_TEST(nul_bytes_round_trip)
{
    w2l__json *j = parse_ok("{\"a\\u0000b\": \"x\\u0000\\u0000y\"}");
    w2l__json *m = w2l__json_first(j);
    size_t n;
    const char *s = w2l__json_strn(m, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert(memcmp(s, "x\0\0y", 4) == 0);
    char *out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "{\"a\\u0000b\":\"x\\u0000\\u0000y\"}");
    w2l__json *k = parse_ok(out);
    s = w2l__json_strn(w2l__json_first(k), &n);
    ck_assert_uint_eq(n, 4);
    ck_assert(memcmp(s, "x\0\0y", 4) == 0);
    w2l_free(out);
    w2l__json_free(k);
    w2l__json_free(j);
    /* a member name holding a NUL byte (escaped or raw) is found by its text before the NUL,
     * as cJSON found it; the first such member wins */
    static const char raw[] = "{\"st\0\0ate\": 1, \"st\": 2}";
    ck_assert_ok(w2l__json_parse(raw, sizeof raw - 1, &j, &err), err);
    int64_t v;
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "st"), &v), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_ptr_null(w2l__json_get(j, "s"));
    w2l__json_remove(j, "st");
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "st"), &v), 0);
    ck_assert_int_eq(v, 2);
    w2l__json_free(j);
    /* a built string with NUL bytes prints them too */
    w2l__json *b = w2l__json_new_stringn("p\0q", 3);
    out = w2l__json_print(b, 0);
    ck_assert_str_eq(out, "\"p\\u0000q\"");
    w2l_free(out);
    w2l__json_free(b);
}
END_TEST

START_TEST(numbers_exact_and_strict)
{
    const char *forty = "1234567890123456789012345678901234567890";
    char t[128];
    snprintf(t, sizeof t, "[-0.0, 1e400, %s, -%s, 0, -0, 1E-7]", forty, forty);
    w2l__json *j = parse_ok(t);
    char nb[64];
    static const char *want[] = {"-0.0", "1e400", NULL, NULL, "0", "-0", "1E-7"};
    size_t i = 0;
    for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e), i++) {
        ck_assert_int_eq(w2l__json_number_text(e, nb, sizeof nb), 0);
        if (want[i]) ck_assert_str_eq(nb, want[i]);
        else ck_assert_str_eq(nb + (nb[0] == '-'), forty);
    }
    int64_t v;
    ck_assert_int_eq(w2l__json_int64(w2l__json_next(w2l__json_next(w2l__json_first(j))), &v), -1);
    char *out = w2l__json_print(j, 0);
    char want_out[160];
    snprintf(want_out, sizeof want_out, "[-0.0,1e400,%s,-%s,0,-0,1E-7]", forty, forty);
    ck_assert_str_eq(out, want_out);
    w2l_free(out);
    w2l__json_free(j);
    static const char *const bad[] = {"[01]", "[-01]", "[1.]", "[00]", "[1.e5]", "[- 1]",
                                      "[0x10]", "[NaN]", "[Infinity]", "[1e5e5]"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(bad); k++) parse_bad(bad[k], strlen(bad[k]), NULL);
    /* a number at the very end of the text (no delimiter after it) */
    j = parse_ok("-12.5e+3");
    ck_assert_str_eq(w2l__json_number_str(j, nb, sizeof nb), "-12.5e+3");
    w2l__json_free(j);
}
END_TEST

START_TEST(depth_limit)
{
    static char deep[200001];
    for (int d = 999; d <= 1001; d++) { /* W2L_JSON_MAX_DEPTH is 1000 */
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        w2l__json *j = NULL;
        w2l_rc rc = w2l__json_parse(deep, 2 * (size_t)d, &j, &err);
        if (d <= 1000) {
            ck_assert_ok(rc, err);
            char *out = w2l__json_print(j, 1);
            ck_assert_uint_eq(strlen(out), 2 * (size_t)d);
            w2l_free(out);
            w2l__json_free(j);
        } else {
            ck_assert_int_eq(rc, W2L_CORRUPT);
            ck_assert_msg(strstr(err.msg, "nested too deeply"), "%s", err.msg);
            ck_assert_msg(strstr(err.msg, "column 1001"), "%s", err.msg);
        }
    }
    /* far deeper, objects too: rejected, not a stack overflow */
    for (size_t k = 0; k < 20000; k++) memcpy(deep + 5 * k, "{\"a\":", 5);
    parse_bad(deep, 100000, "nested too deeply");
    memset(deep, '[', 200000);
    parse_bad(deep, 200000, "nested too deeply");
}
END_TEST

/* Every proper prefix of these documents is rejected cleanly, never read past. */
START_TEST(every_truncation_fails_cleanly)
{
    static const char *const docs[] = {
        "{\"data\":[{\"id\":\"1\",\"g\":\"a\\u0000b\\ud83d\\ude00\"}],\"es\":1700000000000,"
        "\"isDdl\":false,\"old\":null,\"n\":-12.5e+3,\"t\":true,\"big\":123456789012345678901}",
        "[1, [2, [3, {\"k\": \"\\\"v\\\\\"}]], -0.0, 1e400, \"\\t\"]",
        " { \"a\" : [ ] , \"b\" : { } } ",
    };
    for (size_t d = 0; d < W2L_ARRAY_LEN(docs); d++) {
        const char *t = docs[d];
        size_t len = strlen(t);
        while (len && t[len - 1] == ' ') len--; /* prefixes that only drop trailing blanks parse */
        w2l__json *j = NULL;
        ck_assert_ok(w2l__json_parse(t, len, &j, &err), err);
        w2l__json_free(j);
        for (size_t k = 0; k < len; k++) {
            char *copy = w2l__malloc(k ? k : 1); /* exactly k bytes: ASan sees any overread */
            memcpy(copy, t, k);
            parse_bad(copy, k, NULL);
            w2l__free(copy);
        }
    }
}
END_TEST

START_TEST(whitespace_variants)
{
    const char *t = "\xef\xbb\xbf \t\r\n{ \"a\" :\t[ 1 ,\n2 ] ,\r\n\"b\":{}\t}\n\n ";
    w2l__json *j = parse_ok(t);
    ck_assert_uint_eq(w2l__json_size(w2l__json_get(j, "a")), 2);
    char *out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "{\"a\":[1,2],\"b\":{}}");
    w2l_free(out);
    w2l__json_free(j);
    parse_bad("\f[]", 3, "line 1, column 1");
    parse_bad("[1\v]", 4, NULL);
    parse_bad(" \n \n  ", 7, "line 3, column 3");
    parse_bad("[1,\n  x]", 8, "line 2, column 3");
    parse_bad("[1]\n\n  x", 8, "after the value at line 3, column 3");
    parse_bad("[1,]", 4, NULL);
    parse_bad("{\"a\":1,}", 8, NULL);
    parse_bad("{\"a\" 1}", 7, "':' expected");
    parse_bad("{1:2}", 5, "member name");
    parse_bad("[tru]", 5, NULL);
    parse_bad("[nul", 4, NULL);
}
END_TEST

/* Duplicate member names are all kept; get, set and remove act on the first. */
START_TEST(duplicate_keys)
{
    w2l__json *j = parse_ok("{\"a\": 1, \"b\": 2, \"a\": 3}");
    ck_assert_uint_eq(w2l__json_size(j), 3);
    int64_t v;
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(j, "a"), &v), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(w2l__json_set(j, "a", w2l__json_new_int64(9)), 0);
    char *out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "{\"a\":9,\"b\":2,\"a\":3}");
    w2l_free(out);
    w2l__json_remove(j, "a");
    out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "{\"b\":2,\"a\":3}");
    w2l_free(out);
    w2l__json_remove(j, "a");
    w2l__json_remove(j, "b");
    ck_assert_uint_eq(w2l__json_size(j), 0);
    ck_assert_int_eq(w2l__json_add(j, "c", w2l__json_new_null()), 0); /* empty, then added to */
    out = w2l__json_print(j, 0);
    ck_assert_str_eq(out, "{\"c\":null}");
    w2l_free(out);
    w2l__json_free(j);
}
END_TEST

/* Parsed and built nodes mix both ways; printing is as cJSON printed (documents written
 * before keep their bytes). */
START_TEST(mixed_trees_and_print_format)
{
    w2l__json *p = parse_ok("{\"x\": [1, {\"y\": \"z\"}], \"e\": {}, \"f\": []}");
    w2l__json *b = w2l__json_new_object();
    ck_assert_int_eq(w2l__json_add(b, "d", w2l__json_new_double(0.1)), 0);
    ck_assert_int_eq(w2l__json_add(b, "three", w2l__json_new_double(3.0)), 0);
    ck_assert_int_eq(w2l__json_add(b, "big", w2l__json_new_double(1e20)), 0);
    ck_assert_int_eq(w2l__json_add(b, "nan", w2l__json_new_double(NAN)), 0);
    ck_assert_int_eq(w2l__json_add(b, "third", w2l__json_new_double(1.0 / 3)), 0);
    ck_assert_int_eq(w2l__json_add(b, "parsed", parse_ok("[true, false]")), 0);
    ck_assert_int_eq(w2l__json_append(w2l__json_get(p, "x"), w2l__json_new_string("s")), 0);
    ck_assert_int_eq(w2l__json_set(p, "e", b), 0);
    char *out = w2l__json_print(p, 0);
    ck_assert_str_eq(out, "{\"x\":[1,{\"y\":\"z\"},\"s\"],\"e\":{\"d\":0.1,\"three\":3,"
                          "\"big\":1e+20,"
                          "\"nan\":null,\"third\":0.33333333333333331,\"parsed\":[true,false]},"
                          "\"f\":[]}");
    w2l_free(out);
    w2l__json *d = w2l__json_dup(p);
    w2l__json_free(p);
    out = w2l__json_print(d, 1);
    ck_assert_str_eq(out, "{\n\t\"x\":\t[1, {\n\t\t\t\"y\":\t\"z\"\n\t\t}, \"s\"],\n"
                          "\t\"e\":\t{\n\t\t\"d\":\t0.1,\n\t\t\"three\":\t3,\n"
                          "\t\t\"big\":\t1e+20,\n"
                          "\t\t\"nan\":\tnull,\n\t\t\"third\":\t0.33333333333333331,\n"
                          "\t\t\"parsed\":\t[true, false]\n\t},\n\t\"f\":\t[]\n}");
    w2l_free(out);
    double x;
    ck_assert_int_eq(w2l__json_double(w2l__json_get(w2l__json_get(d, "e"), "d"), &x), 0);
    ck_assert(x == 0.1);
    w2l__json_free(d);
    w2l__json *e = w2l__json_new_object();
    out = w2l__json_print(e, 1);
    ck_assert_str_eq(out, "{\n}");
    w2l_free(out);
    w2l__json_free(e);
    /* byte for byte what cJSON 1.7 printed for this document (nesting, doubles) */
    p = parse_ok("{\"x\": [1, {\"y\": \"z\"}, [{\"q\":{}}]], \"e\": {}, \"f\": []}");
    w2l__json *nums = w2l__json_new_array();
    static const double dv[] = {0.1, 3.0, 1e20, 0.3333333333333333, 123456789.5, -2147483648.0,
                                2147483648.0, 1e-7, 5e-324};
    for (size_t k = 0; k < W2L_ARRAY_LEN(dv); k++)
        ck_assert_int_eq(w2l__json_append(nums, w2l__json_new_double(dv[k])), 0);
    ck_assert_int_eq(w2l__json_add(p, "n", nums), 0);
    out = w2l__json_print(p, 1);
    ck_assert_str_eq(out, "{\n\t\"x\":\t[1, {\n\t\t\t\"y\":\t\"z\"\n\t\t}, [{\n\t\t\t\t\"q\":\t{\n"
                          "\t\t\t\t}\n"
                          "\t\t\t}]],\n\t\"e\":\t{\n\t},\n\t\"f\":\t[],\n\t\"n\":\t[0.1, 3, 1e+20, "
                          "0.33333333333333331, 123456789.5, -2147483648, 2147483648, 1e-07, "
                          "4.94065645841247e-324]\n}");
    w2l_free(out);
    w2l__json_free(p);
}
END_TEST

/* A known value for the raw test: the first document's mysqlType. */
static size_t known_text(void *ctx, size_t i, const char *p, size_t avail)
{
    static const char k[] = "{\"id\":\"bigint(20)\",\"s\":\"enum('a','b\\\"c')\"}";
    (void)ctx;
    return i == 0 && avail >= sizeof k - 1 && !memcmp(p, k, sizeof k - 1) ? sizeof k - 1 : 0;
}

/* w2l__json_parse_raw accepts and rejects exactly what w2l__json_parse does (same error
 * text), and each member kept raw reads back as the parser's own tree of it: on whole
 * documents, on every truncation of them, and on raw members with escapes, \u escapes
 * (the skip gives up: parsed whole again), deep nesting and odd white space. */
START_TEST(raw_members_agree_with_the_parser)
{
    static const char *const names[] = {"mysqlType", "pkNames", "deep", NULL};
    const w2l__json_rawspec raw[2] = {{names, NULL, NULL}, {names, known_text, NULL}};
    static const char *const docs[] = {
        "{\"data\":[{\"id\":\"1\"}],\"mysqlType\":{\"id\":\"bigint(20)\",\"s\":\"enum('a',"
        "'b\\\"c')\"},"
        "\"pkNames\":[\"id\"],\"old\":null}",
        "{\"mysqlType\" : { \"a\" : \"int\" , \"b\":[1,-2.5e3,true,false,null,{}] } ,"
        "\"pkNames\":[]}",
        "{\"mysqlType\":{\"u\":\"\\u00e9\\ud83d\\ude00\"},\"pkNames\":null}",
        "{\"pkNames\":\"id\",\"mysqlType\":\"int\"}",
        "{\"deep\":[[[[[[[[[[{\"x\":[1]}]]]]]]]]]],\"mysqlType\":{\"t\\\\\":\"\\n\\t\\/\"}}",
        "{\"mysqlType\":{\"a\":01}}",
        "{\"mysqlType\":{\"a\":\"\\x\"}}",
        "{\"mysqlType\":{\"a\" \"b\"}}",
        "{\"mysqlType\":[1,]}",
        "{\"mysqlType\":{\"a\":1}} x",
        "{\"mysqlType\":{\"a\":\"\\ud800\"}}",
    };
    for (size_t d = 0; d < W2L_ARRAY_LEN(docs); d++) {
        size_t full = strlen(docs[d]);
        for (size_t len = full; len > 0; len--) {
            char *t = w2l__malloc(len); /* exactly len bytes: ASan sees any overread */
            memcpy(t, docs[d], len);
            w2l__json *a = NULL, *b = NULL;
            w2l_error ea = {0}, eb = {0};
            w2l_rc ra = w2l__json_parse(t, len, &a, &ea),
                   rb = w2l__json_parse_raw(t, len, &raw[len == full || len % 2], &b, &eb);
            ck_assert_msg(ra == rb, "doc %zu len %zu: parse %d, raw %d", d, len, ra, rb);
            if (ra != W2L_OK) ck_assert_str_eq(ea.msg, eb.msg);
            for (w2l__json *m = w2l__json_first(b), *n = w2l__json_first(a); m && n;
                 m = w2l__json_next(m), n = w2l__json_next(n)) {
                ck_assert_str_eq(w2l__json_key(m), w2l__json_key(n));
                ck_assert_int_eq(w2l__json_type(m), w2l__json_type(n));
                size_t rl;
                const char *rt = w2l__json_raw(m, &rl);
                w2l__json *sub = NULL;
                if (rt) ck_assert_ok(w2l__json_parse(rt, rl, &sub, &err), err);
                char *pm = w2l__json_print(rt ? sub : m, 0), *pn = w2l__json_print(n, 0);
                ck_assert_str_eq(pm, pn);
                w2l__free(pm), w2l__free(pn);
                w2l__json_free(sub);
            }
            if (rb == W2L_OK && len == full && d == 0) { /* a raw member is kept as text (here
                                                          * through the known text) */
                size_t rl;
                const char *rt = w2l__json_raw(w2l__json_get(b, "pkNames"), &rl);
                ck_assert_ptr_nonnull(rt);
                ck_assert_int_eq((int)rl, 6);
                ck_assert(!memcmp(rt, "[\"id\"]", 6));
                ck_assert_ptr_null(w2l__json_raw(w2l__json_get(b, "data"), &rl));
                w2l__json *c = w2l__json_dup(b);
                char *pc = w2l__json_print(c, 0), *pb = w2l__json_print(b, 0);
                ck_assert_str_eq(pc, pb); /* copies and prints keep the text */
                w2l__free(pc), w2l__free(pb);
                w2l__json_free(c);
            }
            w2l__json_free(a);
            w2l__json_free(b);
            w2l__free(t);
            if (d >= 5) break; /* the bad documents: whole only */
        }
    }
}
END_TEST

/* Writes tree j through the writer, as w2l__json_print would print it. */
static void write_tree(w2l__json_writer *w, const char *key, const w2l__json *j, unsigned *r)
{
    *r = *r * 1103515245u + 12345u;
    int kind = w2l__json_type(j);
    if (kind == W2L_JSON_OBJECT || kind == W2L_JSON_ARRAY) {
        if ((*r >> 16) % 3 == 0) { /* a third of the containers as a tree, the rest opened */
            w2l__json_w_tree(w, key, j);
            return;
        }
        if (kind == W2L_JSON_OBJECT) w2l__json_w_object(w, key);
        else w2l__json_w_array(w, key);
        for (const w2l__json *c = w2l__json_first(j); c; c = w2l__json_next(c))
            write_tree(w, kind == W2L_JSON_OBJECT ? w2l__json_key(c) : NULL, c, r);
        w2l__json_w_close(w);
        return;
    }
    int64_t v;
    if (kind == W2L_JSON_STRING) w2l__json_w_string(w, key, w2l__json_str(j));
    else if (kind == W2L_JSON_NUMBER && w2l__json_int64(j, &v) == 0) w2l__json_w_int64(w, key, v);
    else w2l__json_w_tree(w, key, j);
}

START_TEST(writer_prints_as_the_tree_printer)
{
    static const char *docs[] = {
        "{}", "[]", "{\"a\": {}, \"b\": [], \"c\": [{}, [], {\"x\": []}]}",
        "{\"format-version\": 2, \"s\": \"t\\\"ab\\u0001\", \"n\": -9223372036854775808, "
        "\"m\": 9223372036854775807, \"z\": 0, \"f\": 1.5, \"t\": true, \"u\": null, "
        "\"l\": [1, \"two\", [3, [4, {\"five\": 5}]], {}]}",
        "[[[[[[[[1]]]]]]], {\"deep\": {\"er\": {\"est\": [\"\"]}}}]",
        "{\"snapshots\": [{\"snapshot-id\": 1, \"summary\": {\"k\": \"v\", \"w2l.x\": \"\"}}, "
        "{\"snapshot-id\": 2, \"summary\": {}}], \"refs\": {\"main\": {\"snapshot-id\": 2}}}",
    };
    for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
        w2l__json *j = parse_ok(docs[d]);
        for (int pretty = 0; pretty < 2; pretty++) {
            char *want = w2l__json_print(j, pretty);
            for (unsigned seed = 0; seed < 8; seed++) {
                w2l__json_writer w;
                w2l__json_w_init(&w, pretty);
                unsigned r = seed;
                write_tree(&w, NULL, j, &r);
                size_t len = 0;
                char *got = w2l__json_w_finish(&w, &len);
                ck_assert_ptr_nonnull(got);
                ck_assert_str_eq(got, want);
                ck_assert_uint_eq(len, strlen(want));
                w2l_free(got);
            }
            w2l_free(want);
        }
        w2l__json_free(j);
    }
}
END_TEST

START_TEST(writer_refuses_misuse)
{
    w2l__json_writer w;
    w2l__json_w_init(&w, 1); /* a container left open */
    w2l__json_w_object(&w, NULL);
    w2l__json_w_int64(&w, "a", 1);
    ck_assert_ptr_null(w2l__json_w_finish(&w, NULL));
    w2l__json_w_init(&w, 0); /* a close with nothing open */
    w2l__json_w_array(&w, NULL);
    w2l__json_w_close(&w);
    w2l__json_w_close(&w);
    ck_assert_ptr_null(w2l__json_w_finish(&w, NULL));
    w2l__json_w_init(&w, 0); /* nesting past the limit */
    for (int i = 0; i <= W2L_JSON_WRITER_DEPTH; i++) w2l__json_w_array(&w, NULL);
    for (int i = 0; i <= W2L_JSON_WRITER_DEPTH; i++) w2l__json_w_close(&w);
    ck_assert_ptr_null(w2l__json_w_finish(&w, NULL));
    w2l__json_w_init(&w, 0); /* a missing tree */
    w2l__json_w_tree(&w, NULL, NULL);
    ck_assert_ptr_null(w2l__json_w_finish(&w, NULL));
    w2l__json_w_init(&w, 0); /* and the writer is reset after finish: usable again */
    w2l__json_w_array(&w, NULL);
    w2l__json_w_string(&w, NULL, "x");
    w2l__json_w_close(&w);
    char *t = w2l__json_w_finish(&w, NULL);
    ck_assert_str_eq(t, "[\"x\"]");
    w2l_free(t);
}
END_TEST

START_TEST(writer_out_of_memory)
{
    fail_alloc_install();
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        fail_alloc_arm(nth);
        w2l__json_writer w;
        w2l__json_w_init(&w, 1);
        w2l__json_w_object(&w, NULL);
        for (int i = 0; i < 200; i++) w2l__json_w_string(&w, "key", "a value long enough to grow");
        w2l__json_w_close(&w);
        char *t = w2l__json_w_finish(&w, NULL);
        fail_alloc_arm(-1);
        w2l_free(t);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (t) break;
        ck_assert_int_lt(nth, 100);
    }
}
END_TEST

/* The printer's escaping, one byte at a time, as the reference for the word-wise scan. */
static size_t ref_escape(const unsigned char *s, size_t n, char *o)
{
    size_t k = 0;
    o[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t" : NULL;
        if (e) k += (size_t)sprintf(o + k, "%s", e);
        else if (c < 0x20) k += (size_t)sprintf(o + k, "\\u%04x", c);
        else o[k++] = (char)c;
    }
    o[k++] = '"';
    o[k] = '\0';
    return k;
}

START_TEST(strings_escape_every_byte_at_every_offset)
{
    unsigned char s[41];
    char want[40 * 6 + 3];
    for (size_t len = 1; len < sizeof s; len += 3)
        for (size_t at = 0; at < len; at++)
            for (int c = 0; c < 256; c++) {
                for (size_t i = 0; i < len; i++) s[i] = (unsigned char)('a' + i % 26);
                s[at] = (unsigned char)c;
                if (len > 9) s[len - 1 - at % 8] = 0xe9; /* a byte of 0x80 and up in the word */
                w2l__json *j = w2l__json_new_stringn((const char *)s, len);
                ck_assert_ptr_nonnull(j);
                char *got = w2l__json_print(j, 0);
                ref_escape(s, len, want);
                ck_assert_str_eq(got, want);
                w2l_free(got);
                w2l__json_free(j);
                if (!c) continue; /* w2l__json_buf_string takes a C string */
                w2l_buf b = {0};
                s[len] = 0;
                ck_assert_int_eq(w2l__json_buf_string(&b, (const char *)s, &err), W2L_OK);
                ck_assert_uint_eq(b.len, strlen(want));
                ck_assert(!memcmp(b.data, want, b.len));
                w2l_buf_release(&b);
            }
}
END_TEST

START_TEST(scan_quote_finds_the_first_at_every_offset)
{
    /* both scanners (the SSE2 one where the build has it, and the word one every other
     * build uses) against a byte loop: every byte value before the stop, the stop at every
     * offset of two blocks, from every start within a block, the pad last */
    char buf[64 + W2L_JSON_SCAN_PAD];
    for (int stop = 0; stop < 2; stop++)
        for (size_t at = 0; at < 40; at++)
            for (size_t from = 0; from < 16 && from <= at; from++)
                for (int c = 0; c < 256; c++) {
                    if (c == '"' || c == '\\') continue;
                    for (size_t i = 0; i < 40; i++) buf[i] = i % 2 ? (char)c : (char)('a' + i % 26);
                    memset(buf + 40, '"', sizeof buf - 40);
                    buf[at] = stop ? '\\' : '"';
                    const char *want = buf + at, *got = w2l__json_scan_quote(buf + from),
                               *words = w2l__json_scan_quote_words(buf + from);
                    if (got != want || words != want)
                        ck_abort_msg("stop at %zu from %zu, byte %d: %td and %td", at, from, c,
                                     got - buf, words - buf);
                }
}
END_TEST

Suite *suite_json(void)
{
    Suite *s = suite_create("json");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, big_integers_are_exact);
    tcase_add_test(basic, long_decimals_keep_their_text);
    tcase_add_test(basic, build_set_remove_print);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, marker_like_strings_stay_strings);
    tcase_add_test(edge, syntax_errors_are_located);
    tcase_add_test(edge, numbers_keep_their_text);
    tcase_add_test(edge, strings_with_nul_bytes);
    tcase_add_test(edge, escapes_and_surrogates);
    tcase_add_test(edge, nul_bytes_round_trip);
    tcase_add_test(edge, numbers_exact_and_strict);
    tcase_add_test(edge, depth_limit);
    tcase_add_test(edge, every_truncation_fails_cleanly);
    tcase_add_test(edge, whitespace_variants);
    tcase_add_test(edge, duplicate_keys);
    tcase_add_test(edge, mixed_trees_and_print_format);
    tcase_add_test(edge, raw_members_agree_with_the_parser);
    tcase_add_test(edge, writer_prints_as_the_tree_printer);
    tcase_add_test(edge, writer_refuses_misuse);
    tcase_add_test(edge, strings_escape_every_byte_at_every_offset);
    tcase_add_test(edge, scan_quote_finds_the_first_at_every_offset);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, oom_on_every_allocation);
    tcase_add_test(faults, writer_out_of_memory);
    suite_add_tcase(s, faults);
    return s;
}
