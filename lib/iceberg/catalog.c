/*
 * Catalog plug-in registry.
 */
#include "../common/common.h"

w2l__registry w2l__catalog_registry;

w2l_rc w2l_catalog_register(const w2l_catalog_methods *m, int make_default)
{
    if (!m || m->version < W2L_CATALOG_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->load_table || !m->commit_table || !m->drop_table || !m->rename_table ||
        !m->list_tables || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__catalog_registry, "catalog", m->name, m, make_default);
}

const w2l_catalog_methods *w2l_catalog_find(const char *name)
{
    return w2l__registry_find(&w2l__catalog_registry, name);
}
