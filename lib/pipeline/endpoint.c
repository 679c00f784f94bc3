/*
 * The operations endpoint (README "Operating it as a service"): metrics.listen serves
 *   /metrics  the Prometheus text exposition (exposition.c)
 *   /healthz  200 while the pipeline has not failed and every running stage (the source
 *             thread, each operator thread) turned its loop within healthz.deadline; 503
 *             with the reason otherwise (a source stuck on a stalled server, a commit that
 *             hangs)
 *   /readyz   200 once the source's initial snapshot is done, a checkpoint of this run is
 *             committed and the source lag is within readyz.max-lag; 503 with the reason
 *   /status   JSON: checkpoints, the source, per table what w2l status prints
 * through lib/io's HTTP server (http_server.c, libmicrohttpd), on its own thread. The
 * same answers come from w2l_pipeline_endpoint(3) for an embedder's own server, and the
 * figures from w2l_pipeline_stats(3) and w2l_pipeline_metrics(3).
 *
 * Liveness comes from heartbeats: each stage stores the wall time of its loop's turn
 * (pipeline_int.h: src_beat_ms, node.beat_ms); an idle stage still turns every 100 ms (its
 * receive or the source's next() times out), so only one stuck inside a call goes stale.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/http_server.h"
#include "../json/json.h"
#include "exposition.h"
#include "pipeline_int.h"

/* ---------------------------------------------------------------- figures ---- */

static void process_figures(w2l_pipeline_info *pi)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        pi->process_cpu_secs = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &rss) == 2)
            pi->process_rss_bytes = rss * (unsigned long long)sysconf(_SC_PAGESIZE);
        fclose(f);
    }
}

/* The longest a running stage has gone without turning its loop, in ms; which one into
 * what (when not NULL). */
static int64_t max_stall(w2l_pipeline *p, char *what, size_t wsz)
{
    int64_t now = w2l__now_ms(), worst = 0;
    int64_t b = atomic_load(&p->src_beat_ms);
    if (b && now - b > worst) {
        worst = now - b;
        if (what) snprintf(what, wsz, "the source");
    }
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; p->nodes && i < total; i++) {
        node *n = &p->nodes[i];
        b = atomic_load(&n->beat_ms);
        if (b && now - b > worst) {
            worst = now - b;
            if (what)
                snprintf(what, wsz, "%s %u",
                         n->kind == W2L_OPERATOR_DDL      ? "DDL handler"
                         : n->kind == W2L_OPERATOR_WRITER ? "writer"
                                                          : "committer",
                         n->index);
        }
    }
    return worst;
}

/* The snapshot's figures: while it runs, and its final ones after it (the source keeps
 * them). */
static void snapshot_figures(w2l_pipeline *p, w2l_pipeline_info *pi)
{
    w2l__snap_progress sp;
    w2l__emitter_snapshot_progress(p->em, &sp);
    pi->snapshot_tables = sp.tables;
    pi->snapshot_tables_done = sp.tables_done;
    pi->snapshot_rows = sp.rows;
    pi->snapshot_rows_estimated = sp.rows_estimated;
    pi->snapshot_chunks = sp.chunks;
    pi->snapshot_started_ms = sp.started_ms;
}

/* Fills every figure; why_* (when not NULL) get the reason of a 503. */
static void figures(w2l_pipeline *p, w2l_pipeline_info *pi, char *why_h, char *why_r, size_t wsz)
{
    memset(pi, 0, sizeof *pi);
    w2l__metrics_totals(p->metrics, pi);
    mtx_lock(&p->mtx);
    pi->sealed = p->sealed;
    pi->committed = p->committed;
    uint64_t restored = p->restored;
    int started = p->started, done = p->done;
    mtx_unlock(&p->mtx);
    pi->failed = atomic_load(&p->failed);
    pi->source_lag_ms = p->src ? w2l__source_lag_ms(p->src) : 0;
    pi->commit_lag_ms = w2l__pipeline_commit_lag_ms(p);
    pi->source_snapshot = w2l__emitter_snapshot(p->em);
    snapshot_figures(p, pi);
    pi->source_reconnects = w2l__emitter_reconnects(p->em);
    pi->http_port = w2l__http_server_port(p->http);
    char stage[48] = "";
    int64_t stall = max_stall(p, stage, sizeof stage);
    pi->max_stall_secs = (double)stall / 1000.0;
    process_figures(pi);
    char h[200] = "", r[200] = "";
    if (pi->failed) snprintf(h, sizeof h, "the pipeline failed");
    else if (stall > p->healthz_deadline_ms)
        snprintf(h, sizeof h, "%s made no progress for %.1f s (healthz.deadline %.1f s)", stage,
                 (double)stall / 1000.0, (double)p->healthz_deadline_ms / 1000.0);
    pi->healthy = !*h;
    if (!pi->healthy) snprintf(r, sizeof r, "not healthy: %s", h);
    else if (!started || (p->src && !atomic_load(&p->src_polls)))
        snprintf(r, sizeof r, "the source has not started");
    else if (done) snprintf(r, sizeof r, "the pipeline has ended");
    else if (pi->source_snapshot) snprintf(r, sizeof r, "the initial snapshot is running");
    else if (pi->committed <= restored)
        snprintf(r, sizeof r, "no checkpoint of this run is committed yet");
    else if (pi->source_lag_ms > p->readyz_max_lag_ms)
        snprintf(r, sizeof r, "source lag %.1f s above readyz.max-lag %.1f s",
                 (double)pi->source_lag_ms / 1000.0, (double)p->readyz_max_lag_ms / 1000.0);
    pi->ready = !*r;
    if (why_h) snprintf(why_h, wsz, "%s", h);
    if (why_r) snprintf(why_r, wsz, "%s", r);
}

w2l_rc w2l_pipeline_stats(w2l_pipeline *p, w2l_pipeline_info *out, size_t size, w2l_error *err)
{
    if (!p || !out) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_stats: NULL argument");
    w2l_pipeline_info pi;
    figures(p, &pi, NULL, NULL, 0);
    memcpy(out, &pi, size < sizeof pi ? size : sizeof pi);
    return W2L_OK;
}

/* ------------------------------------------------------------------ answers ---- */

typedef struct tlist {
    w2l_table_metrics *v;
    size_t n, cap;
    int oom;
} tlist;

static int collect(void *ctx, const w2l_table_metrics *m)
{
    tlist *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        w2l_table_metrics *v = w2l__realloc(l->v, cap * sizeof *v);
        if (!v) return l->oom = 1;
        l->v = v;
        l->cap = cap;
    }
    w2l_table_metrics *c = &l->v[l->n];
    *c = *m;
    c->ns = w2l__strdup(m->ns);
    c->table = w2l__strdup(m->table);
    if (!c->ns || !c->table) {
        w2l__free((char *)c->ns), w2l__free((char *)c->table);
        return l->oom = 1;
    }
    l->n++;
    return 0;
}

static void tlist_free(tlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        w2l__free((char *)l->v[i].ns);
        w2l__free((char *)l->v[i].table);
    }
    w2l__free(l->v);
}

static w2l_rc tables(w2l_pipeline *p, tlist *l, w2l_error *err)
{
    memset(l, 0, sizeof *l);
    w2l_rc rc = w2l_pipeline_metrics(p, collect, l, err);
    if (rc == W2L_OK && l->oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory reading metrics");
    if (rc != W2L_OK) tlist_free(l);
    return rc;
}

static int add_u(w2l__json *o, const char *k, uint64_t v)
{
    return w2l__json_add(o, k, w2l__json_new_int64((int64_t)v));
}

static w2l__json *num_or_null(double v)
{
    return v < 0 ? w2l__json_new_null() : w2l__json_new_double(v);
}

/* /status "snapshot_progress": the snapshot's figures, its rate and time left; null when
 * no snapshot ran in this run. NULL: out of memory. */
static w2l__json *snapshot_json(const w2l_pipeline_info *pi)
{
    if (!pi->snapshot_started_ms) return w2l__json_new_null();
    double rate, eta;
    w2l__snapshot_pace(pi, w2l__now_ms(), &rate, &eta);
    w2l__json *o = w2l__json_new_object();
    char iso[40];
    w2l_time_format(pi->snapshot_started_ms, iso, sizeof iso);
    if (!o || add_u(o, "tables", pi->snapshot_tables) ||
        add_u(o, "tables_done", pi->snapshot_tables_done) || add_u(o, "rows", pi->snapshot_rows) ||
        add_u(o, "rows_estimated", pi->snapshot_rows_estimated) ||
        add_u(o, "chunks", pi->snapshot_chunks) ||
        w2l__json_add(o, "started", w2l__json_new_string(iso)) ||
        w2l__json_add(o, "rate_rows_per_s", num_or_null(rate)) ||
        w2l__json_add(o, "eta_s", num_or_null(eta))) {
        w2l__json_free(o);
        return NULL;
    }
    return o;
}

/* /status: what w2l status prints, from the running pipeline's own view. */
static w2l_rc status_json(w2l_pipeline *p, w2l_buf *body, w2l_error *err)
{
    w2l_pipeline_info pi;
    char why_h[200], why_r[200];
    figures(p, &pi, why_h, why_r, sizeof why_h);
    tlist l;
    W2L_TRY(tables(p, &l, err));
    const char *job = NULL;
    w2l_conf_get(p->conf, "job-id", &job, NULL);
    w2l__json *j = w2l__json_new_object(), *src = w2l__json_new_object(),
              *ck = w2l__json_new_object(), *arr = w2l__json_new_array();
    int bad = !j || !src || !ck || !arr;
    mtx_lock(&p->mtx);
    int done = p->done;
    w2l_rc code = p->first_err.code;
    mtx_unlock(&p->mtx);
    bad = bad || w2l__json_add(j, "state", w2l__json_new_string(pi.failed ? "failed"
                                                                 : done   ? "ended"
                                                                          : "running"));
    if (pi.failed) bad = bad || w2l__json_add(j, "error", w2l__json_new_string(w2l_rc_name(code)));
    bad = bad || w2l__json_add(j, "role", w2l__json_new_string("active"));
    bad = bad || w2l__json_add(j, "job", job ? w2l__json_new_string(job) : w2l__json_new_null());
    bad = bad || w2l__json_add(j, "healthy", w2l__json_new_bool(pi.healthy)) ||
          w2l__json_add(j, "ready", w2l__json_new_bool(pi.ready));
    if (!pi.healthy) bad = bad || w2l__json_add(j, "not_healthy", w2l__json_new_string(why_h));
    if (!pi.ready) bad = bad || w2l__json_add(j, "not_ready", w2l__json_new_string(why_r));
    bad = bad || add_u(ck, "sealed", pi.sealed) || add_u(ck, "committed", pi.committed) ||
          add_u(ck, "completed", pi.checkpoints_completed) ||
          add_u(ck, "failed", pi.checkpoints_failed);
    if (pi.complete_through_ms >= 0) {
        char iso[40];
        w2l_time_format(pi.complete_through_ms, iso, sizeof iso);
        bad = bad || w2l__json_add(ck, "complete_through", w2l__json_new_string(iso));
    }
    bad = bad || w2l__json_add(j, "checkpoints", ck);
    ck = NULL;
    bad = bad ||
          w2l__json_add(src, "lag_seconds",
                        pi.source_lag_ms < 0 ? w2l__json_new_null()
                                             : w2l__json_new_double(pi.source_lag_ms / 1e3)) ||
          w2l__json_add(src, "commit_lag_seconds",
                        w2l__json_new_double(pi.commit_lag_ms / 1e3)) ||
          w2l__json_add(src, "snapshot", w2l__json_new_bool(pi.source_snapshot)) ||
          add_u(src, "reconnects", pi.source_reconnects) ||
          add_u(src, "changes_behind", pi.rows_in - pi.rows_committed);
    bad = bad || w2l__json_add(src, "snapshot_progress", snapshot_json(&pi));
    bad = bad || w2l__json_add(j, "source", src);
    src = NULL;
    w2l__json *ki = w2l__json_new_object();
    bad = bad || !ki || add_u(ki, "keys", pi.key_index_keys) ||
          add_u(ki, "memory_bytes", pi.key_index_memory_bytes) ||
          add_u(ki, "disk_bytes", pi.key_index_disk_bytes) ||
          add_u(ki, "rebuilds", pi.key_index_rebuilds);
    if (bad) w2l__json_free(ki);
    else bad = w2l__json_add(j, "key_index", ki);
    for (size_t i = 0; !bad && i < l.n; i++) {
        const w2l_table_metrics *m = &l.v[i];
        w2l__json *t = w2l__json_new_object();
        char *name = w2l__asprintf("%s.%s", m->ns, m->table);
        bad = !t || !name || w2l__json_add(t, "table", w2l__json_new_string(name)) ||
              add_u(t, "committed", m->last_committed_ckpt) ||
              add_u(t, "pending", m->pending_checkpoints) || add_u(t, "changes", m->rows_in) ||
              add_u(t, "commits", m->commits) || add_u(t, "files", m->files_written) ||
              add_u(t, "bytes", m->bytes_written) ||
              add_u(t, "schema_changes", m->schema_changes) ||
              add_u(t, "compactions", m->compactions) ||
              w2l__json_add(t, "quarantined", w2l__json_new_bool(m->quarantined));
        if (!bad && m->quarantined) bad = add_u(t, "changes_dropped", m->rows_quarantined);
        w2l__free(name);
        if (bad) w2l__json_free(t);
        else bad = w2l__json_append(arr, t);
    }
    bad = bad || w2l__json_add(j, "tables", arr);
    arr = NULL;
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j), w2l__json_free(src), w2l__json_free(ck), w2l__json_free(arr);
    tlist_free(&l);
    W2L_NOMEM_IF(!text, err);
    w2l_rc rc = w2l__buf_printf(body, err, "%s\n", text);
    w2l__free(text);
    return rc;
}

/* POST /resync?table=DB.TABLE: w2l_pipeline_resync(). */
static w2l_rc resync(w2l_pipeline *p, const char *method, const char *query, int *status,
                     w2l_buf *body, w2l_error *err)
{
    if (strcmp(method, "POST") != 0) {
        *status = 405;
        return w2l__buf_printf(body, err, "method %s not allowed on /resync: POST\n", method);
    }
    const char *q = strstr(query, "table=");
    char name[520] = "";
    if (q && (q == query + 1 || q[-1] == '&')) {
        size_t n = strcspn(q + 6, "&");
        size_t o = 0;
        for (size_t i = 0; i < n && o + 1 < sizeof name; i++) { /* %XX decoded */
            const char *c = q + 6 + i;
            if (*c == '%' && i + 2 < n + 1 && c[1] && c[2]) {
                char hx[3] = {c[1], c[2], 0};
                name[o++] = (char)strtol(hx, NULL, 16);
                i += 2;
            } else
                name[o++] = *c == '+' ? ' ' : *c;
        }
        name[o] = '\0';
    }
    char *dot = strchr(name, '.');
    if (!dot || dot == name || !dot[1]) {
        *status = 400;
        return w2l__buf_printf(body, err, "POST /resync?table=DATABASE.TABLE: no table named\n");
    }
    *dot = '\0';
    w2l_error e;
    w2l_error_clear(&e);
    w2l_rc rc = w2l_pipeline_resync(p, name, dot + 1, &e);
    *status = rc == W2L_OK             ? 202
              : rc == W2L_NOTFOUND     ? 404
              : rc == W2L_UNAVAILABLE  ? 503
              : rc == W2L_CONFIG || rc == W2L_MISUSE ? 400
                                       : 500;
    if (rc == W2L_OK)
        return w2l__buf_printf(body, err, "%s.%s is read again; its rows are replaced when that "
                                          "ends\n",
                               name, dot + 1);
    return w2l__buf_printf(body, err, "%s\n", e.msg);
}

w2l_rc w2l_pipeline_endpoint(w2l_pipeline *p, const char *method, const char *path, int *status,
                             const char **content_type, w2l_buf *body, w2l_error *err)
{
    if (!p || !method || !path || !status || !content_type || !body)
        return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_endpoint: NULL argument");
    const char *text = "text/plain; charset=utf-8";
    *content_type = text;
    size_t pl = strcspn(path, "?");
    if (pl == 7 && !strncmp(path, "/resync", pl))
        return resync(p, method, path + pl, status, body, err);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        *status = 405;
        return w2l__buf_printf(body, err, "method %s not allowed: GET or HEAD\n", method);
    }
    w2l_rc ha_rc = W2L_OK;
    if (w2l__ha_answer(p, path, pl, status, content_type, body, &ha_rc, err)) return ha_rc;
    char why_h[200], why_r[200];
    w2l_pipeline_info pi;
    if (pl == 8 && !strncmp(path, "/metrics", pl)) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        figures(p, &pi, NULL, NULL, 0);
        tlist l;
        W2L_TRY(tables(p, &l, err));
        w2l_rc rc = w2l__exposition(body, l.v, l.n, &pi, p->max_tables, err);
        tlist_free(&l);
        if (rc == W2L_OK)
            rc = w2l__buf_printf(body, err,
                                 "# HELP w2l_ha_role 1 for this process's role in its job: "
                                 "active (holds the state store) or standby (waits for it)\n"
                                 "# TYPE w2l_ha_role gauge\n"
                                 "w2l_ha_role{role=\"active\"} 1\n"
                                 "w2l_ha_role{role=\"standby\"} 0\n");
        *status = rc == W2L_OK ? 200 : 500;
        return rc;
    }
    if (pl == 8 && !strncmp(path, "/healthz", pl)) {
        figures(p, &pi, why_h, why_r, sizeof why_h);
        *status = pi.healthy ? 200 : 503;
        return w2l__buf_printf(body, err, "%s\n", pi.healthy ? "ok" : why_h);
    }
    if (pl == 7 && !strncmp(path, "/readyz", pl)) {
        figures(p, &pi, why_h, why_r, sizeof why_h);
        *status = pi.ready ? 200 : 503;
        return w2l__buf_printf(body, err, "%s\n", pi.ready ? "ok" : why_r);
    }
    if (pl == 7 && !strncmp(path, "/status", pl)) {
        *content_type = "application/json";
        w2l_rc rc = status_json(p, body, err);
        *status = rc == W2L_OK ? 200 : 500;
        return rc;
    }
    *status = 404;
    return w2l__buf_printf(body, err, "not found: /metrics, /healthz, /readyz, /status\n");
}

/* ------------------------------------------------------------------- server ---- */

static void on_request(void *ctx, const char *method, const char *path, w2l__http_reply *out)
{
    w2l_error err;
    w2l_error_clear(&err);
    w2l_rc rc = w2l_pipeline_endpoint(ctx, method, path, &out->status, &out->content_type,
                                      &out->body, &err);
    if (rc != W2L_OK) {
        out->status = 500;
        out->body.len = 0;
        w2l__buf_printf(&out->body, NULL, "%s\n", err.msg);
    }
}

w2l_rc w2l__endpoint_start(w2l_pipeline *p, w2l_error *err)
{
    if (p->http) return W2L_OK; /* started by the standby (ha.c) */
    int64_t v;
    W2L_TRY(w2l_conf_get_int(p->conf, "metrics.max-tables", &v, err));
    p->max_tables = (size_t)v;
    W2L_TRY(w2l_conf_get_int(p->conf, "readyz.max-lag", &p->readyz_max_lag_ms, err));
    W2L_TRY(w2l_conf_get_int(p->conf, "healthz.deadline", &p->healthz_deadline_ms, err));
    const char *listen = NULL;
    W2L_TRY(w2l_conf_get(p->conf, "metrics.listen", &listen, err));
    if (!listen || !*listen) return W2L_OK;
    W2L_TRY(w2l__http_server_start(listen, "metrics.listen", on_request, p, &p->http, err));
    w2l__log(W2L_LOG_INFO, "metrics: serving /metrics /healthz /readyz /status on %s (port %d)",
             listen, w2l__http_server_port(p->http));
    return W2L_OK;
}

void w2l__endpoint_stop(w2l_pipeline *p)
{
    w2l__http_server_stop(p->http);
    p->http = NULL;
}
