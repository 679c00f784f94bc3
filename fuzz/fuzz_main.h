/*
 * The standalone driver of the line-based fuzz targets (fuzz_json.c, fuzz_canal.c), used
 * when libFuzzer is not there. A target includes it under #ifndef W2L_LIBFUZZER, after its
 * LLVMFuzzerTestOneInput, having defined:
 *   FUZZ_NAME    the target's name, for its messages ("fuzz_json");
 *   FUZZ_TOKENS  a string literal: the bytes a mutation writes or inserts;
 *   FUZZ_RUN     (optional) FUZZ_RUN(seed, seed_len, mut, mut_len): runs the target on an
 *                input made of a seed line and its mutation; without it, on the mutation.
 * The driver reads the seed files (one input per line, its newline kept), then for N
 * iterations or S seconds, whichever ends first, takes a seed line at random and mutates it
 * 1 to 4 times (a byte replaced, the line cut, a byte inserted, a byte removed), from a
 * fixed seed, so a run is replayed by its arguments:
 *   NAME [-n N] [-s SEED] [-t SECONDS] SEED_FILE...
 */
#ifndef W2L_FUZZ_MAIN_H
#define W2L_FUZZ_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_rng.h"

#ifndef FUZZ_RUN
#define FUZZ_RUN(seed, seed_len, mut, mut_len)                                                     \
    ((void)(seed), (void)(seed_len), LLVMFuzzerTestOneInput((const uint8_t *)(mut), (mut_len)))
#endif

enum { FUZZ_LINE = 65536 }; /* the longest seed line read whole */

static const char fuzz_tokens[] = FUZZ_TOKENS;

static char fuzz_token(void) { return fuzz_tokens[rnd(sizeof fuzz_tokens - 1)]; }

int main(int argc, char **argv)
{
    long iters = 1000000, secs = 60;
    rng = 1;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-n")) iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-s")) rng = (uint64_t)atoll(argv[i + 1]) | 1;
        else if (!strcmp(argv[i], "-t")) secs = atol(argv[i + 1]);
    }
    char **seeds = NULL;
    size_t nseeds = 0;
    for (; i < argc; i++) { /* one input per line */
        FILE *f = fopen(argv[i], "r");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        static char line[FUZZ_LINE];
        while (fgets(line, sizeof line, f)) {
            seeds = realloc(seeds, (nseeds + 1) * sizeof *seeds);
            if (!seeds || !(seeds[nseeds++] = strdup(line))) abort();
        }
        fclose(f);
    }
    if (!nseeds) {
        fprintf(stderr, "usage: %s [-n N] [-s SEED] [-t SECONDS] SEED_FILE...\n", FUZZ_NAME);
        return 2;
    }
    time_t start = time(NULL), end = start + secs;
    static char buf[FUZZ_LINE + 64];
    long it = 0;
    for (; it < iters && time(NULL) < end; it++) {
        const char *s = seeds[rnd((uint32_t)nseeds)];
        size_t n = strlen(s), len = n;
        memcpy(buf, s, n);
        for (int k = 1 + (int)rnd(4); k--;) {
            size_t at = n ? rnd((uint32_t)n) : 0;
            switch (rnd(4)) {
            case 0:
                if (n) buf[at] = fuzz_token();
                break;
            case 1: n = at; break; /* cut */
            case 2:
                if (n < FUZZ_LINE) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = fuzz_token();
                    n++;
                }
                break;
            default:
                if (n) memmove(buf + at, buf + at + 1, n - at - 1), n--;
                break;
            }
        }
        FUZZ_RUN(s, len, buf, n);
    }
    for (size_t k = 0; k < nseeds; k++) free(seeds[k]);
    free(seeds);
    printf("%s: done (%ld inputs in %ld s)\n", FUZZ_NAME, it, (long)(time(NULL) - start));
    return 0;
}

#endif
