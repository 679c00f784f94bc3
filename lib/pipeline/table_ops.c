/*
 * Table operations (table_ops.h): recorded by the DDL handler, applied by the owner. The
 * DDL handler tells of each at info when it records it ("ddl: created table ..."); the
 * owner's applying it is a debug line, so a change is logged once.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../json/json.h"
#include "owner.h"
#include "table_ops.h"

#define MARKER_KEY "w2l.ddl-op"

/* ------------------------------------------------------------------ recording ----- */

/* Appends obj (consumed) to ops, comma-separated. */
static w2l_rc put(w2l_buf *ops, w2l__json *obj, int bad, w2l_error *err)
{
    char *text = !bad && obj ? w2l__json_print(obj, 0) : NULL;
    w2l__json_free(obj);
    W2L_NOMEM_IF(!text, err);
    w2l_rc rc = ops->len ? w2l_buf_append(ops, ",", 1, err) : W2L_OK;
    if (rc == W2L_OK) rc = w2l_buf_append(ops, text, strlen(text), err);
    w2l__free(text);
    return rc;
}

static w2l__json *head(const char *op, const char *ns, const char *table, int *bad)
{
    w2l__json *o = w2l__json_new_object();
    *bad = !o || w2l__json_add(o, "op", w2l__json_new_string(op)) ||
           w2l__json_add(o, "ns", w2l__json_new_string(ns)) ||
           w2l__json_add(o, "table", w2l__json_new_string(table));
    return o;
}

w2l_rc w2l__tops_create(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err)
{
    char *meta = NULL;
    size_t len = 0;
    W2L_TRY(w2l__ice_meta_print(t->meta, &meta, &len, err));
    int bad;
    w2l__json *o = head("create", t->ns, t->name, &bad);
    bad = bad || w2l__json_add(o, "metadata", w2l__json_new_stringn(meta, len));
    w2l__free(meta);
    return put(ops, o, bad, err);
}

w2l_rc w2l__tops_schema(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err)
{
    const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
    if (!s) return w2l__fail(err, W2L_SCHEMA, "table %s.%s: no current schema", t->ns, t->name);
    char *text = NULL;
    W2L_TRY(w2l_schema_to_json(s, &text, err));
    int bad;
    w2l__json *o = head("schema", t->ns, t->name, &bad);
    bad = bad || w2l__json_add(o, "uuid", w2l__json_new_string(t->meta->uuid)) ||
          w2l__json_add(o, "schema-id", w2l__json_new_int64(w2l_schema_id(s))) ||
          w2l__json_add(o, "schema", w2l__json_new_string(text));
    w2l__free(text);
    return put(ops, o, bad, err);
}

w2l_rc w2l__tops_spec(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err)
{
    const w2l__ice_spec *spec = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    if (!spec) return w2l__fail(err, W2L_CORRUPT, "table %s.%s: no default spec", t->ns, t->name);
    w2l__json *sj = w2l__ice_spec_to_json(spec);
    char *text = sj ? w2l__json_print(sj, 0) : NULL;
    w2l__json_free(sj);
    W2L_NOMEM_IF(!text, err);
    int bad;
    w2l__json *o = head("spec", t->ns, t->name, &bad);
    bad = bad || w2l__json_add(o, "uuid", w2l__json_new_string(t->meta->uuid)) ||
          w2l__json_add(o, "spec-id", w2l__json_new_int64(spec->spec_id)) ||
          w2l__json_add(o, "spec", w2l__json_new_string(text));
    w2l__free(text);
    return put(ops, o, bad, err);
}

w2l_rc w2l__tops_rename(w2l_buf *ops, const w2l__ice_table *t, const char *to_ns,
                        const char *to_table, w2l_error *err)
{
    int bad;
    w2l__json *o = head("rename", t->ns, t->name, &bad);
    bad = bad || w2l__json_add(o, "to-ns", w2l__json_new_string(to_ns)) ||
          w2l__json_add(o, "to-table", w2l__json_new_string(to_table)) ||
          w2l__json_add(o, "uuid", w2l__json_new_string(t->meta->uuid));
    return put(ops, o, bad, err);
}

w2l_rc w2l__tops_drop(w2l_buf *ops, const char *ns, const char *table, const char *uuid,
                      w2l_error *err)
{
    int bad;
    w2l__json *o = head("drop", ns, table, &bad);
    bad = bad || w2l__json_add(o, "uuid", w2l__json_new_string(uuid));
    return put(ops, o, bad, err);
}

/* ------------------------------------------------------------------- applying ----- */

/* Loads ns.table; *t NULL when it does not exist. */
static w2l_rc load(w2l__tops_ctx *c, const char *ns, const char *table, w2l__ice_table **t,
                   w2l_error *err)
{
    w2l_rc rc = w2l__ice_table_load(c->cat, c->io, ns, table, t, err);
    if (rc == W2L_NOTFOUND) {
        *t = NULL;
        return W2L_OK;
    }
    return rc;
}

static w2l_rc apply_create(w2l__tops_ctx *c, const char *ns, const char *table, const w2l__json *o,
                           w2l_error *err)
{
    const char *meta = w2l__json_str(w2l__json_get(o, "metadata"));
    if (!meta) return w2l__fail(err, W2L_CORRUPT, "create without metadata");
    w2l__ice_meta *m;
    W2L_TRY(w2l__ice_meta_parse(meta, strlen(meta), &m, err));
    w2l__ice_table *t;
    w2l_rc rc = load(c, ns, table, &t, err);
    if (rc == W2L_OK && t) {
        const char *other = c->shared ? NULL : w2l__claims_owner(t->meta);
        if (strcmp(t->meta->uuid, m->uuid) != 0 && other &&
            !w2l__claims_same_job(other, c->job_id)) /* owner.h */
            rc = w2l__fail(err, W2L_BUSY,
                           "the lake holds job \"%.100s\"'s table under this name (uuid %s), made "
                           "while this job \"%.100s\" created its own: one job writes a table; "
                           "leave it to that job (exclude it here)",
                           other, t->meta->uuid, c->job_id);
        else if (strcmp(t->meta->uuid, m->uuid) != 0)
            rc = w2l__fail(err, c->shared ? W2L_CONFLICT : W2L_EXISTS,
                           "the lake holds another table under this name (uuid %s) than the one "
                           "this job created (uuid %s)%s",
                           t->meta->uuid, m->uuid,
                           c->shared ? ": another member created it first" : "");
        else
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: %s.%s exists already (uuid %s)", ns,
                           table, m->uuid);
    } else if (rc == W2L_OK) {
        w2l_buf loc = {0};
        rc = w2l__catalog_commit(c->cat, ns, table, NULL, meta, strlen(meta), &loc, err);
        w2l_buf_release(&loc);
        if (c->shared && rc == W2L_EXISTS) rc = W2L_CONFLICT; /* another member, just now */
        if (rc == W2L_OK)
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: created table %s.%s", ns, table);
    }
    w2l__ice_table_free(t);
    w2l__ice_meta_free(m);
    return rc;
}

/* -1, 0, 1 as marker text a (this job's, or not) orders before, as, or after (ck, h, i). */
static int marker_cmp(const char *a, const char *job, uint64_t ck, unsigned h, unsigned i)
{
    size_t jl = strlen(job);
    if (!a || strncmp(a, job, jl) != 0 || a[jl] != '/') return -1;
    unsigned long long ack = 0;
    unsigned ah = 0, ai = 0;
    if (sscanf(a + jl + 1, "%llu/%u/%u", &ack, &ah, &ai) != 3) return -1;
    if (ack != ck) return ack < ck ? -1 : 1;
    if (ah != h) return ah < h ? -1 : 1;
    return ai < i ? -1 : ai > i;
}

/* A change of the metadata of the table incarnation uuid (a schema, a spec), marked as the
 * index-th operation of handler h for checkpoint ck: fn changes t->meta and checks the
 * outcome; then one commit, retried on a conflict. what names it in messages. */
typedef w2l_rc (*meta_fn)(void *ctx, w2l__ice_meta *m, w2l_error *err);

static w2l_rc apply_meta(w2l__tops_ctx *c, const char *ns, const char *table, const char *uuid,
                         const char *what, uint64_t ck, unsigned h, unsigned idx, meta_fn fn,
                         void *ctx, w2l_error *err)
{
    char marker[200];
    snprintf(marker, sizeof marker, "%s/%llu/%u/%u", c->job_id, (unsigned long long)ck, h, idx);
    w2l__ice_table *t;
    w2l_rc rc = load(c, ns, table, &t, err);
    for (int attempt = 0; rc == W2L_OK; attempt++) {
        if (t && c->shared && strcmp(t->meta->uuid, uuid) != 0) {
            rc = w2l__fail(err, W2L_CONFLICT,
                           "%s is for table uuid %s; the lake holds %s (another member "
                           "created it)", what, uuid, t->meta->uuid);
            break;
        }
        if (!t || strcmp(t->meta->uuid, uuid) != 0) {
            w2l__log_table(W2L_LOG_INFO, ns, table,
                           "owner: %s.%s: %s is for a table no longer under this name (uuid %s); "
                           "skipped",
                           ns, table, what, uuid);
            break;
        }
        if (marker_cmp(w2l__ice_props_get(&t->meta->props, MARKER_KEY), c->job_id, ck, h, idx) >=
            0) {
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: %s.%s: %s applied already", ns, table,
                           what);
            break;
        }
        rc = fn(ctx, t->meta, err);
        if (rc == W2L_OK) rc = w2l__ice_props_set(&t->meta->props, MARKER_KEY, marker, err);
        if (rc != W2L_OK) break;
        w2l__ice_change ch;
        w2l__ice_change_init(&ch, W2L_ICE_OP_SCHEMA);
        rc = w2l__ice_table_try_commit(t, &ch, err);
        w2l__ice_change_release(&ch, c->io, rc != W2L_OK);
        if (rc == W2L_OK) {
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: %s.%s: %s", ns, table, what);
            break;
        }
        if (rc != W2L_CONFLICT || attempt >= c->retries) break;
        /* another process moved the table (t holds its metadata now): check again */
        w2l__log_table(W2L_LOG_INFO, ns, table,
                       "owner: %s.%s: another process committed first (attempt %d); retrying", ns,
                       table, attempt + 1);
        rc = W2L_OK;
    }
    w2l__ice_table_free(t);
    return rc;
}

typedef struct set_ctx {
    w2l__tops_ctx *c;
    const void *what; /* the schema or spec */
    int64_t id;       /* the id the DDL handler computed for it */
} set_ctx;

static w2l_rc set_schema(void *ctx, w2l__ice_meta *m, w2l_error *err)
{
    set_ctx *x = ctx;
    W2L_TRY(w2l__ice_meta_set_schema(m, (w2l_schema *)x->what, err));
    if (m->current_schema_id != (int32_t)x->id)
        return w2l__fail(err, x->c->shared ? W2L_CONFLICT : W2L_SCHEMA,
                         "the table's schema became id %d, the DDL handler computed %d (was "
                         "the table changed by another writer?)",
                         (int)m->current_schema_id, (int)x->id);
    return W2L_OK;
}

static w2l_rc set_spec(void *ctx, w2l__ice_meta *m, w2l_error *err)
{
    set_ctx *x = ctx;
    int changed;
    W2L_TRY(w2l__ice_meta_set_spec(m, x->what, &changed, err));
    if (m->default_spec_id != (int32_t)x->id)
        return w2l__fail(err, x->c->shared ? W2L_CONFLICT : W2L_SCHEMA,
                         "the table's partition spec became id %d, the DDL handler computed %d "
                         "(was the table changed by another writer?)",
                         (int)m->default_spec_id, (int)x->id);
    return W2L_OK;
}

static w2l_rc apply_schema(w2l__tops_ctx *c, const char *ns, const char *table, const w2l__json *o,
                           uint64_t ck, unsigned h, unsigned idx, w2l_error *err)
{
    const char *uuid = w2l__json_str(w2l__json_get(o, "uuid"));
    const char *text = w2l__json_str(w2l__json_get(o, "schema"));
    int64_t sid;
    if (!uuid || !text || w2l__json_int64(w2l__json_get(o, "schema-id"), &sid))
        return w2l__fail(err, W2L_CORRUPT, "schema change without uuid, schema or schema-id");
    w2l_schema *s;
    W2L_TRY(w2l_schema_from_json(text, strlen(text), &s, err));
    char what[48];
    snprintf(what, sizeof what, "schema %d", (int)sid);
    set_ctx x = {c, s, sid};
    w2l_rc rc = apply_meta(c, ns, table, uuid, what, ck, h, idx, set_schema, &x, err);
    w2l_schema_unref(s);
    return rc;
}

static w2l_rc apply_spec(w2l__tops_ctx *c, const char *ns, const char *table, const w2l__json *o,
                         uint64_t ck, unsigned h, unsigned idx, w2l_error *err)
{
    const char *uuid = w2l__json_str(w2l__json_get(o, "uuid"));
    const char *text = w2l__json_str(w2l__json_get(o, "spec"));
    int64_t sid;
    if (!uuid || !text || w2l__json_int64(w2l__json_get(o, "spec-id"), &sid))
        return w2l__fail(err, W2L_CORRUPT, "spec change without uuid, spec or spec-id");
    w2l__json *j;
    W2L_TRY(w2l__json_parse(text, strlen(text), &j, err));
    w2l__ice_spec spec;
    w2l_rc rc = w2l__ice_spec_from_json(j, &spec, err);
    w2l__json_free(j);
    W2L_TRY(rc);
    char what[48];
    snprintf(what, sizeof what, "partition spec %d", (int)sid);
    set_ctx x = {c, &spec, sid};
    rc = apply_meta(c, ns, table, uuid, what, ck, h, idx, set_spec, &x, err);
    w2l__ice_spec_release(&spec);
    return rc;
}

static w2l_rc apply_rename(w2l__tops_ctx *c, const char *ns, const char *table, const w2l__json *o,
                           w2l_error *err)
{
    const char *uuid = w2l__json_str(w2l__json_get(o, "uuid"));
    const char *to_ns = w2l__json_str(w2l__json_get(o, "to-ns")),
               *to = w2l__json_str(w2l__json_get(o, "to-table"));
    if (!uuid || !to_ns || !to) return w2l__fail(err, W2L_CORRUPT, "rename without uuid or target");
    w2l__ice_table *t = NULL, *dst = NULL;
    w2l_rc rc = load(c, ns, table, &t, err);
    if (rc == W2L_OK && (!t || strcmp(t->meta->uuid, uuid) != 0)) {
        /* renamed already (or dropped since) */
        w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: rename %s.%s to %s.%s: done already", ns,
                       table, to_ns, to);
    } else if (rc == W2L_OK) {
        rc = load(c, to_ns, to, &dst, err);
        if (rc == W2L_OK && dst && strcmp(dst->meta->uuid, uuid) == 0) {
            /* a rename cut short after the new name got the table: the old name goes */
            rc = w2l__catalog_drop(c->cat, ns, table, 0, err);
        } else if (rc == W2L_OK && dst) {
            rc = w2l__fail(err, W2L_EXISTS,
                           "rename to %s.%s: the lake holds another table under that name (uuid "
                           "%s)",
                           to_ns, to, dst->meta->uuid);
        } else if (rc == W2L_OK) {
            rc = w2l__catalog_rename(c->cat, ns, table, to_ns, to, err);
        }
        if (rc == W2L_OK)
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: renamed %s.%s to %s.%s", ns, table,
                           to_ns, to);
    }
    w2l__ice_table_free(t);
    w2l__ice_table_free(dst);
    return rc;
}

static w2l_rc apply_drop(w2l__tops_ctx *c, const char *ns, const char *table, const w2l__json *o,
                         w2l_error *err)
{
    const char *uuid = w2l__json_str(w2l__json_get(o, "uuid"));
    if (!uuid) return w2l__fail(err, W2L_CORRUPT, "drop without uuid");
    w2l__ice_table *t;
    w2l_rc rc = load(c, ns, table, &t, err);
    if (rc == W2L_OK && t && strcmp(t->meta->uuid, uuid) == 0) {
        rc = w2l__catalog_drop(c->cat, ns, table, 0, err);
        if (rc == W2L_NOTFOUND) rc = W2L_OK;
        if (rc == W2L_OK)
            w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: dropped %s.%s", ns, table);
    } else if (rc == W2L_OK) {
        w2l__log_table(W2L_LOG_DEBUG, ns, table, "owner: %s.%s (uuid %s) dropped already", ns,
                       table, uuid);
    }
    w2l__ice_table_free(t);
    return rc;
}

w2l_rc w2l__tops_apply(w2l__tops_ctx *c, uint64_t ckpt, unsigned handler, unsigned index,
                       const w2l__json *o, w2l_error *err)
{
    const char *op = w2l__json_str(w2l__json_get(o, "op"));
    const char *ns = w2l__json_str(w2l__json_get(o, "ns")),
               *table = w2l__json_str(w2l__json_get(o, "table"));
    w2l_rc rc;
    if (!op || !ns || !table)
        rc = w2l__fail(err, W2L_CORRUPT, "an operation without op, ns or table");
    else if (!strcmp(op, "create")) rc = apply_create(c, ns, table, o, err);
    else if (!strcmp(op, "schema")) rc = apply_schema(c, ns, table, o, ckpt, handler, index, err);
    else if (!strcmp(op, "spec")) rc = apply_spec(c, ns, table, o, ckpt, handler, index, err);
    else if (!strcmp(op, "rename")) rc = apply_rename(c, ns, table, o, err);
    else if (!strcmp(op, "drop")) rc = apply_drop(c, ns, table, o, err);
    else rc = w2l__fail(err, W2L_CORRUPT, "unknown operation '%s'", op);
    if (rc != W2L_OK)
        w2l__error_prefix(err, "table %s.%s, %s of checkpoint %llu: ", ns ? ns : "?",
                          table ? table : "?", op ? op : "operation", (unsigned long long)ckpt);
    return rc;
}
