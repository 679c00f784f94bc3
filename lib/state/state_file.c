/*
 * "file" checkpoint state store, the default: state lives in files through the file IO
 * plug-in, by default under WAREHOUSE/_w2l/state (or the DIR of "file:DIR").
 *
 * Layout and atomicity:
 *   DIR/ckpt-<N>.state   every (key, value) put for checkpoint N, written once at seal
 *                        (temp file, fsync, exclusive publish)
 *   DIR/LATEST           the decimal id of the newest sealed checkpoint, replaced
 *                        atomically (temp, fsync, rename) AFTER ckpt-<N>.state is durable
 * So a checkpoint is sealed exactly when LATEST names it; a crash between the two leaves an
 * orphan ckpt file, removed at the next run's first seal (not at open: a reader such as
 * `w2l status` opens the store beside a running job, whose ckpt file of the checkpoint it
 * is sealing is newer than LATEST for a moment). Until seal, puts stay in memory.
 *
 *   DIR/LOCK             (local) the holder's record, under a lock its process holds
 *   DIR/LEASE            (any other file IO: S3) the holder's lease, checked at every
 *                        seal and prune; state_lock.c
 * One job writes a store: w2l_state_lock takes LOCK or LEASE, and a second job is refused.
 *
 * Fencing a lease holder's seals (a file IO with conditional writes, version 5: S3's
 * If-Match / If-None-Match): a holder that passed its lease check and then stopped past
 * its lease (SIGSTOP, a pause) must not publish over the next holder's state. So there
 *   - LATEST reads "N\nepoch E\n": the holder's epoch beside the checkpoint id, so that no
 *     two holders ever write the same bytes (an ETag may be a hash of the content);
 *   - a taker (epoch above 1) rewrites LATEST at once with its epoch: the ETag the old
 *     holder last wrote is gone, though the taker has sealed nothing yet;
 *   - every seal's LATEST is written with If-Match on the ETag this process last wrote or
 *     read when it took the store (If-None-Match: * when there was none): W2L_BUSY,
 *     "fenced", when another wrote it since;
 *   - a checkpoint file is created with If-None-Match: *; one already there is replaced
 *     (If-Match its ETag) only after the lease is read back as still this process's: an
 *     orphan of a crash, never a new holder's;
 *   - files above LATEST are swept when the store is taken, not at a seal a stopped
 *     process may resume into.
 * A local directory keeps "N\n" and its lock file, which the kernel holds for its process.
 *
 * File grammar (all integers little-endian):
 *   "W2LSTATE" u32 version=1  u64 ckpt  u32 count
 *   count x ( u32 keylen  key  u32 vallen  val )
 *   u64 hash64 of every byte before it                  -- detects torn or corrupt files
 * Example: one entry "k" -> "v" for checkpoint 7 is 8+4+8+4 + (4+1+4+1) + 8 = 42 bytes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "state_int.h"
#include "../common/thread.h"
#include "../io/io.h"

#define MAGIC "W2LSTATE"
#define FILE_VERSION 1
#define HASH_SEED 0x57324c5354415445ULL

typedef w2l__kv_table table;

typedef struct file_state {
    w2l_state base;
    mtx_t mtx;
    w2l_fileio *io;
    w2l_fileio *lease_io;     /* the LEASE's requests, each bounded well within the lease */
    char *dir;
    uint64_t latest;          /* 0: none sealed */
    table sealed;             /* entries of `latest`, loaded */
    w2l__kv_pending pending;  /* unsealed checkpoints */
    table cache;              /* entries of an older sealed checkpoint last read */
    int swept;                /* orphans above LATEST removed (at the first seal) */
    int local;                /* a local directory: LOCK, else LEASE */
    int lock_fd;              /* LOCK held: -1 when not */
    int leased;               /* LEASE held, as `me` */
    int sealed_any;           /* this process sealed a checkpoint (under mtx) */
    int64_t lease_ms;         /* ha.lease-timeout */
    w2l_state_holder me;
    int cond;                 /* leased, on a file IO with conditional writes: fenced seals */
    int tag_known;            /* latest_tag is LATEST's as this process last wrote or read it */
    char latest_tag[128];     /* "" when there was no LATEST */
} file_state;

static w2l_rc check_held(file_state *fs, w2l_error *err);

static char *ckpt_path(const file_state *fs, uint64_t ckpt)
{
    return w2l__asprintf("%s/ckpt-%020llu.state", fs->dir, (unsigned long long)ckpt);
}

static void put_u32(w2l_buf *b, uint32_t v, w2l_rc *rc, w2l_error *err)
{
    unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24) };
    if (*rc == W2L_OK) *rc = w2l_buf_append(b, x, 4, err);
}

static void put_u64(w2l_buf *b, uint64_t v, w2l_rc *rc, w2l_error *err)
{
    put_u32(b, (uint32_t)v, rc, err);
    put_u32(b, (uint32_t)(v >> 32), rc, err);
}

static uint32_t get_u32(const unsigned char *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const unsigned char *p)
{
    return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static w2l_rc encode(const table *t, w2l_buf *b, w2l_error *err)
{
    w2l_rc rc = w2l_buf_append(b, MAGIC, 8, err);
    put_u32(b, FILE_VERSION, &rc, err);
    put_u64(b, t->ckpt, &rc, err);
    put_u32(b, (uint32_t)t->n, &rc, err);
    for (size_t i = 0; i < t->n && rc == W2L_OK; i++) {
        size_t kl = strlen(t->e[i].key);
        put_u32(b, (uint32_t)kl, &rc, err);
        if (rc == W2L_OK) rc = w2l_buf_append(b, t->e[i].key, kl, err);
        put_u32(b, (uint32_t)t->e[i].len, &rc, err);
        if (rc == W2L_OK) rc = w2l_buf_append(b, t->e[i].val, t->e[i].len, err);
    }
    if (rc == W2L_OK) put_u64(b, w2l__hash64(b->data, b->len, HASH_SEED), &rc, err);
    return rc;
}

static w2l_rc decode(const char *path, const unsigned char *d, size_t len, uint64_t want, table *t,
                     w2l_error *err)
{
    if (len < 32 || memcmp(d, MAGIC, 8) != 0)
        return w2l__fail(err, W2L_CORRUPT, "state file %s: not a state file (%zu bytes)", path,
                         len);
    if (get_u64(d + len - 8) != w2l__hash64(d, len - 8, HASH_SEED))
        return w2l__fail(err, W2L_CORRUPT, "state file %s: checksum mismatch (torn or damaged)",
                         path);
    if (get_u32(d + 8) != FILE_VERSION)
        return w2l__fail(err, W2L_CORRUPT, "state file %s: unknown version %u", path,
                         get_u32(d + 8));
    if (get_u64(d + 12) != want)
        return w2l__fail(err, W2L_CORRUPT, "state file %s: holds checkpoint %llu", path,
                         (unsigned long long)get_u64(d + 12));
    uint32_t count = get_u32(d + 20);
    size_t off = 24, end = len - 8;
    t->ckpt = want;
    for (uint32_t i = 0; i < count; i++) {
        if (end - off < 4) goto short_file;
        uint32_t kl = get_u32(d + off);
        off += 4;
        if (end - off < (size_t)kl + 4) goto short_file;
        char *key = w2l__strndup((const char *)d + off, kl);
        W2L_NOMEM_IF(!key, err);
        off += kl;
        uint32_t vl = get_u32(d + off);
        off += 4;
        if (end - off < vl) {
            w2l__free(key);
            goto short_file;
        }
        unsigned char *val = w2l__malloc(vl);
        if (!val) {
            w2l__free(key);
            return w2l__fail(err, W2L_NOMEM, "state file %s: out of memory", path);
        }
        memcpy(val, d + off, vl);
        off += vl;
        w2l_rc rc = w2l__kv_put(t, key, val, vl, err);
        w2l__free(key);
        W2L_TRY(rc);
    }
    if (off != end) goto short_file;
    return W2L_OK;
short_file:
    return w2l__fail(err, W2L_CORRUPT, "state file %s: entry lengths run past the end", path);
}

static w2l_rc load_ckpt(file_state *fs, uint64_t ckpt, table *t, w2l_error *err)
{
    char *path = ckpt_path(fs, ckpt);
    W2L_NOMEM_IF(!path, err);
    void *data;
    size_t len;
    w2l_rc rc = w2l_fileio_read_all(fs->io, path, &data, &len, err);
    if (rc == W2L_OK) {
        table tmp = {0};
        rc = decode(path, data, len, ckpt, &tmp, err);
        w2l__free(data);
        if (rc == W2L_OK) {
            w2l__kv_clear(t);
            *t = tmp;
        } else {
            w2l__kv_clear(&tmp);
        }
    }
    w2l__free(path);
    return rc;
}

typedef struct scan_ctx {
    file_state *fs;
    uint64_t keep_from, latest, on_disk; /* on_disk: what LATEST names now (prune) */
    int remove_newer, remove_older;
    w2l_rc rc;
    w2l_error *err;
} scan_ctx;

/* Removes orphans above latest (first seal) or checkpoints below keep_from (prune). */
static int scan_one(void *p, const char *name)
{
    scan_ctx *c = p;
    unsigned long long id;
    char tail[16];
    if (sscanf(name, "ckpt-%llu.%15s", &id, tail) != 2 || strcmp(tail, "state") != 0) return 0;
    if ((c->remove_newer && id > c->latest) ||
        (c->remove_older && id < c->keep_from && id != c->latest && id != c->on_disk)) {
        char *path = ckpt_path(c->fs, id);
        if (!path) {
            c->rc = w2l__fail(c->err, W2L_NOMEM, "out of memory");
            return 1;
        }
        c->rc = w2l_fileio_remove(c->fs->io, path, c->err);
        w2l__free(path);
        return c->rc != W2L_OK;
    }
    return 0;
}

/* LATEST's text: "N\n", or "N\nepoch E\n" (a lease holder's, N 0 when none is sealed).
 * -1 when it is neither. */
static int parse_latest(const char *text, size_t len, uint64_t *ckpt)
{
    char buf[96];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf) return -1;
    while (*end == '\n') end++;
    int epoch = 0;
    if (strncmp(end, "epoch ", 6) == 0) {
        char *e2;
        strtoull(end + 6, &e2, 10);
        if (e2 == end + 6) return -1;
        end = e2;
        while (*end == '\n') end++;
        epoch = 1;
    }
    if (*end || (v == 0 && !epoch)) return -1;
    *ckpt = v;
    return 0;
}

/* What DIR/LATEST names now into *out; 0 when there is none. With tag (conditional
 * writes), its ETag too ("" when there is none). */
static w2l_rc read_latest_tagged(file_state *fs, uint64_t *out, char *tag, w2l_error *err)
{
    *out = 0;
    if (tag) tag[0] = '\0';
    char *latest = w2l__path_join(fs->dir, "LATEST");
    void *data = NULL;
    size_t len = 0;
    w2l_rc rc = !latest ? w2l__fail(err, W2L_NOMEM, "out of memory")
                : tag   ? w2l__fileio_get_tagged(fs->lease_io, latest, &data, &len, tag, err)
                        : w2l_fileio_read_all(fs->io, latest, &data, &len, err);
    if (rc == W2L_NOTFOUND) {
        rc = W2L_OK;
    } else if (rc == W2L_OK && parse_latest(data, len, out) != 0) {
        rc = w2l__fail(err, W2L_CORRUPT, "%s: expected a checkpoint id, got '%.40s'", latest,
                       len ? (char *)data : "");
    }
    w2l__free(data);
    w2l__free(latest);
    return rc;
}

/* The lease, and LATEST when it is fenced (cond), are read and written through a file IO
 * of their own whose requests end within a quarter of the lease (three attempts at most,
 * fewer when s3.max-retries says so):
 * a request that hangs (an endpoint that took the connection and never answers, a process
 * paused in the middle of one) must not hold the store, and every commit waiting on it,
 * past the lease it is about. */
static w2l_rc open_lease_io(file_state *fs, const w2l_conf *conf, w2l_error *err)
{
    w2l_conf *c = conf ? w2l_conf_dup(conf) : w2l_conf_new();
    W2L_NOMEM_IF(!c, err);
    /* never more than the user's own settings allow */
    int64_t timeout = fs->lease_ms / 4 > 1000 ? fs->lease_ms / 4 : 1000, retries = 2, v = 0;
    if (w2l_conf_get_int(c, "s3.request-timeout", &v, NULL) == W2L_OK && v > 0 && v < timeout)
        timeout = v;
    if (w2l_conf_get_int(c, "s3.max-retries", &v, NULL) == W2L_OK && v >= 0 && v < retries)
        retries = v;
    char t[32], r[32];
    snprintf(t, sizeof t, "%lldms", (long long)timeout);
    snprintf(r, sizeof r, "%lld", (long long)retries);
    w2l_rc rc = w2l_conf_set(c, "s3.request-timeout", t, err);
    if (rc == W2L_OK) rc = w2l_conf_set(c, "s3.max-retries", r, err);
    if (rc == W2L_OK) rc = w2l__fileio_open_for(c, fs->dir, &fs->lease_io, err);
    w2l_conf_free(c);
    return rc;
}

static w2l_rc read_latest(file_state *fs, uint64_t *out, w2l_error *err)
{
    return read_latest_tagged(fs, out, NULL, err);
}

static w2l_rc fs_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                      w2l_state *self, w2l_error *err)
{
    (void)m;
    file_state *fs = (file_state *)self;
    if (mtx_init(&fs->mtx, mtx_plain) != thrd_success)
        return w2l__fail(err, W2L_ERROR, "mutex init failed");
    fs->lock_fd = -1;
    fs->lease_ms = 15000;
    if (uri && *uri) {
        fs->dir = w2l__strdup(uri);
    } else {
        const char *wh = NULL;
        if (conf) w2l_conf_get(conf, "warehouse", &wh, NULL);
        if (!wh || !*wh) {
            mtx_destroy(&fs->mtx);
            return w2l__fail(
                err, W2L_CONFIG,
                "the file state store needs a directory: set warehouse or use --state file:DIR");
        }
        fs->dir = w2l__path_join(wh, "_w2l/state");
    }
    /* the store's own file IO is the last one it opens (the fault tests arm that one) */
    w2l_rc rc = fs->dir ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        const char *io = w2l__fileio_name_for(conf, fs->dir);
        fs->local = !io || strcmp(io, "local") == 0;
        if (!fs->local && conf) rc = w2l_conf_get_int(conf, "ha.lease-timeout", &fs->lease_ms, err);
        if (rc == W2L_OK && !fs->local) rc = open_lease_io(fs, conf, err);
    }
    if (rc == W2L_OK) rc = w2l__fileio_open_for(conf, fs->dir, &fs->io, err);
    if (rc == W2L_OK) fs->cond = !fs->local && w2l__fileio_has_put_if(fs->io);
    /* a reader beside a running job: the checkpoint LATEST names may be pruned before it
     * is read, when newer ones were sealed meanwhile; LATEST is then read again */
    for (int attempt = 0; rc == W2L_OK; attempt++) {
        rc = read_latest(fs, &fs->latest, err);
        if (rc != W2L_OK || !fs->latest) break;
        rc = load_ckpt(fs, fs->latest, &fs->sealed, err);
        if (rc != W2L_NOTFOUND) break;
        if (attempt >= 20) { /* not a prune racing this read: the file is gone for good */
            rc = w2l__fail(err, W2L_CORRUPT,
                           "LATEST names checkpoint %llu, whose file ckpt-%020llu.state is "
                           "missing: removed by hand, or pruned by a second job writing this "
                           "store at the same time (a version without the store lock); "
                           "restore the file from a backup, or move the directory away to "
                           "start the job over (its tables keep what they committed)",
                           (unsigned long long)fs->latest, (unsigned long long)fs->latest);
            break;
        }
        rc = W2L_OK;
    }
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "state %s: ", fs->dir ? fs->dir : "");
        w2l__kv_clear(&fs->sealed);
        w2l_fileio_close(fs->lease_io);
        w2l_fileio_close(fs->io);
        w2l__free(fs->dir);
        mtx_destroy(&fs->mtx);
    }
    return rc;
}

static w2l_rc fs_put(w2l_state *self, uint64_t ckpt, const char *key, const void *val, size_t len,
                     w2l_error *err)
{
    file_state *fs = (file_state *)self;
    unsigned char *copy = w2l__malloc(len);
    W2L_NOMEM_IF(!copy, err);
    if (len) memcpy(copy, val, len);
    w2l_rc rc;
    mtx_lock(&fs->mtx);
    if (ckpt <= fs->latest) {
        w2l__free(copy);
        rc = w2l__fail(err, W2L_MISUSE, "put %s into checkpoint %llu, already sealed", key,
                       (unsigned long long)ckpt);
    } else {
        table *t = w2l__kv_pending_get(&fs->pending, ckpt, 1, err);
        if (t) rc = w2l__kv_put(t, key, copy, len, err);
        else {
            w2l__free(copy);
            rc = W2L_NOMEM;
        }
    }
    mtx_unlock(&fs->mtx);
    return rc;
}

static w2l_rc fs_get(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    w2l_rc rc = W2L_OK;
    mtx_lock(&fs->mtx);
    const table *t = NULL;
    if (ckpt == fs->latest && fs->latest) t = &fs->sealed;
    else if (ckpt > fs->latest) t = w2l__kv_pending_get(&fs->pending, ckpt, 0, err);
    else {
        if (fs->cache.ckpt != ckpt || !fs->cache.e) rc = load_ckpt(fs, ckpt, &fs->cache, err);
        if (rc == W2L_NOTFOUND)
            rc = w2l__fail(err, W2L_NOTFOUND, "checkpoint %llu was pruned",
                           (unsigned long long)ckpt);
        t = &fs->cache;
    }
    if (rc == W2L_OK) {
        const w2l__kv_entry *e = t ? w2l__kv_find(t, key) : NULL;
        if (e) rc = w2l_buf_append(out, e->val, e->len, err);
        else
            rc = w2l__fail(err, W2L_NOTFOUND, "no key %s in checkpoint %llu", key,
                           (unsigned long long)ckpt);
    }
    mtx_unlock(&fs->mtx);
    return rc;
}

static w2l_rc fs_keys(w2l_state *self, uint64_t ckpt, const char *prefix,
                      int (*fn)(void *, const char *), void *ctx, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    w2l_buf keys = {0};
    size_t count = 0;
    w2l_rc rc = W2L_OK;
    mtx_lock(&fs->mtx);
    const table *t = NULL;
    if (ckpt == fs->latest && fs->latest) t = &fs->sealed;
    else if (ckpt > fs->latest) t = w2l__kv_pending_get(&fs->pending, ckpt, 0, err);
    else if ((rc = (fs->cache.ckpt == ckpt && fs->cache.e)
                       ? W2L_OK
                       : load_ckpt(fs, ckpt, &fs->cache, err)) == W2L_OK)
        t = &fs->cache;
    if (rc == W2L_OK) rc = w2l__kv_collect_keys(t, prefix, &keys, &count, err);
    mtx_unlock(&fs->mtx);
    if (rc == W2L_OK) w2l__kv_call_keys(&keys, count, fn, ctx);
    w2l_buf_release(&keys);
    return rc == W2L_NOTFOUND ? W2L_OK : rc;
}

/* ---- fenced seals on a lease (conditional writes); fs->mtx held ---- */

static char *lease_path(const file_state *fs)
{
    return w2l__path_join(fs->dir, "LEASE");
}

/* LATEST's text for checkpoint ckpt written by this holder. */
static int latest_text(const file_state *fs, uint64_t ckpt, char *buf, size_t size)
{
    return snprintf(buf, size, "%llu\nepoch %llu\n", (unsigned long long)ckpt,
                    (unsigned long long)fs->me.epoch);
}

/* The error of a holder whose write lost to another's: the lease names the new holder
 * when it was taken over. */
static w2l_rc fenced(file_state *fs, const char *what, w2l_error *err)
{
    char *lp = lease_path(fs);
    w2l_rc rc = lp ? w2l__lease_check(fs->lease_io, lp, fs->lease_ms, 0, &fs->me, err) : W2L_NOMEM;
    w2l__free(lp);
    if (rc == W2L_BUSY) return rc;
    return w2l__fail(err, W2L_BUSY,
                     "fenced: %s of state store %s was written by another process since this "
                     "one (epoch %llu) last wrote or read it; this job stops",
                     what, fs->dir, (unsigned long long)fs->me.epoch);
}

/* Reads LATEST back after this process wrote text there: its ETag becomes the one the
 * next seal's write is conditional on. W2L_BUSY (fenced) when another wrote it since. */
static w2l_rc learn_latest_tag(file_state *fs, const char *path, const char *text,
                               w2l_error *err)
{
    void *data = NULL;
    size_t len = 0;
    char tag[128];
    fs->tag_known = 0;
    w2l_rc rc = w2l__fileio_get_tagged(fs->lease_io, path, &data, &len, tag, err);
    if (rc == W2L_OK && (len != strlen(text) || memcmp(data, text, len) != 0))
        rc = fenced(fs, "LATEST", err);
    else if (rc == W2L_NOTFOUND)
        rc = fenced(fs, "LATEST", err);
    w2l__free(data);
    if (rc == W2L_OK) {
        memcpy(fs->latest_tag, tag, sizeof tag);
        fs->tag_known = 1;
    }
    return rc;
}

/* Taking the store (cond): LATEST's ETag as found; above epoch 1 LATEST is rewritten
 * with this holder's epoch first, so that a seal the previous holder may still attempt
 * fails. Then files above LATEST (a crashed or fenced holder's) are swept. */
static w2l_rc take_latest(file_state *fs, w2l_error *err)
{
    char *path = w2l__path_join(fs->dir, "LATEST");
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = W2L_OK;
    for (int attempt = 0;; attempt++) {
        uint64_t now = 0;
        char tag[128], text[96];
        rc = read_latest_tagged(fs, &now, tag, err);
        if (rc != W2L_OK) break;
        if (now && now != fs->latest) {
            rc = load_ckpt(fs, now, &fs->sealed, err);
            if (rc != W2L_OK) break;
        }
        fs->latest = now;
        if (fs->me.epoch <= 1) { /* nobody held it before: nothing to fence, nothing written */
            memcpy(fs->latest_tag, tag, sizeof tag);
            fs->tag_known = 1;
            break;
        }
        latest_text(fs, now, text, sizeof text);
        rc = w2l__fileio_put_if(fs->lease_io, path, text, strlen(text), tag[0] ? tag : NULL, err);
        if (rc == W2L_OK) {
            rc = learn_latest_tag(fs, path, text, err);
            break;
        }
        /* the previous holder's seal landed meanwhile: take that one */
        if (rc != W2L_CONFLICT || attempt >= 5) break;
    }
    w2l__free(path);
    if (rc == W2L_OK) {
        scan_ctx c = {fs, 0, fs->latest, 0, 1, 0, W2L_OK, err};
        rc = w2l_fileio_list(fs->io, fs->dir, scan_one, &c, err);
        if (rc == W2L_OK) rc = c.rc;
        fs->swept = rc == W2L_OK;
    }
    return rc;
}

/* Creates checkpoint file path (cond). One already there with other bytes is replaced
 * only once the lease is read back as this process's: then it is an orphan (a crashed
 * earlier holder's, or a stopped one's late write), never the next holder's. */
static w2l_rc write_ckpt_cond(file_state *fs, const char *path, const w2l_buf *b, w2l_error *err)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        w2l_rc rc = w2l__fileio_put_if(fs->io, path, b->data, b->len, NULL, err);
        if (rc != W2L_CONFLICT) return rc;
        void *data = NULL;
        size_t len = 0;
        char tag[128];
        rc = w2l__fileio_get_tagged(fs->io, path, &data, &len, tag, err);
        if (rc == W2L_NOTFOUND) continue; /* removed meanwhile */
        int same = rc == W2L_OK && len == b->len && memcmp(data, b->data, len) == 0;
        w2l__free(data);
        W2L_TRY(rc);
        if (same) return W2L_OK;
        char *lp = lease_path(fs);
        W2L_NOMEM_IF(!lp, err);
        rc = w2l__lease_check(fs->lease_io, lp, fs->lease_ms, 0, &fs->me, err);
        w2l__free(lp);
        W2L_TRY(rc);
        rc = w2l__fileio_put_if(fs->io, path, b->data, b->len, tag, err);
        if (rc != W2L_CONFLICT) return rc;
    }
    return w2l__fail(err, W2L_CONFLICT, "%s: written by another process at each attempt", path);
}

/* Publishes ckpt in LATEST (cond): If-Match on the ETag this process last wrote or read. */
static w2l_rc publish_latest(file_state *fs, const char *path, uint64_t ckpt, w2l_error *err)
{
    char text[96];
    if (!fs->tag_known) { /* a read back failed: LATEST must still be what it wrote */
        char tag[128], want[96];
        void *data = NULL;
        size_t len = 0;
        latest_text(fs, fs->latest, want, sizeof want);
        w2l_rc rc = w2l__fileio_get_tagged(fs->lease_io, path, &data, &len, tag, err);
        int same = rc == W2L_OK && len == strlen(want) && memcmp(data, want, len) == 0;
        w2l__free(data);
        if (rc == W2L_NOTFOUND && !fs->latest) tag[0] = '\0';
        else if (rc == W2L_NOTFOUND || (rc == W2L_OK && !same)) return fenced(fs, "LATEST", err);
        else if (rc != W2L_OK) return rc;
        memcpy(fs->latest_tag, tag, sizeof tag);
        fs->tag_known = 1;
    }
    latest_text(fs, ckpt, text, sizeof text);
    w2l_rc rc = w2l__fileio_put_if(fs->lease_io, path, text, strlen(text),
                                   fs->latest_tag[0] ? fs->latest_tag : NULL, err);
    if (rc == W2L_CONFLICT) return fenced(fs, "LATEST", err);
    W2L_TRY(rc);
    w2l_error e;
    if (learn_latest_tag(fs, path, text, &e) == W2L_BUSY) { /* sealed, then taken over */
        if (err) *err = e;
        return W2L_BUSY;
    }
    return W2L_OK; /* a read back that failed is made good at the next seal */
}

static w2l_rc fs_seal(w2l_state *self, uint64_t ckpt, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    mtx_lock(&fs->mtx);
    table empty = {0};
    empty.ckpt = ckpt;
    const table *t = w2l__kv_pending_get(&fs->pending, ckpt, 0, err);
    if (!t) t = &empty;
    w2l_buf b = {0};
    char *path = ckpt_path(fs, ckpt), *latest = w2l__path_join(fs->dir, "LATEST");
    char num[32];
    int nl = snprintf(num, sizeof num, "%llu\n", (unsigned long long)ckpt);
    w2l_rc rc = path && latest ? encode(t, &b, err) : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = check_held(fs, err);
    if (rc == W2L_OK && !fs->swept) { /* leftovers of a crashed earlier run */
        scan_ctx c = {fs, 0, fs->latest, 0, 1, 0, W2L_OK, err};
        rc = w2l_fileio_list(fs->io, fs->dir, scan_one, &c, err);
        if (rc == W2L_OK) rc = c.rc;
        fs->swept = rc == W2L_OK;
    }
    int cond = fs->leased && fs->cond;
    /* a leftover of a crashed earlier run with this id is not sealed: replace it */
    if (rc == W2L_OK)
        rc = cond ? write_ckpt_cond(fs, path, &b, err)
                  : w2l_fileio_write_all(fs->io, path, W2L_CREATE_REPLACE, b.data, b.len, err);
    if (rc == W2L_OK)
        rc = cond ? publish_latest(fs, latest, ckpt, err)
                  : w2l_fileio_write_all(fs->io, latest, W2L_CREATE_REPLACE, num, (size_t)nl, err);
    if (rc == W2L_OK) {
        w2l__kv_clear(&fs->sealed);
        w2l__kv_pending_take(&fs->pending, ckpt, &fs->sealed);
        fs->latest = ckpt;
        fs->sealed_any = 1;
    } else {
        w2l__error_prefix(err, "seal checkpoint %llu: ", (unsigned long long)ckpt);
    }
    mtx_unlock(&fs->mtx);
    w2l_buf_release(&b);
    w2l__free(path);
    w2l__free(latest);
    return rc;
}

static w2l_rc fs_latest(w2l_state *self, uint64_t *ckpt, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    mtx_lock(&fs->mtx);
    *ckpt = fs->latest;
    mtx_unlock(&fs->mtx);
    return *ckpt ? W2L_OK : w2l__fail(err, W2L_NOTFOUND, "no sealed checkpoint");
}

static w2l_rc fs_prune(w2l_state *self, uint64_t keep_from, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    mtx_lock(&fs->mtx);
    scan_ctx c = {fs, keep_from, fs->latest, 0, 0, 1, W2L_OK, err};
    w2l_rc rc = check_held(fs, err);
    if (rc == W2L_OK) rc = read_latest(fs, &c.on_disk, err);
    if (rc == W2L_OK) rc = w2l_fileio_list(fs->io, fs->dir, scan_one, &c, err);
    if (rc == W2L_OK) rc = c.rc;
    if (fs->cache.ckpt < keep_from) w2l__kv_clear(&fs->cache);
    mtx_unlock(&fs->mtx);
    return rc;
}

static char *holder_path(const file_state *fs)
{
    return w2l__path_join(fs->dir, fs->local ? "LOCK" : "LEASE");
}

static w2l_rc fs_lock(w2l_state *self, w2l_state_holder *me, w2l_state_holder *other,
                      w2l_error *err)
{
    file_state *fs = (file_state *)self;
    if (fs->lock_fd >= 0 || fs->leased)
        return w2l__fail(err, W2L_MISUSE, "state %s: already locked by this process", fs->dir);
    char *path = holder_path(fs);
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = W2L_OK;
    if (fs->local) {
        rc = w2l__lockfile_take(path, me, other, &fs->lock_fd, err);
    } else {
        rc = w2l__lease_take(fs->lease_io, path, fs->lease_ms, me, other, err);
        if (rc == W2L_OK) {
            mtx_lock(&fs->mtx);
            fs->me = *me;
            fs->leased = 1;
            mtx_unlock(&fs->mtx);
        }
    }
    if (rc == W2L_BUSY) snprintf(err->msg, sizeof err->msg, "%s", fs->dir);
    w2l__free(path);
    /* the job that held it until now may have sealed since open read LATEST */
    uint64_t now = 0;
    if (rc == W2L_OK && fs->leased && fs->cond) {
        mtx_lock(&fs->mtx);
        rc = take_latest(fs, err);
        mtx_unlock(&fs->mtx);
        return rc;
    }
    if (rc == W2L_OK) rc = read_latest(fs, &now, err);
    if (rc == W2L_OK && now && now != fs->latest) {
        mtx_lock(&fs->mtx);
        rc = load_ckpt(fs, now, &fs->sealed, err);
        if (rc == W2L_OK) fs->latest = now;
        mtx_unlock(&fs->mtx);
    }
    return rc;
}

static w2l_rc fs_holder(w2l_state *self, w2l_state_holder *out, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    char *path = holder_path(fs);
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = fs->local ? w2l__lockfile_probe(path, out, err)
                          : w2l__lease_probe(fs->lease_io, path, out, err);
    w2l__free(path);
    return rc;
}

/* Before a seal or a prune (fs->mtx held): the lease is still this job's (renewed when due). */
static w2l_rc check_held(file_state *fs, w2l_error *err)
{
    if (!fs->leased) return W2L_OK;
    char *path = holder_path(fs);
    W2L_NOMEM_IF(!path, err);
    w2l_rc rc = w2l__lease_check(fs->lease_io, path, fs->lease_ms, 0, &fs->me, err);
    w2l__free(path);
    return rc;
}

static w2l_rc fs_renew(w2l_state *self, int64_t *expires_ms, w2l_error *err)
{
    file_state *fs = (file_state *)self;
    mtx_lock(&fs->mtx);
    w2l_rc rc = W2L_OK;
    if (fs->leased) {
        char *path = holder_path(fs);
        rc = path ? w2l__lease_check(fs->lease_io, path, fs->lease_ms, 1, &fs->me, err)
                  : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(path);
    }
    *expires_ms = fs->leased ? fs->me.expires_ms : 0;
    mtx_unlock(&fs->mtx);
    return rc;
}

static void fs_close(w2l_state *self)
{
    file_state *fs = (file_state *)self;
    w2l__lockfile_release(fs->lock_fd);
    if (fs->leased) {
        char *path = holder_path(fs);
        /* a job refused before it sealed anything on a store it found without a lease
         * (its configuration, say) writes nothing, its lease included */
        if (path)
            w2l__lease_release(fs->lease_io, path, &fs->me, fs->me.epoch == 1 && !fs->sealed_any);
        w2l__free(path);
    }
    w2l__kv_clear(&fs->sealed);
    w2l__kv_clear(&fs->cache);
    w2l__kv_pending_free(&fs->pending);
    w2l_fileio_close(fs->lease_io);
    w2l_fileio_close(fs->io);
    w2l__free(fs->dir);
    mtx_destroy(&fs->mtx);
}

const w2l_state_methods w2l__state_file = {
    .version = W2L_STATE_METHODS_V3,
    .name = "file",
    .size = sizeof(file_state),
    .open = fs_open,
    .put = fs_put,
    .get = fs_get,
    .keys = fs_keys,
    .seal = fs_seal,
    .latest = fs_latest,
    .prune = fs_prune,
    .close = fs_close,
    .lock = fs_lock,
    .holder = fs_holder,
    .renew = fs_renew,
};
