/*
 * The binlog dump of the "mysql" source, both flavours: its packets read here and their
 * events decoded, MySQL's here and MariaDB's own (types 160-171) by binlog_mariadb.c
 * (binlog.c holds the stream object, the TABLE_MAP decoder both flavours use and the
 * MariaDB dump's session set-up; binlog_int.h is what they share).
 *
 * libmariadb is the connection and the packet layer, not the event parser: its
 * replication API cannot send COM_BINLOG_DUMP_GTID, its parser fails on MySQL's
 * PARTIAL_UPDATE_ROWS (39), TRANSACTION_PAYLOAD (40) and HEARTBEAT_V2 (41), misreads
 * ROTATE after the first FORMAT_DESCRIPTION, and crashes formatting its error for an event
 * type it does not know (a newer server's). So after the session set-up the dump command
 * goes out through the connection's db_command method (as libmariadb's own replication
 * code sends COM_BINLOG_DUMP) and each packet is read with mysql_net_read_packet(), which
 * reassembles packets of 16 MB and more and turns an error packet into mysql_errno(). A
 * packet is 0x00 + one event; 0xFE (shorter than 9 bytes) ends a non-blocking dump.
 * Semi-synchronous replication is never asked for, so no packet carries its 0xEF header.
 *
 *   COM_BINLOG_DUMP (0x12)       pos (4 LE), flags (2: 1 = non-block), server id (4),
 *                                file name (rest)
 *   COM_BINLOG_DUMP_GTID (0x1e)  flags (2: 1 = non-block, 4 = through GTID), server id (4),
 *                                name length (4) + name, pos (8), data size (4) + the
 *                                encoded GTID set (w2l__mygtids_encode)
 *
 * Flag bit 1 << 1 is never sent: MariaDB reads it as "send ANNOTATE_ROWS", MySQL 8.0.26+
 * as "the replica takes HEARTBEAT_V2"; both kinds of heartbeat are decoded anyway.
 *
 * Events (header: timestamp 4, type 1, server id 4, length 4, next position 4, flags 2;
 * a CRC32 after the body when the file's FORMAT_DESCRIPTION says so, verified here):
 *   FORMAT_DESCRIPTION (15)  version 2, server version 50, created 4, header length 1,
 *                            post-header lengths (one per type), checksum alg 1, CRC 4
 *   PREVIOUS_GTIDS (35)      the encoded GTID set (w2l__mygtids_decode)
 *   GTID (33), ANONYMOUS (34) flags 1, source UUID 16, gno 8 LE, logical clock, ...
 *   GTID_TAGGED (42, 8.3+)   version byte 2, then a mysql::serialization message: varlen
 *                            size, varlen last non-ignorable field, then (varlen field
 *                            id, value) in id order: 0 flags, 1 UUID (16 varlen bytes),
 *                            2 gno (zigzag varlen), 3 tag (varlen length + bytes), ...
 *                            A varlen is little-endian; the first byte's trailing one
 *                            bits + 1 give its byte count, the value is the rest.
 *   QUERY (2)                post-header 13 (thread 4, time 4, db length 1, error 2,
 *                            status length 2), status vars (skipped), db, NUL, statement
 *   ROWS v1 (23-25), v2 (30-32), PARTIAL_UPDATE_ROWS (39)
 *                            table id 6, flags 2, [v2: extra length 2 counting itself +
 *                            extra data, skipped], lenenc columns, bitmap, [UPDATE:
 *                            after bitmap], rows
 *   TRANSACTION_PAYLOAD (40) fields (lenenc type, lenenc length, lenenc value): 1 size,
 *                            2 compression (0 zstd, 255 none), 3 uncompressed size; type
 *                            0 ends them; then the payload: whole events without CRCs,
 *                            compressed as zstd frames that need not state their size,
 *                            so they are inflated as a stream and handed out one by one
 *   HEARTBEAT (27)           the file name; HEARTBEAT_V2 (41): fields as the payload's,
 *                            1 file name, 2 position (lenenc)
 *   XA_PREPARE (38)          one phase 1, format id 4, gtrid length 4, bqual length 4, data
 *                            (MariaDB 10.5+ writes the same event after XA END)
 *   XID (16), ROTATE (4), STOP (3); ROWS_QUERY (29), TRANSACTION_CONTEXT (36), VIEW_CHANGE
 *   (37) and other known events are passed as BL_EV_OTHER.
 *
 * An event type the flavour does not know (MySQL: above 42; MariaDB: 0, 43-159, above 171)
 * is passed as BL_EV_OTHER when its header flags carry LOG_EVENT_IGNORABLE_F (0x80), which
 * a server sets on events a replica may skip; otherwise it ends the stream with W2L_CORRUPT
 * naming the type, the binlog file and the position.
 *
 * A payload's zstd frames are inflated by the streaming decompressor of lib/common/zstd.c
 * into a buffer that grows to the largest inner event; the events are handed out from it,
 * borrowed until the next fetch, as are the others (from libmariadb's packet buffer).
 */
#include <stdio.h>

#include <mysql.h>

#include "binlog_int.h"
#include "mysql_gtid.h"
#include "mysql_int.h"
#include "../common/zstd.h"

enum {
    MY_QUERY = 2, MY_STOP = 3, MY_ROTATE = 4, MY_FDE = 15, MY_XID = 16, MY_TABLE_MAP = 19,
    MY_WRITE_V1 = 23, MY_UPDATE_V1 = 24, MY_DELETE_V1 = 25, MY_HEARTBEAT = 27,
    MY_WRITE = 30, MY_UPDATE = 31, MY_DELETE = 32, MY_GTID = 33, MY_ANON_GTID = 34,
    MY_PREVIOUS_GTIDS = 35, MY_XA_PREPARE = 38, MY_PARTIAL_UPDATE = 39, MY_PAYLOAD = 40,
    MY_HEARTBEAT_V2 = 41, MY_GTID_TAGGED = 42, MY_LAST_KNOWN = 42
};
enum { MY_COM_BINLOG_DUMP = 0x12, MY_COM_BINLOG_DUMP_GTID = 0x1e };
enum { MDB_FIRST = 160, MDB_LAST_KNOWN = 171 }; /* MariaDB's own events: binlog_mariadb.c */
enum { MY_IGNORABLE_F = 0x80 };

static const char *my_type_name(int t)
{
    switch (t) {
    case MY_QUERY: return "QUERY";
    case MY_ROTATE: return "ROTATE";
    case MY_FDE: return "FORMAT_DESCRIPTION";
    case MY_XID: return "XID";
    case MY_TABLE_MAP: return "TABLE_MAP";
    case MY_WRITE_V1: case MY_WRITE: return "WRITE_ROWS";
    case MY_UPDATE_V1: case MY_UPDATE: return "UPDATE_ROWS";
    case MY_DELETE_V1: case MY_DELETE: return "DELETE_ROWS";
    case MY_HEARTBEAT: return "HEARTBEAT";
    case MY_GTID: return "GTID";
    case MY_ANON_GTID: return "ANONYMOUS_GTID";
    case MY_PREVIOUS_GTIDS: return "PREVIOUS_GTIDS";
    case MY_XA_PREPARE: return "XA_PREPARE";
    case MY_PARTIAL_UPDATE: return "PARTIAL_UPDATE_ROWS";
    case MY_PAYLOAD: return "TRANSACTION_PAYLOAD";
    case MY_HEARTBEAT_V2: return "HEARTBEAT_V2";
    case MY_GTID_TAGGED: return "GTID_TAGGED";
    case 160: return "ANNOTATE_ROWS";
    case 161: return "BINLOG_CHECKPOINT";
    case 162: return "GTID";
    case 163: return "GTID_LIST";
    case 164: return "START_ENCRYPTION";
    case 165: return "QUERY_COMPRESSED";
    case 166: case 169: return "WRITE_ROWS_COMPRESSED";
    case 167: case 170: return "UPDATE_ROWS_COMPRESSED";
    case 168: case 171: return "DELETE_ROWS_COMPRESSED";
    default: return "event";
    }
}

/* W2L_CORRUPT naming the event, its type and where it starts (inner events of a payload:
 * where the payload starts; type negative for an inner event not yet decoded). */
w2l_rc w2l__bl_corrupt(w2l__bl *b, int type, const char *what, w2l_error *err)
{
    const char *f = b->file[0] ? b->file : "?";
    if (type == MY_PAYLOAD)
        return w2l__fail(err, W2L_CORRUPT, "binlog: TRANSACTION_PAYLOAD (type 40) at %s:%llu: %s",
                         f, (unsigned long long)(b->pl_active ? b->pl_at : b->at), what);
    if (b->pl_active || type < 0) {
        int t = type < 0 ? -type : type;
        return w2l__fail(err, W2L_CORRUPT,
                         "binlog: %s (type %d) in the TRANSACTION_PAYLOAD at %s:%llu: %s",
                         my_type_name(t), t, f, (unsigned long long)b->pl_at, what);
    }
    return w2l__fail(err, W2L_CORRUPT, "binlog: %s (type %d) at %s:%llu: %s", my_type_name(type),
                     type, f, (unsigned long long)b->at, what);
}

w2l_rc w2l__bl_my_open(w2l__bl *b, const w2l__bl_opts *o, w2l_error *err)
{
    char sql[160];
    long long ns = (long long)(o->heartbeat_ms > 0 ? o->heartbeat_ms : 1000) * 1000000LL;
    /* 8.0.26+ reads the source_ spellings, older servers the master_ ones */
    w2l_rc rc = w2l__my_exec(b->conn, "SET @source_binlog_checksum = @@global.binlog_checksum",
                             err);
    if (rc == W2L_OK)
        rc = w2l__my_exec(b->conn, "SET @master_binlog_checksum = @@global.binlog_checksum", err);
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "SET @source_heartbeat_period = %lld", ns);
        rc = w2l__my_exec(b->conn, sql, err);
    }
    if (rc == W2L_OK) {
        snprintf(sql, sizeof sql, "SET @master_heartbeat_period = %lld", ns);
        rc = w2l__my_exec(b->conn, sql, err);
    }
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "binlog dump setup: ");
        return rc;
    }
    w2l_buf cmd = {0};
    uint8_t h[64];
    unsigned flags = o->non_block ? 1u : 0u;
    int by_gtid = o->mysql_gtids && *o->mysql_gtids;
    if (by_gtid) {
        w2l__mygtids *set = w2l__mygtids_new();
        w2l_buf enc = {0};
        if (!set) return w2l__fail(err, W2L_NOMEM, "out of memory");
        rc = w2l__mygtids_parse(set, o->mysql_gtids, err);
        if (rc == W2L_OK) rc = w2l__mygtids_encode(set, &enc, err);
        w2l__mygtids_free(set);
        w2l__put_le(h, flags | 4u, 2); /* BINLOG_THROUGH_GTID */
        w2l__put_le(h + 2, o->server_id, 4);
        w2l__put_le(h + 6, 0, 4);      /* no file name: the server finds the first file needed */
        w2l__put_le(h + 10, 4, 8);
        w2l__put_le(h + 18, enc.len, 4);
        if (rc == W2L_OK) rc = w2l_buf_append(&cmd, h, 22, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&cmd, enc.data, enc.len, err);
        w2l_buf_release(&enc);
        snprintf(b->file, sizeof b->file, "%s", "(GTID dump)");
    } else {
        const char *f = o->file ? o->file : "";
        w2l__put_le(h, o->file ? o->pos : 4, 4);
        w2l__put_le(h + 4, flags, 2);
        w2l__put_le(h + 6, o->server_id, 4);
        rc = w2l_buf_append(&cmd, h, 10, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&cmd, f, strlen(f), err);
        snprintf(b->file, sizeof b->file, "%s", f);
        if (o->file && o->pos > UINT32_MAX)
            rc = w2l__fail(err, W2L_CONFIG,
                           "binlog position %llu does not fit COM_BINLOG_DUMP (start from a "
                           "GTID set)", (unsigned long long)o->pos);
    }
    if (rc != W2L_OK) {
        w2l_buf_release(&cmd);
        w2l__error_prefix(err, "binlog dump: ");
        return rc;
    }
    rc = w2l__bl_send_dump(b, by_gtid ? MY_COM_BINLOG_DUMP_GTID : MY_COM_BINLOG_DUMP, cmd.data,
                           cmd.len, err);
    w2l_buf_release(&cmd);
    return rc;
}

w2l_rc w2l__bl_send_dump(w2l__bl *b, int cmd, const uint8_t *args, size_t n, w2l_error *err)
{
    if (b->mysql->methods->db_command(b->mysql, (enum enum_server_command)cmd,
                                      (const char *)args, n, 1, NULL)) {
        w2l__bl_fail_mysql(b, err, "dump");
        return err->code;
    }
    return W2L_OK;
}

/* ---- TRANSACTION_PAYLOAD: the inner events, inflated as a stream ---- */

/* More inflated bytes into ib[ib_len, ib_cap) (which has room); *progress set when any
 * input was used or output made. */
static w2l_rc pl_more(w2l__bl *b, int *progress, w2l_error *err)
{
    size_t in0 = b->pl_in_pos, out0 = b->ib_len;
    if (!b->pl_zstd) {
        size_t n = b->pl_in_len - b->pl_in_pos;
        if (n > b->ib_cap - b->ib_len) n = b->ib_cap - b->ib_len;
        memcpy(b->ib + b->ib_len, b->pl_in + b->pl_in_pos, n);
        b->pl_in_pos += n;
        b->ib_len += n;
        b->pl_done = b->pl_in_pos == b->pl_in_len;
    } else {
        size_t in_pos = b->pl_in_pos;
        int end;
        w2l_rc rc = w2l__zstd_stream_step(b->zd, b->pl_in, b->pl_in_len, &in_pos, b->ib,
                                          b->ib_cap, &b->ib_len, &end, err);
        if (rc == W2L_CORRUPT) { /* "zstd: ...", said of the payload */
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            return w2l__bl_corrupt(b, MY_PAYLOAD, m, err);
        }
        W2L_TRY(rc);
        /* end: a frame ended and is flushed (another may follow); later calls without
         * input ask for the next frame's header, which does not undo that */
        if (end) b->pl_done = 1;
        else if (in_pos != b->pl_in_pos) b->pl_done = 0;
        b->pl_in_pos = in_pos;
    }
    *progress = b->pl_in_pos != in0 || b->ib_len != out0;
    return W2L_OK;
}

/* Makes want bytes available at ib_off (compacting and growing ib, so one byte of room
 * stays after them); W2L_DONE when the payload ends first. */
static w2l_rc pl_fill(w2l__bl *b, size_t want, w2l_error *err)
{
    while (b->ib_len - b->ib_off < want) {
        if (b->ib_off && b->ib_cap - b->ib_off <= want) {
            memmove(b->ib, b->ib + b->ib_off, b->ib_len - b->ib_off);
            b->ib_len -= b->ib_off;
            b->ib_off = 0;
        }
        if (b->ib_cap <= b->ib_off + want) {
            size_t nc = b->ib_cap ? b->ib_cap * 2 : 64 * 1024;
            if (nc <= b->ib_off + want) nc = b->ib_off + want + 64 * 1024;
            uint8_t *ni = w2l__realloc(b->ib, nc);
            W2L_NOMEM_IF(!ni, err);
            b->ib = ni;
            b->ib_cap = nc;
        }
        int progress;
        W2L_TRY(pl_more(b, &progress, err));
        if (!progress && b->pl_in_pos == b->pl_in_len) {
            if (!b->pl_done)
                return w2l__bl_corrupt(b, MY_PAYLOAD, "its zstd frame is cut short", err);
            return W2L_DONE;
        }
    }
    return W2L_OK;
}

static w2l_rc my_event(w2l__bl *b, const uint8_t *hdr, size_t evlen, size_t crc,
                       w2l__bl_event *out, w2l_error *err);

/* The next inner event of the payload being handed out. */
static w2l_rc pl_next(w2l__bl *b, w2l__bl_event *out, w2l_error *err)
{
    w2l_rc rc = pl_fill(b, 19, err);
    if (rc == W2L_DONE)
        return w2l__bl_corrupt(b, MY_PAYLOAD,
                          b->ib_len > b->ib_off ? "an inner event is cut short"
                                                : "it holds no event",
                          err);
    W2L_TRY(rc);
    const uint8_t *h = b->ib + b->ib_off;
    size_t el = (size_t)w2l__bl_le(h + 9, 4);
    int type = h[4];
    if (el < 19 || el > (size_t)1 << 30)
        return w2l__bl_corrupt(b, -type, "inner event of an impossible length", err);
    rc = pl_fill(b, el, err);
    if (rc == W2L_DONE) return w2l__bl_corrupt(b, -type, "the payload ends inside it", err);
    W2L_TRY(rc);
    const uint8_t *hdr = b->ib + b->ib_off;
    b->ib_off += el;
    /* Is it the last? Look ahead without moving it: pl_fill left room after it. */
    while (b->ib_len == b->ib_off && b->ib_len < b->ib_cap) {
        int progress;
        W2L_TRY(pl_more(b, &progress, err));
        if (!progress && b->pl_in_pos == b->pl_in_len) {
            if (!b->pl_done)
                return w2l__bl_corrupt(b, MY_PAYLOAD, "its zstd frame is cut short", err);
            break;
        }
    }
    int last = b->ib_len == b->ib_off;
    b->events++;
    rc = my_event(b, hdr, el, 0, out, err);
    if (rc != W2L_OK) return rc;
    out->in_payload = 1;
    out->log_pos = b->pl_log_pos; /* one transaction: its changes end where the payload does */
    if (last) b->pl_active = 0; /* ib stays as it is until the next payload starts */
    return W2L_OK;
}

static w2l_rc pl_start(w2l__bl *b, const uint8_t *body, const uint8_t *end, uint64_t log_pos,
                       w2l__bl_event *out, w2l_error *err)
{
    const uint8_t *p = body;
    uint64_t size = UINT64_MAX, ctype = 0, t, l, v;
    for (;;) {
        if (w2l__bl_lenenc(&p, end, &t))
            return w2l__bl_corrupt(b, MY_PAYLOAD, "header fields", err);
        if (t == 0) break;
        if (w2l__bl_lenenc(&p, end, &l) || (uint64_t)(end - p) < l)
            return w2l__bl_corrupt(b, MY_PAYLOAD, "header fields", err);
        const uint8_t *q = p;
        if ((t == 1 || t == 2) && w2l__bl_lenenc(&q, p + l, &v))
            return w2l__bl_corrupt(b, MY_PAYLOAD, "header fields", err);
        if (t == 1) size = v;
        else if (t == 2) ctype = v;
        p += l; /* 3 (uncompressed size) and fields of later versions: not needed */
    }
    if (size != UINT64_MAX && size != (uint64_t)(end - p))
        return w2l__bl_corrupt(b, MY_PAYLOAD, "its size field disagrees with its length", err);
    if (ctype != 0 && ctype != 255) {
        char m[96];
        snprintf(m, sizeof m, "compression type %llu is not known", (unsigned long long)ctype);
        return w2l__bl_corrupt(b, MY_PAYLOAD, m, err);
    }
    b->pl_zstd = ctype == 0;
    if (b->pl_zstd) {
        if (!b->zd && !(b->zd = w2l__zstd_stream_new()))
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        W2L_TRY(w2l__zstd_stream_reset(b->zd, err));
    }
    b->pl_in = p;
    b->pl_in_len = (size_t)(end - p);
    b->pl_in_pos = 0;
    b->pl_done = 0;
    b->ib_len = b->ib_off = 0;
    b->pl_log_pos = log_pos;
    b->pl_at = b->at;
    b->pl_active = 1;
    b->events--; /* the payload event itself is counted by its inner events */
    return pl_next(b, out, err);
}

/* ---- single events ---- */

/* A mysql::serialization varlen integer (see above); -1 when it runs past end. */
static int my_varlen(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end) return -1;
    int n = 1;
    while (n < 9 && (p[0] >> (n - 1) & 1)) n++;
    if (end - p < n) return -1;
    if (n == 9) *out = w2l__bl_le(p + 1, 8);
    else *out = w2l__bl_le(p, n) >> n;
    *pp = p + n;
    return 0;
}

static w2l_rc my_gtid_tagged(w2l__bl *b, const uint8_t *p, const uint8_t *end,
                             w2l__bl_event *out, w2l_error *err)
{
    uint64_t size, last, id, v;
    const uint8_t *start = p;
    if (p >= end || *p++ != 2)
        return w2l__bl_corrupt(b, MY_GTID_TAGGED, "serialization version is not 2", err);
    if (my_varlen(&p, end, &size) || my_varlen(&p, end, &last) || size > (uint64_t)(end - start))
        return w2l__bl_corrupt(b, MY_GTID_TAGGED, "message header", err);
    end = start + size;
    int have_sid = 0, have_gno = 0;
    out->tag = "";
    while (p < end) {
        if (my_varlen(&p, end, &id)) return w2l__bl_corrupt(b, MY_GTID_TAGGED, "field id", err);
        if (id > 3) break; /* the commit data after the tag: not needed */
        if (id == 1) {
            for (int i = 0; i < 16; i++) {
                if (my_varlen(&p, end, &v) || v > 255)
                    return w2l__bl_corrupt(b, MY_GTID_TAGGED, "source UUID", err);
                out->sid[i] = (uint8_t)v;
            }
            have_sid = 1;
        } else if (id == 3) {
            if (my_varlen(&p, end, &v) || v > 32 || (uint64_t)(end - p) < v)
                return w2l__bl_corrupt(b, MY_GTID_TAGGED, "tag", err);
            out->tag = (const char *)p;
            out->tag_len = (size_t)v;
            p += v;
        } else {
            if (my_varlen(&p, end, &v))
                return w2l__bl_corrupt(b, MY_GTID_TAGGED, "field value", err);
            if (id == 0) out->gflags = (uint8_t)v;
            else {
                int64_t g = (int64_t)(v >> 1);
                out->gno = v & 1 ? -g - 1 : g;
                have_gno = 1;
            }
        }
    }
    if (!have_sid || !have_gno || out->gno < 1)
        return w2l__bl_corrupt(b, MY_GTID_TAGGED, "no source UUID or transaction number", err);
    return W2L_OK;
}

w2l_rc w2l__bl_query(w2l__bl *b, int t, const uint8_t *body, const uint8_t *end,
                     w2l__bl_event *out, w2l_error *err)
{
    size_t blen = (size_t)(end - body), ph = w2l__bl_post(b, t, 13);
    if (ph < 13 || blen < ph) return w2l__bl_corrupt(b, t, "post-header", err);
    size_t dbl = body[8], svl = (size_t)w2l__bl_le(body + 11, 2);
    if (blen < ph + svl + dbl + 1)
        return w2l__bl_corrupt(b, t, "status variables or database", err);
    out->kind = BL_EV_QUERY;
    out->db = (const char *)body + ph + svl;
    out->db_len = dbl;
    out->sql = out->db + dbl + 1;
    out->sql_len = blen - ph - svl - dbl - 1;
    return W2L_OK;
}

w2l_rc w2l__bl_rows(w2l__bl *b, int et, int t, const uint8_t *body, const uint8_t *end,
                    w2l__bl_event *out, w2l_error *err)
{
    int v2 = t == MY_WRITE || t == MY_UPDATE || t == MY_DELETE || t == MY_PARTIAL_UPDATE;
    size_t ph = w2l__bl_post(b, et, v2 ? 10 : 8);
    if (ph < 6 || (size_t)(end - body) < ph) return w2l__bl_corrupt(b, et, "post-header", err);
    const uint8_t *p = body;
    int id4 = ph == 6;
    out->table_id = w2l__bl_le(p, id4 ? 4 : 6);
    out->rows_flags = (uint16_t)w2l__bl_le(p + (id4 ? 4 : 6), 2);
    p += id4 ? 6 : 8;
    if (v2) { /* extra data (partition ids, NDB info): its length counts its own 2 bytes */
        if (end - p < 2) return w2l__bl_corrupt(b, et, "extra data", err);
        size_t xl = (size_t)w2l__bl_le(p, 2);
        if (xl < 2 || (size_t)(end - p) < xl)
            return w2l__bl_corrupt(b, et, "extra data length", err);
        p += xl;
    }
    uint64_t n;
    if (w2l__bl_lenenc(&p, end, &n) || n > 4096) return w2l__bl_corrupt(b, et, "column count", err);
    size_t nb = (size_t)(n + 7) / 8;
    int upd = t == MY_UPDATE || t == MY_UPDATE_V1 || t == MY_PARTIAL_UPDATE;
    if ((size_t)(end - p) < nb * (upd ? 2 : 1))
        return w2l__bl_corrupt(b, et, "column bitmaps", err);
    out->kind = BL_EV_ROWS;
    out->rows_kind = upd ? BL_ROWS_UPDATE
                     : t == MY_DELETE || t == MY_DELETE_V1 ? BL_ROWS_DELETE : BL_ROWS_WRITE;
    out->rows_ncols = (size_t)n;
    out->bitmap1 = out->bitmap2 = p;
    p += nb;
    if (upd) {
        out->bitmap2 = p;
        p += nb;
    }
    out->partial_json = t == MY_PARTIAL_UPDATE;
    out->data = p;
    out->end = end;
    out->tmap = w2l__bl_cache_find(b, out->table_id);
    return W2L_OK;
}

/* Fields of a HEARTBEAT_V2 (and the payload's header): lenenc type, lenenc length, value. */
static w2l_rc my_heartbeat_v2(w2l__bl *b, const uint8_t *p, const uint8_t *end,
                              w2l__bl_event *out, w2l_error *err)
{
    uint64_t t, l, v;
    while (p < end) {
        if (w2l__bl_lenenc(&p, end, &t)) return w2l__bl_corrupt(b, MY_HEARTBEAT_V2, "fields", err);
        if (t == 0) break;
        if (w2l__bl_lenenc(&p, end, &l) || (uint64_t)(end - p) < l)
            return w2l__bl_corrupt(b, MY_HEARTBEAT_V2, "fields", err);
        if (t == 1) {
            out->file = (const char *)p;
            out->file_len = (size_t)l;
        } else if (t == 2) {
            const uint8_t *q = p;
            if (w2l__bl_lenenc(&q, p + l, &v))
                return w2l__bl_corrupt(b, MY_HEARTBEAT_V2, "position", err);
            out->log_pos = v;
        }
        p += l;
    }
    out->kind = BL_EV_HEARTBEAT;
    return W2L_OK;
}

/* One event at hdr (evlen bytes, the last crc of them its verified CRC32). */
static w2l_rc my_event(w2l__bl *b, const uint8_t *hdr, size_t evlen, size_t crc,
                       w2l__bl_event *out, w2l_error *err)
{
    int t = hdr[4];
    out->type = (uint8_t)t;
    out->ts = (uint32_t)w2l__bl_le(hdr, 4);
    out->server_id = (uint32_t)w2l__bl_le(hdr + 5, 4);
    out->log_pos = w2l__bl_le(hdr + 13, 4);
    out->flags = (uint16_t)w2l__bl_le(hdr + 17, 2);
    const uint8_t *body = hdr + 19, *end = hdr + evlen - crc;
    size_t blen = (size_t)(end - body);
    switch (t) {
    case MY_ROTATE:
        if (blen < 8) return w2l__bl_corrupt(b, t, "shorter than its position", err);
        out->kind = BL_EV_ROTATE;
        out->pos = w2l__bl_le(body, 8);
        out->file = (const char *)body + 8;
        out->file_len = blen - 8;
        snprintf(b->file, sizeof b->file, "%.*s", (int)(blen - 8 < 255 ? blen - 8 : 255),
                 out->file);
        break;
    case MY_FDE: out->kind = BL_EV_FDE; break;
    case MY_PREVIOUS_GTIDS:
        out->kind = BL_EV_PREVIOUS_GTIDS;
        out->data = body;
        out->end = end;
        break;
    case MY_GTID: case MY_ANON_GTID:
        if (blen < 25) return w2l__bl_corrupt(b, t, "shorter than its GTID", err);
        out->kind = BL_EV_GTID;
        out->mysql_gtid = 1;
        out->anonymous = t == MY_ANON_GTID;
        out->gflags = body[0];
        memcpy(out->sid, body + 1, 16);
        out->gno = (int64_t)w2l__bl_le(body + 17, 8);
        out->tag = "";
        if (out->anonymous) out->gno = 0;
        else if (out->gno < 1) return w2l__bl_corrupt(b, t, "transaction number below 1", err);
        break;
    case MY_GTID_TAGGED:
        out->kind = BL_EV_GTID;
        out->mysql_gtid = 1;
        W2L_TRY(my_gtid_tagged(b, body, end, out, err));
        break;
    case MY_QUERY: W2L_TRY(w2l__bl_query(b, t, body, end, out, err)); break;
    case MY_XID:
        if (blen < 8) return w2l__bl_corrupt(b, t, "shorter than its XID", err);
        out->kind = BL_EV_XID;
        break;
    case MY_XA_PREPARE: {
        if (blen < 13) return w2l__bl_corrupt(b, t, "shorter than its post-header", err);
        uint64_t gl = w2l__bl_le(body + 5, 4), bl = w2l__bl_le(body + 9, 4);
        if (gl > 64 || bl > 64 || blen < 13 + gl + bl)
            return w2l__bl_corrupt(b, t, "XID lengths", err);
        out->kind = BL_EV_XA_PREPARE;
        out->xid = (const char *)body + 13;
        out->xid_len = (size_t)(gl + bl);
        break;
    }
    case MY_TABLE_MAP:
        out->kind = BL_EV_TABLE_MAP;
        W2L_TRY(w2l__bl_table_map(b, hdr, evlen, crc, out, err));
        break;
    case MY_WRITE_V1: case MY_UPDATE_V1: case MY_DELETE_V1: case MY_WRITE: case MY_UPDATE:
    case MY_DELETE: case MY_PARTIAL_UPDATE:
        W2L_TRY(w2l__bl_rows(b, t, t, body, end, out, err));
        break;
    case MY_HEARTBEAT:
        out->kind = BL_EV_HEARTBEAT;
        out->file = (const char *)body;
        out->file_len = blen;
        break;
    case MY_HEARTBEAT_V2: W2L_TRY(my_heartbeat_v2(b, body, end, out, err)); break;
    case MY_STOP: out->kind = BL_EV_STOP; break;
    default: {
        w2l_rc rc = W2L_NOTFOUND;
        if (!b->is_mysql && t >= MDB_FIRST && t <= MDB_LAST_KNOWN)
            rc = w2l__bl_mdb_event(b, t, body, end, out, err);
        if (rc != W2L_NOTFOUND) return rc;
        if ((t == 0 || t > MY_LAST_KNOWN) && !(out->flags & MY_IGNORABLE_F)) {
            char m[160];
            snprintf(m, sizeof m,
                     "an event type this decoder does not know, and the server did not mark "
                     "it ignorable (header flags 0x%04x)",
                     out->flags);
            return w2l__bl_corrupt(b, t, m, err);
        }
        out->kind = BL_EV_OTHER; /* ROWS_QUERY, TRANSACTION_CONTEXT, VIEW_CHANGE, ... */
    }
    }
    return W2L_OK;
}

/* A FORMAT_DESCRIPTION: the post-header lengths and whether the file's events carry a
 * CRC32 (its own CRC is checked here when they do). */
static w2l_rc my_fde(w2l__bl *b, const uint8_t *hdr, size_t evlen, w2l_error *err)
{
    if (evlen < 19 + 57 + 5) return w2l__bl_corrupt(b, MY_FDE, "too short", err);
    if (hdr[19 + 56] != 19) return w2l__bl_corrupt(b, MY_FDE, "event header length is not 19", err);
    uint8_t alg = hdr[evlen - 5];
    if (alg != 0 && alg != 1) return w2l__bl_corrupt(b, MY_FDE, "unknown checksum algorithm", err);
    if (alg == 1 && w2l__bl_crc32(hdr, evlen - 4) != (uint32_t)w2l__bl_le(hdr + evlen - 4, 4))
        return w2l__bl_corrupt(b, MY_FDE, "CRC32 mismatch", err);
    b->crc = alg == 1;
    size_t n = evlen - 19 - 57 - 5;
    b->npost = n < sizeof b->post ? n : sizeof b->post;
    memcpy(b->post, hdr + 19 + 57, b->npost);
    return W2L_OK;
}

w2l_rc w2l__bl_read(w2l__bl *b, w2l__bl_event *out, w2l_error *err)
{
    if (b->pl_active) return pl_next(b, out, err);
    unsigned long n = mysql_net_read_packet(b->mysql);
    if (n == packet_error || n == 0) {
        if (mysql_errno(b->mysql) == 0) {
            w2l__fail(err, W2L_UNAVAILABLE, "binlog read from %s: the connection failed",
                      w2l__my_name(b->conn));
            err->flags |= W2L_ERR_RETRIABLE;
            return W2L_UNAVAILABLE;
        }
        w2l__bl_fail_mysql(b, err, "read");
        return err->code;
    }
    const uint8_t *p = b->mysql->net.read_pos;
    if (p[0] == 0xFE && n < 9) {
        if (b->non_block) return W2L_DONE;
        w2l__fail(err, W2L_UNAVAILABLE, "binlog read from %s: the server ended the dump",
                  w2l__my_name(b->conn));
        err->flags |= W2L_ERR_RETRIABLE;
        return W2L_UNAVAILABLE;
    }
    if (p[0] != 0x00)
        return w2l__fail(err, W2L_CORRUPT, "binlog read from %s: packet starting 0x%02x",
                         w2l__my_name(b->conn), p[0]);
    const uint8_t *hdr = p + 1;
    size_t evlen = n - 1;
    if (evlen < 19)
        return w2l__fail(err, W2L_CORRUPT, "binlog: event shorter than its header at %s",
                         b->file[0] ? b->file : "?");
    int t = hdr[4];
    uint64_t next = w2l__bl_le(hdr + 13, 4);
    b->at = next >= evlen ? next - evlen : 0;
    if (w2l__bl_le(hdr + 9, 4) != evlen)
        return w2l__bl_corrupt(b, t, "its length field disagrees with its packet", err);
    b->bytes += evlen;
    b->events++;
    size_t crc = 0;
    if (t == MY_FDE) {
        W2L_TRY(my_fde(b, hdr, evlen, err));
        crc = 5; /* the checksum algorithm byte and the CRC */
    } else if (t == MY_ROTATE || t == MY_HEARTBEAT || t == MY_HEARTBEAT_V2) {
        /* artificial events (before the FDE, between files) may or may not carry one */
        if (evlen >= 19 + 4 &&
            w2l__bl_crc32(hdr, evlen - 4) == (uint32_t)w2l__bl_le(hdr + evlen - 4, 4))
            crc = 4;
    } else if (b->crc) {
        if (evlen < 19 + 4) return w2l__bl_corrupt(b, t, "too short for its CRC32", err);
        if (w2l__bl_crc32(hdr, evlen - 4) != (uint32_t)w2l__bl_le(hdr + evlen - 4, 4))
            return w2l__bl_corrupt(b, t, "CRC32 mismatch", err);
        crc = 4;
    }
    if (t == MY_PAYLOAD) {
        if (evlen - crc < 19) return w2l__bl_corrupt(b, t, "too short", err);
        return pl_start(b, hdr + 19, hdr + evlen - crc, next, out, err);
    }
    return my_event(b, hdr, evlen, crc, out, err);
}

void w2l__bl_read_close(w2l__bl *b)
{
    w2l__zstd_stream_free(b->zd);
    w2l__free(b->ib);
    w2l__free(b->zb);
}
