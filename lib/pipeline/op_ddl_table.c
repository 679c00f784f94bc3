/*
 * The DDL handler's tables (op_ddl_int.h): loading, creating and syncing a table's
 * Iceberg metadata, and committing schema changes to it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"

/* ------------------------------------------------------------------ small helpers ---- */

static int ieq(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z') y = (unsigned char)(y + 32);
        if (x != y) return 0;
        if (!x) return 1;
    }
}

long w2l__ddlop_index_of_name(const w2l_schema *s, const char *name)
{
    long i = w2l_schema_index_of_name(s, name);
    if (i >= 0) return i;
    size_t n = w2l_schema_field_count(s);
    for (size_t k = 0; k < n; k++)
        if (ieq(w2l_schema_field(s, k)->name, name)) return (long)k;
    return -1;
}

int w2l__ddlop_type_eq(w2l_type a, w2l_type b)
{
    return a.id == b.id &&
           (a.id != W2L_TYPE_DECIMAL || (a.precision == b.precision && a.scale == b.scale));
}

int w2l__ddlop_policy_of(const ddl_op *op, const char *ns, const char *table)
{
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    const char *v = NULL;
    w2l_conf_get_for_table(op->conf, name, "ddl.policy", &v, NULL);
    if (v && !strcmp(v, "ignore")) return POL_IGNORE;
    if (v && !strcmp(v, "quarantine")) return POL_QUARANTINE;
    return POL_FAIL;
}

unsigned w2l__ddlop_writers_of(const ddl_op *op, const char *ns, const char *table)
{
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    const char *v = NULL;
    w2l_conf_get_for_table(op->conf, name, "table-parallelism", &v, NULL);
    long n = v ? strtol(v, NULL, 10) : 1;
    if (n < 1) n = 1;
    if ((unsigned long)n > op->nwriters) n = (long)op->nwriters;
    return (unsigned)n;
}

/* A statement for messages: redacted when it may carry a secret, shortened. */
void w2l__ddlop_stmt_text(const char *sql, size_t len, char *buf, size_t size)
{
    char *r = w2l__ddl_redact(sql, len);
    snprintf(buf, size, "%.200s%s", r ? r : "(statement)", r && strlen(r) > 200 ? "..." : "");
    w2l__free(r);
}

/* ---------------------------------------------------------------------- tables ------- */

void w2l__ddlop_smaps_free(smap *m)
{
    while (m) {
        smap *next = m->next;
        w2l_schema_unref(m->src);
        w2l__free(m->ids);
        w2l__free(m->idx);
        w2l__free(m);
        m = next;
    }
}

void w2l__ddlop_item_free(item *it)
{
    if (!it) return;
    w2l_schema_unref(it->src);
    w2l__free(it->changes);
    w2l__arena_release(&it->arena);
    w2l__free(it->sql);
    w2l__free(it->db);
    w2l__free(it->ons);
    w2l__free(it->oname);
    w2l__free(it);
}

void w2l__ddlop_queue_clear(tbl *t)
{
    while (t->q) {
        item *next = t->q->next;
        w2l__ddlop_item_free(t->q);
        t->q = next;
    }
    t->qtail = NULL;
    t->fence_id = 0;
}

void w2l__ddlop_tbl_free(tbl *t)
{
    if (!t) return;
    w2l__ddlop_queue_clear(t);
    w2l__ddlop_smaps_free(t->maps);
    w2l__free(t->older_specs);
    w2l_schema_unref(t->schema);
    w2l_schema_unref(t->view);
    w2l__ice_table_free(t->ice);
    w2l__free(t->reason);
    w2l__free(t->shard);
    w2l__free(t->ns);
    w2l__free(t->name);
    w2l__free(t);
}

tbl *w2l__ddlop_tbl_find(ddl_op *op, const char *ns, const char *name)
{
    if (!op->tcap) return NULL;
    uint64_t h = w2l__table_hash(ns, name);
    for (size_t k = h & (op->tcap - 1); op->tidx[k]; k = (k + 1) & (op->tcap - 1)) {
        tbl *t = op->tidx[k];
        if (t->hash == h && !strcmp(t->name, name) && !strcmp(t->ns, ns)) return t;
    }
    return NULL;
}

/* Puts t into the index (grown to keep it at most half full). */
static w2l_rc tbl_index(ddl_op *op, tbl *t, w2l_error *err)
{
    if ((op->ntab + 1) * 2 > op->tcap) {
        size_t cap = op->tcap ? op->tcap * 2 : 64;
        tbl **v = w2l__calloc(cap, sizeof *v);
        W2L_NOMEM_IF(!v, err);
        for (size_t i = 0; i < op->tcap; i++) {
            if (!op->tidx[i]) continue;
            size_t k = op->tidx[i]->hash & (cap - 1);
            while (v[k]) k = (k + 1) & (cap - 1);
            v[k] = op->tidx[i];
        }
        w2l__free(op->tidx);
        op->tidx = v;
        op->tcap = cap;
    }
    size_t k = t->hash & (op->tcap - 1);
    while (op->tidx[k]) k = (k + 1) & (op->tcap - 1);
    op->tidx[k] = t;
    op->ntab++;
    return W2L_OK;
}

w2l_rc w2l__ddlop_tbl_get(ddl_op *op, const char *ns, const char *name, tbl **out, w2l_error *err)
{
    *out = w2l__ddlop_tbl_find(op, ns, name);
    if (*out) return W2L_OK;
    tbl *t = w2l__calloc(1, sizeof *t);
    W2L_NOMEM_IF(!t, err);
    t->ns = w2l__strdup(ns);
    t->name = w2l__strdup(name);
    t->ckpt_schema_id = -1;
    w2l_rc rc = t->ns && t->name ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        t->hash = w2l__table_hash(ns, name);
        rc = tbl_index(op, t, err);
    }
    if (rc != W2L_OK) {
        w2l__ddlop_tbl_free(t);
        return rc;
    }
    t->next = op->tables;
    op->tables = t;
    *out = t;
    return W2L_OK;
}

/* The Iceberg schema with that id in the table's metadata, or NULL. */
static w2l_schema *meta_schema(const tbl *t, int32_t id)
{
    const w2l__ice_schema_entry *e = t->ice ? w2l__ice_meta_schema(t->ice->meta, id) : NULL;
    return e ? e->schema : NULL;
}

/* Takes the table's current schema from its metadata (after a load or a commit). The
 * view follows unless a restart replay holds it back. */
w2l_rc w2l__ddlop_tbl_sync(tbl *t, int follow_view, w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(t->ice->meta);
    if (!cur)
        return w2l__fail(err, W2L_SCHEMA, "table %s.%s: the Iceberg schema has nested types", t->ns,
                         t->name);
    if (cur != t->schema) {
        w2l_schema_unref(t->schema);
        t->schema = w2l_schema_ref((w2l_schema *)cur);
        t->announced = 0;
    }
    if (follow_view || !t->view) {
        w2l_schema_unref(t->view);
        t->view = w2l_schema_ref((w2l_schema *)cur);
    }
    for (smap *m = t->maps; m; m = m->next) m->ice_id = -1;
    return W2L_OK;
}

/* After a restart: a table whose Iceberg schema moved past the one the checkpoint
 * recorded is in replay: its rows map through the older schema until the replayed
 * statements caught up. */
static void tbl_restore_view(tbl *t)
{
    if (t->ckpt_schema_id < 0 || !t->schema || w2l_schema_id(t->schema) == t->ckpt_schema_id)
        return;
    w2l_schema *old = meta_schema(t, t->ckpt_schema_id);
    if (!old) return;
    w2l_schema_unref(t->view);
    t->view = w2l_schema_ref(old);
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                   "ddl: table %s.%s: replaying from schema %d (the table has %d)", t->ns, t->name,
                   (int)t->ckpt_schema_id, (int)w2l_schema_id(t->schema));
}

w2l_rc w2l__ddlop_tbl_load(ddl_op *op, tbl *t, w2l_error *err)
{
    W2L_TRY(w2l__ddlop_tbl_read(op, t, err));
    if (t->claimed) return W2L_OK;
    /* before any row or statement of it goes on: nothing of it is written when refused */
    W2L_TRY(w2l__claims_check(w2l__owner_claims(op->owner), t->ns, t->name, t->ice->meta, err));
    t->claimed = 1;
    return W2L_OK;
}

w2l_rc w2l__ddlop_tbl_read(ddl_op *op, tbl *t, w2l_error *err)
{
    if (t->ice) return W2L_OK;
    if (t->gone) return w2l__fail(err, W2L_NOTFOUND, "table %s.%s was dropped", t->ns, t->name);
    w2l_rc rc = w2l__ice_table_load(op->cat, op->io, t->ns, t->name, &t->ice, err);
    if (rc != W2L_OK) return rc;
    W2L_TRY(w2l__ddlop_tbl_spec(op, t, err));
    rc = w2l__ddlop_tbl_extras(op, t, err);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t->ice);
        t->ice = NULL;
        return rc;
    }
    /* read once: later snapshots only add files of the default spec, and maintenance may
     * expire the snapshot this copy of the table names */
    w2l__free(t->older_specs);
    t->older_specs = NULL;
    rc = w2l__ice_older_data_specs(op->io, t->ice->meta, &t->older_specs, &t->nolder_specs, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s.%s: ", t->ns, t->name);
        return rc;
    }
    W2L_TRY(w2l__ddlop_tbl_sync(t, 1, err));
    tbl_restore_view(t);
    return W2L_OK;
}

static w2l_rc create_as(ddl_op *op, tbl *t, w2l_schema *schema, w2l_error *err);

/* Creates t (known not to be in the lake, or dropped in this run) in the handler's copy;
 * the owner creates it in the catalog with the checkpoint. */
w2l_rc w2l__ddlop_tbl_create(ddl_op *op, tbl *t, w2l_schema *schema, w2l_error *err)
{
    w2l_schema *x;
    W2L_TRY(w2l__ddlop_with_extras(op, t, schema, &x, err));
    w2l_rc rc = create_as(op, t, x, err);
    w2l_schema_unref(x);
    return rc;
}

static w2l_rc create_as(ddl_op *op, tbl *t, w2l_schema *schema, w2l_error *err)
{
    char *loc = w2l__ice_table_dir(op->warehouse, t->ns, t->name);
    W2L_NOMEM_IF(!loc, err);
    /* old metadata files go at commit, beyond maintenance.metadata-versions */
    int64_t keep = 5;
    w2l_conf_get_int(op->conf, "maintenance.metadata-versions", &keep, NULL);
    char kb[24];
    snprintf(kb, sizeof kb, "%lld", (long long)keep);
    /* the format version (table.format-version) is the table's for good */
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", t->ns, t->name);
    const char *fv = NULL;
    w2l_conf_get_for_table(op->conf, fq, "table.format-version", &fv, NULL);
    /* the job that created it owns it until a snapshot says otherwise (owner.h) */
    const char *job = w2l__claims_job(w2l__owner_claims(op->owner));
    w2l__ice_kv kv[4] = {{"write.metadata.delete-after-commit.enabled", "true"},
                         {"write.metadata.previous-versions-max", kb},
                         {"format-version", (char *)(fv && *fv ? fv : "2")},
                         {W2L_CLAIM_CREATOR_KEY, (char *)job}};
    w2l__ice_props props = {job && *job ? 4 : 3, kv};
    w2l__ice_spec spec;
    int set;
    w2l_rc rc = w2l__ddlop_spec_of(op, t->ns, t->name, schema, NULL, &spec, &set, err);
    if (rc == W2L_OK)
        rc = w2l__ice_table_new(op->cat, op->io, loc, t->ns, t->name, schema, &spec, &props,
                                &t->ice, err);
    w2l__ice_spec_release(&spec);
    w2l__free(loc);
    if (rc == W2L_OK) rc = w2l__tops_create(&op->ops, t->ice, err);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t->ice);
        t->ice = NULL;
        w2l__error_prefix(err, "creating table %s.%s: ", t->ns, t->name);
        return rc;
    }
    t->gone = 0;
    t->claimed = 1;
    w2l__free(t->older_specs);
    t->older_specs = NULL;
    t->nolder_specs = 0;
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name, "ddl: created table %s.%s (uuid %s)", t->ns,
                   t->name, t->ice->meta->uuid);
    return w2l__ddlop_tbl_sync(t, 1, err);
}

/* A fresh Iceberg schema from a source schema: ids 1..n, identifier from the source's key
 * (by position), key columns required. */
w2l_rc w2l__ddlop_schema_from_source(const w2l_schema *src, w2l_schema **out, w2l_error *err)
{
    *out = NULL;
    w2l_schema *s = w2l_schema_new(0);
    W2L_NOMEM_IF(!s, err);
    size_t n = w2l_schema_field_count(src), nid;
    const int32_t *sid = w2l_schema_identifier(src, &nid);
    int32_t *ids = nid ? w2l__malloc(nid * sizeof *ids) : NULL;
    w2l_rc rc = nid && !ids ? w2l__fail(err, W2L_NOMEM, "out of memory") : W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *f = w2l_schema_field(src, i);
        int key = 0;
        for (size_t k = 0; k < nid; k++)
            if (sid[k] == f->id) key = 1, ids[k] = (int32_t)i + 1;
        rc = w2l_schema_add_field(s, (int32_t)i + 1, f->name, f->type, f->required || key, err);
    }
    if (rc == W2L_OK) rc = w2l_schema_set_identifier(s, ids, nid, err);
    w2l__free(ids);
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

/* ------------------------------------------------------------- schema commits -------- */

/* Iceberg schema operations turning cur into target, matching fields by id (fields of
 * target with ids cur lacks are new): drops, renames, widenings, required->optional, adds,
 * moves (target's field order, the source's column order: ALTER ... FIRST / AFTER), then
 * the identifier. W2L_SCHEMA when target needs what Iceberg cannot do. Names point into
 * target and into a. */
w2l_rc w2l__ddlop_ops_by_id(const w2l_schema *cur, const w2l_schema *target, w2l__arena *a,
                        w2l__ice_schema_change **out, size_t *nout, w2l_error *err)
{
    size_t nc = w2l_schema_field_count(cur), nt = w2l_schema_field_count(target);
    w2l__ice_schema_change *v = w2l__arena_alloc(a, (nc + 4 * nt + 2) * sizeof *v);
    int32_t *order = w2l__arena_alloc(a, (nc + nt + 1) * sizeof *order);
    W2L_NOMEM_IF(!v || !order, err);
    size_t n = 0;
    for (size_t i = 0; i < nc; i++) {
        const w2l_field *f = w2l_schema_field(cur, i);
        if (w2l_schema_index_of_id(target, f->id) < 0)
            v[n++] = (w2l__ice_schema_change){W2L_ICE_DROP_COLUMN, f->name, NULL, f->type, 0};
    }
    for (size_t i = 0; i < nt; i++) {
        const w2l_field *f = w2l_schema_field(target, i);
        long k = w2l_schema_index_of_id(cur, f->id);
        if (k < 0) continue;
        const w2l_field *c = w2l_schema_field(cur, (size_t)k);
        if (strcmp(c->name, f->name))
            v[n++] = (w2l__ice_schema_change){W2L_ICE_RENAME_COLUMN, c->name, f->name, f->type, 0};
    }
    for (size_t i = 0; i < nt; i++) {
        const w2l_field *f = w2l_schema_field(target, i);
        long k = w2l_schema_index_of_id(cur, f->id);
        if (k < 0) continue;
        const w2l_field *c = w2l_schema_field(cur, (size_t)k);
        if (!w2l__ddlop_type_eq(c->type, f->type)) {
            if (!w2l_type_can_promote(c->type, f->type)) {
                char x[32], y[32];
                return w2l__fail(err, W2L_SCHEMA, "column '%s': cannot change type from %s to %s",
                                 f->name, w2l_type_format(c->type, x, sizeof x),
                                 w2l_type_format(f->type, y, sizeof y));
            }
            v[n++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, f->name, NULL, f->type, 0};
        }
        if (c->required && !f->required)
            v[n++] = (w2l__ice_schema_change){W2L_ICE_MAKE_OPTIONAL, f->name, NULL, f->type, 0};
        if (!c->required && f->required) {
            /* only a new primary key's column: the source keeps it NOT NULL, so no row the
             * lake holds has a NULL there (Iceberg's requireColumn) */
            size_t nk;
            const int32_t *kid = w2l_schema_identifier(target, &nk);
            int key = 0;
            for (size_t j = 0; j < nk; j++) key |= kid[j] == f->id;
            if (!key)
                return w2l__fail(err, W2L_SCHEMA,
                                 "column '%s': an optional column cannot become required",
                                 f->name);
            v[n++] = (w2l__ice_schema_change){W2L_ICE_MAKE_REQUIRED, f->name, NULL, f->type, 0};
        }
    }
    for (size_t i = 0; i < nt; i++) {
        const w2l_field *f = w2l_schema_field(target, i);
        if (w2l_schema_index_of_id(cur, f->id) < 0)
            v[n++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, f->name, NULL, f->type, 0};
    }
    /* the order the operations so far leave (kept fields, then the added ones), brought to
     * target's by moving each misplaced field right after its predecessor in target */
    size_t no = 0;
    for (size_t i = 0; i < nc; i++)
        if (w2l_schema_index_of_id(target, w2l_schema_field(cur, i)->id) >= 0)
            order[no++] = w2l_schema_field(cur, i)->id;
    for (size_t i = 0; i < nt; i++)
        if (w2l_schema_index_of_id(cur, w2l_schema_field(target, i)->id) < 0)
            order[no++] = w2l_schema_field(target, i)->id;
    for (size_t i = 0; i < nt && i < no; i++) {
        const w2l_field *f = w2l_schema_field(target, i);
        if (order[i] == f->id) continue;
        size_t j = i + 1;
        while (j < no && order[j] != f->id) j++;
        if (j == no) break; /* cannot happen: order holds target's ids */
        memmove(&order[i + 1], &order[i], (j - i) * sizeof *order);
        order[i] = f->id;
        v[n++] = (w2l__ice_schema_change){ W2L_ICE_MOVE_COLUMN, f->name,
                                           i ? w2l_schema_field(target, i - 1)->name : NULL,
                                           f->type, 0 };
    }
    size_t na, nb;
    const int32_t *ia = w2l_schema_identifier(cur, &na), *ib = w2l_schema_identifier(target, &nb);
    if (na != nb || (nb && memcmp(ia, ib, nb * sizeof *ib))) {
        w2l_buf names = {0};
        w2l_rc rc = W2L_OK;
        for (size_t k = 0; rc == W2L_OK && k < nb; k++)
            rc = w2l__buf_printf(
                &names, err, "%s%s", k ? "," : "",
                w2l_schema_field(target, (size_t)w2l_schema_index_of_id(target, ib[k]))->name);
        char *s = rc == W2L_OK
                      ? w2l__arena_strndup(a, names.data ? (const char *)names.data : "", names.len)
                      : NULL;
        w2l_buf_release(&names);
        W2L_TRY(rc);
        W2L_NOMEM_IF(!s, err);
        v[n++] = (w2l__ice_schema_change){W2L_ICE_SET_IDENTIFIER, s, NULL, {0, 0, 0}, 0};
    }
    *out = v;
    *nout = n;
    return W2L_OK;
}

/* Applies schema operations to the handler's copy of the table and records the new schema
 * for the owner, which commits it with the checkpoint. */
w2l_rc w2l__ddlop_commit_ops(ddl_op *op, tbl *t, const w2l__ice_schema_change *ops, size_t n,
                             w2l_error *err)
{
    if (!n) return W2L_OK;
    int32_t before = t->ice->meta->current_schema_id;
    w2l__ice_change c;
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = ops;
    c.nschema_changes = n;
    w2l_rc rc = w2l__ice_apply(t->ice, &c, err);
    w2l__ice_change_release(&c, op->io, rc != W2L_OK);
    if (rc == W2L_OK && t->ice->meta->current_schema_id != before)
        rc = w2l__tops_schema(&op->ops, t->ice, err);
    if (rc != W2L_OK) return rc;
    return w2l__ddlop_tbl_sync(t, 1, err);
}

/* SCHEMA to the table's writers and committer: the current Iceberg schema, the table's
 * location and schema id. */
w2l_rc w2l__ddlop_announce(tbl *t, w2l_collector *out, w2l_error *err)
{
    if (!t->ice || !t->schema) return W2L_OK;
    w2l__json *j = w2l__json_new_object();
    W2L_NOMEM_IF(!j, err);
    int bad =
        w2l__json_add(j, "location",
                      w2l__json_new_string(t->ice->meta->location ? t->ice->meta->location : "")) ||
        w2l__json_add(j, "schema-id", w2l__json_new_int64(w2l_schema_id(t->schema))) ||
        w2l__json_add(j, "table-uuid", w2l__json_new_string(t->ice->meta->uuid)) ||
        (t->route && w2l__json_add(j, "upsert", w2l__json_new_bool(1)));
    const w2l__ice_meta *m = t->ice->meta;
    const w2l__ice_spec *spec = w2l__ice_meta_spec(m, m->default_spec_id);
    if (!bad && spec && spec->nfields) {
        w2l__json *sj = w2l__ice_spec_to_json(spec);
        bad = !sj || w2l__json_add(j, "spec", sj);
    }
    /* older specs that still hold data: an equality delete goes into each of them too,
     * since it applies only within its own spec and partition (Iceberg "Scan Planning") */
    if (!bad && t->nolder_specs) {
        w2l__json *a = w2l__json_new_array();
        bad = !a || w2l__json_add(j, "delete-specs", a);
        for (size_t i = 0; !bad && i < t->nolder_specs; i++) {
            const w2l__ice_spec *os = w2l__ice_meta_spec(m, t->older_specs[i]);
            bad = os && w2l__json_append(a, w2l__ice_spec_to_json(os));
        }
    }
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    W2L_NOMEM_IF(!text, err);
    w2l_element e = {0};
    e.kind = W2L_ELEM_SCHEMA;
    e.ns = t->ns;
    e.table = t->name;
    e.schema = t->schema;
    e.payload = text;
    e.payload_len = strlen(text);
    w2l_rc rc = w2l_collect(out, &e, err);
    w2l__free(text);
    if (rc == W2L_OK) t->announced = 1;
    return rc;
}
