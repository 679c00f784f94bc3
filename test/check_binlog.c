/*
 * The binlog decoder (lib/source/binlog*.c) without a server: the dump recorded from the
 * private MariaDB in test/data/binlog/stream.bin (every column type, DDL, a multi-table
 * transaction, XA, MINIMAL and FULL images; see its README) is played by a fake server
 * (test/support/binlog_replay.c) through libmariadb's packet layer to w2l__bl_open/fetch
 * and w2l__bl_decode_row, and the rendered stream must equal expected.txt, written by hand
 * from workload.sql. Then damaged copies of it: truncated events and row images, bad
 * lengths, unknown event types, each must end in a clear error (or be skipped), never a
 * crash; and MariaDB's variants of its events (compressed QUERY and rows events, GTIDs with
 * a commit id, an ignorable event of an unknown type) that must decode the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "support/support.h"
#include "support/binlog_replay.h"

#define EV_TYPE(pkt) ((pkt)[1 + 4])
enum {
    T_QUERY = 2,
    T_XID = 16,
    T_TABLE_MAP = 19,
    T_WRITE_V1 = 23,
    T_UPDATE_V1 = 24,
    T_DELETE_V1 = 25,
    T_CHECKPOINT = 161,
    T_GTID = 162,
    T_QUERY_COMPRESSED = 165,
    T_WRITE_COMPRESSED_V1 = 166
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

/* ---- MariaDB's events as our reader decodes them (no libmariadb parser) ---- */

/* The recording with each packet i replaced by pk[i]/ln[i] (NULL: as recorded). */
static w2l_rc replay_all(uint8_t **pk, const size_t *ln, char **text, w2l_error *err)
{
    const uint8_t **p = malloc(rec.npkts * sizeof *p);
    size_t *l = malloc(rec.npkts * sizeof *l);
    ck_assert(p && l);
    for (size_t i = 0; i < rec.npkts; i++) {
        p[i] = pk[i] ? pk[i] : rec.pkts[i];
        l[i] = pk[i] ? ln[i] : rec.lens[i];
    }
    fake_my_set_packets(srv, p, l, rec.npkts);
    free(p);
    free(l);
    return bl_replay_text(fake_my_port(srv), text, err);
}

static void free_all(uint8_t **pk)
{
    for (size_t i = 0; i < rec.npkts; i++) free(pk[i]);
    free(pk);
}

/* Packet k of type `type` whose bytes from `at` (in the packet, before the CRC) are
 * compressed as MariaDB's log_bin_compress does: 0x80 | n, the length in n bytes
 * big-endian, a zlib stream; hdr_byte and len_bytes override the header (0: as MariaDB). */
static uint8_t *compressed(size_t k, uint8_t type, size_t at, uint8_t hdr_byte, size_t *len)
{
    const uint8_t *src = rec.pkts[k];
    size_t plain = rec.lens[k] - 4 - at;
    uLongf zl = compressBound((uLong)plain);
    uint8_t *p = malloc(at + 5 + zl + 4);
    ck_assert(p != NULL);
    memcpy(p, src, at);
    p[1 + 4] = type;
    int n = plain > 0xFFFFFF ? 4 : plain > 0xFFFF ? 3 : plain > 0xFF ? 2 : 1;
    p[at] = hdr_byte ? hdr_byte : (uint8_t)(0x80 | n);
    for (int i = 0; i < n; i++) p[at + 1 + i] = (uint8_t)(plain >> (8 * (n - 1 - i)));
    ck_assert(compress2(p + at + 1 + n, &zl, src + at, (uLong)plain, 6) == Z_OK);
    *len = at + 1 + (size_t)n + zl + 4;
    reframe(p, *len);
    return p;
}

/* Where a QUERY packet's statement starts: post-header 13, status variables, db, NUL. */
static size_t query_sql_at(const uint8_t *pkt)
{
    const uint8_t *b = pkt + 1 + 19;
    return 1 + 19 + 13 + (size_t)(b[11] | b[12] << 8) + b[8] + 1;
}

/* Where a v1 rows packet's row images start: table id 6, flags 2, column count (one byte
 * in the recording), the bitmap (two for UPDATE). */
static size_t rows_data_at(const uint8_t *pkt)
{
    size_t o = 1 + 19 + 8, n = pkt[o], nb = (n + 7) / 8;
    ck_assert(n < 251);
    return o + 1 + nb * (EV_TYPE(pkt) == T_UPDATE_V1 ? 2 : 1);
}

/* log_bin_compress=ON: every QUERY as QUERY_COMPRESSED (165) and every rows event as
 * *_ROWS_COMPRESSED_V1 (166-168) decode to the same stream as the plain events. */
START_TEST(compressed_events_decode_as_plain)
{
    uint8_t **pk = calloc(rec.npkts, sizeof *pk);
    size_t *ln = calloc(rec.npkts, sizeof *ln);
    ck_assert(pk && ln);
    int nq = 0, nr = 0;
    for (size_t k = 0; k < rec.npkts; k++) {
        uint8_t t = rec.lens[k] > 1 + 19 ? EV_TYPE(rec.pkts[k]) : 0;
        if (t == T_QUERY) {
            pk[k] = compressed(k, T_QUERY_COMPRESSED, query_sql_at(rec.pkts[k]), 0, &ln[k]);
            nq++;
        } else if (t >= T_WRITE_V1 && t <= T_DELETE_V1) {
            pk[k] = compressed(k, (uint8_t)(T_WRITE_COMPRESSED_V1 + t - T_WRITE_V1),
                               rows_data_at(rec.pkts[k]), 0, &ln[k]);
            nr++;
        }
    }
    ck_assert_int_gt(nq, 10);
    ck_assert_int_gt(nr, 10);
    char path[1024];
    data_path(path, sizeof path, "expected.txt");
    char *want = test_slurp(path, NULL), *got = NULL;
    w2l_error err = {0};
    ck_assert_ok(replay_all(pk, ln, &got, &err), err);
    test_assert_same_text(got, want, "decoded compressed stream (expected.txt)");
    free(got);
    free(want);
    free_all(pk);
    free(ln);
}
END_TEST

/* A compressed event whose header names another algorithm, or a length zlib cannot reach,
 * or whose zlib stream is damaged: W2L_CORRUPT naming the event, never a crash. */
START_TEST(compressed_event_damage_fails)
{
    size_t k = nth_of(T_WRITE_V1, 0), at = rows_data_at(rec.pkts[k]);
    for (int c = 0; c < 4; c++) {
        size_t len;
        uint8_t *p = compressed(k, T_WRITE_COMPRESSED_V1, at, c == 0 ? 0x91 : 0, &len);
        if (c == 1) p[at + 1] = 0xFF; /* an uncompressed length of 65000+ bytes */
        if (c == 2) p[len - 6] ^= 0x55; /* the zlib stream's Adler-32 */
        if (c == 3) len = at + 3; /* nothing after the header */
        reframe(p, len);
        char *text = NULL;
        w2l_error err = {0};
        w2l_rc rc = replay_with(k, p, len, &text, &err);
        ck_assert_msg(rc == W2L_CORRUPT, "case %d: %s: %s", c, w2l_rc_name(rc), err.msg);
        ck_assert_msg(strstr(err.msg, "WRITE_ROWS_COMPRESSED (type 166)") &&
                          strstr(err.msg, "binlog.000002:"),
                      "case %d: unclear error: %s", c, err.msg);
        free(text);
        free(p);
    }
}
END_TEST

/* GTIDs of a group commit carry an 8-byte commit id after flags2 (FL_GROUP_COMMIT_ID,
 * 0x02), before the XID of an XA group: every GTID so written decodes the same. */
START_TEST(group_commit_gtids_decode)
{
    uint8_t **pk = calloc(rec.npkts, sizeof *pk);
    size_t *ln = calloc(rec.npkts, sizeof *ln);
    ck_assert(pk && ln);
    for (size_t k = 0; k < rec.npkts; k++) {
        if (rec.lens[k] <= 1 + 19 || EV_TYPE(rec.pkts[k]) != T_GTID) continue;
        const uint8_t *src = rec.pkts[k];
        size_t at = 1 + 19 + 13, rest = rec.lens[k] - at, len = rec.lens[k] + 8;
        int xa = (src[1 + 19 + 12] & 0xC0) != 0;
        uint8_t *p = malloc(len);
        ck_assert(p != NULL);
        memcpy(p, src, at);
        p[1 + 19 + 12] |= 0x02;
        for (int i = 0; i < 8; i++) p[at + i] = (uint8_t)(0xA0 + i); /* the commit id */
        /* padding to 21 bytes, or the XID part as it was */
        if (xa) memcpy(p + at + 8, src + at, rest);
        else {
            memset(p + at + 8, 0, rest - 4);
            len = 1 + 19 + 21 + 4;
        }
        reframe(p, len);
        pk[k] = p;
        ln[k] = len;
    }
    char path[1024];
    data_path(path, sizeof path, "expected.txt");
    char *want = test_slurp(path, NULL), *got = NULL;
    w2l_error err = {0};
    ck_assert_ok(replay_all(pk, ln, &got, &err), err);
    test_assert_same_text(got, want, "decoded stream with commit ids (expected.txt)");
    free(got);
    free(want);
    free_all(pk);
    free(ln);
}
END_TEST

/* An event type this reader does not know (a newer server's) that the server marks
 * LOG_EVENT_IGNORABLE_F (0x80) is skipped: the stream decodes as before. */
START_TEST(unknown_ignorable_event_is_skipped)
{
    size_t k = nth_of(T_CHECKPOINT, 0);
    uint8_t *p = copy_of(k, 0);
    p[1 + 4] = 107;
    p[1 + 17] |= 0x80;
    reframe(p, rec.lens[k]);
    char path[1024];
    data_path(path, sizeof path, "expected.txt");
    char *want = test_slurp(path, NULL), *got = NULL;
    w2l_error err = {0};
    ck_assert_ok(replay_with(k, p, rec.lens[k], &got, &err), err);
    test_assert_same_text(got, want, "stream with an ignorable event of type 107");
    free(got);
    free(want);
    free(p);
}
END_TEST

/* What make fuzz found in libmariadb's event parser (test/data/binlog/README): an event of
 * type 107 crashed mariadb_rpl_fetch while it formatted its error. Our reader refuses it
 * with W2L_CORRUPT naming the type, the binlog file and the event's position. */
START_TEST(unknown_type_107_names_type_and_position)
{
    char path[1024], why[256];
    bl_stream bad;
    data_path(path, sizeof path, "finding-unknown-type-107.bin");
    ck_assert_msg(bl_stream_load(path, &bad, why, sizeof why) == 0, "%s: %s", path, why);
    fake_my_set_packets(srv, bad.pkts, bad.lens, bad.npkts);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = bl_replay_text(fake_my_port(srv), &text, &err);
    ck_assert_msg(rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert_msg(strstr(err.msg, "type 107") && strstr(err.msg, "binlog.000002:1308") &&
                      strstr(err.msg, "ignorable"),
                  "unclear error: %s", err.msg);
    free(text);
    bl_stream_free(&bad);
}
END_TEST

/* The fuzzer's seed of MariaDB's variants (test/data/binlog/README): compressed events,
 * commit ids, an ignorable unknown event, a closing HEARTBEAT, all decode as recorded. */
START_TEST(variants_seed_decodes)
{
    char path[1024], why[256];
    bl_stream v;
    data_path(path, sizeof path, "seed-mariadb-variants.bin");
    ck_assert_msg(bl_stream_load(path, &v, why, sizeof why) == 0, "%s: %s", path, why);
    fake_my_set_packets(srv, v.pkts, v.lens, v.npkts);
    data_path(path, sizeof path, "expected.txt");
    char *want = test_slurp(path, NULL), *got = NULL;
    w2l_error err = {0};
    ck_assert_ok(bl_replay_text(fake_my_port(srv), &got, &err), err);
    test_assert_same_text(got, want, "seed-mariadb-variants.bin");
    free(got);
    free(want);
    bl_stream_free(&v);
}
END_TEST

/* Damaged MariaDB GTID and GTID_LIST events: short, lengths past the end. */
START_TEST(gtid_damage_fails)
{
    size_t kg = nth_of(T_GTID, 0), kl = nth_of(163, 0);
    struct { size_t k, len; int at; uint8_t v; const char *want; } c[] = {
        {kg, 1 + 19 + 12 + 4, -1, 0, "GTID (type 162)"},
        {kg, 0, 1 + 19 + 12, 0x02 | 0x08, "commit id"}, /* 19 bytes, no room for it */
        {kg, 0, 1 + 19 + 12, 0x40 | 0x08, NULL}, /* XID lengths from the padding: 0 */
        {kl, 0, 1 + 19, 0x05, "GTID_LIST (type 163)"},
        {kl, 1 + 19 + 2 + 4, -1, 0, "GTID_LIST (type 163)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        size_t len = c[i].len ? c[i].len : rec.lens[c[i].k];
        uint8_t *p = copy_of(c[i].k, 0);
        if (c[i].at >= 0) p[c[i].at] = c[i].v;
        reframe(p, len);
        char *text = NULL;
        w2l_error err = {0};
        w2l_rc rc = replay_with(c[i].k, p, len, &text, &err);
        if (c[i].want) {
            ck_assert_msg(rc == W2L_CORRUPT, "case %zu: %s: %s", i, w2l_rc_name(rc), err.msg);
            ck_assert_msg(strstr(err.msg, c[i].want), "case %zu: unclear error: %s", i, err.msg);
        } else if (rc != W2L_OK)
            ck_assert_msg(err.msg[0], "case %zu: %s without a message", i, w2l_rc_name(rc));
        free(text);
        free(p);
    }
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
    tcase_add_test(corrupt, unknown_type_107_names_type_and_position);
    tcase_add_test(corrupt, compressed_event_damage_fails);
    tcase_add_test(corrupt, gtid_damage_fails);
    tcase_set_timeout(corrupt, 60);
    suite_add_tcase(s, corrupt);
    TCase *mariadb = tcase_create("mariadb_events");
    tcase_add_checked_fixture(mariadb, setup, teardown);
    tcase_add_test(mariadb, compressed_events_decode_as_plain);
    tcase_add_test(mariadb, group_commit_gtids_decode);
    tcase_add_test(mariadb, unknown_ignorable_event_is_skipped);
    tcase_add_test(mariadb, variants_seed_decodes);
    tcase_set_timeout(mariadb, 60);
    suite_add_tcase(s, mariadb);
    return s;
}
