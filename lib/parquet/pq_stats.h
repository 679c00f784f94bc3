/*
 * What a completed Parquet file reports about itself, in Iceberg's terms (the fields of
 * an Iceberg DataFile): the contract between the Parquet writer, which fills it, and the
 * Iceberg layer, which puts it into manifests. Bounds are in Iceberg's single-value binary
 * serialization (little-endian ints/floats, 8-byte long/timestamp/time, UTF-8 strings,
 * big-endian minimal two's-complement decimals), already truncated where Iceberg allows.
 */
#ifndef W2L_PQ_STATS_H
#define W2L_PQ_STATS_H

#include "../common/common.h"

typedef struct w2l__col_stats {
    int32_t field_id;
    uint64_t column_size;  /* compressed bytes of this column's chunks, incl. page headers */
    uint64_t value_count;  /* values including nulls */
    uint64_t null_count;
    uint64_t nan_count;    /* float/double only; 0 otherwise */
    int has_nan_count;     /* 1 for float/double columns */
    int has_bounds;        /* 0 when every value is null (or only NaN) */
    unsigned char lower[64], upper[64]; /* single-value serialization */
    size_t lower_len, upper_len;
} w2l__col_stats;

typedef struct w2l__file_stats {
    uint64_t record_count;
    uint64_t file_size;       /* exact size of the published file in bytes */
    size_t ncols;
    w2l__col_stats *cols;     /* one per leaf column, in schema order (w2l__malloc) */
    uint64_t *split_offsets;  /* start offset of each row group (w2l__malloc) */
    size_t nsplits;
} w2l__file_stats;

/* Frees what a w2l__file_stats holds and zeroes it; NULL is a no-op. */
void w2l__file_stats_release(w2l__file_stats *s);

#endif
