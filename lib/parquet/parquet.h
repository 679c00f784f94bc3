/*
 * Parquet module for the rest of the library: the project's own Apache Parquet writer
 * (streaming, rows or column batches in, one .parquet file out through a w2l_fileio) and a
 * minimal reader for the files it writes. Iceberg-facing statistics come back in
 * w2l__file_stats (pq_stats.h). Format: Apache Parquet "parquet.thrift" (FileMetaData, page
 * headers, Thrift compact protocol), "Encodings.md" (PLAIN, RLE_DICTIONARY, RLE hybrid
 * levels), data page v1, codecs UNCOMPRESSED and ZSTD.
 *
 * Mapping of Iceberg types (w2l-design(7) section 4) to Parquet:
 *   boolean     BOOLEAN
 *   int, date   INT32 (date: LogicalType DATE + ConvertedType DATE)
 *   long        INT64
 *   float       FLOAT, double DOUBLE
 *   decimal(P,S) INT32 (P <= 9), INT64 (P <= 18), else FIXED_LEN_BYTE_ARRAY of the fewest
 *               bytes for P; LogicalType DECIMAL + ConvertedType DECIMAL + scale/precision
 *   time        INT64 TIME(isAdjustedToUTC=false, MICROS) + TIME_MICROS
 *   timestamp   INT64 TIMESTAMP(isAdjustedToUTC=false, MICROS), no ConvertedType
 *   timestamptz INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS) + TIMESTAMP_MICROS
 *   string      BYTE_ARRAY STRING + UTF8;  binary BYTE_ARRAY
 * Every column carries the Iceberg field id; names outside [A-Za-z0-9_] are Avro-sanitized.
 *
 * Thread safety: a writer or reader is used by one thread at a time; different ones are
 * independent.
 */
#ifndef W2L_PARQUET_H
#define W2L_PARQUET_H

#include "../common/common.h"
#include "pq_stats.h"

/* Codecs: Parquet's CompressionCodec numbers. */
enum { W2L_PQ_UNCOMPRESSED = 0, W2L_PQ_ZSTD = 6 };

/* Iceberg's reserved field ids of position-delete files. */
#define W2L_PQ_FIELD_ID_FILE_PATH 2147483546
#define W2L_PQ_FIELD_ID_POS 2147483545

typedef struct w2l__pq_options {
    int codec;              /* W2L_PQ_ZSTD (default) or W2L_PQ_UNCOMPRESSED */
    int zstd_level;         /* 3 */
    size_t page_bytes;      /* target uncompressed data page size: 1 MiB */
    size_t row_group_bytes; /* a row group is closed once its estimated size passes this:
                             * 128 MiB; memory is bounded by about one row group */
    size_t dict_bytes;      /* dictionary page limit per column chunk, 2 MiB; past it the
                             * chunk falls back to PLAIN. 0 disables dictionaries */
    size_t page_rows;       /* also close a page after this many values (0: no limit) */
    size_t row_group_rows;  /* also close a row group after this many rows (0: no limit) */
    size_t bound_chars;     /* Iceberg string/binary bounds truncated to this many code points
                             * (bytes for binary): 16, at most 16 */
    int add_iceberg_schema; /* 1 (default): add "iceberg.schema" (w2l_schema_to_json) to the
                             * key/value metadata unless the caller gives it */
    struct w2l__pq_codec *codec_ctx; /* NULL (default): each file makes its own compression
                             * contexts; else the caller's (w2l__pq_codec_new), reused by the
                             * files one thread writes, one at a time, and outliving them */
} w2l__pq_options;

/* Compression contexts a thread reuses across its files: setting up a zstd context (a few
 * hundred KiB of tables) is most of the work of a small file. */
typedef struct w2l__pq_codec w2l__pq_codec;
w2l_rc w2l__pq_codec_new(w2l__pq_codec **out, w2l_error *err);
void w2l__pq_codec_free(w2l__pq_codec *c);

/* Fills o with the defaults above. */
void w2l__pq_options_default(w2l__pq_options *o);

/* Key/value metadata of the footer (copied at open). */
typedef struct w2l__pq_kv {
    const char *key;
    const char *value;
} w2l__pq_kv;

typedef struct w2l__pq_writer w2l__pq_writer;

/* Creates path through io (create_flags: W2L_CREATE_EXCL / _REPLACE) and starts a Parquet
 * file of schema (a reference is taken). opt NULL means defaults. *out is set on W2L_OK;
 * W2L_SCHEMA for a type that cannot be written, W2L_MISUSE for bad options. */
w2l_rc w2l__pq_writer_open(w2l_fileio *io, const char *path, unsigned create_flags,
                           const w2l_schema *schema, const w2l__pq_options *opt,
                           const w2l__pq_kv *kv, size_t nkv, w2l__pq_writer **out,
                           w2l_error *err);

/* Appends one row: one value per schema field, in field order (borrowed; copied before
 * return). W2L_SCHEMA when a required field is NULL (the row is then not written). */
w2l_rc w2l__pq_write_row(w2l__pq_writer *w, const w2l_value *row, w2l_error *err);

/* Appends nrows rows stored row-major (nrows * field count values). Faster than one call per
 * row: each column is encoded in one pass. On failure some of the rows may have been taken;
 * abort the file. */
w2l_rc w2l__pq_write_rows(w2l__pq_writer *w, const w2l_value *rows, size_t nrows,
                          w2l_error *err);

/* Appends nrows rows given column by column: cols[i] points to nrows values of field i. */
w2l_rc w2l__pq_write_columns(w2l__pq_writer *w, const w2l_value *const *cols, size_t nrows,
                             w2l_error *err);

/* Bytes the file would have if closed now (written + buffered, estimated for open pages);
 * for rolling files at a target size. */
uint64_t w2l__pq_writer_bytes(const w2l__pq_writer *w);
uint64_t w2l__pq_writer_rows(const w2l__pq_writer *w);

/* Flushes the last row group, writes the footer and publishes the file (w2l_file_close).
 * Fills *stats (release with w2l__file_stats_release) when stats is not NULL. Frees w in
 * every case; on failure nothing is published. */
w2l_rc w2l__pq_writer_close(w2l__pq_writer *w, w2l__file_stats *stats, w2l_error *err);
/* As w2l__pq_writer_close, but the complete file is handed to the caller unpublished
 * (*file, which it closes with w2l_file_close or w2l_file_close_many, or aborts). */
w2l_rc w2l__pq_writer_finish(w2l__pq_writer *w, w2l__file_stats *stats, w2l_file **file,
                             w2l_error *err);

/* Discards the file and frees w; NULL is a no-op. */
void w2l__pq_writer_abort(w2l__pq_writer *w);

/* The Parquet column name for an Iceberg field name: the name itself when it is made of
 * [A-Za-z0-9_] and does not start with a digit, else Avro-sanitized (a leading digit becomes
 * "_" + digit, any other character "_x" + uppercase hex code point: "a b" -> "a_x20b").
 * Writes into buf (NUL-terminated, truncated to size); returns the length needed. */
size_t w2l__pq_sanitize_name(const char *name, char *buf, size_t size);

/* ---- reader ---- */

typedef struct w2l__pq_reader w2l__pq_reader;

/* Per column chunk footer facts, for tests and inspection. */
typedef struct w2l__pq_chunk_info {
    int physical;          /* Parquet Type */
    int codec;
    int64_t num_values;
    int64_t total_compressed, total_uncompressed;
    int64_t data_page_offset, dict_page_offset; /* dict_page_offset -1: none */
    unsigned encodings;    /* bit (1 << Encoding) for each listed encoding */
    int has_null_count;
    int64_t null_count;
    const uint8_t *min_value, *max_value; /* NULL when absent; borrowed from the footer */
    size_t min_len, max_len;
} w2l__pq_chunk_info;

/* Opens path and parses its footer. W2L_CORRUPT says what is wrong and where. The schema
 * is rebuilt from the column types and field ids (every column needs a field id). */
w2l_rc w2l__pq_reader_open(w2l_fileio *io, const char *path, w2l__pq_reader **out,
                           w2l_error *err);
/* The same over an open w2l_rfile (taken over: closed by w2l__pq_reader_close). name is used
 * in messages. */
w2l_rc w2l__pq_reader_open_rfile(w2l_rfile *f, const char *name, w2l__pq_reader **out,
                                 w2l_error *err);
void w2l__pq_reader_close(w2l__pq_reader *r); /* NULL is a no-op */

/* Borrowed while r lives. */
const w2l_schema *w2l__pq_reader_schema(const w2l__pq_reader *r);
uint64_t w2l__pq_reader_num_rows(const w2l__pq_reader *r);
size_t w2l__pq_reader_num_row_groups(const w2l__pq_reader *r);
uint64_t w2l__pq_reader_row_group_rows(const w2l__pq_reader *r, size_t rg);
/* The value of a footer key (NUL-terminated, borrowed), or NULL. */
const char *w2l__pq_reader_kv(const w2l__pq_reader *r, const char *key, size_t *len);
/* NULL when rg or col is out of range. */
const w2l__pq_chunk_info *w2l__pq_reader_chunk(const w2l__pq_reader *r, size_t rg, size_t col);

/* Decodes column col of row group rg into out[0 .. row_group_rows): string and binary
 * values point into memory of r, valid until the next read of the same column or close. */
w2l_rc w2l__pq_reader_read_column(w2l__pq_reader *r, size_t rg, size_t col, w2l_value *out,
                                  w2l_error *err);

/* Decodes a whole row group, row-major (*rows holds row_group_rows * field count values),
 * borrowed until the next call or close. */
w2l_rc w2l__pq_reader_read_row_group(w2l__pq_reader *r, size_t rg, const w2l_value **rows,
                                     w2l_error *err);

#endif
