/*
 * lib/ddl/type_map.c: every row of w2l-design(7) section 4, the options, the extra
 * information of a mapping, canal mysqlType strings, and the types without an Iceberg form.
 * Every legal MySQL value has a home: TINYINT(1)/BOOL are int unless the option says
 * boolean, DECIMAL(p > 38) is a string, spatial types are binary (WKB), BIT(n > 1) long.
 */
#include <check.h>
#include <string.h>

#include "common/common.h"
#include "ddl/ddl.h"
#include "support/support.h"

enum { OPT_NONE = 0, OPT_BOOL = 1, OPT_TIME = 2 };

static const struct {
    const char *mysql;
    unsigned opts;
    const char *iceberg; /* w2l_type_format text */
} rows[] = {
    /* TINYINT, SMALLINT, MEDIUMINT, INT, YEAR; unsigned up to MEDIUMINT -> int */
    {"tinyint", 0, "int"},              {"tinyint(4)", 0, "int"},
    {"tinyint(3) unsigned", 0, "int"},  {"smallint(6)", 0, "int"},
    {"smallint unsigned", 0, "int"},    {"mediumint(9)", 0, "int"},
    {"mediumint unsigned", 0, "int"},   {"mediumint(8) unsigned zerofill", 0, "int"},
    {"int", 0, "int"},                  {"int(11)", 0, "int"},
    {"integer", 0, "int"},              {"int signed", 0, "int"},
    {"year", 0, "int"},                 {"year(4)", 0, "int"},
    {"int1", 0, "int"},                 {"middleint", 0, "int"},
    /* BIGINT, INT UNSIGNED -> long */
    {"bigint", 0, "long"},              {"bigint(20)", 0, "long"},
    {"int(10) unsigned", 0, "long"},    {"int unsigned", 0, "long"},
    {"int(10) zerofill", 0, "long"}, /* ZEROFILL implies UNSIGNED */
    {"int8", 0, "long"},
    /* BIGINT UNSIGNED -> decimal(20,0) */
    {"bigint(20) unsigned", 0, "decimal(20,0)"}, {"BIGINT UNSIGNED", 0, "decimal(20,0)"},
    {"serial", 0, "decimal(20,0)"},
    /* DECIMAL(p,s), p <= 38 */
    {"decimal(12,2)", 0, "decimal(12,2)"}, {"decimal(38,10)", 0, "decimal(38,10)"},
    {"decimal", 0, "decimal(10,0)"},       {"decimal(5)", 0, "decimal(5,0)"},
    {"numeric(10,3)", 0, "decimal(10,3)"}, {"dec(4,4)", 0, "decimal(4,4)"},
    {"fixed(9,1)", 0, "decimal(9,1)"},     {"decimal(10,2) unsigned", 0, "decimal(10,2)"},
    /* DECIMAL(p,s), 38 < p <= 65 -> string (the exact text), with or without options */
    {"decimal(65,30)", 0, "string"},       {"decimal(39,0)", 0, "string"},
    {"numeric(50,10) unsigned", OPT_BOOL | OPT_TIME, "string"},
    /* FLOAT / DOUBLE */
    {"float", 0, "float"},             {"float(7,2)", 0, "float"},
    {"float(24)", 0, "float"},         {"float(25)", 0, "double"},
    {"float(53)", 0, "double"},        {"double", 0, "double"},
    {"double(10,2)", 0, "double"},     {"double precision", 0, "double"},
    {"real", 0, "double"},             {"float4", 0, "float"},
    {"float8", 0, "double"},           {"double unsigned", 0, "double"},
    /* BIT(1) -> boolean; TINYINT(1) and its synonyms BOOL, BOOLEAN -> int, boolean by
     * option; BIT(n>1) -> long */
    {"bit(1)", 0, "boolean"},          {"bit", 0, "boolean"},
    {"bool", 0, "int"},                {"boolean", 0, "int"},
    {"bool", OPT_BOOL, "boolean"},     {"boolean", OPT_BOOL, "boolean"},
    {"tinyint(1)", OPT_BOOL, "boolean"}, {"tinyint(1)", 0, "int"},
    {"tinyint(1) unsigned", OPT_BOOL, "int"}, {"tinyint(2)", OPT_BOOL, "int"},
    {"bit(2)", 0, "long"},             {"bit(12)", 0, "long"},
    {"bit(64)", 0, "long"},
    /* dates and times */
    {"date", 0, "date"},               {"datetime", 0, "timestamp"},
    {"datetime(6)", 0, "timestamp"},   {"timestamp", 0, "timestamptz"},
    {"timestamp(3)", 0, "timestamptz"}, {"time", 0, "time"},
    {"time(6)", 0, "time"},            {"time", OPT_TIME, "string"},
    {"time(3)", OPT_TIME, "string"},
    /* CHAR, VARCHAR, TEXT*, ENUM, SET, JSON -> string */
    {"char(3)", 0, "string"},          {"char", 0, "string"},
    {"varchar(80)", 0, "string"},      {"tinytext", 0, "string"},
    {"text", 0, "string"},             {"mediumtext", 0, "string"},
    {"longtext", 0, "string"},         {"enum('a','b')", 0, "string"},
    {"set('x','y','z')", 0, "string"}, {"json", 0, "string"},
    {"national char(2)", 0, "string"}, {"nvarchar(4)", 0, "string"},
    {"character varying(9)", 0, "string"}, {"long varchar", 0, "string"},
    {"varchar(10) character set utf8mb4 collate utf8mb4_bin", 0, "string"},
    {"char(10) binary", 0, "string"},  {"uuid", 0, "string"},
    {"inet6", 0, "string"},            {"inet4", 0, "string"},
    /* BINARY, VARBINARY, BLOB* -> binary */
    {"binary(16)", 0, "binary"},       {"binary", 0, "binary"},
    {"varbinary(10)", 0, "binary"},    {"tinyblob", 0, "binary"},
    {"blob", 0, "binary"},             {"mediumblob", 0, "binary"},
    {"vector(3)", 0, "binary"},        {"vector", 0, "binary"},
    {"longblob", 0, "binary"},         {"long varbinary", 0, "binary"},
    {"varchar(10) character set binary", 0, "binary"}, {"text charset binary", 0, "binary"},
    /* spatial types -> binary (WKB) */
    {"geometry", 0, "binary"},         {"point", 0, "binary"},
    {"LINESTRING", 0, "binary"},       {"polygon", 0, "binary"},
    {"multipoint", 0, "binary"},       {"multilinestring", 0, "binary"},
    {"multipolygon", 0, "binary"},     {"geometrycollection", 0, "binary"},
    {"geomcollection", 0, "binary"},
};

START_TEST(every_design_row_maps)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(rows); i++) {
        w2l__type_opts o = {(rows[i].opts & OPT_BOOL) != 0, (rows[i].opts & OPT_TIME) != 0};
        w2l_error err;
        w2l_type t;
        w2l_rc rc = w2l__mysql_type_map_text(rows[i].mysql, strlen(rows[i].mysql), &o, "c", NULL,
                                             &t, NULL, &err);
        ck_assert_msg(rc == W2L_OK, "%s: %s", rows[i].mysql, err.msg);
        char buf[32];
        ck_assert_msg(strcmp(w2l_type_format(t, buf, sizeof buf), rows[i].iceberg) == 0,
                      "%s -> %s, want %s", rows[i].mysql, buf, rows[i].iceberg);
    }
}
END_TEST

START_TEST(unmappable_types_fail)
{
    static const struct { const char *mysql; w2l_rc rc; const char *msg;
    } cases[] = {
        { "decimal(66,2)", W2L_SCHEMA, "column 'amount': invalid MySQL type decimal(66,2)" },
        { "decimal(5,6)", W2L_SCHEMA, "column 'amount': invalid MySQL type decimal(5,6)" },
        { "decimal(31,31)", W2L_SCHEMA, "column 'amount': invalid MySQL type decimal(31,31)" },
        { "frobnicator(3)", W2L_SCHEMA, "column 'amount': unknown MySQL type 'frobnicator'" },
        { "bit(65)", W2L_SCHEMA, "column 'amount': bit(65): BIT needs 1 to 64 bits" },
        { "datetime(7)", W2L_SCHEMA,
          "column 'amount': invalid MySQL type datetime(7): at most 6 "
          "fractional digits" },
        { "float(54)", W2L_SCHEMA, "column 'amount': invalid MySQL type float(54)" },
        { "varchar(10", W2L_CORRUPT, "DDL: expected ')' at line 1 column 11: near ''" },
        { "int(10) unsigned extra", W2L_CORRUPT,
          "DDL: unexpected text after the type at line 1 column 18: near 'extra'" },
        { "", W2L_CORRUPT, "DDL: expected a data type at line 1 column 1: near ''" },
        { "enum", W2L_CORRUPT,
          "DDL: expected '(' and the ENUM/SET values at line 1 column 5: near "
          "''" },
        { "'int'", W2L_CORRUPT, "DDL: expected a data type at line 1 column 1: near '<string>'" },
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_error err;
        w2l_type t = {0, 0, 0};
        w2l_rc rc = w2l__mysql_type_map_text(cases[i].mysql, strlen(cases[i].mysql), NULL,
                                             "amount", NULL, &t, NULL, &err);
        ck_assert_msg(rc == cases[i].rc, "%s: %s", cases[i].mysql, w2l_rc_name(rc));
        ck_assert_msg(strcmp(err.msg, cases[i].msg) == 0, "#%zu\n got: %s\nwant: %s", i, err.msg,
                      cases[i].msg);
        ck_assert_int_eq(t.id, 0); /* untouched */
    }
    /* without a column name, just the type */
    w2l_error err;
    w2l_type t;
    ck_assert_int_eq(w2l__mysql_type_map_text("frobnicator", 11, NULL, NULL, NULL, &t, NULL, &err),
                     W2L_SCHEMA);
    ck_assert_str_eq(err.msg, "unknown MySQL type 'frobnicator'");
}
END_TEST

START_TEST(extra_information)
{
    w2l__arena a;
    w2l__arena_init(&a, 1024);
    w2l_error err;
    w2l_type t;
    w2l__mysql_type info;
    ck_assert_ok(
        w2l__mysql_type_map_text("bigint(20) unsigned", 19, NULL, NULL, NULL, &t, &info, &err),
        err);
    ck_assert_int_eq(info.is_unsigned, 1);
    ck_assert_int_eq(info.int_bytes, 8);
    ck_assert_int_eq(info.len, 20);
    ck_assert_str_eq(info.name, "bigint");
    ck_assert_ok(w2l__mysql_type_map_text("binary(16)", 10, NULL, NULL, NULL, &t, &info, &err),
                 err);
    ck_assert_int_eq(info.binary_pad, 16);
    ck_assert_int_eq(info.max_length, 16);
    ck_assert_ok(w2l__mysql_type_map_text("varbinary(10)", 13, NULL, NULL, NULL, &t, &info, &err),
                 err);
    ck_assert_int_eq(info.binary_pad, 0);
    ck_assert_int_eq(info.max_length, 10);
    ck_assert_ok(w2l__mysql_type_map_text("varchar(80)", 11, NULL, NULL, NULL, &t, &info, &err),
                 err);
    ck_assert_int_eq(info.max_length, 80);
    ck_assert_ok(w2l__mysql_type_map_text("char", 4, NULL, NULL, NULL, &t, &info, &err), err);
    ck_assert_int_eq(info.max_length, 1);
    ck_assert_ok(w2l__mysql_type_map_text("longtext", 8, NULL, NULL, NULL, &t, &info, &err), err);
    ck_assert_int_eq(info.max_length, 4294967295LL);
    ck_assert_ok(w2l__mysql_type_map_text("datetime(6)", 11, NULL, NULL, NULL, &t, &info, &err),
                 err);
    ck_assert_int_eq(info.fsp, 6);
    ck_assert_ok(w2l__mysql_type_map_text("bit(12)", 7, NULL, NULL, NULL, &t, &info, &err), err);
    ck_assert_int_eq(info.bits, 12);
    const char *e = "enum('small','medium','it''s')";
    ck_assert_ok(w2l__mysql_type_map_text(e, strlen(e), NULL, NULL, &a, &t, &info, &err), err);
    ck_assert_uint_eq(info.nvalues, 3);
    ck_assert_str_eq(info.values[1], "medium");
    ck_assert_str_eq(info.values[2], "it's");
    ck_assert_int_eq(info.max_length, 6);
    /* without an arena the values are counted, not kept */
    ck_assert_ok(w2l__mysql_type_map_text(e, strlen(e), NULL, NULL, NULL, &t, &info, &err), err);
    ck_assert_uint_eq(info.nvalues, 3);
    ck_assert_ptr_null(info.values);
    const char *s = "set('a','bb','ccc')";
    ck_assert_ok(w2l__mysql_type_map_text(s, strlen(s), NULL, NULL, &a, &t, &info, &err), err);
    ck_assert_int_eq(info.max_length, 8); /* "a,bb,ccc" */
    ck_assert_ok(w2l__mysql_type_map_text("varchar(3) CHARACTER SET utf8mb4", 32, NULL, NULL, NULL,
                                          &t, &info, &err), err);
    ck_assert_str_eq(info.charset, "utf8mb4"); /* a known name survives without an arena */
    w2l__arena_release(&a);
}
END_TEST

START_TEST(canonical_text)
{
    static const struct { const char *in, *out; } cases[] = {
        {"BIGINT(20) UNSIGNED", "bigint(20) unsigned"},
        {"int(10) unsigned zerofill", "int(10) unsigned zerofill"},
        {"INTEGER", "int"},
        {"double precision", "double"},
        {"Decimal(12, 2)", "decimal(12,2)"},
        {"enum('a','it''s','b\\\\c')", "enum('a','it''s','b\\\\c')"},
        {"character varying(5)", "varchar(5)"},
        {"varchar(4) character set binary", "varbinary(4)"},
        {"serial", "bigint unsigned"},
    };
    w2l__arena a;
    w2l__arena_init(&a, 1024);
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_error err;
        w2l__mysql_type t;
        ck_assert_ok(w2l__mysql_type_parse(cases[i].in, strlen(cases[i].in), &a, &t, &err), err);
        char buf[64];
        size_t n = w2l__mysql_type_format(&t, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[i].out);
        ck_assert_uint_eq(n, strlen(cases[i].out));
        char small[4];
        ck_assert_uint_eq(w2l__mysql_type_format(&t, small, sizeof small), n); /* as snprintf */
        ck_assert_uint_eq(strlen(small), 3);
    }
    w2l__arena_release(&a);
    w2l_error err;
    ck_assert_int_eq(w2l__mysql_type_parse(NULL, 0, NULL, &(w2l__mysql_type){0}, &err), W2L_MISUSE);
    ck_assert_int_eq(w2l__mysql_type_map(NULL, NULL, NULL, &(w2l_type){0}, &err), W2L_MISUSE);
}
END_TEST

START_TEST(ddl_columns_map_like_mysqltype)
{
    /* a column type read from DDL and the same type from canal agree */
    const char *sql = "CREATE TABLE t (a BIGINT(20) UNSIGNED NOT NULL, b TINYINT(1), c TIME(3), "
                      "d VARCHAR(10) CHARACTER SET binary, e DECIMAL(65,30),"
                      " f POINT NOT NULL SRID 4326, "
                      "g BOOL, h BIT(64))";
    w2l_error err;
    w2l__ddl_list *l;
    ck_assert_ok(w2l__ddl_parse(sql, strlen(sql), NULL, &l, &err), err);
    const w2l__ddl_column *cols = l->stmts[0].cols;
    w2l__type_opts o = {1, 1};
    for (size_t i = 0; i < l->stmts[0].ncols; i++) {
        w2l_type a = {0, 0, 0}, b = {0, 0, 0};
        ck_assert_ok(w2l__mysql_type_map(&cols[i].type, &o, cols[i].name, &a, &err), err);
        ck_assert_ok(w2l__mysql_type_map_text(cols[i].type_text, strlen(cols[i].type_text), &o,
                                              cols[i].name, NULL, &b, NULL, &err), err);
        ck_assert_int_eq(a.id, b.id);
        ck_assert_int_eq(a.precision, b.precision);
        ck_assert_int_eq(a.scale, b.scale);
    }
    w2l__ddl_list_free(l);
}
END_TEST

Suite *suite_type_map(void)
{
    Suite *s = suite_create("type_map");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, every_design_row_maps);
    tcase_add_test(basic, extra_information);
    tcase_add_test(basic, canonical_text);
    tcase_add_test(basic, ddl_columns_map_like_mysqltype);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, unmappable_types_fail);
    suite_add_tcase(s, edge);
    return s;
}
