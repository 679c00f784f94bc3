/*
 * The built-in DDL handler operator ("default", W2L_OPERATOR_DDL; DESIGN.md section 3).
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

#include "../common/arena.h"
#include "../common/common.h"
#include "../ddl/ddl.h"
#include "../iceberg/iceberg.h"
#include "../json/json.h"
#include "emit.h"
#include "metrics.h"
#include "op_ddl.h"
#include "ops.h"
#include "owner.h"
#include "table_ops.h"

enum { POL_FAIL = 0, POL_IGNORE = 1, POL_QUARANTINE = 2 };
enum { IT_CHANGES = 1, IT_DDL, IT_EVOLVE, IT_WAIT };

/* One source schema version mapped onto a table: per source column, the Iceberg field id
 * (0: none). idx/conv are resolved against the current Iceberg schema (ice_id). */
typedef struct smap {
    w2l_schema *src;         /* a reference: the pointer is the version's identity */
    int32_t *ids;
    long *idx;               /* per source column: index in the current schema, -1 none */
    int32_t ice_id;          /* schema id idx was resolved for; -1 not resolved */
    const w2l_schema *ice;   /* the schema idx was resolved for */
    int identity;            /* zero copy possible */
    int evolve;              /* the source brings columns or types the table lacks */
    int settled;             /* an evolution of it was refused under policy ignore */
    struct smap *next;
} smap;

/* A buffered element of a table waiting behind a fence. */
typedef struct item {
    int kind;
    int fenced;              /* its fence was sent, or it needs none */
    /* IT_CHANGES: a deep copy */
    w2l_change *changes;
    size_t n;
    w2l_schema *src;         /* IT_CHANGES, IT_EVOLVE: the source schema (a reference) */
    w2l__arena arena;
    /* IT_DDL: the statement, re-parsed when applied */
    char *sql, *db;
    size_t sql_len, stmt;    /* statement index in the text */
    size_t sub;              /* which table of the statement (DROP/RENAME lists) */
    uint64_t key;            /* dedupe key */
    /* a RENAME queued in the old name's queue, and its IT_WAIT in the new name's: the
     * rename applies once both are at the heads of their queues, so it comes after what
     * either table had queued before it and before what came after it */
    uint64_t link;           /* 0: none */
    char *ons, *oname;       /* the other table: the new name (rename), the old (wait) */
    int waiting;             /* IT_WAIT: its table's drain is waiting for the rename */
    struct item *next;
} item;

typedef struct tbl {
    char *ns, *name;
    w2l__ice_table *ice;     /* NULL until resolved, or after a drop; the handler's own copy,
                                ahead of the catalog by the operations not yet applied */
    int gone;                /* dropped or renamed away in this run: the catalog may still
                                show it until the operation is applied; never read it */
    w2l_schema *schema;      /* the current Iceberg schema (a reference) */
    w2l_schema *view;        /* the Iceberg schema as of the stream position: the current
                                one, or an older one while a restart replays statements
                                the table already has (a reference) */
    int announced;           /* SCHEMA sent for schema */
    int dirty;               /* DML forwarded since the last barrier or fence */
    int quarantined;
    char *reason;            /* why it is quarantined (kept in the state); NULL */
    uint64_t rows_quarantined; /* its changes dropped since the quarantine (kept in the state) */
    uint64_t last_key;       /* the statement last seen for it with no change since; 0 */
    int32_t ckpt_schema_id;  /* the schema id the restored checkpoint recorded; -1 none */
    smap *maps;
    item *q, *qtail;
    /* fence */
    uint64_t fence_id;       /* 0: none pending */
    unsigned fence_need, fence_got;
    int64_t fence_deadline;
    struct tbl *next;
} tbl;

/* A shadow table of gh-ost or pt-osc, followed in memory (never synced). */
typedef struct shadow {
    char *ns, *name, *base;
    w2l_schema *schema;      /* NULL when unknown (created before a restart, say) */
    struct shadow *next;
} shadow;

typedef struct ddl_op {
    w2l_operator base;
    unsigned index, n;
    const w2l_conf *conf;
    w2l_state *st;
    uint64_t restored;
    w2l_fileio *io;
    w2l_catalog *cat;
    char *warehouse;
    int64_t fence_timeout_ms;
    unsigned nwriters;
    w2l__evolve_opts eo;
    tbl *tables;
    shadow *shadows;
    uint64_t fence_seq;
    uint64_t link_seq;       /* links of queued renames */
    unsigned nfences;        /* tables with a fence pending */
    w2l__arena scratch;      /* converted rows of one process() call */
    w2l__owner *owner;       /* applies the table operations (owner.h) */
    w2l_buf ops;             /* this checkpoint's table operations, comma-separated */
} ddl_op;

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

static long index_of_name(const w2l_schema *s, const char *name)
{
    long i = w2l_schema_index_of_name(s, name);
    if (i >= 0) return i;
    size_t n = w2l_schema_field_count(s);
    for (size_t k = 0; k < n; k++)
        if (ieq(w2l_schema_field(s, k)->name, name)) return (long)k;
    return -1;
}

static int type_eq(w2l_type a, w2l_type b)
{
    return a.id == b.id && (a.id != W2L_TYPE_DECIMAL || (a.precision == b.precision && a.scale == b.scale));
}

static int policy_of(const ddl_op *op, const char *ns, const char *table)
{
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    const char *v = NULL;
    w2l_conf_get_for_table(op->conf, name, "ddl.policy", &v, NULL);
    if (v && !strcmp(v, "ignore")) return POL_IGNORE;
    if (v && !strcmp(v, "quarantine")) return POL_QUARANTINE;
    return POL_FAIL;
}

static unsigned writers_of(const ddl_op *op, const char *ns, const char *table)
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
static void stmt_text(const char *sql, size_t len, char *buf, size_t size)
{
    char *r = w2l__ddl_redact(sql, len);
    snprintf(buf, size, "%.200s%s", r ? r : "(statement)", r && strlen(r) > 200 ? "..." : "");
    w2l__free(r);
}

/* ---------------------------------------------------------------------- tables ------- */

static void smaps_free(smap *m)
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

static void item_free(item *it)
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

static void queue_clear(tbl *t)
{
    while (t->q) {
        item *next = t->q->next;
        item_free(t->q);
        t->q = next;
    }
    t->qtail = NULL;
    t->fence_id = 0;
}

static void tbl_free(tbl *t)
{
    if (!t) return;
    queue_clear(t);
    smaps_free(t->maps);
    w2l_schema_unref(t->schema);
    w2l_schema_unref(t->view);
    w2l__ice_table_free(t->ice);
    w2l__free(t->reason);
    w2l__free(t->ns);
    w2l__free(t->name);
    w2l__free(t);
}

static tbl *tbl_find(ddl_op *op, const char *ns, const char *name)
{
    for (tbl *t = op->tables; t; t = t->next)
        if (!strcmp(t->name, name) && !strcmp(t->ns, ns)) return t;
    return NULL;
}

static w2l_rc tbl_get(ddl_op *op, const char *ns, const char *name, tbl **out, w2l_error *err)
{
    *out = tbl_find(op, ns, name);
    if (*out) return W2L_OK;
    tbl *t = w2l__calloc(1, sizeof *t);
    W2L_NOMEM_IF(!t, err);
    t->ns = w2l__strdup(ns);
    t->name = w2l__strdup(name);
    t->ckpt_schema_id = -1;
    if (!t->ns || !t->name) {
        tbl_free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
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
static w2l_rc tbl_sync(tbl *t, int follow_view, w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(t->ice->meta);
    if (!cur)
        return w2l__fail(err, W2L_SCHEMA, "table %s.%s: the Iceberg schema has nested types", t->ns, t->name);
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
    if (t->ckpt_schema_id < 0 || !t->schema || w2l_schema_id(t->schema) == t->ckpt_schema_id) return;
    w2l_schema *old = meta_schema(t, t->ckpt_schema_id);
    if (!old) return;
    w2l_schema_unref(t->view);
    t->view = w2l_schema_ref(old);
    w2l__log(W2L_LOG_INFO, "ddl: table %s.%s: replaying from schema %d (the table has %d)", t->ns, t->name,
             (int)t->ckpt_schema_id, (int)w2l_schema_id(t->schema));
}

static w2l_rc tbl_load(ddl_op *op, tbl *t, w2l_error *err)
{
    if (t->ice) return W2L_OK;
    if (t->gone) return w2l__fail(err, W2L_NOTFOUND, "table %s.%s was dropped", t->ns, t->name);
    w2l_rc rc = w2l__ice_table_load(op->cat, op->io, t->ns, t->name, &t->ice, err);
    if (rc != W2L_OK) return rc;
    W2L_TRY(tbl_sync(t, 1, err));
    tbl_restore_view(t);
    return W2L_OK;
}

/* Creates t (known not to be in the lake, or dropped in this run) in the handler's copy;
 * the owner creates it in the catalog with the checkpoint. */
static w2l_rc tbl_create(ddl_op *op, tbl *t, w2l_schema *schema, w2l_error *err)
{
    char *loc = w2l__ice_table_dir(op->warehouse, t->ns, t->name);
    W2L_NOMEM_IF(!loc, err);
    /* old metadata files go at commit, beyond maintenance.metadata-versions */
    int64_t keep = 5;
    w2l_conf_get_int(op->conf, "maintenance.metadata-versions", &keep, NULL);
    char kb[24];
    snprintf(kb, sizeof kb, "%lld", (long long)keep);
    w2l__ice_kv kv[2] = {{"write.metadata.delete-after-commit.enabled", "true"},
                         {"write.metadata.previous-versions-max", kb}};
    w2l__ice_props props = {2, kv};
    w2l_rc rc = w2l__ice_table_new(op->cat, op->io, loc, t->ns, t->name, schema, NULL, &props, &t->ice, err);
    w2l__free(loc);
    if (rc == W2L_OK) rc = w2l__tops_create(&op->ops, t->ice, err);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t->ice);
        t->ice = NULL;
        w2l__error_prefix(err, "creating table %s.%s: ", t->ns, t->name);
        return rc;
    }
    t->gone = 0;
    w2l__log(W2L_LOG_INFO, "ddl: created table %s.%s (uuid %s)", t->ns, t->name, t->ice->meta->uuid);
    return tbl_sync(t, 1, err);
}

/* A fresh Iceberg schema from a source schema: ids 1..n, identifier from the source's key
 * (by position), key columns required. */
static w2l_rc schema_from_source(const w2l_schema *src, w2l_schema **out, w2l_error *err)
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
static w2l_rc ops_by_id(const w2l_schema *cur, const w2l_schema *target, w2l__arena *a,
                        w2l__ice_schema_change **out, size_t *nout, w2l_error *err)
{
    size_t nc = w2l_schema_field_count(cur), nt = w2l_schema_field_count(target);
    w2l__ice_schema_change *v = w2l__arena_alloc(a, (nc + 3 * nt + 2) * sizeof *v);
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
        if (!type_eq(c->type, f->type)) {
            if (!w2l_type_can_promote(c->type, f->type)) {
                char x[32], y[32];
                return w2l__fail(err, W2L_SCHEMA, "column '%s': cannot change type from %s to %s", f->name,
                                 w2l_type_format(c->type, x, sizeof x), w2l_type_format(f->type, y, sizeof y));
            }
            v[n++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, f->name, NULL, f->type, 0};
        }
        if (c->required && !f->required)
            v[n++] = (w2l__ice_schema_change){W2L_ICE_MAKE_OPTIONAL, f->name, NULL, f->type, 0};
        if (!c->required && f->required)
            return w2l__fail(err, W2L_SCHEMA, "column '%s': an optional column cannot become required", f->name);
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
        if (w2l_schema_index_of_id(target, w2l_schema_field(cur, i)->id) >= 0) order[no++] = w2l_schema_field(cur, i)->id;
    for (size_t i = 0; i < nt; i++)
        if (w2l_schema_index_of_id(cur, w2l_schema_field(target, i)->id) < 0) order[no++] = w2l_schema_field(target, i)->id;
    for (size_t i = 0; i < nt && i < no; i++) {
        const w2l_field *f = w2l_schema_field(target, i);
        if (order[i] == f->id) continue;
        size_t j = i + 1;
        while (j < no && order[j] != f->id) j++;
        if (j == no) break; /* cannot happen: order holds target's ids */
        memmove(&order[i + 1], &order[i], (j - i) * sizeof *order);
        order[i] = f->id;
        v[n++] = (w2l__ice_schema_change){W2L_ICE_MOVE_COLUMN, f->name, i ? w2l_schema_field(target, i - 1)->name : NULL,
                                          f->type, 0};
    }
    size_t na, nb;
    const int32_t *ia = w2l_schema_identifier(cur, &na), *ib = w2l_schema_identifier(target, &nb);
    if (na != nb || (nb && memcmp(ia, ib, nb * sizeof *ib))) {
        w2l_buf names = {0};
        w2l_rc rc = W2L_OK;
        for (size_t k = 0; rc == W2L_OK && k < nb; k++)
            rc = w2l__buf_printf(&names, err, "%s%s", k ? "," : "",
                                 w2l_schema_field(target, (size_t)w2l_schema_index_of_id(target, ib[k]))->name);
        char *s = rc == W2L_OK ? w2l__arena_strndup(a, names.data ? (const char *)names.data : "", names.len) : NULL;
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
static w2l_rc commit_ops(ddl_op *op, tbl *t, const w2l__ice_schema_change *ops, size_t n, w2l_error *err)
{
    if (!n) return W2L_OK;
    int32_t before = t->ice->meta->current_schema_id;
    w2l__ice_change c;
    w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
    c.schema_changes = ops;
    c.nschema_changes = n;
    w2l_rc rc = w2l__ice_apply(t->ice, &c, err);
    w2l__ice_change_release(&c, op->io, rc != W2L_OK);
    if (rc == W2L_OK && t->ice->meta->current_schema_id != before) rc = w2l__tops_schema(&op->ops, t->ice, err);
    if (rc != W2L_OK) return rc;
    return tbl_sync(t, 1, err);
}

/* SCHEMA to the table's writers and committer: the current Iceberg schema, the table's
 * location and schema id. */
static w2l_rc announce(tbl *t, w2l_collector *out, w2l_error *err)
{
    if (!t->ice || !t->schema) return W2L_OK;
    w2l__json *j = w2l__json_new_object();
    W2L_NOMEM_IF(!j, err);
    int bad = w2l__json_add(j, "location", w2l__json_new_string(t->ice->meta->location ? t->ice->meta->location : "")) ||
              w2l__json_add(j, "schema-id", w2l__json_new_int64(w2l_schema_id(t->schema))) ||
              w2l__json_add(j, "table-uuid", w2l__json_new_string(t->ice->meta->uuid));
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
        smaps_free(*pp);
        *pp = NULL;
    }
    size_t n = w2l_schema_field_count(src);
    smap *m = w2l__calloc(1, sizeof *m);
    W2L_NOMEM_IF(!m, err);
    m->ids = w2l__calloc(n + 1, sizeof *m->ids);
    m->idx = w2l__calloc(n + 1, sizeof *m->idx);
    if (!m->ids || !m->idx) {
        smaps_free(m);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    m->src = w2l_schema_ref((w2l_schema *)src);
    m->ice_id = -1;
    const w2l_schema *view = t->view ? t->view : t->schema;
    for (size_t i = 0; i < n; i++) {
        long k = index_of_name(view, w2l_schema_field(src, i)->name);
        m->ids[i] = k >= 0 ? w2l_schema_field(view, (size_t)k)->id : 0;
    }
    m->next = t->maps;
    t->maps = m;
    *out = m;
    return W2L_OK;
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
        long c = s >= 0 ? index_of_name(t->schema, w2l_schema_field(m->src, (size_t)s)->name) : -1;
        if (c < 0 || !w2l_schema_field(t->schema, (size_t)c)->required) return 0;
    }
    return 1;
}

static void smap_resolve(tbl *t, smap *m)
{
    if (m->ice == t->schema && m->ice_id == w2l_schema_id(t->schema)) return;
    size_t n = w2l_schema_field_count(m->src), nc = w2l_schema_field_count(t->schema);
    m->identity = n == nc;
    m->evolve = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *s = w2l_schema_field(m->src, i);
        if (!m->ids[i]) { /* a column the table lacks: maybe added since the map was made */
            long k = index_of_name(t->schema, s->name);
            if (k >= 0 && t->view == t->schema) m->ids[i] = w2l_schema_field(t->schema, (size_t)k)->id;
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
        if (!type_eq(c, s->type)) {
            m->identity = 0;
            if (!w2l_type_can_promote(s->type, c)) m->evolve = 1; /* wider in the source, or no fit */
        }
    }
    if (key_gained(t, m)) m->evolve = 1;
    if (m->settled) m->evolve = 0;
    m->ice = t->schema;
    m->ice_id = w2l_schema_id(t->schema);
}

/* One value of source type s as Iceberg type c (w2l_type_can_promote(s, c) holds). */
static w2l_value convert_value(const w2l_value *v, w2l_type s, w2l_type c)
{
    w2l_value r = *v;
    if (v->is_null) return r;
    if (s.id == W2L_TYPE_INT && c.id == W2L_TYPE_LONG) r.v.i64 = v->v.i32;
    else if (s.id == W2L_TYPE_FLOAT && c.id == W2L_TYPE_DOUBLE) r.v.f64 = v->v.f32;
    return r;
}

/* Rows of changes (one source schema) in t's current schema, in op->scratch. */
static w2l_rc convert_rows(ddl_op *op, tbl *t, smap *m, const w2l_change *in, size_t n, w2l_change **out,
                           w2l_error *err)
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
        int want_present = c->present || (partial && (c->op == W2L_OP_UPDATE_BEFORE || c->op == W2L_OP_DELETE));
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
            row[k] = convert_value(&c->row[i], w2l_schema_field(m->src, i)->type,
                                   w2l_schema_field(t->schema, (size_t)k)->type);
        }
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
        int found = 0;
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
static void count_dropped(tbl *t, uint64_t n)
{
    t->rows_quarantined += n;
    w2l__metrics_quarantined(w2l__metrics_current(), t->ns, t->name, n, t->reason);
}

/* Sets t aside for reason: its buffered and later changes are dropped (counted), other
 * tables keep flowing; the quarantine and its reason are kept in the state (save_state),
 * so a restart keeps it, and w2l status shows them. */
static w2l_rc quarantine(ddl_op *op, tbl *t, const char *reason, w2l_error *err)
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
    queue_clear(t);
    count_dropped(t, queued);
    return W2L_OK;
}

/* An unsupported or Iceberg-illegal change of t (err holds the reason, rc its code):
 * fail, ignore or quarantine per the table's ddl.policy. what names the statement. */
static w2l_rc unsupported(ddl_op *op, tbl *t, w2l_rc rc, const char *what, w2l_error *err)
{
    if (rc != W2L_SCHEMA && rc != W2L_CORRUPT) return rc;
    char reason[sizeof err->msg];
    snprintf(reason, sizeof reason, "%s", err->msg);
    switch (policy_of(op, t->ns, t->name)) {
    case POL_IGNORE:
        w2l__log(W2L_LOG_WARN, "ddl: table %s.%s: %s: %s; ignored (ddl.policy=ignore), the table keeps schema %d",
                 t->ns, t->name, what, reason, t->schema ? (int)w2l_schema_id(t->schema) : -1);
        w2l_error_clear(err);
        return W2L_OK;
    case POL_QUARANTINE:
        w2l__log(W2L_LOG_ERROR,
                 "ddl: table %s.%s QUARANTINED: %s: %s; its changes are dropped from here on (ddl.policy=quarantine)",
                 t->ns, t->name, what, reason);
        {
            char full[sizeof err->msg + 320];
            snprintf(full, sizeof full, "%s: %s", what, reason);
            W2L_TRY(quarantine(op, t, full, err));
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
static w2l_rc evolve_to_source(ddl_op *op, tbl *t, const w2l_schema *src, w2l_collector *out, w2l_error *err)
{
    smap *m;
    W2L_TRY(smap_get(t, src, &m, err));
    smap_resolve(t, m);
    if (!m->evolve) return W2L_OK;
    size_t n = w2l_schema_field_count(src);
    w2l__ice_schema_change *ops = w2l__calloc(n + 1, sizeof *ops);
    W2L_NOMEM_IF(!ops, err);
    size_t nops = 0;
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *s = w2l_schema_field(src, i);
        if (!m->ids[i]) {
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, s->name, NULL, s->type, 0};
            continue;
        }
        if (m->idx[i] < 0) continue;
        const w2l_field *c = w2l_schema_field(t->schema, (size_t)m->idx[i]);
        if (type_eq(c->type, s->type) || w2l_type_can_promote(s->type, c->type)) continue;
        if (w2l_type_can_promote(c->type, s->type))
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, c->name, NULL, s->type, 0};
        else {
            char a[32], b[32];
            rc = w2l__fail(err, W2L_SCHEMA, "column '%s': the source's %s cannot be written to Iceberg %s", s->name,
                           w2l_type_format(s->type, a, sizeof a), w2l_type_format(c->type, b, sizeof b));
        }
    }
    char *keys = NULL;
    if (rc == W2L_OK && key_gained(t, m)) {
        size_t nk;
        const int32_t *k = w2l_schema_identifier(src, &nk);
        w2l_buf names = {0};
        for (size_t i = 0; rc == W2L_OK && i < nk; i++)
            rc = w2l__buf_printf(&names, err, "%s%s", i ? "," : "",
                                 w2l_schema_field(src, (size_t)w2l_schema_index_of_id(src, k[i]))->name);
        if (rc == W2L_OK) {
            keys = w2l__strndup(names.data ? (const char *)names.data : "", names.len);
            if (!keys) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else ops[nops++] = (w2l__ice_schema_change){W2L_ICE_SET_IDENTIFIER, keys, NULL, {0, 0, 0}, 0};
        }
        w2l_buf_release(&names);
    }
    if (rc == W2L_OK) rc = commit_ops(op, t, ops, nops, err);
    w2l__free(keys);
    w2l__free(ops);
    if (rc == W2L_OK) {
        /* new columns: the maps learn their ids by name */
        for (smap *x = t->maps; x; x = x->next) {
            size_t k = w2l_schema_field_count(x->src);
            for (size_t i = 0; i < k; i++) {
                if (x->ids[i]) continue;
                long j = index_of_name(t->schema, w2l_schema_field(x->src, i)->name);
                if (j >= 0) x->ids[i] = w2l_schema_field(t->schema, (size_t)j)->id;
            }
            x->ice_id = -1;
        }
        w2l__log(W2L_LOG_INFO, "ddl: table %s.%s follows its source schema (now schema %d)", t->ns, t->name,
                 (int)w2l_schema_id(t->schema));
        return announce(t, out, err);
    }
    if (rc == W2L_NOMEM || rc == W2L_IO || rc == W2L_CONFLICT) return rc;
    rc = unsupported(op, t, rc, "schema change from the source's columns", err);
    if (rc == W2L_OK) {
        /* ignored: write what fits, by name; columns that do not fit are dropped */
        m->settled = 1;
        m->ice_id = -1;
        smap_resolve(t, m);
        size_t k = w2l_schema_field_count(src);
        for (size_t i = 0; i < k; i++) {
            if (m->idx[i] < 0) continue;
            const w2l_field *s = w2l_schema_field(src, i), *c = w2l_schema_field(t->schema, (size_t)m->idx[i]);
            if (!w2l_type_can_promote(s->type, c->type)) m->idx[i] = -1;
        }
    }
    return rc;
}

/* ------------------------------------------------------------ forwarding ------------- */

/* Resolves t for rows of source schema src: loads it, or creates it from src. */
static w2l_rc resolve_for_rows(ddl_op *op, tbl *t, const w2l_schema *src, w2l_error *err)
{
    if (t->ice) return W2L_OK;
    w2l_rc rc = tbl_load(op, t, err);
    if (rc != W2L_NOTFOUND) return rc;
    w2l_schema *s;
    W2L_TRY(schema_from_source(src, &s, err));
    rc = tbl_create(op, t, s, err);
    w2l_schema_unref(s);
    return rc;
}

/* Forwards changes (one source schema) of t to its writers. *need_evolve is set instead
 * when the table's schema must change first. in_place: the array is the incoming
 * element's, which this call may re-point and forward without copying. */
static w2l_rc forward(ddl_op *op, tbl *t, w2l_change *changes, size_t n, int in_place, w2l_collector *out,
                      int *need_evolve, w2l_error *err)
{
    *need_evolve = 0;
    if (!n) return W2L_OK;
    const w2l_schema *src = changes[0].schema;
    W2L_TRY(resolve_for_rows(op, t, src, err));
    smap *m;
    W2L_TRY(smap_get(t, src, &m, err));
    smap_resolve(t, m);
    if (m->evolve) {
        *need_evolve = 1;
        return W2L_OK;
    }
    const char *mk = missing_key(t, m);
    if (mk) {
        w2l__fail(err, W2L_SCHEMA, "the source's rows lack the key column '%s'", mk);
        W2L_TRY(unsupported(op, t, W2L_SCHEMA, "rows", err));
        if (t->quarantined) {
            count_dropped(t, n);
            return W2L_OK;
        }
    }
    if (!t->announced) W2L_TRY(announce(t, out, err));
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
        rc = convert_rows(op, t, m, changes, n, &cs, err);
        e.changes = cs;
        if (rc == W2L_OK) rc = w2l_collect(out, &e, err);
        w2l__arena_release(&op->scratch);
    }
    if (rc == W2L_OK) t->dirty = 1;
    return rc;
}

/* ------------------------------------------------------------ the queue -------------- */

static void q_push(tbl *t, item *it)
{
    it->next = NULL;
    if (t->qtail) t->qtail->next = it;
    else t->q = it;
    t->qtail = it;
}

static void q_push_front(tbl *t, item *it)
{
    it->next = t->q;
    t->q = it;
    if (!t->qtail) t->qtail = it;
}

static item *q_pop(tbl *t)
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
static w2l_rc item_changes(const w2l_change *in, size_t n, item **out, w2l_error *err)
{
    item *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->kind = IT_CHANGES;
    w2l__arena_init(&it->arena, 4096);
    it->changes = w2l__calloc(n ? n : 1, sizeof *it->changes);
    it->n = n;
    w2l_rc rc = it->changes ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && n) it->src = w2l_schema_ref((w2l_schema *)in[0].schema);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_change *c = &in[i];
        w2l_change *d = &it->changes[i];
        *d = *c;
        d->db = d->table = NULL;
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
        item_free(it);
        return rc;
    }
    *out = it;
    return W2L_OK;
}

static w2l_rc item_ddl(const char *sql, size_t len, const char *db, size_t stmt, uint64_t key, item **out,
                       w2l_error *err)
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
        item_free(it);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *out = it;
    return W2L_OK;
}

static w2l_rc item_evolve(const w2l_schema *src, item **out, w2l_error *err)
{
    item *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->kind = IT_EVOLVE;
    it->src = w2l_schema_ref((w2l_schema *)src);
    *out = it;
    return W2L_OK;
}

/* ------------------------------------------------------------ shadows (OSC) ---------- */

#define SUB_SWAP ((size_t)-1)

static shadow *shadow_find(ddl_op *op, const char *ns, const char *name)
{
    for (shadow *s = op->shadows; s; s = s->next)
        if (!strcmp(s->name, name) && !strcmp(s->ns, ns)) return s;
    return NULL;
}

static void shadow_drop(ddl_op *op, const char *ns, const char *name)
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
static w2l_rc shadow_put(ddl_op *op, const char *ns, const char *name, const char *base, w2l_schema *schema,
                         w2l_error *err)
{
    shadow_drop(op, ns, name);
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
static int is_shadow(ddl_op *op, const char *ns, const char *name, int check_catalog, char *base, size_t size)
{
    if (w2l__osc_classify(name, base, size) == W2L_OSC_NONE) return 0;
    if (shadow_find(op, ns, name) || tbl_find(op, ns, base)) return 1;
    if (!check_catalog) return 0;
    w2l_buf loc = {0};
    w2l_error e;
    w2l_rc rc = w2l__catalog_load(op->cat, ns, base, &loc, &e);
    w2l_buf_release(&loc);
    return rc == W2L_OK;
}

static int shadow_pending_for(ddl_op *op, const char *ns, const char *base)
{
    for (shadow *s = op->shadows; s; s = s->next) {
        w2l__osc_kind k = w2l__osc_classify(s->name, NULL, 0);
        if ((k == W2L_OSC_GHOST_SHADOW || k == W2L_OSC_PTOSC_SHADOW) && !strcmp(s->ns, ns) && !strcmp(s->base, base))
            return 1;
    }
    return 0;
}

/* The largest field id the base table has used, for a shadow's new columns. */
static int32_t base_last_id(ddl_op *op, const char *ns, const char *base)
{
    tbl *b = tbl_find(op, ns, base);
    if (b && !b->ice) {
        w2l_error e;
        tbl_load(op, b, &e);
    }
    return b && b->ice ? b->ice->meta->last_column_id : 0;
}

/* A statement on a shadow table: follow its schema in memory. */
static w2l_rc shadow_stmt(ddl_op *op, const w2l__ddl_stmt *st, size_t sub, const char *ns, const char *name,
                          const char *base, w2l_error *err)
{
    shadow *sh = shadow_find(op, ns, name);
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE_LIKE: {
        tbl *b = tbl_find(op, st->like.db ? st->like.db : ns, st->like.name);
        if (!b) W2L_TRY(tbl_get(op, st->like.db ? st->like.db : ns, st->like.name, &b, err));
        w2l_rc rc = tbl_load(op, b, err);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
        return shadow_put(op, ns, name, base, b->schema ? w2l_schema_ref(b->schema) : NULL, err);
    }
    case W2L_DDL_CREATE_TABLE: {
        w2l_schema *s = NULL;
        int32_t last;
        w2l_rc rc = w2l__schema_from_create(st, &op->eo, 0, &s, &last, err);
        if (rc == W2L_NOMEM) return rc;
        tbl *b = tbl_find(op, ns, base);
        if (rc == W2L_OK && b && (b->ice || tbl_load(op, b, err) == W2L_OK)) {
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
                rc = w2l__schema_reconcile(b->schema, b->ice->meta->last_column_id, cols, n, pk, nid, name, &op->eo,
                                           &d, err);
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
            w2l__log(W2L_LOG_WARN, "ddl: shadow table %s.%s: %s (its schema is unknown)", ns, name, err->msg);
            w2l_schema_unref(s);
            s = NULL;
        }
        return shadow_put(op, ns, name, base, s, err);
    }
    case W2L_DDL_ALTER_TABLE: {
        if (!sh) return shadow_put(op, ns, name, base, NULL, err);
        if (!sh->schema) return W2L_OK;
        int32_t last = W2L_MAX(base_last_id(op, ns, base), w2l_schema_max_field_id(sh->schema));
        w2l__schema_diff *d = NULL;
        w2l_rc rc = w2l__schema_apply_alter(sh->schema, last, st, &op->eo, &d, err);
        if (rc == W2L_NOMEM) return rc;
        w2l_schema_unref(sh->schema);
        sh->schema = NULL;
        if (rc == W2L_OK) sh->schema = w2l_schema_ref(d->schema);
        else w2l__log(W2L_LOG_WARN, "ddl: shadow table %s.%s: %s (its schema is unknown)", ns, name, err->msg);
        w2l__schema_diff_free(d);
        return W2L_OK;
    }
    case W2L_DDL_DROP_TABLE:
    case W2L_DDL_RENAME_TABLE:
        (void)sub;
        shadow_drop(op, ns, name);
        return W2L_OK;
    default:
        return W2L_OK;
    }
}

/* ------------------------------------------------------------ fences ----------------- */

static w2l_rc drain(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err);

static w2l_rc fence_start(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    t->fence_id = ((uint64_t)(op->index + 1) << 40) | ++op->fence_seq;
    t->fence_need = writers_of(op, t->ns, t->name);
    t->fence_got = 0;
    t->fence_deadline = w2l__mono_ns() / 1000000 + op->fence_timeout_ms;
    op->nfences++;
    w2l_element e = {0};
    e.kind = W2L_ELEM_WRITER_COMMIT;
    e.ns = t->ns;
    e.table = t->name;
    e.ddl_id = t->fence_id;
    w2l__log(W2L_LOG_DEBUG, "ddl: table %s.%s: fence %llu to %u writer(s)", t->ns, t->name,
             (unsigned long long)t->fence_id, t->fence_need);
    return w2l_collect(out, &e, err);
}

/* The fence of t is over (answered, timed out under policy ignore, or resolved at a
 * barrier): apply what waited for it and release the buffered changes. */
static w2l_rc fence_done(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    if (t->fence_id) {
        t->fence_id = 0;
        op->nfences--;
    }
    t->dirty = 0;
    return drain(op, t, out, err);
}

/* Fences past their deadline: the table's policy decides. */
static w2l_rc check_deadlines(ddl_op *op, w2l_collector *out, w2l_error *err)
{
    if (!op->nfences) return W2L_OK;
    int64_t now = w2l__mono_ns() / 1000000;
    for (tbl *t = op->tables; t; t = t->next) {
        if (!t->fence_id || now < t->fence_deadline) continue;
        char what[300] = "a schema change";
        if (t->q && t->q->kind == IT_DDL) {
            char s[240];
            stmt_text(t->q->sql, t->q->sql_len, s, sizeof s);
            snprintf(what, sizeof what, "DDL '%s'", s);
        }
        w2l__fail(err, W2L_SCHEMA, "the writers did not complete the fence within %lld ms (%u of %u answered)",
                  (long long)op->fence_timeout_ms, t->fence_got, t->fence_need);
        op->nfences--;
        t->fence_id = 0;
        W2L_TRY(unsupported(op, t, W2L_SCHEMA, what, err));
        if (!t->quarantined) W2L_TRY(fence_done(op, t, out, err));
    }
    return W2L_OK;
}

/* At a barrier every pending fence is resolved, because the changes it holds lie before
 * the barrier's source position and must reach the writers within this checkpoint. The
 * writers still see the order a fence guarantees: each writer channel is FIFO, so the
 * WRITER_COMMIT (sent before) precedes the SCHEMA and the released rows; only the wait
 * for the answers is cut short (late answers are ignored). */
static w2l_rc fence_at_barrier(ddl_op *op, w2l_collector *out, w2l_error *err)
{
    for (int round = 0; op->nfences && round < 1000000; round++) {
        tbl *t = op->tables;
        while (t && !t->fence_id) t = t->next;
        if (!t) break;
        w2l__log(W2L_LOG_DEBUG, "ddl: table %s.%s: fence %llu resolved at the barrier (%u of %u answered)", t->ns,
                 t->name, (unsigned long long)t->fence_id, t->fence_got, t->fence_need);
        W2L_TRY(fence_done(op, t, out, err));
    }
    return W2L_OK;
}

/* ------------------------------------------------------------ DDL -------------------- */

/* Forgets t's Iceberg side (after a drop or rename away). */
static void tbl_reset(tbl *t)
{
    w2l__ice_table_free(t->ice);
    t->ice = NULL;
    w2l_schema_unref(t->schema);
    w2l_schema_unref(t->view);
    t->schema = t->view = NULL;
    smaps_free(t->maps);
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
            same = j >= 0 && type_eq(w2l_schema_field(s, (size_t)j)->type, f->type);
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
    w2l_rc rc = ops_by_id(t->schema, target, &a, &ops, &n, err);
    if (rc == W2L_OK) rc = commit_ops(op, t, ops, n, err);
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
static w2l_rc rename_table(ddl_op *op, tbl *t, const char *to_ns, const char *to_name, w2l_collector *out,
                           w2l_error *err)
{
    if (!strcmp(t->ns, to_ns) && !strcmp(t->name, to_name)) return W2L_OK;
    w2l_rc rc = tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        w2l__log(W2L_LOG_DEBUG, "ddl: rename %s.%s: not in the lake", t->ns, t->name);
        return W2L_OK;
    }
    W2L_TRY(rc);
    rc = w2l__tops_rename(&op->ops, t->ice, to_ns, to_name, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "rename %s.%s to %s.%s: ", t->ns, t->name, to_ns, to_name);
        return rc;
    }
    w2l__log(W2L_LOG_INFO, "ddl: renamed %s.%s to %s.%s", t->ns, t->name, to_ns, to_name);
    /* the writers report what they wrote of the table in this checkpoint under the new
     * name (ops.h), so the committer finds the renamed table */
    w2l__json *m = w2l__json_new_object(), *to = w2l__json_new_object();
    int bad = w2l__json_add(to, "ns", w2l__json_new_string(to_ns)) |
              w2l__json_add(to, "table", w2l__json_new_string(to_name)) | w2l__json_add(m, "rename", to);
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
    rc = tbl_get(op, to_ns, to_name, &dst, err);
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
    W2L_TRY(tbl_sync(dst, 1, err));
    return announce(dst, out, err);
}

static w2l_rc apply_create(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, const char *what, w2l_collector *out,
                           w2l_error *err)
{
    w2l_schema *s = NULL;
    w2l_rc rc;
    if (st->kind == W2L_DDL_CREATE_TABLE_SELECT) {
        w2l__log(W2L_LOG_INFO, "ddl: %s.%s: CREATE TABLE ... SELECT: the table is created from its rows", t->ns,
                 t->name);
        return W2L_OK;
    }
    if (st->kind == W2L_DDL_CREATE_TABLE_LIKE) {
        tbl *like;
        W2L_TRY(tbl_get(op, st->like.db ? st->like.db : t->ns, st->like.name, &like, err));
        rc = tbl_load(op, like, err);
        if (rc == W2L_NOTFOUND) {
            w2l__log(W2L_LOG_INFO, "ddl: %s.%s: CREATE TABLE ... LIKE %s: not in the lake; the table is created "
                                   "from its rows", t->ns, t->name, st->like.name);
            return W2L_OK;
        }
        W2L_TRY(rc);
        s = w2l_schema_ref(like->schema);
    } else {
        rc = w2l__schema_from_create(st, &op->eo, 0, &s, NULL, err);
        if (rc != W2L_OK) return unsupported(op, t, rc, what, err);
    }
    rc = tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        rc = tbl_create(op, t, s, err);
        w2l_schema_unref(s);
        W2L_TRY(rc);
        return announce(t, out, err);
    }
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    /* the table exists: a replay of this CREATE, or a lake table from before */
    w2l_schema *hit = find_match(t, s, -1);
    if (hit) {
        set_view(t, hit);
        w2l_schema_unref(s);
        if (hit != t->schema)
            w2l__log(W2L_LOG_INFO, "ddl: %s.%s: CREATE TABLE matches schema %d; replaying from there", t->ns,
                     t->name, (int)w2l_schema_id(hit));
        return t->announced ? W2L_OK : announce(t, out, err);
    }
    /* reconcile, additively: new columns, wider types (columns the lake has more stay) */
    size_t n = w2l_schema_field_count(s);
    w2l__ice_schema_change *ops = w2l__calloc(n + 1, sizeof *ops);
    size_t nops = 0;
    rc = ops ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        long k = index_of_name(t->schema, f->name);
        if (k < 0) {
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_ADD_COLUMN, f->name, NULL, f->type, 0};
            continue;
        }
        const w2l_field *c = w2l_schema_field(t->schema, (size_t)k);
        if (type_eq(c->type, f->type)) continue;
        if (w2l_type_can_promote(c->type, f->type))
            ops[nops++] = (w2l__ice_schema_change){W2L_ICE_WIDEN_COLUMN, c->name, NULL, f->type, 0};
        else if (!w2l_type_can_promote(f->type, c->type)) {
            char a[32], b[32];
            rc = w2l__fail(err, W2L_SCHEMA, "column '%s': the lake has %s, the statement %s", f->name,
                           w2l_type_format(c->type, a, sizeof a), w2l_type_format(f->type, b, sizeof b));
        }
    }
    if (rc == W2L_OK) rc = commit_ops(op, t, ops, nops, err);
    w2l__free(ops);
    w2l_schema_unref(s);
    if (rc != W2L_OK) return unsupported(op, t, rc, what, err);
    return announce(t, out, err);
}

static w2l_rc apply_alter(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, const char *what, w2l_collector *out,
                          w2l_error *err)
{
    w2l_rc rc = tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) {
        w2l__log(W2L_LOG_INFO, "ddl: %s.%s: ALTER TABLE of a table not in the lake; it is created from its rows",
                 t->ns, t->name);
        rc = W2L_OK;
        goto rename;
    }
    W2L_TRY(rc);
    w2l__schema_diff *d = NULL;
    if (t->view && t->view != t->schema) {
        /* replay after a restart: the table may have this change already */
        rc = w2l__schema_apply_alter(t->view, t->ice->meta->last_column_id, st, &op->eo, &d, err);
        w2l_schema *hit = rc == W2L_OK ? (d->changed ? find_match(t, d->schema, w2l_schema_id(t->view)) : t->view) : NULL;
        w2l__schema_diff_free(d);
        d = NULL;
        if (rc == W2L_NOMEM) return rc;
        if (hit) {
            set_view(t, hit);
            w2l__log(W2L_LOG_INFO, "ddl: %s.%s: %s: already applied (schema %d), skipped", t->ns, t->name, what,
                     (int)w2l_schema_id(hit));
            goto rename;
        }
        w2l__log(W2L_LOG_INFO, "ddl: %s.%s: replay ends at schema %d", t->ns, t->name, (int)w2l_schema_id(t->view));
        set_view(t, t->schema);
    }
    rc = w2l__schema_apply_alter(t->schema, t->ice->meta->last_column_id, st, &op->eo, &d, err);
    if (rc == W2L_OK && d->changed) rc = commit_target(op, t, d->schema, err);
    int changed = rc == W2L_OK && d->changed;
    w2l__schema_diff_free(d);
    if (rc != W2L_OK) {
        W2L_TRY(unsupported(op, t, rc, what, err));
        if (t->quarantined) return W2L_OK;
    }
    if (changed) {
        w2l__log(W2L_LOG_INFO, "ddl: %s.%s: %s: schema %d", t->ns, t->name, what, (int)w2l_schema_id(t->schema));
        W2L_TRY(announce(t, out, err));
    }
rename:
    for (size_t i = 0; i < st->nalters; i++) {
        const w2l__ddl_alter *al = &st->alters[i];
        if (al->kind != W2L_ALTER_RENAME_TABLE || !al->new_table.name) continue;
        W2L_TRY(rename_table(op, t, al->new_table.db ? al->new_table.db : t->ns, al->new_table.name, out, err));
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
    w2l__log(W2L_LOG_INFO, "ddl: %s.%s is truncated with the next commit", t->ns, t->name);
    return send_marker(t, W2L_OPS_TRUNCATE_FENCE, out, err);
}

static w2l_rc apply_drop(ddl_op *op, tbl *t, w2l_error *err)
{
    if (shadow_pending_for(op, t->ns, t->name)) {
        /* pt-osc drop_swap: the shadow takes the name next; keep the table */
        w2l__log(W2L_LOG_INFO, "ddl: %s.%s: DROP TABLE before an online schema change swap: kept", t->ns, t->name);
        return W2L_OK;
    }
    /* the owner drops the table with the checkpoint; what the writers hold of it is
     * discarded there (its files name this incarnation) */
    w2l_rc rc = tbl_load(op, t, err);
    if (rc == W2L_OK) rc = w2l__tops_drop(&op->ops, t->ns, t->name, t->ice->meta->uuid, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) {
        w2l__error_prefix(err, "drop %s.%s: ", t->ns, t->name);
        return rc;
    }
    if (rc == W2L_OK) w2l__log(W2L_LOG_INFO, "ddl: dropped %s.%s", t->ns, t->name);
    tbl_reset(t);
    t->gone = 1;
    t->dirty = 0;
    return W2L_OK;
}

static w2l_rc apply_swap(ddl_op *op, tbl *t, const w2l__osc_swap *sw, const char *what, w2l_collector *out,
                         w2l_error *err)
{
    const char *sns = sw->shadow.db ? sw->shadow.db : t->ns;
    shadow *sh = shadow_find(op, sns, sw->shadow.name);
    if (!sh || !sh->schema) {
        w2l__fail(err, W2L_SCHEMA, "online schema change swap: the schema of %s.%s is unknown", sns,
                  sw->shadow.name);
        W2L_TRY(unsupported(op, t, W2L_SCHEMA, what, err));
        shadow_drop(op, sns, sw->shadow.name);
        return W2L_OK;
    }
    w2l_rc rc = tbl_load(op, t, err);
    if (rc == W2L_NOTFOUND) rc = tbl_create(op, t, sh->schema, err);
    else if (rc == W2L_OK) {
        rc = commit_target(op, t, sh->schema, err);
        if (rc != W2L_OK) rc = unsupported(op, t, rc, what, err);
    }
    shadow_drop(op, sns, sw->shadow.name);
    W2L_TRY(rc);
    if (t->quarantined) return W2L_OK;
    w2l__log(W2L_LOG_INFO, "ddl: %s.%s takes the schema of %s (schema %d)", t->ns, t->name, sw->shadow.name,
             (int)w2l_schema_id(t->schema));
    return announce(t, out, err);
}

/* Applies statement st, for its sub-th table (DROP/RENAME lists, SUB_SWAP), to t. */
static w2l_rc apply_unit(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, size_t sub, w2l_collector *out,
                         w2l_error *err)
{
    char what[300], text[240];
    stmt_text(st->text, st->text_len, text, sizeof text);
    snprintf(what, sizeof what, "DDL '%s'", text);
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE:
    case W2L_DDL_CREATE_TABLE_LIKE:
    case W2L_DDL_CREATE_TABLE_SELECT: return apply_create(op, t, st, what, out, err);
    case W2L_DDL_ALTER_TABLE: return apply_alter(op, t, st, what, out, err);
    case W2L_DDL_TRUNCATE_TABLE: return apply_truncate(t, out, err);
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
        if (w2l__osc_classify(r->to.name, base, sizeof base) != W2L_OSC_NONE && !strcmp(base, t->name) &&
            shadow_pending_for(op, t->ns, t->name)) {
            w2l__log(W2L_LOG_INFO, "ddl: %s.%s moves aside for an online schema change: kept", t->ns, t->name);
            return W2L_OK;
        }
        return rename_table(op, t, to_ns, r->to.name, out, err);
    }
    default: return W2L_OK;
    }
}

/* 1 when st's sub-th unit must wait for the table's writers (DESIGN.md section 3). */
static int needs_fence(const w2l__ddl_stmt *st)
{
    return st->kind == W2L_DDL_ALTER_TABLE || st->kind == W2L_DDL_TRUNCATE_TABLE ||
           st->kind == W2L_DDL_RENAME_TABLE;
}

static w2l_rc apply_item(ddl_op *op, tbl *t, item *it, w2l_collector *out, w2l_error *err)
{
    if (it->kind == IT_EVOLVE) return evolve_to_source(op, t, it->src, out, err);
    w2l__ddl_list *l = NULL;
    W2L_TRY(w2l__ddl_parse(it->sql, it->sql_len, it->db, &l, err));
    w2l_rc rc = it->stmt < l->n ? apply_unit(op, t, &l->stmts[it->stmt], it->sub, out, err) : W2L_OK;
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

static w2l_rc drain(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err)
{
    while (t->q && !t->fence_id && !t->quarantined) {
        item *it = t->q;
        if (it->kind == IT_WAIT) {
            /* a rename into this name: it applies from the old name's queue */
            tbl *from = tbl_find(op, it->ons, it->oname);
            if (!from || !q_find_link(from, it->link) || from->quarantined) {
                item_free(q_pop(t)); /* the rename is gone (its table was quarantined) */
                continue;
            }
            uint64_t link = it->link;
            it->waiting = 1; /* while this drain is on the stack */
            W2L_TRY(drain(op, from, out, err));
            if (t->q && t->q->kind == IT_WAIT && t->q->link == link) {
                t->q->waiting = 0; /* not yet: the old name's queue has more first */
                return W2L_OK;
            }
            continue;
        }
        if (it->kind == IT_CHANGES) {
            int need = 0;
            W2L_TRY(forward(op, t, it->changes, it->n, 0, out, &need, err));
            if (need) {
                item *ev = NULL;
                W2L_TRY(item_evolve(it->src, &ev, err));
                ev->fenced = !t->dirty;
                q_push_front(t, ev);
                continue;
            }
            item_free(q_pop(t));
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
            to = tbl_find(op, it->ons, it->oname);
            if (to && to->q && to->q->link == it->link) {
                to_waiting = to->q->waiting;
                item_free(q_pop(to));
            } else if (to && q_find_link(to, it->link)) {
                return W2L_OK; /* the new name's drain comes back here */
            }
        }
        q_pop(t);
        w2l_rc rc = apply_item(op, t, it, out, err);
        item_free(it);
        W2L_TRY(rc);
        if (to && !to_waiting) W2L_TRY(drain(op, to, out, err));
    }
    return W2L_OK;
}

/* ------------------------------------------------------------ process ---------------- */

/* One table's part of a statement: apply it now, or queue it behind the table's fence. */
static w2l_rc ddl_unit(ddl_op *op, const w2l_ddl *d, const w2l__ddl_stmt *st, size_t k, size_t sub,
                       const char *ns, const char *name, w2l_collector *out, w2l_error *err)
{
    if (!ns || !*ns || !name || !*name) {
        w2l__log(W2L_LOG_WARN, "ddl: %s statement without a database, ignored", w2l__ddl_kind_name(st->kind));
        return W2L_OK;
    }
    char base[256];
    if (sub != SUB_SWAP && is_shadow(op, ns, name, 1, base, sizeof base))
        return shadow_stmt(op, st, sub, ns, name, base, err);
    tbl *t, *to = NULL;
    W2L_TRY(tbl_get(op, ns, name, &t, err));
    if (t->quarantined) return W2L_OK;
    /* a resend (file header): statement text, default database, source time and its place
     * in the text identify it */
    uint64_t key = 0;
    if (d->ts_ms) {
        key = w2l__hash64(d->sql, d->sql_len, (uint64_t)d->ts_ms);
        key = w2l__hash64(d->db ? d->db : "", d->db ? strlen(d->db) : 0, key);
        uint64_t pos[2] = {k, sub};
        key = w2l__hash64(pos, sizeof pos, key);
        if (key == t->last_key) {
            w2l__log(W2L_LOG_INFO, "ddl: %s.%s: the statement just seen, again: dropped", ns, name);
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
    if (to_name) {
        W2L_TRY(tbl_get(op, to_db ? to_db : ns, to_name, &to, err));
        if (to == t) to = NULL;
        else to->last_key = 0;
    }
    if (t->q || t->fence_id || (needs_fence(st) && t->dirty) || (to && (to->q || to->fence_id))) {
        item *it = NULL;
        W2L_TRY(item_ddl(d->sql, d->sql_len, d->db, k, key, &it, err));
        it->sub = sub;
        it->fenced = !needs_fence(st);
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
                item_free(w);
                item_free(it);
                return w2l__fail(err, W2L_NOMEM, "out of memory");
            }
            q_push(to, w);
        }
        q_push(t, it);
        return drain(op, t, out, err);
    }
    return apply_unit(op, t, st, sub, out, err);
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
        stmt_text(d->sql, d->sql_len, text, sizeof text);
        snprintf(what, sizeof what, "DDL '%s'", text);
        const char *ns = d->db && *d->db ? d->db : e->ns;
        if (d->table && *d->table && ns && *ns) {
            tbl *t;
            W2L_TRY(tbl_get(op, ns, d->table, &t, err));
            return unsupported(op, t, rc, what, err);
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
                rc = ddl_unit(op, d, st, k, j, st->renames[j].from.db, st->renames[j].from.name, out, err);
            break;
        }
        case W2L_DDL_CREATE_DATABASE:
        case W2L_DDL_DROP_DATABASE:
            w2l__log(W2L_LOG_DEBUG, "ddl: %s %s: nothing to do in the lake", w2l__ddl_kind_name(st->kind),
                     st->database ? st->database : "");
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
    if (is_shadow(op, e->ns, e->table, 0, base, sizeof base)) return W2L_OK;
    tbl *t;
    W2L_TRY(tbl_get(op, e->ns, e->table, &t, err));
    if (t->quarantined) {
        count_dropped(t, e->nchanges);
        return W2L_OK;
    }
    t->last_key = 0;
    w2l_change *cs = (w2l_change *)e->changes; /* owned during process() (pipeline.h) */
    if (t->q || t->fence_id) {
        item *it = NULL;
        W2L_TRY(item_changes(cs, e->nchanges, &it, err));
        q_push(t, it);
        return drain(op, t, out, err);
    }
    int need = 0;
    W2L_TRY(forward(op, t, cs, e->nchanges, 1, out, &need, err));
    if (!need) return W2L_OK;
    /* the source's schema changed the table: through the fence when it has DML */
    item *ev = NULL, *it = NULL;
    W2L_TRY(item_evolve(cs[0].schema, &ev, err));
    ev->fenced = !t->dirty;
    q_push(t, ev);
    W2L_TRY(item_changes(cs, e->nchanges, &it, err));
    q_push(t, it);
    return drain(op, t, out, err);
}

/* QUARANTINE from the source (w2l_emit_quarantine(3)): payload {"reason": text|null,
 * "rows": N}, N changes of the table the source dropped itself. */
static w2l_rc on_quarantine(ddl_op *op, const w2l_element *e, w2l_error *err)
{
    w2l__json *j = NULL;
    W2L_TRY(w2l__json_parse(e->payload ? e->payload : "{}", e->payload ? e->payload_len : 2, &j, err));
    const char *reason = w2l__json_str(w2l__json_get(j, "reason"));
    int64_t rows = 0;
    w2l__json_int64(w2l__json_get(j, "rows"), &rows);
    tbl *t;
    w2l_rc rc = tbl_get(op, e->ns, e->table, &t, err);
    if (rc == W2L_OK && !t->quarantined) {
        w2l__log(W2L_LOG_ERROR, "ddl: table %s.%s QUARANTINED by the source: %s; its changes are dropped from here "
                 "on (ddl.policy=quarantine)", t->ns, t->name, reason ? reason : "(no reason given)");
        rc = quarantine(op, t, reason ? reason : "quarantined by the source", err);
    }
    if (rc == W2L_OK && rows > 0) count_dropped(t, (uint64_t)rows);
    w2l__json_free(j);
    return rc;
}

static w2l_rc on_answer(ddl_op *op, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    tbl *t = tbl_find(op, e->ns, e->table);
    if (!t || !t->fence_id || t->fence_id != e->ddl_id) return W2L_OK; /* late: resolved already */
    if (++t->fence_got < t->fence_need) return W2L_OK;
    w2l__log(W2L_LOG_DEBUG, "ddl: table %s.%s: fence %llu complete", t->ns, t->name, (unsigned long long)e->ddl_id);
    return fence_done(op, t, out, err);
}

/* ------------------------------------------------------------ state ------------------ */

/* Hands this checkpoint's table operations to the owner and stores every operation of this
 * handler not yet applied under "ddl/ops/<index>" (owner.h). */
static w2l_rc save_ops(ddl_op *op, uint64_t ckpt, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    if (op->ops.len) {
        w2l_buf arr = {0};
        rc = w2l__buf_printf(&arr, err, "[%.*s]", (int)op->ops.len, (const char *)op->ops.data);
        if (rc == W2L_OK) rc = w2l__owner_add_ops(op->owner, ckpt, op->index, (const char *)arr.data, arr.len, err);
        w2l_buf_release(&arr);
        op->ops.len = 0;
    }
    w2l_buf v = {0};
    if (rc == W2L_OK) rc = w2l__owner_pending_ops(op->owner, op->index, &v, err);
    char key[48];
    snprintf(key, sizeof key, W2L_OPS_DDL_OPS_PREFIX "%u", op->index);
    /* none pending: no key (the newest sealed checkpoint alone says what is left) */
    if (rc == W2L_OK && v.len > 2) rc = w2l_state_put(op->st, ckpt, key, (const char *)v.data, v.len, err);
    w2l_buf_release(&v);
    return rc;
}

/* "ddl/<index>": {"tables":[{"ns","table","schema-id","quarantined",
 *                            "reason" (quarantined only), "rows-quarantined"}],
 *                 "shadows":[{"ns","table","base","schema"}]} */
static w2l_rc save_state(ddl_op *op, uint64_t ckpt, w2l_error *err)
{
    w2l__json *root = w2l__json_new_object(), *ts = w2l__json_new_array(), *ss = w2l__json_new_array();
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
        bad = !o || w2l__json_append(ts, o) || w2l__json_add(o, "ns", w2l__json_new_string(t->ns)) ||
              w2l__json_add(o, "table", w2l__json_new_string(t->name)) ||
              w2l__json_add(o, "schema-id", w2l__json_new_int64(t->view ? w2l_schema_id(t->view) : -1)) ||
              w2l__json_add(o, "quarantined", w2l__json_new_bool(t->quarantined)) ||
              (t->quarantined && (w2l__json_add(o, "reason", w2l__json_new_string(t->reason ? t->reason : "")) ||
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
        bad = w2l__json_add(o, "schema", sj ? sj : w2l__json_new_null()) || w2l__json_append(ss, o) ||
              w2l__json_add(o, "ns", w2l__json_new_string(s->ns)) ||
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

typedef struct load_ctx {
    ddl_op *op;
    uint64_t ckpt;
    w2l_rc rc;
    w2l_error *err;
} load_ctx;

static w2l_rc load_one(ddl_op *op, const char *text, size_t len, w2l_error *err)
{
    w2l__json *root = NULL;
    W2L_TRY(w2l__json_parse(text, len, &root, err));
    w2l_rc rc = W2L_OK;
    for (w2l__json *o = w2l__json_first(w2l__json_get(root, "tables")); rc == W2L_OK && o; o = w2l__json_next(o)) {
        const char *ns = w2l__json_str(w2l__json_get(o, "ns")), *name = w2l__json_str(w2l__json_get(o, "table"));
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
        rc = tbl_get(op, ns, name, &t, err);
        if (rc == W2L_OK) {
            t->ckpt_schema_id = (int32_t)sid;
            if (q) {
                rc = quarantine(op, t, reason ? reason : "quarantined before a restart", err);
                t->rows_quarantined = dropped > 0 ? (uint64_t)dropped : 0;
                w2l__log(W2L_LOG_WARN, "ddl: table %s.%s stays quarantined: %s", ns, name, t->reason);
            }
        }
    }
    for (w2l__json *o = w2l__json_first(w2l__json_get(root, "shadows")); rc == W2L_OK && o; o = w2l__json_next(o)) {
        const char *ns = w2l__json_str(w2l__json_get(o, "ns")), *name = w2l__json_str(w2l__json_get(o, "table")),
                   *base = w2l__json_str(w2l__json_get(o, "base"));
        if (!ns || !name || !base || shadow_find(op, ns, name)) continue;
        w2l_schema *s = NULL;
        w2l__json *sj = w2l__json_get(o, "schema");
        if (sj && w2l__json_type(sj) == W2L_JSON_OBJECT) {
            char *st = w2l__json_print(sj, 0);
            if (st) w2l_schema_from_json(st, strlen(st), &s, NULL);
            w2l__free(st);
        }
        rc = shadow_put(op, ns, name, base, s, err);
    }
    w2l__json_free(root);
    return rc;
}

static int load_key(void *ctx, const char *key)
{
    load_ctx *c = ctx;
    if (!strncmp(key, W2L_OPS_DDL_OPS_PREFIX, strlen(W2L_OPS_DDL_OPS_PREFIX))) return 0; /* the owner's */
    w2l_buf b = {0};
    c->rc = w2l_state_get(c->op->st, c->ckpt, key, &b, c->err);
    if (c->rc == W2L_OK) c->rc = load_one(c->op, (const char *)b.data, b.len, c->err);
    if (c->rc != W2L_OK) w2l__error_prefix(c->err, "state %s: ", key);
    w2l_buf_release(&b);
    return c->rc != W2L_OK;
}

/* ------------------------------------------------------------ methods ---------------- */

static void d_close(w2l_operator *self);

static w2l_rc open_op(const w2l_conf *conf, unsigned index, unsigned n, w2l_state *st, uint64_t restored,
                      ddl_op *op, w2l_error *err)
{
    op->conf = conf;
    op->index = index;
    op->n = n ? n : 1;
    op->st = st;
    op->restored = restored;
    w2l__arena_init(&op->scratch, 64 * 1024);
    const char *wh = NULL, *cat = NULL, *fio = NULL;
    int64_t v;
    W2L_TRY(w2l_conf_get(conf, "warehouse", &wh, err));
    if (!wh || !*wh) return w2l__fail(err, W2L_CONFIG, "the DDL handler needs the lake: set warehouse");
    op->warehouse = w2l__strdup(wh);
    W2L_NOMEM_IF(!op->warehouse, err);
    W2L_TRY(w2l_conf_get(conf, "catalog", &cat, err));
    W2L_TRY(w2l_conf_get(conf, "fileio", &fio, err));
    W2L_TRY(w2l_conf_get_int(conf, "parallelism", &v, err));
    op->nwriters = v > 0 ? (unsigned)v : 1;
    W2L_TRY(w2l_conf_get_int(conf, "ddl.fence-timeout", &op->fence_timeout_ms, err));
    if (!op->fence_timeout_ms) {
        W2L_TRY(w2l_conf_get_int(conf, "checkpoint-interval", &v, err));
        /* short intervals must not turn a busy writer (many tables completing files at a
         * barrier) into a failed job: the fence resolves at the next barrier anyway */
        op->fence_timeout_ms = W2L_MAX(3 * v, 30000);
    }
    if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK) op->eo.types.tinyint1_as_boolean = (int)v;
    if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK) op->eo.types.time_as_string = (int)v;
    W2L_TRY(w2l_fileio_open(fio, conf, &op->io, err));
    W2L_TRY(w2l__catalog_open(cat, conf, op->warehouse, op->io, &op->cat, err));
    op->owner = w2l__owner_current();
    if (!op->owner) return w2l__fail(err, W2L_MISUSE, "the built-in DDL handler runs only inside a pipeline");
    /* what the catalog says is the restored checkpoint's state only once the committers
     * committed it */
    W2L_TRY(w2l__owner_wait_restored(op->owner, err));
    if (restored) {
        load_ctx c = {op, restored, W2L_OK, err};
        W2L_TRY(w2l_state_keys(st, restored, "ddl/", load_key, &c, err));
        W2L_TRY(c.rc);
    }
    return W2L_OK;
}

static w2l_rc d_open(const w2l_operator_methods *m, const w2l_conf *conf, unsigned index, unsigned n, w2l_state *st,
                     uint64_t restored, w2l_operator *self, w2l_error *err)
{
    (void)m;
    w2l_rc rc = open_op(conf, index, n, st, restored, (ddl_op *)self, err);
    if (rc != W2L_OK) d_close(self); /* the runtime closes only what opened */
    return rc;
}

static w2l_rc d_process(w2l_operator *self, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    ddl_op *op = (ddl_op *)self;
    w2l_rc rc = W2L_OK;
    switch (e->kind) {
    case W2L_ELEM_CHANGES: rc = on_changes(op, e, out, err); break;
    case W2L_ELEM_DDL: rc = on_ddl(op, e, out, err); break;
    case W2L_ELEM_WRITER_COMMIT: rc = on_answer(op, e, out, err); break;
    case W2L_ELEM_QUARANTINE: rc = on_quarantine(op, e, err); break;
    case W2L_ELEM_BARRIER:
        rc = check_deadlines(op, out, err);
        if (rc == W2L_OK) rc = fence_at_barrier(op, out, err);
        if (rc == W2L_OK) rc = save_ops(op, e->ckpt, err);
        if (rc == W2L_OK) rc = save_state(op, e->ckpt, err);
        for (tbl *t = op->tables; rc == W2L_OK && t; t = t->next) t->dirty = 0;
        return rc;
    case W2L_ELEM_END: return fence_at_barrier(op, out, err);
    default: break;
    }
    if (rc == W2L_OK) rc = check_deadlines(op, out, err);
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
        tbl_free(t);
    }
    while (op->shadows) shadow_drop(op, op->shadows->ns, op->shadows->name);
    w2l__catalog_close(op->cat);
    w2l_fileio_close(op->io);
    w2l__free(op->warehouse);
    w2l_buf_release(&op->ops);
    w2l__arena_release(&op->scratch);
}

const w2l_operator_methods w2l__op_ddl = {W2L_OPERATOR_METHODS_V1, "default", W2L_OPERATOR_DDL, sizeof(ddl_op),
                                          NULL, d_open, d_process, d_notify, d_close};
