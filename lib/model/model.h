/*
 * The data model for the rest of the library (the public half is include/w2l/types.h):
 * 128-bit decimal arithmetic and encodings (decimal.c), civil date/time conversions and
 * their text forms (date.c), float text (value.c) and type checks (type.c). Pure
 * functions: no allocation, no global state, thread-safe.
 */
#ifndef W2L_MODEL_H
#define W2L_MODEL_H

#include "../common/common.h"

/* A schema's fields as one array of *n, in order (schema.c): for loops over every field of
 * every row. */
const w2l_field *w2l__schema_fields(const w2l_schema *s, size_t *n);

/* ---- 128-bit integers (decimal.c). Two's complement in a w2l_int128; the arithmetic
 * helpers return 0, or -1 on signed overflow (out then unspecified). ---- */
#define W2L_DECIMAL_MAX_PRECISION 38

w2l_int128 w2l__i128_from_i64(int64_t v);
/* 0 and *out set when v fits an int64_t; -1 otherwise. */
int w2l__i128_to_i64(w2l_int128 v, int64_t *out);
int w2l__i128_is_neg(w2l_int128 v);
int w2l__i128_is_zero(w2l_int128 v);
/* <0, 0, >0 as signed values. */
int w2l__i128_cmp(w2l_int128 a, w2l_int128 b);
/* -v; the minimum value wraps to itself (check with w2l__i128_is_neg when it matters). */
w2l_int128 w2l__i128_neg(w2l_int128 v);
int w2l__i128_add(w2l_int128 a, w2l_int128 b, w2l_int128 *out);
int w2l__i128_sub(w2l_int128 a, w2l_int128 b, w2l_int128 *out);
int w2l__i128_mul(w2l_int128 a, w2l_int128 b, w2l_int128 *out);
/* 10^n for n in 0..38 (larger n: -1). */
int w2l__i128_pow10(unsigned n, w2l_int128 *out);
/* Number of decimal digits of |v| (1 for 0); 39 for values beyond 38 digits. */
unsigned w2l__i128_digits(w2l_int128 v);

/* 1 when the unscaled value v fits precision digits (|v| < 10^precision). */
int w2l__decimal_fits(w2l_int128 v, unsigned precision);
/* v * 10^(to - from) when to >= from, exactly; when to < from only if no non-zero digit
 * is dropped. 0, or -1 when it does not fit 38 digits or would round. */
int w2l__decimal_rescale(w2l_int128 v, unsigned from_scale, unsigned to_scale, w2l_int128 *out);
/* Exact text of unscaled v with scale fraction digits ("-5.00", "0.01", "123"); returns
 * the length needed, as snprintf (at most 41). */
size_t w2l__decimal_format(w2l_int128 v, unsigned scale, char *buf, size_t size);
/* Parses len bytes of decimal text for decimal(precision, scale) into the unscaled value:
 * [+-]digits[.digits][(e|E)[+-]digits]. Fewer fraction digits than scale are padded; extra
 * fraction digits are accepted only when they are zeros (no rounding). W2L_CORRUPT names
 * the type and the text. */
w2l_rc w2l__decimal_parse(const char *text, size_t len, unsigned precision, unsigned scale,
                          w2l_int128 *out, w2l_error *err);
/* Iceberg's single-value form of a decimal: the unscaled value as big-endian two's
 * complement in the fewest bytes (1..16) that keep the sign; returns that count. */
size_t w2l__decimal_to_be_min(w2l_int128 v, unsigned char out[16]);
/* Big-endian two's complement in exactly n bytes (1..16), sign-extended, as Parquet's
 * FIXED_LEN_BYTE_ARRAY decimals; 0, or -1 when v needs more than n bytes. */
int w2l__decimal_to_be_fixed(w2l_int128 v, unsigned char *out, size_t n);
/* Reads n (1..16) big-endian two's-complement bytes; 0, or -1 when n is 0 or > 16. */
int w2l__decimal_from_be(const unsigned char *p, size_t n, w2l_int128 *out);
/* Bytes Parquet needs for a FIXED_LEN_BYTE_ARRAY decimal of this precision (1..38 -> 1..16). */
size_t w2l__decimal_fixed_len(unsigned precision);

/* Decimals wider than Iceberg's (MySQL DECIMAL up to 65 digits, Kafka Connect decimals)
 * kept as exact text. W2L_DECIMAL_TEXT_MAX bounds the digits and the scale. */
#define W2L_DECIMAL_TEXT_MAX 400
#define W2L_DECIMAL_BE_MAX 128
/* Plain text of decimal text in any form ("+012.5", "-1.25E+1", "12345e-2"): exactly
 * scale fraction digits when scale >= 0, else as many as the text implies ("1.5E+3" ->
 * "1500", "12345e-2" -> "123.45", "1.50" -> "1.50"); "-0.0" loses its sign. At most
 * precision digits in all when precision > 0. Never rounds: W2L_CORRUPT names the text
 * ("would round", "more digits than the precision"); W2L_MISUSE when size is too small
 * (W2L_DECIMAL_TEXT_MAX + 4 always suffices). outlen (may be NULL) gets the length. */
w2l_rc w2l__decimal_text_plain(const char *text, size_t len, unsigned precision, int scale,
                               char *buf, size_t size, size_t *outlen, w2l_error *err);
/* Exact text of the unscaled value in n (1..W2L_DECIMAL_BE_MAX) big-endian two's-complement
 * bytes with scale fraction digits; a negative scale appends zeros (|scale| at most
 * W2L_DECIMAL_TEXT_MAX). Returns the length, or -1 when n or scale is out of range or
 * size is too small (n * 3 + |scale| + 4 always suffices). */
int w2l__decimal_text_from_be(const unsigned char *p, size_t n, int scale, char *buf, size_t size);

/* ---- civil dates and times (date.c). Proleptic Gregorian, days since 1970-01-01. ---- */
#define W2L_MICROS_PER_DAY INT64_C(86400000000)

int w2l__is_leap_year(int64_t y);
unsigned w2l__days_in_month(int64_t y, unsigned m); /* m 1..12 */
/* Days since 1970-01-01 of y-m-d (m 1..12, d 1..31, not checked); any y within +-2^40.
 * The functions below take any day number within +-2^60. */
int64_t w2l__days_from_civil(int64_t y, unsigned m, unsigned d);
/* The inverse: y-m-d of a day number. */
void w2l__civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);
/* Floor division and its non-negative remainder (b > 0), for splitting micros into days. */
int64_t w2l__floor_div(int64_t a, int64_t b);
int64_t w2l__floor_mod(int64_t a, int64_t b);

/* Text forms; each returns the length needed, as snprintf. Years outside 0000..9999 are
 * written as ISO 8601 expanded years: "+10000-01-01", "-0001-12-31". */
size_t w2l__date_format(int64_t days, char *buf, size_t size);          /* 2024-02-29 */
size_t w2l__time_format(int64_t micros, char *buf, size_t size);        /* 23:59:59.000001 */
/* 2024-02-29T12:00:00.500000, plus "+00:00" when utc is 1. */
size_t w2l__timestamp_format(int64_t micros, int utc, char *buf, size_t size);

/* Parsers of len bytes (not NUL-terminated); W2L_CORRUPT names the type and the text.
 * date: [+-]YYYY-MM-DD (expanded years need the sign and >4 digits are allowed).
 * time: HH:MM[:SS[.f{1,6}]] (fraction digits beyond 6 only if zeros), 00:00 .. 23:59:59.999999.
 * timestamp: date[(T|' ')time]; with utc also a zone: Z, +HH:MM, -HH:MM, +HHMM, +HH
 * (converted to UTC; no zone means UTC). Without utc a zone is rejected. */
w2l_rc w2l__date_parse(const char *text, size_t len, int32_t *days, w2l_error *err);
w2l_rc w2l__time_parse(const char *text, size_t len, int64_t *micros, w2l_error *err);
w2l_rc w2l__timestamp_parse(const char *text, size_t len, int utc, int64_t *micros,
                            w2l_error *err);

/* ---- floats (value.c) ---- */
/* Shortest text that reads back to the same value, laid out as Python's repr(): "1.0",
 * "-0.0", "0.1", "1e+16", "1.5e-05", and "NaN", "Infinity", "-Infinity". For float the
 * digits are the shortest that read back as the same float. Return the length needed. */
size_t w2l__double_format(double v, char *buf, size_t size);
size_t w2l__float_format(float v, char *buf, size_t size);

/* ---- Iceberg single-value serialization (value_bytes.c): bounds in manifests ---- */
/* Writes v (not NULL) as Iceberg's binary single value into out when it fits cap bytes;
 * returns the length it needs either way (1..16 bytes, or a string's or binary's length,
 * which is not truncated here). */
size_t w2l__value_to_bytes(w2l_type t, const w2l_value *v, unsigned char *out, size_t cap);
/* The inverse; STRING/BINARY point into p. W2L_CORRUPT when n does not fit the type. */
w2l_rc w2l__value_from_bytes(w2l_type t, const unsigned char *p, size_t n, w2l_value *out,
                             w2l_error *err);

/* ---- types (type.c) ---- */
/* 1 when t is one of the primitives with a valid decimal precision/scale. */
int w2l__type_valid(w2l_type t);
/* "decimal" for DECIMAL, else the type's name ("timestamptz"); "?" when unknown. */
const char *w2l__type_name(w2l_type_id id);

#ifdef W2L_TESTING
/* Testing builds of date.c and decimal.c: set, every text takes the general parser (which
 * the fast paths must match); taken counts the texts the fast paths converted. */
extern int w2l__date_fast_off, w2l__decimal_fast_off;
extern long w2l__date_fast_taken, w2l__decimal_fast_taken;
#endif

#endif
