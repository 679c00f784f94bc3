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

typedef struct kslot {
    uint64_t h;
    const unsigned char *key; /* in the table's key arena; NULL: empty slot */
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

typedef struct tstate {
    char *ns, *table, *fq;    /* fq: "ns.table" for messages and per-table conf */
    uint64_t h;
    char *location;           /* NULL until SCHEMA (or a catalog load) gives it */
    char uuid[40];            /* the table incarnation (Iceberg table-uuid) SCHEMA named; "" */
    w2l_schema *schema;       /* one reference; NULL until SCHEMA or the first change */
    w2l_schema *eq_schema;    /* the equality columns, same field ids */
    int32_t *eq_ids;
    long *eq_idx;             /* index of each equality column in schema */
    size_t neq;
    int policy;
    uint64_t target;
    /* open files */
    w2l__pq_writer *dw, *ew;
    char *epath;
    uint64_t drows;           /* rows already handed to dw */
    /* this checkpoint */
    char **paths;             /* data files written since the last barrier */
    size_t npaths, pcap;
    kslot *ks;
    size_t kcap, kcount;
    kent *ke;
    size_t nke, kecap;
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
    w2l__pq_options pq;
    uint64_t budget, mem;
    tstate **tabs;
    size_t tcap, tcount;
    tstate *dirty;
    w2l_schema *pos_schema;
    /* per-element buffers of the current table */
    w2l_value *dbuf, *ebuf;
    size_t dn, en, dcap, ecap;
    w2l_buf key;
} writer;

/* ---- op_writer_files.c ---- */

w2l_rc w2l__wr_open_file(writer *w, tstate *t, const w2l_schema *s, const char *prefix,
                         char **path_out, w2l__pq_writer **out, w2l_error *err);
w2l_rc w2l__wr_complete_data(tstate *t, w2l_error *err);
w2l_rc w2l__wr_complete_eq(tstate *t, w2l_error *err);
void w2l__wr_account(writer *w, tstate *t);
w2l_rc w2l__wr_complete_all(writer *w, tstate *t, w2l_error *err);

#endif
