/*
 * The table owner of one pipeline (w2l-design(7) section 10): the one place through which
 * every change of a table's catalog state passes, in source order.
 *
 * The DDL handler never writes the catalog. It applies a statement to its own in-memory
 * copy of the table (so that rows after it map onto the new schema at once) and records a
 * table operation — create, schema, rename, drop (table_ops.h) — for the checkpoint in
 * progress. At the barrier it hands the checkpoint's operations to the owner and stores
 * every operation not yet applied in its checkpoint state ("ddl/ops/<index>"), so a sealed
 * checkpoint alone holds what is left to apply.
 *
 * When checkpoint K is sealed the committers commit it, and the owner orders their work:
 *
 *     data of checkpoints < K  (every committer)
 *       -> the operations of K (committer 0, one at a time, in source order)
 *       -> data of K           (every committer)
 *
 * Nothing is waited for in a checkpoint without operations. So nothing after the last
 * sealed checkpoint ever reaches the lake: a restart that replays the source from there
 * applies each statement exactly once, and a commit can never run on a table that a
 * statement of the same pipeline dropped, re-created or renamed under it.
 *
 * After a restart the committers first commit the restored checkpoint (its data and its
 * operations); the DDL handler waits for that (w2l__owner_wait_restored) before it reads
 * the catalog, so what it reads is exactly the state of the restored checkpoint.
 *
 * Thread safety: every function is safe from any operator thread. Built-in operators find
 * their pipeline's owner with w2l__owner_current() on their own thread.
 */
#ifndef W2L_PIPELINE_OWNER_H
#define W2L_PIPELINE_OWNER_H

#include "../common/common.h"
#include "../iceberg/iceberg.h"

typedef struct w2l__owner w2l__owner;

/* conf is borrowed for the owner's life (its catalog, file IO, commit-retries); ncommit
 * committers; restored = the sealed checkpoint the pipeline restarts from (0: fresh). */
w2l__owner *w2l__owner_new(const w2l_conf *conf, unsigned ncommit, uint64_t restored);
/* The pipeline's source is shared (ledger.h): a table another member created or changed
 * meanwhile fails the operation with W2L_CONFLICT (table_ops.h). */
void w2l__owner_set_shared(w2l__owner *o);
void w2l__owner_free(w2l__owner *o); /* NULL is a no-op */

/* After a restart (and in w2l recover): the job id and the operations not yet applied
 * that the restored checkpoint holds. */
w2l_rc w2l__owner_restore(w2l__owner *o, w2l_state *st, w2l_error *err);

/* The pipeline failed: every wait returns W2L_CANCELLED from now on. */
void w2l__owner_abort(w2l__owner *o);

/* The owner of the pipeline whose operator runs on the calling thread (NULL outside). */
void w2l__owner_set_current(w2l__owner *o);
w2l__owner *w2l__owner_current(void);

/* ---- DDL handler side ---- */

/* The operations (a JSON array, len bytes) handler `handler` recorded for checkpoint ckpt.
 * Adding the same (ckpt, handler) twice keeps the first. */
w2l_rc w2l__owner_add_ops(w2l__owner *o, uint64_t ckpt, unsigned handler, const char *ops,
                          size_t len, w2l_error *err);
/* Every operation of `handler` not yet applied, as the state value of "ddl/ops/<handler>":
 * [{"checkpoint":K,"ops":[...]}, ...] in checkpoint order ("[]" when none). */
w2l_rc w2l__owner_pending_ops(w2l__owner *o, unsigned handler, w2l_buf *out, w2l_error *err);
/* Blocks until the committers committed the restored checkpoint. */
w2l_rc w2l__owner_wait_restored(w2l__owner *o, w2l_error *err);
/* Blocks until every committer committed every checkpoint up to ckpt (and the restored
 * one). */
w2l_rc w2l__owner_wait_done(w2l__owner *o, uint64_t ckpt, w2l_error *err);

/* ---- the runtime, around each committer's notify_complete ---- */

/* The oldest checkpoint with operations not yet applied; 0 when none. */
uint64_t w2l__owner_first_ops(w2l__owner *o);
/* Before committer `committer` commits ckpt: when operations of checkpoints <= ckpt wait,
 * committer 0 waits until every committer committed up to ckpt - 1 and applies them (in
 * checkpoint, then handler, then source order); the others wait until that is done.
 * Returns at once in a checkpoint without operations. A failure stops the others' waits. */
w2l_rc w2l__owner_before_commit(w2l__owner *o, unsigned committer, uint64_t ckpt, w2l_error *err);
/* Committer `committer` has committed everything of its own up to ckpt. */
void w2l__owner_data_done(w2l__owner *o, unsigned committer, uint64_t ckpt);
/* Counts applied batches of operations: a committer whose count moved drops the cached
 * handles of the tables they touched before its next commit. */
uint64_t w2l__owner_generation(w2l__owner *o);
/* Calls fn with each table (old and new names of a rename) that the operations of the
 * generations after `since` touched, and returns 1; 0 (fn not called for all) when the log
 * no longer reaches back that far: then every handle is to be dropped. A table may come
 * more than once. Under the owner's lock: fn must not call the owner. */
int w2l__owner_touched_since(w2l__owner *o, uint64_t since,
                             void (*fn)(void *ctx, const char *ns, const char *table), void *ctx);

/* ---- table claims (table_claim.c): one job writes a table ----
 *
 * A table belongs to the job of the newest snapshot of its history that carries
 * w2l.job-id (other writers' snapshots and w2l's maintenance carry none and change
 * nothing), else to the job its W2L_CLAIM_CREATOR_KEY property names (a table created and
 * not yet committed to), else to nobody. A job claims a table before it writes it: at the
 * DDL handler's and a writer's first load, before each commit (and retry) of a checkpoint
 * by a committer. Another job's table is W2L_BUSY, naming the table and both jobs and how
 * to hand it over, unless job.adopt-tables names it ("db.t,db2.*" or "*"): the adopting
 * job's next commit makes it the owner. The members of a consumer group (job id + "-m" +
 * 12 hex digits) are one job. */
#define W2L_CLAIM_CREATOR_KEY "w2l.created-by-job"
typedef struct w2l__claims w2l__claims;

/* The claims of job (copied); job.adopt-tables from conf (NULL: none), W2L_CONFIG when
 * malformed. */
w2l_rc w2l__claims_new(const w2l_conf *conf, const char *job, w2l__claims **out,
                       w2l_error *err);
void w2l__claims_free(w2l__claims *c); /* NULL is a no-op */
/* The job the claims are made for (borrowed); NULL for NULL. */
const char *w2l__claims_job(const w2l__claims *c);
/* The owner of the table with metadata m (borrowed from m); NULL when none. */
const char *w2l__claims_owner(const w2l__ice_meta *m);
/* 1 when job ids a and b name one job (equal, or members of one consumer group). */
int w2l__claims_same_job(const char *a, const char *b);
/* Before this job writes ns.table, whose metadata (as the caller loaded it) is m: W2L_OK
 * when it is this job's, nobody's or adopted; W2L_BUSY otherwise. Cached per table and
 * snapshot: a table that has not moved since its last claim costs a lookup. c or m NULL:
 * W2L_OK. Thread-safe. */
w2l_rc w2l__claims_check(w2l__claims *c, const char *ns, const char *table,
                         const w2l__ice_meta *m, w2l_error *err);
/* The pipeline's claims (made by w2l__owner_restore, for the job id it found); NULL
 * before. */
w2l__claims *w2l__owner_claims(w2l__owner *o);

#endif
