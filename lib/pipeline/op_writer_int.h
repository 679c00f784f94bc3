/*
 * The writer operator's insides (op_writer.c holds the operator and describes it): its
 * per-table state and what op_writer.c and op_writer_files.c (the table's files) share.
 */
#ifndef W2L_OP_WRITER_INT_H
#define W2L_OP_WRITER_INT_H

#include "../event/emit.h"
#include "ops.h"
#include "../conf/conf.h"
#include "../parquet/parquet.h"

enum { POL_PK = 0, POL_FULL_ROW, POL_APPEND_ONLY, POL_FAIL };
#define CHUNK_ROWS 2048
#define KEY_AHEAD 8 /* changes looked ahead in the key map (op_writer.c, key_ahead) */

/* The key map (op_writer.c, key_slot): open addressing, linear probing, load at most 1/2;
 * a slot is the key's 32-bit hash << 32 | its index in ks + 1 (0: empty), so a probe reads
 * one 8-byte word and compares keys only on a hash match. A key of at most KEY_INLINE bytes
 * (one integer, date, timestamp or double column: 12) is held in its kslot, so a lookup
 * reads no other memory and an insert copies nothing into the key arena. */
#define KEY_INLINE 16
typedef struct kslot {
    union {
        const unsigned char *p;   /* len > KEY_INLINE: in the table's key arena */
        unsigned char in[KEY_INLINE]; /* len <= KEY_INLINE */
    } key;
    uint32_t len;
    int32_t head;             /* newest live row with this key (index into ke), -1: none */
} kslot;

typedef struct kent {
    int64_t pos;
    uint32_t file;            /* index into paths */
    int32_t next;             /* older live row with the same key (full-row tables), -1 */
} kent;

typedef struct pdel {
    uint32_t file;            /* index into paths; replaced by the path's rank when sorting */
    int64_t pos;
} pdel;

/* One partition of a table in this checkpoint (op_writer_parts.c): its values, its open
 * files, and the changes of the current element waiting for them. An unpartitioned table
 * has one, with no values. */
/* A partition spec with its fields' source columns in the table's schema. */
typedef struct wspec {
    w2l__ice_spec *spec;      /* NULL: unpartitioned (no SCHEMA named a spec) */
    long *src;                /* index in schema of each field's source column; -1: gone */
} wspec;

typedef struct wpart {
    const w2l__ice_spec *spec; /* the spec it is a partition of; NULL: unpartitioned */
    w2l_value *vals;          /* one per spec field (result types); bytes in the part arena */
    char *dir;                /* "a=1/b_day=2024-01-02"; "" unpartitioned (part arena) */
    const unsigned char *key; /* the values encoded (part arena), for lookups */
    size_t klen;
    uint64_t h;
    w2l__pq_writer *dw, *ew;
    char *epath;              /* ew's path (malloc'd) */
    uint32_t dpath;           /* dw's file: index into the table's paths */
    uint64_t drows;           /* rows already handed to dw */
    uint32_t *rows, *dels;    /* pending: indices into the element's changes */
    size_t nrows, ndels, rcap, dcap;
    uint32_t idx;             /* its index in the table's parts */
    uint64_t used;            /* the table's clock when a change last went to it */
    int touched;              /* in the table's touched list */
} wpart;

typedef struct tstate {
    char *ns, *table, *fq;    /* fq: "ns.table" for messages and per-table conf */
    uint64_t h;
    char *location;           /* NULL until SCHEMA (or a catalog load) gives it */
    char uuid[40];            /* the table incarnation (Iceberg table-uuid) SCHEMA named; "" */
    w2l_schema *schema;       /* one reference; NULL until SCHEMA or the first change */
    w2l_schema *eq_schema;    /* the equality columns, same field ids */
    int32_t *eq_ids;
    long *eq_idx;             /* index of each equality column in schema */
    w2l_type_id *eq_type;     /* the type of each (encode_key) */
    size_t neq;
    int policy;
    int upsert;               /* an INSERT also deletes its key's older rows (SCHEMA "upsert":
                                 a route's target, whose sources may write a key again),
                                 and so does an UPDATE_AFTER that moved its key */
    w2l_buf ubkey;            /* upsert: the key of the last UPDATE_BEFORE (encode_key) */
    int ub_set;               /* the change just before was that UPDATE_BEFORE */
    uint64_t target;
    /* partitioning (op_writer_parts.c) */
    wspec spec;               /* the table's default spec (SCHEMA) */
    wspec *dspecs;            /* older specs holding data: equality deletes go there too */
    size_t ndspecs;
    w2l__ice_spec **retired;  /* specs replaced in this checkpoint, kept for their parts */
    size_t nretired;
    size_t max_open;          /* partitions with open files at most (writer.open-partitions) */
    /* this checkpoint */
    wpart **parts;            /* its partitions */
    size_t nparts, partcap;
    uint32_t *pslots;         /* hash slots: index into parts + 1; 0 empty */
    size_t pscap;
    w2l__arena parena;
    wpart *last;              /* the partition the last change went to */
    uint32_t *touched;        /* partitions with pending changes */
    size_t ntouched, tcap;
    size_t nopen;             /* partitions with an open file */
    uint64_t clock;
    char **paths;             /* data files written since the last barrier */
    uint32_t *path_part;      /* the partition of each (index into parts) */
    size_t npaths, pcap;
    uint64_t *kslots;         /* kcap slots */
    kslot *ks;                /* kcount keys, in the order they came */
    size_t kcap, kcount, kscap;
    kent *ke;
    size_t nke, kecap;
    size_t khint, kehint;     /* keys and entries of the last checkpoint: where the next
                                 one's key map starts (small for a quiet table) */
    w2l__arena karena;
    pdel *pd;
    size_t npd, pdcap;
    w2l_buf results;          /* file objects, comma-separated */
    size_t nresults;
    int32_t results_schema;
    int truncated;            /* a TRUNCATE since the last barrier: results hold only later files */
    int dirty;
    struct tstate *next_dirty;
    uint64_t mem;
} tstate;

typedef struct writer {
    w2l_operator base;
    const w2l_conf *conf;     /* the pipeline's, borrowed while it runs */
    unsigned index, n;        /* this writer's index among n */
    w2l_fileio *io;
    w2l_catalog *cat;         /* opened only to locate a table no SCHEMA described */
    w2l__pq_options pq;   /* pq.codec_ctx: codec, shared by this writer's files */
    w2l__pq_codec *codec;
    uint64_t budget, mem;
    tstate **tabs;
    size_t tcap, tcount;
    tstate *dirty;
    w2l_schema *pos_schema;
    /* the element being processed and the row buffers its changes are gathered in */
    const w2l_change *changes;
    w2l_value *dbuf, *ebuf;
    size_t dcap, ecap;
    w2l_buf key;              /* scratch: a change's key (op_writer.c) */
    w2l_buf akey[KEY_AHEAD];  /* the keys of changes further on (key_ahead) ... */
    uint64_t ahead_h[KEY_AHEAD];  /* ... their hashes ... */
    uint64_t ahead_ci[KEY_AHEAD]; /* ... of change ahead_ci - 1 (at ahead_ci % KEY_AHEAD); 0 */
    w2l__file_batch pend;     /* at a barrier: complete files, closed together */
    int defer;                /* complete files go to pend (on_barrier) */
    w2l_buf pkey;             /* scratch: a change's partition, encoded */
    w2l_value *pvals;         /* scratch: a change's partition values */
    size_t npvals;
} writer;

/* ---- op_writer_parts.c ---- */

/* Takes the specs a SCHEMA payload names: "spec" ({"spec-id":1,"fields":[{"source-id":..,
 * "field-id":..,"name":..,"transform":"day"}]}; absent: unpartitioned) and "delete-specs"
 * (older specs with data files), bound to the table's schema. *changed: the default spec
 * differs from the one the table had. */
w2l_rc w2l__wr_set_specs(tstate *t, const w2l__json *payload, int *changed, w2l_error *err);
/* Finds each spec field's source column in the table's (new) schema. */
w2l_rc w2l__wr_bind_specs(tstate *t, w2l_error *err);
/* The partition of spec s (t->spec, or one of t->dspecs) that change c (a whole row image)
 * belongs to, created when new. */
w2l_rc w2l__wr_part_of(writer *w, tstate *t, const wspec *s, const w2l_change *c, wpart **out,
                       w2l_error *err);
/* Forgets the checkpoint's partitions (their files are completed or aborted). */
void w2l__wr_parts_clear(tstate *t);
void w2l__wr_parts_free(tstate *t);
/* Moves the partitions (and spec) of from, whose files are complete, to to (a RENAME). */
void w2l__wr_parts_move(tstate *from, tstate *to);

/* ---- op_writer_files.c ---- */

w2l_rc w2l__wr_open_file(writer *w, tstate *t, const wpart *p, const w2l_schema *s,
                         const char *prefix, char **path_out, w2l__pq_writer **out,
                         w2l_error *err);
w2l_rc w2l__wr_complete_data(writer *w, tstate *t, wpart *p, w2l_error *err);
w2l_rc w2l__wr_complete_eq(writer *w, tstate *t, wpart *p, w2l_error *err);
/* The files completed while w->defer was set, closed together (w2l_file_close_many). */
w2l_rc w2l__wr_close_pending(writer *w, w2l_error *err);
void w2l__wr_account(writer *w, tstate *t);
/* Completes the open files of one partition / of every partition and the position
 * deletes (the pending buffers must be empty). */
w2l_rc w2l__wr_complete_part(writer *w, tstate *t, wpart *p, w2l_error *err);
w2l_rc w2l__wr_complete_all(writer *w, tstate *t, w2l_error *err);
/* Aborts every open file of the table (nothing of them is reported). */
void w2l__wr_abort_all(tstate *t);

#endif
