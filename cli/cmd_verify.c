/*
 * w2l verify [--table DB.TABLE]: compare the mysql source with the lake per primary-key
 * range (w2l_verify(3)), print one line per range that differs and a summary; exit 0
 * when none differs, 1 when some do or on an error, 2 on a usage error.
 *
 * --format json prints one object instead, for scripts. On a terminal, stderr shows a
 * progress line (tables and ranges done, rows/s), cleared at the end.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

/* In the order of verify_extra in w2l.c. */
enum { V_TABLE, V_FORMAT, V_TIMEOUT, V_SETTLE, V_KEYS };

typedef struct vctx {
    int json;
    int tty;
    size_t n;            /* ranges printed */
    int64_t last_ms;     /* last progress line */
} vctx;

static void clear_progress(vctx *c)
{
    if (c->tty && c->last_ms) {
        fputs("\r\033[K", stderr);
        c->last_ms = 0;
    }
}

static void on_progress(void *ctx, const w2l_verify_progress *p)
{
    vctx *c = ctx;
    if (!c->tty) return;
    int64_t now = cli_now_ms();
    if (c->last_ms && now - c->last_ms < 200) return;
    c->last_ms = now;
    double rate = p->elapsed_ms > 0 ? (double)p->rows * 1000.0 / (double)p->elapsed_ms : 0;
    fprintf(stderr, "\r\033[Kverify: %stables %" PRIu64 "/%" PRIu64 ", ranges %" PRIu64
                    ", %.0f rows/s",
            p->recheck ? "re-check, " : "", p->tables_done, p->tables, p->ranges_done, rate);
    fflush(stderr);
}

static void json_str(const char *key, const char *s)
{
    printf("\"%s\":", key);
    if (s) cli_json_string(stdout, s, strlen(s));
    else fputs("null", stdout);
}

static int on_range(void *ctx, const w2l_verify_range *r)
{
    vctx *c = ctx;
    clear_progress(c);
    if (c->json) {
        fputs(c->n ? "," : "", stdout);
        putchar('{');
        json_str("db", r->db);
        putchar(',');
        json_str("table", r->table);
        putchar(',');
        char lt[600];
        snprintf(lt, sizeof lt, "%s.%s", r->ns, r->lake_table);
        json_str("lake_table", lt);
        putchar(',');
        json_str("lo", r->lo);
        putchar(',');
        json_str("hi", r->hi);
        printf(",\"source_rows\":%" PRIu64 ",\"lake_rows\":%" PRIu64
               ",\"source_checksum\":\"%016" PRIx64 "\",\"lake_checksum\":\"%016" PRIx64 "\",",
               r->source_rows, r->lake_rows, r->source_checksum, r->lake_checksum);
        json_str("what", r->what);
        fputs(",\"keys\":[", stdout);
        for (size_t i = 0; i < r->nkeys; i++) {
            printf("%s{", i ? "," : "");
            json_str("key", r->keys[i]);
            putchar(',');
            json_str("what", r->key_what[i]);
            putchar('}');
        }
        printf("],\"more_keys\":%s}", r->more_keys ? "true" : "false");
    } else {
        printf("%s.%s: range %s%s, %s%s: %s differ: source %" PRIu64 " rows, lake %" PRIu64
               " rows",
               r->db, r->table, r->lo ? "(" : "[", r->lo ? r->lo : "first key",
               r->hi ? r->hi : "last key", r->hi ? "]" : "]", r->what, r->source_rows,
               r->lake_rows);
        for (size_t i = 0; i < r->nkeys; i++)
            printf("%s%s %s", i ? ", " : "; ", r->key_what[i], r->keys[i]);
        if (r->more_keys) fputs(", ...", stdout);
        putchar('\n');
    }
    c->n++;
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    int rc = cli_open_lake("verify", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    w2l_lake_close(lake); /* w2l_verify opens its own */
    lake = NULL;
    vctx c;
    memset(&c, 0, sizeof c);
    w2l_verify_opts o;
    memset(&o, 0, sizeof o);
    o.version = W2L_VERIFY_OPTS_V1;
    o.table = args.extra[V_TABLE];
    o.on_range = on_range;
    o.on_progress = on_progress;
    o.ctx = &c;
    const char *format = args.extra[V_FORMAT];
    const char *bad = NULL, *what = NULL;
    if (format && strcmp(format, "json") && strcmp(format, "text"))
        what = "--format: expected text or json, got", bad = format;
    else if (o.table && (!strchr(o.table, '.') || o.table[0] == '.'))
        what = "--table needs DB.TABLE, not", bad = o.table;
    else if (args.extra[V_TIMEOUT] && (o.timeout_ms = cli_duration_ms(args.extra[V_TIMEOUT])) <= 0)
        what = "--timeout: not a positive duration:", bad = args.extra[V_TIMEOUT];
    else if (args.extra[V_SETTLE] && (o.settle_ms = cli_duration_ms(args.extra[V_SETTLE])) < 0)
        what = "--settle: not a duration:", bad = args.extra[V_SETTLE];
    if (!bad && args.extra[V_KEYS]) {
        char *end;
        long long k = strtoll(args.extra[V_KEYS], &end, 10);
        if (*end || k < 1) what = "--keys: not a positive number:", bad = args.extra[V_KEYS];
        else o.key_limit = (size_t)k;
    }
    if (bad) {
        fprintf(stderr, "w2l verify: %s '%s' (see w2l help verify)\n", what, bad);
        cli_finish(conf, NULL);
        return EXIT_USAGE;
    }
    if (o.settle_ms == 0 && args.extra[V_SETTLE]) o.settle_ms = -1; /* --settle 0: at once */
    c.json = format && !strcmp(format, "json");
    c.tty = isatty(2);
    if (c.json) fputs("{\"differing\":[", stdout);
    w2l_verify_summary s;
    w2l_error err;
    w2l_rc r = w2l_verify(conf, &o, &s, &err);
    clear_progress(&c);
    if (c.json) {
        printf("],\"ok\":%s,\"tables\":%" PRIu64 ",\"tables_skipped\":%" PRIu64
               ",\"ranges\":%" PRIu64 ",\"ranges_rechecked\":%" PRIu64
               ",\"ranges_differing\":%" PRIu64 ",\"source_rows\":%" PRIu64
               ",\"lake_rows\":%" PRIu64 ",\"columns_excluded\":%" PRIu64
               ",\"elapsed_ms\":%" PRId64 ",\"error\":",
               r == W2L_OK && !s.ranges_differing ? "true" : "false", s.tables, s.tables_skipped,
               s.ranges, s.ranges_rechecked, s.ranges_differing, s.source_rows, s.lake_rows,
               s.columns_excluded, s.elapsed_ms);
        if (r != W2L_OK) cli_json_string(stdout, err.msg, strlen(err.msg));
        else fputs("null", stdout);
        fputs("}\n", stdout);
    } else if (r == W2L_OK) {
        printf("verify: %" PRIu64 " table%s, %" PRIu64 " range%s, %" PRIu64
               " source rows, %" PRIu64 " lake rows: %s",
               s.tables, s.tables == 1 ? "" : "s", s.ranges, s.ranges == 1 ? "" : "s",
               s.source_rows, s.lake_rows, s.ranges_differing ? "" : "no difference");
        if (s.ranges_differing)
            printf("%" PRIu64 " range%s differ%s (%" PRIu64 " re-checked)", s.ranges_differing,
                   s.ranges_differing == 1 ? "" : "s", s.ranges_differing == 1 ? "s" : "",
                   s.ranges_rechecked);
        if (s.tables_skipped) printf("; %" PRIu64 " routed tables not compared", s.tables_skipped);
        if (s.columns_excluded)
            printf("; %" PRIu64 " column%s left out", s.columns_excluded,
                   s.columns_excluded == 1 ? "" : "s");
        putchar('\n');
    }
    fflush(stdout);
    if (r != W2L_OK) rc = cli_fail("verify", &err, r);
    else rc = s.ranges_differing ? EXIT_RUNTIME : EXIT_DONE;
    if (rc == EXIT_USAGE && r != W2L_CONFIG && r != W2L_MISUSE) rc = EXIT_RUNTIME;
    cli_finish(conf, NULL);
    return rc;
}
