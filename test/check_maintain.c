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
 *     model's rows, and a later run completes the work;
 *   - partitioned tables compact one partition at a time: the rows read the same, every
 *     output holds rows of one partition and carries its values, an equality delete of one
 *     partition leaves the same key of another alone, position deletes go to the partition
 *     of the file they name, and every delete file goes; files of an older spec are
 *     compacted within it; a partition whose only file is small needs no rewrite.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "gen/ice_fixture.h"
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

static const char *format_version; /* table.format-version of the test's tables; NULL: default */

static void setup(void)
{
    format_version = NULL;
    snprintf(wh, sizeof wh, "%s", tmpdir_make("maint"));
    w2l_error_clear(&err);
    sch = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(sch, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(sch, 2, "v", (w2l_type){ W2L_TYPE_STRING, 0, 0 }, 0, &err),
                 err);
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
    if (format_version)
        ck_assert_ok(w2l_conf_set(c, "table.format-version", format_version, &err), err);
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
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        ck_assert_ok(w2l_conf_set(c, kv[i][0], kv[i][1], &err), err);
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
    w2l_change c = { "db", "t", sch,  model[id][0] ? W2L_OP_UPDATE_AFTER : W2L_OP_INSERT,
                     row,  2,   NULL, 0 };
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
        ck_assert_msg(strcmp(got[i], model[i]) == 0, "id %d: got '%s', want '%s'", i, got[i],
                      model[i]);
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

/* A format version 3 table's live deletes: deletion vectors only (equality deletes aside),
 * at most one per data file, each naming a live data file. Returns how many. */
static size_t check_dvs(void)
{
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    ck_assert_int_eq(t->meta->format_version, 3);
    w2l__ice_scan *scan;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &scan, &err), err);
    size_t n = 0;
    for (size_t i = 0; i < scan->ndelete_files; i++) {
        const w2l__ice_data_file *d = scan->delete_files[i];
        if (d->content == W2L_ICE_EQ_DELETES) continue;
        ck_assert_msg(w2l__ice_is_dv(d), "%s is no deletion vector", d->path);
        n++;
        int live = 0;
        for (size_t k = 0; k < scan->ntasks; k++)
            live |= !strcmp(scan->tasks[k].file->path, d->referenced_data_file);
        ck_assert_msg(live, "%s names %s, not live", d->path, d->referenced_data_file);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(scan->delete_files[j]->content == W2L_ICE_EQ_DELETES ||
                              strcmp(scan->delete_files[j]->referenced_data_file,
                                     d->referenced_data_file) != 0,
                          "two deletion vectors of %s", d->referenced_data_file);
    }
    w2l__ice_scan_free(scan);
    unload(t, cat, io);
    return n;
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
        ck_assert_msg(exists(io, s->manifest_list), "snapshot %lld: list %s is gone",
                      (long long)s->snapshot_id, s->manifest_list);
        w2l__arena a;
        w2l__arena_init(&a, 1 << 14);
        w2l__ice_manifest *ml;
        size_t n;
        ck_assert_ok(w2l__ice_manifest_list_read(io, s->manifest_list, &a, &ml, &n, &err), err);
        if (s->snapshot_id == t->meta->current_snapshot_id) current = n;
        for (size_t k = 0; k < n; k++) {
            w2l__ice_entry *e;
            size_t ne;
            ck_assert_ok(w2l__ice_manifest_read(io, &ml[k],
                                                w2l__ice_meta_spec(t->meta, ml[k].spec_id), &a, &e,
                                                &ne, &err),
                         err);
            for (size_t q = 0; q < ne; q++)
                if (e[q].status != W2L_ICE_DELETED)
                    ck_assert_msg(exists(io, e[q].file.path), "snapshot %lld: %s is gone",
                                  (long long)s->snapshot_id, e[q].file.path);
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
    format_version = _i ? "3" : NULL; /* 1: deletion vectors, compacted and expired alike */
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
    if (_i) check_dvs();
}
END_TEST

START_TEST(upserts_committed_during_a_compaction_win)
{
    /* _i == 0: equality deletes apply to the compacted files (their data sequence number is
     * the base's); _i == 1: position deletes name the files the compaction removes, so the
     * compaction moves them onto its output (w2l__ice_compaction_rebase) and the upserts
     * stand; _i == 2: the same with deletion vectors (format version 3) */
    format_version = _i == 2 ? "3" : NULL;
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    if (_i == 0) ck_assert_ok(w2l_conf_set(c, "write.delete-mode", "equality", &err), err);
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
    /* _i >= 1: each position delete committed meanwhile names a file the compaction
     * removes; the compaction follows those rows into its output and deletes them there */
    int changed;
    ck_assert_ok(w2l__ice_compaction_rebase(io, t->meta, k, &changed, &err), err);
    ck_assert_int_eq(changed, _i >= 1);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    if (_i >= 1) ck_assert_int_gt(w2l__ice_compaction_stats(k)->deletes_out, 0);
    w2l__ice_compaction_free(k, io, 0);
    if (_i == 0) ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1); /* the upsert's */
    unload(t, cat, io);
    check_model();
    if (_i == 2) check_dvs(); /* the vectors it consumed are gone with the files they named */
    if (_i >= 1) {
        /* the next compaction applies the rebased deletes */
        t = load(&cat, &io);
        k = prepare(t);
        ck_assert_ptr_nonnull(k);
        ck_assert_ok(w2l__ice_compaction_rebase(io, t->meta, k, &changed, &err), err);
        ck_assert_int_eq(changed, 0);
        w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
        w2l__ice_compaction_change(k, &ch);
        ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
        w2l__ice_change_release(&ch, io, 0);
        w2l__ice_compaction_free(k, io, 0);
        ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 0);
        unload(t, cat, io);
        check_model();
    }
    /* and more changes after it apply too */
    round_of_changes(p, 99);
    checkpoint(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    check_model();
    check_reachable();
    if (_i == 2) ck_assert_uint_gt(check_dvs(), 0);
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
    ck_assert_ok(w2l_state_put(st, latest + 1, "committer/files/99/db.t", val, (size_t)n, &err),
                 err);
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
    ck_assert_msg(row[1].v.bytes.len == strlen(want) &&
                      memcmp(row[1].v.bytes.ptr, want, strlen(want)) == 0,
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

/* BIGN rows in files rolled at 64 KiB, then 1% of them upserted with equality deletes
 * (compaction turns them into position deletes); returns the pipeline's conf. */
static w2l_conf *big_with_equality_deletes(void)
{
    memset(big_model, 0, sizeof big_model);
    w2l_conf *c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    ck_assert_ok(w2l_conf_set(c, "write.delete-mode", "equality", &err), err);
    ck_assert_ok(w2l_conf_set(c, "writer.target-file-bytes", "64KiB", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long id = 0; id < BIGN; id++) big_put(p, id, "v1", 0);
    commit(p);
    checkpoint(p);
    for (long id = 0; id < BIGN; id += 100) big_put(p, id, "v2", 1);
    commit(p);
    checkpoint(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    return c;
}

START_TEST(large_files_get_position_deletes)
{
    format_version = _i ? "3" : NULL; /* 1: one deletion vector per large file instead */
    w2l_conf *c = big_with_equality_deletes();
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
    const int64_t ndel = summary_i64(t->meta, "total-delete-files");
    if (_i) { /* a vector per large file with deleted rows */
        ck_assert_int_ge(summary_i64(t->meta, "total-delete-files"), 2);
        ck_assert_int_le(summary_i64(t->meta, "total-delete-files"), files_before);
    } else {
        ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1);
    }
    /* the large files stay; the 30 new versions are one new file */
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), files_before);
    unload(t, cat, io);
    if (_i) {
        ck_assert_uint_eq((size_t)ndel, check_dvs());
        /* compacting again keeps a file's one vector, and the rows */
        memset(&k, 0, sizeof k);
        ck_assert_ok(w2l_maintain(c, &o, on_report, &k, &err), err);
        check_big();
        check_dvs();
    }
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

/* Format version 3: a compaction gathers a large file's equality-deleted rows into the
 * file's one deletion vector while a commit of another job gives the same file a vector of
 * its own; the compaction commits the union of the two and removes the other, so the file
 * still has one vector, and every row deleted by either stays deleted. */
START_TEST(a_compactions_vector_merges_with_one_committed_meanwhile)
{
    format_version = "3";
    w2l_conf *c = big_with_equality_deletes();
    w2l_pipeline *p;
    w2l_conf_free(c);
    /* the compaction: a vector per large file, the 1% in a new file */
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = load(&cat, &io);
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    pol.target_file_bytes = 64 << 10;
    w2l__pq_options pq;
    w2l__pq_options_default(&pq);
    w2l__ice_compaction *k = NULL;
    ck_assert_ok(w2l__ice_compact_prepare(t->io, t->meta, &pol, &pq, &k, &err), err);
    ck_assert_ptr_nonnull(k);
    /* meanwhile: position deletes (vectors at commit) of other rows of the large files */
    c = base_conf();
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long id = 50; id < BIGN; id += 100) big_put(p, id, "v3", 1);
    commit(p);
    checkpoint(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    check_dvs();
    ck_assert_ok(w2l__ice_table_refresh(t, &err), err);
    int changed;
    ck_assert_ok(w2l__ice_compaction_rebase(io, t->meta, k, &changed, &err), err);
    ck_assert_int_eq(changed, 1);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_compaction_free(k, io, 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-equality-deletes"), 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-position-deletes"), 60);
    unload(t, cat, io);
    check_big();
    ck_assert_uint_ge(check_dvs(), 2);
    check_reachable();
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

/* ---- partitioned tables: files written here, compacted through w2l__ice_compact_prepare ---- */

/* A row of the partitioned tables: (1 id long, 2 g int, 3 d date, 4 v string); v is
 * "<tag>-<id>", and for tag "b" 120 hex digits more (incompressible: a file of real size). */
typedef struct prow {
    long id;
    int32_t g, d;
    const char *tag;
} prow;

static w2l_schema *part_schema(void)
{
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 2, "g", (w2l_type){W2L_TYPE_INT, 0, 0}, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 3, "d", (w2l_type){W2L_TYPE_DATE, 0, 0}, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 4, "v", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err), err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(s, &id, 1, &err), err);
    return s;
}

static void prow_v(const prow *r, char *out, size_t size)
{
    int n = snprintf(out, size, "%s-%ld", r->tag, r->id);
    if (strcmp(r->tag, "b") != 0) return;
    uint64_t x = (uint64_t)r->id * 0x9e3779b97f4a7c15ULL + 7;
    for (int i = 0; i < 120 && (size_t)n + 1 < size; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[n++] = "0123456789abcdef"[x & 15];
    }
    out[n] = '\0';
}

/* "id|g|d|v", as the scan and the model both print a row */
static char *prow_text(long id, int32_t g, int32_t d, const char *v, size_t vlen)
{
    char *t = w2l__asprintf("%ld|%d|%d|%.*s", id, (int)g, (int)d, (int)vlen, v);
    ck_assert_ptr_nonnull(t);
    return t;
}

typedef struct rowlist {
    char **v;
    size_t n, cap;
} rowlist;

static void rowlist_add(rowlist *l, char *t)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        ck_assert_ptr_nonnull(l->v);
    }
    l->v[l->n++] = t;
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows, sorted, one a line (fresh memory, freed by the caller with w2l__free). */
static char *rowlist_join(rowlist *l)
{
    qsort(l->v, l->n, sizeof *l->v, cmp_text);
    size_t len = 1;
    for (size_t i = 0; i < l->n; i++) len += strlen(l->v[i]) + 1;
    char *out = w2l__malloc(len), *p = out;
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < l->n; i++) {
        p += sprintf(p, "%s\n", l->v[i]);
        w2l__free(l->v[i]);
    }
    *p = '\0';
    free(l->v);
    memset(l, 0, sizeof *l);
    return out;
}

static int collect_prow(void *ctx, const w2l_value *row, size_t n)
{
    ck_assert_uint_eq(n, 4);
    rowlist_add(ctx, prow_text((long)row[0].v.i64, row[1].v.i32, row[2].v.i32,
                               (const char *)row[3].v.bytes.ptr, row[3].v.bytes.len));
    return 0;
}

/* Every row the current snapshot reads, as rowlist_join prints them. */
static char *table_rows(w2l_fileio *io, const w2l__ice_meta *m)
{
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, m, -1, NULL, NULL, &s, &err), err);
    rowlist l = {0};
    ck_assert_ok(w2l__ice_scan_read(io, s, collect_prow, &l, &err), err);
    w2l__ice_scan_free(s);
    return rowlist_join(&l);
}

/* The model's rows: those of rs (n of them) for which alive(id, g) says so. */
static char *model_rows(const prow *rs, size_t n, int (*alive)(const prow *r))
{
    rowlist l = {0};
    char v[200];
    for (size_t i = 0; i < n; i++) {
        if (!alive(&rs[i])) continue;
        prow_v(&rs[i], v, sizeof v);
        rowlist_add(&l, prow_text(rs[i].id, rs[i].g, rs[i].d, v, strlen(v)));
    }
    return rowlist_join(&l);
}

/* The partition values of row (a full row of s) under spec, into out (nfields values). */
static void partition_of(const w2l__ice_spec *spec, const w2l_schema *s, const w2l_value *row,
                         w2l_value *out)
{
    for (size_t k = 0; k < spec->nfields; k++) {
        const w2l__ice_pfield *pf = &spec->fields[k];
        long idx = w2l_schema_index_of_id(s, pf->source_id);
        ck_assert_int_ge(idx, 0);
        ck_assert_ok(w2l__ice_transform_apply(pf->transform, w2l_schema_field(s, (size_t)idx)->type,
                                              &row[idx], &out[k], &err), err);
    }
}

static int same_values(const w2l__ice_spec *spec, const w2l_value *a, const w2l_value *b)
{
    for (size_t k = 0; k < spec->nfields; k++)
        if (w2l_value_compare(spec->fields[k].type, &a[k], &b[k]) != 0) return 0;
    return 1;
}

/* A data file of rows rs[0..n) under spec (all of one partition), in the file arena fa. */
static w2l__arena fa;

static w2l__ice_data_file put_rows(w2l__ice_table *t, const w2l__ice_spec *spec, const prow *rs,
                                   size_t n)
{
    const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
    w2l_value *rows = calloc(4 * n, sizeof *rows);
    char (*v)[200] = calloc(n, sizeof *v);
    ck_assert(rows && v);
    for (size_t i = 0; i < n; i++) {
        w2l_value *r = &rows[4 * i];
        r[0].v.i64 = rs[i].id;
        r[1].v.i32 = rs[i].g;
        r[2].v.i32 = rs[i].d;
        prow_v(&rs[i], v[i], sizeof v[i]);
        r[3].v.bytes.ptr = v[i];
        r[3].v.bytes.len = strlen(v[i]);
    }
    w2l_value *part = w2l__arena_alloc(&fa, (spec->nfields + 1) * sizeof *part);
    partition_of(spec, s, rows, part);
    for (size_t i = 1; i < n; i++) { /* the file is of one partition */
        w2l_value other[4];
        partition_of(spec, s, &rows[4 * i], other);
        ck_assert(same_values(spec, part, other));
    }
    char *pp = w2l__ice_partition_path(spec, part);
    char *path = w2l__ice_new_data_path(t, pp, "data");
    w2l__ice_data_file df;
    fx_write_file(t->io, path, s, rows, n, &fa, W2L_ICE_DATA, NULL, 0, &df);
    df.spec_id = spec->spec_id;
    df.npart = spec->nfields;
    df.partition = part;
    w2l__free(pp);
    w2l__free(path);
    free(rows);
    free(v);
    return df;
}

/* An equality delete file (on id) of spec, in the partition of like (NULL: unpartitioned). */
static w2l__ice_data_file put_eq_deletes(w2l__ice_table *t, const w2l__ice_spec *spec,
                                         const w2l__ice_data_file *like, const long *ids,
                                         size_t n)
{
    w2l_schema *es = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(es, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    w2l_value rows[8];
    memset(rows, 0, sizeof rows);
    ck_assert_uint_le(n, 8);
    for (size_t i = 0; i < n; i++) rows[i].v.i64 = ids[i];
    ck_assert_uint_eq(like ? like->npart : 0, spec->nfields);
    char *pp = w2l__ice_partition_path(spec, like ? like->partition : NULL);
    char *path = w2l__ice_new_data_path(t, pp, "eq-delete");
    int32_t eq = 1;
    w2l__ice_data_file df;
    fx_write_file(t->io, path, es, rows, n, &fa, W2L_ICE_EQ_DELETES, &eq, 1, &df);
    df.spec_id = spec->spec_id;
    df.npart = spec->nfields;
    df.partition = like ? like->partition : NULL;
    w2l__free(pp);
    w2l__free(path);
    w2l_schema_unref(es);
    return df;
}

/* Reads every task of the current snapshot and checks that each row's partition, computed
 * with its spec's transforms, is the one its file carries. Returns the rows read. */
typedef struct pcheck {
    const w2l__ice_spec *spec;
    const w2l__ice_data_file *f;
    const w2l_schema *s;
    long rows;
} pcheck;

static int check_part_row(void *ctx, const w2l_value *row, size_t n)
{
    (void)n;
    pcheck *c = ctx;
    w2l_value want[4];
    partition_of(c->spec, c->s, row, want);
    ck_assert_msg(same_values(c->spec, want, c->f->partition),
                  "%s holds row %lld of another partition", c->f->path, (long long)row[0].v.i64);
    c->rows++;
    return 0;
}

static long check_partitions(w2l_fileio *io, const w2l__ice_meta *m)
{
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, m, -1, NULL, NULL, &s, &err), err);
    long rows = 0;
    for (size_t i = 0; i < s->ntasks; i++) {
        const w2l__ice_data_file *f = s->tasks[i].file;
        const w2l__ice_spec *spec = w2l__ice_meta_spec(m, f->spec_id);
        ck_assert_ptr_nonnull(spec);
        ck_assert_uint_eq(f->npart, spec->nfields);
        pcheck c = {spec, f, s->schema, 0};
        ck_assert_ok(w2l__ice_scan_read_task(io, s, i, check_part_row, &c, &err), err);
        rows += c.rows;
    }
    w2l__ice_scan_free(s);
    return rows;
}

/* The positions of the position delete file at path, "p1 p2 ... " (static buffer); every
 * row names b1_path. */
static const char *b1_path;
static const char *pos_deletes_text(w2l_fileio *io, const char *path)
{
    static char out[256];
    size_t len = 0;
    w2l__pq_reader *r;
    ck_assert_ok(w2l__pq_reader_open(io, path, &r, &err), err);
    const w2l_schema *fs = w2l__pq_reader_schema(r);
    long ip = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_FILE_PATH);
    long ipos = w2l_schema_index_of_id(fs, W2L_PQ_FIELD_ID_POS);
    size_t nf = w2l_schema_field_count(fs);
    ck_assert(ip >= 0 && ipos >= 0);
    for (size_t rg = 0; rg < w2l__pq_reader_num_row_groups(r); rg++) {
        const w2l_value *rows;
        size_t n = w2l__pq_reader_row_group_rows(r, rg);
        ck_assert_ok(w2l__pq_reader_read_row_group(r, rg, &rows, &err), err);
        for (size_t i = 0; i < n; i++) {
            const w2l_value *p = &rows[i * nf + (size_t)ip];
            ck_assert(p->v.bytes.len == strlen(b1_path) &&
                      memcmp(p->v.bytes.ptr, b1_path, p->v.bytes.len) == 0);
            len += (size_t)snprintf(out + len, sizeof out - len, "%lld ",
                                    (long long)rows[i * nf + (size_t)ipos].v.i64);
            ck_assert_uint_lt(len, sizeof out);
        }
    }
    w2l__pq_reader_close(r);
    return out;
}

/* Whether path is a live data or delete file of m's current snapshot. */
static int is_live(w2l_fileio *io, const w2l__ice_meta *m, const char *path)
{
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, m, -1, NULL, NULL, &s, &err), err);
    int live = 0;
    for (size_t i = 0; i < s->ntasks; i++) live |= strcmp(s->tasks[i].file->path, path) == 0;
    for (size_t i = 0; i < s->ndelete_files; i++)
        live |= strcmp(s->delete_files[i]->path, path) == 0;
    w2l__ice_scan_free(s);
    return live;
}

static w2l__ice_table *create_parted(w2l_catalog **cat, w2l_fileio **io, const char *name,
                                     const char *partition_by)
{
    w2l_conf *c = base_conf();
    *io = NULL;
    ck_assert_ok(w2l__catalog_open_conf(c, io, cat, &err), err);
    w2l_conf_free(c);
    w2l_schema *s = part_schema();
    w2l__ice_spec spec;
    ck_assert_ok(w2l__ice_spec_parse(partition_by, s, &spec, &err), err);
    char *loc = w2l__ice_table_dir(wh, "db", name);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(*cat, *io, loc, "db", name, s, &spec, NULL, &t, &err), err);
    w2l__free(loc);
    w2l__ice_spec_release(&spec);
    w2l_schema_unref(s);
    w2l__arena_init(&fa, 1 << 14);
    return t;
}

static w2l__ice_compaction *prepare_with(w2l__ice_table *t, const w2l__ice_policy *pol)
{
    w2l__pq_options pq;
    w2l__pq_options_default(&pq);
    w2l__ice_compaction *k = NULL;
    ck_assert_ok(w2l__ice_compact_prepare(t->io, t->meta, pol, &pq, &k, &err), err);
    return k;
}

/* The rows of partitions_are_compacted_apart: g is the partition (identity), d = 19000 + g */
#define P(id, g, tag) {id, g, 19000 + (g), tag}
static prow pa_rows[400];
static size_t pa_n;

static void pa_add(long from, long to, int32_t g, const char *tag)
{
    for (long id = from; id <= to; id++) pa_rows[pa_n++] = (prow)P(id, g, tag);
}

/* deleted: key 2, 6 and 150 of partition 1 (equality), 100 of partition 1 and 10 of
 * partition 2 (positions); key 2 comes back in partition 1 as "a2"; at the end, key 11 of
 * partition 2 (equality) */
static int pa_late;

static int pa_alive(const prow *r)
{
    if (pa_late && r->g == 2 && r->id == 11) return 0;
    if (r->g == 1 && strcmp(r->tag, "a2") != 0 && (r->id == 2 || r->id == 6 || r->id == 150))
        return 0;
    if (r->g == 1 && r->id == 100) return 0;
    if (r->g == 2 && r->id == 10) return 0;
    return 1;
}

START_TEST(partitions_are_compacted_apart)
{
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = create_parted(&cat, &io, "p", "g");
    const w2l__ice_spec *spec = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    ck_assert_uint_eq(spec->nfields, 1);
    ck_assert_int_eq(spec->fields[0].field_id, 1000);
    ck_assert_int_eq(spec->fields[0].transform.kind, W2L_ICE_T_IDENTITY);
    const int32_t sid = spec->spec_id;
    pa_n = 0;
    pa_late = 0;
    /* commit 1: partition 1 two small files and a large one, partition 2 the same keys 1..4
     * on purpose and more, partition 3 one small file */
    pa_add(1, 4, 1, "a");
    pa_add(5, 8, 1, "a");
    pa_add(100, 299, 1, "b");
    pa_add(1, 4, 2, "c");
    pa_add(9, 12, 2, "c");
    pa_add(20, 23, 3, "e");
    w2l__ice_data_file f1[6];
    f1[0] = put_rows(t, spec, pa_rows, 4);          /* A1: 1..4 in 1 */
    f1[1] = put_rows(t, spec, pa_rows + 4, 4);      /* A2: 5..8 in 1 */
    f1[2] = put_rows(t, spec, pa_rows + 8, 200);    /* B1: 100..299 in 1, large */
    f1[3] = put_rows(t, spec, pa_rows + 208, 4);    /* C1: 1..4 in 2 */
    f1[4] = put_rows(t, spec, pa_rows + 212, 4);    /* C2: 9..12 in 2 */
    f1[5] = put_rows(t, spec, pa_rows + 216, 4);    /* E1: 20..23 in 3 */
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, f1, 6, NULL, 0, 1, &err), err);
    spec = w2l__ice_meta_spec(t->meta, sid);
    /* commit 2: a new version of key 2 and two rows in partition 2; deletes */
    size_t n1 = pa_n;
    pa_rows[pa_n++] = (prow)P(2, 1, "a2");
    pa_add(30, 31, 2, "d");
    w2l__ice_data_file f2[2];
    f2[0] = put_rows(t, spec, pa_rows + n1, 1);     /* A3: 2 in 1 */
    f2[1] = put_rows(t, spec, pa_rows + n1 + 1, 2); /* D1: 30..31 in 2 */
    long eq_ids[] = {2, 6, 150};
    long c2_pos[] = {1}, b1_pos[] = {0};
    w2l__ice_data_file d2[3];
    d2[0] = put_eq_deletes(t, spec, &f1[0], eq_ids, 3);    /* partition 1 only */
    d2[1] = fx_pos_deletes(t, &f1[4], c2_pos, 1, &fa);     /* id 10 in 2 */
    d2[2] = fx_pos_deletes(t, &f1[2], b1_pos, 1, &fa);     /* id 100 in 1 */
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, f2, 2, d2, 3, 2, &err), err);
    char *want = model_rows(pa_rows, pa_n, pa_alive);
    char *before = table_rows(io, t->meta);
    ck_assert_str_eq(before, want);
    ck_assert_ptr_nonnull(strstr(before, "\n2|2|19002|c-2\n"));  /* key 2 of partition 2 */
    ck_assert_ptr_nonnull(strstr(before, "\n2|1|19001|a2-2\n")); /* and its new version in 1 */
    ck_assert_ptr_null(strstr(before, "|a-2\n"));
    /* B1 is large, the others small */
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    pol.target_file_bytes = 8 * f1[2].file_size;
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(f1[i].file_size < f1[2].file_size, i != 2);
    w2l__ice_compaction *k = prepare_with(t, &pol);
    ck_assert_ptr_nonnull(k);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    /* one output per partition with small files: 1 (A1 A2 A3) and 2 (C1 C2 D1); 3 has a
     * lone small file without deletes */
    ck_assert_uint_eq(ch.nfiles, 2);
    int per_g[4] = {0};
    for (size_t i = 0; i < ch.nfiles; i++) {
        const w2l__ice_data_file *o = &ch.files[i];
        ck_assert_int_eq(o->content, W2L_ICE_DATA);
        ck_assert_int_eq(o->spec_id, sid);
        ck_assert_uint_eq(o->npart, 1);
        ck_assert(!o->partition[0].is_null);
        ck_assert(o->partition[0].v.i32 >= 1 && o->partition[0].v.i32 <= 3);
        per_g[o->partition[0].v.i32]++;
        char dir[32];
        snprintf(dir, sizeof dir, "/data/g=%d/", (int)o->partition[0].v.i32);
        ck_assert_ptr_nonnull(strstr(o->path, dir));
        /* A1 A2 A3 minus 2 and 6 of the old version; C1 C2 D1 minus 10 */
        ck_assert_int_eq(o->record_count, o->partition[0].v.i32 == 1 ? 7 : 9);
    }
    ck_assert_int_eq(per_g[1], 1);
    ck_assert_int_eq(per_g[2], 1);
    ck_assert_int_eq(per_g[3], 0);
    /* B1's two deleted rows (100 by position, 150 by equality): one position delete file,
     * in B1's partition */
    ck_assert_uint_eq(ch.ndeletes, 1);
    ck_assert_int_eq(ch.deletes[0].content, W2L_ICE_POS_DELETES);
    ck_assert_int_eq(ch.deletes[0].spec_id, sid);
    ck_assert_uint_eq(ch.deletes[0].npart, 1);
    ck_assert_int_eq(ch.deletes[0].partition[0].v.i32, 1);
    ck_assert_int_eq(ch.deletes[0].record_count, 2);
    ck_assert_ptr_nonnull(strstr(ch.deletes[0].path, "/data/g=1/"));
    /* the small files of 1 and 2 and every delete file go; B1 and E1 stay */
    ck_assert_uint_eq(ch.nremoved, 9);
    const char *gone[] = {f1[0].path, f1[1].path, f1[3].path, f1[4].path, f2[0].path,
                          f2[1].path, d2[0].path, d2[1].path, d2[2].path};
    for (size_t i = 0; i < 9; i++) {
        int found = 0;
        for (size_t j = 0; j < ch.nremoved; j++) found |= strcmp(ch.removed[j], gone[i]) == 0;
        ck_assert_msg(found, "%s does not go", gone[i]);
    }
    const w2l__ice_maint_stats *st = w2l__ice_compaction_stats(k);
    ck_assert_int_eq(st->files_out, 3);
    ck_assert_int_eq(st->rows_out, 16);
    ck_assert_int_eq(st->deletes_out, 2);
    char *pd_path = w2l__strdup(ch.deletes[0].path);
    b1_path = f1[2].path;
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    /* the new position delete file is the only one left */
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &s, &err), err);
    ck_assert_uint_eq(s->ntasks, 4); /* the two outputs, B1, E1 */
    ck_assert_uint_eq(s->ndelete_files, 1);
    ck_assert_str_eq(s->delete_files[0]->path, pd_path);
    /* it names B1 alone, and applies to B1 alone */
    ck_assert_str_eq(s->delete_files[0]->referenced_data_file, f1[2].path);
    for (size_t i = 0; i < s->ntasks; i++) {
        int b1 = strcmp(s->tasks[i].file->path, f1[2].path) == 0;
        ck_assert_uint_eq(s->tasks[i].ndeletes, b1);
    }
    w2l__ice_scan_free(s);
    w2l__ice_compaction_free(k, io, 0);
    ck_assert_str_eq(pos_deletes_text(io, pd_path), "0 50 "); /* 100 and 150 */
    ck_assert(is_live(io, t->meta, f1[2].path));
    ck_assert(is_live(io, t->meta, f1[5].path));
    for (size_t i = 0; i < 9; i++) ck_assert(!is_live(io, t->meta, gone[i]));
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), 4);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1);
    ck_assert_int_eq(summary_i64(t->meta, "total-equality-deletes"), 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-position-deletes"), 2);
    /* the same rows, each in a file of its own partition */
    char *after = table_rows(io, t->meta);
    ck_assert_str_eq(after, want);
    long nalive = 0;
    for (size_t i = 0; i < pa_n; i++) nalive += pa_alive(&pa_rows[i]);
    ck_assert_int_eq(nalive, 205 + 9 + 4);
    ck_assert_int_eq(check_partitions(io, t->meta), nalive);
    w2l__free(after);
    w2l__free(before);
    w2l__free(want);
    /* nothing left to do: every partition holds one small file at most, and B1's deletes
     * are a position delete file of its own */
    ck_assert_ptr_null(prepare_with(t, &pol));
    /* an equality delete in partition 2: its one file is rewritten and the delete goes;
     * B1 stays with its position delete file, which stays too */
    pa_late = 1;
    long eq11[] = {11};
    w2l__ice_data_file d4 = put_eq_deletes(t, spec, &f1[3], eq11, 1);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, NULL, 0, &d4, 1, 4, &err), err);
    spec = w2l__ice_meta_spec(t->meta, sid);
    want = model_rows(pa_rows, pa_n, pa_alive);
    ck_assert_ptr_null(strstr(want, "11|2|19002|c-11"));
    before = table_rows(io, t->meta);
    ck_assert_str_eq(before, want);
    k = prepare_with(t, &pol);
    ck_assert_ptr_nonnull(k);
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_uint_eq(ch.nfiles, 1);
    ck_assert_int_eq(ch.files[0].partition[0].v.i32, 2);
    ck_assert_int_eq(ch.files[0].record_count, 8);
    ck_assert_uint_eq(ch.ndeletes, 0);
    ck_assert_uint_eq(ch.nremoved, 2); /* partition 2's file and the equality delete */
    for (size_t i = 0; i < ch.nremoved; i++) {
        ck_assert_str_ne(ch.removed[i], pd_path);
        ck_assert_str_ne(ch.removed[i], f1[2].path);
    }
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_compaction_free(k, io, 0);
    ck_assert(is_live(io, t->meta, pd_path));
    ck_assert(!is_live(io, t->meta, d4.path));
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 1);
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), 4);
    after = table_rows(io, t->meta);
    ck_assert_str_eq(after, want);
    ck_assert_int_eq(check_partitions(io, t->meta), nalive - 1);
    w2l__free(after);
    w2l__free(before);
    w2l__free(want);
    w2l__free(pd_path);
    w2l__arena_release(&fa);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}
END_TEST

/* files_of_an_older_spec_keep_it: spec 0 unpartitioned, spec 1 day(d) */
static prow os_rows[16];
static size_t os_n;

/* deleted: 3 (position, spec 0), 11 (equality in spec 1, day 19000; the same delete names
 * key 1, which spec 0 holds with the same day and keeps), 5 and 16 (equality in spec 0,
 * unpartitioned: every spec) */
static int os_alive(const prow *r)
{
    return r->id != 3 && r->id != 11 && r->id != 5 && r->id != 16;
}

START_TEST(files_of_an_older_spec_keep_it)
{
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = create_parted(&cat, &io, "evolved", "");
    const w2l__ice_spec *s0 = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    ck_assert_uint_eq(s0->nfields, 0);
    int32_t s0_id = s0->spec_id;
    os_n = 0;
    static const prow rows0[] = {{1, 0, 19000, "s"}, {2, 0, 19000, "s"}, {3, 0, 19001, "s"},
                                 {4, 0, 19000, "s"}, {5, 0, 19001, "s"}, {6, 0, 19001, "s"}};
    memcpy(os_rows, rows0, sizeof rows0);
    os_n = 6;
    w2l__ice_data_file f0[2] = {put_rows(t, s0, os_rows, 3), put_rows(t, s0, os_rows + 3, 3)};
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, f0, 2, NULL, 0, 1, &err), err);
    /* spec 1: day(d), the default from now on */
    w2l__ice_spec day;
    ck_assert_ok(w2l__ice_spec_parse("day(d)", w2l__ice_meta_current_schema(t->meta), &day, &err),
                 err);
    int changed = 0;
    ck_assert_ok(w2l__ice_meta_set_spec(t->meta, &day, &changed, &err), err);
    w2l__ice_spec_release(&day);
    ck_assert_int_eq(changed, 1);
    const w2l__ice_spec *s1 = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    s0 = w2l__ice_meta_spec(t->meta, s0_id);
    ck_assert_int_ne(s1->spec_id, s0_id);
    ck_assert_uint_eq(s1->nfields, 1);
    ck_assert_int_eq(s1->fields[0].type.id, W2L_TYPE_DATE);
    ck_assert_int_eq(s1->fields[0].transform.kind, W2L_ICE_T_DAY);
    const int32_t s1_id = s1->spec_id;
    static const prow rows1[] = {{10, 0, 19000, "t"}, {11, 0, 19000, "t"}, {12, 0, 19000, "t"},
                                 {13, 0, 19000, "t"}, {14, 0, 19000, "t"}, {15, 0, 19001, "t"},
                                 {16, 0, 19001, "t"}, {17, 0, 19001, "t"}};
    memcpy(os_rows + os_n, rows1, sizeof rows1);
    w2l__ice_data_file f1[4] = {
        put_rows(t, s1, os_rows + 6, 3),  /* T1: 10..12, day 19000 */
        put_rows(t, s1, os_rows + 9, 2),  /* T2: 13..14, day 19000 */
        put_rows(t, s1, os_rows + 11, 2), /* T3: 15..16, day 19001 */
        put_rows(t, s1, os_rows + 13, 1), /* T4: 17, day 19001 */
    };
    os_n += 8;
    long pos3[] = {2};
    w2l__ice_data_file d1 = fx_pos_deletes(t, &f0[0], pos3, 1, &fa);
    ck_assert_int_eq(d1.spec_id, s0_id);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, f1, 4, &d1, 1, 2, &err), err);
    s0 = w2l__ice_meta_spec(t->meta, s0_id);
    s1 = w2l__ice_meta_spec(t->meta, s1_id);
    /* later: an equality delete of spec 1's day 19000, and one of the unpartitioned spec,
     * which applies to every spec */
    long eq1[] = {1, 11}, eq0[] = {5, 16};
    w2l__ice_data_file d2[2] = {put_eq_deletes(t, s1, &f1[0], eq1, 2),
                                put_eq_deletes(t, s0, NULL, eq0, 2)};
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, NULL, 0, d2, 2, 3, &err), err);
    s1 = w2l__ice_meta_spec(t->meta, s1_id);
    char *want = model_rows(os_rows, os_n, os_alive);
    char *before = table_rows(io, t->meta);
    ck_assert_str_eq(before, want);
    ck_assert_ptr_nonnull(strstr(before, "1|0|19000|s-1\n")); /* spec 1's delete of 1 */
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    w2l__ice_compaction *k = prepare_with(t, &pol);
    ck_assert_ptr_nonnull(k);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    /* one output in spec 0, one per day in spec 1 */
    ck_assert_uint_eq(ch.nfiles, 3);
    ck_assert_uint_eq(ch.ndeletes, 0);
    int in0 = 0, day0 = 0, day1 = 0;
    for (size_t i = 0; i < ch.nfiles; i++) {
        const w2l__ice_data_file *o = &ch.files[i];
        if (o->spec_id == s0_id) {
            in0++;
            ck_assert_uint_eq(o->npart, 0);
            ck_assert_int_eq(o->record_count, 4); /* 1 2 4 6 */
            ck_assert_ptr_null(strstr(o->path, "d_day="));
            continue;
        }
        ck_assert_int_eq(o->spec_id, s1_id);
        ck_assert_uint_eq(o->npart, 1);
        if (o->partition[0].v.i32 == 19000) {
            day0++;
            ck_assert_int_eq(o->record_count, 4); /* 10 12 13 14 */
            ck_assert_ptr_nonnull(strstr(o->path, "/data/d_day=2022-01-08/"));
        } else {
            ck_assert_int_eq(o->partition[0].v.i32, 19001);
            day1++;
            ck_assert_int_eq(o->record_count, 2); /* 15 17 */
            ck_assert_ptr_nonnull(strstr(o->path, "/data/d_day=2022-01-09/"));
        }
    }
    ck_assert_int_eq(in0, 1);
    ck_assert_int_eq(day0, 1);
    ck_assert_int_eq(day1, 1);
    ck_assert_uint_eq(ch.nremoved, 6 + 3); /* every data file, every delete file */
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_compaction_free(k, io, 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), 3);
    ck_assert_int_eq(summary_i64(t->meta, "total-delete-files"), 0);
    ck_assert_int_eq(summary_i64(t->meta, "total-records"), 10);
    char *after = table_rows(io, t->meta);
    ck_assert_str_eq(after, want);
    ck_assert_int_eq(check_partitions(io, t->meta), 10);
    /* the table, read back from its metadata file, agrees */
    ck_assert_ok(w2l__ice_table_refresh(t, &err), err);
    ck_assert_int_eq(t->meta->default_spec_id, s1_id);
    char *reread = table_rows(io, t->meta);
    ck_assert_str_eq(reread, want);
    w2l__free(reread);
    w2l__free(after);
    w2l__free(before);
    w2l__free(want);
    w2l__arena_release(&fa);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}
END_TEST

START_TEST(a_lone_small_file_per_partition_stays)
{
    w2l_catalog *cat;
    w2l_fileio *io;
    w2l__ice_table *t = create_parted(&cat, &io, "lone", "g");
    const w2l__ice_spec *spec = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    static const prow rows[] = {P(1, 1, "x"), P(2, 2, "x"), P(3, 3, "x")};
    w2l__ice_data_file f[3];
    for (size_t i = 0; i < 3; i++) f[i] = put_rows(t, spec, &rows[i], 1);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, f, 3, NULL, 0, 1, &err), err);
    /* three small files, as the table counts them, but none shares a partition */
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    ck_assert_ptr_null(prepare_with(t, &pol));
    /* a second small file in partition 2: that partition, and only it, is rewritten */
    static const prow more[] = {P(4, 2, "y")};
    w2l__ice_data_file f2 = put_rows(t, spec, more, 1);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f2, 1, NULL, 0, 2, &err), err);
    w2l__ice_compaction *k = prepare_with(t, &pol);
    ck_assert_ptr_nonnull(k);
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_compaction_change(k, &ch);
    ck_assert_uint_eq(ch.nfiles, 1);
    ck_assert_int_eq(ch.files[0].partition[0].v.i32, 2);
    ck_assert_int_eq(ch.files[0].record_count, 2);
    ck_assert_uint_eq(ch.nremoved, 2);
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 3, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_compaction_free(k, io, 0);
    char *got = table_rows(io, t->meta);
    ck_assert_str_eq(got, "1|1|19001|x-1\n2|2|19002|x-2\n3|3|19003|x-3\n4|2|19002|y-4\n");
    ck_assert_int_eq(check_partitions(io, t->meta), 4);
    ck_assert_int_eq(summary_i64(t->meta, "total-data-files"), 3);
    w2l__free(got);
    w2l__arena_release(&fa);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}
END_TEST

/* Appends a snapshot (child of the current one) with the given summary to m. */
static void add_summary_snapshot(w2l__ice_meta *m, const char *op, const char *added_deletes,
                                 const char *total_deletes)
{
    w2l__ice_snapshot *v = w2l__realloc(m->snapshots, (m->nsnapshots + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    m->snapshots = v;
    w2l__ice_snapshot *x = &v[m->nsnapshots++];
    memset(x, 0, sizeof *x);
    x->snapshot_id = (int64_t)m->nsnapshots;
    x->parent_id = m->current_snapshot_id;
    x->seq = (int64_t)m->nsnapshots;
    x->manifest_list = w2l__strdup("unused.avro");
    x->schema_id = 0;
    w2l_error e;
    ck_assert_ok(w2l__ice_props_set(&x->summary, "operation", op, &e), e);
    ck_assert_ok(w2l__ice_props_set(&x->summary, "added-delete-files", added_deletes, &e), e);
    ck_assert_ok(w2l__ice_props_set(&x->summary, "total-delete-files", total_deletes, &e), e);
    ck_assert_ok(w2l__ice_props_set(&x->summary, "total-data-files", "40", &e), e);
    m->current_snapshot_id = x->snapshot_id;
}

START_TEST(delete_files_a_compaction_leaves_do_not_make_it_due)
{
    /* a partitioned table keeps a position delete file per partition after a compaction:
     * only the delete files added since count toward maintenance.compact-delete-files */
    w2l_schema *sc = w2l_schema_new(0);
    w2l_error e;
    ck_assert_ok(w2l_schema_add_field(sc, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &e), e);
    w2l__ice_meta *m;
    ck_assert_ok(w2l__ice_meta_new("/nowhere", sc, NULL, NULL, &m, &e), e);
    w2l__ice_policy pol;
    w2l__ice_policy_default(&pol);
    pol.compact_small_files = 1000000;
    pol.compact_delete_files = 16;
    pol.compact_delete_ratio = 0;
    add_summary_snapshot(m, "delete", "20", "20"); /* no compaction yet: the total counts */
    ck_assert_int_eq(w2l__ice_compact_due(m, &pol), 1);
    add_summary_snapshot(m, "replace", "12", "12"); /* it left 12 position delete files */
    ck_assert_int_eq(w2l__ice_compact_due(m, &pol), 0);
    add_summary_snapshot(m, "delete", "10", "22");
    ck_assert_int_eq(w2l__ice_compact_due(m, &pol), 0); /* 10 since */
    add_summary_snapshot(m, "delete", "6", "28");
    ck_assert_int_eq(w2l__ice_compact_due(m, &pol), 1); /* 16 since */
    w2l__ice_meta_free(m);
    w2l_schema_unref(sc);
}
END_TEST

Suite *suite_maintain(void)
{
    Suite *s = suite_create("maintain");
    TCase *tc = tcase_create("maintain");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, merging_bounds_the_manifests);
    tcase_add_loop_test(tc, a_pipeline_compacts_and_expires_by_itself, 0, 2);
    tcase_add_loop_test(tc, upserts_committed_during_a_compaction_win, 0, 3);
    tcase_add_test(tc, a_compactions_vector_merges_with_one_committed_meanwhile);
    tcase_add_test(tc, a_compaction_whose_input_changed_is_dropped);
    tcase_add_test(tc, orphans_go_but_not_what_recover_needs);
    tcase_add_test(tc, a_fault_at_any_write_of_maintenance_leaves_the_table_whole);
    tcase_add_loop_test(tc, large_files_get_position_deletes, 0, 2);
    tcase_add_test(tc, delete_files_a_compaction_leaves_do_not_make_it_due);
    tcase_add_test(tc, a_renamed_tables_old_metadata_is_not_the_new_tables);
    tcase_add_test(tc, partitions_are_compacted_apart);
    tcase_add_test(tc, files_of_an_older_spec_keep_it);
    tcase_add_test(tc, a_lone_small_file_per_partition_stays);
    suite_add_tcase(s, tc);
    return s;
}
