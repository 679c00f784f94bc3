/*
 * lib/conf: the property table, validation with messages naming the key and the expected
 * form, per-table overrides, JSON config files (all-or-nothing), secrets.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "support/support.h"

static w2l_conf *conf;
static w2l_error err;

static void setup(void) { conf = w2l_conf_new(); ck_assert_ptr_nonnull(conf); }
static void teardown(void) { w2l_conf_free(conf); }

START_TEST(defaults_and_set)
{
    const char *v;
    ck_assert_ok(w2l_conf_get(conf, "checkpoint-interval", &v, &err), err);
    ck_assert_str_eq(v, "10s");
    int64_t ms;
    ck_assert_ok(w2l_conf_get_int(conf, "checkpoint-interval", &ms, &err), err);
    ck_assert_int_eq(ms, 10000);
    ck_assert_int_eq(w2l_conf_is_set(conf, "checkpoint-interval"), 0);
    ck_assert_ok(w2l_conf_set(conf, "checkpoint-interval", "1500ms", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "checkpoint-interval", &ms, &err), err);
    ck_assert_int_eq(ms, 1500);
    ck_assert_int_eq(w2l_conf_is_set(conf, "checkpoint-interval"), 1);
    ck_assert_ok(w2l_conf_set(conf, "checkpoint-interval", NULL, &err), err); /* reset */
    ck_assert_ok(w2l_conf_get_int(conf, "checkpoint-interval", &ms, &err), err);
    ck_assert_int_eq(ms, 10000);
    ck_assert_ok(w2l_conf_get(conf, "warehouse", &v, &err), err);
    ck_assert_ptr_null(v);
}
END_TEST

START_TEST(every_type_parses)
{
    int64_t n;
    ck_assert_ok(w2l_conf_set(conf, "writer.target-file-bytes", "64MiB", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "writer.target-file-bytes", &n, &err), err);
    ck_assert_int_eq(n, 64LL << 20);
    ck_assert_ok(w2l_conf_set(conf, "writer.target-file-bytes", "1g", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "writer.target-file-bytes", &n, &err), err);
    ck_assert_int_eq(n, 1LL << 30);
    ck_assert_ok(w2l_conf_set(conf, "until-caught-up", "yes", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "until-caught-up", &n, &err), err);
    ck_assert_int_eq(n, 1);
    ck_assert_ok(w2l_conf_set(conf, "ddl.policy", "quarantine", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "ddl.policy", &n, &err), err);
    ck_assert_int_eq(n, 2);
    ck_assert_ok(w2l_conf_set(conf, "parallelism", "8", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "parallelism", &n, &err), err);
    ck_assert_int_eq(n, 8);
    ck_assert_ok(w2l_conf_set(conf, "checkpoint-interval", "2m", &err), err);
    ck_assert_ok(w2l_conf_get_int(conf, "checkpoint-interval", &n, &err), err);
    ck_assert_int_eq(n, 120000);
}
END_TEST

START_TEST(unknown_key_is_named)
{
    ck_assert_int_eq(w2l_conf_set(conf, "checkpoint-intervall", "1s", &err), W2L_CONFIG);
    ck_assert_int_eq(err.code, W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown configuration key 'checkpoint-intervall'"), "%s",
                  err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "checkpoint_interval", "1s", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "did you mean 'checkpoint-interval'"), "%s", err.msg);
    const char *v;
    ck_assert_int_eq(w2l_conf_get(conf, "nope", &v, &err), W2L_CONFIG);
}
END_TEST

START_TEST(suggest_names_the_nearest)
{
    const char *flags[] = {"include", "exclude", "warehouse", NULL, "table", "snapshot"};
    size_t n = sizeof flags / sizeof flags[0];
    ck_assert_str_eq(w2l_suggest("incldue", flags, n), "include");  /* a transposition */
    ck_assert_str_eq(w2l_suggest("warehous", flags, n), "warehouse"); /* a letter missing */
    ck_assert_str_eq(w2l_suggest("WAREHOUSE", flags, n), "warehouse"); /* case is free */
    ck_assert_str_eq(w2l_suggest("tabel", flags, n), "table");
    ck_assert_str_eq(w2l_suggest("snapshto", flags, n), "snapshot");
    ck_assert_str_eq(w2l_suggest("excldue", flags, n), "exclude"); /* not include: 3 edits */
    ck_assert_ptr_null(w2l_suggest("xyz", flags, n));            /* nothing near */
    ck_assert_ptr_null(w2l_suggest("tx", flags, n));
    ck_assert_ptr_null(w2l_suggest("", flags, n));
    ck_assert_ptr_null(w2l_suggest(NULL, flags, n));
    ck_assert_ptr_null(w2l_suggest("table", NULL, 0));
    const char *dash[] = {"checkpoint-interval", "checkpoint-retain"};
    ck_assert_str_eq(w2l_suggest("checkpoint_interval", dash, 2), "checkpoint-interval");
    ck_assert_str_eq(w2l_suggest("checkpoint-intervl", dash, 2), "checkpoint-interval");
    ck_assert_str_eq(w2l_suggest("checkpoint-retian", dash, 2), "checkpoint-retain");
    /* a short word takes one edit at most; a long one up to three, never half the word */
    const char *shortw[] = {"sql", "abcdefghijkl"};
    ck_assert_ptr_null(w2l_suggest("sxx", shortw, 2));
    ck_assert_str_eq(w2l_suggest("sq1", shortw, 2), "sql");
    ck_assert_str_eq(w2l_suggest("abxdexghixkl", shortw, 2), "abcdefghijkl");
    ck_assert_ptr_null(w2l_suggest("abxdexghixkx", shortw, 2));
    /* ties go to the first candidate */
    const char *tie[] = {"abcd", "abce"};
    ck_assert_str_eq(w2l_suggest("abcx", tie, 2), "abcd");
}
END_TEST

START_TEST(unknown_per_table_key_is_named)
{
    ck_assert_int_eq(w2l_conf_set(conf, "table.shop.items.ddl.polcy", "quarantine", &err),
                     W2L_CONFIG);
    ck_assert_msg(
        strstr(err.msg, "unknown per-table configuration key 'table.shop.items.ddl.polcy'"), "%s",
        err.msg);
    ck_assert_msg(strstr(err.msg, "did you mean 'table.shop.items.ddl.policy'?"), "%s", err.msg);
    /* nothing near: every per-table key is listed */
    ck_assert_int_eq(w2l_conf_set(conf, "table.shop.items.frobnicate", "1", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "'table.shop.items.frobnicate'"), "%s", err.msg);
    size_t n;
    const w2l_conf_prop *p = w2l_conf_props(&n);
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].flags & W2L_CONF_F_PER_TABLE)) continue;
        /* a key of a family of several is listed as family.{..., rest, ...} */
        const char *dot = strchr(p[i].name, '.');
        ck_assert_msg(strstr(err.msg, p[i].name) || (dot && strstr(err.msg, dot + 1)),
                      "%s lists %s", err.msg, p[i].name);
    }
    ck_assert_int_eq(w2l_conf_is_set(conf, "table.shop.items.frobnicate"), 0);
}
END_TEST

START_TEST(wrong_type_names_expected_form)
{
    ck_assert_int_eq(w2l_conf_set(conf, "checkpoint-interval", "soon", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "'checkpoint-interval'") &&
                      strstr(err.msg, "expected a duration") && strstr(err.msg, "got 'soon'"),
                  "%s", err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "parallelism", "0", &err), W2L_CONFIG); /* below min */
    ck_assert_msg(strstr(err.msg, "from 1 to 1024"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "parallelism", "4x", &err), W2L_CONFIG);
    ck_assert_int_eq(w2l_conf_set(conf, "quiet", "maybe", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "boolean"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "ddl.policy", "explode", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "one of fail|ignore|quarantine"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "writer.target-file-bytes", "12 parsecs", &err),
                     W2L_CONFIG);
    ck_assert_int_eq(w2l_conf_set(conf, "checkpoint-interval", "99999999999999999999", &err),
                     W2L_CONFIG);
    /* a rejected value leaves the old one */
    const char *v;
    ck_assert_ok(w2l_conf_get(conf, "ddl.policy", &v, &err), err);
    ck_assert_str_eq(v, "fail");
}
END_TEST

START_TEST(missing_required_value)
{
    ck_assert_int_eq(w2l_conf_require(conf, "warehouse", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "missing required value: warehouse (--warehouse"), "%s", err.msg);
    ck_assert_ok(w2l_conf_set(conf, "warehouse", "/tmp/lake", &err), err);
    ck_assert_ok(w2l_conf_require(conf, "warehouse", &err), err);
}
END_TEST

START_TEST(per_table_overrides)
{
    ck_assert_ok(w2l_conf_set(conf, "table.shop.orders.ddl.policy", "ignore", &err), err);
    ck_assert_ok(w2l_conf_set(conf, "table.shop.orders.table-parallelism", "4", &err), err);
    const char *v;
    ck_assert_ok(w2l_conf_get_for_table(conf, "shop.orders", "ddl.policy", &v, &err), err);
    ck_assert_str_eq(v, "ignore");
    ck_assert_ok(w2l_conf_get_for_table(conf, "shop.items", "ddl.policy", &v, &err), err);
    ck_assert_str_eq(v, "fail");
    ck_assert_ok(w2l_conf_get_for_table(conf, "shop.orders", "table-parallelism", &v, &err), err);
    ck_assert_str_eq(v, "4");
    /* not a per-table key, bad value, and a missing table part are all rejected */
    ck_assert_int_eq(w2l_conf_set(conf, "table.shop.orders.warehouse", "x", &err), W2L_CONFIG);
    ck_assert_int_eq(w2l_conf_set(conf, "table.shop.orders.ddl.policy", "bad", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "table.shop.orders.ddl.policy"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_set(conf, "table.orders.ddl.policy", "fail", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "table.<db>.<table>"), "%s", err.msg);
    /* a key named table.NAME: global as it is, per table table.DB.T.NAME */
    ck_assert_ok(w2l_conf_set(conf, "table.format-version", "3", &err), err);
    ck_assert_ok(w2l_conf_set(conf, "table.shop.orders.format-version", "2", &err), err);
    ck_assert_int_eq(w2l_conf_set(conf, "table.shop.orders.format-version", "4", &err),
                     W2L_CONFIG);
    ck_assert_ok(w2l_conf_get_for_table(conf, "shop.orders", "table.format-version", &v, &err),
                 err);
    ck_assert_str_eq(v, "2");
    ck_assert_ok(w2l_conf_get_for_table(conf, "shop.items", "table.format-version", &v, &err),
                 err);
    ck_assert_str_eq(v, "3");
}
END_TEST

START_TEST(ext_keys_are_free)
{
    ck_assert_ok(w2l_conf_set(conf, "ext.myhost.token", "abc", &err), err);
    const char *v;
    ck_assert_ok(w2l_conf_get(conf, "ext.myhost.token", &v, &err), err);
    ck_assert_str_eq(v, "abc");
    ck_assert_ok(w2l_conf_get(conf, "ext.absent", &v, &err), err);
    ck_assert_ptr_null(v);
}
END_TEST

static int collect(void *ctx, const char *k, const char *v)
{
    char *out = ctx;
    strcat(out, k);
    strcat(out, "=");
    strcat(out, v);
    strcat(out, ";");
    return 0;
}

START_TEST(json_loads_flattens_and_is_atomic)
{
    const char *j = "{\"warehouse\": \"/lake\", \"checkpoint-interval\": 2500, \"quiet\": true,"
                    " \"parquet\": {\"zstd-level\": 9}, \"table\": {\"shop.orders\": "
                    "{\"ddl.policy\": \"ignore\"}}}";
    ck_assert_ok(w2l_conf_load_json(conf, j, strlen(j), "test.json", &err), err);
    char all[512] = "";
    w2l_conf_foreach(conf, collect, all);
    ck_assert_str_eq(all, "checkpoint-interval=2500;parquet.zstd-level=9;quiet=true;"
                          "table.shop.orders.ddl.policy=ignore;warehouse=/lake;");
    /* one bad key: nothing of the file applies */
    const char *bad = "{\"parallelism\": 4, \"checkpoint-interval\": \"later\"}";
    ck_assert_int_eq(w2l_conf_load_json(conf, bad, strlen(bad), "bad.json", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "bad.json: configuration key 'checkpoint-interval'"), "%s",
                  err.msg);
    ck_assert_int_eq(w2l_conf_is_set(conf, "parallelism"), 0);
    const char *v;
    w2l_conf_get(conf, "checkpoint-interval", &v, &err);
    ck_assert_str_eq(v, "2500");
}
END_TEST

START_TEST(json_errors_are_located)
{
    const char *j = "{\n  \"warehouse\": \"/lake\",\n  \"quiet\": tru\n}";
    ck_assert_int_eq(w2l_conf_load_json(conf, j, strlen(j), "c.json", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "c.json: invalid JSON at line 3"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_load_json(conf, "[1]", 3, "c.json", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "expected a JSON object"), "%s", err.msg);
    const char *arr = "{\"parallelism\": [1]}";
    ck_assert_int_eq(w2l_conf_load_json(conf, arr, strlen(arr), "c.json", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "got array"), "%s", err.msg);
    ck_assert_int_eq(w2l_conf_load_file(conf, "/nonexistent/w2l.json", &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "/nonexistent/w2l.json") && strstr(err.msg, "No such file"), "%s",
                  err.msg);
}
END_TEST

START_TEST(load_file_reads_json)
{
    const char *dir = tmpdir_make("conf");
    char path[600];
    snprintf(path, sizeof path, "%s/w2l.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"parallelism\": \"3\", \"log-level\": \"debug\"}", f);
    fclose(f);
    ck_assert_ok(w2l_conf_load_file(conf, path, &err), err);
    int64_t n;
    ck_assert_ok(w2l_conf_get_int(conf, "parallelism", &n, &err), err);
    ck_assert_int_eq(n, 3);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(secrets_are_masked)
{
    ck_assert_int_eq(w2l_conf_set(conf, "quiet", "hunter2", &err), W2L_CONFIG);
    ck_assert_ok(w2l_conf_set(conf, "source", "mysql://cdc:hunter2@127.0.0.1:3306/", &err), err);
    char all[512] = "";
    w2l_conf_foreach(conf, collect, all);
    ck_assert_str_eq(all, "source=****;");
    ck_assert_ptr_null(strstr(all, "hunter2"));
}
END_TEST

START_TEST(dup_is_deep)
{
    ck_assert_ok(w2l_conf_set(conf, "warehouse", "/a", &err), err);
    w2l_conf *d = w2l_conf_dup(conf);
    ck_assert_ok(w2l_conf_set(conf, "warehouse", "/b", &err), err);
    const char *v;
    w2l_conf_get(d, "warehouse", &v, &err);
    ck_assert_str_eq(v, "/a");
    w2l_conf_free(d);
}
END_TEST

START_TEST(prop_table_is_consistent)
{
    size_t n;
    const w2l_conf_prop *p = w2l_conf_props(&n);
    ck_assert_uint_gt(n, 20);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_nonnull(p[i].doc);
        ck_assert_ptr_eq(w2l_conf_prop_find(p[i].name), &p[i]); /* names unique */
        /* each default is valid for its own property */
        if (p[i].def)
            ck_assert_msg(w2l_conf_set(conf, p[i].name, p[i].def, &err) == W2L_OK, "%s: %s",
                          p[i].name, err.msg);
        ck_assert_int_eq(p[i].type == W2L_CONF_ENUM, p[i].choices != NULL);
    }
    /* the flags of w2l run (w2l-design(7) section 7) are all keys of the same name */
    const char *flags[] = { "source",      "warehouse",       "state",
                            "catalog",     "config",          "checkpoint-interval",
                            "parallelism", "until-caught-up", "quiet" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        const w2l_conf_prop *q = w2l_conf_prop_find(flags[i]);
        ck_assert_ptr_nonnull(q);
        ck_assert(q->flags & W2L_CONF_F_CLI);
    }
}
END_TEST

START_TEST(oom_never_leaks)
{
    fail_alloc_install();
    const char *j =
        "{\"warehouse\": \"/lake\", \"parquet\": {\"zstd-level\": 9}, \"ext.x\": \"y\"}";
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        w2l_conf *c = w2l_conf_new();
        ck_assert_ptr_nonnull(c);
        fail_alloc_arm(nth);
        w2l_rc rc = w2l_conf_load_json(c, j, strlen(j), "oom.json", &err);
        fail_alloc_arm(-1);
        ck_assert(rc == W2L_OK || rc == W2L_NOMEM);
        if (rc != W2L_OK) ck_assert_int_eq(w2l_conf_is_set(c, "warehouse"), 0);
        w2l_conf_free(c);
        ck_assert_int_eq(fail_alloc_outstanding(), before); /* nothing leaked on any path */
        if (rc == W2L_OK) break;
        ck_assert_int_lt(nth, 1000);
    }
}
END_TEST

Suite *suite_conf(void)
{
    Suite *s = suite_create("conf");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, defaults_and_set);
    tcase_add_test(basic, every_type_parses);
    tcase_add_test(basic, per_table_overrides);
    tcase_add_test(basic, ext_keys_are_free);
    tcase_add_test(basic, json_loads_flattens_and_is_atomic);
    tcase_add_test(basic, load_file_reads_json);
    tcase_add_test(basic, dup_is_deep);
    tcase_add_test(basic, prop_table_is_consistent);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, setup, teardown);
    tcase_add_test(edge, unknown_key_is_named);
    tcase_add_test(edge, suggest_names_the_nearest);
    tcase_add_test(edge, unknown_per_table_key_is_named);
    tcase_add_test(edge, wrong_type_names_expected_form);
    tcase_add_test(edge, missing_required_value);
    tcase_add_test(edge, json_errors_are_located);
    tcase_add_test(edge, secrets_are_masked);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, oom_never_leaks);
    suite_add_tcase(s, faults);
    return s;
}
