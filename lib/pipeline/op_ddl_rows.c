/*
 * The DDL handler's row mapping (op_ddl_int.h): source schemas mapped onto Iceberg tables
 * by column name, rows converted or forwarded zero-copy, the table policy (fail, ignore,
 * quarantine), evolution by rows, and each table's queue.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"

/* ------------------------------------------------------------------- row mapping ----- */

/* The map of source schema src onto t, built by column name against t's view schema. */
static w2l_rc smap_get(tbl *t, const w2l_schema *src, smap **out, w2l_error *err)
{
    smap **pp = &t->maps;
    size_t count = 0;
    for (smap *m = t->maps; m; m = m->next, count++)
        if (m->src == src) {
            *out = m;
            return W2L_OK;
        }
    /* keep a bounded history: the newest versions stay */
    if (count >= 16) {
        while ((*pp)->next) pp = &(*pp)->next;
        w2l__ddlop_smaps_free(*pp);
        *pp = NULL;
    }
    size_t n = w2l_schema_field_count(src);
    smap *m = w2l__calloc(1, sizeof *m);
    W2L_NOMEM_IF(!m, err);
    m->ids = w2l__calloc(n + 1, sizeof *m->ids);
    m->idx = w2l__calloc(n + 1, sizeof *m->idx);
    if (!m->ids || !m->idx) {
        w2l__ddlop_smaps_free(m);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    m->src = w2l_schema_ref((w2l_schema *)src);
    m->ice_id = -1;
    const w2l_schema *view = t->view ? t->view : t->schema;
    for (size_t i = 0; i < n; i++) {
        const char *name = w2l_schema_field(src, i)->name;
        if (w2l__ddlop_is_extra_name(t, name)) { /* never a source's column */
            m->collide = m->collide ? m->collide : name;
            continue;
        }
        long k = w2l__ddlop_index_of_name(view, name);
        m->ids[i] = k >= 0 ? w2l_schema_field(view, (size_t)k)->id : 0;
    }
    m->next = t->maps;
    t->maps = m;
    *out = m;
    return W2L_OK;
}

/* A source value of type s fits a lake column of type c: c is s or wider, or (with
 * source.time-as-string) the source's TIME text goes to a column the lake created as time
 * before the option was set, which keeps the values it can hold (w2l-types(7)). */
static int fits(const ddl_op *op, w2l_type s, w2l_type c)
{
    return w2l_type_can_promote(s, c) ||
           (op->eo.types.time_as_string && s.id == W2L_TYPE_STRING && c.id == W2L_TYPE_TIME);
}

/* Resolves m's field ids against t's current schema. */
/* The source names a key and the table has none: a CDC JSON stream described the table
 * before it knew the key (a debezium envelope carries none; its schema-change event does).
 * The key's columns must all be in the table and required. */
static int key_gained(const tbl *t, const smap *m)
{
    size_t nk, nt;
    const int32_t *k = w2l_schema_identifier(m->src, &nk);
    w2l_schema_identifier(t->schema, &nt);
    if (!nk || nt) return 0;
    for (size_t i = 0; i < nk; i++) {
        long s = w2l_schema_index_of_id(m->src, k[i]);
        long c =
            s >= 0 ? w2l__ddlop_index_of_name(t->schema, w2l_schema_field(m->src, (size_t)s)->name)
                   : -1;
        if (c < 0 || !w2l_schema_field(t->schema, (size_t)c)->required) return 0;
    }
    return 1;
}

static void smap_resolve(const ddl_op *op, tbl *t, smap *m)
{
    if (m->ice == t->schema && m->ice_id == w2l_schema_id(t->schema)) return;
    size_t n = w2l_schema_field_count(m->src), nc = w2l_schema_field_count(t->schema);
    m->identity = n == nc;
    m->evolve = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *s = w2l_schema_field(m->src, i);
        if (m->collide && w2l__ddlop_is_extra_name(t, s->name)) {
            m->idx[i] = -1; /* a metadata column's name: the value is discarded */
            m->identity = 0;
            continue;
        }
        if (!m->ids[i]) { /* a column the table lacks: maybe added since the map was made */
            long k = w2l__ddlop_index_of_name(t->schema, s->name);
            if (k >= 0 && t->view == t->schema)
                m->ids[i] = w2l_schema_field(t->schema, (size_t)k)->id;
        }
        long k = m->ids[i] ? w2l_schema_index_of_id(t->schema, m->ids[i]) : -1;
        m->idx[i] = k;
        if (k != (long)i) m->identity = 0;
        if (!m->ids[i]) {
            m->evolve = 1;
            continue;
        }
        if (k < 0) continue; /* dropped from the table: the value is discarded */
        w2l_type c = w2l_schema_field(t->schema, (size_t)k)->type;
        if (!w2l__ddlop_type_eq(c, s->type)) {
            m->identity = 0;
            if (!fits(op, s->type, c)) m->evolve = 1; /* wider in the source, or no fit */
        }
    }
    if (key_gained(t, m)) m->evolve = 1;
    if (m->settled) m->evolve = 0;
    m->ice = t->schema;
    m->ice_id = w2l_schema_id(t->schema);
}

/* One value of source type s as Iceberg type c (fits(s, c) holds). TIME text into a time
 * column: 0, or -1 when it is outside 00:00:00-23:59:59.999999 (r NULL then). */
static int convert_value(const w2l_value *v, w2l_type s, w2l_type c, w2l_value *r)
{
    *r = *v;
    if (v->is_null) return 0;
    if (s.id == W2L_TYPE_INT && c.id == W2L_TYPE_LONG) r->v.i64 = v->v.i32;
    else if (s.id == W2L_TYPE_FLOAT && c.id == W2L_TYPE_DOUBLE) r->v.f64 = v->v.f32;
    else if (s.id == W2L_TYPE_STRING && c.id == W2L_TYPE_TIME) {
        const char *p = v->v.bytes.ptr;
        size_t n = v->v.bytes.len;
        w2l_error e;
        if (n < 8 || p[2] != ':' || p[0] < '0' || p[0] > '2' || (p[0] == '2' && p[1] > '3') ||
            w2l_value_parse(c, p, n, r, &e) != W2L_OK) {
            memset(r, 0, sizeof *r);
            r->is_null = 1;
            return -1;
        }
    }
    return 0;
}

/* Rows of changes (one source schema) in t's current schema, in op->scratch. */
static w2l_rc convert_rows(ddl_op *op, tbl *t, smap *m, const w2l_change *in, size_t n,
                           int null_bad, w2l_change **out, w2l_error *err)
{
    size_t ns = w2l_schema_field_count(m->src), nc = w2l_schema_field_count(t->schema);
    w2l_change *cs = w2l__arena_alloc(&op->scratch, n * sizeof *cs + 1);
    W2L_NOMEM_IF(!cs, err);
    /* which Iceberg columns the source covers at all */
    unsigned char *covered = w2l__arena_alloc(&op->scratch, nc + 1);
    W2L_NOMEM_IF(!covered, err);
    memset(covered, 0, nc + 1);
    for (size_t i = 0; i < ns; i++)
        if (m->idx[i] >= 0) covered[m->idx[i]] = 1;
    int extras = w2l__ddlop_has_extras(t);
    for (size_t k = 0; extras && k < nc; k++)
        covered[k] |= w2l__ddlop_is_extra_id(t, w2l_schema_field(t->schema, k)->id);
    int partial = 0;
    for (size_t k = 0; k < nc; k++) partial |= !covered[k];
    for (size_t r = 0; r < n; r++) {
        const w2l_change *c = &in[r];
        w2l_value *row = w2l__arena_alloc(&op->scratch, nc * sizeof *row + 1);
        W2L_NOMEM_IF(!row, err);
        for (size_t k = 0; k < nc; k++) {
            memset(&row[k], 0, sizeof row[k]);
            row[k].is_null = 1;
        }
        int want_present =
            c->present || (partial && (c->op == W2L_OP_UPDATE_BEFORE || c->op == W2L_OP_DELETE));
        uint8_t *pr = NULL;
        if (want_present) {
            pr = w2l__arena_alloc(&op->scratch, (nc + 7) / 8 + 1);
            W2L_NOMEM_IF(!pr, err);
            memset(pr, 0, (nc + 7) / 8 + 1);
        }
        for (size_t i = 0; i < ns && i < c->ncols; i++) {
            long k = m->idx[i];
            if (k < 0) continue;
            int here = !c->present || (c->present[i / 8] >> (i % 8) & 1);
            if (pr && here) pr[k / 8] = (uint8_t)(pr[k / 8] | 1u << (k % 8));
            if (convert_value(&c->row[i], w2l_schema_field(m->src, i)->type,
                              w2l_schema_field(t->schema, (size_t)k)->type, &row[k]) &&
                !null_bad) {
                const w2l_value *v = &c->row[i];
                return w2l__fail(
                    err, W2L_SCHEMA,
                    "column '%s': TIME value '%.*s' does not fit the lake's column, which was "
                    "created as Iceberg time (00:00:00-23:59:59.999999) before "
                    "source.time-as-string was set, and Iceberg cannot change time to string; "
                    "to keep every value, sync the table into a new warehouse with "
                    "--source.time-as-string, and leave it out of this one with --exclude "
                    "(w2l-types(7))",
                    w2l_schema_field(m->src, i)->name,
                    (int)(v->v.bytes.len > 40 ? 40 : v->v.bytes.len), v->v.bytes.ptr);
            }
        }
        if (extras) w2l__ddlop_fill_extras(t, c, row, pr);
        cs[r] = *c;
        cs[r].db = t->ns;
        cs[r].table = t->name;
        cs[r].schema = t->schema;
        cs[r].row = row;
        cs[r].ncols = nc;
        cs[r].present = pr;
    }
    *out = cs;
    return W2L_OK;
}

/* A key column of the table that the source does not carry: rows cannot be written. */
static const char *missing_key(const tbl *t, const smap *m)
{
    size_t nid, ns = w2l_schema_field_count(m->src);
    const int32_t *ids = w2l_schema_identifier(t->schema, &nid);
    for (size_t k = 0; k < nid; k++) {
        int found = w2l__ddlop_is_extra_id((tbl *)t, ids[k]); /* filled by the handler */
        for (size_t i = 0; i < ns && !found; i++) found = m->ids[i] == ids[k];
        if (!found) {
            long x = w2l_schema_index_of_id(t->schema, ids[k]);
            return x >= 0 ? w2l_schema_field(t->schema, (size_t)x)->name : "?";
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ policy ----------------- */

/* Counts n changes of quarantined t as dropped (the handler's state and the pipeline's
 * metrics, w2l_table_metrics.rows_quarantined). */
void w2l__ddlop_count_dropped(tbl *t, uint64_t n)
{
    t->rows_quarantined += n;
    w2l__metrics_quarantined(w2l__metrics_current(), t->ns, t->name, n, t->reason);
}

/* Sets t aside for reason: its buffered and later changes are dropped (counted), other
 * tables keep flowing; the quarantine and its reason are kept in the state (w2l__ddlop_save_state),
 * so a restart keeps it, and w2l status shows them. */
w2l_rc w2l__ddlop_quarantine(ddl_op *op, tbl *t, const char *reason, w2l_error *err)
{
    if (t->quarantined) return W2L_OK;
    char *r = w2l__strdup(reason ? reason : "");
    W2L_NOMEM_IF(!r, err);
    if (t->fence_id && op->nfences) op->nfences--; /* its fence is moot */
    w2l__free(t->reason);
    t->reason = r;
    t->quarantined = 1;
    uint64_t queued = 0;
    for (item *it = t->q; it; it = it->next)
        if (it->kind == IT_CHANGES) queued += it->n;
    w2l__ddlop_queue_clear(t);
    w2l__ddlop_count_dropped(t, queued);
    return W2L_OK;
}

/* The way back from a quarantine: the source dropped the table (or replaced it), so what
 * comes next is a new table's; its rows flow again. The reason and count are forgotten. */
void w2l__ddlop_release(tbl *t, const char *what)
{
    w2l__log_table(W2L_LOG_WARN, t->ns, t->name,
                   "ddl: table %s.%s leaves its quarantine: %s (its %llu changes dropped while "
                   "quarantined stay dropped)",
                   t->ns, t->name, what, (unsigned long long)t->rows_quarantined);
    t->quarantined = 0;
    w2l__free(t->reason);
    t->reason = NULL;
    t->rows_quarantined = 0;
    w2l__metrics_released(w2l__metrics_current(), t->ns, t->name);
}

/* An unsupported or Iceberg-illegal change of t (err holds the reason, rc its code):
 * fail, ignore or quarantine per the table's ddl.policy. what names the statement. */
w2l_rc w2l__ddlop_unsupported(ddl_op *op, tbl *t, w2l_rc rc, const char *what, w2l_error *err)
{
    if (rc != W2L_SCHEMA && rc != W2L_CORRUPT) return rc;
    char reason[sizeof err->msg];
    snprintf(reason, sizeof reason, "%s", err->msg);
    switch (w2l__ddlop_policy_of(op, t->ns, t->name)) {
    case POL_IGNORE:
        w2l__log_table(
            W2L_LOG_WARN, t->ns, t->name,
            "ddl: table %s.%s: %s: %s; ignored (ddl.policy=ignore), the table keeps schema %d",
            t->ns, t->name, what, reason, t->schema ? (int)w2l_schema_id(t->schema) : -1);
        w2l_error_clear(err);
        return W2L_OK;
    case POL_QUARANTINE:
        w2l__log_table(W2L_LOG_ERROR, t->ns, t->name,
                       "ddl: table %s.%s QUARANTINED: %s: %s; its changes are dropped from here on "
                       "(ddl.policy=quarantine)",
                       t->ns, t->name, what, reason);
        {
            char full[sizeof err->msg + 320];
            snprintf(full, sizeof full, "%s: %s", what, reason);
            W2L_TRY(w2l__ddlop_quarantine(op, t, full, err));
        }
        w2l_error_clear(err);
        return W2L_OK;
    default:
        return w2l__fail(err, rc, "table %s.%s: %s: %s", t->ns, t->name, what, reason);
    }
}

/* ------------------------------------------------------------ evolution by rows ------ */

/* The source schema src brings columns the table lacks, or wider types: add them
 * (optional) and widen, in one schema commit. */
w2l_rc w2l__ddlop_evolve_to_source(ddl_op *op, tbl *t, const w2l_schema *src, w2l_collector *out,
                                   w2l_error *err)
{
    smap *m;
    W2L_TRY(smap_get(t, src, &m, err));
    smap_resolve(op, t, m);
    if (!m->evolve) return W2L_OK;
    size_t n = w2l_schema_field_count(src);
    w2l__ice_schema_change *ops = w2l__calloc(n + 1, sizeof *ops);
    W2L_NOMEM_IF(!ops, err);
    size_t nops = 0;
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *s = w2l_schema_field(src, i);
        if (!m->ids[i] && w2l__ddlop_is_extra_name(t, s->name)) continue; /* the handler's */
        if (!m->ids[i]) {
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, s->name, NULL, s->type, 0};
            continue;
        }
        if (m->idx[i] < 0) continue;
        const w2l_field *c = w2l_schema_field(t->schema, (size_t)m->idx[i]);
        if (w2l__ddlop_type_eq(c->type, s->type) || fits(op, s->type, c->type)) continue;
        if (w2l_type_can_promote(c->type, s->type))
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, c->name, NULL, s->type, 0};
        else {
            char a[32], b[32];
            rc = w2l__fail(err, W2L_SCHEMA,
                           "column '%s': the source's %s cannot be written to Iceberg %s", s->name,
                           w2l_type_format(s->type, a, sizeof a),
                           w2l_type_format(c->type, b, sizeof b));
        }
    }
    char *keys = NULL;
    if (rc == W2L_OK && key_gained(t, m)) {
        size_t nk;
        const int32_t *k = w2l_schema_identifier(src, &nk);
        w2l_buf names = {0};
        for (size_t i = 0; rc == W2L_OK && i < nk; i++)
            rc = w2l__buf_printf(
                &names, err, "%s%s", i ? "," : "",
                w2l_schema_field(src, (size_t)w2l_schema_index_of_id(src, k[i]))->name);
        if (rc == W2L_OK) {
            keys = w2l__strndup(names.data ? (const char *)names.data : "", names.len);
            if (!keys) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else
                ops[nops++] =
                    (w2l__ice_schema_change){ W2L_ICE_SET_IDENTIFIER, keys, NULL, { 0, 0, 0 }, 0 };
        }
        w2l_buf_release(&names);
    }
    if (rc == W2L_OK) rc = w2l__ddlop_commit_ops(op, t, ops, nops, err);
    w2l__free(keys);
    w2l__free(ops);
    if (rc == W2L_OK) {
        /* new columns: the maps learn their ids by name */
        for (smap *x = t->maps; x; x = x->next) {
            size_t k = w2l_schema_field_count(x->src);
            for (size_t i = 0; i < k; i++) {
                if (x->ids[i]) continue;
                long j = w2l__ddlop_index_of_name(t->schema, w2l_schema_field(x->src, i)->name);
                if (j >= 0) x->ids[i] = w2l_schema_field(t->schema, (size_t)j)->id;
            }
            x->ice_id = -1;
        }
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                       "ddl: table %s.%s follows its source schema (now schema %d)", t->ns, t->name,
                       (int)w2l_schema_id(t->schema));
        return w2l__ddlop_announce(t, out, err);
    }
    if (rc == W2L_NOMEM || rc == W2L_IO || rc == W2L_CONFLICT) return rc;
    rc = w2l__ddlop_unsupported(op, t, rc, "schema change from the source's columns", err);
    if (rc == W2L_OK) {
        /* ignored: write what fits, by name; columns that do not fit are dropped */
        m->settled = 1;
        m->ice_id = -1;
        smap_resolve(op, t, m);
        size_t k = w2l_schema_field_count(src);
        for (size_t i = 0; i < k; i++) {
            if (m->idx[i] < 0) continue;
            const w2l_field *s = w2l_schema_field(src, i),
                            *c = w2l_schema_field(t->schema, (size_t)m->idx[i]);
            if (!fits(op, s->type, c->type)) m->idx[i] = -1;
        }
    }
    return rc;
}

/* ------------------------------------------------------------ forwarding ------------- */

/* Resolves t for rows of source schema src: loads it, or creates it from src. */
static w2l_rc resolve_for_rows(ddl_op *op, tbl *t, const w2l_schema *src, w2l_error *err)
{
    if (t->ice) return W2L_OK;
    w2l_rc rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc != W2L_NOTFOUND) return rc;
    w2l_schema *s;
    W2L_TRY(w2l__ddlop_schema_from_source(src, &s, err));
    rc = w2l__ddlop_tbl_create(op, t, s, err);
    w2l_schema_unref(s);
    return rc;
}

/* Forwards changes (one source schema) of t to its writers. *need_evolve is set instead
 * when the table's schema must change first. in_place: the array is the incoming
 * element's, which this call may re-point and forward without copying. */
w2l_rc w2l__ddlop_forward(ddl_op *op, tbl *t, w2l_change *changes, size_t n, int in_place,
                          w2l_collector *out, int *need_evolve, w2l_error *err)
{
    *need_evolve = 0;
    if (!n) return W2L_OK;
    const w2l_schema *src = changes[0].schema;
    W2L_TRY(resolve_for_rows(op, t, src, err));
    smap *m;
    W2L_TRY(smap_get(t, src, &m, err));
    smap_resolve(op, t, m);
    if (m->evolve) {
        *need_evolve = 1;
        return W2L_OK;
    }
    W2L_TRY(w2l__ddlop_route_rows(op, t, &changes[0], err));
    if (m->collide) {
        w2l__fail(err, W2L_SCHEMA,
                  "the source's column '%s' has the name of a metadata column (metadata-columns, "
                  "route key-with-source); its values are not written",
                  m->collide);
        m->collide = NULL;
        W2L_TRY(w2l__ddlop_unsupported(op, t, W2L_SCHEMA, "rows", err));
        if (t->quarantined) {
            w2l__ddlop_count_dropped(t, n);
            return W2L_OK;
        }
    }
    const char *mk = missing_key(t, m);
    if (mk) {
        w2l__fail(err, W2L_SCHEMA, "the source's rows lack the key column '%s'", mk);
        W2L_TRY(w2l__ddlop_unsupported(op, t, W2L_SCHEMA, "rows", err));
        if (t->quarantined) {
            w2l__ddlop_count_dropped(t, n);
            return W2L_OK;
        }
    }
    if (!t->announced) W2L_TRY(w2l__ddlop_announce(t, out, err));
    w2l_element e = {0};
    e.kind = W2L_ELEM_CHANGES;
    e.ns = t->ns;
    e.table = t->name;
    e.nchanges = n;
    w2l_rc rc;
    if (m->identity && in_place) {
        for (size_t i = 0; i < n; i++) changes[i].schema = t->schema;
        e.changes = changes;
        rc = w2l_collect(out, &e, err);
    } else {
        w2l_change *cs = NULL;
        rc = convert_rows(op, t, m, changes, n, 0, &cs, err);
        if (rc == W2L_SCHEMA) { /* a value the lake's column cannot hold: the table's policy */
            w2l__arena_release(&op->scratch);
            W2L_TRY(w2l__ddlop_unsupported(op, t, rc, "rows", err));
            if (t->quarantined) {
                w2l__ddlop_count_dropped(t, n);
                return W2L_OK;
            }
            rc = convert_rows(op, t, m, changes, n, 1, &cs, err); /* ignore: NULL there */
        }
        e.changes = cs;
        if (rc == W2L_OK) rc = w2l_collect(out, &e, err);
        w2l__arena_release(&op->scratch);
    }
    if (rc == W2L_OK) t->dirty = 1;
    return rc;
}

/* ------------------------------------------------------------ the queue -------------- */

void w2l__ddlop_q_push(tbl *t, item *it)
{
    it->next = NULL;
    if (t->qtail) t->qtail->next = it;
    else t->q = it;
    t->qtail = it;
}

void w2l__ddlop_q_push_front(tbl *t, item *it)
{
    it->next = t->q;
    t->q = it;
    if (!t->qtail) t->qtail = it;
}

item *w2l__ddlop_q_pop(tbl *t)
{
    item *it = t->q;
    if (it) {
        t->q = it->next;
        if (!t->q) t->qtail = NULL;
        it->next = NULL;
    }
    return it;
}

/* A deep copy of changes (rows, their bytes and present bitmaps) for the queue. */
w2l_rc w2l__ddlop_item_changes(const w2l_change *in, size_t n, item **out, w2l_error *err)
{
    item *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->kind = IT_CHANGES;
    w2l__arena_init(&it->arena, 4096);
    it->changes = w2l__calloc(n ? n : 1, sizeof *it->changes);
    it->n = n;
    w2l_rc rc = it->changes ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && n) it->src = w2l_schema_ref((w2l_schema *)in[0].schema);
    /* the source table, for routes and metadata columns: one copy for all */
    char *db = rc == W2L_OK && n && in[0].db
                   ? w2l__arena_strndup(&it->arena, in[0].db, strlen(in[0].db))
                   : NULL,
         *table = rc == W2L_OK && n && in[0].table
                      ? w2l__arena_strndup(&it->arena, in[0].table, strlen(in[0].table))
                      : NULL;
    if (n && ((in[0].db && !db) || (in[0].table && !table)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_change *c = &in[i];
        w2l_change *d = &it->changes[i];
        *d = *c;
        d->db = db;
        d->table = table;
        w2l_value *row = w2l__arena_alloc(&it->arena, c->ncols * sizeof *row + 1);
        if (!row) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        if (c->ncols) memcpy(row, c->row, c->ncols * sizeof *row);
        for (size_t k = 0; k < c->ncols; k++) {
            w2l_type_id ty = w2l_schema_field(c->schema, k)->type.id;
            if (row[k].is_null || (ty != W2L_TYPE_STRING && ty != W2L_TYPE_BINARY)) continue;
            char *b = w2l__arena_alloc(&it->arena, row[k].v.bytes.len + 1);
            if (!b) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            if (row[k].v.bytes.len) memcpy(b, row[k].v.bytes.ptr, row[k].v.bytes.len);
            row[k].v.bytes.ptr = b;
        }
        d->row = row;
        if (rc == W2L_OK && c->present) {
            uint8_t *pr = w2l__arena_alloc(&it->arena, (c->ncols + 7) / 8 + 1);
            if (!pr) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else {
                memcpy(pr, c->present, (c->ncols + 7) / 8);
                d->present = pr;
            }
        }
    }
    if (rc != W2L_OK) {
        w2l__ddlop_item_free(it);
        return rc;
    }
    *out = it;
    return W2L_OK;
}

w2l_rc w2l__ddlop_item_ddl(const char *sql, size_t len, const char *db, size_t stmt, uint64_t key,
                           item **out, w2l_error *err)
{
    item *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->kind = IT_DDL;
    it->sql = w2l__strndup(sql, len);
    it->sql_len = len;
    it->db = db ? w2l__strdup(db) : NULL;
    it->stmt = stmt;
    it->key = key;
    if (!it->sql || (db && !it->db)) {
        w2l__ddlop_item_free(it);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *out = it;
    return W2L_OK;
}

w2l_rc w2l__ddlop_item_evolve(const w2l_schema *src, item **out, w2l_error *err)
{
    item *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->kind = IT_EVOLVE;
    it->src = w2l_schema_ref((w2l_schema *)src);
    *out = it;
    return W2L_OK;
}
