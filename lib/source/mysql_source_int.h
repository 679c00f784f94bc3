/*
 * The "mysql" source plug-in's insides (mysql_source.c holds the plug-in and describes the
 * source; mysql_int.h is what it shares with the connection, binlog and snapshot-reading
 * files): the source's state and what its pieces share: mysql_config.c (URI and
 * configuration), mysql_tracked.c (tracked definitions, schemas), mysql_position.c
 * (positions, XA), mysql_stream.c (the binlog stream), mysql_snap_driver.c (the snapshot).
 */
#ifndef W2L_MYSQL_SOURCE_INT_H
#define W2L_MYSQL_SOURCE_INT_H

#include <regex.h>
#include <stdatomic.h>

#include "table_filter.h"
#include "mysql_gtid.h"
#include "mysql_int.h"
#include "source_int.h"
#include "../event/emit.h"
#include "../json/json.h"
#include "../model/model.h"

#define HEARTBEAT_MS 250
#define SNAP_CHUNK_DEFAULT 8192
#define XA_LIMIT_DEFAULT ((size_t)256 << 20)

/* ---- tracked column definitions (hints for the type map) ---- */

typedef struct tcol {
    char *name;
    char *type;      /* MySQL type text */
    int nullable;
} tcol;

typedef struct ttable {
    char *db, *name;
    tcol *cols;
    size_t ncols;
    char **pk;
    size_t npk;
    w2l_schema *schema;  /* last schema built for the table (reused while unchanged) */
} ttable;

/* per TABLE_MAP data */
typedef struct tmuser {
    int selected;
    w2l_schema *schema;
    char *db, *table;    /* emitted names (an OSC shadow keeps its own name) */
    w2l_value *vals;
    uint8_t *present;
    uint8_t *coerced;    /* w2l__bl_decode_row's report, cleared after each warning pass */
    int all_present_ok;
    unsigned snap_epoch;  /* the plan's epoch + 1 when snap_hidden was read; 0 never */
    int snap_hidden;
} tmuser;

typedef enum { ST_BINLOG = 1, ST_DONE } mstate;

/* source.snapshot-lock: how the snapshot learns its binlog position. NONE: MariaDB's
 * consistent snapshot reports it (binlog_snapshot_file/position), no lock at all; FTWRL:
 * FLUSH TABLES WITH READ LOCK for as long as the position is read and the snapshot started
 * (MySQL, which reports none; also on MariaDB). AUTO: NONE on MariaDB, FTWRL on MySQL. */
typedef enum { SNAP_LOCK_AUTO = 0, SNAP_LOCK_NONE, SNAP_LOCK_FTWRL } snap_lock;

/* One change of a prepared XA transaction, deep-copied into its transaction's arena. */
typedef struct xa_change {
    struct xa_change *next;
    w2l_change ch;           /* db, table, row, present point into the arena; schema is a ref */
} xa_change;

/* An XA transaction from its PREPARE group until its XA COMMIT or XA ROLLBACK. */
typedef struct xa_txn {
    char *key;               /* the XID as the server writes it: X'..',X'..',N */
    w2l__arena arena;
    xa_change *head, *tail;
    size_t nchanges, bytes;
    /* where its PREPARE group starts: the resume point while it is pending */
    char file[256];
    uint64_t pos;
    char *gtid;              /* NULL: MySQL's set not known there */
} xa_txn;

/* ---- the snapshot (mysql_snap_plan.c, mysql_snap_workers.c, mysql_snap_driver.c) ---- */

/* A key's column texts as the server prints them (owned); n 0: no key. */
typedef struct snap_key {
    char **v;
    size_t *len;
    size_t n;
} snap_key;

/* A range of a table still to read: first key column in [lo, hi) (NULL: unbounded), rows
 * after the key `after` (n 0: from lo), in key order. */
typedef struct snap_range {
    uint64_t id;
    char *lo, *hi;
    size_t lo_len, hi_len;
    snap_key after;
    int busy;                /* a chunk of it is being read */
} snap_range;

enum { SNAP_PENDING = 0, SNAP_ACTIVE, SNAP_DONE };

typedef struct snap_table {
    char *db, *name;
    w2l__snap_col *cols;
    size_t ncols;
    size_t *pk;
    size_t npk;
    w2l_schema *schema;
    char *create_sql;    /* CREATE TABLE of its tracked definition: an empty table's DDL */
    int state;           /* SNAP_* */
    unsigned gen;        /* bumped by each DDL of the table: chunks read before are read again */
    snap_range *ranges;
    size_t nranges, rcap;
    uint64_t rows, chunks; /* read so far (rows also across restarts) */
    uint64_t est_rows;     /* the server's estimate when it became active */
    int int_key;           /* the first key column is an integer: ranges split evenly */
    int key_unsigned;
    long double kmin, kmax; /* its bounds when it became active (int_key; exact for 64 bits) */
    unsigned in_flight;
    int truncate_first;    /* rows of it were emitted under another key: TRUNCATE, then read */
    int str_key;           /* ... a string (CHAR, VARCHAR, BINARY...): split between bytes */
    char *smin, *smax;     /* its bounds (str_key) */
    size_t smin_len, smax_len;
    int have_bounds;       /* kmin, kmax (smin, smax) read */
    int orphan;            /* out of the plan: freed with its last chunk in flight */
    unsigned retries;      /* chunks read again after a failure */
    int resync;            /* read again (w2l_pipeline_resync): its rows replace the lake's */
} snap_table;

/* One chunk: what a worker reads (copied from the plan at launch) and what it read. */
typedef struct snap_job {
    struct snap_job *next;
    snap_table *t;
    uint64_t range_id;
    unsigned gen;
    char *sql;               /* the SELECT */
    w2l__snap_col *cols;     /* copies (names not owned) */
    size_t ncols, npk;
    size_t *pk;
    size_t limit;
    char at_file[256];       /* the stream's position when it was handed out */
    uint64_t at_pos;
    /* set by the worker, under the workers' lock */
    int have_pos, done;
    char file[256];
    uint64_t pos;
    w2l_rc rc;
    w2l_error err;
    /* the rows (the worker's until done) */
    w2l_value *vals;         /* nrows * ncols */
    size_t nrows, cap;
    snap_key last;
    w2l__arena arena;
    uint8_t *coerced;
} snap_job;

typedef struct snap_workers snap_workers; /* mysql_snap_workers.c */

/* A resumed snapshot read the tables from `db.name` on (in snapshot order) at file:pos:
 * the binlog up to there is already in what it read for them. */
typedef struct wseg {
    char db[256], name[256];
    char file[256];
    uint64_t pos;
} wseg;
#define MAX_WSEGS 32

typedef struct mysql_source {
    w2l_source base;

    struct {                  /* from the URI and the conf (mysql_config.c) */
        w2l__my_params params;
        uint32_t server_id;
        char **dbs;
        size_t ndbs;
        int have_regex;
        regex_t re;
        w2l__tfilter filter;  /* include / exclude */
        char *startup;
        char *tables_text;    /* tables= (source.tables) as given, NULL unset */
        char *filter_json;    /* ,"filter":{...} of every position, "" no filter */
        int until_caught_up;
        int64_t clock_skew_ms; /* source.clock-skew: heartbeat marks stay this far back */
        w2l__type_opts topts;
        size_t chunk_rows;
        int64_t snap_parallelism;  /* source.snapshot-parallelism, 0 automatic */
        int64_t snap_rate;         /* source.snapshot-max-rows-per-second, 0 none */
        int64_t snap_max_running;  /* source.snapshot-max-threads-running, 0 none */
        snap_lock snapshot_lock;
        /* TLS and the server's RSA key (caching_sha2_password): paths, owned */
        char *ssl_ca, *ssl_cert, *ssl_key, *server_public_key;
        char *password_file;  /* password-file= / source.password-file, owned */
    } cfg;

    struct {                  /* the server (check_server in mysql_source.c) */
        int mysql;            /* MySQL, not MariaDB */
        unsigned version;     /* major * 10000 + minor * 100 + patch */
        int gtid_mode;        /* MySQL: gtid_mode=ON (positions as GTID sets) */
    } server;

    mstate state;
    w2l__my *conn;            /* binlog connection */
    w2l__bl *bl;
    w2l__bl_scratch scratch;

    struct {                  /* position: after the last whole transaction emitted */
        char file[256];
        uint64_t pos;
        w2l__bl_gtid *gtid;
        size_t ngtid, gtid_cap;
        /* MySQL: the server's executed GTID set at file:pos; known 0 while it is not
         * (started from file:pos, gtid_mode not ON): then it is learnt from the next
         * file's PREVIOUS_GTIDS, and positions hold file:pos alone. The empty set is a
         * known set (a server that never executed a GTID: "gtid_set":"") */
        w2l__mygtids *mygtids;
        int mygtids_known;
    } at;
    struct {                  /* the open transaction */
        int open;
        int standalone;
        w2l__bl_gtid gtid;
        int has_gtid;
        /* MySQL: the transaction's GTID (has_mygtid 0: anonymous) */
        int has_mygtid;
        uint8_t sid[16];
        char tag[33];
        size_t tag_len;
        int64_t gno;
        uint64_t emitted;     /* changes emitted in the open transaction */
        uint64_t skip;        /* after a reconnect inside a transaction: changes to skip */
        int64_t ts_ms;
    } txn;
    struct {                  /* until-caught-up: the end of the binlog at open */
        char file[256];
        uint64_t pos;
    } end;

    struct {                  /* tracked definitions (mysql_tracked.c) */
        ttable *tab;
        size_t n, cap;
    } defs;

    struct {                  /* snapshot (mysql_snap_driver.c) */
        int active;           /* tables are still to read */
        int initial;          /* ... and not only re-reads (w2l_pipeline_resync) */
        w2l__my *conn;        /* positions, bounds, keyless tables */
        snap_table **tables;  /* the plan: every table it knows, sorted by db, name */
        size_t ntables, cap;
        unsigned epoch;       /* bumped whenever a table's state changes */
        w2l_buf json;         /* the position's "chunks" member, for json_epoch */
        unsigned json_epoch;
        uint64_t range_ids;
        snap_workers *workers;
        snap_job *jobs;       /* in flight, in launch order */
        unsigned parallelism;
        int64_t rate_t0_ms, rate_rows; /* rows asked for since rate_t0_ms */
        int64_t busy_check_ms, busy_until_ms;
        /* a keyless table read at a position: the stream first reaches it */
        snap_table *keyless;
        unsigned kgen;
        int keyless_failed;   /* its read lost the connection before emitting a row */
        char kfile[256];
        uint64_t kpos;
        uint64_t done_tables, done_rows, done_chunks, tables_total, rows_estimated;
        uint64_t behind;      /* snapshots behind the stream, read again */
        int64_t started_ms;
        int64_t progress_ms;
        char file[256];       /* where the stream started (P0) */
        uint64_t pos;
        char gtid[1024];
        char *mygtids;        /* MySQL: the executed GTID set at file:pos; NULL unknown */
        /* windows of a snapshot resumed by an older version (see "Snapshot resume") */
        wseg segs[MAX_WSEGS];
        size_t nsegs;
    } snap;
    uint64_t ev_pos;          /* the event being handled */
    struct {                  /* the stream stops at a chunk's position (w2l__ms_binlog_next) */
        int on;
        char file[256];
        uint64_t pos;
    } limit;

    /* XA: prepared transactions (in binlog order) and the PREPARE group being read */
    struct {
        xa_txn **pending;
        size_t n, cap;
        xa_txn *cur;
        size_t bytes, limit;
        /* After a restart from a pending XA's PREPARE group: everything up to the saved
         * position was emitted before, so nothing is emitted until the stream passes it
         * (the PREPARE groups read on the way are buffered again). */
        int replaying;
        char replay_file[256];
        uint64_t replay_pos;
    } xa;

    struct {                  /* "db.table.column" of boolean columns already warned about */
        char **names;
        size_t n, cap;
    } warned;
    struct {                  /* "db.table" set aside (ddl.policy=quarantine) by the source */
        char **names;
        size_t n;
    } quarantined;
    w2l_conf *conf;           /* a copy, for per-table keys (ddl.policy) */

    int announce_filter;      /* new tables streamed: emit the position with the new filter */
    char **new_tables;        /* source.new-tables=snapshot: "db\0name" of each, owned */
    size_t new_tables_n;
    w2l__json *restored_doc;  /* the restored position, while it holds snapshot progress */
    w2l__json *restored_chunks; /* its "chunks" (in restored_doc), until the plan is made */
    int failed;
    w2l_error ferr;
    _Atomic int64_t last_event_ms;
    _Atomic int caught_up;
    _Atomic int disconnected; /* reconnecting: the lag is not known */
    uint64_t reconnects;
} mysql_source;

/* ---- mysql_config.c ---- */

void w2l__ms_sleep_ms(int ms);
int w2l__ms_hexval(int c);
void w2l__ms_free_strv(char **v, size_t n);
/* mysql_checks.c: the start-time checks. The binlog settings as read (NULL: the server has
 * no such variable); every one missing is named at once, W2L_SOURCE. */
typedef struct w2l__ms_settings {
    int mysql; /* [mysqld], else [mariadbd] */
    const char *log_bin, *binlog_format, *row_image, *row_metadata;
} w2l__ms_settings;
w2l_rc w2l__ms_settings_check(const w2l__ms_settings *s, const char *server, w2l_error *err);
w2l_rc w2l__ms_check_settings(mysql_source *ms, w2l__my *c, w2l_error *err);
/* After w2l__ms_load_definitions: the databases named exist and are readable, and the table
 * patterns match a table when there are tables (W2L_SOURCE naming what there is). */
w2l_rc w2l__ms_check_selection(mysql_source *ms, w2l__my *c, w2l_error *err);
w2l_rc w2l__ms_parse_uri(mysql_source *ms, const w2l_conf *conf, const char *uri, w2l_error *err);
/* Frees what w2l__ms_parse_uri and the conf put in ms->cfg (the password wiped). */
void w2l__ms_cfg_free(mysql_source *ms);
int w2l__ms_db_selected(const mysql_source *ms, const char *db);
int w2l__ms_table_selected(const mysql_source *ms, const char *db, const char *table);

/* ---- mysql_tracked.c ---- */

void w2l__ms_ttable_clear(ttable *t);
ttable *w2l__ms_tt_find(mysql_source *ms, const char *db, const char *name);
void w2l__ms_tt_remove(mysql_source *ms, ttable *t);
long w2l__ms_tt_col(const ttable *t, const char *name);
w2l_rc w2l__ms_load_definitions(mysql_source *ms, w2l__my *c, w2l_error *err);
w2l_rc w2l__ms_tt_apply(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err);
w2l_rc w2l__ms_build_schema(ttable *t, const char *const *names, const w2l_type *types,
                            const int *nullable, size_t n, const size_t *pk, size_t npk,
                            w2l_schema **out, w2l_error *err);
w2l_rc w2l__ms_prepare_tmap(mysql_source *ms, w2l__bl_tmap *tm, w2l_error *err);

/* ---- mysql_position.c ---- */

int w2l__ms_pos_cmp(const char *fa, uint64_t pa, const char *fb, uint64_t pb);
size_t w2l__ms_format_window(const mysql_source *ms, char *buf, size_t size);
int w2l__ms_in_window(const mysql_source *ms, const char *db, const char *table, const char *file,
                      uint64_t pos);
w2l_rc w2l__ms_emit_commit(mysql_source *ms, w2l_emitter *em, w2l_error *err);
w2l_rc w2l__ms_set_gtid_text(mysql_source *ms, const char *s, w2l_error *err);
w2l_rc w2l__ms_set_mygtids_text(mysql_source *ms, const char *s, w2l_error *err);
w2l_rc w2l__ms_gtid_text(const mysql_source *ms, char **out, w2l_error *err);
w2l_rc w2l__ms_position_json(const mysql_source *ms, w2l_buf *b, const char *file, uint64_t pos,
                             const char *gtid, w2l_error *err);
w2l_rc w2l__ms_read_binlog_status(const mysql_source *ms, w2l__my *c, char *file, size_t fsize,
                                  uint64_t *pos, w2l_error *err);
void w2l__ms_xa_free(xa_txn *x);
void w2l__ms_xa_drop_cur(mysql_source *ms);
w2l_rc w2l__ms_xa_begin(mysql_source *ms, w2l_error *err);
w2l_rc w2l__ms_xa_add(mysql_source *ms, const w2l_change *ch, w2l_error *err);
char *w2l__ms_xa_key(const char *sql, size_t n, size_t skip_words);
w2l_rc w2l__ms_xa_prepared(mysql_source *ms, w2l_error *err);
w2l_rc w2l__ms_xa_finish(mysql_source *ms, w2l_emitter *em, const char *key, int commit,
                         uint64_t log_pos, w2l_error *err);

/* ---- mysql_stream.c ---- */

void w2l__ms_warn_coerced(mysql_source *ms, const char *db, const char *table,
                          const char *const *names, size_t ncols, uint8_t *coerced);
w2l_rc w2l__ms_binlog_next(mysql_source *ms, w2l_emitter *em, int timeout_ms, w2l_error *err);

/* ---- mysql_newtables.c ---- */

w2l_rc w2l__ms_filter_json(mysql_source *ms, const w2l_conf *conf, w2l_error *err);
w2l_rc w2l__ms_check_new_tables(mysql_source *ms, const w2l_conf *conf, w2l__my *c,
                                const char *restored, w2l_error *err);

/* ---- mysql_snap_plan.c: the plan of the snapshot ---- */

void w2l__ms_key_free(snap_key *k);
w2l_rc w2l__ms_key_copy(snap_key *dst, char *const *v, const size_t *len, size_t n,
                        w2l_error *err);
void w2l__ms_snap_table_free(snap_table *t);
void w2l__ms_snap_table_columns_free(snap_table *t);
void w2l__ms_snap_tables_free(mysql_source *ms);
/* The table's columns, key and schema from its tracked definition (again after a DDL). */
w2l_rc w2l__ms_snap_table_columns(mysql_source *ms, snap_table *t, const ttable *tt,
                                  w2l_error *err);
/* The selected tables of the tracked definitions as the plan, every one pending. */
w2l_rc w2l__ms_snap_plan(mysql_source *ms, w2l_error *err);
snap_table *w2l__ms_snap_find(const mysql_source *ms, const char *db, const char *name);
void w2l__ms_snap_remove(mysql_source *ms, snap_table *t);
/* 1 when the stream drops db.name's row events (ddl: its DDL): a table still to be read
 * whole that the lake does not hold yet, or a keyless table until its read. */
int w2l__ms_snap_hides(const mysql_source *ms, const char *db, const char *name, int ddl);
/* Follows a DDL statement the stream applied to the tracked definitions (the plan's
 * names, columns and keys). */
w2l_rc w2l__ms_snap_ddl(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err);
snap_range *w2l__ms_snap_range_add(mysql_source *ms, snap_table *t, w2l_error *err);
snap_range *w2l__ms_snap_range_find(snap_table *t, uint64_t id);
void w2l__ms_snap_range_remove(snap_table *t, snap_range *r);
/* Position JSON: ,"chunks":{...} while the snapshot goes on (nothing after it). */
w2l_rc w2l__ms_snap_json(const mysql_source *ms, w2l_buf *b, w2l_error *err);
/* A restored "chunks" member (NULL: none) applied to the plan (after w2l__ms_snap_plan). */
w2l_rc w2l__ms_snap_restore(mysql_source *ms, const w2l__json *chunks, w2l_error *err);
/* Adds db.name to the plan as pending (a table new to the job; resync: one the lake holds,
 * read again and replaced). */
w2l_rc w2l__ms_snap_add(mysql_source *ms, const char *db, const char *name, int resync,
                        w2l_error *err);

/* ---- mysql_snap_workers.c: the chunk readers ---- */

w2l_rc w2l__ms_workers_start(mysql_source *ms, unsigned n, w2l_error *err);
void w2l__ms_workers_stop(mysql_source *ms);
/* Hands job to an idle reader and waits until its snapshot's position is known (or it
 * failed: job->done). W2L_AGAIN when no reader is idle. */
w2l_rc w2l__ms_workers_launch(mysql_source *ms, snap_job *job, w2l_error *err);
/* Waits up to timeout_ms for job to be done; 1 when it is. */
int w2l__ms_workers_wait(mysql_source *ms, snap_job *job, int timeout_ms);
unsigned w2l__ms_workers_idle(mysql_source *ms);
void w2l__ms_job_free(snap_job *j);
/* Opens a consistent snapshot on c and reads its binlog position (MariaDB: reported by
 * the snapshot; MySQL: under FLUSH TABLES WITH READ LOCK for two statements). */
w2l_rc w2l__ms_snap_txn(const mysql_source *ms, w2l__my *c, char *file, size_t fsize,
                        uint64_t *pos, w2l_error *err);

/* ---- mysql_snap_driver.c ---- */

/* A fresh start: the stream's start position, read with a consistent snapshot that also
 * reads the definitions again, and the plan (every selected table pending). */
w2l_rc w2l__ms_snap_begin(mysql_source *ms, w2l_error *err);
/* During the snapshot, in place of w2l__ms_binlog_next: launches chunks, streams the
 * binlog up to the next chunk's position and emits the chunk there. */
w2l_rc w2l__ms_snap_next(mysql_source *ms, w2l_emitter *em, int timeout_ms, w2l_error *err);
void w2l__ms_snap_close(mysql_source *ms);

#endif
