/*
 * Tables: create, load and commit with retry (Iceberg spec "Optimistic Concurrency":
 * a writer builds new metadata from a base and swaps it in atomically; when the swap fails
 * because another writer moved the table, it reloads and re-applies its change on the new
 * base). w2l-design(7) section 2 (each checkpoint one snapshot per table) and section 5 (the
 * catalog contract). The number of retries is the caller's (conf "commit-retries").
 */
#include <stdio.h>

#include "iceberg.h"
#include "rest.h"

static w2l_rc read_meta(w2l_fileio *io, const char *loc, w2l__ice_meta **out, w2l_error *err)
{
    void *data = NULL;
    size_t len = 0;
    const char *p = loc;
    if (strncmp(p, "file://", 7) == 0) p += 7;
    else if (strncmp(p, "file:", 5) == 0) p += 5;
    W2L_TRY(w2l_fileio_read_all(io, p, &data, &len, err));
    w2l_rc rc = w2l__ice_meta_parse(data, len, out, err);
    w2l__free(data);
    if (rc != W2L_OK) w2l__error_prefix(err, "%s: ", loc);
    return rc;
}

static w2l__ice_table *table_new(w2l_catalog *cat, w2l_fileio *io, const char *ns, const char *name)
{
    w2l__ice_table *t = w2l__calloc(1, sizeof *t);
    if (!t) return NULL;
    t->catalog = cat;
    t->io = io;
    t->ns = w2l__strdup(ns);
    t->name = w2l__strdup(name);
    if (!t->ns || !t->name) {
        w2l__ice_table_free(t);
        return NULL;
    }
    return t;
}

void w2l__ice_table_free(w2l__ice_table *t)
{
    if (!t) return;
    w2l__free(t->ns);
    w2l__free(t->name);
    w2l__free(t->meta_location);
    w2l__ice_meta_free(t->meta);
    w2l__free(t);
}

w2l_rc w2l__ice_table_refresh(w2l__ice_table *t, w2l_error *err)
{
    w2l_buf loc = {0};
    w2l_rc rc = w2l__catalog_load(t->catalog, t->ns, t->name, &loc, err);
    w2l__ice_meta *m = NULL;
    if (rc == W2L_OK) rc = read_meta(t->io, (const char *)loc.data, &m, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&loc);
        return rc;
    }
    w2l__ice_meta_free(t->meta);
    w2l__free(t->meta_location);
    t->meta = m;
    t->meta_location = (char *)loc.data;
    return W2L_OK;
}

w2l_rc w2l__ice_table_load(w2l_catalog *cat, w2l_fileio *io, const char *ns, const char *table,
                           w2l__ice_table **out, w2l_error *err)
{
    *out = NULL;
    w2l__ice_table *t = table_new(cat, io, ns, table);
    W2L_NOMEM_IF(!t, err);
    w2l_rc rc = w2l__ice_table_refresh(t, err);
    if (rc != W2L_OK) {
        w2l__ice_table_free(t);
        return rc;
    }
    *out = t;
    return W2L_OK;
}

w2l_rc w2l__ice_table_new(w2l_catalog *cat, w2l_fileio *io, const char *location, const char *ns,
                          const char *table, w2l_schema *schema, const w2l__ice_spec *spec,
                          const w2l__ice_props *props, w2l__ice_table **out, w2l_error *err)
{
    *out = NULL;
    w2l__ice_table *t = table_new(cat, io, ns, table);
    W2L_NOMEM_IF(!t, err);
    w2l_rc rc = w2l__ice_meta_new(location, schema, spec, props, &t->meta, err);
    char *text = NULL;
    size_t len = 0;
    /* a catalog that vends storage credentials gives them for the location now, before the
     * table's first files are written */
    if (rc == W2L_OK && cat && cat->methods == &w2l__catalog_rest) {
        rc = w2l__ice_meta_print(t->meta, &text, &len, err);
        if (rc == W2L_OK) rc = w2l__rest_stage_create(cat, ns, table, text, len, err);
        w2l__free(text);
    }
    if (rc != W2L_OK) {
        w2l__ice_table_free(t);
        return rc;
    }
    *out = t;
    return W2L_OK;
}

w2l_rc w2l__ice_table_create(w2l_catalog *cat, w2l_fileio *io, const char *location,
                             const char *ns, const char *table, w2l_schema *schema,
                             const w2l__ice_spec *spec, const w2l__ice_props *props,
                             w2l__ice_table **out, w2l_error *err)
{
    w2l__ice_table *t;
    W2L_TRY(w2l__ice_table_new(cat, io, location, ns, table, schema, spec, props, &t, err));
    char *text = NULL;
    size_t len = 0;
    w2l_rc rc = w2l__ice_meta_print(t->meta, &text, &len, err);
    w2l_buf loc = {0};
    if (rc == W2L_OK) rc = w2l__catalog_commit(cat, ns, table, NULL, text, len, &loc, err);
    w2l__free(text);
    if (rc != W2L_OK) {
        w2l_buf_release(&loc);
        w2l__ice_table_free(t);
        return rc;
    }
    t->meta_location = (char *)loc.data;
    *out = t;
    return W2L_OK;
}

w2l_rc w2l__ice_table_commit(w2l__ice_table *t, w2l__ice_change *c, int retries, w2l_error *err)
{
    for (int attempt = 0;; attempt++) {
        w2l_rc rc = w2l__ice_table_try_commit(t, c, err);
        if (rc != W2L_CONFLICT || attempt >= retries) return rc;
        w2l__log(W2L_LOG_INFO,
                 "commit %s.%s lost a race (attempt %d): %s; retrying on the new base", t->ns,
                 t->name, attempt + 1, err->msg);
        /* try_commit reloaded t: the next attempt applies c to the winner's metadata */
    }
}
