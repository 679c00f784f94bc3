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
 * Quarantine: cdc_stream.c (ddl.policy=quarantine sets a failing table aside, the other
 * tables of the line go on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cdc_stream.h"
#include "source_int.h"
#include "../json/json.h"

#define READ_BLOCK (1u << 20)      /* bytes per read() */
#define EVENTS_PER_CALL 65536      /* next() returns after about this many events */

typedef struct file_source {
    w2l_source base;
    char *path;
    int fd;
    w2l__cdc_format fmt;
    w2l__cdc_stream st; /* the decoder, options and quarantines */
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
    int restored;           /* opened at a restored position not yet announced */
    int at_end;             /* nothing left to read at the last look */
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

/* ---- emitting ---- */

/* The position {"offset":N} into pos (room for 48 bytes): its length. Written by hand, as
 * it is formatted once per transaction (snprintf was a third of a canal row's emit). */
static int offset_pos(char pos[48], uint64_t off)
{
    memcpy(pos, "{\"offset\":", 10);
    size_t n = 10 + w2l__fmt_int64(pos + 10, (int64_t)off); /* offsets are below 2^63 */
    pos[n++] = '}';
    pos[n] = '\0';
    return (int)n;
}

static w2l_rc emit_pending(file_source *fs, w2l_emitter *em, uint64_t end_off, size_t *count,
                           w2l_error *err)
{
    char pos[48];
    int pl = offset_pos(pos, end_off);
    w2l__cdc_where where = { .n = end_off, .is_offset = 1 };
    size_t n;
    W2L_TRY(w2l__cdc_stream_emit(&fs->st, em, pos, (size_t)pl, &where, &n, err));
    if (n) fs->commit_off = end_off;
    fs->txn_off = end_off;
    *count += n;
    return W2L_OK;
}

static w2l_rc decode_line(file_source *fs, const char *line, size_t n, int replay,
                          w2l__cdc_step *step, w2l_error *err)
{
    w2l__cdc_where where = { .n = fs->line };
    return w2l__cdc_stream_decode(&fs->st, line, n, replay, &where, step, err);
}

/* Decodes one line at file offset off (adv bytes with its newline); emits what it
 * completes. */
static w2l_rc process_line(file_source *fs, w2l_emitter *em, const char *line, size_t n,
                           uint64_t off, size_t adv, size_t *count, w2l_error *err)
{
    w2l__cdc_step step;
    w2l_rc rc = decode_line(fs, line, n, 0, &step, err);
    if (rc == W2L_OK && step == W2L__CDC_BEFORE) {
        W2L_TRY(emit_pending(fs, em, off, count, err));
        rc = decode_line(fs, line, n, 0, &step, err);
    }
    if (rc != W2L_OK) {
        w2l__cdc_clear(fs->st.dec);
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
        int pl = offset_pos(pos, fs->commit_off);
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
        rc = next_line(fs, fs->st.until_caught_up, &line, &n, &adv, err);
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
        if (fs->st.until_caught_up) {
            size_t np;
            w2l__cdc_events(fs->st.dec, &np);
            if (np && w2l__cdc_pending_complete(fs->st.dec)) {
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
            char who[300];
            snprintf(who, sizeof who, "file %s", fs->path);
            w2l__tfilter_report(&fs->st.filter, who); /* include / exclude matched nothing? */
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
            if (decode_line(fs, line, n, 1, &step, err) != W2L_OK)
                return line_fail(fs, fs->buf_off + fs->pos, err);
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
    w2l__cdc_stream_free(&fs->st);
    w2l__free(fs->buf);
    fs->buf = NULL;
    w2l__free(fs->path);
    fs->path = NULL;
}

static w2l_rc fs_open(const w2l_source_methods *m, const w2l_conf *conf, const char *uri,
                      const char *restored, w2l_source *self, w2l_error *err)
{
    file_source *fs = (file_source *)self;
    fs->fd = -1;
    fs->line = 1;
    w2l_rc rc = parse_uri(fs, uri, err);
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
        char *origin = w2l__asprintf("file %s", fs->path);
        rc = origin ? w2l__cdc_stream_init(&fs->st, fs->fmt, conf, origin, err)
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(origin);
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
    if (fs->at_end) return 0;
    if (!fs->st.last_ts_ms) return -1; /* no event with a time yet */
    int64_t lag = w2l__now_ms() - fs->st.last_ts_ms;
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
