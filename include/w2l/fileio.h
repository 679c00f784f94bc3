/*
 * File IO plug-in: how the library reads and writes data files, manifests, metadata and
 * checkpoint state. Files are published whole or not at all: a w2l_file written with
 * create() becomes visible under its path only when close() succeeds.
 * Built in: "local" (temp file, fsync, rename/link), "s3" (S3 and S3-compatible object
 * stores, w2l-s3(7)) and "mem" (for tests).
 * Implementer's contract: w2l_fileio_methods(3).
 */
#ifndef W2L_FILEIO_H
#define W2L_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_fileio w2l_fileio;
typedef struct w2l_file w2l_file;   /* a file being written */
typedef struct w2l_rfile w2l_rfile; /* a file open for reading */

/* create() flags. Without either, create() fails with W2L_EXISTS when the path exists
 * already, and close() when it appeared meanwhile: a file is never overwritten. */
enum {
    W2L_CREATE_EXCL = 1u << 0,    /* close() fails with W2L_EXISTS if the path exists */
    W2L_CREATE_REPLACE = 1u << 1, /* close() atomically replaces an existing file */
    /* With either: the file is only a hint its readers can do without (the hadoop
     * catalog's version-hint.text), so close() need not make it durable: after a crash it
     * may be stale, empty or missing. The local IO skips its fsyncs. */
    W2L_CREATE_HINT = 1u << 2
};

#define W2L_FILEIO_METHODS_V1 1
#define W2L_FILEIO_METHODS_V2 2 /* adds stat */
#define W2L_FILEIO_METHODS_V3 3 /* adds remove_many and list_tree */
#define W2L_FILEIO_METHODS_V4 4 /* adds close_many */
#define W2L_FILEIO_METHODS_V5 5 /* adds get_tagged and put_if */

/* What stat() tells of a file. */
typedef struct w2l_file_stat {
    uint64_t size;
    int64_t mtime_ms; /* last modification, ms since the epoch */
} w2l_file_stat;

/* Methods of a file being written; set by the implementation. */
typedef struct w2l_file_methods {
    int version; /* W2L_FILEIO_METHODS_V1 */
    w2l_rc (*write)(w2l_file *f, const void *buf, size_t len, w2l_error *err);
    /* Makes the file durable and visible under its path, then frees f (also on failure). */
    w2l_rc (*close)(w2l_file *f, w2l_error *err);
    /* Discards everything written and frees f. Cannot fail. */
    void (*abort)(w2l_file *f);
} w2l_file_methods;
struct w2l_file { const w2l_file_methods *methods; };

typedef struct w2l_rfile_methods {
    int version; /* W2L_FILEIO_METHODS_V1 */
    /* Reads exactly len bytes at off; W2L_CORRUPT ("short read") past the end. */
    w2l_rc (*pread)(w2l_rfile *f, void *buf, size_t len, uint64_t off, w2l_error *err);
    uint64_t (*size)(w2l_rfile *f);
    void (*close)(w2l_rfile *f); /* frees f */
} w2l_rfile_methods;
struct w2l_rfile { const w2l_rfile_methods *methods; };

typedef struct w2l_fileio_methods {
    int version;      /* W2L_FILEIO_METHODS_V1 */
    const char *name; /* registry key, e.g. "local" */
    size_t size;      /* sizeof the implementation's struct; the core allocates and zeroes it */
    void *app_data;   /* for the implementer; the core never reads it */
    /* Prepares self (already allocated with size bytes, methods set). */
    w2l_rc (*open)(const struct w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                   w2l_error *err);
    w2l_rc (*create)(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                     w2l_error *err);
    w2l_rc (*open_read)(w2l_fileio *self, const char *path, w2l_rfile **out,
                        w2l_error *err); /* W2L_NOTFOUND */
    w2l_rc (*remove)(w2l_fileio *self, const char *path, w2l_error *err); /* idempotent */
    w2l_rc (*exists)(w2l_fileio *self, const char *path, int *out, w2l_error *err);
    /* Calls fn for each entry name (not path) directly inside dir, in no set order;
     * W2L_OK for a missing dir. Stops when fn returns non-zero. */
    w2l_rc (*list)(w2l_fileio *self, const char *dir,
                   int (*fn)(void *ctx, const char *name), void *ctx, w2l_error *err);
    void (*close)(w2l_fileio *self); /* cannot fail; the core frees self afterwards */
    /* V2 (version >= W2L_FILEIO_METHODS_V2; may be NULL): size and modification time of a
     * file; W2L_NOTFOUND. Orphan removal needs it to tell a file's age. */
    w2l_rc (*stat)(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err);
    /* V3 (may be NULL): removes n files at once (an object store's batch delete); a path
     * absent is no error. Without it the core removes them one by one. */
    w2l_rc (*remove_many)(w2l_fileio *self, const char *const *paths, size_t n,
                          w2l_error *err);
    /* V3 (may be NULL): calls fn for every file below dir, at any depth, with its path
     * relative to dir ("data/x.parquet") and, when the listing tells them, its size and
     * modification time (else NULL); W2L_OK for a missing dir. Stops when fn returns
     * non-zero. An object store lists a whole prefix at once; without it the core walks
     * the tree with list(). */
    w2l_rc (*list_tree)(w2l_fileio *self, const char *dir,
                        int (*fn)(void *ctx, const char *relpath, const w2l_file_stat *st),
                        void *ctx, w2l_error *err);
    /* V4 (may be NULL): closes n files this instance created, as close() each (durable and
     * visible, then freed, also on failure), sharing what it can: the local IO starts every
     * file's write-back before it waits on any and syncs each directory once (a batch of 8
     * or more on a local disk file system: the file system, twice). Returns the
     * first failure; a file that failed is not published, the others are. Without it the
     * core closes them one by one. */
    w2l_rc (*close_many)(w2l_fileio *self, w2l_file **files, size_t n, w2l_error *err);
    /* V5 (may be NULL; both or neither): conditional writes of a small whole file (the
     * state store's lease, w2l_state_lock(3)). get_tagged reads the whole file at path into
     * *data (w2l_malloc'd, *len bytes) and its version tag into tag (an ETag: it changes
     * with every write); W2L_NOTFOUND. put_if writes len bytes at path only when the file's
     * tag is if_tag now, or, with if_tag NULL, only when there is no file there, as one
     * atomic step; W2L_CONFLICT (nothing written) when that does not hold. */
    w2l_rc (*get_tagged)(w2l_fileio *self, const char *path, void **data, size_t *len,
                         char tag[128], w2l_error *err);
    w2l_rc (*put_if)(w2l_fileio *self, const char *path, const void *data, size_t len,
                     const char *if_tag, w2l_error *err);
} w2l_fileio_methods;
struct w2l_fileio { const w2l_fileio_methods *methods; };

/* Registers m (borrowed; must outlive the process's use of it). W2L_EXISTS when the name is
 * taken, W2L_MISUSE for a NULL member or unknown version. make_default: use it when no
 * name is given. Thread-safe. See w2l_fileio_register(3). */
W2L_API w2l_rc w2l_fileio_register(const w2l_fileio_methods *m, int make_default);

/* The methods registered under name (NULL: the default), or NULL. See w2l_fileio_register(3). */
W2L_API const w2l_fileio_methods *w2l_fileio_find(const char *name);

/* Opens an instance of the named implementation (NULL: the default). The caller owns it;
 * close with w2l_fileio_close(). See w2l_fileio_open(3). */
W2L_API w2l_rc w2l_fileio_open(const char *name, const w2l_conf *conf, w2l_fileio **out,
                               w2l_error *err);
W2L_API void w2l_fileio_close(w2l_fileio *io); /* NULL is a no-op */

/* Convenience wrappers: the only way the core calls the methods. */
W2L_API w2l_rc w2l_fileio_create(w2l_fileio *io, const char *path, unsigned flags,
                                 w2l_file **out, w2l_error *err);
W2L_API w2l_rc w2l_file_write(w2l_file *f, const void *buf, size_t len, w2l_error *err);
W2L_API w2l_rc w2l_file_close(w2l_file *f, w2l_error *err);
/* Closes n files of io (w2l_file_close() each, every one freed): through close_many when
 * io has it. Returns the first failure. */
W2L_API w2l_rc w2l_file_close_many(w2l_fileio *io, w2l_file **files, size_t n,
                                   w2l_error *err);
W2L_API void w2l_file_abort(w2l_file *f);
W2L_API w2l_rc w2l_fileio_open_read(w2l_fileio *io, const char *path, w2l_rfile **out,
                                    w2l_error *err);
W2L_API w2l_rc w2l_rfile_pread(w2l_rfile *f, void *buf, size_t len, uint64_t off,
                               w2l_error *err);
W2L_API uint64_t w2l_rfile_size(w2l_rfile *f);
W2L_API void w2l_rfile_close(w2l_rfile *f);
W2L_API w2l_rc w2l_fileio_remove(w2l_fileio *io, const char *path, w2l_error *err);
/* Removes n files: in batches where the implementation has remove_many (V3), else one by
 * one. Stops at the first failure. */
W2L_API w2l_rc w2l_fileio_remove_many(w2l_fileio *io, const char *const *paths, size_t n,
                                      w2l_error *err);
W2L_API w2l_rc w2l_fileio_exists(w2l_fileio *io, const char *path, int *out, w2l_error *err);
W2L_API w2l_rc w2l_fileio_list(w2l_fileio *io, const char *dir,
                               int (*fn)(void *ctx, const char *name), void *ctx,
                               w2l_error *err);
/* Every file below dir, recursively (the list_tree method, or a walk with list()). */
W2L_API w2l_rc w2l_fileio_list_tree(w2l_fileio *io, const char *dir,
                                    int (*fn)(void *ctx, const char *relpath,
                                              const w2l_file_stat *st),
                                    void *ctx, w2l_error *err);
/* W2L_MISUSE when the implementation has no stat (a V1 method table). */
W2L_API w2l_rc w2l_fileio_stat(w2l_fileio *io, const char *path, w2l_file_stat *out,
                               w2l_error *err);

/* Whole-file helpers: write all of buf to path (create + write + close) and read all of a
 * file into memory allocated with w2l_malloc(). See w2l_fileio_open(3). */
W2L_API w2l_rc w2l_fileio_write_all(w2l_fileio *io, const char *path, unsigned flags,
                                    const void *buf, size_t len, w2l_error *err);
W2L_API w2l_rc w2l_fileio_read_all(w2l_fileio *io, const char *path, void **out,
                                   size_t *len, w2l_error *err);

#ifdef __cplusplus
}
#endif
#endif
