/*
 * The committer's table handles (op_committer_int.h): the tables it loaded, each with this
 * job's newest checkpoint in its ancestry, in a hash map with an LRU bound
 * (HANDLE_CACHE_MAX); a handle goes when its table changed under it (a SCHEMA element, the
 * owner's table operations, a failed commit) and is loaded again at its next use.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_committer_int.h"

/* ------------------------------------------------------------ table handles ------- */

static void lru_unlink(committer *c, handle *h)
{
    if (h->prev) h->prev->next = h->next;
    else c->lru_head = h->next;
    if (h->next) h->next->prev = h->prev;
    else c->lru_tail = h->prev;
    h->prev = h->next = NULL;
}

static void lru_front(committer *c, handle *h)
{
    h->next = c->lru_head;
    h->prev = NULL;
    if (c->lru_head) c->lru_head->prev = h;
    c->lru_head = h;
    if (!c->lru_tail) c->lru_tail = h;
}

static handle **bucket_of(committer *c, uint64_t h) { return &c->hbuckets[h & (c->hcap - 1)]; }

void w2l__cm_handle_drop(committer *c, handle *h)
{
    for (handle **pp = bucket_of(c, h->h); *pp; pp = &(*pp)->chain)
        if (*pp == h) {
            *pp = h->chain;
            break;
        }
    lru_unlink(c, h);
    w2l__ice_table_free(h->t);
    w2l__free(h);
    c->hcount--;
}

handle *w2l__cm_handle_find(committer *c, const char *ns, const char *table)
{
    if (!c->hcap) return NULL;
    uint64_t hh = w2l__table_hash(ns, table);
    for (handle *h = *bucket_of(c, hh); h; h = h->chain)
        if (h->h == hh && strcmp(h->t->ns, ns) == 0 && strcmp(h->t->name, table) == 0) return h;
    return NULL;
}

/* The checkpoint of the newest snapshot of this job in the table's ancestry (0: none). Along
 * one job's ancestry checkpoint ids only grow, so the newest is the largest. */
uint64_t w2l__cm_job_ckpt(const committer *c, const w2l__ice_meta *m, w2l_error *err, w2l_rc *rc)
{
    const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(m, c->job_id, rc, err);
    return s ? strtoull(w2l__ice_props_get(&s->summary, "w2l.checkpoint-id"), NULL, 10) : 0;
}

w2l_rc w2l__cm_ensure_catalog(committer *c, w2l_error *err)
{
    if (c->cat) return W2L_OK;
    return w2l__catalog_open_conf(c->conf, &c->io, &c->cat, err);
}

void w2l__cm_drop_touched(void *ctx, const char *ns, const char *table)
{
    committer *c = ctx;
    handle *h = w2l__cm_handle_find(c, ns, table);
    if (h) w2l__cm_handle_drop(c, h);
}

/* The handle of ns.table, loaded when not cached. W2L_NOTFOUND when the table is gone. */
w2l_rc w2l__cm_handle_get(committer *c, const char *ns, const char *table, handle **out,
                          w2l_error *err)
{
    handle *h = w2l__cm_handle_find(c, ns, table);
    if (h) {
        lru_unlink(c, h);
        lru_front(c, h);
        *out = h;
        return W2L_OK;
    }
    W2L_TRY(w2l__cm_ensure_catalog(c, err));
    if (!c->hcap) {
        c->hcap = 512; /* a power of two (bucket_of), at least twice the handles */
        while (c->hcap < 2 * (size_t)HANDLE_CACHE_MAX(c)) c->hcap *= 2;
        c->hbuckets = w2l__calloc(c->hcap, sizeof *c->hbuckets);
        if (!c->hbuckets) {
            c->hcap = 0;
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    }
    while (c->hcount >= (size_t)HANDLE_CACHE_MAX(c)) w2l__cm_handle_drop(c, c->lru_tail);
    w2l__ice_table *t;
    W2L_TRY(w2l__ice_table_load(c->cat, c->io, ns, table, &t, err));
    h = w2l__calloc(1, sizeof *h);
    if (!h) {
        w2l__ice_table_free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    h->t = t;
    h->h = w2l__table_hash(ns, table);
    /* table.format-version is for new tables: one already there keeps its version */
    char fq[512];
    snprintf(fq, sizeof fq, "%s.%s", ns, table);
    const char *fv = NULL;
    w2l_conf_get_for_table(c->conf, fq, "table.format-version", &fv, NULL);
    if (fv && atoi(fv) > t->meta->format_version)
        w2l__log_table(W2L_LOG_WARN, ns, table,
                       "committer %u: %s.%s is a format version %d table and stays one "
                       "(table.format-version %s applies to new tables only)",
                       c->index, ns, table, t->meta->format_version, fv);
    w2l_rc rc;
    h->max_ckpt = w2l__cm_job_ckpt(c, t->meta, err, &rc);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t);
        w2l__free(h);
        return rc;
    }
    handle **b = bucket_of(c, h->h);
    h->chain = *b;
    *b = h;
    lru_front(c, h);
    c->hcount++;
    *out = h;
    return W2L_OK;
}
