/*
 * w2l status: the newest sealed checkpoint (its job, epoch and the source position the
 * next run resumes from) and per table the newest checkpoint committed to it and its lag:
 * how many sealed checkpoints hold changes to it that are not committed yet (w2l recover,
 * or the next run, commits them); then, after an empty line, per table the figures table
 * maintenance acts on (w2l-maintain(1)): snapshots, manifests of the current snapshot, data
 * and delete files, and the age of the last compaction; last, the tables set aside under
 * ddl.policy=quarantine, with the changes dropped since and the reason. Read through
 * w2l_lake_checkpoints(3) and w2l_lake_tables(3); nothing is written. Passwords of URIs are
 * never printed. With --table NAMESPACE.TABLE only that table's lines, then the source time
 * through which it is complete (w2l_table_complete_through(3)) and where that comes from.
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

typedef struct status_ctx {
    row *v;
    size_t n, cap;
    int oom;
    const char *only; /* --table: "ns.table"; NULL: every table */
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

/* 1 when ns.table is not the one --table names. */
static int skip(const char *only, const char *ns, const char *table)
{
    size_t n = strlen(ns);
    return only &&
           !(strncmp(only, ns, n) == 0 && only[n] == '.' && strcmp(only + n + 1, table) == 0);
}

/* The completeness lines of --table. */
static w2l_rc print_complete(w2l_lake *lake, const char *only, w2l_error *err)
{
    const char *dot = strchr(only, '.');
    size_t nl = (size_t)(dot - only);
    char *ns = malloc(nl + 1);
    if (!ns) return w2l_error_set(err, W2L_NOMEM, "out of memory");
    memcpy(ns, only, nl);
    ns[nl] = '\0';
    w2l_complete_info ci;
    w2l_rc r = w2l_table_complete_through(lake, ns, dot + 1, &ci, err);
    free(ns);
    if (r != W2L_OK) return r;
    if (ci.through_ms < 0) {
        printf("%s complete through: unknown (no snapshot of it carries a mark yet)\n", only);
        return W2L_OK;
    }
    char iso[40];
    w2l_time_format(ci.through_ms, iso, sizeof iso);
    printf("%s complete through %s (%" PRId64 " ms)\n", only, iso, ci.through_ms);
    if (strcmp(ci.source, "job-file") == 0)
        printf("  from the job file of %s (checkpoint %" PRIu64
               "; the table's last commit is checkpoint %" PRIu64 ")\n",
               ci.job_id, ci.job_file_checkpoint, ci.checkpoint);
    else
        printf("  from the snapshot summary (checkpoint %" PRIu64 " of job %s)\n", ci.checkpoint,
               ci.job_id ? ci.job_id : "-");
    return W2L_OK;
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
        if (!ck->sealed) {
            printf("no sealed checkpoint yet\n");
            return 0;
        }
        printf("checkpoint %" PRIu64 " sealed", ck->sealed);
        if (ck->job_id) printf(" by job %s", ck->job_id);
        if (ck->epoch) printf(" (epoch %" PRIu64 ")", ck->epoch);
        putchar('\n');
        if (ck->source_position) {
            size_t n = strlen(ck->source_position) + 16;
            char *pos = malloc(n);
            if (!pos) return s->oom = 1;
            snprintf(pos, n, "%s", ck->source_position);
            cli_redact(pos, n);
            for (char *p = pos; *p; p++)
                if ((unsigned char)*p < 0x20) *p = ' ';
            printf("source position %s\n", pos);
            free(pos);
        } else {
            printf("source position none (changes were pushed without one)\n");
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
    const char *only = args.extra[0];
    if (only && (!strchr(only, '.') || only[0] == '.' || !strchr(only, '.')[1])) {
        fprintf(stderr, "w2l status: --table: '%s' is not NAMESPACE.TABLE (see w2l help status)\n",
                only);
        cli_finish(conf, lake);
        return EXIT_USAGE;
    }
    status_ctx s = {0};
    maint_ctx m = {0};
    s.only = m.only = only;
    w2l_error err;
    w2l_rc r = w2l_lake_checkpoints(lake, on_info, &s, &err);
    if (r == W2L_OK && s.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    if (r == W2L_OK) r = w2l_lake_tables(lake, on_table, &m, &err);
    if (r == W2L_OK && m.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    if (r != W2L_OK) {
        rc = cli_fail("status", &err, r);
    } else {
        /* both tables share the width of the name column */
        int w = 5;
        for (size_t i = 0; i < s.n; i++)
            if ((int)strlen(s.v[i].name) > w) w = (int)strlen(s.v[i].name);
        for (size_t i = 0; i < m.n; i++)
            if ((int)strlen(m.v[i].name) > w) w = (int)strlen(m.v[i].name);
        if (s.n) {
            printf("%-*s  %10s  %4s  %14s\n", w, "TABLE", "COMMITTED", "LAG", "OLDEST-PENDING");
            for (size_t i = 0; i < s.n; i++) {
                char c[24] = "-", o[24] = "-";
                if (s.v[i].committed) snprintf(c, sizeof c, "%" PRIu64, s.v[i].committed);
                if (s.v[i].oldest) snprintf(o, sizeof o, "%" PRIu64, s.v[i].oldest);
                printf("%-*s  %10s  %4" PRIu64 "  %14s\n", w, s.v[i].name, c, s.v[i].lag, o);
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
            r = print_complete(lake, only, &err);
            if (r != W2L_OK) rc = cli_fail("status", &err, r);
        }
    }
    for (size_t i = 0; i < s.n; i++) {
        free(s.v[i].name);
        free(s.v[i].quarantined);
    }
    free(s.v);
    for (size_t i = 0; i < m.n; i++) free(m.v[i].name);
    free(m.v);
    cli_finish(conf, lake);
    return rc;
}
