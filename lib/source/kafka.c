/*
 * The "kafka" source plug-in: CDC JSON (canal-json, debezium-json, maxwell-json) from Kafka
 * topics, decoded by the same stream as the file source (cdc_stream.c). The only file that
 * includes librdkafka.
 *
 *   kafka://BROKER[,BROKER]/TOPIC[,TOPIC|~REGEX]?format=F[&group=G]
 *
 * Consuming. Without group=, the source reads every partition of the topics itself
 * (rd_kafka_assign(); ~REGEX topics match by POSIX extended regular expression), looking
 * again every METADATA_EVERY_MS for new partitions and topics: no group membership, so no
 * join delay or rebalance. With group=G, processes started alike share the partitions as
 * members of consumer group G (rd_kafka_subscribe(); librdkafka's own regex syntax for
 * ~REGEX). Either way enable.auto.commit and enable.auto.offset.store are off and
 * rd_kafka_consumer_poll() is the only way messages come (librdkafka 2.0's batch calls are
 * not safe with rebalances). kafka.<property> keys pass through to librdkafka.
 *
 * Positions, exactly once. The position is the next offset of every partition read,
 * {"kafka":{"TOPIC":{"P":NEXT,...},...}}, carried by each w2l_emit_commit() into the
 * checkpoint state and the snapshots' w2l.source-position. Without a group a partition
 * starts at its restored offset, and a partition the position does not know at the
 * beginning of its log (kafka.auto.offset.reset=latest: at its end); the offsets of each
 * completed checkpoint are committed to Kafka for monitoring and lag tools only. A member
 * of a group (V2 shared, on_rebalance) keeps no position of its own: each table's lives in
 * the lake (lib/pipeline/ledger.h), and the group's committed offsets say where a partition
 * it is given starts.
 *
 * Order across partitions. Canal sends a table's DDL to partition 0 and its rows to other
 * partitions; Debezium and Maxwell spread keys. The source therefore merges its partitions
 * by each message's source order (read without parsing the message whole, cdc_peek.c) —
 * Debezium: source.ts_ms then the binlog file and position; canal: es then the batch id;
 * Maxwell: ts then the binlog position — and takes the next message only when every
 * assigned partition has one waiting or has reached the end of its log. So a DDL is
 * applied after every row before it in every partition, and no row after it is applied
 * before it (as far as the producers' clocks and coordinates order them). Messages of one
 * partition keep their order. A source transaction spread over partitions is not kept
 * whole (nothing in the messages says where it ends).
 *
 * Bad messages. A message that is not valid CDC JSON fails the run naming topic, partition
 * and offset, or with source.on-bad-message=skip is logged, counted and skipped. A
 * tombstone (null value) is skipped.
 *
 * until-caught-up: done once partitions were assigned and every assigned partition has
 * reached the end of its log (librdkafka's partition EOF) with nothing left to emit.
 */
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <regex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cdc_stream.h"
#include "source_int.h"
#include "../json/json.h"

#define BATCH_MESSAGES 4096 /* messages decoded per next() before a commit */
#define PART_QUEUE_MAX 4096 /* messages one partition holds while merging: beyond, it is
                             * paused until half of them are taken */
#define METADATA_EVERY_MS 10000 /* without a group: how often to look for new partitions */

typedef struct kmsg {
    rd_kafka_message_t *m;
    int64_t k1, k2; /* source order */
} kmsg;

typedef struct kpart {
    char *topic;
    int32_t part;
    int64_t next;  /* the position: next offset to decode; -1 unknown */
    int assigned;
    int revoking;  /* a group took it away: released once a checkpoint holds what was read */
    int eof;       /* at the end of its log at the last look */
    int paused;    /* fetching stopped: its queue is full */
    kmsg *q;       /* waiting messages, in offset order: q[qh..qn) */
    size_t qh, qn, qcap;
} kpart;

typedef struct kafka_source {
    w2l_source base;
    char *brokers, *group, *topics_text;
    int in_group;          /* group= given: subscribe as a member; else assign everything */
    int64_t metadata_ms;   /* without a group: when partitions were last looked up */
    int64_t probe_ms;      /* every broker down: when a broker was last asked (lag_ms) */
    w2l__cdc_format fmt;
    w2l__cdc_stream st;
    rd_kafka_t *rk;
    kpart *parts;
    size_t nparts, cap;
    size_t nassigned; /* partitions assigned now */
    int skip_bad, start_latest;
    uint64_t skipped;
    int assigned_once;
    int joined;            /* a group rebalance happened (a member may get nothing) */
    atomic_int brokers_down; /* librdkafka reported every broker down (read by lag_ms) */
    int64_t open_ms;       /* when opened: no assignment within the timeout is an error */
    int64_t connect_timeout_ms;
    int announce;   /* a position to emit even without a message: the restored one, or one
                     * that covers partitions being released */
    int failed, done;
    w2l_error ferr;
    w2l_error cb_err; /* a fatal error seen in a callback */
    int cb_failed;
    int commit_warned;
    atomic_int at_end; /* every partition read to its end at the last look (for lag_ms) */
    w2l__cdc_where batch_end; /* the last message decoded */
    /* a member of a group (w2l_source_methods(3), V2 shared) */
    w2l_source_lake lake;  /* the pipeline's view of the lake; lake.committed NULL: none */
    int cooperative;       /* the group's rebalance protocol is incremental */
    rd_kafka_topic_partition_list_t *revoking; /* taken away, not yet released */
    uint64_t replayed;     /* messages skipped: their table has them in the lake */
} kafka_source;

/* ---- URI ---- */

static w2l_rc parse_uri(kafka_source *ks, const char *uri, w2l_error *err)
{
    if (!uri || strncmp(uri, "kafka://", 8) != 0)
        return w2l__fail(
            err, W2L_CONFIG,
            "source URI '%s': expected kafka://BROKER[,BROKER]/TOPIC[,TOPIC]?format=%s",
            uri ? uri : "(null)", W2L__CDC_FORMATS);
    const char *p = uri + 8, *slash = strchr(p, '/');
    if (!slash || slash == p)
        return w2l__fail(err, W2L_CONFIG, "source URI '%s': no brokers (kafka://HOST:PORT/TOPIC)",
                         uri);
    ks->brokers = w2l__strndup(p, (size_t)(slash - p));
    const char *t = slash + 1, *q = strchr(t, '?');
    size_t tl = q ? (size_t)(q - t) : strlen(t);
    if (tl == 0) return w2l__fail(err, W2L_CONFIG, "source URI '%s': no topic", uri);
    ks->topics_text = w2l__strndup(t, tl);
    W2L_NOMEM_IF(!ks->brokers || !ks->topics_text, err);
    int have_fmt = 0;
    while (q && *q) {
        const char *k = q + 1, *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
        const char *eq = memchr(k, '=', (size_t)(end - k));
        size_t kl = eq ? (size_t)(eq - k) : 0;
        if (eq && kl == 6 && memcmp(k, "format", 6) == 0) {
            if (w2l__cdc_format_parse(eq + 1, (size_t)(end - eq - 1), &ks->fmt))
                return w2l__fail(err, W2L_CONFIG,
                                 "source URI '%s': unknown format '%.*s' (allowed: %s)", uri,
                                 (int)(end - eq - 1), eq + 1, W2L__CDC_FORMATS);
            have_fmt = 1;
        } else if (eq && kl == 5 && memcmp(k, "group", 5) == 0 && end > eq + 1) {
            w2l__free(ks->group);
            ks->group = w2l__strndup(eq + 1, (size_t)(end - eq - 1));
            W2L_NOMEM_IF(!ks->group, err);
            ks->in_group = 1;
        } else if (end > k) {
            return w2l__fail(err, W2L_CONFIG,
                             "source URI '%s': unknown parameter '%.*s' (allowed: format, group)",
                             uri, (int)(end - k), k);
        }
        q = amp;
    }
    if (!have_fmt)
        return w2l__fail(err, W2L_CONFIG, "source URI '%s': format required (allowed: %s)", uri,
                         W2L__CDC_FORMATS);
    if (!ks->group && !(ks->group = w2l__strdup("w2l"))) return w2l__fail(err, W2L_NOMEM, "oom");
    return W2L_OK;
}

/* ---- partitions and positions ---- */

static kpart *part_find(kafka_source *ks, const char *topic, int32_t p, int create)
{
    for (size_t i = 0; i < ks->nparts; i++)
        if (ks->parts[i].part == p && strcmp(ks->parts[i].topic, topic) == 0)
            return &ks->parts[i];
    if (!create) return NULL;
    if (ks->nparts == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 16;
        kpart *np = w2l__realloc(ks->parts, cap * sizeof *np);
        if (!np) return NULL;
        ks->parts = np;
        ks->cap = cap;
    }
    kpart *k = &ks->parts[ks->nparts];
    memset(k, 0, sizeof *k);
    if (!(k->topic = w2l__strdup(topic))) return NULL;
    k->part = p;
    k->next = -1;
    ks->nparts++;
    return k;
}

static void part_drop_queue(kpart *k)
{
    for (size_t i = k->qh; i < k->qn; i++) rd_kafka_message_destroy(k->q[i].m);
    k->qh = k->qn = 0;
}

/* Stops or restarts fetching of k (backpressure while other partitions catch up). */
static void part_pause(kafka_source *ks, kpart *k, int pause)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    if (!l) return;
    rd_kafka_topic_partition_list_add(l, k->topic, k->part);
    rd_kafka_resp_err_t e = pause ? rd_kafka_pause_partitions(ks->rk, l)
                                  : rd_kafka_resume_partitions(ks->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (!e) k->paused = pause;
}

static int cmp_part(const void *a, const void *b)
{
    const kpart *x = *(const kpart *const *)a, *y = *(const kpart *const *)b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->part > y->part) - (x->part < y->part);
}

/* {"kafka":{"T":{"0":12,"1":40}}}: every partition with a known next offset, sorted. */
static w2l_rc position(kafka_source *ks, w2l_buf *out, w2l_error *err)
{
    out->len = 0;
    kpart **v = w2l__malloc((ks->nparts ? ks->nparts : 1) * sizeof *v);
    W2L_NOMEM_IF(!v, err);
    size_t n = 0;
    for (size_t i = 0; i < ks->nparts; i++) {
        const kpart *k = &ks->parts[i];
        /* a member's position names only its partitions: the lake's say the rest */
        if (k->next >= 0 && (!ks->in_group || k->assigned || k->revoking)) v[n++] = &ks->parts[i];
    }
    qsort(v, n, sizeof *v, cmp_part);
    w2l_rc rc = w2l__buf_printf(out, err, "{\"kafka\":{");
    const char *cur = NULL;
    for (size_t i = 0; rc == W2L_OK && i < n; i++) {
        const kpart *k = v[i];
        if (!cur || strcmp(cur, k->topic) != 0) {
            w2l__json *name = w2l__json_new_string(k->topic);
            char *txt = name ? w2l__json_print(name, 0) : NULL;
            w2l__json_free(name);
            rc = txt ? w2l__buf_printf(out, err, "%s%s:{", cur ? "}," : "", txt)
                     : w2l__fail(err, W2L_NOMEM, "out of memory");
            w2l__free(txt);
            cur = k->topic;
        } else {
            rc = w2l__buf_printf(out, err, ",");
        }
        if (rc == W2L_OK)
            rc = w2l__buf_printf(out, err, "\"%d\":%lld", (int)k->part, (long long)k->next);
    }
    if (rc == W2L_OK) rc = w2l__buf_printf(out, err, "%s}}", cur ? "}" : "");
    w2l__free(v);
    return rc;
}

static w2l_rc parse_position(kafka_source *ks, const char *restored, w2l_error *err)
{
    w2l__json *j = NULL;
    w2l_rc rc = w2l__json_parse(restored, strlen(restored), &j, err);
    if (rc == W2L_NOMEM) return rc;
    const w2l__json *kf = rc == W2L_OK ? w2l__json_get(j, "kafka") : NULL;
    if (!kf || w2l__json_type(kf) != W2L_JSON_OBJECT) {
        w2l__json_free(j);
        return w2l__fail(err, W2L_CORRUPT,
                         "kafka source: restored position '%.100s' is not "
                         "{\"kafka\":{\"TOPIC\":{\"PARTITION\":OFFSET}}} (was the job started "
                         "with another source?)",
                         restored);
    }
    rc = W2L_OK;
    for (w2l__json *t = w2l__json_first(kf); rc == W2L_OK && t; t = w2l__json_next(t))
        for (w2l__json *p = w2l__json_first(t); rc == W2L_OK && p; p = w2l__json_next(p)) {
            int64_t off;
            char *end;
            long part = strtol(w2l__json_key(p), &end, 10);
            if (*end || part < 0 || part > INT32_MAX || w2l__json_int64(p, &off) || off < 0) {
                rc = w2l__fail(err, W2L_CORRUPT, "kafka source: restored position: bad entry "
                               "%s/%s", w2l__json_key(t), w2l__json_key(p));
                break;
            }
            kpart *k = part_find(ks, w2l__json_key(t), (int32_t)part, 1);
            if (!k) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
            else k->next = off;
        }
    w2l__json_free(j);
    return rc;
}

/* ---- librdkafka callbacks (on the polling thread: next()) ---- */

/* Sets each partition of list to start where the position says (or the log's beginning,
 * or end), marks them assigned. */
static void start_offsets(kafka_source *ks, rd_kafka_topic_partition_list_t *list)
{
    for (int i = 0; i < list->cnt; i++) {
        rd_kafka_topic_partition_t *tp = &list->elems[i];
        kpart *k = part_find(ks, tp->topic, tp->partition, 1);
        if (!k) {
            ks->cb_failed = 1;
            w2l__fail(&ks->cb_err, W2L_NOMEM, "out of memory");
            continue;
        }
        if (!k->assigned) ks->nassigned++;
        k->assigned = 1;
        k->eof = 0;
        tp->offset = k->next >= 0      ? k->next
                     : ks->start_latest ? RD_KAFKA_OFFSET_END
                                        : RD_KAFKA_OFFSET_BEGINNING;
        w2l__log(W2L_LOG_INFO, "kafka: reading %s [%d] from %s%lld", tp->topic,
                 (int)tp->partition,
                 k->next >= 0 ? "offset " : ks->start_latest ? "the end, " : "the beginning, ",
                 (long long)(k->next >= 0 ? k->next : 0));
    }
    if (list->cnt) ks->assigned_once = 1; /* a member can be given nothing: not caught up */
    ks->brokers_down = 0;
}

/* A member's partitions, when they change (on the polling thread, in next()).
 *
 * Given partitions start at the offsets the group committed for them: a member commits a
 * partition's offset only once a checkpoint holding everything before it committed to every
 * table (ks_checkpoint_done), so nothing below it is missing from the lake. What some tables
 * hold beyond it (a member that died between two tables' commits) is skipped per message,
 * by the lake's positions (take()). Without a committed offset: the log's beginning.
 *
 * Partitions taken away are released only once a checkpoint holds what was read from them:
 * they stop, a checkpoint is asked for, and ks_checkpoint_done() releases them (the group
 * waits meanwhile), so their next owner finds every table where this member left it. A
 * member whose partitions were lost instead (it missed its session) may hold what another
 * member now reads: it fails with W2L_CONFLICT and commits nothing more. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t why,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    kafka_source *ks = opaque;
    ks->joined = 1;
    ks->cooperative = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
    rd_kafka_error_t *ke = NULL;
    if (why == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (ks->lake.committed) {
            rd_kafka_resp_err_t e = rd_kafka_committed(rk, list, 10000);
            if (e) w2l__log(W2L_LOG_WARN, "kafka %s: group %s: committed offsets: %s; reading "
                            "from the beginning (what the lake holds is skipped)",
                            ks->brokers, ks->group, rd_kafka_err2str(e));
            for (int i = 0; i < list->cnt; i++) {
                rd_kafka_topic_partition_t *tp = &list->elems[i];
                kpart *k = part_find(ks, tp->topic, tp->partition, 1);
                if (k) k->next = !e && tp->offset >= 0 ? tp->offset : -1;
                ks->lake.assigned(ks->lake.ctx, tp->topic, tp->partition);
            }
        }
        start_offsets(ks, list);
        if (ks->cooperative) ke = rd_kafka_incremental_assign(rk, list);
        else rd_kafka_assign(rk, list);
    } else {
        int lost = ks->lake.committed && rd_kafka_assignment_lost(rk);
        for (int i = 0; i < list->cnt; i++) {
            kpart *k = part_find(ks, list->elems[i].topic, list->elems[i].partition, 0);
            if (!k) continue;
            if (k->assigned) ks->nassigned--;
            k->assigned = 0;
            part_drop_queue(k); /* read again by the next owner */
            if (ks->lake.committed && !lost && !k->revoking) {
                k->revoking = 1;
                part_pause(ks, k, 1);
            }
            w2l__log(W2L_LOG_INFO, "kafka: %s %s [%d]", lost ? "lost" : "revoked", k->topic,
                     (int)k->part);
        }
        if (lost && !ks->cb_failed) {
            ks->cb_failed = 1;
            w2l__fail(&ks->cb_err, W2L_CONFLICT,
                      "kafka %s: group %s: this member lost its partitions (did it miss its "
                      "session timeout?); another member may read them now, so it commits "
                      "nothing more",
                      ks->brokers, ks->group);
        }
        if (ks->lake.committed && !lost) {
            /* released by ks_checkpoint_done(), once a checkpoint holds their position
             * (announced even when nothing was read from them since) */
            ks->announce = 1;
            if (!ks->revoking) ks->revoking = rd_kafka_topic_partition_list_copy(list);
            else
                for (int i = 0; i < list->cnt; i++)
                    rd_kafka_topic_partition_list_add(ks->revoking, list->elems[i].topic,
                                                      list->elems[i].partition);
            ks->lake.checkpoint_soon(ks->lake.ctx);
            return;
        }
        if (ks->cooperative) ke = rd_kafka_incremental_unassign(rk, list);
        else rd_kafka_assign(rk, NULL);
    }
    if (ke) {
        w2l__log(W2L_LOG_WARN, "kafka %s: group %s: %s", ks->brokers, ks->group,
                 rd_kafka_error_string(ke));
        rd_kafka_error_destroy(ke);
    }
}

/* Without a group: every partition of the topics (names, or ~REGEX), looked up in the
 * cluster's metadata; new ones are added to the assignment. */
static w2l_rc assign_all(kafka_source *ks, w2l_error *err)
{
    ks->metadata_ms = w2l__now_ms();
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(ks->rk, 1, NULL, &md, 2000);
    if (e) {
        w2l__log(W2L_LOG_DEBUG, "kafka %s: metadata: %s", ks->brokers, rd_kafka_err2str(e));
        if (e == RD_KAFKA_RESP_ERR__TRANSPORT) ks->brokers_down = 1;
        return W2L_OK; /* looked up again on the next call */
    }
    atomic_store(&ks->brokers_down, 0); /* a broker answered */
    rd_kafka_topic_partition_list_t *add = rd_kafka_topic_partition_list_new(16);
    char *list = w2l__strdup(ks->topics_text);
    w2l_rc rc = add && list ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    char *save = NULL;
    for (char *t = rc == W2L_OK ? strtok_r(list, ",", &save) : NULL; rc == W2L_OK && t;
         t = strtok_r(NULL, ",", &save)) {
        regex_t re;
        int is_re = t[0] == '~';
        if (is_re && regcomp(&re, t + 1, REG_EXTENDED | REG_NOSUB) != 0) {
            rc = w2l__fail(err, W2L_CONFIG, "kafka source: topic pattern '%s' is not a POSIX "
                           "extended regular expression", t + 1);
            break;
        }
        int found = 0;
        for (int i = 0; i < md->topic_cnt; i++) {
            const struct rd_kafka_metadata_topic *mt = &md->topics[i];
            if (mt->err || mt->topic[0] == '_') continue; /* internal topics */
            if (is_re ? regexec(&re, mt->topic, 0, NULL, 0) != 0 : strcmp(t, mt->topic) != 0)
                continue;
            found = 1;
            for (int j = 0; j < mt->partition_cnt; j++) {
                kpart *k = part_find(ks, mt->topic, mt->partitions[j].id, 0);
                if (!k || !k->assigned)
                    rd_kafka_topic_partition_list_add(add, mt->topic, mt->partitions[j].id);
            }
        }
        if (is_re) regfree(&re);
        /* a topic named (not a pattern) that the cluster does not have */
        if (!is_re && !found)
            rc = w2l__fail(err, W2L_SOURCE, "kafka %s: topic %s does not exist", ks->brokers, t);
    }
    w2l__free(list);
    rd_kafka_metadata_destroy(md);
    if (rc == W2L_OK && add->cnt) {
        start_offsets(ks, add);
        if (ks->cb_failed) {
            *err = ks->cb_err;
            rc = ks->cb_err.code;
        } else {
            rd_kafka_error_t *ke = rd_kafka_incremental_assign(ks->rk, add);
            if (ke) {
                rc = w2l__fail(err, W2L_SOURCE, "kafka %s: assigning partitions: %s",
                               ks->brokers, rd_kafka_error_string(ke));
                rd_kafka_error_destroy(ke);
            }
        }
    }
    if (add) rd_kafka_topic_partition_list_destroy(add);
    return rc;
}

static void on_error(rd_kafka_t *rk, int code, const char *reason, void *opaque)
{
    kafka_source *ks = opaque;
    if (code == RD_KAFKA_RESP_ERR__FATAL) {
        char why[256];
        rd_kafka_fatal_error(rk, why, sizeof why);
        ks->cb_failed = 1;
        w2l__fail(&ks->cb_err, W2L_SOURCE, "kafka %s: fatal: %s", ks->brokers, why);
        return;
    }
    if (code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) ks->brokers_down = 1;
    /* transport and broker errors: librdkafka retries them itself */
    w2l__log(code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ? W2L_LOG_WARN : W2L_LOG_DEBUG,
             "kafka %s: %s: %s", ks->brokers, rd_kafka_err2name((rd_kafka_resp_err_t)code),
             reason);
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    /* failed offset commits are told by on_commit, once per failure kind */
    if (!strcmp(fac, "COMMITFAIL")) level = 7;
    w2l__log(level <= 3 ? W2L_LOG_ERROR : level <= 4 ? W2L_LOG_WARN : W2L_LOG_DEBUG,
             "kafka: %s: %s", fac, buf);
}

/* Offsets committed to Kafka are for monitoring only: a failure is logged, at warn the
 * first time (a broker that refuses commits outside a group, say), then at debug. */
static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t e,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk, (void)offsets;
    kafka_source *ks = opaque;
    if (!e || e == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
    w2l__log(ks->commit_warned ? W2L_LOG_DEBUG : W2L_LOG_WARN,
             "kafka %s: committing offsets of group %s (for monitoring only): %s",
             ks->brokers, ks->group, rd_kafka_err2str(e));
    ks->commit_warned = 1;
}

/* ---- configuration ---- */

typedef struct conf_ctx {
    const w2l_conf *conf;
    rd_kafka_conf_t *kc;
    kafka_source *ks;
    w2l_error *err;
    w2l_rc rc;
} conf_ctx;

static int pass_through(void *ctx, const char *key, const char *masked)
{
    (void)masked;
    conf_ctx *c = ctx;
    if (strncmp(key, "kafka.", 6) != 0) return 0;
    const char *v = NULL;
    w2l_conf_get(c->conf, key, &v, NULL); /* the real value; foreach masks secrets */
    char es[512];
    if (rd_kafka_conf_set(c->kc, key + 6, v, es, sizeof es) != RD_KAFKA_CONF_OK) {
        c->rc = w2l__fail(c->err, W2L_CONFIG, "configuration key '%s': %s", key, es);
        return 1;
    }
    if (!strcmp(key, "kafka.auto.offset.reset"))
        c->ks->start_latest = !strcmp(v, "latest") || !strcmp(v, "largest") || !strcmp(v, "end");
    return 0;
}

static w2l_rc make_consumer(kafka_source *ks, const w2l_conf *conf, w2l_error *err)
{
    char es[512];
    rd_kafka_conf_t *kc = rd_kafka_conf_new();
    W2L_NOMEM_IF(!kc, err);
    static const char *const defaults[][2] = {
        { "client.id", "w2l" },
        { "enable.auto.commit", "false" },
        { "enable.auto.offset.store", "false" },
        { "enable.partition.eof", "true" },
        { "auto.offset.reset", "earliest" },
        { "session.timeout.ms", "10000" }, /* a member that died is replaced in seconds */
    };
    w2l_rc rc = W2L_OK;
    if (rd_kafka_conf_set(kc, "bootstrap.servers", ks->brokers, es, sizeof es) ||
        rd_kafka_conf_set(kc, "group.id", ks->group, es, sizeof es))
        rc = w2l__fail(err, W2L_CONFIG, "kafka source: %s", es);
    for (size_t i = 0; rc == W2L_OK && i < W2L_ARRAY_LEN(defaults); i++)
        if (rd_kafka_conf_set(kc, defaults[i][0], defaults[i][1], es, sizeof es))
            rc = w2l__fail(err, W2L_CONFIG, "kafka source: %s=%s: %s", defaults[i][0],
                           defaults[i][1], es);
    conf_ctx c = { conf, kc, ks, err, W2L_OK };
    if (rc == W2L_OK && conf) {
        w2l_conf_foreach(conf, pass_through, &c);
        rc = c.rc;
    }
    if (rc != W2L_OK) {
        rd_kafka_conf_destroy(kc);
        return rc;
    }
    /* these the source needs as they are */
    rd_kafka_conf_set(kc, "enable.auto.commit", "false", es, sizeof es);
    rd_kafka_conf_set(kc, "enable.auto.offset.store", "false", es, sizeof es);
    rd_kafka_conf_set(kc, "enable.partition.eof", "true", es, sizeof es);
    rd_kafka_conf_set_opaque(kc, ks);
    rd_kafka_conf_set_rebalance_cb(kc, on_rebalance);
    rd_kafka_conf_set_error_cb(kc, on_error);
    rd_kafka_conf_set_log_cb(kc, on_log);
    rd_kafka_conf_set_offset_commit_cb(kc, on_commit);
    ks->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kc, es, sizeof es);
    if (!ks->rk) {
        rd_kafka_conf_destroy(kc);
        return w2l__fail(err, W2L_CONFIG, "kafka %s: %s", ks->brokers, es);
    }
    rd_kafka_poll_set_consumer(ks->rk);
    if (!ks->in_group) return W2L_OK; /* partitions are assigned by assign_all() */
    /* topics: a comma list; ~REGEX subscribes by pattern */
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(4);
    char *list = w2l__strdup(ks->topics_text);
    if (!sub || !list) {
        if (sub) rd_kafka_topic_partition_list_destroy(sub);
        w2l__free(list);
        return w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char pat[512];
        if (t[0] == '~') snprintf(pat, sizeof pat, "%s%s", t[1] == '^' ? "" : "^", t + 1);
        else snprintf(pat, sizeof pat, "%s", t);
        rd_kafka_topic_partition_list_add(sub, pat, RD_KAFKA_PARTITION_UA);
    }
    w2l__free(list);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(ks->rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    if (e)
        return w2l__fail(err, W2L_CONFIG, "kafka %s: subscribe to %s: %s", ks->brokers,
                         ks->topics_text, rd_kafka_err2str(e));
    return W2L_OK;
}

/* ---- reading ---- */

static w2l_rc enqueue(kafka_source *ks, rd_kafka_message_t *m, w2l_error *err)
{
    const char *topic = rd_kafka_topic_name(m->rkt);
    kpart *k = part_find(ks, topic, m->partition, 0);
    if (!k || !k->assigned || (k->next >= 0 && m->offset < k->next)) {
        rd_kafka_message_destroy(m); /* revoked meanwhile, or read again after a seek */
        return W2L_OK;
    }
    if (k->qn == k->qcap) {
        if (k->qh > 0) {
            memmove(k->q, k->q + k->qh, (k->qn - k->qh) * sizeof *k->q);
            k->qn -= k->qh;
            k->qh = 0;
        }
        if (k->qn == k->qcap) {
            size_t cap = k->qcap ? k->qcap * 2 : 256;
            kmsg *nq = w2l__realloc(k->q, cap * sizeof *nq);
            if (!nq) {
                rd_kafka_message_destroy(m);
                return w2l__fail(err, W2L_NOMEM, "out of memory");
            }
            k->q = nq;
            k->qcap = cap;
        }
    }
    kmsg *q = &k->q[k->qn++];
    q->m = m;
    if (!m->payload) q->k1 = q->k2 = INT64_MIN; /* a tombstone goes at once */
    else if (ks->nassigned > 1) w2l__cdc_peek_order(ks->fmt, m->payload, m->len, &q->k1, &q->k2);
    else q->k1 = q->k2 = 0; /* one partition: its own order is the order */
    k->eof = 0;
    if (!k->paused && k->qn - k->qh >= PART_QUEUE_MAX) part_pause(ks, k, 1);
    return W2L_OK;
}

/* Polls once (timeout_ms), queueing a message; *got: one came or an event was handled. */
static w2l_rc poll_once(kafka_source *ks, int timeout_ms, int *got, w2l_error *err)
{
    *got = 0;
    rd_kafka_message_t *m = rd_kafka_consumer_poll(ks->rk, timeout_ms);
    if (ks->cb_failed) {
        if (m) rd_kafka_message_destroy(m);
        *err = ks->cb_err;
        return ks->cb_err.code;
    }
    if (!m) return W2L_OK;
    *got = 1;
    if (!m->err || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
        atomic_store(&ks->brokers_down, 0); /* a broker answers */
    if (!m->err) return enqueue(ks, m, err);
    rd_kafka_resp_err_t e = m->err;
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "?";
    if (e == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        kpart *k = part_find(ks, topic, m->partition, 0);
        if (k) {
            k->eof = 1;
            /* a partition never read from (empty, or starting at its end): its end is
             * where it resumes; with messages waiting, their offsets are */
            if (k->next < 0 && k->qh == k->qn) k->next = m->offset;
        }
        rd_kafka_message_destroy(m);
        return W2L_OK;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", rd_kafka_message_errstr(m));
    int32_t part = m->partition;
    int64_t off = m->offset;
    rd_kafka_message_destroy(m);
    if (e == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC || e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
        e == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
        e == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED ||
        e == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE || e == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET)
        return w2l__fail(err, W2L_SOURCE, "kafka %s: topic %s partition %d offset %lld: %s (%s)",
                         ks->brokers, topic, (int)part, (long long)off, why,
                         rd_kafka_err2name(e));
    w2l__log(W2L_LOG_WARN, "kafka %s: %s [%d]: %s (retried)", ks->brokers, topic, (int)part, why);
    return W2L_OK;
}

/* The partition whose waiting message comes next in source order, when it may go: every
 * other assigned partition has one waiting or is at its end. NULL otherwise. */
static kpart *next_part(kafka_source *ks)
{
    kpart *best = NULL;
    for (size_t i = 0; i < ks->nparts; i++) {
        kpart *k = &ks->parts[i];
        if (!k->assigned) continue;
        if (k->qh == k->qn) {
            if (!k->eof) return NULL; /* it may still bring something earlier */
            continue;
        }
        const kmsg *a = &k->q[k->qh];
        if (!best) {
            best = k;
            continue;
        }
        const kmsg *b = &best->q[best->qh];
        if (a->k1 < b->k1 || (a->k1 == b->k1 && a->k2 < b->k2)) best = k;
    }
    return best;
}

static w2l_rc commit_position(kafka_source *ks, w2l_emitter *em, size_t *count,
                              w2l_error *err)
{
    w2l_buf pos = { 0 };
    w2l_rc rc = position(ks, &pos, err);
    size_t n = 0;
    if (rc == W2L_OK)
        rc = w2l__cdc_stream_emit(&ks->st, em, (const char *)pos.data, pos.len, &ks->batch_end,
                                  &n, err);
    w2l_buf_release(&pos);
    *count += n;
    return rc;
}

/* A member of a group: whether the message's table holds it already (the lake's position of
 * the table for k is past its offset), so that it is skipped. */
static w2l_rc in_lake(kafka_source *ks, const kpart *k, const rd_kafka_message_t *m, int *yes,
                      w2l_error *err)
{
    char db[200], tb[200];
    int64_t next;
    int rows = 0;
    *yes = 0;
    if (!m->payload || !w2l__cdc_peek_table(ks->fmt, m->payload, m->len, db, tb, sizeof db, &rows))
        return W2L_OK;
    W2L_TRY(ks->lake.committed(ks->lake.ctx, db, tb, k->topic, k->part, rows, &next, err));
    *yes = m->offset < next;
    return W2L_OK;
}

/* Decodes the message at the head of k; fails naming topic, partition and offset. */
static w2l_rc take(kafka_source *ks, kpart *k, w2l_emitter *em, size_t *count, w2l_error *err)
{
    kmsg q = k->q[k->qh++];
    if (k->paused && k->qn - k->qh < PART_QUEUE_MAX / 2) part_pause(ks, k, 0);
    rd_kafka_message_t *m = q.m;
    w2l__cdc_where w = { .topic = k->topic, .partition = k->part, .n = (uint64_t)m->offset };
    w2l_rc rc = W2L_OK;
    int replay = 0;
    if (ks->lake.committed) {
        rc = in_lake(ks, k, m, &replay, err);
        ks->replayed += (uint64_t)replay;
    }
    if (rc == W2L_OK && !replay && m->payload && m->len) {
        w2l__cdc_step step;
        rc = w2l__cdc_stream_decode(&ks->st, m->payload, m->len, 0, &w, &step, err);
        if (rc == W2L_OK && step == W2L__CDC_BEFORE) {
            rc = commit_position(ks, em, count, err);
            if (rc == W2L_OK)
                rc = w2l__cdc_stream_decode(&ks->st, m->payload, m->len, 0, &w, &step, err);
        }
    }
    char where[320];
    if (rc != W2L_OK) w2l__cdc_where_text(&w, where, sizeof where); /* only on failure */
    if (rc == W2L_SOURCE && ks->skip_bad) {
        ks->skipped++;
        w2l__log(W2L_LOG_WARN, "kafka %s: %s: %s; skipped (source.on-bad-message=skip, %llu "
                 "so far)", ks->brokers, where, err->msg, (unsigned long long)ks->skipped);
        w2l_error_clear(err);
        rc = W2L_OK;
    } else if (rc != W2L_OK && rc != W2L_NOMEM) {
        w2l__error_prefix(err, "kafka %s: %s: ", ks->brokers, where);
    }
    if (rc == W2L_OK) {
        k->next = m->offset + 1;
        ks->batch_end = w; /* names the transaction in quarantine reasons */
    }
    rd_kafka_message_destroy(m);
    return rc;
}

/* Emits the position as it stands, with no message: checkpoints after it hold it. */
static w2l_rc announce(kafka_source *ks, w2l_emitter *em, w2l_error *err)
{
    w2l_buf pos = { 0 };
    w2l_rc rc = position(ks, &pos, err);
    if (rc == W2L_OK) rc = w2l_emit_commit(em, (const char *)pos.data, pos.len, err);
    w2l_buf_release(&pos);
    if (rc == W2L_OK) ks->announce = 0;
    return rc;
}

static int all_caught_up(const kafka_source *ks)
{
    if (!ks->assigned_once) return 0;
    for (size_t i = 0; i < ks->nparts; i++)
        if (ks->parts[i].assigned && (!ks->parts[i].eof || ks->parts[i].qh < ks->parts[i].qn))
            return 0;
    return 1;
}

static w2l_rc ks_next(w2l_source *self, w2l_emitter *em, int timeout_ms, w2l_error *err)
{
    kafka_source *ks = (kafka_source *)self;
    w2l_error local;
    if (!err) err = &local;
    if (ks->failed) {
        *err = ks->ferr;
        return ks->ferr.code;
    }
    if (ks->done) return W2L_DONE;
    w2l_rc rc = W2L_OK;
    size_t count = 0;
    /* the restored position is this run's until a message follows (as the file source
     * does), so an early checkpoint still records where to resume */
    if (ks->announce) W2L_TRY(announce(ks, em, err));
    if (!ks->in_group) {
        int64_t since = w2l__now_ms() - ks->metadata_ms;
        if (since >= (ks->assigned_once ? METADATA_EVERY_MS : 500)) rc = assign_all(ks, err);
        if (rc != W2L_OK) {
            ks->failed = 1;
            ks->ferr = *err;
            return rc;
        }
    }
    int64_t deadline = w2l__mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
    size_t decoded = 0;
    while (rc == W2L_OK && decoded < BATCH_MESSAGES) {
        /* take what may go */
        kpart *k;
        while (rc == W2L_OK && decoded < BATCH_MESSAGES && (k = next_part(ks)) != NULL) {
            rc = take(ks, k, em, &count, err);
            decoded++;
        }
        if (rc != W2L_OK || decoded >= BATCH_MESSAGES) break;
        if (ks->st.until_caught_up && all_caught_up(ks)) break;
        /* fetch more: without waiting while messages come, else until the deadline */
        int64_t left = deadline - w2l__mono_ns() / 1000000;
        int wait = decoded ? 0 : left > 0 ? (int)W2L_MIN(left, 100) : 0;
        int got = 0;
        rc = poll_once(ks, wait, &got, err);
        for (int i = 0; rc == W2L_OK && got && i < BATCH_MESSAGES; i++)
            rc = poll_once(ks, 0, &got, err);
        if (rc != W2L_OK) break;
        if (!got && (decoded || left <= 0)) break;
    }
    if (rc == W2L_OK && decoded) rc = commit_position(ks, em, &count, err);
    else if (rc == W2L_OK && ks->announce && (rc = announce(ks, em, err)) == W2L_OK)
        count++; /* partitions revoked: their position goes out */
    if (rc != W2L_OK) {
        w2l__cdc_clear(ks->st.dec);
        ks->failed = 1;
        ks->ferr = *err;
        return rc;
    }
    if (!ks->assigned_once && !ks->joined) {
        /* nothing assigned yet: a group join takes seconds; brokers that never answer, or
         * topics that never get partitions, are an error once the timeout has passed */
        int64_t waited = w2l__now_ms() - ks->open_ms;
        int64_t limit = ks->brokers_down ? ks->connect_timeout_ms
                                         : W2L_MAX(ks->connect_timeout_ms, 60000);
        if (waited > limit) {
            rc = w2l__fail(err, W2L_UNAVAILABLE,
                           "kafka %s: no partition of %s assigned to group %s after %lld s (%s)",
                           ks->brokers, ks->topics_text, ks->group, (long long)(waited / 1000),
                           ks->brokers_down ? "no broker answers; see source.connect-timeout"
                                            : "does the topic exist?");
            ks->failed = 1;
            ks->ferr = *err;
            return rc;
        }
    }
    if (atomic_load(&ks->brokers_down) && w2l__now_ms() - ks->probe_ms >= 5000) {
        /* caught up, nothing comes either way: ask a broker, so that the lag is known
         * again as soon as one answers, not only with the next message */
        ks->probe_ms = w2l__now_ms();
        const struct rd_kafka_metadata *md = NULL;
        if (rd_kafka_metadata(ks->rk, 0, NULL, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_metadata_destroy(md);
            atomic_store(&ks->brokers_down, 0);
        }
    }
    int end = all_caught_up(ks);
    atomic_store(&ks->at_end, end);
    if (count) return W2L_OK;
    if (ks->st.until_caught_up && end) {
        ks->done = 1;
        w2l__log(W2L_LOG_INFO, "kafka %s: caught up on %s", ks->brokers, ks->topics_text);
        char who[300];
        snprintf(who, sizeof who, "kafka %.120s", ks->brokers);
        w2l__tfilter_report(&ks->st.filter, who); /* include / exclude matched nothing? */
        return W2L_DONE;
    }
    return W2L_AGAIN; /* nothing emitted (tombstones and skipped messages only, perhaps) */
}

/* ---- checkpoints, lag, open, close ---- */

/* Commits offsets to the group: for monitoring and lag tools, and, in a group, where the
 * next owner of a partition starts (on_rebalance). sync: wait for the answer. */
static w2l_rc commit_offsets(kafka_source *ks, rd_kafka_topic_partition_list_t *l, int sync,
                             w2l_error *err)
{
    rd_kafka_resp_err_t e = l->cnt ? rd_kafka_commit(ks->rk, l, !sync) : RD_KAFKA_RESP_ERR_NO_ERROR;
    if (e)
        return w2l__fail(err, W2L_UNAVAILABLE, "kafka %s: committing offsets of group %s: %s",
                         ks->brokers, ks->group, rd_kafka_err2str(e));
    return W2L_OK;
}

static w2l_rc ks_checkpoint_complete(w2l_source *self, uint64_t ckpt, w2l_error *err)
{
    (void)ckpt;
    kafka_source *ks = (kafka_source *)self;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)ks->nparts);
    W2L_NOMEM_IF(!l, err);
    for (size_t i = 0; i < ks->nparts; i++)
        if (ks->parts[i].assigned && ks->parts[i].next >= 0)
            rd_kafka_topic_partition_list_add(l, ks->parts[i].topic, ks->parts[i].part)->offset =
                ks->parts[i].next;
    w2l_rc rc = commit_offsets(ks, l, 0, err);
    rd_kafka_topic_partition_list_destroy(l);
    return rc;
}

/* Checkpoint ckpt committed to every table, at position: its offsets go to the group, and
 * partitions taken away are released once it holds everything read from them. */
static w2l_rc ks_checkpoint_done(w2l_source *self, uint64_t ckpt, const char *position,
                                 w2l_error *err)
{
    kafka_source *ks = (kafka_source *)self;
    /* a member's committed offsets are where the next owner starts: only ever a checkpoint's
     * (what was read since may not be in the lake) */
    if (!position && !ks->lake.committed) return ks_checkpoint_complete(self, ckpt, err);
    if (!position) { /* nothing emitted before it: the next one holds the announced position */
        if (ks->revoking) ks->lake.checkpoint_soon(ks->lake.ctx);
        return W2L_OK;
    }
    w2l__json *j = NULL;
    W2L_TRY(w2l__json_parse(position, strlen(position), &j, err));
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)ks->nparts);
    int covered = 1; /* every partition being released is in the checkpoint up to its end */
    const w2l__json *topics = w2l__json_get(j, "kafka");
    for (size_t i = 0; l && i < ks->nparts; i++) {
        const kpart *k = &ks->parts[i];
        if (!k->assigned && !k->revoking) continue;
        char pk[16];
        snprintf(pk, sizeof pk, "%d", (int)k->part);
        int64_t off;
        const w2l__json *o = w2l__json_get(w2l__json_get(topics, k->topic), pk);
        if (!o || w2l__json_int64(o, &off)) off = -1;
        if (off >= 0) rd_kafka_topic_partition_list_add(l, k->topic, k->part)->offset = off;
        if (k->revoking && k->next >= 0 && off < k->next) covered = 0;
    }
    w2l__json_free(j);
    W2L_NOMEM_IF(!l, err);
    int release = ks->revoking && covered;
    w2l_rc rc = commit_offsets(ks, l, release, err);
    rd_kafka_topic_partition_list_destroy(l);
    if (release) {
        rd_kafka_error_t *ke = NULL;
        if (ks->cooperative) ke = rd_kafka_incremental_unassign(ks->rk, ks->revoking);
        else rd_kafka_assign(ks->rk, NULL);
        if (ke) {
            w2l__log(W2L_LOG_WARN, "kafka %s: group %s: releasing partitions: %s", ks->brokers,
                     ks->group, rd_kafka_error_string(ke));
            rd_kafka_error_destroy(ke);
        }
        for (size_t i = 0; i < ks->nparts; i++)
            if (ks->parts[i].revoking) {
                ks->parts[i].revoking = ks->parts[i].paused = 0;
                w2l__log(W2L_LOG_INFO, "kafka: released %s [%d] at offset %lld (checkpoint %llu)",
                         ks->parts[i].topic, (int)ks->parts[i].part,
                         (long long)ks->parts[i].next, (unsigned long long)ckpt);
            }
        rd_kafka_topic_partition_list_destroy(ks->revoking);
        ks->revoking = NULL;
    } else if (ks->revoking) {
        ks->lake.checkpoint_soon(ks->lake.ctx);
    }
    return rc;
}

static int64_t ks_lag_ms(w2l_source *self)
{
    kafka_source *ks = (kafka_source *)self;
    if (atomic_load(&ks->brokers_down)) return -1; /* what waits there is not known */
    if (atomic_load(&ks->at_end)) return 0;
    if (!ks->st.last_ts_ms) return -1;
    int64_t lag = w2l__now_ms() - ks->st.last_ts_ms;
    return lag > 0 ? lag : 0;
}

static void ks_close(w2l_source *self)
{
    kafka_source *ks = (kafka_source *)self;
    for (size_t i = 0; i < ks->nparts; i++) {
        if (ks->rk) part_drop_queue(&ks->parts[i]);
        w2l__free(ks->parts[i].q);
        w2l__free(ks->parts[i].topic);
    }
    w2l__free(ks->parts);
    ks->parts = NULL;
    ks->nparts = 0;
    if (ks->replayed)
        w2l__log(W2L_LOG_INFO, "kafka %s: %llu messages skipped: their tables held them already",
                 ks->brokers, (unsigned long long)ks->replayed);
    if (ks->revoking) rd_kafka_topic_partition_list_destroy(ks->revoking);
    ks->revoking = NULL;
    /* leaving: what is committed is committed, the rest is read again by the next owner */
    ks->lake.committed = NULL;
    if (ks->rk) {
        rd_kafka_consumer_close(ks->rk); /* leaves the group: a rebalance, not a timeout */
        rd_kafka_destroy(ks->rk);
        ks->rk = NULL;
    }
    w2l__cdc_stream_free(&ks->st);
    w2l__free(ks->brokers);
    w2l__free(ks->group);
    w2l__free(ks->topics_text);
    ks->brokers = ks->group = ks->topics_text = NULL;
}

static w2l_rc ks_open(const w2l_source_methods *m, const w2l_conf *conf, const char *uri,
                      const char *restored, w2l_source *self, w2l_error *err)
{
    (void)m;
    kafka_source *ks = (kafka_source *)self;
    ks->open_ms = w2l__now_ms();
    ks->connect_timeout_ms = 10000;
    w2l_rc rc = parse_uri(ks, uri, err);
    if (rc == W2L_OK) {
        const char *v = NULL;
        int64_t t;
        if (conf) w2l_conf_get(conf, "source.on-bad-message", &v, NULL);
        ks->skip_bad = v && !strcmp(v, "skip");
        if (conf && w2l_conf_get_int(conf, "source.connect-timeout", &t, NULL) == W2L_OK)
            ks->connect_timeout_ms = t;
        char *origin = w2l__asprintf("kafka %s", ks->brokers);
        rc = origin ? w2l__cdc_stream_init(&ks->st, ks->fmt, conf, origin, err)
                    : w2l__fail(err, W2L_NOMEM, "out of memory");
        w2l__free(origin);
    }
    if (rc == W2L_OK && restored) {
        rc = parse_position(ks, restored, err);
        ks->announce = rc == W2L_OK;
    }
    if (rc == W2L_OK) rc = make_consumer(ks, conf, err);
    if (rc != W2L_OK) ks_close(self);
    return rc;
}

/* group=G: this process is one of the group's members (V2 shared). */
static int ks_shared(const w2l_conf *conf, const char *uri)
{
    (void)conf;
    const char *q = uri ? strchr(uri, '?') : NULL;
    for (; q && *q; q = strchr(q + 1, '&'))
        if (!strncmp(q + 1, "group=", 6) && q[7] && q[7] != '&') return 1;
    return 0;
}

static void ks_attach(w2l_source *self, const w2l_source_lake *lake)
{
    kafka_source *ks = (kafka_source *)self;
    if (ks->in_group && lake && lake->committed && lake->assigned && lake->checkpoint_soon)
        ks->lake = *lake;
}

const w2l_source_methods w2l__source_kafka = {
    .version = W2L_SOURCE_METHODS_V2,
    .name = "kafka",
    .size = sizeof(kafka_source),
    .open = ks_open,
    .next = ks_next,
    .checkpoint_complete = ks_checkpoint_complete,
    .lag_ms = ks_lag_ms,
    .close = ks_close,
    .shared = ks_shared,
    .attach = ks_attach,
    .checkpoint_done = ks_checkpoint_done,
};
