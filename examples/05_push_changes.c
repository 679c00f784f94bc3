/*
 * 05_push_changes: a host service that produces change events itself (no MySQL, no file)
 * pushes them into a pipeline with the built-in operators and decides when to checkpoint.
 * Each w2l_pipeline_checkpoint(wait=1) returns once the changes are committed to Iceberg.
 *
 *   05_push_changes DIR        (the lake goes to DIR/lake)
 */
#include <stdio.h>
#include <string.h>

#include <w2l.h>

#define CHECK(call)                                                               \
    do {                                                                          \
        if ((call) != W2L_OK) {                                                   \
            fprintf(stderr, "05_push_changes: %s: %s\n", #call, err.msg);         \
            goto out;                                                             \
        }                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: 05_push_changes DIR\n");
        return 2;
    }
    int ok = 0;
    char lake[600];
    snprintf(lake, sizeof lake, "%s/lake", argv[1]);
    w2l_error err;
    w2l_conf *conf = NULL;
    w2l_pipeline *p = NULL;
    w2l_schema *s = NULL;
    if (w2l_global_init(&err) != W2L_OK) return 1;
    conf = w2l_conf_new();
    CHECK(w2l_conf_set(conf, "warehouse", lake, &err));
    w2l_log_set_level(W2L_LOG_WARN); /* the library logs at info by default */
    CHECK(w2l_pipeline_new(conf, &p, &err)); /* no "source": the host pushes */

    /* the table as the host sees it: id (the key), sensor name, a reading */
    s = w2l_schema_new(0);
    CHECK(w2l_schema_add_field(s, 1, "id", (w2l_type){ .id = W2L_TYPE_LONG }, 1, &err));
    CHECK(w2l_schema_add_field(s, 2, "sensor", (w2l_type){ .id = W2L_TYPE_STRING }, 0, &err));
    CHECK(w2l_schema_add_field(s, 3, "celsius", (w2l_type){ .id = W2L_TYPE_DOUBLE }, 0, &err));
    int32_t key = 1;
    CHECK(w2l_schema_set_identifier(s, &key, 1, &err));

    w2l_emitter *em = w2l_pipeline_emitter(p);
    for (int batch = 0; batch < 3; batch++) {
        for (int i = 0; i < 100; i++) {
            char name[32];
            int n = snprintf(name, sizeof name, "sensor-%d", i % 10);
            /* the row as it is now (the after image), and as the previous batch left it */
            w2l_value after[3] = { { .v.i64 = i },
                                   { .v.bytes = { .ptr = name, .len = (size_t)n } },
                                   { .v.f64 = 20.0 + batch + i / 100.0 } };
            w2l_value before[3] = { after[0],
                                    after[1],
                                    { .v.f64 = 20.0 + (batch - 1) + i / 100.0 } };
            /* the first batch inserts, the later ones update the same keys: an update is
             * two changes, the before image and then the after image */
            if (batch) {
                w2l_change old_row = {
                    .db = "plant",
                    .table = "readings",
                    .schema = s,
                    .op = W2L_OP_UPDATE_BEFORE,
                    .row = before,
                    .ncols = 3,
                };
                CHECK(w2l_emit_change(em, &old_row, &err));
            }
            w2l_change new_row = {
                .db = "plant",
                .table = "readings",
                .schema = s,
                .op = batch ? W2L_OP_UPDATE_AFTER : W2L_OP_INSERT,
                .row = after,
                .ncols = 3,
            };
            CHECK(w2l_emit_change(em, &new_row, &err));
        }
        char pos[32];
        int n = snprintf(pos, sizeof pos, "{\"batch\":%d}", batch);
        CHECK(w2l_emit_commit(em, pos, (size_t)n, &err)); /* the host's own resume point */
        uint64_t ckpt;
        CHECK(w2l_pipeline_checkpoint(p, 1, &ckpt, &err));
        printf("batch %d committed as checkpoint %llu\n", batch, (unsigned long long)ckpt);
    }
    CHECK(w2l_pipeline_finish(p, &err));
    ok = 1;
out:
    w2l_schema_unref(s);
    w2l_pipeline_free(p);
    w2l_conf_free(conf);
    w2l_global_cleanup();
    return ok ? 0 : 1;
}
