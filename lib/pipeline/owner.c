/*
 * The table owner of one pipeline (owner.h): the operations the DDL handlers recorded, by
 * checkpoint, and the order in which committers commit around them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../common/thread.h"
#include "../io/io.h"
#include "../json/json.h"
#include "owner.h"
#include "ops.h"
#include "table_ops.h"

typedef struct opset {        /* one handler's operations of one checkpoint */
    uint64_t ckpt;
    unsigned handler;
    char *ops;                /* JSON array, NUL-terminated */
    size_t len;
    struct opset *next;       /* sorted by (ckpt, handler) */
} opset;

struct w2l__owner {
    const w2l_conf *conf;
    w2l_fileio *io;           /* opened when operations are first applied */
    w2l_catalog *cat;
    char *job_id;
    w2l__claims *claims;      /* table_claim.c, for job_id */
    mtx_t mtx;
    cnd_t cv;
    unsigned ncommit;
    uint64_t restored;
    uint64_t *done;           /* per committer: its data committed up to here */
    opset *sets;              /* not yet applied */
    uint64_t generation;
    /* the tables each generation's operations touched, "ns\0table\0" after one another,
     * for the generations above touched_floor (older ones are forgotten: a committer that
     * far behind drops all its handles); tgen[i] where generation tgen[i].gen begins */
    w2l_buf touched;
    uint64_t touched_floor;
    struct tgen { uint64_t gen; size_t off; } *tgen;
    size_t ntgen, captgen;
    int aborted;
    int shared;
    /* the last operation applied, also on disk (applied_path): never applied again */
    uint64_t a_ckpt;
    unsigned a_handler, a_index;
    int a_valid;
    char *applied_path;
};

static _Thread_local w2l__owner *current_owner;

void w2l__owner_set_current(w2l__owner *o) { current_owner = o; }
w2l__owner *w2l__owner_current(void) { return current_owner; }

w2l__owner *w2l__owner_new(const w2l_conf *conf, unsigned ncommit, uint64_t restored)
{
    w2l__owner *o = w2l__calloc(1, sizeof *o);
    if (!o) return NULL;
    o->conf = conf;
    o->ncommit = ncommit ? ncommit : 1;
    o->restored = restored;
    o->done = w2l__calloc(o->ncommit, sizeof *o->done);
    if (!o->done || mtx_init(&o->mtx, mtx_plain) != thrd_success) {
        w2l__free(o->done);
        w2l__free(o);
        return NULL;
    }
    if (cnd_init(&o->cv) != thrd_success) {
        mtx_destroy(&o->mtx);
        w2l__free(o->done);
        w2l__free(o);
        return NULL;
    }
    return o;
}

static void opset_free(opset *s)
{
    if (!s) return;
    w2l__free(s->ops);
    w2l__free(s);
}

void w2l__owner_set_shared(w2l__owner *o) { o->shared = 1; }

void w2l__owner_free(w2l__owner *o)
{
    if (!o) return;
    while (o->sets) {
        opset *n = o->sets->next;
        opset_free(o->sets);
        o->sets = n;
    }
    w2l__catalog_close(o->cat);
    w2l_fileio_close(o->io);
    w2l__claims_free(o->claims);
    w2l__free(o->job_id);
    w2l__free(o->applied_path);
    w2l__free(o->done);
    w2l_buf_release(&o->touched);
    w2l__free(o->tgen);
    cnd_destroy(&o->cv);
    mtx_destroy(&o->mtx);
    w2l__free(o);
}

void w2l__owner_abort(w2l__owner *o)
{
    if (!o) return;
    mtx_lock(&o->mtx);
    o->aborted = 1;
    cnd_broadcast(&o->cv);
    mtx_unlock(&o->mtx);
}

static w2l_rc stopped(w2l_error *err)
{
    return w2l__fail(err, W2L_CANCELLED, "pipeline stopping");
}

/* ------------------------------------------------------------------ DDL side ------ */

/* Inserts (ckpt, handler) in order unless present; the lock is held. */
static w2l_rc add_locked(w2l__owner *o, uint64_t ckpt, unsigned handler, const char *ops,
                         size_t len, w2l_error *err)
{
    opset **pp = &o->sets;
    while (*pp && ((*pp)->ckpt < ckpt || ((*pp)->ckpt == ckpt && (*pp)->handler < handler)))
        pp = &(*pp)->next;
    if (*pp && (*pp)->ckpt == ckpt && (*pp)->handler == handler) return W2L_OK;
    opset *s = w2l__calloc(1, sizeof *s);
    char *text = w2l__malloc(len + 1);
    if (!s || !text) {
        w2l__free(s);
        w2l__free(text);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    memcpy(text, ops, len);
    text[len] = '\0';
    *s = (opset){ckpt, handler, text, len, *pp};
    *pp = s;
    return W2L_OK;
}

w2l_rc w2l__owner_add_ops(w2l__owner *o, uint64_t ckpt, unsigned handler, const char *ops,
                          size_t len, w2l_error *err)
{
    mtx_lock(&o->mtx);
    w2l_rc rc = add_locked(o, ckpt, handler, ops, len, err);
    mtx_unlock(&o->mtx);
    return rc;
}

w2l_rc w2l__owner_pending_ops(w2l__owner *o, unsigned handler, w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    w2l_rc rc = w2l_buf_append(out, "[", 1, err);
    int first = 1;
    mtx_lock(&o->mtx);
    for (opset *s = o->sets; rc == W2L_OK && s; s = s->next) {
        if (s->handler != handler) continue;
        rc = w2l__buf_printf(out, err, "%s{\"checkpoint\":%llu,\"ops\":%s}", first ? "" : ",",
                             (unsigned long long)s->ckpt, s->ops);
        first = 0;
    }
    mtx_unlock(&o->mtx);
    if (rc == W2L_OK) rc = w2l_buf_append(out, "]", 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(out, err);
    return rc;
}

static w2l_rc load_ops(w2l__owner *o, unsigned handler, const char *value, size_t len,
                       w2l_error *err)
{
    w2l__json *j;
    W2L_TRY(w2l__json_parse(value, len, &j, err));
    w2l_rc rc = W2L_OK;
    mtx_lock(&o->mtx);
    for (const w2l__json *e = w2l__json_first(j); rc == W2L_OK && e; e = w2l__json_next(e)) {
        int64_t ck;
        const w2l__json *ops = w2l__json_get(e, "ops");
        if (w2l__json_int64(w2l__json_get(e, "checkpoint"), &ck) || ck <= 0 || !ops) {
            rc = w2l__fail(err, W2L_CORRUPT,
                           "table operations of DDL handler %u: an entry without checkpoint or ops",
                           handler);
            break;
        }
        char *text = w2l__json_print(ops, 0);
        if (!text) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else rc = add_locked(o, (uint64_t)ck, handler, text, strlen(text), err);
        w2l__free(text);
    }
    mtx_unlock(&o->mtx);
    w2l__json_free(j);
    return rc;
}

typedef struct restore_ctx {
    w2l__owner *o;
    w2l_state *st;
    w2l_error *err;
    w2l_rc rc;
} restore_ctx;

static int restore_key(void *x, const char *key)
{
    restore_ctx *r = x;
    char *end;
    unsigned long h = strtoul(key + strlen(W2L_OPS_DDL_OPS_PREFIX), &end, 10);
    if (*end) return 0;
    w2l_buf b = {0};
    r->rc = w2l_state_get(r->st, r->o->restored, key, &b, r->err);
    if (r->rc == W2L_OK)
        r->rc = load_ops(r->o, (unsigned)h, b.data ? (const char *)b.data : "[]", b.len, r->err);
    w2l_buf_release(&b);
    if (r->rc != W2L_OK) w2l__error_prefix(r->err, "state key %s of checkpoint %llu: ", key,
                                            (unsigned long long)r->o->restored);
    return r->rc != W2L_OK;
}

/* Opens the file IO and catalog, and finds the record of the last operation applied. */
static w2l_rc open_lake(w2l__owner *o, w2l_error *err)
{
    if (o->cat) return W2L_OK;
    const char *wh = NULL;
    w2l_conf_get(o->conf, "warehouse", &wh, NULL);
    if (!wh || !*wh)
        return w2l__fail(err, W2L_CONFIG, "table operations need the lake: set warehouse");
    if (!o->job_id) W2L_TRY(w2l__ops_job_restored(o->conf, NULL, 0, &o->job_id, err));
    char name[64];
    snprintf(name, sizeof name, "_w2l/table-ops/%016llx",
             (unsigned long long)w2l__hash64(o->job_id, strlen(o->job_id), 0x6f7073));
    w2l__free(o->applied_path);
    o->applied_path = w2l__path_join(wh, name);
    W2L_NOMEM_IF(!o->applied_path, err);
    W2L_TRY(w2l__catalog_open_conf(o->conf, &o->io, &o->cat, err));
    void *data = NULL;
    size_t len = 0;
    w2l_rc rc = w2l_fileio_read_all(o->io, o->applied_path, &data, &len, err);
    if (rc == W2L_NOTFOUND) rc = W2L_OK;
    else if (rc == W2L_OK) {
        w2l__json *j = NULL;
        rc = w2l__json_parse(data, len, &j, err);
        int64_t ck, h, i;
        const char *job = w2l__json_str(w2l__json_get(j, "job-id"));
        if (rc == W2L_OK && job && !strcmp(job, o->job_id) &&
            !w2l__json_int64(w2l__json_get(j, "checkpoint"), &ck) &&
            !w2l__json_int64(w2l__json_get(j, "handler"), &h) &&
            !w2l__json_int64(w2l__json_get(j, "index"), &i)) {
            o->a_ckpt = (uint64_t)ck;
            o->a_handler = (unsigned)h;
            o->a_index = (unsigned)i;
            o->a_valid = 1;
        }
        w2l__json_free(j);
        if (rc != W2L_OK) w2l__error_prefix(err, "%s: ", o->applied_path);
    }
    w2l__free(data);
    if (rc != W2L_OK) { /* open again next time */
        w2l__catalog_close(o->cat);
        o->cat = NULL;
    }
    return rc;
}

w2l_rc w2l__owner_restore(w2l__owner *o, w2l_state *st, w2l_error *err)
{
    W2L_TRY(w2l__ops_job_restored(o->conf, st, o->restored, &o->job_id, err));
    w2l__claims_free(o->claims);
    o->claims = NULL;
    W2L_TRY(w2l__claims_new(o->conf, o->job_id, &o->claims, err));
    if (!o->restored) return W2L_OK;
    restore_ctx r = {o, st, err, W2L_OK};
    W2L_TRY(w2l_state_keys(st, o->restored, W2L_OPS_DDL_OPS_PREFIX, restore_key, &r, err));
    return r.rc;
}

static uint64_t min_done(const w2l__owner *o)
{
    uint64_t low = o->done[0];
    for (unsigned i = 1; i < o->ncommit; i++)
        if (o->done[i] < low) low = o->done[i];
    return low;
}

w2l_rc w2l__owner_wait_done(w2l__owner *o, uint64_t ckpt, w2l_error *err)
{
    if (ckpt < o->restored) ckpt = o->restored;
    mtx_lock(&o->mtx);
    while (!o->aborted && min_done(o) < ckpt) cnd_wait(&o->cv, &o->mtx);
    int ab = o->aborted;
    mtx_unlock(&o->mtx);
    return ab ? stopped(err) : W2L_OK;
}

w2l_rc w2l__owner_wait_restored(w2l__owner *o, w2l_error *err)
{
    return w2l__owner_wait_done(o, o->restored, err);
}

/* ------------------------------------------------------------- committer side ----- */

uint64_t w2l__owner_first_ops(w2l__owner *o)
{
    mtx_lock(&o->mtx);
    uint64_t k = o->sets ? o->sets->ckpt : 0;
    mtx_unlock(&o->mtx);
    return k;
}

void w2l__owner_data_done(w2l__owner *o, unsigned committer, uint64_t ckpt)
{
    if (committer >= o->ncommit) return;
    mtx_lock(&o->mtx);
    if (ckpt > o->done[committer]) {
        o->done[committer] = ckpt;
        cnd_broadcast(&o->cv);
    }
    mtx_unlock(&o->mtx);
}

/* 1 when (ck, h, i) was applied already, by the record. */
static int applied(const w2l__owner *o, uint64_t ck, unsigned h, unsigned i)
{
    if (!o->a_valid) return 0;
    if (ck != o->a_ckpt) return ck < o->a_ckpt;
    if (h != o->a_handler) return h < o->a_handler;
    return i <= o->a_index;
}

/* Appends "ns\0table\0" to *names (no lock needed: the caller's own buffer). */
static void note_table(w2l_buf *names, const char *ns, const char *table, int *oom)
{
    w2l_error e;
    if (!ns || !table || *oom) return;
    *oom = w2l_buf_append(names, ns, strlen(ns) + 1, &e) != W2L_OK ||
           w2l_buf_append(names, table, strlen(table) + 1, &e) != W2L_OK;
}

/* Applies one handler's operations of one checkpoint, in order, each recorded on disk once
 * applied (the lock is not held); the tables they touch appended to *names (*oom set when
 * that failed: every handle is then dropped). */
static w2l_rc apply_set(w2l__owner *o, const opset *s, w2l_buf *names, int *oom,
                        w2l_error *err)
{
    W2L_TRY(open_lake(o, err));
    int64_t retries = 0;
    W2L_TRY(w2l_conf_get_int(o->conf, "commit-retries", &retries, err));
    w2l__tops_ctx c = {o->cat, o->io, o->job_id, (int)retries, o->shared};
    w2l__json *j;
    W2L_TRY(w2l__json_parse(s->ops, s->len, &j, err));
    w2l_rc rc = W2L_OK;
    w2l_buf rec = {0};
    unsigned i = 0;
    for (const w2l__json *op = w2l__json_first(j); rc == W2L_OK && op;
         op = w2l__json_next(op), i++) {
        if (applied(o, s->ckpt, s->handler, i)) continue;
        note_table(names, w2l__json_str(w2l__json_get(op, "ns")),
                   w2l__json_str(w2l__json_get(op, "table")), oom);
        note_table(names, w2l__json_str(w2l__json_get(op, "to-ns")),
                   w2l__json_str(w2l__json_get(op, "to-table")), oom);
        rc = w2l__tops_apply(&c, s->ckpt, s->handler, i, op, err);
        if (rc != W2L_OK) break;
        w2l__json *q = w2l__json_new_string(o->job_id);
        char *jt = q ? w2l__json_print(q, 0) : NULL;
        w2l__json_free(q);
        rec.len = 0;
        rc =
            jt ? w2l__buf_printf(
                     &rec, err, "{\"job-id\":%s,\"checkpoint\":%llu,\"handler\":%u,\"index\":%u}\n",
                     jt, (unsigned long long)s->ckpt, s->handler, i)
               : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(jt);
        if (rc == W2L_OK)
            rc = w2l_fileio_write_all(o->io, o->applied_path, W2L_CREATE_REPLACE, rec.data, rec.len,
                                      err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "recording the table operation applied: ");
            break;
        }
        o->a_ckpt = s->ckpt;
        o->a_handler = s->handler;
        o->a_index = i;
        o->a_valid = 1;
    }
    w2l_buf_release(&rec);
    w2l__json_free(j);
    return rc;
}

/* Logs the tables generation o->generation touched (o->mtx held). The log keeps at most
 * TOUCHED_MAX bytes: beyond, it starts again above this generation. */
#define TOUCHED_MAX (1u << 20)
static void touched_add(w2l__owner *o, const w2l_buf *names, int oom)
{
    w2l_error e;
    if (!oom && o->ntgen == o->captgen) {
        size_t cap = o->captgen ? 2 * o->captgen : 16;
        struct tgen *t = w2l__realloc(o->tgen, cap * sizeof *t);
        if (t) {
            o->tgen = t;
            o->captgen = cap;
        } else {
            oom = 1;
        }
    }
    if (oom || o->touched.len + names->len > TOUCHED_MAX ||
        w2l_buf_append(&o->touched, names->data, names->len, &e) != W2L_OK) {
        o->touched.len = 0;
        o->ntgen = 0;
        o->touched_floor = o->generation;
        return;
    }
    o->tgen[o->ntgen++] = (struct tgen){ o->generation, o->touched.len - names->len };
}

w2l_rc w2l__owner_before_commit(w2l__owner *o, unsigned committer, uint64_t ckpt, w2l_error *err)
{
    w2l_rc rc = W2L_OK;
    mtx_lock(&o->mtx);
    if (committer != 0) {
        while (!o->aborted && o->sets && o->sets->ckpt <= ckpt) cnd_wait(&o->cv, &o->mtx);
        if (o->aborted) rc = stopped(err);
        mtx_unlock(&o->mtx);
        return rc;
    }
    if (!o->sets || o->sets->ckpt > ckpt) {
        mtx_unlock(&o->mtx);
        return W2L_OK;
    }
    while (!o->aborted && min_done(o) + 1 < ckpt) cnd_wait(&o->cv, &o->mtx);
    if (o->aborted) rc = stopped(err);
    w2l_buf names = {0};
    int oom = 0;
    while (rc == W2L_OK && o->sets && o->sets->ckpt <= ckpt) {
        opset *s = o->sets; /* only committer 0 removes sets, and new ones come after it */
        mtx_unlock(&o->mtx);
        rc = apply_set(o, s, &names, &oom, err);
        mtx_lock(&o->mtx);
        if (rc != W2L_OK) break;
        for (opset **pp = &o->sets; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        opset_free(s);
    }
    o->generation++;
    touched_add(o, &names, oom);
    w2l_buf_release(&names);
    if (rc != W2L_OK) o->aborted = 1; /* nobody commits past operations that failed */
    cnd_broadcast(&o->cv);
    mtx_unlock(&o->mtx);
    return rc;
}

int w2l__owner_touched_since(w2l__owner *o, uint64_t since,
                             void (*fn)(void *ctx, const char *ns, const char *table), void *ctx)
{
    mtx_lock(&o->mtx);
    int complete = since >= o->touched_floor;
    for (size_t i = 0; complete && i < o->ntgen; i++) {
        if (o->tgen[i].gen <= since) continue;
        const char *p = (const char *)o->touched.data + o->tgen[i].off;
        const char *end = (const char *)o->touched.data +
                          (i + 1 < o->ntgen ? o->tgen[i + 1].off : o->touched.len);
        while (p < end) {
            const char *ns = p, *table = p + strlen(p) + 1;
            p = table + strlen(table) + 1;
            fn(ctx, ns, table);
        }
    }
    mtx_unlock(&o->mtx);
    return complete;
}

w2l__claims *w2l__owner_claims(w2l__owner *o) { return o ? o->claims : NULL; }

uint64_t w2l__owner_generation(w2l__owner *o)
{
    mtx_lock(&o->mtx);
    uint64_t g = o->generation;
    mtx_unlock(&o->mtx);
    return g;
}
