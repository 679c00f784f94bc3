/*
 * lib/json: the cJSON wrapper — exact 64-bit integers and long numbers through a parse and
 * print round trip, strings that look like the internal marker, located syntax errors,
 * building, and out-of-memory on every allocation.
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
    ck_assert_int_eq(w2l__json_number_text(w2l__json_first(w2l__json_get(j, "ids")), num, sizeof num), 0);
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
    const char *t = "[1.50, -0.0, 1e400, 1e-400, 1.5E+3, 5.0, 1e3, 12345e-2, 0.1, 42, -7, 123456789012345678901]";
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(t, strlen(t), &j, &err), err);
    static const char *const text[] = {"1.50", "-0.0", "1e400", "1e-400", "1.5E+3", "5.0", "1e3", "12345e-2",
                                       "0.1", "42", "-7", "123456789012345678901"};
    char nb[32];
    size_t i = 0;
    for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e), i++) {
        ck_assert_int_eq(w2l__json_type(e), W2L_JSON_NUMBER);
        ck_assert_str_eq(w2l__json_number_str(e, nb, sizeof nb), text[i]);
    }
    ck_assert_uint_eq(i, W2L_ARRAY_LEN(text));
    /* exact integers from any form (-0.0, 1.5E+3, 5.0, 1e3), never a fraction or beyond 64 bits */
    static const struct { size_t at; int ok; int64_t v; } ints[] = {
        {0, 0, 0}, {1, 1, 0}, {2, 0, 0}, {3, 0, 0}, {4, 1, 1500}, {5, 1, 5}, {6, 1, 1000}, {7, 0, 0},
        {8, 0, 0}, {9, 1, 42}, {10, 1, -7}, {11, 0, 0}};
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
    ck_assert_str_eq(out, "[1.50,-0.0,1e400,1e-400,1.5E+3,5.0,1e3,12345e-2,0.1,42,-7,123456789012345678901]");
    w2l_free(out);
    w2l__json_free(j);
    /* keeping a number's text never makes a malformed one acceptable */
    static const char *const bad[] = {"[-]", "[1e]", "[1e+]", "[1e5.]", "[.5]", "[+1]", "[1E--1]"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(bad); k++)
        ck_assert_msg(w2l__json_parse(bad[k], strlen(bad[k]), &j, &err) == W2L_CORRUPT, "%s", bad[k]);
}
END_TEST

/* Strings holding NUL bytes (canal's binary text) keep their length, also in a copy. */
START_TEST(strings_with_nul_bytes)
{
    const char *t = "{\"k\\u0000\": \"a\", \"g\": \"x\\u0000y\\u00ffz\\ud83d\\ude00\", \"n\": 1.5, \"s\": \"plain\"}";
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
    const char *t = "{\"\\u0001123\": \"\\u0001456\", \"big\": 12345678901234567890, \"s\": \"\\u0001789\"}";
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
    const char *t = "{\"id\": 4327154639183968397, \"a\": [1, 2, {\"b\": \"c\\u0000d\"}], \"d\": 1.5}";
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
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, oom_on_every_allocation);
    suite_add_tcase(s, faults);
    return s;
}
