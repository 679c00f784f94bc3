/*
 * "mem" file IO: files in a process-private map, for tests and for hosts that stage data
 * before shipping it. Same publish semantics as "local": a created file appears on close.
 * Each instance is its own namespace; readers get a snapshot of the bytes.
 */
#include <stdio.h>

#include "io.h"
#include "../common/thread.h"

typedef struct mem_entry {
    char *path;
    unsigned char *data;
    size_t len;
    int64_t mtime_ms;
    struct mem_entry *next;
} mem_entry;

typedef struct mem_io {
    w2l_fileio base;
    mtx_t mtx;
    mem_entry *files;
} mem_io;

typedef struct mem_file {
    w2l_file base;
    mem_io *io;
    unsigned flags;
    char *path;
    w2l_buf buf;
} mem_file;

typedef struct mem_rfile {
    w2l_rfile base;
    unsigned char *data;
    size_t len;
    char *path;
} mem_rfile;

static mem_entry **find(mem_io *io, const char *path)
{
    mem_entry **e = &io->files;
    while (*e && strcmp((*e)->path, path) != 0) e = &(*e)->next;
    return e;
}

static w2l_rc mem_open(const w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                       w2l_error *err)
{
    (void)m, (void)conf;
    mem_io *io = (mem_io *)self;
    if (mtx_init(&io->mtx, mtx_plain) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "mem file IO: mutex init failed");
    return W2L_OK;
}

static void mem_close(w2l_fileio *self)
{
    mem_io *io = (mem_io *)self;
    mem_entry *e = io->files;
    while (e) {
        mem_entry *n = e->next;
        w2l__free(e->path);
        w2l__free(e->data);
        w2l__free(e);
        e = n;
    }
    mtx_destroy(&io->mtx);
}

static w2l_rc mf_write(w2l_file *base, const void *buf, size_t len, w2l_error *err)
{
    mem_file *f = (mem_file *)base;
    w2l_rc rc = w2l_buf_append(&f->buf, buf, len, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "write %s: ", f->path);
    return rc;
}

static void mf_free(mem_file *f)
{
    w2l_buf_release(&f->buf);
    w2l__free(f->path);
    w2l__free(f);
}

static void mf_abort(w2l_file *base) { mf_free((mem_file *)base); }

static w2l_rc mf_close(w2l_file *base, w2l_error *err)
{
    mem_file *f = (mem_file *)base;
    mem_io *io = f->io;
    w2l_rc rc = W2L_OK;
    mtx_lock(&io->mtx);
    mem_entry **slot = find(io, f->path);
    if (*slot && !(f->flags & W2L_CREATE_REPLACE)) {
        rc = w2l__fail(err, W2L_EXISTS, "create %s: file exists", f->path);
    } else if (*slot) {
        w2l__free((*slot)->data);
        (*slot)->data = f->buf.data;
        (*slot)->len = f->buf.len;
        (*slot)->mtime_ms = w2l__now_ms();
        f->buf.data = NULL;
    } else {
        mem_entry *e = w2l__calloc(1, sizeof *e);
        if (!e) {
            rc = w2l__fail(err, W2L_NOMEM, "publish %s: out of memory", f->path);
        } else {
            e->path = f->path;
            e->data = f->buf.data;
            e->len = f->buf.len;
            e->mtime_ms = w2l__now_ms();
            f->path = NULL;
            f->buf.data = NULL;
            *slot = e;
        }
    }
    mtx_unlock(&io->mtx);
    mf_free(f);
    return rc;
}

static const w2l_file_methods mem_file_methods = {
    .version = W2L_FILEIO_METHODS_V1, .write = mf_write, .close = mf_close, .abort = mf_abort,
};

static w2l_rc mem_create(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                         w2l_error *err)
{
    mem_io *io = (mem_io *)self;
    if (!path || !*path) return w2l__fail(err, W2L_MISUSE, "create: empty path");
    if (!(flags & (W2L_CREATE_EXCL | W2L_CREATE_REPLACE))) {
        mtx_lock(&io->mtx);
        int exists = *find(io, path) != NULL;
        mtx_unlock(&io->mtx);
        if (exists) return w2l__fail(err, W2L_EXISTS, "create %s: file exists", path);
    }
    mem_file *f = w2l__calloc(1, sizeof *f);
    W2L_NOMEM_IF(!f, err);
    f->base.methods = &mem_file_methods;
    f->io = io;
    f->flags = flags;
    f->path = w2l__strdup(path);
    if (!f->path) {
        mf_free(f);
        return w2l__fail(err, W2L_NOMEM, "create %s: out of memory", path);
    }
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc mr_pread(w2l_rfile *base, void *buf, size_t len, uint64_t off, w2l_error *err)
{
    mem_rfile *f = (mem_rfile *)base;
    if (off > f->len || len > f->len - off)
        return w2l__fail(err, W2L_CORRUPT,
                         "read %s: %zu bytes at offset %llu past its end (%zu bytes)", f->path, len,
                         (unsigned long long)off, f->len);
    memcpy(buf, f->data + off, len);
    return W2L_OK;
}

static uint64_t mr_size(w2l_rfile *base) { return ((mem_rfile *)base)->len; }

static void mr_close(w2l_rfile *base)
{
    mem_rfile *f = (mem_rfile *)base;
    w2l__free(f->data);
    w2l__free(f->path);
    w2l__free(f);
}

static const w2l_rfile_methods mem_rfile_methods = {
    .version = W2L_FILEIO_METHODS_V1, .pread = mr_pread, .size = mr_size, .close = mr_close,
};

static w2l_rc mem_open_read(w2l_fileio *self, const char *path, w2l_rfile **out,
                            w2l_error *err)
{
    mem_io *io = (mem_io *)self;
    w2l_rc rc = W2L_OK;
    mem_rfile *f = w2l__calloc(1, sizeof *f);
    W2L_NOMEM_IF(!f, err);
    f->base.methods = &mem_rfile_methods;
    mtx_lock(&io->mtx);
    mem_entry *e = *find(io, path);
    if (!e) {
        rc = w2l__fail(err, W2L_NOTFOUND, "open %s: No such file or directory", path);
    } else {
        f->data = w2l__malloc(e->len);
        f->len = e->len;
        f->path = w2l__strdup(path);
        if (!f->data || !f->path) rc = w2l__fail(err, W2L_NOMEM, "open %s: out of memory", path);
        else if (e->len) memcpy(f->data, e->data, e->len);
    }
    mtx_unlock(&io->mtx);
    if (rc != W2L_OK) {
        mr_close(&f->base);
        return rc;
    }
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc mem_remove(w2l_fileio *self, const char *path, w2l_error *err)
{
    (void)err;
    mem_io *io = (mem_io *)self;
    mtx_lock(&io->mtx);
    mem_entry **slot = find(io, path);
    if (*slot) {
        mem_entry *e = *slot;
        *slot = e->next;
        w2l__free(e->path);
        w2l__free(e->data);
        w2l__free(e);
    }
    mtx_unlock(&io->mtx);
    return W2L_OK;
}

/* A directory exists in the mem namespace when some file lies below it. */
static int has_prefix_dir(const char *path, const char *dir, size_t dl)
{
    return strncmp(path, dir, dl) == 0 && path[dl] == '/';
}

static w2l_rc mem_exists(w2l_fileio *self, const char *path, int *out, w2l_error *err)
{
    (void)err;
    mem_io *io = (mem_io *)self;
    size_t pl = strlen(path);
    mtx_lock(&io->mtx);
    *out = 0;
    for (mem_entry *e = io->files; e && !*out; e = e->next)
        *out = strcmp(e->path, path) == 0 || has_prefix_dir(e->path, path, pl);
    mtx_unlock(&io->mtx);
    return W2L_OK;
}

static w2l_rc mem_stat(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err)
{
    mem_io *io = (mem_io *)self;
    w2l_rc rc = W2L_NOTFOUND;
    mtx_lock(&io->mtx);
    for (mem_entry *e = io->files; e; e = e->next)
        if (strcmp(e->path, path) == 0) {
            out->size = e->len;
            out->mtime_ms = e->mtime_ms;
            rc = W2L_OK;
            break;
        }
    mtx_unlock(&io->mtx);
    if (rc != W2L_OK) return w2l__fail(err, rc, "stat %s: no such file", path);
    return W2L_OK;
}

static w2l_rc mem_list(w2l_fileio *self, const char *dir, int (*fn)(void *, const char *),
                       void *ctx, w2l_error *err)
{
    mem_io *io = (mem_io *)self;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    /* collect names first: fn may call back into this IO */
    w2l_buf names = {0};
    size_t count = 0;
    w2l_rc rc = W2L_OK;
    mtx_lock(&io->mtx);
    for (mem_entry *e = io->files; e && rc == W2L_OK; e = e->next) {
        if (!has_prefix_dir(e->path, dir, dl)) continue;
        const char *rest = e->path + dl + 1;
        size_t n = strcspn(rest, "/");
        /* de-duplicate subdirectories */
        int seen = 0;
        for (size_t off = 0, i = 0; i < count && !seen; i++) {
            const char *s = (const char *)names.data + off;
            seen = strlen(s) == n && memcmp(s, rest, n) == 0;
            off += strlen(s) + 1;
        }
        if (seen) continue;
        rc = w2l_buf_append(&names, rest, n, err);
        if (rc == W2L_OK) rc = w2l_buf_append(&names, "", 1, err);
        count++;
    }
    mtx_unlock(&io->mtx);
    for (size_t off = 0, i = 0; rc == W2L_OK && i < count; i++) {
        const char *s = (const char *)names.data + off;
        if (fn(ctx, s)) break;
        off += strlen(s) + 1;
    }
    w2l_buf_release(&names);
    return rc;
}

const w2l_fileio_methods w2l__fileio_mem = {
    .version = W2L_FILEIO_METHODS_V2,
    .name = "mem",
    .size = sizeof(mem_io),
    .open = mem_open,
    .create = mem_create,
    .open_read = mem_open_read,
    .remove = mem_remove,
    .exists = mem_exists,
    .list = mem_list,
    .close = mem_close,
    .stat = mem_stat,
};
