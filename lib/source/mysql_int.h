/*
 * The "mysql" source, internal side: what mysql_source.c (URI, startup modes, state
 * machine, positions), the snapshot reader (consistent snapshot in primary-key chunks) and
 * binlog.c and binlog_mysql.c (the binlog stream and our own event decoding) share.
 * Connections and queries are lib/mysql's (mysql_client.h). No libmariadb type appears
 * here: the binlog files, the only ones of the source that include libmariadb, get the
 * handle of a connection with w2l__my_handle.
 */
#ifndef W2L_MYSQL_INT_H
#define W2L_MYSQL_INT_H

#include "../common/arena.h"
#include "../common/common.h"
#include "../ddl/ddl.h"
#include "../mysql/mysql_client.h"

/* The plug-in (mysql_source.c), registered by lib/builtins.c. */
extern const w2l_source_methods w2l__source_mysql;

/* ======================================================================================
 * Binlog stream and decoding (binlog.c; MySQL servers: binlog_mysql.c; row images: binlog_rows.c)
 * ====================================================================================== */

/* Binlog column types (the server's enum_field_types numbers). */
enum {
    BL_DECIMAL = 0, BL_TINY = 1, BL_SHORT = 2, BL_LONG = 3, BL_FLOAT = 4, BL_DOUBLE = 5,
    BL_NULL = 6, BL_TIMESTAMP = 7, BL_LONGLONG = 8, BL_INT24 = 9, BL_DATE = 10, BL_TIME = 11,
    BL_DATETIME = 12, BL_YEAR = 13, BL_NEWDATE = 14, BL_VARCHAR = 15, BL_BIT = 16,
    BL_TIMESTAMP2 = 17, BL_DATETIME2 = 18, BL_TIME2 = 19, BL_JSON = 245, BL_NEWDECIMAL = 246,
    BL_ENUM = 247, BL_SET = 248, BL_TINY_BLOB = 249, BL_MEDIUM_BLOB = 250, BL_LONG_BLOB = 251,
    BL_BLOB = 252, BL_VAR_STRING = 253, BL_STRING = 254, BL_GEOMETRY = 255
};
enum { BL_VECTOR = 242 }; /* MySQL 9.0: a blob of 4-byte floats (VECTOR_DIMENSIONALITY) */

/* One column of a TABLE_MAP, decoded from its type, metadata and FULL optional metadata. */
typedef struct w2l__bl_col {
    const char *name;        /* COLUMN_NAME metadata; "col<N>" without it */
    uint8_t type;            /* real type: CHAR's ENUM/SET resolved */
    uint8_t nullable;
    uint8_t is_unsigned;     /* SIGNEDNESS metadata */
    uint8_t is_char;         /* STRING/VARCHAR/BLOB column that carries a charset */
    uint32_t meta;           /* VARCHAR/STRING: max bytes; BLOB/JSON/GEOMETRY: length bytes;
                                NEWDECIMAL: precision << 8 | scale; BIT: bits;
                                TIMESTAMP2/DATETIME2/TIME2: fsp; FLOAT/DOUBLE: pack length;
                                ENUM/SET: pack length */
    uint32_t charset;        /* collation id, 63 = binary; 0 unknown */
    const char *const *values; /* ENUM/SET strings */
    size_t nvalues;
    /* Set by the source before rows are decoded (w2l__bl_decode_row): */
    w2l_type ice;            /* the Iceberg type the value is converted to */
    /* MySQL's optional metadata (FULL): */
    uint8_t invisible;       /* COLUMN_VISIBILITY (8.0.23+): an INVISIBLE column */
    uint32_t geom_type;      /* GEOMETRY_TYPE: 0 geometry, 1 point, 2 linestring, ... */
    uint32_t vector_dim;     /* VECTOR_DIMENSIONALITY (9.0): elements of a VECTOR column */
} w2l__bl_col;

/* A decoded TABLE_MAP. Owned by the stream's table cache; valid until the stream closes
 * or the table id is mapped again with different bytes. */
typedef struct w2l__bl_tmap {
    uint64_t table_id;
    char *db, *table;
    size_t ncols;
    w2l__bl_col *cols;
    size_t *pk;              /* SIMPLE/PREFIXED_PRIMARY_KEY column indexes */
    size_t npk;
    int has_names;           /* COLUMN_NAME metadata present (binlog_row_metadata=FULL); 0
                                under MINIMAL (MySQL's default): the source refuses the table
                                naming binlog_row_metadata=FULL */
    /* For the source: */
    void *user;              /* per table-map data (mapping, schema); freed by user_free */
    void (*user_free)(void *user);
    /* Internal: */
    uint8_t *raw;
    size_t raw_len;
    w2l__arena arena;
    int mysql;               /* mapped by a MySQL server: JSON columns are binary JSON */
} w2l__bl_tmap;

typedef enum w2l__bl_kind {
    BL_EV_OTHER = 0,
    BL_EV_ROTATE,      /* file, pos */
    BL_EV_FDE,
    BL_EV_GTID,        /* domain, server_id, seq, gflags (+ xid for XA) */
    BL_EV_GTID_LIST,   /* gtids */
    BL_EV_QUERY,       /* db, sql */
    BL_EV_XID,
    BL_EV_TABLE_MAP,   /* tmap */
    BL_EV_ROWS,        /* rows_kind, tmap (NULL when the id was never mapped), bitmaps, data */
    BL_EV_HEARTBEAT,   /* file, log_pos */
    BL_EV_XA_PREPARE,
    BL_EV_STOP,
    BL_EV_PREVIOUS_GTIDS /* MySQL: the GTID set before this file, encoded in data..end
                            (w2l__mygtids_decode) */
} w2l__bl_kind;

enum { BL_ROWS_WRITE = 0, BL_ROWS_UPDATE = 1, BL_ROWS_DELETE = 2 };
enum { BL_GTID_STANDALONE = 0x01, BL_GTID_DDL = 0x20, BL_GTID_PREPARED_XA = 0x40,
       BL_GTID_COMPLETED_XA = 0x80 };

typedef struct w2l__bl_gtid {
    uint32_t domain, server;
    uint64_t seq;
} w2l__bl_gtid;

/* One event; every pointer is borrowed until the next w2l__bl_fetch(). */
typedef struct w2l__bl_event {
    w2l__bl_kind kind;
    uint8_t type;            /* binlog event type */
    uint32_t ts;             /* header timestamp (seconds) */
    uint32_t server_id;
    uint64_t log_pos;        /* header: position of the next event; 0 for artificial events */
    uint16_t flags;
    const char *file;        /* ROTATE, HEARTBEAT */
    size_t file_len;
    uint64_t pos;            /* ROTATE: position in the new file */
    w2l__bl_gtid gtid;       /* GTID (MariaDB) */
    uint8_t gflags;
    /* GTID of a MySQL server (GTID_LOG_EVENT, tagged GTID, ANONYMOUS_GTID): kind BL_EV_GTID
     * with mysql_gtid 1; sid the source UUID's 16 bytes, tag (8.3+, "" when untagged), gno
     * the transaction number; anonymous 1 (and gno 0) for ANONYMOUS_GTID. */
    int mysql_gtid, anonymous;
    uint8_t sid[16];
    const char *tag;
    size_t tag_len;
    int64_t gno;
    const char *xid;         /* GTID with XA flags, XA_PREPARE: the XID bytes */
    size_t xid_len;
    const w2l__bl_gtid *gtids; /* GTID_LIST */
    size_t ngtids;
    const char *db, *sql;    /* QUERY */
    size_t db_len, sql_len;
    w2l__bl_tmap *tmap;      /* TABLE_MAP, ROWS */
    uint64_t table_id;       /* ROWS */
    int rows_kind;           /* BL_ROWS_* */
    uint16_t rows_flags;     /* STMT_END_F = 1 */
    size_t rows_ncols;
    const uint8_t *bitmap1, *bitmap2; /* present columns of the (before) / after image */
    const uint8_t *data, *end;        /* row images */
    /* MySQL: */
    int partial_json;        /* PARTIAL_UPDATE_ROWS: after images carry JSON diffs (decode the
                                images with w2l__bl_decode_image) */
    int in_payload;          /* an event from inside a TRANSACTION_PAYLOAD; its log_pos is
                                the payload event's (the transaction's end) */
} w2l__bl_event;

typedef struct w2l__bl_opts {
    uint32_t server_id;
    const char *file;        /* start at file:pos, or */
    uint64_t pos;
    const char *gtid;        /* at this GTID state ("d-s-n,..."); wins when not NULL/empty */
    int mysql;               /* the server is MySQL (its session variables, events, flags) */
    const char *mysql_gtids; /* MySQL: at this executed GTID set (w2l__mygtids text), by
                                COM_BINLOG_DUMP_GTID; wins when not NULL/empty */
    int heartbeat_ms;
    int non_block;           /* the server ends the stream at the end of the binlog */
} w2l__bl_opts;

typedef struct w2l__bl w2l__bl;

/* Starts a binlog dump on conn (a dedicated connection; it is used by the stream until
 * w2l__bl_close). Errors of the dump itself (purged position, duplicate server id) show
 * at the first fetch. */
w2l_rc w2l__bl_open(w2l__my *conn, const w2l__bl_opts *o, w2l__bl **out, w2l_error *err);
/* Next event: W2L_OK, W2L_DONE at the end of a non-blocking dump, or an error:
 * W2L_UNAVAILABLE (connection lost, read timeout: retriable), W2L_SOURCE (server refused:
 * purged or unknown position, duplicate server id), W2L_CORRUPT (undecodable event). */
w2l_rc w2l__bl_fetch(w2l__bl *b, w2l__bl_event *ev, w2l_error *err);
void w2l__bl_close(w2l__bl *b); /* NULL is a no-op */
/* Bytes and events fetched so far. */
void w2l__bl_stats(const w2l__bl *b, uint64_t *bytes, uint64_t *events);

/* Memory for derived value bytes, reused row after row (chunks, never moved). */
typedef struct w2l__bl_scratch {
    struct w2l__bl_chunk *head, *cur;
    /* MySQL (binlog_rows.c): JSON text is built here, and the before image's binary JSON
     * documents of a PARTIAL_UPDATE_ROWS row (pointers into the event) are kept here for
     * its after image; both survive w2l__bl_scratch_reset. */
    w2l_buf json;
    const uint8_t **jdoc;
    size_t *jlen;
    size_t jcap;
} w2l__bl_scratch;
void w2l__bl_scratch_reset(w2l__bl_scratch *s);
void w2l__bl_scratch_free(w2l__bl_scratch *s);

/* Decodes one row image at *p (advanced past it): bitmap says which of tm's columns are
 * in the image; each present value is converted to its column's ice type into vals[i]
 * (absent columns NULL and cleared in present, a bitmap of ceil(ncols/8) bytes). Derived
 * bytes (padding, SET text, big decimals, TIME text, latin1 as UTF-8) go to scratch;
 * other bytes point into the event. coerced (may be NULL; a bitmap like present, never
 * cleared here) gets the bit of each boolean column whose value was neither 0 nor 1 (it
 * became true). W2L_CORRUPT for a truncated image, W2L_SCHEMA for a value outside its
 * Iceberg type. */
w2l_rc w2l__bl_decode_row(const w2l__bl_tmap *tm, const uint8_t *bitmap, const uint8_t **p,
                          const uint8_t *end, w2l_value *vals, uint8_t *present,
                          uint8_t *coerced, w2l__bl_scratch *scratch, w2l_error *err);

/* One image of the rows event ev (tmap, bitmaps and end from ev), after = 0 for the
 * before image (of an UPDATE; the only image of a WRITE or DELETE), 1 for an UPDATE's after
 * image; otherwise as w2l__bl_decode_row. For a PARTIAL_UPDATE_ROWS event (MySQL,
 * binlog_row_value_options=PARTIAL_JSON) the before image must be decoded with the same
 * scratch right before its after image: the after image's JSON diffs are applied to it.
 * W2L_SOURCE naming binlog_row_value_options and the table when the before image lacks
 * a column the diffs apply to (binlog_row_image=MINIMAL). */
w2l_rc w2l__bl_decode_image(const w2l__bl_event *ev, int after, const uint8_t **p,
                            w2l_value *vals, uint8_t *present, uint8_t *coerced,
                            w2l__bl_scratch *scratch, w2l_error *err);

/* The MySQL type text of a table-map column ("int unsigned", "decimal(12,2)",
 * "varchar(20)", "binary(4)", "datetime(3)", "enum(...)"), for w2l__mysql_type_map_text. */
size_t w2l__bl_col_type_text(const w2l__bl_col *c, char *buf, size_t size);

/* A GTID state "d-s-n,d-s-n" parsed / formatted (domains sorted, one entry each). */
w2l_rc w2l__gtid_parse(const char *s, w2l__bl_gtid **out, size_t *n, w2l_error *err);
void w2l__gtid_set(w2l__bl_gtid **g, size_t *n, size_t *cap, const w2l__bl_gtid *one, int *oom);
size_t w2l__gtid_format(const w2l__bl_gtid *g, size_t n, char *buf, size_t size);

/* ======================================================================================
 * Snapshot reading (mysql_snapshot.c)
 * ====================================================================================== */

/* One column of a table to snapshot, from information_schema. */
typedef struct w2l__snap_col {
    const char *name;
    w2l__mysql_type mt;
    w2l_type ice;
    int nullable;
} w2l__snap_col;

/* The SELECT of a chunk of db.table into q (NUL-terminated): its columns (FLOAT as
 * DOUBLE, BIT as a number) in key order, the first key column in [lo, hi) (NULL:
 * unbounded), after the key texts `after` (NULL: from the start), at most limit rows (0:
 * all; a table without a key is read in one pass). */
w2l_rc w2l__snap_select(w2l__my *c, const char *db, const char *table, const w2l__snap_col *cols,
                        size_t ncols, const size_t *pk, size_t npk, const char *lo,
                        size_t lo_len, const char *hi, size_t hi_len, char *const *after,
                        const size_t *after_len, size_t limit, w2l_buf *q, w2l_error *err);

/* Runs a SELECT of w2l__snap_select (streamed: mysql_use_result) and calls row(ctx, vals,
 * texts, lens) for each row, with values converted to the columns' ice types and the
 * server's texts (valid for the call). *nrows gets the count. coerced (may be NULL;
 * ceil(ncols/8) bytes, never cleared here) gets the bit of each boolean column that held a
 * value other than 0/1 (as w2l__bl_decode_row). */
typedef w2l_rc (*w2l__snap_row_fn)(void *ctx, const w2l_value *vals, char **texts,
                                   const unsigned long *lens, w2l_error *err);
w2l_rc w2l__snap_rows(w2l__my *c, const char *sql, const w2l__snap_col *cols, size_t ncols,
                      w2l__snap_row_fn row, void *ctx, size_t *nrows, uint8_t *coerced,
                      w2l_error *err);

#endif
