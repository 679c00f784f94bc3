/*
 * lib/parquet/rle.c: the RLE / bit-packing hybrid against hand-made bytes, round trips at
 * every bit width and run shape, and hostile input to the decoder.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/pq_int.h"
#include "support/support.h"

START_TEST(matches_hand_encoding)
{
    w2l_buf b = {0};
    w2l_error err;
    static const uint32_t v[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1};
    ck_assert_ok(w2l__rle_encode_u32(v, 12, 1, &b, &err), err);
    static const uint8_t want[] = {0x14, 0x01, 0x03, 0x02};
    ck_assert_uint_eq(b.len, sizeof want);
    ck_assert(memcmp(b.data, want, sizeof want) == 0);
    b.len = 0;
    uint8_t ones[100];
    memset(ones, 1, sizeof ones);
    ck_assert_ok(w2l__rle_encode_u8(ones, 100, 1, &b, &err), err);
    static const uint8_t want2[] = {0xc8, 0x01, 0x01};
    ck_assert_uint_eq(b.len, 3);
    ck_assert(memcmp(b.data, want2, 3) == 0);
    /* bit packing is LSB first: 8 values 0..7 at width 3 -> 0x88 0xc6 0xfa */
    static const uint32_t seq[] = {0, 1, 2, 3, 4, 5, 6, 7};
    uint8_t packed[3];
    w2l__bitpack_u32(seq, 8, 3, packed);
    ck_assert_uint_eq(packed[0], 0x88);
    ck_assert_uint_eq(packed[1], 0xc6);
    ck_assert_uint_eq(packed[2], 0xfa);
    w2l_buf_release(&b);
}
END_TEST

static void roundtrip(const uint32_t *v, size_t n, int w)
{
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__rle_encode_u32(v, n, w, &b, &err), err);
    uint32_t *out = malloc((n + 1) * sizeof *out);
    size_t used;
    uint32_t max = w == 32 ? UINT32_MAX : (1u << w) - 1;
    ck_assert_ok(w2l__rle_decode_u32(b.data, b.len, w, out, n, max, &used, &err), err);
    ck_assert_uint_eq(used, b.len);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(out[i] == v[i], "w %d value %zu: %u vs %u", w, i, out[i], v[i]);
    free(out);
    w2l_buf_release(&b);
}

START_TEST(roundtrips_every_width_and_shape)
{
    const size_t n = 5000;
    uint32_t *v = malloc(n * sizeof *v);
    uint64_t x = 7;
    for (int w = 0; w <= 32; w++) {
        uint32_t mask = w == 32 ? UINT32_MAX : (1u << w) - 1;
        for (int shape = 0; shape < 4; shape++) {
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                uint32_t r = (uint32_t)(x >> 32) & mask;
                switch (shape) {
                case 0: v[i] = r; break;                                /* literals */
                case 1: v[i] = (uint32_t)((i / 13) & mask); break;      /* runs of 13 */
                case 2:
                    v[i] = i % 11 < 3 ? r : (uint32_t)(7 & mask);
                    break;                                              /* runs after 3 literals */
                default: v[i] = (uint32_t)(i % 9 == 0) & mask; break;   /* sparse */
                }
            }
            for (size_t len = 0; len < 40; len++) roundtrip(v, len, w);
            roundtrip(v, n, w);
        }
    }
    free(v);
}
END_TEST

/* The byte encoder (definition levels; it finds runs eight bytes at a time) writes what
 * the uint32 encoder writes for the same values: runs of 1 to 40 of 0s and 1s, at every
 * offset and length up to 3000. */
START_TEST(byte_and_word_encoders_agree)
{
    enum { N = 3000 };
    static uint8_t a8[N];
    static uint32_t a32[N];
    uint64_t x = 11;
    for (size_t i = 0; i < N;) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t run = 1 + (size_t)(x >> 33) % 40;
        uint8_t v = (uint8_t)(x >> 20 & 1);
        for (size_t k = 0; k < run && i < N; k++, i++) a8[i] = v, a32[i] = v;
    }
    w2l_buf b8 = {0}, b32 = {0};
    w2l_error err;
    for (size_t off = 0; off < 24; off++)
        for (size_t len = 0; off + len <= N; len += len < 64 ? 1 : 97) {
            b8.len = b32.len = 0;
            ck_assert_ok(w2l__rle_encode_u8(a8 + off, len, 1, &b8, &err), err);
            ck_assert_ok(w2l__rle_encode_u32(a32 + off, len, 1, &b32, &err), err);
            ck_assert_msg(b8.len == b32.len && memcmp(b8.data, b32.data, b8.len) == 0,
                          "offset %zu, %zu values: %zu and %zu bytes", off, len, b8.len, b32.len);
        }
    w2l_buf_release(&b8);
    w2l_buf_release(&b32);
}
END_TEST

START_TEST(runs_lend_values_to_the_open_group)
{
    /* 3 literals then 20 equal values: 5 are lent to complete the group of 8, the rest
     * (15) is one RLE run */
    uint32_t v[23] = {1, 2, 3};
    for (int i = 3; i < 23; i++) v[i] = 5;
    w2l_buf b = {0};
    w2l_error err;
    ck_assert_ok(w2l__rle_encode_u32(v, 23, 3, &b, &err), err);
    ck_assert_uint_eq(b.len, 1 + 3 + 1 + 1);
    ck_assert_uint_eq(b.data[0], 0x03);
    ck_assert_uint_eq(b.data[4], 15 << 1);
    ck_assert_uint_eq(b.data[5], 5);
    w2l_buf_release(&b);
    roundtrip(v, 23, 3);
}
END_TEST

START_TEST(decoder_rejects_hostile_input)
{
    w2l_error err;
    uint32_t out[64];
    size_t used;
    /* runs end before the values do */
    static const uint8_t a[] = {0x04, 0x01};
    ck_assert_int_eq(w2l__rle_decode_u32(a, sizeof a, 1, out, 10, 1, &used, &err), W2L_CORRUPT);
    /* a bit-packed run longer than its bytes */
    static const uint8_t b[] = {0x07, 0xff};
    ck_assert_int_eq(w2l__rle_decode_u32(b, sizeof b, 8, out, 24, 255, &used, &err), W2L_CORRUPT);
    /* a value above the maximum (dictionary index out of range) */
    static const uint8_t c[] = {0x10, 0x09};
    ck_assert_int_eq(w2l__rle_decode_u32(c, sizeof c, 4, out, 8, 8, &used, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "above"));
    /* zero-length runs would loop forever */
    static const uint8_t d[] = {0x00, 0x01, 0x00, 0x01};
    ck_assert_int_eq(w2l__rle_decode_u32(d, sizeof d, 1, out, 4, 1, &used, &err), W2L_CORRUPT);
    static const uint8_t e[] = {0x01};
    ck_assert_int_eq(w2l__rle_decode_u32(e, sizeof e, 1, out, 4, 1, &used, &err), W2L_CORRUPT);
    /* an endless header varint, a bad width */
    static const uint8_t f[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ck_assert_int_eq(w2l__rle_decode_u32(f, sizeof f, 1, out, 4, 1, &used, &err), W2L_CORRUPT);
    ck_assert_int_eq(w2l__rle_decode_u32(a, sizeof a, 33, out, 1, 1, &used, &err), W2L_CORRUPT);
    /* a run value truncated */
    static const uint8_t g[] = {0x10, 0x01};
    ck_assert_int_eq(w2l__rle_decode_u32(g, sizeof g, 16, out, 8, 65535, &used, &err), W2L_CORRUPT);
}
END_TEST

Suite *suite_pq_rle(void)
{
    Suite *s = suite_create("pq_rle");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, matches_hand_encoding);
    tcase_add_test(basic, roundtrips_every_width_and_shape);
    tcase_add_test(basic, runs_lend_values_to_the_open_group);
    tcase_add_test(basic, byte_and_word_encoders_agree);
    tcase_set_timeout(basic, 60);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, decoder_rejects_hostile_input);
    suite_add_tcase(s, edge);
    return s;
}
