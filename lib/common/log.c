/*
 * Leveled logging. One formatted line per call, written whole (a single fputs under a lock
 * or one callback call), so lines of different threads never interleave.
 *
 * Two formats for the default sink (w2l_log_set_format): text, "TIME LEVEL message", and
 * JSON, one object per line: {"time","level","component","table","message"[,"fields"]
 * [,"truncated"]}. The component is the message's leading "word: " (or "word N: ", N going
 * to fields.instance) unless the caller names it; the table only ever comes from the caller
 * (w2l__log_ex / w2l__log_table), never from the free text. Strings are escaped so that
 * every line is valid JSON whatever the bytes: control characters as \n or \u00XX, bytes
 * that are not UTF-8 as \ufffd. Secrets are masked where a text enters a message (DDL by
 * w2l__ddl_redact, URIs by their owners), not here.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "common.h"
#include "thread.h"

static atomic_int cur_level = W2L_LOG_INFO;
static atomic_int cur_format = W2L_LOG_FORMAT_TEXT;
static w2l_log_fn cb_fn;
static void *cb_opaque;
static mtx_t log_mtx;
static once_flag log_once = ONCE_FLAG_INIT;

static void log_init(void) { mtx_init(&log_mtx, mtx_plain); }

/* The line a callback of this thread is being given, and what it is about: for
 * w2l_log_format_line() called from inside the callback. */
static _Thread_local struct {
    const char *line;
    const w2l__log_meta *meta;
    int truncated;
} in_callback;

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

void w2l_log_set_format(w2l_log_format format)
{
    if (format == W2L_LOG_FORMAT_TEXT || format == W2L_LOG_FORMAT_JSON)
        atomic_store(&cur_format, (int)format);
}

w2l_log_format w2l_log_get_format(void) { return (w2l_log_format)atomic_load(&cur_format); }

/* ---- the JSON object: a bounded writer that always leaves room to close the object ---- */

enum { JSON_RESERVE = 24 }; /* ,"truncated":true} and the NUL */

typedef struct jw {
    char *b;
    size_t lim, n; /* lim: the capacity minus JSON_RESERVE */
    int cut;       /* something did not fit */
} jw;

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (!len || len > n) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
    return len;
}

/* Appends raw text if all of it fits (need: bytes to keep free after it). */
static int jw_raw(jw *w, const char *s, size_t need)
{
    size_t len = strlen(s);
    if (w->n + len + need > w->lim) {
        w->cut = 1;
        return 0;
    }
    memcpy(w->b + w->n, s, len);
    w->n += len;
    return 1;
}

/* Appends s (len bytes) as a JSON string, as much of it as fits; the quotes always do. */
static void jw_str(jw *w, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    w->b[w->n++] = '"'; /* the caller checked room for both quotes */
    for (size_t i = 0; i < len;) {
        char esc[8];
        const char *out = esc;
        size_t olen, step = 1;
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, olen = 2;
        } else if (c < 0x20 || c == 0x7f) {
            const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (named) memcpy(esc, named, olen = 2);
            else olen = (size_t)snprintf(esc, sizeof esc, "\\u%04x", c);
        } else if ((step = utf8_len(p + i, len - i)) != 0) {
            out = s + i, olen = step;
        } else {
            memcpy(esc, "\\ufffd", olen = 6);
            step = 1;
        }
        if (w->n + olen + 1 > w->lim) {
            w->cut = 1;
            break;
        }
        memcpy(w->b + w->n, out, olen);
        w->n += olen;
        i += step;
    }
    w->b[w->n++] = '"';
}

/* ,"key":"value" when at least the key and a little of the value fit. */
static void jw_member_str(jw *w, const char *key, const char *v, size_t vlen)
{
    char k[48];
    snprintf(k, sizeof k, ",\"%s\":", key);
    if (!jw_raw(w, k, 8)) return;
    jw_str(w, v, vlen);
}

static void jw_member_null(jw *w, const char *key)
{
    char k[48];
    snprintf(k, sizeof k, ",\"%s\":null", key);
    jw_raw(w, k, 0);
}

/* The component prefix of a line: "word: " or "word N: " (word: [a-z][a-z0-9_-]*, at most
 * 32 bytes; N: 1 to 9 digits). Returns the length of the prefix, 0 when there is none. */
static size_t component_prefix(const char *line, size_t *wlen, long long *inst)
{
    size_t i = 0;
    if (!(line[0] >= 'a' && line[0] <= 'z')) return 0;
    while (i < 32 && ((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= '0' && line[i] <= '9') ||
                      line[i] == '_' || line[i] == '-'))
        i++;
    *wlen = i;
    *inst = -1;
    if (line[i] == ' ' && line[i + 1] >= '0' && line[i + 1] <= '9') {
        size_t j = i + 1;
        long long v = 0;
        while (j - i <= 9 && line[j] >= '0' && line[j] <= '9') v = v * 10 + (line[j++] - '0');
        if (line[j] != ':' || line[j + 1] != ' ') return 0;
        *inst = v;
        return j + 2;
    }
    if (line[i] != ':' || line[i + 1] != ' ') return 0;
    return i + 2;
}

size_t w2l__log_json(char *buf, size_t size, int64_t time_ms, w2l_log_level level,
                     const char *line, int truncated, const w2l__log_meta *meta)
{
    if (size < 256) {
        if (size) buf[0] = '\0';
        return 0;
    }
    if (!line) line = "";
    jw w = {buf, size - JSON_RESERVE, 0, 0};
    time_t secs = (time_t)(time_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    w.n = (size_t)snprintf(buf, w.lim,
                           "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\",\"level\":\"%s\"",
                           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                           tm.tm_sec, (int)(time_ms % 1000), w2l_log_level_name(level));
    /* component, and the message without its "component: " prefix */
    const char *msg = line;
    size_t wlen = 0;
    long long inst = -1;
    const char *comp = meta ? meta->component : NULL;
    size_t clen = comp ? strlen(comp) : 0;
    if (comp) {
        if (clen && strncmp(line, comp, clen) == 0 && line[clen] == ':' && line[clen + 1] == ' ')
            msg = line + clen + 2;
    } else {
        size_t pre = component_prefix(line, &wlen, &inst);
        if (pre) {
            comp = line;
            clen = wlen;
            msg = line + pre;
        }
    }
    if (comp) jw_member_str(&w, "component", comp, clen);
    else jw_member_null(&w, "component");
    if (meta && meta->table) {
        char t[400];
        int n = snprintf(t, sizeof t, "%s%s%s", meta->db ? meta->db : "", meta->db ? "." : "",
                         meta->table);
        jw_member_str(&w, "table", t, n < 0 ? 0 : (size_t)n < sizeof t ? (size_t)n : sizeof t - 1);
    } else {
        jw_member_null(&w, "table");
    }
    /* the fields before the message, so that a long message cuts itself, not them */
    size_t nf = meta ? meta->nfields : 0;
    if (nf || inst >= 0) {
        if (jw_raw(&w, ",\"fields\":{", 64)) {
            w.lim -= 1; /* room for the closing brace, whatever the fields take */
            const char *sep = "";
            if (inst >= 0) {
                char x[48];
                snprintf(x, sizeof x, "\"instance\":%lld", inst);
                if (jw_raw(&w, x, 64)) sep = ",";
            }
            for (size_t i = 0; i < nf; i++) {
                const w2l__log_field *f = &meta->fields[i];
                if (!f->key) continue;
                char k[80];
                snprintf(k, sizeof k, "%s\"%.60s\":", sep, f->key);
                if (f->str) {
                    if (!jw_raw(&w, k, 64)) break;
                    jw_str(&w, f->str, strlen(f->str) > 1024 ? 1024 : strlen(f->str));
                } else {
                    char v[160];
                    snprintf(v, sizeof v, "%s%lld", k, f->num);
                    if (!jw_raw(&w, v, 64)) break;
                }
                sep = ",";
            }
            w.lim += 1;
            jw_raw(&w, "}", 0);
        }
    }
    if (jw_raw(&w, ",\"message\":", 2)) jw_str(&w, msg, strlen(msg));
    /* the reserve: always room for these */
    const char *tail = truncated || w.cut ? ",\"truncated\":true}" : "}";
    size_t tl = strlen(tail);
    memcpy(buf + w.n, tail, tl + 1);
    return w.n + tl;
}

static size_t format_line(char *buf, size_t size, int64_t time_ms, w2l_log_level level,
                          const char *line, int truncated, const w2l__log_meta *meta)
{
    if (atomic_load(&cur_format) == W2L_LOG_FORMAT_JSON)
        return w2l__log_json(buf, size, time_ms, level, line, truncated, meta);
    if (!size) return 0;
    time_t secs = (time_t)(time_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %-5s %s", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(time_ms % 1000), w2l_log_level_name(level), line ? line : "");
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t w2l_log_format_line(char *buf, size_t size, w2l_log_level level, const char *line)
{
    const w2l__log_meta *meta = NULL;
    int truncated = 0;
    if (line && line == in_callback.line) {
        meta = in_callback.meta;
        truncated = in_callback.truncated;
    }
    return format_line(buf, size, now_ms(), level, line, truncated, meta);
}

int w2l__log_enabled(w2l_log_level level) { return (int)level <= atomic_load(&cur_level); }

static void vlog(w2l_log_level level, const w2l__log_meta *meta, const char *fmt, va_list ap)
{
    call_once(&log_once, log_init);
    char msg[1024];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    int truncated = n < 0 || (size_t)n >= sizeof msg;
    int64_t t = now_ms();
    mtx_lock(&log_mtx);
    if (cb_fn) {
        in_callback.line = msg;
        in_callback.meta = meta;
        in_callback.truncated = truncated;
        cb_fn(cb_opaque, level, msg);
        in_callback.line = NULL;
        in_callback.meta = NULL;
    } else {
        char line[8192]; /* the worst escaping of msg (6 bytes a byte) and the members */
        size_t len = format_line(line, sizeof line, t, level, msg, truncated, meta);
        line[len] = '\n';
        fwrite(line, 1, len + 1, stderr);
    }
    mtx_unlock(&log_mtx);
}

void w2l__log(w2l_log_level level, const char *fmt, ...)
{
    if (!w2l__log_enabled(level)) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, NULL, fmt, ap);
    va_end(ap);
}

void w2l__log_ex(w2l_log_level level, const w2l__log_meta *meta, const char *fmt, ...)
{
    if (!w2l__log_enabled(level)) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, meta, fmt, ap);
    va_end(ap);
}
