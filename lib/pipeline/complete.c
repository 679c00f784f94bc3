/*
 * Completeness marks (complete.h): time parsing and formatting, the job file, the rule that
 * gives a table's mark, and the completer thread that writes the job file and runs the
 * on-complete hook.
 *
 * The hook: after the job's mark X crossed one or more boundaries b (whole UTC hours or days,
 * on-complete.every; b is crossed when X >= b - 1, i.e. every transaction committed before
 * b is in), the command runs once per table of the job (tables whose newest w2l snapshot is
 * the job's) and boundary, as /bin/sh -c COMMAND w2l-on-complete TABLE BOUNDARY with
 * W2L_TABLE, W2L_NAMESPACE, W2L_TABLE_NAME, W2L_BOUNDARY, W2L_BOUNDARY_MS, W2L_PERIOD,
 * W2L_COMPLETE_THROUGH_MS and W2L_JOB_ID in its environment. Boundaries are fired in order,
 * each recorded in the job file after its commands ran (at least once across restarts; a
 * command that fails is logged, not retried). The first mark a job file sees only sets the
 * starting point: boundaries before it are not fired.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "complete.h"
#include "../common/thread.h"
#include "../io/io.h"
#include "../json/json.h"
#include "../model/model.h"

extern char **environ;

/* ------------------------------------------------------------------- time ---------- */

/* n digits at *p into *v; advances *p. 0 when there are not n digits. */
static int digits(const char **p, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9') return 0;
        *v = *v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return 1;
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

w2l_rc w2l_time_parse(const char *text, int64_t *out_ms, w2l_error *err)
{
    if (!text || !out_ms) return w2l__fail(err, W2L_MISUSE, "w2l_time_parse: NULL argument");
    const char *p = text;
    size_t n = strlen(p);
    if (n && strspn(p, "0123456789") == n) { /* epoch ms */
        if (n > 15) return w2l__fail(err, W2L_CONFIG, "time '%s': too large", text);
        *out_ms = strtoll(p, NULL, 10);
        return W2L_OK;
    }
    int y, mo, d, h = 0, mi = 0, s = 0;
    int64_t ms = 0;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d))
        goto bad;
    static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y))) goto bad;
    int64_t offset_ms = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi)) goto bad;
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &s)) goto bad;
            if (*p == '.' || *p == ',') {
                p++;
                int nd = 0;
                for (; *p >= '0' && *p <= '9'; p++, nd++)
                    if (nd < 3) ms = ms * 10 + (*p - '0');
                if (!nd) goto bad;
                for (; nd < 3; nd++) ms *= 10; /* finer than ms: truncated */
            }
        }
        if (h > 23 || mi > 59 || s > 59) goto bad;
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
            if (!digits(&p, 2, &oh)) goto bad;
            if (*p == ':') p++;
            if (*p && !digits(&p, 2, &om)) goto bad;
            if (oh > 23 || om > 59) goto bad;
            offset_ms = sign * ((int64_t)oh * 3600000 + (int64_t)om * 60000);
        }
    }
    if (*p) goto bad;
    *out_ms = w2l__days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400000 + (int64_t)h * 3600000 +
              (int64_t)mi * 60000 + (int64_t)s * 1000 + ms - offset_ms;
    return W2L_OK;
bad:
    return w2l__fail(err, W2L_CONFIG,
                     "time '%s': expected ms since the epoch or ISO-8601 "
                     "(2024-05-01, 2024-05-01T10:00:00Z, 2024-05-01T12:00+02:00)",
                     text);
}

/* Splits ms into a UTC date and time. */
static void split(int64_t ms, int64_t *y, unsigned *mo, unsigned *d, int *h, int *mi, int *s,
                  int *frac)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rest = ms - days * 86400000;
    w2l__civil_from_days(days, y, mo, d);
    *h = (int)(rest / 3600000);
    *mi = (int)(rest / 60000 % 60);
    *s = (int)(rest / 1000 % 60);
    *frac = (int)(rest % 1000);
}

int w2l_time_format(int64_t ms, char *buf, size_t size)
{
    int64_t y;
    unsigned mo, d;
    int h, mi, s, f;
    split(ms, &y, &mo, &d, &h, &mi, &s, &f);
    return snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, mo, d, h,
                    mi, s, f);
}

int w2l__time_format_kc(int64_t ms, char *buf, size_t size)
{
    int64_t y;
    unsigned mo, d;
    int h, mi, s, f;
    split(ms, &y, &mo, &d, &h, &mi, &s, &f);
    if (f) /* LocalTime.toString(): HH:mm, then :ss and .SSS only when not zero */
        return snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, mo, d,
                        h, mi, s, f);
    if (s)
        return snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, mo, d, h,
                        mi, s);
    return snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02dZ", (long long)y, mo, d, h, mi);
}

/* ------------------------------------------------------------- summary mark -------- */

typedef struct mark_ctx {
    int64_t ms;
} mark_ctx;

static int find_mark(void *ctx, const w2l__ice_snapshot *s, size_t depth)
{
    (void)depth;
    mark_ctx *m = ctx;
    const char *v = w2l__ice_props_get(&s->summary, W2L_COMPLETE_KEY);
    if (!v) return 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < 0) return 0; /* not ours: look further back */
    m->ms = x;
    return 1;
}

int64_t w2l__complete_summary_mark(const w2l__ice_meta *m)
{
    mark_ctx c = { -1 };
    if (m) w2l__ice_meta_ancestry(m, find_mark, &c, NULL);
    return c.ms;
}

/* ------------------------------------------------------------------ job file ------- */

char *w2l__complete_path(const char *warehouse, const char *job)
{
    size_t n = strlen(warehouse);
    while (n > 1 && warehouse[n - 1] == '/') n--;
    return w2l__asprintf("%.*s/" W2L_COMPLETE_DIR "/%s.json", (int)n, warehouse, job);
}

w2l_rc w2l__complete_read(w2l_fileio *io, const char *path, w2l__complete_file *out,
                          w2l_error *err)
{
    memset(out, 0, sizeof *out);
    out->through_ms = out->fired_ms = -1;
    void *data = NULL;
    size_t len = 0;
    W2L_TRY(w2l_fileio_read_all(io, path, &data, &len, err));
    w2l__json *j = NULL;
    w2l_rc rc = w2l__json_parse(data, len, &j, err);
    w2l__free(data);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "%s: ", path);
        return W2L_CORRUPT;
    }
    int64_t ck = 0, x = -1, up = 0, fired = -1;
    if (w2l__json_int64(w2l__json_get(j, "checkpoint"), &ck) ||
        w2l__json_int64(w2l__json_get(j, "complete-through-ms"), &x) || ck < 0) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_CORRUPT, "%s: not a completeness file", path);
    }
    w2l__json_int64(w2l__json_get(j, "updated-ms"), &up);
    const w2l__json *oc = w2l__json_get(j, "on-complete");
    const char *every = oc ? w2l__json_str(w2l__json_get(oc, "every")) : NULL;
    if (oc) w2l__json_int64(w2l__json_get(oc, "fired-through-ms"), &fired);
    out->checkpoint = (uint64_t)ck;
    out->through_ms = x;
    out->updated_ms = up;
    if (every && strlen(every) < sizeof out->every) {
        strcpy(out->every, every);
        out->fired_ms = fired;
    }
    w2l__json_free(j);
    return W2L_OK;
}

w2l_rc w2l__complete_write(w2l_fileio *io, const char *path, const char *job,
                           w2l__complete_file *f, w2l_error *err)
{
    w2l__complete_file cur;
    w2l_rc rc = w2l__complete_read(io, path, &cur, err);
    if (rc == W2L_OK) { /* never backwards, whoever wrote it last */
        if (cur.checkpoint > f->checkpoint) f->checkpoint = cur.checkpoint;
        if (cur.through_ms > f->through_ms) f->through_ms = cur.through_ms;
        if (f->every[0] && strcmp(cur.every, f->every) == 0 && cur.fired_ms > f->fired_ms)
            f->fired_ms = cur.fired_ms;
    } else if (rc != W2L_NOTFOUND && rc != W2L_CORRUPT) {
        return rc;
    }
    w2l__json *j = w2l__json_new_object(), *oc = NULL;
    int bad = !j || w2l__json_add(j, "job-id", w2l__json_new_string(job)) ||
              w2l__json_add(j, "checkpoint", w2l__json_new_int64((int64_t)f->checkpoint)) ||
              w2l__json_add(j, "complete-through-ms", w2l__json_new_int64(f->through_ms)) ||
              w2l__json_add(j, "updated-ms", w2l__json_new_int64(f->updated_ms));
    if (!bad && f->every[0]) {
        oc = w2l__json_new_object();
        bad = !oc || w2l__json_add(oc, "every", w2l__json_new_string(f->every)) ||
              w2l__json_add(oc, "fired-through-ms", w2l__json_new_int64(f->fired_ms)) ||
              w2l__json_add(j, "on-complete", oc);
        if (bad && oc && !w2l__json_get(j, "on-complete")) w2l__json_free(oc);
    }
    char *text = bad ? NULL : w2l__json_print(j, 0);
    w2l__json_free(j);
    W2L_NOMEM_IF(!text, err);
    rc = w2l_fileio_write_all(io, path, W2L_CREATE_REPLACE, text, strlen(text), err);
    w2l__free(text);
    return rc;
}

/* ------------------------------------------------------------------ the rule ------- */

/* The job and checkpoint of m's newest w2l snapshot (job NULL: none). */
static w2l_rc newest_w2l(const w2l__ice_meta *m, char **job, uint64_t *ckpt, w2l_error *err)
{
    *job = NULL;
    *ckpt = 0;
    w2l_rc rc = W2L_OK;
    const w2l__ice_snapshot *s = w2l__ice_meta_newest_checkpoint(m, NULL, &rc, err);
    if (rc != W2L_OK || !s) return rc;
    const char *j = w2l__ice_props_get(&s->summary, "w2l.job-id");
    const char *c = w2l__ice_props_get(&s->summary, "w2l.checkpoint-id");
    if (!j) return W2L_OK;
    *job = w2l__strdup(j);
    W2L_NOMEM_IF(!*job, err);
    *ckpt = c ? strtoull(c, NULL, 10) : 0;
    return W2L_OK;
}

w2l_rc w2l__complete_of_table(w2l_catalog *cat, w2l_fileio *io, const char *warehouse,
                              const char *ns, const char *table, w2l_complete_info *out,
                              char **job, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    out->through_ms = out->summary_ms = out->job_file_ms = out->snapshot_id = -1;
    *job = NULL;
    w2l__ice_table *t = NULL;
    W2L_TRY(w2l__ice_table_load(cat, io, ns, table, &t, err));
    char *j1 = NULL;
    uint64_t c1;
    w2l_rc rc = newest_w2l(t->meta, &j1, &c1, err);
    w2l__complete_file f;
    int have_file = 0;
    if (rc == W2L_OK && j1) {
        /* the job file first, then the metadata again: every commit of the file's
         * checkpoint is in what is read after it */
        char *path = w2l__complete_path(warehouse, j1);
        if (!path) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else {
            w2l_error e2;
            w2l_rc r = w2l__complete_read(io, path, &f, &e2);
            if (r == W2L_OK) have_file = 1;
            else if (r == W2L_CORRUPT) w2l__log(W2L_LOG_WARN, "%s; ignored", e2.msg);
            else if (r != W2L_NOTFOUND) {
                *err = e2;
                rc = r;
            }
            w2l__free(path);
        }
        if (rc == W2L_OK && have_file) {
            w2l__ice_table_free(t);
            t = NULL;
            rc = w2l__ice_table_load(cat, io, ns, table, &t, err);
        }
    }
    char *j2 = NULL;
    uint64_t c2 = 0;
    if (rc == W2L_OK) rc = newest_w2l(t->meta, &j2, &c2, err);
    if (rc == W2L_OK) {
        out->snapshot_id = t->meta->current_snapshot_id;
        out->summary_ms = w2l__complete_summary_mark(t->meta);
        out->checkpoint = c2;
        if (have_file && j2 && strcmp(j1, j2) == 0) {
            out->job_file_checkpoint = f.checkpoint;
            if (f.checkpoint >= c2) out->job_file_ms = f.through_ms;
        }
        out->through_ms = out->summary_ms;
        if (out->summary_ms >= 0) out->source = "summary";
        if (out->job_file_ms > out->through_ms) {
            out->through_ms = out->job_file_ms;
            out->source = "job-file";
        }
        *job = j2;
        j2 = NULL;
    }
    w2l__free(j1);
    w2l__free(j2);
    w2l__ice_table_free(t);
    return rc;
}

/* ---------------------------------------------------------------- completer -------- */

struct w2l__completer {
    w2l_conf *conf;
    char *job, *path, *cmd;
    const char *every;    /* "hour" or "day" */
    int64_t period_ms;
    thrd_t thr;
    mtx_t mtx;
    cnd_t cv;
    uint64_t post_ckpt;
    int64_t post_ms;
    int posted, stop;
    w2l_fileio *io;
    w2l_catalog *cat;
    w2l__complete_file file;
    int loaded;
};

typedef struct names_ctx {
    char **v;
    size_t n, cap;
    int oom;
} names_ctx;

static int add_name(void *ctx, const char *ns, const char *table)
{
    names_ctx *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        char **v = w2l__realloc(c->v, cap * sizeof *v);
        if (!v) return c->oom = 1;
        c->v = v;
        c->cap = cap;
    }
    char *s = w2l__asprintf("%s%c%s", ns, '\0', table); /* "ns\0table" */
    size_t nl = strlen(ns);
    if (!s) return c->oom = 1;
    s[nl] = '\0';
    c->v[c->n++] = s;
    return 0;
}

/* Runs the hook for one table and boundary and waits for it. */
static void run_hook(w2l__completer *c, const char *ns, const char *table, int64_t boundary,
                     int64_t through)
{
    char iso[40], bms[24], xms[24];
    w2l_time_format(boundary, iso, sizeof iso);
    snprintf(bms, sizeof bms, "%lld", (long long)boundary);
    snprintf(xms, sizeof xms, "%lld", (long long)through);
    char *full = w2l__asprintf("%s.%s", ns, table);
    char *add[8] = {
        w2l__asprintf("W2L_TABLE=%s", full ? full : ""),
        w2l__asprintf("W2L_NAMESPACE=%s", ns),
        w2l__asprintf("W2L_TABLE_NAME=%s", table),
        w2l__asprintf("W2L_BOUNDARY=%s", iso),
        w2l__asprintf("W2L_BOUNDARY_MS=%s", bms),
        w2l__asprintf("W2L_PERIOD=%s", c->every),
        w2l__asprintf("W2L_COMPLETE_THROUGH_MS=%s", xms),
        w2l__asprintf("W2L_JOB_ID=%s", c->job),
    };
    size_t ne = 0;
    while (environ && environ[ne]) ne++;
    char **envp = w2l__calloc(ne + 9, sizeof *envp);
    int ok = full && envp;
    for (size_t i = 0; i < 8; i++) ok = ok && add[i];
    if (ok) {
        size_t k = 0;
        for (size_t i = 0; i < ne; i++)
            if (strncmp(environ[i], "W2L_", 4) != 0) envp[k++] = environ[i];
        for (size_t i = 0; i < 8; i++) envp[k++] = add[i];
        char *argv[] = { "sh", "-c", c->cmd, "w2l-on-complete", full, iso, NULL };
        pid_t pid;
        int e = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, envp);
        if (e != 0) {
            w2l__log(W2L_LOG_ERROR, "on-complete: cannot start /bin/sh for %s at %s: %s", full,
                     iso, strerror(e));
        } else {
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
            if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
                w2l__log(W2L_LOG_ERROR, "on-complete: the command for %s at %s exited with %d",
                         full, iso, WEXITSTATUS(st));
            else if (WIFSIGNALED(st))
                w2l__log(W2L_LOG_ERROR, "on-complete: the command for %s at %s died of signal %d",
                         full, iso, WTERMSIG(st));
            else
                w2l__log(W2L_LOG_INFO, "on-complete: %s complete through %s", full, iso);
        }
    } else {
        w2l__log(W2L_LOG_ERROR, "on-complete: out of memory; %s at %s not run",
                 full ? full : table, iso);
    }
    for (size_t i = 0; i < 8; i++) w2l__free(add[i]);
    w2l__free(envp);
    w2l__free(full);
}

/* Runs the hook for every table of the job at boundary. W2L_OK also when commands failed
 * (they are logged); an error when the tables cannot be listed. */
static w2l_rc fire(w2l__completer *c, int64_t boundary, w2l_error *err)
{
    names_ctx names = { 0 };
    w2l_rc rc = w2l__catalog_list(c->cat, NULL, add_name, &names, err);
    if (rc == W2L_OK && names.oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < names.n; i++) {
        const char *ns = names.v[i], *table = ns + strlen(ns) + 1;
        w2l__ice_table *t = NULL;
        w2l_rc r = w2l__ice_table_load(c->cat, c->io, ns, table, &t, err);
        if (r == W2L_NOTFOUND) continue; /* dropped meanwhile */
        if (r != W2L_OK) {
            rc = r;
            break;
        }
        char *job = NULL;
        uint64_t ck;
        rc = newest_w2l(t->meta, &job, &ck, err);
        w2l__ice_table_free(t);
        if (rc == W2L_OK && job && strcmp(job, c->job) == 0)
            run_hook(c, ns, table, boundary, c->file.through_ms);
        w2l__free(job);
    }
    for (size_t i = 0; i < names.n; i++) w2l__free(names.v[i]);
    w2l__free(names.v);
    return rc;
}

static void handle(w2l__completer *c, uint64_t ckpt, int64_t through)
{
    w2l_error err;
    w2l_error_clear(&err);
    w2l_rc rc = W2L_OK;
    if (!c->cat) rc = w2l__catalog_open_conf(c->conf, &c->io, &c->cat, &err);
    if (rc == W2L_OK && !c->loaded) {
        rc = w2l__complete_read(c->io, c->path, &c->file, &err);
        if (rc == W2L_NOTFOUND || rc == W2L_CORRUPT) {
            if (rc == W2L_CORRUPT) w2l__log(W2L_LOG_WARN, "completeness: %s; replaced", err.msg);
            memset(&c->file, 0, sizeof c->file);
            c->file.through_ms = c->file.fired_ms = -1;
            rc = W2L_OK;
        }
        if (rc == W2L_OK) c->loaded = 1;
    }
    if (rc != W2L_OK) {
        w2l__log(W2L_LOG_WARN, "completeness: %s (retried after the next checkpoint)", err.msg);
        return;
    }
    int dirty = 0;
    if (through > c->file.through_ms) { /* an unchanged mark needs no write (complete.h) */
        c->file.through_ms = through;
        if (ckpt > c->file.checkpoint) c->file.checkpoint = ckpt;
        dirty = 1;
    }
    if (c->cmd && c->file.through_ms >= 0 &&
        (strcmp(c->file.every, c->every) != 0 || c->file.fired_ms < 0)) {
        /* the starting point: boundaries before the first mark are not fired */
        snprintf(c->file.every, sizeof c->file.every, "%s", c->every);
        c->file.fired_ms = (c->file.through_ms + 1) / c->period_ms * c->period_ms;
        dirty = 1;
    }
    if (dirty) {
        c->file.updated_ms = w2l__now_ms();
        rc = w2l__complete_write(c->io, c->path, c->job, &c->file, &err);
        if (rc != W2L_OK) {
            w2l__log(W2L_LOG_WARN, "completeness: %s", err.msg);
            return;
        }
        w2l__log(W2L_LOG_DEBUG, "completeness: job %s complete through %lld (checkpoint %llu)",
                 c->job, (long long)c->file.through_ms, (unsigned long long)c->file.checkpoint);
    }
    while (c->cmd && c->file.fired_ms >= 0 &&
           c->file.fired_ms + c->period_ms - 1 <= c->file.through_ms) {
        int64_t b = c->file.fired_ms + c->period_ms;
        if ((rc = fire(c, b, &err)) == W2L_OK) {
            c->file.fired_ms = b;
            c->file.updated_ms = w2l__now_ms();
            rc = w2l__complete_write(c->io, c->path, c->job, &c->file, &err);
        }
        if (rc != W2L_OK) {
            w2l__log(W2L_LOG_WARN, "on-complete: %s (retried after the next checkpoint)",
                     err.msg);
            return;
        }
    }
}

static int completer_main(void *arg)
{
    w2l__completer *c = arg;
    for (;;) {
        mtx_lock(&c->mtx);
        while (!c->posted && !c->stop) cnd_wait(&c->cv, &c->mtx);
        if (!c->posted) {
            mtx_unlock(&c->mtx);
            break;
        }
        uint64_t ck = c->post_ckpt;
        int64_t ms = c->post_ms;
        c->posted = 0;
        mtx_unlock(&c->mtx);
        handle(c, ck, ms);
    }
    return 0;
}

static void completer_release(w2l__completer *c)
{
    w2l__catalog_close(c->cat);
    w2l_fileio_close(c->io);
    w2l_conf_free(c->conf);
    w2l__free(c->job);
    w2l__free(c->path);
    w2l__free(c->cmd);
    cnd_destroy(&c->cv);
    mtx_destroy(&c->mtx);
    w2l__free(c);
}

w2l_rc w2l__completer_new(const w2l_conf *conf, const char *job_id, w2l__completer **out,
                          w2l_error *err)
{
    *out = NULL;
    const char *wh = NULL, *cmd = NULL, *every = NULL;
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    if (!wh || !*wh || !job_id) return W2L_OK;
    W2L_TRY(w2l_conf_get(conf, "on-complete", &cmd, err));
    W2L_TRY(w2l_conf_get(conf, "on-complete.every", &every, err));
    w2l__completer *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    mtx_init(&c->mtx, mtx_plain);
    cnd_init(&c->cv);
    c->every = every && strcmp(every, "day") == 0 ? "day" : "hour";
    c->period_ms = strcmp(c->every, "day") == 0 ? 86400000 : 3600000;
    c->conf = w2l_conf_dup(conf);
    c->job = w2l__strdup(job_id);
    c->path = w2l__complete_path(wh, job_id);
    c->cmd = cmd && *cmd ? w2l__strdup(cmd) : NULL;
    if (!c->conf || !c->job || !c->path || (cmd && *cmd && !c->cmd)) {
        completer_release(c);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    /* the catalog now, before any committer opens its own (a failure is retried at the
     * first checkpoint) */
    w2l_error e2;
    if (w2l__catalog_open_conf(c->conf, &c->io, &c->cat, &e2) != W2L_OK) {
        w2l_fileio_close(c->io);
        c->io = NULL;
        c->cat = NULL;
    }
    if (thrd_create(&c->thr, completer_main, c) != thrd_success) {
        completer_release(c);
        return w2l__fail(err, W2L_ERROR, "cannot start the completeness thread");
    }
    *out = c;
    return W2L_OK;
}

void w2l__completer_post(w2l__completer *c, uint64_t ckpt, int64_t through_ms)
{
    if (!c) return;
    mtx_lock(&c->mtx);
    if (!c->posted || ckpt > c->post_ckpt) { /* only the newest matters */
        c->post_ckpt = ckpt;
        if (!c->posted || through_ms > c->post_ms) c->post_ms = through_ms;
    }
    c->posted = 1;
    cnd_signal(&c->cv);
    mtx_unlock(&c->mtx);
}

void w2l__completer_free(w2l__completer *c)
{
    if (!c) return;
    mtx_lock(&c->mtx);
    c->stop = 1;
    cnd_signal(&c->cv);
    mtx_unlock(&c->mtx);
    thrd_join(c->thr, NULL);
    completer_release(c);
}
