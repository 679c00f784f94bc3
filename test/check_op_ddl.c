/*
 * lib/pipeline/op_ddl.c: the built-in DDL handler through the real runtime (push API),
 * with test writer and committer operators ("tw") that record every element they receive
 * and answer fences. After each step the Iceberg metadata is read back
 * (w2l__ice_table_load) and compared: field ids, names, types, schema ids.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread.h"
#include "iceberg/iceberg.h"
#include "support/support.h"

/* ---- what the writers and committers saw ---- */
enum { EV_SCHEMA = 1, EV_ROW, EV_FENCE, EV_CSCHEMA };
typedef struct ev {
    int kind;
    int who; /* writer index */
    char table[32];
    int32_t schema_id;
    char text[160]; /* rows: "id=1,v=2"; schemas: the payload */
} ev;
#define MAXEV 4096
static struct {
    mtx_t mtx;
    ev v[MAXEV];
    int n;
} rec;
static atomic_int delay_answers; /* writers answer a fence only when a t2 row or a barrier comes */

static _Thread_local int cur_who;
static void record(int kind, const char *table, int32_t sid, const char *text)
{
    mtx_lock(&rec.mtx);
    if (rec.n < MAXEV) {
        ev *e = &rec.v[rec.n++];
        e->kind = kind;
        e->who = cur_who;
        snprintf(e->table, sizeof e->table, "%s", table);
        e->schema_id = sid;
        snprintf(e->text, sizeof e->text, "%s", text ? text : "");
    }
    mtx_unlock(&rec.mtx);
}

static void row_text(const w2l_change *c, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    if (c->op == W2L_OP_DELETE) o += (size_t)snprintf(buf + o, size - o, "-");
    for (size_t i = 0; i < c->ncols && o < size; i++) {
        const w2l_field *f = w2l_schema_field(c->schema, i);
        char v[64];
        w2l_value_format(f->type, &c->row[i], v, sizeof v);
        o += (size_t)snprintf(buf + o, size - o, "%s%s=%s", i ? "," : "", f->name, v);
    }
}

typedef struct tw {
    w2l_operator base;
    int index;
    uint64_t pending;
    char pns[32], ptable[32];
} tw;

static w2l_rc t_open(const w2l_operator_methods *m, const w2l_conf *c, unsigned i, unsigned n,
                     w2l_state *st, uint64_t r, w2l_operator *self, w2l_error *e)
{
    (void)c, (void)n, (void)st, (void)r, (void)e;
    if (m->kind == W2L_OPERATOR_WRITER) ((tw *)self)->index = (int)i;
    return W2L_OK;
}

static w2l_rc answer(tw *w, w2l_collector *out, w2l_error *e)
{
    if (!w->pending) return W2L_OK;
    w2l_element a = {0};
    a.kind = W2L_ELEM_WRITER_COMMIT;
    a.ns = w->pns;
    a.table = w->ptable;
    a.ddl_id = w->pending;
    w->pending = 0;
    return w2l_collect(out, &a, e);
}

static w2l_rc w_process(w2l_operator *self, const w2l_element *el, w2l_collector *out, w2l_error *e)
{
    tw *w = (tw *)self;
    char text[160];
    cur_who = w->index;
    switch (el->kind) {
    case W2L_ELEM_CHANGES:
        for (size_t i = 0; i < el->nchanges; i++) {
            const w2l_change *c = &el->changes[i];
            /* every change is in the table's Iceberg schema */
            ck_assert_uint_eq(c->ncols, w2l_schema_field_count(c->schema));
            row_text(c, text, sizeof text);
            record(EV_ROW, el->table, w2l_schema_id(c->schema), text);
        }
        if (!strcmp(el->table, "t2")) return answer(w, out, e);
        return W2L_OK;
    case W2L_ELEM_SCHEMA:
        record(EV_SCHEMA, el->table, w2l_schema_id(el->schema), el->payload);
        return W2L_OK;
    case W2L_ELEM_WRITER_COMMIT:
        record(EV_FENCE, el->table, 0, el->payload); /* payload: the truncate marker, if any */
        w->pending = el->ddl_id;
        snprintf(w->pns, sizeof w->pns, "%s", el->ns);
        snprintf(w->ptable, sizeof w->ptable, "%s", el->table);
        if (!atomic_load(&delay_answers)) return answer(w, out, e);
        return W2L_OK;
    case W2L_ELEM_BARRIER: return answer(w, out, e);
    default: return W2L_OK;
    }
}

static w2l_rc c_process(w2l_operator *self, const w2l_element *el, w2l_collector *out, w2l_error *e)
{
    (void)self, (void)out, (void)e;
    if (el->kind == W2L_ELEM_SCHEMA)
        record(EV_CSCHEMA, el->table, w2l_schema_id(el->schema), el->payload);
    return W2L_OK;
}
static w2l_rc t_complete(w2l_operator *self, uint64_t ck, w2l_error *e)
{
    (void)self, (void)ck, (void)e;
    return W2L_OK;
}
static void t_close(w2l_operator *self) { (void)self; }

static const w2l_operator_methods tw_writer = { W2L_OPERATOR_METHODS_V1,
                                                "tw",
                                                W2L_OPERATOR_WRITER,
                                                sizeof(tw),
                                                NULL,
                                                t_open,
                                                w_process,
                                                t_complete,
                                                t_close };
static const w2l_operator_methods tw_committer = { W2L_OPERATOR_METHODS_V1,
                                                   "tw",
                                                   W2L_OPERATOR_COMMITTER,
                                                   sizeof(w2l_operator),
                                                   NULL,
                                                   t_open,
                                                   c_process,
                                                   t_complete,
                                                   t_close };

/* ---- fixture ---- */
static char wh[600];
static w2l_error err;
static w2l_schema *s_iv, *s_ivw, *s_lv; /* (id long pk, v int), + w string, (id long pk, v long) */

static w2l_schema *mk(const char *spec)
{
    /* "id:long!,v:int": '!' marks the key */
    w2l_schema *s = w2l_schema_new(0);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    int32_t id = 0, key[8];
    size_t nk = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        *colon = '\0';
        char *ty = colon + 1;
        size_t l = strlen(ty);
        int k = ty[l - 1] == '!';
        if (k) ty[l - 1] = '\0';
        w2l_type t;
        ck_assert_ok(w2l_type_parse(ty, &t, &err), err);
        ck_assert_ok(w2l_schema_add_field(s, ++id, tok, t, k, &err), err);
        if (k) key[nk++] = id;
    }
    ck_assert_ok(w2l_schema_set_identifier(s, key, nk, &err), err);
    return s;
}

static void setup(void)
{
    mtx_init(&rec.mtx, mtx_plain);
    rec.n = 0;
    atomic_store(&delay_answers, 0);
    w2l_operator_register(&tw_writer);
    w2l_operator_register(&tw_committer);
    snprintf(wh, sizeof wh, "%s", tmpdir_make("op_ddl"));
    s_iv = mk("id:long!,v:int");
    s_ivw = mk("id:long!,v:int,w:string");
    s_lv = mk("id:long!,v:long");
}

static void teardown(void)
{
    w2l_schema_unref(s_iv);
    w2l_schema_unref(s_ivw);
    w2l_schema_unref(s_lv);
    tmpdir_remove(wh);
}

static w2l_conf *make_conf(const char *policy, unsigned writers)
{
    w2l_conf *c = w2l_conf_new();
    char v[700];
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    snprintf(v, sizeof v, "file:%s/_state", wh);
    ck_assert_ok(w2l_conf_set(c, "state", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.ddl", "default", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "tw", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.committer", "tw", &err), err);
    snprintf(v, sizeof v, "%u", writers);
    ck_assert_ok(w2l_conf_set(c, "parallelism", v, &err), err);
    ck_assert_ok(w2l_conf_set(c, "table.db.t1.table-parallelism", "4", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    if (policy) ck_assert_ok(w2l_conf_set(c, "ddl.policy", policy, &err), err);
    return c;
}

static w2l_pipeline *start(w2l_conf *c)
{
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    return p;
}

/* one row: values as text in the schema's field order ("1,10,abc"; "null") */
static w2l_rc put_row(w2l_pipeline *p, const char *table, w2l_schema *s, w2l_op op,
                      const char *vals)
{
    w2l_value row[16];
    char buf[256];
    snprintf(buf, sizeof buf, "%s", vals);
    size_t n = w2l_schema_field_count(s), i = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && i < n;
         tok = strtok_r(NULL, ",", &save), i++) {
        memset(&row[i], 0, sizeof row[i]);
        if (!strcmp(tok, "null")) row[i].is_null = 1;
        else
            ck_assert_ok(
                w2l_value_parse(w2l_schema_field(s, i)->type, tok, strlen(tok), &row[i], &err),
                err);
    }
    ck_assert_uint_eq(i, n);
    w2l_change c = {"db", table, s, op, row, n, NULL, 0};
    return w2l_emit_change(w2l_pipeline_emitter(p), &c, &err);
}

static void row(w2l_pipeline *p, const char *table, w2l_schema *s, const char *vals)
{
    ck_assert_ok(put_row(p, table, s, W2L_OP_INSERT, vals), err);
}

static void commit(w2l_pipeline *p)
{
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), "{}", 2, &err), err);
}

static void checkpoint(w2l_pipeline *p)
{
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
}

static w2l_rc ddl_ts(w2l_pipeline *p, const char *sql, int64_t ts)
{
    w2l_ddl d = {"db", sql, strlen(sql), NULL, NULL, ts};
    w2l_rc rc = w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err);
    if (rc == W2L_OK) rc = w2l_emit_commit(w2l_pipeline_emitter(p), "{}", 2, &err);
    return rc;
}

static void ddl(w2l_pipeline *p, const char *sql) { ck_assert_ok(ddl_ts(p, sql, 0), err); }

static void finish(w2l_pipeline *p)
{
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
}

/* The current Iceberg schema of db.<table> as "1:id:long!,2:v:int" and its schema id;
 * "" when the table does not exist. */
static char ice_buf[512];
static int32_t ice_sid;
static const char *ice(const char *table)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    w2l_rc rc = w2l__ice_table_load(cat, io, "db", table, &t, &err);
    ice_buf[0] = '\0';
    ice_sid = -1;
    if (rc == W2L_OK) {
        const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
        ice_sid = w2l_schema_id(s);
        size_t o = 0, nid;
        const int32_t *ids = w2l_schema_identifier(s, &nid);
        for (size_t i = 0; i < w2l_schema_field_count(s); i++) {
            const w2l_field *f = w2l_schema_field(s, i);
            char ty[32];
            int key = 0;
            for (size_t k = 0; k < nid; k++) key |= ids[k] == f->id;
            o += (size_t)snprintf(ice_buf + o, sizeof ice_buf - o, "%s%d:%s:%s%s", i ? "," : "",
                                  (int)f->id, f->name, w2l_type_format(f->type, ty, sizeof ty),
                                  key ? "!" : "");
        }
    } else {
        ck_assert_int_eq(rc, W2L_NOTFOUND);
    }
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    return ice_buf;
}

#define ck_ice(table, want) ck_assert_str_eq(ice(table), want)

/* index of the first event of kind on table whose text contains sub (NULL: any); -1 */
static int find_ev(int from, int kind, const char *table, const char *sub)
{
    for (int i = from; i < rec.n; i++)
        if (rec.v[i].kind == kind && !strcmp(rec.v[i].table, table) &&
            (!sub || strstr(rec.v[i].text, sub)))
            return i;
    return -1;
}

/* The same, among the events one writer (who) recorded. */
static int find_ev_of(int from, int kind, const char *table, const char *sub, int who)
{
    for (int i = from; i < rec.n; i++)
        if (rec.v[i].who == who && rec.v[i].kind == kind && !strcmp(rec.v[i].table, table) &&
            (!sub || strstr(rec.v[i].text, sub)))
            return i;
    return -1;
}

static int count_ev(int kind, const char *table)
{
    int n = 0;
    for (int i = 0; i < rec.n; i++) n += rec.v[i].kind == kind && !strcmp(rec.v[i].table, table);
    return n;
}

/* ---- tests ---- */

START_TEST(first_sight_creates_table_and_announces)
{
    w2l_conf *c = make_conf(NULL, 2);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    row(p, "t1", s_iv, "2,20");
    commit(p);
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:int");
    ck_assert_int_eq(ice_sid, 0);
    int s = find_ev(0, EV_SCHEMA, "t1", "\"schema-id\":0");
    ck_assert_int_ge(s, 0);
    ck_assert_msg(strstr(rec.v[s].text, "\"location\":") && strstr(rec.v[s].text, "/db/t1"), "%s",
                  rec.v[s].text);
    int r1 = find_ev(0, EV_ROW, "t1", "id=1,v=10"), r2 = find_ev(0, EV_ROW, "t1", "id=2,v=20");
    ck_assert_int_gt(r1, s);
    ck_assert_int_gt(r2, s);
    ck_assert_int_ge(find_ev(0, EV_CSCHEMA, "t1", NULL), 0); /* the committer heard it too */
    /* a second run loads the table instead of creating it, and announces again */
    rec.n = 0;
    p = start(c);
    row(p, "t1", s_iv, "3,30");
    commit(p);
    finish(p);
    ck_assert_int_ge(find_ev(0, EV_SCHEMA, "t1", NULL), 0);
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=3,v=30"), 0);
    ck_ice("t1", "1:id:long!,2:v:int");
    w2l_conf_free(c);
}
END_TEST

START_TEST(source_schema_adds_and_widens)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    commit(p);
    checkpoint(p);
    /* not dirty: applies at once */
    row(p, "t1", s_ivw, "2,20,x");
    commit(p);
    /* dirty now: a wider v goes through the fence */
    row(p, "t1", s_lv, "3,5000000000");
    commit(p);
    /* rows of the oldest source schema still map by name */
    row(p, "t1", s_iv, "4,40");
    commit(p);
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:w:string");
    ck_assert_int_eq(ice_sid, 2);
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=1,v=10"), 0);
    int a = find_ev(0, EV_ROW, "t1", "id=2,v=20,w=x");
    int f = find_ev(a, EV_FENCE, "t1", NULL);
    int s2 = find_ev(f, EV_SCHEMA, "t1", "\"schema-id\":2");
    int b = find_ev(s2, EV_ROW, "t1", "id=3,v=5000000000,w=null");
    ck_assert_msg(a >= 0 && f > a && s2 > f && b > s2, "a=%d f=%d s=%d b=%d", a, f, s2, b);
    ck_assert_int_gt(find_ev(b, EV_ROW, "t1", "id=4,v=40,w=null"), b);
    w2l_conf_free(c);
}
END_TEST

START_TEST(ddl_kinds_keep_field_ids)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT NOT NULL PRIMARY KEY, v INT, name VARCHAR(20))");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:name:string");
    ddl(p, "ALTER TABLE t1 ADD COLUMN w DOUBLE");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:name:string,4:w:double");
    ddl(p, "ALTER TABLE t1 RENAME COLUMN name TO title");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:title:string,4:w:double");
    ddl(p, "ALTER TABLE t1 DROP COLUMN w");
    ddl(p, "ALTER TABLE t1 ADD COLUMN w DOUBLE");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:title:string,5:w:double");
    ddl(p, "ALTER TABLE t1 MODIFY v BIGINT");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:title:string,5:w:double");
    ddl(p, "ALTER TABLE t1 CHANGE COLUMN title label VARCHAR(40)");
    checkpoint(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:label:string,5:w:double");
    int32_t sid = ice_sid;
    /* a row in a source schema with the new names lands in the same ids */
    w2l_schema *s = mk("id:long!,v:long,label:string,w:double");
    row(p, "t1", s, "1,2,abc,1.5");
    commit(p);
    /* no schema effect: index, database statements, other statements */
    ddl(p, "CREATE INDEX i1 ON t1 (v)");
    ddl(p, "CREATE DATABASE other");
    ddl(p, "GRANT SELECT ON db.* TO 'u'@'%' IDENTIFIED BY 'secret'");
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:label:string,5:w:double");
    ck_assert_int_eq(ice_sid, sid);
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=1,v=2,label=abc,w=1.5"), 0);
    /* every schema change was announced */
    ck_assert_int_ge(count_ev(EV_SCHEMA, "t1"), 6);
    w2l_schema_unref(s);
    w2l_conf_free(c);
}
END_TEST

START_TEST(create_existing_table_reconciles)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    commit(p);
    checkpoint(p);
    ddl(p, "CREATE TABLE IF NOT EXISTS t1 (id BIGINT PRIMARY KEY, v BIGINT, extra TEXT)");
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:extra:string");
    w2l_conf_free(c);
}
END_TEST

/* _i: 0 fail, 1 ignore, 2 quarantine */
START_TEST(forbidden_change_follows_policy)
{
    static const char *pol[] = {"fail", "ignore", "quarantine"};
    w2l_conf *c = make_conf(pol[_i], 1);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, v INT, name VARCHAR(20))");
    row(p, "t2", s_iv, "1,1");
    commit(p);
    checkpoint(p);
    ddl(p, "ALTER TABLE t1 MODIFY name INT");
    w2l_schema *s = mk("id:long!,v:int,name:string");
    w2l_rc rc = W2L_OK;
    if (_i == 0) {
        rc = w2l_pipeline_finish(p, &err);
        ck_assert_int_eq(rc, W2L_SCHEMA);
        ck_assert_msg(strstr(err.msg, "db.t1") && strstr(err.msg, "MODIFY name INT") &&
                          strstr(err.msg, "name"),
                      "%s", err.msg);
        w2l_pipeline_free(p);
        ck_ice("t1", "1:id:long!,2:v:int,3:name:string");
    } else {
        row(p, "t1", s, "7,70,abc");
        row(p, "t2", s_iv, "2,2");
        commit(p);
        finish(p);
        ck_ice("t1", "1:id:long!,2:v:int,3:name:string");
        ck_assert_int_eq(ice_sid, 0);
        ck_assert_int_ge(find_ev(0, EV_ROW, "t2", "id=2,v=2"), 0);
        if (_i == 1) ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=7,v=70,name=abc"), 0);
        else ck_assert_int_eq(find_ev(0, EV_ROW, "t1", NULL), -1);
        if (_i == 2) {
            /* the quarantine survives a restart (state) */
            rec.n = 0;
            p = start(c);
            row(p, "t1", s, "8,80,x");
            row(p, "t2", s_iv, "3,3");
            commit(p);
            finish(p);
            ck_assert_int_eq(find_ev(0, EV_ROW, "t1", NULL), -1);
            ck_assert_int_ge(find_ev(0, EV_ROW, "t2", "id=3"), 0);
            /* the way back: the source drops the table and creates it anew; statements
             * other than those stay ignored */
            rec.n = 0;
            p = start(c);
            ddl(p, "ALTER TABLE t1 ADD COLUMN w INT");
            ddl(p, "DROP TABLE t1");
            ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, name INT)");
            w2l_schema *s2 = mk("id:long!,name:int");
            row(p, "t1", s2, "9,5");
            commit(p);
            finish(p);
            ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=9,name=5"), 0);
            ck_ice("t1", "1:id:long!,2:name:int");
            /* and a restart keeps it out of quarantine */
            rec.n = 0;
            p = start(c);
            row(p, "t1", s2, "10,6");
            commit(p);
            finish(p);
            ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=10,name=6"), 0);
            w2l_schema_unref(s2);
        }
    }
    (void)rc;
    w2l_schema_unref(s);
    w2l_conf_free(c);
}
END_TEST

START_TEST(unparsable_ddl)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    commit(p);
    ddl(p, "ALTER TABLE t1 ADD COLUMN (((");
    ck_assert_int_ne(w2l_pipeline_finish(p, &err), W2L_OK);
    ck_assert_msg((err.code == W2L_CORRUPT || err.code == W2L_SCHEMA) &&
                      strstr(err.msg, "ALTER TABLE t1 ADD COLUMN"),
                  "%s: %s", w2l_rc_name(err.code), err.msg);
    w2l_pipeline_free(p);
    /* a statement naming a table follows that table's policy */
    ck_assert_ok(w2l_conf_set(c, "table.db.t1.ddl.policy", "ignore", &err), err);
    p = start(c);
    w2l_ddl d = {"db", "ALTER TABLE t1 ADD COLUMN (((", 29, "t1", NULL, 0};
    ck_assert_ok(w2l_emit_ddl(w2l_pipeline_emitter(p), &d, &err), err);
    commit(p);
    row(p, "t1", s_iv, "2,20");
    commit(p);
    finish(p);
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=2,v=20"), 0);
    w2l_conf_free(c);
}
END_TEST

/* Appends a (fake) data file to db.<table>, so that it has a snapshot. */
static void add_snapshot(const char *table)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", table, &t, &err), err);
    w2l__ice_data_file df;
    memset(&df, 0, sizeof df);
    char path[700];
    snprintf(path, sizeof path, "%s/db/%s/data/fake.parquet", wh, table);
    df.content = W2L_ICE_DATA;
    df.path = path;
    df.format = "PARQUET";
    df.record_count = 3;
    df.file_size = 100;
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_APPEND);
    ch.files = &df;
    ch.nfiles = 1;
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 0, &err), err);
    w2l__ice_change_release(&ch, io, 0);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

static const char *snapshot_op(const char *table, char *records, size_t size)
{
    static char op[32];
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", table, &t, &err), err);
    const w2l__ice_snapshot *s = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
    ck_assert_ptr_nonnull(s);
    snprintf(op, sizeof op, "%s", w2l__ice_props_get(&s->summary, "operation"));
    const char *r = w2l__ice_props_get(&s->summary, "total-records");
    snprintf(records, size, "%s", r ? r : "?");
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    return op;
}

START_TEST(truncate_drop_rename)
{
    w2l_conf *c = make_conf(NULL, 2);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    row(p, "t3", s_iv, "1,10");
    row(p, "t4", s_iv, "1,10");
    commit(p);
    checkpoint(p);
    add_snapshot("t1");
    char recs[32];
    ck_assert_str_eq(snapshot_op("t1", recs, sizeof recs), "append");
    ck_assert_str_eq(recs, "3");
    /* the table has DML in this checkpoint: truncate goes through the fence */
    row(p, "t1", s_iv, "2,20");
    commit(p);
    ddl(p, "TRUNCATE TABLE t1");
    row(p, "t1", s_iv, "3,30");
    commit(p);
    checkpoint(p);
    /* the handler commits nothing itself: it tells the writers (the truncate marker, after
     * the fence), and the committer replaces the table's rows at the checkpoint's commit
     * (the built-in committer; this test's records what reaches the writers) */
    ck_assert_str_eq(snapshot_op("t1", recs, sizeof recs), "append");
    /* t1 has two writers: order holds per writer, so compare within each one */
    int r2 = find_ev(0, EV_ROW, "t1", "id=2"), r3 = find_ev(0, EV_ROW, "t1", "id=3");
    ck_assert_int_ge(r2, 0);
    ck_assert_int_ge(r3, 0);
    int f = find_ev_of(0, EV_FENCE, "t1", NULL, rec.v[r2].who);
    ck_assert_int_gt(f, r2);
    int tm = find_ev_of(0, EV_FENCE, "t1", "{\"truncate\":true}", rec.v[r3].who);
    ck_assert_int_ge(tm, 0);
    ck_assert_int_gt(r3, tm);
    /* drop: gone from the catalog */
    ddl(p, "DROP TABLE IF EXISTS t3");
    checkpoint(p);
    ck_ice("t3", "");
    /* rename: the new name has the table (same ids), the old one is gone; rows of the
     * new name follow it */
    ddl(p, "RENAME TABLE t4 TO t5");
    w2l_schema *s = mk("id:long!,v:int");
    row(p, "t5", s, "9,90");
    commit(p);
    finish(p);
    ck_ice("t4", "");
    ck_ice("t5", "1:id:long!,2:v:int");
    int sc = find_ev(0, EV_SCHEMA, "t5", NULL);
    ck_assert_int_ge(sc, 0);
    ck_assert_int_gt(find_ev(sc, EV_ROW, "t5", "id=9,v=90"), sc);
    /* a dropped table comes back from its rows */
    rec.n = 0;
    p = start(c);
    row(p, "t3", s_iv, "5,50");
    commit(p);
    finish(p);
    ck_ice("t3", "1:id:long!,2:v:int");
    w2l_schema_unref(s);
    w2l_conf_free(c);
}
END_TEST

START_TEST(ghost_swap_takes_shadow_schema)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, v INT, old_col INT)");
    w2l_schema *s0 = mk("id:long!,v:int,old_col:int");
    row(p, "t1", s0, "1,10,5");
    w2l_schema_unref(s0);
    commit(p);
    ddl(p, "CREATE TABLE `_t1_ghc` (id bigint auto_increment, hint varchar(64), primary key(id))");
    ddl(p, "CREATE TABLE `_t1_gho` LIKE `t1`");
    ddl(p, "ALTER TABLE `_t1_gho` ADD COLUMN w VARCHAR(10), DROP COLUMN old_col, MODIFY v BIGINT");
    w2l_schema *sh = mk("id:long!,v:long,w:string");
    row(p, "_t1_gho", sh, "1,10,x"); /* the tool's row copy: never synced */
    commit(p);
    ddl(p, "RENAME TABLE `t1` TO `_t1_del`, `_t1_gho` TO `t1`");
    row(p, "t1", sh, "2,20,y");
    commit(p);
    ddl(p, "DROP TABLE IF EXISTS `_t1_del`");
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:long,4:w:string");
    ck_ice("_t1_gho", "");
    ck_ice("_t1_del", "");
    ck_ice("_t1_ghc", "");
    ck_assert_int_eq(find_ev(0, EV_ROW, "_t1_gho", NULL), -1);
    int s = find_ev(0, EV_SCHEMA, "t1", "\"schema-id\":1");
    ck_assert_int_ge(s, 0);
    ck_assert_int_gt(find_ev(s, EV_ROW, "t1", "id=2,v=20,w=y"), s);
    w2l_schema_unref(sh);
    w2l_conf_free(c);
}
END_TEST

START_TEST(ptosc_drop_swap)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, v INT)");
    ddl(p, "CREATE TABLE `_t1_new` (id BIGINT PRIMARY KEY, v INT, z DATE)");
    ddl(p, "DROP TABLE t1");
    ddl(p, "RENAME TABLE `_t1_new` TO `t1`");
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:z:date");
    ck_ice("_t1_new", "");
    w2l_conf_free(c);
}
END_TEST

START_TEST(fence_orders_rows_and_others_flow)
{
    atomic_store(&delay_answers, 1);
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    row(p, "t2", s_iv, "1,10");
    commit(p);
    checkpoint(p);
    row(p, "t1", s_iv, "2,20"); /* DML since the barrier: the ALTER needs a fence */
    commit(p);
    ddl(p, "ALTER TABLE t1 ADD COLUMN w VARCHAR(5)");
    row(p, "t1", s_ivw, "3,30,z"); /* buffered until the fence completes */
    commit(p);
    row(p, "t2", s_iv, "2,20"); /* flows during the fence; the writer answers on it */
    commit(p);
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:w:string");
    int before = find_ev(0, EV_ROW, "t1", "id=2,v=20");
    int fence = find_ev(0, EV_FENCE, "t1", NULL);
    int other = find_ev(0, EV_ROW, "t2", "id=2,v=20");
    int schema = find_ev(0, EV_SCHEMA, "t1", "\"schema-id\":1");
    int after = find_ev(0, EV_ROW, "t1", "id=3,v=30,w=z");
    ck_assert_msg(before < fence && fence < other && other < schema && schema < after,
                  "before=%d fence=%d other=%d schema=%d after=%d", before, fence, other, schema,
                  after);
    ck_assert_int_ge(before, 0);
    w2l_conf_free(c);
}
END_TEST

START_TEST(fence_counts_every_writer_of_the_table)
{
    /* t1 is spread over 3 writers (table-parallelism 4, parallelism 3) */
    w2l_conf *c = make_conf(NULL, 3);
    w2l_pipeline *p = start(c);
    for (int i = 0; i < 30; i++) {
        char v[32];
        snprintf(v, sizeof v, "%d,%d", i, i);
        row(p, "t1", s_iv, v);
    }
    commit(p);
    ddl(p, "ALTER TABLE t1 ADD COLUMN w VARCHAR(5)");
    row(p, "t1", s_ivw, "100,1,q");
    commit(p);
    finish(p);
    ck_assert_int_eq(count_ev(EV_FENCE, "t1"), 3);
    /* on the writer that got it, the new row comes after the fence and the new schema
     * (each writer's channel is in order; across writers there is no order) */
    int r = find_ev(0, EV_ROW, "t1", "id=100,v=1,w=q");
    ck_assert_int_ge(r, 0);
    int fence = -1, schema = -1;
    for (int i = 0; i < r; i++) {
        if (rec.v[i].who != rec.v[r].who) continue;
        if (rec.v[i].kind == EV_FENCE) fence = i;
        if (rec.v[i].kind == EV_SCHEMA && rec.v[i].schema_id == 1) schema = i;
    }
    ck_assert_msg(fence >= 0 && schema > fence, "fence=%d schema=%d row=%d", fence, schema, r);
    for (int i = 0; i < rec.n; i++) /* and every old row before its writer's fence */
        if (rec.v[i].kind == EV_ROW && rec.v[i].schema_id == 0)
            for (int k = 0; k < i; k++)
                ck_assert(!(rec.v[k].kind == EV_FENCE && rec.v[k].who == rec.v[i].who));
    ck_ice("t1", "1:id:long!,2:v:int,3:w:string");
    w2l_conf_free(c);
}
END_TEST

START_TEST(fence_timeout_names_table_and_statement)
{
    atomic_store(&delay_answers, 1);
    w2l_conf *c = make_conf(NULL, 1);
    ck_assert_ok(w2l_conf_set(c, "ddl.fence-timeout", "1ms", &err), err);
    w2l_pipeline *p = start(c);
    row(p, "t1", s_iv, "1,10");
    commit(p);
    ddl(p, "ALTER TABLE t1 ADD COLUMN w INT");
    thrd_sleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    row(p, "t3", s_iv, "1,1"); /* the next element notices the deadline */
    commit(p);
    w2l_rc rc = w2l_pipeline_finish(p, &err);
    ck_assert_int_eq(rc, W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "db.t1") && strstr(err.msg, "ADD COLUMN w") &&
                      strstr(err.msg, "fence"),
                  "%s", err.msg);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
}
END_TEST

START_TEST(replay_does_not_apply_twice)
{
    w2l_conf *c = make_conf(NULL, 1);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, v INT, name VARCHAR(9))");
    w2l_schema *s0 = mk("id:long!,v:int,name:string");
    row(p, "t1", s0, "1,10,a");
    w2l_schema_unref(s0);
    commit(p);
    checkpoint(p);
    /* after the checkpoint: applied to the handler's copy, then the job dies before the next
     * checkpoint — nothing of it reaches the lake */
    w2l_schema *s1 = mk("id:long!,v:int,name:string"),
               *s2 = mk("id:long!,v:int,title:string,w:int");
    row(p, "t1", s1, "2,20,b");
    commit(p);
    ck_assert_ok(ddl_ts(p, "ALTER TABLE t1 RENAME COLUMN name TO title, ADD COLUMN w INT", 1000),
                 err);
    ck_assert_ok(ddl_ts(p, "ALTER TABLE t1 RENAME COLUMN name TO title, ADD COLUMN w INT", 1000),
                 err); /* resent */
    row(p, "t1", s2, "3,30,c,1");
    commit(p);
    row(p, "t1", s2, "4,40,d,2");
    commit(p);
    /* wait until the handler applied it, then crash (no final checkpoint) */
    for (int i = 0; i < 200 && find_ev(0, EV_ROW, "t1", "id=4") < 0; i++)
        thrd_sleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    w2l_pipeline_free(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:name:string");
    int32_t sid = ice_sid;
    /* the restart replays everything after the checkpoint, with the old source schema */
    rec.n = 0;
    p = start(c);
    w2l_schema *r1 = mk("id:long!,v:int,name:string"),
               *r2 = mk("id:long!,v:int,title:string,w:int");
    row(p, "t1", r1, "2,20,b");
    commit(p);
    ck_assert_ok(ddl_ts(p, "ALTER TABLE t1 RENAME COLUMN name TO title, ADD COLUMN w INT", 1000),
                 err);
    row(p, "t1", r2, "3,30,c,1");
    commit(p);
    ddl(p, "ALTER TABLE t1 ADD COLUMN x INT"); /* new: applied */
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:int,3:title:string,4:w:int,5:x:int");
    ck_assert_int_eq(ice_sid, sid + 2); /* each statement once */
    /* the row before the statement is written under the schema it had (field 3, which the
     * replayed rename then calls title), the row after it under the new one */
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=2,v=20,name=b"), 0);
    ck_assert_int_ge(find_ev(0, EV_ROW, "t1", "id=3,v=30,title=c,w=1"), 0);
    w2l_schema_unref(s1), w2l_schema_unref(s2), w2l_schema_unref(r1), w2l_schema_unref(r2);
    w2l_conf_free(c);
}
END_TEST


/* ---- with the built-in writer and committer: the lake read back with our scan ---- */
typedef struct scan_acc {
    const w2l_schema *s;
    char rows[64][96];
    int n;
} scan_acc;

static int scan_row(void *ctx, const w2l_value *v, size_t n)
{
    scan_acc *a = ctx;
    if (a->n >= 64) return 0;
    size_t o = 0;
    a->rows[a->n][0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char b[40];
        w2l_value_format(w2l_schema_field(a->s, i)->type, &v[i], b, sizeof b);
        o += (size_t)snprintf(a->rows[a->n] + o, sizeof a->rows[0] - o, "%s%s", i ? "," : "", b);
    }
    a->n++;
    return 0;
}

static int has_row(const scan_acc *a, const char *r)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->rows[i], r)) return 1;
    return 0;
}

START_TEST(end_to_end_with_builtin_writer)
{
    w2l_conf *c = make_conf(NULL, 2);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "default", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.committer", "default", &err), err);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t1 (id BIGINT PRIMARY KEY, v INT, name VARCHAR(9))");
    w2l_schema *a = mk("id:long!,v:int,name:string"),
               *b = mk("id:long!,v:long,label:string,w:string");
    row(p, "t1", a, "1,10,a");
    row(p, "t1", a, "2,20,b");
    commit(p);
    checkpoint(p);
    row(p, "t1", a, "3,30,c");
    commit(p);
    ddl(p, "ALTER TABLE t1 CHANGE name label VARCHAR(9), MODIFY v BIGINT, ADD COLUMN w TEXT");
    row(p, "t1", b, "4,5000000000,d,x");
    ck_assert_ok(put_row(p, "t1", b, W2L_OP_DELETE, "1,10,a,null"), err);
    commit(p);
    finish(p);
    ck_ice("t1", "1:id:long!,2:v:long,3:label:string,4:w:string");
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "t1", &t, &err), err);
    w2l__ice_scan *sc;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &sc, &err), err);
    static scan_acc acc;
    memset(&acc, 0, sizeof acc);
    acc.s = sc->schema;
    ck_assert_ok(w2l__ice_scan_read(io, sc, scan_row, &acc, &err), err);
    w2l__ice_scan_free(sc);
    ck_assert_int_eq(acc.n, 3);
    ck_assert_msg(has_row(&acc, "2,20,b,null"), "%s", acc.rows[0]);
    ck_assert(has_row(&acc, "3,30,c,null"));
    ck_assert(has_row(&acc, "4,5000000000,d,x"));
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    w2l_schema_unref(a), w2l_schema_unref(b);
    w2l_conf_free(c);
}
END_TEST

/* The rows of db.<table> by our own scan (acc), and its required columns ("id,a"). */
static void read_back(const char *table, scan_acc *acc, char *req, size_t reqsize)
{
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__ice_table *t = NULL;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", table, &t, &err), err);
    w2l__ice_scan *sc;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &sc, &err), err);
    memset(acc, 0, sizeof *acc);
    acc->s = sc->schema;
    ck_assert_ok(w2l__ice_scan_read(io, sc, scan_row, acc, &err), err);
    const w2l_schema *cs = w2l__ice_meta_current_schema(t->meta);
    size_t o = 0;
    req[0] = '\0';
    for (size_t i = 0; i < w2l_schema_field_count(cs); i++)
        if (w2l_schema_field(cs, i)->required)
            o += (size_t)snprintf(req + o, reqsize - o, "%s%s", o ? "," : "",
                                  w2l_schema_field(cs, i)->name);
    w2l__ice_scan_free(sc);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}

static void ck_rows(const char *table, const char *const *want, int n, const char *want_req)
{
    static scan_acc acc;
    char req[128];
    read_back(table, &acc, req, sizeof req);
    ck_assert_str_eq(req, want_req);
    for (int i = 0; i < n; i++)
        ck_assert_msg(has_row(&acc, want[i]), "%s: no row %s (%d rows)", table, want[i], acc.n);
    ck_assert_msg(acc.n == n, "%s: %d rows, want %d", table, acc.n, n);
}

/* ADD PRIMARY KEY on a keyless table, and DROP PRIMARY KEY + ADD PRIMARY KEY (other columns)
 * in one ALTER, with the built-in writer: the key columns become required and the
 * identifier changes; updates and deletes after the change reach the rows written before
 * it, by the new key, those of earlier checkpoints (equality deletes on the new columns)
 * and those of the same checkpoint (read back by the writer: position deletes). _i = 1:
 * two writers. */
START_TEST(primary_key_changes_with_builtin_writer)
{
    w2l_conf *c = make_conf(NULL, _i ? 2 : 1);
    ck_assert_ok(w2l_conf_set(c, "operator.writer", "default", &err), err);
    ck_assert_ok(w2l_conf_set(c, "operator.committer", "default", &err), err);
    w2l_pipeline *p = start(c);
    ddl(p, "CREATE TABLE t2 (id BIGINT, a INT, b VARCHAR(9))");
    w2l_schema *nk = mk("id:long,a:int,b:string"), *k1 = mk("id:long!,a:int,b:string"),
               *k2 = mk("id:long,a:int!,b:string!");
    row(p, "t2", nk, "1,10,x");
    row(p, "t2", nk, "2,20,y");
    row(p, "t2", nk, "3,30,z");
    row(p, "t2", nk, "9,90,r");
    commit(p);
    checkpoint(p);
    ck_assert_ok(put_row(p, "t2", nk, W2L_OP_DELETE, "9,90,r"), err); /* by the whole row */
    row(p, "t2", nk, "4,40,w"); /* the same checkpoint as the ALTER */
    row(p, "t2", nk, "5,50,v");
    commit(p);
    ddl(p, "ALTER TABLE t2 ADD PRIMARY KEY (id)");
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_UPDATE_BEFORE, "1,10,x"), err);
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_UPDATE_AFTER, "1,11,x"), err);
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_DELETE, "2,20,y"), err);
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_UPDATE_BEFORE, "4,40,w"), err);
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_UPDATE_AFTER, "4,41,w"), err);
    ck_assert_ok(put_row(p, "t2", k1, W2L_OP_DELETE, "5,50,v"), err);
    commit(p);
    checkpoint(p);
    ck_ice("t2", "1:id:long!,2:a:int,3:b:string");
    {
        static const char *const want[] = {"1,11,x", "3,30,z", "4,41,w"};
        ck_rows("t2", want, 3, "id");
    }
    /* another key, with rows of the old key in the same checkpoint */
    row(p, "t2", k1, "6,60,u");
    row(p, "t2", k1, "7,70,t");
    commit(p);
    ddl(p, "ALTER TABLE t2 DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)");
    ck_assert_ok(put_row(p, "t2", k2, W2L_OP_UPDATE_BEFORE, "6,60,u"), err);
    ck_assert_ok(put_row(p, "t2", k2, W2L_OP_UPDATE_AFTER, "66,60,u"), err);
    ck_assert_ok(put_row(p, "t2", k2, W2L_OP_DELETE, "7,70,t"), err);
    ck_assert_ok(put_row(p, "t2", k2, W2L_OP_UPDATE_BEFORE, "3,30,z"), err);
    ck_assert_ok(put_row(p, "t2", k2, W2L_OP_UPDATE_AFTER, "33,30,z"), err);
    commit(p);
    checkpoint(p);
    ck_ice("t2", "1:id:long,2:a:int!,3:b:string!");
    {
        static const char *const want[] = {"1,11,x", "33,30,z", "4,41,w", "66,60,u"};
        ck_rows("t2", want, 4, "id,a,b");
    }
    /* the key goes: deletes match the whole row, of both checkpoints */
    row(p, "t2", k2, "8,80,s");
    commit(p);
    ddl(p, "ALTER TABLE t2 DROP PRIMARY KEY");
    ck_assert_ok(put_row(p, "t2", nk, W2L_OP_DELETE, "8,80,s"), err);
    ck_assert_ok(put_row(p, "t2", nk, W2L_OP_DELETE, "1,11,x"), err);
    commit(p);
    finish(p);
    ck_ice("t2", "1:id:long,2:a:int,3:b:string");
    {
        static const char *const want[] = {"33,30,z", "4,41,w", "66,60,u"};
        ck_rows("t2", want, 3, "id,a,b");
    }
    w2l_schema_unref(nk), w2l_schema_unref(k1), w2l_schema_unref(k2);
    w2l_conf_free(c);
}
END_TEST

Suite *suite_op_ddl(void)
{
    Suite *s = suite_create("op_ddl");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, first_sight_creates_table_and_announces);
    tcase_add_test(basic, source_schema_adds_and_widens);
    tcase_add_test(basic, ddl_kinds_keep_field_ids);
    tcase_add_test(basic, create_existing_table_reconciles);
    tcase_add_test(basic, truncate_drop_rename);
    tcase_add_test(basic, ghost_swap_takes_shadow_schema);
    tcase_add_test(basic, ptosc_drop_swap);
    tcase_set_timeout(basic, 60);
    suite_add_tcase(s, basic);
    TCase *fence = tcase_create("fence");
    tcase_add_checked_fixture(fence, setup, teardown);
    tcase_add_test(fence, fence_orders_rows_and_others_flow);
    tcase_add_test(fence, fence_counts_every_writer_of_the_table);
    tcase_add_test(fence, fence_timeout_names_table_and_statement);
    tcase_set_timeout(fence, 60);
    suite_add_tcase(s, fence);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, setup, teardown);
    tcase_add_loop_test(edge, forbidden_change_follows_policy, 0, 3);
    tcase_add_test(edge, unparsable_ddl);
    tcase_add_test(edge, replay_does_not_apply_twice);
    tcase_add_test(edge, end_to_end_with_builtin_writer);
    tcase_add_loop_test(edge, primary_key_changes_with_builtin_writer, 0, 2);
    tcase_set_timeout(edge, 60);
    suite_add_tcase(s, edge);
    return s;
}
