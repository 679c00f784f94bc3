/*
 * w2l verify's insides (w2l-verify(1)): the canonical row text that the source computes in
 * SQL and the lake side in C (verify_canon.c), and the driver (verify.c).
 *
 * A row's text is its columns' canonical texts joined by ',' with '~' for NULL; every text
 * is ASCII without ',' or '~' (strings and binaries as uppercase hex, numbers as digits,
 * times at a fixed width), so the join is unambiguous. Its hash is the first 8 bytes of
 * its SHA-256, big-endian: in SQL CAST(CONV(LEFT(SHA2(text,256),16),16,10) AS UNSIGNED).
 */
#ifndef W2L_PIPELINE_VERIFY_INT_H
#define W2L_PIPELINE_VERIFY_INT_H

#include "../common/common.h"
#include "../ddl/ddl.h"

/* A column's canonical form, chosen from its MySQL class and its lake type. */
typedef enum w2l__vform {
    VF_NONE = 0,   /* no form both sides agree on: left out of the checksum */
    VF_NUM,        /* integers, YEAR: (c+0) vs the int, long or decimal(20,0) */
    VF_BOOL,       /* TINYINT(1) as boolean, BIT(1): (c<>0) vs 1/0 */
    VF_BITS,       /* BIT(n): (c+0) vs the long as unsigned */
    VF_DEC,        /* DECIMAL: CAST(c AS CHAR) vs the decimal, or the exact text (p > 38) */
    VF_REAL,       /* FLOAT, DOUBLE: rounded to 6 decimals (see verify_canon.c) */
    VF_DATE,       /* YYYY-MM-DD */
    VF_DATETIME,   /* YYYY-MM-DD HH:MM:SS.ffffff (timestamps in UTC) */
    VF_TIME,       /* HH:MM:SS.ffffff */
    VF_TEXTHEX,    /* the UTF-8 bytes in hex: strings, ENUM, SET, JSON, TIME as string */
    VF_BINHEX,     /* the bytes in hex */
    VF_WKB         /* geometry: its WKB in hex */
} w2l__vform;

/* How a key column's values order (for bucketing lake rows into key ranges). */
typedef enum w2l__vkey {
    VK_NONE = 0,   /* cannot key a range (float, JSON, geometry): the table is whole */
    VK_NUM,        /* decimal text, compared by value */
    VK_FIXED,      /* fixed-width text (dates, times), compared bytewise */
    VK_STR,        /* character strings: bytewise here, by collation on the server; a
                      range that differs is compared again row by row */
    VK_BIN         /* bytes, compared bytewise as the server does */
} w2l__vkey;

/* The form of a column of MySQL type mt held in the lake as lake (VF_NONE: none agrees). */
w2l__vform w2l__verify_form(const w2l__mysql_type *mt, w2l_type lake);
/* The key kind of such a column. */
w2l__vkey w2l__verify_key_kind(const w2l__mysql_type *mt, w2l_type lake);

/* Appends the SQL expression of column col (quoted here) in form f to b: its canonical
 * text, NULL for NULL. */
w2l_rc w2l__verify_sql_expr(w2l__vform f, const char *col, w2l_buf *b, w2l_error *err);
/* Appends the SQL expression that selects a key column for range bounds and per-row keys. */
w2l_rc w2l__verify_sql_key(w2l__vkey k, w2l__vform f, const char *col, w2l_buf *b,
                           w2l_error *err);
/* Appends `col` quoted as an identifier. */
w2l_rc w2l__verify_ident(const char *name, w2l_buf *b, w2l_error *err);

/* Appends the canonical text of lake value v (type t) in form f ("~" for NULL). */
w2l_rc w2l__verify_canon(w2l__vform f, w2l_type t, const w2l_value *v, w2l_buf *b,
                         w2l_error *err);
/* Appends the key text of lake value v: what w2l__verify_sql_key selects. */
w2l_rc w2l__verify_key_text(w2l__vkey k, w2l__vform f, w2l_type t, const w2l_value *v,
                            w2l_buf *b, w2l_error *err);
/* The hash of a row text. */
uint64_t w2l__verify_hash(const void *text, size_t n);
/* Compares two key texts of kind k as the server orders them (VK_STR: bytewise). */
int w2l__verify_key_cmp(w2l__vkey k, const char *a, size_t al, const char *b, size_t bl);

/* A key: one text per key column. */
typedef struct w2l__vkeyval {
    const char *const *p;
    const size_t *len;
} w2l__vkeyval;
/* Compares keys of n columns of kinds ks, column by column. */
int w2l__verify_keys_cmp(const w2l__vkey *ks, size_t n, w2l__vkeyval a, w2l__vkeyval b);
/* The range of key among nb upper bounds (ascending): range i holds keys in
 * (bound[i-1], bound[i]], range nb the keys above the last bound. */
size_t w2l__verify_bucket(const w2l__vkey *ks, size_t n, const w2l__vkeyval *bounds, size_t nb,
                          w2l__vkeyval key);
/* Appends a key as SQL literals for a WHERE clause (numbers as they are, texts quoted by
 * the caller's quote function, binaries as X'..'). quote appends a quoted literal. */
typedef w2l_rc (*w2l__vquote_fn)(void *ctx, w2l_buf *b, const char *s, size_t len,
                                 w2l_error *err);
w2l_rc w2l__verify_literal(w2l__vkey k, const char *s, size_t len, w2l__vquote_fn q, void *qctx,
                           w2l_buf *b, w2l_error *err);
/* Appends the key for people: (1, 'abc', 0x00ff). */
w2l_rc w2l__verify_key_show(const w2l__vkey *ks, size_t n, w2l__vkeyval key, w2l_buf *b,
                            w2l_error *err);

#endif
