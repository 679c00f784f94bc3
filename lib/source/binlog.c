/*
 * The binlog stream of the "mysql" source (DESIGN.md sections 1 and 4; shared notes on
 * the binlog, sections 3 to 5): libmariadb's replication API is used only as the
 * transport (COM_BINLOG_DUMP, framing, CRC32 checks, inflation of compressed events);
 * everything it parses unreliably is decoded here from the raw event bytes:
 *
 *   ROTATE      pos (8 bytes LE at header+19), then the file name up to the end, minus a
 *               CRC32 when the last 4 bytes are the CRC of the rest (the library misreads
 *               ROTATE after the first FORMAT_DESCRIPTION: trap T1).
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
 * The header fields, GTID, GTID_LIST, QUERY (inflated), XID, HEARTBEAT and the rows
 * events' bitmaps and (inflated) row data are taken from the library's structs, which
 * were verified against the server. Event memory: the library reuses one event and frees
 * it when fetch returns NULL (trap T6); a TABLE_MAP is copied into our table cache, so it
 * outlives the event; everything else in w2l__bl_event is borrowed until the next fetch.
 *
 * The decoder is source-aware: `mariadb` says YEAR takes a signedness bit (T16).
 */
#include <stdio.h>
#include <stdlib.h>

#include <mysql.h>
#include <mariadb_rpl.h>
#include <errmsg.h>

#include "mysql_int.h"
#include "../model/model.h"

__extension__ typedef unsigned __int128 u128;

/* ---- CRC32 (IEEE, reflected), to tell a ROTATE's trailing checksum ---- */

static uint32_t crc_table[256];
static void crc_init(void)
{
    if (crc_table[1]) return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ---- little helpers ---- */

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* Length-encoded integer; 0 on success, -1 when it runs past end. */
static int lenenc(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end) return -1;
    int n = *p < 0xFB ? 0 : *p == 0xFC ? 2 : *p == 0xFD ? 3 : *p == 0xFE ? 8 : -1;
    if (n < 0 || end - p < 1 + n) return -1;
    *out = n == 0 ? *p : le(p + 1, n);
    *pp = p + 1 + n;
    return 0;
}

/* ---- scratch ---- */

typedef struct w2l__bl_chunk {
    struct w2l__bl_chunk *next;
    size_t cap, used;
    _Alignas(16) char data[];
} w2l__bl_chunk;

void w2l__bl_scratch_reset(w2l__bl_scratch *s)
{
    for (w2l__bl_chunk *c = s->head; c; c = c->next) c->used = 0;
    s->cur = s->head;
}

void w2l__bl_scratch_free(w2l__bl_scratch *s)
{
    for (w2l__bl_chunk *c = s->head, *n; c; c = n) {
        n = c->next;
        w2l__free(c);
    }
    s->head = s->cur = NULL;
}

static char *scratch_alloc(w2l__bl_scratch *s, size_t n)
{
    for (;;) {
        w2l__bl_chunk *c = s->cur;
        if (c && c->cap - c->used >= n) {
            char *p = c->data + c->used;
            c->used += n;
            return p;
        }
        if (c && c->next) {
            s->cur = c->next;
            continue;
        }
        size_t cap = n > 60000 ? n : 64 * 1024;
        w2l__bl_chunk *nc = w2l__malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->next = NULL;
        nc->cap = cap;
        nc->used = 0;
        if (c) c->next = nc;
        else s->head = nc;
        s->cur = nc;
    }
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
        if (e1 == p || *e1 != '-' || *e2 != '-' || e3 == e2 + 1 || (*e3 && *e3 != ',' && *e3 != ' ') ||
            d > UINT32_MAX || sv > UINT32_MAX) {
            w2l__free(*out);
            *out = NULL;
            *n = 0;
            return w2l__fail(err, W2L_CONFIG, "GTID state '%.200s': expected domain-server-sequence[,...]", s);
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
        int k = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%u-%u-%llu", i ? "," : "",
                         g[i].domain, g[i].server, (unsigned long long)g[i].seq);
        len += (size_t)k;
    }
    return len;
}

/* ---- the stream ---- */

typedef struct tslot {
    uint64_t id;
    w2l__bl_tmap *tm;
} tslot;

struct w2l__bl {
    w2l__my *conn;
    MYSQL *mysql;
    MARIADB_RPL *rpl;
    MARIADB_RPL_EVENT *ev;
    int mariadb;            /* source flavour: YEAR has a signedness bit */
    int non_block;
    tslot *slots;           /* open addressing by table id */
    size_t nslots, nused;
    w2l__bl_gtid *gl;       /* GTID_LIST copy */
    size_t gl_cap;
    uint64_t bytes, events;
};

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

static tslot *cache_slot(w2l__bl *b, uint64_t id)
{
    size_t mask = b->nslots - 1, i = (size_t)(id * 0x9E3779B97F4A7C15ULL >> 20) & mask;
    while (b->slots[i].tm && b->slots[i].id != id) i = (i + 1) & mask;
    return &b->slots[i];
}

static w2l__bl_tmap *cache_find(w2l__bl *b, uint64_t id)
{
    tslot *s = cache_slot(b, id);
    return s->tm;
}

static void fail_mysql(w2l__bl *b, w2l_error *err, const char *what)
{
    unsigned e = mysql_errno(b->mysql);
    const char *m = mysql_error(b->mysql);
    w2l_rc code = W2L_SOURCE;
    const char *hint = "";
    if (e == 1236) hint = " (the position was purged from the server or is not in its binlog)";
    else if (e == 4052 || e == 1105) hint = " (another replica or CDC stream uses the same source.server-id)";
    else if (e == CR_SERVER_LOST || e == CR_SERVER_GONE_ERROR || e == CR_CONNECTION_ERROR || e == 1927 ||
             e == CR_CONN_HOST_ERROR || e == 2026)
        code = W2L_UNAVAILABLE;
    w2l__fail(err, code, "binlog %s from %s: %s (error %u)%s", what, w2l__my_name(b->conn), m && *m ? m : "failed",
              e, hint);
    err->sys_errno = (int)e;
    if (code == W2L_UNAVAILABLE) err->flags |= W2L_ERR_RETRIABLE;
}

w2l_rc w2l__bl_open(w2l__my *conn, const w2l__bl_opts *o, w2l__bl **out, w2l_error *err)
{
    crc_init();
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
    b->rpl = mariadb_rpl_init(b->mysql);
    if (!b->rpl) {
        w2l__bl_close(b);
        return w2l__fail(err, W2L_NOMEM, "binlog: mariadb_rpl_init failed");
    }
    unsigned flags = o->non_block ? MARIADB_RPL_BINLOG_DUMP_NON_BLOCK : 0; /* no ANNOTATE_ROWS: SQL text we never need */
    mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_SERVER_ID, (unsigned)o->server_id);
    mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_FLAGS, flags);
    if (o->file && !(o->gtid && *o->gtid)) {
        mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_FILENAME, o->file, strlen(o->file));
        mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_START, (unsigned long)o->pos);
    } else {
        mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_FILENAME, "", (size_t)0);
        mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_START, 4UL);
    }
    mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_VERIFY_CHECKSUM, 1u);
    mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_UNCOMPRESS, 1u);
    if (mariadb_rpl_open(b->rpl) != 0) {
        fail_mysql(b, err, "dump");
        w2l__bl_close(b);
        return err->code;
    }
    *out = b;
    return W2L_OK;
}

void w2l__bl_close(w2l__bl *b)
{
    if (!b) return;
    if (b->ev) mariadb_free_rpl_event(b->ev);
    if (b->rpl) mariadb_rpl_close(b->rpl);
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
    return t == BL_STRING || t == BL_VARCHAR || t == BL_VAR_STRING || t == BL_BLOB || t == BL_TINY_BLOB ||
           t == BL_MEDIUM_BLOB || t == BL_LONG_BLOB;
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
        if (lenenc(&p, end, &n) || n > 65536) return -1;
        const char **v = w2l__arena_alloc(&tm->arena, (n ? n : 1) * sizeof *v);
        if (!v) return -2;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t l;
            if (lenenc(&p, end, &l) || (uint64_t)(end - p) < l) return -1;
            v[k] = w2l__arena_strndup(&tm->arena, (const char *)p, (size_t)l);
            if (!v[k]) return -2;
            p += l;
        }
        c->values = v;
        c->nvalues = (size_t)n;
    }
    return 0;
}

static w2l_rc decode_tmap(w2l__bl *b, const uint8_t *body, const uint8_t *end, w2l__bl_tmap *tm, w2l_error *err)
{
    const uint8_t *p = body;
    if (end - p < 8) return tm_corrupt(err, "post-header");
    tm->table_id = le(p, 6);
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
    if (lenenc(&p, end, &n) || n > 4096 || (uint64_t)(end - p) < n) return tm_corrupt(err, "column count");
    tm->ncols = (size_t)n;
    tm->cols = w2l__arena_alloc(&tm->arena, (n ? n : 1) * sizeof *tm->cols);
    W2L_NOMEM_IF(!tm->cols, err);
    memset(tm->cols, 0, (n ? n : 1) * sizeof *tm->cols);
    for (size_t i = 0; i < n; i++) tm->cols[i].type = p[i];
    p += n;
    uint64_t mlen;
    if (lenenc(&p, end, &mlen) || (uint64_t)(end - p) < mlen) return tm_corrupt(err, "metadata length");
    const uint8_t *m = p, *mend = p + mlen;
    for (size_t i = 0; i < n; i++) {
        w2l__bl_col *c = &tm->cols[i];
        int need = 0;
        switch (c->type) {
        case BL_FLOAT: case BL_DOUBLE: case BL_BLOB: case BL_TINY_BLOB: case BL_MEDIUM_BLOB:
        case BL_LONG_BLOB: case BL_GEOMETRY: case BL_JSON: case BL_TIMESTAMP2: case BL_DATETIME2:
        case BL_TIME2: need = 1; break;
        case BL_NEWDECIMAL: case BL_VARCHAR: case BL_VAR_STRING: case BL_STRING: case BL_BIT:
        case BL_ENUM: case BL_SET: need = 2; break;
        default: need = 0;
        }
        if (mend - m < need) return tm_corrupt(err, "column metadata");
        switch (c->type) {
        case BL_VARCHAR: case BL_VAR_STRING: c->meta = (uint32_t)le(m, 2); break;
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
        if (lenenc(&p, end, &l) || (uint64_t)(end - p) < l) return tm_corrupt(err, "optional metadata");
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
            if (t == 2 && lenenc(&v, vend, &def)) return tm_corrupt(err, "charset");
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (is_char_col(tm->cols[i].type)) {
                    if (t == 2) tm->cols[i].charset = (uint32_t)def;
                    else {
                        if (lenenc(&v, vend, &cs)) return tm_corrupt(err, "column charset");
                        tm->cols[i].charset = (uint32_t)cs;
                    }
                    k++;
                }
            if (t == 2)
                while (v < vend) {
                    if (lenenc(&v, vend, &idx) || lenenc(&v, vend, &cs)) return tm_corrupt(err, "charset");
                    for (size_t i = 0, kk = 0; i < n; i++)
                        if (is_char_col(tm->cols[i].type) && kk++ == idx) tm->cols[i].charset = (uint32_t)cs;
                }
            break;
        }
        case 4: /* COLUMN_NAME */
            for (size_t i = 0; i < n; i++) {
                uint64_t sl;
                if (lenenc(&v, vend, &sl) || (uint64_t)(vend - v) < sl) return tm_corrupt(err, "column names");
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
                if (lenenc(&v, vend, &idx) || idx >= n) return tm_corrupt(err, "primary key");
                if (t == 9 && lenenc(&v, vend, &pre)) return tm_corrupt(err, "primary key");
                tm->pk[tm->npk++] = (size_t)idx;
            }
            break;
        }
        default: break; /* geometry types, enum/set charsets, MySQL's visibility: not needed */
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
    case BL_NEWDECIMAL: return (size_t)snprintf(buf, size, "decimal(%u,%u)", c->meta >> 8, c->meta & 0xFF);
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
        return (size_t)snprintf(buf, size, "%s(%u)", bin ? "varbinary" : "varchar", c->meta ? c->meta : 1);
    case BL_STRING: return (size_t)snprintf(buf, size, "%s(%u)", bin ? "binary" : "char", c->meta);
    case BL_BLOB: case BL_TINY_BLOB: case BL_MEDIUM_BLOB: case BL_LONG_BLOB:
        return (size_t)snprintf(buf, size, "%s", bin ? "longblob" : "longtext");
    case BL_JSON: return (size_t)snprintf(buf, size, "json");
    case BL_ENUM: return (size_t)snprintf(buf, size, "enum('')");
    case BL_SET: return (size_t)snprintf(buf, size, "set('')");
    case BL_GEOMETRY: return (size_t)snprintf(buf, size, "geometry");
    default: return (size_t)snprintf(buf, size, "binlog_type_%u", c->type);
    }
}

/* ---- fetching ---- */

static w2l_rc on_table_map(w2l__bl *b, const uint8_t *hdr, size_t evlen, w2l__bl_event *out, w2l_error *err)
{
    size_t crc = b->rpl->use_checksum ? 4 : 0;
    if (evlen < 19 + 8 + crc) return tm_corrupt(err, "length");
    const uint8_t *body = hdr + 19, *end = hdr + evlen - crc;
    uint64_t id = le(body, 6);
    if (b->nused * 2 >= b->nslots) { /* grow, or forget every map: each transaction repeats its maps */
        if (b->nslots < 8192) {
            tslot *old = b->slots;
            size_t on = b->nslots;
            tslot *ns = w2l__calloc(on * 2, sizeof *ns);
            W2L_NOMEM_IF(!ns, err);
            b->slots = ns;
            b->nslots = on * 2;
            for (size_t i = 0; i < on; i++)
                if (old[i].tm) *cache_slot(b, old[i].id) = old[i];
            w2l__free(old);
        } else cache_clear(b);
    }
    tslot *s = cache_slot(b, id);
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
    MARIADB_RPL_EVENT *ev = mariadb_rpl_fetch(b->rpl, b->ev);
    b->ev = ev;
    if (!ev) {
        if (mysql_errno(b->mysql) == 0 && mariadb_rpl_errno(b->rpl) == 0) {
            if (b->non_block) return W2L_DONE;
            /* a blocking dump never ends by itself: the server closed it */
            w2l__fail(err, W2L_UNAVAILABLE, "binlog read from %s: the server ended the dump", w2l__my_name(b->conn));
            err->flags |= W2L_ERR_RETRIABLE;
            return W2L_UNAVAILABLE;
        }
        if (mysql_errno(b->mysql) == 0) {
            w2l__fail(err, W2L_SOURCE, "binlog read from %s: %s (error %u)", w2l__my_name(b->conn),
                      mariadb_rpl_error(b->rpl), mariadb_rpl_errno(b->rpl));
            return W2L_SOURCE;
        }
        fail_mysql(b, err, "read");
        return err->code;
    }
    const uint8_t *hdr = ev->raw_data + ev->raw_data_ofs;
    size_t evlen = ev->raw_data_size - ev->raw_data_ofs;
    if (evlen < 19) return w2l__fail(err, W2L_CORRUPT, "binlog: event shorter than its header");
    if (ev->event_length && ev->event_length < evlen) evlen = ev->event_length;
    b->bytes += evlen;
    b->events++;
    out->type = (uint8_t)ev->event_type;
    out->ts = ev->timestamp;
    out->server_id = ev->server_id;
    out->log_pos = ev->next_event_pos;
    out->flags = ev->flags;
    switch ((int)ev->event_type) {
    case ROTATE_EVENT: {
        size_t n = evlen;
        if (n >= 19 + 8 + 4 && crc32_of(hdr, n - 4) == (uint32_t)le(hdr + n - 4, 4)) n -= 4;
        if (n < 19 + 8) return w2l__fail(err, W2L_CORRUPT, "binlog: malformed ROTATE event");
        out->kind = BL_EV_ROTATE;
        out->pos = le(hdr + 19, 8);
        out->file = (const char *)hdr + 27;
        out->file_len = n - 27;
        break;
    }
    case FORMAT_DESCRIPTION_EVENT: out->kind = BL_EV_FDE; break;
    case GTID_EVENT:
        out->kind = BL_EV_GTID;
        out->gtid.domain = ev->event.gtid.domain_id;
        out->gtid.server = ev->server_id;
        out->gtid.seq = ev->event.gtid.sequence_nr;
        out->gflags = ev->event.gtid.flags;
        out->xid = ev->event.gtid.xid.str;
        out->xid_len = ev->event.gtid.xid.length;
        break;
    case GTID_LIST_EVENT: {
        out->kind = BL_EV_GTID_LIST;
        size_t n = ev->event.gtid_list.gtid_cnt;
        if (n > b->gl_cap) {
            w2l__bl_gtid *g = w2l__realloc(b->gl, n * sizeof *g);
            W2L_NOMEM_IF(!g, err);
            b->gl = g;
            b->gl_cap = n;
        }
        for (size_t i = 0; i < n; i++) {
            b->gl[i].domain = ev->event.gtid_list.gtid[i].domain_id;
            b->gl[i].server = ev->event.gtid_list.gtid[i].server_id;
            b->gl[i].seq = ev->event.gtid_list.gtid[i].sequence_nr;
        }
        out->gtids = b->gl;
        out->ngtids = n;
        break;
    }
    case QUERY_EVENT:
    case QUERY_COMPRESSED_EVENT:
        out->kind = BL_EV_QUERY;
        out->db = ev->event.query.database.str;
        out->db_len = ev->event.query.database.length;
        out->sql = ev->event.query.statement.str;
        out->sql_len = ev->event.query.statement.length;
        break;
    case XID_EVENT: out->kind = BL_EV_XID; break;
    case TABLE_MAP_EVENT:
        out->kind = BL_EV_TABLE_MAP;
        W2L_TRY(on_table_map(b, hdr, evlen, out, err));
        break;
    case WRITE_ROWS_EVENT_V1: case UPDATE_ROWS_EVENT_V1: case DELETE_ROWS_EVENT_V1:
    case WRITE_ROWS_COMPRESSED_EVENT_V1: case UPDATE_ROWS_COMPRESSED_EVENT_V1:
    case DELETE_ROWS_COMPRESSED_EVENT_V1:
    case WRITE_ROWS_EVENT: case UPDATE_ROWS_EVENT: case DELETE_ROWS_EVENT: {
        out->kind = BL_EV_ROWS;
        out->table_id = ev->event.rows.table_id;
        out->rows_kind = ev->event.rows.type == UPDATE_ROWS ? BL_ROWS_UPDATE
                         : ev->event.rows.type == DELETE_ROWS ? BL_ROWS_DELETE : BL_ROWS_WRITE;
        out->rows_flags = ev->event.rows.flags;
        out->rows_ncols = ev->event.rows.column_count;
        out->bitmap1 = ev->event.rows.column_bitmap;
        out->bitmap2 = ev->event.rows.column_update_bitmap ? ev->event.rows.column_update_bitmap
                                                           : ev->event.rows.column_bitmap;
        out->data = ev->event.rows.row_data;
        out->end = out->data + ev->event.rows.row_data_size;
        out->tmap = cache_find(b, out->table_id);
        if (ev->event_type == UPDATE_ROWS_EVENT && !ev->event.rows.column_update_bitmap) {
            /* MySQL's V2 UPDATE leaves the after-image bitmap in front of the rows (T13) */
            size_t nb = (out->rows_ncols + 7) / 8;
            if ((size_t)(out->end - out->data) < nb) return w2l__fail(err, W2L_CORRUPT, "binlog: short UPDATE_ROWS");
            out->bitmap2 = out->data;
            out->data += nb;
        }
        break;
    }
    case HEARTBEAT_LOG_EVENT:
        out->kind = BL_EV_HEARTBEAT;
        out->file = ev->event.heartbeat.filename.str;
        out->file_len = ev->event.heartbeat.filename.length;
        break;
    case XA_PREPARE_LOG_EVENT:
        out->kind = BL_EV_XA_PREPARE;
        out->xid = ev->event.xa_prepare_log.xid.str;
        out->xid_len = ev->event.xa_prepare_log.xid.length;
        break;
    case STOP_EVENT: out->kind = BL_EV_STOP; break;
    default: out->kind = BL_EV_OTHER;
    }
    return W2L_OK;
}

/* ---- row images ---- */

static w2l_rc short_image(const w2l__bl_tmap *tm, size_t i, w2l_error *err)
{
    return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated at column '%s'", tm->db, tm->table,
                     tm->cols[i].name);
}

static const uint8_t dig2bytes[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

static size_t decimal_size(unsigned prec, unsigned scale)
{
    unsigned ig = prec - scale;
    return (ig / 9) * 4 + dig2bytes[ig % 9] + (scale / 9) * 4 + dig2bytes[scale % 9];
}

/* Binary DECIMAL to digits text (no dot) and sign; returns the digit count. */
static size_t decimal_digits(const uint8_t *src, unsigned prec, unsigned scale, char *digits, int *neg)
{
    uint8_t buf[40];
    size_t n = decimal_size(prec, scale);
    memcpy(buf, src, n);
    *neg = !(buf[0] & 0x80);
    buf[0] ^= 0x80;
    if (*neg)
        for (size_t i = 0; i < n; i++) buf[i] ^= 0xFF;
    unsigned ig = prec - scale, ig0 = ig / 9, igx = ig % 9, fr0 = scale / 9, frx = scale % 9;
    const uint8_t *p = buf;
    size_t d = 0;
    if (igx) {
        d += (size_t)sprintf(digits + d, "%0*llu", (int)igx, (unsigned long long)be(p, dig2bytes[igx]));
        p += dig2bytes[igx];
    }
    for (unsigned k = 0; k < ig0; k++, p += 4) d += (size_t)sprintf(digits + d, "%09llu", (unsigned long long)be(p, 4));
    for (unsigned k = 0; k < fr0; k++, p += 4) d += (size_t)sprintf(digits + d, "%09llu", (unsigned long long)be(p, 4));
    if (frx) d += (size_t)sprintf(digits + d, "%0*llu", (int)frx, (unsigned long long)be(p, dig2bytes[frx]));
    return d;
}

/* Fast path for DECIMAL into a 128-bit unscaled value. */
static void decimal_i128(const uint8_t *src, unsigned prec, unsigned scale, w2l_int128 *out)
{
    static const uint32_t p10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    uint8_t buf[40];
    size_t n = decimal_size(prec, scale);
    memcpy(buf, src, n);
    int neg = !(buf[0] & 0x80);
    buf[0] ^= 0x80;
    if (neg)
        for (size_t i = 0; i < n; i++) buf[i] ^= 0xFF;
    unsigned ig = prec - scale, ig0 = ig / 9, igx = ig % 9, fr0 = scale / 9, frx = scale % 9;
    const uint8_t *p = buf;
    u128 v = 0;
    if (igx) {
        v = be(p, dig2bytes[igx]);
        p += dig2bytes[igx];
    }
    for (unsigned k = 0; k < ig0 + fr0; k++, p += 4) v = v * 1000000000u + (uint32_t)be(p, 4);
    if (frx) v = v * p10[frx] + (uint32_t)be(p, dig2bytes[frx]);
    if (neg) v = (u128)0 - v;
    out->lo = (uint64_t)v;
    out->hi = (int64_t)(uint64_t)(v >> 64);
}

/* cp1252 (MySQL's latin1) to UTF-8. */
static const uint16_t cp1252_hi[32] = {0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021,
                                       0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
                                       0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                       0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178};

static int is_latin1(uint32_t cs)
{
    return cs == 5 || cs == 8 || cs == 15 || cs == 31 || cs == 47 || cs == 48 || cs == 49 || cs == 94;
}

static w2l_rc text_value(const w2l__bl_col *c, const uint8_t *s, size_t n, w2l_value *v, w2l__bl_scratch *sc,
                         w2l_error *err)
{
    if (c->ice.id == W2L_TYPE_STRING && is_latin1(c->charset)) {
        size_t hi = 0;
        for (size_t i = 0; i < n; i++) hi += s[i] >= 0x80;
        if (hi) {
            char *o = scratch_alloc(sc, n + hi * 2);
            W2L_NOMEM_IF(!o, err);
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t u = s[i] < 0x80 ? s[i] : s[i] < 0xA0 ? cp1252_hi[s[i] - 0x80] : s[i];
                if (u < 0x80) o[k++] = (char)u;
                else if (u < 0x800) {
                    o[k++] = (char)(0xC0 | u >> 6);
                    o[k++] = (char)(0x80 | (u & 0x3F));
                } else {
                    o[k++] = (char)(0xE0 | u >> 12);
                    o[k++] = (char)(0x80 | ((u >> 6) & 0x3F));
                    o[k++] = (char)(0x80 | (u & 0x3F));
                }
            }
            v->v.bytes.ptr = o;
            v->v.bytes.len = k;
            return W2L_OK;
        }
    }
    v->v.bytes.ptr = (const char *)s;
    v->v.bytes.len = n;
    return W2L_OK;
}

/* *odd is set when a boolean column held a value other than 0 and 1 (it becomes true). */
static w2l_rc int_value(const w2l__bl_col *c, uint64_t u, int64_t sv, w2l_value *v, int *odd, w2l_error *err)
{
    switch (c->ice.id) {
    case W2L_TYPE_BOOLEAN: {
        uint64_t x = c->is_unsigned ? u : (uint64_t)sv;
        v->v.i32 = x != 0;
        if (x > 1) *odd = 1;
        break;
    }
    case W2L_TYPE_INT: v->v.i32 = c->is_unsigned ? (int32_t)u : (int32_t)sv; break;
    case W2L_TYPE_LONG: v->v.i64 = c->is_unsigned ? (int64_t)u : sv; break;
    case W2L_TYPE_DECIMAL:
        if (c->is_unsigned) v->v.dec.lo = u, v->v.dec.hi = 0;
        else v->v.dec.lo = (uint64_t)sv, v->v.dec.hi = sv < 0 ? -1 : 0;
        break;
    case W2L_TYPE_DOUBLE: v->v.f64 = c->is_unsigned ? (double)u : (double)sv; break;
    default:
        return w2l__fail(err, W2L_SCHEMA, "column '%s': integer value for a %s column", c->name,
                         w2l__type_name(c->ice.id));
    }
    return W2L_OK;
}

static int64_t frac_micros(const uint8_t *p, unsigned fsp, int is_signed)
{
    switch ((fsp + 1) / 2) {
    case 1: return (int64_t)(is_signed ? (int8_t)p[0] : p[0]) * 10000;
    case 2: return (int64_t)(is_signed ? (int16_t)be(p, 2) : (int64_t)be(p, 2)) * 100;
    case 3: {
        int64_t x = (int64_t)be(p, 3);
        if (is_signed && x >= 0x800000) x -= 0x1000000;
        return x;
    }
    default: return 0;
    }
}

static w2l_rc time_value(const w2l__bl_col *c, int neg, int64_t h, int64_t mi, int64_t s, int64_t us, unsigned fsp,
                         w2l_value *v, w2l__bl_scratch *sc, w2l_error *err)
{
    if (c->ice.id == W2L_TYPE_STRING) {
        char *o = scratch_alloc(sc, 32);
        W2L_NOMEM_IF(!o, err);
        int k = snprintf(o, 32, "%s%02lld:%02lld:%02lld", neg ? "-" : "", (long long)h, (long long)mi, (long long)s);
        if (fsp) {
            char f[16];
            snprintf(f, sizeof f, "%06lld", (long long)us);
            k += snprintf(o + k, 32 - (size_t)k, ".%.*s", (int)fsp, f);
        }
        v->v.bytes.ptr = o;
        v->v.bytes.len = (size_t)k;
        return W2L_OK;
    }
    if (neg || h >= 24)
        return w2l__fail(err, W2L_SCHEMA, "column '%s': TIME value %s%02lld:%02lld:%02lld is outside 00:00-24:00 "
                         "(set source.time-as-string)", c->name, neg ? "-" : "", (long long)h, (long long)mi, (long long)s);
    v->v.i64 = ((h * 60 + mi) * 60 + s) * 1000000 + us;
    return W2L_OK;
}

static w2l_rc datetime_value(const w2l__bl_col *c, int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s,
                             int64_t us, w2l_value *v, w2l_error *err)
{
    if (mo == 0 || d == 0) { /* zero dates (0000-00-00) and dates with zero parts */
        v->is_null = 1;
        return W2L_OK;
    }
    int64_t days = w2l__days_from_civil(y, (unsigned)mo, (unsigned)d);
    if (c->ice.id == W2L_TYPE_DATE) v->v.i32 = (int32_t)days;
    else if (c->ice.id == W2L_TYPE_TIMESTAMP || c->ice.id == W2L_TYPE_TIMESTAMPTZ)
        v->v.i64 = days * W2L_MICROS_PER_DAY + ((h * 60 + mi) * 60 + s) * 1000000 + us;
    else return w2l__fail(err, W2L_SCHEMA, "column '%s': date value for a %s column", c->name, w2l__type_name(c->ice.id));
    return W2L_OK;
}

w2l_rc w2l__bl_decode_row(const w2l__bl_tmap *tm, const uint8_t *bitmap, const uint8_t **pp, const uint8_t *end,
                          w2l_value *vals, uint8_t *present, uint8_t *coerced, w2l__bl_scratch *sc, w2l_error *err)
{
    const uint8_t *p = *pp;
    size_t n = tm->ncols, npresent = 0;
    for (size_t i = 0; i < n; i++) npresent += (bitmap[i / 8] >> (i % 8)) & 1;
    size_t nb = (npresent + 7) / 8;
    if ((size_t)(end - p) < nb) return w2l__fail(err, W2L_CORRUPT, "binlog: row image of %s.%s truncated", tm->db, tm->table);
    const uint8_t *nulls = p;
    p += nb;
    memset(present, 0, (n + 7) / 8);
    size_t k = 0; /* index among present columns */
    for (size_t i = 0; i < n; i++) {
        w2l_value *v = &vals[i];
        memset(v, 0, sizeof *v);
        if (!((bitmap[i / 8] >> (i % 8)) & 1)) {
            v->is_null = 1;
            continue;
        }
        present[i / 8] |= (uint8_t)(1u << (i % 8));
        int isnull = (nulls[k / 8] >> (k % 8)) & 1;
        k++;
        if (isnull) {
            v->is_null = 1;
            continue;
        }
        const w2l__bl_col *c = &tm->cols[i];
        size_t left = (size_t)(end - p);
        int odd = 0;
#define NEED(x)                                                                                   \
    do {                                                                                          \
        if (left < (size_t)(x)) return short_image(tm, i, err);                                   \
    } while (0)
        switch (c->type) {
        case BL_TINY: NEED(1); W2L_TRY(int_value(c, p[0], (int8_t)p[0], v, &odd, err)); p += 1; break;
        case BL_SHORT: NEED(2); W2L_TRY(int_value(c, le(p, 2), (int16_t)le(p, 2), v, &odd, err)); p += 2; break;
        case BL_INT24: {
            NEED(3);
            uint64_t u = le(p, 3);
            int64_t s = u & 0x800000 ? (int64_t)u - 0x1000000 : (int64_t)u;
            W2L_TRY(int_value(c, u, s, v, &odd, err));
            p += 3;
            break;
        }
        case BL_LONG: NEED(4); W2L_TRY(int_value(c, le(p, 4), (int32_t)le(p, 4), v, &odd, err)); p += 4; break;
        case BL_LONGLONG: NEED(8); W2L_TRY(int_value(c, le(p, 8), (int64_t)le(p, 8), v, &odd, err)); p += 8; break;
        case BL_YEAR: NEED(1); v->v.i32 = p[0] ? 1900 + p[0] : 0; p += 1; break;
        case BL_FLOAT: {
            NEED(4);
            uint32_t u = (uint32_t)le(p, 4);
            float f;
            memcpy(&f, &u, 4);
            if (c->ice.id == W2L_TYPE_DOUBLE) v->v.f64 = f;
            else v->v.f32 = f;
            p += 4;
            break;
        }
        case BL_DOUBLE: {
            NEED(8);
            uint64_t u = le(p, 8);
            memcpy(&v->v.f64, &u, 8);
            p += 8;
            break;
        }
        case BL_NEWDECIMAL: {
            unsigned prec = c->meta >> 8, scale = c->meta & 0xFF;
            if (prec < 1 || prec > 65 || scale > 30 || scale > prec)
                return w2l__fail(err, W2L_CORRUPT, "binlog: column '%s': DECIMAL(%u,%u)", c->name, prec, scale);
            size_t sz = decimal_size(prec, scale);
            NEED(sz);
            if (c->ice.id == W2L_TYPE_DECIMAL && prec <= 38) {
                decimal_i128(p, prec, scale, &v->v.dec);
                if (c->ice.scale != scale) {
                    w2l_int128 r;
                    if (w2l__decimal_rescale(v->v.dec, scale, c->ice.scale, &r))
                        return w2l__fail(err, W2L_SCHEMA, "column '%s': decimal does not fit", c->name);
                    v->v.dec = r;
                }
            } else if (c->ice.id == W2L_TYPE_STRING) {
                char digits[96];
                int neg;
                size_t nd = decimal_digits(p, prec, scale, digits, &neg);
                char *o = scratch_alloc(sc, nd + 4);
                W2L_NOMEM_IF(!o, err);
                size_t ip = nd - scale, st = 0, ko = 0;
                while (st + 1 < ip && digits[st] == '0') st++;
                if (neg) o[ko++] = '-';
                memcpy(o + ko, digits + st, ip - st);
                ko += ip - st;
                if (ip == st) o[ko++] = '0';
                if (scale) {
                    o[ko++] = '.';
                    memcpy(o + ko, digits + ip, scale);
                    ko += scale;
                }
                v->v.bytes.ptr = o;
                v->v.bytes.len = ko;
            } else return w2l__fail(err, W2L_SCHEMA, "column '%s': decimal for a %s column", c->name, w2l__type_name(c->ice.id));
            p += sz;
            break;
        }
        case BL_BIT: {
            size_t nbytes = (c->meta + 7) / 8;
            NEED(nbytes);
            uint64_t u = be(p, (int)nbytes); /* BIT(64): all 64 bits, >= 2^63 negative */
            if (c->ice.id == W2L_TYPE_BOOLEAN) v->v.i32 = u != 0;
            else v->v.i64 = (int64_t)u;
            p += nbytes;
            break;
        }
        case BL_DATE: case BL_NEWDATE: {
            NEED(3);
            uint32_t u = (uint32_t)le(p, 3);
            W2L_TRY(datetime_value(c, u >> 9, (u >> 5) & 15, u & 31, 0, 0, 0, 0, v, err));
            p += 3;
            break;
        }
        case BL_DATETIME2: {
            size_t fb = (c->meta + 1) / 2;
            NEED(5 + fb);
            int64_t ip = (int64_t)be(p, 5) - INT64_C(0x8000000000);
            int64_t us = frac_micros(p + 5, c->meta, 1);
            if (us < 0) { /* never for valid datetimes; keep the arithmetic right anyway */
                ip -= 1;
                us += 1000000;
            }
            int64_t ymd = ip >> 17, ym = ymd >> 5, hms = ip % (1 << 17);
            W2L_TRY(datetime_value(c, ym / 13, ym % 13, ymd % 32, hms >> 12, (hms >> 6) % 64, hms % 64, us, v, err));
            p += 5 + fb;
            break;
        }
        case BL_DATETIME: { /* old format: YYYYMMDDhhmmss as an integer */
            NEED(8);
            uint64_t x = le(p, 8);
            uint64_t d = x / 1000000, t = x % 1000000;
            W2L_TRY(datetime_value(c, (int64_t)(d / 10000), (int64_t)(d / 100 % 100), (int64_t)(d % 100),
                                   (int64_t)(t / 10000), (int64_t)(t / 100 % 100), (int64_t)(t % 100), 0, v, err));
            p += 8;
            break;
        }
        case BL_TIMESTAMP2: case BL_TIMESTAMP: {
            size_t fb = c->type == BL_TIMESTAMP2 ? (c->meta + 1) / 2 : 0;
            NEED(4 + fb);
            int64_t s = c->type == BL_TIMESTAMP2 ? (int64_t)be(p, 4) : (int64_t)le(p, 4);
            int64_t us = fb ? frac_micros(p + 4, c->meta, 0) : 0;
            if (s == 0 && us == 0) v->is_null = 1; /* the zero timestamp */
            else if (c->ice.id == W2L_TYPE_TIMESTAMPTZ || c->ice.id == W2L_TYPE_TIMESTAMP) v->v.i64 = s * 1000000 + us;
            else return w2l__fail(err, W2L_SCHEMA, "column '%s': timestamp for a %s column", c->name, w2l__type_name(c->ice.id));
            p += 4 + fb;
            break;
        }
        case BL_TIME2: {
            size_t fb = (c->meta + 1) / 2;
            NEED(3 + fb);
            int64_t packed;
            int64_t ip = (int64_t)be(p, 3) - 0x800000;
            switch (fb) {
            case 1: {
                int64_t f = p[3];
                if (ip < 0 && f) ip++, f -= 0x100;
                packed = ip * (1 << 24) + f * 10000;
                break;
            }
            case 2: {
                int64_t f = (int64_t)be(p + 3, 2);
                if (ip < 0 && f) ip++, f -= 0x10000;
                packed = ip * (1 << 24) + f * 100;
                break;
            }
            case 3: packed = (int64_t)be(p, 6) - INT64_C(0x800000000000); break;
            default: packed = ip * (1 << 24);
            }
            int neg = packed < 0;
            if (neg) packed = -packed;
            int64_t hms = packed >> 24, us = packed % (1 << 24);
            W2L_TRY(time_value(c, neg, (hms >> 12) % (1 << 10), (hms >> 6) % 64, hms % 64, us, c->meta, v, sc, err));
            p += 3 + fb;
            break;
        }
        case BL_TIME: { /* old format: [-]HHMMSS as a 3-byte integer */
            NEED(3);
            int64_t x = (int64_t)le(p, 3);
            if (x & 0x800000) x -= 0x1000000;
            int neg = x < 0;
            if (neg) x = -x;
            W2L_TRY(time_value(c, neg, x / 10000, x / 100 % 100, x % 100, 0, 0, v, sc, err));
            p += 3;
            break;
        }
        case BL_VARCHAR: case BL_VAR_STRING: case BL_STRING: {
            size_t lb = c->meta > 255 ? 2 : 1;
            NEED(lb);
            size_t l = (size_t)le(p, (int)lb);
            NEED(lb + l);
            if (c->type == BL_STRING && c->ice.id == W2L_TYPE_BINARY && c->charset == 63 && l < c->meta) {
                char *o = scratch_alloc(sc, c->meta); /* BINARY(n): restore the stripped 0x00 padding */
                W2L_NOMEM_IF(!o, err);
                memcpy(o, p + lb, l);
                memset(o + l, 0, c->meta - l);
                v->v.bytes.ptr = o;
                v->v.bytes.len = c->meta;
            } else W2L_TRY(text_value(c, p + lb, l, v, sc, err));
            p += lb + l;
            break;
        }
        case BL_BLOB: case BL_TINY_BLOB: case BL_MEDIUM_BLOB: case BL_LONG_BLOB: case BL_JSON: case BL_GEOMETRY: {
            size_t lb = c->meta >= 1 && c->meta <= 4 ? c->meta : 4;
            NEED(lb);
            size_t l = (size_t)le(p, (int)lb);
            NEED(lb + l);
            if (c->type == BL_GEOMETRY) { /* 4-byte LE SRID, then the WKB: the WKB is the value */
                if (l < 4 + 5)
                    return w2l__fail(err, W2L_CORRUPT, "binlog: column '%s' of %s.%s: geometry value of %zu bytes "
                                     "(want a 4-byte SRID and WKB)", c->name, tm->db, tm->table, l);
                v->v.bytes.ptr = (const char *)p + lb + 4;
                v->v.bytes.len = l - 4;
            } else W2L_TRY(text_value(c, p + lb, l, v, sc, err));
            p += lb + l;
            break;
        }
        case BL_ENUM: {
            size_t lb = c->meta == 2 ? 2 : 1;
            NEED(lb);
            uint64_t idx = le(p, (int)lb);
            if (idx == 0) v->v.bytes.ptr = "", v->v.bytes.len = 0;
            else if (idx <= c->nvalues) {
                v->v.bytes.ptr = c->values[idx - 1];
                v->v.bytes.len = strlen(c->values[idx - 1]);
            } else
                return w2l__fail(err, W2L_CORRUPT, "binlog: column '%s': ENUM index %llu of %zu values (no FULL row metadata?)",
                                 c->name, (unsigned long long)idx, c->nvalues);
            p += lb;
            break;
        }
        case BL_SET: {
            size_t lb = c->meta >= 1 && c->meta <= 8 ? c->meta : 8;
            NEED(lb);
            uint64_t mask = le(p, (int)lb);
            size_t total = 0;
            for (size_t b = 0; b < c->nvalues && b < 64; b++)
                if (mask >> b & 1) total += strlen(c->values[b]) + 1;
            char *o = scratch_alloc(sc, total + 1);
            W2L_NOMEM_IF(!o, err);
            size_t ko = 0;
            for (size_t b = 0; b < c->nvalues && b < 64; b++)
                if (mask >> b & 1) {
                    if (ko) o[ko++] = ',';
                    size_t l = strlen(c->values[b]);
                    memcpy(o + ko, c->values[b], l);
                    ko += l;
                }
            v->v.bytes.ptr = o;
            v->v.bytes.len = ko;
            p += lb;
            break;
        }
        case BL_NULL: v->is_null = 1; break;
        default:
            return w2l__fail(err, W2L_SCHEMA, "binlog: column '%s' of %s.%s: binlog type %u is not supported", c->name,
                             tm->db, tm->table, c->type);
        }
#undef NEED
        if (odd && coerced) coerced[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    *pp = p;
    return W2L_OK;
}
