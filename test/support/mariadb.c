/*
 * A private MariaDB for the suites that need one (DESIGN.md section 8): started once per
 * TCase through scripts/test-mariadb (found through W2L_SRCDIR, which `make check-unit`
 * sets), on 127.0.0.1 with a port derived from the pid, stopped by its pid afterwards.
 * A server that cannot start fails the test with the reason; nothing is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

static char dir[512];
static unsigned port;

unsigned test_mariadb_start(const char *tag)
{
    const char *src = getenv("W2L_SRCDIR");
    if (!src || !*src) ck_abort_msg("W2L_SRCDIR is not set: run the suites through make check-unit");
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/w2l-test-mariadb-%s-%ld", base && *base ? base : "/tmp", tag, (long)getpid());
    port = 20000 + (unsigned)(getpid() % 20000);
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "DIR='%s' PORT=%u '%s/scripts/test-mariadb' start >'%s.log' 2>&1", dir, port, src, dir);
    if (system(cmd) != 0) {
        char log[600];
        snprintf(cmd, sizeof cmd, "%s.log", dir);
        FILE *f = fopen(cmd, "r");
        size_t n = f ? fread(log, 1, sizeof log - 1, f) : 0;
        log[n] = '\0';
        if (f) fclose(f);
        ck_abort_msg("the private MariaDB did not start: %s", log);
    }
    return port;
}

void test_mariadb_stop(void)
{
    const char *src = getenv("W2L_SRCDIR");
    if (!src || !dir[0]) return;
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "DIR='%s' PORT=%u '%s/scripts/test-mariadb' stop >/dev/null 2>&1; rm -rf '%s' '%s.log'",
             dir, port, src, dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "test_mariadb_stop: could not stop or remove %s\n", dir);
    dir[0] = '\0';
}
