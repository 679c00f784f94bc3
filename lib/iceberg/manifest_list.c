/*
 * Manifest lists: the Avro file a snapshot points to, one manifest_file record per
 * manifest (Iceberg spec: "Manifest Lists", format version 2 fields 500-519 with the
 * partition field_summary r508). New manifests get the committing snapshot's sequence
 * number here (their entries inherit it); manifests carried over from the parent keep
 * theirs, so a commit rewrites no manifest (w2l-design(7) section 2: thousands of tables per
 * checkpoint). Header keys: snapshot-id, parent-snapshot-id, sequence-number, format-version.
 * Reading also accepts the legacy v1 names of 504-506 (added_data_files_count, ...).
 * Format version 3 adds first_row_id (520): the first row id of the rows its ADDED data
 * files hold (row lineage; assigned by the commit, snapshot.c).
 */
#include <stdio.h>

#include <avro.h>

#include "avro_int.h"

#define AV(call)                                                                           \
    do {                                                                                   \
        if ((call) != 0) return w2l__fail(err, W2L_ERROR, "avro: %s", avro_strerror());    \
    } while (0)

static w2l_rc fill(avro_value_t *rec, const w2l__ice_manifest *m, int64_t seq, w2l_error *err)
{
    avro_value_t f, arr, el, sub;
    int64_t s = m->seq < 0 ? seq : m->seq;
    int64_t ms = m->min_seq < 0 ? s : m->min_seq;
    AV(w2l__avro_set(rec, "manifest_path", &f));
    AV(avro_value_set_string(&f, m->path));
    AV(w2l__avro_set(rec, "manifest_length", &f));
    AV(avro_value_set_long(&f, m->length));
    AV(w2l__avro_set(rec, "partition_spec_id", &f));
    AV(avro_value_set_int(&f, m->spec_id));
    AV(w2l__avro_set(rec, "content", &f));
    AV(avro_value_set_int(&f, m->content));
    AV(w2l__avro_set(rec, "sequence_number", &f));
    AV(avro_value_set_long(&f, s));
    AV(w2l__avro_set(rec, "min_sequence_number", &f));
    AV(avro_value_set_long(&f, ms));
    AV(w2l__avro_set(rec, "added_snapshot_id", &f));
    AV(avro_value_set_long(&f, m->added_snapshot_id));
    AV(w2l__avro_set(rec, "added_files_count", &f));
    AV(avro_value_set_int(&f, m->added_files));
    AV(w2l__avro_set(rec, "existing_files_count", &f));
    AV(avro_value_set_int(&f, m->existing_files));
    AV(w2l__avro_set(rec, "deleted_files_count", &f));
    AV(avro_value_set_int(&f, m->deleted_files));
    AV(w2l__avro_set(rec, "added_rows_count", &f));
    AV(avro_value_set_long(&f, m->added_rows));
    AV(w2l__avro_set(rec, "existing_rows_count", &f));
    AV(avro_value_set_long(&f, m->existing_rows));
    AV(w2l__avro_set(rec, "deleted_rows_count", &f));
    AV(avro_value_set_long(&f, m->deleted_rows));
    AV(w2l__avro_set(rec, "partitions", &arr));
    for (size_t i = 0; i < m->nparts; i++) {
        const w2l__ice_part_summary *p = &m->parts[i];
        AV(avro_value_append(&arr, &el, NULL));
        AV(w2l__avro_set(&el, "contains_null", &sub));
        AV(avro_value_set_boolean(&sub, p->contains_null));
        if (p->has_contains_nan) {
            AV(w2l__avro_set(&el, "contains_nan", &sub));
            AV(avro_value_set_boolean(&sub, p->contains_nan));
        } else {
            w2l__avro_set_null(&el, "contains_nan");
        }
        if (p->lower.ptr) {
            AV(w2l__avro_set(&el, "lower_bound", &sub));
            AV(avro_value_set_bytes(&sub, (void *)p->lower.ptr, p->lower.len));
        } else {
            w2l__avro_set_null(&el, "lower_bound");
        }
        if (p->upper.ptr) {
            AV(w2l__avro_set(&el, "upper_bound", &sub));
            AV(avro_value_set_bytes(&sub, (void *)p->upper.ptr, p->upper.len));
        } else {
            w2l__avro_set_null(&el, "upper_bound");
        }
    }
    w2l__avro_set_null(rec, "key_metadata");
    if (m->has_first_row_id) {
        AV(w2l__avro_set(rec, "first_row_id", &f));
        AV(avro_value_set_long(&f, m->first_row_id));
    } else {
        w2l__avro_set_null(rec, "first_row_id");
    }
    return W2L_OK;
}

w2l_rc w2l__ice_manifest_list_write(w2l_fileio *io, w2l__file_batch *pend, const char *path,
                                    int format_version, int64_t snapshot_id,
                                    int64_t parent_id, int64_t seq,
                                    const w2l__ice_manifest *m, size_t n, w2l_error *err)
{
    char sid[24], pid[24], sq[24];
    snprintf(sid, sizeof sid, "%lld", (long long)snapshot_id);
    snprintf(pid, sizeof pid, "%lld", (long long)parent_id);
    snprintf(sq, sizeof sq, "%lld", (long long)seq);
    w2l__ice_kv kv[4] = {{"snapshot-id", sid}, {"sequence-number", sq},
                         {"format-version", format_version >= 3 ? "3" : "2"},
                         {"parent-snapshot-id", pid}};
    w2l__avro_out o;
    w2l_rc rc = w2l__avro_out_begin(&o, w2l__ice_avro_manifest_list_schema(format_version), kv,
                                    parent_id != -1 ? 4 : 3, err);
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        rc = fill(w2l__avro_out_record(&o), &m[i], seq, err);
        if (rc == W2L_OK) rc = w2l__avro_out_append(&o, err);
    }
    if (rc == W2L_OK) rc = w2l__avro_out_finish(&o, io, pend, path, NULL, err);
    w2l__avro_out_free(&o);
    if (rc != W2L_OK) w2l__error_prefix(err, "manifest list: ");
    return rc;
}

static int get_any(avro_value_t *rec, const char *a, const char *b, avro_value_t *out)
{
    return w2l__avro_get(rec, a, out) || (b && w2l__avro_get(rec, b, out));
}

static int bytes_of(w2l__arena *a, avro_value_t *v, w2l__ice_bytes *out)
{
    const void *p = NULL;
    size_t n = 0;
    avro_value_get_bytes(v, &p, &n);
    unsigned char *c = w2l__arena_alloc(a, n + 1);
    if (!c) return -1;
    if (n) memcpy(c, p, n);
    *out = (w2l__ice_bytes){c, n};
    return 0;
}

static w2l_rc read_one(avro_value_t *rec, w2l__arena *a, w2l__ice_manifest *m, w2l_error *err)
{
    avro_value_t f, arr;
    memset(m, 0, sizeof *m);
    const char *s = NULL;
    size_t len = 0;
    if (!w2l__avro_get(rec, "manifest_path", &f) || avro_value_get_string(&f, &s, &len) != 0)
        return w2l__fail(err, W2L_CORRUPT, "manifest_file without manifest_path");
    m->path = w2l__arena_strndup(a, s, len ? len - 1 : 0);
    W2L_NOMEM_IF(!m->path, err);
    if (w2l__avro_get(rec, "manifest_length", &f)) m->length = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "partition_spec_id", &f)) m->spec_id = (int32_t)w2l__avro_int(&f);
    if (w2l__avro_get(rec, "content", &f)) m->content = (int)w2l__avro_int(&f);
    if (w2l__avro_get(rec, "sequence_number", &f)) m->seq = w2l__avro_int(&f);
    m->min_seq = m->seq;
    if (w2l__avro_get(rec, "min_sequence_number", &f)) m->min_seq = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "added_snapshot_id", &f)) m->added_snapshot_id = w2l__avro_int(&f);
    if (get_any(rec, "added_files_count", "added_data_files_count", &f))
        m->added_files = (int32_t)w2l__avro_int(&f);
    if (get_any(rec, "existing_files_count", "existing_data_files_count", &f))
        m->existing_files = (int32_t)w2l__avro_int(&f);
    if (get_any(rec, "deleted_files_count", "deleted_data_files_count", &f))
        m->deleted_files = (int32_t)w2l__avro_int(&f);
    if (w2l__avro_get(rec, "added_rows_count", &f)) m->added_rows = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "existing_rows_count", &f)) m->existing_rows = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "deleted_rows_count", &f)) m->deleted_rows = w2l__avro_int(&f);
    if (w2l__avro_get(rec, "partitions", &arr)) {
        avro_value_get_size(&arr, &m->nparts);
        m->parts = w2l__arena_alloc(a, (m->nparts ? m->nparts : 1) * sizeof *m->parts);
        W2L_NOMEM_IF(!m->parts, err);
        for (size_t i = 0; i < m->nparts; i++) {
            avro_value_t el, sub;
            w2l__ice_part_summary *p = &m->parts[i];
            memset(p, 0, sizeof *p);
            avro_value_get_by_index(&arr, i, &el, NULL);
            if (w2l__avro_get(&el, "contains_null", &sub))
                avro_value_get_boolean(&sub, &p->contains_null);
            if (w2l__avro_get(&el, "contains_nan", &sub)) {
                p->has_contains_nan = 1;
                avro_value_get_boolean(&sub, &p->contains_nan);
            }
            if (w2l__avro_get(&el, "lower_bound", &sub))
                W2L_NOMEM_IF(bytes_of(a, &sub, &p->lower) != 0, err);
            if (w2l__avro_get(&el, "upper_bound", &sub))
                W2L_NOMEM_IF(bytes_of(a, &sub, &p->upper) != 0, err);
        }
    }
    if (w2l__avro_get(rec, "first_row_id", &f)) {
        m->has_first_row_id = 1;
        m->first_row_id = w2l__avro_int(&f);
    }
    return W2L_OK;
}

w2l_rc w2l__ice_manifest_list_read(w2l_fileio *io, const char *path, w2l__arena *a,
                                   w2l__ice_manifest **out, size_t *n, w2l_error *err)
{
    *out = NULL;
    *n = 0;
    w2l__avro_in in;
    w2l_rc rc = w2l__avro_in_open(&in, io, path, err);
    w2l__ice_manifest *v = NULL;
    size_t cnt = 0, cap = 0;
    while (rc == W2L_OK) {
        avro_value_t *rec;
        int r = w2l__avro_in_next(&in, &rec, err);
        if (r < 0) rc = err->code;
        if (r <= 0) break;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            w2l__ice_manifest *nv = w2l__realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        rc = read_one(rec, a, &v[cnt], err);
        if (rc == W2L_OK) cnt++;
    }
    w2l__avro_in_close(&in);
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
        w2l__error_prefix(err, "manifest list %s: ", path);
    }
    return rc;
}
