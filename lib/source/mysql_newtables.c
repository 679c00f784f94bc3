/*
 * The "mysql" source's tables new to a running job. A job's positions record the table
 * filter they were read under ("filter":{"databases","tables","include","exclude"}, only
 * the members set; left out when the job selects every table). A restart whose filter
 * selects a table the restored position's filter did not (databases= or --include widened,
 * --exclude narrowed) would otherwise stream only that table's changes from the old
 * position on: the table would hold whatever changed since, never its rows. What happens
 * is source.new-tables:
 *   refuse (default)  the job fails at start naming each such table and its size (the
 *                     server's information_schema estimate), and the ways forward;
 *   stream            such tables are streamed from the restored position on, without
 *                     their earlier rows (the behaviour before this check, made explicit);
 *                     the positions then record the new filter, so they are known;
 *   snapshot          such tables are read with the chunked snapshot (mysql_snap_driver.c)
 *                     while every other table streams; their events are dropped until then.
 * The restored filter is the source of truth: a table the job selected all along and that
 * was created later (its CREATE TABLE is in the binlog after the position) is not new.
 * Positions without a "filter" (a job selecting every table, or written before positions
 * recorded it) count every table as known.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"
#include "../json/json.h"

/* The four texts of the current filter (NULL: unset); the databases joined into dbs. */
static void current_texts(const mysql_source *ms, const w2l_conf *conf, char *dbs, size_t size,
                          const char *t[4])
{
    size_t n = 0;
    dbs[0] = '\0';
    for (size_t i = 0; i < ms->cfg.ndbs && n < size; i++)
        n += (size_t)snprintf(dbs + n, size - n, "%s%s", i ? "," : "", ms->cfg.dbs[i]);
    t[0] = ms->cfg.ndbs ? dbs : NULL;
    t[1] = ms->cfg.tables_text && *ms->cfg.tables_text ? ms->cfg.tables_text : NULL;
    t[2] = t[3] = NULL;
    if (conf && w2l_conf_get(conf, "include", &t[2], NULL) != W2L_OK) t[2] = NULL;
    if (conf && w2l_conf_get(conf, "exclude", &t[3], NULL) != W2L_OK) t[3] = NULL;
    for (int i = 2; i < 4; i++)
        if (t[i] && !*t[i]) t[i] = NULL;
}

static const char *const members[4] = {"databases", "tables", "include", "exclude"};

w2l_rc w2l__ms_filter_json(mysql_source *ms, const w2l_conf *conf, w2l_error *err)
{
    char dbs[4096];
    const char *t[4];
    current_texts(ms, conf, dbs, sizeof dbs, t);
    w2l_buf b = {0};
    w2l_rc rc = W2L_OK;
    int any = 0;
    for (int i = 0; i < 4 && rc == W2L_OK; i++) {
        if (!t[i]) continue;
        rc = w2l__buf_printf(&b, err, "%s\"%s\":", any ? "," : ",\"filter\":{", members[i]);
        if (rc == W2L_OK) rc = w2l__json_buf_string(&b, t[i], err);
        any = 1;
    }
    if (rc == W2L_OK && any) rc = w2l_buf_append(&b, "}", 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return rc;
    }
    w2l__free(ms->cfg.filter_json);
    ms->cfg.filter_json = (char *)b.data;
    return W2L_OK;
}

/* The restored filter as a source whose only use is w2l__ms_table_selected. */
static w2l_rc old_filter(const w2l__json *f, mysql_source *old, w2l_error *err)
{
    const char *t[4];
    for (int i = 0; i < 4; i++) t[i] = w2l__json_str(w2l__json_get(f, members[i]));
    for (const char *s = t[0]; s && *s;) {
        size_t l = strcspn(s, ",");
        char **nv = w2l__realloc(old->cfg.dbs, (old->cfg.ndbs + 1) * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        old->cfg.dbs = nv;
        W2L_NOMEM_IF(!(old->cfg.dbs[old->cfg.ndbs] = w2l__strndup(s, l)), err);
        old->cfg.ndbs++;
        s += l;
        if (*s) s++;
    }
    if (t[1] && *t[1]) {
        char *anch = w2l__asprintf("^(%s)$", t[1]);
        W2L_NOMEM_IF(!anch, err);
        int r = regcomp(&old->cfg.re, anch, REG_EXTENDED | REG_NOSUB);
        w2l__free(anch);
        if (r)
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: the restored position's filter has tables '%.200s', "
                             "not a regular expression",
                             t[1]);
        old->cfg.have_regex = 1;
    }
    w2l_conf *c = w2l_conf_new();
    W2L_NOMEM_IF(!c, err);
    w2l_rc rc = W2L_OK;
    if (t[2] && *t[2]) rc = w2l_conf_set(c, "include", t[2], err);
    if (rc == W2L_OK && t[3] && *t[3]) rc = w2l_conf_set(c, "exclude", t[3], err);
    if (rc == W2L_OK) rc = w2l__tfilter_init(&old->cfg.filter, c, err);
    w2l_conf_free(c);
    return rc;
}

static void old_free(mysql_source *old)
{
    w2l__ms_free_strv(old->cfg.dbs, old->cfg.ndbs);
    if (old->cfg.have_regex) regfree(&old->cfg.re);
    w2l__tfilter_free(&old->cfg.filter);
    w2l__free(old);
}

/* The server's estimate of a table's rows ("" when it has none). */
static void row_estimate(w2l__my *c, const char *db, const char *name, char *out, size_t size)
{
    char q[1400], ed[520], en[520];
    int null = 1;
    w2l_error e;
    w2l__my_escape(c, ed, db, strlen(db) > 255 ? 255 : strlen(db));
    w2l__my_escape(c, en, name, strlen(name) > 255 ? 255 : strlen(name));
    snprintf(q, sizeof q,
             "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%s' AND "
             "TABLE_NAME = '%s'",
             ed, en);
    if (w2l__my_value(c, q, out, size, &null, &e) != W2L_OK || null) out[0] = '\0';
}

w2l_rc w2l__ms_check_new_tables(mysql_source *ms, const w2l_conf *conf, w2l__my *c,
                                const char *restored, w2l_error *err)
{
    w2l__json *j = NULL;
    W2L_TRY(w2l__json_parse(restored, strlen(restored), &j, err));
    const w2l__json *f = w2l__json_get(j, "filter");
    if (!f) { /* every table was selected: none is new */
        w2l__json_free(j);
        return W2L_OK;
    }
    mysql_source *old = w2l__calloc(1, sizeof *old);
    if (!old) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l_rc rc = old_filter(f, old, err);
    w2l__json_free(j);
    w2l_buf list = {0};
    size_t nnew = 0;
    int64_t mode = 0; /* refuse */
    if (conf && w2l_conf_get_int(conf, "source.new-tables", &mode, NULL) != W2L_OK) mode = 0;
    for (size_t i = 0; rc == W2L_OK && i < ms->defs.n; i++) {
        const ttable *t = &ms->defs.tab[i];
        if (!w2l__ms_table_selected(ms, t->db, t->name) ||
            w2l__ms_table_selected(old, t->db, t->name))
            continue;
        if (mode == 2) { /* snapshot: the plan takes it */
            size_t ld = strlen(t->db), ln = strlen(t->name);
            char *n = w2l__malloc(ld + ln + 2);
            char **nv = w2l__realloc(ms->new_tables, (ms->new_tables_n + 1) * sizeof *nv);
            if (nv) ms->new_tables = nv;
            if (!n || !nv) {
                w2l__free(n);
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            memcpy(n, t->db, ld + 1);
            memcpy(n + ld + 1, t->name, ln + 1);
            ms->new_tables[ms->new_tables_n++] = n;
        }
        if (++nnew > 20) continue;
        char est[32];
        row_estimate(c, t->db, t->name, est, sizeof est);
        rc = w2l__buf_printf(&list, err, "%s%s.%s (%s%s%s)", nnew > 1 ? ", " : "", t->db,
                             t->name, *est ? "about " : "rows unknown", est, *est ? " rows" : "");
    }
    old_free(old);
    if (rc == W2L_OK && nnew > 20)
        rc = w2l__buf_printf(&list, err, " and %zu more", nnew - 20);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&list, err);
    if (rc != W2L_OK || !nnew) {
        w2l_buf_release(&list);
        return rc;
    }
    if (mode == 2) {
        w2l__log(W2L_LOG_INFO,
                 "mysql source: %zu table(s) new to this job (the filter now selects them, the "
                 "checkpoint's did not) are read with a snapshot while the others stream "
                 "(source.new-tables=snapshot): %s",
                 nnew, (const char *)list.data);
        w2l_buf_release(&list);
        ms->announce_filter = 1;
        return W2L_OK;
    }
    if (mode == 1) {
        w2l__log(W2L_LOG_WARN,
                 "mysql source: %zu table(s) new to this job (the filter now selects them, the "
                 "checkpoint's did not) are streamed from the checkpoint's position on, without "
                 "their earlier rows (source.new-tables=stream): %s",
                 nnew, (const char *)list.data);
        w2l_buf_release(&list);
        ms->announce_filter = 1;
        return W2L_OK;
    }
    rc = w2l__fail(err, W2L_SOURCE,
                   "mysql source: %zu table(s) new to this job: the filter now selects them, the "
                   "checkpoint's did not, and the binlog from the checkpoint's position holds "
                   "only their later changes, not their rows: %s (row counts: the server's "
                   "information_schema estimate). Either sync them with a snapshot in a new "
                   "warehouse (--include with their names) and leave them out here, or set "
                   "source.new-tables=stream to take only their changes from the checkpoint "
                   "on, or start with the checkpoint's filter again",
                   nnew, (const char *)list.data);
    w2l_buf_release(&list);
    return rc;
}
