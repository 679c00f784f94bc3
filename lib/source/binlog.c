/*
 * The binlog stream of the "mysql" source (w2l-design(7) sections 1 and 4; test/data/binlog
 * holds a recorded stream and its decoding): the stream object, its TABLE_MAP cache and
 * decoder (both flavours), and the session set-up of a MariaDB server's dump. Both
 * flavours' dumps are read packet by packet and decoded by binlog_mysql.c (MariaDB's own
 * events by binlog_mariadb.c): libmariadb is only the connection and the packet layer;
 * its replication API (mariadb_rpl_*) is not used, because its event parser misreads
 * ROTATE after the first FORMAT_DESCRIPTION and crashes on an event type it does not know.
 *
 *   ROTATE      pos (8 bytes LE at header+19), then the file name up to the end, minus a
 *               CRC32 when the last 4 bytes are the CRC of the rest (artificial ROTATEs,
 *               sent before the FORMAT_DESCRIPTION, may or may not carry one).
 *   TABLE_MAP   post-header: table id (6 LE) + flags (2); body: db (len, bytes, 0),
 *               table (len, bytes, 0), lenenc column count, one type byte per column,
 *               lenenc metadata length + per-column metadata, null bitmap, then the
 *               optional metadata TLVs (type byte, lenenc length, value) of
 *               binlog_row_metadata=FULL: signedness, charsets, column names, ENUM/SET
 *               strings, primary key.
 *   row images  a null bitmap over the present columns, then each present non-NULL value
 *               in its binary form (integers LE; DECIMAL as 9 digits per 4 bytes BE with
 *               the sign bit inverted; DATETIME2/TIMESTAMP2/TIME2 BE with fractions; CHAR,
 *               VARCHAR and BLOB with 1..4 byte length prefixes; ENUM index; SET bitmask;
 *               BIT big-endian; GEOMETRY as a 4-byte LE SRID plus WKB). The values are
 *               converted at once to the Iceberg type the source chose for the column
 *               (w2l__bl_col.ice; type_map.c): DECIMAL(p > 38) to its exact text, up to
 *               65 digits; BIT(64) keeps its 64 bits in a long; GEOMETRY to the WKB
 *               alone; a TINYINT(1) read as boolean is true when nonzero (values other
 *               than 0/1 are reported to the caller, which warns).
 *
 * Event memory: a TABLE_MAP is copied into our table cache, so it outlives the event;
 * everything else in w2l__bl_event is borrowed until the next fetch (libmariadb's packet
 * buffer, or the stream's buffers of inflated data).
 *
 * The decoder is source-aware: `mariadb` says YEAR takes a signedness bit (T16); MariaDB's
 * dump is COM_BINLOG_DUMP after the session variables that ask for its GTID events
 * (@mariadb_slave_capability=4), checksums and heartbeats, and a GTID start
 * (@slave_connect_state); binlog_int.h is what the binlog files share.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mysql.h>
#include <errmsg.h>

#include "binlog_int.h"
#include "mysql_int.h"
#include "../common/gzip.h"
#include "../model/model.h"

/* ---- CRC32 (IEEE, reflected), as events carry it: zlib's (../common/gzip.c) ---- */

uint32_t w2l__bl_crc32(const uint8_t *p, size_t n)
{
    return w2l__zlib_crc32(p, n);
}

/* ---- GTID states ---- */

static int gtid_cmp(const void *a, const void *b)
{
    const w2l__bl_gtid *x = a, *y = b;
    return x->domain < y->domain ? -1 : x->domain > y->domain;
}

w2l_rc w2l__gtid_parse(const char *s, w2l__bl_gtid **out, size_t *n, w2l_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        char *e1, *e2, *e3;
        unsigned long long d = strtoull(p, &e1, 10);
        unsigned long long sv = *e1 == '-' ? strtoull(e1 + 1, &e2, 10) : 0;
        unsigned long long q = *e1 == '-' && *e2 == '-' ? strtoull(e2 + 1, &e3, 10) : 0;
        if (e1 == p || *e1 != '-' || *e2 != '-' || e3 == e2 + 1 ||
            (*e3 && *e3 != ',' && *e3 != ' ') || d > UINT32_MAX || sv > UINT32_MAX) {
            w2l__free(*out);
            *out = NULL;
            *n = 0;
            return w2l__fail(err, W2L_CONFIG,
                             "GTID state '%.200s': expected domain-server-sequence[,...]", s);
        }
        w2l__bl_gtid g = {(uint32_t)d, (uint32_t)sv, q};
        int oom = 0;
        w2l__gtid_set(out, n, &cap, &g, &oom);
        if (oom) {
            w2l__free(*out);
            *out = NULL;
            *n = 0;
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        p = e3;
    }
    return W2L_OK;
}

void w2l__gtid_set(w2l__bl_gtid **g, size_t *n, size_t *cap, const w2l__bl_gtid *one, int *oom)
{
    for (size_t i = 0; i < *n; i++)
        if ((*g)[i].domain == one->domain) {
            (*g)[i] = *one;
            return;
        }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        w2l__bl_gtid *ng = w2l__realloc(*g, nc * sizeof *ng);
        if (!ng) {
            *oom = 1;
            return;
        }
        *g = ng;
        *cap = nc;
    }
    (*g)[(*n)++] = *one;
    qsort(*g, *n, sizeof **g, gtid_cmp);
}

size_t w2l__gtid_format(const w2l__bl_gtid *g, size_t n, char *buf, size_t size)
{
    size_t len = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%u-%u-%llu",
                         i ? "," : "", g[i].domain, g[i].server, (unsigned long long)g[i].seq);
        len += (size_t)k;
    }
    return len;
}

/* ---- the stream ---- */

static void tmap_free(w2l__bl_tmap *tm)
{
    if (!tm) return;
    if (tm->user_free) tm->user_free(tm->user);
    w2l__arena_release(&tm->arena);
    w2l__free(tm);
}

static void cache_clear(w2l__bl *b)
{
    for (size_t i = 0; i < b->nslots; i++) {
        tmap_free(b->slots[i].tm);
        b->slots[i].tm = NULL;
    }
    b->nused = 0;
}

static w2l__bl_tslot *cache_slot(w2l__bl *b, uint64_t id)
{
    size_t mask = b->nslots - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ULL >> 20) & mask;
    while (b->slots[i].tm && b->slots[i].id != id) i = (i + 1) & mask;
    return &b->slots[i];
}

w2l__bl_tmap *w2l__bl_cache_find(w2l__bl *b, uint64_t id)
{
    w2l__bl_tslot *s = cache_slot(b, id);
    return s->tm;
}

void w2l__bl_fail_mysql(w2l__bl *b, w2l_error *err, const char *what)
{
    unsigned e = mysql_errno(b->mysql);
    const char *m = mysql_error(b->mysql);
    w2l_rc code = W2L_SOURCE;
    const char *hint = "";
    if (e == 1236) hint = " (the position was purged from the server or is not in its binlog)";
    else if (e == 4052 || e == 1105)
        hint = " (another replica or CDC stream uses the same source.server-id)";
    else if (e == CR_SERVER_LOST || e == CR_SERVER_GONE_ERROR || e == CR_CONNECTION_ERROR ||
             e == 1927 || e == CR_CONN_HOST_ERROR || e == 2026)
        code = W2L_UNAVAILABLE;
    w2l__fail(err, code, "binlog %s from %s: %s (error %u)%s", what, w2l__my_name(b->conn),
              m && *m ? m : "failed", e, hint);
    err->sys_errno = (int)e;
    if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
}

w2l_rc w2l__bl_open(w2l__my *conn, const w2l__bl_opts *o, w2l__bl **out, w2l_error *err)
{
    *out = NULL;
    w2l__bl *b = w2l__calloc(1, sizeof *b);
    W2L_NOMEM_IF(!b, err);
    b->conn = conn;
    b->mysql = w2l__my_handle(conn);
    b->mariadb = 1;
    b->non_block = o->non_block;
    b->nslots = 256;
    b->slots = w2l__calloc(b->nslots, sizeof *b->slots);
    if (!b->slots) {
        w2l__free(b);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (o->mysql) {
        b->is_mysql = 1;
        b->mariadb = 0;
        w2l_rc mrc = w2l__bl_my_open(b, o, err);
        if (mrc != W2L_OK) {
            w2l__bl_close(b);
            return mrc;
        }
        *out = b;
        return W2L_OK;
    }
    char sql[512];
    w2l_rc rc = w2l__my_exec(conn, "SET @master_binlog_checksum = @@global.binlog_checksum", err);
    if (rc == W2L_OK) rc = w2l__my_exec(conn, "SET @mariadb_slave_capability = 4", err);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "SET @master_heartbeat_period = %lld",
                 (long long)(o->heartbeat_ms > 0 ? o->heartbeat_ms : 1000) * 1000000LL);
        rc = w2l__my_exec(conn, sql, err);
    }
    if (rc == W2L_OK && o->gtid && *o->gtid) {
        char esc[400];
        size_t gl = strlen(o->gtid);
        if (gl > 190) rc = w2l__fail(err, W2L_CONFIG, "GTID state too long");
        else {
            w2l__my_escape(conn, esc, o->gtid, gl);
            snprintf(sql, sizeof sql, "SET @slave_connect_state = '%s'", esc);
            rc = w2l__my_exec(conn, sql, err);
            if (rc == W2L_OK) rc = w2l__my_exec(conn, "SET @slave_gtid_strict_mode = 1", err);
            if (rc == W2L_OK) rc = w2l__my_exec(conn, "SET @slave_gtid_ignore_duplicates = 0", err);
        }
    }
    if (rc != W2L_OK) {
        w2l__bl_close(b);
        w2l__error_prefix(err, "binlog dump setup: ");
        return rc;
    }
    /* COM_BINLOG_DUMP: pos (4 LE), flags (2: 1 = non-block; 2, "send ANNOTATE_ROWS", never:
     * SQL text we never need), server id (4), file name; a GTID start names no file (the
     * server finds it from @slave_connect_state) */
    int by_gtid = o->gtid && *o->gtid;
    const char *f = o->file && !by_gtid ? o->file : "";
    size_t fl = strlen(f);
    uint8_t cmd[10 + 256];
    if (fl > 255) {
        w2l__bl_close(b);
        return w2l__fail(err, W2L_CONFIG, "binlog file name '%.100s...' too long", f);
    }
    if (o->file && !by_gtid && o->pos > UINT32_MAX) {
        w2l__bl_close(b);
        return w2l__fail(err, W2L_CONFIG,
                         "binlog position %llu does not fit COM_BINLOG_DUMP (start from a "
                         "GTID state)",
                         (unsigned long long)o->pos);
    }
    w2l__put_le(cmd, o->file && !by_gtid ? o->pos : 4, 4);
    w2l__put_le(cmd + 4, o->non_block ? 1u : 0u, 2);
    w2l__put_le(cmd + 6, o->server_id, 4);
    memcpy(cmd + 10, f, fl);
    snprintf(b->file, sizeof b->file, "%s", by_gtid ? "(GTID dump)" : f);
    rc = w2l__bl_send_dump(b, 0x12, cmd, 10 + fl, err);
    if (rc != W2L_OK) {
        w2l__bl_close(b);
        return rc;
    }
    *out = b;
    return W2L_OK;
}

void w2l__bl_close(w2l__bl *b)
{
    if (!b) return;
    w2l__bl_read_close(b);
    cache_clear(b);
    w2l__free(b->slots);
    w2l__free(b->gl);
    w2l__free(b);
}

void w2l__bl_stats(const w2l__bl *b, uint64_t *bytes, uint64_t *events)
{
    *bytes = b->bytes;
    *events = b->events;
}

/* ---- TABLE_MAP ---- */

static int is_numeric(const w2l__bl *b, uint8_t t)
{
    switch (t) {
    case BL_TINY: case BL_SHORT: case BL_INT24: case BL_LONG: case BL_LONGLONG: case BL_FLOAT:
    case BL_DOUBLE: case BL_NEWDECIMAL: case BL_DECIMAL: return 1;
    case BL_YEAR: return b->mariadb;
    default: return 0;
    }
}

static int is_char_col(uint8_t t)
{
    return t == BL_STRING || t == BL_VARCHAR || t == BL_VAR_STRING || t == BL_BLOB ||
           t == BL_TINY_BLOB || t == BL_MEDIUM_BLOB || t == BL_LONG_BLOB;
}

/* Columns the charset lists (DEFAULT_CHARSET, COLUMN_CHARSET) count: MySQL 9 counts its
 * VECTOR columns too (as binary); GEOMETRY and JSON are never counted. */
static int in_charset_list(const w2l__bl *b, uint8_t t)
{
    return is_char_col(t) || (b->is_mysql && t == BL_VECTOR);
}

static w2l_rc tm_corrupt(w2l_error *err, const char *what)
{
    return w2l__fail(err, W2L_CORRUPT, "binlog: malformed TABLE_MAP event (%s)", what);
}

/* Decodes a list of strings: per entry lenenc count, then count x (lenenc len, bytes). */
static int str_lists(w2l__bl_tmap *tm, const uint8_t *p, const uint8_t *end, uint8_t want)
{
    for (size_t i = 0; i < tm->ncols && p < end; i++) {
        w2l__bl_col *c = &tm->cols[i];
        if (c->type != want) continue;
        uint64_t n;
        if (w2l__bl_lenenc(&p, end, &n) || n > 65536) return -1;
        const char **v = w2l__arena_alloc(&tm->arena, (n ? n : 1) * sizeof *v);
        if (!v) return -2;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t l;
            if (w2l__bl_lenenc(&p, end, &l) || (uint64_t)(end - p) < l) return -1;
            v[k] = w2l__arena_strndup(&tm->arena, (const char *)p, (size_t)l);
            if (!v[k]) return -2;
            p += l;
        }
        c->values = v;
        c->nvalues = (size_t)n;
    }
    return 0;
}

/* ENUM_AND_SET charsets (MySQL): as DEFAULT_CHARSET / COLUMN_CHARSET, over the ENUM and
 * SET columns. */
static w2l_rc enum_charsets(w2l__bl_tmap *tm, uint8_t t, const uint8_t *v, const uint8_t *vend,
                            w2l_error *err)
{
    uint64_t def = 0, idx, cs;
    if (t == 10 && w2l__bl_lenenc(&v, vend, &def)) return tm_corrupt(err, "enum/set charset");
    for (size_t i = 0; i < tm->ncols; i++) {
        w2l__bl_col *c = &tm->cols[i];
        if (c->type != BL_ENUM && c->type != BL_SET) continue;
        if (t == 10) c->charset = (uint32_t)def;
        else if (w2l__bl_lenenc(&v, vend, &cs)) return tm_corrupt(err, "enum/set charset");
        else c->charset = (uint32_t)cs;
    }
    while (t == 10 && v < vend) {
        if (w2l__bl_lenenc(&v, vend, &idx) || w2l__bl_lenenc(&v, vend, &cs))
            return tm_corrupt(err, "enum/set charset");
        for (size_t i = 0, k = 0; i < tm->ncols; i++)
            if ((tm->cols[i].type == BL_ENUM || tm->cols[i].type == BL_SET) && k++ == idx)
                tm->cols[i].charset = (uint32_t)cs;
    }
    return W2L_OK;
}

static w2l_rc decode_tmap(w2l__bl *b, const uint8_t *body, const uint8_t *end, w2l__bl_tmap *tm,
                          w2l_error *err)
{
    const uint8_t *p = body;
    if (end - p < 8) return tm_corrupt(err, "post-header");
    tm->table_id = w2l__bl_le(p, 6);
    p += 8;
    for (int k = 0; k < 2; k++) {
        if (p >= end) return tm_corrupt(err, "names");
        size_t l = *p++;
        if ((size_t)(end - p) < l + 1) return tm_corrupt(err, "names");
        char *s = w2l__arena_strndup(&tm->arena, (const char *)p, l);
        W2L_NOMEM_IF(!s, err);
        if (k == 0) tm->db = s;
        else tm->table = s;
        p += l + 1;
    }
    uint64_t n;
    if (w2l__bl_lenenc(&p, end, &n) || n > 4096 || (uint64_t)(end - p) < n)
        return tm_corrupt(err, "column count");
    tm->ncols = (size_t)n;
    tm->cols = w2l__arena_alloc(&tm->arena, (n ? n : 1) * sizeof *tm->cols);
    W2L_NOMEM_IF(!tm->cols, err);
    memset(tm->cols, 0, (n ? n : 1) * sizeof *tm->cols);
    for (size_t i = 0; i < n; i++) tm->cols[i].type = p[i];
    p += n;
    uint64_t mlen;
    if (w2l__bl_lenenc(&p, end, &mlen) || (uint64_t)(end - p) < mlen)
        return tm_corrupt(err, "metadata length");
    const uint8_t *m = p, *mend = p + mlen;
    for (size_t i = 0; i < n; i++) {
        w2l__bl_col *c = &tm->cols[i];
        int need = 0;
        switch (c->type) {
        case BL_FLOAT: case BL_DOUBLE: case BL_BLOB: case BL_TINY_BLOB: case BL_MEDIUM_BLOB:
        case BL_LONG_BLOB: case BL_GEOMETRY: case BL_JSON: case BL_TIMESTAMP2: case BL_DATETIME2:
        case BL_TIME2: case BL_VECTOR: need = 1; break;
        case BL_NEWDECIMAL: case BL_VARCHAR: case BL_VAR_STRING: case BL_STRING: case BL_BIT:
        case BL_ENUM: case BL_SET: need = 2; break;
        default: need = 0;
        }
        if (mend - m < need) return tm_corrupt(err, "column metadata");
        switch (c->type) {
        case BL_VARCHAR: case BL_VAR_STRING: c->meta = (uint32_t)w2l__bl_le(m, 2); break;
        case BL_NEWDECIMAL: c->meta = (uint32_t)m[0] << 8 | m[1]; break;
        case BL_BIT: c->meta = (uint32_t)m[1] * 8 + m[0]; break;
        case BL_STRING: case BL_ENUM: case BL_SET: {
            uint8_t m0 = m[0], m1 = m[1];
            if ((m0 & 0x30) != 0x30) { /* CHAR longer than 255 bytes: length bits in m0 */
                c->type = BL_STRING;
                c->meta = m1 | (uint32_t)((m0 & 0x30) ^ 0x30) << 4;
            } else if (m0 == BL_ENUM || m0 == BL_SET) {
                c->type = m0;
                c->meta = m1;
            } else {
                c->type = BL_STRING;
                c->meta = m1;
            }
            break;
        }
        default: c->meta = need ? m[0] : 0;
        }
        m += need;
    }
    p = mend;
    size_t nb = (size_t)(n + 7) / 8;
    if ((size_t)(end - p) < nb) return tm_corrupt(err, "null bitmap");
    for (size_t i = 0; i < n; i++) tm->cols[i].nullable = (p[i / 8] >> (i % 8)) & 1;
    p += nb;
    /* optional metadata */
    while (p < end) {
        uint8_t t = *p++;
        uint64_t l;
        if (w2l__bl_lenenc(&p, end, &l) || (uint64_t)(end - p) < l)
            return tm_corrupt(err, "optional metadata");
        const uint8_t *v = p, *vend = p + l;
        p = vend;
        switch (t) {
        case 1: { /* SIGNEDNESS: one bit per numeric column, MSB first */
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (!is_numeric(b, tm->cols[i].type)) continue;
                if (v + k / 8 < vend) tm->cols[i].is_unsigned = (v[k / 8] >> (7 - k % 8)) & 1;
                k++;
            }
            break;
        }
        case 2: case 3: { /* DEFAULT_CHARSET (default + exceptions) / COLUMN_CHARSET */
            uint64_t def = 0, idx, cs;
            if (t == 2 && w2l__bl_lenenc(&v, vend, &def)) return tm_corrupt(err, "charset");
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (in_charset_list(b, tm->cols[i].type)) {
                    if (t == 2) tm->cols[i].charset = (uint32_t)def;
                    else {
                        if (w2l__bl_lenenc(&v, vend, &cs)) return tm_corrupt(err, "column charset");
                        tm->cols[i].charset = (uint32_t)cs;
                    }
                    k++;
                }
            if (t == 2)
                while (v < vend) {
                    if (w2l__bl_lenenc(&v, vend, &idx) || w2l__bl_lenenc(&v, vend, &cs))
                        return tm_corrupt(err, "charset");
                    for (size_t i = 0, kk = 0; i < n; i++)
                        if (in_charset_list(b, tm->cols[i].type) && kk++ == idx)
                            tm->cols[i].charset = (uint32_t)cs;
                }
            break;
        }
        case 4: /* COLUMN_NAME */
            for (size_t i = 0; i < n; i++) {
                uint64_t sl;
                if (w2l__bl_lenenc(&v, vend, &sl) || (uint64_t)(vend - v) < sl)
                    return tm_corrupt(err, "column names");
                tm->cols[i].name = w2l__arena_strndup(&tm->arena, (const char *)v, (size_t)sl);
                W2L_NOMEM_IF(!tm->cols[i].name, err);
                v += sl;
            }
            tm->has_names = 1;
            break;
        case 5: case 6: { /* SET / ENUM strings */
            int r = str_lists(tm, v, vend, t == 5 ? BL_SET : BL_ENUM);
            if (r == -2) return w2l__fail(err, W2L_NOMEM, "out of memory");
            if (r) return tm_corrupt(err, "enum/set strings");
            break;
        }
        case 8: case 9: { /* SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX */
            size_t cap = n ? n : 1;
            tm->pk = w2l__arena_alloc(&tm->arena, cap * sizeof *tm->pk);
            W2L_NOMEM_IF(!tm->pk, err);
            tm->npk = 0;
            while (v < vend && tm->npk < cap) {
                uint64_t idx, pre;
                if (w2l__bl_lenenc(&v, vend, &idx) || idx >= n)
                    return tm_corrupt(err, "primary key");
                if (t == 9 && w2l__bl_lenenc(&v, vend, &pre)) return tm_corrupt(err, "primary key");
                tm->pk[tm->npk++] = (size_t)idx;
            }
            break;
        }
        case 7: /* GEOMETRY_TYPE: lenenc per GEOMETRY column */
            for (size_t i = 0; b->is_mysql && i < n; i++)
                if (tm->cols[i].type == BL_GEOMETRY) {
                    uint64_t g;
                    if (w2l__bl_lenenc(&v, vend, &g)) return tm_corrupt(err, "geometry types");
                    tm->cols[i].geom_type = (uint32_t)g;
                }
            break;
        case 10: case 11: /* ENUM_AND_SET_DEFAULT_CHARSET / _COLUMN_CHARSET (MySQL) */
            if (b->is_mysql) W2L_TRY(enum_charsets(tm, t, v, vend, err));
            break;
        case 12: /* COLUMN_VISIBILITY (MySQL 8.0.23+): one bit per column, MSB first */
            for (size_t i = 0; b->is_mysql && i < n && v + i / 8 < vend; i++)
                tm->cols[i].invisible = !((v[i / 8] >> (7 - i % 8)) & 1);
            break;
        case 13: /* VECTOR_DIMENSIONALITY (MySQL 9.0): lenenc per VECTOR column */
            for (size_t i = 0; b->is_mysql && i < n; i++)
                if (tm->cols[i].type == BL_VECTOR) {
                    uint64_t d;
                    if (w2l__bl_lenenc(&v, vend, &d)) return tm_corrupt(err, "vector dimensions");
                    tm->cols[i].vector_dim = (uint32_t)d;
                }
            break;
        default: break; /* MariaDB's geometry types and enum/set charsets: not needed */
        }
    }
    for (size_t i = 0; i < n; i++) {
        w2l__bl_col *c = &tm->cols[i];
        c->is_char = (uint8_t)is_char_col(c->type);
        if (!c->name) {
            char nm[32];
            snprintf(nm, sizeof nm, "col%zu", i + 1);
            c->name = w2l__arena_strndup(&tm->arena, nm, strlen(nm));
            W2L_NOMEM_IF(!c->name, err);
        }
    }
    return W2L_OK;
}

size_t w2l__bl_col_type_text(const w2l__bl_col *c, char *buf, size_t size)
{
    const char *u = c->is_unsigned ? " unsigned" : "";
    int bin = c->charset == 63;
    switch (c->type) {
    case BL_TINY: return (size_t)snprintf(buf, size, "tinyint%s", u);
    case BL_SHORT: return (size_t)snprintf(buf, size, "smallint%s", u);
    case BL_INT24: return (size_t)snprintf(buf, size, "mediumint%s", u);
    case BL_LONG: return (size_t)snprintf(buf, size, "int%s", u);
    case BL_LONGLONG: return (size_t)snprintf(buf, size, "bigint%s", u);
    case BL_FLOAT: return (size_t)snprintf(buf, size, "float");
    case BL_DOUBLE: return (size_t)snprintf(buf, size, "double");
    case BL_NEWDECIMAL:
        return (size_t)snprintf(buf, size, "decimal(%u,%u)", c->meta >> 8, c->meta & 0xFF);
    case BL_YEAR: return (size_t)snprintf(buf, size, "year");
    case BL_DATE: case BL_NEWDATE: return (size_t)snprintf(buf, size, "date");
    case BL_TIMESTAMP: return (size_t)snprintf(buf, size, "timestamp");
    case BL_TIMESTAMP2: return (size_t)snprintf(buf, size, "timestamp(%u)", c->meta);
    case BL_DATETIME: return (size_t)snprintf(buf, size, "datetime");
    case BL_DATETIME2: return (size_t)snprintf(buf, size, "datetime(%u)", c->meta);
    case BL_TIME: return (size_t)snprintf(buf, size, "time");
    case BL_TIME2: return (size_t)snprintf(buf, size, "time(%u)", c->meta);
    case BL_BIT: return (size_t)snprintf(buf, size, "bit(%u)", c->meta);
    case BL_VARCHAR: case BL_VAR_STRING:
        return (size_t)snprintf(buf, size, "%s(%u)", bin ? "varbinary" : "varchar",
                                c->meta ? c->meta : 1);
    case BL_STRING: return (size_t)snprintf(buf, size, "%s(%u)", bin ? "binary" : "char", c->meta);
    case BL_BLOB: case BL_TINY_BLOB: case BL_MEDIUM_BLOB: case BL_LONG_BLOB:
        return (size_t)snprintf(buf, size, "%s", bin ? "longblob" : "longtext");
    case BL_JSON: return (size_t)snprintf(buf, size, "json");
    case BL_ENUM: return (size_t)snprintf(buf, size, "enum('')");
    case BL_SET: return (size_t)snprintf(buf, size, "set('')");
    case BL_GEOMETRY: return (size_t)snprintf(buf, size, "geometry");
    case BL_VECTOR: return (size_t)snprintf(buf, size, "vector(%u)", c->vector_dim);
    default: return (size_t)snprintf(buf, size, "binlog_type_%u", c->type);
    }
}

/* ---- fetching ---- */

w2l_rc w2l__bl_table_map(w2l__bl *b, const uint8_t *hdr, size_t evlen, size_t crc,
                         w2l__bl_event *out, w2l_error *err)
{
    if (evlen < 19 + 8 + crc) return tm_corrupt(err, "length");
    const uint8_t *body = hdr + 19, *end = hdr + evlen - crc;
    uint64_t id = w2l__bl_le(body, 6);
    if (b->nused * 2 >=
        b->nslots) { /* grow, or forget every map: each transaction repeats its maps */
        if (b->nslots < 8192) {
            w2l__bl_tslot *old = b->slots;
            size_t on = b->nslots;
            w2l__bl_tslot *ns = w2l__calloc(on * 2, sizeof *ns);
            W2L_NOMEM_IF(!ns, err);
            b->slots = ns;
            b->nslots = on * 2;
            for (size_t i = 0; i < on; i++)
                if (old[i].tm) *cache_slot(b, old[i].id) = old[i];
            w2l__free(old);
        } else cache_clear(b);
    }
    w2l__bl_tslot *s = cache_slot(b, id);
    size_t rl = (size_t)(end - body);
    if (s->tm && s->tm->raw_len == rl && memcmp(s->tm->raw, body, rl) == 0) {
        out->tmap = s->tm;
        return W2L_OK;
    }
    w2l__bl_tmap *tm = w2l__calloc(1, sizeof *tm);
    W2L_NOMEM_IF(!tm, err);
    w2l__arena_init(&tm->arena, 4096);
    tm->raw = w2l__arena_alloc(&tm->arena, rl ? rl : 1);
    if (!tm->raw) {
        tmap_free(tm);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    memcpy(tm->raw, body, rl);
    tm->raw_len = rl;
    tm->mysql = b->is_mysql;
    w2l_rc rc = decode_tmap(b, body, end, tm, err);
    if (rc != W2L_OK) {
        tmap_free(tm);
        return rc;
    }
    if (s->tm) tmap_free(s->tm);
    else b->nused++;
    s->id = id;
    s->tm = tm;
    out->tmap = tm;
    return W2L_OK;
}

w2l_rc w2l__bl_fetch(w2l__bl *b, w2l__bl_event *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    return w2l__bl_read(b, out, err);
}
