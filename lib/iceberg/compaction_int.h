/*
 * The compaction's insides shared by maintain.c (planning and writing it) and
 * compact_rebase.c (bringing it up to the table's current snapshot before it commits).
 */
#ifndef W2L_COMPACTION_INT_H
#define W2L_COMPACTION_INT_H

#include "iceberg.h"
#include "../parquet/parquet.h"

/* A set of paths, compared as local paths (open addressing; the strings are borrowed). */
typedef struct w2l__ice_pathset {
    const char **v;
    size_t n, cap;
} w2l__ice_pathset;
int w2l__ice_pathset_has(const w2l__ice_pathset *s, const char *p);
/* Adds p (borrowed); 1 when it was new, 0 when present, -1 when out of memory. */
int w2l__ice_pathset_add(w2l__ice_pathset *s, const char *p);
void w2l__ice_pathset_free(w2l__ice_pathset *s);

typedef struct filevec {
    w2l__ice_data_file *v;
    size_t n, cap;
} filevec;

/* Where rows of a rewritten file went: n rows from position from_pos of file from, in
 * order, to position to_pos of output file to (both paths in the compaction's arena; to is
 * the output data file's own path string). Deletes are sparse, so runs are long. */
typedef struct move {
    const char *from, *to;
    int64_t from_pos, to_pos, n;
} move;

struct w2l__ice_compaction {
    w2l__arena arena;
    int64_t base_id, base_seq;
    filevec data, dels;        /* new files: data files, position delete files */
    size_t ndels_own;          /* dels[0..ndels_own): written by prepare; the rest by rebase */
    const char **removed;      /* data and delete files of the base that go */
    unsigned char *removed_del; /* ... whether each is a delete file */
    size_t nremoved, capremoved;
    /* what the change commits (w2l__ice_compaction_change): prepare's files, as rebase
     * leaves them (prepare: every one) */
    w2l__ice_data_file *cdels;
    size_t ncdels;
    const char **cremoved;
    size_t ncremoved;
    int64_t rebased_rows;      /* deletes rebase wrote (in st.deletes_out) */
    move *moves;               /* sorted by from, from_pos once prepared */
    size_t nmoves, capmoves;
    w2l__pq_options pq;        /* for the delete files rebase writes (no shared codec) */
    w2l__ice_maint_stats st;
};

/* Appends df to the compaction's data or delete files (by its content). */
w2l_rc w2l__ice_compaction_push_out(w2l__ice_compaction *k, const w2l__ice_data_file *df,
                                    w2l_error *err);
/* Makes the change's lists: prepare's delete files but those superseded[i], then those
 * rebase wrote; prepare's removed files but those gone[i] (NULL: none), then extra. */
w2l_rc w2l__ice_compaction_lists(w2l__ice_compaction *k, const unsigned char *superseded,
                                 const unsigned char *gone, const char *const *extra,
                                 size_t nextra, w2l_error *err);

#endif
