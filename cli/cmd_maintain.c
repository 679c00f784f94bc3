/*
 * w2l maintain: table maintenance on demand (w2l_maintain(3)) — snapshot expiry,
 * compaction and orphan removal of every table of the lake, or of one (--table). Without
 * an action flag all three run. One line per table and action on standard output:
 *
 *   shop.items  compact  12 files -> 1 (3.1 MB -> 2.9 MB), 1000 rows, 41 ms
 *   shop.items  expire   40 snapshots, 83 files (5.2 MB) removed, 9 ms
 *   shop.items  orphans  nothing to do
 *
 * with " (dry run)" at the end under --dry-run. On a terminal (and without --quiet) a
 * progress line "[i/n] NS.TABLE ACTION..." on stderr is redrawn after each action and
 * cleared at the end, as `w2l run` draws its own. SIGINT/SIGTERM stop after the action in
 * flight (every action is one atomic commit); a second signal exits at once.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

/* Indexes of the extra flags; the order of maintain_extra in w2l.c. */
enum { X_TABLE, X_EXPIRE, X_COMPACT, X_ORPHANS, X_DRY_RUN, X_FORCE };

static volatile sig_atomic_t signals_seen;
static pthread_mutex_t out_mtx = PTHREAD_MUTEX_INITIALIZER;
static int progress_tty; /* a live progress line is on the terminal */

static void on_signal(int sig)
{
    (void)sig;
    if (++signals_seen > 1) _exit(130); /* second signal: at once; what is committed stays */
}

/* Log lines as the library's default sink writes them, clearing the progress line first. */
static void log_line(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    pthread_mutex_lock(&out_mtx);
    cli_log_write(level, line, progress_tty);
    pthread_mutex_unlock(&out_mtx);
}

typedef struct maintain_ctx {
    size_t reports;
    int out_failed;
} maintain_ctx;

static const char *duration(char *buf, size_t size, int64_t ms)
{
    if (ms < 10000) snprintf(buf, size, "%" PRId64 " ms", ms < 0 ? 0 : ms);
    else snprintf(buf, size, "%.1f s", (double)ms / 1000.0);
    return buf;
}

/* The text of one report, after the table and action. */
static void describe(const w2l_maintain_report *r, char *line, size_t size)
{
    char a[32], b[32], t[32];
    const char *dry = r->dry_run ? " (dry run)" : "";
    if (r->skipped) {
        snprintf(line, size, "nothing to do%s", dry);
    } else if (strcmp(r->action, "compact") == 0) {
        if (r->dry_run && !r->files_out && !r->bytes_out) /* not run: the base's files, a bound */
            snprintf(line, size, "up to %" PRIu64 " files (%s) to rewrite, %s%s", r->files_in,
                     cli_bytes(a, sizeof a, r->bytes_in), duration(t, sizeof t, r->ms), dry);
        else
            snprintf(line, size,
                     "%" PRIu64 " files -> %" PRIu64 " (%s -> %s), %" PRIu64 " rows, %s%s",
                     r->files_in, r->files_out, cli_bytes(a, sizeof a, r->bytes_in),
                     cli_bytes(b, sizeof b, r->bytes_out), r->rows_out,
                     duration(t, sizeof t, r->ms), dry);
    } else if (strcmp(r->action, "expire") == 0) {
        snprintf(line, size, "%" PRIu64 " snapshots, %" PRIu64 " files (%s) removed, %s%s",
                 r->snapshots_expired, r->files_removed, cli_bytes(a, sizeof a, r->bytes_removed),
                 duration(t, sizeof t, r->ms), dry);
    } else {
        snprintf(line, size, "%" PRIu64 " files (%s) removed, %s%s", r->files_removed,
                 cli_bytes(a, sizeof a, r->bytes_removed), duration(t, sizeof t, r->ms), dry);
    }
}

/* Control characters of names replaced, so one report stays one line. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = ' ';
}

static int on_report(void *opaque, const w2l_maintain_report *r)
{
    maintain_ctx *c = opaque;
    char name[520], text[300];
    snprintf(name, sizeof name, "%s.%s", r->ns ? r->ns : "", r->table ? r->table : "");
    sanitize(name);
    describe(r, text, sizeof text);
    pthread_mutex_lock(&out_mtx);
    if (progress_tty) fputs("\r\033[K", stderr);
    printf("%s  %-7s  %s\n", name, r->action ? r->action : "?", text);
    if (fflush(stdout) != 0 || ferror(stdout)) c->out_failed = 1;
    if (progress_tty) {
        fprintf(stderr, "[%zu/%zu] %s %s...", r->table_index, r->ntables, name,
                r->action ? r->action : "");
        fflush(stderr);
    }
    c->reports++;
    pthread_mutex_unlock(&out_mtx);
    return signals_seen > 0 || c->out_failed;
}

/* A boolean extra flag: absent 0; "true" (given bare) or "false" with --FLAG=VALUE. */
static int flag_on(const char *v, const char *name, int *out)
{
    if (!v || strcmp(v, "false") == 0) *out = 0;
    else if (strcmp(v, "true") == 0) *out = 1;
    else {
        fprintf(stderr,
                "w2l maintain: --%s: expected true or false, got '%s' (see w2l help maintain)\n",
                name, v);
        return EXIT_USAGE;
    }
    return EXIT_DONE;
}

int cmd_maintain(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    int rc = cli_open_lake("maintain", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    /* the lake was opened only to check the warehouse; w2l_maintain opens what it needs */
    w2l_lake_close(lake);
    lake = NULL;

    w2l_maintain_options opt;
    memset(&opt, 0, sizeof opt);
    char ns[256], table[256];
    const char *only = args.extra[X_TABLE];
    if (only) {
        const char *dot = strchr(only, '.');
        if (!dot || dot == only || !dot[1] || (size_t)(dot - only) >= sizeof ns ||
            strlen(dot + 1) >= sizeof table) {
            fprintf(stderr,
                    "w2l maintain: --table: '%s' is not NAMESPACE.TABLE (see w2l help maintain)\n",
                    only);
            rc = EXIT_USAGE;
        } else {
            snprintf(ns, sizeof ns, "%.*s", (int)(dot - only), only);
            snprintf(table, sizeof table, "%s", dot + 1);
            opt.ns = ns;
            opt.table = table;
        }
    }
    static const struct {
        int index;
        const char *name;
        unsigned bit;
    } actions[] = {{X_EXPIRE, "expire", W2L_MAINTAIN_EXPIRE},
                   {X_COMPACT, "compact", W2L_MAINTAIN_COMPACT},
                   {X_ORPHANS, "remove-orphans", W2L_MAINTAIN_ORPHANS}};
    for (size_t i = 0; rc == EXIT_DONE && i < sizeof actions / sizeof actions[0]; i++) {
        int on = 0;
        rc = flag_on(args.extra[actions[i].index], actions[i].name, &on);
        if (on) opt.actions |= actions[i].bit;
    }
    if (rc == EXIT_DONE) rc = flag_on(args.extra[X_DRY_RUN], "dry-run", &opt.dry_run);
    if (rc == EXIT_DONE) rc = flag_on(args.extra[X_FORCE], "force", &opt.force_compact);
    if (!opt.actions) opt.actions = W2L_MAINTAIN_ALL;
    if (rc != EXIT_DONE) {
        cli_finish(conf, lake);
        return rc;
    }

    int64_t quiet = 0;
    w2l_conf_get_int(conf, "quiet", &quiet, NULL);
    progress_tty = !quiet && isatty(STDERR_FILENO);
    w2l_log_set_callback(log_line, NULL);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    if (progress_tty) {
        fprintf(stderr, "maintaining %s...", only ? only : "the lake's tables");
        fflush(stderr);
    }

    maintain_ctx c = {0, 0};
    w2l_error err;
    w2l_rc r = w2l_maintain(conf, &opt, on_report, &c, &err);

    pthread_mutex_lock(&out_mtx);
    if (progress_tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    progress_tty = 0;
    pthread_mutex_unlock(&out_mtx);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);

    if (r == W2L_CANCELLED && c.out_failed) {
        fprintf(stderr, "w2l maintain: writing to standard output failed\n");
        rc = EXIT_RUNTIME;
    } else if (r == W2L_CANCELLED && signals_seen) {
        fprintf(
            stderr,
            "w2l maintain: stopped by a signal after %zu action%s; what was done is committed\n",
            c.reports, c.reports == 1 ? "" : "s");
        rc = EXIT_RUNTIME;
    } else if (r != W2L_OK) {
        rc = cli_fail("maintain", &err, r);
    } else if (c.out_failed || fflush(stdout) != 0) {
        fprintf(stderr, "w2l maintain: writing to standard output failed\n");
        rc = EXIT_RUNTIME;
    } else if (!c.reports) {
        printf("no tables\n");
    }
    w2l_log_set_callback(NULL, NULL);
    cli_finish(conf, lake);
    return rc;
}
