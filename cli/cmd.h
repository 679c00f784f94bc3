/* The w2l subcommands (one file each), the command table and the flag parsing they share. */
#ifndef W2L_CLI_CMD_H
#define W2L_CLI_CMD_H

#include <stdint.h>
#include <stdio.h>
#include <w2l.h>

/* Exit codes (w2l-design(7) section 7). */
enum { EXIT_DONE = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 /* wait-complete */ };

/* A flag of one command that is not a configuration key (cat's --snapshot, --format). */
typedef struct cli_extra {
    const char *name;    /* "snapshot" */
    const char *metavar; /* "ID"; NULL: a boolean flag */
    const char *doc;
} cli_extra;

enum { CLI_MAX_EXTRA = 8 }; /* maintain has 6 */

/* One subcommand: its usage, the configuration keys it takes as flags and its own flags,
 * from which both parsing and `w2l help COMMAND` are derived, so they cannot drift. */
typedef struct cli_command {
    const char *name;
    const char *summary;        /* one line */
    const char *operand;        /* "NAMESPACE.TABLE", or NULL: no operand */
    const char *keys;           /* configuration keys taken as --KEY, space-separated;
                                   NULL: every key flagged W2L_CONF_F_CLI */
    const char *required;       /* those that must be given, space-separated */
    const cli_extra *extra;     /* up to CLI_MAX_EXTRA, ended by a NULL name; may be NULL */
    const char *description;    /* a paragraph for `w2l help COMMAND` */
    int (*fn)(int argc, char **argv);
} cli_command;

/* What cli_parse() found besides configuration keys. */
typedef struct cli_args {
    const char *operand;                /* NULL when none was given */
    const char *extra[CLI_MAX_EXTRA];   /* values of the command's extra flags, by index;
                                           "true" for a boolean given; NULL when absent */
} cli_args;

/* The command named name, or NULL. */
const cli_command *cli_command_find(const char *name);
/* Prints the usage of cmd (synopsis, flags with their docs and defaults) to f. */
void cli_command_usage(const cli_command *cmd, FILE *f);

/* Parses argv (after the subcommand) into conf and args: --config FILE first, then every
 * --KEY VALUE / --KEY=VALUE of a configuration key the command takes (booleans take no
 * value), overriding the file, then its extra flags and operand. Prints one line and
 * returns EXIT_USAGE on a bad flag, value or operand, EXIT_DONE otherwise. args may be
 * NULL for commands with neither operand nor extra flags. */
int cli_parse(const char *cmd, int argc, char **argv, w2l_conf *conf, cli_args *args);

/* cli_parse() for commands with no operand and no extra flags (run, recover). */
int cli_parse_flags(const char *cmd, int argc, char **argv, w2l_conf *conf);

/* "500ms", "30s", "10m", "2h", "1d" in ms; a bare number is seconds. -1 when malformed. */
int64_t cli_duration_ms(const char *s);

/* Prints "w2l CMD: MESSAGE" as one line (control characters in the message replaced) and
 * returns the exit code of rc: EXIT_USAGE for W2L_CONFIG and W2L_MISUSE, else EXIT_RUNTIME. */
int cli_fail(const char *cmd, const w2l_error *err, w2l_rc rc);

/* The inspection commands' start: global init, flags (required ones checked), log level
 * (default warn), then the lake. On EXIT_DONE the caller owns *conf and *lake and ends
 * with cli_finish(). */
int cli_open_lake(const char *cmd, int argc, char **argv, cli_args *args, w2l_conf **conf,
                  w2l_lake **lake);
void cli_finish(w2l_conf *conf, w2l_lake *lake);

/* Appends s (len bytes) to f as a JSON string with quotes: control characters escaped,
 * invalid UTF-8 bytes replaced by U+FFFD. */
void cli_json_string(FILE *f, const char *s, size_t len);

/* Prints the members `,"KEY_ms":MS,"KEY":"ISO-8601"` to stdout; both null when ms < 0
 * (never happened). */
void cli_json_time(const char *key, int64_t ms);

/* Masks the password of every "scheme://user:password@" in s (a buffer of size bytes),
 * in place. */
void cli_redact(char *s, size_t size);

/* The age of the moment ts_ms (ms since the epoch) at now_ms, as "42s ago", "5m ago",
 * "3h ago" or "2d ago"; "-" when ts_ms is negative (none). Returns buf. */
const char *cli_age(char *buf, size_t size, int64_t ts_ms, int64_t now_ms);

/* bytes as "812 B", "3.1 kB", "2.9 MB", "1.2 GB", "4.0 TB" (powers of 1000). Returns buf. */
const char *cli_bytes(char *buf, size_t size, uint64_t bytes);

/* The current time, ms since the epoch. */
int64_t cli_now_ms(void);
/* Writes a log line to stderr as the library's default sink does ("TIME LEVEL LINE"),
 * first clearing a progress line when clear is set. The caller serialises. */
void cli_log_write(w2l_log_level level, const char *line, int clear);

int cmd_run(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_tables(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_maintain(int argc, char **argv);
int cmd_wait_complete(int argc, char **argv);
int cmd_resync(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
