/*
 * w2l: the command-line front end. Thin: it parses flags into a w2l_conf and calls the
 * library's public API (<w2l.h> only). Subcommands live in cmd_*.c; this file holds the
 * command table from which dispatch, `w2l --help` and `w2l help COMMAND` are derived, the
 * flags' texts coming from the library's property table (w2l-config(5)).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const cli_extra cat_extra[] = {
    { "snapshot", "ID",
      "Read this snapshot instead of the current one (time travel; the ids are in the table's "
      "metadata/v*.metadata.json)." },
    { "format", "json|table",
      "json (default): one JSON object per row, canonical values; table: aligned columns "
      "with a header." },
    { NULL, NULL, NULL }
};

static const cli_extra status_extra[] = {
    { "table", "NAMESPACE.TABLE",
      "Only this table, and how far it is complete in source time (README, Completeness for "
      "schedulers)." },
    { "format", "text|json",
      "text (default): lines and aligned columns; json: one object with stable member names "
      "(w2l-status(1)), for scripts." },
    { NULL, NULL, NULL }
};

static const cli_extra tables_extra[] = {
    { "format", "text|json",
      "text (default): aligned columns with a header; json: one object per table and line, "
      "with stable member names (w2l-tables(1)), for scripts." },
    { NULL, NULL, NULL }
};

/* In the order of the W_* indexes of cmd_wait.c. */
static const cli_extra wait_extra[] = {
    { "table", "NAMESPACE.TABLE", "The table to wait for (required)." },
    { "through", "TIME",
      "Wait until every source transaction committed at or before TIME is readable: ms since "
      "the epoch or ISO-8601 (2024-05-01, 2024-05-01T10:00:00Z, 2024-05-01T12:00+02:00; no "
      "zone: UTC) (required)." },
    { "timeout", "DURATION",
      "Give up after this long and exit 3 (500ms, 30s, 10m, 2h, 1d; a bare number is seconds). "
      "Default: wait forever." },
    { "poll", "DURATION", "Time between two reads of the lake (default 1s)." },
    { NULL, NULL, NULL }
};

static const cli_extra resync_extra[] = {
    { "endpoint", "HOST:PORT",
      "Where the running w2l run answers: its metrics.listen address (required)." },
    { NULL, NULL, NULL }
};

/* In the order of the X_* indexes of cmd_maintain.c. */
static const cli_extra maintain_extra[] = {
    { "table", "NAMESPACE.TABLE", "Maintain only this table (default: every table of the lake)." },
    { "expire", NULL,
      "Expire snapshots (maintenance.max-snapshot-age, maintenance.min-snapshots, or the table's "
      "history.expire.* properties) and remove the files only they reached." },
    { "compact", NULL,
      "Compact the tables that pass a maintenance.compact-* threshold: rewrite small files and "
      "files with deleted rows, apply and drop delete files." },
    { "remove-orphans", NULL,
      "Remove files older than maintenance.orphan-age that no snapshot and no sealed "
      "checkpoint references." },
    { "dry-run", NULL, "Report what would be done; change nothing." },
    { "force", NULL, "Compact even the tables below the thresholds." },
    { NULL, NULL, NULL }
};

/* In the order of the V_* indexes of cmd_verify.c. */
static const cli_extra verify_extra[] = {
    { "table", "DB.TABLE", "Compare only this source table (default: every table the source "
      "selects)." },
    { "format", "text|json", "text (default): one line per range that differs and a summary; "
      "json: one object, for scripts (w2l-verify(1))." },
    { "timeout", "DURATION",
      "While a job runs: how long to wait for the lake's next commit of a table that differs "
      "before comparing its ranges again (default 60s)." },
    { "settle", "DURATION",
      "No job runs: wait this long before comparing the ranges that differ again (default 2s; "
      "0: at once)." },
    { "keys", "N", "Keys named per range that differs (default 10)." },
    { NULL, NULL, NULL }
};

/* The flags of the s3 file IO, for every command that opens the lake (w2l-s3(7)). */
#define S3_FLAGS " s3.endpoint s3.region s3.path-style s3.profile"
/* The keys of the rest catalog (w2l-catalogs(7)). */
#define CATALOG_FLAGS                                                                          \
    " catalog.warehouse catalog.credential catalog.token catalog.oauth2-server-uri "           \
    "catalog.scope catalog.headers catalog.rest.sigv4-enabled catalog.rest.signing-region "     \
    "catalog.rest.signing-name catalog.access-delegation"
/* Both, for every command that opens the lake. */
#define LAKE_FLAGS S3_FLAGS CATALOG_FLAGS

static const cli_command commands[] = {
    { "run", "sync a source into the lake", NULL, NULL /* every CLI flag of the property table */,
      "source warehouse", NULL,
      "Reads changes from the source and commits them to one Iceberg table per source table, one "
      "snapshot per "
      "table and checkpoint, exactly once. SIGINT or SIGTERM finish the checkpoint in flight and "
      "exit 0; a second "
      "signal exits at once, and the next run or w2l recover resumes from the last sealed "
      "checkpoint.",
      cmd_run },
    { "recover", "commit checkpoints that were sealed but not committed", NULL,
      "warehouse state catalog config log-level log-format job-id job.adopt-tables" LAKE_FLAGS,
      "warehouse", NULL,
      "Commits, for every table, the sealed checkpoints the state store holds beyond what the "
      "table has "
      "committed, without starting a source. Safe to run any number of times.",
      cmd_recover },
    { "status", "show the newest sealed checkpoint and each table's lag", NULL,
      "warehouse state catalog config log-level" LAKE_FLAGS, "warehouse", status_extra,
      "Prints the newest sealed checkpoint, the job and source position it holds, and per table "
      "the newest "
      "checkpoint committed to it and how many sealed checkpoints are still to be committed (its "
      "lag); then per "
      "table its maintenance figures: snapshots, manifests, data and delete files, last "
      "compaction. With --table, only that table, and the source time through which it is "
      "complete.",
      cmd_status },
    { "wait-complete", "wait until a table is complete through a time", NULL,
      "warehouse catalog config log-level" LAKE_FLAGS, "warehouse", wait_extra,
      "Exits 0 as soon as the table holds every source transaction committed at or before "
      "--through, read from the lake's metadata as every reader reads it (a scheduler's "
      "sensor); 3 when --timeout passed first, 1 on an error such as a missing table, 2 on a "
      "usage error such as a bad TIME.",
      cmd_wait_complete },
    { "tables", "list the lake's tables", NULL, "warehouse catalog config log-level" LAKE_FLAGS,
      "warehouse", tables_extra,
      "Prints one line per table: snapshots, records (live rows, after deletes), data and delete "
      "files, "
      "bytes, the last "
      "checkpoint committed to it, its schema id, the manifests of its current snapshot and the "
      "age of its last "
      "compaction, read from each table's current metadata.",
      cmd_tables },
    { "cat", "print a table's rows", "NAMESPACE.TABLE",
      "warehouse catalog config log-level" LAKE_FLAGS, "warehouse", cat_extra,
      "Prints the rows of a table at its current snapshot (or --snapshot) with every delete "
      "applied, read "
      "through the library's own Iceberg reader.",
      cmd_cat },
    { "maintain", "expire snapshots, compact, remove orphan files", NULL,
      "warehouse state catalog config log-level quiet" LAKE_FLAGS, "warehouse", maintain_extra,
      "Runs table maintenance now: snapshot expiry, compaction and orphan removal (all three "
      "unless an action "
      "flag picks some) over every table, or the one --table names, printing one line per table "
      "and action. "
      "Expiry and orphan removal are safe while w2l run writes the lake (each action is one "
      "atomic commit); compaction is refused while a job runs on the warehouse, whose pipeline "
      "compacts its tables itself. Policy comes from the maintenance.* keys of --config "
      "(w2l-config(5)).",
      cmd_maintain },
    { "resync", "read one table again while the job runs", "NAMESPACE.TABLE", "config log-level",
      NULL, resync_extra,
      "Asks the w2l run listening at --endpoint (its metrics.listen address) to read the table "
      "again whole, with its chunked snapshot, while every other table streams; the table's rows "
      "in the lake are then replaced at one commit, its schema taken afresh from the source. "
      "Exits 0 once the run took the request, 1 when nothing answers there or the run does not "
      "read that table.",
      cmd_resync },
    { "verify", "compare the source with the lake, per primary-key range", NULL,
      "source warehouse catalog state config log-level include exclude source.time-as-string "
      "verify.chunk-rows" LAKE_FLAGS,
      "source warehouse", verify_extra,
      "Compares the mysql source with the lake per primary-key range of about verify.chunk-rows "
      "keys: row counts and checksums of the rows, computed in the server and from the lake's "
      "rows. Ranges that differ are compared again after the lake's next commit of the table "
      "(rows in flight), then row by row, naming the keys that differ. Exits 0 when no range "
      "differs, 1 when some do or on an error, 2 on a usage error.",
      cmd_verify },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* Prints text wrapped at 78 columns, every line indented by indent. */
static void wrap(FILE *f, const char *text, int indent)
{
    int col = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        int n = (int)strcspn(p, " ");
        if (!n) break;
        if (col && col + 1 + n > 78) {
            fputc('\n', f);
            col = 0;
        }
        if (!col) col = fprintf(f, "%*s", indent, "");
        else col += fprintf(f, " ");
        col += fprintf(f, "%.*s", n, p);
        p += n;
    }
    if (col) fputc('\n', f);
}

static const char *metavar(const w2l_conf_prop *p)
{
    switch (p->type) {
    case W2L_CONF_BOOL: return NULL;
    case W2L_CONF_INT: return "N";
    case W2L_CONF_DURATION: return "MS";
    case W2L_CONF_SIZE: return "BYTES";
    case W2L_CONF_ENUM: return p->choices;
    case W2L_CONF_URI:
        return strcmp(p->name, "warehouse") == 0 ? "DIR"
               : strcmp(p->name, "config") == 0  ? "FILE"
                                                 : "URI";
    default: return "TEXT";
    }
}

/* 1 when word is one of the space-separated words of list (NULL: none). */
static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        size_t m = strcspn(p, " ");
        if (m == n && strncmp(p, word, n) == 0) return 1;
        p += m;
    }
    return 0;
}

void cli_command_usage(const cli_command *c, FILE *f)
{
    char syn[600];
    int o = snprintf(syn, sizeof syn, "usage: w2l %s", c->name);
    if (c->operand) o += snprintf(syn + o, sizeof syn - (size_t)o, " %s", c->operand);
    for (const char *p = c->required; p && *p;) {
        while (*p == ' ') p++;
        size_t m = strcspn(p, " ");
        if (!m) break;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)m, p);
        const w2l_conf_prop *prop = w2l_conf_prop_find(key);
        if (prop && (size_t)o < sizeof syn)
            o += snprintf(syn + o, sizeof syn - (size_t)o, " --%s %s", key, metavar(prop));
        p += m;
    }
    if ((size_t)o < sizeof syn) snprintf(syn + o, sizeof syn - (size_t)o, " [options]");
    fprintf(f, "%s\n\n", syn);
    wrap(f, c->description, 2);
    fprintf(f, "\noptions:\n");
    size_t nprops = 0;
    const w2l_conf_prop *props = w2l_conf_props(&nprops);
    for (size_t i = 0; i < nprops; i++) {
        const w2l_conf_prop *prop = &props[i];
        if (!(prop->flags & W2L_CONF_F_CLI) || (c->keys && !in_list(c->keys, prop->name))) continue;
        const char *mv = metavar(prop);
        fprintf(f, "  --%s%s%s%s\n", prop->name, mv ? " " : "", mv ? mv : "",
                in_list(c->required, prop->name) ? "  (required)" : "");
        char doc[1200];
        if (prop->def && prop->type != W2L_CONF_BOOL)
            snprintf(doc, sizeof doc, "%s Default: %s.", prop->doc, prop->def);
        else
            snprintf(doc, sizeof doc, "%s", prop->doc);
        wrap(f, doc, 6);
    }
    for (int i = 0; c->extra && i < CLI_MAX_EXTRA && c->extra[i].name; i++) {
        fprintf(f, "  --%s%s%s\n", c->extra[i].name, c->extra[i].metavar ? " " : "",
                c->extra[i].metavar ? c->extra[i].metavar : "");
        wrap(f, c->extra[i].doc, 6);
    }
    fprintf(f,
            "  --help\n      This text.\n\nExit status: 0 done, 1 runtime failure, 2 usage error. "
            "See w2l-%s(1).\n",
            c->name);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: w2l <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  help      help COMMAND: its flags; help config: every configuration key\n"
               "  version   print the version\n"
               "\n"
               "w2l --version, w2l --help, w2l COMMAND --help; see w2l(1).\n");
}

/* w2l help config: every configuration key, as the --config file takes them. */
static void config_help(FILE *f)
{
    size_t n = 0;
    const w2l_conf_prop *props = w2l_conf_props(&n);
    fprintf(
        f, "Configuration keys (--config FILE takes a JSON object of them; flags are marked):\n\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %s%s%s%s\n", props[i].name, props[i].def ? " = " : "",
                props[i].def ? props[i].def : "",
                props[i].flags & W2L_CONF_F_CLI ? "   (flag)" : "");
        wrap(f, props[i].doc, 6);
    }
    fprintf(f, "\nSee w2l-config(5).\n");
}

static int help(int argc, char **argv)
{
    if (argc == 0) {
        usage(stdout);
        return EXIT_DONE;
    }
    if (strcmp(argv[0], "config") == 0) {
        config_help(stdout);
        return EXIT_DONE;
    }
    const cli_command *c = cli_command_find(argv[0]);
    if (!c) {
        fprintf(stderr, "w2l help: unknown command '%s' (see w2l --help)\n", argv[0]);
        return EXIT_USAGE;
    }
    cli_command_usage(c, stdout);
    return EXIT_DONE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "help") == 0) return help(argc - 2, argv + 2);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("w2l %s (libwholedb2lake %s)\n", W2L_VERSION_STRING, w2l_version_string());
        return EXIT_DONE;
    }
    const cli_command *c = cli_command_find(cmd);
    if (!c) {
        fprintf(stderr, "w2l: unknown command '%s' (see w2l --help)\n", cmd);
        return EXIT_USAGE;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_command_usage(c, stdout);
            return EXIT_DONE;
        }
    }
    return c->fn(argc - 2, argv + 2);
}
