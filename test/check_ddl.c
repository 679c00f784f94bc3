/*
 * lib/ddl: the MySQL/MariaDB DDL parser (ddl_lex.c, ddl_parse.c), redaction of secrets
 * (ddl_redact.c) and online-schema-change names (ddl_osc.c). Expected parses are written
 * in a compact text form (ddl_dump below) so the corpus table stays readable.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "ddl/ddl.h"
#include "support/support.h"

static void dump_put(char *out, size_t size, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void dump_put(char *out, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*n < size ? out + *n : NULL, *n < size ? size - *n : 0, fmt, ap);
    va_end(ap);
    if (w > 0) *n += (size_t)w;
}

#define P(...) dump_put(out, size, &n, __VA_ARGS__)

static void dump_name(char *out, size_t size, size_t *np, const w2l__ddl_name *nm)
{
    size_t n = *np;
    P("%s.%s", nm->db ? nm->db : "-", nm->name ? nm->name : "?");
    *np = n;
}

static void dump_col(char *out, size_t size, size_t *np, const w2l__ddl_column *c)
{
    size_t n = *np;
    P("%s %s", c->name, c->type_text);
    if (c->not_null) P(" NN");
    if (c->auto_increment) P(" AI");
    if (c->primary_key) P(" PK");
    if (c->unique) P(" UQ");
    if (c->generated) P(c->generated == W2L_DDL_GEN_STORED ? " GENS" : " GENV");
    if (c->invisible) P(" INV");
    if (c->type.charset) P(" CS=%s", c->type.charset);
    if (c->type.collate) P(" CO=%s", c->type.collate);
    if (c->default_text) P(" D=%s", c->default_text);
    if (c->on_update) P(" U=%s", c->on_update);
    if (c->comment) P(" C=%s", c->comment);
    *np = n;
}

static void dump_pos(char *out, size_t size, size_t *np, const w2l__ddl_alter *a)
{
    size_t n = *np;
    if (a->position == W2L_DDL_POS_FIRST) P(" FIRST");
    if (a->position == W2L_DDL_POS_AFTER) P(" AFTER %s", a->after);
    *np = n;
}

static size_t ddl_dump(const w2l__ddl_list *l, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const w2l__ddl_stmt *st = &l->stmts[i];
        if (i) P(" | ");
        P("%s", w2l__ddl_kind_name(st->kind));
        if (st->if_exists) P(" IFE");
        if (st->if_not_exists) P(" IFNE");
        if (st->or_replace) P(" ORREPLACE");
        switch (st->kind) {
        case W2L_DDL_CREATE_TABLE:
        case W2L_DDL_CREATE_TABLE_SELECT:
            P(" ");
            dump_name(out, size, &n, &st->table);
            P(" (");
            for (size_t k = 0; k < st->ncols; k++) {
                if (k) P(", ");
                dump_col(out, size, &n, &st->cols[k]);
            }
            P(")");
            if (st->npk) {
                P(" pk(");
                for (size_t k = 0; k < st->npk; k++) P("%s%s", k ? "," : "", st->pk[k]);
                P(")");
            }
            break;
        case W2L_DDL_CREATE_TABLE_LIKE:
            P(" ");
            dump_name(out, size, &n, &st->table);
            P(" LIKE ");
            dump_name(out, size, &n, &st->like);
            break;
        case W2L_DDL_ALTER_TABLE:
            P(" ");
            dump_name(out, size, &n, &st->table);
            P(" {");
            for (size_t k = 0; k < st->nalters; k++) {
                const w2l__ddl_alter *a = &st->alters[k];
                if (k) P("; ");
                switch (a->kind) {
                case W2L_ALTER_ADD_COLUMN:
                    P("ADD%s ", a->if_exists ? " IFNE" : "");
                    dump_col(out, size, &n, &a->col);
                    dump_pos(out, size, &n, a);
                    break;
                case W2L_ALTER_DROP_COLUMN:
                    P("DROP%s %s", a->if_exists ? " IFE" : "", a->name);
                    break;
                case W2L_ALTER_RENAME_COLUMN: P("RENAME %s>%s", a->name, a->new_name); break;
                case W2L_ALTER_CHANGE_COLUMN:
                    P("CHANGE%s %s ", a->if_exists ? " IFE" : "", a->name);
                    dump_col(out, size, &n, &a->col);
                    dump_pos(out, size, &n, a);
                    break;
                case W2L_ALTER_MODIFY_COLUMN:
                    P("MODIFY%s ", a->if_exists ? " IFE" : "");
                    dump_col(out, size, &n, &a->col);
                    dump_pos(out, size, &n, a);
                    break;
                case W2L_ALTER_ADD_PRIMARY_KEY:
                    P("ADDPK(");
                    for (size_t j = 0; j < a->nkeys; j++) P("%s%s", j ? "," : "", a->keys[j]);
                    P(")");
                    break;
                case W2L_ALTER_DROP_PRIMARY_KEY: P("DROPPK"); break;
                case W2L_ALTER_RENAME_TABLE:
                    P("RENAMETO ");
                    dump_name(out, size, &n, &a->new_table);
                    break;
                case W2L_ALTER_CONVERT_CHARSET: P("CONVERT %s", a->charset); break;
                default: P("-%s", a->what); break;
                }
            }
            P("}");
            break;
        case W2L_DDL_DROP_TABLE:
        case W2L_DDL_TEMPORARY:
            P(" ");
            if (st->ntables)
                for (size_t k = 0; k < st->ntables; k++) {
                    if (k) P(", ");
                    dump_name(out, size, &n, &st->tables[k]);
                }
            else dump_name(out, size, &n, &st->table);
            break;
        case W2L_DDL_RENAME_TABLE:
            P(" ");
            for (size_t k = 0; k < st->nrenames; k++) {
                if (k) P(", ");
                dump_name(out, size, &n, &st->renames[k].from);
                P(">");
                dump_name(out, size, &n, &st->renames[k].to);
            }
            break;
        case W2L_DDL_TRUNCATE_TABLE:
        case W2L_DDL_CREATE_INDEX:
        case W2L_DDL_DROP_INDEX:
            P(" ");
            dump_name(out, size, &n, &st->table);
            break;
        case W2L_DDL_CREATE_DATABASE:
        case W2L_DDL_DROP_DATABASE:
        case W2L_DDL_USE: P(" %s", st->database); break;
        default: P(" [%s]", st->head); break;
        }
    }
    return n;
}
#undef P

static w2l__ddl_list *parse_ok(const char *sql, const char *db)
{
    w2l_error err;
    w2l__ddl_list *l = NULL;
    w2l_rc rc = w2l__ddl_parse(sql, strlen(sql), db, &l, &err);
    ck_assert_msg(rc == W2L_OK, "%s: %s (%s)", w2l_rc_name(rc), err.msg, sql);
    return l;
}

/* ---- corpus: real-world statements and their expected parse ---- */

static const struct { const char *sql, *want;
} corpus[] = {
    { "CREATE TABLE IF NOT EXISTS `all_types` (`c_tinyint` tinyint(4) DEFAULT NULL,"
      " `c_bool` tinyint(1) NOT NULL DEFAULT '0', `c_smallint` smallint(5) unsigned zerofill "
      "DEFAULT NULL, `c_mediumint` mediumint(9) DEFAULT '-1', `c_int` int(11) NOT NULL,"
      " `c_bigint` bigint(20) unsigned NOT NULL, `c_dec` decimal(65,30) DEFAULT NULL,"
      " `c_float` float(7,2) DEFAULT NULL, `c_double` double NOT NULL DEFAULT '0',"
      " `c_bit` bit(12) DEFAULT b'0', `c_date` date DEFAULT '2000-01-01',"
      " `c_dt` datetime(3) DEFAULT NULL, `c_ts` timestamp NULL DEFAULT NULL ON UPDATE "
      "CURRENT_TIMESTAMP, `c_time` time(6) DEFAULT NULL, `c_year` year(4) DEFAULT NULL,"
      " `c_char` char(3) COLLATE utf8mb4_bin DEFAULT NULL, `c_enum` enum('a','b',"
      "'it''s') DEFAULT 'a', `c_set` set('x','y') DEFAULT '', `c_json` json DEFAULT NULL,"
      " `c_bin` binary(16) DEFAULT NULL, `c_vb` varbinary(10) DEFAULT NULL, `c_blob` longblob,"
      " `c_text` mediumtext CHARACTER SET latin1, PRIMARY KEY (`c_int`,`c_bigint`),"
      " UNIQUE KEY `u1` (`c_char`), KEY `k1` (`c_text`(10)), FULLTEXT KEY `ft` (`c_text`),"
      " CONSTRAINT `fk1` FOREIGN KEY (`c_int`) REFERENCES `other` (`id`) ON DELETE CASCADE,"
      " CONSTRAINT `chk` CHECK ((`c_int` > 0))) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 "
      "COLLATE=utf8mb4_0900_ai_ci ROW_FORMAT=DYNAMIC COMMENT='all types'",
      "CREATE_TABLE IFNE db.all_types (c_tinyint tinyint(4) D=NULL, c_bool tinyint(1) NN D='0',"
      " c_smallint smallint(5) unsigned zerofill D=NULL, c_mediumint mediumint(9) D='-1',"
      " c_int int(11) NN, c_bigint bigint(20) unsigned NN, c_dec decimal(65,30) D=NULL,"
      " c_float float(7,2) D=NULL, c_double double NN D='0', c_bit bit(12) D=b'0',"
      " c_date date D='2000-01-01', c_dt datetime(3) D=NULL,"
      " c_ts timestamp D=NULL U=CURRENT_TIMESTAMP, c_time time(6) D=NULL, c_year year(4) D=NULL,"
      " c_char char(3) CO=utf8mb4_bin D=NULL, c_enum enum('a','b','it''s') D='a', c_set set('x',"
      "'y') D='', c_json json D=NULL, c_bin binary(16) D=NULL, c_vb varbinary(10) D=NULL,"
      " c_blob longblob, c_text mediumtext CS=latin1) pk(c_int,c_bigint)" },
    { "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL UNIQUE)",
      "CREATE_TABLE db.t (id int PK, v varchar(10) NN UQ) pk(id)" },
    { "CREATE TABLE t (id SERIAL, name NATIONAL VARCHAR(20), d DOUBLE PRECISION, r REAL,"
      " n NUMERIC(10,2), dc DEC, i INTEGER UNSIGNED, b BOOLEAN, lv LONG VARCHAR, lb LONG "
      "VARBINARY)",
      "CREATE_TABLE db.t (id bigint unsigned NN AI UQ, name varchar(20), d double, r double,"
      " n decimal(10,2), dc decimal, i int unsigned, b boolean, lv mediumtext, lb mediumblob)" },
    { "CREATE TABLE t (a INT, b INT AS (a * 2) VIRTUAL,"
      " c INT GENERATED ALWAYS AS (a + 1) STORED NOT NULL, d INT INVISIBLE, e INT PERSISTENT)",
      "CREATE_TABLE db.t (a int, b int GENV, c int NN GENS, d int INV, e int GENS)" },
    { "CREATE TABLE t (a INT, b VARCHAR(20) DEFAULT (uuid()), c DATETIME DEFAULT now(),"
      " d INT DEFAULT -1, e VARCHAR(5) DEFAULT _utf8mb4'x',"
      " f DATE DEFAULT (CURRENT_DATE + INTERVAL 1 DAY), g INT DEFAULT 1 + 2)",
      "CREATE_TABLE db.t (a int, b varchar(20) D=(uuid()), c datetime D=now(), d int D=-1,"
      " e varchar(5) D=_utf8mb4'x', f date D=(CURRENT_DATE + INTERVAL 1 DAY), g int D=1 + 2)" },
    { "CREATE TABLE t (a INT NOT NULL, PRIMARY KEY USING BTREE (a)) PARTITION BY RANGE (a) "
      "(PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
      "CREATE_TABLE db.t (a int NN) pk(a)" },
    { "CREATE TABLE t (id INT NOT NULL, CONSTRAINT pk PRIMARY KEY (id), INDEX (id),"
      " SPATIAL INDEX sp (g), CHECK (id > 0))",
      "CREATE_TABLE db.t (id int NN) pk(id)" },
    { "CREATE TABLE t (g POINT NOT NULL SRID 4326, u UUID, i6 INET6)",
      "CREATE_TABLE db.t (g point NN, u uuid, i6 inet6)" },
    { "CREATE TABLE `weird``name` (`col with space` int, `\"q\"` int, \"ansi\" int, `üñí` text)",
      "CREATE_TABLE db.weird`name (col with space int, \"q\" int, ansi int, üñí text)" },
    { "create table lower_case (Id int not null auto_increment comment 'pk',"
      " primary key (Id)) engine=innodb",
      "CREATE_TABLE db.lower_case (Id int NN AI C=pk) pk(Id)" },
    { "CREATE TABLE `s`.`t` (a int) /*!50100 PARTITION BY HASH (a) PARTITIONS 4 */",
      "CREATE_TABLE s.t (a int)" },
    { "CREATE /*!32312 TEMPORARY */ TABLE tmp1 (a int)", "TEMPORARY db.tmp1" },
    { "CREATE TEMPORARY TABLE IF NOT EXISTS tmp (a int)", "TEMPORARY IFNE db.tmp" },
    { "CREATE TABLE t2 LIKE s.t1", "CREATE_TABLE_LIKE db.t2 LIKE s.t1" },
    { "CREATE TABLE t2 (LIKE t1)", "CREATE_TABLE_LIKE db.t2 LIKE db.t1" },
    { "CREATE TABLE t3 SELECT * FROM t1", "CREATE_TABLE_SELECT db.t3 ()" },
    { "CREATE TABLE t3 (extra INT) ENGINE=InnoDB AS SELECT a, b FROM t1",
      "CREATE_TABLE_SELECT db.t3 (extra int)" },
    { "CREATE TABLE t4 AS (SELECT 1 AS x)", "CREATE_TABLE_SELECT db.t4 ()" },
    { "CREATE OR REPLACE TABLE t (a int)", "CREATE_TABLE ORREPLACE db.t (a int)" },
    { "CREATE TABLE t (a INT) WITH SYSTEM VERSIONING", "CREATE_TABLE db.t (a int)" },
    { "CREATE TABLE t (c CHAR(10) BINARY, d VARCHAR(10) CHARACTER SET binary, e TEXT CHARSET "
      "binary,"
      " f CHAR(2) ASCII)",
      "CREATE_TABLE db.t (c char(10), d varbinary(10) CS=binary, e blob CS=binary,"
      " f char(2) CS=latin1)" },
    { "CREATE TABLE t (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
      " ts TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),"
      " PRIMARY KEY (id)) ENGINE=InnoDB",
      "CREATE_TABLE db.t (id bigint unsigned NN AI, ts timestamp(6) NN D=CURRENT_TIMESTAMP(6) "
      "U=CURRENT_TIMESTAMP(6)) pk(id)" },
    { "ALTER TABLE t ADD COLUMN c INT", "ALTER_TABLE db.t {ADD c int}" },
    { "ALTER TABLE t ADD c1 INT FIRST, ADD COLUMN c2 VARCHAR(10) NOT NULL DEFAULT '' AFTER c1,"
      " DROP COLUMN old, DROP old2",
      "ALTER_TABLE db.t {ADD c1 int FIRST; ADD c2 varchar(10) NN D='' AFTER c1; DROP old; DROP "
      "old2}" },
    { "ALTER TABLE t ADD COLUMN IF NOT EXISTS c INT, DROP COLUMN IF EXISTS d,"
      " CHANGE COLUMN IF EXISTS e f INT, MODIFY COLUMN IF EXISTS g BIGINT",
      "ALTER_TABLE db.t {ADD IFNE c int; DROP IFE d; CHANGE IFE e f int; MODIFY IFE g bigint}" },
    { "ALTER TABLE t ADD COLUMN (a INT, b TEXT)", "ALTER_TABLE db.t {ADD a int; ADD b text}" },
    { "ALTER TABLE t RENAME COLUMN a TO b, RENAME TO t_new",
      "ALTER_TABLE db.t {RENAME a>b; RENAMETO db.t_new}" },
    { "ALTER TABLE t RENAME AS s.t2", "ALTER_TABLE db.t {RENAMETO s.t2}" },
    { "ALTER TABLE t RENAME t3", "ALTER_TABLE db.t {RENAMETO db.t3}" },
    { "ALTER TABLE t CHANGE `old` `new` BIGINT(20) UNSIGNED NOT NULL COMMENT 'renamed' AFTER `id`",
      "ALTER_TABLE db.t {CHANGE old new bigint(20) unsigned NN C=renamed AFTER id}" },
    { "ALTER TABLE t MODIFY price DECIMAL(14,2) NOT NULL FIRST",
      "ALTER_TABLE db.t {MODIFY price decimal(14,2) NN FIRST}" },
    { "ALTER TABLE t ALTER COLUMN a SET DEFAULT 5, ALTER b DROP DEFAULT,"
      " ALTER COLUMN c SET INVISIBLE",
      "ALTER_TABLE db.t {-ALTER COLUMN; -ALTER COLUMN; -ALTER COLUMN}" },
    { "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)",
      "ALTER_TABLE db.t {DROPPK; ADDPK(a,b)}" },
    { "ALTER TABLE t ADD CONSTRAINT PRIMARY KEY USING BTREE (id)", "ALTER_TABLE db.t {ADDPK(id)}" },
    { "ALTER TABLE t ADD INDEX idx (a), ADD UNIQUE KEY uk (b), ADD FULLTEXT INDEX ft (c),"
      " ADD CONSTRAINT fk FOREIGN KEY (d) REFERENCES o (id), DROP INDEX idx2, DROP FOREIGN KEY fk2,"
      " DROP KEY k3",
      "ALTER_TABLE db.t {-ADD INDEX; -ADD UNIQUE; -ADD FULLTEXT; -ADD CONSTRAINT; -DROP INDEX; "
      "-DROP FOREIGN KEY; -DROP KEY}" },
    { "ALTER TABLE t ENGINE=InnoDB", "ALTER_TABLE db.t {-ENGINE}" },
    { "ALTER TABLE t ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT 'x'",
      "ALTER_TABLE db.t {-ENGINE; -CHARSET; -COMMENT}" },
    { "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
      "ALTER_TABLE db.t {CONVERT utf8mb4}" },
    { "ALTER TABLE t FORCE, ALGORITHM=INPLACE, LOCK=NONE",
      "ALTER_TABLE db.t {-FORCE; -ALGORITHM; -LOCK}" },
    { "ALTER TABLE t AUTO_INCREMENT = 1000", "ALTER_TABLE db.t {-AUTO_INCREMENT}" },
    { "ALTER ONLINE IGNORE TABLE t ADD c INT", "ALTER_TABLE db.t {ADD c int}" },
    { "ALTER TABLE IF EXISTS t WAIT 5 ADD c INT", "ALTER_TABLE IFE db.t {ADD c int}" },
    { "ALTER TABLE t ADD CHECK (a > 0), DROP CHECK chk, DROP CONSTRAINT c2",
      "ALTER_TABLE db.t {-ADD CHECK; -DROP CHECK; -DROP CONSTRAINT}" },
    { "ALTER TABLE t RENAME INDEX a TO b, ALTER INDEX c INVISIBLE",
      "ALTER_TABLE db.t {-RENAME INDEX; -ALTER INDEX}" },
    { "ALTER TABLE t ADD PARTITION (PARTITION p3 VALUES LESS THAN (100)), DROP PARTITION p0",
      "ALTER_TABLE db.t {-ADD PARTITION; -DROP PARTITION}" },
    { "ALTER TABLE t REMOVE PARTITIONING", "ALTER_TABLE db.t {-REMOVE PARTITIONING}" },
    { "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 8", "ALTER_TABLE db.t {-PARTITION BY}" },
    { "ALTER TABLE t ORDER BY a, DISABLE KEYS", "ALTER_TABLE db.t {-ORDER BY; -DISABLE KEYS}" },
    { "ALTER TABLE t ADD COLUMN id2 INT NOT NULL AUTO_INCREMENT PRIMARY KEY",
      "ALTER_TABLE db.t {ADD id2 int NN AI PK}" },
    { "ALTER TABLE `db2`.`_t_gho` ADD COLUMN `x` int", "ALTER_TABLE db2._t_gho {ADD x int}" },
    { "DROP TABLE t", "DROP_TABLE db.t" },
    { "DROP TABLE IF EXISTS `a`,`b` /* generated by server */", "DROP_TABLE IFE db.a, db.b" },
    { "DROP TEMPORARY TABLE IF EXISTS tmp", "TEMPORARY IFE db.tmp" },
    { "DROP TABLE s.t RESTRICT", "DROP_TABLE s.t" },
    { "RENAME TABLE t TO _t_old, _t_new TO t", "RENAME_TABLE db.t>db._t_old, db._t_new>db.t" },
    { "RENAME TABLE `s`.`t` TO `s`.`_t_del`, `s`.`_t_gho` TO `s`.`t`",
      "RENAME_TABLE s.t>s._t_del, s._t_gho>s.t" },
    { "TRUNCATE TABLE t", "TRUNCATE_TABLE db.t" },
    { "TRUNCATE s.t", "TRUNCATE_TABLE s.t" },
    { "CREATE DATABASE IF NOT EXISTS shop DEFAULT CHARACTER SET utf8mb4",
      "CREATE_DATABASE IFNE shop" },
    { "CREATE SCHEMA s2", "CREATE_DATABASE s2" },
    { "DROP DATABASE IF EXISTS shop", "DROP_DATABASE IFE shop" },
    { "CREATE UNIQUE INDEX idx ON t (a, b) USING BTREE", "CREATE_INDEX db.t" },
    { "DROP INDEX idx ON s.t", "DROP_INDEX s.t" },
    { "USE other; CREATE TABLE x (a int); ALTER TABLE y ADD b int",
      "USE other | CREATE_TABLE other.x (a int) | ALTER_TABLE other.y {ADD b int}" },
    { "CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'", "OTHER [CREATE USER]" },
    { "GRANT SELECT ON shop.* TO 'app'@'%' IDENTIFIED BY 'pw'", "OTHER [GRANT SELECT]" },
    { "SET PASSWORD FOR 'app'@'%' = PASSWORD('pw2')", "OTHER [SET PASSWORD]" },
    { "CREATE DEFINER=`root`@`localhost` PROCEDURE p() BEGIN DECLARE x INT; IF x > 0 THEN ALTER "
      "TABLE t ADD c INT; END IF; SELECT 1; END; DROP TABLE z",
      "OTHER [CREATE DEFINER] | DROP_TABLE db.z" },
    { "CREATE TRIGGER trg BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1; TRUNCATE t",
      "OTHER [CREATE TRIGGER] | TRUNCATE_TABLE db.t" },
    { "CREATE VIEW v AS SELECT * FROM t", "OTHER [CREATE VIEW]" },
    { "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `v` AS select 1",
      "OTHER [CREATE ALGORITHM]" },
    { "FLUSH PRIVILEGES", "OTHER [FLUSH PRIVILEGES]" },
    { "ANALYZE TABLE t", "OTHER [ANALYZE TABLE]" },
    { "OPTIMIZE TABLE t", "OTHER [OPTIMIZE TABLE]" },
    { "BEGIN", "OTHER [BEGIN]" },
    { "# comment only", "" },
    { "-- comment only", "" },
    { "/* block */ ALTER /* x */ TABLE t /* y */ ADD c INT -- trailing",
      "ALTER_TABLE db.t {ADD c int}" },
    { "ALTER TABLE t ADD COLUMN `c` INT COMMENT 'a;b', ADD d INT",
      "ALTER_TABLE db.t {ADD c int C=a;b; ADD d int}" },
};

START_TEST(corpus_parses)
{
    ck_assert_uint_ge(W2L_ARRAY_LEN(corpus), 60);
    for (size_t i = 0; i < W2L_ARRAY_LEN(corpus); i++) {
        w2l__ddl_list *l = parse_ok(corpus[i].sql, "db");
        char got[8192];
        ddl_dump(l, got, sizeof got);
        ck_assert_msg(strcmp(got, corpus[i].want) == 0, "#%zu %s\n got: %s\nwant: %s", i,
                      corpus[i].sql, got, corpus[i].want);
        w2l__ddl_list_free(l);
    }
}
END_TEST

START_TEST(column_details)
{
    w2l__ddl_list *l = parse_ok(
        "CREATE TABLE `s`.`t` (\n"
        "  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n"
        "  `e` enum('a','it''s','c\\\\d') CHARACTER SET utf8mb4 DEFAULT 'a' COMMENT 'x\\ny',\n"
        "  `b` binary(16) NOT NULL,\n"
        "  `t` datetime(6) DEFAULT CURRENT_TIMESTAMP(6),\n"
        "  PRIMARY KEY (`id`)\n"
        ") ENGINE=InnoDB",
        NULL);
    ck_assert_uint_eq(l->n, 1);
    const w2l__ddl_stmt *st = &l->stmts[0];
    ck_assert_int_eq(st->kind, W2L_DDL_CREATE_TABLE);
    ck_assert_str_eq(st->table.db, "s");
    ck_assert_str_eq(st->table.name, "t");
    ck_assert_uint_eq(st->ncols, 4);
    ck_assert_uint_eq(st->npk, 1);
    ck_assert_str_eq(st->pk[0], "id");
    const w2l__ddl_column *id = &st->cols[0], *e = &st->cols[1], *b = &st->cols[2],
                          *t = &st->cols[3];
    ck_assert_int_eq(id->type.cls, W2L_MYSQL_INT);
    ck_assert_int_eq(id->type.int_bytes, 8);
    ck_assert_int_eq(id->type.is_unsigned, 1);
    ck_assert_int_eq(id->type.len, 20);
    ck_assert_int_eq(id->not_null, 1);
    ck_assert_int_eq(id->auto_increment, 1);
    ck_assert_int_eq(e->type.cls, W2L_MYSQL_ENUM);
    ck_assert_uint_eq(e->type.nvalues, 3);
    ck_assert_str_eq(e->type.values[0], "a");
    ck_assert_str_eq(e->type.values[1], "it's");
    ck_assert_str_eq(e->type.values[2], "c\\d");
    ck_assert_int_eq(e->type.max_length, 4);
    ck_assert_str_eq(e->type.charset, "utf8mb4");
    ck_assert_str_eq(e->default_text, "'a'");
    ck_assert_str_eq(e->comment, "x\ny");
    ck_assert_str_eq(e->type_text, "enum('a','it''s','c\\\\d')");
    ck_assert_int_eq(b->type.cls, W2L_MYSQL_BINARY);
    ck_assert_int_eq(b->type.binary_pad, 16);
    ck_assert_int_eq(t->type.fsp, 6);
    ck_assert_str_eq(t->default_text, "CURRENT_TIMESTAMP(6)");
    ck_assert_uint_eq(st->line, 1);
    w2l__ddl_list_free(l);
}
END_TEST

START_TEST(statement_texts_and_lines)
{
    w2l__ddl_list *l =
        parse_ok("USE a;\n\n  ALTER TABLE t ADD c INT ;\n-- x\nDROP TABLE u;;", NULL);
    ck_assert_uint_eq(l->n, 3);
    ck_assert_str_eq(l->stmts[0].text, "USE a");
    ck_assert_str_eq(l->stmts[1].text, "ALTER TABLE t ADD c INT");
    ck_assert_uint_eq(l->stmts[1].line, 3);
    ck_assert_str_eq(l->stmts[1].table.db, "a");
    ck_assert_str_eq(l->stmts[2].tables[0].db, "a");
    ck_assert_uint_eq(l->stmts[2].line, 5);
    w2l__ddl_list_free(l);
    /* empty and comment-only inputs: no statements */
    const char *empty[] = {"", "   ", ";", "-- c", "# c\n", "/* c */", ";;/**/;"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(empty); i++) {
        l = parse_ok(empty[i], NULL);
        ck_assert_uint_eq(l->n, 0);
        w2l__ddl_list_free(l);
    }
    /* unqualified names without a default database */
    l = parse_ok("TRUNCATE t", NULL);
    ck_assert_ptr_null(l->stmts[0].table.db);
    w2l__ddl_list_free(l);
}
END_TEST

START_TEST(lexical_corners)
{
    static const struct { const char *sql, *want; } cases[] = {
        /* "--" without a space is two minus signs, not a comment */
        {"CREATE TABLE t (a INT DEFAULT --1\n)", "CREATE_TABLE -.t (a int D=--1)"},
        {"CREATE TABLE t (a INT DEFAULT 1)-- x", "CREATE_TABLE -.t (a int D=1)"},
        {"/*!40101 CREATE TABLE t (a INT) */", "CREATE_TABLE -.t (a int)"},
        {"/*M!100100 CREATE TABLE t (a INT) */", "CREATE_TABLE -.t (a int)"},
        {"/*!CREATE TABLE t (a INT)*/", "CREATE_TABLE -.t (a int)"},
        {"CREATE TABLE t (a INT /*!80023 INVISIBLE */)", "CREATE_TABLE -.t (a int INV)"},
        {"CREATE TABLE t (a VARCHAR(3) DEFAULT 'a''b\\'c\"d')",
         "CREATE_TABLE -.t (a varchar(3) D='a''b\\'c\"d')"},
        {"CREATE TABLE t (a VARCHAR(3) COMMENT 'one' ' two')",
         "CREATE_TABLE -.t (a varchar(3) C=one two)"},
        {"CREATE TABLE `a``b`.`c``d` (`e``f` INT)", "CREATE_TABLE a`b.c`d (e`f int)"},
        {"CREATE TABLE \"s\".\"t\" (\"a\" INT)", "CREATE_TABLE s.t (a int)"},
        {"CREATE TABLE db . t (a INT)", "CREATE_TABLE db.t (a int)"},
        {"CREATE TABLE 1t (2a INT, a1 INT DEFAULT 1e3, b DOUBLE DEFAULT .5, c INT DEFAULT 0x1F)",
         "CREATE_TABLE -.1t (2a int, a1 int D=1e3, b double D=.5, c int D=0x1F)"},
        {"cReAtE tAbLe T (A iNt UnSiGnEd NoT nUlL)", "CREATE_TABLE -.T (A int unsigned NN)"},
        {"CREATE TABLE t (a INT)\r\n;\r\n", "CREATE_TABLE -.t (a int)"},
        {"CREATE TABLE t (a INT, b INT DEFAULT X'0A', c BIT DEFAULT b'1')",
         "CREATE_TABLE -.t (a int, b int D=X'0A', c bit D=b'1')"},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l__ddl_list *l = parse_ok(cases[i].sql, NULL);
        char got[2048];
        ddl_dump(l, got, sizeof got);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "#%zu %s\n got: %s\nwant: %s", i,
                      cases[i].sql, got, cases[i].want);
        w2l__ddl_list_free(l);
    }
}
END_TEST

/* ---- errors ---- */

START_TEST(errors_name_line_column_token)
{
    static const struct { const char *sql, *msg;
    } cases[] = {
        { "CREATE TABLE t (a INT",
          "DDL: expected ',' or ')' after a table element at line 1 column "
          "22: near ''" },
        { "CREATE TABLE t (a INT, b VARCHAR(10) FOO)",
          "DDL: unexpected text in column definition at line 1 column 38: near 'FOO'" },
        { "ALTER TABLE t\n  FROBNICATE x",
          "DDL: unsupported ALTER TABLE clause at line 2 column 3: near 'FROBNICATE'" },
        { "CREATE TABLE t (a enum(1,2))",
          "DDL: expected a quoted ENUM/SET value at line 1 column 24: near '1'" },
        { "CREATE TABLE t (a int) ; CREATE TABLE",
          "DDL: expected a table name at line 1 column 38: near ''" },
        { "CREATE TABLE t ()", "DDL: expected a column name at line 1 column 17: near ')'" },
        { "DROP TABLE", "DDL: expected a table name at line 1 column 11: near ''" },
        { "RENAME TABLE a b", "DDL: expected TO at line 1 column 16: near 'b'" },
        { "CREATE TABLE t (a int) /* open",
          "DDL: unterminated comment at line 1 column 24: near '/*'" },
        { "CREATE TABLE `t (a int)",
          "DDL: unterminated quoted identifier at line 1 column 14: near "
          "'`t (a int)'" },
        { "CREATE TABLE t (a int) ENGINE=x)", "DDL: unbalanced ')' at line 1 column 32: near ')'" },
        { "CREATE TABLE t ENGINE=InnoDB", "DDL: expected '(' with column definitions, LIKE or "
                                          "SELECT at line 1 column 16: near 'ENGINE'" },
        { "ALTER TABLE t ADD c INT FIRST AFTER",
          "DDL: expected ',' or the end of ALTER TABLE at line 1 column 31: near 'AFTER'" },
        { "ALTER TABLE t MODIFY c", "DDL: expected a data type at line 1 column 23: near ''" },
        { "ALTER TABLE t ALTER COLUMN c SET NULL", "DDL: expected SET DEFAULT, DROP DEFAULT or SET "
                                                   "[IN]VISIBLE at line 1 column 30: near 'SET'" },
        { "CREATE TABLE t (a int, PRIMARY KEY (a), PRIMARY KEY (a))",
          "DDL: multiple primary keys at line 1 column 53: near '('" },
        { "TRUNCATE TABLE a b", "DDL: unexpected text after TRUNCATE TABLE at line 1 column 18: "
                                "near 'b'" },
        { "CREATE TABLE t (a DECIMAL(10 2))", "DDL: expected ')' at line 1 column 30: near '2'" },
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_error err;
        w2l__ddl_list *l = (w2l__ddl_list *)&err; /* must be reset to NULL */
        w2l_rc rc = w2l__ddl_parse(cases[i].sql, strlen(cases[i].sql), NULL, &l, &err);
        ck_assert_msg(rc == W2L_CORRUPT, "#%zu %s: %s", i, cases[i].sql, w2l_rc_name(rc));
        ck_assert_ptr_null(l);
        ck_assert_msg(strcmp(err.msg, cases[i].msg) == 0, "#%zu\n got: %s\nwant: %s", i, err.msg,
                      cases[i].msg);
    }
    w2l_error err;
    ck_assert_int_eq(w2l__ddl_parse(NULL, 3, NULL, &(w2l__ddl_list *){NULL}, &err), W2L_MISUSE);
    ck_assert_int_eq(w2l__ddl_parse("x", 1, NULL, NULL, &err), W2L_MISUSE);
}
END_TEST

START_TEST(errors_never_quote_strings)
{
    static const char *const cases[] = {
        "CREATE USER 'u' IDENTIFIED BY 'hunter2",
        "ALTER TABLE t ADD c INT DEFAULT 'hunter2' 'x' junk",
        "CREATE TABLE t (a INT COMMENT 'hunter2' 'hunter2' 5)",
        "ALTER TABLE t PASSWORD='hunter2' junk(",
        "CREATE TABLE t (a INT) COMMENT 'hunter2')",
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_error err;
        w2l__ddl_list *l = NULL;
        w2l_rc rc = w2l__ddl_parse(cases[i], strlen(cases[i]), NULL, &l, &err);
        ck_assert_msg(rc == W2L_CORRUPT, "#%zu: %s", i, w2l_rc_name(rc));
        ck_assert_msg(!strstr(err.msg, "hunter2"), "#%zu leaks: %s", i, err.msg);
    }
}
END_TEST

/* ---- redaction ---- */

START_TEST(redact_masks_secrets)
{
    static const struct { const char *in, *out;
    } cases[] = {
        { "CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'",
          "CREATE USER 'app'@'%' IDENTIFIED BY '***'" },
        { "create user app identified with mysql_native_password as '*0123ABC'",
          "create user app identified with mysql_native_password as '***'" },
        { "ALTER USER u@h IDENTIFIED BY \"p\\\"w\" PASSWORD EXPIRE",
          "ALTER USER u@h IDENTIFIED BY '***' PASSWORD EXPIRE" },
        { "GRANT ALL ON *.* TO 'u'@'%' IDENTIFIED BY 'pw' WITH GRANT OPTION",
          "GRANT ALL ON *.* TO 'u'@'%' IDENTIFIED BY '***' WITH GRANT OPTION" },
        { "SET PASSWORD FOR 'u'@'%' = PASSWORD('pw2')",
          "SET PASSWORD FOR '***'@'***' = PASSWORD('***')" },
        { "SET PASSWORD = 'pw'", "SET PASSWORD = '***'" },
        { "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='pw'",
          "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='***'" },
        { "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD 'pw')",
          "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD '***')" },
        { "CREATE USER u IDENTIFIED BY 'a'; SELECT 'kept'",
          "CREATE USER u IDENTIFIED BY '***'; SELECT 'kept'" },
        { "CREATE USER u IDENTIFIED BY 'never closed; DROP TABLE x",
          "CREATE USER u IDENTIFIED BY '***'" },
        { "CREATE USER u IDENTIFIED BY X'4142'", "CREATE USER u IDENTIFIED BY '***'" },
        { "/*!80000 CREATE USER u IDENTIFIED BY 'a' */",
          "/*!80000 CREATE USER u IDENTIFIED BY '***' */" },
        { "CREATE TABLE t (password VARCHAR(10) DEFAULT 'x')",
          "CREATE TABLE t (password VARCHAR(10) DEFAULT '***')" },
        { "ALTER TABLE t ADD c INT COMMENT 'no secret'",
          "ALTER TABLE t ADD c INT COMMENT 'no secret'" },
        { "CREATE TABLE f (id INT) ENGINE=FEDERATED CONNECTION='mysql://fed:pw@h:3306/db/t'",
          "CREATE TABLE f (id INT) ENGINE=FEDERATED CONNECTION='***'" },
        { "ALTER TABLE c CONNECTION = \"mysql://u:pw@h/db/t\" COMMENT 'c'",
          "ALTER TABLE c CONNECTION = '***' COMMENT '***'" },
        { "CREATE TABLE c (id INT) ENGINE=CONNECT TABLE_TYPE=MYSQL "
          "OPTION_LIST='user=u,password=pw'",
          "CREATE TABLE c (id INT) ENGINE=CONNECT TABLE_TYPE=MYSQL OPTION_LIST='***'" },
        { "", "" },
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        char *r = w2l__ddl_redact(cases[i].in, strlen(cases[i].in));
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(strcmp(r, cases[i].out) == 0, "#%zu\n got: %s\nwant: %s", i, r, cases[i].out);
        w2l__free(r);
    }
    /* parsed statements carry the redacted text (a table's CONNECTION too) */
    {
        w2l__ddl_list *fl = parse_ok(
            "CREATE TABLE f (id INT) ENGINE=FEDERATED CONNECTION='mysql://fed:pw@h/db/t'", "d");
        ck_assert_uint_eq(fl->n, 1);
        ck_assert_int_eq(fl->stmts[0].sensitive, 1);
        ck_assert_ptr_null(strstr(fl->stmts[0].text, "pw"));
        w2l__ddl_list_free(fl);
    }
    /* parsed statements carry the redacted text */
    w2l__ddl_list *l = parse_ok("CREATE USER 'app' IDENTIFIED BY 'hunter2'; DROP TABLE t", NULL);
    ck_assert_uint_eq(l->n, 2);
    ck_assert_int_eq(l->stmts[0].sensitive, 1);
    ck_assert_str_eq(l->stmts[0].text, "CREATE USER 'app' IDENTIFIED BY '***'");
    ck_assert_uint_eq(l->stmts[0].text_len, strlen(l->stmts[0].text));
    ck_assert_int_eq(l->stmts[1].sensitive, 0);
    w2l__ddl_list_free(l);
}
END_TEST

/* ---- online schema change tools ---- */

START_TEST(osc_names_and_swaps)
{
    static const struct { const char *name; w2l__osc_kind kind; const char *base; } names[] = {
        {"_orders_gho", W2L_OSC_GHOST_SHADOW, "orders"},
        {"_orders_ghc", W2L_OSC_GHOST_CHANGELOG, "orders"},
        {"_orders_del", W2L_OSC_GHOST_OLD, "orders"},
        {"_orders_20240102030405_del", W2L_OSC_GHOST_OLD, "orders"},
        {"_orders_new", W2L_OSC_PTOSC_SHADOW, "orders"},
        {"__orders_new", W2L_OSC_PTOSC_SHADOW, "orders"},
        {"_orders_old", W2L_OSC_PTOSC_OLD, "orders"},
        {"_my_table_gho", W2L_OSC_GHOST_SHADOW, "my_table"},
        {"orders", W2L_OSC_NONE, ""},
        {"orders_new", W2L_OSC_NONE, ""},
        {"_gho", W2L_OSC_NONE, ""},
        {"__gho", W2L_OSC_NONE, ""},
        {"_x_GHO", W2L_OSC_NONE, ""},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(names); i++) {
        char base[64];
        ck_assert_msg(w2l__osc_classify(names[i].name, base, sizeof base) == names[i].kind, "%s",
                      names[i].name);
        ck_assert_str_eq(base, names[i].base);
    }
    ck_assert_int_eq(w2l__osc_classify(NULL, NULL, 0), W2L_OSC_NONE);

    static const struct {
        const char *sql;
        int swap;
        const char *table, *shadow;
        w2l__osc_kind tool;
    } swaps[] = {
        { "RENAME TABLE `s`.`t` TO `s`.`_t_del`, `s`.`_t_gho` TO `s`.`t`", 1, "t", "_t_gho",
          W2L_OSC_GHOST_SHADOW },
        { "RENAME TABLE t TO _t_old, _t_new TO t", 1, "t", "_t_new", W2L_OSC_PTOSC_SHADOW },
        { "RENAME TABLE t TO _t_20240101000000_del, _t_gho TO t", 1, "t", "_t_gho",
          W2L_OSC_GHOST_SHADOW },
        { "RENAME TABLE __t_new TO t", 1, "t", "__t_new", W2L_OSC_PTOSC_SHADOW },
        { "RENAME TABLE t TO _t_old, _u_new TO t", 0, NULL, NULL, 0 },
        { "RENAME TABLE t TO _t_del, _t_new TO t", 0, NULL, NULL, 0 }, /* tools mixed */
        { "RENAME TABLE s.t TO s._t_del, s2._t_gho TO s.t", 0, NULL, NULL, 0 },
        { "RENAME TABLE a TO b, c TO d", 0, NULL, NULL, 0 },
        { "RENAME TABLE t TO _t_old", 0, NULL, NULL, 0 },
        { "DROP TABLE _t_gho", 0, NULL, NULL, 0 },
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(swaps); i++) {
        w2l__ddl_list *l = parse_ok(swaps[i].sql, "s");
        w2l__osc_swap sw;
        ck_assert_msg(w2l__osc_detect_swap(&l->stmts[0], &sw) == swaps[i].swap, "#%zu %s", i,
                      swaps[i].sql);
        if (swaps[i].swap) {
            ck_assert_str_eq(sw.table.name, swaps[i].table);
            ck_assert_str_eq(sw.table.db, "s");
            ck_assert_str_eq(sw.shadow.name, swaps[i].shadow);
            ck_assert_int_eq(sw.tool, swaps[i].tool);
        }
        w2l__ddl_list_free(l);
    }
}
END_TEST

/* ---- robustness: every truncation and random byte flips of the corpus ---- */

static void parse_any(const char *sql, size_t len)
{
    w2l_error err;
    w2l__ddl_list *l = NULL;
    w2l_rc rc = w2l__ddl_parse(sql, len, "db", &l, &err);
    ck_assert_msg(rc == W2L_OK || rc == W2L_CORRUPT, "%s: %s", w2l_rc_name(rc), err.msg);
    if (rc == W2L_OK) {
        char out[8192];
        ddl_dump(l, out, sizeof out); /* touches every pointer */
        w2l__ddl_list_free(l);
    } else {
        ck_assert_msg(strncmp(err.msg, "DDL: ", 5) == 0, "%s", err.msg);
        ck_assert_msg(strstr(err.msg, " at line ") && strstr(err.msg, "near '"), "%s", err.msg);
        ck_assert_ptr_null(l);
    }
    char *r = w2l__ddl_redact(sql, len);
    ck_assert_ptr_nonnull(r);
    w2l__free(r);
}

START_TEST(fuzz_truncations)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(corpus); i++) {
        const char *s = corpus[i].sql;
        size_t n = strlen(s);
        for (size_t cut = 0; cut <= n; cut++) {
            char *copy = malloc(cut + 1); /* exact size: ASan sees any over-read */
            memcpy(copy, s, cut);
            copy[cut] = '\0';
            parse_any(copy, cut);
            free(copy);
        }
    }
}
END_TEST

START_TEST(fuzz_byte_flips)
{
    static const char alphabet[] = "()`'\",;.-#/*!\\ \n0123456789abcXYZ=@_\x80\xff";
    uint64_t seed = 0x5eed5eedULL;
    for (size_t i = 0; i < W2L_ARRAY_LEN(corpus); i++) {
        const char *s = corpus[i].sql;
        size_t n = strlen(s);
        for (int round = 0; round < 60; round++) {
            char *copy = malloc(n ? n : 1);
            memcpy(copy, s, n);
            for (int k = 0; k < 1 + round % 4; k++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                size_t at = n ? (size_t)(seed >> 33) % n : 0;
                unsigned pick = (unsigned)(seed >> 20) % (sizeof alphabet - 1 + 8);
                if (n) copy[at] = pick < sizeof alphabet - 1 ? alphabet[pick] : (char)(seed >> 8);
            }
            parse_any(copy, n); /* not NUL-terminated: length is the contract */
            free(copy);
        }
    }
}
END_TEST

START_TEST(deep_nesting_and_big_input)
{
    /* deeply nested parentheses are skipped iteratively, not recursively */
    size_t depth = 100000;
    const char *head = "CREATE TABLE t (a INT DEFAULT ";
    size_t hl = strlen(head), n = hl + 2 * depth + 2;
    char *s = malloc(n + 1);
    memcpy(s, head, hl);
    memset(s + hl, '(', depth);
    memset(s + hl + depth, ')', depth);
    memcpy(s + hl + 2 * depth, ")", 2);
    w2l__ddl_list *l = parse_ok(s, NULL);
    ck_assert_uint_eq(l->stmts[0].ncols, 1);
    w2l__ddl_list_free(l);
    free(s);
    /* a table with 4096 columns */
    size_t cap = 4096 * 40 + 64, len = 0;
    s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "CREATE TABLE wide (");
    for (int i = 0; i < 4096; i++)
        len += (size_t)snprintf(s + len, cap - len, "%sc%d DECIMAL(%d,2)", i ? ", " : "", i,
                                3 + i % 30);
    len += (size_t)snprintf(s + len, cap - len, ")");
    l = parse_ok(s, NULL);
    ck_assert_uint_eq(l->stmts[0].ncols, 4096);
    ck_assert_str_eq(l->stmts[0].cols[4095].name, "c4095");
    w2l__ddl_list_free(l);
    free(s);
}
END_TEST

START_TEST(parse_survives_every_alloc_failure)
{
    fail_alloc_install();
    const char *sql = corpus[0].sql;
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        w2l_error err;
        w2l__ddl_list *l = NULL;
        fail_alloc_arm(nth);
        w2l_rc rc = w2l__ddl_parse(sql, strlen(sql), "db", &l, &err);
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
        if (rc != W2L_OK) ck_assert_ptr_null(l);
        w2l__ddl_list_free(l);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (rc == W2L_OK) break;
        ck_assert_int_lt(nth, 10000);
    }
}
END_TEST

Suite *suite_ddl(void)
{
    Suite *s = suite_create("ddl");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, corpus_parses);
    tcase_add_test(basic, column_details);
    tcase_add_test(basic, statement_texts_and_lines);
    tcase_add_test(basic, redact_masks_secrets);
    tcase_add_test(basic, osc_names_and_swaps);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, lexical_corners);
    tcase_add_test(edge, errors_name_line_column_token);
    tcase_add_test(edge, errors_never_quote_strings);
    tcase_add_test(edge, deep_nesting_and_big_input);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_set_timeout(faults, 120);
    tcase_add_test(faults, fuzz_truncations);
    tcase_add_test(faults, fuzz_byte_flips);
    tcase_add_test(faults, parse_survives_every_alloc_failure);
    suite_add_tcase(s, faults);
    return s;
}
