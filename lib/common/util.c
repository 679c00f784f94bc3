/*
 * Clocks, deadlines and a fast 64-bit hash (a 64-bit variant of the FNV-1a/xorshift-multiply
 * family, processing 8 bytes per step; good enough for routing tables and keys to threads).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "thread.h"

int64_t w2l__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *w2l__format_utc_ms(int64_t ms, char *buf, size_t size)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) memset(&tm, 0, sizeof tm);
    snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
}

int64_t w2l__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t w2l__coarse_ms(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec w2l__deadline_ms(int64_t timeout_ms)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    ts.tv_sec += (time_t)(timeout_ms / 1000);
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

uint64_t w2l__hash64(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, s, 8);
        h = w2l__mix64(h ^ k) * 0x9e3779b97f4a7c15ULL;
        s += 8;
        n -= 8;
    }
    uint64_t k = 0;
    memcpy(&k, s, n);
    return w2l__mix64(h ^ k ^ ((uint64_t)n << 56));
}

size_t w2l__fmt_int64(char *buf, int64_t v)
{
    static const char pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char tmp[20], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    for (; u >= 100; u /= 100) { /* two digits a step, from the last */
        p -= 2;
        memcpy(p, pairs + 2 * (u % 100), 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    size_t len = 0, nd = (size_t)(tmp + sizeof tmp - p);
    if (v < 0) buf[len++] = '-';
    memcpy(buf + len, p, nd);
    buf[len + nd] = '\0';
    return len + nd;
}
