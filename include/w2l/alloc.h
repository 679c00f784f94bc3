/*
 * Process-wide set-up: the allocator hook and global init/cleanup (curl and the MariaDB
 * client need process-wide initialisation, so it is explicit, as in curl).
 */
#ifndef W2L_ALLOC_H
#define W2L_ALLOC_H

#include <stddef.h>
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *(*w2l_malloc_fn)(size_t size);
typedef void *(*w2l_realloc_fn)(void *ptr, size_t size);
typedef void (*w2l_free_fn)(void *ptr);

/* Replaces the allocator used for every allocation the library makes. Call before
 * w2l_global_init() and before any other call; all three functions must be given.
 * Returns W2L_MISUSE when called after init or with a NULL function.
 * Not thread-safe. See w2l_set_allocator(3). */
W2L_API w2l_rc w2l_set_allocator(w2l_malloc_fn m, w2l_realloc_fn r, w2l_free_fn f);

/* Allocates through the library's allocator, so that plug-ins can hand memory to the core
 * (e.g. a state store filling a w2l_buf). Thread-safe. See w2l_malloc(3). */
W2L_API void *w2l_malloc(size_t size);
W2L_API void *w2l_realloc(void *ptr, size_t size);
W2L_API void w2l_free(void *ptr);

/* Initialises the library and the client libraries it uses; registers the built-in
 * plug-ins. Reference counted: every successful call needs one w2l_global_cleanup().
 * Not thread-safe against a concurrent cleanup. See w2l_global_init(3). */
W2L_API w2l_rc w2l_global_init(w2l_error *err);

/* Undoes one w2l_global_init(); the last one also forgets every registered plug-in.
 * Register plug-ins after w2l_global_init(), which installs the built-in defaults.
 * See w2l_global_init(3). */
W2L_API void w2l_global_cleanup(void);

#ifdef __cplusplus
}
#endif
#endif
