/*
 * "mysql" checkpoint state store: checkpoint state in a MariaDB/MySQL table, for jobs
 * whose lake lives where local files are not durable. URI (the part after "mysql:" of
 * --state): //USER:PASS@HOST:PORT/DB[?table=NAME], default table w2l_state.
 *
 *   NAME          (ckpt BIGINT UNSIGNED, k VARBINARY(512), v LONGBLOB, PRIMARY KEY (ckpt, k))
 *   NAME_sealed   (one BOOL PRIMARY KEY, ckpt BIGINT UNSIGNED)      -- one row
 *   NAME_holder   (one BOOL PRIMARY KEY, rec VARBINARY(2048))       -- who holds it
 *
 * One job writes a store, holding it two ways at once:
 *   the lock   the server's named lock 'w2l:' + SHA1(DB.NAME), taken with GET_LOCK on the
 *              store's connection; the server drops it when that connection ends, however
 *              the process ended. Every seal checks in its transaction that the lock is
 *              still this connection's, so a seal can never land beside another holder's.
 *   the lease  the holder's record (state_lock.c) in NAME_holder, with the epoch one up
 *              at each taking and an expiry: renewal (ha.renew-interval) writes
 *              expires-ms = now + ha.lease-timeout, in a transaction that first checks
 *              the lock is still this connection's.
 * A process paused with its connection open (SIGSTOP, a long swap) keeps the lock, so a
 * taker whose GET_LOCK fails reads the record: once its lease ran out (plus a small
 * margin for clocks: hosts must agree to within a fraction of the lease), it kills the
 * holder's connection (KILL CONNECTION on the id IS_USED_LOCK gives; the same user may,
 * another needs CONNECTION ADMIN, SUPER on older servers) and takes the lock. The server
 * rolls back whatever transaction the killed connection had open. A holder without a
 * record, or whose record has no expiry (an older version), is never killed.
 * A taker that finds the lock free while the record's lease still runs (the holder lost
 * its connection, say to a server restart, and may still commit by its own clock until
 * its lease ends) holds the lock and waits that lease out first; a holder of this host
 * whose process is gone is not waited for.
 * A connection lost while the store is held is made again at the next use, but the lock
 * is never taken again on it: the holder is fenced (W2L_BUSY, "fenced: ...") and stops.
 *
 * Puts stay in memory until seal, which is one InnoDB transaction: insert every entry of
 * the checkpoint, then move the sealed pointer; COMMIT makes both visible and durable at
 * once. At open, rows above the sealed pointer (a seal that crashed before COMMIT cannot
 * leave any, but an older version might) are deleted. The connection is lib/mysql's
 * (utf8mb4, session time zone '+00:00', 10 s timeouts, no automatic reconnect); USER and
 * PASS are percent-decoded, and the password never appears in messages: they show
 * mysql://USER:****@HOST:PORT/DB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "state_int.h"
#include "../common/thread.h"
#include "../mysql/mysql_client.h"

#define STATE_URI_FORM "mysql://USER:PASS@HOST:PORT/DB[?table=NAME]"

typedef struct mysql_state {
    w2l_state base;
    mtx_t mtx;
    w2l__my *db;              /* NULL after a lost connection: made again at the next use */
    char *uri;                /* as given (with the password), to connect again */
    char table[65];
    char where[300];          /* "mysql://USER:****@HOST:PORT/DB" for messages */
    uint64_t latest;
    w2l__kv_pending pending;
    int locked;               /* lock taken: every seal checks it is still held */
    int fenced;               /* the lock was lost: seal, prune and renew fail */
    int kill_warned;          /* the privilege to kill a lapsed holder was missing */
    int64_t lease_ms;         /* ha.lease-timeout */
    w2l_state_holder me;      /* this process's record while locked */
} mysql_state;

/* How far past a lease's end a taker waits before it kills the holder's connection: room
 * for the clocks of two hosts to differ. */
static int64_t margin_ms(const mysql_state *s)
{
    int64_t m = s->lease_ms / 8;
    return m < 250 ? 250 : m > 2000 ? 2000 : m;
}

static void nap_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (thrd_sleep(&ts, &ts) == -1) {}
}

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

/* Connects to the URI's server and database. */
static w2l_rc connect_db(mysql_state *s, w2l_error *err)
{
    const char *uri = s->uri;
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
    return rc;
}

/* The connection, made again when a lost one was closed (never retaking the lock). */
static w2l_rc ensure_db(mysql_state *s, w2l_error *err)
{
    return s->db ? W2L_OK : connect_db(s, err);
}

/* After a statement failed with rc: a lost connection (W2L_UNAVAILABLE) is closed, to be
 * made again at the next use; the lock went with it, so a holder is fenced from now on. */
static w2l_rc after_fail(mysql_state *s, w2l_rc rc)
{
    if (rc != W2L_UNAVAILABLE) return rc;
    w2l__my_close(s->db);
    s->db = NULL;
    if (s->locked) s->fenced = 1;
    return rc;
}

/* Connects, then creates the tables when missing. */
static w2l_rc open_db(mysql_state *s, w2l_error *err)
{
    W2L_TRY(connect_db(s, err));
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

/* Frees the copy of the URI, its password overwritten first. */
static void free_uri(mysql_state *s)
{
    if (!s->uri) return;
    volatile char *p = s->uri;
    while (*p) *p++ = 0;
    w2l__free(s->uri);
    s->uri = NULL;
}

static w2l_rc ms_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                      w2l_state *self, w2l_error *err)
{
    (void)m;
    mysql_state *s = (mysql_state *)self;
    if (!uri) return w2l__fail(err, W2L_CONFIG, "state: expected " STATE_URI_FORM);
    s->lease_ms = 15000;
    w2l_rc rc = conf ? w2l_conf_get_int(conf, "ha.lease-timeout", &s->lease_ms, err) : W2L_OK;
    s->uri = rc == W2L_OK ? w2l__strdup(uri) : NULL;
    if (rc == W2L_OK && !s->uri) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = open_db(s, err);
    if (rc == W2L_OK && mtx_init(&s->mtx, mtx_plain) != thrd_success)
        rc = w2l__fail(err, W2L_ERROR, "state %s: mtx_init failed", s->where);
    if (rc != W2L_OK) {
        w2l__my_close(s->db);
        s->db = NULL;
        free_uri(s);
    }
    return rc;
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
        rc = ensure_db(s, err);
        if (rc == W2L_OK) rc = after_fail(s, db_get(s, ckpt, key, out, err));
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
        rc = ensure_db(s, err);
        if (rc == W2L_OK) rc = after_fail(s, w2l__my_query(s->db, sql, 0, &r, err));
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
        rc = after_fail(s, rc);
    }
    mtx_unlock(&s->mtx);
    if (rc == W2L_OK) w2l__kv_call_keys(&keys, count, fn, ctx);
    w2l_buf_release(&keys);
    return rc;
}

/* The error of a holder that lost the store: names the new holder when it can. */
static w2l_rc fenced_error(mysql_state *s, const char *why, w2l_error *err)
{
    s->fenced = 1;
    w2l_state_holder cur;
    w2l_error e;
    if (ensure_db(s, &e) == W2L_OK && after_fail(s, read_holder(s, &cur, &e)) == W2L_OK &&
        cur.epoch != s->me.epoch) {
        char since[32];
        w2l__format_utc_ms(cur.since_ms, since, sizeof since);
        return w2l__fail(err, W2L_BUSY,
                         "fenced: job \"%s\" (pid %lld on host %s, since %s) took the state "
                         "store %s table %s over at epoch %llu (this job's: %llu), and this "
                         "job's lock %s; this job stops",
                         cur.job, cur.pid, cur.host, since, s->where, s->table,
                         (unsigned long long)cur.epoch, (unsigned long long)s->me.epoch,
                         strncmp(why, "was lost", 8) == 0 ? "was lost with its connection"
                                                          : "is no longer its connection's");
    }
    return w2l__fail(err, W2L_BUSY,
                     "fenced: the lock on state store %s table %s %s (another job may hold it "
                     "now); this job stops so that no two write the state",
                     s->where, s->table, why);
}

#define WHY_LOST "was lost with its connection (killed by a job that took the store over " \
                 "once this one's lease had run out, or the server went away)"

/* The named lock is still this connection's (W2L_BUSY, fenced, once it is not). */
static w2l_rc check_held(mysql_state *s, w2l_error *err)
{
    if (s->fenced) return fenced_error(s, WHY_LOST, err);
    char sql[256], v[8];
    int null = 1;
    snprintf(sql, sizeof sql, "SELECT IS_USED_LOCK(" LOCK_NAME_SQL ") = CONNECTION_ID()",
             s->table);
    w2l_rc rc = ensure_db(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_value(s->db, sql, v, sizeof v, &null, err));
    if (rc == W2L_OK && (null || strcmp(v, "1") != 0))
        return fenced_error(s, "is no longer this connection's", err);
    if (s->fenced) return fenced_error(s, WHY_LOST, err);
    return rc;
}

/* Writes h as the holder record; when check, in a transaction that first makes sure the
 * lock is still this connection's. */
static w2l_rc write_holder(mysql_state *s, const w2l_state_holder *h, int check, w2l_error *err)
{
    char *text = NULL;
    w2l_buf q = {0};
    char head[128];
    W2L_TRY(w2l__holder_encode(h, &text, err));
    snprintf(head, sizeof head, "REPLACE INTO `%s_holder` (one, rec) VALUES (1, ", s->table);
    w2l_rc rc = w2l_buf_append(&q, head, strlen(head), err);
    if (rc == W2L_OK) rc = w2l__my_append_literal(s->db, &q, text, strlen(text), err);
    if (rc == W2L_OK) rc = w2l_buf_append(&q, ")", 2, err);
    w2l__free(text);
    if (rc == W2L_OK && check) rc = after_fail(s, w2l__my_exec(s->db, "START TRANSACTION", err));
    if (rc == W2L_OK && check) rc = check_held(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_exec(s->db, (const char *)q.data, err));
    if (rc == W2L_OK && check) rc = after_fail(s, w2l__my_exec(s->db, "COMMIT", err));
    if (rc != W2L_OK && check && s->db) {
        w2l_error e2;
        if (w2l__my_exec(s->db, "ROLLBACK", &e2) != W2L_OK) after_fail(s, e2.code);
    }
    w2l_buf_release(&q);
    return rc;
}

/* The lock is held by a connection whose holder's lease ran out (h, read before): kills
 * that connection. 1 when the lock may be free now (killed, or gone meanwhile), 0 when
 * the holder is left alone (alive after all, or the kill not allowed: warned once). */
static int kill_lapsed(mysql_state *s, const w2l_state_holder *h, w2l_error *err)
{
    char sql[300];
    w2l__my_res *r = NULL;
    snprintf(sql, sizeof sql,
             "SELECT IS_USED_LOCK(" LOCK_NAME_SQL "), rec FROM `%s_holder` WHERE one", s->table,
             s->table);
    if (after_fail(s, w2l__my_query(s->db, sql, 0, &r, err)) != W2L_OK) return 0;
    char **row;
    unsigned long *lens;
    unsigned long long id = 0;
    w2l_state_holder now;
    int k = w2l__my_row(r, &row, &lens, err), go = 0;
    if (k > 0 && !row[0]) go = 1; /* free meanwhile */
    else if (k > 0 && row[1] && w2l__holder_decode(row[1], lens[1], &now) == 0 &&
             now.epoch == h->epoch && now.expires_ms == h->expires_ms) {
        id = strtoull(row[0], NULL, 10);
        go = 2;
    }
    w2l__my_res_free(r);
    if (go != 2) return go;
    char since[32];
    w2l__format_utc_ms(h->expires_ms, since, sizeof since);
    snprintf(sql, sizeof sql, "KILL CONNECTION %llu", id);
    w2l_error e;
    w2l_rc rc = after_fail(s, w2l__my_exec(s->db, sql, &e));
    if (rc == W2L_OK || e.sys_errno == 1094 /* unknown thread: gone meanwhile */) {
        w2l__log(W2L_LOG_WARN,
                 "state %s table %s: the lease of job \"%s\" (pid %lld on host %s, epoch "
                 "%llu) ran out at %s UTC, %.1f s ago, with its connection still open (a "
                 "stopped process?); its connection %llu is killed so that this job takes "
                 "the store over",
                 s->where, s->table, h->job, h->pid, h->host, (unsigned long long)h->epoch,
                 since, (double)(w2l__now_ms() - h->expires_ms) / 1000.0, id);
        return 1;
    }
    if (!s->kill_warned) {
        s->kill_warned = 1;
        w2l__log(W2L_LOG_WARN,
                 "state %s table %s: the lease of job \"%s\" (pid %lld on host %s) ran out at "
                 "%s UTC but its connection %llu cannot be killed: %s; run this job as the "
                 "same database user as that one, or grant this user CONNECTION ADMIN "
                 "(SUPER before MariaDB 10.5 and MySQL 8.0); waiting for that job to end",
                 s->where, s->table, h->job, h->pid, h->host, since, id, e.msg);
    }
    return 0;
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
                          : ensure_db(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_value(s->db, sql, v, sizeof v, &null, err));
    if (rc == W2L_OK && (null || strcmp(v, "1") != 0)) {
        /* held: by a holder whose lease ran out (it stopped with its connection open)? */
        w2l_state_holder h;
        if (!null && after_fail(s, read_holder(s, &h, err)) == W2L_OK && h.expires_ms > 1 &&
            w2l__now_ms() > h.expires_ms + margin_ms(s) && kill_lapsed(s, &h, err) && s->db) {
            rc = after_fail(s, w2l__my_value(s->db, sql, v, sizeof v, &null, err));
            if (rc == W2L_OK && !null && strcmp(v, "1") == 0) goto taken;
        }
        if (rc == W2L_OK && s->db && (read_holder(s, other, err) == W2L_OK || !null))
            rc = W2L_BUSY;
        else if (rc == W2L_OK) rc = w2l__fail(err, W2L_IO, "state %s: GET_LOCK failed", s->where);
        if (rc == W2L_BUSY)
            snprintf(err->msg, sizeof err->msg, "%s table %s", s->where, s->table);
    }
taken:;
    w2l_state_holder prev;
    if (rc == W2L_OK) {
        rc = after_fail(s, read_holder(s, &prev, err));
        if (rc == W2L_NOTFOUND) rc = W2L_OK;
    }
    /* free, but the last holder's lease still runs: it lost its connection (a server
     * restart) and may commit by its own clock until that lease ends; wait it out */
    int64_t now = w2l__now_ms();
    if (rc == W2L_OK && prev.expires_ms > now && !w2l__holder_gone(&prev)) {
        int64_t wait = prev.expires_ms + margin_ms(s) - now;
        if (wait > 2 * s->lease_ms + margin_ms(s)) wait = 2 * s->lease_ms + margin_ms(s);
        w2l__log(W2L_LOG_INFO,
                 "state %s table %s: free, but the lease of job \"%s\" (pid %lld on host %s) "
                 "runs %.1f s more: waiting that out before taking the store over",
                 s->where, s->table, prev.job, prev.pid, prev.host, (double)wait / 1000.0);
        nap_ms(wait);
        now = w2l__now_ms();
    }
    if (rc == W2L_OK) {
        me->epoch = prev.epoch + 1;
        me->expires_ms = now + s->lease_ms;
        rc = write_holder(s, me, 0, err);
    }
    if (rc == W2L_OK) {
        s->locked = 1;
        s->me = *me;
    }
    /* the job that held it until now may have sealed since open read the pointer */
    if (rc == W2L_OK) rc = after_fail(s, load_latest(s, err));
    mtx_unlock(&s->mtx);
    return rc;
}

/* Checks the lock is still this connection's and moves the lease's end on. */
static w2l_rc ms_renew(w2l_state *self, int64_t *expires_ms, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    *expires_ms = 0;
    mtx_lock(&s->mtx);
    w2l_rc rc = W2L_OK;
    if (s->locked) {
        w2l_state_holder next = s->me;
        next.expires_ms = w2l__now_ms() + s->lease_ms;
        rc = s->fenced ? check_held(s, err) : ensure_db(s, err);
        if (rc == W2L_OK) rc = write_holder(s, &next, 1, err);
        if (rc == W2L_OK) {
            s->me = next;
            *expires_ms = next.expires_ms;
        } else if (s->fenced && rc != W2L_BUSY) {
            rc = check_held(s, err);
        }
    }
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
    w2l_rc rc = ensure_db(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_value(s->db, sql, v, sizeof v, &null, err));
    if (rc == W2L_OK && null) rc = W2L_NOTFOUND;
    if (rc == W2L_OK && after_fail(s, read_holder(s, out, err)) != W2L_OK) {
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
    w2l_rc rc = s->fenced ? check_held(s, err) : ensure_db(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_exec(s->db, "START TRANSACTION", err));
    char sql[256];
    if (rc == W2L_OK && s->locked) rc = check_held(s, err);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt >= %llu", s->table,
                 (unsigned long long)ckpt);
        rc = after_fail(s, w2l__my_exec(s->db, sql, err));
    }
    w2l__my_stmt *st = NULL;
    if (rc == W2L_OK && t && t->n) {
        snprintf(sql, sizeof sql, "INSERT INTO `%s` (ckpt, k, v) VALUES (?, ?, ?)", s->table);
        rc = after_fail(s, w2l__my_prepare(s->db, sql, &st, err));
        for (size_t i = 0; rc == W2L_OK && i < t->n; i++) {
            w2l__my_arg a[3] = {
                {.is_u64 = 1, .u64 = ckpt},
                {.data = t->e[i].key, .len = strlen(t->e[i].key)},
                {.data = t->e[i].val, .len = t->e[i].len},
            };
            rc = after_fail(s, w2l__my_stmt_exec(st, a, 3, err));
            if (rc != W2L_OK) w2l__error_prefix(err, "insert %s: ", t->e[i].key);
        }
    }
    w2l__my_stmt_free(st);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "REPLACE INTO `%s_sealed` (one, ckpt) VALUES (1, %llu)", s->table,
                 (unsigned long long)ckpt);
        rc = after_fail(s, w2l__my_exec(s->db, sql, err));
    }
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_exec(s->db, "COMMIT", err));
    if (rc == W2L_OK) {
        w2l__kv_table done;
        w2l__kv_pending_take(&s->pending, ckpt, &done);
        w2l__kv_clear(&done);
        s->latest = ckpt;
    } else {
        w2l_error e2; /* the first error is the one to report */
        if (s->db && w2l__my_exec(s->db, "ROLLBACK", &e2) != W2L_OK) {
            w2l__log(W2L_LOG_WARN, "%s", e2.msg);
            after_fail(s, e2.code);
        }
        /* the lock lost with the connection: the server rolled the transaction back */
        if (rc == W2L_UNAVAILABLE && s->fenced) rc = fenced_error(s, WHY_LOST, err);
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
    char sql[384];
    int n = snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt < %llu", s->table,
                     (unsigned long long)keep_from);
    if (s->locked) /* only while the lock is this connection's */
        snprintf(sql + n, sizeof sql - (size_t)n,
                 " AND IS_USED_LOCK(" LOCK_NAME_SQL ") = CONNECTION_ID()", s->table);
    w2l_rc rc = s->fenced ? check_held(s, err) : ensure_db(s, err);
    if (rc == W2L_OK) rc = after_fail(s, w2l__my_exec(s->db, sql, err));
    if (rc == W2L_OK && s->locked && !w2l__my_affected(s->db)) rc = check_held(s, err);
    else if (rc == W2L_UNAVAILABLE && s->fenced) rc = check_held(s, err);
    mtx_unlock(&s->mtx);
    return rc;
}

static void ms_close(w2l_state *self)
{
    mysql_state *s = (mysql_state *)self;
    if (s->locked && !s->fenced && s->db) { /* now, not when the server gets to the disconnect */
        char sql[256], v[8];
        int null;
        w2l_error e;
        /* the lease ended (kept with its epoch), so a taker need not wait it out */
        w2l_state_holder done = s->me;
        done.expires_ms = 1; /* 0 would read as a lock held until its process ends */
        if (write_holder(s, &done, 1, &e) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "state %s: cannot end the lease: %s", s->where, e.msg);
        snprintf(sql, sizeof sql, "SELECT RELEASE_LOCK(" LOCK_NAME_SQL ")", s->table);
        if (s->db && w2l__my_value(s->db, sql, v, sizeof v, &null, &e) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "state %s: %s (the server drops the lock with the connection)",
                     s->where, e.msg);
    }
    w2l__kv_pending_free(&s->pending);
    w2l__my_close(s->db);
    free_uri(s);
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
