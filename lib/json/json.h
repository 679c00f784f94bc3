/*
 * JSON for the rest of the library: a parsed tree with read accessors, and a builder that
 * prints (json.c; the parser is json_parse.c, the node json_int.h). Numbers keep their
 * exact value and text through a parse and print round trip (a double would corrupt
 * Iceberg snapshot ids, long decimals and numbers beyond a double's range). Parsing
 * accepts RFC 8259 JSON and rejects nesting deeper than 1000 levels; what else it accepts
 * and rejects is listed in json_parse.c. A parsed tree is one arena: parse and free are a
 * few mallocs whatever the document's size.
 */
#ifndef W2L_JSON_H
#define W2L_JSON_H

#include "../common/common.h"

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

typedef struct w2l__json w2l__json;

typedef enum w2l__json_kind {
    W2L_JSON_INVALID = 0, W2L_JSON_NULL, W2L_JSON_BOOL, W2L_JSON_NUMBER, W2L_JSON_STRING,
    W2L_JSON_ARRAY, W2L_JSON_OBJECT
} w2l__json_kind;

/* Parses len bytes (no NUL needed). W2L_CORRUPT with "line L, column C" of the first error
 * and what it is; W2L_NOMEM. */
w2l_rc w2l__json_parse(const char *text, size_t len, w2l__json **out, w2l_error *err);
void w2l__json_free(w2l__json *j); /* NULL is a no-op; frees the whole tree below j */
/* Root members w2l__json_parse_raw keeps as text: names (NULL-terminated); known, when
 * not NULL, tells the length of a text known to be a valid JSON value (one kept before)
 * at p (avail bytes there) for member names[i], or 0: such a value is skipped by that
 * comparison alone. */
typedef struct w2l__json_rawspec {
    const char *const *names;
    size_t (*known)(void *ctx, size_t i, const char *p, size_t avail);
    void *ctx;
} w2l__json_rawspec;
/* As w2l__json_parse, but the object or array values of the root object's members named
 * in raw are checked and kept as their text instead of nodes: w2l__json_raw gives it,
 * w2l__json_type their kind; they have no children. A decoder reads such a member only
 * when it differs from what it saw before (canal's mysqlType). */
w2l_rc w2l__json_parse_raw(const char *text, size_t len, const w2l__json_rawspec *raw,
                           w2l__json **out, w2l_error *err);
/* Scanning text without a tree, for hot paths that read one known layout and leave
 * anything else to the parser (cdc_canal_fast.c). The text must be followed by
 * W2L_JSON_SCAN_PAD readable bytes that are '"'. */
#define W2L_JSON_SCAN_PAD 16
/* The first '"' or '\\' at or after p (at the latest the pad's first byte), eight bytes at
 * a time: the lowest flagged byte of a word is exact (a borrow only flags bytes above a
 * match). What w2l__json_scan_quote does without SSE2; the json suite compares the two. */
static inline const char *w2l__json_scan_quote_words(const char *p)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (;; p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t x = w ^ ones * '"', y = w ^ ones * '\\';
        uint64_t hit = ((x - ones) & ~x & highs) | ((y - ones) & ~y & highs);
        if (hit) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + ((unsigned)__builtin_ctzll(hit) >> 3);
#else
            break;
#endif
        }
    }
    while (*p != '"' && *p != '\\') p++;
    return p;
}
/* The same, sixteen bytes at a time with SSE2. Inline: the parser and the hot paths call
 * it for every string. */
static inline const char *w2l__json_scan_quote(const char *p)
{
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    for (;; p += 16) {
        __m128i w = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned hit = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, bslash)));
        if (hit) return p + __builtin_ctz(hit);
    }
#else
    return w2l__json_scan_quote_words(p);
#endif
}
/* The end of the JSON value at p (text ends at e) inside depth containers, checked as the
 * parser checks it; NULL when it is not plainly valid (invalid, or a string with a \u
 * escape: the parser decides those). */
const char *w2l__json_skip(const char *p, const char *e, int depth);
/* The end of the number at p in the RFC grammar, or NULL when none is there. */
const char *w2l__json_number_end(const char *p, const char *e);
/* The text of a member kept raw (not NUL-terminated), or NULL for any other node. */
const char *w2l__json_raw(const w2l__json *j, size_t *len);

w2l__json_kind w2l__json_type(const w2l__json *j);
const char *w2l__json_kind_name(w2l__json_kind k);
/* Object member by exact key, or NULL; with duplicate names, the first. A name holding a
 * NUL byte is matched by its text before the NUL. */
w2l__json *w2l__json_get(const w2l__json *obj, const char *key);
/* Children of an array or object, in order: first, then next until NULL. */
w2l__json *w2l__json_first(const w2l__json *j);
w2l__json *w2l__json_next(const w2l__json *j);
size_t w2l__json_size(const w2l__json *j);
/* The member name of an object child. */
const char *w2l__json_key(const w2l__json *j);

/* Values: return 0 on success, -1 when j is not of that kind. int64: the number's exact
 * value when it is an integer that fits ("42", "5.0", "1e3"), else -1. double: the text
 * correctly rounded (1e400 gives inf, as strtod). */
const char *w2l__json_str(const w2l__json *j); /* NULL unless a string */
/* A string's bytes and length, NUL bytes ("\u0000") included; NULL unless a string. */
const char *w2l__json_strn(const w2l__json *j, size_t *len);
int w2l__json_int64(const w2l__json *j, int64_t *out);
int w2l__json_double(const w2l__json *j, double *out);
int w2l__json_bool(const w2l__json *j, int *out);
/* A parsed number's text exactly as written ("10", "1.50", "-0.0", "1e400"): borrowed,
 * valid while the tree lives; numbers built with new_double are formatted into buf
 * ("%.17g"). NULL when j is not a number (or buf is too small for a formatted one). */
const char *w2l__json_number_str(const w2l__json *j, char *buf, size_t size);
/* The same text copied into buf; -1 (buf "") when not a number or when it does not fit. */
int w2l__json_number_text(const w2l__json *j, char *buf, size_t size);

/* Building. Constructors return NULL when out of memory. add/append take ownership of v
 * (also on failure, when they free it) and return -1 on failure (v NULL included, so
 * calls can be chained and checked once). */
w2l__json *w2l__json_new_object(void);
w2l__json *w2l__json_new_array(void);
w2l__json *w2l__json_new_string(const char *s);
w2l__json *w2l__json_new_stringn(const char *s, size_t n);
w2l__json *w2l__json_new_int64(int64_t v);
w2l__json *w2l__json_new_double(double v);
w2l__json *w2l__json_new_bool(int v);
w2l__json *w2l__json_new_null(void);
w2l__json *w2l__json_dup(const w2l__json *j);
int w2l__json_add(w2l__json *obj, const char *key, w2l__json *v);
/* Replaces the member key (or adds it). */
int w2l__json_set(w2l__json *obj, const char *key, w2l__json *v);
int w2l__json_append(w2l__json *arr, w2l__json *v);
/* Removes and frees member key; no-op when absent. */
void w2l__json_remove(w2l__json *obj, const char *key);
/* Printed text, NUL-terminated, from w2l__malloc; NULL when out of memory. Pretty is
 * cJSON's layout (tabs); strings print whole, NUL bytes as \u0000. */
char *w2l__json_print(const w2l__json *j, int pretty);

/* A text written as it goes, in w2l__json_print's layout, without a tree (a table's
 * metadata file is printed on every commit). Members of an object take a key; the top
 * value and an array's values take NULL. Out of memory, or nesting past
 * W2L_JSON_WRITER_DEPTH, is kept until w2l__json_w_finish, which returns NULL then. */
#define W2L_JSON_WRITER_DEPTH 32
typedef struct w2l__json_writer {
    char *p;
    size_t n, cap;
    int nomem, pretty, depth;
    unsigned char array[W2L_JSON_WRITER_DEPTH]; /* per open container: an array */
    size_t count[W2L_JSON_WRITER_DEPTH];        /* and how many values it has */
} w2l__json_writer;
void w2l__json_w_init(w2l__json_writer *w, int pretty);
void w2l__json_w_object(w2l__json_writer *w, const char *key);
void w2l__json_w_array(w2l__json_writer *w, const char *key);
void w2l__json_w_close(w2l__json_writer *w); /* the innermost object or array */
void w2l__json_w_string(w2l__json_writer *w, const char *key, const char *s);
void w2l__json_w_int64(w2l__json_writer *w, const char *key, int64_t v);
void w2l__json_w_tree(w2l__json_writer *w, const char *key, const w2l__json *j);
/* The text (NUL-terminated, from w2l__malloc; *len its length) or NULL; w is reset. */
char *w2l__json_w_finish(w2l__json_writer *w, size_t *len);

/* Appends s to b as a JSON string, quotes included, escaped as w2l__json_print does. */
w2l_rc w2l__json_buf_string(w2l_buf *b, const char *s, w2l_error *err);

#endif
