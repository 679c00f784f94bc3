/*
 * The built-in writer operator (w2l-design(7) sections 1, 2 and 5): turns a table's changes into
 * Iceberg v2 files — Parquet data files, equality-delete files on the identifier columns and
 * position-delete files — and at every checkpoint barrier reports them to the table's
 * committer in one WRITE_RESULT per table (payload format: ops.h). Writers never commit.
 *
 * Upserts, per change of key k (the identifier columns; for tables without a primary key,
 * per "no-pk-policy", every column or nothing):
 *   INSERT, UPDATE_AFTER      data row; k -> (data file, row position) in the table's map
 *   DELETE, UPDATE_BEFORE     k in the map: a POSITION delete of that row (and k leaves the
 *                             map); else an EQUALITY delete of k
 * Why: a checkpoint is one snapshot, so all its files share one sequence number, and an
 * equality delete applies only to data files of a LOWER sequence number (Iceberg spec,
 * "Scan Planning"). A row written in this checkpoint can therefore only be deleted by
 * position; a row of an earlier checkpoint only by equality. The map holds exactly the rows
 * written since the last barrier, and survives fences and file rolls (a position delete may
 * point at a file completed earlier in the same checkpoint). An INSERT of a key already in
 * the map replaces that row (position delete first): upsert semantics for replays. A table
 * whose SCHEMA says "upsert" (a route's target: its sources may write a key again, after a
 * TRUNCATE of one, or another source the same key) also writes an equality delete for an
 * INSERT of a key not in the map, in the new row's partition, and so does an UPDATE_AFTER
 * whose key is not its UPDATE_BEFORE's (the update moved the key onto one the table may
 * hold; an in-place update's before image deleted the key already). Without
 * a primary key (full-row) identical rows chain in the map and a DELETE removes one of them.
 * The map's keys are the non-NULL values of the equality columns by field id (encode_key),
 * so a full-row table's rows written before an ADD or DROP COLUMN, a widening or a column
 * move in the same checkpoint are still found by the images that follow it (set_schema,
 * rekey); the runtime routes by a hash with the same property (pipeline.c, key_hash). When
 * the key columns change (ADD / DROP PRIMARY KEY: the policy switches between full-row and
 * primary key, or another key), the live rows of the map are keyed anew from the data files
 * they sit in (reread_keys; the fence completed them).
 *
 * Files: a table's open data and equality-delete files roll at writer.target-file-bytes;
 * position deletes are kept in memory (16 bytes each) and written sorted by file path then
 * position when the table's files complete: at a barrier, at a fence (WRITER_COMMIT), or
 * when writer.memory-budget is exceeded (the largest idle table first). A table with no open
 * file holds no buffer; everything of a checkpoint is dropped once its WRITE_RESULT is sent.
 * Rows are buffered per element and handed to the Parquet writer in column passes
 * (w2l__pq_write_rows), not one call per row. The key map is 8-byte slots (hash tag and
 * key index) over an array of keys; it outgrows the caches within a checkpoint, so each
 * change's key is encoded and hashed KEY_AHEAD changes early and its slot prefetched
 * (key_ahead), and the values of the change after that are prefetched too: the misses
 * overlap the work on the changes between instead of stalling each lookup. The maps of a
 * writer's tables together stay within its share of writer.key-index-memory: after each
 * element and at each barrier the largest spill to disk (op_writer_keys.c, key_spill.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_writer_int.h"
#include "maintenance.h"
#include "metrics.h"
#include "rewrites.h"
#include "../io/io.h"
#include "../model/model.h"

/* ------------------------------------------------------------------ small helpers --- */

static uint64_t conf_size_for(const w2l_conf *c, const char *fq, const char *key, uint64_t def)
{
    const char *v = NULL;
    int64_t n;
    if (w2l_conf_get_for_table(c, fq, key, &v, NULL) != W2L_OK || !v) return def;
    if (w2l__conf_parse(w2l_conf_prop_find(key), v, &n) != 0 || n <= 0) return def;
    return (uint64_t)n;
}

static void json_str(w2l_buf *b, const char *s, w2l_rc *rc, w2l_error *err)
{
    static const char hex[] = "0123456789abcdef";
    if (*rc != W2L_OK) return;
    size_t n = strlen(s);
    if ((*rc = w2l__buf_reserve(b, n * 6 + 2, err)) != W2L_OK) return;
    unsigned char *o = b->data + b->len;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            *o++ = '\\';
            *o++ = *p;
        } else if (*p < 0x20) {
            *o++ = '\\', *o++ = 'u', *o++ = '0', *o++ = '0';
            *o++ = (unsigned char)hex[*p >> 4], *o++ = (unsigned char)hex[*p & 15];
        } else {
            *o++ = *p;
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
}

static void json_hex(w2l_buf *b, const unsigned char *p, size_t n, w2l_rc *rc, w2l_error *err)
{
    static const char hex[] = "0123456789abcdef";
    if (*rc != W2L_OK) return;
    if ((*rc = w2l__buf_reserve(b, n * 2 + 2, err)) != W2L_OK) return;
    unsigned char *o = b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++)
        *o++ = (unsigned char)hex[p[i] >> 4], *o++ = (unsigned char)hex[p[i] & 15];
    *o++ = '"';
    b->len = (size_t)(o - b->data);
}

#define PR(...)                                                                        \
    do {                                                                               \
        if (rc == W2L_OK) rc = w2l__buf_printf(b, err, __VA_ARGS__);                   \
    } while (0)

w2l_rc w2l__ops_file_json(w2l_buf *b, int content, const char *path, const w2l__file_stats *st,
                          const int32_t *eq_ids, size_t neq, int32_t schema_id,
                          const w2l__ice_spec *spec, const w2l_value *part, w2l_error *err)
{
    /* room for the usual text up front: each PR then formats once */
    w2l_rc rc = w2l__buf_reserve(b, 256 + strlen(path) + st->ncols * 160 + st->nsplits * 24, err);
    PR("{\"content\":%d,\"path\":", content);
    json_str(b, path, &rc, err);
    PR(",\"format\":\"PARQUET\",\"record-count\":%llu,\"file-size\":%llu,\"schema-id\":%d,"
       "\"columns\":[",
       (unsigned long long)st->record_count, (unsigned long long)st->file_size, (int)schema_id);
    for (size_t i = 0; i < st->ncols; i++) {
        const w2l__col_stats *c = &st->cols[i];
        PR("%s{\"id\":%d,\"size\":%llu,\"values\":%llu,\"nulls\":%llu", i ? "," : "",
           (int)c->field_id, (unsigned long long)c->column_size, (unsigned long long)c->value_count,
           (unsigned long long)c->null_count);
        if (c->has_nan_count) PR(",\"nans\":%llu", (unsigned long long)c->nan_count);
        if (c->has_bounds) {
            PR(",\"lower\":");
            json_hex(b, c->lower, c->lower_len, &rc, err);
            PR(",\"upper\":");
            json_hex(b, c->upper, c->upper_len, &rc, err);
        }
        PR("}");
    }
    PR("],\"split-offsets\":[");
    for (size_t i = 0; i < st->nsplits; i++)
        PR("%s%llu", i ? "," : "", (unsigned long long)st->split_offsets[i]);
    PR("]");
    if (content == W2L_ICE_EQ_DELETES) {
        PR(",\"equality-ids\":[");
        for (size_t i = 0; i < neq; i++) PR("%s%d", i ? "," : "", (int)eq_ids[i]);
        PR("]");
    }
    if (spec) { /* absent: the table's default spec, unpartitioned */
        PR(",\"spec-id\":%d,\"partition\":[", (int)spec->spec_id);
        for (size_t i = 0; rc == W2L_OK && i < spec->nfields; i++) {
            if (i) PR(",");
            if (part[i].is_null) {
                PR("null");
                continue;
            }
            unsigned char small[16];
            size_t n = w2l__value_to_bytes(spec->fields[i].type, &part[i], small, sizeof small);
            if (n <= sizeof small) {
                json_hex(b, small, n, &rc, err);
            } else { /* a string or binary value longer than 16 bytes */
                const unsigned char *pb = (const unsigned char *)part[i].v.bytes.ptr;
                json_hex(b, pb, part[i].v.bytes.len, &rc, err);
            }
        }
        PR("]");
    }
    PR("}");
    return rc;
}

/* ------------------------------------------------------------------- table states --- */

/* Forgets the checkpoint's data file paths and partitions (their files are completed or
 * aborted). */
static void paths_clear(tstate *t)
{
    for (size_t i = 0; i < t->nfiles; i++) {
        w2l__free(t->files[i].path);
        w2l__free(t->files[i].pkey);
    }
    w2l__free(t->files);
    t->files = NULL;
    t->nfiles = t->fcap = 0;
    w2l__wr_parts_clear(t);
}

/* Forgets the checkpoint's partitions; the files the key map points into stay (delete
 * mode "position", at a barrier). */
static void parts_reset(tstate *t)
{
    for (size_t i = 0; i < t->nfiles; i++) t->files[i].part = NO_PART;
    w2l__wr_parts_clear(t);
}

static void eq_clear(tstate *t)
{
    w2l_schema_unref(t->eq_schema);
    w2l__free(t->eq_ids);
    w2l__free(t->eq_idx);
    w2l__free(t->eq_type);
    t->eq_type = NULL;
    t->eq_schema = NULL;
    t->eq_ids = NULL;
    t->eq_idx = NULL;
    t->neq = 0;
}

static void tstate_free(tstate *t)
{
    if (!t) return;
    paths_clear(t); /* open files are aborted */
    w2l__wr_parts_free(t);
    w2l__wr_index_free(t);
    w2l__free(t->pd);
    w2l_buf_release(&t->results);
    w2l_buf_release(&t->ubkey);
    eq_clear(t);
    w2l_schema_unref(t->schema);
    w2l__free(t->location);
    w2l__free(t->ns);
    w2l__free(t->table);
    w2l__free(t->fq);
    w2l__free(t);
}

static tstate *find_table(writer *w, const char *ns, const char *table, uint64_t h)
{
    if (!w->tcap) return NULL;
    for (size_t i = h & (w->tcap - 1);; i = (i + 1) & (w->tcap - 1)) {
        tstate *t = w->tabs[i];
        if (!t) return NULL;
        if (t->h == h && strcmp(t->ns, ns) == 0 && strcmp(t->table, table) == 0) return t;
    }
}

static w2l_rc get_table(writer *w, const char *ns, const char *table, tstate **out, w2l_error *err)
{
    uint64_t h = w2l__table_hash(ns, table);
    tstate *t = find_table(w, ns, table, h);
    if (t) {
        *out = t;
        return W2L_OK;
    }
    if ((w->tcount + 1) * 2 > w->tcap) {
        size_t ncap = w->tcap ? w->tcap * 2 : 64;
        tstate **nt = w2l__calloc(ncap, sizeof *nt);
        W2L_NOMEM_IF(!nt, err);
        for (size_t i = 0; i < w->tcap; i++) {
            tstate *x = w->tabs[i];
            if (!x) continue;
            size_t k = x->h & (ncap - 1);
            while (nt[k]) k = (k + 1) & (ncap - 1);
            nt[k] = x;
        }
        w2l__free(w->tabs);
        w->tabs = nt;
        w->tcap = ncap;
    }
    t = w2l__calloc(1, sizeof *t);
    W2L_NOMEM_IF(!t, err);
    t->h = h;
    t->ns = w2l__strdup(ns);
    t->table = w2l__strdup(table);
    t->fq = w2l__asprintf("%s.%s", ns, table);
    w2l__arena_init(&t->karena, 1 << 14);
    w2l__arena_init(&t->parena, 1 << 12);
    if (!t->ns || !t->table || !t->fq) {
        tstate_free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    t->target = conf_size_for(w->conf, t->fq, "writer.target-file-bytes", 128u << 20);
    t->max_open = (size_t)conf_size_for(w->conf, t->fq, "writer.open-partitions", 64);
    const char *mode = NULL;
    w2l_conf_get_for_table(w->conf, t->fq, "write.delete-mode", &mode, NULL);
    t->posmode = t->want_pos = !mode || strcmp(mode, "equality") != 0;
    size_t k = h & (w->tcap - 1);
    while (w->tabs[k]) k = (k + 1) & (w->tcap - 1);
    w->tabs[k] = t;
    w->tcount++;
    *out = t;
    return W2L_OK;
}

static void mark_dirty(writer *w, tstate *t)
{
    if (t->dirty) return;
    t->dirty = 1;
    t->next_dirty = w->dirty;
    w->dirty = t;
}

static int same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}


/* Makes s the table's schema and derives the equality columns. */
static w2l_rc set_schema(writer *w, tstate *t, const w2l_schema *s, w2l_error *err)
{
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(s, &nid);
    size_t nf = w2l_schema_field_count(s);
    int policy = POL_PK;
    if (!nid) {
        const char *v = NULL;
        w2l_conf_get_for_table(w->conf, t->fq, "no-pk-policy", &v, NULL);
        policy = !v || strcmp(v, "full-row") == 0 ? POL_FULL_ROW
                 : strcmp(v, "append-only") == 0  ? POL_APPEND_ONLY
                                                  : POL_FAIL;
    }
    size_t neq = policy == POL_PK ? nid : policy == POL_FULL_ROW ? nf : 0;
    int32_t *eq_ids = w2l__calloc(neq + 1, sizeof *eq_ids);
    long *eq_idx = w2l__calloc(neq + 1, sizeof *eq_idx);
    w2l_type_id *eq_type = w2l__calloc(neq + 1, sizeof *eq_type);
    w2l_schema *es = neq ? w2l_schema_new(w2l_schema_id(s)) : NULL;
    w2l_rc rc = eq_ids && eq_idx && eq_type && (es || !neq)
                    ? W2L_OK
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < neq; i++) {
        long at = policy == POL_PK ? w2l_schema_index_of_id(s, ids[i]) : (long)i;
        if (at < 0) {
            rc = w2l__fail(err, W2L_SCHEMA, "table %s: identifier field %d is not in schema %d",
                           t->fq, (int)ids[i], (int)w2l_schema_id(s));
            break;
        }
        eq_idx[i] = at;
        eq_ids[i] = w2l_schema_field(s, (size_t)at)->id;
    }
    /* equality columns in field-id order, whatever the schema's column order: the map's keys
     * (encode_key) then do not depend on where a column sits */
    for (size_t i = 1; rc == W2L_OK && i < neq; i++)
        for (size_t k = i; k > 0 && eq_ids[k - 1] > eq_ids[k]; k--) {
            int32_t x = eq_ids[k];
            long y = eq_idx[k];
            eq_ids[k] = eq_ids[k - 1], eq_idx[k] = eq_idx[k - 1];
            eq_ids[k - 1] = x, eq_idx[k - 1] = y;
        }
    for (size_t i = 0; rc == W2L_OK && i < neq; i++) {
        const w2l_field *f = w2l_schema_field(s, (size_t)eq_idx[i]);
        eq_type[i] = f->type.id;
        rc = w2l_schema_add_field(es, f->id, f->name, f->type, f->required, err);
    }
    /* The map's keys hold the non-null values of the equality columns by field id, so a key
     * written before a schema change still finds its row after it when the columns are
     * those of the whole row (no primary key): a column added since is NULL in the old row
     * and absent from both keys; a widened column encodes the same; a dropped column is
     * taken out of the keys (rekey). When the key columns change otherwise (ADD or DROP
     * PRIMARY KEY, another key: the DDL handler fenced the table, so its files are
     * complete), the rows this checkpoint wrote are found again by their new keys, read
     * back from those files (reread_keys): an equality delete cannot reach them, as they
     * share the checkpoint's sequence number. */
    int full_row = policy == POL_FULL_ROW && t->policy == POL_FULL_ROW && t->schema;
    int held = t->kcount || t->run;
    if (rc == W2L_OK && held && full_row) rc = w2l__wr_rekey(w, t, eq_ids, neq, err);
    kent *live = NULL;
    size_t nlive = 0;
    if (rc == W2L_OK && held && !full_row &&
        (t->policy != policy || !same_ids(t->eq_ids, t->neq, eq_ids, neq))) {
        if (policy == POL_PK || policy == POL_FULL_ROW)
            rc = w2l__wr_live_rows(t, &live, &nlive, err);
        w2l__wr_keymap_clear(t);
    }
    if (rc != W2L_OK) {
        w2l__free(eq_ids);
        w2l__free(eq_idx);
        w2l__free(eq_type);
        w2l_schema_unref(es);
        return rc;
    }
    eq_clear(t);
    t->ub_set = 0; /* an after image that follows gets its delete: harmless, and safe */
    t->eq_schema = es;
    t->eq_ids = eq_ids;
    t->eq_idx = eq_idx;
    t->eq_type = eq_type;
    t->neq = neq;
    t->policy = policy;
    w2l_schema *ref = w2l_schema_ref((w2l_schema *)s);
    w2l_schema_unref(t->schema);
    t->schema = ref;
    if (nlive) {
        rc = w2l__wr_reread_keys(w, t, live, nlive, err);
        w2l__free(live);
        W2L_TRY(rc);
    }
    return w2l__wr_bind_specs(t, err);
}

/* ------------------------------------------------------------------- changes ------- */

/* Hands partition p's pending rows to its data file, in chunks gathered into w->dbuf;
 * rolls the file once it is large (the rows' positions were taken in it). */
static w2l_rc flush_rows(writer *w, tstate *t, wpart *p, w2l_error *err)
{
    size_t nf = w2l_schema_field_count(t->schema);
    for (size_t i = 0; i < p->nrows; i += CHUNK_ROWS) {
        size_t n = W2L_MIN((size_t)CHUNK_ROWS, p->nrows - i);
        for (size_t k = 0; k < n; k++)
            memcpy(&w->dbuf[k * nf], w->changes[p->rows[i + k]].row, nf * sizeof *w->dbuf);
        w2l_rc rc = w2l__pq_write_rows(p->dw, w->dbuf, n, err);
        if (rc != W2L_OK) {
            p->nrows = 0;
            w2l__error_prefix(err, "table %s: ", t->fq); /* the file is named below */
            return rc;
        }
        p->drows += n;
    }
    p->nrows = 0;
    if (p->dw && w2l__pq_writer_bytes(p->dw) >= t->target)
        W2L_TRY(w2l__wr_complete_data(w, t, p, err));
    return W2L_OK;
}

/* ... and its pending equality deletes to its equality-delete file. */
static w2l_rc flush_dels(writer *w, tstate *t, wpart *p, w2l_error *err)
{
    for (size_t i = 0; i < p->ndels; i += CHUNK_ROWS) {
        size_t n = W2L_MIN((size_t)CHUNK_ROWS, p->ndels - i);
        for (size_t k = 0; k < n; k++) {
            const w2l_change *c = &w->changes[p->dels[i + k]];
            w2l_value *o = &w->ebuf[k * t->neq];
            for (size_t e = 0; e < t->neq; e++) {
                o[e] = c->row[t->eq_idx[e]];
                if (c->present && !(c->present[t->eq_idx[e] >> 3] >> (t->eq_idx[e] & 7) & 1))
                    o[e].is_null = 1;
            }
        }
        w2l_rc rc = w2l__pq_write_rows(p->ew, w->ebuf, n, err);
        if (rc != W2L_OK) {
            p->ndels = 0;
            w2l__error_prefix(err, "table %s: ", t->fq); /* the file is named below */
            return rc;
        }
    }
    p->ndels = 0;
    if (p->ew && w2l__pq_writer_bytes(p->ew) >= t->target)
        W2L_TRY(w2l__wr_complete_eq(w, t, p, err));
    return W2L_OK;
}

/* Hands every pending change of the table to its files. */
static w2l_rc flush_all(writer *w, tstate *t, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < t->ntouched; i++) {
        wpart *p = t->parts[t->touched[i]];
        p->touched = 0;
        if (rc == W2L_OK && p->nrows) rc = flush_rows(w, t, p, err);
        if (rc == W2L_OK && p->ndels) rc = flush_dels(w, t, p, err);
        p->nrows = p->ndels = 0;
    }
    t->ntouched = 0;
    return rc;
}

/* The key map is far larger than the caches once a checkpoint holds many rows, and a
 * lookup is one cache miss on its slot: on_changes encodes and hashes the key of the change
 * KEY_AHEAD places ahead and prefetches its slot (key_ahead), so the miss overlaps the work
 * on the changes between. The keys and their hashes are kept for on_change (ahead_key): the
 * same key bytes as long as the table's key columns did not change in between (on_changes
 * forgets them when they do). */
static void key_ahead(writer *w, const tstate *t, const w2l_change *c, uint32_t ci)
{
    size_t k = ci % KEY_AHEAD;
    w->ahead_ci[k] = 0;
    w2l_error e; /* only out of memory; on_change meets it again */
    if (w2l__wr_encode_key(&w->akey[k], t, c, &e) != W2L_OK) return;
    uint64_t h = w2l__wr_key_hash(w->akey[k].data, w->akey[k].len);
    w->ahead_h[k] = h;
    w->ahead_ci[k] = (uint64_t)ci + 1;
#if defined(__GNUC__) || defined(__clang__)
    if (t->kcap) __builtin_prefetch(&t->kslots[(h >> 32) & (t->kcap - 1)]);
#endif
}

/* The key of change c (index ci) and its hash: the one key_ahead made, else encoded now
 * into w->key. Borrowed until the next call. */
static w2l_rc ahead_key(writer *w, const tstate *t, const w2l_change *c, uint32_t ci,
                        const w2l_buf **key, uint64_t *h, w2l_error *err)
{
    size_t k = ci % KEY_AHEAD;
    if (w->ahead_ci[k] == (uint64_t)ci + 1) {
        *key = &w->akey[k];
        *h = w->ahead_h[k];
        return W2L_OK;
    }
    W2L_TRY(w2l__wr_encode_key(&w->key, t, c, err));
    *key = &w->key;
    *h = w2l__wr_key_hash(w->key.data, w->key.len);
    return W2L_OK;
}


static w2l_rc ensure_capacity(writer *w, size_t nf, size_t neq, w2l_error *err)
{
    if (w->dcap < nf * CHUNK_ROWS) {
        w2l_value *d = w2l__realloc(w->dbuf, nf * CHUNK_ROWS * sizeof *d);
        W2L_NOMEM_IF(!d, err);
        w->dbuf = d;
        w->dcap = nf * CHUNK_ROWS;
    }
    if (w->ecap < (neq ? neq : 1) * CHUNK_ROWS) {
        w2l_value *e = w2l__realloc(w->ebuf, (neq ? neq : 1) * CHUNK_ROWS * sizeof *e);
        W2L_NOMEM_IF(!e, err);
        w->ebuf = e;
        w->ecap = (neq ? neq : 1) * CHUNK_ROWS;
    }
    return W2L_OK;
}

/* Queues change ci on partition p: a data row, or (del) an equality delete. */
static w2l_rc queue(tstate *t, wpart *p, uint32_t ci, int del, w2l_error *err)
{
    uint32_t **v = del ? &p->dels : &p->rows;
    size_t *n = del ? &p->ndels : &p->nrows, *cap = del ? &p->dcap : &p->rcap;
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        uint32_t *nv = w2l__realloc(*v, ncap * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = ci;
    if (!p->touched) {
        if (t->ntouched == t->tcap) {
            size_t ncap = t->tcap ? t->tcap * 2 : 16;
            uint32_t *nt = w2l__realloc(t->touched, ncap * sizeof *nt);
            W2L_NOMEM_IF(!nt, err);
            t->touched = nt;
            t->tcap = ncap;
        }
        t->touched[t->ntouched++] = p->idx;
        p->touched = 1;
    }
    return W2L_OK;
}

/* Opens partition p's data file (or, eq, its equality-delete file). A table whose
 * writer.open-partitions partitions hold open files first completes the files of the one
 * it used least recently. */
static w2l_rc open_part_file(writer *w, tstate *t, wpart *p, int eq, w2l_error *err)
{
    if (!p->dw && !p->ew && t->nopen >= t->max_open) {
        W2L_TRY(flush_all(w, t, err)); /* every queued change goes where it was placed */
        wpart *lru = NULL;
        for (size_t i = 0; i < t->nparts; i++) {
            wpart *q = t->parts[i];
            if (q != p && (q->dw || q->ew) && (!lru || q->used < lru->used)) lru = q;
        }
        if (lru) W2L_TRY(w2l__wr_complete_part(w, t, lru, err));
    }
    if (eq ? p->ew != NULL : p->dw != NULL) return W2L_OK;
    int was_open = p->dw || p->ew;
    if (eq) {
        W2L_TRY(w2l__wr_open_file(w, t, p, t->eq_schema, "eq-delete", &p->epath, &p->ew, err));
    } else {
        char *path = NULL;
        W2L_TRY(w2l__wr_open_file(w, t, p, t->schema, "data", &path, &p->dw, err));
        w2l_rc rc = w2l__wr_file_add(t, path, p->key, p->klen, p->idx, &p->dpath, err);
        if (rc != W2L_OK) {
            w2l__pq_writer_abort(p->dw);
            p->dw = NULL;
            return rc;
        }
        p->drows = 0;
    }
    if (!was_open) t->nopen++;
    return W2L_OK;
}

/* nf: the field count of t's schema */
static w2l_rc on_change(writer *w, tstate *t, const w2l_change *c, uint32_t ci, size_t nf,
                        w2l_error *err)
{
    int is_delete = c->op == W2L_OP_DELETE || c->op == W2L_OP_UPDATE_BEFORE;
    int after_before = t->ub_set; /* t->ubkey: the key of the UPDATE_BEFORE just before c */
    t->ub_set = 0;
    if (t->policy == POL_FAIL)
        return w2l__fail(err, W2L_SCHEMA, "table %s has no primary key and no-pk-policy is fail",
                         t->fq);
    if (c->ncols != nf)
        return w2l__fail(err, W2L_SCHEMA,
                         "table %s: a change of %zu values for a schema of %zu columns", t->fq,
                         c->ncols, nf);
    wpart *p;
    if (is_delete) {
        if (t->policy == POL_APPEND_ONLY) return W2L_OK; /* append-only: deletes dropped */
        /* without a primary key, a column absent from the image (one the source does not
         * carry) is NULL, as it is in the rows that source inserted */
        for (size_t i = 0; t->policy == POL_PK && i < t->neq; i++)
            if (!w2l__wr_present(c, t->eq_idx[i]))
                return w2l__fail(err, W2L_SCHEMA,
                                 "table %s: a %s image without column %s, which its deletes "
                                 "match on",
                                 t->fq, c->op == W2L_OP_DELETE ? "delete" : "update-before",
                                 w2l_schema_field(t->schema, (size_t)t->eq_idx[i])->name);
        const w2l_buf *key;
        uint64_t h;
        W2L_TRY(ahead_key(w, t, c, ci, &key, &h, err));
        if (t->upsert && t->policy == POL_PK && c->op == W2L_OP_UPDATE_BEFORE) {
            t->ubkey.len = 0;
            W2L_TRY(w2l_buf_append(&t->ubkey, key->data, key->len, err));
            t->ub_set = 1;
        }
        kslot *s;
        W2L_TRY(w2l__wr_key_get(t, key, h, 0, &s, err));
        if (s && s->head >= 0) /* a live row: deleted by position */
            return w2l__wr_delete_head(t, s, err);
        if (t->posmode) return W2L_OK; /* the map holds every live row: the key has none */
        /* an equality delete in the partition of the before image, where the row lives,
         * and in its partition of each older spec that holds data files: a delete applies
         * only within its own spec and partition */
        for (size_t k = 0; k <= t->ndspecs; k++) {
            W2L_TRY(w2l__wr_part_of(w, t, k ? &t->dspecs[k - 1] : &t->spec, c, &p, err));
            p->used = ++t->clock;
            if (!p->ew) W2L_TRY(open_part_file(w, t, p, 1, err));
            W2L_TRY(queue(t, p, ci, 1, err));
            if (p->ndels == CHUNK_ROWS) W2L_TRY(flush_dels(w, t, p, err));
        }
        return W2L_OK;
    }
    if (c->present)
        for (size_t i = 0; i < nf; i++)
            if (!w2l__wr_present(c, (long)i))
                return w2l__fail(err, W2L_SCHEMA, "table %s: an %s image without column %s", t->fq,
                                 c->op == W2L_OP_INSERT ? "insert" : "update-after",
                                 w2l_schema_field(t->schema, i)->name);
    W2L_TRY(w2l__wr_part_of(w, t, &t->spec, c, &p, err));
    p->used = ++t->clock;
    if (!p->dw) W2L_TRY(open_part_file(w, t, p, 0, err));
    if (t->policy != POL_APPEND_ONLY) {
        const w2l_buf *key;
        uint64_t h;
        W2L_TRY(ahead_key(w, t, c, ci, &key, &h, err));
        kslot *s;
        W2L_TRY(w2l__wr_key_get(t, key, h, 1, &s, err));
        if (t->policy == POL_PK && s->head >= 0) {
            /* the key is live already: the new row replaces it */
            W2L_TRY(w2l__wr_delete_head(t, s, err));
        } else if (t->upsert && !t->posmode && t->policy == POL_PK &&
                   (c->op == W2L_OP_INSERT ||
                    (c->op == W2L_OP_UPDATE_AFTER &&
                     !(after_before && t->ubkey.len == key->len &&
                       !memcmp(t->ubkey.data, key->data, key->len))))) {
            /* it may live in an earlier checkpoint: an equality delete of the key, in the
             * new row's partition (same sequence number: the new row stays). An update's
             * after image needs none when its before image had the same key: that one
             * deleted the key's row already (an in-place update); one that moves the key
             * onto a key the table holds (a route's target: kept by a TRUNCATE of its
             * source, or another source's) replaces that row as an INSERT does. */
            if (!p->ew) W2L_TRY(open_part_file(w, t, p, 1, err));
            W2L_TRY(queue(t, p, ci, 1, err));
            if (p->ndels == CHUNK_ROWS) W2L_TRY(flush_dels(w, t, p, err));
        }
        W2L_TRY(w2l__wr_add_entry(t, s, t->policy == POL_FULL_ROW, err));
        kent *e = &t->ke[s->head];
        e->file = p->dpath;
        e->pos = (int64_t)(p->drows + p->nrows);
    }
    W2L_TRY(queue(t, p, ci, 0, err));
    return p->nrows == CHUNK_ROWS ? flush_rows(w, t, p, err) : W2L_OK;
}

/* Over the memory budget (between elements, nothing queued): the largest idle tables
 * complete their files; then the busy table's least recently used partitions, all but the
 * one it wrote last. */
static w2l_rc evict(writer *w, tstate *busy, w2l_error *err)
{
    while (w->mem > w->budget) {
        tstate *big = NULL;
        for (tstate *t = w->dirty; t; t = t->next_dirty)
            if (t != busy && t->mem && (!big || t->mem > big->mem)) big = t;
        if (big) {
            w2l__log(W2L_LOG_DEBUG,
                     "writer %u: memory budget: completing the files of %s (%llu bytes)",
                     w->index, big->fq, (unsigned long long)big->mem);
            W2L_TRY(w2l__wr_complete_all(w, big, err));
            continue;
        }
        wpart *lru = NULL;
        for (size_t i = 0; busy && i < busy->nparts; i++) {
            wpart *q = busy->parts[i];
            if (q != busy->last && (q->dw || q->ew) && (!lru || q->used < lru->used)) lru = q;
        }
        if (!lru) break;
        W2L_TRY(w2l__wr_complete_part(w, busy, lru, err));
        w2l__wr_account(w, busy);
    }
    return W2L_OK;
}

static w2l_rc on_changes(writer *w, const w2l_element *e, w2l_error *err)
{
    tstate *t;
    W2L_TRY(get_table(w, e->ns, e->table, &t, err));
    mark_dirty(w, t);
    w->changes = e->changes;
    w2l_rc rc = W2L_OK;
    size_t ahead = 0; /* changes [0, ahead) had their keys looked ahead (key_ahead) */
    memset(w->ahead_ci, 0, sizeof w->ahead_ci);
    size_t nf = t->schema ? w2l_schema_field_count(t->schema) : 0; /* t->schema's */
    for (size_t i = 0; rc == W2L_OK && i < e->nchanges; i++) {
        const w2l_change *c = &e->changes[i];
        if (c->schema != t->schema) {
            if (!t->schema || w2l_schema_id(c->schema) != w2l_schema_id(t->schema) ||
                w2l_schema_field_count(c->schema) != w2l_schema_field_count(t->schema)) {
                /* rows of another schema go to new files */
                rc = flush_all(w, t, err);
                if (rc == W2L_OK && t->schema) rc = w2l__wr_complete_all(w, t, err);
                if (rc == W2L_OK) rc = set_schema(w, t, c->schema, err);
                if (rc == W2L_OK) nf = w2l_schema_field_count(t->schema);
                /* the key columns may differ now: the hashes looked ahead are forgotten */
                memset(w->ahead_ci, 0, sizeof w->ahead_ci);
                ahead = i;
            }
            if (rc != W2L_OK) break;
        }
        if (t->policy == POL_PK || t->policy == POL_FULL_ROW) {
            size_t end = W2L_MIN(i + KEY_AHEAD, e->nchanges);
            for (ahead = W2L_MAX(ahead, i); ahead < end; ahead++)
                if (e->changes[ahead].ncols == nf)
                    key_ahead(w, t, &e->changes[ahead], (uint32_t)ahead);
        }
#if defined(__GNUC__) || defined(__clang__)
        if (i + 2 * KEY_AHEAD < e->nchanges) { /* the values of a change the source wrote */
            const w2l_change *f = &e->changes[i + 2 * KEY_AHEAD];
            const char *r = (const char *)f->row;
            for (size_t o = 0; o < f->ncols * sizeof *f->row; o += 64) __builtin_prefetch(r + o);
        }
#endif
        if ((rc = ensure_capacity(w, nf, t->neq, err)) != W2L_OK) break;
        if (t->posmode && !t->loaded && (rc = w2l__wr_index_load(w, t, err)) != W2L_OK) break;
        rc = on_change(w, t, c, (uint32_t)i, nf, err);
    }
    if (rc == W2L_OK) {
        rc = flush_all(w, t, err);
    } else { /* the job fails: what was queued goes nowhere */
        for (size_t i = 0; i < t->ntouched; i++) {
            wpart *p = t->parts[t->touched[i]];
            p->nrows = p->ndels = 0;
            p->touched = 0;
        }
        t->ntouched = 0;
    }
    w->changes = NULL;
    w2l__wr_account(w, t);
    if (rc == W2L_OK && w->mem > w->budget) rc = evict(w, t, err);
    if (rc == W2L_OK) rc = w2l__wr_index_bound(w, 0, err);
    return rc;
}

/* --------------------------------------------------------- schema, fence, barrier --- */

static void drop_checkpoint(writer *w, tstate *t);

/* SCHEMA names another incarnation of the table (it was dropped and created again, or
 * another table was renamed onto its name): nothing written of the old one in this
 * checkpoint may reach the new one — its files, its key map, its open writers. */
static void set_incarnation(writer *w, tstate *t, const char *uuid)
{
    if (!uuid || !strcmp(uuid, t->uuid)) return;
    if (t->uuid[0]) {
        w2l__log(W2L_LOG_INFO,
                 "writer %u: table %s is another table now (uuid %s, was %s); its rows of this "
                 "checkpoint are discarded",
                 w->index, t->fq, uuid, t->uuid);
        drop_checkpoint(w, t);
        t->truncated = 0;
        /* the other table may hold rows (one renamed onto the name): its index comes from
         * the lake, once what was written before is committed */
        t->loaded = 0;
        eq_clear(t); /* the next SCHEMA (or a rename's move) brings the new table's */
        w2l_schema_unref(t->schema);
        t->schema = NULL;
    }
    snprintf(t->uuid, sizeof t->uuid, "%s", uuid);
}

static w2l_rc on_schema(writer *w, const w2l_element *e, w2l_error *err)
{
    if (!e->schema)
        return w2l__fail(err, W2L_MISUSE, "SCHEMA element for %s.%s without a schema", e->ns,
                         e->table);
    tstate *t;
    W2L_TRY(get_table(w, e->ns, e->table, &t, err));
    if (e->payload && e->payload_len) {
        w2l__json *j;
        w2l_rc rc = w2l__json_parse(e->payload, e->payload_len, &j, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "SCHEMA element for %s: ", t->fq);
            return rc;
        }
        const char *loc = w2l__json_str(w2l__json_get(j, "location"));
        if (loc && (!t->location || strcmp(loc, t->location) != 0)) {
            char *c = w2l__strdup(loc);
            if (!c) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else {
                w2l__free(t->location);
                t->location = c;
            }
        }
        set_incarnation(w, t, w2l__json_str(w2l__json_get(j, "table-uuid")));
        int up = 0;
        t->upsert = w2l__json_bool(w2l__json_get(j, "upsert"), &up) == 0 && up;
        int changed = 0;
        if (rc == W2L_OK) rc = w2l__wr_set_specs(t, j, &changed, err);
        if (rc == W2L_OK && changed && t->nopen) { /* files of the old spec are complete */
            mark_dirty(w, t);
            rc = w2l__wr_complete_all(w, t, err);
        }
        w2l__json_free(j);
        W2L_TRY(rc);
    }
    if (t->schema == e->schema) return W2L_OK;
    if (t->schema && t->nopen && w2l_schema_id(t->schema) != w2l_schema_id(e->schema)) {
        mark_dirty(w, t);
        W2L_TRY(w2l__wr_complete_all(w, t, err));
    }
    return set_schema(w, t, e->schema, err);
}

/* Forgets what the writer holds of t in this checkpoint; the files already written become
 * orphans. */
static void drop_checkpoint(writer *w, tstate *t)
{
    w2l__wr_abort_all(t);
    t->npd = 0;
    w2l_buf_release(&t->results);
    t->nresults = 0;
    w2l__wr_keymap_clear(t);
    paths_clear(t);
    t->loaded = 1; /* the table has no rows now */
    mark_dirty(w, t);
    w2l__wr_account(w, t);
}

/* TRUNCATE: the table's rows of this checkpoint so far vanish with everything committed
 * before; the committer replaces the table's contents with what follows, in the
 * checkpoint's snapshot (ops.h). */
static void discard_checkpoint(writer *w, tstate *t)
{
    drop_checkpoint(w, t);
    t->truncated = 1;
}

/* After a RENAME TABLE of ns.table to nns.ntable, the runtime routes the new name's changes
 * to the old name's writers until the barrier (pipeline_nodes.c, writers_for) when one DDL
 * handler sees both names: then this writer gets the changes of the rows it wrote. */
static int renamed_here(const writer *w, const char *ns, const char *table, const char *nns,
                        const char *ntable)
{
    int64_t nddl = 1;
    w2l_conf_get_int(w->conf, "ddl-parallelism", &nddl, NULL);
    return nddl <= 1 || w2l__table_hash(ns, table) % (uint64_t)nddl ==
                            w2l__table_hash(nns, ntable) % (uint64_t)nddl;
}

/* Moves what the writer knows of the checkpoint's rows (the key map, the data file paths
 * it points into, the schema and key columns) from t to nt, which has none. */
static void move_keys(tstate *t, tstate *nt)
{
    w2l__arena_release(&nt->karena);
    nt->karena = t->karena;
    w2l__arena_init(&t->karena, 1 << 14);
    w2l__free(nt->kslots);
    w2l__free(nt->ks);
    w2l__free(nt->ke);
    nt->kslots = t->kslots, nt->ks = t->ks, nt->kcap = t->kcap, nt->kcount = t->kcount;
    nt->kscap = t->kscap;
    nt->ke = t->ke, nt->nke = t->nke, nt->kecap = t->kecap;
    w2l__krun_free(nt->run);
    w2l__krun_free(nt->young);
    nt->run = t->run, nt->young = t->young;
    t->run = t->young = NULL;
    t->kslots = NULL, t->ks = NULL, t->ke = NULL;
    t->kcap = t->kcount = t->kscap = t->nke = t->kecap = 0;
    nt->files = t->files, nt->nfiles = t->nfiles, nt->fcap = t->fcap;
    t->files = NULL, t->nfiles = t->fcap = 0;
    nt->posmode = t->posmode, nt->loaded = t->loaded, nt->ndead = t->ndead;
    t->loaded = 1, t->ndead = 0; /* nothing of the old name is left */
    w2l__wr_parts_move(t, nt);
    nt->schema = t->schema, nt->eq_schema = t->eq_schema, nt->eq_ids = t->eq_ids,
    nt->eq_idx = t->eq_idx, nt->eq_type = t->eq_type;
    nt->neq = t->neq, nt->policy = t->policy;
    t->schema = NULL, t->eq_schema = NULL, t->eq_ids = NULL, t->eq_idx = NULL, t->neq = 0;
    t->eq_type = NULL;
}

/* RENAME TABLE: the files this writer completed for the table in this checkpoint are
 * reported under its new name, so the committer commits them into the renamed table. */
static w2l_rc rename_results(writer *w, tstate *t, const char *payload, w2l_error *err)
{
    w2l__json *j;
    W2L_TRY(w2l__json_parse(payload, strlen(payload), &j, err));
    const w2l__json *to = w2l__json_get(j, "rename");
    const char *ns = w2l__json_str(w2l__json_get(to, "ns")),
               *table = w2l__json_str(w2l__json_get(to, "table"));
    w2l_rc rc = ns && table ? w2l__wr_complete_all(w, t, err)
                            : w2l__fail(err, W2L_CORRUPT, "table %s: bad rename marker", t->fq);
    tstate *nt = NULL;
    if (rc == W2L_OK && (t->nresults || t->truncated)) rc = get_table(w, ns, table, &nt, err);
    if (rc == W2L_OK && nt && t->uuid[0]) set_incarnation(w, nt, t->uuid); /* onto a dropped name */
    if (rc == W2L_OK && nt && t->truncated) {
        /* a TRUNCATE before the rename: the renamed table's commit replaces its contents */
        nt->truncated = 1;
        t->truncated = 0;
        mark_dirty(w, nt);
    }
    if (rc == W2L_OK && nt && t->nresults) {
        if (nt->nresults) rc = w2l_buf_append(&nt->results, ",", 1, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&nt->results, t->results.data, t->results.len, err);
        if (rc == W2L_OK) {
            nt->nresults += t->nresults;
            if (!nt->results_schema) nt->results_schema = t->results_schema;
            mark_dirty(w, nt);
            w2l_buf_release(&t->results);
            t->nresults = 0;
            if (t->want_pos) {
                /* below */
            } else if (nt->kcount == 0 && !nt->run && nt->nfiles == 0 && !nt->schema &&
                       renamed_here(w, t->ns, t->table, ns, table)) {
                move_keys(t, nt); /* later changes to rows written before the rename find them */
            } else {
                /* the new name's rows go to other writers (another DDL handler routes
                 * them, or the new name had rows here already): changes there to rows
                 * written here before the rename become equality deletes, which miss them
                 * until the next checkpoint (documented limitation) */
                w2l__wr_keymap_clear(t);
                paths_clear(t);
            }
        }
    }
    if (rc == W2L_OK && t->want_pos) {
        /* delete mode "position": the map holds the table's rows of earlier checkpoints
         * too; for the rest of this checkpoint they are the new name's */
        if (!nt) rc = get_table(w, ns, table, &nt, err);
        if (rc == W2L_OK && t->posmode && !t->loaded && t->schema)
            rc = w2l__wr_index_load(w, t, err); /* its rows are in the lake, by the old name */
        if (rc == W2L_OK && t->posmode && t->loaded && nt->kcount == 0 && !nt->run &&
            nt->nfiles == 0 &&
            !nt->schema && renamed_here(w, t->ns, t->table, ns, table)) {
            move_keys(t, nt);
        } else if (rc == W2L_OK) {
            /* the rows cannot come here (never loaded, or the new name's changes go to
             * other writers): equality deletes reach them until the barrier */
            w2l__log(W2L_LOG_DEBUG,
                     "writer %u: %s renamed to %s.%s: its deletes are equality deletes until "
                     "the next checkpoint",
                     w->index, t->fq, ns, table);
            w2l__wr_keymap_clear(t);
            paths_clear(t);
            t->loaded = 1;
            nt->posmode = 0;
        }
        if (rc == W2L_OK) {
            t->renamed = nt->renamed = 1;
            mark_dirty(w, t);
            mark_dirty(w, nt);
        }
    }
    w2l__json_free(j);
    return rc;
}

static w2l_rc on_fence(writer *w, const w2l_element *e, w2l_collector *out, w2l_error *err)
{
    uint64_t h = w2l__table_hash(e->ns, e->table);
    tstate *t = find_table(w, e->ns, e->table, h);
    if (e->payload && strcmp(e->payload, W2L_OPS_TRUNCATE_FENCE) == 0) {
        if (!t) W2L_TRY(get_table(w, e->ns, e->table, &t, err));
        discard_checkpoint(w, t);
    } else if (e->payload && strcmp(e->payload, W2L_OPS_RESYNC_BEGIN_FENCE) == 0) {
        if (!t) W2L_TRY(get_table(w, e->ns, e->table, &t, err));
        discard_checkpoint(w, t); /* also what an earlier begin held */
        t->holding = 1;
    } else if (e->payload && strcmp(e->payload, W2L_OPS_RESYNC_END_FENCE) == 0) {
        if (!t) W2L_TRY(get_table(w, e->ns, e->table, &t, err));
        W2L_TRY(w2l__wr_complete_all(w, t, err));
        t->holding = 0;
        mark_dirty(w, t); /* the next barrier reports what was held */
    } else if (e->payload && strncmp(e->payload, W2L_OPS_RENAME_FENCE_HEAD,
                                     strlen(W2L_OPS_RENAME_FENCE_HEAD)) == 0) {
        if (t) W2L_TRY(rename_results(w, t, e->payload, err));
    } else if (t) {
        W2L_TRY(w2l__wr_complete_all(w, t, err));
    }
    w2l_element ans = {0};
    ans.kind = W2L_ELEM_WRITER_COMMIT;
    ans.ns = e->ns;
    ans.table = e->table;
    ans.ddl_id = e->ddl_id;
    return w2l_collect(out, &ans, err);
}

static w2l_rc on_barrier(writer *w, uint64_t ckpt, w2l_collector *out, w2l_error *err)
{
    w->barrier = ckpt;
    w2l_rc rc = W2L_OK;
    w2l_buf pl = {0};
    tstate *t = w->dirty;
    /* the tables' files are closed together, durable before the barrier goes on (so
     * before the checkpoint that names them is sealed) */
    w->defer = 1;
    while (t && rc == W2L_OK) {
        rc = w2l__wr_complete_all(w, t, err);
        if (rc == W2L_OK && t->holding) { /* a re-read: its files wait for its end */
            tstate *next = t->next_dirty;
            t->dirty = 0;
            t->next_dirty = NULL;
            t = next;
            w->dirty = t;
            continue;
        }
        if (rc == W2L_OK && (t->nresults || t->truncated)) {
            pl.len = 0;
            rc = w2l__buf_printf(&pl, err, "{\"schema-id\":%d,%s%s%s%s\"files\":[%.*s]}",
                                 (int)t->results_schema, t->truncated ? "\"truncate\":true," : "",
                                 t->uuid[0] ? "\"table-uuid\":\"" : "", t->uuid,
                                 t->uuid[0] ? "\"," : "", (int)t->results.len,
                                 t->results.data ? (const char *)t->results.data : "");
            w2l_element r = {0};
            r.kind = W2L_ELEM_WRITE_RESULT;
            r.ns = t->ns;
            r.table = t->table;
            r.ckpt = ckpt;
            r.payload = (const char *)pl.data;
            r.payload_len = pl.len;
            if (rc == W2L_OK) rc = w2l_collect(out, &r, err);
        }
        if (rc != W2L_OK) break;
        /* nothing of this checkpoint is kept */
        w2l_buf_release(&t->results);
        t->nresults = 0;
        t->truncated = 0;
        if (t->renamed) {
            /* a RENAME in this checkpoint: the names' rows may go to other writers from
             * now on; whoever gets a change of one next loads it from the lake */
            w2l__wr_keymap_clear(t);
            paths_clear(t);
            t->loaded = t->renamed = 0;
            t->posmode = t->want_pos;
        } else if (!t->posmode) {
            w2l__wr_keymap_clear(t);
            paths_clear(t);
        } else {
            parts_reset(t);
            rc = w2l__wr_index_compact(t, err);
        }
        tstate *next = t->next_dirty;
        t->dirty = 0;
        t->next_dirty = NULL;
        t = next;
        w->dirty = t;
    }
    w->defer = 0;
    if (rc == W2L_OK) rc = w2l__wr_close_pending(w, err);
    else w2l__file_batch_release(&w->pend);
    if (rc == W2L_OK) rc = w2l__wr_index_bound(w, 1, err);
    w2l_buf_release(&pl);
    return rc;
}

/* ------------------------------------------------------------------ operator API --- */

w2l_rc w2l__ops_pq_options(const w2l_conf *conf, w2l__pq_options *o, w2l_error *err)
{
    w2l__pq_options_default(o);
    int64_t v;
    W2L_TRY(w2l_conf_get_int(conf, "parquet.compression", &v, err));
    o->codec = v == 0 ? W2L_PQ_ZSTD : W2L_PQ_UNCOMPRESSED;
    W2L_TRY(w2l_conf_get_int(conf, "parquet.zstd-level", &v, err));
    o->zstd_level = (int)v;
    W2L_TRY(w2l_conf_get_int(conf, "parquet.page-bytes", &v, err));
    o->page_bytes = (size_t)v;
    W2L_TRY(w2l_conf_get_int(conf, "parquet.row-group-bytes", &v, err));
    o->row_group_bytes = (size_t)v;
    W2L_TRY(w2l_conf_get_int(conf, "parquet.dictionary-bytes", &v, err));
    o->dict_bytes = (size_t)v;
    return W2L_OK;
}

static w2l_rc wr_open(const w2l_operator_methods *m, const w2l_conf *conf, unsigned index,
                      unsigned n, w2l_state *st, uint64_t restored, w2l_operator *self,
                      w2l_error *err)
{
    (void)m, (void)st;
    writer *w = (writer *)self;
    w->conf = conf;
    w->index = index;
    w->n = n ? n : 1;
    w->barrier = restored;
    w->rw = w2l__maint_rewrites(w2l__maint_current());
    W2L_TRY(w2l__ops_pq_options(conf, &w->pq, err));
    W2L_TRY(w2l__pq_codec_new(&w->codec, err));
    w->pq.codec_ctx = w->codec;
    int64_t v;
    W2L_TRY(w2l_conf_get_int(conf, "writer.memory-budget", &v, err));
    w->budget = (uint64_t)v;
    W2L_TRY(w2l_conf_get_int(conf, "writer.key-index-memory", &v, err));
    w->kbudget = (uint64_t)v / w->n; /* the pipeline's, split between its writers */
#ifdef W2L_TESTING
    /* test hook: a budget below the key's least (1: every map spills at every element and
     * barrier), so that any suite can run with its indexes on disk */
    const char *force = getenv("W2L_TEST_KEY_INDEX_MEMORY");
    if (force && *force) w->kbudget = strtoull(force, NULL, 10);
#endif
    const char *sd = NULL;
    w2l_conf_get(conf, "writer.spill-dir", &sd, NULL);
    if (sd && *sd && !(w->spill_dir = w2l__strdup(sd)))
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    w->pos_schema = w2l_schema_new(0);
    W2L_NOMEM_IF(!w->pos_schema, err);
    W2L_TRY(w2l_schema_add_field(w->pos_schema, W2L_PQ_FIELD_ID_FILE_PATH, "file_path",
                                 (w2l_type){W2L_TYPE_STRING, 0, 0}, 1, err));
    W2L_TRY(w2l_schema_add_field(w->pos_schema, W2L_PQ_FIELD_ID_POS, "pos",
                                 (w2l_type){ W2L_TYPE_LONG, 0, 0 }, 1, err));
    const char *wh = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    return w2l__fileio_open_for(conf, wh, &w->io, err);
}

/* A compaction the pipeline committed (rewrites.h). */
static w2l_rc on_rewrite(void *ctx, const char *ns, const char *table, const char *const *removed,
                         size_t nremoved, const char *const *added, size_t nadded,
                         w2l_error *err)
{
    writer *w = ctx;
    tstate *t = find_table(w, ns, table, w2l__table_hash(ns, table));
    return t ? w2l__wr_index_rewritten(w, t, removed, nremoved, added, nadded, err) : W2L_OK;
}

static w2l_rc wr_process(w2l_operator *self, const w2l_element *e, w2l_collector *out,
                         w2l_error *err)
{
    writer *w = (writer *)self;
    /* the deletes queued in the checkpoint in progress may name files a compaction
     * removed: the committer moves those (rewrites.h), from the next one on none do */
    if (w->rw && w2l__rewrites_newest(w->rw) != w->rw_seen)
        W2L_TRY(w2l__rewrites_take(w->rw, &w->rw_seen, w->barrier + 2, on_rewrite, w, err));
    switch (e->kind) {
    case W2L_ELEM_CHANGES: return on_changes(w, e, err);
    case W2L_ELEM_SCHEMA: return on_schema(w, e, err);
    case W2L_ELEM_WRITER_COMMIT: return on_fence(w, e, out, err);
    case W2L_ELEM_BARRIER: return on_barrier(w, e->ckpt, out, err);
    default: return W2L_OK; /* END: the final barrier came before it */
    }
}

static w2l_rc wr_complete(w2l_operator *self, uint64_t ckpt, w2l_error *err)
{
    (void)self, (void)ckpt, (void)err;
    return W2L_OK;
}

static void wr_close(w2l_operator *self)
{
    writer *w = (writer *)self;
    for (size_t i = 0; i < w->tcap; i++) tstate_free(w->tabs[i]); /* open files are aborted */
    w2l__kdir_close(w->kdir); /* after the runs in it */
    w2l__free(w->spill_dir);
    w2l__metrics *mt = w2l__metrics_current();
    if (mt && (w->kkeys || w->kmem || w->kdisk))
        w2l__metrics_key_index(mt, -(int64_t)w->kkeys, -(int64_t)w->kmem, -(int64_t)w->kdisk, 0);
    w2l__pq_codec_free(w->codec); /* after the files that used it */
    w2l__free(w->tabs);
    w2l__free(w->dbuf);
    w2l__free(w->ebuf);
    w2l_buf_release(&w->key);
    for (size_t i = 0; i < KEY_AHEAD; i++) w2l_buf_release(&w->akey[i]);
    w2l_buf_release(&w->pkey);
    w2l__free(w->pvals);
    w2l__file_batch_release(&w->pend);
    w2l_schema_unref(w->pos_schema);
    w2l__catalog_close(w->cat);
    w2l_fileio_close(w->io);
    memset((char *)w + sizeof w->base, 0, sizeof *w - sizeof w->base);
}

const w2l_operator_methods w2l__op_writer = {
    .version = W2L_OPERATOR_METHODS_V1,
    .name = "default",
    .kind = W2L_OPERATOR_WRITER,
    .size = sizeof(writer),
    .open = wr_open,
    .process = wr_process,
    .notify_complete = wr_complete,
    .close = wr_close,
};
