/*
 * lib/common: errors, buffers, arenas, channels, registry, hashing, logging.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/chan.h"
#include "common/common.h"
#include "common/thread.h"
#include "json/json.h"
#include "support/support.h"

START_TEST(error_set_formats_and_truncates)
{
    w2l_error err;
    ck_assert_int_eq(w2l_error_set(&err, W2L_IO, "write %s", "x.parquet"), W2L_IO);
    ck_assert_int_eq(err.code, W2L_IO);
    ck_assert_str_eq(err.msg, "write x.parquet");
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    w2l_error_set(&err, W2L_ERROR, "%s", big);
    ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
    ck_assert_int_eq(w2l_error_set(NULL, W2L_CORRUPT, "ignored"), W2L_CORRUPT);
    w2l_error_clear(&err);
    ck_assert_int_eq(err.code, W2L_OK);
    ck_assert_str_eq(err.msg, "");
}
END_TEST

START_TEST(error_prefix_and_errno)
{
    w2l_error err;
    w2l__fail_errno(&err, W2L_IO, 28, "write %s", "m1.avro");
    ck_assert_int_eq(err.sys_errno, 28);
    ck_assert_str_eq(err.msg, "write m1.avro: No space left on device");
    w2l__error_prefix(&err, "commit %s: ", "orders");
    ck_assert_str_eq(err.msg, "commit orders: write m1.avro: No space left on device");
    w2l__fail(&err, W2L_UNAVAILABLE, "down");
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
}
END_TEST

/* Each thing said once: a context the message names already is not added again. */
START_TEST(error_prefix_says_each_thing_once)
{
    w2l_error err;
    w2l__fail(&err, W2L_NOTFOUND, "table crm.nope not found");
    w2l__error_prefix(&err, "table %s: ", "crm.nope");
    ck_assert_str_eq(err.msg, "table crm.nope not found");
    w2l__fail(&err, W2L_NOTFOUND, "table crm.nopes not found"); /* another name */
    w2l__error_prefix(&err, "table %s: ", "crm.nope");
    ck_assert_str_eq(err.msg, "table crm.nope: table crm.nopes not found");
    w2l__fail(&err, W2L_SOURCE, "mysql source u@h:3306: SELECT 1: gone (error 2013)");
    w2l__error_prefix(&err, "mysql source: ");
    ck_assert_str_eq(err.msg, "mysql source u@h:3306: SELECT 1: gone (error 2013)");
    w2l__error_prefix(&err, "mysql source: snapshot: "); /* the first context only */
    ck_assert_str_eq(err.msg, "snapshot: mysql source u@h:3306: SELECT 1: gone (error 2013)");
}
END_TEST

START_TEST(rc_names_are_pinned)
{
    ck_assert_str_eq(w2l_rc_name(W2L_OK), "W2L_OK");
    ck_assert_str_eq(w2l_rc_name(W2L_CONFLICT), "W2L_CONFLICT");
    ck_assert_int_eq(W2L_CANCELLED, 13);
    ck_assert_str_eq(w2l_rc_name(W2L_DONE), "W2L_DONE");
    ck_assert_str_eq(w2l_rc_name((w2l_rc)999), "W2L_?");
    ck_assert_uint_eq(w2l_version_number(), W2L_VERSION_NUMBER);
}
END_TEST

START_TEST(buf_grows_and_prints)
{
    w2l_buf b = {0};
    w2l_error err;
    for (int i = 0; i < 1000; i++) ck_assert_ok(w2l_buf_append(&b, "abc", 3, &err), err);
    ck_assert_uint_eq(b.len, 3000);
    ck_assert_ok(w2l__buf_printf(&b, &err, "%d-%s", 42, "x"), err);
    ck_assert_ok(w2l__buf_cstr(&b, &err), err);
    ck_assert_str_eq((char *)b.data + 3000, "42-x");
    ck_assert_int_eq(w2l_buf_append(&b, NULL, 1, &err), W2L_MISUSE);
    w2l_buf_release(&b);
    ck_assert_ptr_null(b.data);
    /* printed texts that fit the free room, fill it exactly, or overflow it by one */
    size_t total = 0;
    char *want = malloc(1 << 16), *piece = malloc(1 << 14);
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(piece);
    for (int i = 0; i < 12; i++) {
        size_t room = b.data ? b.cap - b.len : 0;
        size_t need = room ? room - 1 + (size_t)(i % 3) : 5; /* room - 1 fits with its NUL */
        ck_assert_uint_lt(need, 1 << 14);
        memset(piece, 'a' + i % 26, need);
        piece[need] = '\0';
        ck_assert_ok(w2l__buf_printf(&b, &err, "%s", piece), err);
        ck_assert_uint_eq(b.data[b.len], 0); /* still NUL-terminated */
        memcpy(want + total, piece, need);
        total += need;
        ck_assert_uint_eq(b.len, total);
        ck_assert_int_eq(memcmp(b.data, want, total), 0);
    }
    free(want);
    free(piece);
    w2l_buf_release(&b);
    w2l_buf_release(&b); /* twice is fine */
}
END_TEST

START_TEST(arena_aligns_and_handles_large)
{
    w2l__arena a;
    w2l__arena_init(&a, 1024);
    for (int i = 0; i < 200; i++) {
        char *p = w2l__arena_alloc(&a, (size_t)(i % 37) + 1);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 16, 0);
        memset(p, 'x', (size_t)(i % 37) + 1);
    }
    char *big = w2l__arena_alloc(&a, 100000);
    ck_assert_ptr_nonnull(big);
    memset(big, 1, 100000);
    char *after = w2l__arena_alloc(&a, 8); /* still served from the small block */
    ck_assert_ptr_nonnull(after);
    char *s = w2l__arena_strndup(&a, "hello world", 5);
    ck_assert_str_eq(s, "hello");
    ck_assert_uint_ge(a.used, 100000);
    w2l__arena_release(&a);
    ck_assert_ptr_null(a.head);
}
END_TEST

/* Fills a pooled arena of 4 KiB blocks with 1 KiB pieces set to tag: one for its 1 KiB
 * block, two for its 2 KiB block, then four per full-size block, nfull of them. firsts[k]:
 * the address of full block k's first piece. */
static void fill_pooled(w2l__arena *a, int nfull, unsigned char tag, uintptr_t *firsts)
{
    for (int i = 0; i < 3 + 4 * nfull; i++) {
        unsigned char *p = w2l__arena_alloc(a, 1024);
        ck_assert_ptr_nonnull(p);
        memset(p, tag, 1024);
        if (i >= 3 && (i - 3) % 4 == 0 && firsts) firsts[(i - 3) / 4] = (uintptr_t)p;
    }
}

START_TEST(arena_pool_reuses_full_blocks)
{
    w2l__arena_pool *pool = w2l__arena_pool_new(4096, 8);
    ck_assert_ptr_nonnull(pool);
    w2l__arena a, b;
    uintptr_t fa[2], fb[2];
    w2l__arena_init_pooled(&a, pool);
    ck_assert_uint_eq(a.block_size, 4096);
    fill_pooled(&a, 2, 'a', fa);
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 0);
    w2l__arena_release(&a);
    /* the two full-size blocks wait in the pool; the 1 and 2 KiB ones were freed */
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 2);
    ck_assert_ptr_null(a.pool);
    w2l__arena_init_pooled(&b, pool);
    fill_pooled(&b, 2, 'b', fb);
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 0);
    /* the same memory, the block a used last coming first */
    ck_assert_uint_eq(fb[0], fa[1]);
    ck_assert_uint_eq(fb[1], fa[0]);
    ck_assert_int_eq(((unsigned char *)fb[0])[1023], 'b');
    w2l__arena_release(&b);
    /* a released arena is an ordinary one again */
    ck_assert_ptr_nonnull(w2l__arena_alloc(&b, 4096 / 4));
    w2l__arena_release(&b);
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 2);
    w2l__arena_pool_unref(pool);
}
END_TEST

START_TEST(arena_pool_keeps_at_most_its_cap)
{
    fail_alloc_install();
    fail_alloc_arm(-1);
    long live = fail_alloc_outstanding();
    w2l__arena_pool *pool = w2l__arena_pool_new(4096, 2);
    ck_assert_ptr_nonnull(pool);
    w2l__arena a;
    w2l__arena_init_pooled(&a, pool);
    fill_pooled(&a, 3, 'a', NULL);
    ck_assert_ptr_nonnull(w2l__arena_alloc(&a, 10000)); /* a one-off block, never pooled */
    ck_assert_int_eq(fail_alloc_outstanding(), live + 1 + 2 + 3 + 1);
    w2l__arena_release(&a);
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 2);
    ck_assert_int_eq(fail_alloc_outstanding(), live + 1 + 2); /* the pool and its two blocks */
    w2l__arena_pool_unref(pool);
    ck_assert_int_eq(fail_alloc_outstanding(), live);
}
END_TEST

START_TEST(arena_pool_outlives_its_maker)
{
    fail_alloc_install();
    fail_alloc_arm(-1);
    long live = fail_alloc_outstanding();
    w2l__arena_pool *pool = w2l__arena_pool_new(4096, 8);
    ck_assert_ptr_nonnull(pool);
    w2l__arena a;
    w2l__arena_init_pooled(&a, pool);
    fill_pooled(&a, 1, 'a', NULL);
    w2l__arena_pool_unref(pool); /* the maker is gone; the arena keeps the pool */
    ck_assert_int_eq(fail_alloc_outstanding(), live + 1 + 3);
    for (int i = 0; i < 8; i++) { /* two more full-size blocks, from malloc */
        unsigned char *p = w2l__arena_alloc(&a, 1024);
        ck_assert_ptr_nonnull(p);
        memset(p, 'b', 1024);
    }
    ck_assert_int_eq(fail_alloc_outstanding(), live + 1 + 5);
    w2l__arena_release(&a); /* the last reference: the pool goes, and its blocks with it */
    ck_assert_int_eq(fail_alloc_outstanding(), live);
}
END_TEST

typedef struct pool_worker {
    w2l__arena_pool *pool;
    w2l__arena *give; /* arenas to release on this thread */
    int ngive;
    int rounds; /* then this many times: an arena of three full-size blocks, checked */
    unsigned char tag;
    int bad; /* pieces that did not hold the tag written: a block shared by two arenas */
} pool_worker;

static int pool_work(void *arg)
{
    pool_worker *w = arg;
    for (int i = 0; i < w->ngive; i++) w2l__arena_release(&w->give[i]);
    for (int round = 0; round < w->rounds; round++) {
        w2l__arena a;
        w2l__arena_init_pooled(&a, w->pool);
        unsigned char *p[3 + 4 * 3];
        for (int i = 0; i < 3 + 4 * 3; i++) {
            p[i] = w2l__arena_alloc(&a, 1024);
            if (!p[i]) return 1;
            memset(p[i], w->tag, 1024);
        }
        for (int i = 0; i < 3 + 4 * 3; i++)
            for (int k = 0; k < 1024; k += 64) w->bad += p[i][k] != w->tag;
        w2l__arena_release(&a);
    }
    return 0;
}

START_TEST(arena_pool_across_threads)
{
    w2l__arena_pool *pool = w2l__arena_pool_new(4096, 4);
    ck_assert_ptr_nonnull(pool);
    /* arenas filled here, released by another thread: their blocks come back for this one */
    w2l__arena made[2];
    uintptr_t first[2];
    for (int i = 0; i < 2; i++) {
        w2l__arena_init_pooled(&made[i], pool);
        fill_pooled(&made[i], 1, 'm', &first[i]);
    }
    pool_worker one = {pool, made, 2, 0, 'x', 0};
    thrd_t t;
    ck_assert_int_eq(thrd_create(&t, pool_work, &one), thrd_success);
    int res;
    ck_assert_int_eq(thrd_join(t, &res), thrd_success);
    ck_assert_int_eq(res, 0);
    ck_assert_uint_eq(w2l__arena_pool_blocks(pool), 2);
    w2l__arena a;
    uintptr_t again[2];
    w2l__arena_init_pooled(&a, pool);
    fill_pooled(&a, 2, 'a', again);
    ck_assert_uint_eq(again[0], first[1]);
    ck_assert_uint_eq(again[1], first[0]);
    w2l__arena_release(&a);
    /* two threads taking and giving back at once: no block is in two arenas at a time */
    pool_worker w[2] = {{pool, NULL, 0, 300, 'p', 0}, {pool, NULL, 0, 300, 'q', 0}};
    thrd_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(thrd_create(&th[i], pool_work, &w[i]), thrd_success);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(thrd_join(th[i], &res), thrd_success);
        ck_assert_int_eq(res, 0);
        ck_assert_int_eq(w[i].bad, 0);
    }
    /* the last release alone gave back three; the cap holds it at four */
    size_t held = w2l__arena_pool_blocks(pool);
    ck_assert_uint_ge(held, 3);
    ck_assert_uint_le(held, 4);
    w2l__arena_pool_unref(pool);
}
END_TEST

START_TEST(chan_fifo_timeout_close)
{
    w2l__chan *c = w2l__chan_new(2);
    ck_assert_ptr_nonnull(c);
    int a = 1, b = 2, d = 3;
    ck_assert_int_eq(w2l__chan_send(c, &a, 0), W2L_OK);
    ck_assert_int_eq(w2l__chan_send(c, &b, 0), W2L_OK);
    ck_assert_int_eq(w2l__chan_send(c, &d, 10), W2L_AGAIN); /* full: backpressure */
    ck_assert_uint_eq(w2l__chan_len(c), 2);
    void *it;
    ck_assert_int_eq(w2l__chan_recv(c, &it, 0), W2L_OK);
    ck_assert_ptr_eq(it, &a);
    w2l__chan_close(c);
    ck_assert_int_eq(w2l__chan_send(c, &d, 0), W2L_CANCELLED);
    ck_assert_int_eq(w2l__chan_recv(c, &it, -1), W2L_OK); /* drains after close */
    ck_assert_ptr_eq(it, &b);
    ck_assert_int_eq(w2l__chan_recv(c, &it, -1), W2L_DONE);
    w2l__chan_free(c, NULL);
    c = w2l__chan_new(1);
    ck_assert_int_eq(w2l__chan_recv(c, &it, 20), W2L_AGAIN);
    w2l__chan_free(c, NULL);
}
END_TEST

enum { PRODUCERS = 4, PER_PRODUCER = 20000 };
typedef struct { w2l__chan *c; int base; } prod_arg;

static int producer(void *p)
{
    prod_arg *a = p;
    for (intptr_t i = 0; i < PER_PRODUCER; i++)
        if (w2l__chan_send(a->c, (void *)(intptr_t)(a->base + i + 1), -1) != W2L_OK) return 1;
    return 0;
}

START_TEST(chan_many_producers_blocking)
{
    /* a tiny capacity forces senders to block and be woken many times */
    w2l__chan *c = w2l__chan_new(3);
    thrd_t t[PRODUCERS];
    prod_arg args[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i].c = c;
        args[i].base = i * PER_PRODUCER;
        ck_assert_int_eq(thrd_create(&t[i], producer, &args[i]), thrd_success);
    }
    long long sum = 0;
    int last[PRODUCERS] = {0};
    for (int n = 0; n < PRODUCERS * PER_PRODUCER; n++) {
        void *it;
        ck_assert_int_eq(w2l__chan_recv(c, &it, 5000), W2L_OK);
        int v = (int)(intptr_t)it - 1;
        int who = v / PER_PRODUCER;
        ck_assert_int_gt(v + 1, last[who]); /* per-producer order kept */
        last[who] = v + 1;
        sum += v;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        int res;
        thrd_join(t[i], &res);
        ck_assert_int_eq(res, 0);
    }
    long long n = (long long)PRODUCERS * PER_PRODUCER;
    ck_assert_int_eq(sum, n * (n - 1) / 2);
    w2l__chan_free(c, NULL);
}
END_TEST

static int drop_count;
static void drop(void *it) { (void)it; drop_count++; }

START_TEST(chan_free_drops_queued)
{
    w2l__chan *c = w2l__chan_new(4);
    int x;
    w2l__chan_send(c, &x, 0);
    w2l__chan_send(c, &x, 0);
    drop_count = 0;
    w2l__chan_free(c, drop);
    ck_assert_int_eq(drop_count, 2);
}
END_TEST

START_TEST(registry_rejects_and_finds)
{
    w2l__registry r = {0};
    int a = 0, b = 0;
    ck_assert_int_eq(w2l__registry_add(&r, "x", "one", &a, 0), W2L_OK);
    ck_assert_int_eq(w2l__registry_add(&r, "x", "two", &b, 1), W2L_OK);
    ck_assert_int_eq(w2l__registry_add(&r, "x", "one", &b, 0), W2L_EXISTS);
    ck_assert_int_eq(w2l__registry_add(&r, "x", "one", &a, 0), W2L_OK); /* same again: fine */
    ck_assert_ptr_eq(w2l__registry_find(&r, "one"), &a);
    ck_assert_ptr_eq(w2l__registry_find(&r, NULL), &b);
    ck_assert_ptr_null(w2l__registry_find(&r, "three"));
    char names[64];
    w2l__registry_names(&r, names, sizeof names);
    ck_assert_str_eq(names, "one, two");
}
END_TEST

START_TEST(hash_is_stable_and_spreads)
{
    ck_assert_uint_eq(w2l__hash64("orders", 6, 0), w2l__hash64("orders", 6, 0));
    ck_assert_uint_ne(w2l__hash64("orders", 6, 0), w2l__hash64("orders", 6, 1));
    ck_assert_uint_ne(w2l__hash64("a", 1, 0), w2l__hash64("b", 1, 0));
    int buckets[8] = {0};
    for (int i = 0; i < 8000; i++) buckets[w2l__hash64(&i, sizeof i, 7) % 8]++;
    for (int i = 0; i < 8; i++) ck_assert_int_gt(buckets[i], 800);
}
END_TEST

static char last_line[256];
static w2l_log_level last_level;
static void capture(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    last_level = level;
    snprintf(last_line, sizeof last_line, "%s", line);
}

START_TEST(fmt_int64_is_printf_s)
{
    /* every length, both signs, and the ends of the range, against "%lld" */
    int64_t vals[64 + 4];
    size_t n = 0;
    for (int64_t v = 1; n < 36; v = v * 10 + 7) vals[n++] = v, vals[n++] = -v; /* 18 lengths */
    vals[n++] = 0;
    vals[n++] = INT64_MAX;
    vals[n++] = INT64_MIN;
    vals[n++] = INT64_MIN + 1;
    for (size_t i = 0; i < n; i++) {
        char a[24], b[24];
        size_t len = w2l__fmt_int64(a, vals[i]);
        snprintf(b, sizeof b, "%lld", (long long)vals[i]);
        ck_assert_str_eq(a, b);
        ck_assert_uint_eq(len, strlen(b));
    }
}
END_TEST

/* The digit-by-digit reading eight_digits stands for: 1 and the value, or 0. */
static int digits_one_by_one(const char *p, uint32_t *v)
{
    uint32_t r = 0;
    for (int i = 0; i < 8; i++) {
        unsigned d = (unsigned)((unsigned char)p[i] - '0');
        if (d > 9) return 0;
        r = r * 10 + d;
    }
    *v = r;
    return 1;
}

START_TEST(eight_digits_is_digit_by_digit)
{
    /* every byte value in every place among digits (a carry of one byte into the next
     * must not make a non-digit look like one), then random words */
    char b[8];
    uint32_t x, y;
    for (int pos = 0; pos < 8; pos++)
        for (int c = 0; c < 256; c++) {
            memcpy(b, "90817263", 8);
            b[pos] = (char)c;
            int ok = digits_one_by_one(b, &y);
            x = 0;
            ck_assert_int_eq(w2l__eight_digits(b, &x), ok);
            if (ok) ck_assert_uint_eq(x, y);
        }
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        for (int k = 0; k < 8; k++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            unsigned v = (unsigned)(r >> 33);
            b[k] = (char)(v % 4 ? '0' + v % 10 : v >> 8);
        }
        int ok = digits_one_by_one(b, &y);
        x = 0;
        if (w2l__eight_digits(b, &x) != ok || (ok && x != y))
            ck_abort_msg("'%.8s': %u, want %u (%d)", b, x, y, ok);
    }
    ck_assert(w2l__eight_digits("00000000", &x) && x == 0);
    ck_assert(w2l__eight_digits("99999999", &x) && x == 99999999);
}
END_TEST

START_TEST(log_levels_and_callback)
{
    w2l_log_set_callback(capture, NULL);
    w2l_log_set_level(W2L_LOG_INFO);
    last_line[0] = '\0';
    w2l__log(W2L_LOG_DEBUG, "hidden %d", 1);
    ck_assert_str_eq(last_line, "");
    w2l__log(W2L_LOG_WARN, "shown %d", 2);
    ck_assert_str_eq(last_line, "shown 2");
    ck_assert_int_eq(last_level, W2L_LOG_WARN);
    w2l_log_level l;
    ck_assert_int_eq(w2l_log_level_parse("debug", &l), 0);
    ck_assert_int_eq(l, W2L_LOG_DEBUG);
    ck_assert_int_eq(w2l_log_level_parse("loud", &l), -1);
    ck_assert_str_eq(w2l_log_level_name(W2L_LOG_TRACE), "trace");
    w2l_log_set_callback(NULL, NULL);
}
END_TEST

/* Parses a JSON log line: one object, no newline inside, only valid UTF-8; returns it. */
static w2l__json *parse_log_line(const char *line, size_t len)
{
    ck_assert_uint_eq(strlen(line), len);
    ck_assert_ptr_null(memchr(line, '\n', len));
    for (size_t i = 0; i < len; i++) ck_assert_uint_ge((unsigned char)line[i], 0x20);
    w2l__json *j = NULL;
    w2l_error err;
    ck_assert_msg(w2l__json_parse(line, len, &j, &err) == W2L_OK, "%s: %s", line, err.msg);
    ck_assert_int_eq(w2l__json_type(j), W2L_JSON_OBJECT);
    ck_assert_ptr_nonnull(w2l__json_str(w2l__json_get(j, "time")));
    ck_assert_ptr_nonnull(w2l__json_str(w2l__json_get(j, "level")));
    ck_assert_ptr_nonnull(w2l__json_get(j, "component"));
    ck_assert_ptr_nonnull(w2l__json_get(j, "table"));
    ck_assert_ptr_nonnull(w2l__json_str(w2l__json_get(j, "message")));
    return j;
}

static const char *jstr(const w2l__json *j, const char *key)
{
    return w2l__json_str(w2l__json_get(j, key));
}

START_TEST(log_json_members_and_escaping)
{
    char buf[8192];
    /* 2026-11-29T15:40:17.123Z */
    int64_t t = 1795966817123LL;
    size_t n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_WARN, "committer: orders: slow", 0, NULL);
    w2l__json *j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "time"), "2026-11-29T15:40:17.123Z");
    ck_assert_str_eq(jstr(j, "level"), "warn");
    ck_assert_str_eq(jstr(j, "component"), "committer");
    ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "table")), W2L_JSON_NULL);
    ck_assert_str_eq(jstr(j, "message"), "orders: slow");
    ck_assert_ptr_null(w2l__json_get(j, "fields"));
    ck_assert_ptr_null(w2l__json_get(j, "truncated"));
    w2l__json_free(j);

    /* every level's name */
    for (int l = W2L_LOG_ERROR; l <= W2L_LOG_TRACE; l++) {
        n = w2l__log_json(buf, sizeof buf, t, (w2l_log_level)l, "x", 0, NULL);
        j = parse_log_line(buf, n);
        ck_assert_str_eq(jstr(j, "level"), w2l_log_level_name((w2l_log_level)l));
        ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "component")), W2L_JSON_NULL);
        w2l__json_free(j);
    }

    /* "word N: " -> the component and fields.instance; no prefix -> null */
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, "committer 3: job x", 0, NULL);
    j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "component"), "committer");
    ck_assert_str_eq(jstr(j, "message"), "job x");
    int64_t inst = -1;
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(w2l__json_get(j, "fields"), "instance"), &inst),
                     0);
    ck_assert_int_eq(inst, 3);
    w2l__json_free(j);
    const char *no_prefix[] = {"Checkpoint: x", "mysql source: x", "a:b", ": x", "x 12a: y"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(no_prefix); i++) {
        n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, no_prefix[i], 0, NULL);
        j = parse_log_line(buf, n);
        ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "component")), W2L_JSON_NULL);
        ck_assert_str_eq(jstr(j, "message"), no_prefix[i]);
        w2l__json_free(j);
    }

    /* control characters, quotes, backslashes, a message of several lines */
    const char *nasty = "ddl: a\"b\\c\nsecond line\r\t\x01\x1f\x7f end";
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_ERROR, nasty, 0, NULL);
    j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "message"), nasty + 5);
    w2l__json_free(j);
    ck_assert_ptr_nonnull(strstr(buf, "\\u0001"));
    ck_assert_ptr_nonnull(strstr(buf, "\\u007f"));

    /* bytes that are not UTF-8 (a lone continuation byte, a cut sequence, an overlong form,
     * a surrogate) each become U+FFFD; valid multi-byte text stays as it is */
    const char *bad = "x \x80 \xc3 \xc0\xaf \xed\xa0\x80 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, bad, 0, NULL);
    j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "message"),
                     "x \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
                     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    w2l__json_free(j);
}
END_TEST

START_TEST(log_json_table_fields_and_bounds)
{
    char buf[8192];
    int64_t t = 0;
    w2l__log_field f[] = {{"checkpoint", NULL, 42}, {"file", "a\"b.parquet", 0}};
    w2l__log_meta m = {.db = "shop", .table = "orders", .fields = f, .nfields = 2};
    size_t n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, "ddl: table shop.orders: x", 0, &m);
    w2l__json *j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "time"), "1970-01-01T00:00:00.000Z");
    ck_assert_str_eq(jstr(j, "component"), "ddl");
    ck_assert_str_eq(jstr(j, "table"), "shop.orders");
    w2l__json *fl = w2l__json_get(j, "fields");
    int64_t ck = 0;
    ck_assert_int_eq(w2l__json_int64(w2l__json_get(fl, "checkpoint"), &ck), 0);
    ck_assert_int_eq(ck, 42);
    ck_assert_str_eq(jstr(fl, "file"), "a\"b.parquet");
    w2l__json_free(j);

    /* a component the caller names: stripped from the message when it leads it */
    w2l__log_meta mc = {.component = "mysql source", .table = "t"};
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, "mysql source: retrying", 0, &mc);
    j = parse_log_line(buf, n);
    ck_assert_str_eq(jstr(j, "component"), "mysql source");
    ck_assert_str_eq(jstr(j, "table"), "t");
    ck_assert_str_eq(jstr(j, "message"), "retrying");
    w2l__json_free(j);

    /* long messages: the worst escaping (6 bytes a byte) of what w2l__log keeps (1023
     * bytes) fits the sink's 8 KiB; in a small buffer the object is cut, still valid,
     * marked "truncated" */
    char msg[1024];
    memset(msg, 0x01, sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, msg, 0, &m);
    j = parse_log_line(buf, n);
    ck_assert_uint_eq(strlen(jstr(j, "message")), 1023);
    ck_assert_ptr_null(w2l__json_get(j, "truncated"));
    w2l__json_free(j);
    n = w2l__log_json(buf, sizeof buf, t, W2L_LOG_INFO, msg, 1, NULL); /* the text was cut */
    j = parse_log_line(buf, n);
    int b = 0;
    ck_assert_int_eq(w2l__json_bool(w2l__json_get(j, "truncated"), &b), 0);
    ck_assert_int_eq(b, 1);
    w2l__json_free(j);
    for (size_t size = 256; size <= 1200; size += 37) {
        char small[1200];
        memset(msg, 'x', 900);
        msg[0] = '\xe2', msg[1] = '\x82', msg[2] = '\xac', msg[899] = '\x02';
        n = w2l__log_json(small, size, t, W2L_LOG_INFO, msg, 0, &m);
        ck_assert_uint_lt(n, size);
        j = parse_log_line(small, n);
        ck_assert_int_eq(w2l__json_bool(w2l__json_get(j, "truncated"), &b), 0);
        w2l__json_free(j);
    }
    ck_assert_uint_eq(w2l__log_json(buf, 255, t, W2L_LOG_INFO, "x", 0, NULL), 0);
    ck_assert_str_eq(buf, "");
}
END_TEST

static char json_seen[8192];
static void capture_json(void *opaque, w2l_log_level level, const char *line)
{
    (void)opaque;
    w2l_log_format_line(json_seen, sizeof json_seen, level, line);
}

START_TEST(log_format_line_in_a_callback)
{
    /* a callback still gets the bare text; w2l_log_format_line() on the line it was given
     * returns the object with the table the library attached */
    w2l_log_set_level(W2L_LOG_INFO);
    w2l_log_set_callback(capture, NULL);
    w2l_log_set_format(W2L_LOG_FORMAT_JSON);
    ck_assert_int_eq(w2l_log_get_format(), W2L_LOG_FORMAT_JSON);
    w2l__log_table(W2L_LOG_WARN, "shop", "orders", "ddl: table %s.%s: %s", "shop", "orders", "x");
    ck_assert_str_eq(last_line, "ddl: table shop.orders: x");
    w2l_log_set_callback(capture_json, NULL);
    w2l__log_table(W2L_LOG_WARN, "shop", "orders", "ddl: table %s.%s: %s", "shop", "orders", "x");
    w2l__json *j = parse_log_line(json_seen, strlen(json_seen));
    ck_assert_str_eq(jstr(j, "table"), "shop.orders");
    ck_assert_str_eq(jstr(j, "message"), "table shop.orders: x");
    w2l__json_free(j);
    /* outside a callback, another text: no table */
    size_t n = w2l_log_format_line(json_seen, sizeof json_seen, W2L_LOG_INFO, "run: done");
    j = parse_log_line(json_seen, n);
    ck_assert_str_eq(jstr(j, "component"), "run");
    ck_assert_int_eq(w2l__json_type(w2l__json_get(j, "table")), W2L_JSON_NULL);
    w2l__json_free(j);
    /* text: "TIME LEVEL line" */
    w2l_log_set_format(W2L_LOG_FORMAT_TEXT);
    n = w2l_log_format_line(json_seen, sizeof json_seen, W2L_LOG_WARN, "run: done");
    ck_assert_uint_eq(n, strlen(json_seen));
    ck_assert_str_eq(json_seen + 24, " warn  run: done");
    w2l_log_set_format((w2l_log_format)7); /* ignored */
    ck_assert_int_eq(w2l_log_get_format(), W2L_LOG_FORMAT_TEXT);
    w2l_log_set_callback(NULL, NULL);
}
END_TEST

START_TEST(allocator_hook_fails_cleanly)
{
    fail_alloc_install();
    ck_assert_int_eq(w2l_set_allocator(malloc, realloc, free), W2L_MISUSE); /* after init */
    w2l_buf b = {0};
    w2l_error err;
    fail_alloc_arm(0);
    ck_assert_int_eq(w2l_buf_append(&b, "x", 1, &err), W2L_NOMEM);
    ck_assert_ptr_null(b.data);
    fail_alloc_arm(-1);
    ck_assert_ok(w2l_buf_append(&b, "x", 1, &err), err);
    long live = fail_alloc_outstanding();
    w2l_buf_release(&b);
    ck_assert_int_eq(fail_alloc_outstanding(), live - 1);
}
END_TEST

Suite *suite_common(void)
{
    Suite *s = suite_create("common");
    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, error_set_formats_and_truncates);
    tcase_add_test(basic, error_prefix_and_errno);
    tcase_add_test(basic, error_prefix_says_each_thing_once);
    tcase_add_test(basic, rc_names_are_pinned);
    tcase_add_test(basic, buf_grows_and_prints);
    tcase_add_test(basic, arena_aligns_and_handles_large);
    tcase_add_test(basic, arena_pool_reuses_full_blocks);
    tcase_add_test(basic, arena_pool_across_threads);
    tcase_add_test(basic, chan_fifo_timeout_close);
    tcase_add_test(basic, chan_free_drops_queued);
    tcase_add_test(basic, registry_rejects_and_finds);
    tcase_add_test(basic, hash_is_stable_and_spreads);
    tcase_add_test(basic, fmt_int64_is_printf_s);
    tcase_add_test(basic, eight_digits_is_digit_by_digit);
    tcase_add_test(basic, log_levels_and_callback);
    tcase_add_test(basic, log_json_members_and_escaping);
    tcase_add_test(basic, log_json_table_fields_and_bounds);
    tcase_add_test(basic, log_format_line_in_a_callback);
    suite_add_tcase(s, basic);
    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, chan_many_producers_blocking);
    tcase_set_timeout(edge, 30);
    suite_add_tcase(s, edge);
    TCase *faults = tcase_create("faults");
    tcase_add_test(faults, allocator_hook_fails_cleanly);
    tcase_add_test(faults, arena_pool_keeps_at_most_its_cap);
    tcase_add_test(faults, arena_pool_outlives_its_maker);
    suite_add_tcase(s, faults);
    return s;
}
