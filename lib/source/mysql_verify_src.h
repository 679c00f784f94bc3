/*
 * The mysql source as w2l verify sees it (lib/pipeline/verify.c): the same URI, parameters
 * and source.* keys as `w2l run` (mysql_config.c), one connection, and the selected tables'
 * definitions from information_schema (mysql_tracked.c), without starting a source: no
 * binlog, no snapshot, no lock.
 */
#ifndef W2L_MYSQL_VERIFY_SRC_H
#define W2L_MYSQL_VERIFY_SRC_H

#include "../common/common.h"
#include "../ddl/ddl.h"
#include "../mysql/mysql_client.h"

typedef struct w2l__mysrc_col {
    const char *name;
    const char *type;   /* information_schema COLUMN_TYPE ("int(11) unsigned") */
    int nullable;
} w2l__mysrc_col;

/* One selected table; strings borrowed until w2l__mysrc_close. */
typedef struct w2l__mysrc_table {
    const char *db, *name;
    const w2l__mysrc_col *cols;
    size_t ncols;
    const size_t *pk;   /* indexes into cols, in key order */
    size_t npk;         /* 0: no primary key */
} w2l__mysrc_table;

typedef struct w2l__mysrc w2l__mysrc;

/* Parses conf's "source" (a mysql:// URI; W2L_CONFIG for any other source) and the
 * source.* keys as the mysql source does (a server id is not needed), connects ("verify"
 * naming the server in messages) and reads the selected tables, sorted by db then name.
 * *out set only on W2L_OK. */
w2l_rc w2l__mysrc_open(const w2l_conf *conf, w2l__mysrc **out, w2l_error *err);
void w2l__mysrc_close(w2l__mysrc *s); /* NULL is a no-op */
w2l__my *w2l__mysrc_conn(w2l__mysrc *s);
const w2l__type_opts *w2l__mysrc_topts(const w2l__mysrc *s);
int w2l__mysrc_is_mysql(const w2l__mysrc *s); /* MySQL, not MariaDB */
size_t w2l__mysrc_ntables(const w2l__mysrc *s);
const w2l__mysrc_table *w2l__mysrc_table_at(const w2l__mysrc *s, size_t i);

#endif
