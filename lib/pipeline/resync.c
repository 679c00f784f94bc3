/*
 * w2l_pipeline_resync(): a caller on any thread (the metrics endpoint's POST /resync, a
 * program linking the library) asks the running pipeline's source to read one table
 * again. The request waits until the source thread, between two transactions, hands it to
 * the source (its resync() method, V3), and returns the source's answer: a table it does
 * not read is W2L_NOTFOUND at once, not a failure of the job. What follows goes through
 * the pipeline like any DDL: the source's W2L RESYNC TABLE begin and end marks, the
 * writers holding the table's files in between, and the commit after the end replacing
 * the table's rows (ops.h).
 */
#include <stdio.h>

#include "pipeline_int.h"
#include "../source/source_int.h"
#include "../io/s3.h"

void w2l__pipeline_resync_serve(w2l_pipeline *p)
{
    mtx_lock(&p->resync.mu);
    if (!p->resync.asked || p->resync.answered) {
        mtx_unlock(&p->resync.mu);
        return;
    }
    char ns[256], table[256];
    snprintf(ns, sizeof ns, "%s", p->resync.ns);
    snprintf(table, sizeof table, "%s", p->resync.table);
    mtx_unlock(&p->resync.mu);
    w2l_error err;
    w2l_error_clear(&err);
    w2l_rc rc = w2l__source_resync(p->src, ns, table, &err);
    mtx_lock(&p->resync.mu);
    p->resync.rc = rc;
    p->resync.err = err;
    p->resync.answered = 1;
    cnd_broadcast(&p->resync.cv);
    mtx_unlock(&p->resync.mu);
}

w2l_rc w2l_pipeline_resync(w2l_pipeline *p, const char *ns, const char *table, w2l_error *err)
{
    if (!p || !ns || !*ns || !table || !*table)
        return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_resync: NULL or empty argument");
    if (strlen(ns) >= sizeof p->resync.ns || strlen(table) >= sizeof p->resync.table)
        return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_resync: name too long");
    if (!p->src)
        return w2l__fail(err, W2L_MISUSE,
                         "w2l_pipeline_resync: the pipeline has no source (changes come through "
                         "its emitter)");
    mtx_lock(&p->resync.mu);
    while (p->resync.asked && !atomic_load(&p->failed)) /* another caller's turn */
        cnd_wait(&p->resync.cv, &p->resync.mu);
    snprintf(p->resync.ns, sizeof p->resync.ns, "%s", ns);
    snprintf(p->resync.table, sizeof p->resync.table, "%s", table);
    p->resync.asked = 1;
    p->resync.answered = 0;
    w2l_rc rc = W2L_OK;
    /* the source thread answers between transactions; a stopped pipeline never does */
    struct timespec dl = w2l__deadline_ms(60000);
    while (!p->resync.answered) {
        if (atomic_load(&p->failed) || atomic_load(&p->stop) ||
            cnd_timedwait(&p->resync.cv, &p->resync.mu, &dl) == thrd_timedout) {
            rc = w2l__fail(err, W2L_UNAVAILABLE,
                           "resync of %s.%s: the pipeline's source did not take the request "
                           "(the pipeline is stopping, failed or not started)",
                           ns, table);
            break;
        }
    }
    if (p->resync.answered) {
        rc = p->resync.rc;
        if (rc != W2L_OK && err) *err = p->resync.err;
    }
    p->resync.asked = p->resync.answered = 0;
    cnd_broadcast(&p->resync.cv);
    mtx_unlock(&p->resync.mu);
    return rc;
}

/* s percent-encoded (all but letters, digits, '_' and '-'), appended to b. */
static w2l_rc put_encoded(w2l_buf *b, const char *s, w2l_error *err)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        int plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                    (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
        W2L_TRY(plain ? w2l_buf_append(b, c, 1, err) : w2l__buf_printf(b, err, "%%%02X", *c));
    }
    return W2L_OK;
}

w2l_rc w2l_resync_remote(const char *endpoint, const char *ns, const char *table, char *answer,
                         size_t size, w2l_error *err)
{
    if (answer && size) answer[0] = '\0';
    if (!endpoint || !*endpoint || !ns || !*ns || !table || !*table)
        return w2l__fail(err, W2L_MISUSE, "w2l_resync_remote: NULL or empty argument");
    w2l_buf url = {0}, out = {0};
    int has_scheme = strstr(endpoint, "://") != NULL;
    w2l_rc rc = w2l__buf_printf(&url, err, "%s%s/resync?table=", has_scheme ? "" : "http://",
                                endpoint);
    if (rc == W2L_OK) rc = put_encoded(&url, ns, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&url, ".", 1, err);
    if (rc == W2L_OK) rc = put_encoded(&url, table, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&url, err);
    w2l__http *h = NULL;
    if (rc == W2L_OK) rc = w2l__http_new(&h, err);
    w2l__http_resp resp;
    memset(&resp, 0, sizeof resp);
    if (rc == W2L_OK) {
        w2l__http_req req = {0};
        req.method = "POST";
        req.url = (const char *)url.data;
        req.out = &out;
        req.max_out = 64 * 1024;
        req.timeout_ms = 90000;
        req.connect_timeout_ms = 5000;
        rc = w2l__http_do(h, &req, &resp, err);
    }
    w2l__http_free(h);
    if (rc == W2L_OK && resp.transport_error)
        rc = w2l__fail(err, W2L_UNAVAILABLE,
                       "no w2l run answers at %s (%s): is it running with --metrics.listen there?",
                       endpoint, resp.error);
    size_t n = out.len;
    while (n && (((char *)out.data)[n - 1] == '\n' || ((char *)out.data)[n - 1] == '\r')) n--;
    if (rc == W2L_OK && answer && size)
        snprintf(answer, size, "%.*s", (int)n, out.data ? (const char *)out.data : "");
    if (rc == W2L_OK && resp.status != 202)
        rc = w2l__fail(err,
                       resp.status == 404   ? W2L_NOTFOUND
                       : resp.status == 503 ? W2L_UNAVAILABLE
                       : resp.status == 400 ? W2L_CONFIG
                                            : W2L_ERROR,
                       "w2l run at %s answered %ld: %.*s", endpoint, resp.status, (int)n,
                       out.data ? (const char *)out.data : "");
    w2l_buf_release(&url);
    w2l_buf_release(&out);
    return rc;
}
