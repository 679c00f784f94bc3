/*
 * The whole pipeline over short CDC JSON streams (file source, the built-in DDL handler,
 * writers, committers, file state; `w2l run --until-caught-up` in-process), read back with
 * w2l_lake_scan(3):
 *   - keyless: a table without primary key (no-pk-policy full-row) whose rows change after
 *     a schema change — ADD COLUMN then UPDATE or DELETE of a row inserted before it, DROP
 *     COLUMN then UPDATE — in canal-json, debezium-json and maxwell-json, the before image
 *     carrying the new column as NULL or not at all, within one checkpoint and split over
 *     two (a restart between the parts). The lake must hold exactly the rows MySQL holds.
 *   - quarantine: a table that gets a change the lake cannot take (an unsupported DDL, a
 *     value the source decoder cannot convert) under ddl.policy=quarantine is set aside:
 *     its later rows are skipped and counted, the other tables of the same and later
 *     transactions land whole, a restart keeps it quarantined, and the lake's checkpoint
 *     report (w2l status) names it with the reason. Under policy fail the job stops.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iceberg/iceberg.h"
#include "support/support.h"

static char dir[600], src[700], wh[700];
static w2l_error err;

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", tmpdir_make("plcdc"));
    snprintf(src, sizeof src, "%s/stream.jsonl", dir);
    snprintf(wh, sizeof wh, "%s/lake", dir);
    w2l_error_clear(&err);
}

static void teardown(void) { tmpdir_remove(dir); }

static void write_text(const char *mode, const char *text)
{
    FILE *f = fopen(src, mode);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

/* The metrics of db.a at the end of the last run (zero when it saw none). */
static w2l_table_metrics metrics_a;
static int on_metrics(void *ctx, const w2l_table_metrics *m)
{
    (void)ctx;
    if (!strcmp(m->ns, "db") && !strcmp(m->table, "a")) {
        metrics_a = *m;
        metrics_a.ns = metrics_a.table = NULL;
    }
    return 0;
}

/* Extra configuration of a run: NULL-terminated key, value pairs. */
static w2l_rc run_with(const char *fmt, const char *const *kv, w2l_error *e)
{
    w2l_conf *c = w2l_conf_new();
    char uri[800];
    snprintf(uri, sizeof uri, "file:%s?format=%s", src, fmt);
    ck_assert_ok(w2l_conf_set(c, "source", uri, &err), err);
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "until-caught-up", "true", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "cdc", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_ok(w2l_conf_set(c, kv[i], kv[i + 1], &err), err);
    w2l_pipeline *p = NULL;
    w2l_rc rc = w2l_pipeline_new(c, &p, e);
    if (rc == W2L_OK) rc = w2l_pipeline_run(p, e);
    memset(&metrics_a, 0, sizeof metrics_a);
    if (p) ck_assert_ok(w2l_pipeline_metrics(p, on_metrics, NULL, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    return rc;
}

/* The rows of db.<table>, or "(none)" when the table does not exist. Static buffer. */
static const char *table_rows(const char *table) { return lake_rows(wh, "db", table); }

/* ---- keyless tables after a schema change ---- */

enum { F_CANAL, F_DEBEZIUM, F_MAXWELL };
static const char *const fmt_names[] = {"canal-json", "debezium-json", "maxwell-json"};

/* One step of a scenario on table db.k, in a format-neutral form:
 *   DDL  sql, cols (the columns after it, "a:int b:varchar(10)")
 *   INS  after image; UPD before and after images; DEL before image
 * Images are JSON objects of native values ({"a":1,"b":"x","c":null}); a column the image
 * leaves out is absent from the message. */
typedef struct step {
    char kind; /* 'D' DDL, 'I' insert, 'U' update, 'X' delete */
    const char *sql, *cols;
    const char *before, *after;
} step;

/* "a:int b:varchar(10)" -> canal mysqlType / maxwell def columns / debezium tableChanges. */
static void cols_json(int f, const char *cols, char *out, size_t size)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", cols);
    size_t len = 0;
    int first = 1;
    for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save), first = 0) {
        char *colon = strchr(tok, ':');
        *colon = '\0';
        const char *name = tok, *type = colon + 1;
        int is_int = !strcmp(type, "int");
        if (f == F_CANAL)
            len += (size_t)snprintf(out + len, size - len, "%s\"%s\":\"%s\"", first ? "" : ",",
                                    name, is_int ? "int(11)" : type);
        else if (f == F_MAXWELL)
            len += (size_t)snprintf(out + len, size - len, "%s{\"type\":\"%s\",\"name\":\"%s\"%s}",
                                    first ? "" : ",", is_int ? "int" : "varchar", name,
                                    is_int ? ",\"signed\":true" : "");
        else
            len += (size_t)snprintf(out + len, size - len,
                                    "%s{\"name\":\"%s\",\"typeName\":\"%s\","
                                    "\"typeExpression\":\"%s\",\"optional\":true%s}",
                                    first ? "" : ",", name, is_int ? "INT" : "VARCHAR",
                                    is_int ? "INT" : "VARCHAR", is_int ? "" : ",\"length\":10");
    }
}

/* A native-valued image as canal's text values: numbers quoted. */
static void canal_image(const char *img, char *out, size_t size)
{
    size_t len = 0;
    for (const char *p = img; *p && len + 3 < size; p++) {
        int num = (*p == '-' || (*p >= '0' && *p <= '9')) && (p[-1] == ':');
        if (num) {
            out[len++] = '"';
            while ((*p == '-' || (*p >= '0' && *p <= '9')) && len + 2 < size) out[len++] = *p++;
            out[len++] = '"';
            p--;
        } else {
            out[len++] = *p;
        }
    }
    out[len] = '\0';
}

/* canal's "old": the before image's members whose values differ from the after image's
 * (the scenarios' images list columns in the same order, one member per column). */
static void canal_old(const char *before, const char *after, char *out, size_t size)
{
    char b[256], a[256];
    canal_image(before, b, sizeof b);
    canal_image(after, a, sizeof a);
    size_t len = (size_t)snprintf(out, size, "{");
    char *sb = NULL, *sa = NULL;
    char *tb = strtok_r(b + 1, ",}", &sb), *ta = strtok_r(a + 1, ",}", &sa);
    int first = 1;
    for (; tb; tb = strtok_r(NULL, ",}", &sb), ta = ta ? strtok_r(NULL, ",}", &sa) : NULL)
        if (!ta || strcmp(tb, ta)) {
            len += (size_t)snprintf(out + len, size - len, "%s%s", first ? "" : ",", tb);
            first = 0;
        }
    snprintf(out + len, size - len, "}");
}

static void put_step(FILE *f, int fmt, const step *s, const char *cols, int seq)
{
    char cj[1024];
    cols_json(fmt, cols, cj, sizeof cj);
    long long ts = 1700000000000LL + seq * 1000LL;
    if (s->kind == 'D') {
        if (fmt == F_CANAL)
            fprintf(f, "{\"data\":null,\"database\":\"db\",\"es\":%lld,\"id\":%d,\"isDdl\":true,"
                       "\"mysqlType\":null,"
                    "\"old\":null,\"pkNames\":null,\"sql\":\"%s\",\"sqlType\":null,\"table\":\"k\","
                    "\"ts\":%lld,"
                    "\"type\":\"ALTER\"}\n", ts, seq, s->sql, ts);
        else if (fmt == F_MAXWELL)
            fprintf(f,
                    "{\"type\":\"%s\",\"database\":\"db\",\"table\":\"k\","
                    "\"def\":{\"database\":\"db\",\"table\":\"k\","
                    "\"primary-key\":[],\"columns\":[%s]},\"ts\":%lld,\"sql\":\"%s\"}\n",
                    strncmp(s->sql, "CREATE", 6) ? "table-alter" : "table-create", cj, ts / 1000,
                    s->sql);
        else
            fprintf(f, "{\"source\":{\"connector\":\"mysql\",\"db\":\"db\",\"table\":\"k\","
                       "\"ts_ms\":%lld},"
                    "\"databaseName\":\"db\",\"ddl\":\"%s\",\"tableChanges\":[{\"type\":\"%s\","
                    "\"id\":\"\\\"db\\\".\\\"k\\\"\","
                    "\"table\":{\"primaryKeyColumnNames\":[],\"columns\":[%s]}}]}\n",
                    ts, s->sql, strncmp(s->sql, "CREATE", 6) ? "ALTER" : "CREATE", cj);
        return;
    }
    const char *type = s->kind == 'I' ? "INSERT" : s->kind == 'U' ? "UPDATE" : "DELETE";
    if (fmt == F_CANAL) {
        /* canal describes each message by its mysqlType: only the columns its data has */
        char data[256], old[256] = "null", mt[1024] = "";
        canal_image(s->kind == 'X' ? s->before : s->after, data, sizeof data);
        if (s->kind == 'U') canal_old(s->before, s->after, old, sizeof old);
        char copy[256], used[256] = "";
        snprintf(copy, sizeof copy, "%s", cols);
        size_t ul = 0;
        for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok;
             tok = strtok_r(NULL, " ", &save)) {
            char key[32];
            snprintf(key, sizeof key, "\"%.*s\":", (int)(strchr(tok, ':') - tok), tok);
            if (strstr(data, key))
                ul += (size_t)snprintf(used + ul, sizeof used - ul, "%s%s", ul ? " " : "", tok);
        }
        cols_json(F_CANAL, used, mt, sizeof mt);
        fprintf(f,
                "{\"data\":[%s],\"database\":\"db\",\"es\":%lld,\"id\":%d,\"isDdl\":false,"
                "\"mysqlType\":{%s},"
                "\"old\":%s%s%s,\"pkNames\":null,\"sql\":\"\",\"table\":\"k\",\"ts\":%lld,"
                "\"type\":\"%s\"}\n",
                data, ts, seq, mt, strcmp(old, "null") ? "[" : "", old,
                strcmp(old, "null") ? "]" : "", ts, type);
    } else if (fmt == F_MAXWELL) {
        if (s->kind == 'U') {
            /* maxwell's old: the changed columns' previous values */
            char old[256];
            canal_old(s->before, s->after, old, sizeof old);
            /* back to native values: the scenarios' old values are strings or numbers */
            char nat[256];
            size_t k = 0;
            for (const char *p = old; *p; p++) {
                if (*p == '"' && p[1] >= '0' && p[1] <= '9' && p[-1] == ':') {
                    p++;
                    while (*p != '"') nat[k++] = *p++;
                    continue;
                }
                nat[k++] = *p;
            }
            nat[k] = '\0';
            fprintf(f, "{\"database\":\"db\",\"table\":\"k\",\"type\":\"update\",\"ts\":%lld,"
                       "\"data\":%s,\"old\":%s}\n",
                    ts / 1000, s->after, nat);
        } else {
            fprintf(f,
                    "{\"database\":\"db\",\"table\":\"k\",\"type\":\"%s\",\"ts\":%lld,"
                    "\"data\":%s}\n",
                    s->kind == 'I' ? "insert" : "delete", ts / 1000,
                    s->kind == 'I' ? s->after : s->before);
        }
    } else {
        fprintf(f, "{\"before\":%s,\"after\":%s,\"source\":{\"connector\":\"mysql\",\"db\":\"db\","
                   "\"table\":\"k\","
                "\"ts_ms\":%lld},\"op\":\"%s\",\"ts_ms\":%lld}\n",
                s->kind == 'I' ? "null" : s->before, s->kind == 'X' ? "null" : s->after, ts,
                s->kind == 'I' ? "c" : s->kind == 'U' ? "u" : "d", ts);
    }
}

/* Writes steps [from, to) of a scenario (cols tracked through its DDL) to the stream. */
static void write_steps(int fmt, const step *steps, size_t from, size_t to, const char *mode)
{
    FILE *f = fopen(src, mode);
    ck_assert_ptr_nonnull(f);
    const char *cols = NULL;
    for (size_t i = 0; i < to; i++) {
        if (steps[i].kind == 'D') cols = steps[i].cols;
        if (i >= from) put_step(f, fmt, &steps[i], cols, (int)i + 1);
    }
    ck_assert_int_eq(fclose(f), 0);
}

#define CREATE {'D', "CREATE TABLE k (a INT, b VARCHAR(10))", "a:int b:varchar(10)", NULL, NULL}
#define ADD_C {'D', "ALTER TABLE k ADD COLUMN c INT", "a:int b:varchar(10) c:int", NULL, NULL}

typedef struct scenario {
    const char *name;
    step steps[8];
    size_t nsteps, split; /* split: the first part's steps when run twice (a restart between
                             the parts); 0: one checkpoint only */
    unsigned formats;     /* 1 << F_*: the formats whose messages can say it */
    const char *expect;
} scenario;

#define ALL_FORMATS 7u

static const scenario scenarios[] = {
    { "add column, update with the new column NULL",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        ADD_C,
        { 'U', 0, 0, "{\"a\":1,\"b\":\"x\",\"c\":null}", "{\"a\":1,\"b\":\"y\",\"c\":null}" } },
      5,
      3,
      ALL_FORMATS,
      "1|y|- 2|x|-" },
    /* debezium: the before image as the connector's schema before the DDL had it */
    { "add column, update whose before image lacks the new column",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        ADD_C,
        { 'U', 0, 0, "{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"y\",\"c\":null}" } },
      5,
      3,
      1u << F_DEBEZIUM,
      "1|y|- 2|x|-" },
    /* canal: a message whose mysqlType does not know the new column yet */
    { "add column, update of a message without the new column",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        ADD_C,
        { 'U', 0, 0, "{\"a\":1,\"b\":\"x\"}", "{\"a\":1,\"b\":\"y\"}" } },
      5,
      3,
      1u << F_CANAL,
      "1|y|- 2|x|-" },
    { "add column, delete",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        ADD_C,
        { 'X', 0, 0, "{\"a\":1,\"b\":\"x\",\"c\":null}", NULL } },
      5,
      3,
      ALL_FORMATS,
      "2|x|-" },
    { "add column, update it, update again",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        ADD_C,
        { 'U', 0, 0, "{\"a\":1,\"b\":\"x\",\"c\":null}", "{\"a\":1,\"b\":\"x\",\"c\":7}" },
        { 'U', 0, 0, "{\"a\":1,\"b\":\"x\",\"c\":7}", "{\"a\":1,\"b\":\"z\",\"c\":7}" } },
      5,
      2,
      ALL_FORMATS,
      "1|z|7" },
    { "drop column, update",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        { 'D', "ALTER TABLE k DROP COLUMN b", "a:int", NULL, NULL },
        { 'U', 0, 0, "{\"a\":1}", "{\"a\":3}" } },
      5,
      3,
      ALL_FORMATS,
      "2 3" },
    /* rows that differ only in the dropped column are one row now; an update changes one
     * of them (within a checkpoint: across checkpoints an equality delete of a table
     * without key removes every equal row, a documented limit of no-pk-policy full-row) */
    { "drop column, rows equal since, update one",
      { CREATE,
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"x\"}" },
        { 'I', 0, 0, NULL, "{\"a\":1,\"b\":\"z\"}" },
        { 'I', 0, 0, NULL, "{\"a\":2,\"b\":\"x\"}" },
        { 'D', "ALTER TABLE k DROP COLUMN b", "a:int", NULL, NULL },
        { 'U', 0, 0, "{\"a\":1}", "{\"a\":3}" } },
      6,
      0,
      ALL_FORMATS,
      "1 2 3" },
};

/* The _i-th (scenario, format, split) the scenarios allow; -1 when _i is past them. */
static int combo(int i, const scenario **sc, int *fmt, int *split)
{
    for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++)
        for (int f = 0; f < 3; f++)
            for (int sp = 0; sp < (scenarios[k].split ? 2 : 1); sp++) {
                if (!(scenarios[k].formats >> f & 1)) continue;
                if (i-- == 0) {
                    *sc = &scenarios[k], *fmt = f, *split = sp;
                    return 0;
                }
            }
    return -1;
}

static int ncombos(void)
{
    const scenario *sc;
    int n = 0, f, sp;
    while (combo(n, &sc, &f, &sp) == 0) n++;
    return n;
}

START_TEST(keyless_rows_change_after_schema_change)
{
    const scenario *sc;
    int fmt, split;
    ck_assert_int_eq(combo(_i, &sc, &fmt, &split), 0);
    if (split) {
        write_steps(fmt, sc->steps, 0, sc->split, "w");
        ck_assert_ok(run_with(fmt_names[fmt], NULL, &err), err);
        write_steps(fmt, sc->steps, sc->split, sc->nsteps, "a");
    } else {
        write_steps(fmt, sc->steps, 0, sc->nsteps, "w");
    }
    ck_assert_ok(run_with(fmt_names[fmt], NULL, &err), err);
    const char *got = table_rows("k");
    ck_assert_msg(!strcmp(got, sc->expect), "%s, %s, %s: lake holds [%s], expected [%s]", sc->name,
                  fmt_names[fmt], split ? "two checkpoints" : "one checkpoint", got, sc->expect);
}
END_TEST

/* ---- quarantine ---- */

/* maxwell-json: tables a and b (id INT key, v INT), then transactions of rows of both. */
#define MX_CREATE(t)                                                                               \
    "{\"type\":\"table-create\",\"database\":\"db\",\"table\":\"" t                                \
    "\",\"def\":{\"database\":\"db\","                                                             \
    "\"table\":\"" t "\",\"primary-key\":[\"id\"],\"columns\":[{\"type\":\"int\",\"name\":\"id\"," \
    "\"signed\":true},"                                                                            \
    "{\"type\":\"int\",\"name\":\"v\",\"signed\":true}]},\"ts\":1700000000,\"sql\":\"CREATE "      \
    "TABLE " t " (id INT PRIMARY KEY, v INT)\"}\n"
#define MX_ROW(t, type, xid, commit, data, old)                                                    \
    "{\"database\":\"db\",\"table\":\"" t "\",\"type\":\"" type                                    \
    "\",\"ts\":1700000001,\"xid\":" #xid commit ",\"data\":" data old                              \
    ",\"primary_key_columns\":[\"id\"]}\n"
#define LAST ",\"commit\":true"

/* Transaction 2 holds a value of a that cannot be converted ("ten" for an INT). */
static const char *const q_part1 =
    MX_CREATE("a") MX_CREATE("b")
    MX_ROW("a", "insert", 1, "", "{\"id\":1,\"v\":10}", "")
    MX_ROW("b", "insert", 1, LAST, "{\"id\":1,\"v\":10}", "")
    MX_ROW("b", "insert", 2, "", "{\"id\":2,\"v\":20}", "")
    MX_ROW("a", "insert", 2, "", "{\"id\":2,\"v\":\"ten\"}", "")
    MX_ROW("a", "update", 2, "", "{\"id\":1,\"v\":11}", ",\"old\":{\"v\":10}")
    MX_ROW("b", "update", 2, LAST, "{\"id\":1,\"v\":11}", ",\"old\":{\"v\":10}");
static const char *const q_part2 =
    MX_ROW("a", "insert", 3, "", "{\"id\":3,\"v\":30}", "")
    MX_ROW("b", "insert", 3, LAST, "{\"id\":3,\"v\":30}", "")
    MX_ROW("b", "insert", 4, "", "{\"id\":4,\"v\":40}", "")
    MX_ROW("a", "update", 4, "", "{\"id\":3,\"v\":31}", ",\"old\":{\"v\":30}")
    MX_ROW("a", "insert", 4, LAST, "{\"id\":5,\"v\":\"fifty\"}", "");

static const char *const q_policy[] = {"table.db.a.ddl.policy", "quarantine", NULL};

/* What the newest sealed checkpoint says of db.<table>: its quarantine reason ("" when not
 * quarantined) and the rows dropped since. */
typedef struct qinfo {
    char reason[512];
    uint64_t rows;
    int seen;
} qinfo;

static int on_ckpt(void *ctx, const w2l_checkpoint_info *ck)
{
    qinfo *q = ctx;
    if (!ck->ns || strcmp(ck->ns, "db") || strcmp(ck->table, q->reason)) return 0;
    q->seen = 1;
    snprintf(q->reason, sizeof q->reason, "%s", ck->quarantined ? ck->quarantined : "");
    q->rows = ck->rows_quarantined;
    return 1;
}

static qinfo status_of(const char *table)
{
    qinfo q;
    memset(&q, 0, sizeof q);
    snprintf(q.reason, sizeof q.reason, "%s", table);
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *l;
    ck_assert_ok(w2l_lake_open(c, &l, &err), err);
    ck_assert_ok(w2l_lake_checkpoints(l, on_ckpt, &q, &err), err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    ck_assert_msg(q.seen, "w2l_lake_checkpoints: no entry for db.%s", table);
    return q;
}

/* _i: 0 one run, 1 a restart between transactions 2 and 3. */
START_TEST(quarantine_on_a_value_the_source_cannot_convert)
{
    write_text("w", q_part1);
    if (_i) {
        ck_assert_ok(run_with("maxwell-json", q_policy, &err), err);
        ck_assert_str_eq(table_rows("a"), "1|10");
        ck_assert_str_eq(table_rows("b"), "1|11 2|20");
        qinfo q = status_of("a");
        ck_assert_msg(strstr(q.reason, "line 6") && strstr(q.reason, "ten"), "reason: %s",
                      q.reason);
        ck_assert_uint_eq(q.rows,
                          3); /* changes: a's insert and update (before, after) of transaction 2 */
        ck_assert_int_eq(metrics_a.quarantined, 1);
        ck_assert_uint_eq(metrics_a.rows_quarantined, 3);
    }
    write_text("a", q_part2);
    ck_assert_ok(run_with("maxwell-json", q_policy, &err), err);
    ck_assert_str_eq(table_rows("a"), "1|10");
    ck_assert_str_eq(table_rows("b"), "1|11 2|20 3|30 4|40");
    qinfo q = status_of("a");
    ck_assert_msg(strstr(q.reason, "line 6") && strstr(q.reason, "ten"), "reason: %s", q.reason);
    /* changes: transaction 2: 3; 3: 1; 4: the update's 2 and the unconvertible insert */
    ck_assert_uint_eq(q.rows, 7);
    ck_assert_int_eq(metrics_a.quarantined, 1);
    ck_assert_uint_eq(metrics_a.rows_quarantined, _i ? 4 : 7); /* this run's */
    ck_assert_str_eq(status_of("b").reason, "");
}
END_TEST

/* Under policy fail the same stream stops the job at the value, naming it; nothing of
 * transaction 2 lands. */
START_TEST(value_the_source_cannot_convert_fails_under_policy_fail)
{
    write_text("w", q_part1);
    w2l_error e;
    w2l_rc rc = run_with("maxwell-json", NULL, &e);
    ck_assert_int_eq(rc, W2L_SOURCE);
    ck_assert_msg(strstr(e.msg, "line 6") && strstr(e.msg, "ten"), "%s", e.msg);
    ck_assert_str_eq(table_rows("a"), "1|10");
    ck_assert_str_eq(table_rows("b"), "1|10");
}
END_TEST

/* A row the pipeline refuses (a NULL key) under quarantine: a is set aside from that row
 * on, within its transaction; b flows. */
START_TEST(quarantine_on_a_row_the_pipeline_refuses)
{
    write_text("w", MX_CREATE("a") MX_CREATE("b")
                    MX_ROW("a", "insert", 1, "", "{\"id\":1,\"v\":10}", "")
                    MX_ROW("b", "insert", 1, LAST, "{\"id\":1,\"v\":10}", "")
                    MX_ROW("a", "insert", 2, "", "{\"id\":null,\"v\":20}", "")
                    MX_ROW("b", "insert", 2, "", "{\"id\":2,\"v\":20}", "")
                    MX_ROW("a", "insert", 2, LAST, "{\"id\":3,\"v\":30}", "")
                    MX_ROW("b", "insert", 3, "", "{\"id\":3,\"v\":30}", "")
                    MX_ROW("a", "insert", 3, LAST, "{\"id\":4,\"v\":40}", ""));
    ck_assert_ok(run_with("maxwell-json", q_policy, &err), err);
    ck_assert_str_eq(table_rows("a"), "1|10");
    ck_assert_str_eq(table_rows("b"), "1|10 2|20 3|30");
    qinfo q = status_of("a");
    ck_assert_msg(strstr(q.reason, "NULL") && strstr(q.reason, "id"), "reason: %s", q.reason);
    ck_assert_uint_eq(q.rows, 3);
}
END_TEST

/* An Iceberg-illegal change (INT to VARCHAR) under quarantine: a is set aside at the
 * statement, b keeps flowing in the same and later transactions, across a restart. */
static const char *const d_part1 =
    MX_CREATE("a") MX_CREATE("b")
    MX_ROW("a", "insert", 1, "", "{\"id\":1,\"v\":10}", "")
    MX_ROW("b", "insert", 1, LAST, "{\"id\":1,\"v\":10}", "")
    "{\"type\":\"table-alter\",\"database\":\"db\",\"table\":\"a\",\"def\":{\"database\":\"db\","
    "\"table\":\"a\","
    "\"primary-key\":[\"id\"],\"columns\":[{\"type\":\"int\",\"name\":\"id\",\"signed\":true},"
    "{\"type\":\"varchar\",\"name\":\"v\"}]},\"ts\":1700000002,"
    "\"sql\":\"ALTER TABLE a MODIFY COLUMN v VARCHAR(10)\"}\n"
    MX_ROW("a", "insert", 2, "", "{\"id\":2,\"v\":\"x\"}", "")
    MX_ROW("b", "insert", 2, LAST, "{\"id\":2,\"v\":20}", "");
static const char *const d_part2 =
    MX_ROW("b", "insert", 3, "", "{\"id\":3,\"v\":30}", "")
    MX_ROW("a", "insert", 3, LAST, "{\"id\":3,\"v\":\"y\"}", "");

START_TEST(quarantine_on_an_unsupported_schema_change)
{
    write_text("w", d_part1);
    if (_i) ck_assert_ok(run_with("maxwell-json", q_policy, &err), err);
    write_text("a", d_part2);
    ck_assert_ok(run_with("maxwell-json", q_policy, &err), err);
    ck_assert_str_eq(table_rows("a"), "1|10");
    ck_assert_str_eq(table_rows("b"), "1|10 2|20 3|30");
    qinfo q = status_of("a");
    ck_assert_msg(strstr(q.reason, "ALTER TABLE a MODIFY COLUMN v VARCHAR(10)"), "reason: %s",
                  q.reason);
    ck_assert_uint_eq(q.rows, 2);
}
END_TEST

/* ---- partitioned tables ---- */

/* a is partitioned by v; v is renamed to w; an update moves row 1 to another partition. */
static const char *const r_part1 =
    MX_CREATE("a")
    MX_ROW("a", "insert", 1, "", "{\"id\":1,\"v\":11}", "")
    MX_ROW("a", "insert", 1, LAST, "{\"id\":2,\"v\":25}", "")
    "{\"type\":\"table-alter\",\"database\":\"db\",\"table\":\"a\",\"def\":{\"database\":\"db\","
    "\"table\":\"a\","
    "\"primary-key\":[\"id\"],\"columns\":[{\"type\":\"int\",\"name\":\"id\",\"signed\":true},"
    "{\"type\":\"int\",\"name\":\"w\",\"signed\":true}]},\"ts\":1700000002,"
    "\"sql\":\"ALTER TABLE a RENAME "
    "COLUMN v TO w\"}\n"
    MX_ROW("a", "insert", 2, LAST, "{\"id\":3,\"w\":37}", "");
static const char *const r_part2 =
    MX_ROW("a", "update", 3, LAST, "{\"id\":1,\"w\":42}", ",\"old\":{\"w\":11}")
    MX_ROW("a", "delete", 4, LAST, "{\"id\":2,\"w\":25}", "");
static const char *const r_conf[] = {"table.db.a.partition-by", "truncate(10, v)", NULL};

static int on_table_spec(void *ctx, const w2l_table_info *t)
{
    if (!strcmp(t->table, "a"))
        snprintf(ctx, 64, "%d:%s", (int)t->spec_id, t->partition_by ? t->partition_by : "?");
    return 0;
}

START_TEST(partition_column_renamed_between_runs)
{
    /* the second run starts with the partition-by written before the rename: the column is
     * found under its new name (same field id), the spec stays, and a partition-moving update
     * and a delete of a row written before the rename reach their rows */
    write_text("w", r_part1);
    ck_assert_ok(run_with("maxwell-json", r_conf, &err), err);
    write_text("a", r_part2);
    ck_assert_ok(run_with("maxwell-json", r_conf, &err), err);
    ck_assert_str_eq(table_rows("a"), "1|42 3|37");
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *l;
    ck_assert_ok(w2l_lake_open(c, &l, &err), err);
    char spec[64] = "";
    ck_assert_ok(w2l_lake_tables(l, on_table_spec, spec, &err), err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    ck_assert_str_eq(spec, "0:truncate(10, w)"); /* the first spec still, on the new name */
}
END_TEST

START_TEST(partition_by_errors_name_the_key)
{
    static const char *const bad[][3] = {
        {"table.db.a.partition-by", "day(v)", "day does not apply to column 'v'"},
        {"table.db.a.partition-by", "bucket(0, id)", "not a positive 32-bit integer"},
        {"partition-by", "truncate(4, nope)", "unknown column 'nope'"},
    };
    write_text("w", r_part1);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *kv[] = {bad[i][0], bad[i][1], NULL};
        ck_assert_int_eq(run_with("maxwell-json", kv, &err), W2L_CONFIG);
        ck_assert_msg(strstr(err.msg, bad[i][0]) && strstr(err.msg, bad[i][2]), "%s", err.msg);
    }
    /* the table does not exist: checked when it is created, before anything is committed */
    char tables[800];
    snprintf(tables, sizeof tables, "%s/db/a", wh);
    ck_assert_int_ne(access(tables, F_OK), 0);
}
END_TEST

/* A partition column widened (int -> long, by a pushed row of the wider type) within one
 * checkpoint: partitions made before it hold int values, and a position delete written
 * after it into one of their data files carries the value as a long. The int values pushed
 * have every byte past the int set, as a reused row buffer would leave them. */
static void push_wv(w2l_pipeline *p, const w2l_schema *s, w2l_op op, long id, int v)
{
    w2l_value row[2];
    memset(row, 0xa5, sizeof row);
    row[0].is_null = row[1].is_null = 0;
    row[0].v.i64 = id;
    if (w2l_schema_field(s, 1)->type.id == W2L_TYPE_INT) row[1].v.i32 = v;
    else row[1].v.i64 = v;
    w2l_change c = {"db", "w", s, op, row, 2, NULL, 0};
    ck_assert_ok(w2l_emit_change(w2l_pipeline_emitter(p), &c, &err), err);
}

static w2l_schema *wv_schema(w2l_type_id v)
{
    w2l_schema *s = w2l_schema_new(0);
    ck_assert_ok(w2l_schema_add_field(s, 1, "id", (w2l_type){W2L_TYPE_LONG, 0, 0}, 1, &err), err);
    ck_assert_ok(w2l_schema_add_field(s, 2, "v", (w2l_type){v, 0, 0}, 0, &err), err);
    int32_t id = 1;
    ck_assert_ok(w2l_schema_set_identifier(s, &id, 1, &err), err);
    return s;
}

START_TEST(partition_column_widened_within_a_checkpoint)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    ck_assert_ok(w2l_conf_set(c, "job-id", "widen", &err), err);
    ck_assert_ok(w2l_conf_set(c, "checkpoint-interval", "1h", &err), err);
    ck_assert_ok(w2l_conf_set(c, "maintenance.enabled", "false", &err), err);
    ck_assert_ok(w2l_conf_set(c, "table.db.w.partition-by", _i ? "truncate(10, v)" : "v", &err),
                 err);
    w2l_schema *narrow = wv_schema(W2L_TYPE_INT), *wide = wv_schema(W2L_TYPE_LONG);
    w2l_pipeline *p;
    ck_assert_ok(w2l_pipeline_new(c, &p, &err), err);
    push_wv(p, narrow, W2L_OP_INSERT, 1, 1);
    push_wv(p, narrow, W2L_OP_INSERT, 2, -3);
    push_wv(p, narrow, W2L_OP_INSERT, 3, 40);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), "{\"t\":1}", 7, &err), err);
    /* rows of the wider type widen v; rows 1 and 2 were written in this checkpoint, so only
     * position deletes reach them, in the partitions of their int values */
    push_wv(p, wide, W2L_OP_UPDATE_BEFORE, 1, 1);
    push_wv(p, wide, W2L_OP_UPDATE_AFTER, 1, 1);
    push_wv(p, wide, W2L_OP_DELETE, 2, -3);
    push_wv(p, wide, W2L_OP_INSERT, 4, 7);
    ck_assert_ok(w2l_emit_commit(w2l_pipeline_emitter(p), "{\"t\":2}", 7, &err), err);
    uint64_t id;
    ck_assert_ok(w2l_pipeline_checkpoint(p, 1, &id, &err), err);
    ck_assert_ok(w2l_pipeline_finish(p, &err), err);
    w2l_pipeline_free(p);
    w2l_conf_free(c);
    w2l_schema_unref(narrow);
    w2l_schema_unref(wide);
    ck_assert_str_eq(table_rows("w"), "1|1 3|40 4|7");
    /* every file's partition value is one of the rows' (as a long now) */
    w2l_fileio *io;
    w2l_catalog *cat;
    ck_assert_ok(w2l_fileio_open("local", NULL, &io, &err), err);
    ck_assert_ok(w2l__catalog_open(NULL, NULL, wh, io, &cat, &err), err);
    w2l__ice_table *t;
    ck_assert_ok(w2l__ice_table_load(cat, io, "db", "w", &t, &err), err);
    w2l__ice_scan *s;
    ck_assert_ok(w2l__ice_scan_plan(io, t->meta, -1, NULL, NULL, &s, &err), err);
    size_t npos = 0;
    for (size_t i = 0; i < s->ntasks + s->ndelete_files; i++) {
        const w2l__ice_data_file *f =
            i < s->ntasks ? s->tasks[i].file : s->delete_files[i - s->ntasks];
        ck_assert_uint_eq(f->npart, 1);
        int64_t v = f->partition[0].v.i64;
        const int64_t ok[][2] = {{1, 1}, {-3, -10}, {40, 40}, {7, 0}};
        int found = 0;
        for (size_t k = 0; k < 4; k++) found |= v == ok[k][_i];
        ck_assert_msg(found, "%s: partition value %lld", f->path, (long long)v);
        npos += f->content == W2L_ICE_POS_DELETES;
    }
    ck_assert_uint_eq(npos, 2); /* rows 1 and 2, each in its partition */
    w2l__ice_scan_free(s);
    w2l__ice_table_free(t);
    w2l__catalog_close(cat);
    w2l_fileio_close(io);
}
END_TEST

/* ---- include / exclude ---- */

/* test/data/cdc/<name> copied to the stream file. */
static void stream_from_data(const char *name)
{
    const char *sd = getenv("W2L_SRCDIR");
    char path[900];
    snprintf(path, sizeof path, "%s/test/data/cdc/%s", sd ? sd : ".", name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s (set W2L_SRCDIR)", path);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    write_text("w", text);
}

/* Each format's sample stream with one table left out, by exclude and by include: the
 * other table holds exactly what the unfiltered run put there, the excluded one nothing
 * (not even its CREATE), and a value the excluded table's column cannot take (it is never
 * read) does not stop the run. */
START_TEST(include_exclude_tables)
{
    static const struct { const char *file, *fmt, *db, *kept, *left; int lasts; } c[] = {
        {"canal.jsonl", "canal-json", "shop", "orders", "customers", 1},
        {"debezium.jsonl", "debezium-json", "inventory", "orders", "customers", 1},
        {"maxwell.jsonl", "maxwell-json", "shop", "items", "events", 0}, /* events is dropped */
    };
    char want[4096], re[128], other[128];
    stream_from_data(c[_i].file);
    ck_assert_ok(run_with(c[_i].fmt, NULL, &err), err);
    snprintf(want, sizeof want, "%s", lake_rows(wh, c[_i].db, c[_i].kept));
    ck_assert_str_ne(want, "(none)");
    if (c[_i].lasts) ck_assert_str_ne(lake_rows(wh, c[_i].db, c[_i].left), "(none)");
    for (int k = 0; k < 2; k++) {
        tmpdir_remove(wh);
        snprintf(re, sizeof re, "%s\\.%s", c[_i].db, c[_i].left);
        snprintf(other, sizeof other, "%s\\.(%s|nothing)", c[_i].db, c[_i].kept);
        const char *kv[] = {k ? "include" : "exclude", k ? other : re, NULL};
        ck_assert_ok(run_with(c[_i].fmt, kv, &err), err);
        ck_assert_str_eq(lake_rows(wh, c[_i].db, c[_i].kept), want);
        ck_assert_str_eq(lake_rows(wh, c[_i].db, c[_i].left), "(none)");
    }
    /* a bad expression names its key */
    const char *bad[] = {"exclude", "(", NULL};
    ck_assert_int_eq(run_with(c[_i].fmt, bad, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "exclude") && strstr(err.msg, "regular expression"), "%s",
                  err.msg);
}
END_TEST

START_TEST(excluded_table_is_not_read)
{
    /* b's row cannot be converted ("ten" for an INT): excluded, it is never read */
    write_text("w", MX_CREATE("a") MX_CREATE("b")
               MX_ROW("a", "insert", 1, "", "{\"id\":1,\"v\":10}", "")
               MX_ROW("b", "insert", 1, LAST, "{\"id\":2,\"v\":\"ten\"}", ""));
    const char *kv[] = {"exclude", "db\\.b", NULL};
    ck_assert_ok(run_with("maxwell-json", kv, &err), err);
    ck_assert_str_eq(table_rows("a"), "1|10");
    ck_assert_str_eq(table_rows("b"), "(none)");
    tmpdir_remove(wh);
    ck_assert_int_ne(run_with("maxwell-json", NULL, &err), W2L_OK); /* unfiltered: it fails */
}
END_TEST

/* ---- routes ---- */

static int on_table_schema(void *ctx, const w2l_table_info *t)
{
    if (!strcmp(t->table, "userinfo")) *(int32_t *)ctx = t->schema_id;
    return 0;
}

static int32_t schema_id_of_userinfo(void)
{
    w2l_conf *c = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(c, "warehouse", wh, &err), err);
    w2l_lake *l;
    ck_assert_ok(w2l_lake_open(c, &l, &err), err);
    int32_t id = -1;
    ck_assert_ok(w2l_lake_tables(l, on_table_schema, &id, &err), err);
    w2l_lake_close(l);
    w2l_conf_free(c);
    return id;
}

/* Four shards in two databases merge into app.userinfo (test/data/cdc/README): colliding
 * ids stay apart under key-with-source, the same ADD COLUMN on two shards changes the
 * target once, a widening on one shard widens it, a DROP COLUMN and a TRUNCATE on one
 * shard leave it as it is, a delete and a key update reach only their shard's rows; with
 * ddl-parallelism 3 too (every shard reaches the target's handler). */
START_TEST(route_merges_shards)
{
    stream_from_data("canal_shards.jsonl");
    const char *kv[] = {"route.u.source", "d[0-9]\\.(userinfo)[0-9]+", "route.u.target", "app.$1",
                        "route.u.key-with-source", "true", "metadata-columns", "op",
                        "ddl-parallelism", _i ? "3" : "1", "parallelism", _i ? "2" : "1", NULL};
    ck_assert_ok(run_with("canal-json", kv, &err), err);
    /* id|name|age|_source_db|_source_table|_op|email */
    ck_assert_str_eq(lake_rows(wh, "app", "userinfo"),
                     "1|d00a|10|d0|userinfo000|INSERT|- "
                     "1|d10a|10|d1|userinfo000|UPDATE|a@d10 "
                     "1|d11a|5000000000|d1|userinfo001|UPDATE|- "
                     "2|d00b|11|d0|userinfo000|INSERT|- "
                     "2|d10b|11|d1|userinfo000|INSERT|- "
                     "2|d11b|11|d1|userinfo001|INSERT|- "
                     "3|d00c|12|d0|userinfo000|INSERT|c@d00 "
                     "7|d01a|10|d0|userinfo001|UPDATE|- "
                     "9|d11i|-|d1|userinfo001|INSERT|-");
    ck_assert_str_eq(lake_rows(wh, "d0", "plain"), "1|p|INSERT");
    ck_assert_str_eq(lake_rows(wh, "d0", "userinfo000"), "(none)");
    ck_assert_int_eq(schema_id_of_userinfo(), 2); /* created, + email, + age bigint */
}
END_TEST

/* Without key-with-source, keyed rows of a second shard stop the run before anything of
 * the target is committed; with key-with-source=false the keys are trusted. */
START_TEST(route_keys_must_be_stated)
{
    stream_from_data("canal_shards.jsonl");
    const char *kv[] = {"route.u.source", "d[0-9]\\.(userinfo)[0-9]+", "route.u.target",
                        "app.$1", NULL};
    ck_assert_int_eq(run_with("canal-json", kv, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "route.u.key-with-source=true") &&
                      strstr(err.msg, "d0.userinfo000") && strstr(err.msg, "d0.userinfo001"),
                  "%s", err.msg);
    ck_assert_str_eq(lake_rows(wh, "app", "userinfo"), "(none)");
    const char *kv2[] = {"route.u.source", "d[0-9]\\.(userinfo)[0-9]+", "route.u.target",
                         "app.$1", "route.u.key-with-source", "false", NULL};
    ck_assert_ok(run_with("canal-json", kv2, &err), err);
    /* one row per id, in the order of the stream across shards: d0.userinfo001's delete of
     * id 2 and its key update 1 -> 7 come after every shard wrote ids 1 and 2 */
    ck_assert_str_eq(lake_rows(wh, "app", "userinfo"), "3|d00c|12|c@d00 7|d01a|10|- 9|d11i|-|-");
}
END_TEST

/* A type no promotion joins (INT on one shard, VARCHAR on another) fails under
 * ddl.policy=fail, naming both types; metadata-columns names a bad word. */
START_TEST(route_type_conflict_and_bad_keys)
{
    write_text("w", "{\"data\":[{\"id\":\"1\",\"v\":\"1\"}],\"database\":\"d0\",\"es\":1,"
                    "\"id\":1,\"isDdl\":false,\"mysqlType\":{\"id\":\"int(11)\",\"v\":"
                    "\"int(11)\"},\"pkNames\":[\"id\"],\"table\":\"t0\",\"type\":\"INSERT\"}\n"
                    "{\"data\":[{\"id\":\"2\",\"v\":\"x\"}],\"database\":\"d0\",\"es\":2,"
                    "\"id\":2,\"isDdl\":false,\"mysqlType\":{\"id\":\"int(11)\",\"v\":"
                    "\"varchar(3)\"},\"pkNames\":[\"id\"],\"table\":\"t1\",\"type\":"
                    "\"INSERT\"}\n");
    const char *kv[] = {"route.r.source", "d0\\.t[0-9]", "route.r.target", "m.t",
                        "route.r.key-with-source", "true", NULL};
    ck_assert_int_eq(run_with("canal-json", kv, &err), W2L_SCHEMA);
    ck_assert_msg(strstr(err.msg, "m.t") && strstr(err.msg, "'v'") && strstr(err.msg, "string") &&
                      strstr(err.msg, "int"),
                  "%s", err.msg);
    const char *bad[] = {"metadata-columns", "op, when", NULL};
    ck_assert_int_eq(run_with("canal-json", bad, &err), W2L_CONFIG);
    ck_assert_str_eq(err.msg, "ddl 0: metadata-columns: 'when' is not a metadata column (op_ts, "
                              "source_db, source_table, op)");
}
END_TEST

Suite *suite_pipeline_cdc(void)
{
    Suite *s = suite_create("pipeline_cdc");
    TCase *tc = tcase_create("keyless");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, keyless_rows_change_after_schema_change, 0, ncombos());
    suite_add_tcase(s, tc);
    tc = tcase_create("quarantine");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, quarantine_on_a_value_the_source_cannot_convert, 0, 2);
    tcase_add_test(tc, value_the_source_cannot_convert_fails_under_policy_fail);
    tcase_add_test(tc, quarantine_on_a_row_the_pipeline_refuses);
    tcase_add_loop_test(tc, quarantine_on_an_unsupported_schema_change, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("partitioned");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, partition_column_renamed_between_runs);
    tcase_add_test(tc, partition_by_errors_name_the_key);
    tcase_add_loop_test(tc, partition_column_widened_within_a_checkpoint, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("filter");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, include_exclude_tables, 0, 3);
    tcase_add_test(tc, excluded_table_is_not_read);
    suite_add_tcase(s, tc);
    tc = tcase_create("route");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, route_merges_shards, 0, 2);
    tcase_add_test(tc, route_keys_must_be_stated);
    tcase_add_test(tc, route_type_conflict_and_bad_keys);
    suite_add_tcase(s, tc);
    return s;
}
