/*
 * lib/state: the store registry and URI resolution, the wrappers' protocol checks, and a
 * contract test every built-in store must pass (put/get/keys/seal/latest/prune).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mysql/mysql_client.h"
#include "support/support.h"

static const char *stores[] = {"mem", "file"};
static w2l_error err;
static char dir[600];

/* "mem", or "file:<fresh temp dir>" */
static const char *store_uri(const char *name)
{
    static char uri[700];
    if (strcmp(name, "file") != 0) return name;
    snprintf(dir, sizeof dir, "%s", tmpdir_make("state"));
    snprintf(uri, sizeof uri, "file:%s", dir);
    return uri;
}

static int collect(void *ctx, const char *key)
{
    strcat(ctx, key);
    strcat(ctx, ";");
    return 0;
}

static void run_contract(const char *uri);

START_TEST(store_contract)
{
    run_contract(store_uri(stores[_i]));
    if (strcmp(stores[_i], "file") == 0) tmpdir_remove(dir);
}
END_TEST

/* The contract every store keeps, on a fresh store at uri. */
static void run_contract(const char *uri)
{
    w2l_state *st;
    ck_assert_ok(w2l_state_open(uri, NULL, &st, &err), err);
    uint64_t ck;
    ck_assert_int_eq(w2l_state_latest(st, &ck, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_state_put(st, 1, "source/position", "{\"pos\":4}", 9, &err), err);
    ck_assert_ok(w2l_state_put(st, 1, "committer/0/shop.orders", "m1", 2, &err), err);
    ck_assert_ok(w2l_state_put(st, 1, "committer/0/shop.items", "m2", 2, &err), err);
    ck_assert_ok(w2l_state_put(st, 1, "committer/0/shop.items", "m3", 2, &err), err); /* replaces */
    ck_assert_ok(w2l_state_put(st, 1, "empty", "", 0, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    w2l_buf b = {0};
    ck_assert_ok(w2l_state_get(st, 1, "committer/0/shop.items", &b, &err), err);
    ck_assert_uint_eq(b.len, 2);
    ck_assert_mem_eq(b.data, "m3", 2);
    b.len = 0;
    ck_assert_ok(w2l_state_get(st, 1, "empty", &b, &err), err);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_int_eq(w2l_state_get(st, 1, "absent", &b, &err), W2L_NOTFOUND);
    ck_assert_int_eq(w2l_state_get(st, 2, "source/position", &b, &err), W2L_NOTFOUND);
    char keys[256] = "";
    ck_assert_ok(w2l_state_keys(st, 1, "committer/", collect, keys, &err), err);
    ck_assert_str_eq(keys, "committer/0/shop.items;committer/0/shop.orders;");
    /* a sealed checkpoint is immutable, and sealing goes forward only */
    ck_assert_int_ne(w2l_state_put(st, 1, "late", "x", 1, &err), W2L_OK);
    ck_assert_int_eq(w2l_state_seal(st, 1, &err), W2L_MISUSE);
    ck_assert_ok(w2l_state_put(st, 2, "source/position", "{\"pos\":9}", 9, &err), err);
    /* checkpoint 2 is not visible as latest until sealed */
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    ck_assert_ok(w2l_state_seal(st, 2, &err), err);
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 2);
    ck_assert_ok(w2l_state_prune(st, 2, &err), err);
    b.len = 0;
    ck_assert_int_eq(w2l_state_get(st, 1, "source/position", &b, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_state_get(st, 2, "source/position", &b, &err), err);
    /* prune never drops the latest sealed checkpoint */
    ck_assert_ok(w2l_state_prune(st, 100, &err), err);
    b.len = 0;
    ck_assert_ok(w2l_state_get(st, 2, "source/position", &b, &err), err);
    ck_assert_mem_eq(b.data, "{\"pos\":9}", 9);
    w2l_buf_release(&b);
    ck_assert_int_eq(w2l_state_put(st, 0, "k", "v", 1, &err), W2L_MISUSE);
    w2l_state_close(st);
}

/* ---- the mysql store, against a private MariaDB ---- */
static unsigned db_port;
static void mysql_up(void)
{
    test_mariadb_start("state");
    db_port = test_mariadb_port();
    if (test_mariadb_problem()[0]) return; /* each test fails with the reason */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mariadb --no-defaults -h127.0.0.1 -P%u -uw2l -pw2lpass "
             "-e 'CREATE DATABASE IF NOT EXISTS w2l_test'", db_port);
    if (system(cmd) != 0) fprintf(stderr, "mysql_up: could not create the test database\n");
}
static void mysql_down(void) { test_mariadb_stop(); }

static const char *mysql_uri(const char *table)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    static char u[200];
    snprintf(u, sizeof u, "mysql://w2l:w2lpass@127.0.0.1:%u/w2l_test?table=%s", db_port, table);
    return u;
}

START_TEST(mysql_store_contract)
{
    run_contract(mysql_uri("contract"));
}
END_TEST

START_TEST(mysql_store_survives_restart)
{
    char u[200];
    snprintf(u, sizeof u, "%s", mysql_uri("restart"));
    w2l_state *st;
    ck_assert_ok(w2l_state_open(u, NULL, &st, &err), err);
    ck_assert_ok(w2l_state_put(st, 1, "source/position", "{\"gtid\":\"0-1-5\"}", 16, &err), err);
    char big[70000];
    memset(big, 'x', sizeof big);
    big[0] = '\0'; /* binary values, NUL included */
    ck_assert_ok(w2l_state_put(st, 1, "committer/0/shop.orders", big, sizeof big, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    ck_assert_ok(w2l_state_put(st, 2, "source/position", "{\"gtid\":\"0-1-9\"}", 16, &err), err);
    w2l_state_close(st); /* checkpoint 2 never sealed */
    ck_assert_ok(w2l_state_open(u, NULL, &st, &err), err);
    uint64_t ck;
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    w2l_buf b = {0};
    ck_assert_ok(w2l_state_get(st, 1, "committer/0/shop.orders", &b, &err), err);
    ck_assert_uint_eq(b.len, sizeof big);
    ck_assert_mem_eq(b.data, big, sizeof big);
    w2l_buf_release(&b);
    ck_assert_int_eq(w2l_state_get(st, 2, "source/position", &b, &err), W2L_NOTFOUND);
    w2l_state_close(st);
}
END_TEST

START_TEST(mysql_store_errors_hide_the_password)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    w2l_state *st;
    char u[200];
    snprintf(u, sizeof u, "mysql://w2l:wrongsecret@127.0.0.1:%u/w2l_test", db_port);
    /* the server's refusal is the store's runtime failure (W2L_IO), not bad usage */
    ck_assert_int_eq(w2l_state_open(u, NULL, &st, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "Access denied") && !strstr(err.msg, "wrongsecret") &&
                      strstr(err.msg, "****"),
                  "%s", err.msg);
    snprintf(u, sizeof u, "mysql://w2l:wrongsecret@127.0.0.1:1/w2l_test"); /* nobody listens */
    ck_assert_int_eq(w2l_state_open(u, NULL, &st, &err), W2L_UNAVAILABLE);
    ck_assert_msg(!strstr(err.msg, "wrongsecret"), "%s", err.msg);
    ck_assert_int_eq(w2l_state_open("mysql:nonsense", NULL, &st, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "mysql://USER:PASS@HOST:PORT/DB"), "%s", err.msg);
}
END_TEST

static w2l_state *reopen(const char *uri, w2l_conf *conf)
{
    w2l_state *st;
    ck_assert_ok(w2l_state_open(uri, conf, &st, &err), err);
    return st;
}

START_TEST(file_store_survives_restart_and_drops_unsealed)
{
    const char *uri = store_uri("file");
    char u[700];
    snprintf(u, sizeof u, "%s", uri);
    w2l_state *st = reopen(u, NULL);
    ck_assert_ok(w2l_state_put(st, 1, "source/position", "{\"offset\":10}", 13, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    ck_assert_ok(w2l_state_put(st, 2, "source/position", "{\"offset\":20}", 13, &err), err);
    ck_assert_ok(w2l_state_seal(st, 2, &err), err);
    ck_assert_ok(w2l_state_put(st, 3, "source/position", "{\"offset\":30}", 13, &err), err);
    w2l_state_close(st); /* "crash": checkpoint 3 never sealed */
    /* an orphan of a seal that crashed before LATEST moved */
    char orphan[800];
    snprintf(orphan, sizeof orphan, "%s/ckpt-%020d.state", dir, 3);
    FILE *f = fopen(orphan, "w");
    fputs("partial", f);
    fclose(f);
    st = reopen(u, NULL);
    uint64_t ck;
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 2);
    w2l_buf b = {0};
    ck_assert_ok(w2l_state_get(st, 2, "source/position", &b, &err), err);
    ck_assert_mem_eq(b.data, "{\"offset\":20}", 13);
    b.len = 0;
    ck_assert_ok(w2l_state_get(st, 1, "source/position", &b, &err),
                 err); /* older sealed: from its file */
    ck_assert_mem_eq(b.data, "{\"offset\":10}", 13);
    ck_assert_int_eq(w2l_state_get(st, 3, "source/position", &b, &err), W2L_NOTFOUND);
    ck_assert_int_eq(access(orphan, F_OK), 0); /* a reader's open never removes a file */
    /* an orphan above the one sealed next goes at the first seal */
    char orphan5[800];
    snprintf(orphan5, sizeof orphan5, "%s/ckpt-%020d.state", dir, 5);
    f = fopen(orphan5, "w");
    fputs("partial", f);
    fclose(f);
    /* checkpoint 3 again, sealed this time */
    ck_assert_ok(w2l_state_put(st, 3, "x", "y", 1, &err), err);
    ck_assert_ok(w2l_state_seal(st, 3, &err), err);
    ck_assert_int_eq(access(orphan5, F_OK), -1);
    ck_assert_ok(w2l_state_prune(st, 3, &err), err);
    ck_assert_int_eq(w2l_state_get(st, 1, "source/position", &b, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "pruned"), "%s", err.msg);
    w2l_buf_release(&b);
    w2l_state_close(st);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(file_store_detects_corruption)
{
    const char *uri = store_uri("file");
    char u[700];
    snprintf(u, sizeof u, "%s", uri);
    w2l_state *st = reopen(u, NULL);
    ck_assert_ok(w2l_state_put(st, 1, "k", "some value", 10, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    w2l_state_close(st);
    char path[800];
    snprintf(path, sizeof path, "%s/ckpt-%020d.state", dir, 1);
    FILE *f = fopen(path, "r+b");
    fseek(f, 30, SEEK_SET);
    fputc('X', f); /* one flipped byte */
    fclose(f);
    ck_assert_int_eq(w2l_state_open(u, NULL, &st, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "checksum mismatch") && strstr(err.msg, "ckpt-"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/LATEST", dir);
    f = fopen(path, "w");
    fputs("banana", f);
    fclose(f);
    ck_assert_int_eq(w2l_state_open(u, NULL, &st, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "LATEST") && strstr(err.msg, "banana"), "%s", err.msg);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(file_store_without_location_is_a_config_error)
{
    w2l_state *st;
    ck_assert_int_eq(w2l_state_open("file", NULL, &st, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "warehouse"), "%s", err.msg);
    w2l_conf *c = w2l_conf_new();
    const char *d = tmpdir_make("state-wh");
    snprintf(dir, sizeof dir, "%s", d);
    ck_assert_ok(w2l_conf_set(c, "warehouse", dir, &err), err);
    ck_assert_ok(w2l_state_open(NULL, c, &st, &err),
                 err); /* the default store, inside the warehouse */
    ck_assert_ok(w2l_state_put(st, 1, "k", "v", 1, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    w2l_state_close(st);
    char latest[800];
    snprintf(latest, sizeof latest, "%s/_w2l/state/LATEST", dir);
    ck_assert_int_eq(access(latest, F_OK), 0);
    w2l_conf_free(c);
    tmpdir_remove(dir);
}
END_TEST

/* Fail the nth write or close of a seal, for every n a seal makes: the seal fails cleanly,
 * the store still says the previous checkpoint, and after a restart it still does. */
START_TEST(file_store_seal_survives_every_io_fault)
{
    fault_fileio_register();
    const char *uri = store_uri("file");
    char u[700];
    snprintf(u, sizeof u, "%s", uri);
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    w2l_state *st = reopen(u, c);
    ck_assert_ok(w2l_state_put(st, 1, "k", "one", 3, &err), err);
    ck_assert_ok(w2l_state_seal(st, 1, &err), err);
    w2l_state_close(st);
    long n;
    for (n = 0; n < 16; n++) {
        st = reopen(u, c);
        ck_assert_ok(w2l_state_put(st, 2, "k", "two", 3, &err), err);
        /* arm the fault IO inside the store: it is the only file IO the store opened */
        fault_fileio_arm(fault_fileio_last(), FAULT_WRITE | FAULT_CLOSE, n, 0);
        w2l_rc rc = w2l_state_seal(st, 2, &err);
        long calls = fault_fileio_calls(fault_fileio_last());
        w2l_state_close(st);
        st = reopen(u, NULL);
        uint64_t ck;
        ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
        w2l_buf b = {0};
        if (rc == W2L_OK) {
            ck_assert_uint_eq(ck, 2);
            ck_assert_ok(w2l_state_get(st, 2, "k", &b, &err), err);
            ck_assert_mem_eq(b.data, "two", 3);
            w2l_buf_release(&b);
            w2l_state_close(st);
            ck_assert_int_le(calls, n); /* the fault was armed past the last call */
            break;
        }
        ck_assert_int_eq(rc, W2L_IO);
        ck_assert_uint_eq(ck, 1);
        ck_assert_ok(w2l_state_get(st, 1, "k", &b, &err), err);
        ck_assert_mem_eq(b.data, "one", 3);
        w2l_buf_release(&b);
        w2l_state_close(st);
    }
    ck_assert_int_gt(n, 1); /* at least the data file and LATEST were each failed once */
    ck_assert_int_lt(n, 16);
    w2l_conf_free(c);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(uri_resolution_errors)
{
    w2l_state *st;
    ck_assert_int_eq(w2l_state_open("nosuch:/x", NULL, &st, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown store 'nosuch'") && strstr(err.msg, "mem"), "%s",
                  err.msg);
    ck_assert_ptr_null(st);
    ck_assert_ok(w2l_state_open("mem:ignored", NULL, &st, &err), err);
    w2l_state_close(st);
    w2l_state_close(NULL);
}
END_TEST

/* A host's own store, plugged in through the method table: a one-slot store that records
 * the calls the core makes, to prove the registry and wrappers route to it. */
typedef struct my_state {
    w2l_state base;
    uint64_t sealed;
    int puts;
    char last_uri[64];
} my_state;

static w2l_rc my_open(const w2l_state_methods *m, const w2l_conf *c, const char *uri,
                      w2l_state *self, w2l_error *e)
{
    (void)m, (void)c, (void)e;
    snprintf(((my_state *)self)->last_uri, 64, "%s", uri ? uri : "");
    return W2L_OK;
}
static w2l_rc my_put(w2l_state *s, uint64_t ck, const char *k, const void *v, size_t n,
                     w2l_error *e)
{
    (void)ck, (void)k, (void)v, (void)n, (void)e;
    ((my_state *)s)->puts++;
    return W2L_OK;
}
static w2l_rc my_get(w2l_state *s, uint64_t ck, const char *k, w2l_buf *o, w2l_error *e)
{
    (void)s, (void)ck, (void)k, (void)o;
    return w2l_error_set(e, W2L_NOTFOUND, "nothing");
}
static w2l_rc my_keys(w2l_state *s, uint64_t ck, const char *p, int (*fn)(void *, const char *),
                      void *ctx, w2l_error *e)
{
    (void)s, (void)ck, (void)p, (void)e;
    fn(ctx, "only");
    return W2L_OK;
}
static w2l_rc my_seal(w2l_state *s, uint64_t ck, w2l_error *e)
{
    (void)e;
    ((my_state *)s)->sealed = ck;
    return W2L_OK;
}
static w2l_rc my_latest(w2l_state *s, uint64_t *ck, w2l_error *e)
{
    *ck = ((my_state *)s)->sealed;
    return *ck ? W2L_OK : w2l_error_set(e, W2L_NOTFOUND, "none");
}
static w2l_rc my_prune(w2l_state *s, uint64_t k, w2l_error *e)
{
    (void)s, (void)k, (void)e;
    return W2L_OK;
}
static void my_close(w2l_state *s) { (void)s; }

static const w2l_state_methods my_methods = {W2L_STATE_METHODS_V1, "mine", sizeof(my_state), NULL,
                                             my_open, my_put, my_get, my_keys, my_seal, my_latest,
                                             my_prune, my_close, NULL, NULL, NULL};

START_TEST(host_store_plugs_in)
{
    ck_assert_ok(w2l_state_register(&my_methods, 0), err);
    ck_assert_ptr_eq(w2l_state_find("mine"), &my_methods);
    w2l_state *st;
    ck_assert_ok(w2l_state_open("mine:tenant-7", NULL, &st, &err), err);
    ck_assert_str_eq(((my_state *)st)->last_uri, "tenant-7");
    ck_assert_ok(w2l_state_put(st, 3, "k", "v", 1, &err), err);
    ck_assert_ok(w2l_state_seal(st, 3, &err), err);
    uint64_t ck;
    ck_assert_ok(w2l_state_latest(st, &ck, &err), err);
    ck_assert_uint_eq(ck, 3);
    ck_assert_int_eq(w2l_state_seal(st, 2, &err), W2L_MISUSE); /* the wrapper enforces order */
    ck_assert_int_eq(((my_state *)st)->puts, 1);
    w2l_state_close(st);
    w2l_state_methods broken = my_methods;
    broken.name = "broken";
    broken.seal = NULL;
    ck_assert_int_eq(w2l_state_register(&broken, 0), W2L_MISUSE);
    broken = my_methods;
    broken.version = 0;
    ck_assert_int_eq(w2l_state_register(&broken, 0), W2L_MISUSE);
}
END_TEST

START_TEST(mem_store_oom_is_clean)
{
    fail_alloc_install();
    w2l_state *st;
    ck_assert_ok(w2l_state_open("mem", NULL, &st, &err), err);
    for (long nth = 0; nth < 10; nth++) {
        fail_alloc_arm(nth);
        w2l_rc rc = w2l_state_put(st, 1, "key", "value", 5, &err);
        fail_alloc_arm(-1);
        ck_assert(rc == W2L_OK || rc == W2L_NOMEM);
    }
    w2l_buf b = {0};
    ck_assert_ok(w2l_state_get(st, 1, "key", &b, &err), err);
    ck_assert_mem_eq(b.data, "value", 5);
    w2l_buf_release(&b);
    w2l_state_close(st);
}
END_TEST

/* ------------------------------------------------------------- one job per store ---- */

static w2l_state_holder holder_of(w2l_state *st)
{
    w2l_state_holder h;
    ck_assert_ok(w2l_state_holder_get(st, &h, &err), err);
    return h;
}

START_TEST(file_store_lock_refuses_a_second_job)
{
    char u[700];
    snprintf(u, sizeof u, "%s", store_uri("file"));
    w2l_state *a = reopen(u, NULL), *b = reopen(u, NULL);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    w2l_state_holder h = holder_of(b); /* read beside the holder, taking nothing */
    ck_assert_str_eq(h.job, "job-a");
    ck_assert_int_eq(h.pid, (long long)getpid());
    ck_assert_uint_eq(h.epoch, 1);
    ck_assert_int_eq(h.expires_ms, 0);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    ck_assert_str_eq(h.host, host);
    /* the second is refused, told who holds the store and where */
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %lld on host %s", (long long)getpid(), host);
    ck_assert_msg(strstr(err.msg, "job \"job-a\"") && strstr(err.msg, pid) &&
                      strstr(err.msg, dir) && strstr(err.msg, "running since") &&
                      strstr(err.msg, "stop that job first"),
                  "%s", err.msg);
    ck_assert_int_eq(w2l_state_lock(a, "job-a", &err), W2L_MISUSE);
    /* the holder seals while b waits: b, once it has the store, sees that checkpoint */
    ck_assert_ok(w2l_state_put(a, 1, "k", "one", 3, &err), err);
    ck_assert_ok(w2l_state_seal(a, 1, &err), err);
    w2l_state_close(a);
    ck_assert_int_eq(w2l_state_holder_get(b, &h, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_state_lock(b, "job-b", &err), err);
    uint64_t ck = 0;
    ck_assert_ok(w2l_state_latest(b, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    h = holder_of(b);
    ck_assert_str_eq(h.job, "job-b");
    ck_assert_uint_eq(h.epoch, 2);
    ck_assert_ok(w2l_state_put(b, 2, "k", "two", 3, &err), err);
    ck_assert_ok(w2l_state_seal(b, 2, &err), err);
    w2l_state_close(b);
}
END_TEST

/* Writes a lease record by hand, as another process would have left it. */
static void write_lease(const char *host, long long pid, int64_t expires_ms, unsigned epoch)
{
    char path[700], rec[600];
    snprintf(path, sizeof path, "%s/LEASE", dir);
    snprintf(rec, sizeof rec,
             "{\"job\":\"other\",\"host\":\"%s\",\"pid\":%lld,\"since-ms\":1000,"
             "\"expires-ms\":%lld,\"version\":\"0.1.0\",\"epoch\":%u}",
             host, pid, (long long)expires_ms, epoch);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(rec, f);
    fclose(f);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* On a file IO other than local disk the store is held by a lease: a job whose lease
 * lapsed and was taken over is fenced (its seal and prune fail with W2L_BUSY), and the
 * lease of a process of this host that is gone is taken at once. */
START_TEST(file_store_lease_fences_a_job_taken_over)
{
    fault_fileio_register();
    char u[700];
    snprintf(u, sizeof u, "%s", store_uri("file"));
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "ha.lease-timeout", "5m", &err), err);
    w2l_state *a = reopen(u, c), *b = reopen(u, c);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    w2l_state_holder h = holder_of(b);
    ck_assert_uint_eq(h.epoch, 1);
    ck_assert_msg(h.expires_ms > wall_ms() + 4 * 60000, "%lld", (long long)h.expires_ms);
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "job \"job-a\"") && strstr(err.msg, "LEASE") == NULL &&
                      strstr(err.msg, dir),
                  "%s", err.msg);
    /* a's lease lapses (a stalled): b takes the store */
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    write_lease(host, (long long)getpid(), wall_ms() - 1, 1);
    ck_assert_int_eq(w2l_state_holder_get(b, &h, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_state_lock(b, "job-b", &err), err);
    ck_assert_uint_eq(holder_of(b).epoch, 2);
    /* a wakes up: fenced at its next seal and prune, and its close leaves b's lease */
    ck_assert_ok(w2l_state_put(a, 1, "k", "a", 1, &err), err);
    ck_assert_int_eq(w2l_state_seal(a, 1, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "job \"job-b\"") &&
                      strstr(err.msg, "epoch 2"),
                  "%s", err.msg);
    ck_assert_int_eq(w2l_state_prune(a, 1, &err), W2L_BUSY);
    w2l_state_close(a);
    ck_assert_ok(w2l_state_put(b, 1, "k", "b", 1, &err), err);
    ck_assert_ok(w2l_state_seal(b, 1, &err), err);
    ck_assert_str_eq(holder_of(b).job, "job-b");
    w2l_state_close(b); /* ends its lease */
    w2l_state *r = reopen(u, c);
    ck_assert_int_eq(w2l_state_holder_get(r, &h, &err), W2L_NOTFOUND);
    w2l_buf v = {0};
    ck_assert_ok(w2l_state_get(r, 1, "k", &v, &err), err);
    ck_assert_mem_eq(v.data, "b", 1);
    w2l_buf_release(&v);
    /* a lease left by a process of this host that is gone: taken though not expired */
    pid_t child = fork();
    if (child == 0) _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    write_lease(host, (long long)child, wall_ms() + 3600000, 7);
    ck_assert_ok(w2l_state_lock(r, "job-c", &err), err);
    ck_assert_uint_eq(holder_of(r).epoch, 8);
    /* one of another host is not: it may be alive */
    w2l_state_close(r);
    write_lease("another-host", 1, wall_ms() + 3600000, 9);
    r = reopen(u, c);
    ck_assert_int_eq(w2l_state_lock(r, "job-d", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "another-host"), "%s", err.msg);
    w2l_state_close(r);
    w2l_conf_free(c);
}
END_TEST

/* The holder renews its lease (w2l_state_renew): the end moves on; once another's epoch
 * is there, or the lease is gone, or it cannot be read, the renewal fails and names why. A
 * lock file needs no renewal. */
START_TEST(file_store_renew_extends_and_fences)
{
    fault_fileio_register();
    char u[700];
    snprintf(u, sizeof u, "%s", store_uri("file"));
    w2l_state *l = reopen(u, NULL);
    int64_t end = -1;
    ck_assert_ok(w2l_state_renew(l, &end, &err), err); /* not locked: nothing to renew */
    ck_assert_int_eq(end, 0);
    ck_assert_ok(w2l_state_lock(l, "job-l", &err), err);
    ck_assert_ok(w2l_state_renew(l, &end, &err), err);
    ck_assert_int_eq(end, 0); /* a lock file: held until the process ends */
    w2l_state_close(l);
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "ha.lease-timeout", "5m", &err), err);
    w2l_state *a = reopen(u, c), *r = reopen(u, c);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    int64_t first = holder_of(r).expires_ms, t0 = wall_ms();
    while (wall_ms() < t0 + 2) { /* the clock moves on by a millisecond or two */
    }
    ck_assert_ok(w2l_state_renew(a, &end, &err), err);
    ck_assert_msg(end > first && end >= wall_ms() + 4 * 60000, "%lld %lld", (long long)end,
                  (long long)first);
    ck_assert_int_eq(holder_of(r).expires_ms, end); /* written, not only remembered */
    ck_assert_uint_eq(holder_of(r).epoch, 1);
    /* the lease cannot be read: not renewed, and not OK (the job cannot know it holds it) */
    fault_fileio_arm_where("LEASE", FAULT_READ, 0, 1);
    w2l_rc rc = w2l_state_renew(a, &end, &err);
    fault_fileio_disarm_all();
    ck_assert_int_ne(rc, W2L_OK);
    ck_assert_int_ne(rc, W2L_BUSY);
    ck_assert_ok(w2l_state_renew(a, &end, &err), err); /* and again once it can */
    /* another host's process took it over at a higher epoch: fenced, naming it */
    write_lease("host-b", 4242, wall_ms() + 60000, 5);
    ck_assert_int_eq(w2l_state_renew(a, &end, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "host-b") &&
                      strstr(err.msg, "pid 4242") && strstr(err.msg, "epoch 5"),
                  "%s", err.msg);
    ck_assert_int_eq(end, 0);
    ck_assert_uint_eq(holder_of(r).epoch, 5); /* the new holder's lease is left alone */
    ck_assert_int_eq(w2l_state_put(a, 1, "k", "a", 1, &err), W2L_OK);
    ck_assert_int_eq(w2l_state_seal(a, 1, &err), W2L_BUSY);
    /* the lease removed under the holder: fenced too */
    w2l_state_close(a);
    w2l_state_close(r);
    char path[700];
    snprintf(path, sizeof path, "%s/LEASE", dir);
    unlink(path);
    a = reopen(u, c);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    ck_assert_uint_eq(holder_of(a).epoch, 1);
    unlink(path);
    ck_assert_int_eq(w2l_state_renew(a, &end, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "removed"), "%s", err.msg);
    w2l_state_close(a);
    w2l_conf_free(c);
}
END_TEST

/* A writer racing the lease's conditional write (fault_fileio_before_put_if): once, it
 * replaces the record (by rename, as the file IO does) with one of race_host's. */
static char race_host[64];
static unsigned race_epoch;
static void race_once(void *ctx, const char *path)
{
    (void)ctx;
    fault_fileio_before_put_if(NULL, NULL);
    char tmp[700], rec[600];
    snprintf(tmp, sizeof tmp, "%s.racer", path);
    snprintf(rec, sizeof rec,
             "{\"job\":\"racer\",\"host\":\"%s\",\"pid\":99,\"since-ms\":1000,"
             "\"expires-ms\":%lld,\"version\":\"0.1.0\",\"epoch\":%u}",
             race_host, (long long)(wall_ms() + 600000), race_epoch);
    FILE *f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(rec, f);
    fclose(f);
    ck_assert_int_eq(rename(tmp, path), 0);
}

/* The lease's writes are compare-and-swap (file IO version 5: If-Match / If-None-Match on
 * S3): a renewal, a taking over and a first taking that another writer raced between the
 * read and the write lose, write nothing, and name the winner. */
START_TEST(file_store_lease_writes_are_conditional)
{
    fault_fileio_register();
    char u[700];
    snprintf(u, sizeof u, "%s", store_uri("file"));
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(c, "ha.lease-timeout", "5m", &err), err);
    /* a first taking raced by another's: busy, the other's record stays */
    w2l_state *a = reopen(u, c), *r = reopen(u, c);
    snprintf(race_host, sizeof race_host, "host-first");
    race_epoch = 1;
    fault_fileio_before_put_if(race_once, NULL);
    ck_assert_int_eq(w2l_state_lock(a, "job-a", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "host-first"), "%s", err.msg);
    ck_assert_str_eq(holder_of(r).host, "host-first");
    /* the lease lapses; a takes it over, raced by another taker: busy again */
    write_lease("host-first", 99, wall_ms() - 1, 1);
    snprintf(race_host, sizeof race_host, "host-taker");
    race_epoch = 2;
    fault_fileio_before_put_if(race_once, NULL);
    ck_assert_int_eq(w2l_state_lock(a, "job-a", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "host-taker"), "%s", err.msg);
    ck_assert_uint_eq(holder_of(r).epoch, 2);
    /* lapsed again: a takes it, then a renewal raced by a taker is fenced */
    write_lease("host-taker", 99, wall_ms() - 1, 2);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    ck_assert_uint_eq(holder_of(r).epoch, 3);
    int64_t end = 0;
    ck_assert_ok(w2l_state_renew(a, &end, &err), err);
    snprintf(race_host, sizeof race_host, "host-renew");
    race_epoch = 4;
    fault_fileio_before_put_if(race_once, NULL);
    ck_assert_int_eq(w2l_state_renew(a, &end, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "host-renew") &&
                      strstr(err.msg, "epoch 4"),
                  "%s", err.msg);
    w2l_state_holder h = holder_of(r);
    ck_assert_str_eq(h.host, "host-renew"); /* not overwritten by the renewal */
    ck_assert_uint_eq(h.epoch, 4);
    ck_assert_int_eq(w2l_state_seal(a, 1, &err), W2L_BUSY);
    fault_fileio_before_put_if(NULL, NULL);
    w2l_state_close(a); /* leaves the other's lease alone */
    ck_assert_str_eq(holder_of(r).host, "host-renew");
    w2l_state_close(r);
    w2l_conf_free(c);
}
END_TEST

/* A holder (a) that passed its lease check in a seal and then stopped; meanwhile its lease
 * lapsed and b took the store over. The pause falls (fault_fileio_before_put_if) before
 * a's checkpoint file (stage 0: b also sealed), before a's LATEST (stage 1: b also sealed)
 * or before a's LATEST with b not sealed yet (stage 2). In each, a's seal fails with
 * W2L_BUSY, fenced, and what b sealed (or seals next) is what a reader gets. */
static w2l_state *race_b;
static w2l_conf *race_conf;
static char race_uri[700];
static int race_skip, race_stage;
static void take_over_once(void *ctx, const char *path)
{
    (void)ctx, (void)path;
    if (race_skip-- > 0) return;
    fault_fileio_before_put_if(NULL, NULL);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    write_lease(host, (long long)getpid(), wall_ms() - 1, 2); /* a's lease lapsed */
    race_b = reopen(race_uri, race_conf);
    ck_assert_ok(w2l_state_lock(race_b, "job-b", &err), err);
    if (race_stage == 2) return;
    ck_assert_ok(w2l_state_put(race_b, 3, "k", "b3", 2, &err), err);
    ck_assert_ok(w2l_state_seal(race_b, 3, &err), err);
}

START_TEST(file_store_seal_of_a_stopped_holder_is_fenced)
{
    fault_fileio_register();
    snprintf(race_uri, sizeof race_uri, "%s", store_uri("file"));
    race_conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(race_conf, "fileio", "fault", &err), err);
    ck_assert_ok(w2l_conf_set(race_conf, "ha.lease-timeout", "5m", &err), err);
    /* a holds the store at epoch 2 (one before it) and has sealed 1 and 2 */
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    write_lease(host, 1, 1, 1); /* an ended lease */
    w2l_state *a = reopen(race_uri, race_conf);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    ck_assert_uint_eq(holder_of(a).epoch, 2);
    for (uint64_t ck = 1; ck <= 2; ck++) {
        ck_assert_ok(w2l_state_put(a, ck, "k", "a", 1, &err), err);
        ck_assert_ok(w2l_state_seal(a, ck, &err), err);
    }
    char latest[700], text[64] = "";
    snprintf(latest, sizeof latest, "%s/LATEST", dir);
    FILE *f = fopen(latest, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    ck_assert_str_eq(text, "2\n"); /* then "epoch 2" */
    /* a seals 3 and stops inside; b takes over */
    race_stage = _i;
    race_skip = _i == 0 ? 0 : 1;
    race_b = NULL;
    fault_fileio_before_put_if(take_over_once, NULL);
    ck_assert_ok(w2l_state_put(a, 3, "k", "a3", 2, &err), err);
    ck_assert_int_eq(w2l_state_seal(a, 3, &err), W2L_BUSY);
    fault_fileio_before_put_if(NULL, NULL);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "job \"job-b\"") &&
                      strstr(err.msg, "epoch 3"),
                  "stage %d: %s", _i, err.msg);
    ck_assert_ptr_nonnull(race_b);
    uint64_t ck = 0;
    ck_assert_ok(w2l_state_latest(a, &ck, &err), err);
    ck_assert_uint_eq(ck, 2); /* a did not count 3 as sealed */
    if (_i == 2) { /* b seals 3 now, over a's orphan file */
        ck_assert_ok(w2l_state_latest(race_b, &ck, &err), err);
        ck_assert_uint_eq(ck, 2);
        ck_assert_ok(w2l_state_put(race_b, 3, "k", "b3", 2, &err), err);
        ck_assert_ok(w2l_state_seal(race_b, 3, &err), err);
    }
    ck_assert_int_eq(w2l_state_prune(a, 3, &err), W2L_BUSY);
    w2l_state_close(a);
    w2l_state *r = reopen(race_uri, race_conf);
    ck_assert_ok(w2l_state_latest(r, &ck, &err), err);
    ck_assert_uint_eq(ck, 3);
    w2l_buf v = {0};
    ck_assert_ok(w2l_state_get(r, 3, "k", &v, &err), err);
    ck_assert_uint_eq(v.len, 2);
    ck_assert_mem_eq(v.data, "b3", 2);
    w2l_buf_release(&v);
    w2l_state_close(r);
    /* b goes on sealing */
    ck_assert_ok(w2l_state_put(race_b, 4, "k", "b4", 2, &err), err);
    ck_assert_ok(w2l_state_seal(race_b, 4, &err), err);
    ck_assert_str_eq(holder_of(race_b).job, "job-b");
    w2l_state_close(race_b);
    w2l_conf_free(race_conf);
}
END_TEST

/* LATEST naming a checkpoint whose file is gone (a second writer of an older version, or
 * a hand) is said in those words, with what to do, and the file is never pruned. */
START_TEST(file_store_missing_checkpoint_is_named)
{
    char u[700];
    snprintf(u, sizeof u, "%s", store_uri("file"));
    w2l_state *st = reopen(u, NULL);
    for (uint64_t ck = 1; ck <= 2; ck++) {
        ck_assert_ok(w2l_state_put(st, ck, "k", "v", 1, &err), err);
        ck_assert_ok(w2l_state_seal(st, ck, &err), err);
    }
    w2l_state_close(st);
    char path[700];
    snprintf(path, sizeof path, "%s/ckpt-%020d.state", dir, 2);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(w2l_state_open(u, NULL, &st, &err), W2L_CORRUPT);
    ck_assert_msg(strstr(err.msg, "LATEST names checkpoint 2") && strstr(err.msg, "missing") &&
                      strstr(err.msg, "second job"),
                  "%s", err.msg);
}
END_TEST

START_TEST(mysql_store_lock_refuses_a_second_job)
{
    char u[200];
    snprintf(u, sizeof u, "%s", mysql_uri("locked"));
    w2l_state *a = reopen(u, NULL), *b = reopen(u, NULL);
    ck_assert_int_eq(w2l_state_holder_get(b, &(w2l_state_holder){0}, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    w2l_state_holder h = holder_of(b);
    ck_assert_str_eq(h.job, "job-a");
    ck_assert_int_eq(h.pid, (long long)getpid());
    uint64_t epoch = h.epoch;
    ck_assert_uint_ge(epoch, 1);
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "job \"job-a\"") && strstr(err.msg, "table locked") &&
                      !strstr(err.msg, "w2lpass"),
                  "%s", err.msg);
    ck_assert_ok(w2l_state_put(a, 1, "k", "a", 1, &err), err);
    ck_assert_ok(w2l_state_seal(a, 1, &err), err);
    w2l_state_close(a); /* the server drops the lock with the connection */
    ck_assert_ok(w2l_state_lock(b, "job-b", &err), err);
    h = holder_of(b);
    ck_assert_str_eq(h.job, "job-b");
    ck_assert_uint_eq(h.epoch, epoch + 1);
    uint64_t ck = 0;
    ck_assert_ok(w2l_state_latest(b, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    ck_assert_ok(w2l_state_put(b, 2, "k", "b", 1, &err), err);
    ck_assert_ok(w2l_state_seal(b, 2, &err), err);
    w2l_state_close(b);
}
END_TEST

/* ---- the mysql store's lease: renewal, a lapsed holder killed, fencing ---- */

/* A raw connection to the test server as user/pass, for playing another holder. */
static w2l__my *raw_conn(const char *user, const char *pass)
{
    ck_assert_msg(!test_mariadb_problem()[0], "%s", test_mariadb_problem());
    w2l__my_params p = {.host = "127.0.0.1", .port = db_port, .user = (char *)user,
                        .pass = (char *)pass, .db = "w2l_test", .what = "test"};
    w2l__my *c = NULL;
    ck_assert_ok(w2l__my_connect(&p, &c, &err), err);
    return c;
}

static void raw_exec(w2l__my *c, const char *sql)
{
    ck_assert_ok(w2l__my_exec(c, sql, &err), err);
}

/* c takes table's named lock (waiting for a holder just closed: the server drops its lock
 * a moment after), and writes a record with expires_ms (none when < 0). */
static void raw_hold(w2l__my *c, const char *table, int64_t expires_ms, unsigned epoch)
{
    char sql[600], v[8];
    int null;
    snprintf(sql, sizeof sql,
             "SELECT GET_LOCK(CONCAT('w2l:',SHA1(CONCAT(DATABASE(),'.','%s'))), 10)", table);
    ck_assert_ok(w2l__my_value(c, sql, v, sizeof v, &null, &err), err);
    ck_assert_str_eq(v, "1");
    if (expires_ms < 0) {
        snprintf(sql, sizeof sql, "DELETE FROM `%s_holder`", table);
    } else {
        snprintf(sql, sizeof sql,
                 "REPLACE INTO `%s_holder` (one, rec) VALUES (1, '{\"job\":\"stopped\","
                 "\"host\":\"host-x\",\"pid\":77,\"since-ms\":1000,\"expires-ms\":%lld,"
                 "\"version\":\"0.1.0\",\"epoch\":%u}')",
                 table, (long long)expires_ms, epoch);
    }
    raw_exec(c, sql);
}

/* 1 when c still answers a query. */
static int raw_alive(w2l__my *c)
{
    char v[8];
    int null;
    w2l_error e;
    return w2l__my_value(c, "SELECT 1", v, sizeof v, &null, &e) == W2L_OK;
}

static char log_seen[4096];
static void log_keep(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level <= W2L_LOG_WARN && strlen(log_seen) + strlen(line) + 2 < sizeof log_seen) {
        strcat(log_seen, line);
        strcat(log_seen, "\n");
    }
}

static w2l_conf *lease_conf(const char *lease)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "ha.lease-timeout", lease, &err), err);
    return c;
}

/* The holder renews a lease beside its lock: the record's end moves on; a holder whose
 * lease ran out with its connection open (stopped) is killed by a taker, whose seal
 * lands; the old one is fenced at its next seal, renewal and prune, names the new holder,
 * never takes the lock again, and its close leaves the new holder's record alone. */
START_TEST(mysql_store_lease_renews_and_a_lapsed_holder_is_killed)
{
    char u[200];
    snprintf(u, sizeof u, "%s", mysql_uri("lease"));
    w2l_conf *c = lease_conf("4s"); /* b's GET_LOCK waits 2 s of it */
    w2l_state *a = reopen(u, c), *b = reopen(u, c);
    int64_t end = -1;
    ck_assert_ok(w2l_state_renew(a, &end, &err), err); /* not locked: nothing to renew */
    ck_assert_int_eq(end, 0);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    w2l_state_holder h = holder_of(b);
    ck_assert_msg(h.expires_ms > wall_ms() + 3000 && h.expires_ms <= wall_ms() + 4000, "%lld",
                  (long long)h.expires_ms);
    int64_t t0 = wall_ms();
    while (wall_ms() < t0 + 5) {
    }
    ck_assert_ok(w2l_state_renew(a, &end, &err), err);
    ck_assert_msg(end > h.expires_ms && end >= wall_ms() + 3900, "%lld %lld", (long long)end,
                  (long long)h.expires_ms);
    ck_assert_int_eq(holder_of(b).expires_ms, end); /* written, not only remembered */
    uint64_t epoch = holder_of(b).epoch;
    ck_assert_ok(w2l_state_put(a, 1, "k", "a", 1, &err), err);
    ck_assert_ok(w2l_state_seal(a, 1, &err), err);
    /* within the lease: the taker is refused and a is left alone */
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "job \"job-a\""), "%s", err.msg);
    ck_assert_ok(w2l_state_renew(a, &end, &err), err);
    /* a stops renewing (SIGSTOP): past its end and the margin, b kills it and takes over */
    while (wall_ms() < end + 800) { /* the margin: an eighth of the lease */
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    ck_assert_ok(w2l_state_lock(b, "job-b", &err), err);
    h = holder_of(b);
    ck_assert_str_eq(h.job, "job-b");
    ck_assert_uint_eq(h.epoch, epoch + 1);
    ck_assert_msg(h.expires_ms > wall_ms(), "%lld", (long long)h.expires_ms);
    uint64_t ck = 0;
    ck_assert_ok(w2l_state_latest(b, &ck, &err), err);
    ck_assert_uint_eq(ck, 1);
    ck_assert_ok(w2l_state_put(b, 2, "k", "b", 1, &err), err);
    ck_assert_ok(w2l_state_seal(b, 2, &err), err);
    /* a wakes up (SIGCONT): its connection is gone; fenced, naming b, and it stays so */
    ck_assert_ok(w2l_state_put(a, 2, "k", "a", 1, &err), err);
    ck_assert_int_eq(w2l_state_seal(a, 2, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "job \"job-b\"") &&
                      !strstr(err.msg, "w2lpass"),
                  "%s", err.msg);
    ck_assert_int_eq(w2l_state_renew(a, &end, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced"), "%s", err.msg);
    ck_assert_int_eq(end, 0);
    ck_assert_int_eq(w2l_state_prune(a, 2, &err), W2L_BUSY);
    ck_assert_int_eq(w2l_state_lock(a, "job-a", &err), W2L_MISUSE); /* never retaken */
    w2l_state_close(a);
    h = holder_of(b);
    ck_assert_str_eq(h.job, "job-b");
    ck_assert_msg(h.expires_ms > wall_ms(), "%lld", (long long)h.expires_ms);
    w2l_buf v = {0};
    ck_assert_ok(w2l_state_get(b, 2, "k", &v, &err), err);
    ck_assert_mem_eq(v.data, "b", 1);
    w2l_buf_release(&v);
    ck_assert_ok(w2l_state_renew(b, &end, &err), err);
    /* b ends cleanly: its lease ends with it, so the next taker does not wait */
    w2l_state_close(b);
    w2l_state *n = reopen(u, c);
    t0 = wall_ms();
    ck_assert_ok(w2l_state_lock(n, "job-n", &err), err);
    ck_assert_int_lt(wall_ms() - t0, 1500);
    ck_assert_uint_eq(holder_of(n).epoch, epoch + 2);
    w2l_state_close(n);
    w2l_conf_free(c);
}
END_TEST

/* The holder killed with a seal's transaction open: the server rolls it back. Holders
 * that are within their lease, or that left no record or no expiry, are never killed. */
START_TEST(mysql_store_only_lapsed_holders_are_killed)
{
    char u[200];
    snprintf(u, sizeof u, "%s", mysql_uri("lapsed"));
    w2l_conf *c = lease_conf("1s");
    w2l_state *b = reopen(u, c);
    w2l_state_close(b); /* the tables exist */
    /* a lapsed holder in the middle of a seal */
    w2l__my *x = raw_conn("w2l", "w2lpass");
    raw_hold(x, "lapsed", wall_ms() - 5000, 4);
    raw_exec(x, "START TRANSACTION");
    raw_exec(x, "REPLACE INTO `lapsed_sealed` (one, ckpt) VALUES (1, 99)");
    b = reopen(u, c);
    ck_assert_ok(w2l_state_lock(b, "job-b", &err), err);
    ck_assert_uint_eq(holder_of(b).epoch, 5);
    uint64_t ck = 0;
    ck_assert_int_eq(w2l_state_latest(b, &ck, &err), W2L_NOTFOUND); /* rolled back */
    ck_assert(!raw_alive(x));
    w2l__my_close(x);
    w2l_state_close(b);
    /* unexpired, record-less and expiry-less holders: left alone */
    for (int i = 0; i < 3; i++) {
        x = raw_conn("w2l", "w2lpass");
        raw_hold(x, "lapsed", i == 0 ? wall_ms() + 60000 : i == 1 ? -1 : 0, 9);
        b = reopen(u, c);
        ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
        ck_assert_msg(raw_alive(x), "holder %d was killed", i);
        w2l_state_close(b);
        w2l__my_close(x);
    }
    w2l_conf_free(c);
}
END_TEST

/* A taker whose user may not kill the lapsed holder's connection says so once, naming the
 * privilege, and keeps waiting. */
START_TEST(mysql_store_kill_without_privilege_warns_once)
{
    /* a user with every privilege on the store's database, none on the server (as root,
     * over the private server's socket: w2l may not grant) */
    w2l__my *x = raw_conn("w2l", "w2lpass");
    char sock[400], cmd[1000];
    int null;
    ck_assert_ok(w2l__my_value(x, "SELECT @@socket", sock, sizeof sock, &null, &err), err);
    snprintf(cmd, sizeof cmd,
             "mariadb --no-defaults --socket='%s' -uroot -e \"CREATE USER IF NOT EXISTS "
             "'w2lplain'@'127.0.0.1' IDENTIFIED BY 'plainpass'; GRANT ALL ON w2l_test.* "
             "TO 'w2lplain'@'127.0.0.1'\"",
             sock);
    ck_assert_int_eq(system(cmd), 0);
    char u[200];
    snprintf(u, sizeof u, "mysql://w2lplain:plainpass@127.0.0.1:%u/w2l_test?table=plain",
             db_port);
    w2l_conf *c = lease_conf("1s");
    w2l_state *b = reopen(u, c);
    raw_hold(x, "plain", wall_ms() - 5000, 2);
    log_seen[0] = '\0';
    w2l_log_set_callback(log_keep, NULL);
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    ck_assert_int_eq(w2l_state_lock(b, "job-b", &err), W2L_BUSY);
    w2l_log_set_callback(NULL, NULL);
    ck_assert_msg(strstr(log_seen, "CONNECTION ADMIN") && strstr(log_seen, "job \"stopped\""),
                  "%s", log_seen);
    ck_assert_ptr_eq(strstr(strstr(log_seen, "CONNECTION ADMIN") + 1, "CONNECTION ADMIN"),
                     NULL); /* once */
    ck_assert(raw_alive(x));
    w2l__my_close(x);
    w2l_state_close(b);
    w2l_conf_free(c);
}
END_TEST

/* The server restarts under a holder: the lock went with its connection, so the holder is
 * fenced (it never takes the lock again by itself); a taker finds the lock free but the
 * old lease running, and waits it out before it goes on. Never two holders. */
START_TEST(mysql_store_server_restart_fences_the_holder)
{
    char u[200];
    snprintf(u, sizeof u, "%s", mysql_uri("restarted"));
    w2l_conf *c = lease_conf("2s");
    w2l_state *a = reopen(u, c);
    ck_assert_ok(w2l_state_lock(a, "job-a", &err), err);
    ck_assert_ok(w2l_state_put(a, 1, "k", "a", 1, &err), err);
    ck_assert_ok(w2l_state_seal(a, 1, &err), err);
    int64_t end = 0;
    ck_assert_ok(w2l_state_renew(a, &end, &err), err);
    ck_assert_int_eq(test_mariadb_script("stop"), 0);
    ck_assert_int_eq(test_mariadb_script("start"), 0);
    w2l_state *b = reopen(u, c);
    int64_t t0 = wall_ms();
    w2l_rc rc = w2l_state_lock(b, "job-b", &err);
    ck_assert_ok(rc, err);
    int64_t taken = wall_ms();
    /* it waited for a's lease (as a renewed it last, plus the margin) unless that had run
     * out during the restart already */
    ck_assert_msg(taken >= end || t0 >= end, "taken %lld, a's lease ended %lld",
                  (long long)taken, (long long)end);
    ck_assert_str_eq(holder_of(b).job, "job-b");
    ck_assert_int_eq(w2l_state_renew(a, &end, &err), W2L_BUSY);
    ck_assert_msg(strstr(err.msg, "fenced") && strstr(err.msg, "job-b"), "%s", err.msg);
    ck_assert_ok(w2l_state_put(a, 2, "k", "a", 1, &err), err);
    ck_assert_int_eq(w2l_state_seal(a, 2, &err), W2L_BUSY);
    ck_assert_ok(w2l_state_put(b, 2, "k", "b", 1, &err), err);
    ck_assert_ok(w2l_state_seal(b, 2, &err), err);
    w2l_state_close(a);
    ck_assert_str_eq(holder_of(b).job, "job-b");
    w2l_state_close(b);
    w2l_conf_free(c);
}
END_TEST

Suite *suite_state(void)
{
    Suite *s = suite_create("state");
    TCase *basic = tcase_create("basic");
    tcase_add_loop_test(basic, store_contract, 0, (int)(sizeof stores / sizeof stores[0]));
    tcase_add_test(basic, uri_resolution_errors);
    tcase_add_test(basic, host_store_plugs_in);
    tcase_add_test(basic, file_store_survives_restart_and_drops_unsealed);
    tcase_add_test(basic, file_store_without_location_is_a_config_error);
    tcase_add_test(basic, file_store_lock_refuses_a_second_job);
    tcase_add_test(basic, file_store_lease_fences_a_job_taken_over);
    tcase_add_test(basic, file_store_renew_extends_and_fences);
    tcase_add_test(basic, file_store_lease_writes_are_conditional);
    tcase_add_loop_test(basic, file_store_seal_of_a_stopped_holder_is_fenced, 0, 3);
    tcase_add_test(basic, file_store_missing_checkpoint_is_named);
    suite_add_tcase(s, basic);
    TCase *mysql = tcase_create("mysql");
    tcase_add_unchecked_fixture(mysql, mysql_up, mysql_down);
    tcase_add_test(mysql, mysql_store_contract);
    tcase_add_test(mysql, mysql_store_survives_restart);
    tcase_add_test(mysql, mysql_store_errors_hide_the_password);
    tcase_add_test(mysql, mysql_store_lock_refuses_a_second_job);
    tcase_add_test(mysql, mysql_store_lease_renews_and_a_lapsed_holder_is_killed);
    tcase_add_test(mysql, mysql_store_only_lapsed_holders_are_killed);
    tcase_add_test(mysql, mysql_store_kill_without_privilege_warns_once);
    tcase_add_test(mysql, mysql_store_server_restart_fences_the_holder);
    tcase_set_timeout(mysql, 60);
    suite_add_tcase(s, mysql);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, mem_store_oom_is_clean);
    tcase_add_test(faults, file_store_detects_corruption);
    tcase_add_test(faults, file_store_seal_survives_every_io_fault);
    suite_add_tcase(s, faults);
    return s;
}
