/*
 * The "mysql" source plug-in (DESIGN.md sections 1-4 and 7): a whole MariaDB database,
 * first as a consistent snapshot, then from the binlog exactly where the snapshot (or
 * the last checkpoint) left off.
 *
 *   mysql://USER:PASS@HOST:PORT/?server-id=N&databases=a,b&tables=REGEX&startup=MODE
 *
 * URI parameters win over the conf keys source.server-id, source.databases,
 * source.tables (POSIX extended regex over "db.table", anchored) and source.startup:
 *   initial       (default) snapshot of every selected table, then the binlog
 *   earliest      the oldest binlog still on the server, no snapshot
 *   latest        from the current end of the binlog
 *   gtid:STATE    after the GTID state d-s-n[,d-s-n...]
 *   file:NAME:POS from that binlog file and position
 * A restored position (a sealed checkpoint) always wins over the mode.
 *
 * Positions (JSON text, saved at checkpoints, which are placed only at our commits):
 *   {"file":"binlog.000003","pos":1234,"gtid":"0-1-55,1-1-7"}
 * file:pos is the position after the last whole transaction emitted, gtid the server's
 * GTID state (every domain) after it. A restart resumes by GTID when the state is known
 * (it survives server restarts and file renames), else by file:pos. During the snapshot,
 * the position also holds its progress:
 *   {...,"snapshot":{"table":"db.t","index":3,"key":["hex of key text",...]}}
 * meaning: tables before index 3 and the rows of db.t up to that key are emitted.
 *
 * Snapshot resume (exact): a restart mid-snapshot takes a new consistent snapshot at P2,
 * while the binlog must still start at the first snapshot's P1 for the tables already
 * read. The table that was in progress is emptied (a TRUNCATE TABLE through the DDL
 * handler) and read again whole, with the tables after it, at P2; the position records
 * the window "window":[{"db","name","file","pos"}]: binlog events up to P2 of the tables
 * from db.name on (in snapshot order) are skipped, as P2's snapshot holds them. Each
 * further restart adds a window; they are dropped once the stream is past the last.
 * Tables created after P1 that sort before the boundary were never snapshotted; their
 * CREATE and rows come from the binlog. The cost: the table in progress is read again
 * from its start, not from its last chunk.
 *
 * Transactions: the rows between GTID and XID (or the QUERY "COMMIT" of non-transactional
 * tables) are emitted as they are decoded, then w2l_emit_commit(). A standalone GTID
 * group (DDL) commits after its QUERY. A lost connection is retried with backoff; when it
 * broke inside a transaction, the changes already emitted of that transaction are skipped
 * when it is read again, so nothing is emitted twice.
 *
 * Schemas: every row image is decoded with its own TABLE_MAP, which with
 * binlog_row_metadata=FULL carries the column names, types, signedness, charsets,
 * ENUM/SET strings and primary key valid at that position of the binlog, so the schema
 * history keyed by position is the binlog itself, also after a restart in the middle of
 * a DDL sequence. The MySQL column types the map cannot tell (TINYINT(1) for booleans,
 * JSON) come from the tracked column definitions: information_schema at start, then every
 * DDL statement applied through lib/ddl's parser; a tracked definition is used only when
 * its column count, names and base types match the TABLE_MAP (else the map alone
 * decides, with a debug line). The snapshot maps information_schema's COLUMN_TYPE with the
 * same type map, so snapshot and binlog rows of a table get the same schema.
 *
 * DDL statements of selected tables (and CREATE/DROP DATABASE) are emitted with
 * w2l_emit_ddl, their text redacted (CREATE USER ... IDENTIFIED BY '***'); other QUERY
 * texts are never logged unredacted. Online-schema-change shadow tables (_t_gho, _t_new)
 * are selected when their base table is, and their cut-over RENAME is emitted for the
 * DDL handler, which recognises the swap.
 *
 * Heartbeats every 250 ms keep an idle stream moving: next() returns W2L_AGAIN within
 * about max(timeout, 250 ms), so a stop request is honoured within a second. With
 * until-caught-up the stream ends (W2L_DONE) once it reached the end of the binlog as
 * SHOW MASTER STATUS showed it at open.
 *
 * XA transactions (see the XA section below) are held in memory from their PREPARE
 * group until XA COMMIT, which emits them as one transaction; XA ROLLBACK drops them.
 * While one is pending the position carries "xa":{file,pos,gtid} of the oldest PREPARE
 * group: a restart reads from there and emits nothing up to file:pos.
 *
 * Limits: an XA COMMIT whose PREPARE lies before the start position (startup=latest,
 * gtid:, file:) fails the job with a clear error rather than lose its changes; the
 * initial snapshot waits up to 10 s for prepared XA transactions to end (XA RECOVER),
 * then fails naming one. MySQL 8 sources are not
 * supported yet (the decoder is source-aware: YEAR signedness, V2 rows). A connection
 * lost inside a transaction resumes from the last commit and skips the changes of that
 * transaction already emitted; this assumes the server replays the same transaction,
 * which holds for a binlog (it is append-only).
 */
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <errno.h>
#include <strings.h>

#include "mysql_int.h"
#include "source_int.h"
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
} tmuser;

typedef enum { ST_SNAPSHOT = 1, ST_BINLOG, ST_DONE } mstate;

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
    char *gtid;
} xa_txn;

typedef struct snap_table {
    char *db, *name;
    w2l__snap_col *cols;
    size_t ncols;
    size_t *pk;
    size_t npk;
    w2l_schema *schema;
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
    w2l__my_params params;
    uint32_t server_id;
    char **dbs;
    size_t ndbs;
    int have_regex;
    regex_t re;
    char *startup;
    int until_caught_up;
    w2l__type_opts topts;
    size_t chunk_rows;

    mstate state;
    w2l__my *conn;        /* binlog connection */
    w2l__bl *bl;
    w2l__bl_scratch scratch;

    /* position */
    char file[256];
    uint64_t pos;
    w2l__bl_gtid *gtid;
    size_t ngtid, gtid_cap;
    /* the open transaction */
    int in_txn;
    int txn_standalone;
    w2l__bl_gtid txn_gtid;
    int txn_has_gtid;
    uint64_t txn_emitted;  /* changes emitted in the open transaction */
    uint64_t skip;         /* after a reconnect inside a transaction: changes to skip */
    int64_t txn_ts_ms;

    /* until-caught-up */
    char end_file[256];
    uint64_t end_pos;

    /* tracked definitions */
    ttable *tt;
    size_t ntt, ttcap;

    /* snapshot */
    w2l__my *snap_conn;
    snap_table *st;
    size_t nst, st_idx;
    char **snap_key;
    size_t *snap_key_len;
    w2l__arena snap_arena[2];
    int snap_arena_cur;
    char snap_file[256];
    uint64_t snap_pos;
    char snap_gtid[1024];
    /* snapshot resume windows (see "Snapshot resume" above); event being handled */
    wseg segs[MAX_WSEGS];
    size_t nsegs;
    int snap_truncate;     /* emit TRUNCATE of the current table before reading it again */
    uint64_t ev_pos;

    /* XA: prepared transactions (in binlog order) and the PREPARE group being read */
    xa_txn **xa;
    size_t nxa, xacap;
    xa_txn *xa_cur;
    size_t xa_bytes, xa_limit;
    /* After a restart from a pending XA's PREPARE group: everything up to the saved
     * position was emitted before, so nothing is emitted until the stream passes it
     * (the PREPARE groups read on the way are buffered again). */
    int replaying;
    char replay_file[256];
    uint64_t replay_pos;

    /* "db.table.column" of boolean columns already warned about (a value other than 0/1) */
    char **warned;
    size_t nwarned, warned_cap;

    int failed;
    w2l_error ferr;
    _Atomic int64_t last_event_ms;
    _Atomic int caught_up;
    uint64_t reconnects;
} mysql_source;

/* ---- small helpers ---- */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int pct_decode(const char *s, size_t n, char *out, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            c = (char)(hi << 4 | lo);
            i += 2;
        }
        if (k + 1 >= size) return -1;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) w2l__free(v[i]);
    w2l__free(v);
}

/* ---- URI and configuration ---- */

static w2l_rc set_param(mysql_source *ms, const char *uri, const char *k, size_t kl, const char *v, size_t vl,
                        char **dbs_text, char **tables, char **startup, int64_t *sid, w2l_error *err)
{
    char val[1024];
    if (pct_decode(v, vl, val, sizeof val))
        return w2l__fail(err, W2L_CONFIG, "source URI: bad value of parameter '%.*s'", (int)kl, k);
    char **dst = NULL;
    if (kl == 9 && !memcmp(k, "server-id", 9)) {
        char *e;
        long long x = strtoll(val, &e, 10);
        if (*e || x < 1 || x > 4294967295LL)
            return w2l__fail(err, W2L_CONFIG, "source URI: server-id '%s' is not a number in 1..4294967295", val);
        *sid = x;
        return W2L_OK;
    }
    if (kl == 9 && !memcmp(k, "databases", 9)) dst = dbs_text;
    else if (kl == 6 && !memcmp(k, "tables", 6)) dst = tables;
    else if (kl == 7 && !memcmp(k, "startup", 7)) dst = startup;
    else if ((kl == 15 && !memcmp(k, "connect-timeout", 15)) || (kl == 10 && !memcmp(k, "chunk-rows", 10))) {
        long long x = strtoll(val, NULL, 10);
        if (kl == 10) ms->chunk_rows = x > 0 ? (size_t)x : SNAP_CHUNK_DEFAULT;
        else ms->params.connect_timeout_s = x > 0 ? (unsigned)x : 10;
        return W2L_OK;
    } else
        return w2l__fail(err, W2L_CONFIG,
                         "source URI: unknown parameter '%.*s' (allowed: server-id, databases, tables, startup, "
                         "chunk-rows, connect-timeout)", (int)kl, k);
    (void)uri;
    w2l__free(*dst);
    *dst = w2l__strdup(val);
    W2L_NOMEM_IF(!*dst, err);
    return W2L_OK;
}

/* Parses the URI; the message never repeats the URI (it holds the password). */
static w2l_rc parse_uri(mysql_source *ms, const w2l_conf *conf, const char *uri, w2l_error *err)
{
    if (!uri || strncmp(uri, "mysql://", 8) != 0)
        return w2l__fail(err, W2L_CONFIG, "source URI: expected mysql://USER:PASS@HOST:PORT/?server-id=N&...");
    const char *p = uri + 8;
    const char *slash = p + strcspn(p, "/?");
    const char *at = NULL;
    for (const char *q = p; q < slash; q++)
        if (*q == '@') at = q; /* the last @ before the host */
    char buf[512];
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        size_t ul = colon ? (size_t)(colon - p) : (size_t)(at - p);
        if (pct_decode(p, ul, buf, sizeof buf)) return w2l__fail(err, W2L_CONFIG, "source URI: bad user name");
        ms->params.user = w2l__strdup(buf);
        W2L_NOMEM_IF(!ms->params.user, err);
        if (colon) {
            if (pct_decode(colon + 1, (size_t)(at - colon - 1), buf, sizeof buf))
                return w2l__fail(err, W2L_CONFIG, "source URI: bad password encoding");
            ms->params.pass = w2l__strdup(buf);
            memset(buf, 0, sizeof buf);
            W2L_NOMEM_IF(!ms->params.pass, err);
        }
        p = at + 1;
    }
    const char *hend = slash;
    const char *pc = NULL;
    if (*p == '[') { /* [ipv6]:port */
        const char *rb = memchr(p, ']', (size_t)(hend - p));
        if (!rb) return w2l__fail(err, W2L_CONFIG, "source URI: bad host");
        ms->params.host = w2l__strndup(p + 1, (size_t)(rb - p - 1));
        pc = rb + 1 < hend && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        pc = memchr(p, ':', (size_t)(hend - p));
        ms->params.host = w2l__strndup(p, (size_t)((pc ? pc : hend) - p));
    }
    W2L_NOMEM_IF(!ms->params.host, err);
    if (!*ms->params.host) {
        w2l__free(ms->params.host);
        ms->params.host = w2l__strdup("127.0.0.1");
        W2L_NOMEM_IF(!ms->params.host, err);
    }
    ms->params.port = 3306;
    if (pc) {
        char *e;
        long port = strtol(pc + 1, &e, 10);
        if (e != hend || port < 1 || port > 65535) return w2l__fail(err, W2L_CONFIG, "source URI: bad port");
        ms->params.port = (unsigned)port;
    }
    if (!ms->params.user) return w2l__fail(err, W2L_CONFIG, "source URI: no user (mysql://USER:PASS@HOST:PORT/)");

    char *dbs_text = NULL, *tables = NULL, *startup = NULL;
    int64_t sid = 0;
    const char *cv;
    if (conf) {
        if (w2l_conf_get(conf, "source.databases", &cv, NULL) == W2L_OK && cv) dbs_text = w2l__strdup(cv);
        if (w2l_conf_get(conf, "source.tables", &cv, NULL) == W2L_OK && cv) tables = w2l__strdup(cv);
        if (w2l_conf_get(conf, "source.startup", &cv, NULL) == W2L_OK && cv) startup = w2l__strdup(cv);
        int64_t v;
        if (w2l_conf_get_int(conf, "source.server-id", &v, NULL) == W2L_OK) sid = v;
    }
    w2l_rc rc = W2L_OK;
    const char *q = strchr(slash, '?');
    while (rc == W2L_OK && q && *q) {
        const char *k = q + 1, *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
        const char *eq = memchr(k, '=', (size_t)(end - k));
        if (end > k) {
            if (!eq) rc = w2l__fail(err, W2L_CONFIG, "source URI: parameter '%.*s' without a value", (int)(end - k), k);
            else rc = set_param(ms, uri, k, (size_t)(eq - k), eq + 1, (size_t)(end - eq - 1), &dbs_text, &tables,
                                &startup, &sid, err);
        }
        q = amp;
    }
    if (rc == W2L_OK && sid == 0)
        rc = w2l__fail(err, W2L_CONFIG, "mysql source: a replication server id is required (server-id= in the URI "
                       "or source.server-id), unique among the server's replicas and CDC streams");
    ms->server_id = (uint32_t)sid;
    if (rc == W2L_OK && dbs_text && *dbs_text) {
        for (char *s = dbs_text; rc == W2L_OK && *s;) {
            size_t l = strcspn(s, ",");
            char *d = w2l__strndup(s, l);
            char **nv = d ? w2l__realloc(ms->dbs, (ms->ndbs + 1) * sizeof *nv) : NULL;
            if (!nv) {
                w2l__free(d);
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            ms->dbs = nv;
            ms->dbs[ms->ndbs++] = d;
            s += l;
            if (*s) s++;
        }
    }
    if (rc == W2L_OK && tables && *tables) {
        char *anch = w2l__asprintf("^(%s)$", tables);
        if (!anch) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else {
            int r = regcomp(&ms->re, anch, REG_EXTENDED | REG_NOSUB);
            w2l__free(anch);
            if (r) rc = w2l__fail(err, W2L_CONFIG, "mysql source: tables '%.200s' is not a valid regular expression", tables);
            else ms->have_regex = 1;
        }
    }
    ms->startup = startup ? startup : w2l__strdup("initial");
    startup = NULL;
    if (rc == W2L_OK && !ms->startup) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        const char *s = ms->startup;
        if (strcmp(s, "initial") && strcmp(s, "earliest") && strcmp(s, "latest") && strncmp(s, "gtid:", 5) &&
            strncmp(s, "file:", 5))
            rc = w2l__fail(err, W2L_CONFIG, "mysql source: startup '%.100s' is not initial, earliest, latest, "
                           "gtid:STATE or file:NAME:POS", s);
    }
    w2l__free(dbs_text);
    w2l__free(tables);
    w2l__free(startup);
    return rc;
}

static int is_system_db(const char *db)
{
    return !strcmp(db, "mysql") || !strcmp(db, "information_schema") || !strcmp(db, "performance_schema") ||
           !strcmp(db, "sys");
}

static int db_selected(const mysql_source *ms, const char *db)
{
    if (!db) return 0;
    if (!ms->ndbs) return !is_system_db(db);
    for (size_t i = 0; i < ms->ndbs; i++)
        if (!strcmp(ms->dbs[i], db)) return 1;
    return 0;
}

static int table_selected(const mysql_source *ms, const char *db, const char *table)
{
    if (!db_selected(ms, db) || !table) return 0;
    char base[256];
    const char *name = table;
    w2l__osc_kind k = w2l__osc_classify(table, base, sizeof base);
    if (k == W2L_OSC_GHOST_CHANGELOG || k == W2L_OSC_GHOST_OLD || k == W2L_OSC_PTOSC_OLD) return 0;
    if (k != W2L_OSC_NONE) name = base;
    if (!ms->have_regex) return 1;
    char full[600];
    snprintf(full, sizeof full, "%s.%s", db, name);
    return regexec(&ms->re, full, 0, NULL, 0) == 0;
}

/* ---- tracked definitions ---- */

static void ttable_clear(ttable *t)
{
    w2l__free(t->db);
    w2l__free(t->name);
    for (size_t i = 0; i < t->ncols; i++) {
        w2l__free(t->cols[i].name);
        w2l__free(t->cols[i].type);
    }
    w2l__free(t->cols);
    free_strv(t->pk, t->npk);
    w2l_schema_unref(t->schema);
    memset(t, 0, sizeof *t);
}

static ttable *tt_find(mysql_source *ms, const char *db, const char *name)
{
    for (size_t i = 0; i < ms->ntt; i++)
        if (!strcmp(ms->tt[i].db, db) && !strcmp(ms->tt[i].name, name)) return &ms->tt[i];
    return NULL;
}

static ttable *tt_get(mysql_source *ms, const char *db, const char *name, w2l_error *err)
{
    ttable *t = tt_find(ms, db, name);
    if (t) return t;
    if (ms->ntt == ms->ttcap) {
        size_t nc = ms->ttcap ? ms->ttcap * 2 : 16;
        ttable *n = w2l__realloc(ms->tt, nc * sizeof *n);
        if (!n) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        ms->tt = n;
        ms->ttcap = nc;
    }
    t = &ms->tt[ms->ntt];
    memset(t, 0, sizeof *t);
    t->db = w2l__strdup(db);
    t->name = w2l__strdup(name);
    if (!t->db || !t->name) {
        ttable_clear(t);
        w2l__fail(err, W2L_NOMEM, "out of memory");
        return NULL;
    }
    ms->ntt++;
    return t;
}

static void tt_remove(mysql_source *ms, ttable *t)
{
    size_t i = (size_t)(t - ms->tt);
    ttable_clear(t);
    ms->tt[i] = ms->tt[--ms->ntt];
}

static w2l_rc tcol_set(tcol *c, const char *name, const char *type, int nullable, w2l_error *err)
{
    char *n = w2l__strdup(name), *t = w2l__strdup(type);
    if (!n || !t) {
        w2l__free(n);
        w2l__free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__free(c->name);
    w2l__free(c->type);
    c->name = n;
    c->type = t;
    c->nullable = nullable;
    return W2L_OK;
}

static w2l_rc tt_add_col(ttable *t, const char *name, const char *type, int nullable, w2l_error *err)
{
    tcol *n = w2l__realloc(t->cols, (t->ncols + 1) * sizeof *n);
    W2L_NOMEM_IF(!n, err);
    t->cols = n;
    memset(&t->cols[t->ncols], 0, sizeof(tcol));
    W2L_TRY(tcol_set(&t->cols[t->ncols], name, type, nullable, err));
    t->ncols++;
    return W2L_OK;
}

static long tt_col(const ttable *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcasecmp(t->cols[i].name, name)) return (long)i;
    return -1;
}

/* Moves column i to where FIRST / AFTER x puts it (as MySQL does; an unknown x: kept). */
static void tt_place(ttable *t, size_t i, int position, const char *after)
{
    if (position == W2L_DDL_POS_NONE) return;
    tcol c = t->cols[i];
    memmove(&t->cols[i], &t->cols[i + 1], (t->ncols - i - 1) * sizeof *t->cols);
    t->ncols--;
    long at = 0;
    if (position == W2L_DDL_POS_AFTER) {
        long a = after ? tt_col(t, after) : -1;
        at = a >= 0 ? a + 1 : (long)i;
    }
    memmove(&t->cols[at + 1], &t->cols[at], (t->ncols - (size_t)at) * sizeof *t->cols);
    t->cols[at] = c;
    t->ncols++;
}

/* Reads the definitions of every selected table from information_schema. */
static w2l_rc load_definitions(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c,
                          "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE "
                          "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
                          "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
                          "WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA NOT IN "
                          "('mysql','information_schema','performance_schema','sys') "
                          "ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION",
                          0, &r, err));
    char **row;
    unsigned long *len;
    int k;
    w2l_rc rc = W2L_OK;
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        if (!db_selected(ms, row[0])) continue;
        ttable *t = tt_get(ms, row[0], row[1], err);
        if (!t) {
            rc = err->code;
            break;
        }
        if ((rc = tt_add_col(t, row[2], row[3], !strcmp(row[4], "YES"), err)) != W2L_OK) break;
    }
    if (k < 0) rc = err->code;
    w2l__my_res_free(r);
    W2L_TRY(rc);
    W2L_TRY(w2l__my_query(c,
                          "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
                          "WHERE CONSTRAINT_NAME = 'PRIMARY' AND TABLE_SCHEMA NOT IN "
                          "('mysql','information_schema','performance_schema','sys') "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
                          0, &r, err));
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        ttable *t = tt_find(ms, row[0], row[1]);
        if (!t) continue;
        char **n = w2l__realloc(t->pk, (t->npk + 1) * sizeof *n);
        char *s = w2l__strdup(row[2]);
        if (!n || !s) {
            if (n) t->pk = n;
            w2l__free(s);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        t->pk = n;
        t->pk[t->npk++] = s;
    }
    if (k < 0) rc = err->code;
    w2l__my_res_free(r);
    return rc;
}

static w2l_rc tt_from_create(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err)
{
    ttable *old = tt_find(ms, st->table.db, st->table.name);
    if (old) tt_remove(ms, old);
    ttable *t = tt_get(ms, st->table.db, st->table.name, err);
    if (!t) return err->code;
    for (size_t i = 0; i < st->ncols; i++)
        W2L_TRY(tt_add_col(t, st->cols[i].name, st->cols[i].type_text, !st->cols[i].not_null, err));
    for (size_t i = 0; i < st->npk; i++) {
        char **n = w2l__realloc(t->pk, (t->npk + 1) * sizeof *n);
        W2L_NOMEM_IF(!n, err);
        t->pk = n;
        t->pk[t->npk] = w2l__strdup(st->pk[i]);
        W2L_NOMEM_IF(!t->pk[t->npk], err);
        t->npk++;
    }
    return W2L_OK;
}

static w2l_rc tt_rename(mysql_source *ms, const w2l__ddl_name *from, const w2l__ddl_name *to, w2l_error *err)
{
    if (!from->db || !to->db) return W2L_OK;
    ttable *dst = tt_find(ms, to->db, to->name);
    if (dst) tt_remove(ms, dst);
    ttable *t = tt_find(ms, from->db, from->name);
    if (!t) return W2L_OK;
    char *d = w2l__strdup(to->db), *n = w2l__strdup(to->name);
    if (!d || !n) {
        w2l__free(d);
        w2l__free(n);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__free(t->db);
    w2l__free(t->name);
    t->db = d;
    t->name = n;
    w2l_schema_unref(t->schema);
    t->schema = NULL;
    return W2L_OK;
}

/* Applies one statement to the tracked definitions (best effort: the TABLE_MAP decides). */
static w2l_rc tt_apply(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err)
{
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE:
        if (st->table.db) return tt_from_create(ms, st, err);
        return W2L_OK;
    case W2L_DDL_CREATE_TABLE_LIKE: {
        ttable *src = st->like.db ? tt_find(ms, st->like.db, st->like.name) : NULL;
        if (!src || !st->table.db) return W2L_OK;
        size_t si = (size_t)(src - ms->tt);
        ttable *old = tt_find(ms, st->table.db, st->table.name);
        if (old) {
            tt_remove(ms, old);
            src = NULL;
            for (size_t i = 0; i < ms->ntt; i++)
                if (!strcmp(ms->tt[i].db, st->like.db) && !strcmp(ms->tt[i].name, st->like.name)) src = &ms->tt[i];
            if (!src) return W2L_OK;
            si = (size_t)(src - ms->tt);
        }
        ttable *t = tt_get(ms, st->table.db, st->table.name, err);
        if (!t) return err->code;
        src = &ms->tt[si];
        for (size_t i = 0; i < src->ncols; i++)
            W2L_TRY(tt_add_col(t, src->cols[i].name, src->cols[i].type, src->cols[i].nullable, err));
        return W2L_OK;
    }
    case W2L_DDL_DROP_TABLE:
        for (size_t i = 0; i < st->ntables; i++) {
            ttable *t = st->tables[i].db ? tt_find(ms, st->tables[i].db, st->tables[i].name) : NULL;
            if (t) tt_remove(ms, t);
        }
        return W2L_OK;
    case W2L_DDL_RENAME_TABLE:
        for (size_t i = 0; i < st->nrenames; i++) W2L_TRY(tt_rename(ms, &st->renames[i].from, &st->renames[i].to, err));
        return W2L_OK;
    case W2L_DDL_DROP_DATABASE:
        for (size_t i = ms->ntt; i-- > 0;)
            if (st->database && !strcmp(ms->tt[i].db, st->database)) tt_remove(ms, &ms->tt[i]);
        return W2L_OK;
    case W2L_DDL_ALTER_TABLE: {
        ttable *t = st->table.db ? tt_find(ms, st->table.db, st->table.name) : NULL;
        if (!t) return W2L_OK;
        w2l_schema_unref(t->schema);
        t->schema = NULL;
        for (size_t i = 0; i < st->nalters; i++) {
            const w2l__ddl_alter *a = &st->alters[i];
            long ci = a->name ? tt_col(t, a->name) : -1;
            switch (a->kind) {
            case W2L_ALTER_ADD_COLUMN:
                if (tt_col(t, a->col.name) < 0) {
                    W2L_TRY(tt_add_col(t, a->col.name, a->col.type_text, !a->col.not_null, err));
                    tt_place(t, t->ncols - 1, a->position, a->after);
                }
                break;
            case W2L_ALTER_DROP_COLUMN:
                if (ci >= 0) {
                    w2l__free(t->cols[ci].name);
                    w2l__free(t->cols[ci].type);
                    memmove(&t->cols[ci], &t->cols[ci + 1], (t->ncols - (size_t)ci - 1) * sizeof *t->cols);
                    t->ncols--;
                }
                break;
            case W2L_ALTER_CHANGE_COLUMN:
            case W2L_ALTER_MODIFY_COLUMN:
                if (ci >= 0) {
                    W2L_TRY(tcol_set(&t->cols[ci], a->col.name, a->col.type_text, !a->col.not_null, err));
                    tt_place(t, (size_t)ci, a->position, a->after);
                }
                break;
            case W2L_ALTER_RENAME_COLUMN:
                if (ci >= 0 && a->new_name) W2L_TRY(tcol_set(&t->cols[ci], a->new_name, t->cols[ci].type, t->cols[ci].nullable, err));
                break;
            case W2L_ALTER_RENAME_TABLE: {
                w2l__ddl_name from = st->table;
                W2L_TRY(tt_rename(ms, &from, &a->new_table, err));
                t = a->new_table.db ? tt_find(ms, a->new_table.db, a->new_table.name) : NULL;
                if (!t) return W2L_OK;
                break;
            }
            default: break;
            }
        }
        return W2L_OK;
    }
    default: return W2L_OK;
    }
}

/* ---- schemas ---- */

static int same_schema(const w2l_schema *a, const w2l_schema *b)
{
    size_t n = w2l_schema_field_count(a);
    if (n != w2l_schema_field_count(b)) return 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *x = w2l_schema_field(a, i), *y = w2l_schema_field(b, i);
        if (strcmp(x->name, y->name) || x->required != y->required || x->type.id != y->type.id ||
            x->type.precision != y->type.precision || x->type.scale != y->type.scale)
            return 0;
    }
    size_t na, nb;
    const int32_t *ia = w2l_schema_identifier(a, &na), *ib = w2l_schema_identifier(b, &nb);
    return na == nb && (na == 0 || !memcmp(ia, ib, na * sizeof *ia));
}

/* Builds the source schema of a table: fields 1..n in column order, identifier = pk. A
 * schema equal to the table's last one is returned instead (one object per version). */
static w2l_rc build_schema(ttable *t, const char *const *names, const w2l_type *types, const int *nullable, size_t n,
                           const size_t *pk, size_t npk, w2l_schema **out, w2l_error *err)
{
    w2l_schema *s = w2l_schema_new(0);
    W2L_NOMEM_IF(!s, err);
    int32_t ids[64];
    size_t nid = 0;
    int key_ok = npk > 0 && npk <= 64;
    for (size_t k = 0; k < npk && key_ok; k++) {
        w2l_type_id id = types[pk[k]].id;
        if (id == W2L_TYPE_FLOAT || id == W2L_TYPE_DOUBLE) key_ok = 0;
    }
    for (size_t i = 0; i < n; i++) {
        int req = !nullable[i];
        for (size_t k = 0; k < npk && key_ok; k++)
            if (pk[k] == i) req = 1;
        w2l_rc rc = w2l_schema_add_field(s, (int32_t)i + 1, names[i], types[i], req, err);
        if (rc != W2L_OK) {
            w2l_schema_unref(s);
            return rc;
        }
    }
    if (key_ok) {
        for (size_t k = 0; k < npk; k++) ids[nid++] = (int32_t)pk[k] + 1;
        w2l_rc rc = w2l_schema_set_identifier(s, ids, nid, err);
        if (rc != W2L_OK) {
            w2l_schema_unref(s);
            return rc;
        }
    }
    if (t && t->schema && same_schema(t->schema, s)) {
        w2l_schema_unref(s);
        *out = w2l_schema_ref(t->schema);
        return W2L_OK;
    }
    if (t) {
        w2l_schema_unref(t->schema);
        t->schema = w2l_schema_ref(s);
    }
    *out = s;
    return W2L_OK;
}

static void tmuser_free(void *p)
{
    tmuser *u = p;
    if (!u) return;
    w2l_schema_unref(u->schema);
    w2l__free(u->vals);
    w2l__free(u->present);
    w2l__free(u->coerced);
    w2l__free(u);
}

/* Decides the Iceberg types and schema of a TABLE_MAP's columns. */
static w2l_rc prepare_tmap(mysql_source *ms, w2l__bl_tmap *tm, w2l_error *err)
{
    tmuser *u = w2l__calloc(1, sizeof *u);
    W2L_NOMEM_IF(!u, err);
    tm->user = u;
    tm->user_free = tmuser_free;
    u->selected = table_selected(ms, tm->db, tm->table);
    if (!u->selected) return W2L_OK;
    if (!tm->has_names)
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: the binlog has no column names for %s.%s: set "
                         "binlog_row_metadata=FULL on the server", w2l__my_name(ms->conn), tm->db, tm->table);
    size_t n = tm->ncols;
    u->vals = w2l__calloc(n ? n : 1, sizeof *u->vals);
    u->present = w2l__calloc((n + 7) / 8 + 1, 1);
    u->coerced = w2l__calloc((n + 7) / 8 + 1, 1);
    const char **names = w2l__calloc(n ? n : 1, sizeof *names);
    w2l_type *types = w2l__calloc(n ? n : 1, sizeof *types);
    int *nullable = w2l__calloc(n ? n : 1, sizeof *nullable);
    w2l_rc rc = W2L_OK;
    if (!u->vals || !u->present || !u->coerced || !names || !types || !nullable) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    ttable *t = rc == W2L_OK ? tt_find(ms, tm->db, tm->table) : NULL;
    if (t && t->ncols != n) /* e.g. a restart before an ADD COLUMN: the catalog is ahead of the binlog */
        w2l__log(W2L_LOG_DEBUG, "mysql source: %s.%s: tracked definition has %zu columns, the binlog's table map %zu; "
                 "matching columns by name", tm->db, tm->table, t->ncols, n);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        w2l__bl_col *c = &tm->cols[i];
        char tmtext[64];
        w2l__bl_col_type_text(c, tmtext, sizeof tmtext);
        w2l__mysql_type tmt, tr;
        w2l_type it;
        rc = w2l__mysql_type_map_text(tmtext, strlen(tmtext), &ms->topts, c->name, NULL, &it, &tmt, err);
        if (rc != W2L_OK) break;
        long ti = t ? (i < t->ncols && !strcasecmp(t->cols[i].name, c->name) ? (long)i : tt_col(t, c->name)) : -1;
        if (ti >= 0) {
            /* the tracked type of the column of that name, when it is the same kind of
             * column as the map says (the map decides otherwise) */
            w2l_type it2;
            w2l_error e2;
            if (w2l__mysql_type_map_text(t->cols[ti].type, strlen(t->cols[ti].type), &ms->topts, c->name, NULL, &it2, &tr,
                                         &e2) == W2L_OK) {
                int same = tr.cls == tmt.cls || (tr.cls == W2L_MYSQL_JSON && tmt.cls == W2L_MYSQL_TEXT) ||
                           (tr.cls == W2L_MYSQL_BOOL && tmt.cls == W2L_MYSQL_INT && tmt.int_bytes == 1);
                if (tmt.cls == W2L_MYSQL_INT && tr.cls == W2L_MYSQL_INT)
                    same = tr.int_bytes == tmt.int_bytes && tr.is_unsigned == tmt.is_unsigned;
                if (tmt.cls == W2L_MYSQL_DECIMAL || tmt.cls == W2L_MYSQL_TEXT || tmt.cls == W2L_MYSQL_BINARY)
                    same = same && it2.id == it.id && it2.precision == it.precision && it2.scale == it.scale;
                if (same) it = it2;
            }
        }
        c->ice = it;
        names[i] = c->name;
        types[i] = it;
        nullable[i] = c->nullable;
    }
    if (rc == W2L_OK) {
        ttable *owner = t;
        if (!owner) owner = tt_get(ms, tm->db, tm->table, err);
        if (!owner) rc = err->code;
        else rc = build_schema(owner, names, types, nullable, n, tm->pk, tm->npk, &u->schema, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "%s.%s: ", tm->db, tm->table);
    }
    w2l__free(names);
    w2l__free(types);
    w2l__free(nullable);
    return rc;
}

/* ---- positions ---- */

/* Orders binlog positions: file names of one server differ only in their number. */
static int pos_cmp(const char *fa, uint64_t pa, const char *fb, uint64_t pb)
{
    size_t la = strlen(fa), lb = strlen(fb);
    int c = la != lb ? (la < lb ? -1 : 1) : strcmp(fa, fb);
    return c ? c : pa < pb ? -1 : pa > pb;
}

/* While XA transactions are prepared but not committed, the position also names where
 * the oldest one's PREPARE group starts: a restart reads the binlog from there (its
 * changes are in memory only) and emits nothing up to file:pos, which was emitted. */
static size_t format_window(const mysql_source *ms, char *buf, size_t size)
{
    size_t n = 0;
    if (!ms->nsegs) return 0;
    n += (size_t)snprintf(buf, size, ",\"window\":[");
    for (size_t i = 0; i < ms->nsegs && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s{\"db\":\"%s\",\"name\":\"%s\",\"file\":\"%s\",\"pos\":%llu}",
                              i ? "," : "", ms->segs[i].db, ms->segs[i].name, ms->segs[i].file,
                              (unsigned long long)ms->segs[i].pos);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "]");
    return n;
}

/* 1 when an event of db.table ending at file:pos is in a resumed snapshot (skip it). */
static int in_window(const mysql_source *ms, const char *db, const char *table, const char *file, uint64_t pos)
{
    if (!ms->nsegs || !db || !table) return 0;
    const wseg *w = NULL;
    for (size_t i = 0; i < ms->nsegs; i++) {
        int c = strcmp(ms->segs[i].db, db);
        if (c < 0 || (c == 0 && strcmp(ms->segs[i].name, table) <= 0)) w = &ms->segs[i];
    }
    return w && pos_cmp(file, pos, w->file, w->pos) <= 0;
}

static size_t format_position(const mysql_source *ms, char *buf, size_t size)
{
    char g[1024];
    w2l__gtid_format(ms->gtid, ms->ngtid, g, sizeof g);
    size_t n = (size_t)snprintf(buf, size, "{\"file\":\"%s\",\"pos\":%llu,\"gtid\":\"%s\"", ms->file,
                                (unsigned long long)ms->pos, g);
    if (ms->nxa && n < size) {
        const xa_txn *x = ms->xa[0];
        n += (size_t)snprintf(buf + n, size - n, ",\"xa\":{\"file\":\"%s\",\"pos\":%llu,\"gtid\":\"%s\"}", x->file,
                              (unsigned long long)x->pos, x->gtid);
    }
    if (n < size) n += format_window(ms, buf + n, size - n);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "}");
    return n;
}

static w2l_rc emit_commit(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    char buf[8192];
    size_t n = format_position(ms, buf, sizeof buf);
    if (n >= sizeof buf) return w2l__fail(err, W2L_ERROR, "mysql source: position too long (too many GTID domains)");
    return w2l_emit_commit(em, buf, n, err);
}

static w2l_rc set_gtid_text(mysql_source *ms, const char *s, w2l_error *err)
{
    w2l__bl_gtid *g;
    size_t n;
    W2L_TRY(w2l__gtid_parse(s, &g, &n, err));
    w2l__free(ms->gtid);
    ms->gtid = g;
    ms->ngtid = n;
    ms->gtid_cap = n;
    return W2L_OK;
}

/* ---- XA transactions (binlog notes, trap T20) ----
 * MariaDB writes an XA transaction's rows in a PREPARE group (GTID flagged PREPARED_XA,
 * rows, QUERY "XA END xid", XA_PREPARE_LOG) and its outcome later as a group of its own
 * (QUERY "XA COMMIT xid" / "XA ROLLBACK xid", xid printed as X'gtrid',X'bqual',format),
 * possibly with other transactions in between. The PREPARE group's changes are copied
 * into memory, not emitted; XA COMMIT emits them as one transaction with the position
 * after the COMMIT; XA ROLLBACK drops them. XA COMMIT ... ONE PHASE is written as an
 * ordinary transaction. Memory: at most source.xa-buffer-bytes over all prepared
 * transactions, past it the job fails naming the transaction (nothing is spilled: after
 * a restart the binlog itself is read again from the oldest pending PREPARE group). */

static void xa_free(xa_txn *x)
{
    if (!x) return;
    for (xa_change *c = x->head; c; c = c->next) w2l_schema_unref((w2l_schema *)c->ch.schema);
    w2l__arena_release(&x->arena);
    w2l__free(x->key);
    w2l__free(x->gtid);
    w2l__free(x);
}

static void xa_drop_cur(mysql_source *ms)
{
    if (ms->xa_cur) ms->xa_bytes -= ms->xa_cur->bytes;
    xa_free(ms->xa_cur);
    ms->xa_cur = NULL;
}

/* A PREPARE group starts at the current position (outside any transaction). */
static w2l_rc xa_begin(mysql_source *ms, w2l_error *err)
{
    xa_drop_cur(ms);
    xa_txn *x = w2l__calloc(1, sizeof *x);
    W2L_NOMEM_IF(!x, err);
    w2l__arena_init(&x->arena, 16384);
    snprintf(x->file, sizeof x->file, "%s", ms->file);
    x->pos = ms->pos;
    char g[1024];
    w2l__gtid_format(ms->gtid, ms->ngtid, g, sizeof g);
    x->gtid = w2l__strdup(g);
    ms->xa_cur = x;
    W2L_NOMEM_IF(!x->gtid, err);
    return W2L_OK;
}

static char *arena_dup(w2l__arena *a, const void *p, size_t n)
{
    char *d = w2l__arena_alloc(a, n ? n : 1);
    if (d && n) memcpy(d, p, n);
    return d;
}

/* Copies one change of the PREPARE group being read. */
static w2l_rc xa_add(mysql_source *ms, const w2l_change *ch, w2l_error *err)
{
    xa_txn *x = ms->xa_cur;
    size_t n = ch->ncols, dl = strlen(ch->db) + 1, tl = strlen(ch->table) + 1;
    size_t need = sizeof(xa_change) + n * sizeof(w2l_value) + (n + 7) / 8 + dl + tl;
    for (size_t i = 0; i < n; i++) {
        w2l_type_id id = w2l_schema_field(ch->schema, i)->type.id;
        if (!ch->row[i].is_null && (id == W2L_TYPE_STRING || id == W2L_TYPE_BINARY)) need += ch->row[i].v.bytes.len;
    }
    if (ms->xa_bytes + need > ms->xa_limit)
        return w2l__fail(err, W2L_SOURCE, "mysql source: the XA transaction prepared at %s:%llu (GTID state %s) needs "
                         "more than %zu bytes of memory until its XA COMMIT, with %zu other(s) pending; raise "
                         "source.xa-buffer-bytes", x->file, (unsigned long long)x->pos, x->gtid, ms->xa_limit, ms->nxa);
    xa_change *c = w2l__arena_alloc(&x->arena, sizeof *c);
    w2l_value *vals = c ? w2l__arena_alloc(&x->arena, (n ? n : 1) * sizeof *vals) : NULL;
    char *db = vals ? arena_dup(&x->arena, ch->db, dl) : NULL;
    char *tb = db ? arena_dup(&x->arena, ch->table, tl) : NULL;
    uint8_t *present = tb && ch->present ? (uint8_t *)arena_dup(&x->arena, ch->present, (n + 7) / 8) : NULL;
    W2L_NOMEM_IF(!tb || (ch->present && !present), err);
    for (size_t i = 0; i < n; i++) {
        vals[i] = ch->row[i];
        w2l_type_id id = w2l_schema_field(ch->schema, i)->type.id;
        if (!vals[i].is_null && (id == W2L_TYPE_STRING || id == W2L_TYPE_BINARY)) {
            vals[i].v.bytes.ptr = arena_dup(&x->arena, ch->row[i].v.bytes.ptr, ch->row[i].v.bytes.len);
            W2L_NOMEM_IF(!vals[i].v.bytes.ptr, err);
        }
    }
    c->next = NULL;
    c->ch = *ch;
    c->ch.db = db;
    c->ch.table = tb;
    c->ch.row = vals;
    c->ch.present = present;
    c->ch.schema = w2l_schema_ref((w2l_schema *)ch->schema);
    if (x->tail) x->tail->next = c;
    else x->head = c;
    x->tail = c;
    x->nchanges++;
    x->bytes += need;
    ms->xa_bytes += need;
    return W2L_OK;
}

/* The XID text after "XA END", "XA COMMIT", "XA ROLLBACK": up to trailing blanks/';'. */
static char *xa_key(const char *sql, size_t n, size_t skip_words)
{
    size_t i = 0;
    for (size_t w = 0; w < skip_words; w++) {
        while (i < n && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t')) i++;
        while (i < n && sql[i] != ' ' && sql[i] != '\n' && sql[i] != '\t') i++;
    }
    while (i < n && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t')) i++;
    while (n > i && (sql[n - 1] == ' ' || sql[n - 1] == ';' || sql[n - 1] == '\n')) n--;
    return w2l__strndup(sql + i, n - i);
}

/* XA_PREPARE_LOG: the group being read joins the prepared transactions. */
static w2l_rc xa_prepared(mysql_source *ms, w2l_error *err)
{
    xa_txn *x = ms->xa_cur;
    if (!x || !x->key)
        return w2l__fail(err, W2L_CORRUPT, "mysql source: XA PREPARE at %s:%llu without its XA group (GTID flag, XA END)",
                         ms->file, (unsigned long long)ms->pos);
    for (size_t i = 0; i < ms->nxa; i++)
        if (!strcmp(ms->xa[i]->key, x->key))
            return w2l__fail(err, W2L_CORRUPT, "mysql source: XA transaction %s prepared twice (at %s:%llu)", x->key,
                             x->file, (unsigned long long)x->pos);
    if (ms->nxa == ms->xacap) {
        size_t nc = ms->xacap ? ms->xacap * 2 : 8;
        xa_txn **nx = w2l__realloc(ms->xa, nc * sizeof *nx);
        W2L_NOMEM_IF(!nx, err);
        ms->xa = nx;
        ms->xacap = nc;
    }
    ms->xa[ms->nxa++] = x;
    ms->xa_cur = NULL;
    w2l__log(W2L_LOG_DEBUG, "mysql source: XA %s prepared at %s:%llu: %zu changes held until its XA COMMIT", x->key,
             x->file, (unsigned long long)x->pos, x->nchanges);
    return W2L_OK;
}

/* XA COMMIT (commit = 1) or XA ROLLBACK of the transaction whose XID text is key. */
static w2l_rc xa_finish(mysql_source *ms, w2l_emitter *em, const char *key, int commit, uint64_t log_pos,
                        w2l_error *err)
{
    size_t i = 0;
    while (i < ms->nxa && strcmp(ms->xa[i]->key, key)) i++;
    if (i == ms->nxa) {
        if (!commit || ms->replaying) return W2L_OK; /* rolled back unseen, or emitted before the restart */
        return w2l__fail(err, W2L_SOURCE, "mysql source: XA COMMIT %.200s at %s:%llu: its XA PREPARE lies before the "
                         "position the source started from, so its changes were never read; start from a position "
                         "before the PREPARE (startup=gtid:... or file:...)", key, ms->file, (unsigned long long)log_pos);
    }
    xa_txn *x = ms->xa[i];
    memmove(&ms->xa[i], &ms->xa[i + 1], (ms->nxa - i - 1) * sizeof *ms->xa);
    ms->nxa--;
    ms->xa_bytes -= x->bytes;
    w2l_rc rc = W2L_OK;
    if (commit && !ms->replaying)
        for (xa_change *c = x->head; c && rc == W2L_OK; c = c->next)
            if (!in_window(ms, c->ch.db, c->ch.table, ms->file, log_pos)) rc = w2l_emit_change(em, &c->ch, err);
    xa_free(x);
    return rc;
}

/* ---- binlog streaming ---- */

static w2l_rc start_stream(mysql_source *ms, w2l_error *err)
{
    w2l__bl_close(ms->bl);
    ms->bl = NULL;
    w2l__my_close(ms->conn);
    ms->conn = NULL;
    w2l__my_params p = ms->params;
    p.read_timeout_s = 10;
    W2L_TRY(w2l__my_connect(&p, &ms->conn, err));
    char g[1024];
    w2l__gtid_format(ms->gtid, ms->ngtid, g, sizeof g);
    w2l__bl_opts o = {0};
    o.server_id = ms->server_id;
    o.heartbeat_ms = HEARTBEAT_MS;
    if (ms->ngtid) o.gtid = g;
    else {
        o.file = ms->file;
        o.pos = ms->pos;
    }
    return w2l__bl_open(ms->conn, &o, &ms->bl, err);
}

static int caught_up(const mysql_source *ms)
{
    if (!ms->end_file[0]) return 0;
    int c = strcmp(ms->file, ms->end_file);
    return c > 0 || (c == 0 && ms->pos >= ms->end_pos);
}

/* One warning per table and column whose TINYINT(1) value other than 0/1 was written as
 * boolean true (source.tinyint1-as-boolean), for the life of the source. coerced is the
 * decoders' bitmap over ncols columns; it is cleared. */
static void warn_coerced(mysql_source *ms, const char *db, const char *table, const char *const *names,
                         size_t ncols, uint8_t *coerced)
{
    for (size_t i = 0; i < ncols; i++) {
        if (!(coerced[i / 8] >> (i % 8) & 1)) continue;
        char *key = w2l__asprintf("%s.%s.%s", db, table, names[i]);
        int seen = !key;
        for (size_t k = 0; key && k < ms->nwarned && !seen; k++) seen = !strcmp(ms->warned[k], key);
        if (seen) {
            w2l__free(key);
            continue;
        }
        if (ms->nwarned == ms->warned_cap) {
            size_t nc = ms->warned_cap ? ms->warned_cap * 2 : 8;
            char **nw = w2l__realloc(ms->warned, nc * sizeof *nw);
            if (!nw) { /* out of memory: warn again next time rather than fail the stream */
                w2l__free(key);
                key = NULL;
            } else {
                ms->warned = nw;
                ms->warned_cap = nc;
            }
        }
        if (key) ms->warned[ms->nwarned++] = key;
        w2l__log(W2L_LOG_WARN, "mysql source: %s.%s column '%s': a TINYINT(1) value other than 0 and 1 is written "
                 "as boolean true (source.tinyint1-as-boolean=true; MySQL's rule: nonzero is TRUE); set it to false "
                 "to keep the numbers (warned once per table and column)", db, table, names[i]);
    }
    memset(coerced, 0, (ncols + 7) / 8);
}

static void warn_tmap(mysql_source *ms, const w2l__bl_tmap *tm, uint8_t *coerced)
{
    int any = 0;
    for (size_t i = 0; i < (tm->ncols + 7) / 8; i++) any |= coerced[i];
    if (!any) return;
    const char **names = w2l__calloc(tm->ncols ? tm->ncols : 1, sizeof *names);
    if (!names) return;
    for (size_t i = 0; i < tm->ncols; i++) names[i] = tm->cols[i].name;
    warn_coerced(ms, tm->db, tm->table, names, tm->ncols, coerced);
    w2l__free(names);
}

static w2l_rc emit_row(mysql_source *ms, w2l_emitter *em, const w2l__bl_tmap *tm, w2l_op op, w2l_error *err)
{
    tmuser *u = tm->user;
    if (!ms->xa_cur && (ms->replaying || in_window(ms, tm->db, tm->table, ms->file, ms->ev_pos))) return W2L_OK;
    if (!ms->xa_cur && ms->skip) {
        ms->skip--;
        ms->txn_emitted++;
        return W2L_OK;
    }
    w2l_change ch;
    ch.db = tm->db;
    ch.table = tm->table;
    ch.schema = u->schema;
    ch.op = op;
    ch.row = u->vals;
    ch.ncols = tm->ncols;
    int all = 1;
    for (size_t i = 0; i < tm->ncols; i++)
        if (!(u->present[i / 8] >> (i % 8) & 1)) all = 0;
    ch.present = all ? NULL : u->present;
    ch.ts_ms = ms->txn_ts_ms;
    if (ms->xa_cur) return xa_add(ms, &ch, err);
    W2L_TRY(w2l_emit_change(em, &ch, err));
    ms->txn_emitted++;
    return W2L_OK;
}

static w2l_rc on_rows(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev, size_t *count, w2l_error *err)
{
    w2l__bl_tmap *tm = ev->tmap;
    if (!tm) return w2l__fail(err, W2L_CORRUPT, "mysql source: rows event for table id %llu without its TABLE_MAP",
                              (unsigned long long)ev->table_id);
    tmuser *u = tm->user;
    if (!u || !u->selected) return W2L_OK;
    if (ev->rows_ncols != tm->ncols)
        return w2l__fail(err, W2L_CORRUPT, "mysql source: rows event for %s.%s has %zu columns, its TABLE_MAP %zu", tm->db,
                         tm->table, ev->rows_ncols, tm->ncols);
    const uint8_t *p = ev->data;
    ms->in_txn = 1;
    while (p < ev->end) {
        w2l__bl_scratch_reset(&ms->scratch);
        w2l_rc rc = w2l__bl_decode_row(tm, ev->bitmap1, &p, ev->end, u->vals, u->present, u->coerced, &ms->scratch,
                                       err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s.%s at %s:%llu: ", tm->db, tm->table, ms->file, (unsigned long long)ms->pos);
            return rc;
        }
        w2l_op op = ev->rows_kind == BL_ROWS_WRITE ? W2L_OP_INSERT
                    : ev->rows_kind == BL_ROWS_DELETE ? W2L_OP_DELETE : W2L_OP_UPDATE_BEFORE;
        W2L_TRY(emit_row(ms, em, tm, op, err));
        if (ev->rows_kind == BL_ROWS_UPDATE) {
            w2l__bl_scratch_reset(&ms->scratch);
            rc = w2l__bl_decode_row(tm, ev->bitmap2, &p, ev->end, u->vals, u->present, u->coerced, &ms->scratch, err);
            if (rc != W2L_OK) {
                w2l__error_prefix(err, "%s.%s: ", tm->db, tm->table);
                return rc;
            }
            W2L_TRY(emit_row(ms, em, tm, W2L_OP_UPDATE_AFTER, err));
        }
        (*count)++;
    }
    warn_tmap(ms, tm, u->coerced);
    return W2L_OK;
}

static int query_is(const char *sql, size_t n, const char *word)
{
    size_t l = strlen(word);
    while (n && (*sql == ' ' || *sql == '\n' || *sql == '\t')) sql++, n--;
    return n >= l && !strncasecmp(sql, word, l) && (n == l || sql[l] == ' ' || sql[l] == ';' || sql[l] == '\n');
}

static w2l_rc commit_txn(mysql_source *ms, w2l_emitter *em, uint64_t log_pos, w2l_error *err)
{
    if (log_pos) ms->pos = log_pos;
    if (ms->txn_has_gtid) {
        int oom = 0;
        w2l__gtid_set(&ms->gtid, &ms->ngtid, &ms->gtid_cap, &ms->txn_gtid, &oom);
        W2L_NOMEM_IF(oom, err);
    }
    ms->in_txn = 0;
    ms->txn_has_gtid = 0;
    ms->txn_standalone = 0;
    ms->txn_emitted = 0;
    ms->skip = 0;
    if (ms->nsegs && pos_cmp(ms->file, ms->pos, ms->segs[ms->nsegs - 1].file, ms->segs[ms->nsegs - 1].pos) >= 0) {
        w2l__log(W2L_LOG_INFO, "mysql source: past the resumed snapshot's position %s:%llu",
                 ms->segs[ms->nsegs - 1].file, (unsigned long long)ms->segs[ms->nsegs - 1].pos);
        ms->nsegs = 0;
    }
    if (ms->replaying) { /* emitted before the restart */
        if (pos_cmp(ms->file, ms->pos, ms->replay_file, ms->replay_pos) >= 0) {
            ms->replaying = 0;
            w2l__log(W2L_LOG_INFO, "mysql source: %zu prepared XA transaction(s) read again; emitting from %s:%llu",
                     ms->nxa, ms->file, (unsigned long long)ms->pos);
        }
        return W2L_OK;
    }
    return emit_commit(ms, em, err);
}

static w2l_rc on_query(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev, size_t *count, w2l_error *err)
{
    const char *sql = ev->sql ? ev->sql : "";
    size_t n = ev->sql_len;
    if (query_is(sql, n, "XA END")) {
        if (ms->xa_cur) {
            w2l__free(ms->xa_cur->key);
            ms->xa_cur->key = xa_key(sql, n, 2);
            W2L_NOMEM_IF(!ms->xa_cur->key, err);
        }
        ms->in_txn = 1;
        return W2L_OK;
    }
    if (query_is(sql, n, "BEGIN") || query_is(sql, n, "XA START")) {
        ms->in_txn = 1;
        return W2L_OK;
    }
    if (query_is(sql, n, "XA COMMIT") || query_is(sql, n, "XA ROLLBACK")) {
        char *key = xa_key(sql, n, 2);
        W2L_NOMEM_IF(!key, err);
        w2l_rc rc = xa_finish(ms, em, key, query_is(sql, n, "XA COMMIT"), ev->log_pos, err);
        w2l__free(key);
        W2L_TRY(rc);
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    }
    if (query_is(sql, n, "COMMIT")) {
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    }
    if (query_is(sql, n, "ROLLBACK")) {
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        return W2L_OK;
    }
    char db[256];
    snprintf(db, sizeof db, "%.*s", (int)(ev->db_len < 255 ? ev->db_len : 255), ev->db ? ev->db : "");
    w2l__ddl_list *l = NULL;
    w2l_error perr;
    w2l_rc rc = w2l__ddl_parse(sql, n, db[0] ? db : NULL, &l, &perr);
    if (rc == W2L_NOMEM) return w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        char *red = w2l__ddl_redact(sql, n);
        w2l__log(W2L_LOG_WARN, "mysql source: statement at %s:%llu not understood, skipped: %.300s (%s)", ms->file,
                 (unsigned long long)ev->log_pos, red ? red : "", perr.msg);
        w2l__free(red);
    } else {
        for (size_t i = 0; rc == W2L_OK && i < l->n; i++) {
            const w2l__ddl_stmt *st = &l->stmts[i];
            const char *tdb = NULL, *tname = NULL;
            int emit = 0;
            switch (st->kind) {
            case W2L_DDL_CREATE_TABLE: case W2L_DDL_CREATE_TABLE_LIKE: case W2L_DDL_CREATE_TABLE_SELECT:
            case W2L_DDL_ALTER_TABLE: case W2L_DDL_TRUNCATE_TABLE:
                tdb = st->table.db, tname = st->table.name;
                emit = table_selected(ms, tdb, tname);
                if (st->kind == W2L_DDL_ALTER_TABLE)
                    for (size_t a = 0; a < st->nalters; a++)
                        if (st->alters[a].kind == W2L_ALTER_RENAME_TABLE)
                            emit |= table_selected(ms, st->alters[a].new_table.db, st->alters[a].new_table.name);
                break;
            case W2L_DDL_DROP_TABLE:
                for (size_t k = 0; k < st->ntables; k++) emit |= table_selected(ms, st->tables[k].db, st->tables[k].name);
                if (st->ntables == 1) tdb = st->tables[0].db, tname = st->tables[0].name;
                break;
            case W2L_DDL_RENAME_TABLE:
                for (size_t k = 0; k < st->nrenames; k++)
                    emit |= table_selected(ms, st->renames[k].from.db, st->renames[k].from.name) ||
                            table_selected(ms, st->renames[k].to.db, st->renames[k].to.name);
                if (st->nrenames == 1) tdb = st->renames[0].to.db, tname = st->renames[0].to.name;
                break;
            case W2L_DDL_CREATE_DATABASE: case W2L_DDL_DROP_DATABASE:
                emit = db_selected(ms, st->database);
                break;
            default: break;
            }
            rc = tt_apply(ms, st, err);
            if (rc == W2L_OK && emit) {
                w2l_ddl d = {0};
                d.db = tdb ? tdb : (db[0] ? db : NULL);
                d.sql = st->text;
                d.sql_len = st->text_len;
                d.table = tname;
                d.ts_ms = (int64_t)ev->ts * 1000;
                ms->in_txn = 1;
                rc = ms->replaying || in_window(ms, d.db, tname, ms->file, ev->log_pos) ? W2L_OK
                                                                                         : w2l_emit_ddl(em, &d, err);
                (*count)++;
            }
        }
        w2l__ddl_list_free(l);
        W2L_TRY(rc);
    }
    if (ms->txn_standalone || !ms->txn_has_gtid) { /* DDL commits on its own */
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
    }
    return W2L_OK;
}

static w2l_rc handle_event(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev, size_t *count, w2l_error *err)
{
    if (ev->ts) atomic_store(&ms->last_event_ms, (int64_t)ev->ts * 1000);
    ms->ev_pos = ev->log_pos;
    switch (ev->kind) {
    case BL_EV_ROTATE:
        if (ev->file_len && ev->file_len < sizeof ms->file) {
            memcpy(ms->file, ev->file, ev->file_len);
            ms->file[ev->file_len] = '\0';
            if (!ms->in_txn) ms->pos = ev->pos;
        }
        return W2L_OK;
    case BL_EV_GTID_LIST:
        for (size_t i = 0; i < ev->ngtids; i++) { /* fills domains we know nothing of (file starts) */
            int known = 0;
            for (size_t k = 0; k < ms->ngtid; k++) known |= ms->gtid[k].domain == ev->gtids[i].domain;
            if (!known) {
                int oom = 0;
                w2l__gtid_set(&ms->gtid, &ms->ngtid, &ms->gtid_cap, &ev->gtids[i], &oom);
                W2L_NOMEM_IF(oom, err);
            }
        }
        return W2L_OK;
    case BL_EV_GTID:
        if (ms->in_txn && ms->txn_emitted && !ms->skip)
            w2l__log(W2L_LOG_WARN, "mysql source: transaction without its end before GTID %u-%u-%llu at %s:%llu",
                     ev->gtid.domain, ev->gtid.server, (unsigned long long)ev->gtid.seq, ms->file,
                     (unsigned long long)ev->log_pos);
        if (ev->gflags & BL_GTID_PREPARED_XA) W2L_TRY(xa_begin(ms, err));
        ms->txn_gtid = ev->gtid;
        ms->txn_has_gtid = 1;
        ms->txn_standalone = (ev->gflags & BL_GTID_STANDALONE) != 0;
        ms->in_txn = 1;
        ms->txn_ts_ms = (int64_t)ev->ts * 1000;
        return W2L_OK;
    case BL_EV_QUERY: return on_query(ms, em, ev, count, err);
    case BL_EV_TABLE_MAP:
        if (!ev->tmap->user) W2L_TRY(prepare_tmap(ms, ev->tmap, err));
        return W2L_OK;
    case BL_EV_ROWS: return on_rows(ms, em, ev, count, err);
    case BL_EV_XID:
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    case BL_EV_XA_PREPARE: /* held until XA COMMIT; the group ends here */
        W2L_TRY(xa_prepared(ms, err));
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    case BL_EV_HEARTBEAT:
        if (!ms->in_txn && ev->file_len && ev->file_len < sizeof ms->file) {
            memcpy(ms->file, ev->file, ev->file_len);
            ms->file[ev->file_len] = '\0';
            if (ev->log_pos) ms->pos = ev->log_pos;
            atomic_store(&ms->caught_up, 1);
        }
        return W2L_OK;
    default:
        if (!ms->in_txn && ev->log_pos && ev->kind != BL_EV_FDE && ev->kind != BL_EV_STOP) ms->pos = ev->log_pos;
        return W2L_OK;
    }
}

static w2l_rc reconnect(mysql_source *ms, w2l_error *err)
{
    int backoff = 250;
    uint64_t emitted = ms->in_txn ? ms->txn_emitted : 0;
    for (int attempt = 0;; attempt++) {
        w2l_error e2;
        w2l_error_clear(&e2);
        /* the position of the last commit: a transaction cut short is read again */
        w2l_rc rc = start_stream(ms, &e2);
        if (rc == W2L_OK) {
            ms->reconnects++;
            xa_drop_cur(ms); /* a PREPARE group cut short is read again */
            ms->in_txn = 0;
            ms->txn_has_gtid = 0;
            ms->txn_emitted = 0;
            ms->skip = emitted;
            return W2L_OK;
        }
        if (rc != W2L_UNAVAILABLE || attempt >= 12) {
            *err = e2;
            w2l__error_prefix(err, "mysql source: reconnect failed after %d attempts: ", attempt + 1);
            return rc;
        }
        w2l__log(W2L_LOG_WARN, "mysql source: %s; retrying in %d ms", e2.msg, backoff);
        sleep_ms(backoff);
        backoff = backoff * 2 > 4000 ? 4000 : backoff * 2;
    }
}

static w2l_rc binlog_next(mysql_source *ms, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    int64_t deadline = w2l__mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
    size_t count = 0;
    if (!ms->bl) W2L_TRY(start_stream(ms, err));
    for (;;) {
        w2l__bl_event ev;
        w2l_rc rc = w2l__bl_fetch(ms->bl, &ev, err);
        if (rc == W2L_DONE) return count ? W2L_OK : W2L_DONE;
        if (rc == W2L_UNAVAILABLE) {
            w2l__log(W2L_LOG_WARN, "%s; reconnecting", err->msg);
            W2L_TRY(reconnect(ms, err));
            continue;
        }
        W2L_TRY(rc);
        if (ev.kind != BL_EV_HEARTBEAT) atomic_store(&ms->caught_up, 0);
        W2L_TRY(handle_event(ms, em, &ev, &count, err));
        if (!ms->in_txn) {
            if (ms->until_caught_up && caught_up(ms)) return count ? W2L_OK : W2L_DONE;
            if (ev.kind == BL_EV_HEARTBEAT) return count ? W2L_OK : W2L_AGAIN;
            if (count && (count >= 4096 || w2l__mono_ns() / 1000000 >= deadline)) return W2L_OK;
        } else if (count >= 65536 && w2l__mono_ns() / 1000000 >= deadline) {
            return W2L_OK; /* a huge transaction spans several calls */
        }
    }
}

/* ---- snapshot ---- */

static void snap_tables_free(mysql_source *ms)
{
    for (size_t i = 0; i < ms->nst; i++) {
        snap_table *t = &ms->st[i];
        w2l__free(t->db);
        w2l__free(t->name);
        for (size_t k = 0; k < t->ncols; k++) w2l__free((char *)t->cols[k].name);
        w2l__free(t->cols);
        w2l__free(t->pk);
        w2l_schema_unref(t->schema);
    }
    w2l__free(ms->st);
    ms->st = NULL;
    ms->nst = 0;
}

/* The selected tables and their columns, from the tracked definitions. */
static w2l_rc snap_plan(mysql_source *ms, w2l_error *err)
{
    ms->st = w2l__calloc(ms->ntt ? ms->ntt : 1, sizeof *ms->st);
    W2L_NOMEM_IF(!ms->st, err);
    /* sorted by db, name for a stable order across restarts */
    size_t *ord = w2l__malloc((ms->ntt ? ms->ntt : 1) * sizeof *ord);
    W2L_NOMEM_IF(!ord, err);
    size_t no = 0;
    for (size_t i = 0; i < ms->ntt; i++)
        if (table_selected(ms, ms->tt[i].db, ms->tt[i].name)) ord[no++] = i;
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0; j--) {
            const ttable *a = &ms->tt[ord[j - 1]], *b = &ms->tt[ord[j]];
            int c = strcmp(a->db, b->db);
            if (c < 0 || (c == 0 && strcmp(a->name, b->name) <= 0)) break;
            size_t x = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = x;
        }
    w2l_rc rc = W2L_OK;
    for (size_t oi = 0; rc == W2L_OK && oi < no; oi++) {
        ttable *t = &ms->tt[ord[oi]];
        snap_table *s = &ms->st[ms->nst++];
        s->db = w2l__strdup(t->db);
        s->name = w2l__strdup(t->name);
        s->cols = w2l__calloc(t->ncols ? t->ncols : 1, sizeof *s->cols);
        s->pk = w2l__calloc(t->npk ? t->npk : 1, sizeof *s->pk);
        const char **names = w2l__calloc(t->ncols ? t->ncols : 1, sizeof *names);
        w2l_type *types = w2l__calloc(t->ncols ? t->ncols : 1, sizeof *types);
        int *nul = w2l__calloc(t->ncols ? t->ncols : 1, sizeof *nul);
        if (!s->db || !s->name || !s->cols || !s->pk || !names || !types || !nul)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        s->ncols = t->ncols;
        for (size_t k = 0; rc == W2L_OK && k < t->ncols; k++) {
            w2l__snap_col *c = &s->cols[k];
            c->name = w2l__strdup(t->cols[k].name);
            if (!c->name) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            rc = w2l__mysql_type_map_text(t->cols[k].type, strlen(t->cols[k].type), &ms->topts, c->name, NULL, &c->ice,
                                          &c->mt, err);
            c->nullable = t->cols[k].nullable;
            names[k] = c->name;
            types[k] = c->ice;
            nul[k] = c->nullable;
        }
        for (size_t k = 0; rc == W2L_OK && k < t->npk; k++) {
            long ci = tt_col(t, t->pk[k]);
            if (ci >= 0) s->pk[s->npk++] = (size_t)ci;
        }
        if (rc == W2L_OK) rc = build_schema(t, names, types, nul, t->ncols, s->pk, s->npk, &s->schema, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
        w2l__free(names);
        w2l__free(types);
        w2l__free(nul);
    }
    w2l__free(ord);
    return rc;
}

static w2l_rc snap_begin(mysql_source *ms, int fresh, w2l_error *err)
{
    W2L_TRY(w2l__my_connect(&ms->params, &ms->snap_conn, err));
    W2L_TRY(w2l__my_exec(ms->snap_conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", err));
    W2L_TRY(w2l__my_exec(ms->snap_conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err));
    /* An XA transaction prepared now is not in the snapshot and its PREPARE group lies
     * before the snapshot's binlog position: its XA COMMIT would come without its
     * changes. Wait (up to 10 s) for prepared ones to end, else fail naming one. */
    for (int attempt = 0; fresh; attempt++) {
        w2l__my_res *r;
        W2L_TRY(w2l__my_query(ms->snap_conn, "XA RECOVER", 0, &r, err));
        char **row;
        unsigned long *len;
        char xid[300] = "";
        int k = w2l__my_row(r, &row, &len, err);
        if (k > 0) snprintf(xid, sizeof xid, "%.*s", (int)(len[3] < 256 ? len[3] : 256), row[3] ? row[3] : "");
        w2l__my_res_free(r);
        if (k < 0) return err->code;
        if (k == 0) break;
        if (attempt >= 20)
            return w2l__fail(err, W2L_SOURCE, "mysql source %s: XA transaction '%s' (and maybe others) is prepared, "
                             "not committed: a snapshot now would miss its changes; XA COMMIT or XA ROLLBACK it "
                             "(XA RECOVER lists them), then start again", w2l__my_name(ms->snap_conn), xid);
        if (attempt == 0)
            w2l__log(W2L_LOG_WARN, "mysql source: XA transaction '%s' is prepared; waiting for it to end before the "
                     "snapshot", xid);
        W2L_TRY(w2l__my_exec(ms->snap_conn, "ROLLBACK", err));
        sleep_ms(500);
        W2L_TRY(w2l__my_exec(ms->snap_conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err));
    }
    char file[256], pos[32], gtid[1024];
    int null;
    W2L_TRY(w2l__my_value(ms->snap_conn, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE "
                          "VARIABLE_NAME = 'BINLOG_SNAPSHOT_FILE'", file, sizeof file, &null, err));
    W2L_TRY(w2l__my_value(ms->snap_conn, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE "
                          "VARIABLE_NAME = 'BINLOG_SNAPSHOT_POSITION'", pos, sizeof pos, &null, err));
    if (null || !file[0])
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: no binlog snapshot position (is log_bin on?)",
                         w2l__my_name(ms->snap_conn));
    char q[1024], esc[600];
    w2l__my_escape(ms->snap_conn, esc, file, strlen(file));
    snprintf(q, sizeof q, "SELECT BINLOG_GTID_POS('%s', %s)", esc, pos);
    W2L_TRY(w2l__my_value(ms->snap_conn, q, gtid, sizeof gtid, &null, err));
    if (fresh) {
        snprintf(ms->snap_file, sizeof ms->snap_file, "%s", file);
        ms->snap_pos = strtoull(pos, NULL, 10);
        snprintf(ms->snap_gtid, sizeof ms->snap_gtid, "%s", null ? "" : gtid);
    } else if (ms->st_idx < ms->nst) { /* tables from the current one on are read at this position */
        if (ms->nsegs == MAX_WSEGS)
            return w2l__fail(err, W2L_SOURCE, "mysql source: the snapshot was resumed %d times before it reached the "
                             "binlog; start it again (new warehouse or startup=initial without state)", MAX_WSEGS);
        wseg *w = &ms->segs[ms->nsegs++];
        snprintf(w->db, sizeof w->db, "%s", ms->st[ms->st_idx].db);
        snprintf(w->name, sizeof w->name, "%s", ms->st[ms->st_idx].name);
        snprintf(w->file, sizeof w->file, "%s", file);
        w->pos = strtoull(pos, NULL, 10);
        if (ms->snap_key) { /* the table in progress: emptied and read again whole */
            ms->snap_key = NULL;
            ms->snap_key_len = NULL;
            ms->snap_truncate = 1;
        }
    }
    if (fresh) {
        /* the definitions read at open may be older than the snapshot (a DDL in between):
         * read them again now, in the snapshot's session, and plan the snapshot from them,
         * so its SELECTs name the columns the snapshot has */
        while (ms->ntt) tt_remove(ms, &ms->tt[ms->ntt - 1]);
        W2L_TRY(load_definitions(ms, ms->snap_conn, err));
        snap_tables_free(ms);
        W2L_TRY(snap_plan(ms, err));
    }
    w2l__log(W2L_LOG_INFO, "mysql source: snapshot at %s:%s (GTID %s)%s", file, pos, null ? "" : gtid,
             fresh ? "" : ", resuming an earlier snapshot");
    return W2L_OK;
}

static size_t snap_position(const mysql_source *ms, char *buf, size_t size, const snap_table *t)
{
    size_t n = (size_t)snprintf(buf, size, "{\"file\":\"%s\",\"pos\":%llu,\"gtid\":\"%s\"", ms->snap_file,
                                (unsigned long long)ms->snap_pos, ms->snap_gtid);
    if (t && n < size) {
        n += (size_t)snprintf(buf + n, size - n, ",\"snapshot\":{\"index\":%zu,\"table\":\"%s.%s\",\"key\":[", ms->st_idx,
                              t->db, t->name);
        for (size_t k = 0; ms->snap_key && k < t->npk && n < size; k++) {
            n += (size_t)snprintf(buf + n, size - n, "%s\"", k ? "," : "");
            for (size_t j = 0; j < ms->snap_key_len[k] && n + 3 < size; j++)
                n += (size_t)snprintf(buf + n, size - n, "%02x", (unsigned char)ms->snap_key[k][j]);
            if (n < size) n += (size_t)snprintf(buf + n, size - n, "\"");
        }
        if (n < size) n += (size_t)snprintf(buf + n, size - n, "]}");
    }
    if (n < size) n += format_window(ms, buf + n, size - n);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "}");
    return n;
}

typedef struct snap_ctx {
    mysql_source *ms;
    w2l_emitter *em;
    const snap_table *t;
} snap_ctx;

static w2l_rc snap_row(void *ctx, const w2l_value *vals, w2l_error *err)
{
    snap_ctx *c = ctx;
    w2l_change ch = {0};
    ch.db = c->t->db;
    ch.table = c->t->name;
    ch.schema = c->t->schema;
    ch.op = W2L_OP_INSERT;
    ch.row = vals;
    ch.ncols = c->t->ncols;
    return w2l_emit_change(c->em, &ch, err);
}

/* Emits one chunk of the current table as a transaction. */
static w2l_rc snapshot_next(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    if (!ms->snap_conn) W2L_TRY(snap_begin(ms, 0, err));
    while (ms->st_idx < ms->nst) {
        snap_table *t = &ms->st[ms->st_idx];
        snap_ctx c = {ms, em, t};
        if (ms->snap_truncate) { /* rows of it emitted before the restart are at an older position */
            char *q = w2l__asprintf("TRUNCATE TABLE `%s`.`%s`", t->db, t->name);
            W2L_NOMEM_IF(!q, err);
            w2l_ddl d = {0};
            d.db = t->db;
            d.table = t->name;
            d.sql = q;
            d.sql_len = strlen(q);
            w2l_rc trc = w2l_emit_ddl(em, &d, err);
            w2l__free(q);
            W2L_TRY(trc);
            ms->snap_truncate = 0;
            w2l__log(W2L_LOG_INFO, "mysql source: snapshot of %s.%s resumed: the table is read again from its start",
                     t->db, t->name);
        }
        char **lk;
        size_t *ll, nrows;
        w2l__arena *a = &ms->snap_arena[ms->snap_arena_cur ^ 1];
        w2l__arena_release(a);
        w2l__arena_init(a, 4096);
        size_t limit = t->npk ? ms->chunk_rows : 0;
        uint8_t *coerced = w2l__arena_alloc(a, t->ncols / 8 + 1);
        W2L_NOMEM_IF(!coerced, err);
        memset(coerced, 0, t->ncols / 8 + 1);
        w2l_rc rc = w2l__snap_chunk(ms->snap_conn, t->db, t->name, t->cols, t->ncols, t->pk, t->npk, ms->snap_key,
                                    ms->snap_key_len, limit, snap_row, &c, &lk, &ll, a, &nrows, coerced, err);
        if (rc == W2L_OK) {
            const char **names = w2l__arena_alloc(a, (t->ncols ? t->ncols : 1) * sizeof *names);
            W2L_NOMEM_IF(!names, err);
            for (size_t k = 0; k < t->ncols; k++) names[k] = t->cols[k].name;
            warn_coerced(ms, t->db, t->name, names, t->ncols, coerced);
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
            return rc;
        }
        int table_done = !t->npk || nrows < limit;
        const snap_table *pt = t;
        if (table_done) {
            ms->st_idx++;
            ms->snap_key = NULL;
            ms->snap_key_len = NULL;
            pt = ms->st_idx < ms->nst ? &ms->st[ms->st_idx] : NULL;
        } else {
            ms->snap_arena_cur ^= 1;
            ms->snap_key = lk;
            ms->snap_key_len = ll;
        }
        if (nrows == 0 && pt) continue; /* nothing emitted: no transaction */
        char buf[8192];
        size_t n = snap_position(ms, buf, sizeof buf, pt);
        if (n >= sizeof buf) return w2l__fail(err, W2L_ERROR, "snapshot of %s.%s: key too long for a position", t->db, t->name);
        W2L_TRY(w2l_emit_commit(em, buf, n, err));
        if (nrows) return W2L_OK;
    }
    /* snapshot done: hand over to the binlog at the snapshot's position */
    w2l__my_close(ms->snap_conn);
    ms->snap_conn = NULL;
    snprintf(ms->file, sizeof ms->file, "%s", ms->snap_file);
    ms->pos = ms->snap_pos;
    W2L_TRY(set_gtid_text(ms, ms->snap_gtid, err));
    ms->state = ST_BINLOG;
    w2l__log(W2L_LOG_INFO, "mysql source: snapshot of %zu tables done; streaming the binlog from %s:%llu", ms->nst,
             ms->file, (unsigned long long)ms->pos);
    return W2L_OK;
}

/* ---- plug-in methods ---- */

static w2l_rc ms_next(w2l_source *self, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    mysql_source *ms = (mysql_source *)self;
    w2l_error local;
    if (!err) err = &local;
    if (ms->failed) {
        *err = ms->ferr;
        return ms->ferr.code;
    }
    w2l_rc rc;
    if (ms->state == ST_DONE) return W2L_DONE;
    if (ms->state == ST_SNAPSHOT) rc = snapshot_next(ms, em, err);
    else rc = binlog_next(ms, em, timeout_ms, err);
    if (rc == W2L_DONE) ms->state = ST_DONE;
    if (rc != W2L_OK && rc != W2L_AGAIN && rc != W2L_DONE) {
        ms->failed = 1;
        ms->ferr = *err;
    }
    return rc;
}

static w2l_rc read_master_status(w2l__my *c, char *file, size_t fsize, uint64_t *pos, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c, "SHOW MASTER STATUS", 0, &r, err));
    char **row;
    unsigned long *len;
    int k = w2l__my_row(r, &row, &len, err);
    if (k > 0) {
        snprintf(file, fsize, "%s", row[0]);
        *pos = strtoull(row[1], NULL, 10);
    }
    w2l__my_res_free(r);
    if (k < 0) return err->code;
    if (k == 0) return w2l__fail(err, W2L_CONFIG, "mysql source %s: the server has no binlog (set log_bin)", w2l__my_name(c));
    return W2L_OK;
}

static w2l_rc check_server(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    char v[64];
    int null;
    W2L_TRY(w2l__my_value(c, "SELECT @@global.binlog_format", v, sizeof v, &null, err));
    if (null || strcasecmp(v, "ROW"))
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: binlog_format is %s; ROW is required (SET GLOBAL "
                         "binlog_format=ROW)", w2l__my_name(c), null ? "unset" : v);
    W2L_TRY(w2l__my_value(c, "SELECT @@global.binlog_row_metadata", v, sizeof v, &null, err));
    if (null || strcasecmp(v, "FULL"))
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: binlog_row_metadata is %s; FULL is required (SET GLOBAL "
                         "binlog_row_metadata=FULL)", w2l__my_name(c), null ? "unset" : v);
    W2L_TRY(w2l__my_value(c, "SELECT @@version", v, sizeof v, &null, err));
    if (!strstr(v, "MariaDB"))
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: server %s is not MariaDB; MySQL sources are not supported yet",
                         w2l__my_name(c), v);
    /* another replica or CDC stream with our id shows at the dump (error 4052, named) */
    W2L_TRY(w2l__my_value(c, "SELECT @@global.server_id", v, sizeof v, &null, err));
    if (!null && strtoull(v, NULL, 10) == ms->server_id)
        return w2l__fail(err, W2L_CONFIG, "mysql source %s: server-id %u is the server's own id; choose a unique one",
                         w2l__my_name(c), ms->server_id);
    return W2L_OK;
}

static w2l_rc parse_restored(mysql_source *ms, const char *restored, w2l_error *err)
{
    w2l__json *j = NULL;
    w2l_rc rc = w2l__json_parse(restored, strlen(restored), &j, err);
    if (rc == W2L_NOMEM) return rc;
    const char *file = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "file")) : NULL;
    const char *gtid = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "gtid")) : NULL;
    int64_t pos = -1;
    if (rc != W2L_OK || !file || w2l__json_int64(w2l__json_get(j, "pos"), &pos) || pos < 0 || strlen(file) >= sizeof ms->file) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_CORRUPT, "mysql source: restored position is not {\"file\":..,\"pos\":..,\"gtid\":..}");
    }
    snprintf(ms->file, sizeof ms->file, "%s", file);
    ms->pos = (uint64_t)pos;
    rc = set_gtid_text(ms, gtid ? gtid : "", err);
    w2l__json *win = w2l__json_get(j, "window");
    for (w2l__json *w = win ? w2l__json_first(win) : NULL; rc == W2L_OK && w; w = w2l__json_next(w)) {
        const char *wd = w2l__json_str(w2l__json_get(w, "db")), *wn = w2l__json_str(w2l__json_get(w, "name"));
        const char *wf = w2l__json_str(w2l__json_get(w, "file"));
        int64_t wp = -1;
        if (!wd || !wn || !wf || w2l__json_int64(w2l__json_get(w, "pos"), &wp) || wp < 0 || ms->nsegs == MAX_WSEGS ||
            strlen(wd) >= 256 || strlen(wn) >= 256 || strlen(wf) >= 256) {
            w2l__json_free(j);
            return w2l__fail(err, W2L_CORRUPT, "mysql source: restored position has a bad \"window\" member");
        }
        wseg *sg = &ms->segs[ms->nsegs++];
        snprintf(sg->db, sizeof sg->db, "%s", wd);
        snprintf(sg->name, sizeof sg->name, "%s", wn);
        snprintf(sg->file, sizeof sg->file, "%s", wf);
        sg->pos = (uint64_t)wp;
    }
    w2l__json *xa = w2l__json_get(j, "xa");
    if (rc == W2L_OK && xa) { /* XA prepared, not committed: read again from its PREPARE group */
        const char *xf = w2l__json_str(w2l__json_get(xa, "file"));
        const char *xg = w2l__json_str(w2l__json_get(xa, "gtid"));
        int64_t xp = -1;
        if (!xf || w2l__json_int64(w2l__json_get(xa, "pos"), &xp) || xp < 0 || strlen(xf) >= sizeof ms->file) {
            w2l__json_free(j);
            return w2l__fail(err, W2L_CORRUPT, "mysql source: restored position has a bad \"xa\" member");
        }
        snprintf(ms->replay_file, sizeof ms->replay_file, "%s", ms->file);
        ms->replay_pos = ms->pos;
        ms->replaying = 1;
        snprintf(ms->file, sizeof ms->file, "%s", xf);
        ms->pos = (uint64_t)xp;
        rc = set_gtid_text(ms, xg ? xg : "", err);
        w2l__log(W2L_LOG_INFO, "mysql source: an XA transaction was prepared, not committed, at the checkpoint: "
                 "reading from its PREPARE at %s:%llu, emitting after %s:%llu", ms->file, (unsigned long long)ms->pos,
                 ms->replay_file, (unsigned long long)ms->replay_pos);
    }
    w2l__json *snap = w2l__json_get(j, "snapshot");
    if (rc == W2L_OK && snap) {
        snprintf(ms->snap_file, sizeof ms->snap_file, "%s", file);
        ms->snap_pos = (uint64_t)pos;
        snprintf(ms->snap_gtid, sizeof ms->snap_gtid, "%s", gtid ? gtid : "");
        ms->state = ST_SNAPSHOT;
        const char *tname = w2l__json_str(w2l__json_get(snap, "table"));
        int64_t idx = 0;
        w2l__json_int64(w2l__json_get(snap, "index"), &idx);
        /* the table list is read again in open(); find the table by name */
        ms->snap_key = NULL;
        w2l__json *keys = w2l__json_get(snap, "key");
        size_t nk = keys ? w2l__json_size(keys) : 0;
        w2l__arena *a = &ms->snap_arena[ms->snap_arena_cur];
        w2l__arena_init(a, 4096);
        char **lk = nk ? w2l__arena_alloc(a, nk * sizeof *lk) : NULL;
        size_t *ll = nk ? w2l__arena_alloc(a, nk * sizeof *ll) : NULL;
        size_t i = 0;
        for (w2l__json *k = keys ? w2l__json_first(keys) : NULL; k && lk && ll; k = w2l__json_next(k), i++) {
            const char *h = w2l__json_str(k);
            size_t hl = h ? strlen(h) : 0;
            lk[i] = w2l__arena_alloc(a, hl / 2 + 1);
            if (!lk[i]) break;
            for (size_t b = 0; b + 1 < hl + 1 && b / 2 < hl / 2; b += 2) lk[i][b / 2] = (char)(hexval(h[b]) << 4 | hexval(h[b + 1]));
            lk[i][hl / 2] = 0;
            ll[i] = hl / 2;
        }
        if (nk && (!lk || !ll || i < nk)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (nk) ms->snap_key = lk, ms->snap_key_len = ll;
        ms->st_idx = (size_t)idx;
        /* stash the table name in ferr.msg temporarily: resolved after snap_plan */
        snprintf(ms->ferr.msg, sizeof ms->ferr.msg, "%s", tname ? tname : "");
    }
    w2l__json_free(j);
    return rc;
}

static void ms_close(w2l_source *self)
{
    mysql_source *ms = (mysql_source *)self;
    w2l__bl_close(ms->bl);
    ms->bl = NULL;
    w2l__my_close(ms->conn);
    w2l__my_close(ms->snap_conn);
    ms->conn = ms->snap_conn = NULL;
    w2l__bl_scratch_free(&ms->scratch);
    xa_drop_cur(ms);
    for (size_t i = 0; i < ms->nxa; i++) xa_free(ms->xa[i]);
    w2l__free(ms->xa);
    ms->xa = NULL;
    ms->nxa = ms->xacap = 0;
    snap_tables_free(ms);
    free_strv(ms->warned, ms->nwarned);
    ms->warned = NULL;
    ms->nwarned = ms->warned_cap = 0;
    for (size_t i = 0; i < ms->ntt; i++) ttable_clear(&ms->tt[i]);
    w2l__free(ms->tt);
    ms->tt = NULL;
    ms->ntt = 0;
    w2l__arena_release(&ms->snap_arena[0]);
    w2l__arena_release(&ms->snap_arena[1]);
    w2l__free(ms->gtid);
    ms->gtid = NULL;
    free_strv(ms->dbs, ms->ndbs);
    ms->dbs = NULL;
    if (ms->have_regex) regfree(&ms->re);
    ms->have_regex = 0;
    w2l__free(ms->startup);
    w2l__free(ms->params.host);
    w2l__free(ms->params.user);
    if (ms->params.pass) {
        memset(ms->params.pass, 0, strlen(ms->params.pass));
        w2l__free(ms->params.pass);
    }
    memset(&ms->params, 0, sizeof ms->params);
}

static w2l_rc ms_open_inner(mysql_source *ms, const w2l_conf *conf, const char *uri, const char *restored,
                            w2l_error *err)
{
    ms->chunk_rows = SNAP_CHUNK_DEFAULT;
    ms->params.connect_timeout_s = 10;
    ms->xa_limit = XA_LIMIT_DEFAULT;
    ms->params.retries = 2;
    ms->topts.tinyint1_as_boolean = 0; /* the conf default: TINYINT(1) holds 5 too */
    int64_t v;
    if (conf) {
        if (w2l_conf_get_int(conf, "until-caught-up", &v, NULL) == W2L_OK) ms->until_caught_up = v != 0;
        if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK) ms->topts.tinyint1_as_boolean = v != 0;
        if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK) ms->topts.time_as_string = v != 0;
        if (w2l_conf_get_int(conf, "source.snapshot-chunk-rows", &v, NULL) == W2L_OK && v > 0) ms->chunk_rows = (size_t)v;
        if (w2l_conf_get_int(conf, "source.connect-timeout", &v, NULL) == W2L_OK && v > 0)
            ms->params.connect_timeout_s = (unsigned)((v + 999) / 1000);
        if (w2l_conf_get_int(conf, "source.xa-buffer-bytes", &v, NULL) == W2L_OK && v > 0) ms->xa_limit = (size_t)v;
    }
    W2L_TRY(parse_uri(ms, conf, uri, err));
    w2l__my *c;
    W2L_TRY(w2l__my_connect(&ms->params, &c, err));
    w2l_rc rc = check_server(ms, c, err);
    if (rc == W2L_OK) rc = load_definitions(ms, c, err);
    if (rc == W2L_OK && ms->until_caught_up) rc = read_master_status(c, ms->end_file, sizeof ms->end_file, &ms->end_pos, err);
    ms->state = ST_BINLOG;
    if (rc == W2L_OK && restored) {
        rc = parse_restored(ms, restored, err);
    } else if (rc == W2L_OK) {
        const char *s = ms->startup;
        if (!strcmp(s, "initial")) {
            ms->state = ST_SNAPSHOT;
        } else if (!strcmp(s, "latest")) {
            rc = read_master_status(c, ms->file, sizeof ms->file, &ms->pos, err);
            char g[1024];
            int null;
            if (rc == W2L_OK) rc = w2l__my_value(c, "SELECT @@global.gtid_binlog_pos", g, sizeof g, &null, err);
            if (rc == W2L_OK) rc = set_gtid_text(ms, null ? "" : g, err);
        } else if (!strcmp(s, "earliest")) {
            w2l__my_res *r;
            rc = w2l__my_query(c, "SHOW BINARY LOGS", 0, &r, err);
            if (rc == W2L_OK) {
                char **row;
                unsigned long *len;
                int k = w2l__my_row(r, &row, &len, err);
                if (k > 0) snprintf(ms->file, sizeof ms->file, "%s", row[0]);
                else if (k == 0) rc = w2l__fail(err, W2L_CONFIG, "mysql source: the server has no binlog files");
                else rc = err->code;
                w2l__my_res_free(r);
            }
            ms->pos = 4;
        } else if (!strncmp(s, "gtid:", 5)) {
            rc = set_gtid_text(ms, s + 5, err);
            if (rc == W2L_OK && !ms->ngtid) rc = w2l__fail(err, W2L_CONFIG, "mysql source: startup gtid: needs a GTID state");
        } else { /* file:NAME:POS */
            const char *name = s + 5, *colon = strrchr(name, ':');
            char *e = NULL;
            unsigned long long pos = colon ? strtoull(colon + 1, &e, 10) : 0;
            if (!colon || colon == name || !e || *e || pos < 4 || (size_t)(colon - name) >= sizeof ms->file)
                rc = w2l__fail(err, W2L_CONFIG, "mysql source: startup '%.100s' is not file:NAME:POS (POS >= 4)", s);
            else {
                memcpy(ms->file, name, (size_t)(colon - name));
                ms->file[colon - name] = '\0';
                ms->pos = pos;
                /* the GTID state there, so later restarts can resume by GTID */
                char q[1024], esc[600], g[1024];
                int null;
                w2l__my_escape(c, esc, ms->file, strlen(ms->file));
                snprintf(q, sizeof q, "SELECT BINLOG_GTID_POS('%s', %llu)", esc, pos);
                if (w2l__my_value(c, q, g, sizeof g, &null, err) == W2L_OK && !null && *g) rc = set_gtid_text(ms, g, err);
            }
        }
    }
    w2l__my_close(c);
    W2L_TRY(rc);
    if (ms->state == ST_SNAPSHOT) {
        W2L_TRY(snap_plan(ms, err));
        if (restored) { /* find the table we stopped in by name */
            char want[600];
            snprintf(want, sizeof want, "%s", ms->ferr.msg);
            ms->ferr.msg[0] = '\0';
            size_t found = ms->nst;
            for (size_t i = 0; i < ms->nst; i++) {
                char full[600];
                snprintf(full, sizeof full, "%s.%s", ms->st[i].db, ms->st[i].name);
                if (!strcmp(full, want)) found = i;
            }
            if (found == ms->nst) { /* the table is gone: continue with the one at that index */
                ms->snap_key = NULL;
                if (ms->st_idx > ms->nst) ms->st_idx = ms->nst;
            } else ms->st_idx = found;
            W2L_TRY(snap_begin(ms, 0, err));
        } else {
            W2L_TRY(snap_begin(ms, 1, err));
        }
    }
    return W2L_OK;
}

static w2l_rc ms_open(const w2l_source_methods *m, const w2l_conf *conf, const char *uri, const char *restored,
                      w2l_source *self, w2l_error *err)
{
    (void)m;
    mysql_source *ms = (mysql_source *)self;
    w2l_error local;
    if (!err) err = &local;
    w2l_rc rc = ms_open_inner(ms, conf, uri, restored, err);
    if (rc != W2L_OK) ms_close(self);
    return rc;
}

static w2l_rc ms_checkpoint_complete(w2l_source *self, uint64_t ckpt, w2l_error *err)
{
    (void)self, (void)ckpt, (void)err;
    return W2L_OK; /* the server purges its binlog by its own policy */
}

static int64_t ms_lag_ms(w2l_source *self)
{
    mysql_source *ms = (mysql_source *)self;
    if (atomic_load(&ms->caught_up)) return 0;
    int64_t t = atomic_load(&ms->last_event_ms);
    if (!t) return 0;
    int64_t lag = w2l__now_ms() - t;
    return lag > 0 ? lag : 0;
}

const w2l_source_methods w2l__source_mysql = {
    W2L_SOURCE_METHODS_V1, "mysql", sizeof(mysql_source), NULL,
    ms_open, ms_next, ms_checkpoint_complete, ms_lag_ms, ms_close,
};
