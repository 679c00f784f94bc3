/*
 * The "orders" benchmark data set (shared bench README): our own generator, producing the
 * same rows as the reference one for the same row count and seed (checked through the
 * sha256 of the CSV). Integer-only PRNG (splitmix64), so the bytes are the same everywhere.
 *
 * Columns: id long, customer_id int, status string, amount decimal(12,2), qty int,
 * created_at timestamp, updated_at timestamptz, note string (10% NULL), flag boolean,
 * score double.
 */
#ifndef W2L_BENCH_ORDERS_H
#define W2L_BENCH_ORDERS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct orders_gen {
    uint64_t state;
    int64_t created; /* micros since epoch, strictly increasing */
    int64_t next_id;
} orders_gen;

typedef struct order_row {
    int64_t id;
    int32_t customer_id;
    int status;             /* index into orders_status */
    int64_t cents;          /* amount, unscaled */
    int32_t qty;
    int64_t created_at;     /* micros */
    int64_t updated_at;     /* micros (whole seconds) */
    int note_null;
    char note[96];
    size_t note_len;
    int flag;
    double score;
} order_row;

static const char *const orders_status[6] = {"pending", "paid", "shipped", "delivered",
                                             "cancelled", "refunded"};
static const char *const orders_words[64] = {
    "the", "order", "was", "shipped", "late", "customer", "asked", "for", "refund", "gift",
    "wrap", "please", "call", "before", "delivery", "leave", "at", "door", "fragile", "item",
    "express", "standard", "address", "changed", "billing", "same", "as", "shipping", "note",
    "urgent", "backorder", "partial", "split", "box", "warehouse", "north", "south", "east",
    "west", "pickup", "store", "coupon", "applied", "discount", "vip", "new", "returning",
    "account", "verified", "fraud", "check", "passed", "manual", "review", "hold", "release",
    "priority", "low", "high", "batch", "invoice", "sent", "paper", "email"};

static inline uint64_t orders_next(orders_gen *g)
{
    uint64_t z = (g->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t orders_between(orders_gen *g, uint64_t lo, uint64_t hi)
{
    return lo + orders_next(g) % (hi - lo + 1);
}

static inline void orders_init(orders_gen *g, uint64_t seed)
{
    g->state = seed;
    g->created = INT64_C(1704067200) * 1000000; /* 2024-01-01T00:00:00Z */
    g->next_id = 1;
}

/* The next row; the order of PRNG draws is part of the data set's definition. */
static inline void orders_row(orders_gen *g, order_row *r)
{
    r->id = g->next_id++;
    r->customer_id = (int32_t)orders_between(g, 1, 100000);
    r->status = (int)(orders_next(g) % 6);
    r->cents = (int64_t)orders_between(g, 1, 9999999);
    r->qty = (int32_t)orders_between(g, 1, 100);
    g->created += (int64_t)orders_between(g, 1, 200000);
    r->created_at = g->created;
    r->updated_at = (g->created / 1000000 + (int64_t)orders_between(g, 0, 86400)) * 1000000;
    r->note_null = orders_next(g) % 10 == 0;
    r->note_len = 0;
    r->note[0] = '\0';
    if (!r->note_null) {
        size_t target = (size_t)orders_between(g, 0, 80);
        for (;;) {
            const char *w = orders_words[orders_next(g) % 64];
            size_t wl = strlen(w), sep = r->note_len ? 1 : 0;
            if (r->note_len + sep + wl > target) break;
            if (sep) r->note[r->note_len++] = ' ';
            memcpy(r->note + r->note_len, w, wl);
            r->note_len += wl;
            r->note[r->note_len] = '\0';
        }
    }
    r->flag = (int)(orders_next(g) & 1);
    r->score = (double)(orders_next(g) >> 11) * (1.0 / 9007199254740992.0) * 1000.0;
}

/* "YYYY-MM-DD HH:MM:SS" of seconds since the epoch (proleptic Gregorian, UTC; days to
 * civil date with the era-based day-count arithmetic). */
static inline void orders_civil(int64_t secs, char *out, size_t size)
{
    int64_t days = secs / 86400, rem = secs % 86400;
    days += 719468;
    int64_t era = days / 146097, doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) y++;
    snprintf(out, size, "%04d-%02d-%02d %02d:%02d:%02d", (int)y, (int)m, (int)d,
             (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
}

/* One CSV line as the reference generator writes it. */
static inline void orders_csv(FILE *f, const order_row *r)
{
    char c[40], u[40];
    orders_civil(r->created_at / 1000000, c, sizeof c);
    orders_civil(r->updated_at / 1000000, u, sizeof u);
    fprintf(f, "%lld,%d,%s,%lld.%02lld,%d,%s.%06lld,%s,%s,%d,%.17g\n", (long long)r->id,
            r->customer_id, orders_status[r->status], (long long)(r->cents / 100),
            (long long)(r->cents % 100), r->qty, c, (long long)(r->created_at % 1000000), u,
            r->note_null ? "\\N" : r->note, r->flag, r->score);
}

#endif
