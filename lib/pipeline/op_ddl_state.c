/*
 * The DDL handler's state (op_ddl_int.h): its tables, mappings and pending operations
 * saved at each checkpoint and loaded at open.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"

/* ------------------------------------------------------------ state ------------------ */

/* Hands this checkpoint's table operations to the owner and stores every operation of this
 * handler not yet applied under "ddl/ops/<index>" (owner.h). */
w2l_rc w2l__ddlop_save_ops(ddl_op *op, uint64_t ckpt, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    if (op->ops.len) {
        w2l_buf arr = {0};
        rc = w2l__buf_printf(&arr, err, "[%.*s]", (int)op->ops.len, (const char *)op->ops.data);
        if (rc == W2L_OK)
            rc = w2l__owner_add_ops(op->owner, ckpt, op->index, (const char *)arr.data, arr.len,
                                    err);
        w2l_buf_release(&arr);
        op->ops.len = 0;
    }
    w2l_buf v = {0};
    if (rc == W2L_OK) rc = w2l__owner_pending_ops(op->owner, op->index, &v, err);
    char key[48];
    snprintf(key, sizeof key, W2L_OPS_DDL_OPS_PREFIX "%u", op->index);
    /* none pending: no key (the newest sealed checkpoint alone says what is left) */
    if (rc == W2L_OK && v.len > 2)
        rc = w2l_state_put(op->st, ckpt, key, (const char *)v.data, v.len, err);
    w2l_buf_release(&v);
    return rc;
}

/* "ddl/<index>": {"tables":[{"ns","table","schema-id","quarantined",
 *                            "reason" (quarantined only), "rows-quarantined"}],
 *                 "shadows":[{"ns","table","base","schema"}]} */
w2l_rc w2l__ddlop_save_state(ddl_op *op, uint64_t ckpt, w2l_error *err)
{
    w2l__json *root = w2l__json_new_object(), *ts = w2l__json_new_array(),
              *ss = w2l__json_new_array();
    int bad = !root || !ts || !ss;
    if (!bad) {
        /* add takes ownership, also on failure */
        bad = w2l__json_add(root, "tables", ts) | w2l__json_add(root, "shadows", ss);
    } else {
        w2l__json_free(root);
        root = NULL;
        w2l__json_free(ts), w2l__json_free(ss);
    }
    for (tbl *t = op->tables; !bad && t; t = t->next) {
        if (!t->ice && !t->quarantined) continue;
        w2l__json *o = w2l__json_new_object();
        bad = !o || w2l__json_append(ts, o) ||
              w2l__json_add(o, "ns", w2l__json_new_string(t->ns)) ||
              w2l__json_add(o, "table", w2l__json_new_string(t->name)) ||
              w2l__json_add(o, "schema-id",
                            w2l__json_new_int64(t->view ? w2l_schema_id(t->view) : -1)) ||
              w2l__json_add(o, "quarantined", w2l__json_new_bool(t->quarantined)) ||
              (t->quarantined &&
               (w2l__json_add(o, "reason", w2l__json_new_string(t->reason ? t->reason : "")) ||
                w2l__json_add(o, "rows-quarantined",
                              w2l__json_new_int64((int64_t)t->rows_quarantined))));
    }
    for (shadow *s = op->shadows; !bad && s; s = s->next) {
        w2l__json *o = w2l__json_new_object(), *sj = NULL;
        char *text = NULL;
        if (s->schema && w2l_schema_to_json(s->schema, &text, err) == W2L_OK) {
            w2l__json_parse(text, strlen(text), &sj, NULL);
            w2l_free(text);
        }
        if (!o) {
            w2l__json_free(sj);
            bad = 1;
            break;
        }
        /* o owns sj first, so every failure below frees it */
        bad = w2l__json_add(o, "schema", sj ? sj : w2l__json_new_null()) ||
              w2l__json_append(ss, o) || w2l__json_add(o, "ns", w2l__json_new_string(s->ns)) ||
              w2l__json_add(o, "table", w2l__json_new_string(s->name)) ||
              w2l__json_add(o, "base", w2l__json_new_string(s->base));
    }
    char *text = bad ? NULL : w2l__json_print(root, 0);
    w2l__json_free(root);
    W2L_NOMEM_IF(!text, err);
    char key[32];
    snprintf(key, sizeof key, "ddl/%u", op->index);
    w2l_rc rc = w2l_state_put(op->st, ckpt, key, text, strlen(text), err);
    w2l__free(text);
    return rc;
}

static w2l_rc load_one(ddl_op *op, const char *text, size_t len, w2l_error *err)
{
    w2l__json *root = NULL;
    W2L_TRY(w2l__json_parse(text, len, &root, err));
    w2l_rc rc = W2L_OK;
    for (w2l__json *o = w2l__json_first(w2l__json_get(root, "tables")); rc == W2L_OK && o;
         o = w2l__json_next(o)) {
        const char *ns = w2l__json_str(w2l__json_get(o, "ns")),
                   *name = w2l__json_str(w2l__json_get(o, "table"));
        int64_t sid = -1;
        int q = 0;
        if (!ns || !name) continue;
        if (w2l__table_hash(ns, name) % op->n != op->index) continue; /* another handler's table */
        w2l__json_int64(w2l__json_get(o, "schema-id"), &sid);
        w2l__json_bool(w2l__json_get(o, "quarantined"), &q);
        const char *reason = w2l__json_str(w2l__json_get(o, "reason"));
        int64_t dropped = 0;
        w2l__json_int64(w2l__json_get(o, "rows-quarantined"), &dropped);
        tbl *t;
        rc = w2l__ddlop_tbl_get(op, ns, name, &t, err);
        if (rc == W2L_OK) {
            t->ckpt_schema_id = (int32_t)sid;
            if (q) {
                rc = w2l__ddlop_quarantine(op, t, reason ? reason : "quarantined before a restart",
                                           err);
                t->rows_quarantined = dropped > 0 ? (uint64_t)dropped : 0;
                w2l__log_table(W2L_LOG_WARN, ns, name, "ddl: table %s.%s stays quarantined: %s", ns,
                               name, t->reason);
            }
        }
    }
    for (w2l__json *o = w2l__json_first(w2l__json_get(root, "shadows")); rc == W2L_OK && o;
         o = w2l__json_next(o)) {
        const char *ns = w2l__json_str(w2l__json_get(o, "ns")),
                   *name = w2l__json_str(w2l__json_get(o, "table")),
                   *base = w2l__json_str(w2l__json_get(o, "base"));
        if (!ns || !name || !base || w2l__ddlop_shadow_find(op, ns, name)) continue;
        w2l_schema *s = NULL;
        w2l__json *sj = w2l__json_get(o, "schema");
        if (sj && w2l__json_type(sj) == W2L_JSON_OBJECT) {
            char *st = w2l__json_print(sj, 0);
            if (st) w2l_schema_from_json(st, strlen(st), &s, NULL);
            w2l__free(st);
        }
        rc = w2l__ddlop_shadow_put(op, ns, name, base, s, err);
    }
    w2l__json_free(root);
    return rc;
}

int w2l__ddlop_load_key(void *ctx, const char *key)
{
    load_ctx *c = ctx;
    if (!strncmp(key, W2L_OPS_DDL_OPS_PREFIX, strlen(W2L_OPS_DDL_OPS_PREFIX)))
        return 0; /* the owner's */
    w2l_buf b = {0};
    c->rc = w2l_state_get(c->op->st, c->ckpt, key, &b, c->err);
    if (c->rc == W2L_OK) c->rc = load_one(c->op, (const char *)b.data, b.len, c->err);
    if (c->rc != W2L_OK) w2l__error_prefix(c->err, "state %s: ", key);
    w2l_buf_release(&b);
    return c->rc != W2L_OK;
}
