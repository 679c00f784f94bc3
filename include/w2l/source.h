/*
 * Source plug-in: where changes come from. Pull model, like ArrowArrayStream: the source
 * operator's thread calls next() in a loop; the source emits changes, DDL and transaction
 * ends into the emitter it is given. Built in: "mysql" (binlog), "file" and "kafka" (CDC JSON).
 * Implementer's contract: w2l_source_methods(3).
 */
#ifndef W2L_SOURCE_H
#define W2L_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "conf.h"
#include "event.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w2l_source w2l_source;

#define W2L_SOURCE_METHODS_V1 1
#define W2L_SOURCE_METHODS_V2 2 /* adds shared, attach and checkpoint_done */
#define W2L_SOURCE_METHODS_V3 3 /* adds resync */

/* What the pipeline tells a shared source about the lake (V2; w2l_source_methods(3)).
 * A shared source's position has the form {"NAME":{"STREAM":{"PART":NEXT,...},...}}: the
 * next offset of every partition read, so the pipeline can merge the positions of the
 * processes that share the source per table. */
typedef struct w2l_source_lake {
    void *ctx;
    /* *next: the offset of stream/part below which db.table holds every change in the lake
     * (-1: none recorded). The source skips what is below it. rows: the message holds row
     * changes (not DDL only): a table's rows must come from one partition, and rows from
     * another are W2L_CONFIG. Source thread only. */
    w2l_rc (*committed)(void *ctx, const char *db, const char *table, const char *stream,
                        int32_t part, int rows, int64_t *next, w2l_error *err);
    /* stream/part became this process's: committed() reads it from the lake again. */
    void (*assigned)(void *ctx, const char *stream, int32_t part);
    /* Asks for a checkpoint at the next transaction end. */
    void (*checkpoint_soon)(void *ctx);
} w2l_source_lake;

typedef struct w2l_source_methods {
    int version;      /* W2L_SOURCE_METHODS_V1, _V2 or _V3 */
    const char *name; /* registry key and URI scheme: "mysql", "file", "kafka" */
    size_t size;      /* sizeof impl struct; the core allocates and zeroes it */
    void *app_data;   /* for the implementer; the core never reads it */
    /* uri: the whole source URI. restored: the position (JSON, NUL-terminated) saved at
     * the checkpoint the pipeline restarts from, or NULL on a fresh start. */
    w2l_rc (*open)(const struct w2l_source_methods *m, const w2l_conf *conf, const char *uri,
                   const char *restored, w2l_source *self, w2l_error *err);
    /* Emits what is available, waiting at most timeout_ms for the first event. Returns
     * W2L_OK after emitting at least one event, W2L_AGAIN when nothing came in time,
     * W2L_DONE at the end of a finite source (after its last w2l_emit_commit()). */
    w2l_rc (*next)(w2l_source *self, w2l_emitter *em, int timeout_ms, w2l_error *err);
    /* Called on the source thread, never during next(), once checkpoint ckpt has
     * committed to every table: upstream data before its position may be released. Each
     * committed checkpoint once, in increasing order; a failure is logged and does not
     * undo the checkpoint. A transaction may span several next() calls; barriers wait
     * for its w2l_emit_commit(). */
    w2l_rc (*checkpoint_complete)(w2l_source *self, uint64_t ckpt, w2l_error *err);
    /* How far behind the source is, in ms: 0 when caught up, negative when not known (no
     * event yet, the source unreachable: reported as "unknown", never as 0). Optional:
     * NULL (then 0). Called from any thread. */
    int64_t (*lag_ms)(w2l_source *self);
    void (*close)(w2l_source *self); /* cannot fail */
    /* ---- V2 (version >= W2L_SOURCE_METHODS_V2); each may be NULL ---- */
    /* Non-zero when uri makes this process one of several that read the source together
     * (members of a consumer group), each a share of its partitions. The pipeline then
     * keeps each table's position in the lake, merged over the members, and calls attach()
     * after open() (restored is always NULL). */
    int (*shared)(const w2l_conf *conf, const char *uri);
    void (*attach)(w2l_source *self, const w2l_source_lake *lake);
    /* Called instead of checkpoint_complete() when set, with the checkpoint's position
     * (NULL when not known). */
    w2l_rc (*checkpoint_done)(w2l_source *self, uint64_t ckpt, const char *position,
                              w2l_error *err);
    /* ---- V3 (version >= W2L_SOURCE_METHODS_V3); may be NULL ---- */
    /* Reads db.table again whole while the other tables stream; its rows then replace the
     * table's in the lake at one commit (w2l_pipeline_resync(3)). Called on the source
     * thread between next() calls. W2L_NOTFOUND names a table the source does not read. */
    w2l_rc (*resync)(w2l_source *self, const char *db, const char *table, w2l_error *err);
} w2l_source_methods;
struct w2l_source { const w2l_source_methods *methods; };

/* Registry, keyed by URI scheme. See w2l_source_register(3). */
W2L_API w2l_rc w2l_source_register(const w2l_source_methods *m, int make_default);
W2L_API const w2l_source_methods *w2l_source_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
