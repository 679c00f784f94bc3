/*
 * maxwell-json rows and DDL (cdc_int.h; w2l-design(7) sections 3, 4 and 9), as Maxwell writes
 * them: insert / update / delete rows with "data" and "old", transactions by "xid" up to
 * the row with "commit": true, DDL (output_ddl) as table-create / table-alter / table-drop
 * / database-* with the statement's "sql" and, for tables, the "def" after it (and the
 * "old" def before a table-alter), bootstrap-start / bootstrap-insert / bootstrap-complete.
 *
 * Column types. Maxwell's def comes from its schema store, which keeps only what its JSON
 * output needs: DECIMAL without precision and scale, BIT without width, integers without
 * display width (TINYINT(1) reads as tinyint), strings without length. A column's type is
 * therefore taken from the richest description at hand, in this order:
 *   1. the statement in "sql", parsed by the DDL module: a CREATE TABLE gives every
 *      column's full type (CREATE TABLE ... LIKE those the copied table resolved to), an
 *      ALTER TABLE those of the columns it adds, modifies or changes;
 *   2. the type the column had in the table's previous shape, under its old name after a
 *      RENAME / CHANGE COLUMN and in the old table after a table rename, when the def's
 *      base type and signedness are the same (and the def is not complete by itself, as
 *      for ENUM, SET, JSON and temporal types);
 *   3. the def. A DECIMAL that none of these sizes becomes a string holding each value's
 *      exact plain decimal text (one warning per table and column); a BIT without width a
 *      long holding the bit pattern, never a boolean guessed from BIT's default width.
 * Each table keeps the MySQL type text its columns resolved to (table.mysql_types) for 2.
 * Values are JSON natives; a BIT(64) with its high bit set is written as an integer up to
 * 2^64 - 1, which CV_BITS_U64 keeps as the long of the same bits.
 *
 * Bootstrap. bootstrap-insert rows are the current rows of a table that Maxwell copies
 * while the binlog flows, so the lake may hold a row already: each is emitted as an
 * UPDATE_BEFORE (the row image, of which the writer uses the key, or every column of a
 * keyless table) followed by an INSERT: the writer deletes a row of that key written in
 * this checkpoint by position, one of an earlier checkpoint by equality (matching nothing
 * when the key is new), then writes the row. bootstrap-start / -complete carry no rows and
 * do not end an open transaction.
 *
 * Maxwell's own database (w2l__cdc_opts.maxwell_database, "maxwell" by default: its schema
 * store, positions, bootstrap requests, heartbeats) stays out of the lake: its rows and
 * DDL add no event, but a row of it still belongs to its xid, so a commit row there ends
 * the transaction as before.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "cdc_int.h"

/* ---- types from the def ---- */

/* A maxwell def column as MySQL type text: {"type":"decimal","precision":12,"scale":2},
 * {"type":"bigint","signed":false}, {"type":"datetime","column-length":6},
 * {"type":"enum","enum-values":["a","b"]}, {"type":"varchar","charset":"binary"}. */
static w2l_rc def_type(w2l__cdc *d, const w2l__json *c, char *tt, size_t size, w2l_error *err)
{
    const char *type = w2l__cdc_str(c, "type");
    if (!type) return w2l__cdc_missing(d, "def.columns.type", err);
    int64_t p = -1, s = -1, len = -1;
    w2l__json_int64(w2l__json_get(c, "precision"), &p);
    w2l__json_int64(w2l__json_get(c, "scale"), &s);
    w2l__json_int64(w2l__json_get(c, "column-length"), &len);
    int sgn = 1;
    w2l__json_bool(w2l__json_get(c, "signed"), &sgn);
    size_t n;
    if (p >= 0)
        n = (size_t)snprintf(tt, size, "%s(%lld,%lld)", type, (long long)p,
                             (long long)(s < 0 ? 0 : s));
    else if (len >= 0) n = (size_t)snprintf(tt, size, "%s(%lld)", type, (long long)len);
    else n = (size_t)snprintf(tt, size, "%s", type);
    if (!sgn && n < size) n += (size_t)snprintf(tt + n, size - n, " unsigned");
    const w2l__json *vals = w2l__json_get(c, "enum-values");
    if (!vals) vals = w2l__json_get(c, "set-values");
    if (vals && n < size) {
        n += (size_t)snprintf(tt + n, size - n, "(");
        for (w2l__json *v = w2l__json_first(vals); v && n < size; v = w2l__json_next(v)) {
            const char *vs = w2l__json_str(v);
            n += (size_t)snprintf(tt + n, size - n, "%s'", v == w2l__json_first(vals) ? "" : ",");
            for (; vs && *vs && n + 3 < size; vs++) {
                if (*vs == '\'' || *vs == '\\') tt[n++] = *vs;
                tt[n++] = *vs;
            }
            if (vs && *vs) n = size; /* did not fit */
            if (n < size) n += (size_t)snprintf(tt + n, size - n, "'");
        }
        if (n < size) n += (size_t)snprintf(tt + n, size - n, ")");
    }
    /* Maxwell writes the values of binary-charset strings as base64, like BLOBs */
    const char *cs = w2l__cdc_str(c, "charset");
    if (cs && !strcasecmp(cs, "binary") && n < size)
        n += (size_t)snprintf(tt + n, size - n, " character set binary");
    if (n >= size)
        return w2l__fail(err, W2L_SOURCE, "%s: def column type \"%.40s...\" too long", d->what, tt);
    return W2L_OK;
}

/* ---- types from the statement ---- */

/* What the DDL's "sql" says about the table the def describes. */
typedef struct sqlinfo {
    w2l__ddl_list *list;
    const w2l__ddl_stmt *st; /* the CREATE TABLE or ALTER TABLE of the table, or NULL */
    const table *like;       /* CREATE TABLE ... LIKE: the table copied, when known */
} sqlinfo;

static int name_is(const w2l__ddl_name *n, const char *db, const char *tn)
{
    return n->name && db && tn && !strcasecmp(n->name, tn) && (!n->db || !strcasecmp(n->db, db));
}

/* Parses the statement; one that does not parse (or names another table) only means the
 * def and the previous shape are all there is. */
static w2l_rc sql_load(w2l__cdc *d, const char *sql, const char *msgdb, const char *db,
                       const char *tn, const char *odb, const char *otn, sqlinfo *si,
                       w2l_error *err)
{
    memset(si, 0, sizeof *si);
    if (!sql) return W2L_OK;
    w2l_error perr;
    w2l_rc rc = w2l__ddl_parse(sql, strlen(sql), msgdb && *msgdb ? msgdb : db, &si->list, &perr);
    if (rc == W2L_NOMEM) return w2l__fail(err, W2L_NOMEM, "out of memory parsing a DDL statement");
    if (rc != W2L_OK) {
        w2l__log(W2L_LOG_DEBUG, "%s: table %s.%s: DDL not parsed, types from the def (%s)", d->what,
                 db, tn, perr.msg);
        return W2L_OK;
    }
    for (size_t i = 0; i < si->list->n; i++) {
        const w2l__ddl_stmt *s = &si->list->stmts[i];
        int create = s->kind == W2L_DDL_CREATE_TABLE || s->kind == W2L_DDL_CREATE_TABLE_SELECT ||
                     s->kind == W2L_DDL_CREATE_TABLE_LIKE;
        if (create && name_is(&s->table, db, tn)) si->st = s;
        else if (s->kind == W2L_DDL_ALTER_TABLE &&
                 (name_is(&s->table, db, tn) || name_is(&s->table, odb, otn)))
            si->st = s;
    }
    if (si->st && si->st->kind == W2L_DDL_CREATE_TABLE_LIKE && si->st->like.name) {
        table *l;
        W2L_TRY(w2l__cdc_table_get(d, si->st->like.db ? si->st->like.db : db, si->st->like.name, 0,
                                   &l, err));
        si->like = l;
    }
    return W2L_OK;
}

/* The MySQL type text column col of t resolved to, or NULL. */
static const char *shape_type(const table *t, const char *col)
{
    if (!t || !t->cur.schema || !t->mysql_types) return NULL;
    size_t n = w2l_schema_field_count(t->cur.schema);
    long k = w2l_schema_index_of_name(t->cur.schema, col);
    for (size_t i = 0; k < 0 && i < n; i++)
        if (!strcasecmp(w2l_schema_field(t->cur.schema, i)->name, col)) k = (long)i;
    if (k < 0) return NULL;
    const char *p = t->mysql_types;
    for (long i = 0; i < k && *p; i++) p += strlen(p) + 1;
    return *p ? p : NULL;
}

/* The full type the statement gives column col, or NULL. */
static const char *sql_type(const sqlinfo *si, const char *col)
{
    const w2l__ddl_stmt *s = si->st;
    const char *t = NULL;
    if (!s) return NULL;
    if (s->kind == W2L_DDL_CREATE_TABLE_LIKE) return shape_type(si->like, col);
    for (size_t i = 0; i < s->ncols; i++)
        if (s->cols[i].name && !strcasecmp(s->cols[i].name, col)) t = s->cols[i].type_text;
    for (size_t i = 0; i < s->nalters; i++) {
        const w2l__ddl_alter *a = &s->alters[i];
        if ((a->kind == W2L_ALTER_ADD_COLUMN || a->kind == W2L_ALTER_CHANGE_COLUMN ||
             a->kind == W2L_ALTER_MODIFY_COLUMN) && a->col.name && !strcasecmp(a->col.name, col))
            t = a->col.type_text;
        else if ((a->kind == W2L_ALTER_DROP_COLUMN || a->kind == W2L_ALTER_RENAME_COLUMN) &&
                 a->name && !strcasecmp(a->name, col))
            t = NULL; /* dropped or renamed away, then maybe added again */
    }
    return t;
}

/* The name column col had before the statement (RENAME COLUMN, CHANGE COLUMN). */
static const char *sql_old_name(const sqlinfo *si, const char *col)
{
    const w2l__ddl_stmt *s = si->st;
    for (size_t i = s ? s->nalters : 0; i-- > 0;) {
        const w2l__ddl_alter *a = &s->alters[i];
        if (a->kind == W2L_ALTER_RENAME_COLUMN && a->new_name && a->name &&
            !strcasecmp(a->new_name, col))
            return a->name;
        if (a->kind == W2L_ALTER_CHANGE_COLUMN && a->col.name && a->name &&
            !strcasecmp(a->col.name, col))
            return a->name;
    }
    return col;
}

/* *yes = 1 when the previous type prev refines the def's type text deft: the same base
 * type and signedness, where the def lacks what prev has (DECIMAL precision, BIT width,
 * integer display width). Types the def describes completely keep the def's. */
static w2l_rc refines(const char *prev, const char *deft, int *yes, w2l_error *err)
{
    w2l__mysql_type a, b;
    w2l_rc rc = w2l__mysql_type_parse(prev, strlen(prev), NULL, &a, err);
    if (rc == W2L_OK) rc = w2l__mysql_type_parse(deft, strlen(deft), NULL, &b, err);
    *yes = 0;
    if (rc == W2L_NOMEM) return rc;
    if (rc != W2L_OK) return W2L_OK;
    switch (b.cls) {
    case W2L_MYSQL_INT:
    case W2L_MYSQL_BOOL:
    case W2L_MYSQL_BIT:
    case W2L_MYSQL_DECIMAL:
    case W2L_MYSQL_FLOAT:
    case W2L_MYSQL_DOUBLE:
    case W2L_MYSQL_TEXT:
    case W2L_MYSQL_BINARY:
        *yes = a.cls == b.cls && !strcmp(a.name, b.name) && a.is_unsigned == b.is_unsigned;
        return W2L_OK;
    default:
        return W2L_OK;
    }
}

/* ---- describing a table from a def ---- */

/* Adds column name of the def to the shape being described, and its resolved type text to
 * types. prevt (may be NULL) is the table as it was before the DDL. */
static w2l_rc def_col(w2l__cdc *d, table *t, const w2l__json *c, const char *name,
                      const sqlinfo *si, const table *prevt, w2l_buf *types, w2l_error *err)
{
    char deft[512];
    W2L_TRY(def_type(d, c, deft, sizeof deft, err));
    const char *text = sql_type(si, name);
    if (!text) {
        const char *prev = shape_type(prevt, sql_old_name(si, name));
        int yes = 0;
        if (prev) W2L_TRY(refines(prev, deft, &yes, err));
        text = yes ? prev : deft;
    }
    w2l__mysql_type info;
    w2l_type ty = {W2L_TYPE_STRING, 0, 0};
    unsigned cv;
    int sized = 1;
    w2l_rc prc = w2l__mysql_type_parse(text, strlen(text), NULL, &info, err);
    if (prc == W2L_NOMEM) return prc;
    if (prc == W2L_OK && (info.cls == W2L_MYSQL_DECIMAL || info.cls == W2L_MYSQL_BIT) &&
        info.len < 0) {
        sized = 0;
        if (info.cls == W2L_MYSQL_BIT) {
            ty.id = W2L_TYPE_LONG;
            cv = CV_BITS_U64;
        } else {
            cv = CV_DECIMAL_TEXT;
            w2l__cdc_warn_once(
                d, t, name,
                "DECIMAL of unknown precision and scale (Maxwell's def omits them, and "
                "no CREATE or ALTER statement gave them): a string holding the exact decimal text");
        }
    } else {
        /* BIT(n > 1): CV_BITS_U64; DECIMAL(p > 38), a string: CV_DECIMAL_TEXT */
        W2L_TRY(w2l__cdc_mysql_type(d, t->db, t->name, name, text, &ty, &info, err));
        cv = w2l__cdc_mysql_cv(&info, ty);
        /* a def's "binary" has no width (not BINARY(1)): restore no 0x00 padding */
        if (info.cls == W2L_MYSQL_BINARY && info.len < 0) info.binary_pad = 0;
    }
    W2L_TRY(w2l__cdc_col_add(d, name, ty, cv, 0, err));
    if (sized) W2L_TRY(w2l__cdc_col_info(d, &info, ty, err));
    else if (cv == CV_DECIMAL_TEXT) d->cols[d->ncols - 1].aux.scale = -1; /* digits as written */
    return w2l_buf_append(types, text, strlen(text) + 1, err);
}

static w2l_rc describe_def(w2l__cdc *d, const w2l__json *def, const sqlinfo *si,
                           table *t, const table *prevt, w2l_error *err)
{
    w2l_buf types = {0};
    w2l_rc rc = W2L_OK;
    w2l__cdc_describe_reset(d);
    for (w2l__json *c = w2l__json_first(w2l__json_get(def, "columns")); c && rc == W2L_OK;
         c = w2l__json_next(c)) {
        const char *name = w2l__cdc_str(c, "name");
        rc = name ? def_col(d, t, c, name, si, prevt, &types, err)
                  : w2l__cdc_missing(d, "def.columns.name", err);
    }
    static const char *const pk_members[] = {"primary-key", "primarykey"};
    for (size_t k = 0; k < W2L_ARRAY_LEN(pk_members) && rc == W2L_OK; k++)
        for (w2l__json *p = w2l__json_first(w2l__json_get(def, pk_members[k])); p && rc == W2L_OK;
             p = w2l__json_next(p))
            if (w2l__json_str(p)) rc = w2l__cdc_pk_add(d, w2l__json_str(p), err);
    if (rc == W2L_OK) rc = w2l_buf_append(&types, "", 1, err);
    if (rc == W2L_OK) rc = w2l__cdc_table_set_pk(t, d->pks, d->npks, err);
    if (rc == W2L_OK) rc = w2l__cdc_describe_commit(d, t, 1, 0, err);
    if (rc == W2L_OK) {
        char *keep = w2l__malloc(types.len);
        if (!keep)
            rc = w2l__fail(err, W2L_NOMEM, "out of memory describing table %s.%s", t->db, t->name);
        else {
            memcpy(keep, types.data, types.len);
            w2l__free(t->mysql_types);
            t->mysql_types = keep;
        }
    }
    w2l_buf_release(&types);
    return rc;
}

/* table-create / table-alter with a def: the table's shape from then on. */
static w2l_rc maxwell_def(w2l__cdc *d, const w2l__json *msg, const char *type, const w2l__json *def,
                          table **out, w2l_error *err)
{
    const char *db = w2l__cdc_str(def, "database"), *tn = w2l__cdc_str(def, "table");
    if (!db || !tn) return w2l__cdc_missing(d, "def.database/def.table", err);
    const w2l__json *olddef = w2l__json_get(msg, "old");
    const char *odb = w2l__cdc_str(olddef, "database"), *otn = w2l__cdc_str(olddef, "table");
    int renamed = odb && otn && (strcmp(odb, db) || strcmp(otn, tn));
    table *t, *prevt = NULL;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    /* a new table has no previous shape (one left from a DROP the stream did not show
     * describes another table) */
    if (renamed) W2L_TRY(w2l__cdc_table_get(d, odb, otn, 0, &prevt, err));
    else if (strcmp(type, "table-create")) prevt = t;
    sqlinfo si;
    w2l_rc rc = sql_load(d, w2l__cdc_str(msg, "sql"), w2l__cdc_str(msg, "database"), db, tn, odb,
                         otn, &si, err);
    if (rc == W2L_OK) rc = describe_def(d, def, &si, t, prevt, err);
    w2l__ddl_list_free(si.list);
    W2L_TRY(rc);
    if (prevt && prevt != t) w2l__cdc_table_forget(d, prevt); /* a rename: the old name is gone */
    *out = t;
    return W2L_OK;
}

/* ---- messages ---- */

static int own_database(const w2l__cdc *d, const char *db)
{
    return d->opts.maxwell_database[0] && db && !strcmp(db, d->opts.maxwell_database);
}

static w2l_rc maxwell_ddl(w2l__cdc *d, const w2l__json *msg, const char *type, const char *db,
                          const char *tn, int64_t ts, w2l_error *err)
{
    const char *sql = w2l__cdc_str(msg, "sql");
    if (!sql) return w2l__cdc_missing(d, "sql", err);
    const w2l__json *def = w2l__json_get(msg, "def");
    if (!db && !w2l__cdc_null(def)) db = w2l__cdc_str(def, "database");
    if (own_database(d, db)) return W2L_OK;
    if (!strcmp(type, "table-drop")) {
        table *t;
        W2L_TRY(w2l__cdc_table_get(d, db ? db : "", tn ? tn : "", 0, &t, err));
        if (t) w2l__cdc_table_forget(d, t);
        return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err);
    }
    if (!strncmp(type, "table-", 6) && !w2l__cdc_null(def)) {
        table *t = NULL;
        W2L_TRY(maxwell_def(d, msg, type, def, &t, err));
        return w2l__cdc_add_ddl(d, t->db, t->name, sql, t->cur.schema, ts, err);
    }
    return w2l__cdc_add_ddl(d, db, tn, sql, NULL, ts, err);
}

w2l_rc w2l__cdc_maxwell_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const char *type = w2l__cdc_str(msg, "type"), *db = w2l__cdc_str(msg, "database"),
               *tn = w2l__cdc_str(msg, "table");
    if (!type) return w2l__cdc_missing(d, "type", err);
    /* "ts" is in seconds on rows and in milliseconds on DDL (the formats of Maxwell's row
     * and DDL maps); a value past 10^11 is milliseconds (seconds would be after AD 5000) */
    int64_t ts = w2l__cdc_ms(msg, "ts", 1);
    if (ts > -100000000000 && ts < 100000000000) ts *= 1000;
    if (!strncmp(type, "table-", 6) || !strncmp(type, "database-", 9))
        return maxwell_ddl(d, msg, type, db, tn, ts, err);
    if (!strcmp(type, "bootstrap-start") || !strcmp(type, "bootstrap-complete")) return W2L_OK;
    w2l_op op;
    int bootstrap = !strcmp(type, "bootstrap-insert");
    if (!strcmp(type, "insert") || bootstrap) op = W2L_OP_INSERT;
    else if (!strcmp(type, "update")) op = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(type, "delete")) op = W2L_OP_DELETE;
    else return w2l__fail(err, W2L_SOURCE, "%s: unknown type \"%s\"", d->what, type);
    if (!db) return w2l__cdc_missing(d, "database", err);
    if (!tn) return w2l__cdc_missing(d, "table", err);
    if (own_database(d, db)) return W2L_OK;
    const w2l__json *data = w2l__json_get(msg, "data"), *old = w2l__json_get(msg, "old");
    if (!data || w2l__json_type(data) != W2L_JSON_OBJECT) return w2l__cdc_missing(d, "data", err);
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && op != W2L_OP_INSERT) return w2l__cdc_never_described(d, t, err);
        w2l__cdc_describe_reset(d);
        W2L_TRY(w2l__cdc_infer_cols(d, t, data, err));
        const w2l__json *pkc = w2l__json_get(msg, "primary_key_columns");
        for (w2l__json *p = w2l__json_first(pkc); p; p = w2l__json_next(p))
            if (w2l__json_str(p) && w2l__cdc_col_find(d, w2l__json_str(p)) >= 0)
                W2L_TRY(w2l__cdc_pk_add(d, w2l__json_str(p), err));
        if (!pkc)
            for (size_t i = 0; i < t->npk; i++)
                if (w2l__cdc_col_find(d, t->pk[i]) >= 0) W2L_TRY(w2l__cdc_pk_add(d, t->pk[i], err));
        W2L_TRY(w2l__cdc_describe_commit(d, t, 0, 0, err));
        w2l__free(t->mysql_types); /* inferred: no MySQL types */
        t->mysql_types = NULL;
    }
    if (op == W2L_OP_UPDATE_AFTER) {
        if (old && w2l__json_type(old) != W2L_JSON_OBJECT && w2l__json_type(old) != W2L_JSON_NULL)
            return w2l__cdc_missing(d, "old", err);
        return w2l__cdc_add_update(d, t, data, w2l__cdc_null(old) ? NULL : old, ts, err);
    }
    /* a bootstrap row replaces the row of its key (of a keyless table: an identical row) */
    if (bootstrap) W2L_TRY(w2l__cdc_add_change(d, t, W2L_OP_UPDATE_BEFORE, data, NULL, ts, err));
    return w2l__cdc_add_change(d, t, op, data, NULL, ts, err);
}

/* ---- GEOMETRY values: Maxwell writes WKT ---- */

/* OGC well-known text (as Maxwell writes a GEOMETRY, "POINT (3 2)") to ISO WKB,
 * little-endian: byte order 01, uint32 type (1 Point .. 7 GeometryCollection, +1000 Z,
 * +2000 M, +3000 ZM), then uint32 counts and float64 coordinates; POINT EMPTY has NaN
 * coordinates. MULTIPOINT members may be written with or without parentheses. */
typedef struct wkt {
    const char *p, *end;
    w2l_buf out;
    int nomem;
} wkt;

enum { WKT_MAX_DEPTH = 32 };

static void wkt_space(wkt *w)
{
    while (w->p < w->end && isspace((unsigned char)*w->p)) w->p++;
}

static int wkt_punct(wkt *w, char c)
{
    wkt_space(w);
    if (w->p < w->end && *w->p == c) {
        w->p++;
        return 1;
    }
    return 0;
}

/* The next word (letters), uppercased, consumed only when it is one of those allowed by
 * take (NULL: any). */
static int wkt_word(wkt *w, char *buf, size_t size, const char *const *take)
{
    wkt_space(w);
    size_t n = 0;
    while (w->p + n < w->end && isalpha((unsigned char)w->p[n]) && n + 1 < size) {
        buf[n] = (char)toupper((unsigned char)w->p[n]);
        n++;
    }
    buf[n] = '\0';
    if (!n || (w->p + n < w->end && isalpha((unsigned char)w->p[n]))) return 0;
    for (size_t i = 0; take && take[i]; i++)
        if (!strcmp(buf, take[i])) {
            w->p += n;
            return 1;
        }
    if (take) return 0;
    w->p += n;
    return 1;
}

static void wkt_put(wkt *w, const void *p, size_t n)
{
    if (w2l_buf_append(&w->out, p, n, NULL) != W2L_OK) w->nomem = 1;
}

static void wkt_u32(wkt *w, uint32_t v)
{
    unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24) };
    wkt_put(w, b, 4);
}

static void wkt_f64(wkt *w, double d)
{
    uint64_t u;
    unsigned char b[8];
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(u >> (8 * i));
    wkt_put(w, b, 8);
}

static void wkt_head(wkt *w, uint32_t type)
{
    unsigned char order = 1;
    wkt_put(w, &order, 1);
    wkt_u32(w, type);
}

/* A count written later, at offset at. */
static void wkt_patch(wkt *w, size_t at, uint32_t v)
{
    if (w->nomem) return;
    for (int i = 0; i < 4; i++) w->out.data[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static int wkt_coord(wkt *w, int dims)
{
    for (int i = 0; i < dims; i++) {
        wkt_space(w);
        char *e;
        double d = strtod(w->p, &e);
        if (e == w->p || e > w->end) return -1;
        w->p = e;
        wkt_f64(w, d);
    }
    return 0;
}

/* coord, coord, ... ) : the '(' is consumed; the count goes first. */
static int wkt_coords(wkt *w, int dims)
{
    size_t at = w->out.len;
    uint32_t n = 0;
    wkt_u32(w, 0);
    do {
        if (wkt_coord(w, dims)) return -1;
        n++;
    } while (wkt_punct(w, ','));
    wkt_patch(w, at, n);
    return wkt_punct(w, ')') ? 0 : -1;
}

/* (coords), (coords), ... ) : rings of a polygon, the lines of a multilinestring. */
static int wkt_lists(wkt *w, int dims, uint32_t member_type)
{
    size_t at = w->out.len;
    uint32_t n = 0;
    wkt_u32(w, 0);
    do {
        if (member_type) wkt_head(w, member_type);
        if (!wkt_punct(w, '(') || wkt_coords(w, dims)) return -1;
        n++;
    } while (wkt_punct(w, ','));
    wkt_patch(w, at, n);
    return wkt_punct(w, ')') ? 0 : -1;
}

static int wkt_geom(wkt *w, int depth)
{
    static const char *const kinds[] = {
        "POINT",        "LINESTRING",         "POLYGON", "MULTIPOINT", "MULTILINESTRING",
        "MULTIPOLYGON", "GEOMETRYCOLLECTION", NULL
    };
    static const char *const dim_words[] = {"Z", "M", "ZM", NULL};
    static const char *const empty[] = {"EMPTY", NULL};
    char word[24];
    if (depth > WKT_MAX_DEPTH || !wkt_word(w, word, sizeof word, kinds)) return -1;
    uint32_t kind = 0;
    while (strcmp(kinds[kind], word)) kind++;
    kind++;
    int dims = 2;
    uint32_t dimcode = 0;
    if (wkt_word(w, word, sizeof word, dim_words)) {
        dims = strcmp(word, "ZM") ? 3 : 4;
        dimcode = !strcmp(word, "Z") ? 1000 : !strcmp(word, "M") ? 2000 : 3000;
    }
    wkt_head(w, kind + dimcode);
    if (wkt_word(w, word, sizeof word, empty)) {
        if (kind == 1)
            for (int i = 0; i < dims; i++) wkt_f64(w, NAN);
        else wkt_u32(w, 0);
        return 0;
    }
    if (!wkt_punct(w, '(')) return -1;
    switch (kind) {
    case 1: /* POINT */
        return wkt_coord(w, dims) || !wkt_punct(w, ')') ? -1 : 0;
    case 2: /* LINESTRING */
        return wkt_coords(w, dims);
    case 3: /* POLYGON */
        return wkt_lists(w, dims, 0);
    case 4: { /* MULTIPOINT: (1 2, 3 4) or ((1 2), (3 4)) */
        size_t at = w->out.len;
        uint32_t n = 0;
        wkt_u32(w, 0);
        do {
            wkt_head(w, 1 + dimcode);
            int paren = wkt_punct(w, '(');
            if (wkt_coord(w, dims) || (paren && !wkt_punct(w, ')'))) return -1;
            n++;
        } while (wkt_punct(w, ','));
        wkt_patch(w, at, n);
        return wkt_punct(w, ')') ? 0 : -1;
    }
    case 5: /* MULTILINESTRING */
        return wkt_lists(w, dims, 2 + dimcode);
    case 6: { /* MULTIPOLYGON */
        size_t at = w->out.len;
        uint32_t n = 0;
        wkt_u32(w, 0);
        do {
            wkt_head(w, 3 + dimcode);
            if (!wkt_punct(w, '(') || wkt_lists(w, dims, 0)) return -1;
            n++;
        } while (wkt_punct(w, ','));
        wkt_patch(w, at, n);
        return wkt_punct(w, ')') ? 0 : -1;
    }
    default: { /* GEOMETRYCOLLECTION */
        size_t at = w->out.len;
        uint32_t n = 0;
        wkt_u32(w, 0);
        do {
            if (wkt_geom(w, depth + 1)) return -1;
            n++;
        } while (wkt_punct(w, ','));
        wkt_patch(w, at, n);
        return wkt_punct(w, ')') ? 0 : -1;
    }
    }
}

w2l_rc w2l__cdc_maxwell_wkt(const vctx *x, const char *s, size_t n, w2l_value *out, w2l_error *err)
{
    wkt w = {s, s + n, {0}, 0};
    int bad = wkt_geom(&w, 0);
    wkt_space(&w);
    if (!bad && w.p != w.end) bad = 1;
    if (w.nomem) {
        w2l_buf_release(&w.out);
        return w2l__fail(err, W2L_NOMEM, "out of memory converting a geometry");
    }
    if (bad) {
        size_t at = (size_t)(w.p - s);
        w2l_buf_release(&w.out);
        return w2l__fail(err, W2L_SOURCE,
                         "%s: table %s.%s column %s: value \"%.64s%s\": not WKT geometry text "
                         "(at character %zu)",
                         x->d->what, x->t->db, x->t->name, x->col, s, n > 64 ? "..." : "", at + 1);
    }
    unsigned char *p = w2l__cdc_alloc(&x->d->mem, w.out.len);
    if (!p) {
        w2l_buf_release(&w.out);
        return w2l__fail(err, W2L_NOMEM, "out of memory converting a geometry");
    }
    memcpy(p, w.out.data, w.out.len);
    out->is_null = 0;
    out->v.bytes.ptr = (const char *)p;
    out->v.bytes.len = w.out.len;
    w2l_buf_release(&w.out);
    return W2L_OK;
}

enum tx w2l__cdc_maxwell_txn(const w2l__json *msg, char *key, size_t size)
{
    const char *type = w2l__cdc_str(msg, "type");
    int64_t xid;
    if (type && (!strcmp(type, "bootstrap-start") || !strcmp(type, "bootstrap-complete")))
        return TX_NONE;
    if (!type || !strncmp(type, "table-", 6) || !strncmp(type, "database-", 9) ||
        w2l__json_int64(w2l__json_get(msg, "xid"), &xid))
        return TX_OWN;
    snprintf(key, size, "xid:%lld", (long long)xid);
    int commit = 0;
    w2l__json_bool(w2l__json_get(msg, "commit"), &commit);
    return commit ? TX_LAST : TX_PART;
}
