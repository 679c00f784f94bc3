/*
 * The plug-ins the library ships, registered by w2l_global_init(). The one file that
 * knows every module, so module registries never depend on each other.
 */
#include "common/common.h"
#include "iceberg/iceberg.h"
#include "iceberg/rest.h"
#include "io/io.h"
#include "pipeline/op_ddl.h"
#include "pipeline/ops.h"
#include "source/mysql_int.h"
#include "source/source_int.h"
#include "state/state_int.h"

extern w2l__registry w2l__source_registry;
void w2l__operator_registry_clear(void);

w2l_rc w2l__builtins_register(w2l_error *err);
void w2l__builtins_unregister(void);

w2l_rc w2l__builtins_register(w2l_error *err)
{
    w2l_rc rc;
    w2l__avro_use_allocator();
    W2L_TRY(w2l__mariadb_init(err));
    if ((rc = w2l_fileio_register(&w2l__fileio_local, 1)) != W2L_OK ||
        (rc = w2l_fileio_register(&w2l__fileio_mem, 0)) != W2L_OK ||
        (rc = w2l_fileio_register(&w2l__fileio_s3, 0)) != W2L_OK ||
        (rc = w2l_state_register(&w2l__state_file, 1)) != W2L_OK ||
        (rc = w2l_state_register(&w2l__state_mem, 0)) != W2L_OK ||
        (rc = w2l_state_register(&w2l__state_mysql, 0)) != W2L_OK ||
        (rc = w2l_catalog_register(&w2l__catalog_hadoop, 1)) != W2L_OK ||
        (rc = w2l_catalog_register(&w2l__catalog_sql, 0)) != W2L_OK ||
        (rc = w2l_catalog_register(&w2l__catalog_rest, 0)) != W2L_OK ||
        (rc = w2l_source_register(&w2l__source_file, 0)) != W2L_OK ||
        (rc = w2l_source_register(&w2l__source_kafka, 0)) != W2L_OK ||
        (rc = w2l_source_register(&w2l__source_mysql, 0)) != W2L_OK ||
        (rc = w2l_operator_register(&w2l__op_writer)) != W2L_OK ||
        (rc = w2l_operator_register(&w2l__op_committer)) != W2L_OK)
        return w2l__fail(err, rc, "registering built-in plug-ins: %s", w2l_rc_name(rc));
    if ((rc = w2l_operator_register(&w2l__op_ddl)) != W2L_OK)
        return w2l__fail(err, rc, "registering the built-in DDL handler: %s", w2l_rc_name(rc));
    return W2L_OK;
}

void w2l__builtins_unregister(void)
{
    w2l__registry_clear(&w2l__fileio_registry);
    w2l__registry_clear(&w2l__state_registry);
    w2l__registry_clear(&w2l__source_registry);
    w2l__registry_clear(&w2l__catalog_registry);
    w2l__operator_registry_clear();
    w2l__avro_cache_clear();
}
