/*
 * w2l status: the newest sealed checkpoint (its job, epoch and the source position the
 * next run resumes from; while the source's snapshot is not done as of it, a line with the
 * tables being read, their rows and key ranges left, and the next table) and per table
 * the newest checkpoint committed to it and its lag:
 * how many sealed checkpoints hold changes to it that are not committed yet (w2l recover,
 * or the next run, commits them); then, after an empty line, per table the figures table
 * maintenance acts on (w2l-maintain(1)): snapshots, manifests of the current snapshot, data
 * and delete files, and the age of the last compaction; last, the tables set aside under
 * ddl.policy=quarantine, with the changes dropped since and the reason. Read through
 * w2l_lake_checkpoints(3) and w2l_lake_tables(3); nothing is written. Passwords of URIs are
 * never printed. With --table NAMESPACE.TABLE only that table's lines, then the source time
 * through which it is complete (w2l_table_complete_through(3)) and where that comes from.
 * Last, after an empty line, how the last run ended (w2l_lake_last_run(3): "last run failed
 * at TIME (...): ERROR", "last run ended ok at TIME (...)"), and the job running on the
 * warehouse now, if any (w2l_lake_holder(3): "running now: job J, pid N on HOST since T";
 * its lock is read, never taken). --format json prints all of it
 * as one object with stable member names (w2l-status(1)); absent figures are null.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

typedef struct row {
    char *name;
    uint64_t committed, lag, oldest;
    char *quarantined; /* the reason; NULL */
    uint64_t rows_quarantined;
} row;

/* A table the source's snapshot is reading, as the sealed checkpoint's position says. */
typedef struct snap_row {
    char *name;
    uint64_t rows, ranges;
} snap_row;

typedef struct status_ctx {
    row *v;
    size_t n, cap;
    int oom;
    const char *only; /* --table: "ns.table"; NULL: every table */
    /* the checkpoint (the first call) */
    uint64_t sealed, epoch;
    char *job, *position; /* NULL: none; the position redacted, one line */
    /* the source's snapshot, not done as of the checkpoint (w2l_checkpoint_info.snapshot) */
    int snapshot;
    char *snap_next; /* "db.table"; NULL: none */
    uint64_t snap_skipped;
    snap_row *snap;
    size_t nsnap;
} status_ctx;

/* One table's maintenance figures. */
typedef struct mrow {
    char *name;
    uint64_t snapshots, manifests, data_files, delete_files;
    int64_t last_compaction_ms;
} mrow;

typedef struct maint_ctx {
    mrow *v;
    size_t n, cap;
    int oom;
    const char *only;
} maint_ctx;

/* The last run's record as one line: "last run failed at TIME: ERROR", "last run ended ok
 * at TIME", or "last run started at TIME ... has recorded no end". */
static void print_last_run(const w2l_run_info *r)
{
    char at[40], began[40];
    w2l_time_format(r->ended_ms >= 0 ? r->ended_ms : r->started_ms, at, sizeof at);
    w2l_time_format(r->started_ms, began, sizeof began);
    char who[400];
    snprintf(who, sizeof who, "job %s, pid %lld%s%s", r->job_id ? r->job_id : "-",
             (long long)r->pid, r->host ? " on " : "", r->host ? r->host : "");
    if (strcmp(r->outcome, "failed") == 0) {
        char msg[sizeof ((w2l_error *)0)->msg + 64];
        snprintf(msg, sizeof msg, "%s", r->error ? r->error : "(no message)");
        for (char *p = msg; *p; p++)
            if ((unsigned char)*p < 0x20) *p = ' ';
        cli_redact(msg, sizeof msg);
        printf("last run failed at %s (%s; started %s): %s\n", at, who, began, msg);
    } else if (strcmp(r->outcome, "ok") == 0) {
        printf("last run ended ok at %s (%s; started %s; %" PRIu64 " rows)\n", at, who, began,
               r->rows);
    } else {
        printf("last run started at %s (%s) and has recorded no end: it is running, or was "
               "killed\n",
               began, who);
    }
}

/* The job that holds the state store now: "running now: job J, pid N on HOST since T
 * (lock epoch E)". */
static void print_holder(const w2l_state_holder *h)
{
    char since[40];
    w2l_time_format(h->since_ms, since, sizeof since);
    if (!h->pid && !h->host[0]) {
        printf("running now: a job that left no record of itself holds the state store\n");
        return;
    }
    printf("running now: job %s, pid %lld on %s since %s (lock epoch %" PRIu64 ")\n",
           h->job[0] ? h->job : "-", h->pid, h->host, since, h->epoch);
}

/* The processes standing by: "standby: job J, pid N on HOST since T" each. */
static void print_standbys(const w2l_state_holder *sb, size_t n, size_t shown)
{
    for (size_t i = 0; i < shown; i++) {
        char since[40];
        w2l_time_format(sb[i].since_ms, since, sizeof since);
        printf("standby: job %s, pid %lld on %s, waiting since %s\n",
               sb[i].job[0] ? sb[i].job : "-", sb[i].pid, sb[i].host, since);
    }
    if (n > shown) printf("standby: and %zu more\n", n - shown);
}

/* "ns.table" with control characters blanked (malloc'd); NULL: out of memory. */
static char *table_name(const char *ns, const char *table)
{
    size_t n = strlen(ns) + strlen(table) + 2;
    char *name = malloc(n);
    if (!name) return NULL;
    snprintf(name, n, "%s.%s", ns, table);
    for (char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    return name;
}

/* The snapshot as the sealed checkpoint left it: "snapshot: in progress — 2 tables being
 * read (db.a: 1200 rows so far, 3 ranges left; db.b: ...), next: db.c". */
static void print_snapshot(const status_ctx *s)
{
    printf("snapshot: in progress \xe2\x80\x94 %zu table%s being read", s->nsnap,
           s->nsnap == 1 ? "" : "s");
    for (size_t i = 0; i < s->nsnap; i++)
        printf("%s%s: %" PRIu64 " row%s so far, %" PRIu64 " range%s left", i ? "; " : " (",
               s->snap[i].name, s->snap[i].rows, s->snap[i].rows == 1 ? "" : "s",
               s->snap[i].ranges, s->snap[i].ranges == 1 ? "" : "s");
    if (s->nsnap) putchar(')');
    if (s->snap_next) {
        printf(", next: %s", s->snap_next);
        if (s->snap_skipped)
            printf(" (%" PRIu64 " table%s after it already read)", s->snap_skipped,
                   s->snap_skipped == 1 ? "" : "s");
    } else {
        printf(", no table left to start");
    }
    putchar('\n');
}

/* 1 when ns.table is not the one --table names. */
static int skip(const char *only, const char *ns, const char *table)
{
    size_t n = strlen(ns);
    return only &&
           !(strncmp(only, ns, n) == 0 && only[n] == '.' && strcmp(only + n + 1, table) == 0);
}

/* The completeness of --table into *ci. */
static w2l_rc get_complete(w2l_lake *lake, const char *only, w2l_complete_info *ci,
                           w2l_error *err)
{
    const char *dot = strchr(only, '.');
    size_t nl = (size_t)(dot - only);
    char *ns = malloc(nl + 1);
    if (!ns) return w2l_error_set(err, W2L_NOMEM, "out of memory");
    memcpy(ns, only, nl);
    ns[nl] = '\0';
    w2l_rc r = w2l_table_complete_through(lake, ns, dot + 1, ci, err);
    free(ns);
    return r;
}

/* The completeness lines of --table. */
static void print_complete(const char *only, const w2l_complete_info *ci)
{
    if (ci->through_ms < 0) {
        printf("%s complete through: unknown (no snapshot of it carries a mark yet)\n", only);
        return;
    }
    char iso[40];
    w2l_time_format(ci->through_ms, iso, sizeof iso);
    printf("%s complete through %s (%" PRId64 " ms)\n", only, iso, ci->through_ms);
    if (strcmp(ci->source, "job-file") == 0)
        printf("  from the job file of %s (checkpoint %" PRIu64
               "; the table's last commit is checkpoint %" PRIu64 ")\n",
               ci->job_id, ci->job_file_checkpoint, ci->checkpoint);
    else
        printf("  from the snapshot summary (checkpoint %" PRIu64 " of job %s)\n", ci->checkpoint,
               ci->job_id ? ci->job_id : "-");
}

/* A JSON string member "key":"value" (null when value is NULL), after a comma when comma. */
static void jstr(const char *key, const char *value, int comma)
{
    printf("%s\"%s\":", comma ? "," : "", key);
    if (value) cli_json_string(stdout, value, strlen(value));
    else fputs("null", stdout);
}

/* A count, null when zero means none (none_is_null). */
static void jnum(const char *key, uint64_t v, int none_is_null)
{
    if (none_is_null && !v) printf(",\"%s\":null", key);
    else printf(",\"%s\":%" PRIu64, key, v);
}

/* --format json "snapshot": null after the snapshot. */
static void print_snapshot_json(const status_ctx *s)
{
    fputs(",\"snapshot\":", stdout);
    if (!s->snapshot) {
        fputs("null", stdout);
        return;
    }
    fputs("{\"in_progress\":true,\"active\":[", stdout);
    for (size_t i = 0; i < s->nsnap; i++) {
        printf("%s{", i ? "," : "");
        jstr("table", s->snap[i].name, 0);
        jnum("rows", s->snap[i].rows, 0);
        jnum("ranges_left", s->snap[i].ranges, 0);
        putchar('}');
    }
    putchar(']');
    jstr("next", s->snap_next, 1);
    jnum("read_after_next", s->snap_skipped, 0);
    putchar('}');
}

static const mrow *find_m(const maint_ctx *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].name, name) == 0) return &m->v[i];
    return NULL;
}

/* --format json: one object (w2l-status(1) lists its members). */
static void print_json(const status_ctx *s, const maint_ctx *m, const w2l_run_info *run,
                       const w2l_state_holder *h, const w2l_state_holder *sb, size_t nsb,
                       const char *only, const w2l_complete_info *ci)
{
    fputs("{\"last_run\":", stdout);
    if (!run) {
        fputs("null", stdout);
    } else {
        char msg[sizeof ((w2l_error *)0)->msg + 64] = "";
        if (run->error) {
            snprintf(msg, sizeof msg, "%s", run->error);
            cli_redact(msg, sizeof msg);
        }
        putchar('{');
        jstr("outcome", run->outcome, 0);
        cli_json_time("started", run->started_ms);
        cli_json_time("ended", run->ended_ms);
        jstr("error", run->error ? msg : NULL, 1);
        jstr("job_id", run->job_id, 1);
        jstr("host", run->host, 1);
        printf(",\"pid\":%lld", (long long)run->pid);
        jnum("rows", run->rows, 0);
        jnum("checkpoint", run->checkpoint, 1);
        putchar('}');
    }
    fputs(",\"running\":", stdout);
    if (!h) {
        fputs("null", stdout);
    } else {
        putchar('{');
        jstr("job_id", h->job[0] ? h->job : NULL, 0);
        jstr("host", h->host[0] ? h->host : NULL, 1);
        printf(",\"pid\":%lld", h->pid);
        cli_json_time("since", h->since_ms);
        cli_json_time("lease_expires", h->expires_ms ? h->expires_ms : -1);
        jnum("lock_epoch", h->epoch, 1);
        putchar('}');
    }
    fputs(",\"standby\":[", stdout);
    for (size_t i = 0; i < nsb; i++) {
        printf("%s{", i ? "," : "");
        jstr("job_id", sb[i].job[0] ? sb[i].job : NULL, 0);
        jstr("host", sb[i].host, 1);
        printf(",\"pid\":%lld", sb[i].pid);
        cli_json_time("since", sb[i].since_ms);
        putchar('}');
    }
    putchar(']');
    printf(",\"checkpoint\":{");
    if (s->sealed) printf("\"sealed\":%" PRIu64, s->sealed);
    else fputs("\"sealed\":null", stdout);
    jstr("job_id", s->job, 1);
    jnum("epoch", s->epoch, 1);
    jstr("source_position", s->position, 1);
    putchar('}');
    print_snapshot_json(s);
    fputs(",\"tables\":[", stdout);
    /* every table of either list, in the order of the checkpoint list, then the others */
    size_t k = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? m->n : s->n;
        for (size_t i = 0; i < n; i++) {
            const char *name = pass ? m->v[i].name : s->v[i].name;
            const row *r = NULL;
            if (pass) {
                int seen = 0;
                for (size_t j = 0; j < s->n && !seen; j++) seen = strcmp(s->v[j].name, name) == 0;
                if (seen) continue;
            } else {
                r = &s->v[i];
            }
            const mrow *mr = find_m(m, name);
            printf("%s{", k++ ? "," : "");
            jstr("table", name, 0);
            if (r) {
                jnum("committed_checkpoint", r->committed, 1);
                jnum("lag_checkpoints", r->lag, 0);
                jnum("oldest_pending_checkpoint", r->oldest, 1);
            } else {
                fputs(",\"committed_checkpoint\":null,\"lag_checkpoints\":null,"
                      "\"oldest_pending_checkpoint\":null",
                      stdout);
            }
            if (mr) {
                jnum("snapshots", mr->snapshots, 0);
                jnum("manifests", mr->manifests, 0);
                jnum("data_files", mr->data_files, 0);
                jnum("delete_files", mr->delete_files, 0);
                cli_json_time("last_compaction", mr->last_compaction_ms);
            }
            if (r && r->quarantined) {
                fputs(",\"quarantined\":{", stdout);
                jstr("reason", r->quarantined, 0);
                jnum("rows_dropped", r->rows_quarantined, 0);
                putchar('}');
            } else {
                fputs(",\"quarantined\":null", stdout);
            }
            putchar('}');
        }
    }
    putchar(']');
    if (only && ci) {
        fputs(",\"complete\":{", stdout);
        jstr("table", only, 0);
        cli_json_time("through", ci->through_ms);
        jstr("source", ci->source, 1);
        jstr("job_id", ci->job_id, 1);
        jnum("checkpoint", ci->checkpoint, 1);
        putchar('}');
    }
    fputs("}\n", stdout);
}

static int on_table(void *ctx, const w2l_table_info *t)
{
    maint_ctx *m = ctx;
    if (skip(m->only, t->ns, t->table)) return 0;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        mrow *v = realloc(m->v, cap * sizeof *v);
        if (!v) return m->oom = 1;
        m->v = v;
        m->cap = cap;
    }
    size_t n = strlen(t->ns) + strlen(t->table) + 2;
    char *name = malloc(n);
    if (!name) return m->oom = 1;
    snprintf(name, n, "%s.%s", t->ns, t->table);
    m->v[m->n++] = (mrow){ name,          t->snapshots,    t->manifests,
                           t->data_files, t->delete_files, t->last_compaction_ms };
    return 0;
}

static int on_info(void *ctx, const w2l_checkpoint_info *ck)
{
    status_ctx *s = ctx;
    if (!ck->ns) {
        s->sealed = ck->sealed;
        s->epoch = ck->epoch;
        if (ck->job_id && !(s->job = strdup(ck->job_id))) return s->oom = 1;
        if (ck->source_position) {
            size_t n = strlen(ck->source_position) + 16;
            char *pos = malloc(n);
            if (!pos) return s->oom = 1;
            snprintf(pos, n, "%s", ck->source_position);
            cli_redact(pos, n);
            for (char *p = pos; *p; p++)
                if ((unsigned char)*p < 0x20) *p = ' ';
            s->position = pos;
        }
        s->snapshot = ck->snapshot;
        s->snap_skipped = ck->snapshot_skipped;
        if (ck->snapshot_next_ns && ck->snapshot_next_table &&
            !(s->snap_next = table_name(ck->snapshot_next_ns, ck->snapshot_next_table)))
            return s->oom = 1;
        if (ck->snapshot_nactive && !(s->snap = calloc(ck->snapshot_nactive, sizeof *s->snap)))
            return s->oom = 1;
        for (size_t i = 0; i < ck->snapshot_nactive; i++) {
            const w2l_snapshot_table *t = &ck->snapshot_active[i];
            if (!(s->snap[i].name = table_name(t->ns, t->table))) return s->oom = 1;
            s->snap[i].rows = t->rows;
            s->snap[i].ranges = t->ranges;
            s->nsnap++;
        }
        return 0;
    }
    if (skip(s->only, ck->ns, ck->table)) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        row *v = realloc(s->v, cap * sizeof *v);
        if (!v) return s->oom = 1;
        s->v = v;
        s->cap = cap;
    }
    size_t n = strlen(ck->ns) + strlen(ck->table) + 2;
    char *name = malloc(n);
    if (!name) return s->oom = 1;
    snprintf(name, n, "%s.%s", ck->ns, ck->table);
    char *why = NULL;
    if (ck->quarantined) {
        why = strdup(ck->quarantined);
        if (!why) {
            free(name);
            return s->oom = 1;
        }
        for (char *p = why; *p; p++)
            if ((unsigned char)*p < 0x20) *p = ' ';
    }
    s->v[s->n++] =
        (row){ name, ck->committed, ck->pending, ck->oldest_pending, why, ck->rows_quarantined };
    return 0;
}

int cmd_status(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    int rc = cli_open_lake("status", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    const char *only = args.extra[0], *format = args.extra[1];
    if (only && (!strchr(only, '.') || only[0] == '.' || !strchr(only, '.')[1])) {
        fprintf(stderr, "w2l status: --table: '%s' is not NAMESPACE.TABLE (see w2l help status)\n",
                only);
        cli_finish(conf, lake);
        return EXIT_USAGE;
    }
    if (format && strcmp(format, "json") != 0 && strcmp(format, "text") != 0) {
        fprintf(stderr, "w2l status: --format: expected text or json, got '%s' (see w2l help "
                        "status)\n",
                format);
        cli_finish(conf, lake);
        return EXIT_USAGE;
    }
    int json = format && strcmp(format, "json") == 0;
    status_ctx s = {0};
    maint_ctx m = {0};
    s.only = m.only = only;
    w2l_error err;
    /* the last run's record needs no lock */
    w2l_run_info run;
    w2l_rc lr = w2l_lake_last_run(lake, &run, &err);
    if (lr != W2L_OK && lr != W2L_NOTFOUND) {
        /* an unreadable record is reported, not fatal: the rest of status still helps */
        char line[sizeof err.msg];
        snprintf(line, sizeof line, "%s", err.msg);
        cli_redact(line, sizeof line);
        fprintf(stderr, "w2l status: warning: %s\n", line);
    }
    w2l_rc r = w2l_lake_checkpoints(lake, on_info, &s, &err);
    /* who runs on this warehouse now: read, never taken; once the store opened above */
    w2l_state_holder holder;
    w2l_rc hr = W2L_NOTFOUND;
    if (r == W2L_OK && (hr = w2l_lake_holder(lake, &holder, &err)) != W2L_OK &&
        hr != W2L_NOTFOUND) {
        char line[sizeof err.msg];
        snprintf(line, sizeof line, "%s", err.msg);
        for (char *c = line; *c; c++)
            if ((unsigned char)*c < 0x20) *c = ' ';
        cli_redact(line, sizeof line);
        fprintf(stderr, "w2l status: warning: cannot tell whether a job runs: %s\n", line);
    }
    /* who stands by: best effort as well */
    w2l_state_holder standby[16];
    size_t nsb = 0;
    if (r == W2L_OK && w2l_lake_standbys(lake, standby, 16, &nsb, &err) != W2L_OK) {
        char line[sizeof err.msg];
        snprintf(line, sizeof line, "%s", err.msg);
        cli_redact(line, sizeof line);
        fprintf(stderr, "w2l status: warning: cannot tell whether a standby waits: %s\n", line);
        nsb = 0;
    }
    size_t shown = nsb < 16 ? nsb : 16;
    if (r == W2L_OK && s.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    if (r == W2L_OK) r = w2l_lake_tables(lake, on_table, &m, &err);
    if (r == W2L_OK && m.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    w2l_complete_info ci;
    if (r == W2L_OK && only) r = get_complete(lake, only, &ci, &err);
    if (r != W2L_OK) {
        rc = cli_fail("status", &err, r);
    } else if (json) {
        print_json(&s, &m, lr == W2L_OK ? &run : NULL, hr == W2L_OK ? &holder : NULL, standby,
                   shown, only, only ? &ci : NULL);
    } else {
        if (!s.sealed) {
            printf("no sealed checkpoint yet\n");
        } else {
            printf("checkpoint %" PRIu64 " sealed", s.sealed);
            if (s.job) printf(" by job %s", s.job);
            if (s.epoch) printf(" (epoch %" PRIu64 ")", s.epoch);
            putchar('\n');
            if (s.position) printf("source position %s\n", s.position);
            else printf("source position none (changes were pushed without one)\n");
            if (s.snapshot) print_snapshot(&s);
        }
        /* both tables share the width of the name column */
        int w = 5;
        for (size_t i = 0; i < s.n; i++)
            if ((int)strlen(s.v[i].name) > w) w = (int)strlen(s.v[i].name);
        for (size_t i = 0; i < m.n; i++)
            if ((int)strlen(m.v[i].name) > w) w = (int)strlen(m.v[i].name);
        if (s.n) {
            printf("%-*s  %10s  %9s  %14s\n", w, "TABLE", "COMMITTED", "LAG(ckpt)",
                   "OLDEST-PENDING");
            for (size_t i = 0; i < s.n; i++) {
                char c[24] = "-", o[24] = "-";
                if (s.v[i].committed) snprintf(c, sizeof c, "%" PRIu64, s.v[i].committed);
                if (s.v[i].oldest) snprintf(o, sizeof o, "%" PRIu64, s.v[i].oldest);
                printf("%-*s  %10s  %9" PRIu64 "  %14s\n", w, s.v[i].name, c, s.v[i].lag, o);
            }
        }
        if (m.n) {
            int64_t now = cli_now_ms();
            if (s.n) putchar('\n');
            printf("%-*s  %9s  %9s  %10s  %12s  %15s\n", w, "TABLE", "SNAPSHOTS", "MANIFESTS",
                   "DATA-FILES", "DELETE-FILES", "LAST-COMPACTION");
            for (size_t i = 0; i < m.n; i++) {
                char age[32];
                printf("%-*s  %9" PRIu64 "  %9" PRIu64 "  %10" PRIu64 "  %12" PRIu64 "  %15s\n", w,
                       m.v[i].name, m.v[i].snapshots, m.v[i].manifests, m.v[i].data_files,
                       m.v[i].delete_files,
                       cli_age(age, sizeof age, m.v[i].last_compaction_ms, now));
            }
        }
        size_t nq = 0;
        for (size_t i = 0; i < s.n; i++) nq += s.v[i].quarantined != NULL;
        if (nq) {
            if (s.n || m.n) putchar('\n');
            printf("%-*s  %12s  %s\n", w, "QUARANTINED", "ROWS-DROPPED", "REASON");
            for (size_t i = 0; i < s.n; i++)
                if (s.v[i].quarantined)
                    printf("%-*s  %12" PRIu64 "  %s\n", w, s.v[i].name, s.v[i].rows_quarantined,
                           s.v[i].quarantined);
        }
        if (only) {
            if (s.n || m.n) putchar('\n');
            print_complete(only, &ci);
        }
        /* last, after an empty line: new lines go at the end, so scripts reading the first
         * ones keep working, and on a terminal the last line is the one in view */
        if (lr == W2L_OK) {
            putchar('\n');
            print_last_run(&run);
        }
        if (hr == W2L_OK) {
            if (lr != W2L_OK) putchar('\n');
            print_holder(&holder);
        }
        if (nsb) {
            if (lr != W2L_OK && hr != W2L_OK) putchar('\n');
            print_standbys(standby, nsb, shown);
        }
    }
    for (size_t i = 0; i < s.n; i++) {
        free(s.v[i].name);
        free(s.v[i].quarantined);
    }
    free(s.v);
    free(s.job);
    free(s.position);
    free(s.snap_next);
    for (size_t i = 0; i < s.nsnap; i++) free(s.snap[i].name);
    free(s.snap);
    for (size_t i = 0; i < m.n; i++) free(m.v[i].name);
    free(m.v);
    cli_finish(conf, lake);
    return rc;
}
