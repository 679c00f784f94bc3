/*
 * The CDC JSON decoder's insides (cdc_json.h is its interface): the decoder, its tables
 * and shapes, and what its per-format files share.
 */
#ifndef W2L_CDC_INT_H
#define W2L_CDC_INT_H

#include "cdc_json.h"
#include "../json/json.h"
#include "../model/model.h"
#include "../ddl/ddl.h"
#include "../common/arena.h"

/* ---- chunks: bump memory reused across transactions ---- */

/* ---- chunks: bump memory reused across transactions ---- */

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct chunks {
    chunk *head, *cur;
} chunks;

/* ---- column encodings ---- */

/* How a column's JSON value is encoded, beyond its Iceberg type. */
enum cv {
    CV_PLAIN = 0,   /* canal text / maxwell native / debezium native by Iceberg type */
    CV_SET,         /* maxwell: SET as an array of strings (or text) */
    CV_JSON,        /* any JSON value, kept as its text */
    CV_DAYS,        /* debezium: int epoch days */
    CV_TIME_MS, CV_TIME_US, CV_TIME_NS,   /* debezium: time of day (or duration) */
    CV_TS_MS, CV_TS_US, CV_TS_NS,         /* debezium: timestamp without zone */
    CV_ZONED,       /* debezium ZonedTimestamp text */
    CV_DECIMAL_B64, /* debezium Decimal: base64 big-endian unscaled, or a JSON number
                       (decimal.format=NUMERIC), or decimal text; into decimal or, with
                       colaux.scale, into a string column as exact text */
    CV_BITS_B64,    /* debezium Bits: base64 little-endian -> long / boolean */
    CV_ENUM,        /* canal ENUM: a 1-based index into colaux.members, or the text */
    CV_BITS_U64,    /* canal/maxwell BIT(n > 1): unsigned 64-bit value -> its bit pattern */
    CV_DECIMAL_TEXT,/* DECIMAL(p > 38) into a string column: exact plain text, colaux.scale */
    CV_VSDEC,       /* debezium VariableScaleDecimal {scale, value: base64} -> exact text */
    CV_GEOM,        /* GEOMETRY -> WKB without SRID: canal ISO-8859-1 SRID + WKB, debezium
                       {wkb, srid} (Geometry, Geography) or {x, y, wkb} (Point) */
    CV_UBIGINT,     /* debezium BIGINT UNSIGNED without schema: a negative long (the
                       connector's default bigint.unsigned.handling.mode=long) is + 2^64 */
    CV_DECIMAL_ANY  /* debezium DECIMAL without schema: as CV_DECIMAL_B64, but a string that
                       reads as decimal text is one (decimal.handling.mode=string) */
};

/* What a column's values need beyond its type and cv (zero when nothing). */
typedef struct colaux {
    int16_t scale;               /* decimal kept as text in a string column: its scale;
                                    -1 when unknown (the text's own) */
    uint16_t nmembers;           /* CV_ENUM, CV_SET (canal): the type's members, in order */
    const char *const *members;
    uint16_t pad;                /* BINARY(n): n. MySQL pads values with 0x00 to n bytes and
                                    binlog-based producers send them stripped: restored */
} colaux;

typedef struct shape {
    w2l_schema *schema; /* NULL until the table is described */
    uint8_t *cv;        /* per column */
    colaux *aux;        /* per column, or NULL when no column needs one */
    void *auxmem;       /* the members' text and pointers */
    char *sig;
    size_t siglen;
    int authoritative;  /* from DDL: rows are mapped onto it by name */
    char *canal_raw;    /* canal: the raw text of mysqlType, "\x1e", pkNames of a message
                           this shape was found to be (cdc_canal.c), or NULL */
    size_t canal_rawlen, canal_tl; /* canal_tl: where "\x1e" is */
    int warned;         /* a dropped extra column was logged */
    int str_only;       /* every column's values read by their text (w2l__cdc_str_cv) */
    char *qnames;       /* str_only: the column names as JSON member names ("name":),
                           column i's at qoff[i] up to qoff[i + 1], then 8 zero bytes;
                           NULL when a name holds a character JSON escapes ('"', '\\') */
    size_t *qoff;
} shape;

typedef struct table {
    char *key;          /* "db\0table\0" */
    size_t klen;
    uint64_t hash;
    const char *db, *name; /* into key */
    shape cur;
    char **pk;          /* primary key names from DDL (debezium tableChanges), or NULL */
    size_t npk;
    int32_t next_schema_id;
    w2l_buf warned;     /* "column\0" of each column a value warning was logged for */
    char *mysql_types;  /* maxwell: the MySQL type text each column of cur resolved to, in column
                           order, each NUL-terminated, then an empty one; or NULL (cdc_maxwell.c) */
    char *dbz_types;    /* debezium: "column\0MySQL type\0"... "\0" from the table's last
                           tableChanges, or NULL (cdc_debezium.c) */
    int filtered;       /* the include / exclude filter was asked */
    int excluded;       /* ... and left it out: its messages are consumed unread */
    int skip;           /* quarantined (w2l__cdc_skip_table): rows are dropped unconverted */
    uint64_t skipped;   /* rows dropped so, not yet taken by w2l__cdc_take_skipped() */
} table;

/* One column being described, before it becomes a shape. */
typedef struct colspec {
    const char *name;
    w2l_type type;
    uint8_t cv;
    uint8_t required;
    colaux aux;
} colspec;

typedef struct json_list {
    w2l__json **v;
    size_t n, cap;
} json_list;

/* A row image: a JSON object (obj), or (obj NULL) the n members the canal fast path read,
 * in their order, each a column name and string text s of n bytes (NUL-terminated), s NULL
 * for null. */
typedef struct w2l__cdc_member {
    const char *name, *s;
    size_t n;
} w2l__cdc_member;
typedef struct w2l__cdc_image {
    const w2l__json *obj;
    const w2l__cdc_member *m;
    size_t n;
} w2l__cdc_image;

struct w2l__cdc {
    w2l__cdc_format fmt;
    w2l__cdc_opts opts;
    table **tabs;             /* open addressing */
    size_t ntabs, used;
    w2l__cdc_event *ev;
    size_t nev, evcap;
    chunks mem;
    json_list trees;          /* JSON of the open transaction */
    w2l__json *held;          /* a parsed message returned with W2L__CDC_BEFORE */
    /* transaction of the pending events */
    int txn_open;
    char txn_key[128];
    /* scratch for describing shapes */
    colspec *cols;
    size_t ncols, colcap;
    const char **pks;
    size_t npks, pkcap;
    w2l_buf sig;
    w2l__arena desc;          /* enum/set members of the columns being described */
    int replay;
    /* canal: texts of mysqlType (0) and pkNames (1) seen lately, newest first: the parser
     * skips a message's member by comparing it with them (w2l__cdc_canal_known) */
    struct { char *text; size_t len; } known[2][8];
    struct {                  /* canal fast path: the members of the message's row images */
        w2l__cdc_member *m;
        size_t n, cap;
        size_t *rows;         /* each image's first member; rows[nrows] = n */
        size_t nrows, rowcap;
        struct table *t;      /* the table of the last message it read */
        int off;              /* not taken (tests: the tree path alone) */
        size_t taken;         /* messages it decoded */
    } fast;
    const char *what;         /* message context for errors: "canal-json" */
    const table *last;        /* the table the message being decoded named last (its failure's) */
};

/* ---- shared by the decoder's files (cdc_json.c: tables, shapes, rows, dispatch;
 * cdc_value.c: types and values; cdc_canal.c, cdc_debezium.c, cdc_maxwell.c) ---- */

void *w2l__cdc_alloc(chunks *cs, size_t n);
/* Keeps tree j (its strings back the events) until the events are cleared; frees it on
 * failure. */
w2l_rc w2l__cdc_keep_tree(w2l__cdc *d, w2l__json *j, w2l_error *err);

/* The table db.name, created when absent (create = 1) or NULL when unknown. */
w2l_rc w2l__cdc_table_get(w2l__cdc *d, const char *db, const char *name, int create, table **out,
                          w2l_error *err);
void w2l__cdc_table_forget(w2l__cdc *d, table *t);
/* Remembers the described key as the table's DDL key. */
w2l_rc w2l__cdc_table_set_pk(table *t, const char *const *pks, size_t n, w2l_error *err);

/* Describing a shape: reset, add columns and key, commit. */
void w2l__cdc_describe_reset(w2l__cdc *d);
w2l_rc w2l__cdc_col_add(w2l__cdc *d, const char *name, w2l_type type, unsigned cv, int required,
                        w2l_error *err);
/* Attaches what info says the values need (enum/set members, the scale of a decimal kept as
 * text) to the column added last. */
w2l_rc w2l__cdc_col_info(w2l__cdc *d, const w2l__mysql_type *info, w2l_type t, w2l_error *err);
w2l_rc w2l__cdc_pk_add(w2l__cdc *d, const char *name, w2l_error *err);
long w2l__cdc_col_find(const w2l__cdc *d, const char *name);
w2l_rc w2l__cdc_describe_commit(w2l__cdc *d, table *t, int authoritative, int presig,
                                w2l_error *err);
/* Infers an undescribed table's columns from a row object (see cdc_json.c). */
w2l_rc w2l__cdc_infer_cols(w2l__cdc *d, table *t, const w2l__json *obj, w2l_error *err);

/* Logs fmt once per table and column (the warning names both); 1 when it logged. */
int w2l__cdc_warn_once(w2l__cdc *d, table *t, const char *col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Types (cdc_value.c). */
w2l_rc w2l__cdc_mysql_type(w2l__cdc *d, const char *db, const char *tn, const char *col,
                           const char *text, w2l_type *out, w2l__mysql_type *info, w2l_error *err);
unsigned w2l__cdc_mysql_cv(const w2l__mysql_type *info, w2l_type t);
unsigned w2l__cdc_mysql_dbz_cv(const w2l__mysql_type *info, w2l_type t);
/* Decodes base64 (standard or URL alphabet, padding optional) into out (at least
 * n / 4 * 3 + 3 bytes); -1 when malformed. */
int w2l__cdc_b64_decode(const char *s, size_t n, unsigned char *out, size_t *outlen);
/* 1 when number text is an integer (no fraction, no exponent) of at most maxdigits digits. */
int w2l__cdc_text_is_integer(const char *text, unsigned maxdigits);
/* 1 when a double holds the value of number text exactly enough to give it back: its
 * shortest round-trip text has the same decimal value ("0.1" yes, "1e400" and
 * "12345678901234567.891" no). */
int w2l__cdc_double_exact(const char *text);

/* Error context for one value, and the column's colaux (may be NULL). */
typedef struct vctx {
    w2l__cdc *d;
    table *t;
    const char *col;
    const colaux *aux;
} vctx;

/* Whether a string value of encoding cv is read by its text alone (w2l__cdc_str_value). */
int w2l__cdc_str_cv(unsigned cv);
/* A JSON string value of n bytes at s (NUL-terminated there) for such a cv: what
 * w2l__cdc_value gives for it. */
w2l_rc w2l__cdc_str_value(const vctx *x, w2l_type t, unsigned cv, int required, const char *s,
                          size_t n, w2l_value *out, w2l_error *err);
/* The common case of w2l__cdc_str_value, with no context to set up: plain text s of n
 * bytes (cv CV_PLAIN) of a string, integer, boolean, double, decimal, date or timestamp
 * column converted at once: 0 with *out set, the same value w2l__cdc_str_value gives;
 * -1 for any other column or text (w2l__cdc_str_value then converts it or words why not;
 * out->is_null and *scratch may have been written). tz_offset_s: source.timezone, for a timestamptz
 * without a zone. */
int w2l__cdc_text_quick(w2l_type t, unsigned cv, int32_t tz_offset_s, const char *s, size_t n,
                        w2l_value *out, w2l_error *scratch);
/* A JSON value (not null) of column type t with encoding cv (cdc_value.c). */
w2l_rc w2l__cdc_value(const vctx *x, w2l_type t, unsigned cv, int required, const w2l__json *j,
                      w2l_value *out, w2l_error *err);

/* Drops the pending events from index from on (those of a message that failed). */
void w2l__cdc_drop_events(w2l__cdc *d, size_t from);
/* Events of the open transaction. add_image: one change of the table's current shape from
 * image, then overlay (the changed columns' old values, for a before image; or NULL);
 * add_change: the same from JSON objects. */
w2l_rc w2l__cdc_add_image(w2l__cdc *d, table *t, w2l_op op, const w2l__cdc_image *image,
                          const w2l__cdc_image *overlay, int64_t ts_ms, w2l_error *err);
w2l_rc w2l__cdc_add_change(w2l__cdc *d, table *t, w2l_op op, const w2l__json *image,
                           const w2l__json *overlay, int64_t ts_ms, w2l_error *err);
/* An update: UPDATE_BEFORE (image under overlay, the changed columns' old values; overlay
 * may be NULL), then UPDATE_AFTER (image), as the two calls above would add them, with the
 * image's values converted once. */
w2l_rc w2l__cdc_add_update_image(w2l__cdc *d, table *t, const w2l__cdc_image *image,
                                 const w2l__cdc_image *overlay, int64_t ts_ms, w2l_error *err);
w2l_rc w2l__cdc_add_update(w2l__cdc *d, table *t, const w2l__json *image,
                           const w2l__json *overlay, int64_t ts_ms, w2l_error *err);
w2l_rc w2l__cdc_add_ddl(w2l__cdc *d, const char *db, const char *tname, const char *sql,
                        const w2l_schema *after, int64_t ts_ms, w2l_error *err);

/* Message helpers. */
const char *w2l__cdc_str(const w2l__json *o, const char *key);
int64_t w2l__cdc_ms(const w2l__json *o, const char *key, int64_t scale);
w2l_rc w2l__cdc_missing(w2l__cdc *d, const char *member, w2l_error *err);
int w2l__cdc_null(const w2l__json *j);
w2l_rc w2l__cdc_never_described(w2l__cdc *d, const table *t, w2l_error *err);

/* Which transaction a message belongs to (see file_source.c for the rules):
 *   TX_OWN     a transaction by itself (canal messages, DDL, rows without a marker)
 *   TX_PART    part of transaction *key*; TX_LAST: its last message (maxwell commit:true)
 *   TX_BEGIN / TX_END  debezium transaction metadata for *key*
 *   TX_NONE    no rows (tombstones, bootstrap markers) */
enum tx { TX_OWN, TX_PART, TX_LAST, TX_BEGIN, TX_END, TX_NONE };

/* The formats. */
w2l_rc w2l__cdc_canal_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err);
/* For w2l__json_rawspec.known: the length of a text of member i (0 mysqlType, 1 pkNames)
 * seen lately at p, or 0. */
size_t w2l__cdc_canal_known(void *d, size_t i, const char *p, size_t avail);
/* canal's hot path (cdc_canal_fast.c): a data message of a table whose shape it names is
 * decoded from its text in one pass, without a tree: 1 when it was (*rc the outcome: W2L_OK,
 * or W2L_NOMEM), 0 when the message is left to w2l__cdc_canal_decode (anything else, or
 * anything the two could read differently), with nothing changed. */
int w2l__cdc_canal_fast(w2l__cdc *d, const char *text, size_t len, int replay, w2l_rc *rc,
                        w2l_error *err);
w2l_rc w2l__cdc_dbz_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err);
/* The payload of a debezium message (the envelope itself when it has no schema part) and
 * its schema (NULL without); payload NULL for a tombstone. */
void w2l__cdc_dbz_parts(const w2l__json *msg, const w2l__json **schema, const w2l__json **payload);
enum tx w2l__cdc_dbz_txn(const w2l__json *msg, char *key, size_t size);
w2l_rc w2l__cdc_maxwell_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err);
enum tx w2l__cdc_maxwell_txn(const w2l__json *msg, char *key, size_t size);
/* A GEOMETRY value as Maxwell writes it (WKT text, s of n bytes) into WKB (cdc_maxwell.c). */
w2l_rc w2l__cdc_maxwell_wkt(const vctx *x, const char *s, size_t n, w2l_value *out, w2l_error *err);

#endif
