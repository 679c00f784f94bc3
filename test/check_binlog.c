/*
 * The binlog decoder (lib/source/binlog.c) without a server: the dump recorded from the
 * private MariaDB in test/data/binlog/stream.bin (every column type, DDL, a multi-table
 * transaction, XA, MINIMAL and FULL images; see its README) is played by a fake server
 * (test/support/binlog_replay.c) through libmariadb to w2l__bl_open/fetch and
 * w2l__bl_decode_row, and the rendered stream must equal expected.txt, written by hand
 * from workload.sql. Then damaged copies of it: truncated events and row images, bad
 * lengths, unknown event types, each must end in a clear error (or be skipped), never a
 * crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "support/binlog_replay.h"

#define EV_TYPE(pkt) ((pkt)[1 + 4])
enum {
    T_QUERY = 2,
    T_XID = 16,
    T_TABLE_MAP = 19,
    T_WRITE_V1 = 23,
    T_UPDATE_V1 = 24,
    T_DELETE_V1 = 25
};

static fake_my *srv;
static bl_stream rec;

static void data_path(char *buf, size_t size, const char *name)
{
    const char *src = getenv("W2L_SRCDIR");
    snprintf(buf, size, "%s/test/data/binlog/%s", src && *src ? src : ".", name);
}

static void setup(void)
{
    char path[1024], why[256];
    data_path(path, sizeof path, "stream.bin");
    ck_assert_msg(bl_stream_load(path, &rec, why, sizeof why) == 0, "%s: %s", path, why);
    srv = fake_my_start();
    ck_assert_msg(srv != NULL, "fake server did not start");
    fake_my_set_packets(srv, rec.pkts, rec.lens, rec.npkts);
}

static void teardown(void)
{
    fake_my_stop(srv);
    srv = NULL;
    bl_stream_free(&rec);
}

/* Index of the nth (0-based) packet of event type t. */
static size_t nth_of(uint8_t t, int nth)
{
    for (size_t i = 0; i < rec.npkts; i++)
        if (rec.lens[i] > 1 + 19 && EV_TYPE(rec.pkts[i]) == t && nth-- == 0) return i;
    ck_abort_msg("no event of type %u number %d in the recording", t, nth);
    return 0;
}

/* Plays the recording with packet k replaced by len bytes of p, and decodes it. */
static w2l_rc replay_with(size_t k, const uint8_t *p, size_t len, char **text, w2l_error *err)
{
    const uint8_t **pk = malloc(rec.npkts * sizeof *pk);
    size_t *ln = malloc(rec.npkts * sizeof *ln);
    ck_assert(pk && ln);
    memcpy(pk, rec.pkts, rec.npkts * sizeof *pk);
    memcpy(ln, rec.lens, rec.npkts * sizeof *ln);
    pk[k] = p;
    ln[k] = len;
    fake_my_set_packets(srv, pk, ln, rec.npkts);
    free(pk);
    free(ln);
    return bl_replay_text(fake_my_port(srv), text, err);
}

/* Sets the event length in the header (bytes 9..12 of the event) and the CRC. */
static void reframe(uint8_t *pkt, size_t len)
{
    uint32_t el = (uint32_t)(len - 1);
    for (int i = 0; i < 4; i++) pkt[1 + 9 + i] = (uint8_t)(el >> (8 * i));
    bl_packet_fix_crc(pkt, len);
}

static uint8_t *copy_of(size_t k, size_t extra)
{
    uint8_t *p = malloc(rec.lens[k] + extra);
    ck_assert(p != NULL);
    memcpy(p, rec.pkts[k], rec.lens[k]);
    return p;
}

/* Offset (in the packet) of a TABLE_MAP's column count: after the post-header and the
 * two length-prefixed, NUL-terminated names. */
static size_t tmap_ncols_at(const uint8_t *pkt)
{
    size_t o = 1 + 19 + 8;
    o += 1 + pkt[o] + 1;
    o += 1 + pkt[o] + 1;
    return o;
}

START_TEST(replay_matches_expected)
{
    char path[1024];
    data_path(path, sizeof path, "expected.txt");
    char *want = test_slurp(path, NULL), *got = NULL;
    w2l_error err = {0};
    w2l_rc rc = bl_replay_text(fake_my_port(srv), &got, &err);
    ck_assert_ok(rc, err);
    ck_assert(got != NULL);
    test_assert_same_text(got, want, "decoded stream (expected.txt)");
    free(got);
    free(want);
}
END_TEST

/* The decoder reads every event the recording holds, and the table cache hands back the
 * same map for a repeated TABLE_MAP of the same bytes. */
START_TEST(replay_twice_same_text)
{
    char *a = NULL, *b = NULL;
    w2l_error err = {0};
    ck_assert_ok(bl_replay_text(fake_my_port(srv), &a, &err), err);
    ck_assert_ok(bl_replay_text(fake_my_port(srv), &b, &err), err);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

/* A packet cut inside its event (the header still claims the full length, the checksum
 * is gone): the library's framing rejects it. */
START_TEST(truncated_event_fails)
{
    size_t k = nth_of(T_WRITE_V1, 0);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, rec.pkts[k], 1 + 19 + 6, &text, &err);
    ck_assert_msg(rc != W2L_OK, "a cut event was accepted");
    ck_assert_msg(strstr(err.msg, "binlog") != NULL, "unclear error: %s", err.msg);
    free(text);
}
END_TEST

/* A row image shorter than its columns need, in a well-framed event: our decoder names
 * the table and the column where it ran out. */
START_TEST(truncated_row_image_fails)
{
    size_t k = nth_of(T_WRITE_V1, 1); /* t_num: two rows */
    uint8_t *p = copy_of(k, 0);
    size_t len = rec.lens[k] - 10; /* 6 bytes of the last row, and the CRC moves up */
    reframe(p, len);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, p, len, &text, &err);
    ck_assert_int_eq(rc, W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "row image of w2l.t_num truncated at column") != NULL, "%s",
                  err.msg);
    free(text);
    free(p);
}
END_TEST

/* A TABLE_MAP refused as malformed: by libmariadb, which parses the column count, types
 * and metadata block first ("Malformed packet", W2L_SOURCE), or by our decoder
 * (W2L_CORRUPT). */
static int malformed(w2l_rc rc, const w2l_error *err)
{
    return (rc == W2L_SOURCE && strstr(err->msg, "binlog read from") &&
            strstr(err->msg, "Malformed packet")) ||
           (rc == W2L_CORRUPT && strstr(err->msg, "malformed TABLE_MAP event"));
}

/* A TABLE_MAP whose column count is larger than the event. */
START_TEST(table_map_bad_column_count_fails)
{
    size_t k = nth_of(T_TABLE_MAP, 0);
    uint8_t *p = copy_of(k, 0);
    size_t at = tmap_ncols_at(p);
    ck_assert_int_eq(p[at], 12); /* t_int */
    p[at] = 0xFA;                /* 250 columns, then type bytes past the end */
    reframe(p, rec.lens[k]);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, p, rec.lens[k], &text, &err);
    ck_assert_msg(malformed(rc, &err), "%s: %s", w2l_rc_name(rc), err.msg);
    free(text);
    free(p);
}
END_TEST

/* A TABLE_MAP whose metadata block claims more bytes than there are. */
START_TEST(table_map_bad_metadata_length_fails)
{
    size_t k = nth_of(T_TABLE_MAP, 1); /* t_num: metadata for decimals, floats and bits */
    uint8_t *p = copy_of(k, 0);
    size_t at = tmap_ncols_at(p);
    at += 1 + p[at]; /* the type bytes */
    ck_assert_uint_lt(p[at], 0xFB);
    p[at] = 0xFA;
    reframe(p, rec.lens[k]);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, p, rec.lens[k], &text, &err);
    ck_assert_msg(malformed(rc, &err), "%s: %s", w2l_rc_name(rc), err.msg);
    free(text);
    free(p);
}
END_TEST

/* A TABLE_MAP cut in its optional metadata (column names): the length there runs past
 * the event. */
START_TEST(table_map_cut_optional_metadata_fails)
{
    size_t k = nth_of(T_TABLE_MAP, 0);
    uint8_t *p = copy_of(k, 0);
    size_t len = rec.lens[k] - 20;
    reframe(p, len);
    char *text = NULL;
    w2l_error err = {0};
    ck_assert_int_eq(replay_with(k, p, len, &text, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "malformed TABLE_MAP event") != NULL, "%s", err.msg);
    free(text);
    free(p);
}
END_TEST

/* An event type no server writes (0x7E = 126), with a correct checksum, and without the
 * ignorable flag: refused with a message that names it. */
START_TEST(unknown_event_type_is_refused)
{
    size_t k = nth_of(T_XID, 0);
    uint8_t *p = copy_of(k, 0);
    p[1 + 4] = 0x7E;
    reframe(p, rec.lens[k]);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, p, rec.lens[k], &text, &err);
    ck_assert_msg(rc == W2L_SOURCE || rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert_msg(strstr(err.msg, "binlog") && strstr(err.msg, "126"), "unclear error: %s",
                  err.msg);
    free(text);
    free(p);
}
END_TEST

/* What the fuzzer found (test/data/binlog/README): a DATETIME2 with its sign bit clear
 * decodes to a negative month; it must be a clear W2L_CORRUPT, not an overflow. */
START_TEST(datetime2_out_of_range_fails)
{
    char path[1024], why[256];
    bl_stream bad;
    data_path(path, sizeof path, "finding-datetime2-negative.bin");
    ck_assert_msg(bl_stream_load(path, &bad, why, sizeof why) == 0, "%s: %s", path, why);
    for (size_t i = 0; i < bad.npkts; i++) /* the fuzzer keeps inputs before it fixes checksums */
        if (bad.lens[i] > 1 + 19) bl_packet_fix_crc((uint8_t *)bad.pkts[i], bad.lens[i]);
    fake_my_set_packets(srv, bad.pkts, bad.lens, bad.npkts);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = bl_replay_text(fake_my_port(srv), &text, &err);
    ck_assert_msg(rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert_msg(strstr(err.msg, "dt0") && strstr(err.msg, "out of range"), "unclear error: %s",
                  err.msg);
    free(text);
    bl_stream_free(&bad);
}
END_TEST

/* An event shorter than the 19-byte header. */
START_TEST(event_shorter_than_header_fails)
{
    size_t k = nth_of(T_XID, 0);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = replay_with(k, rec.pkts[k], 1 + 12, &text, &err);
    ck_assert_msg(rc != W2L_OK, "a 12-byte event was accepted");
    ck_assert_msg(strstr(err.msg, "binlog") != NULL, "unclear error: %s", err.msg);
    free(text);
}
END_TEST

/* Every TABLE_MAP and rows event cut at many lengths, framed and checksummed so the cut
 * reaches our decoder: an error with a message, never a crash (ASan watches reads). */
START_TEST(every_cut_fails_cleanly)
{
    size_t cases = 0;
    for (size_t k = 0; k < rec.npkts; k++) {
        uint8_t t = rec.lens[k] > 1 + 19 ? EV_TYPE(rec.pkts[k]) : 0;
        if (t != T_TABLE_MAP && t != T_WRITE_V1 && t != T_UPDATE_V1 && t != T_DELETE_V1) continue;
        size_t full = rec.lens[k], step = full / 7 ? full / 7 : 1;
        for (size_t len = 1 + 19 + 4; len < full; len += step) {
            uint8_t *p = copy_of(k, 0);
            reframe(p, len);
            char *text = NULL;
            w2l_error err = {0};
            w2l_rc rc = replay_with(k, p, len, &text, &err);
            if (rc != W2L_OK)
                ck_assert_msg(err.msg[0] != '\0', "packet %zu cut to %zu: %s without a message", k,
                              len, w2l_rc_name(rc));
            free(text);
            free(p);
            cases++;
        }
    }
    ck_assert_uint_gt(cases, 100);
}
END_TEST

Suite *suite_binlog(void)
{
    Suite *s = suite_create("binlog");
    TCase *replay = tcase_create("replay");
    tcase_add_checked_fixture(replay, setup, teardown);
    tcase_add_test(replay, replay_matches_expected);
    tcase_add_test(replay, replay_twice_same_text);
    suite_add_tcase(s, replay);
    TCase *corrupt = tcase_create("corrupt");
    tcase_add_checked_fixture(corrupt, setup, teardown);
    tcase_add_test(corrupt, truncated_event_fails);
    tcase_add_test(corrupt, truncated_row_image_fails);
    tcase_add_test(corrupt, table_map_bad_column_count_fails);
    tcase_add_test(corrupt, table_map_bad_metadata_length_fails);
    tcase_add_test(corrupt, table_map_cut_optional_metadata_fails);
    tcase_add_test(corrupt, unknown_event_type_is_refused);
    tcase_add_test(corrupt, event_shorter_than_header_fails);
    tcase_add_test(corrupt, datetime2_out_of_range_fails);
    tcase_add_test(corrupt, every_cut_fails_cleanly);
    tcase_set_timeout(corrupt, 60);
    suite_add_tcase(s, corrupt);
    return s;
}
