/*
 * CDC JSON messages into the pipeline, the part the file and Kafka sources share: options,
 * decoding with quarantine, emitting a finished transaction. See cdc_stream.h.
 */
#include <stdio.h>

#include "cdc_stream.h"
#include "../ddl/ddl.h"

void w2l__cdc_where_text(const w2l__cdc_where *w, char *buf, size_t size)
{
    if (w->topic)
        snprintf(buf, size, "topic %s partition %d offset %llu", w->topic, (int)w->partition,
                 (unsigned long long)w->n);
    else
        snprintf(buf, size, "%s %llu", w->is_offset ? "byte offset" : "line",
                 (unsigned long long)w->n);
}

static w2l_rc read_opts(const w2l_conf *conf, w2l__cdc_opts *o, int *until, w2l_error *err)
{
    int64_t v;
    memset(o, 0, sizeof *o);
    o->tinyint1_as_boolean = 0; /* the conf default: TINYINT(1) holds 5 too */
    strcpy(o->maxwell_database, "maxwell");
    *until = 0;
    if (!conf) return W2L_OK;
    const char *mdb = NULL;
    if (w2l_conf_get(conf, "source.maxwell-database", &mdb, NULL) == W2L_OK && mdb) {
        if (strlen(mdb) >= sizeof o->maxwell_database)
            return w2l__fail(err, W2L_CONFIG,
                             "source.maxwell-database '%.80s': longer than a MySQL database "
                             "name (64 characters)",
                             mdb);
        strcpy(o->maxwell_database, mdb);
    }
    if (w2l_conf_get_int(conf, "until-caught-up", &v, NULL) == W2L_OK) *until = v != 0;
    if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK)
        o->tinyint1_as_boolean = v != 0;
    if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK)
        o->time_as_string = v != 0;
    const char *tz = NULL;
    if (w2l_conf_get(conf, "source.timezone", &tz, NULL) != W2L_OK) tz = NULL;
    return w2l__cdc_tz_parse(tz, &o->tz_offset_s, err);
}

w2l_rc w2l__cdc_stream_init(w2l__cdc_stream *st, w2l__cdc_format fmt, const w2l_conf *conf,
                            const char *origin, w2l_error *err)
{
    memset(st, 0, sizeof *st);
    st->fmt = fmt;
    w2l__cdc_opts o;
    W2L_TRY(read_opts(conf, &o, &st->until_caught_up, err));
    W2L_TRY(w2l__tfilter_init(&st->filter, conf, err));
    if (st->filter.has_include || st->filter.has_exclude) o.filter = &st->filter;
    st->conf = conf ? w2l_conf_dup(conf) : w2l_conf_new();
    st->origin = w2l__strdup(origin);
    st->dec = w2l__cdc_new(fmt, &o);
    if (!st->conf || !st->origin || !st->dec) {
        w2l__cdc_stream_free(st);
        return w2l__fail(err, W2L_NOMEM, "out of memory opening source %s", origin);
    }
    return W2L_OK;
}

void w2l__cdc_stream_free(w2l__cdc_stream *st)
{
    w2l__cdc_free(st->dec);
    w2l__tfilter_free(&st->filter);
    for (size_t i = 0; i < st->nq; i++) {
        w2l__free(st->q[i].db);
        w2l__free(st->q[i].table);
        w2l__free(st->q[i].reason);
    }
    w2l__free(st->q);
    w2l_conf_free(st->conf);
    w2l__free(st->origin);
    memset(st, 0, sizeof *st);
}

/* ---- quarantine ---- */

static int policy_quarantine(const w2l__cdc_stream *st, const char *db, const char *table)
{
    char fq[512];
    const char *v = NULL;
    snprintf(fq, sizeof fq, "%s.%s", db, table);
    w2l_conf_get_for_table(st->conf, fq, "ddl.policy", &v, NULL);
    return v && !strcmp(v, "quarantine");
}

static struct w2l__cdc_qtable *find_quarantine(w2l__cdc_stream *st, const char *db,
                                               const char *table)
{
    for (size_t i = 0; i < st->nq; i++)
        if (!strcmp(st->q[i].db, db) && !strcmp(st->q[i].table, table)) return &st->q[i];
    return NULL;
}

/* A DDL event that drops or replaces a table set aside here ends its quarantine (the
 * pipeline's DDL handler does the same on its side): the new table's rows are decoded. */
static void release_quarantines(w2l__cdc_stream *st, const w2l_ddl *d)
{
    w2l__ddl_list *l = NULL;
    w2l_error scratch;
    if (!d->sql || w2l__ddl_parse(d->sql, d->sql_len, d->db, &l, &scratch) != W2L_OK) return;
    for (size_t k = 0; k < l->n; k++)
        for (size_t i = st->nq; i-- > 0;) {
            struct w2l__cdc_qtable *q = &st->q[i];
            if (!w2l__ddl_ends_table(&l->stmts[k], q->db, q->table)) continue;
            w2l__cdc_unskip_table(st->dec, q->db, q->table);
            w2l__free(q->db), w2l__free(q->table), w2l__free(q->reason);
            memmove(q, q + 1, (st->nq - i - 1) * sizeof *q);
            st->nq--;
        }
    w2l__ddl_list_free(l);
}

/* Sets db.table aside for why: the decoder drops its rows from now on. */
static w2l_rc add_quarantine(w2l__cdc_stream *st, const char *db, const char *table,
                             const char *why, int reported, w2l_error *err)
{
    struct w2l__cdc_qtable *nq = w2l__realloc(st->q, (st->nq + 1) * sizeof *nq);
    W2L_NOMEM_IF(!nq, err);
    st->q = nq;
    struct w2l__cdc_qtable *q = &st->q[st->nq];
    memset(q, 0, sizeof *q);
    q->db = w2l__strdup(db);
    q->table = w2l__strdup(table);
    q->reason = w2l__asprintf("%s: %s", st->origin, why);
    q->reported = reported;
    if (!q->db || !q->table || !q->reason) {
        w2l__free(q->db), w2l__free(q->table), w2l__free(q->reason);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    st->nq++;
    if (!reported)
        w2l__log(W2L_LOG_ERROR,
                 "%s; table %s.%s QUARANTINED (ddl.policy=quarantine): its rows are dropped from "
                 "here on, the other tables go on",
                 q->reason, q->db, q->table);
    return w2l__cdc_skip_table(st->dec, q->db, q->table, err);
}

/* The decode of a message failed with err. When the table it names has ddl.policy
 * quarantine, sets the table aside and decodes the message again: W2L_OK with *step.
 * Otherwise the failure, unchanged. */
static w2l_rc quarantine_message(w2l__cdc_stream *st, const char *text, size_t n, int replay,
                                 const w2l__cdc_where *w, w2l__cdc_step *step,
                                 w2l_error *err)
{
    char where[320];
    w2l__cdc_where_text(w, where, sizeof where);
    for (;;) {
        const char *db, *table;
        if (err->code == W2L_NOMEM || !w2l__cdc_failed_table(st->dec, &db, &table) ||
            !policy_quarantine(st, db, table))
            return err->code;
        if (w2l__cdc_table_skipped(st->dec, db, table)) {
            /* set aside, and the message still fails: it is of that table alone (its
             * description, not a row); nothing of it can be used */
            w2l__log(W2L_LOG_DEBUG, "%s: %s: %s (table %s.%s is quarantined): dropped",
                     st->origin, where, err->msg, db, table);
            w2l_error_clear(err);
            *step = W2L__CDC_MORE;
            return W2L_OK;
        }
        char why[sizeof err->msg + 330];
        snprintf(why, sizeof why, "%s: %s", where, err->msg);
        /* a message before the restored position: the restored state has the quarantine */
        W2L_TRY(add_quarantine(st, db, table, why, replay, err));
        w2l_rc rc = w2l__cdc_decode(st->dec, text, n, replay, step, err);
        if (rc == W2L_OK) return W2L_OK;
    }
}

w2l_rc w2l__cdc_stream_decode(w2l__cdc_stream *st, const char *text, size_t len, int replay,
                              const w2l__cdc_where *where, w2l__cdc_step *step,
                              w2l_error *err)
{
    w2l_rc rc = w2l__cdc_decode(st->dec, text, len, replay, step, err);
    if (rc != W2L_OK) rc = quarantine_message(st, text, len, replay, where, step, err);
    return rc;
}

/* Tells the pipeline of new quarantines and of the rows dropped since (before the
 * transaction's events: the table's part of it is dropped too). *any: something told. */
static w2l_rc report_quarantines(w2l__cdc_stream *st, w2l_emitter *em, int *any,
                                 w2l_error *err)
{
    *any = 0;
    for (size_t i = 0; i < st->nq; i++) {
        struct w2l__cdc_qtable *q = &st->q[i];
        uint64_t rows = w2l__cdc_take_skipped(st->dec, q->db, q->table) + q->dropped;
        q->dropped = 0;
        if (q->reported && !rows) continue;
        w2l_rc rc =
            w2l_emit_quarantine(em, q->db, q->table, q->reported ? NULL : q->reason, rows, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s: quarantining table %s.%s: ", st->origin, q->db,
                              q->table);
            return rc;
        }
        q->reported = 1;
        *any = 1;
    }
    return W2L_OK;
}

w2l_rc w2l__cdc_stream_emit(w2l__cdc_stream *st, w2l_emitter *em, const char *pos, size_t pl,
                            const w2l__cdc_where *w, size_t *emitted, w2l_error *err)
{
    *emitted = 0;
    size_t n;
    const w2l__cdc_event *ev = w2l__cdc_events(st->dec, &n);
    int told = 0;
    if (st->nq) {
        w2l_rc rc = report_quarantines(st, em, &told, err);
        if (rc != W2L_OK) {
            w2l__cdc_clear(st->dec);
            return rc;
        }
    }
    if (n == 0 && !told) { /* nothing of a transaction: no commit needed */
        w2l__cdc_clear(st->dec);
        return W2L_OK;
    }
    int64_t ts = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_change *c = &ev[i].change;
        struct w2l__cdc_qtable *q = ev[i].is_ddl ? NULL : find_quarantine(st, c->db, c->table);
        if (q) { /* its rows decoded before it was set aside */
            q->dropped++;
            continue;
        }
        if (ev[i].is_ddl && st->nq) release_quarantines(st, &ev[i].ddl);
        w2l_rc rc = ev[i].is_ddl ? w2l_emit_ddl(em, &ev[i].ddl, err) : w2l_emit_change(em, c, err);
        if (rc == W2L_SCHEMA && !ev[i].is_ddl && policy_quarantine(st, c->db, c->table)) {
            /* a row the pipeline cannot take (a NULL key, say): the table is set aside from
             * this row on; what it had before in this transaction went already */
            char why[sizeof err->msg + 400], where[320];
            w2l__cdc_where_text(w, where, sizeof where);
            snprintf(why, sizeof why, "the transaction ending at %s: %s", where, err->msg);
            rc = add_quarantine(st, c->db, c->table, why, 0, err);
            if (rc == W2L_OK) {
                st->q[st->nq - 1].dropped++;
                rc = report_quarantines(st, em, &told, err);
            }
        }
        if (rc != W2L_OK) {
            w2l__cdc_clear(st->dec);
            return rc;
        }
        int64_t t = ev[i].is_ddl ? ev[i].ddl.ts_ms : ev[i].change.ts_ms;
        if (t > ts) ts = t;
    }
    w2l__cdc_clear(st->dec);
    if (st->nq) W2L_TRY(report_quarantines(st, em, &told, err)); /* the rows dropped above */
    W2L_TRY(w2l_emit_commit(em, pos, pl, err));
    /* completeness: the producer's time of the transaction (canal es, debezium
     * source.ts_ms, maxwell ts in seconds, all in ms here) is at or before its commit, and
     * messages come in commit order, so everything committed before it is in */
    if (ts > 0) W2L_TRY(w2l_emit_progress(em, ts - 1, err));
    if (ts) st->last_ts_ms = ts;
    *emitted = n ? n : 1;
    return W2L_OK;
}
