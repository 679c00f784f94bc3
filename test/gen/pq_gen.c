/*
 * Writes the Parquet test cases of pq_cases.h into a directory with the library's writer
 * and prints a JSON manifest of what was written, for test/interop/parquet.test.mjs to
 * compare against DuckDB and hyparquet:
 *   {"files":[{"name","path","codec","dict","min_row_groups",
 *              "columns":[{"name","parquet_name","id","type","required"}],
 *              "rows":[[v, ...], ...],
 *              "stats":{"record_count","file_size","split_offsets":[..],
 *                       "cols":[{"field_id","value_count","null_count","nan_count",
 *                                "lower","upper","column_size"}]}}]}
 * Canonical values: null; booleans; int and date as numbers (days); long, time and
 * timestamps as decimal strings (micros); float/double as numbers or "NaN", "Infinity",
 * "-Infinity", "-0"; decimals as exact strings with the scale's digits; strings as they
 * are; binary and bounds as lowercase hex.
 * Usage: pq_gen OUTDIR
 */
#include <inttypes.h>

#include "gen/pq_cases.h"
#include "model/model.h"

static void json_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void hex(const void *p, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) printf("%02x", ((const unsigned char *)p)[i]);
    putchar('"');
}

static void num(double d)
{
    if (isnan(d)) printf("\"NaN\"");
    else if (isinf(d)) printf(d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else if (d == 0 && signbit(d)) printf("\"-0\"");
    else printf("%.17g", d);
}

static void value(const w2l_field *f, const w2l_value *v)
{
    if (v->is_null) {
        printf("null");
        return;
    }
    switch (f->type.id) {
    case W2L_TYPE_BOOLEAN: printf(v->v.i32 ? "true" : "false"); break;
    case W2L_TYPE_INT:
    case W2L_TYPE_DATE: printf("%" PRId32, v->v.i32); break;
    case W2L_TYPE_LONG:
    case W2L_TYPE_TIME:
    case W2L_TYPE_TIMESTAMP:
    case W2L_TYPE_TIMESTAMPTZ: printf("\"%" PRId64 "\"", v->v.i64); break;
    case W2L_TYPE_FLOAT: num(v->v.f32); break;
    case W2L_TYPE_DOUBLE: num(v->v.f64); break;
    case W2L_TYPE_DECIMAL: {
        char b[64];
        w2l__decimal_format(v->v.dec, f->type.scale, b, sizeof b);
        printf("\"%s\"", b);
        break;
    }
    case W2L_TYPE_STRING: json_str(v->v.bytes.ptr, v->v.bytes.len); break;
    case W2L_TYPE_BINARY: hex(v->v.bytes.ptr, v->v.bytes.len); break;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pq_gen OUTDIR\n");
        return 2;
    }
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) pqc_die("init", &err);
    w2l_fileio *io;
    if (w2l_fileio_open("local", NULL, &io, &err) != W2L_OK) pqc_die("fileio", &err);
    static pq_case cases[16];
    size_t ncases = pqc_build_all(cases);
    printf("{\"files\":[");
    for (size_t k = 0; k < ncases; k++) {
        pq_case *c = &cases[k];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.parquet", argv[1], c->name);
        w2l__pq_writer *w;
        if (w2l__pq_writer_open(io, path, W2L_CREATE_REPLACE, c->schema, &c->opt, NULL, 0, &w,
                                &err) != W2L_OK)
            pqc_die(c->name, &err);
        /* alternate the row and batch paths so both are exercised */
        size_t r = 0;
        while (r < c->nrows) {
            if (r % 3 == 0) {
                if (w2l__pq_write_row(w, &c->rows[r * c->ncols], &err) != W2L_OK)
                    pqc_die(c->name, &err);
                r++;
            } else {
                size_t n = c->nrows - r < 777 ? c->nrows - r : 777;
                if (w2l__pq_write_rows(w, &c->rows[r * c->ncols], n, &err) != W2L_OK)
                    pqc_die(c->name, &err);
                r += n;
            }
        }
        w2l__file_stats st;
        if (w2l__pq_writer_close(w, &st, &err) != W2L_OK) pqc_die(c->name, &err);
        printf("%s{\"name\":\"%s\",\"path\":", k ? "," : "", c->name);
        json_str(path, strlen(path));
        printf(",\"codec\":\"%s\",\"dict\":%s,\"min_row_groups\":%d,\"columns\":[",
               c->opt.codec == W2L_PQ_ZSTD ? "ZSTD" : "UNCOMPRESSED",
               c->opt.dict_bytes ? "true" : "false", c->min_row_groups);
        for (size_t i = 0; i < c->ncols; i++) {
            const w2l_field *f = w2l_schema_field(c->schema, i);
            char tb[32], pn[256];
            w2l_type_format(f->type, tb, sizeof tb);
            w2l__pq_sanitize_name(f->name, pn, sizeof pn);
            printf("%s{\"name\":", i ? "," : "");
            json_str(f->name, strlen(f->name));
            printf(",\"parquet_name\":");
            json_str(pn, strlen(pn));
            printf(",\"id\":%" PRId32 ",\"type\":\"%s\",\"required\":%s}", f->id, tb,
                   f->required ? "true" : "false");
        }
        printf("],\"rows\":[");
        for (size_t rr = 0; rr < c->nrows; rr++) {
            printf("%s[", rr ? "," : "");
            for (size_t i = 0; i < c->ncols; i++) {
                if (i) putchar(',');
                value(w2l_schema_field(c->schema, i), &c->rows[rr * c->ncols + i]);
            }
            putchar(']');
        }
        printf("],\"stats\":{\"record_count\":%" PRIu64 ",\"file_size\":%" PRIu64
               ",\"split_offsets\":[",
               st.record_count, st.file_size);
        for (size_t g = 0; g < st.nsplits; g++)
            printf("%s%" PRIu64, g ? "," : "", st.split_offsets[g]);
        printf("],\"cols\":[");
        for (size_t i = 0; i < st.ncols; i++) {
            const w2l__col_stats *s = &st.cols[i];
            printf("%s{\"field_id\":%" PRId32 ",\"value_count\":%" PRIu64 ",\"null_count\":%" PRIu64
                   ",\"column_size\":%" PRIu64 ",\"nan_count\":",
                   i ? "," : "", s->field_id, s->value_count, s->null_count, s->column_size);
            if (s->has_nan_count) printf("%" PRIu64, s->nan_count);
            else printf("null");
            printf(",\"lower\":");
            if (s->has_bounds) hex(s->lower, s->lower_len);
            else printf("null");
            printf(",\"upper\":");
            if (s->has_bounds) hex(s->upper, s->upper_len);
            else printf("null");
            putchar('}');
        }
        printf("]}}");
        w2l__file_stats_release(&st);
        fflush(stdout);
    }
    printf("]}\n");
    for (size_t k = 0; k < ncases; k++) pqc_free(&cases[k]);
    w2l_fileio_close(io);
    w2l_global_cleanup();
    return 0;
}
