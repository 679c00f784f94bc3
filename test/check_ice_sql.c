/*
 * lib/iceberg/catalog_sql.c: the "sql" catalog against a private MariaDB (w2l-design(7)
 * section 8), started once per TCase by scripts/test-mariadb (found through W2L_SRCDIR,
 * which `make check-unit` sets) and stopped by pid in the teardown. Without the script or
 * mariadbd every test fails with the reason; nothing is skipped silently.
 *
 * Covered: create / load / commit / list / rename / drop-with-purge round trips, JDBC file
 * naming and rows, two writers through two catalog instances (exactly one W2L_CONFLICT, the
 * retry lands both changes), a stale base, create of an existing table, catalogs of
 * different names side by side, an old JDBC table without iceberg_type, bad URIs, a wrong
 * password (no password in the message), a server stopped under an open catalog (a clean
 * retriable error, then a reconnect once it is back), and one instance shared by threads.
 * Every table is read back through our own scan. TCase alloc (no server): avro-c allocates
 * through the library's allocator hook.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#include <avro.h>
#include <mysql.h>

#include "gen/ice_fixture.h"
#include "support/support.h"

/* ---- the server: one per TCase (unchecked fixture, runs in the parent) ---- */

static void server_start(void) { test_mariadb_start("sqlcat"); }
static void server_stop(void) { test_mariadb_stop(); }

/* ---- per test (checked fixture, in the child) ---- */

static char *wh;
static w2l_fileio *io;
static w2l__arena arena;
static int db_seq;

static void setup(void)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    w2l_error err;
    wh = strdup(tmpdir_make("icesql"));
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    w2l__arena_init(&arena, 1 << 16);
}

static void teardown(void)
{
    w2l__arena_release(&arena);
    w2l_fileio_close(io);
    tmpdir_remove(wh);
    free(wh);
}

/* "sql:mysql://w2l:w2lpass@127.0.0.1:PORT/DB?name=NAME" (name NULL: the default) */
static char *uri_of(const char *pass, const char *db, const char *name)
{
    static char u[8][256];
    char *b = u[db_seq++ % 8];
    snprintf(b, 256, "sql:mysql://w2l:%s@127.0.0.1:%d/%s%s%s", pass, (int)test_mariadb_port(), db,
             name ? "?name=" : "", name ? name : "");
    return b;
}

static w2l_catalog *open_cat(const char *db, const char *name)
{
    w2l_error err;
    w2l_catalog *c;
    ck_assert_ok(w2l__catalog_open(uri_of("w2lpass", db, name), NULL, wh, io, &c, &err), err);
    return c;
}

static w2l__ice_table *create(w2l_catalog *cat, const char *ns, const char *name)
{
    w2l_error err;
    w2l_schema *s = fx_schema();
    char *loc = w2l__ice_table_dir(wh, ns, name);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(cat, io, loc, ns, name, s, NULL, NULL, &t, &err), err);
    w2l__free(loc);
    w2l_schema_unref(s);
    return t;
}

/* A direct connection for checking rows and preparing old layouts. */
static MYSQL *direct(const char *db)
{
    MYSQL *m = mysql_init(NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(
        mysql_real_connect(m, "127.0.0.1", "w2l", "w2lpass", NULL, test_mariadb_port(), NULL, 0),
        "connect: %s", mysql_error(m));
    char q[300];
    snprintf(q, sizeof q, "CREATE DATABASE IF NOT EXISTS %s", db);
    ck_assert_msg(mysql_query(m, q) == 0 && mysql_select_db(m, db) == 0, "%s", mysql_error(m));
    return m;
}

/* First column of the first row of q, or "" (static buffer). */
static const char *scalar(MYSQL *m, const char *q)
{
    static char out[1024];
    ck_assert_msg(mysql_query(m, q) == 0, "%s: %s", q, mysql_error(m));
    MYSQL_RES *r = mysql_store_result(m);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    snprintf(out, sizeof out, "%s", row && row[0] ? row[0] : "");
    if (r) mysql_free_result(r);
    return out;
}

typedef struct ids {
    unsigned char seen[256];
    long n, dup;
} ids;

static int collect(void *ctx, const w2l_value *row, size_t n)
{
    ids *x = ctx;
    (void)n;
    long id = (long)row[0].v.i64;
    ck_assert(id >= 0 && id < 256);
    if (x->seen[id]) x->dup++;
    x->seen[id] = 1;
    x->n++;
    return 0;
}

static void scan_ids(const w2l__ice_meta *m, ids *out)
{
    w2l_error err;
    memset(out, 0, sizeof *out);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, m, -1, NULL, NULL, &s, &err), err);
    ck_assert_ok(w2l__ice_scan_read(io, s, collect, out, &err), err);
    w2l__ice_scan_free(s);
    ck_assert_int_eq(out->dup, 0);
}

typedef struct listed {
    int n;
    char all[1024];
} listed;

static int collect_tables(void *ctx, const char *ns, const char *table)
{
    listed *l = ctx;
    size_t k = strlen(l->all);
    snprintf(l->all + k, sizeof l->all - k, "%s%s.%s", l->n ? "," : "", ns, table);
    l->n++;
    return 0;
}

static const char *list(w2l_catalog *c, const char *ns)
{
    static listed l;
    w2l_error err;
    memset(&l, 0, sizeof l);
    ck_assert_ok(w2l__catalog_list(c, ns, collect_tables, &l, &err), err);
    return l.all;
}

static int count_files(void *ctx, const char *name)
{
    (void)name;
    (*(int *)ctx)++;
    return 0;
}

static int files_in(const char *dir)
{
    w2l_error err;
    int n = 0;
    ck_assert_ok(w2l_fileio_list(io, dir, count_files, &n, &err), err);
    return n;
}

/* "NNNNN-<36-char uuid>.metadata.json" with NNNNN == v */
static void assert_jdbc_name(const char *loc, int v)
{
    const char *b = strrchr(loc, '/');
    ck_assert_ptr_nonnull(b);
    b++;
    char want[8];
    snprintf(want, sizeof want, "%05d-", v);
    ck_assert_msg(strncmp(b, want, 6) == 0 && strlen(b) == 6 + 36 + 14 &&
                  strcmp(b + 42, ".metadata.json") == 0, "metadata file name %s", b);
}

/* ---------------------------------------------------------------- tests ---- */

START_TEST(round_trip)
{
    w2l_error err;
    w2l_catalog *cat = open_cat("rt", NULL);
    w2l__ice_table *t = create(cat, "db", "t1");
    assert_jdbc_name(t->meta_location, 0);
    char *mdir = w2l__asprintf("%s/db/t1/metadata", wh);
    ck_assert_int_eq(strncmp(t->meta_location, mdir, strlen(mdir)), 0);
    w2l__ice_data_file f = fx_data(t, 0, 4, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    assert_jdbc_name(t->meta_location, 1);
    /* the rows the JDBC catalog would write */
    MYSQL *m = direct("rt");
    ck_assert_str_eq(scalar(m, "SELECT metadata_location FROM iceberg_tables WHERE "
                               "catalog_name='w2l' "
                               "AND table_namespace='db' AND table_name='t1'"), t->meta_location);
    ck_assert_str_eq(scalar(m, "SELECT iceberg_type FROM iceberg_tables WHERE table_name='t1'"),
                     "TABLE");
    ck_assert_int_eq(strncmp(scalar(m, "SELECT previous_metadata_location FROM iceberg_tables "
                                       "WHERE "
                                       "table_name='t1'"), mdir, strlen(mdir)), 0);
    ck_assert_str_eq(scalar(m, "SELECT property_value FROM iceberg_namespace_properties WHERE "
                               "catalog_name='w2l' AND namespace='db' AND property_key='exists'"),
                     "true");
    /* load sees the commit, the scan reads it */
    w2l__ice_table *r;
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "t1", &r, &err), err);
    ck_assert_str_eq(r->meta_location, t->meta_location);
    ids x;
    scan_ids(r->meta, &x);
    ck_assert_int_eq(x.n, 4);
    w2l__ice_table_free(r);
    w2l__ice_table_free(t);
    ck_assert_int_eq(w2l__ice_table_load(cat, io, "db", "nope", &r, &err), W2L_NOTFOUND);
    /* list, by namespace and all */
    w2l__ice_table_free(create(cat, "db", "t2"));
    w2l__ice_table_free(create(cat, "other", "o1"));
    ck_assert_str_eq(list(cat, NULL), "db.t1,db.t2,other.o1");
    ck_assert_str_eq(list(cat, "db"), "db.t1,db.t2");
    ck_assert_str_eq(list(cat, "none"), "");
    /* rename: the row moves, the files stay, the table takes commits under its new name */
    ck_assert_ok(w2l__catalog_rename(cat, "db", "t1", "db2", "r1", &err), err);
    ck_assert_int_eq(w2l__catalog_rename(cat, "db", "t1", "db2", "r9", &err), W2L_NOTFOUND);
    ck_assert_int_eq(w2l__catalog_rename(cat, "db", "t2", "other", "o1", &err), W2L_EXISTS);
    ck_assert_int_eq(w2l__ice_table_load(cat, io, "db", "t1", &r, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l__ice_table_load(cat, io, "db2", "r1", &r, &err), err);
    w2l__ice_data_file g = fx_data(r, 4, 6, NULL, &arena);
    ck_assert_ok(fx_commit(r, W2L_ICE_OP_APPEND, &g, 1, NULL, 0, 2, &err), err);
    assert_jdbc_name(r->meta_location, 2);
    scan_ids(r->meta, &x);
    ck_assert_int_eq(x.n, 6);
    w2l__ice_table_free(r);
    ck_assert_str_eq(list(cat, NULL), "db.t2,db2.r1,other.o1");
    /* drop with purge removes the files; without, keeps them */
    ck_assert_ok(w2l__catalog_drop(cat, "db2", "r1", 1, &err), err);
    ck_assert_int_eq(w2l__ice_table_load(cat, io, "db2", "r1", &r, &err), W2L_NOTFOUND);
    int ex = 1;
    ck_assert_ok(w2l_fileio_exists(io, f.path, &ex, &err), err);
    ck_assert_int_eq(ex, 0);
    ck_assert_ok(w2l__catalog_drop(cat, "db", "t2", 0, &err), err);
    ck_assert_int_eq(w2l__catalog_drop(cat, "db", "t2", 0, &err), W2L_NOTFOUND);
    char *t2dir = w2l__asprintf("%s/db/t2/metadata", wh);
    ck_assert_int_eq(files_in(t2dir), 1);
    ck_assert_str_eq(list(cat, NULL), "other.o1");
    w2l__free(t2dir);
    w2l__free(mdir);
    mysql_close(m);
    w2l__catalog_close(cat);
}
END_TEST

static int count_meta(void *ctx, const char *name)
{
    if (strstr(name, ".metadata.json")) (*(int *)ctx)++;
    return 0;
}

START_TEST(racing_writers_one_conflict_then_both_land)
{
    w2l_error err;
    w2l_catalog *c1 = open_cat("race", NULL), *c2 = open_cat("race", NULL);
    w2l__ice_table *a = create(c1, "db", "race"), *b;
    ck_assert_ok(w2l__ice_table_load(c2, io, "db", "race", &b, &err), err);
    w2l__ice_data_file fa = fx_data(a, 0, 5, "a", &arena), fb = fx_data(b, 5, 10, "b", &arena);
    ck_assert_ok(fx_commit(a, W2L_ICE_OP_APPEND, &fa, 1, NULL, 0, 1, &err), err);
    w2l__ice_change c;
    w2l__ice_change_init(&c, W2L_ICE_OP_APPEND);
    c.files = &fb;
    c.nfiles = 1;
    ck_assert_int_eq(w2l__ice_table_try_commit(b, &c, &err), W2L_CONFLICT);
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_ok(w2l__ice_table_commit(b, &c, 3, &err), err);
    w2l__ice_change_release(&c, io, 0);
    ids x;
    scan_ids(b->meta, &x);
    ck_assert_int_eq(x.n, 10);
    ck_assert_int_eq(b->meta->nsnapshots, 2);
    w2l__ice_table_free(a);
    ck_assert_ok(w2l__ice_table_load(c1, io, "db", "race", &a, &err), err);
    ck_assert_str_eq(a->meta_location, b->meta_location);
    scan_ids(a->meta, &x);
    ck_assert_int_eq(x.n, 10);
    ck_assert_int_eq(a->meta->nmeta_log, 2); /* the two earlier versions */
    /* the loser's unused metadata file was removed: create, a's commit, b's commit */
    char *mdir = w2l__asprintf("%s/db/race/metadata", wh);
    int nmeta = 0;
    ck_assert_ok(w2l_fileio_list(io, mdir, count_meta, &nmeta, &err), err);
    ck_assert_int_eq(nmeta, 3);
    w2l__free(mdir);
    w2l__ice_table_free(a);
    w2l__ice_table_free(b);
    w2l__catalog_close(c1);
    w2l__catalog_close(c2);
}
END_TEST

START_TEST(stale_base_and_existing_table)
{
    w2l_error err;
    w2l_catalog *cat = open_cat("stale", NULL);
    w2l__ice_table *t = create(cat, "db", "s");
    char *base0 = w2l__strdup(t->meta_location);
    w2l__ice_data_file f = fx_data(t, 0, 2, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    char *text;
    size_t len;
    ck_assert_ok(w2l__ice_meta_print(t->meta, &text, &len, &err), err);
    char *mdir = w2l__asprintf("%s/db/s/metadata", wh);
    int before = 0, after = 0;
    w2l_fileio_list(io, mdir, count_meta, &before, &err);
    w2l_buf loc = {0};
    ck_assert_int_eq(w2l__catalog_commit(cat, "db", "s", base0, text, len, &loc, &err),
                     W2L_CONFLICT);
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_int_eq(loc.len, 0);
    /* a base the catalog never had is stale too */
    ck_assert_int_eq(
        w2l__catalog_commit(cat, "db", "s", "/x/00007-y.metadata.json", text, len, &loc, &err),
        W2L_CONFLICT);
    w2l_fileio_list(io, mdir, count_meta, &after, &err);
    ck_assert_int_eq(after, before); /* the written files were removed again */
    /* the table still is where the winner left it */
    w2l_buf cur = {0};
    ck_assert_ok(w2l__catalog_load(cat, "db", "s", &cur, &err), err);
    ck_assert_str_eq((const char *)cur.data, t->meta_location);
    /* create of an existing table */
    ck_assert_int_eq(w2l__catalog_commit(cat, "db", "s", NULL, text, len, &loc, &err), W2L_EXISTS);
    w2l_schema *s = fx_schema();
    w2l__ice_table *t2;
    ck_assert_int_eq(
        w2l__ice_table_create(cat, io, "/nowhere", "db", "s", s, NULL, NULL, &t2, &err),
        W2L_EXISTS);
    w2l_schema_unref(s);
    after = 0;
    w2l_fileio_list(io, mdir, count_meta, &after, &err);
    ck_assert_int_eq(after, before);
    w2l_buf_release(&cur);
    w2l_buf_release(&loc);
    w2l__free(text);
    w2l__free(mdir);
    w2l__free(base0);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
}
END_TEST

START_TEST(catalog_names_are_separate)
{
    w2l_error err;
    w2l_catalog *a = open_cat("names", NULL), *b = open_cat("names", "lake2");
    w2l__ice_table_free(create(a, "db", "t"));
    ck_assert_str_eq(list(b, NULL), "");
    w2l__ice_table *t;
    ck_assert_int_eq(w2l__ice_table_load(b, io, "db", "t", &t, &err), W2L_NOTFOUND);
    /* the same name in the other catalog is another table (in the same warehouse path here,
     * so it is given its own directory) */
    w2l_schema *s = fx_schema();
    char *loc = w2l__asprintf("%s/lake2/db/t", wh);
    ck_assert_ok(w2l__ice_table_create(b, io, loc, "db", "t", s, NULL, NULL, &t, &err), err);
    w2l__ice_table_free(t);
    w2l__free(loc);
    w2l_schema_unref(s);
    ck_assert_str_eq(list(a, NULL), "db.t");
    ck_assert_str_eq(list(b, NULL), "db.t");
    MYSQL *m = direct("names");
    ck_assert_str_eq(scalar(m, "SELECT COUNT(*) FROM iceberg_tables"), "2");
    /* a view row of the JDBC catalog is not a table */
    ck_assert(mysql_query(m, "INSERT INTO iceberg_tables VALUES ('w2l','db','v','/v.json',NULL,"
                             "'VIEW')") == 0);
    ck_assert_str_eq(list(a, NULL), "db.t");
    ck_assert_int_eq(w2l__ice_table_load(a, io, "db", "v", &t, &err), W2L_NOTFOUND);
    mysql_close(m);
    w2l__catalog_close(a);
    w2l__catalog_close(b);
}
END_TEST

START_TEST(old_jdbc_table_without_type)
{
    w2l_error err;
    MYSQL *m = direct("v0");
    ck_assert_msg(mysql_query(m, "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
                                 "table_namespace VARCHAR(255) NOT NULL,"
                                 " table_name VARCHAR(255) NOT NULL, "
                                 "metadata_location VARCHAR(1000), previous_metadata_location "
                                 "VARCHAR(1000), "
                                 "PRIMARY KEY (catalog_name, table_namespace, table_name))") == 0,
                  "%s", mysql_error(m));
    w2l_catalog *cat = open_cat("v0", NULL);
    w2l__ice_table *t = create(cat, "db", "old");
    w2l__ice_data_file f = fx_data(t, 0, 3, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    ck_assert_str_eq(list(cat, NULL), "db.old");
    ck_assert_ok(w2l__catalog_rename(cat, "db", "old", "db", "new", &err), err);
    w2l__ice_table *r;
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "new", &r, &err), err);
    ids x;
    scan_ids(r->meta, &x);
    ck_assert_int_eq(x.n, 3);
    ck_assert_str_eq(scalar(m, "SELECT COUNT(*) FROM information_schema.columns WHERE "
                               "table_schema='v0' "
                               "AND table_name='iceberg_tables'"), "5");
    w2l__ice_table_free(r);
    w2l__ice_table_free(t);
    mysql_close(m);
    w2l__catalog_close(cat);
}
END_TEST

START_TEST(bad_uri_and_wrong_password)
{
    w2l_error err;
    w2l_catalog *c = NULL;
    const char *bad[] = { "sql:",
                          "sql:postgres://a@b/c",
                          "sql:mysql://host/db",
                          "sql:mysql://u:p@h:99999/db",
                          "sql:mysql://u:p@h:1/",
                          "sql:mysql://u:p@h:1/db?colour=red" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(w2l__catalog_open(bad[i], NULL, wh, io, &c, &err) == W2L_CONFIG, "%s: %s",
                      bad[i], err.msg);
        ck_assert_ptr_null(c);
    }
    const char *secret = "s3cr3t-Pa55";
    w2l_rc rc = w2l__catalog_open(uri_of(secret, "pw", NULL), NULL, wh, io, &c, &err);
    /* the server's refusal is a runtime failure (exit 1), not bad usage (W2L_CONFIG, exit 2) */
    ck_assert_msg(rc == W2L_ERROR, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert_ptr_null(c);
    ck_assert_msg(!strstr(err.msg, secret), "password in message: %s", err.msg);
    ck_assert_msg(strstr(err.msg, "w2l:****@127.0.0.1"), "message: %s", err.msg);
    ck_assert_int_eq(err.sys_errno, 1045); /* ER_ACCESS_DENIED_ERROR */
    /* nothing listens: W2L_UNAVAILABLE, retriable, quickly */
    rc = w2l__catalog_open("sql:mysql://w2l:w2lpass@127.0.0.1:1/db", NULL, wh, io, &c, &err);
    ck_assert_msg(rc == W2L_UNAVAILABLE && (err.flags & W2L_ERR_RETRIABLE) && err.sys_errno != 0,
                  "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert(!strstr(err.msg, "w2lpass"));
    /* percent-encoded user info */
    ck_assert_ok(w2l__catalog_open(uri_of("w2l%70ass", "pw", NULL), NULL, wh, io, &c, &err), err);
    w2l__catalog_close(c);
}
END_TEST

START_TEST(server_stopped_then_back)
{
    w2l_error err;
    w2l_catalog *cat = open_cat("stop", NULL);
    w2l__ice_table *t = create(cat, "db", "t");
    ck_assert_int_eq(test_mariadb_script("stop"), 0);
    w2l_buf loc = {0};
    w2l_rc rc = w2l__catalog_load(cat, "db", "t", &loc, &err);
    ck_assert_msg(rc == W2L_UNAVAILABLE, "%s: %s", w2l_rc_name(rc), err.msg);
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_int_ne(err.sys_errno, 0);
    ck_assert(!strstr(err.msg, "w2lpass"));
    /* a commit cannot land either, and reports the same */
    w2l__ice_data_file f = fx_data(t, 0, 2, NULL, &arena);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err);
    ck_assert_msg(rc == W2L_UNAVAILABLE, "%s: %s", w2l_rc_name(rc), err.msg);
    /* back again: the same instance reconnects by itself */
    ck_assert_int_eq(test_mariadb_script("start"), 0);
    ck_assert_ok(w2l__catalog_load(cat, "db", "t", &loc, &err), err);
    ck_assert_str_eq((const char *)loc.data, t->meta_location);
    ck_assert_ok(w2l__ice_table_refresh(t, &err), err);
    f = fx_data(t, 0, 2, NULL, &arena);
    ck_assert_ok(fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, 1, &err), err);
    ids x;
    scan_ids(t->meta, &x);
    ck_assert_int_eq(x.n, 2);
    w2l_buf_release(&loc);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
}
END_TEST

/* One instance shared by threads, each committing to its own table. */
typedef struct worker {
    w2l_catalog *cat;
    int k;
    w2l_rc rc;
    char msg[512];
} worker;

static int work(void *arg)
{
    worker *w = arg;
    w2l_error err;
    char name[16];
    snprintf(name, sizeof name, "t%d", w->k);
    w2l__ice_table *t;
    w->rc = w2l__ice_table_load(w->cat, io, "db", name, &t, &err);
    w2l__arena a;
    w2l__arena_init(&a, 1 << 14);
    for (int j = 0; w->rc == W2L_OK && j < 5; j++) {
        w2l__ice_data_file f = fx_data(t, w->k * 10 + j, w->k * 10 + j + 1, NULL, &a);
        w->rc = fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, j + 1, &err);
    }
    if (w->rc != W2L_OK) snprintf(w->msg, sizeof w->msg, "%s", err.msg);
    w2l__arena_release(&a);
    w2l__ice_table_free(t);
    return 0;
}

START_TEST(one_instance_many_threads)
{
    w2l_error err;
    w2l_catalog *cat = open_cat("threads", NULL);
    worker w[4];
    thrd_t th[4];
    for (int k = 0; k < 4; k++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", k);
        w2l__ice_table_free(create(cat, "db", name));
        w[k] = (worker){cat, k, W2L_OK, ""};
    }
    for (int k = 0; k < 4; k++) ck_assert_int_eq(thrd_create(&th[k], work, &w[k]), thrd_success);
    for (int k = 0; k < 4; k++) thrd_join(th[k], NULL);
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(w[k].rc == W2L_OK, "thread %d: %s: %s", k, w2l_rc_name(w[k].rc), w[k].msg);
        char name[16];
        snprintf(name, sizeof name, "t%d", k);
        w2l__ice_table *t;
        ck_assert_ok(w2l__ice_table_load(cat, io, "db", name, &t, &err), err);
        ids x;
        scan_ids(t->meta, &x);
        ck_assert_int_eq(x.n, 5);
        assert_jdbc_name(t->meta_location, 5);
        w2l__ice_table_free(t);
    }
    w2l__catalog_close(cat);
}
END_TEST

/* The foundation fix beside the catalog: avro-c allocates through the library's hook, so
 * the allocator a host installs (and the OOM tests' counting one) sees manifests' memory. */
START_TEST(avro_allocates_through_the_hook)
{
    fail_alloc_install();
    fail_alloc_arm(1L << 30); /* count, never fail */
    long live0 = fail_alloc_outstanding();
    avro_schema_t sch;
    ck_assert_int_eq(avro_schema_from_json_literal(
                         "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\","
                         "\"type\":\"long\"}]}",
                         &sch), 0);
    ck_assert_int_gt(fail_alloc_count(), 0);
    ck_assert_int_gt(fail_alloc_outstanding(), live0);
    avro_schema_decref(sch);
    ck_assert_int_eq(fail_alloc_outstanding(), live0);
    fail_alloc_arm(-1);
}
END_TEST

Suite *suite_ice_sql(void)
{
    Suite *s = suite_create("ice_sql");
    TCase *basic = tcase_create("basic");
    tcase_add_unchecked_fixture(basic, server_start, server_stop);
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_set_timeout(basic, 60);
    tcase_add_test(basic, round_trip);
    tcase_add_test(basic, racing_writers_one_conflict_then_both_land);
    tcase_add_test(basic, stale_base_and_existing_table);
    tcase_add_test(basic, catalog_names_are_separate);
    tcase_add_test(basic, old_jdbc_table_without_type);
    tcase_add_test(basic, bad_uri_and_wrong_password);
    tcase_add_test(basic, one_instance_many_threads);
    /* stops and restarts the server; it leaves it running, so order does not matter */
    tcase_add_test(basic, server_stopped_then_back);
    suite_add_tcase(s, basic);
    TCase *alloc = tcase_create("alloc"); /* no server */
    tcase_add_test(alloc, avro_allocates_through_the_hook);
    suite_add_tcase(s, alloc);
    return s;
}
