/*
 * Decimals: the unscaled value of an Iceberg decimal(P,S) as a 128-bit two's-complement
 * integer (w2l_int128, two 64-bit halves, so no compiler extension is needed), its exact
 * text, and the byte forms Iceberg and Parquet store.
 *
 * Byte forms: Iceberg's single-value serialization (bounds in manifests) is the unscaled
 * value as big-endian two's complement in the fewest bytes that keep the sign; Parquet's
 * FIXED_LEN_BYTE_ARRAY decimals use a fixed width chosen from the precision. Example:
 * -1 -> ff (1 byte), 128 -> 00 80 (2 bytes), 12345 with n = 5 -> 00 00 00 30 39.
 */
#include "model.h"

/* Unsigned 128-bit magnitude; the helpers below work on these and add the sign last. */
typedef struct u128 {
    uint64_t hi, lo;
} u128;

static const u128 pow10_tab[39] = {
    {UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000001)}, /* 1e0 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x000000000000000a)}, /* 1e1 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000064)}, /* 1e2 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00000000000003e8)}, /* 1e3 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x0000000000002710)}, /* 1e4 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00000000000186a0)}, /* 1e5 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00000000000f4240)}, /* 1e6 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x0000000000989680)}, /* 1e7 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x0000000005f5e100)}, /* 1e8 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x000000003b9aca00)}, /* 1e9 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00000002540be400)}, /* 1e10 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x000000174876e800)}, /* 1e11 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x000000e8d4a51000)}, /* 1e12 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x000009184e72a000)}, /* 1e13 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00005af3107a4000)}, /* 1e14 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x00038d7ea4c68000)}, /* 1e15 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x002386f26fc10000)}, /* 1e16 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x016345785d8a0000)}, /* 1e17 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x0de0b6b3a7640000)}, /* 1e18 */
    {UINT64_C(0x0000000000000000), UINT64_C(0x8ac7230489e80000)}, /* 1e19 */
    {UINT64_C(0x0000000000000005), UINT64_C(0x6bc75e2d63100000)}, /* 1e20 */
    {UINT64_C(0x0000000000000036), UINT64_C(0x35c9adc5dea00000)}, /* 1e21 */
    {UINT64_C(0x000000000000021e), UINT64_C(0x19e0c9bab2400000)}, /* 1e22 */
    {UINT64_C(0x000000000000152d), UINT64_C(0x02c7e14af6800000)}, /* 1e23 */
    {UINT64_C(0x000000000000d3c2), UINT64_C(0x1bcecceda1000000)}, /* 1e24 */
    {UINT64_C(0x0000000000084595), UINT64_C(0x161401484a000000)}, /* 1e25 */
    {UINT64_C(0x000000000052b7d2), UINT64_C(0xdcc80cd2e4000000)}, /* 1e26 */
    {UINT64_C(0x00000000033b2e3c), UINT64_C(0x9fd0803ce8000000)}, /* 1e27 */
    {UINT64_C(0x00000000204fce5e), UINT64_C(0x3e25026110000000)}, /* 1e28 */
    {UINT64_C(0x00000001431e0fae), UINT64_C(0x6d7217caa0000000)}, /* 1e29 */
    {UINT64_C(0x0000000c9f2c9cd0), UINT64_C(0x4674edea40000000)}, /* 1e30 */
    {UINT64_C(0x0000007e37be2022), UINT64_C(0xc0914b2680000000)}, /* 1e31 */
    {UINT64_C(0x000004ee2d6d415b), UINT64_C(0x85acef8100000000)}, /* 1e32 */
    {UINT64_C(0x0000314dc6448d93), UINT64_C(0x38c15b0a00000000)}, /* 1e33 */
    {UINT64_C(0x0001ed09bead87c0), UINT64_C(0x378d8e6400000000)}, /* 1e34 */
    {UINT64_C(0x0013426172c74d82), UINT64_C(0x2b878fe800000000)}, /* 1e35 */
    {UINT64_C(0x00c097ce7bc90715), UINT64_C(0xb34b9f1000000000)}, /* 1e36 */
    {UINT64_C(0x0785ee10d5da46d9), UINT64_C(0x00f436a000000000)}, /* 1e37 */
    {UINT64_C(0x4b3b4ca85a86c47a), UINT64_C(0x098a224000000000)}, /* 1e38 */
};

static u128 to_u(w2l_int128 v) { return (u128){(uint64_t)v.hi, v.lo}; }
static w2l_int128 from_u(u128 u)
{
    w2l_int128 v;
    v.lo = u.lo;
    /* implementation-defined in C for values >= 2^63, but two's complement everywhere we
     * build; memcpy keeps it well-defined */
    memcpy(&v.hi, &u.hi, sizeof v.hi);
    return v;
}

static int ucmp(u128 a, u128 b)
{
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}

static u128 uadd(u128 a, u128 b)
{
    u128 r = {a.hi + b.hi, a.lo + b.lo};
    if (r.lo < a.lo) r.hi++;
    return r;
}

static u128 usub(u128 a, u128 b)
{
    u128 r = {a.hi - b.hi, a.lo - b.lo};
    if (a.lo < b.lo) r.hi--;
    return r;
}

static u128 uneg(u128 a) { return usub((u128){0, 0}, a); }

/* Full 64 x 64 -> 128 product from 32-bit halves. */
static u128 mul64(uint64_t a, uint64_t b)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    return (u128){p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32),
                  (p00 & 0xffffffffu) | (mid << 32)};
}

/* a * b; -1 when the product needs more than 128 bits. */
static int umul(u128 a, u128 b, u128 *out)
{
    if (a.hi && b.hi) return -1;
    u128 r = mul64(a.lo, b.lo);
    u128 c1 = mul64(a.hi, b.lo), c2 = mul64(a.lo, b.hi);
    if (c1.hi || c2.hi) return -1;
    uint64_t cross = c1.lo + c2.lo;
    if (cross < c1.lo) return -1;
    r.hi += cross;
    if (r.hi < cross) return -1;
    *out = r;
    return 0;
}

static u128 umul_small(u128 a, uint32_t m)
{
    u128 lo = mul64(a.lo, m);
    return (u128){a.hi * m + lo.hi, lo.lo};
}

/* a /= d, returning the remainder: schoolbook division over 32-bit limbs. */
static uint32_t udivmod_small(u128 *a, uint32_t d)
{
    uint32_t limb[4] = {(uint32_t)(a->hi >> 32), (uint32_t)a->hi, (uint32_t)(a->lo >> 32),
                        (uint32_t)a->lo};
    uint64_t rem = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t cur = (rem << 32) | limb[i];
        limb[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    a->hi = ((uint64_t)limb[0] << 32) | limb[1];
    a->lo = ((uint64_t)limb[2] << 32) | limb[3];
    return (uint32_t)rem;
}

static int uis_zero(u128 a) { return !a.hi && !a.lo; }

/* |v| as an unsigned magnitude (the minimum value gives 2^127, which is exact). */
static u128 umag(w2l_int128 v) { return v.hi < 0 ? uneg(to_u(v)) : to_u(v); }

/* The signed value of sign and magnitude m; -1 when it does not fit. */
static int from_mag(int neg, u128 m, w2l_int128 *out)
{
    const u128 lim = {UINT64_C(0x8000000000000000), 0};
    int c = ucmp(m, lim);
    if (c > 0 || (c == 0 && !neg)) return -1;
    *out = from_u(neg ? uneg(m) : m);
    return 0;
}

w2l_int128 w2l__i128_from_i64(int64_t v)
{
    w2l_int128 r;
    r.hi = v < 0 ? -1 : 0;
    r.lo = (uint64_t)v;
    return r;
}

int w2l__i128_to_i64(w2l_int128 v, int64_t *out)
{
    int64_t lo;
    memcpy(&lo, &v.lo, sizeof lo);
    if (v.hi != (lo < 0 ? -1 : 0)) return -1;
    *out = lo;
    return 0;
}

int w2l__i128_is_neg(w2l_int128 v) { return v.hi < 0; }
int w2l__i128_is_zero(w2l_int128 v) { return v.hi == 0 && v.lo == 0; }

int w2l__i128_cmp(w2l_int128 a, w2l_int128 b)
{
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}

w2l_int128 w2l__i128_neg(w2l_int128 v) { return from_u(uneg(to_u(v))); }

int w2l__i128_add(w2l_int128 a, w2l_int128 b, w2l_int128 *out)
{
    w2l_int128 r = from_u(uadd(to_u(a), to_u(b)));
    if ((a.hi < 0) == (b.hi < 0) && (r.hi < 0) != (a.hi < 0)) return -1;
    *out = r;
    return 0;
}

int w2l__i128_sub(w2l_int128 a, w2l_int128 b, w2l_int128 *out)
{
    w2l_int128 r = from_u(usub(to_u(a), to_u(b)));
    if ((a.hi < 0) != (b.hi < 0) && (r.hi < 0) != (a.hi < 0)) return -1;
    *out = r;
    return 0;
}

int w2l__i128_mul(w2l_int128 a, w2l_int128 b, w2l_int128 *out)
{
    u128 m;
    if (umul(umag(a), umag(b), &m) != 0) return -1;
    return from_mag((a.hi < 0) != (b.hi < 0) && !uis_zero(m), m, out);
}

int w2l__i128_pow10(unsigned n, w2l_int128 *out)
{
    if (n > W2L_DECIMAL_MAX_PRECISION) return -1;
    *out = from_u(pow10_tab[n]);
    return 0;
}

static unsigned udigits(u128 m)
{
    unsigned d = 1;
    while (d < 39 && ucmp(m, pow10_tab[d]) >= 0) d++;
    return d;
}

unsigned w2l__i128_digits(w2l_int128 v) { return udigits(umag(v)); }

int w2l__decimal_fits(w2l_int128 v, unsigned precision)
{
    if (precision > W2L_DECIMAL_MAX_PRECISION) precision = W2L_DECIMAL_MAX_PRECISION;
    return ucmp(umag(v), pow10_tab[precision]) < 0;
}

int w2l__decimal_rescale(w2l_int128 v, unsigned from_scale, unsigned to_scale, w2l_int128 *out)
{
    int neg = v.hi < 0;
    u128 m = umag(v);
    if (to_scale >= from_scale) {
        unsigned k = to_scale - from_scale;
        if (k > W2L_DECIMAL_MAX_PRECISION) return uis_zero(m) ? (*out = v, 0) : -1;
        if (umul(m, pow10_tab[k], &m) != 0 || ucmp(m, pow10_tab[38]) >= 0) return -1;
    } else {
        for (unsigned k = from_scale - to_scale; k > 0 && !uis_zero(m);) {
            unsigned step = k > 9 ? 9 : k;
            if (udivmod_small(&m, (uint32_t)pow10_tab[step].lo) != 0) return -1;
            k -= step;
        }
    }
    return from_mag(neg, m, out);
}

size_t w2l__decimal_format(w2l_int128 v, unsigned scale, char *buf, size_t size)
{
    char digits[48];
    size_t nd = 0;
    u128 m = umag(v);
    /* digits in reverse, nine at a time */
    do {
        uint32_t chunk = udivmod_small(&m, 1000000000u);
        for (int i = 0; i < 9; i++) {
            digits[nd++] = (char)('0' + chunk % 10);
            chunk /= 10;
        }
    } while (!uis_zero(m));
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    if (scale > W2L_DECIMAL_MAX_PRECISION) scale = W2L_DECIMAL_MAX_PRECISION;
    while (nd < (size_t)scale + 1) digits[nd++] = '0';

    char tmp[48];
    size_t n = 0;
    if (v.hi < 0) tmp[n++] = '-';
    for (size_t i = nd; i-- > 0;) {
        tmp[n++] = digits[i];
        if (i == scale && scale > 0) tmp[n++] = '.';
    }
    if (size) {
        size_t c = n < size ? n : size - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

static w2l_rc bad_decimal(w2l_error *err, unsigned p, unsigned s, const char *text, size_t len,
                          const char *why)
{
    int shown = len > 64 ? 64 : (int)len;
    return w2l__fail(err, W2L_CORRUPT, "invalid decimal(%u,%u) value '%.*s%s': %s", p, s, shown,
                     text, len > 64 ? "..." : "", why);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A decimal number's text: [+-] digits [. digits] [(e|E) [+-] digits]. */
typedef struct numtext {
    int neg;
    size_t int_start, nint, frac_start, nfrac;
    int64_t exp; /* capped at +-10^9: beyond any precision */
} numtext;

/* NULL when text is a number, else why not. */
static const char *scan_number(const char *text, size_t len, numtext *nt)
{
    size_t i = 0;
    nt->neg = 0;
    if (i < len && (text[i] == '+' || text[i] == '-')) nt->neg = text[i++] == '-';
    nt->int_start = i;
    while (i < len && is_digit(text[i])) i++;
    nt->nint = i - nt->int_start;
    nt->frac_start = i;
    nt->nfrac = 0;
    if (i < len && text[i] == '.') {
        nt->frac_start = ++i;
        while (i < len && is_digit(text[i])) i++;
        nt->nfrac = i - nt->frac_start;
    }
    if (nt->nint + nt->nfrac == 0) return "not a number";
    nt->exp = 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (text[i] == '+' || text[i] == '-')) eneg = text[i++] == '-';
        if (i >= len || !is_digit(text[i])) return "bad exponent";
        while (i < len && is_digit(text[i])) {
            if (nt->exp < 1000000000) nt->exp = nt->exp * 10 + (text[i] - '0');
            i++;
        }
        if (eneg) nt->exp = -nt->exp;
    }
    return i == len ? NULL : "not a number";
}

#ifdef W2L_TESTING
/* For tests: set, every text takes the general path, which parse_plain must match; taken
 * counts the texts parse_plain converted. */
int w2l__decimal_fast_off;
long w2l__decimal_fast_taken;
#define FAST_OFF w2l__decimal_fast_off
#define FAST_TAKEN() (void)w2l__decimal_fast_taken++
#else
#define FAST_OFF 0
#define FAST_TAKEN() (void)0
#endif

/* The common text, "-?[0-9]+(.[0-9]+)?" of at most 18 digits with no more fraction digits
 * than the scale, within the precision: 0, or -1 for any other text (the general path
 * decides, and words the error). The digits read straight into a 64-bit magnitude (18
 * digits stay below 10^18); the precision check is one comparison, as a value has more
 * than r significant digits exactly when it is at least 10^r. */
static int parse_plain(const char *text, size_t len, unsigned precision, unsigned scale,
                       w2l_int128 *out)
{
    size_t i = len && text[0] == '-', b = i, nfrac = 0;
    int neg = (int)i;
    uint64_t m = 0;
    unsigned dg;
    while (i < len && (dg = (unsigned)((unsigned char)text[i] - '0')) <= 9) m = m * 10 + dg, i++;
    size_t nint = i - b; /* m wraps beyond 19 digits: then unused */
    if (i < len) {
        if (text[i] != '.' || !nint) return -1;
        size_t f = ++i;
        while (i < len && (dg = (unsigned)((unsigned char)text[i] - '0')) <= 9)
            m = m * 10 + dg, i++;
        nfrac = i - f;
        if (i != len || !nfrac) return -1;
    }
    if (!nint || nint + nfrac > 18 || nfrac > scale) return -1;
    unsigned shift = scale - (unsigned)nfrac, room = precision - shift; /* digits m may have */
    if (room < 19 && m >= pow10_tab[room].lo) return -1;
    u128 v = {0, m};
    if (shift) {
        if (precision <= 19) v.lo = m * pow10_tab[shift].lo; /* below 10^19 < 2^64 */
        else (void)umul(v, pow10_tab[shift], &v);          /* at most 38 digits */
    }
    if (v.hi) {
        (void)from_mag(neg, v, out);
        return 0;
    }
    out->lo = neg ? 0 - v.lo : v.lo;
    out->hi = neg && v.lo ? -1 : 0;
    return 0;
}

w2l_rc w2l__decimal_parse(const char *text, size_t len, unsigned precision, unsigned scale,
                          w2l_int128 *out, w2l_error *err)
{
    if (precision < 1 || precision > W2L_DECIMAL_MAX_PRECISION || scale > precision)
        return w2l__fail(err, W2L_MISUSE, "decimal(%u,%u) is not a valid type", precision, scale);
    if (!FAST_OFF && parse_plain(text, len, precision, scale, out) == 0) {
        FAST_TAKEN();
        return W2L_OK;
    }
    numtext nt;
    const char *why = scan_number(text, len, &nt);
    if (why) return bad_decimal(err, precision, scale, text, len, why);
    int neg = nt.neg;
    size_t int_start = nt.int_start, frac_start = nt.frac_start, nint = nt.nint, nfrac = nt.nfrac;
    int64_t exp = nt.exp;

    /* unscaled = D * 10^shift, where D is the digit string without the point */
    int64_t ndig = (int64_t)(nint + nfrac);
    int64_t shift = (int64_t)scale + exp - (int64_t)nfrac;
    int64_t keep = shift < 0 ? ndig + shift : ndig;
    u128 m = {0, 0};
    unsigned sig = 0;
    for (int64_t k = 0; k < ndig; k++) {
        char c = k < (int64_t)nint ? text[int_start + (size_t)k]
                                   : text[frac_start + (size_t)(k - (int64_t)nint)];
        if (k >= keep) {
            if (c != '0')
                return bad_decimal(err, precision, scale, text, len,
                                   "more fraction digits than the scale (would round)");
            continue;
        }
        if (sig == 0 && c == '0') continue;
        if (++sig > precision)
            return bad_decimal(err, precision, scale, text, len, "more digits than the precision");
        m = uadd(umul_small(m, 10), (u128){0, (uint64_t)(c - '0')});
    }
    if (shift > 0 && !uis_zero(m)) {
        if ((int64_t)sig + shift > (int64_t)precision)
            return bad_decimal(err, precision, scale, text, len, "more digits than the precision");
        (void)umul(m, pow10_tab[shift], &m); /* cannot overflow: at most 38 digits */
    }
    (void)from_mag(neg && !uis_zero(m), m, out); /* fits: fewer than 39 digits */
    return W2L_OK;
}

static void to_be16(w2l_int128 v, unsigned char b[16])
{
    uint64_t hi = (uint64_t)v.hi;
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(hi >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(v.lo >> (56 - 8 * i));
    }
}

size_t w2l__decimal_to_be_min(w2l_int128 v, unsigned char out[16])
{
    unsigned char b[16];
    to_be16(v, b);
    size_t skip = 0;
    while (skip < 15 && ((b[skip] == 0x00 && !(b[skip + 1] & 0x80)) ||
                         (b[skip] == 0xff && (b[skip + 1] & 0x80))))
        skip++;
    memcpy(out, b + skip, 16 - skip);
    return 16 - skip;
}

int w2l__decimal_to_be_fixed(w2l_int128 v, unsigned char *out, size_t n)
{
    if (n < 1 || n > 16) return -1;
    unsigned char b[16];
    size_t need = w2l__decimal_to_be_min(v, b);
    if (need > n) return -1;
    memset(out, v.hi < 0 ? 0xff : 0x00, n - need);
    memcpy(out + (n - need), b, need);
    return 0;
}

int w2l__decimal_from_be(const unsigned char *p, size_t n, w2l_int128 *out)
{
    if (n < 1 || n > 16) return -1;
    unsigned char b[16];
    memset(b, (p[0] & 0x80) ? 0xff : 0x00, 16 - n);
    memcpy(b + (16 - n), p, n);
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | b[i];
        lo = lo << 8 | b[8 + i];
    }
    *out = from_u((u128){hi, lo});
    return 0;
}

size_t w2l__decimal_fixed_len(unsigned precision)
{
    if (precision < 1) precision = 1;
    if (precision > W2L_DECIMAL_MAX_PRECISION) precision = W2L_DECIMAL_MAX_PRECISION;
    unsigned char b[16];
    return w2l__decimal_to_be_min(from_u(usub(pow10_tab[precision], (u128){0, 1})), b);
}

/* ---- decimal text beyond 38 digits (MySQL DECIMAL(65,30), Kafka Connect decimals) ---- */

static w2l_rc bad_text(w2l_error *err, unsigned p, int s, const char *text, size_t len,
                       const char *why)
{
    if (p && s >= 0) return bad_decimal(err, p, (unsigned)s, text, len, why);
    int shown = len > 64 ? 64 : (int)len;
    return w2l__fail(err, W2L_CORRUPT, "invalid decimal value '%.*s%s': %s", shown, text,
                     len > 64 ? "..." : "", why);
}

w2l_rc w2l__decimal_text_plain(const char *text, size_t len, unsigned precision, int scale,
                               char *buf, size_t size, size_t *outlen, w2l_error *err)
{
    numtext nt;
    const char *why = scan_number(text, len, &nt);
    if (why) return bad_text(err, precision, scale, text, len, why);
    int neg = nt.neg;
    size_t int_start = nt.int_start, frac_start = nt.frac_start, nint = nt.nint, nfrac = nt.nfrac;
    int64_t exp = nt.exp;

    /* the value is D * 10^e, D the digits without the point and without leading zeros */
    char d[W2L_DECIMAL_TEXT_MAX + 1];
    size_t nd = 0, k0 = 0, ndig = nint + nfrac;
    int64_t e = exp - (int64_t)nfrac;
#define DIGIT(k) ((k) < nint ? text[int_start + (k)] : text[frac_start + (k) - nint])
    while (k0 < ndig && DIGIT(k0) == '0') k0++;
    /* trailing zeros beyond what the scale keeps are dropped into the exponent, so a long
     * run of zeros ("1.000...0") costs nothing */
    size_t k1 = ndig;
    int64_t s = scale >= 0 ? scale : (e < 0 ? -e : 0);
    while (k1 > k0 && DIGIT(k1 - 1) == '0' && e + s < 0) k1--, e++;
    if (k1 > k0) { /* zero has no digits */
        if (e + s < 0) return bad_text(err, precision, scale, text, len,
                                          "more fraction digits than the scale (would round)");
        if (k1 - k0 + (uint64_t)(e + s) > W2L_DECIMAL_TEXT_MAX ||
            (precision && k1 - k0 + (uint64_t)(e + s) > precision))
            return bad_text(err, precision, scale, text, len, "more digits than the precision");
        for (size_t k = k0; k < k1; k++) d[nd++] = DIGIT(k);
        for (int64_t z = 0; z < e + s; z++) d[nd++] = '0';
    }
#undef DIGIT
    if (s > W2L_DECIMAL_TEXT_MAX)
        return bad_text(err, precision, scale, text, len, "scale too large");
    /* d holds the unscaled value's nd digits (none for zero); lay out s fraction digits */
    size_t need = (neg && nd ? 1 : 0) + (nd > (size_t)s ? nd : (size_t)s + 1) + (s ? 1 : 0);
    if (need >= size)
        return w2l__fail(err, W2L_MISUSE, "decimal text buffer of %zu bytes too small", size);
    size_t o = 0;
    if (neg && nd) buf[o++] = '-';
    size_t lead = nd > (size_t)s ? nd - (size_t)s : 0; /* integer digits from d */
    if (!lead) buf[o++] = '0';
    memcpy(buf + o, d, lead);
    o += lead;
    if (s) {
        buf[o++] = '.';
        for (size_t z = nd; z < (size_t)s; z++) buf[o++] = '0';
        memcpy(buf + o, d + lead, nd - lead);
        o += nd - lead;
    }
    buf[o] = '\0';
    if (outlen) *outlen = o;
    return W2L_OK;
}

int w2l__decimal_text_from_be(const unsigned char *p, size_t n, int scale, char *buf, size_t size)
{
    if (n < 1 || n > W2L_DECIMAL_BE_MAX || scale > W2L_DECIMAL_TEXT_MAX ||
        scale < -W2L_DECIMAL_TEXT_MAX)
        return -1;
    unsigned char mag[W2L_DECIMAL_BE_MAX];
    int neg = (p[0] & 0x80) != 0;
    memcpy(mag, p, n);
    if (neg) { /* two's complement negation: invert, add one */
        unsigned carry = 1;
        for (size_t i = n; i-- > 0;) {
            unsigned v = (unsigned)(unsigned char)~mag[i] + carry;
            mag[i] = (unsigned char)v;
            carry = v >> 8;
        }
    }
    /* digits in reverse, nine at a time, by long division of the bytes by 10^9 */
    char rev[W2L_DECIMAL_BE_MAX * 3 + 9];
    size_t nr = 0, first = 0;
    while (first < n && !mag[first]) first++;
    while (first < n) {
        uint64_t rem = 0;
        for (size_t i = first; i < n; i++) {
            uint64_t cur = (rem << 8) | mag[i];
            mag[i] = (unsigned char)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        for (int k = 0; k < 9; k++, rem /= 10) rev[nr++] = (char)('0' + rem % 10);
        while (first < n && !mag[first]) first++;
    }
    while (nr && rev[nr - 1] == '0') nr--;
    size_t s = scale > 0 ? (size_t)scale : 0, zeros = scale < 0 && nr ? (size_t)-scale : 0;
    size_t total = nr + zeros; /* digits of the unscaled value written out */
    size_t need = (neg && nr ? 1 : 0) + (total > s ? total : s + 1) + (s ? 1 : 0);
    if (need >= size) return -1;
    size_t o = 0;
    if (neg && nr) buf[o++] = '-';
    size_t lead = total > s ? total - s : 0;
    if (!lead) buf[o++] = '0';
    /* digit k (0 = most significant) of the unscaled value */
#define UDIGIT(k) ((k) < nr ? rev[nr - 1 - (k)] : '0')
    for (size_t k = 0; k < lead; k++) buf[o++] = UDIGIT(k);
    if (s) {
        buf[o++] = '.';
        for (size_t z = total; z < s; z++) buf[o++] = '0';
        for (size_t k = lead; k < total; k++) buf[o++] = UDIGIT(k);
    }
#undef UDIGIT
    buf[o] = '\0';
    return (int)o;
}
