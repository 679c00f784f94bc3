/*
 * lib/pipeline/lake.c, the public inspection API, through the public API alone: tables
 * are built by the push API of a pipeline with the built-in operators in a temp
 * warehouse, then w2l_lake_tables / w2l_lake_scan / w2l_lake_checkpoints are checked for
 * exact values — snapshot counts and summaries, rows with deletes applied (also at an
 * older snapshot), the sealed checkpoint, its job, epoch and source position, and the lag
 * of tables whose sealed checkpoints are not committed yet. Errors: no warehouse, a
 * missing warehouse, a missing table or snapshot, a corrupt state. The last run's record
 * (w2l_lake_last_run): running while a pipeline runs, ok after, a failed one with its
 * error (passwords masked; written through the internal writer), none, a corrupt one.
 * The source's snapshot from the sealed position's "chunks" member (w2l__lake_snap_parse).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/support.h"
#include "common/common.h"
#include "pipeline/lake_int.h"
#include "pipeline/lastrun.h"
#include "pipeline/standbys.h"

static char wh[600];
static w2l_error err;
static w2l_schema *schema;

/* id long (key), v string, n int */
static void setup(void)
{
    snprintf(wh, sizeof wh, "%s", tmpdir_make("lake"));
    w2l_error_clear(&err);
    schema = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(schema, 1, "id", (w2l_type){ W2L_TYPE_LONG, 0, 0 }, 1, &err),
                 err);
    ck_assert_ok(w2l_schema_add_field(schema, 2, "v", (w2l_type){ W2L_TYPE_STRING, 0, 0 }, 0, &err),
                 err);
    ck_assert_ok(w2l_schema_add_field(schema, 3, "n", (w2l_type){ W2L_TYPE_INT, 0, 0 }, 0, &err),
                 err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(schema, &id, 1, &err), err);
}

static void teardown(void)
{
    w2l_schema_unref(schema);
    tmpdir_remove(wh);
}

static w2l_conf *make_conf(void)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "lake-job", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    return c;
}

static void put(w2l_pipeline *p, const char *table, w2l_op op, long id, const char *v, int n)
{
    w2l_value row[3];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    if (v) {
        row[1].v.bytes.ptr = v;
        row[1].v.bytes.len = strlen(v);
    } else {
        row[1].is_null = 1;
    }
    row[2].v.i32 = n;
    w2l_change c = {"db", table, schema, op, row, 3, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

static void commit(w2l_pipeline *p, int txn)
{
    char pos[32];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%d}", txn);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), pos, (size_t)n, &err), err);
}

static uint64_t checkpoint(w2l_pipeline *p)
{
    uint64_t id = 0;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
    return id;
}

/* ---- what the callbacks saw ---- */
typedef struct seen {
    int n;
    w2l_table_info t[8];
    char names[8][64];
    char jobs[8][32];
} seen;

static int on_table(void *ctx, const w2l_table_info *info)
{
    seen *s = ctx;
    ck_assert_int_lt(s->n, 8);
    s->t[s->n] = *info;
    snprintf(s->names[s->n], sizeof s->names[0], "%s.%s", info->ns, info->table);
    snprintf(s->jobs[s->n], sizeof s->jobs[0], "%s", info->job_id ? info->job_id : "(none)");
    s->n++;
    return 0;
}

static void tables(w2l_lake *lake, seen *s)
{
    memset(s, 0, sizeof *s);
    ck_assert_ok(w2l_lake_tables(lake, on_table, s, &err), err);
}

typedef struct rows {
    char text[16][96];
    int n, stop_after;
} rows;

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    rows *r = ctx;
    ck_assert_uint_eq(n, w2l_schema_field_count(s));
    ck_assert_int_lt(r->n, 16);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char v[48];
        w2l_value_format(w2l_schema_field(s, i)->type, &row[i], v, sizeof v);
        o += (size_t)snprintf(r->text[r->n] + o, sizeof r->text[0] - o, "%s%s=%s", i ? " " : "",
                              w2l_schema_field(s, i)->name, v);
    }
    r->n++;
    return r->stop_after && r->n >= r->stop_after;
}

static int cmp_text(const void *a, const void *b) { return strcmp(a, b); }

static void scan(w2l_lake *lake, const char *table, int64_t snap, rows *r)
{
    memset(r, 0, sizeof *r);
    ck_assert_ok(w2l_lake_scan(lake, "db", table, snap, on_row, r, &err), err);
    qsort(r->text, (size_t)r->n, sizeof r->text[0], cmp_text);
}

typedef struct ckpts {
    int n;
    w2l_checkpoint_info v[8];
    char names[8][64];
    char job[32], pos[64];
} ckpts;

static int on_ckpt(void *ctx, const w2l_checkpoint_info *info)
{
    ckpts *c = ctx;
    ck_assert_int_lt(c->n, 8);
    if (!info->ns) {
        ck_assert_int_eq(c->n, 0);
        snprintf(c->job, sizeof c->job, "%s", info->job_id ? info->job_id : "(none)");
        snprintf(c->pos, sizeof c->pos, "%s",
                 info->source_position ? info->source_position : "(none)");
    } else {
        snprintf(c->names[c->n], sizeof c->names[0], "%s.%s", info->ns, info->table);
    }
    c->v[c->n++] = *info;
    return 0;
}

/* db.a: three rows at checkpoint 1; an update and a delete at 2; db.b: one row at 2.
 * *first: db.a's snapshot after checkpoint 1. */
static void build_lake(int64_t *first)
{
    w2l_conf *c = make_conf();
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    put(p, "a", W2L_OP_INSERT, 1, "x", 10);
    put(p, "a", W2L_OP_INSERT, 2, "y \"q\"\n", 20);
    put(p, "a", W2L_OP_INSERT, 3, NULL, 30);
    commit(p, 1);
    ck_assert_uint_eq(checkpoint(p), 1);
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    seen s;
    tables(lake, &s);
    ck_assert_int_eq(s.n, 1);
    *first = s.t[0].current_snapshot_id;
    ck_assert_int_ne(*first, -1);
    w2l_lake_close(lake);
    put(p, "a", W2L_OP_UPDATE_BEFORE, 2, "y \"q\"\n", 20);
    put(p, "a", W2L_OP_UPDATE_AFTER, 2, "z", 21);
    put(p, "a", W2L_OP_DELETE, 3, NULL, 30);
    put(p, "b", W2L_OP_INSERT, 7, "b", 70);
    commit(p, 2);
    ck_assert_uint_eq(checkpoint(p), 2);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err); /* 3: empty */
    w2l_pipeline_free(p);
    w2l_conf_free(c);
}

START_TEST(tables_report_summaries)
{
    int64_t first;
    build_lake(&first);
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    seen s;
    tables(lake, &s);
    ck_assert_int_eq(s.n, 2);
    ck_assert_str_eq(s.names[0], "db.a");
    ck_assert_str_eq(s.names[1], "db.b");
    /* db.a: append, then a row delta (one new data file, the update's and the delete's
     * equality deletes in one file) */
    ck_assert_uint_eq(s.t[0].snapshots, 2);
    ck_assert_uint_eq(s.t[0].rows, 4); /* total-records: data files, before deletes */
    ck_assert_uint_eq(s.t[0].data_files, 2);
    ck_assert_uint_eq(s.t[0].delete_files, 1);
    ck_assert_uint_gt(s.t[0].bytes, 0);
    ck_assert_uint_eq(s.t[0].last_checkpoint, 2);
    ck_assert_str_eq(s.jobs[0], "lake-job");
    ck_assert_int_eq(s.t[0].schema_id, 0);
    ck_assert_int_ne(s.t[0].current_snapshot_id, first);
    ck_assert_int_gt(s.t[0].last_commit_ms, 0);
    ck_assert_ptr_nonnull(s.t[0].metadata);
    ck_assert_uint_eq(s.t[1].snapshots, 1);
    ck_assert_uint_eq(s.t[1].rows, 1);
    ck_assert_uint_eq(s.t[1].data_files, 1);
    ck_assert_uint_eq(s.t[1].delete_files, 0);
    ck_assert_uint_eq(s.t[1].last_checkpoint, 2);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

START_TEST(scan_applies_deletes_and_time_travels)
{
    int64_t first;
    build_lake(&first);
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    rows r;
    scan(lake, "a", -1, &r);
    ck_assert_int_eq(r.n, 2);
    ck_assert_str_eq(r.text[0], "id=1 v=x n=10");
    ck_assert_str_eq(r.text[1], "id=2 v=z n=21");
    scan(lake, "a", first, &r);
    ck_assert_int_eq(r.n, 3);
    ck_assert_str_eq(r.text[0], "id=1 v=x n=10");
    ck_assert_str_eq(r.text[1], "id=2 v=y \"q\"\n n=20");
    ck_assert_str_eq(r.text[2], "id=3 v=null n=30");
    scan(lake, "b", -1, &r);
    ck_assert_int_eq(r.n, 1);
    ck_assert_str_eq(r.text[0], "id=7 v=b n=70");
    /* the callback stops the scan */
    memset(&r, 0, sizeof r);
    r.stop_after = 1;
    ck_assert_int_eq(w2l_lake_scan(lake, "db", "a", -1, on_row, &r, &err), W2L_CANCELLED);
    ck_assert_int_eq(r.n, 1);
    /* missing table and snapshot: W2L_NOTFOUND naming them */
    ck_assert_int_eq(w2l_lake_scan(lake, "db", "nope", -1, on_row, &r, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "db.nope"), "%s", err.msg);
    ck_assert_int_eq(w2l_lake_scan(lake, "db", "a", 12345, on_row, &r, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "12345") && strstr(err.msg, "db.a"), "%s", err.msg);
    ck_assert_int_eq(w2l_lake_scan(lake, "db", "a", -2, on_row, &r, &err), W2L_MISUSE);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

/* A sealed checkpoint the committers have not committed yet, written into the state the
 * way the built-in committer records one (lib/pipeline/ops.h). */
typedef struct pend {
    uint64_t ck;
    const char *table;
} pend;

static void seal_pending(uint64_t ck, const pend *tables, int n)
{
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s/_w2l/state", wh);
    w2l_state *st;
    ck_assert_ok(w2l_state_open(uri, NULL, &st, &err), err);
    for (int i = 0; i < n; i++) {
        char key[128], val[256];
        snprintf(key, sizeof key, "committer/files/%020llu/db.%s", (unsigned long long)tables[i].ck,
                 tables[i].table);
        int len = snprintf(val, sizeof val,
                           "{\"ns\":\"db\",\"table\":\"%s\",\"checkpoint\":%llu,"
                           "\"source-position\":null,"
                           "\"schema-id\":0,\"files\":[]}",
                           tables[i].table, (unsigned long long)tables[i].ck);
        ck_assert_ok(w2l_state_put(st, ck, key, val, (size_t)len, &err), err);
    }
    ck_assert_ok(w2l_state_put(st, ck, "committer/job-id", "lake-job", 8, &err), err);
    ck_assert_ok(w2l_state_put(st, ck, "committer/epoch", "2", 1, &err), err);
    ck_assert_ok(w2l_state_put(st, ck, "source/position", "{\"txn\":9}", 9, &err), err);
    ck_assert_ok(w2l_state_seal(st, ck, &err), err);
    w2l_state_close(st);
}

START_TEST(checkpoints_and_lag)
{
    int64_t first;
    build_lake(&first);
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    ckpts k;
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), err);
    ck_assert_int_eq(k.n, 3);
    ck_assert_uint_eq(k.v[0].sealed, 3);
    ck_assert_str_eq(k.job, "lake-job");
    ck_assert_uint_eq(k.v[0].epoch, 1);
    ck_assert_str_eq(k.pos, "{\"txn\":2}");
    ck_assert_str_eq(k.names[1], "db.a");
    ck_assert_str_eq(k.names[2], "db.b");
    for (int i = 1; i < 3; i++) {
        ck_assert_uint_eq(k.v[i].sealed, 3);
        ck_assert_uint_eq(k.v[i].committed, 2);
        ck_assert_uint_eq(k.v[i].pending, 0);
        ck_assert_uint_eq(k.v[i].oldest_pending, 0);
    }
    /* checkpoints 4 and 5 sealed, not committed: a is 2 behind, b 1, c (not created yet) 1 */
    static const pend p4[] = {{4, "a"}}, p5[] = {{4, "a"}, {5, "a"}, {5, "b"}, {5, "c"}};
    seal_pending(4, p4, 1);
    seal_pending(5, p5, 4); /* 4 carried forward into 5, as the committer does */
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), err);
    ck_assert_int_eq(k.n, 4);
    ck_assert_uint_eq(k.v[0].sealed, 5);
    ck_assert_uint_eq(k.v[0].epoch, 2);
    ck_assert_str_eq(k.pos, "{\"txn\":9}");
    ck_assert_str_eq(k.names[1], "db.a");
    ck_assert_uint_eq(k.v[1].committed, 2);
    ck_assert_uint_eq(k.v[1].pending, 2);
    ck_assert_uint_eq(k.v[1].oldest_pending, 4);
    ck_assert_str_eq(k.names[2], "db.b");
    ck_assert_uint_eq(k.v[2].pending, 1);
    ck_assert_uint_eq(k.v[2].oldest_pending, 5);
    ck_assert_str_eq(k.names[3], "db.c");
    ck_assert_uint_eq(k.v[3].committed, 0);
    ck_assert_uint_eq(k.v[3].pending, 1);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

START_TEST(errors_name_what_and_where)
{
    w2l_conf *c = w2l_conf_new();
    w2l_lake *lake = (w2l_lake *)&err; /* must be reset to NULL */
    ck_assert_int_eq(w2l_lake_open(c, &lake, &err), W2L_CONFIG);
    ck_assert_ptr_null(lake);
    ck_assert_msg(strstr(err.msg, "warehouse"), "%s", err.msg);
    char missing[700];
    snprintf(missing, sizeof missing, "%s/nope", wh);
    ck_assert_ok(w2l_conf_set(c, "warehouse", missing, &err), err);
    ck_assert_int_eq(w2l_lake_open(c, &lake, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, missing), "%s", err.msg);
    w2l_conf_free(c);

    int64_t first;
    build_lake(&first);
    char path[700];
    snprintf(path, sizeof path, "%s/_w2l/state/LATEST", wh);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("garbage\n", f);
    fclose(f);
    c = make_conf();
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    ckpts k;
    memset(&k, 0, sizeof k);
    ck_assert_int_eq(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "LATEST"), "%s", err.msg);
    ck_assert_int_eq(k.n, 0);
    seen s; /* the tables do not need the state */
    tables(lake, &s);
    ck_assert_int_eq(s.n, 2);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

START_TEST(empty_warehouse)
{
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    seen s;
    tables(lake, &s);
    ck_assert_int_eq(s.n, 0);
    ckpts k;
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), err);
    ck_assert_int_eq(k.n, 1);
    ck_assert_uint_eq(k.v[0].sealed, 0);
    ck_assert_str_eq(k.job, "(none)");
    w2l_lake_close(lake);
    w2l_lake_close(NULL);
    w2l_conf_free(c);
}
END_TEST

START_TEST(last_run_records_outcome)
{
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    w2l_run_info r;
    ck_assert_int_eq(w2l_lake_last_run(lake, &r, &err), W2L_NOTFOUND);
    ck_assert_ptr_null(r.outcome);
    int64_t t0 = w2l__now_ms();
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    put(p, "a", W2L_OP_INSERT, 1, "x", 1);
    commit(p, 1);
    checkpoint(p);
    ck_assert_ok(w2l_lake_last_run(lake, &r, &err), err);
    ck_assert_str_eq(r.outcome, "running");
    ck_assert_int_ge(r.started_ms, t0 - 1);
    ck_assert_int_eq(r.ended_ms, -1);
    ck_assert_ptr_null(r.error);
    ck_assert_str_eq(r.job_id, "lake-job");
    ck_assert_int_eq(r.pid, (int64_t)getpid());
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    ck_assert_ok(w2l_lake_last_run(lake, &r, &err), err);
    ck_assert_str_eq(r.outcome, "ok");
    ck_assert_int_ge(r.ended_ms, r.started_ms);
    ck_assert_uint_eq(r.rows, 1);
    ck_assert_uint_ge(r.checkpoint, 1);
    ck_assert_ptr_null(r.error);
    /* a failed run: its error, the password of a URI in it masked */
    w2l__lastrun f = {"failed", t0, t0 + 5, "source mysql://cdc:s3cret@db:3306/?x=1: refused",
                      "lake-job", 7, 3};
    w2l__lastrun_write(c, &f);
    ck_assert_ok(w2l_lake_last_run(lake, &r, &err), err);
    ck_assert_str_eq(r.outcome, "failed");
    ck_assert_str_eq(r.error, "source mysql://cdc:****@db:3306/?x=1: refused");
    ck_assert_int_eq(r.started_ms, t0);
    ck_assert_int_eq(r.ended_ms, t0 + 5);
    ck_assert_uint_eq(r.rows, 7);
    ck_assert_uint_eq(r.checkpoint, 3);
    /* a record that is not one names its file */
    char path[800];
    snprintf(path, sizeof path, "%s/_w2l/last-run.json", wh);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("{\"outcome\":\"maybe\"}", fp);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_int_eq(w2l_lake_last_run(lake, &r, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "last-run.json"), "%s", err.msg);
    fp = fopen(path, "w");
    fputs("not json", fp);
    fclose(fp);
    ck_assert_int_eq(w2l_lake_last_run(lake, &r, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "last-run.json"), "%s", err.msg);
    ck_assert_int_eq(w2l_lake_last_run(NULL, &r, &err), W2L_MISUSE);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

/* wh/rel and its parents, as directories. */
static void make_dir(const char *rel)
{
    char path[800];
    int n = snprintf(path, sizeof path, "%s/%s", wh, rel);
    for (int i = (int)strlen(wh) + 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char c = path[i];
        path[i] = '\0';
        ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
        path[i] = c;
    }
}

static void make_file(const char *rel)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", wh, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The pipeline's state directory (_w2l/state, _w2l/table-ops) is never a namespace, and
 * nothing else in the warehouse that is not one (a file, a directory without tables)
 * breaks the listing, wherever the directory order puts it: first a warehouse holding
 * only those (so they come last), then one with tables beside them. */
/* Standby records: one appears while noted, records are listed oldest first and cut at max,
 * one past its end is skipped, a torn one too, and forget removes this process's. */
START_TEST(standbys_are_listed_while_they_wait)
{
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    w2l_state_holder sb[2];
    size_t n = 9;
    ck_assert_ok(w2l_lake_standbys(lake, sb, 2, &n, &err), err);
    ck_assert_uint_eq(n, 0);
    int64_t now = w2l__now_ms();
    w2l__standby_note(c, "lake-job", now - 500, now + 60000);
    ck_assert_ok(w2l_lake_standbys(lake, sb, 2, &n, &err), err);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(sb[0].pid, (long long)getpid());
    ck_assert_str_eq(sb[0].job, "lake-job");
    ck_assert_int_eq(sb[0].since_ms, now - 500);
    ck_assert_int_eq(sb[0].expires_ms, now + 60000);
    /* two of other hosts: an older live one, one past its end; and a torn file */
    const char *recs[][2] = {
        { "b-1.json", "{\"job\":\"j\",\"host\":\"b\",\"pid\":1,"
                      "\"since-ms\":1000,\"expires-ms\":%lld}" },
        { "c-2.json", "{\"job\":\"j\",\"host\":\"c\",\"pid\":2,"
                      "\"since-ms\":10,\"expires-ms\":%lld}" },
        { "d-3.json", "{\"job\":" },
    };
    for (int i = 0; i < 3; i++) {
        char path[800];
        snprintf(path, sizeof path, "%s/_w2l/standby/%s", wh, recs[i][0]);
        FILE *fp = fopen(path, "w");
        ck_assert_ptr_nonnull(fp);
        fprintf(fp, recs[i][1], (long long)(i == 0 ? now + 60000 : now - 1));
        ck_assert_int_eq(fclose(fp), 0);
    }
    ck_assert_ok(w2l_lake_standbys(lake, sb, 1, &n, &err), err);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(sb[0].host, "b"); /* the oldest of the live ones, cut at max */
    ck_assert_ok(w2l_lake_standbys(lake, sb, 2, &n, &err), err);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(sb[1].pid, (long long)getpid());
    w2l__standby_forget(c);
    ck_assert_ok(w2l_lake_standbys(lake, sb, 2, &n, &err), err);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(w2l_lake_standbys(lake, NULL, 0, NULL, &err), W2L_MISUSE);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

START_TEST(state_directory_is_not_a_namespace)
{
    make_dir("_w2l/state");
    make_dir("_w2l/table-ops");
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    seen s;
    tables(lake, &s);
    ck_assert_int_eq(s.n, 0);
    ckpts k;
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), err);
    ck_assert_int_eq(k.n, 1);
    w2l_lake_close(lake);
    make_file("README");
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    tables(lake, &s);
    ck_assert_int_eq(s.n, 0);
    w2l_lake_close(lake);

    int64_t first;
    build_lake(&first);
    make_dir("scratch/notes");
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    tables(lake, &s);
    ck_assert_int_eq(s.n, 2);
    ck_assert_str_eq(s.names[0], "db.a");
    ck_assert_str_eq(s.names[1], "db.b");
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &k, &err), err);
    ck_assert_int_eq(k.n, 3);
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

/* A database named like the state directory cannot become a namespace of a hadoop
 * warehouse: its first row fails the job, naming the table and why. */
START_TEST(state_directory_name_is_reserved)
{
    w2l_conf *c = make_conf();
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_value row[3];
    memset(row, 0, sizeof row);
    row[1].is_null = 1;
    w2l_change ch = {"_w2l", "state", schema, W2L_OP_INSERT, row, 3, NULL, 0};
    w2l_rc rc = w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err);
    if (rc == W2L_OK) rc = w2l_emit_commit(w2l_pipeline_emitter(p), "{}", 2, &err);
    if (rc == W2L_OK) rc = w2l_pipeline_finish(p, &err);
    ck_assert_int_eq(rc, W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "_w2l.state") && strstr(err.msg, "reserved"), "%s", err.msg);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
}
END_TEST

/* The "chunks" member of a position (the mysql source's snapshot under way): the tables
 * being read with their rows and ranges left, the next table, those read after it; no
 * snapshot for a position without it, one that is not JSON, or none; malformed entries
 * skipped. */
START_TEST(snapshot_of_a_position)
{
    const char *pos = "{\"file\":\"b.000003\",\"pos\":4,\"chunks\":{\"next\":[\"shop\",\"c\"],"
                      "\"skip\":[[\"shop\",\"d\"],[\"shop\",\"f\"],7],\"active\":["
                      "{\"t\":[\"shop\",\"a\"],\"rows\":1200,\"r\":[[null,\"3130\",null],"
                      "[\"3130\",null,[\"3132\"]]]},{\"t\":[\"sh\\\"op\",\"b\"],\"rows\":0,\"r\":"
                      "[[null,null,null]]},{\"t\":\"bad\"}]}}";
    w2l__lake_snap sn;
    ck_assert_ok(w2l__lake_snap_parse(pos, strlen(pos), &sn, &err), err);
    ck_assert_int_eq(sn.running, 1);
    ck_assert_str_eq(sn.next_ns, "shop");
    ck_assert_str_eq(sn.next_table, "c");
    ck_assert_uint_eq(sn.skipped, 2);
    ck_assert_uint_eq(sn.nactive, 2);
    ck_assert_str_eq(sn.active[0].ns, "shop");
    ck_assert_str_eq(sn.active[0].table, "a");
    ck_assert_uint_eq(sn.active[0].rows, 1200);
    ck_assert_uint_eq(sn.active[0].ranges, 2);
    ck_assert_str_eq(sn.active[1].ns, "sh\"op");
    ck_assert_uint_eq(sn.active[1].rows, 0);
    ck_assert_uint_eq(sn.active[1].ranges, 1);
    w2l__lake_snap_free(&sn);
    /* the last tables being read: no next */
    const char *last = "{\"chunks\":{\"active\":[{\"t\":[\"d\",\"z\"],\"rows\":5,\"r\":[]}]}}";
    ck_assert_ok(w2l__lake_snap_parse(last, strlen(last), &sn, &err), err);
    ck_assert_int_eq(sn.running, 1);
    ck_assert_ptr_null(sn.next_ns);
    ck_assert_uint_eq(sn.nactive, 1);
    ck_assert_uint_eq(sn.active[0].ranges, 0);
    w2l__lake_snap_free(&sn);
    const char *none[] = {"{\"file\":\"b.000003\",\"pos\":4}", "not json", "[1,2]",
                          "{\"chunks\":3}", ""};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        ck_assert_ok(w2l__lake_snap_parse(none[i], strlen(none[i]), &sn, &err), err);
        ck_assert_msg(!sn.running && !sn.nactive && !sn.next_ns, "%s", none[i]);
        w2l__lake_snap_free(&sn);
    }
}
END_TEST

typedef struct snap_seen {
    int calls, snapshot;
    char next[64], active[128];
    uint64_t skipped;
} snap_seen;

static int on_snap(void *ctx, const w2l_checkpoint_info *ck)
{
    snap_seen *s = ctx;
    if (s->calls++) return 0;
    s->snapshot = ck->snapshot;
    s->skipped = ck->snapshot_skipped;
    if (ck->snapshot_next_ns)
        snprintf(s->next, sizeof s->next, "%s.%s", ck->snapshot_next_ns, ck->snapshot_next_table);
    for (size_t i = 0; i < ck->snapshot_nactive; i++) {
        size_t n = strlen(s->active);
        snprintf(s->active + n, sizeof s->active - n, "%s.%s:%llu:%llu ",
                 ck->snapshot_active[i].ns, ck->snapshot_active[i].table,
                 (unsigned long long)ck->snapshot_active[i].rows,
                 (unsigned long long)ck->snapshot_active[i].ranges);
    }
    return 0;
}

/* w2l_lake_checkpoints reads the snapshot from the sealed checkpoint's position; nothing
 * once a checkpoint's position has no "chunks". */
START_TEST(checkpoints_show_the_snapshot)
{
    int64_t first;
    build_lake(&first);
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s/_w2l/state", wh);
    const char *pos[] = {"{\"file\":\"b.1\",\"pos\":4,\"chunks\":{\"next\":[\"db\",\"c\"],"
                         "\"active\":[{\"t\":[\"db\",\"b\"],\"rows\":70,\"r\":[[null,null,"
                         "[\"37\"]]]}]}}",
                         "{\"file\":\"b.1\",\"pos\":9}"};
    w2l_conf *c = make_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    for (int i = 0; i < 2; i++) {
        w2l_state *st;
        ck_assert_ok(w2l_state_open(uri, NULL, &st, &err), err);
        ck_assert_ok(w2l_state_put(st, 4 + i, "source/position", pos[i], strlen(pos[i]), &err),
                     err);
        ck_assert_ok(w2l_state_seal(st, 4 + i, &err), err);
        w2l_state_close(st);
        snap_seen s;
        memset(&s, 0, sizeof s);
        ck_assert_ok(w2l_lake_checkpoints(lake, on_snap, &s, &err), err);
        if (i == 0) {
            ck_assert_int_eq(s.snapshot, 1);
            ck_assert_str_eq(s.next, "db.c");
            ck_assert_str_eq(s.active, "db.b:70:1 ");
        } else {
            ck_assert_int_eq(s.snapshot, 0);
            ck_assert_str_eq(s.next, "");
            ck_assert_str_eq(s.active, "");
        }
    }
    w2l_lake_close(lake);
    w2l_conf_free(c);
}
END_TEST

Suite *suite_lake(void)
{
    Suite *s = suite_create("lake");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, tables_report_summaries);
    tcase_add_test(basic, scan_applies_deletes_and_time_travels);
    tcase_add_test(basic, checkpoints_and_lag);
    tcase_add_test(basic, empty_warehouse);
    tcase_add_test(basic, last_run_records_outcome);
    tcase_add_test(basic, standbys_are_listed_while_they_wait);
    tcase_set_timeout(basic, 60);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, setup, teardown);
    tcase_add_test(edge, errors_name_what_and_where);
    tcase_add_test(edge, state_directory_is_not_a_namespace);
    tcase_add_test(edge, state_directory_name_is_reserved);
    tcase_add_test(edge, snapshot_of_a_position);
    tcase_add_test(edge, checkpoints_show_the_snapshot);
    tcase_set_timeout(edge, 60);
    suite_add_tcase(s, edge);
    return s;
}
