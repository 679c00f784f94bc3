/*
 * w2l run: sync a source into the lake until stopped (or, with --until-caught-up, until
 * the source has nothing more), and w2l recover: commit checkpoints that were sealed but
 * not committed. SIGINT/SIGTERM finish the checkpoint in flight and exit 0; a second
 * signal exits at once (the state stays recoverable). A standby (ha.standby) waiting for
 * the job's state store exits 0 at once on the first. A failed job says why in one line,
 * its last on stderr: "w2l run: <error>". With --log-format json every stderr line is a
 * JSON object: the library's lines as w2l_log_format_line() makes them (with the table it
 * attached), the command's own (progress, the closing error) with component "run".
 * The progress line labels what counts from this process's start ("this run: ...") apart
 * from the job's checkpoint ("job: checkpoint N committed"), and shows the source lag as
 * seconds, "snapshot" or "unknown", and the commit lag (w2l_pipeline_stats(3)), and the
 * writers' key index (keys, bytes in memory and spilled to disk) once it holds any, and
 * while the source's snapshot runs, its tables and rows read, rate and time left.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static w2l_pipeline *volatile running;
static volatile sig_atomic_t signals_seen;
static int progress_tty;          /* a live progress line is on the terminal */
static int log_json;              /* --log-format json: every stderr line a JSON object */
static pthread_mutex_t out_mtx = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig)
{
    (void)sig;
    if (++signals_seen > 1) _exit(130); /* second signal: at once; restart recovers */
    /* no pipeline yet: a standby waiting for the job's state store (ha.standby), or one
     * starting; neither has committed anything */
    if (!running) _exit(0);
    w2l_pipeline_stop(running);
}

/* Log lines go to stderr as the library's default sink writes them, except the runtime's
 * "pipeline: ..." error line: that is the error that stops the job, which fail_with()
 * prints as the command's last line, so a failed run states its error once. */
static void log_line(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level == W2L_LOG_ERROR && strncmp(line, "pipeline: ", 10) == 0) return;
    pthread_mutex_lock(&out_mtx);
    if (log_json) {
        /* the library's JSON object, with the table it attached when it logged line */
        char buf[8192];
        size_t n = w2l_log_format_line(buf, sizeof buf, level, line);
        buf[n] = '\n';
        fwrite(buf, 1, n + 1, stderr);
    } else {
        cli_log_write(level, line, progress_tty);
    }
    pthread_mutex_unlock(&out_mtx);
}

/* ---- progress: a live line on a terminal, a log line every 10 s otherwise ---- */

/* The source lag as the progress line shows it: "snapshot" while the initial snapshot
 * runs (a lag means nothing then), "unknown" when the source does not know it (no event
 * yet, the source unreachable), else seconds. */
static const char *lag_text(char *buf, size_t size, const w2l_pipeline_info *pi)
{
    if (pi->source_snapshot) snprintf(buf, size, "snapshot");
    else if (pi->source_lag_ms < 0) snprintf(buf, size, "unknown");
    else snprintf(buf, size, "%.1f s", (double)pi->source_lag_ms / 1000.0);
    return buf;
}

/* A count in short: 950, 12k, 1.2M, 3.4G. */
static const char *short_count(char *buf, size_t size, double v)
{
    if (v < 1e3) snprintf(buf, size, "%.0f", v);
    else if (v < 1e4) snprintf(buf, size, "%.1fk", v / 1e3);
    else if (v < 1e6) snprintf(buf, size, "%.0fk", v / 1e3);
    else if (v < 1e9) snprintf(buf, size, "%.1fM", v / 1e6);
    else snprintf(buf, size, "%.1fG", v / 1e9);
    return buf;
}

/* A duration in short: 45s, 1m30s, 2h05m, 3d04h. */
static const char *short_secs(char *buf, size_t size, double secs)
{
    unsigned long long s = (unsigned long long)(secs + 0.999); /* never "0s left" */
    if (s < 60) snprintf(buf, size, "%llus", s);
    else if (s < 3600) snprintf(buf, size, "%llum%02llus", s / 60, s % 60);
    else if (s < 86400) snprintf(buf, size, "%lluh%02llum", s / 3600, s % 3600 / 60);
    else snprintf(buf, size, "%llud%02lluh", s / 86400, s % 86400 / 3600);
    return buf;
}

/* While the source's snapshot runs: "; snapshot 3/10 tables, 1.2M of ~5.0M rows, 45k
 * rows/s, ~1m30s left", the rate over the rows since it began, the time left from the
 * server's estimate of its rows ("time left unknown" without one, or once more rows were
 * read than estimated). Nothing otherwise. */
static const char *snapshot_text(char *buf, size_t size, const w2l_pipeline_info *pi,
                                 int64_t now_ms)
{
    buf[0] = '\0';
    if (!pi->source_snapshot || !pi->snapshot_started_ms) return buf;
    double took = (double)(now_ms - pi->snapshot_started_ms) / 1000.0;
    double rate = took > 0 ? (double)pi->snapshot_rows / took : 0;
    char rows[32], est[32], r[48], left[64];
    short_count(rows, sizeof rows, (double)pi->snapshot_rows);
    int n = snprintf(buf, size, "; snapshot %llu/%llu tables, %s",
                     (unsigned long long)pi->snapshot_tables_done,
                     (unsigned long long)pi->snapshot_tables, rows);
    if (n < 0 || (size_t)n >= size) return buf;
    if (pi->snapshot_rows_estimated)
        n += snprintf(buf + n, size - (size_t)n, " of ~%s",
                      short_count(est, sizeof est, (double)pi->snapshot_rows_estimated));
    if (n < 0 || (size_t)n >= size) return buf;
    if (rate > 0 && pi->snapshot_rows_estimated > pi->snapshot_rows)
        snprintf(left, sizeof left, "~%s left",
                 short_secs(r, sizeof r,
                            (double)(pi->snapshot_rows_estimated - pi->snapshot_rows) / rate));
    else
        snprintf(left, sizeof left, "time left unknown");
    snprintf(buf + n, size - (size_t)n, " rows, %s rows/s, %s", short_count(r, sizeof r, rate),
             left);
    return buf;
}

static volatile int progress_done;

static void *progress_main(void *arg)
{
    w2l_pipeline *p = arg;
    unsigned long long last_rows = 0;
    double last = 0, last_log = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!progress_done) {
        struct timespec nap = {0, 200 * 1000 * 1000};
        nanosleep(&nap, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
        if (t - last < 1.0 || progress_done) continue;
        w2l_pipeline_info pi;
        w2l_error err;
        if (w2l_pipeline_stats(p, &pi, sizeof pi, &err) != W2L_OK) continue;
        double rate = (double)(pi.rows_in - last_rows) / (t - last);
        last = t;
        last_rows = pi.rows_in;
        /* what this run did, then where the job stands (the checkpoint numbers of w2l
         * status), then the lags */
        char line[600], lag[32], snap[160];
        int n = snprintf(line, sizeof line,
                 "this run: %llu rows, %.0f rows/s, %llu table%s, %llu checkpoint%s committed; "
                 "job: checkpoint %llu committed; source lag %s, commit lag %.1f s",
                 (unsigned long long)pi.rows_in, rate, (unsigned long long)pi.tables,
                 pi.tables == 1 ? "" : "s", (unsigned long long)pi.checkpoints_completed,
                 pi.checkpoints_completed == 1 ? "" : "s", (unsigned long long)pi.committed,
                 lag_text(lag, sizeof lag, &pi), (double)pi.commit_lag_ms / 1000.0);
        if (pi.key_index_keys && n > 0 && (size_t)n < sizeof line) /* delete mode position */
            snprintf(line + n, sizeof line - (size_t)n,
                     "; key index %llu key%s, %.1f MiB in memory, %.1f MiB on disk",
                     (unsigned long long)pi.key_index_keys, pi.key_index_keys == 1 ? "" : "s",
                     (double)pi.key_index_memory_bytes / 1048576.0,
                     (double)pi.key_index_disk_bytes / 1048576.0);
        n = (int)strlen(line);
        snprintf(line + n, sizeof line - (size_t)n, "%s",
                 snapshot_text(snap, sizeof snap, &pi, cli_now_ms()));
        if (progress_tty) {
            pthread_mutex_lock(&out_mtx);
            fprintf(stderr, "\r\033[K%s", line);
            fflush(stderr);
            pthread_mutex_unlock(&out_mtx);
        } else if (t - last_log >= 10.0) {
            last_log = t;
            /* as JSON, component "run" (the library takes it from a leading "run: ") */
            char json_line[sizeof line + 8];
            snprintf(json_line, sizeof json_line, "run: %s", line);
            log_line(NULL, W2L_LOG_INFO, log_json ? json_line : line);
        }
    }
    if (progress_tty) {
        pthread_mutex_lock(&out_mtx);
        fputs("\r\033[K", stderr);
        pthread_mutex_unlock(&out_mtx);
    }
    return NULL;
}

static int fail_with(const char *cmd, const w2l_error *err, w2l_rc rc)
{
    if (log_json) { /* the same line as an object: {"component":"run","message":...} */
        char line[sizeof err->msg + 32];
        snprintf(line, sizeof line, "%s: %s", cmd, err && err->msg[0] ? err->msg : w2l_rc_name(rc));
        cli_redact(line, sizeof line);
        log_line(NULL, W2L_LOG_ERROR, line);
        return rc == W2L_CONFIG || rc == W2L_MISUSE ? EXIT_USAGE : EXIT_RUNTIME;
    }
    return cli_fail(cmd, err, rc); /* one line, passwords masked */
}

static int start(const char *cmd, int argc, char **argv, w2l_conf **out)
{
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) return fail_with(cmd, &err, err.code);
    w2l_conf *conf = w2l_conf_new();
    if (!conf) {
        fprintf(stderr, "w2l %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    int rc = cli_parse_flags(cmd, argc, argv, conf);
    if (rc == EXIT_DONE && w2l_conf_require(conf, "warehouse", &err) != W2L_OK)
        rc = fail_with(cmd, &err, err.code);
    const char *level = NULL;
    w2l_log_level l;
    if (rc == EXIT_DONE && w2l_conf_get(conf, "log-level", &level, NULL) == W2L_OK && level &&
        w2l_log_level_parse(level, &l) == 0)
        w2l_log_set_level(l);
    const char *format = NULL;
    if (rc == EXIT_DONE && w2l_conf_get(conf, "log-format", &format, NULL) == W2L_OK && format)
        log_json = strcmp(format, "json") == 0;
    w2l_log_set_format(log_json ? W2L_LOG_FORMAT_JSON : W2L_LOG_FORMAT_TEXT);
    if (rc != EXIT_DONE) {
        w2l_conf_free(conf);
        return rc;
    }
    w2l_log_set_callback(log_line, NULL);
    *out = conf;
    return EXIT_DONE;
}

/* One pipeline from start to end. */
static w2l_rc run_once(w2l_conf *conf, w2l_error *err)
{
    w2l_pipeline *p = NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    w2l_rc r = w2l_pipeline_new(conf, &p, err);
    if (r == W2L_OK) {
        running = p;
        if (signals_seen) w2l_pipeline_stop(p); /* a signal while it was made */
        int64_t quiet = 0;
        w2l_conf_get_int(conf, "quiet", &quiet, NULL);
        pthread_t progress;
        progress_done = 0;
        int with_progress = !quiet && pthread_create(&progress, NULL, progress_main, p) == 0;
        progress_tty = with_progress && !log_json && isatty(STDERR_FILENO);
        r = w2l_pipeline_run(p, err);
        progress_done = 1;
        if (with_progress) pthread_join(progress, NULL);
        progress_tty = 0;
        running = NULL;
    }
    w2l_pipeline_free(p);
    return r;
}

int cmd_run(int argc, char **argv)
{
    w2l_conf *conf = NULL;
    int rc = start("run", argc, argv, &conf);
    if (rc != EXIT_DONE) return rc;
    w2l_error err;
    w2l_rc r = w2l_conf_require(conf, "source", &err);
    /* W2L_CONFLICT: another process committed what this one read (a member of a consumer
     * group that was fenced, w2l-kafka(7)); nothing of it was committed, and a new pipeline
     * starts from the lake. A few times in a row at most: a conflict that comes back at
     * once is not a passing rebalance. */
    for (int conflicts = 0; r == W2L_OK;) {
        int64_t began = (int64_t)time(NULL);
        r = run_once(conf, &err);
        if (r != W2L_CONFLICT || signals_seen) break;
        conflicts = (int64_t)time(NULL) - began > 300 ? 1 : conflicts + 1;
        if (conflicts > 10) break;
        char again[sizeof err.msg + 48];
        snprintf(again, sizeof again, "run: %s; starting again from the lake", err.msg);
        cli_redact(again, sizeof again);
        if (log_json) log_line(NULL, W2L_LOG_WARN, again);
        else fprintf(stderr, "w2l %s\n", again);
        w2l_error_clear(&err);
        r = W2L_OK;
    }
    rc = r == W2L_OK ? EXIT_DONE : fail_with("run", &err, r);
    w2l_conf_free(conf);
    w2l_log_set_callback(NULL, NULL);
    w2l_global_cleanup();
    return rc;
}

int cmd_recover(int argc, char **argv)
{
    w2l_conf *conf = NULL;
    int rc = start("recover", argc, argv, &conf);
    if (rc != EXIT_DONE) return rc;
    w2l_error err;
    w2l_rc r = w2l_recover(conf, &err);
    rc = r == W2L_OK ? EXIT_DONE : fail_with("recover", &err, r);
    w2l_conf_free(conf);
    w2l_log_set_callback(NULL, NULL);
    w2l_global_cleanup();
    return rc;
}
