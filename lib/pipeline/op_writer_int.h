/*
 * The writer operator's insides (op_writer.c holds the operator and describes it): its
 * per-table state and what op_writer.c, op_writer_files.c (the table's files),
 * op_writer_parts.c, op_writer_keys.c (the key map) and op_writer_lake.c (the key map's
 * keys read back from the lake's files) share.
 */
#ifndef W2L_OP_WRITER_INT_H
#define W2L_OP_WRITER_INT_H

#include "../event/emit.h"
#include "ops.h"
#include "../conf/conf.h"
#include "../parquet/parquet.h"
#include "key_spill.h"

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
    uint32_t file;            /* index into files; replaced by the path's rank when sorting */
    int64_t pos;
} pdel;

/* A data file the key map points into: one this checkpoint wrote, or (delete mode
 * "position") one of an earlier checkpoint or of the lake, whose rows the map still holds.
 * Its partition is kept encoded (spec id, then the values, as op_writer_parts.c encodes
 * them) so that a position delete of a later checkpoint goes to the same partition. */
#define NO_PART UINT32_MAX
#define KTOMB UINT32_MAX /* a spilled record's file: the key has no row (op_writer_keys.c) */
typedef struct wfile {
    char *path;
    unsigned char *pkey;      /* its partition's key (malloc'd) */
    uint32_t klen;
    uint32_t part;            /* its partition in this checkpoint (index into parts); NO_PART */
} wfile;

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
    wfile *files;             /* data files the key map points into */
    size_t nfiles, fcap;
    /* the key map: the live rows of this checkpoint (delete mode "equality"), or of the
     * whole table (delete mode "position", op_writer_keys.c: loaded from the lake before
     * the first change, kept across checkpoints) */
    int posmode;              /* delete mode "position": updates and deletes by position only */
    int loaded;               /* posmode: the map holds every live row of the table */
    size_t ndead;             /* entries unlinked since the map was last compacted */
    uint64_t *kslots;         /* kcap slots */
    kslot *ks;                /* kcount keys, in the order they came */
    size_t kcap, kcount, kscap;
    kent *ke;
    size_t nke, kecap;
    size_t khint, kehint;     /* keys and entries of the last checkpoint: where the next
                                 one's key map starts (small for a quiet table) */
    w2l__arena karena;
    w2l__krun *run;           /* posmode: keys spilled to disk (key_spill.h); a key in the
                                 map (live or not) hides the runs' records of it */
    w2l__krun *young;         /* keys spilled since run was written (NULL when run is): its
                                 records hide run's; a record of file KTOMB: the key's rows
                                 all went */
    pdel *pd;
    size_t npd, pdcap;
    w2l_buf results;          /* file objects, comma-separated */
    size_t nresults;
    int32_t results_schema;
    int truncated;            /* a TRUNCATE since the last barrier: results hold only later files */
    int holding;              /* a re-read (resync) since its begin: files held across barriers */
    int renamed;              /* posmode: a RENAME from or onto the name in this checkpoint */
    int want_pos;             /* write.delete-mode is "position" (posmode, but for a name
                                 whose rows a RENAME could not bring here: equality deletes
                                 until the barrier) */
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
    uint64_t barrier;         /* the last checkpoint barrier passed (the restored one) */
    struct w2l__rewrites *rw; /* the compactions the pipeline committed (rewrites.h) ... */
    uint64_t rw_seen;         /* ... up to the one taken last */
    /* the key indexes' memory (writer.key-index-memory): past kbudget the largest maps
     * spill to runs in kdir (writer.spill-dir) */
    uint64_t kbudget;
    char *spill_dir;
    w2l__kdir *kdir;
    uint64_t kkeys, kmem, kdisk; /* the figures last reported to the metrics */
} writer;

/* Whether column i of change c is in its image. */
static inline int w2l__wr_present(const w2l_change *c, long i)
{
    return !c->present || (c->present[i >> 3] >> (i & 7) & 1);
}

/* The hash of an encoded key. Keys of 8 to 16 bytes (a single integer, date, timestamp or
 * double column is 12) take two overlapping 8-byte words through a 64-bit finaliser twice,
 * inline; longer and shorter ones the general hash. */
static inline uint64_t w2l__wr_key_hash(const unsigned char *p, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        return w2l__mix64(a ^ w2l__mix64(b ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL));
    }
    return w2l__hash64(p, n, 0x6b6d6170);
}

/* ---- op_writer_keys.c ---- */

/* The key of change c (a row of t->schema) in b: for each equality column (field-id order)
 * whose value is not NULL, its field id and its value as comparable bytes. */
w2l_rc w2l__wr_encode_key(w2l_buf *b, const tstate *t, const w2l_change *c, w2l_error *err);
/* The entry of key (hash h) in *out: the map's, else the run's (brought into the map);
 * with add, inserted when absent. *out NULL: absent. Fails on an IO error of the run. */
w2l_rc w2l__wr_key_get(tstate *t, const w2l_buf *key, uint64_t h, int add, kslot **out,
                       w2l_error *err);
/* A new live row for s (chained before its others with chain, else replacing them);
 * the caller sets its file and position. */
w2l_rc w2l__wr_add_entry(tstate *t, kslot *s, int chain, w2l_error *err);
/* Queues a position delete of row e and unlinks it from s (e is s's head). */
w2l_rc w2l__wr_delete_head(tstate *t, kslot *s, w2l_error *err);
/* Forgets every key and every file of the map. */
void w2l__wr_keymap_clear(tstate *t);
/* Registers data file path (taken) in partition p (its key copied): its index in *out. */
w2l_rc w2l__wr_file_add(tstate *t, char *path, const unsigned char *pkey, size_t klen,
                        uint32_t part, uint32_t *out, w2l_error *err);
/* set_schema's helpers (op_writer.c): a full-row table lost columns (rekey); the key
 * columns changed, so the live rows are keyed anew from their files (live_rows, then
 * reread_keys with the new columns in t). */
w2l_rc w2l__wr_rekey(writer *w, tstate *t, const int32_t *ids, size_t nids, w2l_error *err);
w2l_rc w2l__wr_live_rows(tstate *t, kent **out, size_t *nout, w2l_error *err);
w2l_rc w2l__wr_reread_keys(writer *w, tstate *t, kent *live, size_t n, w2l_error *err);
/* Delete mode "position": fills t's map with every live row of the table before its first
 * change — the rows of the table's current snapshot (when it is the incarnation t names),
 * then those of the checkpoints the restored state holds beyond the table's newest
 * committed one. */
w2l_rc w2l__wr_index_load(writer *w, tstate *t, w2l_error *err);
/* At a barrier (no pending deletes, no open files): drops dead keys, dead entries and the
 * files no entry points into, once they are many. */
w2l_rc w2l__wr_index_compact(tstate *t, w2l_error *err);
/* A compaction committed: removed data files went, added ones hold their rows. The map's
 * entries of removed files move onto the added ones, found by their keys; when one is not
 * found the map is dropped (loaded again before the next change). */
w2l_rc w2l__wr_index_rewritten(writer *w, tstate *t, const char *const *removed, size_t nremoved,
                               const char *const *added, size_t nadded, w2l_error *err);
/* Bytes the map holds in memory (its run's sparse index and filter included). */
uint64_t w2l__wr_index_bytes(const tstate *t);
/* Bytes of the map itself (not its runs): what a spill gives back. */
uint64_t w2l__wr_map_bytes(const tstate *t);
/* Keys and disk bytes of t's spilled runs (the run and the young run). */
uint64_t w2l__wr_runs_records(const tstate *t);
uint64_t w2l__wr_runs_disk(const tstate *t);
/* The map's entry of key (hash h), NULL when the map lacks it (the runs are not read). */
kslot *w2l__wr_key_find(const tstate *t, const unsigned char *key, size_t len, uint64_t h);
/* Writes t's map, merged with its young run, into a new young run, or (full, or once the
 * young run would pass a quarter of the older) with both runs into one run
 * (writer.key-index-memory); with renumber, a full merge, and nothing of a checkpoint in
 * progress pointing into t's files, the files no key points into are dropped. */
w2l_rc w2l__wr_index_spill(writer *w, tstate *t, int renumber, int full, w2l_error *err);
/* Past writer.key-index-memory, spills the largest maps until half of it is used, and
 * reports the indexes' figures to the pipeline's metrics. at_barrier: see index_spill. */
w2l_rc w2l__wr_index_bound(writer *w, int at_barrier, w2l_error *err);
/* Frees what the map holds (tstate_free). */
void w2l__wr_index_free(tstate *t);

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
/* The partition (created when new) whose key, as w2l__wr_part_key encodes it, is key: where
 * position deletes of a data file written in an earlier checkpoint go. */
w2l_rc w2l__wr_part_by_key(writer *w, tstate *t, const unsigned char *key, size_t klen,
                           wpart **out, w2l_error *err);
/* The key of the partition of spec sid (-1: none) with values vals (spec's result types). */
w2l_rc w2l__wr_part_key(w2l_buf *b, int32_t sid, const w2l__ice_spec *spec,
                        const w2l_value *vals, w2l_error *err);
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
