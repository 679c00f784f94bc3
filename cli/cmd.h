/* The w2l subcommands (one file each) and the flag parsing they share. */
#ifndef W2L_CLI_CMD_H
#define W2L_CLI_CMD_H

#include <w2l.h>

/* Exit codes (DESIGN.md section 7). */
enum { EXIT_DONE = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Parses argv (after the subcommand) into conf: --config FILE first, then every
 * --KEY VALUE / --KEY=VALUE of a configuration key flagged as a CLI flag (booleans take
 * no value), overriding the file. Prints one line and returns EXIT_USAGE on a bad flag or
 * value, EXIT_DONE otherwise. */
int cli_parse_flags(const char *cmd, int argc, char **argv, w2l_conf *conf);

int cmd_run(int argc, char **argv);
int cmd_recover(int argc, char **argv);

#endif
