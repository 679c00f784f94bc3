/*
 * File IO module, internal side: the built-in implementations' method tables.
 */
#ifndef W2L_IO_H
#define W2L_IO_H

#include "../common/common.h"

extern const w2l_fileio_methods w2l__fileio_local;
extern const w2l_fileio_methods w2l__fileio_mem;
extern const w2l_fileio_methods w2l__fileio_s3;
extern w2l__registry w2l__fileio_registry;

/* The file IO for path: the "fileio" key when set, else "s3" for an s3:// (s3a://, s3n://)
 * path, else NULL (the default, "local"). */
const char *w2l__fileio_name_for(const w2l_conf *conf, const char *path);
/* w2l_fileio_open() of w2l__fileio_name_for(conf, path). */
w2l_rc w2l__fileio_open_for(const w2l_conf *conf, const char *path, w2l_fileio **out,
                            w2l_error *err);

/* mkdir -p of the directory part of a local path ("a/b/c": a and a/b). */
w2l_rc w2l__local_make_parents(const char *path, w2l_error *err);

/* Joins dir and name with one '/', into fresh memory; NULL when out of memory. */
char *w2l__path_join(const char *dir, const char *name);
/* The conditional writes of file IO version 5 (w2l_fileio_methods): 1 when io has them.
 * get_tagged / put_if as the methods; W2L_MISUSE when io has none. */
int w2l__fileio_has_put_if(const w2l_fileio *io);
w2l_rc w2l__fileio_get_tagged(w2l_fileio *io, const char *path, void **data, size_t *len,
                              char tag[128], w2l_error *err);
w2l_rc w2l__fileio_put_if(w2l_fileio *io, const char *path, const void *data, size_t len,
                          const char *if_tag, w2l_error *err);
/* w2l_fileio_write_all without the close: *out holds the whole file, for the caller to
 * close (alone or with others, w2l_file_close_many) or abort. */
w2l_rc w2l__fileio_write_unclosed(w2l_fileio *io, const char *path, unsigned flags,
                                  const void *buf, size_t len, w2l_file **out, w2l_error *err);

/* Files written whole but not closed yet, closed together (w2l_file_close_many): a
 * commit attempt's manifests and list, a writer's files at a barrier. */
typedef struct w2l__file_batch {
    w2l_file **v;
    size_t n, cap;
} w2l__file_batch;
/* Holds f; when out of memory f is aborted. */
w2l_rc w2l__file_batch_add(w2l__file_batch *b, w2l_file *f, w2l_error *err);
/* Closes (publishes) the files held; the first failure. The array is kept. */
w2l_rc w2l__file_batch_close(w2l_fileio *io, w2l__file_batch *b, w2l_error *err);
/* Aborts the files still held and frees the array. */
void w2l__file_batch_release(w2l__file_batch *b);

#endif
