/*
 * CDC JSON decoders (cdc_json.h; DESIGN.md sections 4 and 9): canal-json flat messages,
 * debezium-json envelopes (with or without the "schema" part) and maxwell-json rows, one
 * message at a time, into row changes and DDL of the open transaction.
 *
 * Schemas. Each table has a current "shape": a source schema (field ids 1..n in column
 * order, identifier = the primary key), how each column's JSON value is encoded, and a
 * signature (column names, types, key) so that a message describing the same columns
 * reuses the schema object. Where the shape comes from:
 *   canal     every data message: `mysqlType` (via the DDL module's MySQL type map) and
 *             `pkNames`; the message is authoritative for itself.
 *   debezium  with the "schema" part: the struct of `after` (or `before`), from Kafka
 *             Connect types and Debezium semantic names; key from the table's last
 *             `tableChanges` (schema-change events) when the stream had one.
 *             without it: the table's last `tableChanges` (authoritative), else inferred.
 *   maxwell   the `def` of the last table-create / table-alter (authoritative), else
 *             inferred; key from `primary_key_columns` or the def's `primarykey`.
 * Authoritative shapes apply from their DDL on (section 9): a later row that omits a
 * column has it marked absent (w2l_change.present); a column the shape lacks is dropped
 * with one warning per table and shape. Inferred shapes follow each row: JSON integers are
 * long, other numbers double, strings string, booleans boolean, objects/arrays string
 * (their JSON text); a null takes the column's type from the current shape, else string.
 * A row whose columns or inferred types differ from the current shape gets a new shape.
 *
 * Values (section 4): canal strings are parsed per column type (tinyint(1) "0"/"1" as
 * boolean, exact decimals, DATETIME as timestamp, TIMESTAMP in source.timezone as UTC
 * timestamptz, TIME within 00:00..24:00 unless source.time-as-string, binary columns as
 * ISO-8859-1 text turned back into bytes); maxwell values are JSON natives (dates and
 * times as text, binary base64, SET as an array or text, JSON columns as JSON); debezium
 * values follow its encodings (epoch days, Timestamp/MicroTimestamp/NanoTimestamp,
 * MicroTime, ZonedTimestamp text, Decimal as base64 big-endian unscaled, Bits as base64
 * little-endian). All-zero MySQL dates ("0000-00-00") become NULL in nullable columns.
 *
 * Memory: the JSON trees of the open transaction stay alive until w2l__cdc_clear(), so
 * string values point into them; decoded bytes (binary, base64, JSON text) and rows go to
 * chunks that are reused by the next transaction.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_json.h"
#include "../json/json.h"
#include "../model/model.h"
#include "../ddl/ddl.h"

/* ---- chunks: bump memory reused across transactions ---- */

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct chunks {
    chunk *head, *cur;
} chunks;

static void *chunk_alloc(chunks *cs, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    for (;;) {
        chunk *c = cs->cur;
        if (c && c->cap - c->used >= n) {
            void *p = c->data + c->used;
            c->used += n;
            return p;
        }
        if (c && c->next) { /* a reused chunk, emptied by chunks_reset() */
            cs->cur = c->next;
            continue;
        }
        size_t cap = n > 60000 ? n : 64 * 1024 - sizeof(chunk);
        chunk *nc = w2l__malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->next = NULL;
        nc->cap = cap;
        nc->used = 0;
        if (c) c->next = nc;
        else cs->head = nc;
        cs->cur = nc;
    }
}

static void chunks_reset(chunks *cs)
{
    for (chunk *c = cs->head; c; c = c->next) c->used = 0;
    cs->cur = cs->head;
}

static void chunks_free(chunks *cs)
{
    for (chunk *c = cs->head, *n; c; c = n) {
        n = c->next;
        w2l__free(c);
    }
    cs->head = cs->cur = NULL;
}

/* ---- column encodings ---- */

/* How a column's JSON value is encoded, beyond its Iceberg type. */
enum cv {
    CV_PLAIN = 0,   /* canal text / maxwell native / debezium native by Iceberg type */
    CV_SET,         /* maxwell: SET as an array of strings (or text) */
    CV_JSON,        /* any JSON value, kept as its text */
    CV_DAYS,        /* debezium: int epoch days */
    CV_TIME_MS, CV_TIME_US, CV_TIME_NS,   /* debezium: time of day (or duration) */
    CV_TS_MS, CV_TS_US, CV_TS_NS,         /* debezium: timestamp without zone */
    CV_ZONED,       /* debezium ZonedTimestamp text */
    CV_DECIMAL_B64, /* debezium Decimal: base64 big-endian unscaled */
    CV_BITS_B64     /* debezium Bits: base64 little-endian -> long / boolean */
};

typedef struct shape {
    w2l_schema *schema; /* NULL until the table is described */
    uint8_t *cv;        /* per column */
    char *sig;
    size_t siglen;
    int authoritative;  /* from DDL: rows are mapped onto it by name */
    int warned;         /* a dropped extra column was logged */
} shape;

typedef struct table {
    char *key;          /* "db\0table\0" */
    size_t klen;
    uint64_t hash;
    const char *db, *name; /* into key */
    shape cur;
    char **pk;          /* primary key names from DDL (debezium tableChanges), or NULL */
    size_t npk;
    int32_t next_schema_id;
} table;

/* One column being described, before it becomes a shape. */
typedef struct colspec {
    const char *name;
    w2l_type type;
    uint8_t cv;
    uint8_t required;
} colspec;

typedef struct json_list {
    w2l__json **v;
    size_t n, cap;
} json_list;

struct w2l__cdc {
    w2l__cdc_format fmt;
    w2l__cdc_opts opts;
    table **tabs;             /* open addressing */
    size_t ntabs, used;
    w2l__cdc_event *ev;
    size_t nev, evcap;
    chunks mem;
    json_list trees;          /* JSON of the open transaction */
    w2l__json *held;          /* a parsed message returned with W2L__CDC_BEFORE */
    /* transaction of the pending events */
    int txn_open;
    char txn_key[128];
    /* scratch for describing shapes */
    colspec *cols;
    size_t ncols, colcap;
    const char **pks;
    size_t npks, pkcap;
    w2l_buf sig;
    int replay;
    const char *what;         /* message context for errors: "canal-json" */
};

/* ---- small helpers ---- */

static const char *fmt_name(w2l__cdc_format f)
{
    switch (f) {
    case W2L__CDC_CANAL: return "canal-json";
    case W2L__CDC_DEBEZIUM: return "debezium-json";
    case W2L__CDC_MAXWELL: return "maxwell-json";
    }
    return "?";
}

const char *w2l__cdc_format_name(w2l__cdc_format f) { return fmt_name(f); }

int w2l__cdc_format_parse(const char *name, size_t len, w2l__cdc_format *out)
{
    static const w2l__cdc_format all[] = {W2L__CDC_CANAL, W2L__CDC_DEBEZIUM, W2L__CDC_MAXWELL};
    for (size_t i = 0; i < W2L_ARRAY_LEN(all); i++) {
        const char *n = fmt_name(all[i]);
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

w2l_rc w2l__cdc_tz_parse(const char *text, int32_t *offset_s, w2l_error *err)
{
    if (!text || !*text || strcmp(text, "UTC") == 0 || strcmp(text, "GMT") == 0 ||
        strcmp(text, "Z") == 0 || strcmp(text, "Etc/UTC") == 0) {
        *offset_s = 0;
        return W2L_OK;
    }
    const char *p = text;
    if (strncmp(p, "UTC", 3) == 0 || strncmp(p, "GMT", 3) == 0) p += 3;
    int sign = *p == '+' ? 1 : *p == '-' ? -1 : 0;
    if (!sign) goto bad;
    p++;
    int h = 0, m = 0, nd = 0;
    while (isdigit((unsigned char)*p) && nd < 2) h = h * 10 + (*p++ - '0'), nd++;
    if (!nd) goto bad;
    if (*p == ':') p++;
    if (*p) {
        if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]) || p[2]) goto bad;
        m = (p[0] - '0') * 10 + (p[1] - '0');
    }
    if (h > 14 || m > 59) goto bad;
    *offset_s = sign * (h * 3600 + m * 60);
    return W2L_OK;
bad:
    return w2l__fail(err, W2L_CONFIG,
                     "source.timezone '%s': expected UTC or a fixed offset such as +08:00", text);
}

/* Parses [+-]digits into an int64; -1 when malformed or out of range. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9) return -1;
        if (v > (UINT64_MAX - dg) / 10) return -1;
        v = v * 10 + dg;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Decodes base64 (standard or URL alphabet, padding optional) into out (at least
 * n * 3 / 4 + 3 bytes); -1 when malformed. */
static int b64_decode(const char *s, size_t n, unsigned char *out, size_t *outlen)
{
    while (n && s[n - 1] == '=') n--;
    if (n % 4 == 1) return -1;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    *outlen = o;
    return 0;
}

/* ---- tables ---- */

static void shape_release(shape *s)
{
    w2l_schema_unref(s->schema);
    w2l__free(s->cv);
    w2l__free(s->sig);
    memset(s, 0, sizeof *s);
}

static void table_free(table *t)
{
    if (!t) return;
    shape_release(&t->cur);
    for (size_t i = 0; i < t->npk; i++) w2l__free(t->pk[i]);
    w2l__free(t->pk);
    w2l__free(t->key);
    w2l__free(t);
}

static w2l_rc tabs_grow(w2l__cdc *d, w2l_error *err)
{
    size_t n = d->ntabs ? d->ntabs * 2 : 64;
    table **nt = w2l__calloc(n, sizeof *nt);
    W2L_NOMEM_IF(!nt, err);
    for (size_t i = 0; i < d->ntabs; i++) {
        table *t = d->tabs[i];
        if (!t) continue;
        size_t j = t->hash & (n - 1);
        while (nt[j]) j = (j + 1) & (n - 1);
        nt[j] = t;
    }
    w2l__free(d->tabs);
    d->tabs = nt;
    d->ntabs = n;
    return W2L_OK;
}

/* The table db.name, created when absent (create = 1) or NULL when unknown. */
static w2l_rc table_get(w2l__cdc *d, const char *db, const char *name, int create, table **out,
                        w2l_error *err)
{
    size_t dl = strlen(db), nl = strlen(name), kl = dl + nl + 2;
    uint64_t h = w2l__hash64(db, dl, 0x7ab1e);
    h = w2l__hash64(name, nl, h);
    *out = NULL;
    if (d->ntabs) {
        for (size_t i = h & (d->ntabs - 1); d->tabs[i]; i = (i + 1) & (d->ntabs - 1)) {
            table *t = d->tabs[i];
            if (t->hash == h && t->klen == kl && memcmp(t->key, db, dl) == 0 &&
                memcmp(t->key + dl + 1, name, nl) == 0) {
                *out = t;
                return W2L_OK;
            }
        }
    }
    if (!create) return W2L_OK;
    if ((d->used + 1) * 4 > d->ntabs * 3) W2L_TRY(tabs_grow(d, err));
    table *t = w2l__calloc(1, sizeof *t);
    W2L_NOMEM_IF(!t, err);
    t->key = w2l__malloc(kl);
    if (!t->key) {
        w2l__free(t);
        return w2l__fail(err, W2L_NOMEM, "out of memory adding table %s.%s", db, name);
    }
    memcpy(t->key, db, dl + 1);
    memcpy(t->key + dl + 1, name, nl + 1);
    t->klen = kl;
    t->hash = h;
    t->db = t->key;
    t->name = t->key + dl + 1;
    size_t i = h & (d->ntabs - 1);
    while (d->tabs[i]) i = (i + 1) & (d->ntabs - 1);
    d->tabs[i] = t;
    d->used++;
    *out = t;
    return W2L_OK;
}

/* ---- decoder lifetime ---- */

w2l__cdc *w2l__cdc_new(w2l__cdc_format f, const w2l__cdc_opts *opts)
{
    w2l__cdc *d = w2l__calloc(1, sizeof *d);
    if (!d) return NULL;
    d->fmt = f;
    if (opts) d->opts = *opts;
    d->what = fmt_name(f);
    return d;
}

void w2l__cdc_clear(w2l__cdc *d)
{
    for (size_t i = 0; i < d->nev; i++) {
        w2l__cdc_event *e = &d->ev[i];
        w2l_schema_unref((w2l_schema *)(e->is_ddl ? e->ddl.schema_after : e->change.schema));
    }
    d->nev = 0;
    for (size_t i = 0; i < d->trees.n; i++) w2l__json_free(d->trees.v[i]);
    d->trees.n = 0;
    chunks_reset(&d->mem);
    d->txn_open = 0;
    d->txn_key[0] = '\0';
}

void w2l__cdc_free(w2l__cdc *d)
{
    if (!d) return;
    w2l__cdc_clear(d);
    w2l__json_free(d->held);
    for (size_t i = 0; i < d->ntabs; i++) table_free(d->tabs[i]);
    w2l__free(d->tabs);
    w2l__free(d->ev);
    w2l__free(d->trees.v);
    chunks_free(&d->mem);
    w2l__free(d->cols);
    w2l__free(d->pks);
    w2l_buf_release(&d->sig);
    w2l__free(d);
}

const w2l__cdc_event *w2l__cdc_events(const w2l__cdc *d, size_t *n)
{
    *n = d->nev;
    return d->ev;
}

int w2l__cdc_pending_complete(const w2l__cdc *d)
{
    /* maxwell ends its transactions with commit:true; the others end one when the next
     * begins (or each message is one), so what is pending at the end of the stream is whole */
    return d->fmt != W2L__CDC_MAXWELL;
}

static w2l_rc keep_tree(w2l__cdc *d, w2l__json *j, w2l_error *err)
{
    if (d->trees.n == d->trees.cap) {
        size_t cap = d->trees.cap ? d->trees.cap * 2 : 16;
        w2l__json **v = w2l__realloc(d->trees.v, cap * sizeof *v);
        if (!v) {
            w2l__json_free(j);
            return w2l__fail(err, W2L_NOMEM, "out of memory keeping a message");
        }
        d->trees.v = v;
        d->trees.cap = cap;
    }
    d->trees.v[d->trees.n++] = j;
    return W2L_OK;
}

static w2l_rc new_event(w2l__cdc *d, w2l__cdc_event **out, w2l_error *err)
{
    if (d->nev == d->evcap) {
        size_t cap = d->evcap ? d->evcap * 2 : 64;
        w2l__cdc_event *v = w2l__realloc(d->ev, cap * sizeof *v);
        W2L_NOMEM_IF(!v, err);
        d->ev = v;
        d->evcap = cap;
    }
    *out = &d->ev[d->nev];
    memset(*out, 0, sizeof **out);
    return W2L_OK;
}

/* ---- describing shapes ---- */

static w2l_rc col_add(w2l__cdc *d, const char *name, w2l_type type, unsigned cv, int required,
                      w2l_error *err)
{
    if (d->ncols == d->colcap) {
        size_t cap = d->colcap ? d->colcap * 2 : 32;
        colspec *v = w2l__realloc(d->cols, cap * sizeof *v);
        W2L_NOMEM_IF(!v, err);
        d->cols = v;
        d->colcap = cap;
    }
    colspec *c = &d->cols[d->ncols++];
    c->name = name;
    c->type = type;
    c->cv = (uint8_t)cv;
    c->required = (uint8_t)(required != 0);
    return W2L_OK;
}

static w2l_rc pk_add(w2l__cdc *d, const char *name, w2l_error *err)
{
    if (d->npks == d->pkcap) {
        size_t cap = d->pkcap ? d->pkcap * 2 : 8;
        const char **v = w2l__realloc(d->pks, cap * sizeof *v);
        W2L_NOMEM_IF(!v, err);
        d->pks = v;
        d->pkcap = cap;
    }
    d->pks[d->npks++] = name;
    return W2L_OK;
}

static void describe_reset(w2l__cdc *d)
{
    d->ncols = 0;
    d->npks = 0;
}

static long col_find(const w2l__cdc *d, const char *name)
{
    for (size_t i = 0; i < d->ncols; i++)
        if (strcmp(d->cols[i].name, name) == 0) return (long)i;
    return -1;
}

/* The signature of the described columns and key, into d->sig. */
static w2l_rc describe_sig(w2l__cdc *d, int authoritative, w2l_error *err)
{
    d->sig.len = 0;
    for (size_t i = 0; i < d->ncols; i++) {
        const colspec *c = &d->cols[i];
        unsigned char meta[6] = {(unsigned char)c->type.id, c->type.precision, c->type.scale,
                                 c->cv, c->required, 0x1e};
        W2L_TRY(w2l_buf_append(&d->sig, c->name, strlen(c->name) + 1, err));
        W2L_TRY(w2l_buf_append(&d->sig, meta, sizeof meta, err));
    }
    W2L_TRY(w2l_buf_append(&d->sig, authoritative ? "A" : "I", 1, err));
    for (size_t i = 0; i < d->npks; i++)
        W2L_TRY(w2l_buf_append(&d->sig, d->pks[i], strlen(d->pks[i]) + 1, err));
    return W2L_OK;
}

/* Makes the described columns the table's current shape, reusing it when it describes
 * the same (the common case: one comparison per message). */
static w2l_rc describe_commit(w2l__cdc *d, table *t, int authoritative, int presig, w2l_error *err)
{
    /* key columns are required, whatever the format said */
    for (size_t i = 0; i < d->npks; i++) {
        long k = col_find(d, d->pks[i]);
        if (k < 0)
            return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: primary key column %s is not a column",
                             d->what, t->db, t->name, d->pks[i]);
        d->cols[k].required = 1;
    }
    if (!presig) W2L_TRY(describe_sig(d, authoritative, err));
    if (t->cur.schema && t->cur.siglen == d->sig.len && memcmp(t->cur.sig, d->sig.data, d->sig.len) == 0)
        return W2L_OK;
    shape s = {0};
    s.authoritative = authoritative;
    s.schema = w2l_schema_new(t->next_schema_id);
    s.cv = w2l__malloc(d->ncols ? d->ncols : 1);
    s.sig = w2l__malloc(d->sig.len ? d->sig.len : 1);
    int32_t *ids = d->npks ? w2l__malloc(d->npks * sizeof *ids) : NULL;
    if (!s.schema || !s.cv || !s.sig || (d->npks && !ids)) {
        w2l__free(ids);
        shape_release(&s);
        return w2l__fail(err, W2L_NOMEM, "out of memory describing table %s.%s", t->db, t->name);
    }
    memcpy(s.sig, d->sig.data, d->sig.len);
    s.siglen = d->sig.len;
    w2l_rc rc = W2L_OK;
    for (size_t i = 0; i < d->ncols && rc == W2L_OK; i++) {
        s.cv[i] = d->cols[i].cv;
        rc = w2l_schema_add_field(s.schema, (int32_t)i + 1, d->cols[i].name, d->cols[i].type,
                                  d->cols[i].required, err);
    }
    for (size_t i = 0; i < d->npks && rc == W2L_OK; i++) ids[i] = (int32_t)col_find(d, d->pks[i]) + 1;
    if (rc == W2L_OK && d->npks) rc = w2l_schema_set_identifier(s.schema, ids, d->npks, err);
    w2l__free(ids);
    if (rc != W2L_OK) {
        shape_release(&s);
        if (rc == W2L_NOMEM) return rc;
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: %s", d->what, t->db, t->name, err->msg);
    }
    shape_release(&t->cur);
    t->cur = s;
    t->next_schema_id++;
    return W2L_OK;
}

static void table_forget(table *t)
{
    shape_release(&t->cur);
    for (size_t i = 0; i < t->npk; i++) w2l__free(t->pk[i]);
    w2l__free(t->pk);
    t->pk = NULL;
    t->npk = 0;
}

/* Remembers the described key as the table's DDL key (debezium tableChanges). */
static w2l_rc table_set_pk(table *t, const char *const *pks, size_t n, w2l_error *err)
{
    char **v = n ? w2l__calloc(n, sizeof *v) : NULL;
    W2L_NOMEM_IF(n && !v, err);
    for (size_t i = 0; i < n; i++) {
        v[i] = w2l__strdup(pks[i]);
        if (!v[i]) {
            for (size_t k = 0; k < i; k++) w2l__free(v[k]);
            w2l__free(v);
            return w2l__fail(err, W2L_NOMEM, "out of memory");
        }
    }
    for (size_t i = 0; i < t->npk; i++) w2l__free(t->pk[i]);
    w2l__free(t->pk);
    t->pk = v;
    t->npk = n;
    return W2L_OK;
}

/* ---- MySQL type text ---- */

/* The Iceberg type of a MySQL column type, from the DDL module's type map; info gets
 * the parsed type (class, fsp, bits) for the value encodings. */
static w2l_rc mysql_type(w2l__cdc *d, const char *db, const char *tn, const char *col, const char *text,
                         w2l_type *out, w2l__mysql_type *info, w2l_error *err)
{
    w2l__type_opts o = {0};
    o.tinyint1_as_boolean = d->opts.tinyint1_as_boolean;
    o.time_as_string = d->opts.time_as_string;
    w2l_rc rc = w2l__mysql_type_map_text(text, strlen(text), &o, col, NULL, out, info, err);
    if (rc == W2L_OK || rc == W2L_NOMEM) return rc;
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why);
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: unknown type \"%s\" (%s)", d->what,
                     db, tn, col, text, why);
}

/* cv of a MySQL column in canal or maxwell (JSON native) messages. */
static unsigned mysql_cv(const w2l__mysql_type *info, w2l_type t)
{
    if (t.id == W2L_TYPE_STRING && info->cls == W2L_MYSQL_SET) return CV_SET;
    if (t.id == W2L_TYPE_STRING && info->cls == W2L_MYSQL_JSON) return CV_JSON;
    return CV_PLAIN;
}

/* cv of a MySQL column in debezium messages without the schema part (its default
 * converters: time.precision.mode=adaptive_time_microseconds, decimal.handling.mode=
 * precise, bigint.unsigned.handling.mode=precise when mapped to decimal). */
static unsigned mysql_dbz_cv(const w2l__mysql_type *info, w2l_type t)
{
    switch (info->cls) {
    case W2L_MYSQL_DATE: return CV_DAYS;
    case W2L_MYSQL_TIME: return CV_TIME_US;
    case W2L_MYSQL_DATETIME: return info->fsp > 3 ? CV_TS_US : CV_TS_MS;
    case W2L_MYSQL_TIMESTAMP: return CV_ZONED;
    case W2L_MYSQL_BIT: return CV_BITS_B64;
    case W2L_MYSQL_JSON: return CV_JSON;
    default: break;
    }
    if (t.id == W2L_TYPE_DECIMAL) return CV_DECIMAL_B64;
    return CV_PLAIN;
}

/* ---- values ---- */

/* Error context for one value. */
typedef struct vctx {
    w2l__cdc *d;
    const table *t;
    const char *col;
} vctx;

static w2l_rc bad_value(const vctx *x, const char *text, size_t len, const char *why, w2l_error *err)
{
    char shown[80];
    size_t n = len < 64 ? len : 64;
    memcpy(shown, text, n);
    strcpy(shown + n, len > 64 ? "..." : "");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)shown[i] < 0x20) shown[i] = '?';
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: value \"%s\": %s", x->d->what,
                     x->t->db, x->t->name, x->col, shown, why);
}

/* The model's own message (why the text does not fit) goes after the value. */
static w2l_rc bad_value_err(const vctx *x, const char *text, size_t len, w2l_error *err)
{
    char why[sizeof err->msg];
    memcpy(why, err->msg, sizeof why);
    return bad_value(x, text, len, why, err);
}

static int is_zero_date(const char *s, size_t n)
{
    if (n < 10 || memcmp(s, "0000-00-00", 10) != 0) return 0;
    for (size_t i = 10; i < n; i++)
        if (s[i] != '0' && s[i] != ' ' && s[i] != ':' && s[i] != '.' && s[i] != 'T') return 0;
    return 1;
}

/* TIME text outside 00:00..24:00 gets its own message. */
static w2l_rc time_text(const vctx *x, const char *s, size_t n, int64_t *us, w2l_error *err)
{
    size_t h = 0;
    while (h < n && s[h] >= '0' && s[h] <= '9') h++;
    if ((n && s[0] == '-') || h > 2 || (h == 2 && (s[0] - '0') * 10 + (s[1] - '0') >= 24))
        return bad_value(x, s, n, "TIME outside 00:00:00..23:59:59.999999 (set source.time-as-string)", err);
    if (w2l__time_parse(s, n, us, err) != W2L_OK) return bad_value_err(x, s, n, err);
    return W2L_OK;
}

/* Text of a scalar of type t: canal values, maxwell dates/times and strings. */
static w2l_rc value_from_text(const vctx *x, w2l_type t, const char *s, size_t n, int latin1,
                              int required, w2l_value *out, w2l_error *err)
{
    int64_t v;
    char buf[64];
    out->is_null = 0;
    switch (t.id) {
    case W2L_TYPE_BOOLEAN:
        if ((n == 1 && s[0] == '1') || (n == 4 && !memcmp(s, "true", 4))) out->v.i32 = 1;
        else if ((n == 1 && s[0] == '0') || (n == 5 && !memcmp(s, "false", 5))) out->v.i32 = 0;
        else return bad_value(x, s, n, "not a boolean (0 or 1)", err);
        return W2L_OK;
    case W2L_TYPE_INT:
        if (parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
            return bad_value(x, s, n, "not an int (32-bit)", err);
        out->v.i32 = (int32_t)v;
        return W2L_OK;
    case W2L_TYPE_LONG:
        if (parse_i64(s, n, &v)) return bad_value(x, s, n, "not a long (64-bit)", err);
        out->v.i64 = v;
        return W2L_OK;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE: {
        if (n == 0 || n >= sizeof buf) return bad_value(x, s, n, "not a number", err);
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end;
        double dv = strtod(buf, &end);
        if (*end || isspace((unsigned char)buf[0])) return bad_value(x, s, n, "not a number", err);
        if (t.id == W2L_TYPE_FLOAT) {
            float f = strtof(buf, NULL);
            if (isinf(f) && !isinf(dv)) return bad_value(x, s, n, "out of range for float", err);
            out->v.f32 = f;
        } else {
            out->v.f64 = dv;
        }
        return W2L_OK;
    }
    case W2L_TYPE_DECIMAL:
        if (w2l__decimal_parse(s, n, t.precision, t.scale, &out->v.dec, err) != W2L_OK)
            return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_DATE:
        if (is_zero_date(s, n) && !required) break;
        if (w2l__date_parse(s, n, &out->v.i32, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_TIME:
        return time_text(x, s, n, &out->v.i64, err);
    case W2L_TYPE_TIMESTAMP:
        if (is_zero_date(s, n) && !required) break;
        if (w2l__timestamp_parse(s, n, 0, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case W2L_TYPE_TIMESTAMPTZ: {
        if (is_zero_date(s, n) && !required) break;
        /* a zone in the text wins; else the text is in source.timezone */
        int zoned = n > 10 && (s[n - 1] == 'Z' || s[n - 1] == 'z' || memchr(s + 10, '+', n - 10) ||
                               memchr(s + 10, '-', n - 10));
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        if (!zoned) out->v.i64 -= (int64_t)x->d->opts.tz_offset_s * 1000000;
        return W2L_OK;
    }
    case W2L_TYPE_STRING:
        out->v.bytes.ptr = s;
        out->v.bytes.len = n;
        return W2L_OK;
    case W2L_TYPE_BINARY:
        if (!latin1) {
            out->v.bytes.ptr = s;
            out->v.bytes.len = n;
            return W2L_OK;
        } else {
            /* canal writes binary columns as ISO-8859-1 text: one char per byte */
            unsigned char *p = chunk_alloc(&x->d->mem, n ? n : 1);
            W2L_NOMEM_IF(!p, err);
            size_t o = 0;
            for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x80) p[o++] = c;
                else if ((c == 0xc2 || c == 0xc3) && i + 1 < n && ((unsigned char)s[i + 1] & 0xc0) == 0x80)
                    p[o++] = (unsigned char)(((c & 0x03) << 6) | ((unsigned char)s[++i] & 0x3f));
                else return bad_value(x, s, n, "binary text beyond ISO-8859-1", err);
            }
            out->v.bytes.ptr = (const char *)p;
            out->v.bytes.len = o;
            return W2L_OK;
        }
    }
    out->is_null = 1; /* all-zero date in a nullable column */
    return W2L_OK;
}

/* A JSON number as exact decimal text: integers as written, other numbers through their
 * shortest round-trip form (exact for up to 15 significant digits). */
static int number_text(const w2l__json *j, char *buf, size_t size)
{
    int64_t iv;
    if (w2l__json_int64(j, &iv) == 0) return snprintf(buf, size, "%lld", (long long)iv) < (int)size ? 0 : -1;
    double dv;
    char tmp[64];
    if (w2l__json_number_text(j, tmp, sizeof tmp) == 0 && tmp[0] && strpbrk(tmp, ".eE") == NULL) {
        snprintf(buf, size, "%s", tmp); /* a big integer kept as digits */
        return 0;
    }
    if (w2l__json_double(j, &dv)) return -1;
    w2l__double_format(dv, buf, size);
    return 0;
}

/* The JSON text of any value, into the chunks. */
static w2l_rc json_text(const vctx *x, const w2l__json *j, w2l_value *out, w2l_error *err)
{
    char *s = w2l__json_print(j, 0);
    W2L_NOMEM_IF(!s, err);
    size_t n = strlen(s);
    char *p = chunk_alloc(&x->d->mem, n ? n : 1);
    if (!p) {
        w2l__free(s);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    memcpy(p, s, n);
    w2l__free(s);
    out->is_null = 0;
    out->v.bytes.ptr = p;
    out->v.bytes.len = n;
    return W2L_OK;
}

static w2l_rc b64_value(const vctx *x, const char *s, size_t n, const unsigned char **p,
                        size_t *len, w2l_error *err)
{
    unsigned char *o = chunk_alloc(&x->d->mem, n / 4 * 3 + 4);
    W2L_NOMEM_IF(!o, err);
    if (b64_decode(s, n, o, len)) return bad_value(x, s, n, "not base64", err);
    *p = o;
    return W2L_OK;
}

/* Time of day in micros from a debezium duration; time-as-string columns get its text. */
static w2l_rc dbz_time(const vctx *x, w2l_type t, int64_t us, const char *orig, size_t olen,
                       w2l_value *out, w2l_error *err)
{
    if (t.id == W2L_TYPE_STRING) {
        char *p = chunk_alloc(&x->d->mem, 40);
        W2L_NOMEM_IF(!p, err);
        uint64_t a = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
        uint64_t sec = a / 1000000, frac = a % 1000000;
        int n = snprintf(p, 40, "%s%02llu:%02u:%02u", us < 0 ? "-" : "", (unsigned long long)(sec / 3600),
                         (unsigned)(sec / 60 % 60), (unsigned)(sec % 60));
        if (frac) n += snprintf(p + n, 40 - (size_t)n, ".%06u", (unsigned)frac);
        out->v.bytes.ptr = p;
        out->v.bytes.len = (size_t)n;
        return W2L_OK;
    }
    if (us < 0 || us >= W2L_MICROS_PER_DAY)
        return bad_value(x, orig, olen, "TIME outside 00:00:00..23:59:59.999999 (set source.time-as-string)", err);
    out->v.i64 = us;
    return W2L_OK;
}

/* A JSON value (not null) of column type t with encoding cv. canal: latin1 binary. */
static w2l_rc value_from_json(const vctx *x, w2l_type t, unsigned cv, int required,
                              const w2l__json *j, w2l_value *out, w2l_error *err)
{
    w2l__json_kind k = w2l__json_type(j);
    char nb[64];
    const char *s = w2l__json_str(j);
    size_t n = s ? strlen(s) : 0;
    int64_t iv;
    int canal = x->d->fmt == W2L__CDC_CANAL;
    out->is_null = 0;
    if (cv == CV_JSON) {
        if (k == W2L_JSON_STRING) {
            out->v.bytes.ptr = s;
            out->v.bytes.len = n;
            return W2L_OK;
        }
        return json_text(x, j, out, err);
    }
    if (cv == CV_SET && k == W2L_JSON_ARRAY) {
        size_t total = 0;
        for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e)) {
            const char *es = w2l__json_str(e);
            if (!es) return bad_value(x, "[...]", 5, "SET element is not a string", err);
            total += strlen(es) + 1;
        }
        char *p = chunk_alloc(&x->d->mem, total ? total : 1);
        W2L_NOMEM_IF(!p, err);
        size_t o = 0;
        for (w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e)) {
            const char *es = w2l__json_str(e);
            if (o) p[o++] = ',';
            memcpy(p + o, es, strlen(es));
            o += strlen(es);
        }
        out->v.bytes.ptr = p;
        out->v.bytes.len = o;
        return W2L_OK;
    }
    if (canal && k != W2L_JSON_STRING)
        return bad_value(x, "(non-string)", 12, "canal values are strings or null", err);
    switch (cv) {
    case CV_DAYS:
        if (w2l__json_int64(j, &iv) || iv < INT32_MIN || iv > INT32_MAX) break;
        out->v.i32 = (int32_t)iv;
        return W2L_OK;
    case CV_TIME_MS:
    case CV_TIME_US:
    case CV_TIME_NS: {
        if (w2l__json_int64(j, &iv)) break;
        int64_t us = cv == CV_TIME_MS ? iv * 1000 : cv == CV_TIME_NS ? w2l__floor_div(iv, 1000) : iv;
        if (cv == CV_TIME_MS && (iv > INT64_MAX / 1000 || iv < INT64_MIN / 1000)) break;
        number_text(j, nb, sizeof nb);
        return dbz_time(x, t, us, nb, strlen(nb), out, err);
    }
    case CV_TS_MS:
    case CV_TS_US:
    case CV_TS_NS:
        if (w2l__json_int64(j, &iv)) break;
        if (cv == CV_TS_MS) {
            if (iv > INT64_MAX / 1000 || iv < INT64_MIN / 1000) break;
            iv *= 1000;
        } else if (cv == CV_TS_NS) {
            iv = w2l__floor_div(iv, 1000);
        }
        out->v.i64 = iv;
        return W2L_OK;
    case CV_ZONED:
        if (!s) break;
        if (w2l__timestamp_parse(s, n, 1, &out->v.i64, err) != W2L_OK) return bad_value_err(x, s, n, err);
        return W2L_OK;
    case CV_DECIMAL_B64:
        if (k == W2L_JSON_NUMBER) break; /* decimal.handling.mode=double: by the number */
        if (s) {
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            while (len > 16 && (p[0] == 0 || p[0] == 0xff) && ((p[1] ^ p[0]) & 0x80) == 0) p++, len--;
            w2l_int128 v = {0, 0};
            if (len > 16 || (len && w2l__decimal_from_be(p, len, &v)))
                return bad_value(x, s, n, "decimal wider than 128 bits", err);
            if (!w2l__decimal_fits(v, t.precision)) {
                char txt[48];
                w2l__decimal_format(v, t.scale, txt, sizeof txt);
                char why[128];
                snprintf(why, sizeof why, "%s does not fit decimal(%u,%u)", txt, t.precision, t.scale);
                return bad_value(x, s, n, why, err);
            }
            out->v.dec = v;
            return W2L_OK;
        }
        break;
    case CV_BITS_B64:
        if (s) {
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            uint64_t v = 0;
            for (size_t i = 0; i < len; i++) {
                if (i >= 8 && p[i]) return bad_value(x, s, n, "BIT wider than 64 bits", err);
                if (i < 8) v |= (uint64_t)p[i] << (8 * i);
            }
            if (t.id == W2L_TYPE_BOOLEAN) out->v.i32 = v != 0;
            else if (t.id == W2L_TYPE_LONG) out->v.i64 = (int64_t)v;
            else break;
            return W2L_OK;
        }
        break;
    default:
        break;
    }
    /* plain: by the Iceberg type and the JSON kind */
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: {
        int b;
        if (w2l__json_bool(j, &b) == 0) {
            out->v.i32 = b;
            return W2L_OK;
        }
        if (w2l__json_int64(j, &iv) == 0 && (iv == 0 || iv == 1)) {
            out->v.i32 = (int32_t)iv;
            return W2L_OK;
        }
        break;
    }
    case W2L_TYPE_INT:
    case W2L_TYPE_LONG:
        if (k == W2L_JSON_NUMBER) {
            if (w2l__json_int64(j, &iv) ||
                (t.id == W2L_TYPE_INT && (iv < INT32_MIN || iv > INT32_MAX))) {
                number_text(j, nb, sizeof nb);
                return bad_value(x, nb, strlen(nb), t.id == W2L_TYPE_INT ? "not an int (32-bit)" : "not a long (64-bit)", err);
            }
            if (t.id == W2L_TYPE_INT) out->v.i32 = (int32_t)iv;
            else out->v.i64 = iv;
            return W2L_OK;
        }
        break;
    case W2L_TYPE_FLOAT:
    case W2L_TYPE_DOUBLE: {
        double dv;
        if (k == W2L_JSON_NUMBER && w2l__json_double(j, &dv) == 0) {
            if (t.id == W2L_TYPE_FLOAT) out->v.f32 = (float)dv;
            else out->v.f64 = dv;
            return W2L_OK;
        }
        break;
    }
    case W2L_TYPE_DECIMAL:
        if (k == W2L_JSON_NUMBER) {
            if (number_text(j, nb, sizeof nb)) break;
            return value_from_text(x, t, nb, strlen(nb), 0, required, out, err);
        }
        break;
    case W2L_TYPE_STRING:
        if (k == W2L_JSON_NUMBER || k == W2L_JSON_BOOL || k == W2L_JSON_OBJECT || k == W2L_JSON_ARRAY)
            return json_text(x, j, out, err);
        break;
    case W2L_TYPE_BINARY:
        if (s && !canal) { /* maxwell and debezium: base64 */
            const unsigned char *p;
            size_t len;
            W2L_TRY(b64_value(x, s, n, &p, &len, err));
            out->v.bytes.ptr = (const char *)p;
            out->v.bytes.len = len;
            return W2L_OK;
        }
        break;
    default:
        break;
    }
    if (s) return value_from_text(x, t, s, n, canal, required, out, err);
    if (k == W2L_JSON_NUMBER) number_text(j, nb, sizeof nb);
    else snprintf(nb, sizeof nb, "(%s)", w2l__json_kind_name(k));
    char why[64];
    snprintf(why, sizeof why, "not a %s", w2l__type_name(t.id));
    return bad_value(x, nb, strlen(nb), why, err);
}

/* ---- rows ---- */

/* Fills row (n values of shape s) from a JSON object of column -> value. base: values
 * already there (an update's after image under its before overlay) are kept for
 * columns the object lacks. Columns the shape lacks: an error for non-authoritative
 * shapes, dropped (one warning) for authoritative ones. present: set when some column is
 * absent from both. */
static w2l_rc fill_row(w2l__cdc *d, table *t, const w2l__json *obj, w2l_value *row, uint8_t *have,
                       w2l_error *err)
{
    const w2l_schema *sc = t->cur.schema;
    size_t n = w2l_schema_field_count(sc), i = 0;
    if (w2l__json_type(obj) != W2L_JSON_OBJECT)
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: row image is not an object", d->what, t->db, t->name);
    for (w2l__json *m = w2l__json_first(obj); m; m = w2l__json_next(m), i++) {
        const char *name = w2l__json_key(m);
        long k;
        /* members usually come in column order */
        const w2l_field *f = i < n ? w2l_schema_field(sc, i) : NULL;
        if (f && strcmp(f->name, name) == 0) k = (long)i;
        else k = w2l_schema_index_of_name(sc, name);
        if (k < 0) {
            if (!t->cur.authoritative)
                return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: column %s is not described", d->what,
                                 t->db, t->name, name);
            if (!t->cur.warned) {
                t->cur.warned = 1;
                w2l__log(W2L_LOG_WARN, "%s: table %s.%s: column %s is not in the table's schema since its last DDL; dropped",
                         d->what, t->db, t->name, name);
            }
            continue;
        }
        f = w2l_schema_field(sc, (size_t)k);
        have[k / 8] |= (uint8_t)(1u << (k % 8));
        if (w2l__json_type(m) == W2L_JSON_NULL) {
            row[k].is_null = 1;
            continue;
        }
        if (d->replay) continue;
        vctx x = {d, t, f->name};
        W2L_TRY(value_from_json(&x, f->type, t->cur.cv[k], f->required, m, &row[k], err));
    }
    return W2L_OK;
}

/* Appends one change of the table's current shape from the row object(s): image, then
 * overlay (the changed columns' old values, for a before image) when not NULL. */
static w2l_rc add_change(w2l__cdc *d, table *t, w2l_op op, const w2l__json *image,
                         const w2l__json *overlay, int64_t ts_ms, w2l_error *err)
{
    const w2l_schema *sc = t->cur.schema;
    size_t n = w2l_schema_field_count(sc), nb = (n + 7) / 8;
    uint8_t stackhave[64], *have = nb <= sizeof stackhave ? stackhave : chunk_alloc(&d->mem, nb);
    W2L_NOMEM_IF(!have, err);
    memset(have, 0, nb);
    if (d->replay) return W2L_OK; /* schemas only */
    w2l_value *row = chunk_alloc(&d->mem, (n ? n : 1) * sizeof *row);
    W2L_NOMEM_IF(!row, err);
    for (size_t i = 0; i < n; i++) row[i].is_null = 1;
    W2L_TRY(fill_row(d, t, image, row, have, err));
    if (overlay) W2L_TRY(fill_row(d, t, overlay, row, have, err));
    int all = 1;
    for (size_t i = 0; i < n; i++)
        if (!(have[i / 8] & (1u << (i % 8)))) all = 0;
    uint8_t *present = NULL;
    if (!all) { /* columns absent from the image (minimal row images, columns since added) */
        present = have == stackhave ? chunk_alloc(&d->mem, nb) : have;
        W2L_NOMEM_IF(!present, err);
        if (present != have) memcpy(present, have, nb);
    }
    w2l__cdc_event *e;
    W2L_TRY(new_event(d, &e, err));
    e->change.db = t->db;
    e->change.table = t->name;
    e->change.schema = w2l_schema_ref(t->cur.schema);
    e->change.op = op;
    e->change.row = row;
    e->change.ncols = n;
    e->change.present = present;
    e->change.ts_ms = ts_ms;
    d->nev++;
    return W2L_OK;
}

static w2l_rc add_ddl(w2l__cdc *d, const char *db, const char *tname, const char *sql,
                      const w2l_schema *after, int64_t ts_ms, w2l_error *err)
{
    if (d->replay) return W2L_OK;
    w2l__cdc_event *e;
    W2L_TRY(new_event(d, &e, err));
    e->is_ddl = 1;
    e->ddl.db = db && *db ? db : NULL;
    e->ddl.table = tname && *tname ? tname : NULL;
    e->ddl.sql = sql;
    e->ddl.sql_len = strlen(sql);
    e->ddl.schema_after = after ? w2l_schema_ref((w2l_schema *)after) : NULL;
    e->ddl.ts_ms = ts_ms;
    d->nev++;
    return W2L_OK;
}

/* ---- message helpers ---- */

static const char *get_str(const w2l__json *o, const char *key)
{
    return o ? w2l__json_str(w2l__json_get(o, key)) : NULL;
}

static int64_t get_ms(const w2l__json *o, const char *key, int64_t scale)
{
    int64_t v = 0;
    if (o && w2l__json_int64(w2l__json_get(o, key), &v) == 0) return v * scale;
    return 0;
}

static w2l_rc missing(w2l__cdc *d, const char *member, w2l_error *err)
{
    return w2l__fail(err, W2L_SOURCE, "%s: missing or invalid member \"%s\"", d->what, member);
}

static int is_null_or_absent(const w2l__json *j) { return !j || w2l__json_type(j) == W2L_JSON_NULL; }

/* Inferring a schema from an update's or delete's image would guess at a table the
 * stream never showed (no DDL, no insert): more likely a stream cut in the wrong place. */
static w2l_rc never_described(w2l__cdc *d, const table *t, w2l_error *err)
{
    return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: update or delete of a table never described (no DDL or insert before it)",
                     d->what, t->db, t->name);
}

/* Infers an undescribed table's columns from a row object (see the file header). */
static w2l_rc infer_cols(w2l__cdc *d, const table *t, const w2l__json *obj, w2l_error *err)
{
    if (w2l__json_type(obj) != W2L_JSON_OBJECT) return missing(d, "data", err);
    for (w2l__json *m = w2l__json_first(obj); m; m = w2l__json_next(m)) {
        const char *name = w2l__json_key(m);
        if (col_find(d, name) >= 0) continue;
        w2l_type ty = {W2L_TYPE_STRING, 0, 0};
        unsigned cv = CV_PLAIN;
        int64_t iv;
        long k = t->cur.schema ? w2l_schema_index_of_name(t->cur.schema, name) : -1;
        w2l__json_kind kind = w2l__json_type(m);
        if (kind == W2L_JSON_BOOL) ty.id = W2L_TYPE_BOOLEAN;
        else if (kind == W2L_JSON_NUMBER) ty.id = w2l__json_int64(m, &iv) == 0 ? W2L_TYPE_LONG : W2L_TYPE_DOUBLE;
        else if (kind == W2L_JSON_OBJECT || kind == W2L_JSON_ARRAY) cv = CV_JSON;
        if (k >= 0) {
            /* a null keeps the column's type; a column once double stays double */
            w2l_type old = w2l_schema_field(t->cur.schema, (size_t)k)->type;
            if (kind == W2L_JSON_NULL || (old.id == W2L_TYPE_DOUBLE && ty.id == W2L_TYPE_LONG)) {
                ty = old;
                cv = t->cur.cv[k];
            }
        }
        W2L_TRY(col_add(d, name, ty, cv, 0, err));
    }
    return W2L_OK;
}

/* ---- canal-json ---- */

static w2l_rc canal_describe(w2l__cdc *d, table *t, const w2l__json *msg, w2l_error *err)
{
    const w2l__json *types = w2l__json_get(msg, "mysqlType");
    if (!types || w2l__json_type(types) != W2L_JSON_OBJECT) return missing(d, "mysqlType", err);
    const w2l__json *pks = w2l__json_get(msg, "pkNames");
    /* the signature of a canal shape is its raw text (names, MySQL types, key), so the
     * common case costs one comparison and no type parsing */
    d->sig.len = 0;
    for (w2l__json *m = w2l__json_first(types); m; m = w2l__json_next(m)) {
        const char *tt = w2l__json_str(m), *k = w2l__json_key(m);
        if (!tt) return missing(d, "mysqlType", err);
        W2L_TRY(w2l_buf_append(&d->sig, k, strlen(k) + 1, err));
        W2L_TRY(w2l_buf_append(&d->sig, tt, strlen(tt) + 1, err));
    }
    W2L_TRY(w2l_buf_append(&d->sig, "\x1e", 1, err));
    for (w2l__json *p = pks ? w2l__json_first(pks) : NULL; p; p = w2l__json_next(p)) {
        const char *k = w2l__json_str(p);
        if (!k) return missing(d, "pkNames", err);
        W2L_TRY(w2l_buf_append(&d->sig, k, strlen(k) + 1, err));
    }
    if (t->cur.schema && t->cur.siglen == d->sig.len && memcmp(t->cur.sig, d->sig.data, d->sig.len) == 0)
        return W2L_OK;
    describe_reset(d);
    for (w2l__json *m = w2l__json_first(types); m; m = w2l__json_next(m)) {
        const char *tt = w2l__json_str(m);
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(mysql_type(d, t->db, t->name, w2l__json_key(m), tt, &ty, &info, err));
        W2L_TRY(col_add(d, w2l__json_key(m), ty, mysql_cv(&info, ty), 0, err));
    }
    for (w2l__json *p = pks ? w2l__json_first(pks) : NULL; p; p = w2l__json_next(p))
        W2L_TRY(pk_add(d, w2l__json_str(p), err));
    return describe_commit(d, t, 0, 1, err);
}

static w2l_rc canal_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const char *db = get_str(msg, "database"), *tn = get_str(msg, "table"), *type = get_str(msg, "type");
    int isddl = 0;
    const w2l__json *jd = w2l__json_get(msg, "isDdl");
    if (jd && w2l__json_bool(jd, &isddl)) return missing(d, "isDdl", err);
    int64_t ts = get_ms(msg, "es", 1);
    if (!ts) ts = get_ms(msg, "ts", 1);
    if (!type) return missing(d, "type", err);
    if (!db) return missing(d, "database", err);
    if (isddl) {
        const char *sql = get_str(msg, "sql");
        if (!sql || !*sql) return missing(d, "sql", err);
        return add_ddl(d, db, tn, sql, NULL, ts, err);
    }
    w2l_op op;
    if (!strcmp(type, "INSERT")) op = W2L_OP_INSERT;
    else if (!strcmp(type, "UPDATE")) op = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(type, "DELETE")) op = W2L_OP_DELETE;
    else {
        const char *sql = get_str(msg, "sql");
        if (sql && *sql) return add_ddl(d, db, tn, sql, NULL, ts, err); /* a query canal did not flag */
        return w2l__fail(err, W2L_SOURCE, "%s: unknown type \"%s\"", d->what, type);
    }
    if (!tn || !*tn) return missing(d, "table", err);
    const w2l__json *data = w2l__json_get(msg, "data");
    if (!data || w2l__json_type(data) != W2L_JSON_ARRAY) return missing(d, "data", err);
    table *t;
    W2L_TRY(table_get(d, db, tn, 1, &t, err));
    /* canal messages describe themselves; an update or delete of a table that neither
     * this message nor an earlier one describes names the table */
    if (op != W2L_OP_INSERT && !t->cur.schema && is_null_or_absent(w2l__json_get(msg, "mysqlType")))
        return never_described(d, t, err);
    W2L_TRY(canal_describe(d, t, msg, err));
    const w2l__json *old = w2l__json_get(msg, "old");
    const w2l__json *o = op == W2L_OP_UPDATE_AFTER && old && w2l__json_type(old) == W2L_JSON_ARRAY
                             ? w2l__json_first(old) : NULL;
    if (op == W2L_OP_UPDATE_AFTER && w2l__json_size(old) != w2l__json_size(data))
        return missing(d, "old", err);
    for (w2l__json *r = w2l__json_first(data); r; r = w2l__json_next(r)) {
        if (op == W2L_OP_UPDATE_AFTER) {
            W2L_TRY(add_change(d, t, W2L_OP_UPDATE_BEFORE, r, o, ts, err));
            o = w2l__json_next(o);
        }
        W2L_TRY(add_change(d, t, op, r, NULL, ts, err));
    }
    return W2L_OK;
}

/* ---- debezium-json ---- */

/* Describes one Kafka Connect field of a debezium value schema. */
static w2l_rc dbz_field(w2l__cdc *d, const table *t, const w2l__json *f, w2l_error *err)
{
    const char *name = get_str(f, "field"), *type = get_str(f, "type"), *sem = get_str(f, "name");
    if (!name || !type) return missing(d, "schema.fields.field", err);
    int optional = 1;
    w2l__json_bool(w2l__json_get(f, "optional"), &optional);
    w2l_type ty = {W2L_TYPE_STRING, 0, 0};
    unsigned cv = CV_PLAIN;
    int ok = 1;
    if (!sem) sem = "";
    if (!strcmp(type, "boolean")) ty.id = W2L_TYPE_BOOLEAN;
    else if (!strcmp(type, "int8") || !strcmp(type, "int16") || !strcmp(type, "int32")) {
        ty.id = W2L_TYPE_INT;
        if (!strcmp(sem, "io.debezium.time.Date") || !strcmp(sem, "org.apache.kafka.connect.data.Date"))
            ty.id = W2L_TYPE_DATE, cv = CV_DAYS;
        else if (!strcmp(sem, "io.debezium.time.Time") || !strcmp(sem, "org.apache.kafka.connect.data.Time"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_MS;
    } else if (!strcmp(type, "int64")) {
        ty.id = W2L_TYPE_LONG;
        if (!strcmp(sem, "io.debezium.time.Timestamp") || !strcmp(sem, "org.apache.kafka.connect.data.Timestamp"))
            ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_MS;
        else if (!strcmp(sem, "io.debezium.time.MicroTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_US;
        else if (!strcmp(sem, "io.debezium.time.NanoTimestamp")) ty.id = W2L_TYPE_TIMESTAMP, cv = CV_TS_NS;
        else if (!strcmp(sem, "io.debezium.time.MicroTime"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_US;
        else if (!strcmp(sem, "io.debezium.time.NanoTime"))
            ty.id = d->opts.time_as_string ? W2L_TYPE_STRING : W2L_TYPE_TIME, cv = CV_TIME_NS;
        else if (*sem && strcmp(sem, "io.debezium.time.Year")) ok = 0;
    } else if (!strcmp(type, "float32")) ty.id = W2L_TYPE_FLOAT;
    else if (!strcmp(type, "float64")) ty.id = W2L_TYPE_DOUBLE;
    else if (!strcmp(type, "string")) {
        if (!strcmp(sem, "io.debezium.time.ZonedTimestamp")) ty.id = W2L_TYPE_TIMESTAMPTZ, cv = CV_ZONED;
        else if (!strcmp(sem, "io.debezium.data.Json")) cv = CV_JSON;
    } else if (!strcmp(type, "bytes")) {
        ty.id = W2L_TYPE_BINARY;
        const w2l__json *params = w2l__json_get(f, "parameters");
        if (!strcmp(sem, "org.apache.kafka.connect.data.Decimal")) {
            const char *sc = get_str(params, "scale"), *pr = get_str(params, "connect.decimal.precision");
            int s = sc ? atoi(sc) : 0, p = pr ? atoi(pr) : 38;
            if (p < 1 || p > 38 || s < 0 || s > p) ok = 0;
            ty.id = W2L_TYPE_DECIMAL;
            ty.precision = (uint8_t)p;
            ty.scale = (uint8_t)s;
            cv = CV_DECIMAL_B64;
        } else if (!strcmp(sem, "io.debezium.data.Bits")) {
            const char *len = get_str(params, "length");
            ty.id = len && atoi(len) == 1 ? W2L_TYPE_BOOLEAN : W2L_TYPE_LONG;
            cv = CV_BITS_B64;
        }
    } else ok = 0;
    if (!ok)
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s column %s: unknown type %s%s%s", d->what, t->db,
                         t->name, name, type, *sem ? " " : "", sem);
    return col_add(d, name, ty, cv, !optional, err);
}

static w2l_rc dbz_describe_schema(w2l__cdc *d, table *t, const w2l__json *schema, const char *image,
                                  w2l_error *err)
{
    const w2l__json *st = NULL;
    for (w2l__json *f = w2l__json_first(w2l__json_get(schema, "fields")); f; f = w2l__json_next(f)) {
        const char *fn = get_str(f, "field");
        if (fn && !strcmp(fn, image)) st = f;
    }
    if (!st || !w2l__json_get(st, "fields")) return missing(d, "schema.fields", err);
    describe_reset(d);
    for (w2l__json *f = w2l__json_first(w2l__json_get(st, "fields")); f; f = w2l__json_next(f))
        W2L_TRY(dbz_field(d, t, f, err));
    for (size_t i = 0; i < t->npk; i++)
        if (col_find(d, t->pk[i]) >= 0) W2L_TRY(pk_add(d, t->pk[i], err));
    return describe_commit(d, t, 0, 0, err);
}

/* tableChanges[].table: columns (typeExpression or typeName, length, scale, optional)
 * and primaryKeyColumnNames, as the MySQL connector writes them. */
static w2l_rc dbz_table_change(w2l__cdc *d, const w2l__json *tc, const char *defdb, table **out,
                               w2l_error *err)
{
    *out = NULL;
    const char *type = get_str(tc, "type"), *id = get_str(tc, "id");
    if (!type || !id) return missing(d, "tableChanges.id", err);
    /* id: "db"."table" (quoted) or db.table */
    char db[256], tn[256];
    const char *p = id;
    size_t k = 0;
    char *dst = db;
    int part = 0;
    while (*p) {
        if (*p == '"') { p++; continue; }
        if (*p == '.' && part == 0) { dst[k] = '\0'; dst = tn; k = 0; part = 1; p++; continue; }
        if (k < 255) dst[k++] = *p;
        p++;
    }
    dst[k] = '\0';
    if (part == 0) {
        snprintf(tn, sizeof tn, "%s", db);
        snprintf(db, sizeof db, "%s", defdb ? defdb : "");
    }
    table *t;
    if (!strcmp(type, "DROP")) {
        W2L_TRY(table_get(d, db, tn, 0, &t, err));
        if (t) table_forget(t);
        return W2L_OK;
    }
    const w2l__json *tab = w2l__json_get(tc, "table");
    if (!tab) return missing(d, "tableChanges.table", err);
    W2L_TRY(table_get(d, db, tn, 1, &t, err));
    describe_reset(d);
    char tt[160];
    for (w2l__json *c = w2l__json_first(w2l__json_get(tab, "columns")); c; c = w2l__json_next(c)) {
        const char *name = get_str(c, "name"), *te = get_str(c, "typeExpression"), *tnm = get_str(c, "typeName");
        if (!name || (!te && !tnm)) return missing(d, "tableChanges.table.columns", err);
        int64_t len = -1, scale = -1;
        w2l__json_int64(w2l__json_get(c, "length"), &len);
        w2l__json_int64(w2l__json_get(c, "scale"), &scale);
        const char *base = tnm ? tnm : te;
        /* typeName carries UNSIGNED; length/scale give the parentheses */
        if (len >= 0 && scale >= 0) snprintf(tt, sizeof tt, "%s(%lld,%lld)", base, (long long)len, (long long)scale);
        else if (len >= 0) snprintf(tt, sizeof tt, "%s(%lld)", base, (long long)len);
        else snprintf(tt, sizeof tt, "%s", base);
        /* "BIGINT UNSIGNED(20)" -> "BIGINT(20) UNSIGNED" */
        char *u = strstr(tt, " UNSIGNED");
        if (u && strchr(u, '(')) {
            char rest[160];
            snprintf(rest, sizeof rest, "%s", u + 9);
            snprintf(u, sizeof tt - (size_t)(u - tt), "%s UNSIGNED", rest);
        }
        /* enum/set: the values list instead of a length */
        const w2l__json *ev = w2l__json_get(c, "enumValues");
        if (ev && w2l__json_size(ev)) {
            size_t n = (size_t)snprintf(tt, sizeof tt, "%s(", base);
            for (w2l__json *v = w2l__json_first(ev); v && n < sizeof tt; v = w2l__json_next(v)) {
                const char *vs = w2l__json_str(v);
                int quoted = vs && vs[0] == '\'';
                n += (size_t)snprintf(tt + n, sizeof tt - n, "%s%s%s%s", v == w2l__json_first(ev) ? "" : ",",
                                      quoted ? "" : "'", vs ? vs : "", quoted ? "" : "'");
            }
            if (n < sizeof tt) snprintf(tt + n, sizeof tt - n, ")");
        }
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(mysql_type(d, db, tn, name, tt, &ty, &info, err));
        int optional = 1;
        w2l__json_bool(w2l__json_get(c, "optional"), &optional);
        W2L_TRY(col_add(d, name, ty, mysql_dbz_cv(&info, ty), !optional, err));
    }
    for (w2l__json *p2 = w2l__json_first(w2l__json_get(tab, "primaryKeyColumnNames")); p2; p2 = w2l__json_next(p2))
        if (w2l__json_str(p2)) W2L_TRY(pk_add(d, w2l__json_str(p2), err));
    W2L_TRY(table_set_pk(t, d->pks, d->npks, err));
    W2L_TRY(describe_commit(d, t, 1, 0, err));
    *out = t;
    return W2L_OK;
}

/* The payload of a debezium message (the envelope itself when it has no schema part) and
 * its schema (NULL without); payload NULL for a tombstone. */
static void dbz_parts(const w2l__json *msg, const w2l__json **schema, const w2l__json **payload)
{
    *schema = w2l__json_get(msg, "schema");
    *payload = w2l__json_get(msg, "payload");
    if (*schema && *payload) {
        if (is_null_or_absent(*payload)) *payload = NULL;
    } else if (*schema && w2l__json_size(msg) == 2 && w2l__json_get(msg, "payload")) {
        *payload = NULL;
    } else {
        *schema = NULL;
        *payload = msg;
    }
    if (*schema && w2l__json_type(*schema) == W2L_JSON_NULL) *schema = NULL;
}

static w2l_rc dbz_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const w2l__json *schema, *payload;
    dbz_parts(msg, &schema, &payload);
    if (!payload) return W2L_OK; /* tombstone */
    const w2l__json *source = w2l__json_get(payload, "source");
    int64_t ts = get_ms(source, "ts_ms", 1);
    if (!ts) ts = get_ms(payload, "ts_ms", 1);
    if (get_str(payload, "status")) return W2L_OK; /* transaction metadata */
    const char *ddl = get_str(payload, "ddl");
    if (ddl) {
        const char *db = get_str(payload, "databaseName");
        if (!db) db = get_str(source, "db");
        table *last = NULL;
        size_t nt = 0;
        for (w2l__json *tc = w2l__json_first(w2l__json_get(payload, "tableChanges")); tc; tc = w2l__json_next(tc)) {
            W2L_TRY(dbz_table_change(d, tc, db, &last, err));
            nt++;
        }
        const char *tn = nt == 1 && last ? last->name : get_str(source, "table");
        if (tn && strchr(tn, ',')) tn = NULL; /* a statement over several tables */
        return add_ddl(d, db, tn, ddl, nt == 1 && last ? last->cur.schema : NULL, ts, err);
    }
    const char *op = get_str(payload, "op");
    if (!op) return missing(d, "op", err);
    const char *db = get_str(source, "db"), *tn = get_str(source, "table");
    if (!db || !tn) return missing(d, "source.db/source.table", err);
    const w2l__json *before = w2l__json_get(payload, "before"), *after = w2l__json_get(payload, "after");
    if (!strcmp(op, "t")) {
        char *sql = w2l__asprintf("TRUNCATE TABLE `%s`.`%s`", db, tn);
        W2L_NOMEM_IF(!sql, err);
        char *p = chunk_alloc(&d->mem, strlen(sql) + 1);
        if (p) memcpy(p, sql, strlen(sql) + 1);
        w2l__free(sql);
        W2L_NOMEM_IF(!p, err);
        return add_ddl(d, db, tn, p, NULL, ts, err);
    }
    if (!strcmp(op, "m")) return W2L_OK; /* a logical-decoding message: no rows */
    w2l_op wop;
    if (!strcmp(op, "c") || !strcmp(op, "r")) wop = W2L_OP_INSERT;
    else if (!strcmp(op, "u")) wop = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(op, "d")) wop = W2L_OP_DELETE;
    else return w2l__fail(err, W2L_SOURCE, "%s: unknown op \"%s\"", d->what, op);
    if (wop != W2L_OP_DELETE && is_null_or_absent(after)) return missing(d, "after", err);
    if (wop != W2L_OP_INSERT && is_null_or_absent(before)) return missing(d, "before", err);
    table *t;
    W2L_TRY(table_get(d, db, tn, 1, &t, err));
    if (schema) {
        W2L_TRY(dbz_describe_schema(d, t, schema, wop == W2L_OP_DELETE ? "before" : "after", err));
    } else if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && wop != W2L_OP_INSERT) return never_described(d, t, err);
        describe_reset(d);
        if (!is_null_or_absent(before)) W2L_TRY(infer_cols(d, t, before, err));
        if (!is_null_or_absent(after)) W2L_TRY(infer_cols(d, t, after, err));
        for (size_t i = 0; i < t->npk; i++)
            if (col_find(d, t->pk[i]) >= 0) W2L_TRY(pk_add(d, t->pk[i], err));
        W2L_TRY(describe_commit(d, t, 0, 0, err));
    }
    if (wop == W2L_OP_UPDATE_AFTER) W2L_TRY(add_change(d, t, W2L_OP_UPDATE_BEFORE, before, NULL, ts, err));
    return add_change(d, t, wop, wop == W2L_OP_DELETE ? before : after, NULL, ts, err);
}

/* ---- maxwell-json ---- */

/* A maxwell def column as MySQL type text: {"type":"decimal","precision":12,"scale":2},
 * {"type":"bigint","signed":false}, {"type":"datetime","column-length":6},
 * {"type":"enum","enum-values":["a","b"]}. */
static w2l_rc maxwell_def_type(w2l__cdc *d, const w2l__json *c, char *tt, size_t size, w2l_error *err)
{
    const char *type = get_str(c, "type");
    if (!type) return missing(d, "def.columns.type", err);
    int64_t p = -1, s = -1, len = -1;
    w2l__json_int64(w2l__json_get(c, "precision"), &p);
    w2l__json_int64(w2l__json_get(c, "scale"), &s);
    w2l__json_int64(w2l__json_get(c, "column-length"), &len);
    int sgn = 1;
    w2l__json_bool(w2l__json_get(c, "signed"), &sgn);
    size_t n;
    if (p >= 0) n = (size_t)snprintf(tt, size, "%s(%lld,%lld)", type, (long long)p, (long long)(s < 0 ? 0 : s));
    else if (len >= 0) n = (size_t)snprintf(tt, size, "%s(%lld)", type, (long long)len);
    else n = (size_t)snprintf(tt, size, "%s", type);
    if (!sgn && n < size) n += (size_t)snprintf(tt + n, size - n, " unsigned");
    const w2l__json *vals = w2l__json_get(c, "enum-values");
    if (!vals) vals = w2l__json_get(c, "set-values");
    if (vals && n < size) {
        n += (size_t)snprintf(tt + n, size - n, "(");
        for (w2l__json *v = w2l__json_first(vals); v && n < size; v = w2l__json_next(v)) {
            const char *vs = w2l__json_str(v);
            n += (size_t)snprintf(tt + n, size - n, "%s'", v == w2l__json_first(vals) ? "" : ",");
            for (; vs && *vs && n + 2 < size; vs++) {
                if (*vs == '\'') tt[n++] = '\'';
                tt[n++] = *vs;
            }
            if (n < size) n += (size_t)snprintf(tt + n, size - n, "'");
        }
        if (n < size) snprintf(tt + n, size - n, ")");
    }
    return W2L_OK;
}

static w2l_rc maxwell_def(w2l__cdc *d, const w2l__json *def, table **out, w2l_error *err)
{
    const char *db = get_str(def, "database"), *tn = get_str(def, "table");
    if (!db || !tn) return missing(d, "def.database/def.table", err);
    table *t;
    W2L_TRY(table_get(d, db, tn, 1, &t, err));
    describe_reset(d);
    char tt[512];
    for (w2l__json *c = w2l__json_first(w2l__json_get(def, "columns")); c; c = w2l__json_next(c)) {
        const char *name = get_str(c, "name");
        if (!name) return missing(d, "def.columns.name", err);
        W2L_TRY(maxwell_def_type(d, c, tt, sizeof tt, err));
        w2l_type ty;
        w2l__mysql_type info;
        W2L_TRY(mysql_type(d, db, tn, name, tt, &ty, &info, err));
        W2L_TRY(col_add(d, name, ty, mysql_cv(&info, ty), 0, err));
    }
    for (w2l__json *p = w2l__json_first(w2l__json_get(def, "primary-key")); p; p = w2l__json_next(p))
        if (w2l__json_str(p)) W2L_TRY(pk_add(d, w2l__json_str(p), err));
    for (w2l__json *p = w2l__json_first(w2l__json_get(def, "primarykey")); p; p = w2l__json_next(p))
        if (w2l__json_str(p)) W2L_TRY(pk_add(d, w2l__json_str(p), err));
    W2L_TRY(table_set_pk(t, d->pks, d->npks, err));
    W2L_TRY(describe_commit(d, t, 1, 0, err));
    *out = t;
    return W2L_OK;
}

static w2l_rc maxwell_decode(w2l__cdc *d, const w2l__json *msg, w2l_error *err)
{
    const char *type = get_str(msg, "type"), *db = get_str(msg, "database"), *tn = get_str(msg, "table");
    if (!type) return missing(d, "type", err);
    int64_t ts = get_ms(msg, "ts", 1000);
    if (!strncmp(type, "table-", 6) || !strncmp(type, "database-", 9)) {
        const char *sql = get_str(msg, "sql");
        if (!sql) return missing(d, "sql", err);
        const w2l__json *def = w2l__json_get(msg, "def");
        table *t = NULL;
        if (!strcmp(type, "table-drop")) {
            W2L_TRY(table_get(d, db ? db : "", tn ? tn : "", 0, &t, err));
            if (t) table_forget(t);
            return add_ddl(d, db, tn, sql, NULL, ts, err);
        }
        if (def && !is_null_or_absent(def)) {
            const w2l__json *olddef = w2l__json_get(msg, "old");
            W2L_TRY(maxwell_def(d, def, &t, err));
            /* a rename: the old name is gone */
            const char *odb = get_str(olddef, "database"), *otn = get_str(olddef, "table");
            if (odb && otn && (strcmp(odb, t->db) || strcmp(otn, t->name))) {
                table *o;
                W2L_TRY(table_get(d, odb, otn, 0, &o, err));
                if (o) table_forget(o);
            }
            return add_ddl(d, t->db, t->name, sql, t->cur.schema, ts, err);
        }
        return add_ddl(d, db, tn, sql, NULL, ts, err);
    }
    if (!strcmp(type, "bootstrap-start") || !strcmp(type, "bootstrap-complete")) return W2L_OK;
    w2l_op op;
    if (!strcmp(type, "insert") || !strcmp(type, "bootstrap-insert")) op = W2L_OP_INSERT;
    else if (!strcmp(type, "update")) op = W2L_OP_UPDATE_AFTER;
    else if (!strcmp(type, "delete")) op = W2L_OP_DELETE;
    else return w2l__fail(err, W2L_SOURCE, "%s: unknown type \"%s\"", d->what, type);
    if (!db) return missing(d, "database", err);
    if (!tn) return missing(d, "table", err);
    const w2l__json *data = w2l__json_get(msg, "data"), *old = w2l__json_get(msg, "old");
    if (!data || w2l__json_type(data) != W2L_JSON_OBJECT) return missing(d, "data", err);
    table *t;
    W2L_TRY(table_get(d, db, tn, 1, &t, err));
    if (!t->cur.schema || !t->cur.authoritative) {
        if (!t->cur.schema && op != W2L_OP_INSERT) return never_described(d, t, err);
        describe_reset(d);
        W2L_TRY(infer_cols(d, t, data, err));
        const w2l__json *pkc = w2l__json_get(msg, "primary_key_columns");
        for (w2l__json *p = w2l__json_first(pkc); p; p = w2l__json_next(p))
            if (w2l__json_str(p) && col_find(d, w2l__json_str(p)) >= 0) W2L_TRY(pk_add(d, w2l__json_str(p), err));
        if (!pkc)
            for (size_t i = 0; i < t->npk; i++)
                if (col_find(d, t->pk[i]) >= 0) W2L_TRY(pk_add(d, t->pk[i], err));
        W2L_TRY(describe_commit(d, t, 0, 0, err));
    }
    if (op == W2L_OP_UPDATE_AFTER) {
        if (old && w2l__json_type(old) != W2L_JSON_OBJECT && w2l__json_type(old) != W2L_JSON_NULL)
            return missing(d, "old", err);
        W2L_TRY(add_change(d, t, W2L_OP_UPDATE_BEFORE, data, is_null_or_absent(old) ? NULL : old, ts, err));
    }
    return add_change(d, t, op, data, NULL, ts, err);
}

/* ---- transactions ---- */

/* Which transaction a message belongs to (see file_source.c for the rules):
 *   TX_OWN     a transaction by itself (canal messages, DDL, rows without a marker)
 *   TX_PART    part of transaction *key*; TX_LAST: its last message (maxwell commit:true)
 *   TX_BEGIN / TX_END  debezium transaction metadata for *key*
 *   TX_NONE    no rows (tombstones, bootstrap markers) */
enum tx { TX_OWN, TX_PART, TX_LAST, TX_BEGIN, TX_END, TX_NONE };

static enum tx txn_of(const w2l__cdc *d, const w2l__json *msg, char *key, size_t size)
{
    key[0] = '\0';
    if (d->fmt == W2L__CDC_CANAL) return TX_OWN;
    if (d->fmt == W2L__CDC_MAXWELL) {
        const char *type = get_str(msg, "type");
        int64_t xid;
        if (!type || !strncmp(type, "table-", 6) || !strncmp(type, "database-", 9) ||
            w2l__json_int64(w2l__json_get(msg, "xid"), &xid))
            return TX_OWN;
        snprintf(key, size, "xid:%lld", (long long)xid);
        int commit = 0;
        w2l__json_bool(w2l__json_get(msg, "commit"), &commit);
        return commit ? TX_LAST : TX_PART;
    }
    const w2l__json *schema, *payload;
    dbz_parts(msg, &schema, &payload);
    if (!payload) return TX_NONE;
    const char *status = get_str(payload, "status");
    if (status) {
        const char *id = get_str(payload, "id");
        snprintf(key, size, "%s", id ? id : "");
        return !strcmp(status, "END") ? TX_END : TX_BEGIN;
    }
    if (get_str(payload, "ddl")) return TX_OWN;
    const w2l__json *source = w2l__json_get(payload, "source");
    const char *id = get_str(w2l__json_get(payload, "transaction"), "id");
    if (!id) id = get_str(source, "gtid");
    int64_t v;
    if (id) snprintf(key, size, "%s", id);
    else if (source && w2l__json_int64(w2l__json_get(source, "txId"), &v) == 0)
        snprintf(key, size, "txId:%lld", (long long)v);
    return key[0] ? TX_PART : TX_OWN;
}

/* ---- dispatch ---- */

w2l_rc w2l__cdc_decode(w2l__cdc *d, const char *text, size_t len, int replay, w2l__cdc_step *step,
                       w2l_error *err)
{
    *step = W2L__CDC_MORE;
    w2l__json *msg = d->held;
    d->held = NULL;
    if (!msg) {
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) i++;
        if (i == len) return W2L_OK; /* blank line */
        if (len - i >= 4 && !memcmp(text + i, "null", 4)) {
            size_t k = i + 4;
            while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) k++;
            if (k == len) return W2L_OK; /* tombstone */
        }
        w2l_rc rc = w2l__json_parse(text, len, &msg, err);
        if (rc == W2L_NOMEM) return rc;
        if (rc != W2L_OK) {
            char why[sizeof err->msg];
            memcpy(why, err->msg, sizeof why);
            return w2l__fail(err, W2L_SOURCE, "%s: malformed message: %s", d->what, why);
        }
        if (w2l__json_type(msg) != W2L_JSON_OBJECT) {
            w2l__json_free(msg);
            return w2l__fail(err, W2L_SOURCE, "%s: message is not a JSON object", d->what);
        }
    }
    char key[128];
    enum tx tx = txn_of(d, msg, key, sizeof key);
    if (!replay && d->txn_open) {
        int same = (tx == TX_PART || tx == TX_LAST || tx == TX_END) && !strcmp(key, d->txn_key);
        if (tx == TX_END || tx == TX_BEGIN || tx == TX_NONE) {
            w2l__json_free(msg);
            if (same) *step = W2L__CDC_END, d->txn_open = 0;
            return W2L_OK;
        }
        if (!same) { /* the open transaction ended before this message */
            d->held = msg;
            *step = W2L__CDC_BEFORE;
            return W2L_OK;
        }
    }
    if (tx == TX_BEGIN || tx == TX_END || tx == TX_NONE) {
        w2l__json_free(msg);
        return W2L_OK;
    }
    d->replay = replay;
    w2l_rc rc;
    switch (d->fmt) {
    case W2L__CDC_CANAL: rc = canal_decode(d, msg, err); break;
    case W2L__CDC_DEBEZIUM: rc = dbz_decode(d, msg, err); break;
    default: rc = maxwell_decode(d, msg, err); break;
    }
    d->replay = 0;
    if (rc != W2L_OK || replay) {
        /* a failed message's events are dropped by the caller's w2l__cdc_clear() */
        w2l__json_free(msg);
        return rc;
    }
    W2L_TRY(keep_tree(d, msg, err));
    if (tx == TX_PART) {
        d->txn_open = 1;
        snprintf(d->txn_key, sizeof d->txn_key, "%s", key);
    } else {
        d->txn_open = 0;
        *step = W2L__CDC_END;
    }
    return W2L_OK;
}
