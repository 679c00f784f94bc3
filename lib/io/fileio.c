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

const char *w2l__fileio_name_for(const w2l_conf *conf, const char *path)
{
    const char *name = NULL;
    if (conf && w2l_conf_get(conf, "fileio", &name, NULL) == W2L_OK && name && *name)
        return name;
    if (path && (strncmp(path, "s3://", 5) == 0 || strncmp(path, "s3a://", 6) == 0 ||
                 strncmp(path, "s3n://", 6) == 0))
        return "s3";
    return NULL;
}

w2l_rc w2l__fileio_open_for(const w2l_conf *conf, const char *path, w2l_fileio **out,
                            w2l_error *err)
{
    return w2l_fileio_open(w2l__fileio_name_for(conf, path), conf, out, err);
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

w2l_rc w2l_file_close_many(w2l_fileio *io, w2l_file **files, size_t n, w2l_error *err)
{
    if (n == 0) return W2L_OK;
    if (io->methods->version >= W2L_FILEIO_METHODS_V4 && io->methods->close_many)
        return io->methods->close_many(io, files, n, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < n; i++) {
        w2l_error e2;
        w2l_rc r = files[i]->methods->close(files[i], rc == W2L_OK ? err : &e2);
        if (rc == W2L_OK) rc = r;
    }
    return rc;
}

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

w2l_rc w2l_fileio_remove_many(w2l_fileio *io, const char *const *paths, size_t n,
                              w2l_error *err)
{
    if (n == 0) return W2L_OK;
    if (io->methods->version >= W2L_FILEIO_METHODS_V3 && io->methods->remove_many)
        return io->methods->remove_many(io, paths, n, err);
    for (size_t i = 0; i < n; i++) W2L_TRY(io->methods->remove(io, paths[i], err));
    return W2L_OK;
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

int w2l__fileio_has_put_if(const w2l_fileio *io)
{
    const w2l_fileio_methods *m = io->methods;
    return m->version >= W2L_FILEIO_METHODS_V5 && m->get_tagged && m->put_if;
}

w2l_rc w2l__fileio_get_tagged(w2l_fileio *io, const char *path, void **data, size_t *len,
                              char tag[128], w2l_error *err)
{
    *data = NULL;
    *len = 0;
    tag[0] = '\0';
    if (!w2l__fileio_has_put_if(io))
        return w2l__fail(err, W2L_MISUSE, "file IO %s has no conditional writes",
                         io->methods->name);
    return io->methods->get_tagged(io, path, data, len, tag, err);
}

w2l_rc w2l__fileio_put_if(w2l_fileio *io, const char *path, const void *data, size_t len,
                          const char *if_tag, w2l_error *err)
{
    if (!w2l__fileio_has_put_if(io))
        return w2l__fail(err, W2L_MISUSE, "file IO %s has no conditional writes",
                         io->methods->name);
    return io->methods->put_if(io, path, data, len, if_tag, err);
}

w2l_rc w2l_fileio_list(w2l_fileio *io, const char *dir, int (*fn)(void *, const char *),
                       void *ctx, w2l_error *err)
{
    return io->methods->list(io, dir, fn, ctx, err);
}

typedef struct names {
    char **v;
    size_t n, cap;
    int oom;
} names;

static int add_name(void *ctx, const char *name)
{
    names *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **nv = w2l__realloc(l->v, cap * sizeof *nv);
        if (!nv) return l->oom = 1;
        l->v = nv;
        l->cap = cap;
    }
    if (!(l->v[l->n] = w2l__strdup(name))) return l->oom = 1;
    l->n++;
    return 0;
}

static void names_free(names *l)
{
    for (size_t i = 0; i < l->n; i++) w2l__free(l->v[i]);
    w2l__free(l->v);
}

/* The walk of list_tree for implementations without it: an entry that lists entries is a
 * directory; one that lists none is a file when it exists (else an empty directory).
 * *stop is set when fn asks to stop. */
static w2l_rc walk(w2l_fileio *io, const char *dir, const char *rel,
                   int (*fn)(void *, const char *, const w2l_file_stat *), void *ctx,
                   int *stop, w2l_error *err)
{
    names l = { 0 };
    w2l_rc rc = io->methods->list(io, dir, add_name, &l, err);
    if (rc == W2L_OK && l.oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && !*stop && i < l.n; i++) {
        char *p = w2l__path_join(dir, l.v[i]);
        char *r = *rel ? w2l__asprintf("%s/%s", rel, l.v[i]) : w2l__strdup(l.v[i]);
        names sub = { 0 };
        w2l_error e2;
        int is_dir = 0, exists = 0;
        if (!p || !r) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc == W2L_OK)
            is_dir = io->methods->list(io, p, add_name, &sub, &e2) == W2L_OK && sub.n > 0;
        names_free(&sub);
        if (rc == W2L_OK && is_dir) rc = walk(io, p, r, fn, ctx, stop, err);
        else if (rc == W2L_OK && io->methods->exists(io, p, &exists, &e2) == W2L_OK && exists)
            *stop = fn(ctx, r, NULL);
        w2l__free(p);
        w2l__free(r);
    }
    names_free(&l);
    return rc;
}

w2l_rc w2l_fileio_list_tree(w2l_fileio *io, const char *dir,
                            int (*fn)(void *, const char *, const w2l_file_stat *), void *ctx,
                            w2l_error *err)
{
    if (io->methods->version >= W2L_FILEIO_METHODS_V3 && io->methods->list_tree)
        return io->methods->list_tree(io, dir, fn, ctx, err);
    int stop = 0;
    return walk(io, dir, "", fn, ctx, &stop, err);
}

w2l_rc w2l__fileio_write_unclosed(w2l_fileio *io, const char *path, unsigned flags,
                                  const void *buf, size_t len, w2l_file **out, w2l_error *err)
{
    W2L_TRY(w2l_fileio_create(io, path, flags, out, err));
    w2l_rc rc = w2l_file_write(*out, buf, len, err);
    if (rc != W2L_OK) {
        w2l_file_abort(*out);
        *out = NULL;
    }
    return rc;
}

w2l_rc w2l__file_batch_add(w2l__file_batch *b, w2l_file *f, w2l_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        w2l_file **v = w2l__realloc(b->v, cap * sizeof *v);
        if (!v) {
            w2l_file_abort(f);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = f;
    return W2L_OK;
}

w2l_rc w2l__file_batch_close(w2l_fileio *io, w2l__file_batch *b, w2l_error *err)
{
    w2l_rc rc = w2l_file_close_many(io, b->v, b->n, err);
    b->n = 0;
    return rc;
}

void w2l__file_batch_release(w2l__file_batch *b)
{
    for (size_t i = 0; i < b->n; i++) w2l_file_abort(b->v[i]);
    w2l__free(b->v);
    memset(b, 0, sizeof *b);
}

w2l_rc w2l_fileio_write_all(w2l_fileio *io, const char *path, unsigned flags, const void *buf,
                            size_t len, w2l_error *err)
{
    w2l_file *f;
    W2L_TRY(w2l__fileio_write_unclosed(io, path, flags, buf, len, &f, err));
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
