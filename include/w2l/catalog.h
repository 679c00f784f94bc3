/*
 * Catalog plug-in: where a table's current metadata file is recorded. A commit is an
 * optimistic swap from the metadata the writer started from to a new one; it fails with
 * W2L_CONFLICT when another writer committed first. Built in: "hadoop" (filesystem layout,
 * vN.metadata.json + version-hint.text), "sql" (MariaDB table of the JDBC catalog schema),
 * "rest" (an Iceberg REST catalog server, w2l-catalogs(7)).
 * Implementer's contract: w2l_catalog_methods(3).
 */
#ifndef W2L_CATALOG_H
#define W2L_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"
#include "fileio.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_catalog w2l_catalog;

#define W2L_CATALOG_METHODS_V1 1
#define W2L_CATALOG_METHODS_V2 2 /* adds commit_tables */

/* One table's change in a multi-table commit (commit_tables). The caller fills the first
 * five; the catalog the outcome. */
typedef struct w2l_catalog_commit {
    const char *ns, *table;
    const char *base;     /* the table's current metadata location the change starts from */
    const char *metadata; /* the whole next metadata (JSON) */
    size_t len;
    w2l_rc rc;            /* W2L_OK: committed, new_location set; W2L_CONFLICT: not committed
                             (another writer moved the table, or a requirement of another
                             table of the batch failed); W2L_NOTFOUND: the table is gone;
                             W2L_UNAVAILABLE: the outcome is unknown (its files may be live) */
    w2l_error err;        /* when rc is not W2L_OK */
    w2l_buf new_location; /* caller-owned, released by the caller */
} w2l_catalog_commit;

typedef struct w2l_catalog_methods {
    int version;      /* W2L_CATALOG_METHODS_V1 or _V2 */
    const char *name; /* registry key: "hadoop", "sql", "rest" */
    size_t size;      /* sizeof impl struct; the core allocates and zeroes it */
    void *app_data;   /* for the implementer; the core never reads it */
    /* warehouse: root directory or URI of the lake; io: borrowed for the catalog's life. */
    w2l_rc (*open)(const struct w2l_catalog_methods *m, const w2l_conf *conf, const char *uri,
                   const char *warehouse, w2l_fileio *io, w2l_catalog *self, w2l_error *err);
    /* Appends the current metadata location of ns.table to location; W2L_NOTFOUND. */
    w2l_rc (*load_table)(w2l_catalog *self, const char *ns, const char *table,
                         w2l_buf *location, w2l_error *err);
    /* Writes metadata (JSON) as the table's next metadata file and swaps it in, provided the
     * current location still equals base (NULL: the table must not exist yet). Appends the
     * new location to new_location. W2L_CONFLICT when base is stale, W2L_EXISTS when base
     * is NULL and the table exists. */
    w2l_rc (*commit_table)(w2l_catalog *self, const char *ns, const char *table,
                           const char *base, const char *metadata, size_t len,
                           w2l_buf *new_location, w2l_error *err);
    /* Forgets the table (files are kept unless purge). W2L_NOTFOUND. */
    w2l_rc (*drop_table)(w2l_catalog *self, const char *ns, const char *table, int purge,
                         w2l_error *err);
    w2l_rc (*rename_table)(w2l_catalog *self, const char *ns, const char *table,
                           const char *to_ns, const char *to_table, w2l_error *err);
    /* Calls fn for each table of ns (ns NULL: every namespace). */
    w2l_rc (*list_tables)(w2l_catalog *self, const char *ns,
                          int (*fn)(void *ctx, const char *ns, const char *table), void *ctx,
                          w2l_error *err);
    void (*close)(w2l_catalog *self); /* cannot fail */
    /* V2, optional (NULL: none). Commits the n changes (existing tables, base never NULL)
     * as one transaction, all or none, each item's outcome in its rc. W2L_NOTFOUND when the
     * catalog offers no multi-table commit (nothing was applied: the caller commits table
     * by table); another error when nothing could be decided (item outcomes unset). */
    w2l_rc (*commit_tables)(w2l_catalog *self, w2l_catalog_commit *items, size_t n,
                            w2l_error *err);
} w2l_catalog_methods;
struct w2l_catalog { const w2l_catalog_methods *methods; };

/* Registry, as for file IO. See w2l_catalog_register(3). */
W2L_API w2l_rc w2l_catalog_register(const w2l_catalog_methods *m, int make_default);
W2L_API const w2l_catalog_methods *w2l_catalog_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
