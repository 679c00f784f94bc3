/*
 * Deletion vectors in Puffin files (Iceberg spec "Deletion Vectors", Puffin spec: file
 * structure and blob type "deletion-vector-v1").
 *
 * A deletion-vector-v1 blob: the length of magic + vector as 4 bytes big-endian, the magic
 * D1 D3 39 64, the vector (a 64-bit Roaring bitmap in the portable serialization,
 * roaring.c), and the CRC-32 of magic + vector as 4 bytes big-endian.
 *
 * A Puffin file: the magic "PFA1", the blobs, then the footer: the magic again, the footer
 * payload (UTF-8 JSON, uncompressed here: {"blobs":[{"type","fields","snapshot-id",
 * "sequence-number","offset","length","properties"}],"properties":{..}}), its size as 4
 * bytes little-endian, 4 bytes of flags (bit 0 of byte 0: the payload is compressed; 0
 * here) and the magic. A deletion vector's blob has fields [2147483645] (the row position),
 * snapshot-id and sequence-number -1 (inherited from the manifest), and the properties
 * referenced-data-file and cardinality.
 *
 * This project writes one deletion vector per Puffin file, so the manifest entry of a
 * vector and its file go together (a commit that removes the vector removes the file from
 * the table; expiry and orphan removal work by file path).
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"

static const unsigned char PUFFIN_MAGIC[4] = {0x50, 0x46, 0x41, 0x31};
static const unsigned char DV_MAGIC[4] = {0xD1, 0xD3, 0x39, 0x64};

uint32_t w2l__crc32(const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    static volatile int ready; /* benign race: every thread computes the same table */
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

w2l_rc w2l__dv_blob_encode(const uint64_t *v, size_t n, w2l_buf *out, w2l_error *err)
{
    size_t start = out->len;
    W2L_TRY(w2l__buf_reserve(out, 8, err));
    out->len += 4;
    memcpy(out->data + out->len, DV_MAGIC, 4);
    out->len += 4;
    W2L_TRY(w2l__roaring64_serialize(v, n, out, err));
    size_t body = out->len - start - 4;
    if (body > 0x7fffffff)
        return w2l__fail(err, W2L_MISUSE, "deletion vector of %zu bytes too large", body);
    put_be32(out->data + start, (uint32_t)body);
    uint32_t crc = w2l__crc32(out->data + start + 4, body);
    W2L_TRY(w2l__buf_reserve(out, 4, err));
    put_be32(out->data + out->len, crc);
    out->len += 4;
    return W2L_OK;
}

w2l_rc w2l__dv_blob_decode(const unsigned char *p, size_t len, uint64_t **v, size_t *n,
                           w2l_error *err)
{
    *v = NULL;
    *n = 0;
    if (len < 12)
        return w2l__fail(err, W2L_CORRUPT, "deletion vector: blob of %zu bytes is too short", len);
    uint32_t body = get_be32(p);
    if ((size_t)body + 8 != len)
        return w2l__fail(err, W2L_CORRUPT,
                         "deletion vector: length %u does not fit the blob of %zu bytes",
                         (unsigned)body, len);
    if (memcmp(p + 4, DV_MAGIC, 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "deletion vector: bad magic");
    uint32_t crc = get_be32(p + 4 + body), want = w2l__crc32(p + 4, body);
    if (crc != want)
        return w2l__fail(err, W2L_CORRUPT, "deletion vector: CRC %08x, computed %08x",
                         (unsigned)crc, (unsigned)want);
    return w2l__roaring64_deserialize(p + 8, body - 4, v, n, err);
}

w2l_rc w2l__puffin_dv_write(w2l_fileio *io, const char *path, const char *referenced,
                            const uint64_t *v, size_t n, w2l__puffin_blob *out, w2l_error *err)
{
    w2l_buf b = {0};
    w2l_rc rc = w2l_buf_append(&b, PUFFIN_MAGIC, 4, err);
    if (rc == W2L_OK) rc = w2l__dv_blob_encode(v, n, &b, err);
    size_t blob_len = b.len - 4;
    char card[24];
    snprintf(card, sizeof card, "%zu", n);
    w2l__json_writer w;
    w2l__json_w_init(&w, 0);
    w2l__json_w_object(&w, NULL);
    w2l__json_w_array(&w, "blobs");
    w2l__json_w_object(&w, NULL);
    w2l__json_w_string(&w, "type", W2L_PUFFIN_DV_TYPE);
    w2l__json_w_array(&w, "fields");
    w2l__json_w_int64(&w, NULL, W2L_ICE_ROW_POS_FIELD_ID);
    w2l__json_w_close(&w);
    w2l__json_w_int64(&w, "snapshot-id", -1);
    w2l__json_w_int64(&w, "sequence-number", -1);
    w2l__json_w_int64(&w, "offset", 4);
    w2l__json_w_int64(&w, "length", (int64_t)blob_len);
    w2l__json_w_object(&w, "properties");
    w2l__json_w_string(&w, "referenced-data-file", referenced);
    w2l__json_w_string(&w, "cardinality", card);
    w2l__json_w_close(&w);
    w2l__json_w_close(&w);
    w2l__json_w_close(&w);
    w2l__json_w_object(&w, "properties");
    w2l__json_w_string(&w, "created-by", "libwholedb2lake");
    w2l__json_w_close(&w);
    w2l__json_w_close(&w);
    size_t jlen = 0;
    char *json = w2l__json_w_finish(&w, &jlen);
    if (rc == W2L_OK && !json) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    unsigned char tail[12] = {0};
    if (rc == W2L_OK) rc = w2l_buf_append(&b, PUFFIN_MAGIC, 4, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&b, json, jlen, err);
    if (rc == W2L_OK) {
        tail[0] = (unsigned char)jlen;
        tail[1] = (unsigned char)(jlen >> 8);
        tail[2] = (unsigned char)(jlen >> 16);
        tail[3] = (unsigned char)(jlen >> 24);
        memcpy(tail + 8, PUFFIN_MAGIC, 4);
        rc = w2l_buf_append(&b, tail, sizeof tail, err);
    }
    w2l__free(json);
    if (rc == W2L_OK)
        rc = w2l_fileio_write_all(io, w2l__ice_local_path(path), W2L_CREATE_EXCL, b.data, b.len,
                                  err);
    if (rc == W2L_OK && out)
        *out = (w2l__puffin_blob){ 4, (int64_t)blob_len, (int64_t)b.len, (int64_t)n, NULL, NULL };
    w2l_buf_release(&b);
    if (rc != W2L_OK) w2l__error_prefix(err, "deletion vector file %s: ", path);
    return rc;
}

w2l_rc w2l__puffin_footer_parse(const unsigned char *p, size_t len, w2l__arena *a,
                                w2l__puffin_blob **out, size_t *n, w2l_error *err)
{
    *out = NULL;
    *n = 0;
    if (len < 4 + 4 + 12 || memcmp(p, PUFFIN_MAGIC, 4) != 0 ||
        memcmp(p + len - 4, PUFFIN_MAGIC, 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "puffin: no magic at the start and end");
    uint32_t plen = get_le32(p + len - 12);
    if (p[len - 8] & 1)
        return w2l__fail(err, W2L_CORRUPT, "puffin: compressed footer payloads are not read here");
    if ((size_t)plen > len - 4 - 4 - 12)
        return w2l__fail(err, W2L_CORRUPT, "puffin: footer payload of %u bytes does not fit",
                         (unsigned)plen);
    size_t foot = len - 12 - plen - 4;
    if (memcmp(p + foot, PUFFIN_MAGIC, 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "puffin: no magic before the footer payload");
    w2l__json *j;
    W2L_TRY(w2l__json_parse((const char *)p + foot + 4, plen, &j, err));
    const w2l__json *blobs = w2l__json_get(j, "blobs");
    size_t nb = w2l__json_size(blobs), k = 0;
    w2l__puffin_blob *v = w2l__arena_alloc(a, (nb + 1) * sizeof *v);
    w2l_rc rc = v ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && (!blobs || w2l__json_type(blobs) != W2L_JSON_ARRAY))
        rc = w2l__fail(err, W2L_CORRUPT, "puffin: footer without a blobs array");
    for (const w2l__json *b = rc == W2L_OK ? w2l__json_first(blobs) : NULL; rc == W2L_OK && b;
         b = w2l__json_next(b), k++) {
        w2l__puffin_blob *x = &v[k];
        memset(x, 0, sizeof *x);
        x->cardinality = -1;
        const char *type = w2l__json_str(w2l__json_get(b, "type"));
        if (!type || w2l__json_int64(w2l__json_get(b, "offset"), &x->offset) != 0 ||
            w2l__json_int64(w2l__json_get(b, "length"), &x->length) != 0 || x->offset < 4 ||
            x->length < 0 || (uint64_t)x->offset + (uint64_t)x->length > foot) {
            rc = w2l__fail(err, W2L_CORRUPT, "puffin: blob %zu lacks type, offset or length, or "
                                             "lies outside the blobs",
                           k);
            break;
        }
        x->type = w2l__arena_strndup(a, type, strlen(type));
        const w2l__json *props = w2l__json_get(b, "properties");
        const char *ref = w2l__json_str(w2l__json_get(props, "referenced-data-file"));
        const char *card = w2l__json_str(w2l__json_get(props, "cardinality"));
        if (ref) x->referenced = w2l__arena_strndup(a, ref, strlen(ref));
        if (card) x->cardinality = strtoll(card, NULL, 10);
        if (!x->type || (ref && !x->referenced)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__json_free(j);
    if (rc != W2L_OK) return rc;
    *out = v;
    *n = k;
    return W2L_OK;
}

w2l_rc w2l__ice_dv_read(w2l_fileio *io, const w2l__ice_data_file *d, uint64_t **v, size_t *n,
                        w2l_error *err)
{
    *v = NULL;
    *n = 0;
    if (!d->has_content_range || d->content_size < 12 || d->content_size > (1LL << 31) ||
        d->content_offset < 4)
        return w2l__fail(err, W2L_CORRUPT, "deletion vector %s: no valid content offset and size",
                         d->path);
    w2l_rfile *f;
    W2L_TRY(w2l_fileio_open_read(io, w2l__ice_local_path(d->path), &f, err));
    unsigned char *buf = w2l__malloc((size_t)d->content_size);
    w2l_rc rc = buf ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK)
        rc = w2l_rfile_pread(f, buf, (size_t)d->content_size, (uint64_t)d->content_offset, err);
    w2l_rfile_close(f);
    if (rc == W2L_OK) rc = w2l__dv_blob_decode(buf, (size_t)d->content_size, v, n, err);
    w2l__free(buf);
    if (rc == W2L_OK && d->record_count >= 0 && (int64_t)*n != d->record_count) {
        rc = w2l__fail(err, W2L_CORRUPT, "holds %zu positions, its record_count is %lld", *n,
                       (long long)d->record_count);
        w2l__free(*v);
        *v = NULL;
        *n = 0;
    }
    if (rc != W2L_OK) w2l__error_prefix(err, "deletion vector %s: ", d->path);
    return rc;
}

int w2l__ice_is_dv(const w2l__ice_data_file *d)
{
    return d->content == W2L_ICE_POS_DELETES && d->format && strcmp(d->format, "PUFFIN") == 0;
}
