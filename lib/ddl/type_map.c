/*
 * MySQL/MariaDB column types: the type grammar (name with its synonyms, arguments,
 * UNSIGNED/SIGNED/ZEROFILL, CHARACTER SET, COLLATE, BINARY/ASCII/UNICODE/BYTE), shared by
 * the DDL parser and canal's mysqlType strings, and the mapping onto Iceberg types of
 * w2l-design(7) section 4. Every value MySQL can store has a home; where Iceberg has no exact
 * type, the value is kept whole in a wider one:
 *
 *   TINYINT SMALLINT MEDIUMINT INT YEAR (unsigned up to MEDIUMINT) -> int
 *   BIGINT, INT UNSIGNED -> long          BIGINT UNSIGNED (and SERIAL) -> decimal(20,0)
 *   TINYINT(1), BOOL, BOOLEAN -> int (BOOL is MySQL's synonym of TINYINT(1), which
 *     stores any TINYINT, e.g. 5; information_schema and the binlog show only tinyint);
 *     with the option tinyint1_as_boolean (source.tinyint1-as-boolean) signed TINYINT(1)
 *     and BOOL -> boolean, a value other than 0/1 becoming true (MySQL's truth rule:
 *     nonzero is TRUE)
 *   DECIMAL(p,s) p <= 38 -> decimal(p,s)
 *   DECIMAL(p,s) 38 < p <= 65 -> string: the exact decimal text as MySQL prints it, with
 *     s fraction digits ("-12.500", "0.000"); Iceberg decimals stop at 38 digits
 *   FLOAT, FLOAT(p <= 24) -> float        DOUBLE, REAL, FLOAT(p > 24) -> double
 *   BIT(1) -> boolean   BIT(n > 1) -> long holding the bit pattern (BIT(64) values
 *     >= 2^63 are negative longs: the 64 bits are kept, not the unsigned number)
 *   DATE -> date   DATETIME(n) -> timestamp   TIMESTAMP(n) -> timestamptz
 *   TIME(n) -> time (string by option)
 *   CHAR VARCHAR TEXT* ENUM SET JSON (and MariaDB UUID INET4 INET6) -> string
 *   BINARY VARBINARY BLOB* (and text types with CHARACTER SET binary) -> binary
 *   GEOMETRY POINT LINESTRING POLYGON MULTIPOINT MULTILINESTRING MULTIPOLYGON
 *     GEOMETRYCOLLECTION -> binary holding the value's WKB (MySQL's stored form is a
 *     4-byte little-endian SRID followed by the WKB; the sources strip the SRID)
 *   VECTOR(n) (MySQL 9) -> binary holding its n float32 values as the server stores them
 *     (4 bytes each, little-endian)
 *   unknown names -> W2L_SCHEMA naming type and column (the DDL handler names the table and
 *     applies ddl.policy)
 *
 * REAL is DOUBLE (the REAL_AS_FLOAT sql_mode is not honoured). ZEROFILL implies UNSIGNED,
 * as in MySQL. "X CHARACTER SET binary" is the binary type MySQL turns it into.
 */
#include <stdio.h>

#include "../model/model.h"
#include "ddl_int.h"

typedef struct type_name {
    const char *word;   /* as written, uppercase */
    const char *canon;  /* canonical lowercase name */
    w2l__mysql_class cls;
    int bytes;          /* INT: storage bytes */
} type_name;

static const type_name names[] = {
    { "TINYINT", "tinyint", W2L_MYSQL_INT, 1 },
    { "INT1", "tinyint", W2L_MYSQL_INT, 1 },
    { "SMALLINT", "smallint", W2L_MYSQL_INT, 2 },
    { "INT2", "smallint", W2L_MYSQL_INT, 2 },
    { "MEDIUMINT", "mediumint", W2L_MYSQL_INT, 3 },
    { "MIDDLEINT", "mediumint", W2L_MYSQL_INT, 3 },
    { "INT3", "mediumint", W2L_MYSQL_INT, 3 },
    { "INT", "int", W2L_MYSQL_INT, 4 },
    { "INTEGER", "int", W2L_MYSQL_INT, 4 },
    { "INT4", "int", W2L_MYSQL_INT, 4 },
    { "BIGINT", "bigint", W2L_MYSQL_INT, 8 },
    { "INT8", "bigint", W2L_MYSQL_INT, 8 },
    { "SERIAL", "bigint", W2L_MYSQL_INT, 8 },
    { "BOOL", "boolean", W2L_MYSQL_BOOL, 0 },
    { "BOOLEAN", "boolean", W2L_MYSQL_BOOL, 0 },
    { "BIT", "bit", W2L_MYSQL_BIT, 0 },
    { "DECIMAL", "decimal", W2L_MYSQL_DECIMAL, 0 },
    { "DEC", "decimal", W2L_MYSQL_DECIMAL, 0 },
    { "NUMERIC", "decimal", W2L_MYSQL_DECIMAL, 0 },
    { "FIXED", "decimal", W2L_MYSQL_DECIMAL, 0 },
    { "NUMBER", "decimal", W2L_MYSQL_DECIMAL, 0 },
    { "FLOAT", "float", W2L_MYSQL_FLOAT, 0 },
    { "FLOAT4", "float", W2L_MYSQL_FLOAT, 0 },
    { "DOUBLE", "double", W2L_MYSQL_DOUBLE, 0 },
    { "FLOAT8", "double", W2L_MYSQL_DOUBLE, 0 },
    { "REAL", "double", W2L_MYSQL_DOUBLE, 0 },
    { "YEAR", "year", W2L_MYSQL_YEAR, 0 },
    { "DATE", "date", W2L_MYSQL_DATE, 0 },
    { "DATETIME", "datetime", W2L_MYSQL_DATETIME, 0 },
    { "TIMESTAMP", "timestamp", W2L_MYSQL_TIMESTAMP, 0 },
    { "TIME", "time", W2L_MYSQL_TIME, 0 },
    { "CHAR", "char", W2L_MYSQL_TEXT, 0 },
    { "CHARACTER", "char", W2L_MYSQL_TEXT, 0 },
    { "NCHAR", "char", W2L_MYSQL_TEXT, 0 },
    { "VARCHAR", "varchar", W2L_MYSQL_TEXT, 0 },
    { "NVARCHAR", "varchar", W2L_MYSQL_TEXT, 0 },
    { "VARCHAR2", "varchar", W2L_MYSQL_TEXT, 0 },
    { "VARCHARACTER", "varchar", W2L_MYSQL_TEXT, 0 },
    { "TINYTEXT", "tinytext", W2L_MYSQL_TEXT, 0 },
    { "TEXT", "text", W2L_MYSQL_TEXT, 0 },
    { "MEDIUMTEXT", "mediumtext", W2L_MYSQL_TEXT, 0 },
    { "LONGTEXT", "longtext", W2L_MYSQL_TEXT, 0 },
    { "LONG", "mediumtext", W2L_MYSQL_TEXT, 0 },
    { "CLOB", "longtext", W2L_MYSQL_TEXT, 0 },
    { "UUID", "uuid", W2L_MYSQL_TEXT, 0 },
    { "INET4", "inet4", W2L_MYSQL_TEXT, 0 },
    { "INET6", "inet6", W2L_MYSQL_TEXT, 0 },
    { "ENUM", "enum", W2L_MYSQL_ENUM, 0 },
    { "SET", "set", W2L_MYSQL_SET, 0 },
    { "JSON", "json", W2L_MYSQL_JSON, 0 },
    { "BINARY", "binary", W2L_MYSQL_BINARY, 0 },
    { "VARBINARY", "varbinary", W2L_MYSQL_BINARY, 0 },
    { "TINYBLOB", "tinyblob", W2L_MYSQL_BINARY, 0 },
    { "BLOB", "blob", W2L_MYSQL_BINARY, 0 },
    { "MEDIUMBLOB", "mediumblob", W2L_MYSQL_BINARY, 0 },
    { "LONGBLOB", "longblob", W2L_MYSQL_BINARY, 0 },
    { "RAW", "varbinary", W2L_MYSQL_BINARY, 0 },
    { "GEOMETRY", "geometry", W2L_MYSQL_GEOMETRY, 0 },
    { "POINT", "point", W2L_MYSQL_GEOMETRY, 0 },
    { "LINESTRING", "linestring", W2L_MYSQL_GEOMETRY, 0 },
    { "POLYGON", "polygon", W2L_MYSQL_GEOMETRY, 0 },
    { "MULTIPOINT", "multipoint", W2L_MYSQL_GEOMETRY, 0 },
    { "MULTILINESTRING", "multilinestring", W2L_MYSQL_GEOMETRY, 0 },
    { "MULTIPOLYGON", "multipolygon", W2L_MYSQL_GEOMETRY, 0 },
    { "GEOMETRYCOLLECTION", "geometrycollection", W2L_MYSQL_GEOMETRY, 0 },
    { "GEOMCOLLECTION", "geometrycollection", W2L_MYSQL_GEOMETRY, 0 },
    { "VECTOR", "vector", W2L_MYSQL_BINARY, 0 },
};

static void set_name(w2l__mysql_type *t, const char *canon, w2l__mysql_class cls, int bytes)
{
    snprintf(t->name, sizeof t->name, "%s", canon);
    t->cls = cls;
    t->int_bytes = bytes;
}

static const type_name *find_name(const char *s, size_t n)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(names); i++)
        if (w2l__ddl_word_eq(s, n, names[i].word)) return &names[i];
    return NULL;
}

/* Reads the type name, one to three words ("double precision", "national char varying",
 * "long varbinary"). */
static w2l_rc read_name(w2l__ddl_cur *c, w2l__mysql_type *t, int *serial)
{
    const w2l__ddl_tok *k = w2l__ddl_peek(c, 0);
    if (k->kind != W2L__TK_WORD) return w2l__ddl_error(c, "expected a data type");
    if (w2l__ddl_accept_kw(c, "NATIONAL")) {
        k = w2l__ddl_peek(c, 0);
        if (w2l__ddl_accept_kw(c, "VARCHAR") || w2l__ddl_accept_kw(c, "VARCHARACTER")) {
            set_name(t, "varchar", W2L_MYSQL_TEXT, 0);
            return W2L_OK;
        }
        if (!w2l__ddl_accept_kw(c, "CHAR") && !w2l__ddl_accept_kw(c, "CHARACTER"))
            return w2l__ddl_error(c, "expected CHAR or VARCHAR after NATIONAL");
        set_name(t, w2l__ddl_accept_kw(c, "VARYING") ? "varchar" : "char", W2L_MYSQL_TEXT, 0);
        return W2L_OK;
    }
    if (w2l__ddl_is_kw(c, 0, "LONG")) {
        c->i++;
        if (w2l__ddl_accept_kw(c, "VARBINARY")) set_name(t, "mediumblob", W2L_MYSQL_BINARY, 0);
        else if (w2l__ddl_accept_kw(c, "VARCHAR") || w2l__ddl_accept_kw(c, "VARCHARACTER"))
            set_name(t, "mediumtext", W2L_MYSQL_TEXT, 0);
        else if (w2l__ddl_is_kw(c, 0, "CHAR") && w2l__ddl_is_kw(c, 1, "VARYING"))
            c->i += 2, set_name(t, "mediumtext", W2L_MYSQL_TEXT, 0);
        else set_name(t, "mediumtext", W2L_MYSQL_TEXT, 0);
        return W2L_OK;
    }
    const type_name *n = find_name(c->sql + k->off, k->len);
    c->i++;
    if (!n) {
        char low[sizeof t->name];
        size_t m = k->len < sizeof low - 1 ? k->len : sizeof low - 1;
        for (size_t i = 0; i < m; i++) {
            char ch = c->sql[k->off + i];
            low[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        low[m] = '\0';
        set_name(t, low, W2L_MYSQL_UNKNOWN, 0);
        return W2L_OK;
    }
    set_name(t, n->canon, n->cls, n->bytes);
    *serial = w2l__ddl_word_eq(n->word, strlen(n->word), "SERIAL");
    if (n->cls == W2L_MYSQL_DOUBLE && w2l__ddl_word_eq(n->word, strlen(n->word), "DOUBLE"))
        w2l__ddl_accept_kw(c, "PRECISION");
    if (n->cls == W2L_MYSQL_TEXT && (!strcmp(n->canon, "char")) && w2l__ddl_accept_kw(c, "VARYING"))
        set_name(t, "varchar", W2L_MYSQL_TEXT, 0);
    if (!strcmp(n->canon, "char") && w2l__ddl_is_kw(c, 0, "VARCHAR") &&
        w2l__ddl_word_eq(n->word, strlen(n->word), "NCHAR"))
        c->i++, set_name(t, "varchar", W2L_MYSQL_TEXT, 0);
    return W2L_OK;
}

static w2l_rc read_number(w2l__ddl_cur *c, int64_t *out)
{
    const w2l__ddl_tok *k = w2l__ddl_peek(c, 0);
    if (k->kind != W2L__TK_NUMBER) return w2l__ddl_error(c, "expected a number");
    int64_t v = 0;
    for (size_t i = 0; i < k->len; i++) {
        char ch = c->sql[k->off + i];
        if (ch < '0' || ch > '9') return w2l__ddl_error(c, "expected an unsigned integer");
        if (v > (INT64_C(1) << 40)) return w2l__ddl_error(c, "number too large");
        v = v * 10 + (ch - '0');
    }
    c->i++;
    *out = v;
    return W2L_OK;
}

static w2l_rc read_values(w2l__ddl_cur *c, w2l__mysql_type *t)
{
    /* two passes: count, then decode into one array */
    size_t start = c->i, n = 0;
    int64_t longest = 0, total = 0;
    for (;;) {
        const w2l__ddl_tok *k = w2l__ddl_peek(c, 0);
        if (k->kind != W2L__TK_STRING) return w2l__ddl_error(c, "expected a quoted ENUM/SET value");
        const char *v = w2l__ddl_decode(c, k);
        W2L_NOMEM_IF(!v, c->err);
        int64_t l = (int64_t)strlen(v);
        if (l > longest) longest = l;
        total += l + (n ? 1 : 0);
        c->i++;
        n++;
        if (w2l__ddl_accept_punct(c, ')')) break;
        if (!w2l__ddl_accept_punct(c, ',')) return w2l__ddl_error(c, "expected ',' or ')'");
    }
    const char **vals = w2l__arena_alloc(c->arena, n * sizeof *vals);
    W2L_NOMEM_IF(!vals, c->err);
    for (size_t i = 0, at = start; i < n; i++, at += 2) {
        vals[i] = w2l__ddl_decode(c, &c->tok[at]);
        W2L_NOMEM_IF(!vals[i], c->err);
    }
    t->values = vals;
    t->nvalues = n;
    t->max_length = t->cls == W2L_MYSQL_SET ? total : longest;
    return W2L_OK;
}

static w2l_rc read_charset_name(w2l__ddl_cur *c, const char **out)
{
    const w2l__ddl_tok *k = w2l__ddl_peek(c, 0);
    if (k->kind != W2L__TK_WORD && k->kind != W2L__TK_QIDENT && k->kind != W2L__TK_STRING)
        return w2l__ddl_error(c, "expected a character set or collation name");
    char *s = w2l__ddl_decode(c, k);
    W2L_NOMEM_IF(!s, c->err);
    for (char *p = s; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    c->i++;
    *out = s;
    return W2L_OK;
}

void w2l__mysql_type_finish(w2l__mysql_type *t)
{
    if (t->zerofill) t->is_unsigned = 1;
    if (t->charset && !strcmp(t->charset, "binary") && t->cls == W2L_MYSQL_TEXT) {
        static const char *const to[][2] = {{"char", "binary"},         {"varchar", "varbinary"},
                                            {"tinytext", "tinyblob"},   {"text", "blob"},
                                            {"mediumtext", "mediumblob"}, {"longtext", "longblob"}};
        for (size_t i = 0; i < W2L_ARRAY_LEN(to); i++)
            if (!strcmp(t->name, to[i][0])) set_name(t, to[i][1], W2L_MYSQL_BINARY, 0);
    }
    t->fsp = 0;
    t->bits = 0;
    t->binary_pad = 0;
    if (t->cls != W2L_MYSQL_ENUM && t->cls != W2L_MYSQL_SET) t->max_length = -1;
    switch (t->cls) {
    case W2L_MYSQL_DATETIME:
    case W2L_MYSQL_TIMESTAMP:
    case W2L_MYSQL_TIME: t->fsp = t->len < 0 ? 0 : (int)t->len; break;
    case W2L_MYSQL_BIT: t->bits = t->len < 0 ? 1 : (int)t->len; break;
    case W2L_MYSQL_FLOAT:
        if (t->len > 24 && t->scale < 0) t->cls = W2L_MYSQL_DOUBLE; /* FLOAT(p) */
        break;
    case W2L_MYSQL_TEXT:
    case W2L_MYSQL_BINARY: {
        static const struct { const char *n; int64_t max; } fixed[] = {
            {"tinytext", 255},      {"text", 65535},       {"mediumtext", 16777215},
            {"longtext", 4294967295LL}, {"tinyblob", 255}, {"blob", 65535},
            {"mediumblob", 16777215}, {"longblob", 4294967295LL}, {"uuid", 36},
            {"inet4", 15},          {"inet6", 39}};
        if (!strcmp(t->name, "char") || !strcmp(t->name, "binary"))
            t->max_length = t->len < 0 ? 1 : t->len;
        else if (!strcmp(t->name, "varchar") || !strcmp(t->name, "varbinary"))
            t->max_length = t->len;
        for (size_t i = 0; i < W2L_ARRAY_LEN(fixed); i++)
            if (!strcmp(t->name, fixed[i].n)) t->max_length = t->len > 0 ? t->len : fixed[i].max;
        if (!strcmp(t->name, "vector")) t->max_length = (t->len < 0 ? 2048 : t->len) * 4;
        if (!strcmp(t->name, "binary")) t->binary_pad = t->max_length;
        break;
    }
    default: break;
    }
}

w2l_rc w2l__ddl_read_type(w2l__ddl_cur *c, w2l__mysql_type *t)
{
    memset(t, 0, sizeof *t);
    t->len = t->scale = t->max_length = -1;
    int serial = 0;
    W2L_TRY(read_name(c, t, &serial));
    if (serial) t->is_unsigned = 1;
    if (w2l__ddl_is_punct(c, 0, '(')) {
        if (t->cls == W2L_MYSQL_ENUM || t->cls == W2L_MYSQL_SET) {
            c->i++;
            W2L_TRY(read_values(c, t));
        } else if (t->cls == W2L_MYSQL_UNKNOWN) {
            W2L_TRY(w2l__ddl_skip_parens(c));
        } else {
            c->i++;
            W2L_TRY(read_number(c, &t->len));
            if (w2l__ddl_accept_punct(c, ',')) W2L_TRY(read_number(c, &t->scale));
            if (!w2l__ddl_accept_punct(c, ')')) return w2l__ddl_error(c, "expected ')'");
        }
    } else if (t->cls == W2L_MYSQL_ENUM || t->cls == W2L_MYSQL_SET) {
        return w2l__ddl_error(c, "expected '(' and the ENUM/SET values");
    }
    for (;;) {
        if (w2l__ddl_accept_kw(c, "UNSIGNED")) t->is_unsigned = 1;
        else if (w2l__ddl_accept_kw(c, "SIGNED")) t->is_unsigned = serial;
        else if (w2l__ddl_accept_kw(c, "ZEROFILL")) t->zerofill = 1;
        else if (w2l__ddl_is_kw(c, 0, "BINARY") && t->cls != W2L_MYSQL_UNKNOWN) {
            c->i++; /* CHAR(n) BINARY: the _bin collation, still text */
        } else if (w2l__ddl_accept_kw(c, "ASCII")) t->charset = "latin1";
        else if (w2l__ddl_accept_kw(c, "UNICODE")) t->charset = "ucs2";
        else if (w2l__ddl_accept_kw(c, "BYTE")) t->charset = "binary";
        else if (w2l__ddl_is_kw(c, 0, "CHARACTER") && w2l__ddl_is_kw(c, 1, "SET")) {
            c->i += 2;
            W2L_TRY(read_charset_name(c, &t->charset));
        } else if (w2l__ddl_accept_kw(c, "CHARSET")) {
            W2L_TRY(read_charset_name(c, &t->charset));
        } else if (w2l__ddl_accept_kw(c, "COLLATE")) {
            W2L_TRY(read_charset_name(c, &t->collate));
        } else break;
    }
    w2l__mysql_type_finish(t);
    return W2L_OK;
}

w2l_rc w2l__mysql_type_parse(const char *text, size_t len, w2l__arena *a, w2l__mysql_type *out,
                             w2l_error *err)
{
    if (!text || !out) return w2l__fail(err, W2L_MISUSE, "w2l__mysql_type_parse: NULL argument");
    w2l__ddl_toks toks;
    W2L_TRY(w2l__ddl_lex(text, len, &toks, err));
    w2l__arena tmp;
    w2l__arena_init(&tmp, 1024);
    w2l__ddl_cur c;
    w2l__ddl_cur_init(&c, text, &toks, 0, toks.n, a ? a : &tmp, err);
    w2l__mysql_type t;
    w2l_rc rc = w2l__ddl_read_type(&c, &t);
    if (rc == W2L_OK && !w2l__ddl_at_end(&c))
        rc = w2l__ddl_error(&c, "unexpected text after the type");
    if (rc == W2L_OK && !a) {
        /* the temporary arena goes away: keep only what does not point into it */
        static const char *const known[] = {"binary", "utf8", "utf8mb3", "utf8mb4", "latin1",
                                            "ascii", "ucs2"};
        const char *cs = NULL;
        for (size_t i = 0; t.charset && i < W2L_ARRAY_LEN(known); i++)
            if (!strcmp(t.charset, known[i])) cs = known[i];
        t.charset = cs;
        t.collate = NULL;
        t.values = NULL;
    }
    w2l__arena_release(&tmp);
    w2l__ddl_toks_free(&toks);
    if (rc == W2L_OK) *out = t;
    return rc;
}

static w2l_rc unmappable(w2l_error *err, const char *column, const char *fmt, const char *a,
                         long long x, long long y)
{
    char what[200];
    snprintf(what, sizeof what, fmt, a, x, y);
    if (column) return w2l__fail(err, W2L_SCHEMA, "column '%.128s': %s", column, what);
    return w2l__fail(err, W2L_SCHEMA, "%s", what);
}

w2l_rc w2l__mysql_type_map(const w2l__mysql_type *t, const w2l__type_opts *opt,
                           const char *column, w2l_type *out, w2l_error *err)
{
    static const w2l__type_opts none = {0, 0};
    if (!t || !out) return w2l__fail(err, W2L_MISUSE, "w2l__mysql_type_map: NULL argument");
    if (!opt) opt = &none;
    w2l_type r = {W2L_TYPE_STRING, 0, 0};
    switch (t->cls) {
    case W2L_MYSQL_INT:
        if (t->int_bytes == 1 && t->len == 1 && !t->is_unsigned && opt->tinyint1_as_boolean)
            r.id = W2L_TYPE_BOOLEAN;
        else if (t->int_bytes <= 3) r.id = W2L_TYPE_INT;
        else if (t->int_bytes == 4) r.id = t->is_unsigned ? W2L_TYPE_LONG : W2L_TYPE_INT;
        else if (!t->is_unsigned) r.id = W2L_TYPE_LONG;
        else r.id = W2L_TYPE_DECIMAL, r.precision = 20, r.scale = 0;
        break;
    case W2L_MYSQL_YEAR: r.id = W2L_TYPE_INT; break;
    case W2L_MYSQL_BOOL: /* a synonym of TINYINT(1): information_schema shows it so */
        r.id = opt->tinyint1_as_boolean ? W2L_TYPE_BOOLEAN : W2L_TYPE_INT;
        break;
    case W2L_MYSQL_BIT:
        if (t->bits < 1 || t->bits > 64)
            return unmappable(err, column, "%s(%lld): BIT needs 1 to 64 bits", "bit", t->bits, 0);
        r.id = t->bits == 1 ? W2L_TYPE_BOOLEAN : W2L_TYPE_LONG;
        break;
    case W2L_MYSQL_DECIMAL: {
        int64_t p = t->len < 0 ? 10 : t->len, s = t->scale < 0 ? 0 : t->scale;
        if (p < 1 || p > 65 || s > 30 || s > p)
            return unmappable(err, column, "invalid MySQL type %s(%lld,%lld)", "decimal", p, s);
        if (p > W2L_DECIMAL_MAX_PRECISION) break; /* string: the exact text */
        r.id = W2L_TYPE_DECIMAL;
        r.precision = (uint8_t)p;
        r.scale = (uint8_t)s;
        break;
    }
    case W2L_MYSQL_FLOAT: r.id = W2L_TYPE_FLOAT; break;
    case W2L_MYSQL_DOUBLE:
        if (!strcmp(t->name, "float") && t->len > 53 && t->scale < 0)
            return unmappable(err, column, "invalid MySQL type %s(%lld)", "float", t->len, 0);
        r.id = W2L_TYPE_DOUBLE;
        break;
    case W2L_MYSQL_DATE: r.id = W2L_TYPE_DATE; break;
    case W2L_MYSQL_DATETIME:
    case W2L_MYSQL_TIMESTAMP:
    case W2L_MYSQL_TIME:
        if (t->fsp > 6)
            return unmappable(err, column,
                              "invalid MySQL type %s(%lld): at most 6 fractional digits", t->name,
                              t->fsp, 0);
        r.id = t->cls == W2L_MYSQL_DATETIME    ? W2L_TYPE_TIMESTAMP
               : t->cls == W2L_MYSQL_TIMESTAMP ? W2L_TYPE_TIMESTAMPTZ
               : opt->time_as_string           ? W2L_TYPE_STRING
                                               : W2L_TYPE_TIME;
        break;
    case W2L_MYSQL_TEXT:
    case W2L_MYSQL_ENUM:
    case W2L_MYSQL_SET:
    case W2L_MYSQL_JSON: r.id = W2L_TYPE_STRING; break;
    case W2L_MYSQL_BINARY:
    case W2L_MYSQL_GEOMETRY: r.id = W2L_TYPE_BINARY; break;
    default: return unmappable(err, column, "unknown MySQL type '%s'", t->name, 0, 0);
    }
    *out = r;
    return W2L_OK;
}

w2l_rc w2l__mysql_type_map_text(const char *text, size_t len, const w2l__type_opts *opt,
                                const char *column, w2l__arena *a, w2l_type *out,
                                w2l__mysql_type *info, w2l_error *err)
{
    w2l__mysql_type t;
    W2L_TRY(w2l__mysql_type_parse(text, len, a, &t, err));
    W2L_TRY(w2l__mysql_type_map(&t, opt, column, out, err));
    if (info) *info = t;
    return W2L_OK;
}

size_t w2l__mysql_type_format(const w2l__mysql_type *t, char *buf, size_t size)
{
    size_t n = 0;
#define PUT(...)                                                                      \
    do {                                                                              \
        int w_ = snprintf(buf && n < size ? buf + n : NULL, buf && n < size ? size - n : 0, \
                          __VA_ARGS__);                                               \
        if (w_ > 0) n += (size_t)w_;                                                  \
    } while (0)
    PUT("%s", t->name);
    if (t->cls == W2L_MYSQL_ENUM || t->cls == W2L_MYSQL_SET) {
        if (!t->values) PUT("(...)");
        for (size_t i = 0; t->values && i < t->nvalues; i++) {
            PUT("%s'", i ? "," : "(");
            for (const char *p = t->values[i]; *p; p++) {
                if (*p == '\'') PUT("''");
                else if (*p == '\\') PUT("\\\\");
                else PUT("%c", *p);
            }
            PUT("'%s", i + 1 == t->nvalues ? ")" : "");
        }
    } else if (t->len >= 0 && t->scale >= 0) {
        PUT("(%lld,%lld)", (long long)t->len, (long long)t->scale);
    } else if (t->len >= 0) {
        PUT("(%lld)", (long long)t->len);
    }
    if (t->is_unsigned) PUT(" unsigned");
    if (t->zerofill) PUT(" zerofill");
#undef PUT
    if (buf && size && n >= size) buf[size - 1] = '\0';
    return n;
}
