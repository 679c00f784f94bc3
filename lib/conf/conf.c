/*
 * Configuration objects: explicitly set keys in a sorted array of (key, text) pairs;
 * everything else reads from the property table's defaults. Values are validated when set,
 * so every later read of a key can trust its form.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "conf.h"
#include "../common/thread.h"
#include "../json/json.h"

typedef struct kv {
    char *key, *val;
} kv;

struct w2l_conf {
    kv *items;
    size_t n, cap;
};

static const char *const type_names[] = {"a string", "an integer", "a boolean (true/false)",
                                         "one of", "a duration", "a size", "a URI or path"};

const w2l_conf_prop *w2l_conf_props(size_t *count)
{
    if (count) *count = w2l__conf_nprops;
    return w2l__conf_props;
}

/* The property table's entries by name, for a binary search: a per-table key is read on
 * every table commit (maintenance policy, writer sizes), with 1,000s of tables. */
static const w2l_conf_prop *by_name[512];
static size_t nby_name;
static once_flag by_name_once = ONCE_FLAG_INIT;

static int prop_cmp(const void *a, const void *b)
{
    return strcmp((*(const w2l_conf_prop *const *)a)->name,
                  (*(const w2l_conf_prop *const *)b)->name);
}

static void by_name_init(void)
{
    if (w2l__conf_nprops > W2L_ARRAY_LEN(by_name)) return; /* then searched in order */
    nby_name = w2l__conf_nprops;
    for (size_t i = 0; i < nby_name; i++) by_name[i] = &w2l__conf_props[i];
    qsort(by_name, nby_name, sizeof by_name[0], prop_cmp);
}

const w2l_conf_prop *w2l_conf_prop_find(const char *name)
{
    if (!name) return NULL;
    call_once(&by_name_once, by_name_init);
    for (size_t i = 0; !nby_name && i < w2l__conf_nprops; i++)
        if (strcmp(w2l__conf_props[i].name, name) == 0) return &w2l__conf_props[i];
    size_t lo = 0, hi = nby_name;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(by_name[mid]->name, name);
        if (cmp == 0) return by_name[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static void fmt_amount(w2l_conf_type t, int64_t v, char *buf, size_t size)
{
    static const struct { int64_t unit; const char *name; } ms[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
    static const struct { int64_t unit; const char *name; } by[] = {
        {1LL << 40, "TiB"}, {1LL << 30, "GiB"}, {1LL << 20, "MiB"}, {1LL << 10, "KiB"}, {1, ""}};
    if (t == W2L_CONF_DURATION) {
        for (size_t i = 0; i < W2L_ARRAY_LEN(ms); i++)
            if (v % ms[i].unit == 0) {
                snprintf(buf, size, "%lld%s", (long long)(v / ms[i].unit), ms[i].name);
                return;
            }
    } else if (t == W2L_CONF_SIZE) {
        for (size_t i = 0; i < W2L_ARRAY_LEN(by); i++)
            if (v != 0 && v % by[i].unit == 0) {
                snprintf(buf, size, "%lld%s", (long long)(v / by[i].unit), by[i].name);
                return;
            }
    }
    snprintf(buf, size, "%lld", (long long)v);
}

void w2l__conf_expected(const w2l_conf_prop *p, char *buf, size_t size)
{
    char lo[32], hi[32];
    switch (p->type) {
    case W2L_CONF_ENUM:
        snprintf(buf, size, "one of %s", p->choices);
        break;
    case W2L_CONF_INT:
    case W2L_CONF_DURATION:
    case W2L_CONF_SIZE:
        fmt_amount(p->type, p->min, lo, sizeof lo);
        fmt_amount(p->type, p->max, hi, sizeof hi);
        snprintf(buf, size, "%s%s from %s to %s", type_names[p->type],
                 p->type == W2L_CONF_DURATION ? " (e.g. 500ms, 10s, 5m)"
                 : p->type == W2L_CONF_SIZE   ? " (e.g. 65536, 64KiB, 128MiB)"
                                              : "",
                 lo, hi);
        break;
    default:
        snprintf(buf, size, "%s", type_names[p->type]);
    }
}

/* Parses "<digits><unit>" with the unit table; 0 on success. */
static int parse_amount(const char *s, int is_size, int64_t *out)
{
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    while (isspace((unsigned char)*end)) end++;
    int64_t mul = 1;
    if (is_size) {
        static const struct { const char *u; int64_t m; } units[] = {
            {"", 1}, {"b", 1}, {"k", 1LL << 10}, {"kb", 1LL << 10}, {"kib", 1LL << 10},
            {"m", 1LL << 20}, {"mb", 1LL << 20}, {"mib", 1LL << 20}, {"g", 1LL << 30},
            {"gb", 1LL << 30}, {"gib", 1LL << 30}, {"t", 1LL << 40}, {"tb", 1LL << 40},
            {"tib", 1LL << 40}};
        size_t i;
        for (i = 0; i < W2L_ARRAY_LEN(units); i++)
            if (strcasecmp(end, units[i].u) == 0) break;
        if (i == W2L_ARRAY_LEN(units)) return -1;
        mul = units[i].m;
    } else {
        static const struct { const char *u; int64_t m; } units[] = {
            {"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"min", 60000}, {"h", 3600000},
            {"d", 86400000}};
        size_t i;
        for (i = 0; i < W2L_ARRAY_LEN(units); i++)
            if (strcmp(end, units[i].u) == 0) break;
        if (i == W2L_ARRAY_LEN(units)) return -1;
        mul = units[i].m;
    }
    if (v > (unsigned long long)(INT64_MAX / mul)) return -1;
    *out = (int64_t)v * mul;
    return 0;
}

int w2l__conf_parse(const w2l_conf_prop *p, const char *value, int64_t *out)
{
    switch (p->type) {
    case W2L_CONF_STRING:
    case W2L_CONF_URI:
        return value ? 0 : -1;
    case W2L_CONF_BOOL: {
        static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false",
                                                                                       "no", "off",
                                                                                       "0" };
        for (size_t i = 0; i < 4; i++) {
            if (strcasecmp(value, yes[i]) == 0) { *out = 1; return 0; }
            if (strcasecmp(value, no[i]) == 0) { *out = 0; return 0; }
        }
        return -1;
    }
    case W2L_CONF_ENUM: {
        size_t vl = strlen(value);
        int64_t idx = 0;
        for (const char *c = p->choices; *c; idx++) {
            size_t n = strcspn(c, "|");
            if (n == vl && strncmp(c, value, n) == 0) { *out = idx; return 0; }
            c += n;
            if (*c == '|') c++;
        }
        return -1;
    }
    case W2L_CONF_INT: {
        errno = 0;
        char *end;
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end) return -1;
        if (v < p->min || v > p->max) return -1;
        *out = v;
        return 0;
    }
    case W2L_CONF_DURATION:
    case W2L_CONF_SIZE: {
        int64_t v;
        if (parse_amount(value, p->type == W2L_CONF_SIZE, &v) != 0) return -1;
        if (v < p->min || v > p->max) return -1;
        *out = v;
        return 0;
    }
    }
    return -1;
}

/* The property for key: itself, or the property behind a per-table override
 * "table.<db>.<table>.<name>" (then *table_part gets the "<db>.<table>" span). */
static const w2l_conf_prop *resolve(const char *key, const char **tpart, size_t *tlen)
{
    const w2l_conf_prop *p = w2l_conf_prop_find(key);
    if (p) return p;
    /* "<group>.<name>.<property>" of a named property "<group>.<property>" */
    for (size_t i = 0; i < w2l__conf_nprops; i++) {
        const w2l_conf_prop *q = &w2l__conf_props[i];
        const char *dot = q->flags & W2L_CONF_F_NAMED ? strchr(q->name, '.') : NULL;
        if (!dot) continue;
        size_t gl = (size_t)(dot - q->name) + 1, pl = strlen(dot), kl = strlen(key);
        if (kl <= gl + pl || strncmp(key, q->name, gl) != 0 || strcmp(key + kl - pl, dot) != 0)
            continue;
        if (!memchr(key + gl, '.', kl - pl - gl)) return q; /* a name without dots */
    }
    if (strncmp(key, "table.", 6) != 0) return NULL;
    /* the longest per-table property name that ends the key after a '.' (a property named
     * "table.NAME" is overridden by "table.<db>.<table>.NAME") */
    for (size_t i = 0; i < w2l__conf_nprops; i++) {
        const w2l_conf_prop *q = &w2l__conf_props[i];
        if (!(q->flags & W2L_CONF_F_PER_TABLE)) continue;
        const char *name = strncmp(q->name, "table.", 6) == 0 ? q->name + 6 : q->name;
        size_t kl = strlen(key), nl = strlen(name);
        if (kl > 6 + nl + 1 && key[kl - nl - 1] == '.' && strcmp(key + kl - nl, name) == 0) {
            if (tpart) *tpart = key + 6;
            if (tlen) *tlen = kl - nl - 1 - 6;
            return q;
        }
    }
    return NULL;
}

/* Keys under "ext." (for plug-ins and hosts) and "kafka." (librdkafka properties, passed
 * through by the Kafka source) are free: any name, any value, never interpreted here. */
static int free_key(const char *key)
{
    return (strncmp(key, "ext.", 4) == 0 && key[4]) || (strncmp(key, "kafka.", 6) == 0 && key[6]);
}

/* Never printed: properties marked secret, and pass-through keys that name a password,
 * secret, key material or SASL/TLS credential. */
static int secret_key(const char *key, const w2l_conf_prop *p)
{
    if (p) return (p->flags & W2L_CONF_F_SECRET) != 0;
    return strstr(key, "password") || strstr(key, "secret") || strstr(key, "sasl.") ||
           strstr(key, ".key") || strstr(key, "token");
}

w2l_conf *w2l_conf_new(void) { return w2l__calloc(1, sizeof(w2l_conf)); }

void w2l_conf_free(w2l_conf *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        w2l__free(c->items[i].key);
        w2l__free(c->items[i].val);
    }
    w2l__free(c->items);
    w2l__free(c);
}

w2l_conf *w2l_conf_dup(const w2l_conf *c)
{
    w2l_conf *d = w2l_conf_new();
    if (!d) return NULL;
    if (c->n) {
        d->items = w2l__calloc(c->n, sizeof *d->items);
        if (!d->items) goto fail;
        d->cap = c->n;
        for (; d->n < c->n; d->n++) {
            d->items[d->n].key = w2l__strdup(c->items[d->n].key);
            d->items[d->n].val = w2l__strdup(c->items[d->n].val);
            if (!d->items[d->n].key || !d->items[d->n].val) {
                d->n++;
                goto fail;
            }
        }
    }
    return d;
fail:
    w2l_conf_free(d);
    return NULL;
}

/* Binary search: index of key, or where it would go (*found 0). */
static size_t locate(const w2l_conf *c, const char *key, int *found)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->items[mid].key, key);
        if (cmp == 0) { *found = 1; return mid; }
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

/* The names of the properties that pass filter (NULL: all), in table order, into v (at
 * least w2l__conf_nprops entries). Returns how many. */
static size_t prop_names(const char **v, unsigned filter)
{
    size_t k = 0;
    for (size_t i = 0; i < w2l__conf_nprops; i++)
        if (!filter || (w2l__conf_props[i].flags & filter)) {
            const char *name = w2l__conf_props[i].name;
            /* per table, "table.NAME" is table.<db>.<table>.NAME */
            if (filter == W2L_CONF_F_PER_TABLE && strncmp(name, "table.", 6) == 0) name += 6;
            v[k++] = name;
        }
    return k;
}

/* table.<db>.<table>.<name> whose name is no per-table key: name the nearest one and list
 * them all. */
static w2l_rc unknown_table_key(const char *key, w2l_error *err)
{
    /* out of memory: the same error, without the suggestion */
    const char **names = w2l__calloc(w2l__conf_nprops ? w2l__conf_nprops : 1, sizeof *names);
    size_t n = names ? prop_names(names, W2L_CONF_F_PER_TABLE) : 0;
    /* the name is what follows table.<db>.<table>. */
    const char *best = NULL, *name = strchr(key + 6, '.');
    if (name) name = strchr(name + 1, '.');
    if (name) best = w2l_suggest(++name, names, n);
    char list[1024];
    size_t o = 0;
    list[0] = '\0';
    /* keys of one family together, as family.{a, b}: the list fits one error line */
    for (size_t i = 0, j; i < n && o < sizeof list; i = j) {
        const char *dot = strchr(names[i], '.');
        size_t fl = dot ? (size_t)(dot - names[i]) + 1 : 0;
        for (j = i + 1; fl && j < n && !strncmp(names[j], names[i], fl);) j++;
        if (j - i < 2) {
            j = i + 1;
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", names[i]);
            continue;
        }
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%.*s{", i ? ", " : "", (int)fl,
                              names[i]);
        for (size_t k = i; k < j && o < sizeof list; k++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k > i ? ", " : "",
                                  names[k] + fl);
        if (o < sizeof list) o += (size_t)snprintf(list + o, sizeof list - o, "}");
    }
    w2l_rc rc;
    if (best)
        rc = w2l__fail(err, W2L_CONFIG,
                       "unknown per-table configuration key '%s' (did you mean '%.*s%s'?)", key,
                       (int)(name - key), key, best);
    else if (!n)
        rc = w2l__fail(err, W2L_CONFIG,
                       "unknown per-table configuration key '%s' (see w2l-config(5))", key);
    else
        rc = w2l__fail(err, W2L_CONFIG,
                       "unknown per-table configuration key '%s': table.<db>.<table>.KEY takes "
                       "one of %s",
                       key, list);
    w2l__free(names);
    return rc;
}

static w2l_rc unknown_key(const char *key, w2l_error *err)
{
    if (strncmp(key, "table.", 6) == 0 && !w2l_conf_prop_find(key))
        return unknown_table_key(key, err);
    const char **names = w2l__calloc(w2l__conf_nprops ? w2l__conf_nprops : 1, sizeof *names);
    const char *best = names ? w2l_suggest(key, names, prop_names(names, 0)) : NULL;
    w2l_rc rc = best ? w2l__fail(err, W2L_CONFIG,
                                 "unknown configuration key '%s' (did you mean '%s'?)", key, best)
                     : w2l__fail(err, W2L_CONFIG,
                                 "unknown configuration key '%s' (see w2l-config(5))", key);
    w2l__free(names);
    return rc;
}

static int grow(w2l_conf *c)
{
    if (c->n < c->cap) return 0;
    size_t ncap = c->cap ? c->cap * 2 : 16;
    kv *ni = w2l__realloc(c->items, ncap * sizeof *ni);
    if (!ni) return -1;
    c->items = ni;
    c->cap = ncap;
    return 0;
}

w2l_rc w2l_conf_set(w2l_conf *c, const char *key, const char *value, w2l_error *err)
{
    if (!c || !key) return w2l__fail(err, W2L_MISUSE, "w2l_conf_set: NULL argument");
    int ext = free_key(key);
    const char *tpart = NULL;
    size_t tlen = 0;
    const w2l_conf_prop *p = ext ? NULL : resolve(key, &tpart, &tlen);
    if (!ext && !p) return unknown_key(key, err);
    if (tpart && (tlen < 3 || !memchr(tpart, '.', tlen)))
        return w2l__fail(err, W2L_CONFIG, "configuration key '%s': expected table.<db>.<table>.%s",
                         key, p->name);
    if (value && p) {
        int64_t v;
        if (w2l__conf_parse(p, value, &v) != 0) {
            char exp[160];
            w2l__conf_expected(p, exp, sizeof exp);
            return w2l__fail(err, W2L_CONFIG, "configuration key '%s': expected %s, got '%s'", key,
                             exp, (p->flags & W2L_CONF_F_SECRET) ? "****" : value);
        }
    }
    int found;
    size_t i = locate(c, key, &found);
    if (!value) {
        if (found) {
            w2l__free(c->items[i].key);
            w2l__free(c->items[i].val);
            memmove(&c->items[i], &c->items[i + 1], (c->n - i - 1) * sizeof *c->items);
            c->n--;
        }
        return W2L_OK;
    }
    char *v = w2l__strdup(value);
    W2L_NOMEM_IF(!v, err);
    if (found) {
        w2l__free(c->items[i].val);
        c->items[i].val = v;
        return W2L_OK;
    }
    char *k = w2l__strdup(key);
    if (!k || grow(c) != 0) {
        w2l__free(k);
        w2l__free(v);
        return w2l__fail(err, W2L_NOMEM, "w2l_conf_set %s: out of memory", key);
    }
    memmove(&c->items[i + 1], &c->items[i], (c->n - i) * sizeof *c->items);
    c->items[i].key = k;
    c->items[i].val = v;
    c->n++;
    return W2L_OK;
}

w2l_rc w2l_conf_get(const w2l_conf *c, const char *key, const char **out, w2l_error *err)
{
    *out = NULL;
    int ext = free_key(key);
    const w2l_conf_prop *p = ext ? NULL : resolve(key, NULL, NULL);
    if (!ext && !p) return unknown_key(key, err);
    int found;
    size_t i = locate(c, key, &found);
    if (found) *out = c->items[i].val;
    else if (p && strcmp(p->name, key) == 0) *out = p->def;
    return W2L_OK;
}

int w2l_conf_is_set(const w2l_conf *c, const char *key)
{
    int found;
    locate(c, key, &found);
    return found;
}

w2l_rc w2l_conf_get_int(const w2l_conf *c, const char *key, int64_t *out, w2l_error *err)
{
    const char *v;
    W2L_TRY(w2l_conf_get(c, key, &v, err));
    const w2l_conf_prop *p = resolve(key, NULL, NULL);
    if (!p || p->type == W2L_CONF_STRING || p->type == W2L_CONF_URI)
        return w2l__fail(err, W2L_CONFIG, "configuration key '%s' is not numeric", key);
    if (!v) return w2l__fail(err, W2L_CONFIG, "configuration key '%s' has no value", key);
    if (w2l__conf_parse(p, v, out) != 0)
        return w2l__fail(err, W2L_CONFIG, "configuration key '%s': bad value '%s'", key, v);
    return W2L_OK;
}

w2l_rc w2l_conf_get_for_table(const w2l_conf *c, const char *table, const char *key,
                              const char **out, w2l_error *err)
{
    const w2l_conf_prop *p = w2l_conf_prop_find(key);
    if (p && (p->flags & W2L_CONF_F_PER_TABLE) && table) {
        /* "table.<table>.<key>" ("table.<table>.NAME" for key "table.NAME"), on the stack
         * unless long */
        const char *name = strncmp(key, "table.", 6) == 0 ? key + 6 : key;
        size_t tl = strlen(table), kl = strlen(name), n = 6 + tl + 1 + kl + 1;
        char stack[256], *k = n <= sizeof stack ? stack : w2l__malloc(n);
        W2L_NOMEM_IF(!k, err);
        memcpy(k, "table.", 6);
        memcpy(k + 6, table, tl);
        k[6 + tl] = '.';
        memcpy(k + 7 + tl, name, kl + 1);
        int found;
        size_t i = locate(c, k, &found);
        if (k != stack) w2l__free(k);
        if (found) {
            *out = c->items[i].val;
            return W2L_OK;
        }
    }
    return w2l_conf_get(c, key, out, err);
}

w2l_rc w2l_conf_require(const w2l_conf *c, const char *key, w2l_error *err)
{
    const char *v;
    W2L_TRY(w2l_conf_get(c, key, &v, err));
    if (v && *v) return W2L_OK;
    const w2l_conf_prop *p = w2l_conf_prop_find(key);
    char exp[160] = "a value";
    if (p) w2l__conf_expected(p, exp, sizeof exp);
    if (p && (p->flags & W2L_CONF_F_CLI))
        return w2l__fail(err, W2L_CONFIG, "missing required value: %s (--%s, expected %s)", key,
                         key, exp);
    return w2l__fail(err, W2L_CONFIG, "missing required value: %s (expected %s)", key, exp);
}

void w2l_conf_foreach(const w2l_conf *c, int (*fn)(void *, const char *, const char *), void *ctx)
{
    for (size_t i = 0; i < c->n; i++) {
        const w2l_conf_prop *p = resolve(c->items[i].key, NULL, NULL);
        const char *v = secret_key(c->items[i].key, p) ? "****" : c->items[i].val;
        if (fn(ctx, c->items[i].key, v)) break;
    }
}

/* Applies obj's members under prefix; nested objects become dotted keys. */
static w2l_rc apply_json(w2l_conf *c, const w2l__json *obj, const char *prefix,
                         const char *origin, w2l_error *err)
{
    for (w2l__json *m = w2l__json_first(obj); m; m = w2l__json_next(m)) {
        char key[256];
        int n = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", w2l__json_key(m));
        if (n < 0 || (size_t)n >= sizeof key)
            return w2l__fail(err, W2L_CONFIG, "%s: key '%s' too long", origin, w2l__json_key(m));
        char num[64];
        const char *val = NULL;
        switch (w2l__json_type(m)) {
        case W2L_JSON_OBJECT:
            /* a nested object is a group of keys, unless the dotted key itself exists */
            W2L_TRY(apply_json(c, m, key, origin, err));
            continue;
        case W2L_JSON_STRING: val = w2l__json_str(m); break;
        case W2L_JSON_NUMBER: w2l__json_number_text(m, num, sizeof num); val = num; break;
        case W2L_JSON_BOOL: { int b = 0; w2l__json_bool(m, &b); val = b ? "true" : "false"; break; }
        case W2L_JSON_NULL: val = NULL; break;
        default:
            return w2l__fail(err, W2L_CONFIG,
                             "%s: key '%s': expected a string, number or boolean, got %s", origin,
                             key, w2l__json_kind_name(w2l__json_type(m)));
        }
        w2l_rc rc = w2l_conf_set(c, key, val, err);
        if (rc != W2L_OK) {
            w2l__error_prefix(err, "%s: ", origin);
            return rc;
        }
    }
    return W2L_OK;
}

w2l_rc w2l_conf_load_json(w2l_conf *c, const char *json, size_t len, const char *origin,
                          w2l_error *err)
{
    if (!origin) origin = "config";
    w2l__json *root;
    w2l_rc rc = w2l__json_parse(json, len, &root, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "%s: ", origin);
        if (rc != W2L_CORRUPT) return rc;
        if (err) err->code = W2L_CONFIG;
        return W2L_CONFIG;
    }
    if (w2l__json_type(root) != W2L_JSON_OBJECT) {
        w2l__json_free(root);
        return w2l__fail(err, W2L_CONFIG, "%s: expected a JSON object of configuration keys",
                         origin);
    }
    w2l_conf *work = w2l_conf_dup(c);
    if (!work) {
        w2l__json_free(root);
        return w2l__fail(err, W2L_NOMEM, "%s: out of memory", origin);
    }
    rc = apply_json(work, root, "", origin, err);
    w2l__json_free(root);
    if (rc != W2L_OK) {
        w2l_conf_free(work);
        return rc;
    }
    /* swap contents: c takes work's items */
    w2l_conf tmp = *c;
    *c = *work;
    *work = tmp;
    w2l_conf_free(work);
    return W2L_OK;
}

w2l_rc w2l_conf_load_file(w2l_conf *c, const char *path, w2l_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return w2l__fail_errno(err, W2L_CONFIG, errno, "config file %s", path);
    w2l_buf b = {0};
    char chunk[8192];
    size_t n;
    w2l_rc rc = W2L_OK;
    while (rc == W2L_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = w2l_buf_append(&b, chunk, n, err);
    if (rc == W2L_OK && ferror(f))
        rc = w2l__fail_errno(err, W2L_CONFIG, errno, "config file %s: read", path);
    fclose(f);
    if (rc == W2L_OK) rc = w2l_conf_load_json(c, (const char *)b.data, b.len, path, err);
    w2l_buf_release(&b);
    return rc;
}
