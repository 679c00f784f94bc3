/*
 * The MariaDB/MySQL client (see mysql_client.h): libmariadb's set-up, URIs, connections
 * with retries and exponential backoff, statements, rows, escaping and prepared
 * statements, with mysql_error() copied into the w2l_error at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>

#include "mysql_client.h"

struct w2l__my {
    MYSQL *mysql;
    const char *what;
    w2l_rc fail_code;
    char name[300];
};

struct w2l__my_res {
    w2l__my *c;
    MYSQL_RES *res;
};

struct w2l__my_stmt {
    w2l__my *c;
    MYSQL_STMT *st;
    char sql[121]; /* for messages */
};

w2l_rc w2l__mariadb_init(w2l_error *err)
{
    if (mysql_library_init(0, NULL, NULL) != 0)
        return w2l__fail(err, W2L_ERROR, "the MariaDB client library did not initialise");
    return W2L_OK;
}

/* ------------------------------------------------------------------ URIs ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *w2l__my_uri_decode(const char *s, size_t n)
{
    char *d = w2l__malloc(n + 1), *o = d;
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            *o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return d;
}

#define URI_FORM "mysql://USER:PASS@HOST:PORT/DB"

w2l_rc w2l__my_uri_parse(const char *uri, w2l__my_uri *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    const char *p = uri ? uri : "";
    if (strncmp(p, "mysql:", 6) == 0) p += 6;
    else if (strncmp(p, "mariadb:", 8) == 0) p += 8;
    if (strncmp(p, "//", 2) != 0) return w2l__fail(err, W2L_CONFIG, "URI: expected " URI_FORM);
    p += 2;
    const char *q = strchr(p, '?');
    const char *end = q ? q : p + strlen(p);
    const char *at = NULL;
    for (const char *s = p; s < end; s++)
        if (*s == '@') at = s;
    if (!at) return w2l__fail(err, W2L_CONFIG, "URI has no USER@ part (expected " URI_FORM ")");
    const char *colon = memchr(p, ':', (size_t)(at - p));
    out->user = w2l__my_uri_decode(p, (size_t)((colon ? colon : at) - p));
    out->pass = colon ? w2l__my_uri_decode(colon + 1, (size_t)(at - colon - 1)) : w2l__strdup("");
    W2L_NOMEM_IF(!out->user || !out->pass, err);
    const char *h = at + 1, *slash = memchr(h, '/', (size_t)(end - h));
    if (!slash) return w2l__fail(err, W2L_CONFIG, "URI has no /DB part (expected " URI_FORM ")");
    const char *pc = NULL;
    if (*h == '[') { /* [v6 address]:port */
        const char *rb = memchr(h, ']', (size_t)(slash - h));
        if (!rb) return w2l__fail(err, W2L_CONFIG, "URI: unterminated [ in the host");
        out->host = w2l__strndup(h + 1, (size_t)(rb - h - 1));
        if (rb + 1 < slash && rb[1] != ':')
            return w2l__fail(err, W2L_CONFIG, "URI: '%.*s' after the host's ]",
                             (int)(slash - rb - 1), rb + 1);
        pc = rb + 1 < slash ? rb + 1 : NULL;
    } else {
        pc = memchr(h, ':', (size_t)(slash - h));
        out->host = w2l__strndup(h, (size_t)((pc ? pc : slash) - h));
    }
    W2L_NOMEM_IF(!out->host, err);
    out->port = 3306;
    if (pc) {
        char *e;
        long port = strtol(pc + 1, &e, 10);
        if (e != slash || port < 1 || port > 65535)
            return w2l__fail(err, W2L_CONFIG, "URI: bad port '%.*s' (1 to 65535)",
                             (int)(slash - pc - 1), pc + 1);
        out->port = (unsigned)port;
    }
    out->db = w2l__my_uri_decode(slash + 1, (size_t)(end - slash - 1));
    out->query = q ? w2l__strdup(q + 1) : NULL;
    W2L_NOMEM_IF(!out->db || (q && !out->query), err);
    if (!*out->user || !*out->host)
        return w2l__fail(err, W2L_CONFIG, "URI needs a USER and a HOST (expected " URI_FORM ")");
    return W2L_OK;
}

void w2l__my_uri_free(w2l__my_uri *u)
{
    if (!u) return;
    if (u->pass) { /* leave no copy of the password in freed memory */
        volatile char *p = u->pass;
        while (*p) *p++ = 0;
    }
    w2l__free(u->user);
    w2l__free(u->pass);
    w2l__free(u->host);
    w2l__free(u->db);
    w2l__free(u->query);
    memset(u, 0, sizeof *u);
}

/* ------------------------------------------------------------ connections ---- */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* The server could not be reached or the connection was lost: worth trying again. */
static int retriable(unsigned e)
{
    return e == CR_CONNECTION_ERROR || e == CR_CONN_HOST_ERROR || e == CR_SERVER_GONE_ERROR ||
           e == CR_SERVER_LOST || e == CR_SERVER_LOST_EXTENDED || e == ER_CON_COUNT_ERROR ||
           e == ER_SERVER_SHUTDOWN || e == ER_CONNECTION_KILLED;
}

/* Fails a statement with the server's error e/msg (copied now). */
static w2l_rc stmt_fail(w2l__my *c, const char *sql, unsigned e, const char *msg, w2l_error *err)
{
    /* a statement the user may not run is the server's answer, not bad usage: fail_code */
    w2l_rc code = retriable(e) ? W2L_UNAVAILABLE : e == ER_DUP_ENTRY ? W2L_EXISTS : c->fail_code;
    /* statements are the library's own (no secrets); keep the message short */
    w2l__fail(err, code, "%s %s: %.120s: %s (error %u)", c->what, c->name, sql, msg, e);
    if (err) {
        err->sys_errno = (int)e;
        if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
    }
    return code;
}

static w2l_rc query_fail(w2l__my *c, const char *sql, w2l_error *err)
{
    return stmt_fail(c, sql, mysql_errno(c->mysql), mysql_error(c->mysql), err);
}

/* Selects (and with W2L__MY_CREATE_DB creates) p->db on m; 0 or the server's errno. */
static unsigned use_db(MYSQL *m, const w2l__my_params *p)
{
    if (mysql_select_db(m, p->db) == 0) return 0;
    if (mysql_errno(m) != ER_BAD_DB_ERROR || !(p->flags & W2L__MY_CREATE_DB)) return mysql_errno(m);
    size_t n = strlen(p->db);
    char *sql = w2l__malloc(2 * n + 40);
    if (!sql) return CR_OUT_OF_MEMORY;
    char *o = sql + sprintf(sql, "CREATE DATABASE IF NOT EXISTS `");
    for (size_t i = 0; i < n; i++) { /* the identifier quoted, backticks doubled */
        if (p->db[i] == '`') *o++ = '`';
        *o++ = p->db[i];
    }
    strcpy(o, "`");
    unsigned e = mysql_query(m, sql) != 0 || mysql_select_db(m, p->db) != 0 ? mysql_errno(m) : 0;
    w2l__free(sql);
    return e;
}

/* A file the client library will read: readable now, and (a public key) in PEM. */
static w2l_rc check_file(const char *what, const char *param, const char *path, int pem_key,
                         w2l_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return w2l__fail_errno(err, W2L_CONFIG, errno, "%s: %s file %s", what, param, path);
    char head[64] = "";
    size_t n = fread(head, 1, sizeof head - 1, f);
    head[n] = '\0';
    fclose(f);
    if (pem_key && !strstr(head, "-----BEGIN PUBLIC KEY-----") &&
        !strstr(head, "-----BEGIN RSA PUBLIC KEY-----"))
        return w2l__fail(err, W2L_CONFIG,
                         "%s: %s file %s is not a PEM public key (-----BEGIN PUBLIC KEY-----; "
                         "the server's is its caching_sha2_password_public_key_path)",
                         what, param, path);
    return W2L_OK;
}

/* The plugins a W2L__MY_PIN_RSA_KEY connection allows without TLS or a key: all that
 * libmariadb has but the two that may fetch the server's RSA key. */
#define NO_RSA_PLUGINS                                                                         \
    "mysql_native_password,mysql_old_password,client_ed25519,dialog,mysql_clear_password,"     \
    "auth_gssapi_client,parsec"

static void set_tls_and_auth(MYSQL *m, const w2l__my_params *p)
{
    my_bool yes = 1;
    if (p->tls != W2L__MY_TLS_OFF) {
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &yes);
        if (p->tls_ca) mysql_optionsv(m, MYSQL_OPT_SSL_CA, p->tls_ca);
        if (p->tls_cert) mysql_optionsv(m, MYSQL_OPT_SSL_CERT, p->tls_cert);
        if (p->tls_key) mysql_optionsv(m, MYSQL_OPT_SSL_KEY, p->tls_key);
        my_bool verify = p->tls != W2L__MY_TLS_REQUIRED;
        mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    }
    if (p->server_public_key) mysql_optionsv(m, MYSQL_SERVER_PUBLIC_KEY, p->server_public_key);
    if ((p->flags & W2L__MY_PIN_RSA_KEY) && p->tls == W2L__MY_TLS_OFF && !p->server_public_key &&
        !p->get_server_public_key) {
        mysql_optionsv(m, MARIADB_OPT_RESTRICTED_AUTH, NO_RSA_PLUGINS);
        /* The client library checks the plugin the server's greeting names against that
         * list before it sends anything, and a MySQL 8 server names its default,
         * caching_sha2_password, whatever the account uses. Starting with
         * mysql_native_password instead lets the server switch to the account's plugin;
         * only an account whose plugin needs the RSA exchange is then refused. */
        mysql_optionsv(m, MYSQL_DEFAULT_AUTH, "mysql_native_password");
    }
}

w2l_rc w2l__my_connect(const w2l__my_params *p, w2l__my **out, w2l_error *err)
{
    *out = NULL; /* the client library was set up by w2l_global_init (w2l__mariadb_init) */
    const char *what = p->what ? p->what : "mysql";
    if (p->tls >= W2L__MY_TLS_VERIFY_CA && !p->tls_ca)
        return w2l__fail(err, W2L_CONFIG,
                         "%s: ssl-mode verify-ca / verify-identity needs ssl-ca (the CA "
                         "certificate that signed the server's)",
                         what);
    if (p->server_public_key)
        W2L_TRY(check_file(what, "server-public-key", p->server_public_key, 1, err));
    if (p->tls_ca) W2L_TRY(check_file(what, "ssl-ca", p->tls_ca, 0, err));
    if (p->tls_cert) W2L_TRY(check_file(what, "ssl-cert", p->tls_cert, 0, err));
    if (p->tls_key) W2L_TRY(check_file(what, "ssl-key", p->tls_key, 0, err));
    w2l__my *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    const char *host = p->host ? p->host : "127.0.0.1";
    unsigned port = p->port ? p->port : 3306;
    c->what = p->what ? p->what : "mysql";
    c->fail_code = p->fail_code ? p->fail_code : W2L_ERROR;
    if (p->label) snprintf(c->name, sizeof c->name, "%s", p->label);
    else snprintf(c->name, sizeof c->name, "%s@%s:%u", p->user ? p->user : "", host, port);
    int backoff = 200;
    for (int attempt = 0;; attempt++) {
        c->mysql = mysql_init(NULL);
        if (!c->mysql) {
            w2l__free(c);
            return w2l__fail(err, W2L_NOMEM, "mysql_init: out of memory");
        }
        unsigned ct = p->connect_timeout_s ? p->connect_timeout_s : 10;
        my_bool no = 0;
        mysql_optionsv(c->mysql, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
        if (p->read_timeout_s) mysql_optionsv(c->mysql, MYSQL_OPT_READ_TIMEOUT, &p->read_timeout_s);
        if (p->write_timeout_s)
            mysql_optionsv(c->mysql, MYSQL_OPT_WRITE_TIMEOUT, &p->write_timeout_s);
        mysql_optionsv(c->mysql, MYSQL_OPT_RECONNECT, &no);
        mysql_optionsv(c->mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
        mysql_optionsv(c->mysql, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
        set_tls_and_auth(c->mysql, p);
        unsigned long flags = p->flags & W2L__MY_FOUND_ROWS ? CLIENT_FOUND_ROWS : 0;
        const char *step = "";
        unsigned e;
        if (mysql_real_connect(c->mysql, host, p->user, p->pass ? p->pass : "", NULL, port, NULL,
                               flags)) {
            e = p->db && *p->db ? use_db(c->mysql, p) : 0;
            if (e == 0 && p->tls != W2L__MY_TLS_OFF && !mysql_get_ssl_cipher(c->mysql)) {
                /* the client library falls back to plain text when the server offers no
                 * TLS, whatever it was asked */
                mysql_close(c->mysql);
                w2l_rc code = c->fail_code;
                w2l__fail(err, code,
                          "%s: connecting to %s: TLS was required (ssl-mode), the server "
                          "offers none (have_ssl)",
                          c->what, c->name);
                w2l__free(c);
                return code;
            }
            if (e == 0) {
                *out = c;
                return W2L_OK;
            }
            step = "use database: ";
        } else {
            e = mysql_errno(c->mysql);
        }
        char msg[400];
        snprintf(msg, sizeof msg, "%s",
                 e == CR_OUT_OF_MEMORY ? "out of memory" : mysql_error(c->mysql));
        mysql_close(c->mysql);
        c->mysql = NULL;
        if (!retriable(e) || attempt >= p->retries) {
            /* the server's refusal (a wrong password, an unknown database, a plugin or TLS
             * handshake refused) is a runtime failure of the caller's kind, not usage */
            w2l_rc code = retriable(e)            ? W2L_UNAVAILABLE
                          : e == CR_OUT_OF_MEMORY ? W2L_NOMEM
                                                  : c->fail_code;
            const char *hint =
                e == ER_ACCESS_DENIED_ERROR ? " (wrong user or password?)"
                : e == CR_PLUGIN_NOT_ALLOWED
                    ? " (the server asks for an RSA password plugin, caching_sha2_password or "
                      "sha256_password, which without TLS needs the server's public key: set "
                      "ssl-mode=required or verify-identity, pin the key with "
                      "server-public-key=FILE, or allow fetching it unverified with "
                      "get-server-public-key=true)"
                : e == CR_SSL_CONNECTION_ERROR ? " (TLS: does the server have TLS enabled, and "
                                                 "do ssl-ca and the host name match its "
                                                 "certificate?)"
                                               : "";
            w2l__fail(err, code, "%s: connecting to %s: %s%s (error %u)%s", c->what, c->name, step,
                      msg, e, hint);
            if (err) {
                err->sys_errno = (int)e;
                if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
            }
            w2l__free(c);
            return code;
        }
        w2l__log(W2L_LOG_WARN, "%s: connecting to %s: %s (error %u); retrying in %d ms", c->what,
                 c->name, msg, e, backoff);
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

/* ------------------------------------------------------------- statements ---- */

w2l_rc w2l__my_exec(w2l__my *c, const char *sql, w2l_error *err)
{
    if (mysql_real_query(c->mysql, sql, strlen(sql)) != 0) return query_fail(c, sql, err);
    MYSQL_RES *r = mysql_store_result(c->mysql);
    if (r) mysql_free_result(r);
    else if (mysql_errno(c->mysql)) return query_fail(c, sql, err);
    return W2L_OK;
}

uint64_t w2l__my_affected(w2l__my *c) { return (uint64_t)mysql_affected_rows(c->mysql); }

w2l_rc w2l__my_query(w2l__my *c, const char *sql, int stream, w2l__my_res **out, w2l_error *err)
{
    *out = NULL;
    if (mysql_real_query(c->mysql, sql, strlen(sql)) != 0) return query_fail(c, sql, err);
    MYSQL_RES *r = stream ? mysql_use_result(c->mysql) : mysql_store_result(c->mysql);
    if (!r) {
        if (mysql_errno(c->mysql)) return query_fail(c, sql, err);
        return w2l__fail(err, c->fail_code, "%s %s: %.120s: no result", c->what, c->name, sql);
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
    if (k > 0 && row[0] && size) {
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

w2l_rc w2l__my_append_literal(w2l__my *c, w2l_buf *b, const char *s, size_t len, w2l_error *err)
{
    W2L_TRY(w2l__buf_reserve(b, 2 * len + 3, err));
    char *o = (char *)b->data + b->len;
    *o++ = '\'';
    size_t m = w2l__my_escape(c, o, s, len);
    o[m] = '\'';
    b->len += m + 2;
    return W2L_OK;
}

/* ---------------------------------------------------- prepared statements ---- */

enum { MAX_ARGS = 16 };

w2l_rc w2l__my_prepare(w2l__my *c, const char *sql, w2l__my_stmt **out, w2l_error *err)
{
    *out = NULL;
    w2l__my_stmt *s = w2l__calloc(1, sizeof *s);
    W2L_NOMEM_IF(!s, err);
    s->c = c;
    snprintf(s->sql, sizeof s->sql, "%s", sql);
    s->st = mysql_stmt_init(c->mysql);
    if (!s->st) {
        w2l__free(s);
        return w2l__fail(err, W2L_NOMEM, "%s %s: %.120s: out of memory", c->what, c->name, sql);
    }
    if (mysql_stmt_prepare(s->st, sql, strlen(sql)) != 0) {
        w2l_rc rc = stmt_fail(c, sql, mysql_stmt_errno(s->st), mysql_stmt_error(s->st), err);
        w2l__my_stmt_free(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

w2l_rc w2l__my_stmt_exec(w2l__my_stmt *s, const w2l__my_arg *args, size_t nargs, w2l_error *err)
{
    if (nargs > MAX_ARGS || nargs != mysql_stmt_param_count(s->st))
        return w2l__fail(err, W2L_MISUSE, "%s: %zu parameters for %lu markers (at most %d)", s->sql,
                         nargs, mysql_stmt_param_count(s->st), MAX_ARGS);
    MYSQL_BIND b[MAX_ARGS];
    unsigned long lens[MAX_ARGS];
    unsigned long long u64[MAX_ARGS];
    memset(b, 0, sizeof b);
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].is_u64) {
            u64[i] = args[i].u64;
            b[i].buffer_type = MYSQL_TYPE_LONGLONG;
            b[i].buffer = &u64[i];
            b[i].is_unsigned = 1;
        } else {
            lens[i] = (unsigned long)args[i].len;
            b[i].buffer_type = MYSQL_TYPE_BLOB;
            b[i].buffer = args[i].data ? (void *)args[i].data : (void *)"";
            b[i].buffer_length = lens[i];
            b[i].length = &lens[i];
        }
    }
    if (mysql_stmt_bind_param(s->st, b) != 0 || mysql_stmt_execute(s->st) != 0)
        return stmt_fail(s->c, s->sql, mysql_stmt_errno(s->st), mysql_stmt_error(s->st), err);
    return W2L_OK;
}

void w2l__my_stmt_free(w2l__my_stmt *s)
{
    if (!s) return;
    if (s->st) mysql_stmt_close(s->st);
    w2l__free(s);
}
