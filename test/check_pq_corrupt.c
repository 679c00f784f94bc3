/*
 * lib/parquet/pq_reader.c on malformed files: wrong magic, lying footer length, every
 * truncation, every single-byte change, random multi-byte damage and page headers whose
 * sizes lie. Each must give W2L_OK (damage the format cannot notice, such as a changed
 * value byte) or W2L_CORRUPT with a message, never a crash or an out-of-bounds access;
 * `make check-asan` runs this suite under AddressSanitizer and UBSan.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "gen/pq_cases.h"
#include "parquet/pq_int.h"
#include "support/support.h"

static w2l_fileio *io;
static unsigned char *good[2];
static size_t good_len[2];

/* Writes case k of pq_cases into memory: 0 = every type, dictionary + zstd; 1 = every type,
 * PLAIN, uncompressed. */
static void setup(void)
{
    w2l_error err;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    static pq_case cases[16];
    size_t n = pqc_build_all(cases);
    for (int k = 0; k < 2; k++) {
        pq_case *c = &cases[k];
        c->opt.page_rows = 16; /* several pages per chunk */
        w2l__pq_writer *w;
        ck_assert_ok(w2l__pq_writer_open(io, c->name, 0, c->schema, &c->opt, NULL, 0, &w, &err),
                     err);
        ck_assert_ok(w2l__pq_write_rows(w, c->rows, c->nrows, &err), err);
        ck_assert_ok(w2l__pq_writer_close(w, NULL, &err), err);
        void *data;
        ck_assert_ok(w2l_fileio_read_all(io, c->name, &data, &good_len[k], &err), err);
        good[k] = data;
    }
    for (size_t k = n; k-- > 0;) pqc_free(&cases[k]);
}

static void teardown(void)
{
    for (int k = 0; k < 2; k++) w2l_free(good[k]);
    w2l_fileio_close(io);
}

/* Opens and reads everything; returns the first failure. */
static w2l_rc read_all(const unsigned char *p, size_t n, w2l_error *err)
{
    static const unsigned char none[1];
    w2l_rc rc = w2l_fileio_write_all(io, "m.parquet", W2L_CREATE_REPLACE, n ? p : none, n, err);
    ck_assert_int_eq(rc, W2L_OK);
    w2l__pq_reader *r;
    rc = w2l__pq_reader_open(io, "m.parquet", &r, err);
    if (rc != W2L_OK) return rc;
    for (size_t g = 0; g < w2l__pq_reader_num_row_groups(r) && rc == W2L_OK; g++) {
        const w2l_value *rows;
        rc = w2l__pq_reader_read_row_group(r, g, &rows, err);
        if (rc == W2L_OK) {
            /* touch every byte handed out */
            size_t nv = (size_t)w2l__pq_reader_row_group_rows(r, g) *
                        w2l_schema_field_count(w2l__pq_reader_schema(r));
            unsigned sum = 0;
            for (size_t i = 0; i < nv; i++) {
                const w2l_field *f = w2l_schema_field(
                    w2l__pq_reader_schema(r), i % w2l_schema_field_count(w2l__pq_reader_schema(r)));
                if (!rows[i].is_null &&
                    (f->type.id == W2L_TYPE_STRING || f->type.id == W2L_TYPE_BINARY))
                    for (size_t b = 0; b < rows[i].v.bytes.len; b++)
                        sum += (unsigned char)rows[i].v.bytes.ptr[b];
            }
            (void)sum;
        }
    }
    w2l__pq_reader_close(r);
    return rc;
}

static void expect_corrupt_or_ok(const unsigned char *p, size_t n, const char *what, size_t at)
{
    w2l_error err;
    w2l_rc rc = read_all(p, n, &err);
    ck_assert_msg(rc == W2L_OK || rc == W2L_CORRUPT, "%s at %zu: %s %s", what, at, w2l_rc_name(rc),
                  err.msg);
    if (rc == W2L_CORRUPT)
        ck_assert_msg(strstr(err.msg, "m.parquet") != NULL, "message names the file: %s", err.msg);
}

START_TEST(good_files_read)
{
    w2l_error err;
    for (int k = 0; k < 2; k++) ck_assert_ok(read_all(good[k], good_len[k], &err), err);
}
END_TEST

START_TEST(bad_magic_and_footer_length)
{
    w2l_error err;
    unsigned char *b = malloc(good_len[0]);
    size_t n = good_len[0];
    memcpy(b, good[0], n);
    b[0] = 'X';
    ck_assert_int_eq(read_all(b, n, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "magic"));
    memcpy(b, good[0], n);
    b[n - 1] = 'X';
    ck_assert_int_eq(read_all(b, n, &err), W2L_CORRUPT);
    memcpy(b, good[0], n);
    b[n - 8] = 0xff, b[n - 7] = 0xff, b[n - 6] = 0xff, b[n - 5] = 0x7f;
    ck_assert_int_eq(read_all(b, n, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "footer length"));
    memcpy(b, good[0], n);
    b[n - 8] = 3, b[n - 7] = b[n - 6] = b[n - 5] = 0; /* a footer of 3 bytes */
    ck_assert_int_eq(read_all(b, n, &err), W2L_CORRUPT);
    ck_assert_int_eq(read_all(b, 11, &err), W2L_CORRUPT);
    free(b);
}
END_TEST

START_TEST(every_truncation)
{
    int k = _i;
    /* from 1: the "mem" file IO cannot yet open an empty file cleanly */
    for (size_t n = 1; n < good_len[k]; n++) {
        w2l_error err;
        w2l_rc rc = read_all(good[k], n, &err);
        ck_assert_msg(rc == W2L_CORRUPT, "truncated to %zu: %s", n, w2l_rc_name(rc));
    }
}
END_TEST

START_TEST(every_byte_flipped)
{
    int k = _i;
    unsigned char *b = malloc(good_len[k]);
    for (size_t i = 0; i < good_len[k]; i++) {
        memcpy(b, good[k], good_len[k]);
        b[i] ^= (unsigned char)(0x55 + i);
        expect_corrupt_or_ok(b, good_len[k], "flip", i);
    }
    free(b);
}
END_TEST

START_TEST(random_damage)
{
    int k = _i;
    unsigned char *b = malloc(good_len[k]);
    uint64_t x = 12345;
    for (int round = 0; round < 3000; round++) {
        memcpy(b, good[k], good_len[k]);
        int hits = 1 + round % 8;
        for (int h = 0; h < hits; h++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(x >> 33) % good_len[k];
            static const unsigned char nasty[] = {0x00, 0xff, 0x7f, 0x80, 0x15, 0x19, 0x1c, 0xf8};
            b[at] = (x >> 20) & 1 ? nasty[(x >> 24) % 8] : (unsigned char)(x >> 40);
        }
        expect_corrupt_or_ok(b, good_len[k], "random round", (size_t)round);
    }
    free(b);
}
END_TEST

/* First page header of the first column chunk: right after "PAR1". */
START_TEST(page_header_sizes_lie)
{
    int k = _i;
    w2l__pq_page_header h;
    size_t used;
    w2l_error err;
    ck_assert_ok(w2l__pq_page_header_read(good[k] + 4, good_len[k] - 4, &h, &used, &err), err);
    const int32_t lies[][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1 << 30, 0}, {0, 1 << 30},
                               {INT32_MAX, INT32_MAX}, {3, 7}};
    for (size_t l = 0; l < W2L_ARRAY_LEN(lies); l++) {
        w2l__pq_page_header bad = h;
        int64_t u = (int64_t)bad.uncompressed_size + lies[l][0];
        int64_t c = (int64_t)bad.compressed_size + lies[l][1];
        bad.uncompressed_size = u > INT32_MAX ? INT32_MAX : (int32_t)u;
        bad.compressed_size = c > INT32_MAX ? INT32_MAX : (int32_t)c;
        if (lies[l][0] == INT32_MAX) bad.uncompressed_size = bad.compressed_size = INT32_MAX;
        if (lies[l][0] == 3) bad.num_values += 1000;
        w2l_buf hb = {0};
        ck_assert_ok(w2l__pq_page_header_write(&bad, &hb, &err), err);
        /* splice the new header in place of the old one */
        size_t n = good_len[k] - used + hb.len;
        unsigned char *b = malloc(n);
        memcpy(b, good[k], 4);
        memcpy(b + 4, hb.data, hb.len);
        memcpy(b + 4 + hb.len, good[k] + 4 + used, good_len[k] - 4 - used);
        w2l_rc rc = read_all(b, n, &err);
        ck_assert_msg(rc == W2L_CORRUPT, "lie %zu: %s", l, w2l_rc_name(rc));
        ck_assert_msg(strstr(err.msg, "row group 0") != NULL, "lie %zu: %s", l, err.msg);
        free(b);
        w2l_buf_release(&hb);
    }
}
END_TEST

Suite *suite_pq_corrupt(void)
{
    Suite *s = suite_create("pq_corrupt");
    TCase *basic = tcase_create("basic");
    tcase_add_checked_fixture(basic, setup, teardown);
    tcase_add_test(basic, good_files_read);
    tcase_add_test(basic, bad_magic_and_footer_length);
    suite_add_tcase(s, basic);
    TCase *faults = tcase_create("faults");
    tcase_add_checked_fixture(faults, setup, teardown);
    tcase_add_loop_test(faults, every_truncation, 0, 2);
    tcase_add_loop_test(faults, every_byte_flipped, 0, 2);
    tcase_add_loop_test(faults, random_damage, 0, 2);
    tcase_add_loop_test(faults, page_header_sizes_lie, 0, 2);
    tcase_set_timeout(faults, 300);
    suite_add_tcase(s, faults);
    return s;
}
