/*
 * The one place that includes C11 <threads.h> (thrd_t, mtx_t, cnd_t; glibc >= 2.28).
 */
#ifndef W2L_THREAD_H
#define W2L_THREAD_H

#include <threads.h>
#include <stdint.h>

/* Absolute CLOCK_REALTIME deadline timeout_ms from now, for cnd_timedwait. */
struct timespec w2l__deadline_ms(int64_t timeout_ms);

#endif
