/*
 * lib/source/cdc_maxwell.c through the "file" source: maxwell-json as Maxwell writes it
 * (test/data/cdc/maxwell_*.jsonl, described in test/data/cdc/README). Column types from
 * the DDL's statement text over Maxwell's incomplete "def", bootstrap rows as upserts, and
 * Maxwell's own database kept out of the lake. Every change, DDL and commit is written as
 * one text line and the whole stream compared with what the sample holds; a commit shows
 * the line of the sample it follows ("COMMIT @L3": after line 3).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "ddl/ddl.h"
#include "event/emit.h"
#include "source/cdc_json.h"
#include "support/support.h"

#ifndef W2L_TEST_DATA
#define W2L_TEST_DATA "test/data/cdc/"
#endif

/* ---- collecting what the source emits (as test/check_cdc_json.c does) ---- */

typedef struct collect {
    w2l_buf out;
    const char *file; /* the sample, to turn commit offsets into line numbers */
} collect;

static void put(collect *c, const char *s)
{
    w2l_error err;
    ck_assert_int_eq(w2l_buf_append(&c->out, s, strlen(s), &err), W2L_OK);
}

/* Rows: "db.t I 1|alice|10.50" ("-" for a column absent from the image). */
static w2l_rc on_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    collect *c = ctx;
    char line[4096];
    (void)err;
    for (size_t i = 0; i < b->n; i++) {
        cdc_change_text(&b->changes[i], line, sizeof line);
        put(c, line);
    }
    w2l__batch_free(b);
    return W2L_OK;
}

/* DDL: "DDL db.t => schema" (the statement is in the sample). */
static w2l_rc on_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    collect *c = ctx;
    char line[4096], sch[2048] = "";
    (void)err;
    if (d->ddl.schema_after) cdc_schema_text(d->ddl.schema_after, sch, sizeof sch);
    snprintf(line, sizeof line, "DDL %s.%s%s%s\n", d->ddl.db ? d->ddl.db : "-",
             d->ddl.table ? d->ddl.table : "-", *sch ? " => " : "", sch);
    put(c, line);
    w2l__ddl_elem_free(d);
    return W2L_OK;
}

/* The number of the line that ends at byte offset off of the sample. */
static long line_at(const char *file, unsigned long long off)
{
    FILE *fp = fopen(file, "rb");
    ck_assert_ptr_nonnull(fp);
    long line = 0;
    int ch;
    for (unsigned long long i = 0; i < off && (ch = fgetc(fp)) != EOF; i++) line += ch == '\n';
    fclose(fp);
    return line;
}

static w2l_rc on_commit(void *ctx, const char *pos, size_t len, w2l_error *err)
{
    collect *c = ctx;
    char line[128];
    unsigned long long off = 0;
    (void)err;
    ck_assert_int_eq(sscanf(pos, "{\"offset\":%llu}", &off), 1);
    ck_assert_uint_le(len, 64);
    snprintf(line, sizeof line, "COMMIT @L%ld\n", line_at(c->file, off));
    put(c, line);
    return W2L_OK;
}

/* ---- warnings ---- */

typedef struct logcap {
    int n;
    char last[512];
} logcap;
static logcap warnings;

static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level != W2L_LOG_WARN) return;
    warnings.n++;
    snprintf(warnings.last, sizeof warnings.last, "%s", line);
}

/* ---- reading a sample through the file source ---- */

/* Reads a whole sample (options as key=value pairs, NULL-terminated); returns what was
 * emitted (caller frees). restored: a position to start from, or NULL. */
static char *read_sample(const char *name, const char *restored, const char *const *opts)
{
    static char file[512];
    char uri[700];
    snprintf(file, sizeof file, "%s%s", name[0] == '/' ? "" : W2L_TEST_DATA, name);
    snprintf(uri, sizeof uri, "file:%s?format=maxwell-json", file);
    collect col = {{0}, file};
    w2l__emit_hooks h = {.batch = on_batch, .ddl = on_ddl, .commit = on_commit, .ctx = &col};
    w2l_emitter *em = w2l__emitter_new(&h, 1); /* batches of one row keep the order visible */
    ck_assert_ptr_nonnull(em);
    w2l_conf *conf = w2l_conf_new();
    ck_assert_ptr_nonnull(conf);
    w2l_error err;
    ck_assert_ok(w2l_conf_set(conf, "until-caught-up", "true", &err), err);
    for (size_t i = 0; opts && opts[i]; i += 2)
        ck_assert_ok(w2l_conf_set(conf, opts[i], opts[i + 1], &err), err);
    const w2l_source_methods *m = w2l_source_find("file");
    ck_assert_ptr_nonnull(m);
    w2l_source *s = w2l__calloc(1, m->size);
    ck_assert_ptr_nonnull(s);
    s->methods = m;
    ck_assert_ok(m->open(m, conf, uri, restored, s, &err), err);
    w2l_rc rc;
    while ((rc = m->next(s, em, 0, &err)) == W2L_OK) {}
    ck_assert_msg(rc == W2L_DONE, "%s: %s: %s", name, w2l_rc_name(rc), err.msg);
    m->close(s);
    w2l__free(s);
    w2l__emitter_free(em);
    w2l_conf_free(conf);
    ck_assert_ok(w2l__buf_cstr(&col.out, &err), err);
    char *out = strdup((const char *)col.out.data);
    w2l_buf_release(&col.out);
    return out;
}

static void assert_sample(const char *name, const char *const *opts, const char *expected)
{
    char *got = read_sample(name, NULL, opts);
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "---- %s got:\n%s---- expected:\n%s", name, got, expected);
    ck_assert_str_eq(got, expected);
    free(got);
}

/* The Iceberg type lib/ddl maps a MySQL type text to (TINYINT(1) as boolean), as text
 * ("decimal(12,2)", "string"). */
static const char *mapped(const char *mysql, char *buf, size_t size)
{
    w2l__type_opts o = {0};
    o.tinyint1_as_boolean = 1;
    w2l_type t;
    w2l_error err;
    ck_assert_ok(w2l__mysql_type_map_text(mysql, strlen(mysql), &o, "c", NULL, &t, NULL, &err),
                 err);
    return w2l_type_format(t, buf, size);
}

/* ---- column types ---- */

#define BIG65 "12345678901234567890123456789012345.123456789012345678901234567890"

/* maxwell_types.jsonl, shop.m: the CREATE TABLE's text gives DECIMAL(12,2), DECIMAL(65,30),
 * BIT(1), BIT(8), BIT(64) and TINYINT(1) where the def has only decimal, bit and tinyint;
 * the ALTER's text the added DECIMAL(8,3) and BIT(4); the other columns keep their types
 * through both ALTERs (a RENAME COLUMN included); values decode exactly. */
START_TEST(types_from_statement)
{
    char big[32], sch[1024];
    /* DECIMAL(65,30) is whatever the DDL module maps it to (beyond Iceberg's 38 digits) */
    mapped("decimal(65,30)", big, sizeof big);
    ck_assert_str_eq(big, "string"); /* the exact text: the values below rely on it */
    /* TINYINT(1) is boolean by option only: the statement's width decides it */
    static const char *const tiny_bool[] = {"source.tinyint1-as-boolean", "true", NULL};
    w2l_log_set_callback(on_log, NULL); /* shop.legacy's warning: def_only_decimal */
    char *got = read_sample("maxwell_types.jsonl", NULL, tiny_bool);
    w2l_log_set_callback(NULL, NULL);
    char *end = strstr(got, "DDL shop.legacy");
    ck_assert_ptr_nonnull(end);
    *end = '\0';
    char expected[4096];
    snprintf(sch, sizeof sch, "id*!:int,price:decimal(12,2),big:%s,b1:boolean,b8:long,b64:long,"
                              "flag:boolean,note:string",
             big);
    int n = snprintf(expected, sizeof expected,
                     "DDL shop.m => %s\n"
                     "COMMIT @L1\n"
                     /* 1.51, BIT(1) 1, BIT(8) 3, BIT(64) 2^64-1 = all bits = -1, TINYINT(1) 1 */
                     "shop.m I 1|1.51|" BIG65 "|true|3|-1|true|a\n"
                     "COMMIT @L2\n"
                     /* BIT(8) 255, BIT(64) 2^63 = only the high bit */
                     "shop.m I 2|-9999999999.99|0.000000000000000000000000000001|false|255|"
                     "-9223372036854775808|false|null\n"
                     "COMMIT @L3\n",
                     sch);
    n += snprintf(expected + n, sizeof expected - (size_t)n,
                  "DDL shop.m => id*!:int,price:decimal(12,2),fee:decimal(8,3),big:%s,b1:boolean,"
                  "b8:long,b64:long,"
                  "flag:boolean,note:string,mask:long\n"
                  "COMMIT @L4\n"
                  "shop.m I 3|0.50|-12345.678|null|null|0|0|true|b|15\n"
                  "COMMIT @L5\n"
                  "DDL shop.m => id*!:int,price:decimal(12,2),charge:decimal(8,3),big:%s,"
                  "b1:boolean,b8:long,b64:long,"
                  "flag:boolean,note:string,mask:long\n"
                  "COMMIT @L6\n"
                  "shop.m UB 3|0.50|-12345.678|null|null|0|0|true|b|15\n"
                  "shop.m UA 3|0.50|1.001|null|true|0|1|true|b|8\n"
                  "COMMIT @L7\n",
                  big, big);
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "---- got:\n%s---- expected:\n%s", got, expected);
    ck_assert_str_eq(got, expected);
    free(got);
}
END_TEST

/* maxwell_types.jsonl, shop.legacy: no statement sizes its DECIMAL (the ALTERs only touch an
 * index) and the stream never showed the table before: the column is a string of each
 * value's exact decimal text, with one warning for the table and column over both ALTERs;
 * the BIT without width is a long of the bit pattern, never a boolean. */
START_TEST(def_only_decimal)
{
    memset(&warnings, 0, sizeof warnings);
    w2l_log_set_callback(on_log, NULL);
    char *got = read_sample("maxwell_types.jsonl", NULL, NULL);
    w2l_log_set_callback(NULL, NULL);
    const char *from = strstr(got, "DDL shop.legacy");
    ck_assert_ptr_nonnull(from);
    ck_assert_str_eq(from, "DDL shop.legacy => id*!:int,amount:string,flags:long\n"
                           "COMMIT @L8\n"
                           "shop.legacy I 1|1.51|3\n"
                           "shop.legacy I 2|2.50|-1\n"
                           "COMMIT @L10\n"
                           "DDL shop.legacy => id*!:int,amount:string,flags:long\n"
                           "COMMIT @L11\n"
                           "shop.legacy I 3|-100|0\n"
                           "COMMIT @L12\n");
    ck_assert_int_eq(warnings.n, 1);
    ck_assert_msg(strstr(warnings.last, "table shop.legacy column amount: DECIMAL of unknown "
                                        "precision") != NULL, "%s",
                  warnings.last);
    free(got);
}
END_TEST

/* ---- bootstrap ---- */

/* maxwell_bootstrap.jsonl: each bootstrap-insert is an UPDATE_BEFORE of its row then an
 * INSERT (the writer deletes by key, or by the full row without one, then writes), over
 * a key the binlog wrote already (1) and a new one (2); bootstrap-complete arriving inside
 * xid 22 does not split that transaction. */
START_TEST(bootstrap_upserts)
{
    assert_sample("maxwell_bootstrap.jsonl", NULL,
                  "DDL shop.k => id*!:int,v:string\n"
                  "COMMIT @L1\n"
                  "shop.k I 1|binlog\n"
                  "COMMIT @L2\n"
                  "shop.k UB 1|boot\n"
                  "shop.k I 1|boot\n"
                  "COMMIT @L4\n"
                  "shop.k UB 2|new\n"
                  "shop.k I 2|new\n"
                  "COMMIT @L5\n"
                  "shop.k I 3|x\n"
                  "shop.k I 4|y\n"
                  "COMMIT @L8\n"
                  "DDL shop.nk => a:int,b:string\n"
                  "COMMIT @L9\n"
                  "shop.nk UB 1|z\n"
                  "shop.nk I 1|z\n"
                  "COMMIT @L11\n");
}
END_TEST

/* ---- Maxwell's own database ---- */

/* maxwell_own.jsonl: the maxwell database's DDL and rows are dropped; xid 32 still ends at
 * its commit row, which is a maxwell.bootstrap row; transactions of maxwell rows alone
 * emit nothing. */
START_TEST(own_database_dropped)
{
    assert_sample("maxwell_own.jsonl", NULL,
                  "DDL shop.u => id*!:int\n"
                  "COMMIT @L4\n"
                  "shop.u I 1\n"
                  "COMMIT @L6\n"
                  "shop.u I 2\n"
                  "COMMIT @L9\n");
}
END_TEST

/* source.maxwell-database names another database, or is empty: everything is kept. */
START_TEST(own_database_kept)
{
    static const char everything[] =
        "DDL maxwell.-\n"
        "COMMIT @L1\n"
        "DDL maxwell.positions => server_id*!:long,binlog_file:string,binlog_position:long\n"
        "COMMIT @L2\n"
        "maxwell.positions I 1|master.000001|4\n"
        "COMMIT @L3\n"
        "DDL shop.u => id*!:int\n"
        "COMMIT @L4\n"
        "shop.u I 1\n"
        "maxwell.bootstrap I 1|shop|u\n"
        "COMMIT @L6\n"
        "maxwell.positions UB 1|master.000001|4\n"
        "maxwell.positions UA 1|master.000001|900\n"
        "COMMIT @L7\n"
        "DDL maxwell.heartbeats\n"
        "COMMIT @L8\n"
        "shop.u I 2\n"
        "COMMIT @L9\n";
    static const char *const empty[] = {"source.maxwell-database", "", NULL};
    assert_sample("maxwell_own.jsonl", empty, everything);
    static const char *const other[] = {"source.maxwell-database", "maxwell_prod", NULL};
    assert_sample("maxwell_own.jsonl", other, everything);
}
END_TEST

START_TEST(own_database_name_too_long)
{
    char uri[600], name[100];
    memset(name, 'x', 70);
    name[70] = '\0';
    snprintf(uri, sizeof uri, "file:%smaxwell_own.jsonl?format=maxwell-json", W2L_TEST_DATA);
    w2l_conf *conf = w2l_conf_new();
    w2l_error err;
    ck_assert_ok(w2l_conf_set(conf, "source.maxwell-database", name, &err), err);
    const w2l_source_methods *m = w2l_source_find("file");
    w2l_source *s = w2l__calloc(1, m->size);
    s->methods = m;
    ck_assert_int_eq(m->open(m, conf, uri, NULL, s, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "source.maxwell-database") != NULL, "%s", err.msg);
    w2l__free(s);
    w2l_conf_free(conf);
}
END_TEST

/* ---- GEOMETRY: Maxwell writes WKT, the lake holds WKB ---- */

#define GEO_CREATE "{\"type\":\"table-create\",\"database\":\"d\",\"table\":\"g\"," \
                   "\"def\":{\"database\":\"d\",\"table\":\"g\"," \
                   "\"columns\":[{\"type\":\"int\",\"name\":\"id\",\"signed\":true}," \
                   "{\"type\":\"geometry\",\"name\":\"g\"}]," \
                   "\"primary-key\":[\"id\"]},\"ts\":1700000000000," \
                   "\"sql\":\"CREATE TABLE g (id INT PRIMARY KEY, g GEOMETRY)\"}\n"
#define GEO_ROW(id, wkt) "{\"database\":\"d\",\"table\":\"g\",\"type\":\"insert\"," \
                         "\"ts\":1700000001,\"data\":{\"id\":" #id ",\"g\":\"" wkt "\"}}\n"

/* Doubles, little-endian: 0 = 0000000000000000, 1 = 000000000000f03f, 2 = 0000000000000040,
 * 3 = 0000000000000840; NaN (POINT EMPTY) = 000000000000f87f. */
START_TEST(geometry_wkt)
{
    const char *tmp = tmpdir_make("mxgeo");
    char path[512];
    snprintf(path, sizeof path, "%s/g.jsonl", tmp);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(GEO_CREATE GEO_ROW(1, "POINT (3 2)") GEO_ROW(2, "LINESTRING (0 1, 1 2)")
              GEO_ROW(3, "MULTIPOINT ((1 1), (2 2))") GEO_ROW(4, "multipoint (1 1,2 2)")
                  GEO_ROW(5, "POLYGON ((0 0, 1 0, 0 1, 0 0))")
                      GEO_ROW(6, "GEOMETRYCOLLECTION (POINT (1 1), LINESTRING EMPTY)")
                          GEO_ROW(7, "GEOMETRYCOLLECTION EMPTY") GEO_ROW(8, "POINT EMPTY"),
          fp);
    fclose(fp);
    char *got = read_sample(path, NULL, NULL);
    ck_assert_str_eq(got, "DDL d.g => id*!:int,g:binary\n"
                          "COMMIT @L1\n"
                          "d.g I 1|0101000000"
                          "0000000000000840"
                          "0000000000000040\n"
                          "COMMIT @L2\n"
                          "d.g I 2|0102000000"
                          "02000000"
                          "0000000000000000000000000000f03f"
                          "000000000000f03f0000000000000040\n"
                          "COMMIT @L3\n"
                          "d.g I 3|0104000000"
                          "02000000"
                          "0101000000"
                          "000000000000f03f000000000000f03f"
                          "0101000000"
                          "00000000000000400000000000000040\n"
                          "COMMIT @L4\n"
                          "d.g I 4|0104000000"
                          "02000000"
                          "0101000000"
                          "000000000000f03f000000000000f03f"
                          "0101000000"
                          "00000000000000400000000000000040\n"
                          "COMMIT @L5\n"
                          "d.g I 5|0103000000"
                          "01000000"
                          "04000000"
                          "00000000000000000000000000000000"
                          "000000000000f03f0000000000000000"
                          "0000000000000000000000000000f03f"
                          "00000000000000000000000000000000\n"
                          "COMMIT @L6\n"
                          "d.g I 6|0107000000"
                          "02000000"
                          "0101000000"
                          "000000000000f03f000000000000f03f"
                          "0102000000"
                          "00000000\n"
                          "COMMIT @L7\n"
                          "d.g I 7|0107000000"
                          "00000000\n"
                          "COMMIT @L8\n"
                          "d.g I 8|0101000000"
                          "000000000000f87f000000000000f87f\n"
                          "COMMIT @L9\n");
    free(got);
    /* text that is not WKT fails, naming the value and where it stops making sense */
    fp = fopen(path, "w");
    fputs(GEO_CREATE GEO_ROW(1, "POINT (1)"), fp);
    fclose(fp);
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s?format=maxwell-json", path);
    w2l_conf *conf = w2l_conf_new();
    w2l_error err;
    ck_assert_ok(w2l_conf_set(conf, "until-caught-up", "true", &err), err);
    const w2l_source_methods *m = w2l_source_find("file");
    w2l_source *s = w2l__calloc(1, m->size);
    s->methods = m;
    ck_assert_ok(m->open(m, conf, uri, NULL, s, &err), err);
    collect col = {{0}, path};
    w2l__emit_hooks h = {.batch = on_batch, .ddl = on_ddl, .commit = on_commit, .ctx = &col};
    w2l_emitter *em = w2l__emitter_new(&h, 1);
    w2l_rc rc;
    while ((rc = m->next(s, em, 0, &err)) == W2L_OK) {}
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "line 2") &&
                      strstr(err.msg, "table d.g column g: value \"POINT (1)\": not WKT "
                                      "geometry text (at character 9)"),
                  "%s", err.msg);
    m->close(s);
    w2l__free(s);
    w2l__emitter_free(em);
    w2l_conf_free(conf);
    w2l_buf_release(&col.out);
    tmpdir_remove(tmp);
}
END_TEST

/* ---- BINARY(n): MySQL pads with 0x00, the binlog (so Maxwell's replicator) strips ---- */

START_TEST(binary_padding)
{
    const char *tmp = tmpdir_make("mxbin");
    char path[512];
    snprintf(path, sizeof path, "%s/b.jsonl", tmp);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    /* b BINARY(4) and v VARBINARY(4) from the statement; then table u, first seen in an
     * ALTER that gives no type: its def's "binary" has no width, so nothing is padded */
    fputs("{\"type\":\"table-create\",\"database\":\"d\",\"table\":\"t\","
          "\"def\":{\"database\":\"d\",\"table\":\"t\","
          "\"columns\":[{\"type\":\"binary\",\"name\":\"b\",\"charset\":\"binary\"},"
          "{\"type\":\"varbinary\",\"name\":\"v\","
          "\"charset\":\"binary\"}],\"primary-key\":[]},\"sql\":\"CREATE TABLE t (b BINARY(4),"
          " v VARBINARY(4))\"}\n"
          "{\"database\":\"d\",\"table\":\"t\",\"type\":\"insert\",\"data\":{\"b\":\"AAE=\","
          "\"v\":\"AAE=\"}}\n"
          "{\"database\":\"d\",\"table\":\"t\",\"type\":\"insert\",\"data\":{\"b\":\"AQIDBA==\","
          "\"v\":\"\"}}\n"
          "{\"type\":\"table-alter\",\"database\":\"d\",\"table\":\"u\","
          "\"def\":{\"database\":\"d\",\"table\":\"u\","
          "\"columns\":[{\"type\":\"binary\",\"name\":\"b\",\"charset\":\"binary\"}],"
          "\"primary-key\":[]},"
          "\"sql\":\"ALTER TABLE u COMMENT 'x'\"}\n"
          "{\"database\":\"d\",\"table\":\"u\",\"type\":\"insert\",\"data\":{\"b\":\"AAE=\"}}\n",
          fp);
    fclose(fp);
    char *got = read_sample(path, NULL, NULL);
    ck_assert_str_eq(got, "DDL d.t => b:binary,v:binary\n"
                          "COMMIT @L1\n"
                          "d.t I 00010000|0001\n" /* AAE= is 00 01 */
                          "COMMIT @L2\n"
                          "d.t I 01020304|\n"
                          "COMMIT @L3\n"
                          "DDL d.u => b:binary\n"
                          "COMMIT @L4\n"
                          "d.u I 0001\n"
                          "COMMIT @L5\n");
    free(got);
    tmpdir_remove(tmp);
}
END_TEST

/* ---- restarts: every commit is a restart point, types and shapes rebuilt by replay ---- */

START_TEST(restart_everywhere)
{
    static const char *const files[] = { "maxwell_types.jsonl", "maxwell_bootstrap.jsonl",
                                         "maxwell_own.jsonl" };
    static const char *const tiny_bool[] = {"source.tinyint1-as-boolean", "true", NULL};
    const char *file = files[_i];
    w2l_log_set_callback(on_log, NULL); /* each read warns about shop.legacy.amount once */
    char *full = read_sample(file, NULL, tiny_bool);
    char path[512];
    snprintf(path, sizeof path, "%s%s", W2L_TEST_DATA, file);
    int tested = 0;
    for (const char *p = full; (p = strstr(p, "COMMIT @L")) != NULL; p++) {
        long line = strtol(p + 9, NULL, 10);
        /* the byte offset after that line */
        FILE *fp = fopen(path, "rb");
        ck_assert_ptr_nonnull(fp);
        long seen = 0, off = 0;
        int ch;
        while (seen < line && (ch = fgetc(fp)) != EOF) off++, seen += ch == '\n';
        fclose(fp);
        char pos[64];
        snprintf(pos, sizeof pos, "{\"offset\":%ld}", off);
        char *rest = read_sample(file, pos, tiny_bool);
        /* a restarted source first announces its position, then goes on as the full read */
        const char *eol = strchr(p, '\n');
        size_t plen = (size_t)(eol + 1 - full);
        char first[32];
        snprintf(first, sizeof first, "COMMIT @L%ld\n", line);
        ck_assert_msg(strncmp(rest, first, strlen(first)) == 0, "%s at L%ld:\n%s", file, line,
                      rest);
        ck_assert_msg(strcmp(rest + strlen(first), full + plen) == 0,
                      "%s: restart at L%ld differs:\n%s", file, line, rest);
        free(rest);
        tested++;
    }
    ck_assert_int_gt(tested, 2);
    w2l_log_set_callback(NULL, NULL);
    free(full);
}
END_TEST

/* ---- out of memory: every allocation of a sample's read fails once ---- */

static w2l_rc drop_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    (void)ctx, (void)err;
    w2l__batch_free(b);
    return W2L_OK;
}

static w2l_rc drop_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    (void)ctx, (void)err;
    w2l__ddl_elem_free(d);
    return W2L_OK;
}

static w2l_rc count_commit(void *ctx, const char *pos, size_t len, w2l_error *err)
{
    (void)pos, (void)len, (void)err;
    ++*(int *)ctx;
    return W2L_OK;
}

/* W2L_NOMEM or the whole stream, never another error, a crash or a leak. */
START_TEST(fail_alloc_loop)
{
    static const char *const files[] = { "maxwell_types.jsonl", "maxwell_bootstrap.jsonl",
                                         "maxwell_own.jsonl" };
    char uri[600];
    snprintf(uri, sizeof uri, "file:%s%s?format=maxwell-json", W2L_TEST_DATA, files[_i]);
    w2l_log_set_callback(on_log, NULL);
    fail_alloc_install();
    int completed = 0, full = -1;
    for (long nth = 0; nth < 100000 && !completed; nth++) {
        long base = fail_alloc_outstanding();
        fail_alloc_arm(-1);
        int commits = 0;
        w2l__emit_hooks h = {
            .batch = drop_batch, .ddl = drop_ddl, .commit = count_commit, .ctx = &commits
        };
        w2l_emitter *em = w2l__emitter_new(&h, 1);
        w2l_conf *conf = w2l_conf_new();
        w2l_error err;
        ck_assert_ok(w2l_conf_set(conf, "until-caught-up", "true", &err), err);
        const w2l_source_methods *m = w2l_source_find("file");
        w2l_source *s = w2l__calloc(1, m->size);
        s->methods = m;
        fail_alloc_arm(nth);
        w2l_rc rc = m->open(m, conf, uri, NULL, s, &err);
        if (rc == W2L_OK) {
            while ((rc = m->next(s, em, 0, &err)) == W2L_OK) {}
            m->close(s);
        }
        long made = fail_alloc_count();
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_DONE || rc == W2L_NOMEM, "nth %ld: %s: %s", nth, w2l_rc_name(rc),
                      err.msg);
        /* done when the armed failure lay beyond the read's last allocation */
        completed = rc == W2L_DONE && made <= nth;
        if (completed) full = commits;
        w2l__free(s);
        w2l__emitter_free(em);
        w2l_conf_free(conf);
        ck_assert_msg(fail_alloc_outstanding() == base, "nth %ld of %s: %ld blocks leaked", nth,
                      files[_i], fail_alloc_outstanding() - base);
    }
    ck_assert(completed);
    ck_assert_int_gt(full, 2);
    w2l_log_set_callback(NULL, NULL);
}
END_TEST

Suite *suite_cdc_maxwell(void)
{
    Suite *s = suite_create("cdc_maxwell");
    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, types_from_statement);
    tcase_add_test(tc, def_only_decimal);
    tcase_add_test(tc, bootstrap_upserts);
    tcase_add_test(tc, own_database_dropped);
    tcase_add_test(tc, own_database_kept);
    tcase_add_test(tc, geometry_wkt);
    tcase_add_test(tc, binary_padding);
    suite_add_tcase(s, tc);
    tc = tcase_create("edge");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, own_database_name_too_long);
    tcase_add_loop_test(tc, restart_everywhere, 0, 3);
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, fail_alloc_loop, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}
