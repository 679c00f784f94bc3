/*
 * w2l tables: one line per table of the lake — snapshots, records (total-records: before
 * deletes, which is why `w2l cat` may show fewer rows), data and delete files, bytes, the
 * last checkpoint committed to it, its schema id, the manifests of its current snapshot and
 * the age of its last compaction, its partitioning (the partition-by clause without blanks,
 * - when none) —
 * from each table's current metadata (w2l_lake_tables(3)),
 * in aligned columns. New columns go at the end, so scripts indexing columns keep working.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

enum { NCOLS = 11 };

typedef struct grid {
    char *(*cells)[NCOLS];
    size_t n, cap;
    int oom;
    int64_t now_ms;
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

static int on_table(void *ctx, const w2l_table_info *t)
{
    grid *g = ctx;
    char name[512], snaps[24], rows[24], files[24], dels[24], bytes[24], ckpt[24], schema[16],
        mf[24], comp[32];
    snprintf(name, sizeof name, "%s.%s", t->ns, t->table);
    snprintf(snaps, sizeof snaps, "%" PRIu64, t->snapshots);
    snprintf(rows, sizeof rows, "%" PRIu64, t->rows);
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
    return add_row(g, v);
}

int cmd_tables(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    int rc = cli_open_lake("tables", argc, argv, NULL, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    static const char *const head[NCOLS] = { "TABLE",          "SNAPSHOTS",    "RECORDS",
                                             "DATA-FILES",     "DELETE-FILES", "BYTES",
                                             "CHECKPOINT",     "SCHEMA",       "MANIFESTS",
                                             "LAST-COMPACTION", "PARTITION-BY" };
    grid g = {0};
    g.now_ms = cli_now_ms();
    add_row(&g, head);
    w2l_error err;
    w2l_rc r = w2l_lake_tables(lake, on_table, &g, &err);
    if (r == W2L_OK && g.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
    if (r != W2L_OK) {
        rc = cli_fail("tables", &err, r);
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
    for (size_t i = 0; i < g.n; i++)
        for (int c = 0; c < NCOLS; c++) free(g.cells[i][c]);
    free(g.cells);
    cli_finish(conf, lake);
    return rc;
}
