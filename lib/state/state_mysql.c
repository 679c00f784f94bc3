/*
 * "mysql" checkpoint state store: checkpoint state in a MariaDB/MySQL table, for jobs
 * whose lake lives where local files are not durable. URI (the part after "mysql:" of
 * --state): //USER:PASS@HOST:PORT/DB[?table=NAME], default table w2l_state.
 *
 *   NAME          (ckpt BIGINT UNSIGNED, k VARBINARY(512), v LONGBLOB, PRIMARY KEY (ckpt, k))
 *   NAME_sealed   (one BOOL PRIMARY KEY, ckpt BIGINT UNSIGNED)      -- one row
 * Puts stay in memory until seal, which is one InnoDB transaction: insert every entry of
 * the checkpoint, then move the sealed pointer; COMMIT makes both visible and durable at
 * once. At open, rows above the sealed pointer (a seal that crashed before COMMIT cannot
 * leave any, but an older version might) are deleted. The only file including libmariadb
 * for state; the password never appears in messages.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>

#include "state_int.h"
#include "../common/thread.h"

typedef struct mysql_state {
    w2l_state base;
    mtx_t mtx;
    MYSQL *db;
    char table[65];
    char where[300];          /* "mysql://USER:****@HOST:PORT/DB" for messages */
    uint64_t latest;
    w2l__kv_pending pending;
} mysql_state;

static w2l_rc db_fail(mysql_state *s, w2l_error *err, const char *what)
{
    unsigned e = mysql_errno(s->db);
    w2l_rc code = e >= 2000 && e < 3000 ? W2L_UNAVAILABLE : W2L_IO; /* client errors: connection */
    w2l__fail(err, code, "state %s: %s: %s", s->where, what, mysql_error(s->db));
    if (err) err->sys_errno = (int)e;
    return code;
}

static w2l_rc exec(mysql_state *s, const char *sql, w2l_error *err)
{
    if (mysql_real_query(s->db, sql, strlen(sql)) != 0) return db_fail(s, err, "query");
    MYSQL_RES *r = mysql_store_result(s->db);
    if (r) mysql_free_result(r);
    return W2L_OK;
}

/* Parses //USER:PASS@HOST:PORT/DB[?table=NAME] in place. */
static w2l_rc parse_uri(char *u, char **user, char **pass, char **host, unsigned *port, char **dbn,
                        char *table, size_t tsize, w2l_error *err)
{
    if (strncmp(u, "//", 2) != 0) goto bad;
    u += 2;
    char *at = strrchr(u, '@');
    if (!at) goto bad;
    *at = '\0';
    *user = u;
    char *colon = strchr(u, ':');
    *pass = colon ? (*colon = '\0', colon + 1) : (char *)"";
    *host = at + 1;
    char *slash = strchr(*host, '/');
    if (!slash) goto bad;
    *slash = '\0';
    *dbn = slash + 1;
    char *q = strchr(*dbn, '?');
    snprintf(table, tsize, "w2l_state");
    if (q) {
        *q = '\0';
        if (strncmp(q + 1, "table=", 6) != 0) goto bad;
        snprintf(table, tsize, "%s", q + 7);
    }
    char *pc = strchr(*host, ':');
    *port = 3306;
    if (pc) {
        *pc = '\0';
        *port = (unsigned)strtoul(pc + 1, NULL, 10);
    }
    for (const char *c = table; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return w2l__fail(err, W2L_CONFIG, "state mysql: table name '%s': only letters, digits and _", table);
    if (!**dbn || !**host || !**user || !*table) goto bad;
    return W2L_OK;
bad:
    return w2l__fail(err, W2L_CONFIG, "state: expected mysql://USER:PASS@HOST:PORT/DB[?table=NAME]");
}

static w2l_rc load_latest(mysql_state *s, w2l_error *err)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT ckpt FROM `%s_sealed` WHERE one", s->table);
    if (mysql_real_query(s->db, sql, strlen(sql)) != 0) return db_fail(s, err, "read the sealed checkpoint");
    MYSQL_RES *r = mysql_store_result(s->db);
    if (!r) return db_fail(s, err, "read the sealed checkpoint");
    MYSQL_ROW row = mysql_fetch_row(r);
    s->latest = row && row[0] ? strtoull(row[0], NULL, 10) : 0;
    mysql_free_result(r);
    return W2L_OK;
}

static w2l_rc ms_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri, w2l_state *self,
                      w2l_error *err)
{
    (void)m, (void)conf;
    mysql_state *s = (mysql_state *)self;
    if (!uri) return w2l__fail(err, W2L_CONFIG, "state: expected mysql://USER:PASS@HOST:PORT/DB[?table=NAME]");
    char *copy = w2l__strdup(uri);
    W2L_NOMEM_IF(!copy, err);
    char *user = NULL, *pass = NULL, *host = NULL, *dbn = NULL;
    unsigned port = 0;
    w2l_rc rc = parse_uri(copy, &user, &pass, &host, &port, &dbn, s->table, sizeof s->table, err);
    if (rc != W2L_OK) {
        w2l__free(copy);
        return rc;
    }
    snprintf(s->where, sizeof s->where, "mysql://%s:****@%s:%u/%s", user, host, port, dbn);
    s->db = mysql_init(NULL);
    if (!s->db) {
        w2l__free(copy);
        return w2l__fail(err, W2L_NOMEM, "state %s: out of memory", s->where);
    }
    unsigned timeout = 10;
    mysql_optionsv(s->db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_optionsv(s->db, MYSQL_OPT_READ_TIMEOUT, &timeout);
    mysql_optionsv(s->db, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
    if (!mysql_real_connect(s->db, host, user, pass, dbn, port, NULL, 0)) {
        rc = db_fail(s, err, "connect");
        unsigned e = mysql_errno(s->db);
        if (e == 1045 || e == 1044 || e == 1049) { /* access denied, unknown database */
            if (err) err->code = W2L_CONFIG;
            rc = W2L_CONFIG;
        }
    }
    w2l__free(copy);
    char sql[512];
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql,
                 "CREATE TABLE IF NOT EXISTS `%s` (ckpt BIGINT UNSIGNED NOT NULL, k VARBINARY(512) NOT NULL,"
                 " v LONGBLOB NOT NULL, PRIMARY KEY (ckpt, k)) ENGINE=InnoDB", s->table);
        rc = exec(s, sql, err);
    }
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql,
                 "CREATE TABLE IF NOT EXISTS `%s_sealed` (one BOOL NOT NULL PRIMARY KEY, ckpt BIGINT UNSIGNED NOT NULL)"
                 " ENGINE=InnoDB", s->table);
        rc = exec(s, sql, err);
    }
    if (rc == W2L_OK) rc = load_latest(s, err);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt > %llu", s->table, (unsigned long long)s->latest);
        rc = exec(s, sql, err);
    }
    if (rc != W2L_OK) {
        mysql_close(s->db);
        s->db = NULL;
        return rc;
    }
    mtx_init(&s->mtx, mtx_plain);
    return W2L_OK;
}

static w2l_rc ms_put(w2l_state *self, uint64_t ckpt, const char *key, const void *val, size_t len,
                     w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    if (strlen(key) > 512) return w2l__fail(err, W2L_MISUSE, "state put: key longer than 512 bytes");
    mtx_lock(&s->mtx);
    w2l__kv_table *t = w2l__kv_pending_get(&s->pending, ckpt, 1, err);
    w2l_rc rc = t ? w2l__kv_put_copy(t, key, val, len, err) : W2L_NOMEM;
    mtx_unlock(&s->mtx);
    return rc;
}

/* Appends to out the value of (ckpt, key) stored in the database. */
static w2l_rc db_get(mysql_state *s, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    size_t kl = strlen(key);
    char *esc = w2l__malloc(kl * 2 + 1);
    W2L_NOMEM_IF(!esc, err);
    mysql_real_escape_string(s->db, esc, key, (unsigned long)kl);
    char *sql = w2l__asprintf("SELECT v FROM `%s` WHERE ckpt = %llu AND k = '%s'", s->table,
                              (unsigned long long)ckpt, esc);
    w2l__free(esc);
    W2L_NOMEM_IF(!sql, err);
    w2l_rc rc = W2L_OK;
    if (mysql_real_query(s->db, sql, strlen(sql)) != 0) rc = db_fail(s, err, "get");
    w2l__free(sql);
    if (rc != W2L_OK) return rc;
    MYSQL_RES *r = mysql_store_result(s->db);
    if (!r) return db_fail(s, err, "get");
    MYSQL_ROW row = mysql_fetch_row(r);
    unsigned long *lens = row ? mysql_fetch_lengths(r) : NULL;
    if (!row) rc = w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key, (unsigned long long)ckpt);
    else rc = w2l_buf_append(out, row[0], lens[0], err);
    mysql_free_result(r);
    return rc;
}

static w2l_rc ms_get(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    w2l_rc rc;
    const w2l__kv_table *t = ckpt > s->latest ? w2l__kv_pending_get(&s->pending, ckpt, 0, err) : NULL;
    if (ckpt > s->latest) {
        const w2l__kv_entry *e = t ? w2l__kv_find(t, key) : NULL;
        rc = e ? w2l_buf_append(out, e->val, e->len, err)
               : w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key, (unsigned long long)ckpt);
    } else {
        rc = db_get(s, ckpt, key, out, err);
    }
    mtx_unlock(&s->mtx);
    return rc;
}

static w2l_rc ms_keys(w2l_state *self, uint64_t ckpt, const char *prefix, int (*fn)(void *, const char *),
                      void *ctx, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    w2l_buf keys = {0};
    size_t count = 0;
    w2l_rc rc = W2L_OK;
    mtx_lock(&s->mtx);
    if (ckpt > s->latest) {
        rc = w2l__kv_collect_keys(w2l__kv_pending_get(&s->pending, ckpt, 0, err), prefix, &keys, &count, err);
    } else {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT k FROM `%s` WHERE ckpt = %llu ORDER BY k", s->table, (unsigned long long)ckpt);
        MYSQL_RES *r = NULL;
        if (mysql_real_query(s->db, sql, strlen(sql)) != 0 || !(r = mysql_store_result(s->db))) {
            rc = db_fail(s, err, "keys");
        } else {
            size_t pl = strlen(prefix);
            MYSQL_ROW row;
            while (rc == W2L_OK && (row = mysql_fetch_row(r)) != NULL) {
                unsigned long *lens = mysql_fetch_lengths(r);
                if (lens[0] < pl || memcmp(row[0], prefix, pl) != 0) continue;
                rc = w2l_buf_append(&keys, row[0], lens[0], err);
                if (rc == W2L_OK) rc = w2l_buf_append(&keys, "", 1, err);
                count++;
            }
            mysql_free_result(r);
        }
    }
    mtx_unlock(&s->mtx);
    if (rc == W2L_OK) w2l__kv_call_keys(&keys, count, fn, ctx);
    w2l_buf_release(&keys);
    return rc;
}

static w2l_rc ms_seal(w2l_state *self, uint64_t ckpt, w2l_error *err)
{
    mysql_state *s = (mysql_state *)self;
    mtx_lock(&s->mtx);
    const w2l__kv_table *t = w2l__kv_pending_get(&s->pending, ckpt, 0, err);
    w2l_rc rc = exec(s, "START TRANSACTION", err);
    char sql[256];
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt >= %llu", s->table, (unsigned long long)ckpt);
        rc = exec(s, sql, err);
    }
    MYSQL_STMT *st = NULL;
    if (rc == W2L_OK && t && t->n) {
        st = mysql_stmt_init(s->db);
        snprintf(sql, sizeof sql, "INSERT INTO `%s` (ckpt, k, v) VALUES (?, ?, ?)", s->table);
        if (!st || mysql_stmt_prepare(st, sql, strlen(sql)) != 0) rc = db_fail(s, err, "seal: prepare");
        for (size_t i = 0; rc == W2L_OK && i < t->n; i++) {
            unsigned long long ck = ckpt;
            unsigned long kl = (unsigned long)strlen(t->e[i].key), vl = (unsigned long)t->e[i].len;
            MYSQL_BIND b[3];
            memset(b, 0, sizeof b);
            b[0].buffer_type = MYSQL_TYPE_LONGLONG;
            b[0].buffer = &ck;
            b[0].is_unsigned = 1;
            b[1].buffer_type = MYSQL_TYPE_BLOB;
            b[1].buffer = t->e[i].key;
            b[1].buffer_length = kl;
            b[1].length = &kl;
            b[2].buffer_type = MYSQL_TYPE_BLOB;
            b[2].buffer = t->e[i].val ? (void *)t->e[i].val : (void *)"";
            b[2].buffer_length = vl;
            b[2].length = &vl;
            if (mysql_stmt_bind_param(st, b) != 0 || mysql_stmt_execute(st) != 0) {
                w2l__fail(err, W2L_IO, "state %s: seal: insert %s: %s", s->where, t->e[i].key, mysql_stmt_error(st));
                rc = W2L_IO;
            }
        }
    }
    if (st) mysql_stmt_close(st);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "REPLACE INTO `%s_sealed` (one, ckpt) VALUES (1, %llu)", s->table,
                 (unsigned long long)ckpt);
        rc = exec(s, sql, err);
    }
    if (rc == W2L_OK && mysql_commit(s->db) != 0) rc = db_fail(s, err, "seal: commit");
    if (rc == W2L_OK) {
        w2l__kv_table done;
        w2l__kv_pending_take(&s->pending, ckpt, &done);
        w2l__kv_clear(&done);
        s->latest = ckpt;
    } else {
        mysql_rollback(s->db);
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
    snprintf(sql, sizeof sql, "DELETE FROM `%s` WHERE ckpt < %llu", s->table, (unsigned long long)keep_from);
    w2l_rc rc = exec(s, sql, err);
    mtx_unlock(&s->mtx);
    return rc;
}

static void ms_close(w2l_state *self)
{
    mysql_state *s = (mysql_state *)self;
    w2l__kv_pending_free(&s->pending);
    mysql_close(s->db);
    mtx_destroy(&s->mtx);
}

const w2l_state_methods w2l__state_mysql = {
    W2L_STATE_METHODS_V1, "mysql", sizeof(mysql_state), NULL, ms_open, ms_put, ms_get, ms_keys,
    ms_seal, ms_latest, ms_prune, ms_close,
};
