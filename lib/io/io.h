/*
 * File IO module, internal side: the built-in implementations' method tables.
 */
#ifndef W2L_IO_H
#define W2L_IO_H

#include "../common/common.h"

extern const w2l_fileio_methods w2l__fileio_local;
extern const w2l_fileio_methods w2l__fileio_mem;
extern w2l__registry w2l__fileio_registry;

/* Joins dir and name with one '/', into fresh memory; NULL when out of memory. */
char *w2l__path_join(const char *dir, const char *name);

#endif
