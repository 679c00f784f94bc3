/*
 * The core data model: Iceberg primitive types, values, rows and table schemas with field
 * ids and identifier (primary-key) fields. w2l-design(7) section 4 maps MySQL/MariaDB types
 * onto these.
 */
#ifndef W2L_TYPES_H
#define W2L_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Iceberg primitive types. Numbers pinned. */
typedef enum w2l_type_id {
    W2L_TYPE_BOOLEAN = 1,
    W2L_TYPE_INT = 2,         /* 32-bit signed */
    W2L_TYPE_LONG = 3,        /* 64-bit signed */
    W2L_TYPE_FLOAT = 4,
    W2L_TYPE_DOUBLE = 5,
    W2L_TYPE_DECIMAL = 6,     /* decimal(precision 1..38, scale 0..precision) */
    W2L_TYPE_DATE = 7,        /* days since 1970-01-01 */
    W2L_TYPE_TIME = 8,        /* microseconds since midnight, 0 .. 86399999999 */
    W2L_TYPE_TIMESTAMP = 9,   /* microseconds since epoch, no zone */
    W2L_TYPE_TIMESTAMPTZ = 10,/* microseconds since epoch, UTC */
    W2L_TYPE_STRING = 11,     /* UTF-8 */
    W2L_TYPE_BINARY = 12
} w2l_type_id;

typedef struct w2l_type {
    w2l_type_id id;
    uint8_t precision; /* DECIMAL only */
    uint8_t scale;     /* DECIMAL only */
} w2l_type;

/* A 128-bit two's-complement integer: the unscaled value of a decimal. */
typedef struct w2l_int128 {
    uint64_t lo;
    int64_t hi;
} w2l_int128;

/* One value. Which member is valid follows the column's type:
 *   BOOLEAN, INT, DATE          -> i32 (BOOLEAN 0/1)
 *   LONG, TIME, TIMESTAMP(TZ)   -> i64
 *   FLOAT -> f32, DOUBLE -> f64, DECIMAL -> dec (unscaled)
 *   STRING, BINARY              -> bytes (not NUL-terminated; borrowed from the producer)
 */
typedef struct w2l_value {
    uint8_t is_null;
    union {
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
        w2l_int128 dec;
        struct { const char *ptr; size_t len; } bytes;
    } v;
} w2l_value;

/* Parses an Iceberg type name: "boolean", "int", "long", "float", "double",
 * "decimal(P,S)", "date", "time", "timestamp", "timestamptz", "string", "binary".
 * W2L_SCHEMA names the text when it is not one of these. See w2l_type_parse(3). */
W2L_API w2l_rc w2l_type_parse(const char *text, w2l_type *out, w2l_error *err);

/* Writes the Iceberg name of t into buf (at least 16 bytes) and returns buf.
 * See w2l_type_parse(3). */
W2L_API char *w2l_type_format(w2l_type t, char *buf, size_t size);

/* 1 when Iceberg allows a column of type from to become type to (same type, int->long,
 * float->double, decimal(P,S)->decimal(P2,S) with P2 >= P), else 0. See w2l_type_parse(3). */
W2L_API int w2l_type_can_promote(w2l_type from, w2l_type to);

/* Parses len bytes of text (no NUL needed) as a value of type t: the canonical form
 * w2l_value_format() writes ("true", "-12", "1.5", "NaN", "-Infinity", "12345.67",
 * "2024-02-29", "23:59:59.000001", "2024-02-29T12:00:00.500000", "…+00:00") and common
 * variants: boolean 1/0; fewer fraction digits; a space instead of the T; timestamptz with
 * Z, +HH:MM or -HH:MM (converted to UTC; no offset means UTC); decimals with fewer fraction
 * digits than the scale, or an exponent. Digits that would need rounding (a decimal's beyond
 * its scale, a time's beyond microseconds) are rejected unless they are zeros. STRING and
 * BINARY are taken as they are (BINARY: the raw bytes, not hex) and point into text.
 * W2L_CORRUPT names the type and the text when it does not fit, e.g. a decimal with too
 * many digits. Thread-safe and independent of the locale. See w2l_value_parse(3). */
W2L_API w2l_rc w2l_value_parse(w2l_type t, const char *text, size_t len, w2l_value *out,
                               w2l_error *err);

/* Writes the canonical text of v into buf; returns the length it needs (as snprintf:
 * truncated when >= size). Floats get the shortest text that reads back the same, laid out
 * as "1.0", "-0.0", "1e+16"; decimals exactly scale fraction digits; times 6 fraction
 * digits. BINARY is written as lowercase hex. NULL gives "null". See w2l_value_parse(3). */
W2L_API size_t w2l_value_format(w2l_type t, const w2l_value *v, char *buf, size_t size);

/* Orders two values of type t: <0, 0, >0. NULL sorts first; for floats NaN sorts last and
 * -0.0 before +0.0 (Iceberg's bound order). Strings compare as unsigned bytes.
 * See w2l_value_parse(3). */
W2L_API int w2l_value_compare(w2l_type t, const w2l_value *a, const w2l_value *b);

/* One column. */
typedef struct w2l_field {
    int32_t id;          /* Iceberg field id, unique in the table's history, >= 1 */
    const char *name;    /* borrowed from the schema */
    w2l_type type;
    int required;        /* 1: NOT NULL */
} w2l_field;

/* A table schema: ordered fields, a schema id and identifier fields. Immutable once shared;
 * reference counted (w2l_schema_ref/unref). */
typedef struct w2l_schema w2l_schema;

/* A new empty schema with the given Iceberg schema id; NULL when out of memory. The caller
 * holds one reference. See w2l_schema_new(3). */
W2L_API w2l_schema *w2l_schema_new(int32_t schema_id);

/* Appends a field (name copied). W2L_SCHEMA when the id or name is already used, the id is
 * < 1, or the name is empty; W2L_MISUSE once the schema is shared (refcount > 1).
 * See w2l_schema_new(3). */
W2L_API w2l_rc w2l_schema_add_field(w2l_schema *s, int32_t id, const char *name, w2l_type type,
                                    int required, w2l_error *err);

/* Marks the fields with these ids as the identifier (primary key), in key order. They
 * must exist, be required and not be float/double. See w2l_schema_new(3). */
W2L_API w2l_rc w2l_schema_set_identifier(w2l_schema *s, const int32_t *ids, size_t n,
                                         w2l_error *err);

W2L_API w2l_schema *w2l_schema_ref(w2l_schema *s);
W2L_API void w2l_schema_unref(w2l_schema *s); /* NULL is a no-op */

W2L_API int32_t w2l_schema_id(const w2l_schema *s);
W2L_API size_t w2l_schema_field_count(const w2l_schema *s);
/* The i-th field, borrowed while the schema lives; NULL when i is out of range. */
W2L_API const w2l_field *w2l_schema_field(const w2l_schema *s, size_t i);
/* Index of the field with that id or name, or -1. Names compare exactly. */
W2L_API long w2l_schema_index_of_id(const w2l_schema *s, int32_t id);
W2L_API long w2l_schema_index_of_name(const w2l_schema *s, const char *name);
/* The identifier field ids, borrowed; *n set to their number (0 for no primary key). */
W2L_API const int32_t *w2l_schema_identifier(const w2l_schema *s, size_t *n);
/* Largest field id in the schema, 0 when empty. */
W2L_API int32_t w2l_schema_max_field_id(const w2l_schema *s);

/* Checks that row (one value per field, in field order) fits s: count, required fields not
 * NULL. W2L_SCHEMA names the field. See w2l_schema_new(3). */
W2L_API w2l_rc w2l_schema_check_row(const w2l_schema *s, const w2l_value *row, size_t n,
                                    w2l_error *err);

/* The schema as Iceberg JSON ({"type":"struct","schema-id":..,"identifier-field-ids":..,
 * "fields":[..]}), NUL-terminated, allocated with w2l_malloc(); free with w2l_free().
 * See w2l_schema_to_json(3). */
W2L_API w2l_rc w2l_schema_to_json(const w2l_schema *s, char **out, w2l_error *err);

/* Parses Iceberg schema JSON of primitive fields (as written by w2l_schema_to_json()).
 * W2L_CORRUPT or W2L_SCHEMA name what is wrong. See w2l_schema_to_json(3). */
W2L_API w2l_rc w2l_schema_from_json(const char *json, size_t len, w2l_schema **out,
                                    w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
