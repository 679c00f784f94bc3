/*
 * lib/parquet/dict.c: the column-chunk dictionary (dedupe, first-seen order, the PLAIN
 * page body it keeps, growth, reset).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "parquet/pq_int.h"
#include "support/support.h"

START_TEST(byte_arrays_dedupe_in_first_seen_order)
{
    w2l__pq_dict d;
    w2l_error err;
    w2l__pq_dict_init(&d, 0);
    const char *v[] = {"paid", "", "paid", "shipped", "", "paid"};
    uint32_t want[] = {0, 1, 0, 2, 1, 0};
    int want_added[] = {1, 1, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++) {
        uint32_t idx;
        int added;
        ck_assert_ok(w2l__pq_dict_put(&d, v[i], strlen(v[i]), &idx, &added, &err), err);
        ck_assert_uint_eq(idx, want[i]);
        ck_assert_int_eq(added, want_added[i]);
    }
    ck_assert_uint_eq(d.count, 3);
    static const uint8_t body[] = {4, 0, 0, 0, 'p', 'a', 'i', 'd', 0, 0, 0, 0,
                                   7, 0, 0, 0, 's', 'h', 'i', 'p', 'p', 'e', 'd'};
    ck_assert_uint_eq(w2l__pq_dict_bytes(&d), sizeof body);
    ck_assert(memcmp(d.vals.data, body, sizeof body) == 0);
    size_t len;
    const uint8_t *p = w2l__pq_dict_get(&d, 2, &len);
    ck_assert_uint_eq(len, 7);
    ck_assert(memcmp(p, "shipped", 7) == 0);
    w2l__pq_dict_reset(&d);
    ck_assert_uint_eq(d.count, 0);
    uint32_t idx;
    int added;
    ck_assert_ok(w2l__pq_dict_put(&d, "x", 1, &idx, &added, &err), err);
    ck_assert_uint_eq(idx, 0);
    ck_assert_int_eq(added, 1);
    w2l__pq_dict_free(&d);
}
END_TEST

START_TEST(fixed_width_grows_past_many_rehashes)
{
    w2l_error err;
    for (int width = 4; width <= 16; width += 4) {
        if (width == 12) continue;
        w2l__pq_dict d;
        w2l__pq_dict_init(&d, width);
        for (int round = 0; round < 2; round++) {
            for (uint32_t i = 0; i < 100000; i++) {
                uint8_t key[16] = {0};
                uint64_t k = (uint64_t)i * 2654435761u;
                memcpy(key, &k, 8);
                uint32_t idx;
                int added;
                ck_assert_ok(w2l__pq_dict_put(&d, key, (size_t)width, &idx, &added, &err), err);
                ck_assert_uint_eq(idx, i);
                ck_assert_int_eq(added, round == 0);
            }
        }
        ck_assert_uint_eq(d.count, 100000);
        ck_assert_uint_eq(w2l__pq_dict_bytes(&d), 100000u * (unsigned)width);
        /* the inline lookup of the append loops finds what put holds, and only that */
        for (uint32_t i = 0; width <= 8 && i < 200000; i++) {
            uint64_t k = (uint64_t)i * 2654435761u;
            if (width == 4) k = (uint32_t)k;
            uint32_t idx = UINT32_MAX;
            int found = w2l__pq_dict_find_fixed(&d, k, &idx);
            ck_assert_int_eq(found, i < 100000);
            if (found) ck_assert_uint_eq(idx, i);
        }
        w2l__pq_dict_free(&d);
    }
}
END_TEST

START_TEST(many_strings_and_hash_collisions_stay_exact)
{
    w2l__pq_dict d;
    w2l_error err;
    w2l__pq_dict_init(&d, 0);
    char buf[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 50000; i++) {
            int n = snprintf(buf, sizeof buf, "k%d", i);
            uint32_t idx;
            int added;
            ck_assert_ok(w2l__pq_dict_put(&d, buf, (size_t)n, &idx, &added, &err), err);
            ck_assert_uint_eq(idx, (uint32_t)i);
        }
    /* prefixes of each other are different values */
    uint32_t a, b;
    int added;
    ck_assert_ok(w2l__pq_dict_put(&d, "k1", 2, &a, &added, &err), err);
    ck_assert_ok(w2l__pq_dict_put(&d, "k1\0", 3, &b, &added, &err), err);
    ck_assert_uint_ne(a, b);
    ck_assert_int_eq(added, 1);
    /* the inline lookup of the append loop finds what put holds, and only that */
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof buf, "k%d", i);
        uint32_t idx = UINT32_MAX;
        int found = w2l__pq_dict_find_bytes(&d, buf, (size_t)n, &idx);
        ck_assert_int_eq(found, i < 50000);
        if (found) ck_assert_uint_eq(idx, (uint32_t)i);
    }
    ck_assert(w2l__pq_dict_find_bytes(&d, "k1\0", 3, &a) && a == b);
    ck_assert(!w2l__pq_dict_find_bytes(&d, "", 0, &a));
    ck_assert_ok(w2l__pq_dict_put(&d, "", 0, &b, &added, &err), err);
    ck_assert(w2l__pq_dict_find_bytes(&d, "", 0, &a) && a == b);
    w2l__pq_dict_free(&d);
}
END_TEST

/* A dictionary starts small, and one that held far more values in an earlier chunk than in
 * the last gives its memory back at the reset (thousands of open tables must not keep
 * their peak); it stays exact across the release. */
START_TEST(small_chunks_release_a_big_dictionary)
{
    w2l__pq_dict d;
    w2l_error err;
    w2l__pq_dict_init(&d, 0);
    uint32_t idx;
    int added;
    char v[32];
    ck_assert_ok(w2l__pq_dict_put(&d, "a", 1, &idx, &added, &err), err);
    ck_assert_uint_le(d.nslots, 16);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) { /* a busy chunk */
            int n = snprintf(v, sizeof v, "value %d", i);
            ck_assert_ok(w2l__pq_dict_put(&d, v, (size_t)n, &idx, &added, &err), err);
            ck_assert_uint_eq(idx, (uint32_t)i + (round == 0));
        }
        size_t big = d.nslots;
        ck_assert_uint_ge(big, 40000);
        w2l__pq_dict_reset(&d); /* full last chunk: kept */
        ck_assert_uint_eq(d.nslots, big);
        /* kept, but nothing of the last chunk is found any more (the reset clears the
         * slots lazily, at the next put) */
        uint32_t old_idx;
        ck_assert(!w2l__pq_dict_find_bytes(&d, "value 7", 7, &old_idx));
        ck_assert_ok(w2l__pq_dict_put(&d, "value 7", 7, &idx, &added, &err), err);
        ck_assert_int_eq(added, 1);
        ck_assert_uint_eq(idx, 0);
        ck_assert(!w2l__pq_dict_find_bytes(&d, "value 8", 7, &old_idx));
        ck_assert(w2l__pq_dict_find_bytes(&d, "value 7", 7, &old_idx) && old_idx == 0);
        ck_assert_ok(w2l__pq_dict_put(&d, "x", 1, &idx, &added, &err), err);
        w2l__pq_dict_reset(&d); /* a chunk of one value: released */
        ck_assert_uint_eq(d.nslots, 0);
        ck_assert_uint_eq(d.offs_cap, 0);
        ck_assert_ok(w2l__pq_dict_put(&d, "x", 1, &idx, &added, &err), err);
        ck_assert_ok(w2l__pq_dict_put(&d, "x", 1, &idx, &added, &err), err);
        ck_assert_int_eq(added, 0);
        ck_assert_uint_eq(idx, 0);
        w2l__pq_dict_reset(&d);
    }
    w2l__pq_dict_free(&d);
}
END_TEST

Suite *suite_pq_dict(void)
{
    Suite *s = suite_create("pq_dict");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, byte_arrays_dedupe_in_first_seen_order);
    tcase_add_test(basic, fixed_width_grows_past_many_rehashes);
    tcase_add_test(basic, many_strings_and_hash_collisions_stay_exact);
    tcase_add_test(basic, small_chunks_release_a_big_dictionary);
    tcase_set_timeout(basic, 60);
    suite_add_tcase(s, basic);
    return s;
}
