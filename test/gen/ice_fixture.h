/*
 * Iceberg test fixture shared by the unit suites (test/check_ice_*.c) and the interop
 * generator (test/gen/ice_gen.c): one table schema, deterministic rows, and helpers that
 * write data / equality-delete / position-delete Parquet files with the library's own
 * writer and describe them as Iceberg data files. Header-only (static functions).
 *
 * Schema (schema id 0, identifier field id):
 *   1 id long required | 2 name string | 3 qty int | 4 price double | 5 d date
 *   6 ts timestamp | 7 amount decimal(10,2)
 * Row i: id=i, name="name-i", qty=i*10 (NULL when i%7==3), price=i*1.5, d=19000+i,
 * ts=1700000000000000+i*3600000000, amount=i*100+25 (i.25).
 */
#ifndef W2L_ICE_FIXTURE_H
#define W2L_ICE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg.h"
#include "parquet/parquet.h"
#include "model/model.h"

#define FX_DIE(rc, err)                                                                    \
    do {                                                                                   \
        if ((rc) != W2L_OK) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, w2l_rc_name(rc), (err).msg); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static inline w2l_schema *fx_schema(void)
{
    w2l_error err;
    w2l_schema *s = w2l_schema_new(0);
    w2l_rc rc = w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 2, "name", (w2l_type){W2L_TYPE_STRING, 0, 0}, 0, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 3, "qty", (w2l_type){W2L_TYPE_INT, 0, 0}, 0, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 4, "price", (w2l_type){W2L_TYPE_DOUBLE, 0, 0}, 0, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 5, "d", (w2l_type){W2L_TYPE_DATE, 0, 0}, 0, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 6, "ts", (w2l_type){W2L_TYPE_TIMESTAMP, 0, 0}, 0, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(s, 7, "amount", (w2l_type){W2L_TYPE_DECIMAL, 10, 2}, 0, &err);
    FX_DIE(rc, err);
    int32_t id = 1;
    rc = w2l_schema_set_identifier(s, &id, 1, &err);
    FX_DIE(rc, err);
    return s;
}

/* Name buffer per row (values borrow it). */
typedef struct fx_rowbuf {
    char name[64];
} fx_rowbuf;

/* Fills row (one value per field of schema s) for row number i; fields the fixture does not
 * know (added by schema changes) get "note-i" for strings, i for numbers. */
static inline void fx_row(const w2l_schema *s, long i, const char *name_prefix, fx_rowbuf *b,
                          w2l_value *row)
{
    snprintf(b->name, sizeof b->name, "%s-%ld", name_prefix ? name_prefix : "name", i);
    for (size_t k = 0; k < w2l_schema_field_count(s); k++) {
        const w2l_field *f = w2l_schema_field(s, k);
        w2l_value *v = &row[k];
        memset(v, 0, sizeof *v);
        switch (f->id) {
        case 1: v->v.i64 = i; break;
        case 2: v->v.bytes.ptr = b->name; v->v.bytes.len = strlen(b->name); break;
        case 3:
            if (i % 7 == 3) v->is_null = 1;
            else if (f->type.id == W2L_TYPE_LONG) v->v.i64 = i * 10;
            else v->v.i32 = (int32_t)(i * 10);
            break;
        case 4: v->v.f64 = (double)i * 1.5; break;
        case 5: v->v.i32 = (int32_t)(19000 + i); break;
        case 6: v->v.i64 = INT64_C(1700000000000000) + (int64_t)i * INT64_C(3600000000); break;
        case 7: v->v.dec = w2l__i128_from_i64(i * 100 + 25); break;
        default:
            if (f->type.id == W2L_TYPE_STRING) {
                v->v.bytes.ptr = b->name;
                v->v.bytes.len = strlen(b->name);
            } else if (f->type.id == W2L_TYPE_LONG) {
                v->v.i64 = i;
            } else {
                v->v.i32 = (int32_t)i;
            }
        }
    }
}

/* Writes a Parquet file of schema s at path and fills df (content 0) from its stats. */
static inline void fx_write_file(w2l_fileio *io, const char *path, const w2l_schema *s,
                          const w2l_value *rows, size_t nrows, w2l__arena *a, int content,
                          const int32_t *eq, size_t neq, w2l__ice_data_file *df)
{
    w2l_error err;
    w2l__pq_writer *w;
    w2l_rc rc = w2l__pq_writer_open(io, path, W2L_CREATE_EXCL, s, NULL, NULL, 0, &w, &err);
    FX_DIE(rc, err);
    if (nrows) {
        rc = w2l__pq_write_rows(w, rows, nrows, &err);
        FX_DIE(rc, err);
    }
    w2l__file_stats st;
    memset(&st, 0, sizeof st);
    rc = w2l__pq_writer_close(w, &st, &err);
    FX_DIE(rc, err);
    char *p = w2l__arena_strndup(a, path, strlen(path));
    rc = w2l__ice_data_file_from_stats(a, content, p, &st, eq, neq, df, &err);
    FX_DIE(rc, err);
    w2l__file_stats_release(&st);
}

/* Partition tuple of row under the table's default spec, into part (arena memory). */
static inline void fx_partition(const w2l__ice_table *t, const w2l_schema *s, const w2l_value *row,
                         w2l__arena *a, w2l__ice_data_file *df)
{
    const w2l__ice_spec *spec = w2l__ice_meta_spec(t->meta, t->meta->default_spec_id);
    df->spec_id = spec->spec_id;
    df->npart = spec->nfields;
    df->partition = w2l__arena_alloc(a, (spec->nfields + 1) * sizeof *df->partition);
    for (size_t k = 0; k < spec->nfields; k++) {
        const w2l__ice_pfield *pf = &spec->fields[k];
        long idx = w2l_schema_index_of_id(s, pf->source_id);
        w2l_error err;
        w2l_rc rc = w2l__ice_transform_apply(pf->transform, w2l_schema_field(s, (size_t)idx)->type,
                                             &row[idx], &df->partition[k], &err);
        FX_DIE(rc, err);
        if (!df->partition[k].is_null &&
            (pf->type.id == W2L_TYPE_STRING || pf->type.id == W2L_TYPE_BINARY)) {
            char *c =
                w2l__arena_strndup(a, df->partition[k].v.bytes.ptr, df->partition[k].v.bytes.len);
            df->partition[k].v.bytes.ptr = c;
        }
    }
}

/* Data file of rows [from, to) of the current schema (one partition: the first row's). */
static inline w2l__ice_data_file fx_data(w2l__ice_table *t, long from, long to, const char *prefix,
                                  w2l__arena *a)
{
    const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
    size_t nf = w2l_schema_field_count(s), n = (size_t)(to - from);
    w2l_value *rows = calloc(n * nf + 1, sizeof *rows);
    fx_rowbuf *bufs = calloc(n + 1, sizeof *bufs);
    for (size_t i = 0; i < n; i++) fx_row(s, from + (long)i, prefix, &bufs[i], &rows[i * nf]);
    w2l__ice_data_file df;
    memset(&df, 0, sizeof df);
    w2l__ice_data_file part;
    memset(&part, 0, sizeof part);
    fx_partition(t, s, rows, a, &part);
    char *pp = w2l__ice_partition_path(w2l__ice_meta_spec(t->meta, t->meta->default_spec_id),
                                       part.partition);
    char *path = w2l__ice_new_data_path(t, pp, "data");
    fx_write_file(t->io, path, s, rows, n, a, W2L_ICE_DATA, NULL, 0, &df);
    df.spec_id = part.spec_id;
    df.npart = part.npart;
    df.partition = part.partition;
    free(rows);
    free(bufs);
    w2l__free(pp);
    w2l__free(path);
    return df;
}

/* Equality-delete file on field 1 (id) for the given ids, partition of the first id's row. */
static inline w2l__ice_data_file fx_eq_deletes(w2l__ice_table *t, const long *ids, size_t n,
                                               w2l__arena *a)
{
    w2l_error err;
    w2l_schema *es = w2l_schema_new(0);
    w2l_rc rc = w2l_schema_add_field(es, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err);
    FX_DIE(rc, err);
    w2l_value *rows = calloc(n + 1, sizeof *rows);
    for (size_t i = 0; i < n; i++) rows[i].v.i64 = ids[i];
    const w2l_schema *s = w2l__ice_meta_current_schema(t->meta);
    size_t nf = w2l_schema_field_count(s);
    w2l_value *full = calloc(nf, sizeof *full);
    fx_rowbuf b;
    fx_row(s, n ? ids[0] : 0, NULL, &b, full);
    w2l__ice_data_file part;
    memset(&part, 0, sizeof part);
    fx_partition(t, s, full, a, &part);
    char *pp = w2l__ice_partition_path(w2l__ice_meta_spec(t->meta, t->meta->default_spec_id),
                                       part.partition);
    char *path = w2l__ice_new_data_path(t, pp, "eq-delete");
    int32_t eq = 1;
    w2l__ice_data_file df;
    fx_write_file(t->io, path, es, rows, n, a, W2L_ICE_EQ_DELETES, &eq, 1, &df);
    df.spec_id = part.spec_id;
    df.npart = part.npart;
    df.partition = part.partition;
    w2l_schema_unref(es);
    free(rows);
    free(full);
    w2l__free(pp);
    w2l__free(path);
    return df;
}

/* Position-delete file: rows (data_path, pos[i]); partition copied from data. */
static inline w2l__ice_data_file fx_pos_deletes(w2l__ice_table *t, const w2l__ice_data_file *data,
                                         const long *pos, size_t n, w2l__arena *a)
{
    w2l_error err;
    w2l_schema *ps = w2l_schema_new(0);
    w2l_rc rc = w2l_schema_add_field(ps, W2L_PQ_FIELD_ID_FILE_PATH, "file_path",
                                     (w2l_type){W2L_TYPE_STRING, 0, 0}, 1, &err);
    FX_DIE(rc, err);
    rc = w2l_schema_add_field(ps, W2L_PQ_FIELD_ID_POS, "pos", (w2l_type){ W2L_TYPE_LONG, 0, 0 }, 1,
                              &err);
    FX_DIE(rc, err);
    w2l_value *rows = calloc(2 * n + 1, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        rows[2 * i].v.bytes.ptr = data->path;
        rows[2 * i].v.bytes.len = strlen(data->path);
        rows[2 * i + 1].v.i64 = pos[i];
    }
    char *pp = w2l__ice_partition_path(w2l__ice_meta_spec(t->meta, data->spec_id), data->partition);
    char *path = w2l__ice_new_data_path(t, pp, "pos-delete");
    w2l__ice_data_file df;
    fx_write_file(t->io, path, ps, rows, n, a, W2L_ICE_POS_DELETES, NULL, 0, &df);
    df.spec_id = data->spec_id;
    df.npart = data->npart;
    df.partition = data->partition;
    w2l_schema_unref(ps);
    free(rows);
    w2l__free(pp);
    w2l__free(path);
    return df;
}

/* Commits an append of files / a row delta; summary carries the w2l.* keys. */
static inline w2l_rc fx_commit(w2l__ice_table *t, w2l__ice_op op, const w2l__ice_data_file *files,
                        size_t nfiles, const w2l__ice_data_file *dels, size_t ndels, int ckpt,
                        w2l_error *err)
{
    w2l__ice_change c;
    w2l__ice_change_init(&c, op);
    c.files = files;
    c.nfiles = nfiles;
    c.deletes = dels;
    c.ndeletes = ndels;
    char ck[16];
    snprintf(ck, sizeof ck, "%d", ckpt);
    w2l__ice_kv kv[] = {{"w2l.job-id", "job-1"}, {"w2l.epoch", "1"}, {"w2l.checkpoint-id", ck},
                        {"w2l.source-position", "{\"file\":\"binlog.000001\",\"pos\":4}"}};
    c.summary = kv;
    c.nsummary = 4;
    w2l_rc rc = w2l__ice_table_commit(t, &c, 5, err);
    w2l__ice_change_release(&c, t->io, rc != W2L_OK);
    return rc;
}

#endif
