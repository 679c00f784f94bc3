/*
 * 04_embed_pipeline: embed a whole sync in your own program — a source URI, a warehouse,
 * the built-in DDL handler, writers and committers — exactly what `w2l run` does.
 *
 *   04_embed_pipeline DIR
 *
 * Writes a small canal-json change stream into DIR, syncs it into the lake DIR/lake with
 * --until-caught-up semantics, and prints the per-table metrics of the run.
 */
#include <stdio.h>
#include <string.h>

#include <w2l.h>

static const char *const stream[] = {
    "{\"data\":[{\"id\":\"1\",\"name\":\"alpha\"},{\"id\":\"2\",\"name\":\"beta\"}],\"database\":"
    "\"app\","
    "\"isDdl\":false,\"mysqlType\":{\"id\":\"int(11)\",\"name\":\"varchar(20)\"},\"old\":null,"
    "\"pkNames\":[\"id\"],\"table\":\"items\",\"type\":\"INSERT\",\"es\":1,\"ts\":1}",
    "{\"data\":[{\"id\":\"2\",\"name\":\"beta 2\"}],\"database\":\"app\",\"isDdl\":false,"
    "\"mysqlType\":{\"id\":\"int(11)\",\"name\":\"varchar(20)\"},\"old\":[{\"name\":\"beta\"}],"
    "\"pkNames\":[\"id\"],\"table\":\"items\",\"type\":\"UPDATE\",\"es\":2,\"ts\":2}",
    "{\"data\":[{\"id\":\"1\",\"name\":\"alpha\"}],\"database\":\"app\",\"isDdl\":false,"
    "\"mysqlType\":{\"id\":\"int(11)\",\"name\":\"varchar(20)\"},\"old\":null,"
    "\"pkNames\":[\"id\"],\"table\":\"items\",\"type\":\"DELETE\",\"es\":3,\"ts\":3}",
};

static int print_table(void *ctx, const w2l_table_metrics *m)
{
    (void)ctx;
    printf("%s.%s: %llu changes in, %llu files, %llu bytes, %llu commits, last checkpoint %llu\n",
           m->ns, m->table, (unsigned long long)m->rows_in, (unsigned long long)m->files_written,
           (unsigned long long)m->bytes_written, (unsigned long long)m->commits,
           (unsigned long long)m->last_committed_ckpt);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: 04_embed_pipeline DIR\n");
        return 2;
    }
    char path[600], uri[700], lake[600];
    snprintf(path, sizeof path, "%s/changes.jsonl", argv[1]);
    snprintf(uri, sizeof uri, "file:%s?format=canal-json", path);
    snprintf(lake, sizeof lake, "%s/lake", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    for (size_t i = 0; i < sizeof stream / sizeof stream[0]; i++) fprintf(f, "%s\n", stream[i]);
    fclose(f);

    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) {
        fprintf(stderr, "04_embed_pipeline: %s\n", err.msg);
        return 1;
    }
    w2l_conf *conf = w2l_conf_new();
    w2l_pipeline *p = NULL;
    w2l_rc rc = W2L_OK;
    if (w2l_conf_set(conf, "source", uri, &err) != W2L_OK ||
        w2l_conf_set(conf, "warehouse", lake, &err) != W2L_OK ||
        w2l_conf_set(conf, "until-caught-up", "true", &err) != W2L_OK)
        rc = err.code;
    w2l_log_set_level(W2L_LOG_WARN); /* the library logs at info by default */
    if (rc == W2L_OK) rc = w2l_pipeline_new(conf, &p, &err);
    if (rc == W2L_OK) rc = w2l_pipeline_run(p, &err); /* returns at the end of the stream */
    if (rc == W2L_OK) rc = w2l_pipeline_metrics(p, print_table, NULL, &err);
    if (rc != W2L_OK) fprintf(stderr, "04_embed_pipeline: %s\n", err.msg);
    w2l_pipeline_free(p);
    w2l_conf_free(conf);
    w2l_global_cleanup();
    return rc == W2L_OK ? 0 : 1;
}
