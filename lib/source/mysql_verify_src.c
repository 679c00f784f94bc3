/*
 * The mysql source as w2l verify sees it: configuration and table definitions through the
 * source's own code (mysql_config.c, mysql_tracked.c), and nothing else of the source.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"
#include "mysql_verify_src.h"

struct w2l__mysrc {
    mysql_source *ms;
    w2l__my *conn;
    int mysql;
    w2l__mysrc_table *tables;
    size_t ntables;
    w2l__mysrc_col *cols; /* every table's columns, in one array */
    size_t *pks;
};

static void ms_release(mysql_source *ms)
{
    if (!ms) return;
    for (size_t i = 0; i < ms->defs.n; i++) w2l__ms_ttable_clear(&ms->defs.tab[i]);
    w2l__free(ms->defs.tab);
    w2l__ms_cfg_free(ms);
    w2l__free(ms);
}

void w2l__mysrc_close(w2l__mysrc *s)
{
    if (!s) return;
    w2l__my_close(s->conn);
    ms_release(s->ms);
    w2l__free(s->tables);
    w2l__free(s->cols);
    w2l__free(s->pks);
    w2l__free(s);
}

static int by_name(const void *a, const void *b)
{
    const ttable *x = *(const ttable *const *)a, *y = *(const ttable *const *)b;
    int c = strcmp(x->db, y->db);
    return c ? c : strcmp(x->name, y->name);
}

/* The selected tables of the definitions read, sorted, as w2l__mysrc_table. */
static w2l_rc collect(w2l__mysrc *s, w2l_error *err)
{
    mysql_source *ms = s->ms;
    size_t nt = 0, nc = 0, np = 0;
    const ttable **sel = w2l__calloc(ms->defs.n ? ms->defs.n : 1, sizeof *sel);
    W2L_NOMEM_IF(!sel, err);
    for (size_t i = 0; i < ms->defs.n; i++) {
        const ttable *t = &ms->defs.tab[i];
        if (!w2l__ms_table_selected(ms, t->db, t->name)) continue;
        sel[nt++] = t;
        nc += t->ncols;
        np += t->npk;
    }
    qsort(sel, nt, sizeof *sel, by_name);
    s->tables = w2l__calloc(nt ? nt : 1, sizeof *s->tables);
    s->cols = w2l__calloc(nc ? nc : 1, sizeof *s->cols);
    s->pks = w2l__calloc(np ? np : 1, sizeof *s->pks);
    if (!s->tables || !s->cols || !s->pks) {
        w2l__free(sel);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    size_t ci = 0, pi = 0;
    for (size_t i = 0; i < nt; i++) {
        const ttable *t = sel[i];
        w2l__mysrc_table *o = &s->tables[i];
        o->db = t->db;
        o->name = t->name;
        o->cols = &s->cols[ci];
        o->ncols = t->ncols;
        for (size_t k = 0; k < t->ncols; k++) {
            s->cols[ci + k].name = t->cols[k].name;
            s->cols[ci + k].type = t->cols[k].type;
            s->cols[ci + k].nullable = t->cols[k].nullable;
        }
        ci += t->ncols;
        o->pk = &s->pks[pi];
        for (size_t k = 0; k < t->npk; k++) {
            long c = w2l__ms_tt_col(t, t->pk[k]);
            if (c < 0) { /* a key column information_schema does not list: no usable key */
                o->npk = 0;
                break;
            }
            s->pks[pi + o->npk++] = (size_t)c;
        }
        pi += t->npk;
    }
    s->ntables = nt;
    w2l__free(sel);
    return W2L_OK;
}

w2l_rc w2l__mysrc_open(const w2l_conf *conf, w2l__mysrc **out, w2l_error *err)
{
    const char *uri = NULL;
    if (!conf || w2l_conf_get(conf, "source", &uri, NULL) != W2L_OK || !uri || !*uri)
        return w2l__fail(err, W2L_CONFIG, "no source (--source mysql://...)");
    if (strncmp(uri, "mysql://", 8) != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "the source must be a mysql:// URI (verify compares a MySQL or "
                         "MariaDB server with the lake)");
    w2l__mysrc *s = w2l__calloc(1, sizeof *s);
    mysql_source *ms = s ? w2l__calloc(1, sizeof *ms) : NULL;
    if (!ms) {
        w2l__free(s);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    s->ms = ms;
    ms->cfg.chunk_rows = SNAP_CHUNK_DEFAULT;
    ms->cfg.params.connect_timeout_s = 10;
    ms->cfg.params.retries = 1;
    ms->cfg.params.what = "mysql source";
    ms->cfg.params.fail_code = W2L_SOURCE;
    int64_t v;
    if (w2l_conf_get_int(conf, "source.tinyint1-as-boolean", &v, NULL) == W2L_OK)
        ms->cfg.topts.tinyint1_as_boolean = v != 0;
    if (w2l_conf_get_int(conf, "source.time-as-string", &v, NULL) == W2L_OK)
        ms->cfg.topts.time_as_string = v != 0;
    if (w2l_conf_get_int(conf, "source.connect-timeout", &v, NULL) == W2L_OK && v > 0)
        ms->cfg.params.connect_timeout_s = (unsigned)((v + 999) / 1000);
    /* verify never replicates: a server id is not needed, so a stand-in satisfies the
     * parser when neither the URI nor the conf gives one */
    w2l_conf *c2 = w2l_conf_dup(conf);
    w2l_rc rc = c2 ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK && w2l_conf_get_int(c2, "source.server-id", &v, NULL) != W2L_OK)
        rc = w2l_conf_set(c2, "source.server-id", "1", err);
    if (rc == W2L_OK) rc = w2l__ms_parse_uri(ms, c2, uri, err);
    w2l_conf_free(c2);
    if (rc == W2L_OK) rc = w2l__my_connect(&ms->cfg.params, &s->conn, err);
    char ver[128];
    int null = 0;
    if (rc == W2L_OK) rc = w2l__my_value(s->conn, "SELECT VERSION()", ver, sizeof ver, &null, err);
    if (rc == W2L_OK) s->mysql = !null && !strstr(ver, "MariaDB");
    if (rc == W2L_OK) rc = w2l__ms_load_definitions(ms, s->conn, err);
    if (rc == W2L_OK) rc = w2l__ms_check_selection(ms, s->conn, err);
    if (rc == W2L_OK) rc = collect(s, err);
    if (rc != W2L_OK) {
        w2l__mysrc_close(s);
        return rc;
    }
    *out = s;
    return W2L_OK;
}

w2l__my *w2l__mysrc_conn(w2l__mysrc *s) { return s->conn; }
const w2l__type_opts *w2l__mysrc_topts(const w2l__mysrc *s) { return &s->ms->cfg.topts; }
int w2l__mysrc_is_mysql(const w2l__mysrc *s) { return s->mysql; }
size_t w2l__mysrc_ntables(const w2l__mysrc *s) { return s->ntables; }
const w2l__mysrc_table *w2l__mysrc_table_at(const w2l__mysrc *s, size_t i)
{
    return i < s->ntables ? &s->tables[i] : NULL;
}
