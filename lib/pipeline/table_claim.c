/*
 * Table claims (owner.h): one job writes a table. A table belongs to the job of the newest
 * snapshot of its current history that carries w2l.job-id (the committers' snapshots);
 * snapshots of other writers (a Spark compaction) and w2l's own maintenance carry none
 * and change nothing. A table with no such snapshot belongs to the job that created it
 * (the table property w2l.created-by-job), else to nobody. The members of a consumer
 * group commit under the group's job id plus a member tag ("-m" and 12 hex digits,
 * pipeline.c): they are one job here.
 *
 * Before a job writes a table (the DDL handler's first load, a writer's, the committer's
 * first commit of a checkpoint and each retry after a lost race) it claims it: another
 * job's table is refused with W2L_BUSY naming both jobs, unless job.adopt-tables names it
 * (a hand-over: this job's next commit makes it the owner).
 *
 * Cost: a claim reads only the metadata its caller loaded anyway. Each table's verdict is
 * kept with the snapshot it was reached at (and the table's uuid), so a table is walked
 * once per process; a later claim returns at once while the table has not moved, and
 * otherwise walks only the snapshots added since. Thread-safe (one mutex).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "../event/emit.h"
#include "owner.h"

typedef struct claim {
    uint64_t h;
    char *name;               /* "ns.table" */
    char uuid[40];            /* the incarnation the verdict is for */
    int64_t snap;             /* its current snapshot then (-1: none) */
    struct claim *chain;
} claim;

struct w2l__claims {
    char *job;
    char **adopt;             /* job.adopt-tables: "ns.table" or "ns.*"; NULL: none */
    size_t nadopt;
    int adopt_all;            /* "*" */
    mtx_t mtx;
    claim **buckets;          /* power-of-two count, load <= 1 */
    size_t cap, n;
};

/* ------------------------------------------------------------------ set up ---------- */

static w2l_rc parse_adopt(w2l__claims *c, const char *list, w2l_error *err)
{
    for (const char *p = list; p && *p;) {
        p += strspn(p, " ,");
        size_t n = strcspn(p, ",");
        while (n && p[n - 1] == ' ') n--;
        if (!n) break;
        const char *dot = memchr(p, '.', n);
        if (n == 1 && *p == '*') {
            c->adopt_all = 1;
        } else if (!dot || dot == p || dot == p + n - 1) {
            return w2l__fail(err, W2L_CONFIG,
                             "job.adopt-tables: '%.*s' is not NAMESPACE.TABLE, NAMESPACE.* or *",
                             (int)W2L_MIN(n, 200), p);
        } else {
            char **v = w2l__realloc(c->adopt, (c->nadopt + 1) * sizeof *v);
            W2L_NOMEM_IF(!v, err);
            c->adopt = v;
            v[c->nadopt] = w2l__malloc(n + 1);
            W2L_NOMEM_IF(!v[c->nadopt], err);
            memcpy(v[c->nadopt], p, n);
            v[c->nadopt++][n] = '\0';
        }
        p += n;
        p += strcspn(p, ",");
    }
    return W2L_OK;
}

w2l_rc w2l__claims_new(const w2l_conf *conf, const char *job, w2l__claims **out, w2l_error *err)
{
    *out = NULL;
    w2l__claims *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    if (mtx_init(&c->mtx, mtx_plain) != thrd_success) {
        w2l__free(c);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    c->job = w2l__strdup(job ? job : "");
    const char *list = NULL;
    w2l_rc rc = c->job ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && conf) w2l_conf_get(conf, "job.adopt-tables", &list, NULL);
    if (rc == W2L_OK) rc = parse_adopt(c, list, err);
    if (rc != W2L_OK) {
        w2l__claims_free(c);
        return rc;
    }
    *out = c;
    return W2L_OK;
}

void w2l__claims_free(w2l__claims *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++)
        for (claim *e = c->buckets[i], *n; e; e = n) {
            n = e->chain;
            w2l__free(e->name);
            w2l__free(e);
        }
    w2l__free(c->buckets);
    for (size_t i = 0; i < c->nadopt; i++) w2l__free(c->adopt[i]);
    w2l__free(c->adopt);
    w2l__free(c->job);
    mtx_destroy(&c->mtx);
    w2l__free(c);
}

const char *w2l__claims_job(const w2l__claims *c) { return c ? c->job : NULL; }

/* ------------------------------------------------------------------ owners ---------- */

/* The length of job without a consumer group member's tag ("-m" + 12 hex digits). */
static size_t family_len(const char *job)
{
    size_t n = strlen(job);
    if (n < 15 || job[n - 14] != '-' || job[n - 13] != 'm') return n;
    for (size_t i = n - 12; i < n; i++)
        if (!((job[i] >= '0' && job[i] <= '9') || (job[i] >= 'a' && job[i] <= 'f'))) return n;
    return n - 14;
}

int w2l__claims_same_job(const char *a, const char *b)
{
    size_t n = family_len(a);
    return n == family_len(b) && strncmp(a, b, n) == 0;
}

typedef struct walk {
    int64_t stop;             /* a snapshot judged before: the walk ends there */
    int stopped;
    const w2l__ice_snapshot *found;
} walk;

static int walk_step(void *ctx, const w2l__ice_snapshot *s, size_t depth)
{
    (void)depth;
    walk *w = ctx;
    if (s->snapshot_id == w->stop) return w->stopped = 1;
    if (w2l__ice_props_get(&s->summary, "w2l.job-id")) w->found = s;
    return w->found != NULL;
}

/* The owner of m: the job of the newest snapshot since stop that carries w2l.job-id (*s
 * set), else, when the walk did not reach stop, the creator; NULL: none (or unchanged
 * since stop: *stopped). */
static const char *owner_since(const w2l__ice_meta *m, int64_t stop, const w2l__ice_snapshot **s,
                               int *stopped, w2l_error *err, w2l_rc *rc)
{
    walk w = {stop, 0, NULL};
    *rc = w2l__ice_meta_ancestry(m, walk_step, &w, err);
    *s = w.found;
    *stopped = w.stopped;
    if (*rc != W2L_OK || w.stopped) return NULL;
    if (w.found) return w2l__ice_props_get(&w.found->summary, "w2l.job-id");
    return w2l__ice_props_get(&m->props, W2L_CLAIM_CREATOR_KEY);
}

const char *w2l__claims_owner(const w2l__ice_meta *m)
{
    const w2l__ice_snapshot *s;
    int stopped;
    w2l_rc rc;
    return owner_since(m, -2, &s, &stopped, NULL, &rc);
}

/* ------------------------------------------------------------------ the cache ------- */

static claim *find(w2l__claims *c, uint64_t h, const char *name)
{
    if (!c->cap) return NULL;
    for (claim *e = c->buckets[h & (c->cap - 1)]; e; e = e->chain)
        if (e->h == h && strcmp(e->name, name) == 0) return e;
    return NULL;
}

/* Records the verdict for name at m (the lock held); a failure only costs a walk later. */
static void remember(w2l__claims *c, uint64_t h, const char *name, const w2l__ice_meta *m)
{
    claim *e = find(c, h, name);
    if (!e) {
        if (c->n + 1 > c->cap) {
            size_t ncap = c->cap ? c->cap * 2 : 256;
            claim **nb = w2l__calloc(ncap, sizeof *nb);
            if (!nb) return;
            for (size_t i = 0; i < c->cap; i++)
                for (claim *x = c->buckets[i], *n; x; x = n) {
                    n = x->chain;
                    x->chain = nb[x->h & (ncap - 1)];
                    nb[x->h & (ncap - 1)] = x;
                }
            w2l__free(c->buckets);
            c->buckets = nb;
            c->cap = ncap;
        }
        e = w2l__calloc(1, sizeof *e);
        if (e) e->name = w2l__strdup(name);
        if (!e || !e->name) {
            w2l__free(e);
            return;
        }
        e->h = h;
        e->chain = c->buckets[h & (c->cap - 1)];
        c->buckets[h & (c->cap - 1)] = e;
        c->n++;
    }
    snprintf(e->uuid, sizeof e->uuid, "%s", m->uuid);
    e->snap = m->current_snapshot_id;
}

static int adopted(const w2l__claims *c, const char *ns, const char *name)
{
    if (c->adopt_all) return 1;
    size_t nl = strlen(ns);
    for (size_t i = 0; i < c->nadopt; i++) {
        const char *a = c->adopt[i];
        if (strncmp(a, ns, nl) != 0 || a[nl] != '.') continue;
        if (strcmp(a + nl + 1, "*") == 0 || strcmp(a + nl + 1, name) == 0) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ claiming -------- */

w2l_rc w2l__claims_check(w2l__claims *c, const char *ns, const char *table,
                         const w2l__ice_meta *m, w2l_error *err)
{
    if (!c || !m) return W2L_OK;
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    uint64_t h = w2l__table_hash(ns, table);
    mtx_lock(&c->mtx);
    const claim *e = find(c, h, name);
    int same = e && strcmp(e->uuid, m->uuid) == 0;
    int64_t stop = same ? e->snap : -2;
    mtx_unlock(&c->mtx);
    if (same && stop == m->current_snapshot_id) return W2L_OK;
    /* the usual case, after this job's own commit: the current snapshot (most often the
     * last one listed) is this job's, and no walk is needed */
    const w2l__ice_snapshot *cur = NULL;
    for (size_t i = m->nsnapshots; i-- > 0 && !cur;)
        if (m->snapshots[i].snapshot_id == m->current_snapshot_id) cur = &m->snapshots[i];
    const char *cj = cur ? w2l__ice_props_get(&cur->summary, "w2l.job-id") : NULL;
    const w2l__ice_snapshot *s = NULL;
    int stopped = 0;
    w2l_rc rc = W2L_OK;
    const char *job = cj && w2l__claims_same_job(cj, c->job)
                          ? cj
                          : owner_since(m, stop, &s, &stopped, err, &rc);
    if (rc != W2L_OK) return rc;
    if (job && *job && !w2l__claims_same_job(job, c->job)) {
        if (!adopted(c, ns, table)) {
            char when[32] = "?", what[96];
            if (s) w2l_time_format(s->timestamp_ms, when, sizeof when);
            const char *ck = s ? w2l__ice_props_get(&s->summary, "w2l.checkpoint-id") : NULL;
            if (s) snprintf(what, sizeof what, "its checkpoint %s committed at %s", ck ? ck : "?",
                            when);
            else snprintf(what, sizeof what, "which created it");
            return w2l__fail(err, W2L_BUSY,
                             "table %s belongs to job \"%.100s\" (%s), not to this job "
                             "\"%.100s\": one job writes a table. Leave it to that job (exclude "
                             "it here), or hand it over: stop job \"%.100s\" and run this one "
                             "with --adopt-tables %s",
                             name, job, what, c->job, job, name);
        }
        /* once per table and process: the verdict is kept below */
        w2l__log_table(W2L_LOG_WARN, ns, table,
                       "table %s belongs to job \"%s\"; this job \"%s\" adopts it "
                       "(job.adopt-tables) and owns it from its next commit on",
                       name, job, c->job);
    }
    mtx_lock(&c->mtx);
    remember(c, h, name, m);
    mtx_unlock(&c->mtx);
    return W2L_OK;
}
