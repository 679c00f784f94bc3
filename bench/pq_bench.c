/*
 * Parquet encoder benchmark on the "orders" data set.
 *   pq_bench csv N SEED FILE          writes the data set as CSV (to check its sha256 and to
 *                                     load it into DuckDB)
 *   pq_bench encode N SEED FILE       encodes N rows to ZSTD (level 3) Parquet with the
 *                                     library's writer, single thread; prints one JSON line
 *                                     {"rows","seconds","bytes"}. Rows are generated in
 *                                     batches of 64Ki into memory outside the timed region;
 *                                     only the writer's calls (write_rows, close) are timed.
 *   pq_bench encode N SEED FILE T     the same over T threads, as a table's rows spread over
 *                                     T writers (row i to thread i mod T, each its own file,
 *                                     FILE.0 ... FILE.T-1): every thread's rows are made
 *                                     first, then all encode at once; "seconds" is the wall
 *                                     time from the start to the last file closed, "bytes"
 *                                     the sum of the files.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orders.h"
#include "common/common.h"
#include "parquet/parquet.h"

#define BATCH 65536
#define NCOLS 10

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const w2l_error *err)
{
    fprintf(stderr, "pq_bench: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static void field(w2l_schema *s, int32_t id, const char *name, const char *type, int req)
{
    w2l_error err;
    w2l_type t;
    if (w2l_type_parse(type, &t, &err) != W2L_OK || w2l_schema_add_field(s, id, name, t, req, &err) != W2L_OK)
        die(name, &err);
}

/* One row of the data set as the writer's values (note text copied to note). */
static void fill(w2l_value *v, const order_row *row, char *note)
{
    memset(v, 0, NCOLS * sizeof *v);
    v[0].v.i64 = row->id;
    v[1].v.i32 = row->customer_id;
    v[2].v.bytes.ptr = orders_status[row->status];
    v[2].v.bytes.len = strlen(orders_status[row->status]);
    v[3].v.dec.lo = (uint64_t)row->cents;
    v[4].v.i32 = row->qty;
    v[5].v.i64 = row->created_at;
    v[6].v.i64 = row->updated_at;
    if (row->note_null) {
        v[7].is_null = 1;
    } else {
        memcpy(note, row->note, row->note_len);
        v[7].v.bytes.ptr = note;
        v[7].v.bytes.len = row->note_len;
    }
    v[8].v.i32 = row->flag;
    v[9].v.f64 = row->score;
}

typedef struct part {
    const w2l_schema *s;
    w2l_fileio *io;
    char path[512];
    w2l_value *vals;
    size_t n;
    pthread_barrier_t *go;
    double done; /* when its file was closed */
    uint64_t bytes;
} part;

static void *encode_part(void *arg)
{
    part *p = arg;
    w2l_error err;
    w2l__pq_writer *w;
    pthread_barrier_wait(p->go);
    if (w2l__pq_writer_open(p->io, p->path, W2L_CREATE_REPLACE, p->s, NULL, NULL, 0, &w, &err) !=
        W2L_OK)
        die("open", &err);
    for (size_t at = 0; at < p->n; at += BATCH) {
        size_t b = p->n - at < BATCH ? p->n - at : BATCH;
        if (w2l__pq_write_rows(w, p->vals + at * NCOLS, b, &err) != W2L_OK) die("write", &err);
    }
    w2l__file_stats st;
    if (w2l__pq_writer_close(w, &st, &err) != W2L_OK) die("close", &err);
    p->done = now();
    p->bytes = st.file_size;
    w2l__file_stats_release(&st);
    return NULL;
}

/* pq_bench encode N SEED FILE T (see the top of the file). */
static void encode_threads(const w2l_schema *s, w2l_fileio *io, long n, uint64_t seed,
                           const char *file, int nt)
{
    part *ps = calloc((size_t)nt, sizeof *ps);
    pthread_t *th = calloc((size_t)nt, sizeof *th);
    char **notes = calloc((size_t)nt, sizeof *notes);
    pthread_barrier_t go;
    if (!ps || !th || !notes || pthread_barrier_init(&go, NULL, (unsigned)nt + 1)) die("malloc", NULL);
    for (int k = 0; k < nt; k++) {
        size_t share = (size_t)(n / nt + (k < n % nt));
        ps[k].s = s;
        ps[k].io = io;
        ps[k].go = &go;
        snprintf(ps[k].path, sizeof ps[k].path, "%s.%d", file, k);
        ps[k].vals = calloc(share ? share * NCOLS : 1, sizeof *ps[k].vals);
        notes[k] = malloc(share ? share * 96 : 1);
        if (!ps[k].vals || !notes[k]) die("malloc", NULL);
    }
    orders_gen g;
    orders_init(&g, seed);
    order_row row;
    for (long i = 0; i < n; i++) {
        part *p = &ps[i % nt];
        orders_row(&g, &row);
        fill(p->vals + p->n * NCOLS, &row, notes[i % nt] + p->n * 96);
        p->n++;
    }
    for (int k = 0; k < nt; k++)
        if (pthread_create(&th[k], NULL, encode_part, &ps[k])) die("thread", NULL);
    pthread_barrier_wait(&go);
    double t0 = now(), last = t0;
    uint64_t bytes = 0;
    for (int k = 0; k < nt; k++) {
        pthread_join(th[k], NULL);
        if (ps[k].done > last) last = ps[k].done;
        bytes += ps[k].bytes;
        free(ps[k].vals);
        free(notes[k]);
    }
    printf("{\"rows\":%ld,\"seconds\":%.6f,\"bytes\":%llu,\"threads\":%d}\n", n, last - t0,
           (unsigned long long)bytes, nt);
    pthread_barrier_destroy(&go);
    free(ps);
    free(th);
    free(notes);
}

int main(int argc, char **argv)
{
    if (argc != 5 && !(argc == 6 && strcmp(argv[1], "encode") == 0)) {
        fprintf(stderr, "usage: pq_bench csv|encode N SEED FILE [THREADS]\n");
        return 2;
    }
    long n = atol(argv[2]);
    uint64_t seed = strtoull(argv[3], NULL, 10);
    orders_gen g;
    orders_init(&g, seed);
    order_row row;
    if (strcmp(argv[1], "csv") == 0) {
        FILE *f = fopen(argv[4], "w");
        if (!f) die(argv[4], NULL);
        static char buf[1 << 20];
        setvbuf(f, buf, _IOFBF, sizeof buf);
        fputs("id,customer_id,status,amount,qty,created_at,updated_at,note,flag,score\n", f);
        for (long i = 0; i < n; i++) {
            orders_row(&g, &row);
            orders_csv(f, &row);
        }
        return fclose(f) == 0 ? 0 : 1;
    }
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) die("init", &err);
    w2l_schema *s = w2l_schema_new(0);
    field(s, 1, "id", "long", 1);
    field(s, 2, "customer_id", "int", 1);
    field(s, 3, "status", "string", 1);
    field(s, 4, "amount", "decimal(12,2)", 1);
    field(s, 5, "qty", "int", 1);
    field(s, 6, "created_at", "timestamp", 1);
    field(s, 7, "updated_at", "timestamptz", 1);
    field(s, 8, "note", "string", 0);
    field(s, 9, "flag", "boolean", 1);
    field(s, 10, "score", "double", 1);
    w2l_fileio *io;
    if (w2l_fileio_open("local", NULL, &io, &err) != W2L_OK) die("fileio", &err);
    if (argc == 6) {
        int nt = atoi(argv[5]);
        if (nt < 1 || nt > 64) die("threads: 1 to 64", NULL);
        encode_threads(s, io, n, seed, argv[4], nt);
        w2l_schema_unref(s);
        w2l_fileio_close(io);
        w2l_global_cleanup();
        return 0;
    }
    w2l_value *vals = calloc((size_t)BATCH * NCOLS, sizeof *vals);
    char *notes = malloc((size_t)BATCH * 96);
    if (!vals || !notes) die("malloc", NULL);
    double t = 0, t0 = now();
    w2l__pq_writer *w;
    if (w2l__pq_writer_open(io, argv[4], W2L_CREATE_REPLACE, s, NULL, NULL, 0, &w, &err) != W2L_OK)
        die("open", &err);
    t += now() - t0;
    for (long done = 0; done < n;) {
        size_t b = (size_t)(n - done < BATCH ? n - done : BATCH);
        for (size_t i = 0; i < b; i++) {
            orders_row(&g, &row);
            fill(vals + i * NCOLS, &row, notes + i * 96);
        }
        t0 = now();
        if (w2l__pq_write_rows(w, vals, b, &err) != W2L_OK) die("write", &err);
        t += now() - t0;
        done += (long)b;
    }
    w2l__file_stats st;
    t0 = now();
    if (w2l__pq_writer_close(w, &st, &err) != W2L_OK) die("close", &err);
    t += now() - t0;
    printf("{\"rows\":%ld,\"seconds\":%.6f,\"bytes\":%llu}\n", n, t, (unsigned long long)st.file_size);
    w2l__file_stats_release(&st);
    free(vals);
    free(notes);
    w2l_schema_unref(s);
    w2l_fileio_close(io);
    w2l_global_cleanup();
    return 0;
}
