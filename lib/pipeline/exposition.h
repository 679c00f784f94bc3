/*
 * The Prometheus text exposition (format 0.0.4) of a pipeline's metrics: what /metrics of
 * the operations endpoint serves and w2l_pipeline_endpoint(3) returns. A pure function of
 * the figures, so that tests can feed it any (escaping, cardinality, histograms).
 */
#ifndef W2L_EXPOSITION_H
#define W2L_EXPOSITION_H

#include "../common/common.h"

/* Appends the exposition of tables t[0..n) (first-seen order) and the pipeline's figures
 * pi to out. Tables beyond the first max_tables (>= 1) are summed under table="other". */
w2l_rc w2l__exposition(w2l_buf *out, const w2l_table_metrics *t, size_t n,
                       const w2l_pipeline_info *pi, size_t max_tables, w2l_error *err);

/* The pace of the source's snapshot from pi's snapshot_* figures at wall time now_ms:
 * *rate rows read per second since it began, *eta_s seconds left at that rate to the
 * server's row estimate; -1 each when not known (no snapshot, it has ended: the rate; no
 * estimate, no row read yet, more rows read than estimated: the time left). 0 left once
 * every table is read. For /status and the metrics. */
void w2l__snapshot_pace(const w2l_pipeline_info *pi, int64_t now_ms, double *rate,
                        double *eta_s);

#endif
