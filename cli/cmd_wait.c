/*
 * w2l wait-complete: a scheduler's sensor. Polls w2l_table_complete_through(3) for one table
 * until the table is complete through --through (every source transaction committed at or
 * before it is readable), then exits 0; 3 when --timeout passes first, 1 on an error (a
 * missing table, an unreadable lake), 2 on a usage error (a bad TIME or DURATION). It reads
 * what every reader reads, the table's current metadata and the job's completeness file,
 * in an order that makes "complete" true for any reader that starts after the exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"

/* In the order of wait_extra in w2l.c. */
enum { W_TABLE, W_THROUGH, W_TIMEOUT, W_POLL };

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int usage(const char *what, const char *value)
{
    fprintf(stderr, "w2l wait-complete: %s '%s' (see w2l help wait-complete)\n", what,
            value ? value : "");
    return EXIT_USAGE;
}

int cmd_wait_complete(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    int rc = cli_open_lake("wait-complete", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    const char *table = args.extra[W_TABLE], *through = args.extra[W_THROUGH];
    const char *dot = table ? strchr(table, '.') : NULL;
    int64_t t_ms = 0, timeout = -1, poll = 1000;
    w2l_error err;
    if (!table || !dot || dot == table || !dot[1])
        rc = usage("--table needs NAMESPACE.TABLE, not", table);
    else if (!through)
        rc = usage("--through is required; got", "");
    else if (w2l_time_parse(through, &t_ms, &err) != W2L_OK)
        rc = usage("--through: not a time:", through);
    else if (args.extra[W_TIMEOUT] && (timeout = cli_duration_ms(args.extra[W_TIMEOUT])) < 0)
        rc = usage("--timeout: not a duration:", args.extra[W_TIMEOUT]);
    else if (args.extra[W_POLL] && (poll = cli_duration_ms(args.extra[W_POLL])) <= 0)
        rc = usage("--poll: not a positive duration:", args.extra[W_POLL]);
    if (rc != EXIT_DONE) {
        cli_finish(conf, lake);
        return rc;
    }
    char ns[256];
    size_t nl = (size_t)(dot - table);
    if (nl >= sizeof ns) nl = sizeof ns - 1;
    memcpy(ns, table, nl);
    ns[nl] = '\0';
    int64_t start = mono_ms();
    for (;;) {
        w2l_complete_info ci;
        w2l_rc r = w2l_table_complete_through(lake, ns, dot + 1, &ci, &err);
        if (r != W2L_OK && !(err.flags & W2L_ERR_RETRIABLE)) {
            rc = cli_fail("wait-complete", &err, r);
            if (rc == EXIT_USAGE) rc = EXIT_RUNTIME;
            break;
        }
        if (r == W2L_OK && ci.through_ms >= t_ms) {
            char iso[40];
            w2l_time_format(ci.through_ms, iso, sizeof iso);
            printf("%s complete through %s (%" PRId64 " ms)\n", table, iso, ci.through_ms);
            break;
        }
        int64_t waited = mono_ms() - start;
        if (timeout >= 0 && waited >= timeout) {
            char iso[40];
            w2l_time_format(t_ms, iso, sizeof iso);
            fprintf(stderr, "w2l wait-complete: %s is not complete through %s after %" PRId64
                            " ms\n", table, iso, waited);
            rc = EXIT_TIMEOUT;
            break;
        }
        int64_t nap = poll;
        if (timeout >= 0 && timeout - waited < nap) nap = timeout - waited;
        sleep_ms(nap > 0 ? nap : 1);
    }
    cli_finish(conf, lake);
    return rc;
}
