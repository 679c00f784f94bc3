/*
 * "mysql" checkpoint state store: checkpoint state in a MariaDB/MySQL table, for jobs
 * whose lake lives where local files are not durable. URI (the part after "mysql:" of
 * --state): //USER:PASS@HOST:PORT/DB[?table=NAME], default table w2l_state.
 *
 *   NAME          (ckpt BIGINT UNSIGNED, k VARBINARY(512), v LONGBLOB, PRIMARY KEY (ckpt, k))
 *   NAME_sealed   (one BOOL PRIMARY KEY, ckpt BIGINT UNSIGNED)      -- one row
 *   NAME_holder   (one BOOL PRIMARY KEY, rec VARBINARY(2048))       -- who holds it
 * One job writes a store: lock takes the server's named lock 'w2l:' + SHA1(DB.NAME) with
 * GET_LOCK (the server drops it when the holder's connection ends, however the process
 * ended), writes its record (state_lock.c) with the epoch one up, and every seal checks in
 * its transaction that the lock is still this connection's: a connection lost and made
 * again has lost it, and the seal fails with W2L_BUSY rather than write beside another.
 * Puts stay in memory until seal, which is one InnoDB transaction: insert every entry of
 * the checkpoint, then move the sealed pointer; COMMIT makes both visible and durable at
 * once. At open, rows above the sealed pointer (a seal that crashed before COMMIT cannot
 * leave any, but an older version might) are deleted. The connection is lib/mysql's
 * (utf8mb4, session time zone '+00:00', 10 s timeouts); USER and PASS are percent-decoded,
 * and the password never appears in messages: they show mysql://USER:****@HOST:PORT/DB.
 */
#include <stdio.h>
#include <stdlib.h>

#include "state_int.h"
#include "../common/thread.h"
#include "../mysql/mysql_client.h"

#define STATE_URI_FORM "mysql://USER:PASS@HOST:PORT/DB[?table=NAME]"

typedef struct mysql_state {
    w2l_state base;
    mtx_t mtx;
    w2l__my *db;
    char table[65];
    char where[300];          /* "mysql://USER:****@HOST:PORT/DB" for messages */
    uint64_t latest;
    w2l__kv_pending pending;
    int locked;               /* lock taken: every seal checks it is still held */
} mysql_state;

/* The named lock of the store's table (the table's name is letters, digits and _ only). */
#define LOCK_NAME_SQL "CONCAT('w2l:',SHA1(CONCAT(DATABASE(),'.','%s')))"

/* The holder record into *h; W2L_NOTFOUND when there is none or it does not parse. */
static w2l_rc read_holder(mysql_state *s, w2l_state_holder *h, w2l_error *err)
{
    char sql[256], rec[2049];
    int null = 1;
    memset(h, 0, sizeof *h);
    snprintf(sql, sizeof sql, "SELECT rec FROM `%s_holder` WHERE one", s->table);
    W2L_TRY(w2l__my_value(s->db, sql, rec, sizeof rec, &null, err));
    return !null && w2l__holder_decode(rec, strlen(rec), h) == 0 ? W2L_OK : W2L_NOTFOUND;
}

/* The table name from the URI's query ("table=NAME"; default w2l_state). */
static w2l_rc parse_table(const char *query, char *table, size_t tsize, w2l_error *err)
{
    snprintf(table, tsize, "w2l_state");
    if (query) {
        if (strncmp(query, "table=", 6) != 0)
            return w2l__fail(err, W2L_CONFIG,
                             "unknown URI parameter '%s' (expected " STATE_URI_FORM ")", query);
        if (strlen(query + 6) >= tsize)
            return w2l__fail(err, W2L_CONFIG, "table name '%s': longer than %zu bytes", query + 6,
                             tsize - 1);
        snprintf(table, tsize, "%s", query + 6);
    }
    if (!*table)
        return w2l__fail(err, W2L_CONFIG, "empty table name (expected " STATE_URI_FORM ")");
    for (const char *c = table; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return w2l__fail(err, W2L_CONFIG, "table name '%s': only letters, digits and _", table);
    return W2L_OK;
}

static w2l_rc load_latest(mysql_state *s, w2l_error *err)
{
    char sql[256], v[32];
    int null;
    snprintf(sql, sizeof sql, "SELECT ckpt FROM `%s_sealed` WHERE one", s->table);
    W2L_TRY(w2l__my_value(s->db, sql, v, sizeof v, &null, err));
    s->latest = null ? 0 : strtoull(v, NULL, 10);
    return W2L_OK;
}

/* Connects to the URI's server and database, then creates the tables when missing. */
static w2l_rc open_db(mysql_state *s, const char *uri, w2l_error *err)
{
    const char *rest = strncmp(uri, "mysql:", 6) == 0 ? uri + 6 : uri;
    if (strncmp(rest, "//", 2) != 0)
        return w2l__fail(err, W2L_CONFIG, "state: expected " STATE_URI_FORM);
    w2l__my_uri u;
    w2l_rc rc = w2l__my_uri_parse(rest, &u, err);
    if (rc == W2L_OK && !*u.db)
        rc = w2l__fail(err, W2L_CONFIG, "URI has no DB (expected " STATE_URI_FORM ")");
    if (rc == W2L_OK) rc = parse_table(u.query, s->table, sizeof s->table, err);
    if (rc == W2L_OK) {
        snprintf(s->where, sizeof s->where, "mysql://%s:****@%s:%u/%s", u.user, u.host, u.port,
                 u.db);
        w2l__my_params p = {
            .host = u.host, .port = u.port, .user = u.user, .pass = u.pass, .db = u.db,
            .connect_timeout_s = 10, .read_timeout_s = 10, .write_timeout_s = 10,
            .what = "state", .label = s->where, .fail_code = W2L_IO,
        };
        rc = w2l__my_connect(&p, &s->db, err);
    } else {
        w2l__error_prefix(err, "state mysql: ");
    }
    w2l__my_uri_free(&u);
    W2L_TRY(rc);
    char sql[512];
    snprintf(
        sql, sizeof sql,
        "CREATE TABLE IF NOT EXISTS `%s` (ckpt BIGINT UNSIGNED NOT NULL, k VARBINARY(512) NOT NULL,"
        " v LONGBLOB NOT NULL, PRIMARY KEY (ckpt, k)) ENGINE=InnoDB",
        s->table);
    W2L_TRY(w2l__my_exec(s->db, sql, err));
    snprintf(sql, sizeof sql,
             "CREATE TABLE IF NOT EXISTS `%s_sealed` (one BOOL NOT NULL PRIMARY KEY, ckpt BIGINT "
             "UNSIGNED NOT NULL)"
             " ENGINE=InnoDB",
             s->table);
    W2L_TRY(w2l__my_exec(s->db, sql, err));
    snprintf(sql, sizeof sql,
             "CREATE TABLE IF NOT EXISTS `%s_holder` (one BOOL NOT NULL PRIMARY KEY, rec "
             "VARBINARY(2048) NOT NULL) ENGINE=InnoDB",
             s->table);
    W2L_TRY(w2l__my_exec(s->db, sql, err));
    W2L_TRY(load_latest(s, err));
    snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt > %llu", s->table,
             (unsigned long long)s->latest);
    return w2l__my_exec(s->db, sql, err);
}

static w2l_rc ms_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                      w2l_state *self, w2l_error *err)
{
    (void)m, (void)conf;
    mysql_state *s = (mysql_state *)self;
    if (!uri) return w2l__fail(err, W2L_CONFIG, "state: expected " STATE_URI_FORM);
    w2l_rc rc = open_db(s, uri, err);
    if (rc != W2L_OK) {
        w2l__my_close(s->db);
        s->db = NULL;
        return rc;
    }
    if (mtx_init(&s->mtx, mtx_plain) != thrd_success) {
        w2l__my_close(s->db);
        s->db = NULL;
        return w2l__fail(err, W2L_ERROR, "state %s: mtx_init failed", s->where);
    }
    return W2L_OK;
}

static w2l_rc ms_put(w2l_state *self, uint64_t ckpt, const char *key, const void *val, size_t len,
                     w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    if (strlen(key) > 512)
        return w2l__fail(err, W2L_MISUSE, "state put: key longer than 512 bytes");
    mtx_lock(&s->mtx);
    w2l__kv_table *t = w2l__kv_pending_get(&s->pending, ckpt, 1, err);
    w2l_rc rc = t ? w2l__kv_put_copy(t, key, val, len, err) : W2L_NOMEM;
    mtx_unlock(&s->mtx);
    return rc;
}

/* Appends to out the value of (ckpt, key) stored in the database. */
static w2l_rc db_get(mysql_state *s, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    w2l_buf sql = {0};
    w2l__my_res *r = NULL;
    w2l_rc rc =
        w2l__buf_printf(&sql, err, "SELECT v FROM `%s` WHERE ckpt = %llu AND k = ", s->table,
                        (unsigned long long)ckpt);
    if (rc == W2L_OK) rc = w2l__my_append_literal(s->db, &sql, key, strlen(key), err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&sql, err);
    if (rc == W2L_OK) rc = w2l__my_query(s->db, (const char *)sql.data, 0, &r, err);
    w2l_buf_release(&sql);
    W2L_TRY(rc);
    char **row;
    unsigned long *lens;
    int k = w2l__my_row(r, &row, &lens, err);
    if (k < 0) rc = err->code;
    else if (k == 0)
        rc = w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key,
                       (unsigned long long)ckpt);
    else rc = w2l_buf_append(out, row[0], lens[0], err);
    w2l__my_res_free(r);
    return rc;
}

static w2l_rc ms_get(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    w2l_rc rc;
    const w2l__kv_table *t =
        ckpt > s->latest ? w2l__kv_pending_get(&s->pending, ckpt, 0, err) : NULL;
    if (ckpt > s->latest) {
        const w2l__kv_entry *e = t ? w2l__kv_find(t, key) : NULL;
        rc = e ? w2l_buf_append(out, e->val, e->len, err)
               : w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key,
                           (unsigned long long)ckpt);
    } else {
        rc = db_get(s, ckpt, key, out, err);
    }
    mtx_unlock(&s->mtx);
    return rc;
}

static w2l_rc ms_keys(w2l_state *self, uint64_t ckpt, const char *prefix,
                      int (*fn)(void *, const char *), void *ctx, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    w2l_buf keys = {0};
    size_t count = 0;
    w2l_rc rc = W2L_OK;
    mtx_lock(&s->mtx);
    if (ckpt > s->latest) {
        rc = w2l__kv_collect_keys(w2l__kv_pending_get(&s->pending, ckpt, 0, err), prefix, &keys,
                                  &count, err);
    } else {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT k FROM `%s` WHERE ckpt = %llu ORDER BY k", s->table,
                 (unsigned long long)ckpt);
        w2l__my_res *r = NULL;
        rc = w2l__my_query(s->db, sql, 0, &r, err);
        size_t pl = strlen(prefix);
        char **row;
        unsigned long *lens;
        int k = 0;
        while (rc == W2L_OK && (k = w2l__my_row(r, &row, &lens, err)) > 0) {
            if (lens[0] < pl || memcmp(row[0], prefix, pl) != 0) continue;
            rc = w2l_buf_append(&keys, row[0], lens[0], err);
            if (rc == W2L_OK) rc = w2l_buf_append(&keys, "", 1, err);
            count++;
        }
        if (rc == W2L_OK && k < 0) rc = err->code;
        w2l__my_res_free(r);
    }
    mtx_unlock(&s->mtx);
    if (rc == W2L_OK) w2l__kv_call_keys(&keys, count, fn, ctx);
    w2l_buf_release(&keys);
    return rc;
}

/* The named lock is still this connection's. */
static w2l_rc check_held(mysql_state *s, w2l_error *err)
{
    char sql[256], v[8];
    int null = 1;
    snprintf(sql, sizeof sql, "SELECT IS_USED_LOCK(" LOCK_NAME_SQL ") = CONNECTION_ID()",
             s->table);
    W2L_TRY(w2l__my_value(s->db, sql, v, sizeof v, &null, err));
    if (!null && strcmp(v, "1") == 0) return W2L_OK;
    return w2l__fail(err, W2L_BUSY,
                     "fenced: the lock on state store %s table %s was lost with its "
                     "connection (another job may hold it now); this job stops so that no "
                     "two write the state",
                     s->where, s->table);
}

static w2l_rc ms_lock(w2l_state *self, w2l_state_holder *me, w2l_state_holder *other,
                      w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    char sql[256], v[8];
    int null = 1;
    mtx_lock(&s->mtx);
    /* a holder that just ended: the server drops its lock once it has seen the
     * connection go, which it learns a moment after the holder's process closed it */
    snprintf(sql, sizeof sql, "SELECT GET_LOCK(" LOCK_NAME_SQL ", 2)", s->table);
    w2l_rc rc = s->locked ? w2l__fail(err, W2L_MISUSE, "state %s: already locked", s->where)
                          : w2l__my_value(s->db, sql, v, sizeof v, &null, err);
    if (rc == W2L_OK && (null || strcmp(v, "1") != 0)) {
        if (read_holder(s, other, err) == W2L_OK || !null) rc = W2L_BUSY;
        else rc = w2l__fail(err, W2L_IO, "state %s: GET_LOCK failed", s->where);
        if (rc == W2L_BUSY)
            snprintf(err->msg, sizeof err->msg, "%s table %s", s->where, s->table);
    }
    w2l_state_holder prev;
    if (rc == W2L_OK) {
        rc = read_holder(s, &prev, err);
        if (rc == W2L_NOTFOUND) rc = W2L_OK;
        me->epoch = prev.epoch + 1;
        me->expires_ms = 0;
    }
    char *text = NULL;
    w2l_buf q = {0};
    if (rc == W2L_OK) rc = w2l__holder_encode(me, &text, err);
    if (rc == W2L_OK) {
        char head[128];
        snprintf(head, sizeof head, "REPLACE INTO `%s_holder` (one, rec) VALUES (1, ", s->table);
        rc = w2l_buf_append(&q, head, strlen(head), err);
        if (rc == W2L_OK) rc = w2l__my_append_literal(s->db, &q, text, strlen(text), err);
        if (rc == W2L_OK) rc = w2l_buf_append(&q, ")", 2, err);
        if (rc == W2L_OK) rc = w2l__my_exec(s->db, (const char *)q.data, err);
    }
    w2l_buf_release(&q);
    w2l__free(text);
    if (rc == W2L_OK) s->locked = 1;
    /* the job that held it until now may have sealed since open read the pointer */
    if (rc == W2L_OK) rc = load_latest(s, err);
    mtx_unlock(&s->mtx);
    return rc;
}

/* The named lock needs no renewal: the server holds it while the connection lives; it
 * is checked, so a job whose connection was lost (and made again) stops. */
static w2l_rc ms_renew(w2l_state *self, int64_t *expires_ms, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    *expires_ms = 0;
    mtx_lock(&s->mtx);
    w2l_rc rc = s->locked ? check_held(s, err) : W2L_OK;
    mtx_unlock(&s->mtx);
    return rc;
}

static w2l_rc ms_holder(w2l_state *self, w2l_state_holder *out, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    char sql[256], v[32];
    int null = 1;
    mtx_lock(&s->mtx);
    snprintf(sql, sizeof sql, "SELECT IS_USED_LOCK(" LOCK_NAME_SQL ")", s->table);
    w2l_rc rc = w2l__my_value(s->db, sql, v, sizeof v, &null, err);
    if (rc == W2L_OK && null) rc = W2L_NOTFOUND;
    if (rc == W2L_OK && read_holder(s, out, err) != W2L_OK) {
        memset(out, 0, sizeof *out); /* held, by a job that wrote no record */
        rc = W2L_OK;
    }
    mtx_unlock(&s->mtx);
    return rc;
}

static w2l_rc ms_seal(w2l_state *self, uint64_t ckpt, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    const w2l__kv_table *t = w2l__kv_pending_get(&s->pending, ckpt, 0, err);
    w2l_rc rc = w2l__my_exec(s->db, "START TRANSACTION", err);
    char sql[256];
    if (rc == W2L_OK && s->locked) rc = check_held(s, err);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt >= %llu", s->table,
                 (unsigned long long)ckpt);
        rc = w2l__my_exec(s->db, sql, err);
    }
    w2l__my_stmt *st = NULL;
    if (rc == W2L_OK && t && t->n) {
        snprintf(sql, sizeof sql, "INSERT INTO `%s` (ckpt, k, v) VALUES (?, ?, ?)", s->table);
        rc = w2l__my_prepare(s->db, sql, &st, err);
        for (size_t i = 0; rc == W2L_OK && i < t->n; i++) {
            w2l__my_arg a[3] = {
                {.is_u64 = 1, .u64 = ckpt},
                {.data = t->e[i].key, .len = strlen(t->e[i].key)},
                {.data = t->e[i].val, .len = t->e[i].len},
            };
            rc = w2l__my_stmt_exec(st, a, 3, err);
            if (rc != W2L_OK) w2l__error_prefix(err, "insert %s: ", t->e[i].key);
        }
    }
    w2l__my_stmt_free(st);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "REPLACE INTO `%s_sealed` (one, ckpt) VALUES (1, %llu)", s->table,
                 (unsigned long long)ckpt);
        rc = w2l__my_exec(s->db, sql, err);
    }
    if (rc == W2L_OK) rc = w2l__my_exec(s->db, "COMMIT", err);
    if (rc == W2L_OK) {
        w2l__kv_table done;
        w2l__kv_pending_take(&s->pending, ckpt, &done);
        w2l__kv_clear(&done);
        s->latest = ckpt;
    } else {
        w2l_error e2; /* the first error is the one to report */
        if (w2l__my_exec(s->db, "ROLLBACK", &e2) != W2L_OK) w2l__log(W2L_LOG_WARN, "%s", e2.msg);
        w2l__error_prefix(err, "seal checkpoint %llu: ", (unsigned long long)ckpt);
    }
    mtx_unlock(&s->mtx);
    return rc;
}

static w2l_rc ms_latest(w2l_state *self, uint64_t *ckpt, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    *ckpt = s->latest;
    mtx_unlock(&s->mtx);
    return *ckpt ? W2L_OK : w2l__fail(err, W2L_NOTFOUND, "no sealed checkpoint");
}

static w2l_rc ms_prune(w2l_state *self, uint64_t keep_from, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    if (keep_from > s->latest) keep_from = s->latest;
    char sql[256];
    snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt < %llu", s->table,
             (unsigned long long)keep_from);
    w2l_rc rc = w2l__my_exec(s->db, sql, err);
    mtx_unlock(&s->mtx);
    return rc;
}

static void ms_close(w2l_state *self)
{
    mysql_state *s = (mysql_state *)self;
    if (s->locked) { /* now, not when the server gets to the disconnect */
        char sql[256], v[8];
        int null;
        w2l_error e;
        snprintf(sql, sizeof sql, "SELECT RELEASE_LOCK(" LOCK_NAME_SQL ")", s->table);
        if (w2l__my_value(s->db, sql, v, sizeof v, &null, &e) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "state %s: %s (the server drops the lock with the connection)",
                     s->where, e.msg);
    }
    w2l__kv_pending_free(&s->pending);
    w2l__my_close(s->db);
    mtx_destroy(&s->mtx);
}

const w2l_state_methods w2l__state_mysql = {
    .version = W2L_STATE_METHODS_V3,
    .name = "mysql",
    .size = sizeof(mysql_state),
    .open = ms_open,
    .put = ms_put,
    .get = ms_get,
    .keys = ms_keys,
    .seal = ms_seal,
    .latest = ms_latest,
    .prune = ms_prune,
    .close = ms_close,
    .lock = ms_lock,
    .holder = ms_holder,
    .renew = ms_renew,
};
