/*
 * One writer per state store: the holder record and the two ways a store is held.
 *
 *   a lock file  for a store on a local file system: an open-file-description lock
 *                (F_OFD_SETLK) on DIR/LOCK, which the kernel drops when the holder's
 *                process ends however it ends; the file holds the holder's record.
 *                A reader tests it (F_OFD_GETLK) without taking it.
 *   a lease      for a store anywhere else (S3, any file IO): the record in an object,
 *                with an epoch and an expiry. It is taken when absent, expired, or held
 *                by a process of this host that is gone; the holder reads it back before
 *                every seal and prune, renews it when a third of its time has passed, and
 *                stops with W2L_BUSY when someone else's epoch is there (fencing). On a
 *                file IO with conditional writes (version 5: S3's If-Match on the ETag
 *                read, If-None-Match: * to create) every write of the record is a
 *                compare-and-swap on the one read just before, so a taker or renewer that
 *                raced another loses with nothing written.
 *
 * The record is one JSON object:
 *   {"job":"J","host":"H","pid":N,"since-ms":T,"expires-ms":E,"version":"V","epoch":K}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "state_int.h"
#include "../io/io.h"
#include "../json/json.h"

w2l_rc w2l__holder_encode(const w2l_state_holder *h, char **out, w2l_error *err)
{
    *out = NULL;
    w2l__json *j = w2l__json_new_object();
    int bad = !j || w2l__json_add(j, "job", w2l__json_new_string(h->job)) ||
              w2l__json_add(j, "host", w2l__json_new_string(h->host)) ||
              w2l__json_add(j, "pid", w2l__json_new_int64(h->pid)) ||
              w2l__json_add(j, "since-ms", w2l__json_new_int64(h->since_ms)) ||
              w2l__json_add(j, "expires-ms", w2l__json_new_int64(h->expires_ms)) ||
              w2l__json_add(j, "version", w2l__json_new_string(h->version)) ||
              w2l__json_add(j, "epoch", w2l__json_new_int64((int64_t)h->epoch));
    *out = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    return *out ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
}

static void copy_str(const w2l__json *j, const char *key, char *dst, size_t size)
{
    const char *s = w2l__json_str(w2l__json_get(j, key));
    snprintf(dst, size, "%s", s ? s : "");
}

int w2l__holder_decode(const char *text, size_t len, w2l_state_holder *h)
{
    memset(h, 0, sizeof *h);
    w2l__json *j = NULL;
    w2l_error e;
    if (len == 0 || w2l__json_parse(text, len, &j, &e) != W2L_OK) return -1;
    int64_t pid = 0, since = 0, expires = 0, epoch = 0;
    int ok = w2l__json_type(j) == W2L_JSON_OBJECT &&
             w2l__json_int64(w2l__json_get(j, "pid"), &pid) == 0 &&
             w2l__json_int64(w2l__json_get(j, "since-ms"), &since) == 0 &&
             w2l__json_int64(w2l__json_get(j, "epoch"), &epoch) == 0;
    if (ok) {
        w2l__json_int64(w2l__json_get(j, "expires-ms"), &expires);
        copy_str(j, "job", h->job, sizeof h->job);
        copy_str(j, "host", h->host, sizeof h->host);
        copy_str(j, "version", h->version, sizeof h->version);
        h->pid = pid;
        h->since_ms = since;
        h->expires_ms = expires;
        h->epoch = (uint64_t)epoch;
    }
    w2l__json_free(j);
    return ok ? 0 : -1;
}

int w2l__holder_gone(const w2l_state_holder *h)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || strcmp(host, h->host) != 0) return 0;
    if (h->pid <= 0) return 1;
    if (kill((pid_t)h->pid, 0) != 0) return errno == ESRCH;
    /* ended, not yet reaped by its parent (Linux: state Z or X in /proc/PID/stat) */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%lld/stat", h->pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return paren && (paren[1] == ' ') && (paren[2] == 'Z' || paren[2] == 'X');
}

static int same_holder(const w2l_state_holder *a, const w2l_state_holder *b)
{
    return a->epoch == b->epoch && a->pid == b->pid && a->since_ms == b->since_ms &&
           strcmp(a->host, b->host) == 0;
}

/* ------------------------------------------------------------------- lock file ---- */

#ifdef F_OFD_SETLK
/* F_OFD_SETLK or F_OFD_GETLK of a write lock on the whole file; for GETLK, *held: 1 when
 * another open file description holds a lock on it. */
static int ofd(int fd, int cmd, int *held)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, cmd, &fl) != 0) return -1;
    if (held) *held = fl.l_type != F_UNLCK;
    return 0;
}
#define TAKE(fd) ofd(fd, F_OFD_SETLK, NULL)
#else
#define TAKE(fd) flock(fd, LOCK_EX | LOCK_NB)
#endif

/* The record in the lock file fd, or a zeroed one. */
static void read_record(int fd, w2l_state_holder *h)
{
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0 || w2l__holder_decode(buf, (size_t)n, h) != 0) memset(h, 0, sizeof *h);
}

w2l_rc w2l__lockfile_take(const char *path, w2l_state_holder *me, w2l_state_holder *other,
                          int *fd_out, w2l_error *err)
{
    *fd_out = -1;
    W2L_TRY(w2l__local_make_parents(path, err));
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return w2l__fail_errno(err, W2L_IO, errno, "open %s", path);
    if (TAKE(fd) != 0) {
        int e = errno;
        read_record(fd, other);
        close(fd);
        if (e == EAGAIN || e == EACCES || e == EWOULDBLOCK) return W2L_BUSY;
        return w2l__fail_errno(err, W2L_IO, e, "lock %s", path);
    }
    w2l_state_holder prev;
    read_record(fd, &prev);
    me->epoch = prev.epoch + 1;
    me->expires_ms = 0;
    char *text = NULL;
    w2l_rc rc = w2l__holder_encode(me, &text, err);
    size_t len = text ? strlen(text) : 0;
    if (rc == W2L_OK && (ftruncate(fd, 0) != 0 || pwrite(fd, text, len, 0) != (ssize_t)len ||
                         fdatasync(fd) != 0))
        rc = w2l__fail_errno(err, W2L_IO, errno, "write %s", path);
    w2l__free(text);
    if (rc != W2L_OK) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return W2L_OK;
}

w2l_rc w2l__lockfile_probe(const char *path, w2l_state_holder *out, w2l_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? W2L_NOTFOUND
                               : w2l__fail_errno(err, W2L_IO, errno, "open %s", path);
    int held = 0;
#ifdef F_OFD_SETLK
    if (ofd(fd, F_OFD_GETLK, &held) != 0) held = 0;
#else
    /* a shared lock taken for a moment: a job starting at that moment may be refused */
    held = flock(fd, LOCK_SH | LOCK_NB) != 0;
    if (!held) flock(fd, LOCK_UN);
#endif
    if (held) read_record(fd, out);
    close(fd);
    return held ? W2L_OK : W2L_NOTFOUND;
}

void w2l__lockfile_release(int fd)
{
    if (fd >= 0) close(fd); /* the lock goes with the file description */
}

/* ----------------------------------------------------------------------- lease ---- */

/* The lease's record: W2L_OK, W2L_NOTFOUND, or an IO error. A record that does not parse
 * counts as none: it cannot name a holder. With conditional writes (file IO version 5)
 * its tag into tag (else ""), for the write that replaces it. */
static w2l_rc lease_read_tagged(w2l_fileio *io, const char *path, w2l_state_holder *h,
                                char tag[128], w2l_error *err)
{
    void *data = NULL;
    size_t len = 0;
    memset(h, 0, sizeof *h);
    tag[0] = '\0';
    w2l_rc rc = w2l__fileio_has_put_if(io)
                    ? w2l__fileio_get_tagged(io, path, &data, &len, tag, err)
                    : w2l_fileio_read_all(io, path, &data, &len, err);
    if (rc == W2L_OK && w2l__holder_decode(data, len, h) != 0) {
        w2l__log(W2L_LOG_WARN, "state: lease %s is not a holder record; taken over", path);
        rc = W2L_NOTFOUND;
    }
    w2l__free(data);
    return rc;
}

static w2l_rc lease_read(w2l_fileio *io, const char *path, w2l_state_holder *h, w2l_error *err)
{
    char tag[128];
    return lease_read_tagged(io, path, h, tag, err);
}

/* Writes h's record. With conditional writes, only over the record of tag (read just
 * before; "" when there was none): W2L_CONFLICT when another wrote it meanwhile. */
static w2l_rc lease_write(w2l_fileio *io, const char *path, const w2l_state_holder *h,
                          const char *tag, w2l_error *err)
{
    char *text = NULL;
    W2L_TRY(w2l__holder_encode(h, &text, err));
    w2l_rc rc = w2l__fileio_has_put_if(io)
                    ? w2l__fileio_put_if(io, path, text, strlen(text), *tag ? tag : NULL, err)
                    : w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, text, strlen(text), err);
    w2l__free(text);
    return rc;
}

static int lease_live(const w2l_state_holder *h, int64_t now)
{
    return h->epoch && h->expires_ms > now && !w2l__holder_gone(h);
}

w2l_rc w2l__lease_take(w2l_fileio *io, const char *path, int64_t timeout_ms,
                       w2l_state_holder *me, w2l_state_holder *other, w2l_error *err)
{
    w2l_state_holder cur;
    char tag[128];
    w2l_rc rc = lease_read_tagged(io, path, &cur, tag, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    int64_t now = w2l__now_ms();
    if (rc == W2L_OK && lease_live(&cur, now)) {
        *other = cur;
        return W2L_BUSY;
    }
    me->epoch = (rc == W2L_OK ? cur.epoch : 0) + 1;
    me->expires_ms = now + timeout_ms;
    rc = lease_write(io, path, me, tag, err);
    if (rc == W2L_CONFLICT) { /* another taker was first: it holds the lease */
        if (lease_read(io, path, other, err) != W2L_OK) memset(other, 0, sizeof *other);
        return W2L_BUSY;
    }
    W2L_TRY(rc);
    /* two takers at once: the one whose record is there afterwards holds it */
    rc = lease_read(io, path, &cur, err);
    if (rc == W2L_NOTFOUND)
        return w2l__fail(err, W2L_IO, "lease %s: gone right after it was written", path);
    W2L_TRY(rc);
    if (!same_holder(&cur, me)) {
        *other = cur;
        return W2L_BUSY;
    }
    return W2L_OK;
}

w2l_rc w2l__lease_check(w2l_fileio *io, const char *path, int64_t timeout_ms, int force,
                        w2l_state_holder *me, w2l_error *err)
{
    w2l_state_holder cur;
    char tag[128];
    w2l_rc rc = lease_read_tagged(io, path, &cur, tag, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    if (rc == W2L_OK && same_holder(&cur, me)) {
        int64_t now = w2l__now_ms();
        if (!force && me->expires_ms - now > timeout_ms * 2 / 3) return W2L_OK;
        w2l_state_holder next = *me;
        next.expires_ms = now + timeout_ms;
        rc = lease_write(io, path, &next, tag, err);
        if (rc == W2L_OK) {
            *me = next;
            return W2L_OK;
        }
        if (rc != W2L_CONFLICT) return rc;
        /* written by another between the read and the conditional write: whose it is */
        rc = lease_read(io, path, &cur, err);
        if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    }
    /* gone: or being replaced just now, which a store may show as a moment without it */
    if (rc == W2L_NOTFOUND) rc = lease_read(io, path, &cur, err);
    if (rc != W2L_OK && rc != W2L_NOTFOUND) return rc;
    if (rc == W2L_NOTFOUND)
        return w2l__fail(err, W2L_BUSY,
                         "fenced: the lease %s of this job (epoch %llu) was removed; this "
                         "job stops so that no two write the state",
                         path, (unsigned long long)me->epoch);
    char since[32];
    w2l__format_utc_ms(cur.since_ms, since, sizeof since);
    return w2l__fail(err, W2L_BUSY,
                     "fenced: job \"%s\" (pid %lld on host %s, since %s) took the state "
                     "store over at epoch %llu (this job's: %llu); this job stops",
                     cur.job, cur.pid, cur.host, since, (unsigned long long)cur.epoch,
                     (unsigned long long)me->epoch);
}

w2l_rc w2l__lease_probe(w2l_fileio *io, const char *path, w2l_state_holder *out, w2l_error *err)
{
    w2l_state_holder cur;
    w2l_rc rc = lease_read(io, path, &cur, err);
    if (rc != W2L_OK) return rc;
    if (!lease_live(&cur, w2l__now_ms())) return W2L_NOTFOUND;
    *out = cur;
    return W2L_OK;
}

/* Released, the record stays with its epoch and an end in the past, so the next taker's
 * epoch is still one more (the epoch only grows); unless remove: a holder that created the
 * lease and wrote nothing leaves nothing behind. */
void w2l__lease_release(w2l_fileio *io, const char *path, const w2l_state_holder *me,
                        int remove)
{
    w2l_state_holder cur;
    w2l_error e;
    char tag[128];
    if (lease_read_tagged(io, path, &cur, tag, &e) != W2L_OK || !same_holder(&cur, me)) return;
    if (remove) {
        if (w2l_fileio_remove(io, path, &e) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "state: cannot remove the lease %s: %s (it expires by "
                                   "itself)", path, e.msg);
        return;
    }
    cur.expires_ms = 1; /* 0 would read as a lock held until its process ends */
    if (lease_write(io, path, &cur, tag, &e) != W2L_OK)
        w2l__log(W2L_LOG_WARN, "state: cannot release the lease %s: %s (it expires by itself)",
                 path, e.msg);
}
