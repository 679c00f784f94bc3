/*
 * The writer's key map (op_writer_int.h): each key (the identifier columns, or the whole row
 * of a table without primary key) to the data file and row position of its live rows. In
 * delete mode "equality" it holds the rows of the current checkpoint; in delete mode
 * "position" every live row of the table: loaded from the lake (and from the checkpoints
 * sealed but not yet committed) before the table's first change, kept across checkpoints,
 * and compacted when many of its entries are dead. See op_writer.c for how changes use it,
 * and op_writer_lake.c for the keys read back from the lake's files (the load, a change of
 * the key columns, a compaction's rewritten files).
 *
 * Past writer.key-index-memory (all of a writer's tables) the largest maps spill to sorted
 * runs on disk (key_spill.h), two a table at most: the run, and a young run over it. A
 * spill merges the map with the young run into a new young run — a key whose rows all went
 * is written there as a tombstone (file KTOMB), which hides the run's rows of it — until
 * the young run would pass a quarter of the run; then the map and both runs merge into one
 * run (tombstones dropped; at a barrier, the files no row points into dropped too), so the
 * large run is written again only that often. The map holds the keys changed since the
 * last spill and hides the runs' rows of each (a key whose rows all went keeps its entry,
 * with no row); a lookup the map misses asks the young run, then the run, and a key found
 * comes back into the map with its rows. What walks the whole map (a rekey, the live rows
 * of a key change) brings the runs back first; the follow-up of a compaction counts the
 * runs' rows of the removed files and finds them by key as it finds the map's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_writer_int.h"
#include "../io/io.h"
#include "../model/model.h"
#include "metrics.h"

/* The first capacity of a key map array: room for the last checkpoint's n, at least 16. */
static size_t first_cap(size_t n)
{
    size_t c = 16;
    while (c < n && c < ((size_t)1 << 40)) c *= 2;
    return c;
}

/* Drops the table's spilled runs. */
static void runs_free(tstate *t)
{
    w2l__krun_free(t->young);
    w2l__krun_free(t->run);
    t->young = t->run = NULL;
}

/* The map's arrays and key arena go (the runs stay). */
static void map_free(tstate *t)
{
    w2l__free(t->kslots);
    w2l__free(t->ks);
    w2l__free(t->ke);
    t->kslots = NULL;
    t->ks = NULL;
    t->ke = NULL;
    t->kcap = t->kcount = t->kscap = t->nke = t->kecap = 0;
    w2l__arena_release(&t->karena);
    w2l__arena_init(&t->karena, 1 << 14);
    t->ndead = 0;
}

void w2l__wr_keymap_clear(tstate *t)
{
    t->khint = t->kcount;
    t->kehint = t->nke;
    map_free(t);
    runs_free(t);
}

/* The key of change c in w->key: for each equality column (field-id order) whose value is
 * not NULL, its field id (4 bytes) and its value as comparable bytes — integers, booleans
 * and dates as 8 bytes, floats as doubles (so a widened column keeps its keys), decimals
 * as 16 bytes of unscaled value, strings and binaries as a 4-byte length and the bytes.
 * NULL values (and, in a row without primary key, columns absent from the image) are left
 * out, so a row written before a column was added has the key of the same row with the
 * new column NULL. value_len() reads an entry back. */
w2l_rc w2l__wr_encode_key(w2l_buf *b, const tstate *t, const w2l_change *c, w2l_error *err)
{
    /* the common key, one 8-byte column (a bigint or timestamp primary key): the bytes of
     * the general loop's default case, written directly */
    if (t->neq == 1 && (t->eq_type[0] == W2L_TYPE_LONG || t->eq_type[0] == W2L_TYPE_TIME ||
                        t->eq_type[0] == W2L_TYPE_TIMESTAMP ||
                        t->eq_type[0] == W2L_TYPE_TIMESTAMPTZ)) {
        const w2l_value *v = &c->row[t->eq_idx[0]];
        b->len = 0;
        if (v->is_null || !w2l__wr_present(c, t->eq_idx[0])) return W2L_OK;
        if (b->cap < 12 || !b->data) W2L_TRY(w2l__buf_reserve(b, 12, err));
        memcpy(b->data, &t->eq_ids[0], 4);
        memcpy(b->data + 4, &v->v.i64, 8);
        b->len = 12;
        return W2L_OK;
    }
    size_t need = 0; /* at most: 4 + 16 a value, or 8 + its bytes */
    for (size_t i = 0; i < t->neq; i++) {
        const w2l_value *v = &c->row[t->eq_idx[i]];
        int var = t->eq_type[i] == W2L_TYPE_STRING || t->eq_type[i] == W2L_TYPE_BINARY;
        need += v->is_null ? 0 : 20 + (var ? v->v.bytes.len : 0);
    }
    b->len = 0;
    W2L_TRY(w2l__buf_reserve(b, need, err));
    unsigned char *o = b->data;
    for (size_t i = 0; i < t->neq; i++) {
        const w2l_value *v = &c->row[t->eq_idx[i]];
        if (v->is_null || !w2l__wr_present(c, t->eq_idx[i])) continue;
        int64_t i64;
        double d;
        uint32_t len;
        memcpy(o, &t->eq_ids[i], 4);
        o += 4;
        switch (t->eq_type[i]) {
        case W2L_TYPE_BOOLEAN: case W2L_TYPE_INT: case W2L_TYPE_DATE:
            i64 = v->v.i32;
            memcpy(o, &i64, 8);
            o += 8;
            break;
        case W2L_TYPE_FLOAT:
            d = v->v.f32;
            memcpy(o, &d, 8);
            o += 8;
            break;
        case W2L_TYPE_DOUBLE:
            memcpy(o, &v->v.f64, 8);
            o += 8;
            break;
        case W2L_TYPE_DECIMAL:
            memcpy(o, &v->v.dec.lo, 8);
            memcpy(o + 8, &v->v.dec.hi, 8);
            o += 16;
            break;
        case W2L_TYPE_STRING: case W2L_TYPE_BINARY:
            len = (uint32_t)v->v.bytes.len;
            memcpy(o, &len, 4);
            if (len) memcpy(o + 4, v->v.bytes.ptr, len);
            o += 4 + (size_t)len;
            break;
        default:
            memcpy(o, &v->v.i64, 8);
            o += 8;
        }
    }
    b->len = (size_t)(o - b->data);
    return W2L_OK;
}

/* Bytes of one encoded value of type ty at p (encode_key). */
static size_t value_len(w2l_type_id ty, const unsigned char *p)
{
    uint32_t len;
    switch (ty) {
    case W2L_TYPE_DECIMAL: return 16;
    case W2L_TYPE_STRING: case W2L_TYPE_BINARY:
        memcpy(&len, p, 4);
        return 4 + (size_t)len;
    default: return 8;
    }
}

static int has_id(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}


static inline const unsigned char *kslot_key(const kslot *s)
{
    return s->len <= KEY_INLINE ? s->key.in : s->key.p;
}

static inline int key_eq(const kslot *s, const unsigned char *k, size_t n)
{
    if (s->len != n) return 0;
    if (n >= 8 && n <= 16) { /* inline: two overlapping words */
        uint64_t a, b, x, y;
        memcpy(&a, s->key.in, 8);
        memcpy(&b, s->key.in + n - 8, 8);
        memcpy(&x, k, 8);
        memcpy(&y, k + n - 8, 8);
        return ((a ^ x) | (b ^ y)) == 0;
    }
    return n == 0 || memcmp(kslot_key(s), k, n) == 0;
}


/* The map's entry of key (hash h), NULL when the map lacks it (the run is not read). The
 * slot index and the tag are the hash's upper 32 bits. */
kslot *w2l__wr_key_find(const tstate *t, const unsigned char *key, size_t len, uint64_t h)
{
    uint32_t h32 = (uint32_t)(h >> 32);
    if (!t->kcap) return NULL;
    for (size_t i = h32 & (t->kcap - 1);; i = (i + 1) & (t->kcap - 1)) {
        uint64_t e = t->kslots[i];
        if (!e) return NULL;
        if ((uint32_t)(e >> 32) != h32) continue;
        kslot *s = &t->ks[(uint32_t)e - 1];
        if (key_eq(s, key, len)) return s;
    }
}

/* Inserts key (hash h, absent from the map; copied): its entry, with no live row. NULL when
 * out of memory (*err set). */
static kslot *mem_insert(tstate *t, const unsigned char *key, size_t len, uint64_t h,
                         w2l_error *err)
{
    uint32_t h32 = (uint32_t)(h >> 32);
    if (t->kcount >= INT32_MAX) {
        w2l__fail(err, W2L_ERROR, "table %s: too many keys in one checkpoint", t->fq);
        return NULL;
    }
    if ((t->kcount + 1) * 2 > t->kcap) {
        size_t ncap = t->kcap ? t->kcap * 2 : first_cap(2 * t->khint + 2);
        uint64_t *ns = w2l__calloc(ncap, sizeof *ns);
        if (!ns) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < t->kcap; i++) {
            uint64_t e = t->kslots[i];
            if (!e) continue;
            size_t k = (size_t)(e >> 32) & (ncap - 1);
            while (ns[k]) k = (k + 1) & (ncap - 1);
            ns[k] = e;
        }
        w2l__free(t->kslots);
        t->kslots = ns;
        t->kcap = ncap;
    }
    if (t->kcount == t->kscap) {
        size_t ncap = t->kscap ? t->kscap * 2 : first_cap(t->khint);
        kslot *nk = w2l__realloc(t->ks, ncap * sizeof *nk);
        if (!nk) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        t->ks = nk;
        t->kscap = ncap;
    }
    kslot *s = &t->ks[t->kcount];
    s->len = (uint32_t)len;
    s->head = -1;
    if (len >= 8 && len <= KEY_INLINE) { /* two overlapping words, as key_eq */
        memcpy(s->key.in, key, 8);
        memcpy(s->key.in + len - 8, key + len - 8, 8);
    } else if (len <= KEY_INLINE) {
        if (len) memcpy(s->key.in, key, len);
    } else {
        unsigned char *copy = w2l__arena_alloc(&t->karena, len);
        if (!copy) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(copy, key, len);
        s->key.p = copy;
    }
    size_t k = h32 & (t->kcap - 1);
    while (t->kslots[k]) k = (k + 1) & (t->kcap - 1);
    t->kslots[k] = (uint64_t)h32 << 32 | (uint64_t)(t->kcount + 1);
    t->kcount++;
    return s;
}

/* A live row (file, pos) of s after its others (*tail: s's last entry, -1 none). */
static w2l_rc append_entry(tstate *t, kslot *s, uint32_t file, int64_t pos, int32_t *tail,
                           w2l_error *err)
{
    if (*tail < 0) {
        W2L_TRY(w2l__wr_add_entry(t, s, 0, err));
        *tail = s->head;
    } else {
        int32_t head = s->head;
        W2L_TRY(w2l__wr_add_entry(t, s, 0, err));
        t->ke[*tail].next = s->head;
        *tail = s->head;
        s->head = head;
    }
    t->ke[*tail].file = file;
    t->ke[*tail].pos = pos;
    return W2L_OK;
}

w2l_rc w2l__wr_key_get(tstate *t, const w2l_buf *key, uint64_t h, int add, kslot **out,
                       w2l_error *err)
{
    kslot *s = w2l__wr_key_find(t, key->data, key->len, h);
    *out = s;
    if (s) return W2L_OK;
    const w2l__krec *r = NULL;
    size_t n = 0;
    if (t->young) W2L_TRY(w2l__krun_find(t->young, key->data, (uint32_t)key->len, h, &r, &n, err));
    if (n && r[0].file == KTOMB) n = 0; /* the young run's tombstone hides the older run */
    else if (!n && t->run)
        W2L_TRY(w2l__krun_find(t->run, key->data, (uint32_t)key->len, h, &r, &n, err));
    if (!n && !add) return W2L_OK;
    s = mem_insert(t, key->data, key->len, h, err);
    if (!s) return W2L_NOMEM;
    /* the key's rows in the run come into the map, which holds the key from now on */
    int32_t tail = -1;
    size_t at = (size_t)(s - t->ks);
    for (size_t i = 0; i < n; i++)
        W2L_TRY(append_entry(t, &t->ks[at], r[i].file, r[i].pos, &tail, err));
    *out = &t->ks[at];
    return W2L_OK;
}

/* ------------------------------------------------------------------ spilling ----- */

/* The map's arrays go (after a spill: every key is in the run); the next ones start small. */
static void map_reset(tstate *t)
{
    map_free(t);
    t->khint = t->kehint = 0;
}

uint64_t w2l__wr_runs_records(const tstate *t)
{
    return w2l__krun_records(t->run) + w2l__krun_records(t->young);
}

uint64_t w2l__wr_runs_disk(const tstate *t)
{
    return w2l__krun_disk_bytes(t->run) + w2l__krun_disk_bytes(t->young);
}

/* Brings every key of the runs into the map (keys the map holds already hide theirs; a key
 * the young run holds hides the older run's), and drops the runs: for what walks the whole
 * map (a rekey, the live rows of a key change). */
static w2l_rc unspill(tstate *t, w2l_error *err)
{
    w2l__krun *src[2] = {t->young, t->run};
    w2l_rc rc = W2L_OK;
    for (int k = 0; rc == W2L_OK && k < 2; k++) {
        if (!src[k]) continue;
        w2l__krun_iter *it;
        W2L_TRY(w2l__krun_iter_open(src[k], &it, err));
        size_t cur = SIZE_MAX; /* the key the last records brought in */
        int32_t tail = -1;
        for (;;) {
            w2l__krec r;
            int end;
            if ((rc = w2l__krun_iter_next(it, &r, &end, err)) != W2L_OK || end) break;
            uint64_t h = w2l__wr_key_hash(r.key, r.len);
            kslot *s = w2l__wr_key_find(t, r.key, r.len, h);
            if (s && (size_t)(s - t->ks) != cur) continue; /* hidden */
            if (!s) {
                if (!(s = mem_insert(t, r.key, r.len, h, err))) {
                    rc = W2L_NOMEM;
                    break;
                }
                cur = (size_t)(s - t->ks);
                tail = -1;
            }
            /* a key whose rows all went stays in the map without a row: it hides the older
             * run's rows of it */
            if (r.file != KTOMB && (rc = append_entry(t, s, r.file, r.pos, &tail, err)) != W2L_OK)
                break;
        }
        w2l__krun_iter_free(it);
    }
    if (rc != W2L_OK) return rc;
    w2l__log(W2L_LOG_DEBUG, "%s: key index brought back from disk: %zu keys", t->fq, t->kcount);
    runs_free(t);
    return W2L_OK;
}

typedef struct mkey {
    const unsigned char *k;
    uint32_t len;
    uint32_t i;               /* index in ks */
} mkey;

static int mkey_cmp(const void *a, const void *b)
{
    const mkey *x = a, *y = b;
    return w2l__krun_key_cmp(x->k, x->len, y->k, y->len);
}

/* A merge's input run: its iterator, its current record, whether its keys are in the new
 * run's filter already (inherited). */
typedef struct msrc {
    w2l__krun_iter *it;
    w2l__krec r;
    int end, inherited;
} msrc;

static w2l_rc src_open(w2l__krun *run, int inherited, msrc *x, w2l_error *err)
{
    memset(x, 0, sizeof *x);
    x->end = 1;
    if (!run) return W2L_OK;
    x->inherited = inherited;
    W2L_TRY(w2l__krun_iter_open(run, &x->it, err));
    return w2l__krun_iter_next(x->it, &x->r, &x->end, err);
}

static int src_at(const msrc *x, const unsigned char *k, uint32_t n)
{
    return !x->end && w2l__krun_key_cmp(x->r.key, x->r.len, k, n) == 0;
}

/* Passes x's records of key k, writing them to nr (emit; tombstones only with tombs). */
static w2l_rc src_pass(msrc *x, const unsigned char *k, uint32_t n, uint64_t h, int emit,
                       int tombs, w2l__krun *nr, const uint32_t *fmap, w2l_error *err)
{
    while (src_at(x, k, n)) {
        const w2l__krec *r = &x->r;
        if (emit && (r->file != KTOMB || tombs))
            W2L_TRY(w2l__krun_add(nr, k, n, h, !x->inherited,
                                  r->file == KTOMB ? KTOMB : fmap[r->file], r->pos, err));
        W2L_TRY(w2l__krun_iter_next(x->it, &x->r, &x->end, err));
    }
    return W2L_OK;
}

/* Merges the sorted map keys m[0..nm) with run a (the young one) and run b (the older, in
 * a full merge; NULL otherwise) into nr: of each key, the map's rows win, then a's, then
 * b's. Without b the keys whose rows all went are written as tombstones (b's rows of them
 * stay hidden); with it they are dropped. */
static w2l_rc merge_into(const tstate *t, w2l__krun *nr, msrc *a, msrc *b, const mkey *m,
                         size_t nm, const uint32_t *fmap, int full, w2l_error *err)
{
    w2l_buf kb = {0};
    w2l_rc rc = W2L_OK;
    size_t j = 0;
    while (rc == W2L_OK) {
        const unsigned char *k = NULL;
        uint32_t n = 0;
        if (j < nm) k = m[j].k, n = m[j].len;
        if (!a->end && (!k || w2l__krun_key_cmp(a->r.key, a->r.len, k, n) < 0))
            k = a->r.key, n = a->r.len;
        if (!b->end && (!k || w2l__krun_key_cmp(b->r.key, b->r.len, k, n) < 0))
            k = b->r.key, n = b->r.len;
        if (!k) break;
        kb.len = 0; /* the key outlives the records it came from */
        if ((rc = w2l_buf_append(&kb, k, n ? n : 0, err)) != W2L_OK) break;
        k = kb.data;
        uint64_t h = w2l__wr_key_hash(k, n);
        int in_map = j < nm && w2l__krun_key_cmp(m[j].k, m[j].len, k, n) == 0;
        int in_a = src_at(a, k, n);
        if (in_map) {
            const kslot *s = &t->ks[m[j].i];
            for (int32_t e = s->head; rc == W2L_OK && e >= 0; e = t->ke[e].next)
                rc = w2l__krun_add(nr, k, n, h, 1, fmap[t->ke[e].file], t->ke[e].pos, err);
            if (rc == W2L_OK && s->head < 0 && !full)
                rc = w2l__krun_add(nr, k, n, h, 1, KTOMB, 0, err);
            j++;
        }
        if (rc == W2L_OK) rc = src_pass(a, k, n, h, !in_map, !full, nr, fmap, err);
        if (rc == W2L_OK) rc = src_pass(b, k, n, h, !in_map && !in_a, 0, nr, fmap, err);
    }
    w2l_buf_release(&kb);
    return rc;
}

w2l_rc w2l__wr_index_spill(writer *w, tstate *t, int renumber, int full, w2l_error *err)
{
    if (!t->kcount) return W2L_OK;
    int64_t t0 = w2l__now_ms();
    if (!w->kdir) W2L_TRY(w2l__kdir_open(w->spill_dir, &w->kdir, err));
    size_t nlive = 0, nempty = 0; /* rows, and keys without one (tombstones) */
    for (size_t i = 0; i < t->kcount; i++) {
        nempty += t->ks[i].head < 0;
        for (int32_t e = t->ks[i].head; e >= 0; e = t->ke[e].next) nlive++;
    }
    /* the map goes into the young run while that stays below a quarter of the older one;
     * then all three merge into one (the old run is written again only that often) */
    uint64_t young = w2l__krun_records(t->young) + nlive + nempty;
    full = full || !t->run || young * 4 > w2l__krun_records(t->run);
    renumber = full && renumber && !t->nparts && !t->npd && !t->nopen;
    size_t nf = t->nfiles;
    mkey *m = w2l__malloc((t->kcount + 1) * sizeof *m);
    uint32_t *fmap = w2l__malloc((nf + 1) * sizeof *fmap);
    w2l_rc rc = m && fmap ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nf; i++) fmap[i] = renumber ? NO_PART : (uint32_t)i;
    for (size_t i = 0; rc == W2L_OK && i < t->kcount; i++) {
        m[i] = (mkey){kslot_key(&t->ks[i]), t->ks[i].len, (uint32_t)i};
        for (int32_t e = t->ks[i].head; renumber && e >= 0; e = t->ke[e].next)
            fmap[t->ke[e].file] = 0;
    }
    /* the files still pointed into (by the map, or by a run: some of its rows may be
     * hidden, so a file may stay one merge longer than it needs), in order */
    size_t nkeep = 0;
    for (size_t i = 0; rc == W2L_OK && renumber && i < nf; i++)
        if (fmap[i] != NO_PART || w2l__krun_file_refs(t->run, (uint32_t)i) ||
            w2l__krun_file_refs(t->young, (uint32_t)i))
            fmap[i] = (uint32_t)nkeep++;
    if (rc == W2L_OK) qsort(m, t->kcount, sizeof *m, mkey_cmp);
    /* the new run's filter starts as the largest input's */
    w2l__krun *base = full ? t->run : t->young, *nr = NULL;
    int inherited = 0;
    uint64_t nmax = (full ? w2l__wr_runs_records(t) : w2l__krun_records(t->young)) + nlive + nempty;
    if (rc == W2L_OK)
        rc = w2l__krun_create(w->kdir, t->fq, nmax, renumber ? nkeep : nf, base, &inherited, &nr,
                              err);
    msrc a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    a.end = b.end = 1;
    if (rc == W2L_OK) rc = src_open(t->young, inherited && base == t->young, &a, err);
    if (rc == W2L_OK && full) rc = src_open(t->run, inherited && base == t->run, &b, err);
    if (rc == W2L_OK) rc = merge_into(t, nr, &a, &b, m, t->kcount, fmap, full, err);
    if (rc == W2L_OK) rc = w2l__krun_finish(nr, err);
    w2l__krun_iter_free(a.it);
    w2l__krun_iter_free(b.it);
    w2l__free(m);
    if (rc != W2L_OK) { /* the map and the runs stay as they were */
        w2l__free(fmap);
        w2l__krun_free(nr);
        w2l__error_prefix(err, "spilling the key index: ");
        return rc;
    }
    size_t nkeys = t->kcount;
    if (!w2l__krun_records(nr)) {
        w2l__krun_free(nr);
        nr = NULL;
    }
    w2l__krun_free(t->young);
    t->young = NULL;
    if (full) {
        w2l__krun_free(t->run);
        t->run = nr;
    } else {
        t->young = nr;
    }
    map_reset(t);
    if (renumber) {
        size_t k = 0;
        for (size_t i = 0; i < nf; i++) {
            if (fmap[i] == NO_PART) {
                w2l__free(t->files[i].path);
                w2l__free(t->files[i].pkey);
                continue;
            }
            t->files[k++] = t->files[i];
        }
        t->nfiles = k;
    }
    w2l__free(fmap);
    w2l__log(W2L_LOG_DEBUG,
             "writer %u: %s: key index spilled%s: %zu keys from memory, %llu rows on disk "
             "(%llu bytes), %zu files, %lld ms",
             w->index, t->fq, full ? "" : " (young run)", nkeys,
             (unsigned long long)w2l__wr_runs_records(t), (unsigned long long)w2l__wr_runs_disk(t),
             t->nfiles, (long long)(w2l__now_ms() - t0));
    return W2L_OK;
}

/* Bytes of the map itself: what a spill gives back. */
uint64_t w2l__wr_map_bytes(const tstate *t)
{
    return t->kcap * sizeof *t->kslots + t->kscap * sizeof *t->ks + t->kecap * sizeof *t->ke +
           t->karena.used;
}

w2l_rc w2l__wr_index_bound(writer *w, int at_barrier, w2l_error *err)
{
    uint64_t total = 0, keys = 0, disk = 0;
    for (size_t i = 0; i < w->tcap; i++) {
        const tstate *t = w->tabs[i];
        if (!t) continue;
        total += w2l__wr_index_bytes(t);
        keys += t->kcount + w2l__wr_runs_records(t);
        disk += w2l__wr_runs_disk(t);
    }
    /* a map smaller than this is not worth a run of its own (a file, a filter): many such
     * maps hold at most this much each over the budget */
    uint64_t least = W2L_MIN((uint64_t)64 << 10, w->kbudget / 64);
    int over = total > w->kbudget;
    while (over && total > w->kbudget / 2) {
        tstate *big = NULL;
        for (size_t i = 0; i < w->tcap; i++) {
            tstate *t = w->tabs[i];
            if (t && t->posmode && t->loaded && t->kcount && w2l__wr_map_bytes(t) >= least &&
                (!big || w2l__wr_map_bytes(t) > w2l__wr_map_bytes(big)))
                big = t;
        }
        if (!big) break;
        uint64_t before = w2l__wr_index_bytes(big), kb = big->kcount,
                 rb = w2l__wr_runs_records(big), db = w2l__wr_runs_disk(big);
        W2L_TRY(w2l__wr_index_spill(w, big, at_barrier, 0, err));
        total = total - before + w2l__wr_index_bytes(big);
        keys = keys - kb - rb + big->kcount + w2l__wr_runs_records(big);
        disk = disk - db + w2l__wr_runs_disk(big);
    }
    w2l__metrics *mt = w2l__metrics_current();
    if (mt && (keys != w->kkeys || total != w->kmem || disk != w->kdisk))
        w2l__metrics_key_index(mt, (int64_t)(keys - w->kkeys), (int64_t)(total - w->kmem),
                               (int64_t)(disk - w->kdisk), 0);
    w->kkeys = keys, w->kmem = total, w->kdisk = disk;
    return W2L_OK;
}

void w2l__wr_index_free(tstate *t)
{
    w2l__free(t->kslots);
    w2l__free(t->ks);
    w2l__free(t->ke);
    w2l__arena_release(&t->karena);
    runs_free(t);
    t->kslots = NULL;
    t->ks = NULL;
    t->ke = NULL;
}

w2l_rc w2l__wr_add_pos_delete(tstate *t, const kent *e, w2l_error *err)
{
    if (t->npd == t->pdcap) {
        size_t ncap = t->pdcap ? t->pdcap * 2 : 64;
        pdel *np = w2l__realloc(t->pd, ncap * sizeof *np);
        W2L_NOMEM_IF(!np, err);
        t->pd = np;
        t->pdcap = ncap;
    }
    t->pd[t->npd++] = (pdel){e->file, e->pos};
    return W2L_OK;
}

w2l_rc w2l__wr_add_entry(tstate *t, kslot *s, int chain, w2l_error *err)
{
    if (t->nke == t->kecap) {
        size_t ncap = t->kecap ? t->kecap * 2 : first_cap(t->kehint);
        kent *ne = w2l__realloc(t->ke, ncap * sizeof *ne);
        W2L_NOMEM_IF(!ne, err);
        t->ke = ne;
        t->kecap = ncap;
    }
    if (t->nke >= INT32_MAX)
        return w2l__fail(err, W2L_ERROR, "table %s: too many rows in one checkpoint", t->fq);
    t->ke[t->nke] = (kent){0, 0, chain ? s->head : -1};
    s->head = (int32_t)t->nke++;
    return W2L_OK;
}

/* The schema of a table without primary key changes within a checkpoint (set_schema): the
 * map's keys lose the columns that are not in ids any more (dropped), and rows whose keys
 * become equal share one chain. Keys are read with the current (old) schema's types. */
w2l_rc w2l__wr_rekey(writer *w, tstate *t, const int32_t *ids, size_t nids, w2l_error *err)
{
    int dropped = 0;
    for (size_t i = 0; i < t->neq && !dropped; i++) dropped = !has_id(ids, nids, t->eq_ids[i]);
    if (!dropped) return W2L_OK; /* every key is valid as it is */
    W2L_TRY(unspill(t, err));
    kslot *old = t->ks;
    size_t nold = t->kcount;
    w2l__arena oarena = t->karena;
    w2l__free(t->kslots);
    t->kslots = NULL;
    t->ks = NULL;
    t->kcap = t->kcount = t->kscap = 0;
    w2l__arena_init(&t->karena, 1 << 14);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < nold; i++) {
        const kslot *o = &old[i];
        if (o->head < 0) continue;
        const unsigned char *ok = kslot_key(o);
        w->key.len = 0;
        for (size_t p = 0; rc == W2L_OK && p < o->len;) {
            int32_t id;
            memcpy(&id, ok + p, 4);
            long at = w2l_schema_index_of_id(t->schema, id);
            if (at < 0) {
                rc = w2l__fail(err, W2L_ERROR,
                               "table %s: a key of this checkpoint names field %d, which schema %d "
                               "lacks",
                               t->fq, (int)id, (int)w2l_schema_id(t->schema));
                break;
            }
            size_t n =
                4 + value_len(w2l_schema_field(t->schema, (size_t)at)->type.id, ok + p + 4);
            if (has_id(ids, nids, id)) rc = w2l_buf_append(&w->key, ok + p, n, err);
            p += n;
        }
        kslot *s = NULL;
        if (rc == W2L_OK)
            rc = w2l__wr_key_get(t, &w->key, w2l__wr_key_hash(w->key.data, w->key.len), 1, &s,
                                 err);
        if (rc != W2L_OK) break;
        /* rows that differed only in a dropped column: one chain now */
        int32_t tail = o->head;
        while (t->ke[tail].next >= 0) tail = t->ke[tail].next;
        t->ke[tail].next = s->head;
        s->head = o->head;
    }
    w2l__free(old);
    w2l__arena_release(&oarena);
    if (rc != W2L_OK) w2l__wr_keymap_clear(t);
    return rc;
}

/* The rows of the key map that are live (written in this checkpoint, not deleted since):
 * their files and positions, in *out (caller frees). */
w2l_rc w2l__wr_live_rows(tstate *t, kent **out, size_t *nout, w2l_error *err)
{
    W2L_TRY(unspill(t, err));
    size_t n = 0;
    for (size_t i = 0; i < t->kcount; i++)
        for (int32_t e = t->ks[i].head; e >= 0; e = t->ke[e].next) n++;
    *out = NULL;
    *nout = 0;
    if (!n) return W2L_OK;
    kent *v = w2l__malloc(n * sizeof *v);
    W2L_NOMEM_IF(!v, err);
    n = 0;
    for (size_t i = 0; i < t->kcount; i++)
        for (int32_t e = t->ks[i].head; e >= 0; e = t->ke[e].next) v[n++] = t->ke[e];
    *out = v;
    *nout = n;
    return W2L_OK;
}

w2l_rc w2l__wr_delete_head(tstate *t, kslot *s, w2l_error *err)
{
    kent *e = &t->ke[s->head];
    W2L_TRY(w2l__wr_add_pos_delete(t, e, err));
    s->head = e->next;
    t->ndead++;
    return W2L_OK;
}

w2l_rc w2l__wr_file_add(tstate *t, char *path, const unsigned char *pkey, size_t klen,
                        uint32_t part, uint32_t *out, w2l_error *err)
{
    if (t->nfiles == t->fcap) {
        size_t ncap = t->fcap ? t->fcap * 2 : 8;
        wfile *nf = ncap < UINT32_MAX ? w2l__realloc(t->files, ncap * sizeof *nf) : NULL;
        if (!nf) {
            w2l__free(path);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        t->files = nf;
        t->fcap = ncap;
    }
    unsigned char *k = w2l__malloc(klen + 1);
    if (!k) {
        w2l__free(path);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (klen) memcpy(k, pkey, klen);
    t->files[t->nfiles] = (wfile){path, k, (uint32_t)klen, part};
    *out = (uint32_t)t->nfiles++;
    return W2L_OK;
}

uint64_t w2l__wr_index_bytes(const tstate *t)
{
    uint64_t b = w2l__wr_map_bytes(t) + w2l__krun_mem_bytes(t->run) + w2l__krun_mem_bytes(t->young);
    for (size_t i = 0; i < t->nfiles; i++)
        b += strlen(t->files[i].path) + 1 + t->files[i].klen + sizeof *t->files;
    return b;
}

/* ------------------------------------------------------------ compaction --------- */

w2l_rc w2l__wr_index_compact(tstate *t, w2l_error *err)
{
    /* a spilled map's dead keys hide the run's rows: the next spill drops them */
    if (t->run) return W2L_OK;
    if (t->ndead < 1024 || t->ndead * 2 < t->nke) return W2L_OK;
    size_t nlive = 0, nkeys = 0;
    uint32_t *fmap = w2l__malloc((t->nfiles + 1) * sizeof *fmap);
    W2L_NOMEM_IF(!fmap, err);
    for (size_t i = 0; i < t->nfiles; i++) fmap[i] = NO_PART;
    for (size_t i = 0; i < t->kcount; i++) {
        if (t->ks[i].head >= 0) nkeys++;
        for (int32_t e = t->ks[i].head; e >= 0; e = t->ke[e].next) {
            nlive++;
            fmap[t->ke[e].file] = 0;
        }
    }
    /* the files still pointed into, renumbered in order */
    size_t nf = 0;
    for (size_t i = 0; i < t->nfiles; i++) {
        if (fmap[i] == NO_PART) {
            w2l__free(t->files[i].path);
            w2l__free(t->files[i].pkey);
            continue;
        }
        fmap[i] = (uint32_t)nf;
        t->files[nf++] = t->files[i];
    }
    t->nfiles = nf;
    kslot *ks = w2l__malloc((nkeys ? nkeys : 1) * sizeof *ks);
    kent *ke = w2l__malloc((nlive ? nlive : 1) * sizeof *ke);
    size_t cap = 16;
    while (cap < 2 * nkeys + 2) cap *= 2;
    uint64_t *slots = w2l__calloc(cap, sizeof *slots);
    w2l__arena ar;
    w2l__arena_init(&ar, 1 << 14);
    w2l_rc rc = ks && ke && slots ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    size_t k = 0, n = 0;
    for (size_t i = 0; rc == W2L_OK && i < t->kcount; i++) {
        const kslot *o = &t->ks[i];
        if (o->head < 0) continue;
        kslot *d = &ks[k];
        *d = *o;
        if (o->len > KEY_INLINE) {
            unsigned char *c = w2l__arena_alloc(&ar, o->len);
            if (!c) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            memcpy(c, o->key.p, o->len);
            d->key.p = c;
        }
        /* the chain, newest first, as it was */
        int32_t prev = -1;
        for (int32_t e = o->head; e >= 0; e = t->ke[e].next) {
            ke[n] = t->ke[e];
            ke[n].file = fmap[t->ke[e].file];
            ke[n].next = -1;
            if (prev < 0) d->head = (int32_t)n;
            else ke[prev].next = (int32_t)n;
            prev = (int32_t)n++;
        }
        uint32_t h32 = (uint32_t)(w2l__wr_key_hash(kslot_key(d), d->len) >> 32);
        size_t at = h32 & (cap - 1);
        while (slots[at]) at = (at + 1) & (cap - 1);
        slots[at] = (uint64_t)h32 << 32 | (uint64_t)(k + 1);
        k++;
    }
    w2l__free(fmap);
    if (rc != W2L_OK) {
        /* the map stays as it was, files renumbered: undo is not possible, so forget it
         * all; the table is loaded again before its next change */
        w2l__free(ks);
        w2l__free(ke);
        w2l__free(slots);
        w2l__arena_release(&ar);
        w2l__wr_keymap_clear(t);
        t->loaded = 0;
        return rc;
    }
    w2l__free(t->ks);
    w2l__free(t->ke);
    w2l__free(t->kslots);
    w2l__arena_release(&t->karena);
    t->karena = ar;
    t->ks = ks, t->kcount = t->kscap = nkeys;
    t->ke = ke, t->nke = t->kecap = nlive;
    t->kslots = slots, t->kcap = cap;
    t->ndead = 0;
    return W2L_OK;
}
