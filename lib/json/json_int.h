/*
 * The JSON tree's node (json.h is the interface; json.c: accessors, building, printing;
 * json_parse.c: the parser). A parsed tree lives in one arena that its root owns: nodes,
 * keys, unescaped strings and number text, with no per-node malloc. Nodes made by the
 * builders are single mallocs with malloc'd text, and may be linked into a parsed tree
 * and the other way round: each node says which of its parts it owns (flags).
 */
#ifndef W2L_JSON_INT_H
#define W2L_JSON_INT_H

#include "json.h"
#include "../common/arena.h"

/* Deeper nesting is rejected (as cJSON, the library's former parser, did), so a hostile
 * document can never exhaust the stack of the parser, the printer or a tree walk. */
#define W2L_JSON_MAX_DEPTH 1000

enum {
    JF_HEAP = 1,    /* the node itself is a w2l__malloc block */
    JF_KEYHEAP = 2, /* key is a w2l__malloc block */
    JF_STRHEAP = 4, /* s is a w2l__malloc block */
    JF_DOUBLE = 8,  /* a number held as d (built with new_double), s NULL */
    JF_ROOT = 16,   /* the root of a parsed tree: frees mem's arena, which holds the node */
    JF_RAW = 32     /* an object or array kept as its text s, n (w2l__json_parse_raw): no
                       children */
};

/* A parsed tree's memory, kept in its own arena. mixed: a node built apart was linked into
 * the tree, so freeing it walks the tree for such nodes (else it is one release). */
typedef struct w2l__json_mem {
    w2l__arena arena;
    int mixed;
} w2l__json_mem;

struct w2l__json {
    w2l__json *next;         /* the next sibling */
    w2l__json *child, *last; /* first and last child of an array or object */
    char *key;               /* member name (NUL-terminated) of an object's child, or NULL */
    size_t klen;
    char *s;                 /* string bytes or number text, NUL-terminated */
    size_t n;                /* their length (a string may hold NUL bytes) */
    double d;                /* JF_DOUBLE numbers */
    w2l__json_mem *mem;      /* a parsed node's tree memory; NULL for built nodes */
    uint8_t kind;            /* w2l__json_kind */
    uint8_t flags;           /* JF_* */
    uint8_t bval;            /* a boolean's value */
};

#endif
