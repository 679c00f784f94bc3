/*
 * The built-in writer and committer operators (w2l-design(7) sections 1, 2 and 5): what the
 * two share — the WRITE_RESULT payload a writer sends its table's committer at a barrier,
 * and the committer's state keys — and their method tables, registered as "default" of
 * their kinds by lib/builtins.c.
 *
 * WRITE_RESULT payload (JSON, one element per table and checkpoint per writer instance):
 *
 *   {"schema-id": 3,
 *    "table-uuid": "...",              the table incarnation the files were written for
 *                                      (from SCHEMA); the committer copies it into each
 *                                      file object it keeps in its state
 *    "files": [
 *      {"content": 0,                 0 data, 1 position deletes, 2 equality deletes
 *       "path": "/lake/db/t/data/data-<uuid>.parquet",   absolute, as in manifests
 *       "format": "PARQUET",
 *       "record-count": 1200, "file-size": 53211,
 *       "schema-id": 3,                the table schema the file was written under
 *       "columns": [                   one per Parquet leaf column, in schema order
 *         {"id": 1, "size": 4810, "values": 1200, "nulls": 0,
 *          "nans": 0,                  only for float/double columns
 *          "lower": "0100000000000000", "upper": "b004000000000000"}],
 *                                      bounds: Iceberg single-value bytes as lowercase
 *                                      hex; absent when every value is null
 *       "split-offsets": [4],
 *       "equality-ids": [1],           content 2 only
 *       "spec-id": 1,                  the partition spec (absent: the table's default,
 *                                      which is then unpartitioned), and
 *       "partition": ["4e4d0000", null]}]}   one value per spec field (single-value bytes
 *                                      as hex, null for NULL)
 *
 * After a TRUNCATE of the table in that checkpoint the payload also has "truncate": true
 * and its files are only those written after the truncate: the committer then replaces
 * the table's contents with them in the checkpoint's one snapshot (an Iceberg overwrite),
 * so rows before the truncate never reappear, even after a crash and a replay.
 *
 * Every field of an Iceberg DataFile that w2l__ice_data_file_from_stats() fills is there,
 * so the committer rebuilds the data file without reading the Parquet footer.
 *
 * Committer state, per sealed checkpoint N (w2l_state keys, byte order = commit order):
 *   "committer/epoch"          decimal epoch of the run that sealed N (bumped on restart)
 *   "committer/job-id"         the job id the run committed under
 *   "committer/files/<C>/<ns>.<table>"   C = checkpoint id as 20 decimal digits, C <= N:
 *       {"ns": "db", "table": "t", "checkpoint": C, "source-position": "<json>"|null,
 *        "schema-id": 3, "truncate": true (only after a TRUNCATE), "files": [<file objects>]}
 *     one key per table that checkpoint C touched and that was not yet committed when N's
 *     barrier passed the committer: older checkpoints still pending are carried forward
 *     into N, so the newest sealed checkpoint alone holds everything left to commit.
 *   ns and table are percent-encoded in the key ('%', '/' and '.'), so keys are unique.
 */
#ifndef W2L_PIPELINE_OPS_H
#define W2L_PIPELINE_OPS_H

#include "../common/arena.h"
#include "../common/common.h"
#include "../iceberg/iceberg.h"
#include "../json/json.h"

extern const w2l_operator_methods w2l__op_writer;
extern const w2l_operator_methods w2l__op_committer;

#define W2L_OPS_FILES_PREFIX "committer/files/"
#define W2L_OPS_EPOCH_KEY "committer/epoch"
#define W2L_OPS_JOB_KEY "committer/job-id"
/* The DDL handlers' table operations not yet applied (owner.h), "ddl/ops/<index>". */
#define W2L_OPS_DDL_OPS_PREFIX "ddl/ops/"

/* The payload of the WRITER_COMMIT the DDL handler sends a table's writers for a TRUNCATE:
 * they drop what they wrote of the table in this checkpoint and flag their WRITE_RESULT. */
#define W2L_OPS_TRUNCATE_FENCE "{\"truncate\":true}"

/* ... and around a re-read of the table (w2l_pipeline_resync(3)): at the begin they drop
 * what they wrote of it in this checkpoint, as for a TRUNCATE, and from then on hold its
 * files across checkpoints; at the end they report everything held, flagged truncate, so
 * the table's rows are replaced at one commit. */
#define W2L_OPS_RESYNC_BEGIN_FENCE "{\"resync\":\"begin\"}"
#define W2L_OPS_RESYNC_END_FENCE "{\"resync\":\"end\"}"

/* ... and for a RENAME TABLE, {"rename":{"ns":"db","table":"new"}}: they complete the
 * table's files and report them under the new name. The runtime sends this one to every
 * writer, since a writer may hold files of the table that an earlier rename in the same
 * checkpoint moved to the old name; it is not a fence to wait for (ddl_id 0). */
#define W2L_OPS_RENAME_FENCE_HEAD "{\"rename\":"

/* Appends the JSON object of one completed file (the "files" member format above) to b. */
w2l_rc w2l__ops_file_json(w2l_buf *b, int content, const char *path,
                          const w2l__file_stats *st, const int32_t *eq_ids, size_t neq,
                          int32_t schema_id, const w2l__ice_spec *spec, const w2l_value *part,
                          w2l_error *err);

/* Parses one file object into df; strings and arrays are allocated in a. meta: the
 * table's metadata, whose specs give partition values their types. */
w2l_rc w2l__ops_file_parse(const w2l__json *j, const w2l__ice_meta *meta, w2l__arena *a,
                           w2l__ice_data_file *df, w2l_error *err);

/* The job id: conf "job-id", else "w2l-" + 16 hex digits of a hash of the warehouse and
 * the source URI. Fresh memory. */
char *w2l__ops_job_id(const w2l_conf *conf);
/* The job id a run commits under: conf "job-id"; else the one the restored checkpoint
 * (st, restored; 0: none) was written under (a recover run has no source URI to derive it
 * from); else w2l__ops_job_id(). Fresh memory in *out. */
w2l_rc w2l__ops_job_restored(const w2l_conf *conf, w2l_state *st, uint64_t restored, char **out,
                             w2l_error *err);
/* Parquet writer options from the parquet.* keys (the writer's, and compaction's). */
struct w2l__pq_options;
w2l_rc w2l__ops_pq_options(const w2l_conf *conf, struct w2l__pq_options *o, w2l_error *err);

#endif
