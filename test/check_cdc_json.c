/*
 * lib/source/cdc_json.c and file_source.c: the "file" source over the sample streams of
 * test/data/cdc (canal-json, debezium-json, maxwell-json). Every change, DDL and commit
 * the source emits is written as one text line (values in their canonical text), and the
 * whole stream is compared with what the sample's README says it holds.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "event/emit.h"
#include "source/cdc_int.h"
#include "source/cdc_json.h"
#include "support/canal_diff.h"
#include "support/support.h"
#include "support/types.h"

#ifndef W2L_TEST_DATA
#define W2L_TEST_DATA "test/data/cdc/"
#endif

/* ---- collecting what the source emits ---- */

typedef struct collect {
    w2l_buf out;
    int commits;
    int tolerant;   /* fault tests: the collector's own allocations may fail */
} collect;

static void put(collect *c, const char *s)
{
    w2l_error err;
    w2l_rc rc = w2l_buf_append(&c->out, s, strlen(s), &err);
    if (!c->tolerant) ck_assert_int_eq(rc, W2L_OK);
}

/* "db.t[id*:int,name:string] " once per schema change is too noisy; the schema is shown
 * on DDL lines and by test_schema_of(). Rows: "db.t I 1|alice|10.50". */
static w2l_rc on_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    collect *c = ctx;
    char line[4096];
    for (size_t i = 0; i < b->n; i++) {
        cdc_change_text(&b->changes[i], line, sizeof line);
        put(c, line);
    }
    w2l__batch_free(b);
    return W2L_OK;
}

static w2l_rc on_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    collect *c = ctx;
    char line[4096], sch[2048] = "";
    if (d->ddl.schema_after) cdc_schema_text(d->ddl.schema_after, sch, sizeof sch);
    snprintf(line, sizeof line, "DDL %s.%s %s%s%s\n", d->ddl.db ? d->ddl.db : "-",
             d->ddl.table ? d->ddl.table : "-", d->ddl.sql, *sch ? " => " : "", sch);
    put(c, line);
    w2l__ddl_elem_free(d);
    return W2L_OK;
}

static w2l_rc on_commit(void *ctx, const char *pos, size_t len, w2l_error *err)
{
    collect *c = ctx;
    char line[128];
    snprintf(line, sizeof line, "COMMIT %.*s\n", (int)len, pos);
    put(c, line);
    c->commits++;
    return W2L_OK;
}

typedef struct fx {
    collect col;
    w2l_emitter *em;
    w2l_conf *conf;
    w2l_source *src;
    char uri[1024];
} fx;

static void fx_init(fx *f, int until_caught_up)
{
    memset(f, 0, sizeof *f);
    w2l__emit_hooks h = {.batch = on_batch, .ddl = on_ddl, .commit = on_commit, .ctx = &f->col};
    f->em = w2l__emitter_new(&h, 1); /* batches of one row keep the global order visible */
    ck_assert_ptr_nonnull(f->em);
    f->conf = w2l_conf_new();
    ck_assert_ptr_nonnull(f->conf);
    w2l_error err;
    ck_assert_ok(w2l_conf_set(f->conf, "until-caught-up", until_caught_up ? "true" : "false", &err),
                 err);
}

static void fx_done(fx *f)
{
    if (f->src) {
        f->src->methods->close(f->src);
        w2l__free(f->src);
    }
    w2l__emitter_free(f->em);
    w2l_conf_free(f->conf);
    w2l_buf_release(&f->col.out);
}

static w2l_rc src_open(fx *f, const char *uri, const char *restored, w2l_error *err)
{
    const w2l_source_methods *m = w2l_source_find("file");
    ck_assert_ptr_nonnull(m);
    w2l_source *s = w2l__calloc(1, m->size);
    if (!s) return w2l__fail(err, W2L_NOMEM, "test: out of memory");
    s->methods = m;
    snprintf(f->uri, sizeof f->uri, "%s", uri);
    w2l_rc rc = m->open(m, f->conf, uri, restored, s, err);
    if (rc != W2L_OK) {
        w2l__free(s);
        return rc;
    }
    f->src = s;
    return W2L_OK;
}

/* next() until it returns something else than W2L_OK. */
static w2l_rc drain(fx *f, int timeout_ms, w2l_error *err)
{
    w2l_rc rc;
    while ((rc = f->src->methods->next(f->src, f->em, timeout_ms, err)) == W2L_OK) {}
    return rc;
}

static const char *out_str(fx *f)
{
    w2l_error err;
    ck_assert_ok(w2l__buf_cstr(&f->col.out, &err), err);
    return (const char *)f->col.out.data;
}

static char *uri_of(const char *file, const char *format)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "file:%s%s?format=%s", W2L_TEST_DATA, file, format);
    return buf;
}

/* Reads a whole sample; returns the text of what was emitted (caller frees). */
static char *read_all(const char *uri, const char *restored, w2l_rc *rc_out, w2l_error *err)
{
    fx f;
    fx_init(&f, 1);
    w2l_rc rc = src_open(&f, uri, restored, err);
    if (rc == W2L_OK) rc = drain(&f, 0, err);
    if (rc_out) *rc_out = rc;
    char *s = strdup(out_str(&f));
    fx_done(&f);
    return s;
}

static void assert_stream(const char *file, const char *format, const char *expected)
{
    w2l_error err;
    w2l_rc rc;
    char *got = read_all(uri_of(file, format), NULL, &rc, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "---- %s got:\n%s---- expected:\n%s", file, got, expected);
    ck_assert_str_eq(got, expected);
    free(got);
}

/* ---- expected streams (test/data/cdc/README) ---- */

static const char canal_expected[] =
    "shop.customers I 1|alice|10.50\n"
    "shop.customers I 2|bob|0.00\n"
    "COMMIT {\"offset\":363}\n"
    "shop.orders I 100|1|99.99\n"
    "COMMIT {\"offset\":718}\n"
    "shop.customers UB 1|alice|10.50\n"
    "shop.customers UA 1|alice|20.00\n"
    "COMMIT {\"offset\":1057}\n"
    "shop.customers UB 2|bob|0.00\n"
    "shop.customers UA 3|bob|0.00\n"
    "COMMIT {\"offset\":1384}\n"
    "shop.orders D 100|1|99.99\n"
    "COMMIT {\"offset\":1739}\n"
    "DDL shop.customers ALTER TABLE customers ADD COLUMN email varchar(80) NULL\n"
    "COMMIT {\"offset\":1986}\n"
    "shop.customers I 4|carol|5.00|carol@example.com\n"
    "shop.customers I 5|dave|-1.25|null\n"
    "COMMIT {\"offset\":2424}\n"
    "shop.customers D 1|alice|20.00|null\n"
    "COMMIT {\"offset\":2792}\n";

START_TEST(canal_stream)
{
    assert_stream("canal.jsonl", "canal-json", canal_expected);
}
END_TEST

/* the tinyint(1) column is an int by default (source.tinyint1-as-boolean=false) */
static const char canal_types_expected[] =
    "t.all_types I 1|1|-128|65535|-8388608|4294967295|-9223372036854775808|18446744073709551615|"
    "-9999999999.99|3.4028235e+38|-1.7976931348623157e+308|true|4095|9999-12-31|"
    "2024-02-29T23:59:59.999999|2038-01-19T03:14:07.499000+00:00|23:59:59.000001|2155|abc|"
    "h\xc3\xa9llo \xe2\x98\x83|b|x,y|{\"k\": [1, 2]}|02ff8041|c3\n"
    "COMMIT {\"offset\":1089}\n"
    "t.all_types I 2|0|0|0|0|0|0|0|0.00|0.0|-0.0|false|0|1970-01-01|1970-01-01T00:00:00.000000|"
    "1970-01-01T00:00:01.000000+00:00|00:00:00.000000|0|||a||null||\n"
    "COMMIT {\"offset\":2005}\n"
    "t.all_types I 3|null|127|null|8388607|null|9223372036854775807|null|9999999999.99|null|2.5|"
    "null|"
    "null|1000-01-01|1000-01-01T00:00:00.000001|null|null|1901|null|null|null|null|null|null|null\n"
    "COMMIT {\"offset\":2958}\n";

START_TEST(canal_types)
{
    assert_stream("canal_types.jsonl", "canal-json", canal_types_expected);
}
END_TEST

/* The schema canal's mysqlType gives (w2l-design(7) section 4). */
START_TEST(canal_types_schema)
{
    fx f;
    fx_init(&f, 1);
    w2l_error err;
    w2l__cdc_opts o = {1, 0, 0, "", NULL};
    w2l__cdc *d = w2l__cdc_new(W2L__CDC_CANAL, &o);
    FILE *fp = fopen(W2L_TEST_DATA "canal_types.jsonl", "r");
    ck_assert_ptr_nonnull(fp);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, fp);
    ck_assert(n > 0);
    w2l__cdc_step step;
    ck_assert_ok(w2l__cdc_decode(d, line, (size_t)n - 1, 0, &step, &err), err);
    ck_assert_int_eq(step, W2L__CDC_END);
    size_t nev;
    const w2l__cdc_event *ev = w2l__cdc_events(d, &nev);
    ck_assert_uint_eq(nev, 1);
    char sch[2048];
    cdc_schema_text(ev[0].change.schema, sch, sizeof sch);
    ck_assert_str_eq(sch, "id*!:int,b:boolean,ti:int,usi:int,mi:int,ui:long,bi:long,"
                          "ubi:decimal(20,0),"
                          "dec:decimal(12,2),f:float,d:double,bit1:boolean,bit12:long,dt:date,"
                          "dtm:timestamp,"
                          "ts:timestamptz,tm:time,y:int,c:string,vc:string,e:string,st:string,"
                          "j:string,"
                          "bin:binary,bl:binary");
    w2l__cdc_clear(d);
    w2l__cdc_free(d);
    free(line);
    fclose(fp);
    fx_done(&f);
}
END_TEST

/* source.timezone, source.tinyint1-as-boolean, source.time-as-string. */
START_TEST(canal_options)
{
    const char *tmp = tmpdir_make("cdcopt");
    char path[512], uri[600];
    snprintf(path, sizeof path, "%s/opt.jsonl", tmp);
    FILE *fp = fopen(path, "w");
    fputs("{\"data\":[{\"id\":\"1\",\"b\":\"7\",\"ts\":\"2024-01-01 08:00:00\","
          "\"tm\":\"-838:59:59\"}],"
          "\"database\":\"d\",\"isDdl\":false,\"mysqlType\":{\"id\":\"int\",\"b\":\"tinyint(1)\","
          "\"ts\":\"timestamp\",\"tm\":\"time\"},\"pkNames\":[\"id\"],\"table\":\"t\","
          "\"type\":\"INSERT\"}\n", fp);
    fclose(fp);
    snprintf(uri, sizeof uri, "file:%s?format=canal-json", path);
    fx f;
    fx_init(&f, 1);
    w2l_error err;
    ck_assert_ok(w2l_conf_set(f.conf, "source.timezone", "+08:00", &err), err);
    ck_assert_ok(w2l_conf_set(f.conf, "source.tinyint1-as-boolean", "false", &err), err);
    ck_assert_ok(w2l_conf_set(f.conf, "source.time-as-string", "true", &err), err);
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(drain(&f, 0, &err), W2L_DONE);
    ck_assert_str_eq(out_str(&f), "d.t I 1|7|2024-01-01T00:00:00.000000+00:00|"
                                  "-838:59:59\nCOMMIT {\"offset\":220}\n");
    fx_done(&f);
    /* the same TIME without the option is an error naming it */
    fx_init(&f, 1);
    ck_assert_ok(w2l_conf_set(f.conf, "source.tinyint1-as-boolean", "false", &err), err);
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(drain(&f, 0, &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "column tm: value \"-838:59:59\": TIME outside") != NULL, "%s",
                  err.msg);
    ck_assert_msg(strstr(err.msg, "line 1 (byte offset 0)") != NULL, "%s", err.msg);
    fx_done(&f);
    tmpdir_remove(tmp);
}
END_TEST

static const char dbz_expected[] =
    "inventory.customers I 1|alice|12.345|2024-02-29|2024-02-29T23:59:59.999999|"
    "2024-02-29T23:59:59.123000|"
    "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|-9223372036854775808|"
    "18446744073709551615|{\"a\":1}\n"
    "COMMIT {\"offset\":@1}\n"
    "inventory.customers I 2|bob|-1.250|2024-02-29|2024-02-29T23:59:59.999999|"
    "2024-02-29T23:59:59.123000|"
    "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|-9223372036854775808|"
    "18446744073709551615|{\"a\":1}\n"
    "inventory.orders I 500|2|3\n"
    "inventory.customers UB 1|alice|12.345|2024-02-29|2024-02-29T23:59:59.999999|"
    "2024-02-29T23:59:59.123000|"
    "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|-9223372036854775808|"
    "18446744073709551615|{\"a\":1}\n"
    "inventory.customers UA 1|alice|99999.999|2024-02-29|2024-02-29T23:59:59.999999|"
    "2024-02-29T23:59:59.123000|"
    "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|-9223372036854775808|"
    "18446744073709551615|{\"a\":1}\n";

/* Checks one line of output against a prefix list; the debezium envelopes are long, so
 * this test compares row lines and the order of commits. */
START_TEST(debezium_stream)
{
    w2l_error err;
    w2l_rc rc;
    char *got = read_all(uri_of("debezium.jsonl", "debezium-json"), NULL, &rc, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    /* replace commit offsets by @N for a stable comparison */
    char norm[16384];
    size_t o = 0;
    int ncommit = 0;
    for (const char *p = got; *p && o < sizeof norm - 16;) {
        if (!strncmp(p, "COMMIT {\"offset\":", 17)) {
            o += (size_t)snprintf(norm + o, sizeof norm - o, "COMMIT {\"offset\":@%d}", ++ncommit);
            p = strchr(p, '}') + 1;
        } else {
            norm[o++] = *p++;
        }
    }
    norm[o] = '\0';
    const char *rest =
        "COMMIT {\"offset\":@2}\n"
        "inventory.customers UB 2|bob|-1.250|2024-02-29|2024-02-29T23:59:59.999999|"
        "2024-02-29T23:59:59.123000|"
        "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|"
        "-9223372036854775808|"
        "18446744073709551615|{\"a\":1}\n"
        "inventory.customers UA 20|bob|-1.250|2024-02-29|2024-02-29T23:59:59.999999|"
        "2024-02-29T23:59:59.123000|"
        "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|"
        "-9223372036854775808|"
        "18446744073709551615|{\"a\":1}\n"
        "inventory.customers D 1|alice|99999.999|2024-02-29|2024-02-29T23:59:59.999999|"
        "2024-02-29T23:59:59.123000|"
        "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|"
        "-9223372036854775808|"
        "18446744073709551615|{\"a\":1}\n"
        "COMMIT {\"offset\":@3}\n"
        "DDL inventory.customers ALTER TABLE customers ADD COLUMN note VARCHAR(20) => "
        "id*!:int,name:string,note:string\n"
        "COMMIT {\"offset\":@4}\n"
        "inventory.customers I 3|carol|0.000|2024-02-29|2024-02-29T23:59:59.999999|"
        "2024-02-29T23:59:59.123000|"
        "2024-02-29T23:59:59.500000+00:00|23:59:59.999999|9|true|00ff|-0.5|1.5|"
        "-9223372036854775808|"
        "18446744073709551615|{\"a\":1}|hi\n"
        "inventory.orders UB 500|2|3\n"
        "inventory.orders UA 500|20|4\n"
        "COMMIT {\"offset\":@5}\n"
        "inventory.orders D 500|20|4\n"
        "COMMIT {\"offset\":@6}\n";
    char expected[16384];
    snprintf(expected, sizeof expected, "%s%s", dbz_expected, rest);
    if (strcmp(norm, expected)) fprintf(stderr, "---- got:\n%s---- expected:\n%s", norm, expected);
    ck_assert_str_eq(norm, expected);
    free(got);
}
END_TEST

static const char dbz_noschema_expected[] =
    "DDL shop.items CREATE TABLE items (id INT NOT NULL, price DECIMAL(10,2), at DATETIME(6),"
    " d DATE, ts TIMESTAMP, "
    "t TIME, b BIT(3), kind ENUM('x','y'), PRIMARY KEY (id)) => id*!:int,price:decimal(10,2),"
    "at:timestamp,d:date,"
    "ts:timestamptz,t:time,b:long,kind:string\n"
    "COMMIT {\"offset\":1780}\n"
    "shop.items I 1|12.34|2024-02-29T23:59:59.999999|2024-02-29|2024-02-29T23:59:59.000000+00:00|"
    "01:02:03.000000|5|y\n"
    "COMMIT {\"offset\":2050}\n"
    "shop.items UB 1|12.34|2024-02-29T23:59:59.999999|2024-02-29|2024-02-29T23:59:59.000000+00:00|"
    "01:02:03.000000|5|y\n"
    "shop.items UA 2|-0.05|1970-01-01T00:00:00.000000|1969-12-31|1970-01-01T00:00:00.000000+00:00|"
    "00:00:00.000000|0|x\n"
    "COMMIT {\"offset\":2409}\n"
    "DDL shop.items ALTER TABLE items DROP COLUMN kind => id*!:int,price:decimal(10,2),"
    "at:timestamp,d:date,"
    "ts:timestamptz,t:time,b:long\n"
    "COMMIT {\"offset\":3873}\n"
    "shop.items I 3|null|1970-01-01T00:00:00.001000|1970-01-01|null|-|null\n"
    "shop.logs I 1|start|2.5|true|{\"k\":[1]}\n"
    "COMMIT {\"offset\":4301}\n"
    "shop.logs I 2|null|3.0|false|null\n"
    "COMMIT {\"offset\":4503}\n";

START_TEST(debezium_noschema_stream)
{
    assert_stream("debezium_noschema.jsonl", "debezium-json", dbz_noschema_expected);
}
END_TEST

static const char maxwell_expected[] =
    "DDL shop.items CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2),"
    " created "
    "DATETIME(6), upd TIMESTAMP, doc JSON, tags SET('a','b','c'), raw BLOB, big BIGINT UNSIGNED,"
    " tm TIME, day DATE, "
    "ratio DOUBLE, state ENUM('new','done')) => id*!:int,name:string,price:decimal(10,2),"
    "created:timestamp,"
    "upd:timestamptz,doc:string,tags:string,raw:binary,big:decimal(20,0),tm:time,day:date,"
    "ratio:double,state:string\n"
    "COMMIT {\"offset\":1035}\n"
    "shop.items I 1|pen|1.50|2024-02-29T23:59:59.999999|2024-03-01T00:00:00.000000+00:00|"
    "{\"k\":[1,2]}|a,c|0001fe|"
    "18446744073709551615|12:34:56.000000|2024-02-29|0.1|new\n"
    "shop.items I 2|cup|12345678.90|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done\n"
    "COMMIT {\"offset\":1670}\n"
    "shop.items UB 2|cup|12345678.90|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done\n"
    "shop.items UA 20|cup|-0.01|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done\n"
    "shop.items D 1|pen|1.50|2024-02-29T23:59:59.999999|2024-03-01T00:00:00.000000+00:00|"
    "{\"k\":[1,2]}|a,c|0001fe|"
    "18446744073709551615|12:34:56.000000|2024-02-29|0.1|new\n"
    "COMMIT {\"offset\":2306}\n"
    "DDL shop.items ALTER TABLE items ADD COLUMN qty INT => id*!:int,name:string,"
    "price:decimal(10,2),"
    "created:timestamp,upd:timestamptz,doc:string,tags:string,raw:binary,big:decimal(20,0),tm:time,"
    "day:date,"
    "ratio:double,state:string,qty:int\n"
    "COMMIT {\"offset\":3832}\n"
    "shop.items I 3|cup|12345678.90|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done|7\n"
    "shop.events I 1|a|2.5|true\n"
    "shop.events I 2|null|3.0|false\n"
    "COMMIT {\"offset\":4440}\n"
    /* a bootstrap row replaces the row of its key (cdc_maxwell.c) */
    "shop.items UB 4|cup|12345678.90|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done|null\n"
    "shop.items I 4|cup|12345678.90|1970-01-01T00:00:00.000000|null|null|||0|00:00:00.000000|"
    "1970-01-01|-0.0|done|null\n"
    "COMMIT {\"offset\":4808}\n"
    "DDL shop.events DROP TABLE events\n"
    "COMMIT {\"offset\":4997}\n";

START_TEST(maxwell_stream)
{
    assert_stream("maxwell.jsonl", "maxwell-json", maxwell_expected);
}
END_TEST

/* ---- positions: every commit of a full read is a restart point ---- */

static void check_restarts(const char *file, const char *format)
{
    w2l_error err;
    w2l_rc rc;
    char *full = read_all(uri_of(file, format), NULL, &rc, &err);
    ck_assert_msg(rc == W2L_DONE, "%s", err.msg);
    int tested = 0;
    for (const char *p = full; (p = strstr(p, "COMMIT ")) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        char pos[64];
        snprintf(pos, sizeof pos, "%.*s", (int)(eol - p - 7), p + 7);
        char *rest = read_all(uri_of(file, format), pos, &rc, &err);
        ck_assert_msg(rc == W2L_DONE, "restart at %s: %s", pos, err.msg);
        /* a restarted source first announces the restored position (an empty commit), so
         * that a checkpoint before its first transaction keeps it */
        char first[80];
        snprintf(first, sizeof first, "COMMIT %s\n", pos);
        ck_assert_msg(strncmp(rest, first, strlen(first)) == 0,
                      "restart at %s of %s: no announced position:\n%s", pos, file, rest);
        const char *after = rest + strlen(first);
        /* union = prefix up to this commit + what the restarted source emits */
        size_t plen = (size_t)(eol + 1 - full);
        ck_assert_msg(strlen(full) == plen + strlen(after) && strcmp(full + plen, after) == 0,
                      "restart at %s of %s differs:\n%s", pos, file, after);
        free(rest);
        tested++;
    }
    ck_assert_int_gt(tested, 3);
    free(full);
}

START_TEST(restart_canal) { check_restarts("canal.jsonl", "canal-json"); }
END_TEST
START_TEST(restart_debezium) { check_restarts("debezium.jsonl", "debezium-json"); }
END_TEST
START_TEST(restart_debezium_noschema)
{
    check_restarts("debezium_noschema.jsonl", "debezium-json");
}
END_TEST
START_TEST(restart_maxwell) { check_restarts("maxwell.jsonl", "maxwell-json"); }
END_TEST

/* ---- a growing file: tail, stop, reopen at the position, append, finish ---- */

static void append_bytes(const char *path, const char *p, size_t n)
{
    FILE *fp = fopen(path, "a");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(p, 1, n, fp), n);
    fclose(fp);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(s, 1, (size_t)len, fp), (size_t)len);
    s[len] = '\0';
    fclose(fp);
    *n = (size_t)len;
    return s;
}

static void check_growing(const char *file, const char *format)
{
    size_t n;
    char src[512];
    snprintf(src, sizeof src, "%s%s", W2L_TEST_DATA, file);
    char *all = slurp(src, &n);
    w2l_error err;
    w2l_rc rc;
    char *full = read_all(uri_of(file, format), NULL, &rc, &err);
    ck_assert_int_eq(rc, W2L_DONE);

    const char *tmp = tmpdir_make("cdcgrow");
    char path[512], uri[700];
    snprintf(path, sizeof path, "%s/grow.jsonl", tmp);
    snprintf(uri, sizeof uri, "file:%s?format=%s", path, format);
    append_bytes(path, "", 0);
    /* phase 1, tail mode: feed the file in pieces that cut lines anywhere */
    fx f;
    fx_init(&f, 0);
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(f.src->methods->next(f.src, f.em, 0, &err), W2L_AGAIN);
    size_t half = n / 2, fed = 0;
    while (fed < half) {
        size_t k = W2L_MIN((size_t)97, half - fed);
        append_bytes(path, all + fed, k);
        fed += k;
        rc = drain(&f, 1, &err);
        ck_assert_msg(rc == W2L_AGAIN, "%s: %s", w2l_rc_name(rc), err.msg);
    }
    /* take the last position, stop */
    char pos[64] = "";
    const char *o = out_str(&f), *last = NULL;
    for (const char *p = o; (p = strstr(p, "COMMIT ")) != NULL; p++) last = p;
    ck_assert_ptr_nonnull(last);
    snprintf(pos, sizeof pos, "%.*s", (int)(strchr(last, '\n') - last - 7), last + 7);
    char *first = strdup(o);
    /* what came after the last commit was not emitted (it is incomplete) */
    ck_assert_str_eq(first + strlen(first) - strlen(strchr(last, '\n')), "\n");
    fx_done(&f);
    /* phase 2: append the rest, reopen at the position until caught up */
    append_bytes(path, all + fed, n - fed);
    fx_init(&f, 1);
    ck_assert_ok(src_open(&f, uri, pos, &err), err);
    rc = drain(&f, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    size_t fl = strlen(first);
    char announced[80]; /* the restored position, announced first */
    snprintf(announced, sizeof announced, "COMMIT %s\n", pos);
    const char *second = out_str(&f);
    ck_assert_msg(strncmp(second, announced, strlen(announced)) == 0,
                  "growing %s: no announced position", file);
    second += strlen(announced);
    ck_assert_msg(strncmp(full, first, fl) == 0 && strcmp(full + fl, second) == 0,
                  "growing %s: first part:\n%s\nsecond part:\n%s", file, first, second);
    fx_done(&f);
    free(first);
    free(full);
    free(all);
    tmpdir_remove(tmp);
}

START_TEST(growing_canal) { check_growing("canal.jsonl", "canal-json"); }
END_TEST
START_TEST(growing_debezium) { check_growing("debezium.jsonl", "debezium-json"); }
END_TEST
START_TEST(growing_maxwell) { check_growing("maxwell.jsonl", "maxwell-json"); }
END_TEST

/* ---- bad input ---- */

typedef struct bad_case {
    const char *format;
    const char *text;     /* the file */
    const char *emitted;  /* what comes out before the failure */
    const char *message;  /* a part of the error message */
} bad_case;

#define CANAL_OK "{\"data\":[{\"id\":\"1\"}],\"database\":\"d\",\"isDdl\":false," \
                 "\"mysqlType\":{\"id\":\"int\"},\"pkNames\":[\"id\"],\"table\":\"t\"," \
                 "\"type\":\"INSERT\"}\n"
#define MX_CREATE "{\"type\":\"table-create\",\"database\":\"d\",\"table\":\"t\"," \
                  "\"def\":{\"database\":\"d\",\"table\":\"t\",\"primary-key\":[\"id\"]," \
                  "\"columns\":[{\"type\":\"int\",\"name\":\"id\"}]}," \
                  "\"sql\":\"CREATE TABLE t (id INT PRIMARY KEY)\"}\n"
#define MX_ROW(xid, commit, id) \
    "{\"database\":\"d\",\"table\":\"t\",\"type\":\"insert\",\"xid\":" #xid commit \
    ",\"data\":{\"id\":" #id "}}\n"

static const bad_case bad_cases[] = {
    { "canal-json", CANAL_OK "{\"data\":[{\"id\":\"2\"}],\"database\":\n",
      "d.t I 1\nCOMMIT {\"offset\":121}\n",
      "line 2 (byte offset 121): canal-json: malformed message: invalid JSON" },
    { "canal-json",
      CANAL_OK "{\"data\":[{\"id\":\"2\"}],\"database\":\"d\",\"table\":\"t\","
               "\"type\":\"INSERT\"}\n",
      "d.t I 1\nCOMMIT {\"offset\":121}\n",
      "line 2 (byte offset 121): canal-json: missing or invalid member \"mysqlType\"" },
    { "canal-json",
      "{\"data\":[{\"id\":\"1\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"frobnicator(3)\"},\"table\":\"t\","
      "\"type\":\"INSERT\"}\n",
      "",
      "line 1 (byte offset 0): canal-json: table d.t column id: unknown type \"frobnicator(3)\"" },
    { "canal-json",
      "{\"data\":[{\"id\":\"1\"},{\"id\":\"x1\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"int\"},\"table\":\"t\",\"type\":\"INSERT\"}\n",
      "", "canal-json: table d.t column id: value \"x1\": not an int (32-bit)" },
    { "canal-json",
      "{\"data\":[{\"id\":\"2147483648\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"int\"},\"table\":\"t\",\"type\":\"INSERT\"}\n",
      "", "value \"2147483648\": not an int (32-bit)" },
    { "canal-json",
      "{\"data\":[{\"id\":\"1.234\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"decimal(5,2)\"},\"table\":\"t\",\"type\":\"INSERT\"}\n",
      "", "value \"1.234\"" },
    { "canal-json",
      "{\"data\":[{\"id\":\"2024-02-30\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"date\"},\"table\":\"t\",\"type\":\"INSERT\"}\n",
      "", "value \"2024-02-30\"" },
    { "canal-json",
      "{\"data\":[{\"id\":\"1\"}],\"database\":\"d\",\"isDdl\":false,"
      "\"mysqlType\":{\"id\":\"int\"},\"table\":\"t\",\"type\":\"UPSERT\"}\n",
      "", "canal-json: unknown type \"UPSERT\"" },
    { "canal-json", "[1,2]\n", "",
      "line 1 (byte offset 0): canal-json: message is not a JSON object" },
    { "maxwell-json",
      MX_CREATE MX_ROW(1, ",\"commit\":true", 1)
          MX_ROW(2, "", 2) "{\"database\":\"d\",\"table\":\"t\",\"type\":\"insert\",\"xid\":2,"
                           "\"data\":{\"id\":\"x\"}}\n",
      "DDL d.t CREATE TABLE t (id INT PRIMARY KEY) => id*!:int\nCOMMIT {\"offset\":190}\nd.t I "
      "1\nCOMMIT {\"offset\":273}\n",
      "line 4 (byte offset 342): maxwell-json: table d.t column id: value \"x\": not an int "
      "(32-bit)" },
    { "maxwell-json",
      "{\"database\":\"d\",\"table\":\"u\",\"type\":\"update\",\"data\":{\"id\":1},"
      "\"old\":{\"id\":2}}\n",
      "", "maxwell-json: table d.u: update or delete of a table never described" },
    { "maxwell-json", "{\"database\":\"d\",\"table\":\"u\",\"data\":{\"id\":1}}\n", "",
      "missing or invalid member \"type\"" },
    { "debezium-json",
      "{\"before\":null,\"after\":{\"id\":1},\"source\":{\"db\":\"d\","
      "\"table\":\"t\"},\"op\":\"x\"}\n",
      "", "debezium-json: unknown op \"x\"" },
    { "debezium-json",
      "{\"before\":{\"id\":1},\"after\":null,\"source\":{\"db\":\"d\","
      "\"table\":\"t\"},\"op\":\"d\"}\n",
      "", "debezium-json: table d.t: update or delete of a table never described" },
    { "debezium-json",
      "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\","
      "\"field\":\"after\",\"fields\":"
      "[{\"type\":\"int128\",\"field\":\"m\"}]}]},\"payload\":{\"after\":{\"m\":1},"
      "\"source\":{\"db\":\"d\",\"table\":\"t\"},\"op\":\"c\"}}\n",
      "", "debezium-json: table d.t column m: unknown Kafka Connect type int128" },
};

START_TEST(bad_input)
{
    const bad_case *bc = &bad_cases[_i];
    const char *tmp = tmpdir_make("cdcbad");
    char path[512], uri[700];
    snprintf(path, sizeof path, "%s/bad.jsonl", tmp);
    append_bytes(path, bc->text, strlen(bc->text));
    snprintf(uri, sizeof uri, "file:%s?format=%s", path, bc->format);
    fx f;
    fx_init(&f, 1);
    w2l_error err;
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    w2l_rc rc = drain(&f, 0, &err);
    ck_assert_msg(rc == W2L_SOURCE, "case %d: %s: %s", _i, w2l_rc_name(rc), err.msg);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "file %s: line ", path);
    ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "case %d: %s", _i, err.msg);
    ck_assert_msg(strstr(err.msg, bc->message) != NULL, "case %d: %s", _i, err.msg);
    ck_assert_str_eq(out_str(&f), bc->emitted);
    /* sticky */
    w2l_error err2;
    ck_assert_int_eq(f.src->methods->next(f.src, f.em, 0, &err2), W2L_SOURCE);
    ck_assert_str_eq(err2.msg, err.msg);
    fx_done(&f);
    tmpdir_remove(tmp);
}
END_TEST

/* Tables whose names are as long together but split apart ("a"."bc", "ab"."c") are told
 * apart on the fast path, and the offsets of any width are written whole. */
START_TEST(canal_names_split_and_wide_offsets)
{
    const char *tmp = tmpdir_make("cdcsplit");
    char path[512], uri[700];
    snprintf(path, sizeof path, "%s/split.jsonl", tmp);
    const char *names[][2] = {{"a", "bc"}, {"ab", "c"}, {"a", "bc"}, {"ab", "c"}};
    int pads[] = {0, 900, 9000, 0}; /* whitespace before the closing brace: wider offsets */
    char want[1024] = "";
    size_t off = 0;
    for (int i = 0; i < 4; i++) {
        char line[10240];
        int n = snprintf(line, sizeof line,
                         "{\"data\":[{\"id\":\"%d\"}],\"database\":\"%s\",\"isDdl\":false,"
                         "\"mysqlType\":{\"id\":\"int\"},\"pkNames\":[\"id\"],\"table\":\"%s\","
                         "\"type\":\"INSERT\"%*s}\n",
                         i + 1, names[i][0], names[i][1], pads[i], "");
        append_bytes(path, line, (size_t)n);
        off += (size_t)n;
        snprintf(want + strlen(want), sizeof want - strlen(want),
                 "%s.%s I %d\nCOMMIT {\"offset\":%zu}\n", names[i][0], names[i][1], i + 1, off);
    }
    snprintf(uri, sizeof uri, "file:%s?format=canal-json", path);
    fx f;
    fx_init(&f, 1);
    w2l_error err;
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(drain(&f, 0, &err), W2L_DONE);
    ck_assert_str_eq(out_str(&f), want);
    fx_done(&f);
    tmpdir_remove(tmp);
}
END_TEST

START_TEST(uri_errors)
{
    fx f;
    fx_init(&f, 1);
    w2l_error err;
    const char *u1 = "file:test/data/cdc/canal.jsonl?format=avro";
    ck_assert_int_eq(src_open(&f, u1, NULL, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, u1) && strstr(err.msg, "canal-json|debezium-json|maxwell-json"),
                  "%s", err.msg);
    ck_assert_int_eq(src_open(&f, "file:test/data/cdc/canal.jsonl", NULL, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "format required"), "%s", err.msg);
    ck_assert_int_eq(src_open(&f, "file:/nonexistent/x.jsonl?format=canal-json", NULL, &err),
                     W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.jsonl"), "%s", err.msg);
    ck_assert_int_eq(src_open(&f, uri_of("canal.jsonl", "canal-json"), "{\"offset\":5}", &err),
                     W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "not at the end of a line"), "%s", err.msg);
    ck_assert_int_eq(src_open(&f, uri_of("canal.jsonl", "canal-json"), "{\"offset\":999999}", &err),
                     W2L_SOURCE);
    ck_assert_int_eq(src_open(&f, uri_of("canal.jsonl", "canal-json"), "{\"pos\":1}", &err),
                     W2L_CORRUPT);
    ck_assert_ok(w2l_conf_set(f.conf, "source.timezone", "Mars/Olympus", &err), err);
    ck_assert_int_eq(src_open(&f, uri_of("canal.jsonl", "canal-json"), NULL, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "Mars/Olympus"), "%s", err.msg);
    fx_done(&f);
}
END_TEST

/* A long line (larger than one read block) and a last line without newline. */
START_TEST(long_line_and_no_newline)
{
    const char *tmp = tmpdir_make("cdclong");
    char path[512], uri[700];
    snprintf(path, sizeof path, "%s/long.jsonl", tmp);
    size_t big = 3u << 20;
    char *val = malloc(big + 1);
    memset(val, 'x', big);
    val[big] = '\0';
    FILE *fp = fopen(path, "w");
    fprintf(fp, "{\"data\":[{\"id\":\"1\",\"s\":\"%s\"}],\"database\":\"d\",\"isDdl\":false,"
                "\"mysqlType\":{\"id\":\"int\",\"s\":\"longtext\"},\"table\":\"t\","
                "\"type\":\"INSERT\"}\n", val);
    fprintf(fp, "{\"data\":[{\"id\":\"2\",\"s\":\"y\"}],\"database\":\"d\",\"isDdl\":false,"
                "\"mysqlType\":{\"id\":\"int\",\"s\":\"longtext\"},\"table\":\"t\","
                "\"type\":\"INSERT\"}");
    fclose(fp);
    free(val);
    snprintf(uri, sizeof uri, "file:%s?format=canal-json", path);
    fx f;
    w2l_error err;
    /* tail mode: the unterminated last line waits */
    fx_init(&f, 0);
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(drain(&f, 0, &err), W2L_AGAIN);
    ck_assert_int_eq(f.col.commits, 1);
    fx_done(&f);
    /* until caught up: it counts */
    fx_init(&f, 1);
    ck_assert_ok(src_open(&f, uri, NULL, &err), err);
    ck_assert_int_eq(drain(&f, 0, &err), W2L_DONE);
    ck_assert_int_eq(f.col.commits, 2);
    ck_assert_ptr_nonnull(strstr(out_str(&f), "d.t I 2|y\n"));
    fx_done(&f);
    tmpdir_remove(tmp);
}
END_TEST

/* ---- out of memory ---- */

START_TEST(fail_alloc_loop)
{
    static const char *files[][2] = {{"canal.jsonl", "canal-json"},
                                     {"debezium.jsonl", "debezium-json"},
                                     {"maxwell.jsonl", "maxwell-json"}};
    fail_alloc_install();
    for (size_t fi = 0; fi < W2L_ARRAY_LEN(files); fi++) {
        int completed = 0;
        for (long nth = 0; nth < 100000 && !completed; nth += 1) {
            long base = fail_alloc_outstanding();
            fail_alloc_arm(-1);
            w2l__emit_hooks h = {.batch = on_batch, .ddl = on_ddl, .commit = on_commit};
            collect col = {0};
            col.tolerant = 1;
            h.ctx = &col;
            w2l_emitter *em = w2l__emitter_new(&h, 1);
            w2l_conf *conf = w2l_conf_new();
            w2l_error err;
            ck_assert_ok(w2l_conf_set(conf, "until-caught-up", "true", &err), err);
            const w2l_source_methods *m = w2l_source_find("file");
            w2l_source *s = w2l__calloc(1, m->size);
            s->methods = m;
            fail_alloc_arm(nth);
            w2l_rc rc = m->open(m, conf, uri_of(files[fi][0], files[fi][1]), NULL, s, &err);
            if (rc == W2L_OK) {
                while ((rc = m->next(s, em, 0, &err)) == W2L_OK) {}
                m->close(s);
            }
            fail_alloc_arm(-1);
            ck_assert_msg(rc == W2L_DONE || rc == W2L_NOMEM, "nth %ld: %s: %s", nth,
                          w2l_rc_name(rc), err.msg);
            completed = rc == W2L_DONE;
            w2l__free(s);
            w2l__emitter_free(em);
            w2l_conf_free(conf);
            w2l_buf_release(&col.out);
            ck_assert_msg(fail_alloc_outstanding() == base, "nth %ld of %s: %ld blocks leaked", nth,
                          files[fi][0], fail_alloc_outstanding() - base);
        }
        ck_assert(completed);
    }
}
END_TEST

/* ---- values through w2l__cdc_decode: every expected value is worked out by hand from
 * the message (base64 and WKB bytes noted next to them) ---- */

/* Decodes each line of lines (one message per line) with one decoder. The text: a line
 * "S <schema>" whenever a change carries another schema than the one before, a line
 * "<op> v|v|..." per change, and "ERR <message>" for a message that failed. */
static char *decode_lines(w2l__cdc_format fmt, int tinyint1, const char *lines)
{
    w2l__cdc_opts o;
    memset(&o, 0, sizeof o);
    o.tinyint1_as_boolean = tinyint1;
    w2l__cdc *d = w2l__cdc_new(fmt, &o);
    ck_assert_ptr_nonnull(d);
    w2l_buf out = {0};
    w2l_error err;
    const w2l_schema *last = NULL;
    char line[8192], sch[2048], v[1024];
    for (const char *p = lines; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        w2l__cdc_step step;
        w2l_rc rc = w2l__cdc_decode(d, p, len, 0, &step, &err);
        if (rc == W2L_OK && step == W2L__CDC_BEFORE) { /* the held message comes again */
            w2l__cdc_clear(d);
            continue;
        }
        if (rc != W2L_OK) {
            snprintf(line, sizeof line, "ERR %s\n", err.msg);
            ck_assert_ok(w2l_buf_append(&out, line, strlen(line), &err), err);
        } else {
            size_t nev;
            const w2l__cdc_event *ev = w2l__cdc_events(d, &nev);
            for (size_t i = 0; i < nev; i++) {
                const w2l_change *ch = &ev[i].change;
                if (ev[i].is_ddl) continue;
                if (ch->schema != last) {
                    cdc_schema_text(ch->schema, sch, sizeof sch);
                    snprintf(line, sizeof line, "S %s\n", sch);
                    ck_assert_ok(w2l_buf_append(&out, line, strlen(line), &err), err);
                    last = ch->schema;
                }
                int n = snprintf(line, sizeof line, "%s ", cdc_op_name(ch->op));
                for (size_t k = 0; k < ch->ncols; k++) {
                    w2l_value_format(w2l_schema_field(ch->schema, k)->type, &ch->row[k], v,
                                     sizeof v);
                    n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", k ? "|" : "", v);
                }
                snprintf(line + n, sizeof line - (size_t)n, "\n");
                ck_assert_ok(w2l_buf_append(&out, line, strlen(line), &err), err);
            }
        }
        last = rc == W2L_OK ? last : NULL;
        w2l__cdc_clear(d);
        p += len + (eol ? 1 : 0);
    }
    w2l__cdc_free(d);
    ck_assert_ok(w2l__buf_cstr(&out, &err), err);
    char *s = strdup((const char *)out.data);
    w2l_buf_release(&out);
    return s;
}

static void assert_decoded(w2l__cdc_format fmt, int tinyint1, const char *lines,
                           const char *expected)
{
    char *got = decode_lines(fmt, tinyint1, lines);
    if (strcmp(got, expected)) fprintf(stderr, "---- got:\n%s---- expected:\n%s", got, expected);
    ck_assert_str_eq(got, expected);
    free(got);
}

/* One debezium message with the JSON converter's schema envelope: the fields of "after"
 * and its values. */
#define DBZ(fields, values) \
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"after\"," \
    "\"fields\":[" \
    fields "]}]},\"payload\":{\"before\":null,\"after\":{" values \
    "},\"source\":{\"db\":\"d\",\"table\":\"t\"},\"op\":\"c\"}}\n"
#define KF(name, type) "{\"field\":\"" name "\",\"type\":\"" type "\"}"
#define KL(name, type, logical) \
    "{\"field\":\"" name "\",\"type\":\"" type "\",\"name\":\"" logical "\"}"
#define KP(name, type, logical, params) \
    "{\"field\":\"" name "\",\"type\":\"" type "\",\"name\":\"" logical \
    "\",\"parameters\":{" params "}}"
#define KDEC(name, scale, precision) \
    KP(name, "bytes", "org.apache.kafka.connect.data.Decimal", \
       "\"scale\":\"" scale "\",\"connect.decimal.precision\":\"" precision "\"")

START_TEST(dbz_connect_base_types)
{
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   DBZ(KF("i8", "int8") "," KF("i16", "int16") "," KF("i32", "int32") ","
                       KF("i64", "int64") ","
                       KF("f32", "float32") "," KF("f64", "float64") "," KF("fl", "float") ","
                       KF("db", "double") ","
                       KF("b", "boolean") "," KF("s", "string") "," KF("by", "bytes") ","
                       KF("st", "struct") ","
                       KF("ar", "array") "," KF("mp", "map"),
                       "\"i8\":-128,\"i16\":32767,\"i32\":-2147483648,\"i64\":9223372036854775807,"
                       "\"f32\":1.5,"
                       "\"f64\":0.1,\"fl\":3.4028235e38,\"db\":-2.5e-3,\"b\":true,\"s\":\"x\","
                       "\"by\":\"AQID\","
                       "\"st\":{\"a\":1},\"ar\":[1,\"b\"],\"mp\":{\"k\":2.50}")
                   /* exact integers also as 5.0 and 1e3; an int64 beyond 2^63-1 is an error */
                   DBZ(KF("i32", "int32") "," KF("i64", "int64"), "\"i32\":5.0,\"i64\":1e3")
                   DBZ(KF("i32", "int32"), "\"i32\":5.5")
                   DBZ(KF("i64", "int64"), "\"i64\":9223372036854775808")
                   DBZ(KF("f64", "float64") ","
                       KF("f32", "float32"), "\"f64\":1e-400,\"f32\":1e-50")
                   DBZ(KF("f64", "float64"), "\"f64\":1e400")
                   DBZ(KF("f32", "float32"), "\"f32\":3.5e38"),
                   "S i8:int,i16:int,i32:int,i64:long,f32:float,f64:double,fl:float,db:double,"
                   "b:boolean,s:string,"
                   "by:binary,st:string,ar:string,mp:string\n"
                   "I -128|32767|-2147483648|9223372036854775807|1.5|0.1|3.4028235e+38|-0.0025|"
                   "true|x|010203|"
                   "{\"a\":1}|[1,\"b\"]|{\"k\":2.50}\n"
                   "S i32:int,i64:long\n"
                   "I 5|1000\n"
                   "ERR debezium-json: table d.t column i32: value \"5.5\": not an int (32-bit)\n"
                   "ERR debezium-json: table d.t column i64: value \"9223372036854775808\": not a "
                   "long (64-bit)\n"
                   "S f64:double,f32:float\n"
                   "I 0.0|0.0\n"
                   "ERR debezium-json: table d.t column f64: value \"1e400\": out of range for "
                   "double\n"
                   "ERR debezium-json: table d.t column f32: value \"3.5e38\": out of range for "
                   "float\n");
}
END_TEST

START_TEST(dbz_logical_types)
{
    /* 19782 = 2024-02-29 in epoch days; 1709251199 s = 2024-02-29T23:59:59Z;
     * 3723004 ms = 01:02:03.004; Bits little-endian: "AQ==" = 01, "/w8=" = ff 0f = 4095 */
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   DBZ(KL("d", "int32", "io.debezium.time.Date") ","
                       KL("kd", "int32", "org.apache.kafka.connect.data.Date") ","
                       KL("t", "int32", "io.debezium.time.Time") ","
                       KL("kt", "int32", "org.apache.kafka.connect.data.Time") ","
                       KL("mt", "int64", "io.debezium.time.MicroTime") ","
                       KL("nt", "int64", "io.debezium.time.NanoTime") ","
                       KL("ts", "int64", "io.debezium.time.Timestamp") ","
                       KL("kts", "int64", "org.apache.kafka.connect.data.Timestamp") ","
                       KL("mts", "int64", "io.debezium.time.MicroTimestamp") ","
                       KL("nts", "int64", "io.debezium.time.NanoTimestamp") ","
                       KL("zts", "string", "io.debezium.time.ZonedTimestamp") ","
                       KL("zt", "string", "io.debezium.time.ZonedTime") ","
                       KL("y", "int32", "io.debezium.time.Year") ","
                       KL("md", "int64", "io.debezium.time.MicroDuration") ","
                       KP("en", "string", "io.debezium.data.Enum", "\"allowed\":\"a,b\"") ","
                       KP("es", "string", "io.debezium.data.EnumSet", "\"allowed\":\"a,b\"") ","
                       KL("js", "string", "io.debezium.data.Json") ","
                       KL("uu", "string", "io.debezium.data.Uuid") ","
                       KL("xml", "string", "io.debezium.data.Xml") ","
                       KP("b1", "bytes", "io.debezium.data.Bits", "\"length\":\"1\"") ","
                       KP("b12", "bytes", "io.debezium.data.Bits", "\"length\":\"12\"") ","
                       KL("unk", "int64", "com.example.Unknown") ","
                       KL("unks", "string", "com.example.Text"),
                       "\"d\":19782,\"kd\":0,\"t\":3723004,\"kt\":1000,\"mt\":3723000005,"
                       "\"nt\":3723000005999,"
                       "\"ts\":1709251199123,\"kts\":-1,\"mts\":1709251199999999,"
                       "\"nts\":1709251199999999999,"
                       "\"zts\":\"2024-03-01T07:59:59.5+08:00\",\"zt\":\"10:15:30Z\",\"y\":2155,"
                       "\"md\":3600000000,"
                       "\"en\":\"b\",\"es\":\"a,b\",\"js\":\"{\\\"k\\\":[1,2]}\","
                       "\"uu\":\"123e4567-e89b-12d3-a456-426614174000\",\"xml\":\"<a/>\","
                       "\"b1\":\"AQ==\","
                       "\"b12\":\"/w8=\",\"unk\":7,\"unks\":\"z\""),
                   "S d:date,kd:date,t:time,kt:time,mt:time,nt:time,ts:timestamp,kts:timestamp,"
                   "mts:timestamp,"
                   "nts:timestamp,zts:timestamptz,zt:string,y:int,md:long,en:string,es:string,"
                   "js:string,uu:string,"
                   "xml:string,b1:boolean,b12:long,unk:long,unks:string\n"
                   "I 2024-02-29|1970-01-01|01:02:03.004000|00:00:01.000000|01:02:03.000005|"
                   "01:02:03.000005|"
                   "2024-02-29T23:59:59.123000|1969-12-31T23:59:59.999000|"
                   "2024-02-29T23:59:59.999999|"
                   "2024-02-29T23:59:59.999999|2024-02-29T23:59:59.500000+00:00|10:15:30Z|2155|"
                   "3600000000|b|a,b|"
                   "{\"k\":[1,2]}|123e4567-e89b-12d3-a456-426614174000|<a/>|true|4095|7|z\n");
}
END_TEST

START_TEST(dbz_decimals)
{
    /* base64 unscaled big-endian: "MDk=" = 30 39 = 12345; "+x4=" = fb 1e = -1250; "Ew==" =
     * 0x13 = 19; "/w==" = ff = -1; "CHJ/Y2mq+DyhUCZ0evjH8ZbOPwrS" =
     * 12345678901234567890123456789012345678901234567890 (50 digits) */
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   DBZ(KDEC("dec", "2", "5") "," KDEC("neg", "3", "10") ","
                       KDEC("num", "10", "38") ","
                       KDEC("num2", "4", "20") "," KDEC("ub", "0", "20") ","
                       KDEC("exp", "2", "10") ","
                       KDEC("exp2", "2", "10") "," KDEC("nz", "1", "3") ","
                       KP("np", "bytes", "org.apache.kafka.connect.data.Decimal",
                          "\"scale\":\"2\"") ","
                       KDEC("wide", "30", "65") "," KDEC("wnum", "30", "65") ","
                       KL("vs", "struct", "io.debezium.data.VariableScaleDecimal") ","
                       KL("vsneg", "struct", "io.debezium.data.VariableScaleDecimal") ","
                       KF("str", "string"),
                       "\"dec\":\"MDk=\",\"neg\":\"+x4=\",\"num\":"
                       "2222222222222222300000001111.1234567890,"
                       "\"num2\":1234567890123456.7891,\"ub\":18446744073709551615,\"exp\":1.5E+3,"
                       "\"exp2\":12345e-2,\"nz\":-0.0,\"np\":\"Ew==\","
                       "\"wide\":\"CHJ/Y2mq+DyhUCZ0evjH8ZbOPwrS\","
                       "\"wnum\":1.5E+3,\"vs\":{\"scale\":3,\"value\":\"MDk=\"},"
                       "\"vsneg\":{\"scale\":0,\"value\":\"/w==\"},"
                       "\"str\":\"12.30\"")
                   /* rounding, and numbers beyond any decimal, are errors naming the value */
                   DBZ(KDEC("x", "2", "5"), "\"x\":1.234")
                   DBZ(KDEC("x", "10", "38"), "\"x\":1e400")
                   DBZ(KDEC("x", "10", "38"), "\"x\":1e-400")
                   DBZ(KDEC("x", "2", "5"), "\"x\":\"AYag\"")
                   /* a Decimal sent as text (decimal.handling.mode=string with the name kept) */
                   DBZ(KDEC("x", "2", "5"), "\"x\":\"-12.3\""),
                   "S dec:decimal(5,2),neg:decimal(10,3),num:decimal(38,10),num2:decimal(20,4),"
                   "ub:decimal(20,0),"
                   "exp:decimal(10,2),exp2:decimal(10,2),nz:decimal(3,1),np:decimal(38,2),"
                   "wide:string,wnum:string,"
                   "vs:string,vsneg:string,str:string\n"
                   "I 123.45|-1.250|2222222222222222300000001111.1234567890|1234567890123456.7891|"
                   "18446744073709551615|1500.00|123.45|0.0|0.19|"
                   "12345678901234567890.123456789012345678901234567890|"
                   "1500.000000000000000000000000000000|12.345|-1|12.30\n"
                   "ERR debezium-json: table d.t column x: value \"1.234\": invalid decimal(5,2) "
                   "value '1.234': "
                   "more fraction digits than the scale (would round)\n"
                   "ERR debezium-json: table d.t column x: value \"1e400\": invalid decimal(38,10) "
                   "value '1e400': "
                   "more digits than the precision\n"
                   "ERR debezium-json: table d.t column x: value \"1e-400\": invalid "
                   "decimal(38,10) value '1e-400': "
                   "more fraction digits than the scale (would round)\n"
                   /* "AYag" = 01 86 a0 = 100000: 1000.00 needs 6 digits */
                   "ERR debezium-json: table d.t column x: value \"AYag\": 1000.00 does not fit "
                   "decimal(5,2)\n"
                   "S x:decimal(5,2)\n"
                   "I -12.30\n");
}
END_TEST

START_TEST(dbz_geometry)
{
    /* WKB POINT(1 2) little-endian: 01 01000000 000000000000f03f 0000000000000040, base64
     * "AQEAAAAAAAAAAADwPwAAAAAAAABA"; the Geography value is EWKB of the same point with
     * SRID 4326 (type 0x20000001, then e6100000), which loses its SRID */
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   DBZ(KL("g", "struct", "io.debezium.data.geometry.Geometry") ","
                       KL("p", "struct", "io.debezium.data.geometry.Point") ","
                       KL("gg", "struct", "io.debezium.data.geometry.Geography"),
                       "\"g\":{\"wkb\":\"AQEAAAAAAAAAAADwPwAAAAAAAABA\",\"srid\":0},"
                       "\"p\":{\"x\":1.0,\"y\":2.0,\"wkb\":null,\"srid\":null},"
                       "\"gg\":{\"wkb\":\"AQEAACDmEAAAAAAAAAAA8D8AAAAAAAAAQA==\",\"srid\":4326}"),
                   "S g:binary,p:binary,gg:binary\n"
                   "I 0101000000000000000000f03f0000000000000040|"
                   "0101000000000000000000f03f0000000000000040|"
                   "0101000000000000000000f03f0000000000000040\n");
}
END_TEST

/* A debezium table described by tableChanges (no schema envelope): a GEOMETRY column
 * takes {wkb, srid}, a DECIMAL(50,10) one base64 into exact text, BIGINT UNSIGNED the
 * connector's default long (2^64 - 1 arrives as -1). */
START_TEST(dbz_table_changes_values)
{
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   "{\"source\":{\"db\":\"d\",\"table\":\"g\"},\"databaseName\":\"d\","
                   "\"ddl\":\"CREATE TABLE g ...\","
                   "\"tableChanges\":[{\"type\":\"CREATE\",\"id\":\"\\\"d\\\".\\\"g\\\"\","
                   "\"table\":{"
                   "\"primaryKeyColumnNames\":[\"id\"],\"columns\":[{\"name\":\"id\","
                   "\"typeName\":\"INT\",\"optional\":false},"
                   "{\"name\":\"shape\",\"typeName\":\"GEOMETRY\"},{\"name\":\"big\","
                   "\"typeName\":\"DECIMAL\",\"length\":50,\"scale\":10},"
                   "{\"name\":\"u\",\"typeName\":\"BIGINT UNSIGNED\",\"length\":20},"
                   "{\"name\":\"p\",\"typeName\":\"DECIMAL\",\"length\":6,\"scale\":2}]}}]}\n"
                   "{\"before\":null,\"after\":{\"id\":1,\"shape\":{\"wkb\":"
                   "\"AQEAAAAAAAAAAADwPwAAAAAAAABA\",\"srid\":0},"
                   "\"big\":\"CHJ/Y2mq+DyhUCZ0evjH8ZbOPwrS\",\"u\":-1,\"p\":\"MDk=\"},"
                   "\"source\":{\"db\":\"d\",\"table\":\"g\"},\"op\":\"c\"}\n"
                   /* decimal.handling.mode=string: text with a point is text */
                   "{\"before\":null,\"after\":{\"id\":2,\"shape\":null,\"big\":\"-1.5\",\"u\":5,"
                   "\"p\":\"-12.50\"},"
                   "\"source\":{\"db\":\"d\",\"table\":\"g\"},\"op\":\"c\"}\n",
                   "S id*!:int,shape:binary,big:string,u:decimal(20,0),p:decimal(6,2)\n"
                   "I 1|0101000000000000000000f03f0000000000000040|"
                   "1234567890123456789012345678901234567890.1234567890|"
                   "18446744073709551615|123.45\n"
                   "I 2|null|-1.5000000000|5|-12.50\n");
}
END_TEST

/* With the schema envelope, a field the envelope types plainly (decimal.handling.mode=
 * string or double, bigint.unsigned.handling.mode=long) takes the exact type the table's
 * tableChanges gave, and its value converts from its text. */
#define DBZ_ENV(fields, after)                                                                     \
    "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"field\":\"after\","       \
    "\"fields\":[" fields "]}]},"                                                                  \
    "\"payload\":{\"before\":null,\"after\":" after                                                \
    ",\"source\":{\"db\":\"d\",\"table\":\"p\"},\"op\":\"c\"}}\n"
#define DBZ_P_FIELDS \
    "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},{\"type\":\"string\"," \
    "\"field\":\"s\"}," \
    "{\"type\":\"double\",\"field\":\"f\"},{\"type\":\"int64\",\"field\":\"u\"}," \
    "{\"type\":\"string\",\"field\":\"w\"}," \
    "{\"type\":\"double\",\"field\":\"x\"}"

START_TEST(dbz_envelope_takes_ddl_types)
{
    assert_decoded(
        W2L__CDC_DEBEZIUM, 0,
        "{\"schema\":null,\"payload\":{\"source\":{\"db\":\"d\",\"table\":\"p\"},"
        "\"databaseName\":\"d\","
        "\"ddl\":\"CREATE TABLE p ...\",\"tableChanges\":[{\"type\":\"CREATE\","
        "\"id\":\"\\\"d\\\".\\\"p\\\"\","
        "\"table\":{\"primaryKeyColumnNames\":[\"id\"],\"columns\":[{\"name\":\"id\","
        "\"typeName\":\"INT\","
        "\"optional\":false},{\"name\":\"s\",\"typeName\":\"DECIMAL\",\"length\":10,"
        "\"scale\":2},"
        "{\"name\":\"f\",\"typeName\":\"DECIMAL\",\"length\":20,\"scale\":6},"
        "{\"name\":\"u\",\"typeName\":\"BIGINT UNSIGNED\",\"length\":20},"
        "{\"name\":\"w\",\"typeName\":\"DECIMAL\",\"length\":50,\"scale\":2},"
        "{\"name\":\"x\",\"typeName\":\"DOUBLE\"}]}}]}}\n" DBZ_ENV(
            DBZ_P_FIELDS, "{\"id\":1,\"s\":\"-12.50\",\"f\":1.0E-4,\"u\":-1,"
                          "\"w\":\"123456789012345678901234567890123456789012345678.9\",\"x\":0.1}")
            DBZ_ENV(
                DBZ_P_FIELDS,
                "{\"id\":2,\"s\":null,\"f\":-9.9999999999999E13,\"u\":42,\"w\":null,\"x\":null}")
                DBZ_ENV(DBZ_P_FIELDS,
                        "{\"id\":3,\"s\":\"1.234\",\"f\":null,\"u\":null,\"w\":null,\"x\":null}"),
        "S id*!:int,s:decimal(10,2),f:decimal(20,6),u:decimal(20,0),w:string,x:double\n"
        "I 1|-12.50|0.000100|18446744073709551615|"
        "123456789012345678901234567890123456789012345678.90|0.1\n"
        "I 2|null|-99999999999999.000000|42|null|null\n"
        "ERR debezium-json: table d.p column s: value \"1.234\": invalid decimal(10,2) "
        "value '1.234': more "
        "fraction digits than the scale (would round)\n");
}
END_TEST

/* canal: ENUM index, SET bitmask, text passthrough, GEOMETRY (SRID + WKB as ISO-8859-1
 * text), DECIMAL(65,30) and DECIMAL(10,2) in exponent forms, BIT(64) patterns. */
#define CANAL_ROWS(rows) \
    "{\"data\":[" rows "],\"database\":\"d\",\"isDdl\":false," \
                       "\"mysqlType\":{\"e\":\"enum('value1','value2')\"," \
    "\"s\":\"set('a','b','c')\",\"n\":\"enum('1','2')\",\"g\":\"geometry\"," \
    "\"dc\":\"decimal(65,30)\"," \
    "\"d2\":\"decimal(10,2)\",\"bt\":\"bit(64)\",\"tb\":\"tinyint(1)\"},\"table\":\"t\"," \
    "\"type\":\"INSERT\"}\n"

START_TEST(canal_enum_set_geometry_exact)
{
    assert_decoded(W2L__CDC_CANAL, 1,
                   CANAL_ROWS("{\"e\":\"1\",\"s\":\"3\",\"n\":\"2\","
                              "\"g\":\"\\u0000\\u0000\\u0000\\u0000\\u0001\\u0001"
                              "\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\"
                              "u00f0?\\u0000\\u0000\\u0000"
                              "\\u0000\\u0000\\u0000\\u0000@\",\"dc\":\"1.5E+3\",\"d2\":\"1.5E+3\","
                              "\"bt\":\"18446744073709551615\",\"tb\":\"1\"},"
                              "{\"e\":\"0\",\"s\":\"0\",\"n\":\"1\",\"g\":null,\"dc\":\"-0.5\","
                              "\"d2\":\"+1.25\","
                              "\"bt\":\"9223372036854775808\",\"tb\":\"0\"},"
                              "{\"e\":\"value2\",\"s\":\"b,c\",\"n\":\"1\",\"g\":null,"
                              "\"dc\":\"+12345e-2\",\"d2\":\"-0.0\","
                              "\"bt\":\"4095\",\"tb\":\"1\"},"
                              "{\"e\":\"3\",\"s\":\"8\",\"n\":\"3\",\"g\":null,\"dc\":null,"
                              "\"d2\":null,\"bt\":null,\"tb\":null},"
                              "{\"e\":\"2\",\"s\":\"5\",\"n\":null,\"g\":null,\"dc\":null,"
                              "\"d2\":\"12345e-2\",\"bt\":\"0\",\"tb\":null}")
                   CANAL_ROWS("{\"e\":null,\"s\":null,\"n\":null,\"g\":null,\"dc\":null,"
                              "\"d2\":\"1.234\",\"bt\":null,\"tb\":null}")
                   CANAL_ROWS("{\"e\":null,\"s\":null,\"n\":null,\"g\":null,\"dc\":null,"
                              "\"d2\":null,\"bt\":\"18446744073709551616\",\"tb\":null}"),
                   "S e:string,s:string,n:string,g:binary,dc:string,d2:decimal(10,2),bt:long,"
                   "tb:boolean\n"
                   "I value1|a,b|2|0101000000000000000000f03f0000000000000040|"
                   "1500.000000000000000000000000000000|"
                   "1500.00|-1|true\n"
                   "I ||1|null|-0.500000000000000000000000000000|1.25|-9223372036854775808|false\n"
                   "I value2|b,c|1|null|123.450000000000000000000000000000|0.00|4095|true\n"
                   "I 3|8|3|null|null|null|null|null\n"
                   "I value2|a,c|null|null|null|123.45|0|null\n"
                   "ERR canal-json: table d.t column d2: value \"1.234\": invalid decimal(10,2) "
                   "value '1.234': more "
                   "fraction digits than the scale (would round)\n"
                   "ERR canal-json: table d.t column bt: value \"18446744073709551616\": not a BIT "
                   "value (0 to "
                   "18446744073709551615)\n");
}
END_TEST

/* ---- the warnings of inferred shapes ---- */

static w2l_buf logged;
static void log_capture(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level <= W2L_LOG_WARN) {
        w2l_buf_append(&logged, line, strlen(line), NULL);
        w2l_buf_append(&logged, "\n", 1, NULL);
    }
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

static char *logged_text(void)
{
    w2l_error err;
    ck_assert_ok(w2l__buf_cstr(&logged, &err), err);
    return (char *)logged.data;
}

START_TEST(inferred_shape_warnings)
{
    memset(&logged, 0, sizeof logged);
    w2l_log_set_callback(log_capture, NULL);
    /* maxwell rows without a def: an integer beyond long infers decimal(38,0); a number a
     * double cannot give back infers double with one warning for that column */
    assert_decoded(W2L__CDC_MAXWELL, 0,
                   "{\"database\":\"d\",\"table\":\"inf\",\"type\":\"insert\",\"data\":{\"id\":1,"
                   "\"big\":18446744073709551615,\"r\":0.1,\"x\":12345678901234567.891}}\n"
                   "{\"database\":\"d\",\"table\":\"inf\",\"type\":\"insert\",\"data\":{\"id\":2,"
                   "\"big\":7,\"r\":0.25,\"x\":98765432109876543.21}}\n",
                   "S id:long,big:decimal(38,0),r:double,x:double\n"
                   "I 1|18446744073709551615|0.1|1.2345678901234568e+16\n"
                   "I 2|7|0.25|9.876543210987654e+16\n");
    const char *l = logged_text();
    ck_assert_int_eq(count_of(l, "table d.inf column x: the number 12345678901234567.891 is not "
                                 "exact in a double"), 1);
    ck_assert_int_eq(count_of(l, "producer's schema is needed"), 1);
    ck_assert_int_eq(count_of(l, "column r"), 0);
    logged.len = 0;
    /* debezium payloads without schema or tableChanges: base64 decimals and epoch times
     * stay what they are, with one warning naming those columns */
    assert_decoded(W2L__CDC_DEBEZIUM, 0,
                   "{\"before\":null,\"after\":{\"id\":1,\"price\":\"MDk=\",\"at\":1709251199123,"
                   "\"name\":\"bob\"},"
                   "\"source\":{\"db\":\"d\",\"table\":\"n\"},\"op\":\"c\"}\n"
                   "{\"before\":null,\"after\":{\"id\":2,\"price\":\"Ew==\",\"at\":1709251199124,"
                   "\"name\":\"ann\"},"
                   "\"source\":{\"db\":\"d\",\"table\":\"n\"},\"op\":\"c\"}\n",
                   "S id:long,price:string,at:long,name:string\n"
                   "I 1|MDk=|1709251199123|bob\n"
                   "I 2|Ew==|1709251199124|ann\n");
    l = logged_text();
    ck_assert_int_eq(count_of(l, "table d.n: no schema in the messages and no tableChanges before "
                                 "them: columns "
                                 "price, at are inferred"), 1);
    ck_assert_int_eq(count_of(l, "schema registry"), 1);
    w2l_log_set_callback(NULL, NULL);
    w2l_buf_release(&logged);
}
END_TEST

/* A canal decoder with default options. */
static w2l__cdc *canal_decoder(void)
{
    w2l__cdc_opts o;
    memset(&o, 0, sizeof o);
    w2l__cdc *d = w2l__cdc_new(W2L__CDC_CANAL, &o);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* canal DOUBLE text: a short plain decimal takes a fast exact path, every other text
 * strtod; either way the value is strtod's, bit for bit (random texts of 1 to 19 digits,
 * signs, leading zeros, up to 27 fraction digits, and edge cases). */
START_TEST(canal_double_text_exact)
{
    static const char *fixed[] = {"0", "-0", "0.0", "-0.000", "1", "9007199254740991",
                                  "9007199254740992", "9007199254740993", "0.1", "0.3",
                                  "513.3961163221494", "694.17757432106112", "1e3", "-2.5E-3",
                                  ".5", "5.", "000123.4500", "1.7976931348623157e308",
                                  "0.0000000000000000000001", "0.00000000000000000000001",
                                  "4.9e-324", "123456789012345678901234567890",
                                  "9999999999999999999", "1844674407370955161.5",
                                  "0.000000000000000000000000001", "123456789012345678.9",
                                  "-0.5000000000000000277", "9007199254740993.0"};
    uint64_t seed = 0x9e3779b97f4a7c15u;
    w2l__cdc *d = canal_decoder();
    for (int i = 0; i < 20000; i++) {
        char num[64], msg[512];
        if (i < (int)W2L_ARRAY_LEN(fixed)) {
            snprintf(num, sizeof num, "%s", fixed[i]);
        } else {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            uint64_t r = seed >> 11;
            int nd = 1 + (int)(r % 19), frac = (int)((r >> 5) % 28), n = 0;
            if (r >> 10 & 1) num[n++] = '-';
            for (int k = 0; k < nd; k++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                if (k == nd - frac && k) num[n++] = '.';
                num[n++] = (char)('0' + (seed >> 33) % 10);
            }
            num[n] = '\0';
        }
        snprintf(msg, sizeof msg,
                 "{\"data\":[{\"id\":\"1\",\"d\":\"%s\"}],\"database\":\"db\",\"table\":\"t\","
                 "\"type\":\"INSERT\",\"isDdl\":false,\"mysqlType\":{\"id\":\"int\",\"d\":"
                 "\"double\"},\"pkNames\":[\"id\"],\"es\":1}",
                 num);
        w2l__cdc_step step;
        w2l_error err;
        ck_assert_msg(w2l__cdc_decode(d, msg, strlen(msg), 0, &step, &err) == W2L_OK, "%s: %s",
                      num, err.msg);
        size_t nev;
        const w2l__cdc_event *ev = w2l__cdc_events(d, &nev);
        ck_assert_uint_eq(nev, 1);
        double want = strtod(num, NULL), got = ev[0].change.row[1].v.f64;
        ck_assert_msg(memcmp(&want, &got, sizeof want) == 0, "%s: %.17g, strtod %.17g", num, got,
                      want);
        w2l__cdc_clear(d);
    }
    w2l__cdc_free(d);
}
END_TEST

/* canal's fast path (cdc_canal_fast.c) against the tree path: the sample streams, each
 * message twice (so the fast path meets every message's own shape), hand-made messages at
 * each place it gives up, and seeded mutations of each sample message after the message
 * itself. Both paths must say and emit the same; the fast path must have been taken. */
static const char *const fast_cases[] = {
    /* escapes in what it takes; a \u escape in what it skips */
    "{\"data\":[{\"id\":\"7\",\"v\":\"a\\\"b\\u00e9\\n"
    "\"}],\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\","
    "\"isDdl\":false,\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],"
    "\"es\":1}",
    "{\"data\":[{\"id\":\"7\",\"v\":\"x\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\",\"isDdl\":false,"
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"es\":1,"
    "\"sql\":\"\\u00e9\\ud83d\\ude00\"}",
    "{\"data\":[{\"id\":\"7\",\"v\":\"x\"}],\"database\":\"d\\u0062\",\"table\":\"t\","
    "\"type\":\"INSERT\","
    "\"isDdl\":false,\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],"
    "\"es\":1}",
    /* a member given twice (the first counts), whitespace everywhere, members in any order */
    "{\"table\":\"t\",\"table\":\"u\",\"data\":[{\"id\":\"8\",\"v\":\"y\"}],\"database\":\"db\","
    "\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    " \t{ \"type\" : \"INSERT\" ,\r\n \"database\":\"db\",\"table\":\"t\","
    "\"data\" : [ { \"id\" : \"9\" , \"v\" : null } ] ,"
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"ts\":5}\r ",
    /* kinds canal does not write: numbers as values, a null table, an empty data, es as a
     * fraction, isDdl as a string, data as an object */
    "{\"data\":[{\"id\":9,\"v\":\"x\"}],\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"9\",\"v\":\"x\"}],\"database\":\"db\",\"table\":null,\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[],\"database\":\"db\",\"table\":\"t\",\"type\":\"DELETE\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":"
    "\"varchar(9)\"},\"pkNames\":[\"id\"],\"es\":1.5e3,\"ts\":7}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"x\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\",\"isDdl\":\"no\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":{\"id\":\"1\"},\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    /* updates: old rows, old missing, old of another length; a delete; an unknown type; DDL */
    "{\"data\":[{\"id\":\"1\",\"v\":\"new\"},{\"id\":\"2\",\"v\":\"n2\"}],\"old\":[{\"v\":\"old\"},"
    "{\"id\":\"3\"}],"
    "\"database\":\"db\",\"table\":\"t\",\"type\":\"UPDATE\",\"mysqlType\":{\"id\":\"int\","
    "\"v\":\"varchar(9)\"},"
    "\"pkNames\":[\"id\"],\"es\":3}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"new\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"UPDATE\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"new\"}],\"old\":[],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"UPDATE\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\"}],\"old\":null,\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"DELETE\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\"}],\"database\":\"db\",\"table\":\"t\",\"type\":\"QUERY\","
    "\"sql\":\"TRUNCATE t\"}",
    "{\"data\":null,\"database\":\"db\",\"table\":\"t\",\"type\":\"ALTER\",\"isDdl\":true,"
    "\"sql\":\"ALTER TABLE t ADD COLUMN w INT\"}",
    /* a column the shape lacks, a value that does not convert, a key column null */
    "{\"data\":[{\"id\":\"1\",\"zz\":\"x\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"},{\"id\":\"x1\",\"v\":\"b\"}],\"database\":\"db\","
    "\"table\":\"t\","
    "\"type\":\"INSERT\",\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":null,\"v\":\"a\"}],\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    /* text after the object, a byte order mark, an unterminated string, deep nesting in a
     * member it skips, a NUL byte in a name */
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]} x",
    "\xef\xbb\xbf{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a}],\"database\":\"db\"",
    /* canal's order with a member left out (the next but one is tried), two left out, one
     * given again after the next; sqlType present; "id" as numbers of each kind */
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"id\":3,\"isDdl\":false,"
    "\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"isDdl\":false,\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":1,\"es\":9,"
    "\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":0,\"isDdl\":false,"
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"old\":null,\"pkNames\":[\"id\"],"
    "\"sql\":\"\","
    "\"sqlType\":{\"id\":4,\"v\":12},\"table\":\"t\",\"ts\":5,\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":-7,\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":1.5e3,"
    "\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":01,\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":0e1,\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"es\":4,\"id\":7.,\"mysqlType\":"
    "{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\","
    "\"type\":\"INSERT\"}",
    /* a row's columns out of order, one null, one that converts only as any member does */
    "{\"data\":[{\"v\":\"c\",\"id\":\"3\"},{\"id\":\"4\",\"v\":null},{\"id\":\"+5\",\"v\":\"e\"}],"
    "\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\",\"mysqlType\":{\"id\":\"int\","
    "\"v\":\"varchar(9)\"},"
    "\"pkNames\":[\"id\"]}",
    "{\"data\":[{\"id\":\"1\",\"v\":\"new\"}],\"old\":[{\"id\":\"9\",\"v\":\"old\"}],"
    "\"database\":\"db\","
    "\"table\":\"t\",\"type\":\"UPDATE\",\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},"
    "\"pkNames\":[\"id\"]}",
    /* types near the three this path takes (compared with their NUL, at the text's end) */
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"mysqlType\":{\"id\":\"int\","
    "\"v\":"
    "\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\",\"type\":\"INSERTS\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"mysqlType\":{\"id\":\"int\","
    "\"v\":"
    "\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\",\"type\":\"DELET\"}",
    "{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\",\"mysqlType\":{\"id\":\"int\","
    "\"v\":"
    "\"varchar(9)\"},\"pkNames\":[\"id\"],\"table\":\"t\",\"type\":\"\"}",
    /* the text ends in a name, a value, a number, a separator: the pad after it decides */
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"datab",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"es\":1700000000000",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"es\":17000000",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"es\":4,\"id\":12",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"es\":4,\"id\":0",
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"es\":-",
    "{\"data\":[{\"id\":\"1\",\"v",
    "{\"data\":[{\"id\":\"1\",\"v\"",
    "{\"data\":[{\"id\":\"1\",\"v\":",
    "{\"data\":[{\"id\":\"1\",\"v\":nul",
    "{\"data\":[{\"id\":\"1\",\"v\":null",
    "{\"data\":[{\"id\":\"1\",",
    "{\"data\":[{\"id\":\"1\"",
    "{\"data\":[{\"id\"",
    "{\"data\":[{\"",
    "{\"data\":",
    "{\"data\"",
    "{\"",
    "{",
};

START_TEST(canal_fast_path_matches_tree)
{
    static const char *files[] = {"canal.jsonl", "canal_types.jsonl", "canal_shards.jsonl"};
    w2l__cdc_opts opts[2];
    memset(opts, 0, sizeof opts);
    opts[1].tinyint1_as_boolean = 1;
    opts[1].time_as_string = 1;
    opts[1].tz_offset_s = 8 * 3600;
    size_t taken, total = 0;
    const char *why;
    w2l_buf b = {0};
    w2l_error err;
    for (size_t fi = 0; fi < W2L_ARRAY_LEN(files); fi++) {
        char path[512];
        size_t n;
        snprintf(path, sizeof path, "%s%s", W2L_TEST_DATA, files[fi]);
        char *all = slurp(path, &n);
        for (int o = 0; o < 2; o++)
            for (int replay = 0; replay < 2; replay++) {
                why = canal_diff(all, n, &opts[o], replay, &taken);
                ck_assert_msg(!why, "%s: %s", files[fi], why);
                total += taken;
            }
        /* each message twice, then seeded mutations of each after the message itself */
        uint64_t rng = 0x2545f4914f6cdd1du + fi;
        static const char tokens[] = "{}[]\",:\\u0123456789-+.eE \t\nntfrl\x01\xff";
        for (const char *p = all, *end = all + n; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            b.len = 0;
            ck_assert_ok(w2l_buf_append(&b, p, len, &err), err);
            ck_assert_ok(w2l_buf_append(&b, "\n", 1, &err), err);
            ck_assert_ok(w2l_buf_append(&b, p, len, &err), err);
            why = canal_diff((const char *)b.data, b.len, &opts[0], 0, &taken);
            ck_assert_msg(!why, "%s twice: %s", files[fi], why);
            total += taken;
            for (int m = 0; m < 200; m++) {
                char mut[8192];
                size_t ml = len < sizeof mut - 8 ? len : sizeof mut - 8;
                memcpy(mut, p, ml);
                /* every other one changes value bytes only: a message that still reads */
                mut[ml] = '\0';
                const char *dv = strstr(mut, "\"data\":[");
                const char *de = dv ? strstr(dv, "}]") : NULL;
                for (int k = 1 + m % 3; k--;) {
                    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                    size_t at = ml ? (size_t)(rng % ml) : 0;
                    char c = tokens[(rng >> 20) % (sizeof tokens - 1)];
                    if (m & 1 && de) {
                        at = (size_t)(dv - mut) + 9 + (size_t)(rng % (size_t)(de - dv - 9 + 1));
                        if (mut[at] == '"' || mut[at] == ':' || mut[at] == ',') continue;
                        mut[at] = "0123456789-.e :Tab"[(rng >> 20) % 18];
                        continue;
                    }
                    switch ((rng >> 40) % 3) {
                    case 0: if (ml) mut[at] = c; break;
                    case 1: memmove(mut + at + 1, mut + at, ml - at), mut[at] = c, ml++; break;
                    default: if (ml) memmove(mut + at, mut + at + 1, ml - at - 1), ml--; break;
                    }
                    if (ml >= sizeof mut - 8) break;
                }
                b.len = len + 1;
                ck_assert_ok(w2l_buf_append(&b, mut, ml, &err), err);
                why = canal_diff((const char *)b.data, b.len, &opts[m & 1], 0, &taken);
                ck_assert_msg(!why, "%s, a mutation: %s", files[fi], why);
                total += taken;
            }
            p += len + 1;
        }
        free(all);
    }
    /* the hand-made cases, each after a message that describes the table, and twice */
    static const char *describe =
        "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"table\":\"t\","
        "\"type\":\"INSERT\","
        "\"isDdl\":false,\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"],"
        "\"es\":1}";
    for (size_t i = 0; i < W2L_ARRAY_LEN(fast_cases); i++) {
        b.len = 0;
        ck_assert_ok(
            w2l__buf_printf(&b, &err, "%s\n%s\n%s", describe, fast_cases[i], fast_cases[i]), err);
        why = canal_diff((const char *)b.data, b.len, &opts[0], 0, &taken);
        ck_assert_msg(!why, "case %zu: %s", i, why);
        total += taken;
    }
    /* nesting deeper than the parser takes, in a member only skipped */
    b.len = 0;
    ck_assert_ok(
        w2l__buf_printf(&b, &err,
                        "%s\n{\"data\":[{\"id\":\"2\",\"v\":\"b\"}],\"database\":\"db\","
                        "\"table\":\"t\",\"type\":\"INSERT\",\"mysqlType\":{\"id\":\"int\",\"v\":"
                        "\"varchar(9)\"},\"pkNames\":[\"id\"],\"x\":",
                        describe),
        err);
    for (int deep = 0; deep < 2; deep++) {
        size_t keep = b.len;
        for (int k = 0; k < 998 + deep; k++) ck_assert_ok(w2l_buf_append(&b, "[", 1, &err), err);
        for (int k = 0; k < 998 + deep; k++) ck_assert_ok(w2l_buf_append(&b, "]", 1, &err), err);
        ck_assert_ok(w2l_buf_append(&b, "}", 1, &err), err);
        why = canal_diff((const char *)b.data, b.len, &opts[0], 0, &taken);
        ck_assert_msg(!why, "nesting %d: %s", 999 + deep, why);
        b.len = keep;
    }
    w2l_buf_release(&b);
    ck_assert_uint_gt(total, 500); /* the fast path was there to compare */
}
END_TEST

/* One INSERT of table db.t (id int key, v varchar(9)), for the tests below. */
static const char *const t_insert =
    "{\"data\":[{\"id\":\"1\",\"v\":\"a\"}],\"database\":\"db\",\"table\":\"t\","
    "\"type\":\"INSERT\","
    "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}";

/* A message that fails part way (its second row) adds no event, by either path: the first
 * row's event would point into the freed message, and a source that skips bad messages
 * would emit it. */
START_TEST(text_quick_integers_and_zones)
{
    /* integer text of 0..20 bytes, digits mostly, signs and other bytes anywhere, each in
     * a buffer of its exact size (ASan sees a read beyond): w2l__cdc_text_quick takes
     * exactly the plain integers in range, with strtoll's value */
    static const char bytes[] = "0123456789012345678901234567890123456789-+ .e";
    uint64_t seed = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 400000; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = seed;
        size_t n = (size_t)(r >> 59) % 21;
        char text[32];
        for (size_t k = 0; k < n; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            text[k] =
                (r >> 58 & 1) ? bytes[(seed >> 40) % 20] : bytes[(seed >> 40) % (sizeof bytes - 1)];
        }
        text[n] = '\0';
        size_t sign = n && (text[0] == '-' || text[0] == '+');
        int plain = n > sign && strspn(text + sign, "0123456789") == n - sign;
        errno = 0;
        long long want = plain ? strtoll(text, NULL, 10) : 0;
        int in64 = plain && errno != ERANGE, in32 = in64 && want >= INT32_MIN && want <= INT32_MAX;
        char *b = malloc(n ? n : 1);
        memcpy(b, text, n);
        w2l_value v;
        w2l_error scratch;
        int got = w2l__cdc_text_quick(T_LONG, CV_PLAIN, 0, b, n, &v, &scratch);
        ck_assert_msg(got == (in64 ? 0 : -1) && (!in64 || v.v.i64 == want), "long '%s'", text);
        got = w2l__cdc_text_quick(T_INT, CV_PLAIN, 0, b, n, &v, &scratch);
        ck_assert_msg(got == (in32 ? 0 : -1) && (!in32 || v.v.i32 == want), "int '%s'", text);
        free(b);
    }

    /* a timestamptz without a zone is taken, in source.timezone; with one ('+', '-', 'Z')
     * never (value_from_text words what it does with it) */
    static const char *zoned[] = {"2024-01-01 00:00:00+01", "2024-01-01 00:00:00.5-01:30",
                                  "2024-01-01T00:00:00Z", "2024-01-01 00:00:00.123456+00",
                                  "2024-01-01-00:00:00:00", "2024-01-01 00:00-01:00"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(zoned); k++) {
        w2l_value v;
        w2l_error scratch;
        ck_assert_int_eq(w2l__cdc_text_quick(T_TSTZ, CV_PLAIN, 3600, zoned[k], strlen(zoned[k]),
                                             &v, &scratch),
                         -1);
    }
    for (int i = 0; i < 20000; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        char text[40];
        int nf = (int)(seed >> 61);
        int n = snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d%s%.*s",
                         (int)(seed >> 20 & 0xffff) % 10000, 1 + (int)(seed >> 16 & 0xff) % 12,
                         1 + (int)(seed >> 8 & 0xff) % 28, (int)(seed >> 30 & 0xff) % 24,
                         (int)(seed >> 36 & 0xff) % 60, (int)(seed >> 42 & 0xff) % 60,
                         nf ? "." : "", nf, "123456789");
        if (nf > 6) n = 19 + (seed >> 50) % 8; /* cut anywhere: no fraction digits, '.' last */
        char *b = malloc((size_t)n);
        memcpy(b, text, (size_t)n);
        w2l_value v;
        w2l_error scratch, err;
        int64_t want;
        int got = w2l__cdc_text_quick(T_TSTZ, CV_PLAIN, -7200, b, (size_t)n, &v, &scratch);
        if (w2l__timestamp_parse(b, (size_t)n, 1, &want, &err) != W2L_OK || b[n - 1] == '.')
            ck_assert_int_eq(got, -1);
        else
            ck_assert_msg(got == 0 && v.v.i64 == want + INT64_C(7200000000), "%.*s", n, text);
        free(b);
    }
}
END_TEST

START_TEST(failed_message_adds_no_event)
{
    const char *good = t_insert;
    static const char *bad =
        "{\"data\":[{\"id\":\"1\",\"v\":\"a\"},{\"id\":\"x2\",\"v\":\"b\"}],\"database\":\"db\","
        "\"table\":\"t\","
        "\"type\":\"INSERT\",\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},"
        "\"pkNames\":[\"id\"]}";
    w2l__cdc *d = canal_decoder();
    w2l__cdc_step step;
    w2l_error e;
    size_t n;
    for (int known = 0; known < 2; known++) { /* the tree path, then after the shape is known */
        ck_assert_int_eq(w2l__cdc_decode(d, bad, strlen(bad), 0, &step, &e), W2L_SOURCE);
        ck_assert_msg(strstr(e.msg, "x2") != NULL, "%s", e.msg);
        w2l__cdc_events(d, &n);
        ck_assert_uint_eq(n, 0);
        ck_assert_ok(w2l__cdc_decode(d, good, strlen(good), 0, &step, &e), e);
        w2l__cdc_events(d, &n);
        ck_assert_uint_eq(n, 1);
        w2l__cdc_clear(d);
    }
    w2l__cdc_free(d);
}
END_TEST

/* The columns a row image lacks are NULL and absent, by either path, whatever the row's
 * memory held before: rows are not cleared when allocated, but where the image is read
 * (fill_row). Each message is decoded twice, the second time by the fast path. */
START_TEST(missing_columns_are_null_and_absent)
{
    static const char *msgs[] = {
        "{\"data\":[{\"id\":\"5\"}],\"database\":\"db\",\"table\":\"t\",\"type\":\"INSERT\","
        "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
        "{\"data\":[{\"v\":\"b\",\"id\":\"6\"}],\"database\":\"db\",\"table\":\"t\","
        "\"type\":\"INSERT\","
        "\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},\"pkNames\":[\"id\"]}",
        "{\"data\":[{\"id\":\"7\"}],\"old\":[{\"id\":\"8\"}],\"database\":\"db\",\"table\":\"t\","
        "\"type\":\"UPDATE\",\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\"},"
        "\"pkNames\":[\"id\"]}",
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(msgs); i++) {
        w2l__cdc *d = canal_decoder();
        w2l__cdc_step step;
        w2l_error e;
        for (int pass = 0; pass < 2; pass++) {
            /* the shape described; the arena's memory then zeros (is_null 0) */
            ck_assert_ok(w2l__cdc_decode(d, t_insert, strlen(t_insert), 0, &step, &e), e);
            w2l__cdc_clear(d);
            void *junk = w2l__cdc_alloc(&d->mem, 1 << 14);
            ck_assert_ptr_nonnull(junk);
            memset(junk, 0, 1 << 14);
            w2l__cdc_clear(d);
            size_t n, taken = d->fast.taken;
            d->fast.off = !pass;
            ck_assert_ok(w2l__cdc_decode(d, msgs[i], strlen(msgs[i]), 0, &step, &e), e);
            ck_assert_uint_eq(d->fast.taken, taken + (size_t)pass);
            const w2l__cdc_event *ev = w2l__cdc_events(d, &n);
            ck_assert_uint_eq(n, i == 2 ? 2 : 1);
            for (size_t k = 0; k < n; k++) {
                const w2l_change *c = &ev[k].change;
                int has_v = i == 1;
                ck_assert_int_eq(c->row[1].is_null, !has_v);
                ck_assert(has_v ? c->present == NULL : c->present && c->present[0] == 1);
            }
            w2l__cdc_clear(d);
        }
        w2l__cdc_free(d);
    }
}
END_TEST

START_TEST(events_keep_a_replaced_shape)
{
    /* a change borrows its table's schema; when the table's shape changes while the change
     * is pending (rows that bring a column), the change keeps the schema it was read with */
    const char *a = t_insert;
    static const char *b =
        "{\"data\":[{\"id\":\"2\",\"v\":\"b\",\"w\":\"7\"}],\"database\":\"db\",\"table\":\"t\","
        "\"type\":\"INSERT\",\"mysqlType\":{\"id\":\"int\",\"v\":\"varchar(9)\",\"w\":\"int\"},"
        "\"pkNames\":[\"id\"]}";
    w2l__cdc *d = canal_decoder();
    w2l__cdc_step step;
    w2l_error e;
    size_t n;
    for (int round = 0; round < 3; round++) { /* the tree path, then the fast path */
        const char *first = round == 2 ? b : a, *second = round == 2 ? a : b;
        ck_assert_ok(w2l__cdc_decode(d, first, strlen(first), 0, &step, &e), e);
        ck_assert_ok(w2l__cdc_decode(d, second, strlen(second), 0, &step, &e), e);
        ck_assert_ok(w2l__cdc_decode(d, first, strlen(first), 0, &step, &e), e);
        const w2l__cdc_event *ev = w2l__cdc_events(d, &n);
        ck_assert_uint_eq(n, 3);
        size_t nf = round == 2 ? 3 : 2, nf2 = round == 2 ? 2 : 3;
        ck_assert_uint_eq(w2l_schema_field_count(ev[0].change.schema), nf);
        ck_assert_uint_eq(w2l_schema_field_count(ev[1].change.schema), nf2);
        ck_assert_uint_eq(w2l_schema_field_count(ev[2].change.schema), nf);
        ck_assert_uint_eq(ev[0].change.ncols, nf);
        ck_assert_uint_eq(ev[1].change.ncols, nf2);
        ck_assert_int_eq(ev[1].change.row[0].v.i32, round == 2 ? 1 : 2);
        w2l__cdc_clear(d);
    }
    w2l__cdc_free(d);
}
END_TEST

Suite *suite_cdc_json(void)
{
    Suite *s = suite_create("cdc_json");
    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, canal_stream);
    tcase_add_test(tc, events_keep_a_replaced_shape);
    tcase_add_test(tc, canal_types);
    tcase_add_test(tc, canal_types_schema);
    tcase_add_test(tc, canal_options);
    tcase_add_test(tc, debezium_stream);
    tcase_add_test(tc, debezium_noschema_stream);
    tcase_add_test(tc, maxwell_stream);
    tcase_add_test(tc, dbz_connect_base_types);
    tcase_add_test(tc, dbz_logical_types);
    tcase_add_test(tc, dbz_decimals);
    tcase_add_test(tc, dbz_geometry);
    tcase_add_test(tc, dbz_table_changes_values);
    tcase_add_test(tc, dbz_envelope_takes_ddl_types);
    tcase_add_test(tc, canal_enum_set_geometry_exact);
    tcase_add_test(tc, inferred_shape_warnings);
    tcase_add_test(tc, canal_double_text_exact);
    tcase_add_test(tc, canal_fast_path_matches_tree);
    tcase_add_test(tc, text_quick_integers_and_zones);
    tcase_add_test(tc, failed_message_adds_no_event);
    tcase_add_test(tc, missing_columns_are_null_and_absent);
    suite_add_tcase(s, tc);
    tc = tcase_create("edge");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, restart_canal);
    tcase_add_test(tc, restart_debezium);
    tcase_add_test(tc, restart_debezium_noschema);
    tcase_add_test(tc, restart_maxwell);
    tcase_add_test(tc, growing_canal);
    tcase_add_test(tc, growing_debezium);
    tcase_add_test(tc, growing_maxwell);
    tcase_add_test(tc, long_line_and_no_newline);
    tcase_add_test(tc, canal_names_split_and_wide_offsets);
    tcase_add_test(tc, uri_errors);
    tcase_add_loop_test(tc, bad_input, 0, (int)W2L_ARRAY_LEN(bad_cases));
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, fail_alloc_loop);
    suite_add_tcase(s, tc);
    return s;
}
