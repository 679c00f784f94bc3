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
/* mysql 1: the server greets as MySQL 8.0 and answers COM_BINLOG_DUMP_GTID (0x1e) too. */
void fake_my_set_mysql(fake_my *f, int mysql);
/* The greeting names greeting_plugin (NULL: mysql_native_password); when the client's
 * handshake response names another plugin than account_plugin (NULL: any is taken), or the
 * greeting did, the fake sends an AuthSwitchRequest to account_plugin with a new scramble,
 * as MySQL 8 does (its restart with the account's plugin), then takes any answer.
 * fake_my_auth_seen: the plugin the last client's response named, and whether the fake asked it to
 * switch. */
void fake_my_set_auth(fake_my *f, const char *greeting_plugin, const char *account_plugin);
void fake_my_auth_seen(fake_my *f, char *plugin, size_t size, int *switched);
/* What the last connection sent: its statements joined by "\n" and its last dump command
 * (command byte first); copies (malloc'd) into *sql and *dump, *dump_len. */
void fake_my_last_session(fake_my *f, char **sql, uint8_t **dump, size_t *dump_len);



/* Recording mode: the fake is a MySQL server whose binlog is one recorded binlog FILE,
 * named binlog.000001, so that the real "mysql" source (lib/source/mysql_source.c) runs
 * against it unchanged. It answers the statements the source sends, word for word (the
 * session SETs, SELECT @@version, @@version_comment, @@global.binlog_format,
 * binlog_row_metadata, binlog_row_image, log_bin, SHOW DATABASES, CURRENT_USER() and its
 * USER_PRIVILEGES, gtid_mode, gtid_executed, gtid_purged, server_id,
 * the two information_schema queries of mysql_tracked.c, SHOW BINARY LOG STATUS on 8.2+,
 * SHOW MASTER STATUS before 8.4, SHOW BINARY LOGS), with text result sets; any other
 * statement or command gets an error and is kept for fake_my_unknown(). Dumps:
 * COM_BINLOG_DUMP from binlog.000001:pos (an event start) and COM_BINLOG_DUMP_GTID (the
 * groups of untagged GTIDs in the set are left out; tagged GTIDs are never left out) send
 * the file from there as the server does (artificial ROTATE, FORMAT_DESCRIPTION, events);
 * a blocking dump then sends a HEARTBEAT at the end of the binlog and waits for the
 * replica to leave. When the recording ends with a ROTATE, the server went on to that
 * file, which holds no event: the binlog ends there at position 4. The version is the
 * FORMAT_DESCRIPTION's, the server id its header's. */
typedef struct fake_my_server {
    const char *version;       /* @@version; NULL: the recording's */
    const char *row_metadata;  /* @@global.binlog_row_metadata; NULL: "MINIMAL" */
    const char *row_image;     /* NULL: "FULL" */
    const char *gtid_mode;     /* NULL: "OFF" */
    const char *gtid_executed; /* @@global.gtid_executed (and SHOW BINARY LOG STATUS); NULL "" */
    const char *gtid_purged;   /* NULL: "" */
    /* information_schema: what the server holds at the end of the recording, one line per
     * column "db|table|column|COLUMN_TYPE|YES or NO", in ordinal order; keys: the PRIMARY
     * KEY columns "db|table|column" in order. System databases are left out of answers. */
    const char *columns, *keys;
    /* SHOW DATABASES: the system databases, these (one a line; NULL: none) and those of
     * columns. The account is cdc@127.0.0.1 with global SELECT. */
    const char *databases;
} fake_my_server;
/* Serves file (copied) in recording mode; desc is borrowed for the server's life. */
void fake_my_serve_recording(fake_my *f, const uint8_t *file, size_t len,
                             const fake_my_server *desc);
/* The binlog end SHOW BINARY LOG STATUS reports (default: the end of the recording, or the
 * file its last ROTATE names at 4; file NULL: that default again), e.g. to stop an
 * until-caught-up run midway. */
void fake_my_set_end(fake_my *f, const char *file, uint64_t pos);
/* The statements and commands the fake refused, one per line ("" none; malloc'd). */
char *fake_my_unknown(fake_my *f);
/* Dump sessions served so far (recording mode). */
int fake_my_dumps(fake_my *f);

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
/* A binlog FILE (the magic 0xFE 'bin', then events) as a MySQL server sends it after a
 * dump from its start: an artificial ROTATE to name (with a CRC32 when the file's
 * FORMAT_DESCRIPTION announces them), then per event the OK byte and the event. Packets
 * are appended to s (its data owned, as bl_stream_load). -1 with a reason when the file is
 * malformed. */
int bl_stream_from_binlog(const uint8_t *file, size_t len, const char *name, bl_stream *s,
                          char *why, size_t whysize);

/* Rewrites the CRC32 at the end of an event packet (0x00 + event) after its bytes
 * changed, so that the change reaches our decoder past the library's checksum check. */
void bl_packet_fix_crc(uint8_t *pkt, size_t len);

/* Connects to the fake server, runs w2l__bl_open/fetch to the end of the dump and
 * renders each event (and each row image, decoded with w2l__bl_decode_row) as a line
 * into *text (malloc'd, NUL-terminated, also on error: the lines before it). Returns
 * the first error of the decoder (err filled) or W2L_OK. */
w2l_rc bl_replay_text(unsigned port, char **text, w2l_error *err);
/* As bl_replay_text, for a MySQL server (w2l__bl_opts.mysql; dump by gtids when not NULL):
 * also GTID/ANONYMOUS_GTID/PREVIOUS_GTIDS/HEARTBEAT lines, XID with its next position,
 * a column's INVISIBLE flag and collation id (see test/data/binlog/mysql8/README). */
w2l_rc bl_replay_text_mysql(unsigned port, const char *gtids, char **text, w2l_error *err);

#endif
