/*
 * lib/iceberg: table metadata round trips, every operation read back through our own scan,
 * two writers racing on one table (one wins, the other gets W2L_CONFLICT, retries, nothing
 * lost or doubled), crashes at every file-system step of a commit (the table stays at its
 * previous snapshot, readable), catalog rename / drop / purge / list.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen/ice_fixture.h"
#include "support/support.h"

static const char *wh;
static w2l_fileio *io;
static w2l_catalog *cat;
static w2l__arena arena;

static void setup(void)
{
    w2l_error err;
    char *d = strdup(tmpdir_make("ice"));
    wh = d;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    w2l__arena_init(&arena, 1 << 16);
}

static void teardown(void)
{
    w2l__arena_release(&arena);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    tmpdir_remove(wh);
    free((char *)wh);
}

static w2l__ice_table *create(const char *name, const w2l__ice_spec *spec)
{
    w2l_error err;
    w2l_schema *s = fx_schema();
    char *loc = w2l__ice_table_dir(wh, "db", name);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(cat, io, loc, "db", name, s, spec, NULL, &t, &err), err);
    w2l__free(loc);
    w2l_schema_unref(s);
    return t;
}

/* ids of the current snapshot, through our scan, as a bitmap of 0..255 plus a count */
typedef struct ids {
    unsigned char seen[256];
    long n, dup;
    char names[256][24];
} ids;

static int collect(void *ctx, const w2l_value *row, size_t n)
{
    ids *x = ctx;
    (void)n;
    long id = (long)row[0].v.i64;
    ck_assert(id >= 0 && id < 256);
    if (x->seen[id]) x->dup++;
    x->seen[id] = 1;
    snprintf(x->names[id], sizeof x->names[id], "%.*s", (int)row[1].v.bytes.len,
             row[1].v.bytes.ptr);
    x->n++;
    return 0;
}

static void scan_ids(w2l_fileio *fio, const w2l__ice_meta *m, int64_t snap, ids *out)
{
    w2l_error err;
    memset(out, 0, sizeof *out);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(fio, m, snap, NULL, NULL, &s, &err), err);
    ck_assert_ok(w2l__ice_scan_read(fio, s, collect, out, &err), err);
    w2l__ice_scan_free(s);
    ck_assert_int_eq(out->dup, 0);
}

START_TEST(meta_round_trip)
{
    w2l_error err;
    w2l__ice_table *t = create("rt", NULL);
    w2l__ice_data_file f = fx_data(t, 0, 3, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    char *a, *b;
    size_t la, lb;
    ck_assert_ok(w2l__ice_meta_print(t->meta, &a, &la, &err), err);
    w2l__ice_meta *m;
    ck_assert_ok(w2l__ice_meta_parse(a, la, &m, &err), err);
    ck_assert_ok(w2l__ice_meta_print(m, &b, &lb, &err), err);
    ck_assert_str_eq(a, b);
    char *a0 = w2l__strdup(a);
    ck_assert_int_eq(m->format_version, 2);
    ck_assert_int_eq(m->last_seq, 1);
    ck_assert_int_eq(m->last_column_id, 7);
    ck_assert_int_eq(m->nsnapshots, 1);
    ck_assert_int_eq(m->snapshots[0].snapshot_id, m->current_snapshot_id);
    ck_assert_str_eq(w2l__ice_props_get(&m->snapshots[0].summary, "w2l.checkpoint-id"), "1");
    ck_assert_str_eq(w2l__ice_props_get(&m->snapshots[0].summary, "total-records"), "3");
    ck_assert_int_eq(m->nmeta_log, 1);
    ck_assert_int_eq(m->nrefs, 1);
    size_t nid;
    ck_assert_int_eq(w2l_schema_identifier(w2l__ice_meta_current_schema(m), &nid)[0], 1);
    w2l__free(a);
    w2l__free(b);
    w2l__ice_meta_free(m);
    /* members this library does not know survive parse and print */
    const char *extra = "\"statistics\":[{\"snapshot-id\":1}],";
    char *with = w2l__asprintf("{%s%s", extra, a0 + 1);
    ck_assert_ok(w2l__ice_meta_parse(with, strlen(with), &m, &err), err);
    ck_assert_ok(w2l__ice_meta_print(m, &b, &lb, &err), err);
    ck_assert_ptr_nonnull(strstr(b, "\"statistics\""));
    w2l__free(b);
    w2l__free(with);
    w2l__free(a0);
    w2l__ice_meta_free(m);
    w2l__ice_table_free(t);
}
END_TEST

START_TEST(operations_read_back)
{
    w2l_error err;
    ids x;
    w2l__ice_table *t = create("ops", NULL);
    w2l__ice_data_file f0 = fx_data(t, 0, 10, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 1, &err), err);
    int64_t first = t->meta->current_snapshot_id;
    /* row delta: delete 2,3 by equality, re-insert 2, insert 10,11 and delete 11 by position */
    w2l__ice_data_file nf[2] = {fx_data(t, 2, 3, "upd", &arena), fx_data(t, 10, 12, NULL, &arena)};
    long del[] = {2, 3}, pos[] = {1};
    w2l__ice_data_file dl[2] = { fx_eq_deletes(t, del, 2, &arena),
                                 fx_pos_deletes(t, &nf[1], pos, 1, &arena) };
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, nf, 2, dl, 2, 2, &err), err);
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 10);
    ck_assert(!x.seen[3] && !x.seen[11] && x.seen[2] && x.seen[10]);
    ck_assert_str_eq(x.names[2], "upd-2");
    ck_assert_str_eq(w2l__ice_props_get(&t->meta->snapshots[1].summary, "operation"), "overwrite");
    ck_assert_str_eq(w2l__ice_props_get(&t->meta->snapshots[1].summary, "total-delete-files"), "2");
    /* time travel: the first snapshot still has 0..9 */
    scan_ids(io, t->meta, first, &x);
    ck_assert_int_eq(x.n, 10);
    ck_assert(x.seen[3] && !x.seen[10]);
    /* schema change: ids never reused, renamed column keeps its id */
    w2l__ice_schema_change sc[] = {
        { W2L_ICE_ADD_COLUMN, "note", NULL, { W2L_TYPE_STRING, 0, 0 }, 0 },
        { W2L_ICE_DROP_COLUMN, "note", NULL, { 0, 0, 0 }, 0 },
        { W2L_ICE_ADD_COLUMN, "note2", NULL, { W2L_TYPE_STRING, 0, 0 }, 0 },
        { W2L_ICE_RENAME_COLUMN, "qty", "quantity", { 0, 0, 0 }, 0 },
        { W2L_ICE_WIDEN_COLUMN, "quantity", NULL, { W2L_TYPE_LONG, 0, 0 }, 0 },
        { W2L_ICE_MAKE_OPTIONAL, "name", NULL, { 0, 0, 0 }, 0 }
    };
    w2l__ice_change c;
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = sc;
    c.nschema_changes = 6;
    ck_assert_ok(w2l__ice_table_commit(t, &c, 2, &err), err);
    w2l__ice_change_release(&c, io, 0);
    const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
    ck_assert_int_eq(w2l_schema_field(s, (size_t)w2l_schema_index_of_name(s, "note2"))->id, 9);
    ck_assert_int_eq(w2l_schema_field(s, (size_t)w2l_schema_index_of_name(s, "quantity"))->id, 3);
    ck_assert_int_eq(t->meta->last_column_id, 9);
    ck_assert_int_eq(t->meta->current_schema_id, 1);
    /* illegal changes are refused */
    w2l__ice_schema_change bad[] = {{W2L_ICE_DROP_COLUMN, "id", NULL, {0, 0, 0}, 0}};
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = bad;
    c.nschema_changes = 1;
    ck_assert_int_eq(w2l__ice_table_commit(t, &c, 0, &err), W2L_SCHEMA);
    w2l__ice_change_release(&c, io, 0);
    w2l__ice_schema_change narrow[] = {
        { W2L_ICE_WIDEN_COLUMN, "quantity", NULL, { W2L_TYPE_INT, 0, 0 }, 0 }
    };
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = narrow;
    c.nschema_changes = 1;
    ck_assert_int_eq(w2l__ice_table_commit(t, &c, 0, &err), W2L_SCHEMA);
    w2l__ice_change_release(&c, io, 0);
    /* a new key (ADD PRIMARY KEY): its column required, the identifier moved; one change
     * may drop the old key's column when it sets the identifier without it */
    w2l__ice_schema_change rekey[] = {{W2L_ICE_MAKE_REQUIRED, "quantity", NULL, {0, 0, 0}, 0},
                                      {W2L_ICE_SET_IDENTIFIER, "quantity", NULL, {0, 0, 0}, 0}};
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = rekey;
    c.nschema_changes = 2;
    ck_assert_ok(w2l__ice_table_commit(t, &c, 0, &err), err);
    w2l__ice_change_release(&c, io, 0);
    s = w2l__ice_meta_current_schema(t->meta);
    size_t nid;
    const int32_t *kid = w2l_schema_identifier(s, &nid);
    ck_assert_uint_eq(nid, 1);
    ck_assert_int_eq(kid[0], 3);
    ck_assert(w2l_schema_field(s, (size_t)w2l_schema_index_of_name(s, "quantity"))->required);
    ck_assert_int_eq(t->meta->current_schema_id, 2);
    w2l__ice_schema_change back[] = {{W2L_ICE_SET_IDENTIFIER, "id", NULL, {0, 0, 0}, 0},
                                     {W2L_ICE_MAKE_OPTIONAL, "quantity", NULL, {0, 0, 0}, 0}};
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = back;
    c.nschema_changes = 2;
    ck_assert_ok(w2l__ice_table_commit(t, &c, 0, &err), err);
    w2l__ice_change_release(&c, io, 0);
    s = w2l__ice_meta_current_schema(t->meta);
    kid = w2l_schema_identifier(s, &nid);
    ck_assert_uint_eq(nid, 1);
    ck_assert_int_eq(kid[0], 1);
    ck_assert(!w2l_schema_field(s, (size_t)w2l_schema_index_of_name(s, "quantity"))->required);
    /* a key over an optional column is refused */
    w2l__ice_schema_change opt[] = {{W2L_ICE_SET_IDENTIFIER, "quantity", NULL, {0, 0, 0}, 0}};
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = opt;
    c.nschema_changes = 1;
    ck_assert_int_eq(w2l__ice_table_commit(t, &c, 0, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "'quantity'") && strstr(err.msg, "must be required"), "%s",
                  err.msg);
    w2l__ice_change_release(&c, io, 0);
    /* old files read under the new schema (widened, renamed) */
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 10);
    /* truncate, then append */
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_TRUNCATE, NULL, 0, NULL, 0, 3, &err), err);
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 0);
    const w2l__ice_snapshot *ts = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "operation"), "delete");
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "total-records"), "0");
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "total-data-files"), "0");
    w2l__ice_data_file f2 = fx_data(t, 20, 23, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f2, 1, NULL, 0, 4, &err), err);
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 3);
    ck_assert(x.seen[20] && x.seen[22]);
    /* truncate that brings the rows written after it, in one snapshot */
    w2l__ice_data_file f3 = fx_data(t, 30, 32, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_TRUNCATE, &f3, 1, NULL, 0, 5, &err), err);
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 2);
    ck_assert(x.seen[30] && x.seen[31] && !x.seen[20]);
    ts = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "operation"), "overwrite");
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "total-records"), "2");
    ck_assert_str_eq(w2l__ice_props_get(&ts->summary, "total-data-files"), "1");
    w2l__ice_table_free(t);
}
END_TEST

/* A truncate rewrites every manifest with live files, however many (one per commit). */
START_TEST(truncate_of_many_manifests)
{
    w2l_error err;
    ids x;
    w2l__ice_table *t = create("many", NULL);
    for (long i = 0; i < 80; i++) {
        w2l__ice_data_file f = fx_data(t, i, i + 1, NULL, &arena);
        ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, (uint64_t)i + 1, &err), err);
    }
    w2l__ice_data_file f = fx_data(t, 100, 102, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_TRUNCATE, &f, 1, NULL, 0, 81, &err), err);
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 2);
    ck_assert(x.seen[100] && x.seen[101] && !x.seen[0] && !x.seen[79]);
    w2l__ice_table_free(t);
}
END_TEST

START_TEST(partitioned_deletes_stay_in_partition)
{
    w2l_error err;
    w2l__ice_pfield pf[] = {{1, 0, "id_bucket", {W2L_ICE_T_BUCKET, 4}, {0, 0, 0}}};
    w2l__ice_spec spec = {0, 1, pf};
    w2l__ice_table *t = create("parted", &spec);
    w2l__ice_data_file fs[16];
    for (long i = 0; i < 16; i++) fs[i] = fx_data(t, i, i + 1, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, fs, 16, NULL, 0, 1, &err), err);
    long d[] = {5};
    w2l__ice_data_file df = fx_eq_deletes(t, d, 1, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_ROW_DELTA, NULL, 0, &df, 1, 2, &err), err);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &s, &err), err);
    ck_assert_int_eq(s->ntasks, 16);
    size_t with = 0;
    for (size_t i = 0; i < s->ntasks; i++) with += s->tasks[i].ndeletes;
    /* the delete applies only to the files of its bucket */
    ck_assert(with >= 1 && with < 16);
    w2l__ice_scan_free(s);
    ids x;
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 15);
    ck_assert(!x.seen[5]);
    /* bucket transform: Iceberg's reference values */
    w2l_value v = {0}, o;
    v.v.i32 = 34;
    ck_assert_ok(w2l__ice_transform_apply((w2l__ice_transform){W2L_ICE_T_BUCKET, 16},
                                          (w2l_type){W2L_TYPE_INT, 0, 0}, &v, &o, &err), err);
    ck_assert_uint_eq(w2l__ice_murmur3("iceberg", 7), 1210000089u);
    ck_assert_int_eq(o.v.i32, 2017239379 % 16);
    w2l__ice_table_free(t);
}
END_TEST

START_TEST(racing_writers_both_land)
{
    w2l_error err;
    w2l__ice_table *a = create("race", NULL), *b;
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "race", &b, &err), err);
    w2l__ice_data_file fa = fx_data(a, 0, 5, "a", &arena), fb = fx_data(b, 5, 10, "b", &arena);
    /* a wins */
    ck_assert_ok(fx_commit(a, W2L_ICE_OP_APPEND, &fa, 1, NULL, 0, 1, &err), err);
    /* b's single attempt loses */
    w2l__ice_change c;
    w2l__ice_change_init(&c, W2L_ICE_OP_APPEND);
    c.files = &fb;
    c.nfiles = 1;
    ck_assert_int_eq(w2l__ice_table_try_commit(b, &c, &err), W2L_CONFLICT);
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    /* b now holds the winner's metadata; the retry re-applies its append on top */
    ck_assert_ok(w2l__ice_table_commit(b, &c, 3, &err), err);
    w2l__ice_change_release(&c, io, 0);
    ids x;
    scan_ids(io, b->meta, -1, &x);
    ck_assert_int_eq(x.n, 10);
    for (int i = 0; i < 10; i++) ck_assert(x.seen[i]);
    ck_assert_int_eq(b->meta->nsnapshots, 2);
    ck_assert_int_eq(b->meta->last_seq, 2);
    ck_assert_str_eq(w2l__ice_props_get(&b->meta->snapshots[1].summary, "total-records"), "10");
    /* the loser's first manifest list was removed, nothing else is left behind */
    w2l__ice_table_free(a);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "race", &a, &err), err);
    ck_assert_int_eq(a->meta->current_snapshot_id, b->meta->current_snapshot_id);
    w2l__ice_table_free(a);
    w2l__ice_table_free(b);
}
END_TEST

/* Many concurrent writers (threads would need a thread-safe fixture; processes do it):
 * four children each append their own rows 10 times with retries. */
START_TEST(four_processes_append)
{
    w2l_error err;
    w2l__ice_table *t = create("many", NULL);
    w2l__ice_table_free(t);
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            w2l__ice_table *mt;
            if (w2l__ice_table_load(cat, io, "db", "many", &mt, &err) != W2L_OK) _exit(1);
            for (int j = 0; j < 10; j++) {
                long id = k * 10 + j;
                w2l__ice_data_file f = fx_data(mt, id, id + 1, NULL, &arena);
                w2l_rc rc =
                    W2L_CONFLICT; /* fx_commit retries 5 times; 4 busy writers may need more */
                for (int tries = 0; rc == W2L_CONFLICT && tries < 20; tries++)
                    rc = fx_commit(mt, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, j, &err);
                if (rc != W2L_OK) _exit(2);
                if (w2l__ice_table_refresh(mt, &err) != W2L_OK) _exit(3);
            }
            w2l__ice_table_free(mt);
            _exit(0);
        }
    }
    for (int k = 0; k < 4; k++) {
        int st;
        waitpid(kids[k], &st, 0);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "many", &t, &err), err);
    ids x;
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 40);
    ck_assert_int_eq(t->meta->nsnapshots, 40);
    ck_assert_int_eq(t->meta->last_seq, 40);
    w2l__ice_table_free(t);
}
END_TEST

/* Fail the _i-th create/write/close of a row-delta commit: the commit either happens or the
 * table stays at its previous snapshot, and both are readable. */
START_TEST(crash_at_every_step_keeps_table_readable)
{
    w2l_error err;
    fault_fileio_register();
    w2l_fileio *fio;
    ck_assert_ok(w2l_fileio_open("fault", NULL, &fio, &err), err);
    w2l_catalog *fcat;
    ck_assert_ok(w2l__catalog_open("hadoop", NULL, wh, fio, &fcat, &err), err);
    w2l_schema *s = fx_schema();
    char *loc = w2l__ice_table_dir(wh, "db", "crash");
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(fcat, fio, loc, "db", "crash", s, NULL, NULL, &t, &err),
                 err);
    w2l__free(loc);
    w2l_schema_unref(s);
    w2l__ice_data_file f0 = fx_data(t, 0, 5, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 1, &err), err);
    int64_t before = t->meta->current_snapshot_id;
    w2l__ice_data_file f1 = fx_data(t, 5, 8, NULL, &arena);
    long del[] = {1};
    w2l__ice_data_file d1 = fx_eq_deletes(t, del, 1, &arena);
    fault_fileio_arm(fio, FAULT_CREATE | FAULT_WRITE | FAULT_CLOSE, _i, 1);
    w2l_rc rc = fx_commit(t, W2L_ICE_OP_ROW_DELTA, &f1, 1, &d1, 1, 2, &err);
    long calls = fault_fileio_calls(fio);
    fault_fileio_disarm(fio);
    ck_assert_msg(rc == W2L_OK || rc == W2L_IO, "%s: %s", w2l_rc_name(rc), err.msg);
    w2l__ice_table *r;
    ck_assert_ok(w2l__ice_table_load(fcat, fio, "db", "crash", &r, &err), err);
    ids x;
    scan_ids(fio, r->meta, -1, &x);
    if (rc == W2L_OK) {
        ck_assert_int_ne(r->meta->current_snapshot_id, before);
        ck_assert_int_eq(x.n, 7);
    } else {
        ck_assert_int_eq(r->meta->current_snapshot_id, before);
        ck_assert_int_eq(x.n, 5);
    }
    /* the range covers every step: the last index lets the commit through */
    if (_i == 15) ck_assert_msg(rc == W2L_OK && calls <= 15, "commit used %ld file steps", calls);
    w2l__ice_table_free(r);
    w2l__ice_table_free(t);
    w2l__catalog_close(fcat);
    w2l_fileio_close(fio);
}
END_TEST

static int count_tables(void *ctx, const char *ns, const char *table)
{
    (void)ns, (void)table;
    (*(int *)ctx)++;
    return 0;
}

START_TEST(catalog_rename_drop_purge)
{
    w2l_error err;
    w2l__ice_table *t = create("r1", NULL);
    w2l__ice_data_file f = fx_data(t, 0, 4, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    w2l__ice_table_free(t);
    w2l__ice_table_free(create("other", NULL));
    w2l_schema *sch = fx_schema();
    ck_assert_int_eq(
        w2l__ice_table_create(cat, io, "/nowhere", "db", "other", sch, NULL, NULL, &t, &err),
        W2L_EXISTS);
    w2l_schema_unref(sch);
    int n = 0;
    ck_assert_ok(w2l__catalog_list(cat, NULL, count_tables, &n, &err), err);
    ck_assert_int_eq(n, 2);
    ck_assert_ok(w2l__catalog_rename(cat, "db", "r1", "db2", "r2", &err), err);
    ck_assert_int_eq(w2l__ice_table_load(cat, io, "db", "r1", &t, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db2", "r2", &t, &err), err);
    ids x;
    scan_ids(io, t->meta, -1, &x);
    ck_assert_int_eq(x.n, 4);
    /* the renamed table takes commits */
    w2l__ice_data_file g = fx_data(t, 4, 6, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &g, 1, NULL, 0, 2, &err), err);
    w2l__ice_table_free(t);
    ck_assert_ok(w2l__catalog_drop(cat, "db2", "r2", 1, &err), err);
    ck_assert_int_eq(w2l__ice_table_load(cat, io, "db2", "r2", &t, &err), W2L_NOTFOUND);
    int ex = 1;
    ck_assert_ok(w2l_fileio_exists(io, f.path, &ex, &err), err);
    ck_assert_int_eq(ex, 0); /* purge removed the data file */
    ck_assert_ok(w2l__catalog_drop(cat, "db", "other", 0, &err), err);
    ck_assert_int_eq(w2l__catalog_drop(cat, "db", "other", 0, &err), W2L_NOTFOUND);
    n = 0;
    ck_assert_ok(w2l__catalog_list(cat, NULL, count_tables, &n, &err), err);
    ck_assert_int_eq(n, 0);
}
END_TEST

static void hint_says(const char *path, const char *want)
{
    w2l_error err;
    void *data;
    size_t len;
    ck_assert_ok(w2l_fileio_read_all(io, path, &data, &len, &err), err);
    ck_assert_msg(len == strlen(want) && memcmp(data, want, len) == 0, "hint %.*s, want %s",
                  (int)len, (const char *)data, want);
    w2l_free(data);
}

START_TEST(stale_version_hint_is_passed_and_repaired)
{
    w2l_error err;
    w2l__ice_table *t = create("hint", NULL);
    w2l__ice_data_file f = fx_data(t, 0, 2, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    /* a crash after v2 but before the hint: the hint still says 1; and the hint is not made
     * durable (W2L_CREATE_HINT), so after a crash it may be empty, or hold anything, or name
     * a version that maintenance removed since */
    static const char *const hints[] = {"1", "", "\x00\x00", "x7", "99", "-3", "2"};
    char *hint = w2l__asprintf("%s/db/hint/metadata/version-hint.text", wh);
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++) {
        size_t len = i == 2 ? 2 : strlen(hints[i]);
        ck_assert_ok(w2l_fileio_write_all(io, hint, W2L_CREATE_REPLACE | W2L_CREATE_HINT,
                                          hints[i], len, &err),
                     err);
        w2l__ice_table *r;
        ck_assert_ok(w2l__ice_table_load(cat, io, "db", "hint", &r, &err), err);
        ck_assert_int_eq(r->meta->current_snapshot_id, t->meta->current_snapshot_id);
        w2l__ice_table_free(r);
        hint_says(hint, "2"); /* and loading repaired it, for readers that trust it */
    }
    ck_assert_ok(w2l_fileio_remove(io, hint, &err), err); /* or be missing */
    w2l__ice_table *r;
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "hint", &r, &err), err);
    ck_assert_int_eq(r->meta->current_snapshot_id, t->meta->current_snapshot_id);
    w2l__ice_table_free(r);
    hint_says(hint, "2");
    w2l__free(hint);
    w2l__ice_table_free(t);
}
END_TEST

Suite *suite_ice_table(void)
{
    Suite *s = suite_create("ice_table");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_set_timeout(basic, 60);
    tcase_add_test(basic, meta_round_trip);
    tcase_add_test(basic, operations_read_back);
    tcase_add_test(basic, truncate_of_many_manifests);
    tcase_add_test(basic, partitioned_deletes_stay_in_partition);
    tcase_add_test(basic, catalog_rename_drop_purge);
    tcase_add_test(basic, stale_version_hint_is_passed_and_repaired);
    suite_add_tcase(s, basic);
    TCase *race = tcase_create("race");
    tcase_add_checked_fixture(race, setup, teardown);
    tcase_set_timeout(race, 60);
    tcase_add_test(race, racing_writers_both_land);
    tcase_add_test(race, four_processes_append);
    suite_add_tcase(s, race);
    TCase *faults = tcase_create("faults");
    tcase_add_checked_fixture(faults, setup, teardown);
    tcase_set_timeout(faults, 60);
    tcase_add_loop_test(faults, crash_at_every_step_keeps_table_readable, 0, 16);
    suite_add_tcase(s, faults);
    return s;
}
