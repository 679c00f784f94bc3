/*
 * lib/pipeline/verify_canon.c: the canonical text of lake values (what the server's SQL
 * expressions print, values taken from MariaDB 10.11's own output), forms chosen from a
 * MySQL type and a lake type, the SQL expressions, the row hash (SHA-256's first 8 bytes),
 * key order (numbers by value, texts by bytes), bucketing into ranges, key literals and
 * the keys shown to people.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "ddl/ddl.h"
#include "model/model.h"
#include "pipeline/verify_int.h"
#include "support/support.h"
#include "support/types.h"

/* The canonical text of v (type t, form f), in a static buffer. */
static const char *canon(w2l__vform f, w2l_type t, w2l_value v)
{
    static char out[1024];
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__verify_canon(f, t, &v, &b, &err), err);
    ck_assert_uint_lt(b.len, sizeof out);
    memcpy(out, b.data, b.len);
    out[b.len] = '\0';
    w2l_buf_release(&b);
    return out;
}

static w2l_value i32(int32_t x) { return (w2l_value){.v.i32 = x}; }
static w2l_value i64(int64_t x) { return (w2l_value){.v.i64 = x}; }
static w2l_value f32(float x) { return (w2l_value){.v.f32 = x}; }
static w2l_value f64(double x) { return (w2l_value){.v.f64 = x}; }
static w2l_value bytes(const char *p, size_t n)
{
    w2l_value v = {0};
    v.v.bytes.ptr = p;
    v.v.bytes.len = n;
    return v;
}
static w2l_value decv(const char *text, unsigned p, unsigned s)
{
    w2l_value v = {0};
    w2l_error err;
    ck_assert_ok(w2l__decimal_parse(text, strlen(text), p, s, &v.v.dec, &err), err);
    return v;
}

START_TEST(canon_numbers)
{
    ck_assert_str_eq(canon(VF_NUM, T_INT, i32(-5)), "-5");
    ck_assert_str_eq(canon(VF_NUM, T_LONG, i64(INT64_MIN)), "-9223372036854775808");
    ck_assert_str_eq(canon(VF_NUM, dec(20, 0), decv("18446744073709551615", 20, 0)),
                     "18446744073709551615");
    ck_assert_str_eq(canon(VF_DEC, dec(12, 3), decv("-12.5", 12, 3)), "-12.500");
    ck_assert_str_eq(canon(VF_DEC, dec(12, 3), decv("0", 12, 3)), "0.000");
    ck_assert_str_eq(canon(VF_DEC, T_STRING, bytes("1.50", 4)), "1.50"); /* p > 38: text */
    ck_assert_str_eq(canon(VF_BOOL, T_BOOL, i32(1)), "1");
    ck_assert_str_eq(canon(VF_BOOL, T_BOOL, i32(0)), "0");
    ck_assert_str_eq(canon(VF_BITS, T_LONG, i64(-1)), "18446744073709551615"); /* BIT(64) */
    ck_assert_str_eq(canon(VF_BITS, T_LONG, i64(21)), "21");
    w2l_value null = {.is_null = 1};
    ck_assert_str_eq(canon(VF_NUM, T_INT, null), "~");
    ck_assert_str_eq(canon(VF_TEXTHEX, T_STRING, null), "~");
}
END_TEST

/* As MariaDB's REPLACE(FORMAT(x, 6), ',', '') prints them (10.11). */
START_TEST(canon_reals)
{
    ck_assert_str_eq(canon(VF_REAL, T_FLOAT, f32(0.1f)), "0.100000");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(-1.5e-7)), "0.000000");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(32686495299.15908)), "32686495299.159080");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(-43455902480.9449)), "-43455902480.944900");
    ck_assert_str_eq(canon(VF_REAL, T_FLOAT, f32(-3.4e38f)),
                     "-339999995214436420000000000000000000000.000000");
    ck_assert_str_eq(canon(VF_REAL, T_FLOAT, f32(-248.83035f)), "-248.830353");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(0.00123)), "0.001230");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(0)), "0.000000");
    char want[320];
    memset(want, '0', 301);
    want[0] = '1';
    strcpy(want + 301, ".000000");
    ck_assert_str_eq(canon(VF_REAL, T_DOUBLE, f64(1e300)), want);
}
END_TEST

START_TEST(canon_times_and_bytes)
{
    ck_assert_str_eq(canon(VF_DATE, T_DATE, i32(19782)), "2024-02-29");
    ck_assert_str_eq(canon(VF_DATE, T_DATE, i32((int32_t)w2l__days_from_civil(999, 12, 31))),
                     "0999-12-31");
    int64_t us = (int64_t)19724 * 86400000000LL + 3723123456LL;
    ck_assert_str_eq(canon(VF_DATETIME, T_TS, i64(us)), "2024-01-02 01:02:03.123456");
    ck_assert_str_eq(canon(VF_DATETIME, T_TSTZ, i64(-1)), "1969-12-31 23:59:59.999999");
    ck_assert_str_eq(canon(VF_TIME, T_TIME, i64(45296780000LL)), "12:34:56.780000");
    ck_assert_str_eq(canon(VF_TEXTHEX, T_STRING, bytes("Gr\xc3\xbc\xc3\x9f" "e", 7)),
                     "4772C3BCC39F65");
    ck_assert_str_eq(canon(VF_TEXTHEX, T_STRING, bytes("", 0)), ""); /* not NULL's "~" */
    ck_assert_str_eq(canon(VF_BINHEX, T_BINARY, bytes("\x00\xff\x10", 3)), "00FF10");
}
END_TEST

static w2l__mysql_type mt(const char *text)
{
    w2l__mysql_type t;
    w2l_error err;
    ck_assert_ok(w2l__mysql_type_parse(text, strlen(text), NULL, &t, &err), err);
    return t;
}

START_TEST(forms)
{
    w2l__mysql_type t = mt("int");
    ck_assert_int_eq(w2l__verify_form(&t, T_INT), VF_NUM);
    ck_assert_int_eq(w2l__verify_form(&t, T_STRING), VF_NONE);
    t = mt("tinyint(1)");
    ck_assert_int_eq(w2l__verify_form(&t, T_BOOL), VF_BOOL);
    t = mt("bigint unsigned");
    ck_assert_int_eq(w2l__verify_form(&t, dec(20, 0)), VF_NUM);
    ck_assert_int_eq(w2l__verify_key_kind(&t, dec(20, 0)), VK_NUM);
    t = mt("bit(1)");
    ck_assert_int_eq(w2l__verify_form(&t, T_BOOL), VF_BOOL);
    t = mt("bit(9)");
    ck_assert_int_eq(w2l__verify_form(&t, T_LONG), VF_BITS);
    t = mt("decimal(50,10)");
    ck_assert_int_eq(w2l__verify_form(&t, T_STRING), VF_DEC);
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_STRING), VK_NONE);
    t = mt("double");
    ck_assert_int_eq(w2l__verify_form(&t, T_DOUBLE), VF_REAL);
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_DOUBLE), VK_NONE);
    t = mt("time(2)");
    ck_assert_int_eq(w2l__verify_form(&t, T_TIME), VF_TIME);
    ck_assert_int_eq(w2l__verify_form(&t, T_STRING), VF_TEXTHEX); /* time-as-string */
    t = mt("varchar(20)");
    ck_assert_int_eq(w2l__verify_form(&t, T_STRING), VF_TEXTHEX);
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_STRING), VK_STR);
    t = mt("json");
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_STRING), VK_NONE);
    t = mt("varbinary(4)");
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_BINARY), VK_BIN);
    t = mt("datetime(6)");
    ck_assert_int_eq(w2l__verify_key_kind(&t, T_TS), VK_FIXED);
}
END_TEST

static const char *sql(w2l__vform f, const char *col)
{
    static char out[256];
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__verify_sql_expr(f, col, &b, &err), err);
    snprintf(out, sizeof out, "%.*s", (int)b.len, (char *)b.data);
    w2l_buf_release(&b);
    return out;
}

START_TEST(sql_exprs)
{
    ck_assert_str_eq(sql(VF_NUM, "id"), "(`id`+0)");
    ck_assert_str_eq(sql(VF_BOOL, "b"), "(`b`<>0)");
    ck_assert_str_eq(sql(VF_DEC, "d"), "CAST(`d` AS CHAR)");
    ck_assert_str_eq(sql(VF_TEXTHEX, "we`ird"), "HEX(CONVERT(`we``ird` USING utf8mb4))");
    ck_assert_str_eq(sql(VF_DATE, "d"), "NULLIF(DATE_FORMAT(`d`,'%Y-%m-%d'),'0000-00-00')");
    ck_assert_str_eq(sql(VF_TIME, "t"), "TIME_FORMAT(`t`,'%H:%i:%s.%f')");
    ck_assert_str_eq(sql(VF_REAL, "f"),
                     "REPLACE(REPLACE(FORMAT(`f`,6,'en_US'),',',''),'-0.000000','0.000000')");
}
END_TEST

START_TEST(hash)
{
    /* SHA-256("abc") = ba7816bf8f01cfea...: CONV(LEFT(SHA2('abc',256),16),16,10) */
    ck_assert_uint_eq(w2l__verify_hash("abc", 3), 0xba7816bf8f01cfeaULL);
    ck_assert_uint_eq(w2l__verify_hash("", 0), 0xe3b0c44298fc1c14ULL);
}
END_TEST

static int kcmp(w2l__vkey k, const char *a, const char *b)
{
    return w2l__verify_key_cmp(k, a, strlen(a), b, strlen(b));
}

START_TEST(key_order)
{
    ck_assert_int_lt(kcmp(VK_NUM, "9", "10"), 0);
    ck_assert_int_lt(kcmp(VK_NUM, "-10", "-9"), 0);
    ck_assert_int_lt(kcmp(VK_NUM, "-1", "0"), 0);
    ck_assert_int_eq(kcmp(VK_NUM, "1.50", "1.5"), 0);
    ck_assert_int_eq(kcmp(VK_NUM, "-0.00", "0"), 0);
    ck_assert_int_lt(kcmp(VK_NUM, "0.05", "0.5"), 0);
    ck_assert_int_gt(kcmp(VK_NUM, "18446744073709551615", "9223372036854775807"), 0);
    ck_assert_int_lt(kcmp(VK_FIXED, "2024-01-02 00:00:00.000000", "2024-01-10 00:00:00.000000"), 0);
    ck_assert_int_lt(kcmp(VK_STR, "Zulu", "alpha"), 0); /* bytes, not the collation */
    ck_assert_int_lt(kcmp(VK_BIN, "a", "ab"), 0);
}
END_TEST

START_TEST(buckets)
{
    /* composite keys (int, string): bounds (1,'k'), (3,'b'), (3,'z') */
    w2l__vkey ks[2] = {VK_NUM, VK_STR};
    const char *b0[] = {"1", "k"}, *b1[] = {"3", "b"}, *b2[] = {"3", "z"};
    size_t l0[] = {1, 1}, l1[] = {1, 1}, l2[] = {1, 1};
    w2l__vkeyval bounds[3] = {{b0, l0}, {b1, l1}, {b2, l2}};
    struct { const char *a, *b; size_t want; } cases[] = {
        {"0", "zzz", 0}, {"1", "k", 0},  {"1", "ka", 1}, {"2", "", 1}, {"3", "b", 1},
        {"3", "c", 2},   {"3", "z", 2},  {"3", "zz", 3}, {"10", "a", 3}, {"-5", "q", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p[2] = {cases[i].a, cases[i].b};
        size_t l[2] = {strlen(cases[i].a), strlen(cases[i].b)};
        size_t got = w2l__verify_bucket(ks, 2, bounds, 3, (w2l__vkeyval){p, l});
        ck_assert_msg(got == cases[i].want, "(%s, %s): range %zu, want %zu", cases[i].a,
                      cases[i].b, got, cases[i].want);
    }
    const char *p[2] = {"7", "x"};
    size_t l[2] = {1, 1};
    ck_assert_uint_eq(w2l__verify_bucket(ks, 2, NULL, 0, (w2l__vkeyval){p, l}), 0);
}
END_TEST

static w2l_rc q(void *ctx, w2l_buf *b, const char *s, size_t len, w2l_error *err)
{
    (void)ctx;
    W2L_TRY(w2l_buf_append(b, "'", 1, err));
    W2L_TRY(w2l_buf_append(b, s, len, err));
    return w2l_buf_append(b, "'", 1, err);
}

START_TEST(literals_and_shown_keys)
{
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__verify_literal(VK_NUM, "-12.5", 5, q, NULL, &b, &err), err);
    ck_assert_ok(w2l__verify_literal(VK_BIN, "\x01\xfe", 2, q, NULL, &b, &err), err);
    ck_assert_ok(w2l__verify_literal(VK_STR, "a b", 3, q, NULL, &b, &err), err);
    ck_assert_int_eq(b.len, strlen("-12.5X'01FE''a b'"));
    ck_assert(!memcmp(b.data, "-12.5X'01FE''a b'", b.len));
    ck_assert_int_eq(w2l__verify_literal(VK_NUM, "1;DROP", 6, q, NULL, &b, &err), W2L_CORRUPT);
    b.len = 0;
    w2l__vkey ks[3] = {VK_NUM, VK_STR, VK_BIN};
    const char *p[3] = {"1", "it's", "\x00\xff"};
    size_t l[3] = {1, 4, 2};
    ck_assert_ok(w2l__verify_key_show(ks, 3, (w2l__vkeyval){p, l}, &b, &err), err);
    ck_assert_int_eq(b.len, strlen("(1, 'it''s', 0x00FF)"));
    ck_assert(!memcmp(b.data, "(1, 'it''s', 0x00FF)", b.len));
    w2l_buf_release(&b);
}
END_TEST

Suite *suite_verify(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("canon");
    tcase_add_test(tc, canon_numbers);
    tcase_add_test(tc, canon_reals);
    tcase_add_test(tc, canon_times_and_bytes);
    tcase_add_test(tc, forms);
    tcase_add_test(tc, sql_exprs);
    tcase_add_test(tc, hash);
    suite_add_tcase(s, tc);
    tc = tcase_create("ranges");
    tcase_add_test(tc, key_order);
    tcase_add_test(tc, buckets);
    tcase_add_test(tc, literals_and_shown_keys);
    suite_add_tcase(s, tc);
    return s;
}
