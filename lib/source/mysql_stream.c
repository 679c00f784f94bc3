/*
 * The "mysql" source's binlog stream: events to changes, transactions, DDL statements,
 * reconnects and heartbeats.
 *
 * Transactions, MariaDB: GTID (flagged standalone for DDL, PREPARED_XA for an XA PREPARE
 * group), then BEGIN, TABLE_MAP/ROWS..., XID or QUERY "COMMIT"; a standalone group ends
 * after its QUERY. MySQL: GTID or ANONYMOUS_GTID (no flags), then either one QUERY that is
 * not BEGIN (DDL, which ends there) or BEGIN / XA START, TABLE_MAP/ROWS..., XID, QUERY
 * "COMMIT", XA_PREPARE (after XA END) or QUERY "XA COMMIT ... ONE PHASE". The GTID of a
 * MySQL transaction joins the executed set when it ends; ANONYMOUS_GTID adds nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "mysql_source_int.h"

/* ---- binlog streaming ---- */

static w2l_rc start_stream(mysql_source *ms, w2l_error *err)
{
    w2l__bl_close(ms->bl);
    ms->bl = NULL;
    w2l__my_close(ms->conn);
    ms->conn = NULL;
    w2l__my_params p = ms->cfg.params;
    p.read_timeout_s = 10;
    W2L_TRY(w2l__my_connect(&p, &ms->conn, err));
    char g[1024];
    w2l__gtid_format(ms->at.gtid, ms->at.ngtid, g, sizeof g);
    w2l__bl_opts o = {0};
    o.server_id = ms->cfg.server_id;
    o.heartbeat_ms = HEARTBEAT_MS;
    o.mysql = ms->server.mysql;
    /* MySQL: by the executed set while it is known, not empty and gtid_mode=ON (it
     * survives a failover and file renames), else by file:pos, as MariaDB by its GTID
     * state. A known empty set resumes by file:pos: a GTID dump of the empty set would
     * send the server's binlog from its start, anonymous transactions of the time before
     * gtid_mode=ON too (the position names the file and offset they lie before). */
    int by_set = ms->server.mysql && ms->server.gtid_mode && ms->at.mygtids_known &&
                 !w2l__mygtids_empty(ms->at.mygtids);
    char *set = by_set ? w2l__mygtids_format(ms->at.mygtids) : NULL;
    if (by_set && !set) return w2l__fail(err, W2L_NOMEM, "out of memory");
    if (set) o.mysql_gtids = set;
    else if (!ms->server.mysql && ms->at.ngtid) o.gtid = g;
    else {
        o.file = ms->at.file;
        o.pos = ms->at.pos;
    }
    w2l_rc rc = w2l__bl_open(ms->conn, &o, &ms->bl, err);
    w2l__free(set);
    return rc;
}

static int caught_up(const mysql_source *ms)
{
    if (ms->snap.active) return 0; /* tables are still being read */
    if (!ms->end.file[0]) return 0;
    int c = strcmp(ms->at.file, ms->end.file);
    return c > 0 || (c == 0 && ms->at.pos >= ms->end.pos);
}

/* One warning per table and column whose TINYINT(1) value other than 0/1 was written as
 * boolean true (source.tinyint1-as-boolean), for the life of the source. coerced is the
 * decoders' bitmap over ncols columns; it is cleared. */
void w2l__ms_warn_coerced(mysql_source *ms, const char *db, const char *table,
                          const char *const *names, size_t ncols, uint8_t *coerced)
{
    for (size_t i = 0; i < ncols; i++) {
        if (!(coerced[i / 8] >> (i % 8) & 1)) continue;
        char *key = w2l__asprintf("%s.%s.%s", db, table, names[i]);
        int seen = !key;
        for (size_t k = 0; key && k < ms->warned.n && !seen; k++)
            seen = !strcmp(ms->warned.names[k], key);
        if (seen) {
            w2l__free(key);
            continue;
        }
        if (ms->warned.n == ms->warned.cap) {
            size_t nc = ms->warned.cap ? ms->warned.cap * 2 : 8;
            char **nw = w2l__realloc(ms->warned.names, nc * sizeof *nw);
            if (!nw) { /* out of memory: warn again next time rather than fail the stream */
                w2l__free(key);
                key = NULL;
            } else {
                ms->warned.names = nw;
                ms->warned.cap = nc;
            }
        }
        if (key) ms->warned.names[ms->warned.n++] = key;
        w2l__log(
            W2L_LOG_WARN,
            "mysql source: %s.%s column '%s': a TINYINT(1) value other than 0 and 1 is written "
            "as boolean true (source.tinyint1-as-boolean=true; MySQL's rule: nonzero is TRUE); set "
            "it to false "
            "to keep the numbers (warned once per table and column)",
            db, table, names[i]);
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
    w2l__ms_warn_coerced(ms, tm->db, tm->table, names, tm->ncols, coerced);
    w2l__free(names);
}

/* Whether db.table was set aside by partial_image. */
static int quarantined(const mysql_source *ms, const char *db, const char *table)
{
    for (size_t i = 0; i < ms->quarantined.n; i++) {
        const char *q = ms->quarantined.names[i];
        size_t dl = strlen(db);
        if (!strncmp(q, db, dl) && q[dl] == '.' && !strcmp(q + dl + 1, table)) return 1;
    }
    return 0;
}

/* A statement that drops or replaces a table set aside here ends its quarantine (the
 * pipeline's DDL handler does the same on its side): the new table's rows flow. */
static void release_quarantined(mysql_source *ms, const w2l__ddl_stmt *st)
{
    for (size_t i = ms->quarantined.n; i-- > 0;) {
        char *q = ms->quarantined.names[i], *dot = strchr(q, '.');
        if (!dot) continue;
        *dot = '\0';
        int ends = w2l__ddl_ends_table(st, q, dot + 1);
        *dot = '.';
        if (!ends) continue;
        w2l__free(q);
        memmove(&ms->quarantined.names[i], &ms->quarantined.names[i + 1],
                (ms->quarantined.n - i - 1) * sizeof *ms->quarantined.names);
        ms->quarantined.n--;
    }
}

static w2l_rc partial_image(mysql_source *ms, w2l_emitter *em, const w2l__bl_tmap *tm, w2l_op op,
                            const char *missing, w2l_error *err)
{
    char fq[600];
    const char *pol = NULL;
    snprintf(fq, sizeof fq, "%s.%s", tm->db, tm->table);
    if (ms->conf) w2l_conf_get_for_table(ms->conf, fq, "ddl.policy", &pol, NULL);
    int quarantine = pol && !strcmp(pol, "quarantine") && !ms->xa.cur;
    char why[1400];
    snprintf(why, sizeof why,
             "mysql source: %s.%s at %s:%llu: an %s row image without column '%s': the server "
             "wrote it with binlog_row_image=MINIMAL or NOBLOB, which leave columns out: run "
             "SET GLOBAL binlog_row_image=FULL and put binlog_row_image=FULL under %s in my.cnf "
             "(the images already written stay partial: %s%s.%s%sthe table comes back when it "
             "is dropped and created anew in the source, or sync it into a new warehouse; "
             "w2l-run(1), QUARANTINE)",
             tm->db, tm->table, ms->at.file, (unsigned long long)ms->ev_pos,
             op == W2L_OP_INSERT ? "INSERT" : "UPDATE", missing,
             ms->server.mysql ? "[mysqld]" : "[mariadbd]", quarantine ? "" : "set table.",
             quarantine ? "" : tm->db, quarantine ? "" : tm->table,
             quarantine ? "" : ".ddl.policy=quarantine to go on without it, then ");
    if (!quarantine) return w2l__fail(err, W2L_SOURCE, "%s", why);
    char *name = w2l__strdup(fq);
    char **nv = name ? w2l__realloc(ms->quarantined.names,
                                    (ms->quarantined.n + 1) * sizeof *nv)
                     : NULL;
    if (!nv) {
        w2l__free(name);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    ms->quarantined.names = nv;
    nv[ms->quarantined.n++] = name;
    w2l__log(W2L_LOG_ERROR, "%s; table %s QUARANTINED (ddl.policy=quarantine): its rows are "
                            "dropped from here on, the other tables go on",
             why, fq);
    return w2l_emit_quarantine(em, tm->db, tm->table, why, 1, err);
}

/* A table the snapshot reads whole later: its events are dropped (cached per table map
 * until the plan changes). */
static int hidden(mysql_source *ms, tmuser *u, const w2l__bl_tmap *tm)
{
    if (u->snap_epoch != ms->snap.epoch + 1) {
        u->snap_hidden = w2l__ms_snap_hides(ms, tm->db, tm->table, 0);
        u->snap_epoch = ms->snap.epoch + 1;
    }
    return u->snap_hidden;
}

static w2l_rc emit_row(mysql_source *ms, w2l_emitter *em, const w2l__bl_tmap *tm, w2l_op op,
                       w2l_error *err)
{
    tmuser *u = tm->user;
    if (!ms->xa.cur &&
        (ms->xa.replaying || w2l__ms_in_window(ms, tm->db, tm->table, ms->at.file, ms->ev_pos) ||
         (ms->snap.active && hidden(ms, u, tm))))
        return W2L_OK;
    if (!ms->xa.cur && ms->txn.skip) {
        ms->txn.skip--;
        ms->txn.emitted++;
        return W2L_OK;
    }
    if (ms->quarantined.n && quarantined(ms, tm->db, tm->table))
        return w2l_emit_quarantine(em, tm->db, tm->table, NULL, 1, err); /* counted, dropped */
    w2l_change ch;
    ch.db = tm->db;
    ch.table = tm->table;
    ch.schema = u->schema;
    ch.op = op;
    ch.row = u->vals;
    ch.ncols = tm->ncols;
    int all = 1;
    size_t missing = 0;
    for (size_t i = 0; i < tm->ncols; i++)
        if (!(u->present[i / 8] >> (i % 8) & 1)) {
            if (all) missing = i;
            all = 0;
        }
    /* an insert or update-after image that leaves columns out (binlog_row_image=MINIMAL or
     * NOBLOB on the server) cannot become a lake row; deletes need only the key. With
     * ddl.policy=quarantine the table is set aside (the others go on), else the source
     * fails; either way naming the setting. */
    if (!all && (op == W2L_OP_INSERT || op == W2L_OP_UPDATE_AFTER))
        return partial_image(ms, em, tm, op, tm->cols[missing].name, err);
    ch.present = all ? NULL : u->present;
    ch.ts_ms = ms->txn.ts_ms;
    if (ms->xa.cur) return w2l__ms_xa_add(ms, &ch, err);
    W2L_TRY(w2l_emit_change(em, &ch, err));
    ms->txn.emitted++;
    return W2L_OK;
}

static w2l_rc on_rows(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev, size_t *count,
                      w2l_error *err)
{
    w2l__bl_tmap *tm = ev->tmap;
    if (!tm)
        return w2l__fail(err, W2L_CORRUPT,
                         "mysql source: rows event for table id %llu without its TABLE_MAP",
                         (unsigned long long)ev->table_id);
    tmuser *u = tm->user;
    if (!u || !u->selected) return W2L_OK;
    if (ev->rows_ncols != tm->ncols)
        return w2l__fail(err, W2L_CORRUPT,
                         "mysql source: rows event for %s.%s has %zu columns, its TABLE_MAP %zu",
                         tm->db, tm->table, ev->rows_ncols, tm->ncols);
    const uint8_t *p = ev->data;
    ms->txn.open = 1;
    while (p < ev->end) {
        const uint8_t *row = p;
        w2l__bl_scratch_reset(&ms->scratch);
        w2l_rc rc = w2l__bl_decode_image(ev, 0, &p, u->vals, u->present, u->coerced,
                                         &ms->scratch, err);
        if (rc == W2L_OK && p == row) /* no column present: the loop would never end */
            rc = w2l__fail(err, W2L_CORRUPT, "rows event: a row image of no bytes");
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s.%s at %s:%llu: ", tm->db, tm->table, ms->at.file,
                              (unsigned long long)ms->at.pos);
            return rc;
        }
        w2l_op op = ev->rows_kind == BL_ROWS_WRITE ? W2L_OP_INSERT
                    : ev->rows_kind == BL_ROWS_DELETE ? W2L_OP_DELETE : W2L_OP_UPDATE_BEFORE;
        W2L_TRY(emit_row(ms, em, tm, op, err));
        if (ev->rows_kind == BL_ROWS_UPDATE) {
            /* a partial JSON update's diffs apply to its before image, still in scratch */
            if (!ev->partial_json) w2l__bl_scratch_reset(&ms->scratch);
            rc = w2l__bl_decode_image(ev, 1, &p, u->vals, u->present, u->coerced, &ms->scratch,
                                      err);
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
    return n >= l && !strncasecmp(sql, word, l) &&
           (n == l || sql[l] == ' ' || sql[l] == ';' || sql[l] == '\n');
}

static w2l_rc commit_txn_pos(mysql_source *ms, w2l_emitter *em, uint64_t log_pos,
                             w2l_error *err)
{
    if (log_pos) ms->at.pos = log_pos;
    if (ms->txn.has_gtid) {
        int oom = 0;
        w2l__gtid_set(&ms->at.gtid, &ms->at.ngtid, &ms->at.gtid_cap, &ms->txn.gtid, &oom);
        W2L_NOMEM_IF(oom, err);
    }
    if (ms->txn.has_mygtid)
        W2L_TRY(w2l__mygtids_add(ms->at.mygtids, ms->txn.sid, ms->txn.tag, ms->txn.tag_len,
                                 ms->txn.gno, err));
    ms->txn.open = 0;
    ms->txn.has_gtid = 0;
    ms->txn.has_mygtid = 0;
    ms->txn.standalone = 0;
    ms->txn.emitted = 0;
    ms->txn.skip = 0;
    if (ms->snap.nsegs &&
        w2l__ms_pos_cmp(ms->at.file, ms->at.pos, ms->snap.segs[ms->snap.nsegs - 1].file,
                        ms->snap.segs[ms->snap.nsegs - 1].pos) >= 0) {
        w2l__log(W2L_LOG_INFO, "mysql source: past the resumed snapshot's position %s:%llu",
                 ms->snap.segs[ms->snap.nsegs - 1].file,
                 (unsigned long long)ms->snap.segs[ms->snap.nsegs - 1].pos);
        ms->snap.nsegs = 0;
    }
    if (ms->xa.replaying) { /* emitted before the restart */
        if (w2l__ms_pos_cmp(ms->at.file, ms->at.pos, ms->xa.replay_file, ms->xa.replay_pos) >= 0) {
            ms->xa.replaying = 0;
            w2l__log(
                W2L_LOG_INFO,
                "mysql source: %zu prepared XA transaction(s) read again; emitting from %s:%llu",
                ms->xa.n, ms->at.file, (unsigned long long)ms->at.pos);
        }
        return W2L_OK;
    }
    return w2l__ms_emit_commit(ms, em, err);
}

/* Completeness (w2l_emit_progress()): the binlog is in commit order and a transaction's
 * header time (whole seconds) is at or before its commit, so once a transaction stamped S
 * is handed over, every transaction committed before second S is too: S*1000-1. Caught up
 * (a heartbeat: the server sent everything it had), everything committed before the
 * heartbeat is in: this host's receive time minus source.clock-skew, which assumes the
 * server's clock is at most that far ahead of ours. No mark while a resumed snapshot's
 * windows or replayed XA transactions are still being read. */
static w2l_rc progress(mysql_source *ms, w2l_emitter *em, int64_t through_ms, w2l_error *err)
{
    if (through_ms < 0 || ms->snap.nsegs || ms->xa.replaying || ms->snap.active) return W2L_OK;
    return w2l_emit_progress(em, through_ms, err);
}

static w2l_rc commit_txn(mysql_source *ms, w2l_emitter *em, uint64_t log_pos, w2l_error *err)
{
    int64_t txn_ms = ms->txn.ts_ms;
    W2L_TRY(commit_txn_pos(ms, em, log_pos, err));
    return txn_ms > 0 ? progress(ms, em, txn_ms - 1, err) : W2L_OK;
}

/* 1 when every table st names is one the snapshot reads whole later (a CREATE never). */
static int ddl_hidden(const mysql_source *ms, const w2l__ddl_stmt *st)
{
    switch (st->kind) {
    case W2L_DDL_ALTER_TABLE: case W2L_DDL_TRUNCATE_TABLE:
        return w2l__ms_snap_hides(ms, st->table.db, st->table.name, 1);
    case W2L_DDL_DROP_TABLE:
        for (size_t k = 0; k < st->ntables; k++)
            if (!w2l__ms_snap_hides(ms, st->tables[k].db, st->tables[k].name, 1)) return 0;
        return st->ntables > 0;
    case W2L_DDL_RENAME_TABLE:
        for (size_t k = 0; k < st->nrenames; k++)
            if (!w2l__ms_snap_hides(ms, st->renames[k].from.db, st->renames[k].from.name, 1))
                return 0;
        return st->nrenames > 0;
    default: return 0;
    }
}

static w2l_rc on_query(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev, size_t *count,
                       w2l_error *err)
{
    const char *sql = ev->sql ? ev->sql : "";
    size_t n = ev->sql_len;
    if (query_is(sql, n, "XA END")) {
        if (ms->xa.cur) {
            w2l__free(ms->xa.cur->key);
            ms->xa.cur->key = w2l__ms_xa_key(sql, n, 2);
            W2L_NOMEM_IF(!ms->xa.cur->key, err);
        }
        ms->txn.open = 1;
        return W2L_OK;
    }
    if (query_is(sql, n, "BEGIN") || query_is(sql, n, "XA START")) {
        /* MySQL flags no GTID as standalone: its transactions say BEGIN (or XA START), a
         * DDL statement comes alone after its GTID */
        if (ms->server.mysql) ms->txn.standalone = 0;
        /* MySQL flags no GTID as an XA PREPARE group either: it starts at XA START */
        if (ms->server.mysql && query_is(sql, n, "XA START")) W2L_TRY(w2l__ms_xa_begin(ms, err));
        ms->txn.open = 1;
        return W2L_OK;
    }
    if (query_is(sql, n, "XA COMMIT") || query_is(sql, n, "XA ROLLBACK")) {
        char *key = NULL;
        if (ms->server.mysql && ms->xa.cur && ms->xa.cur->key) {
            /* XA COMMIT ... ONE PHASE: MySQL writes it in the group of XA START, without an
             * XA_PREPARE: the group's changes are held as prepared, then committed here */
            key = w2l__strdup(ms->xa.cur->key);
            W2L_NOMEM_IF(!key, err);
            w2l_rc prc = w2l__ms_xa_prepared(ms, err);
            if (prc != W2L_OK) {
                w2l__free(key);
                return prc;
            }
        } else
            key = w2l__ms_xa_key(sql, n, 2);
        W2L_NOMEM_IF(!key, err);
        w2l_rc rc = w2l__ms_xa_finish(ms, em, key, query_is(sql, n, "XA COMMIT"), ev->log_pos, err);
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
    snprintf(db, sizeof db, "%.*s", (int)(ev->db_len < 255 ? ev->db_len : 255),
             ev->db ? ev->db : "");
    w2l__ddl_list *l = NULL;
    w2l_error perr;
    w2l_rc rc = w2l__ddl_parse(sql, n, db[0] ? db : NULL, &l, &perr);
    if (rc == W2L_NOMEM) return w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        char *red = w2l__ddl_redact(sql, n);
        w2l__log(W2L_LOG_WARN,
                 "mysql source: statement at %s:%llu not understood, skipped: %.300s (%s)",
                 ms->at.file, (unsigned long long)ev->log_pos, red ? red : "", perr.msg);
        w2l__free(red);
    } else {
        for (size_t i = 0; rc == W2L_OK && i < l->n; i++) {
            const w2l__ddl_stmt *st = &l->stmts[i];
            const char *tdb = NULL, *tname = NULL;
            int emit = 0;
            switch (st->kind) {
            case W2L_DDL_CREATE_TABLE:
            case W2L_DDL_CREATE_TABLE_LIKE:
            case W2L_DDL_CREATE_TABLE_SELECT:
            case W2L_DDL_ALTER_TABLE: case W2L_DDL_TRUNCATE_TABLE:
                tdb = st->table.db, tname = st->table.name;
                emit = w2l__ms_table_selected(ms, tdb, tname);
                if (st->kind == W2L_DDL_ALTER_TABLE)
                    for (size_t a = 0; a < st->nalters; a++)
                        if (st->alters[a].kind == W2L_ALTER_RENAME_TABLE)
                            emit |= w2l__ms_table_selected(ms, st->alters[a].new_table.db,
                                                           st->alters[a].new_table.name);
                break;
            case W2L_DDL_DROP_TABLE:
                for (size_t k = 0; k < st->ntables; k++)
                    emit |= w2l__ms_table_selected(ms, st->tables[k].db, st->tables[k].name);
                if (st->ntables == 1) tdb = st->tables[0].db, tname = st->tables[0].name;
                break;
            case W2L_DDL_RENAME_TABLE:
                for (size_t k = 0; k < st->nrenames; k++)
                    emit |=
                        w2l__ms_table_selected(ms, st->renames[k].from.db,
                                               st->renames[k].from.name) ||
                        w2l__ms_table_selected(ms, st->renames[k].to.db, st->renames[k].to.name);
                if (st->nrenames == 1) tdb = st->renames[0].to.db, tname = st->renames[0].to.name;
                break;
            case W2L_DDL_CREATE_DATABASE: case W2L_DDL_DROP_DATABASE:
                emit = w2l__ms_db_selected(ms, st->database);
                break;
            default: break;
            }
            /* a DDL of tables still to be read whole is theirs when they are read */
            if (emit && ms->snap.active && ddl_hidden(ms, st)) emit = 0;
            rc = w2l__ms_tt_apply(ms, st, err);
            if (rc == W2L_OK) rc = w2l__ms_snap_ddl(ms, st, err);
            if (ms->quarantined.n) release_quarantined(ms, st);
            if (rc == W2L_OK && emit) {
                w2l_ddl d = {0};
                d.db = tdb ? tdb : (db[0] ? db : NULL);
                d.sql = st->text;
                d.sql_len = st->text_len;
                d.table = tname;
                d.ts_ms = (int64_t)ev->ts * 1000;
                ms->txn.open = 1;
                rc =
                    ms->xa.replaying || w2l__ms_in_window(ms, d.db, tname, ms->at.file, ev->log_pos)
                        ? W2L_OK
                        : w2l_emit_ddl(em, &d, err);
                (*count)++;
            }
        }
        w2l__ddl_list_free(l);
        W2L_TRY(rc);
    }
    if (ms->txn.standalone || !ms->txn.has_gtid) { /* DDL commits on its own */
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
    }
    return W2L_OK;
}

/* MySQL's GTID (or ANONYMOUS_GTID) opens a transaction; its GTID joins the executed set
 * when the transaction commits. Standalone until a BEGIN says otherwise (a DDL statement
 * is its GTID and one QUERY). */
static w2l_rc on_mysql_gtid(mysql_source *ms, const w2l__bl_event *ev, w2l_error *err)
{
    (void)err;
    if (ms->txn.open && ms->txn.emitted && !ms->txn.skip)
        w2l__log(W2L_LOG_WARN,
                 "mysql source: transaction without its end before a GTID at %s:%llu",
                 ms->at.file, (unsigned long long)ev->log_pos);
    ms->txn.has_mygtid = !ev->anonymous && ev->gno > 0;
    if (ms->txn.has_mygtid) {
        memcpy(ms->txn.sid, ev->sid, 16);
        ms->txn.tag_len = ev->tag_len < sizeof ms->txn.tag ? ev->tag_len : sizeof ms->txn.tag - 1;
        if (ms->txn.tag_len) memcpy(ms->txn.tag, ev->tag, ms->txn.tag_len);
        ms->txn.tag[ms->txn.tag_len] = '\0';
        ms->txn.gno = ev->gno;
    }
    ms->txn.has_gtid = 1; /* a transaction with its own start: DDL commits after its QUERY */
    ms->txn.gtid = (w2l__bl_gtid){0, 0, 0};
    ms->txn.standalone = 1;
    ms->txn.open = 1;
    ms->txn.ts_ms = (int64_t)ev->ts * 1000;
    return W2L_OK;
}

/* MySQL's PREVIOUS_GTIDS (each file's start): the executed set before the file. While the
 * source's set is not known (started from file:pos) it becomes that set; once known, a
 * set that misses part of it is worth a warning (the server's history changed). */
static w2l_rc on_previous_gtids(mysql_source *ms, const w2l__bl_event *ev, w2l_error *err)
{
    if (!ms->server.mysql || ms->txn.open || !ev->data || ev->end < ev->data) return W2L_OK;
    w2l__mygtids *g = w2l__mygtids_new();
    W2L_NOMEM_IF(!g, err);
    w2l_rc rc = w2l__mygtids_decode(g, ev->data, (size_t)(ev->end - ev->data), err);
    if (rc != W2L_OK) {
        w2l__mygtids_free(g);
        w2l__error_prefix(err, "mysql source: PREVIOUS_GTIDS of %s: ", ms->at.file);
        return rc;
    }
    /* an empty set is a known set too, where GTIDs are on (a server that never executed
     * one); without gtid_mode=ON the transactions are anonymous and positions file:pos */
    if (!ms->at.mygtids_known && (ms->server.gtid_mode || !w2l__mygtids_empty(g))) {
        w2l__mygtids_free(ms->at.mygtids);
        ms->at.mygtids = g;
        ms->at.mygtids_known = 1;
        w2l__log(W2L_LOG_INFO,
                 "mysql source: the executed GTID set is known from %s on; positions hold it",
                 ms->at.file);
        return W2L_OK;
    }
    w2l__mygtids_free(g);
    return W2L_OK;
}

static w2l_rc handle_event(mysql_source *ms, w2l_emitter *em, const w2l__bl_event *ev,
                           size_t *count, w2l_error *err)
{
    if (ev->ts) atomic_store(&ms->last_event_ms, (int64_t)ev->ts * 1000);
    ms->ev_pos = ev->log_pos;
    switch (ev->kind) {
    case BL_EV_ROTATE:
        if (ev->file_len && ev->file_len < sizeof ms->at.file) {
            memcpy(ms->at.file, ev->file, ev->file_len);
            ms->at.file[ev->file_len] = '\0';
            if (!ms->txn.open) ms->at.pos = ev->pos;
        }
        return W2L_OK;
    case BL_EV_GTID_LIST:
        for (size_t i = 0; i < ev->ngtids;
             i++) { /* fills domains we know nothing of (file starts) */
            int known = 0;
            for (size_t k = 0; k < ms->at.ngtid; k++)
                known |= ms->at.gtid[k].domain == ev->gtids[i].domain;
            if (!known) {
                int oom = 0;
                w2l__gtid_set(&ms->at.gtid, &ms->at.ngtid, &ms->at.gtid_cap, &ev->gtids[i], &oom);
                W2L_NOMEM_IF(oom, err);
            }
        }
        if (!ms->txn.open && ev->log_pos) ms->at.pos = ev->log_pos;
        return W2L_OK;
    case BL_EV_GTID:
        if (ev->mysql_gtid) return on_mysql_gtid(ms, ev, err);
        if (ms->txn.open && ms->txn.emitted && !ms->txn.skip)
            w2l__log(W2L_LOG_WARN,
                     "mysql source: transaction without its end before GTID %u-%u-%llu at %s:%llu",
                     ev->gtid.domain, ev->gtid.server, (unsigned long long)ev->gtid.seq,
                     ms->at.file, (unsigned long long)ev->log_pos);
        if (ev->gflags & BL_GTID_PREPARED_XA) W2L_TRY(w2l__ms_xa_begin(ms, err));
        ms->txn.gtid = ev->gtid;
        ms->txn.has_gtid = 1;
        ms->txn.standalone = (ev->gflags & BL_GTID_STANDALONE) != 0;
        ms->txn.open = 1;
        ms->txn.ts_ms = (int64_t)ev->ts * 1000;
        return W2L_OK;
    case BL_EV_QUERY: return on_query(ms, em, ev, count, err);
    case BL_EV_TABLE_MAP:
        if (ms->server.mysql && !ev->tmap->has_names &&
            w2l__ms_table_selected(ms, ev->tmap->db, ev->tmap->table))
            return w2l__fail(err, W2L_SOURCE,
                             "mysql source: the TABLE_MAP of %s.%s at %s:%llu has no column names: "
                             "the server wrote it with binlog_row_metadata=MINIMAL; set "
                             "binlog_row_metadata=FULL (SET PERSIST) and start from a position "
                             "after the change",
                             ev->tmap->db, ev->tmap->table, ms->at.file,
                             (unsigned long long)ev->log_pos);
        if (!ev->tmap->user) W2L_TRY(w2l__ms_prepare_tmap(ms, ev->tmap, err));
        return W2L_OK;
    case BL_EV_PREVIOUS_GTIDS:
        W2L_TRY(on_previous_gtids(ms, ev, err));
        if (!ms->txn.open && ev->log_pos) ms->at.pos = ev->log_pos;
        return W2L_OK;
    case BL_EV_ROWS: return on_rows(ms, em, ev, count, err);
    case BL_EV_XID:
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    case BL_EV_XA_PREPARE: /* held until XA COMMIT; the group ends here */
        W2L_TRY(w2l__ms_xa_prepared(ms, err));
        W2L_TRY(commit_txn(ms, em, ev->log_pos, err));
        (*count)++;
        return W2L_OK;
    case BL_EV_HEARTBEAT:
        if (!ms->txn.open && ev->file_len && ev->file_len < sizeof ms->at.file) {
            memcpy(ms->at.file, ev->file, ev->file_len);
            ms->at.file[ev->file_len] = '\0';
            if (ev->log_pos) ms->at.pos = ev->log_pos;
            atomic_store(&ms->caught_up, 1);
            return progress(ms, em, w2l__now_ms() - ms->cfg.clock_skew_ms, err);
        }
        return W2L_OK;
    default:
        if (!ms->txn.open && ev->log_pos && ev->kind != BL_EV_FDE && ev->kind != BL_EV_STOP)
            ms->at.pos = ev->log_pos;
        return W2L_OK;
    }
}

static w2l_rc reconnect(mysql_source *ms, w2l_error *err)
{
    int backoff = 250;
    uint64_t emitted = ms->txn.open ? ms->txn.emitted : 0;
    for (int attempt = 0;; attempt++) {
        w2l_error e2;
        w2l_error_clear(&e2);
        /* the position of the last commit: a transaction cut short is read again */
        w2l_rc rc = start_stream(ms, &e2);
        if (rc == W2L_OK) {
            ms->reconnects++;
            w2l__ms_xa_drop_cur(ms); /* a PREPARE group cut short is read again */
            ms->txn.open = 0;
            ms->txn.has_gtid = 0;
            ms->txn.has_mygtid = 0;
            ms->txn.emitted = 0;
            ms->txn.skip = emitted;
            return W2L_OK;
        }
        if (rc != W2L_UNAVAILABLE || attempt >= 12) {
            *err = e2;
            w2l__error_prefix(err,
                              "mysql source: reconnect failed after %d attempts: ", attempt + 1);
            return rc;
        }
        w2l__log(W2L_LOG_WARN, "mysql source: %s; retrying in %d ms", e2.msg, backoff);
        w2l__ms_sleep_ms(backoff);
        backoff = backoff * 2 > 4000 ? 4000 : backoff * 2;
    }
}

/* At the snapshot chunk's position the stream waits for the chunk (mysql_snap_driver.c). */
static int at_limit(const mysql_source *ms)
{
    return ms->limit.on && !ms->txn.open &&
           w2l__ms_pos_cmp(ms->at.file, ms->at.pos, ms->limit.file, ms->limit.pos) >= 0;
}

w2l_rc w2l__ms_binlog_next(mysql_source *ms, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    int64_t deadline = w2l__mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
    size_t count = 0;
    /* until-caught-up: the call that reached the end returned its changes (W2L_OK); the
     * stream ends there, not with the transactions written since (a stream not started yet
     * starts: a start position the server lacks is its error) */
    if (ms->bl && ms->cfg.until_caught_up && !ms->txn.open && caught_up(ms)) return W2L_DONE;
    if (at_limit(ms)) return W2L_AGAIN;
    if (!ms->bl) W2L_TRY(start_stream(ms, err));
    /* source.new-tables=stream: the restored position, now with the filter that selects the
     * new tables, so the next checkpoint knows them even when no transaction comes */
    if (ms->announce_filter && !ms->txn.open && !ms->xa.replaying) {
        ms->announce_filter = 0;
        return w2l__ms_emit_commit(ms, em, err);
    }
    for (;;) {
        w2l__bl_event ev;
        w2l_rc rc = w2l__bl_fetch(ms->bl, &ev, err);
        if (rc == W2L_DONE) return count ? W2L_OK : W2L_DONE;
        if (rc == W2L_UNAVAILABLE) {
            w2l__log(W2L_LOG_WARN, "%s; reconnecting", err->msg);
            atomic_store(&ms->disconnected, 1);
            w2l_rc rr = reconnect(ms, err);
            atomic_store(&ms->disconnected, 0);
            W2L_TRY(rr);
            w2l__emitter_reconnected(em);
            continue;
        }
        W2L_TRY(rc);
        if (ev.kind != BL_EV_HEARTBEAT) atomic_store(&ms->caught_up, 0);
        W2L_TRY(handle_event(ms, em, &ev, &count, err));
        if (!ms->txn.open) {
            if (at_limit(ms)) return count ? W2L_OK : W2L_AGAIN;
            if (ms->cfg.until_caught_up && caught_up(ms)) return count ? W2L_OK : W2L_DONE;
            if (ev.kind == BL_EV_HEARTBEAT) return count ? W2L_OK : W2L_AGAIN;
            if (count && (count >= 4096 || w2l__mono_ns() / 1000000 >= deadline)) return W2L_OK;
        } else if (count >= 65536 && w2l__mono_ns() / 1000000 >= deadline) {
            return W2L_OK; /* a huge transaction spans several calls */
        }
    }
}
