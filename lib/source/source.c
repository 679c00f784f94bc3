/*
 * Source plug-in registry, keyed by URI scheme ("mysql", "kafka", "file").
 */
#include "../common/common.h"

w2l__registry w2l__source_registry;

w2l_rc w2l_source_register(const w2l_source_methods *m, int make_default)
{
    if (!m || m->version < W2L_SOURCE_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->next || !m->checkpoint_complete || !m->close)
        return W2L_MISUSE;
    return w2l__registry_add(&w2l__source_registry, "source", m->name, m, make_default);
}

const w2l_source_methods *w2l_source_find(const char *name)
{
    return w2l__registry_find(&w2l__source_registry, name);
}
