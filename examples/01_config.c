/*
 * 01_config: build a configuration the way `w2l run` does — a JSON file first, then
 * --key value flags on top — and report bad input the way the library words it.
 *
 *   01_config [--config FILE] [--KEY VALUE]...
 *
 * Prints every key that was set (secrets masked) and the effective checkpoint interval.
 * Exits 2 with the library's one-line message on a bad key or value.
 */
#include <stdio.h>
#include <string.h>

#include <w2l.h>

static int print_key(void *ctx, const char *key, const char *value)
{
    (void)ctx;
    printf("%s = %s\n", key, value);
    return 0;
}

int main(int argc, char **argv)
{
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) {
        fprintf(stderr, "01_config: %s\n", err.msg);
        return 1;
    }
    w2l_conf *conf = w2l_conf_new();
    int rc = 0;
    /* the file first, so that flags override it */
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--config") == 0 &&
            w2l_conf_load_file(conf, argv[i + 1], &err) != W2L_OK) {
            fprintf(stderr, "01_config: %s\n", err.msg);
            rc = 2;
            goto out;
        }
    for (int i = 1; i < argc; i += 2) {
        if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "01_config: expected --KEY VALUE, got '%s'\n", argv[i]);
            rc = 2;
            goto out;
        }
        if (strcmp(argv[i], "--config") == 0) continue;
        if (w2l_conf_set(conf, argv[i] + 2, argv[i + 1], &err) != W2L_OK) {
            fprintf(stderr, "01_config: %s\n", err.msg);
            rc = 2;
            goto out;
        }
    }
    w2l_conf_foreach(conf, print_key, NULL);
    int64_t ms;
    if (w2l_conf_get_int(conf, "checkpoint-interval", &ms, &err) == W2L_OK)
        printf("checkpoint every %lld ms\n", (long long)ms);
out:
    w2l_conf_free(conf);
    w2l_global_cleanup();
    return rc;
}
