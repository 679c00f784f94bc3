/*
 * The last run's record (lastrun.h): written at a run's start and end, read by
 * w2l_lake_last_run(3).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lastrun.h"
#include "../common/common.h"
#include "../io/io.h"
#include "../json/json.h"

/* s with the password of every "scheme://user:password@" masked, fresh memory. */
static char *masked(const char *s)
{
    size_t n = strlen(s);
    char *out = w2l__malloc(n + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        const char *p = strstr(s + i, "://");
        if (!p) {
            memcpy(out + o, s + i, n - i);
            o += n - i;
            break;
        }
        size_t upto = (size_t)(p - s) + 3; /* through "://" */
        memcpy(out + o, s + i, upto - i);
        o += upto - i;
        i = upto;
        size_t auth = strcspn(s + i, "/?# \"'");
        const char *at = memchr(s + i, '@', auth);
        const char *colon = at ? memchr(s + i, ':', (size_t)(at - (s + i))) : NULL;
        if (!colon) continue;
        size_t user = (size_t)(colon - (s + i)) + 1; /* "user:" */
        memcpy(out + o, s + i, user);
        o += user;
        if (at - colon - 1 >= 4) { /* "****" is never longer than what it replaces */
            memcpy(out + o, "****", 4);
            o += 4;
        } else {
            memset(out + o, '*', (size_t)(at - colon - 1));
            o += (size_t)(at - colon - 1);
        }
        i = (size_t)(at - s);
    }
    out[o] = '\0';
    return out;
}

void w2l__lastrun_write(const w2l_conf *conf, const w2l__lastrun *r)
{
    const char *wh = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    if (!wh || !*wh) return;
    size_t whn = strlen(wh);
    while (whn > 1 && wh[whn - 1] == '/') whn--;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    char *path = w2l__asprintf("%.*s/" W2L_LASTRUN_FILE, (int)whn, wh);
    char *error = r->error ? masked(r->error) : NULL;
    w2l__json *j = w2l__json_new_object();
    int bad = !path || (r->error && !error) || !j ||
              w2l__json_add(j, "outcome", w2l__json_new_string(r->outcome)) ||
              w2l__json_add(j, "started-ms", w2l__json_new_int64(r->started_ms)) ||
              w2l__json_add(j, "ended-ms", w2l__json_new_int64(r->ended_ms)) ||
              (error && w2l__json_add(j, "error", w2l__json_new_string(error))) ||
              (r->job_id && w2l__json_add(j, "job-id", w2l__json_new_string(r->job_id))) ||
              w2l__json_add(j, "pid", w2l__json_new_int64((int64_t)getpid())) ||
              (host[0] && w2l__json_add(j, "host", w2l__json_new_string(host))) ||
              w2l__json_add(j, "rows", w2l__json_new_int64((int64_t)r->rows)) ||
              w2l__json_add(j, "checkpoint", w2l__json_new_int64((int64_t)r->checkpoint));
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    w2l__free(error);
    w2l_error err;
    w2l_error_clear(&err);
    w2l_fileio *io = NULL;
    w2l_rc rc = text ? W2L_OK : w2l__fail(&err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) rc = w2l__fileio_open_for(conf, path, &io, &err);
    if (rc == W2L_OK)
        rc = w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, text, strlen(text), &err);
    if (rc != W2L_OK)
        w2l__log(W2L_LOG_WARN, "pipeline: cannot record the run's %s in %s: %s",
                 strcmp(r->outcome, "running") == 0 ? "start" : "end",
                 path ? path : W2L_LASTRUN_FILE, err.msg);
    w2l_fileio_close(io);
    w2l__free(text);
    w2l__free(path);
}

/* The record's path under conf's warehouse and the file IO for it; 0 when conf has no
 * warehouse or either cannot be had. */
static int open_record(const w2l_conf *conf, char **path, w2l_fileio **io)
{
    const char *wh = NULL;
    *path = NULL;
    *io = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    if (!wh || !*wh) return 0;
    size_t whn = strlen(wh);
    while (whn > 1 && wh[whn - 1] == '/') whn--;
    *path = w2l__asprintf("%.*s/" W2L_LASTRUN_FILE, (int)whn, wh);
    w2l_error err;
    if (*path && w2l__fileio_open_for(conf, *path, io, &err) == W2L_OK) return 1;
    w2l__free(*path);
    *path = NULL;
    return 0;
}

char *w2l__lastrun_save(const w2l_conf *conf, size_t *len)
{
    char *path;
    w2l_fileio *io;
    *len = 0;
    if (!open_record(conf, &path, &io)) return NULL;
    void *data = NULL;
    w2l_error err;
    if (w2l_fileio_read_all(io, path, &data, len, &err) != W2L_OK) {
        data = NULL;
        *len = 0;
    }
    w2l_fileio_close(io);
    w2l__free(path);
    return data;
}

void w2l__lastrun_restore(const w2l_conf *conf, const char *saved, size_t len)
{
    char *path;
    w2l_fileio *io;
    if (!open_record(conf, &path, &io)) return;
    w2l_error err;
    w2l_rc rc = saved ? w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, saved, len, &err)
                      : w2l_fileio_remove(io, path, &err);
    if (rc != W2L_OK)
        w2l__log(W2L_LOG_WARN, "pipeline: cannot put back the last run's record %s: %s", path,
                 err.msg);
    w2l_fileio_close(io);
    w2l__free(path);
}

/* A copy of the string member key of j appended to *buf at *off (NULL when absent). */
static const char *take(const w2l__json *j, const char *key, char *buf, size_t *off)
{
    const char *s = w2l__json_str(w2l__json_get(j, key));
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    memcpy(buf + *off, s, n);
    *off += n;
    return buf + *off - n;
}

w2l_rc w2l__lastrun_read(w2l_fileio *io, const char *warehouse, w2l_run_info *out, char **hold,
                         w2l_error *err)
{
    memset(out, 0, sizeof *out);
    out->started_ms = out->ended_ms = -1;
    *hold = NULL;
    char *path = w2l__asprintf("%s/" W2L_LASTRUN_FILE, warehouse);
    W2L_NOMEM_IF(!path, err);
    void *data = NULL;
    size_t len = 0;
    w2l_rc rc = w2l_fileio_read_all(io, path, &data, &len, err);
    w2l__json *j = NULL;
    if (rc == W2L_OK) {
        rc = w2l__json_parse(data, len, &j, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s: ", path);
            rc = W2L_CORRUPT;
        }
    }
    const char *outcome = rc == W2L_OK ? w2l__json_str(w2l__json_get(j, "outcome")) : NULL;
    if (rc == W2L_OK &&
        (!outcome || (strcmp(outcome, "running") != 0 && strcmp(outcome, "ok") != 0 &&
                      strcmp(outcome, "failed") != 0) ||
         w2l__json_int64(w2l__json_get(j, "started-ms"), &out->started_ms)))
        rc = w2l__fail(err, W2L_CORRUPT, "%s: not a run record (no outcome or started-ms)", path);
    if (rc == W2L_OK) {
        char *buf = w2l__malloc(len + 16); /* every string is shorter than the text */
        if (!buf) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else {
            size_t off = 0;
            int64_t v;
            out->outcome = take(j, "outcome", buf, &off);
            out->error = take(j, "error", buf, &off);
            out->job_id = take(j, "job-id", buf, &off);
            out->host = take(j, "host", buf, &off);
            if (w2l__json_int64(w2l__json_get(j, "ended-ms"), &out->ended_ms)) out->ended_ms = -1;
            if (!w2l__json_int64(w2l__json_get(j, "pid"), &v)) out->pid = v;
            if (!w2l__json_int64(w2l__json_get(j, "rows"), &v) && v >= 0) out->rows = (uint64_t)v;
            if (!w2l__json_int64(w2l__json_get(j, "checkpoint"), &v) && v >= 0)
                out->checkpoint = (uint64_t)v;
            *hold = buf;
        }
    }
    w2l__json_free(j);
    w2l__free(data);
    w2l__free(path);
    if (rc != W2L_OK) memset(out, 0, sizeof *out);
    return rc;
}
