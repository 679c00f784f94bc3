/*
 * canal-json flat messages (cdc_int.h). Each data message describes its table with
 * `mysqlType` (parsed by the DDL module's type map, ENUM/SET members kept with the shape
 * for canal's index and bitmask values) and `pkNames`; values are strings (cdc_value.c).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"

/* ---- canal-json ---- */

/* Whether the message's names, MySQL types and key are those of the table's current shape:
 * its signature (below) compared piece by piece, without building it. */
static int sig_part(const char **s, const char *e, const char *part)
{
    if (!part) return 0;
    size_t n = strlen(part) + 1;
    if ((size_t)(e - *s) < n || memcmp(*s, part, n)) return 0;
    *s += n;
    return 1;
}

static int same_shape(const table *t, const w2l__json *types, const w2l__json *pks)
{
    if (!t->cur.schema || !t->cur.sig) return 0;
    const char *s = t->cur.sig, *e = s + t->cur.siglen;
    for (w2l__json *m = w2l__json_first(types); m; m = w2l__json_next(m))
        if (!sig_part(&s, e, w2l__json_key(m)) || !sig_part(&s, e, w2l__json_str(m))) return 0;
    if (s == e || *s++ != '\x1e') return 0;
    for (w2l__json *p = pks ? w2l__json_first(pks) : NULL; p; p = w2l__json_next(p))
        if (!sig_part(&s, e, w2l__json_str(p))) return 0;
    return s == e;
}

static w2l_rc canal_describe(w2l__cdc *d, table *t, const w2l__json *types,
                             const w2l__json *pks, w2l_error *err)
{
    if (!types || w2l__json_type(types) != W2L_JSON_OBJECT)
        return w2l__cdc_missing(d, "mysqlType", err);
    if (same_shape(t, types, pks)) return W2L_OK; /* the common case: no type parsing */
    /* the signature of a canal shape is its raw text (names, MySQL types, key) */
    d->sig.len = 0;
    for (w2l__json *m = w2l__json_first(types); m; m = w2l__json_next(m)) {
        const char *tt = w2l__json_str(m), *k = w2l__json_key(m);
        if (!tt) return w2l__cdc_missing(d, "mysqlType", err);
        W2L_TRY(w2l_buf_append(&d->sig, k, strlen(k) + 1, err));
        W2L_TRY(w2l_buf_append(&d->sig, tt, strlen(tt) + 1, err));
    }
    W2L_TRY(w2l_buf_append(&d->sig, "\x1e", 1, err));
    for (w2l__json *p = pks ? w2l__json_first(pks) : NULL; p; p = w2l__json_next(p)) {
        const char *k = w2l__json_str(p);
        if (!k) return w2l__cdc_missing(d, "pkNames", err);
        W2L_TRY(w2l_buf_append(&d->sig, k, strlen(k) + 1, err));
    }
    if (t->cur.schema && t->cur.siglen == d->sig.len &&
        memcmp(t->cur.sig, d->sig.data, d->sig.len) == 0)
        return W2L_OK;
    w2l__cdc_describe_reset(d);
    for (w2l__json *m = w2l__json_first(types); m; m = w2l__json_next(m)) {
        const char *tt = w2l__json_str(m);
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(w2l__cdc_mysql_type(d, t->db, t->name, w2l__json_key(m), tt, &ty, &info, err));
        W2L_TRY(w2l__cdc_col_add(d, w2l__json_key(m), ty, w2l__cdc_mysql_cv(&info, ty), 0, err));
        W2L_TRY(w2l__cdc_col_info(d, &info, ty, err)); /* ENUM/SET members, DECIMAL(p > 38) scale */
    }
    for (w2l__json *p = pks ? w2l__json_first(pks) : NULL; p; p = w2l__json_next(p))
        W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p), err));
    return w2l__cdc_describe_commit(d, t, 0, 1, err);
}

/* A member the parser kept as text (w2l__json_parse_raw) as a tree of its own, kept with
 * the message; others as they are. */
static w2l_rc canal_tree(w2l__cdc *d, const w2l__json *j, const w2l__json **out, w2l_error *err)
{
    size_t n;
    const char *raw = w2l__json_raw(j, &n);
    *out = j;
    if (!raw) return W2L_OK;
    w2l__json *tree;
    W2L_TRY(w2l__json_parse(raw, n, &tree, err)); /* checked already: only W2L_NOMEM */
    W2L_TRY(w2l__cdc_keep_tree(d, tree, err));
    *out = tree;
    return W2L_OK;
}

size_t w2l__cdc_canal_known(void *dv, size_t i, const char *p, size_t avail)
{
    const w2l__cdc *d = dv;
    for (size_t k = 0; i < 2 && k < W2L_ARRAY_LEN(d->known[i]) && d->known[i][k].text; k++)
        if (d->known[i][k].len <= avail && !memcmp(d->known[i][k].text, p, d->known[i][k].len))
            return d->known[i][k].len;
    return 0;
}

/* Makes text (checked JSON) the newest known text of member i. */
static w2l_rc known_put(w2l__cdc *d, size_t i, const char *text, size_t len, w2l_error *err)
{
    size_t n = W2L_ARRAY_LEN(d->known[i]), k = 0;
    if (d->known[i][0].text && d->known[i][0].len == len && !memcmp(d->known[i][0].text, text, len))
        return W2L_OK;
    while (k < n - 1 && d->known[i][k].text &&
           (d->known[i][k].len != len || memcmp(d->known[i][k].text, text, len)))
        k++;
    char *keep = d->known[i][k].text;
    if (!keep || d->known[i][k].len != len || memcmp(keep, text, len)) { /* new: the oldest goes */
        keep = w2l__malloc(len ? len : 1);
        W2L_NOMEM_IF(!keep, err);
        memcpy(keep, text, len);
        w2l__free(d->known[i][k].text);
    }
    memmove(&d->known[i][1], &d->known[i][0], k * sizeof d->known[i][0]);
    d->known[i][0].text = keep;
    d->known[i][0].len = len;
    return W2L_OK;
}

/* Makes the message's mysqlType and pkNames the table's shape. When their text is that of
 * a message the current shape was made or found to be, nothing is read (nearly every
 * message); else they are parsed and described, and their text kept with the shape. */
static w2l_rc canal_shape(w2l__cdc *d, table *t, const w2l__json *types, const w2l__json *pks,
                          w2l_error *err)
{
    size_t tl = 0, pl = 0;
    const char *traw = w2l__json_raw(types, &tl), *praw = w2l__json_raw(pks, &pl);
    if (traw) W2L_TRY(known_put(d, 0, traw, tl, err));
    if (praw) W2L_TRY(known_put(d, 1, praw, pl, err));
    if (traw && praw && t->cur.schema && t->cur.canal_raw && t->cur.canal_rawlen == tl + 1 + pl &&
        !memcmp(t->cur.canal_raw, traw, tl) && t->cur.canal_raw[tl] == '\x1e' &&
        !memcmp(t->cur.canal_raw + tl + 1, praw, pl))
        return W2L_OK;
    const w2l__json *ty, *pk;
    W2L_TRY(canal_tree(d, types, &ty, err));
    W2L_TRY(canal_tree(d, pks, &pk, err));
    W2L_TRY(canal_describe(d, t, ty, pk, err));
    if (!traw || !praw) return W2L_OK;
    char *keep = w2l__malloc(tl + 1 + pl);
    W2L_NOMEM_IF(!keep, err);
    memcpy(keep, traw, tl);
    keep[tl] = '\x1e';
    memcpy(keep + tl + 1, praw, pl);
    w2l__free(t->cur.canal_raw);
    t->cur.canal_raw = keep;
    t->cur.canal_rawlen = tl + 1 + pl;
    t->cur.canal_tl = tl;
    return W2L_OK;
}

/* The members a canal message is read by, found in one walk over it (the first of
 * duplicate names, as w2l__json_get). */
typedef struct canal_msg {
    const w2l__json *database, *table, *type, *isddl, *es, *ts, *data, *mysqltype, *pknames,
        *old, *sql;
} canal_msg;

static void canal_member(const w2l__json **slot, const w2l__json *m)
{
    if (!*slot) *slot = m;
}

static void canal_members(const w2l__json *msg, canal_msg *cm)
{
    memset(cm, 0, sizeof *cm);
    for (const w2l__json *m = w2l__json_first(msg); m; m = w2l__json_next(m)) {
        const char *k = w2l__json_key(m);
        switch (k[0]) {
        case 'd':
            if (!strcmp(k, "data")) canal_member(&cm->data, m);
            else if (!strcmp(k, "database")) canal_member(&cm->database, m);
            break;
        case 'e':
            if (!strcmp(k, "es")) canal_member(&cm->es, m);
            break;
        case 'i':
            if (!strcmp(k, "isDdl")) canal_member(&cm->isddl, m);
            break;
        case 'm':
            if (!strcmp(k, "mysqlType")) canal_member(&cm->mysqltype, m);
            break;
        case 'o':
            if (!strcmp(k, "old")) canal_member(&cm->old, m);
            break;
        case 'p':
            if (!strcmp(k, "pkNames")) canal_member(&cm->pknames, m);
            break;
        case 's':
            if (!strcmp(k, "sql")) canal_member(&cm->sql, m);
            break;
        case 't':
            if (!strcmp(k, "table")) canal_member(&cm->table, m);
            else if (!strcmp(k, "type")) canal_member(&cm->type, m);
            else if (!strcmp(k, "ts")) canal_member(&cm->ts, m);
            break;
        }
    }
}

static int64_t canal_ms(const w2l__json *j)
{
    int64_t v = 0;
    return j && w2l__json_int64(j, &v) == 0 ? v : 0;
}

w2l_rc w2l__cdc_canal_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    canal_msg cm;
    canal_members(msg, &cm);
    const char *db = w2l__json_str(cm.database), *tn = w2l__json_str(cm.table),
               *type = w2l__json_str(cm.type);
    int isddl = 0;
    if (cm.isddl && w2l__json_bool(cm.isddl, &isddl)) return w2l__cdc_missing(d, "isDdl", err);
    int64_t ts = canal_ms(cm.es);
    if (!ts) ts = canal_ms(cm.ts);
    if (!type) return w2l__cdc_missing(d, "type", err);
    if (!db) return w2l__cdc_missing(d, "database", err);
    if (isddl) {
        const char *sql = w2l__json_str(cm.sql);
        if (!sql || !*sql) return w2l__cdc_missing(d, "sql", err);
        return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err);
    }
    w2l_op op;
    if (!strcmp(type, "INSERT")) op = W2L_OP_INSERT;
    else if (!strcmp(type, "UPDATE")) op = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(type, "DELETE")) op = W2L_OP_DELETE;
    else {
        const char *sql = w2l__json_str(cm.sql);
        if (sql && *sql)
            return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err); /* a query canal did not flag */
        return w2l__fail(err, W2L_SOURCE, "%s: unknown type \"%s\"", d->what, type);
    }
    if (!tn || !*tn) return w2l__cdc_missing(d, "table", err);
    const w2l__json *data = cm.data;
    if (!data || w2l__json_type(data) != W2L_JSON_ARRAY) return w2l__cdc_missing(d, "data", err);
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    /* canal messages describe themselves; an update or delete of a table that neither
     * this message nor an earlier one describes names the table */
    if (op != W2L_OP_INSERT && !t->cur.schema && w2l__cdc_null(cm.mysqltype))
        return w2l__cdc_never_described(d, t, err);
    W2L_TRY(canal_shape(d, t, cm.mysqltype, cm.pknames, err));
    const w2l__json *old = cm.old;
    const w2l__json *o = op == W2L_OP_UPDATE_AFTER && old && w2l__json_type(old) == W2L_JSON_ARRAY
                             ? w2l__json_first(old) : NULL;
    if (op == W2L_OP_UPDATE_AFTER && w2l__json_size(old) != w2l__json_size(data))
        return w2l__cdc_missing(d, "old", err);
    for (w2l__json *r = w2l__json_first(data); r; r = w2l__json_next(r)) {
        if (op == W2L_OP_UPDATE_AFTER) {
            W2L_TRY(w2l__cdc_add_update(d, t, r, o, ts, err));
            o = w2l__json_next(o);
            continue;
        }
        W2L_TRY(w2l__cdc_add_change(d, t, op, r, NULL, ts, err));
    }
    return W2L_OK;
}
