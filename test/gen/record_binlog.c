/*
 * Records a binlog dump as the "mysql" source receives it, for the offline decoder suite
 * (test/check_binlog.c) and the fuzz target (fuzz/fuzz_binlog.c). Connects to a server
 * the way lib/source/binlog.c does (checksum handshake, GTID capability, no
 * ANNOTATE_ROWS, non-blocking dump; COM_BINLOG_DUMP through the connection's db_command,
 * packets read with mysql_net_read_packet, no event parsed here) and writes every packet
 * the server sends after COM_BINLOG_DUMP, byte for byte (the leading 0x00 included), into
 * a file framed as test/data/binlog/README describes:
 *
 *   "W2LBLS1\n", then per packet: 4-byte little-endian length, the packet's bytes.
 *
 * Usage: record_binlog PORT BINLOG_FILE START_POS OUT   (user cdc/cdcpass on 127.0.0.1).
 * Run by scripts/record-binlogs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

static int put_u32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: record_binlog PORT BINLOG_FILE START_POS OUT\n");
        return 2;
    }
    MYSQL *m = mysql_init(NULL);
    if (!m || !mysql_real_connect(m, "127.0.0.1", "cdc", "cdcpass", NULL, (unsigned)atoi(argv[1]),
                                  NULL, 0)) {
        fprintf(stderr, "record_binlog: connect: %s\n", m ? mysql_error(m) : "mysql_init failed");
        return 1;
    }
    const char *setup[] = { "SET @master_binlog_checksum = @@global.binlog_checksum",
                            "SET @mariadb_slave_capability = 4",
                            "SET @master_heartbeat_period = 1000000000" };
    for (size_t i = 0; i < sizeof setup / sizeof *setup; i++)
        if (mysql_query(m, setup[i])) {
            fprintf(stderr, "record_binlog: %s: %s\n", setup[i], mysql_error(m));
            return 1;
        }
    /* pos 4 LE, flags 2 (1: non-blocking), server id 4, file name */
    size_t fl = strlen(argv[2]);
    unsigned long pos = strtoul(argv[3], NULL, 10);
    unsigned char *cmd = malloc(10 + fl);
    if (!cmd || fl > 255) {
        fprintf(stderr, "record_binlog: bad file name\n");
        return 1;
    }
    for (int i = 0; i < 4; i++) cmd[i] = (unsigned char)(pos >> (8 * i));
    cmd[4] = 1;
    cmd[5] = 0;
    for (int i = 0; i < 4; i++) cmd[6 + i] = (unsigned char)(4242u >> (8 * i));
    memcpy(cmd + 10, argv[2], fl);
    if (m->methods->db_command(m, COM_BINLOG_DUMP, (const char *)cmd, 10 + fl, 1, NULL)) {
        fprintf(stderr, "record_binlog: dump: %s\n", mysql_error(m));
        return 1;
    }
    free(cmd);
    FILE *f = fopen(argv[4], "wb");
    if (!f || fwrite("W2LBLS1\n", 1, 8, f) != 8) {
        fprintf(stderr, "record_binlog: cannot write %s\n", argv[4]);
        return 1;
    }
    unsigned long n = 0, len;
    while ((len = mysql_net_read_packet(m)) != packet_error && len > 0) {
        const unsigned char *p = m->net.read_pos;
        if (p[0] == 0xFE && len < 9) break; /* the end of a non-blocking dump */
        if (p[0] != 0) {
            fprintf(stderr, "record_binlog: packet %lu does not start with the OK byte\n", n);
            return 1;
        }
        if (put_u32(f, (uint32_t)len) || fwrite(p, 1, len, f) != len) {
            fprintf(stderr, "record_binlog: cannot write %s\n", argv[4]);
            return 1;
        }
        n++;
    }
    if (len == packet_error || len == 0) {
        fprintf(stderr, "record_binlog: read: %s\n", mysql_error(m));
        return 1;
    }
    if (fclose(f)) return 1;
    mysql_close(m);
    fprintf(stderr, "record_binlog: %lu packets from %s:%s into %s\n", n, argv[2], argv[3],
            argv[4]);
    return 0;
}
