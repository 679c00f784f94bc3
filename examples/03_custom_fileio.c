/*
 * 03_custom_fileio: a file IO shim (w2l_fileio_methods(3)) that wraps the built-in "local"
 * one and counts bytes per file — the pattern for tracing, quotas or encryption. Everything
 * the library writes (data files, manifests, metadata, state) goes through such a table.
 *
 *   03_custom_fileio DIR
 */
#include <stdio.h>
#include <string.h>

#include <w2l.h>

typedef struct counting_io {
    w2l_fileio base;
    w2l_fileio *parent;
    unsigned long long bytes;
} counting_io;

typedef struct counting_file {
    w2l_file base;
    counting_io *io;
    w2l_file *inner;
} counting_file;

static w2l_rc cf_write(w2l_file *f, const void *buf, size_t len, w2l_error *err)
{
    counting_file *cf = (counting_file *)f;
    w2l_rc rc = w2l_file_write(cf->inner, buf, len, err);
    if (rc == W2L_OK) cf->io->bytes += len;
    return rc;
}

static w2l_rc cf_close(w2l_file *f, w2l_error *err)
{
    counting_file *cf = (counting_file *)f;
    w2l_rc rc = w2l_file_close(cf->inner, err);
    w2l_free(cf);
    return rc;
}

static void cf_abort(w2l_file *f)
{
    counting_file *cf = (counting_file *)f;
    w2l_file_abort(cf->inner);
    w2l_free(cf);
}

static const w2l_file_methods counting_file_methods = {
    .version = W2L_FILEIO_METHODS_V1, .write = cf_write, .close = cf_close, .abort = cf_abort,
};

static w2l_rc c_open(const w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                     w2l_error *err)
{
    (void)m;
    return w2l_fileio_open("local", conf, &((counting_io *)self)->parent, err);
}

static w2l_rc c_create(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                       w2l_error *err)
{
    counting_io *io = (counting_io *)self;
    counting_file *f = w2l_malloc(sizeof *f);
    if (!f) return w2l_error_set(err, W2L_NOMEM, "create %s: out of memory", path);
    w2l_rc rc = w2l_fileio_create(io->parent, path, flags, &f->inner, err);
    if (rc != W2L_OK) {
        w2l_free(f);
        return rc;
    }
    f->base.methods = &counting_file_methods;
    f->io = io;
    *out = &f->base;
    return W2L_OK;
}

/* Reads, removal, existence and listing are forwarded unchanged. */
static w2l_rc c_open_read(w2l_fileio *self, const char *path, w2l_rfile **out, w2l_error *err)
{
    return w2l_fileio_open_read(((counting_io *)self)->parent, path, out, err);
}
static w2l_rc c_remove(w2l_fileio *self, const char *path, w2l_error *err)
{
    return w2l_fileio_remove(((counting_io *)self)->parent, path, err);
}
static w2l_rc c_exists(w2l_fileio *self, const char *path, int *out, w2l_error *err)
{
    return w2l_fileio_exists(((counting_io *)self)->parent, path, out, err);
}
static w2l_rc c_list(w2l_fileio *self, const char *dir, int (*fn)(void *, const char *), void *ctx,
                     w2l_error *err)
{
    return w2l_fileio_list(((counting_io *)self)->parent, dir, fn, ctx, err);
}
static void c_close(w2l_fileio *self) { w2l_fileio_close(((counting_io *)self)->parent); }
static w2l_rc c_stat(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err)
{
    return w2l_fileio_stat(((counting_io *)self)->parent, path, out, err);
}

static const w2l_fileio_methods counting_methods = {
    .version = W2L_FILEIO_METHODS_V2,
    .name = "counting",
    .size = sizeof(counting_io),
    .open = c_open,
    .create = c_create,
    .open_read = c_open_read,
    .remove = c_remove,
    .exists = c_exists,
    .list = c_list,
    .close = c_close,
    .stat = c_stat,
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: 03_custom_fileio DIR\n");
        return 2;
    }
    w2l_error err;
    w2l_fileio *io = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/ns/t/metadata/v1.metadata.json", argv[1]);
    const char *doc = "{\"format-version\":2}";
    if (w2l_global_init(&err) != W2L_OK || w2l_fileio_register(&counting_methods, 0) != W2L_OK ||
        w2l_fileio_open("counting", NULL, &io, &err) != W2L_OK ||
        w2l_fileio_write_all(io, path, W2L_CREATE_EXCL, doc, strlen(doc), &err) != W2L_OK) {
        fprintf(stderr, "03_custom_fileio: %s\n", err.msg);
        return 1;
    }
    /* the same path again: EXCL refuses to overwrite, with the path in the message */
    w2l_rc rc = w2l_fileio_write_all(io, path, W2L_CREATE_EXCL, doc, strlen(doc), &err);
    printf("second create: %s (%s)\n", w2l_rc_name(rc), err.msg);
    unsigned long long bytes = ((counting_io *)io)->bytes;
    printf("wrote %llu bytes through the shim\n", bytes);
    w2l_fileio_close(io);
    w2l_global_cleanup();
    return rc == W2L_EXISTS && bytes == 2 * strlen(doc) ? 0 : 1;
}
