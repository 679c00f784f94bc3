/*
 * "fault" file IO: a shim over a parent file IO (conf "ext.fault.parent", default
 * "local") that fails the Nth create/write/close/read/remove, once or from then on.
 * Everything not failed is forwarded unchanged (SQLite's testvfs idea). Armed per instance
 * (fault_fileio_arm) or, for a whole pipeline whose operators each open their own instance
 * on their own thread, for all instances at once with one shared count (fault_fileio_arm_all).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "support.h"

typedef struct fault_io {
    w2l_fileio base;
    w2l_fileio *parent;
    unsigned kinds;
    long nth, calls;
    int persistent, armed;
} fault_io;

typedef struct fault_file {
    w2l_file base;
    fault_io *io;
    w2l_file *inner;
    char *path;
} fault_file;

typedef struct fault_rfile {
    w2l_rfile base;
    fault_io *io;
    w2l_rfile *inner;
    char *path;
} fault_rfile;

/* Arming of every instance (fault_fileio_arm_all): calls counted across threads. */
static atomic_int all_armed;
static unsigned all_kinds;
static long all_nth;
static int all_persistent;
static atomic_long all_calls;
static char all_where[256]; /* "": every path; else only paths that contain it */

/* 1 when this call of kind k on path must fail. */
static int trip(fault_io *io, unsigned k, const char *path)
{
    if (!io->armed && atomic_load(&all_armed) && (all_kinds & k) &&
        (!all_where[0] || (path && strstr(path, all_where)))) {
        long c = atomic_fetch_add(&all_calls, 1);
        return c == all_nth || (all_persistent && c > all_nth);
    }
    if (!io->armed || !(io->kinds & k)) return 0;
    long c = io->calls++;
    return c == io->nth || (io->persistent && c > io->nth);
}

/* As a real file IO does, the failure names the call and the path: "write P: injected
 * fault". */
static w2l_rc injected(w2l_error *err, const char *what, const char *path)
{
    return w2l_error_set(err, W2L_IO, "%s %s: injected fault", what, path ? path : "?");
}

static w2l_rc ff_write(w2l_file *b, const void *buf, size_t len, w2l_error *err)
{
    fault_file *f = (fault_file *)b;
    if (trip(f->io, FAULT_WRITE, f->path)) return injected(err, "write", f->path);
    return w2l_file_write(f->inner, buf, len, err);
}

static w2l_rc ff_close(w2l_file *b, w2l_error *err)
{
    fault_file *f = (fault_file *)b;
    w2l_rc rc;
    if (trip(f->io, FAULT_CLOSE, f->path)) {
        w2l_file_abort(f->inner);
        rc = injected(err, "close", f->path);
    } else {
        rc = w2l_file_close(f->inner, err);
    }
    free(f->path);
    w2l_free(f);
    return rc;
}

static void ff_abort(w2l_file *b)
{
    fault_file *f = (fault_file *)b;
    w2l_file_abort(f->inner);
    free(f->path);
    w2l_free(f);
}

static const w2l_file_methods fault_file_methods = {W2L_FILEIO_METHODS_V1, ff_write, ff_close,
                                                    ff_abort};

static w2l_rc fr_pread(w2l_rfile *b, void *buf, size_t len, uint64_t off, w2l_error *err)
{
    fault_rfile *f = (fault_rfile *)b;
    if (trip(f->io, FAULT_READ, f->path)) return injected(err, "read", f->path);
    return w2l_rfile_pread(f->inner, buf, len, off, err);
}

static uint64_t fr_size(w2l_rfile *b) { return w2l_rfile_size(((fault_rfile *)b)->inner); }

static void fr_close(w2l_rfile *b)
{
    fault_rfile *f = (fault_rfile *)b;
    w2l_rfile_close(f->inner);
    free(f->path);
    w2l_free(f);
}

static const w2l_rfile_methods fault_rfile_methods = {W2L_FILEIO_METHODS_V1, fr_pread, fr_size,
                                                      fr_close};

static _Atomic(w2l_fileio *) last_opened;
w2l_fileio *fault_fileio_last(void) { return atomic_load(&last_opened); }

static w2l_rc fo_open(const w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                      w2l_error *err)
{
    (void)m;
    fault_io *io = (fault_io *)self;
    atomic_store(&last_opened, self);
    const char *parent = NULL;
    if (conf) w2l_conf_get(conf, "ext.fault.parent", &parent, NULL);
    return w2l_fileio_open(parent ? parent : "local", conf, &io->parent, err);
}

static w2l_rc fo_create(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                        w2l_error *err)
{
    fault_io *io = (fault_io *)self;
    if (trip(io, FAULT_CREATE, path)) return injected(err, "create", path);
    fault_file *f = w2l_malloc(sizeof *f);
    if (!f) return w2l_error_set(err, W2L_NOMEM, "fault create: out of memory");
    f->path = strdup(path);
    ck_assert_ptr_nonnull(f->path);
    w2l_rc rc = w2l_fileio_create(io->parent, path, flags, &f->inner, err);
    if (rc != W2L_OK) {
        free(f->path);
        w2l_free(f);
        return rc;
    }
    f->base.methods = &fault_file_methods;
    f->io = io;
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc fo_open_read(w2l_fileio *self, const char *path, w2l_rfile **out, w2l_error *err)
{
    fault_io *io = (fault_io *)self;
    fault_rfile *f = w2l_malloc(sizeof *f);
    if (!f) return w2l_error_set(err, W2L_NOMEM, "fault open: out of memory");
    f->path = strdup(path);
    ck_assert_ptr_nonnull(f->path);
    w2l_rc rc = w2l_fileio_open_read(io->parent, path, &f->inner, err);
    if (rc != W2L_OK) {
        free(f->path);
        w2l_free(f);
        return rc;
    }
    f->base.methods = &fault_rfile_methods;
    f->io = io;
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc fo_remove(w2l_fileio *self, const char *path, w2l_error *err)
{
    fault_io *io = (fault_io *)self;
    if (trip(io, FAULT_REMOVE, path)) return injected(err, "remove", path);
    return w2l_fileio_remove(io->parent, path, err);
}

static w2l_rc fo_exists(w2l_fileio *self, const char *path, int *out, w2l_error *err)
{
    return w2l_fileio_exists(((fault_io *)self)->parent, path, out, err);
}

static w2l_rc fo_list(w2l_fileio *self, const char *dir, int (*fn)(void *, const char *),
                      void *ctx, w2l_error *err)
{
    return w2l_fileio_list(((fault_io *)self)->parent, dir, fn, ctx, err);
}

static w2l_rc fo_stat(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err)
{
    return w2l_fileio_stat(((fault_io *)self)->parent, path, out, err);
}

static void fo_close(w2l_fileio *self)
{
    w2l_fileio *me = self;
    atomic_compare_exchange_strong(&last_opened, &me, NULL); /* never a freed one */
    w2l_fileio_close(((fault_io *)self)->parent);
}

/* Each file of the batch counts as one close, in order; a file whose close trips is
 * aborted (never published) and the others go to the parent's close_many together. */
static w2l_rc fo_close_many(w2l_fileio *self, w2l_file **files, size_t n, w2l_error *err)
{
    w2l_file **inner = malloc((n ? n : 1) * sizeof *inner);
    ck_assert_ptr_nonnull(inner);
    w2l_rc rc = W2L_OK;
    w2l_error e2;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        fault_file *f = (fault_file *)files[i];
        if (trip(f->io, FAULT_CLOSE, f->path)) {
            w2l_file_abort(f->inner);
            if (rc == W2L_OK) rc = injected(err, "close", f->path);
        } else {
            inner[k++] = f->inner;
        }
        free(f->path);
        w2l_free(f);
    }
    w2l_rc r = w2l_file_close_many(((fault_io *)self)->parent, inner, k, rc == W2L_OK ? err : &e2);
    if (rc == W2L_OK) rc = r;
    free(inner);
    return rc;
}

static void (*before_put_if)(void *ctx, const char *path);
static void *before_put_if_ctx;

void fault_fileio_before_put_if(void (*fn)(void *ctx, const char *path), void *ctx)
{
    before_put_if = fn;
    before_put_if_ctx = ctx;
}

static w2l_rc fo_get_tagged(w2l_fileio *self, const char *path, void **data, size_t *len,
                            char tag[128], w2l_error *err)
{
    fault_io *io = (fault_io *)self;
    if (trip(io, FAULT_READ, path)) return injected(err, "read", path);
    return w2l__fileio_get_tagged(io->parent, path, data, len, tag, err);
}

static w2l_rc fo_put_if(w2l_fileio *self, const char *path, const void *data, size_t len,
                        const char *if_tag, w2l_error *err)
{
    fault_io *io = (fault_io *)self;
    if (trip(io, FAULT_WRITE, path)) return injected(err, "write", path);
    if (before_put_if) before_put_if(before_put_if_ctx, path);
    return w2l__fileio_put_if(io->parent, path, data, len, if_tag, err);
}

static const w2l_fileio_methods fault_methods = {
    .version = W2L_FILEIO_METHODS_V5,
    .name = "fault",
    .size = sizeof(fault_io),
    .open = fo_open,
    .create = fo_create,
    .open_read = fo_open_read,
    .remove = fo_remove,
    .exists = fo_exists,
    .list = fo_list,
    .close = fo_close,
    .stat = fo_stat,
    .close_many = fo_close_many,
    .get_tagged = fo_get_tagged,
    .put_if = fo_put_if,
};

void fault_fileio_register(void)
{
    ck_assert_int_eq(w2l_fileio_register(&fault_methods, 0), W2L_OK);
}

void fault_fileio_arm(w2l_fileio *b, unsigned kinds, long nth, int persistent)
{
    fault_io *io = (fault_io *)b;
    ck_assert_ptr_eq(b->methods, &fault_methods);
    io->kinds = kinds;
    io->nth = nth;
    io->calls = 0;
    io->persistent = persistent;
    io->armed = 1;
}

void fault_fileio_disarm(w2l_fileio *b) { ((fault_io *)b)->armed = 0; }
long fault_fileio_calls(w2l_fileio *b) { return ((fault_io *)b)->calls; }

void fault_fileio_arm_all(unsigned kinds, long nth, int persistent)
{
    fault_fileio_arm_where(NULL, kinds, nth, persistent);
}

void fault_fileio_arm_where(const char *where, unsigned kinds, long nth, int persistent)
{
    atomic_store(&all_armed, 0);
    ck_assert(!where || strlen(where) < sizeof all_where);
    strcpy(all_where, where ? where : "");
    all_kinds = kinds;
    all_nth = nth;
    all_persistent = persistent;
    atomic_store(&all_calls, 0);
    atomic_store(&all_armed, 1);
}

void fault_fileio_disarm_all(void) { atomic_store(&all_armed, 0); }
long fault_fileio_calls_all(void) { return atomic_load(&all_calls); }
