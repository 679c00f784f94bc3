/*
 * One column of a Parquet file being written: values -> data pages -> column chunks
 * (parquet.thrift ColumnChunk / ColumnMetaData; Encodings.md PLAIN and RLE_DICTIONARY).
 *
 * Values go straight into the open page's buffer: PLAIN bytes, or in dictionary mode the
 * uint32 index the chunk's hash dictionary gives them. A page closes when its values would
 * take page_bytes as PLAIN (or page_rows values); it is then framed (v1 data page: levels +
 * values, see page.c), compressed and kept in memory with the chunk's other pages, because
 * the dictionary page must precede them and is only complete at the end of the chunk. At the
 * end of a row group the chunk goes to the file: [dictionary page] data pages.
 *
 * Dictionary policy, per column chunk (as parquet-mr's): every type but boolean starts in
 * dictionary mode. When the first page closes, the dictionary is kept only if it plus the
 * bit-packed indices is smaller than PLAIN; otherwise that page is rewritten PLAIN and the
 * chunk stays PLAIN. When the dictionary passes dict_bytes, the open page closes still in
 * dictionary mode and the rest of the chunk is PLAIN (a chunk may mix both; readers
 * handle it). An early check after 8192 values of the first page drops the dictionary when
 * most of them (PQ_DICT_DISTINCT_PCT) were distinct, so unique columns (ids, timestamps,
 * measures) stop hashing quickly; columns with repeats wait for the end of the page. Statistics in
 * dictionary mode are taken from new dictionary entries only.
 *
 * Statistics: min/max ignore NaN and order -0.0 before +0.0; Parquet's min_value/max_value
 * follow the format's rule for zeros (a zero min is written -0.0, a zero max +0.0). Byte
 * arrays compare as unsigned bytes; values longer than 4096 bytes leave min/max out.
 */
#include <assert.h>
#include <math.h>

#include "pq_writer_int.h"

#define PQ_MAX_STAT_BYTES 4096
/* room before a data page's body for its header (at most about 30 bytes) */
#define PQ_PAGE_HEAD 64
/* room kept before the open page's values: a PLAIN page's definition levels go there at
 * flush, so that the page body (levels then values) is compressed where the values already
 * are instead of being copied out first (levels of up to PQ_VALS_GAP - 4 bytes: a run or a
 * few, as nearly every optional column has; longer ones take the copy) */
#define PQ_VALS_GAP 64
/* A data page that compresses by less than 1/PQ_STORE_GAIN of its size (dictionary indices of
 * many distinct values, random bytes) has the next PQ_STORE_PAGES pages of its column stored
 * as they are (zstd frames of raw blocks: a copy instead of a search for matches); the page
 * after them is compressed again, and so the choice follows the data. */
#define PQ_STORE_GAIN 64
#define PQ_STORE_PAGES 7
/* values after which the first page checks whether its dictionary pays */
#define PQ_DICT_PROBE 8192
/* ... when this share (percent) of them were distinct: such a column gains little from a
 * dictionary that zstd does not already get from the plain values, and pays a hash probe
 * per value (measured on the orders set: 60 keeps the file within 1% of DuckDB's size
 * and encodes about 20% faster than 99) */
#define PQ_DICT_DISTINCT_PCT 60

static void mm_free(w2l__pq_minmax *m)
{
    w2l_buf_release(&m->bmin);
    w2l_buf_release(&m->bmax);
    m->has = 0;
}

w2l_rc w2l__pq_colw_init(w2l__pq_writer *w, w2l__pq_colw *c, const w2l_field *f, w2l_error *err)
{
    memset(c, 0, sizeof *c);
    c->w = w;
    c->field = f;
    c->optional = !f->required;
    switch (f->type.id) {
    case W2L_TYPE_BOOLEAN: c->kind = K_BOOL; c->phys = PQ_BOOLEAN; break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: c->kind = K_I32; c->phys = PQ_INT32; c->value_width = 4; break;
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ: c->kind = K_I64; c->phys = PQ_INT64; c->value_width = 8; break;
    case W2L_TYPE_FLOAT: c->kind = K_F32; c->phys = PQ_FLOAT; c->value_width = 4; break;
    case W2L_TYPE_DOUBLE: c->kind = K_F64; c->phys = PQ_DOUBLE; c->value_width = 8; break;
    case W2L_TYPE_DECIMAL:
        if (f->type.precision < 1 || f->type.precision > 38 || f->type.scale > f->type.precision)
            return w2l__fail(err, W2L_SCHEMA, "field %s: decimal(%u,%u) cannot be written",
                             f->name, f->type.precision, f->type.scale);
        if (f->type.precision <= 9) {
            c->kind = K_DEC32; c->phys = PQ_INT32; c->value_width = 4;
        } else if (f->type.precision <= 18) {
            c->kind = K_DEC64; c->phys = PQ_INT64; c->value_width = 8;
        } else {
            c->kind = K_DECFIX; c->phys = PQ_FLBA;
            c->type_len = (int)w2l__decimal_fixed_len(f->type.precision);
            c->value_width = c->type_len;
        }
        break;
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY: c->kind = K_BYTES; c->phys = PQ_BYTE_ARRAY; break;
    default:
        return w2l__fail(err, W2L_SCHEMA, "field %s: type %d cannot be written", f->name,
                         (int)f->type.id);
    }
    size_t need = w2l__pq_sanitize_name(f->name, NULL, 0);
    c->name = w2l__malloc(need + 1);
    W2L_NOMEM_IF(!c->name, err);
    w2l__pq_sanitize_name(f->name, c->name, need + 1);
    w2l__pq_dict_init(&c->dict, c->value_width);
    W2L_TRY(w2l__buf_reserve(&c->vals, PQ_VALS_GAP, err));
    c->vals.len = PQ_VALS_GAP;
    c->dict_on = w->opt.dict_bytes > 0 && c->kind != K_BOOL;
    return W2L_OK;
}

/* Frees the chunk's finished pages. */
static void pages_clear(w2l__pq_colw *c)
{
    for (size_t i = 0; i < c->npages; i++) w2l__free(c->pages[i].mem);
    c->npages = 0;
    c->pages_bytes = 0;
}

void w2l__pq_colw_free(w2l__pq_colw *c)
{
    w2l__free(c->name);
    w2l_buf_release(&c->vals);
    w2l__free(c->defs);
    w2l__pq_dict_free(&c->dict);
    pages_clear(c);
    w2l__free(c->pages);
    mm_free(&c->ch_mm);
    mm_free(&c->file_mm);
}

/* ---- ordering ---- */

/* -1, 0, 1 with -0.0 < +0.0 (no NaN here) */
static inline int cmp_f64(double a, double b)
{
    if (a < b) return -1;
    if (a > b) return 1;
    int sa = signbit(a) != 0, sb = signbit(b) != 0;
    return sb - sa;
}

static inline uint64_t be64(const uint8_t *p)
{
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static inline int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    if (n >= 8) { /* most values differ from the min and the max in their first 8 bytes */
        uint64_t x = be64(a), y = be64(b);
        if (x != y) return x < y ? -1 : 1;
    }
    int r = n ? memcmp(a, b, n) : 0;
    if (r) return r < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

static w2l_rc set_bytes(w2l_buf *b, const void *p, size_t n, w2l_error *err)
{
    b->len = 0;
    return w2l__pq_put(b, p, n, err);
}

/* Updates m with one (non-NULL, non-NaN) value. */
static inline w2l_rc mm_add(const w2l__pq_colw *c, w2l__pq_minmax *m, const w2l_value *x,
                            w2l_error *err)
{
    switch (c->kind) {
    case K_BOOL:
    case K_I32:
        if (!m->has) { m->min.i32 = m->max.i32 = x->v.i32; break; }
        if (x->v.i32 < m->min.i32) m->min.i32 = x->v.i32;
        if (x->v.i32 > m->max.i32) m->max.i32 = x->v.i32;
        break;
    case K_I64:
        if (!m->has) { m->min.i64 = m->max.i64 = x->v.i64; break; }
        if (x->v.i64 < m->min.i64) m->min.i64 = x->v.i64;
        if (x->v.i64 > m->max.i64) m->max.i64 = x->v.i64;
        break;
    case K_F32:
        if (!m->has) { m->min.f32 = m->max.f32 = x->v.f32; break; }
        if (cmp_f64(x->v.f32, m->min.f32) < 0) m->min.f32 = x->v.f32;
        if (cmp_f64(x->v.f32, m->max.f32) > 0) m->max.f32 = x->v.f32;
        break;
    case K_F64:
        if (!m->has) { m->min.f64 = m->max.f64 = x->v.f64; break; }
        if (cmp_f64(x->v.f64, m->min.f64) < 0) m->min.f64 = x->v.f64;
        if (cmp_f64(x->v.f64, m->max.f64) > 0) m->max.f64 = x->v.f64;
        break;
    case K_DEC32:
    case K_DEC64:
    case K_DECFIX:
        if (!m->has) { m->min.dec = m->max.dec = x->v.dec; break; }
        if (w2l__i128_cmp(x->v.dec, m->min.dec) < 0) m->min.dec = x->v.dec;
        if (w2l__i128_cmp(x->v.dec, m->max.dec) > 0) m->max.dec = x->v.dec;
        break;
    case K_BYTES: {
        const uint8_t *p = (const uint8_t *)x->v.bytes.ptr;
        size_t n = x->v.bytes.len;
        if (!m->has) {
            W2L_TRY(set_bytes(&m->bmin, p, n, err));
            W2L_TRY(set_bytes(&m->bmax, p, n, err));
            break;
        }
        if (cmp_bytes(p, n, m->bmin.data, m->bmin.len) < 0) W2L_TRY(set_bytes(&m->bmin, p, n, err));
        if (cmp_bytes(p, n, m->bmax.data, m->bmax.len) > 0) W2L_TRY(set_bytes(&m->bmax, p, n, err));
        break;
    }
    }
    m->has = 1;
    return W2L_OK;
}

/* Folds chunk statistics into the file's. */
static w2l_rc mm_merge(const w2l__pq_colw *c, w2l__pq_minmax *into, const w2l__pq_minmax *m,
                       w2l_error *err)
{
    if (!m->has) return W2L_OK;
    w2l_value v;
    v.is_null = 0;
    switch (c->kind) {
    case K_BOOL:
    case K_I32:
        v.v.i32 = m->min.i32;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.i32 = m->max.i32;
        break;
    case K_I64:
        v.v.i64 = m->min.i64;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.i64 = m->max.i64;
        break;
    case K_F32:
        v.v.f32 = m->min.f32;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.f32 = m->max.f32;
        break;
    case K_F64:
        v.v.f64 = m->min.f64;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.f64 = m->max.f64;
        break;
    case K_DEC32:
    case K_DEC64:
    case K_DECFIX:
        v.v.dec = m->min.dec;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.dec = m->max.dec;
        break;
    case K_BYTES:
        v.v.bytes.ptr = (const char *)m->bmin.data;
        v.v.bytes.len = m->bmin.len;
        W2L_TRY(mm_add(c, into, &v, err));
        v.v.bytes.ptr = (const char *)m->bmax.data;
        v.v.bytes.len = m->bmax.len;
        break;
    }
    return mm_add(c, into, &v, err);
}

/* ---- appending values ---- */

static w2l_rc grow_defs(w2l__pq_colw *c, w2l_error *err)
{
    size_t cap = c->defs_cap ? c->defs_cap * 2 : 256;
    uint8_t *d = w2l__realloc(c->defs, cap);
    W2L_NOMEM_IF(!d, err);
    c->defs = d;
    c->defs_cap = cap;
    return W2L_OK;
}

static w2l_rc bad_decimal(const w2l__pq_colw *c, w2l_error *err)
{
    return w2l__fail(err, W2L_SCHEMA, "field %s: decimal value does not fit decimal(%u,%u)",
                     c->field->name, c->field->type.precision, c->field->type.scale);
}

/* The PLAIN bytes of a fixed-width value into key (at most 16 bytes). */
static inline w2l_rc fixed_bytes(const w2l__pq_colw *c, const w2l_value *x, uint8_t *key,
                                 w2l_error *err)
{
    switch (c->kind) {
    case K_I32: w2l__le32(key, (uint32_t)x->v.i32); break;
    case K_I64: w2l__le64(key, (uint64_t)x->v.i64); break;
    case K_F32: { uint32_t u; memcpy(&u, &x->v.f32, 4); w2l__le32(key, u); break; }
    case K_F64: { uint64_t u; memcpy(&u, &x->v.f64, 8); w2l__le64(key, u); break; }
    case K_DEC32:
    case K_DEC64: {
        int64_t t;
        if (!w2l__decimal_fits(x->v.dec, c->field->type.precision) ||
            w2l__i128_to_i64(x->v.dec, &t) != 0)
            return bad_decimal(c, err);
        if (c->kind == K_DEC32) w2l__le32(key, (uint32_t)(int32_t)t);
        else w2l__le64(key, (uint64_t)t);
        break;
    }
    case K_DECFIX:
        if (!w2l__decimal_fits(x->v.dec, c->field->type.precision) ||
            w2l__decimal_to_be_fixed(x->v.dec, key, (size_t)c->type_len) != 0)
            return bad_decimal(c, err);
        break;
    default: break;
    }
    return W2L_OK;
}

static inline int is_nan(const w2l__pq_colw *c, const w2l_value *x)
{
    return (c->kind == K_F32 && isnan(x->v.f32)) || (c->kind == K_F64 && isnan(x->v.f64));
}

/* Rewrites the open page's indices as PLAIN values (dictionary abandoned). */
static w2l_rc indices_to_plain(w2l__pq_colw *c, w2l_error *err)
{
    w2l_buf plain = {0};
    W2L_TRY(w2l__buf_reserve(&plain, PQ_VALS_GAP + c->pg_plain + 16, err));
    plain.len = PQ_VALS_GAP;
    const uint32_t *idx = (const uint32_t *)(const void *)(c->vals.data + PQ_VALS_GAP);
    const uint8_t *dv = c->dict.vals.data;
    uint8_t *o = plain.data + PQ_VALS_GAP;
    /* 4- and 8-byte values (nearly every column that gives its dictionary up) by a copy of
     * a constant size each, without a call per value */
    if (c->dict.width == 4) {
        for (size_t i = 0; i < c->pg_nonnull; i++) memcpy(o + i * 4, dv + (size_t)idx[i] * 4, 4);
        plain.len += c->pg_nonnull * 4;
    } else if (c->dict.width == 8) {
        for (size_t i = 0; i < c->pg_nonnull; i++) memcpy(o + i * 8, dv + (size_t)idx[i] * 8, 8);
        plain.len += c->pg_nonnull * 8;
    } else {
        for (size_t i = 0; i < c->pg_nonnull; i++) {
            size_t len;
            const uint8_t *p = w2l__pq_dict_get(&c->dict, idx[i], &len);
            if (c->kind == K_BYTES) {
                w2l__le32(plain.data + plain.len, (uint32_t)len);
                plain.len += 4;
            }
            if (len) memcpy(plain.data + plain.len, p, len);
            plain.len += len;
        }
    }
    w2l_buf_release(&c->vals);
    c->vals = plain;
    return W2L_OK;
}

/* Whether the dictionary plus bit-packed indices of the open page beat PLAIN. */
static int dict_pays(const w2l__pq_colw *c)
{
    size_t bw = (size_t)w2l__bit_width(c->dict.count ? c->dict.count - 1 : 0);
    size_t idx_bytes = c->pg_nonnull * (bw ? bw : 1) / 8 + 16;
    return w2l__pq_dict_bytes(&c->dict) + idx_bytes < c->pg_plain;
}

/* First page of the chunk, dictionary not worth it: the page becomes PLAIN, and so does
 * the rest of the chunk. */
static w2l_rc abandon_dict(w2l__pq_colw *c, w2l_error *err)
{
    W2L_TRY(indices_to_plain(c, err));
    c->dict_on = 0;
    c->dict_failed = 1;
    w2l__pq_dict_reset(&c->dict);
    return W2L_OK;
}

/* One run of append_fixed for a column of kind kind (a constant where it is inlined, so that
 * the per-kind choices below fold away): writes the values of v[0, k) and updates the
 * statistics. The running min and max are kept in locals rather than in c->ch_mm, because
 * the stores of the values (through a uint8_t pointer) may alias anything and would make the
 * compiler reload and store them for every value; they go back to c->ch_mm once, at the end.
 * Where ch_mm has no values yet the bounds start at the extremes of the type, so that every
 * value takes the same two comparisons (the first one lowers the min and raises the max).
 * *taken: the values consumed (k, or up to the bad one); *written: the non-NULL ones. */
static inline __attribute__((always_inline)) w2l_rc
fixed_run(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t k, const pq_kind kind,
          const int optional, size_t *taken, size_t *written, w2l_error *err)
{
    uint8_t *out = c->vals.data + c->vals.len, *defs = optional ? c->defs + c->pg_values : NULL;
    w2l__pq_minmax *m = &c->ch_mm;
    const int fl = kind == K_F32 || kind == K_F64, dec = kind == K_DEC32 || kind == K_DEC64;
    int64_t imin = INT64_MAX, imax = INT64_MIN;
    double fmin = INFINITY, fmax = -INFINITY;
    if (m->has) {
        switch (kind) {
        case K_I32: imin = m->min.i32; imax = m->max.i32; break;
        case K_I64: imin = m->min.i64; imax = m->max.i64; break;
        case K_F32: fmin = m->min.f32; fmax = m->max.f32; break;
        case K_F64: fmin = m->min.f64; fmax = m->max.f64; break;
        default: imin = (int64_t)m->min.dec.lo; imax = (int64_t)m->max.dec.lo; break;
        }
    }
    int64_t lim = 1; /* decimals: 10^precision (at most 18 digits as INT64) */
    for (unsigned d = 0; dec && d < c->field->type.precision; d++) lim *= 10;
    size_t nn = 0, i = 0, nans = 0;
    w2l_rc rc = W2L_OK; /* on failure the values before the bad one stay appended */
    for (; i < k; i++) {
        const w2l_value *x = v + i * stride;
        if (optional) defs[i] = !x->is_null;
        if (x->is_null) {
            if (!optional) {
                rc = w2l__fail(err, W2L_SCHEMA, "field %s is required but the value is NULL",
                               c->field->name);
                break;
            }
            continue;
        }
        if (kind == K_I32 || kind == K_I64) {
            int64_t y = kind == K_I32 ? x->v.i32 : x->v.i64;
            if (kind == K_I32) w2l__le32(out + nn * 4, (uint32_t)(int32_t)y);
            else w2l__le64(out + nn * 8, (uint64_t)y);
            if (y < imin) imin = y;
            if (y > imax) imax = y;
        } else if (fl) {
            double y = kind == K_F32 ? (double)x->v.f32 : x->v.f64;
            if (kind == K_F32) {
                uint32_t u;
                memcpy(&u, &x->v.f32, 4);
                w2l__le32(out + nn * 4, u);
            } else {
                uint64_t u;
                memcpy(&u, &x->v.f64, 8);
                w2l__le64(out + nn * 8, u);
            }
            if (isnan(y)) {
                nans++;
            } else {
                if (cmp_f64(y, fmin) < 0) fmin = y;
                if (cmp_f64(y, fmax) > 0) fmax = y;
            }
        } else { /* K_DEC32, K_DEC64: the unscaled value within the precision */
            w2l_int128 d = x->v.dec;
            int64_t y = (int64_t)d.lo;
            if (d.hi != (y < 0 ? -1 : 0) || y >= lim || y <= -lim) {
                rc = bad_decimal(c, err);
                break;
            }
            if (kind == K_DEC32) w2l__le32(out + nn * 4, (uint32_t)(int32_t)y);
            else w2l__le64(out + nn * 8, (uint64_t)y);
            /* every value of the chunk passed this check, so its min and max are int64s
             * too: compared as such, without a call per bound */
            if (y < imin) imin = y;
            if (y > imax) imax = y;
        }
        nn++;
    }
    if (nn > nans) {
        m->has = 1;
        switch (kind) {
        case K_I32: m->min.i32 = (int32_t)imin; m->max.i32 = (int32_t)imax; break;
        case K_I64: m->min.i64 = imin; m->max.i64 = imax; break;
        case K_F32: m->min.f32 = (float)fmin; m->max.f32 = (float)fmax; break;
        case K_F64: m->min.f64 = fmin; m->max.f64 = fmax; break;
        default:
            m->min.dec = (w2l_int128){(uint64_t)imin, imin < 0 ? -1 : 0};
            m->max.dec = (w2l_int128){(uint64_t)imax, imax < 0 ? -1 : 0};
            break;
        }
    }
    c->f_nans += nans;
    *taken = i;
    *written = nn;
    return rc;
}

/* The common case, a column past its dictionary with 4- or 8-byte values (INT32, INT64,
 * FLOAT, DOUBLE, DECIMAL stored as INT32/INT64): what the general loop below does per value,
 * in one loop per kind and nullability (fixed_run) without its per-value dispatch. The same
 * pages, values and statistics. Returns with *done the values taken (n, or fewer where a page
 * filled up). */
static w2l_rc append_fixed(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t n,
                           size_t *done, w2l_error *err)
{
    const w2l__pq_options *opt = &c->w->opt;
    const size_t page_rows = opt->page_rows ? opt->page_rows : SIZE_MAX;
    const size_t width = (size_t)c->value_width;
    /* the values this page takes at most: the general loop flushes it after the value that
     * reaches its size (nulls add nothing: then the next call goes on) or row limit */
    size_t left = opt->page_bytes > c->pg_plain ? opt->page_bytes - c->pg_plain : 0;
    size_t room = left ? (left + width - 1) / width : 1;
    size_t k = W2L_MIN(n, W2L_MIN(room, page_rows > c->pg_values ? page_rows - c->pg_values : 1));
    if (c->vals.cap - c->vals.len < k * width) W2L_TRY(w2l__buf_reserve(&c->vals, k * width, err));
    while (c->optional && c->pg_values + k > c->defs_cap) W2L_TRY(grow_defs(c, err));
    size_t i = 0, nn = 0; /* values taken, values written */
    w2l_rc rc;
#define W2L__FIXED_RUN(kind)                                                                     \
    (c->optional ? fixed_run(c, v, stride, k, kind, 1, &i, &nn, err)                             \
                 : fixed_run(c, v, stride, k, kind, 0, &i, &nn, err))
    switch (c->kind) {
    case K_I32: rc = W2L__FIXED_RUN(K_I32); break;
    case K_I64: rc = W2L__FIXED_RUN(K_I64); break;
    case K_F32: rc = W2L__FIXED_RUN(K_F32); break;
    case K_F64: rc = W2L__FIXED_RUN(K_F64); break;
    case K_DEC32: rc = W2L__FIXED_RUN(K_DEC32); break;
    default: rc = W2L__FIXED_RUN(K_DEC64); break;
    }
#undef W2L__FIXED_RUN
    c->vals.len += nn * width;
    c->pg_values += i;
    c->pg_nonnull += nn;
    c->pg_plain += nn * width;
    *done = i;
    W2L_TRY(rc);
    if (c->pg_plain >= opt->page_bytes || c->pg_values >= page_rows)
        W2L_TRY(w2l__pq_colw_flush_page(c, err));
    return W2L_OK;
}

/* The first 8 bytes of a min or max of byte arrays as a big-endian word (0 when shorter),
 * for append_bytes' quick test. */
static inline uint64_t bytes_key(const w2l_buf *b)
{
    return b->len >= 8 ? be64(b->data) : 0;
}

/* A column of byte arrays past its dictionary (mostly distinct text: names, notes, ids as
 * strings): what the general loop below does per value, without its per-value dispatch and
 * with the statistics inline. A value whose first 8 bytes are strictly between those of the
 * min and the max is neither, which settles most values with one load and two compares; the
 * others take cmp_bytes as before. The same pages, values and statistics. Returns with *done
 * the values taken (n, or fewer where a page filled up, after which it is flushed). */
static w2l_rc append_bytes(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t n,
                           size_t *done, w2l_error *err)
{
    const w2l__pq_options *opt = &c->w->opt;
    const size_t page_rows = opt->page_rows ? opt->page_rows : SIZE_MAX;
    while (c->optional && c->pg_values + n > c->defs_cap) W2L_TRY(grow_defs(c, err));
    w2l__pq_minmax *m = &c->ch_mm;
    /* quick test possible: min and max both of at least 8 bytes */
    int quick = m->has && m->bmin.len >= 8 && m->bmax.len >= 8;
    uint64_t kmin = quick ? bytes_key(&m->bmin) : 0, kmax = quick ? bytes_key(&m->bmax) : 0;
    size_t i = 0;
    w2l_rc rc = W2L_OK;
    while (i < n) {
        const w2l_value *x = v + i * stride;
        i++;
        if (c->optional) c->defs[c->pg_values] = !x->is_null;
        if (x->is_null) {
            if (!c->optional) {
                rc = w2l__fail(err, W2L_SCHEMA, "field %s is required but the value is NULL",
                               c->field->name);
                break;
            }
            c->pg_values++;
        } else {
            const uint8_t *p = (const uint8_t *)x->v.bytes.ptr;
            size_t len = x->v.bytes.len;
            if (len > UINT32_MAX) {
                rc = w2l__fail(err, W2L_SCHEMA, "field %s: value of %zu bytes", c->field->name,
                               len);
                break;
            }
            if (c->vals.cap - c->vals.len < 4 + len &&
                (rc = w2l__buf_reserve(&c->vals, 4 + len, err)) != W2L_OK)
                break;
            uint8_t *d = c->vals.data + c->vals.len;
            w2l__le32(d, (uint32_t)len);
            if (len) memcpy(d + 4, p, len);
            c->vals.len += 4 + len;
            c->pg_plain += 4 + len;
            c->pg_values++;
            c->pg_nonnull++;
            if (!quick || len < 8 || be64(p) <= kmin || be64(p) >= kmax) {
                if (!m->has) {
                    if ((rc = set_bytes(&m->bmin, p, len, err)) != W2L_OK ||
                        (rc = set_bytes(&m->bmax, p, len, err)) != W2L_OK)
                        break;
                    m->has = 1;
                } else if (cmp_bytes(p, len, m->bmin.data, m->bmin.len) < 0) {
                    if ((rc = set_bytes(&m->bmin, p, len, err)) != W2L_OK) break;
                } else if (cmp_bytes(p, len, m->bmax.data, m->bmax.len) > 0) {
                    if ((rc = set_bytes(&m->bmax, p, len, err)) != W2L_OK) break;
                }
                quick = m->bmin.len >= 8 && m->bmax.len >= 8;
                kmin = bytes_key(&m->bmin);
                kmax = bytes_key(&m->bmax);
            }
        }
        if (c->pg_plain >= opt->page_bytes || c->pg_values >= page_rows) break;
    }
    *done = i;
    W2L_TRY(rc);
    if (c->pg_plain >= opt->page_bytes || c->pg_values >= page_rows)
        W2L_TRY(w2l__pq_colw_flush_page(c, err));
    return W2L_OK;
}

/* The common case of a dictionary column of INT32, INT64 or byte arrays (a status code, a
 * flag, a small count, a country code): what the general loop below does for NULLs and
 * for values already in the dictionary, without its per-value dispatch and the call into
 * dict.c. Takes values from v while they are NULLs or hits and the page takes them without
 * reaching a limit; returns how many it took. The general loop takes the next one: a new
 * value (the dictionary grows, statistics change), the one that fills the page, or the one
 * at which the first page checks whether its dictionary pays. */
static size_t dict_hits(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t n)
{
    const w2l__pq_options *opt = &c->w->opt;
    const size_t page_rows = opt->page_rows ? opt->page_rows : SIZE_MAX;
    if (c->vals.cap - c->vals.len < n * 4 || (c->optional && c->pg_values + n > c->defs_cap))
        return 0; /* room for all first: the general loop grows the buffers */
    uint8_t *out = c->vals.data + c->vals.len, *defs = c->optional ? c->defs : NULL;
    const int bytes = c->kind == K_BYTES, wide = c->kind == K_I64;
    size_t i = 0, nn = 0;
    size_t values = c->pg_values, nonnull = c->pg_nonnull, plain = c->pg_plain;
    for (; i < n; i++) {
        const w2l_value *x = v + i * stride;
        if (values + 1 >= page_rows) break;
        if (x->is_null) {
            if (!defs) break;
            defs[values++] = 0;
            continue;
        }
        /* the value's PLAIN bytes, which the page limit counts */
        const size_t pb = 4 + (bytes ? x->v.bytes.len : 4 * (size_t)wide);
        if (plain + pb >= opt->page_bytes) break;
        if (!c->dict_used && nonnull + 1 == PQ_DICT_PROBE) break;
        uint32_t idx;
        if (bytes ? !w2l__pq_dict_find_bytes(&c->dict, x->v.bytes.len ? x->v.bytes.ptr : "",
                                             x->v.bytes.len, &idx)
                  : !w2l__pq_dict_find_fixed(&c->dict,
                                             wide ? (uint64_t)x->v.i64
                                                  : (uint64_t)(uint32_t)x->v.i32,
                                             &idx))
            break;
        if (defs) defs[values] = 1;
        memcpy(out + nn * 4, &idx, 4);
        nn++;
        values++;
        nonnull++;
        plain += pb;
    }
    c->vals.len += nn * 4;
    c->pg_values = values;
    c->pg_nonnull = nonnull;
    c->pg_plain = plain;
    return i;
}

w2l_rc w2l__pq_colw_append(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t n,
                           w2l_error *err)
{
    if (!c->dict_on && c->kind != K_BOOL && c->kind != K_BYTES && c->kind != K_DECFIX) {
        for (size_t done = 0; n > 0; v += done * stride, n -= done)
            W2L_TRY(append_fixed(c, v, stride, n, &done, err));
        return W2L_OK;
    }
    if (!c->dict_on && c->kind == K_BYTES) {
        for (size_t done = 0; n > 0; v += done * stride, n -= done)
            W2L_TRY(append_bytes(c, v, stride, n, &done, err));
        return W2L_OK;
    }
    const w2l__pq_options *opt = &c->w->opt;
    const size_t page_rows = opt->page_rows ? opt->page_rows : SIZE_MAX;
    const int floats = c->kind == K_F32 || c->kind == K_F64;
    const int ints = c->kind == K_I32 || c->kind == K_I64;
    /* after a new dictionary value the next goes to this loop too: a column of mostly
     * distinct values (until its first page gives the dictionary up) then does not pay for
     * a lookup that misses before each insert */
    int hits = 1;
    for (size_t i = 0; i < n; i++) {
        if ((ints || c->kind == K_BYTES) && c->dict_on && hits) {
            if (c->vals.cap - c->vals.len < (n - i) * 4)
                W2L_TRY(w2l__buf_reserve(&c->vals, (n - i) * 4, err));
            while (c->optional && c->pg_values + (n - i) > c->defs_cap) W2L_TRY(grow_defs(c, err));
            i += dict_hits(c, v + i * stride, stride, n - i);
            if (i == n) break;
        }
        const w2l_value *x = v + i * stride;
        if (c->optional) {
            if (c->pg_values >= c->defs_cap) W2L_TRY(grow_defs(c, err));
            c->defs[c->pg_values] = !x->is_null;
        }
        if (x->is_null) {
            if (!c->optional)
                return w2l__fail(err, W2L_SCHEMA, "field %s is required but the value is NULL",
                                 c->field->name);
            c->pg_values++;
        } else {
            int nan = floats && is_nan(c, x);
            if (nan) c->f_nans++;
            if (c->dict_on) {
                uint8_t key[16];
                const void *kp = key;
                size_t kn = (size_t)c->value_width;
                if (c->kind == K_BYTES) {
                    kn = x->v.bytes.len;
                    kp = kn ? (const void *)x->v.bytes.ptr : (const void *)"";
                    c->pg_plain += 4 + kn;
                } else {
                    W2L_TRY(fixed_bytes(c, x, key, err));
                    c->pg_plain += kn;
                }
                uint32_t idx;
                int added;
                W2L_TRY(w2l__pq_dict_put(&c->dict, kp, kn, &idx, &added, err));
                hits = !added;
                if (c->vals.cap - c->vals.len < 4) W2L_TRY(w2l__buf_reserve(&c->vals, 4, err));
                memcpy(c->vals.data + c->vals.len, &idx, 4);
                c->vals.len += 4;
                c->pg_values++;
                c->pg_nonnull++;
                if (c->pg_nonnull == PQ_DICT_PROBE && !c->dict_used &&
                    (uint64_t)c->dict.count * 100 >=
                        (uint64_t)c->pg_nonnull * PQ_DICT_DISTINCT_PCT) {
                    /* mostly distinct values: give the dictionary up early */
                    if (added && !nan) W2L_TRY(mm_add(c, &c->ch_mm, x, err));
                    W2L_TRY(abandon_dict(c, err));
                    added = 0;
                }
                if (added) {
                    if (!nan) W2L_TRY(mm_add(c, &c->ch_mm, x, err));
                    if (w2l__pq_dict_bytes(&c->dict) > opt->dict_bytes) {
                        /* too many distinct values: this page keeps the dictionary, the rest
                         * of the chunk is PLAIN */
                        W2L_TRY(w2l__pq_colw_flush_page(c, err));
                        c->dict_on = 0;
                        continue;
                    }
                }
            } else {
                if (c->kind == K_BYTES) {
                    size_t len = x->v.bytes.len;
                    if (len > UINT32_MAX)
                        return w2l__fail(err, W2L_SCHEMA, "field %s: value of %zu bytes",
                                         c->field->name, len);
                    if (c->vals.cap - c->vals.len < 4 + len)
                        W2L_TRY(w2l__buf_reserve(&c->vals, 4 + len, err));
                    uint8_t *d = c->vals.data + c->vals.len;
                    w2l__le32(d, (uint32_t)len);
                    if (len) memcpy(d + 4, x->v.bytes.ptr, len);
                    c->vals.len += 4 + len;
                    c->pg_plain += 4 + len;
                } else if (c->kind == K_BOOL) {
                    uint8_t b = x->v.i32 != 0;
                    W2L_TRY(w2l__pq_put(&c->vals, &b, 1, err));
                } else {
                    if (c->vals.cap - c->vals.len < 16)
                        W2L_TRY(w2l__buf_reserve(&c->vals, 16, err));
                    W2L_TRY(fixed_bytes(c, x, c->vals.data + c->vals.len, err));
                    c->vals.len += (size_t)c->value_width;
                    c->pg_plain += (size_t)c->value_width;
                }
                c->pg_values++;
                c->pg_nonnull++;
                if (!nan) {
                    if (c->kind == K_BOOL) {
                        w2l_value b = *x;
                        b.v.i32 = x->v.i32 != 0;
                        W2L_TRY(mm_add(c, &c->ch_mm, &b, err));
                    } else {
                        W2L_TRY(mm_add(c, &c->ch_mm, x, err));
                    }
                }
            }
        }
        if (c->pg_plain >= opt->page_bytes || c->pg_values >= page_rows ||
            (c->kind == K_BOOL && c->pg_values / 8 >= opt->page_bytes))
            W2L_TRY(w2l__pq_colw_flush_page(c, err));
    }
    return W2L_OK;
}

/* ---- pages ---- */

/* How the codec treats the open page, written with encoding. */
static w2l__pq_zpage page_kind(const w2l__pq_colw *c, int encoding)
{
    if (encoding != PQ_ENC_PLAIN) return PQ_Z_GENERIC;
    if (c->value_width == 4) return PQ_Z_FIXED4;
    if (c->value_width == 8) return c->kind == K_DEC64 ? PQ_Z_DEC8 : PQ_Z_FIXED8;
    return PQ_Z_GENERIC;
}

w2l_rc w2l__pq_colw_flush_page(w2l__pq_colw *c, w2l_error *err)
{
    if (c->pg_values == 0) return W2L_OK;
    w2l__pq_writer *w = c->w;
    if (c->dict_on && !c->dict_used && !dict_pays(c)) W2L_TRY(abandon_dict(c, err));
    w2l_buf *s = &w->scratch;
    s->len = 0;
    const uint8_t *body = NULL; /* the page body: s, or the values with the levels before */
    size_t body_len = 0;
    if (c->optional) {
        W2L_TRY(w2l__buf_reserve(s, 4, err));
        s->len = 4;
        W2L_TRY(w2l__rle_encode_u8(c->defs, c->pg_values, 1, s, err));
        w2l__le32(s->data, (uint32_t)(s->len - 4));
    }
    int encoding;
    if (c->dict_on) {
        int bw = w2l__bit_width(c->dict.count ? c->dict.count - 1 : 0);
        if (bw == 0) bw = 1;
        uint8_t b = (uint8_t)bw;
        W2L_TRY(w2l__pq_put(s, &b, 1, err));
        const uint32_t *idx = (const uint32_t *)(const void *)(c->vals.data + PQ_VALS_GAP);
        W2L_TRY(w2l__rle_encode_u32(idx, c->pg_nonnull, bw, s, err));
        encoding = PQ_ENC_RLE_DICTIONARY;
        c->dict_used = 1;
    } else if (c->kind == K_BOOL) {
        size_t nb = (c->pg_nonnull + 7) / 8;
        W2L_TRY(w2l__buf_reserve(s, nb, err));
        uint8_t *d = s->data + s->len;
        memset(d, 0, nb);
        for (size_t i = 0; i < c->pg_nonnull; i++)
            d[i >> 3] |= (uint8_t)(c->vals.data[PQ_VALS_GAP + i] << (i & 7));
        s->len += nb;
        encoding = PQ_ENC_PLAIN;
    } else {
        encoding = PQ_ENC_PLAIN;
        if (s->len <= PQ_VALS_GAP) { /* the levels go before the values: no copy of these */
            uint8_t *lv = c->vals.data + PQ_VALS_GAP - s->len;
            if (s->len) memcpy(lv, s->data, s->len);
            body = lv;
            body_len = c->vals.len - PQ_VALS_GAP + s->len;
        } else {
            W2L_TRY(w2l__pq_put(s, c->vals.data + PQ_VALS_GAP, c->vals.len - PQ_VALS_GAP, err));
        }
    }
    if (!body) {
        body = s->data;
        body_len = s->len;
    }
    if (body_len > INT32_MAX)
        return w2l__fail(err, W2L_ERROR, "field %s: page of %zu bytes too large", c->field->name,
                         body_len);
    /* the body goes straight into a block of its own (no copy, and no chunk buffer that
     * grows by copying what it holds); the header then goes just before it */
    if (c->npages == c->pages_cap) {
        size_t cap = c->pages_cap ? c->pages_cap * 2 : 8;
        w2l__pq_page_blk *np = w2l__realloc(c->pages, cap * sizeof *np);
        W2L_NOMEM_IF(!np, err);
        c->pages = np;
        c->pages_cap = cap;
    }
    size_t bound = w2l__pq_compress_bound(w->opt.codec, body_len), clen = 0;
    uint8_t *blk = w2l__malloc(PQ_PAGE_HEAD + bound);
    W2L_NOMEM_IF(!blk, err);
    const w2l__pq_zpage zpage = c->z_store ? PQ_Z_STORE : page_kind(c, encoding);
    w2l_rc rc = w2l__pq_compress_into(w->codec, w->opt.codec, w->opt.zstd_level, zpage, body,
                                      body_len, blk + PQ_PAGE_HEAD, bound, &clen, err);
    if (c->z_store) c->z_store--;
    else if (w->opt.codec == W2L_PQ_ZSTD && clen > body_len - body_len / PQ_STORE_GAIN)
        c->z_store = PQ_STORE_PAGES;
    w2l__pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DATA;
    h.uncompressed_size = (int32_t)body_len;
    h.compressed_size = (int32_t)clen;
    h.num_values = (int32_t)c->pg_values;
    h.encoding = encoding;
    h.def_encoding = PQ_ENC_RLE;
    h.rep_encoding = PQ_ENC_RLE;
    w->hdr.len = 0;
    if (rc == W2L_OK) rc = w2l__pq_page_header_write(&h, &w->hdr, err);
    if (rc != W2L_OK) {
        w2l__free(blk);
        return rc;
    }
    size_t hlen = w->hdr.len;
    assert(hlen <= PQ_PAGE_HEAD);
    memcpy(blk + PQ_PAGE_HEAD - hlen, w->hdr.data, hlen);
    if (bound - clen >= 4096) { /* give back what the body did not take */
        uint8_t *nb = w2l__realloc(blk, PQ_PAGE_HEAD + clen);
        if (nb) blk = nb;
    }
    c->pages[c->npages++] = (w2l__pq_page_blk){blk, PQ_PAGE_HEAD - hlen, hlen + clen};
    c->pages_bytes += hlen + clen;
    c->ch_uncomp += (int64_t)(hlen + body_len);
    c->ch_values += (int64_t)c->pg_values;
    c->ch_nulls += (int64_t)(c->pg_values - c->pg_nonnull);
    c->ch_enc |= 1u << encoding;
    if (c->optional) c->ch_enc |= 1u << PQ_ENC_RLE;
    c->vals.len = PQ_VALS_GAP;
    c->pg_values = c->pg_nonnull = c->pg_plain = 0;
    return W2L_OK;
}

uint64_t w2l__pq_colw_estimate(const w2l__pq_colw *c)
{
    const uint64_t nv = c->vals.len - PQ_VALS_GAP;
    uint64_t open = c->dict_on ? nv / 2 : c->pg_plain + nv / 8;
    return c->pages_bytes + open + (c->dict_used || c->dict_on ? w2l__pq_dict_bytes(&c->dict) : 0);
}

/* ---- chunks ---- */

static w2l_rc stat_bytes(const w2l__pq_colw *c, int which_max, uint8_t **out, size_t *len,
                         w2l_error *err)
{
    const w2l__pq_minmax *m = &c->ch_mm;
    uint8_t b[16];
    const uint8_t *p = b;
    size_t n = 0;
    switch (c->kind) {
    case K_BOOL: b[0] = (uint8_t)(which_max ? m->max.i32 : m->min.i32); n = 1; break;
    case K_I32: w2l__le32(b, (uint32_t)(which_max ? m->max.i32 : m->min.i32)); n = 4; break;
    case K_I64: w2l__le64(b, (uint64_t)(which_max ? m->max.i64 : m->min.i64)); n = 8; break;
    case K_F32: {
        float f = which_max ? m->max.f32 : m->min.f32;
        if (f == 0.0f) f = which_max ? 0.0f : -0.0f;
        uint32_t u;
        memcpy(&u, &f, 4);
        w2l__le32(b, u);
        n = 4;
        break;
    }
    case K_F64: {
        double f = which_max ? m->max.f64 : m->min.f64;
        if (f == 0.0) f = which_max ? 0.0 : -0.0;
        uint64_t u;
        memcpy(&u, &f, 8);
        w2l__le64(b, u);
        n = 8;
        break;
    }
    case K_DEC32:
    case K_DEC64: {
        int64_t t = 0;
        (void)w2l__i128_to_i64(which_max ? m->max.dec : m->min.dec, &t);
        if (c->kind == K_DEC32) { w2l__le32(b, (uint32_t)(int32_t)t); n = 4; }
        else { w2l__le64(b, (uint64_t)t); n = 8; }
        break;
    }
    case K_DECFIX:
        (void)w2l__decimal_to_be_fixed(which_max ? m->max.dec : m->min.dec, b, (size_t)c->type_len);
        n = (size_t)c->type_len;
        break;
    case K_BYTES:
        p = which_max ? m->bmax.data : m->bmin.data;
        n = which_max ? m->bmax.len : m->bmin.len;
        break;
    }
    *out = w2l__malloc(n ? n : 1);
    W2L_NOMEM_IF(!*out, err);
    if (n) memcpy(*out, p, n);
    *len = n;
    return W2L_OK;
}

w2l_rc w2l__pq_colw_finish_chunk(w2l__pq_colw *c, w2l__pq_chunk_meta *meta, w2l_error *err)
{
    w2l__pq_writer *w = c->w;
    W2L_TRY(w2l__pq_colw_flush_page(c, err));
    memset(meta, 0, sizeof *meta);
    meta->start = (int64_t)w->offset;
    meta->dict_off = -1;
    int64_t uncomp = c->ch_uncomp;
    if (c->dict_used) {
        const w2l_buf *dv = &c->dict.vals;
        const w2l_buf *body = dv;
        if (w->opt.codec != W2L_PQ_UNCOMPRESSED) {
            W2L_TRY(w2l__pq_compress(w->codec, w->opt.codec, w->opt.zstd_level, dv->data,
                                     dv->len, &w->cbuf, err));
            body = &w->cbuf;
        }
        if (dv->len > INT32_MAX)
            return w2l__fail(err, W2L_ERROR, "field %s: dictionary too large", c->field->name);
        w2l__pq_page_header h;
        memset(&h, 0, sizeof h);
        h.type = PQ_PAGE_DICTIONARY;
        h.uncompressed_size = (int32_t)dv->len;
        h.compressed_size = (int32_t)body->len;
        h.num_values = (int32_t)c->dict.count;
        h.encoding = PQ_ENC_PLAIN;
        w->hdr.len = 0;
        W2L_TRY(w2l__pq_page_header_write(&h, &w->hdr, err));
        meta->dict_off = (int64_t)w->offset;
        W2L_TRY(w2l__pq_file_write(w, w->hdr.data, w->hdr.len, err));
        W2L_TRY(w2l__pq_file_write(w, body->data, body->len, err));
        uncomp += (int64_t)(w->hdr.len + dv->len);
        c->ch_enc |= 1u << PQ_ENC_PLAIN;
    }
    meta->data_off = (int64_t)w->offset;
    for (size_t i = 0; i < c->npages; i++)
        W2L_TRY(w2l__pq_file_write(w, c->pages[i].mem + c->pages[i].off, c->pages[i].len, err));
    meta->comp = (int64_t)w->offset - meta->start;
    meta->uncomp = uncomp;
    meta->num_values = c->ch_values;
    meta->null_count = c->ch_nulls;
    meta->encodings = c->ch_enc ? c->ch_enc : 1u << PQ_ENC_PLAIN;
    if (c->ch_mm.has &&
        !(c->kind == K_BYTES &&
          (c->ch_mm.bmin.len > PQ_MAX_STAT_BYTES || c->ch_mm.bmax.len > PQ_MAX_STAT_BYTES))) {
        W2L_TRY(stat_bytes(c, 0, &meta->min, &meta->min_len, err));
        W2L_TRY(stat_bytes(c, 1, &meta->max, &meta->max_len, err));
        meta->legacy = c->kind != K_BYTES && c->kind != K_DECFIX;
    }
    /* file totals */
    W2L_TRY(mm_merge(c, &c->file_mm, &c->ch_mm, err));
    c->f_values += (uint64_t)c->ch_values;
    c->f_nulls += (uint64_t)c->ch_nulls;
    c->f_size += (uint64_t)meta->comp;
    /* next chunk */
    w2l__pq_dict_reset(&c->dict);
    c->dict_on = w->opt.dict_bytes > 0 && c->kind != K_BOOL;
    c->dict_used = c->dict_failed = 0;
    pages_clear(c);
    c->ch_values = c->ch_nulls = c->ch_uncomp = 0;
    c->ch_enc = 0;
    c->ch_mm.has = 0;
    return W2L_OK;
}

/* ---- Iceberg statistics ---- */

w2l_rc w2l__pq_colw_iceberg_stats(const w2l__pq_colw *c, w2l__col_stats *s, w2l_error *err)
{
    (void)err;
    memset(s, 0, sizeof *s);
    s->field_id = c->field->id;
    s->column_size = c->f_size;
    s->value_count = c->f_values;
    s->null_count = c->f_nulls;
    s->has_nan_count = c->kind == K_F32 || c->kind == K_F64;
    s->nan_count = s->has_nan_count ? c->f_nans : 0;
    const w2l__pq_minmax *m = &c->file_mm;
    if (!m->has) return W2L_OK;
    s->has_bounds = 1;
    switch (c->kind) {
    case K_BOOL:
        s->lower[0] = (uint8_t)m->min.i32;
        s->upper[0] = (uint8_t)m->max.i32;
        s->lower_len = s->upper_len = 1;
        break;
    case K_I32:
        w2l__le32(s->lower, (uint32_t)m->min.i32);
        w2l__le32(s->upper, (uint32_t)m->max.i32);
        s->lower_len = s->upper_len = 4;
        break;
    case K_I64:
        w2l__le64(s->lower, (uint64_t)m->min.i64);
        w2l__le64(s->upper, (uint64_t)m->max.i64);
        s->lower_len = s->upper_len = 8;
        break;
    case K_F32: {
        uint32_t a, b;
        memcpy(&a, &m->min.f32, 4);
        memcpy(&b, &m->max.f32, 4);
        w2l__le32(s->lower, a);
        w2l__le32(s->upper, b);
        s->lower_len = s->upper_len = 4;
        break;
    }
    case K_F64: {
        uint64_t a, b;
        memcpy(&a, &m->min.f64, 8);
        memcpy(&b, &m->max.f64, 8);
        w2l__le64(s->lower, a);
        w2l__le64(s->upper, b);
        s->lower_len = s->upper_len = 8;
        break;
    }
    case K_DEC32:
    case K_DEC64:
    case K_DECFIX:
        s->lower_len = w2l__decimal_to_be_min(m->min.dec, s->lower);
        s->upper_len = w2l__decimal_to_be_min(m->max.dec, s->upper);
        break;
    case K_BYTES: {
        size_t max = c->w->opt.bound_chars;
        if (c->field->type.id == W2L_TYPE_STRING) {
            s->lower_len = w2l__utf8_truncate_lower(m->bmin.data, m->bmin.len, max);
            if (s->lower_len) memcpy(s->lower, m->bmin.data, s->lower_len);
            s->upper_len = w2l__utf8_truncate_upper(m->bmax.data, m->bmax.len, max, s->upper);
            /* an empty max is a valid bound only when the value itself is empty */
            if (s->upper_len == 0 && m->bmax.len) s->has_bounds = 0;
        } else {
            s->lower_len = m->bmin.len < max ? m->bmin.len : max;
            if (s->lower_len) memcpy(s->lower, m->bmin.data, s->lower_len);
            s->upper_len = w2l__bin_truncate_upper(m->bmax.data, m->bmax.len, max, s->upper);
            if (s->upper_len == 0 && m->bmax.len) s->has_bounds = 0;
        }
        if (!s->has_bounds) s->lower_len = s->upper_len = 0;
        break;
    }
    }
    return W2L_OK;
}
