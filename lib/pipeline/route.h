/*
 * Routes (w2l-routes(7)): route.NAME.source, a regular expression over a source table's
 * "db.table", sends the tables it matches to route.NAME.target, one lake table, so shards
 * (userinfo000 .. userinfo127 in several databases) land as one. The pipeline hashes a
 * routed table's elements by its target, so one DDL handler sees every shard of a target;
 * the DDL handler maps names, merges the shards' schemas and fills the source columns.
 *
 * A routes object caches what it computed per source table; it is used by one thread.
 */
#ifndef W2L_PIPELINE_ROUTE_H
#define W2L_PIPELINE_ROUTE_H

#include <regex.h>

#include "../common/common.h"

typedef struct w2l__route {
    char *name;          /* NAME of route.NAME.* */
    char *source;        /* the expression as configured */
    char *target;        /* the target template ($1..$9, $$) */
    regex_t re;          /* anchored: the whole "db.table"; the user's groups start at 2 */
    int key_with_source; /* -1 unset, 0 false, 1 true */
} w2l__route;

typedef struct w2l__routes w2l__routes;

/* The routes conf defines, sorted by name; *out NULL when it defines none. W2L_CONFIG names
 * the key of a route without source or target, an expression that does not compile, or a
 * template that names a group the expression lacks or is not DB.TABLE. */
w2l_rc w2l__routes_new(const w2l_conf *conf, w2l__routes **out, w2l_error *err);
void w2l__routes_free(w2l__routes *rs); /* NULL is a no-op */

/* Where source table db.table lands. Routed: *route is the first route (by name) that
 * matches and *ns, *name the target (borrowed from rs until it is freed). Not routed:
 * *route NULL, *ns = db, *name = table. rs may be NULL (no routes). W2L_CONFIG when the
 * expanded target is not DB.TABLE (names the route and the table). */
w2l_rc w2l__routes_map(w2l__routes *rs, const char *db, const char *table, const char **ns,
                       const char **name, const w2l__route **route, w2l_error *err);

#endif
