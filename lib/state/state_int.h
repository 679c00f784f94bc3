/* Checkpoint state module, internal side. */
#ifndef W2L_STATE_INT_H
#define W2L_STATE_INT_H

#include "../common/common.h"

extern const w2l_state_methods w2l__state_mem;
extern const w2l_state_methods w2l__state_file;
extern w2l__registry w2l__state_registry;

#endif
