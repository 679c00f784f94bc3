/*
 * The "sql" catalog: table pointers kept in MariaDB/MySQL in the schema of Apache Iceberg's
 * JDBC catalog (w2l-design(7) sections 5 and 6), so engines configured with that catalog on the
 * same database see the same tables. The only file of the iceberg module that talks to
 * MariaDB, through lib/mysql (mysql_client.h).
 *
 *   iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
 *                  previous_metadata_location[, iceberg_type]) PK(catalog, namespace, name)
 *   iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)
 *
 * Both are created at open when missing. A table made by an older JDBC catalog has no
 * iceberg_type column; that is detected at open and the column is then left out of every
 * statement. Rows of type VIEW are never treated as tables.
 *
 * URI: sql:mysql://USER:PASS@HOST[:PORT]/DB[?name=CATALOG] (USER and PASS percent-decoded;
 * CATALOG defaults to "w2l"). The password never appears in messages: they show
 * mysql://USER:****@HOST:PORT/DB.
 *
 * Commit = compare-and-swap. The new metadata is first written through the file IO as
 * <dir>/NNNNN-<uuid>.metadata.json (W2L_CREATE_EXCL; NNNNN one more than the base's, as the
 * JDBC catalog names them; <dir> is the base's directory, or <warehouse>/<ns>/<table>/metadata
 * for a new table), then one statement swaps it in:
 *   UPDATE iceberg_tables SET metadata_location=new, previous_metadata_location=base
 *    WHERE catalog_name=.. AND table_namespace=.. AND table_name=.. AND metadata_location=base
 * No row matched: another writer moved the table, W2L_CONFLICT, and the file is removed. A
 * create is an INSERT; a duplicate key is W2L_EXISTS. Because the file name is unique, a
 * statement whose outcome was lost with the connection is settled by reading the row back:
 * if it holds the new location, the commit happened.
 *
 * Connection: one per catalog instance, with connect/read/write timeouts of a few seconds;
 * a missing database is created. A statement that fails because the connection is gone
 * reconnects once and runs again; failing that, W2L_UNAVAILABLE (retriable) with the
 * MariaDB errno in sys_errno. Values are escaped for the live connection, never pasted raw.
 *
 * Thread safety: a mutex serialises the statements of one instance, so one instance may be
 * shared by several threads (libmariadb forbids concurrent use of one connection). List
 * callbacks run without the mutex held, so they may call back into the catalog.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "../mysql/mysql_client.h"
#include "iceberg.h"

enum { CONNECT_TIMEOUT_S = 5, READ_TIMEOUT_S = 10, WRITE_TIMEOUT_S = 10 };

typedef struct sql_catalog {
    w2l_catalog base;
    w2l_fileio *io;
    char *warehouse;
    char *catalog_name;
    w2l__my_uri uri;   /* user, password, host, port, database */
    char shown[256];   /* mysql://USER:****@HOST:PORT/DB, for messages */
    mtx_t mu;
    int have_mu;
    w2l__my *conn;     /* NULL while disconnected */
    int has_type;      /* iceberg_tables has the iceberg_type column */
} sql_catalog;

/* ------------------------------------------------------------------ URI ---- */

static w2l_rc parse_uri(sql_catalog *c, const char *uri, w2l_error *err)
{
    const char *p = uri;
    if (strncmp(p, "sql:", 4) == 0) p += 4;
    if (strncmp(p, "mysql://", 8) != 0 && strncmp(p, "mariadb://", 10) != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "sql catalog: URI must be sql:mysql://USER:PASS@HOST:PORT/DB");
    w2l_rc rc = w2l__my_uri_parse(p, &c->uri, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "sql catalog: ");
        return rc;
    }
    if (!*c->uri.db)
        return w2l__fail(
            err, W2L_CONFIG,
            "sql catalog: URI needs USER, HOST and DB (mysql://USER:PASS@HOST:PORT/DB)");
    const char *name = "w2l";
    size_t nlen = 3;
    for (const char *s = c->uri.query; s && *s;) {
        const char *amp = strchr(s, '&');
        size_t len = amp ? (size_t)(amp - s) : strlen(s);
        if (len > 5 && strncmp(s, "name=", 5) == 0) {
            name = s + 5;
            nlen = len - 5;
        } else {
            return w2l__fail(err, W2L_CONFIG,
                             "sql catalog: unknown URI parameter '%.*s' (known: name)", (int)len,
                             s);
        }
        s = amp ? amp + 1 : NULL;
    }
    c->catalog_name = w2l__my_uri_decode(name, nlen);
    W2L_NOMEM_IF(!c->catalog_name, err);
    snprintf(c->shown, sizeof c->shown, "mysql://%s:****@%s:%u/%s", c->uri.user, c->uri.host,
             c->uri.port, c->uri.db);
    return W2L_OK;
}

/* ------------------------------------------------------------- connection ---- */

static void disconnect(sql_catalog *c)
{
    w2l__my_close(c->conn);
    c->conn = NULL;
}

static w2l_rc db_connect(sql_catalog *c, w2l_error *err)
{
    w2l__my_params p = {
        .host = c->uri.host, .port = c->uri.port, .user = c->uri.user, .pass = c->uri.pass,
        .db = c->uri.db, .connect_timeout_s = CONNECT_TIMEOUT_S, .read_timeout_s = READ_TIMEOUT_S,
        .write_timeout_s = WRITE_TIMEOUT_S, .what = "sql catalog", .label = c->shown,
        .fail_code = W2L_ERROR,
        /* affected rows of an UPDATE count matched rows; the database is made when missing */
        .flags = W2L__MY_FOUND_ROWS | W2L__MY_CREATE_DB,
    };
    return w2l__my_connect(&p, &c->conn, err);
}

/* A statement: sql with each '?' replaced by the next parameter as an escaped, quoted
 * string literal (NULL: SQL NULL). */
typedef struct stmt {
    const char *sql;
    const char *const *params;
    size_t nparams;
} stmt;

static w2l_rc build(sql_catalog *c, const stmt *s, w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    size_t k = 0;
    for (const char *p = s->sql; *p; p++) {
        if (*p != '?') {
            W2L_TRY(w2l_buf_append(out, p, 1, err));
            continue;
        }
        if (k >= s->nparams) return w2l__fail(err, W2L_MISUSE, "sql catalog: too few parameters");
        const char *v = s->params[k++];
        if (!v) {
            W2L_TRY(w2l_buf_append(out, "NULL", 4, err));
            continue;
        }
        W2L_TRY(w2l__my_append_literal(c->conn, out, v, strlen(v), err));
    }
    return w2l__buf_cstr(out, err);
}

/* Runs s under the mutex: connects when needed, and on a lost connection reconnects once
 * and runs s again (*retried set, so callers can settle an outcome the loss hid). res
 * (optional) receives the stored result set; affected the affected (matched) rows. */
static w2l_rc run(sql_catalog *c, const stmt *s, w2l__my_res **res, uint64_t *affected,
                  int *retried, w2l_error *err)
{
    if (res) *res = NULL;
    if (retried) *retried = 0;
    w2l_buf sql = {0};
    w2l_rc rc = W2L_OK;
    mtx_lock(&c->mu);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!c->conn) {
            rc = db_connect(c, err);
            if (rc != W2L_OK) break;
        }
        rc = build(c, s, &sql, err);
        if (rc != W2L_OK) break;
        rc = res ? w2l__my_query(c->conn, (const char *)sql.data, 0, res, err)
                 : w2l__my_exec(c->conn, (const char *)sql.data, err);
        if (rc == W2L_OK && affected) *affected = w2l__my_affected(c->conn);
        if (rc != W2L_UNAVAILABLE) break;
        disconnect(c);
        if (attempt == 0) {
            w2l__log(W2L_LOG_WARN, "%s; reconnecting once", err->msg);
            if (retried) *retried = 1;
        }
    }
    mtx_unlock(&c->mu);
    w2l_buf_release(&sql);
    return rc;
}

#define STMT(text, ...)                                                                    \
    (&(stmt){text, (const char *const[]){__VA_ARGS__},                                     \
             sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)})

/* ------------------------------------------------------------------ methods ---- */

static w2l_rc s_open(const w2l_catalog_methods *m, const w2l_conf *conf, const char *uri,
                     const char *warehouse, w2l_fileio *io, w2l_catalog *self, w2l_error *err)
{
    (void)m, (void)conf;
    sql_catalog *c = (sql_catalog *)self;
    if (!warehouse || !*warehouse || !io)
        return w2l__fail(err, W2L_MISUSE, "sql catalog: needs a warehouse and a file IO");
    if (mtx_init(&c->mu, mtx_plain) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "sql catalog: mtx_init failed");
    c->have_mu = 1;
    c->io = io;
    w2l_rc rc = (c->warehouse = w2l__strdup(warehouse))
                    ? W2L_OK
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = parse_uri(c, uri, err);
    /* the JDBC catalog's tables (V1 schema with iceberg_type); binary collation, as
     * namespaces and table names from MariaDB are case-sensitive */
    if (rc == W2L_OK)
        rc = run(c,
                 STMT("CREATE TABLE IF NOT EXISTS iceberg_tables ("
                      "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
                      "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
                      "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
                      "PRIMARY KEY (catalog_name, table_namespace, table_name)) "
                      "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                      NULL),
                 NULL, NULL, NULL, err);
    if (rc == W2L_OK)
        rc = run(c, STMT("CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
                         "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
                         "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000), "
                         "PRIMARY KEY (catalog_name, namespace, property_key)) "
                         "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", NULL),
                 NULL, NULL, NULL, err);
    w2l__my_res *res = NULL;
    if (rc == W2L_OK)
        rc = run(
            c,
            STMT("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
                 "DATABASE() AND table_name = 'iceberg_tables' AND column_name = 'iceberg_type'",
                 NULL),
            &res, NULL, NULL, err);
    if (rc == W2L_OK) {
        char **row;
        unsigned long *lens;
        int k = w2l__my_row(res, &row, &lens, err);
        if (k < 0) rc = err->code;
        c->has_type = k > 0 && row[0] && atoi(row[0]) > 0;
    }
    w2l__my_res_free(res);
    return rc; /* on failure the core calls nothing else; s_close is not called either */
}

static void s_close(w2l_catalog *self)
{
    sql_catalog *c = (sql_catalog *)self;
    disconnect(c);
    if (c->have_mu) mtx_destroy(&c->mu);
    w2l__free(c->warehouse);
    w2l__free(c->catalog_name);
    w2l__my_uri_free(&c->uri); /* the password overwritten first */
}

/* The open failed half way: release what it took (the core frees the struct). */
static w2l_rc s_open_or_clean(const w2l_catalog_methods *m, const w2l_conf *conf,
                              const char *uri, const char *warehouse, w2l_fileio *io,
                              w2l_catalog *self, w2l_error *err)
{
    w2l_rc rc = s_open(m, conf, uri, warehouse, io, self, err);
    if (rc != W2L_OK) s_close(self);
    return rc;
}

/* Current location of ns.table into out ("" kept NULL-free); W2L_NOTFOUND. */
static w2l_rc current(sql_catalog *c, const char *ns, const char *table, w2l_buf *out,
                      w2l_error *err)
{
    w2l__my_res *res;
    const char *sql =
        c->has_type ? "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                      "table_namespace = ? AND table_name = ? AND (iceberg_type = 'TABLE' OR "
                      "iceberg_type IS NULL)"
                    : "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                      "table_namespace = ? AND table_name = ?";
    W2L_TRY(run(c, STMT(sql, c->catalog_name, ns, table), &res, NULL, NULL, err));
    char **row;
    unsigned long *lens;
    int k = w2l__my_row(res, &row, &lens, err);
    w2l_rc rc = W2L_OK;
    if (k < 0) rc = err->code;
    else if (k == 0)
        rc = w2l__fail(err, W2L_NOTFOUND, "table %s.%s not found in catalog %s", ns, table,
                       c->catalog_name);
    else if (!row[0])
        rc = w2l__fail(err, W2L_CORRUPT, "table %s.%s: no metadata_location in %s", ns, table,
                       c->shown);
    else rc = w2l_buf_append(out, row[0], lens[0], err);
    w2l__my_res_free(res);
    return rc;
}

static w2l_rc s_load(w2l_catalog *self, const char *ns, const char *table, w2l_buf *location,
                     w2l_error *err)
{
    return current((sql_catalog *)self, ns, table, location, err);
}

/* Version N of ".../NNNNN-uuid.metadata.json" or ".../vN.metadata.json"; -1 if neither. */
static long version_of(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (*b == 'v') b++;
    char *end;
    long n = strtol(b, &end, 10);
    if (end == b || (*end != '-' && *end != '.') || n < 0) return -1;
    return n;
}

/* Is the table's current location exactly loc? (settles an outcome a lost connection hid) */
static int holds(sql_catalog *c, const char *ns, const char *table, const char *loc)
{
    w2l_buf cur = {0};
    w2l_error e2;
    int yes = current(c, ns, table, &cur, &e2) == W2L_OK && cur.len == strlen(loc) &&
              memcmp(cur.data, loc, cur.len) == 0;
    w2l_buf_release(&cur);
    return yes;
}

static w2l_rc ensure_namespace(sql_catalog *c, const char *ns, w2l_error *err)
{
    return run(c, STMT("INSERT IGNORE INTO iceberg_namespace_properties (catalog_name, namespace, "
                       "property_key, property_value) VALUES (?, ?, 'exists', 'true')",
                       c->catalog_name, ns),
               NULL, NULL, NULL, err);
}

static w2l_rc s_commit(w2l_catalog *self, const char *ns, const char *table, const char *base,
                       const char *metadata, size_t len, w2l_buf *new_location, w2l_error *err)
{
    sql_catalog *c = (sql_catalog *)self;
    char *dir;
    if (base) {
        const char *sl = strrchr(base, '/');
        dir = sl ? w2l__strndup(base, (size_t)(sl - base)) : w2l__strdup(".");
    } else {
        char *t = w2l__ice_table_dir(c->warehouse, ns, table);
        dir = t ? w2l__asprintf("%s/metadata", t) : NULL;
        w2l__free(t);
    }
    W2L_NOMEM_IF(!dir, err);
    long v = base ? version_of(base) + 1 : 0;
    char uuid[37];
    w2l__ice_uuid(uuid);
    char *path = w2l__asprintf("%s/%05ld-%s.metadata.json", dir, v < 0 ? 0 : v, uuid);
    w2l__free(dir);
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = W2L_OK;
    if (!base) { /* a cheap early answer; the INSERT below is what decides */
        w2l_buf cur = {0};
        w2l_error e2;
        rc = current(c, ns, table, &cur, &e2);
        w2l_buf_release(&cur);
        if (rc == W2L_OK) rc = w2l__fail(err, W2L_EXISTS, "table %s.%s exists", ns, table);
        else if (rc == W2L_NOTFOUND) rc = W2L_OK;
        else *err = e2;
    }
    if (rc == W2L_OK) rc = w2l_fileio_write_all(c->io, path, W2L_CREATE_EXCL, metadata, len, err);
    int written = rc == W2L_OK, retried = 0;
    uint64_t n = 0;
    if (rc == W2L_OK && !base) {
        rc = ensure_namespace(c, ns, err);
        if (rc == W2L_OK) {
            const char *sql =
                c->has_type
                    ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                      "metadata_location, previous_metadata_location, iceberg_type) VALUES (?, ?, "
                      "?, ?, NULL, 'TABLE')"
                    : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                      "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";
            rc = run(c, STMT(sql, c->catalog_name, ns, table, path), NULL, NULL, &retried, err);
            if (rc == W2L_EXISTS && retried && holds(c, ns, table, path)) rc = W2L_OK;
            else if (rc == W2L_EXISTS) w2l__fail(err, W2L_EXISTS, "table %s.%s exists", ns, table);
        }
    } else if (rc == W2L_OK) {
        rc = run(
            c,
            STMT("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                 "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
                 "AND metadata_location = ?",
                 path, base, c->catalog_name, ns, table, base),
            NULL, &n, &retried, err);
        if (rc == W2L_OK && n == 0) {
            if (retried && holds(c, ns, table, path)) rc = W2L_OK; /* the lost first try landed */
            else rc = w2l__fail(err, W2L_CONFLICT, "commit %s.%s: the table is no longer at %s, "
                                "another writer committed first", ns, table, base);
        }
    }
    if (rc == W2L_OK) {
        rc = w2l_buf_append(new_location, path, strlen(path), err);
    } else if (written && (rc == W2L_CONFLICT || rc == W2L_EXISTS)) {
        /* definitely not swapped in: the file is garbage. (After W2L_UNAVAILABLE the swap
         * may have happened, so the file stays.) */
        w2l_error e2;
        if (w2l_fileio_remove(c->io, path, &e2) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "unused metadata file %s not removed: %s", path, e2.msg);
    }
    w2l__free(path);
    return rc;
}

static w2l_rc s_drop(w2l_catalog *self, const char *ns, const char *table, int purge,
                     w2l_error *err)
{
    sql_catalog *c = (sql_catalog *)self;
    w2l_buf loc = {0};
    W2L_TRY(w2l__catalog_load(self, ns, table, &loc, err));
    w2l__ice_meta *m = NULL;
    w2l_rc rc = W2L_OK;
    if (purge) { /* read what to purge before the table is forgotten */
        void *data = NULL;
        size_t len = 0;
        rc = w2l_fileio_read_all(c->io, w2l__ice_local_path((const char *)loc.data), &data, &len,
                                 err);
        if (rc == W2L_OK) rc = w2l__ice_meta_parse(data, len, &m, err);
        w2l__free(data);
    }
    uint64_t n = 0;
    if (rc == W2L_OK)
        rc = run(c,
                 STMT("DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
                      "AND table_name = ? AND metadata_location = ?",
                      c->catalog_name, ns, table, (const char *)loc.data),
                 NULL, &n, NULL, err);
    if (rc == W2L_OK && n == 0)
        rc = w2l__fail(err, W2L_CONFLICT, "drop %s.%s: the table changed meanwhile", ns, table);
    if (rc == W2L_OK && purge) {
        rc = w2l__ice_purge(c->io, m, (const char *)loc.data, err);
        const char *tl = m->location ? w2l__ice_local_path(m->location) : "";
        /* the rest of the table's own directory (never the warehouse itself) */
        if (rc == W2L_OK && *tl && strcmp(tl, c->warehouse) != 0)
            rc = w2l__ice_remove_tree(c->io, tl, err);
    }
    w2l__ice_meta_free(m);
    w2l_buf_release(&loc);
    return rc;
}

/* Rename moves the row; the files stay where they are (the metadata holds absolute paths),
 * as in the JDBC catalog. */
static w2l_rc s_rename(w2l_catalog *self, const char *ns, const char *table, const char *to_ns,
                       const char *to_table, w2l_error *err)
{
    sql_catalog *c = (sql_catalog *)self;
    W2L_TRY(ensure_namespace(c, to_ns, err));
    uint64_t n = 0;
    const char *sql = c->has_type ? "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? "
                                    "WHERE catalog_name = ? "
                                    "AND table_namespace = ? AND table_name = ? AND (iceberg_type "
                                    "= 'TABLE' OR iceberg_type IS NULL)"
                                  : "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? "
                                    "WHERE catalog_name = ? "
                                    "AND table_namespace = ? AND table_name = ?";
    w2l_rc rc = run(c, STMT(sql, to_ns, to_table, c->catalog_name, ns, table), NULL, &n, NULL, err);
    if (rc == W2L_EXISTS)
        return w2l__fail(err, W2L_EXISTS, "rename %s.%s: %s.%s exists", ns, table, to_ns, to_table);
    if (rc == W2L_OK && n == 0)
        rc = w2l__fail(err, W2L_NOTFOUND, "rename: table %s.%s not found in catalog %s", ns, table,
                       c->catalog_name);
    return rc;
}

static w2l_rc s_list(w2l_catalog *self, const char *ns,
                     int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                     w2l_error *err)
{
    sql_catalog *c = (sql_catalog *)self;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ?%s%s "
             "ORDER BY table_namespace, table_name",
             ns ? " AND table_namespace = ?" : "",
             c->has_type ? " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "");
    w2l__my_res *res;
    W2L_TRY(run(c, ns ? STMT(sql, c->catalog_name, ns) : STMT(sql, c->catalog_name), &res, NULL,
                NULL, err));
    /* the rows are stored client-side: fn runs without the connection's mutex */
    char **row;
    unsigned long *lens;
    int k;
    while ((k = w2l__my_row(res, &row, &lens, err)) > 0)
        if (row[0] && row[1] && fn(ctx, row[0], row[1])) break;
    w2l__my_res_free(res);
    return k < 0 ? err->code : W2L_OK;
}

const w2l_catalog_methods w2l__catalog_sql = {
    .version = W2L_CATALOG_METHODS_V1,
    .name = "sql",
    .size = sizeof(sql_catalog),
    .open = s_open_or_clean,
    .load_table = s_load,
    .commit_table = s_commit,
    .drop_table = s_drop,
    .rename_table = s_rename,
    .list_tables = s_list,
    .close = s_close,
};
