/*
 * Manifests: Avro files of manifest entries, each pointing to one data or delete file with
 * its partition tuple and column statistics (Iceberg spec: "Manifests", "Manifest Entry
 * Fields", "Data File Fields", "Sequence Number Inheritance", "Partition summaries" of
 * "Manifest Lists"). Format version 2: content 0 (data) and 1 (deletes) manifests, entries
 * ADDED / EXISTING / DELETED; ADDED entries written by this library carry their snapshot id
 * but null sequence numbers, which readers inherit from the manifest list, so a manifest
 * written before its commit stays valid whichever sequence number the commit gets.
 * Header keys: schema, schema-id, partition-spec, partition-spec-id, format-version, content.
 * Format version 3 (the table's): data_file adds first_row_id (row lineage: null on ADDED
 * entries, inherited on read from the manifest list's first_row_id plus the record counts
 * of the manifest's earlier files that inherit too, and written out when an entry is
 * rewritten), and a deletion vector's content_offset and content_size_in_bytes.
 */
#include <stdio.h>

#include <avro.h>

#include "avro_int.h"
#include "../model/model.h"

w2l_rc w2l__ice_data_file_from_stats(w2l__arena *a, int content, const char *path,
                                     const w2l__file_stats *st, const int32_t *eq_ids,
                                     size_t neq, w2l__ice_data_file *df, w2l_error *err)
{
    memset(df, 0, sizeof *df);
    df->content = content;
    df->spec_id = -1;
    df->path = path;
    df->format = "PARQUET";
    df->record_count = (int64_t)st->record_count;
    df->file_size = (int64_t)st->file_size;
    df->ncols = st->ncols;
    df->cols = w2l__arena_alloc(a, (st->ncols ? st->ncols : 1) * sizeof *df->cols);
    W2L_NOMEM_IF(!df->cols, err);
    for (size_t i = 0; i < st->ncols; i++) {
        const w2l__col_stats *c = &st->cols[i];
        w2l__ice_colstat *o = &df->cols[i];
        memset(o, 0, sizeof *o);
        o->field_id = c->field_id;
        o->has_size = o->has_values = o->has_nulls = 1;
        o->column_size = (int64_t)c->column_size;
        o->value_count = (int64_t)c->value_count;
        o->null_count = (int64_t)c->null_count;
        o->has_nans = c->has_nan_count ? 1 : 0;
        o->nan_count = (int64_t)c->nan_count;
        if (c->has_bounds) {
            unsigned char *lo = w2l__arena_alloc(a, c->lower_len + 1),
                          *hi = w2l__arena_alloc(a, c->upper_len + 1);
            W2L_NOMEM_IF(!lo || !hi, err);
            memcpy(lo, c->lower, c->lower_len);
            memcpy(hi, c->upper, c->upper_len);
            o->has_lower = o->has_upper = 1;
            o->lower = (w2l__ice_bytes){lo, c->lower_len};
            o->upper = (w2l__ice_bytes){hi, c->upper_len};
        }
    }
    df->nsplits = st->nsplits;
    df->split_offsets = w2l__arena_alloc(a, (st->nsplits ? st->nsplits : 1) * sizeof(int64_t));
    W2L_NOMEM_IF(!df->split_offsets, err);
    for (size_t i = 0; i < st->nsplits; i++) df->split_offsets[i] = (int64_t)st->split_offsets[i];
    if (content == W2L_ICE_EQ_DELETES) {
        df->neq = neq;
        df->equality_ids = w2l__arena_alloc(a, (neq ? neq : 1) * sizeof *df->equality_ids);
        W2L_NOMEM_IF(!df->equality_ids, err);
        if (neq) memcpy(df->equality_ids, eq_ids, neq * sizeof *eq_ids);
    }
    return W2L_OK;
}

/* ---- writing ---- */

#define AV(call)                                                                           \
    do {                                                                                   \
        if ((call) != 0) return w2l__fail(err, W2L_ERROR, "avro: %s", avro_strerror());    \
    } while (0)

static w2l_rc set_str(avro_value_t *v, const char *s, size_t n, w2l_error *err)
{
    char small[256];
    char *p = n < sizeof small ? small : w2l__malloc(n + 1);
    W2L_NOMEM_IF(!p, err);
    memcpy(p, s, n);
    p[n] = '\0';
    int rc = avro_value_set_string_len(v, p, n + 1);
    if (p != small) w2l__free(p);
    if (rc != 0) return w2l__fail(err, W2L_ERROR, "avro: %s", avro_strerror());
    return W2L_OK;
}

static w2l_rc set_opt_long(avro_value_t *rec, const char *name, int64_t v, w2l_error *err)
{
    avro_value_t f;
    if (v < 0) {
        w2l__avro_set_null(rec, name);
        return W2L_OK;
    }
    AV(w2l__avro_set(rec, name, &f));
    AV(avro_value_set_long(&f, v));
    return W2L_OK;
}

static w2l_rc set_pvalue(avro_value_t *f, w2l_type t, const w2l_value *v, w2l_error *err)
{
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: AV(avro_value_set_boolean(f, v->v.i32 != 0)); break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: AV(avro_value_set_int(f, v->v.i32)); break;
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ: AV(avro_value_set_long(f, v->v.i64)); break;
    case W2L_TYPE_FLOAT: AV(avro_value_set_float(f, v->v.f32)); break;
    case W2L_TYPE_DOUBLE: AV(avro_value_set_double(f, v->v.f64)); break;
    case W2L_TYPE_STRING: return set_str(f, v->v.bytes.ptr, v->v.bytes.len, err);
    case W2L_TYPE_BINARY:
        AV(avro_value_set_bytes(f, (void *)v->v.bytes.ptr, v->v.bytes.len));
        break;
    case W2L_TYPE_DECIMAL: {
        unsigned char b[16];
        size_t n = w2l__decimal_fixed_len(t.precision);
        if (w2l__decimal_to_be_fixed(v->v.dec, b, n) != 0)
            return w2l__fail(err, W2L_SCHEMA, "decimal partition value out of range");
        AV(avro_value_set_fixed(f, b, n));
        break;
    }
    }
    return W2L_OK;
}

enum { M_SIZE, M_VALUES, M_NULLS, M_NANS, M_LOWER, M_UPPER };
static const char *const map_names[] = {"column_sizes", "value_counts", "null_value_counts",
                                        "nan_value_counts", "lower_bounds", "upper_bounds"};

static int col_has(const w2l__ice_colstat *c, int m)
{
    switch (m) {
    case M_SIZE: return c->has_size;
    case M_VALUES: return c->has_values;
    case M_NULLS: return c->has_nulls;
    case M_NANS: return c->has_nans;
    case M_LOWER: return c->has_lower;
    default: return c->has_upper;
    }
}

static w2l_rc set_maps(avro_value_t *df, const w2l__ice_data_file *f, w2l_error *err)
{
    for (int m = 0; m < 6; m++) {
        size_t n = 0;
        for (size_t i = 0; i < f->ncols; i++) n += col_has(&f->cols[i], m) ? 1 : 0;
        if (!n) {
            w2l__avro_set_null(df, map_names[m]);
            continue;
        }
        avro_value_t arr, el, k, v;
        AV(w2l__avro_set(df, map_names[m], &arr));
        for (size_t i = 0; i < f->ncols; i++) {
            const w2l__ice_colstat *c = &f->cols[i];
            if (!col_has(c, m)) continue;
            AV(avro_value_append(&arr, &el, NULL));
            AV(avro_value_get_by_index(&el, 0, &k, NULL));
            AV(avro_value_set_int(&k, c->field_id));
            AV(avro_value_get_by_index(&el, 1, &v, NULL));
            switch (m) {
            case M_SIZE: AV(avro_value_set_long(&v, c->column_size)); break;
            case M_VALUES: AV(avro_value_set_long(&v, c->value_count)); break;
            case M_NULLS: AV(avro_value_set_long(&v, c->null_count)); break;
            case M_NANS: AV(avro_value_set_long(&v, c->nan_count)); break;
            case M_LOWER: AV(avro_value_set_bytes(&v, (void *)c->lower.ptr, c->lower.len)); break;
            default: AV(avro_value_set_bytes(&v, (void *)c->upper.ptr, c->upper.len)); break;
            }
        }
    }
    return W2L_OK;
}

static w2l_rc fill_entry(avro_value_t *rec, const w2l__ice_spec *spec, const w2l__ice_entry *e,
                         int v3, w2l_error *err)
{
    avro_value_t f, df, sub;
    const w2l__ice_data_file *d = &e->file;
    AV(w2l__avro_set(rec, "status", &f));
    AV(avro_value_set_int(&f, e->status));
    W2L_TRY(set_opt_long(rec, "snapshot_id", e->snapshot_id, err));
    W2L_TRY(set_opt_long(rec, "sequence_number", e->seq, err));
    W2L_TRY(set_opt_long(rec, "file_sequence_number", e->file_seq, err));
    AV(w2l__avro_set(rec, "data_file", &df));
    AV(w2l__avro_set(&df, "content", &f));
    AV(avro_value_set_int(&f, d->content));
    AV(w2l__avro_set(&df, "file_path", &f));
    W2L_TRY(set_str(&f, d->path, strlen(d->path), err));
    AV(w2l__avro_set(&df, "file_format", &f));
    W2L_TRY(set_str(&f, d->format ? d->format : "PARQUET",
                    strlen(d->format ? d->format : "PARQUET"), err));
    AV(w2l__avro_set(&df, "partition", &sub));
    if (d->npart != spec->nfields)
        return w2l__fail(err, W2L_MISUSE, "data file %s: %zu partition values for %zu spec fields",
                         d->path, d->npart, spec->nfields);
    for (size_t i = 0; i < spec->nfields; i++) {
        avro_value_t u, b;
        AV(avro_value_get_by_index(&sub, i, &u, NULL));
        if (d->partition[i].is_null) {
            AV(avro_value_set_branch(&u, 0, &b));
        } else {
            AV(avro_value_set_branch(&u, 1, &b));
            W2L_TRY(set_pvalue(&b, spec->fields[i].type, &d->partition[i], err));
        }
    }
    AV(w2l__avro_set(&df, "record_count", &f));
    AV(avro_value_set_long(&f, d->record_count));
    AV(w2l__avro_set(&df, "file_size_in_bytes", &f));
    AV(avro_value_set_long(&f, d->file_size));
    W2L_TRY(set_maps(&df, d, err));
    if (d->key_metadata.ptr) {
        AV(w2l__avro_set(&df, "key_metadata", &f));
        AV(avro_value_set_bytes(&f, (void *)d->key_metadata.ptr, d->key_metadata.len));
    } else {
        w2l__avro_set_null(&df, "key_metadata");
    }
    if (d->nsplits) {
        AV(w2l__avro_set(&df, "split_offsets", &f));
        for (size_t i = 0; i < d->nsplits; i++) {
            AV(avro_value_append(&f, &sub, NULL));
            AV(avro_value_set_long(&sub, d->split_offsets[i]));
        }
    } else {
        w2l__avro_set_null(&df, "split_offsets");
    }
    if (d->content == W2L_ICE_EQ_DELETES) {
        AV(w2l__avro_set(&df, "equality_ids", &f));
        for (size_t i = 0; i < d->neq; i++) {
            AV(avro_value_append(&f, &sub, NULL));
            AV(avro_value_set_int(&sub, d->equality_ids[i]));
        }
    } else {
        w2l__avro_set_null(&df, "equality_ids");
    }
    if (d->has_sort_order_id) {
        AV(w2l__avro_set(&df, "sort_order_id", &f));
        AV(avro_value_set_int(&f, d->sort_order_id));
    } else {
        w2l__avro_set_null(&df, "sort_order_id");
    }
    if (d->referenced_data_file) {
        AV(w2l__avro_set(&df, "referenced_data_file", &f));
        W2L_TRY(set_str(&f, d->referenced_data_file, strlen(d->referenced_data_file), err));
    } else {
        w2l__avro_set_null(&df, "referenced_data_file");
    }
    if (!v3) return W2L_OK;
    const struct { const char *name; int has; int64_t v; } opt[] = {
        {"first_row_id", d->content == W2L_ICE_DATA && d->has_first_row_id, d->first_row_id},
        {"content_offset", d->has_content_range, d->content_offset},
        {"content_size_in_bytes", d->has_content_range, d->content_size}};
    for (size_t i = 0; i < W2L_ARRAY_LEN(opt); i++) {
        if (!opt[i].has) {
            w2l__avro_set_null(&df, opt[i].name);
            continue;
        }
        AV(w2l__avro_set(&df, opt[i].name, &f));
        AV(avro_value_set_long(&f, opt[i].v));
    }
    return W2L_OK;
}

static int is_float(w2l_type t) { return t.id == W2L_TYPE_FLOAT || t.id == W2L_TYPE_DOUBLE; }
static int is_nan(w2l_type t, const w2l_value *v)
{
    return t.id == W2L_TYPE_FLOAT ? v->v.f32 != v->v.f32 : v->v.f64 != v->v.f64;
}

/* Partition summaries of entries: null/NaN flags and min/max per spec field. */
static w2l_rc summarize(const w2l__ice_spec *spec, const w2l__ice_entry *entries, size_t n,
                        w2l__arena *a, w2l__ice_manifest *out, w2l_error *err)
{
    out->nparts = spec->nfields;
    out->parts = w2l__arena_alloc(a, (spec->nfields ? spec->nfields : 1) * sizeof *out->parts);
    W2L_NOMEM_IF(!out->parts, err);
    for (size_t k = 0; k < spec->nfields; k++) {
        w2l_type t = spec->fields[k].type;
        w2l__ice_part_summary *ps = &out->parts[k];
        memset(ps, 0, sizeof *ps);
        ps->has_contains_nan = is_float(t);
        const w2l_value *lo = NULL, *hi = NULL;
        for (size_t i = 0; i < n; i++) {
            const w2l_value *v = &entries[i].file.partition[k];
            if (v->is_null) {
                ps->contains_null = 1;
                continue;
            }
            if (is_float(t) && is_nan(t, v)) {
                ps->contains_nan = 1;
                continue;
            }
            if (!lo || w2l_value_compare(t, v, lo) < 0) lo = v;
            if (!hi || w2l_value_compare(t, v, hi) > 0) hi = v;
        }
        const w2l_value *b[2] = {lo, hi};
        for (int j = 0; j < 2; j++) {
            if (!b[j]) continue;
            size_t cap =
                (t.id == W2L_TYPE_STRING || t.id == W2L_TYPE_BINARY) ? b[j]->v.bytes.len + 1 : 16;
            unsigned char *p = w2l__arena_alloc(a, cap);
            W2L_NOMEM_IF(!p, err);
            size_t len = w2l__value_to_bytes(t, b[j], p, cap);
            if (j == 0) ps->lower = (w2l__ice_bytes){p, len};
            else ps->upper = (w2l__ice_bytes){p, len};
        }
    }
    return W2L_OK;
}

w2l_rc w2l__ice_manifest_write(w2l_fileio *io, w2l__file_batch *pend, const char *path,
                               const w2l__ice_meta *meta,
                               const w2l__ice_spec *spec, int content, int64_t snapshot_id,
                               const w2l__ice_entry *entries, size_t n, w2l__arena *a,
                               w2l__ice_manifest *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    out->spec_id = spec->spec_id;
    out->content = content;
    out->seq = out->min_seq = -1;
    out->added_snapshot_id = snapshot_id;
    for (size_t i = 0; i < n; i++) {
        const w2l__ice_entry *e = &entries[i];
        int is_delete = e->file.content != W2L_ICE_DATA;
        if (is_delete != (content == W2L_ICE_MANIFEST_DELETES))
            return w2l__fail(err, W2L_MISUSE, "manifest %s: file %s of content %d in a %s manifest",
                             path, e->file.path, e->file.content, content ? "delete" : "data");
        if (e->status != W2L_ICE_ADDED && (e->seq < 0 || e->file_seq < 0))
            return w2l__fail(err, W2L_MISUSE,
                             "manifest %s: EXISTING/DELETED entry without sequence numbers", path);
        switch (e->status) {
        case W2L_ICE_ADDED: out->added_files++, out->added_rows += e->file.record_count; break;
        case W2L_ICE_EXISTING:
            out->existing_files++, out->existing_rows += e->file.record_count;
            break;
        default: out->deleted_files++, out->deleted_rows += e->file.record_count; break;
        }
        if (e->status != W2L_ICE_DELETED && e->seq >= 0 &&
            (out->min_seq < 0 || e->seq < out->min_seq))
            out->min_seq = e->seq;
    }
    W2L_TRY(summarize(spec, entries, n, a, out, err));

    /* header metadata */
    const w2l__ice_schema_entry *se = w2l__ice_meta_schema(meta, meta->current_schema_id);
    char *schema_text = se ? w2l__json_print(se->json, 0) : NULL;
    w2l__json *pf = w2l__json_new_array();
    for (size_t i = 0; pf && i < spec->nfields; i++) {
        const w2l__ice_pfield *f = &spec->fields[i];
        char tb[48];
        w2l__ice_transform_format(f->transform, tb, sizeof tb);
        w2l__json *o = w2l__json_new_object();
        if (w2l__json_append(pf, o) || w2l__json_add(o, "name", w2l__json_new_string(f->name)) ||
            w2l__json_add(o, "transform", w2l__json_new_string(tb)) ||
            w2l__json_add(o, "source-id", w2l__json_new_int64(f->source_id)) ||
            w2l__json_add(o, "field-id", w2l__json_new_int64(f->field_id))) {
            w2l__json_free(pf);
            pf = NULL;
        }
    }
    char *spec_text = pf ? w2l__json_print(pf, 0) : NULL;
    w2l__json_free(pf);
    const int v3 = meta->format_version >= 3;
    char *avro_schema = w2l__ice_avro_manifest_schema(spec, meta->format_version);
    char sid[24], psid[24];
    snprintf(sid, sizeof sid, "%d", (int)meta->current_schema_id);
    snprintf(psid, sizeof psid, "%d", (int)spec->spec_id);
    w2l_rc rc = W2L_OK;
    if (!schema_text || !spec_text || !avro_schema)
        rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    w2l__avro_out o;
    memset(&o, 0, sizeof o);
    if (rc == W2L_OK) {
        const w2l__ice_kv kv[] = {{"schema", schema_text}, {"schema-id", sid},
                                  {"partition-spec", spec_text}, {"partition-spec-id", psid},
                                  {"format-version", v3 ? "3" : "2"},
                                  {"content", content ? "deletes" : "data"}};
        rc = w2l__avro_out_begin(&o, avro_schema, kv, W2L_ARRAY_LEN(kv), err);
    }
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        rc = fill_entry(w2l__avro_out_record(&o), spec, &entries[i], v3, err);
        if (rc == W2L_OK) rc = w2l__avro_out_append(&o, err);
    }
    if (rc == W2L_OK) rc = w2l__avro_out_finish(&o, io, pend, path, &out->length, err);
    w2l__avro_out_free(&o);
    w2l__free(schema_text);
    w2l__free(spec_text);
    w2l__free(avro_schema);
    if (rc != W2L_OK) w2l__error_prefix(err, "manifest: ");
    return rc;
}

/* ---- reading ---- */

static const char *arena_str(w2l__arena *a, avro_value_t *v)
{
    const char *s = NULL;
    size_t n = 0;
    if (avro_value_get_string(v, &s, &n) != 0 || !s) return w2l__arena_strndup(a, "", 0);
    return w2l__arena_strndup(a, s, n ? n - 1 : 0);
}

static int arena_bytes(w2l__arena *a, avro_value_t *v, w2l__ice_bytes *out)
{
    const void *p = NULL;
    size_t n = 0;
    if (avro_value_get_type(v) == AVRO_FIXED) avro_value_get_fixed(v, &p, &n);
    else avro_value_get_bytes(v, &p, &n);
    unsigned char *c = w2l__arena_alloc(a, n + 1);
    if (!c) return -1;
    if (n) memcpy(c, p, n);
    c[n] = 0;
    *out = (w2l__ice_bytes){c, n};
    return 0;
}

typedef struct colvec {
    w2l__ice_colstat *v;
    size_t n, cap;
} colvec;

static w2l__ice_colstat *col_for(colvec *cv, int32_t id)
{
    for (size_t i = 0; i < cv->n; i++)
        if (cv->v[i].field_id == id) return &cv->v[i];
    if (cv->n == cv->cap) {
        size_t cap = cv->cap ? cv->cap * 2 : 16;
        w2l__ice_colstat *nv = w2l__realloc(cv->v, cap * sizeof *nv);
        if (!nv) return NULL;
        cv->v = nv;
        cv->cap = cap;
    }
    w2l__ice_colstat *c = &cv->v[cv->n++];
    memset(c, 0, sizeof *c);
    c->field_id = id;
    return c;
}

static w2l_rc read_maps(avro_value_t *df, w2l__arena *a, colvec *cv, w2l__ice_data_file *d,
                        w2l_error *err)
{
    cv->n = 0;
    for (int m = 0; m < 6; m++) {
        avro_value_t arr;
        if (!w2l__avro_get(df, map_names[m], &arr)) continue;
        size_t n = 0;
        avro_value_get_size(&arr, &n);
        for (size_t i = 0; i < n; i++) {
            avro_value_t el, k, v;
            if (avro_value_get_by_index(&arr, i, &el, NULL) != 0 ||
                avro_value_get_by_name(&el, "key", &k, NULL) != 0 ||
                avro_value_get_by_name(&el, "value", &v, NULL) != 0)
                return w2l__fail(err, W2L_CORRUPT, "%s is not a key/value array", map_names[m]);
            w2l__ice_colstat *c = col_for(cv, (int32_t)w2l__avro_int(&k));
            W2L_NOMEM_IF(!c, err);
            switch (m) {
            case M_SIZE: c->has_size = 1, c->column_size = w2l__avro_int(&v); break;
            case M_VALUES: c->has_values = 1, c->value_count = w2l__avro_int(&v); break;
            case M_NULLS: c->has_nulls = 1, c->null_count = w2l__avro_int(&v); break;
            case M_NANS: c->has_nans = 1, c->nan_count = w2l__avro_int(&v); break;
            case M_LOWER:
                c->has_lower = 1;
                W2L_NOMEM_IF(arena_bytes(a, &v, &c->lower) != 0, err);
                break;
            default:
                c->has_upper = 1;
                W2L_NOMEM_IF(arena_bytes(a, &v, &c->upper) != 0, err);
                break;
            }
        }
    }
    d->ncols = cv->n;
    d->cols = w2l__arena_alloc(a, (cv->n ? cv->n : 1) * sizeof *d->cols);
    W2L_NOMEM_IF(!d->cols, err);
    if (cv->n) memcpy(d->cols, cv->v, cv->n * sizeof *d->cols);
    return W2L_OK;
}

static w2l_rc read_pvalue(avro_value_t *v, const w2l__ice_pfield *pf, w2l__arena *a,
                          w2l_value *out, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    w2l__ice_bytes b;
    switch (avro_value_get_type(v)) {
    case AVRO_NULL: out->is_null = 1; return W2L_OK;
    case AVRO_BOOLEAN: {
        int x;
        avro_value_get_boolean(v, &x);
        out->v.i32 = x != 0;
        return W2L_OK;
    }
    case AVRO_INT32:
        if (pf && (pf->type.id == W2L_TYPE_LONG || pf->type.id == W2L_TYPE_TIMESTAMP ||
                   pf->type.id == W2L_TYPE_TIMESTAMPTZ || pf->type.id == W2L_TYPE_TIME))
            out->v.i64 = w2l__avro_int(v);
        else
            out->v.i32 = (int32_t)w2l__avro_int(v);
        return W2L_OK;
    case AVRO_INT64:
        if (pf && (pf->type.id == W2L_TYPE_INT || pf->type.id == W2L_TYPE_DATE))
            out->v.i32 = (int32_t)w2l__avro_int(v);
        else
            out->v.i64 = w2l__avro_int(v);
        return W2L_OK;
    case AVRO_FLOAT: avro_value_get_float(v, &out->v.f32); return W2L_OK;
    case AVRO_DOUBLE: avro_value_get_double(v, &out->v.f64); return W2L_OK;
    case AVRO_STRING: {
        const char *s = arena_str(a, v);
        W2L_NOMEM_IF(!s, err);
        out->v.bytes.ptr = s;
        out->v.bytes.len = strlen(s);
        return W2L_OK;
    }
    case AVRO_BYTES:
    case AVRO_FIXED:
        W2L_NOMEM_IF(arena_bytes(a, v, &b) != 0, err);
        if (pf && pf->type.id == W2L_TYPE_DECIMAL) {
            if (w2l__decimal_from_be(b.ptr, b.len, &out->v.dec) != 0)
                return w2l__fail(err, W2L_CORRUPT, "decimal partition value of %zu bytes", b.len);
        } else {
            out->v.bytes.ptr = (const char *)b.ptr;
            out->v.bytes.len = b.len;
        }
        return W2L_OK;
    default: return w2l__fail(err, W2L_CORRUPT, "unsupported Avro partition value type");
    }
}

static w2l_rc read_entry(avro_value_t *rec, const w2l__ice_manifest *mf, const w2l__ice_spec *spec,
                         w2l__arena *a, colvec *cv, w2l__ice_entry *e, w2l_error *err)
{
    avro_value_t f, df, sub;
    memset(e, 0, sizeof *e);
    e->snapshot_id = e->seq = e->file_seq = -1;
    if (!w2l__avro_get(rec, "status", &f))
        return w2l__fail(err, W2L_CORRUPT, "entry without status");
    e->status = (int)w2l__avro_int(&f);
    if (w2l__avro_get(rec, "snapshot_id", &f)) e->snapshot_id = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "sequence_number", &f)) e->seq = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "file_sequence_number", &f)) e->file_seq = w2l__avro_int(&f);
    /* inheritance (spec "Sequence Number Inheritance"); v1 manifests: sequence number 0 */
    if (e->snapshot_id < 0) e->snapshot_id = mf->added_snapshot_id;
    if (e->seq < 0 && (e->status == W2L_ICE_ADDED || mf->seq == 0)) e->seq = mf->seq;
    if (e->file_seq < 0 && (e->status == W2L_ICE_ADDED || mf->seq == 0)) e->file_seq = mf->seq;
    if (!w2l__avro_get(rec, "data_file", &df))
        return w2l__fail(err, W2L_CORRUPT, "entry without data_file");
    w2l__ice_data_file *d = &e->file;
    d->spec_id = mf->spec_id;
    if (w2l__avro_get(&df, "content", &f)) d->content = (int)w2l__avro_int(&f);
    if (!w2l__avro_get(&df, "file_path", &f))
        return w2l__fail(err, W2L_CORRUPT, "data_file without file_path");
    d->path = arena_str(a, &f);
    d->format = w2l__avro_get(&df, "file_format", &f) ? arena_str(a, &f) : "PARQUET";
    W2L_NOMEM_IF(!d->path || !d->format, err);
    if (w2l__avro_get(&df, "partition", &sub)) {
        size_t n = 0;
        avro_value_get_size(&sub, &n);
        d->npart = n;
        d->partition = w2l__arena_alloc(a, (n ? n : 1) * sizeof *d->partition);
        W2L_NOMEM_IF(!d->partition, err);
        for (size_t i = 0; i < n; i++) {
            avro_value_t u, b;
            avro_value_get_by_index(&sub, i, &u, NULL);
            if (avro_value_get_type(&u) == AVRO_UNION) {
                if (avro_value_get_current_branch(&u, &b) != 0)
                    return w2l__fail(err, W2L_CORRUPT, "partition union");
            } else {
                b = u;
            }
            W2L_TRY(read_pvalue(&b, spec && i < spec->nfields ? &spec->fields[i] : NULL, a,
                                &d->partition[i], err));
        }
    }
    if (w2l__avro_get(&df, "record_count", &f)) d->record_count = w2l__avro_int(&f);
    if (w2l__avro_get(&df, "file_size_in_bytes", &f)) d->file_size = w2l__avro_int(&f);
    W2L_TRY(read_maps(&df, a, cv, d, err));
    if (w2l__avro_get(&df, "key_metadata", &f))
        W2L_NOMEM_IF(arena_bytes(a, &f, &d->key_metadata) != 0, err);
    if (w2l__avro_get(&df, "split_offsets", &f)) {
        avro_value_get_size(&f, &d->nsplits);
        d->split_offsets = w2l__arena_alloc(a, (d->nsplits ? d->nsplits : 1) * sizeof(int64_t));
        W2L_NOMEM_IF(!d->split_offsets, err);
        for (size_t i = 0; i < d->nsplits; i++) {
            avro_value_get_by_index(&f, i, &sub, NULL);
            d->split_offsets[i] = w2l__avro_int(&sub);
        }
    }
    if (w2l__avro_get(&df, "equality_ids", &f)) {
        avro_value_get_size(&f, &d->neq);
        d->equality_ids = w2l__arena_alloc(a, (d->neq ? d->neq : 1) * sizeof(int32_t));
        W2L_NOMEM_IF(!d->equality_ids, err);
        for (size_t i = 0; i < d->neq; i++) {
            avro_value_get_by_index(&f, i, &sub, NULL);
            d->equality_ids[i] = (int32_t)w2l__avro_int(&sub);
        }
    }
    if (w2l__avro_get(&df, "sort_order_id", &f)) {
        d->has_sort_order_id = 1;
        d->sort_order_id = (int32_t)w2l__avro_int(&f);
    }
    if (w2l__avro_get(&df, "referenced_data_file", &f)) {
        d->referenced_data_file = arena_str(a, &f);
        W2L_NOMEM_IF(!d->referenced_data_file, err);
    }
    if (w2l__avro_get(&df, "first_row_id", &f)) {
        d->has_first_row_id = 1;
        d->first_row_id = w2l__avro_int(&f);
    }
    avro_value_t g;
    if (w2l__avro_get(&df, "content_offset", &f) &&
        w2l__avro_get(&df, "content_size_in_bytes", &g)) {
        d->has_content_range = 1;
        d->content_offset = w2l__avro_int(&f);
        d->content_size = w2l__avro_int(&g);
    }
    return W2L_OK;
}

w2l_rc w2l__ice_manifest_read(w2l_fileio *io, const w2l__ice_manifest *mf,
                              const w2l__ice_spec *spec, w2l__arena *a, w2l__ice_entry **out,
                              size_t *n, w2l_error *err)
{
    *out = NULL;
    *n = 0;
    w2l__avro_in in;
    w2l_rc rc = w2l__avro_in_open(&in, io, mf->path, err);
    w2l__ice_entry *v = NULL;
    size_t cnt = 0, cap = 0;
    colvec cv = {0};
    int64_t next_row_id = mf->first_row_id;
    while (rc == W2L_OK) {
        avro_value_t *rec;
        int r = w2l__avro_in_next(&in, &rec, err);
        if (r < 0) rc = err->code;
        if (r <= 0) break;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 64;
            w2l__ice_entry *nv = w2l__realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        rc = read_entry(rec, mf, spec, a, &cv, &v[cnt], err);
        if (rc != W2L_OK) break;
        /* row lineage: a live data file without first_row_id inherits the next ids */
        w2l__ice_data_file *d = &v[cnt].file;
        if (mf->has_first_row_id && d->content == W2L_ICE_DATA && !d->has_first_row_id &&
            v[cnt].status != W2L_ICE_DELETED) {
            d->has_first_row_id = 1;
            d->first_row_id = next_row_id;
            next_row_id += d->record_count;
        }
        cnt++;
    }
    w2l__avro_in_close(&in);
    w2l__free(cv.v);
    if (rc == W2L_OK) {
        *out = w2l__arena_alloc(a, (cnt ? cnt : 1) * sizeof **out);
        if (!*out) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else if (cnt) memcpy(*out, v, cnt * sizeof *v);
        *n = cnt;
    }
    w2l__free(v);
    if (rc != W2L_OK) {
        *out = NULL;
        *n = 0;
        w2l__error_prefix(err, "manifest %s: ", mf->path);
    }
    return rc;
}
