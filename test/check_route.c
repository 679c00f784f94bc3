/*
 * lib/pipeline/route.c: route.NAME.* compiled (every configuration error names its key),
 * source tables mapped to targets with groups and $$, the first route by name winning,
 * tables no route matches, the cache, and out-of-memory.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "pipeline/route.h"
#include "support/support.h"

static w2l_conf *conf_of(const char *const *kv)
{
    w2l_conf *c = w2l_conf_new();
    w2l_error err;
    for (size_t i = 0; kv[i]; i += 2) ck_assert_ok(w2l_conf_set(c, kv[i], kv[i + 1], &err), err);
    return c;
}

/* "ns.name route" or "ns.name -" for db.table. */
static void map(w2l__routes *rs, const char *db, const char *table, char *out, size_t size)
{
    const char *ns, *name;
    const w2l__route *r;
    w2l_error err;
    ck_assert_ok(w2l__routes_map(rs, db, table, &ns, &name, &r, &err), err);
    snprintf(out, size, "%s.%s %s", ns, name, r ? r->name : "-");
}

START_TEST(routes_map_tables)
{
    const char *kv[] = {"route.b-users.source", "db[0-9]+\\.(userinfo)([0-9]{3})",
                        "route.b-users.target", "app.$1",
                        "route.b-users.key-with-source", "true",
                        "route.a-orders.source", "(shop|store)_([0-9]+)\\.orders_.*",
                        "route.a-orders.target", "$1.orders_$2_$$",
                        "route.c-all.source", "db1\\..*",
                        "route.c-all.target", "rest.everything",
                        NULL};
    w2l_conf *c = conf_of(kv);
    w2l__routes *rs;
    w2l_error err;
    ck_assert_ok(w2l__routes_new(c, &rs, &err), err);
    ck_assert_ptr_nonnull(rs);
    char got[200];
    map(rs, "db7", "userinfo042", got, sizeof got);
    ck_assert_str_eq(got, "app.userinfo b-users");
    map(rs, "db12", "userinfo000", got, sizeof got);
    ck_assert_str_eq(got, "app.userinfo b-users");
    map(rs, "shop_3", "orders_x", got, sizeof got);
    ck_assert_str_eq(got, "shop.orders_3_$ a-orders");
    /* both match: the first by name wins (a-orders before c-all) */
    map(rs, "db1", "userinfo001", got, sizeof got);
    ck_assert_str_eq(got, "app.userinfo b-users");
    map(rs, "db1", "items", got, sizeof got);
    ck_assert_str_eq(got, "rest.everything c-all");
    /* the whole name must match */
    map(rs, "db7", "userinfo0421", got, sizeof got);
    ck_assert_str_eq(got, "db7.userinfo0421 -");
    map(rs, "xdb7", "userinfo042", got, sizeof got);
    ck_assert_str_eq(got, "xdb7.userinfo042 -");
    /* asked again: from the cache, over many tables */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 500; i++) {
            char t[32], want[64];
            snprintf(t, sizeof t, "userinfo%03d", i);
            map(rs, i % 2 ? "db1" : "zz", t, got, sizeof got);
            snprintf(want, sizeof want, i % 2 ? "app.userinfo b-users" : "zz.%s -", t);
            ck_assert_str_eq(got, want);
        }
    const char *ns, *name;
    const w2l__route *r;
    ck_assert_ok(w2l__routes_map(rs, "db3", "userinfo001", &ns, &name, &r, &err), err);
    ck_assert_int_eq(r->key_with_source, 1);
    w2l__routes_free(rs);
    w2l_conf_free(c);

    /* no route: NULL, and mapping with NULL keeps the names */
    const char *none[] = {"include", "db\\..*", NULL};
    c = conf_of(none);
    ck_assert_ok(w2l__routes_new(c, &rs, &err), err);
    ck_assert_ptr_null(rs);
    map(NULL, "a", "b", got, sizeof got);
    ck_assert_str_eq(got, "a.b -");
    w2l_conf_free(c);
}
END_TEST

START_TEST(route_errors_name_the_key)
{
    static const struct {
        const char *kv[7];
        const char *msg;
    } cases[] = {
        {{"route.r.source", "a\\..*", NULL},
         "route r: route.r.source and route.r.target are both required"},
        {{"route.r.target", "a.b", NULL},
         "route r: route.r.source and route.r.target are both required"},
        {{"route.r.source", "a(", "route.r.target", "a.b", NULL},
         "route.r.source: 'a(' is not a regular expression (POSIX extended, matched against "
         "the whole db.table)"},
        {{"route.r.source", "(a)\\.b", "route.r.target", "x.$2", NULL},
         "route.r.target: 'x.$2' uses $2, and route.r.source has 1 group(s)"},
        {{"route.r.source", "a\\.b", "route.r.target", "x.$x", NULL},
         "route.r.target: 'x.$x': a $ must be followed by a group number 1 to 9 or by $"},
        {{"route.r.source", "a\\.b", "route.r.target", "nodot", NULL},
         "route.r.target: 'nodot' is not DB.TABLE"},
    };
    for (size_t i = 0; i < W2L_ARRAY_LEN(cases); i++) {
        w2l_conf *c = conf_of(cases[i].kv);
        w2l__routes *rs = (w2l__routes *)&rs;
        w2l_error err;
        ck_assert_int_eq(w2l__routes_new(c, &rs, &err), W2L_CONFIG);
        ck_assert_ptr_null(rs);
        ck_assert_str_eq(err.msg, cases[i].msg);
        w2l_conf_free(c);
    }
    /* a key of no property */
    w2l_conf *c = w2l_conf_new();
    w2l_error err;
    ck_assert_int_eq(w2l_conf_set(c, "route.r.sauce", "x", &err), W2L_CONFIG);
    ck_assert_int_eq(w2l_conf_set(c, "route.a.b.source", "x", &err), W2L_CONFIG);
    ck_assert_int_eq(w2l_conf_set(c, "route.r.key-with-source", "maybe", &err), W2L_CONFIG);
    w2l_conf_free(c);
    /* a target that expands to something else than DB.TABLE: named when met */
    const char *kv[] = {"route.r.source", "([a-z.]+)\\.t", "route.r.target", "x.$1", NULL};
    c = conf_of(kv);
    w2l__routes *rs;
    ck_assert_ok(w2l__routes_new(c, &rs, &err), err);
    const char *ns, *name;
    const w2l__route *r;
    ck_assert_int_eq(w2l__routes_map(rs, "a.b", "t", &ns, &name, &r, &err), W2L_CONFIG);
    ck_assert_str_eq(err.msg, "route.r.target: table a.b.t would land in 'x.a.b', which is not "
                              "DB.TABLE");
    w2l__routes_free(rs);
    w2l_conf_free(c);
}
END_TEST

START_TEST(routes_survive_every_alloc_failure)
{
    const char *kv[] = {"route.r.source", "db[0-9]\\.(u)[0-9]+", "route.r.target", "app.$1",
                        "route.s.source", "x\\.y", "route.s.target", "a.b", NULL};
    fail_alloc_install();
    w2l_conf *c = conf_of(kv);
    int ok = 0;
    for (long nth = 0; nth < 2000 && !ok; nth++) {
        long before = fail_alloc_outstanding();
        fail_alloc_arm(nth);
        w2l__routes *rs = NULL;
        w2l_error err;
        w2l_rc rc = w2l__routes_new(c, &rs, &err);
        if (rc == W2L_OK) {
            const char *ns, *name;
            const w2l__route *r;
            rc = w2l__routes_map(rs, "db1", "u7", &ns, &name, &r, &err);
            if (rc == W2L_OK) {
                ck_assert_str_eq(ns, "app");
                ck_assert_str_eq(name, "u");
                ok = 1;
            }
        }
        if (rc != W2L_OK) ck_assert_int_eq(rc, W2L_NOMEM);
        fail_alloc_arm(-1);
        w2l__routes_free(rs);
        ck_assert_int_eq(fail_alloc_outstanding(), before);
    }
    ck_assert(ok);
    w2l_conf_free(c);
}
END_TEST

Suite *suite_route(void)
{
    Suite *s = suite_create("route");
    TCase *tc = tcase_create("route");
    tcase_add_test(tc, routes_map_tables);
    tcase_add_test(tc, route_errors_name_the_key);
    tcase_add_test(tc, routes_survive_every_alloc_failure);
    suite_add_tcase(s, tc);
    return s;
}
