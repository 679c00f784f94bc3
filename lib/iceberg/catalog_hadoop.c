/*
 * The "hadoop" catalog: the filesystem layout every engine reads (w2l-design(7) section 5,
 * Iceberg's "File System Tables"): <warehouse>/<ns>/<table>/metadata/v<N>.metadata.json and
 * metadata/version-hint.text holding N. The commit point is the exclusive creation of
 * v<N+1>.metadata.json (W2L_CREATE_EXCL: the file IO publishes it atomically and never over
 * an existing file), so of two writers that started from vN exactly one wins; the other
 * gets W2L_CONFLICT. The version hint is rewritten afterwards (W2L_CREATE_REPLACE) and is only
 * a hint: loading probes v<N+1>, v<N+2>, ... past it and lists the directory when it names
 * no vN, so a crash between the two steps loses nothing, and the hint is not made durable
 * (W2L_CREATE_HINT: two fewer fsyncs per commit). Other readers may trust the hint without
 * probing, so a load that finds it behind rewrites it (a restart loads every table it had
 * a commit in flight for). A table exists when its metadata directory has a vN file.
 *
 * Namespaces are the directories of the warehouse, except the pipeline's own: "_w2l"
 * (its checkpoint state, _w2l/state, and pending table operations, _w2l/table-ops) is
 * never a namespace — not listed, and no table is created in or renamed into it — and,
 * as in Hadoop's convention for hidden files, neither is a name beginning with '.'.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"

typedef struct hadoop_catalog {
    w2l_catalog base;
    w2l_fileio *io;
    char *warehouse;
} hadoop_catalog;

static w2l_rc h_open(const w2l_catalog_methods *m, const w2l_conf *conf, const char *uri,
                     const char *warehouse, w2l_fileio *io, w2l_catalog *self, w2l_error *err)
{
    (void)m, (void)conf, (void)uri;
    hadoop_catalog *h = (hadoop_catalog *)self;
    if (!warehouse || !*warehouse || !io)
        return w2l__fail(err, W2L_MISUSE, "hadoop catalog: needs a warehouse and a file IO");
    /* A commit here is an exclusive create of vN.metadata.json: atomic on a file system,
     * not on an object store, where two writers can both think they won. */
    if (strcmp(io->methods->name, "s3") == 0)
        return w2l__fail(err, W2L_CONFIG,
                         "warehouse %s: the hadoop catalog cannot commit atomically on S3; use "
                         "the sql catalog (--catalog sql:mysql://USER:PASS@HOST:PORT/DB)",
                         warehouse);
    h->io = io;
    h->warehouse = w2l__strdup(warehouse);
    W2L_NOMEM_IF(!h->warehouse, err);
    return W2L_OK;
}

static void h_close(w2l_catalog *self)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    w2l__free(h->warehouse);
}

#define RESERVED_DIR "_w2l" /* lib/state/state_file.c, lib/pipeline/owner.c */

static int not_a_namespace(const char *name)
{
    return name[0] == '.' || strcmp(name, RESERVED_DIR) == 0;
}

static w2l_rc reserved(const char *ns, const char *table, w2l_error *err)
{
    return w2l__fail(err, W2L_CONFIG,
                     "table %s.%s: namespace %s is reserved for the pipeline's state in a "
                     "hadoop warehouse (route the database elsewhere)",
                     ns, table, ns);
}

static char *meta_dir(hadoop_catalog *h, const char *ns, const char *table)
{
    char *d = w2l__ice_table_dir(h->warehouse, ns, table);
    char *m = d ? w2l__asprintf("%s/metadata", d) : NULL;
    w2l__free(d);
    return m;
}

/* N of "v<N>.metadata.json", or -1. */
static long version_of(const char *name)
{
    const char *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    if (b[0] != 'v') return -1;
    char *end;
    long n = strtol(b + 1, &end, 10);
    if (end == b + 1 || strcmp(end, ".metadata.json") != 0 || n < 1) return -1;
    return n;
}

static int max_version(void *ctx, const char *name)
{
    long *mx = ctx, v = version_of(name);
    if (v > *mx) *mx = v;
    return 0;
}

static w2l_rc exists_version(hadoop_catalog *h, const char *dir, long v, int *out, w2l_error *err)
{
    char *p = w2l__asprintf("%s/v%ld.metadata.json", dir, v);
    W2L_NOMEM_IF(!p, err);
    w2l_rc rc = w2l_fileio_exists(h->io, p, out, err);
    w2l__free(p);
    return rc;
}

/* Points dir's version hint at version n. quiet: a repair of a stale hint found while
 * loading (a reader's own warehouse may be read-only), logged at debug level. */
static w2l_rc write_hint(hadoop_catalog *h, const char *dir, long n, int quiet)
{
    char *p = w2l__asprintf("%s/version-hint.text", dir);
    char t[24];
    int k = snprintf(t, sizeof t, "%ld", n);
    w2l_error e2;
    w2l_rc rc =
        p ? w2l_fileio_write_all(h->io, p, W2L_CREATE_REPLACE | W2L_CREATE_HINT, t, (size_t)k,
                                   &e2) : W2L_NOMEM;
    if (rc != W2L_OK) /* the commit stands; loading probes past a stale hint */
        w2l__log(quiet ? W2L_LOG_DEBUG : W2L_LOG_WARN, "version hint %s not updated: %s",
                 p ? p : dir, p ? e2.msg : "out of memory");
    w2l__free(p);
    return rc;
}

/* The current version N of the table in dir, 0 when there is none. */
static w2l_rc current_version(hadoop_catalog *h, const char *dir, long *out, w2l_error *err)
{
    long n = 0, hinted = 0;
    char *hint = w2l__asprintf("%s/version-hint.text", dir);
    W2L_NOMEM_IF(!hint, err);
    void *data = NULL;
    size_t len = 0;
    w2l_error e2;
    w2l_rc rc = w2l_fileio_read_all(h->io, hint, &data, &len, &e2);
    w2l__free(hint);
    if (rc == W2L_OK) {
        char t[32];
        size_t k = W2L_MIN(len, sizeof t - 1);
        memcpy(t, data, k);
        t[k] = '\0';
        n = strtol(t, NULL, 10);
        w2l__free(data);
        int ex = 0;
        if (n > 0) W2L_TRY(exists_version(h, dir, n, &ex, err));
        if (!ex) n = 0;
        hinted = n;
    } else if (rc != W2L_NOTFOUND) {
        return w2l__fail(err, rc, "%s", e2.msg);
    }
    if (n == 0) { /* no usable hint: the largest vN in the directory */
        W2L_TRY(w2l_fileio_list(h->io, dir, max_version, &n, err));
        if (n < 0) n = 0;
    }
    /* the hint may lag behind a commit that crashed before rewriting it */
    for (int ex = 1; n > 0;) {
        W2L_TRY(exists_version(h, dir, n + 1, &ex, err));
        if (!ex) break;
        n++;
    }
    /* a process killed between a commit and its hint left the hint behind: readers that
     * trust the hint would read the older version until the table commits again */
    if (n > 0 && n != hinted) (void)write_hint(h, dir, n, 1);
    *out = n;
    return W2L_OK;
}

static w2l_rc h_load(w2l_catalog *self, const char *ns, const char *table, w2l_buf *location,
                     w2l_error *err)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    char *dir = meta_dir(h, ns, table);
    W2L_NOMEM_IF(!dir, err);
    long n = 0;
    w2l_rc rc = current_version(h, dir, &n, err);
    if (rc == W2L_OK && n == 0)
        rc = w2l__fail(err, W2L_NOTFOUND, "table %s.%s not found", ns, table);
    if (rc == W2L_OK) rc = w2l__buf_printf(location, err, "%s/v%ld.metadata.json", dir, n);
    w2l__free(dir);
    return rc;
}

static w2l_rc h_commit(w2l_catalog *self, const char *ns, const char *table, const char *base,
                       const char *metadata, size_t len, w2l_buf *new_location, w2l_error *err)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    if (!base && not_a_namespace(ns)) return reserved(ns, table, err);
    char *dir = meta_dir(h, ns, table);
    W2L_NOMEM_IF(!dir, err);
    long next;
    w2l_rc rc = W2L_OK;
    if (!base) {
        long cur = 0;
        rc = current_version(h, dir, &cur, err);
        if (rc == W2L_OK && cur > 0)
            rc = w2l__fail(err, W2L_EXISTS, "table %s.%s exists", ns, table);
        next = 1;
    } else {
        long b = version_of(base);
        if (b < 1)
            rc = w2l__fail(err, W2L_MISUSE, "hadoop catalog: base %s is not a vN.metadata.json",
                           base);
        next = b + 1;
    }
    char *path = rc == W2L_OK ? w2l__asprintf("%s/v%ld.metadata.json", dir, next) : NULL;
    if (rc == W2L_OK && !path) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        rc = w2l_fileio_write_all(h->io, path, W2L_CREATE_EXCL, metadata, len, err);
        if (rc == W2L_EXISTS)
            rc = base ? w2l__fail(err, W2L_CONFLICT, "commit %s.%s: v%ld exists, another writer "
                                  "committed first", ns, table, next)
                      : w2l__fail(err, W2L_EXISTS, "table %s.%s exists", ns, table);
    }
    if (rc == W2L_OK) {
        write_hint(h, dir, next, 0);
        rc = w2l_buf_append(new_location, path, strlen(path), err);
    }
    w2l__free(path);
    w2l__free(dir);
    return rc;
}

typedef struct del_ctx {
    hadoop_catalog *h;
    const char *dir;
    w2l_rc rc;
    w2l_error *err;
} del_ctx;

static int del_meta(void *ctx, const char *name)
{
    del_ctx *d = ctx;
    if (version_of(name) < 1 && strcmp(name, "version-hint.text") != 0) return 0;
    char *p = w2l__asprintf("%s/%s", d->dir, name);
    d->rc =
        p ? w2l_fileio_remove(d->h->io, p, d->err) : w2l__fail(d->err, W2L_NOMEM, "out of memory");
    w2l__free(p);
    return d->rc != W2L_OK;
}

static w2l_rc h_drop(w2l_catalog *self, const char *ns, const char *table, int purge,
                     w2l_error *err)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    w2l_buf loc = {0};
    W2L_TRY(w2l__catalog_load(self, ns, table, &loc, err));
    w2l_rc rc = W2L_OK;
    char *tdir = w2l__ice_table_dir(h->warehouse, ns, table);
    char *dir = meta_dir(h, ns, table);
    if (!tdir || !dir) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && purge) {
        void *data = NULL;
        size_t len = 0;
        w2l__ice_meta *m = NULL;
        rc = w2l_fileio_read_all(h->io, (const char *)loc.data, &data, &len, err);
        if (rc == W2L_OK) rc = w2l__ice_meta_parse(data, len, &m, err);
        if (rc == W2L_OK) rc = w2l__ice_purge(h->io, m, (const char *)loc.data, err);
        w2l__ice_meta_free(m);
        w2l__free(data);
    }
    if (rc == W2L_OK) {
        /* the version files and hint go first, so the table is gone even if a later step
         * fails; the hint before the versions: a drop cut short leaves either versions the
         * next load finds (the drop is applied again) or nothing, never a hint naming a
         * version that is gone */
        char *hint = w2l__asprintf("%s/version-hint.text", dir);
        rc = hint ? w2l_fileio_remove(h->io, hint, err)
                  : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(hint);
    }
    if (rc == W2L_OK) {
        del_ctx d = {h, dir, W2L_OK, err};
        rc = w2l_fileio_list(h->io, dir, del_meta, &d, err);
        if (rc == W2L_OK) rc = d.rc;
    }
    if (rc == W2L_OK && purge) rc = w2l__ice_remove_tree(h->io, tdir, err);
    w2l__free(tdir);
    w2l__free(dir);
    w2l_buf_release(&loc);
    return rc;
}

/* Rename: the new name gets a v1 holding the current metadata (its location and every
 * absolute path inside stay valid), then the old name is dropped without purge. */
static w2l_rc h_rename(w2l_catalog *self, const char *ns, const char *table, const char *to_ns,
                       const char *to_table, w2l_error *err)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    if (not_a_namespace(to_ns)) return reserved(to_ns, to_table, err);
    w2l_buf loc = {0}, nloc = {0};
    W2L_TRY(w2l__catalog_load(self, ns, table, &loc, err));
    void *data = NULL;
    size_t len = 0;
    w2l_rc rc = w2l_fileio_read_all(h->io, (const char *)loc.data, &data, &len, err);
    if (rc == W2L_OK) rc = h_commit(self, to_ns, to_table, NULL, data, len, &nloc, err);
    if (rc == W2L_OK) rc = h_drop(self, ns, table, 0, err);
    w2l__free(data);
    w2l_buf_release(&loc);
    w2l_buf_release(&nloc);
    return rc;
}

typedef struct list_ctx {
    hadoop_catalog *h;
    const char *ns;
    int (*fn)(void *, const char *, const char *);
    void *ctx;
    int stop;
    w2l_rc rc;
    w2l_error *err;
} list_ctx;

static int list_table(void *ctx, const char *name)
{
    list_ctx *l = ctx;
    char *dir = meta_dir(l->h, l->ns, name);
    long n = 0;
    if (!dir) {
        l->rc = w2l__fail(l->err, W2L_NOMEM, "out of memory");
        return 1;
    }
    w2l_error e2;
    if (w2l_fileio_list(l->h->io, dir, max_version, &n, &e2) == W2L_OK && n > 0)
        l->stop = l->fn(l->ctx, l->ns, name);
    w2l__free(dir);
    return l->stop;
}

static int list_ns(void *ctx, const char *name)
{
    list_ctx *l = ctx;
    if (not_a_namespace(name)) return 0;
    char *d = w2l__asprintf("%s/%s", l->h->warehouse, name);
    if (!d) {
        l->rc = w2l__fail(l->err, W2L_NOMEM, "out of memory");
        return 1;
    }
    list_ctx sub = *l;
    sub.ns = name;
    w2l_error e2;
    w2l_fileio_list(l->h->io, d, list_table, &sub, &e2); /* a file: not a namespace */
    w2l__free(d);
    l->stop = sub.stop;
    l->rc = sub.rc;
    return l->stop || l->rc != W2L_OK;
}

static w2l_rc h_list(w2l_catalog *self, const char *ns,
                     int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                     w2l_error *err)
{
    hadoop_catalog *h = (hadoop_catalog *)self;
    list_ctx l = {h, ns, fn, ctx, 0, W2L_OK, err};
    if (ns && not_a_namespace(ns)) return W2L_OK;
    if (ns) {
        char *d = w2l__asprintf("%s/%s", h->warehouse, ns);
        W2L_NOMEM_IF(!d, err);
        w2l_rc rc = w2l_fileio_list(h->io, d, list_table, &l, err);
        w2l__free(d);
        W2L_TRY(rc);
        return l.rc;
    }
    W2L_TRY(w2l_fileio_list(h->io, h->warehouse, list_ns, &l, err));
    return l.rc;
}

const w2l_catalog_methods w2l__catalog_hadoop = {
    .version = W2L_CATALOG_METHODS_V1,
    .name = "hadoop",
    .size = sizeof(hadoop_catalog),
    .open = h_open,
    .load_table = h_load,
    .commit_table = h_commit,
    .drop_table = h_drop,
    .rename_table = h_rename,
    .list_tables = h_list,
    .close = h_close,
};
