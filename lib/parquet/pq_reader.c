/*
 * A minimal Parquet reader for the files this module writes (flat schemas of primitive
 * columns with field ids; v1 data pages; PLAIN, PLAIN_DICTIONARY / RLE_DICTIONARY values;
 * RLE definition levels; UNCOMPRESSED, ZSTD or GZIP), for tests, for commands that show lake
 * contents and for compaction. parquet.thrift FileMetaData is parsed with the bounded
 * Thrift reader of thrift_compact.c.
 *
 * Nothing read from the file is trusted: the magic at both ends, the footer length, every
 * offset and size of a column chunk (inside the data region, before the footer), every
 * page size (inside its chunk), every value count (pages add up to the row group's rows),
 * every length prefix and RLE run (inside its page) and every dictionary index (below the
 * dictionary size) are checked. A violation is W2L_CORRUPT naming the file, row group,
 * column and byte offset; the reader never reads outside what it allocated.
 *
 * Reading a column chunk: its bytes are read at once, the page headers are walked to size
 * one buffer for all decompressed pages (so string values can point into it and stay valid
 * while the chunk is in use), then each page is decompressed and decoded into w2l_values.
 */
#include <stdio.h>

#include "pq_int.h"
#include "../common/gzip.h"

#define MAX_CHUNK_UNCOMPRESSED ((size_t)1 << 31)

typedef struct pq_col {
    int phys, type_len, optional;
    w2l_type type;
    char *name;
    /* buffers of the last chunk read */
    w2l_buf raw;       /* compressed chunk bytes */
    uint8_t *data;     /* decompressed pages */
    size_t data_cap;
    w2l_value *dict;
    size_t dict_cap;
} pq_col;

typedef struct pq_rg {
    int64_t num_rows;
    w2l__pq_chunk_info *chunks;
} pq_rg;

struct w2l__pq_reader {
    w2l_rfile *f;
    char *name;
    uint64_t size, footer_start;
    uint8_t *footer;
    size_t footer_len;
    w2l_schema *schema;
    size_t ncols;
    pq_col *cols;
    int64_t num_rows;
    size_t nrg;
    pq_rg *rgs;
    size_t nkv;
    char **keys, **vals;
    size_t *val_lens;
    w2l__pq_codec *codec;
    uint32_t *levels;
    size_t levels_cap;
    w2l_value *rows; /* read_row_group */
    size_t rows_cap;
};

/* ---- footer parsing ---- */

typedef struct schema_el {
    int type, type_len, repetition, num_children, converted, scale, precision;
    int has_type, has_field_id, has_children;
    int32_t field_id;
    int lt;          /* LogicalType member, 0 = none */
    int lt_utc, lt_unit, lt_scale, lt_precision;
    const uint8_t *name;
    size_t name_len;
} schema_el;

static int32_t rd_i32(w2l__tc_reader *r, int t) { return (int32_t)w2l__tc_read_int(r, t); }

static void parse_unit(w2l__tc_reader *r, schema_el *e)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        e->lt_unit = id;
        w2l__tc_skip(r, t);
    }
    w2l__tc_leave(r);
}

static void parse_logical(w2l__tc_reader *r, schema_el *e)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        if (t != TC_STRUCT) { w2l__tc_skip(r, t); continue; }
        e->lt = id;
        if (!w2l__tc_enter(r)) break;
        int16_t l2 = 0, id2;
        int t2;
        while (w2l__tc_next_field(r, &l2, &t2, &id2)) {
            if (id == PQ_LT_DECIMAL && id2 == 1) e->lt_scale = rd_i32(r, t2);
            else if (id == PQ_LT_DECIMAL && id2 == 2) e->lt_precision = rd_i32(r, t2);
            else if ((id == PQ_LT_TIME || id == PQ_LT_TIMESTAMP) && id2 == 1)
                e->lt_utc = w2l__tc_read_bool(r, t2);
            else if ((id == PQ_LT_TIME || id == PQ_LT_TIMESTAMP) && id2 == 2 && t2 == TC_STRUCT)
                parse_unit(r, e);
            else w2l__tc_skip(r, t2);
        }
        w2l__tc_leave(r);
    }
    w2l__tc_leave(r);
}

static void parse_schema_el(w2l__tc_reader *r, schema_el *e)
{
    memset(e, 0, sizeof *e);
    e->converted = -1;
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        switch (id) {
        case 1: e->type = rd_i32(r, t); e->has_type = 1; break;
        case 2: e->type_len = rd_i32(r, t); break;
        case 3: e->repetition = rd_i32(r, t); break;
        case 4:
            if (t != TC_BINARY) { w2l__tc_corrupt(r, "schema name is not a string"); break; }
            e->name = w2l__tc_read_binary(r, &e->name_len);
            break;
        case 5: e->num_children = rd_i32(r, t); e->has_children = 1; break;
        case 6: e->converted = rd_i32(r, t); break;
        case 7: e->scale = rd_i32(r, t); break;
        case 8: e->precision = rd_i32(r, t); break;
        case 9: e->field_id = rd_i32(r, t); e->has_field_id = 1; break;
        case 10:
            if (t == TC_STRUCT) parse_logical(r, e);
            else w2l__tc_skip(r, t);
            break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

static void parse_stats(w2l__tc_reader *r, w2l__pq_chunk_info *ci)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        size_t n;
        switch (id) {
        case 3: ci->null_count = w2l__tc_read_int(r, t); ci->has_null_count = 1; break;
        case 5:
            if (t != TC_BINARY) { w2l__tc_skip(r, t); break; }
            ci->max_value = w2l__tc_read_binary(r, &n);
            ci->max_len = n;
            break;
        case 6:
            if (t != TC_BINARY) { w2l__tc_skip(r, t); break; }
            ci->min_value = w2l__tc_read_binary(r, &n);
            ci->min_len = n;
            break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

static void parse_col_meta(w2l__tc_reader *r, w2l__pq_chunk_info *ci, unsigned *seen)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        switch (id) {
        case 1: ci->physical = rd_i32(r, t); *seen |= 1; break;
        case 2: {
            if (t != TC_LIST) { w2l__tc_corrupt(r, "encodings is not a list"); break; }
            int et;
            size_t n = w2l__tc_read_list(r, &et);
            for (size_t i = 0; i < n && r->rc == W2L_OK; i++) {
                int64_t e = w2l__tc_read_int(r, et);
                if (e >= 0 && e < 32) ci->encodings |= 1u << e;
            }
            break;
        }
        case 4: ci->codec = rd_i32(r, t); *seen |= 2; break;
        case 5: ci->num_values = w2l__tc_read_int(r, t); *seen |= 4; break;
        case 6: ci->total_uncompressed = w2l__tc_read_int(r, t); break;
        case 7: ci->total_compressed = w2l__tc_read_int(r, t); *seen |= 8; break;
        case 9: ci->data_page_offset = w2l__tc_read_int(r, t); *seen |= 16; break;
        case 11: ci->dict_page_offset = w2l__tc_read_int(r, t); break;
        case 12:
            if (t == TC_STRUCT) parse_stats(r, ci);
            else w2l__tc_skip(r, t);
            break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

static void parse_chunk(w2l__tc_reader *r, w2l__pq_chunk_info *ci)
{
    memset(ci, 0, sizeof *ci);
    ci->dict_page_offset = -1;
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    unsigned seen = 0;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        if (id == 1) {
            w2l__tc_corrupt(r, "column chunk in another file (file_path) not supported");
        } else if (id == 3 && t == TC_STRUCT) {
            parse_col_meta(r, ci, &seen);
        } else {
            w2l__tc_skip(r, t);
        }
    }
    if (r->rc == W2L_OK && seen != 31) w2l__tc_corrupt(r, "column chunk without its metadata");
    w2l__tc_leave(r);
}

static w2l_rc parse_row_group(w2l__pq_reader *pr, w2l__tc_reader *r, pq_rg *g, w2l_error *err)
{
    if (!w2l__tc_enter(r)) return r->rc;
    int16_t last = 0, id;
    int t;
    size_t nch = 0;
    int have_rows = 0;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        if (id == 1 && t == TC_LIST) {
            int et;
            size_t n = w2l__tc_read_list(r, &et);
            if (r->rc != W2L_OK) break;
            if (n != pr->ncols || et != TC_STRUCT || g->chunks) {
                w2l__tc_corrupt(r, "row group has %zu columns, schema %zu", n, pr->ncols);
                break;
            }
            g->chunks = w2l__calloc(n ? n : 1, sizeof *g->chunks);
            W2L_NOMEM_IF(!g->chunks, err);
            for (size_t i = 0; i < n && r->rc == W2L_OK; i++) parse_chunk(r, &g->chunks[i]);
            nch = n;
        } else if (id == 3) {
            g->num_rows = w2l__tc_read_int(r, t);
            have_rows = 1;
        } else {
            w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
    if (r->rc != W2L_OK) return r->rc;
    if (!g->chunks || nch != pr->ncols || !have_rows || g->num_rows < 0)
        return w2l__tc_corrupt(r, "row group without columns or row count");
    return W2L_OK;
}

static w2l_rc el_type(const schema_el *e, w2l_type *t, w2l_error *err)
{
    memset(t, 0, sizeof *t);
    int dec = e->lt == PQ_LT_DECIMAL || e->converted == PQ_CT_DECIMAL;
    if (dec) {
        int p = e->lt == PQ_LT_DECIMAL ? e->lt_precision : e->precision;
        int s = e->lt == PQ_LT_DECIMAL ? e->lt_scale : e->scale;
        if (p < 1 || p > 38 || s < 0 || s > p)
            return w2l__fail(err, W2L_CORRUPT, "decimal(%d,%d) out of range", p, s);
        t->id = W2L_TYPE_DECIMAL;
        t->precision = (uint8_t)p;
        t->scale = (uint8_t)s;
        if ((e->type == PQ_INT32 && p > 9) || (e->type == PQ_INT64 && p > 18) ||
            (e->type == PQ_FLBA && (e->type_len < 1 || e->type_len > 16)) ||
            (e->type != PQ_INT32 && e->type != PQ_INT64 && e->type != PQ_FLBA))
            return w2l__fail(err, W2L_CORRUPT, "decimal(%d,%d) in physical type %d", p, s, e->type);
        return W2L_OK;
    }
    switch (e->type) {
    case PQ_BOOLEAN: t->id = W2L_TYPE_BOOLEAN; return W2L_OK;
    case PQ_INT32:
        t->id = (e->lt == PQ_LT_DATE || e->converted == PQ_CT_DATE) ? W2L_TYPE_DATE : W2L_TYPE_INT;
        return W2L_OK;
    case PQ_INT64:
        if (e->lt == PQ_LT_TIME || e->converted == PQ_CT_TIME_MICROS) {
            if (e->lt == PQ_LT_TIME && e->lt_unit != PQ_UNIT_MICROS)
                return w2l__fail(err, W2L_CORRUPT, "TIME unit %d not supported", e->lt_unit);
            t->id = W2L_TYPE_TIME;
        } else if (e->lt == PQ_LT_TIMESTAMP) {
            if (e->lt_unit != PQ_UNIT_MICROS)
                return w2l__fail(err, W2L_CORRUPT, "TIMESTAMP unit %d not supported", e->lt_unit);
            t->id = e->lt_utc ? W2L_TYPE_TIMESTAMPTZ : W2L_TYPE_TIMESTAMP;
        } else if (e->converted == PQ_CT_TIMESTAMP_MICROS) {
            t->id = W2L_TYPE_TIMESTAMPTZ;
        } else {
            t->id = W2L_TYPE_LONG;
        }
        return W2L_OK;
    case PQ_FLOAT: t->id = W2L_TYPE_FLOAT; return W2L_OK;
    case PQ_DOUBLE: t->id = W2L_TYPE_DOUBLE; return W2L_OK;
    case PQ_BYTE_ARRAY:
        t->id = (e->lt == PQ_LT_STRING || e->converted == PQ_CT_UTF8) ? W2L_TYPE_STRING
                                                                      : W2L_TYPE_BINARY;
        return W2L_OK;
    case PQ_FLBA:
        if (e->type_len < 0) return w2l__fail(err, W2L_CORRUPT, "negative type_length");
        t->id = W2L_TYPE_BINARY;
        return W2L_OK;
    default:
        return w2l__fail(err, W2L_CORRUPT, "physical type %d not supported", e->type);
    }
}

static w2l_rc parse_footer(w2l__pq_reader *pr, w2l_error *err)
{
    w2l__tc_reader r;
    w2l__tc_reader_init(&r, pr->footer, pr->footer_len, "footer", err);
    schema_el *els = NULL;
    int have_rows = 0, have_rgs = 0;
    w2l_rc rc = W2L_OK;
    int16_t last = 0, id;
    int t;
    while (rc == W2L_OK && w2l__tc_next_field(&r, &last, &t, &id)) {
        if (id == 2 && t == TC_LIST && !els) {
            int et;
            size_t n = w2l__tc_read_list(&r, &et);
            if (r.rc != W2L_OK) break;
            if (et != TC_STRUCT || n < 1) {
                w2l__tc_corrupt(&r, "empty or malformed schema");
                break;
            }
            els = w2l__calloc(n, sizeof *els);
            if (!els) { rc = w2l__fail(err, W2L_NOMEM, "out of memory"); break; }
            for (size_t i = 0; i < n && r.rc == W2L_OK; i++) parse_schema_el(&r, &els[i]);
            if (r.rc != W2L_OK) break;
            if (!els[0].has_children || els[0].num_children != (int)(n - 1)) {
                w2l__tc_corrupt(&r, "only flat schemas are supported (root has %d children of %zu)",
                                els[0].num_children, n - 1);
                break;
            }
            pr->ncols = n - 1;
            pr->cols = w2l__calloc(n, sizeof *pr->cols);
            pr->schema = w2l_schema_new(0);
            if (!pr->cols || !pr->schema) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            for (size_t i = 1; i < n && rc == W2L_OK; i++) {
                schema_el *e = &els[i];
                pq_col *c = &pr->cols[i - 1];
                if (!e->has_type || e->has_children || !e->name || e->repetition == PQ_REPEATED) {
                    rc = w2l__fail(err, W2L_CORRUPT,
                                   "footer: schema element %zu is not a primitive column", i);
                    break;
                }
                c->name = w2l__strndup((const char *)e->name, e->name_len);
                if (!c->name) { rc = w2l__fail(err, W2L_NOMEM, "out of memory"); break; }
                if (!e->has_field_id) {
                    rc = w2l__fail(err, W2L_CORRUPT, "footer: column %s has no field_id", c->name);
                    break;
                }
                rc = el_type(e, &c->type, err);
                if (rc != W2L_OK) { w2l__error_prefix(err, "footer: column %s: ", c->name); break; }
                c->phys = e->type;
                c->type_len = e->type_len;
                c->optional = e->repetition != PQ_REQUIRED;
                rc = w2l_schema_add_field(pr->schema, e->field_id, c->name, c->type, !c->optional,
                                          err);
                if (rc != W2L_OK) {
                    rc = W2L_CORRUPT;
                    err->code = W2L_CORRUPT;
                    w2l__error_prefix(err, "footer: ");
                }
            }
        } else if (id == 3) {
            pr->num_rows = w2l__tc_read_int(&r, t);
            have_rows = 1;
        } else if (id == 4 && t == TC_LIST) {
            if (!els) { w2l__tc_corrupt(&r, "row groups before the schema"); break; }
            int et;
            size_t n = w2l__tc_read_list(&r, &et);
            if (r.rc != W2L_OK) break;
            pr->rgs = w2l__calloc(n ? n : 1, sizeof *pr->rgs);
            if (!pr->rgs) { rc = w2l__fail(err, W2L_NOMEM, "out of memory"); break; }
            for (size_t i = 0; i < n && rc == W2L_OK && r.rc == W2L_OK; i++) {
                pr->nrg = i + 1;
                rc = parse_row_group(pr, &r, &pr->rgs[i], err);
            }
            have_rgs = 1;
        } else if (id == 5 && t == TC_LIST) {
            int et;
            size_t n = w2l__tc_read_list(&r, &et);
            if (r.rc != W2L_OK) break;
            pr->keys = w2l__calloc(n + 1, sizeof *pr->keys);
            pr->vals = w2l__calloc(n + 1, sizeof *pr->vals);
            pr->val_lens = w2l__calloc(n + 1, sizeof *pr->val_lens);
            if (!pr->keys || !pr->vals || !pr->val_lens) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            for (size_t i = 0; i < n && r.rc == W2L_OK && rc == W2L_OK; i++) {
                if (!w2l__tc_enter(&r)) break;
                int16_t l2 = 0, id2;
                int t2;
                pr->nkv = i + 1;
                while (w2l__tc_next_field(&r, &l2, &t2, &id2)) {
                    if ((id2 == 1 || id2 == 2) && t2 == TC_BINARY) {
                        size_t len;
                        const uint8_t *p = w2l__tc_read_binary(&r, &len);
                        char *s = w2l__strndup(p ? (const char *)p : "", len);
                        if (!s) { rc = w2l__fail(err, W2L_NOMEM, "out of memory"); break; }
                        if (id2 == 1) { w2l__free(pr->keys[i]); pr->keys[i] = s; }
                        else { w2l__free(pr->vals[i]); pr->vals[i] = s; pr->val_lens[i] = len; }
                    } else {
                        w2l__tc_skip(&r, t2);
                    }
                }
                w2l__tc_leave(&r);
                if (r.rc == W2L_OK && rc == W2L_OK && !pr->keys[i])
                    w2l__tc_corrupt(&r, "key/value without a key");
            }
        } else {
            w2l__tc_skip(&r, t);
        }
    }
    w2l__free(els);
    if (rc != W2L_OK) return rc;
    if (r.rc != W2L_OK) return r.rc;
    if (!pr->cols || !have_rows || !have_rgs)
        return w2l__fail(err, W2L_CORRUPT, "footer: schema, num_rows or row_groups missing");
    /* cross-checks */
    int64_t sum = 0;
    for (size_t g = 0; g < pr->nrg; g++) {
        pq_rg *rg = &pr->rgs[g];
        if (rg->num_rows > INT64_MAX - sum)
            return w2l__fail(err, W2L_CORRUPT, "footer: row counts overflow");
        sum += rg->num_rows;
        for (size_t c = 0; c < pr->ncols; c++) {
            const w2l__pq_chunk_info *ci = &rg->chunks[c];
            const pq_col *col = &pr->cols[c];
            int64_t start = ci->dict_page_offset >= 0 ? ci->dict_page_offset : ci->data_page_offset;
            if (ci->physical != col->phys)
                return w2l__fail(err, W2L_CORRUPT,
                                 "row group %zu column %s: type %d, schema says %d", g, col->name,
                                 ci->physical, col->phys);
            if (ci->codec != W2L_PQ_UNCOMPRESSED && ci->codec != W2L_PQ_ZSTD &&
                ci->codec != W2L_PQ_GZIP)
                return w2l__fail(err, W2L_CORRUPT,
                                 "row group %zu column %s: codec %d not supported", g, col->name,
                                 ci->codec);
            if (ci->num_values != rg->num_rows)
                return w2l__fail(err, W2L_CORRUPT,
                                 "row group %zu column %s: %lld values in %lld rows", g, col->name,
                                 (long long)ci->num_values, (long long)rg->num_rows);
            if (start < 4 || ci->total_compressed < 0 || (uint64_t)start > pr->footer_start ||
                (uint64_t)ci->total_compressed > pr->footer_start - (uint64_t)start ||
                (ci->dict_page_offset >= 0 && ci->data_page_offset < ci->dict_page_offset) ||
                (uint64_t)ci->data_page_offset > (uint64_t)start + (uint64_t)ci->total_compressed)
                return w2l__fail(err, W2L_CORRUPT,
                                 "row group %zu column %s: chunk at %lld size %lld outside the "
                                 "data (footer at %llu)",
                                 g, col->name, (long long)start, (long long)ci->total_compressed,
                                 (unsigned long long)pr->footer_start);
        }
    }
    if (sum != pr->num_rows)
        return w2l__fail(err, W2L_CORRUPT, "footer: num_rows %lld, row groups hold %lld",
                         (long long)pr->num_rows, (long long)sum);
    return W2L_OK;
}

/* ---- open / close ---- */

void w2l__pq_reader_close(w2l__pq_reader *r)
{
    if (!r) return;
    if (r->f) w2l_rfile_close(r->f);
    for (size_t i = 0; i < r->ncols && r->cols; i++) {
        w2l__free(r->cols[i].name);
        w2l_buf_release(&r->cols[i].raw);
        w2l__free(r->cols[i].data);
        w2l__free(r->cols[i].dict);
    }
    w2l__free(r->cols);
    for (size_t g = 0; g < r->nrg; g++) w2l__free(r->rgs[g].chunks);
    w2l__free(r->rgs);
    for (size_t i = 0; i < r->nkv; i++) {
        w2l__free(r->keys[i]);
        w2l__free(r->vals[i]);
    }
    w2l__free(r->keys);
    w2l__free(r->vals);
    w2l__free(r->val_lens);
    w2l__free(r->footer);
    w2l__free(r->levels);
    w2l__free(r->rows);
    w2l__pq_codec_free(r->codec);
    w2l_schema_unref(r->schema);
    w2l__free(r->name);
    w2l__free(r);
}

static w2l_rc open_inner(w2l__pq_reader *r, w2l_error *err)
{
    r->size = w2l_rfile_size(r->f);
    if (r->size < 12)
        return w2l__fail(err, W2L_CORRUPT, "%llu bytes is too short for Parquet",
                         (unsigned long long)r->size);
    uint8_t head[4], tail[8];
    W2L_TRY(w2l_rfile_pread(r->f, head, 4, 0, err));
    W2L_TRY(w2l_rfile_pread(r->f, tail, 8, r->size - 8, err));
    if (memcmp(head, "PAR1", 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "no PAR1 magic at the start");
    if (memcmp(tail + 4, "PAR1", 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "no PAR1 magic at the end");
    uint32_t flen = w2l__ld32(tail);
    if ((uint64_t)flen > r->size - 12)
        return w2l__fail(err, W2L_CORRUPT, "footer length %u exceeds the file (%llu bytes)", flen,
                         (unsigned long long)r->size);
    r->footer_start = r->size - 8 - flen;
    r->footer_len = flen;
    r->footer = w2l__malloc(flen ? flen : 1);
    W2L_NOMEM_IF(!r->footer, err);
    W2L_TRY(w2l_rfile_pread(r->f, r->footer, flen, r->footer_start, err));
    W2L_TRY(w2l__pq_codec_new(&r->codec, err));
    return parse_footer(r, err);
}

w2l_rc w2l__pq_reader_open_rfile(w2l_rfile *f, const char *name, w2l__pq_reader **out,
                                 w2l_error *err)
{
    *out = NULL;
    w2l__pq_reader *r = w2l__calloc(1, sizeof *r);
    if (!r) {
        w2l_rfile_close(f);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    r->f = f;
    r->name = w2l__strdup(name ? name : "(parquet)");
    w2l_rc rc = r->name ? open_inner(r, err) : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "parquet %s: ", name ? name : "");
        w2l__pq_reader_close(r);
        return rc;
    }
    *out = r;
    return W2L_OK;
}

w2l_rc w2l__pq_reader_open(w2l_fileio *io, const char *path, w2l__pq_reader **out,
                           w2l_error *err)
{
    *out = NULL;
    w2l_rfile *f;
    W2L_TRY(w2l_fileio_open_read(io, path, &f, err));
    return w2l__pq_reader_open_rfile(f, path, out, err);
}

const w2l_schema *w2l__pq_reader_schema(const w2l__pq_reader *r) { return r->schema; }
uint64_t w2l__pq_reader_num_rows(const w2l__pq_reader *r) { return (uint64_t)r->num_rows; }
size_t w2l__pq_reader_num_row_groups(const w2l__pq_reader *r) { return r->nrg; }

uint64_t w2l__pq_reader_row_group_rows(const w2l__pq_reader *r, size_t rg)
{
    return rg < r->nrg ? (uint64_t)r->rgs[rg].num_rows : 0;
}

const char *w2l__pq_reader_kv(const w2l__pq_reader *r, const char *key, size_t *len)
{
    for (size_t i = 0; i < r->nkv; i++)
        if (r->keys[i] && strcmp(r->keys[i], key) == 0) {
            if (len) *len = r->val_lens[i];
            return r->vals[i];
        }
    return NULL;
}

const w2l__pq_chunk_info *w2l__pq_reader_chunk(const w2l__pq_reader *r, size_t rg, size_t col)
{
    if (rg >= r->nrg || col >= r->ncols) return NULL;
    return &r->rgs[rg].chunks[col];
}

/* ---- values ---- */

/* Decodes n PLAIN values of column c from p[0..len) into out (non-NULL slots). */
static w2l_rc decode_plain(const pq_col *c, const uint8_t *p, size_t len, w2l_value *out,
                           size_t n, w2l_error *err)
{
    size_t pos = 0;
    int dec = c->type.id == W2L_TYPE_DECIMAL;
    switch (c->phys) {
    case PQ_BOOLEAN:
        if ((n + 7) / 8 > len)
            return w2l__fail(err, W2L_CORRUPT, "%zu booleans in %zu bytes", n, len);
        for (size_t i = 0; i < n; i++) out[i].v.i32 = (p[i >> 3] >> (i & 7)) & 1;
        return W2L_OK;
    case PQ_INT32:
    case PQ_FLOAT:
        if (n > len / 4) return w2l__fail(err, W2L_CORRUPT, "%zu values in %zu bytes", n, len);
        for (size_t i = 0; i < n; i++) {
            uint32_t u = w2l__ld32(p + 4 * i);
            if (c->phys == PQ_FLOAT) memcpy(&out[i].v.f32, &u, 4);
            else if (dec) out[i].v.dec = w2l__i128_from_i64((int32_t)u);
            else out[i].v.i32 = (int32_t)u;
        }
        return W2L_OK;
    case PQ_INT64:
    case PQ_DOUBLE:
        if (n > len / 8) return w2l__fail(err, W2L_CORRUPT, "%zu values in %zu bytes", n, len);
        for (size_t i = 0; i < n; i++) {
            uint64_t u = w2l__ld64(p + 8 * i);
            if (c->phys == PQ_DOUBLE) memcpy(&out[i].v.f64, &u, 8);
            else if (dec) out[i].v.dec = w2l__i128_from_i64((int64_t)u);
            else out[i].v.i64 = (int64_t)u;
        }
        return W2L_OK;
    case PQ_FLBA: {
        size_t w = (size_t)c->type_len;
        if (w && n > len / w) return w2l__fail(err, W2L_CORRUPT, "%zu values in %zu bytes", n, len);
        for (size_t i = 0; i < n; i++) {
            if (dec) {
                if (w2l__decimal_from_be(p + w * i, w, &out[i].v.dec) != 0)
                    return w2l__fail(err, W2L_CORRUPT, "decimal of %zu bytes", w);
            } else {
                out[i].v.bytes.ptr = (const char *)p + w * i;
                out[i].v.bytes.len = w;
            }
        }
        return W2L_OK;
    }
    case PQ_BYTE_ARRAY:
        for (size_t i = 0; i < n; i++) {
            if (len - pos < 4)
                return w2l__fail(err, W2L_CORRUPT,
                                 "byte array %zu: length prefix past the page end", i);
            uint32_t l = w2l__ld32(p + pos);
            pos += 4;
            if (l > len - pos)
                return w2l__fail(err, W2L_CORRUPT, "byte array %zu of %u bytes past the page end",
                                 i, l);
            out[i].v.bytes.ptr = (const char *)p + pos;
            out[i].v.bytes.len = l;
            pos += l;
        }
        return W2L_OK;
    }
    return w2l__fail(err, W2L_CORRUPT, "physical type %d", c->phys);
}

static w2l_rc need_levels(w2l__pq_reader *r, size_t n, w2l_error *err)
{
    if (n <= r->levels_cap) return W2L_OK;
    uint32_t *l = w2l__realloc(r->levels, n * sizeof *l);
    W2L_NOMEM_IF(!l, err);
    r->levels = l;
    r->levels_cap = n;
    return W2L_OK;
}

/* Decodes one v1 data page body (decompressed) into out[0..nvals). */
static w2l_rc decode_data_page(w2l__pq_reader *r, pq_col *c, const w2l__pq_page_header *h,
                               const uint8_t *p, size_t len, w2l_value *out, size_t dict_n,
                               w2l_error *err)
{
    size_t n = (size_t)h->num_values, nonnull = n;
    W2L_TRY(need_levels(r, n ? n : 1, err));
    if (c->optional) {
        if (len < 4) return w2l__fail(err, W2L_CORRUPT, "definition levels truncated");
        uint32_t dl = w2l__ld32(p);
        if (dl > len - 4)
            return w2l__fail(err, W2L_CORRUPT, "definition levels of %u bytes past the page end",
                             dl);
        W2L_TRY(w2l__rle_decode_u32(p + 4, dl, 1, r->levels, n, 1, NULL, err));
        p += 4 + dl;
        len -= 4 + dl;
        nonnull = 0;
        for (size_t i = 0; i < n; i++) nonnull += r->levels[i];
    }
    /* decode the non-NULL values packed at the front of out, then spread them */
    if (h->encoding == PQ_ENC_PLAIN) {
        W2L_TRY(decode_plain(c, p, len, out, nonnull, err));
    } else if (h->encoding == PQ_ENC_RLE_DICTIONARY || h->encoding == PQ_ENC_PLAIN_DICTIONARY) {
        if (!dict_n && nonnull)
            return w2l__fail(err, W2L_CORRUPT, "dictionary-encoded page without a dictionary");
        if (len < 1) return w2l__fail(err, W2L_CORRUPT, "dictionary page without a bit width");
        int bw = p[0];
        if (bw > 32) return w2l__fail(err, W2L_CORRUPT, "bit width %d", bw);
        uint32_t *idx = w2l__malloc((nonnull ? nonnull : 1) * sizeof *idx);
        W2L_NOMEM_IF(!idx, err);
        w2l_rc rc = w2l__rle_decode_u32(p + 1, len - 1, bw, idx, nonnull,
                                        dict_n ? (uint32_t)(dict_n - 1) : 0, NULL, err);
        if (rc == W2L_OK)
            for (size_t i = 0; i < nonnull; i++) out[i] = c->dict[idx[i]];
        w2l__free(idx);
        W2L_TRY(rc);
    } else {
        return w2l__fail(err, W2L_CORRUPT, "value encoding %d not supported", h->encoding);
    }
    if (c->optional) {
        size_t k = nonnull;
        for (size_t i = n; i-- > 0;) {
            if (r->levels[i]) {
                out[i] = out[--k];
                out[i].is_null = 0;
            } else {
                memset(&out[i], 0, sizeof out[i]);
                out[i].is_null = 1;
            }
        }
    } else {
        for (size_t i = 0; i < n; i++) out[i].is_null = 0;
    }
    return W2L_OK;
}

static w2l_rc read_column(w2l__pq_reader *r, size_t rg, size_t col, w2l_value *out,
                          w2l_error *err)
{
    const w2l__pq_chunk_info *ci = &r->rgs[rg].chunks[col];
    pq_col *c = &r->cols[col];
    const size_t nrows = (size_t)r->rgs[rg].num_rows;
    const int64_t start = ci->dict_page_offset >= 0 ? ci->dict_page_offset : ci->data_page_offset;
    const size_t clen = (size_t)ci->total_compressed;
    c->raw.len = 0;
    W2L_TRY(w2l__buf_reserve(&c->raw, clen ? clen : 1, err));
    W2L_TRY(w2l_rfile_pread(r->f, c->raw.data, clen, (uint64_t)start, err));
    c->raw.len = clen;
    /* pass 1: page headers, total decompressed size */
    size_t pos = 0, total = 0, pages = 0;
    while (pos < clen) {
        w2l__pq_page_header h;
        size_t used;
        w2l_rc rc = w2l__pq_page_header_read(c->raw.data + pos, clen - pos, &h, &used, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "page at offset %llu: ", (unsigned long long)start + pos);
            return rc;
        }
        if ((size_t)h.compressed_size > clen - pos - used)
            return w2l__fail(err, W2L_CORRUPT,
                             "page at offset %llu: %d bytes run past the column chunk",
                             (unsigned long long)start + pos, h.compressed_size);
        if ((size_t)h.uncompressed_size > MAX_CHUNK_UNCOMPRESSED - total)
            return w2l__fail(err, W2L_CORRUPT, "page at offset %llu: uncompressed sizes too large",
                             (unsigned long long)start + pos);
        total += (size_t)h.uncompressed_size;
        pos += used + (size_t)h.compressed_size;
        pages++;
    }
    if (total > c->data_cap) {
        uint8_t *d = w2l__realloc(c->data, total);
        W2L_NOMEM_IF(!d, err);
        c->data = d;
        c->data_cap = total;
    }
    /* pass 2: decode */
    size_t dpos = 0, o = 0, dict_n = 0;
    pos = 0;
    for (size_t pg = 0; pg < pages; pg++) {
        w2l__pq_page_header h;
        size_t used;
        const uint64_t at = (uint64_t)start + pos;
        W2L_TRY(w2l__pq_page_header_read(c->raw.data + pos, clen - pos, &h, &used, err));
        const uint8_t *body = c->raw.data + pos + used;
        uint8_t *dst = c->data + dpos;
        w2l_rc rc = W2L_OK;
        if ((h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DICTIONARY) && ci->codec == W2L_PQ_GZIP)
            rc = w2l__gzip_decompress(body, (size_t)h.compressed_size, dst,
                                         (size_t)h.uncompressed_size, err);
        else if (h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DICTIONARY)
            rc = w2l__pq_decompress(r->codec, ci->codec, body, (size_t)h.compressed_size, dst,
                                    (size_t)h.uncompressed_size, err);
        if (rc == W2L_OK) {
            if (h.type == PQ_PAGE_DICTIONARY) {
                if (pg != 0) rc = w2l__fail(err, W2L_CORRUPT, "dictionary page after data pages");
                else if (h.encoding != PQ_ENC_PLAIN && h.encoding != PQ_ENC_PLAIN_DICTIONARY)
                    rc = w2l__fail(err, W2L_CORRUPT, "dictionary encoding %d", h.encoding);
                else if ((size_t)h.num_values > (size_t)h.uncompressed_size * 8 + 8)
                    rc = w2l__fail(err, W2L_CORRUPT, "dictionary of %d values in %d bytes",
                                   h.num_values, h.uncompressed_size);
                if (rc == W2L_OK && (size_t)h.num_values > c->dict_cap) {
                    w2l_value *d = w2l__realloc(c->dict, (size_t)h.num_values * sizeof *d);
                    if (!d) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                    else { c->dict = d; c->dict_cap = (size_t)h.num_values; }
                }
                if (rc == W2L_OK) {
                    rc = decode_plain(c, dst, (size_t)h.uncompressed_size, c->dict,
                                      (size_t)h.num_values, err);
                    for (size_t i = 0; rc == W2L_OK && i < (size_t)h.num_values; i++)
                        c->dict[i].is_null = 0;
                    dict_n = (size_t)h.num_values;
                }
            } else if (h.type == PQ_PAGE_DATA) {
                if ((size_t)h.num_values > nrows - o)
                    rc = w2l__fail(err, W2L_CORRUPT, "page holds %d values, only %zu rows left",
                                   h.num_values, nrows - o);
                else
                    rc = decode_data_page(r, c, &h, dst, (size_t)h.uncompressed_size, out + o,
                                          dict_n, err);
                if (rc == W2L_OK) o += (size_t)h.num_values;
            } else if (h.type == PQ_PAGE_DATA_V2) {
                rc = w2l__fail(err, W2L_CORRUPT, "data page v2 not supported");
            } /* index pages are skipped */
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "page at offset %llu: ", (unsigned long long)at);
            return rc;
        }
        dpos += (size_t)h.uncompressed_size;
        pos += used + (size_t)h.compressed_size;
    }
    if (o != nrows)
        return w2l__fail(err, W2L_CORRUPT, "pages hold %zu values, row group %zu rows", o, nrows);
    return W2L_OK;
}

w2l_rc w2l__pq_reader_read_column(w2l__pq_reader *r, size_t rg, size_t col, w2l_value *out,
                                  w2l_error *err)
{
    if (rg >= r->nrg || col >= r->ncols)
        return w2l__fail(err, W2L_MISUSE, "parquet %s: no row group %zu column %zu", r->name, rg,
                         col);
    w2l_rc rc = read_column(r, rg, col, out, err);
    if (rc != W2L_OK)
        w2l__error_prefix(err, "parquet %s: row group %zu column %s: ", r->name, rg,
                          r->cols[col].name);
    return rc;
}

w2l_rc w2l__pq_reader_read_row_group(w2l__pq_reader *r, size_t rg, const w2l_value **rows,
                                     w2l_error *err)
{
    *rows = NULL;
    if (rg >= r->nrg)
        return w2l__fail(err, W2L_MISUSE, "parquet %s: no row group %zu", r->name, rg);
    size_t n = (size_t)r->rgs[rg].num_rows;
    if (n > SIZE_MAX / sizeof(w2l_value) / (r->ncols + 1))
        return w2l__fail(err, W2L_CORRUPT, "parquet %s: row group %zu too large", r->name, rg);
    size_t need = n * r->ncols;
    if (need > r->rows_cap) {
        w2l_value *v = w2l__realloc(r->rows, need * sizeof *v);
        W2L_NOMEM_IF(!v, err);
        r->rows = v;
        r->rows_cap = need;
    }
    w2l_value *tmp = w2l__malloc((n ? n : 1) * sizeof *tmp);
    W2L_NOMEM_IF(!tmp, err);
    for (size_t c = 0; c < r->ncols; c++) {
        w2l_rc rc = w2l__pq_reader_read_column(r, rg, c, tmp, err);
        if (rc != W2L_OK) {
            w2l__free(tmp);
            return rc;
        }
        for (size_t i = 0; i < n; i++) r->rows[i * r->ncols + c] = tmp[i];
    }
    w2l__free(tmp);
    *rows = r->rows;
    return W2L_OK;
}
