/*
 * A CDC JSON message's order and table, read without parsing it whole (cdc_stream.h): what
 * the Kafka source needs of every message before it decodes any, to merge its partitions
 * by source order and, as a member of a group, to skip what the lake holds already. A walk
 * over the message's bytes that finds a few members by name; strings are skipped with
 * memchr to each quote, since most of a message's bytes are in them.
 */
#include <stddef.h>
#include <string.h>

#include "cdc_stream.h"

/* The closing quote of the string whose text begins at p, or NULL: memchr to each quote
 * (most of a message's bytes are in strings), escaped when an odd run of backslashes
 * precedes it. */
static const char *string_end(const char *p, const char *e)
{
    for (const char *b = p;;) {
        const char *q = memchr(p, '"', (size_t)(e - p));
        if (!q) return NULL;
        size_t bs = 0;
        while (q - bs > b && q[-1 - (ptrdiff_t)bs] == '\\') bs++;
        if (!(bs & 1)) return q;
        p = q + 1;
    }
}

/* Skips one JSON value at p (< e); returns the byte after it, or NULL when malformed. */
static const char *skip_value(const char *p, const char *e)
{
    int depth = 0;
    while (p < e) {
        char c = *p;
        if (c == '"') {
            p = string_end(p + 1, e);
            if (!p) return NULL;
            p++;
        } else if (c == '{' || c == '[') {
            depth++, p++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return p; /* the end of the enclosing object: a scalar ended */
            depth--, p++;
        } else if (c == ',' && depth == 0) {
            return p;
        } else {
            p++;
        }
        if (depth == 0 && (c == '"' || c == '}' || c == ']')) return p;
    }
    return depth == 0 ? p : NULL;
}

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

/* The values of members k0 and k1 (NULL: none) of the object at p, as [vs[i], ve[i]), in one
 * walk; vs[i] NULL when absent. */
static void members(const char *p, const char *e, const char *k0, const char *k1,
                    const char *vs[2], const char *ve[2])
{
    size_t l0 = strlen(k0), l1 = k1 ? strlen(k1) : 0;
    vs[0] = vs[1] = ve[0] = ve[1] = NULL;
    p = skip_ws(p, e);
    if (p >= e || *p != '{') return;
    p++;
    for (;;) {
        p = skip_ws(p, e);
        if (p >= e || *p != '"') return;
        const char *ks = ++p;
        p = string_end(p, e);
        if (!p) return;
        size_t n = (size_t)(p - ks);
        p = skip_ws(p + 1, e);
        if (p >= e || *p != ':') return;
        p = skip_ws(p + 1, e);
        const char *v = p;
        p = skip_value(p, e);
        if (!p) return;
        int i = n == l0 && memcmp(ks, k0, l0) == 0     ? 0
                : k1 && n == l1 && !memcmp(ks, k1, l1) ? 1
                                                       : -1;
        if (i >= 0 && !vs[i]) {
            vs[i] = v;
            ve[i] = p;
            if (vs[0] && (!k1 || vs[1])) return;
        }
        p = skip_ws(p, e);
        if (p >= e || *p != ',') return;
        p++;
    }
}

/* The value of member key of the object at p, as [*vs, *ve); 0 when absent. */
static int member(const char *p, const char *e, const char *key, const char **vs,
                  const char **ve)
{
    const char *s[2], *t[2];
    members(p, e, key, NULL, s, t);
    *vs = s[0];
    *ve = t[0];
    return s[0] != NULL;
}

static int64_t num_at(const char *s, const char *e)
{
    int64_t v = 0;
    int neg = s < e && *s == '-';
    for (s += neg; s < e && *s >= '0' && *s <= '9'; s++) v = v * 10 + (*s - '0');
    return neg ? -v : v;
}

/* "mysql-bin.000003" -> 3 (the file's sequence number). */
static int64_t file_seq(const char *s, const char *e)
{
    const char *dot = NULL;
    for (const char *p = s; p < e; p++)
        if (*p == '.') dot = p;
    return dot ? num_at(dot + 1, e) : 0;
}

void w2l__cdc_peek_order(w2l__cdc_format fmt, const char *t, size_t len, int64_t *k1,
                         int64_t *k2)
{
    const char *e = t + len, *vs, *ve, *ss, *se;
    *k1 = *k2 = 0;
    const char *s[2], *x[2];
    switch (fmt) {
    case W2L__CDC_CANAL:
        members(t, e, "es", "id", s, x);
        if (s[0]) *k1 = num_at(s[0], x[0]);
        if (s[1]) *k2 = num_at(s[1], x[1]);
        break;
    case W2L__CDC_MAXWELL:
        members(t, e, "ts", "position", s, x);
        if (s[0]) *k1 = num_at(s[0], x[0]) * 1000;
        if (s[1] && x[1] - s[1] > 2) { /* "master.000001:1234" */
            const char *colon = memchr(s[1], ':', (size_t)(x[1] - s[1]));
            if (colon) *k2 = (file_seq(s[1] + 1, colon) << 36) + num_at(colon + 1, x[1]);
        }
        break;
    default: /* debezium: payload.source or source */
        if (member(t, e, "payload", &vs, &ve) && *skip_ws(vs, ve) == '{') t = vs, e = ve;
        if (member(t, e, "source", &ss, &se)) {
            if (member(ss, se, "ts_ms", &vs, &ve)) *k1 = num_at(vs, ve);
            int64_t f = 0, pos = 0;
            if (member(ss, se, "file", &vs, &ve) && ve - vs > 2) f = file_seq(vs + 1, ve - 1);
            if (member(ss, se, "pos", &vs, &ve)) pos = num_at(vs, ve);
            *k2 = (f << 36) + pos;
        } else if (member(t, e, "ts_ms", &vs, &ve)) {
            *k1 = num_at(vs, ve);
        }
        break;
    }
}

/* Copies the JSON string at [vs, ve) without its quotes; 0 when absent, escaped or long. */
static int plain_string(const char *vs, const char *ve, char *out, size_t size)
{
    if (!vs || ve - vs < 2 || *vs != '"' || ve[-1] != '"' || (size_t)(ve - vs - 2) >= size ||
        memchr(vs + 1, '\\', (size_t)(ve - vs - 2)))
        return 0;
    memcpy(out, vs + 1, (size_t)(ve - vs - 2));
    out[ve - vs - 2] = 0;
    return 1;
}

int w2l__cdc_peek_table(w2l__cdc_format fmt, const char *t, size_t len, char *db, char *tb,
                        size_t size, int *rows)
{
    const char *e = t + len, *s[2], *x[2], *vs, *ve;
    if (fmt == W2L__CDC_DEBEZIUM) {
        if (member(t, e, "payload", &vs, &ve) && *skip_ws(vs, ve) == '{') t = vs, e = ve;
        *rows = member(t, e, "op", &vs, &ve);
        if (!member(t, e, "source", &vs, &ve)) return 0;
        members(vs, ve, "db", "table", s, x);
    } else if (fmt == W2L__CDC_CANAL) {
        *rows = !member(t, e, "isDdl", &vs, &ve) || *vs != 't';
        members(t, e, "database", "table", s, x);
    } else { /* maxwell: "type":"table-create", "database-drop" ... are DDL */
        *rows = !member(t, e, "type", &vs, &ve) ||
                (strncmp(vs, "\"table-", 7) != 0 && strncmp(vs, "\"database-", 10) != 0);
        members(t, e, "database", "table", s, x);
    }
    return plain_string(s[0], x[0], db, size) && plain_string(s[1], x[1], tb, size) && *tb;
}
