/*
 * The source module, internal side: the built-in source plug-ins that lib/builtins.c
 * registers.
 */
#ifndef W2L_SOURCE_INT_H
#define W2L_SOURCE_INT_H

#include "../common/common.h"

/* "file": CDC JSON lines (canal-json, debezium-json, maxwell-json) from a local file,
 * file_source.c. */
extern const w2l_source_methods w2l__source_file;

#endif
