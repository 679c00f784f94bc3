/*
 * The DDL handler's partition specs (op_ddl_int.h): which spec the configuration asks for
 * a table ("partition-by", w2l-config(5)), checked when the handler opens (syntax) and when
 * a table is first created or loaded (against its columns); a new table is created with
 * it, a loaded one whose default spec differs gets it as a new spec (Iceberg spec
 * evolution: files keep the spec they were written in, scans read both), recorded for the
 * owner like a schema change.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>

#include "op_ddl_int.h"

/* text over the current schema of meta; when a column it names is not there, over the
 * table's older schemas (newest first): a column renamed since keeps its field id, so the
 * spec still means it (a restart with the partition-by of before the rename must not
 * fail). The fields are then bound to the current schema. */
static w2l_rc parse_for_table(const char *text, const w2l__ice_meta *meta, w2l__ice_spec *out,
                              w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(meta);
    w2l_rc rc = w2l__ice_spec_parse(text, cur, out, err);
    if (rc != W2L_SCHEMA || !cur) return rc;
    for (size_t k = meta->nschemas; k-- > 0;) {
        const w2l_schema *old = meta->schemas[k].schema;
        w2l__ice_spec s;
        w2l_error e2;
        if (!old || old == cur || w2l__ice_spec_parse(text, old, &s, &e2) != W2L_OK) continue;
        int ok = 1;
        for (size_t i = 0; ok && i < s.nfields; i++) {
            long at = w2l_schema_index_of_id(cur, s.fields[i].source_id);
            ok = at >= 0 && w2l__ice_transform_result(s.fields[i].transform,
                                                      w2l_schema_field(cur, (size_t)at)->type,
                                                      &s.fields[i].type, &e2) == W2L_OK;
        }
        if (!ok) {
            w2l__ice_spec_release(&s);
            continue;
        }
        w2l__log(W2L_LOG_WARN,
                 "partition-by '%s' names columns of schema %d that were renamed since; they "
                 "are taken as their new names (set partition-by to them)",
                 text, (int)meta->schemas[k].schema_id);
        *out = s;
        return W2L_OK;
    }
    return rc;
}

typedef struct check_ctx {
    const ddl_op *op; /* NULL: syntax only */
    w2l_rc rc;
    w2l_error *err;
} check_ctx;

/* A table the lake holds already: its columns and types (the schema of a table that does
 * not exist yet is checked when it is created). */
static w2l_rc check_table(const ddl_op *op, const char *key, const char *value, w2l_error *err)
{
    size_t n = strlen(key) - strlen(".partition-by") - strlen("table.");
    char name[512];
    if (n >= sizeof name) return W2L_OK;
    memcpy(name, key + strlen("table."), n);
    name[n] = '\0';
    char *dot = strchr(name, '.');
    if (!dot) return W2L_OK;
    *dot = '\0';
    w2l__ice_table *t;
    w2l_error e2;
    if (w2l__ice_table_load(op->cat, op->io, name, dot + 1, &t, &e2) != W2L_OK) return W2L_OK;
    w2l__ice_spec s;
    w2l_rc rc = parse_for_table(value, t->meta, &s, err);
    w2l__ice_table_free(t);
    if (rc == W2L_OK) w2l__ice_spec_release(&s);
    return rc;
}

static int check_key(void *ctx, const char *key, const char *value)
{
    check_ctx *c = ctx;
    size_t n = strlen(key), k = strlen("partition-by");
    if (n < k || strcmp(key + n - k, "partition-by") != 0 || (n > k && key[n - k - 1] != '.'))
        return 0;
    w2l__ice_spec s;
    c->rc = w2l__ice_spec_parse(value, NULL, &s, c->err);
    if (c->rc == W2L_OK) {
        w2l__ice_spec_release(&s);
        if (c->op && n > k && strncmp(key, "table.", 6) == 0)
            c->rc = check_table(c->op, key, value, c->err);
    }
    if (c->rc != W2L_OK) {
        w2l__error_prefix(c->err, "%s: ", key);
        c->err->code = c->rc = W2L_CONFIG;
        return 1;
    }
    return 0;
}

w2l_rc w2l__ddlop_check_specs(const w2l_conf *conf, const ddl_op *op, w2l_error *err)
{
    check_ctx c = {op, W2L_OK, err};
    w2l_conf_foreach(conf, check_key, &c);
    if (c.rc != W2L_OK) return c.rc;
    const char *re = NULL;
    w2l_conf_get(conf, "partition-by.tables", &re, NULL);
    regex_t r;
    if (re && *re) {
        if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
            return w2l__fail(err, W2L_CONFIG, "partition-by.tables: not a regular expression: %s",
                             re);
        regfree(&r);
    }
    return W2L_OK;
}

/* 1 when the whole of name matches re. */
static int matches(const char *re, const char *name)
{
    char *anch = w2l__asprintf("^(%s)$", re);
    regex_t r;
    int ok = anch && regcomp(&r, anch, REG_EXTENDED | REG_NOSUB) == 0;
    w2l__free(anch);
    if (!ok) return 0;
    ok = regexec(&r, name, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

w2l_rc w2l__ddlop_spec_of(const ddl_op *op, const char *ns, const char *table,
                          const w2l_schema *schema, const w2l__ice_meta *meta, w2l__ice_spec *out,
                          int *set, w2l_error *err)
{
    memset(out, 0, sizeof *out);
    *set = 0;
    char name[512];
    snprintf(name, sizeof name, "%s.%s", ns, table);
    const char *v = NULL, *global = NULL, *re = NULL;
    w2l_conf_get_for_table(op->conf, name, "partition-by", &v, NULL);
    w2l_conf_get(op->conf, "partition-by", &global, NULL);
    if (!v) return W2L_OK;
    if (v == global) { /* the global one, unless partition-by.tables leaves this table out */
        w2l_conf_get(op->conf, "partition-by.tables", &re, NULL);
        if (re && *re && !matches(re, name)) return W2L_OK;
    }
    w2l_rc rc =
        meta ? parse_for_table(v, meta, out, err) : w2l__ice_spec_parse(v, schema, out, err);
    if (rc != W2L_OK) {
        if (v == global) w2l__error_prefix(err, "partition-by (table %s): ", name);
        else w2l__error_prefix(err, "table.%s.partition-by: ", name);
        err->code = W2L_CONFIG;
        return W2L_CONFIG;
    }
    *set = 1;
    return W2L_OK;
}

w2l_rc w2l__ddlop_tbl_spec(ddl_op *op, tbl *t, w2l_error *err)
{
    const w2l_schema *cur = w2l__ice_meta_current_schema(t->ice->meta);
    if (!cur) return W2L_OK;
    w2l__ice_spec want;
    int set;
    W2L_TRY(w2l__ddlop_spec_of(op, t->ns, t->name, cur, t->ice->meta, &want, &set, err));
    const w2l__ice_meta *m = t->ice->meta;
    const w2l__ice_spec *have = w2l__ice_meta_spec(m, m->default_spec_id);
    if (!set || w2l__ice_spec_same(&want, have)) {
        w2l__ice_spec_release(&want);
        return W2L_OK;
    }
    int changed = 0;
    w2l_rc rc = w2l__ice_meta_set_spec(t->ice->meta, &want, &changed, err);
    w2l__ice_spec_release(&want);
    if (rc == W2L_OK && changed) rc = w2l__tops_spec(&op->ops, t->ice, err);
    if (rc != W2L_OK) {
        w2l__error_prefix(err, "table %s.%s: partition spec: ", t->ns, t->name);
        return rc;
    }
    w2l__log_table(W2L_LOG_INFO, t->ns, t->name,
                   "ddl: table %s.%s: partition spec %d is the default now", t->ns, t->name,
                   (int)t->ice->meta->default_spec_id);
    return W2L_OK;
}
