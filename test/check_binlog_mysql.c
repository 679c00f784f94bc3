/*
 * The binlog decoder (lib/source/binlog_mysql.c, binlog_rows.c) for a MySQL server, without one:
 * binlog files recorded from MySQL 8.0-9.6 by another project (test/data/binlog/mysql8,
 * its README gives their origin, licence and where each expected value comes from) are
 * played by the fake server (test/support/binlog_replay.c) as a MySQL server sends a dump,
 * through libmariadb's packet reads to w2l__bl_open/fetch (mysql = 1) and
 * w2l__bl_decode_image; the rendered stream must equal the file's .expected, written by
 * hand from those stated values. What the recordings lack is built here: a
 * TRANSACTION_PAYLOAD compressed with zstd in the test, HEARTBEAT_V2, ROWS v2 extra data,
 * a GTID dump, and damaged events (bad CRC, cut payload, bad zstd frame).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "support/support.h"
#include "support/binlog_replay.h"
#include "source/mysql_gtid.h"

static fake_my *srv;

static void data_path(char *buf, size_t size, const char *name)
{
    const char *src = getenv("W2L_SRCDIR");
    snprintf(buf, size, "%s/test/data/binlog/mysql8/%s", src && *src ? src : ".", name);
}

static void setup(void)
{
    srv = fake_my_start();
    ck_assert_msg(srv != NULL, "fake server did not start");
    fake_my_set_mysql(srv, 1);
}

static void teardown(void)
{
    fake_my_stop(srv);
    srv = NULL;
}

/* Plays the binlog file name (as file "binlog.000001") and renders the decoded stream. */
static w2l_rc play_file(const char *name, char **text, w2l_error *err)
{
    char path[1024], why[256];
    data_path(path, sizeof path, name);
    size_t len;
    uint8_t *file = (uint8_t *)test_slurp(path, &len);
    bl_stream st;
    ck_assert_msg(bl_stream_from_binlog(file, len, "binlog.000001", &st, why, sizeof why) == 0,
                  "%s: %s", name, why);
    fake_my_set_packets(srv, st.pkts, st.lens, st.npkts);
    bl_stream_free(&st);
    free(file);
    return bl_replay_text_mysql(fake_my_port(srv), NULL, text, err);
}

static const char *const files[] = {
    "binlog_transaction_previous_GTID_no_tag.000001",
    "binlog_transaction_with_GTID_TAG.000001",
    "json-opaque.binlog",
    "json.binlog.000001",
    "minimal_row_metadata.000001",
    "time_issue.000001",
    "vector.binlog",
    "transaction_compression.000001",
    "mysql-enum-string-set.000001",
    "mysql_type_bit.000001",
    "binlog-invisible-columns.000001",
};
#define NFILES (sizeof files / sizeof *files)

/* Each recorded file decodes to its .expected (W2L_TEST_DUMP=1 prints what it got). */
START_TEST(recorded_file_matches_expected)
{
    const char *name = files[_i];
    char *got = NULL;
    w2l_error err = {0};
    w2l_rc rc = play_file(name, &got, &err);
    if (getenv("W2L_TEST_DUMP")) fprintf(stderr, "== %s (%s: %s)\n%s", name, w2l_rc_name(rc),
                                         rc ? err.msg : "", got ? got : "");
    if (rc != W2L_OK) { /* the refusal is part of what is expected */
        size_t gl = got ? strlen(got) : 0;
        char *g2 = realloc(got, gl + strlen(err.msg) + 64);
        ck_assert(g2 != NULL);
        snprintf(g2 + gl, strlen(err.msg) + 64, "ERROR %s: %s\n", w2l_rc_name(rc), err.msg);
        got = g2;
    }
    char path[1024], ename[300];
    snprintf(ename, sizeof ename, "%s.expected", name);
    data_path(path, sizeof path, ename);
    size_t len;
    char *want = test_slurp(path, &len);
    test_assert_same_text(got, want, name);
    free(want);
    free(got);
}
END_TEST

/* ---- a synthetic MySQL stream: what the recordings lack ---- */

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void add(bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        ck_assert(b->p != NULL);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void add_u8(bytes *b, unsigned v) { uint8_t c = (uint8_t)v; add(b, &c, 1); }
static void add_le(bytes *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) add_u8(b, i < 8 ? (unsigned)(v >> (8 * i)) & 0xFF : 0);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

/* An event (header + body [+ CRC32]) appended to out; log_pos as given. */
static void event(bytes *out, int type, uint32_t log_pos, const bytes *body, int crc)
{
    size_t at = out->n, len = 19 + body->n + (crc ? 4 : 0);
    add_le(out, 1700000000, 4);
    add_u8(out, (unsigned)type);
    add_le(out, 1, 4);
    add_le(out, len, 4);
    add_le(out, log_pos, 4);
    add_le(out, 0, 2);
    add(out, body->p, body->n);
    if (crc) add_le(out, crc32_of(out->p + at, len - 4), 4);
}

static const uint8_t SID[16] = {0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1,
                                0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62};

/* {"a":v} in MySQL's binary JSON: a small object of one int16 member. */
static void json_obj(bytes *b, int v)
{
    static const uint8_t head[] = {0x00, 1, 0, 12, 0, 11, 0, 1, 0, 0x05};
    add(b, head, sizeof head);
    add_le(b, (uint64_t)v, 2);
    add_u8(b, 'a');
}

/* The inner events of the payload: BEGIN, TABLE_MAP s.t (id INT NOT NULL, j JSON; FULL
 * metadata), WRITE_ROWS v2 with 3 bytes of extra data, PARTIAL_UPDATE_ROWS (before image
 * full, after image a REPLACE of $.a by 2), XID. Inner events carry no CRC. */
static void inner_events(bytes *out)
{
    bytes b = {0};
    add_le(&b, 9, 4); /* QUERY BEGIN: thread, time, db length, error, status length */
    add_le(&b, 0, 4);
    add_u8(&b, 1);
    add_le(&b, 0, 2);
    add_le(&b, 0, 2);
    add(&b, "s\0BEGIN", 7);
    event(out, 2, 0, &b, 0);
    b.n = 0;
    add_le(&b, 77, 6); /* TABLE_MAP */
    add_le(&b, 1, 2);
    add(&b, "\1s\0\1t\0", 6);
    add(&b, "\2\3\xf5", 3);        /* 2 columns: INT, JSON */
    add(&b, "\1\4", 2);            /* metadata: JSON length bytes 4 */
    add_u8(&b, 0x02);              /* null bitmap: j nullable */
    add(&b, "\4\5\2id\1j", 7);     /* COLUMN_NAME */
    add(&b, "\x08\1\0", 3);        /* SIMPLE_PRIMARY_KEY: column 0 */
    event(out, 19, 0, &b, 0);
    b.n = 0;
    add_le(&b, 77, 6); /* WRITE_ROWS v2 */
    add_le(&b, 1, 2);
    add_le(&b, 5, 2);              /* extra data: its length counts these 2 bytes */
    add(&b, "\1\2\3", 3);
    add(&b, "\2\3", 2);            /* 2 columns, both present */
    add_u8(&b, 0);                 /* null bitmap */
    add_le(&b, 1, 4);
    bytes j = {0};
    json_obj(&j, 1);
    add_le(&b, j.n, 4);
    add(&b, j.p, j.n);
    event(out, 30, 0, &b, 0);
    b.n = 0;
    add_le(&b, 77, 6); /* PARTIAL_UPDATE_ROWS */
    add_le(&b, 1, 2);
    add_le(&b, 2, 2);              /* no extra data */
    add(&b, "\2\3\3", 3);          /* 2 columns, before and after bitmaps */
    add_u8(&b, 0);                 /* before: null bitmap, id, j */
    add_le(&b, 1, 4);
    add_le(&b, j.n, 4);
    add(&b, j.p, j.n);
    add(&b, "\1\1", 2);            /* after: value options PARTIAL_JSON, partial bits: j */
    add_u8(&b, 0);
    add_le(&b, 1, 4);
    static const uint8_t diff[] = {0, 3, '$', '.', 'a', 3, 0x05, 2, 0};
    add_le(&b, sizeof diff, 4);
    add(&b, diff, sizeof diff);
    event(out, 39, 0, &b, 0);
    b.n = 0;
    add_le(&b, 99, 8); /* XID */
    event(out, 16, 0, &b, 0);
    free(b.p);
    free(j.p);
}

enum { ZSTD_OK, ZSTD_NONE, ZSTD_CUT, ZSTD_BAD_MAGIC, NONE_CUT_EVENT };

/* The payload event's body: fields (size, compression), end mark, payload. */
static void payload_body(bytes *b, int how)
{
    bytes raw = {0}, z = {0};
    inner_events(&raw);
    if (how == NONE_CUT_EVENT) raw.n -= 5;
    if (how == ZSTD_NONE || how == NONE_CUT_EVENT) {
        add(&z, raw.p, raw.n);
    } else { /* a frame without its content size, as the server writes them */
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
        z.cap = ZSTD_compressBound(raw.n);
        z.p = malloc(z.cap);
        z.n = ZSTD_compress2(cc, z.p, z.cap, raw.p, raw.n);
        ck_assert(!ZSTD_isError(z.n));
        ZSTD_freeCCtx(cc);
        if (how == ZSTD_CUT) z.n -= 6;
        if (how == ZSTD_BAD_MAGIC) z.p[0] ^= 0xFF;
    }
    add(b, "\1", 1); /* size */
    if (z.n < 251) add(b, "\1", 1), add_u8(b, (unsigned)z.n);
    else add(b, "\3", 1), add_u8(b, 0xFC), add_le(b, z.n, 2);
    add(b, "\2\1", 2); /* compression type */
    add_u8(b, how == ZSTD_NONE || how == NONE_CUT_EVENT ? 0xFF : 0);
    if (how == ZSTD_NONE || how == NONE_CUT_EVENT) {
        b->n -= 3; /* 255 does not fit one byte of lenenc: 2 bytes of value */
        add(b, "\2\3\xfc\xff\0", 5);
    }
    add(b, "\3\1", 2); /* uncompressed size */
    add_u8(b, raw.n < 251 ? (unsigned)raw.n : 250);
    add_u8(b, 0); /* end of the fields */
    add(b, z.p, z.n);
    free(raw.p);
    free(z.p);
}

/* Plays: the recorded file's ROTATE/FDE/PREVIOUS_GTIDS (CRC32 on), then GTID, the payload
 * (how), HEARTBEAT_V2. damage: 1 flips a byte of the GTID body (its CRC kept). */
static w2l_rc play_synthetic(int how, int damage, char **text, w2l_error *err)
{
    char path[1024], why[256];
    data_path(path, sizeof path, "binlog_transaction_previous_GTID_no_tag.000001");
    size_t len;
    uint8_t *file = (uint8_t *)test_slurp(path, &len);
    bl_stream st;
    ck_assert_msg(bl_stream_from_binlog(file, len - 44, "binlog.000001", &st, why, sizeof why) == 0,
                  "%s", why); /* without its closing ROTATE */
    uint32_t pos = (uint32_t)(len - 44);
    bytes ev = {0}, b = {0};
    add_u8(&b, 0); /* GTID: flags, sid, gno, logical clock */
    add(&b, SID, 16);
    add_le(&b, 7, 8);
    add_u8(&b, 2);
    add_le(&b, 0, 16);
    pos += 19 + (uint32_t)b.n + 4;
    event(&ev, 33, pos, &b, 1);
    if (damage == 1) ev.p[19 + 5] ^= 0x01;
    size_t gtid_end = ev.n;
    b.n = 0;
    payload_body(&b, how);
    pos += 19 + (uint32_t)b.n + 4;
    event(&ev, 40, pos, &b, 1);
    size_t pl_end = ev.n;
    b.n = 0;
    add(&b, "\1\x0d" "binlog.000099", 15); /* HEARTBEAT_V2: file, position, end mark */
    add(&b, "\2\x09\xfe", 3);
    add_le(&b, UINT64_C(8589934592), 8);
    add_u8(&b, 0);
    event(&ev, 41, 0, &b, 1);
    const uint8_t *pk[3];
    size_t ln[3];
    uint8_t *pkts = malloc(ev.n + 3);
    ck_assert(pkts != NULL);
    size_t cuts[4] = {0, gtid_end, pl_end, ev.n};
    for (int i = 0; i < 3; i++) {
        pkts[cuts[i] + (size_t)i] = 0;
        memcpy(pkts + cuts[i] + (size_t)i + 1, ev.p + cuts[i], cuts[i + 1] - cuts[i]);
        pk[i] = pkts + cuts[i] + i;
        ln[i] = cuts[i + 1] - cuts[i] + 1;
    }
    const uint8_t **all = malloc((st.npkts + 3) * sizeof *all);
    size_t *alen = malloc((st.npkts + 3) * sizeof *alen);
    memcpy(all, st.pkts, st.npkts * sizeof *all);
    memcpy(alen, st.lens, st.npkts * sizeof *alen);
    memcpy(all + st.npkts, pk, sizeof pk);
    memcpy(alen + st.npkts, ln, sizeof ln);
    fake_my_set_packets(srv, all, alen, st.npkts + 3);
    free(all);
    free(alen);
    free(pkts);
    free(ev.p);
    free(b.p);
    bl_stream_free(&st);
    free(file);
    return bl_replay_text_mysql(fake_my_port(srv), NULL, text, err);
}

static const char SYNTH[] =
    "ROTATE binlog.000001 4\n"
    "FDE\n"
    "PREVIOUS_GTIDS b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2\n"
    "GTID 3e11fa47-71ca-11e1-9e33-c80aa9429562:7\n"
    "QUERY s: BEGIN\n"
    "MAP s.t: id int not null, j json; pk id\n"
    "s.t I 1|{\"a\": 1}\n"
    "s.t UB 1|{\"a\": 1}\n"
    "s.t UA 1|{\"a\": 2}\n"
    "XID %u\n"
    "HEARTBEAT binlog.000099 8589934592\n";

/* The payload's inner events come out one by one, the last (XID) with the payload event's
 * next position; the ROWS v2 extra data is skipped; the partial JSON update is applied to
 * the before image; HEARTBEAT_V2's 64-bit position is read. */
START_TEST(synthetic_payload_zstd)
{
    char *got = NULL, want[1024];
    w2l_error err = {0};
    w2l_rc rc = play_synthetic(_i ? ZSTD_NONE : ZSTD_OK, 0, &got, &err);
    ck_assert_msg(rc == W2L_OK, "%s: %s\n%s", w2l_rc_name(rc), err.msg, got ? got : "");
    /* the XID's position: where the payload event ends, read from the rendered text */
    const char *x = strstr(got, "XID ");
    ck_assert(x != NULL);
    unsigned xp = (unsigned)strtoul(x + 4, NULL, 10);
    ck_assert_uint_gt(xp, 197);
    snprintf(want, sizeof want, SYNTH, xp);
    test_assert_same_text(got, want, "synthetic stream");
    free(got);
}
END_TEST

static void expect_corrupt(int how, int damage, const char *part1, const char *part2)
{
    char *got = NULL;
    w2l_error err = {0};
    w2l_rc rc = play_synthetic(how, damage, &got, &err);
    ck_assert_msg(rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert_msg(strstr(err.msg, part1) && strstr(err.msg, part2), "unclear error: %s", err.msg);
    free(got);
}

START_TEST(bad_crc_fails)
{
    expect_corrupt(ZSTD_OK, 1, "GTID (type 33) at binlog.000001:197", "CRC32 mismatch");
}
END_TEST

START_TEST(cut_zstd_frame_fails)
{
    expect_corrupt(ZSTD_CUT, 0, "TRANSACTION_PAYLOAD (type 40) at binlog.000001:", "zstd");
}
END_TEST

START_TEST(bad_zstd_magic_fails)
{
    expect_corrupt(ZSTD_BAD_MAGIC, 0, "TRANSACTION_PAYLOAD (type 40) at binlog.000001:", "zstd");
}
END_TEST

START_TEST(cut_inner_event_fails)
{
    expect_corrupt(NONE_CUT_EVENT, 0, "in the TRANSACTION_PAYLOAD at binlog.000001:",
                   "the payload ends inside it");
}
END_TEST

/* The session MySQL needs, and the dump commands: by file:pos (0x12) and by GTID set
 * (0x1e, the set encoded by w2l__mygtids_encode); flag 1 << 1 is never sent. */
START_TEST(session_and_dump_commands)
{
    char path[1024], why[256];
    data_path(path, sizeof path, "time_issue.000001");
    size_t len;
    uint8_t *file = (uint8_t *)test_slurp(path, &len);
    bl_stream st;
    ck_assert(bl_stream_from_binlog(file, len, "binlog.000001", &st, why, sizeof why) == 0);
    fake_my_set_packets(srv, st.pkts, st.lens, st.npkts);
    for (int gtid = 0; gtid < 2; gtid++) {
        const char *set = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5";
        char *got = NULL, *sql = NULL;
        uint8_t *dump = NULL;
        size_t dl = 0;
        w2l_error err = {0};
        ck_assert_ok(bl_replay_text_mysql(fake_my_port(srv), gtid ? set : NULL, &got, &err), err);
        fake_my_last_session(srv, &sql, &dump, &dl);
        ck_assert_msg(strstr(sql, "SET @source_binlog_checksum = @@global.binlog_checksum") &&
                          strstr(sql, "SET @master_binlog_checksum = @@global.binlog_checksum") &&
                          strstr(sql, "SET @source_heartbeat_period = ") &&
                          strstr(sql, "SET @master_heartbeat_period = ") &&
                          !strstr(sql, "mariadb_slave_capability"),
                      "session: %s", sql);
        if (!gtid) {
            ck_assert_uint_ge(dl, 11);
            ck_assert_uint_eq(dump[0], 0x12);
            ck_assert_uint_eq(dump[1] | dump[2] << 8 | dump[3] << 16, 4); /* position */
            ck_assert_uint_eq(dump[5] | dump[6] << 8, 1); /* non-blocking, nothing else */
            ck_assert_uint_eq(dump[7] | dump[8] << 8, 4242);
            ck_assert_int_eq(memcmp(dump + 11, "binlog.000002", 13), 0);
        } else {
            w2l__mygtids *g = w2l__mygtids_new();
            w2l_buf enc = {0};
            ck_assert_ok(w2l__mygtids_parse(g, set, &err), err);
            ck_assert_ok(w2l__mygtids_encode(g, &enc, &err), err);
            ck_assert_uint_eq(dl, 1 + 22 + enc.len);
            ck_assert_uint_eq(dump[0], 0x1e);
            ck_assert_uint_eq(dump[1] | dump[2] << 8, 1 | 4); /* non-block, through GTID */
            ck_assert_uint_eq(dump[3] | dump[4] << 8, 4242);
            ck_assert_uint_eq(dump[7] | dump[8] << 8, 0);     /* no file name */
            ck_assert_uint_eq(dump[11], 4);                   /* position 4 */
            ck_assert_uint_eq(dump[19] | dump[20] << 8, enc.len);
            ck_assert_int_eq(memcmp(dump + 23, enc.data, enc.len), 0);
            w2l_buf_release(&enc);
            w2l__mygtids_free(g);
        }
        free(got);
        free(sql);
        free(dump);
    }
    bl_stream_free(&st);
    free(file);
}
END_TEST

Suite *suite_binlog_mysql(void)
{
    Suite *s = suite_create("binlog_mysql");
    TCase *golden = tcase_create("golden");
    tcase_add_checked_fixture(golden, setup, teardown);
    tcase_add_loop_test(golden, recorded_file_matches_expected, 0, (int)NFILES);
    tcase_set_timeout(golden, 60);
    suite_add_tcase(s, golden);
    TCase *synth = tcase_create("synthetic");
    tcase_add_checked_fixture(synth, setup, teardown);
    tcase_add_loop_test(synth, synthetic_payload_zstd, 0, 2);
    tcase_add_test(synth, session_and_dump_commands);
    suite_add_tcase(s, synth);
    TCase *corrupt = tcase_create("corrupt");
    tcase_add_checked_fixture(corrupt, setup, teardown);
    tcase_add_test(corrupt, bad_crc_fails);
    tcase_add_test(corrupt, cut_zstd_frame_fails);
    tcase_add_test(corrupt, bad_zstd_magic_fails);
    tcase_add_test(corrupt, cut_inner_event_fails);
    suite_add_tcase(s, corrupt);
    return s;
}
