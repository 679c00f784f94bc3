/*
 * w2l resync: asks a running `w2l run` (through its metrics endpoint, POST /resync) to
 * read one table again while the rest streams (w2l_resync_remote(3)); prints the run's
 * answer.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int cmd_resync(int argc, char **argv)
{
    w2l_conf *conf = w2l_conf_new();
    if (!conf) {
        fprintf(stderr, "w2l resync: out of memory\n");
        return EXIT_RUNTIME;
    }
    cli_args args;
    int rc = cli_parse("resync", argc, argv, conf, &args);
    w2l_conf_free(conf);
    if (rc != EXIT_DONE) return rc;
    const char *table = args.operand, *endpoint = args.extra[0];
    const char *dot = table ? strchr(table, '.') : NULL;
    if (!endpoint || !*endpoint) {
        fprintf(stderr, "w2l resync: --endpoint HOST:PORT is required (the run's "
                        "metrics.listen address; see w2l help resync)\n");
        return EXIT_USAGE;
    }
    if (!dot || dot == table || !dot[1]) {
        fprintf(stderr, "w2l resync: name the table as NAMESPACE.TABLE, not '%s'\n",
                table ? table : "");
        return EXIT_USAGE;
    }
    char ns[256], answer[512];
    snprintf(ns, sizeof ns, "%.*s", (int)(dot - table), table);
    w2l_error err;
    w2l_rc r = w2l_resync_remote(endpoint, ns, dot + 1, answer, sizeof answer, &err);
    if (r != W2L_OK) {
        rc = cli_fail("resync", &err, r);
        return rc == EXIT_USAGE ? EXIT_RUNTIME : rc;
    }
    printf("%s\n", answer);
    return EXIT_DONE;
}
