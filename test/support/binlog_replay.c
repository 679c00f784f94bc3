/*
 * Offline binlog replay (binlog_replay.h): a fake MySQL server that plays recorded dump
 * packets to lib/source/binlog.c through libmariadb, and a text rendering of what the
 * decoder makes of them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "binlog_replay.h"
#include "source/mysql_gtid.h"
#include "source/mysql_int.h"

/* ======================================================================================
 * The fake server
 * ====================================================================================== */

struct fake_my {
    int lfd;
    unsigned port;
    pthread_t thr;
    pthread_mutex_t mu;
    uint8_t **pkts;
    size_t *lens;
    size_t npkts;
    int mysql;
    char *sql;          /* the last session's statements */
    size_t sql_len;
    uint8_t *dump;      /* its last dump command */
    size_t dump_len;
    /* recording mode (fake_my_serve_recording) */
    uint8_t *rec;       /* the binlog file served as binlog.000001 */
    size_t rec_len;
    const fake_my_server *desc;
    char next_file[64]; /* the file the recording's last event (a ROTATE) moves to; "" none */
    char end_file[64];  /* SHOW BINARY LOG STATUS */
    uint64_t end_pos;
    char *unknown;      /* statements and commands answered with an error */
    size_t unknown_len;
    int dumps;          /* dump sessions served */
    int client;         /* the connection being served; -1 none */
    /* authentication (fake_my_set_auth): the greeting's plugin and the account's; what the
     * last client answered with, and whether the fake asked it to switch */
    char greet_plugin[64], account_plugin[64], client_plugin[64];
    int switched;
};

static int build_dump(const uint8_t *file, size_t len, const char *name, uint64_t pos,
                      const w2l__mygtids *skip, bl_stream *s, char *why, size_t whysize);
static int file_has_crc(const uint8_t *file, size_t len);
static size_t ev_len(const uint8_t *e);
static size_t artificial_event(uint8_t *r, int type, const uint8_t *server_id, uint64_t log_pos,
                               const uint8_t *body, size_t blen, int crc);

void fake_my_set_mysql(fake_my *f, int mysql)
{
    pthread_mutex_lock(&f->mu);
    f->mysql = mysql;
    pthread_mutex_unlock(&f->mu);
}

void fake_my_set_auth(fake_my *f, const char *greeting_plugin, const char *account_plugin)
{
    pthread_mutex_lock(&f->mu);
    snprintf(f->greet_plugin, sizeof f->greet_plugin, "%s", greeting_plugin ? greeting_plugin : "");
    snprintf(f->account_plugin, sizeof f->account_plugin, "%s",
             account_plugin ? account_plugin : "");
    pthread_mutex_unlock(&f->mu);
}

void fake_my_auth_seen(fake_my *f, char *plugin, size_t size, int *switched)
{
    pthread_mutex_lock(&f->mu);
    snprintf(plugin, size, "%s", f->client_plugin);
    *switched = f->switched;
    pthread_mutex_unlock(&f->mu);
}

/* The plugin a HandshakeResponse41 names ("" none): caps 4, max packet 4, charset 1,
 * reserved 23, user NUL, auth data (length-encoded or 1-byte length), db NUL, plugin NUL. */
static void response_plugin(const uint8_t *p, size_t n, char *out, size_t size)
{
    out[0] = '\0';
    if (n < 32) return;
    uint32_t caps = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[3] << 24;
    size_t i = 32;
    while (i < n && p[i]) i++; /* user */
    if (++i >= n) return;
    size_t al = p[i++]; /* a short auth answer: its length in one byte either way */
    i += al;
    if (caps & 0x8) { /* CLIENT_CONNECT_WITH_DB */
        while (i < n && p[i]) i++;
        i++;
    }
    if (!(caps & 0x80000) || i >= n) return; /* CLIENT_PLUGIN_AUTH */
    size_t l = 0;
    while (i + l < n && p[i + l]) l++;
    snprintf(out, size, "%.*s", (int)l, (const char *)p + i);
}

void fake_my_last_session(fake_my *f, char **sql, uint8_t **dump, size_t *dump_len)
{
    pthread_mutex_lock(&f->mu);
    *sql = strdup(f->sql ? f->sql : "");
    *dump = malloc(f->dump_len ? f->dump_len : 1);
    if (*dump && f->dump_len) memcpy(*dump, f->dump, f->dump_len);
    *dump_len = f->dump_len;
    pthread_mutex_unlock(&f->mu);
}

static void note(fake_my *f, const uint8_t *p, size_t n)
{
    pthread_mutex_lock(&f->mu);
    if (p[0] == 0x03) {
        char *ns = realloc(f->sql, f->sql_len + n + 1);
        if (ns) {
            memcpy(ns + f->sql_len, p + 1, n - 1);
            f->sql_len += n - 1;
            ns[f->sql_len++] = '\n';
            ns[f->sql_len] = '\0';
            f->sql = ns;
        }
    } else {
        free(f->dump);
        f->dump = malloc(n);
        if (f->dump) memcpy(f->dump, p, n);
        f->dump_len = f->dump ? n : 0;
    }
    pthread_mutex_unlock(&f->mu);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One packet: 3-byte length, sequence id, payload (at most 16 MB - 1 here). */
static int send_pkt(int fd, uint8_t *seq, const uint8_t *p, size_t n)
{
    if (n >= 0xFFFFFF) n = 0xFFFFFE; /* longer inputs (fuzzing) are cut, not split */
    uint8_t *b = malloc(n + 4);
    if (!b) return -1;
    b[0] = (uint8_t)n;
    b[1] = (uint8_t)(n >> 8);
    b[2] = (uint8_t)(n >> 16);
    b[3] = (*seq)++;
    memcpy(b + 4, p, n);
    int rc = write_all(fd, b, n + 4);
    free(b);
    return rc;
}

static uint8_t *recv_pkt(int fd, uint8_t *seq, size_t *n)
{
    uint8_t h[4];
    if (read_all(fd, h, 4)) return NULL;
    *n = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16;
    *seq = (uint8_t)(h[3] + 1);
    uint8_t *p = malloc(*n + 1);
    if (!p || read_all(fd, p, *n)) {
        free(p);
        return NULL;
    }
    p[*n] = 0;
    return p;
}

static int send_ok(int fd, uint8_t *seq)
{
    static const uint8_t ok[] = {0x00, 0, 0, 0x02, 0, 0, 0};
    return send_pkt(fd, seq, ok, sizeof ok);
}

static int send_eof(int fd, uint8_t *seq)
{
    static const uint8_t eof[] = {0xFE, 0, 0, 0x02, 0};
    return send_pkt(fd, seq, eof, sizeof eof);
}

/* A result of one VARCHAR column "v" and one row holding val (classic EOF framing). */
static int send_value(int fd, uint8_t *seq, const char *val)
{
    static const uint8_t count[] = {1};
    static const uint8_t coldef[] = {3, 'd', 'e', 'f', 0, 0, 0, 1, 'v', 0, 0x0C, 45, 0, 0, 1, 0, 0,
                                     0xFD, 0, 0, 0, 0, 0};
    uint8_t row[64];
    size_t l = strlen(val);
    row[0] = (uint8_t)l;
    memcpy(row + 1, val, l);
    return send_pkt(fd, seq, count, sizeof count) || send_pkt(fd, seq, coldef, sizeof coldef) ||
                   send_eof(fd, seq) || send_pkt(fd, seq, row, l + 1) || send_eof(fd, seq)
               ? -1
               : 0;
}

static int send_dump(fake_my *f, int fd, uint8_t *seq)
{
    pthread_mutex_lock(&f->mu);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < f->npkts; i++) rc = send_pkt(fd, seq, f->pkts[i], f->lens[i]);
    pthread_mutex_unlock(&f->mu);
    return rc ? -1 : send_eof(fd, seq); /* a non-blocking dump ends with EOF */
}

/* ---- recording mode: a MySQL server holding one recorded binlog file ---- */

#define REC_FILE "binlog.000001"

/* A statement or command the fake cannot answer: kept for fake_my_unknown. */
static void note_unknown(fake_my *f, const char *what, size_t n)
{
    pthread_mutex_lock(&f->mu);
    char *nu = realloc(f->unknown, f->unknown_len + n + 2);
    if (nu) {
        memcpy(nu + f->unknown_len, what, n);
        f->unknown_len += n;
        nu[f->unknown_len++] = '\n';
        nu[f->unknown_len] = '\0';
        f->unknown = nu;
    }
    pthread_mutex_unlock(&f->mu);
}

static int send_error(int fd, uint8_t *seq, unsigned code, const char *msg)
{
    uint8_t b[300];
    size_t l = strlen(msg) < 280 ? strlen(msg) : 280;
    b[0] = 0xFF;
    b[1] = (uint8_t)code;
    b[2] = (uint8_t)(code >> 8);
    memcpy(b + 3, "#HY000", 6);
    memcpy(b + 9, msg, l);
    return send_pkt(fd, seq, b, 9 + l);
}

/* A length-encoded string (NULL: SQL NULL) at b; its size. */
static size_t put_lenenc_str(uint8_t *b, const char *s)
{
    if (!s) {
        b[0] = 0xFB;
        return 1;
    }
    size_t l = strlen(s), n = 0;
    if (l < 251) b[n++] = (uint8_t)l;
    else {
        b[n++] = 0xFC;
        b[n++] = (uint8_t)l;
        b[n++] = (uint8_t)(l >> 8);
    }
    memcpy(b + n, s, l);
    return n + l;
}

/* A text result set: ncols VARCHAR columns named names, nrows rows of cells (row-major,
 * NULL for SQL NULL), classic EOF framing. */
static int send_result(int fd, uint8_t *seq, const char *const *names, size_t ncols,
                       const char *const *cells, size_t nrows)
{
    uint8_t b[1024];
    b[0] = (uint8_t)ncols;
    if (send_pkt(fd, seq, b, 1)) return -1;
    for (size_t i = 0; i < ncols; i++) {
        size_t n = put_lenenc_str(b, "def");
        n += put_lenenc_str(b + n, "");
        n += put_lenenc_str(b + n, "");
        n += put_lenenc_str(b + n, "");
        n += put_lenenc_str(b + n, names[i]);
        n += put_lenenc_str(b + n, "");
        static const uint8_t fixed[] = {0x0C, 45, 0, 0, 4, 0, 0, 0xFD, 0, 0, 0, 0, 0};
        memcpy(b + n, fixed, sizeof fixed); /* utf8mb4, 1024 bytes, VARCHAR */
        n += sizeof fixed;
        if (send_pkt(fd, seq, b, n)) return -1;
    }
    if (send_eof(fd, seq)) return -1;
    for (size_t r = 0; r < nrows; r++) {
        size_t n = 0;
        for (size_t i = 0; i < ncols; i++) {
            const char *c = cells[r * ncols + i];
            if (c && strlen(c) > 900) return -1;
            if (n + (c ? strlen(c) : 0) + 3 > sizeof b) return -1;
            n += put_lenenc_str(b + n, c);
        }
        if (send_pkt(fd, seq, b, n)) return -1;
    }
    return send_eof(fd, seq);
}

static int send_one(int fd, uint8_t *seq, const char *name, const char *val)
{
    return send_result(fd, seq, &name, 1, &val, 1);
}

static int is_system_db(const char *db, size_t n)
{
    static const char *const sys[] = {"mysql", "information_schema", "performance_schema", "sys"};
    for (size_t i = 0; i < 4; i++)
        if (strlen(sys[i]) == n && !memcmp(sys[i], db, n)) return 1;
    return 0;
}

/* The rows of a description text ("a|b|c" per line), fields split at '|', of the lines
 * whose first field is not a system database: a result of want columns. */
static int send_described(int fd, uint8_t *seq, const char *text, const char *const *names,
                          size_t want)
{
    char *copy = strdup(text ? text : "");
    const char **cells = calloc(64 * want, sizeof *cells);
    size_t nrows = 0;
    int rc = copy && cells ? 0 : -1;
    for (char *save = NULL, *line = copy ? strtok_r(copy, "\n", &save) : NULL; rc == 0 && line;
         line = strtok_r(NULL, "\n", &save)) {
        size_t k = 0;
        const char **row = cells + nrows * want;
        for (char *p = line; k < want; k++) {
            row[k] = p;
            char *bar = strchr(p, '|');
            if (!bar) {
                k++;
                break;
            }
            *bar = '\0';
            p = bar + 1;
        }
        if (k != want || nrows == 63) rc = -1; /* a malformed description */
        else if (!is_system_db(row[0], strlen(row[0]))) nrows++;
    }
    if (rc == 0) rc = send_result(fd, seq, names, want, cells, nrows);
    free(cells);
    free(copy);
    return rc;
}

static unsigned version_number(const char *v)
{
    unsigned a = 0, b = 0, c = 0;
    sscanf(v, "%u.%u.%u", &a, &b, &c);
    return a * 10000 + b * 100 + c;
}

/* The information_schema queries of lib/source/mysql_tracked.c, word for word: another
 * spelling is an unknown statement. */
static const char q_columns[] =
    "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE "
    "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
    "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
    "WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA NOT IN "
    "('mysql','information_schema','performance_schema','sys') "
    "ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION";
static const char q_keys[] =
    "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
    "WHERE CONSTRAINT_NAME = 'PRIMARY' AND TABLE_SCHEMA NOT IN "
    "('mysql','information_schema','performance_schema','sys') "
    "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION";

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* SHOW DATABASES: the system ones, d->databases (one a line), and those of d->columns. */
static int send_databases(int fd, uint8_t *seq, const fake_my_server *d)
{
    const char *cells[64] = {"information_schema", "mysql", "performance_schema", "sys"};
    char buf[2048];
    size_t n = 4, used = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *t = pass ? d->columns : d->databases;
        for (const char *p = t; p && *p && n < 64;) {
            size_t l = strcspn(p, pass ? "|\n" : "\n");
            if (l && used + l + 1 <= sizeof buf) {
                int dup = 0;
                for (size_t i = 0; i < n && !dup; i++)
                    dup = strlen(cells[i]) == l && !memcmp(cells[i], p, l);
                if (!dup) {
                    memcpy(buf + used, p, l);
                    buf[used + l] = '\0';
                    cells[n++] = buf + used;
                    used += l + 1;
                }
            }
            p += strcspn(p, "\n");
            if (*p) p++;
        }
    }
    static const char *const name = "Database";
    return send_result(fd, seq, &name, 1, cells, n);
}

/* One statement in recording mode: a result, an OK, or an error for what the fake does not
 * know (noted). */
static int answer_query(fake_my *f, int fd, uint8_t *seq, const char *q, const char *version)
{
    const fake_my_server *d = f->desc;
    unsigned vn = version_number(version);
    char server_id[16], pos[32], size[32];
    const uint8_t *sid = f->rec + 4 + 5;
    snprintf(server_id, sizeof server_id, "%u",
             (unsigned)(sid[0] | sid[1] << 8 | sid[2] << 16 | (uint32_t)sid[3] << 24));
    if (!strcmp(q, "SET time_zone = '+00:00'") ||
        !strcmp(q, "SET @source_binlog_checksum = @@global.binlog_checksum") ||
        !strcmp(q, "SET @master_binlog_checksum = @@global.binlog_checksum") ||
        starts(q, "SET @source_heartbeat_period = ") ||
        starts(q, "SET @master_heartbeat_period = "))
        return send_ok(fd, seq);
    if (!strcmp(q, "SELECT @@version")) return send_one(fd, seq, "@@version", version);
    if (!strcmp(q, "SELECT @@version_comment"))
        return send_one(fd, seq, "@@version_comment", "MySQL Community Server - GPL");
    if (!strcmp(q, "SELECT @@global.log_bin")) return send_one(fd, seq, "@@global.log_bin", "1");
    if (!strcmp(q, "SHOW DATABASES")) return send_databases(fd, seq, d);
    if (!strcmp(q, "SELECT CURRENT_USER()"))
        return send_one(fd, seq, "CURRENT_USER()", "cdc@127.0.0.1");
    if (!strcmp(q, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE "
                   "GRANTEE = '\\'cdc\\'@\\'127.0.0.1\\''")) {
        static const char *const n[] = {"PRIVILEGE_TYPE"};
        static const char *const rows[] = {"SELECT", "REPLICATION SLAVE", "REPLICATION CLIENT"};
        return send_result(fd, seq, n, 1, rows, 3);
    }
    if (!strcmp(q, "SELECT @@global.binlog_format"))
        return send_one(fd, seq, "@@global.binlog_format", "ROW");
    if (!strcmp(q, "SELECT @@global.binlog_row_metadata"))
        return send_one(fd, seq, "@@global.binlog_row_metadata",
                        d->row_metadata ? d->row_metadata : "MINIMAL");
    if (!strcmp(q, "SELECT @@global.binlog_row_image"))
        return send_one(fd, seq, "@@global.binlog_row_image",
                        d->row_image ? d->row_image : "FULL");
    if (!strcmp(q, "SELECT @@global.gtid_mode"))
        return send_one(fd, seq, "@@global.gtid_mode", d->gtid_mode ? d->gtid_mode : "OFF");
    if (!strcmp(q, "SELECT @@global.gtid_executed"))
        return send_one(fd, seq, "@@global.gtid_executed",
                        d->gtid_executed ? d->gtid_executed : "");
    if (!strcmp(q, "SELECT @@global.gtid_purged"))
        return send_one(fd, seq, "@@global.gtid_purged", d->gtid_purged ? d->gtid_purged : "");
    if (!strcmp(q, "SELECT @@global.server_id"))
        return send_one(fd, seq, "@@global.server_id", server_id);
    if (!strcmp(q, q_columns)) {
        static const char *const n[] = {"TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME",
                                        "COLUMN_TYPE", "IS_NULLABLE"};
        return send_described(fd, seq, d->columns, n, 5);
    }
    if (!strcmp(q, q_keys)) {
        static const char *const n[] = {"TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME"};
        return send_described(fd, seq, d->keys, n, 3);
    }
    /* 8.2 brought SHOW BINARY LOG STATUS, 8.4 removed SHOW MASTER STATUS */
    if ((!strcmp(q, "SHOW BINARY LOG STATUS") && vn >= 80200) ||
        (!strcmp(q, "SHOW MASTER STATUS") && vn < 80400)) {
        static const char *const n[] = {"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB",
                                        "Executed_Gtid_Set"};
        pthread_mutex_lock(&f->mu);
        snprintf(pos, sizeof pos, "%llu", (unsigned long long)f->end_pos);
        const char *row[] = {f->end_file, pos, "", "", d->gtid_executed ? d->gtid_executed : ""};
        int rc = send_result(fd, seq, n, 5, row, 1);
        pthread_mutex_unlock(&f->mu);
        return rc;
    }
    if (!strcmp(q, "SHOW BINARY LOGS")) {
        static const char *const n[] = {"Log_name", "File_size", "Encrypted"};
        snprintf(size, sizeof size, "%zu", f->rec_len);
        const char *rows[] = {REC_FILE, size, "No", f->next_file, "4", "No"};
        return send_result(fd, seq, n, 3, rows, f->next_file[0] ? 2 : 1);
    }
    note_unknown(f, q, strlen(q));
    return send_error(fd, seq, 1064, "fake MySQL server: statement not known to the fake");
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* COM_BINLOG_DUMP (file:pos) or COM_BINLOG_DUMP_GTID (by GTID set) in recording mode: the
 * recording from that point, then for a blocking dump a HEARTBEAT at the end of the binlog
 * and nothing more until the replica leaves; a non-blocking dump ends with EOF. */
static int serve_dump(fake_my *f, int fd, uint8_t *seq, const uint8_t *p, size_t n)
{
    char why[200] = "", name[300] = "";
    uint64_t pos = 4;
    unsigned flags = 0;
    w2l__mygtids *skip = NULL;
    if (p[0] == 0x12 && n >= 11) { /* pos 4, flags 2, server id 4, file name */
        pos = le32(p + 1);
        flags = (unsigned)(p[5] | p[6] << 8);
        snprintf(name, sizeof name, "%.*s", (int)(n - 11 < 299 ? n - 11 : 299),
                 (const char *)p + 11);
    } else if (p[0] == 0x1e && n >= 1 + 2 + 4 + 4) {
        /* flags 2, server id 4, name length 4, name, position 8, data size 4, data */
        flags = (unsigned)(p[1] | p[2] << 8);
        size_t nl = le32(p + 7), at = 11 + nl;
        w2l_error e;
        skip = w2l__mygtids_new();
        if (nl || at + 12 > n || le32(p + at + 8) != n - at - 12 || !skip ||
            w2l__mygtids_decode(skip, p + at + 12, n - at - 12, &e) != W2L_OK)
            snprintf(why, sizeof why, "a GTID dump the fake does not take (a file name, or a "
                                      "malformed set)");
        snprintf(name, sizeof name, "%s", REC_FILE);
    } else snprintf(why, sizeof why, "a malformed dump command");
    bl_stream st = {0};
    int rc = 0;
    const uint8_t *sid = f->rec + 4 + 5;
    int crc = file_has_crc(f->rec, f->rec_len);
    if (!why[0] && !strcmp(name, REC_FILE)) {
        if (build_dump(f->rec, f->rec_len, REC_FILE, pos, skip, &st, why, sizeof why)) {
            bl_stream_free(&st);
            rc = send_error(fd, seq, 1236, why);
        }
    } else if (!why[0] && f->next_file[0] && !strcmp(name, f->next_file) && pos == 4) {
        uint8_t r[1 + 19 + 8 + 64 + 4], body[8 + 64] = {4};
        size_t nl = strlen(name);
        memcpy(body + 8, name, nl);
        size_t rl = artificial_event(r, 4, sid, 0, body, 8 + nl, crc);
        rc = send_pkt(fd, seq, r, rl);
    } else {
        if (!why[0])
            snprintf(why, sizeof why, "Could not find first log file name in binary log index "
                                      "file (%.100s)", name);
        rc = send_error(fd, seq, 1236, why);
    }
    w2l__mygtids_free(skip);
    if (why[0]) {
        note_unknown(f, why, strlen(why));
        return -1;
    }
    for (size_t i = 0; rc == 0 && i < st.npkts; i++) rc = send_pkt(fd, seq, st.pkts[i], st.lens[i]);
    bl_stream_free(&st);
    pthread_mutex_lock(&f->mu);
    f->dumps++;
    pthread_mutex_unlock(&f->mu);
    if (rc) return -1;
    if (flags & 1) return send_eof(fd, seq); /* BINLOG_DUMP_NON_BLOCK */
    /* the end of the binlog: the last file and its end, as the server's heartbeat says */
    const char *last = f->next_file[0] ? f->next_file : REC_FILE;
    uint64_t end = f->next_file[0] ? 4 : f->rec_len;
    uint8_t hb[1 + 19 + 64 + 4];
    size_t hl = artificial_event(hb, 27, sid, end, (const uint8_t *)last, strlen(last), crc);
    if (send_pkt(fd, seq, hb, hl)) return -1;
    uint8_t drain[256]; /* until the replica leaves (COM_QUIT or a close) */
    while (recv(fd, drain, sizeof drain, 0) > 0) {
    }
    return -1;
}

void fake_my_serve_recording(fake_my *f, const uint8_t *file, size_t len,
                             const fake_my_server *desc)
{
    pthread_mutex_lock(&f->mu);
    free(f->rec);
    f->rec = malloc(len ? len : 1);
    f->rec_len = f->rec ? len : 0;
    if (f->rec) memcpy(f->rec, file, len);
    f->desc = desc;
    f->mysql = 1;
    f->next_file[0] = '\0';
    /* the last event a ROTATE (not artificial): the server went on to that file */
    size_t last = 0;
    for (size_t off = 4; off + 19 <= len && ev_len(file + off) >= 19 &&
                         ev_len(file + off) <= len - off;
         off += ev_len(file + off))
        last = off;
    if (last && file[last + 4] == 4 && !(file[last + 17] & 0x20)) {
        size_t el = ev_len(file + last), nl = el - 19 - 8 - (file_has_crc(file, len) ? 4 : 0);
        if (el >= 19 + 8 && nl < sizeof f->next_file)
            snprintf(f->next_file, sizeof f->next_file, "%.*s", (int)nl,
                     (const char *)file + last + 19 + 8);
    }
    snprintf(f->end_file, sizeof f->end_file, "%s", f->next_file[0] ? f->next_file : REC_FILE);
    f->end_pos = f->next_file[0] ? 4 : len;
    pthread_mutex_unlock(&f->mu);
}

void fake_my_set_end(fake_my *f, const char *file, uint64_t pos)
{
    pthread_mutex_lock(&f->mu);
    if (!file) { /* the default */
        file = f->next_file[0] ? f->next_file : REC_FILE;
        pos = f->next_file[0] ? 4 : f->rec_len;
    }
    snprintf(f->end_file, sizeof f->end_file, "%s", file);
    f->end_pos = pos;
    pthread_mutex_unlock(&f->mu);
}

char *fake_my_unknown(fake_my *f)
{
    pthread_mutex_lock(&f->mu);
    char *s = strdup(f->unknown ? f->unknown : "");
    pthread_mutex_unlock(&f->mu);
    return s;
}

int fake_my_dumps(fake_my *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->dumps;
    pthread_mutex_unlock(&f->mu);
    return n;
}

static void serve(fake_my *f, int fd)
{
    static const char mariadb_version[] = "5.5.5-10.11.19-MariaDB-log";
    static const char mysql_version[] = "8.0.40";
    char rec_version[51] = "";
    pthread_mutex_lock(&f->mu);
    int mysql = f->mysql, rec = f->rec != NULL;
    free(f->sql);
    f->sql = NULL;
    f->sql_len = 0;
    if (rec && f->desc->version) snprintf(rec_version, sizeof rec_version, "%s", f->desc->version);
    else if (rec && f->rec_len >= 4 + 19 + 2 + 50) /* the FORMAT_DESCRIPTION's server version */
        snprintf(rec_version, sizeof rec_version, "%.50s", (const char *)f->rec + 4 + 19 + 2);
    pthread_mutex_unlock(&f->mu);
    const char *version = rec ? rec_version : mysql ? mysql_version : mariadb_version;
    size_t vl = strlen(version) + 1;
    uint8_t hs[128], seq = 0;
    size_t n = 0;
    hs[n++] = 10;
    memcpy(hs + n, version, vl);
    n += vl;
    memcpy(hs + n, "\1\0\0\0", 4); /* connection id */
    n += 4;
    memcpy(hs + n, "abcdefgh", 8); /* scramble, first part */
    n += 8;
    hs[n++] = 0;
    /* PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION, MULTI_RESULTS, PLUGIN_AUTH (no SSL, no
     * compression, classic EOF packets, and no CLIENT_MYSQL bit: a MariaDB server) */
    uint32_t caps = 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x4 | 0x8;
    hs[n++] = (uint8_t)caps;
    hs[n++] = (uint8_t)(caps >> 8);
    hs[n++] = 45; /* utf8mb4_general_ci */
    hs[n++] = 2;  /* status: autocommit */
    hs[n++] = 0;
    hs[n++] = (uint8_t)(caps >> 16);
    hs[n++] = (uint8_t)(caps >> 24);
    hs[n++] = 21;
    memset(hs + n, 0, 10); /* reserved, MariaDB extended capabilities */
    n += 10;
    memcpy(hs + n, "ijklmnopqrst", 13); /* scramble, second part, NUL */
    n += 13;
    pthread_mutex_lock(&f->mu);
    char greet[64], account[64];
    snprintf(greet, sizeof greet, "%s",
             f->greet_plugin[0] ? f->greet_plugin : "mysql_native_password");
    snprintf(account, sizeof account, "%s", f->account_plugin);
    f->client_plugin[0] = '\0';
    f->switched = 0;
    pthread_mutex_unlock(&f->mu);
    size_t gl = strlen(greet) + 1;
    memcpy(hs + n, greet, gl);
    n += gl;
    if (send_pkt(fd, &seq, hs, n)) return;
    uint8_t *p = recv_pkt(fd, &seq, &n); /* handshake response: any user, any password */
    if (!p) return;
    char cp[64];
    response_plugin(p, n, cp, sizeof cp);
    free(p);
    pthread_mutex_lock(&f->mu);
    snprintf(f->client_plugin, sizeof f->client_plugin, "%s", cp);
    pthread_mutex_unlock(&f->mu);
    /* AuthSwitchRequest to the account's plugin when the client answered for another, or
     * when the greeting named another (MySQL then restarts with the account's plugin, and
     * mysql_native_password sends its scramble first) */
    if (account[0] && (strcmp(cp, account) || strcmp(greet, account))) {
        uint8_t sw[96];
        size_t al = strlen(account) + 1, k = 0;
        sw[k++] = 0xFE;
        memcpy(sw + k, account, al);
        k += al;
        memcpy(sw + k, "uvwxyzabcdefghijklmn", 21); /* a new scramble, NUL */
        k += 21;
        pthread_mutex_lock(&f->mu);
        f->switched = 1;
        pthread_mutex_unlock(&f->mu);
        if (send_pkt(fd, &seq, sw, k)) return;
        p = recv_pkt(fd, &seq, &n); /* the answer of the account's plugin */
        if (!p) return;
        free(p);
    }
    if (send_ok(fd, &seq)) return;
    for (;;) {
        p = recv_pkt(fd, &seq, &n);
        if (!p || n == 0 || p[0] == 0x01 /* COM_QUIT */) break;
        int rc;
        if (p[0] == 0x03 || p[0] == 0x12 || p[0] == 0x1e) note(f, p, n);
        if (rec && p[0] == 0x03)
            rc = answer_query(f, fd, &seq, (const char *)p + 1, version);
        else if (rec && (p[0] == 0x12 || p[0] == 0x1e))
            rc = serve_dump(f, fd, &seq, p, n);
        else if (rec) {
            char what[64];
            snprintf(what, sizeof what, "command 0x%02x", p[0]);
            note_unknown(f, what, strlen(what));
            rc = send_error(fd, &seq, 1047, "fake MySQL server: command not known to the fake");
        } else if (p[0] == 0x1e && mysql) /* COM_BINLOG_DUMP_GTID */
            rc = send_dump(f, fd, &seq);
        else if (p[0] == 0x03 && n >= 7 && strncasecmp((const char *)p + 1, "select", 6) == 0)
            rc = send_value(fd, &seq,
                            strstr((const char *)p + 1, "binlog_checksum") ? "CRC32" : "1");
        else if (p[0] == 0x12) /* COM_BINLOG_DUMP */
            rc = send_dump(f, fd, &seq);
        else rc = send_ok(fd, &seq); /* SET ..., COM_REGISTER_SLAVE, others */
        free(p);
        p = NULL;
        if (rc) break;
    }
    free(p);
}

static void *server_main(void *arg)
{
    fake_my *f = arg;
    for (;;) {
        int fd = accept(f->lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL; /* shut down by fake_my_stop */
        }
        int one = 1; /* small packets, answered at once: no Nagle delays */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&f->mu);
        f->client = fd;
        pthread_mutex_unlock(&f->mu);
        serve(f, fd);
        pthread_mutex_lock(&f->mu);
        f->client = -1;
        pthread_mutex_unlock(&f->mu);
        close(fd);
    }
}

fake_my *fake_my_start(void)
{
    fake_my *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    pthread_mutex_init(&f->mu, NULL);
    f->client = -1;
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) || listen(f->lfd, 8) ||
        getsockname(f->lfd, (struct sockaddr *)&a, &al) ||
        pthread_create(&f->thr, NULL, server_main, f)) {
        if (f->lfd >= 0) close(f->lfd);
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    f->port = ntohs(a.sin_port);
    return f;
}

unsigned fake_my_port(const fake_my *f) { return f->port; }

static void drop_packets(fake_my *f)
{
    for (size_t i = 0; i < f->npkts; i++) free(f->pkts[i]);
    free(f->pkts);
    free(f->lens);
    f->pkts = NULL;
    f->lens = NULL;
    f->npkts = 0;
}

void fake_my_set_packets(fake_my *f, const uint8_t *const *pkts, const size_t *lens, size_t npkts)
{
    pthread_mutex_lock(&f->mu);
    drop_packets(f);
    f->pkts = calloc(npkts ? npkts : 1, sizeof *f->pkts);
    f->lens = calloc(npkts ? npkts : 1, sizeof *f->lens);
    for (size_t i = 0; f->pkts && f->lens && i < npkts; i++) {
        f->pkts[i] = malloc(lens[i] ? lens[i] : 1);
        if (!f->pkts[i]) break;
        memcpy(f->pkts[i], pkts[i], lens[i]);
        f->lens[i] = lens[i];
        f->npkts = i + 1;
    }
    pthread_mutex_unlock(&f->mu);
}

void fake_my_stop(fake_my *f)
{
    if (!f) return;
    shutdown(f->lfd, SHUT_RDWR); /* wakes accept() */
    pthread_mutex_lock(&f->mu);
    if (f->client >= 0) shutdown(f->client, SHUT_RDWR); /* and a session still open */
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thr, NULL);
    close(f->lfd);
    drop_packets(f);
    free(f->sql);
    free(f->dump);
    free(f->rec);
    free(f->unknown);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ======================================================================================
 * Recorded streams
 * ====================================================================================== */

int bl_stream_parse(bl_stream *s, char *why, size_t whysize)
{
    if (s->len < 8 || memcmp(s->data, "W2LBLS1\n", 8) != 0) {
        snprintf(why, whysize, "no W2LBLS1 header");
        return -1;
    }
    size_t cap = 64;
    s->pkts = malloc(cap * sizeof *s->pkts);
    s->lens = malloc(cap * sizeof *s->lens);
    s->npkts = 0;
    for (size_t off = 8; off < s->len;) {
        if (s->len - off < 4) {
            snprintf(why, whysize, "length of packet %zu cut at byte %zu", s->npkts, off);
            return -1;
        }
        const uint8_t *h = s->data + off;
        size_t l = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        off += 4;
        if (l > s->len - off) {
            snprintf(why, whysize, "packet %zu of %zu bytes runs past the end", s->npkts, l);
            return -1;
        }
        if (s->npkts == cap) {
            cap *= 2;
            s->pkts = realloc(s->pkts, cap * sizeof *s->pkts);
            s->lens = realloc(s->lens, cap * sizeof *s->lens);
        }
        if (!s->pkts || !s->lens) {
            snprintf(why, whysize, "out of memory");
            return -1;
        }
        s->pkts[s->npkts] = s->data + off;
        s->lens[s->npkts++] = l;
        off += l;
    }
    return 0;
}

int bl_stream_load(const char *path, bl_stream *s, char *why, size_t whysize)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whysize, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16;
    s->data = malloc(cap);
    size_t r;
    while (s->data && (r = fread(s->data + s->len, 1, cap - s->len, f)) > 0) {
        s->len += r;
        if (s->len == cap) s->data = realloc(s->data, cap *= 2);
    }
    fclose(f);
    if (!s->data) {
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    return bl_stream_parse(s, why, whysize);
}

static uint32_t crc32_ieee(const uint8_t *p, size_t n);

static int add_packet(bl_stream *s, size_t *cap, const uint8_t *p, size_t n)
{
    if (s->npkts == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        const uint8_t **np = realloc(s->pkts, *cap * sizeof *np);
        size_t *nl = realloc(s->lens, *cap * sizeof *nl);
        if (np) s->pkts = np;
        if (nl) s->lens = nl;
        if (!np || !nl) return -1;
    }
    s->pkts[s->npkts] = p;
    s->lens[s->npkts++] = n;
    return 0;
}

static size_t ev_len(const uint8_t *e)
{
    return (size_t)e[9] | (size_t)e[10] << 8 | (size_t)e[11] << 16 | (size_t)e[12] << 24;
}

/* 1 when the events of file carry a CRC32: the FDE (first event) says so in its algorithm
 * byte, 5 from its end. */
static int file_has_crc(const uint8_t *file, size_t len)
{
    size_t fde_len = len >= 4 + 19 ? ev_len(file + 4) : 0;
    return len >= 4 + 19 && file[4 + 4] == 15 && fde_len > 19 + 57 + 5 && fde_len <= len - 4 &&
           file[4 + fde_len - 5] == 1;
}

/* An artificial event (no timestamp, LOG_EVENT_ARTIFICIAL_F) of type with body, as one
 * packet (OK byte first) into r, which has room for 1 + 19 + blen + 4 bytes; its length. */
static size_t artificial_event(uint8_t *r, int type, const uint8_t *server_id, uint64_t log_pos,
                               const uint8_t *body, size_t blen, int crc)
{
    size_t el = 19 + blen + (crc ? 4 : 0);
    memset(r, 0, 1 + 19);
    r[1 + 4] = (uint8_t)type;
    memcpy(r + 1 + 5, server_id, 4);
    for (int i = 0; i < 4; i++) r[1 + 9 + i] = (uint8_t)(el >> (8 * i));
    for (int i = 0; i < 4; i++) r[1 + 13 + i] = (uint8_t)(log_pos >> (8 * i));
    r[1 + 17] = 0x20; /* LOG_EVENT_ARTIFICIAL_F */
    memcpy(r + 1 + 19, body, blen);
    if (crc) {
        uint32_t c = crc32_ieee(r + 1, el - 4);
        for (int i = 0; i < 4; i++) r[1 + el - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
    }
    return 1 + el;
}

/* The GTID of a GTID event (type 33, untagged): 1 with sid and gno set; 0 for other events
 * (ANONYMOUS_GTID, a tagged GTID, which the fake does not parse). */
static int event_gtid(const uint8_t *e, size_t el, uint8_t sid[16], int64_t *gno)
{
    if (e[4] != 33 || el < 19 + 1 + 16 + 8) return 0;
    memcpy(sid, e + 19 + 1, 16);
    uint64_t g = 0;
    for (int i = 0; i < 8; i++) g |= (uint64_t)e[19 + 17 + i] << (8 * i);
    *gno = (int64_t)g;
    return 1;
}

/* The dump of file (named name) from pos as a MySQL server sends it: an artificial ROTATE
 * to name:pos, the FORMAT_DESCRIPTION (in-use flag cleared; its log_pos 0 when pos > 4, so
 * that the replica does not take it as a position), then the events from pos on; with
 * skip, the GTID groups whose (untagged) GTID skip holds are left out, as a dump by GTID
 * set leaves them. -1 with a reason when the file is malformed or pos is not where an
 * event starts (nor the end). */
static int build_dump(const uint8_t *file, size_t len, const char *name, uint64_t pos,
                      const w2l__mygtids *skip, bl_stream *s, char *why, size_t whysize)
{
    memset(s, 0, sizeof *s);
    if (len < 4 + 19 || memcmp(file, "\xfe" "bin", 4) != 0) {
        snprintf(why, whysize, "not a binlog file (no 0xFE 'bin' magic)");
        return -1;
    }
    size_t nev = 0;
    int pos_ok = pos == 4 || pos == len;
    for (size_t off = 4; off < len;) {
        if (len - off < 19) {
            snprintf(why, whysize, "event header cut at byte %zu", off);
            return -1;
        }
        size_t el = ev_len(file + off);
        if (el < 19 || el > len - off) {
            snprintf(why, whysize, "event at byte %zu of %zu bytes runs past the end", off, el);
            return -1;
        }
        off += el;
        pos_ok |= off == pos;
        nev++;
    }
    if (!pos_ok) {
        snprintf(why, whysize, "position %llu is not the start of an event",
                 (unsigned long long)pos);
        return -1;
    }
    int crc = file_has_crc(file, len);
    size_t nl = strlen(name);
    /* data: the ROTATE, then 0x00 + event for each event sent */
    s->data = malloc(1 + 19 + 8 + nl + 4 + len - 4 + nev);
    if (!s->data) {
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    uint8_t body[8 + 256];
    for (int i = 0; i < 8; i++) body[i] = (uint8_t)(pos >> (8 * i));
    memcpy(body + 8, name, nl < 256 ? nl : 256);
    size_t rl = artificial_event(s->data, 4, file + 4 + 5, 0, body, 8 + (nl < 256 ? nl : 256), crc);
    size_t cap = 0, at = rl;
    if (add_packet(s, &cap, s->data, rl)) goto oom;
    int skipping = 0;
    for (size_t off = 4; off < len;) {
        size_t el = ev_len(file + off);
        const uint8_t *e = file + off;
        int fde = off == 4 && e[4] == 15;
        if (skip && (e[4] == 33 || e[4] == 34 || e[4] == 42)) {
            uint8_t sid[16];
            int64_t gno;
            skipping = event_gtid(e, el, sid, &gno) &&
                       w2l__mygtids_contains(skip, sid, NULL, 0, gno);
        }
        if (fde || (off >= pos && !skipping)) {
            s->data[at] = 0x00;
            memcpy(s->data + at + 1, e, el);
            if (fde) {
                /* as the server sends a file's FORMAT_DESCRIPTION: the "file in use" flag
                 * cleared, no position when the dump starts past it, the CRC32 again */
                s->data[at + 1 + 17] &= (uint8_t)~0x01;
                if (pos > 4) memset(s->data + at + 1 + 13, 0, 4);
                if (crc) bl_packet_fix_crc(s->data + at, el + 1);
            }
            if (add_packet(s, &cap, s->data + at, el + 1)) goto oom;
            at += el + 1;
        }
        off += el;
    }
    s->len = at;
    return 0;
oom:
    snprintf(why, whysize, "out of memory");
    return -1;
}

int bl_stream_from_binlog(const uint8_t *file, size_t len, const char *name, bl_stream *s,
                          char *why, size_t whysize)
{
    return build_dump(file, len, name, 4, NULL, s, why, whysize);
}

void bl_stream_free(bl_stream *s)
{
    free(s->data);
    free(s->pkts);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    /* bitwise: test inputs are small */
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

void bl_packet_fix_crc(uint8_t *pkt, size_t len)
{
    if (len < 1 + 19 + 4) return;
    uint32_t c = crc32_ieee(pkt + 1, len - 1 - 4);
    for (int i = 0; i < 4; i++) pkt[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

/* ======================================================================================
 * The decoded stream as text
 * ====================================================================================== */

typedef struct out {
    char *p;
    size_t len, cap;
} out;

static void put(out *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t nc = (o->len + n + 1) * 2;
        char *np = realloc(o->p, nc);
        if (!np) return;
        o->p = np;
        o->cap = nc;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

static void printable(out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') puts_(o, "\\n");
        else if (c < 0x20 || c == 0x7F) {
            char b[8];
            snprintf(b, sizeof b, "\\x%02x", c);
            puts_(o, b);
        } else put(o, s + i, 1);
    }
}

/* The last column list printed per table name, so a map is shown when it changes. */
typedef struct seen {
    char name[200];
    char *cols;
} seen;

static void map_line(out *o, w2l__bl_tmap *tm, seen *sn, size_t *nseen, size_t cap, int mysql)
{
    out c = {0};
    for (size_t i = 0; i < tm->ncols; i++) {
        char t[96];
        w2l__bl_col_type_text(&tm->cols[i], t, sizeof t);
        if (i) puts_(&c, ", ");
        puts_(&c, tm->cols[i].name);
        puts_(&c, " ");
        puts_(&c, t);
        if (!tm->cols[i].nullable) puts_(&c, " not null");
        if (mysql && tm->cols[i].charset &&
            (tm->cols[i].is_char || tm->cols[i].type == BL_ENUM || tm->cols[i].type == BL_SET)) {
            snprintf(t, sizeof t, " cs%u", tm->cols[i].charset);
            puts_(&c, t);
        }
        if (tm->cols[i].invisible) puts_(&c, " invisible");
    }
    if (tm->npk) {
        puts_(&c, "; pk");
        for (size_t i = 0; i < tm->npk; i++) {
            puts_(&c, i ? "," : " ");
            puts_(&c, tm->cols[tm->pk[i]].name);
        }
    }
    char name[200];
    snprintf(name, sizeof name, "%s.%s", tm->db, tm->table);
    size_t k = 0;
    while (k < *nseen && strcmp(sn[k].name, name) != 0) k++;
    if (k < *nseen && sn[k].cols && c.p && strcmp(sn[k].cols, c.p) == 0) {
        free(c.p);
        return;
    }
    puts_(o, "MAP ");
    puts_(o, name);
    puts_(o, ": ");
    if (c.p) puts_(o, c.p);
    puts_(o, "\n");
    if (k == *nseen) {
        if (k == cap) {
            free(c.p);
            return;
        }
        snprintf(sn[k].name, sizeof sn[k].name, "%s", name);
        sn[k].cols = NULL;
        (*nseen)++;
    }
    free(sn[k].cols);
    sn[k].cols = c.p;
}

static const w2l__type_opts OPTS = {0, 1}; /* TIME as text: negative and large TIMEs fit */

/* Sets each column's ice type from its table-map type, once per decoded map. */
static w2l_rc map_types(w2l__bl_tmap *tm, w2l_error *err)
{
    if (tm->user) return W2L_OK;
    for (size_t i = 0; i < tm->ncols; i++) {
        char t[96];
        w2l__bl_col_type_text(&tm->cols[i], t, sizeof t);
        if (tm->cols[i].type == BL_VECTOR) /* not mapped by the source (yet): its bytes */
            snprintf(t, sizeof t, "varbinary(%u)", tm->cols[i].vector_dim * 4);
        W2L_TRY(w2l__mysql_type_map_text(t, strlen(t), &OPTS, tm->cols[i].name, NULL,
                                         &tm->cols[i].ice, NULL, err));
    }
    tm->user = tm; /* marks the map as typed; nothing to free */
    return W2L_OK;
}

static w2l_rc image_line(out *o, const w2l__bl_event *ev, const char *op, int after,
                         const uint8_t **p, w2l_value *vals, uint8_t *present, w2l__bl_scratch *sc,
                         w2l_error *err)
{
    const w2l__bl_tmap *tm = ev->tmap;
    w2l__bl_scratch_reset(sc);
    W2L_TRY(w2l__bl_decode_image(ev, after, p, vals, present, NULL, sc, err));
    char head[300];
    snprintf(head, sizeof head, "%s.%s %s ", tm->db, tm->table, op);
    puts_(o, head);
    for (size_t i = 0; i < tm->ncols; i++) {
        if (i) puts_(o, "|");
        if (!(present[i / 8] >> (i % 8) & 1)) {
            puts_(o, "-");
            continue;
        }
        char small[256];
        size_t n = w2l_value_format(tm->cols[i].ice, &vals[i], small, sizeof small);
        if (n < sizeof small) printable(o, small, n);
        else {
            char *big = malloc(n + 1);
            if (!big) return w2l__fail(err, W2L_NOMEM, "out of memory");
            w2l_value_format(tm->cols[i].ice, &vals[i], big, n + 1);
            printable(o, big, n);
            free(big);
        }
    }
    puts_(o, "\n");
    return W2L_OK;
}

static w2l_rc rows_lines(out *o, const w2l__bl_event *ev, w2l__bl_scratch *sc, w2l_error *err)
{
    const w2l__bl_tmap *tm = ev->tmap;
    if (!tm) return w2l__fail(err, W2L_CORRUPT, "rows event for table id %llu, never mapped",
                              (unsigned long long)ev->table_id);
    if (ev->rows_ncols != tm->ncols)
        return w2l__fail(err, W2L_CORRUPT, "rows event of %zu columns for %s.%s of %zu",
                         ev->rows_ncols, tm->db, tm->table, tm->ncols);
    size_t n = tm->ncols ? tm->ncols : 1;
    w2l_value *vals = calloc(n, sizeof *vals);
    uint8_t *present = calloc(n / 8 + 1, 1);
    w2l_rc rc = vals && present ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    const uint8_t *p = ev->data;
    while (rc == W2L_OK && p < ev->end) {
        const uint8_t *row = p;
        if (ev->rows_kind == BL_ROWS_UPDATE) {
            rc = image_line(o, ev, "UB", 0, &p, vals, present, sc, err);
            if (rc == W2L_OK) rc = image_line(o, ev, "UA", 1, &p, vals, present, sc, err);
        } else
            rc = image_line(o, ev, ev->rows_kind == BL_ROWS_DELETE ? "D" : "I", 0, &p, vals,
                            present, sc, err);
        if (rc == W2L_OK && p == row) /* as lib/source/mysql_stream.c */
            rc = w2l__fail(err, W2L_CORRUPT, "rows event: a row image of no bytes");
    }
    free(vals);
    free(present);
    return rc;
}

/* A MySQL GTID as text: UUID[:tag]:gno. */
static void mysql_gtid_line(out *o, const w2l__bl_event *ev)
{
    char u[40];
    const uint8_t *s = ev->sid;
    snprintf(u, sizeof u, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12],
             s[13], s[14], s[15]);
    if (ev->anonymous) {
        puts_(o, "ANONYMOUS_GTID\n");
        return;
    }
    puts_(o, "GTID ");
    puts_(o, u);
    if (ev->tag_len) {
        puts_(o, ":");
        put(o, ev->tag, ev->tag_len);
    }
    char g[32];
    snprintf(g, sizeof g, ":%lld\n", (long long)ev->gno);
    puts_(o, g);
}

static w2l_rc previous_gtids_line(out *o, const w2l__bl_event *ev, w2l_error *err)
{
    w2l__mygtids *set = w2l__mygtids_new();
    if (!set) return w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l_rc rc = w2l__mygtids_decode(set, ev->data, (size_t)(ev->end - ev->data), err);
    char *t = rc == W2L_OK ? w2l__mygtids_format(set) : NULL;
    if (rc == W2L_OK && !t) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        puts_(o, *t ? "PREVIOUS_GTIDS " : "PREVIOUS_GTIDS");
        puts_(o, t);
        puts_(o, "\n");
    }
    w2l__free(t);
    w2l__mygtids_free(set);
    return rc;
}

static w2l_rc replay(unsigned port, int mysql, const char *gtids, char **text, w2l_error *err)
{
    out o = {0};
    puts_(&o, "");
    w2l__my_params mp = {.host = "127.0.0.1", .port = port, .user = "cdc", .pass = "none",
                         .connect_timeout_s = 5, .read_timeout_s = 10};
    w2l__bl_opts bo = {.server_id = 4242, .file = "binlog.000002", .pos = 4, .non_block = 1,
                       .mysql = mysql, .mysql_gtids = gtids};
    w2l__my *conn = NULL;
    w2l__bl *bl = NULL;
    w2l__bl_scratch sc = {0};
    seen sn[32];
    size_t nseen = 0;
    uint64_t first_seq = 0;
    int have_seq = 0;
    w2l_rc rc = w2l__my_connect(&mp, &conn, err);
    if (rc == W2L_OK) rc = w2l__bl_open(conn, &bo, &bl, err);
    while (rc == W2L_OK) {
        w2l__bl_event ev;
        rc = w2l__bl_fetch(bl, &ev, err);
        if (rc != W2L_OK) break;
        char line[300];
        switch (ev.kind) {
        case BL_EV_ROTATE:
            puts_(&o, "ROTATE ");
            printable(&o, ev.file, ev.file_len);
            snprintf(line, sizeof line, " %llu\n", (unsigned long long)ev.pos);
            puts_(&o, line);
            break;
        case BL_EV_FDE: puts_(&o, "FDE\n"); break;
        case BL_EV_GTID_LIST:
            snprintf(line, sizeof line, "GTID_LIST %zu\n", ev.ngtids);
            puts_(&o, line);
            break;
        case BL_EV_GTID:
            if (ev.mysql_gtid) {
                mysql_gtid_line(&o, &ev);
                break;
            }
            if (!have_seq) {
                first_seq = ev.gtid.seq;
                have_seq = 1;
            }
            snprintf(line, sizeof line, "GTID %u-%u-+%llu%s%s%s%s", ev.gtid.domain, ev.gtid.server,
                     (unsigned long long)(ev.gtid.seq - first_seq),
                     ev.gflags & BL_GTID_STANDALONE ? " standalone" : "",
                     ev.gflags & BL_GTID_DDL ? " ddl" : "",
                     ev.gflags & BL_GTID_PREPARED_XA ? " xa-prepared" : "",
                     ev.gflags & BL_GTID_COMPLETED_XA ? " xa-completed" : "");
            puts_(&o, line);
            if (ev.xid_len) {
                puts_(&o, " xid ");
                printable(&o, ev.xid, ev.xid_len);
            }
            puts_(&o, "\n");
            break;
        case BL_EV_QUERY:
            puts_(&o, "QUERY ");
            printable(&o, ev.db, ev.db_len);
            puts_(&o, ": ");
            printable(&o, ev.sql, ev.sql_len);
            puts_(&o, "\n");
            break;
        case BL_EV_XID:
            if (mysql) {
                snprintf(line, sizeof line, "XID %llu\n", (unsigned long long)ev.log_pos);
                puts_(&o, line);
            } else puts_(&o, "XID\n");
            break;
        case BL_EV_PREVIOUS_GTIDS: rc = previous_gtids_line(&o, &ev, err); break;
        case BL_EV_HEARTBEAT:
            if (!mysql) break;
            puts_(&o, "HEARTBEAT ");
            printable(&o, ev.file, ev.file_len);
            snprintf(line, sizeof line, " %llu\n", (unsigned long long)ev.log_pos);
            puts_(&o, line);
            break;
        case BL_EV_XA_PREPARE:
            puts_(&o, "XA_PREPARE ");
            printable(&o, ev.xid, ev.xid_len);
            puts_(&o, "\n");
            break;
        case BL_EV_TABLE_MAP:
            rc = map_types(ev.tmap, err);
            if (rc == W2L_OK) map_line(&o, ev.tmap, sn, &nseen, sizeof sn / sizeof *sn, mysql);
            break;
        case BL_EV_ROWS: rc = rows_lines(&o, &ev, &sc, err); break;
        case BL_EV_STOP: puts_(&o, "STOP\n"); break;
        default: break; /* heartbeats, BINLOG_CHECKPOINT and other events we do not use */
        }
    }
    if (rc == W2L_DONE) rc = W2L_OK;
    w2l__bl_close(bl);
    w2l__my_close(conn);
    w2l__bl_scratch_free(&sc);
    for (size_t i = 0; i < nseen; i++) free(sn[i].cols);
    *text = o.p;
    return rc;
}

w2l_rc bl_replay_text(unsigned port, char **text, w2l_error *err)
{
    return replay(port, 0, NULL, text, err);
}

w2l_rc bl_replay_text_mysql(unsigned port, const char *gtids, char **text, w2l_error *err)
{
    return replay(port, 1, gtids, text, err);
}
