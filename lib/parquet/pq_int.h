/*
 * Parquet module, internal side: the pieces the writer and reader share. Thrift compact
 * protocol (thrift_compact.c), the RLE/bit-packing hybrid (rle.c), PLAIN value layout
 * (plain.c), the dictionary hash table (dict.c), page framing (page.c), codecs (pq_zstd.c)
 * and the Parquet enum numbers of parquet.thrift. Nothing here is used outside lib/parquet.
 */
#ifndef W2L_PQ_INT_H
#define W2L_PQ_INT_H

#include "parquet.h"
#include "../model/model.h"

/* ---- parquet.thrift enum values (pinned by the format) ---- */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_INT96 = 3, PQ_FLOAT = 4, PQ_DOUBLE = 5,
       PQ_BYTE_ARRAY = 6, PQ_FLBA = 7 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_CT_UTF8 = 0, PQ_CT_DECIMAL = 5, PQ_CT_DATE = 6, PQ_CT_TIME_MILLIS = 7,
       PQ_CT_TIME_MICROS = 8, PQ_CT_TIMESTAMP_MILLIS = 9, PQ_CT_TIMESTAMP_MICROS = 10 };
enum { PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE = 3, PQ_ENC_BIT_PACKED = 4,
       PQ_ENC_RLE_DICTIONARY = 8 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3 };
/* LogicalType union members */
enum { PQ_LT_STRING = 1, PQ_LT_DECIMAL = 5, PQ_LT_DATE = 6, PQ_LT_TIME = 7, PQ_LT_TIMESTAMP = 8,
       PQ_LT_INTEGER = 10 };
enum { PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS = 2, PQ_UNIT_NANOS = 3 };

/* ---- Thrift compact protocol (thrift_compact.c) ----
 * Element/field type nibbles of the compact protocol. */
enum { TC_STOP = 0, TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6,
       TC_DOUBLE = 7, TC_BINARY = 8, TC_LIST = 9, TC_SET = 10, TC_MAP = 11, TC_STRUCT = 12 };
#define W2L__TC_MAX_DEPTH 32

/* Writer: appends to out. Errors are sticky (rc), so a whole struct is written and checked
 * once at the end. */
typedef struct w2l__tc_writer {
    w2l_buf *out;
    w2l_error *err;
    w2l_rc rc;
    int depth;
    int16_t last[W2L__TC_MAX_DEPTH]; /* last field id per open struct */
} w2l__tc_writer;

void w2l__tc_writer_init(w2l__tc_writer *w, w2l_buf *out, w2l_error *err);
void w2l__tc_struct_begin(w2l__tc_writer *w); /* a top-level struct or a list element */
void w2l__tc_struct_end(w2l__tc_writer *w);   /* writes the stop byte */
void w2l__tc_field_bool(w2l__tc_writer *w, int16_t id, int v);
void w2l__tc_field_i32(w2l__tc_writer *w, int16_t id, int32_t v);
void w2l__tc_field_i64(w2l__tc_writer *w, int16_t id, int64_t v);
void w2l__tc_field_binary(w2l__tc_writer *w, int16_t id, const void *p, size_t n);
void w2l__tc_field_string(w2l__tc_writer *w, int16_t id, const char *s);
void w2l__tc_field_struct(w2l__tc_writer *w, int16_t id); /* then fields, then struct_end */
void w2l__tc_field_list(w2l__tc_writer *w, int16_t id, int elem_type, size_t n);
/* List elements */
void w2l__tc_i32(w2l__tc_writer *w, int32_t v);
void w2l__tc_binary(w2l__tc_writer *w, const void *p, size_t n);
/* Raw varints, shared with the reader's tests. */
size_t w2l__uvarint_put(uint8_t *dst, uint64_t v); /* at most 10 bytes */

/* Reader: a bounded cursor. Every read checks the bytes left; the first failure sets rc
 * (W2L_CORRUPT with what and the offset) and every later read returns zero. */
typedef struct w2l__tc_reader {
    const uint8_t *base, *p, *end;
    w2l_error *err;
    w2l_rc rc;
    int depth;
    const char *what; /* "footer", "page header": prefixes error messages */
} w2l__tc_reader;

void w2l__tc_reader_init(w2l__tc_reader *r, const void *p, size_t n, const char *what,
                         w2l_error *err);
/* Next field header of the current struct: returns 0 at the stop byte (or on error), else 1
 * with *type and *id set. *last is the previous field id of this struct, updated. */
int w2l__tc_next_field(w2l__tc_reader *r, int16_t *last, int *type, int16_t *id);
int64_t w2l__tc_read_int(w2l__tc_reader *r, int type);   /* i8/i16/i32/i64 as typed */
int w2l__tc_read_bool(w2l__tc_reader *r, int type);      /* a bool field's value */
/* Binary field: a pointer into the buffer and its length (checked against the end). */
const uint8_t *w2l__tc_read_binary(w2l__tc_reader *r, size_t *len);
/* List header: element type and count (count checked against the bytes left). */
size_t w2l__tc_read_list(w2l__tc_reader *r, int *elem_type);
void w2l__tc_skip(w2l__tc_reader *r, int type);
/* Marks entering/leaving a nested struct (depth limit). */
int w2l__tc_enter(w2l__tc_reader *r);
void w2l__tc_leave(w2l__tc_reader *r);
w2l_rc w2l__tc_corrupt(w2l__tc_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
uint64_t w2l__tc_read_uvarint(w2l__tc_reader *r);

/* ---- growable buffer helpers for hot paths ---- */
static inline w2l_rc w2l__pq_put(w2l_buf *b, const void *p, size_t n, w2l_error *err)
{
    if (n == 0) return W2L_OK;
    if (b->cap - b->len < n || !b->data) {
        w2l_rc rc = w2l__buf_reserve(b, n, err);
        if (rc != W2L_OK) return rc;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return W2L_OK;
}

/* ---- RLE / bit-packing hybrid (rle.c) ----
 * Encodes n values of bit width w (0..32) as Parquet's hybrid runs, appended to out (no
 * length prefix). */
w2l_rc w2l__rle_encode_u32(const uint32_t *v, size_t n, int w, w2l_buf *out, w2l_error *err);
w2l_rc w2l__rle_encode_u8(const uint8_t *v, size_t n, int w, w2l_buf *out, w2l_error *err);
/* Packs n values (n multiple of 8) of width w LSB-first into dst (n*w/8 bytes). */
void w2l__bitpack_u32(const uint32_t *v, size_t n, int w, uint8_t *dst);
/* Decodes exactly n values from src[0..len). W2L_CORRUPT when the runs end early, a run
 * overflows, or a value exceeds max_value. Returns the bytes consumed in *used. */
w2l_rc w2l__rle_decode_u32(const uint8_t *src, size_t len, int w, uint32_t *out, size_t n,
                           uint32_t max_value, size_t *used, w2l_error *err);
/* Bits needed for values 0..max. */
static inline int w2l__bit_width(uint32_t max)
{
    int w = 0;
    while (max) { w++; max >>= 1; }
    return w;
}

/* ---- dictionary (dict.c) ----
 * Open-addressing hash table of distinct values of one column chunk. Fixed-width values
 * (4, 8 or 16 bytes) live in vals; byte arrays in vals as PLAIN (4-byte length + bytes),
 * with offs[i] the start of entry i. */
typedef struct w2l__pq_dict {
    int width;            /* 4, 8, 16 or FLBA length; 0 for byte arrays */
    uint32_t count;
    uint64_t *slots;      /* hash << 32 | (index + 1); 0 = empty */
    size_t nslots;        /* power of two */
    int dirty;            /* slots still hold a reset's old entries: cleared at the next put */
    w2l_buf vals;         /* the dictionary page body (PLAIN) */
    size_t *offs;         /* byte arrays: entry start in vals */
    size_t offs_cap;
} w2l__pq_dict;

void w2l__pq_dict_init(w2l__pq_dict *d, int width);
void w2l__pq_dict_reset(w2l__pq_dict *d);   /* empties, keeps memory (see dict.c) */
void w2l__pq_dict_free(w2l__pq_dict *d);
/* Index of the value, inserting it when new (*added = 1). */
w2l_rc w2l__pq_dict_put(w2l__pq_dict *d, const void *p, size_t n, uint32_t *idx, int *added,
                        w2l_error *err);
/* Entry i: pointer to its bytes and length (byte arrays: without the length prefix). */
const uint8_t *w2l__pq_dict_get(const w2l__pq_dict *d, uint32_t i, size_t *len);
/* Dictionary page body size in bytes. */
static inline size_t w2l__pq_dict_bytes(const w2l__pq_dict *d) { return d->vals.len; }

/* ---- codecs (pq_zstd.c, over lib/common/zstd.c, the only file including zstd.h) ---- */
/* Compresses src into out (replacing its contents). codec: W2L_PQ_ZSTD. */
w2l_rc w2l__pq_compress(w2l__pq_codec *c, int codec, int level, const void *src, size_t n,
                        w2l_buf *out, w2l_error *err);
/* Decompresses exactly dst_len bytes; W2L_CORRUPT otherwise. */
w2l_rc w2l__pq_decompress(w2l__pq_codec *c, int codec, const void *src, size_t n, void *dst,
                          size_t dst_len, w2l_error *err);
/* What a data page holds, so that the codec can pick how to compress it. At zstd's level 3
 * (the default) PQ_Z_FIXED4/8 take the fast strategy: PLAIN fixed-width pages are written
 * for mostly distinct values, whose matches are the high bytes they share; at other levels
 * every kind but PQ_Z_STORE compresses as PQ_Z_GENERIC. */
typedef enum w2l__pq_zpage {
    PQ_Z_GENERIC, /* byte arrays, dictionary indices, booleans, dictionary pages */
    PQ_Z_FIXED4,  /* PLAIN values of 4 bytes */
    PQ_Z_FIXED8,  /* PLAIN values of 8 bytes but decimals */
    PQ_Z_DEC8,    /* PLAIN decimals as 8-byte integers */
    PQ_Z_STORE    /* data that did not compress: a frame of raw blocks, no compression */
} w2l__pq_zpage;
/* The same into dst[0, cap) (cap at least w2l__pq_compress_bound(codec, n)) for a page of
 * kind zpage; *out_len the bytes written. */
w2l_rc w2l__pq_compress_into(w2l__pq_codec *c, int codec, int level, w2l__pq_zpage zpage,
                             const void *src, size_t n, void *dst, size_t cap, size_t *out_len,
                             w2l_error *err);
/* Worst-case compressed size, for budgeting. */
size_t w2l__pq_compress_bound(int codec, size_t n);
/* GZIP, read only: w2l__gzip_decompress (../common/gzip.h). */
enum { W2L_PQ_GZIP = 2 };

/* ---- page headers (page.c) ---- */
typedef struct w2l__pq_page_header {
    int type;                 /* PQ_PAGE_* */
    int32_t uncompressed_size, compressed_size;
    int32_t num_values;       /* data or dictionary */
    int encoding;             /* values encoding */
    int def_encoding, rep_encoding;
    /* v2 */
    int32_t num_nulls, num_rows, def_len, rep_len;
    int is_compressed;
} w2l__pq_page_header;

w2l_rc w2l__pq_page_header_write(const w2l__pq_page_header *h, w2l_buf *out, w2l_error *err);
/* Parses a page header from p[0..n); *used = its size. */
w2l_rc w2l__pq_page_header_read(const uint8_t *p, size_t n, w2l__pq_page_header *h,
                                size_t *used, w2l_error *err);

/* ---- Iceberg bounds (pq_stats.c) ---- */
/* Truncates UTF-8 s to at most max_cp code points (lower bound: a prefix). */
size_t w2l__utf8_truncate_lower(const uint8_t *s, size_t n, size_t max_cp);
/* Upper bound of s truncated to max_cp code points: the prefix with its last code point
 * incremented. Writes into dst (at least 4*max_cp bytes); returns the length, or 0 when no
 * such bound exists (every code point already the largest). Copies s whole when it fits. */
size_t w2l__utf8_truncate_upper(const uint8_t *s, size_t n, size_t max_cp, uint8_t *dst);
/* Same for binary, max bytes; returns 0 when no bound (all 0xff). */
size_t w2l__bin_truncate_upper(const uint8_t *s, size_t n, size_t max, uint8_t *dst);
/* Decimals use lib/model (w2l__decimal_to_be_min, w2l__decimal_to_be_fixed,
 * w2l__decimal_from_be, w2l__decimal_fixed_len, w2l__i128_cmp). */

/* ---- little-endian loads/stores ---- */
static inline void w2l__le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void w2l__le64(uint8_t *p, uint64_t v)
{
    w2l__le32(p, (uint32_t)v);
    w2l__le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t w2l__ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t w2l__ld64(const uint8_t *p)
{
    return (uint64_t)w2l__ld32(p) | (uint64_t)w2l__ld32(p + 4) << 32;
}

/* ---- dictionary lookups for the append loops (dict.c hashes the same way) ---- */
/* The hash of a 4- or 8-byte value (its PLAIN bytes read as a little-endian integer). */
static inline uint32_t w2l__pq_dict_hash_fixed(uint64_t bits)
{
    return (uint32_t)w2l__mix64(bits);
}
/* Lookup only, for the append loops' hits (a dictionary of width 4 or 8; bits as for the
 * hash): 1 and *idx when the value is in d, else 0 (w2l__pq_dict_put then inserts it). */
static inline int w2l__pq_dict_find_fixed(const w2l__pq_dict *d, uint64_t bits, uint32_t *idx)
{
    if (!d->count) return 0; /* nothing yet, or reset: the slots may be stale (dict.c) */
    const uint32_t h = w2l__pq_dict_hash_fixed(bits);
    const size_t mask = d->nslots - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
        uint64_t e = d->slots[s];
        if (!e) return 0;
        if ((uint32_t)(e >> 32) != h) continue;
        uint32_t i = (uint32_t)e - 1;
        const uint8_t *v = d->vals.data + (size_t)i * (size_t)d->width;
        if ((d->width == 4 ? w2l__ld32(v) : w2l__ld64(v)) == bits) {
            *idx = i;
            return 1;
        }
    }
}

/* The hash of a byte array (dict.c and w2l__pq_dict_find_bytes). Arrays of up to 16 bytes
 * (status codes, country codes, short names: the values that repeat and stay in a
 * dictionary) are read as two words, overlapping where shorter than 16 bytes, 8 or 4 bytes
 * wide (or three single bytes under 4), and mixed once: a fraction of w2l__hash64's call and
 * tail copy. The hash only places entries in the table: the dictionary's order and so the
 * written file do not depend on it. */
#define W2L_PQ_DICT_SEED 0x5bd1e995
static inline uint32_t w2l__pq_dict_hash_bytes(const void *p, size_t n)
{
    const uint8_t *s = (const uint8_t *)p;
    uint64_t a, b;
    if (n > 16) return (uint32_t)w2l__hash64(p, n, W2L_PQ_DICT_SEED);
    if (n >= 8) {
        a = w2l__ld64(s);
        b = w2l__ld64(s + n - 8);
    } else if (n >= 4) {
        a = w2l__ld32(s);
        b = w2l__ld32(s + n - 4);
    } else {
        a = n ? (uint64_t)s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16 : 0;
        b = 0;
    }
    return (uint32_t)w2l__mix64((a ^ W2L_PQ_DICT_SEED) * 0x9e3779b97f4a7c15ULL ^ b ^
                                (uint64_t)n << 56);
}
/* Whether the n bytes at a and b are equal: inline word compares up to 16 bytes (as the hash
 * reads them), memcmp above. */
static inline int w2l__pq_bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n > 16) return memcmp(a, b, n) == 0;
    if (n >= 8)
        return ((w2l__ld64(a) ^ w2l__ld64(b)) | (w2l__ld64(a + n - 8) ^ w2l__ld64(b + n - 8))) == 0;
    if (n >= 4)
        return ((w2l__ld32(a) ^ w2l__ld32(b)) | (w2l__ld32(a + n - 4) ^ w2l__ld32(b + n - 4))) == 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}
/* Lookup only, for the append loop's hits in a dictionary of byte arrays (width 0): 1 and
 * *idx when the n bytes at p are in d, else 0 (w2l__pq_dict_put then inserts them). */
static inline int w2l__pq_dict_find_bytes(const w2l__pq_dict *d, const void *p, size_t n,
                                          uint32_t *idx)
{
    if (!d->count) return 0; /* as in w2l__pq_dict_find_fixed */
    const uint32_t h = w2l__pq_dict_hash_bytes(p, n);
    const size_t mask = d->nslots - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
        uint64_t e = d->slots[s];
        if (!e) return 0;
        if ((uint32_t)(e >> 32) != h) continue;
        uint32_t i = (uint32_t)e - 1;
        const uint8_t *ent = d->vals.data + d->offs[i];
        if (w2l__ld32(ent) == n && w2l__pq_bytes_eq(ent + 4, (const uint8_t *)p, n)) {
            *idx = i;
            return 1;
        }
    }
}

#endif
