/*
 * Many-tables benchmark (issue 19): N tables, R upserts into each per checkpoint, pushed
 * through the push API (w2l_pipeline_emitter / w2l_pipeline_checkpoint), defaults except
 * checkpoint-interval=1h (only this program checkpoints). Every checkpoint is one snapshot
 * per table: R rows of new keys in one transaction per table, so each table commit writes
 * a small Parquet file and its metadata (manifest, manifest list, metadata JSON, pointer).
 *
 * The first checkpoint also creates the N tables and is reported on its own; the next K
 * are the steady state: wall ms per checkpoint (mean and worst), CPU ms per table commit
 * (the process's CPU time over those checkpoints, every thread, divided by N * K), and the
 * peak RSS (VmHWM) and the RSS at the end.
 *
 * Usage: tables N [R [K]]   (R: 10, K: 5). Env: TMPDIR, TABLES_KEEP (keep the warehouse;
 * "quiet": without saying where),
 * TABLES_CONF ("key=value ..." set on top of the defaults, e.g. "committer-parallelism=1").
 * One line on stdout:  N R K create-ms ms/ckpt worst-ms cpu-ms/commit peak-rss-MiB rss-MiB
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <w2l.h>

#define NS "bench"

static char wh[512];

static double clock_ms(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    remove(path);
    return 0;
}

static void cleanup(void)
{
    if (!wh[0]) return;
    const char *keep = getenv("TABLES_KEEP");
    if (keep && *keep) {
        if (strcmp(keep, "quiet") != 0) fprintf(stderr, "tables: warehouse kept in %s\n", wh);
        return;
    }
    nftw(wh, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static void die(const char *what, const w2l_error *err)
{
    fprintf(stderr, "tables: %s: %s\n", what, err ? err->msg : "");
    cleanup();
    exit(1);
}

#define CHECK(call)                             \
    do {                                        \
        if ((call) != W2L_OK) die(#call, &err); \
    } while (0)

/* VmHWM or VmRSS of this process, in KiB. */
static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) kib = strtol(line + n, NULL, 10);
    if (f) fclose(f);
    return kib;
}

static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque, (void)level;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    fprintf(stderr, "tables: log %ld.%03ld: %s\n", (long)ts.tv_sec, ts.tv_nsec / 1000000, line);
}

static w2l_schema *sch; /* (id long key, name string, amount double) */

/* One transaction of r new rows into table t, checkpoint c. */
static void push_table(w2l_emitter *em, long t, long r, long c)
{
    char table[32], name[48], pos[64];
    snprintf(table, sizeof table, "t%05ld", t);
    w2l_error err;
    for (long i = 0; i < r; i++) {
        long id = c * r + i;
        w2l_value row[3];
        memset(row, 0, sizeof row);
        int n = snprintf(name, sizeof name, "customer-%08ld", id);
        row[0].v.i64 = id;
        row[1].v.bytes.ptr = name;
        row[1].v.bytes.len = (size_t)n;
        row[2].v.f64 = (double)(id % 100000) / 100.0;
        w2l_change ch = {NS, table, sch, W2L_OP_INSERT, row, 3, NULL, 0};
        CHECK(w2l_emit_change(em, &ch, &err));
    }
    int n = snprintf(pos, sizeof pos, "{\"ckpt\":%ld,\"table\":%ld}", c, t);
    CHECK(w2l_emit_commit(em, pos, (size_t)n, &err));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tables N [R [K]]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10), r = argc > 2 ? strtol(argv[2], NULL, 10) : 10;
    long k = argc > 3 ? strtol(argv[3], NULL, 10) : 5;
    if (n < 1 || r < 1 || k < 1) {
        fprintf(stderr, "tables: N, R and K must be positive\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(wh, sizeof wh, "%s/w2l-tables-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(wh)) {
        perror("tables: mkdtemp");
        return 1;
    }
    w2l_error err;
    CHECK(w2l_global_init(&err));
    w2l_log_set_callback(on_log, NULL);
    w2l_log_set_level(getenv("TABLES_DEBUG") ? W2L_LOG_DEBUG : W2L_LOG_WARN); /* with times */

    w2l_conf *conf = w2l_conf_new();
    CHECK(w2l_conf_set(conf, "warehouse", wh, &err));
    CHECK(w2l_conf_set(conf, "job-id", "tables-bench", &err));
    CHECK(w2l_conf_set(conf, "checkpoint-interval", "1h", &err));
    char extra[512]; /* TABLES_CONF: "key=value key=value" on top of the defaults */
    snprintf(extra, sizeof extra, "%s", getenv("TABLES_CONF") ? getenv("TABLES_CONF") : "");
    for (char *save = NULL, *kv = strtok_r(extra, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) die("TABLES_CONF: expected key=value", NULL);
        *eq = '\0';
        CHECK(w2l_conf_set(conf, kv, eq + 1, &err));
    }

    sch = w2l_schema_new(0);
    CHECK(w2l_schema_add_field(sch, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err));
    CHECK(w2l_schema_add_field(sch, 2, "name", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err));
    CHECK(w2l_schema_add_field(sch, 3, "amount", (w2l_type){W2L_TYPE_DOUBLE, 0, 0}, 0, &err));
    int32_t key = 1;
    CHECK(w2l_schema_set_identifier(sch, &key, 1, &err));

    w2l_pipeline *p;
    CHECK(w2l_pipeline_new(conf, &p, &err));
    w2l_emitter *em = w2l_pipeline_emitter(p);

    double create_ms = 0, sum_ms = 0, worst_ms = 0, cpu0 = 0;
    for (long c = 0; c <= k; c++) {
        if (c == 1) cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        double t0 = clock_ms(CLOCK_MONOTONIC);
        for (long t = 0; t < n; t++) push_table(em, t, r, c);
        uint64_t id;
        CHECK(w2l_pipeline_checkpoint(p, 1, &id, &err));
        double ms = clock_ms(CLOCK_MONOTONIC) - t0;
        if (c == 0) {
            create_ms = ms;
            continue;
        }
        sum_ms += ms;
        if (ms > worst_ms) worst_ms = ms;
    }
    double cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    long hwm = status_kib("VmHWM:"), rss = status_kib("VmRSS:");
    CHECK(w2l_pipeline_finish(p, &err));
    w2l_pipeline_free(p);
    w2l_schema_unref(sch);
    w2l_conf_free(conf);
    w2l_log_set_callback(NULL, NULL);
    w2l_global_cleanup();
    cleanup();
    printf("%6ld %4ld %3ld %10.0f %9.0f %9.0f %9.2f %9.1f %8.1f\n", n, r, k, create_ms, sum_ms / (double)k,
           worst_ms, cpu / (double)(n * k), hwm / 1024.0, rss / 1024.0);
    return 0;
}
