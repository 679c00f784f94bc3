/*
 * lib/iceberg against tables other writers made (test/data/iceberg, copied from
 * shared golden fixtures; see the README there): our metadata parser, manifest and manifest
 * list readers, scan planning (which delete files apply to which data file, by sequence
 * numbers and partitions) and, where lib/parquet's reader decodes the files, the rows, which
 * must equal <table>.expected.jsonl (the upstream projects' own assertions).
 * Paths in these tables start with their original location (s3a://..., data/persistent/...);
 * the scan relocates them under the table directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/ice_fixture.h"
#include "support/support.h"

typedef struct golden {
    const char *name;
    const char *metadata;     /* file name under metadata/ */
    size_t data_files, delete_files;
    int rows_readable;        /* lib/parquet reads every file of the table */
    const char *why_not;      /* what lib/parquet's reader lacks otherwise */
} golden;

static const golden tables[] = {
    {"icebird_java_bunnies", "v5.metadata.json", 2, 2, 1, NULL}, /* GZIP data files */
    {"duckdb_equality_deletes_mydb_mytable", "v7.metadata.json", 2, 4, 1, NULL},
    {"duckdb_equality_deletes_mydb_mytable_partitioned", "v6.metadata.json", 0, 0, 1, NULL},
    {"duckdb_equality_delete_cross_partition_ns_t", "vfinal.metadata.json", 2, 1, 1, NULL},
    {"icebird_spark_rename_column", "v3.metadata.json", 3, 0, 1, NULL},
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    fclose(f);
    b[got] = '\0';
    if (len) *len = got;
    return b;
}

typedef struct lines {
    char **v;
    size_t n, cap;
    const w2l_schema *schema;
} lines;

static void push(lines *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static void json_str(w2l_buf *b, const char *s, size_t n)
{
    w2l_error err;
    w2l_buf_append(b, "\"", 1, &err);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') w2l__buf_printf(b, &err, "\\%c", c);
        else if (c < 0x20) w2l__buf_printf(b, &err, "\\u%04x", c);
        else w2l_buf_append(b, &s[i], 1, &err);
    }
    w2l_buf_append(b, "\"", 1, &err);
}

/* One row in the canonical JSON of the oracle's iceberg-rows (JS number formatting). */
static int to_line(void *ctx, const w2l_value *row, size_t n)
{
    lines *l = ctx;
    w2l_buf b = {0};
    w2l_error err;
    char t[128];
    w2l_buf_append(&b, "{", 1, &err);
    for (size_t i = 0; i < n; i++) {
        const w2l_field *f = w2l_schema_field(l->schema, i);
        if (i) w2l_buf_append(&b, ",", 1, &err);
        json_str(&b, f->name, strlen(f->name));
        w2l_buf_append(&b, ":", 1, &err);
        const w2l_value *v = &row[i];
        if (v->is_null) {
            w2l_buf_append(&b, "null", 4, &err);
            continue;
        }
        switch (f->type.id) {
        case W2L_TYPE_BOOLEAN: w2l__buf_printf(&b, &err, "%s", v->v.i32 ? "true" : "false"); break;
        case W2L_TYPE_INT: w2l__buf_printf(&b, &err, "%d", (int)v->v.i32); break;
        case W2L_TYPE_LONG: w2l__buf_printf(&b, &err, "%lld", (long long)v->v.i64); break;
        case W2L_TYPE_FLOAT:
        case W2L_TYPE_DOUBLE: {
            size_t k = f->type.id == W2L_TYPE_FLOAT ? w2l__float_format(v->v.f32, t, sizeof t)
                                                    : w2l__double_format(v->v.f64, t, sizeof t);
            if (k > 2 && strcmp(t + k - 2, ".0") == 0) t[k - 2] = '\0';
            w2l__buf_printf(&b, &err, "%s", t);
            break;
        }
        case W2L_TYPE_STRING: json_str(&b, v->v.bytes.ptr, v->v.bytes.len); break;
        default:
            w2l_value_format(f->type, v, t, sizeof t);
            json_str(&b, t, strlen(t));
        }
    }
    w2l_buf_append(&b, "}", 1, &err);
    w2l__buf_cstr(&b, &err);
    push(l, strdup((char *)b.data));
    w2l_buf_release(&b);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(golden_table_scans_to_expected)
{
    const golden *g = &tables[_i];
    const char *src = getenv("W2L_SRCDIR");
    char dir[1024], mpath[1200], epath[1200];
    snprintf(dir, sizeof dir, "%s/test/data/iceberg/%s", src && *src ? src : ".", g->name);
    snprintf(mpath, sizeof mpath, "%s/metadata/%s", dir, g->metadata);
    snprintf(epath, sizeof epath, "%s.expected.jsonl", dir);
    w2l_error err;
    size_t len;
    char *text = slurp(mpath, &len);
    ck_assert_msg(text != NULL, "cannot read %s", mpath);
    w2l__ice_meta *m;
    ck_assert_ok(w2l__ice_meta_parse(text, len, &m, &err), err);
    free(text);
    /* our printer keeps everything the other writer wrote */
    char *printed;
    ck_assert_ok(w2l__ice_meta_print(m, &printed, &len, &err), err);
    w2l__ice_meta *m2;
    ck_assert_ok(w2l__ice_meta_parse(printed, len, &m2, &err), err);
    ck_assert_int_eq(m2->nsnapshots, m->nsnapshots);
    ck_assert_int_eq(m2->current_snapshot_id, m->current_snapshot_id);
    w2l__ice_meta_free(m2);
    w2l__free(printed);

    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, m, -1, m->location, dir, &s, &err), err);
    size_t ndel = 0;
    for (size_t i = 0; i < s->ntasks; i++) ndel += s->tasks[i].ndeletes;
    if (g->data_files) ck_assert_uint_eq(s->ntasks, g->data_files);
    if (g->delete_files) ck_assert_uint_eq(s->ndelete_files, g->delete_files);
    lines got = {0}, want = {0};
    got.schema = s->schema;
    w2l_rc rc = w2l__ice_scan_read(io, s, to_line, &got, &err);
    if (g->rows_readable) ck_assert_ok(rc, err);
    if (rc == W2L_OK) {
        char *exp = slurp(epath, NULL);
        ck_assert_ptr_nonnull(exp);
        for (char *line = strtok(exp, "\n"); line; line = strtok(NULL, "\n"))
            push(&want, strdup(line));
        free(exp);
        qsort(got.v, got.n, sizeof *got.v, cmp);
        qsort(want.v, want.n, sizeof *want.v, cmp);
        for (size_t i = 0; i < got.n && i < want.n; i++) ck_assert_str_eq(got.v[i], want.v[i]);
        ck_assert_uint_eq(got.n, want.n);
    } else {
        fprintf(stderr, "golden %s: planned %zu data files, %zu delete files; rows not read: %s\n",
                g->name, s->ntasks, s->ndelete_files, err.msg);
    }
    for (size_t i = 0; i < got.n; i++) free(got.v[i]);
    for (size_t i = 0; i < want.n; i++) free(want.v[i]);
    free(got.v);
    free(want.v);
    w2l__ice_scan_free(s);
    w2l__ice_meta_free(m);
    w2l_fileio_close(io);
}
END_TEST

Suite *suite_ice_golden(void)
{
    Suite *s = suite_create("ice_golden");
    TCase *tc = tcase_create("golden");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, golden_table_scans_to_expected, 0, (int)W2L_ARRAY_LEN(tables));
    suite_add_tcase(s, tc);
    return s;
}
