/*
 * lib/iceberg deletion vectors (roaring.c, puffin.c, dv.c): the 64-bit Roaring portable
 * serialization byte by byte and round trips (empty, the array/bitmap boundary at 4096
 * values, keys across 32-bit buckets, run containers as other writers make them), corrupt
 * input refused, the deletion-vector-v1 blob's length/magic/CRC, the Puffin footer, and
 * the merge of a commit's position deletes with the deletion vectors a table has.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "iceberg/iceberg.h"
#include "parquet/parquet.h"

static int has_bytes(const void *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp((const char *)hay + i, needle, k) == 0) return 1;
    return 0;
}

static void round_trip(const uint64_t *v, size_t n)
{
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(v, n, &b, &err), err);
    ck_assert_uint_eq(b.len, w2l__roaring64_size(v, n));
    uint64_t *back;
    size_t nb;
    ck_assert_ok(w2l__roaring64_deserialize(b.data, b.len, &back, &nb, &err), err);
    ck_assert_uint_eq(nb, n);
    for (size_t i = 0; i < n; i++) ck_assert_uint_eq(back[i], v[i]);
    w2l__free(back);
    w2l_buf_release(&b);
}

START_TEST(roaring_bytes_of_one_value)
{
    uint64_t v[] = {1};
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(v, 1, &b, &err), err);
    static const unsigned char want[] = {
        1, 0, 0, 0, 0, 0, 0, 0, /* one bucket */
        0, 0, 0, 0,             /* its key */
        0x3A, 0x30, 0, 0,       /* cookie 12346 */
        1, 0, 0, 0,             /* one container */
        0, 0, 0, 0,             /* key 0, cardinality - 1 = 0 */
        16, 0, 0, 0,            /* its offset */
        1, 0                    /* the value */
    };
    ck_assert_uint_eq(b.len, sizeof want);
    ck_assert_mem_eq(b.data, want, sizeof want);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(roaring_empty)
{
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(NULL, 0, &b, &err), err);
    ck_assert_uint_eq(b.len, 8);
    for (size_t i = 0; i < 8; i++) ck_assert_uint_eq(b.data[i], 0);
    uint64_t *v;
    size_t n;
    ck_assert_ok(w2l__roaring64_deserialize(b.data, b.len, &v, &n, &err), err);
    ck_assert_uint_eq(n, 0);
    w2l__free(v);
    w2l_buf_release(&b);
}
END_TEST

/* 4096 values in one container: an array; 4097: a bitmap of 8192 bytes */
START_TEST(roaring_array_bitmap_boundary)
{
    uint64_t *v = malloc(70000 * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < 4097; i++) v[i] = 3 * i;
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(v, 4096, &b, &err), err);
    ck_assert_uint_eq(b.len, 8 + 4 + 16 + 2 * 4096);
    w2l_buf_release(&b);
    round_trip(v, 4096);
    ck_assert_ok(w2l__roaring64_serialize(v, 4097, &b, &err), err);
    ck_assert_uint_eq(b.len, 8 + 4 + 16 + 8192);
    w2l_buf_release(&b);
    round_trip(v, 4097);
    /* a full container, then one value in the next */
    for (size_t i = 0; i < 65537; i++) v[i] = i;
    round_trip(v, 65537);
    free(v);
}
END_TEST

START_TEST(roaring_keys_across_buckets)
{
    uint64_t v[] = {0, 65535, 65536, 0xFFFFFFFFull, 0x100000000ull, 0x100000005ull,
                    0x7FFFFFFF00000000ull, 0x7FFFFFFFFFFFFFFFull};
    round_trip(v, W2L_ARRAY_LEN(v));
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(v, W2L_ARRAY_LEN(v), &b, &err), err);
    ck_assert_uint_eq(b.data[0], 3); /* buckets 0, 1 and 0x7FFFFFFF */
    w2l_buf_release(&b);
    uint64_t bad[] = {5, 5};
    ck_assert_int_eq(w2l__roaring64_serialize(bad, 2, &b, &err), W2L_MISUSE);
    w2l_buf_release(&b);
}
END_TEST

/* run containers (other writers run-length encode) are read */
START_TEST(roaring_reads_run_containers)
{
    static const unsigned char in[] = {
        1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, /* one bucket, key 2 */
        0x3B, 0x30, 0, 0,                   /* cookie 12347, one container */
        1,                                  /* it is a run container */
        7, 0, 11, 0,                        /* key 7, 12 values */
        2, 0, 5, 0, 9, 0, 100, 0, 1, 0      /* runs 5..14 and 100..101 */
    };
    uint64_t *v;
    size_t n;
    w2l_error err;
    ck_assert_ok(w2l__roaring64_deserialize(in, sizeof in, &v, &n, &err), err);
    ck_assert_uint_eq(n, 12);
    uint64_t top = 2ull << 32 | 7u << 16;
    ck_assert_uint_eq(v[0], top | 5);
    ck_assert_uint_eq(v[9], top | 14);
    ck_assert_uint_eq(v[10], top | 100);
    ck_assert_uint_eq(v[11], top | 101);
    w2l__free(v);
}
END_TEST

START_TEST(roaring_refuses_corrupt_input)
{
    uint64_t v[] = {1, 2, 70000};
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__roaring64_serialize(v, 3, &b, &err), err);
    uint64_t *o;
    size_t n;
    for (size_t cut = 0; cut < b.len; cut++) /* every truncation */
        ck_assert_int_eq(w2l__roaring64_deserialize(b.data, cut, &o, &n, &err), W2L_CORRUPT);
    unsigned char *x = malloc(b.len + 1);
    memcpy(x, b.data, b.len);
    x[b.len] = 0;
    ck_assert_int_eq(w2l__roaring64_deserialize(x, b.len + 1, &o, &n, &err), W2L_CORRUPT);
    x[12] = 0x99; /* cookie */
    ck_assert_int_eq(w2l__roaring64_deserialize(x, b.len, &o, &n, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "cookie"));
    memcpy(x, b.data, b.len);
    x[22] = 5; /* cardinality of the first container */
    ck_assert_int_eq(w2l__roaring64_deserialize(x, b.len, &o, &n, &err), W2L_CORRUPT);
    free(x);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(roaring_union)
{
    uint64_t a[] = {1, 5, 9}, b[] = {2, 5, 10, 1ull << 40};
    uint64_t *u;
    size_t n;
    w2l_error err;
    ck_assert_ok(w2l__roaring64_union(a, 3, b, 4, &u, &n, &err), err);
    uint64_t want[] = {1, 2, 5, 9, 10, 1ull << 40};
    ck_assert_uint_eq(n, W2L_ARRAY_LEN(want));
    for (size_t i = 0; i < n; i++) ck_assert_uint_eq(u[i], want[i]);
    w2l__free(u);
    ck_assert_ok(w2l__roaring64_union(NULL, 0, NULL, 0, &u, &n, &err), err);
    ck_assert_uint_eq(n, 0);
    w2l__free(u);
}
END_TEST

START_TEST(crc32_check_value)
{
    ck_assert_uint_eq(w2l__crc32((const unsigned char *)"123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(w2l__crc32(NULL, 0), 0);
}
END_TEST

START_TEST(dv_blob_frame)
{
    uint64_t v[] = {3, 4, 1000000};
    w2l_error err;
    w2l_buf b = {0};
    ck_assert_ok(w2l__dv_blob_encode(v, 3, &b, &err), err);
    size_t body = b.len - 8;
    ck_assert_uint_eq(body, 4 + w2l__roaring64_size(v, 3));
    ck_assert_uint_eq(b.data[0] << 24 | b.data[1] << 16 | b.data[2] << 8 | b.data[3], body);
    static const unsigned char magic[] = {0xD1, 0xD3, 0x39, 0x64};
    ck_assert_mem_eq(b.data + 4, magic, 4);
    uint32_t crc = w2l__crc32(b.data + 4, body);
    const unsigned char *c = b.data + 4 + body;
    ck_assert_uint_eq((uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3],
                      crc);
    uint64_t *o;
    size_t n;
    ck_assert_ok(w2l__dv_blob_decode(b.data, b.len, &o, &n, &err), err);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(o[2], 1000000);
    w2l__free(o);
    b.data[b.len - 1] ^= 1; /* CRC */
    ck_assert_int_eq(w2l__dv_blob_decode(b.data, b.len, &o, &n, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "CRC"));
    b.data[b.len - 1] ^= 1;
    b.data[5] ^= 1; /* magic */
    ck_assert_int_eq(w2l__dv_blob_decode(b.data, b.len, &o, &n, &err), W2L_CORRUPT);
    b.data[5] ^= 1;
    b.data[3] ^= 1; /* length */
    ck_assert_int_eq(w2l__dv_blob_decode(b.data, b.len, &o, &n, &err), W2L_CORRUPT);
    w2l_buf_release(&b);
}
END_TEST

START_TEST(puffin_file_and_footer)
{
    const char *dir = tmpdir_make("dv");
    w2l_error err;
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    char path[1024];
    snprintf(path, sizeof path, "%s/dv.puffin", dir);
    uint64_t v[5000];
    for (size_t i = 0; i < 5000; i++) v[i] = 2 * i + 1; /* a bitmap container */
    w2l__puffin_blob pb;
    ck_assert_ok(w2l__puffin_dv_write(io, path, "s3://b/data/f 1.parquet", v, 5000, &pb, &err),
                 err);
    ck_assert_int_eq(pb.offset, 4);
    /* the same path again: never overwritten */
    ck_assert_int_ne(w2l__puffin_dv_write(io, path, "x", v, 1, NULL, &err), W2L_OK);
    void *data;
    size_t len;
    ck_assert_ok(w2l_fileio_read_all(io, path, &data, &len, &err), err);
    ck_assert_int_eq((int64_t)len, pb.file_size);
    ck_assert_mem_eq(data, "PFA1", 4);
    ck_assert_mem_eq((char *)data + len - 4, "PFA1", 4);
    ck_assert_uint_eq(((unsigned char *)data)[len - 8], 0); /* flags: not compressed */
    w2l__arena a;
    w2l__arena_init(&a, 4096);
    w2l__puffin_blob *blobs;
    size_t nb;
    ck_assert_ok(w2l__puffin_footer_parse(data, len, &a, &blobs, &nb, &err), err);
    ck_assert_uint_eq(nb, 1);
    ck_assert_str_eq(blobs[0].type, "deletion-vector-v1");
    ck_assert_str_eq(blobs[0].referenced, "s3://b/data/f 1.parquet");
    ck_assert_int_eq(blobs[0].cardinality, 5000);
    ck_assert_int_eq(blobs[0].offset, pb.offset);
    ck_assert_int_eq(blobs[0].length, pb.length);
    /* the footer JSON names the row position field and inherited ids */
    ck_assert(has_bytes(data, len, "\"fields\":[2147483645]"));
    ck_assert(has_bytes(data, len, "\"snapshot-id\":-1"));
    /* read back through a manifest entry's view of it */
    w2l__ice_data_file d;
    memset(&d, 0, sizeof d);
    d.content = W2L_ICE_POS_DELETES;
    d.format = "PUFFIN";
    d.path = path;
    d.record_count = 5000;
    d.has_content_range = 1;
    d.content_offset = pb.offset;
    d.content_size = pb.length;
    ck_assert(w2l__ice_is_dv(&d));
    uint64_t *o;
    size_t n;
    ck_assert_ok(w2l__ice_dv_read(io, &d, &o, &n, &err), err);
    ck_assert_uint_eq(n, 5000);
    ck_assert_uint_eq(o[4999], 9999);
    w2l__free(o);
    d.record_count = 4999; /* the cardinality must match the entry */
    ck_assert_int_eq(w2l__ice_dv_read(io, &d, &o, &n, &err), W2L_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    /* a footer whose size points outside the file */
    unsigned char *x = data;
    x[len - 12] = 0xff;
    ck_assert_int_eq(w2l__puffin_footer_parse(data, len, &a, &blobs, &nb, &err), W2L_CORRUPT);
    w2l__arena_release(&a);
    w2l_free(data);
    w2l_fileio_close(io);
    tmpdir_remove(dir);
}
END_TEST

/* ---- merging at commit (dv.c) ---- */

static w2l_fileio *mio;
static w2l_catalog *mcat;
static const char *mwh;

static void merge_setup(void)
{
    w2l_error err;
    mwh = strdup(tmpdir_make("dvm"));
    ck_assert_ok(w2l_fileio_open("local", NULL, &mio, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, mwh, mio, &mcat, &err), err);
}

static void merge_teardown(void)
{
    w2l__catalog_close(mcat);
    w2l_fileio_close(mio);
    tmpdir_remove(mwh);
    free((char *)mwh);
}

/* A position-delete Parquet file (as writers write them) of rows refs[0..n). */
static w2l__ice_data_file pos_file(w2l__ice_table *t, w2l__arena *a, w2l__ice_posref *refs,
                                   size_t n)
{
    w2l_error err;
    w2l__pq_options pq;
    w2l__pq_options_default(&pq);
    char *path = w2l__ice_new_data_path(t, "", "pos-delete");
    qsort(refs, n, sizeof *refs, w2l__ice_posref_cmp);
    w2l__ice_data_file df;
    ck_assert_ok(w2l__ice_pos_file_write(mio, path, &pq, refs, n, a, &df, &err), err);
    free(path);
    return df;
}

/* The positions the live deletion vector of data file ref deletes; fails unless there is
 * exactly one (and no other live delete file names ref). */
static size_t live_dv_at(w2l__ice_table *t, const char *ref, uint64_t **pos, char **path)
{
    w2l_error err;
    w2l__ice_scan *scan;
    ck_assert_ok(w2l__ice_scan_plan(mio, t->meta, -1, NULL, NULL, &scan, &err), err);
    const w2l__ice_data_file *found = NULL;
    for (size_t i = 0; i < scan->ndelete_files; i++) {
        const w2l__ice_data_file *d = scan->delete_files[i];
        ck_assert(w2l__ice_is_dv(d));
        if (strcmp(d->referenced_data_file, ref) != 0) continue;
        ck_assert_msg(!found, "two deletion vectors of %s", ref);
        found = d;
    }
    ck_assert_ptr_nonnull(found);
    size_t n;
    ck_assert_ok(w2l__ice_dv_read(mio, found, pos, &n, &err), err);
    if (path) *path = strdup(found->path);
    w2l__ice_scan_free(scan);
    return n;
}

static size_t live_dv(w2l__ice_table *t, const char *ref, uint64_t **pos)
{
    return live_dv_at(t, ref, pos, NULL);
}

/* Merges and commits dels; *plan's counts stay readable (its arrays go with the change). */
static void commit_deletes(w2l__ice_table *t, const w2l__ice_data_file *dels, size_t n,
                           w2l__ice_dv_plan *plan, int *consumed_gone, char **removed0)
{
    w2l_error err;
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_ROW_DELTA);
    ck_assert_ok(w2l__ice_dv_merge(mio, t->meta, dels, n, 1, &ch.arena, plan, &err), err);
    ch.deletes = plan->deletes;
    ch.ndeletes = plan->ndeletes;
    ch.removed = plan->removed;
    ch.nremoved = plan->nremoved;
    ck_assert_ok(w2l__ice_table_commit(t, &ch, 0, &err), err);
    *consumed_gone = (int)plan->nconsumed;
    if (removed0) *removed0 = plan->nremoved ? strdup(plan->removed[0]) : NULL;
    plan->deletes = NULL;
    plan->removed = plan->written = plan->consumed = NULL;
    w2l__ice_change_release(&ch, mio, 0);
}

START_TEST(merge_with_the_tables_vector)
{
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    w2l__ice_kv kv = {"format-version", "3"};
    w2l__ice_props props = {1, &kv};
    char *loc = w2l__ice_table_dir(mwh, "db", "m");
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_create(mcat, mio, loc, "db", "m", s, NULL, &props, &t, &err), err);
    ck_assert_int_eq(t->meta->format_version, 3);
    w2l__arena a;
    w2l__arena_init(&a, 4096);
    /* checkpoint 1: two files of the change name rows of A and B, A twice over */
    const char *A = "/lake/data/a.parquet", *B = "/lake/data/b.parquet";
    w2l__ice_posref r1[] = {{A, 1}, {A, 5}, {B, 70000}}, r2[] = {{A, 5}, {A, 3}};
    w2l__ice_data_file d1[2] = {pos_file(t, &a, r1, 3), pos_file(t, &a, r2, 2)};
    w2l__ice_dv_plan plan;
    int consumed;
    commit_deletes(t, d1, 2, &plan, &consumed, NULL);
    ck_assert_int_eq(consumed, 2);
    ck_assert_uint_eq(plan.nremoved, 0);
    ck_assert_uint_eq(plan.ndeletes, 2); /* one vector per data file */
    uint64_t *v;
    char *old_a, *removed;
    ck_assert_uint_eq(live_dv_at(t, A, &v, &old_a), 3);
    ck_assert_uint_eq(v[0], 1);
    ck_assert_uint_eq(v[1], 3);
    ck_assert_uint_eq(v[2], 5);
    w2l__free(v);
    /* checkpoint 2: more rows of A (one again) and of C: A's vector is the union, the old
     * one removed in the same snapshot; B's stays as it was */
    const char *C = "/lake/data/c.parquet";
    w2l__ice_posref r3[] = {{A, 3}, {A, 1ull << 33}, {C, 0}};
    w2l__ice_data_file d3 = pos_file(t, &a, r3, 3);
    commit_deletes(t, &d3, 1, &plan, &consumed, &removed);
    ck_assert_uint_eq(plan.nremoved, 1);
    ck_assert_str_eq(removed, old_a);
    free(removed);
    ck_assert_uint_eq(live_dv(t, A, &v), 4);
    ck_assert_uint_eq(v[3], 1ull << 33);
    w2l__free(v);
    ck_assert_uint_eq(live_dv(t, B, &v), 1);
    ck_assert_uint_eq(v[0], 70000);
    w2l__free(v);
    ck_assert_uint_eq(live_dv(t, C, &v), 1);
    w2l__free(v);
    const char *tot = w2l__ice_props_get(
        &w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id)->summary,
        "total-position-deletes");
    ck_assert_str_eq(tot, "6"); /* A 4, B 1, C 1: the replaced vector no longer counts */
    /* a merge against a base the vector left since (another writer replaced it): the
     * commit of a plan naming the old vector is refused */
    w2l__ice_meta *stale;
    char *json;
    size_t len;
    ck_assert_ok(w2l__ice_meta_print(t->meta, &json, &len, &err), err);
    ck_assert_ok(w2l__ice_meta_parse(json, len, &stale, &err), err);
    w2l__free(json);
    w2l__ice_posref r4[] = {{A, 7}};
    w2l__ice_data_file d4 = pos_file(t, &a, r4, 1);
    commit_deletes(t, &d4, 1, &plan, &consumed, NULL); /* the table moves on */
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_ROW_DELTA);
    w2l__ice_posref r5[] = {{A, 8}};
    w2l__ice_data_file d5 = pos_file(t, &a, r5, 1);
    ck_assert_ok(w2l__ice_dv_merge(mio, stale, &d5, 1, 1, &ch.arena, &plan, &err), err);
    ch.deletes = plan.deletes;
    ch.ndeletes = plan.ndeletes;
    ch.removed = plan.removed;
    ch.nremoved = plan.nremoved;
    ck_assert_int_eq(w2l__ice_table_try_commit(t, &ch, &err), W2L_CONFLICT);
    w2l__ice_dv_plan_abandon(mio, &plan);
    w2l__ice_change_release(&ch, mio, 1);
    w2l__ice_meta_free(stale);
    ck_assert_uint_eq(live_dv(t, A, &v), 5);
    w2l__free(v);
    free(old_a);
    w2l__arena_release(&a);
    w2l__ice_table_free(t);
    w2l__free(loc);
    w2l_schema_unref(s);
}
END_TEST

Suite *suite_dv(void)
{
    Suite *s = suite_create("dv");
    TCase *r = tcase_create("roaring");
    tcase_add_test(r, roaring_bytes_of_one_value);
    tcase_add_test(r, roaring_empty);
    tcase_add_test(r, roaring_array_bitmap_boundary);
    tcase_add_test(r, roaring_keys_across_buckets);
    tcase_add_test(r, roaring_reads_run_containers);
    tcase_add_test(r, roaring_refuses_corrupt_input);
    tcase_add_test(r, roaring_union);
    suite_add_tcase(s, r);
    TCase *p = tcase_create("puffin");
    tcase_add_test(p, crc32_check_value);
    tcase_add_test(p, dv_blob_frame);
    tcase_add_test(p, puffin_file_and_footer);
    suite_add_tcase(s, p);
    TCase *m = tcase_create("merge");
    tcase_add_checked_fixture(m, merge_setup, merge_teardown);
    tcase_add_test(m, merge_with_the_tables_vector);
    suite_add_tcase(s, m);
    return s;
}
