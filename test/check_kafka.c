/*
 * The Kafka source (lib/source/kafka.c) against librdkafka's mock cluster, hosted in this
 * process (rd_kafka_mock_cluster_new on a producer): the whole pipeline `w2l run
 * --until-caught-up` in-process, read back with w2l_lake_scan(3).
 *   - order across partitions: canal puts a table's DDL on partition 0 and its rows on
 *     others; rows after the DDL that sit earlier in their partition's log than the DDL in
 *     its own still land after the schema change, rows before it before;
 *   - exactly once over restarts: the position (next offset per partition) resumes a run,
 *     nothing read twice or skipped, also with a partition that stayed empty;
 *   - bad messages: a run stops naming topic, partition and offset, or with
 *     source.on-bad-message=skip goes on; a tombstone is skipped.
 * No consumer group is joined (no group= in the URI), so no run waits for a rebalance.
 */
#include <check.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static char dir[600], wh[700], bootstrap[512];
static w2l_error err;
static rd_kafka_t *producer;
static rd_kafka_mock_cluster_t *mock;

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", tmpdir_make("kafka"));
    snprintf(wh, sizeof wh, "%s/lake", dir);
    w2l_error_clear(&err);
    char es[256];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    ck_assert_int_eq(rd_kafka_conf_set(c, "log_level", "0", es, sizeof es), RD_KAFKA_CONF_OK);
    producer = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
    ck_assert_msg(producer != NULL, "%s", es);
    mock = rd_kafka_mock_cluster_new(producer, 1);
    ck_assert_ptr_nonnull(mock);
    snprintf(bootstrap, sizeof bootstrap, "%s", rd_kafka_mock_cluster_bootstraps(mock));
    ck_assert_int_eq(rd_kafka_mock_topic_create(mock, "cdc", 3, 1), 0);
}

static void teardown(void)
{
    rd_kafka_mock_cluster_destroy(mock);
    rd_kafka_destroy(producer);
    tmpdir_remove(dir);
}

/* Produces value (NULL: a tombstone) to partition p of topic cdc, through a producer
 * connected to the mock's bootstrap (the hosting handle itself is not connected). */
static rd_kafka_t *sender;

static void send_to(int32_t p, const char *value)
{
    if (!sender) {
        char es[256];
        rd_kafka_conf_t *c = rd_kafka_conf_new();
        ck_assert_int_eq(rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, es, sizeof es),
                         RD_KAFKA_CONF_OK);
        ck_assert_int_eq(rd_kafka_conf_set(c, "log_level", "0", es, sizeof es), RD_KAFKA_CONF_OK);
        sender = rd_kafka_new(RD_KAFKA_PRODUCER, c, es, sizeof es);
        ck_assert_msg(sender != NULL, "%s", es);
    }
    rd_kafka_resp_err_t e = rd_kafka_producev(
        sender, RD_KAFKA_V_TOPIC("cdc"), RD_KAFKA_V_PARTITION(p),
        RD_KAFKA_V_VALUE((void *)value, value ? strlen(value) : 0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    ck_assert_msg(e == 0, "%s", rd_kafka_err2str(e));
}

static void sent(void)
{
    ck_assert_int_eq(rd_kafka_flush(sender, 10000), 0);
    rd_kafka_destroy(sender);
    sender = NULL;
}

static w2l_rc run_with(const char *const *kv, w2l_error *e)
{
    w2l_conf *c = w2l_conf_new();
    char uri[800];
    snprintf(uri, sizeof uri, "kafka://%s/cdc?format=canal-json", bootstrap);
    ck_assert_ok(w2l_conf_set(c, "source", uri, &err), err);
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "until-caught-up", "true", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "kafka", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    ck_assert_ok(w2l_conf_set(c, "kafka.log_level", "0", &err), err);
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_ok(w2l_conf_set(c, kv[i], kv[i + 1], &err), err);
    w2l_pipeline *p = NULL;
    w2l_rc rc = w2l_pipeline_new(c, &p, e);
    if (rc == W2L_OK) rc = w2l_pipeline_run(p, e);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    return rc;
}

static const char *table_rows(void) { return lake_rows(wh, "db", "t"); }

/* canal flat messages of db.t (id INT key, v VARCHAR[, w INT]) at source time es */
static const char *ins(long es, int id, const char *v, int w)
{
    static char m[8][512];
    static int k;
    char *b = m[k++ % 8];
    if (w < 0)
        snprintf(b, 512,
                 "{\"data\":[{\"id\":\"%d\",\"v\":\"%s\"}],\"database\":\"db\",\"es\":%ld,"
                 "\"id\":%ld,"
                 "\"isDdl\":false,\"mysqlType\":{\"id\":\"int(11)\",\"v\":\"varchar(20)\"},"
                 "\"old\":null,\"pkNames\":[\"id\"],\"sql\":\"\",\"sqlType\":{\"id\":4,\"v\":12},"
                 "\"table\":\"t\",\"ts\":%ld,\"type\":\"INSERT\"}",
                 id, v, es, es, es);
    else
        snprintf(b, 512,
                 "{\"data\":[{\"id\":\"%d\",\"v\":\"%s\",\"w\":\"%d\"}],\"database\":\"db\","
                 "\"es\":%ld,\"id\":%ld,\"isDdl\":false,\"mysqlType\":{\"id\":\"int(11)\","
                 "\"v\":\"varchar(20)\",\"w\":\"int(11)\"},\"old\":null,\"pkNames\":[\"id\"],"
                 "\"sql\":\"\",\"sqlType\":{\"id\":4,\"v\":12,\"w\":4},\"table\":\"t\",\"ts\":%ld,"
                 "\"type\":\"INSERT\"}",
                 id, v, w, es, es, es);
    return b;
}

static const char *add_w(long es)
{
    static char b[512];
    snprintf(b, sizeof b,
             "{\"data\":null,\"database\":\"db\",\"es\":%ld,\"id\":%ld,\"isDdl\":true,"
             "\"mysqlType\":null,\"old\":null,\"pkNames\":null,"
             "\"sql\":\"ALTER TABLE t ADD COLUMN w INT\",\"sqlType\":null,\"table\":\"t\","
             "\"ts\":%ld,\"type\":\"ALTER\"}",
             es, es, es);
    return b;
}

START_TEST(ddl_on_partition_0_orders_rows_of_other_partitions)
{
    /* partition 2 holds rows after the ALTER; it is produced first and its log is long,
     * so a consumer taking partitions as they come would see them before the DDL */
    send_to(2, ins(4000, 4, "d", 40));
    send_to(2, ins(5000, 5, "e", 50));
    send_to(1, ins(1000, 1, "a", -1));
    send_to(1, ins(6000, 6, "f", 60));
    send_to(0, ins(2000, 2, "b", -1));
    send_to(0, add_w(3000));
    sent();
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a|- 2|b|- 4|d|40 5|e|50 6|f|60");
}
END_TEST

START_TEST(ddl_after_rows_that_carry_it)
{
    /* partition 0 is at the end of its log when rows after the ALTER come on partition 2:
     * their messages describe the new column, so the table has it before the ALTER, which
     * then comes (here with the next run) and finds its column there: no change, no error */
    send_to(1, ins(1000, 1, "a", -1));
    send_to(2, ins(4000, 4, "d", 40));
    sent();
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a|- 4|d|40");
    send_to(0, add_w(3000));
    send_to(0, ins(5000, 5, "e", 50));
    sent();
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a|- 4|d|40 5|e|50");
}
END_TEST

static int on_ckpt(void *ctx, const w2l_checkpoint_info *ck)
{
    if (!ck->ns && ck->source_position) snprintf(ctx, 512, "%s", ck->source_position);
    return 0;
}

/* The source position of the newest sealed checkpoint. */
static const char *position_of_lake(void)
{
    static char pos[512];
    pos[0] = '\0';
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *l;
    ck_assert_ok(w2l_lake_open(c, &l, &err), err);
    ck_assert_ok(w2l_lake_checkpoints(l, on_ckpt, pos, &err), err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    return pos;
}

START_TEST(restart_resumes_at_the_position)
{
    send_to(0, ins(1000, 1, "a", -1));
    send_to(1, ins(1001, 2, "b", -1));
    sent();
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a 2|b");
    /* partition 2 stayed empty: its end is part of the position */
    ck_assert_str_eq(position_of_lake(), "{\"kafka\":{\"cdc\":{\"0\":1,\"1\":1,\"2\":0}}}");
    ck_assert_ok(run_with(NULL, &err), err); /* nothing new */
    ck_assert_str_eq(table_rows(), "1|a 2|b");
    send_to(2, ins(1002, 3, "c", -1));
    send_to(0, ins(1003, 4, "d", -1));
    sent();
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a 2|b 3|c 4|d");
    ck_assert_str_eq(position_of_lake(), "{\"kafka\":{\"cdc\":{\"0\":2,\"1\":1,\"2\":1}}}");
}
END_TEST

START_TEST(bad_message_fails_naming_where_or_is_skipped)
{
    send_to(0, ins(1000, 1, "a", -1));
    send_to(1, ins(1001, 2, "b", -1));
    send_to(1, "{\"data\": [not json");
    send_to(1, NULL); /* a tombstone */
    send_to(2, ins(1003, 3, "c", -1));
    sent();
    ck_assert_int_eq(run_with(NULL, &err), W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "topic cdc partition 1 offset 1") &&
                      strstr(err.msg, "malformed"),
                  "%s", err.msg);
    static const char *const skip[] = { "source.on-bad-message", "skip", NULL };
    ck_assert_ok(run_with(skip, &err), err);
    ck_assert_str_eq(table_rows(), "1|a 2|b 3|c");
    ck_assert_str_eq(position_of_lake(), "{\"kafka\":{\"cdc\":{\"0\":1,\"1\":3,\"2\":1}}}");
}
END_TEST

/* Broker errors librdkafka retries: Fetch answered with errors, then a lost connection. */
START_TEST(broker_errors_are_retried)
{
    send_to(0, ins(1000, 1, "a", -1));
    send_to(1, ins(1001, 2, "b", -1));
    send_to(2, ins(1002, 3, "c", -1));
    sent();
    rd_kafka_mock_push_request_errors(
        mock, 1 /* Fetch */, 4, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR__TRANSPORT,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
    rd_kafka_mock_push_request_errors(mock, 3 /* Metadata */, 1, RD_KAFKA_RESP_ERR__TRANSPORT);
    ck_assert_ok(run_with(NULL, &err), err);
    ck_assert_str_eq(table_rows(), "1|a 2|b 3|c");
}
END_TEST

/* A topic that is not there fails the run, naming it. */
START_TEST(missing_topic_fails)
{
    w2l_conf *c = w2l_conf_new();
    char uri[800];
    snprintf(uri, sizeof uri, "kafka://%s/cdc,nosuch?format=canal-json", bootstrap);
    ck_assert_ok(w2l_conf_set(c, "source", uri, &err), err);
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "until-caught-up", "true", &err), err);
    ck_assert_ok(w2l_conf_set(c, "kafka.log_level", "0", &err), err);
    w2l_pipeline *p = NULL;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    w2l_rc rc = w2l_pipeline_run(p, &err);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(err.msg, "topic nosuch does not exist"), "%s", err.msg);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
}
END_TEST

START_TEST(bad_uri_and_position)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    const char *bad[] = { "kafka://", "kafka://h:1/", "kafka://h:1/t", "kafka://h:1/t?format=x",
                          "kafka://h:1/t?format=canal-json&nope=1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_ok(w2l_conf_set(c, "source", bad[i], &err), err);
        w2l_pipeline *p = NULL;
        ck_assert_int_eq(w2l_pipeline_new(c, &p, &err), W2L_CONFIG);
        ck_assert_msg(strstr(err.msg, "source URI"), "%s: %s", bad[i], err.msg);
    }
    w2l_conf_free(c);
}
END_TEST

Suite *suite_kafka(void)
{
    Suite *s = suite_create("kafka");
    TCase *t = tcase_create("mock");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, ddl_on_partition_0_orders_rows_of_other_partitions);
    tcase_add_test(t, ddl_after_rows_that_carry_it);
    tcase_add_test(t, restart_resumes_at_the_position);
    tcase_add_test(t, bad_message_fails_naming_where_or_is_skipped);
    tcase_add_test(t, broker_errors_are_retried);
    tcase_add_test(t, missing_topic_fails);
    tcase_add_test(t, bad_uri_and_position);
    suite_add_tcase(s, t);
    return s;
}
