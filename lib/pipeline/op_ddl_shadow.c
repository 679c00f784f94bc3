/*
 * The DDL handler's online-schema-change shadow tables (op_ddl_int.h): gh-ost and
 * pt-online-schema-change shadows, tracked until their cut-over swap.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"
#include "route.h"

/* ------------------------------------------------------------ shadows (OSC) ---------- */

shadow *w2l__ddlop_shadow_find(ddl_op *op, const char *ns, const char *name)
{
    for (shadow *s = op->shadows; s; s = s->next)
        if (!strcmp(s->name, name) && !strcmp(s->ns, ns)) return s;
    return NULL;
}

void w2l__ddlop_shadow_drop(ddl_op *op, const char *ns, const char *name)
{
    for (shadow **pp = &op->shadows; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->name, name) && !strcmp((*pp)->ns, ns)) {
            shadow *s = *pp;
            *pp = s->next;
            w2l_schema_unref(s->schema);
            w2l__free(s->ns);
            w2l__free(s->name);
            w2l__free(s->base);
            w2l__free(s);
            return;
        }
}

/* Tracks (or re-tracks) a shadow table; takes schema's reference (may be NULL). */
w2l_rc w2l__ddlop_shadow_put(ddl_op *op, const char *ns, const char *name, const char *base,
                             w2l_schema *schema, w2l_error *err)
{
    w2l__ddlop_shadow_drop(op, ns, name);
    shadow *s = w2l__calloc(1, sizeof *s);
    if (s) {
        s->ns = w2l__strdup(ns);
        s->name = w2l__strdup(name);
        s->base = w2l__strdup(base);
    }
    if (!s || !s->ns || !s->name || !s->base) {
        if (s) w2l__free(s->ns), w2l__free(s->name), w2l__free(s->base);
        w2l__free(s);
        w2l_schema_unref(schema);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    s->schema = schema;
    s->next = op->shadows;
    op->shadows = s;
    return W2L_OK;
}

/* 1 when ns.name is a tool's table that is not synced: a tracked shadow, or a name of
 * the tools' patterns next to a table this handler knows (check_catalog: or that the
 * catalog holds). base receives the table it belongs to. */
int w2l__ddlop_is_shadow(ddl_op *op, const char *ns, const char *name, int check_catalog,
                         char *base, size_t size)
{
    if (w2l__osc_classify(name, base, size) == W2L_OSC_NONE) return 0;
    if (w2l__ddlop_shadow_find(op, ns, name) || w2l__ddlop_tbl_find(op, ns, base)) return 1;
    const char *tns, *tname;
    const w2l__route *r = NULL;
    if (w2l__routes_map(op->routes, ns, base, &tns, &tname, &r, NULL) == W2L_OK && r)
        return 1; /* the base is one of a route's sources */
    if (!check_catalog) return 0;
    w2l_buf loc = {0};
    w2l_error e;
    w2l_rc rc = w2l__catalog_load(op->cat, ns, base, &loc, &e);
    w2l_buf_release(&loc);
    return rc == W2L_OK;
}

int w2l__ddlop_shadow_pending_for(ddl_op *op, const char *ns, const char *base)
{
    for (shadow *s = op->shadows; s; s = s->next) {
        w2l__osc_kind k = w2l__osc_classify(s->name, NULL, 0);
        if ((k == W2L_OSC_GHOST_SHADOW || k == W2L_OSC_PTOSC_SHADOW) && !strcmp(s->ns, ns) &&
            !strcmp(s->base, base))
            return 1;
    }
    return 0;
}

/* The largest field id the base table has used, for a shadow's new columns. */
static int32_t base_last_id(ddl_op *op, const char *ns, const char *base)
{
    tbl *b = NULL;
    w2l_error e;
    w2l__ddlop_tbl_source(op, ns, base, &b, &e); /* a route's source: its target */
    if (b && !b->ice) {
        w2l__ddlop_tbl_read(op, b, &e);
    }
    return b && b->ice ? b->ice->meta->last_column_id : 0;
}

/* A statement on a shadow table: follow its schema in memory. */
w2l_rc w2l__ddlop_shadow_stmt(ddl_op *op, const w2l__ddl_stmt *st, size_t sub, const char *ns,
                              const char *name, const char *base, w2l_error *err)
{
    shadow *sh = w2l__ddlop_shadow_find(op, ns, name);
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE_LIKE: {
        tbl *b;
        W2L_TRY(w2l__ddlop_tbl_source(op, st->like.db ? st->like.db : ns, st->like.name, &b, err));
        w2l_rc rc = w2l__ddlop_tbl_read(op, b, err);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
        return w2l__ddlop_shadow_put(op, ns, name, base,
                                     b->schema ? w2l_schema_ref(b->schema) : NULL, err);
    }
    case W2L_DDL_CREATE_TABLE: {
        w2l_schema *s = NULL;
        int32_t last;
        w2l_rc rc = w2l__schema_from_create(st, &op->eo, 0, &s, &last, err);
        if (rc == W2L_NOMEM) return rc;
        tbl *b = NULL;
        if (rc == W2L_OK) rc = w2l__ddlop_tbl_source(op, ns, base, &b, err);
        if (rc == W2L_OK && b && (b->ice || w2l__ddlop_tbl_read(op, b, err) == W2L_OK)) {
            /* the base table's ids for the same names */
            size_t n = w2l_schema_field_count(s), nid;
            w2l__source_column *cols = w2l__calloc(n + 1, sizeof *cols);
            const int32_t *ids = w2l_schema_identifier(s, &nid);
            const char **pk = w2l__calloc(nid + 1, sizeof *pk);
            w2l__schema_diff *d = NULL;
            if (!cols || !pk) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            for (size_t i = 0; rc == W2L_OK && i < n; i++) {
                const w2l_field *f = w2l_schema_field(s, i);
                cols[i] = (w2l__source_column){f->name, f->type, f->required};
            }
            for (size_t k = 0; rc == W2L_OK && k < nid; k++)
                pk[k] = w2l_schema_field(s, (size_t)w2l_schema_index_of_id(s, ids[k]))->name;
            if (rc == W2L_OK)
                rc = w2l__schema_reconcile(b->schema, b->ice->meta->last_column_id, cols, n, pk,
                                           nid, name, &op->eo, &d, err);
            w2l__free(cols);
            w2l__free(pk);
            if (rc == W2L_OK) {
                w2l_schema_unref(s);
                s = w2l_schema_ref(d->schema);
            }
            w2l__schema_diff_free(d);
        }
        if (rc != W2L_OK) {
            if (rc == W2L_NOMEM) {
                w2l_schema_unref(s);
                return rc;
            }
            w2l__log_table(W2L_LOG_WARN, ns, name,
                           "ddl: shadow table %s.%s: %s (its schema is unknown)", ns, name,
                           err->msg);
            w2l_schema_unref(s);
            s = NULL;
        }
        return w2l__ddlop_shadow_put(op, ns, name, base, s, err);
    }
    case W2L_DDL_ALTER_TABLE: {
        if (!sh) return w2l__ddlop_shadow_put(op, ns, name, base, NULL, err);
        if (!sh->schema) return W2L_OK;
        int32_t last = W2L_MAX(base_last_id(op, ns, base), w2l_schema_max_field_id(sh->schema));
        w2l__schema_diff *d = NULL;
        w2l_rc rc = w2l__schema_apply_alter(sh->schema, last, st, &op->eo, &d, err);
        if (rc == W2L_NOMEM) return rc;
        w2l_schema_unref(sh->schema);
        sh->schema = NULL;
        if (rc == W2L_OK) sh->schema = w2l_schema_ref(d->schema);
        else
            w2l__log_table(W2L_LOG_WARN, ns, name,
                           "ddl: shadow table %s.%s: %s (its schema is unknown)", ns, name,
                           err->msg);
        w2l__schema_diff_free(d);
        return W2L_OK;
    }
    case W2L_DDL_DROP_TABLE:
    case W2L_DDL_RENAME_TABLE:
        (void)sub;
        w2l__ddlop_shadow_drop(op, ns, name);
        return W2L_OK;
    default:
        return W2L_OK;
    }
}
