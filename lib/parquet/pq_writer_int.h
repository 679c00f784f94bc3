/*
 * Writer internals shared by column_writer.c (one column: values -> pages -> column chunk)
 * and file_writer.c (rows -> columns, row groups, footer, file).
 */
#ifndef W2L_PQ_WRITER_INT_H
#define W2L_PQ_WRITER_INT_H

#include "pq_int.h"

/* How a column's values are laid out. */
typedef enum pq_kind {
    K_BOOL, K_I32, K_I64, K_F32, K_F64, K_DEC32, K_DEC64, K_DECFIX, K_BYTES
} pq_kind;

/* Running min/max of a column chunk (NaN excluded), in the column's own order. */
typedef struct w2l__pq_minmax {
    int has;
    union { int32_t i32; int64_t i64; float f32; double f64; w2l_int128 dec; } min, max;
    w2l_buf bmin, bmax; /* K_BYTES */
} w2l__pq_minmax;

/* What the footer needs about one finished column chunk. */
typedef struct w2l__pq_chunk_meta {
    int64_t start, data_off, dict_off; /* dict_off -1: none */
    int64_t comp, uncomp, num_values, null_count;
    unsigned encodings;                /* 1 << Encoding */
    uint8_t *min, *max;                /* Parquet min_value/max_value (w2l__malloc), or NULL */
    size_t min_len, max_len;
    int legacy;                        /* also write the deprecated min/max */
} w2l__pq_chunk_meta;

typedef struct w2l__pq_writer w2l__pq_writer;

/* A finished data page of the open chunk, in a block of its own: header then body at
 * mem + off, len bytes. The body is compressed straight into the block, PQ_PAGE_HEAD bytes
 * in, and the header (whose size depends on the body's) put just before it. */
typedef struct w2l__pq_page_blk {
    uint8_t *mem;
    size_t off, len;
} w2l__pq_page_blk;

typedef struct w2l__pq_colw {
    w2l__pq_writer *w;
    const w2l_field *field; /* borrowed from the schema */
    char *name;             /* Parquet name */
    pq_kind kind;
    int phys, type_len, optional;
    int value_width;        /* fixed PLAIN width; 0 for byte arrays, booleans */
    /* open page */
    w2l_buf vals;           /* PLAIN bytes; dictionary mode: uint32 indices; bool: 1 byte each */
    uint8_t *defs;          /* definition level per value (optional columns) */
    size_t defs_cap;
    size_t pg_values, pg_nonnull, pg_plain; /* pg_plain: PLAIN bytes of the page's values */
    /* open chunk */
    int dict_on, dict_used, dict_failed;
    w2l__pq_dict dict;
    w2l__pq_page_blk *pages; /* finished data pages of the chunk, in order */
    size_t npages, pages_cap;
    uint64_t pages_bytes;   /* their total length */
    unsigned z_store;       /* data pages still to store uncompressed (see flush_page) */
    int64_t ch_values, ch_nulls, ch_uncomp;
    unsigned ch_enc;
    w2l__pq_minmax ch_mm;
    /* file */
    w2l__pq_minmax file_mm;
    uint64_t f_values, f_nulls, f_nans, f_size;
} w2l__pq_colw;

struct w2l__pq_writer {
    w2l__pq_options opt;
    w2l_schema *schema;
    w2l_file *file;
    char *path;
    int io_failed; /* the last failure was the file IO's, whose message names the path */
    size_t ncols;
    w2l__pq_colw *cols;
    w2l__pq_codec *codec; /* its own, or opt.codec_ctx's */
    w2l_buf scratch, cbuf, hdr; /* page assembly, compressed dictionary page, page header */
    uint64_t offset;            /* bytes written to the file */
    uint64_t rows, rg_rows;
    /* finished row groups */
    size_t nrg, rg_cap;
    w2l__pq_chunk_meta *meta;   /* nrg * ncols */
    int64_t *rg_rows_list, *rg_start, *rg_uncomp, *rg_comp;
    w2l__pq_kv *kv;
    size_t nkv;
    int failed;
};

w2l_rc w2l__pq_colw_init(w2l__pq_writer *w, w2l__pq_colw *c, const w2l_field *f, w2l_error *err);
void w2l__pq_colw_free(w2l__pq_colw *c);
/* Appends n values, v[0], v[stride], ... */
w2l_rc w2l__pq_colw_append(w2l__pq_colw *c, const w2l_value *v, size_t stride, size_t n,
                           w2l_error *err);
/* Closes the open page (if any values). */
w2l_rc w2l__pq_colw_flush_page(w2l__pq_colw *c, w2l_error *err);
/* Writes the chunk (dictionary page, data pages) to the file at w->offset and fills meta. */
w2l_rc w2l__pq_colw_finish_chunk(w2l__pq_colw *c, w2l__pq_chunk_meta *meta, w2l_error *err);
/* Bytes the open chunk would take (pages so far + open page + dictionary). */
uint64_t w2l__pq_colw_estimate(const w2l__pq_colw *c);
/* Fills the Iceberg statistics of this column for the whole file. */
w2l_rc w2l__pq_colw_iceberg_stats(const w2l__pq_colw *c, w2l__col_stats *s, w2l_error *err);
/* Writes bytes to the file, advancing w->offset. */
w2l_rc w2l__pq_file_write(w2l__pq_writer *w, const void *p, size_t n, w2l_error *err);

#endif
