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
 * overlap the work on the changes between instead of stalling each lookup.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_writer_int.h"
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

/* The first capacity of a key map array: room for the last checkpoint's n, at least 16. */
static size_t first_cap(size_t n)
{
    size_t c = 16;
    while (c < n && c < ((size_t)1 << 40)) c *= 2;
    return c;
}

static void keymap_clear(tstate *t)
{
    t->khint = t->kcount;
    t->kehint = t->nke;
    w2l__free(t->kslots);
    w2l__free(t->ks);
    w2l__free(t->ke);
    t->kslots = NULL;
    t->ks = NULL;
    t->ke = NULL;
    t->kcap = t->kcount = t->kscap = t->nke = t->kecap = 0;
    w2l__arena_release(&t->karena);
    w2l__arena_init(&t->karena, 1 << 14);
}

/* Forgets the checkpoint's data file paths and partitions (their files are completed or
 * aborted). */
static void paths_clear(tstate *t)
{
    for (size_t i = 0; i < t->npaths; i++) w2l__free(t->paths[i]);
    w2l__free(t->paths);
    w2l__free(t->path_part);
    t->paths = NULL;
    t->path_part = NULL;
    t->npaths = t->pcap = 0;
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
    w2l__free(t->kslots);
    w2l__free(t->ks);
    w2l__free(t->ke);
    w2l__arena_release(&t->karena);
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

static w2l_rc rekey(writer *w, tstate *t, const int32_t *ids, size_t nids, w2l_error *err);
static w2l_rc live_rows(const tstate *t, kent **out, size_t *nout, w2l_error *err);
static w2l_rc reread_keys(writer *w, tstate *t, kent *live, size_t n, w2l_error *err);

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
    if (rc == W2L_OK && t->kcount && full_row) rc = rekey(w, t, eq_ids, neq, err);
    kent *live = NULL;
    size_t nlive = 0;
    if (rc == W2L_OK && t->kcount && !full_row &&
        (t->policy != policy || !same_ids(t->eq_ids, t->neq, eq_ids, neq))) {
        if (policy == POL_PK || policy == POL_FULL_ROW) rc = live_rows(t, &live, &nlive, err);
        keymap_clear(t);
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
        rc = reread_keys(w, t, live, nlive, err);
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
            w2l__error_prefix(err, "table %s: file %s: ", t->fq, t->paths[p->dpath]);
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
            w2l__error_prefix(err, "table %s: file %s: ", t->fq, p->epath);
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

static int present(const w2l_change *c, long i)
{
    return !c->present || (c->present[i >> 3] >> (i & 7) & 1);
}

/* The key of change c in w->key: for each equality column (field-id order) whose value is
 * not NULL, its field id (4 bytes) and its value as comparable bytes — integers, booleans
 * and dates as 8 bytes, floats as doubles (so a widened column keeps its keys), decimals
 * as 16 bytes of unscaled value, strings and binaries as a 4-byte length and the bytes.
 * NULL values (and, in a row without primary key, columns absent from the image) are left
 * out, so a row written before a column was added has the key of the same row with the
 * new column NULL. value_len() reads an entry back. */
static w2l_rc encode_key(w2l_buf *b, const tstate *t, const w2l_change *c, w2l_error *err)
{
    /* the common key, one 8-byte column (a bigint or timestamp primary key): the bytes of
     * the general loop's default case, written directly */
    if (t->neq == 1 && (t->eq_type[0] == W2L_TYPE_LONG || t->eq_type[0] == W2L_TYPE_TIME ||
                        t->eq_type[0] == W2L_TYPE_TIMESTAMP ||
                        t->eq_type[0] == W2L_TYPE_TIMESTAMPTZ)) {
        const w2l_value *v = &c->row[t->eq_idx[0]];
        b->len = 0;
        if (v->is_null || !present(c, t->eq_idx[0])) return W2L_OK;
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
        if (v->is_null || !present(c, t->eq_idx[i])) continue;
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

/* The hash of an encoded key. Keys of 8 to 16 bytes (a single integer, date, timestamp or
 * double column is 12) take two overlapping 8-byte words through a 64-bit finaliser twice,
 * inline; longer and shorter ones the general hash. */
static inline uint64_t key_hash(const unsigned char *p, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        return w2l__mix64(a ^ w2l__mix64(b ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL));
    }
    return w2l__hash64(p, n, 0x6b6d6170);
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
    if (encode_key(&w->akey[k], t, c, &e) != W2L_OK) return;
    uint64_t h = key_hash(w->akey[k].data, w->akey[k].len);
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
    W2L_TRY(encode_key(&w->key, t, c, err));
    *key = &w->key;
    *h = key_hash(w->key.data, w->key.len);
    return W2L_OK;
}

/* The entry of key (hash h); with add, inserts it (copied) when absent. NULL when absent
 * (or out of memory with add: *err set). The slot index and the tag are the hash's upper
 * 32 bits. */
static kslot *key_slot(tstate *t, const w2l_buf *key, uint64_t h, int add, w2l_error *err)
{
    uint32_t h32 = (uint32_t)(h >> 32);
    if (t->kcap) {
        for (size_t i = h32 & (t->kcap - 1);; i = (i + 1) & (t->kcap - 1)) {
            uint64_t e = t->kslots[i];
            if (!e) break;
            if ((uint32_t)(e >> 32) != h32) continue;
            kslot *s = &t->ks[(uint32_t)e - 1];
            if (key_eq(s, key->data, key->len)) return s;
        }
    }
    if (!add) return NULL;
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
    s->len = (uint32_t)key->len;
    s->head = -1;
    if (key->len >= 8 && key->len <= KEY_INLINE) { /* two overlapping words, as key_eq */
        memcpy(s->key.in, key->data, 8);
        memcpy(s->key.in + key->len - 8, key->data + key->len - 8, 8);
    } else if (key->len <= KEY_INLINE) {
        if (key->len) memcpy(s->key.in, key->data, key->len);
    } else {
        unsigned char *copy = w2l__arena_alloc(&t->karena, key->len);
        if (!copy) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(copy, key->data, key->len);
        s->key.p = copy;
    }
    size_t k = h32 & (t->kcap - 1);
    while (t->kslots[k]) k = (k + 1) & (t->kcap - 1);
    t->kslots[k] = (uint64_t)h32 << 32 | (uint64_t)(t->kcount + 1);
    t->kcount++;
    return s;
}

static w2l_rc add_pos_delete(tstate *t, const kent *e, w2l_error *err)
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

static w2l_rc add_entry(tstate *t, kslot *s, int chain, w2l_error *err)
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
static w2l_rc rekey(writer *w, tstate *t, const int32_t *ids, size_t nids, w2l_error *err)
{
    int dropped = 0;
    for (size_t i = 0; i < t->neq && !dropped; i++) dropped = !has_id(ids, nids, t->eq_ids[i]);
    if (!dropped) return W2L_OK; /* every key is valid as it is */
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
        kslot *s =
            rc == W2L_OK ? key_slot(t, &w->key, key_hash(w->key.data, w->key.len), 1, err) : NULL;
        if (!s) {
            if (rc == W2L_OK) rc = W2L_NOMEM;
            break;
        }
        /* rows that differed only in a dropped column: one chain now */
        int32_t tail = o->head;
        while (t->ke[tail].next >= 0) tail = t->ke[tail].next;
        t->ke[tail].next = s->head;
        s->head = o->head;
    }
    w2l__free(old);
    w2l__arena_release(&oarena);
    if (rc != W2L_OK) keymap_clear(t);
    return rc;
}

/* The rows of the key map that are live (written in this checkpoint, not deleted since):
 * their files and positions, in *out (caller frees). */
static w2l_rc live_rows(const tstate *t, kent **out, size_t *nout, w2l_error *err)
{
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

static int live_cmp(const void *a, const void *b)
{
    const kent *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The key columns changed (set_schema, with the new ones in t): the n live rows of this
 * checkpoint get their keys under the new columns, read back from their data files (a
 * column a file lacks is NULL; a value of a column widened since is widened). */
static w2l_rc reread_keys(writer *w, tstate *t, kent *live, size_t n, w2l_error *err)
{
    qsort(live, n, sizeof *live, live_cmp);
    if (w->pend.n) W2L_TRY(w2l__wr_close_pending(w, err));
    size_t nf = w2l_schema_field_count(t->schema);
    w2l_value *row = w2l__calloc(nf + 1, sizeof *row);
    w2l_value **vals = w2l__calloc(t->neq + 1, sizeof *vals);
    long *at = w2l__calloc(t->neq + 1, sizeof *at);
    w2l_type_id *ft = w2l__calloc(t->neq + 1, sizeof *ft);
    w2l_rc rc = row && vals && at && ft ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; i < nf && row; i++) row[i].is_null = 1;
    w2l_change c = {0};
    c.row = row;
    c.ncols = nf;
    c.schema = t->schema;
    for (size_t k = 0; rc == W2L_OK && k < n;) {
        uint32_t file = live[k].file;
        size_t end = k;
        while (end < n && live[end].file == file) end++;
        const char *path = t->paths[file];
        w2l__pq_reader *r = NULL;
        rc = w2l__pq_reader_open(w->io, path, &r, err);
        const w2l_schema *fs = r ? w2l__pq_reader_schema(r) : NULL;
        for (size_t i = 0; rc == W2L_OK && i < t->neq; i++) {
            at[i] = w2l_schema_index_of_id(fs, t->eq_ids[i]);
            ft[i] = at[i] >= 0 ? w2l_schema_field(fs, (size_t)at[i])->type.id : 0;
        }
        uint64_t first = 0;
        for (size_t rg = 0; rc == W2L_OK && r && rg < w2l__pq_reader_num_row_groups(r) && k < end;
             rg++) {
            uint64_t rows = w2l__pq_reader_row_group_rows(r, rg);
            if ((uint64_t)live[k].pos >= first + rows) {
                first += rows;
                continue;
            }
            for (size_t i = 0; rc == W2L_OK && i < t->neq; i++) {
                if (at[i] < 0) continue;
                w2l__free(vals[i]);
                vals[i] = w2l__calloc(rows + 1, sizeof **vals);
                if (!vals[i]) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                else rc = w2l__pq_reader_read_column(r, rg, (size_t)at[i], vals[i], err);
            }
            for (; rc == W2L_OK && k < end && (uint64_t)live[k].pos < first + rows; k++) {
                size_t ri = (size_t)((uint64_t)live[k].pos - first);
                for (size_t i = 0; i < t->neq; i++) {
                    w2l_value v = {0};
                    v.is_null = 1;
                    if (at[i] >= 0) v = vals[i][ri];
                    if (!v.is_null && ft[i] == W2L_TYPE_INT && t->eq_type[i] == W2L_TYPE_LONG)
                        v.v.i64 = v.v.i32;
                    if (!v.is_null && ft[i] == W2L_TYPE_FLOAT && t->eq_type[i] == W2L_TYPE_DOUBLE)
                        v.v.f64 = v.v.f32;
                    row[t->eq_idx[i]] = v;
                }
                rc = encode_key(&w->key, t, &c, err);
                kslot *s = rc == W2L_OK
                               ? key_slot(t, &w->key, key_hash(w->key.data, w->key.len), 1, err)
                               : NULL;
                if (!s && rc == W2L_OK) rc = W2L_NOMEM;
                if (rc == W2L_OK) rc = add_entry(t, s, 1, err);
                if (rc == W2L_OK) {
                    t->ke[s->head].file = file;
                    t->ke[s->head].pos = live[k].pos;
                }
            }
            first += rows;
        }
        if (rc == W2L_OK && k < end)
            rc = w2l__fail(err, W2L_CORRUPT, "row %lld is past the end of the file",
                           (long long)live[k].pos);
        if (rc != W2L_OK && rc != W2L_NOMEM)
            w2l__error_prefix(err, "table %s: the key columns changed; reading back %s: ", t->fq,
                              path);
        w2l__pq_reader_close(r);
        k = end;
    }
    for (size_t i = 0; vals && i < t->neq; i++) w2l__free(vals[i]);
    w2l__free(vals);
    w2l__free(at);
    w2l__free(ft);
    w2l__free(row);
    if (rc == W2L_OK)
        w2l__log(W2L_LOG_DEBUG,
                 "writer %u: %s: key columns changed; %zu rows of this checkpoint keyed anew",
                 w->index, t->fq, n);
    else keymap_clear(t);
    /* several writers share the table by the hash of the key (pipeline_nodes.c): under the
     * new key a row may go to another writer, whose map lacks the rows written here */
    const char *par = NULL;
    if (rc == W2L_OK &&
        w2l_conf_get_for_table(w->conf, t->fq, "table-parallelism", &par, NULL) == W2L_OK &&
        par && strtol(par, NULL, 10) > 1 && w->n > 1)
        w2l__log(W2L_LOG_WARN,
                 "writer %u: %s: the key columns changed within a checkpoint that wrote %zu "
                 "rows of the table here; with table-parallelism %s an update or delete of one "
                 "of them after the change may reach another writer and leave the old row in "
                 "the lake (table.%s.table-parallelism=1 keeps the table on one writer)",
                 w->index, t->fq, n, par, t->fq);
    return rc;
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
        if (t->npaths == t->pcap) {
            size_t ncap = t->pcap ? t->pcap * 2 : 8;
            char **np = w2l__realloc(t->paths, ncap * sizeof *np);
            W2L_NOMEM_IF(!np, err);
            t->paths = np;
            uint32_t *pp = w2l__realloc(t->path_part, ncap * sizeof *pp);
            W2L_NOMEM_IF(!pp, err);
            t->path_part = pp;
            t->pcap = ncap;
        }
        char *path = NULL;
        W2L_TRY(w2l__wr_open_file(w, t, p, t->schema, "data", &path, &p->dw, err));
        t->paths[t->npaths] = path;
        t->path_part[t->npaths] = p->idx;
        p->dpath = (uint32_t)t->npaths++;
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
            if (!present(c, t->eq_idx[i]))
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
        kslot *s = key_slot(t, key, h, 0, err);
        if (s && s->head >= 0) {
            /* written in this checkpoint: only a position delete reaches it */
            kent *e = &t->ke[s->head];
            W2L_TRY(add_pos_delete(t, e, err));
            s->head = e->next;
            return W2L_OK;
        }
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
            if (!present(c, (long)i))
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
        kslot *s = key_slot(t, key, h, 1, err);
        if (!s) return W2L_NOMEM;
        if (t->policy == POL_PK && s->head >= 0) {
            /* the key is live in this checkpoint already: the new row replaces it */
            W2L_TRY(add_pos_delete(t, &t->ke[s->head], err));
            s->head = t->ke[s->head].next;
        } else if (t->upsert && t->policy == POL_PK &&
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
        W2L_TRY(add_entry(t, s, t->policy == POL_FULL_ROW, err));
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
    keymap_clear(t);
    paths_clear(t);
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
    t->kslots = NULL, t->ks = NULL, t->ke = NULL;
    t->kcap = t->kcount = t->kscap = t->nke = t->kecap = 0;
    nt->paths = t->paths, nt->path_part = t->path_part, nt->npaths = t->npaths,
    nt->pcap = t->pcap;
    t->paths = NULL, t->path_part = NULL, t->npaths = t->pcap = 0;
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
            if (nt->kcount == 0 && nt->npaths == 0 && !nt->schema &&
                renamed_here(w, t->ns, t->table, ns, table)) {
                move_keys(t, nt); /* later changes to rows written before the rename find them */
            } else {
                /* the new name's rows go to other writers (another DDL handler routes
                 * them, or the new name had rows here already): changes there to rows
                 * written here before the rename become equality deletes, which miss them
                 * until the next checkpoint (documented limitation) */
                keymap_clear(t);
                paths_clear(t);
            }
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
    w2l_rc rc = W2L_OK;
    w2l_buf pl = {0};
    tstate *t = w->dirty;
    /* the tables' files are closed together, durable before the barrier goes on (so
     * before the checkpoint that names them is sealed) */
    w->defer = 1;
    while (t && rc == W2L_OK) {
        rc = w2l__wr_complete_all(w, t, err);
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
        keymap_clear(t);
        paths_clear(t);
        tstate *next = t->next_dirty;
        t->dirty = 0;
        t->next_dirty = NULL;
        t = next;
        w->dirty = t;
    }
    w->defer = 0;
    if (rc == W2L_OK) rc = w2l__wr_close_pending(w, err);
    else w2l__file_batch_release(&w->pend);
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
    (void)m, (void)st, (void)restored;
    writer *w = (writer *)self;
    w->conf = conf;
    w->index = index;
    w->n = n ? n : 1;
    W2L_TRY(w2l__ops_pq_options(conf, &w->pq, err));
    W2L_TRY(w2l__pq_codec_new(&w->codec, err));
    w->pq.codec_ctx = w->codec;
    int64_t v;
    W2L_TRY(w2l_conf_get_int(conf, "writer.memory-budget", &v, err));
    w->budget = (uint64_t)v;
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

static w2l_rc wr_process(w2l_operator *self, const w2l_element *e, w2l_collector *out,
                         w2l_error *err)
{
    writer *w = (writer *)self;
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
