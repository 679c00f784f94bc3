/*
 * The JSON parser (json.h: w2l__json_parse). One pass over the text builds the tree in an
 * arena the root owns (json_int.h): no per-node malloc, strings unescaped once, numbers
 * kept as the text written (never through a double), NUL bytes in strings kept with the
 * string's length.
 *
 * Accepted: RFC 8259 JSON, plus what the former parser (cJSON) accepted and producers
 * rely on: a UTF-8 byte order mark before the value, and control bytes and invalid UTF-8
 * inside strings, kept as they are. Rejected with "line L, column C" of the first bad
 * byte: anything else, including numbers outside the RFC grammar ("01", "+1", ".5",
 * "1e"), unknown escapes, \u escapes that are not 4 hex digits, lone or reversed UTF-16
 * surrogates (as cJSON), nesting deeper than W2L_JSON_MAX_DEPTH, and text after the value.
 * Duplicate member names are all kept, in order (w2l__json_get finds the first).
 */
#include "json_int.h"

typedef struct parser {
    const char *start, *end; /* the text as given, for error positions */
    char *p, *e;             /* the arena's copy being parsed, unescaped in place */
    char *cur, *lim;         /* free room of the arena block nodes are cut from */
    w2l__arena *a;
    w2l__json_mem *home;     /* where the arena's state goes, shared by every node */
    const char *why;         /* the error, at p */
    int nomem;
    int depth;
    const w2l__json_rawspec *raw; /* w2l__json_parse_raw: the root members kept as text */
    int unsure;              /* a raw member's check gave up: parse the whole text again */
} parser;

static int fail(parser *ps, char *at, const char *why)
{
    ps->p = at;
    ps->why = why;
    return -1;
}

/* n bytes (a multiple of 8) for nodes and number text: cut from the current block, which
 * is taken from the arena in pieces of NODE_BLOCK */
#define NODE_BLOCK 4096
static void *palloc(parser *ps, size_t n)
{
    if ((size_t)(ps->lim - ps->cur) < n) {
        size_t sz = n > NODE_BLOCK ? n : NODE_BLOCK;
        char *b = w2l__arena_alloc(ps->a, sz);
        if (!b) {
            ps->nomem = 1;
            return NULL;
        }
        ps->cur = b;
        ps->lim = b + sz;
    }
    void *m = ps->cur;
    ps->cur += n;
    return m;
}

static void skip_blanks(parser *ps)
{
    char *p = ps->p, *e = ps->e;
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    ps->p = p;
}

/* Whitespace is rare in producers' JSON: one test inline, the loop out of line. */
static inline void skip_ws(parser *ps)
{
    if (ps->p < ps->e && (unsigned char)*ps->p <= ' ') skip_blanks(ps);
}

#define SENTINEL W2L_JSON_SCAN_PAD
/* The first '"' or '\\' at or after p (the text ends in SENTINEL '"'s, which stop it). */
static inline char *quote_at(const char *p) { return (char *)w2l__json_scan_quote(p); }

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        unsigned h = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (h > 15) return -1;
        v = v << 4 | h;
    }
    *out = v;
    return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* The rest of a string from its first backslash at bs (b: its first byte), unescaped in
 * place: out of line, as producers rarely escape. */
static int unescape(parser *ps, char *b, char *bs, char **out, size_t *outlen)
{
    char *e = ps->e, *o = bs, *q = bs;
    for (;;) {
        if (q >= e) return fail(ps, ps->p, "unterminated string");
        if (*q == '"') break;
        if (*q != '\\') {
            *o++ = *q++;
            continue;
        }
        char *esc = q;
        if (e - q < 2) return fail(ps, ps->p, "unterminated string");
        char c = q[1];
        q += 2;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (e - q < 4 || hex4(q, &cp)) return fail(ps, esc, "\\u needs 4 hex digits");
            q += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) return fail(ps, esc, "lone UTF-16 low surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (e - q < 6 || q[0] != '\\' || q[1] != 'u' || hex4(q + 2, &lo) || lo < 0xdc00 ||
                    lo > 0xdfff)
                    return fail(ps, esc, "UTF-16 high surrogate without its low surrogate");
                q += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            o = put_utf8(o, cp);
            break;
        }
        default: return fail(ps, esc, "unknown escape");
        }
    }
    *o = '\0';
    *out = b;
    *outlen = (size_t)(o - b);
    ps->p = q + 1;
    return 0;
}

/* The string whose opening quote is at ps->p, unescaped in place (the decoded text is
 * never longer than the escaped one) and NUL-terminated over its closing quote. */
static inline int parse_string(parser *ps, char **out, size_t *outlen)
{
    char *b = ps->p + 1, *q = quote_at(b);
    if (q >= ps->e) return fail(ps, ps->p, "unterminated string");
    if (*q == '\\') return unescape(ps, b, q, out, outlen);
    *q = '\0';
    *out = b;
    *outlen = (size_t)(q - b);
    ps->p = q + 1;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The end of the number at p: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; NULL with
 * *why at *at when it is not one. */
static char *number_end(char *p, char *e, char **at, const char **why)
{
    if (p < e && *p == '-') p++;
    if (p >= e || !is_digit(*p)) return *at = p, *why = "malformed number", NULL;
    if (*p == '0') {
        p++;
        if (p < e && is_digit(*p)) return *at = p, *why = "number with a leading zero", NULL;
    } else {
        while (p < e && is_digit(*p)) p++;
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || !is_digit(*p))
            return *at = p, *why = "malformed number: digits expected", NULL;
        while (p < e && is_digit(*p)) p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || !is_digit(*p))
            return *at = p, *why = "malformed number: exponent expected", NULL;
        while (p < e && is_digit(*p)) p++;
    }
    return p;
}

/* A number, its text copied */
static int parse_number(parser *ps, w2l__json *j)
{
    char *b = ps->p, *at;
    const char *why;
    char *p = number_end(b, ps->e, &at, &why);
    if (!p) return fail(ps, at, why);
    size_t n = (size_t)(p - b);
    char *s = palloc(ps, (n + 8) & ~(size_t)7);
    if (!s) return -1;
    memcpy(s, b, n);
    s[n] = '\0';
    j->kind = W2L_JSON_NUMBER;
    j->s = s;
    j->n = n;
    ps->p = p;
    return 0;
}

static int literal(parser *ps, const char *word, size_t n)
{
    if ((size_t)(ps->e - ps->p) < n || memcmp(ps->p, word, n))
        return fail(ps, ps->p, ps->p < ps->e ? "unexpected character" : "unexpected end of input");
    ps->p += n;
    return 0;
}

static w2l__json *new_node(parser *ps)
{
    w2l__json *j = palloc(ps, sizeof *j);
    if (j) {
        memset(j, 0, sizeof *j);
        j->mem = ps->home;
    }
    return j;
}

static int parse_value(parser *ps, w2l__json *j);

/* ---- raw members: checked, not built ---- */

/* Skips the string at ps->p without changing it. Escapes other than \uXXXX... are plain;
 * \u (rare in producers' type names) gives up: the whole text is then parsed again, so
 * the two parsers can never disagree on what is valid. */
static int skip_string(parser *ps)
{
    char *q = ps->p + 1;
    for (;;) {
        q = quote_at(q);
        if (q >= ps->e) return ps->unsure = 1, -1;
        if (*q == '"') break;
        if (ps->e - q < 2 || !strchr("\"\\/bfnrt", q[1]) || !q[1]) return ps->unsure = 1, -1;
        q += 2;
    }
    ps->p = q + 1;
    return 0;
}

/* Skips the value at ps->p, checking it as parse_value would; -1 (unsure) wherever it
 * is not plainly valid. */
static int skip_value(parser *ps)
{
    if (ps->p >= ps->e) return ps->unsure = 1, -1;
    char c = *ps->p;
    if (c == '"') return skip_string(ps);
    if (c == 't') return literal(ps, "true", 4) ? (ps->unsure = 1, -1) : 0;
    if (c == 'f') return literal(ps, "false", 5) ? (ps->unsure = 1, -1) : 0;
    if (c == 'n') return literal(ps, "null", 4) ? (ps->unsure = 1, -1) : 0;
    if (c == '-' || is_digit(c)) {
        char *at;
        const char *why;
        char *end = number_end(ps->p, ps->e, &at, &why);
        if (!end) return ps->unsure = 1, -1;
        ps->p = end;
        return 0;
    }
    if (c != '{' && c != '[') return ps->unsure = 1, -1;
    const char close = c == '{' ? '}' : ']';
    if (++ps->depth > W2L_JSON_MAX_DEPTH) return ps->unsure = 1, -1;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->e && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            if (ps->p >= ps->e || *ps->p != '"' || skip_string(ps)) return ps->unsure = 1, -1;
            skip_ws(ps);
            if (ps->p >= ps->e || *ps->p != ':') return ps->unsure = 1, -1;
            ps->p++;
            skip_ws(ps);
        }
        if (skip_value(ps)) return -1;
        skip_ws(ps);
        if (ps->p >= ps->e) return ps->unsure = 1, -1;
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (*ps->p == close) break;
        return ps->unsure = 1, -1;
    }
    ps->p++;
    ps->depth--;
    return 0;
}

/* A member of the root object named in ps->raw whose value is an object or array: kept
 * as its text. 1 when it was, 0 when the member is parsed as usual, -1 on failure. */
static int raw_member(parser *ps, w2l__json *c)
{
    if (!ps->raw || ps->depth != 1 || ps->p >= ps->e || (*ps->p != '{' && *ps->p != '['))
        return 0;
    size_t i = 0;
    while (ps->raw->names[i] && strcmp(ps->raw->names[i], c->key)) i++;
    if (!ps->raw->names[i]) return 0;
    char *b = ps->p;
    c->kind = *b == '{' ? W2L_JSON_OBJECT : W2L_JSON_ARRAY;
    size_t known = ps->raw->known ? ps->raw->known(ps->raw->ctx, i, b, (size_t)(ps->e - b)) : 0;
    if (known) ps->p += known; /* a whole valid value: it ends there */
    else if (skip_value(ps)) return -1;
    c->s = b;
    c->n = (size_t)(ps->p - b);
    c->flags |= JF_RAW;
    return 1;
}

static void link_child(w2l__json *parent, w2l__json *c)
{
    if (parent->last) parent->last->next = c;
    else parent->child = c;
    parent->last = c;
}

static int parse_container(parser *ps, w2l__json *j, int object)
{
    const char close = object ? '}' : ']';
    if (++ps->depth > W2L_JSON_MAX_DEPTH) return fail(ps, ps->p, "nested too deeply");
    j->kind = object ? W2L_JSON_OBJECT : W2L_JSON_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->e && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        w2l__json *c = new_node(ps);
        if (!c) return -1;
        if (object) {
            if (ps->p >= ps->e || *ps->p != '"')
                return fail(ps, ps->p, ps->p < ps->e ? "member name expected"
                                                       : "unexpected end of input");
            if (parse_string(ps, &c->key, &c->klen)) return -1;
            skip_ws(ps);
            if (ps->p >= ps->e || *ps->p != ':')
                return fail(ps, ps->p, ps->p < ps->e ? "':' expected" : "unexpected end of input");
            ps->p++;
            skip_ws(ps);
        }
        int r = object ? raw_member(ps, c) : 0;
        if (r < 0 || (r == 0 && parse_value(ps, c))) return -1;
        link_child(j, c);
        skip_ws(ps);
        if (ps->p >= ps->e) return fail(ps, ps->p, "unexpected end of input");
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            continue;
        }
        if (*ps->p == close) break;
        return fail(ps, ps->p, object ? "',' or '}' expected" : "',' or ']' expected");
    }
    ps->p++;
    ps->depth--;
    return 0;
}

static int parse_value(parser *ps, w2l__json *j)
{
    if (ps->p >= ps->e) return fail(ps, ps->p, "unexpected end of input");
    switch (*ps->p) {
    case '{': return parse_container(ps, j, 1);
    case '[': return parse_container(ps, j, 0);
    case '"':
        j->kind = W2L_JSON_STRING;
        return parse_string(ps, &j->s, &j->n);
    case 't': j->kind = W2L_JSON_BOOL, j->bval = 1; return literal(ps, "true", 4);
    case 'f': j->kind = W2L_JSON_BOOL; return literal(ps, "false", 5);
    case 'n': j->kind = W2L_JSON_NULL; return literal(ps, "null", 4);
    default:
        if (*ps->p == '-' || is_digit(*ps->p)) return parse_number(ps, j);
        return fail(ps, ps->p, "unexpected character");
    }
}

static w2l_rc located(const parser *ps, const char *what, w2l_error *err)
{
    size_t line = 1, col = 1;
    size_t off = ps->p && ps->e ? (size_t)(ps->p - (ps->e - (ps->end - ps->start))) : 0;
    for (const char *p = ps->start; p < ps->start + off; p++) {
        if (*p == '\n') line++, col = 1;
        else col++;
    }
    return w2l__fail(err, W2L_CORRUPT, "invalid JSON%s at line %zu, column %zu: %s", what, line,
                     col, ps->why);
}

static w2l_rc parse_text(const char *text, size_t len, const w2l__json_rawspec *raw,
                         w2l__json **out, w2l_error *err)
{
    *out = NULL;
    if (len == 0) return w2l__fail(err, W2L_CORRUPT, "invalid JSON: empty input");
    /* nodes of a typical document take about 8 times its text: a small document's copy,
     * arena state and nodes are one malloc (the first node block follows the copy) */
    size_t nodes = len * 8 + 512;
    if (nodes > (size_t)1 << 20) nodes = (size_t)1 << 20;
    w2l__arena a;
    w2l__arena_init(&a, nodes > NODE_BLOCK ? nodes : NODE_BLOCK);
    parser ps = {text, text + len, NULL, NULL, NULL, NULL, &a, NULL, NULL, 0, 0, raw, 0};
    /* the text is copied once and parsed in place: strings are unescaped and terminated
     * where they are; the copy's block also holds where the arena's state goes */
    size_t room = (len + SENTINEL + 15) & ~(size_t)15,
           home = (sizeof(w2l__json_mem) + 15) & ~(size_t)15;
    char *copy = w2l__arena_alloc(&a, room + home + nodes);
    w2l__json *root = NULL;
    if (copy) {
        ps.home = (w2l__json_mem *)(void *)(copy + room);
        ps.cur = copy + room + home;
        ps.lim = ps.cur + nodes;
        memcpy(copy, text, len);
        memset(copy + len, '"', SENTINEL); /* stops the scan of an unterminated string */
        ps.p = copy;
        ps.e = copy + len;
        if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) ps.p += 3; /* a UTF-8 byte order mark */
        root = new_node(&ps);
    }
    if (root) skip_ws(&ps);
    if (root && parse_value(&ps, root) == 0) {
        skip_ws(&ps);
        if (ps.p < ps.e) {
            ps.why = "unexpected text";
            w2l_rc rc = located(&ps, ": text after the value", err);
            w2l__arena_release(&a);
            return rc;
        }
        ps.home->arena = a; /* the arena's state now lives in itself */
        ps.home->mixed = 0;
        root->flags |= JF_ROOT;
        *out = root;
        return W2L_OK;
    }
    if (!root) ps.nomem = 1;
    if (ps.unsure && !ps.nomem) { /* a raw member's check gave up: the parser decides */
        w2l__arena_release(&a);
        return parse_text(text, len, NULL, out, err);
    }
    w2l_rc rc = ps.nomem ? w2l__fail(err, W2L_NOMEM, "out of memory parsing JSON")
                         : located(&ps, "", err);
    w2l__arena_release(&a);
    return rc;
}

w2l_rc w2l__json_parse(const char *text, size_t len, w2l__json **out, w2l_error *err)
{
    return parse_text(text, len, NULL, out, err);
}

w2l_rc w2l__json_parse_raw(const char *text, size_t len, const w2l__json_rawspec *raw,
                           w2l__json **out, w2l_error *err)
{
    return parse_text(text, len, raw, out, err);
}

/* ---- scanning without a tree (json.h) ---- */

const char *w2l__json_skip(const char *p, const char *e, int depth)
{
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.p = (char *)p; /* only read */
    ps.e = (char *)e;
    ps.depth = depth;
    return skip_value(&ps) ? NULL : ps.p;
}

const char *w2l__json_number_end(const char *p, const char *e)
{
    char *at;
    const char *why;
    return number_end((char *)p, (char *)e, &at, &why);
}
