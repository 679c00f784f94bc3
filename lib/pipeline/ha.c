/*
 * One active process per job, and a standby that takes over (README "Standby and
 * fencing", w2l-run(1)):
 *
 *   standby   a pipeline whose state store is held by another process of the job, with
 *             ha.standby set, waits instead of failing with W2L_BUSY: it asks every
 *             ha.renew-interval whether the store can be taken (the holder ended, or its
 *             lease lapsed), serves /readyz 503 "standby: waiting for ..." and /status
 *             "role":"standby" meanwhile, and once it has the store goes on as any
 *             pipeline does: restore, recover what was sealed, resume the source.
 *   renewal   the process that holds a lease renews it every ha.renew-interval on a
 *             thread of its own; a renewal that finds another's epoch fails the pipeline
 *             (fenced).
 *   fencing   before each checkpoint's table commits a committer makes sure the lease is
 *             still this process's: by its own clock while well within the lease, by
 *             renewing it (read back first) otherwise. A process paused past its lease
 *             (SIGSTOP, a partition) thus finds out before it commits anything more.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../json/json.h"
#include "pipeline_int.h"
#include "standbys.h"

static int64_t renew_interval(const w2l_conf *c)
{
    int64_t v = 0, lease = 60000;
    if (w2l_conf_is_set(c, "ha.renew-interval") &&
        w2l_conf_get_int(c, "ha.renew-interval", &v, NULL) == W2L_OK && v > 0)
        return v;
    w2l_conf_get_int(c, "ha.lease-timeout", &lease, NULL);
    return lease / 3 > 100 ? lease / 3 : 100;
}

/* "job J (pid P on host H)" */
static void describe(const w2l_state_holder *h, char *buf, size_t size)
{
    if (!h->pid && !h->host[0])
        snprintf(buf, size, "another process (it left no record of itself)");
    else
        snprintf(buf, size, "job %s (pid %lld on host %s)", h->job[0] ? h->job : "(none)",
                 h->pid, h->host);
}

/* Waits on ha_cv for ms or until ha_stop; 1 when stopped. */
static int nap(w2l_pipeline *p, int64_t ms)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    mtx_lock(&p->ha_mu);
    if (!p->ha_stop) cnd_timedwait(&p->ha_cv, &p->ha_mu, &ts);
    int stop = p->ha_stop;
    mtx_unlock(&p->ha_mu);
    return stop;
}

w2l_rc w2l__ha_stand_by(w2l_pipeline *p, const char *job, w2l_error *err)
{
    int64_t every = renew_interval(p->conf), t0 = w2l__now_ms();
    w2l_state_holder h;
    w2l_error e;
    if (w2l_state_holder_get(p->st, &h, &e) != W2L_OK) memset(&h, 0, sizeof h);
    mtx_lock(&p->mtx);
    p->awaited = h;
    mtx_unlock(&p->mtx);
    atomic_store(&p->ha_role, W2L__HA_STANDBY);
    W2L_TRY(w2l__endpoint_start(p, err));
    char who[512];
    describe(&h, who, sizeof who);
    w2l__log(W2L_LOG_INFO,
             "standby: the state store is held by %s; this process waits and takes over once "
             "that one ends or its lease lapses (asking every %.1f s)",
             who, (double)every / 1000.0);
    /* its record for `w2l status` lives three polls (standbys.h) */
    w2l__standby_note(p->conf, job, t0, w2l__now_ms() + 3 * every + 1000);
    for (;;) {
        if (nap(p, every)) {
            w2l__standby_forget(p->conf);
            return w2l__fail(err, W2L_CANCELLED, "standby: stopped");
        }
        w2l_rc rc = w2l_state_lock(p->st, job, &e);
        if (rc == W2L_OK) break;
        w2l__standby_note(p->conf, job, t0, w2l__now_ms() + 3 * every + 1000);
        if (rc == W2L_BUSY) {
            w2l_state_holder now;
            if (w2l_state_holder_get(p->st, &now, &e) != W2L_OK) continue;
            mtx_lock(&p->mtx);
            int changed = now.epoch != p->awaited.epoch || now.pid != p->awaited.pid ||
                          strcmp(now.host, p->awaited.host) != 0;
            p->awaited = now;
            mtx_unlock(&p->mtx);
            if (changed) {
                describe(&now, who, sizeof who);
                w2l__log(W2L_LOG_INFO, "standby: the state store is now held by %s", who);
            }
            continue;
        }
        if (rc == W2L_IO || rc == W2L_UNAVAILABLE || rc == W2L_AGAIN) {
            w2l__log(W2L_LOG_WARN, "standby: cannot ask for the state store: %s (asking again)",
                     e.msg);
            continue;
        }
        w2l__standby_forget(p->conf);
        if (err) *err = e;
        return rc;
    }
    w2l__standby_forget(p->conf);
    atomic_store(&p->ha_role, W2L__HA_TAKING_OVER);
    if (w2l_state_holder_get(p->st, &h, &e) != W2L_OK) memset(&h, 0, sizeof h);
    w2l__log(W2L_LOG_INFO,
             "standby: took the state store over at epoch %llu after %.1f s waiting; starting "
             "from its last checkpoint",
             (unsigned long long)h.epoch, (double)(w2l__now_ms() - t0) / 1000.0);
    return W2L_OK;
}

/* Renews the lease now; its new end into lease_end_ms. */
static w2l_rc renew(w2l_pipeline *p, w2l_error *err)
{
    int64_t end = 0;
    w2l_rc rc = w2l_state_renew(p->st, &end, err);
    if (rc == W2L_OK) atomic_store(&p->lease_end_ms, end);
    return rc;
}

static int renew_main(void *arg)
{
    w2l_pipeline *p = arg;
    while (!nap(p, p->renew_ms)) {
        w2l_error e;
        w2l_error_clear(&e);
        w2l_rc rc = renew(p, &e);
        if (rc == W2L_BUSY) {
            w2l__pipeline_fail(p, &e);
            break;
        }
        if (rc != W2L_OK)
            w2l__log(W2L_LOG_WARN,
                     "ha: cannot renew the lease on the state store: %s (retrying; should it "
                     "lapse, this job stops before its next commit)",
                     e.msg);
    }
    return 0;
}

w2l_rc w2l__ha_start(w2l_pipeline *p, w2l_error *err)
{
    p->renew_ms = renew_interval(p->conf);
    W2L_TRY(renew(p, err));
    if (!atomic_load(&p->lease_end_ms)) return W2L_OK; /* a lock held until the process ends */
    if (thrd_create(&p->ha_thr, renew_main, p) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "cannot start the lease renewal thread");
    p->ha_started = 1;
    return W2L_OK;
}

void w2l__ha_stop(w2l_pipeline *p)
{
    mtx_lock(&p->ha_mu);
    p->ha_stop = 1;
    cnd_broadcast(&p->ha_cv);
    mtx_unlock(&p->ha_mu);
    if (p->ha_started) thrd_join(p->ha_thr, NULL);
    p->ha_started = 0;
}

w2l_rc w2l__ha_fence(w2l_pipeline *p, w2l_error *err)
{
    int64_t end = atomic_load(&p->lease_end_ms);
    if (!end) return W2L_OK;
    /* well within the lease by this process's clock: nobody can have taken it */
    if (w2l__now_ms() + p->renew_ms / 2 < end) return W2L_OK;
    w2l_rc rc = renew(p, err);
    if (rc != W2L_OK)
        w2l__error_prefix(err, "the lease on the state store ended and could not be renewed, "
                               "so nothing more is committed: ");
    return rc;
}

void w2l__ha_explain(w2l_pipeline *p, w2l_error *e)
{
    if (e->code == W2L_BUSY || !atomic_load(&p->lease_end_ms)) return;
    w2l_error f;
    w2l_error_clear(&f);
    int64_t end = 0;
    w2l_rc rc = w2l_state_renew(p->st, &end, &f);
    if (rc != W2L_OK && rc != W2L_BUSY)
        w2l__log(W2L_LOG_WARN, "ha: cannot check the lease after a failure: %s", f.msg);
    if (rc != W2L_BUSY) return;
    char first[sizeof e->msg];
    snprintf(first, sizeof first, "%s", e->msg);
    *e = f;
    size_t n = strlen(e->msg);
    if (n + 40 < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - n, " (and then, likely from the same cause: %.*s)",
                 (int)(sizeof e->msg - n - 40), first);
}

int w2l__ha_answer(w2l_pipeline *p, const char *path, size_t pl, int *status,
                   const char **content_type, w2l_buf *body, w2l_rc *rc, w2l_error *err)
{
    int role = atomic_load(&p->ha_role);
    if (role == W2L__HA_ACTIVE) return 0;
    w2l_state_holder h;
    mtx_lock(&p->mtx);
    h = p->awaited;
    mtx_unlock(&p->mtx);
    char who[512], why[700];
    describe(&h, who, sizeof who);
    if (role == W2L__HA_STANDBY) snprintf(why, sizeof why, "standby: waiting for %s", who);
    else snprintf(why, sizeof why, "taking over: starting from the last checkpoint");
    const char *job = NULL;
    w2l_conf_get(p->conf, "job-id", &job, NULL);
    if (pl == 8 && !strncmp(path, "/metrics", pl)) {
        *content_type = "text/plain; version=0.0.4; charset=utf-8";
        *status = 200;
        *rc = w2l__buf_printf(body, err,
                              "# HELP w2l_ha_role 1 for this process's role in its job: active "
                              "(holds the state store) or standby (waits for it)\n"
                              "# TYPE w2l_ha_role gauge\n"
                              "w2l_ha_role{role=\"active\"} 0\n"
                              "w2l_ha_role{role=\"standby\"} 1\n");
        return 1;
    }
    if (pl == 8 && !strncmp(path, "/healthz", pl)) {
        *status = 200;
        *rc = w2l__buf_printf(body, err, "ok\n");
        return 1;
    }
    if (pl == 7 && !strncmp(path, "/readyz", pl)) {
        *status = 503;
        *rc = w2l__buf_printf(body, err, "%s\n", why);
        return 1;
    }
    if (pl == 7 && !strncmp(path, "/status", pl)) {
        *content_type = "application/json";
        *status = 200;
        w2l__json *j = w2l__json_new_object(), *w = w2l__json_new_object();
        int bad =
            !j || !w ||
            w2l__json_add(j, "state",
                          w2l__json_new_string(role == W2L__HA_STANDBY ? "standby" : "starting")) ||
            w2l__json_add(j, "role", w2l__json_new_string("standby")) ||
            w2l__json_add(j, "job", job ? w2l__json_new_string(job) : w2l__json_new_null()) ||
            w2l__json_add(j, "healthy", w2l__json_new_bool(1)) ||
            w2l__json_add(j, "ready", w2l__json_new_bool(0)) ||
            w2l__json_add(j, "not_ready", w2l__json_new_string(why)) ||
            w2l__json_add(w, "job", w2l__json_new_string(h.job)) ||
            w2l__json_add(w, "host", w2l__json_new_string(h.host)) ||
            w2l__json_add(w, "pid", w2l__json_new_int64(h.pid)) ||
            w2l__json_add(w, "epoch", w2l__json_new_int64((int64_t)h.epoch)) ||
            w2l__json_add(w, "expires_ms", w2l__json_new_int64(h.expires_ms));
        if (!bad) {
            bad = w2l__json_add(j, "waiting_for", w);
            w = NULL;
        }
        char *text = bad ? NULL : w2l__json_print(j, 0);
        w2l__json_free(j);
        w2l__json_free(w);
        *rc = text ? w2l__buf_printf(body, err, "%s\n", text)
                   : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(text);
        return 1;
    }
    return 0;
}
