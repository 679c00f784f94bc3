/*
 * Fuzz target for canal-json's fast path (lib/source/cdc_canal_fast.c) against its tree
 * path (lib/source/cdc_canal.c): each input is a stream of messages, one per line, so a
 * message can follow one that gave its table's shape; it is decoded by two decoders, one
 * with the fast path switched off (test/support/canal_diff.c), which after every message
 * must have returned the same code, error text and step and hold the same events, value by
 * value. That is checked with the default options, with tinyint1-as-boolean,
 * time-as-string and a +08:00 zone, and in replay. A difference (printed with the input as
 * a C string), a crash, an ASan/UBSan report, a hang or an abort() here is a finding.
 *
 * Built two ways by `make fuzz` (Makefile), like fuzz_json.c:
 *   - with clang: a libFuzzer target (-DW2L_LIBFUZZER, -fsanitize=fuzzer), with a seed
 *     corpus of pairs of consecutive lines of test/data/cdc/canal*.jsonl;
 *   - otherwise: the standalone driver of fuzz_main.h, which mutates the lines of the seed
 *     files with a fixed seed for N iterations or S seconds, whichever ends first, and
 *     runs, half the time each, the seed line then its mutation (a known shape first) or
 *     the mutation twice:
 *       fuzz_canal [-n N] [-s SEED] [-t SECONDS] SEED_FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/canal_diff.h"

/* The input as a C string literal, on stderr. */
static void print_input(const uint8_t *data, size_t size)
{
    fputc('"', stderr);
    for (size_t i = 0; i < size; i++) {
        unsigned c = data[i];
        if (c == '"' || c == '\\') fprintf(stderr, "\\%c", c);
        else if (c == '\n') fputs("\\n", stderr);
        else if (c == '\t') fputs("\\t", stderr);
        else if (c < 0x20 || c >= 0x7f) fprintf(stderr, "\\%03o", c);
        else fputc((int)c, stderr);
    }
    fputs("\"\n", stderr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    w2l__cdc_opts plain, conv;
    memset(&plain, 0, sizeof plain);
    memset(&conv, 0, sizeof conv);
    conv.tinyint1_as_boolean = 1;
    conv.time_as_string = 1;
    conv.tz_offset_s = 8 * 3600;
    static const struct {
        int conv, replay;
        const char *what;
    } runs[] = {
        {0, 0, "default options"},
        {1, 0, "tinyint1-as-boolean, time-as-string, +08:00"},
        {0, 1, "replay"},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        const char *why = canal_diff((const char *)data, size, runs[r].conv ? &conv : &plain,
                                     runs[r].replay, NULL);
        if (!why) continue;
        fprintf(stderr, "fuzz_canal: the fast path and the tree path differ (%s) on\n",
                runs[r].what);
        print_input(data, size);
        fprintf(stderr, "%s\n", why);
        abort();
    }
    return 0;
}

#ifndef W2L_LIBFUZZER

/* ---- the standalone driver (fuzz_main.h) ---- */

#include "fuzz_rng.h"

/* The input of one round: "seed\nmutation" or "mutation\nmutation", half the time each
 * (each line without its newline). */
static void run_pair(const char *seed, size_t seed_len, const char *mut, size_t mut_len)
{
    static char in[2 * (65536 + 64) + 1];
    if (seed_len && seed[seed_len - 1] == '\n') seed_len--;
    if (mut_len && mut[mut_len - 1] == '\n') mut_len--;
    const char *first = seed;
    size_t first_len = seed_len;
    if (rnd(2)) first = mut, first_len = mut_len;
    if (first_len + 1 + mut_len > sizeof in) abort();
    memcpy(in, first, first_len);
    in[first_len] = '\n';
    memcpy(in + first_len + 1, mut, mut_len);
    LLVMFuzzerTestOneInput((const uint8_t *)in, first_len + 1 + mut_len);
}

#define FUZZ_NAME   "fuzz_canal"
#define FUZZ_TOKENS "{}[]\",:\\u0123456789-+.eE \t\nntfrlasdTZ\x01\xff"
#define FUZZ_RUN    run_pair
#include "fuzz_main.h"

#endif
