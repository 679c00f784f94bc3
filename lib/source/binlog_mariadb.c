/*
 * MariaDB's own binlog events (types 160-171), decoded from the dump's packets that
 * binlog_mysql.c reads for both flavours (binlog_int.h is what the binlog files share).
 * body is the event after its 19-byte header, end the end of the event without its CRC32.
 *
 *   ANNOTATE_ROWS (160)      the statement's text: skipped (never asked for: the dump's
 *                            flag 2 is not sent)
 *   BINLOG_CHECKPOINT (161)  name length 4 + name: skipped
 *   GTID (162)               seq_no 8, domain 4, flags2 1, then in order: with
 *                            FL_GROUP_COMMIT_ID (0x02) commit id 8; with PREPARED_XA (0x40)
 *                            or COMPLETED_XA (0x80) format id 4, gtrid length 1, bqual
 *                            length 1, gtrid + bqual bytes; then the 10.5+ extra flags.
 *                            The post-header is 19 bytes (zeros after flags2 when unused),
 *                            21 with a commit id. The server id is the header's.
 *   GTID_LIST (163)          count 4 (the low 28 bits; the top 4 are flags), then per
 *                            GTID: domain 4, server 4, seq_no 8
 *   START_ENCRYPTION (164)   skipped (the dump sends events decrypted)
 *   QUERY_COMPRESSED (165)   QUERY's post-header, status variables, db and NUL, then the
 *                            statement compressed as below
 *   *_ROWS_COMPRESSED        v1 WRITE/UPDATE/DELETE 166/167/168, v2 169/170/171: the rows
 *                            event's post-header, column count and bitmaps as they are,
 *                            then the row images compressed as below
 *
 * Compressed data (log_bin_compress=ON, for events over log_bin_compress_min_len): one
 * header byte, 0x80 | n with the algorithm in bits 4-6 (0: zlib, the only one), then the
 * uncompressed length in n (1-4) bytes big-endian, then a zlib stream (RFC 1950). Example:
 * a 300-byte statement is 0x82 0x01 0x2c, then the zlib bytes. It is inflated into the
 * stream's buffer (b->zb, grown to the largest event; borrowed until the next fetch). A
 * length that zlib cannot reach from the bytes given (more than 1032 to 1) is corrupt.
 */
#include <stdio.h>

#include "binlog_int.h"
#include "mysql_int.h"
#include "../common/gzip.h"

enum {
    MDB_ANNOTATE_ROWS = 160, MDB_CHECKPOINT = 161, MDB_GTID = 162, MDB_GTID_LIST = 163,
    MDB_START_ENCRYPTION = 164, MDB_QUERY_COMPRESSED = 165, MDB_WRITE_COMPRESSED_V1 = 166,
    MDB_DELETE_COMPRESSED_V1 = 168, MDB_WRITE_COMPRESSED = 169, MDB_DELETE_COMPRESSED = 171
};
enum { MDB_FL_GROUP_COMMIT_ID = 0x02, MDB_GTID_HEADER_LEN = 19 };

/* Inflates the compressed data [p, end) of an event of type t into b->zb; *len its size. */
static w2l_rc inflate_data(w2l__bl *b, int t, const uint8_t *p, const uint8_t *end, size_t *len,
                           w2l_error *err)
{
    if (p >= end) return w2l__bl_corrupt(b, t, "no compressed data", err);
    unsigned h = p[0], n = h & 7;
    if ((h & 0xF0) != 0x80 || n < 1 || n > 4) {
        char m[96];
        snprintf(m, sizeof m, "compressed data header 0x%02x (expected zlib, 0x81-0x84)", h);
        return w2l__bl_corrupt(b, t, m, err);
    }
    if ((size_t)(end - p) < 1 + n) return w2l__bl_corrupt(b, t, "compressed data header", err);
    uint64_t ulen = w2l__bl_be(p + 1, (int)n);
    const uint8_t *z = p + 1 + n;
    size_t zlen = (size_t)(end - z);
    if (ulen > (uint64_t)zlen * 1032 + 64 || ulen > (uint64_t)1 << 30) {
        char m[128];
        snprintf(m, sizeof m, "uncompressed length %llu from %zu compressed bytes",
                 (unsigned long long)ulen, zlen);
        return w2l__bl_corrupt(b, t, m, err);
    }
    if (ulen + 1 > b->zb_cap) {
        size_t nc = b->zb_cap ? b->zb_cap : 64 * 1024;
        while (nc < ulen + 1) nc *= 2;
        uint8_t *nz = w2l__realloc(b->zb, nc);
        W2L_NOMEM_IF(!nz, err);
        b->zb = nz;
        b->zb_cap = nc;
    }
    w2l_rc rc = w2l__gzip_decompress(z, zlen, b->zb, (size_t)ulen, err);
    if (rc == W2L_CORRUPT) { /* "gzip: ...", said of the event */
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err->msg);
        return w2l__bl_corrupt(b, t, m, err);
    }
    W2L_TRY(rc);
    *len = (size_t)ulen;
    return W2L_OK;
}

static w2l_rc gtid(w2l__bl *b, const uint8_t *body, const uint8_t *end, w2l__bl_event *out,
                   w2l_error *err)
{
    size_t blen = (size_t)(end - body);
    if (blen < MDB_GTID_HEADER_LEN) return w2l__bl_corrupt(b, MDB_GTID, "shorter than 19", err);
    out->kind = BL_EV_GTID;
    out->gtid.seq = w2l__bl_le(body, 8);
    out->gtid.domain = (uint32_t)w2l__bl_le(body + 8, 4);
    out->gtid.server = out->server_id;
    out->gflags = body[12];
    const uint8_t *p = body + 13;
    if (out->gflags & MDB_FL_GROUP_COMMIT_ID) {
        if (blen < MDB_GTID_HEADER_LEN + 2)
            return w2l__bl_corrupt(b, MDB_GTID, "no room for its commit id", err);
        p += 8;
    }
    if (out->gflags & (BL_GTID_PREPARED_XA | BL_GTID_COMPLETED_XA)) {
        if (end - p < 6) return w2l__bl_corrupt(b, MDB_GTID, "shorter than its XID", err);
        size_t gl = p[4], bl = p[5];
        if (gl > 64 || bl > 64 || (size_t)(end - p - 6) < gl + bl)
            return w2l__bl_corrupt(b, MDB_GTID, "XID lengths", err);
        out->xid = (const char *)p + 6;
        out->xid_len = gl + bl;
    }
    return W2L_OK;
}

static w2l_rc gtid_list(w2l__bl *b, const uint8_t *body, const uint8_t *end, w2l__bl_event *out,
                        w2l_error *err)
{
    if (end - body < 4) return w2l__bl_corrupt(b, MDB_GTID_LIST, "shorter than its count", err);
    size_t n = (size_t)(w2l__bl_le(body, 4) & 0x0FFFFFFF);
    if ((size_t)(end - body - 4) / 16 < n)
        return w2l__bl_corrupt(b, MDB_GTID_LIST, "shorter than its GTIDs", err);
    if (n > b->gl_cap) {
        w2l__bl_gtid *g = w2l__realloc(b->gl, n * sizeof *g);
        W2L_NOMEM_IF(!g, err);
        b->gl = g;
        b->gl_cap = n;
    }
    const uint8_t *p = body + 4;
    for (size_t i = 0; i < n; i++, p += 16) {
        b->gl[i].domain = (uint32_t)w2l__bl_le(p, 4);
        b->gl[i].server = (uint32_t)w2l__bl_le(p + 4, 4);
        b->gl[i].seq = w2l__bl_le(p + 8, 8);
    }
    out->kind = BL_EV_GTID_LIST;
    out->gtids = b->gl;
    out->ngtids = n;
    return W2L_OK;
}

w2l_rc w2l__bl_mdb_event(w2l__bl *b, int t, const uint8_t *body, const uint8_t *end,
                         w2l__bl_event *out, w2l_error *err)
{
    size_t len;
    switch (t) {
    case MDB_ANNOTATE_ROWS: case MDB_CHECKPOINT: case MDB_START_ENCRYPTION:
        out->kind = BL_EV_OTHER;
        return W2L_OK;
    case MDB_GTID: return gtid(b, body, end, out, err);
    case MDB_GTID_LIST: return gtid_list(b, body, end, out, err);
    case MDB_QUERY_COMPRESSED:
        W2L_TRY(w2l__bl_query(b, t, body, end, out, err));
        W2L_TRY(inflate_data(b, t, (const uint8_t *)out->sql, end, &len, err));
        out->sql = (const char *)b->zb;
        out->sql_len = len;
        return W2L_OK;
    default:
        if (t < MDB_WRITE_COMPRESSED_V1 || t > MDB_DELETE_COMPRESSED) return W2L_NOTFOUND;
        /* as WRITE/UPDATE/DELETE_ROWS v1 (23-25) or v2 (30-32) */
        W2L_TRY(w2l__bl_rows(b, t,
                             t <= MDB_DELETE_COMPRESSED_V1 ? t - MDB_WRITE_COMPRESSED_V1 + 23
                                                           : t - MDB_WRITE_COMPRESSED + 30,
                             body, end, out, err));
        W2L_TRY(inflate_data(b, t, out->data, end, &len, err));
        out->data = b->zb;
        out->end = b->zb + len;
        return W2L_OK;
    }
}
