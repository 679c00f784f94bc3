/*
 * Spilled key runs of the writer's key index (writer.key-index-memory, op_writer_keys.c):
 * a table's keys, each with the data file and row position of its live rows, written to a
 * local scratch file sorted by key, so that the index of a table larger than the memory
 * budget lives on disk and only a little of it in memory.
 *
 * A run is a file of records (key length u32, key, file u32, position i64), cut into blocks
 * of about KSPILL_BLOCK bytes; all records of one key are in one block. In memory it keeps
 * the first key of every block (a sparse index) and a Bloom filter of its keys' hashes (10
 * bits a key, 7 of them in one cache line: about 1.5% false positives), so a lookup of a
 * key the run lacks (an insert of a new key, the common case) reads no disk, and one of a
 * key it holds reads one block. A directory keeps at most 64 of its runs' files open (the
 * least recently used is closed, and opened again when used); a run's file is removed when
 * the run is freed, and the directory when it closes. The directory's name holds the host
 * and the process id ("w2l-keys-HOST-PID-XXXXXX"): one a killed process left behind is
 * removed by the next directory opened in the same parent on that host (nothing reads a
 * run again: an index is always loaded from the lake). Every error names the file.
 *
 * Keys are ordered by length, then bytes (w2l__krun_key_cmp). A run is written once, in
 * key order (w2l__krun_add), then read only; the writer merges the keys in memory with a
 * table's runs into a new one (op_writer_keys.c).
 *
 * Thread safety: a run and its directory belong to one writer thread.
 */
#ifndef W2L_PIPELINE_KEY_SPILL_H
#define W2L_PIPELINE_KEY_SPILL_H

#include "../common/common.h"

#define KSPILL_BLOCK 4096

typedef struct w2l__kdir w2l__kdir;
typedef struct w2l__krun w2l__krun;
typedef struct w2l__krun_iter w2l__krun_iter;

/* One record of a run; key borrowed until the next call on the run or iterator. */
typedef struct w2l__krec {
    const unsigned char *key;
    uint32_t len;
    uint32_t file;
    int64_t pos;
} w2l__krec;

/* A private directory (mode 0700) for the runs under parent (NULL or "": $TMPDIR, else
 * /tmp); those of this host's processes that are gone are removed first. */
w2l_rc w2l__kdir_open(const char *parent, w2l__kdir **out, w2l_error *err);
/* Removes the directory; its runs must be freed before. NULL is a no-op. */
void w2l__kdir_close(w2l__kdir *d);

/* A new run in d for at most nmax records, whose records name files below nfiles; what
 * names the table in errors. base (NULL: none) is the run it replaces: *inherited set when
 * the new run's filter starts as base's (so base's keys need not be set in it again). */
w2l_rc w2l__krun_create(w2l__kdir *d, const char *what, uint64_t nmax, size_t nfiles,
                        const w2l__krun *base, int *inherited, w2l__krun **out,
                        w2l_error *err);
/* Appends a record; keys come in w2l__krun_key_cmp order, a key's records together. h is
 * the key's hash (the same function for every lookup); filter: set the key in the filter
 * (0: it is there already, inherited). */
w2l_rc w2l__krun_add(w2l__krun *r, const unsigned char *key, uint32_t len, uint64_t h,
                     int filter, uint32_t file, int64_t pos, w2l_error *err);
/* The last block written: the run can be read. */
w2l_rc w2l__krun_finish(w2l__krun *r, w2l_error *err);
/* Closes the run (its file goes). NULL is a no-op. */
void w2l__krun_free(w2l__krun *r);

/* The records of key (hash h), in the order they were added, in *out (owned by the run,
 * valid until the next call on it); *n = 0 when the run lacks the key. */
w2l_rc w2l__krun_find(w2l__krun *r, const unsigned char *key, uint32_t len, uint64_t h,
                      const w2l__krec **out, size_t *n, w2l_error *err);

/* Reads the run's records in order: *end set after the last. */
w2l_rc w2l__krun_iter_open(w2l__krun *r, w2l__krun_iter **out, w2l_error *err);
w2l_rc w2l__krun_iter_next(w2l__krun_iter *it, w2l__krec *rec, int *end, w2l_error *err);
void w2l__krun_iter_free(w2l__krun_iter *it);

uint64_t w2l__krun_records(const w2l__krun *r);
uint64_t w2l__krun_disk_bytes(const w2l__krun *r);
uint64_t w2l__krun_mem_bytes(const w2l__krun *r);
/* Records naming file f (f below the nfiles the run was created with). */
uint64_t w2l__krun_file_refs(const w2l__krun *r, uint32_t f);

int w2l__krun_key_cmp(const unsigned char *a, uint32_t na, const unsigned char *b, uint32_t nb);

#ifdef W2L_TESTING
/* Test hook: when >= 0, the run write that many writes from now fails (EIO). */
extern long w2l__kspill_fail_write;
#endif

#endif
