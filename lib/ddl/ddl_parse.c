/*
 * The MySQL/MariaDB DDL parser: recursive descent over the tokens of ddl_lex.c, producing
 * the statements of ddl.h that schema evolution and the DDL handler act on (w2l-design(7)
 * section 3).
 *
 * Modelled: CREATE [OR REPLACE] [TEMPORARY] TABLE (columns, keys, options, LIKE,
 * ... SELECT), ALTER [ONLINE] [IGNORE] TABLE with comma-separated clauses, DROP TABLE,
 * RENAME TABLE, TRUNCATE, CREATE/DROP DATABASE|SCHEMA, CREATE/DROP INDEX, USE. Every other
 * statement is W2L_DDL_OTHER without being read further, so GRANT, CREATE USER,
 * CREATE PROCEDURE ... are never parse errors. Inside a modelled statement the parser is
 * strict: an ALTER clause or column attribute it does not know is W2L_CORRUPT, because
 * silently skipping one could lose a schema change; the caller's ddl.policy then decides.
 *
 * Statements split at ';', except inside the BEGIN ... END bodies of CREATE PROCEDURE,
 * FUNCTION, TRIGGER, EVENT (block depth counted over BEGIN/CASE/IF/LOOP/WHILE/REPEAT and
 * END), so DDL inside a stored program body is not mistaken for DDL run now.
 * All results live in the list's arena; on error nothing is returned.
 */
#include <stdio.h>

#include "ddl_int.h"

typedef struct parser {
    w2l__ddl_cur c;
    w2l__arena *a;
    const char *db; /* current default database, in the arena; NULL when none */
    w2l_error *err;
} parser;

#define CUR (&p->c)
#define IS(k, w) w2l__ddl_is_kw(CUR, (k), (w))
#define ACCEPT(w) w2l__ddl_accept_kw(CUR, (w))
#define ISP(k, ch) w2l__ddl_is_punct(CUR, (k), (ch))
#define ACCEPTP(ch) w2l__ddl_accept_punct(CUR, (ch))
#define FAIL(what) w2l__ddl_error(CUR, (what))
#define AT_END() w2l__ddl_at_end(CUR)

static const char *const kind_names[] = {
    "OTHER", "CREATE_TABLE", "CREATE_TABLE_LIKE", "CREATE_TABLE_SELECT", "TEMPORARY",
    "ALTER_TABLE", "DROP_TABLE", "RENAME_TABLE", "TRUNCATE_TABLE", "CREATE_DATABASE",
    "DROP_DATABASE", "CREATE_INDEX", "DROP_INDEX", "USE", "RESYNC_TABLE"};

const char *w2l__ddl_kind_name(w2l__ddl_kind k)
{
    return (unsigned)k < W2L_ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

/* Grows an arena array to hold n + 1 elements. */
static void *grow(w2l__arena *a, void *v, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : 8;
    void *nv = w2l__arena_alloc(a, nc * elem);
    if (!nv) return NULL;
    if (n) memcpy(nv, v, n * elem);
    *cap = nc;
    return nv;
}

static char *upper_word(parser *p, const w2l__ddl_tok *t)
{
    char *s = w2l__arena_strndup(p->a, p->c.sql + t->off, t->len);
    for (char *q = s; q && *q; q++)
        if (*q >= 'a' && *q <= 'z') *q = (char)(*q - 32);
    return s;
}

/* "WORD1 WORD2" of the tokens at i and i+1 (words only), uppercase. */
static const char *head_words(parser *p, size_t n)
{
    char buf[64] = "";
    size_t len = 0;
    for (size_t k = 0; k < n; k++) {
        const w2l__ddl_tok *t = w2l__ddl_peek(CUR, k);
        if (t->kind != W2L__TK_WORD || t->len > 30) break;
        if (len) buf[len++] = ' ';
        memcpy(buf + len, p->c.sql + t->off, t->len);
        len += t->len;
    }
    buf[len] = '\0';
    for (char *q = buf; *q; q++)
        if (*q >= 'a' && *q <= 'z') *q = (char)(*q - 32);
    return w2l__arena_strndup(p->a, buf, len);
}

static w2l_rc table_name(parser *p, w2l__ddl_name *out)
{
    const char *a;
    W2L_TRY(w2l__ddl_ident(CUR, &a, "expected a table name"));
    if (ACCEPTP('.')) {
        out->db = a;
        W2L_TRY(w2l__ddl_ident(CUR, &out->name, "expected a table name after '.'"));
    } else {
        out->db = p->db;
        out->name = a;
    }
    return W2L_OK;
}

static int accept_if_exists(parser *p)
{
    if (IS(0, "IF") && IS(1, "EXISTS")) {
        p->c.i += 2;
        return 1;
    }
    return 0;
}

static int accept_if_not_exists(parser *p)
{
    if (IS(0, "IF") && IS(1, "NOT") && IS(2, "EXISTS")) {
        p->c.i += 3;
        return 1;
    }
    return 0;
}

/* MariaDB's WAIT n | NOWAIT after a table name. */
static void skip_wait(parser *p)
{
    if (IS(0, "WAIT") && w2l__ddl_peek(CUR, 1)->kind == W2L__TK_NUMBER) p->c.i += 2;
    else ACCEPT("NOWAIT");
}

/* Moves to the next ',' or ')' at depth 0 (not consumed) or the end. */
static w2l_rc skip_element(parser *p)
{
    while (!AT_END() && !ISP(0, ',') && !ISP(0, ')')) {
        if (ISP(0, '(')) W2L_TRY(w2l__ddl_skip_parens(CUR));
        else p->c.i++;
    }
    return W2L_OK;
}

/* Moves to the next ',' at depth 0 (not consumed) or the end. */
static w2l_rc skip_clause(parser *p)
{
    while (!AT_END() && !ISP(0, ',')) {
        if (ISP(0, '(')) W2L_TRY(w2l__ddl_skip_parens(CUR));
        else if (ISP(0, ')')) return FAIL("unbalanced ')'");
        else p->c.i++;
    }
    return W2L_OK;
}

/* One operand of a DEFAULT / ON UPDATE expression: literals (with sign, charset
 * introducer, DATE '...'), NULL/TRUE, names, function calls, (parenthesized) exprs. */
static w2l_rc skip_operand(parser *p)
{
    while (ISP(0, '-') || ISP(0, '+') || ISP(0, '~') || ISP(0, '!')) p->c.i++;
    const w2l__ddl_tok *t = w2l__ddl_peek(CUR, 0);
    if (ISP(0, '(')) return w2l__ddl_skip_parens(CUR);
    if (t->kind == W2L__TK_STRING) {
        while (w2l__ddl_peek(CUR, 0)->kind == W2L__TK_STRING) p->c.i++;
        return W2L_OK;
    }
    if (t->kind == W2L__TK_NUMBER) {
        p->c.i++;
        return W2L_OK;
    }
    if (t->kind == W2L__TK_WORD) {
        if (IS(0, "NEXT") && IS(1, "VALUE") && IS(2, "FOR")) { /* MariaDB sequences */
            p->c.i += 3;
            w2l__ddl_name seq;
            return table_name(p, &seq);
        }
        p->c.i++;
        if (w2l__ddl_peek(CUR, 0)->kind == W2L__TK_STRING) { /* _utf8mb4'x', DATE'...' */
            while (w2l__ddl_peek(CUR, 0)->kind == W2L__TK_STRING) p->c.i++;
            return W2L_OK;
        }
        if (ISP(0, '(')) return w2l__ddl_skip_parens(CUR);
        return W2L_OK;
    }
    return FAIL("expected an expression");
}

static w2l_rc skip_expr(parser *p)
{
    W2L_TRY(skip_operand(p));
    while (ISP(0, '+') || ISP(0, '-') || ISP(0, '*') || ISP(0, '/') || ISP(0, '%') ||
           ISP(0, '|') || ISP(0, '&') || ISP(0, '^')) {
        while (ISP(0, '+') || ISP(0, '-') || ISP(0, '*') || ISP(0, '/') || ISP(0, '%') ||
               ISP(0, '|') || ISP(0, '&') || ISP(0, '^'))
            p->c.i++;
        W2L_TRY(skip_operand(p));
    }
    return W2L_OK;
}

/* Reads ( key_part, ... ): names kept (prefix lengths and ASC/DESC dropped); functional
 * key parts ((expr)) are skipped. */
static w2l_rc key_parts(parser *p, const char *const **out, size_t *n)
{
    if (!ACCEPTP('(')) return FAIL("expected '(' and key columns");
    const char **v = NULL;
    size_t cnt = 0, cap = 0;
    for (;;) {
        if (ISP(0, '(')) {
            W2L_TRY(w2l__ddl_skip_parens(CUR));
        } else {
            v = grow(p->a, v, cnt, &cap, sizeof *v);
            W2L_NOMEM_IF(!v, p->err);
            W2L_TRY(w2l__ddl_ident(CUR, &v[cnt], "expected a key column"));
            cnt++;
            if (ISP(0, '(')) W2L_TRY(w2l__ddl_skip_parens(CUR));
        }
        if (!ACCEPT("ASC")) ACCEPT("DESC");
        if (ACCEPTP(')')) break;
        if (!ACCEPTP(',')) return FAIL("expected ',' or ')' in key columns");
    }
    *out = v;
    *n = cnt;
    return W2L_OK;
}

/* A value of a table option or attribute: one token, or a parenthesized list. */
static w2l_rc option_value(parser *p)
{
    if (ISP(0, '(')) return w2l__ddl_skip_parens(CUR);
    if (AT_END() || ISP(0, ',') || ISP(0, ')')) return FAIL("expected a value");
    p->c.i++;
    return W2L_OK;
}

static w2l_rc references(parser *p)
{
    w2l__ddl_name ref;
    W2L_TRY(table_name(p, &ref));
    if (ISP(0, '(')) W2L_TRY(w2l__ddl_skip_parens(CUR));
    if (ACCEPT("MATCH")) W2L_TRY(option_value(p));
    while (IS(0, "ON") && (IS(1, "DELETE") || IS(1, "UPDATE"))) {
        p->c.i += 2;
        if (ACCEPT("SET")) {
            if (!ACCEPT("NULL") && !ACCEPT("DEFAULT")) return FAIL("expected NULL or DEFAULT");
        } else if (ACCEPT("NO")) {
            if (!ACCEPT("ACTION")) return FAIL("expected ACTION");
        } else if (!ACCEPT("RESTRICT") && !ACCEPT("CASCADE")) {
            return FAIL("expected a referential action");
        }
    }
    return W2L_OK;
}

static int at_column_end(parser *p)
{
    return AT_END() || ISP(0, ',') || ISP(0, ')') || IS(0, "FIRST") || IS(0, "AFTER");
}

/* name type attributes... */
static w2l_rc column_def(parser *p, w2l__ddl_column *col)
{
    memset(col, 0, sizeof *col);
    W2L_TRY(w2l__ddl_ident(CUR, &col->name, "expected a column name"));
    int serial = IS(0, "SERIAL");
    W2L_TRY(w2l__ddl_read_type(CUR, &col->type));
    if (serial) col->not_null = col->auto_increment = col->unique = 1;
    while (!at_column_end(p)) {
        size_t at = p->c.i;
        if (IS(0, "NOT") && IS(1, "NULL")) {
            p->c.i += 2;
            col->not_null = 1;
        } else if (ACCEPT("NULL")) {
            col->not_null = 0;
        } else if (ACCEPT("DEFAULT")) {
            size_t s = p->c.i;
            W2L_TRY(skip_expr(p));
            col->default_text = w2l__ddl_span(CUR, s, p->c.i);
            W2L_NOMEM_IF(!col->default_text, p->err);
        } else if (ACCEPT("AUTO_INCREMENT")) {
            col->auto_increment = 1;
        } else if (IS(0, "ON") && IS(1, "UPDATE")) {
            p->c.i += 2;
            size_t s = p->c.i;
            W2L_TRY(skip_expr(p));
            col->on_update = w2l__ddl_span(CUR, s, p->c.i);
            W2L_NOMEM_IF(!col->on_update, p->err);
        } else if (ACCEPT("COMMENT")) {
            W2L_TRY(w2l__ddl_string(CUR, &col->comment, "expected a quoted comment"));
        } else if (IS(0, "COLLATE") || IS(0, "CHARSET") || (IS(0, "CHARACTER") && IS(1, "SET"))) {
            int is_collate = IS(0, "COLLATE");
            p->c.i += IS(0, "CHARACTER") ? 2 : 1;
            ACCEPTP('=');
            const w2l__ddl_tok *t = w2l__ddl_peek(CUR, 0);
            if (t->kind == W2L__TK_END || t->kind == W2L__TK_PUNCT || t->kind == W2L__TK_NUMBER)
                return FAIL("expected a character set or collation name");
            char *v = w2l__ddl_decode(CUR, t);
            W2L_NOMEM_IF(!v, p->err);
            for (char *q = v; *q; q++)
                if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
            p->c.i++;
            if (is_collate) col->type.collate = v;
            else col->type.charset = v;
            w2l__mysql_type_finish(&col->type);
        } else if ((IS(0, "GENERATED") && IS(1, "ALWAYS")) || (IS(0, "AS") && ISP(1, '('))) {
            if (ACCEPT("GENERATED")) p->c.i++;
            if (!ACCEPT("AS")) return FAIL("expected AS");
            W2L_TRY(w2l__ddl_skip_parens(CUR));
            col->generated = W2L_DDL_GEN_VIRTUAL;
        } else if (ACCEPT("VIRTUAL")) {
            col->generated = W2L_DDL_GEN_VIRTUAL;
        } else if (ACCEPT("STORED") || ACCEPT("PERSISTENT")) {
            col->generated = W2L_DDL_GEN_STORED;
        } else if (ACCEPT("INVISIBLE")) {
            col->invisible = 1;
        } else if (ACCEPT("VISIBLE")) {
            col->invisible = 0;
        } else if (IS(0, "PRIMARY") && IS(1, "KEY")) {
            p->c.i += 2;
            col->primary_key = 1;
        } else if (ACCEPT("KEY")) {
            col->primary_key = 1; /* a bare KEY in a column definition means PRIMARY KEY */
        } else if (ACCEPT("UNIQUE")) {
            ACCEPT("KEY");
            col->unique = 1;
        } else if (ACCEPT("COLUMN_FORMAT") || ACCEPT("STORAGE") || ACCEPT("SRID") ||
                   ACCEPT("COMPRESSED") || ACCEPT("REF_SYSTEM_ID") ||
                   ACCEPT("ENGINE_ATTRIBUTE") || ACCEPT("SECONDARY_ENGINE_ATTRIBUTE")) {
            int eq = ACCEPTP('=');
            const w2l__ddl_tok *prev = &p->c.tok[at];
            int optional_value = w2l__ddl_word_eq(p->c.sql + prev->off, prev->len, "COMPRESSED");
            if (eq || !optional_value) W2L_TRY(option_value(p));
        } else if (ACCEPT("REFERENCES")) {
            W2L_TRY(references(p));
        } else if (IS(0, "CONSTRAINT") || IS(0, "CHECK")) {
            if (ACCEPT("CONSTRAINT") && !IS(0, "CHECK"))
                W2L_TRY(w2l__ddl_ident(CUR, &(const char *){NULL}, "expected a constraint name"));
            if (!ACCEPT("CHECK")) return FAIL("expected CHECK");
            W2L_TRY(w2l__ddl_skip_parens(CUR));
            if (IS(0, "NOT") && IS(1, "ENFORCED")) p->c.i += 2;
            else ACCEPT("ENFORCED");
        } else if ((IS(0, "WITH") || IS(0, "WITHOUT")) && IS(1, "SYSTEM") && IS(2, "VERSIONING")) {
            p->c.i += 3;
        } else if (IS(0, "SERIAL") && IS(1, "DEFAULT") && IS(2, "VALUE")) {
            p->c.i += 3;
            col->not_null = col->auto_increment = col->unique = 1;
        } else if (w2l__ddl_peek(CUR, 0)->kind == W2L__TK_WORD && ISP(1, '=')) {
            p->c.i += 2; /* MariaDB engine-defined attribute: name = value */
            W2L_TRY(option_value(p));
        } else {
            return FAIL("unexpected text in column definition");
        }
    }
    char buf[1];
    size_t need = w2l__mysql_type_format(&col->type, buf, sizeof buf);
    char *txt = w2l__arena_alloc(p->a, need + 1);
    W2L_NOMEM_IF(!txt, p->err);
    w2l__mysql_type_format(&col->type, txt, need + 1);
    col->type_text = txt;
    return W2L_OK;
}

static w2l_rc position(parser *p, w2l__ddl_alter *al)
{
    if (ACCEPT("FIRST")) {
        al->position = W2L_DDL_POS_FIRST;
    } else if (ACCEPT("AFTER")) {
        al->position = W2L_DDL_POS_AFTER;
        W2L_TRY(w2l__ddl_ident(CUR, &al->after, "expected a column name after AFTER"));
    }
    return W2L_OK;
}

/* ---- CREATE TABLE ---- */

static int is_query_start(parser *p, size_t k)
{
    return IS(k, "SELECT") || (IS(k, "WITH") && !IS(k + 1, "SYSTEM")) || IS(k, "VALUES") ||
           IS(k, "TABLE");
}

static w2l_rc create_table(parser *p, w2l__ddl_stmt *st, int temporary)
{
    st->if_not_exists = accept_if_not_exists(p);
    W2L_TRY(table_name(p, &st->table));
    st->kind = W2L_DDL_CREATE_TABLE;
    if (temporary) {
        st->kind = W2L_DDL_TEMPORARY;
        return W2L_OK;
    }
    if (ACCEPT("LIKE") || (ISP(0, '(') && IS(1, "LIKE") && (p->c.i += 2))) {
        st->kind = W2L_DDL_CREATE_TABLE_LIKE;
        W2L_TRY(table_name(p, &st->like));
        if (ACCEPTP(')')) {}
        if (!AT_END()) return FAIL("unexpected text after CREATE TABLE ... LIKE");
        return W2L_OK;
    }
    w2l__ddl_column *cols = NULL;
    size_t ncols = 0, cap = 0;
    int have_list = 0;
    if (ISP(0, '(') && !is_query_start(p, 1) && !ISP(1, '(')) {
        p->c.i++;
        have_list = 1;
        for (;;) {
            int constraint = ACCEPT("CONSTRAINT");
            if (constraint && !IS(0, "PRIMARY") && !IS(0, "UNIQUE") && !IS(0, "FOREIGN") &&
                !IS(0, "CHECK"))
                W2L_TRY(w2l__ddl_ident(CUR, &(const char *){NULL}, "expected a constraint name"));
            if (IS(0, "PRIMARY") && IS(1, "KEY")) {
                p->c.i += 2;
                if (st->npk) return FAIL("multiple primary keys");
                if (!ISP(0, '(') && !IS(0, "USING") && w2l__ddl_is_ident(CUR, 0)) p->c.i++;
                if (ACCEPT("USING")) W2L_TRY(option_value(p));
                W2L_TRY(key_parts(p, &st->pk, &st->npk));
                W2L_TRY(skip_element(p));
            } else if (constraint || IS(0, "UNIQUE") || IS(0, "KEY") || IS(0, "INDEX") ||
                       IS(0, "FULLTEXT") || IS(0, "SPATIAL") || IS(0, "FOREIGN") ||
                       IS(0, "CHECK") || (IS(0, "PERIOD") && IS(1, "FOR"))) {
                p->c.i++;
                W2L_TRY(skip_element(p));
            } else {
                cols = grow(p->a, cols, ncols, &cap, sizeof *cols);
                W2L_NOMEM_IF(!cols, p->err);
                W2L_TRY(column_def(p, &cols[ncols]));
                if (IS(0, "FIRST") || IS(0, "AFTER")) return FAIL("unexpected column position");
                ncols++;
            }
            if (ACCEPTP(')')) break;
            if (!ACCEPTP(',')) return FAIL("expected ',' or ')' after a table element");
        }
    }
    /* table options, partitioning, and possibly the query of CREATE ... SELECT */
    int query = 0;
    if (!have_list && !ISP(0, '(') && !is_query_start(p, 0) && !IS(0, "AS") && !IS(0, "IGNORE") &&
        !IS(0, "REPLACE"))
        return FAIL("expected '(' with column definitions, LIKE or SELECT");
    while (!AT_END()) {
        if (is_query_start(p, 0) || (ISP(0, '(') && (is_query_start(p, 1) || ISP(1, '('))) ||
            (IS(0, "AS") && (is_query_start(p, 1) || ISP(1, '(')))) {
            query = 1;
            break;
        }
        if (ISP(0, '(')) W2L_TRY(w2l__ddl_skip_parens(CUR));
        else if (ISP(0, ')')) return FAIL("unbalanced ')'");
        else p->c.i++;
    }
    if (query) st->kind = W2L_DDL_CREATE_TABLE_SELECT;
    else if (!have_list) return FAIL("expected column definitions");
    /* inline PRIMARY KEY */
    for (size_t i = 0; i < ncols; i++)
        if (cols[i].primary_key) {
            if (st->npk) return w2l__fail(p->err, W2L_CORRUPT,
                                          "DDL: multiple primary keys in CREATE TABLE %.128s",
                                          st->table.name);
            const char **pk = w2l__arena_alloc(p->a, sizeof *pk);
            W2L_NOMEM_IF(!pk, p->err);
            pk[0] = cols[i].name;
            st->pk = pk;
            st->npk = 1;
        }
    st->cols = cols;
    st->ncols = ncols;
    return W2L_OK;
}

/* ---- ALTER TABLE ---- */

static int is_table_option(parser *p)
{
    static const char *const opts[] = {
        "ENGINE", "AUTO_INCREMENT", "AVG_ROW_LENGTH", "CHECKSUM", "TABLE_CHECKSUM", "COMMENT",
        "COMPRESSION", "CONNECTION", "DELAY_KEY_WRITE", "ENCRYPTION", "ENCRYPTED",
        "ENCRYPTION_KEY_ID", "INSERT_METHOD", "KEY_BLOCK_SIZE", "MAX_ROWS", "MIN_ROWS",
        "PACK_KEYS", "PASSWORD", "ROW_FORMAT", "STATS_AUTO_RECALC", "STATS_PERSISTENT",
        "STATS_SAMPLE_PAGES", "TABLESPACE", "UNION", "PAGE_CHECKSUM", "PAGE_COMPRESSED",
        "PAGE_COMPRESSION_LEVEL", "TRANSACTIONAL", "IETF_QUOTES", "SEQUENCE", "ALGORITHM",
        "LOCK", "SECONDARY_ENGINE", "SECONDARY_ENGINE_ATTRIBUTE", "ENGINE_ATTRIBUTE",
        "AUTOEXTEND_SIZE", "CHARSET", "COLLATE", "WITH_SYSTEM_VERSIONING"};
    for (size_t i = 0; i < W2L_ARRAY_LEN(opts); i++)
        if (IS(0, opts[i])) return 1;
    if (IS(0, "DEFAULT") && (IS(1, "CHARSET") || IS(1, "COLLATE") || IS(1, "CHARACTER")))
        return 1;
    if (IS(0, "CHARACTER") && IS(1, "SET")) return 1;
    if ((IS(0, "DATA") || IS(0, "INDEX")) && IS(1, "DIRECTORY")) return 1;
    return w2l__ddl_peek(CUR, 0)->kind == W2L__TK_WORD && ISP(1, '=');
}

static w2l_rc table_option(parser *p, w2l__ddl_alter *al)
{
    ACCEPT("DEFAULT");
    al->what = upper_word(p, w2l__ddl_peek(CUR, 0));
    W2L_NOMEM_IF(!al->what, p->err);
    if ((IS(0, "CHARACTER") && IS(1, "SET")) || IS(0, "DATA") || IS(0, "INDEX")) p->c.i++;
    p->c.i++;
    ACCEPTP('=');
    return option_value(p);
}

static const char *const no_effect_words[] = {
    "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR", "TRUNCATE", "COALESCE", "REORGANIZE",
    "EXCHANGE", "DISCARD", "IMPORT", "REMOVE", "UPGRADE", "PARTITION", "ENABLE", "DISABLE",
    "FORCE", "WITH", "WITHOUT", "ORDER", "SECONDARY_LOAD", "SECONDARY_UNLOAD"};

static w2l_rc alter_clause(parser *p, w2l__ddl_stmt *st, w2l__ddl_alter **v, size_t *n,
                           size_t *cap)
{
    *v = grow(p->a, *v, *n, cap, sizeof **v);
    W2L_NOMEM_IF(!*v, p->err);
    w2l__ddl_alter *al = &(*v)[*n];
    memset(al, 0, sizeof *al);
    (*n)++;
    const w2l__ddl_tok *first = w2l__ddl_peek(CUR, 0);
    if (first->kind != W2L__TK_WORD) return FAIL("expected an ALTER TABLE clause");
    if (ACCEPT("ADD")) {
        int column = ACCEPT("COLUMN");
        if (!column) {
            int constraint = IS(0, "CONSTRAINT");
            if (constraint) {
                p->c.i++;
                if (!IS(0, "PRIMARY") && !IS(0, "UNIQUE") && !IS(0, "FOREIGN") && !IS(0, "CHECK"))
                    W2L_TRY(
                        w2l__ddl_ident(CUR, &(const char *){ NULL }, "expected a constraint name"));
            }
            if (IS(0, "PRIMARY") && IS(1, "KEY")) {
                p->c.i += 2;
                al->kind = W2L_ALTER_ADD_PRIMARY_KEY;
                al->what = "ADD PRIMARY KEY";
                if (!ISP(0, '(') && !IS(0, "USING") && w2l__ddl_is_ident(CUR, 0)) p->c.i++;
                if (ACCEPT("USING")) W2L_TRY(option_value(p));
                W2L_TRY(key_parts(p, &al->keys, &al->nkeys));
                return skip_clause(p);
            }
            if (constraint || IS(0, "UNIQUE") || IS(0, "KEY") || IS(0, "INDEX") ||
                IS(0, "FULLTEXT") || IS(0, "SPATIAL") || IS(0, "FOREIGN") || IS(0, "CHECK") ||
                (IS(0, "PERIOD") && IS(1, "FOR")) || (IS(0, "SYSTEM") && IS(1, "VERSIONING")) ||
                (IS(0, "PARTITION") && (ISP(1, '(') || IS(1, "PARTITIONS") || IS(1, "IF")))) {
                al->kind = W2L_ALTER_NONE;
                al->what = constraint ? "ADD CONSTRAINT" : head_words(p, 1);
                if (!constraint) {
                    char *w = w2l__arena_alloc(p->a, strlen(al->what ? al->what : "") + 5);
                    W2L_NOMEM_IF(!al->what || !w, p->err);
                    sprintf(w, "ADD %s", al->what);
                    al->what = w;
                }
                return skip_clause(p);
            }
        }
        al->if_exists = accept_if_not_exists(p);
        al->kind = W2L_ALTER_ADD_COLUMN;
        al->what = "ADD COLUMN";
        if (ACCEPTP('(')) { /* ADD [COLUMN] (c1 t1, c2 t2): one clause per column */
            int ine = al->if_exists;
            (*n)--;
            for (;;) {
                *v = grow(p->a, *v, *n, cap, sizeof **v);
                W2L_NOMEM_IF(!*v, p->err);
                al = &(*v)[(*n)++];
                memset(al, 0, sizeof *al);
                al->kind = W2L_ALTER_ADD_COLUMN;
                al->what = "ADD COLUMN";
                al->if_exists = ine;
                if (IS(0, "PRIMARY") || IS(0, "UNIQUE") || IS(0, "KEY") || IS(0, "INDEX") ||
                    IS(0, "CONSTRAINT") || IS(0, "FOREIGN") || IS(0, "CHECK")) {
                    al->kind = W2L_ALTER_NONE;
                    al->what = "ADD INDEX";
                    if (IS(0, "PRIMARY")) {
                        p->c.i += 2;
                        al->kind = W2L_ALTER_ADD_PRIMARY_KEY;
                        al->what = "ADD PRIMARY KEY";
                        W2L_TRY(key_parts(p, &al->keys, &al->nkeys));
                    }
                    W2L_TRY(skip_element(p));
                } else {
                    W2L_TRY(column_def(p, &al->col));
                    al->name = al->col.name;
                }
                if (ACCEPTP(')')) break;
                if (!ACCEPTP(',')) return FAIL("expected ',' or ')' in ADD COLUMN list");
            }
            return W2L_OK;
        }
        W2L_TRY(column_def(p, &al->col));
        al->name = al->col.name;
        return position(p, al);
    }
    if (ACCEPT("DROP")) {
        if (IS(0, "PRIMARY") && IS(1, "KEY")) {
            p->c.i += 2;
            al->kind = W2L_ALTER_DROP_PRIMARY_KEY;
            al->what = "DROP PRIMARY KEY";
            return W2L_OK;
        }
        if (IS(0, "INDEX") || IS(0, "KEY") || IS(0, "FOREIGN") || IS(0, "CONSTRAINT") ||
            IS(0, "CHECK") || IS(0, "PARTITION") || (IS(0, "PERIOD") && IS(1, "FOR")) ||
            (IS(0, "SYSTEM") && IS(1, "VERSIONING")) || (IS(0, "UNIQUE") && !ISP(1, ','))) {
            al->kind = W2L_ALTER_NONE;
            const char *w = head_words(p, IS(0, "FOREIGN") ? 2 : 1);
            char *what = w ? w2l__arena_alloc(p->a, strlen(w) + 6) : NULL;
            W2L_NOMEM_IF(!what, p->err);
            sprintf(what, "DROP %s", w);
            al->what = what;
            return skip_clause(p);
        }
        ACCEPT("COLUMN");
        al->kind = W2L_ALTER_DROP_COLUMN;
        al->what = "DROP COLUMN";
        al->if_exists = accept_if_exists(p);
        W2L_TRY(w2l__ddl_ident(CUR, &al->name, "expected a column name"));
        if (!ACCEPT("RESTRICT")) ACCEPT("CASCADE");
        return W2L_OK;
    }
    if (ACCEPT("RENAME")) {
        if (IS(0, "COLUMN")) {
            p->c.i++;
            al->kind = W2L_ALTER_RENAME_COLUMN;
            al->what = "RENAME COLUMN";
            W2L_TRY(w2l__ddl_ident(CUR, &al->name, "expected a column name"));
            if (!ACCEPT("TO")) return FAIL("expected TO");
            return w2l__ddl_ident(CUR, &al->new_name, "expected a new column name");
        }
        if ((IS(0, "INDEX") || IS(0, "KEY")) && w2l__ddl_is_ident(CUR, 1) && IS(2, "TO")) {
            al->kind = W2L_ALTER_NONE;
            al->what = "RENAME INDEX";
            return skip_clause(p);
        }
        if (!ACCEPT("TO") && !ACCEPT("AS")) ACCEPTP('=');
        al->kind = W2L_ALTER_RENAME_TABLE;
        al->what = "RENAME TO";
        return table_name(p, &al->new_table);
    }
    if (ACCEPT("CHANGE")) {
        ACCEPT("COLUMN");
        al->kind = W2L_ALTER_CHANGE_COLUMN;
        al->what = "CHANGE COLUMN";
        al->if_exists = accept_if_exists(p);
        W2L_TRY(w2l__ddl_ident(CUR, &al->name, "expected a column name"));
        W2L_TRY(column_def(p, &al->col));
        al->new_name = al->col.name;
        return position(p, al);
    }
    if (ACCEPT("MODIFY")) {
        ACCEPT("COLUMN");
        al->kind = W2L_ALTER_MODIFY_COLUMN;
        al->what = "MODIFY COLUMN";
        al->if_exists = accept_if_exists(p);
        W2L_TRY(column_def(p, &al->col));
        al->name = al->col.name;
        return position(p, al);
    }
    if (ACCEPT("ALTER")) {
        al->kind = W2L_ALTER_NONE;
        if (IS(0, "INDEX") || IS(0, "KEY") || IS(0, "CHECK") || IS(0, "CONSTRAINT")) {
            al->what = "ALTER INDEX";
            return skip_clause(p);
        }
        ACCEPT("COLUMN");
        al->what = "ALTER COLUMN";
        W2L_TRY(w2l__ddl_ident(CUR, &al->name, "expected a column name"));
        if (IS(0, "SET") && IS(1, "DEFAULT")) {
            p->c.i += 2;
            return skip_expr(p);
        }
        if ((IS(0, "DROP") && IS(1, "DEFAULT"))) {
            p->c.i += 2;
            return W2L_OK;
        }
        if (IS(0, "SET") && (IS(1, "VISIBLE") || IS(1, "INVISIBLE"))) {
            p->c.i += 2;
            return W2L_OK;
        }
        return FAIL("expected SET DEFAULT, DROP DEFAULT or SET [IN]VISIBLE");
    }
    if (ACCEPT("CONVERT")) {
        if (!ACCEPT("TO")) return FAIL("expected TO");
        if (IS(0, "CHARACTER") && IS(1, "SET")) p->c.i += 2;
        else if (!ACCEPT("CHARSET")) return FAIL("expected CHARACTER SET");
        al->kind = W2L_ALTER_CONVERT_CHARSET;
        al->what = "CONVERT TO CHARACTER SET";
        const w2l__ddl_tok *t = w2l__ddl_peek(CUR, 0);
        if (t->kind != W2L__TK_WORD && t->kind != W2L__TK_STRING && t->kind != W2L__TK_QIDENT)
            return FAIL("expected a character set");
        char *cs = w2l__ddl_decode(CUR, t);
        W2L_NOMEM_IF(!cs, p->err);
        for (char *q = cs; *q; q++)
            if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
        al->charset = cs;
        p->c.i++;
        if (ACCEPT("COLLATE")) W2L_TRY(option_value(p));
        return W2L_OK;
    }
    if (is_table_option(p)) {
        al->kind = W2L_ALTER_NONE;
        return table_option(p, al);
    }
    for (size_t i = 0; i < W2L_ARRAY_LEN(no_effect_words); i++)
        if (IS(0, no_effect_words[i])) {
            al->kind = W2L_ALTER_NONE;
            al->what = head_words(p, 2);
            W2L_NOMEM_IF(!al->what, p->err);
            return skip_clause(p);
        }
    return FAIL("unsupported ALTER TABLE clause");
}

static w2l_rc alter_table(parser *p, w2l__ddl_stmt *st)
{
    st->kind = W2L_DDL_ALTER_TABLE;
    st->if_exists = accept_if_exists(p);
    W2L_TRY(table_name(p, &st->table));
    skip_wait(p);
    w2l__ddl_alter *v = NULL;
    size_t n = 0, cap = 0;
    while (!AT_END()) {
        W2L_TRY(alter_clause(p, st, &v, &n, &cap));
        if (ACCEPTP(',')) continue;
        if (AT_END()) break;
        /* table options may follow each other without commas; so may partitioning */
        if (n && v[n - 1].kind == W2L_ALTER_NONE && (is_table_option(p) || IS(0, "PARTITION") ||
                                                    IS(0, "REMOVE")))
            continue;
        if (IS(0, "PARTITION") || IS(0, "REMOVE")) continue;
        return FAIL("expected ',' or the end of ALTER TABLE");
    }
    st->alters = v;
    st->nalters = n;
    return W2L_OK;
}

/* ---- other modelled statements ---- */

static w2l_rc name_list(parser *p, w2l__ddl_stmt *st)
{
    w2l__ddl_name *v = NULL;
    size_t n = 0, cap = 0;
    do {
        v = grow(p->a, v, n, &cap, sizeof *v);
        W2L_NOMEM_IF(!v, p->err);
        W2L_TRY(table_name(p, &v[n]));
        n++;
    } while (ACCEPTP(','));
    st->tables = v;
    st->ntables = n;
    return W2L_OK;
}

static w2l_rc drop_stmt(parser *p, w2l__ddl_stmt *st)
{
    int temporary = ACCEPT("TEMPORARY");
    if (ACCEPT("TABLE") || ACCEPT("TABLES")) {
        st->kind = temporary ? W2L_DDL_TEMPORARY : W2L_DDL_DROP_TABLE;
        st->if_exists = accept_if_exists(p);
        W2L_TRY(name_list(p, st));
        skip_wait(p);
        if (!ACCEPT("RESTRICT")) ACCEPT("CASCADE");
        if (!AT_END()) return FAIL("unexpected text after DROP TABLE");
        return W2L_OK;
    }
    if (temporary) return W2L_OK; /* not a statement we model */
    if (ACCEPT("DATABASE") || ACCEPT("SCHEMA")) {
        st->kind = W2L_DDL_DROP_DATABASE;
        st->if_exists = accept_if_exists(p);
        W2L_TRY(w2l__ddl_ident(CUR, &st->database, "expected a database name"));
        return W2L_OK;
    }
    if (ACCEPT("INDEX")) {
        st->kind = W2L_DDL_DROP_INDEX;
        if (!ACCEPT("ONLINE")) ACCEPT("OFFLINE");
        st->if_exists = accept_if_exists(p);
        const char *idx;
        W2L_TRY(w2l__ddl_ident(CUR, &idx, "expected an index name"));
        if (!ACCEPT("ON")) return FAIL("expected ON");
        W2L_TRY(table_name(p, &st->table));
        p->c.i = p->c.end; /* ALGORITHM=, LOCK= */
        return W2L_OK;
    }
    return W2L_OK;
}

static w2l_rc create_stmt(parser *p, w2l__ddl_stmt *st)
{
    if (IS(0, "OR") && IS(1, "REPLACE")) {
        p->c.i += 2;
        st->or_replace = 1;
    }
    int temporary = ACCEPT("TEMPORARY");
    if (ACCEPT("TABLE")) return create_table(p, st, temporary);
    if (temporary) return W2L_OK;
    if (ACCEPT("DATABASE") || ACCEPT("SCHEMA")) {
        st->kind = W2L_DDL_CREATE_DATABASE;
        st->if_not_exists = accept_if_not_exists(p);
        W2L_TRY(w2l__ddl_ident(CUR, &st->database, "expected a database name"));
        p->c.i = p->c.end; /* options: character set, collation, comment */
        return W2L_OK;
    }
    size_t save = p->c.i;
    if (!ACCEPT("ONLINE")) ACCEPT("OFFLINE");
    if (!ACCEPT("UNIQUE") && !ACCEPT("FULLTEXT")) ACCEPT("SPATIAL");
    if (ACCEPT("INDEX")) {
        st->kind = W2L_DDL_CREATE_INDEX;
        st->if_not_exists = accept_if_not_exists(p);
        const char *idx;
        W2L_TRY(w2l__ddl_ident(CUR, &idx, "expected an index name"));
        if (ACCEPT("USING")) W2L_TRY(option_value(p));
        if (!ACCEPT("ON")) return FAIL("expected ON");
        W2L_TRY(table_name(p, &st->table));
        p->c.i = p->c.end; /* key parts and index options */
        return W2L_OK;
    }
    p->c.i = save;
    return W2L_OK;
}

static w2l_rc parse_stmt(parser *p, w2l__ddl_stmt *st)
{
    st->kind = W2L_DDL_OTHER;
    st->head = head_words(p, 2);
    W2L_NOMEM_IF(!st->head, p->err);
    if (ACCEPT("CREATE")) return create_stmt(p, st);
    if (ACCEPT("DROP")) return drop_stmt(p, st);
    if (IS(0, "ALTER")) {
        size_t k = 1;
        if (IS(k, "ONLINE") || IS(k, "OFFLINE")) k++;
        if (IS(k, "IGNORE")) k++;
        if (!IS(k, "TABLE")) return W2L_OK;
        p->c.i += k + 1;
        return alter_table(p, st);
    }
    if (IS(0, "RENAME") && (IS(1, "TABLE") || IS(1, "TABLES"))) {
        p->c.i += 2;
        st->kind = W2L_DDL_RENAME_TABLE;
        st->if_exists = accept_if_exists(p);
        w2l__ddl_rename *v = NULL;
        size_t n = 0, cap = 0;
        do {
            v = grow(p->a, v, n, &cap, sizeof *v);
            W2L_NOMEM_IF(!v, p->err);
            W2L_TRY(table_name(p, &v[n].from));
            skip_wait(p);
            if (!ACCEPT("TO")) return FAIL("expected TO");
            W2L_TRY(table_name(p, &v[n].to));
            n++;
        } while (ACCEPTP(','));
        st->renames = v;
        st->nrenames = n;
        if (!AT_END()) return FAIL("unexpected text after RENAME TABLE");
        return W2L_OK;
    }
    if (ACCEPT("W2L")) { /* the mysql source's own marks (no server has this statement) */
        if (!ACCEPT("RESYNC") || !ACCEPT("TABLE")) return FAIL("expected RESYNC TABLE after W2L");
        st->kind = W2L_DDL_RESYNC_TABLE;
        W2L_TRY(table_name(p, &st->table));
        if (ACCEPT("END")) st->resync_end = 1;
        else if (!ACCEPT("BEGIN")) return FAIL("expected BEGIN or END after W2L RESYNC TABLE");
        if (!AT_END()) return FAIL("unexpected text after W2L RESYNC TABLE");
        return W2L_OK;
    }
    if (ACCEPT("TRUNCATE")) {
        ACCEPT("TABLE");
        st->kind = W2L_DDL_TRUNCATE_TABLE;
        W2L_TRY(table_name(p, &st->table));
        skip_wait(p);
        if (!AT_END()) return FAIL("unexpected text after TRUNCATE TABLE");
        return W2L_OK;
    }
    if (ACCEPT("USE")) {
        st->kind = W2L_DDL_USE;
        W2L_TRY(w2l__ddl_ident(CUR, &st->database, "expected a database name"));
        p->db = st->database;
        return W2L_OK;
    }
    return W2L_OK;
}

/* ---- statement boundaries ---- */

static int word_is(const char *sql, const w2l__ddl_tok *t, const char *kw)
{
    return t->kind == W2L__TK_WORD && w2l__ddl_word_eq(sql + t->off, t->len, kw);
}

/* 1 when the statement at from may hold a BEGIN ... END body with ';' inside. */
static int compound_head(const char *sql, const w2l__ddl_toks *t, size_t from)
{
    if (word_is(sql, &t->v[from], "BEGIN") && from + 1 < t->n &&
        word_is(sql, &t->v[from + 1], "NOT"))
        return 1; /* MariaDB's BEGIN NOT ATOMIC */
    if (!word_is(sql, &t->v[from], "CREATE") && !word_is(sql, &t->v[from], "ALTER")) return 0;
    static const char *const yes[] = {"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "PACKAGE"};
    static const char *const no[] = {"TABLE", "VIEW", "INDEX", "DATABASE", "SCHEMA", "USER",
                                     "ROLE", "SERVER", "SEQUENCE", "TABLESPACE", "TEMPORARY",
                                     "UNIQUE", "FULLTEXT", "SPATIAL", "LOGFILE"};
    for (size_t i = from + 1; i < t->n && i < from + 16; i++) {
        const w2l__ddl_tok *k = &t->v[i];
        if (k->kind == W2L__TK_PUNCT && (sql[k->off] == ';' || sql[k->off] == '(')) return 0;
        for (size_t j = 0; j < W2L_ARRAY_LEN(no); j++)
            if (word_is(sql, k, no[j])) return 0;
        for (size_t j = 0; j < W2L_ARRAY_LEN(yes); j++)
            if (word_is(sql, k, yes[j])) return 1;
    }
    return 0;
}

static size_t stmt_end(const char *sql, const w2l__ddl_toks *t, size_t from)
{
    int compound = compound_head(sql, t, from);
    size_t depth = 0;
    int after_end = 0;
    for (size_t i = from; i < t->n; i++) {
        const w2l__ddl_tok *k = &t->v[i];
        if (k->kind == W2L__TK_PUNCT && sql[k->off] == ';' && depth == 0) return i;
        if (!compound || k->kind != W2L__TK_WORD) {
            after_end = 0;
            continue;
        }
        if (word_is(sql, k, "END")) {
            if (depth) depth--;
            after_end = 1;
            continue;
        }
        if (!after_end && (word_is(sql, k, "BEGIN") || word_is(sql, k, "CASE") ||
                           word_is(sql, k, "IF") || word_is(sql, k, "LOOP") ||
                           word_is(sql, k, "WHILE") || word_is(sql, k, "REPEAT"))) {
            const w2l__ddl_tok *nx = &t->v[i + 1]; /* the END sentinel at worst */
            int call = nx->kind == W2L__TK_PUNCT && sql[nx->off] == '(';
            int if_exists = word_is(sql, k, "IF") &&
                            (word_is(sql, nx, "EXISTS") || word_is(sql, nx, "NOT"));
            if (!call && !if_exists) depth++;
        }
        after_end = 0;
    }
    return t->n;
}

static int sensitive_words(const char *sql, const w2l__ddl_toks *t, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (word_is(sql, &t->v[i], "IDENTIFIED") || word_is(sql, &t->v[i], "PASSWORD") ||
            word_is(sql, &t->v[i], "MASTER_PASSWORD") ||
            word_is(sql, &t->v[i], "SOURCE_PASSWORD") || word_is(sql, &t->v[i], "CONNECTION") ||
            word_is(sql, &t->v[i], "OPTION_LIST"))
            return 1;
    return 0;
}

w2l_rc w2l__ddl_parse(const char *sql, size_t len, const char *default_db, w2l__ddl_list **out,
                      w2l_error *err)
{
    if (!out || (!sql && len)) return w2l__fail(err, W2L_MISUSE, "w2l__ddl_parse: NULL argument");
    *out = NULL;
    if (!sql) sql = "";
    w2l__ddl_toks toks;
    W2L_TRY(w2l__ddl_lex(sql, len, &toks, err));
    w2l__ddl_list *l = w2l__calloc(1, sizeof *l);
    if (!l) {
        w2l__ddl_toks_free(&toks);
        return w2l__fail(err, W2L_NOMEM, "DDL: out of memory");
    }
    w2l__arena_init(&l->arena, 4096);
    parser p = {.a = &l->arena, .err = err};
    w2l_rc rc = W2L_OK;
    if (default_db && !(p.db = w2l__arena_strndup(&l->arena, default_db, strlen(default_db))))
        rc = w2l__fail(err, W2L_NOMEM, "DDL: out of memory");
    size_t cap = 0;
    for (size_t i = 0; rc == W2L_OK && i < toks.n;) {
        if (toks.v[i].kind == W2L__TK_PUNCT && sql[toks.v[i].off] == ';') {
            i++;
            continue;
        }
        size_t e = stmt_end(sql, &toks, i);
        l->stmts = grow(&l->arena, l->stmts, l->n, &cap, sizeof *l->stmts);
        if (!l->stmts) {
            rc = w2l__fail(err, W2L_NOMEM, "DDL: out of memory");
            break;
        }
        w2l__ddl_stmt *st = &l->stmts[l->n];
        memset(st, 0, sizeof *st);
        w2l__ddl_cur_init(&p.c, sql, &toks, i, e, &l->arena, err);
        st->line = toks.v[i].line;
        size_t a = toks.v[i].off, b = toks.v[e - 1].off + toks.v[e - 1].len;
        st->text_len = b - a;
        st->sensitive = sensitive_words(sql, &toks, i, e);
        if (st->sensitive) {
            char *r = w2l__ddl_redact(sql + a, b - a);
            char *copy = r ? w2l__arena_strndup(&l->arena, r, strlen(r)) : NULL;
            if (copy) st->text_len = strlen(copy);
            st->text = copy;
            w2l__free(r);
        } else {
            st->text = w2l__arena_strndup(&l->arena, sql + a, b - a);
        }
        if (!st->text) {
            rc = w2l__fail(err, W2L_NOMEM, "DDL: out of memory");
            break;
        }
        rc = parse_stmt(&p, st);
        if (rc == W2L_OK && st->kind != W2L_DDL_OTHER && st->kind != W2L_DDL_TEMPORARY &&
            !w2l__ddl_at_end(&p.c) && st->kind != W2L_DDL_CREATE_TABLE_SELECT)
            rc = w2l__ddl_error(&p.c, "unexpected text at the end of the statement");
        l->n++;
        i = e;
    }
    w2l__ddl_toks_free(&toks);
    if (rc != W2L_OK) {
        w2l__ddl_list_free(l);
        return rc;
    }
    *out = l;
    return W2L_OK;
}

void w2l__ddl_list_free(w2l__ddl_list *l)
{
    if (!l) return;
    w2l__arena_release(&l->arena);
    w2l__free(l);
}

static int same_name(const w2l__ddl_name *n, const char *db, const char *name)
{
    return n->db && n->name && !strcmp(n->db, db) && !strcmp(n->name, name);
}

int w2l__ddl_ends_table(const w2l__ddl_stmt *st, const char *db, const char *name)
{
    switch (st->kind) {
    case W2L_DDL_DROP_TABLE:
        for (size_t i = 0; i < st->ntables; i++)
            if (same_name(&st->tables[i], db, name)) return 1;
        return 0;
    case W2L_DDL_CREATE_TABLE:
    case W2L_DDL_CREATE_TABLE_LIKE:
    case W2L_DDL_CREATE_TABLE_SELECT: return st->or_replace && same_name(&st->table, db, name);
    default: return 0;
    }
}
