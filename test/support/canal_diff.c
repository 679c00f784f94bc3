/*
 * canal-json's two paths compared (support.h: canal_diff). The messages go, in order, to
 * two decoders made alike, one of them with the fast path (lib/source/cdc_canal_fast.c)
 * switched off; after each message both must have returned the same code, error text and
 * step, and the same pending events, value by value (doubles by their bits, strings and
 * bytes by their content). Used by the cdc_json suite and by fuzz/fuzz_canal.c.
 */
#include <stdio.h>
#include <string.h>

#include "canal_diff.h"
#include "source/cdc_int.h"

/* Appends the text of everything the events say into buf (at o); returns the new o. */
static size_t events_text(const w2l__cdc *d, char *buf, size_t size, size_t o)
{
    size_t n;
    const w2l__cdc_event *ev = w2l__cdc_events(d, &n);
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (o < size) o += (size_t)snprintf(buf + o, size - o, __VA_ARGS__);                      \
    } while (0)
    PUT("%zu events\n", n);
    for (size_t i = 0; i < n; i++) {
        const w2l__cdc_event *e = &ev[i];
        if (e->is_ddl) {
            PUT("DDL %s.%s ts=%lld %.*s\n", e->ddl.db ? e->ddl.db : "-",
                e->ddl.table ? e->ddl.table : "-", (long long)e->ddl.ts_ms, (int)e->ddl.sql_len,
                e->ddl.sql);
            continue;
        }
        const w2l_change *c = &e->change;
        size_t nid;
        const int32_t *ids = w2l_schema_identifier(c->schema, &nid);
        PUT("%s.%s op=%d ts=%lld schema=%d [", c->db, c->table, (int)c->op, (long long)c->ts_ms,
            (int)w2l_schema_id(c->schema));
        for (size_t k = 0; k < w2l_schema_field_count(c->schema); k++) {
            const w2l_field *f = w2l_schema_field(c->schema, k);
            char t[64];
            PUT("%d:%s:%s%s ", (int)f->id, f->name, w2l_type_format(f->type, t, sizeof t),
                f->required ? "!" : "");
        }
        for (size_t k = 0; k < nid; k++) PUT("key %d ", (int)ids[k]);
        PUT("]");
        for (size_t k = 0; k < c->ncols; k++) {
            const w2l_field *f = w2l_schema_field(c->schema, k);
            const w2l_value *v = &c->row[k];
            if (c->present && !(c->present[k / 8] & (1u << (k % 8)))) {
                PUT(" -");
            } else if (v->is_null) {
                PUT(" null");
            } else if (f->type.id == W2L_TYPE_STRING || f->type.id == W2L_TYPE_BINARY) {
                PUT(" %zu:", v->v.bytes.len);
                for (size_t b = 0; b < v->v.bytes.len; b++)
                    PUT("%02x", (unsigned char)v->v.bytes.ptr[b]);
            } else if (f->type.id == W2L_TYPE_DOUBLE) {
                uint64_t bits;
                memcpy(&bits, &v->v.f64, 8);
                PUT(" d%016llx", (unsigned long long)bits);
            } else {
                char t[128];
                w2l_value_format(f->type, v, t, sizeof t);
                PUT(" %s", t);
            }
        }
        PUT("\n");
    }
#undef PUT
    return o;
}

static char diff_a[1 << 16], diff_b[1 << 16], diff_why[(1 << 17) + 128];

const char *canal_diff(const char *text, size_t len, const w2l__cdc_opts *opts, int replay,
                       size_t *taken)
{
    w2l__cdc *d[2] = {w2l__cdc_new(W2L__CDC_CANAL, opts), w2l__cdc_new(W2L__CDC_CANAL, opts)};
    const char *why = NULL;
    if (!d[0] || !d[1]) {
        why = "out of memory";
        goto out;
    }
    d[1]->fast.off = 1;
    size_t line = 0;
    for (size_t at = 0; at < len && !why; line++) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        char *out[2] = {diff_a, diff_b};
        for (int k = 0; k < 2; k++) {
            w2l_error err = {0};
            w2l__cdc_step step = W2L__CDC_MORE;
            w2l_rc rc = w2l__cdc_decode(d[k], text + at, n, replay, &step, &err);
            size_t o = (size_t)snprintf(out[k], sizeof diff_a, "rc=%d step=%d %s\n", (int)rc,
                                        (int)step, rc == W2L_OK ? "" : err.msg);
            events_text(d[k], out[k], sizeof diff_a, o);
            if (rc != W2L_OK || step != W2L__CDC_MORE) w2l__cdc_clear(d[k]);
        }
        if (strcmp(diff_a, diff_b)) {
            snprintf(diff_why, sizeof diff_why, "message %zu: fast path:\n%s\ntree path:\n%s",
                     line + 1, diff_a, diff_b);
            why = diff_why;
        }
        at += n + 1;
    }
out:
    if (taken) *taken = d[0] ? d[0]->fast.taken : 0;
    w2l__cdc_free(d[0]);
    w2l__cdc_free(d[1]);
    return why;
}
