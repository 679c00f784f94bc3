/*
 * Internals of lib/ddl shared by its files: the token array of ddl_lex.c and the cursor
 * that ddl_parse.c and type_map.c read statements with. Nothing here is used outside
 * lib/ddl.
 */
#ifndef W2L_DDL_INT_H
#define W2L_DDL_INT_H

#include "ddl.h"

enum {
    W2L__TK_END = 0, /* end of input (one sentinel token at the end of every array) */
    W2L__TK_WORD,    /* bare identifier or keyword: [A-Za-z0-9_$] and bytes >= 0x80 */
    W2L__TK_QIDENT,  /* `quoted identifier` */
    W2L__TK_STRING,  /* 'string' or "string" (dq set); also N'..', X'..', B'..' bodies */
    W2L__TK_NUMBER,  /* 12, 1.5, .5e3, 0x1F, 0b101 */
    W2L__TK_PUNCT    /* one byte: ( ) , ; . = @ + - ... and any other byte */
};

typedef struct w2l__ddl_tok {
    size_t off, len;    /* bytes of the token in the input, quotes included */
    unsigned line, col; /* 1-based, columns in bytes */
    unsigned char kind;
    unsigned char dq;   /* STRING: double-quoted (an identifier under ANSI_QUOTES) */
    unsigned char hex;  /* STRING: X'..' or B'..' literal */
} w2l__ddl_tok;

typedef struct w2l__ddl_toks {
    w2l__ddl_tok *v;
    size_t n; /* tokens, not counting the END sentinel at v[n] */
} w2l__ddl_toks;

/* Tokenizes len bytes; comments are dropped, the content of versioned comments
 * (slash-star-bang 40101 ..., MariaDB's slash-star-M-bang 100100 ...) is kept as code. W2L_CORRUPT
 * for an unterminated string, quoted identifier or comment; W2L_NOMEM. Free with
 * w2l__ddl_toks_free. */
w2l_rc w2l__ddl_lex(const char *sql, size_t len, w2l__ddl_toks *out, w2l_error *err);
void w2l__ddl_toks_free(w2l__ddl_toks *t);

/* A read position over tokens [i, end) of one statement. */
typedef struct w2l__ddl_cur {
    const char *sql;
    const w2l__ddl_tok *tok;
    size_t i, end;
    w2l__ddl_tok eos;   /* returned for peeks past end: kind END at the end position */
    w2l__arena *arena;  /* decoded texts; may be NULL for type_map without values */
    w2l_error *err;
} w2l__ddl_cur;

void w2l__ddl_cur_init(w2l__ddl_cur *c, const char *sql, const w2l__ddl_toks *t, size_t from,
                       size_t end, w2l__arena *a, w2l_error *err);
const w2l__ddl_tok *w2l__ddl_peek(const w2l__ddl_cur *c, size_t k);
int w2l__ddl_at_end(const w2l__ddl_cur *c);
/* 1 when token i+k is the bare word kw (ASCII case-insensitive). */
int w2l__ddl_is_kw(const w2l__ddl_cur *c, size_t k, const char *kw);
int w2l__ddl_accept_kw(w2l__ddl_cur *c, const char *kw);
int w2l__ddl_is_punct(const w2l__ddl_cur *c, size_t k, char ch);
int w2l__ddl_accept_punct(w2l__ddl_cur *c, char ch);
/* 1 when token i+k can be an identifier: a word, a `quoted` one or a "double-quoted"
 * string (ANSI_QUOTES). */
int w2l__ddl_is_ident(const w2l__ddl_cur *c, size_t k);
/* W2L_CORRUPT "DDL: <what> at line L column C: near '<token>'" at the current token. */
w2l_rc w2l__ddl_error(w2l__ddl_cur *c, const char *what);
/* The decoded text of a token (identifier unquoted, string unescaped, adjacent strings
 * not joined) in the cursor's arena; NULL when out of memory. */
char *w2l__ddl_decode(w2l__ddl_cur *c, const w2l__ddl_tok *t);
/* Reads an identifier into *out (arena). */
w2l_rc w2l__ddl_ident(w2l__ddl_cur *c, const char **out, const char *what);
/* Reads one or more adjacent string literals as one decoded string. */
w2l_rc w2l__ddl_string(w2l__ddl_cur *c, const char **out, const char *what);
/* At '(' : moves past the matching ')'. */
w2l_rc w2l__ddl_skip_parens(w2l__ddl_cur *c);
/* The source text of tokens [from, to) as written, in the arena. */
char *w2l__ddl_span(w2l__ddl_cur *c, size_t from, size_t to);
/* ASCII case-insensitive equality of n bytes of s with NUL-terminated kw. */
int w2l__ddl_word_eq(const char *s, size_t n, const char *kw);

/* type_map.c: reads a data type at the cursor (name, arguments, UNSIGNED/ZEROFILL,
 * CHARACTER SET, COLLATE, BINARY, ...) and fills out, derived fields included. */
w2l_rc w2l__ddl_read_type(w2l__ddl_cur *c, w2l__mysql_type *out);
/* Re-derives the fields that depend on attributes read after the type (charset binary
 * turning text into binary). */
void w2l__mysql_type_finish(w2l__mysql_type *t);

#endif
