/*
 * The "mysql" source's start-time checks: the server's binlog settings (every one that is
 * missing named at once, as a my.cnf snippet and the SET GLOBAL statements of the dynamic
 * ones), and what the selection finds (databases= that are not there or not readable,
 * tables= / include / exclude that match no table). A run that would sync nothing for one
 * of these reasons fails (W2L_SOURCE: exit 1) saying what is there and how to fix it; a
 * database that exists and holds no table yet is fine (its tables come from the binlog).
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "mysql_source_int.h"

/* ---- server settings ---- */

static int is_on(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "ON"));
}

static int is(const char *v, const char *want) { return v && !strcasecmp(v, want); }

/* Appends to buf at *n (bounded). */
static void add(char *buf, size_t size, size_t *n, const char *fmt, const char *a,
                const char *b)
{
    if (*n >= size) return;
    int k = snprintf(buf + *n, size - *n, fmt, a, b);
    if (k > 0) *n += (size_t)k;
}

w2l_rc w2l__ms_settings_check(const w2l__ms_settings *s, const char *server, w2l_error *err)
{
    static const struct {
        const char *name, *want, *cnf; /* cnf: the my.cnf line */
        int dynamic;
    } need[] = {
        {"log_bin", "ON", "log_bin=binlog", 0},
        {"binlog_format", "ROW", "binlog_format=ROW", 1},
        {"binlog_row_image", "FULL", "binlog_row_image=FULL", 1},
        {"binlog_row_metadata", "FULL", "binlog_row_metadata=FULL", 1},
    };
    const char *have[] = {s->log_bin, s->binlog_format, s->row_image, s->row_metadata};
    int bad[4], nbad = 0, restart = 0, ndyn = 0;
    for (int i = 0; i < 4; i++) {
        bad[i] = i == 0 ? !is_on(have[i]) : !is(have[i], need[i].want);
        nbad += bad[i];
        if (bad[i] && !need[i].dynamic) restart = 1;
        if (bad[i] && need[i].dynamic && have[i]) ndyn++;
    }
    if (!nbad) return W2L_OK;
    char probs[200] = "", cnf[160] = "", sets[200] = "";
    size_t np = 0, nc = 0, ns = 0;
    for (int i = 0; i < 4; i++) {
        if (!bad[i]) continue;
        if (!have[i])
            add(probs, sizeof probs, &np, "%s%s is unknown to this server", np ? ", " : "",
                need[i].name);
        else if (i == 0)
            add(probs, sizeof probs, &np, "%s%s is OFF", np ? ", " : "", "log_bin (the binlog)");
        else {
            char t[120];
            snprintf(t, sizeof t, "%s is %.30s (%s needed)", need[i].name, have[i], need[i].want);
            add(probs, sizeof probs, &np, "%s%s", np ? ", " : "", t);
        }
        add(cnf, sizeof cnf, &nc, "%s%s", nc ? " " : "", need[i].cnf);
        if (need[i].dynamic && have[i])
            add(sets, sizeof sets, &ns, "%sSET GLOBAL %s;", ns ? " " : "", need[i].cnf);
    }
    const char *section = s->mysql ? "[mysqld]" : "[mariadbd]";
    if (restart)
        return w2l__fail(err, W2L_SOURCE,
                         "mysql source %s: the server is not set up for binlog CDC: %s; in my.cnf "
                         "under %s: %s, then restart the server (log_bin is not dynamic)%s%s",
                         server, probs, section, cnf, ndyn ? "; the others at once: " : "", sets);
    return w2l__fail(err, W2L_SOURCE,
                     "mysql source %s: the server is not set up for binlog CDC: %s; at once: %s "
                     "and for restarts, in my.cnf under %s: %s",
                     server, probs, sets, section, cnf);
}

/* @@global.NAME into buf; *absent when the server has no such variable (error 1193). */
static w2l_rc read_var(w2l__my *c, const char *name, char *buf, size_t size, int *absent,
                       w2l_error *err)
{
    char q[96];
    int null;
    snprintf(q, sizeof q, "SELECT @@global.%s", name);
    *absent = 0;
    w2l_rc rc = w2l__my_value(c, q, buf, size, &null, err);
    if (rc != W2L_OK && err && err->sys_errno == 1193) {
        w2l_error_clear(err);
        *absent = 1;
        return W2L_OK;
    }
    if (rc == W2L_OK && null) *absent = 1;
    return rc;
}

w2l_rc w2l__ms_check_settings(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    char v[4][64];
    int absent[4];
    static const char *const names[] = {"log_bin", "binlog_format", "binlog_row_image",
                                        "binlog_row_metadata"};
    for (int i = 0; i < 4; i++) W2L_TRY(read_var(c, names[i], v[i], sizeof v[i], &absent[i], err));
    w2l__ms_settings s = {
        .mysql = ms->server.mysql,
        .log_bin = absent[0] ? NULL : v[0],
        .binlog_format = absent[1] ? NULL : v[1],
        .row_image = absent[2] ? NULL : v[2],
        .row_metadata = absent[3] ? NULL : v[3],
    };
    return w2l__ms_settings_check(&s, w2l__my_name(c), err);
}

/* ---- what the selection finds ---- */

typedef struct privs {
    int known;           /* the queries ran */
    char grantee[300];   /* 'user'@'host' */
    int global_select, show_databases, roles;
} privs;

static int is_system_db(const char *db)
{
    return !strcmp(db, "mysql") || !strcmp(db, "information_schema") ||
           !strcmp(db, "performance_schema") || !strcmp(db, "sys");
}

/* The current account and its global privileges (for the message's GRANT); on any error
 * known stays 0 and the message names the URI's user. */
static void read_privs(mysql_source *ms, w2l__my *c, privs *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->grantee, sizeof p->grantee, "'%.100s'@'%%'", ms->cfg.params.user);
    char cu[300];
    int null;
    w2l_error e;
    if (w2l__my_value(c, "SELECT CURRENT_USER()", cu, sizeof cu, &null, &e) != W2L_OK || null)
        return;
    char *at = strrchr(cu, '@');
    if (!at) return;
    *at = '\0';
    snprintf(p->grantee, sizeof p->grantee, "'%.120s'@'%.120s'", cu, at + 1);
    char esc[700], q[900];
    w2l__my_escape(c, esc, p->grantee, strlen(p->grantee));
    snprintf(q, sizeof q,
             "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = '%s'",
             esc);
    w2l__my_res *r;
    if (w2l__my_query(c, q, 0, &r, &e) != W2L_OK) return;
    char **row;
    unsigned long *len;
    int k;
    while ((k = w2l__my_row(r, &row, &len, &e)) > 0) {
        if (row[0] && !strcmp(row[0], "SELECT")) p->global_select = 1;
        if (row[0] && !strcmp(row[0], "SHOW DATABASES")) p->show_databases = 1;
    }
    w2l__my_res_free(r);
    if (k < 0) return;
    p->known = 1;
    /* a role may grant what the account's own rows do not show: then never refuse on them */
    if (!p->global_select &&
        w2l__my_value(c, "SELECT COUNT(ROLE_NAME) FROM information_schema.ENABLED_ROLES", cu,
                      sizeof cu, &null, &e) == W2L_OK &&
        !null && strcmp(cu, "0"))
        p->roles = 1;
}

/* Whether the account holds SELECT on database db (global or at database level). */
static int may_select_db(w2l__my *c, const privs *p, const char *db)
{
    if (!p->known || p->global_select || p->roles) return 1;
    char eg[700], ed[300], q[1400], v[32];
    int null;
    w2l_error e;
    w2l__my_escape(c, eg, p->grantee, strlen(p->grantee));
    w2l__my_escape(c, ed, db, strlen(db) < 128 ? strlen(db) : 128);
    snprintf(q, sizeof q,
             "SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = "
             "'SELECT' AND GRANTEE = '%s' AND '%s' LIKE TABLE_SCHEMA",
             eg, ed);
    if (w2l__my_value(c, q, v, sizeof v, &null, &e) != W2L_OK) return 1;
    return !null && strcmp(v, "0");
}

/* "a, b, c" of the n names v, then ", ... (TOTAL in all)" when total is more; "(none)". */
static void list_names(char *const *v, size_t n, size_t total, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) add(buf, size, &k, "%s%s", i ? ", " : "", v[i]);
    if (total > n && k < size) snprintf(buf + k, size - k, ", ... (%zu in all)", total);
    if (!total) snprintf(buf, size, "(none)");
}

w2l_rc w2l__ms_check_selection(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(c, "SHOW DATABASES", 0, &r, err));
    char **vis = NULL, **row;
    size_t nvis = 0;
    unsigned long *len;
    int k;
    w2l_rc rc = W2L_OK;
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        char **nv = w2l__realloc(vis, (nvis + 1) * sizeof *nv);
        char *d = row[0] ? w2l__strdup(row[0]) : NULL;
        if (!nv || !d) {
            if (nv) vis = nv;
            w2l__free(d);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        vis = nv;
        vis[nvis++] = d;
    }
    if (k < 0) rc = err->code;
    w2l__my_res_free(r);
    /* the visible user databases, for messages */
    char **user = w2l__calloc(nvis ? nvis : 1, sizeof *user);
    size_t nuser = 0;
    if (rc == W2L_OK && !user) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < nvis; i++)
        if (!is_system_db(vis[i])) user[nuser++] = vis[i];
    char dblist[300];
    if (rc == W2L_OK) list_names(user, nuser < 10 ? nuser : 10, nuser, dblist, sizeof dblist);
    const char *who = w2l__my_name(c);
    privs p = {0};
    int have_privs = 0;

    /* 1. every database named is there */
    for (size_t i = 0; rc == W2L_OK && i < ms->cfg.ndbs; i++) {
        const char *db = ms->cfg.dbs[i];
        int found = 0;
        for (size_t j = 0; j < nvis && !found; j++) found = !strcmp(vis[j], db);
        if (found) continue;
        if (!have_privs) read_privs(ms, c, &p), have_privs = 1;
        if (p.known && (p.global_select || p.show_databases))
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: databases= names '%.64s', which is not on the "
                           "server; its databases: %s",
                           who, db, dblist);
        else
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: databases= names '%.64s', which the source user "
                           "cannot see: it is not on the server, or the user may not read it "
                           "(GRANT SELECT ON `%.64s`.* TO %s); databases the user can see: %s",
                           who, db, db, p.grantee, dblist);
    }

    /* 2. something to read at all */
    size_t ntables = ms->defs.n, nsel = 0;
    for (size_t i = 0; i < ms->defs.n; i++)
        if (w2l__ms_table_selected(ms, ms->defs.tab[i].db, ms->defs.tab[i].name)) nsel++;
    if (rc == W2L_OK && !ms->cfg.ndbs && !nuser) {
        if (!have_privs) read_privs(ms, c, &p), have_privs = 1;
        if (p.known && !p.global_select && !p.roles)
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: the source user sees no database but the system "
                           "ones: GRANT SELECT ON *.* TO %s (or on the databases to sync, "
                           "named with databases=)",
                           who, p.grantee);
        else
            w2l__log(W2L_LOG_INFO,
                     "mysql source %s: the server holds no database yet; the tables created "
                     "later are synced from the binlog",
                     who);
    }

    /* 3. tables=, include and exclude match some table when there are tables */
    if (rc == W2L_OK && ntables && !nsel &&
        (ms->cfg.have_regex || ms->cfg.filter.has_include || ms->cfg.filter.has_exclude)) {
        char **names = w2l__calloc(ntables, sizeof *names);
        size_t nn = 0;
        for (size_t i = 0; names && i < ntables && nn < 8; i++) {
            names[nn] = w2l__asprintf("%s.%s", ms->defs.tab[i].db, ms->defs.tab[i].name);
            if (names[nn]) nn++;
        }
        char tl[400];
        list_names(names, nn, ntables, tl, sizeof tl);
        w2l__ms_free_strv(names, nn);
        const char *pat = ms->cfg.have_regex ? ms->cfg.tables_text
                          : ms->cfg.filter.has_include ? ms->cfg.filter.include_text
                                                       : NULL;
        char what[260], hint[200];
        if (ms->cfg.have_regex) snprintf(what, sizeof what, "tables='%.200s'", pat);
        else if (ms->cfg.filter.has_include && ms->cfg.filter.has_exclude)
            snprintf(what, sizeof what, "--include '%.100s' with --exclude '%.100s'", pat,
                     ms->cfg.filter.exclude_text);
        else if (ms->cfg.filter.has_include) snprintf(what, sizeof what, "--include '%.200s'", pat);
        else snprintf(what, sizeof what, "--exclude '%.200s'", ms->cfg.filter.exclude_text);
        if (pat) {
            w2l__tfilter_hint(pat, ms->defs.tab[0].db, hint, sizeof hint);
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: %s matched no table: %s; tables the source user "
                           "can read: %s",
                           who, what, hint, tl);
        } else
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: %s leaves no table to sync: it matches every "
                           "table the source user can read: %s",
                           who, what, tl);
    }

    /* 4. a database named without tables: empty (fine) or not readable */
    for (size_t i = 0; rc == W2L_OK && i < ms->cfg.ndbs; i++) {
        const char *db = ms->cfg.dbs[i];
        int any = 0;
        for (size_t j = 0; j < ms->defs.n && !any; j++) any = !strcmp(ms->defs.tab[j].db, db);
        if (any) continue;
        if (!have_privs) read_privs(ms, c, &p), have_privs = 1;
        if (!may_select_db(c, &p, db))
            rc = w2l__fail(err, W2L_SOURCE,
                           "mysql source %s: database '%.64s' shows no table to the source "
                           "user, which may not read it: GRANT SELECT ON `%.64s`.* TO %s",
                           who, db, db, p.grantee);
        else
            w2l__log(W2L_LOG_INFO,
                     "mysql source %s: database '%s' holds no table yet; the tables created in "
                     "it are synced from the binlog",
                     who, db);
    }
    w2l__free(user);
    w2l__ms_free_strv(vis, nvis);
    return rc;
}
