/*
 * Configuration: a set of typed key/value properties. Keys are exactly the long flags of
 * the CLI ("warehouse", "checkpoint-interval") plus dotted keys for deeper settings
 * ("parquet.zstd-level"); w2l-config(5) lists every key. Values are kept as text and
 * validated on set, so a bad value is rejected with the key and the expected form.
 */
#ifndef W2L_CONF_H
#define W2L_CONF_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_conf w2l_conf;

/* Kinds of property values. */
typedef enum w2l_conf_type {
    W2L_CONF_STRING = 0,   /* any text */
    W2L_CONF_INT = 1,      /* decimal integer within [min, max] */
    W2L_CONF_BOOL = 2,     /* true/false, yes/no, on/off, 1/0 */
    W2L_CONF_ENUM = 3,     /* one of a fixed list of words */
    W2L_CONF_DURATION = 4, /* milliseconds: "1500", "1500ms", "10s", "5m", "1h" */
    W2L_CONF_SIZE = 5,     /* bytes: "4096", "64k", "128MiB", "1G" (powers of 1024) */
    W2L_CONF_URI = 6       /* a URI or a path */
} w2l_conf_type;

/* One entry of the property table (borrowed, static). */
typedef struct w2l_conf_prop {
    const char *name;     /* "checkpoint-interval" */
    w2l_conf_type type;
    const char *def;      /* default as text, NULL when none */
    int64_t min, max;     /* INT/DURATION/SIZE bounds, inclusive */
    const char *choices;  /* ENUM: "fail|ignore|quarantine"; NULL otherwise */
    unsigned flags;       /* W2L_CONF_F_* */
    const char *doc;      /* one paragraph */
} w2l_conf_prop;

enum {
    W2L_CONF_F_CLI = 1u << 0,       /* also a long flag of `w2l run` (--name) */
    W2L_CONF_F_PER_TABLE = 1u << 1, /* may be overridden as table.<db>.<table>.<name> */
    W2L_CONF_F_SECRET = 1u << 2,    /* never printed: shown as "****" */
    W2L_CONF_F_NAMED = 1u << 3      /* a property of a named group: "route.source" is set
                                       as route.<name>.source */
};

/* A new configuration with every property at its default. NULL when out of memory.
 * The caller owns it; free with w2l_conf_free(). See w2l_conf_new(3). */
W2L_API w2l_conf *w2l_conf_new(void);

/* Frees conf; NULL is a no-op. See w2l_conf_new(3). */
W2L_API void w2l_conf_free(w2l_conf *conf);

/* A deep copy, or NULL when out of memory. See w2l_conf_new(3). */
W2L_API w2l_conf *w2l_conf_dup(const w2l_conf *conf);

/* Sets key to value (copied) after checking it. Keys: the property table, per-table
 * overrides "table.<db>.<table>.<name>" of W2L_CONF_F_PER_TABLE properties, the
 * "<group>.<name>.<property>" keys of W2L_CONF_F_NAMED ones (route.<name>.source), free
 * "ext.<anything>" keys for host services and plug-ins, and "kafka.<property>" keys the
 * Kafka source passes to librdkafka (those naming a password, secret, key, token or SASL
 * setting are never printed). Returns W2L_CONFIG with a message
 * naming the key and the expected form when the key is unknown or the value does not fit.
 * value NULL resets the key to its default. Not thread-safe per conf. See w2l_conf_set(3). */
W2L_API w2l_rc w2l_conf_set(w2l_conf *conf, const char *key, const char *value, w2l_error *err);

/* The text value of key (its default if unset; NULL if it has none), borrowed until the
 * next w2l_conf_set() of that key or w2l_conf_free(). W2L_CONFIG for an unknown key.
 * See w2l_conf_get(3). */
W2L_API w2l_rc w2l_conf_get(const w2l_conf *conf, const char *key, const char **out,
                            w2l_error *err);

/* The value of an INT, BOOL (0/1), DURATION (ms) or SIZE (bytes) key, or the index of an
 * ENUM value in its choices. W2L_CONFIG when the key has no value or another type.
 * See w2l_conf_get(3). */
W2L_API w2l_rc w2l_conf_get_int(const w2l_conf *conf, const char *key, int64_t *out,
                                w2l_error *err);

/* Like w2l_conf_get(), but for table "db.table" first looks up the override
 * "table.<db.table>.<key>" and falls back to key. See w2l_conf_get(3). */
W2L_API w2l_rc w2l_conf_get_for_table(const w2l_conf *conf, const char *table,
                                      const char *key, const char **out, w2l_error *err);

/* 1 when key was set explicitly (not a default), else 0. See w2l_conf_get(3). */
W2L_API int w2l_conf_is_set(const w2l_conf *conf, const char *key);

/* Fails with W2L_CONFIG "missing required value: KEY (expected FORM)" unless key has a
 * value. See w2l_conf_set(3). */
W2L_API w2l_rc w2l_conf_require(const w2l_conf *conf, const char *key, w2l_error *err);

/* Applies a JSON object of keys to values (strings, numbers, booleans; nested objects
 * flatten to dotted keys). origin (e.g. the file name) prefixes error messages. All-or-
 * nothing: on failure conf is unchanged. See w2l_conf_load_json(3). */
W2L_API w2l_rc w2l_conf_load_json(w2l_conf *conf, const char *json, size_t len,
                                  const char *origin, w2l_error *err);

/* Reads a JSON file and applies it as w2l_conf_load_json(). See w2l_conf_load_json(3). */
W2L_API w2l_rc w2l_conf_load_file(w2l_conf *conf, const char *path, w2l_error *err);

/* Calls fn for every key that was set explicitly, in key order; secret values are given
 * as "****". Stops early when fn returns non-zero. See w2l_conf_get(3). */
W2L_API void w2l_conf_foreach(const w2l_conf *conf,
                              int (*fn)(void *ctx, const char *key, const char *value),
                              void *ctx);

/* The property table: *count entries, static. See w2l_conf_props(3). */
W2L_API const w2l_conf_prop *w2l_conf_props(size_t *count);

/* The property named name, or NULL. See w2l_conf_props(3). */
W2L_API const w2l_conf_prop *w2l_conf_prop_find(const char *name);

/* "Did you mean": of the n candidates (NULL entries skipped), the one nearest to word by
 * edit distance (case and '_' for '-' free, a transposition one edit), when it is close
 * enough to be a slip; NULL when none is. Borrowed from candidates. See w2l_suggest(3). */
W2L_API const char *w2l_suggest(const char *word, const char *const *candidates, size_t n);

#ifdef __cplusplus
}
#endif
#endif
