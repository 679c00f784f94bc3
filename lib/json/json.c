/*
 * The cJSON wrapper (see json.h). cJSON stores numbers as doubles, so numbers that a
 * double cannot hold exactly (more than 15 significant digits: 64-bit ids, long decimals)
 * are protected on the way in: a pre-pass wraps them as marked strings, and after parsing
 * they become cJSON "raw" nodes that hold the text and print verbatim; w2l__json_int64()
 * and w2l__json_number_text() read them exactly. w2l__json_new_int64() makes raw nodes too.
 * Limit: cJSON strings are NUL-terminated, so a "\u0000" inside a string ends it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "../common/thread.h"

#define BIGINT_MARK '\x01'

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

/* A number token of text at i: its end, and whether a double would lose it (more than 15
 * significant digits, fractional or not). */
static size_t number_end(const char *text, size_t len, size_t i, int *lossy)
{
    size_t j = i, digits = 0;
    int leading = 1;
    if (j < len && (text[j] == '-' || text[j] == '+')) j++;
    for (; j < len; j++) {
        char ch = text[j];
        if (ch >= '0' && ch <= '9') {
            if (ch != '0') leading = 0;
            if (!leading) digits++;
        } else if (ch == '.') {
            continue;
        } else if (ch == 'e' || ch == 'E') {
            j++;
            if (j < len && (text[j] == '-' || text[j] == '+')) j++;
            while (j < len && text[j] >= '0' && text[j] <= '9') j++;
            break;
        } else {
            break;
        }
    }
    *lossy = digits > 15;
    return j;
}

/* Copies text, wrapping every number a double would not hold exactly as the string
 * "\x01NUMBER". Which strings are such wrappers is recorded by their ordinal among all
 * string tokens (keys included) in *marks, so that a real string that happens to start
 * with U+0001 (written "\u0001") is never mistaken for one. */
static char *protect_numbers(const char *text, size_t len, size_t *outlen, w2l_buf *marks,
                             int *nomem)
{
    size_t big = 0;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\') i++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            int lossy;
            size_t j = number_end(text, len, i, &lossy);
            if (lossy) big++;
            i = j - 1;
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
            ordinal++;
            out[o++] = ch;
        } else if (big && (ch == '-' || (ch >= '0' && ch <= '9'))) {
            int lossy;
            size_t j = number_end(text, len, i, &lossy);
            if (lossy) {
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
    uint64_t ordinal; /* string tokens seen so far, in document order */
} unmark;

/* Walks the tree in document order, counting string tokens as the pre-pass did (an object
 * member's key, then its value), and turns the recorded ones into raw number nodes. */
static void unprotect(cJSON *c, int in_object, unmark *u)
{
    for (; c; c = c->next) {
        if (in_object) u->ordinal++; /* the member's key */
        if (cJSON_IsString(c)) {
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
    w2l_buf marks = {0};
    int nomem;
    char *copy = protect_numbers(text, len, &plen, &marks, &nomem);
    if (!copy) {
        w2l_buf_release(&marks);
        return w2l__fail(err, W2L_NOMEM, "out of memory parsing JSON");
    }
    const char *end = NULL;
    alloc_failed = 0;
    cJSON *c = cJSON_ParseWithLengthOpts(copy, plen, &end, 0);
    if (!c && alloc_failed) {
        w2l__free(copy);
        w2l_buf_release(&marks);
        return w2l__fail(err, W2L_NOMEM, "out of memory parsing JSON");
    }
    if (!c) {
        /* map the error offset back to the original text: count only up to it */
        size_t off = end && end >= copy ? (size_t)(end - copy) : 0;
        if (off > len) off = len;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < off && i < len; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        w2l__free(copy);
        w2l_buf_release(&marks);
        if (len == 0) return w2l__fail(err, W2L_CORRUPT, "invalid JSON: empty input");
        return w2l__fail(err, W2L_CORRUPT, "invalid JSON at line %zu, column %zu", line, col);
    }
    /* trailing garbage after the value */
    size_t off = (size_t)(end - copy);
    while (off < plen && (copy[off] == ' ' || copy[off] == '\n' || copy[off] == '\r' || copy[off] == '\t')) off++;
    if (off < plen) {
        cJSON_Delete(c);
        w2l__free(copy);
        w2l_buf_release(&marks);
        return w2l__fail(err, W2L_CORRUPT, "invalid JSON: text after the value at byte %zu", off);
    }
    w2l__free(copy);
    unmark u = {(const uint64_t *)marks.data, marks.len / sizeof(uint64_t), 0, 0};
    if (u.n) unprotect(c, 0, &u);
    w2l_buf_release(&marks);
    *out = J(c);
    return W2L_OK;
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
    static const char *const n[] = {"invalid", "null", "boolean", "number", "string", "array", "object"};
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

int w2l__json_int64(const w2l__json *j, int64_t *out)
{
    const cJSON *c = C(j);
    if (is_digits_raw(c)) {
        errno = 0;
        char *end;
        long long v = strtoll(c->valuestring, &end, 10);
        if (errno || *end) return -1;
        *out = v;
        return 0;
    }
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

int w2l__json_number_text(const w2l__json *j, char *buf, size_t size)
{
    const cJSON *c = C(j);
    if (is_digits_raw(c)) {
        snprintf(buf, size, "%s", c->valuestring);
        return 0;
    }
    if (!cJSON_IsNumber(c)) return -1;
    double d = c->valuedouble;
    if (d == floor(d) && fabs(d) < 9007199254740992.0) snprintf(buf, size, "%.0f", d);
    else snprintf(buf, size, "%.17g", d);
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

w2l__json *w2l__json_dup(const w2l__json *j) { HOOKS(); return J(cJSON_Duplicate(C(j), 1)); }

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
        return cJSON_ReplaceItemInObjectCaseSensitive(C(obj), key, C(v)) ? 0 : (cJSON_Delete(C(v)), -1);
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
