/*
 * The "mysql" source's snapshot driver: the table plan, the consistent snapshot and its
 * hand-over position (lock-free on MariaDB, under a short global read lock on MySQL:
 * source.snapshot-lock), and the chunks read through mysql_snapshot.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"

/* ---- snapshot ---- */

void w2l__ms_snap_tables_free(mysql_source *ms)
{
    for (size_t i = 0; i < ms->snap.ntables; i++) {
        snap_table *t = &ms->snap.tables[i];
        w2l__free(t->db);
        w2l__free(t->name);
        for (size_t k = 0; k < t->ncols; k++) w2l__free((char *)t->cols[k].name);
        w2l__free(t->cols);
        w2l__free(t->pk);
        w2l__free(t->create_sql);
        w2l_schema_unref(t->schema);
    }
    w2l__free(ms->snap.tables);
    ms->snap.tables = NULL;
    ms->snap.ntables = 0;
}

/* `name` with backticks doubled, appended to b. */
static w2l_rc put_ident(w2l_buf *b, const char *name, w2l_error *err)
{
    W2L_TRY(w2l_buf_append(b, "`", 1, err));
    for (const char *p = name; *p; p++)
        W2L_TRY(w2l_buf_append(b, *p == '`' ? "``" : p, *p == '`' ? 2 : 1, err));
    return w2l_buf_append(b, "`", 1, err);
}

/* CREATE TABLE of a tracked definition (information_schema's COLUMN_TYPE, nullability and
 * primary key): what the DDL handler creates an empty table from, so a table without rows
 * is in the lake after the snapshot, with its schema. From w2l__malloc. */
static w2l_rc create_sql(const ttable *t, char **out, w2l_error *err)
{
    w2l_buf b = {0};
    w2l_rc rc = w2l__buf_printf(&b, err, "CREATE TABLE ");
    if (rc == W2L_OK) rc = put_ident(&b, t->db, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&b, ".", 1, err);
    if (rc == W2L_OK) rc = put_ident(&b, t->name, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&b, " (", 2, err);
    for (size_t k = 0; rc == W2L_OK && k < t->ncols; k++) {
        if (k) rc = w2l_buf_append(&b, ", ", 2, err);
        if (rc == W2L_OK) rc = put_ident(&b, t->cols[k].name, err);
        if (rc == W2L_OK)
            rc = w2l__buf_printf(&b, err, " %s%s", t->cols[k].type,
                                 t->cols[k].nullable ? "" : " NOT NULL");
    }
    for (size_t k = 0; rc == W2L_OK && k < t->npk; k++) {
        rc = w2l__buf_printf(&b, err, "%s", k ? ", " : ", PRIMARY KEY (");
        if (rc == W2L_OK) rc = put_ident(&b, t->pk[k], err);
        if (rc == W2L_OK && k + 1 == t->npk) rc = w2l_buf_append(&b, ")", 1, err);
    }
    if (rc == W2L_OK) rc = w2l_buf_append(&b, ")", 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return rc;
    }
    *out = (char *)b.data;
    return W2L_OK;
}

/* The selected tables and their columns, from the tracked definitions. */
w2l_rc w2l__ms_snap_plan(mysql_source *ms, w2l_error *err)
{
    ms->snap.tables = w2l__calloc(ms->defs.n ? ms->defs.n : 1, sizeof *ms->snap.tables);
    W2L_NOMEM_IF(!ms->snap.tables, err);
    /* sorted by db, name for a stable order across restarts */
    size_t *ord = w2l__malloc((ms->defs.n ? ms->defs.n : 1) * sizeof *ord);
    W2L_NOMEM_IF(!ord, err);
    size_t no = 0;
    for (size_t i = 0; i < ms->defs.n; i++)
        if (w2l__ms_table_selected(ms, ms->defs.tab[i].db, ms->defs.tab[i].name)) ord[no++] = i;
    for (size_t i = 1; i < no; i++)
        for (size_t j = i; j > 0; j--) {
            const ttable *a = &ms->defs.tab[ord[j - 1]], *b = &ms->defs.tab[ord[j]];
            int c = strcmp(a->db, b->db);
            if (c < 0 || (c == 0 && strcmp(a->name, b->name) <= 0)) break;
            size_t x = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = x;
        }
    w2l_rc rc = W2L_OK;
    for (size_t oi = 0; rc == W2L_OK && oi < no; oi++) {
        ttable *t = &ms->defs.tab[ord[oi]];
        snap_table *s = &ms->snap.tables[ms->snap.ntables++];
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
            rc = w2l__mysql_type_map_text(t->cols[k].type, strlen(t->cols[k].type), &ms->cfg.topts,
                                          c->name, NULL, &c->ice, &c->mt, err);
            c->nullable = t->cols[k].nullable;
            names[k] = c->name;
            types[k] = c->ice;
            nul[k] = c->nullable;
        }
        for (size_t k = 0; rc == W2L_OK && k < t->npk; k++) {
            long ci = w2l__ms_tt_col(t, t->pk[k]);
            if (ci >= 0) s->pk[s->npk++] = (size_t)ci;
        }
        if (rc == W2L_OK)
            rc = w2l__ms_build_schema(t, names, types, nul, t->ncols, s->pk, s->npk, &s->schema,
                                      err);
        if (rc == W2L_OK) rc = create_sql(t, &s->create_sql, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
        w2l__free(names);
        w2l__free(types);
        w2l__free(nul);
    }
    w2l__free(ord);
    return rc;
}

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

w2l_rc w2l__ms_snap_begin(mysql_source *ms, int fresh, w2l_error *err)
{
    W2L_TRY(w2l__my_connect(&ms->cfg.params, &ms->snap.conn, err));
    W2L_TRY(w2l__my_exec(ms->snap.conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                         err));
    char file[256];
    uint64_t posv = 0;
    char *gtid = NULL;
    w2l_rc rc;
    if (ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL) {
        rc = start_locked(ms, fresh, file, sizeof file, &posv, &gtid, err);
    } else {
        char g[1024];
        rc = start_lock_free(ms, fresh, file, sizeof file, &posv, g, sizeof g, err);
        if (rc == W2L_OK && !(gtid = w2l__strdup(g)))
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK && !ms->server.mysql && strlen(gtid) >= sizeof ms->snap.gtid)
        rc = w2l__fail(err, W2L_SOURCE, "mysql source: GTID state too long (%zu bytes)",
                       strlen(gtid));
    if (rc != W2L_OK) {
        w2l__free(gtid);
        return rc;
    }
    if (fresh) {
        snprintf(ms->snap.file, sizeof ms->snap.file, "%s", file);
        ms->snap.pos = posv;
        if (ms->server.mysql) {
            w2l__free(ms->snap.mygtids);
            ms->snap.mygtids = gtid;
            gtid = NULL;
        } else
            snprintf(ms->snap.gtid, sizeof ms->snap.gtid, "%s", gtid);
    } else if (ms->snap.idx <
               ms->snap.ntables) { /* tables from the current one on are read at this position */
        if (ms->snap.nsegs == MAX_WSEGS) {
            w2l__free(gtid);
            return w2l__fail(
                err, W2L_SOURCE,
                "mysql source: the snapshot was resumed %d times before it reached the "
                "binlog; start it again (new warehouse or startup=initial without state)",
                MAX_WSEGS);
        }
        wseg *w = &ms->snap.segs[ms->snap.nsegs++];
        snprintf(w->db, sizeof w->db, "%s", ms->snap.tables[ms->snap.idx].db);
        snprintf(w->name, sizeof w->name, "%s", ms->snap.tables[ms->snap.idx].name);
        snprintf(w->file, sizeof w->file, "%s", file);
        w->pos = posv;
        if (ms->snap.key) { /* the table in progress: emptied and read again whole */
            ms->snap.key = NULL;
            ms->snap.key_len = NULL;
            ms->snap.truncate = 1;
        }
    }
    w2l__log(W2L_LOG_INFO, "mysql source: snapshot at %s:%llu (GTID %s)%s%s", file,
             (unsigned long long)posv, gtid ? gtid : ms->snap.mygtids ? ms->snap.mygtids : "",
             fresh ? "" : ", resuming an earlier snapshot",
             ms->cfg.snapshot_lock == SNAP_LOCK_FTWRL ? ", read under a global read lock" : "");
    w2l__free(gtid);
    if (fresh) {
        /* the definitions read at open may be older than the snapshot (a DDL in between):
         * read them again now, in the snapshot's session, and plan the snapshot from them,
         * so its SELECTs name the columns the snapshot has */
        while (ms->defs.n) w2l__ms_tt_remove(ms, &ms->defs.tab[ms->defs.n - 1]);
        W2L_TRY(w2l__ms_load_definitions(ms, ms->snap.conn, err));
        w2l__ms_snap_tables_free(ms);
        W2L_TRY(w2l__ms_snap_plan(ms, err));
    }
    return W2L_OK;
}

static w2l_rc snap_position(const mysql_source *ms, w2l_buf *b, const snap_table *t,
                            w2l_error *err)
{
    const char *g = ms->server.mysql ? ms->snap.mygtids : ms->snap.gtid;
    W2L_TRY(w2l__ms_position_json(ms, b, ms->snap.file, ms->snap.pos, g, err));
    if (t) {
        W2L_TRY(w2l__buf_printf(b, err,
                                ",\"snapshot\":{\"index\":%zu,\"table\":\"%s.%s\",\"key\":[",
                                ms->snap.idx, t->db, t->name));
        for (size_t k = 0; ms->snap.key && k < t->npk; k++) {
            W2L_TRY(w2l__buf_printf(b, err, "%s\"", k ? "," : ""));
            for (size_t j = 0; j < ms->snap.key_len[k]; j++)
                W2L_TRY(w2l__buf_printf(b, err, "%02x", (unsigned char)ms->snap.key[k][j]));
            W2L_TRY(w2l__buf_printf(b, err, "\""));
        }
        W2L_TRY(w2l__buf_printf(b, err, "]}"));
    }
    if (ms->cfg.filter_json && *ms->cfg.filter_json)
        W2L_TRY(w2l__buf_printf(b, err, "%s", ms->cfg.filter_json));
    if (ms->snap.nsegs) {
        char win[MAX_WSEGS * 900];
        size_t n = w2l__ms_format_window(ms, win, sizeof win);
        W2L_TRY(w2l_buf_append(b, win, n < sizeof win ? n : sizeof win - 1, err));
    }
    return w2l__buf_printf(b, err, "}");
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
w2l_rc w2l__ms_snapshot_next(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    if (!ms->snap.conn) W2L_TRY(w2l__ms_snap_begin(ms, 0, err));
    while (ms->snap.idx < ms->snap.ntables) {
        snap_table *t = &ms->snap.tables[ms->snap.idx];
        snap_ctx c = {ms, em, t};
        if (ms->snap
                .truncate) { /* rows of it emitted before the restart are at an older position */
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
            ms->snap.truncate = 0;
            w2l__log(
                W2L_LOG_INFO,
                "mysql source: snapshot of %s.%s resumed: the table is read again from its start",
                t->db, t->name);
        }
        char **lk;
        size_t *ll, nrows;
        w2l__arena *a = &ms->snap.arena[ms->snap.arena_cur ^ 1];
        w2l__arena_release(a);
        w2l__arena_init(a, 4096);
        size_t limit = t->npk ? ms->cfg.chunk_rows : 0;
        int first = !ms->snap.key; /* the table's first chunk */
        uint8_t *coerced = w2l__arena_alloc(a, t->ncols / 8 + 1);
        W2L_NOMEM_IF(!coerced, err);
        memset(coerced, 0, t->ncols / 8 + 1);
        w2l_rc rc = w2l__snap_chunk(ms->snap.conn, t->db, t->name, t->cols, t->ncols, t->pk, t->npk,
                                    ms->snap.key, ms->snap.key_len, limit, snap_row, &c, &lk, &ll,
                                    a, &nrows, coerced, err);
        if (rc == W2L_OK) {
            const char **names = w2l__arena_alloc(a, (t->ncols ? t->ncols : 1) * sizeof *names);
            W2L_NOMEM_IF(!names, err);
            for (size_t k = 0; k < t->ncols; k++) names[k] = t->cols[k].name;
            w2l__ms_warn_coerced(ms, t->db, t->name, names, t->ncols, coerced);
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
            return rc;
        }
        int table_done = !t->npk || nrows < limit;
        /* a table without rows: its CREATE TABLE, so the lake has it, with its schema */
        int empty = table_done && first && nrows == 0;
        if (empty) {
            w2l_ddl d = {0};
            d.db = t->db;
            d.table = t->name;
            d.sql = t->create_sql;
            d.sql_len = strlen(t->create_sql);
            W2L_TRY(w2l_emit_ddl(em, &d, err));
        }
        const snap_table *pt = t;
        if (table_done) {
            ms->snap.idx++;
            ms->snap.key = NULL;
            ms->snap.key_len = NULL;
            pt = ms->snap.idx < ms->snap.ntables ? &ms->snap.tables[ms->snap.idx] : NULL;
        } else {
            ms->snap.arena_cur ^= 1;
            ms->snap.key = lk;
            ms->snap.key_len = ll;
        }
        if (nrows == 0 && !empty && pt) continue; /* nothing emitted: no transaction */
        w2l_buf pb = {0};
        rc = snap_position(ms, &pb, pt, err);
        if (rc == W2L_OK) rc = w2l_emit_commit(em, (const char *)pb.data, pb.len, err);
        w2l_buf_release(&pb);
        W2L_TRY(rc);
        if (nrows || empty) return W2L_OK;
    }
    /* snapshot done: hand over to the binlog at the snapshot's position */
    w2l__my_close(ms->snap.conn);
    ms->snap.conn = NULL;
    snprintf(ms->at.file, sizeof ms->at.file, "%s", ms->snap.file);
    ms->at.pos = ms->snap.pos;
    W2L_TRY(w2l__ms_set_gtid_text(ms, ms->server.mysql ? ms->snap.mygtids : ms->snap.gtid, err));
    ms->state = ST_BINLOG;
    w2l__log(W2L_LOG_INFO,
             "mysql source: snapshot of %zu tables done; streaming the binlog from %s:%llu",
             ms->snap.ntables, ms->at.file, (unsigned long long)ms->at.pos);
    return W2L_OK;
}
