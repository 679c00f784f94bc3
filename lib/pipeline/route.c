/*
 * Routes (route.h): the route.NAME.* keys compiled, and a per-source-table cache of where
 * each table lands.
 */
#include <stdio.h>
#include <stdlib.h>

#include "route.h"
#include "../conf/conf.h"

/* One source table seen: where it lands. */
typedef struct rcache {
    char *db, *table;
    char *ns, *name; /* the target; NULL when not routed */
    const w2l__route *route;
    uint64_t hash;
    struct rcache *next;
} rcache;

struct w2l__routes {
    w2l__route *r;
    size_t n;
    rcache **slots;
    size_t nslots, count;
};

static void route_free(w2l__route *r)
{
    w2l__free(r->name);
    w2l__free(r->source);
    w2l__free(r->target);
    if (r->source) regfree(&r->re);
}

void w2l__routes_free(w2l__routes *rs)
{
    if (!rs) return;
    for (size_t i = 0; i < rs->n; i++) route_free(&rs->r[i]);
    w2l__free(rs->r);
    for (size_t i = 0; i < rs->nslots; i++)
        for (rcache *c = rs->slots[i], *next; c; c = next) {
            next = c->next;
            w2l__free(c->db);
            w2l__free(c->table);
            w2l__free(c->ns);
            w2l__free(c);
        }
    w2l__free(rs->slots);
    w2l__free(rs);
}

/* ---------------------------------------------------------------- configuration ------ */

typedef struct names {
    char **v;
    size_t n;
    int nomem;
} names;

/* Collects the NAME of every route.NAME.PROPERTY key. */
static int collect(void *ctx, const char *key, const char *value)
{
    (void)value;
    names *ns = ctx;
    if (strncmp(key, "route.", 6) != 0) return 0;
    const char *name = key + 6, *dot = strchr(name, '.');
    if (!dot || dot == name) return 0;
    size_t len = (size_t)(dot - name);
    for (size_t i = 0; i < ns->n; i++)
        if (strlen(ns->v[i]) == len && !strncmp(ns->v[i], name, len)) return 0;
    char **v = w2l__realloc(ns->v, (ns->n + 1) * sizeof *v);
    char *s = v ? w2l__strndup(name, len) : NULL;
    if (v) ns->v = v;
    if (!s) {
        ns->nomem = 1;
        return 1;
    }
    ns->v[ns->n++] = s;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The group numbers a template uses are within the expression's. */
static w2l_rc check_template(const w2l__route *r, size_t ngroups, w2l_error *err)
{
    const char *t = r->target;
    int dots = 0;
    for (size_t i = 0; t[i]; i++) {
        if (t[i] == '.') dots++;
        if (t[i] != '$') continue;
        if (t[i + 1] == '$') {
            i++;
            continue;
        }
        if (t[i + 1] < '1' || t[i + 1] > '9')
            return w2l__fail(err, W2L_CONFIG,
                             "route.%s.target: '%s': a $ must be followed by a group number 1 "
                             "to 9 or by $",
                             r->name, t);
        if ((size_t)(t[i + 1] - '0') > ngroups)
            return w2l__fail(err, W2L_CONFIG,
                             "route.%s.target: '%s' uses $%c, and route.%s.source has %zu "
                             "group(s)",
                             r->name, t, t[i + 1], r->name, ngroups);
        i++;
    }
    if (!dots)
        return w2l__fail(err, W2L_CONFIG, "route.%s.target: '%s' is not DB.TABLE", r->name, t);
    return W2L_OK;
}

static w2l_rc route_init(const w2l_conf *conf, const char *name, w2l__route *r, w2l_error *err)
{
    char key[300];
    const char *src = NULL, *tgt = NULL, *kws = NULL;
    snprintf(key, sizeof key, "route.%s.source", name);
    w2l_conf_get(conf, key, &src, NULL);
    snprintf(key, sizeof key, "route.%s.target", name);
    w2l_conf_get(conf, key, &tgt, NULL);
    snprintf(key, sizeof key, "route.%s.key-with-source", name);
    w2l_conf_get(conf, key, &kws, NULL);
    if (!src || !*src || !tgt || !*tgt)
        return w2l__fail(err, W2L_CONFIG, "route %s: route.%s.source and route.%s.target are "
                                          "both required",
                         name, name, name);
    r->name = w2l__strdup(name);
    r->target = w2l__strdup(tgt);
    char *anch = w2l__asprintf("^(%s)$", src);
    if (!r->name || !r->target || !anch) {
        w2l__free(anch);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    int bad = regcomp(&r->re, anch, REG_EXTENDED);
    w2l__free(anch);
    if (bad)
        return w2l__fail(err, W2L_CONFIG,
                         "route.%s.source: '%.200s' is not a regular expression (POSIX "
                         "extended, matched against the whole db.table)",
                         name, src);
    r->source = w2l__strdup(src);
    if (!r->source) {
        regfree(&r->re);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    r->key_with_source = !kws || !strcmp(kws, "unset") ? -1 : !strcmp(kws, "true");
    return check_template(r, r->re.re_nsub - 1, err);
}

w2l_rc w2l__routes_new(const w2l_conf *conf, w2l__routes **out, w2l_error *err)
{
    *out = NULL;
    names ns = {0};
    if (conf) w2l_conf_foreach(conf, collect, &ns);
    w2l_rc rc = ns.nomem ? w2l__fail(err, W2L_NOMEM, "out of memory") : W2L_OK;
    w2l__routes *rs = NULL;
    if (rc == W2L_OK && ns.n) {
        qsort(ns.v, ns.n, sizeof *ns.v, by_name);
        rs = w2l__calloc(1, sizeof *rs);
        if (rs) rs->r = w2l__calloc(ns.n, sizeof *rs->r);
        if (!rs || !rs->r) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (size_t i = 0; rc == W2L_OK && i < ns.n; i++) {
            rc = route_init(conf, ns.v[i], &rs->r[i], err);
            rs->n++;
        }
    }
    for (size_t i = 0; i < ns.n; i++) w2l__free(ns.v[i]);
    w2l__free(ns.v);
    if (rc != W2L_OK) {
        w2l__routes_free(rs);
        return rc;
    }
    *out = rs;
    return W2L_OK;
}

/* ---------------------------------------------------------------- mapping ------------ */

/* The target of r for full (which matched with groups m), in fresh memory, or NULL. */
static char *expand(const w2l__route *r, const char *full, const regmatch_t *m)
{
    w2l_buf b = {0};
    w2l_rc rc = W2L_OK;
    for (const char *t = r->target; *t && rc == W2L_OK; t++) {
        if (*t != '$') {
            rc = w2l_buf_append(&b, t, 1, NULL);
            continue;
        }
        t++;
        if (*t == '$') {
            rc = w2l_buf_append(&b, "$", 1, NULL);
            continue;
        }
        const regmatch_t *g = &m[*t - '0' + 1]; /* the anchoring group is 1 */
        if (g->rm_so >= 0 && g->rm_eo > g->rm_so)
            rc = w2l_buf_append(&b, full + g->rm_so, (size_t)(g->rm_eo - g->rm_so), NULL);
    }
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, NULL);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return NULL;
    }
    return b.data ? (char *)b.data : w2l__strdup("");
}

static w2l_rc grow(w2l__routes *rs, w2l_error *err)
{
    size_t n = rs->nslots ? rs->nslots * 2 : 64;
    rcache **s = w2l__calloc(n, sizeof *s);
    W2L_NOMEM_IF(!s, err);
    for (size_t i = 0; i < rs->nslots; i++)
        for (rcache *c = rs->slots[i], *next; c; c = next) {
            next = c->next;
            c->next = s[c->hash & (n - 1)];
            s[c->hash & (n - 1)] = c;
        }
    w2l__free(rs->slots);
    rs->slots = s;
    rs->nslots = n;
    return W2L_OK;
}

/* Where db.table lands, computed. */
static w2l_rc compute(w2l__routes *rs, rcache *c, w2l_error *err)
{
    char *full = w2l__asprintf("%s.%s", c->db, c->table);
    W2L_NOMEM_IF(!full, err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < rs->n; i++) {
        regmatch_t m[11];
        for (size_t k = 0; k < W2L_ARRAY_LEN(m); k++) m[k].rm_so = m[k].rm_eo = -1;
        const w2l__route *r = &rs->r[i];
        if (regexec(&r->re, full, W2L_ARRAY_LEN(m), m, 0) != 0) continue;
        char *t = expand(r, full, m);
        if (!t) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        char *dot = strchr(t, '.');
        if (!dot || dot == t || !dot[1] || strchr(dot + 1, '.')) {
            rc = w2l__fail(err, W2L_CONFIG,
                           "route.%s.target: table %s would land in '%s', which is not DB.TABLE",
                           r->name, full, t);
            w2l__free(t);
            break;
        }
        *dot = '\0';
        c->ns = t;
        c->name = dot + 1;
        c->route = r;
        break;
    }
    w2l__free(full);
    return rc;
}

w2l_rc w2l__routes_map(w2l__routes *rs, const char *db, const char *table, const char **ns,
                       const char **name, const w2l__route **route, w2l_error *err)
{
    *ns = db;
    *name = table;
    *route = NULL;
    if (!rs || !db || !table) return W2L_OK;
    uint64_t h = w2l__hash64(table, strlen(table), w2l__hash64(db, strlen(db) + 1, 0));
    rcache *c = rs->nslots ? rs->slots[h & (rs->nslots - 1)] : NULL;
    for (; c; c = c->next)
        if (c->hash == h && !strcmp(c->db, db) && !strcmp(c->table, table)) break;
    if (!c) {
        if (rs->count >= rs->nslots / 4 * 3) W2L_TRY(grow(rs, err));
        c = w2l__calloc(1, sizeof *c);
        W2L_NOMEM_IF(!c, err);
        c->db = w2l__strdup(db);
        c->table = w2l__strdup(table);
        c->hash = h;
        w2l_rc rc = c->db && c->table ? compute(rs, c, err)
                                      : w2l__fail(err, W2L_NOMEM, "out of memory");
        if (rc != W2L_OK) {
            w2l__free(c->db);
            w2l__free(c->table);
            w2l__free(c);
            return rc;
        }
        c->next = rs->slots[h & (rs->nslots - 1)];
        rs->slots[h & (rs->nslots - 1)] = c;
        rs->count++;
    }
    if (c->route) {
        *ns = c->ns;
        *name = c->name;
        *route = c->route;
    }
    return W2L_OK;
}
