/*
 * The cJSON wrapper (see json.h). cJSON stores numbers as doubles, so every number whose
 * value or text a double would change (integers of more than 15 significant digits: 64-bit
 * ids; any number with a fraction or an exponent: long decimals, 1.50, 1e400, 1e-400) is
 * protected on the way in: a pre-pass wraps it as a marked string, and after parsing it
 * becomes a cJSON "raw" node that holds the text as written and prints verbatim;
 * w2l__json_int64(), w2l__json_double() and w2l__json_number_str() read it exactly (the
 * integer when the text is exactly one, the correctly rounded double, the text).
 * w2l__json_new_int64() makes raw nodes too.
 * Strings holding NUL bytes ("\u0000", as canal writes binary and GEOMETRY values) keep
 * their whole length (w2l__json_strn); printing one still stops at its first NUL, as cJSON
 * prints NUL-terminated text.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "../common/thread.h"

#define BIGINT_MARK '\x01'
/* cJSON type bit (above its own flags) of a string node holding NUL bytes ("\u0000"): its
 * byte length is in valuedouble, as cJSON keeps only the NUL-terminated text. */
#define NUL_STRING (1 << 12)

static once_flag hooks_once = ONCE_FLAG_INIT;
/* cJSON reports an allocation failure like a syntax error; this flag tells them apart. */
static _Thread_local int alloc_failed;
static void *hook_malloc(size_t n)
{
    void *p = w2l__malloc(n);
    if (!p) alloc_failed = 1;
    return p;
}
static void set_hooks(void)
{
    cJSON_Hooks h = {hook_malloc, w2l__free};
    cJSON_InitHooks(&h);
}
#define HOOKS() call_once(&hooks_once, set_hooks)

static cJSON *C(const w2l__json *j) { return (cJSON *)(void *)j; }
static w2l__json *J(cJSON *c) { return (w2l__json *)(void *)c; }

/* A raw node holding a number (a protected one, or one w2l__json_new_int64 made). */
static int is_digits_raw(const cJSON *c)
{
    return cJSON_IsRaw(c) && c->valuestring &&
           (c->valuestring[0] == '-' || (c->valuestring[0] >= '0' && c->valuestring[0] <= '9'));
}

/* The JSON number token of text at i (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?):
 * its end, whether it is valid, and whether the tree must keep its text (*keep): numbers with
 * a fraction or an exponent (their value and their text as written differ from what a
 * double gives back: 1.50, 1e400, 1e-400, 0.1) and integers of more than 15 significant
 * digits. Integers of up to 15 digits are exact in a double and stay cheap cJSON numbers. */
static size_t number_end(const char *text, size_t len, size_t i, int *valid, int *keep)
{
    size_t j = i, digits = 0;
    int leading = 1, frac = 0, exp = 0;
    *valid = 0;
    *keep = 0;
    if (j < len && text[j] == '-') j++;
    size_t int_start = j;
    for (; j < len && text[j] >= '0' && text[j] <= '9'; j++) {
        if (text[j] != '0') leading = 0;
        if (!leading) digits++;
    }
    if (j == int_start || (text[int_start] == '0' && j - int_start > 1)) return j;
    if (j < len && text[j] == '.') {
        size_t f = ++j;
        for (; j < len && text[j] >= '0' && text[j] <= '9'; j++) {
            if (text[j] != '0') leading = 0;
            if (!leading) digits++;
        }
        if (j == f) return j;
        frac = 1;
    }
    if (j < len && (text[j] == 'e' || text[j] == 'E')) {
        j++;
        if (j < len && (text[j] == '-' || text[j] == '+')) j++;
        size_t e = j;
        while (j < len && text[j] >= '0' && text[j] <= '9') j++;
        if (j == e) return j;
        exp = 1;
    }
    *valid = 1;
    *keep = frac || exp || digits > 15;
    return j;
}

/* Copies text, wrapping every number whose text must be kept (see number_end) as the string
 * "\x01NUMBER". Which strings are such wrappers is recorded by their ordinal among all
 * string tokens (keys included) in *marks, so that a real string that happens to start
 * with U+0001 (written "\u0001") is never mistaken for one. */
static int is_nul_escape(const char *text, size_t len, size_t i)
{
    return i + 5 < len && text[i] == '\\' && text[i + 1] == 'u' && !memcmp(text + i + 2, "0000", 4);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) v = v << 4 | (unsigned)(hexval(p[k]) < 0 ? 0 : hexval(p[k]));
    return v;
}

/* The string token whose opening quote is at i: its end (after the closing quote) and
 * its length once decoded (UTF-8 of the escapes, as cJSON decodes them). */
static size_t string_span(const char *text, size_t len, size_t i, size_t *declen)
{
    size_t n = 0, j = i + 1;
    while (j < len && text[j] != '"') {
        if (text[j] != '\\') {
            n++, j++;
            continue;
        }
        if (j + 1 < len && text[j + 1] == 'u' && j + 5 < len) {
            unsigned cp = hex4(text + j + 2);
            j += 6;
            if (cp >= 0xd800 && cp < 0xdc00 && j + 5 < len && text[j] == '\\' &&
                text[j + 1] == 'u') {
                n += 4; /* a surrogate pair */
                j += 6;
            } else {
                n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
            }
        } else {
            n++;
            j += 2;
        }
    }
    *declen = n;
    return j < len ? j + 1 : len;
}

static char *protect_numbers(const char *text, size_t len, size_t *outlen, w2l_buf *marks,
                             w2l_buf *nuls, int *nomem)
{
    size_t big = 0, nulstr = 0;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\') nulstr += is_nul_escape(text, len, i), i++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            int valid, keep;
            size_t j = number_end(text, len, i, &valid, &keep);
            if (valid && keep) big++;
            i = j > i ? j - 1 : i;
        }
    }
    *nomem = 0;
    char *out = w2l__malloc(len + big * 3 + 1);
    if (!out) {
        *nomem = 1;
        return NULL;
    }
    size_t o = 0, ordinal = 0;
    in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            out[o++] = ch;
            if (ch == '\\' && i + 1 < len) out[o++] = text[++i];
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
            if (nulstr) { /* a string holding "\u0000" gets its decoded length recorded */
                size_t declen, end = string_span(text, len, i, &declen);
                int has = 0;
                for (size_t k = i + 1; k + 1 < end && !has; k++) {
                    if (text[k] == '\\') has = is_nul_escape(text, len, k), k++;
                }
                uint64_t rec[2] = {ordinal, declen};
                if (has && w2l_buf_append(nuls, rec, sizeof rec, NULL) != W2L_OK) {
                    w2l__free(out);
                    *nomem = 1;
                    return NULL;
                }
            }
            ordinal++;
            out[o++] = ch;
        } else if (big && (ch == '-' || (ch >= '0' && ch <= '9'))) {
            int valid, keep;
            size_t j = number_end(text, len, i, &valid, &keep);
            if (j == i) j = i + 1;
            if (valid && keep) {
                uint64_t ord = ordinal++;
                if (w2l_buf_append(marks, &ord, sizeof ord, NULL) != W2L_OK) {
                    w2l__free(out);
                    *nomem = 1;
                    return NULL;
                }
                out[o++] = '"';
                out[o++] = BIGINT_MARK;
                memcpy(out + o, text + i, j - i);
                o += j - i;
                out[o++] = '"';
            } else {
                memcpy(out + o, text + i, j - i);
                o += j - i;
            }
            i = j - 1;
        } else {
            out[o++] = ch;
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

typedef struct unmark {
    const uint64_t *marks;
    size_t n, next;  /* marks[next] is the next ordinal to convert */
    const uint64_t *nuls; /* (ordinal, decoded length) of strings holding NUL bytes */
    size_t nn, nnext;
    uint64_t ordinal; /* string tokens seen so far, in document order */
} unmark;

/* Walks the tree in document order, counting string tokens as the pre-pass did (an object
 * member's key, then its value), and turns the recorded ones into raw number nodes. */
static void unprotect(cJSON *c, int in_object, unmark *u)
{
    for (; c; c = c->next) {
        if (in_object) u->ordinal++; /* the member's key */
        if (cJSON_IsString(c)) {
            while (u->nnext < u->nn && u->nuls[2 * u->nnext] < u->ordinal) u->nnext++; /* keys */
            if (u->nnext < u->nn && u->nuls[2 * u->nnext] == u->ordinal && c->valuestring) {
                c->type |= NUL_STRING;
                c->valuedouble = (double)u->nuls[2 * u->nnext + 1];
                u->nnext++;
            }
            if (u->next < u->n && u->marks[u->next] == u->ordinal && c->valuestring &&
                c->valuestring[0] == BIGINT_MARK) {
                memmove(c->valuestring, c->valuestring + 1, strlen(c->valuestring));
                c->type = cJSON_Raw | (c->type & cJSON_StringIsConst);
                u->next++;
            }
            u->ordinal++;
        }
        if (c->child) unprotect(c->child, cJSON_IsObject(c), u);
    }
}

w2l_rc w2l__json_parse(const char *text, size_t len, w2l__json **out, w2l_error *err)
{
    HOOKS();
    *out = NULL;
    size_t plen = 0;
    w2l_buf marks = {0}, nuls = {0};
    int nomem;
    char *copy = protect_numbers(text, len, &plen, &marks, &nuls, &nomem);
    if (!copy) {
        w2l_buf_release(&marks);
        w2l_buf_release(&nuls);
        return w2l__fail(err, W2L_NOMEM, "out of memory parsing JSON");
    }
    const char *end = NULL;
    alloc_failed = 0;
    cJSON *c = cJSON_ParseWithLengthOpts(copy, plen, &end, 0);
    w2l_rc rc = W2L_OK;
    if (!c && alloc_failed) {
        rc = w2l__fail(err, W2L_NOMEM, "out of memory parsing JSON");
    } else if (!c) {
        /* map the error offset back to the original text: count only up to it */
        size_t off = end && end >= copy ? (size_t)(end - copy) : 0;
        if (off > len) off = len;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < off && i < len; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        if (len == 0) rc = w2l__fail(err, W2L_CORRUPT, "invalid JSON: empty input");
        else rc = w2l__fail(err, W2L_CORRUPT, "invalid JSON at line %zu, column %zu", line, col);
    } else {
        /* trailing garbage after the value */
        size_t off = (size_t)(end - copy);
        while (off < plen &&
               (copy[off] == ' ' || copy[off] == '\n' || copy[off] == '\r' || copy[off] == '\t'))
            off++;
        if (off < plen) {
            cJSON_Delete(c);
            rc = w2l__fail(err, W2L_CORRUPT, "invalid JSON: text after the value at byte %zu", off);
        }
    }
    w2l__free(copy);
    if (rc == W2L_OK) {
        unmark u = {(const uint64_t *)marks.data, marks.len / sizeof(uint64_t), 0,
                    (const uint64_t *)nuls.data, nuls.len / (2 * sizeof(uint64_t)), 0, 0};
        if (u.n || u.nn) unprotect(c, 0, &u);
        *out = J(c);
    }
    w2l_buf_release(&marks);
    w2l_buf_release(&nuls);
    return rc;
}

void w2l__json_free(w2l__json *j)
{
    if (j) cJSON_Delete(C(j));
}

w2l__json_kind w2l__json_type(const w2l__json *j)
{
    const cJSON *c = C(j);
    if (!c) return W2L_JSON_INVALID;
    if (cJSON_IsNull(c)) return W2L_JSON_NULL;
    if (cJSON_IsBool(c)) return W2L_JSON_BOOL;
    if (cJSON_IsNumber(c) || is_digits_raw(c)) return W2L_JSON_NUMBER;
    if (cJSON_IsString(c)) return W2L_JSON_STRING;
    if (cJSON_IsArray(c)) return W2L_JSON_ARRAY;
    if (cJSON_IsObject(c)) return W2L_JSON_OBJECT;
    return W2L_JSON_INVALID;
}

const char *w2l__json_kind_name(w2l__json_kind k)
{
    static const char *const n[] = { "invalid", "null",  "boolean", "number",
                                     "string",  "array", "object" };
    return (unsigned)k < W2L_ARRAY_LEN(n) ? n[k] : "invalid";
}

w2l__json *w2l__json_get(const w2l__json *obj, const char *key)
{
    if (!cJSON_IsObject(C(obj))) return NULL;
    return J(cJSON_GetObjectItemCaseSensitive(C(obj), key));
}

w2l__json *w2l__json_first(const w2l__json *j) { return j ? J(C(j)->child) : NULL; }
w2l__json *w2l__json_next(const w2l__json *j) { return j ? J(C(j)->next) : NULL; }

size_t w2l__json_size(const w2l__json *j)
{
    size_t n = 0;
    for (cJSON *c = j ? C(j)->child : NULL; c; c = c->next) n++;
    return n;
}

const char *w2l__json_key(const w2l__json *j) { return j ? C(j)->string : NULL; }

const char *w2l__json_str(const w2l__json *j)
{
    return cJSON_IsString(C(j)) ? C(j)->valuestring : NULL;
}

const char *w2l__json_strn(const w2l__json *j, size_t *len)
{
    const cJSON *c = C(j);
    if (!cJSON_IsString(c) || !c->valuestring) return NULL;
    *len = (c->type & NUL_STRING) ? (size_t)c->valuedouble : strlen(c->valuestring);
    return c->valuestring;
}

/* The exact integer value of number text ("12", "-5.0", "1e3", "1.5E+2"); -1 when the
 * text is not exactly an integer or does not fit 64 bits. */
static int text_int64(const char *s, int64_t *out)
{
    int neg = *s == '-';
    if (neg) s++;
    const char *ip = s;
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
    uint64_t v = 0;
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
    const cJSON *c = C(j);
    if (is_digits_raw(c)) return text_int64(c->valuestring, out);
    if (!cJSON_IsNumber(c)) return -1;
    double d = c->valuedouble;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return -1;
    *out = (int64_t)d;
    return 0;
}

int w2l__json_double(const w2l__json *j, double *out)
{
    const cJSON *c = C(j);
    if (is_digits_raw(c)) {
        *out = strtod(c->valuestring, NULL);
        return 0;
    }
    if (!cJSON_IsNumber(c)) return -1;
    *out = c->valuedouble;
    return 0;
}

int w2l__json_bool(const w2l__json *j, int *out)
{
    if (!cJSON_IsBool(C(j))) return -1;
    *out = cJSON_IsTrue(C(j)) ? 1 : 0;
    return 0;
}

const char *w2l__json_number_str(const w2l__json *j, char *buf, size_t size)
{
    const cJSON *c = C(j);
    if (is_digits_raw(c)) return c->valuestring;
    if (!cJSON_IsNumber(c) || !buf || !size) return NULL;
    /* an integer of up to 15 digits as parsed, or a number built with new_double */
    double d = c->valuedouble;
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

w2l__json *w2l__json_new_object(void) { HOOKS(); return J(cJSON_CreateObject()); }
w2l__json *w2l__json_new_array(void) { HOOKS(); return J(cJSON_CreateArray()); }
w2l__json *w2l__json_new_string(const char *s) { HOOKS(); return J(cJSON_CreateString(s)); }
w2l__json *w2l__json_new_bool(int v) { HOOKS(); return J(cJSON_CreateBool(v)); }
w2l__json *w2l__json_new_null(void) { HOOKS(); return J(cJSON_CreateNull()); }
w2l__json *w2l__json_new_double(double v)
{
    HOOKS();
    return J(cJSON_CreateNumber(v));
}

w2l__json *w2l__json_new_stringn(const char *s, size_t n)
{
    char *t = w2l__strndup(s, n);
    if (!t) return NULL;
    w2l__json *j = w2l__json_new_string(t);
    w2l__free(t);
    return j;
}

w2l__json *w2l__json_new_int64(int64_t v)
{
    HOOKS();
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return J(cJSON_CreateRaw(buf));
}

/* cJSON_Duplicate copies strings up to their first NUL: give strings holding NUL bytes
 * their whole text back. 0, or -1 when out of memory. */
static int dup_nul_strings(const cJSON *from, cJSON *to)
{
    for (; from && to; from = from->next, to = to->next) {
        if ((from->type & NUL_STRING) && from->valuestring && to->valuestring) {
            size_t n = (size_t)from->valuedouble;
            char *p = w2l__malloc(n + 1);
            if (!p) return -1;
            memcpy(p, from->valuestring, n + 1);
            w2l__free(to->valuestring);
            to->valuestring = p;
        }
        if (from->child && dup_nul_strings(from->child, to->child)) return -1;
    }
    return 0;
}

w2l__json *w2l__json_dup(const w2l__json *j)
{
    HOOKS();
    cJSON *d = cJSON_Duplicate(C(j), 1);
    if (d && dup_nul_strings(C(j), d)) {
        cJSON_Delete(d);
        return NULL;
    }
    return J(d);
}

int w2l__json_add(w2l__json *obj, const char *key, w2l__json *v)
{
    if (!v) return -1;
    if (!obj || !cJSON_AddItemToObject(C(obj), key, C(v))) {
        cJSON_Delete(C(v));
        return -1;
    }
    return 0;
}

int w2l__json_set(w2l__json *obj, const char *key, w2l__json *v)
{
    if (!v) return -1;
    if (!obj) {
        cJSON_Delete(C(v));
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(C(obj), key))
        return cJSON_ReplaceItemInObjectCaseSensitive(C(obj), key, C(v)) ? 0
                                                                         : (cJSON_Delete(C(v)), -1);
    return w2l__json_add(obj, key, v);
}

int w2l__json_append(w2l__json *arr, w2l__json *v)
{
    if (!v) return -1;
    if (!arr || !cJSON_AddItemToArray(C(arr), C(v))) {
        cJSON_Delete(C(v));
        return -1;
    }
    return 0;
}

void w2l__json_remove(w2l__json *obj, const char *key)
{
    if (obj) cJSON_DeleteItemFromObjectCaseSensitive(C(obj), key);
}

char *w2l__json_print(const w2l__json *j, int pretty)
{
    HOOKS();
    return pretty ? cJSON_Print(C(j)) : cJSON_PrintUnformatted(C(j));
}
