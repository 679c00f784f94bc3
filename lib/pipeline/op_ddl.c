/*
 * The built-in DDL handler operator ("default", W2L_OPERATOR_DDL; w2l-design(7) section 3).
 * It sits between the source and the writers and owns every table's Iceberg schema:
 *
 *   - Table resolution: the first CHANGES of a table load it from the catalog, or create
 *     it from the source schema (field ids 1..n, identifier = the source's key, key
 *     columns required, unpartitioned).
 *   - Row mapping: each source schema version (a w2l_schema pointer) is mapped onto the
 *     Iceberg table by column NAME, once, into Iceberg field ids; the ids are resolved
 *     against the table's current schema. A source schema that matches the Iceberg schema
 *     1:1 (same names, order and types) is forwarded zero-copy with its changes'
 *     schema pointers re-pointed at the Iceberg schema; anything else is converted
 *     (projection, int->long, float->double, decimal precision up, missing columns NULL).
 *     Because a mapping is kept in field ids, rows of an older source schema still land
 *     in the right columns after a rename.
 *   - Schema changes: DDL statements (parsed by lib/ddl), and source schemas that bring
 *     new columns or wider types, change the handler's own copy of the table at once and
 *     are recorded as table operations (create, schema, rename, drop: table_ops.h) that
 *     the pipeline's owner applies to the catalog when their checkpoint is sealed
 *     (owner.h); this handler never writes the catalog. Field ids are preserved; renames
 *     move the name, not the id; drop + add gives a new id. A dropped table's name is
 *     "gone" until something creates it again (a new table-uuid), whatever the catalog
 *     still shows. Unsupported changes follow ddl.policy per table (fail | ignore |
 *     quarantine).
 *   - Order: each table has a queue; a RENAME waits in the old name's queue and leaves a
 *     wait in the new name's, so it applies after what either name had queued before it
 *     and before what comes after it.
 *   - Fences: a change to a table that received DML since the last barrier first sends
 *     WRITER_COMMIT to the table's writers and buffers the table's later elements (other
 *     tables keep flowing) until every writer answered, or ddl.fence-timeout passed, or
 *     the next checkpoint barrier arrives (see fence_at_barrier); then the change is
 *     applied, SCHEMA is sent and the buffered changes are released.
 *   - Routes and metadata columns (op_ddl_route.c, w2l-routes(7)): the source tables a
 *     route merges are handled as their target, whose schema is the union of theirs; the
 *     handler fills _op_ts, _source_db, _source_table and _op when configured.
 *   - Quarantine (ddl.policy=quarantine, or a QUARANTINE element from the source,
 *     w2l_emit_quarantine(3)): the table's buffered and later changes are dropped and
 *     counted (w2l_table_metrics.rows_quarantined); the reason and the count are kept in
 *     the state, so a restart keeps the table aside and w2l status shows why.
 *   - State: at every barrier "ddl/<index>" holds a JSON summary of the tables this
 *     handler knows (Iceberg schema id, quarantine) and shadow tables of online-schema-
 *     change tools; "ddl/ops/<index>" the table operations not yet applied (owner.h).
 *   - Resends: a statement delivered twice in a row for a table (same text, database and
 *     source time, no change of the table in between: a reader that resent it) is applied
 *     once. The same statement again after the table changed is a new statement (a
 *     binlog's times have whole seconds: TRUNCATE, INSERT, TRUNCATE within one second
 *     are three statements).
 *
 * Limits: process() runs only when an element arrives, so a fence deadline is noticed at
 * the next element or barrier, not at the instant it passes. With ddl-parallelism > 1 a
 * statement whose table the source does not name reaches handler 0, which applies it
 * although the table's rows may belong to another handler (that handler's cached mapping
 * is then refreshed only when it restarts); and a table created or renamed by one handler
 * is seen by another only once its checkpoint is committed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ledger.h"
#include "op_ddl_int.h"
#include "route.h"
#include "../io/io.h"

/* ------------------------------------------------------------ process ---------------- */

/* One table's part of a statement: apply it now, or queue it behind the table's fence. */
static w2l_rc ddl_unit(ddl_op *op, const w2l_ddl *d, const w2l__ddl_stmt *st, size_t k, size_t sub,
                       const char *ns, const char *name, w2l_collector *out, w2l_error *err)
{
    if (!ns || !*ns || !name || !*name) {
        w2l__log(W2L_LOG_WARN, "ddl: %s statement without a database, ignored",
                 w2l__ddl_kind_name(st->kind));
        return W2L_OK;
    }
    char base[256];
    if (sub != SUB_SWAP && w2l__ddlop_is_shadow(op, ns, name, 1, base, sizeof base))
        return w2l__ddlop_shadow_stmt(op, st, sub, ns, name, base, err);
    tbl *t, *to = NULL;
    W2L_TRY(w2l__ddlop_tbl_source(op, ns, name, &t, err));
    if (t->quarantined) {
        /* DROP TABLE or CREATE OR REPLACE: the table it set aside is gone, the way back */
        if (!w2l__ddl_ends_table(st, ns, name)) return W2L_OK;
        w2l__ddlop_release(t, st->kind == W2L_DDL_DROP_TABLE ? "DROP TABLE"
                                                              : "CREATE OR REPLACE TABLE");
    }
    /* a resend (file header): statement text, default database, source time and its place
     * in the text identify it */
    uint64_t key = 0;
    if (d->ts_ms) {
        key = w2l__hash64(d->sql, d->sql_len, (uint64_t)d->ts_ms);
        key = w2l__hash64(d->db ? d->db : "", d->db ? strlen(d->db) : 0, key);
        uint64_t pos[2] = {k, sub};
        key = w2l__hash64(pos, sizeof pos, key);
        if (key == t->last_key) {
            w2l__log_table(W2L_LOG_INFO, ns, name,
                           "ddl: %s.%s: the statement just seen, again: dropped", ns, name);
            return W2L_OK;
        }
    }
    t->last_key = key;
    const char *to_db = NULL, *to_name = NULL; /* a rename's new name */
    if (st->kind == W2L_DDL_RENAME_TABLE && sub != SUB_SWAP && sub < st->nrenames) {
        to_db = st->renames[sub].to.db, to_name = st->renames[sub].to.name;
    } else if (st->kind == W2L_DDL_ALTER_TABLE) {
        for (size_t i = 0; i < st->nalters && !to_name; i++)
            if (st->alters[i].kind == W2L_ALTER_RENAME_TABLE && st->alters[i].new_table.name)
                to_db = st->alters[i].new_table.db, to_name = st->alters[i].new_table.name;
    }
    if (to_name && !t->route) {
        W2L_TRY(w2l__ddlop_tbl_source(op, to_db ? to_db : ns, to_name, &to, err));
        if (to == t) to = NULL;
        else to->last_key = 0;
    }
    if (t->q || t->fence_id || (w2l__ddlop_needs_fence(st) && t->dirty) ||
        (to && (to->q || to->fence_id))) {
        item *it = NULL;
        W2L_TRY(w2l__ddlop_item_ddl(d->sql, d->sql_len, d->db, k, key, &it, err));
        it->sub = sub;
        it->fenced = !w2l__ddlop_needs_fence(st);
        if (to) {
            /* the new name's rows and statements after this wait for it, and it waits
             * for what the new name had queued before it */
            item *w = w2l__calloc(1, sizeof *w);
            it->link = ++op->link_seq;
            it->ons = w2l__strdup(to->ns);
            it->oname = w2l__strdup(to->name);
            if (w) {
                w->kind = IT_WAIT;
                w->link = it->link;
                w->ons = w2l__strdup(t->ns);
                w->oname = w2l__strdup(t->name);
            }
            if (!w || !w->ons || !w->oname || !it->ons || !it->oname) {
                w2l__ddlop_item_free(w);
                w2l__ddlop_item_free(it);
                return w2l__fail(err, W2L_NOMEM, "out of memory");
            }
            w2l__ddlop_q_push(to, w);
        }
        w2l__ddlop_q_push(t, it);
        return w2l__ddlop_drain(op, t, out, err);
    }
    return w2l__ddlop_apply_unit(op, t, st, sub, out, err);
}

static w2l_rc on_ddl(ddl_op *op, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    const w2l_ddl *d = e->ddl;
    if (!d || !d->sql) return W2L_OK;
    w2l__ddl_list *l = NULL;
    w2l_rc rc = w2l__ddl_parse(d->sql, d->sql_len, d->db, &l, err);
    if (rc != W2L_OK) {
        if (rc == W2L_NOMEM) return rc;
        char text[240], what[300];
        w2l__ddlop_stmt_text(d->sql, d->sql_len, text, sizeof text);
        snprintf(what, sizeof what, "DDL '%s'", text);
        const char *ns = d->db && *d->db ? d->db : e->ns;
        if (d->table && *d->table && ns && *ns) {
            tbl *t;
            W2L_TRY(w2l__ddlop_tbl_source(op, ns, d->table, &t, err));
            return w2l__ddlop_unsupported(op, t, rc, what, err);
        }
        char reason[sizeof err->msg];
        snprintf(reason, sizeof reason, "%s", err->msg);
        return w2l__fail(err, rc, "%s: %s", what, reason);
    }
    for (size_t k = 0; rc == W2L_OK && k < l->n; k++) {
        const w2l__ddl_stmt *st = &l->stmts[k];
        switch (st->kind) {
        case W2L_DDL_CREATE_TABLE:
        case W2L_DDL_CREATE_TABLE_LIKE:
        case W2L_DDL_CREATE_TABLE_SELECT:
        case W2L_DDL_ALTER_TABLE:
        case W2L_DDL_TRUNCATE_TABLE:
        case W2L_DDL_RESYNC_TABLE:
            rc = ddl_unit(op, d, st, k, 0, st->table.db, st->table.name, out, err);
            break;
        case W2L_DDL_DROP_TABLE:
            for (size_t j = 0; rc == W2L_OK && j < st->ntables; j++)
                rc = ddl_unit(op, d, st, k, j, st->tables[j].db, st->tables[j].name, out, err);
            break;
        case W2L_DDL_RENAME_TABLE: {
            w2l__osc_swap sw;
            if (w2l__osc_detect_swap(st, &sw)) {
                rc = ddl_unit(op, d, st, k, SUB_SWAP, sw.table.db, sw.table.name, out, err);
                break;
            }
            for (size_t j = 0; rc == W2L_OK && j < st->nrenames; j++)
                rc = ddl_unit(op, d, st, k, j, st->renames[j].from.db, st->renames[j].from.name,
                              out, err);
            break;
        }
        case W2L_DDL_CREATE_DATABASE:
        case W2L_DDL_DROP_DATABASE:
            w2l__log(W2L_LOG_DEBUG, "ddl: %s %s: nothing to do in the lake",
                     w2l__ddl_kind_name(st->kind), st->database ? st->database : "");
            break;
        default: break;
        }
    }
    w2l__ddl_list_free(l);
    return rc;
}

static w2l_rc on_changes(ddl_op *op, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    if (!e->nchanges) return W2L_OK;
    char base[256];
    if (w2l__ddlop_is_shadow(op, e->ns, e->table, 0, base, sizeof base)) return W2L_OK;
    tbl *t;
    W2L_TRY(w2l__ddlop_tbl_source(op, e->ns, e->table, &t, err));
    if (t->quarantined) {
        w2l__ddlop_count_dropped(t, e->nchanges);
        return W2L_OK;
    }
    t->last_key = 0;
    w2l_change *cs = (w2l_change *)e->changes; /* owned during process() (pipeline.h) */
    if (t->q || t->fence_id) {
        item *it = NULL;
        W2L_TRY(w2l__ddlop_item_changes(cs, e->nchanges, &it, err));
        w2l__ddlop_q_push(t, it);
        return w2l__ddlop_drain(op, t, out, err);
    }
    int need = 0;
    W2L_TRY(w2l__ddlop_forward(op, t, cs, e->nchanges, 1, out, &need, err));
    if (!need) return W2L_OK;
    /* the source's schema changed the table: through the fence when it has DML */
    item *ev = NULL, *it = NULL;
    W2L_TRY(w2l__ddlop_item_evolve(cs[0].schema, &ev, err));
    ev->fenced = !t->dirty;
    w2l__ddlop_q_push(t, ev);
    W2L_TRY(w2l__ddlop_item_changes(cs, e->nchanges, &it, err));
    w2l__ddlop_q_push(t, it);
    return w2l__ddlop_drain(op, t, out, err);
}

/* QUARANTINE from the source (w2l_emit_quarantine(3)): payload {"reason": text|null,
 * "rows": N}, N changes of the table the source dropped itself. */
static w2l_rc on_quarantine(ddl_op *op, const w2l_element *e, w2l_error *err)
{
    w2l__json *j = NULL;
    W2L_TRY(
        w2l__json_parse(e->payload ? e->payload : "{}", e->payload ? e->payload_len : 2, &j, err));
    const char *reason = w2l__json_str(w2l__json_get(j, "reason"));
    int64_t rows = 0;
    w2l__json_int64(w2l__json_get(j, "rows"), &rows);
    tbl *t;
    w2l_rc rc = w2l__ddlop_tbl_source(op, e->ns, e->table, &t, err);
    if (rc == W2L_OK && !t->quarantined) {
        w2l__log_table(
            W2L_LOG_ERROR, t->ns, t->name,
            "ddl: table %s.%s QUARANTINED by the source: %s; its changes are dropped from here "
            "on (ddl.policy=quarantine)",
            t->ns, t->name, reason ? reason : "(no reason given)");
        rc = w2l__ddlop_quarantine(op, t, reason ? reason : "quarantined by the source", err);
    }
    if (rc == W2L_OK && rows > 0) w2l__ddlop_count_dropped(t, (uint64_t)rows);
    w2l__json_free(j);
    return rc;
}

static w2l_rc on_answer(ddl_op *op, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    tbl *t = w2l__ddlop_tbl_find(op, e->ns, e->table);
    if (!t || !t->fence_id || t->fence_id != e->ddl_id) return W2L_OK; /* late: resolved already */
    if (++t->fence_got < t->fence_need) return W2L_OK;
    w2l__log_table(W2L_LOG_DEBUG, t->ns, t->name, "ddl: table %s.%s: fence %llu complete", t->ns,
                   t->name, (unsigned long long)e->ddl_id);
    return w2l__ddlop_fence_done(op, t, out, err);
}

/* ------------------------------------------------------------ methods ---------------- */

static void d_close(w2l_operator *self);

static w2l_rc open_op(const w2l_conf *conf, unsigned index, unsigned n, w2l_state *st,
                      uint64_t restored, ddl_op *op, w2l_error *err)
{
    op->conf = conf;
    op->index = index;
    op->n = n ? n : 1;
    op->st = st;
    op->restored = restored;
    w2l__arena_init(&op->scratch, 64 * 1024);
    const char *wh = NULL, *cat = NULL;
    int64_t v;
    W2L_TRY(w2l_conf_get(conf, "warehouse", &wh, err));
    if (!wh || !*wh)
        return w2l__fail(err, W2L_CONFIG, "the DDL handler needs the lake: set warehouse");
    op->warehouse = w2l__strdup(wh);
    W2L_NOMEM_IF(!op->warehouse, err);
    W2L_TRY(w2l_conf_get(conf, "catalog", &cat, err));
    W2L_TRY(w2l_conf_get_int(conf, "parallelism", &v, err));
    op->nwriters = v > 0 ? (unsigned)v : 1;
    W2L_TRY(w2l_conf_get_int(conf, "ddl.fence-timeout", &op->fence_timeout_ms, err));
    if (!op->fence_timeout_ms) {
        W2L_TRY(w2l_conf_get_int(conf, "checkpoint-interval", &v, err));
        /* short intervals must not turn a busy writer (many tables completing files at a
         * barrier) into a failed job: the fence resolves at the next barrier anyway */
        op->fence_timeout_ms = W2L_MAX(3 * v, 30000);
    }
    if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK)
        op->eo.types.tinyint1_as_boolean = (int)v;
    if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK)
        op->eo.types.time_as_string = (int)v;
    /* A statement the table already shows is no change when a shared source replays DDL the
     * lake has, and with any source of CDC JSON: its row messages describe their columns, and
     * those of another Kafka partition can come ahead of the statement that made them (a
     * partition at the end of its log while more is produced). The binlog keeps its order. */
    const char *src = NULL;
    if (w2l_conf_get(conf, "source", &src, NULL) != W2L_OK) src = NULL;
    /* a mysql source's time-as-string= parameter wins over the key, as in the source */
    const char *tq = src && !strncmp(src, "mysql:", 6) ? strchr(src, '?') : NULL;
    for (const char *p = tq; p && *p; p = strchr(p + 1, '&')) {
        if (!strncmp(p + 1, "time-as-string=", 15))
            op->eo.types.time_as_string = p[16] == '1' || !strncmp(p + 16, "true", 4);
    }
    op->eo.replayed_ok = w2l__ledger_current() != NULL || (src && strncmp(src, "mysql:", 6));
    W2L_TRY(w2l__fileio_open_for(conf, op->warehouse, &op->io, err));
    W2L_TRY(w2l__catalog_open(cat, conf, op->warehouse, op->io, &op->cat, err));
    /* every handler checks the syntax; the first also the tables the lake holds */
    W2L_TRY(w2l__ddlop_check_specs(conf, index == 0 ? op : NULL, err));
    W2L_TRY(w2l__ddlop_check_extras(conf, err));
    W2L_TRY(w2l__routes_new(conf, &op->routes, err));
    op->owner = w2l__owner_current();
    if (!op->owner)
        return w2l__fail(err, W2L_MISUSE, "the built-in DDL handler runs only inside a pipeline");
    /* what the catalog says is the restored checkpoint's state only once the committers
     * committed it */
    W2L_TRY(w2l__owner_wait_restored(op->owner, err));
    if (restored) {
        load_ctx c = {op, restored, W2L_OK, err};
        W2L_TRY(w2l_state_keys(st, restored, "ddl/", w2l__ddlop_load_key, &c, err));
        W2L_TRY(c.rc);
    }
    return W2L_OK;
}

static w2l_rc d_open(const w2l_operator_methods *m, const w2l_conf *conf, unsigned index,
                     unsigned n, w2l_state *st, uint64_t restored, w2l_operator *self,
                     w2l_error *err)
{
    (void)m;
    w2l_rc rc = open_op(conf, index, n, st, restored, (ddl_op *)self, err);
    if (rc != W2L_OK) d_close(self); /* the runtime closes only what opened */
    return rc;
}

static w2l_rc d_process(w2l_operator *self, const w2l_element *e, w2l_collector *out,
                        w2l_error *err)
{
    ddl_op *op = (ddl_op *)self;
    w2l_rc rc = W2L_OK;
    switch (e->kind) {
    case W2L_ELEM_CHANGES: rc = on_changes(op, e, out, err); break;
    case W2L_ELEM_DDL: rc = on_ddl(op, e, out, err); break;
    case W2L_ELEM_WRITER_COMMIT: rc = on_answer(op, e, out, err); break;
    case W2L_ELEM_QUARANTINE: rc = on_quarantine(op, e, err); break;
    case W2L_ELEM_BARRIER:
        rc = w2l__ddlop_check_deadlines(op, out, err);
        if (rc == W2L_OK) rc = w2l__ddlop_fence_at_barrier(op, out, err);
        if (rc == W2L_OK) rc = w2l__ddlop_save_ops(op, e->ckpt, err);
        if (rc == W2L_OK) rc = w2l__ddlop_save_state(op, e->ckpt, err);
        for (tbl *t = op->tables; rc == W2L_OK && t; t = t->next) t->dirty = 0;
        return rc;
    case W2L_ELEM_END: return w2l__ddlop_fence_at_barrier(op, out, err);
    default: break;
    }
    if (rc == W2L_OK) rc = w2l__ddlop_check_deadlines(op, out, err);
    return rc;
}

static w2l_rc d_notify(w2l_operator *self, uint64_t ckpt, w2l_error *err)
{
    (void)self, (void)ckpt, (void)err;
    return W2L_OK;
}

static void d_close(w2l_operator *self)
{
    ddl_op *op = (ddl_op *)self;
    while (op->tables) {
        tbl *t = op->tables;
        op->tables = t->next;
        w2l__ddlop_tbl_free(t);
    }
    w2l__free(op->tidx);
    op->tidx = NULL;
    op->tcap = op->ntab = 0;
    while (op->shadows) w2l__ddlop_shadow_drop(op, op->shadows->ns, op->shadows->name);
    w2l__routes_free(op->routes);
    w2l__catalog_close(op->cat);
    w2l_fileio_close(op->io);
    w2l__free(op->warehouse);
    w2l_buf_release(&op->ops);
    w2l__arena_release(&op->scratch);
}

const w2l_operator_methods w2l__op_ddl = {
    .version = W2L_OPERATOR_METHODS_V1,
    .name = "default",
    .kind = W2L_OPERATOR_DDL,
    .size = sizeof(ddl_op),
    .open = d_open,
    .process = d_process,
    .notify_complete = d_notify,
    .close = d_close,
};
