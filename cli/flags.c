/*
 * Flags of the w2l subcommands: every configuration key marked as a CLI flag is a long
 * option of the same name (w2l-config(5)), so flags, the --config file and the library's
 * keys can never disagree.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static int usage_error(const char *cmd, const char *msg)
{
    fprintf(stderr, "w2l %s: %s (see w2l help %s)\n", cmd, msg, cmd);
    return EXIT_USAGE;
}

int cli_parse_flags(const char *cmd, int argc, char **argv, w2l_conf *conf)
{
    w2l_error err;
    char msg[700];
    /* the file first, wherever --config stands, so that flags override it */
    for (int i = 0; i < argc; i++) {
        const char *file = NULL;
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc) return usage_error(cmd, "--config needs a FILE");
            file = argv[i + 1];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            file = argv[i] + 9;
        }
        if (file && w2l_conf_load_file(conf, file, &err) != W2L_OK) {
            fprintf(stderr, "w2l %s: %s\n", cmd, err.msg);
            return EXIT_USAGE;
        }
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            snprintf(msg, sizeof msg, "unexpected argument '%s'", a);
            return usage_error(cmd, msg);
        }
        char key[128];
        const char *eq = strchr(a, '=');
        size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (kl >= sizeof key) return usage_error(cmd, "flag too long");
        memcpy(key, a + 2, kl);
        key[kl] = '\0';
        const w2l_conf_prop *p = w2l_conf_prop_find(key);
        if (!p || !(p->flags & W2L_CONF_F_CLI)) {
            snprintf(msg, sizeof msg, "unknown flag '--%s'", key);
            return usage_error(cmd, msg);
        }
        const char *value;
        if (eq) {
            value = eq + 1;
        } else if (p->type == W2L_CONF_BOOL) {
            value = "true";
        } else {
            if (i + 1 >= argc) {
                snprintf(msg, sizeof msg, "--%s needs a value", key);
                return usage_error(cmd, msg);
            }
            value = argv[++i];
        }
        if (strcmp(key, "config") == 0) continue; /* applied above */
        if (w2l_conf_set(conf, key, value, &err) != W2L_OK) {
            fprintf(stderr, "w2l %s: --%s: %s\n", cmd, key, err.msg);
            return EXIT_USAGE;
        }
    }
    return EXIT_DONE;
}
