/*
 * What the binlog decoder's files share: binlog.c (the stream object, TABLE_MAP, the
 * MariaDB dump's set-up), binlog_mysql.c (the dump's packets of either flavour, read and
 * decoded here, and MySQL's events), binlog_mariadb.c (MariaDB's own events: GTID,
 * GTID_LIST, the compressed ones) and binlog_rows.c (row images and the scratch memory
 * their values live in). binlog.c and binlog_mysql.c include libmariadb's headers; this one
 * only names its structs.
 */
#ifndef W2L_BINLOG_INT_H
#define W2L_BINLOG_INT_H

#include <stdint.h>

#include "mysql_int.h"

static inline uint64_t w2l__bl_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint64_t w2l__bl_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* Length-encoded integer; 0 on success, -1 when it runs past end. */
static inline int w2l__bl_lenenc(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end) return -1;
    int n = *p < 0xFB ? 0 : *p == 0xFC ? 2 : *p == 0xFD ? 3 : *p == 0xFE ? 8 : -1;
    if (n < 0 || end - p < 1 + n) return -1;
    *out = n == 0 ? *p : w2l__bl_le(p + 1, n);
    *pp = p + 1 + n;
    return 0;
}

/* ---- the stream (binlog.c; the MySQL part binlog_mysql.c) ---- */

struct st_mysql;         /* MYSQL */
struct w2l__zstd_stream; /* ../common/zstd.h */

typedef struct w2l__bl_tslot {
    uint64_t id;
    w2l__bl_tmap *tm;
} w2l__bl_tslot;

struct w2l__bl {
    w2l__my *conn;
    struct st_mysql *mysql;
    int mariadb; /* source flavour: YEAR has a signedness bit */
    int non_block;
    w2l__bl_tslot *slots; /* TABLE_MAP cache: open addressing by table id */
    size_t nslots, nused;
    w2l__bl_gtid *gl; /* GTID_LIST copy */
    size_t gl_cap;
    uint64_t bytes, events;
    /* the packet stream, read and decoded by binlog_mysql.c (both flavours) */
    int is_mysql;
    int crc;           /* the current file's events end in a CRC32 (its FDE says so) */
    uint8_t post[256]; /* the FDE's post-header lengths, by event type - 1 (MariaDB's
                          reach type 171) */
    size_t npost;
    char file[256]; /* the current binlog file (the last ROTATE), for messages */
    uint64_t at;    /* where the event being decoded starts, for messages */
    /* a TRANSACTION_PAYLOAD whose inner events are being handed out */
    int pl_active, pl_zstd, pl_done;
    struct w2l__zstd_stream *zd;
    const uint8_t *pl_in; /* the compressed bytes (in libmariadb's packet buffer) */
    size_t pl_in_len, pl_in_pos;
    uint64_t pl_log_pos, pl_at;
    uint8_t *ib; /* decompressed inner events: [ib_off, ib_len) not handed out */
    size_t ib_len, ib_off, ib_cap;
    /* MariaDB: a compressed event's statement or rows, inflated (binlog_mariadb.c) */
    uint8_t *zb;
    size_t zb_cap;
};

/* The post-header length the FDE gives for type t, or def before any FDE. */
static inline size_t w2l__bl_post(const w2l__bl *b, int t, size_t def)
{
    return t >= 1 && (size_t)t <= b->npost ? b->post[t - 1] : def;
}

/* binlog.c, for binlog_mysql.c */
/* CRC32 (IEEE, reflected) of p[0, n), as binlog events carry it. */
uint32_t w2l__bl_crc32(const uint8_t *p, size_t n);
/* The connection's error as W2L_SOURCE, or W2L_UNAVAILABLE (retriable) when it was lost:
 * "binlog <what> from <server>: <text> (error N)" with a hint for the usual causes. */
void w2l__bl_fail_mysql(w2l__bl *b, w2l_error *err, const char *what);
/* Decodes the TABLE_MAP at hdr (evlen bytes, the last crc of them its CRC32) into the cache
 * (reused when the same map comes again) and sets out->tmap. */
w2l_rc w2l__bl_table_map(w2l__bl *b, const uint8_t *hdr, size_t evlen, size_t crc,
                         w2l__bl_event *out, w2l_error *err);
/* The cached TABLE_MAP of table id, NULL when none came. */
w2l__bl_tmap *w2l__bl_cache_find(w2l__bl *b, uint64_t id);

/* binlog_mysql.c, for binlog.c: the dump */
/* Sets a MySQL server's session up and sends COM_BINLOG_DUMP or COM_BINLOG_DUMP_GTID. */
w2l_rc w2l__bl_my_open(w2l__bl *b, const w2l__bl_opts *o, w2l_error *err);
/* Sends the dump command cmd (COM_BINLOG_DUMP 0x12, COM_BINLOG_DUMP_GTID 0x1e) with its
 * n bytes of arguments on the stream's connection. */
w2l_rc w2l__bl_send_dump(w2l__bl *b, int cmd, const uint8_t *args, size_t n, w2l_error *err);
/* The next event of either flavour's dump, read from its packet, as w2l__bl_fetch. */
w2l_rc w2l__bl_read(w2l__bl *b, w2l__bl_event *out, w2l_error *err);
/* Frees what the dump reader holds besides b itself. */
void w2l__bl_read_close(w2l__bl *b);
/* W2L_CORRUPT naming the event's type (name and number), the binlog file and where the
 * event starts, then what. */
w2l_rc w2l__bl_corrupt(w2l__bl *b, int type, const char *what, w2l_error *err);

/* QUERY (and QUERY_COMPRESSED) body [body, end) of an event of type t: db and sql (the
 * statement as it stands in the event). */
w2l_rc w2l__bl_query(w2l__bl *b, int t, const uint8_t *body, const uint8_t *end,
                     w2l__bl_event *out, w2l_error *err);
/* A rows event's body laid out as type t (v1 23-25, v2 30-32, 39) into out (bitmaps, data
 * up to end); et is the event's own type, for its post-header length and messages. */
w2l_rc w2l__bl_rows(w2l__bl *b, int et, int t, const uint8_t *body, const uint8_t *end,
                    w2l__bl_event *out, w2l_error *err);

/* binlog_mariadb.c, for binlog_mysql.c: MariaDB's own events (types 160-171) */
/* Decodes the event of type t whose body is [body, end) (its CRC32 left out) into out;
 * W2L_NOTFOUND (err untouched) when t is not one of them. */
w2l_rc w2l__bl_mdb_event(w2l__bl *b, int t, const uint8_t *body, const uint8_t *end,
                         w2l__bl_event *out, w2l_error *err);

/* n bytes from scratch memory (binlog_rows.c), valid until w2l__bl_scratch_reset; NULL when
 * out of memory. */
char *w2l__bl_scratch_alloc(w2l__bl_scratch *s, size_t n);

#endif
