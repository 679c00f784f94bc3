/*
 * The compactions a pipeline committed, told to its writers (delete mode "position").
 *
 * A writer's key index names rows by data file and position. When a table's committer
 * commits a compaction, the rows of the data files it removed sit at other positions in the
 * files it added. The committer posts the rewrite here; each writer takes every rewrite
 * before its next element (w2l__rewrites_take) and moves the index entries of the removed
 * files onto the added ones, then records the first checkpoint whose deletes it made
 * after that. Deletes made before — in checkpoints sealed or in flight, or pending in the
 * writer — still name removed files: until every writer took the rewrite and the table's
 * checkpoints reached that mark, the committer moves such deletes onto the added files
 * before it commits them (w2l__rewrites_pending, w2l__ice_rebase_pos_deletes). A rewrite
 * is forgotten once its table's committer committed past the mark.
 *
 * Thread safety: every function is safe from any thread.
 */
#ifndef W2L_PIPELINE_REWRITES_H
#define W2L_PIPELINE_REWRITES_H

#include "../common/common.h"

typedef struct w2l__rewrites w2l__rewrites;

/* nwriters writers take every rewrite. */
w2l__rewrites *w2l__rewrites_new(unsigned nwriters);
void w2l__rewrites_free(w2l__rewrites *r); /* NULL is a no-op */

/* The committer of ns.table committed a compaction: removed data files went, added ones
 * hold their rows (the strings are copied). */
w2l_rc w2l__rewrites_post(w2l__rewrites *r, const char *ns, const char *table,
                          const char *const *removed, size_t nremoved, const char *const *added,
                          size_t nadded, w2l_error *err);

/* The newest rewrite's number (0: none): a writer that has taken it has nothing to do. */
uint64_t w2l__rewrites_newest(w2l__rewrites *r);

/* The rewrites after *seen, one call of fn each, in order; then *seen is the newest taken.
 * first_clean: the first checkpoint whose deletes the writer makes from now on. fn
 * returning an error stops (the rewrite is not taken). */
w2l_rc w2l__rewrites_take(w2l__rewrites *r, uint64_t *seen, uint64_t first_clean,
                          w2l_rc (*fn)(void *ctx, const char *ns, const char *table,
                                       const char *const *removed, size_t nremoved,
                                       const char *const *added, size_t nadded,
                                       w2l_error *err),
                          void *ctx, w2l_error *err);

/* Committer side, before committing checkpoint ckpt of ns.table: 1 when a rewrite of the
 * table may have deletes in it that name removed files; then *onto (fresh array of fresh
 * strings, w2l__rewrites_onto_free) holds the files added by those rewrites. Rewrites of
 * the table all writers took before ckpt are forgotten. */
int w2l__rewrites_pending(w2l__rewrites *r, const char *ns, const char *table, uint64_t ckpt,
                          char ***onto, size_t *nonto);
void w2l__rewrites_onto_free(char **onto, size_t n);

#endif
