/*
 * Table operations: the catalog changes a DDL handler records and the owner (owner.h)
 * applies at checkpoint completion, in source order. Each names the table incarnation it
 * was prepared for by its Iceberg table-uuid. The owner's durable record of the last one
 * applied keeps older ones from being applied again; each is idempotent right after
 * itself (a crash between applying it and recording it):
 *
 *   {"op":"create","ns":"db","table":"t","metadata":"<v1 metadata JSON text>"}
 *       creates the table with exactly this metadata (its uuid, schema, location); done
 *       when the name holds that uuid already; fails when it holds another table.
 *   {"op":"schema","ns":"db","table":"t","uuid":"...","schema-id":3,"schema":"<JSON>"}
 *       makes the schema current (the same id the handler computed on its copy); skipped
 *       when the name holds another incarnation or none. The table property
 *       "w2l.ddl-op" = "<job-id>/<checkpoint>/<handler>/<index>" records the newest
 *       operation applied, so a replay of an older one is skipped.
 *   {"op":"spec","ns":"db","table":"t","uuid":"...","spec-id":1,"spec":"<JSON>"}
 *       makes a spec partitioning like this one the default (an existing one, else a new
 *       one: w2l__ice_meta_set_spec); skipped like "schema", marked with the same property.
 *   {"op":"rename","ns":"db","table":"a","to-ns":"db","to-table":"b","uuid":"..."}
 *       renames when "a" holds the uuid (and drops "a" when "b" holds it too: a rename
 *       cut short); done when "a" does not hold it.
 *   {"op":"drop","ns":"db","table":"t","uuid":"..."}
 *       drops (without purge) when the name holds the uuid; otherwise already done.
 */
#ifndef W2L_PIPELINE_TABLE_OPS_H
#define W2L_PIPELINE_TABLE_OPS_H

#include "../common/common.h"
#include "../iceberg/iceberg.h"
#include "../json/json.h"

/* Recording: each appends one operation object to ops (comma-separated members of the
 * checkpoint's array). */
w2l_rc w2l__tops_create(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err);
w2l_rc w2l__tops_schema(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err);
w2l_rc w2l__tops_spec(w2l_buf *ops, const w2l__ice_table *t, w2l_error *err);
w2l_rc w2l__tops_rename(w2l_buf *ops, const w2l__ice_table *t, const char *to_ns,
                        const char *to_table, w2l_error *err);
w2l_rc w2l__tops_drop(w2l_buf *ops, const char *ns, const char *table, const char *uuid,
                      w2l_error *err);

/* Applying: operation o, the index-th of handler's array for checkpoint ckpt. */
typedef struct w2l__tops_ctx {
    w2l_catalog *cat;
    w2l_fileio *io;
    const char *job_id;
    int retries;
    int shared;  /* a shared source (ledger.h): a table another member created or changed
                  * meanwhile is W2L_CONFLICT, and the pipeline starts again from the lake */
} w2l__tops_ctx;

w2l_rc w2l__tops_apply(w2l__tops_ctx *c, uint64_t ckpt, unsigned handler, unsigned index,
                       const w2l__json *o, w2l_error *err);

#endif
