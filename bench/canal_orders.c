/*
 * Writes the "orders" data set (bench/orders.h) as canal-json lines, one message per row:
 *   canal_orders N SEED inserts|mix OUT
 * "mix": after each insert, with 30% probability an UPDATE of an earlier row (status and
 * amount change) and with 10% a DELETE of an earlier live row — the shape of the
 * mixed pipeline benchmark (bench/pipeline.sh). Prints the number of messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orders.h"

static const char *const mysql_types =
    "{\"id\":\"bigint(20)\",\"customer_id\":\"int(11)\",\"status\":\"varchar(16)\","
    "\"amount\":\"decimal(12,2)\",\"qty\":\"smallint(6)\",\"created_at\":\"datetime(6)\","
    "\"updated_at\":\"timestamp\",\"note\":\"varchar(80)\",\"flag\":\"tinyint(1)\",\"score\":\"double\"}";

static void data(FILE *f, const order_row *r)
{
    char c[48], u[48];
    orders_civil(r->created_at / 1000000, c, sizeof c);
    orders_civil(r->updated_at / 1000000, u, sizeof u);
    fprintf(f, "{\"id\":\"%lld\",\"customer_id\":\"%d\",\"status\":\"%s\",\"amount\":\"%lld.%02lld\","
               "\"qty\":\"%d\",\"created_at\":\"%s.%06lld\",\"updated_at\":\"%s\",",
            (long long)r->id, r->customer_id, orders_status[r->status], (long long)(r->cents / 100),
            (long long)(r->cents % 100), r->qty, c, (long long)(r->created_at % 1000000), u);
    if (r->note_null) fputs("\"note\":null,", f);
    else fprintf(f, "\"note\":\"%s\",", r->note);
    fprintf(f, "\"flag\":\"%d\",\"score\":\"%.17g\"}", r->flag, r->score);
}

static long seq;
static void message(FILE *f, const char *type, const order_row *r, const char *old)
{
    fputs("{\"data\":[", f);
    data(f, r);
    fprintf(f, "],\"database\":\"bench\",\"es\":%ld,\"id\":%ld,\"isDdl\":false,\"mysqlType\":%s,"
               "\"old\":%s,\"pkNames\":[\"id\"],\"sql\":\"\",\"table\":\"orders\",\"ts\":%ld,\"type\":\"%s\"}\n",
            1700000000000L + seq, seq, mysql_types, old ? old : "null", 1700000000000L + seq, type);
    seq++;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: canal_orders N SEED inserts|mix OUT\n");
        return 2;
    }
    long n = atol(argv[1]);
    int mix = strcmp(argv[3], "mix") == 0;
    FILE *f = fopen(argv[4], "w");
    if (!f) {
        perror(argv[4]);
        return 1;
    }
    orders_gen g;
    orders_init(&g, strtoull(argv[2], NULL, 10));
    order_row *rows = malloc((size_t)n * sizeof *rows);
    char *live = calloc((size_t)n, 1);
    if (!rows || !live) return 1;
    long msgs = 0;
    for (long i = 0; i < n; i++) {
        orders_row(&g, &rows[i]);
        message(f, "INSERT", &rows[i], NULL);
        live[i] = 1;
        msgs++;
        if (!mix || i == 0) continue;
        uint64_t x = orders_next(&g) % 100;
        long j = (long)(orders_next(&g) % (uint64_t)i);
        if (!live[j]) continue;
        if (x < 30) {
            char old[96];
            snprintf(old, sizeof old, "[{\"status\":\"%s\",\"amount\":\"%lld.%02lld\"}]",
                     orders_status[rows[j].status], (long long)(rows[j].cents / 100), (long long)(rows[j].cents % 100));
            rows[j].status = (rows[j].status + 1) % 6;
            rows[j].cents += 100;
            message(f, "UPDATE", &rows[j], old);
            msgs++;
        } else if (x < 40) {
            message(f, "DELETE", &rows[j], NULL);
            live[j] = 0;
            msgs++;
        }
    }
    fclose(f);
    printf("%ld\n", msgs);
    free(rows);
    free(live);
    return 0;
}
