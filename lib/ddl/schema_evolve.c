/*
 * Schema evolution of Iceberg schemas (w2l-design(7) section 3; Iceberg spec "Schema
 * Evolution"): the schema of a CREATE TABLE, the effect of an ALTER TABLE, and the
 * reconciliation of a schema with a source's own column list.
 *
 * Rules, as Iceberg v2 allows them:
 *   - a new column gets a fresh id (the table's last-column-id + 1, never a retired one)
 *     and is optional: Iceberg v2 has no default values, so a required column cannot be
 *     added (old data files have no value for it). ADD c INT NOT NULL gives an optional c.
 *   - DROP retires the id; RENAME keeps it.
 *   - a type may only be promoted: int->long, float->double, decimal(P,S)->decimal(P2,S)
 *     with P2 >= P; anything else is W2L_SCHEMA naming table, column and both types
 *     (the caller applies ddl.policy). MySQL types that map to the same Iceberg type
 *     (VARCHAR(10) -> VARCHAR(20), INT -> MEDIUMINT UNSIGNED) are no change at all.
 *   - required -> optional is allowed; optional -> required is not (NOT NULL on an
 *     optional column leaves it optional), except for the columns of a new primary key
 *     (ADD PRIMARY KEY, a column defined PRIMARY KEY): MySQL makes them NOT NULL and
 *     refuses the key over NULLs, so every row the lake holds has a value there; Iceberg
 *     calls this an incompatible change, legal when no NULL is stored, and requires it of
 *     identifier fields. A column added by the same ALTER cannot be one (the lake's rows
 *     have no value for it: the server fills it without row events).
 *   - FIRST / AFTER reorder fields (a move keeps the id).
 *   - the primary key is the identifier (its columns required, never float/double).
 *
 * ALTER clauses apply in order. As in MySQL, DROP/CHANGE/MODIFY/RENAME COLUMN name the
 * columns of the table before the ALTER (so "CHANGE a b .., CHANGE b a .." swaps two
 * names), while AFTER and key columns name the columns being built. Column names match
 * exactly, else ASCII case-insensitively (MySQL's column names are case-insensitive).
 */
#include <stdio.h>

#include "../model/model.h"
#include "ddl_int.h"

typedef struct wcol {
    int32_t id;
    const char *name; /* current name */
    const char *orig; /* name before this evolution; NULL for added columns */
    w2l_type type;
    int required;
    int added;
    size_t orig_pos;
} wcol;

typedef struct work {
    w2l__schema_diff *d; /* arena and change list */
    wcol *v;
    size_t n, cap;
    int32_t *pk;
    size_t npk;
    int pk_changed;
    int32_t schema_id;
    const char *table;
    const w2l__evolve_opts *o;
    w2l_error *err;
} work;

static int ieq(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z') y = (unsigned char)(y + 32);
        if (x != y) return 0;
        if (!x) return 1;
    }
}

/* Index of the column named name (orig: the pre-ALTER names), or -1. */
static long find(const work *w, const char *name, int orig)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < w->n; i++) {
            const char *n = orig ? w->v[i].orig : w->v[i].name;
            if (n && (pass ? ieq(n, name) : strcmp(n, name) == 0)) return (long)i;
        }
    return -1;
}

/* Pre-ALTER name first, then a current one (a column added earlier in the statement). */
static long find_ref(const work *w, const char *name)
{
    long i = find(w, name, 1);
    return i >= 0 ? i : find(w, name, 0);
}

static int in_pk(const work *w, int32_t id)
{
    for (size_t i = 0; i < w->npk; i++)
        if (w->pk[i] == id) return 1;
    return 0;
}

static w2l_rc note(work *w, w2l__change_kind kind, const wcol *c, const char *old_name,
                   w2l_type from, w2l_type to)
{
    w2l__schema_diff *d = w->d;
    w2l__schema_change *v = w2l__realloc(d->changes, (d->nchanges + 1) * sizeof *v);
    W2L_NOMEM_IF(!v, w->err);
    d->changes = v;
    w2l__schema_change *ch = &v[d->nchanges++];
    memset(ch, 0, sizeof *ch);
    ch->kind = kind;
    ch->id = c ? c->id : 0;
    ch->name = c ? c->name : NULL;
    ch->old_name = old_name;
    ch->from = from;
    ch->to = to;
    d->changed = 1;
    return W2L_OK;
}

static const w2l_type no_type = {0, 0, 0};

/* Field by field: w2l_type has padding, so memcmp would compare garbage. */
static int same_type(w2l_type a, w2l_type b)
{
    return a.id == b.id && (a.id != W2L_TYPE_DECIMAL ||
                            (a.precision == b.precision && a.scale == b.scale));
}

static w2l_rc insert_at(work *w, size_t at, const wcol *c)
{
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 16;
        wcol *v = w2l__realloc(w->v, nc * sizeof *v);
        W2L_NOMEM_IF(!v, w->err);
        w->v = v;
        w->cap = nc;
    }
    memmove(&w->v[at + 1], &w->v[at], (w->n - at) * sizeof *w->v);
    w->v[at] = *c;
    w->n++;
    return W2L_OK;
}

static void remove_at(work *w, size_t at)
{
    memmove(&w->v[at], &w->v[at + 1], (w->n - at - 1) * sizeof *w->v);
    w->n--;
}

static w2l_rc fail_table(work *w, w2l_rc rc)
{
    w2l__error_prefix(w->err, "table %.128s: ", w->table);
    return rc;
}

/* Where FIRST / AFTER x puts a column (after it was taken out); -1: keep / append. */
static w2l_rc target_pos(work *w, int position, const char *after, long *out)
{
    *out = -1;
    if (position == W2L_DDL_POS_FIRST) *out = 0;
    if (position == W2L_DDL_POS_AFTER) {
        long a = find(w, after, 0);
        if (a < 0)
            return fail_table(w, w2l__fail(w->err, W2L_SCHEMA, "AFTER: no column '%.128s'", after));
        *out = a + 1;
    }
    return W2L_OK;
}

static w2l_rc map_col(work *w, const w2l__ddl_column *col, w2l_type *t)
{
    w2l_rc rc = w2l__mysql_type_map(&col->type, &w->o->types, col->name, t, w->err);
    return rc == W2L_OK ? rc : fail_table(w, rc);
}

static char *keep(work *w, const char *s)
{
    return w2l__arena_strndup(&w->d->arena, s, strlen(s));
}

static w2l_rc set_pk(work *w, const char *const *names, size_t n);

static w2l_rc add_column(work *w, const w2l__ddl_alter *al)
{
    long have = find(w, al->col.name, 0);
    if (have >= 0) {
        if (al->if_exists) return W2L_OK; /* ADD COLUMN IF NOT EXISTS */
        w2l_type t;
        if (w->o->replayed_ok && w2l__mysql_type_map(&al->col.type, &w->o->types, al->col.name,
                                                     &t, w->err) == W2L_OK &&
            (same_type(t, w->v[have].type) || w2l_type_can_promote(t, w->v[have].type)))
            return W2L_OK; /* replayed: the table has it (widened since, perhaps) */
        return fail_table(w, w2l__fail(w->err, W2L_SCHEMA, "ADD COLUMN: column '%.128s' exists",
                                       al->col.name));
    }
    wcol c = {0};
    W2L_TRY(map_col(w, &al->col, &c.type));
    c.name = keep(w, al->col.name);
    W2L_NOMEM_IF(!c.name, w->err);
    c.id = ++w->d->last_column_id;
    c.added = 1;
    c.required = 0; /* Iceberg: added columns are optional (no defaults in v2) */
    long at;
    W2L_TRY(target_pos(w, al->position, al->after, &at));
    W2L_TRY(insert_at(w, at < 0 ? w->n : (size_t)at, &c));
    W2L_TRY(note(w, W2L_CHANGE_ADD, &c, NULL, no_type, c.type));
    if (al->col.primary_key) W2L_TRY(set_pk(w, &al->col.name, 1));
    return W2L_OK;
}

static w2l_rc drop_column(work *w, const char *name, int if_exists)
{
    long i = find_ref(w, name);
    if (i < 0) {
        if (if_exists || w->o->replayed_ok) return W2L_OK;
        return fail_table(w,
                          w2l__fail(w->err, W2L_SCHEMA, "DROP COLUMN: no column '%.128s'", name));
    }
    wcol c = w->v[i];
    remove_at(w, (size_t)i);
    if (in_pk(w, c.id)) { /* MySQL drops the column from the key */
        size_t k = 0;
        for (size_t j = 0; j < w->npk; j++)
            if (w->pk[j] != c.id) w->pk[k++] = w->pk[j];
        w->npk = k;
        w->pk_changed = 1;
    }
    return note(w, W2L_CHANGE_DROP, &c, NULL, c.type, no_type);
}

static w2l_rc rename_to(work *w, wcol *c, const char *to)
{
    if (strcmp(c->name, to) == 0) return W2L_OK;
    const char *old = c->name;
    c->name = keep(w, to);
    W2L_NOMEM_IF(!c->name, w->err);
    return note(w, W2L_CHANGE_RENAME, c, old, c->type, c->type);
}

static w2l_rc retype(work *w, wcol *c, w2l_type to, int not_null, const char *mysql_text)
{
    if (!same_type(c->type, to)) {
        if (!w2l_type_can_promote(c->type, to)) {
            char a[24], b[24];
            return fail_table(
                w, w2l__fail(w->err, W2L_SCHEMA,
                             "column '%.128s': cannot change type from %s to %s%s%.64s%s", c->name,
                             w2l_type_format(c->type, a, sizeof a),
                             w2l_type_format(to, b, sizeof b), mysql_text ? " (MySQL " : "",
                             mysql_text ? mysql_text : "", mysql_text ? ")" : ""));
        }
        w2l_type from = c->type;
        c->type = to;
        W2L_TRY(note(w, W2L_CHANGE_WIDEN, c, NULL, from, to));
    }
    /* MySQL keeps primary-key columns NOT NULL whatever the definition says */
    if (c->required && !not_null && !in_pk(w, c->id)) {
        c->required = 0;
        W2L_TRY(note(w, W2L_CHANGE_OPTIONAL, c, NULL, c->type, c->type));
    }
    return W2L_OK;
}

static w2l_rc move_to(work *w, size_t i, int position, const char *after)
{
    if (position == W2L_DDL_POS_NONE) return W2L_OK;
    wcol c = w->v[i];
    remove_at(w, i);
    long at;
    w2l_rc rc = target_pos(w, position, after, &at);
    if (rc != W2L_OK) {
        insert_at(w, i, &c); /* cannot fail: the slot was just freed */
        return rc;
    }
    W2L_TRY(insert_at(w, (size_t)at, &c));
    if ((size_t)at != i) W2L_TRY(note(w, W2L_CHANGE_MOVE, &w->v[at], NULL, c.type, c.type));
    return W2L_OK;
}

static w2l_rc change_column(work *w, const w2l__ddl_alter *al)
{
    long i = find_ref(w, al->name);
    if (i < 0) {
        if (al->if_exists) return W2L_OK;
        return fail_table(w, w2l__fail(w->err, W2L_SCHEMA, "%s: no column '%.128s'", al->what,
                                       al->name));
    }
    w2l_type to;
    W2L_TRY(map_col(w, &al->col, &to));
    W2L_TRY(rename_to(w, &w->v[i], al->col.name));
    W2L_TRY(retype(w, &w->v[i], to, al->col.not_null || al->col.primary_key, al->col.type_text));
    W2L_TRY(move_to(w, (size_t)i, al->position, al->after));
    if (al->col.primary_key) W2L_TRY(set_pk(w, &al->col.name, 1));
    return W2L_OK;
}

static w2l_rc set_pk(work *w, const char *const *names, size_t n)
{
    int32_t *ids = n ? w2l__arena_alloc(&w->d->arena, n * sizeof *ids) : NULL;
    W2L_NOMEM_IF(n && !ids, w->err);
    for (size_t k = 0; k < n; k++) {
        long i = find(w, names[k], 0);
        if (i < 0)
            return fail_table(w, w2l__fail(w->err, W2L_SCHEMA, "PRIMARY KEY: no column '%.128s'",
                                           names[k]));
        wcol *c = &w->v[i];
        if (!c->required) {
            if (c->added)
                return fail_table(
                    w,
                    w2l__fail(w->err, W2L_SCHEMA,
                              "primary key column '%.128s' is new to the table with its key: "
                              "the rows the lake holds have no value for it (the server fills them "
                              "without row events), so it cannot become the identifier; "
                              "ddl.policy=quarantine for the table sets it aside and keeps "
                              "the others flowing",
                              c->name));
            c->required = 1;
            W2L_TRY(note(w, W2L_CHANGE_REQUIRED, c, NULL, c->type, c->type));
        }
        ids[k] = c->id;
    }
    w->pk = ids;
    w->npk = n;
    w->pk_changed = 1;
    return W2L_OK;
}

/* ---- merge (w2l__evolve_opts.merge): one source of several changed ---- */

/* Column name of type t in the union: added (optional) when missing, widened when t
 * promotes its type, kept when its type is t or promotes to it. */
static w2l_rc merge_column(work *w, const char *name, w2l_type t, const char *mysql_text)
{
    long i = find(w, name, 0);
    if (i < 0) {
        wcol c = {0};
        c.type = t;
        c.name = keep(w, name);
        W2L_NOMEM_IF(!c.name, w->err);
        c.id = ++w->d->last_column_id;
        c.added = 1;
        W2L_TRY(insert_at(w, w->n, &c));
        return note(w, W2L_CHANGE_ADD, &c, NULL, no_type, c.type);
    }
    wcol *c = &w->v[i];
    if (same_type(c->type, t) || w2l_type_can_promote(t, c->type)) return W2L_OK;
    if (!w2l_type_can_promote(c->type, t)) {
        char a[24], b[24];
        return fail_table(
            w, w2l__fail(w->err, W2L_SCHEMA,
                         "column '%.128s': one source has %s%s%.64s%s, the table merging it %s, "
                         "and neither type holds the other",
                         c->name, w2l_type_format(t, a, sizeof a), mysql_text ? " (MySQL " : "",
                         mysql_text ? mysql_text : "", mysql_text ? ")" : "",
                         w2l_type_format(c->type, b, sizeof b)));
    }
    w2l_type from = c->type;
    c->type = t;
    return note(w, W2L_CHANGE_WIDEN, c, NULL, from, t);
}

static w2l_rc merge_clause(work *w, const w2l__ddl_alter *al)
{
    w2l_type t;
    switch (al->kind) {
    case W2L_ALTER_ADD_COLUMN:
    case W2L_ALTER_CHANGE_COLUMN:
    case W2L_ALTER_MODIFY_COLUMN:
        W2L_TRY(map_col(w, &al->col, &t));
        return merge_column(w, al->col.name, t, al->col.type_text);
    case W2L_ALTER_RENAME_COLUMN: {
        long k = find(w, al->name, 0);
        return k < 0 ? W2L_OK : merge_column(w, al->new_name, w->v[k].type, NULL);
    }
    default: return W2L_OK; /* DROP COLUMN, keys, moves: the other sources keep theirs */
    }
}

static w2l_rc work_init(work *w, const w2l_schema *cur, int32_t last_column_id,
                        const char *table, const w2l__evolve_opts *o, w2l__schema_diff **dp,
                        w2l_error *err)
{
    static const w2l__evolve_opts none;
    memset(w, 0, sizeof *w);
    w->o = o ? o : &none;
    w->err = err;
    w2l__schema_diff *d = w2l__calloc(1, sizeof *d);
    W2L_NOMEM_IF(!d, err);
    w2l__arena_init(&d->arena, 1024);
    w->d = d;
    *dp = d;
    int32_t max = w2l_schema_max_field_id(cur);
    d->last_column_id = last_column_id > max ? last_column_id : max;
    w->table = table ? keep(w, table) : "?";
    W2L_NOMEM_IF(!w->table, err);
    w->schema_id = w2l_schema_id(cur);
    size_t n = w2l_schema_field_count(cur);
    for (size_t i = 0; i < n; i++) {
        const w2l_field *f = w2l_schema_field(cur, i);
        wcol c = {f->id, f->name, f->name, f->type, f->required, 0, i};
        W2L_TRY(insert_at(w, w->n, &c));
    }
    size_t nid;
    const int32_t *ids = w2l_schema_identifier(cur, &nid);
    if (nid) {
        w->pk = w2l__arena_alloc(&d->arena, nid * sizeof *w->pk);
        W2L_NOMEM_IF(!w->pk, err);
        memcpy(w->pk, ids, nid * sizeof *ids);
        w->npk = nid;
    }
    return W2L_OK;
}

/* Builds the new schema from the working columns (names borrowed from cur stay valid:
 * w2l_schema_add_field copies). */
static w2l_rc work_finish(work *w, const w2l_schema *cur)
{
    w2l__schema_diff *d = w->d;
    if (w->pk_changed) W2L_TRY(note(w, W2L_CHANGE_IDENTIFIER, NULL, NULL, no_type, no_type));
    if (!d->changed) {
        d->schema = w2l_schema_ref((w2l_schema *)cur); /* shared and immutable: safe */
        return W2L_OK;
    }
    w2l_schema *s = w2l_schema_new(w->schema_id + 1);
    W2L_NOMEM_IF(!s, w->err);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < w->n; i++) {
        for (size_t j = 0; j < i; j++)
            if (ieq(w->v[j].name, w->v[i].name)) {
                rc = fail_table(w, w2l__fail(w->err, W2L_SCHEMA, "two columns named '%.128s'",
                                             w->v[i].name));
                break;
            }
        if (rc == W2L_OK)
            rc = w2l_schema_add_field(s, w->v[i].id, w->v[i].name, w->v[i].type,
                                      w->v[i].required, w->err);
    }
    if (rc == W2L_OK && (rc = w2l_schema_set_identifier(s, w->pk, w->npk, w->err)) != W2L_OK &&
        rc != W2L_NOMEM)
        fail_table(w, rc);
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    d->schema = s;
    return W2L_OK;
}

static void work_free(work *w) { w2l__free(w->v); }

void w2l__schema_diff_free(w2l__schema_diff *d)
{
    if (!d) return;
    w2l_schema_unref(d->schema);
    w2l__free(d->changes);
    w2l__arena_release(&d->arena);
    w2l__free(d);
}

static const char *qualified(char *buf, size_t size, const w2l__ddl_name *n)
{
    if (n->db) snprintf(buf, size, "%s.%s", n->db, n->name);
    else snprintf(buf, size, "%s", n->name ? n->name : "?");
    return buf;
}

w2l_rc w2l__schema_apply_alter(const w2l_schema *cur, int32_t last_column_id,
                               const w2l__ddl_stmt *st, const w2l__evolve_opts *o,
                               w2l__schema_diff **out, w2l_error *err)
{
    if (!cur || !st || !out)
        return w2l__fail(err, W2L_MISUSE, "w2l__schema_apply_alter: NULL argument");
    *out = NULL;
    if (st->kind != W2L_DDL_ALTER_TABLE)
        return w2l__fail(err, W2L_MISUSE,
                         "w2l__schema_apply_alter: a %s statement, not ALTER TABLE",
                         w2l__ddl_kind_name(st->kind));
    char tname[300];
    work w;
    w2l__schema_diff *d = NULL;
    w2l_rc rc = work_init(&w, cur, last_column_id, qualified(tname, sizeof tname, &st->table), o,
                          &d, err);
    for (size_t i = 0; rc == W2L_OK && i < st->nalters; i++) {
        const w2l__ddl_alter *al = &st->alters[i];
        if (w.o->merge && al->kind != W2L_ALTER_CONVERT_CHARSET) {
            rc = merge_clause(&w, al);
            continue;
        }
        switch (al->kind) {
        case W2L_ALTER_ADD_COLUMN: rc = add_column(&w, al); break;
        case W2L_ALTER_DROP_COLUMN: rc = drop_column(&w, al->name, al->if_exists); break;
        case W2L_ALTER_RENAME_COLUMN: {
            long k = find_ref(&w, al->name);
            if (k < 0)
                rc = fail_table(&w, w2l__fail(err, W2L_SCHEMA, "RENAME COLUMN: no column '%.128s'",
                                              al->name));
            else rc = rename_to(&w, &w.v[k], al->new_name);
            break;
        }
        case W2L_ALTER_CHANGE_COLUMN:
        case W2L_ALTER_MODIFY_COLUMN: rc = change_column(&w, al); break;
        case W2L_ALTER_ADD_PRIMARY_KEY: rc = set_pk(&w, al->keys, al->nkeys); break;
        case W2L_ALTER_DROP_PRIMARY_KEY:
            w.npk = 0;
            w.pk_changed = 1;
            break;
        case W2L_ALTER_CONVERT_CHARSET:
            if (al->charset && !strcmp(al->charset, "binary"))
                rc = fail_table(&w, w2l__fail(err, W2L_SCHEMA,
                                              "CONVERT TO CHARACTER SET binary turns text "
                                              "columns into binary ones (string -> binary)"));
            break;
        default: break; /* no schema effect: indexes, options, table rename */
        }
    }
    if (rc == W2L_OK) rc = work_finish(&w, cur);
    work_free(&w);
    if (rc != W2L_OK) {
        w2l__schema_diff_free(d);
        return rc;
    }
    *out = d;
    return W2L_OK;
}

w2l_rc w2l__schema_from_create(const w2l__ddl_stmt *st, const w2l__evolve_opts *o,
                               int32_t schema_id, w2l_schema **out, int32_t *last_column_id,
                               w2l_error *err)
{
    static const w2l__evolve_opts none;
    if (!st || !out) return w2l__fail(err, W2L_MISUSE, "w2l__schema_from_create: NULL argument");
    *out = NULL;
    if (!o) o = &none;
    char tname[300];
    qualified(tname, sizeof tname, &st->table);
    if (st->kind == W2L_DDL_CREATE_TABLE_SELECT)
        return w2l__fail(err, W2L_SCHEMA,
                         "table %.128s: CREATE TABLE ... SELECT: the columns come from the query; "
                         "the schema must come from the rows' column list",
                         tname);
    if (st->kind != W2L_DDL_CREATE_TABLE)
        return w2l__fail(err, W2L_MISUSE,
                         "w2l__schema_from_create: a %s statement, not CREATE TABLE",
                         w2l__ddl_kind_name(st->kind));
    w2l_schema *s = w2l_schema_new(schema_id);
    W2L_NOMEM_IF(!s, err);
    int32_t *ids = st->npk ? w2l__malloc(st->npk * sizeof *ids) : NULL;
    w2l_rc rc = st->npk && !ids ? w2l__fail(err, W2L_NOMEM, "out of memory") : W2L_OK;
    for (size_t k = 0; rc == W2L_OK && k < st->npk; k++) {
        ids[k] = 0;
        for (size_t i = 0; i < st->ncols; i++)
            if (ieq(st->cols[i].name, st->pk[k])) ids[k] = (int32_t)i + 1;
        if (!ids[k])
            rc = w2l__fail(err, W2L_SCHEMA, "table %.128s: PRIMARY KEY: no column '%.128s'", tname,
                           st->pk[k]);
    }
    for (size_t i = 0; rc == W2L_OK && i < st->ncols; i++) {
        const w2l__ddl_column *c = &st->cols[i];
        w2l_type t;
        int in_key = 0;
        for (size_t k = 0; k < st->npk; k++) in_key |= ids[k] == (int32_t)i + 1;
        rc = w2l__mysql_type_map(&c->type, &o->types, c->name, &t, err);
        if (rc == W2L_OK)
            rc = w2l_schema_add_field(s, (int32_t)i + 1, c->name, t, c->not_null || in_key, err);
        if (rc != W2L_OK && rc != W2L_NOMEM) w2l__error_prefix(err, "table %.128s: ", tname);
    }
    if (rc == W2L_OK && (rc = w2l_schema_set_identifier(s, ids, st->npk, err)) != W2L_OK &&
        rc != W2L_NOMEM)
        w2l__error_prefix(err, "table %.128s: ", tname);
    w2l__free(ids);
    if (rc != W2L_OK) {
        w2l_schema_unref(s);
        return rc;
    }
    *out = s;
    if (last_column_id) *last_column_id = (int32_t)st->ncols;
    return W2L_OK;
}

w2l_rc w2l__schema_reconcile(const w2l_schema *cur, int32_t last_column_id,
                             const w2l__source_column *cols, size_t n,
                             const char *const *pk, size_t npk, const char *table,
                             const w2l__evolve_opts *o, w2l__schema_diff **out,
                             w2l_error *err)
{
    if (!cur || (!cols && n) || (!pk && npk) || !out)
        return w2l__fail(err, W2L_MISUSE, "w2l__schema_reconcile: NULL argument");
    *out = NULL;
    work w;
    w2l__schema_diff *d = NULL;
    wcol *nv = NULL;
    w2l_rc rc = work_init(&w, cur, last_column_id, table, o, &d, err);
    if (rc == W2L_OK && n) {
        nv = w2l__calloc(n, sizeof *nv);
        if (!nv) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    /* match each source column to an existing one, in source order */
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        if (!cols[i].name || !cols[i].name[0]) {
            rc = fail_table(&w, w2l__fail(err, W2L_SCHEMA, "source column %zu has no name", i));
            break;
        }
        long k = find(&w, cols[i].name, 1);
        if (k >= 0) {
            wcol *c = &w.v[k];
            c->orig = NULL; /* matched: not matched twice, not dropped */
            rc = rename_to(&w, c, cols[i].name);
            if (rc == W2L_OK) rc = retype(&w, c, cols[i].type, cols[i].required, NULL);
            nv[i] = *c;
            nv[i].orig = "";
        } else {
            wcol c = {0};
            c.name = keep(&w, cols[i].name);
            if (!c.name) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            if (!w2l__type_valid(cols[i].type)) {
                rc = fail_table(&w, w2l__fail(err, W2L_SCHEMA, "column '%.128s': invalid type",
                                              cols[i].name));
                break;
            }
            c.type = cols[i].type;
            c.id = ++d->last_column_id;
            c.added = 1;
            nv[i] = c;
            rc = note(&w, W2L_CHANGE_ADD, &c, NULL, no_type, c.type);
        }
    }
    /* drops: whatever was not matched */
    for (size_t k = 0; rc == W2L_OK && k < w.n; k++)
        if (w.v[k].orig) {
            int was_pk = in_pk(&w, w.v[k].id);
            rc = note(&w, W2L_CHANGE_DROP, &w.v[k], NULL, w.v[k].type, no_type);
            if (was_pk) w.pk_changed = 1;
        }
    if (rc == W2L_OK) {
        /* moves: kept columns whose relative order changed */
        size_t kept = 0;
        for (size_t i = 0; i < n; i++)
            if (!nv[i].added) {
                size_t rank = 0; /* rank among kept columns in the old order */
                for (size_t j = 0; j < n; j++)
                    if (!nv[j].added && nv[j].orig_pos < nv[i].orig_pos) rank++;
                if (rank != kept && rc == W2L_OK)
                    rc = note(&w, W2L_CHANGE_MOVE, &nv[i], NULL, nv[i].type, nv[i].type);
                kept++;
            }
    }
    if (rc == W2L_OK) {
        /* identifier: the given key, or what survives of the old one */
        size_t k = 0;
        for (size_t j = 0; j < w.npk; j++) {
            int alive = 0;
            for (size_t i = 0; i < n; i++) alive |= !nv[i].added && nv[i].id == w.pk[j];
            if (alive) w.pk[k++] = w.pk[j];
        }
        w.npk = k;
        w2l__free(w.v);
        w.v = nv;
        w.n = w.cap = n;
        nv = NULL;
        if (pk) {
            int same = npk == w.npk;
            for (size_t j = 0; same && j < npk; j++) {
                long i = find(&w, pk[j], 0);
                same = i >= 0 && w.v[i].id == w.pk[j];
            }
            if (!same) rc = set_pk(&w, pk, npk);
        }
    }
    if (rc == W2L_OK) rc = work_finish(&w, cur);
    w2l__free(nv);
    work_free(&w);
    if (rc != W2L_OK) {
        w2l__schema_diff_free(d);
        return rc;
    }
    *out = d;
    return W2L_OK;
}
