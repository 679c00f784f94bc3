/*
 * A table of a lake read back as text with w2l_lake_scan(3), for the suites that run a
 * whole pipeline and compare what landed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define MAX_ROWS 256

typedef struct rows {
    char *v[MAX_ROWS];
    size_t n;
} rows;

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    rows *r = ctx;
    char text[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof text; i++) {
        char one[128] = "-";
        if (!row[i].is_null)
            w2l_value_format(w2l_schema_field(s, i)->type, &row[i], one, sizeof one);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? "|" : "", one);
    }
    ck_assert_uint_lt(r->n, MAX_ROWS);
    r->v[r->n++] = strdup(text);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *lake_rows(const char *warehouse, const char *ns, const char *table)
{
    static char out[8192];
    w2l_error err = { 0 };
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", warehouse, &err), err);
    w2l_lake *l;
    ck_assert_ok(w2l_lake_open(c, &l, &err), err);
    rows r = { { 0 }, 0 };
    w2l_rc rc = w2l_lake_scan(l, ns, table, -1, on_row, &r, &err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    if (rc == W2L_NOTFOUND) return "(none)";
    ck_assert_ok(rc, err);
    qsort(r.v, r.n, sizeof *r.v, cmp_str);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r.n; i++) {
        if (len < sizeof out)
            len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", r.v[i]);
        free(r.v[i]);
    }
    return out;
}
