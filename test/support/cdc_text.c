/*
 * Text forms of decoded CDC changes and schemas, shared by the CDC decoder suites
 * (check_cdc_json.c, check_cdc_maxwell.c), which compare whole streams as text.
 */
#include <stdio.h>

#include "support.h"

const char *cdc_op_name(w2l_op op)
{
    switch (op) {
    case W2L_OP_INSERT: return "I";
    case W2L_OP_UPDATE_BEFORE: return "UB";
    case W2L_OP_UPDATE_AFTER: return "UA";
    case W2L_OP_DELETE: return "D";
    }
    return "?";
}

void cdc_change_text(const w2l_change *ch, char *line, size_t size)
{
    char v[1024];
    int n = snprintf(line, size, "%s.%s %s ", ch->db, ch->table, cdc_op_name(ch->op));
    for (size_t k = 0; k < ch->ncols && n > 0 && (size_t)n < size; k++) {
        const w2l_field *f = w2l_schema_field(ch->schema, k);
        if (ch->present && !(ch->present[k / 8] & (1u << (k % 8)))) snprintf(v, sizeof v, "-");
        else w2l_value_format(f->type, &ch->row[k], v, sizeof v);
        n += snprintf(line + n, size - (size_t)n, "%s%s", k ? "|" : "", v);
    }
    if (n > 0 && (size_t)n < size) snprintf(line + n, size - (size_t)n, "\n");
}

void cdc_schema_text(const w2l_schema *s, char *buf, size_t size)
{
    size_t n = 0, nid;
    const int32_t *ids = w2l_schema_identifier(s, &nid);
    buf[0] = '\0';
    for (size_t i = 0; i < w2l_schema_field_count(s); i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        char t[32];
        int key = 0;
        for (size_t k = 0; k < nid; k++) key |= ids[k] == f->id;
        n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s:%s", i ? "," : "", f->name,
                              key ? "*" : "", f->required ? "!" : "",
                              w2l_type_format(f->type, t, sizeof t));
        if (n >= size) return;
    }
}
