/*
 * w2l_verify (w2l-verify(1)): the source and the lake compared per primary-key range.
 *
 * Per table: its lake schema (the first row of a scan) fixes each column's canonical form
 * (verify_canon.c); the source splits the key into ranges of about verify.chunk-rows keys
 * (keyset: the key OFFSET chunk-1 rows after the last bound, one short statement each);
 * one scan of the lake buckets its rows into those ranges (count, BIT_XOR and sum of the
 * row hashes); one statement per range computes the same in the server. Ranges that
 * differ are compared again after the lake's next commit of the table (or, with no job
 * running, after a short settle); the lake's rows of those ranges are kept from that scan,
 * and each range that still differs is compared row by row with the server's (key and row
 * hash), matched by key bytes across all of the table's differing ranges, so a row the
 * byte order put in another range than the collation does is matched all the same. A
 * range whose rows all match is not reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include <w2l/lake.h>
#include <w2l/verify.h>

#include "../common/arena.h"
#include "../source/mysql_verify_src.h"
#include "route.h"
#include "verify_int.h"

#define CHUNK_DEFAULT 100000
#define POLL_MS 200

typedef struct vcol {
    const char *name;
    w2l__mysql_type mt;
    w2l_type expect;     /* what the source maps it to */
    w2l_type lake;       /* the lake's type (expect while the lake has no row) */
    w2l__vform form;
    w2l__vkey key;
    int excluded;
} vcol;

typedef struct vsum {
    uint64_t n, x, s;    /* rows, BIT_XOR and sum (mod 2^64) of their hashes */
} vsum;

typedef struct vrange {
    vsum src, lake;
    int differs;
} vrange;

/* A row of the exact comparison: its key (length-prefixed texts) and hash. */
typedef struct vrow {
    size_t range;
    const char *key;
    size_t klen;
    uint64_t h;
    int lake;            /* 1: a lake row */
} vrow;

typedef struct vtable {
    const w2l__mysrc_table *src;
    const char *ns, *lname;
    vcol *cols;
    size_t ncols;
    size_t *pk;          /* column indexes; npk 0: the table is compared whole */
    w2l__vkey *ks;
    size_t npk;
    w2l__vkeyval *bounds;
    size_t nb;           /* ranges: nb + 1 */
    vrange *r;
    int64_t snap;        /* the lake's snapshot last read */
    int no_lake;
    int ndiff;
    vrow *rows;          /* lake rows kept for the exact comparison */
    size_t nrows, rcap;
    w2l__arena arena;
    w2l__arena rarena;   /* rows' keys */
} vtable;

typedef struct verify {
    const w2l_conf *conf;
    const w2l_verify_opts *o;
    w2l_verify_summary *sum;
    w2l__mysrc *src;
    w2l__my *my;
    w2l_lake *lake;
    w2l__routes *routes;
    vtable *t;
    size_t nt;
    size_t chunk;
    int64_t t0;
    w2l_verify_progress prog;
    w2l_buf sql;
} verify;

/* ---- small helpers ---- */

static int64_t mono_ms(void) { return w2l__mono_ns() / 1000000; }

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void progress(verify *v)
{
    if (!v->o->on_progress) return;
    v->prog.elapsed_ms = mono_ms() - v->t0;
    v->o->on_progress(v->o->ctx, &v->prog);
}

static w2l_rc quote(void *ctx, w2l_buf *b, const char *s, size_t len, w2l_error *err)
{
    return w2l__my_append_literal(ctx, b, s, len, err);
}

static w2l_rc table_ident(const vtable *t, w2l_buf *b, w2l_error *err)
{
    W2L_TRY(w2l__verify_ident(t->src->db, b, err));
    W2L_TRY(w2l_buf_append(b, ".", 1, err));
    return w2l__verify_ident(t->src->name, b, err);
}

/* (a > x) OR (a = x AND b > y) ...: the keys above k (upper 0), or at most k (upper 1). */
static w2l_rc key_cond(verify *v, const vtable *t, w2l__vkeyval k, int upper, w2l_buf *b,
                       w2l_error *err)
{
    W2L_TRY(w2l_buf_append(b, "(", 1, err));
    for (size_t i = 0; i < t->npk; i++) {
        if (i) W2L_TRY(w2l_buf_append(b, " OR ", 4, err));
        W2L_TRY(w2l_buf_append(b, "(", 1, err));
        for (size_t j = 0; j <= i; j++) {
            const vcol *c = &t->cols[t->pk[j]];
            if (j) W2L_TRY(w2l_buf_append(b, " AND ", 5, err));
            W2L_TRY(w2l__verify_ident(c->name, b, err));
            const char *op = j < i ? " = " : upper ? (i + 1 == t->npk ? " <= " : " < ") : " > ";
            W2L_TRY(w2l__buf_printf(b, err, "%s", op));
            W2L_TRY(w2l__verify_literal(t->ks[j], k.p[j], k.len[j], quote, v->my, b, err));
        }
        W2L_TRY(w2l_buf_append(b, ")", 1, err));
    }
    return w2l_buf_append(b, ")", 1, err);
}

/* " WHERE ..." of range i (nothing for a whole table or a single range). */
static w2l_rc range_where(verify *v, const vtable *t, size_t i, w2l_buf *b, w2l_error *err)
{
    int lo = i > 0, hi = i < t->nb;
    if (!lo && !hi) return W2L_OK;
    W2L_TRY(w2l_buf_append(b, " WHERE ", 7, err));
    if (lo) W2L_TRY(key_cond(v, t, t->bounds[i - 1], 0, b, err));
    if (lo && hi) W2L_TRY(w2l_buf_append(b, " AND ", 5, err));
    if (hi) W2L_TRY(key_cond(v, t, t->bounds[i], 1, b, err));
    return W2L_OK;
}

static w2l_rc order_by(const vtable *t, w2l_buf *b, w2l_error *err)
{
    W2L_TRY(w2l_buf_append(b, " ORDER BY ", 10, err));
    for (size_t i = 0; i < t->npk; i++) {
        if (i) W2L_TRY(w2l_buf_append(b, ",", 1, err));
        W2L_TRY(w2l__verify_ident(t->cols[t->pk[i]].name, b, err));
    }
    return W2L_OK;
}

static w2l_rc key_select(const vtable *t, w2l_buf *b, w2l_error *err)
{
    for (size_t i = 0; i < t->npk; i++) {
        const vcol *c = &t->cols[t->pk[i]];
        if (i) W2L_TRY(w2l_buf_append(b, ",", 1, err));
        W2L_TRY(w2l__verify_sql_key(t->ks[i], c->form, c->name, b, err));
    }
    return W2L_OK;
}

/* The SQL of a row's hash. */
static w2l_rc hash_expr(const vtable *t, w2l_buf *b, w2l_error *err)
{
    W2L_TRY(w2l__buf_printf(b, err, "%s", "CAST(CONV(LEFT(SHA2(CONCAT_WS(','"));
    size_t n = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        const vcol *c = &t->cols[i];
        if (c->excluded) continue;
        W2L_TRY(w2l__buf_printf(b, err, ",IFNULL("));
        W2L_TRY(w2l__verify_sql_expr(c->form, c->name, b, err));
        W2L_TRY(w2l__buf_printf(b, err, ",'~')"));
        n++;
    }
    if (!n) W2L_TRY(w2l__buf_printf(b, err, ",''"));
    return w2l__buf_printf(b, err, "),256),16),16,10) AS UNSIGNED)");
}

static w2l_rc cstr(verify *v, w2l_error *err) { return w2l__buf_cstr(&v->sql, err); }

/* ---- tables ---- */

typedef struct snaps {
    verify *v;
    int found;
} snaps;

static int on_table(void *ctx, const w2l_table_info *info)
{
    snaps *s = ctx;
    for (size_t i = 0; i < s->v->nt; i++) {
        vtable *t = &s->v->t[i];
        if (!strcmp(t->ns, info->ns) && !strcmp(t->lname, info->table)) {
            t->snap = info->current_snapshot_id;
            t->no_lake = 0;
            s->found++;
        }
    }
    return 0;
}

/* Every table's current snapshot (no_lake for a table the lake lacks). */
static w2l_rc read_snapshots(verify *v, w2l_error *err)
{
    for (size_t i = 0; i < v->nt; i++) v->t[i].no_lake = 1;
    snaps s = {v, 0};
    return w2l_lake_tables(v->lake, on_table, &s, err);
}

static void table_free(vtable *t)
{
    w2l__arena_release(&t->arena);
    w2l__arena_release(&t->rarena);
    w2l__free(t->rows);
}

static void exclude(verify *v, vtable *t, vcol *c, const char *why)
{
    char tn[32];
    w2l__log_table(W2L_LOG_WARN, t->src->db, t->src->name,
                   "verify: %s.%s: column %s (%s) left out of the checksum: %s", t->src->db,
                   t->src->name, c->name,
                   c->mt.name[0] ? c->mt.name : w2l_type_format(c->lake, tn, sizeof tn), why);
    c->excluded = 1;
    v->sum->columns_excluded++;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) w2l__free(v[i]);
    w2l__free(v);
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lake tables that routes send selected source tables to, "ns.name" sorted (one entry
 * per source table), into *out (*nout entries). */
static w2l_rc route_targets(verify *v, char ***out, size_t *nout, w2l_error *err)
{
    size_t n = w2l__mysrc_ntables(v->src), k = 0;
    char **a = w2l__calloc(n ? n : 1, sizeof *a);
    W2L_NOMEM_IF(!a, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const w2l__mysrc_table *st = w2l__mysrc_table_at(v->src, i);
        const char *ns, *name;
        const w2l__route *route;
        rc = w2l__routes_map(v->routes, st->db, st->name, &ns, &name, &route, err);
        if (rc != W2L_OK || !route) continue;
        a[k] = w2l__asprintf("%s.%s", ns, name);
        if (!a[k++]) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    qsort(a, k, sizeof *a, by_str);
    *out = a;
    *nout = k;
    return rc;
}

/* How many selected source tables routes send to ns.name. */
static size_t route_sources(char **targets, size_t n, const char *ns, const char *name)
{
    char key[600];
    snprintf(key, sizeof key, "%s.%s", ns, name);
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += !strcmp(targets[i], key);
    return c;
}

static w2l_rc plan_tables(verify *v, char **targets, size_t ntargets, w2l_error *err)
{
    size_t n = w2l__mysrc_ntables(v->src);
    const w2l__type_opts *topts = w2l__mysrc_topts(v->src);
    for (size_t i = 0; i < n; i++) {
        const w2l__mysrc_table *st = w2l__mysrc_table_at(v->src, i);
        if (v->o->table) {
            size_t dl = strlen(st->db);
            if (strncmp(v->o->table, st->db, dl) || v->o->table[dl] != '.' ||
                strcmp(v->o->table + dl + 1, st->name))
                continue;
        }
        const char *ns, *name;
        const w2l__route *route;
        W2L_TRY(w2l__routes_map(v->routes, st->db, st->name, &ns, &name, &route, err));
        if (route && route_sources(targets, ntargets, ns, name) > 1 && v->o->table)
            return w2l__fail(err, W2L_NOTFOUND,
                             "%s.%s is routed (route.%s) into %s.%s with other tables: "
                             "it has no lake table of its own to compare with",
                             st->db, st->name, route->name, ns, name);
        if (route && route_sources(targets, ntargets, ns, name) > 1) {
            w2l__log_table(W2L_LOG_WARN, st->db, st->name,
                           "verify: %s.%s is routed (route.%s) into %s.%s with other tables: not "
                           "compared",
                           st->db, st->name, route->name, ns, name);
            v->sum->tables_skipped++;
            continue;
        }
        vtable *t = &v->t[v->nt++];
        t->src = st;
        w2l__arena_init(&t->arena, 64 * 1024);
        w2l__arena_init(&t->rarena, 256 * 1024);
        t->ns = w2l__arena_strndup(&t->arena, ns, strlen(ns));
        t->lname = w2l__arena_strndup(&t->arena, name, strlen(name));
        t->cols = w2l__arena_alloc(&t->arena, (st->ncols + 1) * sizeof *t->cols);
        t->pk = w2l__arena_alloc(&t->arena, (st->npk + 1) * sizeof *t->pk);
        t->ks = w2l__arena_alloc(&t->arena, (st->npk + 1) * sizeof *t->ks);
        W2L_NOMEM_IF(!t->ns || !t->lname || !t->cols || !t->pk || !t->ks, err);
        memset(t->cols, 0, (st->ncols + 1) * sizeof *t->cols);
        t->ncols = st->ncols;
        for (size_t k = 0; k < st->ncols; k++) {
            vcol *c = &t->cols[k];
            c->name = st->cols[k].name;
            w2l_rc rc = w2l__mysql_type_map_text(st->cols[k].type, strlen(st->cols[k].type),
                                                 topts, c->name, NULL, &c->expect, &c->mt, err);
            if (rc == W2L_SCHEMA) { /* no lake type: the lake has no such column either */
                exclude(v, t, c, "it has no lake type");
                continue;
            }
            if (rc != W2L_OK) {
                w2l__error_prefix(err, "%s.%s: ", st->db, st->name);
                return rc;
            }
            c->lake = c->expect;
        }
        t->npk = st->npk;
        for (size_t k = 0; k < st->npk; k++) t->pk[k] = st->pk[k];
    }
    if (v->o->table && !v->nt && !v->sum->tables_skipped)
        return w2l__fail(err, W2L_NOTFOUND,
                         "%s is not a table the source selects (databases=, tables=, "
                         "include, exclude)",
                         v->o->table);
    return W2L_OK;
}

/* The tables to compare: every selected table of the source, or opts->table. A table a
 * route sends to a lake table of its own is compared with that table; one a route merges
 * with others is not. */
static w2l_rc plan(verify *v, w2l_error *err)
{
    size_t n = w2l__mysrc_ntables(v->src), ntargets = 0;
    char **targets = NULL;
    v->t = w2l__calloc(n ? n : 1, sizeof *v->t);
    W2L_NOMEM_IF(!v->t, err);
    if (v->routes) {
        w2l_rc rc = route_targets(v, &targets, &ntargets, err);
        if (rc != W2L_OK) {
            free_strv(targets, ntargets);
            return rc;
        }
    }
    w2l_rc rc = plan_tables(v, targets, ntargets, err);
    free_strv(targets, ntargets);
    return rc;
}
/* The column's form now that its lake type is known; a warning when it has none. */
static void fix_forms(vtable *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        vcol *c = &t->cols[i];
        if (c->excluded) continue;
        c->form = w2l__verify_form(&c->mt, c->lake);
        c->key = w2l__verify_key_kind(&c->mt, c->lake);
    }
    for (size_t k = 0; k < t->npk; k++) {
        t->ks[k] = t->cols[t->pk[k]].key;
        if (t->cols[t->pk[k]].excluded || t->ks[k] == VK_NONE) {
            w2l__log_table(W2L_LOG_WARN, t->src->db, t->src->name,
                           "verify: %s.%s: key column %s cannot bound ranges (its type): the "
                           "table is compared whole",
                           t->src->db, t->src->name, t->cols[t->pk[k]].name);
            t->npk = 0;
            break;
        }
    }
}

/* ---- the lake ---- */

typedef struct scanctx {
    verify *v;
    vtable *t;
    const w2l_schema *schema;
    long *idx;           /* lake field per column; -1 none */
    int probe;           /* stop at the first row: its schema is all that is wanted */
    int pass2;           /* only differing ranges, and keep their rows */
    w2l_buf text, key;
    size_t *koff;
    w2l__vkeyval kv;
    const char **kp;
    size_t *kl;
    w2l_error *err;
    w2l_rc rc;
} scanctx;

static int map_schema(scanctx *s, const w2l_schema *schema)
{
    vtable *t = s->t;
    s->schema = schema;
    for (size_t i = 0; i < t->ncols; i++) {
        long k = w2l_schema_index_of_name(schema, t->cols[i].name);
        if (k < 0) {
            size_t n = w2l_schema_field_count(schema);
            for (size_t j = 0; j < n; j++)
                if (!strcasecmp(w2l_schema_field(schema, j)->name, t->cols[i].name)) k = (long)j;
        }
        s->idx[i] = k;
        if (k >= 0 && s->probe) t->cols[i].lake = w2l_schema_field(schema, (size_t)k)->type;
    }
    return 0;
}

static w2l_rc keep_row(vtable *t, size_t range, const w2l_buf *key, uint64_t h, int lake,
                       w2l_error *err)
{
    if (t->nrows == t->rcap) {
        size_t nc = t->rcap ? t->rcap * 2 : 256;
        vrow *n = w2l__realloc(t->rows, nc * sizeof *n);
        W2L_NOMEM_IF(!n, err);
        t->rows = n;
        t->rcap = nc;
    }
    char *k = w2l__arena_alloc(&t->rarena, key->len ? key->len : 1);
    W2L_NOMEM_IF(!k, err);
    if (key->len) memcpy(k, key->data, key->len);
    t->rows[t->nrows++] = (vrow){range, k, key->len, h, lake};
    return W2L_OK;
}

/* Appends a key text to b as a 4-byte length and its bytes (the exact comparison's key). */
static w2l_rc put_keypart(w2l_buf *b, const char *s, size_t n, w2l_error *err)
{
    unsigned char l[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8), (unsigned char)n};
    W2L_TRY(w2l_buf_append(b, l, 4, err));
    return w2l_buf_append(b, s, n, err);
}

static w2l_rc scan_row(scanctx *s, const w2l_value *row, size_t n)
{
    vtable *t = s->t;
    w2l_error *err = s->err;
    static const w2l_value null = {.is_null = 1};
    size_t range = 0;
    s->key.len = 0;
    if (t->npk) {
        for (size_t k = 0; k < t->npk; k++) {
            const vcol *c = &t->cols[t->pk[k]];
            long li = s->idx[t->pk[k]];
            const w2l_value *val = li >= 0 && (size_t)li < n ? &row[li] : &null;
            s->koff[k] = s->key.len;
            if (!val->is_null)
                W2L_TRY(w2l__verify_key_text(t->ks[k], c->form, c->lake, val, &s->key, err));
            s->kl[k] = s->key.len - s->koff[k];
        }
        for (size_t k = 0; k < t->npk; k++) s->kp[k] = (const char *)s->key.data + s->koff[k];
        range = w2l__verify_bucket(t->ks, t->npk, t->bounds, t->nb, s->kv);
    }
    if (s->pass2 && !t->r[range].differs) return W2L_OK;
    s->text.len = 0;
    int first = 1;
    for (size_t i = 0; i < t->ncols; i++) {
        const vcol *c = &t->cols[i];
        if (c->excluded) continue;
        if (!first) W2L_TRY(w2l_buf_append(&s->text, ",", 1, err));
        first = 0;
        long li = s->idx[i];
        const w2l_value *val = li >= 0 && (size_t)li < n ? &row[li] : &null;
        W2L_TRY(w2l__verify_canon(c->form, c->lake, val, &s->text, err));
    }
    uint64_t h = w2l__verify_hash(s->text.data, s->text.len);
    vsum *a = &t->r[range].lake;
    a->n++;
    a->x ^= h;
    a->s += h;
    s->v->prog.rows++;
    if (s->pass2 && t->npk) {
        w2l_buf kb = {0};
        w2l_rc rc = W2L_OK;
        for (size_t k = 0; rc == W2L_OK && k < t->npk; k++)
            rc = put_keypart(&kb, s->kp[k], s->kl[k], err);
        if (rc == W2L_OK) rc = keep_row(t, range, &kb, h, 1, err);
        w2l_buf_release(&kb);
        return rc;
    }
    return W2L_OK;
}

static int on_row(void *ctx, const w2l_schema *schema, const w2l_value *row, size_t n)
{
    scanctx *s = ctx;
    if (schema != s->schema) map_schema(s, schema);
    if (s->probe) return 1;
    s->rc = scan_row(s, row, n);
    return s->rc != W2L_OK;
}

/* Scans the lake table at t->snap: probe (its schema only) or bucket its rows. */
static w2l_rc scan_lake(verify *v, vtable *t, int probe, int pass2, w2l_error *err)
{
    scanctx s;
    memset(&s, 0, sizeof s);
    s.v = v;
    s.t = t;
    s.probe = probe;
    s.pass2 = pass2;
    s.err = err;
    size_t np = t->npk ? t->npk : 1;
    s.idx = w2l__calloc(t->ncols + 1, sizeof *s.idx);
    s.koff = w2l__calloc(np, sizeof *s.koff);
    s.kp = w2l__calloc(np, sizeof *s.kp);
    s.kl = w2l__calloc(np, sizeof *s.kl);
    w2l_rc rc = W2L_OK;
    if (!s.idx || !s.koff || !s.kp || !s.kl) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    s.kv.p = s.kp;
    s.kv.len = s.kl;
    if (rc == W2L_OK && t->snap >= 0) {
        rc = w2l_lake_scan(v->lake, t->ns, t->lname, t->snap, on_row, &s, err);
        if (rc == W2L_CANCELLED) rc = probe ? W2L_OK : s.rc;
        if (rc != W2L_OK) w2l__error_prefix(err, "lake table %s.%s: ", t->ns, t->lname);
    }
    if (rc == W2L_OK && probe && s.schema) /* columns the lake lacks */
        for (size_t i = 0; i < t->ncols; i++)
            if (!t->cols[i].excluded && s.idx[i] < 0)
                exclude(v, t, &t->cols[i], "the lake table has no such column");
    w2l__free(s.idx);
    w2l__free(s.koff);
    w2l__free(s.kp);
    w2l__free(s.kl);
    w2l_buf_release(&s.text);
    w2l_buf_release(&s.key);
    return rc;
}

/* ---- the source ---- */

/* Range bounds: the key chunk-1 rows after the last bound, until there is none. */
static w2l_rc read_bounds(verify *v, vtable *t, w2l_error *err)
{
    size_t cap = 0;
    t->nb = 0;
    for (;;) {
        v->sql.len = 0;
        W2L_TRY(w2l__buf_printf(&v->sql, err, "SELECT "));
        W2L_TRY(key_select(t, &v->sql, err));
        W2L_TRY(w2l__buf_printf(&v->sql, err, " FROM "));
        W2L_TRY(table_ident(t, &v->sql, err));
        if (t->nb) {
            W2L_TRY(w2l__buf_printf(&v->sql, err, " WHERE "));
            W2L_TRY(key_cond(v, t, t->bounds[t->nb - 1], 0, &v->sql, err));
        }
        W2L_TRY(order_by(t, &v->sql, err));
        W2L_TRY(w2l__buf_printf(&v->sql, err, " LIMIT 1 OFFSET %zu", v->chunk - 1));
        W2L_TRY(cstr(v, err));
        w2l__my_res *r;
        W2L_TRY(w2l__my_query(v->my, (char *)v->sql.data, 0, &r, err));
        char **row;
        unsigned long *len;
        int k = w2l__my_row(r, &row, &len, err);
        w2l_rc rc = k < 0 ? err->code : W2L_OK;
        if (k > 0) {
            if (t->nb == cap) {
                size_t nc = cap ? cap * 2 : 16;
                w2l__vkeyval *nbd = w2l__realloc(t->bounds, nc * sizeof *nbd);
                if (!nbd) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                else t->bounds = nbd, cap = nc;
            }
            const char **p = w2l__arena_alloc(&t->arena, t->npk * sizeof *p);
            size_t *l = w2l__arena_alloc(&t->arena, t->npk * sizeof *l);
            if (rc == W2L_OK && (!p || !l)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            for (size_t i = 0; rc == W2L_OK && i < t->npk; i++) {
                l[i] = row[i] ? len[i] : 0;
                p[i] = w2l__arena_strndup(&t->arena, row[i] ? row[i] : "", l[i]);
                if (!p[i]) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            }
            if (rc == W2L_OK) t->bounds[t->nb++] = (w2l__vkeyval){p, l};
        }
        w2l__my_res_free(r);
        W2L_TRY(rc);
        if (k == 0) break;
    }
    return W2L_OK;
}

/* The server's count and checksums of range i. */
static w2l_rc source_sum(verify *v, vtable *t, size_t i, w2l_error *err)
{
    v->sql.len = 0;
    W2L_TRY(w2l__buf_printf(&v->sql, err,
                            "SELECT COUNT(*), COALESCE(BIT_XOR(h),0), "
                            "COALESCE(CAST(SUM(h) %% 18446744073709551616 AS UNSIGNED),0) "
                            "FROM (SELECT "));
    W2L_TRY(hash_expr(t, &v->sql, err));
    W2L_TRY(w2l__buf_printf(&v->sql, err, " AS h FROM "));
    W2L_TRY(table_ident(t, &v->sql, err));
    W2L_TRY(range_where(v, t, i, &v->sql, err));
    W2L_TRY(w2l__buf_printf(&v->sql, err, ") v"));
    W2L_TRY(cstr(v, err));
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(v->my, (char *)v->sql.data, 0, &r, err));
    char **row;
    unsigned long *len;
    int k = w2l__my_row(r, &row, &len, err);
    w2l_rc rc = k < 0 ? err->code : W2L_OK;
    vsum *a = &t->r[i].src;
    if (k > 0) {
        a->n = row[0] ? strtoull(row[0], NULL, 10) : 0;
        a->x = row[1] ? strtoull(row[1], NULL, 10) : 0;
        a->s = row[2] ? strtoull(row[2], NULL, 10) : 0;
    }
    w2l__my_res_free(r);
    v->prog.rows += a->n;
    return rc;
}

/* The server's rows of range i (key and hash) into t->rows. */
static w2l_rc source_rows(verify *v, vtable *t, size_t i, w2l_error *err)
{
    v->sql.len = 0;
    W2L_TRY(w2l__buf_printf(&v->sql, err, "SELECT "));
    W2L_TRY(key_select(t, &v->sql, err));
    W2L_TRY(w2l__buf_printf(&v->sql, err, ","));
    W2L_TRY(hash_expr(t, &v->sql, err));
    W2L_TRY(w2l__buf_printf(&v->sql, err, " FROM "));
    W2L_TRY(table_ident(t, &v->sql, err));
    W2L_TRY(range_where(v, t, i, &v->sql, err));
    W2L_TRY(cstr(v, err));
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(v->my, (char *)v->sql.data, 1, &r, err));
    char **row;
    unsigned long *len;
    int k;
    w2l_rc rc = W2L_OK;
    w2l_buf kb = {0};
    while (rc == W2L_OK && (k = w2l__my_row(r, &row, &len, err)) > 0) {
        kb.len = 0;
        for (size_t c = 0; rc == W2L_OK && c < t->npk; c++)
            rc = put_keypart(&kb, row[c] ? row[c] : "", row[c] ? len[c] : 0, err);
        uint64_t h = row[t->npk] ? strtoull(row[t->npk], NULL, 10) : 0;
        if (rc == W2L_OK) rc = keep_row(t, i, &kb, h, 0, err);
    }
    if (rc == W2L_OK && k < 0) rc = err->code;
    w2l_buf_release(&kb);
    w2l__my_res_free(r);
    return rc;
}

/* ---- the passes ---- */

static int sums_differ(const vrange *r)
{
    return r->src.n != r->lake.n || r->src.x != r->lake.x || r->src.s != r->lake.s;
}

/* The first pass of one table: schema, bounds, the lake's sums, the server's sums. */
static w2l_rc first_pass(verify *v, vtable *t, w2l_error *err)
{
    if (!t->no_lake) W2L_TRY(scan_lake(v, t, 1, 0, err));
    fix_forms(t);
    for (size_t i = 0; i < t->ncols; i++)
        if (!t->cols[i].excluded && t->cols[i].form == VF_NONE)
            exclude(v, t, &t->cols[i], "its lake type has no canonical form in common with it");
    if (t->npk) W2L_TRY(read_bounds(v, t, err));
    t->r = w2l__arena_alloc(&t->arena, (t->nb + 1) * sizeof *t->r);
    W2L_NOMEM_IF(!t->r, err);
    memset(t->r, 0, (t->nb + 1) * sizeof *t->r);
    if (!t->no_lake) W2L_TRY(scan_lake(v, t, 0, 0, err));
    for (size_t i = 0; i <= t->nb; i++) {
        W2L_TRY(source_sum(v, t, i, err));
        t->r[i].differs = t->no_lake ? t->r[i].src.n > 0 : sums_differ(&t->r[i]);
        t->ndiff += t->r[i].differs;
        v->sum->source_rows += t->r[i].src.n;
        v->sum->lake_rows += t->r[i].lake.n;
        v->prog.ranges_done++;
        progress(v);
    }
    v->sum->ranges += t->nb + 1;
    v->sum->tables++;
    return W2L_OK;
}

/* Waits for the lake's next commit of every table that differs (a job runs), or settles
 * (none runs). */
static w2l_rc wait_commits(verify *v, w2l_error *err)
{
    int64_t settle = v->o->settle_ms ? v->o->settle_ms : 2000;
    int64_t timeout = v->o->timeout_ms > 0 ? v->o->timeout_ms : 60000;
    w2l_state_holder h;
    w2l_error e2;
    if (w2l_lake_holder(v->lake, &h, &e2) != W2L_OK) {
        if (settle > 0) sleep_ms(settle);
        return read_snapshots(v, err);
    }
    int64_t *before = w2l__calloc(v->nt + 1, sizeof *before);
    W2L_NOMEM_IF(!before, err);
    for (size_t i = 0; i < v->nt; i++) before[i] = v->t[i].snap;
    int64_t end = mono_ms() + timeout;
    w2l_rc rc = W2L_OK;
    for (;;) {
        rc = read_snapshots(v, err);
        if (rc != W2L_OK) break;
        int waiting = 0;
        for (size_t i = 0; i < v->nt; i++)
            if (v->t[i].ndiff && !v->t[i].no_lake && v->t[i].snap == before[i]) waiting = 1;
        if (!waiting || mono_ms() >= end) break;
        sleep_ms(POLL_MS);
    }
    w2l__free(before);
    return rc;
}

static int row_cmp(const void *a, const void *b)
{
    const vrow *x = a, *y = b;
    size_t m = x->klen < y->klen ? x->klen : y->klen;
    int c = m ? memcmp(x->key, y->key, m) : 0;
    if (c) return c;
    if (x->klen != y->klen) return x->klen < y->klen ? -1 : 1;
    return x->lake - y->lake;
}

/* A report of one range: its keys that differ, found in the sorted rows. */
typedef struct report {
    w2l_buf *shown;      /* per range, the keys shown, NUL-separated */
    const char ***keys, ***what;
    size_t *nkeys;
    int *more;
} report;

static w2l_rc note_key(verify *v, vtable *t, report *rp, const vrow *r, const char *what,
                       w2l_error *err)
{
    size_t i = r->range;
    size_t limit = v->o->key_limit ? v->o->key_limit : 10;
    if (rp->nkeys[i] >= limit) {
        rp->more[i] = 1;
        return W2L_OK;
    }
    /* the key's texts back from their length prefixes */
    const char *p[64];
    size_t l[64];
    const unsigned char *k = (const unsigned char *)r->key;
    size_t off = 0;
    for (size_t c = 0; c < t->npk && c < 64; c++) {
        size_t n = (size_t)k[off] << 24 | (size_t)k[off + 1] << 16 | (size_t)k[off + 2] << 8 |
                   k[off + 3];
        p[c] = r->key + off + 4;
        l[c] = n;
        off += 4 + n;
    }
    w2l_buf b = {0};
    w2l_rc rc = w2l__verify_key_show(t->ks, t->npk, (w2l__vkeyval){p, l}, &b, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    char *s = rc == W2L_OK ? w2l__arena_strndup(&t->rarena, (char *)b.data, b.len) : NULL;
    w2l_buf_release(&b);
    W2L_TRY(rc);
    W2L_NOMEM_IF(!s, err);
    rp->keys[i][rp->nkeys[i]] = s;
    rp->what[i][rp->nkeys[i]++] = what;
    return W2L_OK;
}

static w2l_rc show_bound(const vtable *t, size_t i, char **out, w2l_error *err)
{
    w2l_buf b = {0};
    w2l_rc rc = w2l__verify_key_show(t->ks, t->npk, t->bounds[i], &b, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    *out = rc == W2L_OK ? (char *)b.data : NULL;
    if (rc != W2L_OK) w2l_buf_release(&b);
    return rc;
}

static w2l_rc emit(verify *v, vtable *t, size_t i, const report *rp, w2l_error *err)
{
    w2l_verify_range r;
    memset(&r, 0, sizeof r);
    r.db = t->src->db;
    r.table = t->src->name;
    r.ns = t->ns;
    r.lake_table = t->lname;
    char *lo = NULL, *hi = NULL;
    w2l_rc rc = W2L_OK;
    if (i > 0) rc = show_bound(t, i - 1, &lo, err);
    if (rc == W2L_OK && i < t->nb) rc = show_bound(t, i, &hi, err);
    r.lo = lo;
    r.hi = hi;
    r.source_rows = t->r[i].src.n;
    r.lake_rows = t->r[i].lake.n;
    r.source_checksum = t->r[i].src.x;
    r.lake_checksum = t->r[i].lake.x;
    r.what = t->no_lake ? "no lake table" : r.source_rows != r.lake_rows ? "rows" : "checksum";
    if (rp) {
        r.nkeys = rp->nkeys[i];
        r.keys = rp->keys[i];
        r.key_what = rp->what[i];
        r.more_keys = rp->more[i];
    }
    v->sum->ranges_differing++;
    if (rc == W2L_OK && v->o->on_range && v->o->on_range(v->o->ctx, &r))
        rc = w2l__fail(err, W2L_CANCELLED, "stopped by the caller");
    w2l__free(lo);
    w2l__free(hi);
    return rc;
}

/* The re-check of one table that differed: sums again (the lake's rows of those ranges
 * kept), then row by row. */
static w2l_rc recheck(verify *v, vtable *t, w2l_error *err)
{
    v->prog.recheck = 1;
    v->sum->ranges_rechecked += t->ndiff;
    if (t->no_lake) { /* still none: report the whole table */
        for (size_t i = 0; i <= t->nb; i++)
            if (t->r[i].differs) W2L_TRY(emit(v, t, i, NULL, err));
        return W2L_OK;
    }
    for (size_t i = 0; i <= t->nb; i++) {
        if (!t->r[i].differs) continue;
        memset(&t->r[i].lake, 0, sizeof t->r[i].lake);
    }
    W2L_TRY(scan_lake(v, t, 0, 1, err));
    size_t still = 0;
    for (size_t i = 0; i <= t->nb; i++) {
        if (!t->r[i].differs) continue;
        W2L_TRY(source_sum(v, t, i, err));
        t->r[i].differs = sums_differ(&t->r[i]);
        still += t->r[i].differs;
        v->prog.ranges_done++;
        progress(v);
    }
    if (!still) return W2L_OK;
    if (!t->npk) { /* no key to compare rows by */
        for (size_t i = 0; i <= t->nb; i++)
            if (t->r[i].differs) W2L_TRY(emit(v, t, i, NULL, err));
        return W2L_OK;
    }
    /* row by row: the server's rows of the ranges that still differ, the lake's kept ones
     * of those ranges, matched by key */
    for (size_t i = 0; i <= t->nb; i++)
        if (t->r[i].differs) W2L_TRY(source_rows(v, t, i, err));
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++)
        if (t->r[t->rows[i].range].differs) t->rows[n++] = t->rows[i];
    t->nrows = n;
    qsort(t->rows, n, sizeof *t->rows, row_cmp);
    size_t nr = t->nb + 1, limit = v->o->key_limit ? v->o->key_limit : 10;
    report rp;
    memset(&rp, 0, sizeof rp);
    rp.keys = w2l__calloc(nr, sizeof *rp.keys);
    rp.what = w2l__calloc(nr, sizeof *rp.what);
    rp.nkeys = w2l__calloc(nr, sizeof *rp.nkeys);
    rp.more = w2l__calloc(nr, sizeof *rp.more);
    w2l_rc rc = rp.keys && rp.what && rp.nkeys && rp.more
                    ? W2L_OK
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nr; i++) {
        if (!t->r[i].differs) continue;
        rp.keys[i] = w2l__arena_alloc(&t->rarena, limit * sizeof **rp.keys);
        rp.what[i] = w2l__arena_alloc(&t->rarena, limit * sizeof **rp.what);
        if (!rp.keys[i] || !rp.what[i]) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    int *bad = w2l__calloc(nr, sizeof *bad);
    if (rc == W2L_OK && !bad) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < n;) {
        const vrow *a = &t->rows[i];
        const vrow *b = i + 1 < n ? &t->rows[i + 1] : NULL;
        if (b && !a->lake && b->lake && a->klen == b->klen &&
            (!a->klen || !memcmp(a->key, b->key, a->klen))) {
            if (a->h != b->h) {
                bad[a->range] = 1;
                rc = note_key(v, t, &rp, a, "changed", err);
            }
            i += 2;
            continue;
        }
        bad[a->range] = 1;
        rc = note_key(v, t, &rp, a, a->lake ? "extra" : "missing", err);
        i++;
    }
    for (size_t i = 0; rc == W2L_OK && i < nr; i++)
        if (t->r[i].differs && bad[i]) rc = emit(v, t, i, &rp, err);
    w2l__free(bad);
    w2l__free(rp.keys);
    w2l__free(rp.what);
    w2l__free(rp.nkeys);
    w2l__free(rp.more);
    return rc;
}

static w2l_rc run(verify *v, w2l_error *err)
{
    W2L_TRY(w2l__routes_new(v->conf, &v->routes, err));
    W2L_TRY(w2l__mysrc_open(v->conf, &v->src, err));
    v->my = w2l__mysrc_conn(v->src);
    W2L_TRY(w2l_lake_open(v->conf, &v->lake, err));
    W2L_TRY(plan(v, err));
    W2L_TRY(read_snapshots(v, err));
    v->prog.tables = v->nt;
    if (v->o->table)
        for (size_t i = 0; i < v->nt; i++)
            if (v->t[i].no_lake)
                return w2l__fail(err, W2L_NOTFOUND, "%s.%s has no lake table %s.%s",
                                 v->t[i].src->db, v->t[i].src->name, v->t[i].ns, v->t[i].lname);
    size_t differing = 0;
    for (size_t i = 0; i < v->nt; i++) {
        w2l_rc rc = first_pass(v, &v->t[i], err);
        if (rc != W2L_OK && !strstr(err->msg, v->t[i].src->name))
            w2l__error_prefix(err, "%s.%s: ", v->t[i].src->db, v->t[i].src->name);
        W2L_TRY(rc);
        differing += v->t[i].ndiff != 0;
        v->prog.tables_done++;
        progress(v);
    }
    if (!differing) return W2L_OK;
    W2L_TRY(wait_commits(v, err));
    for (size_t i = 0; i < v->nt; i++) {
        if (!v->t[i].ndiff) continue;
        w2l_rc rc = recheck(v, &v->t[i], err);
        if (rc != W2L_OK && rc != W2L_CANCELLED && !strstr(err->msg, v->t[i].src->name))
            w2l__error_prefix(err, "%s.%s: ", v->t[i].src->db, v->t[i].src->name);
        W2L_TRY(rc);
    }
    return W2L_OK;
}

w2l_rc w2l_verify(const w2l_conf *conf, const w2l_verify_opts *opts, w2l_verify_summary *out,
                  w2l_error *err)
{
    w2l_verify_summary dummy;
    if (!out) out = &dummy;
    memset(out, 0, sizeof *out);
    if (!conf || !opts || opts->version < W2L_VERIFY_OPTS_V1)
        return w2l__fail(err, W2L_MISUSE, "w2l_verify: NULL conf or opts, or opts->version unset");
    verify v;
    memset(&v, 0, sizeof v);
    v.conf = conf;
    v.o = opts;
    v.sum = out;
    v.t0 = mono_ms();
    int64_t chunk = CHUNK_DEFAULT;
    if (w2l_conf_get_int(conf, "verify.chunk-rows", &chunk, NULL) != W2L_OK || chunk < 1)
        chunk = CHUNK_DEFAULT;
    v.chunk = (size_t)chunk;
    w2l_rc rc = run(&v, err);
    for (size_t i = 0; i < v.nt; i++) {
        table_free(&v.t[i]);
        w2l__free(v.t[i].bounds);
    }
    w2l__free(v.t);
    w2l_buf_release(&v.sql);
    w2l_lake_close(v.lake);
    w2l__mysrc_close(v.src);
    w2l__routes_free(v.routes);
    out->elapsed_ms = mono_ms() - v.t0;
    return rc;
}
