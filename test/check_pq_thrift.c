/*
 * lib/parquet/thrift_compact.c and page.c: the Thrift compact protocol writer against
 * bytes worked out by hand from the specification, the bounded reader on good and hostile
 * input, and page headers.
 */
#include <check.h>
#include <string.h>

#include "parquet/pq_int.h"
#include "support/support.h"

static void assert_bytes(const w2l_buf *b, const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(b->len, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(b->data[i] == want[i], "byte %zu: %02x, want %02x", i, b->data[i], want[i]);
}

START_TEST(writer_matches_hand_encoding)
{
    /* struct { 1: i32 = 3, 2: binary = "ab", 4: bool = true } */
    w2l_buf b = {0};
    w2l_error err;
    w2l__tc_writer w;
    w2l__tc_writer_init(&w, &b, &err);
    w2l__tc_struct_begin(&w);
    w2l__tc_field_i32(&w, 1, 3);
    w2l__tc_field_binary(&w, 2, "ab", 2);
    w2l__tc_field_bool(&w, 4, 1);
    w2l__tc_struct_end(&w);
    ck_assert_ok(w.rc, err);
    static const uint8_t want[] = {0x15, 0x06, 0x18, 0x02, 'a', 'b', 0x21, 0x00};
    assert_bytes(&b, want, sizeof want);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(writer_long_form_ids_lists_and_negatives)
{
    w2l_buf b = {0};
    w2l_error err;
    w2l__tc_writer w;
    w2l__tc_writer_init(&w, &b, &err);
    w2l__tc_struct_begin(&w);
    w2l__tc_field_i64(&w, 20, -1);      /* delta 20 > 15: long form, id zigzag 40 */
    w2l__tc_field_i32(&w, 3, -2);       /* going back: long form */
    w2l__tc_field_list(&w, 4, TC_I32, 2);
    w2l__tc_i32(&w, 64);
    w2l__tc_i32(&w, -65);
    w2l__tc_field_list(&w, 5, TC_BINARY, 15); /* 15 elements: size in a varint */
    for (int i = 0; i < 15; i++) w2l__tc_binary(&w, "", 0);
    w2l__tc_field_struct(&w, 6);
    w2l__tc_struct_end(&w);
    w2l__tc_struct_end(&w);
    ck_assert_ok(w.rc, err);
    uint8_t want[64];
    size_t n = 0;
    uint8_t head[] = {0x06, 40, 0x01, 0x05, 0x06, 0x03, 0x19, 0x25, 0x80, 0x01, 0x81, 0x01,
                      0x19, 0xF8, 0x0F};
    memcpy(want, head, sizeof head);
    n = sizeof head;
    for (int i = 0; i < 15; i++) want[n++] = 0;
    want[n++] = 0x1C; /* struct field 6 */
    want[n++] = 0x00;
    want[n++] = 0x00;
    assert_bytes(&b, want, n);

    /* and the reader gets it all back */
    w2l__tc_reader r;
    w2l__tc_reader_init(&r, b.data, b.len, "test", &err);
    int16_t last = 0, id;
    int t, et;
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_int_eq(id, 20);
    ck_assert_int_eq(w2l__tc_read_int(&r, t), -1);
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_int_eq(id, 3);
    ck_assert_int_eq(w2l__tc_read_int(&r, t), -2);
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_uint_eq(w2l__tc_read_list(&r, &et), 2);
    ck_assert_int_eq(w2l__tc_read_int(&r, et), 64);
    ck_assert_int_eq(w2l__tc_read_int(&r, et), -65);
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    w2l__tc_skip(&r, t);
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_int_eq(t, TC_STRUCT);
    w2l__tc_skip(&r, t);
    ck_assert(!w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_ok(r.rc, err);
    ck_assert(r.p == r.end);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(page_header_matches_hand_encoding)
{
    w2l_buf b = {0};
    w2l_error err;
    w2l__pq_page_header h = {0};
    h.type = PQ_PAGE_DICTIONARY;
    h.uncompressed_size = h.compressed_size = 12;
    h.num_values = 2;
    h.encoding = PQ_ENC_PLAIN;
    ck_assert_ok(w2l__pq_page_header_write(&h, &b, &err), err);
    static const uint8_t want[] = { 0x15, 0x04, 0x15, 0x18, 0x15, 0x18, 0x4c,
                                    0x15, 0x04, 0x15, 0x00, 0x00, 0x00 };
    assert_bytes(&b, want, sizeof want);
    w2l__pq_page_header g;
    size_t used;
    ck_assert_ok(w2l__pq_page_header_read(b.data, b.len, &g, &used, &err), err);
    ck_assert_uint_eq(used, sizeof want);
    ck_assert_int_eq(g.type, PQ_PAGE_DICTIONARY);
    ck_assert_int_eq(g.num_values, 2);
    ck_assert_int_eq(g.compressed_size, 12);
    /* every truncation is W2L_CORRUPT */
    for (size_t n = 0; n < b.len; n++)
        ck_assert_int_eq(w2l__pq_page_header_read(b.data, n, &g, &used, &err), W2L_CORRUPT);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(reader_rejects_hostile_input)
{
    w2l_error err;
    w2l__tc_reader r;
    int16_t last = 0, id;
    int t, et;
    size_t n;
    /* a varint that never ends */
    static const uint8_t v1[] = { 0x15, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    w2l__tc_reader_init(&r, v1, sizeof v1, "t", &err);
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    (void)w2l__tc_read_int(&r, t);
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "varint"));
    /* a binary longer than the buffer */
    static const uint8_t v2[] = {0x18, 0x7f, 'a'};
    w2l__tc_reader_init(&r, v2, sizeof v2, "t", &err);
    last = 0;
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_ptr_null(w2l__tc_read_binary(&r, &n));
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
    /* a list claiming more elements than bytes */
    static const uint8_t v3[] = {0x19, 0xF5, 0xff, 0xff, 0x03, 0x02};
    w2l__tc_reader_init(&r, v3, sizeof v3, "t", &err);
    last = 0;
    ck_assert(w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_uint_eq(w2l__tc_read_list(&r, &et), 0);
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
    /* nesting deeper than the limit */
    uint8_t deep[200];
    for (size_t i = 0; i < sizeof deep; i++) deep[i] = 0x1C;
    w2l__tc_reader_init(&r, deep, sizeof deep, "t", &err);
    w2l__tc_skip(&r, TC_STRUCT);
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "nesting"));
    /* an unknown type nibble */
    static const uint8_t v4[] = {0x1E};
    w2l__tc_reader_init(&r, v4, sizeof v4, "t", &err);
    last = 0;
    ck_assert(!w2l__tc_next_field(&r, &last, &t, &id));
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
    /* a struct without its stop byte */
    static const uint8_t v5[] = {0x15, 0x02};
    w2l__tc_reader_init(&r, v5, sizeof v5, "t", &err);
    w2l__tc_skip(&r, TC_STRUCT);
    ck_assert_int_eq(r.rc, W2L_CORRUPT);
}
END_TEST

Suite *suite_pq_thrift(void)
{
    Suite *s = suite_create("pq_thrift");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, writer_matches_hand_encoding);
    tcase_add_test(basic, writer_long_form_ids_lists_and_negatives);
    tcase_add_test(basic, page_header_matches_hand_encoding);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, reader_rejects_hostile_input);
    suite_add_tcase(s, edge);
    return s;
}
