/*
 * Table maintenance (lib/iceberg/maintain.c, lib/pipeline/maintenance.c, manifest merging in
 * snapshot.c), through the push API of a pipeline and w2l_maintain():
 *   - manifest merging: a table that took many commits lists a bounded number of
 *     manifests, and reads the rows of the model;
 *   - a pipeline with small thresholds compacts and expires by itself while upserts and
 *     deletes flow: the rows are the model's, live data and delete files and snapshots
 *     stay bounded, every file a retained snapshot reaches exists, and restore still finds
 *     the job's checkpoint;
 *   - a compaction planned before upserts of the same keys and committed after them: the
 *     upserts win, no deleted row comes back (the starting-sequence-number rule);
 *   - a compaction whose input changed (a TRUNCATE meanwhile) is dropped, its files
 *     removed;
 *   - orphan removal removes an old unreferenced file, keeps a young one and one that a
 *     sealed, uncommitted checkpoint holds;
 *   - a fault at every write of a maintenance commit leaves the table readable, with the
 *     model's rows, and a later run completes the work.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "support/support.h"
#include "iceberg/iceberg.h"
#include "parquet/parquet.h"

static char wh[600];
static w2l_error err;
static w2l_schema *sch; /* (id long key, v string) */

#define NKEYS 40
static char model[NKEYS][32]; /* "" = absent */

static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque, (void)level;
    if (getenv("W2L_TEST_LOG")) fprintf(stderr, "%s\n", line);
}

static void setup(void)
{
    snprintf(wh, sizeof wh, "%s", tmpdir_make("maint"));
    w2l_error_clear(&err);
    sch = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(sch, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(sch, 2, "v", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err), err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(sch, &id, 1, &err), err);
    memset(model, 0, sizeof model);
    w2l_log_set_callback(on_log, NULL);
    if (getenv("W2L_TEST_LOG")) w2l_log_set_level(W2L_LOG_DEBUG);
}

static void teardown(void)
{
    w2l_log_set_callback(NULL, NULL);
    w2l_log_set_level(W2L_LOG_WARN);
    w2l_schema_unref(sch);
    tmpdir_remove(wh);
}

static w2l_conf *base_conf(void)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "maint-job", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    return c;
}

/* A pipeline that compacts and expires at once: small thresholds, no waiting. */
static w2l_conf *eager_conf(void)
{
    w2l_conf *c = base_conf();
    static const char *const kv[][2] = {
        {"maintenance.compact-small-files", "4"}, {"maintenance.compact-delete-files", "4"},
        {"maintenance.compact-interval", "0"},    {"maintenance.max-snapshot-age", "0"},
        {"maintenance.min-snapshots", "3"},       {"maintenance.expire-every", "1"},
        {"maintenance.orphan-interval", "0"},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) ck_assert_ok(w2l_conf_set(c, kv[i][0], kv[i][1], &err), err);
    return c;
}

static int txn;

static void upsert(w2l_pipeline *p, long id, const char *v)
{
    w2l_value row[2];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    if (model[id][0]) { /* an update: the row before, then after */
        row[1].v.bytes.ptr = model[id];
        row[1].v.bytes.len = strlen(model[id]);
        w2l_change b = {"db", "t", sch, W2L_OP_UPDATE_BEFORE, row, 2, NULL, 0};
        ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &b, &err), err);
    }
    row[1].v.bytes.ptr = v;
    row[1].v.bytes.len = strlen(v);
    w2l_change c = {"db", "t", sch, model[id][0] ? W2L_OP_UPDATE_AFTER : W2L_OP_INSERT, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
    snprintf(model[id], sizeof model[id], "%s", v);
}

static void delete_row(w2l_pipeline *p, long id)
{
    if (!model[id][0]) return;
    w2l_value row[2];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    row[1].v.bytes.ptr = model[id];
    row[1].v.bytes.len = strlen(model[id]);
    w2l_change c = {"db", "t", sch, W2L_OP_DELETE, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
    model[id][0] = '\0';
}

static void commit(w2l_pipeline *p)
{
    char pos[32];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%d}", ++txn);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), pos, (size_t)n, &err), err);
}

static void checkpoint(w2l_pipeline *p)
{
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
}

/* One round of changes: a few upserts of overlapping keys and a delete. */
static void round_of_changes(w2l_pipeline *p, int r)
{
    char v[32];
    for (int k = 0; k < 5; k++) {
        long id = (r * 7 + k * 3) % NKEYS;
        snprintf(v, sizeof v, "r%d-k%d", r, k);
        upsert(p, id, v);
    }
    delete_row(p, (r * 11) % NKEYS);
    commit(p);
}

/* ---- reading the lake ---- */

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    (void)s, (void)n;
    char (*got)[32] = ctx;
    long id = (long)row[0].v.i64;
    ck_assert_int_ge(id, 0);
    ck_assert_int_lt(id, NKEYS);
    ck_assert_msg(got[id][0] == '\0', "row %ld read twice", id);
    snprintf(got[id], 32, "%.*s", (int)row[1].v.bytes.len, (const char *)row[1].v.bytes.ptr);
    return 0;
}

static void check_model(void)
{
    char got[NKEYS][32];
    memset(got, 0, sizeof got);
    w2l_conf *c = base_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    ck_assert_ok(w2l_lake_scan(lake, "db", "t", -1, on_row, got, &err), err);
    w2l_lake_close(lake);
    w2l_conf_free(c);
    for (int i = 0; i < NKEYS; i++)
        ck_assert_msg(strcmp(got[i], model[i]) == 0, "id %d: got '%s', want '%s'", i, got[i], model[i]);
}

static int exists_path(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static w2l__ice_table *load(w2l_catalog **cat, w2l_fileio **io)
{
    w2l_conf *c = base_conf();
    *io = NULL;
    ck_assert_ok(w2l__catalog_open_conf(c, io, cat, &err), err);
    w2l_conf_free(c);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_load(*cat, *io, "db", "t", &t, &err), err);
    return t;
}

static void unload(w2l__ice_table *t, w2l_catalog *cat, w2l_fileio *io)
{
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

static int64_t summary_i64(const w2l__ice_meta *m, const char *key)
{
    const w2l__ice_snapshot *s = w2l__ice_meta_snapshot(m, m->current_snapshot_id);
    ck_assert_ptr_nonnull(s);
    const char *v = w2l__ice_props_get(&s->summary, key);
    return v ? strtoll(v, NULL, 10) : 0;
}

static int exists(w2l_fileio *io, const char *p)
{
    int e = 0;
    if (strncmp(p, "file:", 5) == 0) p += strncmp(p, "file://", 7) == 0 ? 7 : 5;
    ck_assert_ok(w2l_fileio_exists(io, p, &e, &err), err);
    return e;
}

/* Every file every snapshot reaches exists; returns the manifests of the current one. */
static size_t check_reachable(void)
{
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    size_t current = 0;
    for (size_t i = 0; i < t->meta->nsnapshots; i++) {
        const w2l__ice_snapshot *s = &t->meta->snapshots[i];
        ck_assert_msg(exists(io, s->manifest_list), "snapshot %lld: list %s is gone", (long long)s->snapshot_id,
                      s->manifest_list);
        w2l__arena a;
        w2l__arena_init(&a, 1 << 14);
        w2l__ice_manifest *ml;
        size_t n;
        ck_assert_ok(w2l__ice_manifest_list_read(io, s->manifest_list, &a, &ml, &n, &err), err);
        if (s->snapshot_id == t->meta->current_snapshot_id) current = n;
        for (size_t k = 0; k < n; k++) {
            w2l__ice_entry *e;
            size_t ne;
            ck_assert_ok(w2l__ice_manifest_read(io, &ml[k], w2l__ice_meta_spec(t->meta, ml[k].spec_id), &a, &e, &ne, &err), err);
            for (size_t q = 0; q < ne; q++)
                if (e[q].status != W2L_ICE_DELETED)
                    ck_assert_msg(exists(io, e[q].file.path), "snapshot %lld: %s is gone", (long long)s->snapshot_id,
                                  e[q].file.path);
        }
        w2l__arena_release(&a);
        /* and it reads */
        w2l__ice_scan *sc;
        ck_assert_ok(w2l__ice_scan_plan(io, t->meta, s->snapshot_id, NULL, NULL, &sc, &err), err);
        w2l__ice_scan_free(sc);
    }
    unload(t, cat, io);
    return current;
}

static int on_metric(void *ctx, const w2l_table_metrics *m)
{
    w2l_table_metrics *out = ctx;
    if (strcmp(m->table, "t") == 0) *out = *m;
    return 0;
}

static w2l_table_metrics metrics(w2l_pipeline *p)
{
    w2l_table_metrics m;
    memset(&m, 0, sizeof m);
    ck_assert_ok(w2l_pipeline_metrics(p, on_metric, &m, &err), err);
    return m;
}

/* A compaction of t's current snapshot, with the default policy. */
static w2l__ice_compaction *prepare(w2l__ice_table *t)
{
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    w2l__pq_options pq;
    w2l__pq_options_default(&pq);
    w2l__ice_compaction *k = NULL;
    ck_assert_ok(w2l__ice_compact_prepare(t->io, t->meta, &pol, &pq, &k, &err), err);
    ck_assert_ptr_nonnull(k);
    return k;
}

/* ---- tests ---- */

START_TEST(merging_bounds_the_manifests)
{
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 70; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
    size_t manifests = check_reachable();
    /* data and delete manifests merge at 16 each */
    ck_assert_uint_le(manifests, 2 * W2L_ICE_MERGE_MIN_COUNT);
    ck_assert_uint_ge(manifests, 2);
}
END_TEST

START_TEST(a_pipeline_compacts_and_expires_by_itself)
{
    w2l_conf *c = eager_conf();
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    int r = 0;
    /* checkpoints are the clock: go on until several compactions and expiries happened */
    for (; r < 400; r++) {
        round_of_changes(p, r);
        checkpoint(p);
        w2l_table_metrics m = metrics(p);
        if (r >= 40 && m.compactions >= 3 && m.snapshots_expired >= 10) break;
    }
    ck_assert_int_lt(r, 400);
    w2l_table_metrics m = metrics(p);
    ck_assert_uint_ge(m.files_compacted, 4);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    check_model();
    check_reachable();
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    /* bounded: thresholds 4 small files / 4 delete files (plus what was committed while
     * the last compaction was in flight, however slow its thread ran), 3 snapshots kept;
     * without maintenance the table would hold over 40 of each */
    ck_assert_int_le(summary_i64(t->meta, "total-data-files"), 24);
    ck_assert_int_le(summary_i64(t->meta, "total-delete-files"), 24);
    ck_assert_uint_le(t->meta->nsnapshots, 8);
    ck_assert_uint_le(t->meta->nmeta_log, 5); /* maintenance.metadata-versions */
    /* and the metadata files on disk are those the log names, and the current one */
    char mdir[800];
    snprintf(mdir, sizeof mdir, "%s/db/t/metadata", wh);
    size_t json = 0;
    DIR *d = opendir(mdir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *de; (de = readdir(d));)
        json += strstr(de->d_name, ".metadata.json") != NULL && de->d_name[0] != '.';
    closedir(d);
    ck_assert_uint_eq(json, t->meta->nmeta_log + 1);
    /* restore still finds the job's checkpoint in the current snapshot */
    const w2l__ice_snapshot *cur = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
    ck_assert_str_eq(w2l__ice_props_get(&cur->summary, "w2l.job-id"), "maint-job");
    ck_assert_ptr_nonnull(w2l__ice_props_get(&cur->summary, "w2l.checkpoint-id"));
    unload(t, cat, io);
    /* a restart commits nothing twice and goes on */
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int k = 0; k < 10; k++, r++) {
        round_of_changes(p, r + 1000);
        checkpoint(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
}
END_TEST

START_TEST(upserts_committed_during_a_compaction_win)
{
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 8; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    /* plan and write a compaction of what is committed now */
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    w2l__ice_compaction *k = prepare(t);
    /* meanwhile: every key the compaction holds is upserted, some deleted */
    for (long id = 0; id < NKEYS; id++) {
        if (!model[id][0]) continue;
        if (id % 5 == 0) delete_row(p, id);
        else upsert(p, id, "after");
    }
    commit(p);
    checkpoint(p);
    /* the compaction commits on the newer table */
    ck_assert_ok(w2l__ice_table_refresh(t, &err), err);
    ck_assert_ok(w2l__ice_compaction_validate(io, t->meta, k, &err), err);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_compaction_free(k, io, 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1); /* only the upsert's */
    unload(t, cat, io);
    check_model();
    /* and more changes after it apply too */
    round_of_changes(p, 99);
    checkpoint(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
    check_reachable();
}
END_TEST

START_TEST(a_compaction_whose_input_changed_is_dropped)
{
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 6; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    w2l__ice_compaction *k = prepare(t);
    w2l_ddl d = {"db", "TRUNCATE TABLE t", 16, NULL, NULL, 0};
    ck_assert_ok(w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err), err);
    commit(p);
    memset(model, 0, sizeof model);
    upsert(p, 1, "fresh");
    commit(p);
    checkpoint(p);
    ck_assert_ok(w2l__ice_table_refresh(t, &err), err);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_int_eq(w2l__ice_table_try_commit(t, &ch, &err), W2L_CONFLICT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no longer live"));
    w2l__ice_change_release(&ch, io, 1);
    w2l__ice_compaction_free(k, io, 1);
    unload(t, cat, io);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
}
END_TEST

static void age(const char *path, int64_t secs)
{
    struct timeval tv[2];
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= secs;
    tv[1] = tv[0];
    ck_assert_int_eq(utimes(path, tv), 0);
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not referenced", f);
    fclose(f);
}

typedef struct counts {
    int orphans, compact, expire;
    uint64_t removed;
} counts;

static int on_report(void *ctx, const w2l_maintain_report *r)
{
    counts *c = ctx;
    if (strcmp(r->action, "orphans") == 0) c->orphans++, c->removed += r->files_removed;
    if (strcmp(r->action, "compact") == 0 && !r->skipped) c->compact++;
    if (strcmp(r->action, "expire") == 0 && !r->skipped) c->expire++;
    return 0;
}

START_TEST(orphans_go_but_not_what_recover_needs)
{
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 3; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    char old[800], young[800], held[800], live_meta[800];
    snprintf(old, sizeof old, "%s/db/t/data/crashed-old.parquet", wh);
    snprintf(young, sizeof young, "%s/db/t/data/crashed-young.parquet", wh);
    snprintf(held, sizeof held, "%s/db/t/data/sealed-not-committed.parquet", wh);
    snprintf(live_meta, sizeof live_meta, "%s/db/t/metadata/stale-manifest.avro", wh);
    touch(old);
    touch(young);
    touch(held);
    touch(live_meta);
    age(old, 2 * 86400);
    age(held, 2 * 86400);
    age(live_meta, 2 * 86400);
    /* a sealed checkpoint that holds `held` for w2l recover */
    w2l_state *st;
    ck_assert_ok(w2l_state_open("file", c, &st, &err), err);
    uint64_t latest = 0;
    ck_assert_ok(w2l_state_latest(st, &latest, &err), err);
    char val[1024];
    int n = snprintf(val, sizeof val, "{\"files\":[{\"path\":\"%s\"}]}", held);
    ck_assert_ok(w2l_state_put(st, latest + 1, "committer/files/99/db.t", val, (size_t)n, &err), err);
    ck_assert_ok(w2l_state_seal(st, latest + 1, &err), err);
    w2l_state_close(st);
    /* every live file is old too: age only protects the young */
    counts k = {0};
    w2l_maintain_options o = {W2L_MAINTAIN_ORPHANS, NULL, NULL, 1, 0};
    ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
    ck_assert_uint_eq(k.removed, 2); /* dry run: counted, nothing gone */
    ck_assert(exists_path(old));
    o.dry_run = 0;
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
    ck_assert_int_eq(k.orphans, 1);
    ck_assert_uint_eq(k.removed, 2);
    ck_assert(!exists_path(old));
    ck_assert(!exists_path(live_meta));
    ck_assert(exists_path(young));
    ck_assert(exists_path(held));
    w2l_conf_free(c);
    check_model();
    check_reachable();
}
END_TEST

START_TEST(a_fault_at_any_write_of_maintenance_leaves_the_table_whole)
{
    /* a table with work for every action */
    fault_fileio_register();
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 20; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    ck_assert_ok(w2l_conf_set(c, "maintenance.max-snapshot-age", "0", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.min-snapshots", "2", &err), err);
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    w2l_maintain_options o = {W2L_MAINTAIN_EXPIRE | W2L_MAINTAIN_COMPACT, NULL, NULL, 0, 1};
    int failures = 0;
    for (long nth = 0;; nth++) {
        fault_fileio_arm_all(FAULT_CREATE | FAULT_WRITE | FAULT_CLOSE, nth, 0);
        counts k = {0};
        w2l_rc rc = w2l_maintain(c, &o, on_report, &k, &err);
        long calls = fault_fileio_calls_all();
        fault_fileio_disarm_all();
        check_model();
        check_reachable();
        if (rc == W2L_OK && calls <= nth) break; /* no fault was reached: done */
        failures += rc != W2L_OK;
        ck_assert_int_lt(nth, 400);
    }
    ck_assert_int_gt(failures, 0);
    /* afterwards the table is compacted: one data file, no deletes */
    w2l_catalog *cat;
    w2l_fileio *io;
    ck_assert_ok(w2l_conf_set(c, "fileio", "local", &err), err);
    w2l__ice_table *t = load(&cat, &io);
    ck_assert_int_le(summary_i64(t->meta, "total-data-files"), 1);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 0);
    unload(t, cat, io);
    w2l_conf_free(c);
}
END_TEST

/* Large files with a few deleted rows keep their place: their deleted positions go to one
 * position delete file, and no equality delete is left. */
#define BIGN 3000
static char big_model[BIGN][8];

/* tag, then 140 hex digits that depend on id (incompressible: files of real size) */
static void big_value(char *out, size_t size, const char *tag, long id)
{
    int n = snprintf(out, size, "%s-", tag);
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL + 1;
    for (int i = 0; i < 140 && (size_t)n + 1 < size; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[n++] = "0123456789abcdef"[x & 15];
    }
    out[n] = '\0';
}

static int on_big_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    (void)s, (void)n;
    long *rows = ctx;
    long id = (long)row[0].v.i64;
    ck_assert_int_ge(id, 0);
    ck_assert_int_lt(id, BIGN);
    ck_assert_msg(big_model[id][0], "row %ld is deleted", id);
    char want[160];
    big_value(want, sizeof want, big_model[id], id);
    ck_assert_msg(row[1].v.bytes.len == strlen(want) && memcmp(row[1].v.bytes.ptr, want, strlen(want)) == 0,
                  "row %ld: not its newest version", id);
    (*rows)++;
    return 0;
}

static void check_big(void)
{
    long rows = 0, want = 0;
    for (int i = 0; i < BIGN; i++) want += big_model[i][0] != 0;
    w2l_conf *c = base_conf();
    w2l_lake *lake;
    ck_assert_ok(w2l_lake_open(c, &lake, &err), err);
    ck_assert_ok(w2l_lake_scan(lake, "db", "t", -1, on_big_row, &rows, &err), err);
    w2l_lake_close(lake);
    w2l_conf_free(c);
    ck_assert_int_eq(rows, want);
}

static void big_put(w2l_pipeline *p, long id, const char *tag, int update)
{
    char v[160];
    big_value(v, sizeof v, tag, id);
    w2l_value row[2];
    memset(row, 0, sizeof row);
    row[0].v.i64 = id;
    if (update) {
        char old[160];
        big_value(old, sizeof old, big_model[id], id);
        row[1].v.bytes.ptr = old;
        row[1].v.bytes.len = strlen(old);
        w2l_change b = {"db", "t", sch, W2L_OP_UPDATE_BEFORE, row, 2, NULL, 0};
        ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &b, &err), err);
    }
    row[1].v.bytes.ptr = v;
    row[1].v.bytes.len = strlen(v);
    w2l_change c = {"db", "t", sch, update ? W2L_OP_UPDATE_AFTER : W2L_OP_INSERT, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
    snprintf(big_model[id], sizeof big_model[id], "%s", tag);
}

START_TEST(large_files_get_position_deletes)
{
    memset(big_model, 0, sizeof big_model);
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    ck_assert_ok(w2l_conf_set(c, "writer.target-file-bytes", "64KiB", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long id = 0; id < BIGN; id++) big_put(p, id, "v1", 0);
    commit(p);
    checkpoint(p);
    for (long id = 0; id < BIGN; id += 100) big_put(p, id, "v2", 1); /* 1% of the rows */
    commit(p);
    checkpoint(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    check_big();
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    int64_t files_before = summary_i64(t->meta, "total-data-files");
    ck_assert_int_ge(files_before, 3); /* rolled at 64 KiB */
    ck_assert_int_ge(summary_i64(t->meta, "total-equality-deletes"), 30);
    unload(t, cat, io);
    w2l_maintain_options o = {W2L_MAINTAIN_COMPACT, "db", "t", 0, 1};
    counts k = {0};
    ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
    ck_assert_int_eq(k.compact, 1);
    check_big();
    check_reachable();
    t = load(&cat, &io);
    ck_assert_int_eq(summary_i64(t->meta, "total-equality-deletes"), 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-position-deletes"), 30);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1);
    /* the large files stay; the 30 new versions are one new file */
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), files_before);
    unload(t, cat, io);
    /* past maintenance.rewrite-delete-percent, the large files are rewritten */
    ck_assert_ok(w2l_conf_set(c, "maintenance.rewrite-delete-percent", "0", &err), err);
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
    check_big();
    t = load(&cat, &io);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-records"), BIGN);
    unload(t, cat, io);
    /* compaction's own output is not small: nothing to do again, not a rewrite of it all */
    memset(&k, 0, sizeof k);
    ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
    ck_assert_int_eq(k.compact, 0);
    w2l_conf_free(c);
}
END_TEST

/* A table renamed away keeps, in its metadata-log, the metadata files of its old directory;
 * a table created under the old name writes its own files of the same names there. Old
 * metadata files that fall out of the renamed table's log are not the new table's to lose. */
START_TEST(a_renamed_tables_old_metadata_is_not_the_new_tables)
{
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.metadata-versions", "2", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int r = 0; r < 4; r++) {
        round_of_changes(p, r);
        checkpoint(p);
    }
    w2l_ddl d = {"db", "RENAME TABLE t TO u", 19, NULL, NULL, 0};
    ck_assert_ok(w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err), err);
    commit(p);
    checkpoint(p);
    memset(model, 0, sizeof model);
    for (int r = 0; r < 3; r++) { /* t again: v1.. of its own, in the same directory */
        round_of_changes(p, 100 + r);
        checkpoint(p);
    }
    for (int r = 0; r < 8; r++) { /* u commits, and its log drops the old t's files */
        w2l_value row[2];
        memset(row, 0, sizeof row);
        row[0].v.i64 = 1000 + r;
        row[1].v.bytes.ptr = "u";
        row[1].v.bytes.len = 1;
        w2l_change ch = {"db", "u", sch, W2L_OP_INSERT, row, 2, NULL, 0};
        ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err), err);
        commit(p);
        checkpoint(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
    check_reachable();
}
END_TEST

Suite *suite_maintain(void)
{
    Suite *s = suite_create("maintain");
    TCase *tc = tcase_create("maintain");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, merging_bounds_the_manifests);
    tcase_add_test(tc, a_pipeline_compacts_and_expires_by_itself);
    tcase_add_test(tc, upserts_committed_during_a_compaction_win);
    tcase_add_test(tc, a_compaction_whose_input_changed_is_dropped);
    tcase_add_test(tc, orphans_go_but_not_what_recover_needs);
    tcase_add_test(tc, a_fault_at_any_write_of_maintenance_leaves_the_table_whole);
    tcase_add_test(tc, large_files_get_position_deletes);
    tcase_add_test(tc, a_renamed_tables_old_metadata_is_not_the_new_tables);
    suite_add_tcase(s, tc);
    return s;
}
