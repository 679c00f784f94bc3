/*
 * The Parquet test cases shared by the interop generator (test/gen/pq_gen.c) and the unit
 * round trips (test/check_pq_roundtrip.c): a schema, writer options and rows for each file.
 * Together they cover every Iceberg primitive type, NULLs, empty and multi-byte strings,
 * extremes (INT64_MIN/MAX, NaN, +-0.0, +-inf, decimal(38) max, dates before 1970 and after
 * 2262, timestamps with micros), all-NULL columns, dictionary and PLAIN, fallback from
 * dictionary to PLAIN, several pages and row groups, both codecs, position and equality
 * delete files, names that need sanitizing and an empty file.
 */
#ifndef W2L_TEST_PQ_CASES_H
#define W2L_TEST_PQ_CASES_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w2l.h"
#include "model/model.h"
#include "parquet/parquet.h"

typedef struct pq_case {
    char name[64];
    w2l_schema *schema;
    w2l__pq_options opt;
    size_t nrows, ncols;
    w2l_value *rows; /* nrows * ncols, row-major */
    char *pool;      /* string bytes */
    size_t pool_len, pool_cap;
    int min_row_groups; /* expected at least this many row groups */
} pq_case;

static inline void pqc_die(const char *what, const w2l_error *err)
{
    fprintf(stderr, "pq_cases: %s: %s\n", what, err ? err->msg : "");
    exit(2);
}

static inline void pqc_field(pq_case *c, int32_t id, const char *name, const char *type,
                             int required)
{
    w2l_error err;
    w2l_type t;
    if (w2l_type_parse(type, &t, &err) != W2L_OK) pqc_die(type, &err);
    if (w2l_schema_add_field(c->schema, id, name, t, required, &err) != W2L_OK) pqc_die(name, &err);
}

static inline void pqc_alloc(pq_case *c, size_t nrows)
{
    c->ncols = w2l_schema_field_count(c->schema);
    c->nrows = nrows;
    c->rows = calloc(nrows * c->ncols + 1, sizeof *c->rows);
    if (!c->rows) pqc_die("calloc", NULL);
    for (size_t i = 0; i < nrows * c->ncols; i++) c->rows[i].is_null = 1;
}

static inline w2l_value *pqc_at(pq_case *c, size_t row, size_t col)
{
    return &c->rows[row * c->ncols + col];
}

/* Stores bytes in the case's pool; offsets are fixed up by pqc_finish. */
static inline void pqc_bytes(pq_case *c, size_t row, size_t col, const void *p, size_t n)
{
    if (c->pool_len + n + 1 > c->pool_cap) {
        size_t cap = c->pool_cap ? c->pool_cap * 2 : 4096;
        while (cap < c->pool_len + n + 1) cap *= 2;
        c->pool = realloc(c->pool, cap);
        if (!c->pool) pqc_die("realloc", NULL);
        c->pool_cap = cap;
    }
    w2l_value *v = pqc_at(c, row, col);
    v->is_null = 0;
    v->v.bytes.ptr = (const char *)(uintptr_t)c->pool_len; /* offset until pqc_finish */
    v->v.bytes.len = n;
    if (n) memcpy(c->pool + c->pool_len, p, n);
    c->pool_len += n;
}

static inline void pqc_finish(pq_case *c)
{
    for (size_t col = 0; col < c->ncols; col++) {
        w2l_type_id t = w2l_schema_field(c->schema, col)->type.id;
        if (t != W2L_TYPE_STRING && t != W2L_TYPE_BINARY) continue;
        for (size_t r = 0; r < c->nrows; r++) {
            w2l_value *v = pqc_at(c, r, col);
            if (!v->is_null) v->v.bytes.ptr = c->pool + (uintptr_t)v->v.bytes.ptr;
        }
    }
}

static inline w2l_int128 pqc_dec(const char *text, unsigned p, unsigned s)
{
    w2l_error err;
    w2l_int128 v;
    if (w2l__decimal_parse(text, strlen(text), p, s, &v, &err) != W2L_OK) pqc_die(text, &err);
    return v;
}

static inline void pqc_set_i32(pq_case *c, size_t r, size_t col, int32_t v)
{
    pqc_at(c, r, col)->is_null = 0;
    pqc_at(c, r, col)->v.i32 = v;
}
static inline void pqc_set_i64(pq_case *c, size_t r, size_t col, int64_t v)
{
    pqc_at(c, r, col)->is_null = 0;
    pqc_at(c, r, col)->v.i64 = v;
}

/* ---- case 1/2: every type, extremes ---- */
static const char *const pqc_all_types[][2] = {
    {"b", "boolean"}, {"i", "int"}, {"l", "long"}, {"f", "float"}, {"d", "double"},
    {"dec9", "decimal(9,2)"}, {"dec18", "decimal(18,4)"}, {"dec20", "decimal(20,0)"},
    {"dec38", "decimal(38,10)"}, {"dt", "date"}, {"tm", "time"}, {"ts", "timestamp"},
    {"tstz", "timestamptz"}, {"s", "string"}, {"bin", "binary"}, {"nul", "string"},
};

static inline void pqc_fill_all_types(pq_case *c)
{
    static const float fv[] = { NAN,  -0.0f,   0.0f,     INFINITY, -INFINITY,
                                1.5f, FLT_MAX, -FLT_MIN, 1e-45f };
    static const double dv[] = {
        NAN, -0.0, 0.0, INFINITY, -INFINITY, 0.1, DBL_MAX, -DBL_MIN, 5e-324
    };
    static const int64_t lv[] = {INT64_MIN, INT64_MAX, 0, -1, 1, 1234567890123LL};
    static const int32_t iv[] = {INT32_MIN, INT32_MAX, 0, -1, 42};
    static const char *const d9[] = {"9999999.99", "-9999999.99", "0.00", "0.01", "-0.01"};
    static const char *const d18[] = {"99999999999999.9999", "-99999999999999.9999", "1.0000"};
    static const char *const d20[] = {"18446744073709551615", "0", "99999999999999999999",
                                      "-99999999999999999999", "9223372036854775808"};
    static const char *const d38[] = {"9999999999999999999999999999.9999999999",
                                      "-9999999999999999999999999999.9999999999",
                                      "0.0000000001", "-1.5", "0.0000000000"};
    /* 0001-01-01, 1969-12-31, 1970-01-01, 1900-01-01, 2024-02-29, 2262-04-12, 9999-12-31 */
    static const int32_t dates[] = {-719162, -1, 0, -25567, 19782, 106751, 2932896};
    static const int64_t times[] = {0, 86399999999LL, 45296789012LL, 1};
    static const int64_t ts[] = {-62135596800000000LL, -1, 0, 1709208000500001LL,
                                 253402300799999999LL, 9223372036854775LL, -9223372036854775LL};
    static const char *const strs[] = {"", "a", "h\xc3\xa9llo w\xc3\xb6rld", "\xf0\x9f\x98\x80",
                                       "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                       "a longer string of more than sixteen characters",
                                       "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbf", "zzz",
                                       "quote\" backslash\\ tab\t newline\n"};
    static const unsigned char bins[][4] = {{0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {1, 2, 3, 0}};
    for (size_t r = 0; r < c->nrows; r++) {
        int nul = r % 7 == 3; /* every column NULL in these rows */
        if (nul) continue;
        size_t k = r;
        pqc_set_i32(c, r, 0, (int32_t)(k % 3 == 1));
        pqc_set_i32(c, r, 1, iv[k % 5]);
        pqc_set_i64(c, r, 2, lv[k % 6]);
        pqc_at(c, r, 3)->is_null = 0;
        pqc_at(c, r, 3)->v.f32 = fv[k % 9];
        pqc_at(c, r, 4)->is_null = 0;
        pqc_at(c, r, 4)->v.f64 = dv[k % 9];
        pqc_at(c, r, 5)->is_null = 0;
        pqc_at(c, r, 5)->v.dec = pqc_dec(d9[k % 5], 9, 2);
        pqc_at(c, r, 6)->is_null = 0;
        pqc_at(c, r, 6)->v.dec = pqc_dec(d18[k % 3], 18, 4);
        pqc_at(c, r, 7)->is_null = 0;
        pqc_at(c, r, 7)->v.dec = pqc_dec(d20[k % 5], 20, 0);
        pqc_at(c, r, 8)->is_null = 0;
        pqc_at(c, r, 8)->v.dec = pqc_dec(d38[k % 5], 38, 10);
        pqc_set_i32(c, r, 9, dates[k % 7]);
        pqc_set_i64(c, r, 10, times[k % 4]);
        pqc_set_i64(c, r, 11, ts[k % 7]);
        pqc_set_i64(c, r, 12, ts[(k + 3) % 7]);
        const char *s = strs[k % 9];
        pqc_bytes(c, r, 13, s, strlen(s));
        if (k % 4 != 2) pqc_bytes(c, r, 14, bins[k % 3], (k % 5 == 4) ? 0 : 4);
        /* column 15 ("nul") stays NULL: an all-NULL column */
    }
}

static inline pq_case *pqc_new(pq_case *c, const char *name)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->schema = w2l_schema_new(0);
    w2l__pq_options_default(&c->opt);
    return c;
}

/* Builds every case into cases (at least 12 slots); returns the count. */
static inline size_t pqc_build_all(pq_case *cases)
{
    size_t n = 0;
    /* 1, 2: every type, 40 rows; dictionary + zstd, and plain + uncompressed */
    for (int v = 0; v < 2; v++) {
        pq_case *c =
            pqc_new(&cases[n++], v ? "all_types_plain_uncompressed" : "all_types_dict_zstd");
        pqc_field(c, 1, "id", "long", 1);
        for (size_t i = 0; i < sizeof pqc_all_types / sizeof pqc_all_types[0]; i++)
            pqc_field(c, (int32_t)i + 2, pqc_all_types[i][0], pqc_all_types[i][1], 0);
        /* shift: column 0 is id */
        pqc_alloc(c, 40);
        pq_case tmp = *c;
        /* fill into a view that skips the id column */
        for (size_t r = 0; r < c->nrows; r++) pqc_set_i64(c, r, 0, (int64_t)r);
        tmp.ncols = c->ncols;
        tmp.rows = c->rows + 1; /* column k of tmp = column k+1 of c */
        pqc_fill_all_types(&tmp);
        c->pool = tmp.pool;
        c->pool_len = tmp.pool_len;
        c->pool_cap = tmp.pool_cap;
        if (v) {
            c->opt.codec = W2L_PQ_UNCOMPRESSED;
            c->opt.dict_bytes = 0;
        }
        /* string offsets were stored relative to the pool; fix the shifted columns */
        pqc_finish(c);
    }
    /* 3: many pages and row groups: 30000 rows, 1000-value pages, 7000-row groups;
     * low-cardinality columns stay dictionary, a unique string column outgrows a 4 KiB
     * dictionary and falls back to PLAIN, a required column and an optional one with
     * NULL runs */
    {
        pq_case *c = pqc_new(&cases[n++], "pages_row_groups_zstd");
        pqc_field(c, 1, "id", "long", 1);
        pqc_field(c, 2, "status", "string", 1);
        pqc_field(c, 3, "uniq", "string", 0);
        pqc_field(c, 4, "qty", "int", 0);
        pqc_field(c, 5, "amount", "decimal(12,2)", 0);
        pqc_field(c, 6, "score", "double", 0);
        pqc_field(c, 7, "flag", "boolean", 0);
        pqc_field(c, 8, "at", "timestamptz", 0);
        pqc_alloc(c, 30000);
        static const char *const st[] = { "pending",   "paid",      "shipped",
                                          "delivered", "cancelled", "refunded" };
        uint64_t x = 42;
        for (size_t r = 0; r < c->nrows; r++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            pqc_set_i64(c, r, 0, (int64_t)r + 1);
            const char *s = st[(x >> 33) % 6];
            pqc_bytes(c, r, 1, s, strlen(s));
            if ((r / 500) % 5 != 4) { /* NULL runs of 500 */
                char b[48];
                int len = snprintf(b, sizeof b, "u-%zu-%llx", r, (unsigned long long)(x >> 40));
                pqc_bytes(c, r, 2, b, (size_t)len);
            }
            if (r % 3) pqc_set_i32(c, r, 3, (int32_t)((x >> 20) % 100) + 1);
            if (r % 11) {
                pqc_at(c, r, 4)->is_null = 0;
                pqc_at(c, r, 4)->v.dec.hi = ((x >> 13) & 1) ? -1 : 0;
                pqc_at(c, r, 4)->v.dec.lo =
                    (uint64_t)(((x >> 13) & 1) ? -(int64_t)((x >> 24) % 9999999999ULL)
                                               : (int64_t)((x >> 24) % 9999999999ULL));
            }
            pqc_at(c, r, 5)->is_null = 0;
            pqc_at(c, r, 5)->v.f64 = (double)(x >> 11) / 9007199254740992.0 * 1000.0;
            if (r % 2) pqc_set_i32(c, r, 6, (int32_t)((x >> 50) & 1));
            pqc_set_i64(c, r, 7, 1704067200000000LL + (int64_t)r * 123457);
        }
        pqc_finish(c);
        c->opt.page_rows = 1000;
        c->opt.row_group_rows = 7000;
        c->opt.dict_bytes = 4096;
        c->opt.zstd_level = 1;
        c->min_row_groups = 5;
    }
    /* 4: the same rows through byte-size limits and no compression: small pages and row
     * groups chosen by size */
    {
        pq_case *c = &cases[n++];
        *c = cases[n - 2];
        snprintf(c->name, sizeof c->name, "%s", "size_limits_uncompressed");
        c->schema = w2l_schema_ref(cases[n - 2].schema);
        c->rows = malloc(c->nrows * c->ncols * sizeof *c->rows);
        memcpy(c->rows, cases[n - 2].rows, c->nrows * c->ncols * sizeof *c->rows);
        c->pool = NULL; /* strings point into case 3's pool */
        c->pool_cap = c->pool_len = 0;
        w2l__pq_options_default(&c->opt);
        c->opt.codec = W2L_PQ_UNCOMPRESSED;
        c->opt.page_bytes = 8192;
        c->opt.row_group_bytes = 256 * 1024;
        c->opt.dict_bytes = 16384;
        c->min_row_groups = 2;
    }
    /* 5: all NULL, every type */
    {
        pq_case *c = pqc_new(&cases[n++], "all_null_zstd");
        for (size_t i = 0; i < sizeof pqc_all_types / sizeof pqc_all_types[0]; i++)
            pqc_field(c, (int32_t)i + 10, pqc_all_types[i][0], pqc_all_types[i][1], 0);
        pqc_alloc(c, 100);
    }
    /* 6: position deletes */
    {
        pq_case *c = pqc_new(&cases[n++], "position_deletes");
        pqc_field(c, W2L_PQ_FIELD_ID_FILE_PATH, "file_path", "string", 1);
        pqc_field(c, W2L_PQ_FIELD_ID_POS, "pos", "long", 1);
        pqc_alloc(c, 50);
        for (size_t r = 0; r < c->nrows; r++) {
            const char *p = r < 20 ? "/warehouse/db/t/data/00000-a.parquet"
                                   : "/warehouse/db/t/data/00001-b.parquet";
            pqc_bytes(c, r, 0, p, strlen(p));
            pqc_set_i64(c, r, 1, (int64_t)(r < 20 ? r * 3 : (r - 20) * 7));
        }
        pqc_finish(c);
    }
    /* 7: equality deletes on (id, region) with the table's field ids */
    {
        pq_case *c = pqc_new(&cases[n++], "equality_deletes");
        pqc_field(c, 1, "id", "long", 1);
        pqc_field(c, 4, "region", "string", 1);
        pqc_alloc(c, 10);
        for (size_t r = 0; r < c->nrows; r++) {
            pqc_set_i64(c, r, 0, (int64_t)r * 1000 - 3000);
            const char *p = r % 2 ? "eu" : "\xc3\xa9t\xc3\xa9";
            pqc_bytes(c, r, 1, p, strlen(p));
        }
        pqc_finish(c);
    }
    /* 8: names that need sanitizing */
    {
        pq_case *c = pqc_new(&cases[n++], "sanitized_names");
        pqc_field(c, 1, "a b", "int", 1);
        pqc_field(c, 2, "1st", "string", 0);
        pqc_field(c, 3, "x-y.z", "double", 0);
        pqc_alloc(c, 3);
        for (size_t r = 0; r < c->nrows; r++) {
            pqc_set_i32(c, r, 0, (int32_t)r);
            pqc_bytes(c, r, 1, "v", 1);
            pqc_at(c, r, 2)->is_null = 0;
            pqc_at(c, r, 2)->v.f64 = -(double)r;
        }
        pqc_finish(c);
    }
    /* 9: no rows */
    {
        pq_case *c = pqc_new(&cases[n++], "empty");
        pqc_field(c, 1, "id", "long", 1);
        pqc_field(c, 2, "s", "string", 0);
        pqc_alloc(c, 0);
    }
    return n;
}

static inline void pqc_free(pq_case *c)
{
    w2l_schema_unref(c->schema);
    free(c->rows);
    free(c->pool);
    memset(c, 0, sizeof *c);
}

#endif
