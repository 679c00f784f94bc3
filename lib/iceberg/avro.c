/*
 * The Avro object container file for manifests and manifest lists (Avro 1.11
 * specification, "Object Container Files"), the one place besides manifest*.c that uses
 * avro-c. avro-c's file writer cannot put user metadata into the header, which Iceberg needs
 * (schema, partition-spec, partition-spec-id, format-version, content), so the container is
 * framed here and avro-c encodes each record. Reading: the header metadata is parsed here;
 * uncompressed files (w2l's own) are decoded block by block here with avro-c's datum reader
 * and a cached schema, others go through avro-c's file reader over the bytes in memory (it
 * knows the deflate codec other writers use). Parsed schemas are cached by their JSON text.
 *
 * Byte grammar:  file   = "Obj" 0x01, meta, sync[16], block*
 *                meta   = map<bytes> = (count:long (key:string value:bytes){count})* 0:long
 *                block  = records:long, size:long, data[size], sync[16]
 * long = zig-zag varint. Example: a header with one pair "a"->"b" is 4 + 1+ (1+1)+(1+1) + 1
 * + 16 = 27 bytes. Written with codec "null" (readers we care about: null or deflate).
 */
#include <errno.h>
#include <stdio.h>

#include <avro.h>

#include "avro_int.h"
#include "../io/io.h"
#include "../common/thread.h"

#define BLOCK_RECORDS 4096

static size_t put_long(unsigned char *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (unsigned char)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (unsigned char)z;
    return n;
}

static w2l_rc buf_long(w2l_buf *b, int64_t v, w2l_error *err)
{
    unsigned char t[10];
    return w2l_buf_append(b, t, put_long(t, v), err);
}

static w2l_rc buf_bytes(w2l_buf *b, const void *p, size_t n, w2l_error *err)
{
    W2L_TRY(buf_long(b, (int64_t)n, err));
    return n ? w2l_buf_append(b, p, n, err) : W2L_OK;
}

/* avro-c's allocator: one function for malloc (ptr NULL), realloc and free (nsize 0);
 * osize is the caller's record of the old size, which w2l__realloc does not need. */
static void *route_alloc(void *user_data, void *ptr, size_t osize, size_t nsize)
{
    (void)user_data, (void)osize;
    if (nsize == 0) {
        w2l__free(ptr);
        return NULL;
    }
    return w2l__realloc(ptr, nsize);
}

void w2l__avro_use_allocator(void)
{
    avro_set_allocator(route_alloc, NULL);
}

static w2l_rc avro_fail(w2l_error *err, w2l_rc code, const char *what)
{
    return w2l__fail(err, code, "avro: %s: %s", what, avro_strerror());
}

/* ---- parsed schemas, by their JSON text ----
 * Parsing a manifest's schema (JSON, then avro-c's schema and value class) cost more than
 * the rest of a small commit; a job writes the same few schemas (one per partition type)
 * over and over. Schemas and classes are immutable once built and their reference counts
 * are atomic, so committer threads share them; the cache holds one reference to each. */
#define SCHEMA_CACHE 32

typedef struct cached_schema {
    char *json;
    avro_schema_t schema;
    avro_value_iface_t *iface;
} cached_schema;

static cached_schema cache[SCHEMA_CACHE];
static size_t cache_n, cache_next;
static mtx_t cache_mtx;
static once_flag cache_once = ONCE_FLAG_INIT;

static void cache_init(void)
{
    mtx_init(&cache_mtx, mtx_plain);
}

static void cached_release(cached_schema *c)
{
    avro_value_iface_decref(c->iface);
    avro_schema_decref(c->schema);
    w2l__free(c->json);
    memset(c, 0, sizeof *c);
}

void w2l__avro_cache_clear(void)
{
    call_once(&cache_once, cache_init);
    mtx_lock(&cache_mtx);
    for (size_t i = 0; i < cache_n; i++) cached_release(&cache[i]);
    cache_n = cache_next = 0;
    mtx_unlock(&cache_mtx);
}

/* The schema and value class of json (len bytes), each with a reference for the caller. */
static w2l_rc schema_get(const char *json, size_t len, avro_schema_t *schema,
                         avro_value_iface_t **iface, w2l_error *err)
{
    call_once(&cache_once, cache_init);
    mtx_lock(&cache_mtx);
    for (size_t i = 0; i < cache_n; i++)
        if (strlen(cache[i].json) == len && memcmp(cache[i].json, json, len) == 0) {
            *schema = avro_schema_incref(cache[i].schema);
            *iface = avro_value_iface_incref(cache[i].iface);
            mtx_unlock(&cache_mtx);
            return W2L_OK;
        }
    mtx_unlock(&cache_mtx);
    avro_schema_t s;
    if (avro_schema_from_json_length(json, len, &s) != 0)
        return avro_fail(err, W2L_ERROR, "schema");
    avro_value_iface_t *c = avro_generic_class_from_schema(s);
    if (!c) {
        avro_schema_decref(s);
        return avro_fail(err, W2L_NOMEM, "value class");
    }
    *schema = s;
    *iface = c;
    char *copy = w2l__strndup(json, len);
    if (!copy) return W2L_OK; /* not cached: only slower */
    mtx_lock(&cache_mtx);
    cached_schema *slot = &cache[cache_n < SCHEMA_CACHE ? cache_n++ : cache_next++ % SCHEMA_CACHE];
    if (slot->json) cached_release(slot);
    slot->json = copy;
    slot->schema = avro_schema_incref(s);
    slot->iface = avro_value_iface_incref(c);
    mtx_unlock(&cache_mtx);
    return W2L_OK;
}

w2l_rc w2l__avro_out_begin(w2l__avro_out *o, const char *schema_json, const w2l__ice_kv *meta,
                           size_t nmeta, w2l_error *err)
{
    memset(o, 0, sizeof *o);
    W2L_TRY(schema_get(schema_json, strlen(schema_json), &o->schema, &o->iface, err));
    if (avro_generic_value_new(o->iface, &o->value) != 0) return avro_fail(err, W2L_NOMEM, "value");
    o->have_value = 1;
    /* 16 random bytes for the sync marker */
    int64_t r1 = w2l__ice_random_id(), r2 = w2l__ice_random_id();
    memcpy(o->sync, &r1, 8);
    memcpy(o->sync + 8, &r2, 8);

    W2L_TRY(w2l_buf_append(&o->file, "Obj\1", 4, err));
    W2L_TRY(buf_long(&o->file, (int64_t)nmeta + 2, err));
    W2L_TRY(buf_bytes(&o->file, "avro.schema", 11, err));
    W2L_TRY(buf_bytes(&o->file, schema_json, strlen(schema_json), err));
    W2L_TRY(buf_bytes(&o->file, "avro.codec", 10, err));
    W2L_TRY(buf_bytes(&o->file, "null", 4, err));
    for (size_t i = 0; i < nmeta; i++) {
        W2L_TRY(buf_bytes(&o->file, meta[i].key, strlen(meta[i].key), err));
        W2L_TRY(buf_bytes(&o->file, meta[i].value, strlen(meta[i].value), err));
    }
    W2L_TRY(buf_long(&o->file, 0, err));
    return w2l_buf_append(&o->file, o->sync, 16, err);
}

avro_value_t *w2l__avro_out_record(w2l__avro_out *o)
{
    avro_value_reset(&o->value);
    return &o->value;
}

static w2l_rc flush_block(w2l__avro_out *o, w2l_error *err)
{
    if (o->block_count == 0) return W2L_OK;
    W2L_TRY(buf_long(&o->file, o->block_count, err));
    W2L_TRY(buf_bytes(&o->file, o->block.data, o->block.len, err));
    W2L_TRY(w2l_buf_append(&o->file, o->sync, 16, err));
    o->block.len = 0;
    o->block_count = 0;
    return W2L_OK;
}

w2l_rc w2l__avro_out_append(w2l__avro_out *o, w2l_error *err)
{
    size_t size = 0;
    if (avro_value_sizeof(&o->value, &size) != 0) return avro_fail(err, W2L_ERROR, "record size");
    W2L_TRY(w2l__buf_reserve(&o->block, size, err));
    avro_writer_t w = avro_writer_memory((const char *)o->block.data + o->block.len, (int64_t)size);
    W2L_NOMEM_IF(!w, err);
    int rc = avro_value_write(w, &o->value);
    avro_writer_free(w);
    if (rc != 0) return avro_fail(err, W2L_ERROR, "encode record");
    o->block.len += size;
    if (++o->block_count >= BLOCK_RECORDS) return flush_block(o, err);
    return W2L_OK;
}

/* path written whole and held unclosed in b. */
static w2l_rc write_pending(w2l_fileio *io, w2l__file_batch *b, const char *path,
                            const void *data, size_t len, w2l_error *err)
{
    w2l_file *f;
    W2L_TRY(w2l__fileio_write_unclosed(io, path, W2L_CREATE_EXCL, data, len, &f, err));
    return w2l__file_batch_add(b, f, err);
}

w2l_rc w2l__avro_out_finish(w2l__avro_out *o, w2l_fileio *io, w2l__file_batch *pend,
                            const char *path, int64_t *length, w2l_error *err)
{
    W2L_TRY(flush_block(o, err));
    w2l_rc rc = pend ? write_pending(io, pend, path, o->file.data, o->file.len, err)
                     : w2l_fileio_write_all(io, path, W2L_CREATE_EXCL, o->file.data,
                                            o->file.len, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "%s: ", path);
        return rc;
    }
    if (length) *length = (int64_t)o->file.len;
    return W2L_OK;
}

void w2l__avro_out_free(w2l__avro_out *o)
{
    if (o->have_value) avro_value_decref(&o->value);
    if (o->iface) avro_value_iface_decref(o->iface);
    if (o->schema) avro_schema_decref(o->schema);
    w2l_buf_release(&o->file);
    w2l_buf_release(&o->block);
    memset(o, 0, sizeof *o);
}

/* ---- reading ---- */

static int get_long(const unsigned char *p, size_t len, size_t *pos, int64_t *out)
{
    uint64_t z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= len) return -1;
        unsigned char c = p[(*pos)++];
        z |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            return 0;
        }
    }
    return -1;
}

static w2l_rc parse_header(w2l__avro_in *in, const char *path, w2l_error *err)
{
    const unsigned char *p = in->data;
    size_t pos = 4, cap = 0;
    if (in->len < 4 || memcmp(p, "Obj\1", 4) != 0)
        return w2l__fail(err, W2L_CORRUPT, "%s: not an Avro container file", path);
    for (;;) {
        int64_t count;
        if (get_long(p, in->len, &pos, &count) != 0) goto bad;
        if (count == 0) break;
        if (count < 0) {
            int64_t skip;
            if (get_long(p, in->len, &pos, &skip) != 0) goto bad;
            count = -count;
        }
        for (int64_t i = 0; i < count; i++) {
            int64_t kl, vl;
            if (get_long(p, in->len, &pos, &kl) != 0 || kl < 0 || (uint64_t)kl > in->len - pos)
                goto bad;
            const char *k = (const char *)p + pos;
            pos += (size_t)kl;
            if (get_long(p, in->len, &pos, &vl) != 0 || vl < 0 || (uint64_t)vl > in->len - pos)
                goto bad;
            const char *v = (const char *)p + pos;
            pos += (size_t)vl;
            if (in->nmeta == cap) {
                cap = cap ? cap * 2 : 8;
                w2l__ice_kv *n = w2l__realloc(in->meta, cap * sizeof *n);
                W2L_NOMEM_IF(!n, err);
                in->meta = n;
            }
            w2l__ice_kv *kv = &in->meta[in->nmeta];
            kv->key = w2l__strndup(k, (size_t)kl);
            kv->value = w2l__strndup(v, (size_t)vl);
            if (!kv->key || !kv->value) {
                w2l__free(kv->key);
                w2l__free(kv->value);
                return w2l__fail(err, W2L_NOMEM, "out of memory");
            }
            in->nmeta++;
        }
    }
    in->pos = pos;
    return W2L_OK;
bad:
    return w2l__fail(err, W2L_CORRUPT, "%s: truncated Avro header", path);
}

w2l_rc w2l__avro_in_open(w2l__avro_in *in, w2l_fileio *io, const char *path, w2l_error *err)
{
    memset(in, 0, sizeof *in);
    w2l_rc rc = w2l_fileio_read_all(io, path, &in->data, &in->len, err);
    if (rc != W2L_OK) return rc;
    W2L_TRY(parse_header(in, path, err));
    const char *codec = w2l__avro_in_meta(in, "avro.codec");
    const char *json = w2l__avro_in_meta(in, "avro.schema");
    if (json && (!codec || strcmp(codec, "null") == 0)) {
        /* uncompressed (what w2l writes): blocks decoded here with the cached schema, no
         * second parse of the header */
        if (in->len - in->pos < 16)
            return w2l__fail(err, W2L_CORRUPT, "%s: truncated Avro header", path);
        memcpy(in->sync, (const unsigned char *)in->data + in->pos, 16);
        in->pos += 16;
        W2L_TRY(schema_get(json, strlen(json), &in->schema, &in->iface, err));
        in->mem = avro_reader_memory("", 0);
        in->path = w2l__strdup(path);
        W2L_NOMEM_IF(!in->mem || !in->path, err);
    } else {
        in->fp = fmemopen(in->data, in->len, "rb");
        if (!in->fp)
            return w2l__fail_errno(err, errno == ENOMEM ? W2L_NOMEM : W2L_IO, errno,
                                   "%s: fmemopen", path);
        if (avro_file_reader_fp(in->fp, path, 0, &in->reader) != 0)
            return w2l__fail(err, W2L_CORRUPT, "%s: %s", path, avro_strerror());
        in->have_reader = 1;
        in->schema = avro_file_reader_get_writer_schema(in->reader);
        in->iface = avro_generic_class_from_schema(in->schema);
        if (!in->iface) return w2l__fail(err, W2L_CORRUPT, "%s: %s", path, avro_strerror());
    }
    if (avro_generic_value_new(in->iface, &in->value) != 0) return avro_fail(err, W2L_NOMEM, path);
    in->have_value = 1;
    return W2L_OK;
}

/* The next record of an uncompressed file: 1, 0 at the end, -1 on a malformed block. */
static int next_own(w2l__avro_in *in, w2l_error *err)
{
    const unsigned char *p = in->data;
    while (in->left == 0) {
        if (in->block_end) { /* the block's sync marker */
            if (in->pos != in->block_end || in->len - in->pos < 16 ||
                memcmp(p + in->pos, in->sync, 16) != 0)
                goto bad;
            in->pos += 16;
            in->block_end = 0;
        }
        if (in->pos == in->len) return 0;
        int64_t count, size;
        if (get_long(p, in->len, &in->pos, &count) != 0 || count < 0 ||
            get_long(p, in->len, &in->pos, &size) != 0 || size < 0 ||
            (uint64_t)size > in->len - in->pos)
            goto bad;
        avro_reader_memory_set_source(in->mem, (const char *)p + in->pos, size);
        in->pos += (size_t)size;
        in->block_end = in->pos;
        in->left = count;
    }
    if (avro_value_read(in->mem, &in->value) != 0) {
        w2l__fail(err, W2L_CORRUPT, "avro: %s: read record: %s", in->path, avro_strerror());
        return -1;
    }
    in->left--;
    return 1;
bad:
    w2l__fail(err, W2L_CORRUPT, "avro: %s: malformed data block", in->path);
    return -1;
}

int w2l__avro_in_next(w2l__avro_in *in, avro_value_t **rec, w2l_error *err)
{
    avro_value_reset(&in->value);
    if (in->mem) {
        int r = next_own(in, err);
        if (r == 1) *rec = &in->value;
        return r;
    }
    int rc = avro_file_reader_read_value(in->reader, &in->value);
    if (rc == EOF) return 0;
    if (rc != 0) {
        w2l__fail(err, W2L_CORRUPT, "avro: read record: %s", avro_strerror());
        return -1;
    }
    *rec = &in->value;
    return 1;
}

const char *w2l__avro_in_meta(const w2l__avro_in *in, const char *key)
{
    for (size_t i = 0; i < in->nmeta; i++)
        if (strcmp(in->meta[i].key, key) == 0) return in->meta[i].value;
    return NULL;
}

void w2l__avro_in_close(w2l__avro_in *in)
{
    if (in->have_value) avro_value_decref(&in->value);
    if (in->iface) avro_value_iface_decref(in->iface);
    if (in->schema) avro_schema_decref(in->schema); /* get_writer_schema took a reference */
    if (in->have_reader) avro_file_reader_close(in->reader);
    if (in->mem) avro_reader_free(in->mem);
    w2l__free(in->path);
    if (in->fp) fclose(in->fp);
    for (size_t i = 0; i < in->nmeta; i++) {
        w2l__free(in->meta[i].key);
        w2l__free(in->meta[i].value);
    }
    w2l__free(in->meta);
    w2l__free(in->data);
    memset(in, 0, sizeof *in);
}

/* ---- field helpers ---- */

int w2l__avro_get(avro_value_t *rec, const char *name, avro_value_t *out)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) != 0) return 0;
    if (avro_value_get_type(&f) == AVRO_UNION) {
        avro_value_t b;
        if (avro_value_get_current_branch(&f, &b) != 0) return 0;
        if (avro_value_get_type(&b) == AVRO_NULL) return 0;
        *out = b;
        return 1;
    }
    if (avro_value_get_type(&f) == AVRO_NULL) return 0;
    *out = f;
    return 1;
}

int w2l__avro_set(avro_value_t *rec, const char *name, avro_value_t *out)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) != 0) return -1;
    if (avro_value_get_type(&f) == AVRO_UNION) {
        /* optional fields are ["null", T]: branch 1 */
        return avro_value_set_branch(&f, 1, out) == 0 ? 0 : -1;
    }
    *out = f;
    return 0;
}

void w2l__avro_set_null(avro_value_t *rec, const char *name)
{
    avro_value_t f, b;
    if (avro_value_get_by_name(rec, name, &f, NULL) != 0) return;
    if (avro_value_get_type(&f) == AVRO_UNION) avro_value_set_branch(&f, 0, &b);
}

int64_t w2l__avro_int(avro_value_t *v)
{
    int32_t i;
    int64_t l;
    switch (avro_value_get_type(v)) {
    case AVRO_INT32: avro_value_get_int(v, &i); return i;
    case AVRO_INT64: avro_value_get_long(v, &l); return l;
    default: return 0;
    }
}
