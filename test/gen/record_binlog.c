/*
 * Records a binlog dump as the "mysql" source receives it, for the offline decoder suite
 * (test/check_binlog.c) and the fuzz target (fuzz/fuzz_binlog.c). Connects to a server
 * the way lib/source/binlog.c does (checksum handshake, GTID capability, no
 * ANNOTATE_ROWS, non-blocking dump, checksums verified) and writes every packet the
 * server sends after COM_BINLOG_DUMP, byte for byte (the leading 0x00 included), into a
 * file framed as test/data/binlog/README describes:
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
#include <mariadb_rpl.h>

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
    MARIADB_RPL *rpl = mariadb_rpl_init(m);
    if (!rpl) {
        fprintf(stderr, "record_binlog: mariadb_rpl_init failed\n");
        return 1;
    }
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_SERVER_ID, 4242u);
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_FLAGS, (unsigned)MARIADB_RPL_BINLOG_DUMP_NON_BLOCK);
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_FILENAME, argv[2], strlen(argv[2]));
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_START, strtoul(argv[3], NULL, 10));
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_VERIFY_CHECKSUM, 1u);
    mariadb_rpl_optionsv(rpl, MARIADB_RPL_UNCOMPRESS, 1u);
    if (mariadb_rpl_open(rpl)) {
        fprintf(stderr, "record_binlog: dump: %s\n", mysql_error(m));
        return 1;
    }
    FILE *f = fopen(argv[4], "wb");
    if (!f || fwrite("W2LBLS1\n", 1, 8, f) != 8) {
        fprintf(stderr, "record_binlog: cannot write %s\n", argv[4]);
        return 1;
    }
    unsigned long n = 0;
    MARIADB_RPL_EVENT *ev = NULL;
    while ((ev = mariadb_rpl_fetch(rpl, ev))) {
        if (ev->raw_data_size < 1 || ev->raw_data[0] != 0) {
            fprintf(stderr, "record_binlog: packet %lu does not start with the OK byte\n", n);
            return 1;
        }
        if (put_u32(f, (uint32_t)ev->raw_data_size) ||
            fwrite(ev->raw_data, 1, ev->raw_data_size, f) != ev->raw_data_size) {
            fprintf(stderr, "record_binlog: cannot write %s\n", argv[4]);
            return 1;
        }
        n++;
    }
    if (mysql_errno(m) || mariadb_rpl_errno(rpl)) {
        fprintf(stderr, "record_binlog: fetch: %s %s\n", mysql_error(m), mariadb_rpl_error(rpl));
        return 1;
    }
    if (fclose(f)) return 1;
    mariadb_rpl_close(rpl);
    mysql_close(m);
    fprintf(stderr, "record_binlog: %lu packets from %s:%s into %s\n", n, argv[2], argv[3],
            argv[4]);
    return 0;
}
