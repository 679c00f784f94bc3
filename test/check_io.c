/*
 * lib/io: the file IO registry and wrappers, "local" and "mem" with the same contract
 * (publish on close, EXCL never overwrites, remove idempotent, list), and the fault shim.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/support.h"

static const char *impl_names[] = {"local", "mem"};
static w2l_error err;

/* A path for impl: under a fresh temp dir for local, a virtual root for mem. */
static char root[600];
static void make_root(const char *impl)
{
    if (strcmp(impl, "local") == 0) snprintf(root, sizeof root, "%s", tmpdir_make("io"));
    else snprintf(root, sizeof root, "/mem-root");
}

static char *P(const char *rel)
{
    static char bufs[4][700];
    static int k;
    char *b = bufs[k++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", root, rel);
    return b;
}

START_TEST(publish_on_close_only)
{
    const char *impl = impl_names[_i];
    make_root(impl);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open(impl, NULL, &io, &err), err);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, P("t/data/a.bin"), W2L_CREATE_EXCL, &f, &err), err);
    ck_assert_ok(w2l_file_write(f, "hello ", 6, &err), err);
    int ex;
    ck_assert_ok(w2l_fileio_exists(io, P("t/data/a.bin"), &ex, &err), err);
    ck_assert_int_eq(ex, 0); /* not visible before close */
    ck_assert_ok(w2l_file_write(f, "world", 5, &err), err);
    ck_assert_ok(w2l_file_close(f, &err), err);
    ck_assert_ok(w2l_fileio_exists(io, P("t/data/a.bin"), &ex, &err), err);
    ck_assert_int_eq(ex, 1);
    void *data;
    size_t len;
    ck_assert_ok(w2l_fileio_read_all(io, P("t/data/a.bin"), &data, &len, &err), err);
    ck_assert_uint_eq(len, 11);
    ck_assert_mem_eq(data, "hello world", 11);
    w2l_free(data);
    w2l_fileio_close(io);
    if (strcmp(impl, "local") == 0) tmpdir_remove(root);
}
END_TEST

START_TEST(excl_never_overwrites_replace_does)
{
    const char *impl = impl_names[_i];
    make_root(impl);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open(impl, NULL, &io, &err), err);
    ck_assert_ok(w2l_fileio_write_all(io, P("v1.json"), W2L_CREATE_EXCL, "one", 3, &err), err);
    /* a racing writer that started before v1 existed still loses at close */
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, P("v2.json"), W2L_CREATE_EXCL, &f, &err), err);
    ck_assert_ok(w2l_fileio_write_all(io, P("v2.json"), W2L_CREATE_EXCL, "winner", 6, &err), err);
    ck_assert_ok(w2l_file_write(f, "loser", 5, &err), err);
    ck_assert_int_eq(w2l_file_close(f, &err), W2L_EXISTS);
    ck_assert_msg(strstr(err.msg, "v2.json"), "%s", err.msg);
    void *data;
    size_t len;
    ck_assert_ok(w2l_fileio_read_all(io, P("v2.json"), &data, &len, &err), err);
    ck_assert_mem_eq(data, "winner", 6);
    w2l_free(data);
    /* plain create refuses an existing path up front; REPLACE swaps atomically */
    ck_assert_int_eq(w2l_fileio_create(io, P("v1.json"), 0, &f, &err), W2L_EXISTS);
    ck_assert_ok(w2l_fileio_write_all(io, P("hint"), W2L_CREATE_REPLACE, "1", 1, &err), err);
    ck_assert_ok(w2l_fileio_write_all(io, P("hint"), W2L_CREATE_REPLACE, "2", 1, &err), err);
    ck_assert_ok(w2l_fileio_read_all(io, P("hint"), &data, &len, &err), err);
    ck_assert_mem_eq(data, "2", 1);
    w2l_free(data);
    ck_assert_int_eq(w2l_fileio_create(io, P("x"), W2L_CREATE_EXCL | W2L_CREATE_REPLACE, &f, &err),
                     W2L_MISUSE);
    w2l_fileio_close(io);
    if (strcmp(impl, "local") == 0) tmpdir_remove(root);
}
END_TEST

static int count_names(void *ctx, const char *name);

/* close_many: files in three directories and a hint published together; one that lost
 * its EXCL race fails (named) while the others publish; nothing is left of the loser, not
 * even a temporary; the mem IO (no close_many) gives the same through the fallback. Six
 * files, and twelve (a batch the local IO makes durable by syncing the file system). */
START_TEST(close_many_publishes_each_and_names_the_failure)
{
    const char *impl = impl_names[_i % 2];
    make_root(impl);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open(impl, NULL, &io, &err), err);
    static const char *const paths[] = {"a/1", "b/2", "a/3", "c/d/4", "a/hint", "b/taken",
                                        "e/5", "a/6", "c/d/7", "b/8", "f/g/9", "a/10"};
    unsigned flags[] = {W2L_CREATE_EXCL, 0, W2L_CREATE_EXCL, W2L_CREATE_EXCL,
                        W2L_CREATE_REPLACE | W2L_CREATE_HINT, W2L_CREATE_EXCL,
                        W2L_CREATE_EXCL, 0, W2L_CREATE_REPLACE, W2L_CREATE_EXCL,
                        W2L_CREATE_EXCL, W2L_CREATE_EXCL};
    int n = _i < 2 ? 6 : 12;
    w2l_file *f[12];
    for (int i = 0; i < n; i++) {
        ck_assert_ok(w2l_fileio_create(io, P(paths[i]), flags[i], &f[i], &err), err);
        ck_assert_ok(w2l_file_write(f[i], paths[i], strlen(paths[i]), &err), err);
    }
    ck_assert_ok(w2l_fileio_write_all(io, P("b/taken"), W2L_CREATE_EXCL, "first", 5, &err), err);
    ck_assert_int_eq(w2l_file_close_many(io, f, (size_t)n, &err), W2L_EXISTS);
    ck_assert_msg(strstr(err.msg, "b/taken"), "%s", err.msg);
    for (int i = 0; i < n; i++) {
        void *data;
        size_t len;
        ck_assert_ok(w2l_fileio_read_all(io, P(paths[i]), &data, &len, &err), err);
        if (i == 5) ck_assert_mem_eq(data, "first", 5);
        else ck_assert_mem_eq(data, paths[i], strlen(paths[i]));
        w2l_free(data);
    }
    char names[256] = "";
    ck_assert_ok(w2l_fileio_list(io, P("b"), count_names, names, &err), err);
    if (n == 6)
        ck_assert_msg(!strcmp(names, "2,taken,") || !strcmp(names, "taken,2,"), "%s", names);
    else
        ck_assert_msg(strstr(names, "2,") && strstr(names, "taken,") && strstr(names, "8,") &&
                          strlen(names) == strlen("2,taken,8,"),
                      "%s", names);
    ck_assert_ok(w2l_file_close_many(io, NULL, 0, &err), err);
    if (strcmp(impl, "local") == 0) {
        char cmd[800];
        snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep tmp)\"", P("b"));
        ck_assert_int_eq(system(cmd), 0);
        tmpdir_remove(root);
    }
    w2l_fileio_close(io);
}
END_TEST

static int count_names(void *ctx, const char *name)
{
    char *acc = ctx;
    strcat(acc, name);
    strcat(acc, ",");
    return 0;
}

START_TEST(abort_leaves_nothing)
{
    const char *impl = impl_names[_i];
    make_root(impl);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open(impl, NULL, &io, &err), err);
    w2l_file *f;
    ck_assert_ok(w2l_fileio_create(io, P("d/gone.parquet"), W2L_CREATE_EXCL, &f, &err), err);
    ck_assert_ok(w2l_file_write(f, "partial", 7, &err), err);
    w2l_file_abort(f);
    int ex;
    ck_assert_ok(w2l_fileio_exists(io, P("d/gone.parquet"), &ex, &err), err);
    ck_assert_int_eq(ex, 0);
    char names[256] = "";
    ck_assert_ok(w2l_fileio_list(io, P("d"), count_names, names, &err), err);
    ck_assert_str_eq(names, "");
    if (strcmp(impl, "local") == 0) {
        /* not even a hidden temporary is left behind */
        char cmd[800];
        snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", P("d"));
        ck_assert_int_eq(system(cmd), 0);
        tmpdir_remove(root);
    }
    w2l_fileio_close(io);
}
END_TEST

START_TEST(list_remove_read_errors)
{
    const char *impl = impl_names[_i];
    make_root(impl);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open(impl, NULL, &io, &err), err);
    ck_assert_ok(w2l_fileio_write_all(io, P("tbl/metadata/v1.metadata.json"), W2L_CREATE_EXCL, "{}",
                                      2, &err),
                 err);
    ck_assert_ok(
        w2l_fileio_write_all(io, P("tbl/data/a.parquet"), W2L_CREATE_EXCL, "PAR1", 4, &err), err);
    char names[256] = "";
    ck_assert_ok(w2l_fileio_list(io, P("tbl"), count_names, names, &err), err);
    ck_assert_msg(strstr(names, "metadata,") && strstr(names, "data,") &&
                      strlen(names) == strlen("metadata,data,"),
                  "%s", names);
    names[0] = '\0';
    ck_assert_ok(w2l_fileio_list(io, P("absent"), count_names, names, &err), err);
    ck_assert_str_eq(names, "");
    ck_assert_ok(w2l_fileio_remove(io, P("tbl/data/a.parquet"), &err), err);
    ck_assert_ok(w2l_fileio_remove(io, P("tbl/data/a.parquet"), &err), err); /* idempotent */
    w2l_rfile *rf;
    ck_assert_int_eq(w2l_fileio_open_read(io, P("tbl/data/a.parquet"), &rf, &err), W2L_NOTFOUND);
    ck_assert_msg(strstr(err.msg, "a.parquet"), "%s", err.msg);
    ck_assert_ok(w2l_fileio_open_read(io, P("tbl/metadata/v1.metadata.json"), &rf, &err), err);
    ck_assert_uint_eq(w2l_rfile_size(rf), 2);
    char b[4];
    ck_assert_int_eq(w2l_rfile_pread(rf, b, 3, 0, &err), W2L_CORRUPT); /* past the end */
    ck_assert_int_eq(w2l_rfile_pread(rf, b, 1, 5, &err), W2L_CORRUPT);
    ck_assert_ok(w2l_rfile_pread(rf, b, 1, 1, &err), err);
    ck_assert_int_eq(b[0], '}');
    w2l_rfile_close(rf);
    w2l_fileio_close(io);
    if (strcmp(impl, "local") == 0) tmpdir_remove(root);
}
END_TEST

static int names_cb(void *ctx, const char *name)
{
    char *out = ctx;
    strcat(out, name);
    strcat(out, ";");
    return 0;
}

/* A writer killed between create and close leaves its hidden temporary: listing shows it
 * (so orphan removal and directory removal can take it), never a live writer's; stat
 * tells size and age. */
START_TEST(local_lists_dead_writers_temporaries_and_stats)
{
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    const char *dir = tmpdir_make("iotmp");
    pid_t child = fork();
    if (child == 0) _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    char dead[800], live[800], mine[800];
    snprintf(dead, sizeof dead, "%s/.d.parquet.tmp.%ld.7", dir, (long)child);
    snprintf(live, sizeof live, "%s/.l.parquet.tmp.%ld.1", dir, (long)getppid());
    snprintf(mine, sizeof mine, "%s/.m.parquet.tmp.%ld.2", dir, (long)getpid());
    const char *all[] = {dead, live, mine};
    for (int i = 0; i < 3; i++) {
        FILE *fp = fopen(all[i], "w");
        ck_assert_ptr_nonnull(fp);
        fputs("part", fp);
        fclose(fp);
    }
    char names[4096] = "";
    ck_assert_ok(w2l_fileio_list(io, dir, names_cb, names, &err), err);
    char want[256];
    snprintf(want, sizeof want, ".d.parquet.tmp.%ld.7;", (long)child);
    ck_assert_str_eq(names, want);
    w2l_file_stat st;
    ck_assert_ok(w2l_fileio_stat(io, dead, &st, &err), err);
    ck_assert_uint_eq(st.size, 4);
    ck_assert_int_le(st.mtime_ms, (int64_t)time(NULL) * 1000 + 1000);
    ck_assert_int_ge(st.mtime_ms, (int64_t)time(NULL) * 1000 - 60000);
    ck_assert_int_eq(w2l_fileio_stat(io, "/nonexistent/x", &st, &err), W2L_NOTFOUND);
    ck_assert_ok(w2l_fileio_remove(io, dead, &err), err);
    w2l_fileio_close(io);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(local_reports_errno_with_path)
{
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    w2l_file *f;
    /* a directory where a parent directory must go */
    const char *dir = tmpdir_make("ioerr");
    char blocker[700], path[800];
    snprintf(blocker, sizeof blocker, "%s/blocker", dir);
    FILE *fp = fopen(blocker, "w");
    fclose(fp);
    snprintf(path, sizeof path, "%s/blocker/sub/x.bin", dir);
    ck_assert_int_eq(w2l_fileio_create(io, path, W2L_CREATE_EXCL, &f, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, "blocker") && err.sys_errno != 0, "%s", err.msg);
    w2l_fileio_close(io);
    ck_assert_int_eq(w2l_fileio_open("nosuch", NULL, &io, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown file IO 'nosuch'") && strstr(err.msg, "local"), "%s",
                  err.msg);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(local_write_failure_is_clear_and_publishes_nothing)
{
    /* a file size limit makes write() fail as a full disk would (EFBIG instead of ENOSPC) */
    const char *dir = tmpdir_make("efbig");
    snprintf(root, sizeof root, "%s", dir);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {1024, 1024};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    char big[4096];
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(w2l_fileio_write_all(io, P("big.bin"), W2L_CREATE_EXCL, big, sizeof big, &err),
                     W2L_IO);
    ck_assert_msg(strstr(err.msg, "write ") && strstr(err.msg, "big.bin: File too large"), "%s",
                  err.msg);
    ck_assert_int_ne(err.sys_errno, 0);
    int ex;
    ck_assert_ok(w2l_fileio_exists(io, P("big.bin"), &ex, &err), err);
    ck_assert_int_eq(ex, 0);
    w2l_fileio_close(io);
    tmpdir_remove(dir);
}
END_TEST

/* A file holds no descriptor until it is large or closed: 300 small files open at once
 * under a limit of 64 descriptors (many tables' files of one checkpoint), then closed in
 * batches, all published; a large one still writes through. */
START_TEST(local_small_open_files_hold_no_descriptor)
{
    const char *dir = tmpdir_make("nofile");
    snprintf(root, sizeof root, "%s", dir);
    struct rlimit rl = {64, 64};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    enum { N = 300 };
    static w2l_file *f[N];
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "t%03d/data/f.parquet", i);
        ck_assert_ok(w2l_fileio_create(io, P(name), W2L_CREATE_EXCL, &f[i], &err), err);
        ck_assert_ok(w2l_file_write(f[i], name, strlen(name), &err), err);
    }
    static char big[200000];
    memset(big, 'b', sizeof big);
    w2l_file *g;
    ck_assert_ok(w2l_fileio_create(io, P("big/x"), W2L_CREATE_EXCL, &g, &err), err);
    ck_assert_ok(w2l_file_write(g, big, sizeof big, &err), err);
    ck_assert_ok(w2l_file_close(g, &err), err);
    for (int i = 0; i < N; i += 20) ck_assert_ok(w2l_file_close_many(io, f + i, 20, &err), err);
    for (int i = 0; i < N; i += 37) {
        snprintf(name, sizeof name, "t%03d/data/f.parquet", i);
        void *data;
        size_t len;
        ck_assert_ok(w2l_fileio_read_all(io, P(name), &data, &len, &err), err);
        ck_assert_uint_eq(len, strlen(name));
        ck_assert_mem_eq(data, name, len);
        w2l_free(data);
    }
    int ex;
    ck_assert_ok(w2l_fileio_exists(io, P("big/x"), &ex, &err), err);
    ck_assert_int_eq(ex, 1);
    w2l_fileio_close(io);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(fault_shim_fails_nth_and_recovers)
{
    fault_fileio_register();
    const char *dir = tmpdir_make("fault");
    snprintf(root, sizeof root, "%s", dir);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("fault", NULL, &io, &err), err);
    /* every write position of a 3-write file fails once, and then the file is absent */
    for (long nth = 0; nth < 4; nth++) {
        fault_fileio_arm(io, FAULT_WRITE | FAULT_CLOSE, nth, 0);
        w2l_file *f;
        ck_assert_ok(w2l_fileio_create(io, P("f.bin"), W2L_CREATE_EXCL, &f, &err), err);
        w2l_rc rc = W2L_OK;
        for (int w = 0; w < 3 && rc == W2L_OK; w++) rc = w2l_file_write(f, "abc", 3, &err);
        if (rc == W2L_OK) rc = w2l_file_close(f, &err);
        else w2l_file_abort(f);
        ck_assert_int_eq(rc, W2L_IO);
        ck_assert_msg(strstr(err.msg, "injected fault"), "%s", err.msg);
        int ex;
        ck_assert_ok(w2l_fileio_exists(io, P("f.bin"), &ex, &err), err);
        ck_assert_int_eq(ex, 0);
    }
    /* a batch of 12 (the local IO syncs their file system) in three directories: the close
     * of each position in turn fails; that file is absent, without a temporary, the others
     * are published */
    for (long nth = 0; nth < 12; nth++) {
        w2l_file *f[12];
        char paths[12][32];
        for (int i = 0; i < 12; i++) {
            snprintf(paths[i], sizeof paths[i], "batch%ld/d%d/%d", nth, i % 3, i);
            ck_assert_ok(w2l_fileio_create(io, P(paths[i]), W2L_CREATE_EXCL, &f[i], &err), err);
            ck_assert_ok(w2l_file_write(f[i], paths[i], strlen(paths[i]), &err), err);
        }
        fault_fileio_arm(io, FAULT_CLOSE, nth, 0);
        ck_assert_int_eq(w2l_file_close_many(io, f, 12, &err), W2L_IO);
        ck_assert_msg(strstr(err.msg, "injected fault"), "%s", err.msg);
        fault_fileio_disarm(io);
        for (int i = 0; i < 12; i++) {
            int ex;
            ck_assert_ok(w2l_fileio_exists(io, P(paths[i]), &ex, &err), err);
            ck_assert_int_eq(ex, i != nth);
        }
        char cmd[900];
        snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '.*.tmp.*')\"", root);
        ck_assert_int_eq(system(cmd), 0);
    }
    /* armed past the last call: never fires */
    fault_fileio_arm(io, FAULT_ALL, 64, 0);
    ck_assert_ok(w2l_fileio_write_all(io, P("f.bin"), W2L_CREATE_EXCL, "abc", 3, &err), err);
    ck_assert_int_lt(fault_fileio_calls(io), 64);
    fault_fileio_disarm(io);
    w2l_fileio_close(io);
    tmpdir_remove(dir);
}
END_TEST

START_TEST(register_validates_methods)
{
    w2l_fileio_methods bad = {0};
    ck_assert_int_eq(w2l_fileio_register(&bad, 0), W2L_MISUSE);
    ck_assert_int_eq(w2l_fileio_register(NULL, 0), W2L_MISUSE);
    const w2l_fileio_methods *local = w2l_fileio_find("local");
    ck_assert_ptr_nonnull(local);
    ck_assert_ptr_eq(w2l_fileio_find(NULL), local); /* the default */
    w2l_fileio_methods copy = *local; /* same name, other table */
    ck_assert_int_eq(w2l_fileio_register(&copy, 0), W2L_EXISTS);
}
END_TEST

Suite *suite_io(void)
{
    Suite *s = suite_create("io");
    TCase *basic = tcase_create("basic");
    tcase_add_loop_test(basic, publish_on_close_only, 0, 2);
    tcase_add_loop_test(basic, excl_never_overwrites_replace_does, 0, 2);
    tcase_add_loop_test(basic, abort_leaves_nothing, 0, 2);
    tcase_add_loop_test(basic, close_many_publishes_each_and_names_the_failure, 0, 4);
    tcase_add_loop_test(basic, list_remove_read_errors, 0, 2);
    tcase_add_test(basic, register_validates_methods);
    suite_add_tcase(s, basic);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, local_reports_errno_with_path);
    tcase_add_test(faults, local_lists_dead_writers_temporaries_and_stats);
    tcase_add_test(faults, local_write_failure_is_clear_and_publishes_nothing);
    tcase_add_test(faults, local_small_open_files_hold_no_descriptor);
    tcase_add_test(faults, fault_shim_fails_nth_and_recovers);
    suite_add_tcase(s, faults);
    return s;
}
