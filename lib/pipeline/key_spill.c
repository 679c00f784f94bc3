/*
 * Spilled key runs (key_spill.h): sorted files of (key, data file, row position) records
 * with a sparse block index and a Bloom filter in memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key_spill.h"

#ifdef W2L_TESTING
long w2l__kspill_fail_write = -1;
#endif

#define REC_FIXED 16u              /* length 4, file 4, position 8 */
#define WBUF (64u << 10)           /* bytes buffered before a write */
#define BLOOM_BITS_PER_KEY 10
#define BLOOM_PROBES 7             /* bits a key sets, all in one 512-bit block (a cache line) */

#define KDIR_OPEN 64               /* runs of a directory with an open descriptor, at most */

struct w2l__kdir {
    char *path;
    uint64_t seq;
    w2l__krun *mru, *lru;      /* the runs with an open descriptor, most recently used first */
    size_t nopen;
};

typedef struct kblk {
    uint64_t off;              /* where the block starts in the file */
    uint64_t koff;             /* its first key, in keys */
    uint32_t len;              /* its bytes */
    uint32_t klen;
} kblk;

struct w2l__krun {
    char *path;
    char *what;
    w2l__kdir *dir;
    int fd;                    /* -1: closed (opened again on use) */
    w2l__krun *prev, *next;    /* in dir's list of open runs */
    uint64_t size;             /* bytes in the file */
    uint64_t nrec;
    /* Bloom filter: mask + 1 bits */
    uint64_t *bloom;
    uint64_t mask;
    uint64_t fkeys;            /* keys set in it (some maybe gone since: see create) */
    /* sparse index: the blocks, their first keys */
    kblk *blk;
    size_t nblk, blkcap;
    unsigned char *keys;
    size_t keylen, keycap;
    uint64_t *frefs;           /* records per file */
    size_t nfiles;
    /* writing: the buffer, the block in progress and the last key written */
    unsigned char *wbuf;
    size_t wlen;
    uint64_t bstart;           /* where the block in progress starts */
    unsigned char *last;
    uint32_t lastlen;
    size_t lastcap;
    int has_last;
    /* reading: a block, and the records found */
    unsigned char *rbuf;
    size_t rcap;
    w2l__krec *hits;
    size_t hcap;
};

struct w2l__krun_iter {
    w2l__krun *r;
    uint64_t off;              /* file offset of buf[0] */
    unsigned char *buf;
    size_t len, at, cap;
};

int w2l__krun_key_cmp(const unsigned char *a, uint32_t na, const unsigned char *b, uint32_t nb)
{
    if (na != nb) return na < nb ? -1 : 1;
    if (na >= 8 && na <= 16) {
        /* the common keys (one integer column: 12 bytes) as two overlapping words, first
         * one then the other: any total order serves, as long as it is this one */
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return x < y ? -1 : 1;
        memcpy(&x, a + na - 8, 8);
        memcpy(&y, b + na - 8, 8);
        return x < y ? -1 : x > y;
    }
    return na ? memcmp(a, b, na) : 0;
}

/* ------------------------------------------------------------------ directory ----- */

/* This host's name as it goes into a directory's name ('-' and '/' replaced). */
static void host_name(char *h, size_t n)
{
    if (gethostname(h, n - 1) != 0) snprintf(h, n, "host");
    h[n - 1] = '\0';
    for (char *c = h; *c; c++)
        if (*c == '-' || *c == '/') *c = '_';
}

/* Removes the directories in parent that a process of this host which is gone left (it
 * was killed before it closed them): "w2l-keys-HOST-PID-XXXXXX", PID not running. */
static void remove_stale(const char *parent, const char *host)
{
    DIR *dir = opendir(parent);
    if (!dir) return;
    char head[300];
    int hn = snprintf(head, sizeof head, "w2l-keys-%s-", host);
    for (struct dirent *e; (e = readdir(dir));) {
        if (hn <= 0 || (size_t)hn >= sizeof head || strncmp(e->d_name, head, (size_t)hn) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + hn, &end, 10);
        if (pid <= 0 || *end != '-') continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* running (or another
                                                                      user's): kept */
        char *path = w2l__asprintf("%s/%s", parent, e->d_name);
        DIR *sub = path ? opendir(path) : NULL;
        for (struct dirent *f; sub && (f = readdir(sub));) {
            if (strncmp(f->d_name, "run-", 4) != 0) continue;
            char *fp = w2l__asprintf("%s/%s", path, f->d_name);
            if (fp) unlink(fp);
            w2l__free(fp);
        }
        if (sub) closedir(sub);
        if (path && rmdir(path) == 0)
            w2l__log(W2L_LOG_INFO, "removed %s, left by a process that is gone", path);
        w2l__free(path);
    }
    closedir(dir);
}

w2l_rc w2l__kdir_open(const char *parent, w2l__kdir **out, w2l_error *err)
{
    if (!parent || !*parent) parent = getenv("TMPDIR");
    if (!parent || !*parent) parent = "/tmp";
    char host[128];
    host_name(host, sizeof host);
    remove_stale(parent, host);
    w2l__kdir *d = w2l__calloc(1, sizeof *d);
    char *p = w2l__asprintf("%s/w2l-keys-%s-%ld-XXXXXX", parent, host, (long)getpid());
    if (!d || !p) {
        w2l__free(d);
        w2l__free(p);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (!mkdtemp(p)) { /* mode 0700 */
        w2l_rc rc = w2l__fail_errno(err, W2L_IO, errno,
                                    "creating the key index spill directory in %s", parent);
        w2l__free(p);
        w2l__free(d);
        return rc;
    }
    d->path = p;
    *out = d;
    return W2L_OK;
}

void w2l__kdir_close(w2l__kdir *d)
{
    if (!d) return;
    if (rmdir(d->path) != 0)
        w2l__log(W2L_LOG_WARN, "removing the key index spill directory %s: %s", d->path,
                 strerror(errno));
    w2l__free(d->path);
    w2l__free(d);
}

/* ------------------------------------------------------------------- writing ------ */

static w2l_rc io_fail(const w2l__krun *r, int e, const char *op, w2l_error *err)
{
    return w2l__fail_errno(err, W2L_IO, e, "table %s: key index spill file %s: %s", r->what,
                           r->path, op);
}

static void unlink_open(w2l__krun *r)
{
    w2l__kdir *d = r->dir;
    if (r->prev) r->prev->next = r->next;
    else d->mru = r->next;
    if (r->next) r->next->prev = r->prev;
    else d->lru = r->prev;
    r->prev = r->next = NULL;
}

/* r's descriptor, opened again when closed; r becomes the most recently used, and the
 * least recently used run beyond KDIR_OPEN loses its descriptor. */
static w2l_rc use_fd(w2l__krun *r, int flags, w2l_error *err)
{
    w2l__kdir *d = r->dir;
    if (r->fd >= 0) {
        unlink_open(r);
    } else {
        r->fd = open(r->path, flags | O_CLOEXEC, 0600);
        if (r->fd < 0) return io_fail(r, errno, flags & O_CREAT ? "create" : "open", err);
        d->nopen++;
    }
    r->next = d->mru;
    if (d->mru) d->mru->prev = r;
    d->mru = r;
    if (!d->lru) d->lru = r;
    while (d->nopen > KDIR_OPEN && d->lru != r) {
        w2l__krun *o = d->lru;
        unlink_open(o);
        close(o->fd);
        o->fd = -1;
        d->nopen--;
    }
    return W2L_OK;
}

static w2l_rc flush(w2l__krun *r, w2l_error *err)
{
    W2L_TRY(use_fd(r, O_RDWR, err));
    size_t done = 0;
    while (done < r->wlen) {
        ssize_t n;
#ifdef W2L_TESTING
        if (w2l__kspill_fail_write >= 0 && w2l__kspill_fail_write-- == 0) {
            n = -1;
            errno = EIO;
        } else
#endif
            n = pwrite(r->fd, r->wbuf + done, r->wlen - done, (off_t)(r->size + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return io_fail(r, n < 0 ? errno : ENOSPC, "write", err);
        done += (size_t)n;
    }
    r->size += r->wlen;
    r->wlen = 0;
    return W2L_OK;
}

w2l_rc w2l__krun_create(w2l__kdir *d, const char *what, uint64_t nmax, size_t nfiles,
                        const w2l__krun *base, int *inherited, w2l__krun **out, w2l_error *err)
{
    *inherited = 0;
    w2l__krun *r = w2l__calloc(1, sizeof *r);
    W2L_NOMEM_IF(!r, err);
    r->fd = -1;
    uint64_t bits = 512;
    while (bits < nmax * BLOOM_BITS_PER_KEY && bits < ((uint64_t)1 << 40)) bits *= 2;
    r->mask = bits - 1;
    r->path = w2l__asprintf("%s/run-%llu", d->path, (unsigned long long)++d->seq);
    r->what = w2l__strdup(what);
    r->bloom = w2l__calloc(bits / 64, sizeof *r->bloom);
    r->frefs = w2l__calloc(nfiles + 1, sizeof *r->frefs);
    r->nfiles = nfiles;
    r->wbuf = w2l__malloc(WBUF);
    if (!r->path || !r->what || !r->bloom || !r->frefs || !r->wbuf) {
        w2l__krun_free(r);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    /* the base's filter, when it is no larger and not mostly keys gone since: a block of
     * it serves every block of this one its index bits map onto */
    if (base && base->mask <= r->mask && base->fkeys <= 2 * nmax) {
        uint64_t nb = (base->mask + 1) / 64;
        for (uint64_t at = 0; at < bits / 64; at += nb)
            memcpy(r->bloom + at, base->bloom, nb * sizeof *r->bloom);
        r->fkeys = base->fkeys;
        *inherited = 1;
    }
    r->dir = d;
    w2l_rc rc = use_fd(r, O_RDWR | O_CREAT | O_EXCL, err);
    if (rc != W2L_OK) {
        r->dir = NULL; /* nothing of it to remove */
        w2l__krun_free(r);
        return rc;
    }
    *out = r;
    return W2L_OK;
}

static w2l_rc grow(void **p, size_t *cap, size_t need, size_t elem, w2l_error *err)
{
    if (need <= *cap) return W2L_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) ncap *= 2;
    void *np = w2l__realloc(*p, ncap * elem);
    W2L_NOMEM_IF(!np, err);
    *p = np;
    *cap = ncap;
    return W2L_OK;
}

/* The key's block of the filter (8 words) and the bits it sets there: 7 bit numbers of 9
 * bits each, from a second hash. */
static inline uint64_t *bloom_block(const w2l__krun *r, uint64_t h)
{
    return r->bloom + ((h & r->mask) >> 9 << 3);
}

static inline uint64_t bloom_bits(uint64_t h) { return w2l__mix64(h ^ 0x9e3779b97f4a7c15ULL); }

/* Starts a block at the current end, whose first key is key. */
static w2l_rc block_start(w2l__krun *r, const unsigned char *key, uint32_t len, w2l_error *err)
{
    W2L_TRY(grow((void **)&r->blk, &r->blkcap, r->nblk + 1, sizeof *r->blk, err));
    W2L_TRY(grow((void **)&r->keys, &r->keycap, r->keylen + len + 1, 1, err));
    if (r->nblk) r->blk[r->nblk - 1].len = (uint32_t)(r->size + r->wlen - r->bstart);
    r->bstart = r->size + r->wlen;
    if (len) memcpy(r->keys + r->keylen, key, len);
    r->blk[r->nblk++] = (kblk){r->bstart, r->keylen, 0, len};
    r->keylen += len;
    return W2L_OK;
}

w2l_rc w2l__krun_add(w2l__krun *r, const unsigned char *key, uint32_t len, uint64_t h,
                     int filter, uint32_t file, int64_t pos, w2l_error *err)
{
    int c = r->has_last ? w2l__krun_key_cmp(r->last, r->lastlen, key, len) : -1;
    if (c != 0) {
        if (c > 0)
            return w2l__fail(err, W2L_CORRUPT, "table %s: key index spill file %s: keys out "
                             "of order", r->what, r->path);
        if (!r->nblk || r->size + r->wlen - r->bstart >= KSPILL_BLOCK)
            W2L_TRY(block_start(r, key, len, err));
        W2L_TRY(grow((void **)&r->last, &r->lastcap, (size_t)len + 1, 1, err));
        if (len) memcpy(r->last, key, len);
        r->lastlen = len;
        r->has_last = 1;
        if (filter) {
            uint64_t *blk = bloom_block(r, h), b = bloom_bits(h);
            for (int i = 0; i < BLOOM_PROBES; i++, b >>= 9) blk[(b >> 6) & 7] |= 1ULL << (b & 63);
            r->fkeys++;
        }
    }
    size_t need = REC_FIXED + len;
    if (r->wlen + need > WBUF) W2L_TRY(flush(r, err));
    if (need > WBUF) { /* a key larger than the buffer: written by itself */
        unsigned char *big = w2l__malloc(need);
        W2L_NOMEM_IF(!big, err);
        unsigned char *keep = r->wbuf;
        r->wbuf = big;
        memcpy(big, &len, 4);
        memcpy(big + 4, key, len);
        memcpy(big + 4 + len, &file, 4);
        memcpy(big + 8 + len, &pos, 8);
        r->wlen = need;
        w2l_rc rc = flush(r, err);
        r->wbuf = keep;
        w2l__free(big);
        W2L_TRY(rc);
    } else {
        unsigned char *o = r->wbuf + r->wlen;
        memcpy(o, &len, 4);
        if (len) memcpy(o + 4, key, len);
        memcpy(o + 4 + len, &file, 4);
        memcpy(o + 8 + len, &pos, 8);
        r->wlen += need;
    }
    if (file < r->nfiles) r->frefs[file]++;
    r->nrec++;
    return W2L_OK;
}

w2l_rc w2l__krun_finish(w2l__krun *r, w2l_error *err)
{
    W2L_TRY(flush(r, err));
    if (r->nblk) r->blk[r->nblk - 1].len = (uint32_t)(r->size - r->bstart);
    w2l__free(r->wbuf);
    w2l__free(r->last);
    r->wbuf = r->last = NULL;
    r->lastcap = 0;
    return W2L_OK;
}

void w2l__krun_free(w2l__krun *r)
{
    if (!r) return;
    if (r->dir) {
        if (r->fd >= 0) {
            unlink_open(r);
            close(r->fd);
            r->dir->nopen--;
        }
        if (unlink(r->path) != 0 && errno != ENOENT)
            w2l__log(W2L_LOG_WARN, "removing the key index spill file %s: %s", r->path,
                     strerror(errno));
    }
    w2l__free(r->path);
    w2l__free(r->what);
    w2l__free(r->bloom);
    w2l__free(r->blk);
    w2l__free(r->keys);
    w2l__free(r->frefs);
    w2l__free(r->wbuf);
    w2l__free(r->last);
    w2l__free(r->rbuf);
    w2l__free(r->hits);
    w2l__free(r);
}

/* ------------------------------------------------------------------- reading ------ */

static w2l_rc read_at(w2l__krun *r, unsigned char *buf, size_t n, uint64_t off,
                      w2l_error *err)
{
    W2L_TRY(use_fd(r, O_RDONLY, err));
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(r->fd, buf + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return io_fail(r, k < 0 ? errno : EIO, k < 0 ? "read" : "short read", err);
        done += (size_t)k;
    }
    return W2L_OK;
}

static w2l_rc corrupt(const w2l__krun *r, uint64_t off, w2l_error *err)
{
    return w2l__fail(err, W2L_CORRUPT, "table %s: key index spill file %s: bad record at %llu",
                     r->what, r->path, (unsigned long long)off);
}

w2l_rc w2l__krun_find(w2l__krun *r, const unsigned char *key, uint32_t len, uint64_t h,
                      const w2l__krec **out, size_t *n, w2l_error *err)
{
    *n = 0;
    *out = NULL;
    if (!r->nblk) return W2L_OK;
    const uint64_t *blk = bloom_block(r, h);
    uint64_t b = bloom_bits(h);
    for (int i = 0; i < BLOOM_PROBES; i++, b >>= 9)
        if (!(blk[(b >> 6) & 7] >> (b & 63) & 1)) return W2L_OK;
    /* the last block whose first key is at most key */
    size_t lo = 0, hi = r->nblk;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        const kblk *m = &r->blk[mid];
        if (w2l__krun_key_cmp(r->keys + m->koff, m->klen, key, len) <= 0) lo = mid;
        else hi = mid;
    }
    const kblk *k = &r->blk[lo];
    if (w2l__krun_key_cmp(r->keys + k->koff, k->klen, key, len) > 0) return W2L_OK;
    W2L_TRY(grow((void **)&r->rbuf, &r->rcap, k->len + 1, 1, err));
    W2L_TRY(read_at(r, r->rbuf, k->len, k->off, err));
    for (size_t at = 0; at < k->len;) {
        uint32_t kl;
        if (k->len - at < REC_FIXED) return corrupt(r, k->off + at, err);
        memcpy(&kl, r->rbuf + at, 4);
        if (k->len - at - REC_FIXED < kl) return corrupt(r, k->off + at, err);
        int c = w2l__krun_key_cmp(r->rbuf + at + 4, kl, key, len);
        if (c > 0) break;
        if (c == 0) {
            W2L_TRY(grow((void **)&r->hits, &r->hcap, *n + 1, sizeof *r->hits, err));
            w2l__krec *x = &r->hits[(*n)++];
            x->key = r->rbuf + at + 4;
            x->len = kl;
            memcpy(&x->file, r->rbuf + at + 4 + kl, 4);
            memcpy(&x->pos, r->rbuf + at + 8 + kl, 8);
        }
        at += REC_FIXED + kl;
    }
    *out = r->hits;
    return W2L_OK;
}

w2l_rc w2l__krun_iter_open(w2l__krun *r, w2l__krun_iter **out, w2l_error *err)
{
    w2l__krun_iter *it = w2l__calloc(1, sizeof *it);
    W2L_NOMEM_IF(!it, err);
    it->r = r;
    it->cap = WBUF;
    it->buf = w2l__malloc(it->cap);
    if (!it->buf) {
        w2l__free(it);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    *out = it;
    return W2L_OK;
}

/* Makes at least need bytes from it->at available (fewer at the end of the file). */
static w2l_rc fill(w2l__krun_iter *it, size_t need, w2l_error *err)
{
    if (it->len - it->at >= need) return W2L_OK;
    memmove(it->buf, it->buf + it->at, it->len - it->at);
    it->off += it->at;
    it->len -= it->at;
    it->at = 0;
    if (need > it->cap) W2L_TRY(grow((void **)&it->buf, &it->cap, need, 1, err));
    uint64_t left = it->r->size - it->off - it->len;
    size_t want = (size_t)W2L_MIN((uint64_t)(it->cap - it->len), left);
    if (want) W2L_TRY(read_at(it->r, it->buf + it->len, want, it->off + it->len, err));
    it->len += want;
    return W2L_OK;
}

w2l_rc w2l__krun_iter_next(w2l__krun_iter *it, w2l__krec *rec, int *end, w2l_error *err)
{
    *end = 0;
    W2L_TRY(fill(it, REC_FIXED, err));
    if (it->at == it->len) {
        *end = 1;
        return W2L_OK;
    }
    if (it->len - it->at < REC_FIXED) return corrupt(it->r, it->off + it->at, err);
    uint32_t kl;
    memcpy(&kl, it->buf + it->at, 4);
    W2L_TRY(fill(it, REC_FIXED + (size_t)kl, err));
    if (it->len - it->at < REC_FIXED + (size_t)kl) return corrupt(it->r, it->off + it->at, err);
    const unsigned char *p = it->buf + it->at;
    rec->key = p + 4;
    rec->len = kl;
    memcpy(&rec->file, p + 4 + kl, 4);
    memcpy(&rec->pos, p + 8 + kl, 8);
    it->at += REC_FIXED + kl;
    return W2L_OK;
}

void w2l__krun_iter_free(w2l__krun_iter *it)
{
    if (!it) return;
    w2l__free(it->buf);
    w2l__free(it);
}

/* ------------------------------------------------------------------- figures ------ */

uint64_t w2l__krun_records(const w2l__krun *r) { return r ? r->nrec : 0; }
uint64_t w2l__krun_disk_bytes(const w2l__krun *r) { return r ? r->size : 0; }

uint64_t w2l__krun_mem_bytes(const w2l__krun *r)
{
    if (!r) return 0;
    return sizeof *r + (r->mask + 1) / 8 + r->blkcap * sizeof *r->blk + r->keycap +
           (r->nfiles + 1) * sizeof *r->frefs + r->rcap + r->hcap * sizeof *r->hits;
}

uint64_t w2l__krun_file_refs(const w2l__krun *r, uint32_t f)
{
    return r && f < r->nfiles ? r->frefs[f] : 0;
}
