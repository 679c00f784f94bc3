/*
 * Fault injection over the whole pipeline: a short canal-json stream
 * through the file source, the built-in DDL handler, writers and committers and the file
 * state store, with the "fault" file IO under all of them (fault_fileio_arm_all: one count
 * across every instance and thread).
 *
 * Each loop index N: run 0 (local file IO) commits the first part of the stream; the second
 * part (changes to both tables, and a table created by its first insert) is appended; run 1
 * fails the Nth write/close (publish) of its one checkpoint — table creation, data and delete
 * files, manifests, manifest lists, metadata, the state file and LATEST. It must either stop
 * with W2L_IO naming the injected fault, or, when the fault never fired, finish. Whatever
 * it left, every table is at a checkpoint boundary (the first part's model or the whole
 * stream's), and run 2 (local again, same warehouse and state) recovers, continues and ends
 * with every table equal to the whole stream's model: no row lost or doubled. The
 * companion test counts the calls of a clean run 1 and checks that they are fewer than the
 * loop range, so the range covers every call (a fault loop that stops early proves nothing).
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg.h"
#include "support/support.h"

#define NTAB 3
#define MAXK 256
#define RANGE 128 /* loop indexes 0 .. RANGE-1 */

static const char *const tnames[NTAB] = {"a", "b", "c"};

typedef struct model {
    unsigned char live[MAXK];
    char v[MAXK][16];
    int n[MAXK];
} model;

typedef struct fx {
    char dir[600], src[700], wh[700];
    model part1[NTAB], full[NTAB];
    char *text1, *text2;
} fx;

static fx F;
static w2l_error err;

/* Log lines of the run: a fault the library tolerates (the version hint is advisory) must
 * still be reported as a warning. */
static int tolerated;
static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level == W2L_LOG_WARN && strstr(line, "injected fault")) tolerated++;
}

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(n, 0);
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
}

/* One canal-json flat message of table t: one row (data), and for an update the changed
 * columns' old values. */
static void message(sbuf *b, int t, const char *type, long id, const char *v, int n,
                    const char *old)
{
    static int seq;
    put(b,
        "{\"data\":[{\"id\":\"%ld\",\"v\":\"%s\",\"n\":\"%d\"}],\"database\":\"db\",\"es\":%lld,"
        "\"id\":%d,"
        "\"isDdl\":false,\"mysqlType\":{\"id\":\"bigint(20)\",\"v\":\"varchar(16)\","
        "\"n\":\"int(11)\"},"
        "\"old\":%s,\"pkNames\":[\"id\"],\"sql\":\"\",\"sqlType\":{\"id\":-5,\"v\":12,\"n\":4},"
        "\"table\":\"%s\","
        "\"ts\":%lld,\"type\":\"%s\"}\n",
        id, v, n, 1700000000000LL + seq, seq + 1, old ? old : "null", tnames[t],
        1700000000000LL + seq, type);
    seq++;
}

/* A random step on table t: insert, update (sometimes of the key) or delete. */
static void step(sbuf *b, model *m, int t)
{
    long id = (long)(rnd() % 40);
    char v[16];
    snprintf(v, sizeof v, "v%u", (unsigned)(rnd() % 10000));
    int n = (int)(rnd() % 100000);
    model *x = &m[t];
    if (!x->live[id]) {
        message(b, t, "INSERT", id, v, n, NULL);
    } else {
        int what = (int)(rnd() % 10);
        char old[96];
        if (what < 6) {
            long nid = what == 0 ? (long)(40 + rnd() % 200) : id;
            if (x->live[nid]) nid = id;
            if (nid != id)
                snprintf(old, sizeof old, "[{\"id\":\"%ld\",\"v\":\"%s\",\"n\":\"%d\"}]", id,
                         x->v[id], x->n[id]);
            else
                snprintf(old, sizeof old, "[{\"v\":\"%s\",\"n\":\"%d\"}]", x->v[id], x->n[id]);
            message(b, t, "UPDATE", nid, v, n, old);
            x->live[id] = 0;
            id = nid;
        } else {
            message(b, t, "DELETE", id, x->v[id], x->n[id], NULL);
            x->live[id] = 0;
            return;
        }
    }
    x->live[id] = 1;
    snprintf(x->v[id], sizeof x->v[id], "%s", v);
    x->n[id] = n;
}

/* The stream, once per process: part 1 changes a and b, part 2 changes a and b again and
 * brings table c (created by its first insert). */
static void make_stream(void)
{
    static int made;
    if (made) return;
    made = 1;
    model m[NTAB];
    memset(m, 0, sizeof m);
    sbuf b1 = {0}, b2 = {0};
    for (int i = 0; i < 120; i++) step(&b1, m, i % 2);
    memcpy(F.part1, m, sizeof m);
    for (int i = 0; i < 150; i++) step(&b2, m, i % 3);
    memcpy(F.full, m, sizeof m);
    F.text1 = b1.p;
    F.text2 = b2.p;
}

static void write_text(const char *path, const char *mode, const char *text)
{
    FILE *f = fopen(path, mode);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
    make_stream();
    snprintf(F.dir, sizeof F.dir, "%s", tmpdir_make("plfault"));
    snprintf(F.src, sizeof F.src, "%s/stream.jsonl", F.dir);
    snprintf(F.wh, sizeof F.wh, "%s/lake", F.dir);
    w2l_error_clear(&err);
    fault_fileio_register();
}

static void teardown(void)
{
    fault_fileio_disarm_all();
    tmpdir_remove(F.dir);
}

/* One `w2l run --until-caught-up` over the stream file with file IO io. */
static w2l_rc run(const char *io, w2l_error *e)
{
    w2l_conf *c = w2l_conf_new();
    char uri[800];
    snprintf(uri, sizeof uri, "file:%s?format=canal-json", F.src);
    ck_assert_ok(w2l_conf_set(c, "source", uri, &err), err);
    ck_assert_ok(w2l_conf_set(c, "warehouse", F.wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "until-caught-up", "true", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parallelism", "2", &err), err);
    ck_assert_ok(w2l_conf_set(c, "committer-parallelism", "2", &err), err);
    ck_assert_ok(w2l_conf_set(c, "commit-retries", "0", &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "faults", &err), err);
    ck_assert_ok(w2l_conf_set(c, "fileio", io, &err), err);
    /* every write counts toward the injected fault: none from maintenance beside it */
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p = NULL;
    w2l_rc rc = w2l_pipeline_new(c, &p, e);
    if (rc == W2L_OK) rc = w2l_pipeline_run(p, e);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    return rc;
}

/* ---- reading a table back with our scan ---- */
typedef struct readback {
    long rows, dups;
    model m;
} readback;

static int rb_row(void *ctx, const w2l_value *row, size_t n)
{
    readback *r = ctx;
    ck_assert_uint_eq(n, 3);
    long id = (long)row[0].v.i64;
    ck_assert(id >= 0 && id < MAXK);
    r->rows++;
    if (r->m.live[id]) r->dups++;
    r->m.live[id] = 1;
    ck_assert(!row[1].is_null && row[1].v.bytes.len < sizeof r->m.v[id]);
    memcpy(r->m.v[id], row[1].v.bytes.ptr, row[1].v.bytes.len);
    r->m.v[id][row[1].v.bytes.len] = '\0';
    r->m.n[id] = row[2].v.i32;
    return 0;
}

/* Table t as the lake holds it; 0 when it does not exist (yet). */
static int read_table(int t, readback *r)
{
    memset(r, 0, sizeof *r);
    w2l_fileio *io;
    w2l_catalog *cat;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, F.wh, io, &cat, &err), err);
    w2l__ice_table *tb = NULL;
    w2l_rc rc = w2l__ice_table_load(cat, io, "db", tnames[t], &tb, &err);
    if (rc == W2L_OK) {
        w2l__ice_scan *s;
        ck_assert_ok(w2l__ice_scan_plan(io, tb->meta, -1, NULL, NULL, &s, &err), err);
        ck_assert_ok(w2l__ice_scan_read(io, s, rb_row, r, &err), err);
        w2l__ice_scan_free(s);
        w2l__ice_table_free(tb);
    } else {
        ck_assert_msg(rc == W2L_NOTFOUND, "load %s: %s", tnames[t], err.msg);
    }
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    return rc == W2L_OK;
}

static int same(const readback *r, const model *m)
{
    if (r->dups) return 0;
    long live = 0;
    for (long id = 0; id < MAXK; id++) {
        if (r->m.live[id] != m->live[id]) return 0;
        if (!m->live[id]) continue;
        live++;
        if (strcmp(r->m.v[id], m->v[id]) || r->m.n[id] != m->n[id]) return 0;
    }
    return r->rows == live;
}

static int empty_model(const model *m)
{
    for (long id = 0; id < MAXK; id++)
        if (m->live[id]) return 0;
    return 1;
}

/* Every table equals the whole stream's model (mid = 0), or, after a failed run, either
 * the first part's model or the whole stream's (a checkpoint boundary per table). */
static void assert_lake(int mid, const char *what)
{
    for (int t = 0; t < NTAB; t++) {
        readback *r = malloc(sizeof *r);
        ck_assert_ptr_nonnull(r);
        int exists = read_table(t, r);
        int at_full = same(r, &F.full[t]);
        int at_part1 = (exists || empty_model(&F.part1[t])) && same(r, &F.part1[t]);
        ck_assert_msg(at_full || (mid && at_part1),
                      "%s: table %s: %ld rows (%ld duplicate keys), equal to %s", what, tnames[t],
                      r->rows, r->dups,
                      mid ? "neither the first part nor the whole stream" : "not the whole stream");
        free(r);
    }
}

/* Run 0: the first part, committed with local file IO; then the second part arrives. */
static void first_part(void)
{
    write_text(F.src, "w", F.text1);
    ck_assert_ok(run("local", &err), err);
    for (int t = 0; t < NTAB; t++) {
        readback *r = malloc(sizeof *r);
        ck_assert_ptr_nonnull(r);
        read_table(t, r);
        ck_assert_msg(same(r, &F.part1[t]), "run 0: table %s", tnames[t]);
        free(r);
    }
    write_text(F.src, "a", F.text2);
}

START_TEST(nth_write_or_publish_fails_then_recovers)
{
    first_part();
    /* run 1: the _i-th write or close of its one checkpoint fails */
    fault_fileio_arm_all(FAULT_WRITE | FAULT_CLOSE, _i, 0);
    w2l_error e;
    w2l_error_clear(&e);
    tolerated = 0;
    w2l_log_set_callback(on_log, NULL);
    w2l_rc rc = run("fault", &e);
    w2l_log_set_callback(NULL, NULL);
    long calls = fault_fileio_calls_all();
    fault_fileio_disarm_all();
    if (calls > _i && rc == W2L_OK) {
        ck_assert_msg(tolerated == 1, "fault %d of %ld: the job finished without saying so", _i,
                      calls);
    } else if (calls > _i) {
        ck_assert_msg(rc == W2L_IO, "fault %d of %ld: %s: %s", _i, calls, w2l_rc_name(rc), e.msg);
        ck_assert_msg(strstr(e.msg, "injected fault") != NULL, "the error names its cause: %s",
                      e.msg);
    } else {
        ck_assert_msg(rc == W2L_OK, "no fault fired (%ld calls): %s: %s", calls, w2l_rc_name(rc),
                      e.msg);
    }
    assert_lake(1, "after run 1");
    /* run 2: local file IO over the same warehouse and state recovers and continues */
    ck_assert_ok(run("local", &err), err);
    assert_lake(0, "after run 2");
    /* and a further run changes nothing */
    ck_assert_ok(run("local", &err), err);
    assert_lake(0, "after run 3");
}
END_TEST

START_TEST(range_covers_every_call)
{
    first_part();
    fault_fileio_arm_all(FAULT_WRITE | FAULT_CLOSE, RANGE, 0);
    w2l_rc rc = run("fault", &err);
    long calls = fault_fileio_calls_all();
    fault_fileio_disarm_all();
    ck_assert_ok(rc, err); /* armed past the end: never fires */
    ck_assert_msg(calls > 10 && calls < RANGE,
                  "run 1 makes %ld write/close calls; the loop covers %d", calls, RANGE);
    assert_lake(0, "clean run 1");
}
END_TEST

Suite *suite_pipeline_faults(void)
{
    Suite *s = suite_create("pipeline_faults");
    TCase *tc = tcase_create("faults");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, range_covers_every_call);
    tcase_add_loop_test(tc, nth_write_or_publish_fails_then_recovers, 0, RANGE);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
