/*
 * lib/pipeline: the runtime with operators plugged in through the public operator API —
 * routing, barrier alignment across parallel instances, the checkpoint coordinator (seal,
 * then commit), the check-commit sink, restart and w2l_recover. The test operators keep a
 * "lake" in memory: per table, the committed row count and sum, and which checkpoints were
 * committed, so exactly-once is checked as a reader of the lake would.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread.h"
#include "event/emit.h"
#include "support/support.h"

/* ---- the lake the test committer commits to ---- */
#define NT 4
static struct {
    long long rows[NT], sum[NT];
    uint64_t committed[NT]; /* newest committed checkpoint per table (the ancestry check) */
    int commits;
} lake;
static atomic_int fail_commit_at; /* notify_complete of this checkpoint fails once (0: never) */
/* The checkpoints the test committer committed, in order (recorded while on: one committer) */
static struct {
    int on, n;
    uint64_t ids[64];
} committed_log;
static atomic_int writer_rows;

static int table_no(const char *t) { return t[1] - '0'; } /* "t0".."t3" */

/* ---- ddl: pass changes through ---- */
static w2l_rc d_open(const w2l_operator_methods *m, const w2l_conf *c, unsigned i, unsigned n,
                     w2l_state *st, uint64_t r, w2l_operator *self, w2l_error *e)
{
    (void)m, (void)c, (void)i, (void)n, (void)st, (void)r, (void)self, (void)e;
    return W2L_OK;
}
static w2l_rc d_process(w2l_operator *self, const w2l_element *el, w2l_collector *out, w2l_error *e)
{
    (void)self;
    if (el->kind == W2L_ELEM_CHANGES) return w2l_collect(out, el, e);
    return W2L_OK;
}
static w2l_rc none_complete(w2l_operator *self, uint64_t ck, w2l_error *e)
{
    (void)self, (void)ck, (void)e;
    return W2L_OK;
}
static void none_close(w2l_operator *self) { (void)self; }
static const w2l_operator_methods t_ddl = { W2L_OPERATOR_METHODS_V1,
                                            "t",
                                            W2L_OPERATOR_DDL,
                                            sizeof(w2l_operator),
                                            NULL,
                                            d_open,
                                            d_process,
                                            none_complete,
                                            none_close };

/* ---- writer: per table, rows and sum of column 1 since the last barrier ---- */
typedef struct t_writer {
    w2l_operator base;
    long long rows[NT], sum[NT];
} t_writer;
static w2l_rc w_process(w2l_operator *self, const w2l_element *el, w2l_collector *out, w2l_error *e)
{
    t_writer *w = (t_writer *)self;
    if (el->kind == W2L_ELEM_CHANGES) {
        for (size_t i = 0; i < el->nchanges; i++) {
            const w2l_change *c = &el->changes[i];
            int t = table_no(c->table);
            int sign = c->op == W2L_OP_DELETE || c->op == W2L_OP_UPDATE_BEFORE ? -1 : 1;
            w->rows[t] += sign;
            w->sum[t] += sign * c->row[1].v.i64;
            atomic_fetch_add(&writer_rows, 1);
        }
    } else if (el->kind == W2L_ELEM_BARRIER) {
        for (int t = 0; t < NT; t++) {
            if (!w->rows[t] && !w->sum[t]) continue;
            char name[16], payload[64];
            snprintf(name, sizeof name, "t%d", t);
            int n = snprintf(payload, sizeof payload, "%lld %lld", w->rows[t], w->sum[t]);
            w2l_element r = { .kind = W2L_ELEM_WRITE_RESULT,
                              .ns = "db",
                              .table = name,
                              .ckpt = el->ckpt,
                              .payload = payload,
                              .payload_len = (size_t)n };
            W2L_TRY(w2l_collect(out, &r, e));
            w->rows[t] = w->sum[t] = 0;
        }
    }
    return W2L_OK;
}
static const w2l_operator_methods t_writer_m = { W2L_OPERATOR_METHODS_V1,
                                                 "t",
                                                 W2L_OPERATOR_WRITER,
                                                 sizeof(t_writer),
                                                 NULL,
                                                 d_open,
                                                 w_process,
                                                 none_complete,
                                                 none_close };

/* ---- committer: results into the state at the barrier, into the lake at completion ---- */
typedef struct t_committer {
    w2l_operator base;
    unsigned index;
    w2l_state *st;
    long long rows[NT], sum[NT];
} t_committer;
static w2l_rc c_open(const w2l_operator_methods *m, const w2l_conf *c, unsigned i, unsigned n,
                     w2l_state *st, uint64_t r, w2l_operator *self, w2l_error *e)
{
    (void)m, (void)c, (void)n, (void)r, (void)e;
    ((t_committer *)self)->index = i;
    ((t_committer *)self)->st = st;
    return W2L_OK;
}
static w2l_rc c_process(w2l_operator *self, const w2l_element *el, w2l_collector *out, w2l_error *e)
{
    (void)out;
    t_committer *c = (t_committer *)self;
    if (el->kind == W2L_ELEM_WRITE_RESULT) {
        long long r, s;
        ck_assert_int_eq(sscanf(el->payload, "%lld %lld", &r, &s), 2);
        c->rows[table_no(el->table)] += r;
        c->sum[table_no(el->table)] += s;
    } else if (el->kind == W2L_ELEM_BARRIER) {
        for (int t = 0; t < NT; t++) {
            if (!c->rows[t] && !c->sum[t]) continue;
            char key[32], val[64];
            snprintf(key, sizeof key, "committer/%u/t%d", c->index, t);
            int n = snprintf(val, sizeof val, "%lld %lld", c->rows[t], c->sum[t]);
            W2L_TRY(w2l_state_put(c->st, el->ckpt, key, val, (size_t)n, e));
            c->rows[t] = c->sum[t] = 0;
        }
    }
    return W2L_OK;
}
typedef struct commit_ctx { t_committer *c; uint64_t ck; w2l_error *e; w2l_rc rc; } commit_ctx;
static int commit_key(void *p, const char *key)
{
    commit_ctx *x = p;
    int t = table_no(strrchr(key, '/') + 1);
    if (x->ck <= lake.committed[t]) return 0; /* committed before: never twice */
    w2l_buf b = {0};
    x->rc = w2l_state_get(x->c->st, x->ck, key, &b, x->e);
    if (x->rc != W2L_OK) return 1;
    long long r, s;
    w2l__buf_cstr(&b, x->e);
    sscanf((char *)b.data, "%lld %lld", &r, &s);
    w2l_buf_release(&b);
    lake.rows[t] += r;
    lake.sum[t] += s;
    lake.committed[t] = x->ck;
    lake.commits++;
    return 0;
}
static w2l_rc c_complete(w2l_operator *self, uint64_t ck, w2l_error *e)
{
    if ((int)ck == atomic_load(&fail_commit_at)) {
        atomic_store(&fail_commit_at, 0);
        return w2l_error_set(e, W2L_IO, "table db.t0: metadata write: injected failure");
    }
    commit_ctx x = {(t_committer *)self, ck, e, W2L_OK};
    /* the tables hashed to this committer: its keys of the checkpoint */
    char prefix[32];
    snprintf(prefix, sizeof prefix, "committer/%u/", x.c->index);
    W2L_TRY(w2l_state_keys(x.c->st, ck, prefix, commit_key, &x, e));
    if (x.rc == W2L_OK && committed_log.on && committed_log.n < 64)
        committed_log.ids[committed_log.n++] = ck;
    return x.rc;
}
static const w2l_operator_methods t_committer_m = { W2L_OPERATOR_METHODS_V1,
                                                    "t",
                                                    W2L_OPERATOR_COMMITTER,
                                                    sizeof(t_committer),
                                                    NULL,
                                                    c_open,
                                                    c_process,
                                                    c_complete,
                                                    none_close };

/* ---- helpers ---- */
static w2l_schema *schema;
static w2l_error err;
static char statedir[600];

static void setup(void)
{
    memset(&lake, 0, sizeof lake);
    memset(&committed_log, 0, sizeof committed_log);
    atomic_store(&fail_commit_at, 0);
    atomic_store(&writer_rows, 0);
    w2l_operator_register(&t_ddl);
    w2l_operator_register(&t_writer_m);
    w2l_operator_register(&t_committer_m);
    schema = w2l_schema_new(0);
    w2l_type lt = {W2L_TYPE_LONG, 0, 0};
    ck_assert_ok(w2l_schema_add_field(schema, 1, "id", lt, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(schema, 2, "v", lt, 0, &err), err);
    int32_t pk = 1;
    ck_assert_ok(w2l_schema_set_identifier(schema, &pk, 1, &err), err);
    snprintf(statedir, sizeof statedir, "%s", tmpdir_make("pipeline"));
}

static void teardown(void)
{
    w2l_schema_unref(schema);
    tmpdir_remove(statedir);
}

static w2l_conf *make_conf(unsigned nddl, unsigned nw, unsigned nc)
{
    w2l_conf *c = w2l_conf_new();
    char v[700];
    snprintf(v, sizeof v, "file:%s", statedir);
    ck_assert_ok(w2l_conf_set(c, "state", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.ddl", "t", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "t", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.committer", "t", &err), err);
    snprintf(v, sizeof v, "%u", nddl);
    ck_assert_ok(w2l_conf_set(c, "ddl-parallelism", v, &err), err);
    snprintf(v, sizeof v, "%u", nw);
    ck_assert_ok(w2l_conf_set(c, "parallelism", v, &err), err);
    snprintf(v, sizeof v, "%u", nc);
    ck_assert_ok(w2l_conf_set(c, "committer-parallelism", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "table.db.t1.table-parallelism", "3", &err), err);
    ck_assert_ok(w2l_conf_set(c, "batch-rows", "50", &err), err);
    ck_assert_ok(w2l_conf_set(c, "channel-capacity", "4", &err), err);
    return c;
}

/* Pushes rows [from, to) spread over the tables, one transaction per 10 rows, a checkpoint
 * every ckpt_every rows; expect[] accumulates what the lake must end with. */
static long long expect_rows[NT], expect_sum[NT];
static void push_rows(w2l_pipeline *p, long from, long to, long ckpt_every)
{
    w2l_emitter *em = w2l_pipeline_emitter(p);
    ck_assert_ptr_nonnull(em);
    for (long i = from; i < to; i++) {
        char table[4];
        int t = (int)(i % NT);
        snprintf(table, sizeof table, "t%d", t);
        w2l_value row[2] = {{0}, {0}};
        row[0].v.i64 = i;
        row[1].v.i64 = i * 3;
        w2l_change c = {"db", table, schema, W2L_OP_INSERT, row, 2, NULL, 0};
        ck_assert_ok(w2l_emit_change(em, &c, &err), err);
        expect_rows[t]++;
        expect_sum[t] += i * 3;
        if (i % 7 == 0 && i > 0) { /* a delete of an earlier row, in the same transaction */
            row[0].v.i64 = i - 1;
            row[1].v.i64 = (i - 1) * 3;
            int t2 = (int)((i - 1) % NT);
            snprintf(table, sizeof table, "t%d", t2);
            w2l_change d = {"db", table, schema, W2L_OP_DELETE, row, 2, NULL, 0};
            ck_assert_ok(w2l_emit_change(em, &d, &err), err);
            expect_rows[t2]--;
            expect_sum[t2] -= (i - 1) * 3;
        }
        if ((i + 1) % 10 == 0) {
            char pos[32];
            int n = snprintf(pos, sizeof pos, "{\"offset\":%ld}", i + 1);
            ck_assert_ok(w2l_emit_commit(em, pos, (size_t)n, &err), err);
            if ((i + 1) % ckpt_every == 0) {
                uint64_t id;
                ck_assert_ok(w2l_pipeline_checkpoint(p, 0, &id, &err), err);
            }
        }
    }
}

static void assert_lake_equals_expected(void)
{
    for (int t = 0; t < NT; t++) {
        ck_assert_int_eq(lake.rows[t], expect_rows[t]);
        ck_assert_int_eq(lake.sum[t], expect_sum[t]);
    }
}

static int metrics_seen;
static w2l_table_metrics metrics_sum;
static int sum_metrics(void *ctx, const w2l_table_metrics *m)
{
    (void)ctx;
    ck_assert_str_eq(m->ns, "db");
    ck_assert_int_eq(m->table[0], 't');
    metrics_seen++;
    metrics_sum.rows_in += m->rows_in;
    metrics_sum.commits += m->commits;
    if (m->last_committed_ckpt > metrics_sum.last_committed_ckpt)
        metrics_sum.last_committed_ckpt = m->last_committed_ckpt;
    ck_assert(m->secs_since_commit >= 0);
    return 0;
}

START_TEST(push_api_exactly_once_with_parallel_operators)
{
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    /* _i picks the shape: 1x1x1, and 2 ddl x 3 writers x 2 committers */
    unsigned shapes[2][3] = {{1, 1, 1}, {2, 3, 2}};
    w2l_conf *c = make_conf(shapes[_i][0], shapes[_i][1], shapes[_i][2]);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    push_rows(p, 0, 20000, 1000);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    /* per-table metrics, as the runtime saw them */
    metrics_seen = 0;
    memset(&metrics_sum, 0, sizeof metrics_sum);
    ck_assert_ok(w2l_pipeline_metrics(p, sum_metrics, NULL, &err), err);
    ck_assert_int_eq(metrics_seen, NT);
    ck_assert_uint_eq(metrics_sum.rows_in, (uint64_t)atomic_load(&writer_rows));
    ck_assert_uint_ge(metrics_sum.commits, 20 * NT);
    ck_assert_uint_ge(metrics_sum.last_committed_ckpt, 20);
    w2l_pipeline_free(p);
    assert_lake_equals_expected();
    ck_assert_int_ge(lake.commits, 20 * NT);
    w2l_conf_free(c);
}
END_TEST

START_TEST(checkpoint_waits_for_commit)
{
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    w2l_conf *c = make_conf(1, 2, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    push_rows(p, 0, 100, 1000000);
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
    ck_assert_uint_eq(id, 1);
    assert_lake_equals_expected(); /* visible as soon as the checkpoint returns */
    /* a checkpoint inside a transaction is refused */
    w2l_value row[2] = {{0}, {0}};
    w2l_change ch = {"db", "t0", schema, W2L_OP_INSERT, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err), err);
    ck_assert_int_eq(w2l_pipeline_checkpoint(p, 1, &id, &err), W2L_MISUSE);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), "{}", 2, &err), err);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    ck_assert_int_eq(lake.rows[0], expect_rows[0] + 1);
    w2l_conf_free(c);
}
END_TEST

/* The commit lag: how long the oldest change read and not committed has waited. It grows
 * while changes wait (the clock is watched, not slept on) and is 0 once a checkpoint
 * committed them; a push pipeline has no source, so its source lag is 0. */
START_TEST(commit_lag_counts_from_the_oldest_uncommitted_change)
{
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    w2l_conf *c = make_conf(1, 2, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_pipeline_info pi;
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_eq(pi.commit_lag_ms, 0); /* nothing read */
    /* the rows' time is taken inside push_rows: at or after t0, at or before t0b */
    int64_t t0 = w2l__now_ms();
    push_rows(p, 0, 10, 1000000); /* fewer than a batch: held by the emitter */
    int64_t t0b = w2l__now_ms();
    while (w2l__now_ms() < t0b + 20) continue;
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_ge(pi.commit_lag_ms, 20);
    ck_assert_int_le(pi.commit_lag_ms, w2l__now_ms() - t0 + 1);
    ck_assert_int_eq(pi.source_lag_ms, 0);
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_eq(pi.commit_lag_ms, 0); /* every change read is committed */
    /* changes after the barrier wait again, from when they came */
    int64_t t1 = w2l__now_ms();
    push_rows(p, 10, 20, 1000000);
    int64_t t1b = w2l__now_ms();
    while (w2l__now_ms() < t1b + 10) continue;
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_ge(pi.commit_lag_ms, 10);
    ck_assert_int_le(pi.commit_lag_ms, w2l__now_ms() - t1 + 1);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_eq(pi.commit_lag_ms, 0);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
}
END_TEST

START_TEST(failed_commit_stops_job_and_recover_commits_once)
{
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    w2l_conf *c = make_conf(1, 2, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    push_rows(p, 0, 3000, 1000); /* checkpoints 1..3 */
    atomic_store(&fail_commit_at, 4);
    push_rows(p, 3000, 4000, 1000000);
    w2l_rc rc = w2l_pipeline_finish(p, &err); /* final checkpoint 4: sealed, its commit fails */
    ck_assert_int_eq(rc, W2L_IO);
    ck_assert_msg(strstr(err.msg, "commit of checkpoint 4 failed") && strstr(err.msg, "db.t0"),
                  "%s", err.msg);
    w2l_pipeline_free(p);
    ck_assert_uint_eq(lake.committed[0], 3); /* the lake stops at checkpoint 3 */
    /* recover commits checkpoint 4 from the state, exactly once, however often it runs */
    ck_assert_ok(w2l_recover(c, &err), err);
    assert_lake_equals_expected();
    int commits = lake.commits;
    ck_assert_ok(w2l_recover(c, &err), err);
    ck_assert_int_eq(lake.commits, commits);
    assert_lake_equals_expected();
    /* a restarted pipeline continues after checkpoint 4 */
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    push_rows(p, 4000, 5000, 1000);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_lake_equals_expected();
    ck_assert_uint_ge(lake.committed[1], 5);
    w2l_conf_free(c);
}
END_TEST

START_TEST(unknown_operator_is_a_config_error)
{
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "nope", &err), err);
    w2l_pipeline *p;
    ck_assert_int_eq(w2l_pipeline_new(c, &p, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "operator.writer") && strstr(err.msg, "'nope'"), "%s", err.msg);
    ck_assert_ptr_null(p);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "t", &err), err);
    ck_assert_ok(w2l_conf_set(c, "source", "nosuch://x", &err), err);
    ck_assert_int_eq(w2l_pipeline_new(c, &p, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown kind 'nosuch'"), "%s", err.msg);
    /* it names the kinds this build has, and only those */
    ck_assert_msg(strstr(err.msg, "file") && strstr(err.msg, "mysql") && strstr(err.msg, "kafka") &&
                      !strstr(err.msg, "s3"),
                  "%s", err.msg);
    w2l_conf_free(c);
}
END_TEST

START_TEST(emitter_batches_by_table_and_validates)
{
    /* the emitter alone: hooks that count */
    static int batches, rows;
    struct hooks_ctx { int dummy; } ctx;
    (void)ctx;
    batches = rows = 0;
    w2l__emit_hooks h = {0};
    h.batch = NULL;
    (void)h;
    w2l_value row[2] = {{0}, {0}};
    row[1].is_null = 1;
    w2l_change bad = {"db", "t0", schema, W2L_OP_INSERT, row, 1, NULL, 0};
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_emitter *em = w2l_pipeline_emitter(p);
    ck_assert_int_eq(w2l_emit_change(em, &bad, &err), W2L_SCHEMA); /* 1 value for 2 columns */
    ck_assert_msg(strstr(err.msg, "1 values for 2 columns"), "%s", err.msg);
    row[0].is_null = 1;
    bad.ncols = 2;
    ck_assert_int_eq(w2l_emit_change(em, &bad, &err), W2L_SCHEMA); /* NULL key */
    ck_assert_msg(strstr(err.msg, "required column id"), "%s", err.msg);
    bad.table = "";
    ck_assert_int_eq(w2l_emit_change(em, &bad, &err), W2L_MISUSE);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    (void)batches, (void)rows;
}
END_TEST

/* The emitter alone, with hooks that record each batch as "table:v,v": tables of one group
 * (a route's sources) reach the pipeline in their source order, other tables batch apart. */
static char em_log[512];
static w2l_rc log_batch(void *ctx, w2l__batch *b, w2l_error *e)
{
    (void)ctx, (void)e;
    size_t n = strlen(em_log);
    n += (size_t)snprintf(em_log + n, sizeof em_log - n, "%s%s:", n ? " " : "", b->table);
    for (size_t i = 0; i < b->n; i++)
        n += (size_t)snprintf(em_log + n, sizeof em_log - n, "%s%d", i ? "," : "",
                              (int)b->changes[i].row[0].v.i64);
    w2l__batch_free(b);
    return W2L_OK;
}
static const char *group_t01(void *ctx, const char *ns, const char *table)
{
    (void)ctx, (void)ns;
    return strcmp(table, "t2") ? "db.merged" : NULL;
}

START_TEST(emitter_keeps_a_groups_order)
{
    for (int grouped = 0; grouped < 2; grouped++) {
        w2l__emit_hooks h = {log_batch, NULL, NULL, NULL};
        w2l_emitter *em = w2l__emitter_new(&h, 100);
        ck_assert_ptr_nonnull(em);
        if (grouped) w2l__emitter_set_group(em, group_t01);
        em_log[0] = '\0';
        static const char *const order[] = {"t0", "t1", "t2", "t0", "t0", "t2", "t1"};
        for (size_t i = 0; i < W2L_ARRAY_LEN(order); i++) {
            w2l_value row[2] = {{0}, {0}};
            row[0].v.i64 = (int64_t)i;
            row[1].is_null = 1;
            w2l_change c = {"db", order[i], schema, W2L_OP_INSERT, row, 2, NULL, 0};
            ck_assert_ok(w2l_emit_change(em, &c, &err), err);
        }
        ck_assert_ok(w2l__emitter_flush(em, &err), err);
        if (grouped) /* t2 is in no group: one batch at the flush, in no set order */
            ck_assert_msg(!strncmp(em_log, "t0:0 t1:1 t0:3,4 ", 17) && strstr(em_log, " t1:6") &&
                              strstr(em_log, " t2:2,5"),
                          "%s", em_log);
        else
            ck_assert_msg(strstr(em_log, "t0:0,3,4") && strstr(em_log, "t1:1,6") &&
                              strstr(em_log, "t2:2,5"),
                          "%s", em_log);
        w2l__emitter_free(em);
    }
}
END_TEST

/* The emitter alone, its batches kept by the hooks: the rows (strings, NULLs, a schema
 * change in the middle) read back whole after the emitter is freed, and the batches are
 * freed on another thread, last of all users of the emitter's memory. */
static struct {
    w2l__batch *b[64];
    int n;
} kept;
static w2l_rc keep_batch(void *ctx, w2l__batch *b, w2l_error *e)
{
    (void)ctx, (void)e;
    ck_assert_int_lt(kept.n, 64);
    kept.b[kept.n++] = b;
    return W2L_OK;
}
static int free_kept(void *arg)
{
    (void)arg;
    for (int i = 0; i < kept.n; i++) w2l__batch_free(kept.b[i]);
    return 0;
}
static void text_of(long i, char *buf, size_t size)
{
    snprintf(buf, size, "row %ld %.*s", i, (int)(i % 300), /* 0 to 299 bytes of padding */
             "................................................................................"
             "................................................................................"
             "................................................................................"
             "................................................................................");
}

START_TEST(emitter_batches_outlive_it)
{
    w2l_type lt = {.id = W2L_TYPE_LONG}, st = {.id = W2L_TYPE_STRING};
    w2l_schema *s1 = w2l_schema_new(0), *s2 = w2l_schema_new(1);
    ck_assert_ok(w2l_schema_add_field(s1, 1, "id", lt, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s1, 2, "name", st, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s1, 3, "note", st, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s2, 3, "note", st, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s2, 1, "id", lt, 1, &err), err);
    w2l__emit_hooks h = {keep_batch, NULL, NULL, NULL};
    kept.n = 0;
    w2l_emitter *em = w2l__emitter_new(&h, 1000);
    ck_assert_ptr_nonnull(em);
    enum { N1 = 2500, N2 = 40 };
    for (long i = 0; i < N1 + N2; i++) {
        char name[400], note[32];
        text_of(i, name, sizeof name);
        snprintf(note, sizeof note, "note %ld", i);
        w2l_value row[3] = {{0}};
        int first = i < N1;
        w2l_value *id = &row[first ? 0 : 1], *nt = &row[first ? 2 : 0];
        id->v.i64 = i;
        nt->v.bytes.ptr = note, nt->v.bytes.len = strlen(note);
        nt->is_null = i % 7 == 0;
        if (first) row[1].v.bytes.ptr = name, row[1].v.bytes.len = strlen(name);
        w2l_change c = {"db", "wide", first ? s1 : s2, W2L_OP_INSERT, row, first ? 3 : 2, NULL, i};
        if (i == 1234 || i == N1 + 5) { /* a NULL key is refused, and leaves no trace */
            id->is_null = 1;
            ck_assert_int_eq(w2l_emit_change(em, &c, &err), W2L_SCHEMA);
            ck_assert_msg(strstr(err.msg, "NULL in required column id"), "%s", err.msg);
            continue;
        }
        ck_assert_ok(w2l_emit_change(em, &c, &err), err);
    }
    ck_assert_ok(w2l__emitter_flush(em, &err), err);
    w2l__emitter_free(em);
    w2l_schema_unref(s1);
    w2l_schema_unref(s2);
    /* batches of 1000, the third cut short by the schema change, then the other schema's */
    ck_assert_int_eq(kept.n, 4);
    long i = 0;
    for (int k = 0; k < kept.n; k++) {
        w2l__batch *b = kept.b[k];
        ck_assert_str_eq(b->table, "wide");
        for (size_t r = 0; r < b->n; r++, i++) {
            if (i == 1234 || i == N1 + 5) i++;
            const w2l_change *c = &b->changes[r];
            char name[400], note[32];
            text_of(i, name, sizeof name);
            snprintf(note, sizeof note, "note %ld", i);
            int first = i < N1;
            ck_assert_ptr_eq(c->schema, b->schema);
            ck_assert_uint_eq(c->ncols, first ? 3 : 2);
            ck_assert_int_eq(c->ts_ms, i);
            const w2l_value *id = &c->row[first ? 0 : 1], *nt = &c->row[first ? 2 : 0];
            ck_assert_int_eq(id->v.i64, i);
            ck_assert_int_eq(nt->is_null, i % 7 == 0);
            if (!nt->is_null) {
                ck_assert_uint_eq(nt->v.bytes.len, strlen(note));
                ck_assert(!memcmp(nt->v.bytes.ptr, note, strlen(note)));
            }
            if (first) {
                ck_assert_uint_eq(c->row[1].v.bytes.len, strlen(name));
                ck_assert(!memcmp(c->row[1].v.bytes.ptr, name, strlen(name)));
            }
        }
    }
    ck_assert_int_eq(i, N1 + N2);
    thrd_t t;
    ck_assert_int_eq(thrd_create(&t, free_kept, NULL), thrd_success);
    ck_assert_int_eq(thrd_join(t, NULL), thrd_success);
}
END_TEST

/* ---- a source that records the checkpoints it is told complete (w2l_source_methods(3)) ----
 * next() emits one transaction of 10 rows, txn t holding rows 10t..10t+9, its position
 * {"txn":t+1}; every third transaction asks for a checkpoint, so checkpoints 1..10 fall after
 * transactions 3, 6, .., 30 and the end adds checkpoint 11. */
#define TS_TXNS 30
static struct {
    uint64_t heard[64];
    int nheard;
    int off_thread;   /* checkpoint_complete ran on another thread than next() */
    uint64_t fail_at; /* checkpoint_complete of this checkpoint fails */
} ts;
static w2l_pipeline *ts_pipeline;
typedef struct t_source {
    w2l_source base;
    long txn;
    pthread_t thr;
    int have_thr;
} t_source;
static w2l_rc ts_open(const w2l_source_methods *m, const w2l_conf *c, const char *uri,
                      const char *restored, w2l_source *self, w2l_error *e)
{
    (void)m, (void)c, (void)uri;
    t_source *s = (t_source *)self;
    if (restored && sscanf(restored, "{\"txn\":%ld}", &s->txn) != 1)
        return w2l_error_set(e, W2L_CORRUPT, "test source: bad position %s", restored);
    return W2L_OK;
}
static w2l_rc ts_next(w2l_source *self, w2l_emitter *em, int timeout_ms, w2l_error *e)
{
    (void)timeout_ms;
    t_source *s = (t_source *)self;
    if (!s->have_thr) s->thr = pthread_self(), s->have_thr = 1;
    else if (!pthread_equal(s->thr, pthread_self())) ts.off_thread = 1;
    if (s->txn == TS_TXNS) return W2L_DONE;
    for (long i = s->txn * 10; i < s->txn * 10 + 10; i++) {
        char table[4];
        snprintf(table, sizeof table, "t%d", (int)(i % NT));
        w2l_value row[2] = {{0}, {0}};
        row[0].v.i64 = i;
        row[1].v.i64 = i * 3;
        w2l_change c = {"db", table, schema, W2L_OP_INSERT, row, 2, NULL, 0};
        W2L_TRY(w2l_emit_change(em, &c, e));
    }
    s->txn++;
    if (s->txn % 3 == 0) W2L_TRY(w2l_pipeline_checkpoint(ts_pipeline, 0, NULL, e));
    char pos[32];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%ld}", s->txn);
    return w2l_emit_commit(em, pos, (size_t)n, e);
}
static w2l_rc ts_complete(w2l_source *self, uint64_t ck, w2l_error *e)
{
    t_source *s = (t_source *)self;
    if (!s->have_thr) s->thr = pthread_self(), s->have_thr = 1; /* may come before a next() */
    else if (!pthread_equal(s->thr, pthread_self())) ts.off_thread = 1;
    if (ts.nheard < 64) ts.heard[ts.nheard++] = ck;
    if (ck == ts.fail_at)
        return w2l_error_set(e, W2L_UNAVAILABLE, "test source: cannot release upstream");
    return W2L_OK;
}
static void ts_close(w2l_source *self) { (void)self; }
static const w2l_source_methods t_source_m = {W2L_SOURCE_METHODS_V1, "tsrc", sizeof(t_source), NULL,
                                              ts_open, ts_next, ts_complete, NULL, ts_close,
                                              NULL, NULL, NULL, NULL};

static w2l_conf *ts_conf(void)
{
    ck_assert_ok(w2l_source_register(&t_source_m, 0), err);
    w2l_conf *c = make_conf(1, 2, 1);
    ck_assert_ok(w2l_conf_set(c, "source", "tsrc:", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1d", &err), err); /* only asked ones */
    memset(&ts, 0, sizeof ts);
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    for (long i = 0; i < TS_TXNS * 10; i++) {
        expect_rows[i % NT]++;
        expect_sum[i % NT] += i * 3;
    }
    return c;
}

static w2l_rc ts_run(w2l_conf *c)
{
    memset(&ts.heard, 0, sizeof ts.heard);
    ts.nheard = 0;
    memset(&committed_log, 0, sizeof committed_log);
    committed_log.on = 1;
    ck_assert_ok(w2l_pipeline_new(c, &ts_pipeline, &err), err);
    w2l_rc rc = w2l_pipeline_run(ts_pipeline, &err);
    w2l_pipeline_free(ts_pipeline);
    ts_pipeline = NULL;
    ck_assert_int_eq(ts.off_thread, 0);
    return rc;
}

/* What the source heard is what the committer committed: the same ids, in order, once. */
static void assert_heard_committed(void)
{
    ck_assert_int_eq(ts.nheard, committed_log.n);
    for (int i = 0; i < ts.nheard; i++) {
        ck_assert_uint_eq(ts.heard[i], committed_log.ids[i]);
        if (i) ck_assert_uint_eq(ts.heard[i], ts.heard[i - 1] + 1);
    }
}

START_TEST(source_hears_each_committed_checkpoint_once)
{
    w2l_conf *c = ts_conf();
    ts.fail_at = 5; /* a failure there is logged: the job goes on */
    ck_assert_ok(ts_run(c), err);
    assert_heard_committed();
    ck_assert_int_eq(ts.nheard, 11);
    ck_assert_uint_eq(ts.heard[0], 1);
    ck_assert_uint_eq(ts.heard[10], 11);
    assert_lake_equals_expected();
    w2l_conf_free(c);
}
END_TEST

START_TEST(source_never_hears_a_failed_commit)
{
    w2l_conf *c = ts_conf();
    atomic_store(&fail_commit_at, 11); /* the last checkpoint, at the end of the source */
    ck_assert_int_eq(ts_run(c), W2L_IO);
    ck_assert_msg(strstr(err.msg, "commit of checkpoint 11 failed"), "%s", err.msg);
    assert_heard_committed();
    ck_assert_int_eq(ts.nheard, 10); /* 1..10, never 11 */
    ck_assert_uint_eq(ts.heard[9], 10);
    /* a restart re-commits checkpoint 11, then the source hears it, and the end's 12 */
    ck_assert_ok(ts_run(c), err);
    assert_heard_committed();
    ck_assert_int_eq(ts.nheard, 2);
    ck_assert_uint_eq(ts.heard[0], 11);
    ck_assert_uint_eq(ts.heard[1], 12);
    assert_lake_equals_expected();
    w2l_conf_free(c);
}
END_TEST

/* ---- standby and fencing (lib/pipeline/ha.c) ---- */

static int64_t wall_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void nap_ms(long ms) /* a poll's pause; never what a test waits for */
{
    struct timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, NULL);
}

typedef struct standby_arg {
    w2l_conf *c;
    w2l_pipeline *p;
    w2l_rc rc;
    w2l_error err;
    atomic_llong done_ms; /* when w2l_pipeline_new returned; 0 while it waits */
} standby_arg;

static int standby_main(void *arg)
{
    standby_arg *a = arg;
    a->rc = w2l_pipeline_new(a->c, &a->p, &a->err);
    atomic_store(&a->done_ms, wall_ms());
    return 0;
}

static w2l_state_holder holder_now(const char *uri, w2l_conf *c)
{
    w2l_state *r = NULL;
    w2l_state_holder h;
    memset(&h, 0, sizeof h);
    ck_assert_ok(w2l_state_open(uri, c, &r, &err), err);
    w2l_rc rc = w2l_state_holder_get(r, &h, &err);
    ck_assert_msg(rc == W2L_OK || rc == W2L_NOTFOUND, "%s", err.msg);
    w2l_state_close(r);
    return h;
}

/* A second pipeline of the job with ha.standby waits while the first renews its lease
 * (longer than the lease itself), takes the store over within two leases once the first
 * ends, restores its checkpoint and goes on; when a third process then takes the lease
 * over, the renewal fences it: the pipeline fails with W2L_BUSY naming the new holder,
 * and the lake holds every row once. */
START_TEST(standby_takes_over_and_is_fenced_in_turn)
{
    memset(expect_rows, 0, sizeof expect_rows);
    memset(expect_sum, 0, sizeof expect_sum);
    fault_fileio_register(); /* a file IO that is not "local": the store is leased */
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "ha.lease-timeout", "1s", &err), err);
    ck_assert_ok(w2l_conf_set(c, "ha.renew-interval", "100ms", &err), err);
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s", statedir);
    w2l_pipeline *a;
    ck_assert_ok(w2l_conf_set(c, "job-id", "job-a", &err), err);
    ck_assert_ok(w2l_pipeline_new(c, &a, &err), err);
    push_rows(a, 0, 100, 50);
    ck_assert_ok(w2l_pipeline_checkpoint(a, 1, NULL, &err), err);
    w2l_state_holder h = holder_now(uri, c);
    ck_assert_uint_eq(h.epoch, 1);
    /* the standby */
    standby_arg sb;
    memset(&sb, 0, sizeof sb);
    sb.c = w2l_conf_dup(c);
    ck_assert_ok(w2l_conf_set(sb.c, "ha.standby", "true", &err), err);
    thrd_t t;
    ck_assert_int_eq(thrd_create(&t, standby_main, &sb), thrd_success);
    /* a renews: its lease ends ever later, past three leases from now, and b waits */
    int64_t began = wall_ms(), deadline = began + 30000;
    while ((h = holder_now(uri, c)).expires_ms < began + 3000 && wall_ms() < deadline)
        nap_ms(20);
    ck_assert_msg(h.expires_ms >= began + 3000, "the lease was not renewed: %lld",
                  (long long)(h.expires_ms - began));
    ck_assert_uint_eq(h.epoch, 1);
    ck_assert_int_eq(atomic_load(&sb.done_ms), 0);
    /* a ends (its lease goes with it): b takes the store over */
    ck_assert_ok(w2l_pipeline_finish(a, &err), err);
    int64_t ended = wall_ms();
    w2l_pipeline_free(a);
    while (!atomic_load(&sb.done_ms) && wall_ms() < ended + 30000) nap_ms(5);
    ck_assert_int_eq(thrd_join(t, NULL), thrd_success);
    ck_assert_ok(sb.rc, sb.err);
    ck_assert_msg(atomic_load(&sb.done_ms) - ended < 2000, "took over after %lld ms",
                  (long long)(atomic_load(&sb.done_ms) - ended));
    h = holder_now(uri, c);
    ck_assert_uint_eq(h.epoch, 2);
    w2l_pipeline *b = sb.p;
    push_rows(b, 100, 200, 50);
    ck_assert_ok(w2l_pipeline_checkpoint(b, 1, NULL, &err), err);
    assert_lake_equals_expected();
    /* another host's process takes the lease over: b's renewal fences it */
    char rec[600], path[700];
    snprintf(rec, sizeof rec,
             "{\"job\":\"job-c\",\"host\":\"host-c\",\"pid\":77,\"since-ms\":1000,"
             "\"expires-ms\":%lld,\"version\":\"0.1.0\",\"epoch\":9}",
             (long long)(wall_ms() + 600000));
    snprintf(path, sizeof path, "%s/LEASE", statedir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(rec, f);
    fclose(f);
    w2l_pipeline_info pi;
    int64_t fenced_at = wall_ms();
    do {
        ck_assert_ok(w2l_pipeline_stats(b, &pi, sizeof pi, &err), err);
        if (!pi.failed) nap_ms(5);
    } while (!pi.failed && wall_ms() < fenced_at + 30000);
    ck_assert_msg(pi.failed, "not fenced");
    ck_assert_int_eq(w2l_pipeline_finish(b, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "host-c") &&
                      strstr(err.msg, "epoch 9"),
                  "%s", err.msg);
    w2l_pipeline_free(b);
    ck_assert_uint_eq(holder_now(uri, c).epoch, 9); /* left to its holder */
    assert_lake_equals_expected();
    w2l_conf_free(sb.c);
    w2l_conf_free(c);
}
END_TEST

/* A standby of a store on a local disk waits on the lock file, and takes it once the
 * holder's lock is gone. */
START_TEST(standby_waits_on_a_lock_file)
{
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "ha.renew-interval", "100ms", &err), err);
    w2l_pipeline *a;
    ck_assert_ok(w2l_pipeline_new(c, &a, &err), err);
    w2l_pipeline *b = NULL;
    ck_assert_int_eq(w2l_pipeline_new(c, &b, &err), W2L_BUSY); /* without ha.standby */
    ck_assert_msg(strstr(err.msg, "in use by job"), "%s", err.msg);
    standby_arg sb;
    memset(&sb, 0, sizeof sb);
    sb.c = w2l_conf_dup(c);
    ck_assert_ok(w2l_conf_set(sb.c, "ha.standby", "true", &err), err);
    thrd_t t;
    ck_assert_int_eq(thrd_create(&t, standby_main, &sb), thrd_success);
    ck_assert_ok(w2l_pipeline_finish(a, &err), err);
    w2l_pipeline_free(a);
    int64_t ended = wall_ms();
    while (!atomic_load(&sb.done_ms) && wall_ms() < ended + 30000) nap_ms(5);
    ck_assert_int_eq(thrd_join(t, NULL), thrd_success);
    ck_assert_ok(sb.rc, sb.err);
    ck_assert_ok(w2l_pipeline_finish(sb.p, &err), err);
    w2l_pipeline_free(sb.p);
    w2l_conf_free(sb.c);
    w2l_conf_free(c);
}
END_TEST

Suite *suite_pipeline(void)
{
    Suite *s = suite_create("pipeline");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_loop_test(basic, push_api_exactly_once_with_parallel_operators, 0, 2);
    tcase_add_test(basic, checkpoint_waits_for_commit);
    tcase_add_test(basic, standby_takes_over_and_is_fenced_in_turn);
    tcase_add_test(basic, standby_waits_on_a_lock_file);
    tcase_add_test(basic, commit_lag_counts_from_the_oldest_uncommitted_change);
    tcase_add_test(basic, unknown_operator_is_a_config_error);
    tcase_add_test(basic, emitter_batches_by_table_and_validates);
    tcase_add_test(basic, emitter_keeps_a_groups_order);
    tcase_add_test(basic, emitter_batches_outlive_it);
    tcase_add_test(basic, source_hears_each_committed_checkpoint_once);
    tcase_set_timeout(basic, 60);
    suite_add_tcase(s, basic);
    TCase *faults = tcase_create("faults");
    tcase_add_checked_fixture(faults, setup, teardown);
    tcase_add_test(faults, failed_commit_stops_job_and_recover_commits_once);
    tcase_add_test(faults, source_never_hears_a_failed_commit);
    tcase_set_timeout(faults, 60);
    suite_add_tcase(s, faults);
    return s;
}
