/*
 * Process-wide set-up of the MariaDB client library, which the mysql source, the mysql
 * state store and the sql catalog share: mysql_library_init is not thread-safe, so
 * w2l_global_init() runs it once, before any of them can connect from several threads.
 * It is never undone: mysql_library_end() would break a later w2l_global_init().
 */
#include <mysql.h>

#include "common.h"

w2l_rc w2l__mariadb_init(w2l_error *err)
{
    if (mysql_library_init(0, NULL, NULL) != 0)
        return w2l__fail(err, W2L_ERROR, "the MariaDB client library did not initialise");
    return W2L_OK;
}
