/*
 * The "mysql" source's snapshot plan: every table it knows, sorted by db, name, in one of
 * three states. PENDING: not read yet; the stream drops its events (the table is read
 * whole later, at a position after them). ACTIVE: being read in ranges of its primary key;
 * the stream emits its events, and each chunk is emitted at the position its snapshot was
 * taken at, so a chunk's rows replace what the events before it wrote (a keyless table
 * stays hidden until its one read). DONE: read, or created after the snapshot began (the
 * binlog holds all of it).
 *
 * The plan follows the stream's DDL: a rename renames the entry, a drop or a CREATE ends
 * it, an ALTER rebuilds its columns (chunks read before are read again) and one that
 * changes the key reads the table again whole.
 *
 * In the position (,"chunks":{...}) while tables are left:
 *   "next":[db,name]   the first pending table: those after it are pending too, those
 *                      before it are done, unless named below
 *   "skip":[[db,name]] done tables after next
 *   "active":[{"t":[db,name],"rows":N,"r":[[lo,hi,[key...]],...]}]  ranges left (texts in
 *                      hex, null: unbounded / from the range's start)
 * so it stays small with thousands of tables, and a restart rebuilds the plan from the
 * server's tables.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mysql_source_int.h"

void w2l__ms_key_free(snap_key *k)
{
    for (size_t i = 0; i < k->n; i++) w2l__free(k->v[i]);
    w2l__free(k->v);
    w2l__free(k->len);
    memset(k, 0, sizeof *k);
}

w2l_rc w2l__ms_key_copy(snap_key *dst, char *const *v, const size_t *len, size_t n,
                        w2l_error *err)
{
    snap_key k = {0};
    if (n) {
        k.v = w2l__calloc(n, sizeof *k.v);
        k.len = w2l__calloc(n, sizeof *k.len);
        if (!k.v || !k.len) {
            w2l__free(k.v);
            w2l__free(k.len);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        for (k.n = 0; k.n < n; k.n++) {
            k.v[k.n] = w2l__strndup(v[k.n], len[k.n]);
            k.len[k.n] = len[k.n];
            if (!k.v[k.n]) {
                w2l__ms_key_free(&k);
                return w2l__fail(err, W2L_NOMEM, "out of memory");
            }
        }
    }
    w2l__ms_key_free(dst);
    *dst = k;
    return W2L_OK;
}

static void range_clear(snap_range *r)
{
    w2l__free(r->lo);
    w2l__free(r->hi);
    w2l__ms_key_free(&r->after);
    memset(r, 0, sizeof *r);
}

void w2l__ms_snap_table_columns_free(snap_table *t)
{
    for (size_t k = 0; k < t->ncols; k++) w2l__free((char *)t->cols[k].name);
    w2l__free(t->cols);
    w2l__free(t->pk);
    w2l__free(t->create_sql);
    w2l_schema_unref(t->schema);
    t->cols = NULL;
    t->pk = NULL;
    t->create_sql = NULL;
    t->schema = NULL;
    t->ncols = t->npk = 0;
}

static void ranges_free(snap_table *t)
{
    for (size_t i = 0; i < t->nranges; i++) range_clear(&t->ranges[i]);
    t->nranges = 0;
}

void w2l__ms_snap_table_free(snap_table *t)
{
    if (!t) return;
    w2l__free(t->smin);
    w2l__free(t->smax);
    w2l__free(t->db);
    w2l__free(t->name);
    w2l__ms_snap_table_columns_free(t);
    ranges_free(t);
    w2l__free(t->ranges);
    w2l__free(t);
}

void w2l__ms_snap_tables_free(mysql_source *ms)
{
    for (size_t i = 0; i < ms->snap.ntables; i++) w2l__ms_snap_table_free(ms->snap.tables[i]);
    w2l__free(ms->snap.tables);
    ms->snap.tables = NULL;
    ms->snap.ntables = ms->snap.cap = 0;
    w2l_buf_release(&ms->snap.json);
}

/* `name` with backticks doubled, appended to b. */
static w2l_rc put_ident(w2l_buf *b, const char *name, w2l_error *err)
{
    W2L_TRY(w2l_buf_append(b, "`", 1, err));
    for (const char *p = name; *p; p++)
        W2L_TRY(w2l_buf_append(b, *p == '`' ? "``" : p, *p == '`' ? 2 : 1, err));
    return w2l_buf_append(b, "`", 1, err);
}

/* CREATE TABLE of a tracked definition (information_schema's COLUMN_TYPE, nullability and
 * primary key): what the DDL handler creates an empty table from, so a table without rows
 * is in the lake after the snapshot, with its schema. From w2l__malloc. */
static w2l_rc create_sql(const ttable *t, char **out, w2l_error *err)
{
    w2l_buf b = {0};
    w2l_rc rc = w2l__buf_printf(&b, err, "CREATE TABLE ");
    if (rc == W2L_OK) rc = put_ident(&b, t->db, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&b, ".", 1, err);
    if (rc == W2L_OK) rc = put_ident(&b, t->name, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&b, " (", 2, err);
    for (size_t k = 0; rc == W2L_OK && k < t->ncols; k++) {
        if (k) rc = w2l_buf_append(&b, ", ", 2, err);
        if (rc == W2L_OK) rc = put_ident(&b, t->cols[k].name, err);
        if (rc == W2L_OK)
            rc = w2l__buf_printf(&b, err, " %s%s", t->cols[k].type,
                                 t->cols[k].nullable ? "" : " NOT NULL");
    }
    for (size_t k = 0; rc == W2L_OK && k < t->npk; k++) {
        rc = w2l__buf_printf(&b, err, "%s", k ? ", " : ", PRIMARY KEY (");
        if (rc == W2L_OK) rc = put_ident(&b, t->pk[k], err);
        if (rc == W2L_OK && k + 1 == t->npk) rc = w2l_buf_append(&b, ")", 1, err);
    }
    if (rc == W2L_OK) rc = w2l_buf_append(&b, ")", 1, err);
    if (rc == W2L_OK) rc = w2l__buf_cstr(&b, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&b);
        return rc;
    }
    *out = (char *)b.data;
    return W2L_OK;
}

static int is_int_class(const w2l__snap_col *c)
{
    return c->mt.cls == W2L_MYSQL_INT;
}

w2l_rc w2l__ms_snap_table_columns(mysql_source *ms, snap_table *s, const ttable *t,
                                  w2l_error *err)
{
    w2l__ms_snap_table_columns_free(s);
    size_t n = t->ncols ? t->ncols : 1;
    s->cols = w2l__calloc(n, sizeof *s->cols);
    s->pk = w2l__calloc(t->npk ? t->npk : 1, sizeof *s->pk);
    const char **names = w2l__calloc(n, sizeof *names);
    w2l_type *types = w2l__calloc(n, sizeof *types);
    int *nul = w2l__calloc(n, sizeof *nul);
    w2l_rc rc = W2L_OK;
    if (!s->cols || !s->pk || !names || !types || !nul)
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t k = 0; rc == W2L_OK && k < t->ncols; k++) {
        w2l__snap_col *c = &s->cols[k];
        c->name = w2l__strdup(t->cols[k].name);
        if (!c->name) {
            rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            break;
        }
        s->ncols = k + 1;
        rc = w2l__mysql_type_map_text(t->cols[k].type, strlen(t->cols[k].type), &ms->cfg.topts,
                                      c->name, NULL, &c->ice, &c->mt, err);
        c->nullable = t->cols[k].nullable;
        names[k] = c->name;
        types[k] = c->ice;
        nul[k] = c->nullable;
    }
    for (size_t k = 0; rc == W2L_OK && k < t->npk; k++) {
        long ci = w2l__ms_tt_col(t, t->pk[k]);
        if (ci >= 0) s->pk[s->npk++] = (size_t)ci;
    }
    if (rc == W2L_OK)
        rc = w2l__ms_build_schema((ttable *)t, names, types, nul, t->ncols, s->pk, s->npk,
                                  &s->schema, err);
    if (rc == W2L_OK) rc = create_sql(t, &s->create_sql, err);
    if (rc != W2L_OK) w2l__error_prefix(err, "snapshot of %s.%s: ", t->db, t->name);
    if (rc == W2L_OK && s->npk) {
        const w2l__snap_col *k = &s->cols[s->pk[0]];
        s->int_key = is_int_class(k);
        s->key_unsigned = k->mt.is_unsigned;
        s->str_key = (k->mt.cls == W2L_MYSQL_TEXT && k->ice.id == W2L_TYPE_STRING) ||
                     (k->mt.cls == W2L_MYSQL_BINARY && k->ice.id == W2L_TYPE_BINARY);
    }
    w2l__free(names);
    w2l__free(types);
    w2l__free(nul);
    return rc;
}

static int name_cmp(const char *db, const char *name, const snap_table *t)
{
    int c = strcmp(db, t->db);
    return c ? c : strcmp(name, t->name);
}

/* The index where db.name is or would go. */
static size_t plan_index(const mysql_source *ms, const char *db, const char *name, int *found)
{
    size_t lo = 0, hi = ms->snap.ntables;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(db, name, ms->snap.tables[mid]);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

snap_table *w2l__ms_snap_find(const mysql_source *ms, const char *db, const char *name)
{
    if (!db || !name || !ms->snap.ntables) return NULL;
    int found;
    size_t i = plan_index(ms, db, name, &found);
    return found ? ms->snap.tables[i] : NULL;
}

/* Inserts t (owned by the plan from now on) in order. */
static w2l_rc plan_insert(mysql_source *ms, snap_table *t, w2l_error *err)
{
    if (ms->snap.ntables == ms->snap.cap) {
        size_t nc = ms->snap.cap ? ms->snap.cap * 2 : 16;
        snap_table **n = w2l__realloc(ms->snap.tables, nc * sizeof *n);
        if (!n) {
            w2l__ms_snap_table_free(t);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
        ms->snap.tables = n;
        ms->snap.cap = nc;
    }
    int found;
    size_t i = plan_index(ms, t->db, t->name, &found);
    memmove(&ms->snap.tables[i + 1], &ms->snap.tables[i],
            (ms->snap.ntables - i) * sizeof *ms->snap.tables);
    ms->snap.tables[i] = t;
    ms->snap.ntables++;
    ms->snap.epoch++;
    return W2L_OK;
}

static void plan_unlink(mysql_source *ms, snap_table *t)
{
    for (size_t i = 0; i < ms->snap.ntables; i++)
        if (ms->snap.tables[i] == t) {
            memmove(&ms->snap.tables[i], &ms->snap.tables[i + 1],
                    (ms->snap.ntables - i - 1) * sizeof *ms->snap.tables);
            ms->snap.ntables--;
            ms->snap.epoch++;
            return;
        }
}

static snap_table *table_new(const char *db, const char *name, int state, w2l_error *err)
{
    snap_table *t = w2l__calloc(1, sizeof *t);
    if (t) {
        t->db = w2l__strdup(db);
        t->name = w2l__strdup(name);
        t->state = state;
    }
    if (!t || !t->db || !t->name) {
        w2l__ms_snap_table_free(t);
        w2l__fail(err, W2L_NOMEM, "out of memory");
        return NULL;
    }
    return t;
}

w2l_rc w2l__ms_snap_plan(mysql_source *ms, w2l_error *err)
{
    w2l__ms_snap_tables_free(ms);
    for (size_t i = 0; i < ms->defs.n; i++) {
        ttable *tt = &ms->defs.tab[i];
        if (!w2l__ms_table_selected(ms, tt->db, tt->name)) continue;
        snap_table *t = table_new(tt->db, tt->name, SNAP_PENDING, err);
        if (!t) return err->code;
        w2l_rc rc = w2l__ms_snap_table_columns(ms, t, tt, err);
        if (rc == W2L_OK) rc = plan_insert(ms, t, err);
        else w2l__ms_snap_table_free(t);
        W2L_TRY(rc);
    }
    ms->snap.tables_total = ms->snap.ntables;
    return W2L_OK;
}

/* The table leaves the snapshot: done (kept by name, for the position). */
static void set_done(mysql_source *ms, snap_table *t)
{
    if (t->state == SNAP_DONE) return;
    t->state = SNAP_DONE;
    t->gen++;
    ranges_free(t);
    if (!t->in_flight) w2l__ms_snap_table_columns_free(t);
    ms->snap.epoch++;
}

void w2l__ms_snap_remove(mysql_source *ms, snap_table *t)
{
    set_done(ms, t);
}

int w2l__ms_snap_hides(const mysql_source *ms, const char *db, const char *name, int ddl)
{
    if (!ms->snap.active) return 0;
    const snap_table *t = w2l__ms_snap_find(ms, db, name);
    if (!t || (t->resync && ddl)) return 0; /* a table being read again is in the lake */
    return (t->state == SNAP_PENDING && !t->resync) || (t->state == SNAP_ACTIVE && !t->npk);
}

snap_range *w2l__ms_snap_range_add(mysql_source *ms, snap_table *t, w2l_error *err)
{
    if (t->nranges == t->rcap) {
        size_t nc = t->rcap ? t->rcap * 2 : 4;
        snap_range *n = w2l__realloc(t->ranges, nc * sizeof *n);
        if (!n) {
            w2l__fail(err, W2L_NOMEM, "out of memory");
            return NULL;
        }
        t->ranges = n;
        t->rcap = nc;
    }
    snap_range *r = &t->ranges[t->nranges++];
    memset(r, 0, sizeof *r);
    r->id = ++ms->snap.range_ids;
    ms->snap.epoch++;
    return r;
}

snap_range *w2l__ms_snap_range_find(snap_table *t, uint64_t id)
{
    for (size_t i = 0; i < t->nranges; i++)
        if (t->ranges[i].id == id) return &t->ranges[i];
    return NULL;
}

void w2l__ms_snap_range_remove(snap_table *t, snap_range *r)
{
    size_t i = (size_t)(r - t->ranges);
    range_clear(r);
    memmove(&t->ranges[i], &t->ranges[i + 1], (t->nranges - i - 1) * sizeof *t->ranges);
    t->nranges--;
}

/* Renames t in the plan (its chunks in flight read the old name: read again). */
static w2l_rc plan_rename(mysql_source *ms, snap_table *t, const char *db, const char *name,
                          w2l_error *err)
{
    snap_table *other = w2l__ms_snap_find(ms, db, name);
    if (other && other != t) { /* a done entry of that name: the renamed table replaces it */
        plan_unlink(ms, other);
        set_done(ms, other);
        if (other->in_flight) other->orphan = 1; /* freed when its last chunk is */
        else w2l__ms_snap_table_free(other);
    }
    char *nd = w2l__strdup(db), *nn = w2l__strdup(name);
    if (!nd || !nn) {
        w2l__free(nd);
        w2l__free(nn);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    plan_unlink(ms, t);
    w2l__free(t->db);
    w2l__free(t->name);
    t->db = nd;
    t->name = nn;
    t->gen++;
    for (size_t i = 0; i < t->nranges; i++) t->ranges[i].busy = 0;
    if (t->resync && t->state == SNAP_ACTIVE) { /* read again, under its new name */
        ranges_free(t);
        t->state = SNAP_PENDING;
    }
    return plan_insert(ms, t, err);
}

/* A table the stream created while tables are left: done, by name. */
static w2l_rc created(mysql_source *ms, const char *db, const char *name, w2l_error *err)
{
    if (!db || !name || !w2l__ms_table_selected(ms, db, name)) return W2L_OK;
    snap_table *t = w2l__ms_snap_find(ms, db, name);
    if (t) {
        set_done(ms, t);
        return W2L_OK;
    }
    t = table_new(db, name, SNAP_DONE, err);
    return t ? plan_insert(ms, t, err) : err->code;
}

/* The key column names of a table, for comparing before and after a DDL. */
static int same_key(const snap_table *t, const ttable *tt)
{
    if (t->npk != tt->npk) return 0;
    for (size_t k = 0; k < t->npk; k++)
        if (strcmp(t->cols[t->pk[k]].name, tt->pk[k])) return 0;
    return 1;
}

static w2l_rc altered(mysql_source *ms, snap_table *t, w2l_error *err)
{
    if (t->state == SNAP_DONE) return W2L_OK;
    ttable *tt = w2l__ms_tt_find(ms, t->db, t->name);
    if (!tt) return W2L_OK;
    int key_kept = t->cols && same_key(t, tt);
    W2L_TRY(w2l__ms_snap_table_columns(ms, t, tt, err));
    t->gen++;
    ms->snap.epoch++;
    for (size_t i = 0; i < t->nranges; i++) t->ranges[i].busy = 0;
    if (t->resync && t->state == SNAP_ACTIVE) { /* read again from a new begin */
        ranges_free(t);
        t->state = SNAP_PENDING;
        return W2L_OK;
    }
    if (!key_kept && t->state == SNAP_ACTIVE) {
        /* its ranges are of the old key: the table is read again whole (a keyless table
         * that emitted rows starts from a TRUNCATE) */
        w2l__log(W2L_LOG_INFO,
                 "mysql source: the primary key of %s.%s changed during its snapshot: reading it "
                 "again whole",
                 t->db, t->name);
        ranges_free(t);
        t->state = SNAP_PENDING;
        t->truncate_first = t->rows > 0;
        t->rows = 0;
    }
    return W2L_OK;
}

w2l_rc w2l__ms_snap_ddl(mysql_source *ms, const w2l__ddl_stmt *st, w2l_error *err)
{
    if (!ms->snap.active) return W2L_OK;
    switch (st->kind) {
    case W2L_DDL_CREATE_TABLE:
    case W2L_DDL_CREATE_TABLE_LIKE:
    case W2L_DDL_CREATE_TABLE_SELECT: return created(ms, st->table.db, st->table.name, err);
    case W2L_DDL_DROP_TABLE:
        for (size_t i = 0; i < st->ntables; i++) {
            snap_table *t = w2l__ms_snap_find(ms, st->tables[i].db, st->tables[i].name);
            if (t) set_done(ms, t);
        }
        return W2L_OK;
    case W2L_DDL_DROP_DATABASE:
        for (size_t i = 0; st->database && i < ms->snap.ntables; i++)
            if (!strcmp(ms->snap.tables[i]->db, st->database)) set_done(ms, ms->snap.tables[i]);
        return W2L_OK;
    case W2L_DDL_RENAME_TABLE:
        for (size_t i = 0; i < st->nrenames; i++) {
            const w2l__ddl_rename *r = &st->renames[i];
            snap_table *t = w2l__ms_snap_find(ms, r->from.db, r->from.name);
            if (!r->to.db || !r->to.name) continue;
            if (!t) W2L_TRY(created(ms, r->to.db, r->to.name, err));
            else if (!w2l__ms_table_selected(ms, r->to.db, r->to.name)) set_done(ms, t);
            else W2L_TRY(plan_rename(ms, t, r->to.db, r->to.name, err));
        }
        return W2L_OK;
    case W2L_DDL_ALTER_TABLE: {
        snap_table *t = w2l__ms_snap_find(ms, st->table.db, st->table.name);
        for (size_t a = 0; t && a < st->nalters; a++) {
            const w2l__ddl_alter *al = &st->alters[a];
            if (al->kind != W2L_ALTER_RENAME_TABLE || !al->new_table.name) continue;
            const char *ndb = al->new_table.db ? al->new_table.db : t->db;
            if (!w2l__ms_table_selected(ms, ndb, al->new_table.name)) {
                set_done(ms, t);
                return W2L_OK;
            }
            W2L_TRY(plan_rename(ms, t, ndb, al->new_table.name, err));
        }
        if (!t) {
            for (size_t a = 0; a < st->nalters; a++)
                if (st->alters[a].kind == W2L_ALTER_RENAME_TABLE && st->alters[a].new_table.name)
                    W2L_TRY(created(ms,
                                    st->alters[a].new_table.db ? st->alters[a].new_table.db
                                                               : st->table.db,
                                    st->alters[a].new_table.name, err));
            return W2L_OK;
        }
        return altered(ms, t, err);
    }
    default: return W2L_OK;
    }
}

w2l_rc w2l__ms_snap_add(mysql_source *ms, const char *db, const char *name, int resync,
                        w2l_error *err)
{
    ttable *tt = w2l__ms_tt_find(ms, db, name);
    if (!tt)
        return w2l__fail(err, W2L_NOTFOUND, "mysql source: no table %s.%s on the server", db,
                         name);
    snap_table *t = w2l__ms_snap_find(ms, db, name);
    if (!t) {
        t = table_new(db, name, SNAP_DONE, err);
        if (!t) return err->code;
        W2L_TRY(plan_insert(ms, t, err));
    }
    if (t->state == SNAP_ACTIVE && !resync) return W2L_OK; /* being read already */
    if (!ms->snap.active) { /* a new round: its own figures */
        ms->snap.tables_total = ms->snap.done_tables = ms->snap.done_rows = 0;
        ms->snap.done_chunks = ms->snap.rows_estimated = 0;
    }
    if (t->state == SNAP_DONE) ms->snap.tables_total++;
    if (t->in_flight || (ms->snap.keyless == t)) t->gen++; /* chunks in flight: read again */
    W2L_TRY(w2l__ms_snap_table_columns(ms, t, tt, err));
    ranges_free(t);
    t->resync |= resync;
    t->state = SNAP_PENDING;
    t->rows = 0;
    t->gen++;
    if (!ms->snap.active) {
        ms->snap.active = 1;
        ms->snap.started_ms = w2l__now_ms();
    }
    ms->snap.epoch++;
    return W2L_OK;
}

/* ---- the position's "chunks" member ---- */

static w2l_rc put_name(w2l_buf *b, const snap_table *t, w2l_error *err)
{
    W2L_TRY(w2l_buf_append(b, "[", 1, err));
    W2L_TRY(w2l__json_buf_string(b, t->db, err));
    W2L_TRY(w2l_buf_append(b, ",", 1, err));
    W2L_TRY(w2l__json_buf_string(b, t->name, err));
    return w2l_buf_append(b, "]", 1, err);
}

static w2l_rc put_hex(w2l_buf *b, const char *s, size_t n, w2l_error *err)
{
    if (!s) return w2l_buf_append(b, "null", 4, err);
    static const char hx[] = "0123456789abcdef";
    W2L_TRY(w2l__buf_reserve(b, 2 * n + 2, err));
    char *o = (char *)b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        *o++ = hx[(unsigned char)s[i] >> 4];
        *o++ = hx[(unsigned char)s[i] & 15];
    }
    *o++ = '"';
    b->len = (size_t)(o - (char *)b->data);
    return W2L_OK;
}

static w2l_rc build_json(const mysql_source *ms, w2l_buf *b, w2l_error *err)
{
    b->len = 0;
    const snap_table *next = NULL;
    for (size_t i = 0; i < ms->snap.ntables && !next; i++) {
        const snap_table *t = ms->snap.tables[i];
        /* a keyless table being read has emitted nothing: still pending; a re-read is in
         * "resync", whatever the plan knows of the others */
        if (!t->resync && (t->state == SNAP_PENDING || (t->state == SNAP_ACTIVE && !t->npk)))
            next = t;
    }
    W2L_TRY(w2l__buf_printf(b, err, ",\"chunks\":{"));
    int comma = 0;
    if (next) {
        W2L_TRY(w2l__buf_printf(b, err, "\"next\":"));
        W2L_TRY(put_name(b, next, err));
        comma = 1;
        int any = 0;
        for (size_t i = 0; i < ms->snap.ntables; i++) {
            const snap_table *t = ms->snap.tables[i];
            if (t->state != SNAP_DONE || name_cmp(t->db, t->name, next) < 0) continue;
            W2L_TRY(w2l__buf_printf(b, err, "%s", any ? "," : ",\"skip\":["));
            W2L_TRY(put_name(b, t, err));
            any = 1;
        }
        if (any) W2L_TRY(w2l_buf_append(b, "]", 1, err));
    }
    int any = 0;
    for (size_t i = 0; i < ms->snap.ntables; i++) { /* restarted whole after a restart */
        const snap_table *t = ms->snap.tables[i];
        if (!t->resync || t->state == SNAP_DONE) continue;
        W2L_TRY(w2l__buf_printf(b, err, "%s",
                                any     ? ","
                                : comma ? ",\"resync\":["
                                        : "\"resync\":["));
        W2L_TRY(put_name(b, t, err));
        any = comma = 1;
    }
    if (any) W2L_TRY(w2l_buf_append(b, "]", 1, err));
    any = 0;
    for (size_t i = 0; i < ms->snap.ntables; i++) {
        const snap_table *t = ms->snap.tables[i];
        if (t->state != SNAP_ACTIVE || !t->npk || t->resync) continue;
        W2L_TRY(w2l__buf_printf(b, err, "%s{\"t\":",
                                any     ? ","
                                : comma ? ",\"active\":["
                                        : "\"active\":["));
        W2L_TRY(put_name(b, t, err));
        W2L_TRY(w2l__buf_printf(b, err, ",\"rows\":%llu,\"r\":[", (unsigned long long)t->rows));
        for (size_t k = 0; k < t->nranges; k++) {
            const snap_range *r = &t->ranges[k];
            W2L_TRY(w2l__buf_printf(b, err, "%s[", k ? "," : ""));
            W2L_TRY(put_hex(b, r->lo, r->lo_len, err));
            W2L_TRY(w2l_buf_append(b, ",", 1, err));
            W2L_TRY(put_hex(b, r->hi, r->hi_len, err));
            W2L_TRY(w2l_buf_append(b, ",", 1, err));
            if (!r->after.n) W2L_TRY(w2l_buf_append(b, "null", 4, err));
            for (size_t j = 0; j < r->after.n; j++) {
                W2L_TRY(w2l_buf_append(b, j ? "," : "[", 1, err));
                W2L_TRY(put_hex(b, r->after.v[j], r->after.len[j], err));
            }
            if (r->after.n) W2L_TRY(w2l_buf_append(b, "]", 1, err));
            W2L_TRY(w2l_buf_append(b, "]", 1, err));
        }
        W2L_TRY(w2l_buf_append(b, "]}", 2, err));
        any = 1;
    }
    if (any) W2L_TRY(w2l_buf_append(b, "]", 1, err));
    return w2l_buf_append(b, "}", 1, err);
}

w2l_rc w2l__ms_snap_json(const mysql_source *ms, w2l_buf *b, w2l_error *err)
{
    if (!ms->snap.active) return W2L_OK;
    mysql_source *m = (mysql_source *)ms; /* the cache */
    if (!m->snap.json.len || m->snap.json_epoch != ms->snap.epoch) {
        W2L_TRY(build_json(ms, &m->snap.json, err));
        m->snap.json_epoch = ms->snap.epoch;
    }
    return w2l_buf_append(b, m->snap.json.data, m->snap.json.len, err);
}

/* A hex text of a restored position (NULL: JSON null); *ok 0 when it is neither. */
static char *unhex(const w2l__json *j, size_t *len, int *ok)
{
    *len = 0;
    if (!j || w2l__json_type(j) == W2L_JSON_NULL) return NULL;
    const char *h = w2l__json_str(j);
    size_t hl = h ? strlen(h) : 1;
    if (!h || hl % 2) {
        *ok = 0;
        return NULL;
    }
    char *s = w2l__malloc(hl / 2 + 1);
    if (!s) {
        *ok = -1;
        return NULL;
    }
    for (size_t i = 0; i < hl / 2; i++) {
        int a = w2l__ms_hexval(h[2 * i]), c = w2l__ms_hexval(h[2 * i + 1]);
        if (a < 0 || c < 0) *ok = 0;
        s[i] = (char)(a << 4 | c);
    }
    s[hl / 2] = '\0';
    *len = hl / 2;
    return s;
}

static int json_name(const w2l__json *j, const char **db, const char **name)
{
    w2l__json *a = j ? w2l__json_first(j) : NULL, *b = a ? w2l__json_next(a) : NULL;
    *db = a ? w2l__json_str(a) : NULL;
    *name = b ? w2l__json_str(b) : NULL;
    return *db && *name;
}

static w2l_rc restore_active(mysql_source *ms, const w2l__json *a, int old, w2l_error *err)
{
    const char *db, *name;
    if (!json_name(w2l__json_get(a, "t"), &db, &name))
        return w2l__fail(err, W2L_CORRUPT, "mysql source: restored \"chunks\" has a bad table");
    snap_table *t = w2l__ms_snap_find(ms, db, name);
    if (!t) return W2L_OK; /* gone: the stream says what follows */
    if (!t->npk) { /* an older version's keyless table in progress: read again whole */
        t->truncate_first = old;
        return W2L_OK;
    }
    t->state = SNAP_ACTIVE;
    int64_t rows = 0;
    w2l__json_int64(w2l__json_get(a, "rows"), &rows);
    t->rows = rows > 0 ? (uint64_t)rows : 0;
    for (w2l__json *r = w2l__json_first(w2l__json_get(a, "r")); r; r = w2l__json_next(r)) {
        w2l__json *lo = w2l__json_first(r), *hi = lo ? w2l__json_next(lo) : NULL,
                  *after = hi ? w2l__json_next(hi) : NULL;
        snap_range *g = w2l__ms_snap_range_add(ms, t, err);
        if (!g) return err->code;
        int ok = 1;
        g->lo = unhex(lo, &g->lo_len, &ok);
        g->hi = unhex(hi, &g->hi_len, &ok);
        size_t nk = after && w2l__json_type(after) == W2L_JSON_ARRAY ? w2l__json_size(after) : 0;
        if (ok > 0 && nk && nk != t->npk) ok = 0;
        if (ok > 0 && nk) {
            char *v[64];
            size_t l[64];
            size_t i = 0;
            for (w2l__json *k = w2l__json_first(after); k && i < 64 && ok > 0;
                 k = w2l__json_next(k), i++)
                v[i] = unhex(k, &l[i], &ok);
            if (ok > 0) ok = w2l__ms_key_copy(&g->after, v, l, i, err) == W2L_OK ? 1 : -1;
            while (i--) w2l__free(v[i]);
        }
        if (ok < 0) return w2l__fail(err, W2L_NOMEM, "out of memory");
        if (!ok)
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: restored \"chunks\" has a bad range of %s.%s", db,
                             name);
    }
    if (!t->nranges) set_done(ms, t);
    return W2L_OK;
}

w2l_rc w2l__ms_snap_restore(mysql_source *ms, const w2l__json *chunks, w2l_error *err)
{
    const char *ndb = NULL, *nname = NULL;
    const w2l__json *next = w2l__json_get(chunks, "next");
    if (next && !json_name(next, &ndb, &nname))
        return w2l__fail(err, W2L_CORRUPT, "mysql source: restored \"chunks\" has a bad next");
    for (size_t i = 0; i < ms->snap.ntables; i++) {
        snap_table *t = ms->snap.tables[i];
        t->state = ndb && name_cmp(ndb, nname, t) <= 0 ? SNAP_PENDING : SNAP_DONE;
    }
    for (w2l__json *s = w2l__json_first(w2l__json_get(chunks, "skip")); s; s = w2l__json_next(s)) {
        const char *db, *name;
        if (!json_name(s, &db, &name))
            return w2l__fail(err, W2L_CORRUPT, "mysql source: restored \"chunks\" has a bad skip");
        snap_table *t = w2l__ms_snap_find(ms, db, name);
        if (t) t->state = SNAP_DONE;
    }
    for (w2l__json *a = w2l__json_first(w2l__json_get(chunks, "active")); a; a = w2l__json_next(a))
        W2L_TRY(restore_active(ms, a, w2l__json_get(chunks, "old") != NULL, err));
    for (w2l__json *s = w2l__json_first(w2l__json_get(chunks, "resync")); s;
         s = w2l__json_next(s)) {
        const char *db, *name;
        if (!json_name(s, &db, &name))
            return w2l__fail(err, W2L_CORRUPT,
                             "mysql source: restored \"chunks\" has a bad resync");
        snap_table *t = w2l__ms_snap_find(ms, db, name);
        if (!t) continue; /* gone since: the stream says what became of it */
        t->resync = 1;
        t->state = SNAP_PENDING; /* what its writers held is gone: read it again whole */
    }
    size_t left = 0;
    for (size_t i = 0; i < ms->snap.ntables; i++) {
        snap_table *t = ms->snap.tables[i];
        if (t->state == SNAP_DONE) w2l__ms_snap_table_columns_free(t);
        else left++;
    }
    ms->snap.active = ms->snap.initial = left > 0;
    ms->snap.tables_total = left;
    ms->snap.epoch++;
    return W2L_OK;
}
