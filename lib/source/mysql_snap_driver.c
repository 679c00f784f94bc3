/*
 * The "mysql" source's snapshot driver: the stream's start position, and the chunked
 * snapshot that runs beside the stream (the incremental snapshot of DBLog and Flink CDC,
 * with an exact position per chunk).
 *
 * A fresh start reads its position P0 in a consistent snapshot (lock-free on MariaDB,
 * under a short global read lock on MySQL: source.snapshot-lock) and streams the binlog
 * from P0 at once; every selected table is in the plan (mysql_snap_plan.c). Tables are
 * taken in plan order; a table's primary key splits it into ranges (evenly over its first
 * key column's bounds when that is an integer, a range split again when readers are idle),
 * and readers (mysql_snap_workers.c, source.snapshot-parallelism) read chunks of
 * source.snapshot-chunk-rows rows from the ranges, each in its own short consistent
 * snapshot whose binlog position S it reports first. The stream stops at the smallest S
 * of the chunks in flight; when it is there, that chunk is emitted as one transaction: its
 * rows are the table's rows at S, and the stream's events before S were emitted before
 * them, those after S come after them, so the lake holds what the source held, key by
 * key (a chunk's rows replace the rows of their keys). Events of tables not yet read are
 * dropped (their read comes later, at a later position). A table without a primary key is
 * read whole in one consistent snapshot, when the stream reaches its position; its events
 * are dropped until then.
 *
 * Each chunk's commit carries the plan's progress in the position (the ranges left), so a
 * restart reads only the chunks not yet emitted. source.snapshot-max-rows-per-second
 * paces the readers; source.snapshot-max-threads-running pauses new chunks while the
 * server is busy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mysql_source_int.h"

/* The first prepared XA transaction's XID into xid ("" when none). */
static w2l_rc xa_prepared(mysql_source *ms, char *xid, size_t size, w2l_error *err)
{
    w2l__my_res *r;
    w2l_rc rc = w2l__my_query(ms->snap.conn, "XA RECOVER", 0, &r, err);
    if (rc != W2L_OK) {
        if (err && err->sys_errno == 1227) /* MySQL 8.0.19+: a privilege of its own */
            w2l__error_prefix(err, "the snapshot checks for prepared XA transactions (grant "
                                   "XA_RECOVER_ADMIN): ");
        return rc;
    }
    char **row;
    unsigned long *len;
    xid[0] = '\0';
    int k = w2l__my_row(r, &row, &len, err);
    if (k > 0)
        snprintf(xid, size, "%.*s", (int)(len[3] < 256 ? len[3] : 256), row[3] ? row[3] : "");
    w2l__my_res_free(r);
    return k < 0 ? err->code : W2L_OK;
}

static w2l_rc xa_wait_failed(mysql_source *ms, const char *xid, w2l_error *err)
{
    return w2l__fail(
        err, W2L_SOURCE,
        "mysql source %s: XA transaction '%s' (and maybe others) is prepared, "
        "not committed: a snapshot now would miss its changes; XA COMMIT or XA ROLLBACK it "
        "(XA RECOVER lists them), then start again",
        w2l__my_name(ms->snap.conn), xid);
}

/* source.snapshot-lock=none (MariaDB): the consistent snapshot itself reports the binlog
 * position it sees (binlog_snapshot_file/position), and its GTID state is that of the
 * position (BINLOG_GTID_POS). No lock is taken. */
static w2l_rc start_lock_free(mysql_source *ms, int fresh, char *file, size_t fsize,
                              uint64_t *pos, char *gtid, size_t gsize, w2l_error *err)
{
    W2L_TRY(w2l__my_exec(ms->snap.conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err));
    /* An XA transaction prepared now is not in the snapshot and its PREPARE group lies
     * before the snapshot's binlog position: its XA COMMIT would come without its
     * changes. Wait (up to 10 s) for prepared ones to end, else fail naming one. */
    for (int attempt = 0; fresh; attempt++) {
        char xid[300];
        W2L_TRY(xa_prepared(ms, xid, sizeof xid, err));
        if (!xid[0]) break;
        if (attempt >= 20) return xa_wait_failed(ms, xid, err);
        if (attempt == 0)
            w2l__log(
                W2L_LOG_WARN,
                "mysql source: XA transaction '%s' is prepared; waiting for it to end before the "
                "snapshot",
                xid);
        W2L_TRY(w2l__my_exec(ms->snap.conn, "ROLLBACK", err));
        w2l__ms_sleep_ms(500);
        W2L_TRY(w2l__my_exec(ms->snap.conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err));
    }
    char p[32];
    int null;
    W2L_TRY(w2l__my_value(ms->snap.conn,
                          "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE "
                          "VARIABLE_NAME = 'BINLOG_SNAPSHOT_FILE'",
                          file, fsize, &null, err));
    W2L_TRY(w2l__my_value(ms->snap.conn,
                          "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE "
                          "VARIABLE_NAME = 'BINLOG_SNAPSHOT_POSITION'",
                          p, sizeof p, &null, err));
    if (null || !file[0])
        return w2l__fail(err, W2L_CONFIG,
                         "mysql source %s: no binlog snapshot position (is log_bin on?)",
                         w2l__my_name(ms->snap.conn));
    *pos = strtoull(p, NULL, 10);
    char q[1024], esc[600];
    w2l__my_escape(ms->snap.conn, esc, file, strlen(file));
    snprintf(q, sizeof q, "SELECT BINLOG_GTID_POS('%s', %llu)", esc, (unsigned long long)*pos);
    W2L_TRY(w2l__my_value(ms->snap.conn, q, gtid, gsize, &null, err));
    if (null) gtid[0] = '\0';
    return W2L_OK;
}

/* source.snapshot-lock=ftwrl (MySQL, which reports no position for a snapshot; works on
 * MariaDB too): FLUSH TABLES WITH READ LOCK stops every commit, so the binlog position and
 * the GTID set read under it are those of the snapshot started before UNLOCK TABLES. The
 * lock is held on this connection for those few statements only (lock_wait_timeout bounds
 * the wait for it: while FTWRL waits for long statements, writers wait too). Needs the
 * RELOAD privilege. */
static w2l_rc start_locked(mysql_source *ms, int fresh, char *file, size_t fsize, uint64_t *pos,
                           char **gtext, w2l_error *err)
{
    w2l__my *c = ms->snap.conn;
    W2L_TRY(w2l__my_exec(c, "SET SESSION lock_wait_timeout = 30", err));
    for (int attempt = 0;; attempt++) {
        w2l_rc rc = w2l__my_exec(c, "FLUSH TABLES WITH READ LOCK", err);
        if (rc != W2L_OK) {
            if (err && (err->sys_errno == 1227 || err->sys_errno == 1045))
                return w2l__fail(err, W2L_CONFIG,
                                 "mysql source %s: the snapshot needs the RELOAD privilege for "
                                 "FLUSH TABLES WITH READ LOCK (source.snapshot-lock=ftwrl): "
                                 "GRANT RELOAD ON *.* TO the source's user%s",
                                 w2l__my_name(c),
                                 ms->server.mysql ? "" : ", or set source.snapshot-lock=none");
            return rc;
        }
        char xid[300] = "";
        if (fresh) rc = xa_prepared(ms, xid, sizeof xid, err);
        if (rc != W2L_OK || !xid[0]) break;
        W2L_TRY(w2l__my_exec(c, "UNLOCK TABLES", err));
        if (attempt >= 20) return xa_wait_failed(ms, xid, err);
        if (attempt == 0)
            w2l__log(W2L_LOG_WARN,
                     "mysql source: XA transaction '%s' is prepared; waiting for it to end "
                     "before the snapshot",
                     xid);
        w2l__ms_sleep_ms(500);
    }
    /* the lock is held: nothing commits until UNLOCK TABLES */
    w2l_rc rc = w2l__ms_read_binlog_status(ms, c, file, fsize, pos, err);
    char g[1024];
    int null = 1;
    if (rc == W2L_OK && !ms->server.mysql)
        rc = w2l__my_value(c, "SELECT @@global.gtid_binlog_pos", g, sizeof g, &null, err);
    w2l__my_res *r = NULL;
    if (rc == W2L_OK && ms->server.mysql && ms->server.gtid_mode)
        rc = w2l__my_query(c, "SELECT @@global.gtid_executed", 0, &r, err);
    if (rc == W2L_OK && r) {
        char **row;
        unsigned long *len;
        int k = w2l__my_row(r, &row, &len, err);
        if (k < 0) rc = err->code;
        else if (k > 0 && row[0]) *gtext = w2l__strndup(row[0], len[0]);
    } else if (rc == W2L_OK && !ms->server.mysql && !null)
        *gtext = w2l__strdup(g);
    w2l__my_res_free(r);
    /* MySQL without gtid_mode=ON: the set is not known (NULL) */
    int known = !ms->server.mysql || ms->server.gtid_mode;
    if (rc == W2L_OK && known && !*gtext) *gtext = w2l__strdup("");
    if (rc == W2L_OK && known && !*gtext) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK)
        rc = w2l__my_exec(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT", err);
    w2l_error e2;
    w2l_rc urc = w2l__my_exec(c, "UNLOCK TABLES", &e2); /* also after a failure */
    if (rc == W2L_OK && urc != W2L_OK) {
        *err = e2;
        rc = urc;
    }
    return rc;
}

w2l_rc w2l__ms_snap_begin(mysql_source *ms, w2l_error *err)
{
    W2L_TRY(w2l__my_connect(&ms->cfg.params, &ms->snap.conn, err));
    W2L_TRY(w2l__my_exec(ms->snap.conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                         err));
    char file[256];
    uint64_t posv = 0;
    char *gtid = NULL;
    w2l_rc rc;
    if (ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL) {
        rc = start_locked(ms, 1, file, sizeof file, &posv, &gtid, err);
    } else {
        char g[1024];
        rc = start_lock_free(ms, 1, file, sizeof file, &posv, g, sizeof g, err);
        if (rc == W2L_OK && !(gtid = w2l__strdup(g)))
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK) {
        snprintf(ms->at.file, sizeof ms->at.file, "%s", file);
        ms->at.pos = posv;
        rc = w2l__ms_set_gtid_text(ms, gtid, err);
    }
    if (rc == W2L_OK)
        w2l__log(W2L_LOG_INFO, "mysql source: snapshot from %s:%llu (GTID %s)%s", file,
                 (unsigned long long)posv, gtid ? gtid : "",
                 ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL ? ", read under a global read lock"
                                                          : "");
    w2l__free(gtid);
    /* the definitions read at open may be older than P0 (a DDL in between): read them
     * again in the snapshot's session, and plan from them */
    if (rc == W2L_OK) {
        while (ms->defs.n) w2l__ms_tt_remove(ms, &ms->defs.tab[ms->defs.n - 1]);
        rc = w2l__ms_load_definitions(ms, ms->snap.conn, err);
    }
    if (rc == W2L_OK) rc = w2l__ms_snap_plan(ms, err);
    if (rc == W2L_OK) rc = w2l__my_exec(ms->snap.conn, "COMMIT", err);
    W2L_TRY(rc);
    ms->snap.active = ms->snap.initial = ms->snap.ntables > 0;
    ms->snap.started_ms = w2l__now_ms();
    return W2L_OK;
}

/* ---- helpers ---- */

static int reached(const mysql_source *ms, const char *file, uint64_t pos)
{
    return !ms->txn.open && w2l__ms_pos_cmp(ms->at.file, ms->at.pos, file, pos) >= 0;
}

static w2l_rc query_value(mysql_source *ms, const char *sql, char *buf, size_t size, int *null,
                          w2l_error *err)
{
    return w2l__my_value(ms->snap.conn, sql, buf, size, null, err);
}

static w2l_rc coordinator(mysql_source *ms, w2l_error *err)
{
    if (ms->snap.conn) return W2L_OK;
    W2L_TRY(w2l__my_connect(&ms->cfg.params, &ms->snap.conn, err));
    W2L_TRY(w2l__my_exec(ms->snap.conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                         err));
    if (ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL)
        W2L_TRY(w2l__my_exec(ms->snap.conn, "SET SESSION lock_wait_timeout = 30", err));
    return W2L_OK;
}

/* source.snapshot-parallelism 0: the machine's cores (at most 4), fewer when the server
 * has few connections to spare. */
static unsigned parallelism(mysql_source *ms, w2l_error *err)
{
    if (ms->cfg.snap_parallelism > 0) return (unsigned)ms->cfg.snap_parallelism;
    long cpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned p = cpu > 4 ? 4 : cpu < 1 ? 1 : (unsigned)cpu;
    char v[64];
    int null = 1;
    long long maxc = 0, conn = 0;
    if (query_value(ms, "SELECT @@global.max_connections", v, sizeof v, &null, err) == W2L_OK &&
        !null)
        maxc = strtoll(v, NULL, 10);
    if (query_value(ms,
                    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
                    "VARIABLE_NAME = 'THREADS_CONNECTED'",
                    v, sizeof v, &null, err) == W2L_OK &&
        !null)
        conn = strtoll(v, NULL, 10);
    if (maxc > 0 && (maxc - conn) / 4 < p) p = maxc - conn >= 8 ? (unsigned)((maxc - conn) / 4) : 1;
    return p;
}

/* The server's estimate of every table's rows, in one statement (for the splits and the
 * time left). */
static w2l_rc estimates(mysql_source *ms, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(
        w2l__my_query(ms->snap.conn,
                      "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES "
                      "WHERE TABLE_TYPE = 'BASE TABLE'",
                      0, &r, err));
    char **row;
    unsigned long *len;
    int k;
    ms->snap.rows_estimated = 0;
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        snap_table *t = row[0] && row[1] ? w2l__ms_snap_find(ms, row[0], row[1]) : NULL;
        if (!t || t->state == SNAP_DONE) continue;
        t->est_rows = row[2] ? strtoull(row[2], NULL, 10) : 0;
        ms->snap.rows_estimated += t->est_rows;
    }
    w2l__my_res_free(r);
    return k < 0 ? err->code : W2L_OK;
}

/* The snapshot's figures for the pipeline; after the snapshot its final ones stay (a new
 * round, a resync, starts from zero). */
static void publish(mysql_source *ms, w2l_emitter *em)
{
    ms->snap.initial = 0; /* tables the lake lacks are still to read (not only re-reads) */
    for (size_t i = 0; ms->snap.active && i < ms->snap.ntables && !ms->snap.initial; i++)
        ms->snap.initial = ms->snap.tables[i]->state != SNAP_DONE && !ms->snap.tables[i]->resync;
    w2l__snap_progress p = {0};
    p.tables = ms->snap.tables_total;
    p.tables_done = ms->snap.done_tables;
    p.rows = ms->snap.done_rows;
    p.rows_estimated = ms->snap.rows_estimated;
    p.chunks = ms->snap.done_chunks;
    p.started_ms = ms->snap.started_ms;
    w2l__emitter_set_snapshot_progress(em, &p);
}

/* The bounds of t's first key column (an integer or a string). */
static w2l_rc table_stats(mysql_source *ms, snap_table *t, w2l_error *err)
{
    if ((!t->int_key && !t->str_key) || !t->npk) return W2L_OK;
    w2l_buf b = {0};
    const char *parts[] = {"SELECT MIN(", ") , MAX(", ") FROM ", ".", ""};
    const char *names[] = {t->cols[t->pk[0]].name, t->cols[t->pk[0]].name, t->db, t->name};
    w2l_rc rc = W2L_OK;
    for (int k = 0; k < 4 && rc == W2L_OK; k++) {
        rc = w2l__buf_printf(&b, err, "%s`", parts[k]);
        for (const char *p = names[k]; *p && rc == W2L_OK; p++)
            rc = w2l_buf_append(&b, *p == '`' ? "``" : p, *p == '`' ? 2 : 1, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&b, "`", 1, err);
    }
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    w2l__my_res *r = NULL;
    if (rc == W2L_OK) rc = w2l__my_query(ms->snap.conn, (const char *)b.data, 0, &r, err);
    w2l_buf_release(&b);
    W2L_TRY(rc);
    char **row;
    unsigned long *len;
    int k = w2l__my_row(r, &row, &len, err);
    if (k > 0 && row[0] && row[1]) {
        if (t->int_key) {
            t->kmin = strtold(row[0], NULL);
            t->kmax = strtold(row[1], NULL);
            t->have_bounds = 1;
        } else {
            w2l__free(t->smin);
            w2l__free(t->smax);
            t->smin = w2l__strndup(row[0], len[0]);
            t->smax = w2l__strndup(row[1], len[1]);
            t->smin_len = len[0];
            t->smax_len = len[1];
            t->have_bounds = t->smin && t->smax;
        }
    }
    w2l__my_res_free(r);
    return k < 0 ? err->code : W2L_OK;
}

/* A split point between the strings lo and hi: their common prefix and the byte halfway
 * between their next ones, when those differ by two or more and are ASCII (the point must
 * be valid text; any point splits correctly, the server's comparison decides which side a
 * key is on: a point off the middle only balances worse). 0 when there is none. */
static size_t string_mid(const char *lo, size_t ll, const char *hi, size_t hl, char *mid,
                         size_t size)
{
    size_t p = 0;
    while (p < ll && p < hl && lo[p] == hi[p]) p++;
    if (p + 2 > size || p >= hl) return 0;
    unsigned c1 = p < ll ? (unsigned char)lo[p] : 0x20, c2 = (unsigned char)hi[p];
    if (c1 < 0x20) c1 = 0x20;
    if (c2 > 0x7f || c2 < c1 + 2) return 0;
    memcpy(mid, hi, p);
    mid[p] = (char)((c1 + c2) / 2);
    return p + 1;
}

static w2l_rc set_bound(char **dst, size_t *len, long double v, w2l_error *err)
{
    char s[64];
    int n = snprintf(s, sizeof s, "%.0Lf", v);
    w2l__free(*dst);
    *dst = w2l__strndup(s, (size_t)n);
    *len = (size_t)n;
    W2L_NOMEM_IF(!*dst, err);
    return W2L_OK;
}

/* 1 when a snapshot's position file:pos is before the stream's when it began, at_file:at_pos:
 * a transaction was in the binlog, and emitted, before the engine committed it (the binlog
 * is written before the engine's commit), so the snapshot lacks it. Such a chunk is read
 * again: a later snapshot holds it. */
static int behind(mysql_source *ms, const char *file, uint64_t pos, const char *at_file,
                  uint64_t at_pos)
{
    if (w2l__ms_pos_cmp(file, pos, at_file, at_pos) >= 0) return 0;
    ms->snap.behind++;
    w2l__log(W2L_LOG_DEBUG,
             "mysql source: a snapshot at %s:%llu is behind the stream's %s:%llu: read again",
             file, (unsigned long long)pos, at_file, (unsigned long long)at_pos);
    return 1;
}

/* A table's first chunks: pending → active, its ranges (a keyless table: its consistent
 * snapshot, read when the stream reaches its position). */
static w2l_rc activate(mysql_source *ms, snap_table *t, w2l_error *err)
{
    W2L_TRY(table_stats(ms, t, err));
    t->state = SNAP_ACTIVE;
    t->rows = 0;
    t->chunks = 0;
    ms->snap.epoch++;
    if (!t->npk) {
        W2L_TRY(w2l__ms_snap_txn(ms, ms->snap.conn, ms->snap.kfile, sizeof ms->snap.kfile,
                                 &ms->snap.kpos, err));
        if (ms->snap.kpos && w2l__ms_pos_cmp(ms->snap.kfile, ms->snap.kpos, ms->at.file,
                                             ms->at.pos) < 0) {
            behind(ms, ms->snap.kfile, ms->snap.kpos, ms->at.file, ms->at.pos);
            W2L_TRY(w2l__my_exec(ms->snap.conn, "ROLLBACK", err));
            t->state = SNAP_PENDING;
            return W2L_AGAIN; /* the next round takes a new snapshot */
        }
        ms->snap.keyless = t;
        ms->snap.kgen = t->gen;
        w2l__log(W2L_LOG_DEBUG, "mysql source: snapshot of %s.%s (no primary key) at %s:%llu",
                 t->db, t->name, ms->snap.kfile, (unsigned long long)ms->snap.kpos);
        return W2L_OK;
    }
    uint64_t n = 1;
    if (t->int_key && t->have_bounds && t->est_rows > ms->cfg.chunk_rows) {
        n = t->est_rows / ms->cfg.chunk_rows;
        if (n > ms->snap.parallelism) n = ms->snap.parallelism;
        if (t->kmax - t->kmin + 1 < (long double)n) n = 1;
    }
    long double step = n > 1 ? (t->kmax - t->kmin + 1) / (long double)n : 0;
    for (uint64_t i = 0; i < n; i++) {
        snap_range *r = w2l__ms_snap_range_add(ms, t, err);
        if (!r) return err->code;
        if (i > 0) W2L_TRY(set_bound(&r->lo, &r->lo_len, floorl(t->kmin + step * i), err));
        if (i + 1 < n)
            W2L_TRY(set_bound(&r->hi, &r->hi_len, floorl(t->kmin + step * (i + 1)), err));
    }
    w2l__log(W2L_LOG_DEBUG, "mysql source: snapshot of %s.%s: about %llu rows, %llu range(s)",
             t->db, t->name, (unsigned long long)t->est_rows, (unsigned long long)n);
    return W2L_OK;
}

/* Splits range ri of t in two when its first key column is an integer and the part left
 * holds at least two chunks' worth of keys (at the table's density), so an idle reader
 * gets work. */
static w2l_rc maybe_split(mysql_source *ms, snap_table *t, size_t ri, w2l_error *err)
{
    if (!t->int_key && !t->str_key) return W2L_OK;
    if (!t->have_bounds) {
        W2L_TRY(table_stats(ms, t, err));
        if (!t->have_bounds) return W2L_OK;
    }
    snap_range *r = &t->ranges[ri];
    char mids[64], *mid_text;
    size_t mid_len;
    if (t->int_key) {
        long double lo = r->after.n ? strtold(r->after.v[0], NULL)
                         : r->lo    ? strtold(r->lo, NULL)
                                    : t->kmin;
        long double hi = r->hi ? strtold(r->hi, NULL) : t->kmax + 1;
        if (hi - lo < 2) return W2L_OK;
        long double span = t->kmax - t->kmin + 1;
        long double density = t->est_rows && span > 0 ? (long double)t->est_rows / span : 1;
        if ((hi - lo) * density < 2.0L * (long double)ms->cfg.chunk_rows) return W2L_OK;
        long double mid = floorl(lo + (hi - lo) / 2);
        if (mid <= lo) return W2L_OK;
        mid_len = (size_t)snprintf(mids, sizeof mids, "%.0Lf", mid);
    } else {
        /* no density for strings: split while the table holds two chunks a range */
        if (t->est_rows < 2 * (uint64_t)ms->cfg.chunk_rows * (t->nranges + 1)) return W2L_OK;
        const char *lo = r->after.n ? r->after.v[0] : r->lo ? r->lo : t->smin;
        size_t ll = r->after.n ? r->after.len[0] : r->lo ? r->lo_len : t->smin_len;
        const char *hi = r->hi ? r->hi : t->smax;
        size_t hl = r->hi ? r->hi_len : t->smax_len;
        mid_len = string_mid(lo, ll, hi, hl, mids, sizeof mids);
        if (!mid_len) return W2L_OK;
    }
    mid_text = w2l__strndup(mids, mid_len);
    W2L_NOMEM_IF(!mid_text, err);
    snap_range *nr = w2l__ms_snap_range_add(ms, t, err); /* may move the ranges */
    if (!nr) {
        w2l__free(mid_text);
        return err->code;
    }
    r = &t->ranges[ri];
    nr->lo = mid_text;
    nr->lo_len = mid_len;
    nr->hi = r->hi;
    nr->hi_len = r->hi_len;
    r->hi = w2l__strndup(mids, mid_len);
    r->hi_len = mid_len;
    W2L_NOMEM_IF(!r->hi, err);
    /* the new range too starts after what was emitted: whatever the point, nothing twice */
    return r->after.n ? w2l__ms_key_copy(&nr->after, r->after.v, r->after.len, r->after.n, err)
                      : W2L_OK;
}

static w2l_rc launch(mysql_source *ms, snap_table *t, size_t ri, w2l_error *err)
{
    snap_range *r = &t->ranges[ri];
    snap_job *j = w2l__calloc(1, sizeof *j);
    W2L_NOMEM_IF(!j, err);
    w2l__arena_init(&j->arena, 64 * 1024);
    j->t = t;
    j->range_id = r->id;
    j->gen = t->gen;
    j->ncols = t->ncols;
    j->npk = t->npk;
    j->limit = ms->cfg.chunk_rows;
    snprintf(j->at_file, sizeof j->at_file, "%s", ms->at.file);
    j->at_pos = ms->at.pos;
    j->cols = w2l__calloc(t->ncols ? t->ncols : 1, sizeof *j->cols);
    j->pk = w2l__calloc(t->npk ? t->npk : 1, sizeof *j->pk);
    j->coerced = w2l__calloc(t->ncols / 8 + 1, 1);
    w2l_buf q = {0};
    w2l_rc rc =
        j->cols && j->pk && j->coerced ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < t->ncols; i++) {
        j->cols[i] = t->cols[i];
        j->cols[i].name = w2l__arena_strndup(&j->arena, t->cols[i].name, strlen(t->cols[i].name));
        if (!j->cols[i].name) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK) memcpy(j->pk, t->pk, t->npk * sizeof *j->pk);
    if (rc == W2L_OK)
        rc = w2l__snap_select(ms->snap.conn, t->db, t->name, t->cols, t->ncols, t->pk, t->npk,
                              r->lo, r->lo_len, r->hi, r->hi_len,
                              r->after.n ? r->after.v : NULL, r->after.len, j->limit, &q, err);
    if (rc == W2L_OK) {
        j->sql = (char *)q.data;
        q.data = NULL;
        rc = w2l__ms_workers_launch(ms, j, err);
    }
    w2l_buf_release(&q);
    if (rc != W2L_OK) {
        w2l__ms_job_free(j);
        return rc == W2L_AGAIN ? W2L_OK : rc;
    }
    r->busy = 1;
    t->in_flight++;
    snap_job **pp = &ms->snap.jobs;
    while (*pp) pp = &(*pp)->next;
    *pp = j;
    ms->snap.rate_rows += (int64_t)j->limit;
    return W2L_OK;
}

/* source.snapshot-max-threads-running: checked at most once a second. */
static int source_busy(mysql_source *ms, int64_t now)
{
    if (ms->cfg.snap_max_running <= 0) return 0;
    if (now < ms->snap.busy_until_ms) return 1;
    if (now - ms->snap.busy_check_ms < 1000) return 0;
    ms->snap.busy_check_ms = now;
    char v[64];
    int null = 1;
    w2l_error e;
    if (query_value(ms,
                    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
                    "VARIABLE_NAME = 'THREADS_RUNNING'",
                    v, sizeof v, &null, &e) != W2L_OK ||
        null)
        return 0;
    long long running = strtoll(v, NULL, 10), ours = 1;
    for (snap_job *j = ms->snap.jobs; j; j = j->next) ours++;
    if (running - ours <= ms->cfg.snap_max_running) return 0;
    if (!ms->snap.busy_until_ms || now - ms->snap.busy_until_ms > 10000)
        w2l__log(W2L_LOG_INFO,
                 "mysql source: the server runs %lld threads (source.snapshot-max-threads-running "
                 "%lld): the snapshot waits",
                 running - ours, (long long)ms->cfg.snap_max_running);
    ms->snap.busy_until_ms = now + 1000;
    return 1;
}

static int rate_allows(mysql_source *ms, int64_t now)
{
    if (ms->cfg.snap_rate <= 0) return 1;
    if (!ms->snap.rate_t0_ms) {
        ms->snap.rate_t0_ms = now;
        ms->snap.rate_rows = 0;
    }
    return ms->snap.rate_rows <= ms->cfg.snap_rate * (now - ms->snap.rate_t0_ms) / 1000;
}

static w2l_rc emit_mark(mysql_source *ms, w2l_emitter *em, const snap_table *t, int end,
                        w2l_error *err);

/* Hands chunks to idle readers: ranges of the active tables in plan order, a range split
 * when readers would be idle, the next pending table when no range is left to start (em
 * NULL: nothing may be emitted now, a re-read's begin waits). */
static w2l_rc schedule(mysql_source *ms, w2l_emitter *em, int *emitted, w2l_error *err)
{
    for (;;) {
        unsigned idle = w2l__ms_workers_idle(ms);
        if (!idle) return W2L_OK;
        int64_t now = w2l__now_ms();
        if (!rate_allows(ms, now) || source_busy(ms, now)) return W2L_OK;
        snap_table *pt = NULL;
        size_t pri = 0;
        unsigned free_ranges = 0;
        snap_table *pending = NULL;
        for (size_t i = 0; i < ms->snap.ntables; i++) {
            snap_table *t = ms->snap.tables[i];
            if (t->state == SNAP_PENDING && !pending) pending = t;
            if (t->state != SNAP_ACTIVE || !t->npk) continue;
            for (size_t k = 0; k < t->nranges; k++)
                if (!t->ranges[k].busy) {
                    if (!pt) pt = t, pri = k;
                    free_ranges++;
                }
        }
        if (pt) {
            if (idle > free_ranges) W2L_TRY(maybe_split(ms, pt, pri, err));
            W2L_TRY(launch(ms, pt, pri, err));
            continue;
        }
        if (!pending || ms->snap.keyless) return W2L_OK;
        if (pending->resync && (ms->txn.open || !em))
            return W2L_OK; /* its mark goes between transactions */
        if (pending->truncate_first && pending->npk) pending->truncate_first = 0;
        w2l_rc arc = activate(ms, pending, err);
        if (arc == W2L_AGAIN) return W2L_OK;
        W2L_TRY(arc);
        if (pending->resync) { /* from here on its writers hold what they write of it */
            W2L_TRY(emit_mark(ms, em, pending, 0, err));
            W2L_TRY(w2l__ms_emit_commit(ms, em, err));
            *emitted = 1;
            return W2L_OK;
        }
    }
}

/* Emits sql as a DDL of t (from w2l__malloc when own: freed). */
static w2l_rc emit_sql(w2l_emitter *em, const snap_table *t, char *sql, int own, w2l_error *err)
{
    W2L_NOMEM_IF(!sql, err);
    w2l_ddl d = {0};
    d.db = t->db;
    d.table = t->name;
    d.sql = sql;
    d.sql_len = strlen(sql);
    w2l_rc rc = w2l_emit_ddl(em, &d, err);
    if (own) w2l__free(sql);
    return rc;
}

/* TRUNCATE TABLE of t: its rows emitted under another key are read again. */
static w2l_rc emit_truncate(w2l_emitter *em, const snap_table *t, w2l_error *err)
{
    return emit_sql(em, t, w2l__asprintf("TRUNCATE TABLE `%s`.`%s`", t->db, t->name), 1, err);
}

/* W2L RESYNC TABLE db.t BEGIN|END: the marks around a re-read (w2l_pipeline_resync(3)). */
static w2l_rc emit_mark(mysql_source *ms, w2l_emitter *em, const snap_table *t, int end,
                        w2l_error *err)
{
    (void)ms;
    char *q = w2l__asprintf("W2L RESYNC TABLE `%s`.`%s` %s", t->db, t->name, end ? "END" : "BEGIN");
    W2L_TRY(emit_sql(em, t, q, 1, err));
    w2l__log(W2L_LOG_INFO, "mysql source: %s.%s %s", t->db, t->name,
             end ? "read again: its rows replace the lake's with the next commit"
                 : "is read again (resync)");
    return W2L_OK;
}

/* A table without rows: its CREATE TABLE, so the lake has it, with its schema. */
static w2l_rc emit_create(w2l_emitter *em, const snap_table *t, w2l_error *err)
{
    return emit_sql(em, t, t->create_sql, 0, err);
}

static void table_finished(mysql_source *ms, snap_table *t)
{
    ms->snap.done_tables++;
    w2l__log(W2L_LOG_DEBUG, "mysql source: snapshot of %s.%s done: %llu rows in %llu chunks",
             t->db, t->name, (unsigned long long)t->rows, (unsigned long long)t->chunks);
    w2l__ms_snap_remove(ms, t);
}

/* A failed chunk whose error a DDL or a lost connection explains is read again. */
static int retryable(const snap_job *j)
{
    switch (j->err.sys_errno) {
    case 1146: /* no such table: renamed or dropped at the chunk's position */
    case 1054: /* unknown column */
    case 1412: /* table definition changed since the snapshot began */
    case 1176: /* key does not exist */
        return 1;
    default: return j->rc == W2L_UNAVAILABLE;
    }
}

static void job_release(mysql_source *ms, snap_job *j)
{
    snap_table *t = j->t;
    t->in_flight--;
    if (!t->in_flight && t->orphan) w2l__ms_snap_table_free(t);
    else if (!t->in_flight && t->state == SNAP_DONE) w2l__ms_snap_table_columns_free(t);
    (void)ms;
    w2l__ms_job_free(j);
}

typedef struct emit_ctx {
    w2l_emitter *em;
    const snap_table *t;
} emit_ctx;

static w2l_rc emit_one(void *ctx, const w2l_value *vals, char **texts, const unsigned long *lens,
                       w2l_error *err)
{
    (void)texts, (void)lens;
    emit_ctx *c = ctx;
    w2l_change ch = {0};
    ch.db = c->t->db;
    ch.table = c->t->name;
    ch.schema = c->t->schema;
    ch.op = W2L_OP_INSERT;
    ch.row = vals;
    ch.ncols = c->t->ncols;
    return w2l_emit_change(c->em, &ch, err);
}

static void warn_coerced(mysql_source *ms, const snap_table *t, uint8_t *coerced)
{
    const char *names[256];
    if (t->ncols > 256) return;
    for (size_t k = 0; k < t->ncols; k++) names[k] = t->cols[k].name;
    w2l__ms_warn_coerced(ms, t->db, t->name, names, t->ncols, coerced);
}

/* The head chunk, done, at its position: its rows and its commit. */
static w2l_rc retire(mysql_source *ms, snap_job *j, w2l_emitter *em, w2l_error *err)
{
    snap_table *t = j->t;
    ms->snap.jobs = j->next;
    snap_range *r = w2l__ms_snap_range_find(t, j->range_id);
    if (r) r->busy = 0;
    ms->snap.rate_rows -= (int64_t)(j->limit - (j->nrows < j->limit ? j->nrows : j->limit));
    if (j->rc != W2L_OK) {
        if (!retryable(j) || ++t->retries > 100) {
            *err = j->err;
            w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
            w2l_rc rc = j->rc;
            job_release(ms, j);
            return rc;
        }
        w2l__log(W2L_LOG_DEBUG, "mysql source: a chunk of %s.%s is read again: %s", t->db,
                 t->name, j->err.msg);
        job_release(ms, j);
        return W2L_OK;
    }
    if (t->state != SNAP_ACTIVE || j->gen != t->gen || !r) { /* a DDL came between */
        job_release(ms, j);
        return W2L_OK;
    }
    if (behind(ms, j->file, j->pos, j->at_file, j->at_pos)) {
        job_release(ms, j);
        return W2L_OK;
    }
    /* the range goes on (or ends) first, and the readers get their next chunks, so they
     * read while this one is emitted (nothing is emitted meanwhile: no resync mark) */
    if (j->nrows < j->limit) {
        w2l__ms_snap_range_remove(t, r);
    } else {
        w2l__ms_key_free(&r->after);
        r->after = j->last;
        memset(&j->last, 0, sizeof j->last);
    }
    r = NULL;
    int unused;
    w2l_rc rc = schedule(ms, NULL, &unused, err);
    if (rc != W2L_OK && rc != W2L_UNAVAILABLE) { /* a lost connection: the loop sees it again */
        job_release(ms, j);
        return rc;
    }
    for (size_t i = 0; i < j->nrows; i++) {
        w2l_change ch = {0};
        ch.db = t->db;
        ch.table = t->name;
        ch.schema = t->schema;
        ch.op = W2L_OP_INSERT;
        ch.row = &j->vals[i * j->ncols];
        ch.ncols = j->ncols;
        rc = w2l_emit_change(em, &ch, err);
        if (rc != W2L_OK) {
            job_release(ms, j);
            return rc;
        }
    }
    warn_coerced(ms, t, j->coerced);
    t->rows += j->nrows;
    t->chunks++;
    ms->snap.done_rows += j->nrows;
    ms->snap.done_chunks++;
    ms->snap.epoch++;
    rc = W2L_OK;
    if (!t->nranges) {
        if (t->resync) rc = emit_mark(ms, em, t, 1, err);
        else if (!t->rows) rc = emit_create(em, t, err); /* a table without rows, with its schema */
        t->resync = 0;
        table_finished(ms, t);
    }
    job_release(ms, j);
    W2L_TRY(rc);
    publish(ms, em);
    return w2l__ms_emit_commit(ms, em, err);
}

/* The coordinator's connection is gone: a keyless table it was reading is read again
 * (nothing of it was committed: its rows and commit go together). */
static void lost_coordinator(mysql_source *ms)
{
    if (ms->snap.keyless) {
        if (ms->snap.keyless->state == SNAP_ACTIVE) ms->snap.keyless->state = SNAP_PENDING;
        ms->snap.keyless = NULL;
        ms->snap.epoch++;
    }
    ms->snap.keyless_failed = 0;
    w2l__my_close(ms->snap.conn);
    ms->snap.conn = NULL;
}

/* The keyless table at its snapshot's position, read whole in that snapshot. */
static w2l_rc read_keyless(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    snap_table *t = ms->snap.keyless;
    ms->snap.keyless = NULL;
    if (t->state != SNAP_ACTIVE || t->gen != ms->snap.kgen) {
        /* dropped, renamed or altered on the way: read again from a new snapshot */
        W2L_TRY(w2l__my_exec(ms->snap.conn, "ROLLBACK", err));
        if (t->state == SNAP_ACTIVE) t->state = SNAP_PENDING;
        ms->snap.epoch++;
        return W2L_OK;
    }
    if (t->truncate_first) W2L_TRY(emit_truncate(em, t, err));
    w2l_buf q = {0};
    w2l_rc rc = w2l__snap_select(ms->snap.conn, t->db, t->name, t->cols, t->ncols, NULL, 0, NULL,
                                 0, NULL, 0, NULL, NULL, 0, &q, err);
    uint8_t *coerced = w2l__calloc(t->ncols / 8 + 1, 1);
    if (rc == W2L_OK && !coerced) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    emit_ctx c = {em, t};
    size_t n = 0;
    if (rc == W2L_OK)
        rc = w2l__snap_rows(ms->snap.conn, (const char *)q.data, t->cols, t->ncols, emit_one, &c,
                            &n, coerced, err);
    w2l_buf_release(&q);
    if (rc == W2L_OK) warn_coerced(ms, t, coerced);
    w2l__free(coerced);
    w2l_error e2;
    w2l__my_exec(ms->snap.conn, rc == W2L_OK ? "COMMIT" : "ROLLBACK", &e2);
    if (rc == W2L_UNAVAILABLE && !n) { /* nothing emitted: read it again */
        ms->snap.keyless = t;
        ms->snap.keyless_failed = 1;
        return rc;
    }
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
        return rc;
    }
    t->rows = n;
    t->chunks = 1;
    t->truncate_first = 0;
    ms->snap.done_rows += n;
    ms->snap.done_chunks++;
    if (t->resync) W2L_TRY(emit_mark(ms, em, t, 1, err));
    else if (!n) W2L_TRY(emit_create(em, t, err));
    t->resync = 0;
    table_finished(ms, t);
    publish(ms, em);
    return w2l__ms_emit_commit(ms, em, err);
}

static int left(const mysql_source *ms)
{
    if (ms->snap.jobs || ms->snap.keyless) return 1;
    for (size_t i = 0; i < ms->snap.ntables; i++)
        if (ms->snap.tables[i]->state != SNAP_DONE) return 1;
    return 0;
}

void w2l__ms_snap_close(mysql_source *ms)
{
    w2l__ms_workers_stop(ms);
    while (ms->snap.jobs) {
        snap_job *j = ms->snap.jobs;
        ms->snap.jobs = j->next;
        job_release(ms, j);
    }
    w2l__my_close(ms->snap.conn);
    ms->snap.conn = NULL;
    ms->snap.keyless = NULL;
}

static w2l_rc finish(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    w2l__ms_snap_close(ms);
    ms->snap.active = 0;
    ms->snap.epoch++;
    int64_t ms_taken = w2l__now_ms() - ms->snap.started_ms;
    w2l__log(W2L_LOG_INFO,
             "mysql source: snapshot done: %llu tables, %llu rows in %llu chunks, %.1f s; "
             "streaming the binlog from %s:%llu",
             (unsigned long long)ms->snap.done_tables, (unsigned long long)ms->snap.done_rows,
             (unsigned long long)ms->snap.done_chunks, (double)ms_taken / 1000.0, ms->at.file,
             (unsigned long long)ms->at.pos);
    w2l__ms_snap_tables_free(ms);
    publish(ms, em);
    if (ms->txn.open) return W2L_OK;
    return w2l__ms_emit_commit(ms, em, err); /* the positions from now on have no "chunks" */
}

w2l_rc w2l__ms_snap_next(mysql_source *ms, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    int64_t deadline = w2l__mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
    W2L_TRY(coordinator(ms, err));
    if (!ms->snap.workers) {
        if (!ms->snap.parallelism) ms->snap.parallelism = parallelism(ms, err);
        W2L_TRY(w2l__ms_workers_start(ms, ms->snap.parallelism, err));
        w2l_error e2;
        if (estimates(ms, &e2) != W2L_OK) { /* only the splits and the time left use them */
            w2l__error_prefix(&e2, "mysql source: the snapshot goes on without row estimates: ");
            w2l__log(W2L_LOG_WARN, "%s", e2.msg);
        }
        publish(ms, em);
        w2l__log(W2L_LOG_INFO,
                 "mysql source: snapshot of %zu tables, %u chunk readers of %zu rows, beside the "
                 "binlog",
                 (size_t)ms->snap.tables_total, ms->snap.parallelism, ms->cfg.chunk_rows);
    }
    for (;;) {
        snap_job *h = ms->snap.jobs;
        int kfirst = ms->snap.keyless &&
                     (!h || w2l__ms_pos_cmp(ms->snap.kfile, ms->snap.kpos, h->file, h->pos) <= 0);
        if (kfirst && reached(ms, ms->snap.kfile, ms->snap.kpos)) {
            w2l_rc krc = read_keyless(ms, em, err);
            if (krc == W2L_UNAVAILABLE && ms->snap.keyless_failed) {
                w2l_error e = *err; /* "mysql source" once, whether err names it or not */
                w2l__error_prefix(&e, "mysql source: snapshot: ");
                w2l__log(W2L_LOG_WARN, "%s; reading it again", e.msg);
                lost_coordinator(ms);
                return W2L_AGAIN;
            }
            return krc;
        }
        if (!kfirst && h && reached(ms, h->file, h->pos)) {
            int64_t now = w2l__mono_ns() / 1000000;
            if (!w2l__ms_workers_wait(ms, h, deadline > now ? (int)(deadline - now) : 0))
                return W2L_AGAIN;
            uint64_t before = ms->snap.done_chunks;
            W2L_TRY(retire(ms, h, em, err));
            if (ms->snap.done_chunks != before) return W2L_OK;
            continue;
        }
        int emitted = 0;
        w2l_rc src = schedule(ms, em, &emitted, err);
        if (src == W2L_UNAVAILABLE) { /* the coordinator's connection: again next time */
            w2l_error e = *err;
            w2l__error_prefix(&e, "mysql source: snapshot: ");
            w2l__log(W2L_LOG_WARN, "%s; connecting again", e.msg);
            lost_coordinator(ms);
            return W2L_AGAIN;
        }
        W2L_TRY(src);
        if (emitted) return W2L_OK;
        if (!left(ms)) return finish(ms, em, err);
        h = ms->snap.jobs;
        const char *lf = NULL;
        uint64_t lp = 0;
        if (h) lf = h->file, lp = h->pos;
        if (ms->snap.keyless && (!lf || w2l__ms_pos_cmp(ms->snap.kfile, ms->snap.kpos, lf, lp) < 0))
            lf = ms->snap.kfile, lp = ms->snap.kpos;
        if (lf && reached(ms, lf, lp)) continue;
        ms->limit.on = lf != NULL;
        if (lf) {
            snprintf(ms->limit.file, sizeof ms->limit.file, "%s", lf);
            ms->limit.pos = lp;
        }
        int64_t now = w2l__mono_ns() / 1000000;
        int wait = deadline > now ? (int)(deadline - now) : 0;
        w2l_rc rc = w2l__ms_binlog_next(ms, em, wait, err);
        ms->limit.on = 0;
        if (rc == W2L_OK) return W2L_OK;
        if (rc != W2L_AGAIN) return rc;
        if (lf && reached(ms, lf, lp)) continue;
        return W2L_AGAIN;
    }
}
