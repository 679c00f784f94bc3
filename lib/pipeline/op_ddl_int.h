/*
 * The DDL handler operator's insides (op_ddl.c holds the operator and describes it): its
 * tables, mappings and queue, and what its pieces share: op_ddl_table.c (tables, schema
 * commits), op_ddl_rows.c (row mapping, policy, the queue), op_ddl_route.c (routes,
 * metadata columns), op_ddl_shadow.c
 * (online-schema-change shadows), op_ddl_apply.c (fences, statements), op_ddl_state.c
 * (checkpointed state).
 */
#ifndef W2L_OP_DDL_INT_H
#define W2L_OP_DDL_INT_H

#include "../common/arena.h"
#include "../common/common.h"
#include "../ddl/ddl.h"
#include "../iceberg/iceberg.h"
#include "../json/json.h"
#include "../event/emit.h"
#include "metrics.h"
#include "op_ddl.h"
#include "ops.h"
#include "owner.h"
#include "table_ops.h"

#define SUB_SWAP                                                                                   \
    ((size_t)-1) /* the `sub` of a shadow cut-over swap (not a DROP/RENAME list index) */

enum { POL_FAIL = 0, POL_IGNORE = 1, POL_QUARANTINE = 2 };
#define W2L__DDL_NEXTRA 4 /* metadata columns: _op_ts, _source_db, _source_table, _op */
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
    const char *collide;     /* a source column named like a metadata column, not reported */
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
    int claimed;             /* ice is this job's to write (table_claim.c, owner.h) */
    w2l_schema *schema;      /* the current Iceberg schema (a reference) */
    w2l_schema *view;        /* the Iceberg schema as of the stream position: the current
                                one, or an older one while a restart replays statements
                                the table already has (a reference) */
    int32_t *older_specs;    /* specs other than the default with data files (at load) */
    size_t nolder_specs;
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
    /* routes and metadata columns (op_ddl_route.c) */
    const struct w2l__route *route; /* the route whose target this table is; NULL */
    char *shard;             /* key-with-source unset: the first keyed source table seen */
    unsigned xwant;          /* the metadata columns it carries (bit k: xcols[k]) */
    int xknown;              /* xwant computed */
    long xidx[W2L__DDL_NEXTRA]; /* their indices in schema (-1 none), for xfor */
    const w2l_schema *xfor;
    struct tbl *next;
    uint64_t hash;           /* w2l__table_hash(ns, name) */
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
    tbl **tidx;              /* the tables by w2l__table_hash of their name, open addressing
                                (none is ever removed before close) */
    size_t tcap, ntab;
    shadow *shadows;
    uint64_t fence_seq;
    uint64_t link_seq;       /* links of queued renames */
    unsigned nfences;        /* tables with a fence pending */
    w2l__arena scratch;      /* converted rows of one process() call */
    w2l__owner *owner;       /* applies the table operations (owner.h) */
    struct w2l__routes *routes; /* route.* (route.h); NULL: none */
    w2l_buf ops;             /* this checkpoint's table operations, comma-separated */
} ddl_op;

/* What open() hands to w2l__ddlop_load_key for each stored key. */
typedef struct load_ctx {
    ddl_op *op;
    uint64_t ckpt;
    w2l_rc rc;
    w2l_error *err;
} load_ctx;

/* ---- op_ddl_spec.c ---- */

/* The syntax of every partition-by key and the partition-by.tables expression (at open);
 * with op (its catalog open), also each table.DB.T.partition-by against the columns of the
 * table when the lake holds it. */
w2l_rc w2l__ddlop_check_specs(const w2l_conf *conf, const ddl_op *op, w2l_error *err);
/* The spec the configuration asks for ns.table, resolved against schema (or, given the
 * table's metadata, its current schema, columns renamed since found by their old names);
 * *set 0 when it asks for none (the table keeps its own). W2L_CONFIG names the key. */
w2l_rc w2l__ddlop_spec_of(const ddl_op *op, const char *ns, const char *table,
                          const w2l_schema *schema, const w2l__ice_meta *meta,
                          w2l__ice_spec *out, int *set, w2l_error *err);
/* A loaded table whose default spec is not the one asked for gets it (for the owner). */
w2l_rc w2l__ddlop_tbl_spec(ddl_op *op, tbl *t, w2l_error *err);

/* ---- op_ddl_route.c ---- */

/* The table source table db.table lands in: its route's target (then t->route is set),
 * else itself. */
w2l_rc w2l__ddlop_tbl_source(ddl_op *op, const char *db, const char *table, tbl **out,
                             w2l_error *err);
/* The syntax of metadata-columns (at open). */
w2l_rc w2l__ddlop_check_extras(const w2l_conf *conf, w2l_error *err);
/* s (a new table's first schema) with t's metadata columns added, and for key-with-source
 * its key prefixed by _source_db, _source_table; a new reference in *out. */
w2l_rc w2l__ddlop_with_extras(ddl_op *op, tbl *t, w2l_schema *s, w2l_schema **out,
                              w2l_error *err);
/* A loaded table lacking metadata columns it should carry gets them (optional). */
w2l_rc w2l__ddlop_tbl_extras(ddl_op *op, tbl *t, w2l_error *err);
/* 1 when name is one of the metadata columns t carries. */
int w2l__ddlop_is_extra_name(const tbl *t, const char *name);
/* 1 when t's current schema has metadata columns / when id is one of them. */
int w2l__ddlop_has_extras(tbl *t);
int w2l__ddlop_is_extra_id(tbl *t, int32_t id);
/* Fills the metadata columns of row (t's current schema) for change c, marking them in
 * present when it is not NULL. */
void w2l__ddlop_fill_extras(tbl *t, const w2l_change *c, w2l_value *row, uint8_t *present);
/* Rows of c's source table reach routed t: W2L_CONFIG when key-with-source is unset and
 * keyed rows of a second source table arrive. */
w2l_rc w2l__ddlop_route_rows(ddl_op *op, tbl *t, const w2l_change *c, w2l_error *err);
/* 1 (logged) when st's sub-th unit is a TRUNCATE, DROP or RENAME of one of routed t's
 * source tables, which the target does not follow. */
int w2l__ddlop_route_skips(const tbl *t, const w2l__ddl_stmt *st, size_t sub);
/* 1 (logged) when ns.name, the new name of a RENAME of t, is one of a route's source
 * tables: t stays as it is in the lake. */
int w2l__ddlop_route_onto(ddl_op *op, const tbl *t, const char *ns, const char *name);

/* ---- op_ddl_table.c ---- */

long w2l__ddlop_index_of_name(const w2l_schema *s, const char *name);
int w2l__ddlop_type_eq(w2l_type a, w2l_type b);
int w2l__ddlop_policy_of(const ddl_op *op, const char *ns, const char *table);
unsigned w2l__ddlop_writers_of(const ddl_op *op, const char *ns, const char *table);
void w2l__ddlop_stmt_text(const char *sql, size_t len, char *buf, size_t size);
void w2l__ddlop_smaps_free(smap *m);
void w2l__ddlop_item_free(item *it);
void w2l__ddlop_queue_clear(tbl *t);
void w2l__ddlop_tbl_free(tbl *t);
tbl *w2l__ddlop_tbl_find(ddl_op *op, const char *ns, const char *name);
w2l_rc w2l__ddlop_tbl_get(ddl_op *op, const char *ns, const char *name, tbl **out, w2l_error *err);
w2l_rc w2l__ddlop_tbl_sync(tbl *t, int follow_view, w2l_error *err);
/* Loads t to write it: claimed for this job first (owner.h), W2L_BUSY when another job
 * owns it. _read only reads it (the source of a CREATE TABLE ... LIKE, a shadow's base). */
w2l_rc w2l__ddlop_tbl_load(ddl_op *op, tbl *t, w2l_error *err);
w2l_rc w2l__ddlop_tbl_read(ddl_op *op, tbl *t, w2l_error *err);
w2l_rc w2l__ddlop_tbl_create(ddl_op *op, tbl *t, w2l_schema *schema, w2l_error *err);
w2l_rc w2l__ddlop_schema_from_source(const w2l_schema *src, w2l_schema **out, w2l_error *err);
w2l_rc w2l__ddlop_ops_by_id(const w2l_schema *cur, const w2l_schema *target, w2l__arena *a,
                            w2l__ice_schema_change **out, size_t *nout, w2l_error *err);
w2l_rc w2l__ddlop_commit_ops(ddl_op *op, tbl *t, const w2l__ice_schema_change *ops, size_t n,
                             w2l_error *err);
w2l_rc w2l__ddlop_announce(tbl *t, w2l_collector *out, w2l_error *err);

/* ---- op_ddl_rows.c ---- */

void w2l__ddlop_count_dropped(tbl *t, uint64_t n);
w2l_rc w2l__ddlop_quarantine(ddl_op *op, tbl *t, const char *reason, w2l_error *err);
void w2l__ddlop_release(tbl *t, const char *what);
w2l_rc w2l__ddlop_unsupported(ddl_op *op, tbl *t, w2l_rc rc, const char *what, w2l_error *err);
w2l_rc w2l__ddlop_evolve_to_source(ddl_op *op, tbl *t, const w2l_schema *src, w2l_collector *out,
                                   w2l_error *err);
w2l_rc w2l__ddlop_forward(ddl_op *op, tbl *t, w2l_change *changes, size_t n, int in_place,
                          w2l_collector *out, int *need_evolve, w2l_error *err);
void w2l__ddlop_q_push(tbl *t, item *it);
void w2l__ddlop_q_push_front(tbl *t, item *it);
item *w2l__ddlop_q_pop(tbl *t);
w2l_rc w2l__ddlop_item_changes(const w2l_change *in, size_t n, item **out, w2l_error *err);
w2l_rc w2l__ddlop_item_ddl(const char *sql, size_t len, const char *db, size_t stmt, uint64_t key,
                           item **out, w2l_error *err);
w2l_rc w2l__ddlop_item_evolve(const w2l_schema *src, item **out, w2l_error *err);

/* ---- op_ddl_shadow.c ---- */

shadow *w2l__ddlop_shadow_find(ddl_op *op, const char *ns, const char *name);
void w2l__ddlop_shadow_drop(ddl_op *op, const char *ns, const char *name);
w2l_rc w2l__ddlop_shadow_put(ddl_op *op, const char *ns, const char *name, const char *base,
                             w2l_schema *schema, w2l_error *err);
int w2l__ddlop_is_shadow(ddl_op *op, const char *ns, const char *name, int check_catalog,
                         char *base, size_t size);
int w2l__ddlop_shadow_pending_for(ddl_op *op, const char *ns, const char *base);
w2l_rc w2l__ddlop_shadow_stmt(ddl_op *op, const w2l__ddl_stmt *st, size_t sub, const char *ns,
                              const char *name, const char *base, w2l_error *err);

/* ---- op_ddl_apply.c ---- */

w2l_rc w2l__ddlop_drain(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err);
w2l_rc w2l__ddlop_fence_done(ddl_op *op, tbl *t, w2l_collector *out, w2l_error *err);
w2l_rc w2l__ddlop_check_deadlines(ddl_op *op, w2l_collector *out, w2l_error *err);
w2l_rc w2l__ddlop_fence_at_barrier(ddl_op *op, w2l_collector *out, w2l_error *err);
w2l_rc w2l__ddlop_apply_unit(ddl_op *op, tbl *t, const w2l__ddl_stmt *st, size_t sub,
                             w2l_collector *out, w2l_error *err);
int w2l__ddlop_needs_fence(const w2l__ddl_stmt *st);

/* ---- op_ddl_state.c ---- */

w2l_rc w2l__ddlop_save_ops(ddl_op *op, uint64_t ckpt, w2l_error *err);
w2l_rc w2l__ddlop_save_state(ddl_op *op, uint64_t ckpt, w2l_error *err);
int w2l__ddlop_load_key(void *ctx, const char *key);

#endif
