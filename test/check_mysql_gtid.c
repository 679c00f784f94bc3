/*
 * MySQL GTID sets (lib/source/mysql_gtid.c): gtid_executed text parsed and printed in
 * canonical form, transactions added and merged, membership, malformed text named in the
 * error, and the binary form of COM_BINLOG_DUMP_GTID / PREVIOUS_GTIDS against byte
 * vectors written out by hand from the layout (the comments give each field), both the
 * classic and the tagged (8.3+) format, plus corrupt binary forms.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "source/mysql_gtid.h"
#include "support/support.h"

#define U1 "3e11fa47-71ca-11e1-9e33-c80aa9429562"
#define U2 "8f6c0bf2-0c55-11ef-8a7d-0242ac120002"
static const uint8_t SID1[16] = {0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
                                 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62};
static const uint8_t SID2[16] = {0x8f, 0x6c, 0x0b, 0xf2, 0x0c, 0x55, 0x11, 0xef,
                                 0x8a, 0x7d, 0x02, 0x42, 0xac, 0x12, 0x00, 0x02};

/* text parsed into a new set, printed canonically */
static char *canon(const char *text)
{
    w2l__mygtids *s = w2l__mygtids_new();
    ck_assert_ptr_nonnull(s);
    w2l_error err;
    ck_assert_ok(w2l__mygtids_parse(s, text, &err), err);
    char *t = w2l__mygtids_format(s);
    ck_assert_ptr_nonnull(t);
    w2l__mygtids_free(s);
    return t;
}

#define CANON(in, want)                                                                    \
    do {                                                                                   \
        char *got_ = canon(in);                                                            \
        ck_assert_msg(!strcmp(got_, want), "'%s' -> '%s', want '%s'", in, got_, want);     \
        w2l_free(got_);                                                                    \
    } while (0)

START_TEST(text_round_trips_in_canonical_form)
{
    CANON("", "");
    CANON("  \n ", "");
    CANON(U1 ":1-5", U1 ":1-5");
    /* as the server prints gtid_executed: upper case is accepted, newlines after commas */
    CANON("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,\n" U2 ":1-100",
          U1 ":1-5:7," U2 ":1-100");
    /* UUIDs sorted, the same UUID twice merged, intervals sorted, touching ones joined */
    CANON(U2 ":3," U1 ":10-12:1-2, " U1 ":3-4:9", U1 ":1-4:9-12," U2 ":3");
    CANON(U1 ":5-7:1-9", U1 ":1-9");
    CANON(U1 " : 1 - 3 : 4", U1 ":1-4");
    /* 32 hex digits without dashes name the same UUID */
    CANON("3e11fa4771ca11e19e33c80aa9429562:1", U1 ":1");
    /* tags: lower-cased, sorted after the untagged intervals, each printed once */
    CANON(U1 ":Web:5:1-3:web:6-7", U1 ":web:1-3:5-7"); /* a tag holds until the next */
    CANON(U1 ":1-3:Web:5:" "6", U1 ":1-3:web:5-6");
    CANON(U1 ":zz:1," U1 ":aa:2:_x9:3", U1 ":_x9:3:aa:2:zz:1");
    CANON(U1 ":t1:1-2:t1:4", U1 ":t1:1-2:4");
    CANON(U1 ":9223372036854775806", U1 ":9223372036854775806");
}
END_TEST

START_TEST(add_merges_and_contains)
{
    w2l__mygtids *s = w2l__mygtids_new();
    w2l_error err;
    ck_assert(w2l__mygtids_empty(s));
    static const int64_t order[] = {5, 3, 9, 4, 1, 7, 8, 2, 6, 6, 10};
    const char *want[] = {U1 ":5",       U1 ":3:5",   U1 ":3:5:9",     U1 ":3-5:9",
                          U1 ":1:3-5:9", U1 ":1:3-5:7:9", U1 ":1:3-5:7-9", U1 ":1-5:7-9",
                          U1 ":1-9",     U1 ":1-9",   U1 ":1-10"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        ck_assert_ok(w2l__mygtids_add(s, SID1, NULL, 0, order[i], &err), err);
        char *t = w2l__mygtids_format(s);
        ck_assert_msg(!strcmp(t, want[i]), "after %lld: %s, want %s", (long long)order[i], t,
                      want[i]);
        w2l_free(t);
    }
    ck_assert(!w2l__mygtids_empty(s));
    ck_assert_ok(w2l__mygtids_add(s, SID2, "Alpha", 5, 42, &err), err);
    ck_assert(w2l__mygtids_contains(s, SID1, NULL, 0, 1));
    ck_assert(w2l__mygtids_contains(s, SID1, "", 0, 10));
    ck_assert(!w2l__mygtids_contains(s, SID1, NULL, 0, 11));
    ck_assert(!w2l__mygtids_contains(s, SID1, NULL, 0, 0));
    ck_assert(w2l__mygtids_contains(s, SID2, "alpha", 5, 42));
    ck_assert(w2l__mygtids_contains(s, SID2, "ALPHA", 5, 42)); /* tags ignore case */
    ck_assert(!w2l__mygtids_contains(s, SID2, NULL, 0, 42));
    ck_assert(!w2l__mygtids_contains(s, SID2, "alpha", 5, 41));
    /* an interval that swallows several */
    ck_assert_ok(w2l__mygtids_parse(s, U2 ":alpha:1-3:10:20-30:50, " U2 ":alpha:4-60", &err),
                 err);
    char *t = w2l__mygtids_format(s);
    ck_assert_str_eq(t, U1 ":1-10," U2 ":alpha:1-60");
    w2l_free(t);
    /* numbers outside 1..2^63-2 and bad tags are refused */
    ck_assert_int_eq(w2l__mygtids_add(s, SID1, NULL, 0, 0, &err), W2L_CORRUPT);
    ck_assert_int_eq(w2l__mygtids_add(s, SID1, NULL, 0, INT64_MAX, &err), W2L_CORRUPT);
    ck_assert_int_eq(w2l__mygtids_add(s, SID1, "9x", 2, 1, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "'9x'"), "%s", err.msg);
    w2l__mygtids_free(s);
    w2l__mygtids_free(NULL);
}
END_TEST

START_TEST(malformed_text_names_the_part)
{
    static const struct {
        const char *text, *part, *says;
    } bad[] = {
        {"3e11fa47-71ca-11e1-9e33:1", "'3e11fa47-71ca-11e1-9e33'", "is not a UUID"},
        {"3e11fa47x71ca-11e1-9e33-c80aa9429562:1", "'3e11fa47x71ca", "is not a UUID"},
        {"3e11fa47-71ca-11e1-9e33-c80aa942956g:1", "'3e11fa47", "is not a UUID"},
        {U1, "'" U1 "'", "has no transaction interval"},
        {U1 ":", "'" U1 "'", "empty element"},
        {U1 ":1-5::7", "'" U1 "'", "empty element"},
        {U1 ":0", "'0'", "is not an interval"},
        {U1 ":5-", "'5-'", "is not an interval"},
        {U1 ":1-x", "'1-x'", "is not an interval"},
        {U1 ":9223372036854775807", "'9223372036854775807'", "is not an interval"},
        {U1 ":7-3", "'7-3'", "ends before it starts"},
        {U1 ":1," U2 ":2,", "','", "separates nothing"},
        {U1 ":1,," U2 ":2", "','", "separates nothing"},
        {U1 ":web", "'web'", "tag without intervals"},
        {U1 ":web:db:1", "'web'", "tag without intervals"},
        {U1 ":1:9abc:2", "'9abc'", "is not a tag"},
        {U1 ":a-b:2", "'a-b'", "is not a tag"},
        {U1 ":a23456789012345678901234567890123:1", "'a2345678901234567890", "is not a tag"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w2l__mygtids *s = w2l__mygtids_new();
        w2l_error err;
        w2l_rc rc = w2l__mygtids_parse(s, bad[i].text, &err);
        ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, bad[i].part) &&
                          strstr(err.msg, bad[i].says) && strstr(err.msg, "MySQL GTID set '"),
                      "%s: %s: %s", bad[i].text, w2l_rc_name(rc), err.msg);
        w2l__mygtids_free(s);
    }
}
END_TEST

static void check_bytes(const w2l_buf *b, const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(b->len, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(b->data[i] == want[i], "byte %zu: %02x, want %02x", i, b->data[i], want[i]);
}

/* encodes text, compares with want, decodes want back to the same canonical text */
static void vector(const char *text, const uint8_t *want, size_t n)
{
    w2l__mygtids *s = w2l__mygtids_new(), *d = w2l__mygtids_new();
    w2l_error err;
    ck_assert_ok(w2l__mygtids_parse(s, text, &err), err);
    w2l_buf b = {0};
    ck_assert_ok(w2l__mygtids_encode(s, &b, &err), err);
    check_bytes(&b, want, n);
    ck_assert_ok(w2l__mygtids_decode(d, want, n, &err), err);
    char *a = w2l__mygtids_format(s), *c = w2l__mygtids_format(d);
    ck_assert_str_eq(a, c);
    w2l_free(a);
    w2l_free(c);
    w2l_buf_release(&b);
    w2l__mygtids_free(s);
    w2l__mygtids_free(d);
}

START_TEST(binary_classic_vectors)
{
    /* the empty set: n_sids 0 */
    static const uint8_t empty[] = {0, 0, 0, 0, 0, 0, 0, 0};
    vector("", empty, sizeof empty);
    /* U1:1-5:7 — u64 n_sids 1; the UUID's 16 bytes in text order; u64 n_intervals 2;
     * [1, 6) and [7, 8) as u64 start, u64 exclusive end: 8 + 16 + 8 + 2 * 16 = 64 bytes */
    static const uint8_t one[] = {
        0x01, 0, 0, 0, 0, 0, 0, 0,                                           /* n_sids */
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,                      /* uuid */
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,                      /* */
        0x02, 0, 0, 0, 0, 0, 0, 0,                                           /* n_intervals */
        0x01, 0, 0, 0, 0, 0, 0, 0, 0x06, 0, 0, 0, 0, 0, 0, 0,                /* [1, 6) */
        0x07, 0, 0, 0, 0, 0, 0, 0, 0x08, 0, 0, 0, 0, 0, 0, 0,                /* [7, 8) */
    };
    vector(U1 ":1-5:7", one, sizeof one);
    /* two UUIDs, in byte order; 300 = 0x12c, 2^32 = 00 00 00 00 01, 2^63-2's end 2^63-1 */
    static const uint8_t two[] = {
        0x02, 0, 0, 0, 0, 0, 0, 0,
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x2c, 0x01, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0x01, 0, 0, 0,          /* [300, 2^32+1) */
        0x8f, 0x6c, 0x0b, 0xf2, 0x0c, 0x55, 0x11, 0xef,
        0x8a, 0x7d, 0x02, 0x42, 0xac, 0x12, 0x00, 0x02,
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x01, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
    };
    vector(U2 ":1-9223372036854775806," U1 ":300-4294967296", two, sizeof two);
}
END_TEST

START_TEST(binary_tagged_vectors)
{
    /* U1:web:1-2 — header u64 1 << 56 | n_sids << 8 | 1 = 01 01 00 .. 00 01 (LE); uuid;
     * tag length 3 as MySQL's varlen (one byte: 3 << 1 = 06) and "web"; n_intervals 1;
     * [1, 3): 8 + 16 + 4 + 8 + 16 = 52 bytes */
    static const uint8_t one[] = {
        0x01, 0x01, 0, 0, 0, 0, 0, 0x01,
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
        0x06, 'w', 'e', 'b',
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x01, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0,
    };
    vector(U1 ":web:1-2", one, sizeof one);
    /* with a tag anywhere, untagged entries carry tag length 0 (00): U1:4 then U1:ab:5 */
    static const uint8_t mixed[] = {
        0x01, 0x02, 0, 0, 0, 0, 0, 0x01,
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
        0x00,
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x04, 0, 0, 0, 0, 0, 0, 0, 0x05, 0, 0, 0, 0, 0, 0, 0,
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
        0x04, 'a', 'b',
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x05, 0, 0, 0, 0, 0, 0, 0, 0x06, 0, 0, 0, 0, 0, 0, 0,
    };
    vector(U1 ":AB:5," U1 ":4", mixed, sizeof mixed);
    /* a writer may use a longer varlen: 2 bytes, one trailing 1 bit: (2 << 2 | 1) = 09 00 */
    static const uint8_t wide[] = {
        0x01, 0x01, 0, 0, 0, 0, 0, 0x01,
        0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
        0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62,
        0x09, 0x00, 'x', 'y',
        0x01, 0, 0, 0, 0, 0, 0, 0,
        0x01, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
    };
    w2l__mygtids *s = w2l__mygtids_new();
    w2l_error err;
    ck_assert_ok(w2l__mygtids_decode(s, wide, sizeof wide, &err), err);
    char *t = w2l__mygtids_format(s);
    ck_assert_str_eq(t, U1 ":xy:1");
    w2l_free(t);
    /* decoding adds to what the set holds */
    ck_assert_ok(w2l__mygtids_decode(s, one, sizeof one, &err), err);
    t = w2l__mygtids_format(s);
    ck_assert_str_eq(t, U1 ":web:1-2:xy:1");
    w2l_free(t);
    w2l__mygtids_free(s);
}
END_TEST

START_TEST(binary_corrupt)
{
    uint8_t v[80] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
                     0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62, 0x01, 0, 0, 0, 0, 0, 0, 0,
                     0x01, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0};
    w2l_error err;
    w2l__mygtids *s = w2l__mygtids_new();
    ck_assert_ok(w2l__mygtids_decode(s, v, 48, &err), err);
    for (size_t n = 0; n < 48; n++) { /* every truncation */
        ck_assert_int_eq(w2l__mygtids_decode(s, v, n, &err), W2L_CORRUPT);
        ck_assert_msg(strstr(err.msg, "MySQL GTID set (binary"), "%s", err.msg);
    }
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 49, &err), W2L_CORRUPT); /* a byte after */
    ck_assert_msg(strstr(err.msg, "1 bytes after"), "%s", err.msg);
    v[40] = 1; /* [1, 1): empty */
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 48, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "[1, 1)"), "%s", err.msg);
    v[40] = 3;
    v[32] = 0; /* starts at 0 */
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 48, &err), W2L_CORRUPT);
    v[32] = 1;
    v[24] = 0xff; /* 255 intervals in 16 bytes */
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 48, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "truncated"), "%s", err.msg);
    v[24] = 1;
    v[0] = 0xff; /* 255 UUIDs in 48 bytes */
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 48, &err), W2L_CORRUPT);
    v[0] = 1;
    v[7] = 2; /* format 2 is unknown */
    ck_assert_int_eq(w2l__mygtids_decode(s, v, 48, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "unknown format 2"), "%s", err.msg);
    /* tagged: a tag that is not one, and a tag longer than 32 */
    static const uint8_t badtag[] = {0x01, 0x01, 0, 0, 0, 0, 0, 0x01, 0x3e, 0x11, 0xfa, 0x47,
                                     0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42,
                                     0x95, 0x62, 0x04, '1', '-', 0x01, 0, 0, 0, 0, 0, 0, 0,
                                     0x01, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq(w2l__mygtids_decode(s, badtag, sizeof badtag, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "tag '1-'"), "%s", err.msg);
    uint8_t longtag[sizeof badtag];
    memcpy(longtag, badtag, sizeof badtag);
    longtag[24] = 33 << 1;
    ck_assert_int_eq(w2l__mygtids_decode(s, longtag, sizeof longtag, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "33 bytes"), "%s", err.msg);
    char *t = w2l__mygtids_format(s); /* only the good decode's set */
    ck_assert_str_eq(t, U1 ":1-2");
    w2l_free(t);
    w2l__mygtids_free(s);
}
END_TEST

Suite *suite_mysql_gtid(void)
{
    Suite *s = suite_create("mysql_gtid");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, text_round_trips_in_canonical_form);
    tcase_add_test(basic, add_merges_and_contains);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, malformed_text_names_the_part);
    tcase_add_test(edge, binary_corrupt);
    suite_add_tcase(s, edge);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, binary_classic_vectors);
    tcase_add_test(golden, binary_tagged_vectors);
    suite_add_tcase(s, golden);
    return s;
}
