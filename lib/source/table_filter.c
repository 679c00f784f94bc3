/*
 * The include / exclude table filter (table_filter.h).
 */
#include <stdio.h>

#include "table_filter.h"
#include "../conf/conf.h"

static w2l_rc compile(const w2l_conf *conf, const char *key, regex_t *re, int *has,
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
    return W2L_OK;
}

w2l_rc w2l__tfilter_init(w2l__tfilter *f, const w2l_conf *conf, w2l_error *err)
{
    memset(f, 0, sizeof *f);
    W2L_TRY(compile(conf, "include", &f->include, &f->has_include, err));
    w2l_rc rc = compile(conf, "exclude", &f->exclude, &f->has_exclude, err);
    if (rc != W2L_OK) w2l__tfilter_free(f);
    return rc;
}

int w2l__tfilter_ok(const w2l__tfilter *f, const char *db, const char *table)
{
    if (!f || (!f->has_include && !f->has_exclude)) return 1;
    char full[600];
    snprintf(full, sizeof full, "%s.%s", db ? db : "", table ? table : "");
    if (f->has_include && regexec(&f->include, full, 0, NULL, 0) != 0) return 0;
    return !f->has_exclude || regexec(&f->exclude, full, 0, NULL, 0) != 0;
}

void w2l__tfilter_free(w2l__tfilter *f)
{
    if (!f) return;
    if (f->has_include) regfree(&f->include);
    if (f->has_exclude) regfree(&f->exclude);
    f->has_include = f->has_exclude = 0;
}
