/*
 * The "mysql" source's chunk readers: source.snapshot-parallelism threads, each with a
 * connection of its own. A reader takes one chunk at a time: it opens a consistent
 * snapshot, reports the snapshot's binlog position (the coordinator waits for that, so no
 * event after it is emitted before the chunk), reads the chunk's rows into memory
 * (converted, their bytes copied into the chunk's arena) and ends the transaction at once:
 * no transaction stays open longer than one chunk's SELECT.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"
#include "../common/thread.h"

typedef struct reader {
    thrd_t th;
    int started;
    w2l__my *conn;
    struct snap_workers *ws;
} reader;

struct snap_workers {
    mtx_t mu;
    cnd_t cv_job, cv_done;
    int stop;
    unsigned n, idle;
    snap_job *slot;          /* handed out, not taken yet */
    mysql_source *ms;        /* read only by the readers: configuration and flavour */
    reader *r;
};

w2l_rc w2l__ms_snap_txn(const mysql_source *ms, w2l__my *c, char *file, size_t fsize,
                        uint64_t *pos, w2l_error *err)
{
    if (ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL) {
        /* MySQL reports no position for a snapshot: no commit can happen between reading
         * the position and starting the snapshot, for these two statements */
        W2L_TRY(w2l__my_exec(c, "FLUSH TABLES WITH READ LOCK", err));
        w2l_rc rc = w2l__ms_read_binlog_status(ms, c, file, fsize, pos, err);
        if (rc == W2L_OK) rc = w2l__my_exec(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err);
        w2l_error e2;
        w2l_rc urc = w2l__my_exec(c, "UNLOCK TABLES", &e2);
        if (rc == W2L_OK && urc != W2L_OK) {
            *err = e2;
            rc = urc;
        }
        return rc;
    }
    W2L_TRY(w2l__my_exec(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err));
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c, "SHOW STATUS LIKE 'binlog_snapshot_%'", 0, &r, err));
    char **row;
    unsigned long *len;
    int k, have = 0;
    file[0] = '\0';
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        if (!row[0] || !row[1]) continue;
        if (!strcasecmp(row[0], "Binlog_snapshot_file")) {
            snprintf(file, fsize, "%.*s", (int)len[1], row[1]);
            have |= 1;
        } else if (!strcasecmp(row[0], "Binlog_snapshot_position")) {
            *pos = strtoull(row[1], NULL, 10);
            have |= 2;
        }
    }
    w2l__my_res_free(r);
    if (k < 0) return err->code;
    if (have != 3 || !file[0])
        return w2l__fail(err, W2L_CONFIG,
                         "mysql source %s: no binlog snapshot position (is log_bin on?)",
                         w2l__my_name(c));
    return W2L_OK;
}

void w2l__ms_job_free(snap_job *j)
{
    if (!j) return;
    w2l__free(j->sql);
    w2l__free(j->cols);
    w2l__free(j->pk);
    w2l__free(j->vals);
    w2l__ms_key_free(&j->last);
    w2l__arena_release(&j->arena);
    w2l__free(j->coerced);
    w2l__free(j);
}

typedef struct collect_ctx {
    snap_job *j;
    w2l_buf key;             /* the last row's key texts: (size_t length, bytes)... */
} collect_ctx;

static w2l_rc collect(void *ctx, const w2l_value *vals, char **texts, const unsigned long *lens,
                      w2l_error *err)
{
    collect_ctx *cc = ctx;
    snap_job *j = cc->j;
    if (j->nrows == j->cap) {
        size_t nc = j->cap ? j->cap * 2 : 256;
        w2l_value *n = w2l__realloc(j->vals, nc * (j->ncols ? j->ncols : 1) * sizeof *n);
        W2L_NOMEM_IF(!n, err);
        j->vals = n;
        j->cap = nc;
    }
    w2l_value *d = &j->vals[j->nrows * j->ncols];
    memcpy(d, vals, j->ncols * sizeof *d);
    for (size_t i = 0; i < j->ncols; i++) {
        w2l_type_id id = j->cols[i].ice.id;
        if (d[i].is_null || (id != W2L_TYPE_STRING && id != W2L_TYPE_BINARY)) continue;
        char *p = w2l__arena_alloc(&j->arena, d[i].v.bytes.len ? d[i].v.bytes.len : 1);
        W2L_NOMEM_IF(!p, err);
        memcpy(p, d[i].v.bytes.ptr, d[i].v.bytes.len);
        d[i].v.bytes.ptr = p;
    }
    cc->key.len = 0;
    for (size_t k = 0; k < j->npk; k++) {
        size_t l = lens[j->pk[k]];
        W2L_TRY(w2l_buf_append(&cc->key, &l, sizeof l, err));
        W2L_TRY(w2l_buf_append(&cc->key, texts[j->pk[k]], l, err));
    }
    j->nrows++;
    return W2L_OK;
}

static w2l_rc last_key(snap_job *j, const w2l_buf *kb, w2l_error *err)
{
    char *v[64];
    size_t l[64], n = 0;
    const char *p = (const char *)kb->data, *e = p + kb->len;
    while (p < e && n < 64) {
        memcpy(&l[n], p, sizeof l[n]);
        p += sizeof l[n];
        v[n] = (char *)p;
        p += l[n++];
    }
    return w2l__ms_key_copy(&j->last, v, l, n, err);
}

static void post(struct snap_workers *ws, snap_job *j, int done, w2l_rc rc, const w2l_error *e)
{
    mtx_lock(&ws->mu);
    if (done) {
        j->done = 1;
        j->rc = rc;
        if (rc != W2L_OK) j->err = *e;
    } else
        j->have_pos = 1;
    cnd_broadcast(&ws->cv_done);
    mtx_unlock(&ws->mu);
}

static void run_job(reader *rd, snap_job *j)
{
    struct snap_workers *ws = rd->ws;
    const mysql_source *ms = ws->ms;
    w2l_error e;
    w2l_error_clear(&e);
    w2l_rc rc = W2L_OK;
    char file[256];
    uint64_t pos = 0;
    for (int attempt = 0;; attempt++) {
        rc = W2L_OK;
        if (!rd->conn) {
            rc = w2l__my_connect(&ms->cfg.params, &rd->conn, &e);
            if (rc == W2L_OK)
                rc = w2l__my_exec(rd->conn,
                                  "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", &e);
            if (rc == W2L_OK && ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL)
                rc = w2l__my_exec(rd->conn, "SET SESSION lock_wait_timeout = 30", &e);
        }
        if (rc == W2L_OK) rc = w2l__ms_snap_txn(ms, rd->conn, file, sizeof file, &pos, &e);
        if (rc == W2L_OK) break;
        w2l__my_close(rd->conn);
        rd->conn = NULL;
        if (rc != W2L_UNAVAILABLE || attempt >= 2) {
            post(ws, j, 1, rc, &e);
            return;
        }
    }
    snprintf(j->file, sizeof j->file, "%s", file);
    j->pos = pos;
    post(ws, j, 0, W2L_OK, NULL);
    collect_ctx cc = {j, {0}};
    size_t n = 0;
    rc = w2l__snap_rows(rd->conn, j->sql, j->cols, j->ncols, collect, &cc, &n, j->coerced, &e);
    if (rc == W2L_OK && j->nrows) rc = last_key(j, &cc.key, &e);
    w2l_buf_release(&cc.key);
    w2l_error e2;
    if (w2l__my_exec(rd->conn, rc == W2L_OK ? "COMMIT" : "ROLLBACK", &e2) != W2L_OK) {
        w2l__my_close(rd->conn);
        rd->conn = NULL;
        if (rc == W2L_OK) {
            rc = e2.code;
            e = e2;
        }
    }
    post(ws, j, 1, rc, &e);
}

static int reader_main(void *arg)
{
    reader *rd = arg;
    struct snap_workers *ws = rd->ws;
    mtx_lock(&ws->mu);
    for (;;) {
        while (!ws->stop && !ws->slot) cnd_wait(&ws->cv_job, &ws->mu);
        if (ws->stop) break;
        snap_job *j = ws->slot;
        ws->slot = NULL;
        ws->idle--;
        cnd_broadcast(&ws->cv_done);
        mtx_unlock(&ws->mu);
        run_job(rd, j);
        mtx_lock(&ws->mu);
        ws->idle++;
        cnd_broadcast(&ws->cv_done);
    }
    mtx_unlock(&ws->mu);
    w2l__my_close(rd->conn);
    rd->conn = NULL;
    return 0;
}

w2l_rc w2l__ms_workers_start(mysql_source *ms, unsigned n, w2l_error *err)
{
    if (ms->snap.workers) return W2L_OK;
    struct snap_workers *ws = w2l__calloc(1, sizeof *ws);
    W2L_NOMEM_IF(!ws, err);
    ws->r = w2l__calloc(n, sizeof *ws->r);
    if (!ws->r || mtx_init(&ws->mu, mtx_plain) != thrd_success) {
        w2l__free(ws->r);
        w2l__free(ws);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    cnd_init(&ws->cv_job);
    cnd_init(&ws->cv_done);
    ws->ms = ms;
    ms->snap.workers = ws;
    for (unsigned i = 0; i < n; i++) {
        ws->r[i].ws = ws;
        mtx_lock(&ws->mu);
        ws->idle++;
        mtx_unlock(&ws->mu);
        if (thrd_create(&ws->r[i].th, reader_main, &ws->r[i]) != thrd_success) {
            mtx_lock(&ws->mu);
            ws->idle--;
            mtx_unlock(&ws->mu);
            if (i == 0) {
                w2l__ms_workers_stop(ms);
                return w2l__fail(err, W2L_NOMEM, "mysql source: cannot start a snapshot reader");
            }
            break;
        }
        ws->r[i].started = 1;
        ws->n++;
    }
    return W2L_OK;
}

void w2l__ms_workers_stop(mysql_source *ms)
{
    struct snap_workers *ws = ms->snap.workers;
    if (!ws) return;
    mtx_lock(&ws->mu);
    ws->stop = 1;
    cnd_broadcast(&ws->cv_job);
    mtx_unlock(&ws->mu);
    for (unsigned i = 0; i < ws->n; i++)
        if (ws->r[i].started) thrd_join(ws->r[i].th, NULL);
    cnd_destroy(&ws->cv_job);
    cnd_destroy(&ws->cv_done);
    mtx_destroy(&ws->mu);
    w2l__free(ws->r);
    w2l__free(ws);
    ms->snap.workers = NULL;
}

unsigned w2l__ms_workers_idle(mysql_source *ms)
{
    struct snap_workers *ws = ms->snap.workers;
    if (!ws) return 0;
    mtx_lock(&ws->mu);
    unsigned n = ws->slot ? 0 : ws->idle;
    mtx_unlock(&ws->mu);
    return n;
}

w2l_rc w2l__ms_workers_launch(mysql_source *ms, snap_job *job, w2l_error *err)
{
    struct snap_workers *ws = ms->snap.workers;
    (void)err;
    mtx_lock(&ws->mu);
    if (ws->slot || !ws->idle) {
        mtx_unlock(&ws->mu);
        return W2L_AGAIN;
    }
    ws->slot = job;
    cnd_signal(&ws->cv_job);
    while (!job->have_pos && !job->done) cnd_wait(&ws->cv_done, &ws->mu);
    mtx_unlock(&ws->mu);
    return W2L_OK;
}

int w2l__ms_workers_wait(mysql_source *ms, snap_job *job, int timeout_ms)
{
    struct snap_workers *ws = ms->snap.workers;
    mtx_lock(&ws->mu);
    if (!job->done && timeout_ms > 0) {
        struct timespec dl = w2l__deadline_ms(timeout_ms);
        while (!job->done)
            if (cnd_timedwait(&ws->cv_done, &ws->mu, &dl) != thrd_success) break;
    }
    int done = job->done;
    mtx_unlock(&ws->mu);
    return done;
}
