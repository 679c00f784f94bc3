/*
 * lib/mysql: the MariaDB client every caller shares. URIs offline; against a private
 * MariaDB: errors that name the server and never the password, the session options
 * (utf8mb4, time zone +00:00), escaping and a utf8mb4 round trip, error codes of
 * statements, matched rows, a created database and binary-safe prepared statements.
 * Against the fake server of test/support/binlog_replay.c (no MySQL 8 can be installed
 * here): a MySQL 8 greeting that names caching_sha2_password, for an account of
 * mysql_native_password (logs in) and one of caching_sha2_password (refused, RSA key).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mysql/mysql_client.h"
#include "support/binlog_replay.h"
#include "support/support.h"

static unsigned port;

static void up(void)
{
    test_mariadb_start("mysql_client");
    port = test_mariadb_port();
}
static void down(void) { test_mariadb_stop(); }

/* A connection as w2l/w2lpass to database w2l_client (created when missing). */
static w2l__my *open_conn(unsigned flags, w2l_rc fail_code)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    w2l__my_params p = {.host = "127.0.0.1", .port = port, .user = "w2l", .pass = "w2lpass",
                        .db = "w2l_client", .what = "test", .fail_code = fail_code,
                        .flags = flags | W2L__MY_CREATE_DB};
    w2l__my *c = NULL;
    w2l_error err;
    ck_assert_ok(w2l__my_connect(&p, &c, &err), err);
    return c;
}

/* The first column of the first row of sql, as text. */
static const char *value(w2l__my *c, const char *sql)
{
    static char buf[256];
    int null;
    w2l_error err;
    ck_assert_ok(w2l__my_value(c, sql, buf, sizeof buf, &null, &err), err);
    ck_assert_msg(!null, "%s: NULL", sql);
    return buf;
}

START_TEST(uri_parse)
{
    w2l__my_uri u;
    w2l_error err;
    ck_assert_ok(
        w2l__my_uri_parse("mysql://us%40er:p%2Fa@ss@db.example:3307/my%20db?table=t&x=1", &u, &err),
        err);
    ck_assert_str_eq(u.user, "us@er");
    ck_assert_str_eq(u.pass, "p/a@ss");
    ck_assert_str_eq(u.host, "db.example");
    ck_assert_uint_eq(u.port, 3307);
    ck_assert_str_eq(u.db, "my db");
    ck_assert_str_eq(u.query, "table=t&x=1");
    w2l__my_uri_free(&u);
    ck_assert_ok(w2l__my_uri_parse("//root@[::1]/", &u, &err), err);
    ck_assert_str_eq(u.host, "::1");
    ck_assert_str_eq(u.pass, "");
    ck_assert_str_eq(u.db, "");
    ck_assert_uint_eq(u.port, 3306);
    ck_assert_ptr_null(u.query);
    w2l__my_uri_free(&u);
    static const struct { const char *uri, *says; } bad[] = {
        {"mysql:nonsense", "expected mysql://USER:PASS@HOST:PORT/DB"},
        {"mysql://host/db?u=a@b", "no USER@ part"}, /* an '@' in the query does not count */
        {"mysql://u:secret@host", "no /DB part"},
        {"mysql://u:secret@host:0/db", "bad port '0'"},
        {"mysql://u:secret@host:99999/db", "bad port '99999'"},
        {"mysql://u:secret@[::1/db", "unterminated ["},
        {"mysql://:secret@host/db", "needs a USER and a HOST"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w2l_rc rc = w2l__my_uri_parse(bad[i].uri, &u, &err);
        w2l__my_uri_free(&u);
        ck_assert_msg(rc == W2L_CONFIG && strstr(err.msg, bad[i].says) &&
                          !strstr(err.msg, "secret"),
                      "%s: %s: %s", bad[i].uri, w2l_rc_name(rc), err.msg);
    }
    char *d = w2l__my_uri_decode("a%2bb%zz%4", 10);
    ck_assert_str_eq(d, "a+b%zz%4");
    w2l__free(d);
}
END_TEST

START_TEST(connect_errors_name_the_server_not_the_password)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    char where[64];
    snprintf(where, sizeof where, "w2l@127.0.0.1:%u", port);
    w2l__my_params p = {
        .host = "127.0.0.1", .port = port, .user = "w2l", .pass = "Wr0ngSecret", .what = "test"
    };
    w2l__my *c = NULL;
    w2l_error err;
    /* wrong password: the server's refusal, a runtime failure of the caller's fail_code (here
     * the default W2L_ERROR; the source's is W2L_SOURCE: exit 1, never the usage exit 2) */
    ck_assert_int_eq(w2l__my_connect(&p, &c, &err), W2L_ERROR);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err.msg, "test: connecting to ") && strstr(err.msg, where) &&
                  strstr(err.msg, "Access denied") && strstr(err.msg, "(error 1045)") &&
                  !strstr(err.msg, "Wr0ngSecret"), "%s", err.msg);
    ck_assert_int_eq(err.sys_errno, 1045);
    /* a label replaces user@host:port */
    p.label = "mysql://w2l:****@db";
    p.fail_code = W2L_SOURCE;
    ck_assert_int_eq(w2l__my_connect(&p, &c, &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "connecting to mysql://w2l:****@db: Access denied"), "%s",
                  err.msg);
    /* nothing listens: unavailable and retriable, with the client's errno */
    w2l__my_params q = {
        .host = "127.0.0.1", .port = 1, .user = "w2l", .pass = "w2lpass", .what = "test"
    };
    ck_assert_int_eq(w2l__my_connect(&q, &c, &err), W2L_UNAVAILABLE);
    ck_assert_msg((err.flags & W2L_ERR_RETRIABLE) && err.sys_errno >= 2000 &&
                      strstr(err.msg, "w2l@127.0.0.1:1:") && !strstr(err.msg, "w2lpass"),
                  "%s", err.msg);
    /* an unknown database is not created unless asked */
    q.port = port;
    q.db = "w2l_no_such_db";
    ck_assert_int_eq(w2l__my_connect(&q, &c, &err), W2L_ERROR);
    ck_assert_msg(strstr(err.msg, "use database: ") && strstr(err.msg, "w2l_no_such_db") &&
                      err.sys_errno == 1049,
                  "%s", err.msg);
}
END_TEST

START_TEST(session_is_utf8mb4_and_utc)
{
    w2l__my *c = open_conn(0, 0);
    ck_assert_str_eq(value(c, "SELECT @@session.time_zone"), "+00:00");
    ck_assert_str_eq(value(c, "SELECT @@session.character_set_client"), "utf8mb4");
    ck_assert_str_eq(value(c, "SELECT @@session.character_set_results"), "utf8mb4");
    ck_assert_str_eq(value(c, "SELECT DATABASE()"), "w2l_client");
    /* a TIMESTAMP reads back as the UTC it was written as */
    ck_assert_str_eq(value(c, "SELECT FROM_UNIXTIME(0)"), "1970-01-01 00:00:00");
    w2l__my_close(c);
}
END_TEST

START_TEST(escaping_and_utf8mb4_round_trip)
{
    w2l__my *c = open_conn(0, 0);
    w2l_error err;
    /* quote, backslash, NUL, newline, double quote, a 4-byte character and a 2-byte one */
    static const char text[] = "it's a \\ \0 \n \" \xF0\x9F\x90\xAC \xC3\xA9";
    size_t n = sizeof text - 1;
    char esc[2 * sizeof text + 1];
    size_t m = w2l__my_escape(c, esc, text, n);
    ck_assert_uint_eq(strlen(esc), m); /* no raw NUL left */
    ck_assert_ptr_null(strchr(esc, '\n'));
    ck_assert_ok(w2l__my_exec(c, "CREATE OR REPLACE TABLE esc (id INT PRIMARY KEY, s VARCHAR(40) "
                                 "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)", &err), err);
    w2l_buf sql = {0};
    ck_assert_ok(w2l__buf_printf(&sql, &err, "INSERT INTO esc VALUES (1, "), err);
    ck_assert_ok(w2l__my_append_literal(c, &sql, text, n, &err), err);
    ck_assert_ok(w2l_buf_append(&sql, ")", 1, &err), err);
    ck_assert_ok(w2l__buf_cstr(&sql, &err), err);
    ck_assert_ok(w2l__my_exec(c, (const char *)sql.data, &err), err);
    w2l_buf_release(&sql);
    /* the server holds the exact characters: the dolphin is one of them */
    ck_assert_str_eq(value(c, "SELECT CHAR_LENGTH(s) FROM esc"), "18");
    ck_assert_str_eq(value(c, "SELECT LENGTH(s) FROM esc"), "22");
    w2l__my_res *r;
    ck_assert_ok(w2l__my_query(c, "SELECT s FROM esc WHERE id = 1", 1, &r, &err), err);
    ck_assert_uint_eq(w2l__my_ncols(r), 1);
    char **row;
    unsigned long *lens;
    ck_assert_int_eq(w2l__my_row(r, &row, &lens, &err), 1);
    ck_assert_uint_eq(lens[0], n);
    ck_assert(memcmp(row[0], text, n) == 0);
    ck_assert_int_eq(w2l__my_row(r, &row, &lens, &err), 0);
    w2l__my_res_free(r);
    w2l__my_close(c);
}
END_TEST

START_TEST(statement_errors_and_affected_rows)
{
    w2l__my *c = open_conn(W2L__MY_FOUND_ROWS, W2L_SOURCE);
    w2l_error err;
    ck_assert_ok(w2l__my_exec(c, "CREATE OR REPLACE TABLE kv (k INT PRIMARY KEY, v INT)", &err),
                 err);
    ck_assert_ok(w2l__my_exec(c, "INSERT INTO kv VALUES (1, 10), (2, 20)", &err), err);
    ck_assert_uint_eq(w2l__my_affected(c), 2);
    /* matched rows, not changed rows */
    ck_assert_ok(w2l__my_exec(c, "UPDATE kv SET v = 10 WHERE k = 1", &err), err);
    ck_assert_uint_eq(w2l__my_affected(c), 1);
    ck_assert_int_eq(w2l__my_exec(c, "INSERT INTO kv VALUES (1, 11)", &err), W2L_EXISTS);
    ck_assert_int_eq(err.sys_errno, 1062);
    /* other failures: the caller's code, the statement and the server's message */
    ck_assert_int_eq(w2l__my_exec(c, "SELEKT 1", &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "test w2l@127.0.0.1:") && strstr(err.msg, ": SELEKT 1: ") &&
                      strstr(err.msg, "(error 1064)") && !(err.flags & W2L_ERR_RETRIABLE),
                  "%s", err.msg);
    w2l__my_res *r = NULL;
    ck_assert_int_eq(w2l__my_query(c, "SELECT nosuch FROM kv", 0, &r, &err), W2L_SOURCE);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(w2l__my_query(c, "DO 1", 0, &r, &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "no result"), "%s", err.msg);
    int null;
    char v[8];
    ck_assert_ok(w2l__my_value(c, "SELECT v FROM kv WHERE k = 3", v, sizeof v, &null, &err), err);
    ck_assert_int_eq(null, 1);
    ck_assert_str_eq(v, "");
    w2l__my_close(c);
}
END_TEST

START_TEST(prepared_statements_are_binary_safe)
{
    w2l__my *c = open_conn(0, 0);
    w2l_error err;
    ck_assert_ok(
        w2l__my_exec(c, "CREATE OR REPLACE TABLE bin (id BIGINT UNSIGNED PRIMARY KEY, b LONGBLOB)",
                     &err),
        err);
    w2l__my_stmt *st;
    ck_assert_ok(w2l__my_prepare(c, "INSERT INTO bin VALUES (?, ?)", &st, &err), err);
    static const unsigned char bytes[] = {0x00, 0xff, '\'', '\\', 0xf0, 0x9f, 0x00};
    w2l__my_arg a[2] = {{.is_u64 = 1, .u64 = UINT64_MAX}, {.data = bytes, .len = sizeof bytes}};
    ck_assert_ok(w2l__my_stmt_exec(st, a, 2, &err), err);
    a[0].u64 = 7;
    a[1] = (w2l__my_arg){.data = NULL, .len = 0};
    ck_assert_ok(w2l__my_stmt_exec(st, a, 2, &err), err);
    ck_assert_int_eq(w2l__my_stmt_exec(st, a, 1, &err), W2L_MISUSE);
    a[0].u64 = 7; /* the same key again */
    ck_assert_int_eq(w2l__my_stmt_exec(st, a, 2, &err), W2L_EXISTS);
    w2l__my_stmt_free(st);
    ck_assert_str_eq(value(c, "SELECT HEX(b) FROM bin WHERE id = 18446744073709551615"),
                     "00FF275CF09F00");
    ck_assert_str_eq(value(c, "SELECT LENGTH(b) FROM bin WHERE id = 7"), "0");
    ck_assert_int_eq(w2l__my_prepare(c, "INSERT INTO nosuch VALUES (?)", &st, &err), W2L_ERROR);
    ck_assert_msg(strstr(err.msg, "nosuch") && err.sys_errno == 1146, "%s", err.msg);
    w2l__my_close(c);
}
END_TEST

/* The greeting names the server's default plugin, not the account's: the client starts
 * with mysql_native_password, so the server can switch it to the account's own plugin;
 * only a plugin that needs the RSA exchange is refused (W2L__MY_PIN_RSA_KEY, no TLS). */
START_TEST(caching_sha2_greeting_switches_to_the_accounts_plugin)
{
    fake_my *f = fake_my_start();
    ck_assert_ptr_nonnull(f);
    fake_my_set_mysql(f, 1);
    fake_my_set_auth(f, "caching_sha2_password", "mysql_native_password");
    w2l__my_params p = {.host = "127.0.0.1", .port = fake_my_port(f), .user = "cdc",
                        .pass = "secret", .what = "test", .fail_code = W2L_SOURCE,
                        .flags = W2L__MY_PIN_RSA_KEY};
    w2l__my *c = NULL;
    w2l_error err;
    ck_assert_ok(w2l__my_connect(&p, &c, &err), err);
    w2l__my_close(c);
    char plugin[64];
    int switched;
    fake_my_auth_seen(f, plugin, sizeof plugin, &switched);
    ck_assert_str_eq(plugin, "mysql_native_password");
    ck_assert_int_eq(switched, 1);
    /* an account of caching_sha2_password: refused when the server switches to it */
    fake_my_set_auth(f, "caching_sha2_password", "caching_sha2_password");
    ck_assert_int_eq(w2l__my_connect(&p, &c, &err), W2L_SOURCE);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err.msg, "the server asks for an RSA password plugin") &&
                      strstr(err.msg, "server-public-key=FILE") && !strstr(err.msg, "secret"),
                  "%s", err.msg);
    fake_my_auth_seen(f, plugin, sizeof plugin, &switched);
    ck_assert_int_eq(switched, 1);
    /* with a way to verify the key (here: allowed unverified), the plugin is not refused */
    p.get_server_public_key = 1;
    fake_my_set_auth(f, "mysql_native_password", "mysql_native_password");
    ck_assert_ok(w2l__my_connect(&p, &c, &err), err);
    w2l__my_close(c);
    fake_my_stop(f);
}
END_TEST

Suite *suite_mysql_client(void)
{
    Suite *s = suite_create("mysql_client");
    TCase *offline = tcase_create("offline");
    tcase_add_test(offline, uri_parse);
    tcase_add_test(offline, caching_sha2_greeting_switches_to_the_accounts_plugin);
    suite_add_tcase(s, offline);
    TCase *server = tcase_create("server");
    tcase_add_unchecked_fixture(server, up, down);
    tcase_add_test(server, connect_errors_name_the_server_not_the_password);
    tcase_add_test(server, session_is_utf8mb4_and_utc);
    tcase_add_test(server, escaping_and_utf8mb4_round_trip);
    tcase_add_test(server, statement_errors_and_affected_rows);
    tcase_add_test(server, prepared_statements_are_binary_safe);
    tcase_set_timeout(server, 60);
    suite_add_tcase(s, server);
    return s;
}
