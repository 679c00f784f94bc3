/*
 * lib/source/mysql_source.c, binlog.c, mysql_snapshot.c: the "mysql" source
 * against a private MariaDB (w2l-design(7) section 8), started once per TCase by
 * scripts/test-mariadb (found through W2L_SRCDIR, which `make check-unit` sets) and
 * stopped by pid in the teardown. Without it every test fails with the reason.
 *
 * Method: what the source emits is applied to a model of the lake (rows keyed by primary
 * key: INSERT / UPDATE_AFTER put, DELETE and UPDATE_BEFORE remove), and the model is
 * compared with SELECT of the source table, column by column, each value in a canonical
 * text the server computes (HEX of strings as UTF-8, DATE_FORMAT, CAST) and that the
 * test computes from the emitted value. Covered: every type of w2l-design(7) section 4 with
 * typical, extreme, zero and NULL values through the snapshot and through the binlog;
 * UPDATE before/after; DELETE; restart from a saved position mid-stream (no loss, no
 * duplicate); a snapshot resumed mid-table; DDL interleaved with DML; a GTID start;
 * several databases; a wrong password; a position not on the server; an idle stream;
 * source.tinyint1-as-boolean (nonzero is true, one warning per table and column); the
 * snapshot under FLUSH TABLES WITH READ LOCK (source.snapshot-lock=ftwrl) while another
 * connection writes, and the error of a user without RELOAD; TLS and RSA-key options
 * (parsing, unreadable or non-PEM key files, ssl-mode=required on a server without TLS). The
 * "decode" TCase runs the row decoder on built images without a server: DECIMAL(65,30)
 * as its exact text, BIT(64) bit patterns, GEOMETRY without its SRID, TINYINT(1) values.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <mysql.h>

#include "common/common.h"
#include "event/emit.h"
#include "source/mysql_int.h"
#include "source/mysql_source_int.h"
#include "support/support.h"

/* ---- the server: one per TCase (unchecked fixture, runs in the parent) ---- */

static void server_start(void) { test_mariadb_start("mysrc"); }
static void server_stop(void) { test_mariadb_stop(); }

/* ---- SQL through the client library ---- */

static MYSQL *db_connect(void)
{
    MYSQL *m = mysql_init(NULL);
    ck_assert_ptr_nonnull(m);
    mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_optionsv(m, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
    ck_assert_msg(
        mysql_real_connect(m, "127.0.0.1", "w2l", "w2lpass", NULL, test_mariadb_port(), NULL, 0),
        "connect: %s", mysql_error(m));
    return m;
}

/* root, without a password over 127.0.0.1 (scripts/test-mariadb): for GRANT, which the
 * test's own user w2l may not give */
static MYSQL *root_connect(void)
{
    MYSQL *m = mysql_init(NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(
        mysql_real_connect(m, "127.0.0.1", "root", "", NULL, test_mariadb_port(), NULL, 0),
        "connect as root: %s", mysql_error(m));
    return m;
}

static void sql(MYSQL *m, const char *q)
{
    ck_assert_msg(mysql_query(m, q) == 0, "%s: %s", q, mysql_error(m));
    MYSQL_RES *r = mysql_store_result(m);
    if (r) mysql_free_result(r);
}

/* ---- collecting what the source emits into a model of the lake ---- */

#define MAXROWS 256
#define MAXCOLS 64

typedef struct mrow {
    char key[128];
    char *vals[MAXCOLS]; /* canonical text, NULL for NULL */
    char *names[MAXCOLS];
    int ncols;
} mrow;

typedef struct pend {
    w2l_op op;
    mrow row;
} pend;

typedef struct model {
    char table[128];     /* "db.t" the model follows; "db.a,db.b" several (keys then "db.t:key") */
    mrow rows[MAXROWS];
    int n;
    pend pending[MAXROWS];
    int npending;
    int max_commits;     /* > 0: the commit after that many fails (a kill) */
    int inserts, updates, deletes, ddls, commits, changes;
    char last_pos[2048];
    char ddl_text[8192];
    int64_t ts_ms;
} model;

static void hex(const char *p, size_t n, char *out)
{
    static const char *d = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[(unsigned char)p[i] >> 4];
        out[2 * i + 1] = d[(unsigned char)p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The canonical text of an emitted value (what value_sql() computes on the server). */
static char *canon(const w2l_field *f, const w2l_value *v)
{
    if (v->is_null) return NULL;
    size_t cap =
        64 +
        (f->type.id == W2L_TYPE_STRING || f->type.id == W2L_TYPE_BINARY ? 2 * v->v.bytes.len : 0);
    char *s = malloc(cap);
    switch (f->type.id) {
    case W2L_TYPE_STRING: case W2L_TYPE_BINARY: hex(v->v.bytes.ptr, v->v.bytes.len, s); break;
    case W2L_TYPE_FLOAT: snprintf(s, cap, "%.9g", (double)v->v.f32); break;
    case W2L_TYPE_DOUBLE: snprintf(s, cap, "%.17g", v->v.f64); break;
    default: w2l_value_format(f->type, v, s, cap);
    }
    return s;
}

static void mrow_free(mrow *r)
{
    for (int i = 0; i < r->ncols; i++) {
        free(r->vals[i]);
        free(r->names[i]);
    }
    memset(r, 0, sizeof *r);
}

static mrow *find_row(model *m, const char *key)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->rows[i].key, key)) return &m->rows[i];
    return NULL;
}

static int model_multi(const model *m) { return strchr(m->table, ',') != NULL; }

static int model_has(const model *m, const char *full)
{
    if (!model_multi(m)) return !strcmp(full, m->table);
    size_t l = strlen(full);
    for (const char *p = m->table; (p = strstr(p, full)); p += l)
        if ((p == m->table || p[-1] == ',') && (p[l] == ',' || p[l] == '\0')) return 1;
    return 0;
}

static void row_key(const model *m, const w2l_change *c, char *key, size_t size)
{
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(c->schema, &nid);
    ck_assert_msg(nid > 0, "%s.%s has no identifier", c->db, c->table);
    key[0] = '\0';
    if (model_multi(m)) snprintf(key, size, "%s.%s:", c->db, c->table);
    for (size_t k = 0; k < nid; k++) {
        long i = w2l_schema_index_of_id(c->schema, ids[k]);
        char *t = canon(w2l_schema_field(c->schema, (size_t)i), &c->row[i]);
        size_t l = strlen(key);
        snprintf(key + l, size - l, "%s%s", k ? "|" : "", t ? t : "null");
        free(t);
    }
}

/* Changes wait in pending until their commit, as the lake sees them only at commits. */
static w2l_rc on_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    model *m = ctx;
    for (size_t i = 0; i < b->n; i++) {
        const w2l_change *c = &b->changes[i];
        m->changes++;
        char full[300];
        snprintf(full, sizeof full, "%s.%s", c->db, c->table);
        if (!model_has(m, full)) continue;
        ck_assert_int_lt(m->npending, MAXROWS);
        pend *p = &m->pending[m->npending++];
        memset(p, 0, sizeof *p);
        p->op = c->op;
        mrow *r = &p->row;
        row_key(m, c, r->key, sizeof r->key);
        r->ncols = (int)c->ncols;
        for (size_t k = 0; k < c->ncols; k++) {
            const w2l_field *f = w2l_schema_field(c->schema, k);
            r->names[k] = strdup(f->name);
            if (c->op != W2L_OP_UPDATE_BEFORE && c->op != W2L_OP_DELETE)
                ck_assert_msg(!c->present || (c->present[k / 8] >> (k % 8) & 1),
                              "column %s absent in a full image", f->name);
            r->vals[k] = canon(f, &c->row[k]);
        }
        m->ts_ms = c->ts_ms;
    }
    w2l__batch_free(b);
    return W2L_OK;
}

/* lenient: a commit of the snapshot's time ("chunks" in its position), when a chunk's
 * rows replace the rows of their keys and the stream's events may name rows of ranges not
 * read yet: the lake's upsert semantics (INSERT replaces, a DELETE of no row is nothing). */
static void apply_pending(model *m, int lenient)
{
    for (int i = 0; i < m->npending; i++) {
        pend *p = &m->pending[i];
        if (p->op == 0) { /* TRUNCATE: key holds "db.t:" (or "" for the one table) */
            for (int k = m->n; k-- > 0;)
                if (!strncmp(m->rows[k].key, p->row.key, strlen(p->row.key))) {
                    mrow_free(&m->rows[k]);
                    m->rows[k] = m->rows[--m->n];
                }
            continue;
        }
        mrow *r = find_row(m, p->row.key);
        switch (p->op) {
        case W2L_OP_INSERT: m->inserts++; break;
        case W2L_OP_UPDATE_AFTER: m->updates++; break;
        case W2L_OP_DELETE: m->deletes++; break;
        default: break;
        }
        if (lenient && r && (p->op == W2L_OP_INSERT || p->op == W2L_OP_UPDATE_AFTER)) {
            mrow_free(r);
            *r = m->rows[--m->n];
            r = NULL;
        }
        if (lenient && !r && (p->op == W2L_OP_DELETE || p->op == W2L_OP_UPDATE_BEFORE)) {
            mrow_free(&p->row);
            continue;
        }
        if (p->op == W2L_OP_DELETE || p->op == W2L_OP_UPDATE_BEFORE) {
            ck_assert_msg(r != NULL, "%s of a row not in the lake: %s %s",
                          p->op == W2L_OP_DELETE ? "DELETE" : "UPDATE", m->table, p->row.key);
            mrow_free(r);
            *r = m->rows[--m->n];
            mrow_free(&p->row);
            continue;
        }
        ck_assert_msg(r == NULL, "INSERT of a row already in the lake (duplicate): %s %s", m->table,
                      p->row.key);
        ck_assert_int_lt(m->n, MAXROWS);
        m->rows[m->n++] = p->row;
    }
    m->npending = 0;
}

static w2l_rc on_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    model *m = ctx;
    m->ddls++;
    char full[300];
    snprintf(full, sizeof full, "%s.%s", d->ddl.db ? d->ddl.db : "",
             d->ddl.table ? d->ddl.table : "");
    if (!strncmp(d->ddl.sql, "TRUNCATE", 8) && model_has(m, full)) {
        ck_assert_int_lt(m->npending, MAXROWS);
        pend *p = &m->pending[m->npending++];
        memset(p, 0, sizeof *p);
        if (model_multi(m)) snprintf(p->row.key, sizeof p->row.key, "%.120s:", full);
    }
    size_t l = strlen(m->ddl_text);
    snprintf(m->ddl_text + l, sizeof m->ddl_text - l, "%s.%s: %s\n", d->ddl.db ? d->ddl.db : "-",
             d->ddl.table ? d->ddl.table : "-", d->ddl.sql);
    w2l__ddl_elem_free(d);
    return W2L_OK;
}

static w2l_rc on_commit(void *ctx, const char *pos, size_t len, w2l_error *err)
{
    model *m = ctx;
    if (m->max_commits && m->commits >= m->max_commits) { /* "killed": this commit never happens */
        for (int i = 0; i < m->npending; i++) mrow_free(&m->pending[i].row);
        m->npending = 0;
        return w2l__fail(err, W2L_CANCELLED, "test: stopped");
    }
    char *copy = strndup(pos, len);
    ck_assert_ptr_nonnull(copy);
    apply_pending(m, strstr(copy, "\"chunks\"") != NULL);
    free(copy);
    m->commits++;
    snprintf(m->last_pos, sizeof m->last_pos, "%.*s", (int)len, pos);
    return W2L_OK;
}

static void model_free(model *m)
{
    for (int i = 0; i < m->n; i++) mrow_free(&m->rows[i]);
    m->n = 0;
}

/* ---- running the source ---- */

static unsigned next_server_id(void)
{
    static unsigned n;
    return 5000 + (unsigned)(getpid() % 1000) * 10 + n++;
}

static char *uri_for(const char *params)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "mysql://cdc:cdcpass@127.0.0.1:%d/?server-id=%u&%s",
             (int)test_mariadb_port(), next_server_id(), params);
    return buf;
}

/* Extra conf of the next run_open ("key=value"), NULL for none. */
static const char *run_conf;

typedef struct run {
    w2l_emitter *em;
    w2l_conf *conf;
    w2l_source *src;
} run;

static w2l_rc run_open(run *r, model *m, const char *uri, const char *restored, int until,
                       w2l_error *err)
{
    memset(r, 0, sizeof *r);
    w2l__emit_hooks h = {on_batch, on_ddl, on_commit, m};
    r->em = w2l__emitter_new(&h, 1);
    r->conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(r->conf, "until-caught-up", until ? "true" : "false", err), *err);
    ck_assert_ok(w2l_conf_set(r->conf, "source.time-as-string", "true", err), *err);
    if (run_conf) {
        char k[128];
        const char *eq = strchr(run_conf, '=');
        snprintf(k, sizeof k, "%.*s", (int)(eq - run_conf), run_conf);
        ck_assert_ok(w2l_conf_set(r->conf, k, eq + 1, err), *err);
    }
    const w2l_source_methods *mt = w2l_source_find("mysql");
    ck_assert_ptr_nonnull(mt);
    r->src = calloc(1, mt->size);
    r->src->methods = mt;
    w2l_rc rc = mt->open(mt, r->conf, uri, restored, r->src, err);
    if (rc != W2L_OK) {
        free(r->src);
        r->src = NULL;
        w2l__emitter_free(r->em);
        w2l_conf_free(r->conf);
        r->em = NULL;
        r->conf = NULL;
    }
    return rc;
}

static void run_close(run *r)
{
    if (r->src) {
        r->src->methods->close(r->src);
        free(r->src);
    }
    w2l__emitter_flush(r->em, NULL);
    w2l__emitter_free(r->em);
    w2l_conf_free(r->conf);
}

/* until-caught-up: next() until W2L_DONE; returns the last rc. max_commits > 0 stops
 * after that many commits (a "kill" at a transaction boundary). */
static w2l_rc run_all(run *r, model *m, int max_commits, w2l_error *err)
{
    w2l_rc rc;
    m->max_commits = max_commits;
    for (int i = 0; i < 100000; i++) {
        rc = r->src->methods->next(r->src, r->em, 200, err);
        w2l__emitter_flush(r->em, NULL);
        if (rc == W2L_CANCELLED && max_commits) rc = W2L_OK;
        if (rc != W2L_OK && rc != W2L_AGAIN) break;
        if (max_commits && m->commits >= max_commits) break;
    }
    m->max_commits = 0;
    return rc;
}

/* ---- comparing with SELECT ---- */

typedef enum {
    K_INT,
    K_BOOL,
    K_FLOAT,
    K_DOUBLE,
    K_DEC,
    K_DATE,
    K_DT,
    K_TS,
    K_TIMESTR,
    K_TEXT,
    K_BIN,
    K_BIT,
    K_YEAR,
    K_DECSTR,
    K_GEOM
} kind;

typedef struct coldef {
    const char *name, *type;
    kind k;
} coldef;

static const coldef types_cols[] = {
    { "id", "INT NOT NULL", K_INT },
    { "ti", "TINYINT", K_INT },
    { "tiu", "TINYINT UNSIGNED", K_INT },
    { "b1", "TINYINT(1)", K_INT },
    { "si", "SMALLINT", K_INT },
    { "siu", "SMALLINT UNSIGNED", K_INT },
    { "mi", "MEDIUMINT", K_INT },
    { "miu", "MEDIUMINT UNSIGNED", K_INT },
    { "i", "INT", K_INT },
    { "iu", "INT UNSIGNED", K_INT },
    { "bi", "BIGINT", K_INT },
    { "biu", "BIGINT UNSIGNED", K_DEC },
    { "yr", "YEAR", K_YEAR },
    { "d1", "DECIMAL(10,2)", K_DEC },
    { "d2", "DECIMAL(38,10)", K_DEC },
    { "d3", "DECIMAL(5,0)", K_DEC },
    { "d4", "DECIMAL(18,9)", K_DEC },
    { "d5", "DECIMAL(3,3)", K_DEC },
    { "f", "FLOAT", K_FLOAT },
    { "db", "DOUBLE", K_DOUBLE },
    { "dt", "DATE", K_DATE },
    { "dt0", "DATETIME", K_DT },
    { "dt3", "DATETIME(3)", K_DT },
    { "dt6", "DATETIME(6)", K_DT },
    { "ts0", "TIMESTAMP NULL", K_TS },
    { "ts2", "TIMESTAMP(2) NULL", K_TS },
    { "ts6", "TIMESTAMP(6) NULL", K_TS },
    { "tm0", "TIME", K_TIMESTR },
    { "tm1", "TIME(1)", K_TIMESTR },
    { "tm3", "TIME(3)", K_TIMESTR },
    { "tm6", "TIME(6)", K_TIMESTR },
    { "vc", "VARCHAR(20)", K_TEXT },
    { "vcl", "VARCHAR(300) CHARACTER SET latin1", K_TEXT },
    { "vcb", "VARBINARY(30)", K_BIN },
    { "c10", "CHAR(10)", K_TEXT },
    { "c100", "CHAR(100)", K_TEXT },
    { "c255", "CHAR(255)", K_TEXT },
    { "bn4", "BINARY(4)", K_BIN },
    { "tx", "TEXT", K_TEXT },
    { "ttx", "TINYTEXT", K_TEXT },
    { "mtx", "MEDIUMTEXT", K_TEXT },
    { "bl", "BLOB", K_BIN },
    { "lbl", "LONGBLOB", K_BIN },
    { "js", "JSON", K_TEXT },
    { "en", "ENUM('a','b','it''s')", K_TEXT },
    { "st", "SET('x','y','z')", K_TEXT },
    { "bt1", "BIT(1)", K_BOOL },
    { "bt12", "BIT(12)", K_BIT },
    { "bt64", "BIT(64)", K_BIT },
    { "d65", "DECIMAL(65,30)", K_DECSTR },
    { "gm", "GEOMETRY", K_GEOM },
    { "pt", "POINT", K_GEOM },
};
#define NTC ((int)(sizeof types_cols / sizeof types_cols[0]))

static const char *types_rows[] = {
    /* typical */
    "1,-5,200,1,-300,60000,-8000000,16000000,-2000000000,4000000000,"
    "-9000000000000000000,18000000000000000000,2024,"
    "12345678.91,-1234567890123456789012345678.0123456789,99999,"
    "-123456789.123456789,0.5,3.14159,2.718281828459045,"
    "'2024-02-29','2024-02-29 12:34:56','2024-02-29 12:34:56.789','2024-02-29 12:34:56.123456',"
    "'2024-02-29 12:34:56','2024-02-29 12:34:56.78','2024-02-29 12:34:56.654321',"
    "'12:34:56','-01:02:03.4','123:45:06.789','-838:59:58.999999',"
    "'héllo wörld ✓','café crème',X'00FF10','ab','padded  ',REPEAT('x',255),X'0102',"
    "'some text','tiny',REPEAT('m',70000),X'DEADBEEF',REPEAT(X'AB',100000),'{\"a\":[1,2,"
    "{\"b\":null}]}',"
    "'it''s','x,z',b'1',b'101010101010',b'"
    "1000000000000000000000000000000000000000000000000000000000000001',"
    "-12345678901234567890123456789012345.123456789012345678901234567890,"
    "ST_GeomFromText('LINESTRING(0 0,1.5 1,2 -5.25)'),ST_GeomFromText('POINT(13.4 52.5)',4326)",
    /* extremes */
    "2,-128,255,127,-32768,65535,-8388608,16777215,-2147483648,4294967295,"
    "-9223372036854775808,18446744073709551615,2155,"
    "-99999999.99,9999999999999999999999999999.9999999999,-99999,999999999.999999999,-0.999,"
    "-3.40282e38,-1.7976931348623157e308,"
    "'9999-12-31','1000-01-01 00:00:00','9999-12-31 23:59:59.999','9999-12-31 23:59:59.999999',"
    "'1970-01-01 00:00:01','2038-01-19 03:14:07.99','2038-01-19 03:14:07.999999',"
    "'838:59:59','-838:59:59.0','-000:00:00.001','-00:00:00.000001',"
    "REPEAT('é',20),REPEAT('ÿ',300),REPEAT(X'FF',30),REPEAT('z',10),REPEAT('€',100),REPEAT('y',"
    "255),X'FFFFFFFF',"
    "REPEAT('t',65535),REPEAT('u',255),'',X'',X'','[]',"
    "'b','x,y,z',b'0',b'111111111111',b'"
    "1111111111111111111111111111111111111111111111111111111111111111',"
    "99999999999999999999999999999999999.999999999999999999999999999999,"
    "ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0))'),ST_GeomFromText('POINT(-180 -90)')",
    /* all NULL */
    "3,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,"
    "NULL,NULL,NULL,NULL,NULL,"
    "NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,"
    "NULL,NULL,NULL,NULL,NULL,NULL,NULL,"
    "NULL,NULL,NULL",
    /* zero / empty */
    "4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,'1970-01-01','1970-01-01 00:00:00',"
    "'1970-01-01 00:00:00.000',"
    "'1970-01-01 00:00:00.000000',NULL,NULL,NULL,'00:00:00','00:00:00.0','00:00:00.000',"
    "'00:00:00.000000',"
    "'','',X'','','','',X'00000000','','','',X'',X'','{}','a','',b'0',b'0',b'0',0,"
    "ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'),ST_GeomFromText('POINT(0 0)')",
};

/* The server-side canonical text of a column. */
static void value_sql(const coldef *c, char *buf, size_t size)
{
    const char *n = c->name;
    switch (c->k) {
    case K_INT: case K_DEC: snprintf(buf, size, "CAST(`%s` AS CHAR)", n); break;
    case K_YEAR: snprintf(buf, size, "CAST(`%s`+0 AS CHAR)", n); break;
    case K_BOOL:
        snprintf(buf, size, "IF(`%s` IS NULL,NULL,IF(`%s`+0<>0,'true','false'))", n, n);
        break;
    case K_BIT: snprintf(buf, size, "CAST(CAST(`%s`+0 AS SIGNED) AS CHAR)", n); break;
    case K_FLOAT: case K_DOUBLE: snprintf(buf, size, "CAST(`%s` AS DOUBLE)", n); break;
    case K_DATE:
        snprintf(buf, size, "IF(MONTH(`%s`)=0,NULL,DATE_FORMAT(`%s`,'%%Y-%%m-%%d'))", n, n);
        break;
    case K_DT: snprintf(buf, size, "IF(MONTH(`%s`)=0,NULL,DATE_FORMAT(`%s`,"
                                   "'%%Y-%%m-%%dT%%H:%%i:%%s.%%f'))", n, n); break;
    case K_TS:
        snprintf(buf, size, "IF(UNIX_TIMESTAMP(`%s`)=0,NULL,CONCAT(DATE_FORMAT(`%s`,"
                            "'%%Y-%%m-%%dT%%H:%%i:%%s.%%f'),'+00:00'))", n, n);
        break;
    case K_TIMESTR: snprintf(buf, size, "HEX(CAST(`%s` AS CHAR))", n); break;
    case K_TEXT: snprintf(buf, size, "HEX(CONVERT(`%s` USING utf8mb4))", n); break;
    case K_BIN: snprintf(buf, size, "HEX(`%s`)", n); break;
    case K_DECSTR: snprintf(buf, size, "HEX(CAST(`%s` AS CHAR))", n); break;
    case K_GEOM: snprintf(buf, size, "HEX(ST_AsBinary(`%s`))", n); break;
    }
}

static char *expect_norm(const coldef *c, const char *v)
{
    if (!v) return NULL;
    char *s = malloc(strlen(v) + 64);
    if (c->k == K_FLOAT) sprintf(s, "%.9g", (double)(float)strtod(v, NULL));
    else if (c->k == K_DOUBLE) sprintf(s, "%.17g", strtod(v, NULL));
    else strcpy(s, v);
    return s;
}

/* Compares the model of db.t with SELECT of the source table (columns cols). */
static void compare_table(MYSQL *my, model *m, const char *dbt, const coldef *cols, int ncols)
{
    char q[16384];
    size_t n = (size_t)snprintf(q, sizeof q, "SELECT ");
    for (int i = 0; i < ncols; i++) {
        char e[512];
        value_sql(&cols[i], e, sizeof e);
        n += (size_t)snprintf(q + n, sizeof q - n, "%s%s", i ? "," : "", e);
    }
    snprintf(q + n, sizeof q - n, " FROM %s ORDER BY 1", dbt);
    ck_assert_msg(mysql_query(my, q) == 0, "%s", mysql_error(my));
    MYSQL_RES *res = mysql_store_result(my);
    ck_assert_ptr_nonnull(res);
    int nrows = 0;
    MYSQL_ROW row;
    char pfx[300] = "";
    if (model_multi(m)) snprintf(pfx, sizeof pfx, "%s:", dbt);
    while ((row = mysql_fetch_row(res))) {
        nrows++;
        char key[400];
        snprintf(key, sizeof key, "%s%s", pfx, row[0]);
        mrow *r = find_row(m, key);
        ck_assert_msg(r != NULL, "%s: row %s is not in the lake", dbt, row[0]);
        for (int i = 0; i < ncols; i++) {
            int k = -1;
            for (int j = 0; j < r->ncols; j++)
                if (!strcmp(r->names[j], cols[i].name)) k = j;
            ck_assert_msg(k >= 0, "%s: column %s missing in the lake", dbt, cols[i].name);
            char *want = expect_norm(&cols[i], row[i]);
            const char *got = r->vals[k];
            if (!want || !got)
                ck_assert_msg(!want && !got, "%s row %s column %s: lake %s, source %s", dbt, row[0],
                              cols[i].name, got ? got : "NULL", want ? want : "NULL");
            else
                ck_assert_msg(!strcmp(want, got),
                              "%s row %s column %s (%s): lake %.200s, source %.200s", dbt, row[0],
                              cols[i].name, cols[i].type, got, want);
            free(want);
        }
    }
    mysql_free_result(res);
    int in_model = 0;
    for (int i = 0; i < m->n; i++) in_model += !strncmp(m->rows[i].key, pfx, strlen(pfx));
    ck_assert_msg(nrows == in_model, "%s: %d rows in the source, %d in the lake", dbt, nrows,
                  in_model);
}

static void create_types(MYSQL *my, const char *dbt)
{
    char q[8192];
    size_t n = (size_t)snprintf(q, sizeof q, "CREATE TABLE %s (", dbt);
    for (int i = 0; i < NTC; i++)
        n += (size_t)snprintf(q + n, sizeof q - n, "`%s` %s,", types_cols[i].name,
                              types_cols[i].type);
    snprintf(q + n, sizeof q - n, "PRIMARY KEY (id)) ENGINE=InnoDB");
    sql(my, q);
}

static void insert_types(MYSQL *my, const char *dbt, int id_offset)
{
    for (size_t i = 0; i < sizeof types_rows / sizeof *types_rows; i++) {
        char q[4096];
        const char *vals = strchr(types_rows[i], ',');
        snprintf(q, sizeof q, "INSERT INTO %s VALUES (%d%s)", dbt, atoi(types_rows[i]) + id_offset,
                 vals);
        sql(my, q);
    }
}

/* ---- tests ---- */

/* The server is shared by the TCase: an XA transaction a failed test left prepared would
 * fail every later test's snapshot too. Roll back what an earlier test left. */
static void setup(void)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    MYSQL *m = db_connect();
    MYSQL_RES *r = mysql_query(m, "XA RECOVER FORMAT='SQL'") == 0 ? mysql_store_result(m) : NULL;
    MYSQL_ROW row;
    while (r && (row = mysql_fetch_row(r)) && mysql_num_fields(r) >= 4 && row[3]) {
        char q[512];
        snprintf(q, sizeof q, "XA ROLLBACK %s", row[3]);
        if (mysql_query(m, q) == 0)
            fprintf(stderr, "setup: rolled back a prepared XA left behind: %s\n", row[3]);
    }
    if (r) mysql_free_result(r);
    mysql_query(m, "SET GLOBAL log_bin_compress = OFF"); /* what a failed test may leave */
    mysql_close(m);
}

/* Event types named by SHOW BINLOG EVENTS in the current binlog file whose name starts
 * with prefix. */
static int binlog_events_named(MYSQL *m, const char *prefix)
{
    char q[512], file[256] = "";
    ck_assert(mysql_query(m, "SHOW MASTER STATUS") == 0);
    MYSQL_RES *r = mysql_store_result(m);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    if (row && row[0]) snprintf(file, sizeof file, "%s", row[0]);
    if (r) mysql_free_result(r);
    snprintf(q, sizeof q, "SHOW BINLOG EVENTS IN '%s'", file);
    ck_assert_msg(mysql_query(m, q) == 0, "%s: %s", q, mysql_error(m));
    r = mysql_store_result(m);
    int n = 0;
    while (r && (row = mysql_fetch_row(r)))
        if (row[2] && !strncmp(row[2], prefix, strlen(prefix))) n++;
    if (r) mysql_free_result(r);
    return n;
}

/* log_bin_compress=ON: the server writes QUERY_COMPRESSED and *_ROWS_COMPRESSED_V1
 * events (zlib), which our reader inflates: the stream matches the table. */
START_TEST(compressed_binlog_events)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS tz");
    sql(my, "DROP TABLE IF EXISTS tz.t");
    sql(my, "DROP TABLE IF EXISTS tz.u");
    create_types(my, "tz.t");
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "tz.t");
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=tz&startup=initial"), NULL, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);

    sql(my, "SET GLOBAL log_bin_compress_min_len = 10");
    sql(my, "SET GLOBAL log_bin_compress = ON");
    insert_types(my, "tz.t", 0);
    insert_types(my, "tz.t", 10);
    sql(my, "UPDATE tz.t SET vc = 'changed' WHERE id = 11");
    sql(my, "DELETE FROM tz.t WHERE id = 13");
    sql(my, "CREATE TABLE tz.u (id INT PRIMARY KEY, c VARCHAR(300) COMMENT 'a comment long "
            "enough for the statement to be compressed by the server')");
    sql(my, "SET GLOBAL log_bin_compress = OFF");
    ck_assert_int_gt(binlog_events_named(my, "Write_rows_compressed"), 0);
    ck_assert_int_gt(binlog_events_named(my, "Update_rows_compressed"), 0);
    ck_assert_int_gt(binlog_events_named(my, "Query_compressed"), 0);

    m.commits = 0;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=tz"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    compare_table(my, &m, "tz.t", types_cols, NTC);
    model_free(&m);
    mysql_close(my);
}
END_TEST

START_TEST(types_snapshot_then_binlog)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS ty");
    sql(my, "DROP TABLE IF EXISTS ty.t");
    create_types(my, "ty.t");
    insert_types(my, "ty.t", 0);

    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "ty.t");
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=ty&startup=initial"), NULL, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_int_eq(m.inserts, 4);
    compare_table(my, &m, "ty.t", types_cols, NTC);
    ck_assert_ptr_nonnull(strstr(m.last_pos, "\"gtid\":\""));
    ck_assert_ptr_null(strstr(m.last_pos, "snapshot"));

    /* through the binlog: inserts, updates (before/after), deletes, a key change, a
     * multi-statement transaction */
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    insert_types(my, "ty.t", 10);
    sql(my, "UPDATE ty.t SET vc = 'changed', d1 = -0.01, tm3 = '-00:00:01.5' WHERE id = 11");
    sql(my, "UPDATE ty.t SET id = 20 WHERE id = 12");
    sql(my, "DELETE FROM ty.t WHERE id = 13");
    sql(my, "START TRANSACTION");
    sql(my, "INSERT INTO ty.t (id, vc) VALUES (30, 'in txn')");
    sql(my, "UPDATE ty.t SET vc = 'in txn 2' WHERE id = 30");
    sql(my, "UPDATE ty.t SET en = 'b', st = 'y' WHERE id = 1");
    sql(my, "DELETE FROM ty.t WHERE id = 2");
    sql(my, "COMMIT");
    m.commits = 0;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=ty"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_int_eq(m.commits, 8);
    compare_table(my, &m, "ty.t", types_cols, NTC);
    ck_assert_int_gt(m.ts_ms, 1600000000000LL);
    model_free(&m);
    mysql_close(my);
}
END_TEST

START_TEST(restart_mid_stream_and_snapshot)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS rs");
    sql(my, "DROP TABLE IF EXISTS rs.k");
    sql(my,
        "CREATE TABLE rs.k (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b))");
    for (int i = 0; i < 50; i++) {
        char q[256];
        snprintf(q, sizeof q, "INSERT INTO rs.k VALUES (%d, 'k%02d', %d), (%d, 'z', %d)", i / 3, i,
                 i, i + 100, i);
        sql(my, q);
    }
    static const coldef kc[] = {{"a", "", K_INT}, {"b", "", K_TEXT}, {"v", "", K_INT}};
    /* the key text of the model is "a|hex(b)": compare by a concatenated first column */
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "rs.k");
    run r;
    w2l_error err;
    /* a snapshot in chunks of 7 rows (one reader), "killed" after 3 chunks */
    ck_assert_ok(run_open(&r, &m, uri_for("databases=rs&chunk-rows=7&snapshot-parallelism=1"), NULL,
                          1, &err),
                 err);
    ck_assert_int_eq(run_all(&r, &m, 3, &err), W2L_OK);
    run_close(&r);
    ck_assert_int_eq(m.inserts, 21);
    ck_assert_ptr_nonnull(strstr(m.last_pos, "\"chunks\""));
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    /* resumed: the chunks not emitted (two readers now), then the binlog */
    ck_assert_ok(run_open(&r, &m, uri_for("databases=rs&chunk-rows=7&snapshot-parallelism=2"), pos,
                          1, &err),
                 err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_int_eq(m.inserts, 100); /* resumed after the last chunk emitted: nothing read twice */
    ck_assert_int_eq(m.n, 100);

    /* binlog: 30 transactions, killed after 10 commits, resumed twice */
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    for (int i = 0; i < 30; i++) {
        char q[256];
        snprintf(q, sizeof q,
                 i % 3 == 2 ? "DELETE FROM rs.k WHERE a = %d AND b = 'z'"
                            : "UPDATE rs.k SET v = v + 1000 WHERE a = %d",
                 i % 3 == 2 ? i + 100 : i / 3);
        sql(my, q);
    }
    for (int round = 0; round < 3; round++) {
        m.commits = 0;
        ck_assert_ok(run_open(&r, &m, uri_for("databases=rs"), pos, 1, &err), err);
        rc = run_all(&r, &m, round < 2 ? 10 : 0, &err);
        run_close(&r);
        ck_assert_msg(round < 2 ? rc == W2L_OK : rc == W2L_DONE, "%s: %s", w2l_rc_name(rc),
                      err.msg);
        if (round < 2) ck_assert_int_eq(m.commits, 10);
        snprintf(pos, sizeof pos, "%s", m.last_pos);
    }
    /* compare with SELECT: key text is a|hex(b) */
    ck_assert_int_eq(mysql_query(my, "SELECT CONCAT(a,'|',HEX(b)), CAST(v AS CHAR) FROM rs.k"), 0);
    MYSQL_RES *res = mysql_store_result(my);
    MYSQL_ROW row;
    int n = 0;
    while ((row = mysql_fetch_row(res))) {
        mrow *mr = find_row(&m, row[0]);
        ck_assert_msg(mr != NULL, "row %s missing", row[0]);
        ck_assert_str_eq(mr->vals[2], row[1]);
        n++;
    }
    mysql_free_result(res);
    ck_assert_int_eq(n, m.n);
    (void)kc;
    model_free(&m);
    mysql_close(my);
}
END_TEST

START_TEST(ddl_interleaved_gtid_start_several_dbs)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS da");
    sql(my, "CREATE DATABASE IF NOT EXISTS dbb");
    sql(my, "CREATE DATABASE IF NOT EXISTS dc");
    ck_assert_int_eq(mysql_query(my, "SELECT @@global.gtid_binlog_pos"), 0);
    MYSQL_RES *res = mysql_store_result(my);
    MYSQL_ROW row = mysql_fetch_row(res);
    char gtid[512], params[700];
    snprintf(gtid, sizeof gtid, "%s", row[0]);
    mysql_free_result(res);
    sql(my, "CREATE TABLE da.t (id INT PRIMARY KEY, a VARCHAR(10))");
    sql(my, "CREATE TABLE dbb.u (id BIGINT PRIMARY KEY, x INT)");
    sql(my, "CREATE TABLE dc.ignored (id INT PRIMARY KEY)");
    sql(my, "INSERT INTO da.t VALUES (1, 'one'), (2, 'two')");
    sql(my, "INSERT INTO dbb.u VALUES (10, 100)");
    sql(my, "INSERT INTO dc.ignored VALUES (1)");
    sql(my, "ALTER TABLE da.t ADD COLUMN flag TINYINT(1) NOT NULL DEFAULT 0,"
            " ADD COLUMN n DECIMAL(6,2)");
    sql(my, "INSERT INTO da.t VALUES (3, 'three', 1, 12.5)");
    sql(my, "UPDATE da.t SET flag = 1, n = 1.25 WHERE id = 1");
    sql(my, "ALTER TABLE da.t DROP COLUMN a");
    sql(my, "INSERT INTO da.t VALUES (4, 0, NULL)");
    sql(my, "ALTER TABLE da.t CHANGE COLUMN n amount DECIMAL(8,2)");
    sql(my, "UPDATE da.t SET amount = 99.99 WHERE id = 3");
    sql(my, "UPDATE da.t SET amount = IFNULL(amount, 0) + 1"); /* every row under the new name */
    sql(my, "CREATE USER 'sneaky'@'127.0.0.1' IDENTIFIED BY 'topsecretpw'");
    sql(my, "DROP USER 'sneaky'@'127.0.0.1'");
    sql(my, "TRUNCATE TABLE dbb.u");
    sql(my, "INSERT INTO dbb.u VALUES (11, 111)");

    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "da.t");
    run r;
    w2l_error err;
    snprintf(params, sizeof params, "databases=da,dbb&startup=gtid:%s", gtid);
    ck_assert_ok(run_open(&r, &m, uri_for(params), NULL, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_msg(strstr(m.ddl_text, "ALTER TABLE da.t ADD COLUMN flag") != NULL, "%s", m.ddl_text);
    ck_assert_msg(strstr(m.ddl_text, "da.t: CREATE TABLE da.t") != NULL, "%s", m.ddl_text);
    ck_assert_msg(strstr(m.ddl_text, "dbb.u: TRUNCATE") != NULL, "%s", m.ddl_text);
    ck_assert_msg(strstr(m.ddl_text, "ignored") == NULL, "%s", m.ddl_text);
    ck_assert_msg(strstr(m.ddl_text, "topsecretpw") == NULL, "%s", m.ddl_text);
    ck_assert_int_eq(m.ddls, 6); /* 3 CREATE TABLE da.t/dbb.u, 3 ALTER; TRUNCATE counted below */
    static const coldef tc[] = {{"id", "", K_INT}, {"flag", "", K_INT}, {"amount", "", K_DEC}};
    compare_table(my, &m, "da.t", tc, 3);
    /* rows of dbb.u came too, rows of dc never */
    ck_assert_int_eq(m.changes, 2 + 1 + 1 + 2 + 1 + 2 + 8 + 1);
    model_free(&m);
    mysql_close(my);
}
END_TEST

START_TEST(errors_are_clear)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    char uri[512];
    /* wrong password: named user and server, never the password */
    snprintf(uri, sizeof uri, "mysql://cdc:Wr0ngPassw0rd@127.0.0.1:%d/?server-id=77",
             (int)test_mariadb_port());
    w2l_rc rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_SOURCE); /* the server's answer: exit 1, not the usage exit 2 */
    ck_assert_msg(strstr(err.msg, "cdc@127.0.0.1") && strstr(err.msg, "(error 1045)") &&
                      !strstr(err.msg, "Wr0ngPassw0rd"),
                  "%s", err.msg);
    /* unreachable server */
    snprintf(uri, sizeof uri, "mysql://cdc:cdcpass@127.0.0.1:1/?server-id=77");
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_UNAVAILABLE);
    ck_assert_msg(!strstr(err.msg, "cdcpass"), "%s", err.msg);
    /* no server id */
    snprintf(uri, sizeof uri, "mysql://cdc:cdcpass@127.0.0.1:%d/", (int)test_mariadb_port());
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "server id") != NULL, "%s", err.msg);
    /* a position that is not on the server */
    ck_assert_ok(run_open(&r, &m, uri_for("startup=file:binlog.999999:4"), NULL, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    run_close(&r);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "1236") != NULL, "%s", err.msg);
    /* bad startup mode */
    rc = run_open(&r, &m, uri_for("startup=sometime"), NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_CONFIG);
}
END_TEST

START_TEST(idle_stream_returns_again)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("startup=latest"), NULL, 0, &err), err);
    /* nothing is written: each call comes back (a call that blocked would end in the test's
     * timeout), and once the stream is open it says AGAIN */
    w2l_rc rc = W2L_OK;
    for (int i = 0; i < 3 || (rc != W2L_AGAIN && i < 100); i++) {
        rc = r.src->methods->next(r.src, r.em, 100, &err);
        ck_assert_msg(rc == W2L_AGAIN || rc == W2L_OK, "%s: %s", w2l_rc_name(rc), err.msg);
    }
    ck_assert_int_eq(rc, W2L_AGAIN);
    ck_assert_int_eq(r.src->methods->lag_ms(r.src), 0);
    run_close(&r);
}
END_TEST

/* next() until the model saw n inserts (at most ~30 s) */
/* Until the model holds n rows (a row may come twice during the snapshot: from the stream
 * and from a chunk read after it, which replaces it). */
static void pump_until(run *r, model *m, int n)
{
    w2l_error err;
    for (int i = 0; i < 300 && m->n < n; i++) {
        w2l_rc rc = r->src->methods->next(r->src, r->em, 100, &err);
        w2l__emitter_flush(r->em, NULL);
        ck_assert_msg(rc == W2L_OK || rc == W2L_AGAIN, "%s: %s", w2l_rc_name(rc), err.msg);
    }
    ck_assert_int_eq(m->n, n);
}

START_TEST(server_restart_mid_stream)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS rt");
    sql(my, "DROP TABLE IF EXISTS rt.t");
    sql(my, "CREATE TABLE rt.t (id INT PRIMARY KEY, v VARCHAR(20))");
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "rt.t");
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=rt"), NULL, 0, &err), err);
    for (int i = 1; i <= 5; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO rt.t VALUES (%d, 'before')", i);
        sql(my, q);
    }
    pump_until(&r, &m, 5);
    mysql_close(my);
    ck_assert_int_eq(test_mariadb_script("stop"), 0);
    ck_assert_int_eq(test_mariadb_script("start"), 0);
    my = db_connect();
    for (int i = 6; i <= 10; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO rt.t VALUES (%d, 'after')", i);
        sql(my, q);
    }
    pump_until(&r, &m, 10);
    run_close(&r);
    static const coldef tc[] = {{"id", "", K_INT}, {"v", "", K_TEXT}};
    compare_table(my, &m, "rt.t", tc, 2);
    model_free(&m);
    mysql_close(my);
}
END_TEST

/* XA: the PREPARE group is held until XA COMMIT (emitted then, as one transaction) or
 * dropped at XA ROLLBACK; a restart between PREPARE and COMMIT reads the PREPARE group
 * again without emitting twice what followed it; ONE PHASE; the memory limit. */
/* Waits until the server has ended session id (mysql_close() returns before it has). */
static void wait_session_gone(unsigned long id)
{
    MYSQL *m = db_connect();
    char q[128];
    snprintf(q, sizeof q, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lu", id);
    for (int i = 0;; i++) {
        ck_assert_msg(mysql_query(m, q) == 0, "%s: %s", q, mysql_error(m));
        MYSQL_RES *r = mysql_store_result(m);
        ck_assert_ptr_nonnull(r);
        MYSQL_ROW row = mysql_fetch_row(r);
        int n = row && row[0] ? atoi(row[0]) : -1;
        mysql_free_result(r);
        if (n == 0) break;
        ck_assert_msg(i < 6000, "session %lu still on the server after 60 s", id);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    mysql_close(m);
}

/* XA PREPARE on a session of its own, which then ends: the prepared transaction outlives
 * the session (MariaDB 10.5+), but only once the server has detached it from the session,
 * which happens on the server's side after mysql_close() has returned; until then an XA
 * COMMIT from another session fails with XAER_NOTA (Unknown XID). The server detaches it
 * before the session leaves the process list (THD::cleanup, then unlink), so wait for that. */
static void xa_prepare(const char *xid, const char *stmts)
{
    MYSQL *c = db_connect();
    char q[512];
    snprintf(q, sizeof q, "XA START %s", xid);
    sql(c, q);
    sql(c, stmts);
    snprintf(q, sizeof q, "XA END %s", xid);
    sql(c, q);
    snprintf(q, sizeof q, "XA PREPARE %s", xid);
    sql(c, q);
    unsigned long id = mysql_thread_id(c);
    mysql_close(c);
    wait_session_gone(id);
}

START_TEST(xa_held_until_commit_across_restart)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS xa");
    sql(my, "DROP TABLE IF EXISTS xa.t");
    sql(my, "CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20), b BLOB)");
    sql(my, "INSERT INTO xa.t VALUES (100, 'before', NULL)");
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "xa.t");
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=xa"), NULL, 1, &err), err);
    ck_assert_int_eq(run_all(&r, &m, 0, &err), W2L_DONE);
    run_close(&r);
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);

    /* prepared, then normal transactions, one prepared and rolled back, one committed */
    xa_prepare("'a1'", "INSERT INTO xa.t VALUES (1, 'xa-a1', REPEAT('q', 5000)), (2, 'xa-a1',"
                       " X'00')");
    sql(my, "INSERT INTO xa.t VALUES (10, 'normal', NULL)");
    xa_prepare("'b2','bq',7", "INSERT INTO xa.t VALUES (3, 'rolled back', NULL)");
    xa_prepare("'d4'", "UPDATE xa.t SET v = 'xa-d4' WHERE id = 100");
    sql(my, "INSERT INTO xa.t VALUES (11, 'normal', NULL)");
    sql(my, "XA COMMIT 'd4'");
    ck_assert_ok(run_open(&r, &m, uri_for("databases=xa"), pos, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    /* a1 and b2 are pending: only 10, 11 and d4's update are in */
    ck_assert_ptr_null(find_row(&m, "1"));
    ck_assert_ptr_null(find_row(&m, "3"));
    ck_assert_ptr_nonnull(find_row(&m, "10"));
    ck_assert_ptr_nonnull(find_row(&m, "11"));
    ck_assert_str_eq(find_row(&m, "100")->vals[1], "78612D6434"); /* hex of 'xa-d4' */
    ck_assert_msg(strstr(m.last_pos, "\"xa\":{") != NULL, "position pins the pending XA: %s",
                  m.last_pos);
    snprintf(pos, sizeof pos, "%s", m.last_pos);

    /* restart between PREPARE and COMMIT */
    sql(my, "INSERT INTO xa.t VALUES (12, 'normal', NULL)");
    sql(my, "XA COMMIT 'a1'");
    sql(my, "XA ROLLBACK 'b2','bq',7");
    MYSQL *c = db_connect();
    sql(c, "XA START 'c3'");
    sql(c, "INSERT INTO xa.t VALUES (4, 'one phase', NULL)");
    sql(c, "XA END 'c3'");
    sql(c, "XA COMMIT 'c3' ONE PHASE");
    mysql_close(c);
    m.commits = 0;
    int inserts = m.inserts;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=xa"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_int_eq(m.inserts - inserts, 4); /* 12, a1's two rows, 4 */
    ck_assert_ptr_null(strstr(m.last_pos, "\"xa\":"));
    static const coldef tc[] = {{"id", "", K_INT}, {"v", "", K_TEXT}, {"b", "", K_BIN}};
    compare_table(my, &m, "xa.t", tc, 3);

    /* more than source.xa-buffer-bytes held: the job fails, naming the limit */
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    xa_prepare("'big'", "INSERT INTO xa.t VALUES (50, 'big', REPEAT('z', 20000))");
    run_conf = "source.xa-buffer-bytes=4096";
    ck_assert_ok(run_open(&r, &m, uri_for("databases=xa"), pos, 1, &err), err);
    run_conf = NULL;
    rc = run_all(&r, &m, 0, &err);
    run_close(&r);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "source.xa-buffer-bytes") != NULL, "%s", err.msg);
    sql(my, "XA ROLLBACK 'big'");
    /* an XA prepared when the initial snapshot starts: it waits, then fails naming it */
    xa_prepare("'snapx'", "INSERT INTO xa.t VALUES (60, 'p', NULL)");
    static model m2;
    memset(&m2, 0, sizeof m2);
    snprintf(m2.table, sizeof m2.table, "xa.t");
    rc = run_open(&r, &m2, uri_for("databases=xa"), NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "snapx") && strstr(err.msg, "XA ROLLBACK"), "%s", err.msg);
    sql(my, "XA ROLLBACK 'snapx'");
    model_free(&m);
    mysql_close(my);
}
END_TEST

/* A snapshot stopped after some chunks (no checkpoint of the later ones), rows changed in
 * ranges read and not read and in tables read and not read, resumed (twice): the final
 * state equals SELECT; after the snapshot nothing doubles (the model fails on an INSERT
 * of a row it has once positions carry no "chunks"). */
START_TEST(snapshot_resume_window_is_exact)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS sr");
    const char *tabs[] = {"sr.a", "sr.b", "sr.c"};
    for (int t = 0; t < 3; t++) {
        char q[256];
        snprintf(q, sizeof q, "DROP TABLE IF EXISTS %s", tabs[t]);
        sql(my, q);
        snprintf(q, sizeof q, "CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(20))", tabs[t]);
        sql(my, q);
        for (int i = 1; i <= 20; i++) {
            snprintf(q, sizeof q, "INSERT INTO %s VALUES (%d, 'v%d')", tabs[t], i, i);
            sql(my, q);
        }
    }
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "sr.a,sr.b,sr.c");
    run r;
    w2l_error err;
    /* chunks of 7 (the conf key; later runs use the URI's chunk-rows): a in 3 commits,
     * then b's first chunk; "killed" there */
    run_conf = "source.snapshot-chunk-rows=7";
    ck_assert_ok(run_open(&r, &m, uri_for("databases=sr&snapshot-parallelism=1"), NULL, 1, &err),
                 err);
    run_conf = NULL;
    ck_assert_int_eq(run_all(&r, &m, 4, &err), W2L_OK);
    run_close(&r);
    ck_assert_int_eq(m.inserts, 27);
    ck_assert_msg(strstr(m.last_pos, "\"t\":[\"sr\",\"b\"]") != NULL, "%s", m.last_pos);
    char pos[4096];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    /* a: read; b: rows 1-7 read, 8-20 not; c: not read */
    const char *changes1[] = {
        "INSERT INTO sr.a VALUES (21, 'new')",
        "UPDATE sr.a SET v = 'upd' WHERE id = 5",
        "DELETE FROM sr.a WHERE id = 6",
        "INSERT INTO sr.b VALUES (100, 'new')",
        "UPDATE sr.b SET v = 'upd' WHERE id IN (3, 15)",
        "DELETE FROM sr.b WHERE id IN (4, 16)",
        "UPDATE sr.b SET id = 200 WHERE id = 2",
        "UPDATE sr.b SET id = 1000 WHERE id = 9",
        "INSERT INTO sr.c VALUES (21, 'new')",
        "DELETE FROM sr.c WHERE id = 1",
        "UPDATE sr.c SET v = 'upd' WHERE id = 2",
    };
    for (size_t i = 0; i < sizeof changes1 / sizeof *changes1; i++) sql(my, changes1[i]);
    /* resumed: killed again after two more commits (the stream's changes, b's chunks) */
    m.commits = 0;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=sr&chunk-rows=7"), pos, 1, &err), err);
    ck_assert_int_eq(run_all(&r, &m, 2, &err), W2L_OK);
    run_close(&r);
    ck_assert_msg(strstr(m.last_pos, "\"chunks\"") != NULL, "%s", m.last_pos);
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    const char *changes2[] = {
        "INSERT INTO sr.a VALUES (22, 'new2')", "UPDATE sr.b SET v = 'upd2' WHERE id IN (1, 17)",
        "DELETE FROM sr.b WHERE id = 5", "INSERT INTO sr.b VALUES (101, 'new2')",
        "UPDATE sr.c SET v = 'upd2' WHERE id = 3", "INSERT INTO sr.c VALUES (22, 'new2')",
    };
    for (size_t i = 0; i < sizeof changes2 / sizeof *changes2; i++) sql(my, changes2[i]);
    m.commits = 0;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=sr&chunk-rows=7"), pos, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    static const coldef tc[] = {{"id", "", K_INT}, {"v", "", K_TEXT}};
    for (int t = 0; t < 3; t++) compare_table(my, &m, tabs[t], tc, 2);
    ck_assert_ptr_null(strstr(m.last_pos, "chunks"));
    /* later binlog changes of every table still come through */
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    sql(my, "UPDATE sr.a SET v = 'late' WHERE id = 1");
    sql(my, "UPDATE sr.b SET v = 'late' WHERE id = 1");
    sql(my, "DELETE FROM sr.c WHERE id = 2");
    ck_assert_ok(run_open(&r, &m, uri_for("databases=sr"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    for (int t = 0; t < 3; t++) compare_table(my, &m, tabs[t], tc, 2);
    ck_assert_ptr_null(strstr(m.last_pos, "window"));
    model_free(&m);
    mysql_close(my);
}
END_TEST

/* DDL while the chunked snapshot runs, stopped after its first chunk and resumed: a
 * table not read yet is altered, one is dropped, one is created and filled (from the
 * binlog), and the table being read gets rows in ranges read and not read. Equal to
 * SELECT. */
START_TEST(ddl_during_chunked_snapshot)
{
    MYSQL *my = db_connect();
    sql(my, "DROP DATABASE IF EXISTS cd");
    sql(my, "CREATE DATABASE cd");
    sql(my, "CREATE TABLE cd.a (id INT PRIMARY KEY, v VARCHAR(20))");
    sql(my, "CREATE TABLE cd.b (id INT PRIMARY KEY, v VARCHAR(20))");
    sql(my, "CREATE TABLE cd.d (id INT PRIMARY KEY, v VARCHAR(20))");
    for (int i = 1; i <= 30; i++) {
        char q[256];
        const char *t[] = {"a", "b", "d"};
        for (int k = 0; k < 3; k++) {
            snprintf(q, sizeof q, "INSERT INTO cd.%s VALUES (%d, '%s%d')", t[k], i, t[k], i);
            sql(my, q);
        }
    }
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "cd.a,cd.b,cd.e");
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=cd&chunk-rows=7&snapshot-parallelism=1"), NULL,
                          1, &err),
                 err);
    ck_assert_int_eq(run_all(&r, &m, 1, &err), W2L_OK);
    run_close(&r);
    ck_assert_int_eq(m.n, 7);
    char pos[4096];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    sql(my, "ALTER TABLE cd.b ADD COLUMN w INT DEFAULT 5");
    sql(my, "UPDATE cd.b SET w = id * 2 WHERE id > 20");
    sql(my, "DROP TABLE cd.d");
    sql(my, "CREATE TABLE cd.e (id INT PRIMARY KEY, v VARCHAR(20))");
    sql(my, "INSERT INTO cd.e VALUES (1, 'e1'), (2, 'e2')");
    sql(my, "UPDATE cd.a SET v = 'read' WHERE id = 3");    /* a chunk read */
    sql(my, "UPDATE cd.a SET v = 'not yet' WHERE id = 25"); /* a chunk not read */
    sql(my, "DELETE FROM cd.a WHERE id IN (2, 26)");
    sql(my, "INSERT INTO cd.a VALUES (100, 'new')");
    m.commits = 0;
    ck_assert_ok(
        run_open(&r, &m, uri_for("databases=cd&chunk-rows=7&snapshot-parallelism=1"), pos, 1, &err),
        err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    static const coldef tc[] = {{"id", "", K_INT}, {"v", "", K_TEXT}};
    static const coldef tcw[] = {{"id", "", K_INT}, {"v", "", K_TEXT}, {"w", "", K_INT}};
    compare_table(my, &m, "cd.a", tc, 2);
    compare_table(my, &m, "cd.b", tcw, 3);
    compare_table(my, &m, "cd.e", tc, 2);
    /* whether b was still pending when the stream passed its ALTER (the DDL dropped, its
     * rows read with the new column) or already being read (the DDL emitted, its chunks in
     * flight read again) depends on how fast the reader is: both end equal to SELECT */
    ck_assert_ptr_null(strstr(m.last_pos, "chunks"));
    model_free(&m);
    mysql_close(my);
}
END_TEST

/* ---- the snapshot's plan and its position (no server) ---- */

static void plan_ddl(mysql_source *ms, const char *sql)
{
    w2l__ddl_list *l = NULL;
    w2l_error e;
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &e), e);
    for (size_t i = 0; i < l->n; i++) {
        ck_assert_ok(w2l__ms_tt_apply(ms, &l->stmts[i], &e), e);
        ck_assert_ok(w2l__ms_snap_ddl(ms, &l->stmts[i], &e), e);
    }
    w2l__ddl_list_free(l);
}

static int plan_state(const mysql_source *ms, const char *db, const char *name)
{
    const snap_table *t = w2l__ms_snap_find(ms, db, name);
    return t ? t->state : -1;
}

/* The plan's position member ("chunks") read back by a restart that finds the server's
 * tables: done tables stay done (also a table created during the snapshot, after "next"),
 * the ranges left of a table being read come back, pending tables are pending, a table
 * renamed while pending is pending under its new name, a re-read is read again whole;
 * rows of pending tables and of keyless tables being read are hidden, DDL of a re-read not. */
START_TEST(snapshot_plan_position_round_trip)
{
    static mysql_source ms, ms2;
    memset(&ms, 0, sizeof ms);
    memset(&ms2, 0, sizeof ms2);
    const char *defs = "CREATE TABLE s.a (id INT PRIMARY KEY, v VARCHAR(10));"
                       "CREATE TABLE s.b (id BIGINT, k VARCHAR(8), PRIMARY KEY (id, k));"
                       "CREATE TABLE s.c (x INT);"
                       "CREATE TABLE s.d (id INT PRIMARY KEY);"
                       "CREATE TABLE s.e (id INT PRIMARY KEY)";
    plan_ddl(&ms, defs);
    w2l_error e;
    ck_assert_ok(w2l__ms_snap_plan(&ms, &e), e);
    ms.snap.active = 1;
    ck_assert_uint_eq(ms.snap.ntables, 5);
    ck_assert_int_eq(w2l__ms_snap_hides(&ms, "s", "d", 0), 1);
    /* a: done; b: being read, a range left after a key; c (keyless) being read: hidden */
    w2l__ms_snap_remove(&ms, w2l__ms_snap_find(&ms, "s", "a"));
    snap_table *b = w2l__ms_snap_find(&ms, "s", "b");
    b->state = SNAP_ACTIVE;
    b->rows = 42;
    snap_range *r = w2l__ms_snap_range_add(&ms, b, &e);
    ck_assert_ptr_nonnull(r);
    r->hi = strdup("100");
    r->hi_len = 3;
    char *kv[2] = {"42", "x\"y"};
    size_t kl[2] = {2, 3};
    ck_assert_ok(w2l__ms_key_copy(&r->after, kv, kl, 2, &e), e);
    w2l__ms_snap_find(&ms, "s", "c")->state = SNAP_ACTIVE;
    ck_assert_int_eq(w2l__ms_snap_hides(&ms, "s", "c", 0), 1);
    ck_assert_int_eq(w2l__ms_snap_hides(&ms, "s", "b", 0), 0);
    /* during the snapshot: s.bb created (done: the binlog has it), d renamed to aa (before
     * "next" in name order), e to be read again */
    plan_ddl(&ms, "CREATE TABLE s.bb (id INT PRIMARY KEY); RENAME TABLE s.d TO s.aa");
    ck_assert_int_eq(plan_state(&ms, "s", "bb"), SNAP_DONE);
    ck_assert_int_eq(plan_state(&ms, "s", "aa"), SNAP_PENDING);
    ck_assert_int_eq(plan_state(&ms, "s", "d"), -1);
    ck_assert_ok(w2l__ms_snap_add(&ms, "s", "e", 1, &e), e);
    ck_assert_int_eq(w2l__ms_snap_hides(&ms, "s", "e", 0), 0); /* in the lake: it streams */
    w2l_buf j = {0};
    ck_assert_ok(w2l__ms_snap_json(&ms, &j, &e), e);
    ck_assert_ok(w2l__buf_cstr(&j, &e), e);
    /* the restart: the server's tables now, the member read back */
    plan_ddl(&ms2, defs);
    plan_ddl(&ms2, "CREATE TABLE s.bb (id INT PRIMARY KEY); RENAME TABLE s.d TO s.aa");
    ck_assert_ok(w2l__ms_snap_plan(&ms2, &e), e);
    w2l__json *doc = NULL;
    const char *text = (const char *)j.data + strlen(",\"chunks\":");
    ck_assert_ok(w2l__json_parse(text, strlen(text), &doc, &e), e);
    ck_assert_ok(w2l__ms_snap_restore(&ms2, doc, &e), e);
    ck_assert_int_eq(ms2.snap.active, 1);
    ck_assert_int_eq(plan_state(&ms2, "s", "a"), SNAP_DONE);
    ck_assert_int_eq(plan_state(&ms2, "s", "aa"), SNAP_PENDING);
    ck_assert_int_eq(plan_state(&ms2, "s", "bb"), SNAP_DONE);
    ck_assert_int_eq(plan_state(&ms2, "s", "c"), SNAP_PENDING); /* keyless: read again whole */
    ck_assert_int_eq(plan_state(&ms2, "s", "e"), SNAP_PENDING);
    ck_assert_int_eq(w2l__ms_snap_find(&ms2, "s", "e")->resync, 1);
    const snap_table *b2 = w2l__ms_snap_find(&ms2, "s", "b");
    ck_assert_int_eq(b2->state, SNAP_ACTIVE);
    ck_assert_uint_eq(b2->rows, 42);
    ck_assert_uint_eq(b2->nranges, 1);
    ck_assert_ptr_null(b2->ranges[0].lo);
    ck_assert_str_eq(b2->ranges[0].hi, "100");
    ck_assert_uint_eq(b2->ranges[0].after.n, 2);
    ck_assert_str_eq(b2->ranges[0].after.v[1], "x\"y");
    /* a restored position that is not ours: named */
    w2l__json_free(doc);
    ck_assert_ok(w2l__json_parse("{\"next\":[1,2]}", 14, &doc, &e), e);
    ck_assert_int_eq(w2l__ms_snap_restore(&ms2, doc, &e), W2L_CORRUPT);
    ck_assert_msg(strstr(e.msg, "next"), "%s", e.msg);
    w2l__json_free(doc);
    w2l_buf_release(&j);
    for (mysql_source *m = &ms; m; m = m == &ms ? &ms2 : NULL) {
        w2l__ms_snap_tables_free(m);
        for (size_t i = 0; i < m->defs.n; i++) w2l__ms_ttable_clear(&m->defs.tab[i]);
        w2l__free(m->defs.tab);
    }
}
END_TEST

/* ---- the row decoder on built images (no server) ---- */

/* MySQL's binary DECIMAL(prec,scale) of the decimal text v ("-12.50"): 9 digits per 4
 * bytes big-endian, partial groups in {0,1,1,2,2,3,3,4,4,4} bytes, the sign bit inverted,
 * every byte inverted when negative. Returns the size. */
static size_t decimal_bin(const char *v, unsigned prec, unsigned scale, uint8_t *out)
{
    static const int d2b[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
    int neg = *v == '-';
    if (neg) v++;
    const char *dot = strchr(v, '.');
    size_t il = dot ? (size_t)(dot - v) : strlen(v);
    unsigned ig = prec - scale;
    char digits[80];
    memset(digits, '0', ig - il); /* left-pad the integer part */
    memcpy(digits + (ig - il), v, il);
    size_t fl = dot ? strlen(dot + 1) : 0;
    memcpy(digits + ig, dot ? dot + 1 : "", fl);
    memset(digits + ig + fl, '0', scale - fl);
    /* groups of digits, left to right: a partial integer group, full groups, a partial
     * fraction group */
    unsigned widths[20], ng = 0;
    if (ig % 9) widths[ng++] = ig % 9;
    for (unsigned k = 0; k < ig / 9; k++) widths[ng++] = 9;
    for (unsigned k = 0; k < scale / 9; k++) widths[ng++] = 9;
    if (scale % 9) widths[ng++] = scale % 9;
    size_t n = 0, at = 0;
    for (unsigned g = 0; g < ng; g++) {
        uint32_t x = 0;
        for (unsigned d = 0; d < widths[g]; d++) x = x * 10 + (uint32_t)(digits[at++] - '0');
        for (int b = d2b[widths[g]] - 1; b >= 0; b--) out[n++] = (uint8_t)(x >> (8 * b));
    }
    if (neg)
        for (size_t i = 0; i < n; i++) out[i] ^= 0xFF;
    out[0] ^= 0x80;
    return n;
}

/* A table map of one column (type, meta, ice) named c, in table d.t. */
static void one_col_map(w2l__bl_tmap *tm, w2l__bl_col *col, uint8_t type, uint32_t meta,
                        w2l_type_id ice, int is_unsigned)
{
    memset(tm, 0, sizeof *tm);
    memset(col, 0, sizeof *col);
    col->name = "c";
    col->type = type;
    col->meta = meta;
    col->is_unsigned = (uint8_t)is_unsigned;
    col->ice.id = ice;
    tm->db = "d";
    tm->table = "t";
    tm->ncols = 1;
    tm->cols = col;
}

/* Decodes one image of the single-column map: null bitmap byte 0, then the value bytes.
 * Values may point into the image, which stays valid until the next call. */
static w2l_rc decode_one(const w2l__bl_tmap *tm, const uint8_t *val, size_t n, w2l_value *out,
                         uint8_t *coerced, w2l__bl_scratch *sc, w2l_error *err)
{
    static uint8_t img[128];
    memset(img, 0, sizeof img);
    ck_assert_uint_le(n + 1, sizeof img);
    memcpy(img + 1, val, n);
    const uint8_t bitmap[1] = {1}, *p = img;
    uint8_t present[2] = {0};
    w2l_rc rc = w2l__bl_decode_row(tm, bitmap, &p, img + 1 + n, out, present, coerced, sc, err);
    if (rc == W2L_OK) ck_assert_ptr_eq(p, img + 1 + n); /* the whole image, no more */
    return rc;
}

START_TEST(decode_big_decimal_as_text)
{
    static const struct { const char *in; unsigned prec, scale; const char *text; } cases[] = {
        {"-12345678901234567890123456789012345.123456789012345678901234567890", 65, 30,
         "-12345678901234567890123456789012345.123456789012345678901234567890"},
        {"99999999999999999999999999999999999.999999999999999999999999999999", 65, 30,
         "99999999999999999999999999999999999.999999999999999999999999999999"},
        {"0", 65, 30, "0.000000000000000000000000000000"},
        {"1.5", 65, 30, "1.500000000000000000000000000000"},
        {"-0.000000000000000000000000000001", 65, 30, "-0.000000000000000000000000000001"},
        {"12345678901234567890123456789012345678901234567890123456789012345", 65, 0,
         "12345678901234567890123456789012345678901234567890123456789012345"},
        {"-7", 39, 0, "-7"},
        {"0.25", 40, 40 - 10, "0.250000000000000000000000000000"},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l__bl_tmap tm;
        w2l__bl_col col;
        one_col_map(&tm, &col, BL_NEWDECIMAL, cases[i].prec << 8 | cases[i].scale, W2L_TYPE_STRING,
                    0);
        uint8_t bin[40];
        size_t n = decimal_bin(cases[i].in, cases[i].prec, cases[i].scale, bin);
        w2l__bl_scratch sc = {0};
        w2l_value v;
        w2l_error err;
        ck_assert_ok(decode_one(&tm, bin, n, &v, NULL, &sc, &err), err);
        ck_assert_msg(v.v.bytes.len == strlen(cases[i].text) &&
                          !memcmp(v.v.bytes.ptr, cases[i].text, v.v.bytes.len),
                      "#%zu: %.*s, want %s", i, (int)v.v.bytes.len, v.v.bytes.ptr, cases[i].text);
        w2l__bl_scratch_free(&sc);
    }
}
END_TEST

START_TEST(decode_bit64_keeps_every_bit)
{
    static const struct { uint32_t bits; uint8_t bytes[8]; int64_t want; } cases[] = {
        {64, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, -1},
        {64, {0x80, 0, 0, 0, 0, 0, 0, 0x01}, INT64_MIN + 1},
        {64, {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, INT64_MAX},
        {12, {0x0A, 0xBC}, 0xABC},
        {33, {0x01, 0x00, 0x00, 0x00, 0x02}, (INT64_C(1) << 32) | 2},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l__bl_tmap tm;
        w2l__bl_col col;
        one_col_map(&tm, &col, BL_BIT, cases[i].bits, W2L_TYPE_LONG, 0);
        w2l__bl_scratch sc = {0};
        w2l_value v;
        w2l_error err;
        ck_assert_ok(decode_one(&tm, cases[i].bytes, (cases[i].bits + 7) / 8, &v, NULL, &sc, &err),
                     err);
        ck_assert_msg(v.v.i64 == cases[i].want, "#%zu: %lld", i, (long long)v.v.i64);
    }
}
END_TEST

START_TEST(decode_geometry_drops_the_srid)
{
    /* POINT(1 2) with SRID 4326: 4-byte LE SRID, then 21 bytes of WKB */
    uint8_t val[4 + 4 + 21] = {25, 0, 0, 0, 0xE6, 0x10, 0, 0, 0x01, 0x01, 0, 0, 0};
    const double x = 1, y = 2;
    memcpy(val + 4 + 4 + 5, &x, 8); /* the test host is little-endian, as WKB byte order 1 */
    memcpy(val + 4 + 4 + 13, &y, 8);
    w2l__bl_tmap tm;
    w2l__bl_col col;
    one_col_map(&tm, &col, BL_GEOMETRY, 4, W2L_TYPE_BINARY, 0);
    w2l__bl_scratch sc = {0};
    w2l_value v;
    w2l_error err;
    ck_assert_ok(decode_one(&tm, val, sizeof val, &v, NULL, &sc, &err), err);
    ck_assert_uint_eq(v.v.bytes.len, 21);
    ck_assert_mem_eq(v.v.bytes.ptr, val + 8, 21);
    /* shorter than an SRID and a WKB header: corrupt, named */
    const uint8_t bad[4 + 6] = {6, 0, 0, 0, 0xE6, 0x10, 0, 0, 1, 1};
    ck_assert_int_eq(decode_one(&tm, bad, sizeof bad, &v, NULL, &sc, &err), W2L_CORRUPT);
    ck_assert_str_eq(err.msg, "binlog: column 'c' of d.t: geometry value of 6 bytes (want a 4-byte "
                              "SRID and WKB)");
}
END_TEST

START_TEST(decode_tinyint1_boolean_nonzero_is_true)
{
    static const struct { uint8_t byte; int is_unsigned; int want, odd; } cases[] = {
        {0, 0, 0, 0}, {1, 0, 1, 0}, {5, 0, 1, 1}, {0xFF, 0, 1, 1} /* -1 */, {200, 1, 1, 1},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l__bl_tmap tm;
        w2l__bl_col col;
        one_col_map(&tm, &col, BL_TINY, 0, W2L_TYPE_BOOLEAN, cases[i].is_unsigned);
        w2l__bl_scratch sc = {0};
        w2l_value v;
        w2l_error err;
        uint8_t coerced[2] = {0};
        ck_assert_ok(decode_one(&tm, &cases[i].byte, 1, &v, coerced, &sc, &err), err);
        ck_assert_int_eq(v.v.i32, cases[i].want);
        ck_assert_int_eq(coerced[0], cases[i].odd);
    }
    /* as int (the default) the number is kept */
    w2l__bl_tmap tm;
    w2l__bl_col col;
    one_col_map(&tm, &col, BL_TINY, 0, W2L_TYPE_INT, 0);
    w2l__bl_scratch sc = {0};
    w2l_value v;
    w2l_error err;
    uint8_t coerced[2] = {0};
    const uint8_t five = 5;
    ck_assert_ok(decode_one(&tm, &five, 1, &v, coerced, &sc, &err), err);
    ck_assert_int_eq(v.v.i32, 5);
    ck_assert_int_eq(coerced[0], 0);
}
END_TEST

/* ---- source.tinyint1-as-boolean=true: values other than 0/1 become true, with one
 * warning per table and column ---- */

static int bool_warnings;
static void count_bool_warnings(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level == W2L_LOG_WARN && strstr(line, "TINYINT(1) value other than 0 and 1"))
        bool_warnings++;
}

START_TEST(tinyint1_as_boolean_warns_once)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS tb");
    sql(my, "DROP TABLE IF EXISTS tb.t");
    sql(my, "CREATE TABLE tb.t (id INT PRIMARY KEY, f TINYINT(1), g BOOL, n TINYINT(1) UNSIGNED)");
    sql(my, "INSERT INTO tb.t VALUES (1, 0, 1, 5), (2, 5, -3, 0), (3, 1, 0, 1), (4, 7, NULL, 2)");
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "tb.t");
    static const coldef tc[] = {
        { "id", "", K_INT }, { "f", "", K_BOOL }, { "g", "", K_BOOL }, { "n", "", K_INT }
    };
    w2l_log_set_callback(count_bool_warnings, NULL);
    run_conf = "source.tinyint1-as-boolean=true";
    run r;
    w2l_error err;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=tb&startup=initial"), NULL, 1, &err), err);
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    compare_table(my, &m, "tb.t", tc, 4);
    ck_assert_int_eq(bool_warnings, 2); /* f and g; n is unsigned: int */
    /* the binlog: many odd values in several events, still one warning per column */
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    sql(my, "INSERT INTO tb.t VALUES (5, 9, 9, 9), (6, -128, 127, 3)");
    sql(my, "UPDATE tb.t SET f = 42 WHERE id <= 3");
    sql(my, "INSERT INTO tb.t VALUES (7, 0, 1, 0)");
    bool_warnings = 0;
    ck_assert_ok(run_open(&r, &m, uri_for("databases=tb"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    run_conf = NULL;
    w2l_log_set_callback(NULL, NULL);
    compare_table(my, &m, "tb.t", tc, 4);
    ck_assert_int_eq(bool_warnings, 2);
    model_free(&m);
    mysql_close(my);
}
END_TEST


/* ---- source.snapshot-lock=ftwrl: the short global read lock ---- */

static const coldef fw_cols[] = {{"id", "INT NOT NULL", K_INT}, {"v", "INT", K_INT}};

typedef struct writer {
    volatile int stop;
    int n;
} writer;

/* Inserts new rows and updates old ones, one autocommit statement at a time, until stop. */
static void *write_loop(void *arg)
{
    writer *w = arg;
    MYSQL *m = db_connect();
    for (int i = 0; !w->stop && i < 240; i++) { /* the model holds 256 rows */
        char q[160];
        if (i % 2) snprintf(q, sizeof q, "INSERT INTO fw.t VALUES (%d, %d)", 1000 + i, i);
        else snprintf(q, sizeof q, "UPDATE fw.t SET v = v + 1 WHERE id = %d", 1 + i % 100);
        if (mysql_query(m, q) != 0) break;
        w->n++;
        if (i >= 40) usleep(2000); /* spread over the snapshot's chunks */
    }
    mysql_close(m);
    return NULL;
}

START_TEST(snapshot_ftwrl_while_writing)
{
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS fw");
    sql(my, "DROP TABLE IF EXISTS fw.t");
    sql(my, "CREATE TABLE fw.t (id INT PRIMARY KEY, v INT)");
    sql(my, "INSERT INTO fw.t SELECT seq, 0 FROM fw.seq_1_to_100");
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "fw.t");
    writer w = {0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, write_loop, &w), 0);
    while (w.n < 40) usleep(1000); /* writing before and while the snapshot runs */
    run r;
    w2l_error err;
    run_conf = "source.snapshot-lock=ftwrl";
    /* chunks of 8: the writer goes on between them; the snapshot's rows are as of the
     * position read under the lock, so the binlog from there applies on top exactly
     * (an INSERT seen twice or an UPDATE of a row not there fails the model) */
    ck_assert_ok(run_open(&r, &m, uri_for("databases=fw&chunk-rows=8"), NULL, 1, &err), err);
    run_conf = NULL;
    w2l_rc rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    ck_assert_int_ge(m.inserts, 100);
    w.stop = 1;
    pthread_join(th, NULL);
    ck_assert_int_gt(w.n, 40);
    char pos[2048];
    snprintf(pos, sizeof pos, "%s", m.last_pos);
    ck_assert_msg(strstr(pos, "\"gtid\":\"0-1-"), "%s", pos);
    ck_assert_ok(run_open(&r, &m, uri_for("databases=fw"), pos, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    run_close(&r);
    compare_table(my, &m, "fw.t", fw_cols, 2);
    model_free(&m);

    /* a user without RELOAD: the error names the privilege */
    sql(my, "DROP USER IF EXISTS 'norel'@'127.0.0.1'");
    sql(my, "CREATE USER 'norel'@'127.0.0.1' IDENTIFIED BY 'norelpass'");
    MYSQL *root = root_connect(); /* the test's own user may not grant */
    sql(root, "GRANT SELECT ON fw.* TO 'norel'@'127.0.0.1'");
    mysql_close(root);
    char uri[512];
    snprintf(uri, sizeof uri,
             "mysql://norel:norelpass@127.0.0.1:%d/?server-id=%u&databases=fw&snapshot-lock=ftwrl",
             (int)test_mariadb_port(), next_server_id());
    rc = run_open(&r, &m, uri, NULL, 0, &err);
    ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, "RELOAD privilege") && /* snap driver's */
                      strstr(err.msg, "FLUSH TABLES WITH READ LOCK"),
                  "%s: %s", w2l_rc_name(rc), err.msg);
    /* the same user gets past the snapshot's start lock-free (MariaDB's default) */
    snprintf(uri, sizeof uri, "mysql://norel:norelpass@127.0.0.1:%d/?server-id=%u&databases=fw",
             (int)test_mariadb_port(), next_server_id());
    ck_assert_ok(run_open(&r, &m, uri, NULL, 0, &err), err);
    run_close(&r);
    mysql_close(my);
}
END_TEST

/* TLS and the server's RSA key: parameters parsed, files checked before connecting. */
START_TEST(auth_options)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    static const struct {
        const char *params, *says;
    } bad[] = {
        {"ssl-mode=sometimes", "ssl-mode 'sometimes' is not disabled, required"},
        {"get-server-public-key=maybe", "get-server-public-key 'maybe'"},
        {"snapshot-lock=table", "snapshot-lock 'table' is not auto, none or ftwrl"},
        {"server-public-key=/nonexistent/server.pem",
         "server-public-key file /nonexistent/server.pem: No such file"},
        {"ssl-mode=required&ssl-ca=/nonexistent/ca.pem", "ssl-ca file /nonexistent/ca.pem"},
        {"ssl-mode=verify-identity", "needs ssl-ca"},
        {"sslmode=required", "unknown parameter 'sslmode'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w2l_rc rc = run_open(&r, &m, uri_for(bad[i].params), NULL, 1, &err);
        ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, bad[i].says), "%s: %s: %s",
                      bad[i].params, w2l_rc_name(rc), err.msg);
    }
    /* a file that is not a PEM public key */
    char path[512];
    char dir[400];
    snprintf(dir, sizeof dir, "%s", tmpdir_make("mysrc_auth"));
    snprintf(path, sizeof path, "%s/notakey.pem", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("hello\n", f);
    fclose(f);
    char params[700];
    snprintf(params, sizeof params, "server-public-key=%s", path);
    w2l_rc rc = run_open(&r, &m, uri_for(params), NULL, 1, &err);
    ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, "is not a PEM public key"), "%s", err.msg);
    tmpdir_remove(dir);
    /* the conf keys work as the URI parameters do */
    run_conf = "source.ssl-mode=verify-ca";
    rc = run_open(&r, &m, uri_for("databases=none"), NULL, 1, &err);
    run_conf = NULL;
    ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, "needs ssl-ca"), "%s", err.msg);
    /* the test server has no TLS: required fails, naming TLS */
    rc = run_open(&r, &m, uri_for("ssl-mode=required"), NULL, 1, &err);
    ck_assert_msg(rc == W2L_SOURCE && strstr(err.msg, "TLS"), "%s: %s", w2l_rc_name(rc), err.msg);
    /* a native-password user connects with the RSA plugins refused (the default) and with
     * get-server-public-key=true */
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS authdb");
    mysql_close(my);
    ck_assert_ok(run_open(&r, &m, uri_for("databases=authdb&get-server-public-key=true"), NULL,
                          1, &err),
                 err);
    run_close(&r);
}
END_TEST

/* ---- start-time checks (issue: "success reported for nothing") ---- */

/* A database named that is not there, a user without SELECT, tables= / include that match
 * no table: W2L_SOURCE (exit 1), naming what exists and what to do; a database that exists
 * and holds no table is fine. */
START_TEST(selection_errors_name_what_exists)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    MYSQL *my = db_connect();
    sql(my, "DROP DATABASE IF EXISTS selshop");
    sql(my, "DROP DATABASE IF EXISTS selempty");
    sql(my, "CREATE DATABASE selshop");
    sql(my, "CREATE DATABASE selempty");
    sql(my, "CREATE TABLE selshop.orders (id INT PRIMARY KEY)");
    sql(my, "CREATE TABLE selshop.items (id INT PRIMARY KEY)");
    /* a typo in databases= */
    w2l_rc rc = run_open(&r, &m, uri_for("databases=selshpo"), NULL, 1, &err);
    ck_assert_msg(rc == W2L_SOURCE && strstr(err.msg, ": databases= names 'selshpo', which is not "
                                                      "on the server; its databases: ") &&
                      strstr(err.msg, "selshop"),
                  "%s: %s", w2l_rc_name(rc), err.msg);
    /* include is matched against db.table */
    run_conf = "include=accounts";
    rc = run_open(&r, &m, uri_for("databases=selshop"), NULL, 1, &err);
    run_conf = NULL;
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, ": --include 'accounts' matched no table: patterns match "
                                  "DB.TABLE, whole, e.g. 'selshop\\.accounts' or '.*\\.accounts'; "
                                  "tables the source user can read: selshop.items, selshop.orders"),
                  "%s", err.msg);
    rc = run_open(&r, &m, uri_for("databases=selshop&tables=orders"), NULL, 1, &err);
    ck_assert_msg(rc == W2L_SOURCE && strstr(err.msg, ": tables='orders' matched no table: "
                                                      "patterns match DB.TABLE, whole, e.g. "
                                                      "'selshop\\.orders' or '.*\\.orders'"),
                  "%s: %s", w2l_rc_name(rc), err.msg);
    /* the same patterns written as DB.TABLE work */
    ck_assert_ok(run_open(&r, &m, uri_for("databases=selshop&tables=selshop\\.orders"), NULL, 1,
                          &err),
                 err);
    run_close(&r);
    /* an empty database: fine, its tables come from the binlog */
    ck_assert_ok(run_open(&r, &m, uri_for("databases=selempty"), NULL, 1, &err), err);
    rc = run_all(&r, &m, 0, &err);
    run_close(&r);
    ck_assert_msg(rc == W2L_DONE, "%s: %s", w2l_rc_name(rc), err.msg);
    /* a user with the replication grants only */
    MYSQL *root = root_connect();
    sql(root, "DROP USER IF EXISTS 'nosel'@'127.0.0.1'");
    sql(root, "CREATE USER 'nosel'@'127.0.0.1' IDENTIFIED BY 'noselpass'");
    sql(root, "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'nosel'@'127.0.0.1'");
    mysql_close(root);
    char uri[512];
    snprintf(uri, sizeof uri,
             "mysql://nosel:noselpass@127.0.0.1:%d/?server-id=%u&databases=selshop",
             (int)test_mariadb_port(), next_server_id());
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "nosel@127.0.0.1:") &&
                      strstr(err.msg, ": databases= names 'selshop', which the source user cannot "
                                      "see: it is not on the server, or the user may not read it "
                                      "(GRANT SELECT ON `selshop`.* TO 'nosel'@'127.0.0.1'); "
                                      "databases the user can see: (none)"),
                  "%s", err.msg);
    snprintf(uri, sizeof uri, "mysql://nosel:noselpass@127.0.0.1:%d/?server-id=%u",
             (int)test_mariadb_port(), next_server_id());
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, ": the source user sees no database but the system ones: GRANT "
                                  "SELECT ON *.* TO 'nosel'@'127.0.0.1'"),
                  "%s", err.msg);
    /* a user who sees the database (SHOW DATABASES) but may not read it */
    root = root_connect();
    sql(root, "GRANT SHOW DATABASES ON *.* TO 'nosel'@'127.0.0.1'");
    mysql_close(root);
    snprintf(uri, sizeof uri,
             "mysql://nosel:noselpass@127.0.0.1:%d/?server-id=%u&databases=selshop",
             (int)test_mariadb_port(), next_server_id());
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, ": database 'selshop' shows no table to the source user, which "
                                  "may not read it: GRANT SELECT ON `selshop`.* TO "
                                  "'nosel'@'127.0.0.1'"),
                  "%s", err.msg);
    sql(my, "DROP DATABASE selshop");
    sql(my, "DROP DATABASE selempty");
    mysql_close(my);
}
END_TEST

/* binlog_row_image=MINIMAL (dynamic) and binlog_format: refused at start, each named, with
 * the SET GLOBAL statements and the my.cnf lines; back to FULL, the source opens. */
START_TEST(settings_named_at_once)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS setdb");
    sql(my, "SET GLOBAL binlog_row_image = 'MINIMAL'");
    w2l_rc rc = run_open(&r, &m, uri_for("databases=setdb"), NULL, 1, &err);
    sql(my, "SET GLOBAL binlog_row_image = 'NOBLOB'");
    sql(my, "SET GLOBAL binlog_format = 'MIXED'");
    w2l_error err2;
    w2l_rc rc2 = run_open(&r, &m, uri_for("databases=setdb"), NULL, 1, &err2);
    sql(my, "SET GLOBAL binlog_row_image = 'FULL'");
    sql(my, "SET GLOBAL binlog_format = 'ROW'");
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, ": the server is not set up for binlog CDC: binlog_row_image is "
                                  "MINIMAL (FULL needed); at once: SET GLOBAL "
                                  "binlog_row_image=FULL; and for restarts, in my.cnf under "
                                  "[mariadbd]: binlog_row_image=FULL"),
                  "%s", err.msg);
    ck_assert_int_eq(rc2, W2L_SOURCE);
    ck_assert_msg(strstr(err2.msg, ": binlog_format is MIXED (ROW needed), binlog_row_image is "
                                   "NOBLOB (FULL needed); at once: SET GLOBAL binlog_format=ROW; "
                                   "SET GLOBAL binlog_row_image=FULL; and for restarts, in my.cnf "
                                   "under [mariadbd]: binlog_format=ROW binlog_row_image=FULL"),
                  "%s", err2.msg);
    ck_assert_ok(run_open(&r, &m, uri_for("databases=setdb"), NULL, 1, &err), err);
    run_close(&r);
    mysql_close(my);
}
END_TEST

/* A MINIMAL image that reaches the stream (the setting changed after the start): the
 * table's error names the setting, not the lake's "image without column". */
START_TEST(minimal_image_at_run_time_names_the_setting)
{
    static model m;
    memset(&m, 0, sizeof m);
    snprintf(m.table, sizeof m.table, "minrt.t");
    run r;
    w2l_error err;
    MYSQL *my = db_connect();
    sql(my, "DROP DATABASE IF EXISTS minrt");
    sql(my, "CREATE DATABASE minrt");
    sql(my, "CREATE TABLE minrt.t (id INT PRIMARY KEY, a INT, b VARCHAR(10))");
    sql(my, "INSERT INTO minrt.t VALUES (1, 1, 'x')");
    ck_assert_ok(run_open(&r, &m, uri_for("databases=minrt&startup=latest"), NULL, 0, &err), err);
    sql(my, "SET GLOBAL binlog_row_image = 'MINIMAL'");
    MYSQL *w = db_connect(); /* a new session: the global setting applies to it */
    sql(w, "UPDATE minrt.t SET a = 2 WHERE id = 1");
    mysql_close(w);
    sql(my, "SET GLOBAL binlog_row_image = 'FULL'");
    w2l_rc rc = W2L_OK;
    for (int i = 0; i < 200 && (rc == W2L_OK || rc == W2L_AGAIN); i++) {
        rc = r.src->methods->next(r.src, r.em, 200, &err);
        w2l__emitter_flush(r.em, NULL);
    }
    run_close(&r);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "minrt.t at binlog.") &&
                      strstr(err.msg, ": an UPDATE row image without column 'id': the server wrote "
                                      "it with binlog_row_image=MINIMAL or NOBLOB") &&
                      strstr(err.msg, "run SET GLOBAL binlog_row_image=FULL and put "
                                      "binlog_row_image=FULL under [mariadbd] in my.cnf"),
                  "%s", err.msg);
    sql(my, "DROP DATABASE minrt");
    mysql_close(my);
}
END_TEST

/* The password from password-file= / source.password-file (first line) or
 * W2L_SOURCE_PASSWORD when the URI has none; the URI's wins. Never in a message. */
START_TEST(password_file_and_env)
{
    static model m;
    memset(&m, 0, sizeof m);
    run r;
    w2l_error err;
    MYSQL *my = db_connect();
    sql(my, "CREATE DATABASE IF NOT EXISTS pwdb");
    mysql_close(my);
    char dir[400], path[512], bad[512], uri[1200];
    snprintf(dir, sizeof dir, "%s", tmpdir_make("mysrc_pw"));
    snprintf(path, sizeof path, "%s/pw", dir);
    snprintf(bad, sizeof bad, "%s/badpw", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("cdcpass\n", f);
    fclose(f);
    f = fopen(bad, "w");
    ck_assert_ptr_nonnull(f);
    fputs("Wr0ngFr0mF1le\r\n", f);
    fclose(f);
    unsetenv("W2L_SOURCE_PASSWORD");
    snprintf(uri, sizeof uri,
             "mysql://cdc@127.0.0.1:%d/?server-id=%u&databases=pwdb&password-file=%s",
             (int)test_mariadb_port(), next_server_id(), path);
    ck_assert_ok(run_open(&r, &m, uri, NULL, 1, &err), err);
    run_close(&r);
    /* the conf key; a wrong password from it is refused without showing it */
    char conf[600];
    snprintf(conf, sizeof conf, "source.password-file=%s", bad);
    run_conf = conf;
    snprintf(uri, sizeof uri, "mysql://cdc@127.0.0.1:%d/?server-id=%u&databases=pwdb",
             (int)test_mariadb_port(), next_server_id());
    w2l_rc rc = run_open(&r, &m, uri, NULL, 1, &err);
    run_conf = NULL;
    ck_assert_msg(rc == W2L_SOURCE && strstr(err.msg, "(error 1045)") &&
                      !strstr(err.msg, "Wr0ngFr0mF1le"),
                  "%s: %s", w2l_rc_name(rc), err.msg);
    /* a file that is not there: named */
    snprintf(uri, sizeof uri,
             "mysql://cdc@127.0.0.1:%d/?server-id=%u&databases=pwdb&password-file=%s/none",
             (int)test_mariadb_port(), next_server_id(), dir);
    rc = run_open(&r, &m, uri, NULL, 1, &err);
    ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, "password-file ") &&
                      strstr(err.msg, "/none: No such file"),
                  "%s: %s", w2l_rc_name(rc), err.msg);
    /* the environment, when neither URI nor file has one */
    setenv("W2L_SOURCE_PASSWORD", "cdcpass", 1);
    snprintf(uri, sizeof uri, "mysql://cdc@127.0.0.1:%d/?server-id=%u&databases=pwdb",
             (int)test_mariadb_port(), next_server_id());
    ck_assert_ok(run_open(&r, &m, uri, NULL, 1, &err), err);
    run_close(&r);
    /* the file wins over the environment */
    setenv("W2L_SOURCE_PASSWORD", "Wr0ngFr0mEnv", 1);
    snprintf(uri, sizeof uri,
             "mysql://cdc@127.0.0.1:%d/?server-id=%u&databases=pwdb&password-file=%s",
             (int)test_mariadb_port(), next_server_id(), path);
    ck_assert_ok(run_open(&r, &m, uri, NULL, 1, &err), err);
    run_close(&r);
    /* the URI's password wins over both */
    snprintf(uri, sizeof uri,
             "mysql://cdc:cdcpass@127.0.0.1:%d/?server-id=%u&databases=pwdb&password-file=%s",
             (int)test_mariadb_port(), next_server_id(), bad);
    ck_assert_ok(run_open(&r, &m, uri, NULL, 1, &err), err);
    run_close(&r);
    unsetenv("W2L_SOURCE_PASSWORD");
    tmpdir_remove(dir);
}
END_TEST

/* Every missing setting named at once, log_bin first, per flavour (no server: the builder
 * on the settings as read). */
START_TEST(settings_message_lists_every_setting)
{
    w2l_error err;
    w2l__ms_settings ok = {0, "1", "ROW", "FULL", "FULL"};
    ck_assert_ok(w2l__ms_settings_check(&ok, "cdc@db:3306", &err), err);
    w2l__ms_settings off = {0, "0", "MIXED", "MINIMAL", "NO_LOG"};
    ck_assert_int_eq(w2l__ms_settings_check(&off, "cdc@db:3306", &err), W2L_SOURCE);
    ck_assert_str_eq(err.msg,
                     "mysql source cdc@db:3306: the server is not set up for binlog CDC: log_bin "
                     "(the binlog) is OFF, binlog_format is MIXED (ROW needed), binlog_row_image "
                     "is MINIMAL (FULL needed), binlog_row_metadata is NO_LOG (FULL needed); in "
                     "my.cnf under [mariadbd]: log_bin=binlog binlog_format=ROW "
                     "binlog_row_image=FULL binlog_row_metadata=FULL, then restart the server "
                     "(log_bin is not dynamic); the others at once: SET GLOBAL binlog_format=ROW; "
                     "SET GLOBAL binlog_row_image=FULL; SET GLOBAL binlog_row_metadata=FULL;");
    /* MySQL, binlog off and nothing else: [mysqld], no SET GLOBAL */
    w2l__ms_settings my = {1, "OFF", "ROW", "FULL", "FULL"};
    ck_assert_int_eq(w2l__ms_settings_check(&my, "cdc@db:3306", &err), W2L_SOURCE);
    ck_assert_str_eq(err.msg, "mysql source cdc@db:3306: the server is not set up for binlog CDC: "
                              "log_bin (the binlog) is OFF; in my.cnf under [mysqld]: "
                              "log_bin=binlog, then restart the server (log_bin is not dynamic)");
    /* a server without binlog_row_metadata (before MariaDB 10.5) */
    w2l__ms_settings old = {0, "1", "ROW", "FULL", NULL};
    ck_assert_int_eq(w2l__ms_settings_check(&old, "cdc@db:3306", &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "binlog_row_metadata is unknown to this server;"), "%s",
                  err.msg);
}
END_TEST

Suite *suite_mysql_source(void)
{
    Suite *s = suite_create("mysql_source");
    TCase *tc = tcase_create("server");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, server_start, server_stop);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, errors_are_clear);
    tcase_add_test(tc, types_snapshot_then_binlog);
    tcase_add_test(tc, compressed_binlog_events);
    tcase_add_test(tc, restart_mid_stream_and_snapshot);
    tcase_add_test(tc, ddl_interleaved_gtid_start_several_dbs);
    tcase_add_test(tc, idle_stream_returns_again);
    tcase_add_test(tc, xa_held_until_commit_across_restart);
    tcase_add_test(tc, snapshot_resume_window_is_exact);
    tcase_add_test(tc, ddl_during_chunked_snapshot);
    tcase_add_test(tc, tinyint1_as_boolean_warns_once);
    tcase_add_test(tc, snapshot_ftwrl_while_writing);
    tcase_add_test(tc, auth_options);
    tcase_add_test(tc, selection_errors_name_what_exists);
    tcase_add_test(tc, settings_named_at_once);
    tcase_add_test(tc, minimal_image_at_run_time_names_the_setting);
    tcase_add_test(tc, password_file_and_env);
    /* last: it restarts the server (a later test's first connection may fail) */
    tcase_add_test(tc, server_restart_mid_stream);
    suite_add_tcase(s, tc);
    TCase *dec = tcase_create("decode");
    tcase_add_test(dec, snapshot_plan_position_round_trip);
    tcase_add_test(dec, decode_big_decimal_as_text);
    tcase_add_test(dec, decode_bit64_keeps_every_bit);
    tcase_add_test(dec, decode_geometry_drops_the_srid);
    tcase_add_test(dec, decode_tinyint1_boolean_nonzero_is_true);
    tcase_add_test(dec, settings_message_lists_every_setting);
    suite_add_tcase(s, dec);
    return s;
}
