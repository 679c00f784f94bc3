/* Configuration module, internal side. */
#ifndef W2L_CONF_INT_H
#define W2L_CONF_INT_H

#include "../common/common.h"

extern const w2l_conf_prop w2l__conf_props[];
extern const size_t w2l__conf_nprops;

/* Parses a value for prop p into an integer (INT, BOOL, DURATION ms, SIZE bytes, ENUM
 * index). Returns 0 on success. */
int w2l__conf_parse(const w2l_conf_prop *p, const char *value, int64_t *out);

/* The expected form of p, for messages: "a duration (e.g. 10s, 500ms), 50ms..1d". */
void w2l__conf_expected(const w2l_conf_prop *p, char *buf, size_t size);

#endif
