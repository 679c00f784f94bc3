/*
 * Catalog plug-in registry, and the wrappers through which the library calls catalog
 * methods (w2l-design(7) section 6: load · create · commit(expected, new) → conflict when
 * stale). Also the file helpers every catalog shares: table directories, recursive removal
 * and purging the files a table's metadata reaches.
 */
#include <stdio.h>

#include "iceberg.h"
#include "../io/io.h"

w2l__registry w2l__catalog_registry;

w2l_rc w2l_catalog_register(const w2l_catalog_methods *m, int make_default)
{
    if (!m || m->version < W2L_CATALOG_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->load_table || !m->commit_table || !m->drop_table || !m->rename_table ||
        !m->list_tables || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__catalog_registry, "catalog", m->name, m, make_default);
}

const w2l_catalog_methods *w2l_catalog_find(const char *name)
{
    return w2l__registry_find(&w2l__catalog_registry, name);
}

w2l_rc w2l__catalog_open(const char *uri, const w2l_conf *conf, const char *warehouse,
                         w2l_fileio *io, w2l_catalog **out, w2l_error *err)
{
    *out = NULL;
    char name[64] = "";
    if (uri && *uri) {
        size_t n = strcspn(uri, ":");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, uri, n);
        name[n] = '\0';
    }
    const w2l_catalog_methods *m = w2l_catalog_find(*name ? name : NULL);
    if (!m) {
        char known[256];
        w2l__registry_names(&w2l__catalog_registry, known, sizeof known);
        return w2l__fail(err, W2L_NOTFOUND, "unknown catalog '%s' (known: %s)", name, known);
    }
    if (m->size < sizeof(w2l_catalog))
        return w2l__fail(err, W2L_MISUSE, "catalog %s: size too small", m->name);
    w2l_catalog *c = w2l__calloc(1, m->size);
    W2L_NOMEM_IF(!c, err);
    c->methods = m;
    w2l_rc rc = m->open(m, conf, uri ? uri : "", warehouse, io, c, err);
    if (rc != W2L_OK) {
        w2l__free(c);
        return rc;
    }
    *out = c;
    return W2L_OK;
}

void w2l__catalog_close(w2l_catalog *c)
{
    if (!c) return;
    c->methods->close(c);
    w2l__free(c);
}

w2l_rc w2l__catalog_load(w2l_catalog *c, const char *ns, const char *table, w2l_buf *loc,
                         w2l_error *err)
{
    loc->len = 0;
    W2L_TRY(c->methods->load_table(c, ns, table, loc, err));
    return w2l__buf_cstr(loc, err);
}

w2l_rc w2l__catalog_commit(w2l_catalog *c, const char *ns, const char *table, const char *base,
                           const char *meta, size_t len, w2l_buf *loc, w2l_error *err)
{
    loc->len = 0;
    w2l_rc rc = c->methods->commit_table(c, ns, table, base, meta, len, loc, err);
    if (rc == W2L_CONFLICT) err->flags |= W2L_ERR_RETRIABLE;
    if (rc != W2L_OK) return rc;
    return w2l__buf_cstr(loc, err);
}

int w2l__catalog_has_batch(const w2l_catalog *c)
{
    return c->methods->version >= W2L_CATALOG_METHODS_V2 && c->methods->commit_tables;
}

w2l_rc w2l__catalog_commit_tables(w2l_catalog *c, w2l_catalog_commit *items, size_t n,
                                  w2l_error *err)
{
    if (!w2l__catalog_has_batch(c))
        return w2l__fail(err, W2L_NOTFOUND, "catalog %s: no multi-table commits",
                         c->methods->name);
    for (size_t i = 0; i < n; i++) {
        items[i].rc = W2L_UNAVAILABLE;
        w2l_error_clear(&items[i].err);
        items[i].new_location.len = 0;
    }
    W2L_TRY(c->methods->commit_tables(c, items, n, err));
    for (size_t i = 0; i < n; i++) {
        w2l_catalog_commit *it = &items[i];
        if (it->rc == W2L_OK && w2l__buf_cstr(&it->new_location, &it->err) != W2L_OK)
            it->rc = it->err.code;
        if (it->rc == W2L_CONFLICT) it->err.flags |= W2L_ERR_RETRIABLE;
    }
    return W2L_OK;
}

w2l_rc w2l__catalog_drop(w2l_catalog *c, const char *ns, const char *table, int purge,
                         w2l_error *err)
{
    return c->methods->drop_table(c, ns, table, purge, err);
}

w2l_rc w2l__catalog_rename(w2l_catalog *c, const char *ns, const char *table, const char *to_ns,
                           const char *to_table, w2l_error *err)
{
    return c->methods->rename_table(c, ns, table, to_ns, to_table, err);
}

w2l_rc w2l__catalog_list(w2l_catalog *c, const char *ns,
                         int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                         w2l_error *err)
{
    return c->methods->list_tables(c, ns, fn, ctx, err);
}

/* ---- shared file helpers ---- */

char *w2l__ice_table_dir(const char *warehouse, const char *ns, const char *table)
{
    size_t n = strlen(warehouse);
    while (n > 1 && warehouse[n - 1] == '/') n--;
    return w2l__asprintf("%.*s/%s/%s", (int)n, warehouse, ns, table);
}

typedef struct names {
    char **v;
    size_t n, cap;
    int oom;
} names;

static int collect(void *ctx, const char *name)
{
    names *ns = ctx;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 32;
        char **nv = w2l__realloc(ns->v, cap * sizeof *nv);
        if (!nv) return ns->oom = 1;
        ns->v = nv;
        ns->cap = cap;
    }
    if (!(ns->v[ns->n] = w2l__strdup(name))) return ns->oom = 1;
    ns->n++;
    return 0;
}

static void names_free(names *ns)
{
    for (size_t i = 0; i < ns->n; i++) w2l__free(ns->v[i]);
    w2l__free(ns->v);
}

w2l_rc w2l__ice_remove_tree(w2l_fileio *io, const char *dir, w2l_error *err)
{
    names ns = {0};
    w2l_error e2;
    w2l_rc rc = w2l_fileio_list(io, dir, collect, &ns, &e2);
    if (rc != W2L_OK) { /* not a directory: a file */
        names_free(&ns);
        return w2l_fileio_remove(io, dir, err);
    }
    if (ns.oom) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    for (size_t i = 0; rc == W2L_OK && i < ns.n; i++) {
        char *p = w2l__asprintf("%s/%s", dir, ns.v[i]);
        if (!p) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else rc = w2l__ice_remove_tree(io, p, err);
        w2l__free(p);
    }
    names_free(&ns);
    if (rc == W2L_OK) rc = w2l_fileio_remove(io, dir, err);
    return rc;
}

const char *w2l__ice_local_path(const char *p)
{
    if (strncmp(p, "file://", 7) == 0) return p + 7;
    if (strncmp(p, "file:", 5) == 0) return p + 5;
    return p;
}

int w2l__ice_same_dir(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

w2l_rc w2l__ice_purge(w2l_fileio *io, const w2l__ice_meta *m, const char *meta_location,
                      w2l_error *err)
{
    w2l__arena a;
    w2l__arena_init(&a, 1 << 16);
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; rc == W2L_OK && i < m->nsnapshots; i++) {
        w2l__ice_manifest *ml;
        size_t nm;
        w2l_error e2;
        if (w2l__ice_manifest_list_read(io, w2l__ice_local_path(m->snapshots[i].manifest_list), &a,
                                        &ml, &nm, &e2) != W2L_OK)
            continue; /* already gone */
        for (size_t k = 0; rc == W2L_OK && k < nm; k++) {
            w2l__ice_entry *es;
            size_t ne;
            w2l__ice_manifest mf = ml[k];
            mf.path = w2l__ice_local_path(mf.path);
            if (w2l__ice_manifest_read(io, &mf, w2l__ice_meta_spec(m, mf.spec_id), &a, &es, &ne,
                                       &e2) == W2L_OK)
                for (size_t j = 0; rc == W2L_OK && j < ne; j++)
                    rc = w2l_fileio_remove(io, w2l__ice_local_path(es[j].file.path), err);
            if (rc == W2L_OK) rc = w2l_fileio_remove(io, mf.path, err);
        }
        if (rc == W2L_OK)
            rc = w2l_fileio_remove(io, w2l__ice_local_path(m->snapshots[i].manifest_list), err);
    }
    /* older metadata files beside the current one only: a renamed table's log names files
     * of its old directory, which a table created under the old name may use now */
    for (size_t i = 0; rc == W2L_OK && meta_location && i < m->nmeta_log; i++)
        if (w2l__ice_same_dir(w2l__ice_local_path(m->meta_log[i].file),
                              w2l__ice_local_path(meta_location)))
            rc = w2l_fileio_remove(io, w2l__ice_local_path(m->meta_log[i].file), err);
    if (rc == W2L_OK && meta_location)
        rc = w2l_fileio_remove(io, w2l__ice_local_path(meta_location), err);
    w2l__arena_release(&a);
    return rc;
}

w2l_rc w2l__catalog_open_conf(const w2l_conf *conf, w2l_fileio **io, w2l_catalog **out,
                              w2l_error *err)
{
    const char *uri = NULL, *wh = NULL;
    w2l_conf_get(conf, "catalog", &uri, NULL);
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    if (!*io) W2L_TRY(w2l__fileio_open_for(conf, wh, io, err));
    return w2l__catalog_open(uri, conf, wh, *io, out, err);
}
