/*
 * The built-in DDL handler operator (op_ddl.c), registered by lib/builtins.c as "default"
 * of kind W2L_OPERATOR_DDL.
 *
 * What it sends downstream (the contract with the built-in writer and committer):
 *   CHANGES         e->ns/e->table = Iceberg namespace (source database) and table; every
 *                   change's schema is the table's current Iceberg schema (field ids,
 *                   schema id, identifier = primary key), rows in its field order, values
 *                   in Iceberg types; present bitmaps only on before/delete images.
 *   SCHEMA          before a table's first CHANGES and after every schema change:
 *                   e->schema = the Iceberg schema, e->payload =
 *                   {"location": "<table location>", "schema-id": N}.
 *   WRITER_COMMIT   the fence before a schema change of a table with DML since the last
 *                   barrier (ns, table, ddl_id); every writer of the table answers with a
 *                   WRITER_COMMIT of the same ddl_id.
 * State: "ddl/<instance index>" at every barrier (JSON: tables with their Iceberg schema
 * id and quarantine flag, shadow tables of online schema change tools, recent statement
 * keys).
 */
#ifndef W2L_PIPELINE_OP_DDL_H
#define W2L_PIPELINE_OP_DDL_H

#include "../common/common.h"

extern const w2l_operator_methods w2l__op_ddl;

#endif
