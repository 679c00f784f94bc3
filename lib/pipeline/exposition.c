/*
 * The Prometheus text exposition of a pipeline (exposition.h). Names follow Prometheus'
 * conventions: a w2l_ prefix, base units (seconds, bytes), _total on counters, one metric
 * family per name with its HELP and TYPE, and a table="NAMESPACE.TABLE" label per table.
 *
 * Label cardinality: the first metrics.max-tables tables the pipeline saw have their own
 * label; the rest are summed under table="other" (no real table is called that: a real
 * one always has its namespace and a dot). First seen, not largest: the label set then
 * never changes within a run, so every counter only grows, as rate() needs (ranking by
 * size would move a table's counts out of "other" and make it go down). Gauges of "other":
 * the smallest last committed checkpoint and completeness mark, the number quarantined.
 */
#include <math.h>
#include <stdio.h>

#include "exposition.h"
#include "metrics.h"

/* A label value with \, " and newline escaped. */
static w2l_rc put_label(w2l_buf *b, const char *s, w2l_error *err)
{
    for (; *s; s++) {
        const char *e = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
        W2L_TRY(e ? w2l_buf_append(b, e, 2, err) : w2l_buf_append(b, s, 1, err));
    }
    return W2L_OK;
}

static w2l_rc put_double(w2l_buf *b, double v, w2l_error *err)
{
    if (isnan(v)) return w2l__buf_printf(b, err, "NaN");
    if (isinf(v)) return w2l__buf_printf(b, err, v > 0 ? "+Inf" : "-Inf");
    return w2l__buf_printf(b, err, "%.15g", v);
}

static w2l_rc family(w2l_buf *b, const char *name, const char *type, const char *help,
                     w2l_error *err)
{
    return w2l__buf_printf(b, err, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{table="t"[,extra]} — the start of a sample line, up to the value. */
static w2l_rc head(w2l_buf *b, const char *name, const char *suffix, const char *table,
                   const char *extra, w2l_error *err)
{
    W2L_TRY(w2l__buf_printf(b, err, "%s%s", name, suffix));
    if (!table && !extra) return w2l_buf_append(b, " ", 1, err);
    W2L_TRY(w2l_buf_append(b, "{", 1, err));
    if (table) {
        W2L_TRY(w2l_buf_append(b, "table=\"", 7, err));
        W2L_TRY(put_label(b, table, err));
        W2L_TRY(w2l_buf_append(b, "\"", 1, err));
    }
    if (extra) W2L_TRY(w2l__buf_printf(b, err, "%s%s", table ? "," : "", extra));
    return w2l_buf_append(b, "} ", 2, err);
}

static w2l_rc sample_u(w2l_buf *b, const char *name, const char *table, const char *extra,
                       uint64_t v, w2l_error *err)
{
    W2L_TRY(head(b, name, "", table, extra, err));
    return w2l__buf_printf(b, err, "%llu\n", (unsigned long long)v);
}

static w2l_rc sample_d(w2l_buf *b, const char *name, const char *table, const char *extra,
                       double v, w2l_error *err)
{
    W2L_TRY(head(b, name, "", table, extra, err));
    W2L_TRY(put_double(b, v, err));
    return w2l_buf_append(b, "\n", 1, err);
}

/* The lines of one histogram: counts per bucket (not cumulative) made cumulative. */
static w2l_rc histogram(w2l_buf *b, const char *name, const char *table, const uint64_t *counts,
                        double sum, w2l_error *err)
{
    uint64_t cum = 0;
    for (unsigned i = 0; i <= W2L_LATENCY_BUCKETS; i++) {
        char le[40];
        cum += counts[i];
        if (i < W2L_LATENCY_BUCKETS) snprintf(le, sizeof le, "le=\"%g\"", w2l__latency_bounds[i]);
        else snprintf(le, sizeof le, "le=\"+Inf\"");
        W2L_TRY(head(b, name, "_bucket", table, le, err));
        W2L_TRY(w2l__buf_printf(b, err, "%llu\n", (unsigned long long)cum));
    }
    W2L_TRY(head(b, name, "_sum", table, NULL, err));
    W2L_TRY(put_double(b, sum, err));
    W2L_TRY(w2l_buf_append(b, "\n", 1, err));
    W2L_TRY(head(b, name, "_count", table, NULL, err));
    return w2l__buf_printf(b, err, "%llu\n", (unsigned long long)cum);
}

/* One row of the per-table families: a table, or "other". */
typedef struct trow {
    char *label; /* "ns.table" or "other" */
    w2l_table_metrics m;
} trow;

static void fold(w2l_table_metrics *o, const w2l_table_metrics *t, int first)
{
    o->rows_in += t->rows_in;
    o->rows_inserted += t->rows_inserted;
    o->rows_updated += t->rows_updated;
    o->rows_deleted += t->rows_deleted;
    o->rows_committed += t->quarantined ? t->rows_in : t->rows_committed;
    o->files_written += t->files_written;
    o->bytes_written += t->bytes_written;
    o->commits += t->commits;
    o->schema_changes += t->schema_changes;
    o->pending_checkpoints += t->pending_checkpoints;
    o->rows_quarantined += t->rows_quarantined;
    o->quarantined += t->quarantined != 0;
    for (unsigned i = 0; i <= W2L_LATENCY_BUCKETS; i++)
        o->commit_latency[i] += t->commit_latency[i];
    o->commit_latency_sum += t->commit_latency_sum;
    if (first || t->last_committed_ckpt < o->last_committed_ckpt)
        o->last_committed_ckpt = t->last_committed_ckpt;
    if (first || (t->complete_through_ms >= 0 && (o->complete_through_ms < 0 ||
                                                  t->complete_through_ms < o->complete_through_ms)))
        o->complete_through_ms = t->complete_through_ms;
}

/* What a per-table family reads from a row. */
enum col {
    C_ROWS_OP, C_CHANGES, C_COMMITTED_CHANGES, C_BEHIND, C_FILES, C_BYTES, C_COMMITS,
    C_LATENCY, C_LAST_CKPT, C_PENDING, C_SCHEMA, C_QUAR, C_QUAR_ROWS, C_COMPLETE
};

static const struct tfam {
    const char *name, *type;
    enum col col;
    const char *help;
} tfams[] = {
    {"w2l_table_rows_total", "counter", C_ROWS_OP,
     "Row changes read from the source, by operation (an update counts once)."},
    {"w2l_table_changes_total", "counter", C_CHANGES,
     "Change records read from the source (an update's before and after images count two)."},
    {"w2l_table_changes_committed_total", "counter", C_COMMITTED_CHANGES,
     "Change records that a checkpoint committed to every table holds."},
    {"w2l_table_changes_behind", "gauge", C_BEHIND,
     "Change records read but not committed yet (events behind)."},
    {"w2l_table_files_written_total", "counter", C_FILES, "Data and delete files written."},
    {"w2l_table_written_bytes_total", "counter", C_BYTES, "Bytes of the files written."},
    {"w2l_table_commits_total", "counter", C_COMMITS,
     "Iceberg commits (one per checkpoint with changes)."},
    {"w2l_table_commit_latency_seconds", "histogram", C_LATENCY,
     "How long a committer took to commit a checkpoint that held the table's files."},
    {"w2l_table_last_committed_checkpoint", "gauge", C_LAST_CKPT,
     "The newest checkpoint committed to the table (0: none in this run)."},
    {"w2l_table_pending_checkpoints", "gauge", C_PENDING,
     "Checkpoints with the table's files that are not committed yet."},
    {"w2l_table_schema_changes_total", "counter", C_SCHEMA,
     "Schemas the DDL handler sent (a new table's first included)."},
    {"w2l_table_quarantined", "gauge", C_QUAR,
     "1 when the table is set aside (ddl.policy=quarantine); for other, how many are."},
    {"w2l_table_quarantined_changes_total", "counter", C_QUAR_ROWS,
     "Changes of a quarantined table dropped since it was set aside."},
    {"w2l_table_complete_through_seconds", "gauge", C_COMPLETE,
     "The source time (Unix seconds) through which the table is complete in the lake."},
};

static w2l_rc table_family(w2l_buf *b, const struct tfam *f, const trow *r, size_t nr,
                           w2l_error *err)
{
    W2L_TRY(family(b, f->name, f->type, f->help, err));
    for (size_t i = 0; i < nr; i++) {
        const w2l_table_metrics *m = &r[i].m;
        const char *t = r[i].label;
        uint64_t committed = m->rows_committed; /* a quarantined table's: all (rows()) */
        switch (f->col) {
        case C_ROWS_OP:
            W2L_TRY(sample_u(b, f->name, t, "op=\"insert\"", m->rows_inserted, err));
            W2L_TRY(sample_u(b, f->name, t, "op=\"update\"", m->rows_updated, err));
            W2L_TRY(sample_u(b, f->name, t, "op=\"delete\"", m->rows_deleted, err));
            break;
        case C_CHANGES: W2L_TRY(sample_u(b, f->name, t, NULL, m->rows_in, err)); break;
        case C_COMMITTED_CHANGES: W2L_TRY(sample_u(b, f->name, t, NULL, committed, err)); break;
        case C_BEHIND:
            W2L_TRY(sample_u(b, f->name, t, NULL,
                             m->rows_in > committed ? m->rows_in - committed : 0, err));
            break;
        case C_FILES: W2L_TRY(sample_u(b, f->name, t, NULL, m->files_written, err)); break;
        case C_BYTES: W2L_TRY(sample_u(b, f->name, t, NULL, m->bytes_written, err)); break;
        case C_COMMITS: W2L_TRY(sample_u(b, f->name, t, NULL, m->commits, err)); break;
        case C_LATENCY:
            W2L_TRY(histogram(b, f->name, t, m->commit_latency, m->commit_latency_sum, err));
            break;
        case C_LAST_CKPT:
            W2L_TRY(sample_u(b, f->name, t, NULL, m->last_committed_ckpt, err));
            break;
        case C_PENDING:
            W2L_TRY(sample_u(b, f->name, t, NULL, m->pending_checkpoints, err));
            break;
        case C_SCHEMA: W2L_TRY(sample_u(b, f->name, t, NULL, m->schema_changes, err)); break;
        case C_QUAR: W2L_TRY(sample_u(b, f->name, t, NULL, (uint64_t)m->quarantined, err)); break;
        case C_QUAR_ROWS:
            W2L_TRY(sample_u(b, f->name, t, NULL, m->rows_quarantined, err));
            break;
        case C_COMPLETE:
            if (m->complete_through_ms >= 0)
                W2L_TRY(sample_d(b, f->name, t, NULL, (double)m->complete_through_ms / 1000.0,
                                 err));
            break;
        }
    }
    return W2L_OK;
}

static w2l_rc pipeline_families(w2l_buf *b, const w2l_pipeline_info *pi, size_t folded,
                                w2l_error *err)
{
    const char *n;
    W2L_TRY(family(b, n = "w2l_checkpoint_duration_seconds", "histogram",
                   "From a checkpoint's barrier to its seal (every operator saved its state).",
                   err));
    W2L_TRY(histogram(b, n, NULL, pi->checkpoint_duration, pi->checkpoint_duration_sum, err));
    W2L_TRY(family(b, n = "w2l_checkpoints_completed_total", "counter",
                   "Checkpoints committed to every table in this run.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->checkpoints_completed, err));
    W2L_TRY(family(b, n = "w2l_checkpoints_failed_total", "counter",
                   "Checkpoints that failed to seal or to commit.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->checkpoints_failed, err));
    W2L_TRY(family(b, n = "w2l_checkpoint_last_sealed", "gauge", "The newest sealed checkpoint.",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->sealed, err));
    W2L_TRY(family(b, n = "w2l_checkpoint_last_committed", "gauge",
                   "The newest checkpoint committed to every table.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->committed, err));
    W2L_TRY(family(b, n = "w2l_source_lag_seconds", "gauge",
                   "How far the source position's time is behind now (0: caught up; NaN: not "
                   "known, see w2l_source_lag_unknown).",
                   err));
    W2L_TRY(sample_d(b, n, NULL, NULL,
                     pi->source_lag_ms < 0 ? NAN : (double)pi->source_lag_ms / 1000.0, err));
    W2L_TRY(family(b, n = "w2l_source_lag_unknown", "gauge",
                   "1 when the source lag is not known: no event yet, or the source unreachable "
                   "(every Kafka broker down, the MySQL connection being made again).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->source_lag_ms < 0, err));
    W2L_TRY(family(b, n = "w2l_commit_lag_seconds", "gauge",
                   "How long the oldest change read and not committed yet has waited (0: every "
                   "change read is committed).",
                   err));
    W2L_TRY(sample_d(b, n, NULL, NULL, (double)pi->commit_lag_ms / 1000.0, err));
    W2L_TRY(family(b, n = "w2l_source_snapshot_running", "gauge",
                   "1 while the source takes its initial snapshot.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, (uint64_t)pi->source_snapshot, err));
    W2L_TRY(family(b, n = "w2l_snapshot_tables", "gauge",
                   "Tables the source's snapshot reads: state=\"total\" in all, state=\"done\" "
                   "read (the final figures once it ends; 0 when none ran in this run).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, "state=\"total\"", pi->snapshot_tables, err));
    W2L_TRY(sample_u(b, n, NULL, "state=\"done\"", pi->snapshot_tables_done, err));
    W2L_TRY(family(b, n = "w2l_snapshot_rows_total", "counter",
                   "Rows the source's snapshot read in this run.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->snapshot_rows, err));
    W2L_TRY(family(b, n = "w2l_snapshot_rows_estimated", "gauge",
                   "The server's estimate of the rows of every table the snapshot reads (0: "
                   "none).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->snapshot_rows_estimated, err));
    W2L_TRY(family(b, n = "w2l_snapshot_chunks_total", "counter",
                   "Chunks (key ranges read in one statement) the source's snapshot read in "
                   "this run.",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->snapshot_chunks, err));
    W2L_TRY(family(b, n = "w2l_source_reconnects_total", "counter",
                   "Times the source connected again after losing its connection.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->source_reconnects, err));
    W2L_TRY(family(b, n = "w2l_changes_behind", "gauge",
                   "Change records read but not committed yet, all tables.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL,
                     pi->rows_in > pi->rows_committed ? pi->rows_in - pi->rows_committed : 0,
                     err));
    W2L_TRY(family(b, n = "w2l_tables", "gauge",
                   "Tables seen in this run; state=\"other\": those summed under table=\"other\".",
                   err));
    W2L_TRY(sample_u(b, n, NULL, "state=\"all\"", pi->tables, err));
    W2L_TRY(sample_u(b, n, NULL, "state=\"quarantined\"", pi->tables_quarantined, err));
    W2L_TRY(sample_u(b, n, NULL, "state=\"other\"", folded, err));
    W2L_TRY(family(b, n = "w2l_maintenance_actions_total", "counter",
                   "Table maintenance: compactions committed, snapshots expired, files removed.",
                   err));
    W2L_TRY(sample_u(b, n, NULL, "action=\"compaction\"", pi->compactions, err));
    W2L_TRY(sample_u(b, n, NULL, "action=\"snapshot_expiry\"", pi->snapshots_expired, err));
    W2L_TRY(sample_u(b, n, NULL, "action=\"file_removal\"", pi->files_removed, err));
    W2L_TRY(family(b, n = "w2l_key_index_keys", "gauge",
                   "Keys the writers' key indexes hold, in memory and spilled to disk "
                   "(write.delete-mode position).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->key_index_keys, err));
    W2L_TRY(family(b, n = "w2l_key_index_bytes", "gauge",
                   "Bytes of the writers' key indexes: where=\"memory\" (bounded by "
                   "writer.key-index-memory), where=\"disk\" (spilled runs in writer.spill-dir).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, "where=\"memory\"", pi->key_index_memory_bytes, err));
    W2L_TRY(sample_u(b, n, NULL, "where=\"disk\"", pi->key_index_disk_bytes, err));
    W2L_TRY(family(b, n = "w2l_key_index_rebuilds_total", "counter",
                   "Tables' key indexes loaded from the lake (before a table's first change in a "
                   "run, after a rename or a failed compaction follow-up).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->key_index_rebuilds, err));
    W2L_TRY(family(b, n = "w2l_healthy", "gauge",
                   "1 when /healthz answers 200 (no failure, every stage makes progress).", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, (uint64_t)pi->healthy, err));
    W2L_TRY(family(b, n = "w2l_ready", "gauge",
                   "1 when /readyz answers 200 (snapshot done, caught up within readyz.max-lag).",
                   err));
    W2L_TRY(sample_u(b, n, NULL, NULL, (uint64_t)pi->ready, err));
    W2L_TRY(family(b, n = "w2l_stage_stall_seconds", "gauge",
                   "The longest a running stage has gone without progress.", err));
    W2L_TRY(sample_d(b, n, NULL, NULL, pi->max_stall_secs, err));
    W2L_TRY(family(b, n = "process_resident_memory_bytes", "gauge",
                   "Resident memory size in bytes.", err));
    W2L_TRY(sample_u(b, n, NULL, NULL, pi->process_rss_bytes, err));
    W2L_TRY(family(b, n = "process_cpu_seconds_total", "counter",
                   "Total user and system CPU time spent in seconds.", err));
    return sample_d(b, n, NULL, NULL, pi->process_cpu_secs, err);
}

void w2l__snapshot_pace(const w2l_pipeline_info *pi, int64_t now_ms, double *rate,
                        double *eta_s)
{
    *rate = *eta_s = -1;
    if (!pi->snapshot_started_ms) return;
    if (pi->snapshot_tables && pi->snapshot_tables_done >= pi->snapshot_tables) {
        *eta_s = 0;
        return;
    }
    if (!pi->source_snapshot) return;
    int64_t took = now_ms - pi->snapshot_started_ms;
    if (took <= 0) return;
    *rate = (double)pi->snapshot_rows * 1000.0 / (double)took;
    if (*rate > 0 && pi->snapshot_rows_estimated > pi->snapshot_rows)
        *eta_s = (double)(pi->snapshot_rows_estimated - pi->snapshot_rows) / *rate;
}

w2l_rc w2l__exposition(w2l_buf *out, const w2l_table_metrics *t, size_t n,
                       const w2l_pipeline_info *pi, size_t max_tables, w2l_error *err)
{
    if (max_tables < 1) max_tables = 1;
    size_t own = n < max_tables ? n : max_tables, folded = n - own;
    size_t nr = own + (folded ? 1 : 0);
    trow *r = w2l__calloc(nr ? nr : 1, sizeof *r);
    W2L_NOMEM_IF(!r, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < own && rc == W2L_OK; i++) {
        r[i].m = t[i];
        if (t[i].quarantined) r[i].m.rows_committed = t[i].rows_in; /* nothing more comes */
        r[i].label = w2l__asprintf("%s.%s", t[i].ns, t[i].table);
        if (!r[i].label) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK && folded) {
        r[own].label = w2l__strdup("other");
        if (!r[own].label) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t i = own; i < n; i++) fold(&r[own].m, &t[i], i == own);
    }
    for (size_t f = 0; rc == W2L_OK && f < sizeof tfams / sizeof tfams[0]; f++)
        rc = table_family(out, &tfams[f], r, nr, err);
    if (rc == W2L_OK) rc = pipeline_families(out, pi, folded, err);
    for (size_t i = 0; i < nr; i++) w2l__free(r[i].label);
    w2l__free(r);
    return rc;
}
