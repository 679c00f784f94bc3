/*
 * lib/pipeline/op_writer.c through the real runtime: a test DDL operator ("t-ops": announce
 * the table with SCHEMA, then forward its changes) in front of the built-in writer and
 * committer; changes pushed with the push API into Iceberg tables created beforehand in a
 * temp warehouse; the tables read back with our own scan (w2l__ice_scan_plan/read) and
 * compared with a reference model after every checkpoint. Covers upserts, primary-key
 * changes, one key changed many times within one checkpoint and across checkpoints (the
 * position-delete rules), several tables, writer and table parallelism, file rolling, and
 * tables without a primary key under each no-pk-policy.
 *
 * The harness part (above OPS_TESTS) is shared with check_op_committer.c, which includes
 * this file with OPS_HARNESS_ONLY defined.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iceberg/iceberg.h"
#include "support/support.h"

/* ------------------------------------------------------------------ harness --------- */

static char wh[600];
static w2l_error err;
static char spec_member[1024]; /* ",\"spec\":{...}" of partitioned tests' SCHEMA, or "" */

/* The test DDL operator: SCHEMA before a table's first changes, then the changes. */
typedef struct t_ddl {
    w2l_operator base;
    char seen[64][64];
    int nseen;
} t_ddl;

static w2l_rc td_open(const w2l_operator_methods *m, const w2l_conf *c, unsigned i, unsigned n,
                      w2l_state *st, uint64_t r, w2l_operator *self, w2l_error *e)
{
    (void)m, (void)c, (void)i, (void)n, (void)st, (void)r, (void)self, (void)e;
    return W2L_OK;
}

static w2l_rc td_process(w2l_operator *self, const w2l_element *el, w2l_collector *out,
                         w2l_error *e)
{
    t_ddl *d = (t_ddl *)self;
    if (el->kind != W2L_ELEM_CHANGES) return W2L_OK;
    char name[64];
    snprintf(name, sizeof name, "%s.%s", el->ns, el->table);
    int known = 0;
    for (int i = 0; i < d->nseen && !known; i++) known = strcmp(d->seen[i], name) == 0;
    if (!known) {
        char *loc = w2l__ice_table_dir(wh, el->ns, el->table);
        char payload[2048];
        int n = snprintf(payload, sizeof payload, "{\"location\":\"%s\",\"schema-id\":%d%s}", loc,
                         (int)w2l_schema_id(el->changes[0].schema), spec_member);
        w2l__free(loc);
        w2l_element s = {0};
        s.kind = W2L_ELEM_SCHEMA;
        s.ns = el->ns;
        s.table = el->table;
        s.schema = el->changes[0].schema;
        s.payload = payload;
        s.payload_len = (size_t)n;
        W2L_TRY(w2l_collect(out, &s, e));
        if (d->nseen < 64) snprintf(d->seen[d->nseen++], sizeof d->seen[0], "%s", name);
    }
    return w2l_collect(out, el, e);
}

static w2l_rc td_complete(w2l_operator *self, uint64_t ck, w2l_error *e)
{
    (void)self, (void)ck, (void)e;
    return W2L_OK;
}
static void td_close(w2l_operator *self) { (void)self; }
static const w2l_operator_methods t_ops_ddl = { W2L_OPERATOR_METHODS_V1,
                                                "t-ops",
                                                W2L_OPERATOR_DDL,
                                                sizeof(t_ddl),
                                                NULL,
                                                td_open,
                                                td_process,
                                                td_complete,
                                                td_close };

/* The PK schema: id long (field 1, key), v string (field 5), n int (field 9). */
static w2l_schema *pk_schema(void)
{
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 5, "v", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 9, "n", (w2l_type){W2L_TYPE_INT, 0, 0}, 0, &err), err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(s, &id, 1, &err), err);
    return s;
}

static const char *table_format_version; /* NULL: tables made at the default version */

static void create_table(const char *ns, const char *name, w2l_schema *s)
{
    w2l__ice_kv fv = {"format-version", (char *)table_format_version};
    w2l__ice_props props = {1, &fv};
    w2l_fileio *io;
    w2l_catalog *cat;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    char *loc = w2l__ice_table_dir(wh, ns, name);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(cat, io, loc, ns, name, s, NULL,
                                       table_format_version ? &props : NULL, &t, &err),
                 err);
    w2l__free(loc);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

static void setup(void)
{
    spec_member[0] = '\0';
    table_format_version = NULL;
    snprintf(wh, sizeof wh, "%s", tmpdir_make("opw"));
    ck_assert_int_eq(w2l_operator_register(&t_ops_ddl), W2L_OK);
    w2l_error_clear(&err);
}

static void teardown(void) { tmpdir_remove(wh); }

static w2l_conf *make_conf(unsigned nddl, unsigned nw, unsigned nc)
{
    w2l_conf *c = w2l_conf_new();
    char v[32];
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.ddl", "t-ops", &err), err);
    snprintf(v, sizeof v, "%u", nddl);
    ck_assert_ok(w2l_conf_set(c, "ddl-parallelism", v, &err), err);
    snprintf(v, sizeof v, "%u", nw);
    ck_assert_ok(w2l_conf_set(c, "parallelism", v, &err), err);
    snprintf(v, sizeof v, "%u", nc);
    ck_assert_ok(w2l_conf_set(c, "committer-parallelism", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "batch-rows", "37", &err), err);
    ck_assert_ok(w2l_conf_set(c, "channel-capacity", "8", &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "test-job", &err), err);
    return c;
}

/* ---- the reference model of a PK table: id -> (v, n), ids below MAXK ---- */
#define MAXK 4096
typedef struct model {
    unsigned char live[MAXK];
    char v[MAXK][24];
    int vnull[MAXK];
    int n[MAXK];
    long count;
} model;

typedef struct tbl {
    const char *name;
    w2l_schema *schema;
    model m;
} tbl;

static long txn_no;

static void emit(w2l_pipeline *p, tbl *t, w2l_op op, long id, const char *v, int n)
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
    w2l_change c = {"db", t->name, t->schema, op, row, 3, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

static void commit_txn(w2l_pipeline *p)
{
    char pos[48];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%ld}", ++txn_no);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), pos, (size_t)n, &err), err);
}

/* Model-keeping operations. */
static void m_insert(w2l_pipeline *p, tbl *t, long id, const char *v, int n)
{
    ck_assert(!t->m.live[id]);
    emit(p, t, W2L_OP_INSERT, id, v, n);
    t->m.live[id] = 1;
    t->m.vnull[id] = v == NULL;
    snprintf(t->m.v[id], sizeof t->m.v[id], "%.*s", (int)sizeof t->m.v[id] - 1, v ? v : "");
    t->m.n[id] = n;
    t->m.count++;
}

static void m_update(w2l_pipeline *p, tbl *t, long id, long new_id, const char *v, int n)
{
    ck_assert(t->m.live[id]);
    ck_assert(new_id == id || !t->m.live[new_id]);
    emit(p, t, W2L_OP_UPDATE_BEFORE, id, t->m.vnull[id] ? NULL : t->m.v[id], t->m.n[id]);
    emit(p, t, W2L_OP_UPDATE_AFTER, new_id, v, n);
    t->m.live[id] = 0;
    t->m.live[new_id] = 1;
    t->m.vnull[new_id] = v == NULL;
    snprintf(t->m.v[new_id], sizeof t->m.v[new_id], "%.*s", (int)sizeof t->m.v[new_id] - 1,
             v ? v : "");
    t->m.n[new_id] = n;
}

static void m_delete(w2l_pipeline *p, tbl *t, long id)
{
    ck_assert(t->m.live[id]);
    emit(p, t, W2L_OP_DELETE, id, t->m.vnull[id] ? NULL : t->m.v[id], t->m.n[id]);
    t->m.live[id] = 0;
    t->m.count--;
}

/* ---- reading a table back ---- */
typedef struct readback {
    long rows, dups;
    unsigned char seen[MAXK];
    char v[MAXK][24];
    int vnull[MAXK], n[MAXK];
    long other[64];   /* no-PK tables: count of rows per a (below 64) */
    int bad_b;        /* no-PK: b does not equal "b<a>" */
} readback;

static int rb_row(void *ctx, const w2l_value *row, size_t n)
{
    readback *r = ctx;
    r->rows++;
    if (n == 2) { /* no-PK schema */
        long a = (long)row[0].v.i64;
        ck_assert(a >= 0 && a < 64);
        r->other[a]++;
        char want[24];
        snprintf(want, sizeof want, "b%ld", a);
        if (row[1].is_null || row[1].v.bytes.len != strlen(want) ||
            memcmp(row[1].v.bytes.ptr, want, strlen(want)))
            r->bad_b++;
        return 0;
    }
    long id = (long)row[0].v.i64;
    ck_assert(id >= 0 && id < MAXK);
    if (r->seen[id]) r->dups++;
    r->seen[id] = 1;
    r->vnull[id] = row[1].is_null;
    if (!row[1].is_null)
        snprintf(r->v[id], sizeof r->v[id], "%.*s", (int)row[1].v.bytes.len, row[1].v.bytes.ptr);
    r->n[id] = row[2].is_null ? -1 : row[2].v.i32;
    return 0;
}

static w2l__ice_table *load_table(const char *ns, const char *name, w2l_fileio **io,
                                  w2l_catalog **cat)
{
    ck_assert_ok(w2l_fileio_open("local", NULL, io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, *io, cat, &err), err);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_load(*cat, *io, ns, name, &t, &err), err);
    return t;
}

static void unload_table(w2l__ice_table *t, w2l_fileio *io, w2l_catalog *cat)
{
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

static readback *read_table(const char *name)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    readback *r = calloc(1, sizeof *r);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &s, &err), err);
    ck_assert_ok(w2l__ice_scan_read(io, s, rb_row, r, &err), err);
    w2l__ice_scan_free(s);
    unload_table(t, io, cat);
    return r;
}

static void assert_table_matches(tbl *t)
{
    readback *r = read_table(t->name);
    ck_assert_msg(r->dups == 0, "%s: %ld duplicate keys", t->name, r->dups);
    for (long id = 0; id < MAXK; id++) {
        ck_assert_msg(r->seen[id] == t->m.live[id], "%s: id %ld: lake has it %d, model %d", t->name,
                      id, r->seen[id], t->m.live[id]);
        if (!r->seen[id]) continue;
        ck_assert_int_eq(r->vnull[id], t->m.vnull[id]);
        if (!r->vnull[id]) ck_assert_str_eq(r->v[id], t->m.v[id]);
        ck_assert_int_eq(r->n[id], t->m.n[id]);
    }
    ck_assert_int_eq(r->rows, t->m.count);
    free(r);
}

/* Snapshots of this job per checkpoint id in the table's history; *total = all of them. */
static int snapshots_of_ckpt(const char *name, uint64_t ckpt, size_t *total)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    int n = 0;
    for (size_t i = 0; i < t->meta->nsnapshots; i++) {
        const char *ck = w2l__ice_props_get(&t->meta->snapshots[i].summary, "w2l.checkpoint-id");
        if (ck && strtoull(ck, NULL, 10) == ckpt) n++;
    }
    if (total) *total = t->meta->nsnapshots;
    unload_table(t, io, cat);
    return n;
}

static void ckpt_wait(w2l_pipeline *p)
{
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
}

static void tbl_init(tbl *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->schema = pk_schema();
    create_table("db", name, t->schema);
}

/* A random workload step on t: insert, update (sometimes a key change) or delete. */
static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_step(w2l_pipeline *p, tbl *t, long keys)
{
    long id = (long)(rnd() % (uint64_t)keys);
    char v[24];
    snprintf(v, sizeof v, "v%llu", (unsigned long long)(rnd() % 100000));
    int n = (int)(rnd() % 1000);
    if (!t->m.live[id]) {
        m_insert(p, t, id, rnd() % 10 ? v : NULL, n);
        return;
    }
    int what = (int)(rnd() % 10);
    if (what < 5) {
        m_update(p, t, id, id, v, n);
    } else if (what < 7) {
        long nid = (long)(rnd() % (uint64_t)keys);
        if (!t->m.live[nid]) m_update(p, t, id, nid, v, n); /* primary-key change */
        else m_delete(p, t, id);
    } else {
        m_delete(p, t, id);
    }
}

#ifndef OPS_HARNESS_ONLY
/* ----------------------------------------------------------------- OPS_TESTS ------- */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/op_writer_int.h"

START_TEST(upserts_and_key_changes_across_checkpoints)
{
    tbl t;
    tbl_init(&t, "t1");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long i = 0; i < 20; i++) m_insert(p, &t, i, i % 5 ? "a" : NULL, (int)i);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    m_update(p, &t, 3, 3, "b", 33);
    m_delete(p, &t, 4);
    m_update(p, &t, 5, 500, "moved", 5); /* key change */
    m_insert(p, &t, 4, "back", 44);      /* a deleted key comes back in the same checkpoint */
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    m_update(p, &t, 500, 5, "moved back", 55);
    m_delete(p, &t, 0);
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    ck_assert_int_eq(snapshots_of_ckpt("t1", 1, NULL), 1);
    ck_assert_int_eq(snapshots_of_ckpt("t1", 2, NULL), 1);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

static void create_partitioned(tbl *t, const char *name, const char *clause);

/* SCHEMA "upsert" (a route's target): an INSERT of a key an earlier checkpoint wrote
 * replaces that row (an equality delete beside it); without it the key would be there twice.
 * _i = 1: partitioned by bucket of the key, the delete in the row's partition. */
START_TEST(upsert_inserts_replace_earlier_checkpoints)
{
    tbl t;
    if (_i) create_partitioned(&t, "up", "bucket(4, id)");
    else tbl_init(&t, "up");
    size_t n = strlen(spec_member);
    snprintf(spec_member + n, sizeof spec_member - n, ",\"upsert\":true");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long i = 0; i < 10; i++) m_insert(p, &t, i, "first", (int)i);
    commit_txn(p);
    ckpt_wait(p);
    for (long i = 5; i < 15; i++) {
        if (t.m.live[i]) { /* the source writes the key again without a delete */
            t.m.live[i] = 0;
            t.m.count--;
        }
        m_insert(p, &t, i, "again", (int)(100 + i));
    }
    m_delete(p, &t, 6); /* in the checkpoint that wrote it again: by position */
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* A summary count of the snapshot of checkpoint ckpt (0 when the summary lacks it). */
static long ckpt_summary(const char *name, uint64_t ckpt, const char *key)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    long n = -1;
    for (size_t i = 0; i < t->meta->nsnapshots; i++) {
        const char *ck = w2l__ice_props_get(&t->meta->snapshots[i].summary, "w2l.checkpoint-id");
        if (!ck || strtoull(ck, NULL, 10) != ckpt) continue;
        const char *v = w2l__ice_props_get(&t->meta->snapshots[i].summary, key);
        n = v ? atol(v) : 0;
    }
    unload_table(t, io, cat);
    ck_assert_msg(n >= 0, "%s: no snapshot of checkpoint %llu", name, (unsigned long long)ckpt);
    return n;
}

/* SCHEMA "upsert": an UPDATE that moves a key onto a key an earlier checkpoint wrote (a
 * route's target keeps a source's rows after its TRUNCATE, or holds another source's)
 * replaces that row, as an INSERT does: an equality delete of the new key beside the row.
 * An in-place update gets no second delete: its before image deleted the key already,
 * also when the pair is split over two elements (batch-rows 37). */
START_TEST(upsert_update_moving_a_key_replaces_earlier_checkpoints)
{
    tbl t;
    tbl_init(&t, "upmv");
    snprintf(spec_member, sizeof spec_member, ",\"upsert\":true");
    w2l_conf *c = make_conf(1, 1, 1);
    if (_i == 1) ck_assert_ok(w2l_conf_set(c, "write.delete-mode", "equality", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    m_insert(p, &t, 1, "a1", 1);
    m_insert(p, &t, 2, "a2", 2);
    m_insert(p, &t, 3, "a3", 3);
    for (long i = 10; i < 60; i++) m_insert(p, &t, i, "old", (int)i);
    commit_txn(p);
    ckpt_wait(p);
    /* the source's TRUNCATE is not followed: the target keeps 1, 2, 3; the source writes
     * 1 again, then moves it onto 3 */
    t.m.live[1] = 0;
    t.m.count--;
    m_insert(p, &t, 1, "new1", 11);
    t.m.live[3] = 0; /* replaced by the moved row */
    t.m.count--;
    m_update(p, &t, 1, 3, "new1", 11);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    /* equality deletes: the insert's delete of 1 and the moved key's delete of 3, and 1 by
     * position; with the key index all three by position */
    ck_assert_int_eq(ckpt_summary("upmv", 2, "added-equality-deletes"), _i == 1 ? 2 : 0);
    ck_assert_int_eq(ckpt_summary("upmv", 2, "added-position-deletes"), _i == 1 ? 1 : 3);
    /* in-place updates of rows of earlier checkpoints: one delete each, by the before image */
    for (long i = 10; i < 60; i++) m_update(p, &t, i, i, "upd", (int)-i);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    ck_assert_int_eq(ckpt_summary("upmv", 3, "added-equality-deletes"), _i == 1 ? 50 : 0);
    ck_assert_int_eq(ckpt_summary("upmv", 3, "added-position-deletes"), _i == 1 ? 0 : 50);
    /* a move onto a key this checkpoint wrote and deleted again, and back onto a live one
     * of an earlier checkpoint that the update deleted first */
    m_delete(p, &t, 2);
    m_insert(p, &t, 2, "b2", 22);
    m_delete(p, &t, 2);
    m_update(p, &t, 3, 2, "moved", 33);
    m_update(p, &t, 10, 4, "ten", 10);
    m_update(p, &t, 4, 10, "ten back", 10);
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

START_TEST(same_key_many_times_in_one_checkpoint)
{
    tbl t;
    tbl_init(&t, "t2");
    w2l_conf *c = make_conf(1, 1, 1);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    /* checkpoint 1: old rows 100..109 */
    for (long i = 100; i < 110; i++) m_insert(p, &t, i, "old", (int)i);
    commit_txn(p);
    ckpt_wait(p);
    /* checkpoint 2: insert k, update k, delete k, insert k again (k new) */
    m_insert(p, &t, 1, "i1", 1);
    m_update(p, &t, 1, 1, "u1", 2);
    m_delete(p, &t, 1);
    m_insert(p, &t, 1, "i2", 3);
    commit_txn(p);
    /* an old row updated twice, then deleted and re-inserted, all in this checkpoint */
    m_update(p, &t, 100, 100, "x", 1);
    m_update(p, &t, 100, 100, "y", 2);
    commit_txn(p);
    m_update(p, &t, 101, 101, "x", 1);
    m_delete(p, &t, 101);
    m_insert(p, &t, 101, "z", 3);
    m_update(p, &t, 101, 101, "zz", 4);
    commit_txn(p);
    /* an old row's key moved twice (102 -> 2 -> 102), another deleted then inserted twice */
    m_update(p, &t, 102, 2, "m", 1);
    m_update(p, &t, 2, 102, "mm", 2);
    m_delete(p, &t, 103);
    m_insert(p, &t, 103, "a", 1);
    m_delete(p, &t, 103);
    m_insert(p, &t, 103, "b", 2);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    /* checkpoint 3: the rows written in checkpoint 2, changed again */
    m_update(p, &t, 1, 1, "c3", 5);
    m_delete(p, &t, 100);
    m_update(p, &t, 101, 7, "seven", 7);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* _i: 0 = 1 ddl x 1 writer x 1 committer; 1 = 2 x 3 x 2 with table-parallelism 2;
 * 2 = the same with a tiny target file size (files roll) and no compression */
START_TEST(random_workload_several_tables)
{
    tbl t[3];
    const char *names[3] = {"r0", "r1", "r2"};
    for (int k = 0; k < 3; k++) tbl_init(&t[k], names[k]);
    /* _i = 3: as 1, every key index spilled to disk after each element and barrier (a
     * budget below the configurable least, through the test builds' hook) */
    if (_i == 3) ck_assert_int_eq(setenv("W2L_TEST_KEY_INDEX_MEMORY", "1", 1), 0);
    w2l_conf *c = _i == 0 ? make_conf(1, 1, 1) : make_conf(2, 3, 2);
    if (_i >= 1) {
        ck_assert_ok(w2l_conf_set(c, "table-parallelism", "2", &err), err);
        ck_assert_ok(w2l_conf_set(c, "table.db.r1.table-parallelism", "3", &err), err);
    }
    if (_i == 2) {
        ck_assert_ok(w2l_conf_set(c, "writer.target-file-bytes", "64KiB", &err), err);
        ck_assert_ok(w2l_conf_set(c, "parquet.compression", "uncompressed", &err), err);
        ck_assert_ok(w2l_conf_set(c, "parquet.dictionary-bytes", "0", &err), err);
    }
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    long keys = _i == 2 ? 3000 : 300;
    int steps = _i == 2 ? 12000 : 3000;
    uint64_t spilled = 0;
    for (int s = 0; s < steps; s++) {
        random_step(p, &t[rnd() % 3], keys);
        if (rnd() % 4 == 0) commit_txn(p);
        if (s % (steps / 6) == steps / 6 - 1) {
            commit_txn(p);
            ckpt_wait(p);
            for (int k = 0; k < 3; k++) assert_table_matches(&t[k]);
            w2l_pipeline_info pi;
            ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
            if (pi.key_index_disk_bytes > spilled) spilled = pi.key_index_disk_bytes;
        }
    }
    if (_i == 3) ck_assert_msg(spilled > 0, "the key index never spilled");
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    for (int k = 0; k < 3; k++) assert_table_matches(&t[k]);
    w2l_conf_free(c);
    for (int k = 0; k < 3; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

START_TEST(files_roll_and_position_deletes_span_them)
{
    /* one writer, 64 KiB files: one checkpoint of 12000 rows rolls many data files; rows
     * of the first files are then updated and deleted in the same checkpoint (position
     * deletes into completed files) and in the next (equality deletes) */
    tbl t;
    tbl_init(&t, "roll");
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "writer.target-file-bytes", "64KiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parquet.compression", "uncompressed", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parquet.dictionary-bytes", "0", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parquet.page-bytes", "4KiB", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    char v[24];
    for (long i = 0; i < 4000; i++) {
        snprintf(v, sizeof v, "%016llx", (unsigned long long)rnd());
        m_insert(p, &t, i, v, (int)i);
        if (i % 100 == 99) commit_txn(p);
    }
    for (long i = 0; i < 4000; i += 7) m_update(p, &t, i, i, "same-ckpt", -1);
    for (long i = 3; i < 4000; i += 11) m_delete(p, &t, i);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    for (long i = 0; i < 4000; i += 5)
        if (t.m.live[i]) m_update(p, &t, i, i, "next-ckpt", -2);
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *it = load_table("db", "roll", &io, &cat);
    const w2l__ice_snapshot *first = &it->meta->snapshots[0];
    const char *nd = w2l__ice_props_get(&first->summary, "added-data-files");
    const char *np = w2l__ice_props_get(&first->summary, "added-position-deletes");
    ck_assert_ptr_nonnull(nd);
    ck_assert_int_ge(atol(nd), 3);
    ck_assert_ptr_nonnull(np);
    ck_assert_ptr_null(w2l__ice_props_get(&first->summary, "added-equality-deletes"));
    unload_table(it, io, cat);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* No primary key: a long (field 3), b string (field 4). */
static w2l_schema *nopk_schema(void)
{
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 3, "a", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 4, "b", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err), err);
    return s;
}

/* No primary key. _i: 0 full-row, 1 append-only, 2 fail. */
static void np_emit(w2l_pipeline *p, w2l_schema *s, w2l_op op, long a)
{
    char b[24];
    snprintf(b, sizeof b, "b%ld", a);
    w2l_value row[2];
    memset(row, 0, sizeof row);
    row[0].v.i64 = a;
    row[1].v.bytes.ptr = b;
    row[1].v.bytes.len = strlen(b);
    w2l_change c = {"db", "np", s, op, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

START_TEST(no_primary_key_policies)
{
    static const char *pol[] = {"full-row", "append-only", "fail"};
    w2l_schema *s = nopk_schema();
    create_table("db", "np", s);
    w2l_conf *c = make_conf(1, 2, 1);
    ck_assert_ok(w2l_conf_set(c, "table.db.np.no-pk-policy", pol[_i], &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    long expect_full[64] = {0}, expect_app[64] = {0};
    /* checkpoint 1: rows 0..19 */
    for (long a = 0; a < 20; a++)
        np_emit(p, s, W2L_OP_INSERT, a), expect_full[a]++, expect_app[a]++;
    commit_txn(p);
    uint64_t id;
    w2l_rc rc = w2l_pipeline_checkpoint(p, 1, &id, &err);
    if (_i == 2) {
        ck_assert_int_eq(rc, W2L_SCHEMA);
        ck_assert_msg(strstr(err.msg, "db.np") && strstr(err.msg, "no-pk-policy"), "%s", err.msg);
        /* every call after the failure returns the first error, never "pipeline stopping" */
        for (int k = 0; k < 3; k++) {
            w2l_error_clear(&err);
            ck_assert_int_eq(w2l_pipeline_checkpoint(p, 1, &id, &err), W2L_SCHEMA);
            ck_assert_msg(strstr(err.msg, "no-pk-policy"), "%s", err.msg);
        }
        ck_assert_int_eq(w2l_pipeline_finish(p, &err), W2L_SCHEMA);
        ck_assert_msg(strstr(err.msg, "no-pk-policy"), "%s", err.msg);
        w2l_pipeline_free(p);
        w2l_conf_free(c);
        w2l_schema_unref(s);
        return;
    }
    ck_assert_ok(rc, err);
    /* checkpoint 2: delete old rows, update old rows (a -> a+30), duplicates within the
     * checkpoint, one inserted twice and deleted once */
    np_emit(p, s, W2L_OP_DELETE, 1), expect_full[1]--;
    np_emit(p, s, W2L_OP_DELETE, 2), expect_full[2]--;
    np_emit(p, s, W2L_OP_UPDATE_BEFORE, 3), expect_full[3]--;
    np_emit(p, s, W2L_OP_UPDATE_AFTER, 33), expect_full[33]++, expect_app[33]++;
    np_emit(p, s, W2L_OP_INSERT, 40), expect_full[40]++, expect_app[40]++;
    np_emit(p, s, W2L_OP_INSERT, 40), expect_full[40]++, expect_app[40]++;
    np_emit(p, s, W2L_OP_DELETE, 40), expect_full[40]--;
    np_emit(p, s, W2L_OP_INSERT, 41), expect_full[41]++, expect_app[41]++;
    np_emit(p, s, W2L_OP_UPDATE_BEFORE, 41), expect_full[41]--;
    np_emit(p, s, W2L_OP_UPDATE_AFTER, 42), expect_full[42]++, expect_app[42]++;
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    readback *r = read_table("np");
    ck_assert_int_eq(r->bad_b, 0);
    for (int a = 0; a < 64; a++)
        ck_assert_msg(r->other[a] == (_i == 0 ? expect_full[a] : expect_app[a]),
                      "%s: a=%d: %ld rows, want %ld", pol[_i], a, r->other[a],
                      _i == 0 ? expect_full[a] : expect_app[a]);
    free(r);
    w2l_conf_free(c);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(memory_budget_completes_idle_tables)
{
    /* a budget of 1 MiB over 40 tables with wide rows: files complete early, nothing lost */
    enum { NT = 40 };
    static tbl t[NT];
    static char names[NT][16];
    for (int k = 0; k < NT; k++) {
        snprintf(names[k], sizeof names[k], "m%d", k);
        tbl_init(&t[k], names[k]);
    }
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "writer.memory-budget", "1MiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parquet.compression", "uncompressed", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int s = 0; s < 8000; s++) {
        random_step(p, &t[rnd() % NT], 200);
        if (s % 10 == 9) commit_txn(p);
    }
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    for (int k = 0; k < NT; k++) assert_table_matches(&t[k]);
    w2l_conf_free(c);
    for (int k = 0; k < NT; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

START_TEST(failed_file_write_names_table_and_file)
{
    fault_fileio_register();
    tbl t;
    tbl_init(&t, "wf");
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long i = 0; i < 100; i++) m_insert(p, &t, i, "x", 1); /* batches start the threads */
    commit_txn(p);
    /* every operation on the table's data files fails from now on, whichever of the
     * operators' file IOs makes them */
    fault_fileio_arm_where("/db/wf/data/", FAULT_ALL, 0, 1);
    uint64_t id;
    ck_assert_int_eq(w2l_pipeline_checkpoint(p, 1, &id, &err), W2L_IO);
    /* the table once, the file once (the file IO names its path; no layer above repeats it) */
    const char *at = strstr(err.msg, "/db/wf/data/");
    ck_assert_msg(strstr(err.msg, "table db.wf: ") && at && !strstr(at + 1, "/db/wf/data/"), "%s",
                  err.msg);
    ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    w2l_pipeline_free(p);
    fault_fileio_disarm_all();
    size_t total;
    snapshots_of_ckpt("wf", 1, &total);
    ck_assert_uint_eq(total, 0); /* nothing committed */
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* ---- partitioned tables ---- */

/* Creates db.name partitioned by clause and makes the test DDL operator name its spec. */
static void create_partitioned(tbl *t, const char *name, const char *clause)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->schema = pk_schema();
    w2l__ice_spec spec;
    ck_assert_ok(w2l__ice_spec_parse(clause, t->schema, &spec, &err), err);
    w2l_fileio *io;
    w2l_catalog *cat;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    char *loc = w2l__ice_table_dir(wh, "db", name);
    w2l__ice_table *it;
    ck_assert_ok(w2l__ice_table_create(cat, io, loc, "db", name, t->schema, &spec, NULL, &it, &err),
                 err);
    w2l__json *sj = w2l__ice_spec_to_json(w2l__ice_meta_spec(it->meta, it->meta->default_spec_id));
    char *text = w2l__json_print(sj, 0);
    snprintf(spec_member, sizeof spec_member, ",\"spec\":%s", text);
    w2l__free(text);
    w2l__json_free(sj);
    w2l__free(loc);
    w2l__ice_spec_release(&spec);
    w2l__ice_table_free(it);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

typedef struct pcheck {
    const w2l__ice_spec *spec;
    const w2l__ice_data_file *file;
    const w2l_schema *schema;
    long rows, bad;
} pcheck;

static int pcheck_row(void *ctx, const w2l_value *row, size_t n)
{
    pcheck *pc = ctx;
    (void)n;
    pc->rows++;
    for (size_t i = 0; i < pc->spec->nfields; i++) {
        const w2l__ice_pfield *f = &pc->spec->fields[i];
        long at = w2l_schema_index_of_id(pc->schema, f->source_id);
        w2l_value v;
        ck_assert_ok(w2l__ice_transform_apply(f->transform,
                                              w2l_schema_field(pc->schema, (size_t)at)->type,
                                              &row[at], &v, &err),
                     err);
        if (w2l_value_compare(f->type, &v, &pc->file->partition[i]) != 0) pc->bad++;
    }
    return 0;
}

/* Every live data file's partition tuple is the one of each row it holds. */
static void assert_partitions_hold(const char *name, size_t *nfiles)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &s, &err), err);
    for (size_t i = 0; i < s->ntasks; i++) {
        const w2l__ice_data_file *f = s->tasks[i].file;
        const w2l__ice_spec *spec = w2l__ice_meta_spec(t->meta, f->spec_id);
        ck_assert_ptr_nonnull(spec);
        ck_assert_uint_eq(f->npart, spec->nfields);
        pcheck pc = {spec, f, s->schema, 0, 0};
        /* the rows of the file, deletes aside: read it as the only task */
        size_t nd = s->tasks[i].ndeletes;
        s->tasks[i].ndeletes = 0;
        ck_assert_ok(w2l__ice_scan_read_task(io, s, i, pcheck_row, &pc, &err), err);
        s->tasks[i].ndeletes = nd;
        ck_assert_msg(pc.bad == 0, "%s: %ld of %ld rows outside their file's partition", f->path,
                      pc.bad, pc.rows);
        ck_assert_int_eq(pc.rows, f->record_count);
    }
    *nfiles = s->ntasks;
    w2l__ice_scan_free(s);
    unload_table(t, io, cat);
}

START_TEST(partitioned_rows_move_between_partitions)
{
    /* n changes with most updates, so rows move between partitions, within a checkpoint
     * (position deletes) and across (equality deletes in the before image's partition);
     * _i == 1 keeps at most two partitions open (the least recently used complete) */
    tbl t;
    create_partitioned(&t, "pt", _i == 2 ? "bucket(4, id), truncate(250, n)" : "truncate(100, n)");
    w2l_conf *c = make_conf(1, 1, 1);
    if (_i == 1) ck_assert_ok(w2l_conf_set(c, "writer.open-partitions", "2", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (int s = 0; s < 6000; s++) {
        random_step(p, &t, 300);
        if (s % 7 == 6) commit_txn(p);
        if (s % 1505 == 1504) ckpt_wait(p); /* right after a commit */
    }
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    size_t nfiles;
    assert_partitions_hold("pt", &nfiles);
    ck_assert_uint_gt(nfiles, _i == 2 ? 16 : 8); /* several partitions, and checkpoints */
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

START_TEST(partitioned_memory_budget_completes_partitions)
{
    /* one busy table with wide rows over 10 partitions and a 1 MiB budget: past the budget
     * its least recently used partitions complete their files (no other table to evict),
     * so partitions get several files; nothing is lost */
    tbl t;
    create_partitioned(&t, "pm", "truncate(100, n)");
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "writer.memory-budget", "1MiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "parquet.compression", "uncompressed", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    static char wide[3000];
    for (int id = 0; id < 1500; id++) {
        snprintf(wide, sizeof wide, "w%04d-", id);
        memset(wide + 6, 'a' + id % 26, sizeof wide - 7);
        wide[sizeof wide - 1] = '\0';
        m_insert(p, &t, id, wide, (id * 37) % 1000);
        if (id % 5 == 4) commit_txn(p);
    }
    commit_txn(p);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    assert_table_matches(&t);
    size_t nfiles;
    assert_partitions_hold("pm", &nfiles);
    ck_assert_uint_gt(nfiles, 10); /* 10 partitions, one checkpoint: evicted ones reopened */
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

START_TEST(partitioned_delete_needs_its_partition_column)
{
    /* a delete image without the partition column (a minimal before image): with equality
     * deletes (_i == 1) its partition is unknown, so the checkpoint fails naming the table
     * and the column, nothing committed; the key index finds the row, in its file */
    tbl t;
    create_partitioned(&t, "pd", "truncate(10, n)");
    w2l_conf *c = make_conf(1, 1, 1);
    if (_i == 1) ck_assert_ok(w2l_conf_set(c, "write.delete-mode", "equality", &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    m_insert(p, &t, 1, "a", 5);
    commit_txn(p);
    ckpt_wait(p);
    w2l_value row[3];
    memset(row, 0, sizeof row);
    row[0].v.i64 = 1;
    row[1].is_null = row[2].is_null = 1;
    uint8_t present = 1; /* id only */
    w2l_change ch = {"db", "pd", t.schema, W2L_OP_DELETE, row, 3, &present, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err), err);
    commit_txn(p);
    uint64_t id;
    if (_i == 0) {
        ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
        ck_assert_ok(w2l_pipeline_finish(p, &err), err);
        w2l_pipeline_free(p);
        t.m.live[1] = 0;
        t.m.count--;
        assert_table_matches(&t);
        w2l_conf_free(c);
        w2l_schema_unref(t.schema);
        return;
    }
    ck_assert_int_ne(w2l_pipeline_checkpoint(p, 1, &id, &err), W2L_OK);
    ck_assert_msg(strstr(err.msg, "db.pd") && strstr(err.msg, "without column n") &&
                      strstr(err.msg, "partitioned by"),
                  "%s", err.msg);
    ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    w2l_pipeline_free(p);
    size_t total;
    ck_assert_int_eq(snapshots_of_ckpt("pd", 2, &total), 0);
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* ------------------------------------------------ the key index over its budget ---- */

/* A summary figure of the table's current snapshot (0: absent). */
static long current_summary(const char *name, const char *key)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = load_table("db", name, &io, &cat);
    const w2l__ice_snapshot *cur = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
    ck_assert_ptr_nonnull(cur);
    const char *v = w2l__ice_props_get(&cur->summary, key);
    long n = v ? atol(v) : 0;
    unload_table(t, io, cat);
    return n;
}

static w2l_pipeline_info stats_of(w2l_pipeline *p)
{
    w2l_pipeline_info pi;
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    return pi;
}

/* writer.key-index-memory at its least (64 KiB) against two tables of up to 4096 keys: the
 * indexes spill to disk at every element and barrier, and every update and delete of a row
 * of an earlier checkpoint is still a position delete of exactly its row — no equality
 * delete, no row twice, none lost — across many checkpoints, compactions the pipeline
 * commits (the spilled index follows them), and a restart that loads the indexes from the
 * lake again. _i = 1: two writers. */
START_TEST(key_index_over_its_budget_stays_exact)
{
    tbl t[2];
    tbl_init(&t[0], "ks0");
    tbl_init(&t[1], "ks1");
    w2l_conf *c = make_conf(1, _i ? 2 : 1, 1);
    ck_assert_ok(w2l_conf_set(c, "writer.key-index-memory", "64KiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "writer.spill-dir", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.compact-small-files", "4", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.compact-delete-files", "4", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.compact-interval", "0", &err), err);
    long posdel = 0;
    for (int run = 0; run < 2; run++) {
        w2l_pipeline *p;
        ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
        uint64_t disk = 0;
        /* checkpoints are the clock: at least 8, and until a compaction was committed */
        for (int ck = 0; ck < 8 || (run == 0 && stats_of(p).compactions == 0); ck++) {
            ck_assert_int_lt(ck, 60);
            /* the first checkpoint fills the tables, later ones change 1/4 of the keys */
            int steps = run == 0 && ck == 0 ? 6000 : 1500;
            for (int s = 0; s < steps; s++) {
                random_step(p, &t[s & 1], MAXK);
                if (s % 50 == 49) commit_txn(p);
            }
            commit_txn(p);
            ckpt_wait(p);
            w2l_pipeline_info pi = stats_of(p);
            if (pi.key_index_disk_bytes > disk) disk = pi.key_index_disk_bytes;
            if (run == 1) ck_assert_uint_ge(pi.key_index_rebuilds, 1);
            for (int k = 0; k < 2; k++) {
                assert_table_matches(&t[k]);
                ck_assert_int_eq(current_summary(t[k].name, "total-equality-deletes"), 0);
                posdel += current_summary(t[k].name, "total-position-deletes");
            }
        }
        ck_assert_msg(disk > 0, "the key index never spilled");
        ck_assert_ok(w2l_pipeline_finish(p, &err), err);
        w2l_pipeline_free(p);
    }
    for (int k = 0; k < 2; k++) assert_table_matches(&t[k]);
    ck_assert_int_gt(posdel, 0);
    /* the spill directories went with their writers */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -d %s/w2l-keys-* >/dev/null 2>&1", wh);
    ck_assert_int_ne(system(cmd), 0);
    w2l_conf_free(c);
    for (int k = 0; k < 2; k++) w2l_schema_unref(t[k].schema);
}
END_TEST

/* A write of a spill file fails: the checkpoint fails naming the table and the file, and
 * the lake keeps what the last checkpoint committed. */
START_TEST(key_index_spill_write_failure_is_an_error)
{
    tbl t;
    tbl_init(&t, "kf");
    w2l_conf *c = make_conf(1, 1, 1);
    ck_assert_ok(w2l_conf_set(c, "writer.key-index-memory", "64KiB", &err), err);
    ck_assert_ok(w2l_conf_set(c, "writer.spill-dir", wh, &err), err);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    for (long i = 0; i < 2000; i++) m_insert(p, &t, i, "a", (int)i);
    commit_txn(p);
    ckpt_wait(p);
    assert_table_matches(&t);
    w2l__kspill_fail_write = 0; /* the next write of a spill file */
    w2l_rc rc = W2L_OK;
    for (long i = 2000; i < 4000 && rc == W2L_OK; i++) {
        w2l_value row[3];
        memset(row, 0, sizeof row);
        row[0].v.i64 = i;
        row[1].is_null = 1;
        w2l_change ch = {"db", t.name, t.schema, W2L_OP_INSERT, row, 3, NULL, 0};
        rc = w2l_emit_change(w2l_pipeline_emitter(p), &ch, &err);
    }
    uint64_t id;
    if (rc == W2L_OK) rc = w2l_pipeline_checkpoint(p, 1, &id, &err);
    ck_assert_int_ne(rc, W2L_OK);
    if (!strstr(err.msg, "spill")) ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    else w2l_pipeline_finish(p, NULL);
    w2l__kspill_fail_write = -1;
    ck_assert_msg(strstr(err.msg, "db.kf") && strstr(err.msg, "key index spill file") &&
                      strstr(err.msg, "/run-") && strstr(err.msg, "write"),
                  "%s", err.msg);
    w2l_pipeline_free(p);
    assert_table_matches(&t); /* the 2000 rows of the first checkpoint, nothing else */
    w2l_conf_free(c);
    w2l_schema_unref(t.schema);
}
END_TEST

/* ---- the index alone (op_writer_keys.c, key_spill.c), driven as on_change drives it ---- */

/* Check's ck_assert records its line with a write on every call; the loops over millions of
 * keys check with these, which cost nothing until they fail. */
#define KCHECK(cond, ...)                                                                  \
    do {                                                                                   \
        if (!(cond)) ck_abort_msg(__VA_ARGS__);                                            \
    } while (0)
#define KEQ(a, b)                                                                          \
    KCHECK((a) == (b), "%s == %s: %lld, %lld", #a, #b, (long long)(a), (long long)(b))
#define KOK(expr)                                                                          \
    do {                                                                                   \
        w2l_rc kok_ = (expr);                                                              \
        if (kok_ != W2L_OK) ck_abort_msg("%s: %s: %s", #expr, w2l_rc_name(kok_), err.msg); \
    } while (0)

typedef struct kix {
    writer w;
    tstate t;
    tstate *tabs[1];
    w2l_buf key;
} kix;

static void kix_init(kix *x, uint64_t budget, unsigned nfiles)
{
    memset(x, 0, sizeof *x);
    x->w.kbudget = budget;
    x->w.spill_dir = w2l__strdup(wh);
    x->tabs[0] = &x->t;
    x->w.tabs = x->tabs;
    x->w.tcap = 1;
    x->t.fq = w2l__strdup("db.big");
    x->t.posmode = x->t.loaded = 1;
    x->t.policy = POL_PK;
    w2l__arena_init(&x->t.karena, 1 << 14);
    for (unsigned i = 0; i < nfiles; i++) {
        uint32_t id;
        ck_assert_ok(w2l__wr_file_add(&x->t, w2l__asprintf("data-%u.parquet", i), NULL, 0,
                                      NO_PART, &id, &err), err);
        ck_assert_uint_eq(id, i);
    }
}

static void kix_free(kix *x)
{
    w2l__wr_index_free(&x->t);
    for (size_t i = 0; i < x->t.nfiles; i++) {
        w2l__free(x->t.files[i].path);
        w2l__free(x->t.files[i].pkey);
    }
    w2l__free(x->t.files);
    w2l__free(x->t.pd);
    w2l__free(x->t.fq);
    w2l__kdir_close(x->w.kdir);
    w2l__free(x->w.spill_dir);
    w2l_buf_release(&x->key);
}

/* The key of a bigint primary key (field 1) k, as encode_key writes it. */
static void kix_key(kix *x, uint64_t k)
{
    int32_t id = 1;
    x->key.len = 0;
    KOK(w2l_buf_append(&x->key, &id, 4, &err));
    KOK(w2l_buf_append(&x->key, &k, 8, &err));
}

/* The model: ver[k] 0 (no row) or the version of k's row, at file (k + v) % NF, position
 * k * 256 + v. */
#define KIX_NF 61u
static kslot *kix_find(kix *x, uint64_t k, int add)
{
    kix_key(x, k);
    kslot *s;
    KOK(w2l__wr_key_get(&x->t, &x->key, w2l__wr_key_hash(x->key.data, x->key.len), add,
                                 &s, &err));
    return s;
}

/* The key's live row goes: its position delete must be the model's row. */
static void kix_expect_delete(kix *x, kslot *s, uint64_t k, const uint8_t *ver)
{
    KCHECK(ver[k], "key %llu: a live row in the index, none in the model",
                  (unsigned long long)k);
    KOK(w2l__wr_delete_head(&x->t, s, &err));
    const pdel *d = &x->t.pd[x->t.npd - 1];
    KEQ(d->file, (k + ver[k]) % KIX_NF);
    KEQ(d->pos, (int64_t)(k * 256 + ver[k]));
    KCHECK(s->head < 0, "key %llu: a row left after its delete", (unsigned long long)k);
}

static void kix_put(kix *x, uint64_t k, uint8_t *ver)
{
    kslot *s = kix_find(x, k, 1);
    if (s->head >= 0) kix_expect_delete(x, s, k, ver);
    else KCHECK(!ver[k], "key %llu: no row in the index", (unsigned long long)k);
    ver[k] = (uint8_t)(ver[k] % 255 + 1);
    KOK(w2l__wr_add_entry(&x->t, s, 0, &err));
    x->t.ke[s->head].file = (uint32_t)((k + ver[k]) % KIX_NF);
    x->t.ke[s->head].pos = (int64_t)(k * 256 + ver[k]);
}

static void kix_del(kix *x, uint64_t k, uint8_t *ver)
{
    kslot *s = kix_find(x, k, 0);
    if (s && s->head >= 0) {
        kix_expect_delete(x, s, k, ver);
        ver[k] = 0;
    } else {
        KCHECK(!ver[k], "key %llu: not in the index", (unsigned long long)k);
    }
}

/* Every record of the table's run and map against the model: each live key once, at its
 * row. Spills the map first, so that the run holds everything. */
static void kix_check_all(kix *x, const uint8_t *ver, uint64_t nkeys)
{
    KOK(w2l__wr_index_spill(&x->w, &x->t, 0, 1, &err));
    KEQ(x->t.kcount, 0);
    uint64_t live = 0;
    for (uint64_t k = 0; k < nkeys; k++) live += ver[k] != 0;
    uint8_t *seen = calloc(nkeys, 1);
    ck_assert_ptr_nonnull(seen);
    uint64_t n = 0;
    if (x->t.run) {
        w2l__krun_iter *it;
        KOK(w2l__krun_iter_open(x->t.run, &it, &err));
        for (;;) {
            w2l__krec r;
            int end;
            KOK(w2l__krun_iter_next(it, &r, &end, &err));
            if (end) break;
            uint64_t k;
            KEQ(r.len, 12);
            memcpy(&k, r.key + 4, 8);
            KCHECK(k < nkeys, "key %llu: never written", (unsigned long long)k);
            KCHECK(ver[k] && !seen[k], "key %llu: in the run, live %d, seen %d",
                          (unsigned long long)k, ver[k], seen[k]);
            seen[k] = 1;
            KEQ(r.file, (k + ver[k]) % KIX_NF);
            KEQ(r.pos, (int64_t)(k * 256 + ver[k]));
            n++;
        }
        w2l__krun_iter_free(it);
    }
    KEQ(n, live);
    free(seen);
}

/* Ten million keys against a budget that holds about a third of them (one million under
 * the sanitizers, which run the same loops several times slower; W2L_TEST_INDEX_KEYS
 * overrides): inserts spill while they come, then updates, deletes and re-inserts of
 * random keys — most of them spilled — each checked against the model (the position delete
 * of exactly the row the model has), then every record on disk. */
START_TEST(key_index_of_ten_million_keys_spills_and_stays_exact)
{
    uint64_t nkeys = 10000000;
#if defined(__SANITIZE_ADDRESS__)
    nkeys = 1000000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    nkeys = 1000000;
#endif
#endif
    const char *env = getenv("W2L_TEST_INDEX_KEYS");
    if (env && *env) nkeys = strtoull(env, NULL, 10);
    uint64_t budget = nkeys * 24; /* 240 MB for ten million: a third of the keys */
    kix x;
    kix_init(&x, budget, KIX_NF);
    uint8_t *ver = calloc(nkeys, 1);
    ck_assert_ptr_nonnull(ver);
    /* keys in a scattered order, as a source's inserts of a table's rows come */
    uint64_t step = 7919; /* prime, coprime with nkeys below 7919 * 2^k */
    while (nkeys % step == 0) step += 2;
    for (uint64_t i = 0, k = 0; i < nkeys; i++, k = (k + step) % nkeys) {
        kix_put(&x, k, ver);
        if ((i & 4095) == 4095) { /* an element ends */
            x.t.npd = 0;
            KOK(w2l__wr_index_bound(&x.w, 0, &err));
        }
    }
    KEQ(x.t.npd, 0); /* all new keys */
    KOK(w2l__wr_index_bound(&x.w, 1, &err));
    ck_assert_ptr_nonnull(x.t.run);
    ck_assert_uint_le(w2l__wr_index_bytes(&x.t), budget);
    uint64_t spilled = w2l__krun_records(x.t.run);
    ck_assert_uint_gt(spilled, nkeys / 2);
    double mem_per_key = (double)w2l__krun_mem_bytes(x.t.run) / (double)spilled,
           disk_per_key = (double)w2l__krun_disk_bytes(x.t.run) / (double)spilled;
    w2l__log(W2L_LOG_INFO, "key index: %llu keys, %llu spilled: %.2f bytes a key in memory, "
             "%.2f on disk", (unsigned long long)nkeys, (unsigned long long)spilled,
             mem_per_key, disk_per_key);
    ck_assert_double_le(mem_per_key, 3.0); /* filter: 10 to 20 bits a key (a power of two) */
    ck_assert_double_le(disk_per_key, 28.5);
    /* changes of random keys; the budget is checked after each element, a barrier (nothing
     * pending) every 16; every 16 elements the changed keys spill to the young run too */
    uint64_t nops = nkeys / 20 > 200000 ? 200000 : nkeys / 20;
    int young = 0; /* spills that went to the young run */
    for (uint64_t i = 0; i < nops; i++) {
        uint64_t k = rnd() % nkeys, what = rnd() % 10;
        if (what < 5) kix_put(&x, k, ver); /* an update, or an insert of a deleted key */
        else if (what < 8) kix_del(&x, k, ver);
        else { /* a key that never was: absent, then inserted and deleted */
            uint64_t nk = nkeys + (rnd() % 1024);
            kix_key(&x, nk);
            kslot *s;
            KOK(w2l__wr_key_get(&x.t, &x.key, w2l__wr_key_hash(x.key.data, x.key.len),
                                         0, &s, &err));
            KCHECK(!s || s->head < 0, "key %llu: never written, found", (unsigned long long)nk);
        }
        if ((i & 1023) == 1023) {
            x.t.npd = 0;
            KOK(w2l__wr_index_bound(&x.w, (i & 16383) == 16383, &err));
        }
        if ((i & 16383) == 8191) { /* the changed keys to the young run, deletes as tombstones */
            x.t.npd = 0;
            KOK(w2l__wr_index_spill(&x.w, &x.t, 0, 0, &err));
            young += x.t.young != NULL;
        }
    }
    x.t.npd = 0;
    ck_assert_int_gt(young, 0);
    kix_check_all(&x, ver, nkeys);
    /* and the index after that still answers each key it holds */
    for (int i = 0; i < 2000; i++) {
        uint64_t k = rnd() % nkeys;
        kslot *s = kix_find(&x, k, 0);
        KEQ(s && s->head >= 0, ver[k] != 0);
        if (ver[k]) {
            KEQ(x.t.ke[s->head].file, (k + ver[k]) % KIX_NF);
            KEQ(x.t.ke[s->head].pos, (int64_t)(k * 256 + ver[k]));
        }
    }
    free(ver);
    kix_free(&x);
}
END_TEST

/* Full-row tables (no primary key): a key's rows chain; spilled, the chain comes back in
 * its order, and a spill at a barrier drops the files no row points into. */
START_TEST(key_index_spills_chains_and_drops_unused_files)
{
    kix x;
    kix_init(&x, 64 << 10, 4);
    x.t.policy = POL_FULL_ROW;
    for (uint64_t k = 0; k < 3000; k++)
        for (int r = 0; r < 3; r++) {
            kix_key(&x, k);
            kslot *s;
            ck_assert_ok(w2l__wr_key_get(&x.t, &x.key,
                                         w2l__wr_key_hash(x.key.data, x.key.len), 1, &s, &err),
                         err);
            ck_assert_ok(w2l__wr_add_entry(&x.t, s, 1, &err), err);
            x.t.ke[s->head].file = (uint32_t)(1 + r); /* file 0: no row */
            x.t.ke[s->head].pos = (int64_t)(k * 3 + (uint64_t)r);
        }
    ck_assert_ok(w2l__wr_index_bound(&x.w, 1, &err), err);
    ck_assert_ptr_nonnull(x.t.run);
    ck_assert_uint_eq(x.t.nfiles, 3);
    ck_assert_str_eq(x.t.files[0].path, "data-1.parquet");
    for (uint64_t k = 0; k < 3000; k += 7) {
        kix_key(&x, k);
        kslot *s;
        ck_assert_ok(w2l__wr_key_get(&x.t, &x.key, w2l__wr_key_hash(x.key.data, x.key.len), 0,
                                     &s, &err), err);
        ck_assert_ptr_nonnull(s);
        int r = 2;
        for (int32_t e = s->head; e >= 0; e = x.t.ke[e].next, r--) {
            ck_assert_int_ge(r, 0);
            ck_assert_uint_eq(x.t.ke[e].file, (uint32_t)r); /* renumbered: 1..3 -> 0..2 */
            ck_assert_int_eq(x.t.ke[e].pos, (int64_t)(k * 3 + (uint64_t)r));
        }
        ck_assert_int_eq(r, -1);
        ck_assert_ok(w2l__wr_delete_head(&x.t, s, &err), err); /* one of the three goes */
        ck_assert_int_eq(x.t.pd[x.t.npd - 1].pos, (int64_t)(k * 3 + 2));
    }
    x.t.npd = 0;
    /* the live rows (a key change of the table) hold every row, spilled or not */
    kent *live;
    size_t nlive;
    ck_assert_ok(w2l__wr_live_rows(&x.t, &live, &nlive, &err), err);
    ck_assert_uint_eq(nlive, 3000 * 3 - (3000 + 6) / 7);
    ck_assert_ptr_null(x.t.run);
    w2l__free(live);
    kix_free(&x);
}
END_TEST

/* More runs than a directory keeps open (64): each is found again, its file opened anew;
 * freed, its file goes, and the directory with the last. */
START_TEST(key_spill_runs_beyond_the_open_files)
{
    enum { NR = 150, NK = 40 };
    w2l__kdir *d;
    ck_assert_ok(w2l__kdir_open(wh, &d, &err), err);
    w2l__krun *r[NR];
    for (int i = 0; i < NR; i++) {
        int inh;
        ck_assert_ok(w2l__krun_create(d, "db.many", NK, 4, NULL, &inh, &r[i], &err), err);
        ck_assert_int_eq(inh, 0);
        for (uint32_t k = 0; k < NK; k++) { /* 4-byte keys, in order: the big-endian k */
            unsigned char key[4] = {0, 0, (unsigned char)(k >> 8), (unsigned char)k};
            ck_assert_ok(w2l__krun_add(r[i], key, 4, w2l__wr_key_hash(key, 4), 1, k % 4,
                                       (int64_t)i * 1000 + k, &err), err);
        }
        ck_assert_ok(w2l__krun_finish(r[i], &err), err);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NR; i++) {
            uint32_t k = (uint32_t)(i + pass) % NK;
            unsigned char key[4] = {0, 0, (unsigned char)(k >> 8), (unsigned char)k};
            const w2l__krec *rec;
            size_t n;
            ck_assert_ok(w2l__krun_find(r[i], key, 4, w2l__wr_key_hash(key, 4), &rec, &n, &err),
                         err);
            ck_assert_uint_eq(n, 1);
            ck_assert_uint_eq(rec->file, k % 4);
            ck_assert_int_eq(rec->pos, (int64_t)i * 1000 + k);
        }
    for (int i = 0; i < NR; i++) w2l__krun_free(r[i]);
    w2l__kdir_close(d);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -d %s/w2l-keys-* >/dev/null 2>&1", wh);
    ck_assert_int_ne(system(cmd), 0);
}
END_TEST

/* A spill directory a killed process left (its pid gone) is removed by the next one opened
 * beside it on the host; one of a running process stays. */
START_TEST(key_spill_dirs_of_gone_processes_are_removed)
{
    char host[128];
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '-' || *c == '/') *c = '_';
    pid_t gone = fork();
    ck_assert_int_ge(gone, 0);
    if (gone == 0) _exit(0);
    ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
    char stale[800], live[800], file[900], cmd[900];
    snprintf(stale, sizeof stale, "%s/w2l-keys-%s-%ld-abcdef", wh, host, (long)gone);
    snprintf(live, sizeof live, "%s/w2l-keys-%s-%ld-ghijkl", wh, host, (long)getpid());
    ck_assert_int_eq(mkdir(stale, 0700), 0);
    ck_assert_int_eq(mkdir(live, 0700), 0);
    snprintf(file, sizeof file, "%s/run-7", stale);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("left behind", f);
    fclose(f);
    w2l__kdir *d;
    ck_assert_ok(w2l__kdir_open(wh, &d, &err), err);
    struct stat st;
    ck_assert_int_ne(stat(stale, &st), 0);
    ck_assert_int_eq(stat(live, &st), 0);
    w2l__kdir_close(d);
    ck_assert_int_eq(rmdir(live), 0);
    snprintf(cmd, sizeof cmd, "ls -d %s/w2l-keys-* >/dev/null 2>&1", wh);
    ck_assert_int_ne(system(cmd), 0);
}
END_TEST

Suite *suite_op_writer(void)
{
    Suite *s = suite_create("op_writer");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, upserts_and_key_changes_across_checkpoints);
    tcase_add_test(basic, same_key_many_times_in_one_checkpoint);
    tcase_add_loop_test(basic, upsert_inserts_replace_earlier_checkpoints, 0, 2);
    tcase_add_loop_test(basic, upsert_update_moving_a_key_replaces_earlier_checkpoints, 0, 2);
    tcase_add_loop_test(basic, random_workload_several_tables, 0, 4);
    tcase_add_test(basic, files_roll_and_position_deletes_span_them);
    tcase_set_timeout(basic, 120);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, setup, teardown);
    tcase_add_loop_test(edge, no_primary_key_policies, 0, 3);
    tcase_add_test(edge, memory_budget_completes_idle_tables);
    tcase_add_test(edge, failed_file_write_names_table_and_file);
    tcase_set_timeout(edge, 120);
    suite_add_tcase(s, edge);
    TCase *part = tcase_create("partitioned");
    tcase_add_checked_fixture(part, setup, teardown);
    tcase_add_loop_test(part, partitioned_rows_move_between_partitions, 0, 3);
    tcase_add_test(part, partitioned_memory_budget_completes_partitions);
    tcase_add_loop_test(part, partitioned_delete_needs_its_partition_column, 0, 2);
    tcase_set_timeout(part, 120);
    suite_add_tcase(s, part);
    TCase *kx = tcase_create("key_index");
    tcase_add_checked_fixture(kx, setup, teardown);
    tcase_add_loop_test(kx, key_index_over_its_budget_stays_exact, 0, 2);
    tcase_add_test(kx, key_index_spill_write_failure_is_an_error);
    tcase_add_test(kx, key_index_spills_chains_and_drops_unused_files);
    tcase_add_test(kx, key_spill_runs_beyond_the_open_files);
    tcase_add_test(kx, key_spill_dirs_of_gone_processes_are_removed);
    tcase_set_timeout(kx, 120);
    suite_add_tcase(s, kx);
    TCase *big = tcase_create("key_index_10m");
    tcase_add_checked_fixture(big, setup, teardown);
    tcase_add_test(big, key_index_of_ten_million_keys_spills_and_stays_exact);
    tcase_set_timeout(big, 120);
    suite_add_tcase(s, big);
    return s;
}
#endif /* OPS_HARNESS_ONLY */
