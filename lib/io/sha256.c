/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for signing S3 requests (sigv4.c) and
 * hashing their payloads. Portable C: big-endian loads and stores by hand, the 64 rounds
 * unrolled eight at a time with the working variables renamed instead of shifted.
 */
#include "s3.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
#define S0(x) (ROR(x, 2) ^ ROR(x, 13) ^ ROR(x, 22))
#define S1(x) (ROR(x, 6) ^ ROR(x, 11) ^ ROR(x, 25))
#define s0(x) (ROR(x, 7) ^ ROR(x, 18) ^ ((x) >> 3))
#define s1(x) (ROR(x, 17) ^ ROR(x, 19) ^ ((x) >> 10))
#define CH(x, y, z) (((x) & ((y) ^ (z))) ^ (z))
#define MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))

/* One round; the caller rotates the roles of a..h instead of moving the values. */
#define RND(a, b, c, d, e, f, g, h, i)                      \
    do {                                                    \
        uint32_t t1_ = h + S1(e) + CH(e, f, g) + K[i] + W[i]; \
        uint32_t t2_ = S0(a) + MAJ(a, b, c);                \
        d += t1_;                                           \
        h = t1_ + t2_;                                      \
    } while (0)

static uint32_t load_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Compresses nblocks consecutive 64-byte blocks into h. */
static void compress(uint32_t h[8], const unsigned char *p, size_t nblocks)
{
    uint32_t W[64];
    while (nblocks--) {
        for (int i = 0; i < 16; i++) W[i] = load_be32(p + 4 * i);
        for (int i = 16; i < 64; i++)
            W[i] = s1(W[i - 2]) + W[i - 7] + s0(W[i - 15]) + W[i - 16];
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
                 hh = h[7];
        for (int i = 0; i < 64; i += 8) {
            RND(a, b, c, d, e, f, g, hh, i + 0);
            RND(hh, a, b, c, d, e, f, g, i + 1);
            RND(g, hh, a, b, c, d, e, f, i + 2);
            RND(f, g, hh, a, b, c, d, e, i + 3);
            RND(e, f, g, hh, a, b, c, d, i + 4);
            RND(d, e, f, g, hh, a, b, c, i + 5);
            RND(c, d, e, f, g, hh, a, b, i + 6);
            RND(b, c, d, e, f, g, hh, a, i + 7);
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
        h[5] += f;
        h[6] += g;
        h[7] += hh;
        p += 64;
    }
}

void w2l__sha256_init(w2l__sha256_ctx *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
    s->nbuf = 0;
}

void w2l__sha256_update(w2l__sha256_ctx *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    if (n == 0) return; /* data may then be NULL */
    s->len += n;
    if (s->nbuf) {
        size_t take = W2L_MIN(n, 64 - s->nbuf);
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf < 64) return;
        compress(s->h, s->buf, 1);
        s->nbuf = 0;
    }
    if (n >= 64) {
        compress(s->h, p, n / 64);
        p += n & ~(size_t)63;
        n &= 63;
    }
    if (n) memcpy(s->buf, p, n);
    s->nbuf = n;
}

void w2l__sha256_final(w2l__sha256_ctx *s, unsigned char out[32])
{
    uint64_t bits = s->len * 8;
    s->buf[s->nbuf++] = 0x80;
    if (s->nbuf > 56) {
        memset(s->buf + s->nbuf, 0, 64 - s->nbuf);
        compress(s->h, s->buf, 1);
        s->nbuf = 0;
    }
    memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
    store_be32(s->buf + 56, (uint32_t)(bits >> 32));
    store_be32(s->buf + 60, (uint32_t)bits);
    compress(s->h, s->buf, 1);
    for (int i = 0; i < 8; i++) store_be32(out + 4 * i, s->h[i]);
    memset(s, 0, sizeof *s); /* the state may hold key material (HMAC) */
}

void w2l__sha256(const void *p, size_t n, unsigned char out[32])
{
    w2l__sha256_ctx s;
    w2l__sha256_init(&s);
    w2l__sha256_update(&s, p, n);
    w2l__sha256_final(&s, out);
}

void w2l__hmac_sha256(const void *key, size_t klen, const void *msg, size_t n,
                      unsigned char out[32])
{
    unsigned char k[64] = {0}, pad[64], inner[32];
    if (klen > 64)
        w2l__sha256(key, klen, k); /* RFC 2104: longer keys are hashed first */
    else if (klen)
        memcpy(k, key, klen);
    w2l__sha256_ctx s;
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    w2l__sha256_init(&s);
    w2l__sha256_update(&s, pad, 64);
    w2l__sha256_update(&s, msg, n);
    w2l__sha256_final(&s, inner);
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    w2l__sha256_init(&s);
    w2l__sha256_update(&s, pad, 64);
    w2l__sha256_update(&s, inner, 32);
    w2l__sha256_final(&s, out);
    memset(k, 0, sizeof k);
    memset(pad, 0, sizeof pad);
}

void w2l__hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}
