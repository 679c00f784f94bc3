/*
 * Iceberg module for the rest of the library: Apache Iceberg format version 2 and 3 tables
 * (v3: deletion vectors in Puffin files and row lineage; roaring.c, puffin.c, dv.c).
 * Table metadata JSON (table_meta.c), partition transforms (partition.c), manifests and
 * manifest lists as Avro object container files (avro.c, avro_schemas.c, manifest.c,
 * manifest_list.c), snapshot-producing operations (snapshot.c), scan planning and reading
 * (scan.c), catalogs (catalog.c registry and wrappers, catalog_hadoop.c, catalog_sql.c) and
 * the load / commit-with-retry orchestration (table.c).
 *
 * Spec: "Iceberg Table Spec", format version 2: Table Metadata, Schemas and Data Types,
 * Partitioning and Partition Transforms, Manifests, Manifest Lists, Snapshots, Sequence
 * Numbers, Scan Planning, Appendix C (JSON serialization), Appendix D (single-value
 * serialization); format version 3: Deletion Vectors, Row Lineage; the Puffin spec.
 * w2l-design(7) section 5 fixes the lake layout and the reader contracts.
 *
 * Ownership: structs returned from readers live in a caller-supplied arena (manifests,
 * manifest lists) or are freed with their _free function (metadata, tables, scans).
 * Thread safety: no shared state; one object is used by one thread at a time.
 */
#ifndef W2L_ICEBERG_H
#define W2L_ICEBERG_H

#include "../common/arena.h"
#include "../common/common.h"
#include "../io/io.h"
#include "../json/json.h"
#include "../parquet/pq_stats.h"

/* ================================================================================= */
/* Partition transforms and specs (partition.c)                                      */
/* ================================================================================= */

typedef enum w2l__ice_tkind {
    W2L_ICE_T_IDENTITY = 0, W2L_ICE_T_BUCKET, W2L_ICE_T_TRUNCATE, W2L_ICE_T_YEAR,
    W2L_ICE_T_MONTH, W2L_ICE_T_DAY, W2L_ICE_T_HOUR, W2L_ICE_T_VOID
} w2l__ice_tkind;

typedef struct w2l__ice_transform {
    w2l__ice_tkind kind;
    int32_t param; /* N of bucket[N], W of truncate[W] */
} w2l__ice_transform;

/* "identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void". */
w2l_rc w2l__ice_transform_parse(const char *text, w2l__ice_transform *out, w2l_error *err);
size_t w2l__ice_transform_format(w2l__ice_transform t, char *buf, size_t size);
/* The type of t's result for a source column of type src; W2L_SCHEMA when t does not
 * apply to src (day of a string, ...). */
w2l_rc w2l__ice_transform_result(w2l__ice_transform t, w2l_type src, w2l_type *out,
                                 w2l_error *err);
/* Applies t to in (of type src). String/binary results point into in. NULL in gives NULL. */
w2l_rc w2l__ice_transform_apply(w2l__ice_transform t, w2l_type src, const w2l_value *in,
                                w2l_value *out, w2l_error *err);
/* Murmur3 x86 32-bit hash (seed 0), the hash of Iceberg's bucket transform. */
uint32_t w2l__ice_murmur3(const void *data, size_t len);

typedef struct w2l__ice_pfield {
    int32_t source_id;
    int32_t field_id; /* >= 1000 */
    char *name;
    w2l__ice_transform transform;
    w2l_type type;    /* result type, resolved against the table schema */
} w2l__ice_pfield;

typedef struct w2l__ice_spec {
    int32_t spec_id;
    size_t nfields;
    w2l__ice_pfield *fields;
} w2l__ice_spec;

/* Parses a partition-by clause as Spark and Trino DDL write it (w2l-config(5),
 * "partition-by"): a comma list of `col`, `bucket(N, col)`, `truncate(W, col)` (either
 * argument order, as Spark and Trino differ), `year(col)`, `month(col)`, `day(col)`,
 * `hour(col)`, the plural forms years/months/days/hours, and Spark's date(col) (day) and
 * date_hour(col) (hour); names bare or in backquotes or double quotes, matched without
 * regard to case. With schema, each field is resolved against it (source_id and result
 * type; a transform that does not apply to the column's type is an error naming both);
 * without (NULL), only the syntax is checked and source ids are 0. Field ids are 1000 up,
 * in order (w2l__ice_meta_set_spec assigns a table's); names follow Iceberg's (col,
 * col_bucket, col_trunc, col_year, col_month, col_day, col_hour). The same column under two
 * time transforms, or a field twice, is an error. Errors quote the clause and the place.
 * "" or blanks: an unpartitioned spec (no fields). Release out with w2l__ice_spec_release. */
w2l_rc w2l__ice_spec_parse(const char *text, const w2l_schema *schema, w2l__ice_spec *out,
                           w2l_error *err);
void w2l__ice_spec_release(w2l__ice_spec *s); /* frees fields and names; s itself is not freed */
/* spec as a partition-by clause ("day(ts), bucket(16, id)"; "" unpartitioned), its source
 * columns named from schema (a field id when schema lacks one). Fresh memory; NULL: out of
 * memory. */
char *w2l__ice_spec_format(const w2l__ice_spec *spec, const w2l_schema *schema);
/* 1 when a and b partition alike: the same source ids and transforms in the same order
 * (ids and names aside). */
int w2l__ice_spec_same(const w2l__ice_spec *a, const w2l__ice_spec *b);

/* Partition directory of one data file: "a=1/b_day=2024-01-02" (the Hive-style path Spark
 * writes; values URL-escaped). "" for an unpartitioned spec. Fresh memory. */
char *w2l__ice_partition_path(const w2l__ice_spec *spec, const w2l_value *values);

/* ================================================================================= */
/* Data files and manifest entries (manifest.c)                                      */
/* ================================================================================= */

enum { W2L_ICE_DATA = 0, W2L_ICE_POS_DELETES = 1, W2L_ICE_EQ_DELETES = 2 };
enum { W2L_ICE_EXISTING = 0, W2L_ICE_ADDED = 1, W2L_ICE_DELETED = 2 };
enum { W2L_ICE_MANIFEST_DATA = 0, W2L_ICE_MANIFEST_DELETES = 1 };

typedef struct w2l__ice_bytes {
    const unsigned char *ptr;
    size_t len;
} w2l__ice_bytes;

/* Per-column statistics of a file; a has_* of 0 omits the column from that map. */
typedef struct w2l__ice_colstat {
    int32_t field_id;
    unsigned has_size : 1, has_values : 1, has_nulls : 1, has_nans : 1, has_lower : 1,
        has_upper : 1;
    int64_t column_size, value_count, null_count, nan_count;
    w2l__ice_bytes lower, upper;
} w2l__ice_colstat;

/* Iceberg DataFile (spec "Manifests", data_file struct). Strings and arrays are borrowed
 * (from the caller, or from the arena a reader filled). */
typedef struct w2l__ice_data_file {
    int content;              /* W2L_ICE_DATA, _POS_DELETES, _EQ_DELETES */
    const char *path;         /* absolute */
    const char *format;       /* "PARQUET" */
    int32_t spec_id;          /* spec of partition (from the manifest); in a change, -1: the
                                 table's default spec, which must then be unpartitioned */
    size_t npart;
    w2l_value *partition;     /* one value per spec field (result types) */
    int64_t record_count, file_size;
    size_t ncols;
    w2l__ice_colstat *cols;
    size_t nsplits;
    int64_t *split_offsets;
    size_t neq;
    int32_t *equality_ids;    /* content 2 only */
    int has_sort_order_id;
    int32_t sort_order_id;
    const char *referenced_data_file; /* NULL: absent */
    w2l__ice_bytes key_metadata;      /* ptr NULL: absent */
    /* format version 3 */
    int has_first_row_id;             /* data files: first_row_id (row lineage); 0: null */
    int64_t first_row_id;
    int has_content_range;            /* deletion vectors: the blob in the Puffin file */
    int64_t content_offset, content_size;
} w2l__ice_data_file;

/* Fills df from what the Parquet writer reported (spec_id -1, no partition values). stats
 * and path are borrowed; arrays are allocated in a. equality_ids (content 2) are copied. */
w2l_rc w2l__ice_data_file_from_stats(w2l__arena *a, int content, const char *path,
                                     const w2l__file_stats *stats, const int32_t *eq_ids,
                                     size_t neq, w2l__ice_data_file *df, w2l_error *err);

/* A manifest entry. Sequence numbers / snapshot id of -1 are written as null, which means
 * "inherited from the manifest list" and is allowed for ADDED entries only. A reader fills
 * inherited values in from the manifest list entry. */
typedef struct w2l__ice_entry {
    int status;            /* W2L_ICE_EXISTING / _ADDED / _DELETED */
    int64_t snapshot_id;   /* -1: null */
    int64_t seq;           /* data sequence number; -1: null */
    int64_t file_seq;      /* file sequence number; -1: null */
    w2l__ice_data_file file;
} w2l__ice_entry;

typedef struct w2l__ice_part_summary {
    int contains_null;
    int has_contains_nan, contains_nan;
    w2l__ice_bytes lower, upper; /* ptr NULL: absent */
} w2l__ice_part_summary;

/* An entry of a manifest list (spec "Manifest Lists", manifest_file). */
typedef struct w2l__ice_manifest {
    const char *path;
    int64_t length;
    int32_t spec_id;
    int content;           /* W2L_ICE_MANIFEST_DATA / _DELETES */
    int64_t seq;           /* -1: assigned when the list is written (new manifests) */
    int64_t min_seq;       /* -1: as seq */
    int64_t added_snapshot_id;
    int32_t added_files, existing_files, deleted_files;
    int64_t added_rows, existing_rows, deleted_rows;
    size_t nparts;
    w2l__ice_part_summary *parts; /* one per spec field */
    int has_first_row_id;  /* v3 data manifests: first_row_id (520); 0: null */
    int64_t first_row_id;
} w2l__ice_manifest;

/* ================================================================================= */
/* Deletion vectors (roaring.c, puffin.c, dv.c), format version 3                     */
/* ================================================================================= */

/* 64-bit Roaring bitmaps, portable serialization (roaring.c): v sorted ascending, distinct.
 * Deserialize gives a fresh sorted array (W2L_CORRUPT with the byte offset on bad input);
 * union merges two sorted arrays into a fresh one. */
w2l_rc w2l__roaring64_serialize(const uint64_t *v, size_t n, w2l_buf *out, w2l_error *err);
size_t w2l__roaring64_size(const uint64_t *v, size_t n); /* bytes serialize appends */
w2l_rc w2l__roaring64_deserialize(const unsigned char *p, size_t len, uint64_t **out, size_t *n,
                                  w2l_error *err);
w2l_rc w2l__roaring64_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
                            uint64_t **out, size_t *n, w2l_error *err);

#define W2L_PUFFIN_DV_TYPE "deletion-vector-v1"
#define W2L_ICE_ROW_POS_FIELD_ID 2147483645 /* the row position metadata column (_pos) */
/* CRC-32 (IEEE, as zlib's crc32) of p[0..n). */
uint32_t w2l__crc32(const unsigned char *p, size_t n);
/* A deletion-vector-v1 blob of the sorted positions v appended to out, and back (length,
 * magic and CRC checked; a fresh sorted array). */
w2l_rc w2l__dv_blob_encode(const uint64_t *v, size_t n, w2l_buf *out, w2l_error *err);
w2l_rc w2l__dv_blob_decode(const unsigned char *p, size_t len, uint64_t **v, size_t *n,
                           w2l_error *err);
/* One blob of a Puffin file's footer (strings in the parser's arena). */
typedef struct w2l__puffin_blob {
    int64_t offset, length;
    int64_t file_size;        /* w2l__puffin_dv_write: the whole file's */
    int64_t cardinality;      /* the "cardinality" property; -1: absent */
    const char *type, *referenced;
} w2l__puffin_blob;
/* Writes Puffin file path (W2L_CREATE_EXCL) holding one deletion vector of the data file
 * referenced: positions v[0..n) sorted, distinct. *out: the blob's offset and length and the
 * file's size. */
w2l_rc w2l__puffin_dv_write(w2l_fileio *io, const char *path, const char *referenced,
                            const uint64_t *v, size_t n, w2l__puffin_blob *out, w2l_error *err);
/* The blobs the footer of the Puffin file p[0..len) lists (uncompressed footers only). */
w2l_rc w2l__puffin_footer_parse(const unsigned char *p, size_t len, w2l__arena *a,
                                w2l__puffin_blob **out, size_t *n, w2l_error *err);
/* Whether delete file d is a deletion vector (content 1, format PUFFIN). */
int w2l__ice_is_dv(const w2l__ice_data_file *d);
/* The positions deletion vector d deletes (fresh sorted array): the blob at its content
 * offset and size, checked against its record_count. */
w2l_rc w2l__ice_dv_read(w2l_fileio *io, const w2l__ice_data_file *d, uint64_t **v, size_t *n,
                        w2l_error *err);

/* ================================================================================= */
/* Table metadata (table_meta.c)                                                     */
/* ================================================================================= */

typedef struct w2l__ice_kv {
    char *key, *value;
} w2l__ice_kv;

typedef struct w2l__ice_props {
    size_t n;
    w2l__ice_kv *kv;
} w2l__ice_props;

const char *w2l__ice_props_get(const w2l__ice_props *p, const char *key);
w2l_rc w2l__ice_props_set(w2l__ice_props *p, const char *key, const char *value,
                          w2l_error *err);
void w2l__ice_props_remove(w2l__ice_props *p, const char *key);
void w2l__ice_props_clear(w2l__ice_props *p);

typedef struct w2l__ice_snapshot {
    int64_t snapshot_id;
    int64_t parent_id;       /* -1: none */
    int64_t seq;
    int64_t timestamp_ms;
    char *manifest_list;
    int32_t schema_id;       /* -1: absent */
    w2l__ice_props summary;  /* "operation" first */
    int has_row_range;       /* v3: first-row-id and added-rows (row lineage) */
    int64_t first_row_id, added_rows;
} w2l__ice_snapshot;

typedef struct w2l__ice_schema_entry {
    int32_t schema_id;
    w2l__json *json;     /* the schema object as read or written (kept for round trips) */
    w2l_schema *schema;  /* NULL when the schema has nested types (not supported here) */
} w2l__ice_schema_entry;

typedef struct w2l__ice_log_entry {
    int64_t timestamp_ms;
    int64_t snapshot_id; /* snapshot-log */
    char *file;          /* metadata-log */
} w2l__ice_log_entry;

typedef struct w2l__ice_ref {
    char *name;
    int64_t snapshot_id;
    w2l__json *json;     /* the whole ref object (type, retention settings) */
} w2l__ice_ref;

typedef struct w2l__ice_meta {
    int format_version;      /* 1 (read only), 2 or 3 */
    int64_t next_row_id;     /* v3: the next row id to assign (row lineage) */
    char uuid[40];
    char *location;
    int64_t last_seq;
    int64_t last_updated_ms;
    int32_t last_column_id;
    int32_t current_schema_id;
    size_t nschemas;
    w2l__ice_schema_entry *schemas;
    int32_t default_spec_id;
    int32_t last_partition_id;
    size_t nspecs;
    w2l__ice_spec *specs;
    w2l__json *sort_orders;  /* array, kept as JSON */
    int32_t default_sort_order_id;
    w2l__ice_props props;
    int64_t current_snapshot_id; /* -1: none */
    size_t nsnapshots;
    w2l__ice_snapshot *snapshots;
    size_t nsnap_log, nmeta_log;
    w2l__ice_log_entry *snap_log, *meta_log;
    size_t nrefs;
    w2l__ice_ref *refs;
    w2l__json *extra;        /* other top-level members, written back unchanged */
} w2l__ice_meta;

/* Parses table metadata JSON (v1 tables are read as far as scans need; commits need v2 or
 * v3).
 * W2L_CORRUPT names the member that is missing or mistyped. */
w2l_rc w2l__ice_meta_parse(const char *json, size_t len, w2l__ice_meta **out, w2l_error *err);
/* Prints m as JSON (fresh memory, NUL-terminated). */
w2l_rc w2l__ice_meta_print(const w2l__ice_meta *m, char **out, size_t *len, w2l_error *err);
void w2l__ice_meta_free(w2l__ice_meta *m); /* NULL is a no-op */

/* New metadata of a table (a fresh uuid, no snapshots) with schema (copied; its field ids
 * kept, schema id 0), spec (NULL or no fields: unpartitioned; field ids and spec id assigned
 * here) and props (copied), except "format-version" ("2" or "3"; default 2), which is the
 * table's format version, not a property. */
w2l_rc w2l__ice_meta_new(const char *location, w2l_schema *schema,
                         const w2l__ice_spec *spec, const w2l__ice_props *props,
                         w2l__ice_meta **out, w2l_error *err);

const w2l__ice_snapshot *w2l__ice_meta_snapshot(const w2l__ice_meta *m, int64_t id);
/* Calls fn for the snapshots of the current snapshot's history, newest first (depth 0: the
 * current one), until fn returns non-zero or the history ends (no snapshot, or a parent
 * that expired). Bounded by the snapshot count, so corrupt metadata cannot loop. */
w2l_rc w2l__ice_meta_ancestry(const w2l__ice_meta *m,
                              int (*fn)(void *ctx, const w2l__ice_snapshot *s, size_t depth),
                              void *ctx, w2l_error *err);
/* The newest snapshot of the current history whose summary has w2l.checkpoint-id (and
 * w2l.job-id equal to job, unless job is NULL); NULL when none (*rc says why). */
const w2l__ice_snapshot *w2l__ice_meta_newest_checkpoint(const w2l__ice_meta *m, const char *job,
                                                         w2l_rc *rc, w2l_error *err);
const w2l__ice_schema_entry *w2l__ice_meta_schema(const w2l__ice_meta *m, int32_t id);
const w2l__ice_spec *w2l__ice_meta_spec(const w2l__ice_meta *m, int32_t id);
/* The current schema (w2l_schema, borrowed) or NULL. */
const w2l_schema *w2l__ice_meta_current_schema(const w2l__ice_meta *m);
/* Adds a copy of schema (borrowed) with the next schema id unless an equal schema
 * exists, and makes it current. last-column-id rises to its largest field id. */
w2l_rc w2l__ice_meta_set_schema(w2l__ice_meta *m, w2l_schema *schema, w2l_error *err);
/* Makes a spec partitioning like spec (borrowed; source ids of the current schema) the
 * default: an existing one when there is (w2l__ice_spec_same), else a new one with the
 * next spec id, whose fields keep the ids of earlier specs' fields with the same source
 * and transform and take new ones above last-partition-id otherwise (Iceberg's spec
 * evolution). *changed: whether the default spec changed. */
w2l_rc w2l__ice_meta_set_spec(w2l__ice_meta *m, const w2l__ice_spec *spec, int *changed,
                              w2l_error *err);
/* A spec as table metadata writes it ({"spec-id":..,"fields":[..]}; NULL: out of memory),
 * and back (result types not resolved; release out with w2l__ice_spec_release). */
w2l__json *w2l__ice_spec_to_json(const w2l__ice_spec *s);
w2l_rc w2l__ice_spec_from_json(const w2l__json *j, w2l__ice_spec *out, w2l_error *err);
/* Resolves the result types of every spec against the schemas (after parse or change). */
w2l_rc w2l__ice_meta_resolve_specs(w2l__ice_meta *m, w2l_error *err);

/* Random version-4 UUID text (36 chars + NUL) and random positive 63-bit ids. */
void w2l__ice_uuid(char out[37]);
int64_t w2l__ice_random_id(void);

/* ================================================================================= */
/* Avro files (avro.c, avro_schemas.c, manifest.c, manifest_list.c)                  */
/* ================================================================================= */

/* Avro schema JSON of a manifest entry for spec (fresh memory) and of a manifest list, of
 * a table of format_version (2 or 3). */
char *w2l__ice_avro_manifest_schema(const w2l__ice_spec *spec, int format_version);
const char *w2l__ice_avro_manifest_list_schema(int format_version);
/* Avro schema type text of a partition value of type t, e.g. {"type":"int","logicalType":"date"}.
 */
const char *w2l__ice_avro_partition_type(w2l_type t, char *buf, size_t size);

/* Writes a manifest of entries (all of one content class) to path (W2L_CREATE_EXCL), with
 * header keys schema, schema-id, partition-spec, partition-spec-id, format-version and
 * content. Fills *out (path borrowed from the argument; parts allocated in a): counts,
 * length, partition summaries, added_snapshot_id = snapshot_id, seq/min_seq -1. With pend,
 * the file is left there unclosed (w2l__file_batch_close publishes it). */
w2l_rc w2l__ice_manifest_write(w2l_fileio *io, w2l__file_batch *pend, const char *path,
                               const w2l__ice_meta *meta, const w2l__ice_spec *spec, int content,
                               int64_t snapshot_id,
                               const w2l__ice_entry *entries, size_t n, w2l__arena *a,
                               w2l__ice_manifest *out, w2l_error *err);
/* Reads every entry of a manifest into a; inherits null snapshot ids and sequence numbers
 * of ADDED entries from mf (its manifest list entry) and sets file.spec_id. spec gives
 * the partition value types (NULL: values decoded from the Avro types alone). */
w2l_rc w2l__ice_manifest_read(w2l_fileio *io, const w2l__ice_manifest *mf,
                              const w2l__ice_spec *spec, w2l__arena *a, w2l__ice_entry **out,
                              size_t *n, w2l_error *err);

/* Writes a manifest list of a table of format_version (W2L_CREATE_EXCL; pend as for
 * w2l__ice_manifest_write); entries with seq -1 get seq (and min_seq). */
w2l_rc w2l__ice_manifest_list_write(w2l_fileio *io, w2l__file_batch *pend, const char *path,
                                    int format_version, int64_t snapshot_id, int64_t parent_id,
                                    int64_t seq,
                                    const w2l__ice_manifest *m, size_t n, w2l_error *err);
w2l_rc w2l__ice_manifest_list_read(w2l_fileio *io, const char *path, w2l__arena *a,
                                   w2l__ice_manifest **out, size_t *n, w2l_error *err);

/* ---- avro.c: the Avro object container file, around avro-c's datum encoding ---- */
typedef struct w2l__avro_writer w2l__avro_writer;
typedef struct w2l__avro_reader w2l__avro_reader;
typedef struct w2l__avro_value w2l__avro_value; /* an avro_value_t, opaque outside avro*.c */
/* Routes avro-c's allocations through w2l__realloc / w2l__free (so the allocator hook
 * sees them). Called once by w2l_global_init(), before any Avro object exists. */
void w2l__avro_use_allocator(void);
/* Drops the parsed Avro schemas avro.c keeps by their JSON text (w2l_global_cleanup()). */
void w2l__avro_cache_clear(void);

/* ================================================================================= */
/* Catalogs (catalog.c)                                                              */
/* ================================================================================= */

extern const w2l_catalog_methods w2l__catalog_hadoop;
extern const w2l_catalog_methods w2l__catalog_sql;
extern w2l__registry w2l__catalog_registry;

/* Opens the catalog named by uri: "hadoop" (or NULL/""), "sql:mysql://U:P@H:PORT/DB"
 * (the part before the first ':' picks the implementation). io is borrowed. */
w2l_rc w2l__catalog_open(const char *uri, const w2l_conf *conf, const char *warehouse,
                         w2l_fileio *io, w2l_catalog **out, w2l_error *err);
/* The catalog of a pipeline's conf ("catalog", "warehouse"), opening *io first from
 * "fileio" unless the caller has one. */
w2l_rc w2l__catalog_open_conf(const w2l_conf *conf, w2l_fileio **io, w2l_catalog **out,
                              w2l_error *err);
void w2l__catalog_close(w2l_catalog *c); /* NULL is a no-op */
w2l_rc w2l__catalog_load(w2l_catalog *c, const char *ns, const char *table, w2l_buf *loc,
                         w2l_error *err);
w2l_rc w2l__catalog_commit(w2l_catalog *c, const char *ns, const char *table,
                           const char *base, const char *meta, size_t len, w2l_buf *loc,
                           w2l_error *err);
/* 1 when the catalog commits several tables in one transaction (commit_tables, V2). */
int w2l__catalog_has_batch(const w2l_catalog *c);
/* commit_tables: each item's outcome in items[i].rc (new_location NUL-terminated);
 * W2L_NOTFOUND when the catalog offers none (nothing applied). */
w2l_rc w2l__catalog_commit_tables(w2l_catalog *c, w2l_catalog_commit *items, size_t n,
                                  w2l_error *err);
w2l_rc w2l__catalog_drop(w2l_catalog *c, const char *ns, const char *table, int purge,
                         w2l_error *err);
w2l_rc w2l__catalog_rename(w2l_catalog *c, const char *ns, const char *table,
                           const char *to_ns, const char *to_table, w2l_error *err);
w2l_rc w2l__catalog_list(w2l_catalog *c, const char *ns,
                         int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                         w2l_error *err);

/* p without a "file://" or "file:" scheme (metadata may name local files either way). */
const char *w2l__ice_local_path(const char *p);
/* 1 when paths a and b name files of the same directory. */
int w2l__ice_same_dir(const char *a, const char *b);

/* The table directory of ns.table under warehouse: "<warehouse>/<ns>/<table>". */
char *w2l__ice_table_dir(const char *warehouse, const char *ns, const char *table);
/* Removes every file below dir (recursively, through io's list/remove). */
w2l_rc w2l__ice_remove_tree(w2l_fileio *io, const char *dir, w2l_error *err);
/* Removes every file a table's metadata reaches (data, deletes, manifests, lists, older
 * metadata files) and then the table directory's remaining files. */
w2l_rc w2l__ice_purge(w2l_fileio *io, const w2l__ice_meta *m, const char *meta_location,
                      w2l_error *err);

/* ================================================================================= */
/* Tables and operations (table.c, snapshot.c)                                       */
/* ================================================================================= */

typedef struct w2l__ice_table {
    w2l_catalog *catalog; /* borrowed */
    w2l_fileio *io;       /* borrowed */
    char *ns, *name;
    char *meta_location;  /* current metadata file */
    w2l__ice_meta *meta;
    w2l__file_batch *pending; /* during w2l__ice_table_try_commit: its Avro files */
} w2l__ice_table;

/* Creates ns.table at <warehouse>/<ns>/<table> (location) with schema (copied),
 * spec (NULL: unpartitioned) and props. W2L_EXISTS when it exists. */
w2l_rc w2l__ice_table_create(w2l_catalog *cat, w2l_fileio *io, const char *location,
                             const char *ns, const char *table, w2l_schema *schema,
                             const w2l__ice_spec *spec, const w2l__ice_props *props,
                             w2l__ice_table **out, w2l_error *err);
/* The same table in memory only (meta_location NULL): nothing is written. */
w2l_rc w2l__ice_table_new(w2l_catalog *cat, w2l_fileio *io, const char *location,
                          const char *ns, const char *table, w2l_schema *schema,
                          const w2l__ice_spec *spec, const w2l__ice_props *props,
                          w2l__ice_table **out, w2l_error *err);
/* Loads the current metadata of ns.table. W2L_NOTFOUND. */
w2l_rc w2l__ice_table_load(w2l_catalog *cat, w2l_fileio *io, const char *ns,
                           const char *table, w2l__ice_table **out, w2l_error *err);
/* Reloads the current metadata (after a conflict). */
w2l_rc w2l__ice_table_refresh(w2l__ice_table *t, w2l_error *err);
void w2l__ice_table_free(w2l__ice_table *t); /* NULL is a no-op */

/* Manifest merging defaults, for tables without commit.manifest.min-count-to-merge and
 * commit.manifest.target-size-bytes. */
#define W2L_ICE_MERGE_MIN_COUNT 16
#define W2L_ICE_MERGE_TARGET_BYTES (8 << 20)

/* Kinds of change; each commit is one atomic metadata swap. */
typedef enum w2l__ice_op {
    W2L_ICE_OP_APPEND = 1,    /* data files */
    W2L_ICE_OP_ROW_DELTA,     /* data files + equality and position delete files */
    W2L_ICE_OP_TRUNCATE,      /* delete every live file; the change's own files (rows after
                                 the truncate) are added in the same snapshot */
    W2L_ICE_OP_SCHEMA,        /* schema change (no snapshot) */
    W2L_ICE_OP_REPLACE,       /* compaction: the removed files go, the change's files (with
                                 data_seq) come in; W2L_CONFLICT when a removed file is no
                                 longer live. Carries the parent's w2l.* summary keys. */
    W2L_ICE_OP_EXPIRE         /* removes the snapshots expire_ids names (no snapshot) */
} w2l__ice_op;

typedef enum w2l__ice_schema_op {
    W2L_ICE_ADD_COLUMN = 1,   /* name, type, required (only when the table is empty) */
    W2L_ICE_DROP_COLUMN,      /* name */
    W2L_ICE_RENAME_COLUMN,    /* name -> new_name */
    W2L_ICE_WIDEN_COLUMN,     /* name, type (int->long, float->double, decimal P up) */
    W2L_ICE_MAKE_OPTIONAL,    /* name */
    W2L_ICE_SET_IDENTIFIER,   /* names: the new identifier fields, comma separated */
    W2L_ICE_MOVE_COLUMN,      /* name goes right after new_name, or first when new_name is
                                 NULL (Iceberg's moveAfter/moveFirst; the id is kept) */
    W2L_ICE_MAKE_REQUIRED     /* name: optional -> required (Iceberg's requireColumn, an
                                 incompatible change: only for a column that holds no NULL,
                                 a new primary key's, which the source keeps NOT NULL) */
} w2l__ice_schema_op;

typedef struct w2l__ice_schema_change {
    w2l__ice_schema_op op;
    const char *name;
    const char *new_name;
    w2l_type type;
    int required;
} w2l__ice_schema_change;

/* One change, re-applicable to a newer base: a commit that loses the race reloads the
 * table and applies the same change again. Files and changes are borrowed. */
typedef struct w2l__ice_change {
    w2l__ice_op op;
    const w2l__ice_data_file *files;   /* data files (content 0) */
    size_t nfiles;
    const w2l__ice_data_file *deletes; /* delete files (content 1 and 2) */
    size_t ndeletes;
    const w2l__ice_schema_change *schema_changes;
    size_t nschema_changes;
    const w2l__ice_kv *summary;        /* extra summary keys (w2l.job-id, w2l.epoch, ...) */
    size_t nsummary;
    int64_t snapshot_id;               /* 0: chosen at the first attempt */
    /* REPLACE: the data sequence number of the change's files (the compaction's base
     * snapshot's, so that deletes committed since still apply to them) and the paths of the
     * data and delete files that go. */
    int64_t data_seq;
    const char *const *removed;
    size_t nremoved;
    /* EXPIRE: the snapshots to remove (the current one and those refs name are kept). */
    const int64_t *expire_ids;
    size_t nexpire;
    /* Filled by a successful commit (in arena): the manifest lists of the snapshots EXPIRE
     * removed, and the metadata files that fell out of the metadata-log (removed when the
     * table's write.metadata.delete-after-commit.enabled is true). */
    char **expired_lists;
    size_t nexpired_lists;
    size_t merged_manifests;           /* manifests the commit merged (manifest merging) */

    /* Filled by the first attempt and reused by retries (the manifests of the new files
     * are written once, one per content class and partition spec): release with
     * w2l__ice_change_release(). */
    w2l__arena arena;
    int have_manifests;
    w2l__ice_manifest *own;
    size_t nown;
} w2l__ice_change;

void w2l__ice_change_init(w2l__ice_change *c, w2l__ice_op op);
/* Frees what attempts allocated; remove_files: also delete the manifests written for a
 * change that was never committed. */
void w2l__ice_change_release(w2l__ice_change *c, w2l_fileio *io, int remove_files);
/* The change's files changed after an attempt that lost its race (its manifests were never
 * published): they are removed, and the next attempt writes them again. */
void w2l__ice_change_unwrite(w2l__ice_change *c, w2l_fileio *io);

/* Applies c to t->meta in memory: writes the manifests (once) and a manifest list through
 * t->io and adds the snapshot. The caller then commits t->meta. */
w2l_rc w2l__ice_apply(w2l__ice_table *t, w2l__ice_change *c, w2l_error *err);

/* Applies c and commits; on W2L_CONFLICT reloads the table and retries up to retries
 * times, then returns W2L_CONFLICT. On success t holds the new metadata. */
w2l_rc w2l__ice_table_commit(w2l__ice_table *t, w2l__ice_change *c, int retries,
                             w2l_error *err);
/* One attempt: apply + catalog swap; W2L_CONFLICT leaves t at its (stale) base. It is
 * prepare, the catalog's commit, finish; a multi-table commit prepares each table, hands
 * the catalog the batch and finishes each with its outcome. */
w2l_rc w2l__ice_table_try_commit(w2l__ice_table *t, w2l__ice_change *c, w2l_error *err);

/* A prepared attempt: the change applied to t->meta, its manifests and list written
 * (durable), the new metadata printed. */
typedef struct w2l__ice_prep w2l__ice_prep;
/* The first half of an attempt. On failure t is back at what the catalog says. */
w2l_rc w2l__ice_table_prepare(w2l__ice_table *t, w2l__ice_change *c, w2l__ice_prep **out,
                              w2l_error *err);
const char *w2l__ice_prep_base(const w2l__ice_prep *p);   /* the base metadata location */
const char *w2l__ice_prep_metadata(const w2l__ice_prep *p, size_t *len); /* the new one */
/* The second half, with the catalog's answer: rc W2L_OK and loc (the new location), or
 * rc and cerr (W2L_UNAVAILABLE: outcome unknown, the attempt's files are kept). Frees p.
 * On failure t is reloaded and the result is rc with *err = *cerr (or the reload's error). */
w2l_rc w2l__ice_table_finish(w2l__ice_table *t, w2l__ice_prep *p, w2l_rc rc, const char *loc,
                             const w2l_error *cerr, w2l_error *err);

/* The data directory and a fresh unique file path under it: "<loc>/data/<part/>NAME.parquet". */
char *w2l__ice_new_data_path(const w2l__ice_table *t, const char *partition_path,
                             const char *prefix);

/* ================================================================================= */
/* Table maintenance (maintain.c)                                                    */
/* ================================================================================= */

/* What maintenance does to a table. Expiry obeys the table's own properties when set
 * (history.expire.max-snapshot-age-ms, history.expire.min-snapshots-to-keep); these are the
 * defaults otherwise. */
typedef struct w2l__ice_policy {
    int64_t max_snapshot_age_ms;
    int64_t min_snapshots;
    int64_t target_file_bytes;     /* compaction output files; under an eighth: small */
    int64_t compact_small_files;   /* compact at this many data files added since the last
                                      compaction, */
    int64_t compact_delete_files;  /* or this many delete files added since, */
    double compact_delete_ratio;   /* or deletes/records at or above this (0: off), with
                                      at least W2L_ICE_COMPACT_MIN_DELETES deletes */
    double rewrite_delete_ratio;   /* a large file is rewritten at this share of deleted
                                      rows; below it its deleted rows become a position
                                      delete */
    int64_t orphan_age_ms;         /* orphans younger than this stay */
} w2l__ice_policy;

#define W2L_ICE_COMPACT_MIN_DELETES 10000
/* A data file under target_file_bytes / this is small: compaction merges it. Files the
 * writers roll come out well under the target once compressed, so compaction's own output
 * must not count as small, or every compaction would rewrite the whole table again. */
#define W2L_ICE_SMALL_FILE_RATIO 8
void w2l__ice_policy_default(w2l__ice_policy *p);

/* What one maintenance action did. */
typedef struct w2l__ice_maint_stats {
    int64_t files_in, files_out, bytes_in, bytes_out; /* compaction */
    int64_t rows_out, deletes_out;                    /* rows written, positions deleted */
    int64_t snapshots_expired;                        /* expiry */
    int64_t files_removed, bytes_removed;             /* expiry and orphan removal */
    int64_t ms;
} w2l__ice_maint_stats;

/* ---- expiry ---- */
/* The snapshots of m that expire at now_ms (fresh array, *n 0 when none): those neither
 * among the newest min-snapshots of the current ancestry nor younger than the maximum age,
 * nor named by a ref. The newest snapshot of each w2l.job-id stays as well (restore finds
 * its checkpoint there). */
w2l_rc w2l__ice_expire_select(const w2l__ice_meta *m, const w2l__ice_policy *p, int64_t now_ms,
                              int64_t **ids, size_t *n, w2l_error *err);
/* After an EXPIRE commit: removes every manifest list in lists, and the manifests, data and
 * delete files they reach that no snapshot of after (the committed metadata) still
 * reaches. Missing files are skipped; dry_run only counts. */
w2l_rc w2l__ice_expire_cleanup(w2l_fileio *io, const w2l__ice_meta *after, char *const *lists,
                               size_t nlists, int dry_run, w2l__ice_maint_stats *st,
                               w2l_error *err);

/* ---- compaction ---- */
/* Whether the current snapshot's summary passes a compaction threshold (no IO). */
int w2l__ice_compact_due(const w2l__ice_meta *m, const w2l__ice_policy *p);

typedef struct w2l__ice_compaction w2l__ice_compaction;
struct w2l__pq_options;
/* Plans and writes a compaction of m's current snapshot (the base), one partition of one
 * spec at a time: small data files and files with deleted rows are rewritten within their
 * partition into files of about target size with every delete applied (a partition's lone
 * small file without deletes stays); large files with few deleted rows get one position
 * delete file per partition; a delete file of the base goes once every data file it
 * applies to is handled. New files go under their partition's data directory, in their
 * spec. *out NULL when there is nothing to do. Memory: the base's deletes plus one output
 * row group. */
w2l_rc w2l__ice_compact_prepare(w2l_fileio *io, const w2l__ice_meta *m,
                                const w2l__ice_policy *p, const struct w2l__pq_options *pq,
                                w2l__ice_compaction **out, w2l_error *err);
/* Fills c (initialised by the caller, W2L_ICE_OP_REPLACE) from the compaction; c borrows
 * from it. */
void w2l__ice_compaction_change(const w2l__ice_compaction *k, w2l__ice_change *c);
/* Brings compaction k up to m's current snapshot before it commits: a position delete
 * committed since the base that names a file the compaction rewrote would apply to
 * nothing once it commits (the row would come back), so the row it names is followed to
 * its place in the compaction's output and deleted there, in a new position delete file
 * of the compaction; a delete file committed since the base whose rows all name such files
 * (a deletion vector always) is removed by the compaction, one that also names others
 * stays (its rows of rewritten files then name no live file; the next compaction removes
 * it). What an earlier call added is
 * replaced. *changed: the compaction's files differ from before the call (a change made
 * of it must be made again). Format version 3: deletion vectors are read, and written
 * (one per output file). W2L_CONFLICT when the table has no snapshot. */
w2l_rc w2l__ice_compaction_rebase(w2l_fileio *io, const w2l__ice_meta *m, w2l__ice_compaction *k,
                                  int *changed, w2l_error *err);
const w2l__ice_maint_stats *w2l__ice_compaction_stats(const w2l__ice_compaction *k);
int64_t w2l__ice_compaction_base(const w2l__ice_compaction *k); /* base snapshot id */
/* remove_outputs: the compaction was not committed; its files are deleted. */
void w2l__ice_compaction_free(w2l__ice_compaction *k, w2l_fileio *io, int remove_outputs);

/* ---- orphan removal ---- */
/* Removes the files under location (data/ and metadata/) that none of the tables in metas
 * (every table whose location it is, with their metadata file paths) reaches, older than
 * p->orphan_age_ms at now_ms, and for which keep (may be NULL) returns 0. The file IO must
 * tell file ages (stat); dry_run only counts. */
w2l_rc w2l__ice_remove_orphans(w2l_fileio *io, const char *location,
                               const w2l__ice_meta *const *metas, const char *const *meta_files,
                               size_t ntables, const w2l__ice_policy *p, int64_t now_ms,
                               int (*keep)(void *ctx, const char *path), void *keep_ctx,
                               int dry_run, w2l__ice_maint_stats *st, w2l_error *err);

/* ---- position-delete files (pos_rebase.c) ---- */
typedef struct w2l__ice_posref { /* one deleted row: data file path (borrowed), position */
    const char *path;
    int64_t pos;
} w2l__ice_posref;
/* qsort order of position deletes: by path, then position (the spec's file order). */
int w2l__ice_posref_cmp(const void *a, const void *b);
/* Writes position-delete file path of the sorted rows v[0..n) (a row repeated is written
 * once) and fills *df (strings in a; spec and partition are the caller's to set), naming
 * the data file in referenced_data_file when every row is of one. The file is removed when
 * anything fails. */
w2l_rc w2l__ice_pos_file_write(w2l_fileio *io, const char *path,
                               const struct w2l__pq_options *pq, const w2l__ice_posref *v,
                               size_t n, w2l__arena *a, w2l__ice_data_file *df, w2l_error *err);

/* The rows position-delete file d (Parquet) or deletion vector d (Puffin) deletes, in file
 * order (fresh array; paths in a). */
w2l_rc w2l__ice_pos_file_read(w2l_fileio *io, const w2l__ice_data_file *d, w2l__arena *a,
                              w2l__ice_posref **out, size_t *n, w2l_error *err);

/* ---- deletion vectors of a commit (dv.c) ---- */
/* Writes a Puffin file of one deletion vector (positions pos[0..n), sorted, distinct) of
 * data file referenced, in the directory of path beside, and makes *df its entry (df's
 * spec and partition kept; strings in a). */
w2l_rc w2l__ice_dv_file_write(w2l_fileio *io, const char *beside, const char *referenced,
                              const uint64_t *pos, size_t n, w2l__arena *a,
                              w2l__ice_data_file *df, w2l_error *err);
typedef struct w2l__ice_dv_plan {
    w2l__ice_data_file *deletes;  /* the change's delete files: equality deletes as they
                                     were, then one deletion vector per data file */
    size_t ndeletes;
    const char **removed;         /* live delete files the vectors replace (the commit
                                     removes them: W2L_ICE_OP_ROW_DELTA's removed) */
    size_t nremoved;
    const char **written;         /* Puffin files written (w2l__ice_dv_plan_abandon) */
    size_t nwritten;
    const char **consumed;        /* the change's Parquet position-delete files, merged into
                                     the vectors: no table names them once it commits */
    size_t nconsumed;
} w2l__ice_dv_plan;
/* Turns the position deletes among dels[0..ndels) into deletion vectors of a v3 table: one
 * per data file they name, each the union of the change's rows of that file and (with
 * with_table) of the live deletion vectors and position-delete files of m's current
 * snapshot that name it; those naming that file alone go (out->removed). Strings and
 * arrays in a. On failure nothing written is left. */
w2l_rc w2l__ice_dv_merge(w2l_fileio *io, const w2l__ice_meta *m, const w2l__ice_data_file *dels,
                         size_t ndels, int with_table, w2l__arena *a, w2l__ice_dv_plan *out,
                         w2l_error *err);
/* Removes the Puffin files of a plan that was not committed. */
void w2l__ice_dv_plan_abandon(w2l_fileio *io, w2l__ice_dv_plan *p);

/* dels[0..ndels): the delete files a commit to the table of m is about to add; own: its
 * data files. Every position delete naming a data file that is neither live in m's current
 * snapshot nor one of own (a compaction rewrote it since the delete was made) is moved onto
 * the live row of the same key (identifier columns, else every column) among the live data
 * files of its partition (of onto[0..nonto) instead, when onto is not NULL: the files the
 * compactions added), their deletes applied; a delete file with such rows is written
 * again beside the old one and replaces it in dels (strings in a). *moved: rows moved.
 * W2L_CORRUPT when a row has no live row of its key. */
w2l_rc w2l__ice_rebase_pos_deletes(w2l_fileio *io, const w2l__ice_meta *m,
                                   const struct w2l__pq_options *pq, w2l__ice_data_file *dels,
                                   size_t ndels, const w2l__ice_data_file *own, size_t nown,
                                   const char *const *onto, size_t nonto, w2l__arena *a,
                                   size_t *moved, w2l_error *err);

/* ================================================================================= */
/* Scans (scan.c)                                                                    */
/* ================================================================================= */

typedef struct w2l__ice_task {
    const w2l__ice_data_file *file;
    int64_t seq;                          /* data sequence number */
    size_t ndeletes;
    const w2l__ice_data_file **deletes;   /* delete files that apply, by the spec's rules */
    const int64_t *delete_seqs;
} w2l__ice_task;

typedef struct w2l__ice_scan {
    w2l__arena arena;
    const w2l__ice_meta *meta;  /* borrowed */
    const w2l_schema *schema;   /* read schema (snapshot's or current), borrowed from meta */
    int64_t snapshot_id;        /* -1: the table is empty */
    size_t ntasks;
    w2l__ice_task *tasks;
    size_t ndelete_files;
    const w2l__ice_data_file **delete_files; /* every live delete file of the snapshot */
    /* paths in metadata starting with relocate_from are read under relocate_to */
    const char *relocate_from, *relocate_to;
    int64_t pos;                /* during a callback: the row's position in its data file */
    struct w2l__ice_dcache *dcache; /* delete files read so far (each read once per scan) */
} w2l__ice_scan;

/* Plans a scan of snapshot_id (-1: current; no snapshot gives no tasks): reads the manifest
 * list and manifests, keeps live entries and assigns each data file the delete files that
 * apply (position deletes: delete seq >= data seq; equality deletes: delete seq > data
 * seq, and same spec and partition unless the delete spec is unpartitioned). */
w2l_rc w2l__ice_scan_plan(w2l_fileio *io, const w2l__ice_meta *meta, int64_t snapshot_id,
                          const char *relocate_from, const char *relocate_to,
                          w2l__ice_scan **out, w2l_error *err);
/* The ids of the partition specs other than the default one that live data files of the
 * current snapshot are written in (one manifest list read; none when the table has one
 * spec). Fresh array. */
w2l_rc w2l__ice_older_data_specs(w2l_fileio *io, const w2l__ice_meta *m, int32_t **ids,
                                 size_t *n, w2l_error *err);
/* Reads the rows of task i (as w2l__ice_scan_read does for all). */
w2l_rc w2l__ice_scan_read_task(w2l_fileio *io, w2l__ice_scan *scan, size_t i,
                               int (*fn)(void *ctx, const w2l_value *row, size_t n), void *ctx,
                               w2l_error *err);
/* Reads the rows of every task through the Parquet reader, applies deletes and calls fn
 * with one value per field of scan->schema (borrowed during the call); fn returning
 * non-zero stops with W2L_CANCELLED. Columns missing from a file are NULL; int/float
 * columns of older files are widened. */
w2l_rc w2l__ice_scan_read(w2l_fileio *io, w2l__ice_scan *scan,
                          int (*fn)(void *ctx, const w2l_value *row, size_t n), void *ctx,
                          w2l_error *err);
void w2l__ice_scan_free(w2l__ice_scan *s); /* NULL is a no-op */

#endif
