/*
 * Test support: temp dirs, a failing allocator, a fault-injecting file IO shim.
 */
#ifndef W2L_TEST_SUPPORT_H
#define W2L_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>

#include "w2l.h"

/* A fresh directory under $TMPDIR (or /tmp), removed by tmpdir_remove(). Returns a static
 * path valid until the next call. */
const char *tmpdir_make(const char *tag);
void tmpdir_remove(const char *path);
/* The whole file at path, NUL-terminated, from malloc (the test fails when it cannot be
 * read); *len (may be NULL) gets its size. */
char *test_slurp(const char *path, size_t *len);
/* Fails the test unless got equals want, naming what and the first line that differs. */
void test_assert_same_text(const char *got, const char *want, const char *what);

/* Asserts rc == W2L_OK, printing err.msg otherwise. */
#define ck_assert_ok(rc, err)                                                              \
    ck_assert_msg((rc) == W2L_OK, "%s: %s", w2l_rc_name(rc), (err).msg)

/* ---- fail_alloc.c: fail the Nth allocation (installed with w2l_set_allocator before init;
 * tests run in a forked child, so they re-initialise the library around it). ---- */
void fail_alloc_install(void);     /* w2l_global_cleanup, set allocator, w2l_global_init */
void fail_alloc_arm(long nth);     /* the nth allocation from now (0-based) fails; <0 never */
long fail_alloc_count(void);       /* allocations since arm */
long fail_alloc_outstanding(void); /* live allocations (for leak checks) */

/* ---- fault_fileio.c: wraps a parent file IO and fails the Nth operation of the armed
 * kinds, as SQLite's testvfs does. Registered as "fault". ---- */
enum { FAULT_CREATE = 1, FAULT_WRITE = 2, FAULT_CLOSE = 4, FAULT_READ = 8, FAULT_REMOVE = 16,
       FAULT_ALL = 31 };
void fault_fileio_register(void);
/* Arms the shim of io (opened as "fault"): the nth (0-based) matching call fails with
 * W2L_IO ("injected fault"); persistent: every later matching call fails too. */
void fault_fileio_arm(w2l_fileio *io, unsigned kinds, long nth, int persistent);
void fault_fileio_disarm(w2l_fileio *io);
long fault_fileio_calls(w2l_fileio *io); /* matching calls since arm */
/* Arms every "fault" instance, open now or later (a pipeline's operators open their own),
 * with one count shared by all of them and all threads: the nth matching call among them
 * fails. Instances armed on their own (fault_fileio_arm) keep their own count. */
void fault_fileio_arm_all(unsigned kinds, long nth, int persistent);
/* As fault_fileio_arm_all, counting and failing only calls on paths that contain where
 * (a file's write, read and close count under the path it was made with): the way to fail
 * one operator's files in a pipeline without knowing which instance it opened. */
void fault_fileio_arm_where(const char *where, unsigned kinds, long nth, int persistent);
void fault_fileio_disarm_all(void);
long fault_fileio_calls_all(void); /* matching calls since fault_fileio_arm_all */
/* Calls fn (NULL: none) before each put_if reaches the parent: a writer racing the
 * conditional write. */
void fault_fileio_before_put_if(void (*fn)(void *ctx, const char *path), void *ctx);
/* The "fault" instance opened last (e.g. the one a state store opened inside itself). */
w2l_fileio *fault_fileio_last(void);
/* conf key that names the parent ("ext.fault.parent", default "local"). */

/* ---- mariadb.c: a private MariaDB on 127.0.0.1 (scripts/test-mariadb), users cdc/cdcpass
 * (replication) and w2l/w2lpass (all privileges). Start and stop in an unchecked fixture;
 * tests check test_mariadb_problem() ("" when the server runs) before using it. ---- */
void test_mariadb_start(const char *tag);
void test_mariadb_stop(void);
unsigned test_mariadb_port(void);
const char *test_mariadb_problem(void);
/* Runs scripts/test-mariadb VERB ("stop", "start") on the same server; 0 on success. */
int test_mariadb_script(const char *verb);

/* ---- lake_rows.c: the rows of ns.table in the lake at warehouse, each "v1|v2|..." (NULL
 * as "-"), sorted, joined by spaces; "(none)" when the table does not exist. Static
 * buffer, valid until the next call. ---- */
const char *lake_rows(const char *warehouse, const char *ns, const char *table);

/* ---- cdc_text.c: decoded CDC changes as text, for the CDC decoder suites ---- */
/* "I", "UB", "UA", "D" */
const char *cdc_op_name(w2l_op op);
/* "db.t I 1|alice|10.50\n" ("-" for a column absent from the image, "null" for NULL). */
void cdc_change_text(const w2l_change *ch, char *line, size_t size);
/* "name:type" per field, comma-separated, '*' on identifier fields, '!' on required ones. */
void cdc_schema_text(const w2l_schema *s, char *buf, size_t size);

#endif
