/*
 * A Parquet file being written: rows or column batches in, row groups out, then the footer
 * (parquet.thrift FileMetaData, Thrift compact protocol).
 *
 * File grammar:
 *   file   := "PAR1" rowgroup* footer le32(footer length) "PAR1"
 *   rowgroup := chunk(column 0) ... chunk(column n-1)     (see column_writer.c)
 *   footer := FileMetaData{1 version=1, 2 schema, 3 num_rows, 4 row_groups,
 *                          5 key_value_metadata, 6 created_by, 7 column_orders}
 *   schema := root{name "table", num_children n} then one leaf per Iceberg field:
 *             {1 type, 2 type_length (FLBA), 3 repetition, 4 name, 6 converted_type,
 *              7 scale, 8 precision, 9 field_id, 10 logicalType}
 * Example: an empty file of one required int column "id" with field id 1 and no key/value
 * metadata is "PAR1", a 70-odd byte footer, its length and "PAR1".
 *
 * Memory: one open row group (its compressed pages, dictionaries and open pages) plus the
 * footer's per-chunk facts; a row group closes when its estimated size reaches
 * row_group_bytes, so memory does not grow with the file.
 */
#include <stdio.h>

#include "pq_writer_int.h"

void w2l__pq_options_default(w2l__pq_options *o)
{
    memset(o, 0, sizeof *o);
    o->codec = W2L_PQ_ZSTD;
    o->zstd_level = 3;
    o->page_bytes = (size_t)1 << 20;
    o->row_group_bytes = (size_t)128 << 20;
    o->dict_bytes = (size_t)2 << 20;
    o->bound_chars = 16;
    o->add_iceberg_schema = 1;
}

size_t w2l__pq_sanitize_name(const char *name, char *buf, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
#define EMIT(ch)                                    \
    do {                                            \
        if (n + 1 < size) buf[n] = (char)(ch);      \
        n++;                                        \
    } while (0)
    for (size_t i = 0; name[i]; i++) {
        unsigned char ch = (unsigned char)name[i];
        int alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        int digit = ch >= '0' && ch <= '9';
        if (alpha || ch >= 0x80 || (digit && i > 0)) {
            EMIT(ch); /* non-ASCII bytes pass through (Java keeps letters as they are) */
        } else if (digit) {
            EMIT('_');
            EMIT(ch);
        } else {
            EMIT('_');
            EMIT('x');
            if (ch >= 0x10) EMIT(hex[ch >> 4]);
            EMIT(hex[ch & 15]);
        }
    }
#undef EMIT
    if (size) buf[n < size ? n : size - 1] = '\0';
    return n;
}

w2l_rc w2l__pq_file_write(w2l__pq_writer *w, const void *p, size_t n, w2l_error *err)
{
    if (!n) return W2L_OK;
    w2l_rc rc = w2l_file_write(w->file, p, n, err);
    if (rc != W2L_OK) {
        w->io_failed = 1;
        return rc;
    }
    w->offset += n;
    return W2L_OK;
}

/* Names the file in a failure of the writer's own (an encoding, a NULL in a required
 * column); a failure of the file IO names its path already. */
static void name_file(const w2l__pq_writer *w, const char *path, w2l_error *err)
{
    if (!w || !w->io_failed) w2l__error_prefix(err, "parquet %s: ", path ? path : "?");
}

static void writer_free(w2l__pq_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->ncols && w->cols; i++) w2l__pq_colw_free(&w->cols[i]);
    w2l__free(w->cols);
    for (size_t i = 0; i < w->nrg * w->ncols; i++) {
        w2l__free(w->meta[i].min);
        w2l__free(w->meta[i].max);
    }
    w2l__free(w->meta);
    w2l__free(w->rg_rows_list);
    w2l__free(w->rg_start);
    w2l__free(w->rg_uncomp);
    w2l__free(w->rg_comp);
    for (size_t i = 0; i < w->nkv; i++) {
        w2l__free((char *)w->kv[i].key);
        w2l__free((char *)w->kv[i].value);
    }
    w2l__free(w->kv);
    w2l_buf_release(&w->scratch);
    w2l_buf_release(&w->cbuf);
    w2l_buf_release(&w->hdr);
    if (w->codec != w->opt.codec_ctx) w2l__pq_codec_free(w->codec);
    w2l__free(w->path);
    w2l_schema_unref(w->schema);
    w2l__free(w);
}

void w2l__pq_writer_abort(w2l__pq_writer *w)
{
    if (!w) return;
    if (w->file) w2l_file_abort(w->file);
    w->file = NULL;
    writer_free(w);
}

static w2l_rc add_kv(w2l__pq_writer *w, const char *k, const char *v, w2l_error *err)
{
    w2l__pq_kv *kv = w2l__realloc(w->kv, (w->nkv + 1) * sizeof *kv);
    W2L_NOMEM_IF(!kv, err);
    w->kv = kv;
    kv[w->nkv].key = w2l__strdup(k);
    kv[w->nkv].value = v ? w2l__strdup(v) : NULL;
    w->nkv++;
    W2L_NOMEM_IF(!kv[w->nkv - 1].key || (v && !kv[w->nkv - 1].value), err);
    return W2L_OK;
}

static w2l_rc open_inner(w2l__pq_writer *w, w2l_fileio *io, const char *path, unsigned flags,
                         const w2l__pq_kv *kv, size_t nkv, w2l_error *err)
{
    const w2l__pq_options *o = &w->opt;
    if (o->codec != W2L_PQ_UNCOMPRESSED && o->codec != W2L_PQ_ZSTD)
        return w2l__fail(err, W2L_MISUSE, "parquet: codec %d not supported", o->codec);
    if (o->codec == W2L_PQ_ZSTD && (o->zstd_level < -7 || o->zstd_level > 22))
        return w2l__fail(err, W2L_MISUSE, "parquet: zstd level %d", o->zstd_level);
    if (o->page_bytes == 0 || o->page_bytes > ((size_t)1 << 30) || o->row_group_bytes == 0)
        return w2l__fail(err, W2L_MISUSE, "parquet: page or row group size out of range");
    if (o->bound_chars == 0 || o->bound_chars > 16)
        return w2l__fail(err, W2L_MISUSE, "parquet: bound_chars must be 1..16");
    w->ncols = w2l_schema_field_count(w->schema);
    if (w->ncols == 0) return w2l__fail(err, W2L_SCHEMA, "parquet: schema without fields");
    w->cols = w2l__calloc(w->ncols, sizeof *w->cols);
    W2L_NOMEM_IF(!w->cols, err);
    for (size_t i = 0; i < w->ncols; i++)
        W2L_TRY(w2l__pq_colw_init(w, &w->cols[i], w2l_schema_field(w->schema, i), err));
    int have_schema = 0;
    for (size_t i = 0; i < nkv; i++) {
        if (!kv[i].key) return w2l__fail(err, W2L_MISUSE, "parquet: key/value without a key");
        if (strcmp(kv[i].key, "iceberg.schema") == 0) have_schema = 1;
        W2L_TRY(add_kv(w, kv[i].key, kv[i].value, err));
    }
    if (o->add_iceberg_schema && !have_schema) {
        char *json = NULL;
        W2L_TRY(w2l_schema_to_json(w->schema, &json, err));
        w2l_rc rc = add_kv(w, "iceberg.schema", json, err);
        w2l_free(json);
        W2L_TRY(rc);
    }
    w->path = w2l__strdup(path);
    W2L_NOMEM_IF(!w->path, err);
    if (o->codec_ctx) w->codec = o->codec_ctx;
    else W2L_TRY(w2l__pq_codec_new(&w->codec, err));
    w2l_rc rc = w2l_fileio_create(io, path, flags, &w->file, err);
    if (rc != W2L_OK) {
        w->io_failed = 1;
        return rc;
    }
    return w2l__pq_file_write(w, "PAR1", 4, err);
}

w2l_rc w2l__pq_writer_open(w2l_fileio *io, const char *path, unsigned create_flags,
                           const w2l_schema *schema, const w2l__pq_options *opt,
                           const w2l__pq_kv *kv, size_t nkv, w2l__pq_writer **out,
                           w2l_error *err)
{
    *out = NULL;
    if (!io || !path || !schema)
        return w2l__fail(err, W2L_MISUSE, "w2l__pq_writer_open: NULL argument");
    w2l__pq_writer *w = w2l__calloc(1, sizeof *w);
    W2L_NOMEM_IF(!w, err);
    if (opt) w->opt = *opt;
    else w2l__pq_options_default(&w->opt);
    w->schema = w2l_schema_ref((w2l_schema *)schema);
    w2l_rc rc = open_inner(w, io, path, create_flags, kv, nkv, err);
    if (rc != W2L_OK) {
        name_file(w, path, err);
        w2l__pq_writer_abort(w);
        return rc;
    }
    *out = w;
    return W2L_OK;
}

/* ---- rows in ---- */

static w2l_rc flush_row_group(w2l__pq_writer *w, w2l_error *err)
{
    if (w->rg_rows == 0) return W2L_OK;
    if (w->nrg == w->rg_cap) {
        size_t cap = w->rg_cap ? w->rg_cap * 2 : 4;
        w2l__pq_chunk_meta *m = w2l__realloc(w->meta, cap * w->ncols * sizeof *m);
        W2L_NOMEM_IF(!m, err);
        w->meta = m;
        int64_t **arrs[] = {&w->rg_rows_list, &w->rg_start, &w->rg_uncomp, &w->rg_comp};
        for (size_t i = 0; i < W2L_ARRAY_LEN(arrs); i++) {
            int64_t *a = w2l__realloc(*arrs[i], cap * sizeof *a);
            W2L_NOMEM_IF(!a, err);
            *arrs[i] = a;
        }
        w->rg_cap = cap;
    }
    w2l__pq_chunk_meta *m = w->meta + w->nrg * w->ncols;
    memset(m, 0, w->ncols * sizeof *m);
    w->rg_start[w->nrg] = (int64_t)w->offset;
    int64_t uncomp = 0, comp = 0;
    for (size_t i = 0; i < w->ncols; i++) {
        w2l_rc rc = w2l__pq_colw_finish_chunk(&w->cols[i], &m[i], err);
        if (rc != W2L_OK) {
            /* keep the meta array consistent for writer_free */
            for (size_t j = 0; j <= i; j++) {
                w2l__free(m[j].min);
                w2l__free(m[j].max);
                m[j].min = m[j].max = NULL;
            }
            return rc;
        }
        uncomp += m[i].uncomp;
        comp += m[i].comp;
    }
    w->rg_rows_list[w->nrg] = (int64_t)w->rg_rows;
    w->rg_uncomp[w->nrg] = uncomp;
    w->rg_comp[w->nrg] = comp;
    w->nrg++;
    w->rg_rows = 0;
    return W2L_OK;
}

static uint64_t rg_estimate(const w2l__pq_writer *w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->ncols; i++) n += w2l__pq_colw_estimate(&w->cols[i]);
    return n;
}

static w2l_rc maybe_close_row_group(w2l__pq_writer *w, w2l_error *err)
{
    if ((w->opt.row_group_rows && w->rg_rows >= w->opt.row_group_rows) ||
        rg_estimate(w) >= w->opt.row_group_bytes)
        return flush_row_group(w, err);
    return W2L_OK;
}

static w2l_rc check_usable(w2l__pq_writer *w, w2l_error *err)
{
    if (!w) return w2l__fail(err, W2L_MISUSE, "parquet writer is NULL");
    if (w->failed)
        return w2l__fail(err, W2L_MISUSE, "parquet %s: writer failed earlier; abort it", w->path);
    return W2L_OK;
}

/* NULL in a required column: checked before anything is taken. */
static w2l_rc check_required(const w2l__pq_writer *w, const w2l_value *v, size_t stride,
                             size_t n, size_t col, w2l_error *err)
{
    if (!w->cols[col].optional)
        for (size_t r = 0; r < n; r++)
            if (v[r * stride].is_null)
                return w2l__fail(err, W2L_SCHEMA,
                                 "parquet %s: field %s is required but a row is NULL",
                                 w->path, w->cols[col].field->name);
    return W2L_OK;
}

/* cols[i] + k*stride is value k of column i */
static w2l_rc write_batch(w2l__pq_writer *w, const w2l_value *const *cols, size_t stride,
                          size_t nrows, w2l_error *err)
{
    W2L_TRY(check_usable(w, err));
    size_t done = 0;
    /* slices small enough that a slice of row-major values stays in cache while each
     * column takes its values from it */
    while (done < nrows) {
        size_t n = nrows - done;
        if (n > 1024) n = 1024;
        if (w->opt.row_group_rows && n > w->opt.row_group_rows - w->rg_rows)
            n = (size_t)(w->opt.row_group_rows - w->rg_rows);
        for (size_t i = 0; i < w->ncols; i++) {
            w2l_rc rc = check_required(w, cols[i] + done * stride, stride, n, i, err);
            if (rc != W2L_OK) {
                if (done) w->failed = 1; /* earlier slices were taken */
                return rc;
            }
        }
        for (size_t i = 0; i < w->ncols; i++) {
            w2l_rc rc = w2l__pq_colw_append(&w->cols[i], cols[i] + done * stride, stride, n, err);
            if (rc != W2L_OK) {
                w->failed = 1;
                name_file(w, w->path, err);
                return rc;
            }
        }
        done += n;
        w->rg_rows += n;
        w->rows += n;
        w2l_rc rc = maybe_close_row_group(w, err);
        if (rc != W2L_OK) {
            w->failed = 1;
            name_file(w, w->path, err);
            return rc;
        }
    }
    return W2L_OK;
}

w2l_rc w2l__pq_write_rows(w2l__pq_writer *w, const w2l_value *rows, size_t nrows,
                          w2l_error *err)
{
    W2L_TRY(check_usable(w, err));
    const w2l_value *stack[64];
    const w2l_value **cols = w->ncols <= 64 ? stack : w2l__malloc(w->ncols * sizeof *cols);
    W2L_NOMEM_IF(!cols, err);
    for (size_t i = 0; i < w->ncols; i++) cols[i] = rows + i;
    w2l_rc rc = write_batch(w, cols, w->ncols, nrows, err);
    if (cols != stack) w2l__free(cols);
    return rc;
}

w2l_rc w2l__pq_write_row(w2l__pq_writer *w, const w2l_value *row, w2l_error *err)
{
    return w2l__pq_write_rows(w, row, 1, err);
}

w2l_rc w2l__pq_write_columns(w2l__pq_writer *w, const w2l_value *const *cols, size_t nrows,
                             w2l_error *err)
{
    return write_batch(w, cols, 1, nrows, err);
}

uint64_t w2l__pq_writer_bytes(const w2l__pq_writer *w)
{
    /* footer: roughly 100 bytes per chunk plus key/value metadata */
    uint64_t footer = 64 + (uint64_t)(w->nrg + 1) * w->ncols * 100;
    for (size_t i = 0; i < w->nkv; i++)
        footer += strlen(w->kv[i].key) + (w->kv[i].value ? strlen(w->kv[i].value) : 0) + 8;
    return w->offset + rg_estimate(w) + footer;
}

uint64_t w2l__pq_writer_rows(const w2l__pq_writer *w) { return w->rows; }

/* ---- footer ---- */

static void write_schema_element(w2l__tc_writer *t, const w2l__pq_colw *c)
{
    const w2l_field *f = c->field;
    w2l__tc_struct_begin(t);
    w2l__tc_field_i32(t, 1, c->phys);
    if (c->phys == PQ_FLBA) w2l__tc_field_i32(t, 2, c->type_len);
    w2l__tc_field_i32(t, 3, c->optional ? PQ_OPTIONAL : PQ_REQUIRED);
    w2l__tc_field_string(t, 4, c->name);
    int ct = -1;
    switch (f->type.id) {
    case W2L_TYPE_STRING: ct = PQ_CT_UTF8; break;
    case W2L_TYPE_DECIMAL: ct = PQ_CT_DECIMAL; break;
    case W2L_TYPE_DATE: ct = PQ_CT_DATE; break;
    case W2L_TYPE_TIME: ct = PQ_CT_TIME_MICROS; break;
    case W2L_TYPE_TIMESTAMPTZ: ct = PQ_CT_TIMESTAMP_MICROS; break;
    default: break;
    }
    if (ct >= 0) w2l__tc_field_i32(t, 6, ct);
    if (f->type.id == W2L_TYPE_DECIMAL) {
        w2l__tc_field_i32(t, 7, f->type.scale);
        w2l__tc_field_i32(t, 8, f->type.precision);
    }
    w2l__tc_field_i32(t, 9, f->id);
    int lt = 0;
    switch (f->type.id) {
    case W2L_TYPE_STRING: lt = PQ_LT_STRING; break;
    case W2L_TYPE_DECIMAL: lt = PQ_LT_DECIMAL; break;
    case W2L_TYPE_DATE: lt = PQ_LT_DATE; break;
    case W2L_TYPE_TIME: lt = PQ_LT_TIME; break;
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ: lt = PQ_LT_TIMESTAMP; break;
    default: break;
    }
    if (lt) {
        w2l__tc_field_struct(t, 10);
        w2l__tc_field_struct(t, (int16_t)lt);
        if (lt == PQ_LT_DECIMAL) {
            w2l__tc_field_i32(t, 1, f->type.scale);
            w2l__tc_field_i32(t, 2, f->type.precision);
        } else if (lt == PQ_LT_TIME || lt == PQ_LT_TIMESTAMP) {
            w2l__tc_field_bool(t, 1, f->type.id == W2L_TYPE_TIMESTAMPTZ);
            w2l__tc_field_struct(t, 2);
            w2l__tc_field_struct(t, PQ_UNIT_MICROS);
            w2l__tc_struct_end(t);
            w2l__tc_struct_end(t);
        }
        w2l__tc_struct_end(t);
        w2l__tc_struct_end(t);
    }
    w2l__tc_struct_end(t);
}

static void write_chunk(w2l__tc_writer *t, const w2l__pq_colw *c, const w2l__pq_chunk_meta *m,
                        int codec)
{
    w2l__tc_struct_begin(t); /* ColumnChunk */
    w2l__tc_field_i64(t, 2, m->start);
    w2l__tc_field_struct(t, 3); /* ColumnMetaData */
    w2l__tc_field_i32(t, 1, c->phys);
    size_t nenc = 0;
    for (int e = 0; e < 32; e++) nenc += (m->encodings >> e) & 1;
    w2l__tc_field_list(t, 2, TC_I32, nenc);
    for (int e = 0; e < 32; e++)
        if ((m->encodings >> e) & 1) w2l__tc_i32(t, e);
    w2l__tc_field_list(t, 3, TC_BINARY, 1);
    w2l__tc_binary(t, c->name, strlen(c->name));
    w2l__tc_field_i32(t, 4, codec);
    w2l__tc_field_i64(t, 5, m->num_values);
    w2l__tc_field_i64(t, 6, m->uncomp);
    w2l__tc_field_i64(t, 7, m->comp);
    w2l__tc_field_i64(t, 9, m->data_off);
    if (m->dict_off >= 0) w2l__tc_field_i64(t, 11, m->dict_off);
    w2l__tc_field_struct(t, 12); /* Statistics */
    if (m->min && m->legacy) {
        w2l__tc_field_binary(t, 1, m->max, m->max_len);
        w2l__tc_field_binary(t, 2, m->min, m->min_len);
    }
    w2l__tc_field_i64(t, 3, m->null_count);
    if (m->min) {
        w2l__tc_field_binary(t, 5, m->max, m->max_len);
        w2l__tc_field_binary(t, 6, m->min, m->min_len);
    }
    w2l__tc_struct_end(t);
    w2l__tc_struct_end(t); /* ColumnMetaData */
    w2l__tc_struct_end(t); /* ColumnChunk */
}

static w2l_rc write_footer(w2l__pq_writer *w, w2l_error *err)
{
    w2l_buf *b = &w->scratch;
    b->len = 0;
    w2l__tc_writer t;
    w2l__tc_writer_init(&t, b, err);
    w2l__tc_struct_begin(&t);
    w2l__tc_field_i32(&t, 1, 1);
    w2l__tc_field_list(&t, 2, TC_STRUCT, w->ncols + 1);
    w2l__tc_struct_begin(&t);
    w2l__tc_field_string(&t, 4, "table");
    w2l__tc_field_i32(&t, 5, (int32_t)w->ncols);
    w2l__tc_struct_end(&t);
    for (size_t i = 0; i < w->ncols; i++) write_schema_element(&t, &w->cols[i]);
    w2l__tc_field_i64(&t, 3, (int64_t)w->rows);
    w2l__tc_field_list(&t, 4, TC_STRUCT, w->nrg);
    for (size_t g = 0; g < w->nrg; g++) {
        w2l__tc_struct_begin(&t); /* RowGroup */
        w2l__tc_field_list(&t, 1, TC_STRUCT, w->ncols);
        for (size_t i = 0; i < w->ncols; i++)
            write_chunk(&t, &w->cols[i], &w->meta[g * w->ncols + i], w->opt.codec);
        w2l__tc_field_i64(&t, 2, w->rg_uncomp[g]);
        w2l__tc_field_i64(&t, 3, w->rg_rows_list[g]);
        w2l__tc_field_i64(&t, 5, w->rg_start[g]);
        w2l__tc_field_i64(&t, 6, w->rg_comp[g]);
        w2l__tc_struct_end(&t);
    }
    if (w->nkv) {
        w2l__tc_field_list(&t, 5, TC_STRUCT, w->nkv);
        for (size_t i = 0; i < w->nkv; i++) {
            w2l__tc_struct_begin(&t);
            w2l__tc_field_string(&t, 1, w->kv[i].key);
            if (w->kv[i].value) w2l__tc_field_string(&t, 2, w->kv[i].value);
            w2l__tc_struct_end(&t);
        }
    }
    w2l__tc_field_string(&t, 6, "libwholedb2lake version " W2L_VERSION_STRING);
    w2l__tc_field_list(&t, 7, TC_STRUCT, w->ncols);
    for (size_t i = 0; i < w->ncols; i++) {
        w2l__tc_struct_begin(&t); /* ColumnOrder union */
        w2l__tc_field_struct(&t, 1); /* TYPE_ORDER */
        w2l__tc_struct_end(&t);
        w2l__tc_struct_end(&t);
    }
    w2l__tc_struct_end(&t);
    W2L_TRY(t.rc);
    if (b->len > UINT32_MAX) return w2l__fail(err, W2L_ERROR, "footer too large");
    uint8_t tail[8];
    w2l__le32(tail, (uint32_t)b->len);
    memcpy(tail + 4, "PAR1", 4);
    W2L_TRY(w2l__pq_file_write(w, b->data, b->len, err));
    return w2l__pq_file_write(w, tail, 8, err);
}

static w2l_rc fill_stats(const w2l__pq_writer *w, w2l__file_stats *s, w2l_error *err)
{
    memset(s, 0, sizeof *s);
    s->record_count = w->rows;
    s->file_size = w->offset;
    s->ncols = w->ncols;
    s->cols = w2l__calloc(w->ncols, sizeof *s->cols);
    W2L_NOMEM_IF(!s->cols, err);
    for (size_t i = 0; i < w->ncols; i++)
        W2L_TRY(w2l__pq_colw_iceberg_stats(&w->cols[i], &s->cols[i], err));
    s->nsplits = w->nrg;
    if (w->nrg) {
        s->split_offsets = w2l__malloc(w->nrg * sizeof *s->split_offsets);
        W2L_NOMEM_IF(!s->split_offsets, err);
        for (size_t g = 0; g < w->nrg; g++) s->split_offsets[g] = (uint64_t)w->rg_start[g];
    }
    return W2L_OK;
}

w2l_rc w2l__pq_writer_finish(w2l__pq_writer *w, w2l__file_stats *stats, w2l_file **file,
                             w2l_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    *file = NULL;
    w2l_rc rc = check_usable(w, err);
    if (rc == W2L_OK) rc = flush_row_group(w, err);
    if (rc == W2L_OK) rc = write_footer(w, err);
    if (rc == W2L_OK && stats) rc = fill_stats(w, stats, err);
    if (rc == W2L_OK) {
        *file = w->file;
        w->file = NULL;
    }
    if (rc != W2L_OK) {
        if (stats) w2l__file_stats_release(stats);
        if (w) name_file(w, w->path, err);
    }
    w2l__pq_writer_abort(w);
    return rc;
}

w2l_rc w2l__pq_writer_close(w2l__pq_writer *w, w2l__file_stats *stats, w2l_error *err)
{
    w2l_file *f;
    w2l_rc rc = w2l__pq_writer_finish(w, stats, &f, err);
    if (rc == W2L_OK) {
        rc = w2l_file_close(f, err); /* a failure names the path (the file IO's message) */
        if (rc != W2L_OK && stats) w2l__file_stats_release(stats);
    }
    return rc;
}
