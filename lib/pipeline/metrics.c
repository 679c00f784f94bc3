/* Per-table metrics (metrics.h): a list of tables found through a small hash index, and
 * the pipeline-wide checkpoint figures. */
#include "metrics.h"
#include "../event/emit.h"
#include "../common/thread.h"
#include "../json/json.h"

const double w2l__latency_bounds[W2L_LATENCY_BUCKETS] = {W2L_LATENCY_BOUNDS};

unsigned w2l__latency_bucket(double secs)
{
    unsigned i = 0;
    while (i < W2L_LATENCY_BUCKETS && secs > w2l__latency_bounds[i]) i++;
    return i;
}

typedef struct rows_mark { uint64_t id, rows; } rows_mark;

typedef struct tm_entry {
    char *ns, *table;
    uint64_t h;
    unsigned committer;
    w2l_table_metrics m;
    uint64_t *pend;                    /* checkpoints with results not yet committed, rising */
    size_t npend, cappend;
    rows_mark *marks;                  /* rows_in at barriers not yet committed, rising */
    size_t nmarks, capmarks;
    int64_t last_commit_ms;            /* 0: none */
    int64_t last_compaction_ms;        /* 0: none */
    struct tm_entry *chain, *next;
} tm_entry;

struct w2l__metrics {
    mtx_t mtx;
    tm_entry *head, *tail;
    tm_entry **idx;
    size_t cap, n;
    /* pipeline-wide */
    uint64_t ckpt_hist[W2L_LATENCY_BUCKETS + 1];
    double ckpt_sum;
    uint64_t ckpt_completed, ckpt_failed;
    int64_t complete_ms;               /* -1: none */
    int64_t ki_keys, ki_mem, ki_disk;  /* the writers' key indexes */
    uint64_t ki_rebuilds;
};

w2l__metrics *w2l__metrics_new(void)
{
    w2l__metrics *m = w2l__calloc(1, sizeof *m);
    if (m) {
        mtx_init(&m->mtx, mtx_plain);
        m->complete_ms = -1;
    }
    return m;
}

void w2l__metrics_free(w2l__metrics *m)
{
    if (!m) return;
    for (tm_entry *e = m->head; e;) {
        tm_entry *n = e->next;
        w2l__free(e->ns);
        w2l__free(e->table);
        w2l__free(e->pend);
        w2l__free(e->marks);
        w2l__free(e);
        e = n;
    }
    w2l__free(m->idx);
    mtx_destroy(&m->mtx);
    w2l__free(m);
}

/* The entry of a table, created when absent; NULL when out of memory. Lock held. */
static tm_entry *entry(w2l__metrics *m, const char *ns, const char *table)
{
    uint64_t h = w2l__table_hash(ns, table);
    if (m->cap)
        for (tm_entry *e = m->idx[h & (m->cap - 1)]; e; e = e->chain)
            if (e->h == h && !strcmp(e->ns, ns) && !strcmp(e->table, table)) return e;
    if (m->n + 1 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        tm_entry **ni = w2l__calloc(cap, sizeof *ni);
        if (!ni) return NULL;
        for (tm_entry *e = m->head; e; e = e->next) {
            e->chain = ni[e->h & (cap - 1)];
            ni[e->h & (cap - 1)] = e;
        }
        w2l__free(m->idx);
        m->idx = ni;
        m->cap = cap;
    }
    tm_entry *e = w2l__calloc(1, sizeof *e);
    if (!e) return NULL;
    e->ns = w2l__strdup(ns);
    e->table = w2l__strdup(table);
    if (!e->ns || !e->table) {
        w2l__free(e->ns), w2l__free(e->table), w2l__free(e);
        return NULL;
    }
    e->h = h;
    e->chain = m->idx[h & (m->cap - 1)];
    m->idx[h & (m->cap - 1)] = e;
    if (m->tail) m->tail->next = e;
    else m->head = e;
    m->tail = e;
    m->n++;
    return e;
}

void w2l__metrics_rows(w2l__metrics *m, const char *ns, const char *table,
                       const w2l_change *changes, size_t n)
{
    if (!m) return;
    uint64_t ins = 0, upd = 0, del = 0;
    for (size_t i = 0; changes && i < n; i++) {
        ins += changes[i].op == W2L_OP_INSERT;
        upd += changes[i].op == W2L_OP_UPDATE_AFTER;
        del += changes[i].op == W2L_OP_DELETE;
    }
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) {
        e->m.rows_in += n;
        e->m.rows_inserted += ins;
        e->m.rows_updated += upd;
        e->m.rows_deleted += del;
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_schema(w2l__metrics *m, const char *ns, const char *table)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) e->m.schema_changes++;
    mtx_unlock(&m->mtx);
}

void w2l__metrics_quarantined(w2l__metrics *m, const char *ns, const char *table, uint64_t n,
                              const char *reason)
{
    (void)reason;
    if (!m) return;
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) {
        e->m.quarantined = 1;
        e->m.rows_quarantined += n;
    }
    mtx_unlock(&m->mtx);
}

/* The table left its quarantine (its source table was dropped or replaced). */
void w2l__metrics_released(w2l__metrics *m, const char *ns, const char *table)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) e->m.quarantined = 0;
    mtx_unlock(&m->mtx);
}

static _Thread_local w2l__metrics *current_metrics;
void w2l__metrics_set_current(w2l__metrics *m) { current_metrics = m; }
w2l__metrics *w2l__metrics_current(void) { return current_metrics; }

void w2l__metrics_result(w2l__metrics *m, const char *ns, const char *table, uint64_t ckpt,
                         unsigned committer, const char *payload, size_t len)
{
    if (!m) return;
    uint64_t files = 0, bytes = 0;
    w2l__json *j = NULL;
    if (payload && w2l__json_parse(payload, len, &j, NULL) == W2L_OK) {
        for (const w2l__json *f = w2l__json_first(w2l__json_get(j, "files")); f;
             f = w2l__json_next(f)) {
            int64_t sz = 0;
            files++;
            if (!w2l__json_int64(w2l__json_get(f, "file-size"), &sz) && sz > 0)
                bytes += (uint64_t)sz;
        }
        w2l__json_free(j);
    }
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) {
        e->committer = committer;
        e->m.files_written += files;
        e->m.bytes_written += bytes;
        if (!e->npend || e->pend[e->npend - 1] < ckpt) {
            if (e->npend == e->cappend) {
                size_t cap = e->cappend ? 2 * e->cappend : 4;
                uint64_t *v = w2l__realloc(e->pend, cap * sizeof *v);
                if (v) e->pend = v, e->cappend = cap;
            }
            if (e->npend < e->cappend) e->pend[e->npend++] = ckpt;
        }
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_committed(w2l__metrics *m, unsigned committer, uint64_t ckpt, double secs)
{
    if (!m) return;
    int64_t now = w2l__now_ms();
    unsigned b = w2l__latency_bucket(secs);
    mtx_lock(&m->mtx);
    for (tm_entry *e = m->head; e; e = e->next) {
        if (e->committer != committer || !e->npend || e->pend[0] > ckpt) continue;
        size_t k = 0;
        while (k < e->npend && e->pend[k] <= ckpt) k++;
        e->m.commits += k; /* one commit per checkpoint with its files */
        e->m.last_committed_ckpt = e->pend[k - 1];
        e->m.commit_latency[b] += k;
        e->m.commit_latency_sum += secs * (double)k;
        memmove(e->pend, e->pend + k, (e->npend - k) * sizeof *e->pend);
        e->npend -= k;
        e->last_commit_ms = now;
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_barrier(w2l__metrics *m, uint64_t id)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    for (tm_entry *e = m->head; e; e = e->next) {
        uint64_t last = e->nmarks ? e->marks[e->nmarks - 1].rows : e->m.rows_committed;
        if (e->m.rows_in == last) continue;
        if (e->nmarks == e->capmarks) {
            size_t cap = e->capmarks ? 2 * e->capmarks : 4;
            rows_mark *v = w2l__realloc(e->marks, cap * sizeof *v);
            if (!v) continue;
            e->marks = v;
            e->capmarks = cap;
        }
        e->marks[e->nmarks++] = (rows_mark){id, e->m.rows_in};
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_sealed(w2l__metrics *m, uint64_t id, double secs)
{
    (void)id;
    if (!m) return;
    mtx_lock(&m->mtx);
    m->ckpt_hist[w2l__latency_bucket(secs)]++;
    m->ckpt_sum += secs;
    mtx_unlock(&m->mtx);
}

void w2l__metrics_ckpt_failed(w2l__metrics *m)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    m->ckpt_failed++;
    mtx_unlock(&m->mtx);
}

void w2l__metrics_all_committed(w2l__metrics *m, uint64_t id, int64_t mark_ms)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    m->ckpt_completed++;
    if (mark_ms > m->complete_ms) m->complete_ms = mark_ms;
    for (tm_entry *e = m->head; e; e = e->next) {
        size_t k = 0;
        while (k < e->nmarks && e->marks[k].id <= id) k++;
        if (!k) continue;
        e->m.rows_committed = e->marks[k - 1].rows;
        memmove(e->marks, e->marks + k, (e->nmarks - k) * sizeof *e->marks);
        e->nmarks -= k;
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_maint(w2l__metrics *m, const char *ns, const char *table, uint64_t compactions,
                        uint64_t files_compacted, uint64_t snapshots_expired,
                        uint64_t files_removed)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    tm_entry *e = entry(m, ns, table);
    if (e) {
        e->m.compactions += compactions;
        e->m.files_compacted += files_compacted;
        e->m.snapshots_expired += snapshots_expired;
        e->m.files_removed += files_removed;
        if (compactions) e->last_compaction_ms = w2l__now_ms();
    }
    mtx_unlock(&m->mtx);
}

void w2l__metrics_key_index(w2l__metrics *m, int64_t keys, int64_t mem, int64_t disk,
                            uint64_t rebuilds)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    m->ki_keys += keys;
    m->ki_mem += mem;
    m->ki_disk += disk;
    m->ki_rebuilds += rebuilds;
    mtx_unlock(&m->mtx);
}

w2l_rc w2l__metrics_each(w2l__metrics *m, int64_t lag_ms,
                         int (*fn)(void *, const w2l_table_metrics *), void *ctx, w2l_error *err)
{
    if (!m || !fn) return w2l__fail(err, W2L_MISUSE, "w2l_pipeline_metrics: NULL argument");
    /* a copy, so fn runs without the lock (it may be slow, or call back) */
    mtx_lock(&m->mtx);
    size_t n = m->n, i = 0;
    w2l_table_metrics *copy = w2l__calloc(n ? n : 1, sizeof *copy);
    char **names = w2l__calloc(n ? 2 * n : 1, sizeof *names);
    int64_t now = w2l__now_ms();
    int ok = copy && names;
    for (tm_entry *e = m->head; ok && e; e = e->next, i++) {
        copy[i] = e->m;
        copy[i].secs_since_commit =
            e->last_commit_ms ? (double)(now - e->last_commit_ms) / 1000.0 : -1;
        copy[i].source_lag_ms = lag_ms;
        copy[i].secs_since_compaction =
            e->last_compaction_ms ? (double)(now - e->last_compaction_ms) / 1000.0 : -1;
        copy[i].pending_checkpoints = e->npend;
        copy[i].complete_through_ms = e->m.quarantined ? -1 : m->complete_ms;
        names[2 * i] = w2l__strdup(e->ns);
        names[2 * i + 1] = w2l__strdup(e->table);
        ok = names[2 * i] && names[2 * i + 1];
    }
    mtx_unlock(&m->mtx);
    w2l_rc rc = ok ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory reading metrics");
    for (size_t k = 0; rc == W2L_OK && k < n; k++) {
        copy[k].ns = names[2 * k];
        copy[k].table = names[2 * k + 1];
        if (fn(ctx, &copy[k])) break;
    }
    for (size_t k = 0; names && k < 2 * n; k++) w2l__free(names[k]);
    w2l__free(names);
    w2l__free(copy);
    return rc;
}

void w2l__metrics_totals(w2l__metrics *m, w2l_pipeline_info *info)
{
    if (!m) return;
    mtx_lock(&m->mtx);
    memcpy(info->checkpoint_duration, m->ckpt_hist, sizeof m->ckpt_hist);
    info->checkpoint_duration_sum = m->ckpt_sum;
    info->checkpoints_completed = m->ckpt_completed;
    info->checkpoints_failed = m->ckpt_failed;
    info->complete_through_ms = m->complete_ms;
    info->key_index_keys = m->ki_keys > 0 ? (uint64_t)m->ki_keys : 0;
    info->key_index_memory_bytes = m->ki_mem > 0 ? (uint64_t)m->ki_mem : 0;
    info->key_index_disk_bytes = m->ki_disk > 0 ? (uint64_t)m->ki_disk : 0;
    info->key_index_rebuilds = m->ki_rebuilds;
    for (tm_entry *e = m->head; e; e = e->next) {
        info->tables++;
        info->tables_quarantined += e->m.quarantined != 0;
        info->rows_in += e->m.rows_in;
        info->rows_committed += e->m.quarantined ? e->m.rows_in : e->m.rows_committed;
        info->compactions += e->m.compactions;
        info->snapshots_expired += e->m.snapshots_expired;
        info->files_removed += e->m.files_removed;
    }
    mtx_unlock(&m->mtx);
}
