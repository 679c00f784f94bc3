/*
 * The "mysql" source against MySQL 8 without a MySQL server: recorded MySQL binlogs
 * (test/data/binlog/mysql8, its README gives their origin and the stated values) are
 * served by the fake server in recording mode (test/support/binlog_replay.c), and the
 * whole pipeline runs in-process from a mysql:// URI to an Iceberg lake in a temp
 * directory (`w2l run --until-caught-up`: the real source, decoder, DDL handler, writers,
 * committers, file state). The lake is read back with w2l_lake_scan(3) and compared with
 * the recording's .lake file, written by hand from the stated values: per run, each
 * table's schema and rows and the w2l.source-position of its current snapshot (or the
 * sealed checkpoint's position when no table is synced).
 *
 * Several runs of one recording stop midway (SHOW BINARY LOG STATUS reports an earlier
 * end) and resume from the saved position: by binlog file:pos (the FORMAT_DESCRIPTION
 * sent with log_pos 0, then the events after the position) or by GTID set
 * (COM_BINLOG_DUMP_GTID; the fake leaves out the GTIDs of the set). Recordings written
 * with binlog_row_metadata=MINIMAL must be refused: at start when the server says
 * MINIMAL, at their first TABLE_MAP when it says FULL (the setting changed later), with
 * an error that names binlog_row_metadata=FULL. Every statement the source sends must be
 * one the fake knows (fake_my_unknown() empty).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/binlog_replay.h"
#include "support/support.h"

static fake_my *srv;
static char dir[600], wh[700];
static w2l_error err;

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", tmpdir_make("myreplay"));
    snprintf(wh, sizeof wh, "%s/lake", dir);
    w2l_error_clear(&err);
    srv = fake_my_start();
    ck_assert_msg(srv != NULL, "fake server did not start");
}

static void teardown(void)
{
    fake_my_stop(srv);
    srv = NULL;
    tmpdir_remove(dir);
}

/* A file of test/data/binlog/mysql8, whole. */
static char *slurp(const char *name, size_t *len)
{
    const char *src = getenv("W2L_SRCDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/test/data/binlog/mysql8/%s", src && *src ? src : ".", name);
    return test_slurp(path, len);
}

/* ---- the servers the recordings were made on (their CREATE TABLEs and settings) ---- */

/* 9.0.1, anonymous GTIDs: CREATE DATABASE foo; create table test (a json) */
static const fake_my_server json_opaque = {
    .row_metadata = "FULL", .gtid_mode = "OFF", .columns = "foo|test|a|json|YES\n"};
/* 8.0.28, GTIDs 1-5: t(f1 CHAR(128), f2 VARCHAR(300), f3 ENUM, f4 SET, f5 TEXT) in mysql */
static const fake_my_server enum_set = {
    .row_metadata = "FULL",
    .gtid_mode = "ON",
    .gtid_executed = "93e95066-a2f4-11ec-9b69-9657f0ae95e2:1-5",
    .columns = "mysql|t|f1|char(128)|YES\nmysql|t|f2|varchar(300)|YES\n"
               "mysql|t|f3|enum('var1','variant2','foo')|YES\n"
               "mysql|t|f4|set('one','two','three','four')|YES\nmysql|t|f5|text|YES\n"};
/* 8.0.26, GTIDs 1-5: t1(f1 INT UNSIGNED INVISIBLE, f2 ..., f6 BIGINT UNSIGNED INVISIBLE) */
static const fake_my_server invisible = {
    .row_metadata = "FULL",
    .gtid_mode = "ON",
    .gtid_executed = "97c7af02-4c50-11ec-acd8-681842034964:1-5",
    .columns = "mysql|t1|f1|int unsigned|YES\nmysql|t1|f2|int unsigned|YES\n"
               "mysql|t1|f3|int|YES\nmysql|t1|f4|text|YES\nmysql|t1|f5|blob|YES\n"
               "mysql|t1|f6|bigint unsigned|YES\n"};
/* 8.0.26, GTIDs 1-3: foo(a BIT(3), b TEXT, c BIT(8)) in mysql */
static const fake_my_server bit = {
    .row_metadata = "FULL",
    .gtid_mode = "ON",
    .gtid_executed = "fbda2ad0-7c46-11ec-ae30-4ef7efc81a2a:1-3",
    .columns = "mysql|foo|a|bit(3)|YES\nmysql|foo|b|text|YES\nmysql|foo|c|bit(8)|YES\n"};
/* 9.0.1: dtb.foo(id SERIAL, vector_column VECTOR(3) NOT NULL), dtb.bar(...) */
static const fake_my_server vector = {
    .row_metadata = "FULL",
    .gtid_mode = "OFF",
    .columns = "dtb|bar|id|bigint unsigned|NO\ndtb|bar|vector_column|vector(2)|NO\n"
               "dtb|bar|foo|text|YES\ndtb|bar|vector_column2|vector(4)|NO\n"
               "dtb|foo|id|bigint unsigned|NO\ndtb|foo|vector_column|vector(3)|NO\n"};
/* 9.6.0, GTID tags: test.orders, three columns (no CREATE TABLE in the recording), its map
 * written with MINIMAL metadata; the server says FULL (set since) */
static const fake_my_server tagged_full = {
    .row_metadata = "FULL",
    .gtid_mode = "ON",
    .gtid_executed = "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-3"};
/* 8.0.32, binlog_transaction_compression=ON, gtid_mode off since GTID :1 */
static const fake_my_server compressed_full = {
    .row_metadata = "FULL",
    .gtid_mode = "OFF",
    .gtid_executed = "357df524-4139-11ee-9979-b033ee13919e:1"};
/* any recording written with binlog_row_metadata=MINIMAL: as recorded, and set to FULL
 * since (the maps in the binlog still have no names) */
static const fake_my_server minimal = {
    .row_metadata = "MINIMAL", .gtid_mode = "OFF", .databases = "noria"};
static const fake_my_server minimal_now_full = {
    .row_metadata = "FULL", .gtid_mode = "OFF", .databases = "noria\ntest"};

/* ---- running the pipeline ---- */

static w2l_rc run(const char *params, w2l_error *e)
{
    char uri[1024];
    snprintf(uri, sizeof uri, "mysql://cdc:none@127.0.0.1:%u/?server-id=4242&%s", fake_my_port(srv),
             params);
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "source", uri, &err), err);
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "until-caught-up", "true", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "myreplay", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p = NULL;
    w2l_rc rc = w2l_pipeline_new(c, &p, e);
    if (rc == W2L_OK) rc = w2l_pipeline_run(p, e);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    return rc;
}

static void serve(const char *name, const fake_my_server *d)
{
    size_t len;
    char *file = slurp(name, &len);
    fake_my_serve_recording(srv, (const uint8_t *)file, len, d);
    free(file);
}

static void assert_no_unknown(void)
{
    char *u = fake_my_unknown(srv);
    ck_assert_msg(*u == '\0', "the fake server refused:\n%s", u);
    free(u);
}

/* ---- the lake as text ---- */

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void add(text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        ck_assert_ptr_nonnull(t->p);
    }
    memcpy(t->p + t->len, s, n + 1);
    t->len += n;
}

typedef struct scanned {
    char schema[1024];
    char *rows[64];
    size_t n;
    const char *name;
} scanned;

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    scanned *sc = ctx;
    cdc_schema_text(s, sc->schema, sizeof sc->schema);
    text t = {0};
    add(&t, sc->name);
    for (size_t i = 0; i < n; i++) {
        add(&t, i ? "|" : " ");
        if (row[i].is_null) {
            add(&t, "null");
            continue;
        }
        char v[4096];
        w2l_value_format(w2l_schema_field(s, i)->type, &row[i], v, sizeof v);
        add(&t, v);
    }
    ck_assert_uint_lt(sc->n, 64);
    sc->rows[sc->n++] = t.p;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The w2l.source-position of the newest snapshot in a metadata file (the last one listed). */
static void snapshot_position(const char *metadata, char *out, size_t size)
{
    const char *path = strncmp(metadata, "file:", 5) ? metadata : metadata + 5;
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    text t = {0};
    char buf[4096];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf - 1, f)) > 0) {
        buf[r] = '\0';
        add(&t, buf);
    }
    fclose(f);
    snprintf(out, size, "(none)");
    const char *at = NULL;
    for (const char *p = t.p; p && (p = strstr(p, "\"w2l.source-position\"")); p++) at = p;
    if (at) {
        const char *q = strchr(at + 21, '"');
        size_t n = 0;
        for (q = q ? q + 1 : NULL; q && *q && *q != '"' && n + 1 < size; q++) {
            if (*q == '\\') q++;
            out[n++] = *q;
        }
        out[n] = '\0';
    }
    free(t.p);
}

typedef struct tables {
    text *t;
    w2l_lake *lake;
} tables;

static int on_table(void *ctx, const w2l_table_info *info)
{
    tables *tb = ctx;
    char name[300], pos[2048];
    snprintf(name, sizeof name, "%s.%s", info->ns, info->table);
    scanned sc = {.name = name};
    ck_assert_ok(w2l_lake_scan(tb->lake, info->ns, info->table, -1, on_row, &sc, &err), err);
    qsort(sc.rows, sc.n, sizeof *sc.rows, cmp_str);
    add(tb->t, "table ");
    add(tb->t, name);
    add(tb->t, ": ");
    add(tb->t, sc.n ? sc.schema : "(no rows)");
    add(tb->t, "\n");
    for (size_t i = 0; i < sc.n; i++) {
        add(tb->t, sc.rows[i]);
        add(tb->t, "\n");
        free(sc.rows[i]);
    }
    snapshot_position(info->metadata, pos, sizeof pos);
    add(tb->t, "position ");
    add(tb->t, name);
    add(tb->t, " ");
    add(tb->t, pos);
    add(tb->t, "\n");
    return 0;
}

static int on_ckpt(void *ctx, const w2l_checkpoint_info *info)
{
    if (info->ns) return 0;
    add(ctx, "checkpoint ");
    add(ctx, info->source_position ? info->source_position : "(none)");
    add(ctx, "\n");
    return 1;
}

/* Every table of the lake: "table db.t: schema", its rows "db.t v1|v2" sorted, "position
 * db.t <w2l.source-position>", then "checkpoint <the sealed checkpoint's position>". */
static char *lake_text(void)
{
    text t = {0};
    add(&t, "");
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *l;
    w2l_rc rc = w2l_lake_open(c, &l, &err);
    if (rc == W2L_NOTFOUND) {
        w2l_conf_free(c);
        add(&t, "(no lake)\n");
        return t.p;
    }
    ck_assert_ok(rc, err);
    tables tb = {&t, l};
    ck_assert_ok(w2l_lake_tables(l, on_table, &tb, &err), err);
    ck_assert_ok(w2l_lake_checkpoints(l, on_ckpt, &t, &err), err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    return t.p;
}

/* The section "== label" of a .lake file (up to the next "== " or the end), comment lines
 * ("#") left out; malloc'd. */
static char *lake_section(const char *file, const char *label)
{
    char *all = slurp(file, NULL);
    char head[128];
    snprintf(head, sizeof head, "== %s\n", label);
    char *at = strstr(all, head);
    ck_assert_msg(at != NULL, "%s has no section '%s'", file, label);
    at += strlen(head);
    text t = {0};
    add(&t, "");
    for (char *line = at; *line && strncmp(line, "== ", 3);) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (line[0] != '#' && n > 1) {
            char save = line[n];
            line[n] = '\0';
            add(&t, line);
            line[n] = save;
        }
        line += n;
    }
    free(all);
    return t.p;
}

static void assert_lake(const char *file, const char *label)
{
    char *want = lake_section(file, label), *got = lake_text();
    ck_assert_msg(!strcmp(got, want), "%s, %s: the lake holds\n%s\nexpected\n%s", file, label, got,
                  want);
    free(want);
    free(got);
}

/* ---- the recordings through the pipeline ---- */

/* JSON documents of every opaque kind (9.0.1, SHOW BINARY LOG STATUS, a keyless table). */
START_TEST(json_opaque_to_lake)
{
    serve("json-opaque.binlog", &json_opaque);
    ck_assert_ok(run("databases=foo&startup=file:binlog.000001:4", &err), err);
    assert_no_unknown();
    assert_lake("json-opaque.binlog.lake", "end");
}
END_TEST

/* ENUM, SET, CHAR, VARCHAR and TEXT through insert, update and delete, one run each,
 * started from a GTID set and resumed by GTID set (the fake leaves out GTIDs 1-3, then
 * 1-4): the lake follows the table. */
START_TEST(enum_set_by_gtid_in_three_runs)
{
    serve("mysql-enum-string-set.000001", &enum_set);
    const char *p =
        "databases=mysql&startup=gtid:93e95066-a2f4-11ec-9b69-9657f0ae95e2:1-2";
    static const struct {
        uint64_t end;
        const char *label;
    } runs[] = {{1560, "insert"}, {2659, "update"}, {0, "delete"}};
    for (size_t i = 0; i < 3; i++) {
        if (runs[i].end) fake_my_set_end(srv, "binlog.000001", runs[i].end);
        else fake_my_set_end(srv, NULL, 0);
        ck_assert_ok(run(p, &err), err);
        assert_no_unknown();
        uint8_t *dump;
        size_t dl;
        char *sql;
        fake_my_last_session(srv, &sql, &dump, &dl);
        ck_assert_msg(dl > 0 && dump[0] == 0x1e, "run %zu: no COM_BINLOG_DUMP_GTID", i + 1);
        free(sql);
        free(dump);
        assert_lake("mysql-enum-string-set.000001.lake", runs[i].label);
    }
}
END_TEST

/* INVISIBLE columns and a BLOB; two runs. With gtid_mode OFF the second resumes by
 * file:pos; with gtid_mode ON the empty PREVIOUS_GTIDS makes the set known, positions carry
 * it and the second run resumes by GTID set. */
static const fake_my_server invisible_no_gtids = {
    .row_metadata = "FULL",
    .gtid_mode = "OFF",
    .columns = "mysql|t1|f1|int unsigned|YES\nmysql|t1|f2|int unsigned|YES\n"
               "mysql|t1|f3|int|YES\nmysql|t1|f4|text|YES\nmysql|t1|f5|blob|YES\n"
               "mysql|t1|f6|bigint unsigned|YES\n"};

START_TEST(invisible_in_two_runs)
{
    int by_gtid = _i;
    serve("binlog-invisible-columns.000001", by_gtid ? &invisible : &invisible_no_gtids);
    const char *p = "databases=mysql&startup=file:binlog.000001:4";
    fake_my_set_end(srv, "binlog.000001", 1438);
    ck_assert_ok(run(p, &err), err);
    assert_no_unknown();
    assert_lake("binlog-invisible-columns.000001.lake",
                by_gtid ? "two inserts, by GTID" : "two inserts");
    fake_my_set_end(srv, NULL, 0);
    ck_assert_ok(run(p, &err), err);
    assert_no_unknown();
    uint8_t *dump;
    size_t dl;
    char *sql;
    fake_my_last_session(srv, &sql, &dump, &dl);
    if (by_gtid)
        ck_assert_msg(dl > 0 && dump[0] == 0x1e, "second run: no COM_BINLOG_DUMP_GTID");
    else
        ck_assert_msg(dl > 11 && dump[0] == 0x12 && (dump[1] | dump[2] << 8) == 1438,
                      "second run: no COM_BINLOG_DUMP from position 1438");
    free(sql);
    free(dump);
    assert_lake("binlog-invisible-columns.000001.lake", by_gtid ? "update, by GTID" : "update");
}
END_TEST

START_TEST(bit_to_lake)
{
    serve("mysql_type_bit.000001", &bit);
    ck_assert_ok(run("databases=mysql&startup=file:binlog.000001:4", &err), err);
    assert_no_unknown();
    assert_lake("mysql_type_bit.000001.lake", "end");
}
END_TEST

/* A GTID server that never purged anything (gtid_purged and PREVIOUS_GTIDS empty), from
 * startup=earliest: the empty set is a known set, so the first position carries
 * "gtid_set":"" (the DDL transaction's position holds ALTER USER's GTID :1), positions
 * grow with each GTID, and the next run resumes by GTID set (COM_BINLOG_DUMP_GTID), as a
 * replica after a failover would need. */
START_TEST(earliest_empty_set_is_known)
{
    serve("mysql_type_bit.000001", &bit);
    const char *p = "databases=mysql&startup=earliest";
    static const struct {
        uint64_t end;
        const char *label;
        uint8_t dump;
    } runs[] = {{156, "earliest, nothing yet", 0x12},
                {491, "earliest, one transaction", 0x12},
                {0, "earliest, end", 0x1e}};
    for (size_t i = 0; i < 3; i++) {
        if (runs[i].end) fake_my_set_end(srv, "binlog.000001", runs[i].end);
        else fake_my_set_end(srv, NULL, 0);
        ck_assert_ok(run(p, &err), err);
        assert_no_unknown();
        uint8_t *dump;
        size_t dl;
        char *sql;
        fake_my_last_session(srv, &sql, &dump, &dl);
        ck_assert_msg(dl > 0 && dump[0] == runs[i].dump, "run %zu: dump command 0x%02x", i + 1,
                      dl ? dump[0] : 0);
        free(sql);
        free(dump);
        assert_lake("mysql_type_bit.000001.lake", runs[i].label);
    }
}
END_TEST

/* VECTOR columns (binary: their float32 values as stored), a DROP DATABASE and the tables
 * created again. */
START_TEST(vector_to_lake)
{
    serve("vector.binlog", &vector);
    ck_assert_ok(run("databases=dtb&startup=file:binlog.000001:4", &err), err);
    assert_no_unknown();
    assert_lake("vector.binlog.lake", "end");
}
END_TEST

/* A tagged GTID (9.6): started from the set before it, test.orders not synced (its map has
 * no names): the position's GTID set holds mytag:3 after the transaction. */
START_TEST(tagged_gtid_position)
{
    serve("binlog_transaction_with_GTID_TAG.000001", &tagged_full);
    ck_assert_ok(run("tables=test\\.none&startup=gtid:55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:"
                     "mytag:1-2",
                     &err),
                 err);
    assert_no_unknown();
    assert_lake("binlog_transaction_with_GTID_TAG.000001.lake", "end");
}
END_TEST

/* A zstd TRANSACTION_PAYLOAD (8.0.32): test.tb1 not synced; the position is the payload's
 * end. */
START_TEST(compressed_position)
{
    serve("transaction_compression.000001", &compressed_full);
    ck_assert_ok(run("tables=test\\.none&startup=file:binlog.000001:4", &err), err);
    assert_no_unknown();
    assert_lake("transaction_compression.000001.lake", "end");
}
END_TEST

/* binlog_row_metadata=MINIMAL: refused at start, naming the setting. */
START_TEST(minimal_refused_at_start)
{
    serve("minimal_row_metadata.000001", &minimal);
    w2l_error e;
    w2l_rc rc = run("databases=noria&startup=file:binlog.000001:4", &e);
    ck_assert_int_eq(rc, W2L_SOURCE); /* the server's state: exit 1, not a usage error */
    ck_assert_msg(strstr(e.msg, "binlog_row_metadata is MINIMAL (FULL needed)") &&
                      strstr(e.msg, "SET GLOBAL binlog_row_metadata=FULL;") &&
                      strstr(e.msg, "in my.cnf under [mysqld]: binlog_row_metadata=FULL"),
                  "%s", e.msg);
    assert_no_unknown();
    ck_assert_int_eq(fake_my_dumps(srv), 0);
}
END_TEST

/* Maps written with MINIMAL metadata while the server now says FULL: refused at the first
 * map of a synced table, naming it, its position and the setting; nothing lands. */
static const struct {
    const char *file, *params, *table, *at;
} minimal_maps[] = {
    {"minimal_row_metadata.000001", "databases=noria", "noria.t1", "binlog.000001:"},
    {"time_issue.000001", "databases=noria", "noria.t", "binlog.000001:"},
    {"json.binlog.000001", "databases=mysql", "mysql.t", "binlog.000001:"},
    {"binlog_transaction_with_GTID_TAG.000001", "databases=test", "test.orders",
     "binlog.000001:"},
    {"transaction_compression.000001", "databases=test", "test.tb1", "binlog.000001:"},
};

START_TEST(minimal_map_refused)
{
    serve(minimal_maps[_i].file, &minimal_now_full);
    char p[200];
    snprintf(p, sizeof p, "%s&startup=file:binlog.000001:4", minimal_maps[_i].params);
    w2l_error e;
    w2l_rc rc = run(p, &e);
    ck_assert_msg(rc == W2L_SOURCE, "%s: %s: %s", minimal_maps[_i].file, w2l_rc_name(rc), e.msg);
    char want[200];
    snprintf(want, sizeof want, "the TABLE_MAP of %s at %s", minimal_maps[_i].table,
             minimal_maps[_i].at);
    ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "set binlog_row_metadata=FULL"), "%s: %s",
                  minimal_maps[_i].file, e.msg);
    assert_no_unknown();
    /* the DDL before the map may have created the table; no row of it */
    char *got = lake_text(), row[128];
    snprintf(row, sizeof row, "\n%s ", minimal_maps[_i].table);
    ck_assert_msg(!strstr(got, row), "%s: the lake holds\n%s", minimal_maps[_i].file, got);
    free(got);
}
END_TEST

/* The fake refuses what it does not know, loudly: a statement, a dump from a position
 * that is not an event's start. */
START_TEST(fake_refuses_unknown)
{
    serve("mysql_type_bit.000001", &bit);
    w2l_error e;
    ck_assert_int_ne(run("databases=mysql&startup=file:binlog.000001:5", &e), W2L_OK);
    char *u = fake_my_unknown(srv);
    ck_assert_msg(strstr(u, "position 5 is not the start of an event"), "%s", u);
    free(u);
}
END_TEST

Suite *suite_mysql_replay(void)
{
    Suite *s = suite_create("mysql_replay");
    TCase *tc = tcase_create("lake");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, json_opaque_to_lake);
    tcase_add_test(tc, enum_set_by_gtid_in_three_runs);
    tcase_add_loop_test(tc, invisible_in_two_runs, 0, 2);
    tcase_add_test(tc, bit_to_lake);
    tcase_add_test(tc, earliest_empty_set_is_known);
    tcase_add_test(tc, vector_to_lake);
    tcase_add_test(tc, tagged_gtid_position);
    tcase_add_test(tc, compressed_position);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("refused");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_set_timeout(bad, 60);
    tcase_add_test(bad, minimal_refused_at_start);
    tcase_add_loop_test(bad, minimal_map_refused, 0,
                        (int)(sizeof minimal_maps / sizeof minimal_maps[0]));
    tcase_add_test(bad, fake_refuses_unknown);
    suite_add_tcase(s, bad);
    return s;
}
