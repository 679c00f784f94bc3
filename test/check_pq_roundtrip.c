/*
 * lib/parquet writer -> lib/parquet reader: every case of test/gen/pq_cases.h written to a
 * "mem" file IO and read back value by value (floats by bit pattern); the footer as the
 * reader sees it (schema and field ids, row groups, encodings, statistics); the Iceberg
 * statistics of the writer against values computed here; bound truncation; misuse and
 * out-of-memory behaviour.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/pq_cases.h"
#include "parquet/pq_int.h"
#include "support/support.h"

static w2l_fileio *mem_io(void)
{
    w2l_fileio *io;
    w2l_error err;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    return io;
}

static int same_value(const w2l_field *f, const w2l_value *a, const w2l_value *b)
{
    if (a->is_null || b->is_null) return a->is_null == b->is_null;
    switch (f->type.id) {
    case W2L_TYPE_BOOLEAN: return (a->v.i32 != 0) == (b->v.i32 != 0);
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: return a->v.i32 == b->v.i32;
    case W2L_TYPE_FLOAT: return memcmp(&a->v.f32, &b->v.f32, 4) == 0;
    case W2L_TYPE_DOUBLE: return memcmp(&a->v.f64, &b->v.f64, 8) == 0;
    case W2L_TYPE_DECIMAL: return a->v.dec.hi == b->v.dec.hi && a->v.dec.lo == b->v.dec.lo;
    case W2L_TYPE_STRING:
    case W2L_TYPE_BINARY:
        return a->v.bytes.len == b->v.bytes.len &&
               (a->v.bytes.len == 0 || memcmp(a->v.bytes.ptr, b->v.bytes.ptr, a->v.bytes.len) == 0);
    default: return a->v.i64 == b->v.i64;
    }
}

static void write_case(w2l_fileio *io, const char *path, pq_case *c, w2l__file_stats *st)
{
    w2l_error err;
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, path, 0, c->schema, &c->opt, NULL, 0, &w, &err), err);
    /* half row by row, half as column batches */
    size_t half = c->nrows / 2;
    for (size_t r = 0; r < half; r++)
        ck_assert_ok(w2l__pq_write_row(w, &c->rows[r * c->ncols], &err), err);
    if (c->nrows > half) {
        size_t n = c->nrows - half;
        w2l_value **cols = malloc(c->ncols * sizeof *cols);
        for (size_t i = 0; i < c->ncols; i++) {
            cols[i] = malloc(n * sizeof **cols);
            for (size_t r = 0; r < n; r++) cols[i][r] = c->rows[(half + r) * c->ncols + i];
        }
        ck_assert_ok(w2l__pq_write_columns(w, (const w2l_value *const *)cols, n, &err), err);
        for (size_t i = 0; i < c->ncols; i++) free(cols[i]);
        free(cols);
    }
    ck_assert_uint_eq(w2l__pq_writer_rows(w), c->nrows);
    ck_assert_ok(w2l__pq_writer_close(w, st, &err), err);
}

START_TEST(every_case_reads_back)
{
    static pq_case cases[16];
    size_t n = pqc_build_all(cases);
    w2l_fileio *io = mem_io();
    for (size_t k = 0; k < n; k++) {
        pq_case *c = &cases[k];
        w2l__file_stats st;
        write_case(io, c->name, c, &st);
        w2l_error err;
        w2l__pq_reader *r;
        ck_assert_ok(w2l__pq_reader_open(io, c->name, &r, &err), err);
        const w2l_schema *s = w2l__pq_reader_schema(r);
        ck_assert_uint_eq(w2l_schema_field_count(s), c->ncols);
        for (size_t i = 0; i < c->ncols; i++) {
            const w2l_field *a = w2l_schema_field(s, i), *b = w2l_schema_field(c->schema, i);
            ck_assert_int_eq(a->id, b->id);
            ck_assert_int_eq(a->type.id, b->type.id);
            ck_assert_int_eq(a->type.precision, b->type.precision);
            ck_assert_int_eq(a->type.scale, b->type.scale);
            ck_assert_int_eq(a->required, b->required);
        }
        ck_assert_uint_eq(w2l__pq_reader_num_rows(r), c->nrows);
        ck_assert_ptr_nonnull(w2l__pq_reader_kv(r, "iceberg.schema", NULL));
        ck_assert_uint_eq(w2l__pq_reader_num_row_groups(r), st.nsplits);
        ck_assert_uint_ge(w2l__pq_reader_num_row_groups(r), (size_t)c->min_row_groups);
        size_t row = 0;
        for (size_t g = 0; g < w2l__pq_reader_num_row_groups(r); g++) {
            const w2l_value *rows;
            ck_assert_ok(w2l__pq_reader_read_row_group(r, g, &rows, &err), err);
            size_t nr = (size_t)w2l__pq_reader_row_group_rows(r, g);
            for (size_t i = 0; i < nr; i++, row++)
                for (size_t col = 0; col < c->ncols; col++)
                    ck_assert_msg(same_value(w2l_schema_field(c->schema, col),
                                             &rows[i * c->ncols + col],
                                             &c->rows[row * c->ncols + col]),
                                  "%s row %zu column %zu", c->name, row, col);
        }
        ck_assert_uint_eq(row, c->nrows);
        /* Iceberg counts against the data */
        ck_assert_uint_eq(st.record_count, c->nrows);
        uint64_t size = 0;
        for (size_t col = 0; col < c->ncols; col++) {
            uint64_t nulls = 0, nans = 0;
            const w2l_field *f = w2l_schema_field(c->schema, col);
            for (size_t i = 0; i < c->nrows; i++) {
                const w2l_value *v = &c->rows[i * c->ncols + col];
                nulls += v->is_null;
                if (!v->is_null && f->type.id == W2L_TYPE_FLOAT) nans += isnan(v->v.f32);
                if (!v->is_null && f->type.id == W2L_TYPE_DOUBLE) nans += isnan(v->v.f64);
            }
            ck_assert_int_eq(st.cols[col].field_id, f->id);
            ck_assert_uint_eq(st.cols[col].value_count, c->nrows);
            ck_assert_uint_eq(st.cols[col].null_count, nulls);
            ck_assert_uint_eq(st.cols[col].nan_count, nans);
            ck_assert_int_eq(st.cols[col].has_bounds, nulls + nans < c->nrows);
            uint64_t chunks = 0;
            for (size_t g = 0; g < w2l__pq_reader_num_row_groups(r); g++)
                chunks += (uint64_t)w2l__pq_reader_chunk(r, g, col)->total_compressed;
            ck_assert_uint_eq(st.cols[col].column_size, chunks);
            size += chunks;
        }
        void *data;
        size_t len;
        ck_assert_ok(w2l_fileio_read_all(io, c->name, &data, &len, &err), err);
        ck_assert_uint_eq(st.file_size, len);
        ck_assert_uint_lt(size, len);
        w2l_free(data);
        w2l__pq_reader_close(r);
        w2l__file_stats_release(&st);
    }
    for (size_t k = n; k-- > 0;) pqc_free(&cases[k]);
    w2l_fileio_close(io);
}
END_TEST

/* Every case written again through one codec shared by all the files (as a writer thread
 * does), at its own level and at another between them: byte for byte the file it writes
 * with contexts of its own. */
START_TEST(a_shared_codec_writes_the_same_bytes)
{
    static pq_case cases[16];
    size_t n = pqc_build_all(cases);
    w2l_fileio *io = mem_io();
    w2l_error err;
    w2l__pq_codec *codec;
    ck_assert_ok(w2l__pq_codec_new(&codec, &err), err);
    for (int round = 0; round < 2; round++)
        for (size_t k = 0; k < n; k++) {
            pq_case *c = &cases[k];
            char own[128], shared[128];
            snprintf(own, sizeof own, "%.100s.own.%d", c->name, round);
            snprintf(shared, sizeof shared, "%.100s.shared.%d", c->name, round);
            w2l__file_stats st;
            if (round) c->opt.zstd_level = k % 2 ? 1 : 3; /* the level changes between files */
            write_case(io, own, c, &st);
            w2l__file_stats_release(&st);
            c->opt.codec_ctx = codec;
            write_case(io, shared, c, &st);
            c->opt.codec_ctx = NULL;
            w2l__file_stats_release(&st);
            void *a, *b;
            size_t la, lb;
            ck_assert_ok(w2l_fileio_read_all(io, own, &a, &la, &err), err);
            ck_assert_ok(w2l_fileio_read_all(io, shared, &b, &lb, &err), err);
            ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s round %d: %zu and %zu bytes",
                          c->name, round, la, lb);
            w2l_free(a);
            w2l_free(b);
        }
    w2l__pq_codec_free(codec);
    for (size_t k = n; k-- > 0;) pqc_free(&cases[k]);
    w2l_fileio_close(io);
}
END_TEST

static void add(w2l_schema *s, int32_t id, const char *name, const char *type, int req)
{
    w2l_error err;
    w2l_type t;
    ck_assert_ok(w2l_type_parse(type, &t, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, id, name, t, req, &err), err);
}

START_TEST(iceberg_bounds_are_exact_and_truncated)
{
    w2l_schema *s = w2l_schema_new(1);
    add(s, 1, "s", "string", 0);
    add(s, 2, "b", "binary", 0);
    add(s, 3, "d", "decimal(38,2)", 0);
    add(s, 4, "f", "double", 0);
    add(s, 5, "ts", "timestamptz", 0);
    w2l_fileio *io = mem_io();
    w2l_error err;
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "b.parquet", 0, s, NULL, NULL, 0, &w, &err), err);
    w2l_value row[5];
    memset(row, 0, sizeof row);
    const char *s1 = "abcdefghijklmnop\xc3\xa9xyz"; /* 20 code points */
    const char *s2 = "abc";
    static const unsigned char b1[20] = {1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 9, 9, 9, 9};
    row[0].v.bytes.ptr = s1;
    row[0].v.bytes.len = strlen(s1);
    row[1].v.bytes.ptr = (const char *)b1;
    row[1].v.bytes.len = sizeof b1;
    row[2].v.dec.hi = -1;
    row[2].v.dec.lo = (uint64_t)-129; /* -1.29: minimal bytes ff7f */
    row[3].v.f64 = NAN;
    row[4].v.i64 = -1;
    ck_assert_ok(w2l__pq_write_row(w, row, &err), err);
    row[0].v.bytes.ptr = s2;
    row[0].v.bytes.len = 3;
    row[1].v.bytes.len = 2;
    row[2].v.dec.hi = 0;
    row[2].v.dec.lo = 128; /* 1.28: 0080 */
    row[3].v.f64 = -0.0;
    row[4].v.i64 = 5;
    ck_assert_ok(w2l__pq_write_row(w, row, &err), err);
    w2l__file_stats st;
    ck_assert_ok(w2l__pq_writer_close(w, &st, &err), err);
    const w2l__col_stats *c = st.cols;
    ck_assert_uint_eq(c[0].lower_len, 3);
    ck_assert(memcmp(c[0].lower, "abc", 3) == 0);
    ck_assert_uint_eq(c[0].upper_len, 16);
    ck_assert(memcmp(c[0].upper, "abcdefghijklmnoq", 16) == 0);
    ck_assert_uint_eq(c[1].lower_len, 2);
    ck_assert_uint_eq(c[1].upper_len, 3); /* 01 02 04: trailing ff dropped, 03 incremented */
    ck_assert_uint_eq(c[1].upper[2], 4);
    ck_assert_uint_eq(c[2].lower_len, 2);
    ck_assert_uint_eq(c[2].lower[0], 0xff);
    ck_assert_uint_eq(c[2].lower[1], 0x7f);
    ck_assert_uint_eq(c[2].upper_len, 2);
    ck_assert_uint_eq(c[2].upper[0], 0x00);
    ck_assert_uint_eq(c[2].upper[1], 0x80);
    ck_assert_uint_eq(c[3].nan_count, 1);
    ck_assert_uint_eq(c[3].lower_len, 8);
    double lo;
    memcpy(&lo, c[3].lower, 8);
    ck_assert(lo == 0 && signbit(lo));
    ck_assert_uint_eq(c[4].lower[0], 0xff);
    ck_assert_uint_eq(c[4].upper[0], 5);
    w2l__file_stats_release(&st);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

START_TEST(utf8_truncation_rounds_up)
{
    uint8_t out[64];
    /* "ab" + U+10FFFF: upper of 3 code points with max 2 is "ac" */
    const uint8_t a[] = {'a', 'b', 0xf4, 0x8f, 0xbf, 0xbf};
    ck_assert_uint_eq(w2l__utf8_truncate_upper(a, sizeof a, 2, out), 2);
    ck_assert(memcmp(out, "ac", 2) == 0);
    /* last kept code point is U+10FFFF: dropped, the one before incremented */
    const uint8_t b[] = {'a', 0xf4, 0x8f, 0xbf, 0xbf, 'z'};
    ck_assert_uint_eq(w2l__utf8_truncate_upper(b, sizeof b, 2, out), 1);
    ck_assert_uint_eq(out[0], 'b');
    /* nothing can be incremented: no bound */
    const uint8_t c[] = {0xf4, 0x8f, 0xbf, 0xbf, 0xf4, 0x8f, 0xbf, 0xbf, 'a'};
    ck_assert_uint_eq(w2l__utf8_truncate_upper(c, sizeof c, 2, out), 0);
    /* U+D7FF + 1 skips the surrogates to U+E000 */
    const uint8_t d[] = {0xed, 0x9f, 0xbf, 'x'};
    ck_assert_uint_eq(w2l__utf8_truncate_upper(d, sizeof d, 1, out), 3);
    ck_assert(memcmp(out, "\xee\x80\x80", 3) == 0);
    ck_assert_uint_eq(w2l__utf8_truncate_lower(a, sizeof a, 2), 2);
    ck_assert_uint_eq(w2l__utf8_truncate_lower(a, sizeof a, 16), sizeof a);
    const uint8_t e[] = {0xff, 0xff, 0xff};
    ck_assert_uint_eq(w2l__bin_truncate_upper(e, 3, 2, out), 0);
}
END_TEST

START_TEST(misuse_and_required_nulls)
{
    w2l_schema *s = w2l_schema_new(1);
    add(s, 1, "id", "long", 1);
    add(s, 2, "d", "decimal(4,2)", 0);
    w2l_fileio *io = mem_io();
    w2l_error err;
    w2l__pq_writer *w;
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.codec = 1; /* snappy: not offered */
    ck_assert_int_eq(w2l__pq_writer_open(io, "x", 0, s, &o, NULL, 0, &w, &err), W2L_MISUSE);
    ck_assert_ptr_null(w);
    ck_assert_ok(w2l__pq_writer_open(io, "x", 0, s, NULL, NULL, 0, &w, &err), err);
    w2l_value row[2] = {{.is_null = 1}, {.is_null = 1}};
    ck_assert_int_eq(w2l__pq_write_row(w, row, &err), W2L_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "id"));
    row[0].is_null = 0;
    ck_assert_ok(w2l__pq_write_row(w, row, &err), err); /* the bad row was not taken */
    row[1].is_null = 0;
    row[1].v.dec.lo = 12345; /* 123.45 does not fit decimal(4,2) */
    ck_assert_int_eq(w2l__pq_write_row(w, row, &err), W2L_SCHEMA);
    w2l__pq_writer_abort(w);
    int exists = 1;
    ck_assert_ok(w2l_fileio_exists(io, "x", &exists, &err), err);
    ck_assert_int_eq(exists, 0);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

START_TEST(out_of_memory_fails_cleanly)
{
    /* _i-th allocation fails: W2L_NOMEM (or success once past every allocation), no leak */
    fail_alloc_install();
    static pq_case cases[16];
    size_t n = pqc_build_all(cases);
    w2l_fileio *io = mem_io();
    long before = fail_alloc_outstanding();
    fail_alloc_arm(_i);
    w2l_error err;
    w2l__pq_writer *w = NULL;
    w2l_rc rc =
        w2l__pq_writer_open(io, "oom", 0, cases[0].schema, &cases[0].opt, NULL, 0, &w, &err);
    if (rc == W2L_OK) rc = w2l__pq_write_rows(w, cases[0].rows, cases[0].nrows, &err);
    w2l__file_stats st;
    memset(&st, 0, sizeof st);
    if (rc == W2L_OK) {
        rc = w2l__pq_writer_close(w, &st, &err);
        w = NULL;
    }
    if (w) w2l__pq_writer_abort(w);
    ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
    w2l__pq_reader *r = NULL;
    if (rc == W2L_OK) {
        rc = w2l__pq_reader_open(io, "oom", &r, &err);
        const w2l_value *rows;
        if (rc == W2L_OK) rc = w2l__pq_reader_read_row_group(r, 0, &rows, &err);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "%s: %s", w2l_rc_name(rc), err.msg);
        w2l__pq_reader_close(r);
        w2l_fileio_remove(io, "oom", &err);
    }
    w2l__file_stats_release(&st);
    fail_alloc_arm(-1);
    ck_assert_int_eq(fail_alloc_outstanding(), before);
    for (size_t k = n; k-- > 0;) pqc_free(&cases[k]);
    w2l_fileio_close(io);
}
END_TEST

/* Column col of row group 0 of rd reads back as column col of rows (n rows of ncols). */
static void column_reads_back(w2l__pq_reader *rd, const w2l_schema *s, size_t col,
                              const w2l_value *rows, size_t ncols, size_t n)
{
    w2l_error err;
    w2l_value *back = calloc(n, sizeof *back);
    ck_assert_ptr_nonnull(back);
    ck_assert_ok(w2l__pq_reader_read_column(rd, 0, col, back, &err), err);
    const w2l_field *f = w2l_schema_field(s, col);
    for (size_t r = 0; r < n; r++)
        ck_assert_msg(same_value(f, &back[r], &rows[ncols * r + col]), "column %zu row %zu", col,
                      r);
    free(back);
}

/* _i: 0 = pages close on page_bytes (64: 16 INT or 8 LONG values), 1 = on page_rows (70).
 * Dictionary columns of INT and LONG with NULLs, written in slices of 1 to 9 rows: the
 * pages split after the same values as the value-by-value rule says (the append loop takes
 * runs of dictionary hits and NULLs on a path of its own, column_writer.c dict_hits),
 * and read back exactly. */
START_TEST(dictionary_int_pages_split_at_their_limits)
{
    /* and byte arrays: the hit loops of INT32, INT64 and BYTE_ARRAY dictionaries close pages
     * where the general loop would */
    enum { N = 1000, C = 3 };
    static const char *const words[] = {"paid", "shipped", "", "cancelled", "refunded-late"};
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    add(s, 1, "a", "int", 0);
    add(s, 2, "b", "long", 0);
    add(s, 3, "c", "string", 0);
    static w2l_value rows[N * C];
    memset(rows, 0, sizeof rows);
    for (int r = 0; r < N; r++) {
        rows[C * r].is_null = r % 7 == 3;
        rows[C * r].v.i32 = r % 5 - 2;
        rows[C * r + 1].is_null = r % 11 == 0;
        rows[C * r + 1].v.i64 = (r % 3) * 1000000007LL;
        rows[C * r + 2].is_null = r % 13 == 5;
        rows[C * r + 2].v.bytes.ptr = words[(r * 7) % 5];
        rows[C * r + 2].v.bytes.len = strlen(words[(r * 7) % 5]);
    }
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.codec = W2L_PQ_UNCOMPRESSED;
    o.page_bytes = _i == 0 ? 64 : (size_t)1 << 20;
    o.page_rows = _i == 0 ? 0 : 70;
    w2l_fileio *io = mem_io();
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "d.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    for (int r = 0, k = 1; r < N; r += k, k = k % 9 + 1)
        ck_assert_ok(w2l__pq_write_rows(w, &rows[C * r], (size_t)(r + k <= N ? k : N - r), &err),
                     err);
    ck_assert_ok(w2l__pq_writer_close(w, NULL, &err), err);
    void *file;
    size_t flen;
    ck_assert_ok(w2l_fileio_read_all(io, "d.parquet", &file, &flen, &err), err);
    w2l__pq_reader *rd;
    ck_assert_ok(w2l__pq_reader_open(io, "d.parquet", &rd, &err), err);
    for (size_t col = 0; col < C; col++) {
        const w2l__pq_chunk_info *ci = w2l__pq_reader_chunk(rd, 0, col);
        ck_assert(ci->encodings & (1u << PQ_ENC_RLE_DICTIONARY));
        /* the value counts of the pages as the rule gives them */
        size_t want[N], nwant = 0, values = 0, plain = 0, width = col == 0 ? 4 : 8;
        for (int r = 0; r < N; r++) {
            const w2l_value *x = &rows[C * r + col];
            values++;
            if (!x->is_null) plain += col == 2 ? 4 + x->v.bytes.len : width;
            if (plain >= o.page_bytes || (o.page_rows && values >= o.page_rows))
                want[nwant++] = values, values = plain = 0;
        }
        if (values) want[nwant++] = values;
        /* the data pages of the chunk, after its dictionary page */
        const uint8_t *p = (const uint8_t *)file + ci->dict_page_offset;
        const uint8_t *end = (const uint8_t *)file + ci->dict_page_offset + ci->total_compressed;
        size_t got = 0;
        while (p < end) {
            w2l__pq_page_header h;
            size_t used;
            ck_assert_ok(w2l__pq_page_header_read(p, (size_t)(end - p), &h, &used, &err), err);
            if (h.type == PQ_PAGE_DATA) {
                ck_assert_uint_lt(got, nwant);
                ck_assert_msg((size_t)h.num_values == want[got],
                              "column %zu page %zu: %d values, want %zu", col, got,
                              (int)h.num_values, want[got]);
                ck_assert_int_eq(h.encoding, PQ_ENC_RLE_DICTIONARY);
                got++;
            }
            p += used + (size_t)h.compressed_size;
        }
        ck_assert_uint_eq(got, nwant);
        column_reads_back(rd, s, col, rows, C, N);
    }
    w2l__pq_reader_close(rd);
    w2l_free(file);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

/* PLAIN pages of optional columns are compressed from the column's own buffer with their
 * levels put just before the values when they fit there (a column with few NULLs), and
 * assembled in a copy when they do not (NULLs every other value): both read back, on
 * either codec, over pages split small and a dictionary given up after its first page */
START_TEST(plain_pages_with_short_and_long_levels_read_back)
{
    enum { N = 3000 };
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    add(s, 1, "few_nulls", "long", 0);
    add(s, 2, "many_nulls", "long", 0);
    add(s, 3, "text", "string", 0);
    add(s, 4, "id", "long", 1);
    static w2l_value rows[N * 4];
    static char text[N][12];
    memset(rows, 0, sizeof rows);
    for (int r = 0; r < N; r++) {
        rows[4 * r].is_null = r % 1000 == 999;
        rows[4 * r].v.i64 = (int64_t)r * 7919;
        rows[4 * r + 1].is_null = r % 2 == 1;
        rows[4 * r + 1].v.i64 = -(int64_t)r;
        snprintf(text[r], sizeof text[r], "t%d", r * 31);
        rows[4 * r + 2].is_null = r % 500 == 0;
        rows[4 * r + 2].v.bytes.ptr = text[r];
        rows[4 * r + 2].v.bytes.len = strlen(text[r]);
        rows[4 * r + 3].v.i64 = r;
    }
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.codec = _i == 0 ? W2L_PQ_UNCOMPRESSED : W2L_PQ_ZSTD;
    o.page_bytes = 4096;
    w2l_fileio *io = mem_io();
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "p.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    for (int r = 0, k = 1; r < N; r += k, k = k % 13 + 1)
        ck_assert_ok(w2l__pq_write_rows(w, &rows[4 * r], (size_t)(r + k <= N ? k : N - r), &err),
                     err);
    ck_assert_ok(w2l__pq_writer_close(w, NULL, &err), err);
    w2l__pq_reader *rd;
    ck_assert_ok(w2l__pq_reader_open(io, "p.parquet", &rd, &err), err);
    for (size_t col = 0; col < 4; col++) {
        const w2l__pq_chunk_info *ci = w2l__pq_reader_chunk(rd, 0, col);
        ck_assert(ci->encodings & (1u << PQ_ENC_PLAIN));
        column_reads_back(rd, s, col, rows, 4, N);
    }
    w2l__pq_reader_close(rd);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

/* The statistics of decimals stored as INT32 and INT64 (PLAIN from the first value, and
 * with a dictionary), negatives and positives, the extremes in the middle of the chunk */
START_TEST(decimal_int_chunks_keep_their_min_and_max)
{
    enum { N = 5000 };
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    add(s, 1, "d9", "decimal(9,2)", 0);
    add(s, 2, "d12", "decimal(12,2)", 0);
    static w2l_value rows[N * 2];
    memset(rows, 0, sizeof rows);
    int64_t lo[2] = {INT64_MAX, INT64_MAX}, hi[2] = {INT64_MIN, INT64_MIN};
    for (int r = 0; r < N; r++)
        for (int k = 0; k < 2; k++) {
            int64_t x = (int64_t)((r * 7919) % 20011) - 10000;
            if (k) x *= 100003;
            if (r == 2500 + k) x = k ? 99999999999LL : 999999999;
            if (r == 3100 - k) x = k ? -99999999999LL : -999999999;
            rows[2 * r + k].v.dec.lo = (uint64_t)x;
            rows[2 * r + k].v.dec.hi = x < 0 ? -1 : 0;
            if (x < lo[k]) lo[k] = x;
            if (x > hi[k]) hi[k] = x;
        }
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.dict_bytes = _i == 0 ? 0 : o.dict_bytes;
    w2l_fileio *io = mem_io();
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "m.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    ck_assert_ok(w2l__pq_write_rows(w, rows, N, &err), err);
    ck_assert_ok(w2l__pq_writer_close(w, NULL, &err), err);
    w2l__pq_reader *rd;
    ck_assert_ok(w2l__pq_reader_open(io, "m.parquet", &rd, &err), err);
    for (size_t k = 0; k < 2; k++) {
        const w2l__pq_chunk_info *ci = w2l__pq_reader_chunk(rd, 0, k);
        ck_assert(ci->min_value && ci->max_value);
        ck_assert_uint_eq(ci->min_len, k ? 8 : 4);
        int64_t mn = k ? (int64_t)w2l__ld64(ci->min_value) : (int32_t)w2l__ld32(ci->min_value);
        int64_t mx = k ? (int64_t)w2l__ld64(ci->max_value) : (int32_t)w2l__ld32(ci->max_value);
        ck_assert_int_eq(mn, lo[k]);
        ck_assert_int_eq(mx, hi[k]);
    }
    w2l__pq_reader_close(rd);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

/* Reference statistics for plain_chunks_keep_exact_statistics: NaN left out, -0.0 before
 * +0.0, byte arrays as unsigned bytes with a prefix first. */
static int ref_cmp(const w2l_field *f, const w2l_value *a, const w2l_value *b)
{
    switch (f->type.id) {
    case W2L_TYPE_INT: return (a->v.i32 > b->v.i32) - (a->v.i32 < b->v.i32);
    case W2L_TYPE_LONG: return (a->v.i64 > b->v.i64) - (a->v.i64 < b->v.i64);
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE: {
        double x = f->type.id == W2L_TYPE_FLOAT ? a->v.f32 : a->v.f64;
        double y = f->type.id == W2L_TYPE_FLOAT ? b->v.f32 : b->v.f64;
        if (x != y) return x < y ? -1 : 1;
        return (signbit(y) != 0) - (signbit(x) != 0);
    }
    case W2L_TYPE_DECIMAL: {
        int64_t x = (int64_t)a->v.dec.lo, y = (int64_t)b->v.dec.lo;
        return (x > y) - (x < y);
    }
    default: {
        size_t n = a->v.bytes.len < b->v.bytes.len ? a->v.bytes.len : b->v.bytes.len;
        int r = n ? memcmp(a->v.bytes.ptr, b->v.bytes.ptr, n) : 0;
        if (r) return r < 0 ? -1 : 1;
        return (a->v.bytes.len > b->v.bytes.len) - (a->v.bytes.len < b->v.bytes.len);
    }
    }
}

/* A value's Iceberg single-value bytes (the writer's bound before any truncation). */
static size_t ref_bound(const w2l_field *f, const w2l_value *v, uint8_t *out)
{
    switch (f->type.id) {
    case W2L_TYPE_INT: w2l__le32(out, (uint32_t)v->v.i32); return 4;
    case W2L_TYPE_LONG: w2l__le64(out, (uint64_t)v->v.i64); return 8;
    case W2L_TYPE_FLOAT: memcpy(out, &v->v.f32, 4); return 4;
    case W2L_TYPE_DOUBLE: memcpy(out, &v->v.f64, 8); return 8;
    case W2L_TYPE_DECIMAL: return w2l__decimal_to_be_min(v->v.dec, out);
    default: memcpy(out, v->v.bytes.ptr, v->v.bytes.len); return v->v.bytes.len;
    }
}

/* Columns written PLAIN from the first value (no dictionary, _i 0) or after their
 * dictionary is given up (_i 1), in batches of varying sizes over several pages and row
 * groups: every chunk's min and max and the file's Iceberg bounds are those of a plain
 * reference, through NULLs, NaN, zeros of both signs, infinities, byte arrays shorter and
 * longer than 8 bytes sharing their first 8 bytes, and chunks with no value at all. */
START_TEST(plain_chunks_keep_exact_statistics)
{
    enum { N = 12000, NC = 7, RG = 2900 };
    static const char *const types[NC] = {"int",           "long",          "float", "double",
                                          "decimal(9,2)",  "decimal(12,2)", "string"};
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    for (int k = 0; k < NC; k++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", k);
        add(s, k + 1, name, types[k], k == 0); /* c0 required */
    }
    size_t nf;
    const w2l_field *fs = w2l__schema_fields(s, &nf);
    static w2l_value rows[N * NC];
    static char text[N][24];
    memset(rows, 0, sizeof rows);
    uint64_t x = 88172645463325252ull;
    for (int r = 0; r < N; r++) {
        for (int k = 0; k < NC; k++) {
            w2l_value *v = &rows[r * NC + k];
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int64_t y = (int64_t)(x % 2000001) - 1000000;
            /* nulls, and the whole of row group 2 null in column 1 */
            v->is_null = k && (x % 7 == 0 || (k == 1 && r / RG == 2));
            switch (k) {
            case 0: v->v.i32 = (int32_t)(r % 997 == 5 ? (x & 1 ? INT32_MIN : INT32_MAX) : y); break;
            case 1: v->v.i64 = r % 1013 == 7 ? (x & 1 ? INT64_MIN : INT64_MAX) : y * 100003; break;
            case 2:
            case 3: {
                /* not negative, so that the file's lower bound is a zero whose sign tells
                 * whether -0.0 was ordered first */
                double d = (double)(y < 0 ? -y : y) / 1000;
                switch (x >> 60) {
                case 0: d = NAN; break;
                case 1: d = -0.0; break;
                case 2: d = 0.0; break;
                case 3: d = r / RG == 1 ? INFINITY : d; break;
                }
                if (r % RG == 0) { /* +0.0 first: a later -0.0 must still be the min */
                    d = 0.0;
                    v->is_null = 0;
                }
                if (k == 2) v->v.f32 = (float)d;
                else v->v.f64 = d;
                break;
            }
            case 4:
            case 5:
                if (k == 5) y *= 99991;
                v->v.dec.lo = (uint64_t)y;
                v->v.dec.hi = y < 0 ? -1 : 0;
                break;
            default: { /* the first two row groups: 8..20 bytes, all with the same first 8
                        * (min and max too); then 0..20 bytes, the same first 8 for most */
                const int early = r / RG < 2;
                size_t len = early ? 8 + (size_t)(x >> 8) % 13 : (size_t)(x >> 8) % 21;
                snprintf(text[r], sizeof text[r], "%s%08llx",
                         early || x % 3 ? "same-hd-" : (x % 2 ? "\xff\xfe" : ""),
                         (unsigned long long)(x >> 20));
                if (len > strlen(text[r])) len = strlen(text[r]);
                v->v.bytes.ptr = text[r];
                v->v.bytes.len = len;
            }
            }
        }
    }
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.dict_bytes = _i == 0 ? 0 : o.dict_bytes;
    o.page_bytes = 5000;
    o.row_group_rows = RG;
    w2l_fileio *io = mem_io();
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "p.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    for (size_t r = 0, b = 1; r < N; r += b, b = b * 3 % 1024 + 1)
        ck_assert_ok(w2l__pq_write_rows(w, &rows[r * NC], W2L_MIN(b, N - r), &err), err);
    w2l__file_stats st;
    ck_assert_ok(w2l__pq_writer_close(w, &st, &err), err);
    w2l__pq_reader *rd;
    ck_assert_ok(w2l__pq_reader_open(io, "p.parquet", &rd, &err), err);
    ck_assert_uint_eq(w2l__pq_reader_num_row_groups(rd), (N + RG - 1) / RG);
    for (int k = 0; k < NC; k++) {
        const w2l_value *fmin = NULL, *fmax = NULL;
        uint64_t nans = 0;
        for (size_t g = 0; g * RG < N; g++) {
            const w2l_value *mn = NULL, *mx = NULL;
            for (size_t r = g * RG; r < N && r < (g + 1) * RG; r++) {
                const w2l_value *v = &rows[r * NC + k];
                if (v->is_null) continue;
                if ((k == 2 && isnan(v->v.f32)) || (k == 3 && isnan(v->v.f64))) {
                    nans++;
                    continue;
                }
                if (!mn || ref_cmp(&fs[k], v, mn) < 0) mn = v;
                if (!mx || ref_cmp(&fs[k], v, mx) > 0) mx = v;
            }
            const w2l__pq_chunk_info *ci = w2l__pq_reader_chunk(rd, g, (size_t)k);
            if (_i == 1 && g == 0 && k < 2) /* the dictionary was tried, and given up */
                ck_assert(!(ci->encodings & (1u << PQ_ENC_RLE_DICTIONARY)));
            if (!mn) {
                ck_assert(!ci->min_value && !ci->max_value);
                continue;
            }
            uint8_t b[64];
            size_t n;
            ck_assert(ci->min_value && ci->max_value);
            if (k == 2 || k == 3) { /* Parquet's zeros: -0.0 for a min, +0.0 for a max */
                float af, zf;
                double a, z;
                memcpy(&af, ci->min_value, 4);
                memcpy(&zf, ci->max_value, 4);
                memcpy(&a, ci->min_value, k == 2 ? 4 : 8);
                memcpy(&z, ci->max_value, k == 2 ? 4 : 8);
                if (k == 2) a = af, z = zf;
                double ra = k == 2 ? mn->v.f32 : mn->v.f64, rz = k == 2 ? mx->v.f32 : mx->v.f64;
                ck_assert(a == ra && (a != 0 || signbit(a)));
                ck_assert(z == rz && (z != 0 || !signbit(z)));
            } else if (k == 4 || k == 5) {
                int64_t a = k == 4 ? (int32_t)w2l__ld32(ci->min_value)
                                   : (int64_t)w2l__ld64(ci->min_value);
                int64_t z = k == 4 ? (int32_t)w2l__ld32(ci->max_value)
                                   : (int64_t)w2l__ld64(ci->max_value);
                ck_assert_int_eq(a, (int64_t)mn->v.dec.lo);
                ck_assert_int_eq(z, (int64_t)mx->v.dec.lo);
            } else {
                n = ref_bound(&fs[k], mn, b);
                ck_assert_uint_eq(ci->min_len, n);
                ck_assert(n == 0 || memcmp(ci->min_value, b, n) == 0);
                n = ref_bound(&fs[k], mx, b);
                ck_assert_uint_eq(ci->max_len, n);
                ck_assert(n == 0 || memcmp(ci->max_value, b, n) == 0);
            }
            if (!fmin || ref_cmp(&fs[k], mn, fmin) < 0) fmin = mn;
            if (!fmax || ref_cmp(&fs[k], mx, fmax) > 0) fmax = mx;
        }
        const w2l__col_stats *cs = &st.cols[k];
        ck_assert_uint_eq(cs->nan_count, nans);
        ck_assert(cs->has_bounds && fmin && fmax);
        uint8_t b[64];
        size_t n = ref_bound(&fs[k], fmin, b);
        if (k == NC - 1) n = W2L_MIN(n, 16); /* truncated to 16 code points: ASCII here */
        ck_assert_uint_eq(cs->lower_len, n);
        ck_assert(n == 0 || memcmp(cs->lower, b, n) == 0);
        if (k != NC - 1) { /* the string's upper bound: see iceberg_bounds_are_exact... */
            n = ref_bound(&fs[k], fmax, b);
            ck_assert_uint_eq(cs->upper_len, n);
            ck_assert(memcmp(cs->upper, b, n) == 0);
        }
    }
    /* a NULL in the required column fails in the plain loop too */
    w2l_value bad[NC];
    memset(bad, 0, sizeof bad);
    bad[0].is_null = 1;
    ck_assert_ok(w2l__pq_writer_open(io, "q.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    for (int r = 0; r < 9000; r++)
        ck_assert_ok(w2l__pq_write_rows(w, &rows[(r % N) * NC], 1, &err), err);
    ck_assert_int_eq(w2l__pq_write_rows(w, bad, 1, &err), W2L_SCHEMA);
    w2l__pq_writer_abort(w);
    w2l__pq_reader_close(rd);
    w2l__file_stats_release(&st);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

/* A column whose pages stop compressing has its next pages stored as they are (a zstd frame
 * of raw blocks) and compressed again after them: 10 pages of random LONGs, then 30 of an
 * increasing count. Pages 0-9 do not compress (page 0 and 8 are tried), 9-15 are stored
 * whatever they hold, page 16 is tried, compresses, and so do the rest; every value reads
 * back. (The pq_cases files, which test/interop reads with DuckDB and hyparquet, hold
 * stored pages too: the status column of pages_row_groups_zstd.) */
START_TEST(pages_that_do_not_compress_are_stored_until_data_compresses)
{
    enum { PAGE = 100, PAGES = 40, N = PAGE * PAGES };
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    add(s, 1, "v", "long", 1);
    static w2l_value rows[N];
    memset(rows, 0, sizeof rows);
    uint64_t x = 88172645463325252ULL;
    for (int r = 0; r < N; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rows[r].v.i64 = r < 10 * PAGE ? (int64_t)x : r;
    }
    w2l__pq_options o;
    w2l__pq_options_default(&o);
    o.page_rows = PAGE;
    w2l_fileio *io = mem_io();
    w2l__pq_writer *w;
    ck_assert_ok(w2l__pq_writer_open(io, "s.parquet", 0, s, &o, NULL, 0, &w, &err), err);
    ck_assert_ok(w2l__pq_write_rows(w, rows, N, &err), err);
    ck_assert_ok(w2l__pq_writer_close(w, NULL, &err), err);
    void *file;
    size_t flen;
    ck_assert_ok(w2l_fileio_read_all(io, "s.parquet", &file, &flen, &err), err);
    w2l__pq_reader *rd;
    ck_assert_ok(w2l__pq_reader_open(io, "s.parquet", &rd, &err), err);
    const w2l__pq_chunk_info *ci = w2l__pq_reader_chunk(rd, 0, 0);
    ck_assert_int_eq(ci->codec, W2L_PQ_ZSTD);
    ck_assert_uint_eq(ci->encodings & (1u << PQ_ENC_RLE_DICTIONARY), 0);
    const uint8_t *p = (const uint8_t *)file + ci->data_page_offset;
    const uint8_t *end = p + ci->total_compressed;
    size_t page = 0;
    while (p < end) {
        w2l__pq_page_header h;
        size_t used;
        ck_assert_ok(w2l__pq_page_header_read(p, (size_t)(end - p), &h, &used, &err), err);
        ck_assert_int_eq(h.type, PQ_PAGE_DATA);
        /* a frame as large as the page: its bytes as they are, in raw blocks */
        int stored = h.compressed_size > h.uncompressed_size;
        ck_assert_msg(stored == (page < 16), "page %zu: %d bytes of %d", page,
                      (int)h.compressed_size, (int)h.uncompressed_size);
        if (!stored) ck_assert_int_lt(h.compressed_size, h.uncompressed_size / 2);
        p += used + (size_t)h.compressed_size;
        page++;
    }
    ck_assert_uint_eq(page, PAGES);
    column_reads_back(rd, s, 0, rows, 1, N);
    w2l__pq_reader_close(rd);
    w2l_free(file);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
}
END_TEST

/* Stored frames (zstd raw blocks of at most 128 KiB, the content size in 1, 2, 4 bytes)
 * inflate to what went in, at the edges of each size field and block. */
START_TEST(stored_frames_read_back)
{
    static const size_t sizes[] = {0,     1,      255,    256,    65791,  65792,
                                   131071, 131072, 131073, 262144, 300001};
    w2l_error err;
    w2l__pq_codec *c;
    ck_assert_ok(w2l__pq_codec_new(&c, &err), err);
    uint8_t *src = malloc(300001), *back = malloc(300001);
    for (size_t i = 0; i < 300001; i++) src[i] = (uint8_t)(i * 2654435761u >> 13);
    w2l_buf out = {0};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k], bound = w2l__pq_compress_bound(W2L_PQ_ZSTD, n), len = 0;
        ck_assert_ok(w2l__buf_reserve(&out, bound, &err), err);
        ck_assert_ok(w2l__pq_compress_into(c, W2L_PQ_ZSTD, 3, PQ_Z_STORE, src, n, out.data,
                                           bound, &len, &err),
                     err);
        ck_assert_uint_le(len, bound);
        ck_assert_uint_le(len, n + 9 + 3 * (n / 131072 + 1));
        ck_assert_ok(w2l__pq_decompress(c, W2L_PQ_ZSTD, out.data, len, back, n, &err), err);
        ck_assert(n == 0 || memcmp(back, src, n) == 0);
        /* one byte short of the stated content: corrupt */
        if (n) ck_assert_int_eq(w2l__pq_decompress(c, W2L_PQ_ZSTD, out.data, len - 1, back, n,
                                                   &err),
                                W2L_CORRUPT);
    }
    w2l_buf_release(&out);
    free(src);
    free(back);
    w2l__pq_codec_free(c);
}
END_TEST

Suite *suite_pq_roundtrip(void)
{
    Suite *s = suite_create("pq_roundtrip");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, every_case_reads_back);
    tcase_add_test(basic, a_shared_codec_writes_the_same_bytes);
    tcase_add_test(basic, iceberg_bounds_are_exact_and_truncated);
    tcase_add_test(basic, utf8_truncation_rounds_up);
    tcase_set_timeout(basic, 120);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, misuse_and_required_nulls);
    tcase_add_loop_test(edge, dictionary_int_pages_split_at_their_limits, 0, 2);
    tcase_add_loop_test(edge, plain_pages_with_short_and_long_levels_read_back, 0, 2);
    tcase_add_loop_test(edge, decimal_int_chunks_keep_their_min_and_max, 0, 2);
    tcase_add_loop_test(edge, plain_chunks_keep_exact_statistics, 0, 2);
    tcase_add_test(edge, pages_that_do_not_compress_are_stored_until_data_compresses);
    tcase_add_test(edge, stored_frames_read_back);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_loop_test(faults, out_of_memory_fails_cleanly, 0, 160);
    tcase_set_timeout(faults, 120);
    suite_add_tcase(s, faults);
    return s;
}
