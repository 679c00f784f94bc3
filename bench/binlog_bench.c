/*
 * mysql source benchmark on the "orders" data set.
 *   binlog_bench load PORT N SEED TXROWS   loads N rows into bench.orders of the private
 *                                          server on 127.0.0.1:PORT (user w2l) as
 *                                          multi-row INSERTs of min(TXROWS, 1000) rows;
 *                                          TXROWS = 0: all rows in one transaction, else
 *                                          one transaction per TXROWS rows
 *   binlog_bench read PORT SID MODE        runs the "mysql" source (user cdc) with
 *                                          startup=MODE (earliest | initial) until caught
 *                                          up into an emitter whose hooks only count and
 *                                          free; prints one JSON line
 *                                          {"rows","seconds","cpu"}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mysql.h>

#include "orders.h"
#include "common/common.h"
#include "event/emit.h"

static double now(int cpu)
{
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void q(MYSQL *m, const char *s)
{
    if (mysql_real_query(m, s, strlen(s))) {
        fprintf(stderr, "binlog_bench: %.200s: %s\n", s, mysql_error(m));
        exit(1);
    }
}

static int load(int port, long n, uint64_t seed, long txrows)
{
    MYSQL *m = mysql_init(NULL);
    mysql_optionsv(m, MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
    if (!mysql_real_connect(m, "127.0.0.1", "w2l", "w2lpass", NULL, (unsigned)port, NULL, 0)) {
        fprintf(stderr, "binlog_bench: connect: %s\n", mysql_error(m));
        return 1;
    }
    q(m, "CREATE DATABASE IF NOT EXISTS bench");
    q(m, "DROP TABLE IF EXISTS bench.orders");
    q(m, "CREATE TABLE bench.orders (id BIGINT NOT NULL PRIMARY KEY, customer_id INT NOT NULL, "
         "status VARCHAR(16) NOT NULL, amount DECIMAL(12,2) NOT NULL, qty INT NOT NULL, "
         "created_at DATETIME(6) NOT NULL, updated_at TIMESTAMP(6) NOT NULL, note VARCHAR(200), "
         "flag TINYINT(1) NOT NULL, score DOUBLE NOT NULL) ENGINE=InnoDB");
    q(m, "RESET MASTER"); /* the binlog holds only the data set */
    orders_gen g;
    orders_init(&g, seed);
    size_t cap = 1 << 20;
    char *sql = malloc(cap + 4096);
    long per = txrows > 0 && txrows < 1000 ? txrows : 1000;
    if (txrows == 0) q(m, "START TRANSACTION");
    for (long done = 0; done < n;) {
        size_t len = (size_t)sprintf(sql, "INSERT INTO bench.orders VALUES ");
        for (long k = 0; k < per && done < n; k++, done++) {
            order_row r;
            orders_row(&g, &r);
            char c[40], u[40];
            orders_civil(r.created_at / 1000000, c, sizeof c);
            orders_civil(r.updated_at / 1000000, u, sizeof u);
            len += (size_t)sprintf(sql + len, "%s(%lld,%d,'%s',%lld.%02lld,%d,'%s.%06lld','%s',%s%s%s,%d,%.17g)",
                                   k ? "," : "", (long long)r.id, r.customer_id, orders_status[r.status],
                                   (long long)(r.cents / 100), (long long)(r.cents % 100), r.qty, c,
                                   (long long)(r.created_at % 1000000), u, r.note_null ? "" : "'",
                                   r.note_null ? "NULL" : r.note, r.note_null ? "" : "'", r.flag, r.score);
        }
        q(m, sql);
    }
    if (txrows == 0) q(m, "COMMIT");
    free(sql);
    mysql_close(m);
    return 0;
}

static uint64_t rows;
static w2l_rc on_batch(void *ctx, w2l__batch *b, w2l_error *err)
{
    rows += b->n;
    w2l__batch_free(b);
    return W2L_OK;
}
static w2l_rc on_ddl(void *ctx, w2l__ddl_elem *d, w2l_error *err)
{
    w2l__ddl_elem_free(d);
    return W2L_OK;
}
static w2l_rc on_commit(void *ctx, const char *pos, size_t len, w2l_error *err) { return W2L_OK; }

static int readall(int port, const char *sid, const char *mode)
{
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) return 1;
    w2l__emit_hooks h = {on_batch, on_ddl, on_commit, NULL};
    w2l_emitter *em = w2l__emitter_new(&h, 4096);
    w2l_conf *conf = w2l_conf_new();
    w2l_conf_set(conf, "until-caught-up", "true", &err);
    char uri[512];
    snprintf(uri, sizeof uri, "mysql://cdc:cdcpass@127.0.0.1:%d/?server-id=%s&databases=bench&startup=%s", port, sid,
             mode);
    const w2l_source_methods *mt = w2l_source_find("mysql");
    w2l_source *s = calloc(1, mt->size);
    s->methods = mt;
    double t0 = now(0), c0 = now(1);
    w2l_rc rc = mt->open(mt, conf, uri, NULL, s, &err);
    while (rc == W2L_OK || rc == W2L_AGAIN) rc = mt->next(s, em, 1000, &err);
    if (rc == W2L_DONE) rc = w2l__emitter_flush(em, &err);
    double t1 = now(0), c1 = now(1);
    if (rc != W2L_OK) {
        fprintf(stderr, "binlog_bench: %s: %s\n", w2l_rc_name(rc), err.msg);
        return 1;
    }
    mt->close(s);
    free(s);
    w2l__emitter_free(em);
    w2l_conf_free(conf);
    printf("{\"rows\":%llu,\"seconds\":%.4f,\"cpu\":%.4f}\n", (unsigned long long)rows, t1 - t0, c1 - c0);
    w2l_global_cleanup();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "load"))
        return load(atoi(argv[2]), atol(argv[3]), strtoull(argv[4], NULL, 10), atol(argv[5]));
    if (argc == 5 && !strcmp(argv[1], "read")) return readall(atoi(argv[2]), argv[3], argv[4]);
    fprintf(stderr, "usage: binlog_bench load PORT N SEED TXROWS | read PORT SERVERID earliest|initial\n");
    return 2;
}
