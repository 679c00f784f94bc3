/*
 * The upsert benchmark's helper (bench/upsert.sh, issue 35). Three commands:
 *
 *   upsert_gen gen N ROUNDS TAIL SEED DIR
 *     Writes canal-json files of one table bench.kv (id BIGINT primary key, v BIGINT,
 *     name VARCHAR(24), amount DECIMAL(12,2)) into DIR: load.jsonl, N inserts of keys
 *     0..N-1 (500 rows a message); round-001.jsonl ... round-ROUNDS.jsonl, each N/100
 *     changes of random keys, one row a message: 80% UPDATE of a live key (v, amount; the
 *     key stays), 10% DELETE of a live key, 10% INSERT (a deleted key again when there is
 *     one, else a new key); tail.jsonl, TAIL changes of the same mix. Prints one line:
 *     "N ROUNDS CHANGES-PER-ROUND TAIL".
 *
 *   upsert_gen time OUT -- CMD [ARG...]
 *     Runs CMD (stderr inherited), and writes "WALL USER SYS MAXRSS-KiB EXIT 0" of it to OUT
 *     (wait4's rusage of the child: its CPU and peak RSS only). Exits with CMD's status.
 *
 *   upsert_gen follow OUT STREAM DIR ROUNDS LOG -- CMD [ARG...]
 *     Runs CMD (a `w2l run --log-level debug` following STREAM, no --until-caught-up) with
 *     its stderr copied to LOG, and feeds it the rounds: appends DIR/round-001.jsonl to
 *     STREAM at once, and each next round once a checkpoint sealed after the last append
 *     has committed ("checkpoint N sealed" / "checkpoint N committed" lines); after the
 *     last round's commit, SIGTERM (the run finishes its checkpoint and exits 0). Writes
 *     OUT as `time` does, the last field the child's CPU seconds (/proc) when its first
 *     "key index loaded" line came (0 without one): the index load at the start, which
 *     the rounds' figure leaves out. A run that commits nothing for 300 s is killed (exit 1).
 *
 * Generation is never timed: the benchmark generates every file before any run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- gen ---- */

static uint64_t rs;
static uint64_t next64(void) /* splitmix64 */
{
    uint64_t z = (rs += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char types[] = "{\"id\":\"bigint(20)\",\"v\":\"bigint(20)\",\"name\":\"varchar(24)\",\"amount\":\"decimal(12,2)\"}";
static long seq = 1;

static void row(FILE *f, long id, uint32_t v)
{
    fprintf(f, "{\"id\":\"%ld\",\"v\":\"%u\",\"name\":\"key-%ld\",\"amount\":\"%u.%02u\"}", id, v, id % 100000, v % 1000000,
            v % 100);
}

static void head(FILE *f) { fputs("{\"data\":[", f); }
static void tail_(FILE *f, const char *type, const char *old)
{
    fprintf(f,
            "],\"database\":\"bench\",\"es\":%ld,\"id\":%ld,\"isDdl\":false,\"mysqlType\":%s,\"old\":%s,"
            "\"pkNames\":[\"id\"],\"sql\":\"\",\"sqlType\":{},\"table\":\"kv\",\"ts\":%ld,\"type\":\"%s\"}\n",
            1700000000000L + seq, seq, types, old ? old : "null", 1700000000000L + seq, type);
    seq++;
}

typedef struct {
    long n, cap;     /* keys 0..n-1 ever used */
    uint32_t *v;     /* current v of each key */
    unsigned char *live;
    long *dead;      /* deleted keys, for re-inserts */
    long ndead, nlive;
} keys;

static void grow(keys *k)
{
    if (k->n < k->cap) return;
    long cap = k->cap * 2;
    k->v = realloc(k->v, (size_t)cap * sizeof *k->v);
    k->live = realloc(k->live, (size_t)cap);
    k->dead = realloc(k->dead, (size_t)cap * sizeof *k->dead);
    if (!k->v || !k->live || !k->dead) {
        perror("upsert_gen");
        exit(1);
    }
    k->cap = cap;
}

static long live_key(keys *k)
{
    for (;;) {
        long id = (long)(next64() % (uint64_t)k->n);
        if (k->live[id]) return id;
    }
}

static void change(FILE *f, keys *k)
{
    uint64_t x = next64() % 100;
    if (k->nlive == 0) x = 99;
    if (x < 80) {
        long id = live_key(k);
        char old[64];
        snprintf(old, sizeof old, "[{\"v\":\"%u\",\"amount\":\"%u.%02u\"}]", k->v[id], k->v[id] % 1000000, k->v[id] % 100);
        k->v[id] = (uint32_t)next64();
        head(f);
        row(f, id, k->v[id]);
        tail_(f, "UPDATE", old);
    } else if (x < 90) {
        long id = live_key(k);
        head(f);
        row(f, id, k->v[id]);
        tail_(f, "DELETE", NULL);
        k->live[id] = 0;
        k->nlive--;
        k->dead[k->ndead++] = id;
    } else {
        long id;
        if (k->ndead) {
            long j = (long)(next64() % (uint64_t)k->ndead);
            id = k->dead[j];
            k->dead[j] = k->dead[--k->ndead];
        } else {
            grow(k);
            id = k->n++;
        }
        k->v[id] = (uint32_t)next64();
        k->live[id] = 1;
        k->nlive++;
        head(f);
        row(f, id, k->v[id]);
        tail_(f, "INSERT", NULL);
    }
}

static FILE *open_out(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(1);
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    return f;
}

static void close_out(FILE *f)
{
    if (fclose(f) != 0) {
        perror("upsert_gen: write");
        exit(1);
    }
}

static int gen(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: upsert_gen gen N ROUNDS TAIL SEED DIR\n");
        return 2;
    }
    long n = atol(argv[2]), rounds = atol(argv[3]), ntail = atol(argv[4]);
    rs = strtoull(argv[5], NULL, 10);
    const char *dir = argv[6];
    if (n < 100 || rounds < 1 || ntail < 0) {
        fprintf(stderr, "upsert_gen gen: N >= 100, ROUNDS >= 1, TAIL >= 0\n");
        return 2;
    }
    keys k = {0};
    k.cap = n + n / 10 + 16;
    k.v = malloc((size_t)k.cap * sizeof *k.v);
    k.live = malloc((size_t)k.cap);
    k.dead = malloc((size_t)k.cap * sizeof *k.dead);
    if (!k.v || !k.live || !k.dead) {
        perror("upsert_gen");
        return 1;
    }
    FILE *f = open_out(dir, "load.jsonl");
    for (long id = 0; id < n; id += 500) {
        head(f);
        for (long i = id; i < n && i < id + 500; i++) {
            k.v[i] = (uint32_t)next64();
            k.live[i] = 1;
            if (i > id) fputc(',', f);
            row(f, i, k.v[i]);
        }
        tail_(f, "INSERT", NULL);
    }
    close_out(f);
    k.n = k.nlive = n;
    long per = n / 100;
    for (long r = 1; r <= rounds; r++) {
        char name[64];
        snprintf(name, sizeof name, "round-%03ld.jsonl", r);
        f = open_out(dir, name);
        for (long i = 0; i < per; i++) change(f, &k);
        close_out(f);
    }
    f = open_out(dir, "tail.jsonl");
    for (long i = 0; i < ntail; i++) change(f, &k);
    close_out(f);
    printf("%ld %ld %ld %ld\n", n, rounds, per, ntail);
    return 0;
}

/* ---- time, follow ---- */

static pid_t child;
static void forward(int sig)
{
    if (child > 0) kill(child, sig);
}
static volatile sig_atomic_t stalled;
static void on_alarm(int sig)
{
    (void)sig;
    stalled = 1;
    if (child > 0) kill(child, SIGKILL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t start(char **cmd, int err_fd)
{
    signal(SIGINT, forward);
    signal(SIGTERM, forward);
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        exit(1);
    }
    if (p == 0) {
        if (err_fd >= 0) dup2(err_fd, 2);
        execvp(cmd[0], cmd);
        perror(cmd[0]);
        _exit(127);
    }
    child = p;
    return p;
}

/* the child's CPU seconds so far (user+sys, every thread), from /proc; -1 if unknown */
static double child_cpu(void)
{
    char p[64], buf[4096];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)child);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')'); /* after the command name: state is field 3, utime 14, stime 15 */
    unsigned long long ut = 0, st = 0;
    if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double pre_cpu; /* follow: the child's CPU when its first "key index loaded" line came */

/* waits for the child, writes "WALL USER SYS MAXRSS-KiB EXIT PRE-CPU" to out; returns its status */
static int finish(const char *out, double t0)
{
    int st = 0;
    struct rusage ru;
    while (wait4(child, &st, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("wait4");
            return 1;
        }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "%.3f %.3f %.3f %ld %d %.2f\n", now_s() - t0, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
            ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, code, pre_cpu);
    fclose(f);
    return code;
}

static int dashdash(int argc, char **argv, int from)
{
    for (int i = from; i < argc; i++)
        if (strcmp(argv[i], "--") == 0 && i + 1 < argc) return i + 1;
    return -1;
}

static int timed(int argc, char **argv)
{
    int c = dashdash(argc, argv, 3);
    if (argc < 5 || c != 4) {
        fprintf(stderr, "usage: upsert_gen time OUT -- CMD [ARG...]\n");
        return 2;
    }
    double t0 = now_s();
    start(argv + c, -1);
    return finish(argv[2], t0);
}

static void append(const char *stream, const char *dir, long r)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/round-%03ld.jsonl", dir, r);
    int in = open(p, O_RDONLY), out = open(stream, O_WRONLY | O_APPEND);
    if (in < 0 || out < 0) {
        perror(in < 0 ? p : stream);
        exit(1);
    }
    static char buf[1 << 20];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            perror(stream);
            exit(1);
        }
    close(in);
    close(out);
}

static int follow(int argc, char **argv)
{
    int c = dashdash(argc, argv, 7);
    if (argc < 9 || c != 8) {
        fprintf(stderr, "usage: upsert_gen follow OUT STREAM DIR ROUNDS LOG -- CMD [ARG...]\n");
        return 2;
    }
    const char *out = argv[2], *stream = argv[3], *dir = argv[4], *logp = argv[6];
    long rounds = atol(argv[5]);
    FILE *logf = fopen(logp, "w");
    int pfd[2];
    if (!logf || pipe(pfd) != 0) {
        perror(logp);
        return 1;
    }
    double t0 = now_s();
    start(argv + c, pfd[1]);
    close(pfd[1]);
    FILE *in = fdopen(pfd[0], "r");
    long sealed = 0, committed = 0, appended = 0, need = 0;
    int termed = 0;
    char line[8192];
    append(stream, dir, ++appended);
    need = sealed + 1;
    signal(SIGALRM, on_alarm); /* a watchdog: 300 s without a commit */
    alarm(300);
    for (;;) {
        if (!fgets(line, sizeof line, in)) break;
        fputs(line, logf);
        if (pre_cpu == 0 && strstr(line, "key index loaded")) {
            double c = child_cpu();
            if (c > 0) pre_cpu = c;
        }
        long ck;
        const char *m;
        if ((m = strstr(line, " debug checkpoint ")) && sscanf(m, " debug checkpoint %ld", &ck) == 1) {
            if (strstr(m, " sealed") && ck > sealed) sealed = ck;
            if (strstr(m, " committed") && ck > committed) {
                committed = ck;
                alarm(300);
            }
        }
        if (!termed && committed >= need) {
            if (appended < rounds) {
                append(stream, dir, ++appended);
                need = sealed + 1;
            } else {
                termed = 1;
                kill(child, SIGTERM);
            }
        }
    }
    alarm(0);
    fclose(logf);
    if (stalled) fprintf(stderr, "upsert_gen follow: no commit for 300 s; killed\n");
    int code = finish(out, t0);
    if (termed != 1) {
        fprintf(stderr, "upsert_gen follow: the run ended before its rounds (%ld of %ld appended; exit %d), see %s\n", appended,
                rounds, code, logp);
        return 1;
    }
    return code;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "gen") == 0) return gen(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "time") == 0) return timed(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "follow") == 0) return follow(argc, argv);
    fprintf(stderr, "usage: upsert_gen gen|time|follow ... (see bench/upsert_gen.c)\n");
    return 2;
}
