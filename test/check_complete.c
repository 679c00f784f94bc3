/*
 * Completeness marks (lib/pipeline/complete.c, README "Completeness for schedulers"):
 * TIME parsing and formatting (ISO-8601, epoch ms, Kafka Connect's valid-through-ts
 * format); the job file only ever grows; the rule a table's mark follows, with a table
 * that receives no changes (no snapshot is written for the mark; the job file carries it);
 * a restart and another job with smaller marks never move a table's mark back; the
 * on-complete hook fires once per table and boundary and not again after a restart.
 * Tables are built through the push API of a pipeline in a temp warehouse.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/support.h"
#include "pipeline/complete.h"

#define H0 1714557600000LL /* 2024-05-01T10:00:00Z */
#define HOUR 3600000LL

static char wh[600];
static w2l_error err;
static w2l_schema *schema;

static void setup(void)
{
    snprintf(wh, sizeof wh, "%s", tmpdir_make("complete"));
    w2l_error_clear(&err);
    schema = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(schema, 1, "id", (w2l_type){ W2L_TYPE_LONG, 0, 0 }, 1, &err),
                 err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(schema, &id, 1, &err), err);
}

static void teardown(void)
{
    w2l_schema_unref(schema);
    tmpdir_remove(wh);
}

static const char *adopt; /* job.adopt-tables of the next pipelines; NULL: none */

static w2l_pipeline *open_pipeline(const char *job, const char *hook)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", job, &err), err);
    if (adopt) ck_assert_ok(w2l_conf_set(c, "job.adopt-tables", adopt, &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    if (hook) ck_assert_ok(w2l_conf_set(c, "on-complete", hook, &err), err);
    w2l_pipeline *p = NULL;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_conf_free(c);
    return p;
}

static void put(w2l_pipeline *p, const char *table, long id)
{
    w2l_value row[1];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    w2l_change c = {"db", table, schema, W2L_OP_INSERT, row, 1, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

/* Ends a transaction, reports mark (when >= 0) and takes a checkpoint. */
static void txn_checkpoint(w2l_pipeline *p, int64_t mark)
{
    w2l_emitter *em = w2l_pipeline_emitter(p);
    ck_assert_ok(w2l_emit_commit(em, "{}", 2, &err), err);
    if (mark >= 0) ck_assert_ok(w2l_emit_progress(em, mark, &err), err);
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, NULL, &err), err);
}

static void finish(w2l_pipeline *p)
{
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p); /* the job file is written before it returns */
}

static w2l_complete_info info_of(const char *table)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *lake = NULL;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    w2l_complete_info ci;
    ck_assert_ok(w2l_table_complete_through(lake, "db", table, &ci, &err), err);
    static char src[32];
    snprintf(src, sizeof src, "%s", ci.source ? ci.source : "");
    ci.source = src;
    ci.job_id = NULL; /* borrowed from the lake */
    w2l_lake_close(lake);
    w2l_conf_free(c);
    return ci;
}

typedef struct count_ctx {
    const char *table;
    uint64_t snapshots;
} count_ctx;

static int count_snapshots(void *ctx, const w2l_table_info *i)
{
    count_ctx *q = ctx;
    if (strcmp(i->table, q->table) == 0) q->snapshots = i->snapshots;
    return 0;
}

static uint64_t snapshots_of(const char *table)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *lake = NULL;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    count_ctx q = {table, 0};
    ck_assert_ok(w2l_lake_tables(lake, count_snapshots, &q, &err), err);
    w2l_lake_close(lake);
    w2l_conf_free(c);
    return q.snapshots;
}

/* ------------------------------------------------------------------ time ----------- */

START_TEST(time_parse_accepts_iso_and_epoch_ms)
{
    static const struct {
        const char *text;
        int64_t ms;
    } ok[] = {
        {"1714557600000", H0},
        {"0", 0},
        {"2024-05-01", 1714521600000LL},
        {"2024-05-01T10:00:00Z", H0},
        {"2024-05-01T10:00Z", H0},
        {"2024-05-01t10:00:00z", H0},
        {"2024-05-01 10:00:00", H0},
        {"2024-05-01T12:00+02:00", H0},
        {"2024-05-01T12:00:00+0200", H0},
        {"2024-05-01T05:30:00-04:30", H0},
        {"2024-05-01T10:00:00.5Z", H0 + 500},
        {"2024-05-01T10:00:00.123456789Z", H0 + 123},
        {"2024-02-29T00:00:00Z", 1709164800000LL},
        {"1969-12-31T23:59:59.999Z", -1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t ms = 42;
        ck_assert_ok(w2l_time_parse(ok[i].text, &ms, &err), err);
        ck_assert_msg(ms == ok[i].ms, "%s: %lld, want %lld", ok[i].text, (long long)ms,
                      (long long)ok[i].ms);
    }
    static const char *bad[] = { "",
                                 "x",
                                 "2024-5-1",
                                 "2024-13-01",
                                 "2023-02-29",
                                 "2024-05-01T25:00Z",
                                 "2024-05-01T10:60Z",
                                 "2024-05-01T10:00:00.Z",
                                 "2024-05-01T10:00:00Zjunk",
                                 "2024-05-01T10:00+2",
                                 "-5",
                                 "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t ms = 42;
        ck_assert_msg(w2l_time_parse(bad[i], &ms, &err) == W2L_CONFIG, "'%s' accepted", bad[i]);
        ck_assert_int_eq(ms, 42);
        ck_assert_ptr_nonnull(strstr(err.msg, "time '"));
    }
}
END_TEST

START_TEST(time_format_iso_and_kafka_connect)
{
    char b[48];
    w2l_time_format(H0 + 123, b, sizeof b);
    ck_assert_str_eq(b, "2024-05-01T10:00:00.123Z");
    w2l_time_format(-1, b, sizeof b);
    ck_assert_str_eq(b, "1969-12-31T23:59:59.999Z");
    /* Java's OffsetDateTime.toString(), as Kafka Connect's sink writes valid-through-ts */
    w2l__time_format_kc(H0, b, sizeof b);
    ck_assert_str_eq(b, "2024-05-01T10:00Z");
    w2l__time_format_kc(H0 + 1000, b, sizeof b);
    ck_assert_str_eq(b, "2024-05-01T10:00:01Z");
    w2l__time_format_kc(H0 - 1, b, sizeof b);
    ck_assert_str_eq(b, "2024-05-01T09:59:59.999Z");
    w2l__time_format_kc(H0 + 20, b, sizeof b);
    ck_assert_str_eq(b, "2024-05-01T10:00:00.020Z");
    for (int64_t ms = -86400000LL * 800; ms < 86400000LL * 800; ms += 86399999LL * 7 + 13) {
        int64_t back;
        w2l_time_format(ms, b, sizeof b);
        ck_assert_ok(w2l_time_parse(b, &back, &err), err);
        ck_assert_msg(back == ms, "%s: %lld != %lld", b, (long long)back, (long long)ms);
    }
}
END_TEST

/* ------------------------------------------------------------------ job file ------- */

START_TEST(job_file_never_goes_back)
{
    w2l_fileio *io = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    char *path = w2l__complete_path(wh, "j1");
    ck_assert_ptr_nonnull(strstr(path, "/_w2l/complete/j1.json"));
    w2l__complete_file f = {5, 5000, 1, "", -1};
    ck_assert_ok(w2l__complete_write(io, path, "j1", &f, &err), err);
    w2l__complete_file older = {3, 4000, 2, "", -1};
    ck_assert_ok(w2l__complete_write(io, path, "j1", &older, &err), err);
    ck_assert_uint_eq(older.checkpoint, 5); /* what was written */
    ck_assert_int_eq(older.through_ms, 5000);
    w2l__complete_file r;
    ck_assert_ok(w2l__complete_read(io, path, &r, &err), err);
    ck_assert_uint_eq(r.checkpoint, 5);
    ck_assert_int_eq(r.through_ms, 5000);
    ck_assert_int_eq(r.updated_ms, 2);
    w2l__complete_file newer = {6, 7000, 3, "hour", H0};
    ck_assert_ok(w2l__complete_write(io, path, "j1", &newer, &err), err);
    w2l__complete_file back = {6, 7000, 4, "hour", H0 - HOUR};
    ck_assert_ok(w2l__complete_write(io, path, "j1", &back, &err), err);
    ck_assert_ok(w2l__complete_read(io, path, &r, &err), err);
    ck_assert_int_eq(r.through_ms, 7000);
    ck_assert_str_eq(r.every, "hour");
    ck_assert_int_eq(r.fired_ms, H0);
    ck_assert_int_eq(w2l__complete_read(io, "/nonexistent/x.json", &r, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, "{\"a\":1}", 7, &err), err);
    ck_assert_int_eq(w2l__complete_read(io, path, &r, &err), W2L_CORRUPT);
    w2l__free(path);
    w2l_fileio_close(io);
}
END_TEST

/* ------------------------------------------------------------------ the rule ------- */

START_TEST(idle_table_follows_the_job_file)
{
    w2l_pipeline *p = open_pipeline("job-a", NULL);
    put(p, "busy", 1);
    put(p, "idle", 1);
    txn_checkpoint(p, 1000); /* checkpoint 1: both tables */
    put(p, "busy", 2);
    txn_checkpoint(p, 2000); /* checkpoint 2: busy only */
    txn_checkpoint(p, 3000); /* checkpoint 3: nothing */
    finish(p);
    ck_assert_uint_eq(snapshots_of("busy"), 2);
    ck_assert_uint_eq(snapshots_of("idle"), 1); /* no snapshot for a mark alone */
    w2l_complete_info b = info_of("busy");
    ck_assert_str_eq(b.source, "job-file");
    w2l_complete_info i = info_of("idle");
    ck_assert_int_eq(b.summary_ms, 2000);
    ck_assert_uint_eq(b.checkpoint, 2);
    ck_assert_int_eq(i.summary_ms, 1000);
    ck_assert_uint_eq(i.checkpoint, 1);
    /* the final checkpoint of finish() carries 3000 too */
    ck_assert_int_eq(i.through_ms, 3000);
    ck_assert_str_eq(i.source, "job-file");
    ck_assert_int_eq(b.through_ms, 3000);
    ck_assert_uint_ge(i.job_file_checkpoint, 3);

    /* a job file older than the table's last commit does not apply to it */
    w2l_fileio *io = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    char *path = w2l__complete_path(wh, "job-a");
    char text[200];
    snprintf(text, sizeof text, "{\"job-id\":\"job-a\",\"checkpoint\":1,"
                                "\"complete-through-ms\":%lld}",
             (long long)H0);
    ck_assert_ok(w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, text, strlen(text), &err), err);
    b = info_of("busy");
    ck_assert_str_eq(b.source, "summary"); /* info_of's source is one static buffer */
    i = info_of("idle");
    ck_assert_int_eq(b.through_ms, 2000);
    ck_assert_int_eq(b.job_file_ms, -1);
    ck_assert_int_eq(i.through_ms, H0);
    w2l__free(path);
    w2l_fileio_close(io);
}
END_TEST

START_TEST(restart_and_replay_never_go_back)
{
    w2l_pipeline *p = open_pipeline("job-a", NULL);
    put(p, "t", 1);
    txn_checkpoint(p, 5000);
    finish(p);
    ck_assert_int_eq(info_of("t").summary_ms, 5000);
    /* a restart that reports nothing yet: the restored checkpoint's mark goes on */
    p = open_pipeline("job-a", NULL);
    put(p, "t", 2);
    txn_checkpoint(p, -1);
    finish(p);
    w2l_complete_info ci = info_of("t");
    ck_assert_int_eq(ci.summary_ms, 5000);
    ck_assert_uint_eq(snapshots_of("t"), 2);
    /* another job with a smaller mark (the table handed over to it: one job writes a
     * table): the table keeps its larger one */
    adopt = "db.t";
    p = open_pipeline("job-b", NULL);
    put(p, "t", 3);
    txn_checkpoint(p, 10);
    finish(p);
    ci = info_of("t");
    ck_assert_int_eq(ci.summary_ms, 5000);
    ck_assert_int_eq(ci.through_ms, 5000);
    ck_assert_uint_eq(snapshots_of("t"), 3);
    /* and a report below the emitter's mark is ignored */
    p = open_pipeline("job-b", NULL);
    put(p, "t", 4);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), "{}", 2, &err), err);
    ck_assert_ok(w2l_emit_progress(w2l_pipeline_emitter(p), 9000, &err), err);
    ck_assert_ok(w2l_emit_progress(w2l_pipeline_emitter(p), 8000, &err), err);
    ck_assert_int_eq(w2l_emit_progress(w2l_pipeline_emitter(p), -1, &err), W2L_MISUSE);
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, NULL, &err), err);
    finish(p);
    ck_assert_int_eq(info_of("t").summary_ms, 9000);
    adopt = NULL;
}
END_TEST

static int count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (!needle || strstr(line, needle)) n++;
    fclose(f);
    return n;
}

static void wait_for_file(const char *path)
{
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            return;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    ck_abort_msg("%s never appeared", path);
}

START_TEST(on_complete_fires_once_per_table_and_boundary)
{
    char out[700], hook[900], jf[700];
    snprintf(out, sizeof out, "%s/hooks.txt", wh);
    snprintf(jf, sizeof jf, "%s/_w2l/complete/job-h.json", wh);
    snprintf(hook, sizeof hook,
             "echo \"$1 $2 $W2L_TABLE $W2L_PERIOD $W2L_BOUNDARY_MS $W2L_JOB_ID\" >> '%s'", out);
    w2l_pipeline *p = open_pipeline("job-h", hook);
    put(p, "a", 1);
    put(p, "b", 1);
    txn_checkpoint(p, H0 + 10); /* the starting point: 10:00 is not fired */
    wait_for_file(jf);
    put(p, "a", 2);
    txn_checkpoint(p, H0 + 3 * HOUR - 1); /* 11:00, 12:00 and 13:00 */
    finish(p);
    ck_assert_int_eq(count_lines(out, NULL), 6);
    ck_assert_int_eq(
        count_lines(out, "db.a 2024-05-01T11:00:00.000Z db.a hour 1714561200000 job-h"), 1);
    ck_assert_int_eq(count_lines(out, "db.b 2024-05-01T13:00:00.000Z db.b hour"), 1);
    ck_assert_int_eq(count_lines(out, "T10:00"), 0);
    /* a restart: the fired boundaries are in the job file, nothing fires again */
    p = open_pipeline("job-h", hook);
    txn_checkpoint(p, H0 + 3 * HOUR + 5);
    finish(p);
    ck_assert_int_eq(count_lines(out, NULL), 6);
    /* a failing command is logged and the boundary passes */
    p = open_pipeline("job-h", "exit 3");
    txn_checkpoint(p, H0 + 4 * HOUR);
    finish(p);
    w2l_fileio *io = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    w2l__complete_file f;
    ck_assert_ok(w2l__complete_read(io, jf, &f, &err), err);
    ck_assert_int_eq(f.fired_ms, H0 + 4 * HOUR);
    ck_assert_int_eq(f.through_ms, H0 + 4 * HOUR);
    w2l_fileio_close(io);
}
END_TEST

Suite *suite_complete(void)
{
    Suite *s = suite_create("complete");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_set_timeout(basic, 60);
    tcase_add_test(basic, time_parse_accepts_iso_and_epoch_ms);
    tcase_add_test(basic, time_format_iso_and_kafka_connect);
    tcase_add_test(basic, job_file_never_goes_back);
    tcase_add_test(basic, idle_table_follows_the_job_file);
    tcase_add_test(basic, restart_and_replay_never_go_back);
    tcase_add_test(basic, on_complete_fires_once_per_table_and_boundary);
    suite_add_tcase(s, basic);
    return s;
}
