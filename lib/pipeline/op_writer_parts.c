/*
 * The writer operator's partitions (op_writer_int.h): the partition spec a table's SCHEMA
 * names, and the partitions of the current checkpoint. A change's partition comes from its
 * row image through the spec's transforms (Iceberg spec, "Partition Transforms"): the
 * after image for inserts, the before image for deletes, so a delete reaches the partition
 * its row lives in and an update that changes a partition column moves the row. Partitions
 * are found by their encoded values in a hash table; the last one used is tried first,
 * since consecutive rows mostly share one (a day of an event time).
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_writer_int.h"
#include "../model/model.h"


/* Field i of spec widened from type was (its source column int -> long or float -> double
 * in this checkpoint): the partitions made before hold values of the narrower type, and
 * files still to be written in them (position deletes into their data files) carry the
 * values as the field's type now. Their keys stay as they were, so rows of the wider type
 * make partitions of their own. */
static void widen_parts(tstate *t, const w2l__ice_spec *spec, size_t i, w2l_type was)
{
    w2l_type_id now = spec->fields[i].type.id;
    for (size_t k = 0; k < t->nparts; k++) {
        w2l_value *v = &t->parts[k]->vals[i];
        if (t->parts[k]->spec != spec || v->is_null) continue;
        if (was.id == W2L_TYPE_INT && now == W2L_TYPE_LONG) v->v.i64 = v->v.i32;
        else if (was.id == W2L_TYPE_FLOAT && now == W2L_TYPE_DOUBLE) v->v.f64 = v->v.f32;
    }
}

/* A source column missing from the schema is -1: an error only when a change needs it
 * (a SCHEMA element names its spec before the writer takes its schema). */
static w2l_rc bind(tstate *t, wspec *s, w2l_error *err)
{
    if (!s->spec || !s->spec->nfields || !t->schema) return W2L_OK;
    long *src = w2l__realloc(s->src, s->spec->nfields * sizeof *src);
    W2L_NOMEM_IF(!src, err);
    s->src = src;
    for (size_t i = 0; i < s->spec->nfields; i++) {
        w2l__ice_pfield *f = &s->spec->fields[i];
        src[i] = w2l_schema_index_of_id(t->schema, f->source_id);
        if (src[i] < 0) continue;
        w2l_type was = f->type;
        w2l_rc rc = w2l__ice_transform_result(
            f->transform, w2l_schema_field(t->schema, (size_t)src[i])->type, &f->type, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "table %s: partition field %s: ", t->fq, f->name);
            return rc;
        }
        if (was.id != f->type.id) widen_parts(t, s->spec, i, was);
    }
    return W2L_OK;
}

w2l_rc w2l__wr_bind_specs(tstate *t, w2l_error *err)
{
    W2L_TRY(bind(t, &t->spec, err));
    for (size_t i = 0; i < t->ndspecs; i++) W2L_TRY(bind(t, &t->dspecs[i], err));
    return W2L_OK;
}

static void spec_free(w2l__ice_spec *s)
{
    w2l__ice_spec_release(s);
    w2l__free(s);
}

/* Gives up s's spec: kept until the checkpoint ends when partitions name it. */
static w2l_rc retire(tstate *t, wspec *s, w2l_error *err)
{
    w2l__free(s->src);
    s->src = NULL;
    if (!s->spec) return W2L_OK;
    w2l__ice_spec *old = s->spec;
    s->spec = NULL;
    if (!t->nparts) {
        spec_free(old);
        return W2L_OK;
    }
    w2l__ice_spec **r = w2l__realloc(t->retired, (t->nretired + 1) * sizeof *r);
    if (!r) {
        spec_free(old);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    t->retired = r;
    t->retired[t->nretired++] = old;
    return W2L_OK;
}

static w2l_rc spec_from(tstate *t, const w2l__json *j, w2l__ice_spec **out, w2l_error *err)
{
    w2l__ice_spec *ns = w2l__calloc(1, sizeof *ns);
    W2L_NOMEM_IF(!ns, err);
    w2l_rc rc = w2l__ice_spec_from_json(j, ns, err);
    if (rc != W2L_OK) {
        w2l__free(ns);
        w2l__error_prefix(err, "table %s: SCHEMA's partition spec: ", t->fq);
        return rc;
    }
    *out = ns;
    return W2L_OK;
}

w2l_rc w2l__wr_set_specs(tstate *t, const w2l__json *payload, int *changed, w2l_error *err)
{
    *changed = 0;
    const w2l__json *js = w2l__json_get(payload, "spec");
    const w2l__json *jd = w2l__json_get(payload, "delete-specs");
    w2l__ice_spec *ns = NULL;
    if (js) W2L_TRY(spec_from(t, js, &ns, err));
    const w2l__ice_spec *cur = t->spec.spec;
    int same = ns ? cur && ns->spec_id == cur->spec_id && w2l__ice_spec_same(ns, cur)
                  : !cur || !cur->nfields;
    w2l_rc rc = W2L_OK;
    if (same) {
        if (ns) spec_free(ns);
    } else {
        rc = retire(t, &t->spec, err);
        if (rc == W2L_OK) t->spec.spec = ns;
        else if (ns) spec_free(ns);
        *changed = 1;
    }
    for (size_t i = 0; rc == W2L_OK && i < t->ndspecs; i++) rc = retire(t, &t->dspecs[i], err);
    w2l__free(t->dspecs);
    t->dspecs = NULL;
    t->ndspecs = 0;
    size_t nd = w2l__json_size(jd);
    if (rc == W2L_OK && nd) {
        t->dspecs = w2l__calloc(nd, sizeof *t->dspecs);
        if (!t->dspecs) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        for (const w2l__json *d = w2l__json_first(jd); rc == W2L_OK && d; d = w2l__json_next(d)) {
            rc = spec_from(t, d, &t->dspecs[t->ndspecs].spec, err);
            if (rc == W2L_OK) t->ndspecs++;
        }
    }
    return rc == W2L_OK ? w2l__wr_bind_specs(t, err) : rc;
}

void w2l__wr_parts_clear(tstate *t)
{
    w2l__wr_abort_all(t);
    for (size_t i = 0; i < t->nparts; i++) {
        w2l__free(t->parts[i]->rows);
        w2l__free(t->parts[i]->dels);
    }
    t->nparts = t->ntouched = t->nopen = 0;
    for (size_t i = 0; i < t->nretired; i++) spec_free(t->retired[i]);
    w2l__free(t->retired);
    t->retired = NULL;
    t->nretired = 0;
    if (t->pslots) memset(t->pslots, 0, t->pscap * sizeof *t->pslots);
    t->last = NULL;
    w2l__arena_release(&t->parena);
    w2l__arena_init(&t->parena, 1 << 12);
}

void w2l__wr_parts_free(tstate *t)
{
    w2l__wr_parts_clear(t);
    w2l__arena_release(&t->parena);
    w2l__free(t->parts);
    w2l__free(t->pslots);
    w2l__free(t->touched);
    w2l_error e;
    retire(t, &t->spec, &e); /* no partitions left: freed */
    for (size_t i = 0; i < t->ndspecs; i++) retire(t, &t->dspecs[i], &e);
    w2l__free(t->dspecs);
    t->dspecs = NULL;
    t->ndspecs = 0;
}

w2l_rc w2l__wr_part_key(w2l_buf *b, int32_t sid, const w2l__ice_spec *spec,
                        const w2l_value *vals, w2l_error *err)
{
    size_t n = spec ? spec->nfields : 0;
    b->len = 0;
    W2L_TRY(w2l_buf_append(b, &sid, 4, err));
    for (size_t i = 0; i < n; i++) {
        const w2l_value *v = &vals[i];
        if (v->is_null) {
            W2L_TRY(w2l_buf_append(b, "\xff", 1, err));
            continue;
        }
        size_t need = w2l__value_to_bytes(spec->fields[i].type, v, NULL, 0);
        W2L_TRY(w2l__buf_reserve(b, need + 5, err));
        unsigned char *o = b->data + b->len;
        uint32_t len = (uint32_t)need;
        o[0] = 0;
        memcpy(o + 1, &len, 4);
        w2l__value_to_bytes(spec->fields[i].type, v, o + 5, need);
        b->len += need + 5;
    }
    return W2L_OK;
}

/* Room for n partition values in w->pvals. */
static w2l_rc pvals_reserve(writer *w, size_t n, w2l_error *err)
{
    if (w->npvals >= n) return W2L_OK;
    w2l_value *v = w2l__realloc(w->pvals, n * sizeof *v);
    W2L_NOMEM_IF(!v, err);
    w->pvals = v;
    w->npvals = n;
    return W2L_OK;
}

/* The partition values of change c under s in w->pvals and their encoding in w->pkey: the
 * spec id (4 bytes; -1 unpartitioned), then per value a 0xff byte for NULL, else 0x00, a
 * 4-byte length and the single-value bytes. */
static w2l_rc values_of(writer *w, tstate *t, const wspec *s, const w2l_change *c,
                        w2l_error *err)
{
    size_t n = s->spec ? s->spec->nfields : 0;
    W2L_TRY(pvals_reserve(w, n, err));
    int32_t sid = s->spec ? s->spec->spec_id : -1;
    for (size_t i = 0; i < n; i++) {
        const w2l__ice_pfield *f = &s->spec->fields[i];
        long at = s->src[i];
        if (at < 0 && s == &t->spec)
            return w2l__fail(err, W2L_SCHEMA,
                             "table %s: partition field %s: its source column (field %d) is "
                             "not in schema %d",
                             t->fq, f->name, (int)f->source_id, (int)w2l_schema_id(t->schema));
        if (at < 0)
            return w2l__fail(err, W2L_SCHEMA,
                             "table %s: partition spec %d still holds data files, but the source "
                             "column of its field %s is gone: equality deletes cannot reach "
                             "them (compact the table with w2l maintain first)",
                             t->fq, (int)sid, f->name);
        const w2l_field *src = w2l_schema_field(t->schema, (size_t)at);
        if (!w2l__wr_present(c, at))
            return w2l__fail(err, W2L_SCHEMA,
                             "table %s: a %s image without column %s, which the table is "
                             "partitioned by (%s): the row's partition is unknown (a source "
                             "that sends whole row images is needed, e.g. binlog_row_image=FULL)",
                             t->fq,
                             c->op == W2L_OP_DELETE          ? "delete"
                             : c->op == W2L_OP_UPDATE_BEFORE ? "update-before"
                                                             : "row",
                             src->name, f->name);
        W2L_TRY(w2l__ice_transform_apply(f->transform, src->type, &c->row[at], &w->pvals[i], err));
    }
    return w2l__wr_part_key(&w->pkey, sid, s->spec, w->pvals, err);
}

static int same_key(const wpart *p, const w2l_buf *k)
{
    return p->klen == k->len && (k->len == 0 || memcmp(p->key, k->data, k->len) == 0);
}

static w2l_rc slots_grow(tstate *t, w2l_error *err)
{
    size_t ncap = t->pscap ? t->pscap * 2 : 64;
    uint32_t *ns = w2l__calloc(ncap, sizeof *ns);
    W2L_NOMEM_IF(!ns, err);
    for (size_t i = 0; i < t->nparts; i++) {
        size_t k = t->parts[i]->h & (ncap - 1);
        while (ns[k]) k = (k + 1) & (ncap - 1);
        ns[k] = (uint32_t)i + 1;
    }
    w2l__free(t->pslots);
    t->pslots = ns;
    t->pscap = ncap;
    return W2L_OK;
}

/* A new partition of spec s, of the values in w->pvals / w->pkey. */
static w2l_rc add_part(writer *w, tstate *t, const wspec *s, uint64_t h, wpart **out,
                       w2l_error *err)
{
    if (t->nparts == t->partcap) {
        size_t ncap = t->partcap ? t->partcap * 2 : 8;
        wpart **np = w2l__realloc(t->parts, ncap * sizeof *np);
        W2L_NOMEM_IF(!np, err);
        t->parts = np;
        t->partcap = ncap;
    }
    if ((t->nparts + 1) * 2 > t->pscap) W2L_TRY(slots_grow(t, err));
    size_t n = s->spec ? s->spec->nfields : 0;
    wpart *p = w2l__arena_alloc(&t->parena, sizeof *p);
    w2l_value *vals = w2l__arena_alloc(&t->parena, (n ? n : 1) * sizeof *vals);
    unsigned char *key = w2l__arena_alloc(&t->parena, w->pkey.len + 1);
    char *dir = n ? w2l__ice_partition_path(s->spec, w->pvals) : NULL;
    char *adir = n ? (dir ? w2l__arena_strndup(&t->parena, dir, strlen(dir)) : NULL)
                   : w2l__arena_strndup(&t->parena, "", 0);
    w2l__free(dir);
    W2L_NOMEM_IF(!p || !vals || !key || !adir, err);
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < n; i++) {
        vals[i] = w->pvals[i];
        w2l_type_id ty = s->spec->fields[i].type.id;
        if (!vals[i].is_null && (ty == W2L_TYPE_STRING || ty == W2L_TYPE_BINARY)) {
            size_t len = vals[i].v.bytes.len;
            char *b = w2l__arena_alloc(&t->parena, len + 1);
            W2L_NOMEM_IF(!b, err);
            if (len) memcpy(b, vals[i].v.bytes.ptr, len);
            b[len] = '\0';
            vals[i].v.bytes.ptr = b;
        }
    }
    if (w->pkey.len) memcpy(key, w->pkey.data, w->pkey.len);
    p->spec = s->spec;
    p->vals = vals;
    p->key = key;
    p->klen = w->pkey.len;
    p->h = h;
    p->dir = adir;
    p->idx = (uint32_t)t->nparts;
    t->parts[t->nparts++] = p;
    size_t k = h & (t->pscap - 1);
    while (t->pslots[k]) k = (k + 1) & (t->pscap - 1);
    t->pslots[k] = (uint32_t)t->nparts;
    *out = p;
    return W2L_OK;
}

w2l_rc w2l__wr_part_of(writer *w, tstate *t, const wspec *s, const w2l_change *c, wpart **out,
                       w2l_error *err)
{
    if ((!s->spec || !s->spec->nfields) && t->last && t->last->spec == s->spec) {
        *out = t->last; /* unpartitioned: its one partition */
        return W2L_OK;
    }
    W2L_TRY(values_of(w, t, s, c, err));
    if (t->last && same_key(t->last, &w->pkey)) {
        *out = t->last;
        return W2L_OK;
    }
    uint64_t h = w2l__hash64(w->pkey.data, w->pkey.len, 0x70617274);
    for (size_t k = t->pscap ? h & (t->pscap - 1) : 0; t->pscap && t->pslots[k];
         k = (k + 1) & (t->pscap - 1)) {
        wpart *p = t->parts[t->pslots[k] - 1];
        if (p->h == h && same_key(p, &w->pkey)) {
            *out = t->last = p;
            return W2L_OK;
        }
    }
    W2L_TRY(add_part(w, t, s, h, &t->last, err));
    *out = t->last;
    return W2L_OK;
}

/* The spec of id sid among the table's (its default, the older ones holding data, those
 * replaced in this checkpoint); -1 is "none", which a table partitioned since knows as its
 * older spec without fields. */
static const wspec *spec_by_id(tstate *t, int32_t sid, wspec *tmp)
{
    for (size_t i = 0; i <= t->ndspecs; i++) {
        const wspec *s = i ? &t->dspecs[i - 1] : &t->spec;
        int32_t id = s->spec ? s->spec->spec_id : -1;
        if (id == sid || (sid == -1 && s->spec && !s->spec->nfields)) return s;
    }
    for (size_t i = 0; i < t->nretired; i++)
        if (t->retired[i]->spec_id == sid) {
            tmp->spec = t->retired[i];
            tmp->src = NULL;
            return tmp;
        }
    return NULL;
}

w2l_rc w2l__wr_part_by_key(writer *w, tstate *t, const unsigned char *key, size_t klen,
                           wpart **out, w2l_error *err)
{
    uint64_t h = w2l__hash64(key, klen, 0x70617274);
    for (size_t k = t->pscap ? h & (t->pscap - 1) : 0; t->pscap && t->pslots[k];
         k = (k + 1) & (t->pscap - 1)) {
        wpart *p = t->parts[t->pslots[k] - 1];
        if (p->h == h && p->klen == klen && memcmp(p->key, key, klen) == 0) {
            *out = p;
            return W2L_OK;
        }
    }
    int32_t sid;
    if (klen < 4) return w2l__fail(err, W2L_CORRUPT, "table %s: a bad partition key", t->fq);
    memcpy(&sid, key, 4);
    wspec tmp;
    const wspec *s = spec_by_id(t, sid, &tmp);
    if (!s)
        return w2l__fail(err, W2L_SCHEMA,
                         "table %s: a data file of partition spec %d holds rows to delete, but "
                         "the table does not list that spec any more",
                         t->fq, (int)sid);
    size_t n = s->spec ? s->spec->nfields : 0;
    W2L_TRY(pvals_reserve(w, n, err));
    size_t at = 4;
    for (size_t i = 0; i < n; i++) {
        memset(&w->pvals[i], 0, sizeof w->pvals[i]);
        if (at < klen && key[at] == 0xff) {
            w->pvals[i].is_null = 1;
            at++;
            continue;
        }
        uint32_t len;
        if (at + 5 > klen)
            return w2l__fail(err, W2L_CORRUPT, "table %s: a bad partition key", t->fq);
        memcpy(&len, key + at + 1, 4);
        if (at + 5 + len > klen)
            return w2l__fail(err, W2L_CORRUPT, "table %s: a bad partition key", t->fq);
        /* a value kept from before its source column was widened (int -> long, float ->
         * double): the narrower bytes, read as such and widened */
        w2l_type ty = s->spec->fields[i].type;
        w2l_type narrow = ty;
        if (len == 4 && ty.id == W2L_TYPE_LONG) narrow.id = W2L_TYPE_INT;
        if (len == 4 && ty.id == W2L_TYPE_DOUBLE) narrow.id = W2L_TYPE_FLOAT;
        W2L_TRY(w2l__value_from_bytes(narrow, key + at + 5, len, &w->pvals[i], err));
        if (narrow.id == W2L_TYPE_INT && ty.id == W2L_TYPE_LONG)
            w->pvals[i].v.i64 = w->pvals[i].v.i32;
        if (narrow.id == W2L_TYPE_FLOAT && ty.id == W2L_TYPE_DOUBLE)
            w->pvals[i].v.f64 = w->pvals[i].v.f32;
        at += 5 + len;
    }
    w->pkey.len = 0;
    W2L_TRY(w2l_buf_append(&w->pkey, key, klen, err));
    return add_part(w, t, s, h, out, err);
}

void w2l__wr_parts_move(tstate *from, tstate *to)
{
    w2l__wr_parts_free(to);
    to->spec = from->spec, to->retired = from->retired, to->nretired = from->nretired;
    to->dspecs = from->dspecs, to->ndspecs = from->ndspecs;
    to->parts = from->parts, to->nparts = from->nparts, to->partcap = from->partcap;
    to->pslots = from->pslots, to->pscap = from->pscap;
    to->parena = from->parena;
    to->last = from->last;
    to->touched = from->touched, to->ntouched = from->ntouched, to->tcap = from->tcap;
    to->nopen = from->nopen, to->clock = from->clock;
    from->spec = (wspec){NULL, NULL}, from->retired = NULL, from->nretired = 0;
    from->dspecs = NULL, from->ndspecs = 0;
    from->parts = NULL, from->nparts = from->partcap = 0;
    from->pslots = NULL, from->pscap = 0;
    w2l__arena_init(&from->parena, 1 << 12);
    from->last = NULL;
    from->touched = NULL, from->ntouched = from->tcap = 0;
    from->nopen = 0;
}
