/* Temporary directories for tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

const char *tmpdir_make(const char *tag)
{
    static char path[512];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/w2l-test-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(path)) ck_abort_msg("mkdtemp %s failed", path);
    return path;
}

void tmpdir_remove(const char *path)
{
    if (!path || strncmp(path, "/", 1) != 0 || !strstr(path, "w2l-test-")) return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}
