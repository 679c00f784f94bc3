/*
 * File IO plug-in registry and the wrappers through which the core calls every method
 * (the one place for argument checks and tracing, as sqlite3Os* wrappers are).
 */
#include <stdio.h>

#include "io.h"

w2l__registry w2l__fileio_registry;

w2l_rc w2l_fileio_register(const w2l_fileio_methods *m, int make_default)
{
    if (!m || m->version < W2L_FILEIO_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->create || !m->open_read || !m->remove || !m->exists || !m->list || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__fileio_registry, "fileio", m->name, m, make_default);
}

const w2l_fileio_methods *w2l_fileio_find(const char *name)
{
    return w2l__registry_find(&w2l__fileio_registry, name);
}

w2l_rc w2l_fileio_open(const char *name, const w2l_conf *conf, w2l_fileio **out,
                       w2l_error *err)
{
    *out = NULL;
    const w2l_fileio_methods *m = w2l_fileio_find(name);
    if (!m) {
        char known[256];
        w2l__registry_names(&w2l__fileio_registry, known, sizeof known);
        return w2l__fail(err, W2L_CONFIG, "unknown file IO '%s' (known: %s)",
                         name ? name : "(default)", known);
    }
    w2l_fileio *io = w2l__calloc(1, m->size > sizeof *io ? m->size : sizeof *io);
    W2L_NOMEM_IF(!io, err);
    io->methods = m;
    w2l_rc rc = m->open(m, conf, io, err);
    if (rc != W2L_OK) {
        w2l__free(io);
        return rc;
    }
    *out = io;
    return W2L_OK;
}

void w2l_fileio_close(w2l_fileio *io)
{
    if (!io) return;
    io->methods->close(io);
    w2l__free(io);
}

w2l_rc w2l_fileio_create(w2l_fileio *io, const char *path, unsigned flags, w2l_file **out,
                         w2l_error *err)
{
    *out = NULL;
    if ((flags & W2L_CREATE_EXCL) && (flags & W2L_CREATE_REPLACE))
        return w2l__fail(err, W2L_MISUSE, "create %s: EXCL and REPLACE together", path);
    return io->methods->create(io, path, flags, out, err);
}

w2l_rc w2l_file_write(w2l_file *f, const void *buf, size_t len, w2l_error *err)
{
    if (len == 0) return W2L_OK;
    return f->methods->write(f, buf, len, err);
}

w2l_rc w2l_file_close(w2l_file *f, w2l_error *err) { return f->methods->close(f, err); }

void w2l_file_abort(w2l_file *f)
{
    if (f) f->methods->abort(f);
}

w2l_rc w2l_fileio_open_read(w2l_fileio *io, const char *path, w2l_rfile **out,
                            w2l_error *err)
{
    *out = NULL;
    return io->methods->open_read(io, path, out, err);
}

w2l_rc w2l_rfile_pread(w2l_rfile *f, void *buf, size_t len, uint64_t off, w2l_error *err)
{
    if (len == 0) return W2L_OK;
    return f->methods->pread(f, buf, len, off, err);
}

uint64_t w2l_rfile_size(w2l_rfile *f) { return f->methods->size(f); }

void w2l_rfile_close(w2l_rfile *f)
{
    if (f) f->methods->close(f);
}

w2l_rc w2l_fileio_remove(w2l_fileio *io, const char *path, w2l_error *err)
{
    return io->methods->remove(io, path, err);
}

w2l_rc w2l_fileio_exists(w2l_fileio *io, const char *path, int *out, w2l_error *err)
{
    *out = 0;
    return io->methods->exists(io, path, out, err);
}

w2l_rc w2l_fileio_stat(w2l_fileio *io, const char *path, w2l_file_stat *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    if (io->methods->version < W2L_FILEIO_METHODS_V2 || !io->methods->stat)
        return w2l__fail(err, W2L_MISUSE, "file IO %s cannot stat files", io->methods->name);
    return io->methods->stat(io, path, out, err);
}

w2l_rc w2l_fileio_list(w2l_fileio *io, const char *dir, int (*fn)(void *, const char *),
                       void *ctx, w2l_error *err)
{
    return io->methods->list(io, dir, fn, ctx, err);
}

w2l_rc w2l_fileio_write_all(w2l_fileio *io, const char *path, unsigned flags, const void *buf,
                            size_t len, w2l_error *err)
{
    w2l_file *f;
    W2L_TRY(w2l_fileio_create(io, path, flags, &f, err));
    w2l_rc rc = w2l_file_write(f, buf, len, err);
    if (rc != W2L_OK) {
        w2l_file_abort(f);
        return rc;
    }
    return w2l_file_close(f, err);
}

w2l_rc w2l_fileio_read_all(w2l_fileio *io, const char *path, void **out, size_t *len,
                           w2l_error *err)
{
    *out = NULL;
    *len = 0;
    w2l_rfile *f;
    W2L_TRY(w2l_fileio_open_read(io, path, &f, err));
    uint64_t n = w2l_rfile_size(f);
    if (n > SIZE_MAX - 1) {
        w2l_rfile_close(f);
        return w2l__fail(err, W2L_NOMEM, "read %s: %llu bytes do not fit in memory", path,
                         (unsigned long long)n);
    }
    unsigned char *buf = w2l__malloc((size_t)n + 1);
    if (!buf) {
        w2l_rfile_close(f);
        return w2l__fail(err, W2L_NOMEM, "read %s: out of memory for %llu bytes", path,
                         (unsigned long long)n);
    }
    w2l_rc rc = w2l_rfile_pread(f, buf, (size_t)n, 0, err);
    w2l_rfile_close(f);
    if (rc != W2L_OK) {
        w2l__free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = (size_t)n;
    return W2L_OK;
}

char *w2l__path_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    while (*name == '/') name++;
    return w2l__asprintf("%.*s/%s", (int)dl, dir, name);
}
