/*
 * "s3" file IO: the lake on S3 or an S3-compatible store, paths "s3://BUCKET/KEY".
 *
 * Writing: a file is held in memory up to s3.multipart-threshold and published by one PUT
 * at close(); past the threshold it becomes a multipart upload of s3.part-size parts, sent
 * as they fill by s3.upload-concurrency uploader threads of the file (as many parts at most
 * queued or travelling, so memory stays bounded while the writer goes on), completed at
 * close() and aborted by abort() or a failure. Either way the
 * object appears whole or not at all. W2L_CREATE_EXCL (and a create without flags) sends
 * If-None-Match: * so that a store with conditional writes refuses to overwrite; stores
 * without them overwrite, which the table layout never needs (every name it creates is new).
 *
 * Reading: open_read() asks the size (HEAD); pread() is a ranged GET, widened to 256 KiB
 * and kept, so a Parquet footer and its length cost one request.
 *
 * Directories do not exist on S3: list() names the first segments of the keys under KEY/,
 * list_tree() lists them whole (with sizes and times), and a directory exists when an
 * object has its prefix. See w2l-s3(7).
 */
#include <stdio.h>

#include "s3.h"
#include "../common/thread.h"

#define READ_WINDOW (256u << 10)

typedef struct s3_io {
    w2l_fileio base;
    w2l__s3 *s3;
} s3_io;

#define MAX_UPLOADERS 64

typedef struct s3_part {
    unsigned char *data;
    size_t len;
    int number;
} s3_part;

typedef struct s3_file {
    w2l_file base;
    s3_io *io;
    char *bucket, *key;
    unsigned flags;
    w2l_buf buf;
    char *upload_id;
    /* multipart: parts go to uploader threads of the file (s3.upload-concurrency), so the
     * writer goes on while parts travel; at most that many parts are queued or travelling.
     * etags, nparts, queue, busy, stop and the uploaders' rc under mtx */
    char (*etags)[128];
    int nparts, cap;
    thrd_t uploaders[MAX_UPLOADERS];
    int nuploaders, stop, busy;
    mtx_t mtx;
    cnd_t cnd;
    s3_part queue[MAX_UPLOADERS];
    int nqueued;
    w2l_rc up_rc;
    w2l_error up_err;
} s3_file;

typedef struct s3_rfile {
    w2l_rfile base;
    s3_io *io;
    char *bucket, *key;
    uint64_t size;
    mtx_t mtx;
    unsigned char *win; /* cached bytes [win_off, win_off + win_len) */
    uint64_t win_off;
    size_t win_len;
} s3_rfile;

static w2l_rc s3_open_io(const w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                         w2l_error *err)
{
    (void)m;
    return w2l__s3_open(conf, &((s3_io *)self)->s3, err);
}

static void s3_close_io(w2l_fileio *self) { w2l__s3_close(((s3_io *)self)->s3); }

/* ---- writing ---- */

/* Stops the uploaders after the parts queued (or at once when discard) and waits for them. */
static void uploader_stop(s3_file *f, int discard)
{
    if (!f->nuploaders) return;
    mtx_lock(&f->mtx);
    f->stop = 1;
    if (discard) {
        for (int i = 0; i < f->nqueued; i++) w2l__free(f->queue[i].data);
        f->nqueued = 0;
    }
    cnd_broadcast(&f->cnd);
    mtx_unlock(&f->mtx);
    for (int i = 0; i < f->nuploaders; i++) thrd_join(f->uploaders[i], NULL);
    f->nuploaders = 0;
}

static void file_free(s3_file *f)
{
    uploader_stop(f, 1);
    if (f->upload_id) {
        mtx_destroy(&f->mtx);
        cnd_destroy(&f->cnd);
    }
    w2l__free(f->bucket);
    w2l__free(f->key);
    w2l_buf_release(&f->buf);
    w2l__free(f->upload_id);
    w2l__free(f->etags);
    w2l__free(f);
}

static int upload_loop(void *arg)
{
    s3_file *f = arg;
    mtx_lock(&f->mtx);
    for (;;) {
        while (f->nqueued == 0 && !f->stop) cnd_wait(&f->cnd, &f->mtx);
        if (f->nqueued == 0) break;
        s3_part p = f->queue[0];
        memmove(f->queue, f->queue + 1, (size_t)--f->nqueued * sizeof *f->queue);
        f->busy++;
        int failed = f->up_rc != W2L_OK;
        mtx_unlock(&f->mtx);
        char etag[128];
        w2l_error e = { 0 };
        w2l_rc rc = failed ? W2L_OK
                           : w2l__s3_mpu_part(f->io->s3, f->bucket, f->key, f->upload_id,
                                              p.number, p.data, p.len, etag, &e);
        w2l__free(p.data);
        mtx_lock(&f->mtx);
        if (!failed && rc == W2L_OK) memcpy(f->etags[p.number - 1], etag, sizeof etag);
        if (!failed && rc != W2L_OK) {
            f->up_rc = rc;
            f->up_err = e;
        }
        f->busy--;
        cnd_broadcast(&f->cnd);
    }
    mtx_unlock(&f->mtx);
    return 0;
}

/* Starts the multipart upload and its uploaders. */
static w2l_rc multipart_start(s3_file *f, w2l_error *err)
{
    W2L_TRY(w2l__s3_mpu_create(f->io->s3, f->bucket, f->key, &f->upload_id, err));
    int n = W2L_MIN(w2l__s3_upload_concurrency(f->io->s3), MAX_UPLOADERS);
    int ok = mtx_init(&f->mtx, mtx_plain) == thrd_success;
    if (ok && cnd_init(&f->cnd) != thrd_success) {
        mtx_destroy(&f->mtx);
        ok = 0;
    }
    while (ok && f->nuploaders < n &&
           thrd_create(&f->uploaders[f->nuploaders], upload_loop, f) == thrd_success)
        f->nuploaders++;
    if (ok && f->nuploaders > 0) return W2L_OK; /* fewer threads than asked still work */
    if (ok) {
        mtx_destroy(&f->mtx);
        cnd_destroy(&f->cnd);
    }
    w2l__s3_mpu_abort(f->io->s3, f->bucket, f->key, f->upload_id);
    w2l__free(f->upload_id);
    f->upload_id = NULL;
    return w2l__fail(err, W2L_NOMEM, "s3://%s/%s: cannot start an uploader thread", f->bucket,
                     f->key);
}

/* Queues a copy of p[0..n) as the next part; blocks while as many parts as there are
 * uploaders are queued or travelling. An uploader's failure, if any, is returned here (and
 * by close). */
static w2l_rc send_part(s3_file *f, const unsigned char *p, size_t n, w2l_error *err)
{
    unsigned char *copy = w2l__malloc(n ? n : 1);
    W2L_NOMEM_IF(!copy, err);
    memcpy(copy, p, n);
    w2l_rc rc = W2L_OK;
    mtx_lock(&f->mtx);
    while (f->nqueued + f->busy >= f->nuploaders && f->up_rc == W2L_OK)
        cnd_wait(&f->cnd, &f->mtx);
    if (f->up_rc != W2L_OK) {
        rc = f->up_rc;
        *err = f->up_err;
    } else if (f->nparts == 10000) {
        rc = w2l__fail(err, W2L_IO, "s3://%s/%s: more than 10,000 parts; raise s3.part-size",
                       f->bucket, f->key);
    } else if (f->nparts == f->cap) {
        int cap = f->cap ? f->cap * 2 : 16;
        void *e = w2l__realloc(f->etags, (size_t)cap * sizeof *f->etags);
        if (e) {
            f->etags = e;
            f->cap = cap;
        } else {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    }
    if (rc == W2L_OK) {
        f->queue[f->nqueued++] = (s3_part){ copy, n, ++f->nparts };
        copy = NULL;
        cnd_broadcast(&f->cnd);
    }
    mtx_unlock(&f->mtx);
    w2l__free(copy);
    return rc;
}

/* Waits until every queued part is uploaded; the uploader's failure if any. */
static w2l_rc parts_drain(s3_file *f, w2l_error *err)
{
    mtx_lock(&f->mtx);
    while ((f->nqueued || f->busy) && f->up_rc == W2L_OK) cnd_wait(&f->cnd, &f->mtx);
    w2l_rc rc = f->up_rc;
    if (rc != W2L_OK) *err = f->up_err;
    mtx_unlock(&f->mtx);
    return rc;
}

static w2l_rc sf_write(w2l_file *base, const void *buf, size_t len, w2l_error *err)
{
    s3_file *f = (s3_file *)base;
    W2L_TRY(w2l_buf_append(&f->buf, buf, len, err));
    w2l__s3 *s3 = f->io->s3;
    if (!f->upload_id && f->buf.len > w2l__s3_multipart_threshold(s3))
        W2L_TRY(multipart_start(f, err));
    if (!f->upload_id) return W2L_OK;
    size_t part = (size_t)w2l__s3_part_size(s3), at = 0;
    w2l_rc rc = W2L_OK;
    while (rc == W2L_OK && f->buf.len - at >= part) {
        rc = send_part(f, f->buf.data + at, part, err);
        at += part;
    }
    memmove(f->buf.data, f->buf.data + at, f->buf.len - at);
    f->buf.len -= at;
    return rc;
}

static void sf_abort(w2l_file *base)
{
    s3_file *f = (s3_file *)base;
    uploader_stop(f, 1);
    if (f->upload_id) w2l__s3_mpu_abort(f->io->s3, f->bucket, f->key, f->upload_id);
    file_free(f);
}

static w2l_rc sf_close(w2l_file *base, w2l_error *err)
{
    s3_file *f = (s3_file *)base;
    unsigned cond = (f->flags & W2L_CREATE_REPLACE) ? 0 : W2L__S3_IF_NONE_MATCH;
    w2l_rc rc;
    if (!f->upload_id) {
        rc = w2l__s3_put(f->io->s3, f->bucket, f->key, f->buf.data, f->buf.len, cond, err);
    } else {
        rc = f->buf.len ? send_part(f, f->buf.data, f->buf.len, err) : W2L_OK;
        if (rc == W2L_OK) rc = parts_drain(f, err);
        uploader_stop(f, 1);
        if (rc == W2L_OK)
            rc = w2l__s3_mpu_complete(f->io->s3, f->bucket, f->key, f->upload_id, f->etags,
                                      f->nparts, cond, err);
        if (rc != W2L_OK) {
            sf_abort(base);
            return rc;
        }
    }
    file_free(f);
    return rc;
}

static const w2l_file_methods s3_file_methods = {
    .version = W2L_FILEIO_METHODS_V1,
    .write = sf_write,
    .close = sf_close,
    .abort = sf_abort,
};

static w2l_rc s3_create(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                        w2l_error *err)
{
    s3_io *io = (s3_io *)self;
    s3_file *f = w2l__calloc(1, sizeof *f);
    W2L_NOMEM_IF(!f, err);
    f->base.methods = &s3_file_methods;
    f->io = io;
    f->flags = flags;
    w2l_rc rc = w2l__s3_split(path, &f->bucket, &f->key, err);
    if (rc == W2L_OK && !*f->key)
        rc = w2l__fail(err, W2L_MISUSE, "create %s: no object key", path);
    if (rc == W2L_OK && !(flags & (W2L_CREATE_EXCL | W2L_CREATE_REPLACE))) {
        w2l__s3_obj o;
        rc = w2l__s3_head(io->s3, f->bucket, f->key, &o, err);
        rc = rc == W2L_NOTFOUND ? W2L_OK
             : rc == W2L_OK     ? w2l__fail(err, W2L_EXISTS, "create %s: exists already", path)
                                : rc;
    }
    if (rc != W2L_OK) {
        file_free(f);
        return rc;
    }
    *out = &f->base;
    return W2L_OK;
}

/* ---- reading ---- */

static w2l_rc sr_pread(w2l_rfile *base, void *buf, size_t len, uint64_t off, w2l_error *err)
{
    s3_rfile *r = (s3_rfile *)base;
    if (off > r->size || len > r->size - off)
        return w2l__fail(err, W2L_CORRUPT, "s3://%s/%s: short read (%zu bytes at %llu of a "
                         "%llu-byte object)", r->bucket, r->key, len, (unsigned long long)off,
                         (unsigned long long)r->size);
    w2l__s3 *s3 = r->io->s3;
    if (len >= READ_WINDOW) return w2l__s3_get(s3, r->bucket, r->key, off, len, buf, err);
    mtx_lock(&r->mtx);
    w2l_rc rc = W2L_OK;
    if (!(r->win && off >= r->win_off && off + len <= r->win_off + r->win_len)) {
        /* a window that holds the read; near the end, the object's tail (footers) */
        uint64_t start = off;
        if (r->size - off < READ_WINDOW) start = r->size > READ_WINDOW ? r->size - READ_WINDOW : 0;
        size_t n = (size_t)W2L_MIN((uint64_t)READ_WINDOW, r->size - start);
        if (!r->win) r->win = w2l__malloc(READ_WINDOW);
        if (!r->win) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        r->win_len = 0;
        if (rc == W2L_OK) rc = w2l__s3_get(s3, r->bucket, r->key, start, n, r->win, err);
        if (rc == W2L_OK) {
            r->win_off = start;
            r->win_len = n;
        }
    }
    if (rc == W2L_OK) memcpy(buf, r->win + (off - r->win_off), len);
    mtx_unlock(&r->mtx);
    return rc;
}

static uint64_t sr_size(w2l_rfile *base) { return ((s3_rfile *)base)->size; }

static void sr_close(w2l_rfile *base)
{
    s3_rfile *r = (s3_rfile *)base;
    mtx_destroy(&r->mtx);
    w2l__free(r->win);
    w2l__free(r->bucket);
    w2l__free(r->key);
    w2l__free(r);
}

static const w2l_rfile_methods s3_rfile_methods = {
    .version = W2L_FILEIO_METHODS_V1,
    .pread = sr_pread,
    .size = sr_size,
    .close = sr_close,
};

static w2l_rc s3_open_read(w2l_fileio *self, const char *path, w2l_rfile **out,
                           w2l_error *err)
{
    s3_io *io = (s3_io *)self;
    s3_rfile *r = w2l__calloc(1, sizeof *r);
    W2L_NOMEM_IF(!r, err);
    if (mtx_init(&r->mtx, mtx_plain) != thrd_success) {
        w2l__free(r);
        return w2l__fail(err, W2L_NOMEM, "mtx_init failed");
    }
    r->base.methods = &s3_rfile_methods;
    r->io = io;
    w2l__s3_obj o;
    w2l_rc rc = w2l__s3_split(path, &r->bucket, &r->key, err);
    if (rc == W2L_OK) rc = w2l__s3_head(io->s3, r->bucket, r->key, &o, err);
    if (rc != W2L_OK) {
        sr_close(&r->base);
        return rc;
    }
    r->size = o.size;
    *out = &r->base;
    return W2L_OK;
}

/* ---- names ---- */

static w2l_rc s3_remove(w2l_fileio *self, const char *path, w2l_error *err)
{
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(path, &bucket, &key, err));
    w2l_rc rc = *key ? w2l__s3_delete(((s3_io *)self)->s3, bucket, key, err) : W2L_OK;
    w2l__free(bucket);
    w2l__free(key);
    return rc;
}

static w2l_rc s3_remove_many(w2l_fileio *self, const char *const *paths, size_t n,
                             w2l_error *err)
{
    s3_io *io = (s3_io *)self;
    const char **keys = w2l__calloc(n ? n : 1, sizeof *keys);
    char **owned = w2l__calloc(n ? n : 1, sizeof *owned);
    char *bucket = NULL;
    size_t nk = 0;
    w2l_rc rc = keys && owned ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    /* runs of paths in one bucket go as one DeleteObjects request per 1,000 keys */
    for (size_t i = 0; rc == W2L_OK && i <= n; i++) {
        char *b = NULL, *k = NULL;
        if (i < n) rc = w2l__s3_split(paths[i], &b, &k, err);
        if (rc != W2L_OK) break;
        if (bucket && (i == n || strcmp(b, bucket) != 0)) {
            rc = w2l__s3_delete_many(io->s3, bucket, keys, nk, err);
            for (size_t j = 0; j < nk; j++) w2l__free(owned[j]);
            nk = 0;
            w2l__free(bucket);
            bucket = NULL;
        }
        if (i == n || rc != W2L_OK) {
            w2l__free(b);
            w2l__free(k);
            continue;
        }
        if (!bucket) bucket = b;
        else w2l__free(b);
        if (*k) keys[nk] = owned[nk] = k, nk++;
        else w2l__free(k);
    }
    for (size_t j = 0; j < nk; j++) w2l__free(owned[j]);
    w2l__free(bucket);
    w2l__free(keys);
    w2l__free(owned);
    return rc;
}

static int first_any(void *ctx, const char *key, const w2l__s3_obj *obj)
{
    (void)key, (void)obj;
    *(int *)ctx = 1;
    return 1;
}

static w2l_rc s3_exists(w2l_fileio *self, const char *path, int *out, w2l_error *err)
{
    s3_io *io = (s3_io *)self;
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(path, &bucket, &key, err));
    w2l_rc rc = W2L_NOTFOUND;
    if (*key) {
        w2l__s3_obj o;
        rc = w2l__s3_head(io->s3, bucket, key, &o, err);
        *out = rc == W2L_OK;
    }
    if (rc == W2L_NOTFOUND) {
        /* a "directory": any object under KEY/ (for the bucket itself: the bucket lists) */
        char *prefix = *key ? w2l__asprintf("%s/", key) : w2l__strdup("");
        rc = prefix ? w2l__s3_list(io->s3, bucket, prefix, NULL, first_any, out, err)
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK && !*key) *out = 1;
        if (rc == W2L_NOTFOUND) rc = W2L_OK; /* no such bucket */
        w2l__free(prefix);
    }
    w2l__free(bucket);
    w2l__free(key);
    return rc;
}

typedef struct list_ctx {
    size_t skip; /* length of the listed prefix */
    int (*fn)(void *ctx, const char *name);
    int (*tree_fn)(void *ctx, const char *relpath, const w2l_file_stat *st);
    void *ctx;
    w2l_buf last; /* the child named last: keys come sorted, so a child's keys are adjacent */
    int oom;
} list_ctx;

/* One entry of a directory: the first path segment below it, once. Listing without a
 * delimiter costs a listing of the subtree but is exact on every store (some test servers
 * omit common prefixes nested deeper than one level). */
static int list_one(void *ctx, const char *key, const w2l__s3_obj *obj)
{
    (void)obj;
    list_ctx *l = ctx;
    const char *name = key + l->skip;
    size_t n = strcspn(name, "/");
    if (n == 0) return 0; /* a "dir/" marker object */
    if (l->last.len == n && memcmp(l->last.data, name, n) == 0) return 0;
    w2l_error e;
    l->last.len = 0;
    if (w2l_buf_append(&l->last, name, n, &e) != W2L_OK || w2l__buf_cstr(&l->last, &e) != W2L_OK)
        return l->oom = 1;
    return l->fn(l->ctx, (const char *)l->last.data);
}

static int tree_one(void *ctx, const char *key, const w2l__s3_obj *obj)
{
    list_ctx *l = ctx;
    const char *rel = key + l->skip;
    if (!*rel || rel[strlen(rel) - 1] == '/') return 0; /* directory markers */
    w2l_file_stat st = { .size = obj->size, .mtime_ms = obj->mtime_ms };
    return l->tree_fn(l->ctx, rel, &st);
}

static w2l_rc list_under(s3_io *io, const char *dir, list_ctx *l, w2l_error *err)
{
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(dir, &bucket, &key, err));
    size_t kl = strlen(key);
    while (kl > 0 && key[kl - 1] == '/') key[--kl] = '\0';
    char *prefix = kl ? w2l__asprintf("%s/", key) : w2l__strdup("");
    w2l_rc rc = W2L_OK;
    if (!prefix) {
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    } else {
        l->skip = strlen(prefix);
        rc = w2l__s3_list(io->s3, bucket, prefix, NULL, l->fn ? list_one : tree_one, l, err);
        if (rc == W2L_OK && l->oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l_buf_release(&l->last);
    w2l__free(prefix);
    w2l__free(bucket);
    w2l__free(key);
    return rc;
}

static w2l_rc s3_list(w2l_fileio *self, const char *dir, int (*fn)(void *, const char *),
                      void *ctx, w2l_error *err)
{
    list_ctx l = { .fn = fn, .ctx = ctx };
    return list_under((s3_io *)self, dir, &l, err);
}

static w2l_rc s3_list_tree(w2l_fileio *self, const char *dir,
                           int (*fn)(void *, const char *, const w2l_file_stat *), void *ctx,
                           w2l_error *err)
{
    list_ctx l = { .tree_fn = fn, .ctx = ctx };
    return list_under((s3_io *)self, dir, &l, err);
}

static w2l_rc s3_stat(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err)
{
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(path, &bucket, &key, err));
    w2l__s3_obj o;
    w2l_rc rc = w2l__s3_head(((s3_io *)self)->s3, bucket, key, &o, err);
    if (rc == W2L_OK) {
        out->size = o.size;
        out->mtime_ms = o.mtime_ms;
    }
    w2l__free(bucket);
    w2l__free(key);
    return rc;
}

/* ---- conditional writes (the state store's lease) ---- */

static w2l_rc s3_get_tagged(w2l_fileio *self, const char *path, void **data, size_t *len,
                            char tag[128], w2l_error *err)
{
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(path, &bucket, &key, err));
    w2l_buf b = { 0 };
    w2l_rc rc = w2l__s3_get_all(((s3_io *)self)->s3, bucket, key, &b, tag, err);
    w2l__free(bucket);
    w2l__free(key);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return rc;
    }
    *data = b.data;
    *len = b.len;
    return W2L_OK;
}

static w2l_rc s3_put_if(w2l_fileio *self, const char *path, const void *data, size_t len,
                        const char *if_tag, w2l_error *err)
{
    char *bucket, *key;
    W2L_TRY(w2l__s3_split(path, &bucket, &key, err));
    w2l_rc rc = w2l__s3_put_if(((s3_io *)self)->s3, bucket, key, data, len, if_tag, err);
    w2l__free(bucket);
    w2l__free(key);
    return rc;
}

const w2l_fileio_methods w2l__fileio_s3 = {
    .version = W2L_FILEIO_METHODS_V5,
    .name = "s3",
    .size = sizeof(s3_io),
    .open = s3_open_io,
    .create = s3_create,
    .open_read = s3_open_read,
    .remove = s3_remove,
    .exists = s3_exists,
    .list = s3_list,
    .close = s3_close_io,
    .stat = s3_stat,
    .remove_many = s3_remove_many,
    .list_tree = s3_list_tree,
    .get_tagged = s3_get_tagged,
    .put_if = s3_put_if,
};
