/*
 * canal-json's hot path (cdc_int.h: w2l__cdc_canal_fast). Nearly every canal message is
 * an INSERT, UPDATE or DELETE of a table whose shape (mysqlType, pkNames) the decoder
 * knows from the messages before it, with values that are plain strings. Such a message is
 * read here in one pass over a copy of its text: the root members are taken as they come,
 * the row images' members are listed as (name, text) pairs, and the values are converted
 * from that text by the same functions as the tree path (w2l__cdc_add_image,
 * w2l__cdc_str_value). No tree is built.
 *
 * What this path reads, it reads exactly as the parser and w2l__cdc_canal_decode would:
 * anything else gives up before anything changed and leaves the message to them — any
 * escape in a string it takes (names, values, database, table, type), a member it takes
 * given twice, a value of another kind than canal writes, a DDL, an unknown shape, a shape
 * with a column that is not read from its text alone, a value that fails to convert (the
 * tree path then words the error). Members it does not take are checked as the parser
 * checks them (w2l__json_skip). The two paths are compared message by message in the
 * cdc_json suite and by fuzz/fuzz_canal.c.
 */
#include "cdc_int.h"

typedef struct scan {
    char *p, *e; /* the copy: NUL-terminated strings are cut into it where they end */
    w2l__cdc *d;
} scan;

static inline char *skip_ws(char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

/* Whitespace is rare in producers' JSON: one test inline. */
static inline void ws(scan *s)
{
    if ((unsigned char)*s->p <= ' ') s->p = skip_ws(s->p);
}

/* A string without escapes at s->p, NUL-terminated in place: its text, or NULL. */
static inline char *string(scan *s, size_t *len)
{
    if (s->p >= s->e || *s->p != '"') return NULL;
    char *b = s->p + 1, *q = (char *)w2l__json_scan_quote(b);
    if (q >= s->e || *q != '"') return NULL;
    *q = '\0';
    *len = (size_t)(q - b);
    s->p = q + 1;
    return b;
}

/* Whether the n bytes at a and b are the same, a word at a time: both are readable for 8
 * bytes past every byte compared (the copy's pad, the shape's zeros). */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x, y;
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    if (!n) return 1;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return ((x ^ y) << (64 - 8 * n)) == 0; /* the first n bytes are the low ones */
#else
    return memcmp(a, b, n) == 0;
#endif
}

/* After a member or element: 1 past a ',' (another follows), 0 past close, -1 else. */
static inline int next_or_close(scan *s, char close)
{
    ws(s);
    if (s->p >= s->e) return -1;
    if (*s->p == ',') {
        s->p++;
        ws(s);
        return 1;
    }
    if (*s->p != close) return -1;
    s->p++;
    return 0;
}

static int literal(scan *s, const char *word, size_t n)
{
    if ((size_t)(s->e - s->p) < n || memcmp(s->p, word, n)) return 0;
    s->p += n;
    return 1;
}

/* Room for more members: d->fast.m, its n first kept, at least one more; NULL when out of
 * memory. */
static w2l__cdc_member *grow_members(w2l__cdc *d, size_t n)
{
    size_t cap = d->fast.cap ? d->fast.cap * 2 : 64;
    w2l__cdc_member *m = w2l__realloc(d->fast.m, cap * sizeof *m);
    if (!m) return NULL;
    d->fast.m = m;
    d->fast.cap = cap;
    d->fast.n = n;
    return m;
}

/* Starts a row image at the next member; rows[nrows] then always holds the end. */
static int push_row(w2l__cdc *d)
{
    if (d->fast.nrows + 2 > d->fast.rowcap) {
        size_t cap = d->fast.rowcap ? d->fast.rowcap * 2 : 16;
        size_t *r = w2l__realloc(d->fast.rows, cap * sizeof *r);
        if (!r) return -1;
        d->fast.rows = r;
        d->fast.rowcap = cap;
    }
    d->fast.rows[d->fast.nrows++] = d->fast.n;
    return 0;
}

/* The members of a row object whose values are strings or null, s->p past its '{' and not
 * at its '}': appended as (name, text), names met in column order being sh's own (its
 * qnames, then gf's strings). -1: not such an object; -2: out of memory. The position and
 * the member list are kept in locals here, not in s and d: the strings' ends are cut with
 * char stores, after which the compiler would have to read them again. No test of the end
 * where the pad decides: a name compared stops at the word the pad begins (the pad is '"',
 * and no name's text has a '"' where a '"' would follow), and the pad is none of the
 * characters looked for past a value ('"' is not), so the text's end is where it fails. */
static int members(scan *s, const shape *sh, const w2l_field *gf, size_t ng)
{
    w2l__cdc *d = s->d;
    char *p = s->p, *const e = s->e;
    w2l__cdc_member *m = d->fast.m;
    size_t mn = d->fast.n, cap = d->fast.cap;
    for (size_t j = 0;; j++) {
        const char *k, *v = NULL;
        size_t vl = 0;
        if (j < ng && same_bytes(p, sh->qnames + sh->qoff[j], sh->qoff[j + 1] - sh->qoff[j])) {
            k = gf[j].name; /* and its colon */
            p += sh->qoff[j + 1] - sh->qoff[j];
        } else {
            size_t kl;
            s->p = p;
            if (!(k = string(s, &kl))) return -1;
            ws(s);
            if (s->p >= e || *s->p != ':') return -1;
            p = s->p + 1;
        }
        if ((unsigned char)*p <= ' ') p = skip_ws(p);
        if (*p == '"') { /* at the end, the pad: its next '"' is past the end too */
            char *q = (char *)w2l__json_scan_quote(p + 1);
            if (q >= e || *q != '"') return -1;
            *q = '\0';
            v = p + 1;
            vl = (size_t)(q - v);
            p = q + 1;
        } else if (!memcmp(p, "null", 4)) { /* readable: the pad */
            p += 4;
        } else {
            return -1;
        }
        if (mn == cap) {
            if (!(m = grow_members(d, mn))) return -2;
            cap = d->fast.cap;
        }
        m[mn++] = (w2l__cdc_member){k, v, vl};
        if ((unsigned char)*p <= ' ') p = skip_ws(p); /* the pad is no whitespace */
        if (*p == ',') {
            p++;
            if ((unsigned char)*p <= ' ') p = skip_ws(p);
        } else if (*p == '}') {
            d->fast.n = mn;
            s->p = p + 1;
            return 0;
        } else {
            return -1;
        }
    }
}

/* An array of row objects whose values are strings or null ("data", "old"): their
 * members appended. -1: not such an array; -2: out of memory. The names are expected to be
 * those of the last message's table, in column order (they are then that shape's own
 * strings, which w2l__cdc_add_image knows by their address). */
static int rows(scan *s, size_t *count)
{
    w2l__cdc *d = s->d;
    const table *g = d->fast.t;
    size_t ng = 0;
    const w2l_field *gf = g && g->cur.qnames ? w2l__schema_fields(g->cur.schema, &ng) : NULL;
    *count = 0;
    s->p++; /* '[' */
    ws(s);
    if (s->p < s->e && *s->p == ']') {
        s->p++;
        return 0;
    }
    for (;;) {
        if (s->p >= s->e || *s->p != '{') return -1;
        if (push_row(d)) return -2;
        (*count)++;
        s->p++;
        ws(s);
        if (s->p < s->e && *s->p == '}') {
            s->p++;
        } else {
            int r = members(s, g ? &g->cur : NULL, gf, ng);
            if (r < 0) return r;
        }
        int r = next_or_close(s, ']');
        if (r < 0) return -1;
        if (!r) {
            d->fast.rows[d->fast.nrows] = d->fast.n;
            return 0;
        }
    }
}

/* An integer of at most 18 digits at s->p, as the parser and w2l__json_int64 read it;
 * -1 for any other number (a fraction, an exponent, a leading zero) or text. Inline, as
 * every function here that takes s: s then stays out of memory, in registers. */
static inline int integer(scan *s, int64_t *out)
{
    const char *q = s->p;
    int neg = *q == '-';
    q += neg;
    if (*q == '0' && q[1] >= '0' && q[1] <= '9') return -1;
    uint64_t v = 0;
    uint32_t v8;
    const char *b = q;
    /* no test of the end: the pad is no digit, '.', 'e' or 'E', and is readable for 8 */
    if (w2l__eight_digits(q, &v8)) v = v8, q += 8; /* epoch milliseconds */
    while (*q >= '0' && *q <= '9') v = v * 10 + (uint64_t)(*q++ - '0');
    if (q == b || q - b > 18 || *q == '.' || *q == 'e' || *q == 'E') return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    s->p = (char *)q;
    return 0;
}

enum { M_DATA, M_DATABASE, M_ES, M_ISDDL, M_MYSQLTYPE, M_OLD, M_PKNAMES, M_TABLE, M_TS, M_TYPE };

/* The root member name at s->p when canal writes it so: its id and past it; else -1. */
static int known_member(scan *s)
{
    const char *p = s->p;
    size_t avail = (size_t)(s->e - p);
#define IS(lit, id)                                                                                \
    if (avail >= sizeof lit - 1 && !memcmp(p, lit, sizeof lit - 1)) {                              \
        s->p += sizeof lit - 1;                                                                    \
        return id;                                                                                 \
    }
    if (avail < 4 || p[0] != '"') return -1;
    switch (p[1]) {
    case 'd':
        IS("\"data\"", M_DATA);
        IS("\"database\"", M_DATABASE);
        break;
    case 'e': IS("\"es\"", M_ES); break;
    case 'i': IS("\"isDdl\"", M_ISDDL); break;
    case 'm': IS("\"mysqlType\"", M_MYSQLTYPE); break;
    case 'o': IS("\"old\"", M_OLD); break;
    case 'p': IS("\"pkNames\"", M_PKNAMES); break;
    case 't':
        IS("\"table\"", M_TABLE);
        IS("\"ts\"", M_TS);
        IS("\"type\"", M_TYPE);
        break;
    }
#undef IS
    return -1;
}

/* canal's root members as its writer orders them (alphabetically), each with the comma
 * before it and its colon, and the id of each this path takes (-1: checked, not read): the
 * member after the one just read is tried first, its comma and name one comparison instead
 * of a separator, a dispatch on its first letters and the search for its place here. */
static const struct {
    char text[16]; /* zero-padded: compared a word at a time */
    uint8_t n;
    int8_t id;
} canal_order[] = {
    {",\"data\":", 8, M_DATA},       {",\"database\":", 12, M_DATABASE},
    {",\"es\":", 6, M_ES},           {",\"id\":", 6, -1},
    {",\"isDdl\":", 9, M_ISDDL},     {",\"mysqlType\":", 13, M_MYSQLTYPE},
    {",\"old\":", 7, M_OLD},         {",\"pkNames\":", 11, M_PKNAMES},
    {",\"sql\":", 7, -1},            {",\"sqlType\":", 11, -1},
    {",\"table\":", 9, M_TABLE},     {",\"ts\":", 6, M_TS},
    {",\"type\":", 8, M_TYPE},
};

/* The place in canal_order of each member this path takes. */
static const uint8_t order_of[] = {
    [M_DATA] = 0,    [M_DATABASE] = 1, [M_ES] = 2,    [M_ISDDL] = 4, [M_MYSQLTYPE] = 5,
    [M_OLD] = 6,     [M_PKNAMES] = 7,  [M_TABLE] = 10, [M_TS] = 11,  [M_TYPE] = 12,
};

/* The root members this path takes (as cdc_canal.c: by name up to a NUL), or -1: for a
 * name written otherwise than known_member expects. */
static int member_of(const char *k)
{
    switch (k[0]) {
    case 'd': return !strcmp(k, "data") ? M_DATA : !strcmp(k, "database") ? M_DATABASE : -1;
    case 'e': return !strcmp(k, "es") ? M_ES : -1;
    case 'i': return !strcmp(k, "isDdl") ? M_ISDDL : -1;
    case 'm': return !strcmp(k, "mysqlType") ? M_MYSQLTYPE : -1;
    case 'o': return !strcmp(k, "old") ? M_OLD : -1;
    case 'p': return !strcmp(k, "pkNames") ? M_PKNAMES : -1;
    case 't':
        return !strcmp(k, "table")  ? M_TABLE
               : !strcmp(k, "ts")   ? M_TS
               : !strcmp(k, "type") ? M_TYPE
                                    : -1;
    default: return -1;
    }
}

/* A root member's name and colon at s->p, read as the parser would: the id of a member
 * this path takes, -1 for another, -2 when it is no name; *next becomes its place in
 * canal_order (unchanged for another). */
static int member_name(scan *s, size_t *next)
{
    size_t kl;
    int id = s->p < s->e ? known_member(s) : -1;
    if (id < 0) {
        const char *k = string(s, &kl);
        if (!k) return -2;
        id = member_of(k);
    }
    if (id >= 0) *next = order_of[id];
    ws(s);
    if (s->p >= s->e || *s->p != ':') return -2;
    s->p++;
    return id;
}

typedef struct fmsg {
    const char *db, *table, *type;
    size_t dbl, tbl; /* the lengths of db and table */
    int64_t es, ts;
    int isddl;
    const char *types, *pks; /* raw text of mysqlType and pkNames */
    size_t tl, pl;
    size_t data0, ndata, old0, nold; /* row images: first index into rows[], count */
    int has_data, has_old;
    unsigned last_shape; /* bits 0, 1: mysqlType, pkNames are those of the last table */
} fmsg;

/* The end of the number at p (before e, the pad after it), as w2l__json_number_end finds
 * it: an integer without sign, fraction or exponent (canal's "id") at once. */
static inline const char *number_end(const char *p, const char *e)
{
    const char *q = p;
    if (*q >= '1' && *q <= '9') {
        while (*++q >= '0' && *q <= '9') {} /* the pad is no digit */
    } else if (*q == '0' && !(q[1] >= '0' && q[1] <= '9')) {
        q++;
    } else {
        return w2l__json_number_end(p, e);
    }
    return *q == '.' || *q == 'e' || *q == 'E' ? w2l__json_number_end(p, e) : q;
}

/* The root object: 1 when every member was read, 0 when the message is not for this path,
 * -1 out of memory. */
static int read_message(scan *s, fmsg *f)
{
    w2l__cdc *d = s->d;
    unsigned seen = 0;
    memset(f, 0, sizeof *f);
    ws(s);
    if (s->p >= s->e || *s->p != '{') return 0;
    s->p++;
    ws(s);
    size_t next = 0;
    int id;
    /* the pad cannot be part of a name compared (it is '"', and a name's text has none
     * where a '"' would follow): the comparison stops at the word it begins */
    if (same_bytes(s->p, canal_order[0].text + 1, canal_order[0].n - 1u)) {
        id = canal_order[0].id;
        s->p += canal_order[0].n - 1u;
    } else if ((id = member_name(s, &next)) == -2) {
        return 0;
    }
    for (;;) {
        size_t vl;
        ws(s);
        if (id >= 0) {
            if (seen >> id & 1) return 0; /* the tree path takes the first */
            seen |= 1u << id;
        }
        int r = 0;
        char c = *s->p; /* the pad when at the end: no value begins with '"' there */
        switch (id) {
        case M_DATA:
        case M_OLD:
            if (id == M_OLD && literal(s, "null", 4)) break;
            if (c != '[') return 0;
            size_t *first = id == M_DATA ? &f->data0 : &f->old0;
            *first = d->fast.nrows;
            r = rows(s, id == M_DATA ? &f->ndata : &f->nold);
            if (r == -2) return -1;
            *(id == M_DATA ? &f->has_data : &f->has_old) = 1;
            break;
        case M_DATABASE: r = (f->db = string(s, &f->dbl)) ? 0 : -1; break;
        case M_TABLE: r = (f->table = string(s, &f->tbl)) ? 0 : -1; break;
        case M_TYPE: r = (f->type = string(s, &vl)) ? 0 : -1; break;
        case M_ISDDL:
            if (literal(s, "true", 4)) f->isddl = 1;
            else if (!literal(s, "false", 5)) r = -1;
            break;
        case M_ES: r = integer(s, &f->es); break;
        case M_TS: r = integer(s, &f->ts); break;
        case M_MYSQLTYPE:
        case M_PKNAMES: {
            if (c != '{' && c != '[') return 0;
            /* the last message's table's text, else one seen lately (both checked JSON: a
             * value the text begins with ends where it does) */
            size_t i = id == M_PKNAMES, n = 0, avail = (size_t)(s->e - s->p);
            const shape *g = d->fast.t ? &d->fast.t->cur : NULL;
            if (g && g->canal_raw) {
                const char *part = i ? g->canal_raw + g->canal_tl + 1 : g->canal_raw;
                size_t pn = i ? g->canal_rawlen - g->canal_tl - 1 : g->canal_tl;
                if (pn <= avail && !memcmp(s->p, part, pn)) n = pn, f->last_shape |= 1u << i;
            }
            if (!n) n = w2l__cdc_canal_known(d, i, s->p, avail);
            const char *b = s->p, *end = n ? s->p + n : w2l__json_skip(s->p, s->e, 1);
            if (!end) return 0;
            s->p = (char *)end;
            *(i ? &f->pks : &f->types) = b;
            *(i ? &f->pl : &f->tl) = (size_t)(end - b);
            break;
        }
        default: { /* "id", "sql", "sqlType", ...: checked, not read */
            const char *end = NULL;
            if (s->p >= s->e) return 0;
            if (c == '"') { /* a string without escapes, the common case, at once */
                const char *q = w2l__json_scan_quote(s->p + 1);
                if (q < s->e && *q == '"') end = q + 1;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                end = number_end(s->p, s->e);
                if (!end) return 0;
            }
            if (!end) end = w2l__json_skip(s->p, s->e, 1);
            if (!end) return 0;
            s->p = (char *)end;
        }
        }
        if (r) return 0;
        /* the member canal writes next, or the one after it (sqlType is often left out) */
        if (next + 1 < W2L_ARRAY_LEN(canal_order) &&
            same_bytes(s->p, canal_order[next + 1].text, canal_order[next + 1].n)) {
            next++;
        } else if (next + 2 < W2L_ARRAY_LEN(canal_order) &&
                   same_bytes(s->p, canal_order[next + 2].text, canal_order[next + 2].n)) {
            next += 2;
        } else {
            if ((r = next_or_close(s, '}')) < 0) return 0;
            if (!r) {
                ws(s);
                return s->p == s->e;
            }
            if ((id = member_name(s, &next)) == -2) return 0;
            continue;
        }
        id = canal_order[next].id;
        s->p += canal_order[next].n;
    }
}

/* The table the message names, when this path may decode its rows: its shape is the one
 * the message describes and reads every value from text. */
static table *known_table(w2l__cdc *d, const fmsg *f, w2l_rc *rc, w2l_error *err)
{
    table *t = d->fast.t, *last = t; /* tables live as long as the decoder */
    if (!t || strcmp(t->db, f->db) || strcmp(t->name, f->table)) {
        if (d->opts.filter && strchr(f->table, ',')) return NULL;
        *rc = w2l__cdc_table_get(d, f->db, f->table, 1, &t, err);
        if (*rc != W2L_OK) return NULL;
        d->fast.t = t;
    }
    d->last = t;
    if (d->opts.filter && !t->filtered) return NULL;
    if (t->excluded) return t;
    const shape *sh = &t->cur;
    if (!sh->schema || !sh->str_only || !sh->canal_raw || !f->types || !f->pks) return NULL;
    if (t == last && f->last_shape == 3) return t; /* compared as they were read */
    if (sh->canal_rawlen != f->tl + 1 + f->pl || memcmp(sh->canal_raw, f->types, f->tl) ||
        sh->canal_raw[f->tl] != '\x1e' || memcmp(sh->canal_raw + f->tl + 1, f->pks, f->pl))
        return NULL;
    return t;
}

static w2l__cdc_image image(const w2l__cdc *d, size_t row)
{
    size_t a = d->fast.rows[row], b = d->fast.rows[row + 1];
    return (w2l__cdc_image){NULL, d->fast.m + a, b - a};
}

int w2l__cdc_canal_fast(w2l__cdc *d, const char *text, size_t len, int replay, w2l_rc *rc,
                        w2l_error *err)
{
    *rc = W2L_OK;
    d->fast.n = d->fast.nrows = 0;
    char *copy = w2l__cdc_alloc(&d->mem, len + W2L_JSON_SCAN_PAD);
    if (!copy) return 0; /* the tree path says so */
    memcpy(copy, text, len);
    memset(copy + len, '"', W2L_JSON_SCAN_PAD);
    scan s = {copy, copy + len, d};
    fmsg f;
    int r = read_message(&s, &f);
    if (r < 0) *rc = w2l__fail(err, W2L_NOMEM, "out of memory reading a canal message");
    if (r <= 0) return r < 0;
    if (f.isddl || !f.type || !f.db || !f.table || !*f.table || !f.has_data) return 0;
    w2l_op op;
    /* strcmp's answer, with its NUL, inline: the 7 bytes are readable (the pad) */
    if (!memcmp(f.type, "INSERT", 7)) op = W2L_OP_INSERT;
    else if (!memcmp(f.type, "UPDATE", 7)) op = W2L_OP_UPDATE_AFTER;
    else if (!memcmp(f.type, "DELETE", 7)) op = W2L_OP_DELETE;
    else return 0;
    if (op == W2L_OP_UPDATE_AFTER && (!f.has_old || f.nold != f.ndata)) return 0;
    table *t = known_table(d, &f, rc, err);
    if (*rc != W2L_OK) return 1;
    if (!t) return 0;
    d->fast.taken++;
    if (t->excluded) return 1; /* consumed unread */
    int64_t ts = f.es ? f.es : f.ts;
    size_t nev = d->nev;
    d->replay = replay;
    for (size_t i = 0; i < f.ndata && *rc == W2L_OK; i++) {
        w2l__cdc_image img = image(d, f.data0 + i), old;
        if (op == W2L_OP_UPDATE_AFTER) {
            old = image(d, f.old0 + i);
            *rc = w2l__cdc_add_update_image(d, t, &img, &old, ts, err);
        } else {
            *rc = w2l__cdc_add_image(d, t, op, &img, NULL, ts, err);
        }
    }
    d->replay = 0;
    if (*rc == W2L_OK || *rc == W2L_NOMEM) return 1;
    d->fast.taken--;
    w2l__cdc_drop_events(d, nev); /* a value the tree path words the error for */
    w2l_error_clear(err);
    *rc = W2L_OK;
    return 0;
}
