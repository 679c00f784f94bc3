/*
 * Connections of the "mysql" source to MariaDB/MySQL (libmariadb): connect with retries
 * and exponential backoff, run statements and queries, copy mysql_error() into the
 * w2l_error at once (STYLE.md section 4). Messages name the server as user@host:port and
 * never carry the password. Every connection uses utf8mb4 and the session time zone
 * '+00:00', so TIMESTAMP values read by SELECT are UTC, as the binlog's are.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>

#include "mysql_int.h"
#include "../common/thread.h"

struct w2l__my {
    MYSQL *mysql;
    char name[300];
};

struct w2l__my_res {
    w2l__my *c;
    MYSQL_RES *res;
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int retriable(unsigned e)
{
    return e == CR_CONNECTION_ERROR || e == CR_CONN_HOST_ERROR || e == CR_SERVER_GONE_ERROR ||
           e == CR_SERVER_LOST || e == ER_CON_COUNT_ERROR || e == ER_SERVER_SHUTDOWN || e == 1927 /* killed */;
}

w2l_rc w2l__my_connect(const w2l__my_params *p, w2l__my **out, w2l_error *err)
{
    *out = NULL; /* the client library was set up by w2l_global_init (common/mariadb.c) */
    w2l__my *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    snprintf(c->name, sizeof c->name, "%s@%s:%u", p->user ? p->user : "", p->host ? p->host : "127.0.0.1",
             p->port ? p->port : 3306);
    int backoff = 200;
    for (int attempt = 0;; attempt++) {
        c->mysql = mysql_init(NULL);
        if (!c->mysql) {
            w2l__free(c);
            return w2l__fail(err, W2L_NOMEM, "mysql_init: out of memory");
        }
        unsigned ct = p->connect_timeout_s ? p->connect_timeout_s : 10;
        mysql_optionsv(c->mysql, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
        if (p->read_timeout_s) mysql_optionsv(c->mysql, MYSQL_OPT_READ_TIMEOUT, &p->read_timeout_s);
        mysql_optionsv(c->mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
        mysql_optionsv(c->mysql, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
        if (mysql_real_connect(c->mysql, p->host ? p->host : "127.0.0.1", p->user, p->pass ? p->pass : "", NULL,
                               p->port ? p->port : 3306, NULL, 0)) {
            *out = c;
            return W2L_OK;
        }
        unsigned e = mysql_errno(c->mysql);
        char msg[400];
        snprintf(msg, sizeof msg, "%s", mysql_error(c->mysql));
        mysql_close(c->mysql);
        c->mysql = NULL;
        if (!retriable(e) || attempt >= p->retries) {
            w2l_rc code = retriable(e) ? W2L_UNAVAILABLE : W2L_CONFIG;
            const char *hint = e == ER_ACCESS_DENIED_ERROR ? " (wrong user or password?)" : "";
            w2l__fail(err, code, "mysql source: connecting to %s: %s (error %u)%s", c->name, msg, e, hint);
            err->sys_errno = (int)e;
            if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
            w2l__free(c);
            return code;
        }
        w2l__log(W2L_LOG_WARN, "mysql source: connecting to %s: %s (error %u); retrying in %d ms", c->name, msg, e,
                 backoff);
        sleep_ms(backoff);
        backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
    }
}

void w2l__my_close(w2l__my *c)
{
    if (!c) return;
    if (c->mysql) mysql_close(c->mysql);
    w2l__free(c);
}

void *w2l__my_handle(w2l__my *c) { return c->mysql; }
const char *w2l__my_name(const w2l__my *c) { return c->name; }

static w2l_rc query_fail(w2l__my *c, const char *sql, w2l_error *err)
{
    unsigned e = mysql_errno(c->mysql);
    w2l_rc code = retriable(e) ? W2L_UNAVAILABLE : W2L_SOURCE;
    /* statements are ours (no secrets); keep the message short */
    w2l__fail(err, code, "mysql source %s: %.120s: %s (error %u)", c->name, sql, mysql_error(c->mysql), e);
    err->sys_errno = (int)e;
    if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
    return code;
}

w2l_rc w2l__my_exec(w2l__my *c, const char *sql, w2l_error *err)
{
    if (mysql_real_query(c->mysql, sql, strlen(sql)) != 0) return query_fail(c, sql, err);
    MYSQL_RES *r = mysql_store_result(c->mysql);
    if (r) mysql_free_result(r);
    return W2L_OK;
}

w2l_rc w2l__my_query(w2l__my *c, const char *sql, int stream, w2l__my_res **out, w2l_error *err)
{
    *out = NULL;
    if (mysql_real_query(c->mysql, sql, strlen(sql)) != 0) return query_fail(c, sql, err);
    MYSQL_RES *r = stream ? mysql_use_result(c->mysql) : mysql_store_result(c->mysql);
    if (!r) {
        if (mysql_errno(c->mysql)) return query_fail(c, sql, err);
        return w2l__fail(err, W2L_SOURCE, "mysql source %s: %.120s: no result", c->name, sql);
    }
    w2l__my_res *res = w2l__malloc(sizeof *res);
    if (!res) {
        mysql_free_result(r);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    res->c = c;
    res->res = r;
    *out = res;
    return W2L_OK;
}

int w2l__my_row(w2l__my_res *r, char ***row, unsigned long **lens, w2l_error *err)
{
    MYSQL_ROW mr = mysql_fetch_row(r->res);
    if (!mr) {
        if (mysql_errno(r->c->mysql)) {
            query_fail(r->c, "fetch", err);
            return -1;
        }
        return 0;
    }
    *row = mr;
    *lens = mysql_fetch_lengths(r->res);
    return 1;
}

unsigned w2l__my_ncols(w2l__my_res *r) { return mysql_num_fields(r->res); }

void w2l__my_res_free(w2l__my_res *r)
{
    if (!r) return;
    mysql_free_result(r->res);
    w2l__free(r);
}

w2l_rc w2l__my_value(w2l__my *c, const char *sql, char *buf, size_t size, int *null, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c, sql, 0, &r, err));
    char **row;
    unsigned long *lens;
    int k = w2l__my_row(r, &row, &lens, err);
    *null = 1;
    if (size) buf[0] = '\0';
    if (k > 0 && row[0]) {
        *null = 0;
        size_t n = lens[0] < size ? lens[0] : size - 1;
        memcpy(buf, row[0], n);
        buf[n] = '\0';
    }
    w2l__my_res_free(r);
    return k < 0 ? err->code : W2L_OK;
}

size_t w2l__my_escape(w2l__my *c, char *to, const char *from, size_t len)
{
    return mysql_real_escape_string(c->mysql, to, from, (unsigned long)len);
}
