/*
 * GZIP and zlib inflation, and zlib's CRC-32, the one file that includes zlib.h. Two
 * readers use the inflation: the Parquet reader's GZIP page codec (CompressionCodec GZIP =
 * 2, common in files of Java writers such as Iceberg Java), and the binlog reader for
 * MariaDB's compressed events
 * (log_bin_compress=ON: QUERY_COMPRESSED and the *_ROWS_COMPRESSED events carry zlib
 * streams). A gzip stream is RFC 1952 (a header, DEFLATE data of RFC 1951, then CRC-32 and
 * length of the data); zlib checks both. The caller knows the uncompressed size (the page
 * header, the event's length prefix) and the output must be exactly that many bytes.
 *
 * Accepted: one gzip member; several members back to back (RFC 1952 section 2.2 defines a
 * gzip file as a series of members); a zlib stream (RFC 1950) in place of the gzip one, as
 * some older writers and MariaDB's compress() emit. zlib's header detection (windowBits +
 * 32) tells gzip from zlib. W2L_CORRUPT, naming what: bad header, bad DEFLATE data, a CRC
 * or length mismatch, a stream that ends early, bytes after the last member, or more or
 * fewer bytes than the header says (the output stops at dst_len; one spare byte tells "too
 * long" from "exact").
 *
 * zlib, not an inflater of our own: it is the reference implementation, small, everywhere,
 * and fuzzed for decades; a hand-written one would only add bugs. Its allocations go through
 * the library's allocator (zalloc/zfree), so out-of-memory tests reach it too. One stream per
 * call (about 40 KiB of zlib state): pages and events are large, and read, not written.
 */
#define ZLIB_CONST /* next_in is const */
#include <limits.h>
#include <zlib.h>

#include "gzip.h"

static voidpf zalloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return w2l__malloc((size_t)items * size);
}

static void zfree(voidpf opaque, voidpf p)
{
    (void)opaque;
    w2l__free(p);
}

w2l_rc w2l__gzip_decompress(const void *src, size_t n, void *dst, size_t dst_len,
                               w2l_error *err)
{
    /* zlib counts in uInt; Parquet page sizes are int32, binlog events 32-bit */
    if (n > UINT_MAX || dst_len > UINT_MAX)
        return w2l__fail(err, W2L_CORRUPT, "gzip: %zu bytes into %zu too large", n,
                         dst_len);
    if (n == 0) return w2l__fail(err, W2L_CORRUPT, "gzip: empty input");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = zalloc;
    zs.zfree = zfree;
    int zr = inflateInit2(&zs, MAX_WBITS + 32);
    W2L_NOMEM_IF(zr == Z_MEM_ERROR, err);
    if (zr != Z_OK) return w2l__fail(err, W2L_ERROR, "gzip: inflateInit2: %s", zError(zr));

    unsigned char spare; /* the byte after dst: written only when the data is too long */
    int probing = 0;     /* dst is full; next_out is spare */
    zs.next_in = src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst_len ? dst : &spare; /* zlib rejects a NULL next_out */
    zs.avail_out = (uInt)dst_len;
    w2l_rc rc = W2L_OK;
    for (;;) {
        zr = inflate(&zs, Z_NO_FLUSH);
        if (probing && zs.avail_out == 0) {
            rc = w2l__fail(err, W2L_CORRUPT,
                           "gzip: data longer than the %zu bytes the header says", dst_len);
            break;
        }
        if (zr == Z_STREAM_END) {
            if (zs.avail_in == 0) break;
            if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
                inflateReset(&zs); /* the next member; keeps next_out and avail_out */
                continue;
            }
            rc = w2l__fail(err, W2L_CORRUPT, "gzip: %u bytes after the end of the stream",
                           (unsigned)zs.avail_in);
            break;
        }
        if (zr == Z_MEM_ERROR) {
            rc = w2l__fail(err, W2L_NOMEM, "gzip: out of memory");
            break;
        }
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT) {
            rc = w2l__fail(err, W2L_CORRUPT, "gzip: %s",
                           zr == Z_NEED_DICT ? "zlib stream needs a preset dictionary"
                           : zs.msg           ? zs.msg
                                              : "invalid data");
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = w2l__fail(err, W2L_ERROR, "gzip: inflate: %s", zError(zr));
            break;
        }
        /* stopped for want of output or input */
        if (zs.avail_out == 0 && !probing) {
            probing = 1;
            zs.next_out = &spare;
            zs.avail_out = 1;
            continue;
        }
        if (zs.avail_in == 0) {
            rc = w2l__fail(err, W2L_CORRUPT, "gzip: stream ends early (%zu of %zu bytes out)",
                           probing ? dst_len : dst_len - zs.avail_out, dst_len);
            break;
        }
        if (zr == Z_BUF_ERROR) { /* no progress with both buffers open: cannot happen */
            rc = w2l__fail(err, W2L_ERROR, "gzip: inflate made no progress");
            break;
        }
    }
    size_t got = probing ? dst_len : dst_len - zs.avail_out;
    inflateEnd(&zs);
    if (rc == W2L_OK && got != dst_len)
        rc = w2l__fail(err, W2L_CORRUPT, "gzip: %zu bytes, header says %zu", got, dst_len);
    return rc;
}

uint32_t w2l__zlib_crc32(const void *p, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const Bytef *b = p;
    while (n > UINT_MAX) { /* zlib counts in uInt */
        c = crc32(c, b, UINT_MAX);
        b += UINT_MAX;
        n -= UINT_MAX;
    }
    return (uint32_t)crc32(c, b, (uInt)n);
}
