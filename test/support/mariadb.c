/*
 * A private MariaDB for the suites that need one (w2l-design(7) section 8): started once per
 * TCase (an unchecked fixture) through scripts/test-mariadb, found through W2L_SRCDIR
 * (which `make check-unit` sets), on 127.0.0.1 with a port derived from the suite's tag and
 * the pid (a second port is tried if the first is taken), stopped by its pid afterwards.
 * Starting never aborts the fixture: when the server is not there, test_mariadb_problem()
 * says why and every test that needs it fails with that reason; nothing is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

static char dir[512];
static unsigned port;
static char problem[1024];

int test_mariadb_script(const char *verb)
{
    const char *src = getenv("W2L_SRCDIR");
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "DIR='%s' PORT=%u '%s/scripts/test-mariadb' %s >'%s/script.log' 2>&1",
             dir, port, src ? src : ".", verb, dir);
    return system(cmd);
}

void test_mariadb_start(const char *tag)
{
    problem[0] = '\0';
    const char *src = getenv("W2L_SRCDIR");
    if (!src || !*src) {
        snprintf(problem, sizeof problem,
                 "W2L_SRCDIR is not set: run the suites through `make check-unit` "
                 "or set it to the source root (the suite needs scripts/test-mariadb)");
        return;
    }
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/w2l-test-mariadb-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(dir)) {
        snprintf(problem, sizeof problem, "mkdtemp %s failed", dir);
        dir[0] = '\0';
        return;
    }
    unsigned h = 0;
    for (const char *c = tag; *c; c++) h = h * 31 + (unsigned char)*c;
    for (int tries = 0; tries < 2; tries++) {
        port = 20000 + (h * 101 + (unsigned)getpid() + (unsigned)tries * 7919) % 20000;
        if (test_mariadb_script("start") == 0) return;
        test_mariadb_script("stop");
    }
    char log[512] = "", path[600];
    snprintf(path, sizeof path, "%s/script.log", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(log, 1, sizeof log - 1, f);
        log[n] = '\0';
        fclose(f);
    }
    snprintf(problem, sizeof problem, "could not start a private MariaDB with scripts/test-mariadb "
             "(is mariadb-server installed? scripts/install-deps --test): %s", log);
}

unsigned test_mariadb_port(void) { return port; }
const char *test_mariadb_problem(void) { return problem; }

void test_mariadb_stop(void)
{
    if (!dir[0]) return;
    test_mariadb_script("stop");
    tmpdir_remove(dir);
    dir[0] = '\0';
}
