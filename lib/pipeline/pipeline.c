/*
 * The pipeline runtime (DESIGN.md sections 1-2, w2l-checkpoints(7)): operator instances as
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
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "emit.h"
#include "metrics.h"
#include "ops.h"
#include "maintenance.h"
#include "owner.h"
#include "../common/chan.h"
#include "../common/thread.h"

enum { M_ELEM = 1, M_BARRIER, M_END, M_NOP };
#define MAX_INFLIGHT 4

typedef struct msg {
    int kind;
    unsigned from;              /* upstream instance index */
    uint64_t ckpt;              /* BARRIER */
    w2l_element e;              /* ELEM: pointers into what the message owns */
    w2l__batch *batch;          /* a reference, when e.changes points into it */
    w2l_change *own_changes;    /* a split's change array (rows still in batch) */
    w2l__ddl_elem *ddl;
    w2l_schema *schema;         /* a reference, for SCHEMA and owned-copy changes */
    w2l__arena arena;           /* copies of strings and payloads */
    struct msg *next;
} msg;

typedef struct node {
    struct w2l_pipeline *p;
    w2l_operator_kind kind;
    unsigned index, ninputs;
    const w2l_operator_methods *m;
    w2l_operator *op;
    w2l__chan *in;
    thrd_t thr;
    int started;
    /* alignment */
    uint64_t aligning;
    unsigned seen, ends;
    unsigned char *blocked;
    msg **held_head, **held_tail;
    /* side queue for upstream answers */
    mtx_t side_mtx;
    msg *side_head, *side_tail;
    /* committers: checkpoints completed (notified) so far */
    uint64_t notified;
    uint64_t last_barrier; /* newest checkpoint this instance acknowledged */
    msg *cur; /* the message being processed */
} node;

typedef struct inflight {
    uint64_t id;
    unsigned acks;
    int sealed;
} inflight;

struct w2l_collector { node *n; };

struct w2l_pipeline {
    w2l_conf *conf;
    w2l_state *st;
    const w2l_source_methods *srcm;
    w2l_source *src;
    w2l_emitter *em;
    unsigned nddl, nwriter, ncommit;
    node *nodes; /* ddl, then writers, then committers */
    node *ddl, *writer, *committer;
    size_t chan_cap, batch_rows;
    int64_t interval_ms;
    int until_caught_up;
    /* coordinator */
    mtx_t mtx;
    cnd_t cv;
    uint64_t restored;          /* sealed checkpoint restored at new(); 0 fresh */
    uint64_t next_ckpt;
    inflight fl[MAX_INFLIGHT];
    unsigned nfl;
    uint64_t sealed;            /* newest sealed */
    atomic_uint_fast64_t sealed_pub; /* the same, read by committers without the lock */
    uint64_t committed;         /* newest every committer notified */
    unsigned acks_needed;
    int64_t last_trigger_ms;
    atomic_int ckpt_requested;
    atomic_int stop;
    atomic_int failed;
    w2l_error first_err;
    int started, done;
    thrd_t src_thr;
    int src_started;
    w2l_rc src_rc;
    int push; /* no source: the host pushes */
    uint64_t retain;
    atomic_llong cpu_ns[4]; /* CPU time by stage: source, ddl, writers, committers */
    w2l__metrics *metrics;
    char *restored_pos;         /* the source position of the restored checkpoint, or NULL */
    w2l__owner *owner;          /* orders table operations and commits (owner.h) */
    w2l__maint *maint;          /* table maintenance beside ingestion (maintenance.h) */
};

/* Adds the calling thread's CPU time to stage k (0 source, else the operator kind). */
static void account_cpu(w2l_pipeline *p, int k)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        atomic_fetch_add(&p->cpu_ns[k], (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

/* ---------------------------------------------------------------- failure / stop ---- */

static void fail(w2l_pipeline *p, const w2l_error *e)
{
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
static w2l_rc first_error(w2l_pipeline *p, w2l_error *err)
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

/* ---------------------------------------------------------------------- messages ---- */

static void msg_free(msg *m)
{
    if (!m) return;
    w2l__batch_free(m->batch);
    w2l__free(m->own_changes);
    w2l__ddl_elem_free(m->ddl);
    w2l_schema_unref(m->schema);
    w2l__arena_release(&m->arena);
    w2l__free(m);
}

static void msg_drop(void *item) { msg_free(item); }

static msg *msg_new(int kind)
{
    msg *m = w2l__calloc(1, sizeof *m);
    if (m) {
        m->kind = kind;
        w2l__arena_init(&m->arena, 1024);
    }
    return m;
}

/* Sends m to node n (blocking: backpressure). Takes ownership. */
static w2l_rc send_to(w2l_pipeline *p, node *n, msg *m, w2l_error *err)
{
    for (;;) {
        w2l_rc rc = w2l__chan_send(n->in, m, 200);
        if (rc == W2L_OK) return W2L_OK;
        if (rc == W2L_CANCELLED || atomic_load(&p->failed)) {
            msg_free(m);
            return first_error(p, err);
        }
    }
}

/* Upstream answers: never block. */
static void side_push(node *n, msg *m)
{
    mtx_lock(&n->side_mtx);
    m->next = NULL;
    if (n->side_tail) n->side_tail->next = m;
    else n->side_head = m;
    n->side_tail = m;
    mtx_unlock(&n->side_mtx);
    msg *nop = msg_new(M_NOP);
    if (nop && w2l__chan_send(n->in, nop, 0) != W2L_OK) msg_free(nop);
}

static msg *side_pop(node *n)
{
    mtx_lock(&n->side_mtx);
    msg *m = n->side_head;
    if (m) {
        n->side_head = m->next;
        if (!n->side_head) n->side_tail = NULL;
        m->next = NULL;
    }
    mtx_unlock(&n->side_mtx);
    return m;
}

static w2l_rc copy_str(msg *m, const char *s, const char **out, w2l_error *err)
{
    *out = NULL;
    if (!s) return W2L_OK;
    char *c = w2l__arena_strndup(&m->arena, s, strlen(s));
    W2L_NOMEM_IF(!c, err);
    *out = c;
    return W2L_OK;
}

/* Copies element e into a new message (names, payload, schema reference, DDL). Changes
 * are handled by the caller. */
static w2l_rc msg_from_element(const w2l_element *e, unsigned from, msg **out, w2l_error *err)
{
    msg *m = msg_new(M_ELEM);
    W2L_NOMEM_IF(!m, err);
    m->from = from;
    m->e = *e;
    m->e.changes = NULL;
    m->e.nchanges = 0;
    m->e.ddl = NULL;
    w2l_rc rc = copy_str(m, e->ns, &m->e.ns, err);
    if (rc == W2L_OK) rc = copy_str(m, e->table, &m->e.table, err);
    if (rc == W2L_OK && e->payload) {
        char *pl = w2l__arena_alloc(&m->arena, e->payload_len + 1);
        if (!pl) rc = w2l__fail(err, W2L_NOMEM, "out of memory copying an element");
        else {
            memcpy(pl, e->payload, e->payload_len);
            pl[e->payload_len] = '\0';
            m->e.payload = pl;
        }
    }
    if (rc == W2L_OK && e->schema) m->schema = w2l_schema_ref((w2l_schema *)e->schema);
    if (rc == W2L_OK && e->ddl) {
        /* a DDL element is forwarded by copying it as the emitter would */
        w2l__ddl_elem *d = w2l__calloc(1, sizeof *d);
        if (!d) rc = w2l__fail(err, W2L_NOMEM, "out of memory copying a DDL element");
        else {
            w2l__arena_init(&d->arena, e->ddl->sql_len + 128);
            d->ddl = *e->ddl;
            d->ddl.sql = w2l__arena_strndup(&d->arena, e->ddl->sql, e->ddl->sql_len);
            d->ddl.db = e->ddl->db ? w2l__arena_strndup(&d->arena, e->ddl->db, strlen(e->ddl->db)) : NULL;
            d->ddl.table = e->ddl->table ? w2l__arena_strndup(&d->arena, e->ddl->table, strlen(e->ddl->table)) : NULL;
            if (d->ddl.schema_after) w2l_schema_ref((w2l_schema *)d->ddl.schema_after);
            m->ddl = d;
            m->e.ddl = &d->ddl;
            if (!d->ddl.sql) rc = w2l__fail(err, W2L_NOMEM, "out of memory copying a DDL element");
        }
    }
    if (rc != W2L_OK) {
        msg_free(m);
        return rc;
    }
    *out = m;
    return W2L_OK;
}

/* ------------------------------------------------------------------- coordinator ---- */

static void notify_committers(w2l_pipeline *p)
{
    for (unsigned i = 0; i < p->ncommit; i++) {
        msg *nop = msg_new(M_NOP);
        if (nop && w2l__chan_send(p->committer[i].in, nop, 0) != W2L_OK) msg_free(nop);
    }
}

/* One participant finished checkpoint id. The last one seals it. */
static void ack(w2l_pipeline *p, uint64_t id)
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
            w2l__error_prefix(&err, "checkpoint %llu: ", (unsigned long long)ck);
            fail(p, &err);
            return;
        }
        w2l__log(W2L_LOG_DEBUG, "checkpoint %llu sealed", (unsigned long long)ck);
        p->sealed = ck;
        atomic_store(&p->sealed_pub, ck);
        sealed_any = 1;
        memmove(&p->fl[0], &p->fl[1], (p->nfl - 1) * sizeof p->fl[0]);
        p->nfl--;
    }
    cnd_broadcast(&p->cv);
    mtx_unlock(&p->mtx);
    if (sealed_any) notify_committers(p);
}

/* A committer finished notify_complete(id). */
/* Committer `committer` finished notify_complete(id). A checkpoint is committed when every
 * committer is past it: the minimum of what each has notified (they run independently, so
 * one may be a checkpoint ahead of another). */
static void commit_done(w2l_pipeline *p, node *n, uint64_t id)
{
    w2l__metrics_committed(p->metrics, n->index, id);
    uint64_t prune_below = 0;
    mtx_lock(&p->mtx);
    n->notified = id;
    uint64_t low = id;
    for (unsigned i = 0; i < p->ncommit; i++)
        if (p->committer[i].notified < low) low = p->committer[i].notified;
    if (low > p->committed) {
        p->committed = low;
        w2l__log(W2L_LOG_DEBUG, "checkpoint %llu committed", (unsigned long long)low);
        /* every table has what `low` holds: keep the newest `retain` checkpoints */
        if (low > p->retain) prune_below = low - p->retain + 1;
    }
    cnd_broadcast(&p->cv);
    mtx_unlock(&p->mtx);
    w2l_error err;
    if (prune_below && w2l_state_prune(p->st, prune_below, &err) != W2L_OK)
        w2l__log(W2L_LOG_WARN, "pipeline: pruning checkpoints below %llu: %s", (unsigned long long)prune_below, err.msg);
}

/* ---------------------------------------------------------------------- routing ----- */

static unsigned table_parallelism(w2l_pipeline *p, const char *ns, const char *table)
{
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    const char *v = NULL;
    w2l_conf_get_for_table(p->conf, name, "table-parallelism", &v, NULL);
    long n = v ? strtol(v, NULL, 10) : 1;
    if (n < 1) n = 1;
    if ((unsigned long)n > p->nwriter) n = (long)p->nwriter;
    return (unsigned)n;
}

/* Hash of a change's key: its identifier fields, or the whole row without a key. It must
 * not move a row to another writer when the table's schema changes within a checkpoint
 * (the writer finds rows of its checkpoint only in its own map): each non-NULL value
 * counts by field id and widened value (int as long, float as double), and the sum does
 * not depend on column order, so a column added (NULL in older rows), widened or moved
 * keeps the hash. (A column dropped from a table without key changes it.) */
static uint64_t key_hash(const w2l_change *c)
{
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(c->schema, &nid);
    uint64_t h = 0x6b6579;
    size_t n = nid ? nid : c->ncols;
    for (size_t k = 0; k < n; k++) {
        long i = nid ? w2l_schema_index_of_id(c->schema, ids[k]) : (long)k;
        if (i < 0) continue;
        const w2l_value *v = &c->row[i];
        if (v->is_null || (c->present && !(c->present[i / 8] >> (i % 8) & 1))) continue;
        const w2l_field *f = w2l_schema_field(c->schema, (size_t)i);
        uint64_t seed = 0x6b6579 + (uint64_t)(uint32_t)f->id * 0x9E3779B97F4A7C15ULL;
        w2l_type_id t = f->type.id;
        int64_t i64;
        double d;
        if (t == W2L_TYPE_STRING || t == W2L_TYPE_BINARY) h += w2l__hash64(v->v.bytes.ptr, v->v.bytes.len, seed);
        else if (t == W2L_TYPE_DECIMAL) h += w2l__hash64(&v->v.dec, sizeof v->v.dec, seed);
        else if (t == W2L_TYPE_DOUBLE) h += w2l__hash64(&v->v.f64, 8, seed);
        else if (t == W2L_TYPE_FLOAT) d = v->v.f32, h += w2l__hash64(&d, 8, seed);
        else if (t == W2L_TYPE_BOOLEAN || t == W2L_TYPE_INT || t == W2L_TYPE_DATE)
            i64 = v->v.i32, h += w2l__hash64(&i64, 8, seed);
        else h += w2l__hash64(&v->v.i64, 8, seed);
    }
    return h;
}

static int is_bytes(w2l_type_id t) { return t == W2L_TYPE_STRING || t == W2L_TYPE_BINARY; }

/* Deep copy of changes into m's arena (for changes an operator built itself). */
static w2l_rc copy_changes(msg *m, const w2l_change *const *src, size_t n, w2l_error *err)
{
    w2l_change *cs = w2l__calloc(n ? n : 1, sizeof *cs);
    W2L_NOMEM_IF(!cs, err);
    m->own_changes = cs;
    for (size_t i = 0; i < n; i++) {
        const w2l_change *c = src[i];
        cs[i] = *c;
        cs[i].db = m->e.ns;
        cs[i].table = m->e.table;
        w2l_value *row = w2l__arena_alloc(&m->arena, c->ncols * sizeof *row + 1);
        W2L_NOMEM_IF(!row, err);
        memcpy(row, c->row, c->ncols * sizeof *row);
        for (size_t k = 0; k < c->ncols; k++) {
            if (row[k].is_null || !is_bytes(w2l_schema_field(c->schema, k)->type.id)) continue;
            char *b = w2l__arena_alloc(&m->arena, row[k].v.bytes.len + 1);
            W2L_NOMEM_IF(!b, err);
            memcpy(b, row[k].v.bytes.ptr, row[k].v.bytes.len);
            row[k].v.bytes.ptr = b;
        }
        if (c->present) {
            uint8_t *pr = w2l__arena_alloc(&m->arena, (c->ncols + 7) / 8);
            W2L_NOMEM_IF(!pr, err);
            memcpy(pr, c->present, (c->ncols + 7) / 8);
            cs[i].present = pr;
        }
        cs[i].row = row;
    }
    /* the schema of copied changes: one reference for the message (all changes of one
     * element share the table; schemas may differ only across DDL, which splits batches) */
    if (n && !m->schema) m->schema = w2l_schema_ref((w2l_schema *)src[0]->schema);
    m->e.changes = cs;
    m->e.nchanges = n;
    return W2L_OK;
}

/* Routes a CHANGES element of node `from` to the writers. */
static w2l_rc route_changes(node *from, const w2l_element *e, w2l_error *err)
{
    w2l_pipeline *p = from->p;
    if (e->nchanges == 0) return W2L_OK;
    uint64_t th = w2l__table_hash(e->ns, e->table);
    unsigned par = table_parallelism(p, e->ns, e->table);
    unsigned base = (unsigned)(th % p->nwriter);
    w2l__batch *src = from->cur ? from->cur->batch : NULL;
    int in_batch = src && e->changes >= src->changes && e->changes + e->nchanges <= src->changes + src->n;
    /* group change pointers by target writer */
    const w2l_change **ptrs = w2l__malloc(e->nchanges * sizeof *ptrs);
    unsigned *target = w2l__malloc(e->nchanges * sizeof *target);
    size_t *count = w2l__calloc(par, sizeof *count);
    if (!ptrs || !target || !count) {
        w2l__free(ptrs), w2l__free(target), w2l__free(count);
        return w2l__fail(err, W2L_NOMEM, "out of memory routing changes of %s.%s", e->ns, e->table);
    }
    for (size_t i = 0; i < e->nchanges; i++) {
        target[i] = par == 1 ? 0 : (unsigned)(key_hash(&e->changes[i]) % par);
        count[target[i]]++;
    }
    w2l_rc rc = W2L_OK;
    for (unsigned t = 0; t < par && rc == W2L_OK; t++) {
        if (!count[t]) continue;
        size_t k = 0;
        for (size_t i = 0; i < e->nchanges; i++)
            if (target[i] == t) ptrs[k++] = &e->changes[i];
        w2l_element sub = *e;
        sub.changes = NULL;
        sub.nchanges = 0;
        msg *m;
        rc = msg_from_element(&sub, from->index, &m, err);
        if (rc != W2L_OK) break;
        if (in_batch) {
            /* rows stay in the source batch's arena: share it */
            w2l_change *cs = w2l__malloc(k * sizeof *cs);
            if (!cs) {
                msg_free(m);
                rc = w2l__fail(err, W2L_NOMEM, "out of memory routing changes");
                break;
            }
            for (size_t i = 0; i < k; i++) cs[i] = *ptrs[i];
            m->own_changes = cs;
            m->batch = w2l__batch_ref(src);
            /* the operator may have pointed the changes at another schema (its table's) */
            if (cs[0].schema != src->schema) m->schema = w2l_schema_ref((w2l_schema *)cs[0].schema);
            m->e.changes = cs;
            m->e.nchanges = k;
        } else if ((rc = copy_changes(m, ptrs, k, err)) != W2L_OK) {
            msg_free(m);
            break;
        }
        rc = send_to(p, &p->writer[(base + t) % p->nwriter], m, err);
    }
    w2l__free(ptrs);
    w2l__free(target);
    w2l__free(count);
    return rc;
}

/* The writers that hold a table's rows. */
static void table_writers(w2l_pipeline *p, const char *ns, const char *table, unsigned *base,
                          unsigned *par)
{
    *par = table_parallelism(p, ns, table);
    *base = (unsigned)(w2l__table_hash(ns, table) % p->nwriter);
}

w2l_rc w2l_collect(w2l_collector *out, const w2l_element *e, w2l_error *err)
{
    if (!out || !e) return w2l__fail(err, W2L_MISUSE, "w2l_collect: NULL argument");
    node *from = out->n;
    w2l_pipeline *p = from->p;
    if (atomic_load(&p->failed)) return w2l__fail(err, W2L_CANCELLED, "pipeline stopping");
    if (e->kind == W2L_ELEM_BARRIER || e->kind == W2L_ELEM_END)
        return w2l__fail(err, W2L_MISUSE, "w2l_collect: barriers and end of stream are forwarded by the runtime");
    if (!e->ns || !e->table) return w2l__fail(err, W2L_MISUSE, "w2l_collect: element without a table");
    unsigned base, par;
    msg *m;
    switch (from->kind) {
    case W2L_OPERATOR_DDL:
        if (e->kind == W2L_ELEM_CHANGES) return route_changes(from, e, err);
        if (e->kind == W2L_ELEM_WRITER_COMMIT || e->kind == W2L_ELEM_SCHEMA) {
            table_writers(p, e->ns, e->table, &base, &par);
            if (e->kind == W2L_ELEM_WRITER_COMMIT && e->payload &&
                !strncmp(e->payload, W2L_OPS_RENAME_FENCE_HEAD, strlen(W2L_OPS_RENAME_FENCE_HEAD))) {
                /* a rename reaches every writer: one may hold files of the table under this
                 * name that an earlier rename in the checkpoint moved to it (ops.h) */
                base = 0;
                par = p->nwriter;
            }
            for (unsigned t = 0; t < par; t++) {
                W2L_TRY(msg_from_element(e, from->index, &m, err));
                W2L_TRY(send_to(p, &p->writer[(base + t) % p->nwriter], m, err));
            }
            if (e->kind == W2L_ELEM_SCHEMA) {
                W2L_TRY(msg_from_element(e, from->index, &m, err));
                m->from = UINT32_MAX; /* not a data input of the committer: never held */
                side_push(&p->committer[w2l__table_hash(e->ns, e->table) % p->ncommit], m);
            }
            return W2L_OK;
        }
        break;
    case W2L_OPERATOR_WRITER:
        if (e->kind == W2L_ELEM_WRITE_RESULT) {
            unsigned c = (unsigned)(w2l__table_hash(e->ns, e->table) % p->ncommit);
            w2l__metrics_result(p->metrics, e->ns, e->table, e->ckpt, c, e->payload, e->payload_len);
            W2L_TRY(msg_from_element(e, from->index, &m, err));
            return send_to(p, &p->committer[c], m, err);
        }
        if (e->kind == W2L_ELEM_WRITER_COMMIT) {
            /* the answer to a fence goes back to the table's DDL handler */
            W2L_TRY(msg_from_element(e, from->index, &m, err));
            side_push(&p->ddl[w2l__table_hash(e->ns, e->table) % p->nddl], m);
            return W2L_OK;
        }
        break;
    case W2L_OPERATOR_COMMITTER:
        break;
    }
    return w2l__fail(err, W2L_MISUSE, "w2l_collect: a %s operator cannot send element kind %d",
                     from->kind == W2L_OPERATOR_DDL ? "DDL" : from->kind == W2L_OPERATOR_WRITER ? "writer" : "committer",
                     (int)e->kind);
}

/* ------------------------------------------------------------------ node threads ---- */

static node *downstream(w2l_pipeline *p, node *n, unsigned *count)
{
    switch (n->kind) {
    case W2L_OPERATOR_DDL: *count = p->nwriter; return p->writer;
    case W2L_OPERATOR_WRITER: *count = p->ncommit; return p->committer;
    default: *count = 0; return NULL;
    }
}

static w2l_rc forward_control(w2l_pipeline *p, node *n, int kind, uint64_t ckpt, w2l_error *err)
{
    unsigned cnt;
    node *d = downstream(p, n, &cnt);
    for (unsigned i = 0; i < cnt; i++) {
        msg *m = msg_new(kind);
        W2L_NOMEM_IF(!m, err);
        m->from = n->index;
        m->ckpt = ckpt;
        W2L_TRY(send_to(p, &d[i], m, err));
    }
    return W2L_OK;
}

static w2l_rc call_process(node *n, msg *m, w2l_error *err)
{
    w2l_collector out = {n};
    n->cur = m;
    w2l_rc rc = n->m->process(n->op, &m->e, &out, err);
    n->cur = NULL;
    return rc;
}

static w2l_rc handle(node *n, msg *m, w2l_error *err);

/* Replays what was held while aligning, input by input, in arrival order. */
static w2l_rc release_held(node *n, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    for (unsigned i = 0; i < n->ninputs; i++) {
        msg *h = n->held_head[i];
        n->held_head[i] = n->held_tail[i] = NULL;
        while (h) {
            msg *next = h->next;
            h->next = NULL;
            if (rc == W2L_OK) rc = handle(n, h, err);
            else msg_free(h);
            h = next;
        }
    }
    return rc;
}

static w2l_rc on_barrier_aligned(node *n, uint64_t ckpt, w2l_error *err)
{
    w2l_pipeline *p = n->p;
    msg bm = {0};
    bm.kind = M_BARRIER;
    bm.e.kind = W2L_ELEM_BARRIER;
    bm.e.ckpt = ckpt;
    w2l_rc rc = call_process(n, &bm, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "checkpoint %llu: ", (unsigned long long)ckpt);
        return rc;
    }
    W2L_TRY(forward_control(p, n, M_BARRIER, ckpt, err));
    n->last_barrier = ckpt;
    ack(p, ckpt);
    return W2L_OK;
}

static w2l_rc on_end_aligned(node *n, w2l_error *err)
{
    msg em = {0};
    em.kind = M_END;
    em.e.kind = W2L_ELEM_END;
    W2L_TRY(call_process(n, &em, err));
    return forward_control(n->p, n, M_END, 0, err);
}

static w2l_rc handle(node *n, msg *m, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    if (m->kind == M_NOP) {
        msg_free(m);
        return W2L_OK;
    }
    if (m->from < n->ninputs && n->blocked[m->from]) {
        /* this input is past the barrier being aligned: hold it */
        m->next = NULL;
        if (n->held_tail[m->from]) n->held_tail[m->from]->next = m;
        else n->held_head[m->from] = m;
        n->held_tail[m->from] = m;
        return W2L_OK;
    }
    switch (m->kind) {
    case M_ELEM:
        rc = call_process(n, m, err);
        msg_free(m);
        return rc;
    case M_BARRIER: {
        uint64_t ck = m->ckpt;
        unsigned from = m->from;
        msg_free(m);
        if (n->ninputs == 1) return on_barrier_aligned(n, ck, err);
        n->aligning = ck;
        n->blocked[from] = 1;
        if (++n->seen < n->ninputs) return W2L_OK;
        n->seen = 0;
        n->aligning = 0;
        memset(n->blocked, 0, n->ninputs);
        rc = on_barrier_aligned(n, ck, err);
        if (rc == W2L_OK) rc = release_held(n, err);
        return rc;
    }
    case M_END:
        msg_free(m);
        if (++n->ends < n->ninputs) return W2L_OK;
        return on_end_aligned(n, err);
    }
    msg_free(m);
    return W2L_OK;
}

/* Committers: commit every checkpoint sealed since the last one, in order. */
static w2l_rc commit_sealed(node *n, w2l_error *err)
{
    w2l_pipeline *p = n->p;
    uint64_t sealed = atomic_load(&p->sealed_pub);
    while (n->notified < sealed) {
        uint64_t ck = n->notified + 1;
        /* the table operations of ck come after every commit of ck - 1 and before any of
         * ck (owner.h) */
        w2l_rc rc = w2l__owner_before_commit(p->owner, n->index, ck, err);
        if (rc == W2L_OK) rc = n->m->notify_complete(n->op, ck, err);
        if (rc == W2L_OK) w2l__owner_data_done(p->owner, n->index, ck);
        if (rc == W2L_CANCELLED) return rc;
        if (rc != W2L_OK) {
            /* the check-commit sink: loud, and it stops the job */
            w2l__error_prefix(err, "commit of checkpoint %llu failed: ", (unsigned long long)ck);
            w2l__log(W2L_LOG_ERROR, "check-commit: %s", err->msg);
            return rc;
        }
        commit_done(p, n, ck);
    }
    return W2L_OK;
}

static int node_main(void *arg)
{
    node *n = arg;
    w2l_pipeline *p = n->p;
    w2l_error err;
    w2l_error_clear(&err);
    w2l__owner_set_current(p->owner);
    w2l__maint_set_current(p->maint);
    w2l__metrics_set_current(p->metrics);
    w2l_rc rc = n->m->open(n->m, p->conf, n->index, n->kind == W2L_OPERATOR_DDL ? p->nddl
                                                    : n->kind == W2L_OPERATOR_WRITER ? p->nwriter : p->ncommit,
                           p->st, p->restored, n->op, &err);
    int opened = rc == W2L_OK;
    while (rc == W2L_OK) {
        msg *s;
        while (rc == W2L_OK && (s = side_pop(n)) != NULL) {
            rc = call_process(n, s, &err);
            msg_free(s);
        }
        if (rc == W2L_OK && n->kind == W2L_OPERATOR_COMMITTER) rc = commit_sealed(n, &err);
        if (rc != W2L_OK) break;
        if (n->ends == n->ninputs && n->ninputs > 0) break; /* END processed */
        msg *m;
        w2l_rc r = w2l__chan_recv(n->in, (void **)&m, 100);
        if (r == W2L_AGAIN) continue;
        if (r == W2L_DONE) break;
        rc = handle(n, m, &err);
    }
    /* a committer at the end still commits the last checkpoint, once it is sealed (the
     * last acknowledgement may come from another thread after this one saw END) */
    while (rc == W2L_OK && n->kind == W2L_OPERATOR_COMMITTER && !atomic_load(&p->failed)) {
        /* what is sealed meanwhile is committed meanwhile: another committer may wait for
         * this one's commits (table operations, owner.h) before it acknowledges the rest */
        rc = commit_sealed(n, &err);
        if (rc != W2L_OK || n->notified >= n->last_barrier) break;
        mtx_lock(&p->mtx);
        if (atomic_load(&p->sealed_pub) <= n->notified && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
    }
    if (rc != W2L_OK && rc != W2L_CANCELLED) {
        const char *kind = n->kind == W2L_OPERATOR_DDL ? "ddl" : n->kind == W2L_OPERATOR_WRITER ? "writer" : "committer";
        w2l__error_prefix(&err, "%s %u: ", kind, n->index);
        fail(p, &err);
    }
    if (opened) n->m->close(n->op);
    account_cpu(p, (int)n->kind);
    return 0;
}

/* ---------------------------------------------------------------- source side ------- */

/* Places checkpoint barrier `id` after the current transaction end. */
static w2l_rc place_barrier(w2l_pipeline *p, uint64_t *out_id, w2l_error *err)
{
    W2L_TRY(w2l__emitter_flush(p->em, err));
    mtx_lock(&p->mtx);
    while (p->nfl == MAX_INFLIGHT && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
    if (atomic_load(&p->failed)) {
        mtx_unlock(&p->mtx);
        return first_error(p, err);
    }
    uint64_t id = p->next_ckpt++;
    p->fl[p->nfl].id = id;
    p->fl[p->nfl].acks = 0;
    p->nfl++;
    p->last_trigger_ms = w2l__now_ms();
    mtx_unlock(&p->mtx);
    size_t len;
    const char *pos = w2l__emitter_position(p->em, &len);
    if (!pos && p->restored_pos) { /* nothing new since the restart: still there */
        pos = p->restored_pos;
        len = strlen(pos);
    }
    if (pos) W2L_TRY(w2l_state_put(p->st, id, "source/position", pos, len, err));
    for (unsigned i = 0; i < p->nddl; i++) {
        msg *m = msg_new(M_BARRIER);
        W2L_NOMEM_IF(!m, err);
        m->ckpt = id;
        W2L_TRY(send_to(p, &p->ddl[i], m, err));
    }
    ack(p, id); /* the source's part: its position is in the state */
    if (out_id) *out_id = id;
    return W2L_OK;
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
    msg *m = msg_new(M_ELEM);
    if (!m) {
        w2l__batch_free(b);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__metrics_rows(p->metrics, b->ns, b->table, b->n);
    m->batch = b;
    m->e.kind = W2L_ELEM_CHANGES;
    m->e.ns = b->ns;
    m->e.table = b->table;
    m->e.changes = b->changes;
    m->e.nchanges = b->n;
    return send_to(p, &p->ddl[b->table_hash % p->nddl], m, err);
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
    msg *m = msg_new(M_ELEM);
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
    unsigned target = d->ddl.db && d->ddl.table ? (unsigned)(w2l__table_hash(d->ddl.db, d->ddl.table) % p->nddl) : 0;
    return send_to(p, &p->ddl[target], m, err);
}

/* w2l_emit_quarantine(): QUARANTINE to the table's DDL handler, after its changes (the
 * emitter handed the table's open batch over first). Payload: {"reason":..., "rows":N}. */
static w2l_rc hook_quarantine(void *ctx, const char *ns, const char *table, const char *reason, uint64_t rows,
                              w2l_error *err)
{
    w2l_pipeline *p = ctx;
    if (!p->started) W2L_TRY(w2l_pipeline_start(p, err));
    w2l__json *j = w2l__json_new_object();
    int bad = !j || w2l__json_add(j, "reason", reason ? w2l__json_new_string(reason) : w2l__json_new_null()) ||
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
    w2l_rc rc = msg_from_element(&e, 0, &m, err);
    w2l__free(text);
    W2L_TRY(rc);
    return send_to(p, &p->ddl[w2l__table_hash(ns, table) % p->nddl], m, err);
}

static w2l_rc hook_commit(void *ctx, const char *position, size_t len, w2l_error *err)
{
    (void)position, (void)len;
    w2l_pipeline *p = ctx;
    if (p->push) return W2L_OK; /* the host places checkpoints itself */
    if (!atomic_load(&p->ckpt_requested) &&
        !(p->interval_ms > 0 && w2l__now_ms() - p->last_trigger_ms >= p->interval_ms))
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
        msg *m = msg_new(M_END);
        if (!m) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else rc = send_to(p, &p->ddl[i], m, err);
    }
    if (rc == W2L_OK) {
        mtx_lock(&p->mtx);
        while (p->committed < last && !atomic_load(&p->failed)) cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
    }
    return rc;
}

static int source_main(void *arg)
{
    w2l_pipeline *p = arg;
    w2l_error err;
    w2l_error_clear(&err);
    w2l_rc rc = W2L_OK;
    while (!atomic_load(&p->failed)) {
        if (atomic_load(&p->stop)) break;
        if (!w2l__emitter_in_txn(p->em) &&
            (atomic_load(&p->ckpt_requested) || w2l__now_ms() - p->last_trigger_ms >= p->interval_ms)) {
            atomic_store(&p->ckpt_requested, 0);
            if ((rc = place_barrier(p, NULL, &err)) != W2L_OK) break;
        }
        rc = p->srcm->next(p->src, p->em, 100, &err);
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
    } else if (rc != W2L_OK && rc != W2L_CANCELLED && !atomic_load(&p->failed) && !w2l__emitter_in_txn(p->em)) {
        /* a source error: commit every whole transaction before it with a last checkpoint,
         * then stop with the error (a restart resumes right after them) */
        w2l_error derr;
        w2l_error_clear(&derr);
        w2l_rc d = drain(p, &derr);
        if (d != W2L_OK && d != W2L_CANCELLED)
            w2l__log(W2L_LOG_WARN, "pipeline: last checkpoint before stopping: %s", derr.msg);
    }
    if (rc != W2L_OK && rc != W2L_CANCELLED) fail(p, &err);
    p->src_rc = rc;
    account_cpu(p, 0);
    return 0;
}

/* ---------------------------------------------------------------------- lifecycle --- */

static w2l_rc conf_uint(const w2l_conf *c, const char *key, unsigned *out, w2l_error *err)
{
    int64_t v;
    W2L_TRY(w2l_conf_get_int(c, key, &v, err));
    *out = (unsigned)v;
    return W2L_OK;
}

static w2l_rc find_operator(const w2l_conf *c, w2l_operator_kind kind, const char *key,
                            const w2l_operator_methods **out, w2l_error *err)
{
    const char *name = NULL;
    W2L_TRY(w2l_conf_get(c, key, &name, err));
    *out = w2l_operator_find(kind, name);
    if (!*out)
        return w2l__fail(err, W2L_CONFIG, "%s: no operator '%s' is registered (w2l_operator_register(3))", key,
                         name ? name : "default");
    return W2L_OK;
}

static void free_nodes(w2l_pipeline *p)
{
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; p->nodes && i < total; i++) {
        node *n = &p->nodes[i];
        w2l__chan_free(n->in, msg_drop);
        for (unsigned k = 0; n->held_head && k < n->ninputs; k++) {
            msg *h = n->held_head[k];
            while (h) {
                msg *next = h->next;
                msg_free(h);
                h = next;
            }
        }
        msg *s;
        while ((s = side_pop(n)) != NULL) msg_free(s);
        mtx_destroy(&n->side_mtx);
        w2l__free(n->blocked);
        w2l__free(n->held_head);
        w2l__free(n->held_tail);
        w2l__free(n->op);
    }
    w2l__free(p->nodes);
    p->nodes = NULL;
}

static w2l_rc make_nodes(w2l_pipeline *p, w2l_error *err)
{
    const w2l_operator_methods *mk[3];
    W2L_TRY(find_operator(p->conf, W2L_OPERATOR_DDL, "operator.ddl", &mk[0], err));
    W2L_TRY(find_operator(p->conf, W2L_OPERATOR_WRITER, "operator.writer", &mk[1], err));
    W2L_TRY(find_operator(p->conf, W2L_OPERATOR_COMMITTER, "operator.committer", &mk[2], err));
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    p->nodes = w2l__calloc(total, sizeof *p->nodes);
    W2L_NOMEM_IF(!p->nodes, err);
    p->ddl = p->nodes;
    p->writer = p->nodes + p->nddl;
    p->committer = p->writer + p->nwriter;
    for (unsigned i = 0; i < total; i++) {
        node *n = &p->nodes[i];
        n->p = p;
        n->kind = i < p->nddl ? W2L_OPERATOR_DDL : i < p->nddl + p->nwriter ? W2L_OPERATOR_WRITER : W2L_OPERATOR_COMMITTER;
        n->index = n->kind == W2L_OPERATOR_DDL ? i : n->kind == W2L_OPERATOR_WRITER ? i - p->nddl : i - p->nddl - p->nwriter;
        n->ninputs = n->kind == W2L_OPERATOR_DDL ? 1 : n->kind == W2L_OPERATOR_WRITER ? p->nddl : p->nwriter;
        n->m = mk[n->kind - 1];
        mtx_init(&n->side_mtx, mtx_plain);
        n->in = w2l__chan_new(p->chan_cap);
        n->op = w2l__calloc(1, n->m->size > sizeof(w2l_operator) ? n->m->size : sizeof(w2l_operator));
        n->blocked = w2l__calloc(n->ninputs, 1);
        n->held_head = w2l__calloc(n->ninputs, sizeof *n->held_head);
        n->held_tail = w2l__calloc(n->ninputs, sizeof *n->held_tail);
        if (!n->in || !n->op || !n->blocked || !n->held_head || !n->held_tail)
            return w2l__fail(err, W2L_NOMEM, "out of memory building the pipeline");
        n->op->methods = n->m;
        /* committers start by re-committing the restored checkpoint (commit_sealed); when it
         * holds table operations of an older checkpoint K, from K - 1 on, so that each
         * operation falls between the commits of its checkpoint and the one before */
        if (n->kind == W2L_OPERATOR_COMMITTER) {
            uint64_t from = p->restored, k = w2l__owner_first_ops(p->owner);
            if (k && k <= from) from = k > 1 ? k - 1 : 1;
            n->notified = from ? from - 1 : 0;
        }
    }
    return W2L_OK;
}

w2l_rc w2l_pipeline_new(const w2l_conf *conf, w2l_pipeline **out, w2l_error *err)
{
    *out = NULL;
    if (!conf) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_new: NULL conf");
    w2l_pipeline *p = w2l__calloc(1, sizeof *p);
    W2L_NOMEM_IF(!p, err);
    mtx_init(&p->mtx, mtx_plain);
    cnd_init(&p->cv);
    w2l_rc rc = W2L_OK;
    p->conf = w2l_conf_dup(conf);
    p->metrics = w2l__metrics_new();
    if (!p->conf || !p->metrics) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    int64_t v = 0;
    if (rc == W2L_OK) rc = conf_uint(p->conf, "ddl-parallelism", &p->nddl, err);
    if (rc == W2L_OK) rc = conf_uint(p->conf, "parallelism", &p->nwriter, err);
    if (rc == W2L_OK) rc = conf_uint(p->conf, "committer-parallelism", &p->ncommit, err);
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "channel-capacity", &v, err)) == W2L_OK) p->chan_cap = (size_t)v;
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "batch-rows", &v, err)) == W2L_OK) p->batch_rows = (size_t)v;
    if (rc == W2L_OK) rc = w2l_conf_get_int(p->conf, "checkpoint-interval", &p->interval_ms, err);
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "until-caught-up", &v, err)) == W2L_OK) p->until_caught_up = (int)v;
    if (rc == W2L_OK && (rc = w2l_conf_get_int(p->conf, "checkpoint-retain", &v, err)) == W2L_OK) p->retain = (uint64_t)v;
    const char *state_uri = NULL, *source_uri = NULL;
    if (rc == W2L_OK) rc = w2l_conf_get(p->conf, "state", &state_uri, err);
    if (rc == W2L_OK) rc = w2l_conf_get(p->conf, "source", &source_uri, err);
    if (rc == W2L_OK) rc = w2l_state_open(state_uri, p->conf, &p->st, err);
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
        rc = p->owner ? w2l__owner_restore(p->owner, p->st, err) : w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK) rc = w2l__maint_new(p->conf, p->metrics, p->ncommit, &p->maint, err);
    if (rc == W2L_OK) {
        p->acks_needed = 1 + p->nddl + p->nwriter + p->ncommit;
        rc = make_nodes(p, err);
    }
    w2l__emit_hooks hooks = {hook_batch, hook_ddl, hook_commit, p};
    if (rc == W2L_OK) {
        p->em = w2l__emitter_new(&hooks, p->batch_rows);
        if (!p->em) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else w2l__emitter_set_quarantine(p->em, hook_quarantine);
    }
    if (rc == W2L_OK && source_uri && *source_uri) {
        char scheme[32];
        size_t sl = strcspn(source_uri, ":");
        snprintf(scheme, sizeof scheme, "%.*s", (int)(sl < sizeof scheme ? sl : sizeof scheme - 1), source_uri);
        p->srcm = w2l_source_find(scheme);
        if (!p->srcm) {
            rc = w2l__fail(err, W2L_CONFIG, "source: unknown kind '%s' (expected mysql://, file: or kafka://)", scheme);
        } else {
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
            p->src = w2l__calloc(1, p->srcm->size > sizeof *p->src ? p->srcm->size : sizeof *p->src);
            if (rc == W2L_OK && !p->src) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            if (rc == W2L_OK) {
                p->src->methods = p->srcm;
                rc = p->srcm->open(p->srcm, p->conf, source_uri, pos.len ? (const char *)pos.data : NULL, p->src, err);
                if (rc != W2L_OK) {
                    w2l__free(p->src);
                    p->src = NULL;
                }
            }
            w2l_buf_release(&pos);
        }
    } else {
        p->push = 1;
    }
    if (rc != W2L_OK) {
        w2l_pipeline_free(p);
        return rc;
    }
    p->last_trigger_ms = w2l__now_ms();
    if (p->restored) w2l__log(W2L_LOG_INFO, "pipeline: restored from checkpoint %llu", (unsigned long long)p->restored);
    *out = p;
    return W2L_OK;
}

w2l_rc w2l_pipeline_start(w2l_pipeline *p, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_start: NULL pipeline");
    if (p->started) return W2L_OK;
    p->started = 1;
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; i < total; i++) {
        if (thrd_create(&p->nodes[i].thr, node_main, &p->nodes[i]) != thrd_success) {
            w2l_error e;
            w2l__fail(&e, W2L_ERROR, "cannot start an operator thread");
            fail(p, &e);
            if (err) *err = e;
            return W2L_ERROR;
        }
        p->nodes[i].started = 1;
    }
    if (!p->push) {
        if (thrd_create(&p->src_thr, source_main, p) != thrd_success) {
            w2l_error e;
            w2l__fail(&e, W2L_ERROR, "cannot start the source thread");
            fail(p, &e);
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
        while (p->committed < target && !atomic_load(&p->failed) && !p->done) cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
        if (ckpt) *ckpt = target;
    } else {
        if (w2l__emitter_in_txn(p->em))
            return w2l__fail(err, W2L_MISUSE, "checkpoint inside a transaction: call w2l_emit_commit() first");
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
    if (atomic_load(&p->failed)) return first_error(p, err);
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
    w2l__log(W2L_LOG_INFO, "pipeline: %llu rows; CPU seconds by stage: source %.2f, ddl %.2f, writers %.2f, committers %.2f",
             (unsigned long long)w2l__emitter_rows(p->em), atomic_load(&p->cpu_ns[0]) / 1e9,
             atomic_load(&p->cpu_ns[1]) / 1e9, atomic_load(&p->cpu_ns[2]) / 1e9, atomic_load(&p->cpu_ns[3]) / 1e9);
    if (atomic_load(&p->failed)) {
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
    if (p->push) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_run: the pipeline has no source; push changes and call w2l_pipeline_finish()");
    W2L_TRY(w2l_pipeline_start(p, err));
    return join_all(p, err);
}

w2l_rc w2l_pipeline_finish(w2l_pipeline *p, w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_finish: NULL pipeline");
    if (!p->push) return w2l_pipeline_run(p, err);
    if (w2l__emitter_in_txn(p->em))
        return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_finish inside a transaction: call w2l_emit_commit() first");
    W2L_TRY(w2l_pipeline_start(p, err));
    w2l_error e;
    w2l_error_clear(&e);
    w2l_rc rc = drain(p, &e);
    if (rc != W2L_OK && rc != W2L_CANCELLED) fail(p, &e);
    return join_all(p, err);
}

w2l_rc w2l_pipeline_metrics(w2l_pipeline *p, int (*fn)(void *, const w2l_table_metrics *), void *ctx,
                            w2l_error *err)
{
    if (!p) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_metrics: NULL pipeline");
    int64_t lag = p->src && p->srcm->lag_ms ? p->srcm->lag_ms(p->src) : 0;
    return w2l__metrics_each(p->metrics, lag, fn, ctx, err);
}

void w2l_pipeline_free(w2l_pipeline *p)
{
    if (!p) return;
    if (p->started && !p->done) {
        w2l_error e;
        w2l__fail(&e, W2L_CANCELLED, "pipeline freed while running");
        fail(p, &e);
        join_all(p, NULL);
    }
    free_nodes(p);
    w2l__maint_free(p->maint);
    w2l__emitter_free(p->em);
    if (p->src) {
        p->srcm->close(p->src);
        w2l__free(p->src);
    }
    w2l_state_close(p->st);
    w2l_conf_free(p->conf);
    w2l__metrics_free(p->metrics);
    w2l__owner_free(p->owner);
    w2l__free(p->restored_pos);
    cnd_destroy(&p->cv);
    mtx_destroy(&p->mtx);
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
        fail(p, &j->err);
        return 0;
    }
    j->rc = commit_sealed(n, &j->err);
    if (j->rc != W2L_OK && j->rc != W2L_CANCELLED) fail(p, &j->err);
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
            fail(p, &e);
            rc = W2L_ERROR;
            break;
        }
        jobs[i].started = 1;
    }
    for (unsigned i = 0; jobs && i < p->ncommit; i++)
        if (jobs[i].started) thrd_join(jobs[i].thr, NULL);
    if (rc == W2L_OK && atomic_load(&p->failed)) rc = first_error(p, err);
    w2l__free(jobs);
    w2l_pipeline_free(p);
    return rc;
}
