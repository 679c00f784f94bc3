/*
 * Test support: the primitive types by name, for suites that build values of every type.
 */
#ifndef W2L_TEST_TYPES_H
#define W2L_TEST_TYPES_H

#include "w2l.h"

#define T_BOOL ((w2l_type){W2L_TYPE_BOOLEAN, 0, 0})
#define T_INT ((w2l_type){W2L_TYPE_INT, 0, 0})
#define T_LONG ((w2l_type){W2L_TYPE_LONG, 0, 0})
#define T_FLOAT ((w2l_type){W2L_TYPE_FLOAT, 0, 0})
#define T_DOUBLE ((w2l_type){W2L_TYPE_DOUBLE, 0, 0})
#define T_DATE ((w2l_type){W2L_TYPE_DATE, 0, 0})
#define T_TIME ((w2l_type){W2L_TYPE_TIME, 0, 0})
#define T_TS ((w2l_type){W2L_TYPE_TIMESTAMP, 0, 0})
#define T_TSTZ ((w2l_type){W2L_TYPE_TIMESTAMPTZ, 0, 0})
#define T_STRING ((w2l_type){W2L_TYPE_STRING, 0, 0})
#define T_BINARY ((w2l_type){W2L_TYPE_BINARY, 0, 0})

/* decimal(p, s) */
static inline w2l_type dec(unsigned p, unsigned s)
{
    w2l_type t = {W2L_TYPE_DECIMAL, (uint8_t)p, (uint8_t)s};
    return t;
}

#endif
