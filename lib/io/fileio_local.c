/*
 * "local" file IO: POSIX files. A created file is written to a hidden temporary beside its
 * target (".NAME.tmp.PID.N"), fsynced, then published: rename() to replace, or link() for
 * W2L_CREATE_EXCL so an existing target is never overwritten (link fails with EEXIST
 * atomically), and the directory is fsynced. Parent directories are created on demand.
 * close_many() starts every file's write-back first (sync_file_range on Linux), then
 * fsyncs and publishes each, then fsyncs each directory once: on a disk that flushes one
 * request at a time, a thousand small files cost a fraction of a thousand close() calls.
 * A batch of 8 or more on a local disk file system syncs the file system instead (syncfs),
 * once for the temporaries and once for the names (see SYNCFS_BATCH).
 * A file's first 64 KiB are held in memory and its temporary is opened only past them or at
 * close, so a checkpoint's thousands of small open files hold no descriptors.
 * list() hides temporaries, except those of a writer that died (its PID runs no process):
 * garbage that only removal can take (orphan removal, dropping a directory).
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sync_file_range */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h> /* fstatfs */
#endif

#include "io.h"

typedef struct local_file {
    w2l_file base;
    int fd;         /* -1 until the temporary is opened */
    unsigned flags;
    char *path, *tmp;
    w2l_buf held;   /* what was written before the temporary was opened */
    int by_fs;      /* close_many: made durable by syncing its file system (fs: which) */
    dev_t fs;
} local_file;

/* Bytes a file keeps in memory before it takes a descriptor: a table's small file (ten
 * rows of a checkpoint) holds none until it is closed, so thousands of open tables stay
 * within the process's descriptor limit (1,024 by default on many systems). */
#define HOLD_MAX (64 * 1024)

typedef struct local_rfile {
    w2l_rfile base;
    int fd;
    uint64_t size;
    char *path;
} local_rfile;

static atomic_uint tmp_counter;

static w2l_rc local_open(const w2l_fileio_methods *m, const w2l_conf *conf, w2l_fileio *self,
                         w2l_error *err)
{
    (void)m, (void)conf, (void)self, (void)err;
    return W2L_OK;
}

static void local_close_io(w2l_fileio *self) { (void)self; }

/* mkdir -p of the directory part of path (io.h). */
w2l_rc w2l__local_make_parents(const char *path, w2l_error *err)
{
    char *d = w2l__strdup(path);
    W2L_NOMEM_IF(!d, err);
    for (char *p = d + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(d, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            w2l_rc rc = w2l__fail_errno(err, W2L_IO, e, "mkdir %s", d);
            w2l__free(d);
            return rc;
        }
        *p = '/';
    }
    w2l__free(d);
    return W2L_OK;
}

static void fsync_dir_of(const char *path)
{
    char *d = w2l__strdup(path);
    if (!d) return;
    char *slash = strrchr(d, '/');
    if (slash) {
        if (slash == d) slash[1] = '\0';
        else *slash = '\0';
    } else {
        strcpy(d, ".");
    }
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    w2l__free(d);
}

static void file_free(local_file *f)
{
    w2l_buf_release(&f->held);
    w2l__free(f->path);
    w2l__free(f->tmp);
    w2l__free(f);
}

static w2l_rc write_fd(local_file *f, const void *buf, size_t len, w2l_error *err)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(f->fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return w2l__fail_errno(err, W2L_IO, errno, "write %s", f->path);
        }
        p += n;
        len -= (size_t)n;
    }
    return W2L_OK;
}

/* Opens the temporary (creating missing parents) and writes what f held. */
static w2l_rc open_tmp(local_file *f, w2l_error *err)
{
    if (f->fd >= 0) return W2L_OK;
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd < 0 && errno == ENOENT) { /* parent directories only when missing */
        W2L_TRY(w2l__local_make_parents(f->path, err));
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (f->fd < 0) return w2l__fail_errno(err, W2L_IO, errno, "create %s", f->path);
    w2l_rc rc = write_fd(f, f->held.data, f->held.len, err);
    w2l_buf_release(&f->held);
    return rc;
}

static w2l_rc lf_write(w2l_file *base, const void *buf, size_t len, w2l_error *err)
{
    local_file *f = (local_file *)base;
    if (f->fd < 0 && f->held.len + len <= HOLD_MAX) return w2l_buf_append(&f->held, buf, len, err);
    W2L_TRY(open_tmp(f, err));
    return write_fd(f, buf, len, err);
}

static void lf_abort(w2l_file *base)
{
    local_file *f = (local_file *)base;
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->tmp);
    }
    file_free(f);
}

/* Makes f durable (unless a hint) and publishes it under its path, without syncing the
 * directory; f's descriptor is closed, its temporary gone either way. */
static w2l_rc publish(local_file *f, int synced, w2l_error *err)
{
    w2l_rc rc = open_tmp(f, err);
    if (rc != W2L_OK) {
        if (f->fd >= 0) close(f->fd);
        f->fd = -1;
        unlink(f->tmp);
        return rc;
    }
    if (!synced && !(f->flags & W2L_CREATE_HINT) && fsync(f->fd) != 0)
        rc = w2l__fail_errno(err, W2L_IO, errno, "fsync %s", f->path);
    if (close(f->fd) != 0 && rc == W2L_OK)
        rc = w2l__fail_errno(err, W2L_IO, errno, "close %s", f->path);
    f->fd = -1;
    if (rc == W2L_OK) {
        if (!(f->flags & W2L_CREATE_REPLACE)) { /* EXCL, and plain create: never overwrite */
            if (link(f->tmp, f->path) != 0) {
                int e = errno;
                if (e == EEXIST) rc = w2l__fail(err, W2L_EXISTS, "create %s: file exists", f->path);
                else rc = w2l__fail_errno(err, W2L_IO, e, "publish %s", f->path);
            }
            unlink(f->tmp);
        } else if (rename(f->tmp, f->path) != 0) {
            rc = w2l__fail_errno(err, W2L_IO, errno, "publish %s", f->path);
        }
    }
    if (rc != W2L_OK) unlink(f->tmp);
    return rc;
}

static w2l_rc lf_close(w2l_file *base, w2l_error *err)
{
    local_file *f = (local_file *)base;
    w2l_rc rc = publish(f, 0, err);
    if (rc == W2L_OK && !(f->flags & W2L_CREATE_HINT)) fsync_dir_of(f->path);
    file_free(f);
    return rc;
}

/* The length of path's directory part ("" is ".", "/x" is "/"). */
static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (slash == path ? 1 : (size_t)(slash - path)) : 0;
}

#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
/* A batch of at least this many files on a local disk file system is made durable by
 * syncing the file system, twice (the temporaries, then their names), instead of once per
 * file and per directory: on a virtual disk every fsync is a write and a flush sent to the
 * host, and their submission is most of a small table commit's CPU time. Only where
 * syncfs() is known to write and flush what fsync() would (ext2/3/4, XFS, btrfs; tmpfs has
 * nothing to write); elsewhere (network and FUSE file systems among them) each file is
 * fsynced. */
#define SYNCFS_BATCH 8

static int syncfs_covers(int fd, dev_t *dev)
{
    struct statfs sf;
    struct stat st;
    if (fstatfs(fd, &sf) != 0 || fstat(fd, &st) != 0) return 0;
    *dev = st.st_dev;
    switch ((unsigned long)sf.f_type) {
    case 0xEF53UL:     /* ext2, ext3, ext4 */
    case 0x58465342UL: /* XFS */
    case 0x9123683EUL: /* btrfs */
    case 0x01021994UL: /* tmpfs */
        return 1;
    default: return 0;
    }
}

/* syncfs() once for each file system of the files with by_fs set (NULL entries skipped);
 * the files of one that fails get by_fs -1, and the first errno is returned. names: the
 * temporaries are closed by then, so a file system is reached through a file's directory. */
static int sync_file_systems(local_file **fs, size_t n, int names)
{
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!fs[i] || !fs[i]->by_fs) continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = fs[k] && fs[k]->by_fs && fs[k]->fs == fs[i]->fs;
        if (seen) continue;
        int fd = fs[i]->fd, e = 0;
        if (names) {
            size_t dl = dir_len(fs[i]->path);
            char *d = dl ? w2l__strndup(fs[i]->path, dl) : w2l__strdup(".");
            fd = d ? open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
            e = fd < 0 ? (d ? errno : ENOMEM) : 0;
            w2l__free(d);
        }
        if (fd >= 0 && syncfs(fd) != 0) e = errno ? errno : EIO;
        if (names && fd >= 0) close(fd);
        if (!e) continue;
        if (!first) first = e;
        for (size_t k = n; k-- > i;)
            if (fs[k] && fs[k]->by_fs && fs[k]->fs == fs[i]->fs) fs[k]->by_fs = -1;
    }
    return first;
}
#endif

static w2l_rc local_close_many(w2l_fileio *self, w2l_file **files, size_t n, w2l_error *err)
{
    (void)self;
    w2l_rc rc = W2L_OK;
    local_file **fs = (local_file **)files;
    w2l_error e2;
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    int whole = n >= SYNCFS_BATCH;
    for (size_t i = 0; i < n; i++) { /* every write-back under way before any wait */
        local_file *f = fs[i];
        f->by_fs = 0;
        /* a file that cannot be opened fails in publish() below */
        if ((f->flags & W2L_CREATE_HINT) || open_tmp(f, &e2) != W2L_OK) continue;
        (void)sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        if (whole && syncfs_covers(f->fd, &f->fs)) f->by_fs = 1;
    }
    int e = whole ? sync_file_systems(fs, n, 0) : 0;
    if (e) rc = w2l__fail_errno(err, W2L_IO, e, "sync the file system of %s", fs[0]->path);
#endif
    for (size_t i = 0; i < n; i++) {
        local_file *f = fs[i];
        w2l_rc r;
        if (f->by_fs < 0) { /* its file system failed to sync: never published */
            if (f->fd >= 0) close(f->fd);
            f->fd = -1;
            unlink(f->tmp);
            r = W2L_IO;
        } else {
            r = publish(f, f->by_fs, rc == W2L_OK ? err : &e2);
            if (rc == W2L_OK) rc = r;
        }
        if (r != W2L_OK || (f->flags & W2L_CREATE_HINT)) {
            file_free(f);
            fs[i] = NULL;
        }
    }
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    /* the names: once per file system for the files above, */
    e = whole ? sync_file_systems(fs, n, 1) : 0;
    if (e && rc == W2L_OK)
        rc = w2l__fail_errno(err, W2L_IO, e, "sync the file system of %s",
                             fs[0] ? fs[0]->path : "the files");
#endif
    /* else once per directory */
    for (size_t i = 0; i < n; i++) {
        local_file *f = fs[i];
        if (!f || f->by_fs) continue;
        size_t dl = dir_len(f->path);
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const local_file *g = fs[k];
            seen = g && !g->by_fs && dir_len(g->path) == dl && !memcmp(g->path, f->path, dl);
        }
        if (!seen) fsync_dir_of(f->path);
    }
    for (size_t i = 0; i < n; i++)
        if (fs[i]) file_free(fs[i]);
    return rc;
}

static const w2l_file_methods local_file_methods = {
    .version = W2L_FILEIO_METHODS_V1, .write = lf_write, .close = lf_close, .abort = lf_abort,
};

static w2l_rc local_create(w2l_fileio *self, const char *path, unsigned flags, w2l_file **out,
                           w2l_error *err)
{
    (void)self;
    if (!path || !*path) return w2l__fail(err, W2L_MISUSE, "create: empty path");
    if (!(flags & (W2L_CREATE_EXCL | W2L_CREATE_REPLACE))) {
        struct stat st;
        if (stat(path, &st) == 0) return w2l__fail(err, W2L_EXISTS, "create %s: file exists", path);
    }
    local_file *f = w2l__calloc(1, sizeof *f);
    W2L_NOMEM_IF(!f, err);
    f->base.methods = &local_file_methods;
    f->flags = flags;
    f->fd = -1;
    f->path = w2l__strdup(path);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    f->tmp = w2l__asprintf("%.*s.%s.tmp.%ld.%u", (int)dirlen, path, path + dirlen,
                           (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    if (!f->path || !f->tmp) {
        file_free(f);
        return w2l__fail(err, W2L_NOMEM, "create %s: out of memory", path);
    }
    /* the temporary is opened at the first large write or at close; a parent that cannot
     * be a directory fails here, a missing one is made */
    char *dir = w2l__strndup(path, dirlen ? dirlen - 1 : 0);
    struct stat st;
    w2l_rc rc = dir ? W2L_OK : w2l__fail(err, W2L_NOMEM, "create %s: out of memory", path);
    if (rc == W2L_OK && dirlen > 1 && stat(dir, &st) != 0) {
        if (errno == ENOENT) rc = w2l__local_make_parents(path, err);
        else rc = w2l__fail_errno(err, W2L_IO, errno, "create %s", path);
    } else if (rc == W2L_OK && dirlen > 1 && !S_ISDIR(st.st_mode)) {
        rc = w2l__fail_errno(err, W2L_IO, ENOTDIR, "create %s", path);
    }
    w2l__free(dir);
    if (rc != W2L_OK) {
        file_free(f);
        return rc;
    }
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc lr_pread(w2l_rfile *base, void *buf, size_t len, uint64_t off, w2l_error *err)
{
    local_rfile *f = (local_rfile *)base;
    if (off > f->size || len > f->size - off)
        return w2l__fail(err, W2L_CORRUPT,
                         "read %s: %zu bytes at offset %llu past its end (%llu bytes)", f->path,
                         len, (unsigned long long)off, (unsigned long long)f->size);
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(f->fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return w2l__fail_errno(err, W2L_IO, errno, "read %s", f->path);
        }
        if (n == 0)
            return w2l__fail(err, W2L_CORRUPT, "read %s: short read at %llu", f->path,
                             (unsigned long long)off);
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return W2L_OK;
}

static uint64_t lr_size(w2l_rfile *base) { return ((local_rfile *)base)->size; }

static void lr_close(w2l_rfile *base)
{
    local_rfile *f = (local_rfile *)base;
    close(f->fd);
    w2l__free(f->path);
    w2l__free(f);
}

static const w2l_rfile_methods local_rfile_methods = {
    .version = W2L_FILEIO_METHODS_V1, .pread = lr_pread, .size = lr_size, .close = lr_close,
};

static w2l_rc local_open_read(w2l_fileio *self, const char *path, w2l_rfile **out,
                              w2l_error *err)
{
    (void)self;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return w2l__fail_errno(err, e == ENOENT ? W2L_NOTFOUND : W2L_IO, e, "open %s", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return w2l__fail_errno(err, W2L_IO, e, "stat %s", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return w2l__fail(err, W2L_IO, "open %s: is a directory", path);
    }
    local_rfile *f = w2l__calloc(1, sizeof *f);
    char *p = w2l__strdup(path);
    if (!f || !p) {
        close(fd);
        w2l__free(f);
        w2l__free(p);
        return w2l__fail(err, W2L_NOMEM, "open %s: out of memory", path);
    }
    f->base.methods = &local_rfile_methods;
    f->fd = fd;
    f->size = (uint64_t)st.st_size;
    f->path = p;
    *out = &f->base;
    return W2L_OK;
}

static w2l_rc local_remove(w2l_fileio *self, const char *path, w2l_error *err)
{
    (void)self;
    if (unlink(path) != 0 && errno != ENOENT) {
        if (errno == EISDIR || errno == EPERM) {
            if (rmdir(path) == 0 || errno == ENOENT) return W2L_OK;
        }
        return w2l__fail_errno(err, W2L_IO, errno, "remove %s", path);
    }
    return W2L_OK;
}

static w2l_rc local_exists(w2l_fileio *self, const char *path, int *out, w2l_error *err)
{
    (void)self;
    struct stat st;
    if (stat(path, &st) == 0) {
        *out = 1;
        return W2L_OK;
    }
    if (errno == ENOENT || errno == ENOTDIR) {
        *out = 0;
        return W2L_OK;
    }
    return w2l__fail_errno(err, W2L_IO, errno, "stat %s", path);
}

/* ".NAME.tmp.PID.N" of a PID that runs no process: left by a writer that died. */
static int dead_temporary(const char *name)
{
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp.")) t = p;
    if (name[0] != '.' || !t || t == name) return 0;
    char *end;
    long pid = strtol(t + 5, &end, 10);
    if (pid <= 0 || *end != '.' || end[1] < '0' || end[1] > '9') return 0;
    strtoul(end + 1, &end, 10);
    if (*end) return 0;
    if (pid == (long)getpid()) return 0;
    int saved = errno; /* readdir's end is told by errno */
    int dead = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    errno = saved;
    return dead;
}

static w2l_rc local_list(w2l_fileio *self, const char *dir, int (*fn)(void *, const char *),
                         void *ctx, w2l_error *err)
{
    (void)self;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return W2L_OK;
        return w2l__fail_errno(err, W2L_IO, errno, "list %s", dir);
    }
    struct dirent *de;
    int e = 0;
    for (;;) {
        errno = 0; /* only readdir's own errno tells a failure, not what fn left there */
        if ((de = readdir(d)) == NULL) {
            e = errno;
            break;
        }
        /* ., .., and unpublished temporaries (but those of a dead writer) */
        if (de->d_name[0] == '.' && !dead_temporary(de->d_name)) continue;
        if (fn(ctx, de->d_name)) break;
    }
    closedir(d);
    if (e) return w2l__fail_errno(err, W2L_IO, e, "list %s", dir);
    return W2L_OK;
}

static w2l_rc local_stat(w2l_fileio *self, const char *path, w2l_file_stat *out, w2l_error *err)
{
    (void)self;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return w2l__fail(err, W2L_NOTFOUND, "stat %s: no such file", path);
        return w2l__fail_errno(err, W2L_IO, errno, "stat %s", path);
    }
    out->size = (uint64_t)st.st_size;
    out->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    return W2L_OK;
}

/* ---- conditional writes: a file's tag is its inode, size and modification time (every
 * write publishes a new inode by rename); put_if compares and writes under an exclusive
 * flock of the file's directory, which every put_if of this IO takes ---- */

static void local_tag(const struct stat *st, char tag[128])
{
    snprintf(tag, 128, "%llx-%llx-%llx.%09ld", (unsigned long long)st->st_ino,
             (unsigned long long)st->st_size, (unsigned long long)st->st_mtim.tv_sec,
             (long)st->st_mtim.tv_nsec);
}

static w2l_rc local_get_tagged(w2l_fileio *self, const char *path, void **data, size_t *len,
                               char tag[128], w2l_error *err)
{
    (void)self;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? w2l__fail(err, W2L_NOTFOUND, "%s: no such file", path)
                               : w2l__fail_errno(err, W2L_IO, errno, "open %s", path);
    struct stat st;
    w2l_rc rc = fstat(fd, &st) == 0 ? W2L_OK : w2l__fail_errno(err, W2L_IO, errno, "stat %s", path);
    unsigned char *buf = rc == W2L_OK ? w2l__malloc((size_t)st.st_size + 1) : NULL;
    if (rc == W2L_OK && !buf) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && pread(fd, buf, (size_t)st.st_size, 0) != (ssize_t)st.st_size)
        rc = w2l__fail_errno(err, W2L_IO, errno, "read %s", path);
    close(fd);
    if (rc != W2L_OK) {
        w2l__free(buf);
        return rc;
    }
    local_tag(&st, tag);
    *data = buf;
    *len = (size_t)st.st_size;
    return W2L_OK;
}

static w2l_rc local_put_if(w2l_fileio *self, const char *path, const void *data, size_t len,
                           const char *if_tag, w2l_error *err)
{
    W2L_TRY(w2l__local_make_parents(path, err)); /* the first write makes its directory */
    char *dir = w2l__strdup(path);
    W2L_NOMEM_IF(!dir, err);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int dfd = open(slash ? (*dir ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    w2l_rc rc = dfd >= 0 ? W2L_OK : w2l__fail_errno(err, W2L_IO, errno, "open %s", dir);
    if (rc == W2L_OK && flock(dfd, LOCK_EX) != 0)
        rc = w2l__fail_errno(err, W2L_IO, errno, "lock %s", dir);
    struct stat st;
    char now[128];
    if (rc == W2L_OK) {
        int absent = stat(path, &st) != 0;
        if (absent && errno != ENOENT) rc = w2l__fail_errno(err, W2L_IO, errno, "stat %s", path);
        else if (!absent) local_tag(&st, now);
        if (rc == W2L_OK && (if_tag ? absent || strcmp(now, if_tag) != 0 : !absent))
            rc = w2l__fail(err, W2L_CONFLICT, "%s changed meanwhile", path);
    }
    if (rc == W2L_OK) rc = w2l_fileio_write_all(self, path, W2L_CREATE_REPLACE, data, len, err);
    if (dfd >= 0) close(dfd); /* and the lock with it */
    w2l__free(dir);
    return rc;
}

const w2l_fileio_methods w2l__fileio_local = {
    .version = W2L_FILEIO_METHODS_V5,
    .name = "local",
    .size = sizeof(w2l_fileio),
    .open = local_open,
    .create = local_create,
    .open_read = local_open_read,
    .remove = local_remove,
    .exists = local_exists,
    .list = local_list,
    .close = local_close_io,
    .stat = local_stat,
    .close_many = local_close_many,
    .get_tagged = local_get_tagged,
    .put_if = local_put_if,
};
