/*
 * The "file" source plug-in (w2l-design(7) sections 2, 7 and 9): CDC JSON lines from a local
 * file, `file:PATH?format=canal-json|debezium-json|maxwell-json`, decoded by cdc_json.c.
 *
 * Reading. The file is read in large blocks into one buffer; a line is handed to the
 * decoder only once its newline is there, so a file that is still being written is
 * followed like `tail -f`: at its end next() polls for growth until its timeout, and
 * returns W2L_AGAIN. With `until-caught-up` the end of the file is the end of the stream
 * (a last line without a newline then counts as whole) and next() returns W2L_DONE.
 *
 * Transactions and positions. A transaction's events are decoded completely before the
 * first of them is emitted, then w2l_emit_commit() carries the position {"offset": N}: the
 * byte offset just after the transaction's last line. A restart from a position seeks
 * there, so no transaction is emitted twice or skipped. What makes a transaction:
 *   canal-json     each flat message is one transaction. Canal's messages carry no
 *                  transaction id (its `id` is a batch number, not a transaction), so
 *                  grouping them could only guess; one message = one binlog rows event of
 *                  one table, which never splits a row.
 *   debezium-json  consecutive messages with the same `transaction.id` (transaction
 *                  metadata), else the same `source.gtid`, else the same `source.txId`,
 *                  form one transaction; it ends at the END metadata record of that id or
 *                  when a message of another transaction (or a DDL) arrives; at the end of
 *                  a file read until-caught-up it is whole. Messages with none of these
 *                  (snapshot reads, connectors without GTIDs) are transactions of their own.
 *   maxwell-json   rows with the same `xid` up to the one with `commit: true`; a row of
 *                  another xid (or a DDL) also ends the open one. Rows without xid (bootstrap)
 *                  and DDL messages are transactions of their own. A transaction still open
 *                  at the end of a file read until-caught-up is not emitted (warning).
 * DDL and schema state. debezium and maxwell describe tables in earlier messages
 * (tableChanges, def), so a restart from a position first replays the lines before it
 * through the decoder without emitting anything; canal messages describe themselves.
 *
 * Errors. A bad line fails with W2L_SOURCE "file PATH: line L (byte offset O): what";
 * nothing of its transaction is emitted and the position stays at the last whole
 * transaction. Errors are sticky: the source must be closed and reopened.
 *
 * Quarantine. When the line fails for a table whose ddl.policy is quarantine
 * (table.<db>.<table>.ddl.policy), or the pipeline refuses one of its rows (W2L_SCHEMA from
 * w2l_emit_change(), a NULL key say), the table is set aside instead: the decoder drops its
 * rows from then on without converting them (and still follows its schema), the line is
 * decoded again without it, so the other tables of the message and of its transaction go
 * through, and the pipeline is told with w2l_emit_quarantine() — before the transaction's
 * events, so nothing of the table from that transaction on reaches the lake — along with
 * how many rows of it were dropped since. The DDL handler keeps the quarantine in its
 * state; after a restart the first failing row of the table sets it aside here again (and
 * the lines replayed to rebuild the schemas tolerate the same failures).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cdc_json.h"
#include "source_int.h"
#include "../json/json.h"

#define READ_BLOCK (1u << 20)      /* bytes per read() */
#define EVENTS_PER_CALL 65536      /* next() returns after about this many events */

typedef struct file_source {
    w2l_source base;
    char *path;
    int fd;
    w2l__cdc_format fmt;
    w2l__cdc *dec;
    int until_caught_up;
    char *buf;
    size_t cap, pos, len;   /* unconsumed bytes are buf[pos, len) */
    uint64_t buf_off;       /* file offset of buf[0] */
    int eof;                /* the last read() returned 0 */
    uint64_t line;          /* 1-based number of the line at buf[pos] */
    uint64_t txn_off;       /* file offset where the pending transaction's lines begin */
    uint64_t commit_off;    /* the position: after the last whole transaction emitted */
    int failed;
    w2l_error ferr;
    int done;
    int64_t last_ts_ms;     /* commit time of the last transaction emitted */
    int restored;           /* opened at a restored position not yet announced */
    int at_end;             /* nothing left to read at the last look */
    w2l_conf *conf;         /* a copy: per-table ddl.policy */
    struct qtable {         /* tables set aside (quarantine), in order */
        char *db, *table, *reason;
        int reported;       /* the pipeline knows */
        uint64_t dropped;   /* its events this source dropped, not yet told */
    } *q;
    size_t nq;
} file_source;

/* ---- URI and configuration ---- */

static w2l_rc parse_uri(file_source *fs, const char *uri, w2l_error *err)
{
    if (!uri || strncmp(uri, "file:", 5) != 0)
        return w2l__fail(err, W2L_CONFIG, "source URI '%s': expected file:PATH?format=%s",
                         uri ? uri : "(null)", W2L__CDC_FORMATS);
    const char *p = uri + 5;
    if (p[0] == '/' && p[1] == '/') {
        p += 2; /* file://PATH or file://localhost/PATH */
        if (strncmp(p, "localhost/", 10) == 0) p += 9;
    }
    const char *q = strchr(p, '?');
    size_t plen = q ? (size_t)(q - p) : strlen(p);
    if (plen == 0) return w2l__fail(err, W2L_CONFIG, "source URI '%s': no file path", uri);
    fs->path = w2l__strndup(p, plen);
    W2L_NOMEM_IF(!fs->path, err);
    int have_fmt = 0;
    while (q && *q) {
        const char *k = q + 1, *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
        const char *eq = memchr(k, '=', (size_t)(end - k));
        if (eq && (size_t)(eq - k) == 6 && memcmp(k, "format", 6) == 0) {
            if (w2l__cdc_format_parse(eq + 1, (size_t)(end - eq - 1), &fs->fmt))
                return w2l__fail(err, W2L_CONFIG,
                                 "source URI '%s': unknown format '%.*s' (allowed: %s)", uri,
                                 (int)(end - eq - 1), eq + 1, W2L__CDC_FORMATS);
            have_fmt = 1;
        } else if (end > k) {
            return w2l__fail(err, W2L_CONFIG,
                             "source URI '%s': unknown parameter '%.*s' (allowed: format)", uri,
                             (int)(end - k), k);
        }
        q = amp;
    }
    if (!have_fmt)
        return w2l__fail(err, W2L_CONFIG, "source URI '%s': format required (allowed: %s)", uri,
                         W2L__CDC_FORMATS);
    return W2L_OK;
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

/* ---- reading lines ---- */

/* Reads more of the file into the buffer: 1 when bytes came, 0 at the end, or an error. */
static w2l_rc fill(file_source *fs, int *got, w2l_error *err)
{
    *got = 0;
    if (fs->pos > 0 && (fs->pos == fs->len || fs->cap - fs->len < READ_BLOCK / 2)) {
        memmove(fs->buf, fs->buf + fs->pos, fs->len - fs->pos);
        fs->buf_off += fs->pos;
        fs->len -= fs->pos;
        fs->pos = 0;
    }
    if (fs->cap - fs->len < READ_BLOCK / 2) { /* a line longer than the buffer */
        size_t cap = fs->cap ? fs->cap * 2 : READ_BLOCK + READ_BLOCK / 2;
        char *nb = w2l__realloc(fs->buf, cap);
        W2L_NOMEM_IF(!nb, err);
        fs->buf = nb;
        fs->cap = cap;
    }
    ssize_t n;
    do n = read(fs->fd, fs->buf + fs->len, fs->cap - fs->len);
    while (n < 0 && errno == EINTR);
    if (n < 0) return w2l__fail_errno(err, W2L_IO, errno, "file %s: read", fs->path);
    fs->len += (size_t)n;
    fs->eof = n == 0;
    *got = n > 0;
    return W2L_OK;
}

/* The next whole line (without its newline), or *n_out = SIZE_MAX when none is there yet.
 * At the end of a finished file (final = 1) a last line without newline counts. */
static w2l_rc next_line(file_source *fs, int final, const char **line, size_t *n_out, size_t *adv,
                        w2l_error *err)
{
    for (;;) {
        const char *s = fs->buf + fs->pos;
        const char *nl = fs->len > fs->pos ? memchr(s, '\n', fs->len - fs->pos) : NULL;
        if (nl) {
            *line = s;
            *n_out = (size_t)(nl - s);
            *adv = *n_out + 1;
            return W2L_OK;
        }
        int got;
        W2L_TRY(fill(fs, &got, err));
        if (!got) {
            if (final && fs->len > fs->pos) {
                *line = fs->buf + fs->pos;
                *n_out = *adv = fs->len - fs->pos;
                return W2L_OK;
            }
            *n_out = SIZE_MAX;
            return W2L_OK;
        }
    }
}

static w2l_rc line_fail(file_source *fs, uint64_t off, w2l_error *err)
{
    if (err->code == W2L_NOMEM) return W2L_NOMEM;
    w2l__error_prefix(err, "file %s: line %llu (byte offset %llu): ", fs->path,
                      (unsigned long long)fs->line, (unsigned long long)off);
    err->code = W2L_SOURCE;
    return W2L_SOURCE;
}

/* ---- quarantine ---- */

static int policy_quarantine(const file_source *fs, const char *db, const char *table)
{
    char fq[512];
    const char *v = NULL;
    snprintf(fq, sizeof fq, "%s.%s", db, table);
    w2l_conf_get_for_table(fs->conf, fq, "ddl.policy", &v, NULL);
    return v && !strcmp(v, "quarantine");
}

static struct qtable *find_quarantine(file_source *fs, const char *db, const char *table)
{
    for (size_t i = 0; i < fs->nq; i++)
        if (!strcmp(fs->q[i].db, db) && !strcmp(fs->q[i].table, table)) return &fs->q[i];
    return NULL;
}

/* Sets db.table aside for why ("line L: what"): the decoder drops its rows from now on. */
static w2l_rc add_quarantine(file_source *fs, const char *db, const char *table, const char *why,
                             int reported, w2l_error *err)
{
    struct qtable *nq = w2l__realloc(fs->q, (fs->nq + 1) * sizeof *nq);
    W2L_NOMEM_IF(!nq, err);
    fs->q = nq;
    struct qtable *q = &fs->q[fs->nq];
    memset(q, 0, sizeof *q);
    q->db = w2l__strdup(db);
    q->table = w2l__strdup(table);
    q->reason = w2l__asprintf("file %s: %s", fs->path, why);
    q->reported = reported;
    if (!q->db || !q->table || !q->reason) {
        w2l__free(q->db), w2l__free(q->table), w2l__free(q->reason);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    fs->nq++;
    if (!reported)
        w2l__log(W2L_LOG_ERROR,
                 "%s; table %s.%s QUARANTINED (ddl.policy=quarantine): its rows are dropped from "
                 "here on, the other tables go on",
                 q->reason, q->db, q->table);
    return w2l__cdc_skip_table(fs->dec, q->db, q->table, err);
}

/* The decode of a line (replay: while rebuilding schemas) failed with err. When the table
 * it names has ddl.policy quarantine, sets the table aside and decodes the line again:
 * W2L_OK with *step. Otherwise the failure, unchanged. */
static w2l_rc quarantine_line(file_source *fs, const char *line, size_t n, int replay,
                              w2l__cdc_step *step, w2l_error *err)
{
    for (;;) {
        const char *db, *table;
        if (err->code == W2L_NOMEM || !w2l__cdc_failed_table(fs->dec, &db, &table) ||
            !policy_quarantine(fs, db, table))
            return err->code;
        if (w2l__cdc_table_skipped(fs->dec, db, table)) {
            /* set aside, and the message still fails: it is of that table alone (its
             * description, not a row); nothing of it can be used */
            w2l__log(W2L_LOG_DEBUG, "file %s: line %llu: %s (table %s.%s is quarantined): dropped",
                     fs->path, (unsigned long long)fs->line, err->msg, db, table);
            w2l_error_clear(err);
            *step = W2L__CDC_MORE;
            return W2L_OK;
        }
        char why[sizeof err->msg + 96];
        snprintf(why, sizeof why, "line %llu: %s", (unsigned long long)fs->line, err->msg);
        /* a line before the restored position: the restored state has the quarantine */
        W2L_TRY(add_quarantine(fs, db, table, why, replay, err));
        w2l_rc rc = w2l__cdc_decode(fs->dec, line, n, replay, step, err);
        if (rc == W2L_OK) return W2L_OK;
    }
}

/* Tells the pipeline of new quarantines and of the rows dropped since (before the
 * transaction's events: the table's part of it is dropped too). *any: something told. */
static w2l_rc report_quarantines(file_source *fs, w2l_emitter *em, int *any, w2l_error *err)
{
    *any = 0;
    for (size_t i = 0; i < fs->nq; i++) {
        struct qtable *q = &fs->q[i];
        uint64_t rows = w2l__cdc_take_skipped(fs->dec, q->db, q->table) + q->dropped;
        q->dropped = 0;
        if (q->reported && !rows) continue;
        w2l_rc rc =
            w2l_emit_quarantine(em, q->db, q->table, q->reported ? NULL : q->reason, rows, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "file %s: quarantining table %s.%s: ", fs->path, q->db,
                              q->table);
            return rc;
        }
        q->reported = 1;
        *any = 1;
    }
    return W2L_OK;
}

/* ---- emitting ---- */

static w2l_rc emit_pending(file_source *fs, w2l_emitter *em, uint64_t end_off, size_t *count,
                           w2l_error *err)
{
    size_t n;
    const w2l__cdc_event *ev = w2l__cdc_events(fs->dec, &n);
    int told = 0;
    if (fs->nq) {
        w2l_rc rc = report_quarantines(fs, em, &told, err);
        if (rc != W2L_OK) {
            w2l__cdc_clear(fs->dec);
            return rc;
        }
    }
    if (n == 0 && !told) { /* nothing of a transaction: no commit needed, the position may lag */
        w2l__cdc_clear(fs->dec);
        fs->txn_off = end_off;
        return W2L_OK;
    }
    int64_t ts = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_change *c = &ev[i].change;
        struct qtable *q = ev[i].is_ddl ? NULL : find_quarantine(fs, c->db, c->table);
        if (q) { /* its rows decoded before it was set aside */
            q->dropped++;
            continue;
        }
        w2l_rc rc = ev[i].is_ddl ? w2l_emit_ddl(em, &ev[i].ddl, err) : w2l_emit_change(em, c, err);
        if (rc == W2L_SCHEMA && !ev[i].is_ddl && policy_quarantine(fs, c->db, c->table)) {
            /* a row the pipeline cannot take (a NULL key, say): the table is set aside from
             * this row on; what it had before in this transaction went already */
            char why[sizeof err->msg + 96];
            snprintf(why, sizeof why, "the transaction ending at byte offset %llu: %s",
                     (unsigned long long)end_off, err->msg);
            rc = add_quarantine(fs, c->db, c->table, why, 0, err);
            if (rc == W2L_OK) {
                fs->q[fs->nq - 1].dropped++;
                rc = report_quarantines(fs, em, &told, err);
            }
        }
        if (rc != W2L_OK) {
            w2l__cdc_clear(fs->dec);
            return rc;
        }
        int64_t t = ev[i].is_ddl ? ev[i].ddl.ts_ms : ev[i].change.ts_ms;
        if (t > ts) ts = t;
    }
    w2l__cdc_clear(fs->dec);
    if (fs->nq) W2L_TRY(report_quarantines(fs, em, &told, err)); /* the rows dropped above */
    char pos[48];
    int pl = snprintf(pos, sizeof pos, "{\"offset\":%llu}", (unsigned long long)end_off);
    W2L_TRY(w2l_emit_commit(em, pos, (size_t)pl, err));
    fs->commit_off = fs->txn_off = end_off;
    if (ts) fs->last_ts_ms = ts;
    *count += n ? n : 1;
    return W2L_OK;
}

/* Decodes one line at file offset off (adv bytes with its newline); emits what it
 * completes. */
static w2l_rc process_line(file_source *fs, w2l_emitter *em, const char *line, size_t n,
                           uint64_t off, size_t adv, size_t *count, w2l_error *err)
{
    w2l__cdc_step step;
    w2l_rc rc = w2l__cdc_decode(fs->dec, line, n, 0, &step, err);
    if (rc == W2L_OK && step == W2L__CDC_BEFORE) {
        W2L_TRY(emit_pending(fs, em, off, count, err));
        rc = w2l__cdc_decode(fs->dec, line, n, 0, &step, err);
    }
    if (rc != W2L_OK) rc = quarantine_line(fs, line, n, 0, &step, err);
    if (rc != W2L_OK) {
        w2l__cdc_clear(fs->dec);
        return line_fail(fs, off, err);
    }
    if (step == W2L__CDC_END) W2L_TRY(emit_pending(fs, em, off + adv, count, err));
    return W2L_OK;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static w2l_rc fs_next(w2l_source *self, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    file_source *fs = (file_source *)self;
    if (fs->failed) {
        if (err) *err = fs->ferr;
        return fs->ferr.code;
    }
    if (fs->done) return W2L_DONE;
    if (fs->restored) {
        /* a restart: the restored position is this run's position until a transaction
         * follows, so a checkpoint taken before one still records where to resume (without
         * it, a run that finds nothing new would seal a checkpoint without a position and
         * the next run would read the file again from its start) */
        char pos[48];
        int pl = snprintf(pos, sizeof pos, "{\"offset\":%llu}", (unsigned long long)fs->commit_off);
        w2l_rc rc = w2l_emit_commit(em, pos, (size_t)pl, err);
        if (rc != W2L_OK) return rc;
        fs->restored = 0;
    }
    int64_t deadline = w2l__mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
    size_t count = 0;
    w2l_error local;
    if (!err) err = &local;
    w2l_rc rc = W2L_OK;
    for (;;) {
        const char *line;
        size_t n, adv;
        rc = next_line(fs, fs->until_caught_up, &line, &n, &adv, err);
        if (rc != W2L_OK) break;
        if (n != SIZE_MAX) {
            fs->at_end = 0;
            uint64_t off = fs->buf_off + fs->pos;
            rc = process_line(fs, em, line, n, off, adv, &count, err);
            if (rc != W2L_OK) break;
            fs->pos += adv;
            fs->line++;
            /* hand control back after a block's worth, at a transaction end */
            if (count >= EVENTS_PER_CALL || (count && fs->pos == fs->len)) return W2L_OK;
            continue;
        }
        fs->at_end = 1;
        if (count) return W2L_OK;
        if (fs->until_caught_up) {
            size_t np;
            w2l__cdc_events(fs->dec, &np);
            if (np && w2l__cdc_pending_complete(fs->dec)) {
                rc = emit_pending(fs, em, fs->buf_off + fs->pos, &count, err);
                if (rc != W2L_OK) break;
                return W2L_OK;
            }
            if (np)
                w2l__log(W2L_LOG_WARN,
                         "file %s: %zu events of an unfinished transaction at the end (byte offset "
                         "%llu) not emitted",
                         fs->path, np, (unsigned long long)fs->txn_off);
            fs->done = 1;
            return W2L_DONE;
        }
        int64_t left = deadline - w2l__mono_ns() / 1000000;
        if (left <= 0) return W2L_AGAIN;
        sleep_ms(left < 20 ? (int)left : 20); /* tail -f: poll for growth */
    }
    fs->failed = 1;
    fs->ferr = *err;
    return rc;
}

/* ---- open / close ---- */

static w2l_rc parse_position(file_source *fs, const char *restored, uint64_t *off, w2l_error *err)
{
    w2l__json *j = NULL;
    w2l_rc rc = w2l__json_parse(restored, strlen(restored), &j, err);
    if (rc == W2L_NOMEM) return rc;
    int64_t v = -1;
    if (rc != W2L_OK || w2l__json_int64(w2l__json_get(j, "offset"), &v) || v < 0) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_CORRUPT,
                         "file %s: restored position '%.100s' is not {\"offset\": N}", fs->path,
                         restored);
    }
    w2l__json_free(j);
    *off = (uint64_t)v;
    return W2L_OK;
}

/* Moves the reader to offset off: replaying the lines before it through the decoder
 * (formats whose schemas come from earlier messages), or counting them. */
static w2l_rc seek_to(file_source *fs, uint64_t off, w2l_error *err)
{
    struct stat st;
    if (fstat(fs->fd, &st) != 0)
        return w2l__fail_errno(err, W2L_IO, errno, "file %s: stat", fs->path);
    if ((uint64_t)st.st_size < off)
        return w2l__fail(err, W2L_SOURCE,
                         "file %s: restored offset %llu is beyond the end of the file (%lld "
                         "bytes): truncated or replaced?",
                         fs->path, (unsigned long long)off, (long long)st.st_size);
    int replay = fs->fmt != W2L__CDC_CANAL;
    while (fs->buf_off + fs->pos < off) {
        const char *line;
        size_t n, adv;
        W2L_TRY(next_line(fs, 1, &line, &n, &adv, err));
        if (n == SIZE_MAX || fs->buf_off + fs->pos + adv > off)
            return w2l__fail(err, W2L_SOURCE,
                             "file %s: restored offset %llu is not at the end of a line", fs->path,
                             (unsigned long long)off);
        if (replay) {
            w2l__cdc_step step;
            w2l_rc rc = w2l__cdc_decode(fs->dec, line, n, 1, &step, err);
            if (rc != W2L_OK) rc = quarantine_line(fs, line, n, 1, &step, err);
            if (rc != W2L_OK) return line_fail(fs, fs->buf_off + fs->pos, err);
        }
        fs->pos += adv;
        fs->line++;
    }
    fs->commit_off = fs->txn_off = off;
    return W2L_OK;
}

static void fs_close(w2l_source *self)
{
    file_source *fs = (file_source *)self;
    if (fs->fd >= 0) close(fs->fd);
    fs->fd = -1;
    w2l__cdc_free(fs->dec);
    fs->dec = NULL;
    w2l__free(fs->buf);
    fs->buf = NULL;
    w2l__free(fs->path);
    fs->path = NULL;
    for (size_t i = 0; i < fs->nq; i++) {
        w2l__free(fs->q[i].db);
        w2l__free(fs->q[i].table);
        w2l__free(fs->q[i].reason);
    }
    w2l__free(fs->q);
    fs->q = NULL;
    fs->nq = 0;
    w2l_conf_free(fs->conf);
    fs->conf = NULL;
}

static w2l_rc fs_open(const w2l_source_methods *m, const w2l_conf *conf, const char *uri,
                      const char *restored, w2l_source *self, w2l_error *err)
{
    file_source *fs = (file_source *)self;
    fs->fd = -1;
    fs->line = 1;
    w2l__cdc_opts o;
    w2l_rc rc = parse_uri(fs, uri, err);
    if (rc == W2L_OK) rc = read_opts(conf, &o, &fs->until_caught_up, err);
    if (rc == W2L_OK) {
        fs->conf = conf ? w2l_conf_dup(conf) : w2l_conf_new();
        if (!fs->conf)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory opening source file %s", fs->path);
    }
    if (rc == W2L_OK) {
        do fs->fd = open(fs->path, O_RDONLY | O_CLOEXEC);
        while (fs->fd < 0 && errno == EINTR);
        if (fs->fd < 0)
            rc = w2l__fail_errno(err, errno == ENOENT || errno == EACCES ? W2L_CONFIG : W2L_IO,
                                 errno, "source file %s: open", fs->path);
    }
    if (rc == W2L_OK) {
        struct stat st;
        if (fstat(fs->fd, &st) != 0)
            rc = w2l__fail_errno(err, W2L_IO, errno, "source file %s: stat", fs->path);
        else if (S_ISDIR(st.st_mode))
            rc = w2l__fail(err, W2L_CONFIG, "source file %s: is a directory", fs->path);
    }
    if (rc == W2L_OK) {
        fs->dec = w2l__cdc_new(fs->fmt, &o);
        if (!fs->dec)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory opening source file %s", fs->path);
    }
    if (rc == W2L_OK && restored) {
        uint64_t off = 0;
        rc = parse_position(fs, restored, &off, err);
        if (rc == W2L_OK) rc = seek_to(fs, off, err);
        fs->restored = rc == W2L_OK;
    }
    if (rc != W2L_OK) fs_close(self);
    return rc;
}

/* Nothing to release upstream: the file belongs to whoever wrote it, and a restart reads it
 * again from the position of the checkpoint it restores, so the source never trims it. */
static w2l_rc fs_checkpoint_complete(w2l_source *self, uint64_t ckpt, w2l_error *err)
{
    (void)self, (void)ckpt, (void)err;
    return W2L_OK;
}

static int64_t fs_lag_ms(w2l_source *self)
{
    file_source *fs = (file_source *)self;
    if (fs->at_end || !fs->last_ts_ms) return 0;
    int64_t lag = w2l__now_ms() - fs->last_ts_ms;
    return lag > 0 ? lag : 0;
}

const w2l_source_methods w2l__source_file = {
    .version = W2L_SOURCE_METHODS_V1,
    .name = "file",
    .size = sizeof(file_source),
    .open = fs_open,
    .next = fs_next,
    .checkpoint_complete = fs_checkpoint_complete,
    .lag_ms = fs_lag_ms,
    .close = fs_close,
};
