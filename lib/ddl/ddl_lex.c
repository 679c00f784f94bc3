/*
 * The MySQL/MariaDB tokenizer of lib/ddl, and the cursor the statement and type parsers
 * read tokens with (ddl_int.h).
 *
 * Lexical rules followed (MySQL reference manual, "Comments", "Schema Object Names",
 * "String Literals"; default sql_mode):
 *   - comments: "#" and "-- " (two dashes then a space or control byte) to end of line;
 *     "/" "*" ... "*" "/". "/" "*!" [5-6 digit version] ... and MariaDB's "/" "*M!" version
 *     are versioned comments: their content is code, whatever the version (statements
 *     come from a server that already ran them, and every version gate in dumps and
 *     binlogs names an older server than any we replicate from).
 *   - `quoted identifiers` with `` for a backtick; "double quotes" make a string (an
 *     identifier only under ANSI_QUOTES; the parser accepts one wherever it needs an
 *     identifier, since a string is never valid there).
 *   - 'strings' with '' and backslash escapes (NO_BACKSLASH_ESCAPES is not honoured);
 *     N'..' national strings, X'..'/B'..' literals; a word may start with digits (1abc).
 * Every token keeps its byte span and line/column for messages.
 */
#include <stdio.h>

#include "ddl_int.h"

static int is_word_byte(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '$' || ch >= 0x80;
}
static int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }
static int is_space(unsigned char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}
static int is_hex(unsigned char ch)
{
    return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

typedef struct lexer {
    const char *s;
    size_t len, p;
    unsigned line;
    size_t line_start;
    w2l__ddl_toks *out;
    size_t cap;
    w2l_error *err;
} lexer;

static unsigned col_of(const lexer *lx, size_t off) { return (unsigned)(off - lx->line_start + 1); }

/* Advances over [p, to), counting lines. */
static void advance(lexer *lx, size_t to)
{
    for (; lx->p < to; lx->p++)
        if (lx->s[lx->p] == '\n') {
            lx->line++;
            lx->line_start = lx->p + 1;
        }
}

static w2l_rc push(lexer *lx, unsigned char kind, size_t off, size_t len, unsigned line,
                   unsigned col, int dq, int hex)
{
    w2l__ddl_toks *t = lx->out;
    if (t->n + 2 > lx->cap) {
        size_t nc = lx->cap ? lx->cap * 2 : 64;
        w2l__ddl_tok *v = w2l__realloc(t->v, nc * sizeof *v);
        if (!v) return w2l__fail(lx->err, W2L_NOMEM, "DDL: out of memory tokenizing");
        t->v = v;
        lx->cap = nc;
    }
    w2l__ddl_tok *k = &t->v[t->n++];
    k->off = off;
    k->len = len;
    k->line = line;
    k->col = col;
    k->kind = kind;
    k->dq = (unsigned char)dq;
    k->hex = (unsigned char)hex;
    return W2L_OK;
}

static w2l_rc unterminated(lexer *lx, const char *what, unsigned line, unsigned col,
                           const char *near)
{
    return w2l__fail(lx->err, W2L_CORRUPT, "DDL: unterminated %s at line %u column %u: near '%s'",
                     what, line, col, near);
}

/* Index just past the closing quote q starting from the byte after the opening one;
 * 0 when unterminated. Backslash escapes apply to strings, not to identifiers. */
static size_t scan_quoted(const char *s, size_t len, size_t p, char q, int backslash)
{
    while (p < len) {
        char ch = s[p];
        if (backslash && ch == '\\') {
            p += 2;
            continue;
        }
        if (ch == q) {
            if (p + 1 < len && s[p + 1] == q) {
                p += 2;
                continue;
            }
            return p + 1;
        }
        p++;
    }
    return 0;
}

/* End of a number starting at p (digits[.digits][e[+-]digits], .digits..., 0x.., 0b..),
 * or 0 when none starts there or a word byte follows it (then it is a word: 1abc). */
static size_t scan_number(const char *s, size_t len, size_t p)
{
    size_t e = p;
    if (e + 2 < len && s[e] == '0' && (s[e + 1] == 'x' || s[e + 1] == 'b')) {
        size_t h = e + 2;
        while (h < len && (s[e + 1] == 'x' ? is_hex((unsigned char)s[h])
                                          : (s[h] == '0' || s[h] == '1')))
            h++;
        if (h > e + 2 && (h >= len || !is_word_byte((unsigned char)s[h]))) return h;
    }
    size_t int_digits = 0, frac_digits = 0;
    while (e < len && is_digit((unsigned char)s[e])) e++, int_digits++;
    if (e < len && s[e] == '.') {
        size_t f = e + 1;
        while (f < len && is_digit((unsigned char)s[f])) f++, frac_digits++;
        if (int_digits || frac_digits) e = f;
    }
    if (!int_digits && !frac_digits) return 0;
    if (e < len && (s[e] == 'e' || s[e] == 'E')) {
        size_t x = e + 1;
        if (x < len && (s[x] == '+' || s[x] == '-')) x++;
        size_t d = x;
        while (d < len && is_digit((unsigned char)s[d])) d++;
        if (d > x) e = d;
    }
    if (e < len && is_word_byte((unsigned char)s[e])) return 0;
    return e;
}

w2l_rc w2l__ddl_lex(const char *sql, size_t len, w2l__ddl_toks *out, w2l_error *err)
{
    out->v = NULL;
    out->n = 0;
    lexer lx = {sql, len, 0, 1, 0, out, 0, err};
    int in_versioned = 0;
    w2l_rc rc = W2L_OK;
    while (lx.p < len) {
        const unsigned char ch = (unsigned char)sql[lx.p];
        const unsigned char nx = lx.p + 1 < len ? (unsigned char)sql[lx.p + 1] : 0;
        const size_t start = lx.p;
        const unsigned line = lx.line, col = col_of(&lx, start);
        if (is_space(ch)) {
            advance(&lx, lx.p + 1);
            continue;
        }
        if (in_versioned && ch == '*' && nx == '/') {
            in_versioned = 0;
            lx.p += 2;
            continue;
        }
        if (ch == '#' || (ch == '-' && nx == '-' &&
                          (lx.p + 2 >= len || (unsigned char)sql[lx.p + 2] <= ' '))) {
            while (lx.p < len && sql[lx.p] != '\n') lx.p++;
            continue;
        }
        if (ch == '/' && nx == '*') {
            size_t q = lx.p + 2;
            int versioned = 0;
            if (q < len && sql[q] == '!') versioned = 1, q++;
            else if (q + 1 < len && sql[q] == 'M' && sql[q + 1] == '!') versioned = 1, q += 2;
            if (versioned) {
                size_t d = 0;
                while (q + d < len && d < 6 && is_digit((unsigned char)sql[q + d])) d++;
                if (d == 5 || d == 6) q += d;
                in_versioned = 1;
                advance(&lx, q);
                continue;
            }
            size_t e = q;
            while (e + 1 < len && !(sql[e] == '*' && sql[e + 1] == '/')) e++;
            if (e + 1 >= len) {
                rc = unterminated(&lx, "comment", line, col, "/*");
                break;
            }
            advance(&lx, e + 2);
            continue;
        }
        if (ch == '`') {
            size_t e = scan_quoted(sql, len, lx.p + 1, '`', 0);
            if (!e) {
                char near[24]; /* the input is not NUL-terminated: copy, never %s */
                size_t m = len - start < 20 ? len - start : 20;
                memcpy(near, sql + start, m);
                near[m] = '\0';
                for (size_t k = 0; k < m; k++)
                    if ((unsigned char)near[k] < ' ' || near[k] == 0x7f || near[k] == '\'')
                        near[k] = '?';
                rc = unterminated(&lx, "quoted identifier", line, col, near);
                break;
            }
            if ((rc = push(&lx, W2L__TK_QIDENT, start, e - start, line, col, 0, 0))) break;
            advance(&lx, e);
            continue;
        }
        int prefixed = (ch == 'x' || ch == 'X' || ch == 'b' || ch == 'B' || ch == 'n' ||
                        ch == 'N') && nx == '\'';
        if (ch == '\'' || ch == '"' || prefixed) {
            size_t body = lx.p + (prefixed ? 2 : 1);
            char q = prefixed ? '\'' : (char)ch;
            size_t e = scan_quoted(sql, len, body, q, 1);
            if (!e) {
                rc = unterminated(&lx, "string literal", line, col, "<string>");
                break;
            }
            int hex = prefixed && ch != 'n' && ch != 'N';
            if ((rc = push(&lx, W2L__TK_STRING, start, e - start, line, col, ch == '"', hex)))
                break;
            advance(&lx, e);
            continue;
        }
        int prev_adjacent_name =
            out->n && out->v[out->n - 1].off + out->v[out->n - 1].len == start &&
            (out->v[out->n - 1].kind == W2L__TK_WORD || out->v[out->n - 1].kind == W2L__TK_QIDENT);
        size_t e = (ch == '.' && prev_adjacent_name) ? 0 : scan_number(sql, len, start);
        if (e) {
            if ((rc = push(&lx, W2L__TK_NUMBER, start, e - start, line, col, 0, 0))) break;
            advance(&lx, e);
            continue;
        }
        if (is_word_byte(ch)) {
            e = start;
            while (e < len && is_word_byte((unsigned char)sql[e])) e++;
            if ((rc = push(&lx, W2L__TK_WORD, start, e - start, line, col, 0, 0))) break;
            advance(&lx, e);
            continue;
        }
        if ((rc = push(&lx, W2L__TK_PUNCT, start, 1, line, col, 0, 0))) break;
        advance(&lx, lx.p + 1);
    }
    if (rc == W2L_OK && in_versioned) {
        /* MySQL accepts a versioned comment left open at the end of a statement */
        in_versioned = 0;
    }
    if (rc == W2L_OK && (rc = push(&lx, W2L__TK_END, len, 0, lx.line, col_of(&lx, len), 0, 0)) ==
                            W2L_OK) {
        out->n--; /* the sentinel sits at v[n] */
        return W2L_OK;
    }
    w2l__ddl_toks_free(out);
    return rc;
}

void w2l__ddl_toks_free(w2l__ddl_toks *t)
{
    if (!t) return;
    w2l__free(t->v);
    t->v = NULL;
    t->n = 0;
}

/* ---- cursor ---- */

void w2l__ddl_cur_init(w2l__ddl_cur *c, const char *sql, const w2l__ddl_toks *t, size_t from,
                       size_t end, w2l__arena *a, w2l_error *err)
{
    c->sql = sql;
    c->tok = t->v;
    c->i = from;
    c->end = end;
    c->eos = t->v[end];
    c->eos.kind = W2L__TK_END;
    c->eos.len = 0;
    if (end > from) { /* point just after the statement's last token */
        const w2l__ddl_tok *last = &t->v[end - 1];
        c->eos.off = last->off + last->len;
        c->eos.line = last->line;
        c->eos.col = last->col + (unsigned)last->len;
        for (size_t k = 0; k < last->len; k++) /* multi-line string: recount */
            if (sql[last->off + k] == '\n') {
                c->eos.line++;
                c->eos.col = (unsigned)(last->len - k);
            }
    }
    c->arena = a;
    c->err = err;
}

const w2l__ddl_tok *w2l__ddl_peek(const w2l__ddl_cur *c, size_t k)
{
    return c->i + k < c->end ? &c->tok[c->i + k] : &c->eos;
}

int w2l__ddl_at_end(const w2l__ddl_cur *c) { return c->i >= c->end; }

int w2l__ddl_word_eq(const char *s, size_t n, const char *kw)
{
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)kw[i];
        if (!b) return 0;
        if (a >= 'a' && a <= 'z') a = (unsigned char)(a - 32);
        if (b >= 'a' && b <= 'z') b = (unsigned char)(b - 32);
        if (a != b) return 0;
    }
    return kw[i] == '\0';
}

int w2l__ddl_is_kw(const w2l__ddl_cur *c, size_t k, const char *kw)
{
    const w2l__ddl_tok *t = w2l__ddl_peek(c, k);
    return t->kind == W2L__TK_WORD && w2l__ddl_word_eq(c->sql + t->off, t->len, kw);
}

int w2l__ddl_accept_kw(w2l__ddl_cur *c, const char *kw)
{
    if (!w2l__ddl_is_kw(c, 0, kw)) return 0;
    c->i++;
    return 1;
}

int w2l__ddl_is_punct(const w2l__ddl_cur *c, size_t k, char ch)
{
    const w2l__ddl_tok *t = w2l__ddl_peek(c, k);
    return t->kind == W2L__TK_PUNCT && c->sql[t->off] == ch;
}

int w2l__ddl_accept_punct(w2l__ddl_cur *c, char ch)
{
    if (!w2l__ddl_is_punct(c, 0, ch)) return 0;
    c->i++;
    return 1;
}

int w2l__ddl_is_ident(const w2l__ddl_cur *c, size_t k)
{
    const w2l__ddl_tok *t = w2l__ddl_peek(c, k);
    return t->kind == W2L__TK_WORD || t->kind == W2L__TK_QIDENT ||
           (t->kind == W2L__TK_STRING && t->dq);
}

w2l_rc w2l__ddl_error(w2l__ddl_cur *c, const char *what)
{
    const w2l__ddl_tok *t = w2l__ddl_peek(c, 0);
    char near[48];
    if (t->kind == W2L__TK_STRING) {
        snprintf(near, sizeof near, "<string>"); /* may be a secret: never echoed */
    } else {
        size_t n = t->len < 40 ? t->len : 40;
        memcpy(near, c->sql + t->off, n);
        near[n] = '\0';
        for (size_t k = 0; k < n; k++)
            if ((unsigned char)near[k] < ' ' || near[k] == 0x7f || near[k] == '\'') near[k] = '?';
    }
    return w2l__fail(c->err, W2L_CORRUPT, "DDL: %s at line %u column %u: near '%s'", what, t->line,
                     t->col, near);
}

/* Decodes one escape after a backslash, as MySQL does ("String Literals", Table 11.1). */
static char unescape(char e)
{
    switch (e) {
    case '0': return '\0';
    case 'b': return '\b';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'Z': return '\032';
    default: return e;
    }
}

char *w2l__ddl_decode(w2l__ddl_cur *c, const w2l__ddl_tok *t)
{
    if (!c->arena) return NULL;
    const char *s = c->sql + t->off;
    size_t n = t->len;
    if (t->kind != W2L__TK_QIDENT && t->kind != W2L__TK_STRING)
        return w2l__arena_strndup(c->arena, s, n);
    size_t skip = (t->kind == W2L__TK_STRING && s[0] != '\'' && s[0] != '"') ? 2 : 1;
    char q = s[skip - 1];
    const char *b = s + skip;
    size_t bn = n - skip - 1;
    char *d = w2l__arena_alloc(c->arena, bn + 1);
    if (!d) return NULL;
    size_t o = 0;
    for (size_t k = 0; k < bn; k++) {
        if (t->kind == W2L__TK_STRING && b[k] == '\\' && k + 1 < bn) {
            char e = b[++k];
            if (e == '%' || e == '_') d[o++] = '\\'; /* kept for LIKE patterns */
            d[o++] = unescape(e);
        } else if (b[k] == q && k + 1 < bn && b[k + 1] == q) {
            d[o++] = q;
            k++;
        } else {
            d[o++] = b[k];
        }
    }
    d[o] = '\0';
    return d;
}

w2l_rc w2l__ddl_ident(w2l__ddl_cur *c, const char **out, const char *what)
{
    if (!w2l__ddl_is_ident(c, 0)) return w2l__ddl_error(c, what);
    char *s = w2l__ddl_decode(c, w2l__ddl_peek(c, 0));
    W2L_NOMEM_IF(!s, c->err);
    if (!s[0]) return w2l__ddl_error(c, "empty identifier");
    c->i++;
    *out = s;
    return W2L_OK;
}

w2l_rc w2l__ddl_string(w2l__ddl_cur *c, const char **out, const char *what)
{
    const w2l__ddl_tok *t = w2l__ddl_peek(c, 0);
    if (t->kind != W2L__TK_STRING) return w2l__ddl_error(c, what);
    char *s = w2l__ddl_decode(c, t);
    W2L_NOMEM_IF(!s, c->err);
    c->i++;
    while (w2l__ddl_peek(c, 0)->kind == W2L__TK_STRING && !w2l__ddl_peek(c, 0)->hex) {
        char *more = w2l__ddl_decode(c, w2l__ddl_peek(c, 0));
        W2L_NOMEM_IF(!more, c->err);
        size_t a = strlen(s), b = strlen(more);
        char *j = w2l__arena_alloc(c->arena, a + b + 1);
        W2L_NOMEM_IF(!j, c->err);
        memcpy(j, s, a);
        memcpy(j + a, more, b + 1);
        s = j;
        c->i++;
    }
    *out = s;
    return W2L_OK;
}

w2l_rc w2l__ddl_skip_parens(w2l__ddl_cur *c)
{
    if (!w2l__ddl_is_punct(c, 0, '(')) return w2l__ddl_error(c, "expected '('");
    size_t depth = 0;
    while (!w2l__ddl_at_end(c)) {
        if (w2l__ddl_is_punct(c, 0, '(')) depth++;
        else if (w2l__ddl_is_punct(c, 0, ')') && --depth == 0) {
            c->i++;
            return W2L_OK;
        }
        c->i++;
    }
    return w2l__ddl_error(c, "missing ')'");
}

char *w2l__ddl_span(w2l__ddl_cur *c, size_t from, size_t to)
{
    if (!c->arena) return NULL;
    if (to <= from) return w2l__arena_strndup(c->arena, "", 0);
    size_t a = c->tok[from].off, b = c->tok[to - 1].off + c->tok[to - 1].len;
    return w2l__arena_strndup(c->arena, c->sql + a, b - a);
}
