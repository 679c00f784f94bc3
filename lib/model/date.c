/*
 * Civil dates and times: days since 1970-01-01 <-> proleptic Gregorian year/month/day,
 * microseconds <-> time of day, and the ISO 8601 text Iceberg uses for date, time,
 * timestamp and timestamptz values.
 *
 * Day numbers: the calendar repeats every 400 years (146097 days), so a date is split into
 * a 400-year era and a day within the era. Within an era, years are counted from March 1,
 * which puts the leap day at the end of the year and makes month lengths a linear formula
 * ((153 * month + 2) / 5 days before each month, March = 0). Works for any year, also
 * before 1970 and year 0 and below; floor division keeps negative days right.
 */
#include <stdio.h>

#include "model.h"

/* Days from 0000-03-01 to 1970-01-01. */
#define EPOCH_SHIFT INT64_C(719468)
#define DAYS_PER_ERA INT64_C(146097)

int64_t w2l__floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t w2l__floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

int w2l__is_leap_year(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

unsigned w2l__days_in_month(int64_t y, unsigned m)
{
    static const unsigned char len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12) return 0;
    return len[m - 1] + (m == 2 && w2l__is_leap_year(y));
}

int64_t w2l__days_from_civil(int64_t y, unsigned m, unsigned d)
{
    if (m <= 2) y--;                                  /* January, February: previous year */
    int64_t era = y >= 0 ? y / 400 : -((-(y + 1)) / 400) - 1; /* floor, by a constant */
    int64_t yoe = y - era * 400;                      /* 0..399 */
    int64_t mp = m > 2 ? (int64_t)m - 3 : (int64_t)m + 9; /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;   /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* 0..146096 */
    return era * DAYS_PER_ERA + doe - EPOCH_SHIFT;
}

void w2l__civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t z = days + EPOCH_SHIFT;
    int64_t era = w2l__floor_div(z, DAYS_PER_ERA);
    int64_t doe = z - era * DAYS_PER_ERA; /* 0..146096 */
    /* the year of era: remove the leap days before doe, then whole 365-day years */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* Copies tmp (n bytes) into buf as snprintf would and returns n. */
static size_t emit(const char *tmp, size_t n, char *buf, size_t size)
{
    if (size) {
        size_t c = n < size ? n : size - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

static int put_date(char *p, size_t cap, int64_t days)
{
    int64_t y;
    unsigned m, d;
    w2l__civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) return snprintf(p, cap, "%04lld-%02u-%02u", (long long)y, m, d);
    if (y > 9999) return snprintf(p, cap, "+%lld-%02u-%02u", (long long)y, m, d);
    return snprintf(p, cap, "-%04lld-%02u-%02u", -(long long)y, m, d);
}

static int put_time(char *p, size_t cap, int64_t micros)
{
    if (micros >= 0 && micros < W2L_MICROS_PER_DAY) {
        int64_t s = micros / 1000000;
        return snprintf(p, cap, "%02d:%02d:%02d.%06d", (int)(s / 3600), (int)(s / 60 % 60),
                        (int)(s % 60), (int)(micros % 1000000));
    }
    /* out of a day's range (not a valid time value): still print something faithful */
    uint64_t u = micros < 0 ? 0 - (uint64_t)micros : (uint64_t)micros;
    uint64_t s = u / 1000000;
    return snprintf(p, cap, "%s%02llu:%02u:%02u.%06u", micros < 0 ? "-" : "",
                    (unsigned long long)(s / 3600), (unsigned)(s / 60 % 60), (unsigned)(s % 60),
                    (unsigned)(u % 1000000));
}

size_t w2l__date_format(int64_t days, char *buf, size_t size)
{
    char tmp[64];
    int n = put_date(tmp, sizeof tmp, days);
    return emit(tmp, (size_t)n, buf, size);
}

size_t w2l__time_format(int64_t micros, char *buf, size_t size)
{
    char tmp[64];
    int n = put_time(tmp, sizeof tmp, micros);
    return emit(tmp, (size_t)n, buf, size);
}

size_t w2l__timestamp_format(int64_t micros, int utc, char *buf, size_t size)
{
    char tmp[96];
    int n = put_date(tmp, sizeof tmp, w2l__floor_div(micros, W2L_MICROS_PER_DAY));
    tmp[n++] = 'T';
    n += put_time(tmp + n, sizeof tmp - (size_t)n, w2l__floor_mod(micros, W2L_MICROS_PER_DAY));
    if (utc) {
        memcpy(tmp + n, "+00:00", 6);
        n += 6;
    }
    return emit(tmp, (size_t)n, buf, size);
}

/* ---- parsing: a cursor over len bytes that are not NUL-terminated ---- */

typedef struct cur {
    const char *s;
    size_t len, i;
    const char *why; /* reason of the first failure */
} cur;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int fail_at(cur *c, const char *why)
{
    if (!c->why) c->why = why;
    return -1;
}

/* Exactly n digits. */
static int digits_n(cur *c, int n, int64_t *out)
{
    int64_t v = 0;
    for (int k = 0; k < n; k++) {
        if (c->i >= c->len || !is_digit(c->s[c->i])) return -1;
        v = v * 10 + (c->s[c->i++] - '0');
    }
    *out = v;
    return 0;
}

static int lit(cur *c, char ch)
{
    if (c->i < c->len && c->s[c->i] == ch) {
        c->i++;
        return 0;
    }
    return -1;
}

static int date_at(cur *c, int64_t *days)
{
    int neg = 0, sign = 0;
    if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-')) {
        neg = c->s[c->i] == '-';
        sign = 1;
        c->i++;
    }
    size_t start = c->i;
    int64_t y = 0;
    while (c->i < c->len && is_digit(c->s[c->i])) {
        if (c->i - start >= 9) return fail_at(c, "year out of range");
        y = y * 10 + (c->s[c->i++] - '0');
    }
    size_t ny = c->i - start;
    if (ny < 4 || (ny > 4 && !sign)) return fail_at(c, "expected a 4-digit year");
    if (neg) y = -y;
    int64_t m, d;
    if (lit(c, '-') || digits_n(c, 2, &m) || lit(c, '-') || digits_n(c, 2, &d))
        return fail_at(c, "expected YYYY-MM-DD");
    if (m < 1 || m > 12) return fail_at(c, "month out of range");
    if (d < 1 || d > (int64_t)w2l__days_in_month(y, (unsigned)m))
        return fail_at(c, "day out of range for the month");
    *days = w2l__days_from_civil(y, (unsigned)m, (unsigned)d);
    return 0;
}

static int time_at(cur *c, int64_t *micros)
{
    int64_t h, m, s = 0, f = 0;
    if (digits_n(c, 2, &h) || lit(c, ':') || digits_n(c, 2, &m))
        return fail_at(c, "expected HH:MM:SS");
    if (!lit(c, ':')) {
        if (digits_n(c, 2, &s)) return fail_at(c, "expected HH:MM:SS");
        if (!lit(c, '.')) {
            int nf = 0;
            while (c->i < c->len && is_digit(c->s[c->i])) {
                char ch = c->s[c->i++];
                if (nf < 6) f = f * 10 + (ch - '0');
                else if (ch != '0') return fail_at(c, "more than 6 fraction digits (would round)");
                nf++;
            }
            if (nf == 0) return fail_at(c, "expected fraction digits");
            for (; nf < 6; nf++) f *= 10;
        }
    }
    if (h > 23 || m > 59 || s > 59) return fail_at(c, "time of day out of range");
    *micros = ((h * 60 + m) * 60 + s) * 1000000 + f;
    return 0;
}

static w2l_rc bad(w2l_error *err, const char *type, const char *text, size_t len, const char *why)
{
    int shown = len > 64 ? 64 : (int)len;
    return w2l__fail(err, W2L_CORRUPT, "invalid %s value '%.*s%s': %s", type, shown, text,
                     len > 64 ? "..." : "", why ? why : "unexpected text");
}

/* ---- fast paths: the layouts producers write, read a word at a time ----
 *
 * A word of 8 text bytes (w2l__load_le64: the first byte lowest) is checked against its
 * layout at once: xor the layout ('0' at the digits, the separators) leaves 0 at the
 * separators and 0..9 at the digits (high nibble 0, and adding 6 leaves it 0). Then
 * t = d * 10 + (d >> 8) puts the value of the digit pair starting at byte i into byte i
 * (at most 99, so no byte carries into the next). Anything else returns -1: the general
 * parser takes the text, and words the error. */

#ifdef W2L_TESTING
/* For tests: set, every text takes the general parser, which the fast paths must match;
 * taken counts the texts the fast paths converted. */
int w2l__date_fast_off;
long w2l__date_fast_taken;
#define FAST_OFF w2l__date_fast_off
#define FAST_TAKEN() (void)w2l__date_fast_taken++
#else
#define FAST_OFF 0
#define FAST_TAKEN() (void)0
#endif

#define ASCII_ZEROS UINT64_C(0x3030303030303030)

/* The pair values of word x of layout lay (whose separator bytes sepm marks), or ~0 when
 * x does not have that layout. */
static inline uint64_t layout_pairs(uint64_t x, uint64_t lay, uint64_t sepm)
{
    uint64_t d = x ^ lay;
    if ((d & sepm) | ((d | (d + UINT64_C(0x0606060606060606))) & UINT64_C(0xF0F0F0F0F0F0F0F0)))
        return ~UINT64_C(0);
    return d * 10 + (d >> 8);
}

/* "YYYY-MM-DD" at s (10 bytes) as days since 1970-01-01; -1 for any other text or an
 * invalid date. Years 1901..2099 without divisions: a leap year is every fourth there
 * (2000 included), and (y - 1) / 4 - 492 counts the leap years from 1970 to y. */
static inline int ymd_fast(const char *s, int64_t *days)
{
    static const uint16_t before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    static const unsigned char mlen[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    /* "YYYY-MM-": digits at bytes 0-3 and 5-6, '-' at 4 and 7 */
    uint64_t t = layout_pairs(w2l__load_le64(s), UINT64_C(0x2D30302D30303030),
                              UINT64_C(0xFF0000FF00000000));
    unsigned d8 = (unsigned)((unsigned char)s[8] - '0'), d9 = (unsigned)((unsigned char)s[9] - '0');
    if (t == ~UINT64_C(0) || d8 > 9 || d9 > 9) return -1;
    unsigned y = (unsigned)(t & 0xff) * 100 + (unsigned)(t >> 16 & 0xff),
             m = (unsigned)(t >> 40 & 0xff), d = d8 * 10 + d9;
    if (m - 1 > 11 || d < 1) return -1;
    if (y - 1901 <= 2099 - 1901) {
        unsigned leap = (y & 3) == 0;
        if (d > mlen[m - 1] + (unsigned)(m == 2 && leap)) return -1;
        *days = (int64_t)(365 * y + (y - 1) / 4 + before[m - 1] + (m > 2 && leap) + d) -
                (365 * 1970 + 492 + 1);
        return 0;
    }
    if (d > w2l__days_in_month(y, m)) return -1;
    *days = w2l__days_from_civil(y, m, d);
    return 0;
}

/* "HH:MM:SS" at s (8 bytes) as microseconds of the day; -1 for any other text. */
static int hms_fast(const char *s, int64_t *micros)
{
    /* digits at bytes 0-1, 3-4 and 6-7, ':' at 2 and 5 */
    uint64_t t = layout_pairs(w2l__load_le64(s), UINT64_C(0x30303A30303A3030),
                              UINT64_C(0x0000FF0000FF0000));
    if (t == ~UINT64_C(0)) return -1;
    int64_t h = (int64_t)(t & 0xff), mi = (int64_t)(t >> 24 & 0xff),
            sec = (int64_t)(t >> 48 & 0xff);
    if (h > 23 || mi > 59 || sec > 59) return -1;
    *micros = ((h * 60 + mi) * 60 + sec) * 1000000;
    return 0;
}

/* "YYYY-MM-DD HH:MM:SS[.f{1,6}]" (or 'T' / 't'), the layout producers write: converted
 * without the general parser (which takes signs, long years, zones, "HH:MM"). 0 on
 * success; -1 for any other text or a field out of range (the general parser decides and
 * names why). */
static int timestamp_fast(const char *s, size_t len, int64_t *micros)
{
    static const int32_t scale[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    if (len != 19 && (len < 21 || len > 26 || s[19] != '.')) return -1;
    unsigned char sep = (unsigned char)s[10];
    int64_t days, tod, f = 0;
    if ((sep != ' ' && (sep | 0x20) != 't') || ymd_fast(s, &days) || hms_fast(s + 11, &tod))
        return -1;
    if (len > 19) {
        /* the k fraction digits are the last bytes of the word that ends with the text;
         * the bytes before them become '0' */
        size_t k = len - 20;
        uint64_t before = (UINT64_C(1) << (8 * (8 - k))) - 1;
        uint32_t v;
        if (!w2l__eight_digits_word(
                (w2l__load_le64(s + len - 8) & ~before) | (ASCII_ZEROS & before), &v))
            return -1;
        f = (int64_t)v * scale[k];
    }
    *micros = days * W2L_MICROS_PER_DAY + tod + f;
    return 0;
}

/* The general parsers below are functions of their own (not inlined): their frames and
 * register saves would otherwise be paid by every text the fast paths take. */
__attribute__((noinline)) static w2l_rc date_general(const char *text, size_t len, int32_t *days,
                                                     w2l_error *err)
{
    int64_t d;
    cur c = {text, len, 0, NULL};
    if (date_at(&c, &d) || c.i != len) return bad(err, "date", text, len, c.why);
    if (d < INT32_MIN || d > INT32_MAX) return bad(err, "date", text, len, "out of range");
    *days = (int32_t)d;
    return W2L_OK;
}

w2l_rc w2l__date_parse(const char *text, size_t len, int32_t *days, w2l_error *err)
{
    int64_t d;
    if (len == 10 && !FAST_OFF && ymd_fast(text, &d) == 0) {
        FAST_TAKEN();
        *days = (int32_t)d;
        return W2L_OK;
    }
    return date_general(text, len, days, err);
}

w2l_rc w2l__time_parse(const char *text, size_t len, int64_t *micros, w2l_error *err)
{
    cur c = {text, len, 0, NULL};
    if (time_at(&c, micros) || c.i != len) return bad(err, "time", text, len, c.why);
    return W2L_OK;
}

__attribute__((noinline)) static w2l_rc timestamp_general(const char *text, size_t len, int utc,
                                                          int64_t *micros, w2l_error *err)
{
    const char *type = utc ? "timestamptz" : "timestamp";
    cur c = {text, len, 0, NULL};
    int64_t days, tod = 0, off = 0;
    if (date_at(&c, &days)) return bad(err, type, text, len, c.why);
    if (c.i < len && (text[c.i] == 'T' || text[c.i] == 't' || text[c.i] == ' ')) {
        c.i++;
        if (time_at(&c, &tod)) return bad(err, type, text, len, c.why);
    }
    if (c.i < len) {
        char z = text[c.i];
        if (z != 'Z' && z != 'z' && z != '+' && z != '-')
            return bad(err, type, text, len, "unexpected text after the time");
        if (!utc) return bad(err, type, text, len, "a zone offset needs timestamptz");
        c.i++;
        if (z == '+' || z == '-') {
            int64_t oh, om = 0;
            if (digits_n(&c, 2, &oh)) return bad(err, type, text, len, "bad zone offset");
            if (c.i < len) {
                lit(&c, ':');
                if (digits_n(&c, 2, &om)) return bad(err, type, text, len, "bad zone offset");
            }
            if (oh > 18 || om > 59 || (oh == 18 && om > 0))
                return bad(err, type, text, len, "zone offset out of range");
            off = (oh * 60 + om) * 60 * 1000000;
            if (z == '-') off = -off;
        }
        if (c.i != len) return bad(err, type, text, len, "unexpected text after the zone");
    }
    /* micros = days * MPD + tod - off without overflowing; for negative days go through
     * days + 1 so that the very first day of the int64 range still fits */
    const int64_t lo_day = INT64_MIN / W2L_MICROS_PER_DAY - 1,
                  hi_day = INT64_MAX / W2L_MICROS_PER_DAY;
    if (days < lo_day || days > hi_day) return bad(err, type, text, len, "out of range");
    int64_t base, delta = tod - off;
    if (days < 0) {
        base = (days + 1) * W2L_MICROS_PER_DAY;
        delta -= W2L_MICROS_PER_DAY;
    } else {
        base = days * W2L_MICROS_PER_DAY;
    }
    if ((delta > 0 && base > INT64_MAX - delta) || (delta < 0 && base < INT64_MIN - delta))
        return bad(err, type, text, len, "out of range");
    *micros = base + delta;
    return W2L_OK;
}

w2l_rc w2l__timestamp_parse(const char *text, size_t len, int utc, int64_t *micros,
                            w2l_error *err)
{
    if (!FAST_OFF && timestamp_fast(text, len, micros) == 0) {
        FAST_TAKEN();
        return W2L_OK;
    }
    return timestamp_general(text, len, utc, micros, err);
}
