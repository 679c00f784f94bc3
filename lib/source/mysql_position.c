/*
 * The "mysql" source's positions (file:pos, MariaDB's GTID state or MySQL's executed GTID
 * set, snapshot resume windows) and its XA transactions, held from their PREPARE group
 * until XA COMMIT or XA ROLLBACK.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"
#include "../json/json.h"

/* ---- positions ---- */

/* Orders binlog positions: file names of one server differ only in their number. */
int w2l__ms_pos_cmp(const char *fa, uint64_t pa, const char *fb, uint64_t pb)
{
    size_t la = strlen(fa), lb = strlen(fb);
    int c = la != lb ? (la < lb ? -1 : 1) : strcmp(fa, fb);
    return c ? c : pa < pb ? -1 : pa > pb;
}

/* While XA transactions are prepared but not committed, the position also names where
 * the oldest one's PREPARE group starts: a restart reads the binlog from there (its
 * changes are in memory only) and emits nothing up to file:pos, which was emitted. */
size_t w2l__ms_format_window(const mysql_source *ms, char *buf, size_t size)
{
    size_t n = 0;
    if (!ms->snap.nsegs) return 0;
    n += (size_t)snprintf(buf, size, ",\"window\":[");
    for (size_t i = 0; i < ms->snap.nsegs && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n,
                              "%s{\"db\":\"%s\",\"name\":\"%s\",\"file\":\"%s\",\"pos\":%llu}",
                              i ? "," : "", ms->snap.segs[i].db, ms->snap.segs[i].name,
                              ms->snap.segs[i].file, (unsigned long long)ms->snap.segs[i].pos);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, "]");
    return n;
}

/* 1 when an event of db.table ending at file:pos is in a resumed snapshot (skip it). */
int w2l__ms_in_window(const mysql_source *ms, const char *db, const char *table, const char *file,
                      uint64_t pos)
{
    if (!ms->snap.nsegs || !db || !table) return 0;
    const wseg *w = NULL;
    for (size_t i = 0; i < ms->snap.nsegs; i++) {
        int c = strcmp(ms->snap.segs[i].db, db);
        if (c < 0 || (c == 0 && strcmp(ms->snap.segs[i].name, table) <= 0)) w = &ms->snap.segs[i];
    }
    return w && w2l__ms_pos_cmp(file, pos, w->file, w->pos) <= 0;
}

/* The GTID text of the current position into *out: MariaDB's GTID state, or MySQL's
 * executed set ("" the empty set, which is known: a server that never executed a GTID;
 * *out NULL while the set is not known). From w2l__malloc. */
w2l_rc w2l__ms_gtid_text(const mysql_source *ms, char **out, w2l_error *err)
{
    *out = NULL;
    if (ms->server.mysql) {
        if (!ms->at.mygtids_known) return W2L_OK;
        *out = w2l__mygtids_format(ms->at.mygtids);
        W2L_NOMEM_IF(!*out, err);
        return W2L_OK;
    }
    char g[1024];
    w2l__gtid_format(ms->at.gtid, ms->at.ngtid, g, sizeof g);
    *out = w2l__strdup(g);
    W2L_NOMEM_IF(!*out, err);
    return W2L_OK;
}

/* The start of a position object, without its closing brace:
 *   MariaDB: {"file":"binlog.000003","pos":1234,"gtid":"0-1-55"}
 *   MySQL:   {"file":"binlog.000003","pos":1234,"gtid_set":"3e11fa47-...:1-57"}
 * gtid the text of either; for MySQL NULL while the set is not known (gtid_set left out),
 * "" the empty set ("gtid_set":"", a server that has executed no GTID yet). */
w2l_rc w2l__ms_position_json(const mysql_source *ms, w2l_buf *b, const char *file, uint64_t pos,
                             const char *gtid, w2l_error *err)
{
    W2L_TRY(w2l__buf_printf(b, err, "{\"file\":"));
    W2L_TRY(w2l__json_buf_string(b, file, err));
    W2L_TRY(w2l__buf_printf(b, err, ",\"pos\":%llu", (unsigned long long)pos));
    if (!gtid) return W2L_OK;
    W2L_TRY(w2l__buf_printf(b, err, ",\"%s\":", ms->server.mysql ? "gtid_set" : "gtid"));
    return w2l__json_buf_string(b, gtid, err);
}

w2l_rc w2l__ms_emit_commit(mysql_source *ms, w2l_emitter *em, w2l_error *err)
{
    w2l_buf b = {0};
    char *g;
    w2l_rc rc = w2l__ms_gtid_text(ms, &g, err);
    if (rc == W2L_OK) rc = w2l__ms_position_json(ms, &b, ms->at.file, ms->at.pos, g, err);
    w2l__free(g);
    if (rc == W2L_OK && ms->xa.n) {
        const xa_txn *x = ms->xa.pending[0];
        rc = w2l__buf_printf(&b, err, ",\"xa\":");
        if (rc == W2L_OK) rc = w2l__ms_position_json(ms, &b, x->file, x->pos, x->gtid, err);
        if (rc == W2L_OK) rc = w2l__buf_printf(&b, err, "}");
    }
    if (rc == W2L_OK && ms->cfg.filter_json && *ms->cfg.filter_json)
        rc = w2l__buf_printf(&b, err, "%s", ms->cfg.filter_json);
    if (rc == W2L_OK && ms->snap.nsegs) {
        char win[MAX_WSEGS * 900];
        size_t n = w2l__ms_format_window(ms, win, sizeof win);
        rc = w2l_buf_append(&b, win, n < sizeof win ? n : sizeof win - 1, err);
    }
    if (rc == W2L_OK) rc = w2l__ms_snap_json(ms, &b, err);
    if (rc == W2L_OK) rc = w2l__buf_printf(&b, err, "}");
    if (rc == W2L_OK) rc = w2l_emit_commit(em, (const char *)b.data, b.len, err);
    w2l_buf_release(&b);
    return rc;
}

/* The position's GTID text becomes s (MySQL: NULL not known, "" the empty set; MariaDB:
 * NULL or "" no GTID state). */
w2l_rc w2l__ms_set_gtid_text(mysql_source *ms, const char *s, w2l_error *err)
{
    if (ms->server.mysql) return w2l__ms_set_mygtids_text(ms, s, err);
    w2l__bl_gtid *g;
    size_t n;
    W2L_TRY(w2l__gtid_parse(s ? s : "", &g, &n, err));
    w2l__free(ms->at.gtid);
    ms->at.gtid = g;
    ms->at.ngtid = n;
    ms->at.gtid_cap = n;
    return W2L_OK;
}

/* MySQL: the executed set becomes s (NULL: not known; "": the empty set, known). */
w2l_rc w2l__ms_set_mygtids_text(mysql_source *ms, const char *s, w2l_error *err)
{
    w2l__mygtids *g = w2l__mygtids_new();
    W2L_NOMEM_IF(!g, err);
    w2l_rc rc = w2l__mygtids_parse(g, s ? s : "", err);
    if (rc != W2L_OK) {
        w2l__mygtids_free(g);
        return rc;
    }
    w2l__mygtids_free(ms->at.mygtids);
    ms->at.mygtids = g;
    ms->at.mygtids_known = s != NULL;
    return W2L_OK;
}

/* ---- XA transactions ----
 * MariaDB writes an XA transaction's rows in a PREPARE group (GTID flagged PREPARED_XA,
 * rows, QUERY "XA END xid", XA_PREPARE_LOG) and its outcome later as a group of its own
 * (QUERY "XA COMMIT xid" / "XA ROLLBACK xid", xid printed as X'gtrid',X'bqual',format),
 * possibly with other transactions in between. The PREPARE group's changes are copied
 * into memory, not emitted; XA COMMIT emits them as one transaction with the position
 * after the COMMIT; XA ROLLBACK drops them. XA COMMIT ... ONE PHASE is written as an
 * ordinary transaction. Memory: at most source.xa-buffer-bytes over all prepared
 * transactions, past it the job fails naming the transaction (nothing is spilled: after
 * a restart the binlog itself is read again from the oldest pending PREPARE group). */

void w2l__ms_xa_free(xa_txn *x)
{
    if (!x) return;
    for (xa_change *c = x->head; c; c = c->next) w2l_schema_unref((w2l_schema *)c->ch.schema);
    w2l__arena_release(&x->arena);
    w2l__free(x->key);
    w2l__free(x->gtid);
    w2l__free(x);
}

void w2l__ms_xa_drop_cur(mysql_source *ms)
{
    if (ms->xa.cur) ms->xa.bytes -= ms->xa.cur->bytes;
    w2l__ms_xa_free(ms->xa.cur);
    ms->xa.cur = NULL;
}

/* A PREPARE group starts at the current position (outside any transaction). */
w2l_rc w2l__ms_xa_begin(mysql_source *ms, w2l_error *err)
{
    w2l__ms_xa_drop_cur(ms);
    xa_txn *x = w2l__calloc(1, sizeof *x);
    W2L_NOMEM_IF(!x, err);
    w2l__arena_init(&x->arena, 16384);
    snprintf(x->file, sizeof x->file, "%s", ms->at.file);
    x->pos = ms->at.pos;
    ms->xa.cur = x;
    return w2l__ms_gtid_text(ms, &x->gtid, err);
}

static char *arena_dup(w2l__arena *a, const void *p, size_t n)
{
    char *d = w2l__arena_alloc(a, n ? n : 1);
    if (d && n) memcpy(d, p, n);
    return d;
}

/* Copies one change of the PREPARE group being read. */
w2l_rc w2l__ms_xa_add(mysql_source *ms, const w2l_change *ch, w2l_error *err)
{
    xa_txn *x = ms->xa.cur;
    size_t n = ch->ncols, dl = strlen(ch->db) + 1, tl = strlen(ch->table) + 1;
    size_t need = sizeof(xa_change) + n * sizeof(w2l_value) + (n + 7) / 8 + dl + tl;
    for (size_t i = 0; i < n; i++) {
        w2l_type_id id = w2l_schema_field(ch->schema, i)->type.id;
        if (!ch->row[i].is_null && (id == W2L_TYPE_STRING || id == W2L_TYPE_BINARY))
            need += ch->row[i].v.bytes.len;
    }
    if (ms->xa.bytes + need > ms->xa.limit)
        return w2l__fail(
            err, W2L_SOURCE,
            "mysql source: the XA transaction prepared at %s:%llu (GTID state %s) needs "
            "more than %zu bytes of memory until its XA COMMIT, with %zu other(s) pending; raise "
            "source.xa-buffer-bytes",
            x->file, (unsigned long long)x->pos, x->gtid ? x->gtid : "not known", ms->xa.limit,
            ms->xa.n);
    xa_change *c = w2l__arena_alloc(&x->arena, sizeof *c);
    w2l_value *vals = c ? w2l__arena_alloc(&x->arena, (n ? n : 1) * sizeof *vals) : NULL;
    char *db = vals ? arena_dup(&x->arena, ch->db, dl) : NULL;
    char *tb = db ? arena_dup(&x->arena, ch->table, tl) : NULL;
    uint8_t *present =
        tb && ch->present ? (uint8_t *)arena_dup(&x->arena, ch->present, (n + 7) / 8) : NULL;
    W2L_NOMEM_IF(!tb || (ch->present && !present), err);
    for (size_t i = 0; i < n; i++) {
        vals[i] = ch->row[i];
        w2l_type_id id = w2l_schema_field(ch->schema, i)->type.id;
        if (!vals[i].is_null && (id == W2L_TYPE_STRING || id == W2L_TYPE_BINARY)) {
            vals[i].v.bytes.ptr =
                arena_dup(&x->arena, ch->row[i].v.bytes.ptr, ch->row[i].v.bytes.len);
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
    ms->xa.bytes += need;
    return W2L_OK;
}

/* The XID text after "XA END", "XA COMMIT", "XA ROLLBACK": up to trailing blanks/';'. */
char *w2l__ms_xa_key(const char *sql, size_t n, size_t skip_words)
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
w2l_rc w2l__ms_xa_prepared(mysql_source *ms, w2l_error *err)
{
    xa_txn *x = ms->xa.cur;
    if (!x || !x->key)
        return w2l__fail(
            err, W2L_CORRUPT,
            "mysql source: XA PREPARE at %s:%llu without its XA group (GTID flag, XA END)",
            ms->at.file, (unsigned long long)ms->at.pos);
    for (size_t i = 0; i < ms->xa.n; i++)
        if (!strcmp(ms->xa.pending[i]->key, x->key))
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: XA transaction %s prepared twice (at %s:%llu)", x->key,
                             x->file, (unsigned long long)x->pos);
    if (ms->xa.n == ms->xa.cap) {
        size_t nc = ms->xa.cap ? ms->xa.cap * 2 : 8;
        xa_txn **nx = w2l__realloc(ms->xa.pending, nc * sizeof *nx);
        W2L_NOMEM_IF(!nx, err);
        ms->xa.pending = nx;
        ms->xa.cap = nc;
    }
    ms->xa.pending[ms->xa.n++] = x;
    ms->xa.cur = NULL;
    w2l__log(W2L_LOG_DEBUG,
             "mysql source: XA %s prepared at %s:%llu: %zu changes held until its XA COMMIT",
             x->key, x->file, (unsigned long long)x->pos, x->nchanges);
    return W2L_OK;
}

/* XA COMMIT (commit = 1) or XA ROLLBACK of the transaction whose XID text is key. */
w2l_rc w2l__ms_xa_finish(mysql_source *ms, w2l_emitter *em, const char *key, int commit,
                         uint64_t log_pos, w2l_error *err)
{
    size_t i = 0;
    while (i < ms->xa.n && strcmp(ms->xa.pending[i]->key, key)) i++;
    if (i == ms->xa.n) {
        if (!commit || ms->xa.replaying)
            return W2L_OK; /* rolled back unseen, or emitted before the restart */
        return w2l__fail(
            err, W2L_SOURCE,
            "mysql source: XA COMMIT %.200s at %s:%llu: its XA PREPARE lies before the "
            "position the source started from, so its changes were never read; start from a "
            "position "
            "before the PREPARE (startup=gtid:... or file:...)",
            key, ms->at.file, (unsigned long long)log_pos);
    }
    xa_txn *x = ms->xa.pending[i];
    memmove(&ms->xa.pending[i], &ms->xa.pending[i + 1],
            (ms->xa.n - i - 1) * sizeof *ms->xa.pending);
    ms->xa.n--;
    ms->xa.bytes -= x->bytes;
    w2l_rc rc = W2L_OK;
    if (commit && !ms->xa.replaying)
        for (xa_change *c = x->head; c && rc == W2L_OK; c = c->next)
            if (!w2l__ms_in_window(ms, c->ch.db, c->ch.table, ms->at.file, log_pos) &&
                !w2l__ms_snap_hides(ms, c->ch.db, c->ch.table, 0))
                rc = w2l_emit_change(em, &c->ch, err);
    w2l__ms_xa_free(x);
    return rc;
}
