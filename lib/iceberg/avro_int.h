/*
 * Avro for the iceberg module, internal side: the Avro object container file ("Object
 * Container Files" of the Avro 1.11 specification) written and read around avro-c's datum
 * encoding, and helpers to reach record fields through optional unions. Only avro*.c and
 * manifest*.c include this header (the one place avro-c's types appear).
 */
#ifndef W2L_AVRO_INT_H
#define W2L_AVRO_INT_H

/* The including .c file includes <avro.h> first (scripts/check-layering keeps avro-c
 * to lib/iceberg/avro*.c and manifest*.c). */
#include "iceberg.h"

/* A container file being built in memory, published whole through w2l_fileio. */
typedef struct w2l__avro_out {
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value;     /* the record to fill before each append */
    int have_value;
    unsigned char sync[16];
    w2l_buf file;           /* header and finished blocks */
    w2l_buf block;          /* encoded records of the open block */
    long block_count;
} w2l__avro_out;

/* Parses schema_json (kept verbatim as avro.schema), writes the header with meta. */
w2l_rc w2l__avro_out_begin(w2l__avro_out *o, const char *schema_json, const w2l__ice_kv *meta,
                           size_t nmeta, w2l_error *err);
/* The record to fill, reset to defaults. */
avro_value_t *w2l__avro_out_record(w2l__avro_out *o);
/* Encodes the filled record. */
w2l_rc w2l__avro_out_append(w2l__avro_out *o, w2l_error *err);
/* Closes the last block and writes the file (W2L_CREATE_EXCL); *length: its size. With
 * pend, the written file is left for w2l__file_batch_close to close (and publish). */
w2l_rc w2l__avro_out_finish(w2l__avro_out *o, w2l_fileio *io, w2l__file_batch *pend,
                            const char *path, int64_t *length, w2l_error *err);
void w2l__avro_out_free(w2l__avro_out *o);

/* A container file read whole into memory; any codec avro-c knows (null, deflate, ...). */
typedef struct w2l__avro_in {
    void *data;
    size_t len;
    size_t nmeta;
    w2l__ice_kv *meta;      /* header metadata, values NUL-terminated */
    FILE *fp;
    avro_file_reader_t reader;
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value;
    int have_value, have_reader;
    /* uncompressed files are decoded here, not by avro-c's file reader (fp, reader) */
    avro_reader_t mem;      /* over the current block */
    char *path;             /* for messages */
    unsigned char sync[16];
    size_t pos;             /* next byte of data: after the header, then after each block */
    size_t block_end;       /* end of the current block (its sync marker follows); 0: none */
    int64_t left;           /* records left in the current block */
} w2l__avro_in;

w2l_rc w2l__avro_in_open(w2l__avro_in *in, w2l_fileio *io, const char *path, w2l_error *err);
/* 1: *rec holds the next record (valid until the next call); 0: end; -1: error (err set). */
int w2l__avro_in_next(w2l__avro_in *in, avro_value_t **rec, w2l_error *err);
const char *w2l__avro_in_meta(const w2l__avro_in *in, const char *key);
void w2l__avro_in_close(w2l__avro_in *in);

/* Field helpers. get: 1 and *out set when rec has the field and it is not null (optional
 * unions resolved to their branch), else 0. set: the field, switched to its non-null
 * branch when optional. */
int w2l__avro_get(avro_value_t *rec, const char *name, avro_value_t *out);
int w2l__avro_set(avro_value_t *rec, const char *name, avro_value_t *out);
/* The field switched to its null branch (optional fields); no-op when absent. */
void w2l__avro_set_null(avro_value_t *rec, const char *name);
/* Integer of an int or long value. */
int64_t w2l__avro_int(avro_value_t *v);

#endif
