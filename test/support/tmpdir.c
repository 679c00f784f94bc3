/* Temporary directories for tests, reading a test file whole, comparing texts. */
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

char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_msg(s && n >= 0 && fread(s, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    s[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

void test_assert_same_text(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) == 0) return;
    const char *a = got, *b = want;
    int line = 1;
    while (*a && *a == *b) {
        if (*a == '\n') line++;
        a++;
        b++;
    }
    while (a > got && a[-1] != '\n') {
        a--;
        b--;
    }
    ck_abort_msg("%s differs at line %d:\n got: %.400s\nwant: %.400s", what, line, a, b);
}
