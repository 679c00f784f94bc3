/*
 * Fuzz target for the binlog reader and decoder of a MariaDB dump (lib/source/binlog*.c):
 * each input is a dump's packet stream as the server sends it after COM_BINLOG_DUMP (the
 * artificial ROTATE, FORMAT_DESCRIPTION, then the events), in the framing of
 * test/data/binlog/README ("W2LBLS1\n", then 4-byte LE length + packet, read leniently
 * here: a length past the end takes what is left). Every event packet gets its header's
 * event length and its CRC32 rewritten, so mutations reach the decoder past the reader's
 * length and checksum checks; then the packets are played through the fake server of
 * test/support/binlog_replay.c, over libmariadb's packet layer, to w2l__bl_open/fetch and
 * w2l__bl_decode_row: the whole path of the MariaDB stream.
 * A crash, an ASan/UBSan report or a hang is a finding; errors are the expected outcome.
 *
 * Built two ways by `make fuzz` (Makefile):
 *   - with clang: a libFuzzer target (-DW2L_LIBFUZZER, -fsanitize=fuzzer), run with a
 *     seed corpus of the .bin files in test/data/binlog (the recording, its MariaDB
 *     variants and the findings);
 *   - otherwise: the standalone driver below, which mutates the seed files with a fixed
 *     seed for N iterations or S seconds, whichever ends first:
 *       fuzz_binlog [-n N] [-s SEED] [-t SECONDS] [-o LAST] SEED_FILE...
 *     Before each run the input goes to LAST (default fuzz-binlog-last.bin), so a crash
 *     leaves its input behind; `fuzz_binlog -n 0 FILE` replays one file as is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "w2l.h"
#include "support/binlog_replay.h"

static fake_my *srv;

static void once(void)
{
    if (srv) return;
    w2l_error err = {0};
    if (w2l_global_init(&err) != W2L_OK) {
        fprintf(stderr, "fuzz_binlog: w2l_global_init: %s\n", err.msg);
        abort();
    }
    srv = fake_my_start();
    if (!srv) {
        fprintf(stderr, "fuzz_binlog: the fake server did not start\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    once();
    if (size < 8 || memcmp(data, "W2LBLS1\n", 8) != 0) return 0;
    enum { MAXP = 4096 };
    static uint8_t *pk[MAXP];
    static size_t ln[MAXP];
    size_t n = 0;
    for (size_t off = 8; off + 4 <= size && n < MAXP;) {
        const uint8_t *h = data + off;
        size_t l = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        off += 4;
        if (l > size - off) l = size - off;
        uint8_t *p = malloc(l ? l : 1);
        if (!p) break;
        memcpy(p, data + off, l);
        if (l >= 1 + 19 + 4 && p[0] == 0 && !(p[1 + 4] == 4 && p[1 + 13] == 0 && p[1 + 14] == 0)) {
            /* an event (not the artificial ROTATE, whose log_pos is 0): reframe it */
            uint32_t el = (uint32_t)(l - 1);
            for (int i = 0; i < 4; i++) p[1 + 9 + i] = (uint8_t)(el >> (8 * i));
            bl_packet_fix_crc(p, l);
        }
        pk[n] = p;
        ln[n++] = l;
        off += l;
    }
    fake_my_set_packets(srv, (const uint8_t *const *)pk, ln, n);
    for (size_t i = 0; i < n; i++) free(pk[i]);
    char *text = NULL;
    w2l_error err = {0};
    w2l_rc rc = bl_replay_text(fake_my_port(srv), &text, &err);
    if (rc != W2L_OK && !err.msg[0]) {
        fprintf(stderr, "fuzz_binlog: %s without a message\n", w2l_rc_name(rc));
        abort();
    }
    free(text);
    return 0;
}

#ifndef W2L_LIBFUZZER

/* ---- the standalone driver ---- */

#include "fuzz_rng.h"

typedef struct pkts {
    uint8_t **p;
    size_t *len;
    size_t n, cap;
} pkts;

static void add(pkts *s, const uint8_t *p, size_t len)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->p = realloc(s->p, s->cap * sizeof *s->p);
        s->len = realloc(s->len, s->cap * sizeof *s->len);
        if (!s->p || !s->len) abort();
    }
    s->p[s->n] = malloc(len + 64);
    if (!s->p[s->n]) abort();
    memcpy(s->p[s->n], p, len);
    s->len[s->n++] = len;
}

static void clear(pkts *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->p[i]);
    s->n = 0;
}

static const uint8_t interesting[] = { 0x00, 0x01, 0x02, 0x07, 0x08, 0x10, 0x7F,
                                       0x80, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF };

/* One to four changes to one packet (bytes, cuts, growth), or to the packet list. */
static void mutate(pkts *s)
{
    int k = 1 + (int)rnd(4);
    while (k--) {
        size_t i = rnd((uint32_t)s->n);
        uint8_t *p = s->p[i];
        size_t len = s->len[i];
        uint32_t op = rnd(10);
        if (len < 2) op = 9;
        size_t at = len > 1 ? 1 + rnd((uint32_t)(len - 1)) : 0; /* keep the OK byte */
        switch (op) {
        case 0: case 1: case 2: p[at] ^= (uint8_t)(1u << rnd(8)); break;
        case 3: case 4: p[at] = interesting[rnd(sizeof interesting)]; break;
        case 5: p[at] = (uint8_t)rnd(256); break;
        case 6: s->len[i] = at; break; /* cut */
        case 7: { /* insert up to 32 bytes (the buffer has room for 64 more) */
            size_t m = 1 + rnd(32);
            memmove(p + at + m, p + at, len - at);
            for (size_t j = 0; j < m; j++) p[at + j] = (uint8_t)rnd(256);
            uint8_t *np = malloc(len + m + 64);
            if (!np) abort();
            memcpy(np, p, len + m);
            free(p);
            s->p[i] = np;
            s->len[i] = len + m;
            break;
        }
        case 8: { /* drop a range */
            size_t m = 1 + rnd((uint32_t)(len - at));
            memmove(p + at, p + at + m, len - at - m);
            s->len[i] = len - m;
            break;
        }
        default: /* the list: drop a packet, or swap two */
            if (s->n < 2) break;
            if (rnd(2)) {
                free(s->p[i]);
                memmove(s->p + i, s->p + i + 1, (s->n - i - 1) * sizeof *s->p);
                memmove(s->len + i, s->len + i + 1, (s->n - i - 1) * sizeof *s->len);
                s->n--;
            } else {
                size_t j = rnd((uint32_t)s->n);
                uint8_t *tp = s->p[i];
                size_t tl = s->len[i];
                s->p[i] = s->p[j];
                s->len[i] = s->len[j];
                s->p[j] = tp;
                s->len[j] = tl;
            }
        }
    }
}

static uint8_t *frame(const pkts *s, size_t *size)
{
    size_t n = 8;
    for (size_t i = 0; i < s->n; i++) n += 4 + s->len[i];
    uint8_t *b = malloc(n), *o = b;
    if (!b) abort();
    memcpy(o, "W2LBLS1\n", 8);
    o += 8;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t l = (uint32_t)s->len[i];
        for (int k = 0; k < 4; k++) *o++ = (uint8_t)(l >> (8 * k));
        memcpy(o, s->p[i], s->len[i]);
        o += s->len[i];
    }
    *size = n;
    return b;
}

int main(int argc, char **argv)
{
    long iters = 2000, secs = 60;
    unsigned long long seed = 1;
    const char *last = "fuzz-binlog-last.bin";
    int a = 1;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "-n")) iters = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "-s")) seed = strtoull(argv[a + 1], NULL, 10);
        else if (!strcmp(argv[a], "-t")) secs = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "-o")) last = argv[a + 1];
        else break;
    }
    if (a >= argc) {
        fprintf(stderr,
                "usage: fuzz_binlog [-n N] [-s SEED] [-t SECONDS] [-o LAST] SEED_FILE...\n");
        return 2;
    }
    int nseeds = argc - a;
    bl_stream *seeds = calloc((size_t)nseeds, sizeof *seeds);
    for (int i = 0; i < nseeds; i++) {
        char why[256];
        if (!seeds || bl_stream_load(argv[a + i], &seeds[i], why, sizeof why)) {
            fprintf(stderr, "fuzz_binlog: %s: %s\n", argv[a + i], why);
            for (int k = 0; seeds && k <= i; k++) bl_stream_free(&seeds[k]);
            free(seeds);
            return 1;
        }
    }
    if (iters == 0) { /* replay the files as they are */
        for (int i = 0; i < nseeds; i++) LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].len);
        printf("fuzz_binlog: replayed %d file(s)\n", nseeds);
        iters = -1; /* and clean up below */
    }
    rng = seed * 0x9E3779B97F4A7C15ULL | 1;
    time_t t0 = time(NULL);
    pkts cur = {0};
    long done = 0;
    for (; done < iters && time(NULL) - t0 < secs; done++) {
        const bl_stream *sd = &seeds[rnd((uint32_t)nseeds)];
        clear(&cur);
        for (size_t i = 0; i < sd->npkts; i++) add(&cur, sd->pkts[i], sd->lens[i]);
        mutate(&cur);
        size_t size;
        uint8_t *in = frame(&cur, &size);
        FILE *f = fopen(last, "wb");
        if (f) {
            fwrite(in, 1, size, f);
            fclose(f);
        }
        LLVMFuzzerTestOneInput(in, size);
        free(in);
    }
    clear(&cur);
    free(cur.p);
    free(cur.len);
    for (int i = 0; i < nseeds; i++) bl_stream_free(&seeds[i]);
    free(seeds);
    fake_my_stop(srv);
    w2l_global_cleanup();
    if (iters >= 0)
        printf("fuzz_binlog: %ld inputs in %lds (seed %llu), no crash\n", done, (long)(time(NULL) - t0),
               seed);
    return 0;
}

#endif
