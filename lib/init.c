/*
 * The library's process-wide init/cleanup and its version. Top level, beside builtins.c,
 * because initialising registers plug-ins of every module: lib/common stays below them all.
 */
#include "common/common.h"
#include "io/s3.h"

/* Defined in builtins.c: registers the plug-ins the library ships. */
w2l_rc w2l__builtins_register(w2l_error *err);
void w2l__builtins_unregister(void);

static int init_count;

w2l_rc w2l_global_init(w2l_error *err)
{
    if (init_count++ > 0) return W2L_OK;
    /* Fixed before anything allocates: memory must be freed by the hook that gave it. */
    w2l__allocator_fix(1);
    w2l_rc rc = w2l__http_global_init(err);
    if (rc == W2L_OK) {
        rc = w2l__builtins_register(err);
        if (rc != W2L_OK) w2l__http_global_cleanup();
    }
    if (rc != W2L_OK) {
        init_count = 0;
        w2l__allocator_fix(0);
    }
    return rc;
}

void w2l_global_cleanup(void)
{
    if (init_count == 0 || --init_count > 0) return;
    w2l__builtins_unregister();
    w2l__vend_reset();
    w2l__http_global_cleanup();
    w2l__allocator_fix(0);
}

unsigned w2l_version_number(void) { return W2L_VERSION_NUMBER; }
const char *w2l_version_string(void) { return W2L_VERSION_STRING; }
