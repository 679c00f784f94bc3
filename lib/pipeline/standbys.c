/*
 * Standby records (standbys.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "standbys.h"
#include "../common/common.h"
#include "../io/io.h"
#include "../json/json.h"

/* WAREHOUSE/_w2l/standby[/name], fresh memory; NULL when conf has no warehouse. */
static char *under(const char *wh, const char *name)
{
    size_t n = strlen(wh);
    while (n > 1 && wh[n - 1] == '/') n--;
    return name ? w2l__asprintf("%.*s/" W2L_STANDBY_DIR "/%s", (int)n, wh, name)
                : w2l__asprintf("%.*s/" W2L_STANDBY_DIR, (int)n, wh);
}

/* This process's record path and the file IO for it; 0 when there is none. */
static int open_mine(const w2l_conf *conf, char **path, w2l_fileio **io, char *host, size_t hn)
{
    const char *wh = NULL;
    *path = NULL;
    *io = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    if (!wh || !*wh) return 0;
    if (gethostname(host, hn - 1) != 0) snprintf(host, hn, "unknown");
    host[hn - 1] = '\0';
    char name[320];
    snprintf(name, sizeof name, "%s-%lld.json", host, (long long)getpid());
    for (char *c = name; *c; c++)
        if (*c == '/') *c = '_';
    *path = under(wh, name);
    w2l_error err;
    if (*path && w2l__fileio_open_for(conf, *path, io, &err) == W2L_OK) return 1;
    w2l__free(*path);
    *path = NULL;
    return 0;
}

void w2l__standby_note(const w2l_conf *conf, const char *job, int64_t since_ms,
                       int64_t expires_ms)
{
    char host[256], *path;
    w2l_fileio *io;
    if (!open_mine(conf, &path, &io, host, sizeof host)) return;
    w2l__json *j = w2l__json_new_object();
    int bad = !j || w2l__json_add(j, "job", w2l__json_new_string(job ? job : "")) ||
              w2l__json_add(j, "host", w2l__json_new_string(host)) ||
              w2l__json_add(j, "pid", w2l__json_new_int64((int64_t)getpid())) ||
              w2l__json_add(j, "since-ms", w2l__json_new_int64(since_ms)) ||
              w2l__json_add(j, "expires-ms", w2l__json_new_int64(expires_ms)) ||
              w2l__json_add(j, "version", w2l__json_new_string(W2L_VERSION_STRING));
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    w2l_error err;
    w2l_rc rc = text ? w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, text, strlen(text), &err)
                     : w2l__fail(&err, W2L_NOMEM, "out of memory");
    if (rc != W2L_OK)
        w2l__log(W2L_LOG_WARN, "standby: cannot write its record %s: %s", path, err.msg);
    w2l__free(text);
    w2l_fileio_close(io);
    w2l__free(path);
}

void w2l__standby_forget(const w2l_conf *conf)
{
    char host[256], *path;
    w2l_fileio *io;
    if (!open_mine(conf, &path, &io, host, sizeof host)) return;
    w2l_error err;
    if (w2l_fileio_remove(io, path, &err) != W2L_OK && err.code != W2L_NOTFOUND)
        w2l__log(W2L_LOG_WARN, "standby: cannot remove its record %s: %s", path, err.msg);
    w2l_fileio_close(io);
    w2l__free(path);
}

typedef struct list_ctx {
    w2l_fileio *io;
    const char *wh;
    w2l_state_holder *out;
    size_t max, n;
    int64_t now;
} list_ctx;

static int list_one(void *ctx, const char *name)
{
    list_ctx *c = ctx;
    size_t nl = strlen(name);
    if (nl < 6 || strcmp(name + nl - 5, ".json") != 0) return 0;
    const char *base = strrchr(name, '/');
    char *path = under(c->wh, base ? base + 1 : name);
    void *data = NULL;
    size_t len = 0;
    w2l_error err;
    w2l__json *j = NULL;
    w2l_state_holder h;
    memset(&h, 0, sizeof h);
    int64_t pid = 0;
    int ok = path && w2l_fileio_read_all(c->io, path, &data, &len, &err) == W2L_OK &&
             w2l__json_parse(data, len, &j, &err) == W2L_OK &&
             w2l__json_int64(w2l__json_get(j, "expires-ms"), &h.expires_ms) == 0 &&
             w2l__json_int64(w2l__json_get(j, "pid"), &pid) == 0 && h.expires_ms > c->now;
    if (ok) { /* a record being replaced, or a torn one, is skipped like an old one */
        const char *s;
        h.pid = pid;
        w2l__json_int64(w2l__json_get(j, "since-ms"), &h.since_ms);
        if ((s = w2l__json_str(w2l__json_get(j, "job")))) snprintf(h.job, sizeof h.job, "%s", s);
        if ((s = w2l__json_str(w2l__json_get(j, "host"))))
            snprintf(h.host, sizeof h.host, "%s", s);
        if ((s = w2l__json_str(w2l__json_get(j, "version"))))
            snprintf(h.version, sizeof h.version, "%s", s);
        /* oldest first: insertion into the first max */
        size_t at = c->n < c->max ? c->n : c->max;
        while (at > 0 && c->out[at - 1].since_ms > h.since_ms) {
            if (at < c->max) c->out[at] = c->out[at - 1];
            at--;
        }
        if (at < c->max) c->out[at] = h;
        c->n++;
    }
    w2l__json_free(j);
    w2l__free(data);
    w2l__free(path);
    return 0;
}

w2l_rc w2l__standby_list(w2l_fileio *io, const char *warehouse, w2l_state_holder *out, size_t max,
                         size_t *n, w2l_error *err)
{
    *n = 0;
    char *dir = under(warehouse, NULL);
    W2L_NOMEM_IF(!dir, err);
    list_ctx c = { io, warehouse, out, max, 0, w2l__now_ms() };
    w2l_rc rc = w2l_fileio_list(io, dir, list_one, &c, err);
    w2l__free(dir);
    if (rc == W2L_NOTFOUND) rc = W2L_OK; /* nobody ever stood by */
    *n = c.n;
    return rc;
}
