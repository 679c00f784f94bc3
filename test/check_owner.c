/*
 * lib/pipeline/owner.c and table_ops.c, the one owner of each table, through the push API
 * of a pipeline with the built-in operators and the lake API to read what it wrote:
 *   - a DROP while a commit of the same table is prepared (same checkpoint, and the
 *     checkpoint before still committing): the table stays dropped;
 *   - a CREATE of a dropped name (other columns) while the old table's files are in
 *     flight: the new table holds only its own rows and schema;
 *   - RENAME in both directions, and a swap through a third name, with rows around each;
 *     ALTER TABLE ... RENAME TO after what the new name had queued; TRUNCATE then RENAME
 *     in one checkpoint;
 *   - the same statement again after the table changed (a binlog's whole-second times)
 *     is applied, a statement delivered twice in a row once;
 *   - a crash after statements the handler applied to its copy but before their
 *     checkpoint: nothing reached the lake, and the replay applies each statement once;
 *   - no commit inside the pipeline ever loses a race against another one of it.
 * Each runs with one and with two committers (and two writers).
 * And table claims (table_claim.c, one job per table): the owner by snapshot, creator,
 * other writers' snapshots and member tags, job.adopt-tables, the cache; two jobs on one
 * warehouse: the second refused naming both (nothing of the table written), a hand-over
 * with the override, the first then refused at its commit with its rows kept in its
 * state, and committed by its restart that adopts the table back; a compaction between
 * changes no owner.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/owner.h"
#include "support/support.h"

static char wh[600];
static w2l_error err;
static w2l_schema *s_ivn, *s_ix; /* (id long key, v string, n int); (id long key, x string) */
static atomic_int races;         /* log lines of a commit that lost a race */

static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque, (void)level;
    if (getenv("W2L_TEST_LOG")) fprintf(stderr, "%s\n", line);
    if (strstr(line, "lost a race") || strstr(line, "committed first")) atomic_fetch_add(&races, 1);
}

static w2l_schema *mk(int with_n)
{
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    if (with_n) {
        ck_assert_ok(w2l_schema_add_field(s, 2, "v", (w2l_type){ W2L_TYPE_STRING, 0, 0 }, 0, &err),
                     err);
        ck_assert_ok(w2l_schema_add_field(s, 3, "n", (w2l_type){W2L_TYPE_INT, 0, 0}, 0, &err), err);
    } else {
        ck_assert_ok(w2l_schema_add_field(s, 2, "x", (w2l_type){ W2L_TYPE_STRING, 0, 0 }, 0, &err),
                     err);
    }
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(s, &id, 1, &err), err);
    return s;
}

static void setup(void)
{
    snprintf(wh, sizeof wh, "%s", tmpdir_make("owner"));
    w2l_error_clear(&err);
    s_ivn = mk(1);
    s_ix = mk(0);
    atomic_store(&races, 0);
    w2l_log_set_callback(on_log, NULL);
    if (getenv("W2L_TEST_LOG")) w2l_log_set_level(W2L_LOG_DEBUG);
}

static void teardown(void)
{
    w2l_log_set_callback(NULL, NULL);
    ck_assert_int_eq(atomic_load(&races), 0);
    w2l_schema_unref(s_ivn);
    w2l_schema_unref(s_ix);
    tmpdir_remove(wh);
}

static w2l_conf *make_conf(unsigned committers)
{
    w2l_conf *c = w2l_conf_new();
    char v[16];
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "owner-job", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    snprintf(v, sizeof v, "%u", committers);
    ck_assert_ok(w2l_conf_set(c, "committer-parallelism", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "parallelism", v, &err), err);
    return c;
}

static w2l_pipeline *start(const w2l_conf *c)
{
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    return p;
}

static int txn;

static void commit(w2l_pipeline *p)
{
    char pos[32];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%d}", ++txn);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), pos, (size_t)n, &err), err);
}

/* One row of table: (id, v, n) or, with schema s_ix, (id, x). */
static void put(w2l_pipeline *p, const char *table, w2l_schema *s, long id, const char *text)
{
    w2l_value row[3];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    row[1].v.bytes.ptr = text;
    row[1].v.bytes.len = strlen(text);
    row[2].v.i32 = (int32_t)id * 10;
    w2l_change c = {"db", table, s, W2L_OP_INSERT, row, w2l_schema_field_count(s), NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

static void rows(w2l_pipeline *p, const char *table, w2l_schema *s, long from, long to,
                 const char *text)
{
    for (long i = from; i <= to; i++) put(p, table, s, i, text);
    commit(p);
}

static void ddl(w2l_pipeline *p, const char *sql)
{
    w2l_ddl d = {"db", sql, strlen(sql), NULL, NULL, 0};
    ck_assert_ok(w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err), err);
    commit(p);
}

static void checkpoint(w2l_pipeline *p, int wait)
{
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, wait, &id, &err), err);
}

static void finish(w2l_pipeline *p)
{
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
}

/* ---- reading the lake ---- */

typedef struct text {
    char s[4096];
    size_t n;
    int rows;
} text;

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    text *t = ctx;
    char line[256];
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char v[64];
        w2l_value_format(w2l_schema_field(s, i)->type, &row[i], v, sizeof v);
        o += (size_t)snprintf(line + o, sizeof line - o, "%s%s=%s", i ? " " : "",
                              w2l_schema_field(s, i)->name, v);
    }
    ck_assert_uint_lt(t->n + o + 2, sizeof t->s);
    t->n += (size_t)snprintf(t->s + t->n, sizeof t->s - t->n, "%s;", line);
    t->rows++;
    return 0;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of db.<table>, "col=v ..." sorted and joined by ';'; "(none)" when the table
 * does not exist. */
static const char *table_rows(const char *table)
{
    static char out[4096];
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    text t = {{0}, 0, 0};
    w2l_rc rc = w2l_lake_scan(lake, "db", table, -1, on_row, &t, &err);
    w2l_lake_close(lake);
    w2l_conf_free(c);
    if (rc == W2L_NOTFOUND) return "(none)";
    ck_assert_ok(rc, err);
    char *lines[64];
    int n = 0;
    for (char *q = strtok(t.s, ";"); q && n < 64; q = strtok(NULL, ";")) lines[n++] = q;
    qsort(lines, (size_t)n, sizeof *lines, cmp_line);
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? ";" : "", lines[i]);
    return out;
}

#define ck_rows(table, want) \
    do { \
        const char *got_ = table_rows(table); \
        ck_assert_msg(strcmp(got_, want) == 0, "db.%s:\n got  %s\n want %s", table, got_, want); \
    } while (0)

/* ---- tests (_i: 1 or 2 committers) ---- */

START_TEST(drop_while_a_commit_is_prepared)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    /* the same checkpoint: rows, then the drop */
    rows(p, "t", s_ivn, 1, 3, "a");
    ddl(p, "DROP TABLE t");
    /* the checkpoint before still committing while the drop comes */
    rows(p, "u", s_ivn, 1, 3, "b");
    checkpoint(p, 0);
    ddl(p, "DROP TABLE u");
    rows(p, "w", s_ivn, 1, 1, "c");
    checkpoint(p, 1);
    /* rows of a dropped name without a CREATE make a new table of them alone */
    rows(p, "u", s_ivn, 9, 9, "new");
    finish(p);
    ck_rows("t", "(none)");
    ck_rows("u", "id=9 v=new n=90");
    ck_rows("w", "id=1 v=c n=10");
    w2l_conf_free(c);
}
END_TEST

START_TEST(create_of_a_dropped_name_gets_only_its_own)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(9), n INT)");
    rows(p, "t", s_ivn, 1, 2, "old");
    checkpoint(p, 1);
    rows(p, "t", s_ivn, 3, 4, "old"); /* in flight: not committed yet */
    checkpoint(p, 0);
    rows(p, "t", s_ivn, 5, 5, "old");
    ddl(p, "DROP TABLE t");
    ddl(p, "CREATE TABLE t (id BIGINT PRIMARY KEY, x VARCHAR(9))");
    rows(p, "t", s_ix, 1, 1, "new"); /* the same key as an old row */
    rows(p, "t", s_ix, 7, 7, "new");
    /* and once more within one checkpoint, back to the first columns */
    rows(p, "t2", s_ivn, 1, 1, "x");
    ddl(p, "DROP TABLE t2");
    ddl(p, "CREATE TABLE t2 (id BIGINT PRIMARY KEY, x VARCHAR(9))");
    rows(p, "t2", s_ix, 2, 2, "y");
    finish(p);
    ck_rows("t", "id=1 x=new;id=7 x=new");
    ck_rows("t2", "id=2 x=y");
    w2l_conf_free(c);
}
END_TEST

START_TEST(rename_both_ways)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    rows(p, "a", s_ivn, 1, 2, "a0");
    checkpoint(p, 0);
    ddl(p, "RENAME TABLE a TO b");
    rows(p, "b", s_ivn, 3, 3, "b1");
    checkpoint(p, 0);
    rows(p, "b", s_ivn, 4, 4, "b2");
    ddl(p, "RENAME TABLE b TO a");
    rows(p, "a", s_ivn, 5, 5, "a3");
    /* a swap through a third name, in one checkpoint */
    rows(p, "c", s_ix, 1, 1, "c");
    ddl(p, "RENAME TABLE a TO tmp");
    ddl(p, "RENAME TABLE c TO a");
    ddl(p, "RENAME TABLE tmp TO c");
    rows(p, "a", s_ix, 2, 2, "c2");
    /* onto a dropped name */
    rows(p, "d", s_ivn, 1, 1, "d");
    checkpoint(p, 0);
    ddl(p, "DROP TABLE d");
    rows(p, "e", s_ivn, 8, 8, "e");
    ddl(p, "RENAME TABLE e TO d");
    finish(p);
    ck_rows("a", "id=1 x=c;id=2 x=c2");
    ck_rows("c", "id=1 v=a0 n=10;id=2 v=a0 n=20;id=3 v=b1 n=30;id=4 v=b2 n=40;id=5 v=a3 n=50");
    ck_rows("b", "(none)");
    ck_rows("tmp", "(none)");
    ck_rows("d", "id=8 v=e n=80");
    ck_rows("e", "(none)");
    w2l_conf_free(c);
}
END_TEST

static int on_ckpt(void *ctx, const w2l_checkpoint_info *info)
{
    if (!info->ns && info->source_position)
        sscanf(info->source_position, "{\"txn\":%d}", (int *)ctx);
    return 1;
}

/* The transaction the newest sealed checkpoint resumes after. */
static int restored_txn(void)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    int t = -1;
    ck_assert_ok(w2l_lake_checkpoints(lake, on_ckpt, &t, &err), err);
    w2l_lake_close(lake);
    w2l_conf_free(c);
    return t;
}

/* A DDL statement with a source time (a binlog's has whole seconds). */
static void ddl_at(w2l_pipeline *p, const char *sql, int64_t ts_ms)
{
    w2l_ddl d = {"db", sql, strlen(sql), NULL, NULL, ts_ms};
    ck_assert_ok(w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err), err);
    commit(p);
}

START_TEST(the_same_statement_again_after_a_change_is_applied)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    rows(p, "t", s_ivn, 1, 1, "a");
    ddl_at(p, "TRUNCATE TABLE t", 1000);
    rows(p, "t", s_ivn, 2, 2, "b");
    ddl_at(p, "TRUNCATE TABLE t", 1000); /* the same second: a new statement all the same */
    ddl_at(p, "TRUNCATE TABLE t", 1000); /* delivered twice in a row: once */
    rows(p, "t", s_ivn, 3, 3, "c");
    finish(p);
    ck_rows("t", "id=3 v=c n=30");
    w2l_conf_free(c);
}
END_TEST

START_TEST(alter_rename_to_waits_for_the_new_names_queue)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE a (id BIGINT PRIMARY KEY, v VARCHAR(9), n INT)");
    rows(p, "a", s_ivn, 1, 1, "a");
    ddl(p, "CREATE TABLE b (id BIGINT PRIMARY KEY, x VARCHAR(9))");
    rows(p, "b", s_ix, 2, 2, "b");
    ddl(p, "ALTER TABLE a RENAME TO c");
    ddl(p, "DROP TABLE c");
    ddl(p, "ALTER TABLE b RENAME TO c");
    rows(p, "c", s_ix, 3, 3, "c");
    finish(p);
    ck_rows("a", "(none)");
    ck_rows("b", "(none)");
    ck_rows("c", "id=2 x=b;id=3 x=c");
    w2l_conf_free(c);
}
END_TEST

START_TEST(truncate_then_rename_in_one_checkpoint)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    rows(p, "a", s_ivn, 1, 2, "old");
    checkpoint(p, 1);
    rows(p, "a", s_ivn, 3, 3, "old");
    ddl(p, "TRUNCATE TABLE a");
    rows(p, "a", s_ivn, 4, 4, "kept");
    ddl(p, "RENAME TABLE a TO b");
    rows(p, "b", s_ivn, 5, 5, "after");
    finish(p);
    ck_rows("a", "(none)");
    ck_rows("b", "id=4 v=kept n=40;id=5 v=after n=50");
    w2l_conf_free(c);
}
END_TEST

/* The statements after the last checkpoint, as the source replays them after a crash. */
static void after_checkpoint(w2l_pipeline *p)
{
    ddl(p, "ALTER TABLE t DROP COLUMN n");
    ddl(p, "ALTER TABLE t ADD COLUMN x VARCHAR(9)");
    ddl(p, "DROP TABLE t");
    ddl(p, "CREATE TABLE t (id BIGINT PRIMARY KEY, x VARCHAR(9))");
    rows(p, "t", s_ix, 5, 5, "five");
    ddl(p, "RENAME TABLE u TO v");
}

START_TEST(crash_before_the_checkpoint_then_replay_once)
{
    w2l_conf *c = make_conf((unsigned)_i);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(9), n INT)");
    rows(p, "t", s_ivn, 1, 3, "a");
    rows(p, "u", s_ivn, 1, 1, "u");
    checkpoint(p, 1);
    int saved = txn;
    after_checkpoint(p);
    checkpoint(p, 0); /* placed, maybe sealed and committed, maybe not: the crash comes now */
    w2l_pipeline_free(p);
    /* whatever reached the lake is whole: either the old state or the new one */
    const char *t = table_rows("t");
    ck_assert_msg(!strcmp(t, "id=1 v=a n=10;id=2 v=a n=20;id=3 v=a n=30") ||
                      !strcmp(t, "id=5 x=five"),
                  "t after the crash: %s", t);
    /* the restart replays the source from the restored checkpoint's position */
    p = start(c);
    if (restored_txn() == saved) {
        txn = saved;
        after_checkpoint(p);
    }
    finish(p);
    ck_rows("t", "id=5 x=five");
    ck_rows("u", "(none)");
    ck_rows("v", "id=1 v=u n=10");
    w2l_conf_free(c);
}
END_TEST

/* ---- table claims (table_claim.c) ---- */

/* Metadata of a table with snapshots 1..n, snapshot i (parent i-1) carrying job[i-1] as
 * w2l.job-id unless it is NULL (another writer's); the creator property unless NULL. */
static w2l__ice_meta *claim_meta(const char *uuid, const char *creator, const char *const *job,
                                 int n)
{
    char mj[8192];
    size_t o = 0;
    o += (size_t)snprintf(mj + o, sizeof mj - o,
                          "{\"format-version\":2,\"table-uuid\":\"%s\",\"location\":\"/x\","
                          "\"last-sequence-number\":%d,\"last-updated-ms\":1,"
                          "\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[{\"type\":"
                          "\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
                          "\"required\":true,\"type\":\"long\"}]}],\"default-spec-id\":0,"
                          "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
                          "\"last-partition-id\":999,\"default-sort-order-id\":0,"
                          "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{",
                          uuid, n);
    if (creator)
        o += (size_t)snprintf(mj + o, sizeof mj - o, "\"%s\":\"%s\"", W2L_CLAIM_CREATOR_KEY,
                              creator);
    o += (size_t)snprintf(mj + o, sizeof mj - o, "},\"current-snapshot-id\":%d,\"snapshots\":[",
                          n ? n : -1);
    for (int i = 1; i <= n; i++) {
        char sum[200], parent[48] = "";
        if (job[i - 1])
            snprintf(sum, sizeof sum, ",\"w2l.job-id\":\"%s\",\"w2l.checkpoint-id\":\"%d\"",
                     job[i - 1], i);
        else snprintf(sum, sizeof sum, ",\"w2l.maintenance\":\"compact\"");
        if (i > 1) snprintf(parent, sizeof parent, "\"parent-snapshot-id\":%d,", i - 1);
        o += (size_t)snprintf(mj + o, sizeof mj - o,
                              "%s{\"snapshot-id\":%d,%s\"sequence-number\":%d,"
                              "\"timestamp-ms\":%d000,\"manifest-list\":\"/x/m%d.avro\","
                              "\"schema-id\":0,\"summary\":{\"operation\":\"append\"%s}}",
                              i > 1 ? "," : "", i, parent, i, i, i, sum);
    }
    o += (size_t)snprintf(mj + o, sizeof mj - o, "],\"snapshot-log\":[],\"metadata-log\":[]}");
    ck_assert_uint_lt(o, sizeof mj);
    w2l__ice_meta *m;
    ck_assert_ok(w2l__ice_meta_parse(mj, o, &m, &err), err);
    return m;
}

static w2l__claims *claims_of(const char *job, const char *adopt)
{
    w2l_conf *c = w2l_conf_new();
    if (adopt) ck_assert_ok(w2l_conf_set(c, "job.adopt-tables", adopt, &err), err);
    w2l__claims *cl;
    ck_assert_ok(w2l__claims_new(c, job, &cl, &err), err);
    w2l_conf_free(c);
    return cl;
}

#define ck_busy(rc, ...)                                                                           \
    do {                                                                                           \
        ck_assert_int_eq((rc), W2L_BUSY);                                                          \
        const char *words_[] = {__VA_ARGS__};                                                      \
        for (size_t k_ = 0; k_ < sizeof words_ / sizeof *words_; k_++)                             \
            ck_assert_msg(strstr(err.msg, words_[k_]), "'%s' names %s", err.msg, words_[k_]);      \
    } while (0)

START_TEST(claims_owner_by_snapshot_creator_and_members)
{
    /* the newest snapshot with a job id decides; another writer's on top changes nothing */
    const char *j1[] = {"job-a", "job-b", NULL, NULL};
    w2l__ice_meta *m = claim_meta("u-1", "job-a", j1, 4);
    ck_assert_str_eq(w2l__claims_owner(m), "job-b");
    w2l__claims *a = claims_of("job-a", NULL), *b = claims_of("job-b", NULL);
    ck_busy(w2l__claims_check(a, "db", "t", m, &err), "db.t", "\"job-a\"", "\"job-b\"",
            "--adopt-tables db.t", "checkpoint 2");
    ck_assert_ok(w2l__claims_check(b, "db", "t", m, &err), err);
    w2l__ice_meta_free(m);
    /* no snapshot of any job: the creator; none at all: nobody */
    const char *j2[] = {NULL};
    m = claim_meta("u-2", "job-b", j2, 1);
    ck_assert_str_eq(w2l__claims_owner(m), "job-b");
    ck_busy(w2l__claims_check(a, "db", "t2", m, &err), "\"job-b\"", "which created it");
    w2l__ice_meta_free(m);
    m = claim_meta("u-3", NULL, j2, 0);
    ck_assert_ptr_null(w2l__claims_owner(m));
    ck_assert_ok(w2l__claims_check(a, "db", "t3", m, &err), err);
    ck_assert_ok(w2l__claims_check(b, "db", "t3", m, &err), err);
    w2l__ice_meta_free(m);
    /* a job of older versions (no creator property) is the owner of its snapshots */
    const char *j3[] = {"job-a"};
    m = claim_meta("u-4", NULL, j3, 1);
    ck_assert_ok(w2l__claims_check(a, "db", "t4", m, &err), err);
    w2l__ice_meta_free(m);
    /* the members of a consumer group are one job; a tag that is not one is a name */
    ck_assert(w2l__claims_same_job("w2l-1f-m0123456789ab", "w2l-1f-mba9876543210"));
    ck_assert(w2l__claims_same_job("w2l-1f-m0123456789ab", "w2l-1f"));
    ck_assert(!w2l__claims_same_job("w2l-1f-m0123456789ab", "w2l-1e-m0123456789ab"));
    ck_assert(!w2l__claims_same_job("w2l-1f-m0123456789aX", "w2l-1f"));
    ck_assert(!w2l__claims_same_job("job-a", "job-b"));
    /* NULL claims or metadata: nothing to check */
    ck_assert_ok(w2l__claims_check(NULL, "db", "t", NULL, &err), err);
    ck_assert_ok(w2l__claims_check(a, "db", "t", NULL, &err), err);
    w2l__claims_free(a);
    w2l__claims_free(b);
}
END_TEST

START_TEST(claims_adopt_list_and_cache)
{
    const char *j[] = {"job-a", "job-a", "job-b", "job-b"};
    w2l__ice_meta *m = claim_meta("u-1", NULL, j, 4);
    w2l__claims *c = claims_of("job-a", " db.x , db.t");
    ck_assert_ok(w2l__claims_check(c, "db", "t", m, &err), err); /* adopted */
    ck_busy(w2l__claims_check(c, "db", "u", m, &err), "db.u");
    ck_busy(w2l__claims_check(c, "db2", "t", m, &err), "db2.t");
    w2l__claims_free(c);
    c = claims_of("job-a", "db2.*");
    ck_assert_ok(w2l__claims_check(c, "db2", "anything", m, &err), err);
    ck_busy(w2l__claims_check(c, "db", "t", m, &err), "db.t");
    w2l__claims_free(c);
    c = claims_of("job-a", "*");
    ck_assert_ok(w2l__claims_check(c, "any", "thing", m, &err), err);
    w2l__claims_free(c);
    /* malformed entries are configuration errors */
    const char *bad[] = {"t", "db.", ".t", "db.t,x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        w2l_conf *cf = w2l_conf_new();
        ck_assert_ok(w2l_conf_set(cf, "job.adopt-tables", bad[i], &err), err);
        w2l__claims *x = NULL;
        ck_assert_int_eq(w2l__claims_new(cf, "job-a", &x, &err), W2L_CONFIG);
        ck_assert_ptr_null(x);
        ck_assert_msg(strstr(err.msg, "job.adopt-tables"), "%s", err.msg);
        w2l_conf_free(cf);
    }
    w2l__ice_meta_free(m);
    /* the verdict is kept per table incarnation and snapshot: the table moving on under
     * this job passes, another job's snapshot on top is seen, a new uuid is judged anew */
    c = claims_of("job-a", NULL);
    const char *k1[] = {"job-b", "job-a"};
    m = claim_meta("u-5", NULL, k1, 2);
    ck_assert_ok(w2l__claims_check(c, "db", "t", m, &err), err);
    ck_assert_ok(w2l__claims_check(c, "db", "t", m, &err), err);
    w2l__ice_meta_free(m);
    const char *k2[] = {"job-b", "job-a", NULL, "job-a"};
    m = claim_meta("u-5", NULL, k2, 4);
    ck_assert_ok(w2l__claims_check(c, "db", "t", m, &err), err);
    w2l__ice_meta_free(m);
    const char *k3[] = {"job-b", "job-a", NULL, "job-a", "job-b"};
    m = claim_meta("u-5", NULL, k3, 5);
    ck_busy(w2l__claims_check(c, "db", "t", m, &err), "\"job-b\"", "checkpoint 5");
    w2l__ice_meta_free(m);
    const char *k4[] = {"job-a"};
    m = claim_meta("u-6", NULL, k4, 1);
    ck_assert_ok(w2l__claims_check(c, "db", "t", m, &err), err);
    w2l__ice_meta_free(m);
    w2l__claims_free(c);
}
END_TEST

/* A conf of job `job` on the test's warehouse, its checkpoint state in dir (one job per
 * state store), adopting adopt unless NULL. */
static w2l_conf *job_conf(const char *job, const char *dir, const char *adopt, unsigned n)
{
    w2l_conf *c = make_conf(n);
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s", dir);
    ck_assert_ok(w2l_conf_set(c, "job-id", job, &err), err);
    ck_assert_ok(w2l_conf_set(c, "state", uri, &err), err);
    if (adopt) ck_assert_ok(w2l_conf_set(c, "job.adopt-tables", adopt, &err), err);
    return c;
}

/* A pipeline that must fail with W2L_BUSY: its emits may see the failure first. */
static w2l_rc finish_refused(w2l_pipeline *p)
{
    w2l_rc rc = w2l_pipeline_finish(p, &err);
    w2l_pipeline_free(p);
    return rc;
}

START_TEST(claims_two_jobs_on_one_warehouse)
{
    char sa[600], sb[600];
    snprintf(sa, sizeof sa, "%s", tmpdir_make("claim-a"));
    snprintf(sb, sizeof sb, "%s", tmpdir_make("claim-b"));
    unsigned n = (unsigned)_i;
    w2l_conf *ca = job_conf("job-a", sa, NULL, n), *cb = job_conf("job-b", sb, NULL, n);
    w2l_pipeline *a = start(ca);
    rows(a, "t", s_ivn, 1, 2, "a");
    rows(a, "other", s_ivn, 1, 1, "o");
    checkpoint(a, 1);
    /* a second job: refused at the table's first load, before any file of it */
    w2l_pipeline *b = start(cb);
    put(b, "t", s_ivn, 10, "b");
    w2l_emit_commit(w2l_pipeline_emitter(b), "{\"txn\":1}", 9, NULL);
    ck_busy(finish_refused(b), "db.t", "\"job-a\"", "\"job-b\"", "--adopt-tables db.t");
    ck_rows("t", "id=1 v=a n=10;id=2 v=a n=20");
    /* handed over: B runs, and owns the table from its commit on */
    w2l_conf *cb2 = job_conf("job-b", sb, "db.t", n);
    b = start(cb2);
    rows(b, "t", s_ivn, 10, 10, "b");
    finish(b);
    ck_rows("t", "id=1 v=a n=10;id=10 v=b n=100;id=2 v=a n=20");
    /* A, still running, is refused at its next commit of the table; its other table
     * commits, and its rows of t stay in its state */
    rows(a, "t", s_ivn, 3, 3, "a");
    rows(a, "other", s_ivn, 2, 2, "o");
    ck_busy(finish_refused(a), "db.t", "\"job-a\"", "\"job-b\"", "stay in this job's state");
    ck_rows("t", "id=1 v=a n=10;id=10 v=b n=100;id=2 v=a n=20");
    ck_rows("other", "id=1 v=o n=10;id=2 v=o n=20");
    /* A again, unchanged: refused at once (the restored checkpoint holds t's rows) */
    a = start(ca);
    ck_busy(finish_refused(a), "db.t", "\"job-b\"");
    /* A taking it back: the rows it kept land */
    w2l_conf *ca2 = job_conf("job-a", sa, "db.*", n);
    a = start(ca2);
    finish(a);
    ck_rows("t", "id=1 v=a n=10;id=10 v=b n=100;id=2 v=a n=20;id=3 v=a n=30");
    /* and B, unchanged, is refused */
    b = start(cb);
    put(b, "t", s_ivn, 11, "b");
    w2l_emit_commit(w2l_pipeline_emitter(b), "{\"txn\":2}", 9, NULL);
    ck_busy(finish_refused(b), "db.t", "\"job-a\"", "\"job-b\"");
    atomic_store(&races, 0); /* A's commit lost its race to B, another process: expected */
    w2l_conf_free(ca), w2l_conf_free(ca2), w2l_conf_free(cb), w2l_conf_free(cb2);
    tmpdir_remove(sa);
    tmpdir_remove(sb);
}
END_TEST

static int on_compact(void *ctx, const w2l_maintain_report *r)
{
    if (!strcmp(r->action, "compact") && !r->skipped) *(uint64_t *)ctx += r->files_in;
    return 0;
}

START_TEST(claims_a_compaction_changes_no_owner)
{
    char sa[600], sb[600];
    snprintf(sa, sizeof sa, "%s", tmpdir_make("claim-a"));
    snprintf(sb, sizeof sb, "%s", tmpdir_make("claim-b"));
    w2l_conf *ca = job_conf("job-a", sa, NULL, 1), *cb = job_conf("job-b", sb, NULL, 1);
    w2l_pipeline *a = start(ca);
    rows(a, "t", s_ivn, 1, 1, "a");
    checkpoint(a, 1);
    rows(a, "t", s_ivn, 2, 2, "a");
    finish(a);
    /* a snapshot without w2l.job-id on top (as another engine's compaction) */
    w2l_conf *cm = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(cm, "warehouse", wh, &err), err);
    w2l_maintain_options o = {W2L_MAINTAIN_COMPACT, "db", "t", 0, 1};
    uint64_t in = 0;
    ck_assert_ok(w2l_maintain(cm, &o, on_compact, &in, &err), err);
    ck_assert_uint_ge(in, 2);
    w2l_conf_free(cm);
    w2l_pipeline *b = start(cb);
    put(b, "t", s_ivn, 10, "b");
    w2l_emit_commit(w2l_pipeline_emitter(b), "{\"txn\":1}", 9, NULL);
    ck_busy(finish_refused(b), "db.t", "\"job-a\"", "checkpoint 2");
    /* its owner goes on */
    a = start(ca);
    rows(a, "t", s_ivn, 3, 3, "a");
    finish(a);
    ck_rows("t", "id=1 v=a n=10;id=2 v=a n=20;id=3 v=a n=30");
    w2l_conf_free(ca), w2l_conf_free(cb);
    tmpdir_remove(sa);
    tmpdir_remove(sb);
}
END_TEST

Suite *suite_owner(void)
{
    Suite *s = suite_create("owner");
    TCase *tc = tcase_create("owner");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, drop_while_a_commit_is_prepared, 1, 3);
    tcase_add_loop_test(tc, create_of_a_dropped_name_gets_only_its_own, 1, 3);
    tcase_add_loop_test(tc, rename_both_ways, 1, 3);
    tcase_add_loop_test(tc, crash_before_the_checkpoint_then_replay_once, 1, 3);
    tcase_add_loop_test(tc, the_same_statement_again_after_a_change_is_applied, 1, 3);
    tcase_add_loop_test(tc, alter_rename_to_waits_for_the_new_names_queue, 1, 3);
    tcase_add_loop_test(tc, truncate_then_rename_in_one_checkpoint, 1, 3);
    suite_add_tcase(s, tc);
    tc = tcase_create("claims");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, claims_owner_by_snapshot_creator_and_members);
    tcase_add_test(tc, claims_adopt_list_and_cache);
    tcase_add_loop_test(tc, claims_two_jobs_on_one_warehouse, 1, 3);
    tcase_add_test(tc, claims_a_compaction_changes_no_owner);
    suite_add_tcase(s, tc);
    return s;
}
