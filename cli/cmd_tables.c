/*
 * w2l tables: one line per table of the lake — snapshots, records (the live rows: after
 * deletes, as `w2l cat` shows them), data and delete files, bytes, the last checkpoint
 * committed to it, its schema id, the manifests of its current snapshot and the age of its
 * last compaction, its partitioning (the partition-by clause without blanks, - when none) —
 * from each table's current metadata (w2l_lake_tables(3)), in aligned columns. New columns
 * go at the end, so scripts indexing columns keep working. --format json: one object per
 * table and line, with stable member names (w2l-tables(1)).
 *
 * Live rows: the snapshot summary's total-records when the table has no delete files, less
 * total-position-deletes when it has only position deletes (each deletes one row). An
 * equality delete may remove any number of rows, so a table with equality deletes is
 * counted by reading it (w2l_lake_scan(3), every delete applied) when it holds at most
 * SCAN_MAX records and the tables read so far leave room in SCAN_BUDGET; any other shows
 * the estimate total-records - position deletes - equality deletes, marked "~"
 * (records_exact false in JSON).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

enum { NCOLS = 11 };
#define SCAN_MAX 2000000     /* records: tables with equality deletes up to this are read */
#define SCAN_BUDGET 10000000 /* records read over all tables of one call */

/* One table as w2l_lake_tables() gave it. */
typedef struct tinfo {
    char *ns, *table, *partition_by, *job_id;
    w2l_table_info t; /* its strings are the ones above */
    uint64_t live;
    int exact;
} tinfo;

typedef struct grid {
    char *(*cells)[NCOLS];
    size_t n, cap;
    int oom;
    int64_t now_ms;
    tinfo *v;
    size_t nt, capt;
} grid;

static int add_row(grid *g, const char *const v[NCOLS])
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        void *p = realloc(g->cells, cap * sizeof *g->cells);
        if (!p) return g->oom = 1;
        g->cells = p;
        g->cap = cap;
    }
    for (int i = 0; i < NCOLS; i++) {
        g->cells[g->n][i] = strdup(v[i]);
        if (!g->cells[g->n][i]) g->oom = 1;
    }
    g->n++;
    return g->oom;
}

static int collect(void *ctx, const w2l_table_info *t)
{
    grid *g = ctx;
    if (g->nt == g->capt) {
        size_t cap = g->capt ? 2 * g->capt : 16;
        tinfo *v = realloc(g->v, cap * sizeof *v);
        if (!v) return g->oom = 1;
        g->v = v;
        g->capt = cap;
    }
    tinfo *x = &g->v[g->nt];
    memset(x, 0, sizeof *x);
    x->t = *t;
    x->ns = strdup(t->ns);
    x->table = strdup(t->table);
    x->partition_by = strdup(t->partition_by ? t->partition_by : "");
    x->job_id = t->job_id ? strdup(t->job_id) : NULL;
    g->nt++;
    if (!x->ns || !x->table || !x->partition_by || (t->job_id && !x->job_id)) return g->oom = 1;
    x->t.ns = x->ns;
    x->t.table = x->table;
    x->t.partition_by = x->partition_by;
    x->t.job_id = x->job_id;
    x->t.metadata = NULL; /* not kept */
    return 0;
}

static int count_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    (void)s;
    (void)row;
    (void)n;
    ++*(uint64_t *)ctx;
    return 0;
}

/* x->live and x->exact (see the head of the file). */
static w2l_rc live_rows(w2l_lake *lake, tinfo *x, uint64_t *budget, w2l_error *err)
{
    const w2l_table_info *t = &x->t;
    uint64_t pos = t->position_deletes, eq = t->equality_deletes;
    x->exact = 1;
    if (!t->delete_files || (!eq && !pos)) {
        x->live = t->rows;
    } else if (!eq) {
        x->live = t->rows > pos ? t->rows - pos : 0;
    } else if (t->rows <= SCAN_MAX && t->rows <= *budget) {
        *budget -= t->rows;
        uint64_t n = 0;
        w2l_rc r = w2l_lake_scan(lake, t->ns, t->table, t->current_snapshot_id, count_row, &n, err);
        if (r != W2L_OK) return r;
        x->live = n;
    } else {
        x->live = t->rows > pos + eq ? t->rows - pos - eq : 0;
        x->exact = 0;
    }
    return W2L_OK;
}

static void add_text_row(grid *g, const tinfo *x)
{
    const w2l_table_info *t = &x->t;
    char name[512], snaps[24], rows[26], files[24], dels[24], bytes[24], ckpt[24], schema[16],
        mf[24], comp[32];
    snprintf(name, sizeof name, "%s.%s", t->ns, t->table);
    snprintf(snaps, sizeof snaps, "%" PRIu64, t->snapshots);
    snprintf(rows, sizeof rows, "%s%" PRIu64, x->exact ? "" : "~", x->live);
    snprintf(files, sizeof files, "%" PRIu64, t->data_files);
    snprintf(dels, sizeof dels, "%" PRIu64, t->delete_files);
    snprintf(bytes, sizeof bytes, "%" PRIu64, t->bytes);
    if (t->last_checkpoint) snprintf(ckpt, sizeof ckpt, "%" PRIu64, t->last_checkpoint);
    else snprintf(ckpt, sizeof ckpt, "-");
    snprintf(schema, sizeof schema, "%d", (int)t->schema_id);
    snprintf(mf, sizeof mf, "%" PRIu64, t->manifests);
    cli_age(comp, sizeof comp, t->last_compaction_ms, g->now_ms);
    /* the clause without blanks, so that the line splits into columns at blanks */
    char part[256];
    size_t k = 0;
    for (const char *p = t->partition_by ? t->partition_by : ""; *p && k + 1 < sizeof part; p++)
        if (*p != ' ') part[k++] = *p;
    part[k] = '\0';
    if (!k) snprintf(part, sizeof part, "-");
    const char *v[NCOLS] = {name, snaps, rows, files, dels, bytes, ckpt, schema, mf, comp, part};
    add_row(g, v);
}

static void jstr(const char *key, const char *v)
{
    printf(",\"%s\":", key);
    if (v) cli_json_string(stdout, v, strlen(v));
    else fputs("null", stdout);
}

/* One table as one line of JSON (w2l-tables(1) lists the members). */
static void json_row(const tinfo *x)
{
    const w2l_table_info *t = &x->t;
    size_t n = strlen(t->ns) + strlen(t->table) + 2;
    char *name = malloc(n);
    fputs("{\"table\":", stdout);
    if (name) {
        snprintf(name, n, "%s.%s", t->ns, t->table);
        cli_json_string(stdout, name, strlen(name));
        free(name);
    } else {
        fputs("null", stdout);
    }
    jstr("namespace", t->ns);
    jstr("name", t->table);
    printf(",\"snapshots\":%" PRIu64 ",\"records\":%" PRIu64 ",\"records_exact\":%s"
           ",\"records_before_deletes\":%" PRIu64 ",\"position_deletes\":%" PRIu64
           ",\"equality_deletes\":%" PRIu64 ",\"data_files\":%" PRIu64
           ",\"delete_files\":%" PRIu64 ",\"bytes\":%" PRIu64,
           t->snapshots, x->live, x->exact ? "true" : "false", t->rows, t->position_deletes,
           t->equality_deletes, t->data_files, t->delete_files, t->bytes);
    if (t->last_checkpoint) printf(",\"checkpoint\":%" PRIu64, t->last_checkpoint);
    else fputs(",\"checkpoint\":null", stdout);
    jstr("job_id", t->job_id);
    printf(",\"schema_id\":%d,\"manifests\":%" PRIu64, (int)t->schema_id, t->manifests);
    if (t->current_snapshot_id >= 0)
        printf(",\"current_snapshot_id\":%" PRId64, t->current_snapshot_id);
    else
        fputs(",\"current_snapshot_id\":null", stdout);
    cli_json_time("last_commit", t->last_commit_ms);
    cli_json_time("last_compaction", t->last_compaction_ms);
    jstr("partition_by", t->partition_by && *t->partition_by ? t->partition_by : NULL);
    fputs("}\n", stdout);
}

int cmd_tables(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    int rc = cli_open_lake("tables", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    const char *format = args.extra[0];
    if (format && strcmp(format, "json") != 0 && strcmp(format, "text") != 0) {
        fprintf(stderr,
                "w2l tables: --format: expected text or json, got '%s' (see w2l help tables)\n",
                format);
        cli_finish(conf, lake);
        return EXIT_USAGE;
    }
    int json = format && strcmp(format, "json") == 0;
    static const char *const head[NCOLS] = { "TABLE",          "SNAPSHOTS",    "RECORDS",
                                             "DATA-FILES",     "DELETE-FILES", "BYTES",
                                             "CHECKPOINT",     "SCHEMA",       "MANIFESTS",
                                             "LAST-COMPACTION", "PARTITION-BY" };
    grid g = {0};
    g.now_ms = cli_now_ms();
    add_row(&g, head);
    w2l_error err;
    w2l_rc r = w2l_lake_tables(lake, collect, &g, &err);
    if (r == W2L_OK && g.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    uint64_t budget = SCAN_BUDGET;
    for (size_t i = 0; r == W2L_OK && i < g.nt; i++) r = live_rows(lake, &g.v[i], &budget, &err);
    if (r != W2L_OK) {
        rc = cli_fail("tables", &err, r);
    } else if (json) {
        for (size_t i = 0; i < g.nt; i++) json_row(&g.v[i]);
    } else {
        for (size_t i = 0; i < g.nt; i++) add_text_row(&g, &g.v[i]);
        if (g.oom) {
            rc = cli_fail("tables", &err, w2l_error_set(&err, W2L_NOMEM, "out of memory"));
        } else {
            size_t w[NCOLS] = {0};
            for (size_t i = 0; i < g.n; i++)
                for (int c = 0; c < NCOLS; c++)
                    if (strlen(g.cells[i][c]) > w[c]) w[c] = strlen(g.cells[i][c]);
            /* the name left-aligned, the rest right-aligned */
            for (size_t i = 0; i < g.n; i++) {
                printf("%-*s", (int)w[0], g.cells[i][0]);
                for (int c = 1; c < NCOLS; c++) printf("  %*s", (int)w[c], g.cells[i][c]);
                putchar('\n');
            }
        }
    }
    for (size_t i = 0; i < g.n; i++)
        for (int c = 0; c < NCOLS; c++) free(g.cells[i][c]);
    free(g.cells);
    for (size_t i = 0; i < g.nt; i++) {
        free(g.v[i].ns);
        free(g.v[i].table);
        free(g.v[i].partition_by);
        free(g.v[i].job_id);
    }
    free(g.v);
    cli_finish(conf, lake);
    return rc;
}
