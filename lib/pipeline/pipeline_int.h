/*
 * The pipeline runtime, private to lib/pipeline: the messages, operator instances (nodes)
 * and the pipeline object that pipeline.c (coordinator, source thread, lifecycle) and
 * pipeline_nodes.c (messages, routing, operator threads) share.
 */
#ifndef W2L_PIPELINE_INT_H
#define W2L_PIPELINE_INT_H

#include <stdatomic.h>

#include "../event/emit.h"
#include "ledger.h"
#include "metrics.h"
#include "ops.h"
#include "maintenance.h"
#include "owner.h"
#include "../common/chan.h"
#include "../common/thread.h"
#include "../source/source_int.h"

enum { M_ELEM = 1, M_BARRIER, M_END, M_NOP };
#define MAX_INFLIGHT 4

typedef struct msg {
    int kind;
    unsigned from;              /* upstream instance index */
    uint64_t ckpt;              /* BARRIER */
    w2l_element e;              /* ELEM: pointers into what the message owns */
    w2l__batch *batch;          /* a reference, when e.changes points into it */
    w2l_change *own_changes;    /* a split's change array (rows still in batch) */
    w2l__ddl_elem *ddl;
    w2l_schema *schema;         /* a reference, for SCHEMA and owned-copy changes */
    w2l__arena arena;           /* copies of strings and payloads */
    struct msg *next;
} msg;

typedef struct node {
    struct w2l_pipeline *p;
    w2l_operator_kind kind;
    unsigned index, ninputs;
    const w2l_operator_methods *m;
    w2l_operator *op;
    w2l__chan *in;
    thrd_t thr;
    int started;
    /* alignment */
    uint64_t aligning;
    unsigned seen, ends;
    unsigned char *blocked;
    msg **held_head, **held_tail;
    /* side queue for upstream answers */
    mtx_t side_mtx;
    msg *side_head, *side_tail;
    /* committers: checkpoints completed (notified) so far */
    uint64_t notified;
    uint64_t last_barrier; /* newest checkpoint this instance acknowledged */
    atomic_llong beat_ms;  /* wall ms of its loop's last turn; 0: not running (healthz) */
    msg *cur; /* the message being processed */
    /* DDL handlers: tables renamed in this checkpoint keep the writers of their old name
     * until the barrier (pipeline_nodes.c, writers_for) */
    struct ralias *aliases;
} node;

typedef struct inflight {
    uint64_t id;
    int64_t placed_ns;          /* when its barrier was placed (w2l__mono_ns) */
    unsigned acks;
    int sealed;
} inflight;

struct w2l_collector { node *n; };

struct w2l_pipeline {
    w2l_conf *conf;
    w2l_state *st;
    w2l_source *src;            /* NULL: the host pushes (push) */
    uint64_t src_completed;     /* newest checkpoint the source was told complete (its thread) */
    w2l_emitter *em;
    struct w2l__routes *routes; /* route.* (route.h), for the DDL handler a table goes to */
    char group_buf[600];        /* group_of()'s answer (source thread) */
    unsigned nddl, nwriter, ncommit;
    node *nodes; /* ddl, then writers, then committers */
    node *ddl, *writer, *committer;
    size_t chan_cap, batch_rows;
    int64_t interval_ms;
    int until_caught_up;
    struct {                    /* w2l_pipeline_resync(): one request at a time (resync.c) */
        mtx_t mu;
        cnd_t cv;
        int asked, answered;
        char ns[256], table[256];
        w2l_rc rc;
        w2l_error err;
    } resync;
    /* coordinator */
    mtx_t mtx;
    cnd_t cv;
    uint64_t restored;          /* sealed checkpoint restored at new(); 0 fresh */
    uint64_t next_ckpt;
    inflight fl[MAX_INFLIGHT];
    unsigned nfl;
    uint64_t sealed;            /* newest sealed */
    atomic_uint_fast64_t sealed_pub; /* the same, read by committers without the lock */
    uint64_t committed;         /* newest every committer notified */
    unsigned acks_needed;
    int64_t last_trigger_ms;    /* w2l__coarse_ms() of the last barrier placed */
    atomic_int ckpt_requested;
    w2l__ledger *ledger;        /* a shared source (ledger.h): table positions; else NULL */
    atomic_int stop;
    atomic_int failed;
    atomic_int commit_failed;   /* the check-commit sink has spoken (once per pipeline) */
    w2l_error first_err;
    int started, done;
    thrd_t src_thr;
    int src_started;
    w2l_rc src_rc;
    int push; /* no source: the host pushes */
    uint64_t retain;
    atomic_llong cpu_ns[4]; /* CPU time by stage: source, ddl, writers, committers */
    w2l__metrics *metrics;
    char *restored_pos;         /* the source position of the restored checkpoint, or NULL */
    w2l__owner *owner;          /* orders table operations and commits (owner.h) */
    w2l__maint *maint;          /* table maintenance beside ingestion (maintenance.h) */
    /* completeness (complete.h): each placed checkpoint's mark until it is committed */
    struct w2l__ckpt_mark { uint64_t id; int64_t ms; } *marks;
    size_t nmarks, capmarks;    /* under mtx */
    struct w2l__completer *completer; /* writes the job file; NULL: none */
    /* the operations endpoint (endpoint.c) */
    atomic_llong src_beat_ms;   /* the source thread's last loop turn; 0: not running */
    atomic_ullong src_polls;    /* next() calls that returned */
    struct w2l__http_server *http; /* metrics.listen; NULL: not serving */
    int64_t readyz_max_lag_ms, healthz_deadline_ms;
    size_t max_tables;          /* metrics.max-tables */
    /* the last run's record (lastrun.h) */
    int64_t began_ms;           /* when w2l_pipeline_new() began */
    char *job_id;               /* the job, as the committers name it; NULL: unknown */
    int recorded_start;         /* "running" was written: the end is written too */
    char *prev_run;             /* the record before ours (lastrun.h); NULL: none */
    size_t prev_run_len;
    /* commit lag: the oldest change not committed yet */
    atomic_llong pend_ms;       /* wall ms of the oldest change behind no barrier; 0: none */
    struct w2l__pend { uint64_t id; int64_t since_ms; } *pends; /* per placed checkpoint not
                                   committed yet, the oldest change it holds (under mtx) */
    size_t npends, cappends;
    /* one active process per job (ha.c) */
    atomic_int ha_role;         /* W2L__HA_* */
    w2l_state_holder awaited;   /* whom a standby waits for (under mtx) */
    int64_t renew_ms;           /* ha.renew-interval */
    atomic_llong lease_end_ms;  /* the lease's end as last renewed; 0: no lease */
    mtx_t ha_mu;                /* ha_stop, with ha_cv */
    cnd_t ha_cv;
    int ha_stop, ha_started;
    thrd_t ha_thr;              /* the lease renewal thread */
};

/* ha.c: standby, lease renewal and fencing */
enum { W2L__HA_ACTIVE = 0, W2L__HA_STANDBY, W2L__HA_TAKING_OVER };
/* The state store is another's and ha.standby is set: waits until it can be taken (the
 * holder ended, or its lease lapsed), serving the endpoint as a standby meanwhile; then
 * W2L_OK with the store taken. W2L_CANCELLED once w2l__ha_stop was called. */
w2l_rc w2l__ha_stand_by(w2l_pipeline *p, const char *job, w2l_error *err);
/* With the store taken: renews a lease every ha.renew-interval on a thread of its own,
 * failing the pipeline once another took it. No thread for a lock that needs none. */
w2l_rc w2l__ha_start(w2l_pipeline *p, w2l_error *err);
void w2l__ha_stop(w2l_pipeline *p); /* ends the wait or the renewals; idempotent */
/* Before a commit: W2L_OK while the lease is this process's (by its clock well within it,
 * else renewed now), W2L_BUSY naming the new holder once it is not. */
w2l_rc w2l__ha_fence(w2l_pipeline *p, w2l_error *err);
/* A pipeline failing while it holds a lease: when the lease was taken over meanwhile,
 * that is the cause to report (a paused process's source or commit fails because the new
 * holder runs), so *e becomes the fenced error, with the first one after it. Asked when
 * the first error is recorded, and again once every thread has ended. */
void w2l__ha_explain(w2l_pipeline *p, w2l_error *e);
/* The endpoint's answer while not active (standby, taking over): 1 when it answered
 * path (its code into *rc), 0 to leave it to the active pipeline's answers. */
int w2l__ha_answer(w2l_pipeline *p, const char *path, size_t pl, int *status,
                   const char **content_type, w2l_buf *body, w2l_rc *rc, w2l_error *err);

/* pipeline.c: failure, the coordinator, CPU accounting */

/* How long the oldest change read and not yet committed to its table has waited, in ms;
 * 0 when every change read is committed. Any thread. */
int64_t w2l__pipeline_commit_lag_ms(w2l_pipeline *p);

/* Records the first error (made FATAL), raises the failed flag, wakes every waiter and
 * closes every channel. Any thread. */
void w2l__pipeline_fail(w2l_pipeline *p, const w2l_error *e);
/* The error that stopped the pipeline into err, and its code (W2L_CANCELLED without one). */
w2l_rc w2l__pipeline_first_error(w2l_pipeline *p, w2l_error *err);
/* One participant finished checkpoint id; the last one seals it and wakes the committers. */
void w2l__pipeline_ack(w2l_pipeline *p, uint64_t id);
/* Committer n committed checkpoint id (notify_complete returned W2L_OK after secs). */
void w2l__pipeline_commit_done(w2l_pipeline *p, node *n, uint64_t id, double secs);
/* Adds the calling thread's CPU time to stage k (0 source, else the operator kind). */
void w2l__pipeline_account_cpu(w2l_pipeline *p, int k);

/* pipeline_nodes.c: messages, operator threads, building the nodes */

msg *w2l__msg_new(int kind); /* NULL when out of memory */
void w2l__msg_free(msg *m);  /* NULL: no-op */
/* Copies element e into a new message (names, payload, schema reference, DDL). */
w2l_rc w2l__msg_from_element(const w2l_element *e, unsigned from, msg **out, w2l_error *err);
/* Sends m to node n (blocking: backpressure). Takes ownership, also on failure. */
w2l_rc w2l__msg_send(w2l_pipeline *p, node *n, msg *m, w2l_error *err);
/* An operator instance's thread (thrd_create's function; arg: the node). */
int w2l__node_main(void *arg);
/* Committer n: commits every checkpoint sealed since its last one, in order. */
w2l_rc w2l__node_commit_sealed(node *n, w2l_error *err);
/* Builds p->nodes from the configured operators; w2l__nodes_free undoes it (also partly
 * built). */
w2l_rc w2l__nodes_make(w2l_pipeline *p, w2l_error *err);
void w2l__nodes_free(w2l_pipeline *p);

/* endpoint.c: the operations endpoint (metrics.listen) */

/* Reads the metrics.*, readyz.*, healthz.* keys and, when metrics.listen is set, serves. */
w2l_rc w2l__endpoint_start(w2l_pipeline *p, w2l_error *err);
/* Stops serving (before anything the handler reads goes). */
void w2l__endpoint_stop(w2l_pipeline *p);

/* resync.c: hands a waiting w2l_pipeline_resync() request to the source (source thread,
 * between transactions). */
void w2l__pipeline_resync_serve(w2l_pipeline *p);

#endif
