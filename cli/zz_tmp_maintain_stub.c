/* TEMPORARY stub of w2l_maintain for testing the CLI before the library's lands. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <w2l.h>
typedef struct { const w2l_maintain_options *o; int (*fn)(void *, const w2l_maintain_report *); void *ctx; size_t i, n; int stop; char ns[64][64], t[64][64]; } st;
static int collect(void *c, const w2l_table_info *t) { st *s = c; if (s->n < 64) { strcpy(s->ns[s->n], t->ns); strcpy(s->t[s->n], t->table); s->n++; } return 0; }
w2l_rc w2l_maintain(const w2l_conf *conf, const w2l_maintain_options *opt,
                    int (*fn)(void *ctx, const w2l_maintain_report *r), void *ctx, w2l_error *err)
{
    w2l_lake *l; w2l_rc rc = w2l_lake_open(conf, &l, err); if (rc) return rc;
    static st s; memset(&s, 0, sizeof s);
    rc = w2l_lake_tables(l, collect, &s, err); w2l_lake_close(l); if (rc) return rc;
    unsigned a = opt->actions ? opt->actions : W2L_MAINTAIN_ALL;
    size_t matched = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (opt->ns && (strcmp(opt->ns, s.ns[i]) || strcmp(opt->table, s.t[i]))) continue;
        matched++;
        static const char *names[] = {"expire", "compact", "orphans"};
        for (int k = 0; k < 3; k++) {
            if (!(a & (1u << k))) continue;
            if (getenv("STUB_SLOW")) sleep(1);
            w2l_maintain_report r; memset(&r, 0, sizeof r);
            r.ns = s.ns[i]; r.table = s.t[i]; r.action = names[k]; r.dry_run = opt->dry_run;
            r.skipped = k == 2; r.files_in = 12; r.files_out = 1; r.bytes_in = 3100000; r.bytes_out = 2900000;
            r.rows_out = 1000; r.snapshots_expired = 40; r.files_removed = 83; r.bytes_removed = 5200000; r.ms = 41;
            r.table_index = matched; r.ntables = opt->ns ? 1 : s.n;
            if (fn && fn(ctx, &r)) return w2l_error_set(err, W2L_CANCELLED, "cancelled");
        }
    }
    if (opt->ns && !matched) return w2l_error_set(err, W2L_NOTFOUND, "table %s.%s not found", opt->ns, opt->table);
    return W2L_OK;
}
