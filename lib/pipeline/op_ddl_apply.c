/*
 * The DDL handler's statements (op_ddl_int.h): fences that wait for the writers, and
 * CREATE, ALTER, RENAME, TRUNCATE, DROP and shadow swaps applied to Iceberg tables.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"

/* ------------------------------------------------------------ fences ----------------- */

static w2l_rc fence_start(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    t->fence_id = ((uint64_t)(op->index + 1) << 40) | ++op->fence_seq;
    t->fence_need = w2l__ddlop_writers_of(op, t->ns, t->name);
    t->fence_got = 0;
    t->fence_deadline = w2l__mono_ns() / 1000000 + op->fence_timeout_ms;
    op->nfences++;
    w2l_element e = {0};
    e.kind = W2L_ELEM_WRITER_COMMIT;
    e.ns = t->ns;
    e.table = t->name;
    e.ddl_id = t->fence_id;
    w2l__log_table(W2L_LOG_DEBUG, t->ns, t->name, "ddl: table %s.%s: fence %llu to %u writer(s)",
                   t->ns, t->name, (unsigned long long)t->fence_id, t->fence_need);
    return w2l_collect(out, &e, err);
}

/* The fence of t is over (answered, timed out under policy ignore, or resolved at a
 * barrier): apply what waited for it and release the buffered changes. */
w2l_rc w2l__ddlop_fence_done(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    if (t->fence_id) {
        t->fence_id = 0;
        op->nfences--;
    }
    t->dirty = 0;
    return w2l__ddlop_drain(op, t, out, err);
}

/* Fences past their deadline: the table's policy decides. */
w2l_rc w2l__ddlop_check_deadlines(ddl_op *op, w2l_collector *out, w2l_error *err)
{
    if (!op->nfences) return W2L_OK;
    int64_t now = w2l__mono_ns() / 1000000;
    for (tbl *t = op->tables; t; t = t->next) {
        if (!t->fence_id || now < t->fence_deadline) continue;
        char what[300] = "a schema change";
        if (t->q && t->q->kind == IT_DDL) {
            char s[240];
            w2l__ddlop_stmt_text(t->q->sql, t->q->sql_len, s, sizeof s);
            snprintf(what, sizeof what, "DDL '%s'", s);
        }
        w2l__fail(err, W2L_SCHEMA,
                  "the writers did not complete the fence within %lld ms (%u of %u answered)",
                  (long long)op->fence_timeout_ms, t->fence_got, t->fence_need);
        op->nfences--;
        t->fence_id = 0;
        W2L_TRY(w2l__ddlop_unsupported(op, t, W2L_SCHEMA, what, err));
        if (!t->quarantined) W2L_TRY(w2l__ddlop_fence_done(op, t, out, err));
    }
    return W2L_OK;
}

/* At a barrier every pending fence is resolved, because the changes it holds lie before
 * the barrier's source position and must reach the writers within this checkpoint. The
 * writers still see the order a fence guarantees: each writer channel is FIFO, so the
 * WRITER_COMMIT (sent before) precedes the SCHEMA and the released rows; only the wait
 * for the answers is cut short (late answers are ignored). */
w2l_rc w2l__ddlop_fence_at_barrier(ddl_op *op, w2l_collector *out, w2l_error *err)
{
    for (int round = 0; op->nfences && round < 1000000; round++) {
        tbl *t = op->tables;
        while (t && !t->fence_id) t = t->next;
        if (!t) break;
        w2l__log_table(W2L_LOG_DEBUG, t->ns, t->name,
                       "ddl: table %s.%s: fence %llu resolved at the barrier (%u of %u answered)",
                       t->ns, t->name, (unsigned long long)t->fence_id, t->fence_got,
                       t->fence_need);
        W2L_TRY(w2l__ddlop_fence_done(op, t, out, err));
    }
    return W2L_OK;
}

/* ------------------------------------------------------------ DDL -------------------- */

/* Forgets t's Iceberg side (after a drop or rename away). */
static void tbl_reset(tbl *t)
{
    w2l__ice_table_free(t->ice);
    t->ice = NULL;
    t->claimed = 0;
    w2l_schema_unref(t->schema);
    w2l_schema_unref(t->view);
    t->schema = t->view = NULL;
    w2l__ddlop_smaps_free(t->maps);
    t->maps = NULL;
    t->announced = 0;
    t->ckpt_schema_id = -1;
}

/* A schema of t's history after id `after` with the same columns (names and types) as
 * target, the oldest such; NULL when none. */
static w2l_schema *find_match(const tbl *t, const w2l_schema *target, int32_t after)
{
    w2l_schema *best = NULL;
    const w2l__ice_meta *m = t->ice->meta;
    size_t n = w2l_schema_field_count(target);
    for (size_t i = 0; i < m->nschemas; i++) {
        w2l_schema *s = m->schemas[i].schema;
        if (!s || m->schemas[i].schema_id <= after || w2l_schema_field_count(s) != n) continue;
        if (best && w2l_schema_id(best) < m->schemas[i].schema_id) continue;
        int same = 1;
        for (size_t k = 0; same && k < n; k++) {
            const w2l_field *f = w2l_schema_field(target, k);
            long j = w2l_schema_index_of_name(s, f->name);
            same = j >= 0 && w2l__ddlop_type_eq(w2l_schema_field(s, (size_t)j)->type, f->type);
        }
        if (same) best = s;
    }
    return best;
}

static void set_view(tbl *t, w2l_schema *s)
{
    w2l_schema_unref(t->view);
    t->view = w2l_schema_ref(s);
}

static w2l_rc commit_target(ddl_op *op, tbl *t, const w2l_schema *target, w2l_error *err)
{
    w2l__arena a;
    w2l__arena_init(&a, 1024);
    w2l__ice_schema_change *ops = NULL;
    size_t n = 0;
    w2l_rc rc = w2l__ddlop_ops_by_id(t->schema, target, &a, &ops, &n, err);
    /* the metadata columns stay whatever schema the table takes */
    size_t k = 0;
    for (size_t i = 0; rc == W2L_OK && i < n; i++)
        if (ops[i].op != W2L_ICE_DROP_COLUMN || !w2l__ddlop_is_extra_name(t, ops[i].name))
            ops[k++] = ops[i];
    if (rc == W2L_OK) rc = w2l__ddlop_commit_ops(op, t, ops, k, err);
    w2l__arena_release(&a);
    return rc;
}

/* A WRITER_COMMIT marker for t's writers (ops.h: truncate, rename), not a fence waited for. */
static w2l_rc send_marker(const tbl *t, const char *payload, w2l_collector *out, w2l_error *err)
{
    w2l_element e = {0};
    e.kind = W2L_ELEM_WRITER_COMMIT;
    e.ns = t->ns;
    e.table = t->name;
    e.payload = payload;
    e.payload_len = strlen(payload);
    return w2l_collect(out, &e, err);
}

/* RENAME TABLE: the table moves to its new name in the handler's copy at once (rows after
 * the statement find it there) and in the catalog with the checkpoint. */
static w2l_rc rename_table(ddl_op *op, tbl *t, const char *to_ns, const char *to_name,
                           w2l_collector *out, w2l_error *err)
{
    if (!strcmp(t->ns, to_ns) && !strcmp(t->name, to_name)) return W2L_OK;
    w2l_rc rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        w2l__log_table(W2L_LOG_DEBUG, t->ns, t->name, "ddl: rename %s.%s: not in the lake", t->ns,
                       t->name);
        return W2L_OK;
    }
    W2L_TRY(rc);
    rc = w2l__tops_rename(&op->ops, t->ice, to_ns, to_name, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "rename %s.%s to %s.%s: ", t->ns, t->name, to_ns, to_name);
        return rc;
    }
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: renamed %s.%s to %s.%s", t->ns, t->name,
                   to_ns, to_name);
    /* the writers report what they wrote of the table in this checkpoint under the new
     * name (ops.h), so the committer finds the renamed table */
    w2l__json *m = w2l__json_new_object(), *to = w2l__json_new_object();
    int bad = w2l__json_add(to, "ns", w2l__json_new_string(to_ns)) |
              w2l__json_add(to, "table", w2l__json_new_string(to_name)) |
              w2l__json_add(m, "rename", to);
    char *text = bad ? NULL : w2l__json_print(m, 0);
    w2l__json_free(m);
    if (!text) return w2l__fail(err, W2L_NOMEM, "out of memory");
    rc = send_marker(t, text, out, err);
    w2l__free(text);
    W2L_TRY(rc);
    /* the copy moves to the new name; the old name is gone until something creates it */
    w2l__ice_table *ice = t->ice;
    t->ice = NULL;
    tbl_reset(t);
    t->gone = 1;
    tbl *dst;
    rc = w2l__ddlop_tbl_get(op, to_ns, to_name, &dst, err);
    char *ns = rc == W2L_OK ? w2l__strdup(to_ns) : NULL, *name = ns ? w2l__strdup(to_name) : NULL;
    if (rc == W2L_OK && !name) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        w2l__free(ns);
        w2l__ice_table_free(ice);
        return rc;
    }
    w2l__free(ice->ns);
    w2l__free(ice->name);
    ice->ns = ns;
    ice->name = name;
    tbl_reset(dst);
    dst->ice = ice;
    dst->gone = 0;
    W2L_TRY(w2l__ddlop_tbl_sync(dst, 1, err));
    return w2l__ddlop_announce(dst, out, err);
}

static w2l_rc apply_create(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, const char *what,
                           w2l_collector *out, w2l_error *err)
{
    w2l_schema *s = NULL;
    w2l_rc rc;
    if (st->kind == W2L_DDL_CREATE_TABLE_SELECT) {
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                       "ddl: %s.%s: CREATE TABLE ... SELECT: the table is created from its rows",
                       t->ns, t->name);
        return W2L_OK;
    }
    if (st->kind == W2L_DDL_CREATE_TABLE_LIKE) {
        tbl *like;
        W2L_TRY(
            w2l__ddlop_tbl_get(op, st->like.db ? st->like.db : t->ns, st->like.name, &like, err));
        rc = w2l__ddlop_tbl_read(op, like, err);
        if (rc == W2L_NOTFOUND) {
            w2l__log_table(
                W2L_LOG_INFO, t->ns, t->name,
                "ddl: %s.%s: CREATE TABLE ... LIKE %s: not in the lake; the table is created "
                "from its rows",
                t->ns, t->name, st->like.name);
            return W2L_OK;
        }
        W2L_TRY(rc);
        s = w2l_schema_ref(like->schema);
    } else {
        rc = w2l__schema_from_create(st, &op->eo, 0, &s, NULL, err);
        if (rc != W2L_OK) return w2l__ddlop_unsupported(op, t, rc, what, err);
    }
    rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        rc = w2l__ddlop_tbl_create(op, t, s, err);
        w2l_schema_unref(s);
        W2L_TRY(rc);
        return w2l__ddlop_announce(t, out, err);
    }
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    /* the table exists: a replay of this CREATE, or a lake table from before; a route's
     * target merges each source's CREATE into its columns */
    w2l_schema *hit = t->route ? NULL : find_match(t, s, -1);
    if (hit) {
        set_view(t, hit);
        w2l_schema_unref(s);
        if (hit != t->schema)
            w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                           "ddl: %s.%s: CREATE TABLE matches schema %d; replaying from there",
                           t->ns, t->name, (int)w2l_schema_id(hit));
        return t->announced ? W2L_OK : w2l__ddlop_announce(t, out, err);
    }
    /* reconcile, additively: new columns, wider types (columns the lake has more stay) */
    size_t n = w2l_schema_field_count(s);
    w2l__ice_schema_change *ops = w2l__calloc(n + 1, sizeof *ops);
    size_t nops = 0;
    rc = ops ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        long k = w2l__ddlop_index_of_name(t->schema, f->name);
        if (k < 0) {
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, f->name, NULL, f->type, 0};
            continue;
        }
        const w2l_field *c = w2l_schema_field(t->schema, (size_t)k);
        if (w2l__ddlop_type_eq(c->type, f->type)) continue;
        if (w2l_type_can_promote(c->type, f->type))
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, c->name, NULL, f->type, 0};
        else if (!w2l_type_can_promote(f->type, c->type)) {
            char a[32], b[32];
            rc = w2l__fail(err, W2L_SCHEMA, "column '%s': the lake has %s, the statement %s",
                           f->name, w2l_type_format(c->type, a, sizeof a),
                           w2l_type_format(f->type, b, sizeof b));
        }
    }
    if (rc == W2L_OK) rc = w2l__ddlop_commit_ops(op, t, ops, nops, err);
    w2l__free(ops);
    w2l_schema_unref(s);
    if (rc != W2L_OK) return w2l__ddlop_unsupported(op, t, rc, what, err);
    return w2l__ddlop_announce(t, out, err);
}

static w2l_rc apply_alter(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, const char *what,
                          w2l_collector *out, w2l_error *err)
{
    w2l_rc rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        w2l__log_table(
            W2L_LOG_INFO, t->ns, t->name,
            "ddl: %s.%s: ALTER TABLE of a table not in the lake; it is created from its rows",
            t->ns, t->name);
        rc = W2L_OK;
        goto rename;
    }
    W2L_TRY(rc);
    w2l__schema_diff *d = NULL;
    w2l__evolve_opts eo = op->eo;
    eo.merge = t->route != NULL; /* a route's target: the union of its sources */
    if (t->view && t->view != t->schema && !eo.merge) {
        /* replay after a restart: the table may have this change already */
        rc = w2l__schema_apply_alter(t->view, t->ice->meta->last_column_id, st, &op->eo, &d, err);
        w2l_schema *hit =
            rc == W2L_OK ? (d->changed ? find_match(t, d->schema, w2l_schema_id(t->view)) : t->view)
                         : NULL;
        w2l__schema_diff_free(d);
        d = NULL;
        if (rc == W2L_NOMEM) return rc;
        if (hit) {
            set_view(t, hit);
            w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                           "ddl: %s.%s: %s: already applied (schema %d), skipped", t->ns, t->name,
                           what, (int)w2l_schema_id(hit));
            goto rename;
        }
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: %s.%s: replay ends at schema %d", t->ns,
                       t->name, (int)w2l_schema_id(t->view));
        set_view(t, t->schema);
    }
    rc = w2l__schema_apply_alter(t->schema, t->ice->meta->last_column_id, st, &eo, &d, err);
    if (rc == W2L_OK && d->changed) rc = commit_target(op, t, d->schema, err);
    int changed = rc == W2L_OK && d->changed;
    w2l__schema_diff_free(d);
    if (rc != W2L_OK) {
        W2L_TRY(w2l__ddlop_unsupported(op, t, rc, what, err));
        if (t->quarantined) return W2L_OK;
    }
    if (changed) {
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: %s.%s: %s: schema %d", t->ns, t->name,
                       what, (int)w2l_schema_id(t->schema));
        W2L_TRY(w2l__ddlop_announce(t, out, err));
    }
rename:
    for (size_t i = 0; i < st->nalters && !t->route; i++) {
        const w2l__ddl_alter *al = &st->alters[i];
        if (al->kind != W2L_ALTER_RENAME_TABLE || !al->new_table.name) continue;
        if (w2l__ddlop_route_onto(op, t, al->new_table.db ? al->new_table.db : t->ns,
                                  al->new_table.name))
            break;
        W2L_TRY(rename_table(op, t, al->new_table.db ? al->new_table.db : t->ns, al->new_table.name,
                             out, err));
        break;
    }
    return W2L_OK;
}

/* TRUNCATE is not committed here: the table's writers drop what they wrote of it in this
 * checkpoint and the committer replaces the table's contents with the rows after the
 * truncate, in the checkpoint's snapshot (ops.h). Committing it here at once would let
 * rows before it, replayed after a crash, or still in flight, come back. */
static w2l_rc apply_truncate(tbl *t, w2l_collector *out, w2l_error *err)
{
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: %s.%s is truncated with the next commit",
                   t->ns, t->name);
    return send_marker(t, W2L_OPS_TRUNCATE_FENCE, out, err);
}

/* A re-read of the table (the mysql source's resync): its writers hold what they write of
 * it from the begin on, and the commit after the end replaces its rows (ops.h). */
static w2l_rc apply_resync(tbl *t, int end, w2l_collector *out, w2l_error *err)
{
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                   end ? "ddl: %s.%s re-read: its rows are replaced with the next commit"
                       : "ddl: %s.%s is read again; its rows are replaced when that ends",
                   t->ns, t->name);
    return send_marker(t, end ? W2L_OPS_RESYNC_END_FENCE : W2L_OPS_RESYNC_BEGIN_FENCE, out, err);
}

static w2l_rc apply_drop(ddl_op *op, tbl *t, w2l_error *err)
{
    if (w2l__ddlop_shadow_pending_for(op, t->ns, t->name)) {
        /* pt-osc drop_swap: the shadow takes the name next; keep the table */
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                       "ddl: %s.%s: DROP TABLE before an online schema change swap: kept", t->ns,
                       t->name);
        return W2L_OK;
    }
    /* the owner drops the table with the checkpoint; what the writers hold of it is
     * discarded there (its files name this incarnation) */
    w2l_rc rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc == W2L_OK) rc = w2l__tops_drop(&op->ops, t->ns, t->name, t->ice->meta->uuid, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) {
        w2l__error_prefix(err, "drop %s.%s: ", t->ns, t->name);
        return rc;
    }
    if (rc == W2L_OK)
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: dropped %s.%s", t->ns, t->name);
    tbl_reset(t);
    t->gone = 1;
    t->dirty = 0;
    return W2L_OK;
}

static w2l_rc apply_swap(ddl_op *op, tbl *t, const w2l__osc_swap *sw, const char *what,
                         w2l_collector *out, w2l_error *err)
{
    const char *sns = sw->shadow.db ? sw->shadow.db : t->ns;
    shadow *sh = w2l__ddlop_shadow_find(op, sns, sw->shadow.name);
    if (!sh || !sh->schema) {
        w2l__fail(err, W2L_SCHEMA, "online schema change swap: the schema of %s.%s is unknown", sns,
                  sw->shadow.name);
        W2L_TRY(w2l__ddlop_unsupported(op, t, W2L_SCHEMA, what, err));
        w2l__ddlop_shadow_drop(op, sns, sw->shadow.name);
        return W2L_OK;
    }
    w2l_rc rc = w2l__ddlop_tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) rc = w2l__ddlop_tbl_create(op, t, sh->schema, err);
    else if (rc == W2L_OK && t->route) {
        /* one source of a route's target took a new schema: merged like its rows' */
        rc = w2l__ddlop_evolve_to_source(op, t, sh->schema, out, err);
        w2l__ddlop_shadow_drop(op, sns, sw->shadow.name);
        return rc;
    } else if (rc == W2L_OK) {
        rc = commit_target(op, t, sh->schema, err);
        if (rc != W2L_OK) rc = w2l__ddlop_unsupported(op, t, rc, what, err);
    }
    w2l__ddlop_shadow_drop(op, sns, sw->shadow.name);
    W2L_TRY(rc);
    if (t->quarantined) return W2L_OK;
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: %s.%s takes the schema of %s (schema %d)",
                   t->ns, t->name, sw->shadow.name, (int)w2l_schema_id(t->schema));
    return w2l__ddlop_announce(t, out, err);
}

/* Applies statement st, for its sub-th table (DROP/RENAME lists, SUB_SWAP), to t. */
w2l_rc w2l__ddlop_apply_unit(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, size_t sub,
                             w2l_collector *out, w2l_error *err)
{
    char what[300], text[240];
    w2l__ddlop_stmt_text(st->text, st->text_len, text, sizeof text);
    snprintf(what, sizeof what, "DDL '%s'", text);
    if (w2l__ddlop_route_skips(t, st, sub)) return W2L_OK;
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE:
    case W2L_DDL_CREATE_TABLE_LIKE:
    case W2L_DDL_CREATE_TABLE_SELECT: return apply_create(op, t, st, what, out, err);
    case W2L_DDL_ALTER_TABLE: return apply_alter(op, t, st, what, out, err);
    case W2L_DDL_TRUNCATE_TABLE: return apply_truncate(t, out, err);
    case W2L_DDL_RESYNC_TABLE: return apply_resync(t, st->resync_end, out, err);
    case W2L_DDL_DROP_TABLE: return apply_drop(op, t, err);
    case W2L_DDL_RENAME_TABLE: {
        if (sub == SUB_SWAP) {
            w2l__osc_swap sw;
            if (!w2l__osc_detect_swap(st, &sw)) return W2L_OK;
            return apply_swap(op, t, &sw, what, out, err);
        }
        if (sub >= st->nrenames) return W2L_OK;
        const w2l__ddl_rename *r = &st->renames[sub];
        const char *to_ns = r->to.db ? r->to.db : t->ns;
        char base[256];
        if (w2l__osc_classify(r->to.name, base, sizeof base) != W2L_OSC_NONE &&
            !strcmp(base, t->name) && w2l__ddlop_shadow_pending_for(op, t->ns, t->name)) {
            w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                           "ddl: %s.%s moves aside for an online schema change: kept", t->ns,
                           t->name);
            return W2L_OK;
        }
        if (w2l__ddlop_route_onto(op, t, to_ns, r->to.name)) return W2L_OK;
        return rename_table(op, t, to_ns, r->to.name, out, err);
    }
    default: return W2L_OK;
    }
}

/* 1 when st's sub-th unit must wait for the table's writers (w2l-design(7) section 3). */
int w2l__ddlop_needs_fence(const w2l__ddl_stmt *st)
{
    return st->kind == W2L_DDL_ALTER_TABLE || st->kind == W2L_DDL_TRUNCATE_TABLE ||
           st->kind == W2L_DDL_RENAME_TABLE || st->kind == W2L_DDL_RESYNC_TABLE;
}

static w2l_rc apply_item(ddl_op *op, tbl *t, item *it, w2l_collector *out, w2l_error *err)
{
    if (it->kind == IT_EVOLVE) return w2l__ddlop_evolve_to_source(op, t, it->src, out, err);
    w2l__ddl_list *l = NULL;
    W2L_TRY(w2l__ddl_parse(it->sql, it->sql_len, it->db, &l, err));
    w2l_rc rc = it->stmt < l->n
                    ? w2l__ddlop_apply_unit(op, t, &l->stmts[it->stmt], it->sub, out, err)
                    : W2L_OK;
    w2l__ddl_list_free(l);
    return rc;
}

/* The item of t's queue with that link, or NULL. */
static item *q_find_link(const tbl *t, uint64_t link)
{
    for (item *it = t->q; it; it = it->next)
        if (it->link == link) return it;
    return NULL;
}

w2l_rc w2l__ddlop_drain(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    while (t->q && !t->fence_id && !t->quarantined) {
        item *it = t->q;
        if (it->kind == IT_WAIT) {
            /* a rename into this name: it applies from the old name's queue */
            tbl *from = w2l__ddlop_tbl_find(op, it->ons, it->oname);
            if (!from || !q_find_link(from, it->link) || from->quarantined) {
                w2l__ddlop_item_free(
                    w2l__ddlop_q_pop(t)); /* the rename is gone (its table was quarantined) */
                continue;
            }
            uint64_t link = it->link;
            it->waiting = 1; /* while this drain is on the stack */
            W2L_TRY(w2l__ddlop_drain(op, from, out, err));
            if (t->q && t->q->kind == IT_WAIT && t->q->link == link) {
                t->q->waiting = 0; /* not yet: the old name's queue has more first */
                return W2L_OK;
            }
            continue;
        }
        if (it->kind == IT_CHANGES) {
            int need = 0;
            W2L_TRY(w2l__ddlop_forward(op, t, it->changes, it->n, 0, out, &need, err));
            if (need) {
                item *ev = NULL;
                W2L_TRY(w2l__ddlop_item_evolve(it->src, &ev, err));
                ev->fenced = !t->dirty;
                w2l__ddlop_q_push_front(t, ev);
                continue;
            }
            w2l__ddlop_item_free(w2l__ddlop_q_pop(t));
            continue;
        }
        if (t->dirty && !it->fenced) {
            it->fenced = 1;
            return fence_start(op, t, out, err);
        }
        tbl *to = NULL;
        int to_waiting = 0;
        if (it->link) {
            /* a rename: the new name's queue must have reached its wait */
            to = w2l__ddlop_tbl_find(op, it->ons, it->oname);
            if (to && to->q && to->q->link == it->link) {
                to_waiting = to->q->waiting;
                w2l__ddlop_item_free(w2l__ddlop_q_pop(to));
            } else if (to && q_find_link(to, it->link)) {
                return W2L_OK; /* the new name's drain comes back here */
            }
        }
        w2l__ddlop_q_pop(t);
        w2l_rc rc = apply_item(op, t, it, out, err);
        w2l__ddlop_item_free(it);
        W2L_TRY(rc);
        if (to && !to_waiting) W2L_TRY(w2l__ddlop_drain(op, to, out, err));
    }
    return W2L_OK;
}
