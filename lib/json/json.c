/*
 * The JSON tree (json.h, json_int.h): accessors, building and printing; the parser is
 * json_parse.c. Numbers keep the text they were parsed from (w2l__json_new_int64 makes
 * such text too) and print it verbatim; w2l__json_int64(), w2l__json_double() and
 * w2l__json_number_str() read it exactly. Numbers built with w2l__json_new_double print
 * as cJSON printed them ("%1.15g", or "%1.17g" when that does not read back), so that
 * documents this library wrote before keep their bytes. Strings keep their length, NUL
 * bytes included (w2l__json_strn), and print them as \u0000.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json_int.h"

/* ---- freeing ---- */

static void release(w2l__json_mem *m)
{
    w2l__arena a = m->arena; /* m is in the arena */
    w2l__arena_release(&a);
}

static void free_node(w2l__json *j)
{
    if (j->flags & JF_KEYHEAP) w2l__free(j->key);
    if ((j->flags & JF_ROOT) && !j->mem->mixed) { /* the whole tree is in the arena */
        release(j->mem);
        return;
    }
    for (w2l__json *c = j->child, *n; c; c = n) {
        n = c->next;
        free_node(c);
    }
    if (j->flags & JF_STRHEAP) w2l__free(j->s);
    if (j->flags & JF_ROOT) release(j->mem);
    else if (j->flags & JF_HEAP) w2l__free(j);
}

/* A node built apart goes into container c: a parsed tree must then be walked to free. */
static void linking_into(w2l__json *c)
{
    if (c->mem) c->mem->mixed = 1;
}

void w2l__json_free(w2l__json *j)
{
    if (j) free_node(j);
}

/* ---- reading ---- */

w2l__json_kind w2l__json_type(const w2l__json *j)
{
    return j ? (w2l__json_kind)j->kind : W2L_JSON_INVALID;
}

const char *w2l__json_kind_name(w2l__json_kind k)
{
    static const char *const n[] = { "invalid", "null",  "boolean", "number",
                                     "string",  "array", "object" };
    return (unsigned)k < W2L_ARRAY_LEN(n) ? n[k] : "invalid";
}

/* Whether member c's name, up to its first NUL byte, is key (of n bytes): a name holding
 * "\u0000" is found by its text before the NUL, as with cJSON. */
static int key_is(const w2l__json *c, const char *key, size_t n)
{
    return c->key && c->klen >= n && memcmp(c->key, key, n) == 0 && c->key[n] == '\0';
}

w2l__json *w2l__json_get(const w2l__json *obj, const char *key)
{
    if (!obj || obj->kind != W2L_JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    for (w2l__json *c = obj->child; c; c = c->next)
        if (key_is(c, key, n)) return c;
    return NULL;
}

w2l__json *w2l__json_first(const w2l__json *j) { return j ? j->child : NULL; }
w2l__json *w2l__json_next(const w2l__json *j) { return j ? j->next : NULL; }

size_t w2l__json_size(const w2l__json *j)
{
    size_t n = 0;
    for (w2l__json *c = j ? j->child : NULL; c; c = c->next) n++;
    return n;
}

const char *w2l__json_key(const w2l__json *j) { return j ? j->key : NULL; }

const char *w2l__json_str(const w2l__json *j)
{
    return j && j->kind == W2L_JSON_STRING ? j->s : NULL;
}

const char *w2l__json_strn(const w2l__json *j, size_t *len)
{
    if (!j || j->kind != W2L_JSON_STRING) return NULL;
    *len = j->n;
    return j->s;
}

/* The exact integer value of number text ("12", "-5.0", "1e3", "1.5E+2"); -1 when the
 * text is not exactly an integer or does not fit 64 bits. */
static int text_int64(const char *s, int64_t *out)
{
    int neg = *s == '-';
    if (neg) s++;
    const char *ip = s;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9' && s - ip < 18) v = v * 10 + (unsigned)(*s++ - '0');
    if (!*s) { /* the common case: a plain integer of up to 18 digits */
        if (s == ip) return -1;
        *out = neg ? -(int64_t)v : (int64_t)v;
        return 0;
    }
    s = ip;
    while (*s >= '0' && *s <= '9') s++;
    size_t nint = (size_t)(s - ip), nfrac = 0;
    const char *fp = s;
    if (*s == '.') {
        fp = ++s;
        while (*s >= '0' && *s <= '9') s++;
        nfrac = (size_t)(s - fp);
    }
    long exp = 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        int eneg = *s == '-';
        if (*s == '-' || *s == '+') s++;
        if (!(*s >= '0' && *s <= '9')) return -1;
        for (; *s >= '0' && *s <= '9'; s++)
            if (exp < 100000) exp = exp * 10 + (*s - '0');
        if (eneg) exp = -exp;
    }
    if (*s || nint + nfrac == 0) return -1;
    /* the digits D (integer then fraction digits) times 10^(exp - nfrac) */
    long point = (long)nint + exp; /* digits before the decimal point */
    v = 0;
    size_t nd = nint + nfrac;
    for (size_t k = 0; k < nd; k++) {
        unsigned dg = (unsigned)((k < nint ? ip[k] : fp[k - nint]) - '0');
        if ((long)k >= point) {
            if (dg) return -1; /* a fraction */
            continue;
        }
        if (v > (UINT64_MAX - dg) / 10) return -1;
        v = v * 10 + dg;
    }
    for (long k = (long)nd; k < point; k++) {
        if (!v) break;
        if (v > UINT64_MAX / 10) return -1;
        v *= 10;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return -1;
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return 0;
}

int w2l__json_int64(const w2l__json *j, int64_t *out)
{
    if (!j || j->kind != W2L_JSON_NUMBER) return -1;
    if (j->s) return text_int64(j->s, out);
    double d = j->d;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return -1;
    *out = (int64_t)d;
    return 0;
}

int w2l__json_double(const w2l__json *j, double *out)
{
    if (!j || j->kind != W2L_JSON_NUMBER) return -1;
    *out = j->s ? strtod(j->s, NULL) : j->d;
    return 0;
}

int w2l__json_bool(const w2l__json *j, int *out)
{
    if (!j || j->kind != W2L_JSON_BOOL) return -1;
    *out = j->bval;
    return 0;
}

const char *w2l__json_number_str(const w2l__json *j, char *buf, size_t size)
{
    if (!j || j->kind != W2L_JSON_NUMBER) return NULL;
    if (j->s) return j->s;
    if (!buf || !size) return NULL;
    double d = j->d;
    int n;
    if (d == floor(d) && fabs(d) < 9007199254740992.0) n = snprintf(buf, size, "%.0f", d);
    else n = snprintf(buf, size, "%.17g", d);
    return n >= 0 && (size_t)n < size ? buf : NULL;
}

int w2l__json_number_text(const w2l__json *j, char *buf, size_t size)
{
    const char *t = w2l__json_number_str(j, buf, size);
    if (!t) {
        if (size && buf) buf[0] = '\0';
        return -1;
    }
    if (t != buf) {
        size_t n = strlen(t);
        if (n >= size) {
            if (size) buf[0] = '\0';
            return -1;
        }
        memcpy(buf, t, n + 1);
    }
    return 0;
}

/* ---- building ---- */

static w2l__json *node(w2l__json_kind kind)
{
    w2l__json *j = w2l__malloc(sizeof *j);
    if (!j) return NULL;
    memset(j, 0, sizeof *j);
    j->kind = (uint8_t)kind;
    j->flags = JF_HEAP;
    return j;
}

w2l__json *w2l__json_new_object(void) { return node(W2L_JSON_OBJECT); }
w2l__json *w2l__json_new_array(void) { return node(W2L_JSON_ARRAY); }
w2l__json *w2l__json_new_null(void) { return node(W2L_JSON_NULL); }

w2l__json *w2l__json_new_bool(int v)
{
    w2l__json *j = node(W2L_JSON_BOOL);
    if (j) j->bval = v != 0;
    return j;
}

w2l__json *w2l__json_new_double(double v)
{
    w2l__json *j = node(W2L_JSON_NUMBER);
    if (j) {
        j->d = v;
        j->flags |= JF_DOUBLE;
    }
    return j;
}

/* A node of kind holding a copy of n bytes of s. */
static w2l__json *node_text(w2l__json_kind kind, const char *s, size_t n)
{
    w2l__json *j = node(kind);
    if (!j) return NULL;
    j->s = w2l__malloc(n + 1);
    if (!j->s) {
        w2l__free(j);
        return NULL;
    }
    if (n) memcpy(j->s, s, n);
    j->s[n] = '\0';
    j->n = n;
    j->flags |= JF_STRHEAP;
    return j;
}

w2l__json *w2l__json_new_string(const char *s)
{
    return s ? node_text(W2L_JSON_STRING, s, strlen(s)) : NULL;
}

w2l__json *w2l__json_new_stringn(const char *s, size_t n)
{
    return s || !n ? node_text(W2L_JSON_STRING, s ? s : "", n) : NULL;
}

w2l__json *w2l__json_new_int64(int64_t v)
{
    char buf[24];
    return node_text(W2L_JSON_NUMBER, buf, w2l__fmt_int64(buf, v));
}

const char *w2l__json_raw(const w2l__json *j, size_t *len)
{
    if (!j || !(j->flags & JF_RAW)) return NULL;
    *len = j->n;
    return j->s;
}

w2l__json *w2l__json_dup(const w2l__json *j)
{
    if (!j) return NULL;
    w2l__json *d = j->s || (j->flags & JF_DOUBLE) ? NULL : node((w2l__json_kind)j->kind);
    if (j->s && (d = node_text((w2l__json_kind)j->kind, j->s, j->n)) != NULL)
        d->flags |= j->flags & JF_RAW;
    else if (d) d->d = j->d, d->bval = j->bval, d->flags |= j->flags & JF_DOUBLE;
    else if (j->flags & JF_DOUBLE) d = w2l__json_new_double(j->d);
    if (!d) return NULL;
    for (const w2l__json *c = j->child; c; c = c->next) {
        w2l__json *dc = w2l__json_dup(c);
        if (!dc) {
            free_node(d);
            return NULL;
        }
        if (c->key && (dc->key = w2l__strndup(c->key, c->klen)) == NULL) {
            free_node(dc);
            free_node(d);
            return NULL;
        }
        if (c->key) dc->klen = c->klen, dc->flags |= JF_KEYHEAP;
        if (d->last) d->last->next = dc;
        else d->child = dc;
        d->last = dc;
    }
    return d;
}

/* v's member name becomes k (heap, owned by v from now on). */
static void take_key(w2l__json *v, char *k)
{
    if (v->flags & JF_KEYHEAP) w2l__free(v->key);
    v->key = k;
    v->klen = strlen(k);
    v->flags |= JF_KEYHEAP;
}

int w2l__json_add(w2l__json *obj, const char *key, w2l__json *v)
{
    if (!v) return -1;
    char *k = obj && obj->kind == W2L_JSON_OBJECT && key ? w2l__strndup(key, strlen(key)) : NULL;
    if (!k) {
        free_node(v);
        return -1;
    }
    take_key(v, k);
    v->next = NULL;
    linking_into(obj);
    if (obj->last) obj->last->next = v;
    else obj->child = v;
    obj->last = v;
    return 0;
}

/* Unlinks the first member key of obj; NULL when absent. */
static w2l__json *unlink_member(w2l__json *obj, const char *key, w2l__json **prevp)
{
    size_t n = strlen(key);
    w2l__json *prev = NULL;
    for (w2l__json *c = obj->child; c; prev = c, c = c->next) {
        if (!key_is(c, key, n)) continue;
        if (prev) prev->next = c->next;
        else obj->child = c->next;
        if (obj->last == c) obj->last = prev;
        *prevp = prev;
        return c;
    }
    return NULL;
}

int w2l__json_set(w2l__json *obj, const char *key, w2l__json *v)
{
    if (!v) return -1;
    if (!obj || obj->kind != W2L_JSON_OBJECT || !key) {
        free_node(v);
        return -1;
    }
    w2l__json *prev = NULL, *old = unlink_member(obj, key, &prev);
    if (!old) return w2l__json_add(obj, key, v);
    /* the replacement takes the old member's place */
    char *k = w2l__strndup(key, strlen(key));
    if (!k) { /* put the old member back */
        old->next = prev ? prev->next : obj->child;
        if (prev) prev->next = old;
        else obj->child = old;
        if (!old->next) obj->last = old;
        free_node(v);
        return -1;
    }
    take_key(v, k);
    linking_into(obj);
    v->next = prev ? prev->next : obj->child;
    if (prev) prev->next = v;
    else obj->child = v;
    if (!v->next) obj->last = v;
    free_node(old);
    return 0;
}

int w2l__json_append(w2l__json *arr, w2l__json *v)
{
    if (!v) return -1;
    if (!arr || arr->kind != W2L_JSON_ARRAY) {
        free_node(v);
        return -1;
    }
    v->next = NULL;
    linking_into(arr);
    if (arr->last) arr->last->next = v;
    else arr->child = v;
    arr->last = v;
    return 0;
}

void w2l__json_remove(w2l__json *obj, const char *key)
{
    if (!obj || obj->kind != W2L_JSON_OBJECT || !key) return;
    w2l__json *prev, *old = unlink_member(obj, key, &prev);
    if (old) free_node(old);
}

/* ---- printing ---- */

/* the writer's first members: the printer's output buffer */
typedef w2l__json_writer out;

static char *room(out *o, size_t n)
{
    if (o->nomem) return NULL;
    if (o->cap - o->n < n) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap - o->n < n) cap *= 2;
        char *p = w2l__realloc(o->p, cap);
        if (!p) {
            o->nomem = 1;
            return NULL;
        }
        o->p = p;
        o->cap = cap;
    }
    return o->p + o->n;
}

static void put(out *o, const char *s, size_t n)
{
    char *d = room(o, n);
    if (!d) return;
    memcpy(d, s, n);
    o->n += n;
}

static void putc_(out *o, char c) { put(o, &c, 1); }

/* Whether one of the 8 bytes at p is a control byte, '"' or '\\' (bytes of 0x80 and up are
 * not: their high bit is set, so the borrow test skips them). */
static int needs_escape8(const char *p)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t w, q, b;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs ? 1 : 0;
}

static void put_string(out *o, const char *s, size_t n)
{
    putc_(o, '"');
    size_t run = 0; /* bytes copied as they are, pending */
    for (size_t i = 0; i < n; i++) {
        while (n - i >= 8 && !needs_escape8(s + i)) { /* eight plain bytes at a time */
            run += 8;
            i += 8;
        }
        if (i == n) break;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        put(o, s + i - run, run);
        run = 0;
        char esc[8];
        switch (c) {
        case '"': put(o, "\\\"", 2); break;
        case '\\': put(o, "\\\\", 2); break;
        case '\b': put(o, "\\b", 2); break;
        case '\f': put(o, "\\f", 2); break;
        case '\n': put(o, "\\n", 2); break;
        case '\r': put(o, "\\r", 2); break;
        case '\t': put(o, "\\t", 2); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(o, esc, 6);
        }
    }
    put(o, s + n - run, run);
    putc_(o, '"');
}

/* As cJSON printed a number held as a double. */
static void put_double(out *o, double d)
{
    char buf[32];
    int n;
    int vi = d >= 2147483647.0 ? 2147483647 : d <= -2147483648.0 ? (-2147483647 - 1) : (int)d;
    if (isnan(d) || isinf(d)) {
        n = snprintf(buf, sizeof buf, "null");
    } else if (d == (double)vi) {
        n = (int)w2l__fmt_int64(buf, vi);
    } else {
        n = snprintf(buf, sizeof buf, "%1.15g", d);
        double back = strtod(buf, NULL), max = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
        if (!(fabs(back - d) <= max * DBL_EPSILON)) n = snprintf(buf, sizeof buf, "%1.17g", d);
    }
    put(o, buf, (size_t)n);
}

static void tabs(out *o, int n)
{
    for (int i = 0; i < n; i++) putc_(o, '\t');
}

static void print_value(out *o, const w2l__json *j, int pretty, int depth)
{
    if (j->flags & JF_RAW) {
        put(o, j->s, j->n);
        return;
    }
    switch (j->kind) {
    case W2L_JSON_NULL: put(o, "null", 4); break;
    case W2L_JSON_BOOL: j->bval ? put(o, "true", 4) : put(o, "false", 5); break;
    case W2L_JSON_NUMBER:
        if (j->s) put(o, j->s, j->n);
        else put_double(o, j->d);
        break;
    case W2L_JSON_STRING: put_string(o, j->s, j->n); break;
    case W2L_JSON_ARRAY:
        putc_(o, '[');
        for (const w2l__json *c = j->child; c; c = c->next) {
            print_value(o, c, pretty, depth + 1); /* as cJSON: arrays count as a level */
            if (c->next) put(o, ", ", pretty ? 2 : 1);
        }
        putc_(o, ']');
        break;
    case W2L_JSON_OBJECT:
        putc_(o, '{');
        if (pretty) putc_(o, '\n');
        for (const w2l__json *c = j->child; c; c = c->next) {
            if (pretty) tabs(o, depth + 1);
            put_string(o, c->key ? c->key : "", c->key ? c->klen : 0);
            put(o, ":\t", pretty ? 2 : 1);
            print_value(o, c, pretty, depth + 1);
            if (c->next) putc_(o, ',');
            if (pretty) putc_(o, '\n');
        }
        if (pretty) tabs(o, depth);
        putc_(o, '}');
        break;
    default: break;
    }
}

char *w2l__json_print(const w2l__json *j, int pretty)
{
    if (!j) return NULL;
    out o = {0};
    print_value(&o, j, pretty, 0);
    putc_(&o, '\0');
    if (o.nomem) {
        w2l__free(o.p);
        return NULL;
    }
    return o.p;
}

/* ---- the writer ---- */

void w2l__json_w_init(w2l__json_writer *w, int pretty)
{
    memset(w, 0, sizeof *w);
    w->pretty = pretty != 0;
}

/* What comes before a value: the separator after the container's previous value, and a
 * member's indent and key. */
static void w_before(w2l__json_writer *w, const char *key)
{
    if (!w->depth) return;
    int d = w->depth - 1;
    if (w->array[d]) {
        if (w->count[d]++) put(w, ", ", w->pretty ? 2 : 1);
        return;
    }
    if (w->count[d]++) put(w, ",\n", w->pretty ? 2 : 1);
    if (w->pretty) tabs(w, w->depth);
    put_string(w, key ? key : "", key ? strlen(key) : 0);
    put(w, ":\t", w->pretty ? 2 : 1);
}

static void w_open(w2l__json_writer *w, const char *key, int array)
{
    w_before(w, key);
    if (w->depth == W2L_JSON_WRITER_DEPTH) {
        w->nomem = 1;
        return;
    }
    w->array[w->depth] = (unsigned char)array;
    w->count[w->depth++] = 0;
    putc_(w, array ? '[' : '{');
    if (!array && w->pretty) putc_(w, '\n');
}

void w2l__json_w_object(w2l__json_writer *w, const char *key) { w_open(w, key, 0); }
void w2l__json_w_array(w2l__json_writer *w, const char *key) { w_open(w, key, 1); }

void w2l__json_w_close(w2l__json_writer *w)
{
    if (!w->depth) {
        w->nomem = 1;
        return;
    }
    int d = --w->depth;
    if (w->array[d]) {
        putc_(w, ']');
        return;
    }
    if (w->pretty) {
        if (w->count[d]) putc_(w, '\n');
        tabs(w, d);
    }
    putc_(w, '}');
}

void w2l__json_w_string(w2l__json_writer *w, const char *key, const char *s)
{
    w_before(w, key);
    put_string(w, s ? s : "", s ? strlen(s) : 0);
}

void w2l__json_w_int64(w2l__json_writer *w, const char *key, int64_t v)
{
    char buf[24];
    w_before(w, key);
    put(w, buf, w2l__fmt_int64(buf, v));
}

void w2l__json_w_tree(w2l__json_writer *w, const char *key, const w2l__json *j)
{
    if (!j) {
        w->nomem = 1;
        return;
    }
    w_before(w, key);
    print_value(w, j, w->pretty, w->depth);
}

char *w2l__json_w_finish(w2l__json_writer *w, size_t *len)
{
    putc_(w, '\0');
    char *text = w->nomem || w->depth ? NULL : w->p;
    if (!text) w2l__free(w->p);
    else if (len) *len = w->n - 1;
    w2l__json_w_init(w, w->pretty);
    return text;
}

w2l_rc w2l__json_buf_string(w2l_buf *b, const char *s, w2l_error *err)
{
    out o = {0};
    put_string(&o, s, strlen(s));
    w2l_rc rc = o.nomem ? w2l__fail(err, W2L_NOMEM, "json: no memory for a string of %zu bytes",
                                    strlen(s))
                        : w2l_buf_append(b, o.p, o.n, err);
    w2l__free(o.p);
    return rc;
}
