/*
 * The include / exclude table filter (table_filter.h).
 */
#include <stdio.h>

#include "table_filter.h"
#include "../conf/conf.h"

static w2l_rc compile(const w2l_conf *conf, const char *key, regex_t *re, int *has, char **text,
                      w2l_error *err)
{
    const char *v = NULL;
    *has = 0;
    if (!conf || w2l_conf_get(conf, key, &v, NULL) != W2L_OK || !v || !*v) return W2L_OK;
    char *anch = w2l__asprintf("^(%s)$", v);
    W2L_NOMEM_IF(!anch, err);
    int r = regcomp(re, anch, REG_EXTENDED | REG_NOSUB);
    w2l__free(anch);
    if (r)
        return w2l__fail(err, W2L_CONFIG,
                         "%s: '%.200s' is not a regular expression (POSIX extended, matched "
                         "against the whole db.table)",
                         key, v);
    *has = 1;
    *text = w2l__strdup(v);
    W2L_NOMEM_IF(!*text, err);
    return W2L_OK;
}

w2l_rc w2l__tfilter_init(w2l__tfilter *f, const w2l_conf *conf, w2l_error *err)
{
    memset(f, 0, sizeof *f);
    w2l_rc rc = compile(conf, "include", &f->include, &f->has_include, &f->include_text, err);
    if (rc == W2L_OK)
        rc = compile(conf, "exclude", &f->exclude, &f->has_exclude, &f->exclude_text, err);
    if (rc == W2L_OK && (f->has_include || f->has_exclude)) {
        f->seen = w2l__calloc(1, sizeof *f->seen);
        if (!f->seen) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    }
    if (rc != W2L_OK) w2l__tfilter_free(f);
    return rc;
}

static void note_left_out(w2l__tfilter_seen *s, const char *full)
{
    s->left_out++;
    for (size_t i = 0; i < s->nnames; i++)
        if (!strcmp(s->names[i], full)) return;
    if (s->nnames == W2L__TFILTER_SEEN) {
        s->more = 1;
        return;
    }
    char *n = w2l__strdup(full);
    if (n) s->names[s->nnames++] = n; /* out of memory: the report names fewer tables */
}

int w2l__tfilter_ok(const w2l__tfilter *f, const char *db, const char *table)
{
    if (!f || (!f->has_include && !f->has_exclude)) return 1;
    char full[600];
    snprintf(full, sizeof full, "%s.%s", db ? db : "", table ? table : "");
    int ok = !(f->has_include && regexec(&f->include, full, 0, NULL, 0) != 0) &&
             !(f->has_exclude && regexec(&f->exclude, full, 0, NULL, 0) == 0);
    if (f->seen) {
        if (ok) f->seen->passed++;
        else note_left_out(f->seen, full);
    }
    return ok;
}

void w2l__tfilter_hint(const char *pattern, const char *db, char *buf, size_t size)
{
    const char *last = pattern && *pattern && !strpbrk(pattern, ".\\") && strlen(pattern) < 100
                           ? pattern
                           : "accounts";
    if (!db || !*db || strlen(db) > 64) db = "shop";
    snprintf(buf, size, "patterns match DB.TABLE, whole, e.g. '%s\\.%s' or '.*\\.%s'", db, last,
             last);
}

void w2l__tfilter_report(const w2l__tfilter *f, const char *who)
{
    if (!f || !f->seen || f->seen->passed || !f->seen->nnames) return;
    const w2l__tfilter_seen *s = f->seen;
    char names[600] = "";
    size_t n = 0;
    for (size_t i = 0; i < s->nnames && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", s->names[i]);
    char hint[300], db[80];
    snprintf(db, sizeof db, "%.*s", (int)strcspn(s->names[0], "."), s->names[0]);
    w2l__tfilter_hint(f->has_include ? f->include_text : NULL, db, hint, sizeof hint);
    char what[300];
    if (f->has_include && f->has_exclude)
        snprintf(what, sizeof what, "--include '%.100s' with --exclude '%.100s'",
                 f->include_text, f->exclude_text);
    else if (f->has_include) snprintf(what, sizeof what, "--include '%.200s'", f->include_text);
    else snprintf(what, sizeof what, "--exclude '%.200s'", f->exclude_text);
    w2l__log(W2L_LOG_WARN,
             "%s: %s let no table through, nothing was synced: %s; tables seen: %s%s", who, what,
             hint, names, s->more ? ", ..." : "");
}

void w2l__tfilter_free(w2l__tfilter *f)
{
    if (!f) return;
    if (f->has_include) regfree(&f->include);
    if (f->has_exclude) regfree(&f->exclude);
    f->has_include = f->has_exclude = 0;
    w2l__free(f->include_text);
    w2l__free(f->exclude_text);
    f->include_text = f->exclude_text = NULL;
    if (f->seen) {
        for (size_t i = 0; i < f->seen->nnames; i++) w2l__free(f->seen->names[i]);
        w2l__free(f->seen);
        f->seen = NULL;
    }
}
