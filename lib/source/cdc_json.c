/*
 * CDC JSON decoders (cdc_json.h; w2l-design(7) sections 4 and 9): canal-json flat messages,
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
 *   maxwell   the `def` of the last table-create / table-alter (authoritative; types
 *             completed from the statement's `sql`, see cdc_maxwell.c), else inferred;
 *             key from `primary_key_columns` or the def's `primary-key`.
 * Authoritative shapes apply from their DDL on (section 9): a later row that omits a
 * column has it marked absent (w2l_change.present); a column the shape lacks is dropped
 * with one warning per table and shape. Inferred shapes follow each row: JSON integers are
 * long, integers beyond long decimal(38,0), other numbers double, strings string, booleans
 * boolean, objects/arrays string (their JSON text); a null takes the column's type from the
 * current shape, else string. A column once double stays double, one once decimal takes
 * later longs. A row whose columns or inferred types differ from the current shape gets a
 * new shape. Inference cannot see what the producer's schema knew, so it warns, once per
 * table and column (w2l__cdc_warn_once): a number a double cannot give back exactly
 * ("12345678901234567.891") names the column; debezium payloads whose values look like
 * the connector's encodings (base64 decimals, epoch times, ZonedTimestamp text, geometry
 * structs) name those columns in one warning, as they stay what they are (base64 text,
 * integers) without the JSON converter's schemas or a schema registry.
 *
 * Values (section 4; cdc_value.c has the rules): numbers are exact, from the JSON text as
 * written into the column's type (never through a double unless the column is float or
 * double); canal strings are parsed per column type (exact decimals in any notation,
 * DATETIME as timestamp, TIMESTAMP in source.timezone as UTC timestamptz, TIME within
 * 00:00..24:00 unless source.time-as-string, binary and GEOMETRY columns as ISO-8859-1
 * text turned back into bytes, ENUM indexes and SET bitmasks into member text with the
 * members the shape keeps, colaux); maxwell values are JSON natives (dates and times as
 * text, binary base64, SET as an array or text, JSON columns as JSON); debezium values
 * follow its encodings (cdc_debezium.c). All-zero MySQL dates ("0000-00-00") become NULL
 * in nullable columns.
 *
 * Memory: the JSON trees of the open transaction stay alive until w2l__cdc_clear(), so
 * string values point into them; decoded bytes (binary, base64, JSON text) and rows go to
 * chunks that are reused by the next transaction.
 */
#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_int.h"
#include "table_filter.h"

/* ---- chunks ---- */

void *w2l__cdc_alloc(chunks *cs, size_t n)
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

/* ---- tables ---- */

static void shape_release(shape *s)
{
    w2l_schema_unref(s->schema);
    w2l__free(s->cv);
    w2l__free(s->aux);
    w2l__free(s->auxmem);
    w2l__free(s->sig);
    w2l__free(s->canal_raw);
    w2l__free(s->qoff);
    w2l__free(s->qnames);
    memset(s, 0, sizeof *s);
}

static void table_free(table *t)
{
    if (!t) return;
    shape_release(&t->cur);
    for (size_t i = 0; i < t->npk; i++) w2l__free(t->pk[i]);
    w2l__free(t->pk);
    w2l__free(t->key);
    w2l_buf_release(&t->warned);
    w2l__free(t->mysql_types);
    w2l__free(t->dbz_types);
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
w2l_rc w2l__cdc_table_get(w2l__cdc *d, const char *db, const char *name, int create, table **out,
                        w2l_error *err)
{
    size_t dl = strlen(db), nl = strlen(name), kl = dl + nl + 2;
    uint64_t h = w2l__hash64(db, dl, 0x7ab1e);
    h = w2l__hash64(name, nl, h);
    *out = NULL;
    d->last = NULL;
    if (d->ntabs) {
        for (size_t i = h & (d->ntabs - 1); d->tabs[i]; i = (i + 1) & (d->ntabs - 1)) {
            table *t = d->tabs[i];
            if (t->hash == h && t->klen == kl && memcmp(t->key, db, dl) == 0 &&
                memcmp(t->key + dl + 1, name, nl) == 0) {
                *out = t;
                d->last = t;
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
    d->last = t;
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
    w2l__arena_init(&d->desc, 4096);
    return d;
}

void w2l__cdc_drop_events(w2l__cdc *d, size_t from)
{
    for (size_t i = from; i < d->nev; i++) {
        w2l__cdc_event *e = &d->ev[i];
        if (e->is_ddl) w2l_schema_unref((w2l_schema *)e->ddl.schema_after);
        else if (e->owns_schema) w2l_schema_unref((w2l_schema *)e->change.schema);
    }
    d->nev = from;
}

/* A change event borrows its table's current schema: no reference counted per row, an
 * atomic the writer's thread touches too. Before a shape goes (a new shape, a dropped
 * table), the pending events that borrow its schema take a reference of their own. */
static void shape_retire(w2l__cdc *d, shape *s)
{
    for (size_t i = 0; s->schema && i < d->nev; i++) {
        w2l__cdc_event *e = &d->ev[i];
        if (!e->is_ddl && !e->owns_schema && e->change.schema == s->schema) {
            w2l_schema_ref(s->schema);
            e->owns_schema = 1;
        }
    }
    shape_release(s);
}

void w2l__cdc_clear(w2l__cdc *d)
{
    w2l__cdc_drop_events(d, 0);
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
    w2l__free(d->fast.m);
    w2l__free(d->fast.rows);
    w2l_buf_release(&d->sig);
    w2l__arena_release(&d->desc);
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < W2L_ARRAY_LEN(d->known[i]); k++) w2l__free(d->known[i][k].text);
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

w2l_rc w2l__cdc_keep_tree(w2l__cdc *d, w2l__json *j, w2l_error *err)
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

w2l_rc w2l__cdc_col_add(w2l__cdc *d, const char *name, w2l_type type, unsigned cv, int required,
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
    memset(&c->aux, 0, sizeof c->aux);
    c->aux.scale = -1;
    return W2L_OK;
}

w2l_rc w2l__cdc_col_info(w2l__cdc *d, const w2l__mysql_type *info, w2l_type t, w2l_error *err)
{
    (void)err;
    assert(d->ncols > 0);
    colspec *c = &d->cols[d->ncols - 1];
    if ((info->cls == W2L_MYSQL_ENUM || info->cls == W2L_MYSQL_SET) && info->values) {
        c->aux.members = info->values; /* in d->desc until the shape copies them */
        c->aux.nmembers = (uint16_t)(info->nvalues > UINT16_MAX ? UINT16_MAX : info->nvalues);
    }
    if (info->cls == W2L_MYSQL_DECIMAL && t.id == W2L_TYPE_STRING)
        c->aux.scale = (int16_t)(info->scale < 0 ? 0 : info->scale);
    if (t.id == W2L_TYPE_BINARY && info->binary_pad > 0 && info->binary_pad <= UINT16_MAX)
        c->aux.pad = (uint16_t)info->binary_pad;
    return W2L_OK;
}

w2l_rc w2l__cdc_pk_add(w2l__cdc *d, const char *name, w2l_error *err)
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

void w2l__cdc_describe_reset(w2l__cdc *d)
{
    d->ncols = 0;
    d->npks = 0;
    w2l__arena_release(&d->desc);
}

long w2l__cdc_col_find(const w2l__cdc *d, const char *name)
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
        if (c->aux.scale >= 0 || c->aux.nmembers || c->aux.pad) {
            W2L_TRY(w2l_buf_append(&d->sig, &c->aux.scale, sizeof c->aux.scale, err));
            W2L_TRY(w2l_buf_append(&d->sig, &c->aux.pad, sizeof c->aux.pad, err));
            for (size_t m = 0; m < c->aux.nmembers; m++)
                W2L_TRY(
                    w2l_buf_append(&d->sig, c->aux.members[m], strlen(c->aux.members[m]) + 1, err));
            W2L_TRY(w2l_buf_append(&d->sig, "\x1f", 1, err));
        }
    }
    W2L_TRY(w2l_buf_append(&d->sig, authoritative ? "A" : "I", 1, err));
    for (size_t i = 0; i < d->npks; i++)
        W2L_TRY(w2l_buf_append(&d->sig, d->pks[i], strlen(d->pks[i]) + 1, err));
    return W2L_OK;
}

/* Copies the described columns' colaux (members included) into s: one block for the
 * members' pointers and text, so the shape does not depend on d->desc. */
static int shape_aux(w2l__cdc *d, shape *s)
{
    size_t bytes = 0, any = 0;
    for (size_t i = 0; i < d->ncols; i++) {
        const colaux *a = &d->cols[i].aux;
        any |= a->scale >= 0 || a->nmembers || a->pad;
        for (size_t m = 0; m < a->nmembers; m++)
            bytes += sizeof(char *) + strlen(a->members[m]) + 1;
    }
    if (!any) return 0;
    s->aux = w2l__calloc(d->ncols, sizeof *s->aux);
    s->auxmem = bytes ? w2l__malloc(bytes) : NULL;
    if (!s->aux || (bytes && !s->auxmem)) return -1;
    size_t nptr = 0;
    for (size_t i = 0; i < d->ncols; i++) nptr += d->cols[i].aux.nmembers;
    const char **ptrs = s->auxmem;
    char *text = bytes ? (char *)s->auxmem + nptr * sizeof(char *) : NULL;
    for (size_t i = 0; i < d->ncols; i++) {
        const colaux *a = &d->cols[i].aux;
        s->aux[i].scale = a->scale;
        s->aux[i].nmembers = a->nmembers;
        s->aux[i].pad = a->pad;
        s->aux[i].members = a->nmembers ? ptrs : NULL;
        for (size_t m = 0; m < a->nmembers; m++) {
            size_t n = strlen(a->members[m]) + 1;
            memcpy(text, a->members[m], n);
            *ptrs++ = text;
            text += n;
        }
    }
    return 0;
}

/* The columns' names as JSON text for the canal fast path: "name": each, one after the
 * other, then 8 zero bytes (compared a word at a time). None when a name holds a
 * character JSON escapes, or out of memory. */
static void shape_qnames(const w2l__cdc *d, shape *s)
{
    size_t total = 8;
    for (size_t i = 0; i < d->ncols; i++) {
        if (strpbrk(d->cols[i].name, "\"\\")) return;
        total += strlen(d->cols[i].name) + 3;
    }
    s->qoff = w2l__malloc((d->ncols + 1) * sizeof *s->qoff);
    s->qnames = w2l__calloc(1, total);
    if (!s->qoff || !s->qnames) {
        w2l__free(s->qoff), w2l__free(s->qnames);
        s->qoff = NULL, s->qnames = NULL;
        return;
    }
    size_t o = 0;
    for (size_t i = 0; i < d->ncols; i++) {
        size_t n = strlen(d->cols[i].name);
        s->qoff[i] = o;
        s->qnames[o] = '"';
        memcpy(s->qnames + o + 1, d->cols[i].name, n);
        s->qnames[o + n + 1] = '"';
        s->qnames[o + n + 2] = ':';
        o += n + 3;
    }
    s->qoff[d->ncols] = o;
}

/* Makes the described columns the table's current shape, reusing it when it describes
 * the same (the common case: one comparison per message). */
w2l_rc w2l__cdc_describe_commit(w2l__cdc *d, table *t, int authoritative, int presig,
                                w2l_error *err)
{
    /* key columns are required, whatever the format said */
    for (size_t i = 0; i < d->npks; i++) {
        long k = w2l__cdc_col_find(d, d->pks[i]);
        if (k < 0)
            return w2l__fail(err, W2L_SOURCE,
                             "%s: table %s.%s: primary key column %s is not a column", d->what,
                             t->db, t->name, d->pks[i]);
        d->cols[k].required = 1;
    }
    if (!presig) W2L_TRY(describe_sig(d, authoritative, err));
    if (t->cur.schema && t->cur.siglen == d->sig.len &&
        memcmp(t->cur.sig, d->sig.data, d->sig.len) == 0)
        return W2L_OK;
    shape s = {0};
    s.authoritative = authoritative;
    s.schema = w2l_schema_new(t->next_schema_id);
    s.cv = w2l__malloc(d->ncols ? d->ncols : 1);
    s.sig = w2l__malloc(d->sig.len ? d->sig.len : 1);
    int32_t *ids = d->npks ? w2l__malloc(d->npks * sizeof *ids) : NULL;
    if (!s.schema || !s.cv || !s.sig || (d->npks && !ids) || shape_aux(d, &s)) {
        w2l__free(ids);
        shape_release(&s);
        return w2l__fail(err, W2L_NOMEM, "out of memory describing table %s.%s", t->db, t->name);
    }
    memcpy(s.sig, d->sig.data, d->sig.len);
    s.siglen = d->sig.len;
    w2l_rc rc = W2L_OK;
    s.str_only = 1;
    for (size_t i = 0; i < d->ncols && rc == W2L_OK; i++) {
        s.cv[i] = d->cols[i].cv;
        s.str_only &= w2l__cdc_str_cv(s.cv[i]);
        rc = w2l_schema_add_field(s.schema, (int32_t)i + 1, d->cols[i].name, d->cols[i].type,
                                  d->cols[i].required, err);
    }
    for (size_t i = 0; i < d->npks && rc == W2L_OK; i++)
        ids[i] = (int32_t)w2l__cdc_col_find(d, d->pks[i]) + 1;
    if (rc == W2L_OK && d->npks) rc = w2l_schema_set_identifier(s.schema, ids, d->npks, err);
    w2l__free(ids);
    if (rc == W2L_OK && s.str_only) shape_qnames(d, &s);
    if (rc != W2L_OK) {
        shape_release(&s);
        if (rc == W2L_NOMEM) return rc;
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: %s", d->what, t->db, t->name, err->msg);
    }
    shape_retire(d, &t->cur);
    t->cur = s;
    t->next_schema_id++;
    return W2L_OK;
}

void w2l__cdc_table_forget(w2l__cdc *d, table *t)
{
    shape_retire(d, &t->cur);
    for (size_t i = 0; i < t->npk; i++) w2l__free(t->pk[i]);
    w2l__free(t->pk);
    t->pk = NULL;
    t->npk = 0;
    w2l__free(t->mysql_types);
    t->mysql_types = NULL;
    w2l__free(t->dbz_types);
    t->dbz_types = NULL;
}

/* Remembers the described key as the table's DDL key (debezium tableChanges). */
w2l_rc w2l__cdc_table_set_pk(table *t, const char *const *pks, size_t n, w2l_error *err)
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


/* ---- rows ---- */

/* One member (column name, value) of a row image into row. The value is a JSON node j, or
 * (j NULL) string text s of n bytes, NULL for null (w2l__cdc_image). i: the member's
 * position (members usually come in column order). */
static w2l_rc fill_member(w2l__cdc *d, table *t, const w2l_field *fields, size_t nf, size_t i,
                          const char *name, const w2l__json *j, const char *s, size_t n,
                          w2l_value *row, uint8_t *have, w2l_error *err)
{
    const w2l_field *f;
    long k = i < nf && (fields[i].name == name || /* the fast path found it so */
                        (fields[i].name[0] == name[0] && strcmp(fields[i].name, name) == 0))
                 ? (long)i
                 : w2l_schema_index_of_name(t->cur.schema, name);
    if (k < 0) {
        if (!t->cur.authoritative)
            return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: column %s is not described",
                             d->what, t->db, t->name, name);
        if (!t->cur.warned) {
            t->cur.warned = 1;
            w2l__log(W2L_LOG_WARN,
                     "%s: table %s.%s: column %s is not in the table's schema since its last "
                     "DDL; dropped",
                     d->what, t->db, t->name, name);
        }
        return W2L_OK;
    }
    f = &fields[k];
    have[k / 8] |= (uint8_t)(1u << (k % 8));
    if (j ? w2l__json_type(j) == W2L_JSON_NULL : !s) {
        row[k].is_null = 1;
        return W2L_OK;
    }
    vctx x = {d, t, f->name, t->cur.aux ? &t->cur.aux[k] : NULL};
    if (j) W2L_TRY(w2l__cdc_value(&x, f->type, t->cur.cv[k], f->required, j, &row[k], err));
    else W2L_TRY(w2l__cdc_str_value(&x, f->type, t->cur.cv[k], f->required, s, n, &row[k], err));
    if (x.aux && x.aux->pad && f->type.id == W2L_TYPE_BINARY && !row[k].is_null &&
        row[k].v.bytes.len < x.aux->pad) { /* BINARY(n): MySQL's 0x00 padding back */
        char *p = w2l__cdc_alloc(&d->mem, x.aux->pad);
        W2L_NOMEM_IF(!p, err);
        memcpy(p, row[k].v.bytes.ptr, row[k].v.bytes.len);
        memset(p + row[k].v.bytes.len, 0, x.aux->pad - row[k].v.bytes.len);
        row[k].v.bytes.ptr = p;
        row[k].v.bytes.len = x.aux->pad;
    }
    return W2L_OK;
}

/* Fills row (the values of the table's shape) from a row image. base: values already
 * there (an update's after image under its before overlay) are kept for columns the image
 * lacks. Columns the shape lacks: an error for non-authoritative shapes, dropped (one
 * warning) for authoritative ones. have: set for each column the image has. fresh: row and
 * have are new_row's, not yet initialised: the columns the fast loop below writes are
 * initialised by it, the others here (NULL, absent) before any other member is read. */
static w2l_rc fill_row(w2l__cdc *d, table *t, const w2l__cdc_image *img, w2l_value *row,
                       uint8_t *have, int fresh, w2l_error *err)
{
    size_t nf;
    const w2l_field *fields = w2l__schema_fields(t->cur.schema, &nf);
    size_t i = 0;
    if (!img->obj && img->n == nf) {
        /* the fast path's image of every column in order (it found each name so): the
         * common values at once, the rest as any member. Locals: row's stores could
         * otherwise be the image's or the shape's memory to the compiler. */
        const w2l__cdc_member *m = img->m;
        const uint8_t *cv = t->cur.cv;
        int32_t tz = d->opts.tz_offset_s;
        for (; i < nf && m[i].name == fields[i].name; i++) {
            if (!m[i].s) row[i].is_null = 1;
            else if (w2l__cdc_text_quick(fields[i].type, cv[i], tz, m[i].s, m[i].n, &row[i], err))
                W2L_TRY(fill_member(d, t, fields, nf, i, m[i].name, NULL, m[i].s, m[i].n, row,
                                    have, err));
        }
    }
    if (fresh) { /* columns [0, i) present, the others NULL until a member says otherwise */
        for (size_t k = i; k < nf; k++) row[k].is_null = 1;
        for (size_t b = 0; b < (nf + 7) / 8; b++)
            have[b] = b < i / 8 ? 0xff : b > i / 8 ? 0 : (uint8_t)((1u << (i % 8)) - 1);
    } else if (i) { /* columns [0, i) */
        memset(have, 0xff, i / 8);
        if (i % 8) have[i / 8] |= (uint8_t)((1u << (i % 8)) - 1);
    }
    if (!img->obj) {
        for (; i < img->n; i++)
            W2L_TRY(fill_member(d, t, fields, nf, i, img->m[i].name, NULL, img->m[i].s,
                                img->m[i].n, row, have, err));
        return W2L_OK;
    }
    if (w2l__json_type(img->obj) != W2L_JSON_OBJECT)
        return w2l__fail(err, W2L_SOURCE, "%s: table %s.%s: row image is not an object", d->what,
                         t->db, t->name);
    for (w2l__json *m = w2l__json_first(img->obj); m; m = w2l__json_next(m), i++)
        W2L_TRY(fill_member(d, t, fields, nf, i, w2l__json_key(m), m, NULL, 0, row, have, err));
    return W2L_OK;
}

/* A row of n values and its have bits, in one allocation, for fill_row (fresh) to
 * initialise. */
static w2l_rc new_row(w2l__cdc *d, size_t n, w2l_value **row, uint8_t **have, w2l_error *err)
{
    size_t nb = (n + 7) / 8;
    w2l_value *r = w2l__cdc_alloc(&d->mem, n * sizeof *r + (nb ? nb : 1));
    *row = r;
    *have = r ? (uint8_t *)(r + n) : NULL;
    W2L_NOMEM_IF(!r, err);
    return W2L_OK;
}

/* The event of one change of t's current shape: row, with the columns have marks present
 * (have is kept as the change's present bits when some are missing). */
static w2l_rc push_change(w2l__cdc *d, table *t, w2l_op op, w2l_value *row, uint8_t *have,
                          int64_t ts_ms, w2l_error *err)
{
    size_t n = w2l_schema_field_count(t->cur.schema);
    int all = 1;
    for (size_t i = 0; i < n / 8; i++) all &= have[i] == 0xff;
    if (n % 8) all &= (have[n / 8] | ((0xff << (n % 8)) & 0xff)) == 0xff;
    w2l__cdc_event *e = NULL;
    W2L_TRY(new_event(d, &e, err));
    e->change.db = t->db;
    e->change.table = t->name;
    e->change.schema = t->cur.schema; /* borrowed (shape_retire) */
    e->change.op = op;
    e->change.row = row;
    e->change.ncols = n;
    /* columns absent from the image (minimal row images, columns since added) */
    e->change.present = all ? NULL : have;
    e->change.ts_ms = ts_ms;
    d->nev++;
    return W2L_OK;
}

/* Whether t's rows are converted at all (quarantined: counted, dropped; replay: none). */
static int converts(w2l__cdc *d, table *t, uint64_t changes)
{
    if (t->skip && !d->replay) t->skipped += changes;
    return !t->skip && !d->replay;
}

w2l_rc w2l__cdc_add_image(w2l__cdc *d, table *t, w2l_op op, const w2l__cdc_image *image,
                          const w2l__cdc_image *overlay, int64_t ts_ms, w2l_error *err)
{
    if (!converts(d, t, 1)) return W2L_OK;
    w2l_value *row;
    uint8_t *have;
    W2L_TRY(new_row(d, w2l_schema_field_count(t->cur.schema), &row, &have, err));
    W2L_TRY(fill_row(d, t, image, row, have, 1, err));
    if (overlay) W2L_TRY(fill_row(d, t, overlay, row, have, 0, err));
    return push_change(d, t, op, row, have, ts_ms, err);
}

w2l_rc w2l__cdc_add_update_image(w2l__cdc *d, table *t, const w2l__cdc_image *image,
                                 const w2l__cdc_image *overlay, int64_t ts_ms, w2l_error *err)
{
    if (!converts(d, t, 2)) return W2L_OK;
    size_t n = w2l_schema_field_count(t->cur.schema), nb = (n + 7) / 8;
    w2l_value *after, *before;
    uint8_t *ahave, *bhave;
    W2L_TRY(new_row(d, n, &after, &ahave, err));
    W2L_TRY(new_row(d, n, &before, &bhave, err));
    W2L_TRY(fill_row(d, t, image, after, ahave, 1, err)); /* converted once, for both */
    memcpy(before, after, n * sizeof *before);
    memcpy(bhave, ahave, nb);
    if (overlay) W2L_TRY(fill_row(d, t, overlay, before, bhave, 0, err));
    W2L_TRY(push_change(d, t, W2L_OP_UPDATE_BEFORE, before, bhave, ts_ms, err));
    return push_change(d, t, W2L_OP_UPDATE_AFTER, after, ahave, ts_ms, err);
}

w2l_rc w2l__cdc_add_update(w2l__cdc *d, table *t, const w2l__json *image,
                           const w2l__json *overlay, int64_t ts_ms, w2l_error *err)
{
    w2l__cdc_image a = {image, NULL, 0}, b = {overlay, NULL, 0};
    return w2l__cdc_add_update_image(d, t, &a, overlay ? &b : NULL, ts_ms, err);
}

/* Appends one change of the table's current shape from the row object(s): image, then
 * overlay (the changed columns' old values, for a before image) when not NULL. */
w2l_rc w2l__cdc_add_change(w2l__cdc *d, table *t, w2l_op op, const w2l__json *image,
                           const w2l__json *overlay, int64_t ts_ms, w2l_error *err)
{
    w2l__cdc_image a = {image, NULL, 0}, b = {overlay, NULL, 0};
    return w2l__cdc_add_image(d, t, op, &a, overlay ? &b : NULL, ts_ms, err);
}

w2l_rc w2l__cdc_add_ddl(w2l__cdc *d, const char *db, const char *tname, const char *sql,
                      const w2l_schema *after, int64_t ts_ms, w2l_error *err)
{
    if (d->replay) return W2L_OK;
    w2l__cdc_event *e = NULL;
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

const char *w2l__cdc_str(const w2l__json *o, const char *key)
{
    return o ? w2l__json_str(w2l__json_get(o, key)) : NULL;
}

int64_t w2l__cdc_ms(const w2l__json *o, const char *key, int64_t scale)
{
    int64_t v = 0;
    if (o && w2l__json_int64(w2l__json_get(o, key), &v) == 0) return v * scale;
    return 0;
}

w2l_rc w2l__cdc_missing(w2l__cdc *d, const char *member, w2l_error *err)
{
    return w2l__fail(err, W2L_SOURCE, "%s: missing or invalid member \"%s\"", d->what, member);
}

int w2l__cdc_null(const w2l__json *j) { return !j || w2l__json_type(j) == W2L_JSON_NULL; }

/* Inferring a schema from an update's or delete's image would guess at a table the
 * stream never showed (no DDL, no insert): more likely a stream cut in the wrong place. */
w2l_rc w2l__cdc_never_described(w2l__cdc *d, const table *t, w2l_error *err)
{
    return w2l__fail(
        err, W2L_SOURCE,
        "%s: table %s.%s: update or delete of a table never described (no DDL or insert before it)",
        d->what, t->db, t->name);
}

/* Whether a value warning was logged for column col of t; marks it when mark. */
static int warned(table *t, const char *col, int mark)
{
    size_t n = strlen(col) + 1;
    for (size_t o = 0; o < t->warned.len;) {
        const char *w = (const char *)t->warned.data + o;
        size_t wn = strlen(w) + 1;
        if (wn == n && !memcmp(w, col, n)) return 1;
        o += wn;
    }
    /* out of memory: the warning may repeat, which is harmless */
    if (mark) (void)w2l_buf_append(&t->warned, col, n, NULL);
    return 0;
}

int w2l__cdc_warn_once(w2l__cdc *d, table *t, const char *col, const char *fmt, ...)
{
    if (d->replay || warned(t, col, 1)) return 0;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w2l__log(W2L_LOG_WARN, "%s: table %s.%s column %s: %s", d->what, t->db, t->name, col, msg);
    return 1;
}

/* A debezium value without a schema that is probably one of its encodings rather than
 * the column's own type: base64 (Decimal, bytes, Bits), epoch milli/micro/nanoseconds,
 * ISO timestamp text (ZonedTimestamp), geometry or VariableScaleDecimal structs. Epoch
 * days (DATE) cannot be told from plain integers. */
static int dbz_encoded(const w2l__json *m)
{
    int64_t iv;
    const char *s = w2l__json_str(m);
    switch (w2l__json_type(m)) {
    case W2L_JSON_NUMBER:
        return w2l__json_int64(m, &iv) == 0 &&
               (iv >= INT64_C(100000000000) || iv <= -INT64_C(100000000000));
    case W2L_JSON_OBJECT:
        return w2l__json_get(m, "wkb") || (w2l__json_get(m, "scale") && w2l__json_get(m, "value"));
    case W2L_JSON_STRING: {
        size_t n = strlen(s), pad = 0, i;
        if (n >= 20 && isdigit((unsigned char)s[0]) && s[4] == '-' && s[7] == '-' && s[10] == 'T')
            return 1;
        if (n < 4 || n % 4) return 0;
        while (pad < 2 && s[n - 1 - pad] == '=') pad++;
        /* base64 has no other characters; a word (letters only) or a numeric string
         * (digits only) is more likely itself */
        int digit = 0, alpha = 0, sym = pad > 0;
        for (i = 0; i < n - pad; i++) {
            unsigned char c = (unsigned char)s[i];
            if (isdigit(c)) digit = 1;
            else if (isalpha(c)) alpha = 1;
            else if (c == '+' || c == '/') sym = 1;
            else return 0;
        }
        return sym || (digit && alpha);
    }
    default: return 0;
    }
}

/* Infers an undescribed table's columns from a row object (see the file header). */
w2l_rc w2l__cdc_infer_cols(w2l__cdc *d, table *t, const w2l__json *obj, w2l_error *err)
{
    if (w2l__json_type(obj) != W2L_JSON_OBJECT) return w2l__cdc_missing(d, "data", err);
    char encoded[200];
    size_t nenc = 0;
    encoded[0] = '\0';
    for (w2l__json *m = w2l__json_first(obj); m; m = w2l__json_next(m)) {
        const char *name = w2l__json_key(m);
        if (w2l__cdc_col_find(d, name) >= 0) continue;
        w2l_type ty = {W2L_TYPE_STRING, 0, 0};
        unsigned cv = CV_PLAIN;
        int64_t iv;
        char nb[32];
        const char *num = NULL;
        long k = t->cur.schema ? w2l_schema_index_of_name(t->cur.schema, name) : -1;
        w2l__json_kind kind = w2l__json_type(m);
        if (kind == W2L_JSON_BOOL) ty.id = W2L_TYPE_BOOLEAN;
        else if (kind == W2L_JSON_NUMBER) {
            num = w2l__json_number_str(m, nb, sizeof nb);
            if (w2l__json_int64(m, &iv) == 0) ty.id = W2L_TYPE_LONG;
            else if (num && w2l__cdc_text_is_integer(num, W2L_DECIMAL_MAX_PRECISION))
                ty.id = W2L_TYPE_DECIMAL, ty.precision = W2L_DECIMAL_MAX_PRECISION, ty.scale = 0;
            else ty.id = W2L_TYPE_DOUBLE;
        } else if (kind == W2L_JSON_OBJECT || kind == W2L_JSON_ARRAY) cv = CV_JSON;
        if (k >= 0) {
            /* a null keeps the column's type; a column once double stays double, and one
             * once decimal (integers beyond long) takes later longs */
            w2l_type old = w2l_schema_field(t->cur.schema, (size_t)k)->type;
            if (kind == W2L_JSON_NULL ||
                (old.id == W2L_TYPE_DOUBLE &&
                 (ty.id == W2L_TYPE_LONG || ty.id == W2L_TYPE_DECIMAL)) ||
                (old.id == W2L_TYPE_DECIMAL && ty.id == W2L_TYPE_LONG)) {
                ty = old;
                cv = t->cur.cv[k];
            }
        }
        if (ty.id == W2L_TYPE_DOUBLE && num && !w2l__cdc_double_exact(num))
            w2l__cdc_warn_once(
                d, t, name,
                "the number %.60s is not exact in a double (the column is inferred as double from "
                "JSON values); the producer's schema is needed for exact values",
                num);
        if (d->fmt == W2L__CDC_DEBEZIUM && !d->replay && dbz_encoded(m) && !warned(t, name, 1)) {
            int w = snprintf(encoded + nenc, sizeof encoded - nenc, "%s%s", nenc ? ", " : "", name);
            if (w > 0) nenc = W2L_MIN(sizeof encoded - 1, nenc + (size_t)w);
        }
        W2L_TRY(w2l__cdc_col_add(d, name, ty, cv, 0, err));
    }
    if (nenc)
        w2l__log(
            W2L_LOG_WARN,
            "%s: table %s.%s: no schema in the messages and no tableChanges before them: "
            "columns %s are inferred from JSON values that look like Debezium encodings (base64 "
            "decimals or bits, epoch times, structs) and stay so; the JSON converter's schemas "
            "(value.converter.schemas.enable=true) or a schema registry are needed for exact types",
            d->what, t->db, t->name, encoded);
    return W2L_OK;
}


/* ---- transactions ---- */

static enum tx txn_of(const w2l__cdc *d, const w2l__json *msg, char *key, size_t size)
{
    key[0] = '\0';
    switch (d->fmt) {
    case W2L__CDC_CANAL: return TX_OWN;
    case W2L__CDC_MAXWELL: return w2l__cdc_maxwell_txn(msg, key, size);
    default: return w2l__cdc_dbz_txn(msg, key, size);
    }
}

/* ---- dispatch ---- */

/* Whether the include / exclude filter leaves out the table msg is about (a message that
 * names no single table is kept). Asked once per table: the answer stays on its entry. */
static w2l_rc filtered_out(w2l__cdc *d, const w2l__json *msg, int *out, w2l_error *err)
{
    *out = 0;
    if (!d->opts.filter) return W2L_OK;
    const char *db, *tn;
    if (d->fmt == W2L__CDC_DEBEZIUM) {
        const w2l__json *schema, *payload;
        w2l__cdc_dbz_parts(msg, &schema, &payload);
        const w2l__json *source = w2l__json_get(payload, "source");
        db = w2l__cdc_str(payload, "databaseName");
        if (!db) db = w2l__cdc_str(source, "db");
        tn = w2l__cdc_str(source, "table");
    } else {
        db = w2l__cdc_str(msg, "database");
        tn = w2l__cdc_str(msg, "table");
    }
    if (!db || !tn || !*tn || strchr(tn, ',')) return W2L_OK;
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, tn, 1, &t, err));
    if (!t->filtered) {
        t->filtered = 1;
        t->excluded = !w2l__tfilter_ok(d->opts.filter, db, tn);
    }
    *out = t->excluded;
    return W2L_OK;
}

w2l_rc w2l__cdc_decode(w2l__cdc *d, const char *text, size_t len, int replay, w2l__cdc_step *step,
                       w2l_error *err)
{
    *step = W2L__CDC_MORE;
    d->last = NULL;
    w2l__json *msg = d->held;
    d->held = NULL;
    w2l_rc frc;
    if (!msg && d->fmt == W2L__CDC_CANAL && !d->fast.off &&
        w2l__cdc_canal_fast(d, text, len, replay, &frc, err)) {
        if (frc == W2L_OK && !replay) *step = W2L__CDC_END; /* a canal message is one */
        return frc;
    }
    if (!msg) {
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) i++;
        if (i == len) return W2L_OK; /* blank line */
        if (len - i >= 4 && !memcmp(text + i, "null", 4)) {
            size_t k = i + 4;
            while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) k++;
            if (k == len) return W2L_OK; /* tombstone */
        }
        /* canal: the table's types and key, the same in nearly every message, are kept as
         * text and compared as such (cdc_canal.c) */
        static const char *const canal_raw[] = {"mysqlType", "pkNames", NULL};
        const w2l__json_rawspec spec = {canal_raw, w2l__cdc_canal_known, d};
        w2l_rc rc = w2l__json_parse_raw(text, len, d->fmt == W2L__CDC_CANAL ? &spec : NULL, &msg,
                                        err);
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
    int excluded;
    size_t nev = d->nev; /* a message that fails adds none (cdc_json.h) */
    w2l_rc rc = filtered_out(d, msg, &excluded, err);
    if (rc != W2L_OK) {
        w2l__json_free(msg);
        return rc;
    }
    d->replay = replay;
    if (excluded) { /* consumed unread: it only takes part in its transaction */
    } else if (d->fmt == W2L__CDC_CANAL) {
        rc = w2l__cdc_canal_decode(d, msg, err);
    } else if (d->fmt == W2L__CDC_DEBEZIUM) {
        rc = w2l__cdc_dbz_decode(d, msg, err);
    } else {
        rc = w2l__cdc_maxwell_decode(d, msg, err);
    }
    d->replay = 0;
    if (rc != W2L_OK) w2l__cdc_drop_events(d, nev); /* they point into msg */
    if (rc != W2L_OK || replay) {
        w2l__json_free(msg);
        return rc;
    }
    rc = w2l__cdc_keep_tree(d, msg, err); /* frees msg on failure */
    if (rc != W2L_OK) {
        w2l__cdc_drop_events(d, nev);
        return rc;
    }
    if (tx == TX_PART) {
        d->txn_open = 1;
        snprintf(d->txn_key, sizeof d->txn_key, "%s", key);
    } else {
        d->txn_open = 0;
        *step = W2L__CDC_END;
    }
    return W2L_OK;
}

/* ---- quarantine (cdc_json.h) ---- */

int w2l__cdc_failed_table(const w2l__cdc *d, const char **db, const char **tn)
{
    if (!d->last) return 0;
    *db = d->last->db;
    *tn = d->last->name;
    return 1;
}

w2l_rc w2l__cdc_skip_table(w2l__cdc *d, const char *db, const char *name, w2l_error *err)
{
    table *t;
    W2L_TRY(w2l__cdc_table_get(d, db, name, 1, &t, err));
    t->skip = 1;
    return W2L_OK;
}

int w2l__cdc_table_skipped(w2l__cdc *d, const char *db, const char *name)
{
    table *t = NULL;
    w2l__cdc_table_get(d, db, name, 0, &t, NULL);
    return t && t->skip;
}

void w2l__cdc_unskip_table(w2l__cdc *d, const char *db, const char *name)
{
    table *t = NULL;
    w2l__cdc_table_get(d, db, name, 0, &t, NULL);
    if (t) t->skip = 0, t->skipped = 0;
}

uint64_t w2l__cdc_take_skipped(w2l__cdc *d, const char *db, const char *name)
{
    table *t = NULL;
    w2l__cdc_table_get(d, db, name, 0, &t, NULL);
    if (!t) return 0;
    uint64_t n = t->skipped;
    t->skipped = 0;
    return n;
}
