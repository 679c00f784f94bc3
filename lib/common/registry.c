/*
 * A tiny registry of plug-in method tables by name (sqlite3_vfs_register's idea), shared
 * by the source, state, catalog, file IO and operator kinds. Registration is rare, lookups
 * are at open time only, so a mutex and a linear scan are enough.
 */
#include <stdio.h>

#include "common.h"
#include "thread.h"

static mtx_t reg_mtx;
static once_flag reg_once = ONCE_FLAG_INIT;
static void reg_init(void) { mtx_init(&reg_mtx, mtx_plain); }

w2l_rc w2l__registry_add(w2l__registry *r, const char *kind, const char *name,
                         const void *methods, int make_default)
{
    (void)kind;
    call_once(&reg_once, reg_init);
    w2l_rc rc = W2L_OK;
    mtx_lock(&reg_mtx);
    int i;
    for (i = 0; i < r->count; i++)
        if (strcmp(r->names[i], name) == 0) break;
    if (i < r->count) {
        rc = r->methods[i] == methods ? W2L_OK : W2L_EXISTS;
    } else if (r->count == W2L__REGISTRY_MAX) {
        rc = W2L_NOMEM;
    } else {
        if (r->count == 0) r->def = 0;
        r->names[r->count] = name;
        r->methods[r->count] = methods;
        r->count++;
    }
    if (rc == W2L_OK && make_default) r->def = i;
    mtx_unlock(&reg_mtx);
    return rc;
}

const void *w2l__registry_find(w2l__registry *r, const char *name)
{
    call_once(&reg_once, reg_init);
    const void *m = NULL;
    mtx_lock(&reg_mtx);
    if (!name || !*name) {
        if (r->count > 0) m = r->methods[r->def];
    } else {
        for (int i = 0; i < r->count; i++)
            if (strcmp(r->names[i], name) == 0) m = r->methods[i];
    }
    mtx_unlock(&reg_mtx);
    return m;
}

void w2l__registry_names(w2l__registry *r, char *buf, size_t size)
{
    call_once(&reg_once, reg_init);
    size_t n = 0;
    buf[0] = '\0';
    mtx_lock(&reg_mtx);
    for (int i = 0; i < r->count && n < size; i++) {
        int k = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", r->names[i]);
        if (k < 0) break;
        n += (size_t)k;
    }
    mtx_unlock(&reg_mtx);
}

void w2l__registry_clear(w2l__registry *r)
{
    call_once(&reg_once, reg_init);
    mtx_lock(&reg_mtx);
    r->count = 0;
    r->def = 0;
    mtx_unlock(&reg_mtx);
}
