/*
 * The operations endpoint (lib/pipeline/exposition.c, endpoint.c, lib/io/http_server.c):
 *   - the Prometheus exposition: every sample's family has HELP and TYPE before it, label
 *     values escape quotes, backslashes and newlines, histogram buckets are cumulative and
 *     end with +Inf equal to _count, tables past metrics.max-tables are summed under
 *     table="other", numbers print as given;
 *   - the HTTP server on 127.0.0.1 (port 0): 404 for an unknown path, 405 for a POST, a
 *     port in use is W2L_IO naming the address, a malformed address W2L_CONFIG naming the
 *     key;
 *   - a push pipeline with metrics.listen: /readyz 503 until a checkpoint of the run is
 *     committed, then 200; /healthz 200; /status JSON; w2l_pipeline_stats();
 *   - the snapshot's progress: its families, its pace (rate, time left), /status
 *     "snapshot_progress" while one runs (null when none ran).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "support/support.h"
#include "io/http_server.h"
#include "event/emit.h"
#include "pipeline/exposition.h"

static w2l_error err;

/* ---------------------------------------------------------------- exposition ---- */

static char *expo(const w2l_table_metrics *t, size_t n, size_t max_tables)
{
    w2l_pipeline_info pi;
    memset(&pi, 0, sizeof pi);
    pi.committed = 7;
    pi.checkpoint_duration[0] = 2;
    pi.checkpoint_duration[W2L_LATENCY_BUCKETS] = 1;
    pi.checkpoint_duration_sum = 200.5;
    pi.process_cpu_secs = 1.25;
    w2l_buf b = {0};
    ck_assert_ok(w2l__exposition(&b, t, n, &pi, max_tables, &err), err);
    ck_assert_ok(w2l__buf_cstr(&b, &err), err);
    return (char *)b.data;
}

static w2l_table_metrics tm(const char *ns, const char *table, uint64_t rows)
{
    w2l_table_metrics m;
    memset(&m, 0, sizeof m);
    m.ns = ns;
    m.table = table;
    m.rows_in = m.rows_inserted = rows;
    m.rows_committed = rows / 2;
    m.commits = 3;
    m.last_committed_ckpt = rows;
    m.commit_latency[0] = 1;
    m.commit_latency[3] = 2;
    m.commit_latency_sum = 0.125;
    m.complete_through_ms = 1700000000123;
    return m;
}

/* 1 when text has the line. */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n') return 1;
    return 0;
}

START_TEST(every_family_has_help_and_type)
{
    w2l_table_metrics t[2] = {tm("db", "a", 10), tm("db", "b", 4)};
    char *x = expo(t, 2, 100);
    char helped[400][80], typed[400][80];
    size_t nh = 0, nt = 0, samples = 0;
    for (char *line = strtok(x, "\n"); line; line = strtok(NULL, "\n")) {
        char name[80];
        if (sscanf(line, "# HELP %79s", name) == 1) {
            snprintf(helped[nh++], 80, "%s", name);
            continue;
        }
        if (sscanf(line, "# TYPE %79s", name) == 1) {
            ck_assert_msg(nh && !strcmp(helped[nh - 1], name), "TYPE %s without HELP", name);
            snprintf(typed[nt++], 80, "%s", name);
            continue;
        }
        ck_assert_msg(line[0] != '#', "stray comment: %s", line);
        size_t k = strcspn(line, "{ ");
        snprintf(name, sizeof name, "%.*s", (int)k, line);
        /* a histogram's series belong to its family */
        const char *sfx[] = {"_bucket", "_sum", "_count"};
        int found = nt && !strcmp(typed[nt - 1], name);
        for (int i = 0; !found && i < 3; i++) {
            size_t ln = strlen(name), ls = strlen(sfx[i]);
            found = ln > ls && !strcmp(name + ln - ls, sfx[i]) &&
                    !strncmp(typed[nt - 1], name, ln - ls) && strlen(typed[nt - 1]) == ln - ls;
        }
        ck_assert_msg(found, "sample %s outside its family (last TYPE %s)", line,
                      nt ? typed[nt - 1] : "-");
        samples++;
    }
    ck_assert_uint_eq(nh, nt);
    ck_assert_uint_gt(samples, 50);
    for (size_t i = 0; i < nt; i++)
        for (size_t j = i + 1; j < nt; j++) ck_assert_str_ne(typed[i], typed[j]);
    w2l__free(x);
}
END_TEST

/* An unknown source lag is NaN beside w2l_source_lag_unknown 1, never 0; the commit lag
 * is its own gauge. */
START_TEST(unknown_lag_is_not_zero)
{
    w2l_pipeline_info pi;
    memset(&pi, 0, sizeof pi);
    pi.source_lag_ms = -1;
    pi.commit_lag_ms = 2500;
    w2l_buf b = {0};
    ck_assert_ok(w2l__exposition(&b, NULL, 0, &pi, 10, &err), err);
    ck_assert_ok(w2l__buf_cstr(&b, &err), err);
    const char *x = (const char *)b.data;
    ck_assert_msg(has_line(x, "w2l_source_lag_seconds NaN"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_source_lag_unknown 1"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_commit_lag_seconds 2.5"), "%s", x);
    w2l_buf_release(&b);
    pi.source_lag_ms = 1500;
    pi.commit_lag_ms = 0;
    ck_assert_ok(w2l__exposition(&b, NULL, 0, &pi, 10, &err), err);
    ck_assert_ok(w2l__buf_cstr(&b, &err), err);
    x = (const char *)b.data;
    ck_assert_msg(has_line(x, "w2l_source_lag_seconds 1.5"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_source_lag_unknown 0"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_commit_lag_seconds 0"), "%s", x);
    w2l_buf_release(&b);
}
END_TEST

/* The snapshot's figures: tables by state, rows, the estimate, chunks. */
START_TEST(snapshot_families)
{
    w2l_pipeline_info pi;
    memset(&pi, 0, sizeof pi);
    pi.source_snapshot = 1;
    pi.snapshot_tables = 10;
    pi.snapshot_tables_done = 3;
    pi.snapshot_rows = 1200000;
    pi.snapshot_rows_estimated = 5000000;
    pi.snapshot_chunks = 147;
    pi.snapshot_started_ms = 1700000000000;
    w2l_buf b = {0};
    ck_assert_ok(w2l__exposition(&b, NULL, 0, &pi, 10, &err), err);
    ck_assert_ok(w2l__buf_cstr(&b, &err), err);
    const char *x = (const char *)b.data;
    ck_assert_msg(has_line(x, "w2l_source_snapshot_running 1"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_snapshot_tables{state=\"total\"} 10"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_snapshot_tables{state=\"done\"} 3"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_snapshot_rows_total 1200000"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_snapshot_rows_estimated 5000000"), "%s", x);
    ck_assert_msg(has_line(x, "w2l_snapshot_chunks_total 147"), "%s", x);
    ck_assert_msg(strstr(x, "# TYPE w2l_snapshot_rows_total counter\n"), "%s", x);
    ck_assert_msg(strstr(x, "# TYPE w2l_snapshot_tables gauge\n"), "%s", x);
    w2l_buf_release(&b);
}
END_TEST

/* The rate over the rows since the snapshot began; the time left from the estimate, not
 * known without one, before a row, or past it; 0 once every table is read. */
START_TEST(snapshot_pace)
{
    w2l_pipeline_info pi;
    memset(&pi, 0, sizeof pi);
    double rate, eta;
    w2l__snapshot_pace(&pi, 1000, &rate, &eta); /* no snapshot */
    ck_assert(rate < 0 && eta < 0);
    pi.source_snapshot = 1;
    pi.snapshot_tables = 10;
    pi.snapshot_tables_done = 3;
    pi.snapshot_started_ms = 1000000;
    pi.snapshot_rows = 1200000;
    pi.snapshot_rows_estimated = 5000000;
    w2l__snapshot_pace(&pi, 1000000 + 30000, &rate, &eta); /* 30 s: 40k rows/s */
    ck_assert_double_eq_tol(rate, 40000, 1e-6);
    ck_assert_double_eq_tol(eta, 95, 1e-6); /* 3.8M rows left */
    w2l__snapshot_pace(&pi, 1000000, &rate, &eta); /* no time yet */
    ck_assert(rate < 0 && eta < 0);
    pi.snapshot_rows_estimated = 0; /* no estimate */
    w2l__snapshot_pace(&pi, 1000000 + 30000, &rate, &eta);
    ck_assert_double_eq_tol(rate, 40000, 1e-6);
    ck_assert(eta < 0);
    pi.snapshot_rows_estimated = 1000000; /* more rows than estimated */
    w2l__snapshot_pace(&pi, 1000000 + 30000, &rate, &eta);
    ck_assert(eta < 0);
    pi.snapshot_rows = 0; /* no row yet */
    pi.snapshot_rows_estimated = 5000000;
    w2l__snapshot_pace(&pi, 1000000 + 30000, &rate, &eta);
    ck_assert_double_eq_tol(rate, 0, 1e-9);
    ck_assert(eta < 0);
    pi.snapshot_rows = 4900000; /* every table read; the snapshot ended */
    pi.snapshot_tables_done = 10;
    pi.source_snapshot = 0;
    w2l__snapshot_pace(&pi, 1000000 + 30000, &rate, &eta);
    ck_assert(rate < 0);
    ck_assert_double_eq_tol(eta, 0, 1e-9);
}
END_TEST

START_TEST(label_values_are_escaped)
{
    w2l_table_metrics t[1] = {tm("we\"ird\\db", "line\nbreak", 5)};
    char *x = expo(t, 1, 100);
    ck_assert_msg(has_line(x, "w2l_table_changes_total{table=\"we\\\"ird\\\\db.line\\nbreak\"} 5"),
                  "%s", x);
    ck_assert_ptr_null(strstr(x, "line\nbreak"));
    w2l__free(x);
}
END_TEST

START_TEST(histograms_are_cumulative_with_inf)
{
    w2l_table_metrics t[1] = {tm("db", "a", 10)};
    char *x = expo(t, 1, 100);
    const char *want[] = {
        "w2l_table_commit_latency_seconds_bucket{table=\"db.a\",le=\"0.005\"} 1",
        "w2l_table_commit_latency_seconds_bucket{table=\"db.a\",le=\"0.025\"} 1",
        "w2l_table_commit_latency_seconds_bucket{table=\"db.a\",le=\"0.05\"} 3",
        "w2l_table_commit_latency_seconds_bucket{table=\"db.a\",le=\"120\"} 3",
        "w2l_table_commit_latency_seconds_bucket{table=\"db.a\",le=\"+Inf\"} 3",
        "w2l_table_commit_latency_seconds_sum{table=\"db.a\"} 0.125",
        "w2l_table_commit_latency_seconds_count{table=\"db.a\"} 3",
        "w2l_checkpoint_duration_seconds_bucket{le=\"0.005\"} 2",
        "w2l_checkpoint_duration_seconds_bucket{le=\"120\"} 2",
        "w2l_checkpoint_duration_seconds_bucket{le=\"+Inf\"} 3",
        "w2l_checkpoint_duration_seconds_sum 200.5",
        "w2l_checkpoint_duration_seconds_count 3",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(has_line(x, want[i]), "missing: %s", want[i]);
    w2l__free(x);
}
END_TEST

START_TEST(tables_beyond_the_bound_are_other)
{
    w2l_table_metrics t[5] = {tm("db", "t0", 10), tm("db", "t1", 20), tm("db", "t2", 30),
                              tm("db", "t3", 40), tm("db", "t4", 50)};
    t[3].quarantined = 1;
    t[4].complete_through_ms = -1;
    char *x = expo(t, 5, 2);
    const char *want[] = {
        "w2l_table_changes_total{table=\"db.t0\"} 10",
        "w2l_table_changes_total{table=\"db.t1\"} 20",
        "w2l_table_changes_total{table=\"other\"} 120",
        "w2l_table_rows_total{table=\"other\",op=\"insert\"} 120",
        "w2l_table_commits_total{table=\"other\"} 9",
        "w2l_table_last_committed_checkpoint{table=\"other\"} 30", /* the smallest */
        "w2l_table_quarantined{table=\"other\"} 1",
        /* committed: 15 + 40 (quarantined: all) + 25 */
        "w2l_table_changes_committed_total{table=\"other\"} 80",
        "w2l_table_changes_behind{table=\"other\"} 40",
        "w2l_table_commit_latency_seconds_count{table=\"other\"} 9",
        "w2l_table_complete_through_seconds{table=\"other\"} 1700000000.123",
        "w2l_tables{state=\"other\"} 3",
        "w2l_checkpoint_last_committed 7",
        "process_cpu_seconds_total 1.25",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(has_line(x, want[i]), "missing: %s", want[i]);
    ck_assert_ptr_null(strstr(x, "db.t2"));
    ck_assert_ptr_null(strstr(x, "db.t4"));
    w2l__free(x);
}
END_TEST

/* ------------------------------------------------------------------- HTTP ---- */

/* One request to 127.0.0.1:port; the status code, the body into body. */
static int http(int port, const char *method, const char *path, char *body, size_t bsz)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[300];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     "Content-Length: 0\r\n\r\n",
                     method, path);
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    static char resp[1 << 16];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof resp - 1 && (r = read(fd, resp + got, sizeof resp - 1 - got)) > 0)
        got += (size_t)r;
    resp[got] = '\0';
    close(fd);
    int status = 0;
    ck_assert_msg(sscanf(resp, "HTTP/1.%*d %d", &status) == 1, "no status line: %s", resp);
    const char *b = strstr(resp, "\r\n\r\n");
    if (body) snprintf(body, bsz, "%s", b ? b + 4 : "");
    return status;
}

static void echo(void *ctx, const char *method, const char *path, w2l__http_reply *out)
{
    (void)ctx;
    out->status = strcspn(path, "?") == 5 && strncmp(path, "/here", 5) == 0 ? 200 : 404;
    out->content_type = "text/plain";
    w2l__buf_printf(&out->body, NULL, "%s %s\n", method, path);
}

START_TEST(http_server_answers_and_refuses)
{
    w2l__http_server *s = NULL, *s2 = NULL;
    ck_assert_ok(w2l__http_server_start("127.0.0.1:0", "metrics.listen", echo, NULL, &s, &err),
                 err);
    int port = w2l__http_server_port(s);
    ck_assert_int_gt(port, 0);
    char body[512];
    ck_assert_int_eq(http(port, "GET", "/here", body, sizeof body), 200);
    ck_assert_str_eq(body, "GET /here\n");
    ck_assert_int_eq(http(port, "GET", "/elsewhere?x=1", body, sizeof body), 404);
    /* POST reaches the handler (the endpoint's /resync), with the query as sent */
    ck_assert_int_eq(http(port, "POST", "/here?table=a.b&x=%2F", body, sizeof body), 200);
    ck_assert_str_eq(body, "POST /here?table=a.b&x=%2F\n");
    ck_assert_int_eq(http(port, "DELETE", "/here", body, sizeof body), 405);
    ck_assert_int_eq(http(port, "PUT", "/here", body, sizeof body), 405);
    /* the port is taken */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    ck_assert_int_eq(w2l__http_server_start(addr, "metrics.listen", echo, NULL, &s2, &err), W2L_IO);
    ck_assert_ptr_null(s2);
    ck_assert_msg(strstr(err.msg, addr) && strstr(err.msg, "in use"), "%s", err.msg);
    w2l__http_server_stop(s);
    /* malformed addresses name the key */
    const char *bad[] = {"127.0.0.1", ":9464", "127.0.0.1:99999", "127.0.0.1:x", "[::1]9464",
                         "[::1:9464"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(w2l__http_server_start(bad[i], "metrics.listen", echo, NULL, &s2, &err),
                         W2L_CONFIG);
        ck_assert_msg(strstr(err.msg, "metrics.listen"), "%s: %s", bad[i], err.msg);
    }
}
END_TEST

START_TEST(pipeline_serves_probes)
{
    const char *wh = tmpdir_make("endpoint");
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "metrics.listen", "127.0.0.1:0", &err), err);
    w2l_pipeline *p = NULL;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_pipeline_info pi;
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_gt(pi.http_port, 0);
    ck_assert_int_eq(pi.ready, 0);
    char body[1 << 15];
    ck_assert_int_eq(http(pi.http_port, "GET", "/readyz", body, sizeof body), 503);
    ck_assert_int_eq(http(pi.http_port, "GET", "/healthz", body, sizeof body), 200);
    /* a second pipeline cannot have the port; a bad address is the key's */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", pi.http_port);
    w2l_conf *c2 = w2l_conf_dup(c);
    ck_assert_ok(w2l_conf_set(c2, "state", "mem", &err), err); /* the store is p's */
    ck_assert_ok(w2l_conf_set(c2, "metrics.listen", addr, &err), err);
    w2l_pipeline *p2 = NULL;
    ck_assert_int_eq(w2l_pipeline_new(c2, &p2, &err), W2L_IO);
    ck_assert_msg(strstr(err.msg, addr), "%s", err.msg);
    ck_assert_ok(w2l_conf_set(c2, "metrics.listen", "localhost", &err), err);
    ck_assert_int_eq(w2l_pipeline_new(c2, &p2, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "metrics.listen"), "%s", err.msg);
    w2l_conf_free(c2);
    uint64_t ck = 0;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &ck, &err), err);
    ck_assert_int_eq(http(pi.http_port, "GET", "/readyz", body, sizeof body), 200);
    ck_assert_int_eq(http(pi.http_port, "GET", "/status", body, sizeof body), 200);
    ck_assert_msg(strstr(body, "\"ready\":true") && strstr(body, "\"committed\":1"), "%s", body);
    ck_assert_msg(strstr(body, "\"commit_lag_seconds\":0"), "%s", body);
    ck_assert_msg(strstr(body, "\"snapshot_progress\":null"), "no snapshot ran: %s", body);
    /* a snapshot under way (as the mysql source reports it): its figures, rate, time left */
    w2l_emitter *em = w2l_pipeline_emitter(p);
    w2l__snap_progress sp = {10, 3, 1200, 5000, 12, w2l__now_ms() - 2000};
    w2l__emitter_set_snapshot(em, 1);
    w2l__emitter_set_snapshot_progress(em, &sp);
    ck_assert_int_eq(http(pi.http_port, "GET", "/status", body, sizeof body), 200);
    ck_assert_msg(strstr(body, "\"snapshot\":true,") &&
                      strstr(body, "\"snapshot_progress\":{\"tables\":10,\"tables_done\":3,"
                                   "\"rows\":1200,\"rows_estimated\":5000,\"chunks\":12,"),
                  "%s", body);
    ck_assert_msg(strstr(body, "\"rate_rows_per_s\":") && !strstr(body, "\"eta_s\":null"), "%s",
                  body);
    ck_assert_int_eq(http(pi.http_port, "GET", "/metrics", body, sizeof body), 200);
    ck_assert_msg(has_line(body, "w2l_snapshot_rows_total 1200"), "%s", body);
    ck_assert_msg(has_line(body, "w2l_snapshot_tables{state=\"done\"} 3"), "%s", body);
    w2l__snap_progress none = {0};
    w2l__emitter_set_snapshot_progress(em, &none);
    w2l__emitter_set_snapshot(em, 0);
    ck_assert_int_eq(http(pi.http_port, "GET", "/metrics", body, sizeof body), 200);
    ck_assert_msg(has_line(body, "w2l_checkpoint_last_committed 1"), "%s", body);
    ck_assert_msg(has_line(body, "w2l_ready 1"), "%s", body);
    ck_assert_int_eq(http(pi.http_port, "GET", "/nothing", body, sizeof body), 404);
    ck_assert_int_eq(http(pi.http_port, "PUT", "/metrics", body, sizeof body), 405);
    /* the same answers without HTTP */
    int status = 0;
    const char *ct = NULL;
    w2l_buf b = {0};
    ck_assert_ok(w2l_pipeline_endpoint(p, "GET", "/healthz", &status, &ct, &b, &err), err);
    ck_assert_int_eq(status, 200);
    w2l_buf_release(&b);
    /* POST /resync: a push pipeline has no source to read a table again; no table named;
     * GET is refused */
    ck_assert_int_eq(http(pi.http_port, "POST", "/resync?table=db.t", body, sizeof body), 400);
    ck_assert_msg(strstr(body, "no source"), "%s", body);
    ck_assert_int_eq(http(pi.http_port, "POST", "/resync?x=1", body, sizeof body), 400);
    ck_assert_msg(strstr(body, "DATABASE.TABLE"), "%s", body);
    ck_assert_int_eq(http(pi.http_port, "GET", "/resync?table=db.t", body, sizeof body), 405);
    ck_assert_int_eq(w2l_pipeline_resync(p, "db", "", &err), W2L_MISUSE);
    ck_assert_ok(w2l_pipeline_stats(p, &pi, sizeof pi, &err), err);
    ck_assert_int_eq(pi.ready, 1);
    ck_assert_uint_eq(pi.checkpoints_completed, 1);
    ck_assert_uint_gt(pi.process_rss_bytes, 0);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    tmpdir_remove(wh);
}
END_TEST

Suite *suite_endpoint(void)
{
    Suite *s = suite_create("endpoint");
    TCase *tc = tcase_create("endpoint");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_family_has_help_and_type);
    tcase_add_test(tc, label_values_are_escaped);
    tcase_add_test(tc, snapshot_families);
    tcase_add_test(tc, snapshot_pace);
    tcase_add_test(tc, unknown_lag_is_not_zero);
    tcase_add_test(tc, histograms_are_cumulative_with_inf);
    tcase_add_test(tc, tables_beyond_the_bound_are_other);
    tcase_add_test(tc, http_server_answers_and_refuses);
    tcase_add_test(tc, pipeline_serves_probes);
    suite_add_tcase(s, tc);
    return s;
}
