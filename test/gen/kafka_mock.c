/*
 * Hosts a librdkafka mock cluster for the Kafka interop tests (test/interop/kafka.test.mjs,
 * through test/interop/lib/kafka.mjs) and the Kafka benchmark (bench/kafka.sh):
 *
 *   kafka_mock [BROKERS]          (default 3; every broker listens on 127.0.0.1)
 *
 * Prints one line "bootstrap HOST:PORT,HOST:PORT,..." and then reads commands from stdin,
 * one per line, answering each with one line "ok ..." or "error: ...":
 *
 *   topic NAME PARTITIONS [REPLICATION]   create a topic (replication default: the brokers)
 *   produce FILE        produce every line "TOPIC<TAB>PARTITION<TAB>KEY<TAB>VALUE" of FILE
 *                       (KEY "-": no key; VALUE "-": no value, a tombstone; PARTITION -1:
 *                       the producer's partitioner), acks=all, flushed before the answer
 *                       "ok N" (N messages produced); fails when the mock's log retention
 *                       (5 MiB or 100000 batches per partition) dropped any of them
 *   consume TOPIC       read every partition of TOPIC from its start to its end, without a
 *                       group: "ok P:MESSAGES:TOMBSTONES:LOW:HIGH ..." per partition
 *   errors APIKEY COUNT CODE [CODE...]    push COUNT request errors for APIKEY (numbers),
 *                       the codes taken in turn (rd_kafka_mock_push_request_errors)
 *   down BROKERID / up BROKERID           refuse / accept new connections
 *   quit
 *
 * It ends, destroying the cluster, on quit, at the end of stdin or on SIGTERM / SIGINT.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stopping;
static int nbrokers;
static rd_kafka_t *host;     /* owns the mock cluster */
static rd_kafka_t *producer; /* produces into it, as a client would */
static rd_kafka_mock_cluster_t *mc;
static char bootstraps[1024];

/* Delivery reports of the current produce command. */
static long delivered, failed;
static char first_failure[256];

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (!m->err) {
        delivered++;
        return;
    }
    if (!failed++)
        snprintf(first_failure, sizeof first_failure, "%s [%d]: %s", rd_kafka_topic_name(m->rkt),
                 (int)m->partition, rd_kafka_err2str(m->err));
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK) return 0;
    fprintf(stderr, "kafka_mock: %s=%s: %s\n", key, value, errstr);
    return -1;
}

static rd_kafka_t *client(rd_kafka_type_t type, const char *const *props)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char errstr[512];
    for (; props && props[0]; props += 2)
        if (conf_set(conf, props[0], props[1])) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    if (type == RD_KAFKA_PRODUCER) rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
    if (!rk) {
        fprintf(stderr, "kafka_mock: rd_kafka_new: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
    }
    return rk;
}

static void answer(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void answer(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* The next whitespace-separated word of *s, or NULL. */
static char *word(char **s)
{
    char *p = *s + strspn(*s, " \t");
    if (!*p) return NULL;
    char *e = p + strcspn(p, " \t");
    if (*e) *e++ = 0;
    *s = e;
    return p;
}

static int number(const char *w, long *out)
{
    char *end;
    errno = 0;
    long v = w ? strtol(w, &end, 10) : 0;
    if (!w || !*w || *end || errno) return -1;
    *out = v;
    return 0;
}

/* The partitions of topic (metadata), or -1 with an answer given. */
static int partition_count(rd_kafka_t *rk, const char *topic)
{
    rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, t, &md, 10000);
    rd_kafka_topic_destroy(t);
    if (e) {
        answer("error: metadata of topic %s: %s", topic, rd_kafka_err2str(e));
        return -1;
    }
    int n = -1;
    if (md->topic_cnt == 1 && !md->topics[0].err) n = md->topics[0].partition_cnt;
    else
        answer(
            "error: topic %s: %s", topic,
            rd_kafka_err2str(md->topic_cnt ? md->topics[0].err : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC));
    rd_kafka_metadata_destroy(md);
    return n;
}

/* Answers an error when the mock's retention dropped messages of any partition of the topics
 * produced into (their low watermark moved up from 0). */
static int check_retention(char **topics, size_t ntopics)
{
    for (size_t i = 0; i < ntopics; i++) {
        int n = partition_count(producer, topics[i]);
        if (n < 0) return -1;
        for (int p = 0; p < n; p++) {
            int64_t lo, hi;
            rd_kafka_resp_err_t e =
                rd_kafka_query_watermark_offsets(producer, topics[i], p, &lo, &hi, 10000);
            if (e) {
                answer("error: watermarks of %s [%d]: %s", topics[i], p, rd_kafka_err2str(e));
                return -1;
            }
            if (lo > 0) {
                answer("error: %s [%d]: the mock cluster dropped offsets 0..%lld (its log keeps 5 "
                       "MiB or "
                       "100000 batches per partition); produce less or into more partitions",
                       topics[i], p, (long long)lo - 1);
                return -1;
            }
        }
    }
    return 0;
}

static void cmd_produce(char *file)
{
    FILE *f = file ? fopen(file, "r") : NULL;
    if (!f) {
        answer("error: produce: %s: %s", file ? file : "(no file)",
               file ? strerror(errno) : "usage: produce FILE");
        return;
    }
    delivered = failed = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0, sent = 0;
    char *topics[256]; /* produced into: their retention is checked */
    size_t ntopics = 0;
    int bad = 0;
    while (!bad && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (!len) continue;
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL,
             *tab3 = tab2 ? strchr(tab2 + 1, '\t') : NULL;
        long part;
        if (!tab3) {
            answer("error: %s:%ld: want TOPIC<TAB>PARTITION<TAB>KEY<TAB>VALUE", file, lineno);
            bad = 1;
            break;
        }
        *tab1 = *tab2 = *tab3 = 0;
        const char *topic = line, *key = tab2 + 1, *value = tab3 + 1;
        if (number(tab1 + 1, &part) || part < -1) {
            answer("error: %s:%ld: bad partition \"%s\"", file, lineno, tab1 + 1);
            bad = 1;
            break;
        }
        size_t i = 0;
        while (i < ntopics && strcmp(topics[i], topic)) i++;
        if (i == ntopics) {
            if (ntopics == sizeof topics / sizeof *topics) {
                answer("error: %s:%ld: more than %zu topics in one produce file", file, lineno,
                       ntopics);
                bad = 1;
                break;
            }
            topics[ntopics++] = strdup(topic);
        }
        int nullkey = !strcmp(key, "-"), nullvalue = !strcmp(value, "-");
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(
                producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION((int32_t)part),
                RD_KAFKA_V_KEY(nullkey ? NULL : key, nullkey ? 0 : strlen(key)),
                RD_KAFKA_V_VALUE(nullvalue ? NULL : (void *)value, nullvalue ? 0 : strlen(value)),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(producer, 50);
                continue;
            }
            if (e) {
                answer("error: %s:%ld: produce to %s [%ld]: %s", file, lineno, topic, part,
                       rd_kafka_err2str(e));
                bad = 1;
            }
            break;
        }
        if (!bad) sent++;
        rd_kafka_poll(producer, 0);
    }
    free(line);
    fclose(f);
    rd_kafka_resp_err_t fe = rd_kafka_flush(producer, 120000);
    if (!bad && fe)
        answer("error: produce: flush: %s (%ld of %ld delivered)", rd_kafka_err2str(fe), delivered,
               sent);
    else if (!bad && failed)
        answer("error: produce: %ld of %ld messages failed, first: %s", failed, sent,
               first_failure);
    else if (!bad && !check_retention(topics, ntopics)) answer("ok %ld", sent);
    for (size_t i = 0; i < ntopics; i++) free(topics[i]);
}

static void cmd_consume(const char *topic)
{
    if (!topic) {
        answer("error: usage: consume TOPIC");
        return;
    }
    const char *props[] = {"bootstrap.servers", bootstraps, "group.id", "kafka_mock-consume",
                           "enable.auto.commit", "false", "enable.partition.eof", "true",
                           "auto.offset.reset", "earliest", NULL};
    rd_kafka_t *c = client(RD_KAFKA_CONSUMER, props);
    if (!c) {
        answer("error: consume: cannot create a consumer");
        return;
    }
    int n = partition_count(c, topic);
    if (n < 0) {
        rd_kafka_destroy(c);
        return;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
    long *msgs = calloc((size_t)n, sizeof *msgs), *nulls = calloc((size_t)n, sizeof *nulls);
    int64_t *lo = calloc((size_t)n, sizeof *lo), *hi = calloc((size_t)n, sizeof *hi);
    int remaining = 0, bad = 0;
    for (int p = 0; p < n && !bad; p++) {
        rd_kafka_resp_err_t e =
            rd_kafka_query_watermark_offsets(c, topic, p, &lo[p], &hi[p], 10000);
        if (e) {
            answer("error: watermarks of %s [%d]: %s", topic, p, rd_kafka_err2str(e));
            bad = 1;
        }
        if (hi[p] > lo[p]) {
            rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
            remaining++;
        }
    }
    if (!bad && remaining) rd_kafka_assign(c, l);
    while (!bad && remaining) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 10000);
        if (!m) {
            answer(
                "error: consume %s: no message for 10 s with %d partition(s) not read to their end",
                topic, remaining);
            bad = 1;
            break;
        }
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->offset >= hi[m->partition]) remaining--;
        } else if (m->err) {
            answer("error: consume %s [%d]: %s", topic, (int)m->partition,
                   rd_kafka_message_errstr(m));
            bad = 1;
        } else {
            msgs[m->partition]++;
            if (!m->payload) nulls[m->partition]++;
        }
        rd_kafka_message_destroy(m);
    }
    if (!bad) {
        printf("ok");
        for (int p = 0; p < n; p++)
            printf(" %d:%ld:%ld:%lld:%lld", p, msgs[p], nulls[p], (long long)lo[p],
                   (long long)hi[p]);
        answer("%s", "");
    }
    rd_kafka_topic_partition_list_destroy(l);
    free(msgs);
    free(nulls);
    free(lo);
    free(hi);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
}

static void cmd_errors(char *rest)
{
    long api, count, code;
    if (number(word(&rest), &api) || number(word(&rest), &count) || count < 1 || count > 10000) {
        answer("error: usage: errors APIKEY COUNT CODE [CODE...]");
        return;
    }
    rd_kafka_resp_err_t codes[64];
    size_t ncodes = 0;
    char *w;
    while ((w = word(&rest))) {
        if (number(w, &code) || ncodes == sizeof codes / sizeof *codes) {
            answer("error: errors: bad error code \"%s\" (numbers, at most 64)", w);
            return;
        }
        codes[ncodes++] = (rd_kafka_resp_err_t)code;
    }
    if (!ncodes) {
        answer("error: usage: errors APIKEY COUNT CODE [CODE...]");
        return;
    }
    rd_kafka_resp_err_t *all = malloc((size_t)count * sizeof *all);
    for (long i = 0; i < count; i++) all[i] = codes[(size_t)i % ncodes];
    rd_kafka_mock_push_request_errors_array(mc, (int16_t)api, (size_t)count, all);
    free(all);
    answer("ok %ld", count);
}

static void cmd_broker(const char *verb, char *rest)
{
    long id;
    if (number(word(&rest), &id) || id < 1 || id > nbrokers) {
        answer("error: usage: %s BROKERID (1..%d)", verb, nbrokers);
        return;
    }
    rd_kafka_resp_err_t e = !strcmp(verb, "down") ? rd_kafka_mock_broker_set_down(mc, (int32_t)id)
                                                  : rd_kafka_mock_broker_set_up(mc, (int32_t)id);
    if (e) answer("error: %s %ld: %s", verb, id, rd_kafka_err2str(e));
    else answer("ok");
}

static void cmd_topic(char *rest)
{
    char *name = word(&rest);
    long parts, repl = nbrokers;
    char *r;
    if (!name || number(word(&rest), &parts) || parts < 1 ||
        ((r = word(&rest)) && number(r, &repl)) || repl < 1 || repl > nbrokers) {
        answer("error: usage: topic NAME PARTITIONS [REPLICATION 1..%d]", nbrokers);
        return;
    }
    rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, name, (int)parts, (int)repl);
    if (e) answer("error: topic %s: %s", name, rd_kafka_err2str(e));
    else answer("ok");
}

int main(int argc, char **argv)
{
    long n = 3;
    if (argc > 2 || (argc == 2 && (number(argv[1], &n) || n < 1 || n > 100))) {
        fprintf(stderr, "usage: kafka_mock [BROKERS 1..100]\n");
        return 2;
    }
    nbrokers = (int)n;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a pending read of stdin returns */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    const char *host_props[] = {"log_level", "3", NULL};
    host = client(RD_KAFKA_PRODUCER, host_props);
    if (!host) return 1;
    mc = rd_kafka_mock_cluster_new(host, nbrokers);
    if (!mc) {
        fprintf(stderr, "kafka_mock: rd_kafka_mock_cluster_new failed\n");
        rd_kafka_destroy(host);
        return 1;
    }
    snprintf(bootstraps, sizeof bootstraps, "%s", rd_kafka_mock_cluster_bootstraps(mc));
    const char *prod_props[] = { "bootstrap.servers",
                                 bootstraps,
                                 "acks",
                                 "all",
                                 "enable.idempotence",
                                 "false",
                                 "linger.ms",
                                 "20",
                                 "batch.size",
                                 "1000000",
                                 "compression.type",
                                 "zstd",
                                 "queue.buffering.max.messages",
                                 "200000",
                                 "log_level",
                                 "3",
                                 NULL };
    producer = client(RD_KAFKA_PRODUCER, prod_props);
    if (!producer) {
        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(host);
        return 1;
    }
    answer("bootstrap %s", bootstraps);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (!stopping && (len = getline(&line, &cap, stdin)) >= 0) {
        if (len && line[len - 1] == '\n') line[--len] = 0;
        char *rest = line, *verb = word(&rest);
        if (!verb) continue;
        if (!strcmp(verb, "quit")) {
            answer("ok");
            break;
        } else if (!strcmp(verb, "topic")) cmd_topic(rest);
        else if (!strcmp(verb, "produce")) cmd_produce(word(&rest));
        else if (!strcmp(verb, "consume")) cmd_consume(word(&rest));
        else if (!strcmp(verb, "errors")) cmd_errors(rest);
        else if (!strcmp(verb, "down") || !strcmp(verb, "up")) cmd_broker(verb, rest);
        else
            answer(
                "error: unknown command \"%s\" (topic, produce, consume, errors, down, up, quit)",
                verb);
    }
    free(line);
    rd_kafka_flush(producer, 5000);
    rd_kafka_destroy(producer);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(host);
    return 0;
}
