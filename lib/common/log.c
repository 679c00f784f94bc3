/*
 * Leveled logging. One formatted line per call, written whole (a single fputs under a lock
 * or one callback call), so lines of different threads never interleave.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common.h"
#include "thread.h"

static atomic_int cur_level = W2L_LOG_INFO;
static w2l_log_fn cb_fn;
static void *cb_opaque;
static mtx_t log_mtx;
static once_flag log_once = ONCE_FLAG_INIT;

static void log_init(void) { mtx_init(&log_mtx, mtx_plain); }

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void w2l_log_set_level(w2l_log_level level)
{
    if (level >= W2L_LOG_ERROR && level <= W2L_LOG_TRACE) atomic_store(&cur_level, (int)level);
}

w2l_log_level w2l_log_get_level(void) { return (w2l_log_level)atomic_load(&cur_level); }

void w2l_log_set_callback(w2l_log_fn fn, void *opaque)
{
    call_once(&log_once, log_init);
    mtx_lock(&log_mtx);
    cb_fn = fn;
    cb_opaque = opaque;
    mtx_unlock(&log_mtx);
}

int w2l_log_level_parse(const char *name, w2l_log_level *out)
{
    for (size_t i = 0; name && i < W2L_ARRAY_LEN(level_names); i++)
        if (strcmp(name, level_names[i]) == 0) {
            *out = (w2l_log_level)i;
            return 0;
        }
    return -1;
}

const char *w2l_log_level_name(w2l_log_level level)
{
    if ((unsigned)level < W2L_ARRAY_LEN(level_names)) return level_names[level];
    return "?";
}

int w2l__log_enabled(w2l_log_level level) { return (int)level <= atomic_load(&cur_level); }

void w2l__log(w2l_log_level level, const char *fmt, ...)
{
    if (!w2l__log_enabled(level)) return;
    call_once(&log_once, log_init);
    char line[1024];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000L, w2l_log_level_name(level));
    size_t head = n > 0 ? (size_t)n : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + head, sizeof line - head, fmt, ap);
    va_end(ap);
    mtx_lock(&log_mtx);
    if (cb_fn) {
        cb_fn(cb_opaque, level, line + head);
    } else {
        fputs(line, stderr);
        fputc('\n', stderr);
    }
    mtx_unlock(&log_mtx);
}
