/*
 * Masking of secrets in SQL texts before they are logged, stored in schema history or
 * put in error messages: CREATE USER / ALTER USER / GRANT ... IDENTIFIED BY 'pw',
 * IDENTIFIED WITH plugin AS 'hash', SET PASSWORD ... = 'pw', CHANGE MASTER TO
 * MASTER_PASSWORD='pw', CREATE SERVER ... OPTIONS (PASSWORD 'pw'), table option
 * PASSWORD='pw', and the table options CONNECTION='mysql://user:pw@host/db/t' (FEDERATED,
 * CONNECT) and OPTION_LIST='user=u,password=pw' (CONNECT), which the DDL handler would
 * otherwise print in its messages and schema history.
 *
 * A byte scanner rather than the lexer, so that it also works on text the lexer rejects:
 * once a statement has shown one of the words IDENTIFIED, PASSWORD, MASTER_PASSWORD,
 * SOURCE_PASSWORD, CONNECTION or OPTION_LIST, every later string literal of that statement (quoted,
 * N'..', X'..') becomes '***', and a string left open swallows the rest of the text. Over-masking
 * (a user name after PASSWORD FOR) is the accepted price of never leaking.
 */
#include "ddl_int.h"

static int word_byte(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '$' || ch >= 0x80;
}

static int is_secret_word(const char *s, size_t n)
{
    return w2l__ddl_word_eq(s, n, "IDENTIFIED") || w2l__ddl_word_eq(s, n, "PASSWORD") ||
           w2l__ddl_word_eq(s, n, "MASTER_PASSWORD") || w2l__ddl_word_eq(s, n, "SOURCE_PASSWORD") ||
           w2l__ddl_word_eq(s, n, "CONNECTION") || w2l__ddl_word_eq(s, n, "OPTION_LIST");
}

char *w2l__ddl_redact(const char *sql, size_t len)
{
    if (!sql) len = 0;
    /* the output never grows by more than 5 bytes per input string ('' -> '***') */
    size_t cap = len + len / 2 * 5 + 8;
    char *out = w2l__malloc(cap);
    if (!out) return NULL;
    size_t o = 0, p = 0;
    int armed = 0;
    while (p < len) {
        unsigned char ch = (unsigned char)sql[p];
        unsigned char nx = p + 1 < len ? (unsigned char)sql[p + 1] : 0;
        if (ch == '/' && nx == '*' && !(p + 2 < len && (sql[p + 2] == '!' || sql[p + 2] == 'M'))) {
            size_t e = p + 2;
            while (e + 1 < len && !(sql[e] == '*' && sql[e + 1] == '/')) e++;
            e = e + 1 < len ? e + 2 : len;
            memcpy(out + o, sql + p, e - p);
            o += e - p;
            p = e;
            continue;
        }
        if (ch == '#' || (ch == '-' && nx == '-')) {
            size_t e = p;
            while (e < len && sql[e] != '\n') e++;
            memcpy(out + o, sql + p, e - p);
            o += e - p;
            p = e;
            continue;
        }
        int prefixed =
            (ch == 'x' || ch == 'X' || ch == 'b' || ch == 'B' || ch == 'n' || ch == 'N') &&
            nx == '\'' && !(p && word_byte((unsigned char)sql[p - 1]));
        if (ch == '\'' || ch == '"' || ch == '`' || prefixed) {
            size_t body = p + (prefixed ? 2 : 1);
            char q = prefixed ? '\'' : (char)ch;
            size_t e = body;
            int closed = 0;
            while (e < len) {
                if (q != '`' && sql[e] == '\\') {
                    e += 2;
                    continue;
                }
                if (sql[e] == q) {
                    if (e + 1 < len && sql[e + 1] == q) {
                        e += 2;
                        continue;
                    }
                    e++;
                    closed = 1;
                    break;
                }
                e++;
            }
            if (e > len) e = len;
            if (armed && q != '`') {
                memcpy(out + o, "'***'", 5);
                o += 5;
                if (!closed) break; /* an open secret swallows the rest */
            } else {
                memcpy(out + o, sql + p, e - p);
                o += e - p;
            }
            p = e;
            continue;
        }
        if (word_byte(ch)) {
            size_t e = p;
            while (e < len && word_byte((unsigned char)sql[e])) e++;
            if (is_secret_word(sql + p, e - p)) armed = 1;
            memcpy(out + o, sql + p, e - p);
            o += e - p;
            p = e;
            continue;
        }
        if (ch == ';') armed = 0;
        out[o++] = (char)ch;
        p++;
    }
    out[o] = '\0';
    return out;
}
