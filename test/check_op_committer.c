/*
 * lib/pipeline/op_committer.c through the real runtime (harness shared with
 * check_op_writer.c): one snapshot per table and checkpoint, summaries (job id, epoch,
 * checkpoint, source position), empty checkpoints, thousands of tables in one checkpoint,
 * a table dropped before its commit, and recovery — a commit failed by the fault file IO
 * stops the job naming table and checkpoint, w2l_recover() commits it exactly once
 * however often it runs, and a restarted job continues with a new epoch; format version 3
 * tables the same way, their deletes deletion vectors, one per data file; a catalog with
 * multi-table commits (version 2) gets each checkpoint's tables in bounded batches, its
 * conflicts re-prepared, a landed batch never committed again, a refusal table by table.
 */
#define OPS_HARNESS_ONLY
#include "check_op_writer.c"

static const char *summary(const w2l__ice_snapshot *s, const char *k)
{
    const char *v = w2l__ice_props_get(&s->summary, k);
    return v ? v : "";
}

/* The snapshot of checkpoint ck in table name's history (asserting there is exactly one),
 * copied out: key -> value of the keys asked for. */
static void snapshot_summary(const char *name, uint64_t ck, const char *key, char *out, size_t size)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    int found = 0;
    for (size_t i = 0; i < t->meta->nsnapshots; i++) {
        const w2l__ice_snapshot *s = &t->meta->snapshots[i];
        if (strtoull(summary(s, "w2l.checkpoint-id"), NULL, 10) != ck) continue;
        found++;
        snprintf(out, size, "%s", summary(s, key));
    }
    unload_table(t, io, cat);
    ck_assert_int_eq(found, 1);
}

START_TEST(summaries_and_empty_checkpoints)
{
    tbl t;
    tbl_init(&t, "s1");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    m_insert(p, &t, 1, "a", 1);
    commit_txn(p);
    ckpt_wait(p); /* 1: append */
    ckpt_wait(p); /* 2: empty */
    ckpt_wait(p); /* 3: empty */
    m_update(p, &t, 1, 1, "b", 2);
    commit_txn(p);
    ckpt_wait(p); /* 4: row delta */
    ck_assert_ok(w2l_pipeline_finish(p, &err), err); /* 5: empty */
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    size_t total;
    ck_assert_int_eq(snapshots_of_ckpt("s1", 2, &total), 0);
    ck_assert_int_eq(snapshots_of_ckpt("s1", 5, NULL), 0);
    ck_assert_uint_eq(total, 2);
    char v[256];
    snapshot_summary("s1", 1, "operation", v, sizeof v);
    ck_assert_str_eq(v, "append");
    snapshot_summary("s1", 4, "operation", v, sizeof v);
    ck_assert_str_eq(v, "overwrite");
    snapshot_summary("s1", 4, "w2l.job-id", v, sizeof v);
    ck_assert_str_eq(v, "test-job");
    snapshot_summary("s1", 4, "w2l.epoch", v, sizeof v);
    ck_assert_str_eq(v, "1");
    snapshot_summary("s1", 4, "w2l.source-position", v, sizeof v);
    ck_assert_str_eq(v, "{\"txn\":2}");
    snapshot_summary("s1", 4, "added-position-deletes", v, sizeof v); /* by the key index */
    ck_assert_str_eq(v, "1");
    snapshot_summary("s1", 4, "added-equality-deletes", v, sizeof v);
    ck_assert_str_eq(v, "");
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

START_TEST(thousands_of_tables_in_one_checkpoint)
{
    enum { NT = 500 };
    static char names[NT][16];
    w2l_schema *s = pk_schema();
    for (int k = 0; k < NT; k++) {
        snprintf(names[k], sizeof names[k], "x%d", k);
        create_table("db", names[k], s);
    }
    w2l_conf *c = make_conf(2, 4, 3);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < NT; k++) {
            w2l_value row[3];
            memset(row, 0, sizeof row);
            row[0].v.i64 = k;
            row[1].v.bytes.ptr = names[k];
            row[1].v.bytes.len = strlen(names[k]);
            row[2].v.i32 = round;
            w2l_change ch = { "db", names[k], s,    round ? W2L_OP_UPDATE_AFTER : W2L_OP_INSERT,
                              row,  3,        NULL, 0 };
            if (round) {
                w2l_change b = ch;
                w2l_value old[3];
                memcpy(old, row, sizeof old);
                old[2].v.i32 = 0;
                b.op = W2L_OP_UPDATE_BEFORE;
                b.row = old;
                ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &b, &err), err);
            }
            ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err), err);
            if (k % 50 == 49) commit_txn(p);
        }
        commit_txn(p);
        ckpt_wait(p);
    }
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    for (int k = 0; k < NT; k += 97) {
        readback *r = read_table(names[k]);
        ck_assert_int_eq(r->rows, 1);
        ck_assert(r->seen[k]);
        ck_assert_int_eq(r->n[k], 1);
        free(r);
        size_t total;
        ck_assert_int_eq(snapshots_of_ckpt(names[k], 1, &total), 1);
        ck_assert_int_eq(snapshots_of_ckpt(names[k], 2, NULL), 1);
        ck_assert_uint_eq(total, 2);
    }
    w2l_conf_free(c);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(dropped_table_is_not_resurrected)
{
    tbl a, b;
    tbl_init(&a, "keep");
    tbl_init(&b, "gone");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    m_insert(p, &a, 1, "a", 1);
    m_insert(p, &b, 1, "b", 1);
    commit_txn(p);
    /* the table goes away (as a DROP TABLE's handler would) before the checkpoint commits */
    w2l_fileio *io;
    w2l_catalog *cat;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    ck_assert_ok(w2l__catalog_drop(cat, "db", "gone", 0, &err), err);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&a);
    w2l_buf loc = {0};
    ck_assert_int_eq(w2l__catalog_load(cat, "db", "gone", &loc, &err), W2L_NOTFOUND);
    w2l_buf_release(&loc);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    w2l_conf_free(c);
    w2l_schema_unref(a.schema);
    w2l_schema_unref(b.schema);
}
END_TEST

/* _i: 0 = one committer, 1 = 2 ddl x 3 writers x 2 committers */
START_TEST(failed_commit_then_recover_exactly_once)
{
    fault_fileio_register();
    tbl t[2];
    tbl_init(&t[0], "f0");
    tbl_init(&t[1], "f1");
    w2l_conf *c = _i ? make_conf(2, 3, 2) : make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "commit-retries", "0", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int s = 0; s < 400; s++) random_step(p, &t[s % 2], 100);
    commit_txn(p);
    ckpt_wait(p); /* 1 committed */
    /* from now on no manifest list can be made (only committers make them), so commits
     * fail while the writers' manifests reach the state */
    fault_fileio_arm_where("/metadata/snap-", FAULT_CREATE, 0, 1);
    for (int s = 0; s < 400; s++) random_step(p, &t[s % 2], 100);
    commit_txn(p);
    uint64_t id;
    w2l_rc rc = w2l_pipeline_checkpoint(p, 1, &id, &err);
    ck_assert_int_eq(rc, W2L_IO);
    ck_assert_msg(strstr(err.msg, "checkpoint 2") &&
                      (strstr(err.msg, "db.f0") || strstr(err.msg, "db.f1")),
                  "%s", err.msg);
    ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    w2l_pipeline_free(p);
    fault_fileio_disarm_all();
    /* the lake: no table reached checkpoint 2 */
    ck_assert_int_eq(snapshots_of_ckpt("f0", 2, NULL) + snapshots_of_ckpt("f1", 2, NULL), 0);
    /* recover commits checkpoint 2 from the state, once, however often it runs */
    ck_assert_ok(w2l_recover(c, &err), err);
    for (int k = 0; k < 2; k++) {
        assert_table_matches(&t[k]);
        ck_assert_int_eq(snapshots_of_ckpt(t[k].name, 2, NULL), 1);
    }
    size_t total0, total1;
    snapshots_of_ckpt("f0", 2, &total0);
    snapshots_of_ckpt("f1", 2, &total1);
    ck_assert_ok(w2l_recover(c, &err), err);
    size_t again0, again1;
    snapshots_of_ckpt("f0", 2, &again0);
    snapshots_of_ckpt("f1", 2, &again1);
    ck_assert_uint_eq(again0, total0);
    ck_assert_uint_eq(again1, total1);
    for (int k = 0; k < 2; k++) assert_table_matches(&t[k]);
    char v[64];
    snapshot_summary("f0", 2, "w2l.epoch", v, sizeof v);
    ck_assert_str_eq(v, "2");
    /* a restarted job continues after checkpoint 2 (its first notify re-checks 2: skipped) */
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int s = 0; s < 400; s++) random_step(p, &t[s % 2], 100);
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    for (int k = 0; k < 2; k++) {
        assert_table_matches(&t[k]);
        ck_assert_int_eq(snapshots_of_ckpt(t[k].name, 2, NULL), 1);
        ck_assert_int_eq(snapshots_of_ckpt(t[k].name, 3, NULL), 1);
    }
    snapshot_summary("f1", 3, "w2l.epoch", v, sizeof v);
    ck_assert_str_eq(v, "2");
    w2l_conf_free(c);
    for (int k = 0; k < 2; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

START_TEST(state_behind_catalog_never_commits_twice)
{
    /* the state is rolled back to an older sealed checkpoint whose files the table has
     * already: the restarted committer re-checks the ancestry and skips them */
    tbl t;
    tbl_init(&t, "back");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long i = 0; i < 50; i++) m_insert(p, &t, i, "x", (int)i);
    commit_txn(p);
    ckpt_wait(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err); /* 2: empty */
    w2l_pipeline_free(p);
    /* LATEST back to 1: a restart would re-commit checkpoint 1 without the check */
    char path[700];
    snprintf(path, sizeof path, "%s/_w2l/state/LATEST", wh);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("1\n", f);
    fclose(f);
    ck_assert_ok(w2l_recover(c, &err), err);
    ck_assert_int_eq(snapshots_of_ckpt("back", 1, NULL), 1);
    assert_table_matches(&t);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* The live delete files of table name's current snapshot are deletion vectors of format
 * version 3 tables only: each a Puffin blob that reads back (CRC, cardinality), at most one
 * per data file, every one naming a live data file; the snapshots' row ids follow one
 * another. Returns the number of vectors. */
static size_t assert_v3_deletes(const char *name)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    ck_assert_int_eq(t->meta->format_version, 3);
    w2l__ice_scan *scan;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &scan, &err), err);
    size_t ndv = scan->ndelete_files;
    for (size_t i = 0; i < scan->ndelete_files; i++) {
        const w2l__ice_data_file *d = scan->delete_files[i];
        ck_assert_msg(w2l__ice_is_dv(d),
                      "%s: delete file %s (content %d, %s) is no deletion vector", name, d->path,
                      d->content, d->format);
        ck_assert_ptr_nonnull(d->referenced_data_file);
        uint64_t *v;
        size_t n;
        ck_assert_ok(w2l__ice_dv_read(io, d, &v, &n, &err), err);
        ck_assert_uint_gt(n, 0);
        w2l__free(v);
        int live = 0;
        for (size_t k = 0; k < scan->ntasks; k++)
            live |= !strcmp(scan->tasks[k].file->path, d->referenced_data_file);
        ck_assert_msg(live, "%s: deletion vector %s names %s, no live data file", name, d->path,
                      d->referenced_data_file);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(scan->delete_files[j]->referenced_data_file,
                                 d->referenced_data_file) != 0,
                          "%s: two deletion vectors of %s", name, d->referenced_data_file);
    }
    for (size_t k = 0; k < scan->ntasks; k++) ck_assert(scan->tasks[k].file->has_first_row_id);
    w2l__ice_scan_free(scan);
    for (size_t i = 0; i < t->meta->nsnapshots; i++) {
        const w2l__ice_snapshot *sn = &t->meta->snapshots[i];
        ck_assert(sn->has_row_range);
        const w2l__ice_snapshot *pa = w2l__ice_meta_snapshot(t->meta, sn->parent_id);
        if (pa) ck_assert_int_eq(sn->first_row_id, pa->first_row_id + pa->added_rows);
    }
    unload_table(t, io, cat);
    return ndv;
}

/* Format version 3: updates and deletes of earlier checkpoints' rows become deletion
 * vectors merged at commit; a failed commit recovered exactly once keeps them one per
 * data file, and the table reads back as the model. */
START_TEST(v3_deletion_vectors_exactly_once)
{
    fault_fileio_register();
    table_format_version = "3";
    tbl t[2];
    tbl_init(&t[0], "v0");
    tbl_init(&t[1], "v1");
    w2l_conf *c = _i ? make_conf(2, 3, 2) : make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "commit-retries", "0", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    size_t dvs = 0;
    for (int ck = 0; ck < 4; ck++) {
        for (int s = 0; s < 300; s++) random_step(p, &t[s % 2], 60);
        commit_txn(p);
        ckpt_wait(p);
        for (int k = 0; k < 2; k++) {
            assert_table_matches(&t[k]);
            dvs += assert_v3_deletes(t[k].name);
        }
    }
    ck_assert_uint_gt(dvs, 0); /* the workload did update rows of earlier checkpoints */
    fault_fileio_arm_where("/metadata/snap-", FAULT_CREATE, 0, 1);
    for (int s = 0; s < 300; s++) random_step(p, &t[s % 2], 60);
    commit_txn(p);
    uint64_t id;
    ck_assert_int_eq(w2l_pipeline_checkpoint(p, 1, &id, &err), W2L_IO);
    ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    w2l_pipeline_free(p);
    fault_fileio_disarm_all();
    ck_assert_ok(w2l_recover(c, &err), err);
    ck_assert_ok(w2l_recover(c, &err), err);
    for (int k = 0; k < 2; k++) {
        assert_table_matches(&t[k]);
        assert_v3_deletes(t[k].name);
        ck_assert_int_eq(snapshots_of_ckpt(t[k].name, 5, NULL), 1);
    }
    /* a restarted job rebuilds its key index from the vectors and goes on */
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int s = 0; s < 300; s++) random_step(p, &t[s % 2], 60);
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    for (int k = 0; k < 2; k++) {
        assert_table_matches(&t[k]);
        assert_v3_deletes(t[k].name);
    }
    w2l_conf_free(c);
    for (int k = 0; k < 2; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

/* ---- multi-table commits: a catalog of version 2 over the hadoop layout ---- */

/* "batchy": the hadoop catalog with a commit_tables that commits the items one by one
 * (atomic enough for one process) and records each batch; scripted outcomes first: CONFLICT
 * for every table without applying anything (a 409), or W2L_NOTFOUND (no batches here). */
enum { BATCH_OK, BATCH_409, BATCH_REFUSED };
static int batch_script[8];
static size_t batch_nscript, batch_calls, batch_sizes[256], batch_tables;

static w2l_rc batchy_commit_tables(w2l_catalog *self, w2l_catalog_commit *items, size_t n,
                                   w2l_error *e)
{
    int what = batch_calls < batch_nscript ? batch_script[batch_calls] : BATCH_OK;
    if (batch_calls < 256) batch_sizes[batch_calls] = n;
    batch_calls++;
    if (what == BATCH_REFUSED) return w2l_error_set(e, W2L_NOTFOUND, "batchy: no batches");
    for (size_t i = 0; i < n; i++) {
        w2l_catalog_commit *it = &items[i];
        if (what == BATCH_409) {
            it->rc = w2l_error_set(&it->err, W2L_CONFLICT, "batchy: injected 409");
            continue;
        }
        it->rc = w2l__catalog_hadoop.commit_table(self, it->ns, it->table, it->base,
                                                  it->metadata, it->len, &it->new_location,
                                                  &it->err);
        if (it->rc == W2L_OK) batch_tables++;
    }
    return W2L_OK;
}

static w2l_catalog_methods batchy;

static void batchy_register(const int *script, size_t n)
{
    if (!batchy.name) {
        batchy = w2l__catalog_hadoop;
        batchy.version = W2L_CATALOG_METHODS_V2;
        batchy.name = "batchy";
        batchy.commit_tables = batchy_commit_tables;
        ck_assert_int_eq(w2l_catalog_register(&batchy, 0), W2L_OK);
    }
    memcpy(batch_script, script, n * sizeof *script);
    batch_nscript = n;
    batch_calls = batch_tables = 0;
}

/* Seven tables, a batch size of three: each checkpoint's tables in batches of at most
 * three; a 409 re-prepares the batch's tables on the reloaded tables, a catalog that
 * refuses batches gets the tables one by one; every table has each of its checkpoints
 * once and equals its model. Loop 1: format version 3 tables, their
 * deletes deletion vectors merged per attempt inside the batch. */
START_TEST(checkpoint_tables_in_batches)
{
    enum { NT = 7, CK = 5 };
    static const char *names[NT] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6"};
    if (_i) table_format_version = "3";
    const int script[] = {BATCH_OK, BATCH_OK, BATCH_OK, BATCH_409};
    batchy_register(script, 4);
    tbl t[NT];
    for (int k = 0; k < NT; k++) tbl_init(&t[k], names[k]);
    w2l_conf *c = make_conf(1, 2, 1);
    ck_assert_ok(w2l_conf_set(c, "catalog", "batchy", &err), err);
    ck_assert_ok(w2l_conf_set(c, "catalog.rest.transaction-max-tables", "3", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int ck = 0; ck < CK; ck++) {
        for (int s = 0; s < 70 * NT; s++) random_step(p, &t[s % NT], 40);
        commit_txn(p);
        ckpt_wait(p);
    }
    size_t before_refusal = batch_calls;
    for (size_t i = 0; i < before_refusal && i < 256; i++) ck_assert_uint_le(batch_sizes[i], 3);
    /* 5 checkpoints x 3 batches (3+3+1), and the one answered 409 again */
    ck_assert_uint_eq(before_refusal, CK * 3 + 1);
    ck_assert_uint_eq(batch_tables, CK * NT);
    /* then a catalog that refuses batches: table by table from there on */
    const int refuse[] = {BATCH_REFUSED};
    batchy_register(refuse, 1);
    for (int ck = 0; ck < 2; ck++) {
        for (int s = 0; s < 70 * NT; s++) random_step(p, &t[s % NT], 40);
        commit_txn(p);
        ckpt_wait(p);
    }
    ck_assert_uint_eq(batch_calls, 1); /* refused once, never asked again */
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    size_t dvs = 0;
    for (int k = 0; k < NT; k++) {
        assert_table_matches(&t[k]);
        for (uint64_t id = 1; id <= CK + 2; id++)
            ck_assert_int_eq(snapshots_of_ckpt(names[k], id, NULL), 1);
        if (_i) dvs += assert_v3_deletes(names[k]);
    }
    if (_i) ck_assert_uint_gt(dvs, 0);
    w2l_conf_free(c);
    for (int k = 0; k < NT; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

Suite *suite_op_committer(void)
{
    Suite *s = suite_create("op_committer");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, summaries_and_empty_checkpoints);
    tcase_add_test(basic, thousands_of_tables_in_one_checkpoint);
    tcase_add_test(basic, dropped_table_is_not_resurrected);
    tcase_add_loop_test(basic, checkpoint_tables_in_batches, 0, 2);
    tcase_set_timeout(basic, 180);
    suite_add_tcase(s, basic);
    TCase *faults = tcase_create("faults");
    tcase_add_checked_fixture(faults, setup, teardown);
    tcase_add_loop_test(faults, failed_commit_then_recover_exactly_once, 0, 2);
    tcase_add_test(faults, state_behind_catalog_never_commits_twice);
    tcase_add_loop_test(faults, v3_deletion_vectors_exactly_once, 0, 2);
    tcase_set_timeout(faults, 120);
    suite_add_tcase(s, faults);
    return s;
}
