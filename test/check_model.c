/*
 * lib/model: Iceberg types, value text (parse and format), value order, 128-bit decimals
 * and their byte forms, civil date conversions, schemas and their Iceberg JSON.
 *
 * Every parse goes through a copy of the text followed by junk and no NUL, so a parser that
 * reads past len fails here.
 */
#include <check.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "support/support.h"
#include "support/types.h"


/* Parses text from a heap copy with junk after it and no terminating NUL. */
static w2l_rc parse(w2l_type t, const char *text, w2l_value *v, w2l_error *err)
{
    size_t n = strlen(text);
    char *copy = malloc(n + 4);
    memcpy(copy, text, n);
    memcpy(copy + n, "7:Z", 3); /* digits, separators and zone letters a parser could eat */
    copy[n + 3] = '9';
    w2l_rc rc = w2l_value_parse(t, copy, n, v, err);
    free(copy);
    return rc;
}

static const char *fmt(w2l_type t, const w2l_value *v)
{
    static char buf[256];
    size_t n = w2l_value_format(t, v, buf, sizeof buf);
    ck_assert_uint_eq(n, strlen(buf));
    return buf;
}

/* in parses, formats as canon, and canon reads back to the same value. */
#define RT(t, in, canon) rt_at(t, in, canon, __LINE__)
static w2l_value rt_at(w2l_type t, const char *in, const char *canon, int line)
{
    w2l_error err;
    w2l_value v, v2;
    w2l_rc rc = parse(t, in, &v, &err);
    ck_assert_msg(rc == W2L_OK, "line %d: parse '%s': %s", line, in, err.msg);
    char got[256];
    snprintf(got, sizeof got, "%s", fmt(t, &v));
    ck_assert_msg(strcmp(got, canon) == 0, "line %d: '%s' formatted as '%s', want '%s'", line, in,
                  got, canon);
    rc = parse(t, canon, &v2, &err);
    ck_assert_msg(rc == W2L_OK, "line %d: reparse '%s': %s", line, canon, err.msg);
    ck_assert_msg(w2l_value_compare(t, &v, &v2) == 0, "line %d: '%s' changed on reparse", line,
                  canon);
    return v;
}

/* in is rejected with W2L_CORRUPT and a message holding want. */
#define REJ(t, in, want) rej_at(t, in, want, __LINE__)
static void rej_at(w2l_type t, const char *in, const char *want, int line)
{
    w2l_error err;
    w2l_value v;
    w2l_rc rc = parse(t, in, &v, &err);
    ck_assert_msg(rc == W2L_CORRUPT, "line %d: '%s' gave %s, want W2L_CORRUPT", line, in,
                  w2l_rc_name(rc));
    ck_assert_msg(strstr(err.msg, want) != NULL, "line %d: message '%s' lacks '%s'", line, err.msg,
                  want);
}

/* ---- types ---- */

START_TEST(type_names_round_trip)
{
    static const char *const names[] = {"boolean", "int", "long", "float", "double", "date",
                                        "time", "timestamp", "timestamptz", "string", "binary",
                                        "decimal(1,0)", "decimal(38,38)", "decimal(12,2)"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(names); i++) {
        w2l_type t;
        w2l_error err;
        ck_assert_ok(w2l_type_parse(names[i], &t, &err), err);
        char buf[16];
        ck_assert_str_eq(w2l_type_format(t, buf, sizeof buf), names[i]);
    }
    w2l_type t;
    w2l_error err;
    ck_assert_ok(w2l_type_parse("decimal(12, 2)", &t, &err), err);
    ck_assert_int_eq(t.id, W2L_TYPE_DECIMAL);
    ck_assert_uint_eq(t.precision, 12);
    ck_assert_uint_eq(t.scale, 2);
    ck_assert_ok(w2l_type_parse("decimal ( 38 , 0 )", &t, &err), err);
    ck_assert_uint_eq(t.precision, 38);
    ck_assert_ok(w2l_type_parse("long", &t, &err), err);
    ck_assert_int_eq(t.id, W2L_TYPE_LONG);
    ck_assert_ok(w2l_type_parse("timestamptz", &t, &err), err);
    ck_assert_int_eq(t.id, W2L_TYPE_TIMESTAMPTZ);
}
END_TEST

START_TEST(type_parse_rejects)
{
    static const char *const bad[] = {"", "Long", "int ", "varchar", "decimal", "decimal(5)",
                                      "decimal(0,0)", "decimal(39,0)", "decimal(5,6)",
                                      "decimal(5,2)x", "decimal(-1,0)", "decimal(1000,2)",
                                      "decimal(5,,2)", "uuid", "fixed[16]", "timestamp_ns",
                                      "struct"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(bad); i++) {
        w2l_type t;
        w2l_error err;
        ck_assert_int_eq(w2l_type_parse(bad[i], &t, &err), W2L_SCHEMA);
        ck_assert_int_eq(err.code, W2L_SCHEMA);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        ck_assert_msg(strstr(err.msg, quoted) != NULL, "'%s' not named in: %s", bad[i], err.msg);
    }
    w2l_error err;
    w2l_type t;
    ck_assert_int_eq(w2l_type_parse(NULL, &t, &err), W2L_MISUSE);
}
END_TEST

START_TEST(type_promotions)
{
    ck_assert(w2l_type_can_promote(T_INT, T_LONG));
    ck_assert(w2l_type_can_promote(T_FLOAT, T_DOUBLE));
    ck_assert(w2l_type_can_promote(T_STRING, T_STRING));
    ck_assert(w2l_type_can_promote(T_TSTZ, T_TSTZ));
    ck_assert(w2l_type_can_promote(dec(10, 2), dec(12, 2)));
    ck_assert(w2l_type_can_promote(dec(10, 2), dec(10, 2)));
    ck_assert(!w2l_type_can_promote(dec(12, 2), dec(10, 2)));
    ck_assert(!w2l_type_can_promote(dec(10, 2), dec(12, 3)));
    ck_assert(!w2l_type_can_promote(T_LONG, T_INT));
    ck_assert(!w2l_type_can_promote(T_DOUBLE, T_FLOAT));
    ck_assert(!w2l_type_can_promote(T_INT, T_DOUBLE));
    ck_assert(!w2l_type_can_promote(T_INT, dec(10, 0)));
    ck_assert(!w2l_type_can_promote(T_TS, T_TSTZ));
    ck_assert(!w2l_type_can_promote(T_STRING, T_BINARY));
    ck_assert(!w2l_type_can_promote(dec(0, 0), dec(0, 0))); /* invalid types never */
}
END_TEST

/* ---- booleans and integers ---- */

START_TEST(bool_and_int_text)
{
    ck_assert_int_eq(RT(T_BOOL, "true", "true").v.i32, 1);
    ck_assert_int_eq(RT(T_BOOL, "false", "false").v.i32, 0);
    ck_assert_int_eq(RT(T_BOOL, "1", "true").v.i32, 1);
    ck_assert_int_eq(RT(T_BOOL, "0", "false").v.i32, 0);
    RT(T_BOOL, "TRUE", "true");
    REJ(T_BOOL, "yes", "boolean");
    REJ(T_BOOL, "", "expected true or false");
    REJ(T_BOOL, "truex", "truex");

    ck_assert_int_eq(RT(T_INT, "0", "0").v.i32, 0);
    ck_assert_int_eq(RT(T_INT, "-12", "-12").v.i32, -12);
    ck_assert_int_eq(RT(T_INT, "+7", "7").v.i32, 7);
    ck_assert_int_eq(RT(T_INT, "007", "7").v.i32, 7);
    ck_assert_int_eq(RT(T_INT, "2147483647", "2147483647").v.i32, INT32_MAX);
    ck_assert_int_eq(RT(T_INT, "-2147483648", "-2147483648").v.i32, INT32_MIN);
    REJ(T_INT, "2147483648", "out of range");
    REJ(T_INT, "-2147483649", "out of range");
    REJ(T_INT, "99999999999999999999999", "out of range");
    REJ(T_INT, "", "not an integer");
    REJ(T_INT, "-", "not an integer");
    REJ(T_INT, " 1", "not an integer");
    REJ(T_INT, "1.0", "invalid int value '1.0'");
    REJ(T_INT, "0x10", "not an integer");

    ck_assert_int_eq(RT(T_LONG, "9223372036854775807", "9223372036854775807").v.i64, INT64_MAX);
    ck_assert_int_eq(RT(T_LONG, "-9223372036854775808", "-9223372036854775808").v.i64, INT64_MIN);
    ck_assert_int_eq(RT(T_LONG, "-1", "-1").v.i64, -1);
    ck_assert_int_eq(RT(T_LONG, "2147483648", "2147483648").v.i64, INT64_C(2147483648));
    REJ(T_LONG, "9223372036854775808", "long");
    REJ(T_LONG, "-9223372036854775809", "out of range");
    REJ(T_LONG, "18446744073709551616", "out of range");
    REJ(T_LONG, "12a", "not an integer");
}
END_TEST

/* ---- floats ---- */

static const char *dfmt(double d)
{
    static char buf[64];
    w2l__double_format(d, buf, sizeof buf);
    return buf;
}

static const char *ffmt(float f)
{
    static char buf[64];
    w2l__float_format(f, buf, sizeof buf);
    return buf;
}

START_TEST(double_text)
{
    /* the layout of Python's repr() */
    ck_assert_str_eq(dfmt(1.0), "1.0");
    ck_assert_str_eq(dfmt(0.1), "0.1");
    ck_assert_str_eq(dfmt(100.0), "100.0");
    ck_assert_str_eq(dfmt(-2.5), "-2.5");
    ck_assert_str_eq(dfmt(123.456), "123.456");
    ck_assert_str_eq(dfmt(1.0 / 3), "0.3333333333333333");
    ck_assert_str_eq(dfmt(1e15), "1000000000000000.0");
    ck_assert_str_eq(dfmt(1e16), "1e+16");
    ck_assert_str_eq(dfmt(1e22), "1e+22");
    ck_assert_str_eq(dfmt(12345678901234567890.0), "1.2345678901234567e+19");
    ck_assert_str_eq(dfmt(0.0001), "0.0001");
    ck_assert_str_eq(dfmt(1.5e-05), "1.5e-05");
    ck_assert_str_eq(dfmt(0.00001234), "1.234e-05");
    ck_assert_str_eq(dfmt(DBL_MAX), "1.7976931348623157e+308");
    ck_assert_str_eq(dfmt(DBL_MIN), "2.2250738585072014e-308");
    ck_assert_str_eq(dfmt(5e-324), "5e-324");
    ck_assert_str_eq(dfmt(0.0), "0.0");
    ck_assert_str_eq(dfmt(-0.0), "-0.0");
    ck_assert_str_eq(dfmt(NAN), "NaN");
    ck_assert_str_eq(dfmt(-NAN), "NaN");
    ck_assert_str_eq(dfmt(INFINITY), "Infinity");
    ck_assert_str_eq(dfmt(-INFINITY), "-Infinity");

    w2l_value v = RT(T_DOUBLE, "-0.0", "-0.0");
    ck_assert(v.v.f64 == 0 && signbit(v.v.f64));
    v = RT(T_DOUBLE, "0", "0.0");
    ck_assert(v.v.f64 == 0 && !signbit(v.v.f64));
    ck_assert(isnan(RT(T_DOUBLE, "NaN", "NaN").v.f64));
    ck_assert(isnan(RT(T_DOUBLE, "nan", "NaN").v.f64));
    ck_assert(isinf(RT(T_DOUBLE, "Infinity", "Infinity").v.f64));
    ck_assert(RT(T_DOUBLE, "-Infinity", "-Infinity").v.f64 < 0);
    RT(T_DOUBLE, "-inf", "-Infinity");
    ck_assert(RT(T_DOUBLE, "1.5", "1.5").v.f64 == 1.5);
    ck_assert(RT(T_DOUBLE, "1E3", "1000.0").v.f64 == 1000.0);
    ck_assert(RT(T_DOUBLE, ".5", "0.5").v.f64 == 0.5);
    ck_assert(RT(T_DOUBLE, "4.9e-324", "5e-324").v.f64 == 5e-324);
    ck_assert(RT(T_DOUBLE, "1e-400", "0.0").v.f64 == 0); /* underflow rounds to zero */
    REJ(T_DOUBLE, "1e400", "out of range");
    REJ(T_DOUBLE, "", "not a number");
    REJ(T_DOUBLE, " 1", "not a number");
    REJ(T_DOUBLE, "1.5x", "invalid double value '1.5x'");
    REJ(T_DOUBLE, "one", "not a number");
    REJ(T_DOUBLE, ".", "not a number");
    REJ(T_DOUBLE, "1e", "bad exponent");
    REJ(T_DOUBLE, "0x1p3", "not a number"); /* hex floats are not value text */
    REJ(T_DOUBLE, "nanx", "not a number");
    REJ(T_DOUBLE, "--1", "not a number");
    ck_assert(signbit(RT(T_DOUBLE, "-NaN", "NaN").v.f64));
    ck_assert(RT(T_DOUBLE, "+INF", "Infinity").v.f64 > 0);
    ck_assert(RT(T_DOUBLE, "1e-99999999999", "0.0").v.f64 == 0);
    REJ(T_DOUBLE, "1e99999999999", "out of range");
    ck_assert(RT(T_DOUBLE, "0.000000000000000000000000000000000000000000000000000000000000000"
                           "0000000000000000000000000000000000000000000000000000000000000001e64",
                 "1e-63").v.f64 == 1e-63);
    /* leading zeros do not count, 500 significant digits do */
    char many[700];
    memset(many, '0', 600);
    strcpy(many + 600, "1.5");
    ck_assert(RT(T_DOUBLE, many, "1.5").v.f64 == 1.5);
    memset(many, '1', 600);
    REJ(T_DOUBLE, many, "too many significant digits");
}
END_TEST

START_TEST(float_text)
{
    ck_assert_str_eq(ffmt(0.1f), "0.1");
    ck_assert_str_eq(ffmt(1.0f), "1.0");
    ck_assert_str_eq(ffmt(16777216.0f), "16777216.0");
    ck_assert_str_eq(ffmt(FLT_MAX), "3.4028235e+38");
    ck_assert_str_eq(ffmt(FLT_MIN), "1.1754944e-38");
    ck_assert_str_eq(ffmt(1e-45f), "1e-45");
    ck_assert_str_eq(ffmt(-0.0f), "-0.0");
    ck_assert_str_eq(ffmt(NAN), "NaN");
    ck_assert_str_eq(ffmt(-INFINITY), "-Infinity");
    ck_assert(RT(T_FLOAT, "0.1", "0.1").v.f32 == 0.1f);
    ck_assert(RT(T_FLOAT, "3.4028235e38", "3.4028235e+38").v.f32 == FLT_MAX);
    ck_assert(signbit(RT(T_FLOAT, "-0.0", "-0.0").v.f32));
    ck_assert(isnan(RT(T_FLOAT, "NaN", "NaN").v.f32));
    RT(T_FLOAT, "Infinity", "Infinity");
    /* a double literal is rounded once, to the nearest float */
    ck_assert(RT(T_FLOAT, "0.30000000000000004", "0.3").v.f32 == 0.3f);
    REJ(T_FLOAT, "1e39", "out of range");
    REJ(T_FLOAT, "1,5", "invalid float value '1,5'");
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, so a failure reproduces */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

START_TEST(floats_round_trip_bit_exact)
{
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = rnd();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (isnan(d)) continue;
        w2l__double_format(d, buf, sizeof buf);
        w2l_value v;
        w2l_error err;
        ck_assert_ok(w2l_value_parse(T_DOUBLE, buf, strlen(buf), &v, &err), err);
        ck_assert_msg(memcmp(&v.v.f64, &d, sizeof d) == 0, "%a -> %s", d, buf);

        uint32_t fb = (uint32_t)bits;
        float f;
        memcpy(&f, &fb, sizeof f);
        if (isnan(f)) continue;
        w2l__float_format(f, buf, sizeof buf);
        ck_assert_ok(w2l_value_parse(T_FLOAT, buf, strlen(buf), &v, &err), err);
        ck_assert_msg(memcmp(&v.v.f32, &f, sizeof f) == 0, "%a -> %s", (double)f, buf);
    }
}
END_TEST

START_TEST(shortest_digits)
{
    /* every value with a short exact decimal form prints as that form */
    char buf[64], want[64];
    for (int i = 1; i < 100000; i++) {
        double d = i / 1000.0;
        w2l__double_format(d, buf, sizeof buf);
        snprintf(want, sizeof want, "%d.%03d", i / 1000, i % 1000);
        /* trim trailing zeros of the fraction, keeping one digit */
        size_t n = strlen(want);
        while (want[n - 1] == '0' && want[n - 2] != '.') want[--n] = '\0';
        ck_assert_str_eq(buf, want);
    }
}
END_TEST

START_TEST(float_text_ignores_locale)
{
    /* a host that calls setlocale() may get "," as the decimal point; value text is always
     * C. Needs a comma locale installed (or LOCPATH pointing at one). */
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE",
                                        "fr_FR", "nl_NL.UTF-8"};
    const char *got = NULL;
    for (size_t i = 0; !got && i < W2L_ARRAY_LEN(names); i++) got = setlocale(LC_NUMERIC, names[i]);
    if (!got) return; /* no such locale here: nothing to check */
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    ck_assert_str_eq(probe, "1,5"); /* the hazard is real in this locale */
    ck_assert_str_eq(dfmt(1.5), "1.5");
    ck_assert_str_eq(dfmt(-1234.5678e-30), "-1.2345678e-27");
    ck_assert_str_eq(ffmt(0.1f), "0.1");
    ck_assert(RT(T_DOUBLE, "1.5", "1.5").v.f64 == 1.5);
    ck_assert(RT(T_DOUBLE, "-12.25e2", "-1225.0").v.f64 == -1225.0);
    ck_assert(RT(T_FLOAT, "0.1", "0.1").v.f32 == 0.1f);
    REJ(T_DOUBLE, "1,5", "not a number");
    setlocale(LC_NUMERIC, "C");
}
END_TEST

/* ---- decimals ---- */

static w2l_int128 i128(int64_t v) { return w2l__i128_from_i64(v); }

START_TEST(decimal_text)
{
    w2l_value v = RT(dec(10, 2), "12.5", "12.50");
    ck_assert_int_eq(w2l__i128_cmp(v.v.dec, i128(1250)), 0);
    v = RT(dec(10, 2), "-5", "-5.00");
    ck_assert_int_eq(w2l__i128_cmp(v.v.dec, i128(-500)), 0);
    v = RT(dec(10, 2), "0.01", "0.01");
    ck_assert_int_eq(w2l__i128_cmp(v.v.dec, i128(1)), 0);
    RT(dec(10, 2), "-0.01", "-0.01");
    RT(dec(10, 2), "-0.00", "0.00");
    RT(dec(10, 2), ".5", "0.50");
    RT(dec(10, 2), "7.", "7.00");
    RT(dec(10, 2), "+3.14", "3.14");
    RT(dec(10, 2), "00012.30", "12.30");
    RT(dec(10, 2), "1.230000", "1.23"); /* extra fraction digits that are zeros are exact */
    RT(dec(10, 2), "1.5e2", "150.00");
    RT(dec(10, 2), "125E-2", "1.25");
    RT(dec(10, 2), "99999999.99", "99999999.99");
    RT(dec(10, 0), "1234567890", "1234567890");
    RT(dec(5, 5), "0.12345", "0.12345");
    RT(dec(1, 0), "-9", "-9");
    RT(dec(20, 0), "18446744073709551615", "18446744073709551615"); /* BIGINT UNSIGNED max */

    v = RT(dec(38, 0), "99999999999999999999999999999999999999",
           "99999999999999999999999999999999999999");
    w2l_int128 max;
    ck_assert_int_eq(w2l__i128_pow10(38, &max), 0);
    ck_assert_int_eq(w2l__i128_sub(max, i128(1), &max), 0);
    ck_assert_int_eq(w2l__i128_cmp(v.v.dec, max), 0);
    v = RT(dec(38, 0), "-99999999999999999999999999999999999999",
           "-99999999999999999999999999999999999999");
    ck_assert_int_eq(w2l__i128_cmp(v.v.dec, w2l__i128_neg(max)), 0);
    RT(dec(38, 38), "0.99999999999999999999999999999999999999",
       "0.99999999999999999999999999999999999999");
    RT(dec(38, 38), "-.1", "-0.10000000000000000000000000000000000000");
    RT(dec(38, 10), "-1234567890123456789012345678.0123456789",
       "-1234567890123456789012345678.0123456789");

    REJ(dec(10, 2), "1.235", "more fraction digits than the scale");
    REJ(dec(10, 2), "1.235", "decimal(10,2)");
    REJ(dec(10, 2), "1.235", "'1.235'");
    REJ(dec(10, 2), "1e-3", "would round");
    REJ(dec(5, 2), "1000", "more digits than the precision");
    REJ(dec(5, 2), "1e3", "precision");
    REJ(dec(38, 0), "100000000000000000000000000000000000000", "precision");
    REJ(dec(38, 0), "1e38", "precision");
    REJ(dec(10, 2), "", "not a number");
    REJ(dec(10, 2), ".", "not a number");
    REJ(dec(10, 2), "-", "not a number");
    REJ(dec(10, 2), "1.2.3", "not a number");
    REJ(dec(10, 2), "1,5", "not a number");
    REJ(dec(10, 2), "NaN", "not a number");
    REJ(dec(10, 2), "1e", "bad exponent");
    REJ(dec(10, 2), " 1", "not a number");
    RT(dec(10, 2), "0e999999999999", "0.00");
    REJ(dec(10, 2), "1e999999999999", "precision");
    RT(dec(10, 2), "0.000000000000000000000000000000000000000000000000000", "0.00");
}
END_TEST

/* Decimals beyond 38 digits as text (DECIMAL(65,30), Kafka Connect decimals). */
static void plain(const char *in, unsigned p, int sc, const char *want)
{
    char buf[W2L_DECIMAL_TEXT_MAX + 8];
    size_t n = 0;
    w2l_error err;
    w2l_rc rc = w2l__decimal_text_plain(in, strlen(in), p, sc, buf, sizeof buf, &n, &err);
    ck_assert_msg(rc == W2L_OK, "%s: %s", in, err.msg);
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(n, strlen(want));
}

static void plain_rej(const char *in, unsigned p, int sc, const char *why)
{
    char buf[W2L_DECIMAL_TEXT_MAX + 8];
    w2l_error err;
    ck_assert_int_eq(w2l__decimal_text_plain(in, strlen(in), p, sc, buf, sizeof buf, NULL, &err),
                     W2L_CORRUPT);
    char head[24];
    snprintf(head, sizeof head, "'%.20s", in); /* long texts are shown cut */
    ck_assert_msg(strstr(err.msg, why) && strstr(err.msg, head), "%s: %s", in, err.msg);
}

START_TEST(decimal_wide_text)
{
    plain("1.5E+3", 65, 30, "1500.000000000000000000000000000000");
    plain("12345e-2", 65, 2, "123.45");
    plain("+012.5", 0, 2, "12.50");
    plain("-0.0", 0, 3, "0.000");
    plain("-0.0", 0, -1, "0.0");
    plain("1.5E+3", 0, -1, "1500");
    plain("12345e-2", 0, -1, "123.45");
    plain("1.50", 0, -1, "1.50");
    plain("-.5", 0, -1, "-0.5");
    plain("1.000000000000000000000000000000000000000000000", 0, 2, "1.00");
    plain("0e999999999", 65, 30, "0.000000000000000000000000000000");
    /* 65 digits, the MySQL maximum */
    plain("-99999999999999999999999999999999999.999999999999999999999999999999", 65, 30,
          "-99999999999999999999999999999999999.999999999999999999999999999999");
    plain_rej("1.234", 10, 2, "would round");
    plain_rej("1e-400", 65, 30, "would round");
    plain_rej("1e400", 65, 30, "precision");
    plain_rej("1e400", 0, -1, "precision"); /* beyond W2L_DECIMAL_TEXT_MAX digits */
    plain_rej("1e-500", 0, -1, "scale");
    plain_rej("100000000000000000000000000000000000000000000000000000000000000000", 65, 0,
              "precision");
    plain_rej("1.2.3", 0, -1, "not a number");
    plain_rej("1e", 0, -1, "bad exponent");
    plain_rej("", 0, -1, "not a number");
    char small[4];
    w2l_error err;
    ck_assert_int_eq(w2l__decimal_text_plain("12.50", 5, 0, 2, small, sizeof small, NULL, &err),
                     W2L_MISUSE);

    /* big-endian two's complement of any width */
    char buf[W2L_DECIMAL_BE_MAX * 3 + 16];
    const unsigned char m1[] = { 0xff }, z[] = { 0x00 }, v12345[] = { 0x30, 0x39 },
                        neg1250[] = { 0xfb, 0x1e };
    ck_assert_int_eq(w2l__decimal_text_from_be(m1, 1, 0, buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "-1");
    w2l__decimal_text_from_be(z, 1, 2, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.00");
    w2l__decimal_text_from_be(v12345, 2, 3, buf, sizeof buf);
    ck_assert_str_eq(buf, "12.345");
    w2l__decimal_text_from_be(v12345, 2, 7, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.0012345");
    w2l__decimal_text_from_be(v12345, 2, -3, buf, sizeof buf);
    ck_assert_str_eq(buf, "12345000");
    w2l__decimal_text_from_be(neg1250, 2, 3, buf, sizeof buf);
    ck_assert_str_eq(buf, "-1.250");
    /* 2^128 - 1 in 17 bytes (00 ff..ff) = 340282366920938463463374607431768211455 */
    unsigned char big[17];
    memset(big, 0xff, sizeof big);
    big[0] = 0;
    w2l__decimal_text_from_be(big, 17, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "340282366920938463463374607431768211455");
    /* -2^135 = 80 00 .. 00 (17 bytes) = -43556142965880123323311949751266331066368 */
    memset(big, 0, sizeof big);
    big[0] = 0x80;
    w2l__decimal_text_from_be(big, 17, 5, buf, sizeof buf);
    ck_assert_str_eq(buf, "-435561429658801233233119497512663310.66368");
    ck_assert_int_eq(w2l__decimal_text_from_be(big, 0, 0, buf, sizeof buf), -1);
    ck_assert_int_eq(w2l__decimal_text_from_be(big, 17, 0, buf, 8), -1);
}
END_TEST

START_TEST(int128_arithmetic)
{
    w2l_int128 r, p10;
    /* the power table agrees with repeated multiplication */
    w2l_int128 acc = i128(1);
    for (unsigned n = 0; n <= 38; n++) {
        ck_assert_int_eq(w2l__i128_pow10(n, &p10), 0);
        ck_assert_int_eq(w2l__i128_cmp(p10, acc), 0);
        ck_assert_uint_eq(w2l__i128_digits(p10), n + 1);
        w2l_int128 m1;
        ck_assert_int_eq(w2l__i128_sub(p10, i128(1), &m1), 0);
        ck_assert_uint_eq(w2l__i128_digits(m1), n ? n : 1);
        ck_assert_uint_eq(w2l__i128_digits(w2l__i128_neg(m1)), n ? n : 1);
        if (n < 38) ck_assert_int_eq(w2l__i128_mul(acc, i128(10), &acc), 0);
    }
    ck_assert_int_eq(w2l__i128_pow10(39, &p10), -1);

    w2l_int128 big = {UINT64_MAX, INT64_MAX}, small = {0, INT64_MIN};
    ck_assert_int_eq(w2l__i128_add(big, i128(1), &r), -1);
    ck_assert_int_eq(w2l__i128_sub(small, i128(1), &r), -1);
    ck_assert_int_eq(w2l__i128_add(small, i128(-1), &r), -1);
    ck_assert_int_eq(w2l__i128_sub(big, i128(-1), &r), -1);
    ck_assert_int_eq(w2l__i128_add(big, small, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-1)), 0);
    ck_assert_int_eq(w2l__i128_add(i128(-5), i128(3), &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-2)), 0);
    ck_assert_int_eq(w2l__i128_add(i128(INT64_MAX), i128(INT64_MAX), &r), 0); /* carries */
    ck_assert_int_eq(r.hi, 0);
    ck_assert_uint_eq(r.lo, UINT64_MAX - 1);
    ck_assert_int_eq(w2l__i128_sub(i128(0), i128(1), &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-1)), 0);

    ck_assert_int_eq(w2l__i128_mul(i128(INT64_MIN), i128(INT64_MIN), &r), 0); /* 2^126 */
    ck_assert_int_eq(r.hi, INT64_C(1) << 62);
    ck_assert_uint_eq(r.lo, 0);
    ck_assert_int_eq(w2l__i128_mul(r, i128(2), &r), -1);          /* 2^127 overflows */
    ck_assert_int_eq(w2l__i128_mul(i128(INT64_MIN), i128(INT64_MIN), &r), 0);
    ck_assert_int_eq(w2l__i128_mul(r, i128(-2), &r), 0);          /* -2^127 fits */
    ck_assert_int_eq(w2l__i128_cmp(r, small), 0);
    ck_assert_int_eq(w2l__i128_mul(small, i128(-1), &r), -1);
    ck_assert_int_eq(w2l__i128_mul(i128(-3), i128(7), &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-21)), 0);
    ck_assert_int_eq(w2l__i128_mul(i128(-3), i128(0), &r), 0);
    ck_assert(w2l__i128_is_zero(r) && !w2l__i128_is_neg(r));
    ck_assert_int_eq(w2l__i128_mul(big, big, &r), -1);
    ck_assert_int_eq(w2l__i128_mul(i128(UINT32_MAX), (w2l_int128){0, 1}, &r), 0); /* cross term */
    ck_assert_int_eq(r.hi, (int64_t)UINT32_MAX);
    ck_assert_uint_eq(r.lo, 0);

    ck_assert_int_lt(w2l__i128_cmp(small, big), 0);
    ck_assert_int_lt(w2l__i128_cmp(i128(-1), i128(0)), 0);
    ck_assert_int_gt(w2l__i128_cmp((w2l_int128){0, 1}, i128(INT64_MAX)), 0);

    int64_t out;
    ck_assert_int_eq(w2l__i128_to_i64(i128(INT64_MIN), &out), 0);
    ck_assert_int_eq(out, INT64_MIN);
    ck_assert_int_eq(w2l__i128_to_i64(i128(-7), &out), 0);
    ck_assert_int_eq(out, -7);
    ck_assert_int_eq(w2l__i128_to_i64((w2l_int128){UINT64_C(1) << 63, 0}, &out), -1);
    ck_assert_int_eq(w2l__i128_to_i64((w2l_int128){0, -1}, &out), -1);

    ck_assert(w2l__decimal_fits(i128(99999), 5));
    ck_assert(w2l__decimal_fits(i128(-99999), 5));
    ck_assert(!w2l__decimal_fits(i128(100000), 5));
    ck_assert(!w2l__decimal_fits(i128(-100000), 5));

    ck_assert_int_eq(w2l__decimal_rescale(i128(125), 2, 4, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(12500)), 0);
    ck_assert_int_eq(w2l__decimal_rescale(i128(-12500), 4, 2, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-125)), 0);
    ck_assert_int_eq(w2l__decimal_rescale(i128(12501), 4, 2, &r), -1);
    ck_assert_int_eq(w2l__decimal_rescale(i128(1), 0, 38, &r), -1);
    ck_assert_int_eq(w2l__decimal_rescale(i128(1), 0, 37, &r), 0);
    ck_assert_int_eq(w2l__decimal_rescale(r, 37, 0, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(1)), 0);
    ck_assert_int_eq(w2l__decimal_rescale(i128(0), 0, 60, &r), 0);

    char buf[64];
    ck_assert_uint_eq(w2l__decimal_format(small, 0, buf, sizeof buf), 40);
    ck_assert_str_eq(buf, "-170141183460469231731687303715884105728");
    ck_assert_uint_eq(w2l__decimal_format(big, 38, buf, sizeof buf), 40);
    ck_assert_str_eq(buf, "1.70141183460469231731687303715884105727");
    ck_assert_uint_eq(w2l__decimal_format(i128(-1), 3, buf, 4), 6); /* truncated as snprintf */
    ck_assert_str_eq(buf, "-0.");
}
END_TEST

static void be_case(int64_t v, const char *hex)
{
    unsigned char b[16], back[16];
    size_t n = w2l__decimal_to_be_min(i128(v), b);
    char got[40] = "";
    for (size_t i = 0; i < n; i++) sprintf(got + 2 * i, "%02x", b[i]);
    ck_assert_msg(strcmp(got, hex) == 0, "%lld -> %s, want %s", (long long)v, got, hex);
    w2l_int128 r;
    ck_assert_int_eq(w2l__decimal_from_be(b, n, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(v)), 0);
    (void)back;
}

START_TEST(decimal_bytes)
{
    be_case(0, "00");
    be_case(1, "01");
    be_case(-1, "ff");
    be_case(127, "7f");
    be_case(128, "0080");
    be_case(-128, "80");
    be_case(-129, "ff7f");
    be_case(255, "00ff");
    be_case(256, "0100");
    be_case(12345, "3039");
    be_case(-12345, "cfc7");
    be_case(INT64_MAX, "7fffffffffffffff");
    be_case(INT64_MIN, "8000000000000000");
    be_case((int64_t)UINT32_MAX, "00ffffffff");

    unsigned char b[16];
    w2l_int128 max = {UINT64_MAX, INT64_MAX}, min = {0, INT64_MIN}, r;
    ck_assert_uint_eq(w2l__decimal_to_be_min(max, b), 16);
    ck_assert_uint_eq(b[0], 0x7f);
    ck_assert_int_eq(w2l__decimal_from_be(b, 16, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, max), 0);
    ck_assert_uint_eq(w2l__decimal_to_be_min(min, b), 16);
    ck_assert_uint_eq(b[0], 0x80);

    unsigned char f[16];
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(12345), f, 5), 0);
    ck_assert_mem_eq(f, "\x00\x00\x00\x30\x39", 5);
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(-2), f, 4), 0);
    ck_assert_mem_eq(f, "\xff\xff\xff\xfe", 4);
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(128), f, 1), -1);
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(-128), f, 1), 0);
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(1), f, 0), -1);
    ck_assert_int_eq(w2l__decimal_to_be_fixed(i128(1), f, 17), -1);
    ck_assert_int_eq(w2l__decimal_from_be(f, 0, &r), -1);
    ck_assert_int_eq(w2l__decimal_from_be((const unsigned char *)"\xfe", 1, &r), 0);
    ck_assert_int_eq(w2l__i128_cmp(r, i128(-2)), 0);

    /* Parquet's table: bytes for precision 1..38 */
    static const unsigned char want[39] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 6,
                                           6, 6, 7, 7, 8, 8, 9, 9, 9, 10, 10, 11, 11,
                                           11, 12, 12, 13, 13, 13, 14, 14, 15, 15, 16, 16, 16};
    for (unsigned p = 1; p <= 38; p++)
        ck_assert_msg(w2l__decimal_fixed_len(p) == want[p], "precision %u: %zu bytes", p,
                      w2l__decimal_fixed_len(p));
}
END_TEST

static void bytes_case(w2l_type t, const char *text, const char *hex)
{
    w2l_value v, back;
    w2l_error err;
    ck_assert_ok(w2l_value_parse(t, text, strlen(text), &v, &err), err); /* bytes borrow text */
    unsigned char b[32];
    size_t n = w2l__value_to_bytes(t, &v, b, sizeof b);
    char got[80] = "";
    for (size_t i = 0; i < n && i < sizeof b; i++) sprintf(got + 2 * i, "%02x", b[i]);
    ck_assert_msg(strcmp(got, hex) == 0, "%s -> %s, want %s", text, got, hex);
    ck_assert_uint_eq(w2l__value_to_bytes(t, &v, NULL, 0), n); /* measure only */
    ck_assert_ok(w2l__value_from_bytes(t, b, n, &back, &err), err);
    ck_assert_int_eq(w2l_value_compare(t, &v, &back), 0);
}

START_TEST(single_value_bytes)
{
    bytes_case(T_BOOL, "true", "01");
    bytes_case(T_BOOL, "false", "00");
    bytes_case(T_INT, "1", "01000000");
    bytes_case(T_INT, "-2", "feffffff");
    bytes_case(T_DATE, "1970-01-02", "01000000");
    bytes_case(T_DATE, "1969-12-31", "ffffffff");
    bytes_case(T_LONG, "-9223372036854775808", "0000000000000080");
    bytes_case(T_TIME, "00:00:01", "40420f0000000000");
    bytes_case(T_TS, "1970-01-01T00:00:00.000001", "0100000000000000");
    bytes_case(T_TSTZ, "1969-12-31T23:59:59.999999Z", "ffffffffffffffff");
    bytes_case(T_FLOAT, "1.0", "0000803f");
    bytes_case(T_FLOAT, "-0.0", "00000080");
    bytes_case(T_DOUBLE, "1.0", "000000000000f03f");
    bytes_case(T_DOUBLE, "-Infinity", "000000000000f0ff");
    bytes_case(dec(9, 2), "-1.28", "80");
    bytes_case(dec(9, 2), "1.28", "0080");
    bytes_case(dec(38, 0), "99999999999999999999999999999999999999",
               "4b3b4ca85a86c47a098a223fffffffff");
    bytes_case(T_STRING, "h\xc3\xa9", "68c3a9");
    bytes_case(T_BINARY, "", "");

    w2l_value v;
    w2l_error err;
    unsigned char b[16] = {0};
    ck_assert_int_eq(w2l__value_from_bytes(T_LONG, b, 4, &v, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "long") && strstr(err.msg, "need 8"), "%s", err.msg);
    ck_assert_int_eq(w2l__value_from_bytes(dec(9, 2), b, 17, &v, &err), W2L_CORRUPT);
    ck_assert_int_eq(w2l__value_from_bytes(dec(9, 2), b, 0, &v, &err), W2L_CORRUPT);
    ck_assert_int_eq(w2l__value_from_bytes(T_BOOL, b, 2, &v, &err), W2L_CORRUPT);
    const char *long_text = "a string longer than the buffer";
    ck_assert_ok(w2l_value_parse(T_STRING, long_text, strlen(long_text), &v, &err), err);
    memset(b, 0x55, sizeof b);
    ck_assert_uint_eq(w2l__value_to_bytes(T_STRING, &v, b, sizeof b), strlen(long_text));
    ck_assert_uint_eq(b[0], 0x55); /* not written when it does not fit */
}
END_TEST

/* ---- dates and times ---- */

START_TEST(date_text)
{
    ck_assert_int_eq(RT(T_DATE, "1970-01-01", "1970-01-01").v.i32, 0);
    ck_assert_int_eq(RT(T_DATE, "0001-01-01", "0001-01-01").v.i32, -719162);
    ck_assert_int_eq(RT(T_DATE, "1969-12-31", "1969-12-31").v.i32, -1);
    ck_assert_int_eq(RT(T_DATE, "1900-03-01", "1900-03-01").v.i32, -25508);
    ck_assert_int_eq(RT(T_DATE, "1900-02-28", "1900-02-28").v.i32, -25509);
    ck_assert_int_eq(RT(T_DATE, "2000-02-29", "2000-02-29").v.i32, 11016);
    ck_assert_int_eq(RT(T_DATE, "2024-02-29", "2024-02-29").v.i32, 19782);
    ck_assert_int_eq(RT(T_DATE, "2262-04-12", "2262-04-12").v.i32, 106752);
    ck_assert_int_eq(RT(T_DATE, "9999-12-31", "9999-12-31").v.i32, 2932896);
    ck_assert_int_eq(RT(T_DATE, "1582-10-04", "1582-10-04").v.i32, -141438); /* proleptic */
    ck_assert_int_eq(RT(T_DATE, "1582-10-15", "1582-10-15").v.i32, -141427);
    ck_assert_int_eq(RT(T_DATE, "+10000-01-01", "+10000-01-01").v.i32, 2932897);
    RT(T_DATE, "0000-03-01", "0000-03-01");
    RT(T_DATE, "-0001-12-31", "-0001-12-31");
    RT(T_DATE, "+2024-02-29", "2024-02-29");

    REJ(T_DATE, "1900-02-29", "day out of range");
    REJ(T_DATE, "2023-02-29", "invalid date value '2023-02-29'");
    REJ(T_DATE, "2024-04-31", "day out of range");
    REJ(T_DATE, "2024-13-01", "month out of range");
    REJ(T_DATE, "2024-00-10", "month out of range");
    REJ(T_DATE, "2024-01-00", "day out of range");
    REJ(T_DATE, "24-01-01", "year");
    REJ(T_DATE, "12024-01-01", "year");
    REJ(T_DATE, "2024-1-01", "YYYY-MM-DD");
    REJ(T_DATE, "2024/01/01", "YYYY-MM-DD");
    REJ(T_DATE, "2024-01-01T00:00", "date");
    REJ(T_DATE, "2024-01-0", "YYYY-MM-DD");
    REJ(T_DATE, "", "date");
    REJ(T_DATE, "+9999999-01-01", "out of range"); /* beyond int32 days */

    /* the extremes of the int32 day range print and read back */
    w2l_value v = {0};
    char buf[64];
    w2l_error err;
    v.v.i32 = INT32_MAX;
    w2l_value_format(T_DATE, &v, buf, sizeof buf);
    ck_assert_str_eq(buf, "+5881580-07-11");
    w2l_value back;
    ck_assert_ok(parse(T_DATE, buf, &back, &err), err);
    ck_assert_int_eq(back.v.i32, INT32_MAX);
    v.v.i32 = INT32_MIN;
    w2l_value_format(T_DATE, &v, buf, sizeof buf);
    ck_assert_str_eq(buf, "-5877641-06-23");
    ck_assert_ok(parse(T_DATE, buf, &back, &err), err);
    ck_assert_int_eq(back.v.i32, INT32_MIN);
}
END_TEST

START_TEST(civil_days_every_day)
{
    /* from 1000 BC to AD 12000 every day is one more than the day before, and the
     * conversions invert each other */
    int64_t y0;
    unsigned m0, d0;
    int64_t first = w2l__days_from_civil(-1000, 1, 1);
    w2l__civil_from_days(first, &y0, &m0, &d0);
    ck_assert(y0 == -1000 && m0 == 1 && d0 == 1);
    int64_t last = w2l__days_from_civil(12000, 12, 31);
    for (int64_t z = first + 1; z <= last; z++) {
        int64_t y;
        unsigned m, d;
        w2l__civil_from_days(z, &y, &m, &d);
        int next; /* plain ifs: a Check assertion per day would dominate the run time */
        if (d0 < w2l__days_in_month(y0, m0)) next = y == y0 && m == m0 && d == d0 + 1;
        else if (m0 < 12) next = y == y0 && m == m0 + 1 && d == 1;
        else next = y == y0 + 1 && m == 1 && d == 1;
        if (!next || w2l__days_from_civil(y, m, d) != z)
            ck_abort_msg("day %lld: %lld-%u-%u after %lld-%u-%u", (long long)z, (long long)y, m,
                         d, (long long)y0, m0, d0);
        y0 = y, m0 = m, d0 = d;
    }
    ck_assert(w2l__is_leap_year(2000) && w2l__is_leap_year(2024) && w2l__is_leap_year(0));
    ck_assert(!w2l__is_leap_year(1900) && !w2l__is_leap_year(2023) && !w2l__is_leap_year(2100));
    ck_assert_uint_eq(w2l__days_in_month(2024, 2), 29);
    ck_assert_uint_eq(w2l__days_in_month(2023, 2), 28);
    ck_assert_uint_eq(w2l__days_in_month(2023, 13), 0);
    ck_assert_int_eq(w2l__floor_div(-1, 86400), -1);
    ck_assert_int_eq(w2l__floor_mod(-1, 86400), 86399);
    ck_assert_int_eq(w2l__floor_div(-86400, 86400), -1);
    ck_assert_int_eq(w2l__floor_mod(-86400, 86400), 0);
    ck_assert_int_eq(w2l__floor_div(INT64_MIN, W2L_MICROS_PER_DAY), -106751992);
    ck_assert_int_eq(w2l__floor_mod(INT64_MIN, W2L_MICROS_PER_DAY), INT64_C(71945224192));
}
END_TEST

START_TEST(time_text)
{
    ck_assert_int_eq(RT(T_TIME, "00:00:00", "00:00:00.000000").v.i64, 0);
    ck_assert_int_eq(RT(T_TIME, "23:59:59.999999", "23:59:59.999999").v.i64,
                     INT64_C(86399999999));
    ck_assert_int_eq(RT(T_TIME, "23:59:59.000001", "23:59:59.000001").v.i64,
                     INT64_C(86399000001));
    ck_assert_int_eq(RT(T_TIME, "12:00", "12:00:00.000000").v.i64, INT64_C(43200000000));
    ck_assert_int_eq(RT(T_TIME, "12:00:00.5", "12:00:00.500000").v.i64, INT64_C(43200500000));
    ck_assert_int_eq(RT(T_TIME, "01:02:03.123456000", "01:02:03.123456").v.i64,
                     INT64_C(3723123456));
    REJ(T_TIME, "01:02:03.1234567", "more than 6 fraction digits");
    REJ(T_TIME, "24:00:00", "out of range");
    REJ(T_TIME, "12:60:00", "out of range");
    REJ(T_TIME, "12:00:60", "out of range");
    REJ(T_TIME, "1:00:00", "HH:MM:SS");
    REJ(T_TIME, "12:00:00.", "fraction");
    REJ(T_TIME, "12:00:00Z", "invalid time value '12:00:00Z'");
    REJ(T_TIME, "12", "HH:MM:SS");
    REJ(T_TIME, "", "time");

    char buf[64];
    w2l_value v = {0};
    v.v.i64 = -1; /* not a valid time: still printed without harm */
    ck_assert_uint_eq(w2l_value_format(T_TIME, &v, buf, sizeof buf), strlen(buf));
    ck_assert_str_eq(buf, "-00:00:00.000001");
    v.v.i64 = INT64_MIN;
    ck_assert_uint_eq(w2l_value_format(T_TIME, &v, buf, sizeof buf), strlen(buf));
}
END_TEST

START_TEST(timestamp_text)
{
    ck_assert_int_eq(RT(T_TS, "1970-01-01T00:00:00", "1970-01-01T00:00:00.000000").v.i64, 0);
    ck_assert_int_eq(RT(T_TS, "1969-12-31T23:59:59.999999", "1969-12-31T23:59:59.999999").v.i64,
                     -1);
    ck_assert_int_eq(RT(T_TS, "1900-01-01 00:00:00.000001", "1900-01-01T00:00:00.000001").v.i64,
                     INT64_C(-2208988799999999));
    ck_assert_int_eq(RT(T_TS, "2024-02-29 12:00:00.5", "2024-02-29T12:00:00.500000").v.i64,
                     INT64_C(1709208000500000));
    ck_assert_int_eq(RT(T_TS, "2024-02-29", "2024-02-29T00:00:00.000000").v.i64,
                     INT64_C(1709164800000000));
    ck_assert_int_eq(RT(T_TS, "0001-01-01T00:00:00", "0001-01-01T00:00:00.000000").v.i64,
                     INT64_C(-62135596800000000));
    ck_assert_int_eq(RT(T_TS, "9999-12-31T23:59:59.999999", "9999-12-31T23:59:59.999999").v.i64,
                     INT64_C(253402300799999999));
    ck_assert_int_eq(RT(T_TS, "1677-09-21T00:12:43.145224", "1677-09-21T00:12:43.145224").v.i64,
                     INT64_C(-9223372036854776));
    RT(T_TS, "2262-04-12t00:00:00", "2262-04-12T00:00:00.000000");
    REJ(T_TS, "2024-01-01T00:00:00Z", "needs timestamptz");
    REJ(T_TS, "2024-01-01T00:00:00+00:00", "needs timestamptz");
    REJ(T_TS, "2024-01-01T", "HH:MM:SS");
    REJ(T_TS, "2024-01-01X00:00:00", "unexpected text");
    REJ(T_TS, "2023-02-29T00:00:00", "invalid timestamp value '2023-02-29T00:00:00'");
    REJ(T_TS, "2024-01-01T25:00:00", "out of range");

    /* the whole int64 range prints and reads back */
    static const int64_t edge[] = { INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1,
                                    -86400000001 };
    for (size_t i = 0; i < W2L_ARRAY_LEN(edge); i++) {
        w2l_value v = {0}, back;
        v.v.i64 = edge[i];
        char buf[64];
        w2l_error err;
        for (int tz = 0; tz < 2; tz++) {
            w2l_type t = tz ? T_TSTZ : T_TS;
            w2l_value_format(t, &v, buf, sizeof buf);
            ck_assert_msg(parse(t, buf, &back, &err) == W2L_OK, "%s: %s", buf, err.msg);
            ck_assert_int_eq(back.v.i64, edge[i]);
        }
    }
    w2l_value v = {0};
    char buf[64];
    v.v.i64 = INT64_MIN;
    w2l_value_format(T_TS, &v, buf, sizeof buf);
    ck_assert_str_eq(buf, "-290308-12-21T19:59:05.224192");
    v.v.i64 = INT64_MAX;
    w2l_value_format(T_TSTZ, &v, buf, sizeof buf);
    ck_assert_str_eq(buf, "+294247-01-10T04:00:54.775807+00:00");
    REJ(T_TS, "+294247-01-10T04:00:54.775808", "out of range");
    REJ(T_TS, "-290308-12-21T19:59:05.224191", "out of range");
    REJ(T_TS, "+999999-01-01T00:00:00", "out of range");
}
END_TEST

START_TEST(timestamptz_text)
{
    ck_assert_int_eq(RT(T_TSTZ, "2024-02-29T12:00:00.5+00:00",
                        "2024-02-29T12:00:00.500000+00:00").v.i64,
                     INT64_C(1709208000500000));
    ck_assert_int_eq(RT(T_TSTZ, "2024-02-29T12:00:00+05:30", "2024-02-29T06:30:00.000000+00:00")
                         .v.i64,
                     INT64_C(1709188200000000));
    RT(T_TSTZ, "2024-02-29T12:00:00+0530", "2024-02-29T06:30:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29T12:00:00+05", "2024-02-29T07:00:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29T12:00:00-08:00", "2024-02-29T20:00:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29T12:00:00Z", "2024-02-29T12:00:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29 12:00:00z", "2024-02-29T12:00:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29 12:00:00", "2024-02-29T12:00:00.000000+00:00"); /* no zone: UTC */
    RT(T_TSTZ, "2024-01-01T00:30:00+01:00", "2023-12-31T23:30:00.000000+00:00");
    RT(T_TSTZ, "2023-12-31T23:30:00-01:00", "2024-01-01T00:30:00.000000+00:00");
    RT(T_TSTZ, "1969-12-31T23:59:59.999999-00:00", "1969-12-31T23:59:59.999999+00:00");
    RT(T_TSTZ, "1900-03-01T01:00:00+18:00", "1900-02-28T07:00:00.000000+00:00");
    RT(T_TSTZ, "2024-02-29+02:00", "2024-02-28T22:00:00.000000+00:00");
    REJ(T_TSTZ, "2024-02-29T12:00:00+19:00", "zone offset out of range");
    REJ(T_TSTZ, "2024-02-29T12:00:00+05:60", "zone offset out of range");
    REJ(T_TSTZ, "2024-02-29T12:00:00+5", "bad zone offset");
    REJ(T_TSTZ, "2024-02-29T12:00:00+05:3", "bad zone offset");
    REJ(T_TSTZ, "2024-02-29T12:00:00Z+01:00", "after the zone");
    REJ(T_TSTZ, "2024-02-29T12:00:00 UTC", "timestamptz");
}
END_TEST

/* ---- strings, binary, format buffers ---- */

START_TEST(string_and_binary)
{
    const char text[] = "h\xc3\xa9llo\0x";
    w2l_value v;
    w2l_error err;
    ck_assert_ok(w2l_value_parse(T_STRING, text, 8, &v, &err), err);
    ck_assert_ptr_eq(v.v.bytes.ptr, text); /* borrowed, not copied */
    ck_assert_uint_eq(v.v.bytes.len, 8);
    char buf[32];
    ck_assert_uint_eq(w2l_value_format(T_STRING, &v, buf, sizeof buf), 8);
    ck_assert_mem_eq(buf, text, 8);
    ck_assert_ok(w2l_value_parse(T_STRING, "", 0, &v, &err), err);
    ck_assert_uint_eq(v.v.bytes.len, 0);
    ck_assert_ok(w2l_value_parse(T_STRING, NULL, 0, &v, &err), err);
    ck_assert_uint_eq(w2l_value_format(T_STRING, &v, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(w2l_value_parse(T_STRING, NULL, 3, &v, &err), W2L_MISUSE);

    const char raw[] = "\x00\xff\x7f\x10";
    ck_assert_ok(w2l_value_parse(T_BINARY, raw, 4, &v, &err), err);
    ck_assert_ptr_eq(v.v.bytes.ptr, raw);
    ck_assert_uint_eq(w2l_value_format(T_BINARY, &v, buf, sizeof buf), 8);
    ck_assert_str_eq(buf, "00ff7f10");
    ck_assert_uint_eq(w2l_value_format(T_BINARY, &v, buf, 4), 8); /* truncated */
    ck_assert_str_eq(buf, "00f");
    ck_assert_uint_eq(w2l_value_format(T_BINARY, &v, buf, 5), 8);
    ck_assert_str_eq(buf, "00ff");
    ck_assert_uint_eq(w2l_value_format(T_BINARY, &v, NULL, 0), 8);
}
END_TEST

START_TEST(format_measures_like_snprintf)
{
    w2l_value v = {0};
    char buf[8];
    v.v.i64 = INT64_MIN;
    ck_assert_uint_eq(w2l_value_format(T_LONG, &v, NULL, 0), 20);
    ck_assert_uint_eq(w2l_value_format(T_LONG, &v, buf, sizeof buf), 20);
    ck_assert_str_eq(buf, "-922337");
    v.v.i64 = 0;
    ck_assert_uint_eq(w2l_value_format(T_TSTZ, &v, buf, sizeof buf), 32);
    ck_assert_str_eq(buf, "1970-01");
    ck_assert_uint_eq(w2l_value_format(T_DATE, &v, buf, 1), 10);
    ck_assert_str_eq(buf, "");
    v.v.f64 = 0.1;
    ck_assert_uint_eq(w2l_value_format(T_DOUBLE, &v, buf, 2), 3);
    ck_assert_str_eq(buf, "0");
    v.is_null = 1;
    ck_assert_uint_eq(w2l_value_format(T_DOUBLE, &v, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "null");
    ck_assert_uint_eq(w2l_value_format(T_STRING, &v, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "null");
    v.is_null = 0;
    v.v.i32 = 5;
    ck_assert_uint_eq(w2l_value_format(T_BOOL, &v, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "true");

    w2l_error err;
    w2l_type bad = {(w2l_type_id)99, 0, 0};
    ck_assert_int_eq(w2l_value_parse(bad, "1", 1, &v, &err), W2L_MISUSE);
    ck_assert_int_eq(w2l_value_parse(dec(39, 0), "1", 1, &v, &err), W2L_MISUSE);
}
END_TEST

/* ---- order ---- */

/* Parses texts in order and checks each sorts strictly before the next (and antisymmetry). */
static void ascending(w2l_type t, const char *const *texts, size_t n)
{
    w2l_value *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        w2l_error err;
        if (strcmp(texts[i], "<null>") == 0) v[i].is_null = 1;
        else ck_assert_msg(w2l_value_parse(t, texts[i], strlen(texts[i]), &v[i], &err) == W2L_OK,
                           "%s: %s", texts[i], err.msg);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = w2l_value_compare(t, &v[i], &v[j]);
            int want = i < j ? -1 : i > j ? 1 : 0;
            ck_assert_msg((c > 0) - (c < 0) == want, "%s vs %s: %d", texts[i], texts[j], c);
        }
    free(v);
}

START_TEST(compare_orders)
{
    static const char *const d[] = {"<null>", "-Infinity", "-1e308", "-1", "-5e-324", "-0.0",
                                    "0.0", "5e-324", "1", "1e308", "Infinity", "NaN"};
    ascending(T_DOUBLE, d, W2L_ARRAY_LEN(d));
    static const char *const f[] = {"<null>", "-Infinity", "-3.5", "-0.0", "0.0", "0.1",
                                    "Infinity", "NaN"};
    ascending(T_FLOAT, f, W2L_ARRAY_LEN(f));
    static const char *const l[] = {"<null>", "-9223372036854775808", "-1", "0",
                                    "9223372036854775807"};
    ascending(T_LONG, l, W2L_ARRAY_LEN(l));
    static const char *const i[] = {"<null>", "-2147483648", "0", "2147483647"};
    ascending(T_INT, i, W2L_ARRAY_LEN(i));
    static const char *const b[] = {"<null>", "false", "true"};
    ascending(T_BOOL, b, W2L_ARRAY_LEN(b));
    static const char *const s[] = {"<null>", "", "A", "Z", "a", "ab", "b", "\x7f", "\xc3\xa9",
                                    "\xff"};
    ascending(T_STRING, s, W2L_ARRAY_LEN(s));
    ascending(T_BINARY, s, W2L_ARRAY_LEN(s));
    static const char *const dc[] = {"<null>", "-99999999999999999999.999999999999999999",
                                     "-18446744073709551616", "-1", "-0.000000000000000001",
                                     "0", "0.000000000000000001", "18446744073709551615",
                                     "18446744073709551616",
                                     "99999999999999999999.999999999999999999"};
    ascending(dec(38, 18), dc, W2L_ARRAY_LEN(dc));
    static const char *const di[] = {"-99999999999999999999999999999999999999", "-1", "0",
                                     "99999999999999999999999999999999999999"};
    ascending(dec(38, 0), di, W2L_ARRAY_LEN(di));
    static const char *const dt[] = {"<null>", "0001-01-01", "1900-03-01", "1969-12-31",
                                     "1970-01-01", "9999-12-31"};
    ascending(T_DATE, dt, W2L_ARRAY_LEN(dt));
    static const char *const tz[] = {"1969-12-31T23:59:59.999999", "2024-01-01T00:30:00+01:00",
                                     "2024-01-01T00:00:00"};
    ascending(T_TSTZ, tz, W2L_ARRAY_LEN(tz));
    static const char *const tm[] = {"00:00:00", "00:00:00.000001", "23:59:59.999999"};
    ascending(T_TIME, tm, W2L_ARRAY_LEN(tm));

    /* NaNs of either sign are equal to each other, and both NULLs equal */
    w2l_value a = {0}, c = {0};
    a.v.f64 = NAN;
    c.v.f64 = -NAN;
    ck_assert_int_eq(w2l_value_compare(T_DOUBLE, &a, &c), 0);
    a.is_null = c.is_null = 1;
    ck_assert_int_eq(w2l_value_compare(T_DOUBLE, &a, &c), 0);
    ck_assert_int_eq(w2l_value_compare(T_DOUBLE, NULL, &c), 0);
}
END_TEST

/* ---- schemas ---- */

static w2l_schema *orders_schema(void)
{
    w2l_schema *s = w2l_schema_new(3);
    ck_assert_ptr_nonnull(s);
    w2l_error err;
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", T_LONG, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 2, "customer", T_STRING, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 7, "total", dec(12, 2), 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 4, "placed_at", T_TSTZ, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 5, "region", T_INT, 1, &err), err);
    int32_t ids[] = {5, 1};
    ck_assert_ok(w2l_schema_set_identifier(s, ids, 2, &err), err);
    return s;
}

START_TEST(schema_fields_and_lookup)
{
    w2l_schema *s = orders_schema();
    ck_assert_int_eq(w2l_schema_id(s), 3);
    ck_assert_uint_eq(w2l_schema_field_count(s), 5);
    ck_assert_int_eq(w2l_schema_max_field_id(s), 7);
    const w2l_field *f = w2l_schema_field(s, 2);
    ck_assert_int_eq(f->id, 7);
    ck_assert_str_eq(f->name, "total");
    ck_assert_int_eq(f->type.id, W2L_TYPE_DECIMAL);
    ck_assert_uint_eq(f->type.precision, 12);
    ck_assert_int_eq(f->required, 1);
    ck_assert_ptr_null(w2l_schema_field(s, 5));
    ck_assert_int_eq(w2l_schema_index_of_id(s, 7), 2);
    ck_assert_int_eq(w2l_schema_index_of_id(s, 3), -1);
    ck_assert_int_eq(w2l_schema_index_of_id(s, 0), -1);
    ck_assert_int_eq(w2l_schema_index_of_name(s, "placed_at"), 3);
    ck_assert_int_eq(w2l_schema_index_of_name(s, "Placed_At"), -1); /* exact */
    ck_assert_int_eq(w2l_schema_index_of_name(s, "nope"), -1);
    size_t n;
    const int32_t *ids = w2l_schema_identifier(s, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(ids[0], 5);
    ck_assert_int_eq(ids[1], 1);

    /* the name is copied */
    char name[] = "note";
    w2l_error err;
    ck_assert_ok(w2l_schema_add_field(s, 9, name, T_STRING, 0, &err), err);
    name[0] = 'X';
    ck_assert_str_eq(w2l_schema_field(s, 5)->name, "note");
    ck_assert_int_eq(w2l_schema_index_of_name(s, "note"), 5);
    w2l_schema_unref(s);

    w2l_schema *e = w2l_schema_new(0);
    ck_assert_int_eq(w2l_schema_max_field_id(e), 0);
    ck_assert_int_eq(w2l_schema_index_of_id(e, 1), -1);
    ck_assert_int_eq(w2l_schema_index_of_name(e, "x"), -1);
    ids = w2l_schema_identifier(e, &n);
    ck_assert_uint_eq(n, 0);
    w2l_schema_unref(e);
    w2l_schema_unref(NULL);
}
END_TEST

START_TEST(schema_rejects)
{
    w2l_schema *s = orders_schema();
    w2l_error err;
    ck_assert_int_eq(w2l_schema_add_field(s, 1, "other", T_INT, 0, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "id 1") && strstr(err.msg, "'id'"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_add_field(s, 8, "customer", T_INT, 0, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "'customer'") && strstr(err.msg, "name"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_add_field(s, 0, "zero", T_INT, 0, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "< 1"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_add_field(s, -4, "neg", T_INT, 0, &err), W2L_SCHEMA);
    ck_assert_int_eq(w2l_schema_add_field(s, 8, "", T_INT, 0, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "empty name"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_add_field(s, 8, "d", dec(40, 0), 0, &err), W2L_SCHEMA);
    ck_assert_int_eq(w2l_schema_add_field(s, 8, NULL, T_INT, 0, &err), W2L_MISUSE);
    ck_assert_uint_eq(w2l_schema_field_count(s), 5); /* nothing was added */

    int32_t missing[] = {1, 99}, optional[] = {2}, twice[] = {1, 1};
    ck_assert_int_eq(w2l_schema_set_identifier(s, missing, 2, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "99"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_set_identifier(s, optional, 1, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "'customer'") && strstr(err.msg, "required"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_set_identifier(s, twice, 2, &err), W2L_SCHEMA);
    ck_assert_int_eq(w2l_schema_set_identifier(s, NULL, 1, &err), W2L_MISUSE);
    size_t n;
    w2l_schema_identifier(s, &n);
    ck_assert_uint_eq(n, 2); /* unchanged by the failures */
    ck_assert_ok(w2l_schema_add_field(s, 10, "score", T_DOUBLE, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 11, "ratio", T_FLOAT, 1, &err), err);
    int32_t dbl[] = {10}, flt[] = {11};
    ck_assert_int_eq(w2l_schema_set_identifier(s, dbl, 1, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "'score'") && strstr(err.msg, "float or double"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_set_identifier(s, flt, 1, &err), W2L_SCHEMA);
    ck_assert_ok(w2l_schema_set_identifier(s, NULL, 0, &err), err); /* no primary key */
    w2l_schema_identifier(s, &n);
    ck_assert_uint_eq(n, 0);

    /* shared: immutable */
    ck_assert_ptr_eq(w2l_schema_ref(s), s);
    ck_assert_int_eq(w2l_schema_add_field(s, 20, "late", T_INT, 0, &err), W2L_MISUSE);
    ck_assert_int_eq(w2l_schema_set_identifier(s, dbl, 0, &err), W2L_MISUSE);
    w2l_schema_unref(s);
    ck_assert_ok(w2l_schema_add_field(s, 20, "late", T_INT, 0, &err), err); /* sole owner again */
    w2l_schema_unref(s);
}
END_TEST

START_TEST(schema_check_row)
{
    w2l_schema *s = orders_schema();
    w2l_value row[5];
    memset(row, 0, sizeof row);
    w2l_error err;
    ck_assert_ok(w2l_schema_check_row(s, row, 5, &err), err);
    row[1].is_null = 1; /* customer is optional */
    row[3].is_null = 1;
    ck_assert_ok(w2l_schema_check_row(s, row, 5, &err), err);
    ck_assert_int_eq(w2l_schema_check_row(s, row, 4, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "4 values") && strstr(err.msg, "5 fields"), "%s", err.msg);
    ck_assert_int_eq(w2l_schema_check_row(s, row, 6, &err), W2L_SCHEMA);
    row[2].is_null = 1;
    ck_assert_int_eq(w2l_schema_check_row(s, row, 5, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "'total'") && strstr(err.msg, "id 7") &&
                      strstr(err.msg, "required"),
                  "%s", err.msg);
    ck_assert_int_eq(w2l_schema_check_row(s, NULL, 5, &err), W2L_MISUSE);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(schema_thousands_of_columns)
{
    enum { N = 20000 };
    w2l_schema *s = w2l_schema_new(1);
    w2l_error err;
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "c%d", i);
        /* ids not in order, with gaps */
        ck_assert_ok(w2l_schema_add_field(s, (int32_t)((i * 7919) % N) * 3 + 1, name, T_LONG,
                                          i % 2, &err), err);
    }
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "c%d", i);
        ck_assert_int_eq(w2l_schema_index_of_name(s, name), i);
        ck_assert_int_eq(w2l_schema_index_of_id(s, (int32_t)((i * 7919) % N) * 3 + 1), i);
        ck_assert_int_eq(w2l_schema_index_of_id(s, (int32_t)((i * 7919) % N) * 3 + 2), -1);
    }
    ck_assert_int_eq(w2l_schema_max_field_id(s), (N - 1) * 3 + 1);
    char *json;
    ck_assert_ok(w2l_schema_to_json(s, &json, &err), err);
    w2l_schema *back;
    ck_assert_ok(w2l_schema_from_json(json, strlen(json), &back, &err), err);
    ck_assert_uint_eq(w2l_schema_field_count(back), N);
    ck_assert_int_eq(w2l_schema_index_of_name(back, "c12345"), 12345);
    w2l_free(json);
    w2l_schema_unref(back);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(schema_json_round_trip)
{
    w2l_schema *s = orders_schema();
    char *json;
    w2l_error err;
    ck_assert_ok(w2l_schema_to_json(s, &json, &err), err);
    ck_assert_str_eq(json,
                     "{\"type\":\"struct\",\"schema-id\":3,\"identifier-field-ids\":[5,1],"
                     "\"fields\":["
                     "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
                     "{\"id\":2,\"name\":\"customer\",\"required\":false,\"type\":\"string\"},"
                     "{\"id\":7,\"name\":\"total\",\"required\":true,\"type\":\"decimal(12,2)\"},"
                     "{\"id\":4,\"name\":\"placed_at\",\"required\":false,"
                     "\"type\":\"timestamptz\"},"
                     "{\"id\":5,\"name\":\"region\",\"required\":true,\"type\":\"int\"}]}");
    w2l_schema *back;
    ck_assert_ok(w2l_schema_from_json(json, strlen(json), &back, &err), err);
    char *again;
    ck_assert_ok(w2l_schema_to_json(back, &again, &err), err);
    ck_assert_str_eq(again, json);
    w2l_free(again);
    w2l_free(json);
    w2l_schema_unref(back);
    w2l_schema_unref(s);

    /* names that need escaping survive */
    s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "we\"ird \\ n\xc3\xa9me\n", T_BINARY, 0, &err), err);
    ck_assert_ok(w2l_schema_to_json(s, &json, &err), err);
    ck_assert_ok(w2l_schema_from_json(json, strlen(json), &back, &err), err);
    ck_assert_str_eq(w2l_schema_field(back, 0)->name, "we\"ird \\ n\xc3\xa9me\n");
    ck_assert_int_eq(w2l_schema_field(back, 0)->type.id, W2L_TYPE_BINARY);
    size_t n;
    w2l_schema_identifier(back, &n);
    ck_assert_uint_eq(n, 0);
    w2l_free(json);
    w2l_schema_unref(back);
    w2l_schema_unref(s);
}
END_TEST

/* A "schemas" entry of Iceberg table metadata as other engines write it: other key order,
 * spaces in decimal types, docs, no identifier ids. */
static const char golden_schema[] =
    "{\n"
    "  \"type\" : \"struct\",\n"
    "  \"schema-id\" : 1,\n"
    "  \"fields\" : [ {\n"
    "    \"id\" : 1, \"name\" : \"id\", \"required\" : false, \"type\" : \"int\"\n"
    "  }, {\n"
    "    \"id\" : 2, \"name\" : \"name\", \"required\" : false, \"type\" : \"string\",\n"
    "    \"doc\" : \"display name\"\n"
    "  }, {\n"
    "    \"id\" : 3, \"name\" : \"event_date\", \"required\" : false, \"type\" : \"date\"\n"
    "  }, {\n"
    "    \"name\" : \"price\", \"type\" : \"decimal(10, 2)\", \"id\" : 4, \"required\" : false\n"
    "  }, {\n"
    "    \"id\" : 5, \"name\" : \"Breed Name\", \"required\" : true, \"type\" : \"boolean\"\n"
    "  } ]\n"
    "}\n";

START_TEST(schema_json_from_iceberg_metadata)
{
    w2l_schema *s;
    w2l_error err;
    ck_assert_ok(w2l_schema_from_json(golden_schema, strlen(golden_schema), &s, &err), err);
    ck_assert_int_eq(w2l_schema_id(s), 1);
    ck_assert_uint_eq(w2l_schema_field_count(s), 5);
    const w2l_field *price = w2l_schema_field(s, (size_t)w2l_schema_index_of_name(s, "price"));
    ck_assert_int_eq(price->id, 4);
    ck_assert_int_eq(price->type.id, W2L_TYPE_DECIMAL);
    ck_assert_uint_eq(price->type.precision, 10);
    ck_assert_uint_eq(price->type.scale, 2);
    ck_assert_int_eq(price->required, 0);
    ck_assert_int_eq(w2l_schema_field(s, 4)->required, 1);
    ck_assert_int_eq(w2l_schema_index_of_name(s, "Breed Name"), 4);
    w2l_schema_unref(s);

    /* DuckDB writes identifier ids after the fields, and no schema-id in v1 "schema" */
    const char *duck = "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"id\",\"type\":"
                       "\"long\",\"required\":true},{\"id\":2,\"name\":\"val\",\"type\":"
                       "\"string\",\"required\":false}],\"identifier-field-ids\":[1]}";
    ck_assert_ok(w2l_schema_from_json(duck, strlen(duck), &s, &err), err);
    ck_assert_int_eq(w2l_schema_id(s), 0);
    size_t n;
    ck_assert_int_eq(w2l_schema_identifier(s, &n)[0], 1);
    ck_assert_uint_eq(n, 1);
    w2l_schema_unref(s);
}
END_TEST

static void json_rejects(const char *json, w2l_rc want, const char *msg)
{
    w2l_schema *s = (w2l_schema *)1;
    w2l_error err;
    w2l_rc rc = w2l_schema_from_json(json, strlen(json), &s, &err);
    ck_assert_msg(rc == want, "%s: got %s (%s)", json, w2l_rc_name(rc), err.msg);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "%s: message '%s' lacks '%s'", json, err.msg, msg);
}

START_TEST(schema_json_rejects)
{
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"tags\",\"required\":false,"
                 "\"type\":{\"type\":\"list\",\"element-id\":2,\"element\":\"string\","
                 "\"element-required\":false}}]}",
                 W2L_SCHEMA, "nested type not supported: field tags");
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"u\",\"required\":false,"
                 "\"type\":\"uuid\"}]}",
                 W2L_SCHEMA, "field u: unknown or unsupported type 'uuid'");
    json_rejects(
        "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":false,"
        "\"type\":\"int\"},{\"id\":1,\"name\":\"b\",\"required\":false,\"type\":\"int\"}]}",
        W2L_SCHEMA, "already used");
    json_rejects("{\"type\":\"struct\",\"identifier-field-ids\":[1],\"fields\":[{\"id\":1,"
                 "\"name\":\"a\",\"required\":false,\"type\":\"int\"}]}",
                 W2L_SCHEMA, "must be required");
    json_rejects(
        "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"required\":false,\"type\":\"int\"}]}",
        W2L_CORRUPT, "no \"name\"");
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":\"1\",\"name\":\"a\",\"required\":false,"
                 "\"type\":\"int\"}]}",
                 W2L_CORRUPT, "\"id\" of field 'a'");
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":4294967297,\"name\":\"a\","
                 "\"required\":false,\"type\":\"int\"}]}",
                 W2L_CORRUPT, "32-bit");
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"type\":\"int\"}]}",
                 W2L_CORRUPT, "\"required\"");
    json_rejects("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":false,"
                 "\"type\":7}]}",
                 W2L_CORRUPT, "\"type\" must be a string");
    json_rejects("{\"type\":\"struct\",\"fields\":[1]}", W2L_CORRUPT, "fields[0]");
    json_rejects("{\"type\":\"struct\"}", W2L_CORRUPT, "\"fields\"");
    json_rejects("{\"type\":\"map\",\"fields\":[]}", W2L_CORRUPT, "struct");
    json_rejects("{\"fields\":[],\"schema-id\":\"x\"}", W2L_CORRUPT, "schema-id");
    json_rejects("{\"fields\":[],\"identifier-field-ids\":7}", W2L_CORRUPT, "identifier");
    json_rejects("{\"fields\":[],\"identifier-field-ids\":[\"a\"]}", W2L_CORRUPT, "identifier");
    json_rejects("[]", W2L_CORRUPT, "not an object");
    json_rejects("{\"fields\":[", W2L_CORRUPT, "invalid JSON");
    json_rejects("", W2L_CORRUPT, "JSON");

    w2l_schema *s;
    w2l_error err;
    ck_assert_ok(w2l_schema_from_json("{\"fields\":[]}", 13, &s, &err), err);
    ck_assert_uint_eq(w2l_schema_field_count(s), 0);
    w2l_schema_unref(s);
    /* len bounds the text */
    ck_assert_ok(w2l_schema_from_json("{\"fields\":[]}garbage", 13, &s, &err), err);
    w2l_schema_unref(s);
}
END_TEST

/* ---- randomized: independent oracles and garbage input ---- */

START_TEST(civil_days_match_gmtime)
{
    /* libc's gmtime_r is an independent implementation of the same calendar */
    for (int i = 0; i < 200000; i++) {
        int64_t days = (int64_t)(rnd() % 3652059) - 719162; /* 0001-01-01 .. 9999-12-31 */
        time_t secs = (time_t)(days * 86400 + (int64_t)(rnd() % 86400));
        struct tm tm;
        ck_assert_ptr_nonnull(gmtime_r(&secs, &tm));
        int64_t y;
        unsigned m, d;
        w2l__civil_from_days(days, &y, &m, &d);
        ck_assert_msg(y == tm.tm_year + 1900 && (int)m == tm.tm_mon + 1 && (int)d == tm.tm_mday,
                      "day %lld", (long long)days);
        ck_assert_int_eq(w2l__days_from_civil(y, m, d), days);
    }
}
END_TEST

START_TEST(timestamps_round_trip_random)
{
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        w2l_value v = {0}, back;
        v.v.i64 = (int64_t)rnd();
        if (i % 2) v.v.i64 %= INT64_C(400) * 365 * W2L_MICROS_PER_DAY; /* mostly near now */
        w2l_type t = i % 3 ? T_TS : T_TSTZ;
        size_t n = w2l_value_format(t, &v, buf, sizeof buf);
        w2l_error err;
        ck_assert_msg(w2l_value_parse(t, buf, n, &back, &err) == W2L_OK, "%s: %s", buf, err.msg);
        ck_assert_int_eq(back.v.i64, v.v.i64);
        w2l_value tv = {0};
        tv.v.i64 = w2l__floor_mod(v.v.i64, W2L_MICROS_PER_DAY);
        n = w2l_value_format(T_TIME, &tv, buf, sizeof buf);
        ck_assert_uint_eq(n, 15);
        ck_assert_ok(w2l_value_parse(T_TIME, buf, n, &back, &err), err);
        ck_assert_int_eq(back.v.i64, tv.v.i64);
    }
}
END_TEST

START_TEST(decimals_round_trip_random)
{
    char buf[64], want[96];
    for (int i = 0; i < 100000; i++) {
        /* 64-bit values: the text must match printf's digits with the point inserted */
        int64_t u = (int64_t)rnd() >> (rnd() % 63);
        unsigned scale = (unsigned)(rnd() % 19);
        w2l_value v = {0}, back;
        v.v.dec = w2l__i128_from_i64(u);
        w2l_type t = dec(38, scale);
        size_t n = w2l_value_format(t, &v, buf, sizeof buf);
        char digits[32];
        int nd = snprintf(digits, sizeof digits, "%llu",
                          (unsigned long long)(u < 0 ? 0 - (uint64_t)u : (uint64_t)u));
        char padded[64];
        snprintf(padded, sizeof padded, "%0*d%s", nd < (int)scale + 1 ? (int)scale + 1 - nd : 0,
                 0, digits);
        if (nd >= (int)scale + 1) snprintf(padded, sizeof padded, "%s", digits);
        size_t np = strlen(padded);
        if (scale)
            snprintf(want, sizeof want, "%s%.*s.%s", u < 0 ? "-" : "", (int)(np - scale), padded,
                     padded + np - scale);
        else
            snprintf(want, sizeof want, "%s%s", u < 0 ? "-" : "", padded);
        ck_assert_str_eq(buf, want);
        w2l_error err;
        ck_assert_ok(w2l_value_parse(t, buf, n, &back, &err), err);
        ck_assert_int_eq(w2l__i128_cmp(back.v.dec, v.v.dec), 0);

        /* full 128-bit values within 38 digits: text and bytes round trip */
        w2l_int128 big = {rnd(), (int64_t)(rnd() >> (1 + rnd() % 63))};
        if (rnd() % 2) big = w2l__i128_neg(big);
        if (!w2l__decimal_fits(big, 38)) continue;
        v.v.dec = big;
        n = w2l_value_format(t, &v, buf, sizeof buf);
        ck_assert_ok(w2l_value_parse(t, buf, n, &back, &err), err);
        ck_assert_int_eq(w2l__i128_cmp(back.v.dec, big), 0);
        unsigned char b[16];
        size_t nb = w2l__decimal_to_be_min(big, b);
        ck_assert_int_eq(w2l__decimal_from_be(b, nb, &back.v.dec), 0);
        ck_assert_int_eq(w2l__i128_cmp(back.v.dec, big), 0);
        if (nb > 1) /* minimal: one byte fewer changes the value */
            ck_assert(w2l__decimal_from_be(b + 1, nb - 1, &back.v.dec) == 0 &&
                      w2l__i128_cmp(back.v.dec, big) != 0);
    }
}
END_TEST

START_TEST(parsers_survive_garbage)
{
    /* random short texts from a biased alphabet: no crash, no over-read (ASan), and any
     * accepted value formats to text that parses back to the same value */
    static const char alpha[] = "0123456789-+.:eETZ tnaIfiNx\xff";
    const w2l_type types[] = {T_BOOL, T_INT, T_LONG, T_FLOAT, T_DOUBLE, dec(10, 3), dec(38, 0),
                              T_DATE, T_TIME, T_TS, T_TSTZ};
    for (int i = 0; i < 300000; i++) {
        size_t len = (size_t)(rnd() % 32);
        char *text = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++) text[k] = alpha[rnd() % (sizeof alpha - 1)];
        w2l_type t = types[rnd() % W2L_ARRAY_LEN(types)];
        w2l_value v, back;
        w2l_error err;
        w2l_rc rc = w2l_value_parse(t, text, len, &v, &err);
        ck_assert(rc == W2L_OK || rc == W2L_CORRUPT);
        if (rc == W2L_OK) {
            char buf[96];
            size_t n = w2l_value_format(t, &v, buf, sizeof buf);
            ck_assert_msg(w2l_value_parse(t, buf, n, &back, &err) == W2L_OK, "%s: %s", buf,
                          err.msg);
            ck_assert_msg(w2l_value_compare(t, &v, &back) == 0, "%.*s -> %s", (int)len, text,
                          buf);
        } else {
            ck_assert_ptr_nonnull(strstr(err.msg, "invalid "));
        }
        free(text);
    }
}
END_TEST

/* ---- the fast paths of the date, timestamp and decimal parsers ---- */

/* model.h's testing switches (W2L_TESTING): w2l__date_fast_off and the others. */

static int ref_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* n digits of v at b, zero-padded, written by hand (snprintf per day would dominate). */
static char *put_digits(char *b, long v, int n)
{
    for (int k = n - 1; k >= 0; k--, v /= 10) b[k] = (char)('0' + v % 10);
    return b + n;
}

START_TEST(date_fast_path_every_day)
{
    /* every day of 0001..9999, counted one at a time from 0001-01-01 (719162 days before
     * 1970-01-01) with its own leap rule; each as a date and as a timestamp with a random
     * time of day, separator and 0..6 fraction digits. The day after the month's last and
     * day 00 are errors worded as the general parser words them. */
    static const int mlen[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t z = -719162;
    long taken = w2l__date_fast_taken;
    w2l_error err, err2;
    for (int y = 1; y <= 9999; y++) {
        for (int m = 1; m <= 12; m++) {
            int len = mlen[m - 1] + (m == 2 && ref_leap(y));
            for (int d = 0; d <= len + 1; d++) {
                char b[32], *p = b;
                p = put_digits(p, y, 4), *p++ = '-', p = put_digits(p, m, 2), *p++ = '-';
                p = put_digits(p, d, 2);
                int32_t days = 0;
                w2l_rc rc = w2l__date_parse(b, 10, &days, &err);
                if (d < 1 || d > len) {
                    w2l__date_fast_off = 1;
                    w2l_rc rc2 = w2l__date_parse(b, 10, &days, &err2);
                    w2l__date_fast_off = 0;
                    if (rc == W2L_OK || rc != rc2 || strcmp(err.msg, err2.msg))
                        ck_abort_msg("%.10s: %s / %s", b, err.msg, err2.msg);
                    continue;
                }
                if (rc != W2L_OK || days != z)
                    ck_abort_msg("%.10s: %d, want %lld", b, days, (long long)z);
                uint64_t r = rnd();
                int h = (int)(r % 24), mi = (int)(r >> 8 & 63) % 60, sec = (int)(r >> 16 & 63) % 60,
                    nf = (int)(r >> 24 & 7) % 7;
                long frac = (long)(r >> 32 & 0xfffff) % 1000000, scale = 1;
                for (int k = nf; k < 6; k++) frac /= 10, scale *= 10;
                *p++ = " Tt"[(r >> 56) % 3];
                p = put_digits(p, h, 2), *p++ = ':', p = put_digits(p, mi, 2), *p++ = ':';
                p = put_digits(p, sec, 2);
                if (nf) *p++ = '.', p = put_digits(p, frac, nf);
                int64_t want = z * W2L_MICROS_PER_DAY +
                               ((int64_t)(h * 60 + mi) * 60 + sec) * 1000000 + frac * scale,
                        us = 0;
                if (w2l__timestamp_parse(b, (size_t)(p - b), (int)(r >> 60 & 1), &us, &err) !=
                        W2L_OK ||
                    us != want)
                    ck_abort_msg("%.*s: %lld, want %lld", (int)(p - b), b, (long long)us,
                                 (long long)want);
                z++;
            }
        }
    }
    ck_assert_int_eq(z, 2932897); /* 10000-01-01 */
    /* the fast paths took every valid text: a date and a timestamp a day */
    ck_assert_int_eq(w2l__date_fast_taken - taken, 2 * (2932897 + 719162));
}
END_TEST

/* w2l__date_parse, w2l__timestamp_parse (both zones) of text, with the fast paths on and
 * off: the same result, value and message. */
static void dates_agree(const char *text, size_t len)
{
    char *b = malloc(len ? len : 1); /* exactly len bytes: ASan sees any read beyond */
    memcpy(b, text, len);
    for (int kind = 0; kind < 3; kind++) {
        int64_t v[2] = {0, 0};
        w2l_rc rc[2];
        w2l_error err[2];
        for (int off = 0; off < 2; off++) {
            w2l__date_fast_off = off;
            if (kind == 0) {
                int32_t d = 0;
                rc[off] = w2l__date_parse(b, len, &d, &err[off]);
                v[off] = d;
            } else {
                rc[off] = w2l__timestamp_parse(b, len, kind == 2, &v[off], &err[off]);
            }
        }
        w2l__date_fast_off = 0;
        if (rc[0] != rc[1] || (rc[0] == W2L_OK && v[0] != v[1]) ||
            (rc[0] != W2L_OK && strcmp(err[0].msg, err[1].msg)))
            ck_abort_msg("kind %d '%.*s': fast %d %lld '%s', general %d %lld '%s'", kind,
                         (int)len, text, rc[0], (long long)v[0], rc[0] ? err[0].msg : "", rc[1],
                         (long long)v[1], rc[1] ? err[1].msg : "");
    }
    free(b);
}

START_TEST(date_fast_paths_match_general)
{
    /* the layouts around the fast ones: fields out of range, every position replaced by
     * each byte that matters, cut short or lengthened, 0..8 fraction digits */
    static const char bytes[] = "0123456789-: Tt.+Z/\xff";
    char b[40];
    for (int i = 0; i < 400000; i++) {
        uint64_t r = rnd();
        int y = (int)(r % 10000), m = (int)(r >> 14 & 15), d = (int)(r >> 18 & 31) + (r >> 23 & 1),
            h = (int)(r >> 24 & 31), mi = (int)(r >> 29 & 63), sec = (int)(r >> 35 & 63),
            nf = (int)(r >> 41 & 7) + (r >> 44 & 1);
        if (r >> 45 & 1) /* mostly valid fields */
            m = m % 12 + 1, d = d % 28 + 1, h %= 24, mi %= 60, sec %= 60;
        char *p = b;
        p = put_digits(p, y, 4), *p++ = '-', p = put_digits(p, m, 2), *p++ = '-';
        p = put_digits(p, d, 2), *p++ = " Tt"[(r >> 46) % 3];
        p = put_digits(p, h, 2), *p++ = ':', p = put_digits(p, mi, 2), *p++ = ':';
        p = put_digits(p, sec, 2);
        if (nf) *p++ = '.', p = put_digits(p, (long)(rnd() % 100000000), nf);
        size_t len = (size_t)(p - b);
        uint64_t q = rnd();
        if (q & 1) b[(q >> 8) % len] = bytes[(q >> 16) % (sizeof bytes - 1)];
        if (q >> 1 & 1) b[(q >> 24) % len] = bytes[(q >> 32) % (sizeof bytes - 1)];
        switch (q >> 40 & 3) {
        case 0: len = 10; break;                            /* the date alone */
        case 1: len = 8 + (size_t)(q >> 42) % (len - 7); break; /* cut anywhere */
        default: break;
        }
        dates_agree(b, len);
    }
    dates_agree("2024-01-01 00:00:00.1234560", 27); /* 7 digits: the general parser's */
    dates_agree("2024-02-29 23:59:59.999999", 26);
    dates_agree("2023-02-29 00:00:00", 19);
    dates_agree("1900-02-29", 10);
    dates_agree("2100-02-29", 10);
    dates_agree("2000-02-29", 10);
    dates_agree("0000-00-00 00:00:00", 19);
}
END_TEST

/* w2l__decimal_parse of text with the fast path on and off: the same result, value and
 * message; an accepted value of 18 digits or fewer also equals its digits read by strtoull
 * times 10^(scale - fraction digits). */
static void decimals_agree(const char *text, size_t len, unsigned p, unsigned sc)
{
    char *b = malloc(len ? len : 1);
    memcpy(b, text, len);
    w2l_int128 v[2] = {{0, 0}, {0, 0}};
    w2l_rc rc[2];
    w2l_error err[2];
    long taken = w2l__decimal_fast_taken;
    for (int off = 0; off < 2; off++) {
        w2l__decimal_fast_off = off;
        rc[off] = w2l__decimal_parse(b, len, p, sc, &v[off], &err[off]);
    }
    w2l__decimal_fast_off = 0;
    if (rc[0] != rc[1] || (rc[0] == W2L_OK && w2l__i128_cmp(v[0], v[1])) ||
        (rc[0] != W2L_OK && strcmp(err[0].msg, err[1].msg)))
        ck_abort_msg("decimal(%u,%u) '%.*s': fast %d '%s', general %d '%s'", p, sc, (int)len,
                     text, rc[0], rc[0] ? err[0].msg : "", rc[1], rc[1] ? err[1].msg : "");
    char digits[32];
    size_t nd = 0, nfrac = 0, i = len && (text[0] == '-' || text[0] == '+');
    int point = 0, plain = 1;
    for (; i < len && nd < 19; i++) {
        if (text[i] == '.') point = 1;
        else digits[nd++] = text[i], nfrac += (size_t)point;
        plain &= text[i] == '.' || (text[i] >= '0' && text[i] <= '9');
    }
    if (rc[0] == W2L_OK && plain && nd <= 18 && i == len && nfrac <= sc) {
        digits[nd] = '\0';
        w2l_int128 want = w2l__i128_from_i64((int64_t)strtoull(digits, NULL, 10)), ten;
        ck_assert_int_eq(w2l__i128_pow10(sc - (unsigned)nfrac, &ten), 0);
        ck_assert_int_eq(w2l__i128_mul(want, ten, &want), 0);
        if (text[0] == '-') want = w2l__i128_neg(want);
        ck_assert_msg(w2l__i128_cmp(v[0], want) == 0, "decimal(%u,%u) '%.*s'", p, sc, (int)len,
                      text);
        /* "-?digits(.digits)?": the fast path's */
        size_t first = text[0] == '-' || text[0] == '+';
        if (text[0] != '+' && first < len && text[first] != '.' && text[len - 1] != '.')
            ck_assert_msg(w2l__decimal_fast_taken == taken + 1, "not taken: '%.*s'", (int)len,
                          text);
    }
    free(b);
}

START_TEST(decimal_fast_path_matches_general)
{
    /* "-?digits(.digits)?" of 0..21 digits at every precision and scale, with signs, points,
     * exponents and other bytes put anywhere */
    static const char bytes[] = "0123456789.-+eE x";
    char b[40];
    for (int i = 0; i < 600000; i++) {
        uint64_t r = rnd();
        unsigned p = 1 + (unsigned)(r % 38), sc = (unsigned)(r >> 8) % (p + 1);
        size_t nd = (size_t)(r >> 16) % 22, len = 0, at = nd ? (size_t)(r >> 24) % (nd + 1) : 0;
        if (r >> 32 & 1) b[len++] = '-';
        uint64_t q = rnd();
        for (size_t k = 0; k < nd; k++) {
            if (k == at && (r >> 33 & 1)) b[len++] = '.';
            b[len++] = (char)('0' + (q >> (3 * (k % 21))) % 10 * ((r >> 34 & 1) || k >= 2));
        }
        if (r >> 35 & 1 && len) b[(r >> 36) % len] = bytes[(r >> 44) % (sizeof bytes - 1)];
        decimals_agree(b, len, p, sc);
    }
    static const char *fixed[] = {"0", "-0", "-0.00", "999999999999999999", "-999999999999999999",
                                  "9999999999999999999", "0.000000000000000001", "1.", ".5",
                                  "-", "", "+1", "00000000000000000001", "1e2"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(fixed); k++)
        for (unsigned p = 1; p <= 38; p++)
            for (unsigned sc = 0; sc <= p; sc++) decimals_agree(fixed[k], strlen(fixed[k]), p, sc);
}
END_TEST

/* ---- faults ---- */

START_TEST(schema_out_of_memory)
{
    fail_alloc_install();
    long base = fail_alloc_outstanding();
    int done = 0;
    for (long n = 0; !done && n < 100000; n++) {
        fail_alloc_arm(n);
        w2l_error err;
        w2l_rc rc = W2L_NOMEM;
        w2l_schema *s = w2l_schema_new(2), *back = NULL;
        char *json = NULL;
        if (!s) w2l_error_set(&err, W2L_NOMEM, "w2l_schema_new");
        if (s) {
            rc = W2L_OK;
            char name[16];
            for (int i = 1; rc == W2L_OK && i <= 40; i++) {
                snprintf(name, sizeof name, "col%d", i);
                rc = w2l_schema_add_field(s, i, name, i % 3 ? T_LONG : dec(20, 4), i < 3, &err);
            }
            int32_t ids[] = {2, 1};
            if (rc == W2L_OK) rc = w2l_schema_set_identifier(s, ids, 2, &err);
            if (rc == W2L_OK) rc = w2l_schema_to_json(s, &json, &err);
            if (rc == W2L_OK) rc = w2l_schema_from_json(json, strlen(json), &back, &err);
            if (rc == W2L_OK) {
                ck_assert_uint_eq(w2l_schema_field_count(back), 40);
                ck_assert_int_eq(w2l_schema_identifier(back, &(size_t){0})[1], 1);
            }
        }
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "n=%ld: %s", n, w2l_rc_name(rc));
        if (rc == W2L_NOMEM) ck_assert_int_eq(err.code, W2L_NOMEM);
        done = rc == W2L_OK && fail_alloc_count() <= n; /* the armed failure never came */
        w2l_free(json);
        w2l_schema_unref(back);
        w2l_schema_unref(s);
        fail_alloc_arm(-1);
        ck_assert_msg(fail_alloc_outstanding() == base, "n=%ld: %ld blocks leaked", n,
                      fail_alloc_outstanding() - base);
    }
    ck_assert(done);
}
END_TEST

Suite *suite_model(void)
{
    Suite *s = suite_create("model");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, type_names_round_trip);
    tcase_add_test(basic, type_parse_rejects);
    tcase_add_test(basic, type_promotions);
    tcase_add_test(basic, bool_and_int_text);
    tcase_add_test(basic, double_text);
    tcase_add_test(basic, float_text);
    tcase_add_test(basic, decimal_text);
    tcase_add_test(basic, date_text);
    tcase_add_test(basic, time_text);
    tcase_add_test(basic, timestamp_text);
    tcase_add_test(basic, timestamptz_text);
    tcase_add_test(basic, string_and_binary);
    tcase_add_test(basic, single_value_bytes);
    tcase_add_test(basic, float_text_ignores_locale);
    tcase_add_test(basic, compare_orders);
    tcase_add_test(basic, schema_fields_and_lookup);
    tcase_add_test(basic, schema_rejects);
    tcase_add_test(basic, schema_check_row);
    tcase_add_test(basic, schema_json_round_trip);
    tcase_add_test(basic, schema_json_rejects);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, format_measures_like_snprintf);
    tcase_add_test(edge, int128_arithmetic);
    tcase_add_test(edge, decimal_bytes);
    tcase_add_test(edge, decimal_wide_text);
    tcase_add_test(edge, civil_days_every_day);
    tcase_add_test(edge, floats_round_trip_bit_exact);
    tcase_add_test(edge, shortest_digits);
    tcase_add_test(edge, schema_thousands_of_columns);
    tcase_add_test(edge, civil_days_match_gmtime);
    tcase_add_test(edge, timestamps_round_trip_random);
    tcase_add_test(edge, decimals_round_trip_random);
    tcase_add_test(edge, parsers_survive_garbage);
    tcase_add_test(edge, date_fast_path_every_day);
    tcase_add_test(edge, date_fast_paths_match_general);
    tcase_add_test(edge, decimal_fast_path_matches_general);
    tcase_set_timeout(edge, 60);
    suite_add_tcase(s, edge);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, schema_json_from_iceberg_metadata);
    suite_add_tcase(s, golden);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, schema_out_of_memory);
    tcase_set_timeout(faults, 60);
    suite_add_tcase(s, faults);
    return s;
}
