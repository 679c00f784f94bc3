/*
 * The MariaDB/MySQL client of the library (libmariadb), shared by the mysql source, the
 * mysql state store and the sql catalog: the library's process-wide set-up, URIs,
 * connections with the same options for every caller, errors, escaping, queries, rows and
 * prepared statements. No libmariadb type appears here; mysql_client.c is the one file of
 * the library that sets up connections (lib/source/binlog.c and binlog_mysql.c drive
 * replication on one, through w2l__my_handle).
 *
 * Every connection uses the character set utf8mb4 and the session time zone '+00:00' (so
 * TIMESTAMP values read by SELECT are UTC, as the binlog's are), a connect timeout, and no
 * automatic reconnect: a caller that wants to reconnect closes and connects again, so it
 * knows a statement may have been lost with the connection. Messages name the server by a
 * label that never carries the password, and copy the server's message and errno at once.
 */
#ifndef W2L_MYSQL_CLIENT_H
#define W2L_MYSQL_CLIENT_H

#include "../common/common.h"

/* Runs the client library's process-wide set-up, once, from w2l_global_init (lib/builtins.c):
 * mysql_library_init is not thread-safe. Never undone: mysql_library_end() would break a
 * later w2l_global_init(). */
w2l_rc w2l__mariadb_init(w2l_error *err);

/* ---- URIs ---- */

/* A server address parsed from a URI; strings owned, freed by w2l__my_uri_free. */
typedef struct w2l__my_uri {
    char *user, *pass, *host; /* percent-decoded; pass "" when absent */
    unsigned port;            /* 3306 when absent */
    char *db;                 /* percent-decoded; "" when absent */
    char *query;              /* the text after '?', not decoded; NULL when absent */
} w2l__my_uri;

/* Parses [mysql:|mariadb:]//USER[:PASS]@HOST[:PORT]/[DB][?QUERY]; HOST may be [v6]. The
 * user info ends at the last '@' (an unencoded password may hold '@' or '/'). W2L_CONFIG
 * naming what is missing (never the password); *out is cleared first and holds whatever
 * was parsed, so free it in either case. */
w2l_rc w2l__my_uri_parse(const char *uri, w2l__my_uri *out, w2l_error *err);
/* A percent-decoded copy of s[0..n) ("%41" is "A"); NULL when out of memory. */
char *w2l__my_uri_decode(const char *s, size_t n);
/* Frees the strings (the password overwritten first); the struct itself is the caller's. */
void w2l__my_uri_free(w2l__my_uri *u);

/* ---- connections ---- */

enum {
    W2L__MY_FOUND_ROWS = 1 << 0, /* affected rows of an UPDATE count matched rows */
    W2L__MY_CREATE_DB = 1 << 1,  /* create db when it does not exist */
    /* Never let the client fetch the server's RSA key unverified: without TLS, a pinned
     * server_public_key or get_server_public_key, the RSA password plugins of MySQL
     * (caching_sha2_password, sha256_password) are refused, with a message saying how to
     * allow them. libmariadb's plugin otherwise asks the server for its key, unpinned,
     * whenever the server's password cache misses. */
    W2L__MY_PIN_RSA_KEY = 1 << 2
};

/* TLS of a connection (libmariadb uses none unless asked). */
enum {
    W2L__MY_TLS_OFF = 0,
    W2L__MY_TLS_REQUIRED,        /* encrypted, the server's certificate not verified */
    W2L__MY_TLS_VERIFY_CA,       /* and verified against tls_ca; libmariadb then checks the
                                    host name as well, so this equals VERIFY_IDENTITY */
    W2L__MY_TLS_VERIFY_IDENTITY  /* and the certificate names the host */
};

typedef struct w2l__my_params {
    char *host;               /* NULL: 127.0.0.1 */
    unsigned port;            /* 0: 3306 */
    char *user;
    char *pass;               /* never written to a message, log line or position */
    const char *db;           /* NULL or "": none; unknown is W2L_CONFIG (see W2L__MY_CREATE_DB) */
    unsigned connect_timeout_s; /* 0: 10 */
    unsigned read_timeout_s;  /* 0: none */
    unsigned write_timeout_s; /* 0: none */
    int retries;              /* connection attempts after the first, with backoff */
    unsigned flags;           /* W2L__MY_* */
    const char *what;         /* who connects, first in messages: "mysql source", "state" */
    const char *label;        /* how messages name the server; NULL: "user@host:port" */
    w2l_rc fail_code;         /* a failed statement that is not a connection loss; 0: W2L_ERROR */
    int tls;                  /* W2L__MY_TLS_* */
    const char *tls_ca, *tls_cert, *tls_key; /* PEM files; NULL: none */
    /* The server's RSA public key (PEM file) for caching_sha2_password / sha256_password
     * over a connection without TLS; checked before connecting (the client library would
     * otherwise fall back to fetching it unverified when it cannot read the file). */
    const char *server_public_key;
    int get_server_public_key; /* allow fetching the key from the server, unverified */
} w2l__my_params;

typedef struct w2l__my w2l__my;
typedef struct w2l__my_res w2l__my_res;
typedef struct w2l__my_stmt w2l__my_stmt;

/* Connects, retrying retriable failures (server unreachable, too many connections) with
 * exponential backoff p->retries times. Errors: "WHAT: connecting to LABEL: server message
 * (error N)"; W2L_UNAVAILABLE (flagged retriable) when the server could not be reached,
 * W2L_CONFIG for what is wrong before connecting (a TLS or key file that cannot be read,
 * verify-ca without ssl-ca), otherwise the params' fail_code (access denied, unknown host
 * or database, a TLS handshake that failed, no TLS offered, an RSA password plugin
 * refused): the server's answer is a runtime failure, not a usage error. */
w2l_rc w2l__my_connect(const w2l__my_params *p, w2l__my **out, w2l_error *err);
void w2l__my_close(w2l__my *c); /* NULL is a no-op */
/* The MYSQL handle, for lib/source/binlog*.c (replication on a connection of its own). */
void *w2l__my_handle(w2l__my *c);
/* The label, for messages. */
const char *w2l__my_name(const w2l__my *c);

/* Errors of statements: "WHAT LABEL: SQL (first 120 bytes): server message (error N)",
 * sys_errno the server's errno. W2L_UNAVAILABLE (retriable) when the connection was lost,
 * W2L_EXISTS for a duplicate key, otherwise (access denied too) the params' fail_code. */

/* Runs a statement, discarding any result. */
w2l_rc w2l__my_exec(w2l__my *c, const char *sql, w2l_error *err);
/* Rows changed (matched, with W2L__MY_FOUND_ROWS) by the last statement. */
uint64_t w2l__my_affected(w2l__my *c);
/* Runs a query; stream = 1 reads rows as they come (mysql_use_result: no other statement
 * on c until the result is freed), 0 stores them client-side first. */
w2l_rc w2l__my_query(w2l__my *c, const char *sql, int stream, w2l__my_res **out, w2l_error *err);
/* Next row: 1 with row/lens (borrowed until the next call; a NULL column is a NULL
 * pointer), 0 at the end, or -1 with err. */
int w2l__my_row(w2l__my_res *r, char ***row, unsigned long **lens, w2l_error *err);
unsigned w2l__my_ncols(w2l__my_res *r);
void w2l__my_res_free(w2l__my_res *r); /* NULL is a no-op */
/* First column of the first row into buf (NUL-terminated); *null set when NULL or no row. */
w2l_rc w2l__my_value(w2l__my *c, const char *sql, char *buf, size_t size, int *null,
                     w2l_error *err);

/* Escapes len bytes for a '...' literal into to (2 * len + 1 bytes); returns its length. */
size_t w2l__my_escape(w2l__my *c, char *to, const char *from, size_t len);
/* Appends len bytes of s to b as a quoted, escaped string literal: 'it''s' (escaped for
 * the connection's character set). */
w2l_rc w2l__my_append_literal(w2l__my *c, w2l_buf *b, const char *s, size_t len, w2l_error *err);

/* A parameter of a prepared statement: an unsigned integer, or bytes (binary-safe). */
typedef struct w2l__my_arg {
    int is_u64;
    uint64_t u64;
    const void *data;
    size_t len;
} w2l__my_arg;

/* Prepares sql (parameters as '?'); errors as for statements. */
w2l_rc w2l__my_prepare(w2l__my *c, const char *sql, w2l__my_stmt **out, w2l_error *err);
/* Runs st with nargs parameters (copied for the call). */
w2l_rc w2l__my_stmt_exec(w2l__my_stmt *st, const w2l__my_arg *args, size_t nargs, w2l_error *err);
void w2l__my_stmt_free(w2l__my_stmt *st); /* NULL is a no-op */

#endif
