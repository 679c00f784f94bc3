/*
 * Operator plug-in registry: one registry per operator kind (DDL handler, writer,
 * committer), so each kind has its own "default".
 */
#include "../common/common.h"

static w2l__registry op_registry[4];

w2l_rc w2l_operator_register(const w2l_operator_methods *m)
{
    if (!m || m->version < W2L_OPERATOR_METHODS_V1 || !m->name || !*m->name || !m->open ||
        !m->process || !m->notify_complete || !m->close || m->kind < W2L_OPERATOR_DDL ||
        m->kind > W2L_OPERATOR_COMMITTER)
        return W2L_MISUSE;
    return w2l__registry_add(&op_registry[m->kind], "operator", m->name, m,
                             strcmp(m->name, "default") == 0);
}

const w2l_operator_methods *w2l_operator_find(w2l_operator_kind kind, const char *name)
{
    if (kind < W2L_OPERATOR_DDL || kind > W2L_OPERATOR_COMMITTER) return NULL;
    return w2l__registry_find(&op_registry[kind], name);
}

void w2l__operator_registry_clear(void)
{
    for (size_t i = 0; i < W2L_ARRAY_LEN(op_registry); i++) w2l__registry_clear(&op_registry[i]);
}
