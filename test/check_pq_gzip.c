/*
 * lib/common/gzip.c, the GZIP page codec (Parquet codec 2) of the reader.
 * basic: gzip members built here by hand (stored DEFLATE blocks, CRC-32 computed here), a
 * DEFLATE-compressed vector, several members back to back, a zlib stream; each inflates to
 * exactly its bytes. faults: every way the data or the page header's size can be wrong gives
 * W2L_CORRUPT with "gzip" in the message; out-of-memory inside zlib gives W2L_NOMEM and leaks
 * nothing. golden: a data file Iceberg Java wrote with GZIP pages
 * (test/data/iceberg/icebird_java_bunnies) reads through w2l__pq_reader, and with any one
 * byte changed reads or fails with W2L_CORRUPT, never worse (ASan in `make check-asan`).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "parquet/pq_int.h"
#include "support/support.h"

/* "bunny bunny bunny hop, " x 6 + "carrot\n" (145 bytes), DEFLATE level 9 (Huffman codes
 * and back references), gzip-wrapped with mtime 0; and the same data zlib-wrapped. */
static const unsigned char gz_vec[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x2a, 0xcd, 0xcb, 0xab,
    0x54, 0x48, 0x42, 0x22, 0x33, 0xf2, 0x0b, 0x74, 0x50, 0x04, 0xe8, 0x24, 0x9c, 0x9c, 0x58,
    0x54, 0x94, 0x5f, 0xc2, 0x05, 0x00, 0x7f, 0xd9, 0x08, 0x67, 0x91, 0x00, 0x00, 0x00};
static const unsigned char zlib_vec[] = {
    0x78, 0xda, 0x4b, 0x2a, 0xcd, 0xcb, 0xab, 0x54, 0x48, 0x42, 0x22, 0x33, 0xf2, 0x0b, 0x74, 0x50,
    0x04, 0xe8, 0x24, 0x9c, 0x9c, 0x58, 0x54, 0x94, 0x5f, 0xc2, 0x05, 0x00, 0x5c, 0x85, 0x35, 0x60};

static void vec_plain(unsigned char *out) /* 145 bytes */
{
    size_t o = 0;
    for (int i = 0; i < 6; i++, o += 23) memcpy(out + o, "bunny bunny bunny hop, ", 23);
    memcpy(out + o, "carrot\n", 7);
}

/* CRC-32 of RFC 1952 (reflected, polynomial 0xedb88320), bit by bit. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void put(w2l_buf *b, const void *p, size_t n)
{
    w2l_error err;
    ck_assert_ok(w2l__pq_put(b, p, n, &err), err);
}

/* Appends one gzip member holding data in stored DEFLATE blocks (at most 65535 bytes each):
 * 10-byte header, per block 1 byte BFINAL/BTYPE=00 + LEN + NLEN + bytes, CRC-32, ISIZE. */
static void gz_member(w2l_buf *b, const unsigned char *data, size_t n)
{
    static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    put(b, hdr, sizeof hdr);
    size_t o = 0;
    do {
        size_t k = n - o > 65535 ? 65535 : n - o;
        unsigned char bh[5] = {o + k == n, (unsigned char)k, (unsigned char)(k >> 8),
                               (unsigned char)~k, (unsigned char)(~k >> 8)};
        put(b, bh, sizeof bh);
        put(b, data + o, k);
        o += k;
    } while (o < n);
    unsigned char t[8];
    w2l__le32(t, crc32_of(data, n));
    w2l__le32(t + 4, (uint32_t)n);
    put(b, t, sizeof t);
}

static unsigned char *pattern(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + (i >> 9));
    return p;
}

static w2l_rc inflate_to(const w2l_buf *b, size_t n, unsigned char **out, size_t dst_len,
                         w2l_error *err)
{
    *out = malloc(dst_len ? dst_len : 1);
    return w2l__gzip_decompress(b->data, n, *out, dst_len, err);
}

START_TEST(stored_members_round_trip)
{
    static const size_t sizes[] = {0, 1, 100, 65535, 65536, 200000};
    for (size_t s = 0; s < W2L_ARRAY_LEN(sizes); s++) {
        size_t n = sizes[s];
        unsigned char *src = pattern(n), *got;
        w2l_buf b = {0};
        gz_member(&b, src, n);
        w2l_error err;
        ck_assert_ok(inflate_to(&b, b.len, &got, n, &err), err);
        ck_assert(n == 0 || memcmp(got, src, n) == 0);
        free(got);
        free(src);
        w2l_buf_release(&b);
    }
}
END_TEST

START_TEST(deflated_vector_gzip_and_zlib)
{
    unsigned char want[145], got[145];
    vec_plain(want);
    w2l_error err;
    memset(got, 0, sizeof got);
    ck_assert_ok(w2l__gzip_decompress(gz_vec, sizeof gz_vec, got, sizeof got, &err), err);
    ck_assert(memcmp(got, want, sizeof want) == 0);
    memset(got, 0, sizeof got);
    ck_assert_ok(w2l__gzip_decompress(zlib_vec, sizeof zlib_vec, got, sizeof got, &err), err);
    ck_assert(memcmp(got, want, sizeof want) == 0);
}
END_TEST

/* RFC 1952: a gzip stream is a series of members; the output is their concatenation. */
START_TEST(members_back_to_back)
{
    unsigned char *src = pattern(3000), *got;
    w2l_buf b = {0};
    gz_member(&b, src, 1000);
    put(&b, gz_vec, sizeof gz_vec);
    gz_member(&b, src + 1000, 0);
    gz_member(&b, src + 1000, 2000);
    w2l_error err;
    ck_assert_ok(inflate_to(&b, b.len, &got, 3145, &err), err);
    unsigned char v[145];
    vec_plain(v);
    ck_assert(memcmp(got, src, 1000) == 0);
    ck_assert(memcmp(got + 1000, v, 145) == 0);
    ck_assert(memcmp(got + 1145, src + 1000, 2000) == 0);
    free(got);
    free(src);
    w2l_buf_release(&b);
}
END_TEST

static void expect_corrupt(const w2l_buf *b, size_t n, size_t dst_len, const char *what,
                           const char *needle)
{
    w2l_error err;
    unsigned char *got;
    w2l_rc rc = inflate_to(b, n, &got, dst_len, &err);
    free(got);
    ck_assert_msg(rc == W2L_CORRUPT, "%s: %s %s", what, w2l_rc_name(rc), rc ? err.msg : "");
    ck_assert_msg(strncmp(err.msg, "gzip: ", 6) == 0, "%s: %s", what, err.msg);
    if (needle) ck_assert_msg(strstr(err.msg, needle) != NULL, "%s: %s", what, err.msg);
}

START_TEST(sizes_must_match_the_page_header)
{
    unsigned char *src = pattern(5000);
    w2l_buf b = {0};
    gz_member(&b, src, 5000);
    expect_corrupt(&b, b.len, 4999, "one byte short", "longer than the 4999 bytes");
    expect_corrupt(&b, b.len, 0, "no room at all", "longer than");
    expect_corrupt(&b, b.len, 5001, "one byte over", "5000 bytes, header says 5001");
    b.len = 0;
    gz_member(&b, src, 0);
    expect_corrupt(&b, b.len, 1, "empty member, one expected", "0 bytes, header says 1");
    expect_corrupt(&b, 0, 0, "empty body", "empty input");
    free(src);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(damaged_streams)
{
    unsigned char *src = pattern(700);
    w2l_buf b = {0};
    gz_member(&b, src, 700);
    const size_t n = b.len;
    unsigned char *keep = malloc(n);
    memcpy(keep, b.data, n);
#define RESET() memcpy(b.data, keep, n)
    b.data[n - 8] ^= 1;
    expect_corrupt(&b, n, 700, "CRC", "check");
    RESET();
    b.data[n - 4] ^= 1;
    expect_corrupt(&b, n, 700, "ISIZE", "length");
    RESET();
    b.data[0] = 0x1e;
    expect_corrupt(&b, n, 700, "magic", NULL);
    RESET();
    b.data[2] = 7;
    expect_corrupt(&b, n, 700, "method", NULL);
    RESET();
    b.data[10] = 0x07; /* BTYPE 11: reserved */
    expect_corrupt(&b, n, 700, "block type", "block type");
    RESET();
    b.data[13] ^= 0xff; /* NLEN no longer ~LEN */
    expect_corrupt(&b, n, 700, "stored length", NULL);
    RESET();
    for (size_t k = 1; k < n; k++) expect_corrupt(&b, k, 700, "truncated", NULL);
    put(&b, "\0", 1);
    expect_corrupt(&b, b.len, 700, "a trailing zero", "1 bytes after the end");
    b.len = n;
    put(&b, "\x1f\x8b", 2);
    expect_corrupt(&b, b.len, 700, "a second member's magic only", "ends early");
#undef RESET
    /* every bit of the compressed vector flipped: its Huffman data, CRC and length. Bits
     * that carry nothing (FTEXT, the padding after the last block) may read, but only to
     * the same bytes. mtime, extra flags and OS (bytes 4..9) are not checked by design. */
    w2l_buf v = {0};
    put(&v, gz_vec, sizeof gz_vec);
    unsigned char want[145];
    vec_plain(want);
    int unnoticed = 0;
    for (size_t i = 0; i < sizeof gz_vec; i++) {
        if (i >= 4 && i < 10) continue;
        for (unsigned x = 1; x < 256; x <<= 1) {
            memcpy(v.data, gz_vec, sizeof gz_vec);
            v.data[i] ^= (unsigned char)x;
            w2l_error err;
            unsigned char got[145];
            w2l_rc rc = w2l__gzip_decompress(v.data, v.len, got, sizeof got, &err);
            if (rc == W2L_OK && memcmp(got, want, sizeof want) == 0) {
                unnoticed++;
                continue;
            }
            ck_assert_msg(rc == W2L_CORRUPT, "byte %zu ^ %u: %s", i, x, w2l_rc_name(rc));
        }
    }
    ck_assert_int_le(unnoticed, 8);
    w2l_buf_release(&v);
    free(keep);
    free(src);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(out_of_memory_in_zlib)
{
    fail_alloc_install();
    unsigned char got[145];
    for (long nth = 0;; nth++) {
        long before = fail_alloc_outstanding();
        w2l_error err;
        fail_alloc_arm(nth);
        w2l_rc rc = w2l__gzip_decompress(gz_vec, sizeof gz_vec, got, sizeof got, &err);
        fail_alloc_arm(-1);
        ck_assert_msg(rc == W2L_OK || rc == W2L_NOMEM, "nth %ld: %s", nth, w2l_rc_name(rc));
        ck_assert_int_eq(fail_alloc_outstanding(), before);
        if (rc == W2L_OK) {
            ck_assert_int_gt(nth, 0); /* zlib did allocate through the hook */
            break;
        }
        ck_assert_int_lt(nth, 100);
    }
}
END_TEST

/* ---- golden: a GZIP data file of Iceberg Java ---- */

static const char *golden_path(void)
{
    static char path[1200];
    const char *src = getenv("W2L_SRCDIR");
    snprintf(path, sizeof path,
             "%s/test/data/iceberg/icebird_java_bunnies/data/bunnies-initial.parquet",
             src && *src ? src : ".");
    return path;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Reads every row group of the file held in io at "g.parquet"; *nrows counts the rows and
 * *hit says whether a string value equal to find appeared. */
static w2l_rc read_file(w2l_fileio *io, const char *find, uint64_t *nrows, int *hit,
                        w2l_error *err)
{
    w2l__pq_reader *r;
    W2L_TRY(w2l__pq_reader_open(io, "g.parquet", &r, err));
    const w2l_schema *s = w2l__pq_reader_schema(r);
    const size_t nf = w2l_schema_field_count(s);
    w2l_rc rc = W2L_OK;
    *nrows = 0, *hit = 0;
    for (size_t g = 0; g < w2l__pq_reader_num_row_groups(r) && rc == W2L_OK; g++) {
        const w2l_value *rows;
        rc = w2l__pq_reader_read_row_group(r, g, &rows, err);
        if (rc != W2L_OK) break;
        const size_t n = (size_t)w2l__pq_reader_row_group_rows(r, g);
        for (size_t i = 0; i < n * nf; i++) {
            const w2l_value *v = &rows[i];
            if (w2l_schema_field(s, i % nf)->type.id == W2L_TYPE_STRING && !v->is_null &&
                v->v.bytes.len == strlen(find) && memcmp(v->v.bytes.ptr, find, v->v.bytes.len) == 0)
                *hit = 1;
        }
        *nrows += n;
    }
    w2l__pq_reader_close(r);
    return rc;
}

START_TEST(java_gzip_file_reads)
{
    size_t len;
    unsigned char *file = slurp(golden_path(), &len);
    w2l_error err;
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    ck_assert_ok(w2l_fileio_write_all(io, "g.parquet", W2L_CREATE_REPLACE, file, len, &err), err);
    w2l__pq_reader *r;
    ck_assert_ok(w2l__pq_reader_open(io, "g.parquet", &r, &err), err);
    size_t ncols = w2l_schema_field_count(w2l__pq_reader_schema(r)), gz = 0;
    for (size_t g = 0; g < w2l__pq_reader_num_row_groups(r); g++)
        for (size_t c = 0; c < ncols; c++)
            gz += w2l__pq_reader_chunk(r, g, c)->codec == W2L_PQ_GZIP;
    ck_assert_uint_eq(gz, w2l__pq_reader_num_row_groups(r) * ncols); /* every chunk GZIP */
    ck_assert_uint_gt(gz, 0);
    uint64_t total = w2l__pq_reader_num_rows(r);
    w2l__pq_reader_close(r);
    uint64_t nrows;
    int hit;
    ck_assert_ok(read_file(io, "Holland Lop", &nrows, &hit, &err), err);
    ck_assert_uint_eq(nrows, total);
    ck_assert_uint_eq(nrows, 21);
    ck_assert(hit);
    w2l_fileio_close(io);
    free(file);
}
END_TEST

START_TEST(java_gzip_file_every_byte_changed)
{
    size_t len;
    unsigned char *file = slurp(golden_path(), &len), *b = malloc(len);
    w2l_fileio *io;
    w2l_error err;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    for (size_t i = 0; i < len; i++) {
        memcpy(b, file, len);
        b[i] ^= (unsigned char)(0x55 + i);
        ck_assert_ok(w2l_fileio_write_all(io, "g.parquet", W2L_CREATE_REPLACE, b, len, &err), err);
        uint64_t nrows;
        int hit;
        w2l_rc rc = read_file(io, "Holland Lop", &nrows, &hit, &err);
        ck_assert_msg(rc == W2L_OK || rc == W2L_CORRUPT, "byte %zu: %s %s", i, w2l_rc_name(rc),
                      err.msg);
    }
    w2l_fileio_close(io);
    free(b);
    free(file);
}
END_TEST

Suite *suite_pq_gzip(void)
{
    Suite *s = suite_create("pq_gzip");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, stored_members_round_trip);
    tcase_add_test(basic, deflated_vector_gzip_and_zlib);
    tcase_add_test(basic, members_back_to_back);
    suite_add_tcase(s, basic);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, sizes_must_match_the_page_header);
    tcase_add_test(faults, damaged_streams);
    tcase_add_test(faults, out_of_memory_in_zlib);
    suite_add_tcase(s, faults);
    TCase *golden = tcase_create("golden");
    tcase_set_timeout(golden, 60);
    tcase_add_test(golden, java_gzip_file_reads);
    tcase_add_test(golden, java_gzip_file_every_byte_changed);
    suite_add_tcase(s, golden);
    return s;
}
