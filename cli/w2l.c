/*
 * w2l: the command-line front end. Thin: it parses flags into a w2l_conf and calls the
 * library. Subcommands live in cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: w2l <command> [options]\n"
            "\n"
            "commands:\n"
            "  run       sync a source into the lake\n"
            "  recover   commit checkpoints that were stored but not committed\n"
            "  version   print the library version\n"
            "\n"
            "w2l --version, w2l --help; see w2l(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("w2l %s (libwholedb2lake %s)\n", W2L_VERSION_STRING, w2l_version_string());
        return 0;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "recover") == 0) return cmd_recover(argc - 2, argv + 2);
    fprintf(stderr, "w2l: unknown command '%s' (see w2l --help)\n", cmd);
    return 2;
}
