/*
 * The committer's records (ops.h, op_committer_int.h): the job id its snapshots and state
 * carry, the file objects of the WRITE_RESULTs and its state parsed back into Iceberg data
 * files, and the state keys of the pending files, percent-encoded and decoded.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_committer_int.h"
#include "../model/model.h"

/* ------------------------------------------------------------------- job id ------- */

char *w2l__ops_job_id(const w2l_conf *conf)
{
    const char *id = NULL, *wh = NULL, *src = NULL;
    w2l_conf_get(conf, "job-id", &id, NULL);
    if (id && *id) return w2l__strdup(id);
    w2l_conf_get(conf, "warehouse", &wh, NULL);
    w2l_conf_get(conf, "source", &src, NULL);
    uint64_t h = w2l__hash64(wh ? wh : "", wh ? strlen(wh) : 0, 0x6a6f62);
    h = w2l__hash64(src ? src : "", src ? strlen(src) : 0, h);
    return w2l__asprintf("w2l-%016llx", (unsigned long long)h);
}

w2l_rc w2l__ops_job_restored(const w2l_conf *conf, w2l_state *st, uint64_t restored, char **out,
                             w2l_error *err)
{
    *out = NULL;
    if (restored && st && !w2l_conf_is_set(conf, "job-id")) {
        w2l_buf b = {0};
        w2l_rc rc = w2l_state_get(st, restored, W2L_OPS_JOB_KEY, &b, err);
        if (rc == W2L_OK && (rc = w2l__buf_cstr(&b, err)) == W2L_OK) {
            *out = (char *)b.data;
            return W2L_OK;
        }
        w2l_buf_release(&b);
        if (rc != W2L_NOTFOUND) return rc;
    }
    *out = w2l__ops_job_id(conf);
    W2L_NOMEM_IF(!*out, err);
    return W2L_OK;
}

/* ------------------------------------------------------------ file objects -------- */

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static w2l_rc unhex(const char *s, w2l__arena *a, w2l__ice_bytes *out, w2l_error *err)
{
    size_t n = strlen(s);
    if (n % 2) return w2l__fail(err, W2L_CORRUPT, "bound '%.40s' is not hex", s);
    unsigned char *p = w2l__arena_alloc(a, n / 2 + 1);
    W2L_NOMEM_IF(!p, err);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return w2l__fail(err, W2L_CORRUPT, "bound '%.40s' is not hex", s);
        p[i] = (unsigned char)(hi << 4 | lo);
    }
    *out = (w2l__ice_bytes){p, n / 2};
    return W2L_OK;
}

static int get_i64(const w2l__json *o, const char *k, int64_t *v)
{
    return w2l__json_int64(w2l__json_get(o, k), v);
}

/* The partition tuple of a file object: "spec-id" and "partition" (ops.h), decoded with
 * the types of that spec of meta. */
static w2l_rc parse_partition(const w2l__json *j, const w2l__ice_meta *meta, w2l__arena *a,
                              w2l__ice_data_file *df, w2l_error *err)
{
    int64_t sid;
    if (w2l__json_int64(w2l__json_get(j, "spec-id"), &sid) != 0) return W2L_OK; /* default */
    const w2l__ice_spec *spec = meta ? w2l__ice_meta_spec(meta, (int32_t)sid) : NULL;
    if (!spec)
        return w2l__fail(err, W2L_SCHEMA, "%s: partition spec %lld is not the table's", df->path,
                         (long long)sid);
    const w2l__json *pv = w2l__json_get(j, "partition");
    if (w2l__json_size(pv) != spec->nfields)
        return w2l__fail(err, W2L_CORRUPT, "%s: %zu partition values for spec %d of %zu fields",
                         df->path, w2l__json_size(pv), (int)spec->spec_id, spec->nfields);
    df->spec_id = spec->spec_id;
    df->npart = spec->nfields;
    df->partition = w2l__arena_alloc(a, (spec->nfields + 1) * sizeof *df->partition);
    W2L_NOMEM_IF(!df->partition, err);
    size_t i = 0;
    for (const w2l__json *v = w2l__json_first(pv); v; v = w2l__json_next(v), i++) {
        w2l_value *o = &df->partition[i];
        memset(o, 0, sizeof *o);
        if (w2l__json_type(v) == W2L_JSON_NULL) {
            o->is_null = 1;
            continue;
        }
        const char *hex = w2l__json_str(v);
        w2l__ice_bytes b;
        if (!hex) return w2l__fail(err, W2L_CORRUPT, "%s: bad partition value", df->path);
        W2L_TRY(unhex(hex, a, &b, err));
        /* a file written before its partition column was widened (int -> long, float ->
         * double) in the same checkpoint holds the narrower value */
        w2l_type ty = spec->fields[i].type;
        w2l_rc rc;
        if ((ty.id == W2L_TYPE_LONG || ty.id == W2L_TYPE_DOUBLE) && b.len == 4) {
            w2l_value narrow;
            w2l_type nt = {ty.id == W2L_TYPE_LONG ? W2L_TYPE_INT : W2L_TYPE_FLOAT, 0, 0};
            rc = w2l__value_from_bytes(nt, b.ptr, b.len, &narrow, err);
            if (ty.id == W2L_TYPE_LONG) o->v.i64 = narrow.v.i32;
            else o->v.f64 = narrow.v.f32;
        } else {
            rc = w2l__value_from_bytes(ty, b.ptr, b.len, o, err);
        }
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s: partition field %s: ", df->path, spec->fields[i].name);
            return rc;
        }
    }
    return W2L_OK;
}

w2l_rc w2l__ops_file_parse(const w2l__json *j, const w2l__ice_meta *meta, w2l__arena *a,
                           w2l__ice_data_file *df, w2l_error *err)
{
    memset(df, 0, sizeof *df);
    df->spec_id = -1;
    int64_t content, v;
    const char *path = w2l__json_str(w2l__json_get(j, "path"));
    if (!path || get_i64(j, "content", &content) || content < 0 || content > 2 ||
        get_i64(j, "record-count", &df->record_count) || get_i64(j, "file-size", &df->file_size))
        return w2l__fail(err, W2L_CORRUPT,
                         "file entry without path, content, record-count or file-size");
    df->content = (int)content;
    df->path = w2l__arena_strndup(a, path, strlen(path));
    df->format = "PARQUET";
    W2L_NOMEM_IF(!df->path, err);
    const w2l__json *cols = w2l__json_get(j, "columns");
    df->ncols = w2l__json_size(cols);
    df->cols = w2l__arena_alloc(a, (df->ncols + 1) * sizeof *df->cols);
    W2L_NOMEM_IF(!df->cols, err);
    size_t i = 0;
    for (const w2l__json *c = w2l__json_first(cols); c; c = w2l__json_next(c), i++) {
        w2l__ice_colstat *o = &df->cols[i];
        memset(o, 0, sizeof *o);
        if (get_i64(c, "id", &v)) return w2l__fail(err, W2L_CORRUPT, "%s: column without id", path);
        o->field_id = (int32_t)v;
        o->has_size = !get_i64(c, "size", &o->column_size);
        o->has_values = !get_i64(c, "values", &o->value_count);
        o->has_nulls = !get_i64(c, "nulls", &o->null_count);
        o->has_nans = !get_i64(c, "nans", &o->nan_count);
        const char *lo = w2l__json_str(w2l__json_get(c, "lower"));
        const char *hi = w2l__json_str(w2l__json_get(c, "upper"));
        if (lo) {
            W2L_TRY(unhex(lo, a, &o->lower, err));
            o->has_lower = 1;
        }
        if (hi) {
            W2L_TRY(unhex(hi, a, &o->upper, err));
            o->has_upper = 1;
        }
    }
    const w2l__json *so = w2l__json_get(j, "split-offsets");
    df->nsplits = w2l__json_size(so);
    df->split_offsets = w2l__arena_alloc(a, (df->nsplits + 1) * sizeof *df->split_offsets);
    W2L_NOMEM_IF(!df->split_offsets, err);
    i = 0;
    for (const w2l__json *c = w2l__json_first(so); c; c = w2l__json_next(c), i++)
        if (w2l__json_int64(c, &df->split_offsets[i]))
            return w2l__fail(err, W2L_CORRUPT, "%s: bad split offset", path);
    if (df->content == W2L_ICE_EQ_DELETES) {
        const w2l__json *eq = w2l__json_get(j, "equality-ids");
        df->neq = w2l__json_size(eq);
        if (!df->neq)
            return w2l__fail(err, W2L_CORRUPT, "%s: equality deletes without equality-ids", path);
        df->equality_ids = w2l__arena_alloc(a, df->neq * sizeof *df->equality_ids);
        W2L_NOMEM_IF(!df->equality_ids, err);
        i = 0;
        for (const w2l__json *c = w2l__json_first(eq); c; c = w2l__json_next(c), i++) {
            if (w2l__json_int64(c, &v))
                return w2l__fail(err, W2L_CORRUPT, "%s: bad equality id", path);
            df->equality_ids[i] = (int32_t)v;
        }
    }
    W2L_TRY(parse_partition(j, meta, a, df, err));
    return W2L_OK;
}

/* ------------------------------------------------------------- state keys --------- */

static w2l_rc put_enc(w2l_buf *b, const char *s, w2l_error *err)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '%' || c == '/' || c == '.' || c < 0x20)
            W2L_TRY(w2l__buf_printf(b, err, "%%%02X", c));
        else W2L_TRY(w2l_buf_append(b, s, 1, err));
    }
    return W2L_OK;
}

w2l_rc w2l__cm_files_key(w2l_buf *b, uint64_t ckpt, const char *ns, const char *table,
                         w2l_error *err)
{
    b->len = 0;
    W2L_TRY(w2l__buf_printf(b, err, W2L_OPS_FILES_PREFIX "%020llu/", (unsigned long long)ckpt));
    W2L_TRY(put_enc(b, ns, err));
    W2L_TRY(w2l_buf_append(b, ".", 1, err));
    W2L_TRY(put_enc(b, table, err));
    return w2l__buf_cstr(b, err);
}

/* Decodes percent-encoded s[0..n) into fresh memory. */
char *w2l__cm_key_decode(const char *s, size_t n)
{
    char *o = w2l__malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n + 1 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            o[k++] = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
            i += 2;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return o;
}
