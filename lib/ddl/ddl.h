/*
 * The ddl module (w2l-design(7) sections 3 and 4): a parser for the MySQL/MariaDB DDL that a
 * source replicates (ddl_lex.c tokens, ddl_parse.c statements), the MySQL -> Iceberg type
 * mapping (type_map.c), schema evolution of Iceberg schemas by parsed ALTERs or by a
 * source's own column list (schema_evolve.c), redaction of secrets in statement texts
 * (ddl_redact.c) and the table names and swaps of online-schema-change tools (ddl_osc.c).
 *
 * Everything here is pure: no global state, thread-safe on distinct objects, all memory
 * through w2l__malloc. Parsed statements live in one arena owned by a w2l__ddl_list.
 */
#ifndef W2L_DDL_H
#define W2L_DDL_H

#include "../common/arena.h"
#include "../common/common.h"

/* ======================================================================================
 * MySQL column types (type_map.c)
 * ====================================================================================== */

/* What a MySQL type is, after synonyms are resolved (INTEGER, DEC, NUMERIC, REAL, ...). */
typedef enum w2l__mysql_class {
    W2L_MYSQL_UNKNOWN = 0,  /* a name we do not know */
    W2L_MYSQL_INT,          /* TINYINT .. BIGINT; int_bytes says which */
    W2L_MYSQL_BOOL,         /* BOOL, BOOLEAN (stored by MySQL as TINYINT(1), mapped alike) */
    W2L_MYSQL_BIT,          /* BIT(n); bits says n */
    W2L_MYSQL_DECIMAL,      /* DECIMAL, DEC, NUMERIC, FIXED */
    W2L_MYSQL_FLOAT,        /* FLOAT, FLOAT4, FLOAT(p <= 24) */
    W2L_MYSQL_DOUBLE,       /* DOUBLE, DOUBLE PRECISION, REAL, FLOAT8, FLOAT(p > 24) */
    W2L_MYSQL_YEAR,
    W2L_MYSQL_DATE,
    W2L_MYSQL_DATETIME,
    W2L_MYSQL_TIMESTAMP,
    W2L_MYSQL_TIME,
    W2L_MYSQL_TEXT,         /* CHAR, VARCHAR, TINYTEXT .. LONGTEXT, MariaDB UUID/INET4/INET6 */
    W2L_MYSQL_ENUM,
    W2L_MYSQL_SET,
    W2L_MYSQL_JSON,
    W2L_MYSQL_BINARY,       /* BINARY, VARBINARY, TINYBLOB .. LONGBLOB, text CHARACTER SET binary,
                               VECTOR */
    W2L_MYSQL_GEOMETRY      /* GEOMETRY, POINT, LINESTRING, POLYGON, MULTI*, GEOMETRYCOLLECTION
                               (-> binary holding the WKB) */
} w2l__mysql_class;

/* A parsed MySQL column type, e.g. from "bigint(20) unsigned" or "enum('a','b')". Every
 * derived field is filled by the parser, so this is also the "extra information" of a
 * mapping: signedness, lengths, padding, fractional digits, enum/set values. */
typedef struct w2l__mysql_type {
    char name[32];           /* canonical lowercase name ("int" for INTEGER, "double" for REAL,
                                "varchar" for CHARACTER VARYING); unknown names as written,
                                lowercased and truncated */
    w2l__mysql_class cls;
    int int_bytes;           /* W2L_MYSQL_INT: 1 tinyint, 2, 3 mediumint, 4 int, 8 bigint */
    int64_t len;             /* first argument (M), -1 when absent */
    int64_t scale;           /* second argument (D), -1 when absent */
    int is_unsigned;         /* UNSIGNED, also implied by ZEROFILL and SERIAL */
    int zerofill;
    int64_t max_length;      /* text: characters; binary: bytes; enum/set: longest value
                                text; -1 when not a length-bounded type */
    int64_t binary_pad;      /* BINARY(n): n (MySQL pads stored values with 0x00 to n
                                bytes; binlog values arrive stripped); else 0 */
    int fsp;                 /* DATETIME/TIMESTAMP/TIME fractional digits 0..6 */
    int bits;                /* BIT(n): n (1..64) */
    const char *const *values; /* ENUM/SET values, decoded; NULL when not kept (no arena) */
    size_t nvalues;
    const char *charset;     /* CHARACTER SET as written, lowercase; NULL when absent */
    const char *collate;     /* COLLATE as written, lowercase; NULL when absent */
} w2l__mysql_type;

/* Mapping choices (w2l-design(7) section 4 leaves these to configuration). DECIMAL(p > 38)
 * is always a string holding the exact decimal text (type_map.c). */
typedef struct w2l__type_opts {
    int tinyint1_as_boolean;   /* signed TINYINT(1) and BOOL -> boolean, nonzero is true
                                  (JDBC's tinyInt1isBit); off: int, which holds every value */
    int time_as_string;        /* TIME -> string ("-838:59:59" fits), else Iceberg time */
} w2l__type_opts;

/* Parses len bytes of a MySQL type text ("decimal(12,2)", "int(10) unsigned zerofill",
 * "varchar(80) character set utf8mb4", "double precision"). ENUM/SET values and charset
 * names are kept in a when it is not NULL (values then stays NULL without one).
 * W2L_CORRUPT: "DDL: <what> at line 1 column C: near '<token>'". */
w2l_rc w2l__mysql_type_parse(const char *text, size_t len, w2l__arena *a, w2l__mysql_type *out,
                             w2l_error *err);

/* Maps a parsed type to its Iceberg type per w2l-design(7) section 4 (the table in
 * type_map.c). opt NULL means all options off. column (may be NULL) names the column in
 * messages. W2L_SCHEMA for types without an Iceberg form: "column 'v': unsupported MySQL
 * type 'vector' (no Iceberg type)". */
w2l_rc w2l__mysql_type_map(const w2l__mysql_type *t, const w2l__type_opts *opt,
                           const char *column, w2l_type *out, w2l_error *err);

/* Parse and map in one call, for canal's mysqlType strings. info (may be NULL) receives
 * the parsed type; a (may be NULL) keeps its enum/set values. */
w2l_rc w2l__mysql_type_map_text(const char *text, size_t len, const w2l__type_opts *opt,
                                const char *column, w2l__arena *a, w2l_type *out,
                                w2l__mysql_type *info, w2l_error *err);

/* Canonical text of t ("decimal(12,2) unsigned", "enum('a','it''s')"); returns the length
 * needed, as snprintf. Without values kept, an enum prints as "enum(...)". */
size_t w2l__mysql_type_format(const w2l__mysql_type *t, char *buf, size_t size);

/* ======================================================================================
 * Parsed statements (ddl_parse.c)
 * ====================================================================================== */

typedef enum w2l__ddl_kind {
    W2L_DDL_OTHER = 0,           /* GRANT, SET, CREATE VIEW/USER/TRIGGER/..., ANALYZE, ... */
    W2L_DDL_CREATE_TABLE,
    W2L_DDL_CREATE_TABLE_LIKE,   /* like names the source table */
    W2L_DDL_CREATE_TABLE_SELECT, /* CREATE TABLE ... [AS] SELECT: columns come from rows;
                                    cols holds only the explicitly declared ones */
    W2L_DDL_TEMPORARY,           /* CREATE/DROP TEMPORARY TABLE: never replicated to the lake */
    W2L_DDL_ALTER_TABLE,
    W2L_DDL_DROP_TABLE,          /* tables[] */
    W2L_DDL_RENAME_TABLE,        /* renames[] */
    W2L_DDL_TRUNCATE_TABLE,
    W2L_DDL_CREATE_DATABASE,     /* database */
    W2L_DDL_DROP_DATABASE,       /* database */
    W2L_DDL_CREATE_INDEX,        /* no schema effect; table set */
    W2L_DDL_DROP_INDEX,          /* no schema effect; table set */
    W2L_DDL_USE,                 /* USE db: later statements of the same text default to it */
    W2L_DDL_RESYNC_TABLE         /* W2L RESYNC TABLE t BEGIN|END: never from a server; the mysql
                                    source's marks around a re-read of t (resync_end) */
} w2l__ddl_kind;

/* "CREATE_TABLE", ...; static. */
const char *w2l__ddl_kind_name(w2l__ddl_kind k);

/* A table name; db is the qualifier or else the default database (NULL when neither). */
typedef struct w2l__ddl_name {
    const char *db;
    const char *name;
} w2l__ddl_name;

enum { W2L_DDL_GEN_NONE = 0, W2L_DDL_GEN_VIRTUAL = 1, W2L_DDL_GEN_STORED = 2 };

/* One column definition. */
typedef struct w2l__ddl_column {
    const char *name;
    w2l__mysql_type type;      /* values and charset live in the list's arena */
    const char *type_text;     /* canonical type text (w2l__mysql_type_format) */
    int not_null;              /* NOT NULL (or SERIAL); 0 for NULL or unspecified */
    int primary_key;           /* inline PRIMARY KEY (or bare KEY) */
    int unique;                /* inline UNIQUE [KEY] */
    int auto_increment;
    int generated;             /* W2L_DDL_GEN_* */
    int invisible;
    const char *default_text;  /* source text of DEFAULT expr ("NULL", "'x'",
                                  "CURRENT_TIMESTAMP(6)"); NULL when there is none */
    const char *on_update;     /* source text of ON UPDATE expr, or NULL */
    const char *comment;       /* decoded COMMENT '...', or NULL */
} w2l__ddl_column;

typedef enum w2l__ddl_alter_kind {
    W2L_ALTER_NONE = 0,        /* recognised, no schema effect; what says which */
    W2L_ALTER_ADD_COLUMN,      /* col (+ position) */
    W2L_ALTER_DROP_COLUMN,     /* name */
    W2L_ALTER_RENAME_COLUMN,   /* name -> new_name */
    W2L_ALTER_CHANGE_COLUMN,   /* name -> col (col.name is the new name) */
    W2L_ALTER_MODIFY_COLUMN,   /* col (col.name == name) */
    W2L_ALTER_ADD_PRIMARY_KEY, /* keys */
    W2L_ALTER_DROP_PRIMARY_KEY,
    W2L_ALTER_RENAME_TABLE,    /* new_table */
    W2L_ALTER_CONVERT_CHARSET  /* CONVERT TO CHARACTER SET charset: no effect unless binary */
} w2l__ddl_alter_kind;

enum { W2L_DDL_POS_NONE = 0, W2L_DDL_POS_FIRST = 1, W2L_DDL_POS_AFTER = 2 };

/* One clause of an ALTER TABLE. */
typedef struct w2l__ddl_alter {
    w2l__ddl_alter_kind kind;
    const char *what;          /* the clause's leading words, uppercase: "ADD INDEX", "ENGINE" */
    const char *name;          /* the column it names (old name for CHANGE/RENAME) */
    const char *new_name;      /* RENAME COLUMN target */
    w2l__ddl_column col;       /* ADD/CHANGE/MODIFY definition */
    int if_exists;             /* IF EXISTS (DROP/CHANGE/MODIFY) or IF NOT EXISTS (ADD) */
    int position;              /* W2L_DDL_POS_* */
    const char *after;         /* AFTER column */
    const char *const *keys;   /* ADD PRIMARY KEY columns, in key order */
    size_t nkeys;
    w2l__ddl_name new_table;   /* RENAME [TO|AS] */
    const char *charset;       /* CONVERT TO CHARACTER SET */
} w2l__ddl_alter;

typedef struct w2l__ddl_rename {
    w2l__ddl_name from, to;
} w2l__ddl_rename;

/* One statement. Every pointer points into the list's arena. */
typedef struct w2l__ddl_stmt {
    w2l__ddl_kind kind;
    const char *text;          /* the statement's text, with secrets masked (safe to log) */
    size_t text_len;
    int sensitive;             /* it carried a password (text is redacted) */
    unsigned line;             /* where it starts in the input */
    w2l__ddl_name table;       /* CREATE/ALTER/TRUNCATE TABLE, CREATE/DROP INDEX */
    w2l__ddl_name like;        /* CREATE TABLE ... LIKE */
    int if_not_exists, if_exists, or_replace;
    const w2l__ddl_column *cols; /* CREATE TABLE */
    size_t ncols;
    const char *const *pk;     /* CREATE TABLE primary key columns (table or inline), key order */
    size_t npk;
    const w2l__ddl_alter *alters;
    size_t nalters;
    const w2l__ddl_name *tables; /* DROP TABLE */
    size_t ntables;
    const w2l__ddl_rename *renames; /* RENAME TABLE, in order */
    size_t nrenames;
    const char *database;      /* CREATE/DROP DATABASE, USE */
    const char *head;          /* OTHER: its first words, uppercase ("CREATE USER", "GRANT") */
    int resync_end;            /* RESYNC_TABLE: END (0: BEGIN) */
} w2l__ddl_stmt;

typedef struct w2l__ddl_list {
    w2l__arena arena;
    w2l__ddl_stmt *stmts;
    size_t n;
} w2l__ddl_list;

/* Parses len bytes of SQL: one or more statements separated by ';' (compound bodies of
 * CREATE PROCEDURE/FUNCTION/TRIGGER/EVENT are kept whole). default_db (may be NULL) fills
 * unqualified table names; a USE statement changes it for later statements. Empty input
 * gives an empty list. Statements we do not model are W2L_DDL_OTHER, never errors.
 * W2L_CORRUPT: "DDL: <what> at line L column C: near '<token>'" (string literals are
 * never quoted in messages, as they may hold secrets). *out set only on W2L_OK. */
w2l_rc w2l__ddl_parse(const char *sql, size_t len, const char *default_db, w2l__ddl_list **out,
                      w2l_error *err);
void w2l__ddl_list_free(w2l__ddl_list *l); /* NULL is a no-op */

/* Whether st ends table db.name's life in the source: DROP TABLE naming it, or a CREATE OR
 * REPLACE of it (what comes after is a new table's; the way out of a quarantine). */
int w2l__ddl_ends_table(const w2l__ddl_stmt *st, const char *db, const char *name);

/* A copy of len bytes of sql (NUL-terminated, w2l__malloc) with every string and hex
 * literal that follows IDENTIFIED, PASSWORD, MASTER_PASSWORD or SOURCE_PASSWORD in the
 * same statement replaced by '***' (and the rest of such a statement when it cannot be
 * tokenized). NULL when out of memory. (ddl_redact.c) */
char *w2l__ddl_redact(const char *sql, size_t len);

/* ======================================================================================
 * Online schema change tools (ddl_osc.c)
 * ====================================================================================== */

typedef enum w2l__osc_kind {
    W2L_OSC_NONE = 0,
    W2L_OSC_GHOST_SHADOW, /* gh-ost _t_gho: the new table being filled */
    W2L_OSC_GHOST_OLD,    /* gh-ost _t_del (or _t_<timestamp>_del): the original after cut-over */
    W2L_OSC_GHOST_CHANGELOG, /* gh-ost _t_ghc: gh-ost's own heartbeat table */
    W2L_OSC_PTOSC_SHADOW,    /* pt-online-schema-change _t_new (or __t_new, ...) */
    W2L_OSC_PTOSC_OLD        /* pt-online-schema-change _t_old */
} w2l__osc_kind;

/* Classifies a table name. When it is a tool's table, the name of the table it belongs
 * to ("t" for "_t_gho") is written to base (NUL-terminated, truncated to base_size). */
w2l__osc_kind w2l__osc_classify(const char *name, char *base, size_t base_size);

/* A cut-over: "table's schema becomes that of shadow". */
typedef struct w2l__osc_swap {
    w2l__ddl_name table;     /* the table that keeps its name */
    w2l__ddl_name shadow;    /* the tool's new table, whose schema it takes */
    w2l__ddl_name old;       /* where the original went (db/name NULL for a plain
                                shadow -> table rename after a DROP) */
    w2l__osc_kind tool;      /* W2L_OSC_GHOST_SHADOW or W2L_OSC_PTOSC_SHADOW */
} w2l__osc_swap;

/* 1 and *out filled when st is a RENAME TABLE cut-over of gh-ost (t TO _t_del, _t_gho TO t)
 * or pt-osc (t TO _t_old, _t_new TO t), or a lone "_t_gho|_t_new TO t"; else 0. The names
 * in *out borrow from st. */
int w2l__osc_detect_swap(const w2l__ddl_stmt *st, w2l__osc_swap *out);

/* ======================================================================================
 * Schema evolution (schema_evolve.c)
 * ====================================================================================== */

typedef struct w2l__evolve_opts {
    w2l__type_opts types;
    /* A statement the table shows already: ADD COLUMN of a column there with the same
     * type or one it widens to, DROP COLUMN of one not there. 0 (default): W2L_SCHEMA; 1: no
     * change. Set when a source may replay DDL the lake has applied (a shared source, ledger.h)
     * or bring rows that describe a new column ahead of the statement (CDC JSON, op_ddl.c). */
    int replayed_ok;
    /* The table merges several sources (a route's target, w2l-routes(7)) and an ALTER of
     * one of them changes it only as far as the union of their columns needs: ADD, CHANGE
     * and MODIFY add a column it lacks (optional) or widen one whose type the statement's
     * promotes; a narrower or equal type is no change, a type no promotion joins is
     * W2L_SCHEMA; RENAME COLUMN adds the new name (the old stays); DROP COLUMN, key
     * changes and moves are no change. */
    int merge;
} w2l__evolve_opts;

typedef enum w2l__change_kind {
    W2L_CHANGE_ADD = 1,      /* id, name, to */
    W2L_CHANGE_DROP,         /* id, name (the retired id is never reused) */
    W2L_CHANGE_RENAME,       /* id, old_name -> name */
    W2L_CHANGE_WIDEN,        /* id, name, from -> to */
    W2L_CHANGE_OPTIONAL,     /* id, name: required -> optional */
    W2L_CHANGE_REQUIRED,     /* id, name: optional -> required (a new primary key's column) */
    W2L_CHANGE_MOVE,         /* id, name: position changed */
    W2L_CHANGE_IDENTIFIER    /* identifier fields (primary key) changed */
} w2l__change_kind;

typedef struct w2l__schema_change {
    w2l__change_kind kind;
    int32_t id;
    const char *name;
    const char *old_name;
    w2l_type from, to;
} w2l__schema_change;

/* The result of an evolution: the new schema and what changed. */
typedef struct w2l__schema_diff {
    w2l_schema *schema;      /* one reference owned by the diff; when nothing changed, a
                                new reference to the input schema (same schema id) */
    int32_t last_column_id;  /* the table's new last-column-id */
    int changed;             /* 0 when the statement had no schema effect */
    w2l__schema_change *changes;
    size_t nchanges;
    w2l__arena arena;        /* names in changes */
} w2l__schema_diff;
void w2l__schema_diff_free(w2l__schema_diff *d); /* NULL is a no-op */

/* The schema of a CREATE TABLE: fields 1..n in column order, identifier = primary key
 * (whose columns are required), NOT NULL columns required. W2L_SCHEMA for unmapped types,
 * for CREATE TABLE ... SELECT, and primary keys Iceberg cannot use (float/double).
 * *out and *last_column_id set only on W2L_OK. */
w2l_rc w2l__schema_from_create(const w2l__ddl_stmt *st, const w2l__evolve_opts *o,
                               int32_t schema_id, w2l_schema **out, int32_t *last_column_id,
                               w2l_error *err);

/* Applies the clauses of an ALTER TABLE to cur (schema id +1; new columns get ids from
 * max(last_column_id, max id of cur) + 1, optional). W2L_SCHEMA names table, column, and
 * types for changes Iceberg does not allow (the caller applies ddl.policy); W2L_MISUSE
 * when st is not an ALTER TABLE. *out set only on W2L_OK. */
w2l_rc w2l__schema_apply_alter(const w2l_schema *cur, int32_t last_column_id,
                               const w2l__ddl_stmt *st, const w2l__evolve_opts *o,
                               w2l__schema_diff **out, w2l_error *err);

/* A column as a source describes it (canal mysqlType mapped, binlog metadata). */
typedef struct w2l__source_column {
    const char *name;
    w2l_type type;
    int required;
} w2l__source_column;

/* Reconciles cur with a source's column list by name (exact, else ASCII case-insensitive,
 * as MySQL compares column names): columns only in cols are added (optional), columns
 * only in cur dropped, type changes must be Iceberg promotions, required columns that
 * the source has as nullable become optional; the order follows cols. pk (may be NULL:
 * identifier kept as far as its columns survive) names the primary key. table names the
 * table in messages. */
w2l_rc w2l__schema_reconcile(const w2l_schema *cur, int32_t last_column_id,
                             const w2l__source_column *cols, size_t n,
                             const char *const *pk, size_t npk, const char *table,
                             const w2l__evolve_opts *o, w2l__schema_diff **out,
                             w2l_error *err);

#endif
