/*
 * gen_config_man: prints the man page w2l-config(5) in roff. The hand-written part (the
 * file format, precedence, per-table and ext.* keys) comes from a template, given as the
 * only argument; its line ".\" @KEYS@" is replaced by one entry per property of
 * w2l_conf_props(), so the page lists exactly the keys the library accepts, with their
 * types, defaults, bounds, choices, flags and docs. Uses only the public API.
 *
 *   gen_config_man man/w2l-config.5.in > build/man/man5/w2l-config.5
 */
#include <stdio.h>
#include <string.h>

#include <w2l.h>

/* Writes s as roff text: backslashes and hyphen-minus escaped, a leading '.' or '\''
 * protected, so any doc string is safe on a line of its own; break points (\\:) after
 * '/', '?', '&' and '|' let long URIs wrap. */
static void put_text(const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\') fputs("\\e", stdout);
        else if (*s == '-') fputs("\\-", stdout);
        else putchar(*s);
        /* long URIs in docs: allow a line break after these, without hyphenating */
        if (strchr("/?&|", *s) && s[1] && s[1] != ' ') fputs("\\:", stdout);
    }
}

/* A duration (ms) or size (bytes) in the largest unit that divides it, as the
 * configuration accepts it back ("10s", "128MiB"). */
static void put_amount(w2l_conf_type t, long long v)
{
    static const struct { long long unit; const char *name; } ms[] = {
        {86400000LL, "d"}, {3600000LL, "h"}, {60000LL, "m"}, {1000LL, "s"}, {1, "ms"}};
    static const struct { long long unit; const char *name; } by[] = {
        {1LL << 40, "TiB"}, {1LL << 30, "GiB"}, {1LL << 20, "MiB"}, {1LL << 10, "KiB"}, {1, ""}};
    if (v != 0 && t == W2L_CONF_DURATION) {
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
            if (v % ms[i].unit == 0) { printf("%lld%s", v / ms[i].unit, ms[i].name); return; }
    } else if (v != 0 && t == W2L_CONF_SIZE) {
        for (size_t i = 0; i < sizeof by / sizeof by[0]; i++)
            if (v % by[i].unit == 0) { printf("%lld%s", v / by[i].unit, by[i].name); return; }
    }
    printf("%lld", v);
}

static void put_type(const w2l_conf_prop *p)
{
    static const char *const names[] = {"string", "integer", "boolean", "one of",
                                        "duration", "size", "URI or path"};
    fputs(p->type <= W2L_CONF_URI ? names[p->type] : "?", stdout);
    switch (p->type) {
    case W2L_CONF_ENUM:
        fputs(" ", stdout);
        for (const char *c = p->choices ? p->choices : ""; *c; c++) {
            if (*c == '|') fputs(", ", stdout);
            else if (*c == '-') fputs("\\-", stdout);
            else putchar(*c);
        }
        break;
    case W2L_CONF_INT:
    case W2L_CONF_DURATION:
    case W2L_CONF_SIZE:
        if (p->min == 0 && p->max == 0) break;
        fputs(", ", stdout);
        put_amount(p->type, (long long)p->min);
        fputs(" to ", stdout);
        put_amount(p->type, (long long)p->max);
        break;
    default:
        break;
    }
}

/* The section a key belongs to: its first dotted component, or General. */
static size_t group_of(const char *name, const char **group)
{
    const char *dot = strchr(name, '.');
    if (!dot) {
        *group = "General";
        return strlen(*group);
    }
    *group = name;
    return (size_t)(dot - name);
}

static void put_keys(void)
{
    size_t n;
    const w2l_conf_prop *props = w2l_conf_props(&n);
    const char *prev = NULL;
    size_t prev_len = 0;
    for (size_t i = 0; i < n; i++) {
        const w2l_conf_prop *p = &props[i];
        const char *g;
        size_t gl = group_of(p->name, &g);
        if (!prev || gl != prev_len || strncmp(g, prev, gl) != 0) {
            if (strcmp(g, "General") == 0) printf(".SS General\n");
            else printf(".SS %.*s.*\n", (int)gl, g);
            prev = g;
            prev_len = gl;
        }
        const char *dot = (p->flags & W2L_CONF_F_NAMED) ? strchr(p->name, '.') : NULL;
        if (dot) { /* route.source is written route.NAME.source */
            printf(".TP\n.BI %.*s NAME ", (int)(dot - p->name + 1), p->name);
            put_text(dot);
        } else {
            fputs(".TP\n.B ", stdout);
            put_text(p->name);
        }
        fputs("\n", stdout);
        put_text(p->doc ? p->doc : "");
        fputs("\n.RS\n.PD 0\n.TP 12\nType:\n", stdout);
        put_type(p);
        fputs("\n.TP\nDefault:\n", stdout);
        if (p->def) {
            fputs("\\fB", stdout);
            put_text(p->def);
            fputs("\\fP", stdout);
        } else {
            fputs("none", stdout);
        }
        fputs("\n", stdout);
        if (p->flags & W2L_CONF_F_CLI) {
            fputs(p->type == W2L_CONF_BOOL ? ".TP\nFlag:\n.B \\-\\-" : ".TP\nFlag:\n.BI \\-\\-", stdout);
            put_text(p->name);
            static const char *const what[] = {"TEXT", "N", "", "WORD", "DURATION", "SIZE", "URI"};
            if (p->type != W2L_CONF_BOOL)
                printf(" \" %s\"", p->type <= W2L_CONF_URI ? what[p->type] : "VALUE");
            fputs("\n", stdout);
        }
        if (p->flags & W2L_CONF_F_PER_TABLE) {
            fputs(".TP\nPer table:\n.BI table. db . table .", stdout);
            /* "table.NAME" is overridden by table.DB.T.NAME (w2l_conf_get_for_table) */
            put_text(strncmp(p->name, "table.", 6) == 0 ? p->name + 6 : p->name);
            fputs("\n", stdout);
        }
        if (p->flags & W2L_CONF_F_SECRET)
            fputs(".TP\nSecret:\nyes; printed as \\fB****\\fP\n", stdout);
        fputs(".PD\n.RE\n", stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_config_man TEMPLATE > w2l-config.5\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, in)) {
        if (strcmp(line, ".\\\" @KEYS@\n") == 0) {
            put_keys();
            found = 1;
        } else {
            fputs(line, stdout);
        }
    }
    int bad = ferror(in);
    fclose(in);
    if (bad || !found) {
        fprintf(stderr, "gen_config_man: %s: %s\n", argv[1],
                bad ? "read error" : "no line .\\\" @KEYS@");
        return 1;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
