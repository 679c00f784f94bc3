/*
 * The "mysql" source's tracked column definitions (information_schema at start, then every
 * DDL statement) and the schemas built from them and each TABLE_MAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "mysql_source_int.h"

/* ---- tracked definitions ---- */

void w2l__ms_ttable_clear(ttable *t)
{
    w2l__free(t->db);
    w2l__free(t->name);
    for (size_t i = 0; i < t->ncols; i++) {
        w2l__free(t->cols[i].name);
        w2l__free(t->cols[i].type);
    }
    w2l__free(t->cols);
    w2l__ms_free_strv(t->pk, t->npk);
    w2l_schema_unref(t->schema);
    memset(t, 0, sizeof *t);
}

static ttable *tt_find(mysql_source *ms, const char *db, const char *name)
{
    for (size_t i = 0; i < ms->defs.n; i++)
        if (!strcmp(ms->defs.tab[i].db, db) && !strcmp(ms->defs.tab[i].name, name))
            return &ms->defs.tab[i];
    return NULL;
}

ttable *w2l__ms_tt_find(mysql_source *ms, const char *db, const char *name)
{
    return tt_find(ms, db, name);
}

static ttable *tt_get(mysql_source *ms, const char *db, const char *name, w2l_error *err)
{
    ttable *t = tt_find(ms, db, name);
    if (t) return t;
    if (ms->defs.n == ms->defs.cap) {
        size_t nc = ms->defs.cap ? ms->defs.cap * 2 : 16;
        ttable *n = w2l__realloc(ms->defs.tab, nc * sizeof *n);
        if (!n) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        ms->defs.tab = n;
        ms->defs.cap = nc;
    }
    t = &ms->defs.tab[ms->defs.n];
    memset(t, 0, sizeof *t);
    t->db = w2l__strdup(db);
    t->name = w2l__strdup(name);
    if (!t->db || !t->name) {
        w2l__ms_ttable_clear(t);
        w2l__fail(err, W2L_NOMEM, "out of memory");
        return NULL;
    }
    ms->defs.n++;
    return t;
}

void w2l__ms_tt_remove(mysql_source *ms, ttable *t)
{
    size_t i = (size_t)(t - ms->defs.tab);
    w2l__ms_ttable_clear(t);
    ms->defs.tab[i] = ms->defs.tab[--ms->defs.n];
}

static w2l_rc tcol_set(tcol *c, const char *name, const char *type, int nullable, w2l_error *err)
{
    char *n = w2l__strdup(name), *t = w2l__strdup(type);
    if (!n || !t) {
        w2l__free(n);
        w2l__free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__free(c->name);
    w2l__free(c->type);
    c->name = n;
    c->type = t;
    c->nullable = nullable;
    return W2L_OK;
}

static w2l_rc tt_add_col(ttable *t, const char *name, const char *type, int nullable,
                         w2l_error *err)
{
    tcol *n = w2l__realloc(t->cols, (t->ncols + 1) * sizeof *n);
    W2L_NOMEM_IF(!n, err);
    t->cols = n;
    memset(&t->cols[t->ncols], 0, sizeof(tcol));
    W2L_TRY(tcol_set(&t->cols[t->ncols], name, type, nullable, err));
    t->ncols++;
    return W2L_OK;
}

long w2l__ms_tt_col(const ttable *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcasecmp(t->cols[i].name, name)) return (long)i;
    return -1;
}

/* Moves column i to where FIRST / AFTER x puts it (as MySQL does; an unknown x: kept). */
static void tt_place(ttable *t, size_t i, int position, const char *after)
{
    if (position == W2L_DDL_POS_NONE) return;
    tcol c = t->cols[i];
    memmove(&t->cols[i], &t->cols[i + 1], (t->ncols - i - 1) * sizeof *t->cols);
    t->ncols--;
    long at = 0;
    if (position == W2L_DDL_POS_AFTER) {
        long a = after ? w2l__ms_tt_col(t, after) : -1;
        at = a >= 0 ? a + 1 : (long)i;
    }
    memmove(&t->cols[at + 1], &t->cols[at], (t->ncols - (size_t)at) * sizeof *t->cols);
    t->cols[at] = c;
    t->ncols++;
}

/* Reads the definitions of every selected table from information_schema. */
w2l_rc w2l__ms_load_definitions(mysql_source *ms, w2l__my *c, w2l_error *err)
{
    w2l__my_res *r;
    W2L_TRY(w2l__my_query(
        c,
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE "
        "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
        "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
        "WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA NOT IN "
        "('mysql','information_schema','performance_schema','sys') "
        "ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION",
        0, &r, err));
    char **row;
    unsigned long *len;
    int k;
    w2l_rc rc = W2L_OK;
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        if (!w2l__ms_db_selected(ms, row[0])) continue;
        ttable *t = tt_get(ms, row[0], row[1], err);
        if (!t) {
            rc = err->code;
            break;
        }
        if ((rc = tt_add_col(t, row[2], row[3], !strcmp(row[4], "YES"), err)) != W2L_OK) break;
    }
    if (k < 0) rc = err->code;
    w2l__my_res_free(r);
    W2L_TRY(rc);
    W2L_TRY(w2l__my_query(
        c,
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
        "WHERE CONSTRAINT_NAME = 'PRIMARY' AND TABLE_SCHEMA NOT IN "
        "('mysql','information_schema','performance_schema','sys') "
        "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
        0, &r, err));
    while ((k = w2l__my_row(r, &row, &len, err)) > 0) {
        ttable *t = tt_find(ms, row[0], row[1]);
        if (!t) continue;
        char **n = w2l__realloc(t->pk, (t->npk + 1) * sizeof *n);
        char *s = w2l__strdup(row[2]);
        if (!n || !s) {
            if (n) t->pk = n;
            w2l__free(s);
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        t->pk = n;
        t->pk[t->npk++] = s;
    }
    if (k < 0) rc = err->code;
    w2l__my_res_free(r);
    return rc;
}

/* A key column renamed (to a new name) or dropped (to == NULL): the key follows, as the
 * server's does. */
static w2l_rc tt_pk_follow(ttable *t, const char *from, const char *to, w2l_error *err)
{
    for (size_t k = 0; k < t->npk; k++) {
        if (strcasecmp(t->pk[k], from)) continue;
        if (to) {
            char *s = w2l__strdup(to);
            W2L_NOMEM_IF(!s, err);
            w2l__free(t->pk[k]);
            t->pk[k] = s;
        } else {
            w2l__free(t->pk[k]);
            memmove(&t->pk[k], &t->pk[k + 1], (t->npk - k - 1) * sizeof *t->pk);
            t->npk--;
        }
        break;
    }
    return W2L_OK;
}

/* Appends the key columns to t's (empty) primary key. */
static w2l_rc tt_set_pk(ttable *t, const char *const *keys, size_t n, w2l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char **nv = w2l__realloc(t->pk, (t->npk + 1) * sizeof *nv);
        W2L_NOMEM_IF(!nv, err);
        t->pk = nv;
        t->pk[t->npk] = w2l__strdup(keys[i]);
        W2L_NOMEM_IF(!t->pk[t->npk], err);
        t->npk++;
    }
    return W2L_OK;
}

static w2l_rc tt_from_create(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err)
{
    ttable *old = tt_find(ms, st->table.db, st->table.name);
    if (old) w2l__ms_tt_remove(ms, old);
    ttable *t = tt_get(ms, st->table.db, st->table.name, err);
    if (!t) return err->code;
    for (size_t i = 0; i < st->ncols; i++)
        W2L_TRY(tt_add_col(t, st->cols[i].name, st->cols[i].type_text, !st->cols[i].not_null, err));
    return tt_set_pk(t, st->pk, st->npk, err);
}

static w2l_rc tt_rename(mysql_source *ms, const w2l__ddl_name *from, const w2l__ddl_name *to,
                        w2l_error *err)
{
    if (!from->db || !to->db) return W2L_OK;
    ttable *dst = tt_find(ms, to->db, to->name);
    if (dst) w2l__ms_tt_remove(ms, dst);
    ttable *t = tt_find(ms, from->db, from->name);
    if (!t) return W2L_OK;
    char *d = w2l__strdup(to->db), *n = w2l__strdup(to->name);
    if (!d || !n) {
        w2l__free(d);
        w2l__free(n);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    w2l__free(t->db);
    w2l__free(t->name);
    t->db = d;
    t->name = n;
    w2l_schema_unref(t->schema);
    t->schema = NULL;
    return W2L_OK;
}

/* Applies one statement to the tracked definitions (best effort: the TABLE_MAP decides). */
w2l_rc w2l__ms_tt_apply(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err)
{
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE:
        if (st->table.db) return tt_from_create(ms, st, err);
        return W2L_OK;
    case W2L_DDL_CREATE_TABLE_LIKE: {
        ttable *src = st->like.db ? tt_find(ms, st->like.db, st->like.name) : NULL;
        if (!src || !st->table.db) return W2L_OK;
        size_t si = (size_t)(src - ms->defs.tab);
        ttable *old = tt_find(ms, st->table.db, st->table.name);
        if (old) {
            w2l__ms_tt_remove(ms, old);
            src = NULL;
            for (size_t i = 0; i < ms->defs.n; i++)
                if (!strcmp(ms->defs.tab[i].db, st->like.db) &&
                    !strcmp(ms->defs.tab[i].name, st->like.name))
                    src = &ms->defs.tab[i];
            if (!src) return W2L_OK;
            si = (size_t)(src - ms->defs.tab);
        }
        ttable *t = tt_get(ms, st->table.db, st->table.name, err);
        if (!t) return err->code;
        src = &ms->defs.tab[si];
        for (size_t i = 0; i < src->ncols; i++)
            W2L_TRY(
                tt_add_col(t, src->cols[i].name, src->cols[i].type, src->cols[i].nullable, err));
        return W2L_OK;
    }
    case W2L_DDL_DROP_TABLE:
        for (size_t i = 0; i < st->ntables; i++) {
            ttable *t = st->tables[i].db ? tt_find(ms, st->tables[i].db, st->tables[i].name) : NULL;
            if (t) w2l__ms_tt_remove(ms, t);
        }
        return W2L_OK;
    case W2L_DDL_RENAME_TABLE:
        for (size_t i = 0; i < st->nrenames; i++)
            W2L_TRY(tt_rename(ms, &st->renames[i].from, &st->renames[i].to, err));
        return W2L_OK;
    case W2L_DDL_DROP_DATABASE:
        for (size_t i = ms->defs.n; i-- > 0;)
            if (st->database && !strcmp(ms->defs.tab[i].db, st->database))
                w2l__ms_tt_remove(ms, &ms->defs.tab[i]);
        return W2L_OK;
    case W2L_DDL_ALTER_TABLE: {
        ttable *t = st->table.db ? tt_find(ms, st->table.db, st->table.name) : NULL;
        if (!t) return W2L_OK;
        w2l_schema_unref(t->schema);
        t->schema = NULL;
        for (size_t i = 0; i < st->nalters; i++) {
            const w2l__ddl_alter *a = &st->alters[i];
            long ci = a->name ? w2l__ms_tt_col(t, a->name) : -1;
            switch (a->kind) {
            case W2L_ALTER_ADD_COLUMN:
                if (w2l__ms_tt_col(t, a->col.name) < 0) {
                    W2L_TRY(tt_add_col(t, a->col.name, a->col.type_text, !a->col.not_null, err));
                    tt_place(t, t->ncols - 1, a->position, a->after);
                }
                break;
            case W2L_ALTER_DROP_COLUMN:
                if (ci >= 0) {
                    W2L_TRY(tt_pk_follow(t, t->cols[ci].name, NULL, err));
                    w2l__free(t->cols[ci].name);
                    w2l__free(t->cols[ci].type);
                    memmove(&t->cols[ci], &t->cols[ci + 1],
                            (t->ncols - (size_t)ci - 1) * sizeof *t->cols);
                    t->ncols--;
                }
                break;
            case W2L_ALTER_CHANGE_COLUMN:
            case W2L_ALTER_MODIFY_COLUMN:
                if (ci >= 0) {
                    W2L_TRY(tt_pk_follow(t, t->cols[ci].name, a->col.name, err));
                    W2L_TRY(tcol_set(&t->cols[ci], a->col.name, a->col.type_text, !a->col.not_null,
                                     err));
                    tt_place(t, (size_t)ci, a->position, a->after);
                }
                break;
            case W2L_ALTER_RENAME_COLUMN:
                if (ci >= 0 && a->new_name) {
                    W2L_TRY(tt_pk_follow(t, t->cols[ci].name, a->new_name, err));
                    W2L_TRY(tcol_set(&t->cols[ci], a->new_name, t->cols[ci].type,
                                     t->cols[ci].nullable, err));
                }
                break;
            case W2L_ALTER_DROP_PRIMARY_KEY:
                w2l__ms_free_strv(t->pk, t->npk);
                t->pk = NULL;
                t->npk = 0;
                break;
            case W2L_ALTER_ADD_PRIMARY_KEY:
                w2l__ms_free_strv(t->pk, t->npk);
                t->pk = NULL;
                t->npk = 0;
                W2L_TRY(tt_set_pk(t, a->keys, a->nkeys, err));
                break;
            case W2L_ALTER_RENAME_TABLE: {
                w2l__ddl_name from = st->table;
                W2L_TRY(tt_rename(ms, &from, &a->new_table, err));
                t = a->new_table.db ? tt_find(ms, a->new_table.db, a->new_table.name) : NULL;
                if (!t) return W2L_OK;
                break;
            }
            default: break;
            }
        }
        return W2L_OK;
    }
    default: return W2L_OK;
    }
}

/* ---- schemas ---- */

static int same_schema(const w2l_schema *a, const w2l_schema *b)
{
    size_t n = w2l_schema_field_count(a);
    if (n != w2l_schema_field_count(b)) return 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_field *x = w2l_schema_field(a, i), *y = w2l_schema_field(b, i);
        if (strcmp(x->name, y->name) || x->required != y->required || x->type.id != y->type.id ||
            x->type.precision != y->type.precision || x->type.scale != y->type.scale)
            return 0;
    }
    size_t na, nb;
    const int32_t *ia = w2l_schema_identifier(a, &na), *ib = w2l_schema_identifier(b, &nb);
    return na == nb && (na == 0 || !memcmp(ia, ib, na * sizeof *ia));
}

/* Builds the source schema of a table: fields 1..n in column order, identifier = pk. A
 * schema equal to the table's last one is returned instead (one object per version). */
w2l_rc w2l__ms_build_schema(ttable *t, const char *const *names, const w2l_type *types,
                            const int *nullable, size_t n, const size_t *pk, size_t npk,
                            w2l_schema **out, w2l_error *err)
{
    w2l_schema *s = w2l_schema_new(0);
    W2L_NOMEM_IF(!s, err);
    int32_t ids[64];
    size_t nid = 0;
    int key_ok = npk > 0 && npk <= 64;
    for (size_t k = 0; k < npk && key_ok; k++) {
        w2l_type_id id = types[pk[k]].id;
        if (id == W2L_TYPE_FLOAT || id == W2L_TYPE_DOUBLE) key_ok = 0;
    }
    for (size_t i = 0; i < n; i++) {
        int req = !nullable[i];
        for (size_t k = 0; k < npk && key_ok; k++)
            if (pk[k] == i) req = 1;
        w2l_rc rc = w2l_schema_add_field(s, (int32_t)i + 1, names[i], types[i], req, err);
        if (rc != W2L_OK) {
            w2l_schema_unref(s);
            return rc;
        }
    }
    if (key_ok) {
        for (size_t k = 0; k < npk; k++) ids[nid++] = (int32_t)pk[k] + 1;
        w2l_rc rc = w2l_schema_set_identifier(s, ids, nid, err);
        if (rc != W2L_OK) {
            w2l_schema_unref(s);
            return rc;
        }
    }
    if (t && t->schema && same_schema(t->schema, s)) {
        w2l_schema_unref(s);
        *out = w2l_schema_ref(t->schema);
        return W2L_OK;
    }
    if (t) {
        w2l_schema_unref(t->schema);
        t->schema = w2l_schema_ref(s);
    }
    *out = s;
    return W2L_OK;
}

static void tmuser_free(void *p)
{
    tmuser *u = p;
    if (!u) return;
    w2l_schema_unref(u->schema);
    w2l__free(u->vals);
    w2l__free(u->present);
    w2l__free(u->coerced);
    w2l__free(u);
}

/* Decides the Iceberg types and schema of a TABLE_MAP's columns. */
w2l_rc w2l__ms_prepare_tmap(mysql_source *ms, w2l__bl_tmap *tm, w2l_error *err)
{
    tmuser *u = w2l__calloc(1, sizeof *u);
    W2L_NOMEM_IF(!u, err);
    tm->user = u;
    tm->user_free = tmuser_free;
    u->selected = w2l__ms_table_selected(ms, tm->db, tm->table);
    if (!u->selected) return W2L_OK;
    if (!tm->has_names)
        return w2l__fail(err, W2L_SOURCE,
                         "mysql source %s: the binlog has no column names for %s.%s: set "
                         "binlog_row_metadata=FULL on the server",
                         w2l__my_name(ms->conn), tm->db, tm->table);
    size_t n = tm->ncols;
    u->vals = w2l__calloc(n ? n : 1, sizeof *u->vals);
    u->present = w2l__calloc((n + 7) / 8 + 1, 1);
    u->coerced = w2l__calloc((n + 7) / 8 + 1, 1);
    const char **names = w2l__calloc(n ? n : 1, sizeof *names);
    w2l_type *types = w2l__calloc(n ? n : 1, sizeof *types);
    int *nullable = w2l__calloc(n ? n : 1, sizeof *nullable);
    w2l_rc rc = W2L_OK;
    if (!u->vals || !u->present || !u->coerced || !names || !types || !nullable)
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    ttable *t = rc == W2L_OK ? tt_find(ms, tm->db, tm->table) : NULL;
    if (t &&
        t->ncols != n) /* e.g. a restart before an ADD COLUMN: the catalog is ahead of the binlog */
        w2l__log(
            W2L_LOG_DEBUG,
            "mysql source: %s.%s: tracked definition has %zu columns, the binlog's table map %zu; "
            "matching columns by name",
            tm->db, tm->table, t->ncols, n);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        w2l__bl_col *c = &tm->cols[i];
        char tmtext[64];
        w2l__bl_col_type_text(c, tmtext, sizeof tmtext);
        w2l__mysql_type tmt, tr;
        w2l_type it;
        rc = w2l__mysql_type_map_text(tmtext, strlen(tmtext), &ms->cfg.topts, c->name, NULL, &it,
                                      &tmt, err);
        if (rc != W2L_OK) break;
        long ti =
            t ? (i < t->ncols && !strcasecmp(t->cols[i].name, c->name) ? (long)i
                                                                       : w2l__ms_tt_col(t, c->name))
              : -1;
        if (ti >= 0) {
            /* the tracked type of the column of that name, when it is the same kind of
             * column as the map says (the map decides otherwise) */
            w2l_type it2;
            w2l_error e2;
            if (w2l__mysql_type_map_text(t->cols[ti].type, strlen(t->cols[ti].type), &ms->cfg.topts,
                                         c->name, NULL, &it2, &tr, &e2) == W2L_OK) {
                int same =
                    tr.cls == tmt.cls || (tr.cls == W2L_MYSQL_JSON && tmt.cls == W2L_MYSQL_TEXT) ||
                    (tr.cls == W2L_MYSQL_BOOL && tmt.cls == W2L_MYSQL_INT && tmt.int_bytes == 1);
                if (tmt.cls == W2L_MYSQL_INT && tr.cls == W2L_MYSQL_INT)
                    same = tr.int_bytes == tmt.int_bytes && tr.is_unsigned == tmt.is_unsigned;
                if (tmt.cls == W2L_MYSQL_DECIMAL || tmt.cls == W2L_MYSQL_TEXT ||
                    tmt.cls == W2L_MYSQL_BINARY)
                    same = same && it2.id == it.id && it2.precision == it.precision &&
                           it2.scale == it.scale;
                if (same) it = it2;
            }
        }
        c->ice = it;
        names[i] = c->name;
        types[i] = it;
        nullable[i] = c->nullable;
    }
    if (rc == W2L_OK) {
        ttable *owner = t;
        if (!owner) owner = tt_get(ms, tm->db, tm->table, err);
        if (!owner) rc = err->code;
        else
            rc = w2l__ms_build_schema(owner, names, types, nullable, n, tm->pk, tm->npk, &u->schema,
                                      err);
        if (rc != W2L_OK) w2l__error_prefix(err, "%s.%s: ", tm->db, tm->table);
    }
    w2l__free(names);
    w2l__free(types);
    w2l__free(nullable);
    return rc;
}
