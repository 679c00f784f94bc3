/*
 * lib/iceberg/partition.c: partition transforms (Iceberg spec "Partition Transforms",
 * "Bucket Transform Details", "Truncate Transform Details"), the 32-bit Murmur3 hash with
 * the test values of Appendix B, Hive-style partition paths, partition-by clauses in Spark
 * and Trino syntax (w2l__ice_spec_parse), spec comparison and spec evolution in table
 * metadata (w2l__ice_meta_set_spec, "Partition Evolution").
 *
 * Expected values are the spec's own (Appendix B hashes, truncate examples) or worked out
 * by hand next to the assertion: days since 1970-01-01, (hash & INT32_MAX) % N.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg.h"
#include "model/model.h"
#include "support/support.h"
#include "support/types.h"


static w2l__ice_transform tr(w2l__ice_tkind k, int32_t param)
{
    w2l__ice_transform t = {k, param};
    return t;
}

/* A value of type t from its canonical text. */
static w2l_value val(w2l_type t, const char *text)
{
    w2l_value v;
    w2l_error err;
    ck_assert_ok(w2l_value_parse(t, text, strlen(text), &v, &err), err);
    return v;
}

/* t applied to the value of type src written as text; asserts success. */
static w2l_value apply(w2l__ice_transform t, w2l_type src, const char *text)
{
    w2l_value in = val(src, text), out;
    w2l_error err;
    ck_assert_ok(w2l__ice_transform_apply(t, src, &in, &out, &err), err);
    ck_assert(!out.is_null);
    return out;
}

static int32_t bucket(int32_t n, w2l_type src, const char *text)
{
    return apply(tr(W2L_ICE_T_BUCKET, n), src, text).v.i32;
}

/* bucket[N] of a value whose Murmur3 hash is h, by the spec's formula. */
static int32_t bucket_of_hash(int32_t h, int32_t n)
{
    return (int32_t)(((uint32_t)h & (uint32_t)INT32_MAX) % (uint32_t)n);
}

/* ================================================================================= */
/* Appendix B hashes through the bucket transform                                    */
/* ================================================================================= */

/* The hashes of Appendix B ("32-bit Hash Requirements"): each value is hashed through
 * the bucket transform (bucket[INT32_MAX] exposes the hash with its sign bit cleared) and
 * checked at three bucket counts against the formula of "Bucket Transform Details". */
START_TEST(appendix_b_bucket_values)
{
    static const struct {
        w2l_type type;
        const char *text;
        int32_t hash;
    } v[] = {
        {{W2L_TYPE_INT, 0, 0}, "34", 2017239379},
        {{W2L_TYPE_LONG, 0, 0}, "34", 2017239379},
        {{W2L_TYPE_DECIMAL, 9, 2}, "14.20", -500754589},
        {{W2L_TYPE_DATE, 0, 0}, "2017-11-16", -653330422},
        {{W2L_TYPE_TIME, 0, 0}, "22:31:08", -662762989},
        {{W2L_TYPE_TIMESTAMP, 0, 0}, "2017-11-16T22:31:08", -2047944441},
        {{W2L_TYPE_TIMESTAMPTZ, 0, 0}, "2017-11-16T14:31:08-08:00", -2047944441},
        {{W2L_TYPE_STRING, 0, 0}, "iceberg", 1210000089},
        {{W2L_TYPE_BINARY, 0, 0}, "\x00\x01\x02\x03", -188683207},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(v); i++) {
        w2l_value in = val(v[i].type, v[i].text), out;
        if (v[i].type.id == W2L_TYPE_BINARY) in.v.bytes.len = 4; /* the text has NULs */
        w2l_error err;
        ck_assert_ok(w2l__ice_transform_apply(tr(W2L_ICE_T_BUCKET, INT32_MAX), v[i].type, &in,
                                              &out, &err),
                     err);
        ck_assert_msg(out.v.i32 == (v[i].hash & INT32_MAX), "%s: %d", v[i].text, out.v.i32);
        static const int32_t ns[] = {16, 100, 1000};
        for (size_t k = 0; k < W2L_ARRAY_LEN(ns); k++) {
            ck_assert_ok(w2l__ice_transform_apply(tr(W2L_ICE_T_BUCKET, ns[k]), v[i].type, &in,
                                                  &out, &err),
                         err);
            ck_assert_int_eq(out.v.i32, bucket_of_hash(v[i].hash, ns[k]));
        }
    }
    /* worked out: (2017239379 & INT32_MAX) % 16 = 3; % 100 = 79 */
    ck_assert_int_eq(bucket(16, T_INT, "34"), 3);
    ck_assert_int_eq(bucket(100, T_LONG, "34"), 79);
    /* "iceberg": 1210000089 % 16 = 9; 00 01 02 03: (-188683207 & INT32_MAX) % 100 = 41 */
    ck_assert_int_eq(bucket(16, T_STRING, "iceberg"), 9);
    ck_assert_int_eq(bucket(1, T_STRING, "iceberg"), 0);
    /* date 2017-11-16 is day 17486; -653330422 & INT32_MAX = 1494153226, % 100 = 26 */
    ck_assert_int_eq(val(T_DATE, "2017-11-16").v.i32, 17486);
    ck_assert_int_eq(bucket(100, T_DATE, "2017-11-16"), 26);
    /* the zoned time is the same instant as the plain one */
    ck_assert_int_eq(val(T_TSTZ, "2017-11-16T14:31:08-08:00").v.i64, INT64_C(1510871468000000));
    ck_assert_int_eq(val(T_TS, "2017-11-16T22:31:08").v.i64, INT64_C(1510871468000000));
    ck_assert_int_eq(val(T_TIME, "22:31:08").v.i64, INT64_C(81068000000));
}
END_TEST

/* The hash itself over the bytes Appendix B names for each type. */
START_TEST(appendix_b_murmur3)
{
    static const unsigned char long34[8] = {0x22, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(long34, 8), 2017239379);
    /* decimal 14.20: unscaled 1420 = 0x058c, the fewest big-endian bytes */
    static const unsigned char d1420[2] = {0x05, 0x8c};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(d1420, 2), -500754589);
    /* time 22:31:08 = 81068000000 us = 0x12_e007_8300, little-endian long */
    static const unsigned char t[8] = {0x00, 0x83, 0x07, 0xe0, 0x12, 0, 0, 0};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(t, 8), -662762989);
    ck_assert_int_eq((int32_t)w2l__ice_murmur3("iceberg", 7), 1210000089);
    /* uuid f79c3e09-677c-4bbd-a479-3f349cb785e7, its 16 bytes big-endian (the model has no
     * uuid type, so only the hash is checked) */
    static const unsigned char uuid[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
                                           0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(uuid, 16), 1488055340);
    ck_assert_int_eq(bucket_of_hash(1488055340, 16), 12);
    static const unsigned char b[4] = {0, 1, 2, 3};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(b, 4), -188683207);
    /* not bucketable, but the appendix gives it: boolean true hashes as int 1 */
    static const unsigned char long1[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq((int32_t)w2l__ice_murmur3(long1, 8), 1392991556);
    /* the empty input with seed 0 hashes to 0 */
    ck_assert_uint_eq(w2l__ice_murmur3("", 0), 0);
}
END_TEST

/* int and long hash alike for negative values too (an int column promoted to long keeps
 * its buckets); time and timestamps hash as longs; decimals hash by unscaled value only. */
START_TEST(bucket_rules)
{
    static const char *ints[] = {"-1", "-2147483648", "0", "2147483647", "17486"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(ints); i++)
        ck_assert_int_eq(bucket(INT32_MAX, T_INT, ints[i]), bucket(INT32_MAX, T_LONG, ints[i]));
    /* a date hashes as its day number, a time and a timestamp as their microseconds */
    ck_assert_int_eq(bucket(INT32_MAX, T_DATE, "1969-12-31"), bucket(INT32_MAX, T_LONG, "-1"));
    ck_assert_int_eq(bucket(INT32_MAX, T_TIME, "00:00:00.000001"),
                     bucket(INT32_MAX, T_LONG, "1"));
    ck_assert_int_eq(bucket(INT32_MAX, T_TS, "1969-12-31T23:59:59.999999"),
                     bucket(INT32_MAX, T_LONG, "-1"));
    ck_assert_int_eq(bucket(INT32_MAX, T_TSTZ, "1970-01-01T00:00:00.000034+00:00"),
                     bucket(INT32_MAX, T_LONG, "34"));
    /* 14.20 at scale 2 and 1.420 at scale 3 have the same unscaled value */
    ck_assert_int_eq(bucket(INT32_MAX, dec(9, 3), "1.420"), bucket_of_hash(-500754589, INT32_MAX));
    /* a decimal beyond 64 bits hashes its 16 bytes: -1 (one byte ff) and a 38-digit one */
    w2l_value big = val(dec(38, 0), "-99999999999999999999999999999999999999");
    unsigned char be[16];
    size_t n = w2l__decimal_to_be_min(big.v.dec, be);
    ck_assert_uint_eq(n, 16);
    ck_assert_int_eq(bucket(INT32_MAX, dec(38, 0), "-99999999999999999999999999999999999999"),
                     (int32_t)(w2l__ice_murmur3(be, n) & INT32_MAX));
    static const unsigned char ff = 0xff;
    ck_assert_int_eq(bucket(INT32_MAX, dec(10, 0), "-1"),
                     (int32_t)(w2l__ice_murmur3(&ff, 1) & INT32_MAX));
    /* every result lies in [0, N) */
    for (int i = -500; i < 500; i++) {
        char t[16];
        snprintf(t, sizeof t, "%d", i * 7919);
        int32_t b = bucket(7, T_INT, t);
        ck_assert(b >= 0 && b < 7);
    }
    /* boolean, float and double are not bucketable ("Partition Transforms") */
    w2l_type no[] = {T_BOOL, T_FLOAT, T_DOUBLE};
    for (size_t i = 0; i < W2L_ARRAY_LEN(no); i++) {
        w2l_type r;
        w2l_error err;
        ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_BUCKET, 4), no[i], &r, &err),
                         W2L_SCHEMA);
        ck_assert_ptr_nonnull(strstr(err.msg, "bucket[4]"));
    }
}
END_TEST

/* ================================================================================= */
/* time transforms, truncate, nulls                                                  */
/* ================================================================================= */

static void check_time(w2l_type src, const char *text, int32_t y, int32_t m, int32_t d,
                       int32_t h)
{
    ck_assert_msg(apply(tr(W2L_ICE_T_YEAR, 0), src, text).v.i32 == y, "year of %s", text);
    ck_assert_msg(apply(tr(W2L_ICE_T_MONTH, 0), src, text).v.i32 == m, "month of %s", text);
    ck_assert_msg(apply(tr(W2L_ICE_T_DAY, 0), src, text).v.i32 == d, "day of %s", text);
    if (src.id != W2L_TYPE_DATE)
        ck_assert_msg(apply(tr(W2L_ICE_T_HOUR, 0), src, text).v.i32 == h, "hour of %s", text);
}

/* year/month/day/hour count from 1970-01-01 and round toward negative infinity. */
START_TEST(time_transforms_before_1970)
{
    /* -1 us: the last microsecond of 1969 */
    check_time(T_TS, "1969-12-31T23:59:59.999999", -1, -1, -1, -1);
    check_time(T_TSTZ, "1969-12-31T23:59:59.999999+00:00", -1, -1, -1, -1);
    check_time(T_DATE, "1969-12-31", -1, -1, -1, 0);
    /* the epoch itself */
    check_time(T_TS, "1970-01-01T00:00:00", 0, 0, 0, 0);
    check_time(T_DATE, "1970-01-01", 0, 0, 0, 0);
    /* 1969-12-31T22:59:59.999999 is in hour -2; 23:00 starts hour -1 */
    check_time(T_TS, "1969-12-31T22:59:59.999999", -1, -1, -1, -2);
    check_time(T_TS, "1969-12-31T23:00:00", -1, -1, -1, -1);
    /* 1900-01-01 is 25567 days before the epoch: 70 years, 840 months, 613608 hours */
    check_time(T_TS, "1900-01-01T00:00:00", -70, -840, -25567, -613608);
    check_time(T_DATE, "1900-01-01", -70, -840, -25567, 0);
    /* one microsecond earlier is still 1899 */
    check_time(T_TS, "1899-12-31T23:59:59.999999", -71, -841, -25568, -613609);
    /* 1969-01-01 is month -12, 1969-02-01 month -11 */
    check_time(T_DATE, "1969-01-01", -1, -12, -365, 0);
    check_time(T_DATE, "1969-02-01", -1, -11, -334, 0);
    /* 2017-11-16T22:31:08: 47 years, 47 * 12 + 10 months, day 17486, hour 1510871468 / 3600 */
    check_time(T_TS, "2017-11-16T22:31:08", 47, 574, 17486, 419686);
    /* a zone offset moves the instant: 2017-11-16T23:30-01:00 is 2017-11-17T00:30 UTC */
    check_time(T_TSTZ, "2017-11-16T23:30:00-01:00", 47, 574, 17487, 419688);
    /* the day of a date or a timestamp is typed date; the others are ints */
    w2l_type r;
    w2l_error err;
    ck_assert_ok(w2l__ice_transform_result(tr(W2L_ICE_T_DAY, 0), T_TS, &r, &err), err);
    ck_assert_int_eq(r.id, W2L_TYPE_DATE);
    ck_assert_ok(w2l__ice_transform_result(tr(W2L_ICE_T_DAY, 0), T_DATE, &r, &err), err);
    ck_assert_int_eq(r.id, W2L_TYPE_DATE);
    ck_assert_ok(w2l__ice_transform_result(tr(W2L_ICE_T_HOUR, 0), T_TSTZ, &r, &err), err);
    ck_assert_int_eq(r.id, W2L_TYPE_INT);
    ck_assert_ok(w2l__ice_transform_result(tr(W2L_ICE_T_MONTH, 0), T_DATE, &r, &err), err);
    ck_assert_int_eq(r.id, W2L_TYPE_INT);
    /* hour of a date, year of a time or a string: not defined */
    ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_HOUR, 0), T_DATE, &r, &err),
                     W2L_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "hour does not apply to date"));
    ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_YEAR, 0), T_TIME, &r, &err),
                     W2L_SCHEMA);
    ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_DAY, 0), T_STRING, &r, &err),
                     W2L_SCHEMA);
    w2l_value in = val(T_STRING, "2024-01-01"), out;
    ck_assert_int_eq(w2l__ice_transform_apply(tr(W2L_ICE_T_DAY, 0), T_STRING, &in, &out, &err),
                     W2L_SCHEMA);
}
END_TEST

START_TEST(truncate_integers)
{
    static const struct {
        const char *in;
        long long out;
    } v[] = {{"1", 0}, {"0", 0}, {"9", 0}, {"10", 10}, {"-1", -10}, {"-10", -10},
             {"-11", -20}, {"-9", -10}, {"2147483647", 2147483640}, {"-2147483640", -2147483640}};
    for (size_t i = 0; i < W2L_ARRAY_LEN(v); i++) {
        ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 10), T_INT, v[i].in).v.i32, v[i].out);
        ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 10), T_LONG, v[i].in).v.i64, v[i].out);
    }
    /* width 1 is the identity; a width beyond the value floors to 0 or -W */
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 1), T_INT, "-7").v.i32, -7);
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, INT32_MAX), T_INT, "5").v.i32, 0);
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, INT32_MAX), T_LONG, "-5").v.i64,
                     -(long long)INT32_MAX);
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 1000), T_LONG, "-9223372036854775000").v.i64,
                     INT64_C(-9223372036854775000));
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 1000), T_LONG, "9223372036854775807").v.i64,
                     INT64_C(9223372036854775000));
    /* the result type is the source type */
    w2l_type r;
    w2l_error err;
    ck_assert_ok(w2l__ice_transform_result(tr(W2L_ICE_T_TRUNCATE, 10), T_LONG, &r, &err), err);
    ck_assert_int_eq(r.id, W2L_TYPE_LONG);
    /* not for dates, timestamps or floating point */
    ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_TRUNCATE, 10), T_DATE, &r, &err),
                     W2L_SCHEMA);
    ck_assert_int_eq(w2l__ice_transform_result(tr(W2L_ICE_T_TRUNCATE, 10), T_DOUBLE, &r, &err),
                     W2L_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "truncate[10] does not apply to double"));
}
END_TEST

static void check_trunc_dec(w2l_type t, int32_t w, const char *in, const char *want)
{
    w2l_value out = apply(tr(W2L_ICE_T_TRUNCATE, w), t, in);
    char buf[64];
    w2l__decimal_format(out.v.dec, t.scale, buf, sizeof buf);
    ck_assert_msg(strcmp(buf, want) == 0, "truncate[%d] of %s: %s, want %s", (int)w, in, buf,
                  want);
}

/* scaled_W = decimal(W, scale): the width applies to the unscaled value. */
START_TEST(truncate_decimals)
{
    check_trunc_dec(dec(9, 2), 50, "10.65", "10.50"); /* the spec's example: 1065 -> 1050 */
    ck_assert_int_eq(apply(tr(W2L_ICE_T_TRUNCATE, 50), dec(9, 2), "10.65").v.dec.lo, 1050);
    check_trunc_dec(dec(9, 2), 50, "-10.65", "-11.00"); /* -1065 - 35 */
    check_trunc_dec(dec(9, 2), 50, "-10.50", "-10.50");
    check_trunc_dec(dec(9, 2), 50, "0.00", "0.00");
    check_trunc_dec(dec(9, 0), 3, "-1", "-3");
    /* beyond 64 bits */
    check_trunc_dec(dec(38, 2), 100, "12345678901234567890123456.78",
                    "12345678901234567890123456.00");
    check_trunc_dec(dec(38, 2), 100, "-12345678901234567890123456.78",
                    "-12345678901234567890123457.00");
    check_trunc_dec(dec(38, 0), INT32_MAX, "1234567890123456789012345678",
                    "1234567890123456788322333487");
    check_trunc_dec(dec(38, 0), INT32_MAX, "-1234567890123456789012345678",
                    "-1234567890123456790469817134");
    check_trunc_dec(dec(38, 0), 7, "99999999999999999999999999999999999999",
                    "99999999999999999999999999999999999998");
    /* floors below the column's precision, as Java's BigDecimal does: 39 digits */
    check_trunc_dec(dec(38, 0), 7, "-99999999999999999999999999999999999999",
                    "-100000000000000000000000000000000000005");
    /* a value just past 2^64 (18446744073709551616) */
    check_trunc_dec(dec(38, 0), 1000, "18446744073709551616", "18446744073709551000");
    check_trunc_dec(dec(38, 0), 1000, "-18446744073709551616", "-18446744073709552000");
}
END_TEST

/* Strings keep at most W code points (whole UTF-8 sequences); binary keeps W bytes. */
START_TEST(truncate_strings_and_binary)
{
    w2l_value in = val(T_STRING, "iceberg"), out;
    w2l_error err;
    ck_assert_ok(w2l__ice_transform_apply(tr(W2L_ICE_T_TRUNCATE, 3), T_STRING, &in, &out, &err),
                 err);
    ck_assert_uint_eq(out.v.bytes.len, 3);
    ck_assert(out.v.bytes.ptr == in.v.bytes.ptr); /* points into the input */
    ck_assert_int_eq(memcmp(out.v.bytes.ptr, "ice", 3), 0);
    /* a, n-tilde (2 bytes), b, euro sign (3 bytes), c, grinning face (4 bytes), d */
    static const char s[] = "a\xc3\xb1" "b\xe2\x82\xac" "c\xf0\x9f\x98\x80" "d";
    static const struct {
        int32_t w;
        size_t bytes;
    } v[] = {{1, 1}, {2, 3}, {3, 4}, {4, 7}, {5, 8}, {6, 12}, {7, 13}, {8, 13}, {1000, 13}};
    for (size_t i = 0; i < W2L_ARRAY_LEN(v); i++) {
        out = apply(tr(W2L_ICE_T_TRUNCATE, v[i].w), T_STRING, s);
        ck_assert_msg(out.v.bytes.len == v[i].bytes, "truncate[%d]: %zu bytes", (int)v[i].w,
                      out.v.bytes.len);
        ck_assert_int_eq(memcmp(out.v.bytes.ptr, s, v[i].bytes), 0);
    }
    out = apply(tr(W2L_ICE_T_TRUNCATE, 2), T_STRING, "");
    ck_assert_uint_eq(out.v.bytes.len, 0);
    /* binary: bytes, not code points (the spec's example 01 02 03 04 05 -> 01 02 03) */
    static const char b[] = "\x01\x02\x03\x04\x05";
    out = apply(tr(W2L_ICE_T_TRUNCATE, 3), T_BINARY, b);
    ck_assert_uint_eq(out.v.bytes.len, 3);
    ck_assert_int_eq(memcmp(out.v.bytes.ptr, "\x01\x02\x03", 3), 0);
    out = apply(tr(W2L_ICE_T_TRUNCATE, 2), T_BINARY, "\xc3\xb1\xc3\xb1");
    ck_assert_uint_eq(out.v.bytes.len, 2);
    out = apply(tr(W2L_ICE_T_TRUNCATE, 10), T_BINARY, "\xc3\xb1");
    ck_assert_uint_eq(out.v.bytes.len, 2);
}
END_TEST

/* Every transform gives null for null ("All transforms must return null for a null
 * input value"), with or without a value struct; void gives null for anything. */
START_TEST(nulls_give_null)
{
    static const struct {
        w2l__ice_tkind k;
        int32_t p;
        w2l_type src;
    } v[] = {{W2L_ICE_T_IDENTITY, 0, {W2L_TYPE_STRING, 0, 0}},
             {W2L_ICE_T_BUCKET, 16, {W2L_TYPE_LONG, 0, 0}},
             {W2L_ICE_T_BUCKET, 16, {W2L_TYPE_DECIMAL, 9, 2}},
             {W2L_ICE_T_TRUNCATE, 4, {W2L_TYPE_STRING, 0, 0}},
             {W2L_ICE_T_TRUNCATE, 4, {W2L_TYPE_DECIMAL, 38, 2}},
             {W2L_ICE_T_YEAR, 0, {W2L_TYPE_DATE, 0, 0}},
             {W2L_ICE_T_MONTH, 0, {W2L_TYPE_TIMESTAMP, 0, 0}},
             {W2L_ICE_T_DAY, 0, {W2L_TYPE_TIMESTAMPTZ, 0, 0}},
             {W2L_ICE_T_HOUR, 0, {W2L_TYPE_TIMESTAMP, 0, 0}},
             {W2L_ICE_T_VOID, 0, {W2L_TYPE_INT, 0, 0}}};
    for (size_t i = 0; i < W2L_ARRAY_LEN(v); i++) {
        w2l_value in, out;
        w2l_error err;
        memset(&in, 0, sizeof in);
        in.is_null = 1;
        memset(&out, 0xaa, sizeof out);
        ck_assert_ok(w2l__ice_transform_apply(tr(v[i].k, v[i].p), v[i].src, &in, &out, &err),
                     err);
        ck_assert_int_eq(out.is_null, 1);
        memset(&out, 0xaa, sizeof out);
        ck_assert_ok(w2l__ice_transform_apply(tr(v[i].k, v[i].p), v[i].src, NULL, &out, &err),
                     err);
        ck_assert_int_eq(out.is_null, 1);
    }
    w2l_value in = val(T_LONG, "42"), out;
    w2l_error err;
    ck_assert_ok(w2l__ice_transform_apply(tr(W2L_ICE_T_VOID, 0), T_LONG, &in, &out, &err), err);
    ck_assert_int_eq(out.is_null, 1);
    out = apply(tr(W2L_ICE_T_IDENTITY, 0), T_LONG, "42");
    ck_assert_int_eq(out.v.i64, 42);
    /* a transform that does not apply fails even for null */
    in.is_null = 1;
    ck_assert_int_eq(w2l__ice_transform_apply(tr(W2L_ICE_T_YEAR, 0), T_LONG, &in, &out, &err),
                     W2L_SCHEMA);
}
END_TEST

/* Transform names as partition specs store them, and back. */
START_TEST(transform_names)
{
    static const char *names[] = {"identity", "bucket[16]", "truncate[4]", "year", "month",
                                  "day", "hour", "void", "bucket[2147483647]"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(names); i++) {
        w2l__ice_transform t;
        w2l_error err;
        char buf[32];
        ck_assert_ok(w2l__ice_transform_parse(names[i], &t, &err), err);
        w2l__ice_transform_format(t, buf, sizeof buf);
        ck_assert_str_eq(buf, names[i]);
    }
    static const char *bad[] = {"bucket[0]", "bucket[-1]", "bucket[2147483648]", "bucket[]",
                                "truncate[4", "days", "Bucket[4]", ""};
    for (size_t i = 0; i < W2L_ARRAY_LEN(bad); i++) {
        w2l__ice_transform t;
        w2l_error err;
        ck_assert_int_eq(w2l__ice_transform_parse(bad[i], &t, &err), W2L_SCHEMA);
        ck_assert_ptr_nonnull(strstr(err.msg, "unknown partition transform"));
    }
}
END_TEST

/* Hive-style directories: Java's human-readable values, negative ones included. */
START_TEST(partition_path_values)
{
    w2l__ice_pfield pf[] = {
        {1, 1000, "ts_year", {W2L_ICE_T_YEAR, 0}, {W2L_TYPE_INT, 0, 0}},
        {1, 1001, "ts_month", {W2L_ICE_T_MONTH, 0}, {W2L_TYPE_INT, 0, 0}},
        {1, 1002, "ts_day", {W2L_ICE_T_DAY, 0}, {W2L_TYPE_DATE, 0, 0}},
        {1, 1003, "ts_hour", {W2L_ICE_T_HOUR, 0}, {W2L_TYPE_INT, 0, 0}},
        {2, 1004, "n_trunc", {W2L_ICE_T_TRUNCATE, 10}, {W2L_TYPE_LONG, 0, 0}},
        {3, 1005, "s", {W2L_ICE_T_IDENTITY, 0}, {W2L_TYPE_STRING, 0, 0}},
        {4, 1006, "id_bucket", {W2L_ICE_T_BUCKET, 16}, {W2L_TYPE_INT, 0, 0}},
    };
    w2l__ice_spec spec = {0, W2L_ARRAY_LEN(pf), pf};
    w2l_value v[W2L_ARRAY_LEN(pf)];
    const char *ts = "1969-12-31T23:59:59.999999";
    for (int i = 0; i < 4; i++) v[i] = apply(pf[i].transform, T_TS, ts);
    v[4] = apply(pf[4].transform, T_LONG, "-1");
    v[5] = val(T_STRING, "a/b c=%");
    v[6] = apply(pf[6].transform, T_INT, "34");
    char *p = w2l__ice_partition_path(&spec, v);
    ck_assert_str_eq(p, "ts_year=1969/ts_month=1969-12/ts_day=1969-12-31/ts_hour=1969-12-31-23/"
                        "n_trunc=-10/s=a%2Fb%20c%3D%25/id_bucket=3");
    w2l__free(p);
    ts = "1900-01-01T00:00:00";
    for (int i = 0; i < 4; i++) v[i] = apply(pf[i].transform, T_TS, ts);
    for (int i = 4; i < 7; i++) v[i].is_null = 1;
    p = w2l__ice_partition_path(&spec, v);
    ck_assert_str_eq(p, "ts_year=1900/ts_month=1900-01/ts_day=1900-01-01/ts_hour=1900-01-01-00/"
                        "n_trunc=null/s=null/id_bucket=null");
    w2l__free(p);
    /* years below 1000 keep four digits */
    ts = "0001-01-01T00:00:00";
    for (int i = 0; i < 4; i++) v[i] = apply(pf[i].transform, T_TS, ts);
    p = w2l__ice_partition_path(&spec, v);
    ck_assert_ptr_nonnull(strstr(p, "ts_year=0001/ts_month=0001-01/ts_day=0001-01-01/"));
    w2l__free(p);
    w2l__ice_spec none = {0, 0, NULL};
    p = w2l__ice_partition_path(&none, NULL);
    ck_assert_str_eq(p, "");
    w2l__free(p);
}
END_TEST

/* ================================================================================= */
/* partition-by clauses                                                              */
/* ================================================================================= */

static w2l_schema *schema;

static void schema_setup(void)
{
    w2l_error err;
    schema = w2l_schema_new(0);
    static const struct {
        int32_t id;
        const char *name;
        w2l_type type;
    } f[] = {
        {1, "id", {W2L_TYPE_LONG, 0, 0}},        {2, "Name", {W2L_TYPE_STRING, 0, 0}},
        {3, "ts", {W2L_TYPE_TIMESTAMP, 0, 0}},   {4, "d", {W2L_TYPE_DATE, 0, 0}},
        {5, "price", {W2L_TYPE_DECIMAL, 9, 2}},  {6, "tz", {W2L_TYPE_TIMESTAMPTZ, 0, 0}},
        {7, "t", {W2L_TYPE_TIME, 0, 0}},         {8, "blob", {W2L_TYPE_BINARY, 0, 0}},
        {9, "score", {W2L_TYPE_DOUBLE, 0, 0}},   {10, "my col", {W2L_TYPE_INT, 0, 0}},
        {11, "we\"ird`", {W2L_TYPE_INT, 0, 0}},  {12, "Aa", {W2L_TYPE_INT, 0, 0}},
        {13, "aA", {W2L_TYPE_INT, 0, 0}},        {14, "x_day", {W2L_TYPE_INT, 0, 0}},
        {15, "x", {W2L_TYPE_DATE, 0, 0}},        {16, "n", {W2L_TYPE_INT, 0, 0}},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(f); i++)
        ck_assert_ok(w2l_schema_add_field(schema, f[i].id, f[i].name, f[i].type, 0, &err), err);
}

static void schema_teardown(void)
{
    w2l_schema_unref(schema);
    schema = NULL;
}

/* The spec as text: "name:source:transform:type@field_id, ...". */
static const char *spec_text(const w2l__ice_spec *s)
{
    static char buf[1024];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nfields; i++) {
        const w2l__ice_pfield *f = &s->fields[i];
        char tb[32], yb[32];
        w2l__ice_transform_format(f->transform, tb, sizeof tb);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%d:%s:%s@%d", i ? ", " : "", f->name,
                              (int)f->source_id, tb, w2l_type_format(f->type, yb, sizeof yb),
                              (int)f->field_id);
    }
    return buf;
}

static void parse_ok(const char *text, const w2l_schema *s, const char *want)
{
    w2l__ice_spec spec;
    w2l_error err;
    ck_assert_msg(w2l__ice_spec_parse(text, s, &spec, &err) == W2L_OK, "%s: %s", text, err.msg);
    ck_assert_msg(strcmp(spec_text(&spec), want) == 0, "%s\n got  %s\n want %s", text,
                  spec_text(&spec), want);
    ck_assert_int_eq(spec.spec_id, 0);
    w2l__ice_spec_release(&spec);
    ck_assert_ptr_null(spec.fields);
}

/* The error of text: W2L_SCHEMA, nothing left in out, and a message quoting the clause
 * and containing each of the pieces. */
static void parse_bad(const char *text, const w2l_schema *s, const char *piece1,
                      const char *piece2)
{
    w2l__ice_spec spec;
    w2l_error err;
    memset(&spec, 0x55, sizeof spec);
    w2l_rc rc = w2l__ice_spec_parse(text, s, &spec, &err);
    ck_assert_msg(rc == W2L_SCHEMA, "%s: %s (%s)", text, w2l_rc_name(rc), err.msg);
    ck_assert_int_eq(err.code, W2L_SCHEMA);
    ck_assert_uint_eq(spec.nfields, 0);
    ck_assert_ptr_null(spec.fields);
    char quoted[256];
    snprintf(quoted, sizeof quoted, "partition-by '%s'", text);
    ck_assert_msg(strstr(err.msg, quoted), "%s: clause not quoted in: %s", text, err.msg);
    ck_assert_msg(strstr(err.msg, piece1), "%s: no \"%s\" in: %s", text, piece1, err.msg);
    if (piece2)
        ck_assert_msg(strstr(err.msg, piece2), "%s: no \"%s\" in: %s", text, piece2, err.msg);
}

START_TEST(parse_spark_and_trino_forms)
{
    /* Spark: count first; Trino: column first */
    parse_ok("bucket(16, id)", schema, "id_bucket:1:bucket[16]:int@1000");
    parse_ok("bucket(id, 16)", schema, "id_bucket:1:bucket[16]:int@1000");
    parse_ok("truncate(4, Name)", schema, "Name_trunc:2:truncate[4]:string@1000");
    parse_ok("truncate(Name, 4)", schema, "Name_trunc:2:truncate[4]:string@1000");
    parse_ok("truncate(50, price)", schema, "price_trunc:5:truncate[50]:decimal(9,2)@1000");
    parse_ok("bucket(2147483647, id)", schema, "id_bucket:1:bucket[2147483647]:int@1000");
    /* identity, bare or spelled out */
    parse_ok("id", schema, "id:1:identity:long@1000");
    parse_ok("identity(price)", schema, "price:5:identity:decimal(9,2)@1000");
    /* singular and plural time transforms, Spark's date and date_hour */
    parse_ok("year(a), month(b), day(c), hour(e)", NULL,
             "a_year:0:year:int@1000, b_month:0:month:int@1001, c_day:0:day:int@1002, "
             "e_hour:0:hour:int@1003");
    parse_ok("years(ts)", schema, "ts_year:3:year:int@1000");
    parse_ok("months(d)", schema, "d_month:4:month:int@1000");
    parse_ok("days(ts)", schema, "ts_day:3:day:date@1000");
    parse_ok("hours(tz)", schema, "tz_hour:6:hour:int@1000");
    parse_ok("date(tz)", schema, "tz_day:6:day:date@1000");
    parse_ok("date_hour(ts)", schema, "ts_hour:3:hour:int@1000");
    /* result types: day of a date and of a timestamp is a date, bucket of anything an int */
    parse_ok("day(d), bucket(8, ts), bucket(8, t), bucket(3, price), bucket(3, blob)", schema,
             "d_day:4:day:date@1000, ts_bucket:3:bucket[8]:int@1001, "
             "t_bucket:7:bucket[8]:int@1002, price_bucket:5:bucket[3]:int@1003, "
             "blob_bucket:8:bucket[3]:int@1004");
    parse_ok("truncate(blob, 3)", schema, "blob_trunc:8:truncate[3]:binary@1000");
    /* several fields, ids in order */
    parse_ok(
        "days(ts), bucket(16, id), Name", schema,
        "ts_day:3:day:date@1000, id_bucket:1:bucket[16]:int@1001, Name:2:identity:string@1002");
    /* the same column under a time transform and another kind is fine */
    parse_ok(
        "day(ts), bucket(4, ts), ts", schema,
        "ts_day:3:day:date@1000, ts_bucket:3:bucket[4]:int@1001, ts:3:identity:timestamp@1002");
}
END_TEST

START_TEST(format_round_trips)
{
    /* the clause w2l tables prints parses back to the same spec */
    static const char *const clauses[] = {"day(ts), bucket(16, id), Name", "truncate(4, Name)",
                                          "hour(tz), month(d), year(ts)", ""};
    static const char *const formatted[] = {"day(ts), bucket(16, id), Name", "truncate(4, Name)",
                                            "hour(tz), month(d), year(ts)", ""};
    w2l_error err;
    for (size_t i = 0; i < sizeof clauses / sizeof *clauses; i++) {
        w2l__ice_spec a, b;
        ck_assert_ok(w2l__ice_spec_parse(clauses[i], schema, &a, &err), err);
        char *text = w2l__ice_spec_format(&a, schema);
        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, formatted[i]);
        ck_assert_ok(w2l__ice_spec_parse(text, schema, &b, &err), err);
        ck_assert(w2l__ice_spec_same(&a, &b));
        w2l__free(text);
        w2l__ice_spec_release(&a);
        w2l__ice_spec_release(&b);
    }
    /* without a schema, source columns are named by field id */
    w2l__ice_spec c;
    ck_assert_ok(w2l__ice_spec_parse("bucket(8, id)", schema, &c, &err), err);
    char *text = w2l__ice_spec_format(&c, NULL);
    ck_assert_str_eq(text, "bucket(8, 1)");
    w2l__free(text);
    w2l__ice_spec_release(&c);
}
END_TEST

START_TEST(parse_names_and_blanks)
{
    /* names match without regard to case and take the schema's spelling */
    parse_ok("NAME", schema, "Name:2:identity:string@1000");
    parse_ok("BUCKET(16, ID), Days(TS)", schema,
             "id_bucket:1:bucket[16]:int@1000, ts_day:3:day:date@1001");
    /* an exact spelling wins over the others that match without case */
    parse_ok("aA", schema, "aA:13:identity:int@1000");
    /* backquotes and double quotes, doubled quotes inside */
    parse_ok("`my col`, bucket(4, \"Name\")", schema,
             "my col:10:identity:int@1000, Name_bucket:2:bucket[4]:int@1001");
    parse_ok("\"we\"\"ird`\"", schema, "we\"ird`:11:identity:int@1000");
    parse_ok("`we\"ird```", schema, "we\"ird`:11:identity:int@1000");
    parse_ok("truncate(`Name`, 2)", schema, "Name_trunc:2:truncate[2]:string@1000");
    /* blanks anywhere between tokens */
    parse_ok(" \t bucket ( 16 ,\n id ) ,days( ts )\r\n", schema,
             "id_bucket:1:bucket[16]:int@1000, ts_day:3:day:date@1001");
    parse_ok("bucket(+16,id)", schema, "id_bucket:1:bucket[16]:int@1000");
    /* without a schema: syntax only, names as written, source 0, type int */
    parse_ok("Bucket(16, `Some Col`), days(\"TS\"), whatever", NULL,
             "Some Col_bucket:0:bucket[16]:int@1000, TS_day:0:day:int@1001, "
             "whatever:0:identity:int@1002");
    parse_ok("truncate(x, 10)", NULL, "x_trunc:0:truncate[10]:int@1000");
    /* a name may start with a digit, and UTF-8 is taken as it is */
    parse_ok("1col, caf\xc3\xa9", NULL,
             "1col:0:identity:int@1000, caf\xc3\xa9:0:identity:int@1001");
    /* nothing: an unpartitioned spec */
    static const char *blank[] = {"", "   ", "\t\n"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(blank); i++) {
        w2l__ice_spec spec;
        w2l_error err;
        ck_assert_ok(w2l__ice_spec_parse(blank[i], schema, &spec, &err), err);
        ck_assert_uint_eq(spec.nfields, 0);
        ck_assert_ptr_null(spec.fields);
        w2l__ice_spec_release(&spec);
    }
}
END_TEST

START_TEST(parse_errors)
{
    /* unknown transform, with its offset */
    parse_bad("id, foo(ts)", schema, "unknown transform 'foo'", "at offset 4");
    parse_bad("void(id)", schema, "unknown transform 'void'", NULL);
    parse_bad("`bucket`(16, id)", schema, "is not a transform", "at offset 0");
    /* missing ')' */
    parse_bad("bucket(16, id", schema, "missing ')'", "at offset 13");
    parse_bad("days(ts, ", schema, "missing ')'", NULL);
    parse_bad("days(ts id)", schema, "expected ',' or ')', found 'id'", "at offset 8");
    /* N and W: positive 32-bit integers */
    parse_bad("bucket(0, id)", schema, "bucket count '0' is not a positive 32-bit integer",
              "at offset 7");
    parse_bad("bucket(id, -4)", schema, "bucket count '-4' is not a positive", NULL);
    parse_bad("bucket(2147483648, id)", schema, "'2147483648' is not a positive 32-bit", NULL);
    parse_bad("truncate(Name, 99999999999999999999999)", schema,
              "truncate width '99999999999999999999999' is not a positive", NULL);
    parse_bad("bucket(- 4, id)", schema, "expected a number after '-'", NULL);
    /* arguments */
    parse_bad("bucket(16)", schema, "bucket takes a number and a column", NULL);
    parse_bad("bucket(id, Name)", schema, "bucket takes a number and a column", NULL);
    parse_bad("bucket(4, 16)", schema, "takes a number and a column", NULL);
    parse_bad("truncate(1, id, 2)", schema, "truncate takes at most 2 arguments", NULL);
    parse_bad("days(ts, 3)", schema, "days takes one column", NULL);
    parse_bad("hour()", schema, "expected a column or a number, found ')'", NULL);
    parse_bad("year(4)", schema, "year takes one column", NULL);
    parse_bad("16", schema, "a number is not a column", NULL);
    /* unknown column, with the element and the offset */
    parse_bad("bucket(16, nope)", schema, "unknown column 'nope' in 'bucket(16, nope)'",
              "at offset 11");
    parse_bad("`my  col`", schema, "unknown column 'my  col'", NULL);
    parse_bad("AA", schema, "ambiguous", "'AA'");
    /* the transform does not apply to the column's type: clause, field and type named */
    parse_bad("day(Name)", schema, "'day(Name)': day does not apply to column 'Name' of type "
                                   "string",
              NULL);
    parse_bad("id, hours(d)", schema, "hour does not apply to column 'd' of type date",
              "at offset 4");
    parse_bad("bucket(4, score)", schema,
              "bucket[4] does not apply to column 'score' of type double", NULL);
    parse_bad("truncate(4, ts)", schema, "of type timestamp", NULL);
    /* duplicates: the same column and transform, however written */
    parse_bad("id, ID", schema, "duplicate field: 'ID' repeats 'id'", "at offset 4");
    parse_bad("days(ts), date(ts)", schema, "duplicate field", NULL);
    parse_bad("bucket(16, id), bucket(id, 16)", schema, "duplicate field", NULL);
    parse_bad("x, identity(x)", NULL, "duplicate field", NULL);
    /* two buckets of one column would share the name id_bucket */
    parse_bad("bucket(16, id), bucket(8, id)", schema, "duplicate partition name 'id_bucket'",
              NULL);
    /* two time transforms on one column are redundant */
    parse_bad("day(ts), hour(ts)", schema, "redundant", "'hour(ts)' and 'day(ts)'");
    parse_bad("years(d), months(d)", schema, "redundant", NULL);
    parse_bad("year(ts), month(TS)", NULL, "redundant", NULL);
    /* a partition name that is another column of the table */
    parse_bad("day(x)", schema, "partition name 'x_day' of 'day(x)' is a column of the table",
              NULL);
    /* empty elements */
    parse_bad("id,,ts", schema, "empty element", "at offset 3");
    parse_bad(",id", schema, "empty element", "at offset 0");
    parse_bad("id, ", schema, "empty element", "at offset 4");
    parse_bad(",", NULL, "empty element", NULL);
    /* garbage after an element */
    parse_bad("bucket(16, id) x", schema, "expected ',' or the end, found 'x'", "at offset 15");
    parse_bad("id)", schema, "found ')'", "at offset 2");
    parse_bad("id ts", NULL, "found 'ts'", NULL);
    parse_bad("days(ts);", schema, "found ';'", NULL);
    parse_bad("(id)", schema, "expected a column or a transform, found '('", NULL);
    /* quoting */
    parse_bad("`id", schema, "without its closing `", "at offset 0");
    parse_bad("id, \"Name", schema, "without its closing \"", "at offset 4");
    parse_bad("``", schema, "empty quoted name", NULL);
}
END_TEST

/* A long clause is cut in the message, which still says where. */
START_TEST(parse_error_long_clause)
{
    char text[400];
    size_t n = 0;
    for (int i = 0; i < 30; i++) n += (size_t)snprintf(text + n, sizeof text - n, "c%d, ", i);
    snprintf(text + n, sizeof text - n, "foo(x)");
    w2l__ice_spec spec;
    w2l_error err;
    ck_assert_int_eq(w2l__ice_spec_parse(text, NULL, &spec, &err), W2L_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "partition-by 'c0, c1, c2"));
    ck_assert_ptr_nonnull(strstr(err.msg, "...'"));
    char at[32];
    snprintf(at, sizeof at, "at offset %zu", n);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown transform 'foo'"));
    ck_assert_ptr_nonnull(strstr(err.msg, at));
    ck_assert_uint_eq(spec.nfields, 0);
}
END_TEST

/* Every allocation of a parse, success or error, failing in turn: W2L_NOMEM, nothing
 * left behind, and the same spec once memory suffices. */
START_TEST(parse_out_of_memory)
{
    static const char *texts[] = {"bucket(16, `id`), days(ts), Name, truncate(\"Name\", 3)",
                                  "bucket(16, id), bucket(8, id)", "day(ts), hour(ts)"};
    fail_alloc_install();
    for (size_t i = 0; i < W2L_ARRAY_LEN(texts); i++) {
        w2l_rc want;
        {
            w2l__ice_spec spec;
            w2l_error err;
            want = w2l__ice_spec_parse(texts[i], schema, &spec, &err);
            w2l__ice_spec_release(&spec);
        }
        int done = 0;
        for (long nth = 0; nth < 1000 && !done; nth++) {
            long base = fail_alloc_outstanding();
            w2l__ice_spec spec;
            w2l_error err;
            fail_alloc_arm(nth);
            w2l_rc rc = w2l__ice_spec_parse(texts[i], schema, &spec, &err);
            fail_alloc_arm(-1);
            ck_assert_msg(rc == want || rc == W2L_NOMEM, "%s nth %ld: %s", texts[i], nth, err.msg);
            if (rc != W2L_OK) {
                ck_assert_ptr_null(spec.fields);
                ck_assert_uint_eq(spec.nfields, 0);
            }
            done = rc == want;
            if (rc == W2L_OK) ck_assert_uint_eq(spec.nfields, 4);
            w2l__ice_spec_release(&spec);
            ck_assert_msg(fail_alloc_outstanding() == base, "%s nth %ld: %ld blocks leaked",
                          texts[i], nth, fail_alloc_outstanding() - base);
        }
        ck_assert(done);
    }
}
END_TEST

/* ================================================================================= */
/* spec comparison and evolution                                                     */
/* ================================================================================= */

static w2l__ice_spec parse(const char *text)
{
    w2l__ice_spec spec;
    w2l_error err;
    ck_assert_ok(w2l__ice_spec_parse(text, schema, &spec, &err), err);
    return spec;
}

START_TEST(spec_same)
{
    w2l__ice_spec a = parse("bucket(16, id), days(ts)"), b = parse("BUCKET(id, 16), date(TS)"),
                  c = parse("bucket(8, id), days(ts)"), d = parse("days(ts), bucket(16, id)"),
                  e = parse("bucket(16, id)"), z = parse("");
    ck_assert_int_eq(w2l__ice_spec_same(&a, &b), 1);
    ck_assert_int_eq(w2l__ice_spec_same(&a, &a), 1);
    ck_assert_int_eq(w2l__ice_spec_same(&a, &c), 0); /* another bucket count */
    ck_assert_int_eq(w2l__ice_spec_same(&a, &d), 0); /* another order */
    ck_assert_int_eq(w2l__ice_spec_same(&a, &e), 0); /* fewer fields */
    ck_assert_int_eq(w2l__ice_spec_same(&e, &a), 0);
    /* ids and names aside */
    b.fields[0].field_id = 1007;
    w2l__free(b.fields[1].name);
    b.fields[1].name = w2l__strdup("renamed");
    b.spec_id = 3;
    ck_assert_int_eq(w2l__ice_spec_same(&a, &b), 1);
    /* unpartitioned: no fields or no spec at all */
    ck_assert_int_eq(w2l__ice_spec_same(&z, NULL), 1);
    ck_assert_int_eq(w2l__ice_spec_same(NULL, NULL), 1);
    ck_assert_int_eq(w2l__ice_spec_same(&e, NULL), 0);
    ck_assert_int_eq(w2l__ice_spec_same(NULL, &e), 0);
    w2l__ice_spec *all[] = {&a, &b, &c, &d, &e, &z};
    for (size_t i = 0; i < W2L_ARRAY_LEN(all); i++) w2l__ice_spec_release(all[i]);
}
END_TEST

/* "spec-id:field_id name transform, ..." of every spec of m, then "default N last M". */
static const char *specs_text(const w2l__ice_meta *m)
{
    static char buf[2048];
    size_t n = 0;
    for (size_t i = 0; i < m->nspecs; i++) {
        const w2l__ice_spec *s = &m->specs[i];
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d[", (int)s->spec_id);
        for (size_t k = 0; k < s->nfields; k++) {
            char tb[32], yb[32];
            w2l__ice_transform_format(s->fields[k].transform, tb, sizeof tb);
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d %s %d %s %s", k ? ", " : "",
                                  (int)s->fields[k].field_id, s->fields[k].name,
                                  (int)s->fields[k].source_id, tb,
                                  w2l_type_format(s->fields[k].type, yb, sizeof yb));
        }
        n += (size_t)snprintf(buf + n, sizeof buf - n, "] ");
    }
    snprintf(buf + n, sizeof buf - n, "default %d last %d", (int)m->default_spec_id,
             (int)m->last_partition_id);
    return buf;
}

static void set_spec(w2l__ice_meta *m, const char *text, int want_changed, const char *want)
{
    w2l__ice_spec s = parse(text);
    w2l_error err;
    int changed = -1;
    ck_assert_ok(w2l__ice_meta_set_spec(m, &s, &changed, &err), err);
    w2l__ice_spec_release(&s);
    ck_assert_msg(changed == want_changed, "%s: changed %d", text, changed);
    ck_assert_msg(strcmp(specs_text(m), want) == 0, "%s\n got  %s\n want %s", text,
                  specs_text(m), want);
}

START_TEST(meta_set_spec_evolution)
{
    w2l__ice_spec s0 = parse("bucket(16, id), days(ts)");
    w2l__ice_meta *m;
    w2l_error err;
    ck_assert_ok(w2l__ice_meta_new("mem://wh/db/t", schema, &s0, NULL, &m, &err), err);
    w2l__ice_spec_release(&s0);
    const char *v0 = "0[1000 id_bucket 1 bucket[16] int, 1001 ts_day 3 day date] ";
    ck_assert_str_eq(specs_text(m), "0[1000 id_bucket 1 bucket[16] int, 1001 ts_day 3 day date] "
                                    "default 0 last 1001");
    /* the default again: nothing changes */
    set_spec(m, "bucket(id, 16), date(ts)", 0, "0[1000 id_bucket 1 bucket[16] int, "
                                               "1001 ts_day 3 day date] default 0 last 1001");
    /* a new spec: the next spec id; day(ts) keeps 1001, truncate(Name) takes 1002 */
    const char *v1 = "1[1001 ts_day 3 day date, 1002 Name_trunc 2 truncate[4] string] ";
    char want[1024];
    snprintf(want, sizeof want, "%s%sdefault 1 last 1002", v0, v1);
    set_spec(m, "days(ts), truncate(4, Name)", 1, want);
    /* the first spec again: reused and default again, nothing added */
    snprintf(want, sizeof want, "%s%sdefault 0 last 1002", v0, v1);
    set_spec(m, "bucket(16, id), days(ts)", 1, want);
    /* another bucket count is another field: 1003; day(ts) still 1001 */
    const char *v2 = "2[1003 id_bucket 1 bucket[8] int, 1001 ts_day 3 day date] ";
    snprintf(want, sizeof want, "%s%s%sdefault 2 last 1003", v0, v1, v2);
    set_spec(m, "bucket(8, id), day(ts)", 1, want);
    /* unpartitioned: spec 3 with no fields, last-partition-id unchanged */
    snprintf(want, sizeof want, "%s%s%s3[] default 3 last 1003", v0, v1, v2);
    set_spec(m, "", 1, want);
    set_spec(m, " ", 0, want);
    /* a field of an older spec that is not the default comes back with its id */
    const char *v4 = "4[1002 Name_trunc 2 truncate[4] string, 1000 id_bucket 1 bucket[16] int] ";
    snprintf(want, sizeof want, "%s%s%s3[] %sdefault 4 last 1003", v0, v1, v2, v4);
    set_spec(m, "truncate(Name, 4), bucket(16, id)", 1, want);
    /* the metadata reads back with the same specs */
    char *json;
    size_t len;
    ck_assert_ok(w2l__ice_meta_print(m, &json, &len, &err), err);
    w2l__ice_meta *back;
    ck_assert_ok(w2l__ice_meta_parse(json, len, &back, &err), err);
    ck_assert_str_eq(specs_text(back), want);
    w2l__free(json);
    w2l__ice_meta_free(back);
    w2l__ice_meta_free(m);
}
END_TEST

/* A table created unpartitioned: spec 0 has no fields and ids start at 1000. */
START_TEST(meta_set_spec_from_unpartitioned)
{
    w2l__ice_meta *m;
    w2l_error err;
    ck_assert_ok(w2l__ice_meta_new("mem://wh/db/u", schema, NULL, NULL, &m, &err), err);
    ck_assert_str_eq(specs_text(m), "0[] default 0 last 999");
    set_spec(m, "", 0, "0[] default 0 last 999");
    set_spec(m, "hours(tz), id", 1,
             "0[] 1[1000 tz_hour 6 hour int, 1001 id 1 identity long] default 1 last 1001");
    set_spec(m, "", 1,
             "0[] 1[1000 tz_hour 6 hour int, 1001 id 1 identity long] default 0 last 1001");
    w2l__ice_meta_free(m);
}
END_TEST

Suite *suite_ice_partition(void)
{
    Suite *s = suite_create("ice_partition");
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, appendix_b_bucket_values);
    tcase_add_test(golden, appendix_b_murmur3);
    tcase_add_test(golden, bucket_rules);
    suite_add_tcase(s, golden);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, time_transforms_before_1970);
    tcase_add_test(edge, truncate_integers);
    tcase_add_test(edge, truncate_decimals);
    tcase_add_test(edge, truncate_strings_and_binary);
    tcase_add_test(edge, nulls_give_null);
    tcase_add_test(edge, transform_names);
    tcase_add_test(edge, partition_path_values);
    suite_add_tcase(s, edge);
    TCase *parse_tc = tcase_create("parse");
    tcase_add_checked_fixture(parse_tc, schema_setup, schema_teardown);
    tcase_add_test(parse_tc, parse_spark_and_trino_forms);
    tcase_add_test(parse_tc, parse_names_and_blanks);
    tcase_add_test(parse_tc, format_round_trips);
    tcase_add_test(parse_tc, parse_errors);
    tcase_add_test(parse_tc, parse_error_long_clause);
    tcase_add_test(parse_tc, parse_out_of_memory);
    suite_add_tcase(s, parse_tc);
    TCase *spec = tcase_create("spec");
    tcase_add_checked_fixture(spec, schema_setup, schema_teardown);
    tcase_add_test(spec, spec_same);
    tcase_add_test(spec, meta_set_spec_evolution);
    tcase_add_test(spec, meta_set_spec_from_unpartitioned);
    suite_add_tcase(s, spec);
    return s;
}
