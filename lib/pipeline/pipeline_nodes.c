/*
 * The pipeline runtime's plumbing (pipeline.c has the overview): the messages that travel
 * on the channels, the routing of elements between operator instances (w2l_collect), and
 * the operator threads — barrier alignment, forwarding barriers and END downstream, and a
 * committer's commits of sealed checkpoints. pipeline.c holds the checkpoint coordinator,
 * the source thread and the lifecycle.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../event/emit.h"
#include "../json/json.h"
#include "pipeline_int.h"

/* ---------------------------------------------------------------------- messages ---- */

void w2l__msg_free(msg *m)
{
    if (!m) return;
    w2l__batch_free(m->batch);
    w2l__free(m->own_changes);
    w2l__ddl_elem_free(m->ddl);
    w2l_schema_unref(m->schema);
    w2l__arena_release(&m->arena);
    w2l__free(m);
}

static void msg_drop(void *item) { w2l__msg_free(item); }

msg *w2l__msg_new(int kind)
{
    msg *m = w2l__calloc(1, sizeof *m);
    if (m) {
        m->kind = kind;
        w2l__arena_init(&m->arena, 1024);
    }
    return m;
}

/* Sends m to node n (blocking: backpressure). Takes ownership. */
w2l_rc w2l__msg_send(w2l_pipeline *p, node *n, msg *m, w2l_error *err)
{
    for (;;) {
        w2l_rc rc = w2l__chan_send(n->in, m, 200);
        if (rc == W2L_OK) return W2L_OK;
        if (rc == W2L_CANCELLED || atomic_load(&p->failed)) {
            w2l__msg_free(m);
            return w2l__pipeline_first_error(p, err);
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
    msg *nop = w2l__msg_new(M_NOP);
    if (nop && w2l__chan_send(n->in, nop, 0) != W2L_OK) w2l__msg_free(nop);
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
w2l_rc w2l__msg_from_element(const w2l_element *e, unsigned from, msg **out, w2l_error *err)
{
    msg *m = w2l__msg_new(M_ELEM);
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
            d->ddl.db =
                e->ddl->db ? w2l__arena_strndup(&d->arena, e->ddl->db, strlen(e->ddl->db)) : NULL;
            d->ddl.table = e->ddl->table
                               ? w2l__arena_strndup(&d->arena, e->ddl->table, strlen(e->ddl->table))
                               : NULL;
            if (d->ddl.schema_after) w2l_schema_ref((w2l_schema *)d->ddl.schema_after);
            m->ddl = d;
            m->e.ddl = &d->ddl;
            if (!d->ddl.sql) rc = w2l__fail(err, W2L_NOMEM, "out of memory copying a DDL element");
        }
    }
    if (rc != W2L_OK) {
        w2l__msg_free(m);
        return rc;
    }
    *out = m;
    return W2L_OK;
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
        if (t == W2L_TYPE_STRING || t == W2L_TYPE_BINARY)
            h += w2l__hash64(v->v.bytes.ptr, v->v.bytes.len, seed);
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

/* The writers that hold a table's rows. */
static void table_writers(w2l_pipeline *p, const char *ns, const char *table, unsigned *base,
                          unsigned *par)
{
    *par = table_parallelism(p, ns, table);
    *base = (unsigned)(w2l__table_hash(ns, table) % p->nwriter);
}

/* A table renamed in this checkpoint: its changes still go to the writers of the name its
 * rows of this checkpoint were written under, which hold their positions (a change of such
 * a row must be a position delete there: an equality delete in another writer cannot reach
 * a row of the same checkpoint). Forgotten at the barrier, when the writers start over. */
typedef struct ralias {
    char *ns, *table;
    unsigned base, par;
    struct ralias *next;
} ralias;

static void writers_for(node *from, const char *ns, const char *table, unsigned *base,
                        unsigned *par)
{
    for (ralias *a = from->aliases; a; a = a->next)
        if (!strcmp(a->ns, ns) && !strcmp(a->table, table)) {
            *base = a->base;
            *par = a->par;
            return;
        }
    table_writers(from->p, ns, table, base, par);
}

static void aliases_clear(node *n)
{
    while (n->aliases) {
        ralias *a = n->aliases;
        n->aliases = a->next;
        w2l__free(a->ns);
        w2l__free(a->table);
        w2l__free(a);
    }
}

/* RENAME marker of table ns.table (payload {"rename":{"ns":..,"table":..}}): the new name
 * keeps the writers of the old one for the rest of the checkpoint. */
static w2l_rc alias_rename(node *from, const w2l_element *e, w2l_error *err)
{
    w2l__json *j = NULL;
    W2L_TRY(w2l__json_parse(e->payload, e->payload_len, &j, err));
    const w2l__json *to = w2l__json_get(j, "rename");
    const char *tns = w2l__json_str(w2l__json_get(to, "ns")),
               *ttable = w2l__json_str(w2l__json_get(to, "table"));
    w2l_rc rc = W2L_OK;
    if (tns && ttable) {
        ralias *a = w2l__calloc(1, sizeof *a);
        if (a) {
            writers_for(from, e->ns, e->table, &a->base, &a->par);
            a->ns = w2l__strdup(tns);
            a->table = w2l__strdup(ttable);
        }
        if (!a || !a->ns || !a->table) {
            if (a) w2l__free(a->ns), w2l__free(a->table);
            w2l__free(a);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        } else {
            a->next = from->aliases;
            from->aliases = a;
        }
    }
    w2l__json_free(j);
    return rc;
}

/* Routes a CHANGES element of node `from` to the writers. */
static w2l_rc route_changes(node *from, const w2l_element *e, w2l_error *err)
{
    w2l_pipeline *p = from->p;
    if (e->nchanges == 0) return W2L_OK;
    unsigned base, par;
    writers_for(from, e->ns, e->table, &base, &par);
    w2l__batch *src = from->cur ? from->cur->batch : NULL;
    int in_batch =
        src && e->changes >= src->changes && e->changes + e->nchanges <= src->changes + src->n;
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
        rc = w2l__msg_from_element(&sub, from->index, &m, err);
        if (rc != W2L_OK) break;
        if (in_batch) {
            /* rows stay in the source batch's arena: share it */
            w2l_change *cs = w2l__malloc(k * sizeof *cs);
            if (!cs) {
                w2l__msg_free(m);
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
            w2l__msg_free(m);
            break;
        }
        rc = w2l__msg_send(p, &p->writer[(base + t) % p->nwriter], m, err);
    }
    w2l__free(ptrs);
    w2l__free(target);
    w2l__free(count);
    return rc;
}


w2l_rc w2l_collect(w2l_collector *out, const w2l_element *e, w2l_error *err)
{
    if (!out || !e) return w2l__fail(err, W2L_MISUSE, "w2l_collect: NULL argument");
    node *from = out->n;
    w2l_pipeline *p = from->p;
    if (atomic_load(&p->failed)) return w2l__fail(err, W2L_CANCELLED, "pipeline stopping");
    if (e->kind == W2L_ELEM_BARRIER || e->kind == W2L_ELEM_END)
        return w2l__fail(err, W2L_MISUSE,
                         "w2l_collect: barriers and end of stream are forwarded by the runtime");
    if (!e->ns || !e->table)
        return w2l__fail(err, W2L_MISUSE, "w2l_collect: element without a table");
    unsigned base, par;
    msg *m;
    switch (from->kind) {
    case W2L_OPERATOR_DDL:
        if (e->kind == W2L_ELEM_CHANGES) return route_changes(from, e, err);
        if (e->kind == W2L_ELEM_WRITER_COMMIT || e->kind == W2L_ELEM_SCHEMA) {
            writers_for(from, e->ns, e->table, &base, &par);
            if (e->kind == W2L_ELEM_WRITER_COMMIT && e->payload &&
                !strncmp(e->payload, W2L_OPS_RENAME_FENCE_HEAD,
                         strlen(W2L_OPS_RENAME_FENCE_HEAD))) {
                W2L_TRY(alias_rename(from, e, err));
                /* a rename reaches every writer: one may hold files of the table under this
                 * name that an earlier rename in the checkpoint moved to it (ops.h) */
                base = 0;
                par = p->nwriter;
            }
            for (unsigned t = 0; t < par; t++) {
                W2L_TRY(w2l__msg_from_element(e, from->index, &m, err));
                W2L_TRY(w2l__msg_send(p, &p->writer[(base + t) % p->nwriter], m, err));
            }
            unsigned nbase, npar;
            table_writers(p, e->ns, e->table, &nbase, &npar);
            for (unsigned t = 0; e->kind == W2L_ELEM_SCHEMA && t < npar; t++) {
                /* renamed in this checkpoint: its own writers get the schema too, for its
                 * rows after the barrier (the handler announces a schema once) */
                unsigned wi = (nbase + t) % p->nwriter, dup = 0;
                for (unsigned k = 0; k < par && !dup; k++) dup = (base + k) % p->nwriter == wi;
                if (dup) continue;
                W2L_TRY(w2l__msg_from_element(e, from->index, &m, err));
                W2L_TRY(w2l__msg_send(p, &p->writer[wi], m, err));
            }
            if (e->kind == W2L_ELEM_SCHEMA) {
                w2l__metrics_schema(p->metrics, e->ns, e->table);
                W2L_TRY(w2l__msg_from_element(e, from->index, &m, err));
                m->from = UINT32_MAX; /* not a data input of the committer: never held */
                side_push(&p->committer[w2l__table_hash(e->ns, e->table) % p->ncommit], m);
            }
            return W2L_OK;
        }
        break;
    case W2L_OPERATOR_WRITER:
        if (e->kind == W2L_ELEM_WRITE_RESULT) {
            unsigned c = (unsigned)(w2l__table_hash(e->ns, e->table) % p->ncommit);
            w2l__metrics_result(p->metrics, e->ns, e->table, e->ckpt, c, e->payload,
                                e->payload_len);
            W2L_TRY(w2l__msg_from_element(e, from->index, &m, err));
            return w2l__msg_send(p, &p->committer[c], m, err);
        }
        if (e->kind == W2L_ELEM_WRITER_COMMIT) {
            /* the answer to a fence goes back to the table's DDL handler */
            W2L_TRY(w2l__msg_from_element(e, from->index, &m, err));
            side_push(&p->ddl[w2l__table_hash(e->ns, e->table) % p->nddl], m);
            return W2L_OK;
        }
        break;
    case W2L_OPERATOR_COMMITTER:
        break;
    }
    return w2l__fail(err, W2L_MISUSE, "w2l_collect: a %s operator cannot send element kind %d",
                     from->kind == W2L_OPERATOR_DDL      ? "DDL"
                     : from->kind == W2L_OPERATOR_WRITER ? "writer"
                                                         : "committer",
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
        msg *m = w2l__msg_new(kind);
        W2L_NOMEM_IF(!m, err);
        m->from = n->index;
        m->ckpt = ckpt;
        W2L_TRY(w2l__msg_send(p, &d[i], m, err));
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
            else w2l__msg_free(h);
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
    aliases_clear(n); /* the writers start the next checkpoint over */
    n->last_barrier = ckpt;
    w2l__pipeline_ack(p, ckpt);
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
        w2l__msg_free(m);
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
        w2l__msg_free(m);
        return rc;
    case M_BARRIER: {
        uint64_t ck = m->ckpt;
        unsigned from = m->from;
        w2l__msg_free(m);
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
        w2l__msg_free(m);
        if (++n->ends < n->ninputs) return W2L_OK;
        return on_end_aligned(n, err);
    }
    w2l__msg_free(m);
    return W2L_OK;
}

/* Committers: commit every checkpoint sealed since the last one, in order. */
w2l_rc w2l__node_commit_sealed(node *n, w2l_error *err)
{
    w2l_pipeline *p = n->p;
    uint64_t sealed = atomic_load(&p->sealed_pub);
    while (n->notified < sealed) {
        uint64_t ck = n->notified + 1;
        /* a process that lost the store (paused past its lease) commits nothing more:
         * no table operation, no table commit, no maintenance (which commits through the
         * committers, after their checkpoint's commits) */
        w2l_rc rc = w2l__ha_fence(p, err);
        /* the table operations of ck come after every commit of ck - 1 and before any of
         * ck (owner.h) */
        if (rc == W2L_OK) rc = w2l__owner_before_commit(p->owner, n->index, ck, err);
        int64_t t0 = w2l__mono_ns();
        if (rc == W2L_OK) rc = n->m->notify_complete(n->op, ck, err);
        double secs = (double)(w2l__mono_ns() - t0) / 1e9;
        if (rc == W2L_OK) w2l__owner_data_done(p->owner, n->index, ck);
        if (rc == W2L_CANCELLED) return rc;
        if (rc != W2L_OK) {
            w2l__metrics_ckpt_failed(p->metrics);
            /* the check-commit sink: loud, and it stops the job */
            w2l__error_prefix(err, "commit of checkpoint %llu failed: ", (unsigned long long)ck);
            /* once: every committer meets a lost lease at the same checkpoint */
            if (!atomic_exchange(&p->commit_failed, 1))
                w2l__log(W2L_LOG_ERROR, "check-commit: %s", err->msg);
            return rc;
        }
        w2l__pipeline_commit_done(p, n, ck, secs);
    }
    return W2L_OK;
}

int w2l__node_main(void *arg)
{
    node *n = arg;
    w2l_pipeline *p = n->p;
    w2l_error err;
    w2l_error_clear(&err);
    w2l__owner_set_current(p->owner);
    w2l__maint_set_current(p->maint);
    w2l__metrics_set_current(p->metrics);
    w2l__ledger_set_current(p->ledger);
    w2l_rc rc = n->m->open(n->m, p->conf, n->index,
                           n->kind == W2L_OPERATOR_DDL      ? p->nddl
                           : n->kind == W2L_OPERATOR_WRITER ? p->nwriter
                                                            : p->ncommit,
                           p->st, p->restored, n->op, &err);
    int opened = rc == W2L_OK;
    while (rc == W2L_OK) {
        atomic_store(&n->beat_ms, w2l__now_ms());
        msg *s;
        while (rc == W2L_OK && (s = side_pop(n)) != NULL) {
            rc = call_process(n, s, &err);
            w2l__msg_free(s);
        }
        if (rc == W2L_OK && n->kind == W2L_OPERATOR_COMMITTER)
            rc = w2l__node_commit_sealed(n, &err);
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
        rc = w2l__node_commit_sealed(n, &err);
        if (rc != W2L_OK || n->notified >= n->last_barrier) break;
        mtx_lock(&p->mtx);
        if (atomic_load(&p->sealed_pub) <= n->notified && !atomic_load(&p->failed))
            cnd_wait(&p->cv, &p->mtx);
        mtx_unlock(&p->mtx);
    }
    if (rc != W2L_OK && rc != W2L_CANCELLED) {
        const char *kind = n->kind == W2L_OPERATOR_DDL      ? "ddl"
                           : n->kind == W2L_OPERATOR_WRITER ? "writer"
                                                            : "committer";
        w2l__error_prefix(&err, "%s %u: ", kind, n->index);
        w2l__pipeline_fail(p, &err);
    }
    atomic_store(&n->beat_ms, 0);
    if (opened) n->m->close(n->op);
    w2l__pipeline_account_cpu(p, (int)n->kind);
    return 0;
}

/* ----------------------------------------------------------------- building ------ */

static w2l_rc find_operator(const w2l_conf *c, w2l_operator_kind kind, const char *key,
                            const w2l_operator_methods **out, w2l_error *err)
{
    const char *name = NULL;
    W2L_TRY(w2l_conf_get(c, key, &name, err));
    *out = w2l_operator_find(kind, name);
    if (!*out)
        return w2l__fail(err, W2L_CONFIG,
                         "%s: no operator '%s' is registered (w2l_operator_register(3))", key,
                         name ? name : "default");
    return W2L_OK;
}

void w2l__nodes_free(w2l_pipeline *p)
{
    unsigned total = p->nddl + p->nwriter + p->ncommit;
    for (unsigned i = 0; p->nodes && i < total; i++) {
        node *n = &p->nodes[i];
        w2l__chan_free(n->in, msg_drop);
        for (unsigned k = 0; n->held_head && k < n->ninputs; k++) {
            msg *h = n->held_head[k];
            while (h) {
                msg *next = h->next;
                w2l__msg_free(h);
                h = next;
            }
        }
        msg *s;
        while ((s = side_pop(n)) != NULL) w2l__msg_free(s);
        mtx_destroy(&n->side_mtx);
        aliases_clear(n);
        w2l__free(n->blocked);
        w2l__free(n->held_head);
        w2l__free(n->held_tail);
        w2l__free(n->op);
    }
    w2l__free(p->nodes);
    p->nodes = NULL;
}

w2l_rc w2l__nodes_make(w2l_pipeline *p, w2l_error *err)
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
        n->kind = i < p->nddl                ? W2L_OPERATOR_DDL
                  : i < p->nddl + p->nwriter ? W2L_OPERATOR_WRITER
                                             : W2L_OPERATOR_COMMITTER;
        n->index = n->kind == W2L_OPERATOR_DDL      ? i
                   : n->kind == W2L_OPERATOR_WRITER ? i - p->nddl
                                                    : i - p->nddl - p->nwriter;
        n->ninputs = n->kind == W2L_OPERATOR_DDL      ? 1
                     : n->kind == W2L_OPERATOR_WRITER ? p->nddl
                                                      : p->nwriter;
        n->m = mk[n->kind - 1];
        mtx_init(&n->side_mtx, mtx_plain);
        n->in = w2l__chan_new(p->chan_cap);
        n->op =
            w2l__calloc(1, n->m->size > sizeof(w2l_operator) ? n->m->size : sizeof(w2l_operator));
        n->blocked = w2l__calloc(n->ninputs, 1);
        n->held_head = w2l__calloc(n->ninputs, sizeof *n->held_head);
        n->held_tail = w2l__calloc(n->ninputs, sizeof *n->held_tail);
        if (!n->in || !n->op || !n->blocked || !n->held_head || !n->held_tail)
            return w2l__fail(err, W2L_NOMEM, "out of memory building the pipeline");
        n->op->methods = n->m;
        /* committers start by re-committing the restored checkpoint (w2l__node_commit_sealed); when
         * it holds table operations of an older checkpoint K, from K - 1 on, so that each operation
         * falls between the commits of its checkpoint and the one before */
        if (n->kind == W2L_OPERATOR_COMMITTER) {
            uint64_t from = p->restored, k = w2l__owner_first_ops(p->owner);
            if (k && k <= from) from = k > 1 ? k - 1 : 1;
            n->notified = from ? from - 1 : 0;
        }
    }
    return W2L_OK;
}
