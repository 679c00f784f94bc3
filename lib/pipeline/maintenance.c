/*
 * Table maintenance in a pipeline and on demand: see maintenance.h for the protocol.
 */
#include <stdio.h>
#include <stdlib.h>

#include "maintenance.h"
#include "rewrites.h"
#include "ops.h"
#include "../common/thread.h"
#include "../conf/conf.h"
#include "../parquet/parquet.h"
#include "../io/io.h"

/* ------------------------------------------------------------------ policy ------- */

static int64_t conf_for(const w2l_conf *conf, const char *fq, const char *key, int64_t def)
{
    const char *v = NULL;
    int64_t n;
    if (fq) w2l_conf_get_for_table(conf, fq, key, &v, NULL);
    else w2l_conf_get(conf, key, &v, NULL);
    if (!v || w2l__conf_parse(w2l_conf_prop_find(key), v, &n) != 0) return def;
    return n;
}

void w2l__maint_policy(const w2l_conf *conf, const char *fq, w2l__ice_policy *p, int *enabled)
{
    w2l__ice_policy_default(p);
    p->max_snapshot_age_ms =
        conf_for(conf, fq, "maintenance.max-snapshot-age", p->max_snapshot_age_ms);
    p->min_snapshots = conf_for(conf, fq, "maintenance.min-snapshots", p->min_snapshots);
    p->target_file_bytes = conf_for(conf, fq, "writer.target-file-bytes", p->target_file_bytes);
    p->compact_small_files =
        conf_for(conf, fq, "maintenance.compact-small-files", p->compact_small_files);
    p->compact_delete_files =
        conf_for(conf, fq, "maintenance.compact-delete-files", p->compact_delete_files);
    p->compact_delete_ratio =
        (double)conf_for(conf, fq, "maintenance.compact-delete-percent", 10) / 100.0;
    p->rewrite_delete_ratio =
        (double)conf_for(conf, fq, "maintenance.rewrite-delete-percent", 20) / 100.0;
    p->orphan_age_ms = conf_for(conf, NULL, "maintenance.orphan-age", p->orphan_age_ms);
    if (enabled) *enabled = conf_for(conf, fq, "maintenance.enabled", 1) != 0;
}

/* -------------------------------------------------------- what recover needs ------- */

typedef struct held {
    w2l_state *st;
    uint64_t ckpt;
    char **paths;
    size_t n, cap;
    w2l_rc rc;
    w2l_error *err;
} held;

static int held_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int held_key(void *ctx, const char *key)
{
    held *h = ctx;
    w2l_buf b = {0};
    h->rc = w2l_state_get(h->st, h->ckpt, key, &b, h->err);
    w2l__json *j = NULL;
    if (h->rc == W2L_OK) h->rc = w2l__json_parse((const char *)b.data, b.len, &j, h->err);
    w2l_buf_release(&b);
    const w2l__json *files = j ? w2l__json_get(j, "files") : NULL;
    for (const w2l__json *f = w2l__json_first(files); h->rc == W2L_OK && f; f = w2l__json_next(f)) {
        const char *p = w2l__json_str(w2l__json_get(f, "path"));
        if (!p) continue;
        if (h->n == h->cap) {
            size_t cap = h->cap ? h->cap * 2 : 256;
            char **nv = w2l__realloc(h->paths, cap * sizeof *nv);
            if (!nv) {
                h->rc = w2l__fail(h->err, W2L_NOMEM, "out of memory");
                break;
            }
            h->paths = nv;
            h->cap = cap;
        }
        if (!(h->paths[h->n] = w2l__strdup(w2l__ice_local_path(p))))
            h->rc = w2l__fail(h->err, W2L_NOMEM, "out of memory");
        else h->n++;
    }
    w2l__json_free(j);
    return h->rc != W2L_OK;
}

/* The data and delete files of the newest sealed checkpoint that are not committed yet:
 * the committers carry every uncommitted file list forward to each sealed checkpoint. */
static w2l_rc held_load(const w2l_conf *conf, held *h, w2l_error *err)
{
    memset(h, 0, sizeof *h);
    h->err = err;
    const char *uri = NULL;
    w2l_conf_get(conf, "state", &uri, NULL);
    w2l_rc rc = w2l_state_open(uri, conf, &h->st, err);
    if (rc != W2L_OK) return rc;
    rc = w2l_state_latest(h->st, &h->ckpt, err);
    if (rc == W2L_NOTFOUND) rc = W2L_OK, h->ckpt = 0;
    if (rc == W2L_OK && h->ckpt) {
        rc = w2l_state_keys(h->st, h->ckpt, W2L_OPS_FILES_PREFIX, held_key, h, err);
        if (rc == W2L_OK) rc = h->rc;
    }
    w2l_state_close(h->st);
    h->st = NULL;
    if (rc == W2L_OK && h->n) qsort(h->paths, h->n, sizeof *h->paths, held_cmp);
    return rc;
}

static void held_free(held *h)
{
    for (size_t i = 0; i < h->n; i++) w2l__free(h->paths[i]);
    w2l__free(h->paths);
    memset(h, 0, sizeof *h);
}

static int held_has(void *ctx, const char *path)
{
    held *h = ctx;
    const char *p = w2l__ice_local_path(path);
    return h->n && bsearch(&p, h->paths, h->n, sizeof *h->paths, held_cmp) != NULL;
}

/* ----------------------------------------------------------------- orphans ------- */

typedef struct tref {
    char *ns, *table;
    w2l__ice_table *t;
} tref;

typedef struct tcoll {
    tref *v;
    size_t n, cap;
    int oom;
} tcoll;

static int collect(void *ctx, const char *ns, const char *table)
{
    tcoll *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        tref *nv = w2l__realloc(c->v, cap * sizeof *nv);
        if (!nv) return c->oom = 1;
        c->v = nv;
        c->cap = cap;
    }
    tref *r = &c->v[c->n];
    memset(r, 0, sizeof *r);
    r->ns = w2l__strdup(ns);
    r->table = w2l__strdup(table);
    if (!r->ns || !r->table) {
        w2l__free(r->ns);
        w2l__free(r->table);
        return c->oom = 1;
    }
    c->n++;
    return 0;
}

static int loc_cmp(const void *a, const void *b)
{
    const tref *x = a, *y = b;
    int c = strcmp(w2l__ice_local_path(x->t->meta->location),
                   w2l__ice_local_path(y->t->meta->location));
    if (c) return c;
    c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->table, y->table);
}

w2l_rc w2l__maint_orphans(const w2l_conf *conf, w2l_catalog *cat, w2l_fileio *io,
                          const char *ns, const char *table, int dry_run,
                          void (*report)(void *ctx, const char *ns, const char *table,
                                         const w2l__ice_maint_stats *st),
                          void *ctx, w2l_error *err)
{
    w2l__ice_policy p;
    w2l__maint_policy(conf, NULL, &p, NULL);
    held h;
    W2L_TRY(held_load(conf, &h, err));
    tcoll c = {0};
    w2l_rc rc = w2l__catalog_list(cat, NULL, collect, &c, err);
    if (rc == W2L_OK && c.oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    /* every table: a table renamed away keeps its files in the directory of its old name */
    size_t nl = 0;
    for (size_t i = 0; rc == W2L_OK && i < c.n; i++) {
        w2l__ice_table *t = NULL;
        rc = w2l__ice_table_load(cat, io, c.v[i].ns, c.v[i].table, &t, err);
        if (rc == W2L_NOTFOUND) { /* dropped meanwhile */
            rc = W2L_OK;
            w2l__free(c.v[i].ns);
            w2l__free(c.v[i].table);
            continue;
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "table %s.%s: ", c.v[i].ns, c.v[i].table);
            w2l__free(c.v[i].ns);
            w2l__free(c.v[i].table);
            for (size_t k = i + 1; k < c.n; k++) {
                w2l__free(c.v[k].ns);
                w2l__free(c.v[k].table);
            }
            c.n = nl;
            break;
        }
        c.v[i].t = t;
        c.v[nl++] = c.v[i];
    }
    if (rc == W2L_OK) c.n = nl;
    if (rc == W2L_OK && c.n) qsort(c.v, c.n, sizeof *c.v, loc_cmp);
    int64_t now = w2l__now_ms();
    for (size_t i = 0; rc == W2L_OK && i < c.n;) {
        size_t j = i;
        const char *loc = w2l__ice_local_path(c.v[i].t->meta->location);
        while (j < c.n && strcmp(w2l__ice_local_path(c.v[j].t->meta->location), loc) == 0) j++;
        int wanted = !ns || !table;
        for (size_t k = i; k < j && !wanted; k++)
            wanted = strcmp(c.v[k].ns, ns) == 0 && strcmp(c.v[k].table, table) == 0;
        if (wanted) {
            const w2l__ice_meta *metas[64];
            const char *files[64];
            size_t nm = W2L_MIN(j - i, W2L_ARRAY_LEN(metas));
            for (size_t k = 0; k < nm; k++) {
                metas[k] = c.v[i + k].t->meta;
                files[k] = c.v[i + k].t->meta_location;
            }
            if (j - i > nm) {
                w2l__log(W2L_LOG_WARN, "orphans: %zu tables share %s; skipped", j - i, loc);
            } else {
                w2l__ice_maint_stats st;
                memset(&st, 0, sizeof st);
                rc = w2l__ice_remove_orphans(io, loc, metas, files, nm, &p, now, held_has, &h,
                                             dry_run, &st, err);
                if (rc != W2L_OK)
                    w2l__error_prefix(err, "orphans of %s.%s: ", c.v[i].ns, c.v[i].table);
                else if (report) report(ctx, c.v[i].ns, c.v[i].table, &st);
            }
        }
        i = j;
    }
    for (size_t i = 0; i < c.n; i++) {
        w2l__ice_table_free(c.v[i].t);
        w2l__free(c.v[i].ns);
        w2l__free(c.v[i].table);
    }
    w2l__free(c.v);
    held_free(&h);
    return rc;
}

/* ---------------------------------------------------------------- pipeline ------- */

typedef enum { JOB_COMPACT = 1, JOB_CLEANUP } job_kind;

typedef struct job {
    job_kind kind;
    char *ns, *table;
    char uuid[40];
    unsigned committer;
    char **lists;          /* cleanup: manifest lists of expired snapshots */
    size_t nlists;
    int64_t expired;
    struct job *next;
} job;

struct w2l__maint_result {
    char *ns, *table;
    char uuid[40];
    w2l__ice_compaction *k;
    struct w2l__maint_result *next;
};

typedef struct tstat {      /* per table: compaction in flight, when the last one ended */
    uint64_t h;
    char *fq;
    int inflight;
    int64_t last_ms;
    struct tstat *chain;
} tstat;

struct w2l__maint {
    const w2l_conf *conf;
    w2l__metrics *metrics;
    unsigned ncommit;
    int expire_every;
    int64_t compact_interval_ms, orphan_interval_ms;
    w2l__pq_options pq;
    mtx_t mtx;
    cnd_t cnd;
    int stop;
    job *head, *tail;
    w2l__maint_result **inbox;  /* per committer */
    tstat **tbl;
    size_t tcap, tn;
    int64_t next_orphans_ms;
    unsigned nthreads;
    thrd_t *threads;
    w2l__rewrites *rewrites;    /* the compactions committed, for the writers' key indexes */
};

/* The lake's file IO (for removing the files of a dropped compaction); NULL on failure. */
static w2l_fileio *open_io(const w2l_conf *conf)
{
    const char *wh = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    w2l_fileio *io = NULL;
    w2l_error e;
    if (w2l__fileio_open_for(conf, wh, &io, &e) != W2L_OK) return NULL;
    return io;
}

static _Thread_local w2l__maint *current_maint;
void w2l__maint_set_current(w2l__maint *m) { current_maint = m; }
w2l__maint *w2l__maint_current(void) { return current_maint; }

static void job_free(job *j)
{
    if (!j) return;
    for (size_t i = 0; i < j->nlists; i++) w2l__free(j->lists[i]);
    w2l__free(j->lists);
    w2l__free(j->ns);
    w2l__free(j->table);
    w2l__free(j);
}

static void result_free(w2l__maint_result *r, w2l_fileio *io, int remove)
{
    if (!r) return;
    w2l__ice_compaction_free(r->k, io, remove);
    w2l__free(r->ns);
    w2l__free(r->table);
    w2l__free(r);
}

/* The entry of fq; created when absent. Lock held. NULL when out of memory. */
static tstat *tstat_get(w2l__maint *m, const char *fq)
{
    uint64_t h = w2l__hash64(fq, strlen(fq), 0x6d61696e);
    if (m->tcap)
        for (tstat *t = m->tbl[h & (m->tcap - 1)]; t; t = t->chain)
            if (t->h == h && strcmp(t->fq, fq) == 0) return t;
    if (m->tn + 1 > m->tcap) {
        size_t cap = m->tcap ? m->tcap * 2 : 64;
        tstat **nt = w2l__calloc(cap, sizeof *nt);
        if (!nt) return NULL;
        for (size_t i = 0; i < m->tcap; i++)
            for (tstat *t = m->tbl[i], *n; t; t = n) {
                n = t->chain;
                t->chain = nt[t->h & (cap - 1)];
                nt[t->h & (cap - 1)] = t;
            }
        w2l__free(m->tbl);
        m->tbl = nt;
        m->tcap = cap;
    }
    tstat *t = w2l__calloc(1, sizeof *t);
    if (!t || !(t->fq = w2l__strdup(fq))) {
        w2l__free(t);
        return NULL;
    }
    t->h = h;
    t->chain = m->tbl[h & (m->tcap - 1)];
    m->tbl[h & (m->tcap - 1)] = t;
    m->tn++;
    return t;
}

static void push_job(w2l__maint *m, job *j)
{
    mtx_lock(&m->mtx);
    if (m->tail) m->tail->next = j;
    else m->head = j;
    m->tail = j;
    cnd_signal(&m->cnd);
    mtx_unlock(&m->mtx);
}

static void log_stats(const char *fq, const char *what, const w2l__ice_maint_stats *st)
{
    if (strcmp(what, "compact") == 0)
        w2l__log_table(
            W2L_LOG_INFO, NULL, fq,
            "maintenance: %s compact: %lld files (%lld bytes) -> %lld files (%lld bytes), "
            "%lld rows, %lld positions deleted, %lld ms",
            fq, (long long)st->files_in, (long long)st->bytes_in, (long long)st->files_out,
            (long long)st->bytes_out, (long long)st->rows_out, (long long)st->deletes_out,
            (long long)st->ms);
    else if (strcmp(what, "expire") == 0)
        w2l__log_table(
            W2L_LOG_INFO, NULL, fq,
            "maintenance: %s expire: %lld snapshots, %lld files (%lld bytes) removed, %lld ms", fq,
            (long long)st->snapshots_expired, (long long)st->files_removed,
            (long long)st->bytes_removed, (long long)st->ms);
    else
        w2l__log_table(W2L_LOG_INFO, NULL, fq,
                       "maintenance: %s %s: %lld files (%lld bytes) removed, %lld ms", fq, what,
                       (long long)st->files_removed, (long long)st->bytes_removed,
                       (long long)st->ms);
}

static void orphan_report(void *ctx, const char *ns, const char *table,
                          const w2l__ice_maint_stats *st)
{
    w2l__maint *m = ctx;
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", ns, table);
    if (st->files_removed) log_stats(fq, "orphans", st);
    w2l__metrics_maint(m->metrics, ns, table, 0, 0, 0, (uint64_t)st->files_removed);
}

/* fq's compaction ended (committed, dropped or failed): the next may be queued after the
 * interval. */
static void done_compaction(w2l__maint *m, const char *fq)
{
    mtx_lock(&m->mtx);
    tstat *ts = tstat_get(m, fq);
    if (ts) {
        ts->inflight = 0;
        ts->last_ms = w2l__now_ms();
    }
    mtx_unlock(&m->mtx);
}

static void run_job(w2l__maint *m, w2l_catalog *cat, w2l_fileio *io, job *j)
{
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", j->ns, j->table);
    w2l_error e;
    w2l_error_clear(&e);
    w2l__ice_table *t = NULL;
    w2l_rc rc = w2l__ice_table_load(cat, io, j->ns, j->table, &t, &e);
    if (rc == W2L_OK && strcmp(t->meta->uuid, j->uuid) != 0)
        rc = W2L_NOTFOUND; /* another table now */
    if (j->kind == JOB_CLEANUP) {
        w2l__ice_maint_stats st;
        memset(&st, 0, sizeof st);
        st.snapshots_expired = j->expired;
        if (rc == W2L_OK)
            rc = w2l__ice_expire_cleanup(io, t->meta, j->lists, j->nlists, 0, &st, &e);
        if (rc == W2L_OK) {
            log_stats(fq, "expire", &st);
            w2l__metrics_maint(m->metrics, j->ns, j->table, 0, 0, (uint64_t)j->expired,
                               (uint64_t)st.files_removed);
        } else if (rc != W2L_NOTFOUND) {
            w2l__log_table(
                W2L_LOG_WARN, NULL, fq,
                "maintenance: %s: removing the files of expired snapshots: %s (orphan removal "
                "takes what is left)",
                fq, e.msg);
        }
        w2l__ice_table_free(t);
        return;
    }
    /* compaction */
    w2l__ice_compaction *k = NULL;
    w2l__ice_policy p;
    w2l__maint_policy(m->conf, fq, &p, NULL);
    if (rc == W2L_OK) rc = w2l__ice_compact_prepare(io, t->meta, &p, &m->pq, &k, &e);
    w2l__ice_table_free(t);
    if (rc == W2L_OK && k) {
        w2l__maint_result *r = w2l__calloc(1, sizeof *r);
        if (r && (r->ns = w2l__strdup(j->ns)) && (r->table = w2l__strdup(j->table))) {
            memcpy(r->uuid, j->uuid, sizeof r->uuid);
            r->k = k;
            mtx_lock(&m->mtx);
            r->next = m->inbox[j->committer];
            m->inbox[j->committer] = r;
            mtx_unlock(&m->mtx);
            return; /* in flight until the committer took it */
        }
        if (r) {
            w2l__free(r->ns);
            w2l__free(r);
        }
        w2l__ice_compaction_free(k, io, 1);
        rc = w2l__fail(&e, W2L_NOMEM, "out of memory");
    }
    if (rc != W2L_OK && rc != W2L_NOTFOUND)
        w2l__log_table(W2L_LOG_WARN, NULL, fq, "maintenance: %s compact: %s", fq, e.msg);
    done_compaction(m, fq);
}

static int worker_main(void *arg)
{
    w2l__maint *m = arg;
    w2l_fileio *io = NULL;
    w2l_catalog *cat = NULL; /* opened at the first piece of work */
    w2l_error e;
    int broken = 0;
    mtx_lock(&m->mtx);
    for (;;) {
        while (!m->stop && !m->head) {
            if (m->orphan_interval_ms > 0 && w2l__now_ms() >= m->next_orphans_ms) break;
            if (m->orphan_interval_ms > 0) {
                struct timespec ts =
                    w2l__deadline_ms(W2L_MIN(m->next_orphans_ms - w2l__now_ms(), 60000));
                cnd_timedwait(&m->cnd, &m->mtx, &ts);
            } else {
                cnd_wait(&m->cnd, &m->mtx);
            }
        }
        if (m->stop) break;
        if (!cat && !broken) {
            mtx_unlock(&m->mtx);
            w2l_rc rc = w2l__catalog_open_conf(m->conf, &io, &cat, &e);
            if (rc != W2L_OK) {
                w2l__log(W2L_LOG_WARN,
                         "maintenance: cannot open the catalog: %s; no maintenance in this run",
                         e.msg);
                w2l_fileio_close(io);
                io = NULL;
                cat = NULL;
                broken = 1;
            }
            mtx_lock(&m->mtx);
        }
        job *j = m->head;
        if (broken) { /* drop the work: nothing can be done with it */
            if (j) {
                m->head = j->next;
                if (!m->head) m->tail = NULL;
                job_free(j);
            } else {
                m->next_orphans_ms = w2l__now_ms() + m->orphan_interval_ms;
            }
            continue;
        }
        if (j) {
            m->head = j->next;
            if (!m->head) m->tail = NULL;
            mtx_unlock(&m->mtx);
            run_job(m, cat, io, j);
            job_free(j);
            mtx_lock(&m->mtx);
            continue;
        }
        /* orphan removal, over the tables of the catalog, one thread at a time */
        m->next_orphans_ms = w2l__now_ms() + m->orphan_interval_ms;
        mtx_unlock(&m->mtx);
        w2l_error_clear(&e);
        if (w2l__maint_orphans(m->conf, cat, io, NULL, NULL, 0, orphan_report, m, &e) != W2L_OK)
            w2l__log(W2L_LOG_WARN, "maintenance: orphan removal: %s", e.msg);
        mtx_lock(&m->mtx);
    }
    mtx_unlock(&m->mtx);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    return 0;
}

w2l_rc w2l__maint_new(const w2l_conf *conf, w2l__metrics *metrics, unsigned ncommit,
                      w2l__maint **out, w2l_error *err)
{
    *out = NULL;
    /* no lake of ours (a host's own committer, or no warehouse): nothing to maintain */
    const char *wh = NULL, *cm = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    w2l_conf_get(conf, "operator.committer", &cm, NULL);
    if (!wh || !*wh || (cm && strcmp(cm, "default") != 0)) return W2L_OK;
    w2l__maint *m = w2l__calloc(1, sizeof *m);
    W2L_NOMEM_IF(!m, err);
    m->conf = conf;
    m->metrics = metrics;
    m->ncommit = ncommit ? ncommit : 1;
    m->expire_every = (int)conf_for(conf, NULL, "maintenance.expire-every", 10);
    m->compact_interval_ms = conf_for(conf, NULL, "maintenance.compact-interval", 60000);
    m->orphan_interval_ms = conf_for(conf, NULL, "maintenance.orphan-interval", 86400000LL);
    /* the first pass once the run is settled; a crash's leftovers are old enough by then */
    m->next_orphans_ms = w2l__now_ms() + W2L_MIN(m->orphan_interval_ms, 600000);
    w2l_rc rc = w2l__ops_pq_options(conf, &m->pq, err);
    m->inbox = w2l__calloc(m->ncommit, sizeof *m->inbox);
    unsigned nt = (unsigned)conf_for(conf, NULL, "maintenance.threads", 1);
    m->threads = w2l__calloc(nt, sizeof *m->threads);
    if (rc == W2L_OK && (!m->inbox || !m->threads)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK) {
        w2l__free(m->inbox);
        w2l__free(m->threads);
        w2l__free(m);
        return rc;
    }
    mtx_init(&m->mtx, mtx_plain);
    cnd_init(&m->cnd);
    for (unsigned i = 0; i < nt; i++) {
        if (thrd_create(&m->threads[i], worker_main, m) != thrd_success) {
            w2l__maint_free(m);
            return w2l__fail(err, W2L_ERROR, "maintenance: cannot start a thread");
        }
        m->nthreads++;
    }
    *out = m;
    return W2L_OK;
}

void w2l__maint_free(w2l__maint *m)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    m->stop = 1;
    cnd_broadcast(&m->cnd);
    mtx_unlock(&m->mtx);
    for (unsigned i = 0; i < m->nthreads; i++) thrd_join(m->threads[i], NULL);
    w2l__free(m->threads);
    for (job *j = m->head, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    /* compactions never committed: their files go */
    w2l_fileio *io = NULL;
    int any = 0;
    for (unsigned c = 0; c < m->ncommit; c++) any |= m->inbox[c] != NULL;
    if (any) io = open_io(m->conf);
    for (unsigned c = 0; c < m->ncommit; c++)
        for (w2l__maint_result *r = m->inbox[c], *n; r; r = n) {
            n = r->next;
            result_free(r, io, 1);
        }
    w2l_fileio_close(io);
    w2l__free(m->inbox);
    w2l__rewrites_free(m->rewrites);
    for (size_t i = 0; i < m->tcap; i++)
        for (tstat *t = m->tbl[i], *n; t; t = n) {
            n = t->chain;
            w2l__free(t->fq);
            w2l__free(t);
        }
    w2l__free(m->tbl);
    cnd_destroy(&m->cnd);
    mtx_destroy(&m->mtx);
    w2l__free(m);
}

static w2l_rc expire_now(w2l__maint *m, w2l__ice_table *t, const char *fq, const w2l__ice_policy *p,
                         int64_t *ids, size_t n, w2l_error *err)
{
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_EXPIRE);
    ch.expire_ids = ids;
    ch.nexpire = n;
    (void)p;
    w2l_rc rc = w2l__ice_table_try_commit(t, &ch, err);
    if (rc == W2L_OK && ch.nexpired_lists) {
        job *j = w2l__calloc(1, sizeof *j);
        int ok = j && (j->ns = w2l__strdup(t->ns)) && (j->table = w2l__strdup(t->name)) &&
                 (j->lists = w2l__calloc(ch.nexpired_lists, sizeof *j->lists));
        for (size_t i = 0; ok && i < ch.nexpired_lists; i++) {
            ok = (j->lists[i] = w2l__strdup(ch.expired_lists[i])) != NULL;
            if (ok) j->nlists++;
        }
        if (ok) {
            j->kind = JOB_CLEANUP;
            j->expired = (int64_t)ch.nexpired_lists;
            memcpy(j->uuid, t->meta->uuid, sizeof j->uuid);
            push_job(m, j);
        } else {
            job_free(j);
            w2l__log_table(
                W2L_LOG_WARN, NULL, fq,
                "maintenance: %s: out of memory; the files of %zu expired snapshots stay for "
                "orphan removal",
                fq, ch.nexpired_lists);
        }
    }
    w2l__ice_change_release(&ch, t->io, 0);
    return rc;
}

int w2l__maint_committed(w2l__maint *m, unsigned committer, w2l__ice_table *t)
{
    if (!m || !t || !t->meta) return 0;
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", t->ns, t->name);
    w2l__ice_policy p;
    int enabled = 1;
    w2l__maint_policy(m->conf, fq, &p, &enabled);
    if (!enabled) return 0;
    int64_t now = w2l__now_ms();
    int64_t *ids = NULL;
    size_t n = 0;
    w2l_error e;
    w2l_error_clear(&e);
    w2l_rc rc = w2l__ice_expire_select(t->meta, &p, now, &ids, &n, &e);
    if (rc == W2L_OK && n >= (size_t)m->expire_every) rc = expire_now(m, t, fq, &p, ids, n, &e);
    w2l__free(ids);
    if (rc != W2L_OK) {
        w2l__log_table(W2L_LOG_WARN, NULL, fq,
                       "maintenance: %s expire: %s (tried again after the next commit)", fq, e.msg);
        return 1;
    }
    if (!w2l__ice_compact_due(t->meta, &p)) return 0;
    mtx_lock(&m->mtx);
    tstat *ts = tstat_get(m, fq);
    int go = ts && !ts->inflight && now - ts->last_ms >= m->compact_interval_ms;
    if (go) ts->inflight = 1;
    mtx_unlock(&m->mtx);
    if (!go) return 0;
    job *j = w2l__calloc(1, sizeof *j);
    if (!j || !(j->ns = w2l__strdup(t->ns)) || !(j->table = w2l__strdup(t->name))) {
        job_free(j);
        mtx_lock(&m->mtx);
        ts->inflight = 0;
        mtx_unlock(&m->mtx);
        return 0;
    }
    j->kind = JOB_COMPACT;
    j->committer = committer;
    memcpy(j->uuid, t->meta->uuid, sizeof j->uuid);
    push_job(m, j);
    return 0;
}

w2l__maint_result *w2l__maint_take(w2l__maint *m, unsigned committer)
{
    if (!m || committer >= m->ncommit) return NULL;
    mtx_lock(&m->mtx);
    w2l__maint_result *r = m->inbox[committer];
    m->inbox[committer] = NULL;
    mtx_unlock(&m->mtx);
    return r;
}

w2l__maint_result *w2l__maint_result_next(const w2l__maint_result *r) { return r->next; }
const char *w2l__maint_result_ns(const w2l__maint_result *r) { return r->ns; }
const char *w2l__maint_result_table(const w2l__maint_result *r) { return r->table; }

void w2l__maint_drop(w2l__maint *m, w2l__maint_result *r)
{
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", r->ns, r->table);
    w2l__log_table(W2L_LOG_INFO, NULL, fq,
                   "maintenance: %s compact: the table is gone; its compaction is dropped", fq);
    w2l_fileio *io = open_io(m->conf);
    result_free(r, io, 1);
    w2l_fileio_close(io);
    done_compaction(m, fq);
}

/* Commits compaction k through t, brought up to the table's current snapshot first (deletes
 * committed since its base follow their rows into its output), trying again on a new base
 * up to retries times after a race with another process; an input that changed (a file it
 * removes is gone) conflicts every time and drops it (*dropped, W2L_OK, its manifests
 * removed). Another failure keeps every file: the commit's outcome is unknown. */
static w2l_rc commit_compaction(w2l__maint *m, w2l__ice_table *t, w2l__ice_compaction *k,
                                int retries, int *dropped, w2l_error *err)
{
    *dropped = 0;
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_REPLACE);
    w2l__ice_kv mark = {"w2l.maintenance", "compact"};
    ch.summary = &mark;
    ch.nsummary = 1;
    w2l_error e1;
    w2l_rc rc;
    for (int attempt = 0;; attempt++) {
        w2l_error_clear(&e1);
        int changed = 0;
        rc = w2l__ice_compaction_rebase(t->io, t->meta, k, &changed, &e1);
        if (rc == W2L_OK && changed) w2l__ice_change_unwrite(&ch, t->io); /* they name its files */
        w2l__ice_compaction_change(k, &ch);
        if (rc == W2L_OK) rc = w2l__ice_table_try_commit(t, &ch, &e1);
        if (rc != W2L_CONFLICT || attempt >= retries) break;
    }
    if (rc == W2L_CONFLICT) { /* its input changed: dropped, never forced */
        w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                       "maintenance: %s.%s compact: %s; compaction dropped", t->ns, t->name,
                       e1.msg);
        *dropped = 1;
        rc = W2L_OK;
    } else if (rc != W2L_OK && err) {
        *err = e1;
    }
    if (rc == W2L_OK && !*dropped && m && m->rewrites) {
        /* the writers' key indexes name rows of the removed files (rewrites.h) */
        const char **added = w2l__calloc(ch.nfiles + 1, sizeof *added);
        for (size_t i = 0; added && i < ch.nfiles; i++) added[i] = ch.files[i].path;
        rc = added ? w2l__rewrites_post(m->rewrites, t->ns, t->name, ch.removed, ch.nremoved,
                                        added, ch.nfiles, err)
                   : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(added);
    }
    w2l__ice_change_release(&ch, t->io, *dropped);
    return rc;
}

w2l_rc w2l__maint_commit(w2l__maint *m, w2l__maint_result *r, w2l__ice_table *t, int retries,
                         w2l_error *err)
{
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", r->ns, r->table);
    w2l_rc rc = W2L_OK;
    int dropped = 0;
    if (strcmp(t->meta->uuid, r->uuid) != 0) {
        dropped = 1;
        w2l__log_table(W2L_LOG_INFO, NULL, fq,
                       "maintenance: %s compact: the table was re-created; compaction dropped", fq);
    } else {
        rc = commit_compaction(m, t, r->k, retries, &dropped, err);
    }
    if (rc == W2L_OK && !dropped) {
        const w2l__ice_maint_stats *st = w2l__ice_compaction_stats(r->k);
        log_stats(fq, "compact", st);
        w2l__metrics_maint(m->metrics, r->ns, r->table, 1, (uint64_t)st->files_in, 0, 0);
    }
    result_free(r, t->io, dropped);
    done_compaction(m, fq);
    return rc;
}

/* ------------------------------------------------------------- on demand --------- */

typedef struct mreport {
    int (*fn)(void *, const w2l_maintain_report *);
    void *ctx;
    int stopped;
    int dry_run;
    size_t index, n;
} mreport;

static int emit_report(mreport *mr, const char *ns, const char *table, const char *action,
                       const w2l__ice_maint_stats *st, int skipped)
{
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", ns, table);
    if (!skipped && !mr->dry_run) log_stats(fq, action, st);
    if (!mr->fn || mr->stopped) return mr->stopped;
    w2l_maintain_report r;
    memset(&r, 0, sizeof r);
    r.ns = ns;
    r.table = table;
    r.action = action;
    r.dry_run = mr->dry_run;
    r.skipped = skipped;
    r.files_in = (uint64_t)st->files_in;
    r.files_out = (uint64_t)st->files_out;
    r.bytes_in = (uint64_t)st->bytes_in;
    r.bytes_out = (uint64_t)st->bytes_out;
    r.rows_out = (uint64_t)st->rows_out;
    r.snapshots_expired = (uint64_t)st->snapshots_expired;
    r.files_removed = (uint64_t)st->files_removed;
    r.bytes_removed = (uint64_t)st->bytes_removed;
    r.ms = st->ms;
    r.table_index = mr->index;
    r.ntables = mr->n;
    return mr->stopped = mr->fn(mr->ctx, &r) != 0;
}

static void orphans_on_demand(void *ctx, const char *ns, const char *table,
                              const w2l__ice_maint_stats *st)
{
    emit_report(ctx, ns, table, "orphans", st, st->files_removed == 0);
}

static w2l_rc expire_on_demand(w2l__ice_table *t, const w2l__ice_policy *p, mreport *mr,
                               w2l_error *err)
{
    w2l__ice_maint_stats st;
    memset(&st, 0, sizeof st);
    int64_t t0 = w2l__now_ms();
    int64_t *ids = NULL;
    size_t n = 0;
    W2L_TRY(w2l__ice_expire_select(t->meta, p, t0, &ids, &n, err));
    if (!n) {
        emit_report(mr, t->ns, t->name, "expire", &st, 1);
        return W2L_OK;
    }
    w2l__ice_change ch;
    w2l__ice_change_init(&ch, W2L_ICE_OP_EXPIRE);
    ch.expire_ids = ids;
    ch.nexpire = n;
    w2l_rc rc;
    if (mr->dry_run) {
        rc = w2l__ice_apply(t, &ch, err); /* in memory only: what would remain */
    } else {
        for (int attempt = 0;; attempt++) {
            rc = w2l__ice_table_try_commit(t, &ch, err);
            if (rc != W2L_CONFLICT || attempt >= 5) break;
        }
    }
    st.snapshots_expired = (int64_t)ch.nexpired_lists;
    if (rc == W2L_OK)
        rc = w2l__ice_expire_cleanup(t->io, t->meta, ch.expired_lists, ch.nexpired_lists,
                                     mr->dry_run, &st, err);
    st.ms = w2l__now_ms() - t0;
    w2l__ice_change_release(&ch, t->io, 0);
    w2l__free(ids);
    if (rc == W2L_OK) emit_report(mr, t->ns, t->name, "expire", &st, 0);
    return rc;
}

static w2l_rc compact_on_demand(w2l__ice_table *t, const w2l__ice_policy *p,
                                const w2l__pq_options *pq, int force, mreport *mr, w2l_error *err)
{
    w2l__ice_maint_stats none;
    memset(&none, 0, sizeof none);
    if (!force && !w2l__ice_compact_due(t->meta, p)) {
        emit_report(mr, t->ns, t->name, "compact", &none, 1);
        return W2L_OK;
    }
    if (mr->dry_run) { /* what a compaction would take in: every file of the snapshot at most */
        const w2l__ice_snapshot *s = w2l__ice_meta_snapshot(t->meta, t->meta->current_snapshot_id);
        const char *d = s ? w2l__ice_props_get(&s->summary, "total-data-files") : NULL;
        const char *x = s ? w2l__ice_props_get(&s->summary, "total-delete-files") : NULL;
        const char *b = s ? w2l__ice_props_get(&s->summary, "total-files-size") : NULL;
        none.files_in = (d ? strtoll(d, NULL, 10) : 0) + (x ? strtoll(x, NULL, 10) : 0);
        none.bytes_in = b ? strtoll(b, NULL, 10) : 0;
        emit_report(mr, t->ns, t->name, "compact", &none, none.files_in == 0);
        return W2L_OK;
    }
    w2l__ice_compaction *k = NULL;
    W2L_TRY(w2l__ice_compact_prepare(t->io, t->meta, p, pq, &k, err));
    if (!k) {
        emit_report(mr, t->ns, t->name, "compact", &none, 1);
        return W2L_OK;
    }
    int dropped;
    w2l_rc rc = commit_compaction(NULL, t, k, 5, &dropped, err);
    w2l__ice_maint_stats st = *w2l__ice_compaction_stats(k);
    w2l__ice_compaction_free(k, t->io, dropped);
    if (rc == W2L_OK) emit_report(mr, t->ns, t->name, "compact", dropped ? &none : &st, dropped);
    return rc;
}

/* A compaction moves rows to other files and positions: the key indexes of a job running
 * on the warehouse point at the old ones, and only compactions its own pipeline commits
 * reach them (rewrites.h). So none is made beside a running job. */
static w2l_rc refuse_beside_a_job(const w2l_conf *conf, w2l_error *err)
{
    const char *uri = NULL;
    w2l_conf_get(conf, "state", &uri, NULL);
    w2l_state *st = NULL;
    w2l_error e;
    if (w2l_state_open(uri, conf, &st, &e) != W2L_OK) return W2L_OK; /* no store: no job */
    w2l_state_holder h;
    w2l_rc rc = w2l_state_holder_get(st, &h, &e);
    w2l_state_close(st);
    if (rc != W2L_OK || !h.pid) return W2L_OK;
    char since[40];
    w2l__format_utc_ms(h.since_ms, since, sizeof since);
    return w2l__fail(err, W2L_BUSY,
                     "w2l_maintain: job \"%s\" runs on this warehouse (pid %lld on %s, since %s "
                     "UTC): its pipeline compacts its tables itself (maintenance.*); a compaction "
                     "beside it would move rows its key index points at. Expire snapshots and "
                     "remove orphans only (--expire, --remove-orphans), or stop the job first",
                     h.job, h.pid, h.host, since);
}

w2l_rc w2l_maintain(const w2l_conf *conf, const w2l_maintain_options *opt,
                    int (*fn)(void *ctx, const w2l_maintain_report *r), void *ctx, w2l_error *err)
{
    if (!conf) return w2l__fail(err, W2L_MISUSE, "w2l_maintain: NULL conf");
    w2l_maintain_options o;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (!o.actions) o.actions = W2L_MAINTAIN_ALL;
    if ((o.ns == NULL) != (o.table == NULL))
        return w2l__fail(err, W2L_MISUSE,
                         "w2l_maintain: give both the namespace and the table, or neither");
    W2L_TRY(w2l_conf_require(conf, "warehouse", err));
    w2l_fileio *io = NULL;
    w2l_catalog *cat = NULL;
    w2l_rc rc = w2l__catalog_open_conf(conf, &io, &cat, err);
    w2l__pq_options pq;
    if (rc == W2L_OK) rc = w2l__ops_pq_options(conf, &pq, err);
    tcoll c = {0};
    if (rc == W2L_OK && o.table) {
        if (collect(&c, o.ns, o.table)) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    } else if (rc == W2L_OK) {
        rc = w2l__catalog_list(cat, NULL, collect, &c, err);
        if (rc == W2L_OK && c.oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc == W2L_OK && (o.actions & W2L_MAINTAIN_COMPACT) && !o.dry_run)
        rc = refuse_beside_a_job(conf, err);
    mreport mr = {fn, ctx, 0, o.dry_run, 0, c.n};
    for (size_t i = 0; rc == W2L_OK && !mr.stopped && i < c.n &&
                       (o.actions & (W2L_MAINTAIN_EXPIRE | W2L_MAINTAIN_COMPACT));
         i++) {
        mr.index = i + 1;
        char fq[512];
        snprintf(fq, sizeof fq, "%s.%s", c.v[i].ns, c.v[i].table);
        w2l__ice_policy p;
        w2l__maint_policy(conf, fq, &p, NULL);
        w2l__ice_table *t = NULL;
        rc = w2l__ice_table_load(cat, io, c.v[i].ns, c.v[i].table, &t, err);
        if (rc == W2L_NOTFOUND && !o.table) { /* dropped meanwhile */
            rc = W2L_OK;
            continue;
        }
        /* compaction first: expiry then removes what the compaction replaced, once old */
        if (rc == W2L_OK && (o.actions & W2L_MAINTAIN_COMPACT))
            rc = compact_on_demand(t, &p, &pq, o.force_compact, &mr, err);
        if (rc == W2L_OK && !mr.stopped && (o.actions & W2L_MAINTAIN_EXPIRE))
            rc = expire_on_demand(t, &p, &mr, err);
        if (rc != W2L_OK) w2l__error_prefix(err, "table %s: ", fq);
        w2l__ice_table_free(t);
    }
    if (rc == W2L_OK && !mr.stopped && (o.actions & W2L_MAINTAIN_ORPHANS)) {
        mr.index = mr.n;
        rc = w2l__maint_orphans(conf, cat, io, o.ns, o.table, o.dry_run, orphans_on_demand, &mr,
                                err);
    }
    if (rc == W2L_OK && mr.stopped)
        rc = w2l__fail(err, W2L_CANCELLED, "w2l_maintain: stopped by the callback");
    for (size_t i = 0; i < c.n; i++) {
        w2l__free(c.v[i].ns);
        w2l__free(c.v[i].table);
    }
    w2l__free(c.v);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    return rc;
}

w2l_rc w2l__maint_set_writers(w2l__maint *m, unsigned nwriters, w2l_error *err)
{
    if (!m || m->rewrites) return W2L_OK;
    m->rewrites = w2l__rewrites_new(nwriters);
    return m->rewrites ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
}

w2l__rewrites *w2l__maint_rewrites(w2l__maint *m) { return m ? m->rewrites : NULL; }
