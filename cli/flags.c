/*
 * Flags of the w2l subcommands: every configuration key a command takes is a long option
 * of the same name (w2l-config(5)), so flags, the --config file and the library's keys can
 * never disagree; the few flags that are not configuration (cat's --snapshot, --format)
 * are declared by the command beside its keys (cli_command). Also what the inspection
 * commands share: opening the lake, one-line errors, JSON strings, redaction, ages and
 * byte counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"

static int usage_error(const char *cmd, const char *msg)
{
    fprintf(stderr, "w2l %s: %s (see w2l help %s)\n", cmd, msg, cmd);
    return EXIT_USAGE;
}

/* 1 when word is one of the space-separated words of list. */
static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        size_t m = strcspn(p, " ");
        if (m == n && strncmp(p, word, n) == 0) return 1;
        p += m;
    }
    return 0;
}

static int extra_index(const cli_command *c, const char *name)
{
    for (int i = 0; c && c->extra && i < CLI_MAX_EXTRA && c->extra[i].name; i++)
        if (strcmp(c->extra[i].name, name) == 0) return i;
    return -1;
}

/* The flag of c nearest to the unknown key (w2l_suggest(3)), or NULL. */
static const char *nearest_flag(const cli_command *c, const char *key)
{
    size_t nprops = 0;
    const w2l_conf_prop *props = w2l_conf_props(&nprops);
    const char **names = calloc(nprops + CLI_MAX_EXTRA + 1, sizeof *names);
    if (!names) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < nprops; i++)
        if ((props[i].flags & W2L_CONF_F_CLI) &&
            (!c || !c->keys || in_list(c->keys, props[i].name)))
            names[n++] = props[i].name;
    for (int i = 0; c && c->extra && i < CLI_MAX_EXTRA && c->extra[i].name; i++)
        names[n++] = c->extra[i].name;
    names[n++] = "help";
    const char *near = w2l_suggest(key, names, n);
    free(names);
    return near; /* static strings */
}

int cli_parse(const char *cmd, int argc, char **argv, w2l_conf *conf, cli_args *args)
{
    const cli_command *c = cli_command_find(cmd);
    w2l_error err;
    char msg[700];
    if (args) memset(args, 0, sizeof *args);
    /* the file first, wherever --config stands, so that flags override it */
    for (int i = 0; i < argc; i++) {
        const char *file = NULL;
        if (strcmp(argv[i], "--config") == 0) {
            if (i + 1 >= argc) return usage_error(cmd, "--config needs a FILE");
            file = argv[i + 1];
        } else if (strncmp(argv[i], "--config=", 9) == 0) {
            file = argv[i] + 9;
        }
        if (file && w2l_conf_load_file(conf, file, &err) != W2L_OK)
            return cli_fail(cmd, &err, W2L_CONFIG);
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (args && c && c->operand && !args->operand && a[0] != '-') {
                args->operand = a;
                continue;
            }
            snprintf(msg, sizeof msg, "unexpected argument '%s'", a);
            return usage_error(cmd, msg);
        }
        char key[128];
        const char *eq = strchr(a, '=');
        size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (kl >= sizeof key) return usage_error(cmd, "flag too long");
        memcpy(key, a + 2, kl);
        key[kl] = '\0';
        if (strcmp(key, "metrics-listen") == 0) /* the usual spelling of metrics.listen */
            snprintf(key, sizeof key, "metrics.listen");
        if (strcmp(key, "standby") == 0) /* w2l run --standby */
            snprintf(key, sizeof key, "ha.standby");
        if (strcmp(key, "adopt-tables") == 0) /* w2l run --adopt-tables */
            snprintf(key, sizeof key, "job.adopt-tables");
        int x = args ? extra_index(c, key) : -1;
        const w2l_conf_prop *p = x < 0 ? w2l_conf_prop_find(key) : NULL;
        if (x < 0 && (!p || !(p->flags & W2L_CONF_F_CLI))) {
            const char *near = nearest_flag(c, key);
            if (near)
                snprintf(msg, sizeof msg, "unknown flag '--%s'; did you mean --%s?", key, near);
            else snprintf(msg, sizeof msg, "unknown flag '--%s'", key);
            return usage_error(cmd, msg);
        }
        if (x < 0 && c && c->keys && !in_list(c->keys, key)) {
            snprintf(msg, sizeof msg, "flag '--%s' does not apply to w2l %s", key, cmd);
            return usage_error(cmd, msg);
        }
        int is_bool = x >= 0 ? c->extra[x].metavar == NULL : p->type == W2L_CONF_BOOL;
        const char *value;
        if (eq) {
            value = eq + 1;
        } else if (is_bool) {
            value = "true";
        } else {
            if (i + 1 >= argc) {
                snprintf(msg, sizeof msg, "--%s needs a value", key);
                return usage_error(cmd, msg);
            }
            value = argv[++i];
        }
        if (x >= 0) {
            args->extra[x] = value;
            continue;
        }
        if (strcmp(key, "config") == 0) continue; /* applied above */
        if (w2l_conf_set(conf, key, value, &err) != W2L_OK) {
            fprintf(stderr, "w2l %s: --%s: %s\n", cmd, key, err.msg);
            return EXIT_USAGE;
        }
    }
    if (args && c && c->operand && !args->operand) {
        snprintf(msg, sizeof msg, "missing %s", c->operand);
        return usage_error(cmd, msg);
    }
    for (const char *r = c ? c->required : NULL; r && *r;) {
        while (*r == ' ') r++;
        size_t m = strcspn(r, " ");
        char k[64];
        snprintf(k, sizeof k, "%.*s", (int)(m < sizeof k ? m : sizeof k - 1), r);
        r += m;
        if (!*k) break;
        const char *v = NULL;
        if (w2l_conf_get(conf, k, &v, NULL) != W2L_OK || !v || !*v) {
            snprintf(msg, sizeof msg, "missing --%s", k);
            return usage_error(cmd, msg);
        }
    }
    return EXIT_DONE;
}

int cli_parse_flags(const char *cmd, int argc, char **argv, w2l_conf *conf)
{
    return cli_parse(cmd, argc, argv, conf, NULL);
}

int cli_fail(const char *cmd, const w2l_error *err, w2l_rc rc)
{
    char line[sizeof err->msg];
    snprintf(line, sizeof line, "%s", err && err->msg[0] ? err->msg : w2l_rc_name(rc));
    for (char *p = line; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    cli_redact(line, sizeof line);
    fprintf(stderr, "w2l %s: %s\n", cmd, line);
    return rc == W2L_CONFIG || rc == W2L_MISUSE ? EXIT_USAGE : EXIT_RUNTIME;
}

void cli_redact(char *s, size_t size)
{
    for (char *p = strstr(s, "://"); p; p = strstr(p, "://")) {
        p += 3;
        size_t auth = strcspn(p, "/?# \"");
        char *at = memchr(p, '@', auth);
        char *colon = at ? memchr(p, ':', (size_t)(at - p)) : NULL;
        if (!colon) continue;
        /* user:password@ -> user:****@, truncating at size when that grows the text */
        size_t tail = strlen(at) + 1, off = (size_t)(colon + 5 - s);
        if (off >= size) {
            *colon = '\0';
            return;
        }
        if (off + tail > size) {
            tail = size - off;
            at[tail - 1] = '\0';
        }
        memmove(colon + 5, at, tail);
        memcpy(colon + 1, "****", 4);
        p = colon + 5;
    }
}

int cli_open_lake(const char *cmd, int argc, char **argv, cli_args *args, w2l_conf **conf,
                  w2l_lake **lake)
{
    w2l_error err;
    *conf = NULL;
    *lake = NULL;
    if (w2l_global_init(&err) != W2L_OK) return cli_fail(cmd, &err, err.code);
    w2l_conf *c = w2l_conf_new();
    if (!c) {
        fprintf(stderr, "w2l %s: out of memory\n", cmd);
        w2l_global_cleanup();
        return EXIT_RUNTIME;
    }
    int rc = cli_parse(cmd, argc, argv, c, args);
    const char *level = NULL;
    w2l_log_level l = W2L_LOG_WARN;
    if (rc == EXIT_DONE && w2l_conf_is_set(c, "log-level") &&
        w2l_conf_get(c, "log-level", &level, NULL) == W2L_OK && level)
        w2l_log_level_parse(level, &l);
    w2l_log_set_level(l);
    if (rc == EXIT_DONE) {
        w2l_rc r = w2l_lake_open(c, lake, &err);
        if (r != W2L_OK) rc = cli_fail(cmd, &err, r);
    }
    if (rc != EXIT_DONE) {
        w2l_conf_free(c);
        w2l_global_cleanup();
        return rc;
    }
    *conf = c;
    return EXIT_DONE;
}

void cli_finish(w2l_conf *conf, w2l_lake *lake)
{
    w2l_lake_close(lake);
    w2l_conf_free(conf);
    w2l_global_cleanup();
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (!len || len > n) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
    return len;
}

void cli_json_time(const char *key, int64_t ms)
{
    if (ms < 0) {
        printf(",\"%s_ms\":null,\"%s\":null", key, key);
        return;
    }
    char iso[40];
    w2l_time_format(ms, iso, sizeof iso);
    printf(",\"%s_ms\":%" PRId64 ",\"%s\":\"%s\"", key, ms, key, iso);
}

void cli_json_string(FILE *f, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c);
            }
            i++;
        } else {
            size_t n = utf8_len(p + i, len - i);
            if (n) {
                fwrite(p + i, 1, n, f);
                i += n;
            } else {
                fputs("\\ufffd", f);
                i++;
            }
        }
    }
    fputc('"', f);
}

int64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *cli_age(char *buf, size_t size, int64_t ts_ms, int64_t now_ms)
{
    if (ts_ms < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    int64_t s = now_ms > ts_ms ? (now_ms - ts_ms) / 1000 : 0; /* a clock behind: now */
    if (s < 60) snprintf(buf, size, "%" PRId64 "s ago", s);
    else if (s < 3600) snprintf(buf, size, "%" PRId64 "m ago", s / 60);
    else if (s < 48 * 3600) snprintf(buf, size, "%" PRId64 "h ago", s / 3600);
    else snprintf(buf, size, "%" PRId64 "d ago", s / 86400);
    return buf;
}

const char *cli_bytes(char *buf, size_t size, uint64_t bytes)
{
    static const char *const unit[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
    if (bytes < 1000) {
        snprintf(buf, size, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1000.0;
    int u = 0;
    /* 999.96 kB would print as "1000.0 kB": move up a unit before rounding does */
    while (v >= 999.95 && u < 5) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

void cli_log_write(w2l_log_level level, const char *line, int clear)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    fprintf(stderr, "%s%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s\n", clear ? "\r\033[K" : "",
            tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
            ts.tv_nsec / 1000000L, w2l_log_level_name(level), line);
}

/* "500ms", "30s", "10m", "2h", "1d"; a bare number is seconds. -1 when malformed. */
int64_t cli_duration_ms(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0) return -1;
    double mul = 1000;
    if (!strcmp(end, "ms")) mul = 1;
    else if (!strcmp(end, "s") || !*end) mul = 1000;
    else if (!strcmp(end, "m")) mul = 60000;
    else if (!strcmp(end, "h")) mul = 3600000;
    else if (!strcmp(end, "d")) mul = 86400000;
    else return -1;
    double ms = v * mul;
    return ms > 9e15 ? -1 : (int64_t)ms;
}
