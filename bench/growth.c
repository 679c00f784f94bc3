/*
 * Growth benchmark: does a table stay healthy over a long run now that the library
 * maintains it (manifest merging on commit, snapshot expiry, compaction, orphan removal)?
 *
 * One table, pushed through the push API (w2l_pipeline_emitter / w2l_pipeline_checkpoint):
 * N checkpoints of one transaction of 10 changes each over a key space of 1,000 ids. Per
 * checkpoint: 2 updates of live keys (UPDATE_BEFORE + UPDATE_AFTER, 20%), and 8 changes of
 * random keys that insert an absent key or delete a live one (so inserts and deletes
 * balance, about 40% each, and about half the keys are live). The pipeline runs with the
 * defaults except:
 *   maintenance.max-snapshot-age   GROWTH_SNAPSHOT_AGE (2s): snapshots expire during the run
 *   maintenance.compact-interval   GROWTH_COMPACT_INTERVAL (0): the thresholds alone
 *                                  (maintenance.compact-small-files, -delete-files,
 *                                  -delete-percent) decide when to compact. The default
 *                                  (1m) assumes checkpoints seconds apart; here they are
 *                                  milliseconds apart, so a minute would be thousands of
 *                                  checkpoints and files would pile up between compactions
 *                                  only because the clock runs slow against the commit
 *                                  rate. 0 keeps the ratio of compactions to commits that
 *                                  the thresholds give a production job.
 *   checkpoint-interval            1h: only the host's w2l_pipeline_checkpoint() checkpoints.
 *
 * Every GROWTH_EVERY (500) checkpoints one line: checkpoints; wall ms per checkpoint (mean
 * over the window) and CPU ms per checkpoint (the process's CPU time over the window, every
 * pipeline and maintenance thread, less this program's own reporting and scans: the cost
 * measure that load from other processes does not inflate); bytes and files under the
 * table's metadata/ and data/; bytes of the checkpoint state (WAREHOUSE/_w2l); live data and
 * delete files (total-data-files, total-delete-files of the current snapshot); manifests in
 * its manifest list; snapshots in the metadata; VmRSS, and the bytes the library holds
 * through its allocator hook (w2l_set_allocator); and the time to scan the table with
 * w2l_lake_scan: the median of 10 scans spread over the window (the live file count, and so
 * the scan time, rises and falls with each compaction; the median compares like with
 * like). Every scan is checked against the model (each live key once, with its latest
 * version; no other row): a difference aborts with exit status 1.
 *
 * At the end a verdict against the targets: the wall ms per checkpoint of the last window
 * within 1.5x of the first (the CPU ratio is printed beside it); live files (data + delete)
 * and manifests under 64 at the end and at every sample (10 per window); disk (metadata + data) within 20x of the live files' bytes
 * (total-files-size); the scan time of the last window within 2x of the first or under
 * 20 ms. A missed target prints MISSED; the exit status stays 0.
 *
 * Env: GROWTH_CHECKPOINTS (10000), GROWTH_EVERY (500), GROWTH_SNAPSHOT_AGE (2s),
 *      GROWTH_COMPACT_INTERVAL (0), GROWTH_KEEP (keep the warehouse and print where),
 *      GROWTH_LOG (print the library's info lines: every maintenance action), TMPDIR.
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

#define NKEYS 1000
#define CHANGES 10
#define UPDATES 2
#define NS "bench"
#define TABLE "growth"

static char wh[512];
static int keep;

/* ---- the model ---- */

static int64_t version[NKEYS]; /* 0: absent; else the live row's version */
static size_t nlive;
static int64_t next_version = 1;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t n_ins, n_upd, n_del;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 */
    return (uint32_t)((rng >> 11) % n);
}

/* ---- helpers ---- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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
    if (keep) {
        fprintf(stderr, "growth: warehouse kept in %s\n", wh);
        return;
    }
    nftw(wh, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

static void die(const char *what, const w2l_error *err)
{
    fprintf(stderr, "growth: %s: %s\n", what, err ? err->msg : "");
    cleanup();
    exit(1);
}

#define CHECK(call)                                  \
    do {                                             \
        if ((call) != W2L_OK) die(#call, &err);      \
    } while (0)

static uint64_t du_bytes, du_files;

static int du_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)path, (void)f;
    if (flag == FTW_F) du_bytes += (uint64_t)st->st_size, du_files++;
    return 0;
}

/* Bytes and files under dir (0 when it does not exist). */
static uint64_t du(const char *dir, uint64_t *files)
{
    du_bytes = du_files = 0;
    nftw(dir, du_one, 32, FTW_PHYS);
    if (files) *files = du_files;
    return du_bytes;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

/* CPU ms of the process / of the calling thread. */
static double cpu_ms(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The library's allocations, counted: a 16-byte header holds each block's size. */
static int64_t heap_bytes;

static void *h_malloc(size_t n)
{
    size_t *b = malloc(n + 16);
    if (!b) return NULL;
    *b = n;
    __atomic_fetch_add(&heap_bytes, (int64_t)n, __ATOMIC_RELAXED);
    return (char *)b + 16;
}

static void h_free(void *p)
{
    if (!p) return;
    size_t *b = (size_t *)((char *)p - 16);
    __atomic_fetch_sub(&heap_bytes, (int64_t)*b, __ATOMIC_RELAXED);
    free(b);
}

static void *h_realloc(void *p, size_t n)
{
    if (!p) return h_malloc(n);
    size_t *b = (size_t *)((char *)p - 16), old = *b;
    size_t *nb = realloc(b, n + 16);
    if (!nb) return NULL;
    *nb = n;
    __atomic_fetch_add(&heap_bytes, (int64_t)n - (int64_t)old, __ATOMIC_RELAXED);
    return (char *)nb + 16;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int warnings; /* warnings and errors the library logged */

static void on_log(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    if (level <= W2L_LOG_WARN) __atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "growth: log: %s\n", line);
}

/* ---- pushing changes ---- */

static w2l_schema *sch; /* (id long key, name string, amount double, version long) */

static void emit(w2l_emitter *em, w2l_op op, long id, int64_t ver)
{
    char name[48];
    w2l_value row[4];
    memset(row, 0, sizeof row);
    int n = snprintf(name, sizeof name, "customer-%04ld-v%08" PRId64, id, ver);
    row[0].v.i64 = id;
    row[1].v.bytes.ptr = name;
    row[1].v.bytes.len = (size_t)n;
    row[2].v.f64 = (double)(ver % 100000) / 100.0;
    row[3].v.i64 = ver;
    w2l_change c = {NS, TABLE, sch, op, row, 4, NULL, 0};
    w2l_error err;
    CHECK(w2l_emit_change(em, &c, &err));
}

static long pick_live(void)
{
    long id = (long)rnd(NKEYS);
    while (!version[id]) id = (id + 1) % NKEYS;
    return id;
}

static void one_transaction(w2l_emitter *em, uint64_t txn)
{
    for (int i = 0; i < CHANGES; i++) {
        if (i < UPDATES && nlive) { /* an update of a live key */
            long id = pick_live();
            emit(em, W2L_OP_UPDATE_BEFORE, id, version[id]);
            version[id] = next_version++;
            emit(em, W2L_OP_UPDATE_AFTER, id, version[id]);
            n_upd++;
            continue;
        }
        long id = (long)rnd(NKEYS);
        if (version[id]) { /* live: delete it */
            emit(em, W2L_OP_DELETE, id, version[id]);
            version[id] = 0;
            nlive--;
            n_del++;
        } else {
            version[id] = next_version++;
            emit(em, W2L_OP_INSERT, id, version[id]);
            nlive++;
            n_ins++;
        }
    }
    char pos[48];
    int n = snprintf(pos, sizeof pos, "{\"txn\":%" PRIu64 "}", txn);
    w2l_error err;
    CHECK(w2l_emit_commit(em, pos, (size_t)n, &err));
}

/* ---- reading the lake ---- */

typedef struct scan_ctx {
    unsigned char seen[NKEYS];
    uint64_t rows;
    char bad[256];
} scan_ctx;

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    (void)s;
    scan_ctx *c = ctx;
    c->rows++;
    if (c->bad[0]) return 0;
    if (n < 4) {
        snprintf(c->bad, sizeof c->bad, "a row has %zu columns", n);
        return 0;
    }
    int64_t id = row[0].v.i64, ver = row[3].v.i64;
    if (id < 0 || id >= NKEYS) snprintf(c->bad, sizeof c->bad, "id %" PRId64 " outside the key space", id);
    else if (c->seen[id]++) snprintf(c->bad, sizeof c->bad, "id %" PRId64 " read twice", id);
    else if (!version[id]) snprintf(c->bad, sizeof c->bad, "id %" PRId64 " (version %" PRId64 ") was deleted", id, ver);
    else if (version[id] != ver)
        snprintf(c->bad, sizeof c->bad, "id %" PRId64 ": version %" PRId64 ", want %" PRId64, id, ver, version[id]);
    return 0;
}

typedef struct info {
    int found;
    w2l_table_info t;
    char meta_dir[600], table_dir[600];
} info;

static int on_table(void *ctx, const w2l_table_info *t)
{
    info *i = ctx;
    if (strcmp(t->ns, NS) != 0 || strcmp(t->table, TABLE) != 0) return 0;
    i->found = 1;
    i->t = *t;
    /* the table's directory: the metadata file is <table>/metadata/<file> */
    const char *m = t->metadata;
    if (strncmp(m, "file://", 7) == 0) m += 7;
    else if (strncmp(m, "file:", 5) == 0) m += 5;
    snprintf(i->meta_dir, sizeof i->meta_dir, "%s", m);
    char *slash = strrchr(i->meta_dir, '/');
    if (slash) *slash = '\0';
    snprintf(i->table_dir, sizeof i->table_dir, "%s", i->meta_dir);
    slash = strrchr(i->table_dir, '/');
    if (slash) *slash = '\0';
    i->t.metadata = NULL; /* borrowed: not kept */
    i->t.ns = i->t.table = NULL;
    i->t.job_id = NULL;
    return 0;
}

typedef struct report {
    uint64_t ckpt;
    double ms_mean, cpu_mean;
    uint64_t meta_bytes, meta_files, data_bytes, data_files_on_disk, state_bytes;
    uint64_t data_files, delete_files, manifests, snapshots, live_bytes;
    long rss_kib;
    int64_t heap;
    double scan_ms;
    uint64_t rows;
} report;

/* One scan of the table, checked against the model; its wall ms. */
static double scan_once(w2l_lake *lake, uint64_t ckpt, uint64_t *rows)
{
    static scan_ctx sc;
    w2l_error err;
    memset(&sc, 0, sizeof sc);
    double t0 = now_ms();
    CHECK(w2l_lake_scan(lake, NS, TABLE, -1, on_row, &sc, &err));
    double ms = now_ms() - t0;
    if (!sc.bad[0] && sc.rows != nlive)
        snprintf(sc.bad, sizeof sc.bad, "%" PRIu64 " rows, the model has %zu live keys", sc.rows, nlive);
    if (sc.bad[0]) {
        fprintf(stderr, "growth: after checkpoint %" PRIu64 ": the scan differs from the model: %s\n", ckpt, sc.bad);
        w2l_lake_close(lake);
        cleanup();
        exit(1);
    }
    if (rows) *rows = sc.rows;
    return ms;
}

/* The most live files (data + delete) and manifests seen at any sample, and when. */
static uint64_t max_files, max_files_ckpt, max_manifests;

static void track_max(const w2l_table_info *t, uint64_t ckpt)
{
    if (t->data_files + t->delete_files > max_files) max_files = t->data_files + t->delete_files, max_files_ckpt = ckpt;
    if (t->manifests > max_manifests) max_manifests = t->manifests;
}

/* Between reports: the live files and manifests, and one scan (its wall ms). */
static double scan_sample(const w2l_conf *conf, uint64_t ckpt)
{
    w2l_error err;
    w2l_lake *lake;
    CHECK(w2l_lake_open(conf, &lake, &err));
    info in;
    memset(&in, 0, sizeof in);
    CHECK(w2l_lake_tables(lake, on_table, &in, &err));
    if (in.found) track_max(&in.t, ckpt);
    double ms = scan_once(lake, ckpt, NULL);
    w2l_lake_close(lake);
    return ms;
}

static void take_report(const w2l_conf *conf, uint64_t ckpt, report *r)
{
    w2l_error err;
    w2l_lake *lake;
    CHECK(w2l_lake_open(conf, &lake, &err));
    info in;
    memset(&in, 0, sizeof in);
    CHECK(w2l_lake_tables(lake, on_table, &in, &err));
    if (!in.found) die("table " NS "." TABLE " is not in the lake", NULL);
    track_max(&in.t, ckpt);
    memset(r, 0, sizeof *r);
    r->ckpt = ckpt;
    char dir[700];
    r->meta_bytes = du(in.meta_dir, &r->meta_files);
    snprintf(dir, sizeof dir, "%s/data", in.table_dir);
    r->data_bytes = du(dir, &r->data_files_on_disk);
    snprintf(dir, sizeof dir, "%s/_w2l", wh);
    r->state_bytes = du(dir, NULL);
    r->data_files = in.t.data_files;
    r->delete_files = in.t.delete_files;
    r->manifests = in.t.manifests;
    r->snapshots = in.t.snapshots;
    r->live_bytes = in.t.bytes;
    r->rss_kib = rss_kib();
    r->heap = __atomic_load_n(&heap_bytes, __ATOMIC_RELAXED);
    scan_once(lake, ckpt, &r->rows);
    w2l_lake_close(lake);
}

static void print_header(void)
{
    printf("%6s %7s %7s %8s %5s %8s %5s %6s %4s %4s %4s %5s %6s %6s %7s %5s\n", "ckpt", "ms/ckpt", "CPU ms",
           "meta KiB", "files", "data KiB", "files", "state", "live", "live", "mani", "snap-", "RSS", "heap",
           "scan ms", "rows");
    printf("%6s %7s %7s %8s %5s %8s %5s %6s %4s %4s %4s %5s %6s %6s %7s %5s\n", "", "(wall)", "/ckpt", "(disk)",
           "meta/", "(disk)", "data/", "KiB", "data", "del", "fsts", "shots", "MiB", "KiB", "(med.)", "");
}

static void print_report(const report *r)
{
    printf("%6" PRIu64 " %7.2f %7.2f %8.0f %5" PRIu64 " %8.0f %5" PRIu64 " %6.0f %4" PRIu64 " %4" PRIu64 " %4" PRIu64
           " %5" PRIu64 " %6.1f %6.0f %7.2f %5" PRIu64 "\n",
           r->ckpt, r->ms_mean, r->cpu_mean, r->meta_bytes / 1024.0, r->meta_files, r->data_bytes / 1024.0,
           r->data_files_on_disk, r->state_bytes / 1024.0, r->data_files, r->delete_files, r->manifests,
           r->snapshots, r->rss_kib / 1024.0, r->heap / 1024.0, r->scan_ms, r->rows);
    fflush(stdout);
}

static int on_metric(void *ctx, const w2l_table_metrics *m)
{
    if (strcmp(m->ns, NS) == 0 && strcmp(m->table, TABLE) == 0) *(w2l_table_metrics *)ctx = *m;
    return 0;
}

static long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : def;
}

int main(void)
{
    long n = env_long("GROWTH_CHECKPOINTS", 10000), every = env_long("GROWTH_EVERY", 500);
    const char *age = getenv("GROWTH_SNAPSHOT_AGE");
    const char *interval = getenv("GROWTH_COMPACT_INTERVAL");
    if (!age || !*age) age = "2s";
    if (!interval || !*interval) interval = "0";
    keep = getenv("GROWTH_KEEP") && *getenv("GROWTH_KEEP");
    if (n < 1 || every < 1) {
        fprintf(stderr, "growth: GROWTH_CHECKPOINTS and GROWTH_EVERY must be positive\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(wh, sizeof wh, "%s/w2l-growth-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(wh)) {
        perror("growth: mkdtemp");
        return 1;
    }

    w2l_error err;
    if (w2l_set_allocator(h_malloc, h_realloc, h_free) != W2L_OK) die("w2l_set_allocator", NULL);
    CHECK(w2l_global_init(&err));
    w2l_log_set_callback(on_log, NULL);
    w2l_log_set_level(getenv("GROWTH_LOG") && *getenv("GROWTH_LOG") ? W2L_LOG_INFO : W2L_LOG_WARN);

    w2l_conf *conf = w2l_conf_new();
    CHECK(w2l_conf_set(conf, "warehouse", wh, &err));
    CHECK(w2l_conf_set(conf, "job-id", "growth-bench", &err));
    CHECK(w2l_conf_set(conf, "checkpoint-interval", "1h", &err));
    CHECK(w2l_conf_set(conf, "maintenance.max-snapshot-age", age, &err));
    CHECK(w2l_conf_set(conf, "maintenance.compact-interval", interval, &err));

    sch = w2l_schema_new(0);
    CHECK(w2l_schema_add_field(sch, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err));
    CHECK(w2l_schema_add_field(sch, 2, "name", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err));
    CHECK(w2l_schema_add_field(sch, 3, "amount", (w2l_type){W2L_TYPE_DOUBLE, 0, 0}, 0, &err));
    CHECK(w2l_schema_add_field(sch, 4, "version", (w2l_type){W2L_TYPE_LONG, 0, 0}, 0, &err));
    int32_t key = 1;
    CHECK(w2l_schema_set_identifier(sch, &key, 1, &err));

    printf("growth: %ld checkpoints of %d changes (%d updates, inserts/deletes of random keys) over %d keys, "
           "one table; maintenance.max-snapshot-age=%s, maintenance.compact-interval=%s, other keys default\n",
           n, CHANGES, UPDATES, NKEYS, age, interval);
    print_header();

    w2l_pipeline *p;
    CHECK(w2l_pipeline_new(conf, &p, &err));
    w2l_emitter *em = w2l_pipeline_emitter(p);

    report first = {0}, last = {0};
    int have_first = 0;
    double win_ms = 0, t_start = now_ms(), win_cpu0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID), own_cpu = 0;
    double scans[16];
    int nscans = 0;
    long win_n = 0, scan_every = every >= 10 ? every / 10 : 1;
    for (long c = 1; c <= n; c++) {
        double t0 = now_ms();
        one_transaction(em, (uint64_t)c);
        uint64_t id;
        CHECK(w2l_pipeline_checkpoint(p, 1, &id, &err));
        win_ms += now_ms() - t0;
        win_n++;
        int end = c % every == 0 || c == n;
        if (win_n % scan_every == 0 || end) { /* this program's own work: not the pipeline's cost */
            double own0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
            if (nscans < 16) scans[nscans++] = scan_sample(conf, (uint64_t)c);
            report r;
            if (end) {
                take_report(conf, (uint64_t)c, &r);
                r.ms_mean = win_ms / (double)win_n;
                qsort(scans, (size_t)nscans, sizeof *scans, dbl_cmp);
                r.scan_ms = nscans % 2 ? scans[nscans / 2] : (scans[nscans / 2 - 1] + scans[nscans / 2]) / 2;
            }
            own_cpu += cpu_ms(CLOCK_THREAD_CPUTIME_ID) - own0;
            if (end) {
                double cpu1 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
                r.cpu_mean = (cpu1 - win_cpu0 - own_cpu) / (double)win_n;
                print_report(&r);
                if (!have_first) first = r, have_first = 1;
                last = r;
                win_ms = own_cpu = 0;
                win_n = 0;
                nscans = 0;
                win_cpu0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
            }
        }
    }
    double total_s = (now_ms() - t_start) / 1e3;
    w2l_table_metrics m;
    memset(&m, 0, sizeof m);
    CHECK(w2l_pipeline_metrics(p, on_metric, &m, &err));
    CHECK(w2l_pipeline_finish(p, &err));
    w2l_pipeline_free(p);

    printf("growth: %.1f s in all; changes: %" PRIu64 " inserts, %" PRIu64 " updates, %" PRIu64
           " deletes; maintenance: %" PRIu64 " compactions (%" PRIu64 " files replaced), %" PRIu64
           " snapshots expired, %" PRIu64 " files removed; %d warnings\n",
           total_s, n_ins, n_upd, n_del, m.compactions, m.files_compacted, m.snapshots_expired, m.files_removed,
           __atomic_load_n(&warnings, __ATOMIC_RELAXED));

    /* ---- the verdict ---- */
    double cost = first.ms_mean > 0 ? last.ms_mean / first.ms_mean : 0;
    double cpu_cost = first.cpu_mean > 0 ? last.cpu_mean / first.cpu_mean : 0;
    uint64_t files = last.data_files + last.delete_files;
    uint64_t disk = last.meta_bytes + last.data_bytes;
    double ratio = last.live_bytes ? (double)disk / (double)last.live_bytes : 0;
    double scan_limit = 2 * first.scan_ms > 20 ? 2 * first.scan_ms : 20;
    int ok_cost = cost <= 1.5, ok_files = files < 64 && max_files < 64 && max_manifests < 64;
    int ok_disk = last.live_bytes && ratio <= 20, ok_scan = last.scan_ms <= scan_limit;
    printf("verdict after %" PRIu64 " checkpoints: checkpoint %.1f -> %.1f ms = %.2fx (CPU %.2fx), target <= 1.5x: %s; "
           "live files %" PRIu64 " data + %" PRIu64 " delete, %" PRIu64 " manifests (at most %" PRIu64
           " files, after checkpoint %" PRIu64 ", and %" PRIu64 " manifests), target < 64: %s; "
           "disk %.0f KiB = %.1fx the live files' %.0f KiB, target <= 20x: %s; "
           "scan %.1f -> %.1f ms, target <= %.0f ms: %s; %s\n",
           last.ckpt, first.ms_mean, last.ms_mean, cost, cpu_cost, ok_cost ? "ok" : "MISSED", last.data_files,
           last.delete_files, last.manifests, max_files, max_files_ckpt, max_manifests, ok_files ? "ok" : "MISSED", disk / 1024.0, ratio,
           last.live_bytes / 1024.0, ok_disk ? "ok" : "MISSED", first.scan_ms, last.scan_ms, scan_limit,
           ok_scan ? "ok" : "MISSED",
           ok_cost && ok_files && ok_disk && ok_scan ? "all targets met" : "MISSED: not every target met");

    w2l_schema_unref(sch);
    w2l_conf_free(conf);
    w2l_log_set_callback(NULL, NULL);
    w2l_global_cleanup();
    cleanup();
    return 0;
}
