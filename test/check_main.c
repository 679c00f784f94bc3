/*
 * The one Check runner: every suite of test/check_*.c (listed in the generated suites.h).
 * CK_RUN_SUITE / CK_RUN_CASE select, as Check documents; CK_FORK stays on so a crash fails
 * one test, not the run.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "suites.h"
#include "w2l.h"

int main(void)
{
    w2l_error err;
    if (w2l_global_init(&err) != W2L_OK) {
        fprintf(stderr, "w2l_global_init: %s\n", err.msg);
        return 1;
    }
    w2l_log_set_level(W2L_LOG_WARN);
    SRunner *sr = NULL;
#define X(name)                                        \
    if (!sr) sr = srunner_create(suite_##name());      \
    else srunner_add_suite(sr, suite_##name());
    W2L_SUITES
#undef X
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    w2l_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
