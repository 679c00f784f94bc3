/*
 * Online schema change tools: the tables gh-ost and pt-online-schema-change create next
 * to a table t, and their cut-over renames (w2l-design(7) section 3).
 *
 *   gh-ost:  _t_gho (new table, filled then swapped in), _t_ghc (changelog/heartbeat),
 *            _t_del or _t_<YYYYMMDDhhmmss>_del (the original after the swap);
 *            cut-over: RENAME TABLE t TO _t_del, _t_gho TO t
 *   pt-osc:  _t_new (new table), _t_old (the original after the swap); on a name clash
 *            the tool adds leading underscores (__t_new);
 *            cut-over: RENAME TABLE t TO _t_old, _t_new TO t
 *            (or, with --alter-foreign-keys-method drop_swap: DROP TABLE t, then
 *             RENAME TABLE _t_new TO t)
 * After a cut-over the table keeps its name and takes the shadow's schema, which the DDL
 * handler has followed through the shadow's own CREATE ... LIKE and ALTERs.
 */
#include <stdio.h>

#include "ddl_int.h"

static int ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n > k && memcmp(s + n - k, suf, k) == 0;
}

w2l__osc_kind w2l__osc_classify(const char *name, char *base, size_t base_size)
{
    if (base && base_size) base[0] = '\0';
    if (!name || name[0] != '_') return W2L_OSC_NONE;
    size_t n = strlen(name);
    static const struct { const char *suf; w2l__osc_kind kind; } sufs[] = {
        {"_gho", W2L_OSC_GHOST_SHADOW}, {"_ghc", W2L_OSC_GHOST_CHANGELOG},
        {"_del", W2L_OSC_GHOST_OLD},    {"_new", W2L_OSC_PTOSC_SHADOW},
        {"_old", W2L_OSC_PTOSC_OLD}};
    for (size_t i = 0; i < W2L_ARRAY_LEN(sufs); i++) {
        if (!ends_with(name, n, sufs[i].suf)) continue;
        size_t from = 1, to = n - 4;
        if (sufs[i].kind == W2L_OSC_PTOSC_SHADOW || sufs[i].kind == W2L_OSC_PTOSC_OLD)
            while (from < to && name[from] == '_') from++;
        if (sufs[i].kind == W2L_OSC_GHOST_OLD && to - from > 15 && name[to - 15] == '_') {
            size_t d = to - 14; /* _t_20240102030405_del */
            while (d < to && name[d] >= '0' && name[d] <= '9') d++;
            if (d == to) to -= 15;
        }
        if (to <= from) return W2L_OSC_NONE;
        if (base && base_size) snprintf(base, base_size, "%.*s", (int)(to - from), name + from);
        return sufs[i].kind;
    }
    return W2L_OSC_NONE;
}

static int same_db(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* 1 when shadow is a shadow table of the given kind for table. */
static int shadow_of(const w2l__ddl_name *shadow, const w2l__ddl_name *table, w2l__osc_kind *kind)
{
    char base[256];
    w2l__osc_kind k = w2l__osc_classify(shadow->name, base, sizeof base);
    if (k != W2L_OSC_GHOST_SHADOW && k != W2L_OSC_PTOSC_SHADOW) return 0;
    if (strcmp(base, table->name) != 0 || !same_db(shadow->db, table->db)) return 0;
    *kind = k;
    return 1;
}

int w2l__osc_detect_swap(const w2l__ddl_stmt *st, w2l__osc_swap *out)
{
    if (!st || st->kind != W2L_DDL_RENAME_TABLE) return 0;
    w2l__osc_kind tool;
    if (st->nrenames == 1 && shadow_of(&st->renames[0].from, &st->renames[0].to, &tool)) {
        memset(out, 0, sizeof *out);
        out->table = st->renames[0].to;
        out->shadow = st->renames[0].from;
        out->tool = tool;
        return 1;
    }
    if (st->nrenames != 2) return 0;
    const w2l__ddl_rename *a = &st->renames[0], *b = &st->renames[1];
    /* t TO old, shadow TO t */
    if (strcmp(a->from.name, b->to.name) != 0 || !same_db(a->from.db, b->to.db)) return 0;
    if (!shadow_of(&b->from, &a->from, &tool)) return 0;
    char base[256];
    w2l__osc_kind old = w2l__osc_classify(a->to.name, base, sizeof base);
    w2l__osc_kind want = tool == W2L_OSC_GHOST_SHADOW ? W2L_OSC_GHOST_OLD : W2L_OSC_PTOSC_OLD;
    if (old != want || strcmp(base, a->from.name) != 0 || !same_db(a->to.db, a->from.db)) return 0;
    out->table = a->from;
    out->shadow = b->from;
    out->old = a->to;
    out->tool = tool;
    return 1;
}
