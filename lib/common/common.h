/*
 * Internal base of the library: allocation through the hook, error helpers, logging,
 * small utilities. Depends on nothing but libc and the public headers.
 */
#ifndef W2L_COMMON_H
#define W2L_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "w2l.h"

/* ---- allocation (alloc.c) ---- */
void *w2l__malloc(size_t n);
void *w2l__calloc(size_t n, size_t size);
void *w2l__realloc(void *p, size_t n);
void w2l__free(void *p);
char *w2l__strdup(const char *s);
char *w2l__strndup(const char *s, size_t n);
/* printf into fresh memory; NULL when out of memory. */
char *w2l__asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 from the first w2l_global_init() to the last w2l_global_cleanup() (lib/init.c): while
 * fixed, w2l_set_allocator() refuses with W2L_MISUSE. */
void w2l__allocator_fix(int on);

/* ---- errors (error.c) ---- */
/* Sets err from code and message; returns code. Same as w2l_error_set(). */
w2l_rc w2l__fail(w2l_error *err, w2l_rc code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As w2l__fail, with errno e and its strerror appended: "open x: No such file". */
w2l_rc w2l__fail_errno(w2l_error *err, w2l_rc code, int e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prepends context to err->msg on the way up: "manifest m.avro: " + old message. Each
 * thing is said once: a context the message begins with already ("table a.b: " before
 * "table a.b not found") is not added, nor the first context of fmt when the message begins
 * with that one ("mysql source: snapshot: " before "mysql source u@h: ..." adds
 * "snapshot: "). A layer adds what only it knows; the path of a file is named by the file
 * IO that failed. */
void w2l__error_prefix(w2l_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define W2L_TRY(expr)                                                                   \
    do {                                                                                \
        w2l_rc w2l__rc_ = (expr);                                                       \
        if (w2l__rc_ != W2L_OK) {                                                       \
            w2l__log(W2L_LOG_TRACE, "%s:%d: %s", __FILE__, __LINE__, w2l_rc_name(w2l__rc_)); \
            return w2l__rc_;                                                            \
        }                                                                               \
    } while (0)
#define W2L_NOMEM_IF(cond, err)                                                                    \
    do {                                                                                           \
        if (cond)                                                                                  \
            return w2l__fail((err), W2L_NOMEM, "out of memory at %s:%d", __FILE__, __LINE__);      \
    } while (0)

/* ---- logging (log.c) ---- */
void w2l__log(w2l_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int w2l__log_enabled(w2l_log_level level);
/* What a line is about, beside its text (which stays as the format makes it): the JSON
 * format's "component" (NULL: the line's leading "word: " or "word N: ", if any), "table"
 * (db.table when table is set) and "fields" (str NULL: the number num). */
typedef struct w2l__log_field {
    const char *key;
    const char *str;
    long long num;
} w2l__log_field;
typedef struct w2l__log_meta {
    const char *component;
    const char *db, *table;
    const w2l__log_field *fields;
    size_t nfields;
} w2l__log_meta;
void w2l__log_ex(w2l_log_level level, const w2l__log_meta *meta, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A line about table db.table (db may be NULL). */
#define w2l__log_table(level, db_, table_, ...)                                                \
    w2l__log_ex((level), &(w2l__log_meta){.db = (db_), .table = (table_)}, __VA_ARGS__)
/* The JSON object of one line into buf (no newline); truncated: the text was cut. Returns
 * its length, 0 when size < 256. For tests and w2l_log_format_line(). */
size_t w2l__log_json(char *buf, size_t size, int64_t time_ms, w2l_log_level level,
                     const char *line, int truncated, const w2l__log_meta *meta);

/* ---- byte buffers (buf.c): the public w2l_buf plus internal helpers ---- */
w2l_rc w2l__buf_reserve(w2l_buf *b, size_t extra, w2l_error *err);
w2l_rc w2l__buf_printf(w2l_buf *b, w2l_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends a NUL without counting it in len, so data can be used as a C string. */
w2l_rc w2l__buf_cstr(w2l_buf *b, w2l_error *err);

/* ---- plug-in registry (registry.c): name -> methods table, one per plug-in kind ---- */
typedef struct w2l__registry w2l__registry;
w2l_rc w2l__registry_add(w2l__registry *r, const char *kind, const char *name,
                         const void *methods, int make_default);
const void *w2l__registry_find(w2l__registry *r, const char *name);
/* Names registered, "a, b, c", into buf (for "unknown X 'y' (known: a, b)"). */
void w2l__registry_names(w2l__registry *r, char *buf, size_t size);
void w2l__registry_clear(w2l__registry *r);
#define W2L__REGISTRY_MAX 32
struct w2l__registry {
    const char *names[W2L__REGISTRY_MAX];
    const void *methods[W2L__REGISTRY_MAX];
    int count, def;
};

/* ---- misc ---- */
#define W2L_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define W2L_MIN(a, b) ((a) < (b) ? (a) : (b))
#define W2L_MAX(a, b) ((a) > (b) ? (a) : (b))
/* Monotonic and wall clocks. coarse_ms: a monotonic clock of a few ms resolution that
 * costs less to read (for intervals checked once per transaction). */
int64_t w2l__now_ms(void);
int64_t w2l__mono_ns(void);
int64_t w2l__coarse_ms(void);
/* ms since 1970 as "2026-01-31 12:00:00" (UTC, to the second) into buf; returns buf. */
const char *w2l__format_utc_ms(int64_t ms, char *buf, size_t size);
/* 64-bit hash of bytes (for keying tables and primary keys). */
uint64_t w2l__hash64(const void *p, size_t n, uint64_t seed);
/* The 64-bit finaliser w2l__hash64 ends with (each output bit depends on every input bit):
 * inline, for hot paths that hash one or two words themselves. */
static inline uint64_t w2l__mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}
/* v in decimal at buf (at least 21 bytes), NUL-terminated; returns its length. As "%lld",
 * without printf's cost (metadata files print many numbers on every table commit). */
size_t w2l__fmt_int64(char *buf, int64_t v);
/* The n low bytes of v at p, lowest first (n at most 8): the little-endian integers of the
 * binlog protocol, Iceberg's single values and partition keys, and zstd frame headers. */
static inline void w2l__put_le(void *p, uint64_t v, size_t n)
{
    unsigned char *o = p;
    for (size_t i = 0; i < n; i++) o[i] = (unsigned char)(v >> (8 * i));
}
/* The 8 bytes at p as a word with the first byte lowest, on any host: the word-at-a-time
 * text readers below and in the number and date parsers count on that order. */
static inline uint64_t w2l__load_le64(const char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
#else
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) x |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return x;
#endif
}
/* Whether the 8 bytes of word x (as w2l__load_le64 gives them) are all ASCII digits; if so
 * *v is their value. For readers that build the word themselves (the last digits of a run
 * shorter than 8 bytes, read as a word that ends where the run ends, with the bytes before
 * it set to '0'). */
static inline int w2l__eight_digits_word(uint64_t x, uint32_t *v)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull;
    /* high nibbles all 3, and no low nibble above 9 (adding 6 would carry into it) */
    if (((x & hi) | (((x + 0x0606060606060606ull) & hi) >> 4)) != 0x3333333333333333ull) return 0;
    x &= 0x0F0F0F0F0F0F0F0Full; /* the first digit is the lowest byte */
    x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;   /* pairs */
    x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull; /* quads */
    *v = (uint32_t)((x * 10000 + (x >> 32)) & 0xFFFFFFFFull);
    return 1;
}
/* Whether the 8 bytes at p are all ASCII digits; if so *v is their value. A word at a
 * time: the number parsers of the hot paths read long digit runs (epoch milliseconds,
 * doubles of 17 digits) eight digits per call. */
static inline int w2l__eight_digits(const char *p, uint32_t *v)
{
    return w2l__eight_digits_word(w2l__load_le64(p), v);
}

#endif
