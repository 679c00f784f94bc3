/*
 * Offline binlog replay, for test/check_binlog.c and fuzz/fuzz_binlog.c: a fake MySQL
 * server on 127.0.0.1 that speaks just enough of the client protocol (handshake, OK to
 * every statement, one-value answers to SELECTs, the recorded packets in answer to
 * COM_BINLOG_DUMP) for lib/source/binlog.c to run unchanged over libmariadb, and a
 * renderer of the decoded stream as text. The recorded stream format
 * (test/data/binlog/README): "W2LBLS1\n", then per packet a 4-byte LE length and the
 * packet's bytes (starting with the 0x00 OK byte).
 */
#ifndef W2L_TEST_BINLOG_REPLAY_H
#define W2L_TEST_BINLOG_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "w2l.h"

typedef struct fake_my fake_my;

/* Starts the server thread on an ephemeral port of 127.0.0.1; NULL on failure. */
fake_my *fake_my_start(void);
unsigned fake_my_port(const fake_my *f);
/* The packets the next dumps send (copied): pkts/npkts packets of lens[i] bytes. */
void fake_my_set_packets(fake_my *f, const uint8_t *const *pkts, const size_t *lens, size_t npkts);
void fake_my_stop(fake_my *f); /* NULL is a no-op */

/* A recorded stream split into packets (pointers into data). -1 with a reason in why
 * when the framing is wrong. */
typedef struct bl_stream {
    uint8_t *data;
    size_t len;
    const uint8_t **pkts;
    size_t *lens;
    size_t npkts;
} bl_stream;
int bl_stream_load(const char *path, bl_stream *s, char *why, size_t whysize);
int bl_stream_parse(bl_stream *s, char *why, size_t whysize); /* of s->data/len (owned) */
void bl_stream_free(bl_stream *s);

/* Rewrites the CRC32 at the end of an event packet (0x00 + event) after its bytes
 * changed, so that the change reaches our decoder past the library's checksum check. */
void bl_packet_fix_crc(uint8_t *pkt, size_t len);

/* Connects to the fake server, runs w2l__bl_open/fetch to the end of the dump and
 * renders each event (and each row image, decoded with w2l__bl_decode_row) as a line
 * into *text (malloc'd, NUL-terminated, also on error: the lines before it). Returns
 * the first error of the decoder (err filled) or W2L_OK. */
w2l_rc bl_replay_text(unsigned port, char **text, w2l_error *err);

#endif
