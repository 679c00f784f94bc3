/*
 * Iceberg primitive types: names as Iceberg's JSON schema writes them ("long",
 * "decimal(12,2)"), and the promotions Iceberg's schema evolution allows.
 */
#include <stdio.h>

#include "model.h"

static const char *const names[] = {
    [W2L_TYPE_BOOLEAN] = "boolean", [W2L_TYPE_INT] = "int",
    [W2L_TYPE_LONG] = "long",       [W2L_TYPE_FLOAT] = "float",
    [W2L_TYPE_DOUBLE] = "double",   [W2L_TYPE_DECIMAL] = "decimal",
    [W2L_TYPE_DATE] = "date",       [W2L_TYPE_TIME] = "time",
    [W2L_TYPE_TIMESTAMP] = "timestamp", [W2L_TYPE_TIMESTAMPTZ] = "timestamptz",
    [W2L_TYPE_STRING] = "string",   [W2L_TYPE_BINARY] = "binary",
};

const char *w2l__type_name(w2l_type_id id)
{
    if ((unsigned)id < W2L_ARRAY_LEN(names) && names[id]) return names[id];
    return "?";
}

int w2l__type_valid(w2l_type t)
{
    if (t.id < W2L_TYPE_BOOLEAN || t.id > W2L_TYPE_BINARY) return 0;
    if (t.id == W2L_TYPE_DECIMAL)
        return t.precision >= 1 && t.precision <= W2L_DECIMAL_MAX_PRECISION &&
               t.scale <= t.precision;
    return 1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Reads an unsigned number of at most 3 digits after optional spaces. */
static int small_uint(const char **p, unsigned *out)
{
    const char *s = *p;
    while (is_space(*s)) s++;
    unsigned v = 0;
    int n = 0;
    while (*s >= '0' && *s <= '9') {
        if (++n > 3) return -1;
        v = v * 10 + (unsigned)(*s++ - '0');
    }
    if (n == 0) return -1;
    while (is_space(*s)) s++;
    *p = s;
    *out = v;
    return 0;
}

w2l_rc w2l_type_parse(const char *text, w2l_type *out, w2l_error *err)
{
    if (!text || !out) return w2l__fail(err, W2L_MISUSE, "w2l_type_parse: NULL argument");
    w2l_type t = {0, 0, 0};
    for (unsigned i = 1; i < W2L_ARRAY_LEN(names); i++)
        if (i != W2L_TYPE_DECIMAL && strcmp(text, names[i]) == 0) {
            t.id = (w2l_type_id)i;
            *out = t;
            return W2L_OK;
        }
    if (strncmp(text, "decimal", 7) == 0) {
        const char *p = text + 7;
        unsigned prec, scale;
        while (is_space(*p)) p++;
        if (*p++ != '(' || small_uint(&p, &prec) || *p++ != ',' || small_uint(&p, &scale) ||
            *p++ != ')' || *p != '\0')
            return w2l__fail(err, W2L_SCHEMA, "bad decimal type '%.64s': expected decimal(P,S)",
                             text);
        if (prec < 1 || prec > W2L_DECIMAL_MAX_PRECISION || scale > prec)
            return w2l__fail(err, W2L_SCHEMA,
                             "bad decimal type '%.64s': need 1 <= precision <= 38 and "
                             "0 <= scale <= precision",
                             text);
        t.id = W2L_TYPE_DECIMAL;
        t.precision = (uint8_t)prec;
        t.scale = (uint8_t)scale;
        *out = t;
        return W2L_OK;
    }
    return w2l__fail(err, W2L_SCHEMA, "unknown or unsupported type '%.64s'", text);
}

char *w2l_type_format(w2l_type t, char *buf, size_t size)
{
    if (!buf || size == 0) return buf;
    if (t.id == W2L_TYPE_DECIMAL)
        snprintf(buf, size, "decimal(%u,%u)", (unsigned)t.precision, (unsigned)t.scale);
    else
        snprintf(buf, size, "%s", w2l__type_name(t.id));
    return buf;
}

int w2l_type_can_promote(w2l_type from, w2l_type to)
{
    if (!w2l__type_valid(from) || !w2l__type_valid(to)) return 0;
    if (from.id == W2L_TYPE_DECIMAL)
        return to.id == W2L_TYPE_DECIMAL && to.scale == from.scale &&
               to.precision >= from.precision;
    if (from.id == to.id) return 1;
    return (from.id == W2L_TYPE_INT && to.id == W2L_TYPE_LONG) ||
           (from.id == W2L_TYPE_FLOAT && to.id == W2L_TYPE_DOUBLE);
}
