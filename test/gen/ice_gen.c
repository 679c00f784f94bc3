/*
 * Writes Iceberg tables through every table operation into WAREHOUSE (hadoop catalog,
 * namespace "db") and prints a JSON manifest for test/interop/iceberg.test.mjs:
 *   {"tables":[{"name","dir","ids":[live ids after deletes, sorted],
 *               "names":{id: name}, "snapshots": n, "partitioned": bool,
 *               "gaps":[icebird gaps this table hits]}]}
 * Tables: append (3 appends), delta (row deltas with equality and position deletes),
 * evolve (add / rename / widen / drop columns between appends), trunc (truncate between
 * appends), parted (month(d) + bucket[4](id) partitions, an equality delete per partition).
 * Usage: ice_gen WAREHOUSE
 */
#include "gen/ice_fixture.h"

static w2l_fileio *io;
static w2l_catalog *cat;
static const char *wh;

static w2l__ice_table *create(const char *name, const w2l__ice_spec *spec)
{
    w2l_error err;
    w2l_schema *s = fx_schema();
    char *loc = w2l__ice_table_dir(wh, "db", name);
    w2l__ice_table *t;
    w2l_rc rc = w2l__ice_table_create(cat, io, loc, "db", name, s, spec, NULL, &t, &err);
    FX_DIE(rc, err);
    w2l__free(loc);
    w2l_schema_unref(s);
    return t;
}

static int first = 1;
static void emit(w2l__ice_table *t, const long *ids, size_t n, const char *const *names,
                 const char *gaps)
{
    printf("%s{\"name\":\"%s\",\"dir\":\"%s/db/%s\",\"snapshots\":%zu,\"partitioned\":%s,"
           "\"gaps\":[%s],\"ids\":[",
           first ? "" : ",\n", t->name, wh, t->name, t->meta->nsnapshots,
           w2l__ice_meta_spec(t->meta, t->meta->default_spec_id)->nfields ? "true" : "false", gaps);
    for (size_t i = 0; i < n; i++) printf("%s%ld", i ? "," : "", ids[i]);
    printf("],\"names\":{");
    for (size_t i = 0; i < n; i++) printf("%s\"%ld\":\"%s\"", i ? "," : "", ids[i], names[i]);
    printf("}}");
    first = 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ice_gen WAREHOUSE\n");
        return 2;
    }
    wh = argv[1];
    w2l_error err;
    w2l_rc rc = w2l_global_init(&err);
    FX_DIE(rc, err);
    rc = w2l_fileio_open("local", NULL, &io, &err);
    FX_DIE(rc, err);
    rc = w2l__catalog_open("hadoop", NULL, wh, io, &cat, &err);
    FX_DIE(rc, err);
    w2l__arena a;
    w2l__arena_init(&a, 1 << 16);
    char nb[64][32];
    const char *names[64];
    for (int i = 0; i < 64; i++) {
        snprintf(nb[i], sizeof nb[i], "name-%d", i);
        names[i] = nb[i];
    }
    printf("{\"tables\":[\n");

    /* append: three appends of five rows */
    w2l__ice_table *t = create("append", NULL);
    for (int k = 0; k < 3; k++) {
        w2l__ice_data_file f = fx_data(t, k * 5, k * 5 + 5, NULL, &a);
        rc = fx_commit(t, W2L_ICE_OP_APPEND, &f, 1, NULL, 0, k + 1, &err);
        FX_DIE(rc, err);
    }
    long ids_app[15];
    for (int i = 0; i < 15; i++) ids_app[i] = i;
    emit(t, ids_app, 15, names, "");
    w2l__ice_table_free(t);

    /* delta: 0..9; then ids 2,3 deleted by equality, 2 re-inserted as "upd-2", 10 and 11
     * inserted and 11 deleted again by position within the same checkpoint; then id 5
     * deleted by equality */
    t = create("delta", NULL);
    w2l__ice_data_file f0 = fx_data(t, 0, 10, NULL, &a);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 1, &err);
    FX_DIE(rc, err);
    {
        w2l__ice_data_file nf[2];
        nf[0] = fx_data(t, 2, 3, "upd", &a);
        nf[1] = fx_data(t, 10, 12, NULL, &a);
        long del_ids[] = {2, 3};
        long pos[] = {1};
        w2l__ice_data_file dl[2];
        dl[0] = fx_eq_deletes(t, del_ids, 2, &a);
        dl[1] = fx_pos_deletes(t, &nf[1], pos, 1, &a);
        rc = fx_commit(t, W2L_ICE_OP_ROW_DELTA, nf, 2, dl, 2, 2, &err);
        FX_DIE(rc, err);
        long d5[] = {5};
        w2l__ice_data_file d2 = fx_eq_deletes(t, d5, 1, &a);
        rc = fx_commit(t, W2L_ICE_OP_ROW_DELTA, NULL, 0, &d2, 1, 3, &err);
        FX_DIE(rc, err);
    }
    long ids_d[] = {0, 1, 2, 4, 6, 7, 8, 9, 10};
    const char *names_d[] = {"name-0", "name-1", "upd-2", "name-4", "name-6", "name-7",
                             "name-8", "name-9", "name-10"};
    emit(t, ids_d, 9, names_d, "");
    w2l__ice_table_free(t);

    /* evolve: 0..4; add note, rename qty -> quantity, widen quantity to long, drop price;
     * then 5..9 under the new schema */
    t = create("evolve", NULL);
    f0 = fx_data(t, 0, 5, NULL, &a);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 1, &err);
    FX_DIE(rc, err);
    {
        w2l__ice_schema_change sc[] = {
            {W2L_ICE_ADD_COLUMN, "note", NULL, {W2L_TYPE_STRING, 0, 0}, 0},
            {W2L_ICE_RENAME_COLUMN, "qty", "quantity", {0, 0, 0}, 0},
            {W2L_ICE_WIDEN_COLUMN, "quantity", NULL, {W2L_TYPE_LONG, 0, 0}, 0},
            {W2L_ICE_DROP_COLUMN, "price", NULL, {0, 0, 0}, 0},
        };
        w2l__ice_change c;
        w2l__ice_change_init(&c, W2L_ICE_OP_SCHEMA);
        c.schema_changes = sc;
        c.nschema_changes = 4;
        rc = w2l__ice_table_commit(t, &c, 3, &err);
        FX_DIE(rc, err);
        w2l__ice_change_release(&c, io, 0);
    }
    f0 = fx_data(t, 5, 10, NULL, &a);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 2, &err);
    FX_DIE(rc, err);
    long ids_e[10];
    for (int i = 0; i < 10; i++) ids_e[i] = i;
    emit(t, ids_e, 10, names, "\"renamed column maps only through the iceberg.schema footer key\"");
    w2l__ice_table_free(t);

    /* trunc: 0..4, truncate, 20..22 */
    t = create("trunc", NULL);
    f0 = fx_data(t, 0, 5, NULL, &a);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 1, &err);
    FX_DIE(rc, err);
    rc = fx_commit(t, W2L_ICE_OP_TRUNCATE, NULL, 0, NULL, 0, 2, &err);
    FX_DIE(rc, err);
    f0 = fx_data(t, 20, 23, NULL, &a);
    rc = fx_commit(t, W2L_ICE_OP_APPEND, &f0, 1, NULL, 0, 3, &err);
    FX_DIE(rc, err);
    long ids_t[] = {20, 21, 22};
    const char *names_t[] = {"name-20", "name-21", "name-22"};
    emit(t, ids_t, 3, names_t, "");
    w2l__ice_table_free(t);

    /* parted: month(d), bucket[4](id); each row its own file group by partition */
    {
        w2l__ice_pfield pf[2] = {{5, 0, "d_month", {W2L_ICE_T_MONTH, 0}, {0, 0, 0}},
                                 {1, 0, "id_bucket", {W2L_ICE_T_BUCKET, 4}, {0, 0, 0}}};
        w2l__ice_spec spec = {0, 2, pf};
        t = create("parted", &spec);
        w2l__ice_data_file fs[40];
        size_t n = 0;
        for (long i = 0; i < 40; i++) fs[n++] = fx_data(t, i, i + 1, NULL, &a);
        rc = fx_commit(t, W2L_ICE_OP_APPEND, fs, n, NULL, 0, 1, &err);
        FX_DIE(rc, err);
        long d7[] = {7}, d33[] = {33};
        w2l__ice_data_file dl[2] = {fx_eq_deletes(t, d7, 1, &a), fx_eq_deletes(t, d33, 1, &a)};
        rc = fx_commit(t, W2L_ICE_OP_ROW_DELTA, NULL, 0, dl, 2, 2, &err);
        FX_DIE(rc, err);
        long ids_p[38];
        const char *names_p[38];
        size_t k = 0;
        for (long i = 0; i < 40; i++)
            if (i != 7 && i != 33) ids_p[k] = i, names_p[k] = names[i], k++;
        emit(t, ids_p, k, names_p, "\"equality deletes applied across partitions\"");
        w2l__ice_table_free(t);
    }
    printf("\n]}\n");
    w2l__arena_release(&a);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
    w2l_global_cleanup();
    return 0;
}
