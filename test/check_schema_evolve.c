/*
 * lib/ddl/schema_evolve.c: schemas from CREATE TABLE, ALTER TABLE applied to Iceberg
 * schemas (fresh ids, widening only, required -> optional, reordering, identifier
 * fields), every forbidden change, and reconciliation with a source's column list.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "ddl/ddl.h"
#include "support/support.h"

static const char *const base_sql =
    "CREATE TABLE shop.t (id BIGINT NOT NULL, name VARCHAR(20) NOT NULL, "
    "price DECIMAL(10,2), qty INT, score FLOAT, note TEXT, PRIMARY KEY (id))";

/* "sid=S last=L [id name type[!], ...] pk=[ids]" */
static void schema_text(const w2l_schema *s, int32_t last, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "sid=%d last=%d [", (int)w2l_schema_id(s), (int)last);
    for (size_t i = 0; i < w2l_schema_field_count(s); i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        char tn[32];
        n += (size_t)snprintf(out + n, size - n, "%s%d %s %s%s", i ? ", " : "", (int)f->id, f->name,
                              w2l_type_format(f->type, tn, sizeof tn), f->required ? "!" : "");
    }
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(s, &nid);
    n += (size_t)snprintf(out + n, size - n, "] pk=[");
    for (size_t i = 0; i < nid; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%d", i ? "," : "", (int)ids[i]);
    snprintf(out + n, size - n, "]");
}

static w2l_schema *create(const char *sql, const w2l__evolve_opts *o, int32_t *last)
{
    w2l_error err;
    w2l__ddl_list *l;
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), "shop", &l, &err), err);
    w2l_schema *s = NULL;
    ck_assert_ok(w2l__schema_from_create(&l->stmts[0], o, 0, &s, last, &err), err);
    w2l__ddl_list_free(l);
    return s;
}

/* Applies every statement of sql in turn; returns rc of the first failure. */
static w2l_rc alter(w2l_schema **s, int32_t *last, const char *sql, const w2l__evolve_opts *o,
                    w2l_error *err)
{
    w2l__ddl_list *l;
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), "shop", &l, err), *err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < l->n; i++) {
        w2l__schema_diff *d = NULL;
        rc = w2l__schema_apply_alter(*s, *last, &l->stmts[i], o, &d, err);
        if (rc != W2L_OK) {
            ck_assert_ptr_null(d);
            break;
        }
        w2l_schema_unref(*s);
        *s = w2l_schema_ref(d->schema);
        *last = d->last_column_id;
        w2l__schema_diff_free(d);
    }
    w2l__ddl_list_free(l);
    return rc;
}

START_TEST(create_table_schema)
{
    int32_t last = 0;
    w2l_schema *s = create(base_sql, NULL, &last);
    char got[1024];
    schema_text(s, last, got, sizeof got);
    ck_assert_str_eq(got, "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), "
                          "4 qty int, 5 score float, 6 note string] pk=[1]");
    w2l_schema_unref(s);

    /* inline key, composite key with a nullable column (a key column is required), options */
    w2l__evolve_opts o = {{1, 1}, 0, 0};
    s = create("CREATE TABLE k (a INT, b VARCHAR(3), f TINYINT(1), t TIME, PRIMARY KEY (b, a))", &o,
               &last);
    schema_text(s, last, got, sizeof got);
    ck_assert_str_eq(got, "sid=0 last=4 [1 a int!, 2 b string!, 3 f boolean, 4 t string] pk=[2,1]");
    w2l_schema_unref(s);
    s = create("CREATE TABLE k (id INT PRIMARY KEY, v JSON)", NULL, &last);
    schema_text(s, last, got, sizeof got);
    ck_assert_str_eq(got, "sid=0 last=2 [1 id int!, 2 v string] pk=[1]");
    w2l_schema_unref(s);
    /* every legal MySQL value has a home: big decimals as text, spatial as WKB, BIT(64) as
     * a long, TINYINT(1) and BOOL as int unless the option says boolean */
    s = create("CREATE TABLE h (id INT PRIMARY KEY, d DECIMAL(65,30), g GEOMETRY,"
               " p POINT NOT NULL SRID 0, "
               "b BIT(64), t TINYINT(1), o BOOL, b1 BIT(1))", NULL, &last);
    schema_text(s, last, got, sizeof got);
    ck_assert_str_eq(got, "sid=0 last=8 [1 id int!, 2 d string, 3 g binary, 4 p binary!, 5 b long,"
                          " 6 t int, "
                          "7 o int, 8 b1 boolean] pk=[1]");
    w2l_schema_unref(s);
    s = create("CREATE TABLE nokey (a INT, b INT NOT NULL)", NULL, &last);
    schema_text(s, last, got, sizeof got);
    ck_assert_str_eq(got, "sid=0 last=2 [1 a int, 2 b int!] pk=[]");
    w2l_schema_unref(s);
}
END_TEST

START_TEST(create_table_errors)
{
    static const struct { const char *sql; w2l_rc rc; const char *msg; } cases[] = {
        {"CREATE TABLE g (id INT PRIMARY KEY, v FROBNICATOR(3))", W2L_SCHEMA,
         "table shop.g: column 'v': unknown MySQL type 'frobnicator'"},
        {"CREATE TABLE g (id INT PRIMARY KEY, d DECIMAL(66,30))", W2L_SCHEMA,
         "table shop.g: column 'd': invalid MySQL type decimal(66,30)"},
        {"CREATE TABLE g (d DOUBLE PRIMARY KEY)", W2L_SCHEMA,
         "table shop.g: identifier field 'd' (id 1) cannot be float or double"},
        {"CREATE TABLE g (a INT, PRIMARY KEY (zz))", W2L_SCHEMA,
         "table shop.g: PRIMARY KEY: no column 'zz'"},
        {"CREATE TABLE g AS SELECT 1", W2L_SCHEMA,
         "table shop.g: CREATE TABLE ... SELECT: the columns come from the query; the schema "
         "must come from the rows' column list"},
        {"CREATE TABLE g LIKE h", W2L_MISUSE,
         "w2l__schema_from_create: a CREATE_TABLE_LIKE statement, not CREATE TABLE"},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_error err;
        w2l__ddl_list *l;
        ck_assert_ok(w2l__ddl_parse(cases[i].sql, strlen(cases[i].sql), "shop", &l, &err), err);
        w2l_schema *s = (w2l_schema *)&err;
        int32_t last = -7;
        w2l_rc rc = w2l__schema_from_create(&l->stmts[0], NULL, 0, &s, &last, &err);
        ck_assert_msg(rc == cases[i].rc, "#%zu %s", i, w2l_rc_name(rc));
        ck_assert_ptr_null(s);
        ck_assert_int_eq(last, -7);
        ck_assert_msg(strcmp(err.msg, cases[i].msg) == 0, "#%zu\n got: %s\nwant: %s", i, err.msg,
                      cases[i].msg);
        w2l__ddl_list_free(l);
    }
}
END_TEST

/* ALTERs applied to the base table: 1 id long!, 2 name string!, 3 price decimal(10,2),
 * 4 qty int, 5 score float, 6 note string; pk [1]. */
static const struct { const char *sql; const char *want; } allowed[] = {
    /* new columns: fresh ids, optional even when NOT NULL, at the end or where asked */
    {"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 0",
     "sid=1 last=7 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string, 7 c int] pk=[1]"},
    {"ALTER TABLE t ADD a DATE FIRST, ADD b DATETIME(6) AFTER name, ADD c TIMESTAMP",
     "sid=1 last=9 [7 a date, 1 id long!, 2 name string!, 8 b timestamp, 3 price decimal(10,2), "
     "4 qty int, 5 score float, 6 note string, 9 c timestamptz] pk=[1]"},
    {"ALTER TABLE t ADD COLUMN (x BLOB, y BIT(1))",
     "sid=1 last=8 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string, 7 x binary, 8 y boolean] pk=[1]"},
    /* drop retires the id; the next column gets a new one */
    {"ALTER TABLE t DROP COLUMN note, ADD COLUMN note TEXT",
     "sid=1 last=7 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "7 note string] pk=[1]"},
    /* rename keeps the id */
    {"ALTER TABLE t RENAME COLUMN qty TO quantity",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 quantity int, "
     "5 score float, 6 note string] pk=[1]"},
    /* widening: int->long, float->double, decimal precision up with the same scale */
    {"ALTER TABLE t MODIFY qty BIGINT, MODIFY score DOUBLE, MODIFY price DECIMAL(20,2)",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(20,2), 4 qty long, "
     "5 score double, 6 note string] pk=[1]"},
    {"ALTER TABLE t MODIFY qty INT UNSIGNED",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty long, "
     "5 score float, 6 note string] pk=[1]"},
    /* CHANGE: rename + widen + move in one */
    {"ALTER TABLE t CHANGE COLUMN qty amount BIGINT NOT NULL FIRST",
     "sid=1 last=6 [4 amount long, 1 id long!, 2 name string!, 3 price decimal(10,2), "
     "5 score float, 6 note string] pk=[1]"},
    /* required -> optional (MODIFY without NOT NULL makes a column nullable) */
    {"ALTER TABLE t MODIFY name VARCHAR(40)",
     "sid=1 last=6 [1 id long!, 2 name string, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* ... but a primary-key column stays required, as MySQL keeps it NOT NULL */
    {"ALTER TABLE t MODIFY id BIGINT AUTO_INCREMENT",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* MySQL-only changes that map to the same Iceberg type are no change at all */
    {"ALTER TABLE t MODIFY name VARCHAR(200) NOT NULL, MODIFY note LONGTEXT, ADD INDEX i (name), "
     "ENGINE=InnoDB, ALGORITHM=INPLACE, ALTER COLUMN qty SET DEFAULT 3, RENAME TO t2",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* NOT NULL on an optional column leaves it optional */
    {"ALTER TABLE t MODIFY qty INT NOT NULL",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* reordering: the source's column order, ids kept by moved columns */
    {"ALTER TABLE t MODIFY note TEXT AFTER id, MODIFY score FLOAT FIRST",
     "sid=1 last=6 [5 score float, 1 id long!, 6 note string, 2 name string!, "
     "3 price decimal(10,2), 4 qty int] pk=[1]"},
    {"ALTER TABLE t MODIFY COLUMN note TEXT FIRST",
     "sid=1 last=6 [6 note string, 1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, "
     "5 score float] pk=[1]"},
    {"ALTER TABLE t CHANGE COLUMN price cost DECIMAL(12,2) AFTER note",
     "sid=1 last=6 [1 id long!, 2 name string!, 4 qty int, 5 score float, 6 note string, "
     "3 cost decimal(12,2)] pk=[1]"},
    {"ALTER TABLE t CHANGE name name VARCHAR(20) NOT NULL AFTER qty",
     "sid=1 last=6 [1 id long!, 3 price decimal(10,2), 4 qty int, 2 name string!, 5 score float, "
     "6 note string] pk=[1]"},
    /* several new columns, one AFTER another added by the same statement */
    {"ALTER TABLE t ADD x INT AFTER qty, ADD y POINT AFTER x, ADD z DECIMAL(50,5) FIRST",
     "sid=1 last=9 [9 z string, 1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, "
     "7 x int, 8 y binary, 5 score float, 6 note string] pk=[1]"},
    /* a move to where the column already is: no change */
    {"ALTER TABLE t MODIFY name VARCHAR(20) NOT NULL AFTER id",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* names refer to the table before the ALTER: a swap */
    {"ALTER TABLE t CHANGE qty note2 INT, CHANGE note qty TEXT, CHANGE note2 note INT",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 note int, 5 score float, "
     "6 qty string] pk=[1]"},
    /* column names are case-insensitive */
    {"ALTER TABLE t DROP COLUMN QTY, CHANGE Name NAME VARCHAR(5) NOT NULL",
     "sid=1 last=6 [1 id long!, 2 NAME string!, 3 price decimal(10,2), 5 score float, "
     "6 note string] pk=[1]"},
    /* primary key changes */
    {"ALTER TABLE t DROP PRIMARY KEY",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[]"},
    {"ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (name, id)",
     "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[2,1]"},
    {"ALTER TABLE t DROP COLUMN id",
     "sid=1 last=6 [2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[]"},
    /* IF [NOT] EXISTS */
    {"ALTER TABLE t ADD COLUMN IF NOT EXISTS qty BIGINT, DROP COLUMN IF EXISTS nope, "
     "CHANGE COLUMN IF EXISTS nope x INT, MODIFY COLUMN IF EXISTS nope INT",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
    /* CONVERT TO CHARACTER SET keeps strings strings */
    {"ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
     "sid=0 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int, 5 score float, "
     "6 note string] pk=[1]"},
};

START_TEST(alter_allowed)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(allowed); i++) {
        int32_t last;
        w2l_schema *s = create(base_sql, NULL, &last);
        w2l_error err;
        w2l_rc rc = alter(&s, &last, allowed[i].sql, NULL, &err);
        ck_assert_msg(rc == W2L_OK, "#%zu %s: %s", i, allowed[i].sql, err.msg);
        char got[1024];
        schema_text(s, last, got, sizeof got);
        ck_assert_msg(strcmp(got, allowed[i].want) == 0, "#%zu %s\n got: %s\nwant: %s", i,
                      allowed[i].sql, got, allowed[i].want);
        w2l_schema_unref(s);
    }
}
END_TEST

static const struct { const char *sql; const char *msg;
} forbidden[] = {
    { "ALTER TABLE t MODIFY name INT",
      "table shop.t: column 'name': cannot change type from string to int (MySQL int)" },
    { "ALTER TABLE t MODIFY id INT",
      "table shop.t: column 'id': cannot change type from long to int (MySQL int)" },
    { "ALTER TABLE t MODIFY price DECIMAL(12,3)",
      "table shop.t: column 'price': cannot change type from decimal(10,2) to decimal(12,3) "
      "(MySQL decimal(12,3))" },
    { "ALTER TABLE t MODIFY price DECIMAL(8,2)",
      "table shop.t: column 'price': cannot change type from decimal(10,2) to decimal(8,2) "
      "(MySQL decimal(8,2))" },
    { "ALTER TABLE t MODIFY qty DECIMAL(20,0)",
      "table shop.t: column 'qty': cannot change type from int to decimal(20,0) (MySQL "
      "decimal(20,0))" },
    { "ALTER TABLE t MODIFY qty BIGINT UNSIGNED",
      "table shop.t: column 'qty': cannot change type from int to decimal(20,0) (MySQL bigint "
      "unsigned)" },
    { "ALTER TABLE t MODIFY score INT",
      "table shop.t: column 'score': cannot change type from float to int (MySQL int)" },
    { "ALTER TABLE t MODIFY qty FLOAT",
      "table shop.t: column 'qty': cannot change type from int to float (MySQL float)" },
    { "ALTER TABLE t MODIFY qty DOUBLE",
      "table shop.t: column 'qty': cannot change type from int to double (MySQL double)" },
    { "ALTER TABLE t MODIFY qty VARCHAR(10)",
      "table shop.t: column 'qty': cannot change type from int to string (MySQL varchar(10))" },
    { "ALTER TABLE t MODIFY note BLOB",
      "table shop.t: column 'note': cannot change type from string to binary (MySQL blob)" },
    { "ALTER TABLE t MODIFY note DATE",
      "table shop.t: column 'note': cannot change type from string to date (MySQL date)" },
    { "ALTER TABLE t CHANGE qty qty2 BIT(1)",
      "table shop.t: column 'qty2': cannot change type from int to boolean (MySQL bit(1))" },
    { "ALTER TABLE t ADD d DATETIME; ALTER TABLE t MODIFY d TIMESTAMP",
      "table shop.t: column 'd': cannot change type from timestamp to timestamptz (MySQL "
      "timestamp)" },
    { "ALTER TABLE t ADD d DATE; ALTER TABLE t MODIFY d DATETIME",
      "table shop.t: column 'd': cannot change type from date to timestamp (MySQL datetime)" },
    { "ALTER TABLE t ADD d TIME; ALTER TABLE t MODIFY d VARCHAR(8)",
      "table shop.t: column 'd': cannot change type from time to string (MySQL varchar(8))" },
    { "ALTER TABLE t ADD v FROBNICATOR(4) AFTER id",
      "table shop.t: column 'v': unknown MySQL type 'frobnicator'" },
    { "ALTER TABLE t MODIFY price DECIMAL(65,2)",
      "table shop.t: column 'price': cannot change type from decimal(10,2) to string (MySQL "
      "decimal(65,2))" },
    { "ALTER TABLE t CONVERT TO CHARACTER SET binary",
      "table shop.t: CONVERT TO CHARACTER SET binary turns text columns into binary ones "
      "(string -> binary)" },
    { "ALTER TABLE t ADD qty INT", "table shop.t: ADD COLUMN: column 'qty' exists" },
    { "ALTER TABLE t DROP COLUMN nope", "table shop.t: DROP COLUMN: no column 'nope'" },
    { "ALTER TABLE t MODIFY nope INT", "table shop.t: MODIFY COLUMN: no column 'nope'" },
    { "ALTER TABLE t CHANGE nope x INT", "table shop.t: CHANGE COLUMN: no column 'nope'" },
    { "ALTER TABLE t RENAME COLUMN nope TO x", "table shop.t: RENAME COLUMN: no column 'nope'" },
    { "ALTER TABLE t ADD x INT AFTER nope", "table shop.t: AFTER: no column 'nope'" },
    { "ALTER TABLE t RENAME COLUMN qty TO name", "table shop.t: two columns named 'name'" },
    /* identifier fields must be required: a column this ALTER adds cannot be one */
    { "ALTER TABLE t ADD k INT NOT NULL, DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)",
      "table shop.t: primary key column 'k' is new to the table with its key: the rows the lake "
      "holds have no value for it (the server fills them without row events),"
      " so it cannot become the "
      "identifier; ddl.policy=quarantine for the table sets it aside and keeps the others "
      "flowing" },
    { "ALTER TABLE t DROP PRIMARY KEY, ADD COLUMN k INT AUTO_INCREMENT PRIMARY KEY",
      "table shop.t: primary key column 'k' is new to the table with its key: the rows the lake "
      "holds have no value for it (the server fills them without row events),"
      " so it cannot become the "
      "identifier; ddl.policy=quarantine for the table sets it aside and keeps the others "
      "flowing" },
    { "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (nope)",
      "table shop.t: PRIMARY KEY: no column 'nope'" },
};

/* A shared source replays DDL the lake has (replayed_ok): ADD of a column there with the same
 * type, or one it widens to, and DROP of one not there change nothing; a clash still fails. */
START_TEST(alter_replayed)
{
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    w2l__evolve_opts o = {{0, 0}, 1, 0};
    w2l_error err;
    size_t n = w2l_schema_field_count(s);
    const char *same[] = {"ALTER TABLE t ADD qty INT", "ALTER TABLE t ADD qty SMALLINT",
                          "ALTER TABLE t DROP COLUMN nope"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(same); i++) {
        w2l_schema *before = s;
        ck_assert_ok(alter(&s, &last, same[i], &o, &err), err);
        ck_assert_msg(s == before && w2l_schema_field_count(s) == n, "%s changed the schema",
                      same[i]);
    }
    ck_assert_int_eq(alter(&s, &last, "ALTER TABLE t ADD qty VARCHAR(3)", &o, &err), W2L_SCHEMA);
    ck_assert_str_eq(err.msg, "table shop.t: ADD COLUMN: column 'qty' exists");
    w2l_schema_unref(s);
}
END_TEST

/* A route's target (merge): each source's ALTER changes it only as the union needs. */
START_TEST(alter_merged)
{
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    w2l__evolve_opts o = {0};
    o.merge = 1;
    w2l_error err;
    char text[600];
    /* no change: what another source has already, narrower types, drops, keys, moves */
    const char *same[] = {"ALTER TABLE t ADD qty INT", "ALTER TABLE t ADD qty SMALLINT",
                          "ALTER TABLE t DROP COLUMN qty", "ALTER TABLE t DROP COLUMN nope",
                          "ALTER TABLE t MODIFY price DECIMAL(8,2)",
                          "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (name)",
                          "ALTER TABLE t MODIFY note TEXT FIRST", "ALTER TABLE t RENAME TO u"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(same); i++) {
        w2l_schema *before = s;
        ck_assert_ok(alter(&s, &last, same[i], &o, &err), err);
        ck_assert_msg(s == before, "%s changed the schema", same[i]);
    }
    /* the first source to add or widen changes the target; the others change nothing */
    ck_assert_ok(alter(&s, &last,
                       "ALTER TABLE t ADD email VARCHAR(80) NOT NULL AFTER id, MODIFY qty BIGINT, "
                       "CHANGE score score2 DOUBLE, RENAME COLUMN note TO memo",
                       &o, &err),
                 err);
    schema_text(s, last, text, sizeof text);
    ck_assert_str_eq(text, "sid=1 last=9 [1 id long!, 2 name string!, 3 price decimal(10,2), "
                           "4 qty long, 5 score float, 6 note string, 7 email string, "
                           "8 score2 double, 9 memo string] pk=[1]");
    w2l_schema *before = s;
    ck_assert_ok(alter(&s, &last, "ALTER TABLE t ADD email VARCHAR(10), ADD qty INT", &o, &err),
                 err);
    ck_assert_ptr_eq(s, before);
    /* a type no promotion joins */
    ck_assert_int_eq(alter(&s, &last, "ALTER TABLE t MODIFY qty VARCHAR(3)", &o, &err),
                     W2L_SCHEMA);
    ck_assert_str_eq(err.msg, "table shop.t: column 'qty': one source has string (MySQL "
                              "varchar(3)), the table merging it long, and neither type holds "
                              "the other");
    w2l_schema_unref(s);
}
END_TEST

START_TEST(alter_forbidden)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(forbidden); i++) {
        int32_t last;
        w2l_schema *s = create(base_sql, NULL, &last);
        w2l_schema *before = s;
        w2l_error err;
        w2l_rc rc = alter(&s, &last, forbidden[i].sql, NULL, &err);
        ck_assert_msg(rc == W2L_SCHEMA, "#%zu %s: %s", i, forbidden[i].sql, w2l_rc_name(rc));
        ck_assert_msg(strcmp(err.msg, forbidden[i].msg) == 0, "#%zu\n got: %s\nwant: %s", i,
                      err.msg, forbidden[i].msg);
        if (!strchr(forbidden[i].sql, ';')) ck_assert_ptr_eq(s, before); /* untouched */
        w2l_schema_unref(s);
    }
}
END_TEST

START_TEST(ids_never_reused)
{
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    w2l_error err;
    /* drop the highest id, then add a column of the same name in a later ALTER */
    ck_assert_ok(alter(&s, &last, "ALTER TABLE t DROP COLUMN note", NULL, &err), err);
    ck_assert_int_eq(w2l_schema_max_field_id(s), 5);
    ck_assert_int_eq(last, 6); /* the table's last-column-id remembers 6 */
    ck_assert_ok(alter(&s, &last, "ALTER TABLE t ADD COLUMN note TEXT", NULL, &err), err);
    long at = w2l_schema_index_of_name(s, "note");
    ck_assert_int_eq(w2l_schema_field(s, (size_t)at)->id, 7);
    ck_assert_ok(alter(&s, &last, "ALTER TABLE t DROP note; ALTER TABLE t ADD note INT; "
                                  "ALTER TABLE t DROP note, ADD note INT", NULL, &err), err);
    at = w2l_schema_index_of_name(s, "note");
    ck_assert_int_eq(w2l_schema_field(s, (size_t)at)->id, 9);
    ck_assert_int_eq(last, 9);
    ck_assert_int_eq(w2l_schema_id(s), 5);
    /* a last_column_id below the schema's largest id is raised to it */
    w2l__ddl_list *l;
    const char *sql = "ALTER TABLE t ADD z INT";
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &err), err);
    w2l__schema_diff *d;
    ck_assert_ok(w2l__schema_apply_alter(s, 1, &l->stmts[0], NULL, &d, &err), err);
    ck_assert_int_eq(d->last_column_id, 10);
    w2l__schema_diff_free(d);
    w2l__ddl_list_free(l);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(diff_lists_changes)
{
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    w2l_error err;
    w2l__ddl_list *l;
    const char *sql = "ALTER TABLE t ADD c INT FIRST, DROP score, CHANGE qty quantity BIGINT, "
                      "MODIFY name VARCHAR(9), DROP PRIMARY KEY";
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &err), err);
    w2l__schema_diff *d;
    ck_assert_ok(w2l__schema_apply_alter(s, last, &l->stmts[0], NULL, &d, &err), err);
    ck_assert_int_eq(d->changed, 1);
    static const struct { w2l__change_kind kind; int32_t id; const char *name; } want[] = {
        {W2L_CHANGE_ADD, 7, "c"},         {W2L_CHANGE_DROP, 5, "score"},
        {W2L_CHANGE_RENAME, 4, "quantity"}, {W2L_CHANGE_WIDEN, 4, "quantity"},
        {W2L_CHANGE_OPTIONAL, 2, "name"}, {W2L_CHANGE_IDENTIFIER, 0, NULL},
    };
    ck_assert_uint_eq(d->nchanges, W2L_ARRAY_LEN(want));
    for (size_t i = 0; i < d->nchanges; i++) {
        ck_assert_int_eq(d->changes[i].kind, want[i].kind);
        ck_assert_int_eq(d->changes[i].id, want[i].id);
        if (want[i].name) ck_assert_str_eq(d->changes[i].name, want[i].name);
    }
    ck_assert_str_eq(d->changes[2].old_name, "qty");
    ck_assert_int_eq(d->changes[3].from.id, W2L_TYPE_INT);
    ck_assert_int_eq(d->changes[3].to.id, W2L_TYPE_LONG);
    w2l__schema_diff_free(d);
    w2l__ddl_list_free(l);

    /* nothing to do: the same schema object, same id */
    sql = "ALTER TABLE t ENGINE=InnoDB";
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &err), err);
    ck_assert_ok(w2l__schema_apply_alter(s, last, &l->stmts[0], NULL, &d, &err), err);
    ck_assert_int_eq(d->changed, 0);
    ck_assert_ptr_eq(d->schema, s);
    ck_assert_uint_eq(d->nchanges, 0);
    w2l__schema_diff_free(d);
    w2l__ddl_list_free(l);

    /* not an ALTER */
    sql = "DROP TABLE t";
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &err), err);
    d = (w2l__schema_diff *)&err;
    ck_assert_int_eq(w2l__schema_apply_alter(s, last, &l->stmts[0], NULL, &d, &err), W2L_MISUSE);
    ck_assert_ptr_null(d);
    w2l__ddl_list_free(l);
    w2l_schema_unref(s);
}
END_TEST

/* A new primary key over existing columns (MySQL makes them NOT NULL and refuses NULLs):
 * its columns become required and the identifier changes, whatever else the ALTER does. */
START_TEST(primary_key_changes)
{
    static const struct {
        const char *create, *alter, *want;
        w2l__change_kind kinds[4];
    } cases[] = {
        /* a keyless table gets its key */
        { "CREATE TABLE shop.k (id BIGINT, a INT, b VARCHAR(10))",
          "ALTER TABLE k ADD PRIMARY KEY (id)",
          "sid=1 last=3 [1 id long!, 2 a int, 3 b string] pk=[1]",
          { W2L_CHANGE_REQUIRED, W2L_CHANGE_IDENTIFIER } },
        /* the key goes: its column stays required (MySQL keeps it NOT NULL) */
        { "CREATE TABLE shop.k (id BIGINT, a INT, PRIMARY KEY (id))",
          "ALTER TABLE k DROP PRIMARY KEY",
          "sid=1 last=2 [1 id long!, 2 a int] pk=[]",
          { W2L_CHANGE_IDENTIFIER } },
        /* another key in one ALTER, in key order */
        { base_sql,
          "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (qty, id)",
          "sid=1 last=6 [1 id long!, 2 name string!, 3 price decimal(10,2), 4 qty int!, "
          "5 score float, 6 note string] pk=[4,1]",
          { W2L_CHANGE_REQUIRED, W2L_CHANGE_IDENTIFIER } },
        /* MODIFY ... NOT NULL as part of it, then the key */
        { "CREATE TABLE shop.k (a INT, b VARCHAR(10), c INT)",
          "ALTER TABLE k MODIFY a INT NOT NULL, MODIFY b VARCHAR(10) NOT NULL, ADD PRIMARY KEY (a,"
          " b)",
          "sid=1 last=3 [1 a int!, 2 b string!, 3 c int] pk=[1,2]",
          { W2L_CHANGE_REQUIRED, W2L_CHANGE_REQUIRED, W2L_CHANGE_IDENTIFIER } },
        /* a column made the key by its definition */
        { "CREATE TABLE shop.k (a INT, b INT)",
          "ALTER TABLE k MODIFY b INT NOT NULL PRIMARY KEY",
          "sid=1 last=2 [1 a int, 2 b int!] pk=[2]",
          { W2L_CHANGE_REQUIRED, W2L_CHANGE_IDENTIFIER } },
    };
    for (size_t c = 0; c < W2L_ARRAY_LEN(cases); c++) {
        int32_t last;
        w2l_schema *s = create(cases[c].create, NULL, &last);
        w2l__ddl_list *l;
        w2l_error err;
        ck_assert_ok(w2l__ddl_parse(cases[c].alter, strlen(cases[c].alter), NULL, &l, &err), err);
        w2l__schema_diff *d;
        ck_assert_ok(w2l__schema_apply_alter(s, last, &l->stmts[0], NULL, &d, &err), err);
        char got[1024];
        schema_text(d->schema, d->last_column_id, got, sizeof got);
        ck_assert_msg(strcmp(got, cases[c].want) == 0, "%s: %s", cases[c].alter, got);
        size_t nk = 0;
        while (nk < 4 && cases[c].kinds[nk]) nk++;
        ck_assert_msg(d->nchanges == nk, "%s: %zu changes", cases[c].alter, d->nchanges);
        for (size_t i = 0; i < nk; i++) ck_assert_int_eq(d->changes[i].kind, cases[c].kinds[i]);
        w2l__schema_diff_free(d);
        w2l__ddl_list_free(l);
        w2l_schema_unref(s);
    }
    /* an identifier cannot be a float */
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    w2l_error err;
    ck_assert_int_eq(alter(&s, &last, "ALTER TABLE t ADD PRIMARY KEY (score)", NULL, &err),
                     W2L_SCHEMA);
    ck_assert_str_eq(err.msg, "table shop.t: identifier field 'score' (id 5) cannot be float or "
                              "double");
    w2l_schema_unref(s);
}
END_TEST

/* ---- reconcile by name ---- */

START_TEST(reconcile_by_name)
{
    int32_t last;
    w2l_schema *s = create(base_sql, NULL, &last);
    const w2l_type LONG = {W2L_TYPE_LONG, 0, 0}, STR = {W2L_TYPE_STRING, 0, 0},
                   DEC = {W2L_TYPE_DECIMAL, 12, 2}, INT = {W2L_TYPE_INT, 0, 0},
                   DBL = {W2L_TYPE_DOUBLE, 0, 0}, TS = {W2L_TYPE_TIMESTAMP, 0, 0};
    /* score widened, note dropped, qty renamed by case, created added, name nullable */
    const w2l__source_column cols[] = {
        {"id", LONG, 1}, {"name", STR, 0}, {"price", DEC, 0}, {"QTY", INT, 0},
        {"score", DBL, 0}, {"created", TS, 1},
    };
    w2l_error err;
    w2l__schema_diff *d;
    ck_assert_ok(w2l__schema_reconcile(s, last, cols, W2L_ARRAY_LEN(cols), NULL, 0, "shop.t", NULL,
                                       &d, &err), err);
    char got[1024];
    schema_text(d->schema, d->last_column_id, got, sizeof got);
    ck_assert_str_eq(got, "sid=1 last=7 [1 id long!, 2 name string, 3 price decimal(12,2), "
                          "4 QTY int, 5 score double, 7 created timestamp] pk=[1]");
    static const w2l__change_kind want[] = {W2L_CHANGE_OPTIONAL, W2L_CHANGE_WIDEN,
                                            W2L_CHANGE_RENAME, W2L_CHANGE_WIDEN, W2L_CHANGE_ADD,
                                            W2L_CHANGE_DROP};
    ck_assert_uint_eq(d->nchanges, W2L_ARRAY_LEN(want));
    for (size_t i = 0; i < d->nchanges; i++) ck_assert_int_eq(d->changes[i].kind, want[i]);
    ck_assert_int_eq(d->changes[5].id, 6);
    w2l__schema_diff_free(d);

    /* same columns, new order: moves only */
    const w2l__source_column same[] = {{"name", STR, 1}, {"id", LONG, 1},
                                       {"price", {W2L_TYPE_DECIMAL, 10, 2}, 0},
                                       {"qty", INT, 0},  {"score", {W2L_TYPE_FLOAT, 0, 0}, 0},
                                       {"note", STR, 0}};
    const w2l__source_column same2[] = {{"id", LONG, 1}, {"name", STR, 1},
                                        {"price", {W2L_TYPE_DECIMAL, 10, 2}, 0}, {"qty", INT, 0},
                                        {"score", {W2L_TYPE_FLOAT, 0, 0}, 0}, {"note", STR, 0}};
    ck_assert_ok(w2l__schema_reconcile(s, last, same2, 6, NULL, 0, "shop.t", NULL, &d, &err), err);
    ck_assert_int_eq(d->changed, 0);
    ck_assert_ptr_eq(d->schema, s);
    w2l__schema_diff_free(d);
    ck_assert_ok(w2l__schema_reconcile(s, last, same, 6, NULL, 0, "shop.t", NULL, &d, &err), err);
    ck_assert_int_eq(d->changed, 1);
    schema_text(d->schema, d->last_column_id, got, sizeof got);
    ck_assert_str_eq(got, "sid=1 last=6 [2 name string!, 1 id long!, 3 price decimal(10,2), "
                          "4 qty int, 5 score float, 6 note string] pk=[1]");
    ck_assert_uint_eq(d->nchanges, 2);
    ck_assert_int_eq(d->changes[0].kind, W2L_CHANGE_MOVE);
    ck_assert_str_eq(d->changes[0].name, "name");
    ck_assert_int_eq(d->changes[1].kind, W2L_CHANGE_MOVE);
    w2l__schema_diff_free(d);

    /* forbidden: a narrowing, and a new key over an added (optional) column */
    const w2l__source_column bad[] = {{"id", INT, 1}};
    ck_assert_int_eq(w2l__schema_reconcile(s, last, bad, 1, NULL, 0, "shop.t", NULL, &d, &err),
                     W2L_SCHEMA);
    ck_assert_str_eq(err.msg, "table shop.t: column 'id': cannot change type from long to int");
    ck_assert_ptr_null(d);
    const char *pk[] = {"id", "k"};
    const w2l__source_column withk[] = {{"id", LONG, 1}, {"k", INT, 1}};
    ck_assert_int_eq(w2l__schema_reconcile(s, last, withk, 2, pk, 2, "shop.t", NULL, &d, &err),
                     W2L_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "primary key column 'k' is new to the table"));
    /* the key given by the source, over existing required columns */
    const char *pk2[] = {"name"};
    ck_assert_ok(w2l__schema_reconcile(s, last, same2, 6, pk2, 1, "shop.t", NULL, &d, &err), err);
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(d->schema, &nid);
    ck_assert_uint_eq(nid, 1);
    ck_assert_int_eq(ids[0], 2);
    w2l__schema_diff_free(d);
    w2l_schema_unref(s);
}
END_TEST

START_TEST(evolve_survives_every_alloc_failure)
{
    fail_alloc_install();
    const char *alter_sql = "ALTER TABLE t ADD c INT FIRST, DROP note, CHANGE qty q BIGINT, "
                            "DROP PRIMARY KEY, ADD PRIMARY KEY (id, name)";
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        w2l_error err;
        w2l__ddl_list *l = NULL, *l2 = NULL;
        w2l_schema *s = NULL;
        w2l__schema_diff *d = NULL;
        int32_t last = 0;
        fail_alloc_arm(nth);
        w2l_rc rc = w2l__ddl_parse(base_sql, strlen(base_sql), "shop", &l, &err);
        if (rc == W2L_OK) rc = w2l__schema_from_create(&l->stmts[0], NULL, 0, &s, &last, &err);
        if (rc == W2L_OK) rc = w2l__ddl_parse(alter_sql, strlen(alter_sql), "shop", &l2, &err);
        if (rc == W2L_OK) rc = w2l__schema_apply_alter(s, last, &l2->stmts[0], NULL, &d, &err);
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
        if (rc == W2L_OK) {
            ck_assert_int_eq(w2l_schema_field_count(d->schema), 6);
            ck_assert_int_eq(d->last_column_id, 7);
        } else {
            ck_assert_ptr_null(d);
        }
        w2l__schema_diff_free(d);
        w2l_schema_unref(s);
        w2l__ddl_list_free(l);
        w2l__ddl_list_free(l2);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (rc == W2L_OK) break;
        ck_assert_int_lt(nth, 10000);
    }
}
END_TEST

Suite *suite_schema_evolve(void)
{
    Suite *s = suite_create("schema_evolve");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, create_table_schema);
    tcase_add_test(basic, alter_allowed);
    tcase_add_test(basic, ids_never_reused);
    tcase_add_test(basic, diff_lists_changes);
    tcase_add_test(basic, primary_key_changes);
    tcase_add_test(basic, reconcile_by_name);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, create_table_errors);
    tcase_add_test(edge, alter_forbidden);
    tcase_add_test(edge, alter_replayed);
    tcase_add_test(edge, alter_merged);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, evolve_survives_every_alloc_failure);
    suite_add_tcase(s, faults);
    return s;
}
