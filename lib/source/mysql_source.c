/*
 * The "mysql" source plug-in (w2l-design(7) sections 1-4 and 7): a whole MariaDB or MySQL
 * (8.0 and later) database: its rows through a chunked snapshot read beside the binlog
 * (mysql_snap_driver.c), its changes from the binlog, from where the snapshot began (or the
 * last checkpoint left off). The flavour comes from @@version
 * (check_server) and switches SQL spellings (SHOW BINARY LOG STATUS on MySQL 8.2+), the
 * position's GTID form, the snapshot's lock and how transactions are delimited
 * (mysql_stream.c); the decoder is the same, told by w2l__bl_opts.mysql.
 *
 *   mysql://USER:PASS@HOST:PORT/?server-id=N&databases=a,b&tables=REGEX&startup=MODE
 *
 * URI parameters win over the conf keys source.server-id, source.databases,
 * source.tables (POSIX extended regex over "db.table", anchored) and source.startup:
 *   initial       (default) every selected table's rows (the snapshot), with the binlog
 *   earliest      the oldest binlog still on the server, no snapshot
 *   latest        from the current end of the binlog
 *   gtid:STATE    after the GTID state d-s-n[,d-s-n...]
 *   file:NAME:POS from that binlog file and position
 * A restored position (a sealed checkpoint) always wins over the mode.
 *
 * Positions (JSON text, saved at checkpoints, which are placed only at our commits):
 *   {"file":"binlog.000003","pos":1234,"gtid":"0-1-55,1-1-7"}            MariaDB
 *   {"file":"binlog.000003","pos":1234,"gtid_set":"3e11fa47-...:1-57"}  MySQL
 * file:pos is the position after the last whole transaction emitted, gtid the server's
 * GTID state (every domain) after it, gtid_set MySQL's executed GTID set after it (left
 * out while not known: gtid_mode not ON, or a start at file:pos until the next file's
 * PREVIOUS_GTIDS). A restart resumes by GTID when the state is known
 * (it survives server restarts and file renames), else by file:pos. While the snapshot
 * runs, the position also holds its progress, "chunks" (mysql_snap_plan.c): the next
 * table, the done ones after it, the ranges left of the tables being read, the re-reads.
 *
 * Positions of an older version: "snapshot":{"table":"db.t","index":3,"key":[hex...]}
 * (the tables before db.t read, db.t read up to that key, one consistent snapshot at the
 * position) is read as "chunks" (db.t read on after its key, the tables after it
 * pending); "window":[{"db","name","file","pos"}] still skips the binlog events up to pos
 * of the tables from db.name on, which a resumed old snapshot read at pos.
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
 * XA transactions (mysql_position.c) are held in memory from their PREPARE
 * group until XA COMMIT, which emits them as one transaction; XA ROLLBACK drops them.
 * While one is pending the position carries "xa":{file,pos,gtid} of the oldest PREPARE
 * group: a restart reads from there and emits nothing up to file:pos.
 *
 * Limits: an XA COMMIT whose PREPARE lies before the start position (startup=latest,
 * gtid:, file:) fails the job with a clear error rather than lose its changes; the
 * initial snapshot waits up to 10 s for prepared XA transactions to end (XA RECOVER),
 * then fails naming one. MySQL's snapshot takes FLUSH TABLES WITH READ LOCK for a few
 * statements (source.snapshot-lock, mysql_snap_driver.c). A connection
 * lost inside a transaction resumes from the last commit and skips the changes of that
 * transaction already emitted; this assumes the server replays the same transaction,
 * which holds for a binlog (it is append-only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "mysql_source_int.h"
#include "../json/json.h"

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
    w2l__emitter_set_snapshot(em, ms->snap.active && ms->snap.initial);
    if (ms->snap.active) rc = w2l__ms_snap_next(ms, em, timeout_ms, err);
    else rc = w2l__ms_binlog_next(ms, em, timeout_ms, err);
    if (!ms->snap.active || !ms->snap.initial) w2l__emitter_set_snapshot(em, 0);
    if (rc == W2L_DONE) ms->state = ST_DONE;
    if (rc != W2L_OK && rc != W2L_AGAIN && rc != W2L_DONE) {
        ms->failed = 1;
        ms->ferr = *err;
    }
    return rc;
}

/* The binlog's current end: SHOW BINARY LOG STATUS on MySQL 8.2+ (8.4 removed SHOW MASTER
 * STATUS), SHOW MASTER STATUS elsewhere. */
w2l_rc w2l__ms_read_binlog_status(const mysql_source *ms, w2l__my *c, char *file, size_t fsize,
                                  uint64_t *pos, w2l_error *err)
{
    w2l__my_res *r;
    const char *sql = ms->server.mysql && ms->server.version >= 80200 ? "SHOW BINARY LOG STATUS"
                                                                      : "SHOW MASTER STATUS";
    W2L_TRY(w2l__my_query(c, sql, 0, &r, err));
    char **row;
    unsigned long *len;
    int k = w2l__my_row(r, &row, &len, err);
    if (k > 0) {
        snprintf(file, fsize, "%s", row[0]);
        *pos = strtoull(row[1], NULL, 10);
    }
    w2l__my_res_free(r);
    if (k < 0) return err->code;
    if (k == 0)
        return w2l__fail(err, W2L_SOURCE, "mysql source %s: the server has no binlog (set log_bin)",
                         w2l__my_name(c));
    return W2L_OK;
}

/* MySQL: gtid_executed (or gtid_purged) when gtid_mode=ON ("" the empty set, known),
 * else not known. */
static w2l_rc read_mysql_gtids(mysql_source *ms, w2l__my *c, const char *var, w2l_error *err)
{
    if (!ms->server.mysql) return W2L_OK;
    if (!ms->server.gtid_mode) return w2l__ms_set_mygtids_text(ms, NULL, err);
    char q[64];
    snprintf(q, sizeof q, "SELECT @@global.%s", var);
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c, q, 0, &r, err));
    char **row;
    unsigned long *len;
    int k = w2l__my_row(r, &row, &len, err);
    char *g = k > 0 ? w2l__strndup(row[0] ? row[0] : "", row[0] ? len[0] : 0) : NULL;
    w2l__my_res_free(r);
    if (k < 0) return err->code;
    W2L_NOMEM_IF(k > 0 && !g, err);
    w2l_rc rc = w2l__ms_set_mygtids_text(ms, g ? g : "", err);
    w2l__free(g);
    return rc;
}

/* Which server this is: MariaDB ("MariaDB" in its version) or MySQL 8.0 and later. */
static w2l_rc detect_flavour(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    char v[128], comment[128];
    int null;
    W2L_TRY(w2l__my_value(c, "SELECT @@version", v, sizeof v, &null, err));
    W2L_TRY(w2l__my_value(c, "SELECT @@version_comment", comment, sizeof comment, &null, err));
    unsigned major = 0, minor = 0, patch = 0;
    sscanf(v, "%u.%u.%u", &major, &minor, &patch);
    ms->server.version = major * 10000 + minor * 100 + patch;
    ms->server.mysql = !strstr(v, "MariaDB") && !strstr(comment, "MariaDB");
    if (ms->server.mysql && major < 8)
        return w2l__fail(err, W2L_SOURCE,
                         "mysql source %s: MySQL %s is not supported; MySQL 8.0 or later is "
                         "required (or MariaDB)",
                         w2l__my_name(c), v);
    w2l__log(W2L_LOG_INFO, "mysql source %s: %s %s (%s)", w2l__my_name(c),
             ms->server.mysql ? "MySQL" : "MariaDB", v, comment);
    return W2L_OK;
}

static w2l_rc check_server(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    char v[64];
    int null;
    W2L_TRY(detect_flavour(ms, c, err));
    /* log_bin, binlog_format, binlog_row_image, binlog_row_metadata: all named at once */
    W2L_TRY(w2l__ms_check_settings(ms, c, err));
    if (ms->server.mysql) {
        W2L_TRY(w2l__my_value(c, "SELECT @@global.gtid_mode", v, sizeof v, &null, err));
        ms->server.gtid_mode = !null && !strcasecmp(v, "ON");
        if (!ms->server.gtid_mode)
            w2l__log(W2L_LOG_INFO,
                     "mysql source %s: gtid_mode is %s: positions are binlog file:pos only "
                     "(gtid_mode=ON makes them GTID sets, which survive a failover)",
                     w2l__my_name(c), null ? "unset" : v);
    }
    if (ms->cfg.snapshot_lock == SNAP_LOCK_AUTO)
        ms->cfg.snapshot_lock = ms->server.mysql ? SNAP_LOCK_FTWRL : SNAP_LOCK_NONE;
    if (ms->server.mysql && ms->cfg.snapshot_lock == SNAP_LOCK_NONE)
        return w2l__fail(err, W2L_CONFIG,
                         "mysql source %s: source.snapshot-lock=none needs MariaDB (its "
                         "consistent snapshot reports its binlog position); MySQL needs ftwrl",
                         w2l__my_name(c));
    /* another replica or CDC stream with our id shows at the dump (error 4052, named) */
    W2L_TRY(w2l__my_value(c, "SELECT @@global.server_id", v, sizeof v, &null, err));
    if (!null && strtoull(v, NULL, 10) == ms->cfg.server_id)
        return w2l__fail(
            err, W2L_CONFIG,
            "mysql source %s: server-id %u is the server's own id; choose a unique one",
            w2l__my_name(c), ms->cfg.server_id);
    return W2L_OK;
}

/* An older version's "snapshot":{"index","table":"db.name","key":[hex...]} as "chunks": the
 * table in progress is read on after its key (from its start with a TRUNCATE when it has
 * no key), the tables after it pending. */
static w2l_rc old_snapshot(const w2l__json *old, w2l_buf *b, w2l_error *err)
{
    const char *tname = w2l__json_str(w2l__json_get(old, "table"));
    const char *dot = tname ? strchr(tname, '.') : NULL;
    if (!dot)
        return w2l__fail(err, W2L_CORRUPT,
                         "mysql source: restored position has a bad \"snapshot\" member");
    char db[256];
    snprintf(db, sizeof db, "%.*s", (int)(dot - tname), tname);
    W2L_TRY(w2l__buf_printf(b, err, "{\"next\":["));
    W2L_TRY(w2l__json_buf_string(b, db, err));
    W2L_TRY(w2l__buf_printf(b, err, ","));
    W2L_TRY(w2l__json_buf_string(b, dot + 1, err));
    W2L_TRY(w2l__buf_printf(b, err, "],\"old\":1,\"active\":[{\"t\":["));
    W2L_TRY(w2l__json_buf_string(b, db, err));
    W2L_TRY(w2l__buf_printf(b, err, ","));
    W2L_TRY(w2l__json_buf_string(b, dot + 1, err));
    W2L_TRY(w2l__buf_printf(b, err, "],\"rows\":1,\"r\":[[null,null,"));
    const w2l__json *keys = w2l__json_get(old, "key");
    size_t nk = keys ? w2l__json_size(keys) : 0;
    if (!nk) W2L_TRY(w2l__buf_printf(b, err, "null"));
    size_t i = 0;
    for (w2l__json *k = keys ? w2l__json_first(keys) : NULL; k; k = w2l__json_next(k), i++) {
        const char *h = w2l__json_str(k);
        W2L_TRY(w2l__buf_printf(b, err, "%s", i ? "," : "["));
        W2L_TRY(w2l__json_buf_string(b, h ? h : "", err));
    }
    if (nk) W2L_TRY(w2l__buf_printf(b, err, "]"));
    return w2l__buf_printf(b, err, "]]}]}");
}

static w2l_rc parse_restored(mysql_source *ms, const char *restored, w2l_error *err)
{
    w2l__json *j = NULL;
    w2l_rc rc = w2l__json_parse(restored, strlen(restored), &j, err);
    if (rc == W2L_NOMEM) return rc;
    const char *file = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "file")) : NULL;
    const char *gtid = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "gtid")) : NULL;
    const char *gset = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "gtid_set")) : NULL;
    int64_t pos = -1;
    if (rc != W2L_OK || !file || w2l__json_int64(w2l__json_get(j, "pos"), &pos) || pos < 0 ||
        strlen(file) >= sizeof ms->at.file) {
        w2l__json_free(j);
        return w2l__fail(
            err, W2L_CORRUPT,
            "mysql source: restored position is not {\"file\":..,\"pos\":..,\"gtid\":..}");
    }
    if ((ms->server.mysql && gtid && *gtid) || (!ms->server.mysql && gset && *gset)) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_SOURCE,
                         "mysql source: the restored position is a %s position (%s), the server "
                         "is %s: was the source pointed at another server?",
                         gset ? "MySQL" : "MariaDB", gset ? "gtid_set" : "gtid",
                         ms->server.mysql ? "MySQL" : "MariaDB");
    }
    if (ms->server.mysql) gtid = gset; /* MySQL positions hold the executed set */
    snprintf(ms->at.file, sizeof ms->at.file, "%s", file);
    ms->at.pos = (uint64_t)pos;
    rc = w2l__ms_set_gtid_text(ms, gtid, err); /* MySQL: absent = not known */
    w2l__json *win = w2l__json_get(j, "window");
    for (w2l__json *w = win ? w2l__json_first(win) : NULL; rc == W2L_OK && w;
         w = w2l__json_next(w)) {
        const char *wd = w2l__json_str(w2l__json_get(w, "db")),
                   *wn = w2l__json_str(w2l__json_get(w, "name"));
        const char *wf = w2l__json_str(w2l__json_get(w, "file"));
        int64_t wp = -1;
        if (!wd || !wn || !wf || w2l__json_int64(w2l__json_get(w, "pos"), &wp) || wp < 0 ||
            ms->snap.nsegs == MAX_WSEGS || strlen(wd) >= 256 || strlen(wn) >= 256 ||
            strlen(wf) >= 256) {
            w2l__json_free(j);
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: restored position has a bad \"window\" member");
        }
        wseg *sg = &ms->snap.segs[ms->snap.nsegs++];
        snprintf(sg->db, sizeof sg->db, "%s", wd);
        snprintf(sg->name, sizeof sg->name, "%s", wn);
        snprintf(sg->file, sizeof sg->file, "%s", wf);
        sg->pos = (uint64_t)wp;
    }
    w2l__json *xa = w2l__json_get(j, "xa");
    if (rc == W2L_OK && xa) { /* XA prepared, not committed: read again from its PREPARE group */
        const char *xf = w2l__json_str(w2l__json_get(xa, "file"));
        const char *xg = w2l__json_str(w2l__json_get(xa, ms->server.mysql ? "gtid_set" : "gtid"));
        int64_t xp = -1;
        if (!xf || w2l__json_int64(w2l__json_get(xa, "pos"), &xp) || xp < 0 ||
            strlen(xf) >= sizeof ms->at.file) {
            w2l__json_free(j);
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: restored position has a bad \"xa\" member");
        }
        snprintf(ms->xa.replay_file, sizeof ms->xa.replay_file, "%s", ms->at.file);
        ms->xa.replay_pos = ms->at.pos;
        ms->xa.replaying = 1;
        snprintf(ms->at.file, sizeof ms->at.file, "%s", xf);
        ms->at.pos = (uint64_t)xp;
        rc = w2l__ms_set_gtid_text(ms, xg, err);
        w2l__log(W2L_LOG_INFO,
                 "mysql source: an XA transaction was prepared, not committed, at the checkpoint: "
                 "reading from its PREPARE at %s:%llu, emitting after %s:%llu",
                 ms->at.file, (unsigned long long)ms->at.pos, ms->xa.replay_file,
                 (unsigned long long)ms->xa.replay_pos);
    }
    /* the snapshot's progress: "chunks"; an older version's "snapshot" (one table in
     * progress, read up to a key, the tables after it pending) is kept as "chunks" */
    w2l__json *snap = w2l__json_get(j, "chunks");
    w2l__json *old = w2l__json_get(j, "snapshot");
    if (rc == W2L_OK && (snap || old)) {
        w2l_buf cb = {0};
        if (!snap) rc = old_snapshot(old, &cb, err);
        if (rc == W2L_OK && !snap) {
            rc = w2l__json_parse((const char *)cb.data, cb.len, &ms->restored_doc, err);
            ms->restored_chunks = ms->restored_doc;
        } else if (rc == W2L_OK) { /* kept whole until the plan is made */
            ms->restored_doc = j;
            ms->restored_chunks = snap;
            j = NULL;
        }
        w2l_buf_release(&cb);
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
    ms->conn = NULL;
    w2l__ms_snap_close(ms);
    w2l__json_free(ms->restored_doc);
    ms->restored_doc = ms->restored_chunks = NULL;
    w2l__ms_free_strv(ms->new_tables, ms->new_tables_n);
    ms->new_tables = NULL;
    ms->new_tables_n = 0;
    w2l__bl_scratch_free(&ms->scratch);
    w2l__ms_xa_drop_cur(ms);
    for (size_t i = 0; i < ms->xa.n; i++) w2l__ms_xa_free(ms->xa.pending[i]);
    w2l__free(ms->xa.pending);
    ms->xa.pending = NULL;
    ms->xa.n = ms->xa.cap = 0;
    w2l__ms_snap_tables_free(ms);
    w2l__ms_free_strv(ms->warned.names, ms->warned.n);
    ms->warned.names = NULL;
    ms->warned.n = ms->warned.cap = 0;
    w2l__ms_free_strv(ms->quarantined.names, ms->quarantined.n);
    ms->quarantined.names = NULL;
    ms->quarantined.n = 0;
    w2l_conf_free(ms->conf);
    ms->conf = NULL;
    for (size_t i = 0; i < ms->defs.n; i++) w2l__ms_ttable_clear(&ms->defs.tab[i]);
    w2l__free(ms->defs.tab);
    ms->defs.tab = NULL;
    ms->defs.n = 0;
    w2l__free(ms->at.gtid);
    ms->at.gtid = NULL;
    w2l__mygtids_free(ms->at.mygtids);
    ms->at.mygtids = NULL;
    w2l__ms_cfg_free(ms);
}

static w2l_rc ms_open_inner(mysql_source *ms, const w2l_conf *conf, const char *uri,
                            const char *restored, w2l_error *err)
{
    ms->cfg.chunk_rows = SNAP_CHUNK_DEFAULT;
    ms->cfg.params.connect_timeout_s = 10;
    ms->xa.limit = XA_LIMIT_DEFAULT;
    ms->cfg.params.retries = 2;
    ms->cfg.params.what = "mysql source";
    ms->cfg.params.fail_code = W2L_SOURCE;
    ms->cfg.topts.tinyint1_as_boolean = 0; /* the conf default: TINYINT(1) holds 5 too */
    int64_t v;
    if (conf) {
        if (w2l_conf_get_int(conf, "until-caught-up", &v, NULL) == W2L_OK)
            ms->cfg.until_caught_up = v != 0;
        ms->cfg.clock_skew_ms = 1000;
        if (w2l_conf_get_int(conf, "source.clock-skew", &v, NULL) == W2L_OK && v >= 0)
            ms->cfg.clock_skew_ms = v;
        if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK)
            ms->cfg.topts.tinyint1_as_boolean = v != 0;
        if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK)
            ms->cfg.topts.time_as_string = v != 0;
        if (w2l_conf_get_int(conf, "source.snapshot-chunk-rows", &v, NULL) == W2L_OK && v > 0)
            ms->cfg.chunk_rows = (size_t)v;
        if (w2l_conf_get_int(conf, "source.snapshot-parallelism", &v, NULL) == W2L_OK && v > 0)
            ms->cfg.snap_parallelism = v;
        if (w2l_conf_get_int(conf, "source.snapshot-max-rows-per-second", &v, NULL) == W2L_OK &&
            v > 0)
            ms->cfg.snap_rate = v;
        if (w2l_conf_get_int(conf, "source.snapshot-max-threads-running", &v, NULL) == W2L_OK &&
            v > 0)
            ms->cfg.snap_max_running = v;
        if (w2l_conf_get_int(conf, "source.connect-timeout", &v, NULL) == W2L_OK && v > 0)
            ms->cfg.params.connect_timeout_s = (unsigned)((v + 999) / 1000);
        if (w2l_conf_get_int(conf, "source.xa-buffer-bytes", &v, NULL) == W2L_OK && v > 0)
            ms->xa.limit = (size_t)v;
    }
    ms->conf = conf ? w2l_conf_dup(conf) : NULL;
    W2L_NOMEM_IF(conf && !ms->conf, err);
    W2L_TRY(w2l__ms_parse_uri(ms, conf, uri, err));
    w2l__my *c;
    W2L_TRY(w2l__my_connect(&ms->cfg.params, &c, err));
    w2l_rc rc = check_server(ms, c, err);
    if (rc == W2L_OK) rc = w2l__ms_load_definitions(ms, c, err);
    if (rc == W2L_OK) rc = w2l__ms_filter_json(ms, conf, err);
    if (rc == W2L_OK && restored) rc = w2l__ms_check_new_tables(ms, conf, c, restored, err);
    if (rc == W2L_OK) rc = w2l__ms_check_selection(ms, c, err);
    if (rc == W2L_OK && ms->cfg.until_caught_up)
        rc = w2l__ms_read_binlog_status(ms, c, ms->end.file, sizeof ms->end.file, &ms->end.pos,
                                        err);
    if (rc == W2L_OK && ms->server.mysql) {
        ms->at.mygtids = w2l__mygtids_new();
        if (!ms->at.mygtids) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    ms->state = ST_BINLOG;
    int fresh = 0;
    if (rc == W2L_OK && restored) {
        rc = parse_restored(ms, restored, err);
    } else if (rc == W2L_OK) {
        const char *s = ms->cfg.startup;
        if (!strcmp(s, "initial")) {
            fresh = 1;
        } else if (!strcmp(s, "latest")) {
            rc = w2l__ms_read_binlog_status(ms, c, ms->at.file, sizeof ms->at.file, &ms->at.pos,
                                            err);
            char g[1024];
            int null;
            if (rc == W2L_OK && ms->server.mysql)
                rc = read_mysql_gtids(ms, c, "gtid_executed", err);
            else if (rc == W2L_OK)
                rc = w2l__my_value(c, "SELECT @@global.gtid_binlog_pos", g, sizeof g, &null, err);
            if (rc == W2L_OK && !ms->server.mysql)
                rc = w2l__ms_set_gtid_text(ms, null ? "" : g, err);
        } else if (!strcmp(s, "earliest")) {
            w2l__my_res *r;
            rc = w2l__my_query(c, "SHOW BINARY LOGS", 0, &r, err);
            if (rc == W2L_OK) {
                char **row;
                unsigned long *len;
                int k = w2l__my_row(r, &row, &len, err);
                if (k > 0) snprintf(ms->at.file, sizeof ms->at.file, "%s", row[0]);
                else if (k == 0)
                    rc = w2l__fail(err, W2L_SOURCE, "mysql source: the server has no binlog files");
                else rc = err->code;
                w2l__my_res_free(r);
            }
            ms->at.pos = 4;
            /* MySQL: what was purged lies before the oldest file */
            if (rc == W2L_OK) rc = read_mysql_gtids(ms, c, "gtid_purged", err);
        } else if (!strncmp(s, "gtid:", 5)) {
            if (ms->server.mysql && !ms->server.gtid_mode)
                rc = w2l__fail(err, W2L_SOURCE,
                               "mysql source: startup gtid: needs gtid_mode=ON on a MySQL server");
            if (rc == W2L_OK) rc = w2l__ms_set_gtid_text(ms, s + 5, err);
            if (rc == W2L_OK &&
                (ms->server.mysql ? w2l__mygtids_empty(ms->at.mygtids) : !ms->at.ngtid))
                rc = w2l__fail(err, W2L_CONFIG,
                               "mysql source: startup gtid: needs a GTID %s",
                               ms->server.mysql ? "set (UUID:N-M,...)" : "state (D-S-N,...)");
        } else { /* file:NAME:POS */
            const char *name = s + 5, *colon = strrchr(name, ':');
            char *e = NULL;
            unsigned long long pos = colon ? strtoull(colon + 1, &e, 10) : 0;
            if (!colon || colon == name || !e || *e || pos < 4 ||
                (size_t)(colon - name) >= sizeof ms->at.file)
                rc = w2l__fail(err, W2L_CONFIG,
                               "mysql source: startup '%.100s' is not file:NAME:POS (POS >= 4)", s);
            else {
                memcpy(ms->at.file, name, (size_t)(colon - name));
                ms->at.file[colon - name] = '\0';
                ms->at.pos = pos;
                /* the GTID state there, so later restarts can resume by GTID (MySQL has no
                 * such function: its set is learnt at the next file's PREVIOUS_GTIDS) */
                char q[1024], esc[600], g[1024];
                int null;
                w2l__my_escape(c, esc, ms->at.file, strlen(ms->at.file));
                snprintf(q, sizeof q, "SELECT BINLOG_GTID_POS('%s', %llu)", esc, pos);
                if (!ms->server.mysql && w2l__my_value(c, q, g, sizeof g, &null, err) == W2L_OK &&
                    !null && *g)
                    rc = w2l__ms_set_gtid_text(ms, g, err);
            }
        }
    }
    w2l__my_close(c);
    W2L_TRY(rc);
    if (fresh) return w2l__ms_snap_begin(ms, err);
    if (ms->restored_chunks || ms->new_tables) {
        W2L_TRY(w2l__ms_snap_plan(ms, err));
        if (ms->restored_chunks) W2L_TRY(w2l__ms_snap_restore(ms, ms->restored_chunks, err));
        else for (size_t i = 0; i < ms->snap.ntables; i++) ms->snap.tables[i]->state = SNAP_DONE;
        for (size_t i = 0; i < ms->new_tables_n; i++) {
            const char *n = ms->new_tables[i];
            W2L_TRY(w2l__ms_snap_add(ms, n, n + strlen(n) + 1, 0, err));
        }
        w2l__json_free(ms->restored_doc);
        ms->restored_doc = ms->restored_chunks = NULL;
        ms->snap.started_ms = w2l__now_ms();
        if (ms->snap.active)
            w2l__log(W2L_LOG_INFO, "mysql source: the snapshot goes on: %llu table(s) left",
                     (unsigned long long)ms->snap.tables_total);
    }
    return W2L_OK;
}

static w2l_rc ms_open(const w2l_source_methods *m, const w2l_conf *conf, const char *uri,
                      const char *restored, w2l_source *self, w2l_error *err)
{
    (void)m;
    mysql_source *ms = (mysql_source *)self;
    w2l_error local;
    if (!err) err = &local;
    w2l_rc rc = ms_open_inner(ms, conf, uri, restored, err);
    if (rc != W2L_OK) ms_close(self);
    return rc;
}

/* Nothing to release: a replica connection holds no binlog on the server, which purges its
 * binlog by its own policy (expire_logs_days); a restart needs the binlog from the restored
 * checkpoint's position on, so the source never asks the server to purge. */
static w2l_rc ms_checkpoint_complete(w2l_source *self, uint64_t ckpt, w2l_error *err)
{
    (void)self, (void)ckpt, (void)err;
    return W2L_OK;
}

static int64_t ms_lag_ms(w2l_source *self)
{
    mysql_source *ms = (mysql_source *)self;
    if (atomic_load(&ms->disconnected)) return -1;
    if (atomic_load(&ms->caught_up)) return 0;
    int64_t t = atomic_load(&ms->last_event_ms);
    if (!t) return -1; /* no event yet, no heartbeat: not known */
    int64_t lag = w2l__now_ms() - t;
    return lag > 0 ? lag : 0;
}

/* w2l_pipeline_resync(): the table joins the snapshot's plan as a re-read. */
static w2l_rc ms_resync(w2l_source *self, const char *db, const char *table, w2l_error *err)
{
    mysql_source *ms = (mysql_source *)self;
    if (ms->failed) {
        *err = ms->ferr;
        return ms->ferr.code;
    }
    if (!w2l__ms_table_selected(ms, db, table))
        return w2l__fail(err, W2L_NOTFOUND,
                         "mysql source: %s.%s is not a table this job reads (databases=, tables=, "
                         "include, exclude)",
                         db, table);
    if (!w2l__ms_tt_find(ms, db, table))
        return w2l__fail(err, W2L_NOTFOUND, "mysql source: no table %s.%s on the server", db,
                         table);
    return w2l__ms_snap_add(ms, db, table, 1, err);
}

const w2l_source_methods w2l__source_mysql = {
    .version = W2L_SOURCE_METHODS_V3,
    .name = "mysql",
    .size = sizeof(mysql_source),
    .open = ms_open,
    .next = ms_next,
    .checkpoint_complete = ms_checkpoint_complete,
    .lag_ms = ms_lag_ms,
    .close = ms_close,
    .resync = ms_resync,
};
