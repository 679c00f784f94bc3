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
} tmuser;

typedef enum { ST_SNAPSHOT = 1, ST_BINLOG, ST_DONE } mstate;

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

typedef struct snap_table {
    char *db, *name;
    w2l__snap_col *cols;
    size_t ncols;
    size_t *pk;
    size_t npk;
    w2l_schema *schema;
    char *create_sql;    /* CREATE TABLE of its tracked definition: an empty table's DDL */
} snap_table;

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
        w2l__my *conn;
        snap_table *tables;
        size_t ntables, idx;
        char **key;
        size_t *key_len;
        w2l__arena arena[2];
        int arena_cur;
        char file[256];
        uint64_t pos;
        char gtid[1024];
        char *mygtids;        /* MySQL: the executed GTID set at file:pos; NULL unknown */
        /* snapshot resume windows (see "Snapshot resume" in mysql_source.c) */
        wseg segs[MAX_WSEGS];
        size_t nsegs;
        int truncate;         /* emit TRUNCATE of the current table before reading it again */
    } snap;
    uint64_t ev_pos;          /* the event being handled */

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
int w2l__ms_db_selected(const mysql_source *ms, const char *db);
int w2l__ms_table_selected(const mysql_source *ms, const char *db, const char *table);

/* ---- mysql_tracked.c ---- */

void w2l__ms_ttable_clear(ttable *t);
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

/* ---- mysql_snap_driver.c ---- */

void w2l__ms_snap_tables_free(mysql_source *ms);
w2l_rc w2l__ms_snap_plan(mysql_source *ms, w2l_error *err);
w2l_rc w2l__ms_snap_begin(mysql_source *ms, int fresh, w2l_error *err);
w2l_rc w2l__ms_snapshot_next(mysql_source *ms, w2l_emitter *em, w2l_error *err);

#endif
