/*
 * The ledger of a shared source (ledger.h): per table and partition, the offset below which
 * the lake holds the table's changes, as this process last learnt it.
 *
 * One hash map with three kinds of string keys (fields joined by \x1f):
 *   "A" STREAM PART        the partition's assignment generation (assigned() bumps it)
 *   "T" NS TABLE           the table: its uuid when loaded
 *   "P" NS TABLE STREAM PART  the table's offset for the partition, and the assignment
 *                          generation it was read under (older: read it again)
 *   "R" NS TABLE           the partition the table's rows come from, as this process saw
 * The source thread asks committed() per message, committers call merge() and done(); one
 * mutex. Reading a table's position from the lake happens under it (once per table and
 * assignment).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "../iceberg/iceberg.h"
#include "../json/json.h"
#include "ledger.h"

typedef struct entry {
    char *key;
    size_t klen;
    uint64_t h;
    int64_t next;   /* P: the offset (-1 none); A: the generation */
    uint64_t gen;   /* P: the assignment generation it was read under */
    char *uuid;     /* T: the table's uuid (NULL: no such table); R: "STREAM/PART" */
    struct entry *chain;
} entry;

struct w2l__ledger {
    const w2l_conf *conf;
    mtx_t mtx;
    entry **b;
    size_t cap, n;
    w2l_fileio *io;
    w2l_catalog *cat;
};

static _Thread_local w2l__ledger *current_ledger;

void w2l__ledger_set_current(w2l__ledger *l) { current_ledger = l; }
w2l__ledger *w2l__ledger_current(void) { return current_ledger; }

w2l__ledger *w2l__ledger_new(const w2l_conf *conf)
{
    w2l__ledger *l = w2l__calloc(1, sizeof *l);
    if (!l) return NULL;
    l->conf = conf;
    l->cap = 256;
    l->b = w2l__calloc(l->cap, sizeof *l->b);
    if (!l->b || mtx_init(&l->mtx, mtx_plain) != thrd_success) {
        w2l__free(l->b);
        w2l__free(l);
        return NULL;
    }
    return l;
}

void w2l__ledger_free(w2l__ledger *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->cap; i++)
        for (entry *e = l->b[i], *n; e; e = n) {
            n = e->chain;
            w2l__free(e->key);
            w2l__free(e->uuid);
            w2l__free(e);
        }
    w2l__free(l->b);
    w2l__catalog_close(l->cat);
    w2l_fileio_close(l->io);
    mtx_destroy(&l->mtx);
    w2l__free(l);
}

/* ---- the map ---- */

typedef struct key {
    char buf[600];
    size_t len;
} key;

static int make_key(key *k, char kind, const char *a, const char *b, const char *c, int32_t part)
{
    int n;
    if (kind == 'A') n = snprintf(k->buf, sizeof k->buf, "A\x1f%s\x1f%d", a, (int)part);
    else if (kind == 'T' || kind == 'R')
        n = snprintf(k->buf, sizeof k->buf, "%c\x1f%s\x1f%s", kind, a, b);
    else n = snprintf(k->buf, sizeof k->buf, "P\x1f%s\x1f%s\x1f%s\x1f%d", a, b, c, (int)part);
    k->len = n > 0 && (size_t)n < sizeof k->buf ? (size_t)n : 0;
    return k->len != 0;
}

static entry *find(w2l__ledger *l, const key *k, int create)
{
    uint64_t h = w2l__hash64(k->buf, k->len, 0x6c6467);
    for (entry *e = l->b[h % l->cap]; e; e = e->chain)
        if (e->h == h && e->klen == k->len && memcmp(e->key, k->buf, k->len) == 0) return e;
    if (!create) return NULL;
    if (l->n >= l->cap) { /* grow: load factor 1 */
        size_t cap = l->cap * 2;
        entry **nb = w2l__calloc(cap, sizeof *nb);
        if (!nb) return NULL;
        for (size_t i = 0; i < l->cap; i++)
            for (entry *e = l->b[i], *n; e; e = n) {
                n = e->chain;
                e->chain = nb[e->h % cap];
                nb[e->h % cap] = e;
            }
        w2l__free(l->b);
        l->b = nb;
        l->cap = cap;
    }
    entry *e = w2l__calloc(1, sizeof *e);
    if (!e || !(e->key = w2l__malloc(k->len))) {
        w2l__free(e);
        return NULL;
    }
    memcpy(e->key, k->buf, k->len);
    e->klen = k->len;
    e->h = h;
    e->next = -1;
    e->chain = l->b[h % l->cap];
    l->b[h % l->cap] = e;
    l->n++;
    return e;
}

static uint64_t assign_gen(w2l__ledger *l, const char *stream, int32_t part)
{
    key k;
    entry *e = make_key(&k, 'A', stream, NULL, NULL, part) ? find(l, &k, 0) : NULL;
    return e ? (uint64_t)e->next : 0;
}

/* ---- positions ---- */

/* The "NAME" object of a position {"NAME":{"STREAM":{"PART":NEXT}}}, or NULL. */
static const w2l__json *streams_of(const w2l__json *pos)
{
    const w2l__json *s = pos ? w2l__json_first(pos) : NULL;
    return s && w2l__json_type(s) == W2L_JSON_OBJECT ? s : NULL;
}

static int64_t offset_in(const w2l__json *streams, const char *stream, int32_t part)
{
    char pk[16];
    snprintf(pk, sizeof pk, "%d", (int)part);
    int64_t v;
    const w2l__json *o = w2l__json_get(w2l__json_get(streams, stream), pk);
    return o && !w2l__json_int64(o, &v) ? v : -1;
}

/* Reads ns.table's position from the lake into its "P" entries: those not read under the
 * partition's current assignment, or not read at all (only stream/part when given). */
static w2l_rc load_table(w2l__ledger *l, entry *t, const char *ns, const char *table,
                         const char *stream, int32_t part, w2l_error *err)
{
    if (!l->cat) W2L_TRY(w2l__catalog_open_conf(l->conf, &l->io, &l->cat, err));
    w2l__ice_table *it = NULL;
    w2l_rc rc = w2l__ice_table_load(l->cat, l->io, ns, table, &it, err);
    if (rc == W2L_NOTFOUND) {
        w2l_error_clear(err);
        rc = W2L_OK;
    }
    W2L_TRY(rc);
    w2l__json *pos = NULL;
    if (it) {
        const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(it->meta, NULL, &rc, err);
        const char *text = s ? w2l__ice_props_get(&s->summary, "w2l.source-position") : NULL;
        if (rc == W2L_OK && text && *text &&
            (rc = w2l__json_parse(text, strlen(text), &pos, err)) != W2L_OK)
            w2l__error_prefix(err, "table %s.%s: w2l.source-position: ", ns, table);
        w2l__free(t->uuid);
        t->uuid = w2l__strdup(it->meta->uuid);
        w2l__ice_table_free(it);
    }
    const w2l__json *streams = streams_of(pos);
    key k;
    /* the partition asked for, and every other one the lake names */
    if (rc == W2L_OK && stream) {
        entry *e = make_key(&k, 'P', ns, table, stream, part) ? find(l, &k, 1) : NULL;
        if (!e) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else e->next = offset_in(streams, stream, part), e->gen = assign_gen(l, stream, part);
    }
    for (const w2l__json *st = streams ? w2l__json_first(streams) : NULL; rc == W2L_OK && st;
         st = w2l__json_next(st))
        for (const w2l__json *p = w2l__json_first(st); rc == W2L_OK && p; p = w2l__json_next(p)) {
            int32_t pn = (int32_t)strtol(w2l__json_key(p), NULL, 10);
            if (!make_key(&k, 'P', ns, table, w2l__json_key(st), pn)) continue;
            entry *e = find(l, &k, 0);
            uint64_t g = assign_gen(l, w2l__json_key(st), pn);
            if (e && e->gen >= g) continue; /* read under this assignment: ours */
            if (!e && !(e = find(l, &k, 1))) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else if (w2l__json_int64(p, &e->next)) e->next = -1;
            if (e) e->gen = g;
        }
    w2l__json_free(pos);
    return rc;
}

/* Rows of one table from two partitions are refused: members would apply them in no
 * order (a key moved between partitions, a delete before its insert). */
static w2l_rc row_partition(w2l__ledger *l, const char *ns, const char *table, const char *stream,
                            int32_t part, w2l_error *err)
{
    key k;
    char sp[300];
    snprintf(sp, sizeof sp, "%s/%d", stream, (int)part);
    entry *r = make_key(&k, 'R', ns, table, NULL, 0) ? find(l, &k, 1) : NULL;
    if (!r) return w2l__fail(err, W2L_NOMEM, "out of memory");
    if (!r->uuid) {
        W2L_NOMEM_IF(!(r->uuid = w2l__strdup(sp)), err);
    } else if (strcmp(r->uuid, sp) != 0) {
        return w2l__fail(err, W2L_CONFIG, W2L__LEDGER_SPREAD, ns, table, r->uuid, sp);
    }
    return W2L_OK;
}

w2l_rc w2l__ledger_committed(w2l__ledger *l, const char *ns, const char *table,
                             const char *stream, int32_t part, int rows, int64_t *next,
                             w2l_error *err)
{
    *next = -1;
    key k;
    if (!make_key(&k, 'P', ns, table, stream, part))
        return w2l__fail(err, W2L_MISUSE, "ledger: name too long: %s.%s", ns, table);
    mtx_lock(&l->mtx);
    w2l_rc rc = rows ? row_partition(l, ns, table, stream, part, err) : W2L_OK;
    if (rc != W2L_OK) {
        mtx_unlock(&l->mtx);
        return rc;
    }
    entry *e = find(l, &k, 0);
    if (!e || e->gen < assign_gen(l, stream, part)) {
        key tk;
        entry *t = make_key(&tk, 'T', ns, table, NULL, 0) ? find(l, &tk, 1) : NULL;
        rc = t ? load_table(l, t, ns, table, stream, part, err)
               : w2l__fail(err, W2L_NOMEM, "out of memory");
        e = rc == W2L_OK ? find(l, &k, 0) : NULL;
    }
    if (e) *next = e->next;
    mtx_unlock(&l->mtx);
    return rc;
}

void w2l__ledger_assigned(w2l__ledger *l, const char *stream, int32_t part)
{
    key k;
    mtx_lock(&l->mtx);
    entry *e = make_key(&k, 'A', stream, NULL, NULL, part) ? find(l, &k, 1) : NULL;
    if (e) e->next = e->next < 0 ? 1 : e->next + 1;
    mtx_unlock(&l->mtx);
}

w2l_rc w2l__ledger_merge(w2l__ledger *l, const char *ns, const char *table, const char *uuid,
                         const char *base, const char *base_rows, const char *mine,
                         char **merged, char **rows, w2l_error *err)
{
    *merged = *rows = NULL;
    w2l__json *b = NULL, *m = NULL;
    w2l_rc rc = base && *base ? w2l__json_parse(base, strlen(base), &b, err) : W2L_OK;
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s.%s: w2l.source-position: ", ns, table);
        return rc;
    }
    rc = w2l__json_parse(mine, strlen(mine), &m, err);
    const w2l__json *ms = streams_of(m), *bs = streams_of(b);
    if (rc == W2L_OK && !ms)
        rc = w2l__fail(err, W2L_CORRUPT, "checkpoint position '%.80s' is not per partition", mine);
    /* the result: base's partitions, then ours, each the larger offset */
    w2l__json *out = rc == W2L_OK ? w2l__json_new_object() : NULL;
    w2l__json *os = out ? (bs ? w2l__json_dup(bs) : w2l__json_new_object()) : NULL;
    if (rc == W2L_OK && (!os || w2l__json_add(out, w2l__json_key(w2l__json_first(m)), os))) {
        w2l__json_free(os);
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    mtx_lock(&l->mtx);
    key tk, k;
    entry *t = make_key(&tk, 'T', ns, table, NULL, 0) ? find(l, &tk, 0) : NULL;
    int known = t && t->uuid && uuid && !strcmp(t->uuid, uuid); /* the same incarnation */
    entry *r = rc == W2L_OK && make_key(&tk, 'R', ns, table, NULL, 0) ? find(l, &tk, 0) : NULL;
    if (r && r->uuid && base_rows && *base_rows && strcmp(base_rows, r->uuid) != 0)
        rc = w2l__fail(err, W2L_CONFIG, W2L__LEDGER_SPREAD, ns, table, base_rows, r->uuid);
    else if (rc == W2L_OK && !(*rows = w2l__strdup(r && r->uuid ? r->uuid
                                                   : base_rows  ? base_rows
                                                                : "")))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (const w2l__json *st = ms ? w2l__json_first(ms) : NULL; rc == W2L_OK && st;
         st = w2l__json_next(st))
        for (const w2l__json *p = w2l__json_first(st); rc == W2L_OK && p; p = w2l__json_next(p)) {
            const char *sn = w2l__json_key(st);
            int32_t pn = (int32_t)strtol(w2l__json_key(p), NULL, 10);
            int64_t v, have = offset_in(bs, sn, pn);
            if (w2l__json_int64(p, &v)) continue;
            entry *e = make_key(&k, 'P', ns, table, sn, pn) ? find(l, &k, 0) : NULL;
            if (!e) continue; /* none of the table's changes come from it: the lake's stands */
            if (known && e->gen >= assign_gen(l, sn, pn) && e->next != have) {
                rc = w2l__fail(err, W2L_CONFLICT,
                               "table %s.%s: %s partition %d was committed through offset %lld "
                               "by another process (this one read %lld): it took the partition "
                               "over, or lost it; this process is fenced and commits nothing "
                               "more",
                               ns, table, sn, (int)pn, (long long)have, (long long)e->next);
                break;
            }
            w2l__json *so = w2l__json_get(os, sn);
            if (!so && (!(so = w2l__json_new_object()) || w2l__json_add(os, sn, so))) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            if (w2l__json_set(so, w2l__json_key(p), w2l__json_new_int64(v > have ? v : have)))
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    mtx_unlock(&l->mtx);
    if (rc == W2L_OK && !(*merged = w2l__json_print(out, 0)))
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        w2l__free(*rows);
        *rows = NULL;
    }
    w2l__json_free(out);
    w2l__json_free(b);
    w2l__json_free(m);
    return rc;
}

void w2l__ledger_done(w2l__ledger *l, const char *ns, const char *table, const char *uuid,
                      const char *mine, const char *merged)
{
    w2l__json *m = NULL, *g = NULL;
    w2l_error err;
    if (w2l__json_parse(mine, strlen(mine), &m, &err) ||
        w2l__json_parse(merged, strlen(merged), &g, &err)) {
        w2l__json_free(m);
        return;
    }
    const w2l__json *ms = streams_of(m), *gs = streams_of(g);
    key tk, k;
    mtx_lock(&l->mtx);
    entry *t = make_key(&tk, 'T', ns, table, NULL, 0) ? find(l, &tk, 1) : NULL;
    if (t && (!t->uuid || strcmp(t->uuid, uuid) != 0)) {
        w2l__free(t->uuid);
        t->uuid = w2l__strdup(uuid);
    }
    /* the lake now says what we wrote: for our partitions that is what we know */
    for (const w2l__json *st = ms ? w2l__json_first(ms) : NULL; st; st = w2l__json_next(st))
        for (const w2l__json *p = w2l__json_first(st); p; p = w2l__json_next(p)) {
            int32_t pn = (int32_t)strtol(w2l__json_key(p), NULL, 10);
            entry *e = make_key(&k, 'P', ns, table, w2l__json_key(st), pn) ? find(l, &k, 0) : NULL;
            if (!e) continue; /* not one of the table's partitions (merge() left it out) */
            e->next = offset_in(gs, w2l__json_key(st), pn);
            e->gen = assign_gen(l, w2l__json_key(st), pn);
        }
    mtx_unlock(&l->mtx);
    w2l__json_free(m);
    w2l__json_free(g);
}
