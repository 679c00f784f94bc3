/*
 * The standalone fuzz drivers' random numbers (xorshift64): fast, seeded, the same sequence
 * on every machine, so a failing round is replayed by its seed.
 */
#ifndef W2L_FUZZ_RNG_H
#define W2L_FUZZ_RNG_H

#include <stdint.h>

static uint64_t rng;

/* A number below `below` (0 when below is 0). rng must be seeded non-zero. */
static uint32_t rnd(uint32_t below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return below ? (uint32_t)(rng % below) : 0;
}

#endif
