/*
 * Uploads every file below a local directory to an S3 prefix through the library's "s3"
 * file IO (public API only), THREADS files at a time, as `aws s3 cp --recursive` does:
 * the store's way in without the rest of the pipeline. Prints {"bytes":N,"files":N,
 * "seconds":S}. The s3.* keys come from the environment as the CLI's --config would:
 * W2L_S3_ENDPOINT (s3.endpoint); credentials from the usual AWS variables.
 *
 *   s3_copy SRC_DIR s3://BUCKET/PREFIX [THREADS]
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include <w2l.h>

static char **files;
static size_t nfiles, capfiles, srclen;
static atomic_size_t next;
static atomic_ullong bytes;
static const char *dst;
static w2l_conf *conf;

static int add(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)f;
    if (flag != FTW_F) return 0;
    if (nfiles == capfiles) {
        capfiles = capfiles ? capfiles * 2 : 64;
        files = realloc(files, capfiles * sizeof *files);
        if (!files) return 1;
    }
    files[nfiles++] = strdup(path);
    return 0;
}

static int worker(void *arg)
{
    (void)arg;
    w2l_error e = { 0 };
    w2l_fileio *local, *s3;
    if (w2l_fileio_open("local", conf, &local, &e) || w2l_fileio_open("s3", conf, &s3, &e)) {
        fprintf(stderr, "s3_copy: %s\n", e.msg);
        exit(1);
    }
    for (size_t i; (i = atomic_fetch_add(&next, 1)) < nfiles;) {
        void *data;
        size_t len;
        char to[4096];
        snprintf(to, sizeof to, "%s%s", dst, files[i] + srclen);
        if (w2l_fileio_read_all(local, files[i], &data, &len, &e) ||
            w2l_fileio_write_all(s3, to, W2L_CREATE_REPLACE, data, len, &e)) {
            fprintf(stderr, "s3_copy: %s\n", e.msg);
            exit(1);
        }
        w2l_free(data);
        atomic_fetch_add(&bytes, len);
    }
    w2l_fileio_close(local);
    w2l_fileio_close(s3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: s3_copy SRC_DIR s3://BUCKET/PREFIX [THREADS]\n");
        return 2;
    }
    int nt = argc > 3 ? atoi(argv[3]) : 10;
    if (nt < 1 || nt > 64) nt = 10;
    srclen = strlen(argv[1]);
    dst = argv[2];
    w2l_error e = { 0 };
    if (w2l_global_init(&e)) return fprintf(stderr, "s3_copy: %s\n", e.msg), 1;
    conf = w2l_conf_new();
    const char *ep = getenv("W2L_S3_ENDPOINT");
    if (!conf || (ep && w2l_conf_set(conf, "s3.endpoint", ep, &e)))
        return fprintf(stderr, "s3_copy: %s\n", e.msg), 1;
    if (nftw(argv[1], add, 16, FTW_PHYS) != 0) return perror("s3_copy: nftw"), 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    thrd_t th[64];
    for (int i = 0; i < nt; i++) thrd_create(&th[i], worker, NULL);
    for (int i = 0; i < nt; i++) thrd_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("{\"bytes\":%llu,\"files\":%zu,\"seconds\":%.3f}\n", (unsigned long long)bytes, nfiles,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    for (size_t i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    w2l_conf_free(conf);
    w2l_global_cleanup();
    return 0;
}
