/*
 * The emitter (emit.h): validation, copy into per-table arena batches, hand-over.
 * Tables are found through an open-addressing hash map keyed by (ns, table); an entry
 * outlives its batches, so a steady stream allocates only when a batch is started.
 */
#include <stdio.h>

#include "emit.h"
#include "../common/thread.h"
#include "../model/model.h"

/* Tables whose changes keep their order among each other (w2l__emitter_set_group). */
typedef struct egroup {
    char *name;
    const char *last; /* the key of the slot whose batch may be open; NULL none */
    struct egroup *next;
} egroup;

typedef struct slot {
    uint64_t hash;
    char *key; /* "ns\0table\0", w2l__malloc */
    size_t klen, nlen; /* nlen: strlen(ns); the table's name is at key + nlen + 1 */
    w2l__batch *open;
    /* The open batch's schema, indexed (in its arena, made with it): its string and binary
     * columns, then its required ones. Valid while the batch is open: the batch holds a
     * reference, so the schema is immutable and its address is not reused meanwhile. */
    const uint32_t *cols;
    size_t ncols, nbytes, nreq;
    size_t last_n; /* changes in its last batch: the next one's first capacity */
    egroup *group; /* NULL: none */
} slot;

struct w2l_emitter {
    w2l__emit_hooks hooks;
    w2l__emit_quarantine_fn quarantine;
    size_t batch_rows;
    slot *slots;
    size_t nslots, used;
    slot *hot; /* the slot found last (a stream often names one table many times running) */
    char *position;
    size_t poslen, poscap;
    uint64_t rows;
    int in_txn;
    w2l__emit_group_fn group_of;
    egroup *groups;
    int64_t progress_ms; /* w2l_emit_progress(): the largest mark; -1 none */
    atomic_int snapshot;         /* w2l__emitter_set_snapshot() */
    mtx_t snap_mu;               /* snap: w2l__emitter_set_snapshot_progress() */
    w2l__snap_progress snap;
    atomic_ullong reconnects;    /* w2l__emitter_reconnected() */
    int held;                    /* rows are held since the last flush */
    atomic_llong held_ms;        /* since when (wall ms); 0: none (w2l__emitter_held_ms()) */
    w2l__arena_pool *pool;       /* the full-size blocks of batches' arenas */
};

/* A batch's arena: blocks from 1 KiB doubling up to BATCH_BLOCK, so a table holding a few
 * rows open stays small, and a full batch (4096 rows of a few hundred bytes) is some twenty
 * full-size blocks. The writers free batches on their threads; with the blocks handed back to
 * malloc the source thread's heap shrank and every batch faulted fresh pages in. The pool
 * keeps up to POOL_BLOCKS of them (4 MiB, a few batches) for the next batches instead. */
#define BATCH_BLOCK (64 * 1024)
#define POOL_BLOCKS 64

#define TABLE_HASH_SEED 0x5ca1ab1eULL

uint64_t w2l__table_hash(const char *ns, const char *table)
{
    return w2l__hash64(table, strlen(table), w2l__hash64(ns, strlen(ns), TABLE_HASH_SEED));
}

w2l__batch *w2l__batch_ref(w2l__batch *b)
{
    atomic_fetch_add(&b->refs, 1);
    return b;
}

void w2l__batch_free(w2l__batch *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) > 1) return;
    w2l_schema_unref(b->schema);
    w2l__arena_release(&b->arena);
    w2l__free(b->changes);
    w2l__free(b);
}

void w2l__ddl_elem_free(w2l__ddl_elem *d)
{
    if (!d) return;
    w2l_schema_unref((w2l_schema *)d->ddl.schema_after);
    w2l__arena_release(&d->arena);
    w2l__free(d);
}

w2l_emitter *w2l__emitter_new(const w2l__emit_hooks *hooks, size_t batch_rows)
{
    w2l_emitter *em = w2l__calloc(1, sizeof *em);
    if (!em) return NULL;
    em->hooks = *hooks;
    em->batch_rows = batch_rows ? batch_rows : 4096;
    em->progress_ms = -1;
    em->nslots = 64;
    em->slots = w2l__calloc(em->nslots, sizeof *em->slots);
    em->pool = w2l__arena_pool_new(BATCH_BLOCK, POOL_BLOCKS);
    if (!em->slots || !em->pool || mtx_init(&em->snap_mu, mtx_plain) != thrd_success) {
        w2l__free(em->slots);
        w2l__arena_pool_unref(em->pool);
        w2l__free(em);
        return NULL;
    }
    return em;
}

void w2l__emitter_set_quarantine(w2l_emitter *em, w2l__emit_quarantine_fn fn)
{
    em->quarantine = fn;
}

void w2l__emitter_free(w2l_emitter *em)
{
    if (!em) return;
    for (size_t i = 0; i < em->nslots; i++) {
        w2l__batch_free(em->slots[i].open);
        w2l__free(em->slots[i].key);
    }
    w2l__free(em->slots);
    w2l__free(em->position);
    w2l__arena_pool_unref(em->pool); /* batches still in the pipeline hold it too */
    while (em->groups) {
        egroup *g = em->groups;
        em->groups = g->next;
        w2l__free(g->name);
        w2l__free(g);
    }
    mtx_destroy(&em->snap_mu);
    w2l__free(em);
}

void w2l__emitter_set_group(w2l_emitter *em, w2l__emit_group_fn fn) { em->group_of = fn; }

/* The group of a new slot for ns.table (NULL: none). */
static w2l_rc group_of(w2l_emitter *em, const char *ns, const char *table, egroup **out,
                       w2l_error *err)
{
    *out = NULL;
    const char *name = em->group_of ? em->group_of(em->hooks.ctx, ns, table) : NULL;
    if (!name) return W2L_OK;
    egroup *g = em->groups;
    while (g && strcmp(g->name, name)) g = g->next;
    if (!g) {
        g = w2l__calloc(1, sizeof *g);
        char *copy = g ? w2l__strdup(name) : NULL;
        if (!copy) {
            w2l__free(g);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        g->name = copy;
        g->next = em->groups;
        em->groups = g;
    }
    *out = g;
    return W2L_OK;
}

static w2l_rc grow_map(w2l_emitter *em, w2l_error *err)
{
    size_t n = em->nslots * 2;
    slot *ns = w2l__calloc(n, sizeof *ns);
    W2L_NOMEM_IF(!ns, err);
    for (size_t i = 0; i < em->nslots; i++) {
        if (!em->slots[i].key) continue;
        size_t j = em->slots[i].hash & (n - 1);
        while (ns[j].key) j = (j + 1) & (n - 1);
        ns[j] = em->slots[i];
    }
    w2l__free(em->slots);
    em->slots = ns;
    em->nslots = n;
    em->hot = NULL;
    return W2L_OK;
}

/* The slot of (ns, table), created when absent. */
static w2l_rc find_slot(w2l_emitter *em, const char *ns, const char *table, slot **out,
                        w2l_error *err)
{
    slot *hot = em->hot;
    if (hot && !strcmp(hot->key, ns) && !strcmp(hot->key + hot->nlen + 1, table)) {
        *out = hot;
        return W2L_OK;
    }
    size_t nl = strlen(ns), tl = strlen(table), kl = nl + 1 + tl + 1;
    char stackkey[256];
    char *key = kl <= sizeof stackkey ? stackkey : w2l__malloc(kl);
    W2L_NOMEM_IF(!key, err);
    memcpy(key, ns, nl + 1);
    memcpy(key + nl + 1, table, tl + 1);
    uint64_t h = w2l__table_hash(ns, table);
    size_t i = h & (em->nslots - 1);
    while (em->slots[i].key) {
        if (em->slots[i].hash == h && em->slots[i].klen == kl &&
            memcmp(em->slots[i].key, key, kl) == 0) {
            if (key != stackkey) w2l__free(key);
            *out = em->hot = &em->slots[i];
            return W2L_OK;
        }
        i = (i + 1) & (em->nslots - 1);
    }
    if ((em->used + 1) * 4 > em->nslots * 3) {
        w2l_rc rc = grow_map(em, err);
        if (rc != W2L_OK) {
            if (key != stackkey) w2l__free(key);
            return rc;
        }
        i = h & (em->nslots - 1);
        while (em->slots[i].key) i = (i + 1) & (em->nslots - 1);
    }
    egroup *g;
    w2l_rc rc = group_of(em, ns, table, &g, err);
    if (rc != W2L_OK) {
        if (key != stackkey) w2l__free(key);
        return rc;
    }
    char *owned = key != stackkey ? key : w2l__malloc(kl);
    W2L_NOMEM_IF(!owned, err);
    if (owned != key) memcpy(owned, key, kl);
    em->slots[i].hash = h;
    em->slots[i].key = owned;
    em->slots[i].klen = kl;
    em->slots[i].nlen = nl;
    em->slots[i].open = NULL;
    em->slots[i].group = g;
    em->used++;
    *out = em->hot = &em->slots[i];
    return W2L_OK;
}

static int is_bytes(w2l_type_id t) { return t == W2L_TYPE_STRING || t == W2L_TYPE_BINARY; }

static w2l_rc hand_over(w2l_emitter *em, slot *s, w2l_error *err)
{
    w2l__batch *b = s->open;
    if (!b) return W2L_OK;
    s->open = NULL;
    s->last_n = b->n;
    return em->hooks.batch(em->hooks.ctx, b, err);
}

static w2l_rc new_batch(w2l_emitter *em, slot *s, const w2l_schema *schema, w2l_error *err)
{
    w2l__batch *b = w2l__calloc(1, sizeof *b);
    W2L_NOMEM_IF(!b, err);
    w2l__arena_init_pooled(&b->arena, em->pool);
    const char *ns = s->key, *table = s->key + strlen(s->key) + 1;
    b->ns = w2l__arena_strndup(&b->arena, ns, strlen(ns));
    b->table = w2l__arena_strndup(&b->arena, table, strlen(table));
    if (!b->ns || !b->table) {
        w2l__batch_free(b);
        return w2l__fail(err, W2L_NOMEM, "out of memory starting a batch");
    }
    size_t n;
    const w2l_field *f = w2l__schema_fields(schema, &n);
    uint32_t *cols = w2l__arena_alloc(&b->arena, (2 * n + 1) * sizeof *cols);
    if (!cols) {
        w2l__batch_free(b);
        return w2l__fail(err, W2L_NOMEM, "out of memory starting a batch");
    }
    size_t nb = 0, nr = 0;
    for (size_t i = 0; i < n; i++)
        if (is_bytes(f[i].type.id)) cols[nb++] = (uint32_t)i;
    for (size_t i = 0; i < n; i++)
        if (f[i].required) cols[nb + nr++] = (uint32_t)i;
    s->cols = cols;
    s->ncols = n;
    s->nbytes = nb;
    s->nreq = nr;
    b->schema = w2l_schema_ref((w2l_schema *)schema);
    b->table_hash = s->hash;
    atomic_init(&b->refs, 1);
    s->open = b;
    return W2L_OK;
}

/* s takes its group's turn: the batch another table of the group holds open goes first,
 * so the group's changes reach the pipeline in their source order. */
static w2l_rc group_turn(w2l_emitter *em, slot *s, w2l_error *err)
{
    egroup *g = s->group;
    if (!g || g->last == s->key) return W2L_OK;
    if (g->last) {
        const char *ns = g->last, *table = ns + strlen(ns) + 1;
        slot *o;
        W2L_TRY(find_slot(em, ns, table, &o, err));
        g->last = NULL;
        W2L_TRY(hand_over(em, o, err));
    }
    g->last = s->key;
    return W2L_OK;
}

/* Checks c's names, schema and operation. */
static w2l_rc check_head(const w2l_change *c, w2l_error *err)
{
    if (!c || !c->db || !*c->db || !c->table || !*c->table)
        return w2l__fail(err, W2L_MISUSE, "change without database or table name");
    if (!c->schema)
        return w2l__fail(err, W2L_MISUSE, "change of %s.%s without a schema", c->db, c->table);
    if (c->op < W2L_OP_INSERT || c->op > W2L_OP_DELETE)
        return w2l__fail(err, W2L_MISUSE, "change of %s.%s: unknown operation %d", c->db, c->table,
                         (int)c->op);
    return W2L_OK;
}

static w2l_rc null_required(const w2l_change *c, size_t i, w2l_error *err)
{
    size_t n;
    const w2l_field *f = w2l__schema_fields(c->schema, &n);
    return w2l__fail(err, W2L_SCHEMA, "change of %s.%s: NULL in required column %s", c->db,
                     c->table, f[i].name);
}

/* As check_values, through the column lists of s, whose open batch has c's schema: the
 * columns a change's check and copy must look at are usually a few of many. */
static w2l_rc check_indexed(const slot *s, const w2l_change *c, size_t *bytes, w2l_error *err)
{
    if (c->ncols != s->ncols || (s->ncols && !c->row))
        return w2l__fail(err, W2L_SCHEMA, "change of %s.%s has %zu values for %zu columns", c->db,
                         c->table, c->ncols, s->ncols);
    const w2l_value *row = c->row;
    const uint32_t *req = s->cols + s->nbytes;
    for (size_t k = 0; k < s->nreq; k++) { /* in field order: the same first error */
        size_t i = req[k];
        if (row[i].is_null && (!c->present || (c->present[i / 8] & (1u << (i % 8)))))
            return null_required(c, i, err);
    }
    size_t sum = 0;
    for (size_t k = 0; k < s->nbytes; k++)
        if (!row[s->cols[k]].is_null) sum += row[s->cols[k]].v.bytes.len;
    *bytes = sum;
    return W2L_OK;
}

/* Checks c's values; *bytes: the bytes of its string and binary values (copied with it). */
static w2l_rc check_values(const w2l_change *c, size_t *bytes, w2l_error *err)
{
    size_t n = w2l_schema_field_count(c->schema);
    if (c->ncols != n || (n && !c->row))
        return w2l__fail(err, W2L_SCHEMA, "change of %s.%s has %zu values for %zu columns", c->db,
                         c->table, c->ncols, n);
    const w2l_field *fields = w2l__schema_fields(c->schema, &n);
    *bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *f = &fields[i];
        if (c->row[i].is_null) {
            if (f->required && (!c->present || (c->present[i / 8] & (1u << (i % 8)))))
                return null_required(c, i, err);
        } else if (is_bytes(f->type.id)) {
            *bytes += c->row[i].v.bytes.len;
        }
    }
    return W2L_OK;
}

w2l_rc w2l_emit_change(w2l_emitter *em, const w2l_change *c, w2l_error *err)
{
    if (!em) return w2l__fail(err, W2L_MISUSE, "w2l_emit_change: NULL emitter");
    W2L_TRY(check_head(c, err));
    slot *s;
    W2L_TRY(find_slot(em, c->db, c->table, &s, err));
    size_t bytes = 0;
    if (s->open && s->open->schema == c->schema)
        W2L_TRY(check_indexed(s, c, &bytes, err));
    else
        W2L_TRY(check_values(c, &bytes, err));
    W2L_TRY(group_turn(em, s, err));
    if (s->open && s->open->schema != c->schema)
        W2L_TRY(hand_over(em, s, err)); /* schema changed */
    if (!s->open) W2L_TRY(new_batch(em, s, c->schema, err));
    w2l__batch *b = s->open;
    if (b->n == b->cap) {
        /* as many as the table's last batch held, then doubling */
        size_t cap = b->cap ? b->cap * 2 : W2L_MAX(W2L_MIN(s->last_n, em->batch_rows), 64);
        w2l_change *nc = w2l__realloc(b->changes, cap * sizeof *nc);
        W2L_NOMEM_IF(!nc, err);
        b->changes = nc;
        b->cap = cap;
    }
    /* one block: the values, the present bits, the bytes of the strings */
    size_t n = c->ncols, pb = c->present ? (n + 7) / 8 : 0;
    w2l_value *row = w2l__arena_alloc(&b->arena, n * sizeof *row + pb + bytes + 1);
    W2L_NOMEM_IF(!row, err);
    memcpy(row, c->row, n * sizeof *row);
    uint8_t *present = c->present ? memcpy(row + n, c->present, pb) : NULL;
    char *text = (char *)(row + n) + pb;
    for (size_t k = 0; k < s->nbytes; k++) { /* read from c->row, not from the copy just made */
        size_t i = s->cols[k];
        if (c->row[i].is_null) continue;
        size_t len = c->row[i].v.bytes.len;
        if (len) memcpy(text, c->row[i].v.bytes.ptr, len);
        row[i].v.bytes.ptr = text;
        text += len;
    }
    w2l_change *d = &b->changes[b->n++];
    *d = *c;
    d->db = b->ns;
    d->table = b->table;
    d->schema = b->schema;
    d->row = row;
    d->present = present;
    em->rows++;
    em->in_txn = 1;
    if (!em->held) { /* the first row since the last flush: the commit lag starts here */
        em->held = 1;
        atomic_store(&em->held_ms, w2l__now_ms());
    }
    if (b->n >= em->batch_rows) return hand_over(em, s, err);
    return W2L_OK;
}

w2l_rc w2l_emit_ddl(w2l_emitter *em, const w2l_ddl *d, w2l_error *err)
{
    if (!em || !d || !d->sql) return w2l__fail(err, W2L_MISUSE, "w2l_emit_ddl: NULL argument");
    /* every table's changes so far go first: a statement may touch tables other than the
     * one it names (RENAME TABLE a TO b names either) */
    W2L_TRY(w2l__emitter_flush(em, err));
    w2l__ddl_elem *e = w2l__calloc(1, sizeof *e);
    W2L_NOMEM_IF(!e, err);
    w2l__arena_init(&e->arena, d->sql_len + 256);
    e->ddl = *d;
    e->ddl.sql = w2l__arena_strndup(&e->arena, d->sql, d->sql_len);
    e->ddl.db = d->db ? w2l__arena_strndup(&e->arena, d->db, strlen(d->db)) : NULL;
    e->ddl.table = d->table ? w2l__arena_strndup(&e->arena, d->table, strlen(d->table)) : NULL;
    if (!e->ddl.sql || (d->db && !e->ddl.db) || (d->table && !e->ddl.table)) {
        e->ddl.schema_after = NULL;
        w2l__ddl_elem_free(e);
        return w2l__fail(err, W2L_NOMEM, "out of memory copying a DDL statement");
    }
    if (d->schema_after) w2l_schema_ref((w2l_schema *)d->schema_after);
    em->in_txn = 1;
    return em->hooks.ddl(em->hooks.ctx, e, err);
}

w2l_rc w2l_emit_quarantine(w2l_emitter *em, const char *db, const char *table, const char *reason,
                           uint64_t rows, w2l_error *err)
{
    if (!em || !db || !*db || !table || !*table)
        return w2l__fail(err, W2L_MISUSE, "w2l_emit_quarantine: NULL emitter or table");
    if (!em->quarantine)
        return w2l__fail(err, W2L_MISUSE, "table %s.%s: this pipeline cannot quarantine a table",
                         db, table);
    slot *s;
    W2L_TRY(find_slot(em, db, table, &s, err));
    W2L_TRY(group_turn(em, s, err)); /* its changes (and its group's) so far go first */
    W2L_TRY(hand_over(em, s, err));
    em->in_txn = 1;
    return em->quarantine(em->hooks.ctx, db, table, reason, rows, err);
}

w2l_rc w2l_emit_commit(w2l_emitter *em, const char *position, size_t len, w2l_error *err)
{
    if (!em || (!position && len))
        return w2l__fail(err, W2L_MISUSE, "w2l_emit_commit: NULL argument");
    if (len + 1 > em->poscap) {
        char *p = w2l__realloc(em->position, len + 1);
        W2L_NOMEM_IF(!p, err);
        em->position = p;
        em->poscap = len + 1;
    }
    if (len) memcpy(em->position, position, len);
    em->position[len] = '\0';
    em->poslen = len;
    em->in_txn = 0;
    return em->hooks.commit ? em->hooks.commit(em->hooks.ctx, em->position, len, err) : W2L_OK;
}

w2l_rc w2l__emitter_flush(w2l_emitter *em, w2l_error *err)
{
    for (size_t i = 0; i < em->nslots; i++)
        if (em->slots[i].open) W2L_TRY(hand_over(em, &em->slots[i], err));
    em->held = 0;
    atomic_store(&em->held_ms, 0);
    return W2L_OK;
}

int64_t w2l__emitter_held_ms(const w2l_emitter *em)
{
    return atomic_load(&((w2l_emitter *)em)->held_ms);
}

const char *w2l__emitter_position(const w2l_emitter *em, size_t *len)
{
    if (len) *len = em->poslen;
    return em->position;
}

uint64_t w2l__emitter_rows(const w2l_emitter *em) { return em->rows; }
int w2l__emitter_in_txn(const w2l_emitter *em) { return em->in_txn; }

w2l_rc w2l_emit_progress(w2l_emitter *em, int64_t through_ms, w2l_error *err)
{
    if (!em) return w2l__fail(err, W2L_MISUSE, "w2l_emit_progress: NULL emitter");
    if (through_ms < 0)
        return w2l__fail(err, W2L_MISUSE, "w2l_emit_progress: negative time %lld",
                         (long long)through_ms);
    if (through_ms > em->progress_ms) em->progress_ms = through_ms;
    return W2L_OK;
}

int64_t w2l__emitter_progress(const w2l_emitter *em) { return em->progress_ms; }

void w2l__emitter_set_snapshot(w2l_emitter *em, int on)
{
    if (em) atomic_store(&em->snapshot, on != 0);
}

int w2l__emitter_snapshot(const w2l_emitter *em)
{
    return em ? atomic_load(&((w2l_emitter *)em)->snapshot) : 0;
}

void w2l__emitter_set_snapshot_progress(w2l_emitter *em, const w2l__snap_progress *p)
{
    if (!em) return;
    mtx_lock(&em->snap_mu);
    em->snap = *p;
    mtx_unlock(&em->snap_mu);
}

void w2l__emitter_snapshot_progress(const w2l_emitter *em, w2l__snap_progress *out)
{
    memset(out, 0, sizeof *out);
    if (!em) return;
    w2l_emitter *e = (w2l_emitter *)em;
    mtx_lock(&e->snap_mu);
    *out = e->snap;
    mtx_unlock(&e->snap_mu);
}

void w2l__emitter_reconnected(w2l_emitter *em)
{
    if (em) atomic_fetch_add(&em->reconnects, 1);
}

uint64_t w2l__emitter_reconnects(const w2l_emitter *em)
{
    return em ? atomic_load(&((w2l_emitter *)em)->reconnects) : 0;
}
