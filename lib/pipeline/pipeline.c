/*
 * The pipeline runtime (w2l-design(7) sections 1-2, w2l-checkpoints(7)): operator instances as
 * threads connected by bounded channels, in-band checkpoint barriers with alignment, and
 * the checkpoint coordinator that seals the state and then tells committers to commit.
 *
 *   source thread --(table hash)--> DDL handlers --(table, key hash)--> writers
 *        --(table hash)--> committers --(notify_complete failures)--> check-commit sink
 *
 * Messages: ELEM (an element for process()), BARRIER(ckpt), END, NOP (a wake-up).
 * Upstream messages (a writer's WRITER_COMMIT answer to its DDL handler) travel on an
 * unbounded side queue instead, so that a full forward channel can never deadlock with
 * its answer path.
 *
 * Barrier alignment: an instance with n inputs that has received barrier N from input i
 * holds input i's later messages until all n inputs delivered N; then the operator saves
 * its state for N (process(BARRIER)), the runtime forwards N downstream, acknowledges N to
 * the coordinator, and replays what it held. When every instance (and the source, which
 * saves its position) acknowledged N, the coordinator seals N in the state store; then
 * each committer, on its own thread, gets notify_complete(N) — the commit. A failed
 * commit stops the job (the check-commit sink); a restart re-commits from the state.
 * Once every committer committed N, the source thread tells the source
 * (checkpoint_complete(N)), between its next() calls.
 *
 * This file: failure and stop, the coordinator, the source thread and the lifecycle;
 * pipeline_nodes.c: messages, routing and the operator threads (pipeline_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../event/emit.h"
#include "complete.h"
#include "lastrun.h"
#include "pipeline_int.h"
#include "route.h"

/* Adds the calling thread's CPU time to stage k (0 source, else the operator kind). */
void w2l__pipeline_account_cpu(w2l_pipeline *p, int k)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        atomic_fetch_add(&p->cpu_ns[k], (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

/* ---------------------------------------------------------------- failure / stop ---- */

void w2l__pipeline_fail(w2l_pipeline *p, const w2l_error *e0)
{
    w2l_error cause = *e0;
    const w2l_error *e = &cause;
    if (!atomic_load(&p->failed))
        w2l__ha_explain(p, &cause); /* fenced: the cause of whatever failed after */
    mtx_lock(&p->mtx);
    if (!atomic_load(&p->failed)) {
        p->first_err = *e;
        p->first_err.flags |= W2L_ERR_FATAL;
        atomic_store(&p->failed, 1);
        w2l__log(W2L_LOG_ERROR, "pipeline: %s", e->msg);
    }
    cnd_broadcast(&p->cv);
    mtx_unlock(&p->mtx);
    w2l__owner_abort(p->owner);
    for (unsigned i = 0; i < p->nddl + p->nwriter + p->ncommit; i++)
        if (p->nodes[i].in) w2l__chan_close(p->nodes[i].in);
}

/* The error that stopped the pipeline, for every API call after a failure: never a bare
 * "pipeline stopping" in its place. */
w2l_rc w2l__pipeline_first_error(w2l_pipeline *p, w2l_error *err)
{
    mtx_lock(&p->mtx);
    w2l_error e = p->first_err;
    mtx_unlock(&p->mtx);
    if (!e.code) return w2l__fail(err, W2L_CANCELLED, "pipeline stopping");
    if (err) *err = e;
    return e.code;
}

void w2l_pipeline_stop(w2l_pipeline *p)
{
    if (p) atomic_store(&p->stop, 1); /* only an atomic store: async-signal-safe */
}

/* ------------------------------------------------------------------- coordinator ---- */

static void notify_committers(w2l_pipeline *p)
{
    for (unsigned i = 0; i < p->ncommit; i++) {
        msg *nop = w2l__msg_new(M_NOP);
        if (nop && w2l__chan_send(p->committer[i].in, nop, 0) != W2L_OK) w2l__msg_free(nop);
    }
}

int64_t w2l__pipeline_commit_lag_ms(w2l_pipeline *p)
{
    mtx_lock(&p->mtx);
    int64_t oldest = p->npends ? p->pends[0].since_ms : 0;
    mtx_unlock(&p->mtx);
    int64_t pend = atomic_load(&p->pend_ms), held = p->em ? w2l__emitter_held_ms(p->em) : 0;
    if (!oldest || (pend && pend < oldest)) oldest = pend;
    if (!oldest || (held && held < oldest)) oldest = held; /* rows no batch carries yet */
    if (!oldest) return 0;
    int64_t lag = w2l__now_ms() - oldest;
    return lag > 0 ? lag : 0;
}

/* One participant finished checkpoint id. The last one seals it. */
void w2l__pipeline_ack(w2l_pipeline *p, uint64_t id)
{
    w2l_error err;
    int sealed_any = 0;
    mtx_lock(&p->mtx);
    for (unsigned i = 0; i < p->nfl; i++)
        if (p->fl[i].id == id) p->fl[i].acks++;
    /* seal, in order, every checkpoint all participants acknowledged */
    while (p->nfl > 0 && p->fl[0].acks >= p->acks_needed && !atomic_load(&p->failed)) {
        uint64_t ck = p->fl[0].id;
        w2l_rc rc = w2l_state_seal(p->st, ck, &err);
        if (rc != W2L_OK) {
            mtx_unlock(&p->mtx);
            w2l__metrics_ckpt_failed(p->metrics);
            w2l__error_prefix(&err, "checkpoint %llu: ", (unsigned long long)ck);
            w2l__pipeline_fail(p, &err);
            return;
        }
        w2l__log(W2L_LOG_DEBUG, "checkpoint %llu sealed", (unsigned long long)ck);
        p->sealed = ck;
        atomic_store(&p->sealed_pub, ck);
        w2l__metrics_sealed(p->metrics, ck, (double)(w2l__mono_ns() - p->fl[0].placed_ns) / 1e9);
        sealed_any = 1;
        memmove(&p->fl[0], &p->fl[1], (p->nfl - 1) * sizeof p->fl[0]);
        p->nfl--;
    }
    cnd_broadcast(&p->cv);
    mtx_unlock(&p->mtx);
    if (sealed_any) notify_committers(p);
}

/* Committer `committer` finished notify_complete(id). A checkpoint is committed when every
 * committer is past it: the minimum of what each has notified (they run independently, so
 * one may be a checkpoint ahead of another). */
void w2l__pipeline_commit_done(w2l_pipeline *p, node *n, uint64_t id, double secs)
{
    w2l__metrics_committed(p->metrics, n->index, id, secs);
    uint64_t prune_below = 0;
    mtx_lock(&p->mtx);
    n->notified = id;
    uint64_t low = id;
    for (unsigned i = 0; i < p->ncommit; i++)
        if (p->committer[i].notified < low) low = p->committer[i].notified;
    if (low > p->committed) {
        p->committed = low;
        /* `low` is in every table it touched: its completeness mark goes to the job file */
        int64_t mark = -1;
        size_t k = 0;
        for (; k < p->nmarks && p->marks[k].id <= low; k++)
            if (p->marks[k].ms > mark) mark = p->marks[k].ms;
        memmove(p->marks, p->marks + k, (p->nmarks - k) * sizeof *p->marks);
        p->nmarks -= k;
        size_t kp = 0;
        while (kp < p->npends && p->pends[kp].id <= low) kp++;
        if (kp) {
            memmove(p->pends, p->pends + kp, (p->npends - kp) * sizeof *p->pends);
            p->npends -= kp;
        }
        w2l__completer_post(p->completer, low, mark);
        w2l__metrics_all_committed(p->metrics, low, mark);
        w2l__log(W2L_LOG_DEBUG, "checkpoint %llu committed", (unsigned long long)low);
        /* every table has what `low` holds: keep the newest `retain` checkpoints */
        if (low > p->retain) prune_below = low - p->retain + 1;
    }
    cnd_broadcast(&p->cv);
    mtx_unlock(&p->mtx);
    w2l_error err;
    if (prune_below && w2l_state_prune(p->st, prune_below, &err) != W2L_OK)
        w2l__log(W2L_LOG_WARN, "pipeline: pruning checkpoints below %llu: %s",
                 (unsigned long long)prune_below, err.msg);
}

/* ---------------------------------------------------------------- source side ------- */

/* Remembers checkpoint id's completeness mark until id is committed (under p->mtx). */
static w2l_rc mark_add(w2l_pipeline *p, uint64_t id, int64_t ms, w2l_error *err)
{
    if (p->nmarks == p->capmarks) {
        size_t cap = p->capmarks ? 2 * p->capmarks : 16;
        struct w2l__ckpt_mark *v = w2l__realloc(p->marks, cap * sizeof *v);
        W2L_NOMEM_IF(!v, err);
        p->marks = v;
        p->capmarks = cap;
    }
    p->marks[p->nmarks++] = (struct w2l__ckpt_mark){ id, ms };
    return W2L_OK;
}

/* The completeness mark the restored checkpoint recorded, given to the emitter (marks
 * never go back over a restart: everything it covered is in that checkpoint), and the
 * completer under the job id the committers commit under. A consumer group's members
 * write no job file (README, Completeness for schedulers). */
static w2l_rc complete_setup(w2l_pipeline *p, w2l_error *err)
{
    int64_t mark = -1;
    if (p->restored) {
        w2l_buf b = { 0 };
        w2l_rc rc = w2l_state_get(p->st, p->restored, W2L_COMPLETE_STATE_KEY, &b, err);
        if (rc == W2L_OK && (rc = w2l__buf_cstr(&b, err)) == W2L_OK)
            mark = strtoll((const char *)b.data, NULL, 10);
        w2l_buf_release(&b);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
        if (mark >= 0) W2L_TRY(w2l_emit_progress(p->em, mark, err));
        W2L_TRY(mark_add(p, p->restored, mark, err));
    }
    if (p->ledger) return W2L_OK;
    char *job = NULL;
    W2L_TRY(w2l__ops_job_restored(p->conf, p->st, p->restored, &job, err));
    w2l_rc rc = w2l__completer_new(p->conf, job, &p->completer, err);
    w2l__free(job);
    return rc;
}

/* Places checkpoint barrier `id` after the current transaction end. */
static w2l_rc place_barrier(w2l_pipeline *p, uint64_t *out_id, w2l_error *err)
{
    int64_t held = w2l__emitter_held_ms(p->em); /* the flush forgets it */
    W2L_TRY(w2l__emitter_flush(p->em, err));
    if (held) {
        int64_t none = 0;
        atomic_compare_exchange_strong(&p->pend_ms, &none, held);
    }
    mtx_lock(&p->mtx);
    while (p->nfl == MAX_INFLIGHT && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
    if (atomic_load(&p->failed)) {
        mtx_unlock(&p->mtx);
        return w2l__pipeline_first_error(p, err);
    }
    uint64_t id = p->next_ckpt++;
    p->fl[p->nfl].id = id;
    p->fl[p->nfl].acks = 0;
    p->fl[p->nfl].placed_ns = w2l__mono_ns();
    p->nfl++;
    w2l__metrics_barrier(p->metrics, id);
    p->last_trigger_ms = w2l__coarse_ms();
    int64_t since = atomic_exchange(&p->pend_ms, 0);
    if (since) { /* the changes before the barrier wait for checkpoint id now */
        if (p->npends == p->cappends) {
            size_t cap = p->cappends ? 2 * p->cappends : 8;
            struct w2l__pend *v = w2l__realloc(p->pends, cap * sizeof *v);
            if (v) {
                p->pends = v;
                p->cappends = cap;
            }
        }
        if (p->npends < p->cappends) p->pends[p->npends++] = (struct w2l__pend){id, since};
        else atomic_store(&p->pend_ms, since); /* out of memory: kept as not yet placed */
    }
    int64_t mark = w2l__emitter_progress(p->em);
    w2l_rc mrc = mark_add(p, id, mark, err);
    mtx_unlock(&p->mtx);
    W2L_TRY(mrc);
    if (mark >= 0) { /* recorded with the position: survives a restart (complete.h) */
        char t[24];
        int tl = snprintf(t, sizeof t, "%lld", (long long)mark);
        W2L_TRY(w2l_state_put(p->st, id, W2L_COMPLETE_STATE_KEY, t, (size_t)tl, err));
    }
    size_t len;
    const char *pos = w2l__emitter_position(p->em, &len);
    if (!pos && p->restored_pos) { /* nothing new since the restart: still there */
        pos = p->restored_pos;
        len = strlen(pos);
    }
    if (pos) W2L_TRY(w2l_state_put(p->st, id, "source/position", pos, len, err));
    for (unsigned i = 0; i < p->nddl; i++) {
        msg *m = w2l__msg_new(M_BARRIER);
        W2L_NOMEM_IF(!m, err);
        m->ckpt = id;
        W2L_TRY(w2l__msg_send(p, &p->ddl[i], m, err));
    }
    w2l__pipeline_ack(p, id); /* the source's part: its position is in the state */
    if (out_id) *out_id = id;
    return W2L_OK;
}

/* The DDL handler of source table ns.table (hash: its w2l__table_hash): its route's
 * target's, so one handler sees every table a route merges. */
/* Where source table ns.table lands: its route's target (1), else itself (0). A target
 * that is not DB.TABLE counts as itself here: the DDL handler fails on it, naming it. */
static int target_of(w2l_pipeline *p, const char *ns, const char *table, const char **tns,
                     const char **tname)
{
    const w2l__route *r = NULL;
    if (!p->routes || w2l__routes_map(p->routes, ns, table, tns, tname, &r, NULL) != W2L_OK || !r) {
        *tns = ns, *tname = table;
        return 0;
    }
    return 1;
}

/* The DDL handler of a table landing in tns.tname (hash: the source table's
 * w2l__table_hash, routed: 1 when tns.tname is a route's target), so one handler sees every
 * table a route merges. */
static unsigned ddl_index(const w2l_pipeline *p, int routed, const char *tns, const char *tname,
                          uint64_t hash)
{
    if (p->nddl == 1) return 0;
    return (unsigned)((routed ? w2l__table_hash(tns, tname) : hash) % p->nddl);
}

static unsigned ddl_of(w2l_pipeline *p, const char *ns, const char *table, uint64_t hash)
{
    if (p->nddl == 1) return 0;
    const char *tns, *tname;
    int routed = target_of(p, ns, table, &tns, &tname);
    return ddl_index(p, routed, tns, tname, hash);
}

/* The emitter's group of a source table: its route's target, whose sources' changes keep
 * their order among each other (a key may move from one source table to another). */
static const char *group_of(void *ctx, const char *ns, const char *table)
{
    w2l_pipeline *p = ctx;
    const char *tns, *tname;
    if (!target_of(p, ns, table, &tns, &tname)) return NULL;
    snprintf(p->group_buf, sizeof p->group_buf, "%s.%s", tns, tname);
    return p->group_buf;
}

static w2l_rc hook_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    w2l_pipeline *p = ctx;
    if (!p->started) {
        /* the push API starts the operators with the first batch */
        w2l_rc rc = w2l_pipeline_start(p, err);
        if (rc != W2L_OK) {
            w2l__batch_free(b);
            return rc;
        }
    }
    /* the first change since the last barrier starts the commit lag: when the emitter took
     * the oldest row it held, else now */
    int64_t none = 0, held = w2l__emitter_held_ms(p->em);
    atomic_compare_exchange_strong(&p->pend_ms, &none, held ? held : w2l__now_ms());
    msg *m = w2l__msg_new(M_ELEM);
    if (!m) {
        w2l__batch_free(b);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    const char *tns, *tname; /* a route's source counts for its target */
    int routed = target_of(p, b->ns, b->table, &tns, &tname);
    w2l__metrics_rows(p->metrics, tns, tname, b->changes, b->n);
    m->batch = b;
    m->e.kind = W2L_ELEM_CHANGES;
    m->e.ns = b->ns;
    m->e.table = b->table;
    m->e.changes = b->changes;
    m->e.nchanges = b->n;
    return w2l__msg_send(p, &p->ddl[ddl_index(p, routed, tns, tname, b->table_hash)], m, err);
}

static w2l_rc hook_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    w2l_pipeline *p = ctx;
    if (!p->started) {
        w2l_rc rc = w2l_pipeline_start(p, err);
        if (rc != W2L_OK) {
            w2l__ddl_elem_free(d);
            return rc;
        }
    }
    msg *m = w2l__msg_new(M_ELEM);
    if (!m) {
        w2l__ddl_elem_free(d);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    m->ddl = d;
    m->e.kind = W2L_ELEM_DDL;
    m->e.ns = d->ddl.db ? d->ddl.db : "";
    m->e.table = d->ddl.table ? d->ddl.table : "";
    m->e.ddl = &d->ddl;
    /* a statement without a known table goes to handler 0, which parses it */
    unsigned target = d->ddl.db && d->ddl.table
                          ? ddl_of(p, d->ddl.db, d->ddl.table,
                                   w2l__table_hash(d->ddl.db, d->ddl.table))
                          : 0;
    return w2l__msg_send(p, &p->ddl[target], m, err);
}

/* w2l_emit_quarantine(): QUARANTINE to the table's DDL handler, after its changes (the
 * emitter handed the table's open batch over first). Payload: {"reason":..., "rows":N}. */
static w2l_rc hook_quarantine(void *ctx, const char *ns, const char *table, const char *reason,
                              uint64_t rows, w2l_error *err)
{
    w2l_pipeline *p = ctx;
    if (!p->started) W2L_TRY(w2l_pipeline_start(p, err));
    w2l__json *j = w2l__json_new_object();
    int bad =
        !j ||
        w2l__json_add(j, "reason", reason ? w2l__json_new_string(reason) : w2l__json_new_null()) ||
        w2l__json_add(j, "rows", w2l__json_new_int64((int64_t)rows));
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    W2L_NOMEM_IF(!text, err);
    w2l_element e = {0};
    e.kind = W2L_ELEM_QUARANTINE;
    e.ns = ns;
    e.table = table;
    e.payload = text;
    e.payload_len = strlen(text);
    msg *m = NULL;
    w2l_rc rc = w2l__msg_from_element(&e, 0, &m, err);
    w2l__free(text);
    W2L_TRY(rc);
    return w2l__msg_send(p, &p->ddl[ddl_of(p, ns, table, w2l__table_hash(ns, table))], m, err);
}

static w2l_rc hook_commit(void *ctx, const char *position, size_t len, w2l_error *err)
{
    (void)position, (void)len;
    w2l_pipeline *p = ctx;
    if (p->push) return W2L_OK; /* the host places checkpoints itself */
    if (!atomic_load(&p->ckpt_requested) &&
        !(p->interval_ms > 0 && w2l__coarse_ms() - p->last_trigger_ms >= p->interval_ms))
        return W2L_OK;
    atomic_store(&p->ckpt_requested, 0);
    return place_barrier(p, NULL, err);
}

/* Ends the stream: a final checkpoint, END through every operator, all joined. */
static w2l_rc drain(w2l_pipeline *p, w2l_error *err)
{
    uint64_t last = 0;
    w2l_rc rc = W2L_OK;
    if (!atomic_load(&p->failed)) rc = place_barrier(p, &last, err);
    for (unsigned i = 0; rc == W2L_OK && i < p->nddl; i++) {
        msg *m = w2l__msg_new(M_END);
        if (!m) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else rc = w2l__msg_send(p, &p->ddl[i], m, err);
    }
    if (rc == W2L_OK) {
        mtx_lock(&p->mtx);
        while (p->committed < last && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
    }
    return rc;
}

/* Tells the source every checkpoint committed since it was last told, in order, each
 * once: on the source thread, between next() calls (w2l_source_methods(3)). A failure is
 * logged and does not stop the job: the checkpoint stays committed, and the next one's
 * call covers the upstream data before it too. */
static void tell_source(w2l_pipeline *p)
{
    mtx_lock(&p->mtx);
    uint64_t committed = p->committed;
    mtx_unlock(&p->mtx);
    while (p->src && p->src_completed < committed) {
        w2l_error err;
        w2l_error_clear(&err);
        uint64_t ck = ++p->src_completed;
        w2l_buf pos = {0}; /* the checkpoint's position, when the state still has it */
        if (w2l__source_wants_position(p->src) &&
            (w2l_state_get(p->st, ck, "source/position", &pos, &err) != W2L_OK ||
             w2l__buf_cstr(&pos, &err) != W2L_OK))
            w2l_buf_release(&pos);
        w2l_error_clear(&err);
        if (w2l__source_checkpoint_complete(p->src, ck, (const char *)pos.data, &err) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "pipeline: %s", err.msg);
        w2l_buf_release(&pos);
    }
}

static int source_main(void *arg)
{
    w2l_pipeline *p = arg;
    w2l_error err;
    w2l_error_clear(&err);
    w2l_rc rc = W2L_OK;
    while (!atomic_load(&p->failed)) {
        atomic_store(&p->src_beat_ms, w2l__now_ms());
        if (atomic_load(&p->stop)) break;
        tell_source(p);
        if (!w2l__emitter_in_txn(p->em)) w2l__pipeline_resync_serve(p);
        if (!w2l__emitter_in_txn(p->em) &&
            (atomic_load(&p->ckpt_requested) ||
             w2l__coarse_ms() - p->last_trigger_ms >= p->interval_ms)) {
            atomic_store(&p->ckpt_requested, 0);
            if ((rc = place_barrier(p, NULL, &err)) != W2L_OK) break;
        }
        rc = w2l__source_next(p->src, p->em, 100, &err);
        atomic_fetch_add(&p->src_polls, 1);
        if (rc == W2L_AGAIN) {
            rc = W2L_OK;
            continue;
        }
        if (rc == W2L_DONE) {
            rc = W2L_OK;
            break;
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(&err, "source: ");
            break;
        }
    }
    if (rc == W2L_OK && !atomic_load(&p->failed)) {
        rc = drain(p, &err);
    } else if (rc != W2L_OK && rc != W2L_CANCELLED && !atomic_load(&p->failed) &&
               !w2l__emitter_in_txn(p->em)) {
        /* a source error: commit every whole transaction before it with a last checkpoint,
         * then stop with the error (a restart resumes right after them) */
        w2l_error derr;
        w2l_error_clear(&derr);
        w2l_rc d = drain(p, &derr);
        if (d != W2L_OK && d != W2L_CANCELLED)
            w2l__log(W2L_LOG_WARN, "pipeline: last checkpoint before stopping: %s", derr.msg);
    }
    /* what committed before the end, or before a failure, is told too (nothing else:
     * p->committed counts only checkpoints every committer committed) */
    tell_source(p);
    if (rc != W2L_OK && rc != W2L_CANCELLED) w2l__pipeline_fail(p, &err);
    atomic_store(&p->src_beat_ms, 0);
    p->src_rc = rc;
    w2l__pipeline_account_cpu(p, 0);
    return 0;
}

/* ---------------------------------------------------------------------- lifecycle --- */

/* A source that several processes read together (w2l_source_methods(3), V2): each table's
 * position is kept in the lake, merged over the processes (ledger.h). A process has nothing
 * of its own to restore, so its checkpoint state is the mem store, and it commits under a
 * job id of its own (the shared one plus a member tag), so that the processes' checkpoint
 * ids, which are each process's own, never meet in one job's ancestry. */
static w2l_rc shared_setup(w2l_pipeline *p, const char **state_uri, w2l_error *err)
{
    if (w2l_conf_is_set(p->conf, "state") && strcmp(*state_uri, "mem") != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "the source is shared by the members of a consumer group: each "
                         "table's position is kept in the lake and no checkpoint state store "
                         "is used; leave 'state' unset");
    *state_uri = "mem";
    char *base = w2l__ops_job_id(p->conf);
    W2L_NOMEM_IF(!base, err);
    struct {
        int64_t ns, ms;
        long pid;
        const void *at;
    } seed = {w2l__mono_ns(), w2l__now_ms(), (long)getpid(), (const void *)p};
    uint64_t tag = w2l__hash64(&seed, sizeof seed, 0x6d656d);
    char *id = w2l__asprintf("%s-m%012llx", base, (unsigned long long)(tag >> 16));
    w2l__free(base);
    W2L_NOMEM_IF(!id, err);
    w2l_rc rc = w2l_conf_set(p->conf, "job-id", id, err);
    if (rc == W2L_OK) w2l__log(W2L_LOG_INFO, "pipeline: shared source; this member is %s", id);
    w2l__free(id);
    W2L_TRY(rc);
    p->ledger = w2l__ledger_new(p->conf);
    W2L_NOMEM_IF(!p->ledger, err);
    return W2L_OK;
}

/* One job writes a state store: this one takes it (w2l_state_lock) under the job id it
 * will commit under, or leaves it to the job that has it (W2L_BUSY; the store is then
 * not this pipeline's, so nothing here writes to it, not even the last run's record). */
static w2l_rc lock_state(w2l_pipeline *p, w2l_error *err)
{
    uint64_t latest = 0;
    w2l_rc rc = w2l_state_latest(p->st, &latest, err);
    if (rc == W2L_NOTFOUND) rc = W2L_OK;
    char *job = NULL;
    if (rc == W2L_OK) rc = w2l__ops_job_restored(p->conf, p->st, latest, &job, err);
    if (rc == W2L_OK) rc = w2l_state_lock(p->st, job, err);
    int64_t standby = 0;
    if (rc == W2L_BUSY && w2l_conf_get_int(p->conf, "ha.standby", &standby, NULL) == W2L_OK &&
        standby)
        rc = w2l__ha_stand_by(p, job, err);
    w2l__free(job);
    if (rc == W2L_OK) rc = w2l__ha_start(p, err);
    if (rc == W2L_BUSY) {
        w2l_state_close(p->st);
        p->st = NULL;
    }
    return rc;
}

static w2l_rc lake_committed(void *ctx, const char *db, const char *table, const char *stream,
                             int32_t part, int rows, int64_t *next, w2l_error *err)
{
    return w2l__ledger_committed(((w2l_pipeline *)ctx)->ledger, db, table, stream, part, rows,
                                 next, err);
}

static void lake_assigned(void *ctx, const char *stream, int32_t part)
{
    w2l__ledger_assigned(((w2l_pipeline *)ctx)->ledger, stream, part);
}

static void lake_checkpoint_soon(void *ctx)
{
    atomic_store(&((w2l_pipeline *)ctx)->ckpt_requested, 1);
}

static w2l_rc conf_uint(const w2l_conf *c, const char *key, unsigned *out, w2l_error *err)
{
    int64_t v;
    W2L_TRY(w2l_conf_get_int(c, key, &v, err));
    *out = (unsigned)v;
    return W2L_OK;
}

/* Threads for key unless it is set: the online CPUs, at least floor and at most max (for
 * writers CORES_MAX: more threads than that on a small lake only add buffers). Set in the
 * pipeline's own conf, so every operator reads the same value. Committers start at 32
 * whatever the cores: a table commit mostly waits on storage (five files made durable on a
 * disk, round trips to an object store), so commits overlap beyond the cores (1,000 tables
 * on a 2-core disk here: 4.3 s per checkpoint with 2 committers, 2.1 s with 8; later, 1.4 s
 * with 8 and 0.9-1.1 s with 32, as more syncs in flight share the disk's flushes). Tables
 * are hashed onto committers and each restores its own tables' keys, so the count may
 * differ from run to run. */
#define CORES_MAX 8
#define COMMITTERS_MAX 64

static w2l_rc default_to_cores(w2l_conf *c, const char *key, long floor, long max,
                               w2l_error *err)
{
    if (w2l_conf_is_set(c, key)) return W2L_OK;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    char v[16];
    snprintf(v, sizeof v, "%ld", W2L_MAX(floor, W2L_MIN(n, max)));
    return w2l_conf_set(c, key, v, err);
}

/* A rest catalog commits the tables of a checkpoint in multi-table transactions
 * (catalog.rest.transaction-max-tables): one committer owns every table, so each
 * checkpoint's tables meet in one batch (the committers' shares would each be a cut of
 * their own). */
static w2l_rc one_cut_one_committer(w2l_pipeline *p, w2l_error *err)
{
    const char *cat = NULL;
    int64_t tmax = 0;
    W2L_TRY(w2l_conf_get(p->conf, "catalog", &cat, err));
    if (!cat || strncmp(cat, "rest:", 5) != 0) return W2L_OK;
    W2L_TRY(w2l_conf_get_int(p->conf, "catalog.rest.transaction-max-tables", &tmax, err));
    if (tmax <= 1) return W2L_OK;
    w2l__log(W2L_LOG_INFO,
             "committer-parallelism %u -> 1: a rest catalog commits each checkpoint's tables "
             "in one transaction (catalog.rest.transaction-max-tables %lld; 0 for table by "
             "table with %u committers)",
             p->ncommit, (long long)tmax, p->ncommit);
    p->ncommit = 1;
    return w2l_conf_set(p->conf, "committer-parallelism", "1", err);
}

/* The last run's record (lastrun.h). Only a pipeline that holds its checkpoint state
 * writes one. */
static void record(w2l_pipeline *p, const char *outcome, const w2l_error *e)
{
    if (!p->st) return;
    if (!p->job_id) w2l__ops_job_restored(p->conf, p->st, p->restored, &p->job_id, NULL);
    w2l__lastrun r = {outcome,
                      p->began_ms,
                      strcmp(outcome, "running") == 0 ? -1 : w2l__now_ms(),
                      e ? (e->msg[0] ? e->msg : w2l_rc_name(e->code)) : NULL,
                      p->job_id,
                      p->em ? (uint64_t)w2l__emitter_rows(p->em) : 0,
                      p->committed};
    w2l__lastrun_write(p->conf, &r);
}

static void record_end(w2l_pipeline *p, const w2l_error *e)
{
    if (!p->recorded_start) return;
    p->recorded_start = 0; /* once */
    if (e && (e->code == W2L_CONFIG || e->code == W2L_MISUSE) && p->committed <= p->restored)
        /* refused for its configuration before it committed anything: no run (exit 2);
         * the record stays what it was */
        w2l__lastrun_restore(p->conf, p->prev_run, p->prev_run_len);
    else
        record(p, e ? "failed" : "ok", e);
}

w2l_rc w2l_pipeline_new(const w2l_conf *conf, w2l_pipeline **out, w2l_error *err)
{
    *out = NULL;
    if (!conf) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_new: NULL conf");
    w2l_pipeline *p = w2l__calloc(1, sizeof *p);
    W2L_NOMEM_IF(!p, err);
    mtx_init(&p->mtx, mtx_plain);
    cnd_init(&p->cv);
    mtx_init(&p->resync.mu, mtx_plain);
    cnd_init(&p->resync.cv);
    mtx_init(&p->ha_mu, mtx_plain);
    cnd_init(&p->ha_cv);
    p->began_ms = w2l__now_ms();
    w2l_rc rc = W2L_OK;
    p->conf = w2l_conf_dup(conf);
    p->metrics = w2l__metrics_new();
    if (!p->conf || !p->metrics) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    int64_t v = 0;
    if (rc == W2L_OK) rc = default_to_cores(p->conf, "parallelism", 1, CORES_MAX, err);
    if (rc == W2L_OK)
        rc = default_to_cores(p->conf, "committer-parallelism", 32, COMMITTERS_MAX, err);
    if (rc == W2L_OK) rc = conf_uint(p->conf, "ddl-parallelism", &p->nddl, err);
    if (rc == W2L_OK) rc = conf_uint(p->conf, "parallelism", &p->nwriter, err);
    if (rc == W2L_OK) rc = conf_uint(p->conf, "committer-parallelism", &p->ncommit, err);
    if (rc == W2L_OK && p->ncommit > 1) rc = one_cut_one_committer(p, err);
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "channel-capacity", &v, err)) == W2L_OK)
        p->chan_cap = (size_t)v;
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "batch-rows", &v, err)) == W2L_OK)
        p->batch_rows = (size_t)v;
    if (rc == W2L_OK) rc = w2l_conf_get_int(p->conf, "checkpoint-interval", &p->interval_ms, err);
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "until-caught-up", &v, err)) == W2L_OK)
        p->until_caught_up = (int)v;
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "checkpoint-retain", &v, err)) == W2L_OK)
        p->retain = (uint64_t)v;
    const char *state_uri = NULL, *source_uri = NULL;
    if (rc == W2L_OK) rc = w2l_conf_get(p->conf, "state", &state_uri, err);
    if (rc == W2L_OK) rc = w2l_conf_get(p->conf, "source", &source_uri, err);
    if (rc == W2L_OK && source_uri && w2l__source_shared(source_uri, p->conf))
        rc = shared_setup(p, &state_uri, err);
    if (rc == W2L_OK) rc = w2l_state_open(state_uri, p->conf, &p->st, err);
    if (rc == W2L_OK) rc = lock_state(p, err);
    if (rc == W2L_OK) {
        uint64_t latest = 0;
        rc = w2l_state_latest(p->st, &latest, err);
        if (rc == W2L_NOTFOUND) rc = W2L_OK;
        p->restored = latest;
        p->next_ckpt = latest + 1;
        p->sealed = latest;
        atomic_init(&p->sealed_pub, latest);
        p->committed = latest ? latest - 1 : 0; /* the restored one is re-committed */
    }
    p->acks_needed = 0;
    if (rc == W2L_OK) {
        p->owner = w2l__owner_new(p->conf, p->ncommit, p->restored);
        if (p->owner && p->ledger) w2l__owner_set_shared(p->owner);
        rc = p->owner ? w2l__owner_restore(p->owner, p->st, err)
                      : w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK) rc = w2l__maint_new(p->conf, p->metrics, p->ncommit, &p->maint, err);
    if (rc == W2L_OK) rc = w2l__maint_set_writers(p->maint, p->nwriter, err);
    if (rc == W2L_OK) rc = w2l__routes_new(p->conf, &p->routes, err);
    if (rc == W2L_OK) {
        p->acks_needed = 1 + p->nddl + p->nwriter + p->ncommit;
        rc = w2l__nodes_make(p, err);
    }
    w2l__emit_hooks hooks = {hook_batch, hook_ddl, hook_commit, p};
    if (rc == W2L_OK) {
        p->em = w2l__emitter_new(&hooks, p->batch_rows);
        if (!p->em) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else w2l__emitter_set_quarantine(p->em, hook_quarantine);
        if (p->em && p->routes) w2l__emitter_set_group(p->em, group_of);
    }
    if (rc == W2L_OK) rc = complete_setup(p, err);
    if (rc == W2L_OK) rc = w2l__endpoint_start(p, err);
    if (rc == W2L_OK) atomic_store(&p->ha_role, W2L__HA_ACTIVE);
    if (rc == W2L_OK && source_uri && *source_uri) {
        w2l_buf pos = {0};
        if (p->restored) {
            w2l_rc g = w2l_state_get(p->st, p->restored, "source/position", &pos, err);
            if (g != W2L_OK && g != W2L_NOTFOUND) rc = g;
            if (g == W2L_OK) rc = w2l__buf_cstr(&pos, err);
            if (g == W2L_OK && rc == W2L_OK) {
                p->restored_pos = w2l__strdup((const char *)pos.data);
                if (!p->restored_pos) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            }
        }
        if (rc == W2L_OK)
            rc = w2l__source_open(source_uri, p->conf, pos.len ? (const char *)pos.data : NULL,
                                  &p->src, err);
        w2l_buf_release(&pos);
        if (rc == W2L_OK && p->ledger) {
            w2l_source_lake lake = {p, lake_committed, lake_assigned, lake_checkpoint_soon};
            w2l__source_attach(p->src, &lake);
        }
        /* the source hears of checkpoints from the first one this run commits: after a
         * restart, the restored checkpoint once its re-commit is done */
        p->src_completed = p->committed;
    } else {
        p->push = 1;
    }
    if (rc != W2L_OK) {
        /* a run that got its checkpoint state and then could not start is a failed run; a
         * configuration refused (a usage error) is no run and writes nothing */
        w2l_error e;
        if (err) e = *err;
        else w2l__fail(&e, rc, "%s", w2l_rc_name(rc));
        if (rc != W2L_CONFIG && rc != W2L_MISUSE) record(p, "failed", &e);
        w2l_pipeline_free(p);
        return rc;
    }
    p->last_trigger_ms = w2l__coarse_ms();
    if (p->restored)
        w2l__log(W2L_LOG_INFO, "pipeline: restored from checkpoint %llu",
                 (unsigned long long)p->restored);
    *out = p;
    return W2L_OK;
}

w2l_rc w2l_pipeline_start(w2l_pipeline *p, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_start: NULL pipeline");
    if (p->started) return W2L_OK;
    p->started = 1;
    if (p->st) p->prev_run = w2l__lastrun_save(p->conf, &p->prev_run_len);
    record(p, "running", NULL);
    p->recorded_start = 1;
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; i < total; i++) {
        if (thrd_create(&p->nodes[i].thr, w2l__node_main, &p->nodes[i]) != thrd_success) {
            w2l_error e;
            w2l__fail(&e, W2L_ERROR, "cannot start an operator thread");
            w2l__pipeline_fail(p, &e);
            if (err) *err = e;
            return W2L_ERROR;
        }
        p->nodes[i].started = 1;
    }
    if (!p->push) {
        if (thrd_create(&p->src_thr, source_main, p) != thrd_success) {
            w2l_error e;
            w2l__fail(&e, W2L_ERROR, "cannot start the source thread");
            w2l__pipeline_fail(p, &e);
            if (err) *err = e;
            return W2L_ERROR;
        }
        p->src_started = 1;
    }
    return W2L_OK;
}

w2l_emitter *w2l_pipeline_emitter(w2l_pipeline *p) { return p && p->push ? p->em : NULL; }

w2l_rc w2l_pipeline_checkpoint(w2l_pipeline *p, int wait, uint64_t *ckpt, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_checkpoint: NULL pipeline");
    if (!p->push) {
        atomic_store(&p->ckpt_requested, 1);
        if (ckpt) *ckpt = 0;
        if (!wait) return W2L_OK;
        mtx_lock(&p->mtx);
        uint64_t target = p->next_ckpt;
        while (p->committed < target && !atomic_load(&p->failed) && !p->done)
            cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
        if (ckpt) *ckpt = target;
    } else {
        if (w2l__emitter_in_txn(p->em))
            return w2l__fail(err, W2L_MISUSE,
                             "checkpoint inside a transaction: call w2l_emit_commit() first");
        W2L_TRY(w2l_pipeline_start(p, err));
        uint64_t id;
        W2L_TRY(place_barrier(p, &id, err));
        if (ckpt) *ckpt = id;
        if (wait) {
            mtx_lock(&p->mtx);
            while (p->committed < id && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
            mtx_unlock(&p->mtx);
        }
    }
    if (atomic_load(&p->failed)) return w2l__pipeline_first_error(p, err);
    return W2L_OK;
}

static w2l_rc join_all(w2l_pipeline *p, w2l_error *err)
{
    if (p->src_started) {
        thrd_join(p->src_thr, NULL);
        p->src_started = 0;
    }
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; i < total; i++)
        if (p->nodes[i].started) {
            thrd_join(p->nodes[i].thr, NULL);
            p->nodes[i].started = 0;
        }
    p->done = 1;
    int failed = atomic_load(&p->failed);
    if (failed) { /* every stage has ended: is the takeover the cause after all? */
        mtx_lock(&p->mtx);
        w2l_error fe = p->first_err;
        mtx_unlock(&p->mtx);
        w2l__ha_explain(p, &fe);
        mtx_lock(&p->mtx);
        p->first_err = fe;
        mtx_unlock(&p->mtx);
    }
    /* a run that failed says so in its summary, which is logged before the error itself
     * reaches the caller: the summary never reads like a healthy end */
    w2l__log(W2L_LOG_INFO,
             "pipeline: %s%llu row%s, checkpoint %llu committed; CPU seconds by stage: source "
             "%.2f, ddl %.2f, writers %.2f, committers %.2f",
             failed ? "failed after " : "", (unsigned long long)w2l__emitter_rows(p->em),
             w2l__emitter_rows(p->em) == 1 ? "" : "s",
             (unsigned long long)p->committed, atomic_load(&p->cpu_ns[0]) / 1e9,
             atomic_load(&p->cpu_ns[1]) / 1e9, atomic_load(&p->cpu_ns[2]) / 1e9,
             atomic_load(&p->cpu_ns[3]) / 1e9);
    record_end(p, failed ? &p->first_err : NULL);
    if (failed) {
        if (err) *err = p->first_err;
        return p->first_err.code ? p->first_err.code : W2L_ERROR;
    }
    /* everything committed: older checkpoints may go */
    if (p->committed > p->retain) w2l_state_prune(p->st, p->committed - p->retain + 1, NULL);
    return W2L_OK;
}

w2l_rc w2l_pipeline_run(w2l_pipeline *p, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_run: NULL pipeline");
    if (p->push)
        return w2l__fail(err, W2L_MISUSE,
                         "w2l_pipeline_run: the pipeline has no source; push changes and call "
                         "w2l_pipeline_finish()");
    W2L_TRY(w2l_pipeline_start(p, err));
    return join_all(p, err);
}

w2l_rc w2l_pipeline_finish(w2l_pipeline *p, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_finish: NULL pipeline");
    if (!p->push) return w2l_pipeline_run(p, err);
    if (w2l__emitter_in_txn(p->em))
        return w2l__fail(err, W2L_MISUSE,
                         "w2l_pipeline_finish inside a transaction: call w2l_emit_commit() first");
    W2L_TRY(w2l_pipeline_start(p, err));
    w2l_error e;
    w2l_error_clear(&e);
    w2l_rc rc = drain(p, &e);
    if (rc != W2L_OK && rc != W2L_CANCELLED) w2l__pipeline_fail(p, &e);
    return join_all(p, err);
}

w2l_rc w2l_pipeline_metrics(w2l_pipeline *p, int (*fn)(void *, const w2l_table_metrics *),
                            void *ctx, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_metrics: NULL pipeline");
    int64_t lag = w2l__source_lag_ms(p->src);
    return w2l__metrics_each(p->metrics, lag, fn, ctx, err);
}

void w2l_pipeline_free(w2l_pipeline *p)
{
    if (!p) return;
    w2l__endpoint_stop(p); /* first: its handler reads the pipeline */
    if (p->started && !p->done) {
        w2l_error e;
        w2l__fail(&e, W2L_CANCELLED, "pipeline freed while running");
        w2l__pipeline_fail(p, &e);
        join_all(p, NULL);
    }
    /* the renewal thread fails the pipeline when fenced, which reaches its nodes: it ends
     * before they are freed (the lease stays valid long enough for the rest) */
    w2l__ha_stop(p);
    w2l__completer_free(p->completer); /* after the last commit: its job file is written */
    w2l__free(p->marks);
    w2l__nodes_free(p);
    w2l__maint_free(p->maint);
    w2l__emitter_free(p->em);
    w2l__routes_free(p->routes);
    w2l__source_close(p->src);
    w2l__ledger_free(p->ledger);
    w2l_state_close(p->st);
    w2l_conf_free(p->conf);
    w2l__metrics_free(p->metrics);
    w2l__owner_free(p->owner);
    w2l__free(p->restored_pos);
    w2l__free(p->job_id);
    w2l__free(p->pends);
    w2l__free(p->prev_run);
    cnd_destroy(&p->cv);
    mtx_destroy(&p->mtx);
    cnd_destroy(&p->resync.cv);
    mtx_destroy(&p->resync.mu);
    cnd_destroy(&p->ha_cv);
    mtx_destroy(&p->ha_mu);
    w2l__free(p);
}

typedef struct recover_job {
    node *n;
    thrd_t thr;
    int started;
    w2l_rc rc;
    w2l_error err;
} recover_job;

static int recover_main(void *arg)
{
    recover_job *j = arg;
    node *n = j->n;
    w2l_pipeline *p = n->p;
    w2l_error_clear(&j->err);
    w2l__owner_set_current(p->owner);
    j->rc = n->m->open(n->m, p->conf, n->index, p->ncommit, p->st, p->restored, n->op, &j->err);
    if (j->rc != W2L_OK) {
        w2l__pipeline_fail(p, &j->err);
        return 0;
    }
    j->rc = w2l__node_commit_sealed(n, &j->err);
    if (j->rc != W2L_OK && j->rc != W2L_CANCELLED) w2l__pipeline_fail(p, &j->err);
    n->m->close(n->op);
    return 0;
}

w2l_rc w2l_recover(const w2l_conf *conf, w2l_error *err)
{
    /* the committers alone, from the newest sealed checkpoint: each re-commits what the
     * state holds beyond its tables' committed checkpoints, then everything ends */
    if (!conf) return w2l__fail(err, W2L_MISUSE, "w2l_recover: NULL conf");
    w2l_conf *c = w2l_conf_dup(conf);
    W2L_NOMEM_IF(!c, err);
    w2l_rc rc = w2l_conf_set(c, "source", NULL, err);
    w2l_pipeline *p = NULL;
    if (rc == W2L_OK) rc = w2l_pipeline_new(c, &p, err);
    w2l_conf_free(c);
    if (rc != W2L_OK) return rc;
    if (!p->restored) {
        w2l_pipeline_free(p);
        w2l__log(W2L_LOG_INFO, "recover: no sealed checkpoint, nothing to do");
        return W2L_OK;
    }
    /* each committer on its own thread: table operations wait for every committer's
     * older commits (owner.h) */
    recover_job *jobs = w2l__calloc(p->ncommit, sizeof *jobs);
    if (!jobs) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (unsigned i = 0; rc == W2L_OK && i < p->ncommit; i++) {
        jobs[i].n = &p->committer[i];
        if (thrd_create(&jobs[i].thr, recover_main, &jobs[i]) != thrd_success) {
            w2l_error e;
            w2l__fail(&e, W2L_ERROR, "cannot start a committer thread");
            w2l__pipeline_fail(p, &e);
            rc = W2L_ERROR;
            break;
        }
        jobs[i].started = 1;
    }
    for (unsigned i = 0; jobs && i < p->ncommit; i++)
        if (jobs[i].started) thrd_join(jobs[i].thr, NULL);
    if (rc == W2L_OK && atomic_load(&p->failed)) rc = w2l__pipeline_first_error(p, err);
    w2l__free(jobs);
    w2l_pipeline_free(p);
    return rc;
}
