/*
 * Offline binlog replay (binlog_replay.h): a fake MySQL server that plays recorded dump
 * packets to lib/source/binlog.c through libmariadb, and a text rendering of what the
 * decoder makes of them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "binlog_replay.h"
#include "source/mysql_int.h"

/* ======================================================================================
 * The fake server
 * ====================================================================================== */

struct fake_my {
    int lfd;
    unsigned port;
    pthread_t thr;
    pthread_mutex_t mu;
    uint8_t **pkts;
    size_t *lens;
    size_t npkts;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One packet: 3-byte length, sequence id, payload (at most 16 MB - 1 here). */
static int send_pkt(int fd, uint8_t *seq, const uint8_t *p, size_t n)
{
    if (n >= 0xFFFFFF) n = 0xFFFFFE; /* longer inputs (fuzzing) are cut, not split */
    uint8_t *b = malloc(n + 4);
    if (!b) return -1;
    b[0] = (uint8_t)n;
    b[1] = (uint8_t)(n >> 8);
    b[2] = (uint8_t)(n >> 16);
    b[3] = (*seq)++;
    memcpy(b + 4, p, n);
    int rc = write_all(fd, b, n + 4);
    free(b);
    return rc;
}

static uint8_t *recv_pkt(int fd, uint8_t *seq, size_t *n)
{
    uint8_t h[4];
    if (read_all(fd, h, 4)) return NULL;
    *n = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16;
    *seq = (uint8_t)(h[3] + 1);
    uint8_t *p = malloc(*n + 1);
    if (!p || read_all(fd, p, *n)) {
        free(p);
        return NULL;
    }
    p[*n] = 0;
    return p;
}

static int send_ok(int fd, uint8_t *seq)
{
    static const uint8_t ok[] = {0x00, 0, 0, 0x02, 0, 0, 0};
    return send_pkt(fd, seq, ok, sizeof ok);
}

static int send_eof(int fd, uint8_t *seq)
{
    static const uint8_t eof[] = {0xFE, 0, 0, 0x02, 0};
    return send_pkt(fd, seq, eof, sizeof eof);
}

/* A result of one VARCHAR column "v" and one row holding val (classic EOF framing). */
static int send_value(int fd, uint8_t *seq, const char *val)
{
    static const uint8_t count[] = {1};
    static const uint8_t coldef[] = {3, 'd', 'e', 'f', 0, 0, 0, 1, 'v', 0, 0x0C, 45, 0, 0, 1, 0, 0,
                                     0xFD, 0, 0, 0, 0, 0};
    uint8_t row[64];
    size_t l = strlen(val);
    row[0] = (uint8_t)l;
    memcpy(row + 1, val, l);
    return send_pkt(fd, seq, count, sizeof count) || send_pkt(fd, seq, coldef, sizeof coldef) ||
                   send_eof(fd, seq) || send_pkt(fd, seq, row, l + 1) || send_eof(fd, seq)
               ? -1
               : 0;
}

static int send_dump(fake_my *f, int fd, uint8_t *seq)
{
    pthread_mutex_lock(&f->mu);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < f->npkts; i++) rc = send_pkt(fd, seq, f->pkts[i], f->lens[i]);
    pthread_mutex_unlock(&f->mu);
    return rc ? -1 : send_eof(fd, seq); /* a non-blocking dump ends with EOF */
}

static void serve(fake_my *f, int fd)
{
    static const char version[] = "5.5.5-10.11.19-MariaDB-log";
    uint8_t hs[128], seq = 0;
    size_t n = 0;
    hs[n++] = 10;
    memcpy(hs + n, version, sizeof version);
    n += sizeof version;
    memcpy(hs + n, "\1\0\0\0", 4); /* connection id */
    n += 4;
    memcpy(hs + n, "abcdefgh", 8); /* scramble, first part */
    n += 8;
    hs[n++] = 0;
    /* PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION, MULTI_RESULTS, PLUGIN_AUTH (no SSL, no
     * compression, classic EOF packets, and no CLIENT_MYSQL bit: a MariaDB server) */
    uint32_t caps = 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x4 | 0x8;
    hs[n++] = (uint8_t)caps;
    hs[n++] = (uint8_t)(caps >> 8);
    hs[n++] = 45; /* utf8mb4_general_ci */
    hs[n++] = 2;  /* status: autocommit */
    hs[n++] = 0;
    hs[n++] = (uint8_t)(caps >> 16);
    hs[n++] = (uint8_t)(caps >> 24);
    hs[n++] = 21;
    memset(hs + n, 0, 10); /* reserved, MariaDB extended capabilities */
    n += 10;
    memcpy(hs + n, "ijklmnopqrst", 13); /* scramble, second part, NUL */
    n += 13;
    memcpy(hs + n, "mysql_native_password", 22);
    n += 22;
    if (send_pkt(fd, &seq, hs, n)) return;
    uint8_t *p = recv_pkt(fd, &seq, &n); /* handshake response: any user, any password */
    if (!p) return;
    free(p);
    if (send_ok(fd, &seq)) return;
    for (;;) {
        p = recv_pkt(fd, &seq, &n);
        if (!p || n == 0 || p[0] == 0x01 /* COM_QUIT */) break;
        int rc;
        if (p[0] == 0x03 && n >= 7 && strncasecmp((const char *)p + 1, "select", 6) == 0)
            rc = send_value(fd, &seq,
                            strstr((const char *)p + 1, "binlog_checksum") ? "CRC32" : "1");
        else if (p[0] == 0x12) /* COM_BINLOG_DUMP */
            rc = send_dump(f, fd, &seq);
        else rc = send_ok(fd, &seq); /* SET ..., COM_REGISTER_SLAVE, others */
        free(p);
        p = NULL;
        if (rc) break;
    }
    free(p);
}

static void *server_main(void *arg)
{
    fake_my *f = arg;
    for (;;) {
        int fd = accept(f->lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL; /* shut down by fake_my_stop */
        }
        int one = 1; /* small packets, answered at once: no Nagle delays */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(f, fd);
        close(fd);
    }
}

fake_my *fake_my_start(void)
{
    fake_my *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    pthread_mutex_init(&f->mu, NULL);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) || listen(f->lfd, 8) ||
        getsockname(f->lfd, (struct sockaddr *)&a, &al) ||
        pthread_create(&f->thr, NULL, server_main, f)) {
        if (f->lfd >= 0) close(f->lfd);
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    f->port = ntohs(a.sin_port);
    return f;
}

unsigned fake_my_port(const fake_my *f) { return f->port; }

static void drop_packets(fake_my *f)
{
    for (size_t i = 0; i < f->npkts; i++) free(f->pkts[i]);
    free(f->pkts);
    free(f->lens);
    f->pkts = NULL;
    f->lens = NULL;
    f->npkts = 0;
}

void fake_my_set_packets(fake_my *f, const uint8_t *const *pkts, const size_t *lens, size_t npkts)
{
    pthread_mutex_lock(&f->mu);
    drop_packets(f);
    f->pkts = calloc(npkts ? npkts : 1, sizeof *f->pkts);
    f->lens = calloc(npkts ? npkts : 1, sizeof *f->lens);
    for (size_t i = 0; f->pkts && f->lens && i < npkts; i++) {
        f->pkts[i] = malloc(lens[i] ? lens[i] : 1);
        if (!f->pkts[i]) break;
        memcpy(f->pkts[i], pkts[i], lens[i]);
        f->lens[i] = lens[i];
        f->npkts = i + 1;
    }
    pthread_mutex_unlock(&f->mu);
}

void fake_my_stop(fake_my *f)
{
    if (!f) return;
    shutdown(f->lfd, SHUT_RDWR); /* wakes accept() */
    pthread_join(f->thr, NULL);
    close(f->lfd);
    drop_packets(f);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ======================================================================================
 * Recorded streams
 * ====================================================================================== */

int bl_stream_parse(bl_stream *s, char *why, size_t whysize)
{
    if (s->len < 8 || memcmp(s->data, "W2LBLS1\n", 8) != 0) {
        snprintf(why, whysize, "no W2LBLS1 header");
        return -1;
    }
    size_t cap = 64;
    s->pkts = malloc(cap * sizeof *s->pkts);
    s->lens = malloc(cap * sizeof *s->lens);
    s->npkts = 0;
    for (size_t off = 8; off < s->len;) {
        if (s->len - off < 4) {
            snprintf(why, whysize, "length of packet %zu cut at byte %zu", s->npkts, off);
            return -1;
        }
        const uint8_t *h = s->data + off;
        size_t l = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        off += 4;
        if (l > s->len - off) {
            snprintf(why, whysize, "packet %zu of %zu bytes runs past the end", s->npkts, l);
            return -1;
        }
        if (s->npkts == cap) {
            cap *= 2;
            s->pkts = realloc(s->pkts, cap * sizeof *s->pkts);
            s->lens = realloc(s->lens, cap * sizeof *s->lens);
        }
        if (!s->pkts || !s->lens) {
            snprintf(why, whysize, "out of memory");
            return -1;
        }
        s->pkts[s->npkts] = s->data + off;
        s->lens[s->npkts++] = l;
        off += l;
    }
    return 0;
}

int bl_stream_load(const char *path, bl_stream *s, char *why, size_t whysize)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whysize, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16;
    s->data = malloc(cap);
    size_t r;
    while (s->data && (r = fread(s->data + s->len, 1, cap - s->len, f)) > 0) {
        s->len += r;
        if (s->len == cap) s->data = realloc(s->data, cap *= 2);
    }
    fclose(f);
    if (!s->data) {
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    return bl_stream_parse(s, why, whysize);
}

void bl_stream_free(bl_stream *s)
{
    free(s->data);
    free(s->pkts);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

void bl_packet_fix_crc(uint8_t *pkt, size_t len)
{
    if (len < 1 + 19 + 4) return;
    uint32_t c = crc32_ieee(pkt + 1, len - 1 - 4);
    for (int i = 0; i < 4; i++) pkt[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

/* ======================================================================================
 * The decoded stream as text
 * ====================================================================================== */

typedef struct out {
    char *p;
    size_t len, cap;
} out;

static void put(out *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t nc = (o->len + n + 1) * 2;
        char *np = realloc(o->p, nc);
        if (!np) return;
        o->p = np;
        o->cap = nc;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

static void printable(out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') puts_(o, "\\n");
        else if (c < 0x20 || c == 0x7F) {
            char b[8];
            snprintf(b, sizeof b, "\\x%02x", c);
            puts_(o, b);
        } else put(o, s + i, 1);
    }
}

/* The last column list printed per table name, so a map is shown when it changes. */
typedef struct seen {
    char name[200];
    char *cols;
} seen;

static void map_line(out *o, w2l__bl_tmap *tm, seen *sn, size_t *nseen, size_t cap)
{
    out c = {0};
    for (size_t i = 0; i < tm->ncols; i++) {
        char t[96];
        w2l__bl_col_type_text(&tm->cols[i], t, sizeof t);
        if (i) puts_(&c, ", ");
        puts_(&c, tm->cols[i].name);
        puts_(&c, " ");
        puts_(&c, t);
        if (!tm->cols[i].nullable) puts_(&c, " not null");
    }
    if (tm->npk) {
        puts_(&c, "; pk");
        for (size_t i = 0; i < tm->npk; i++) {
            puts_(&c, i ? "," : " ");
            puts_(&c, tm->cols[tm->pk[i]].name);
        }
    }
    char name[200];
    snprintf(name, sizeof name, "%s.%s", tm->db, tm->table);
    size_t k = 0;
    while (k < *nseen && strcmp(sn[k].name, name) != 0) k++;
    if (k < *nseen && sn[k].cols && c.p && strcmp(sn[k].cols, c.p) == 0) {
        free(c.p);
        return;
    }
    puts_(o, "MAP ");
    puts_(o, name);
    puts_(o, ": ");
    if (c.p) puts_(o, c.p);
    puts_(o, "\n");
    if (k == *nseen) {
        if (k == cap) {
            free(c.p);
            return;
        }
        snprintf(sn[k].name, sizeof sn[k].name, "%s", name);
        sn[k].cols = NULL;
        (*nseen)++;
    }
    free(sn[k].cols);
    sn[k].cols = c.p;
}

static const w2l__type_opts OPTS = {0, 1}; /* TIME as text: negative and large TIMEs fit */

/* Sets each column's ice type from its table-map type, once per decoded map. */
static w2l_rc map_types(w2l__bl_tmap *tm, w2l_error *err)
{
    if (tm->user) return W2L_OK;
    for (size_t i = 0; i < tm->ncols; i++) {
        char t[96];
        w2l__bl_col_type_text(&tm->cols[i], t, sizeof t);
        W2L_TRY(w2l__mysql_type_map_text(t, strlen(t), &OPTS, tm->cols[i].name, NULL,
                                         &tm->cols[i].ice, NULL, err));
    }
    tm->user = tm; /* marks the map as typed; nothing to free */
    return W2L_OK;
}

static w2l_rc image_line(out *o, const w2l__bl_event *ev, const char *op, const uint8_t *bitmap,
                         const uint8_t **p, w2l_value *vals, uint8_t *present, w2l__bl_scratch *sc,
                         w2l_error *err)
{
    const w2l__bl_tmap *tm = ev->tmap;
    w2l__bl_scratch_reset(sc);
    W2L_TRY(w2l__bl_decode_row(tm, bitmap, p, ev->end, vals, present, NULL, sc, err));
    char head[300];
    snprintf(head, sizeof head, "%s.%s %s ", tm->db, tm->table, op);
    puts_(o, head);
    for (size_t i = 0; i < tm->ncols; i++) {
        if (i) puts_(o, "|");
        if (!(present[i / 8] >> (i % 8) & 1)) {
            puts_(o, "-");
            continue;
        }
        char small[256];
        size_t n = w2l_value_format(tm->cols[i].ice, &vals[i], small, sizeof small);
        if (n < sizeof small) printable(o, small, n);
        else {
            char *big = malloc(n + 1);
            if (!big) return w2l__fail(err, W2L_NOMEM, "out of memory");
            w2l_value_format(tm->cols[i].ice, &vals[i], big, n + 1);
            printable(o, big, n);
            free(big);
        }
    }
    puts_(o, "\n");
    return W2L_OK;
}

static w2l_rc rows_lines(out *o, const w2l__bl_event *ev, w2l__bl_scratch *sc, w2l_error *err)
{
    const w2l__bl_tmap *tm = ev->tmap;
    if (!tm) return w2l__fail(err, W2L_CORRUPT, "rows event for table id %llu, never mapped",
                              (unsigned long long)ev->table_id);
    if (ev->rows_ncols != tm->ncols)
        return w2l__fail(err, W2L_CORRUPT, "rows event of %zu columns for %s.%s of %zu",
                         ev->rows_ncols, tm->db, tm->table, tm->ncols);
    size_t n = tm->ncols ? tm->ncols : 1;
    w2l_value *vals = calloc(n, sizeof *vals);
    uint8_t *present = calloc(n / 8 + 1, 1);
    w2l_rc rc = vals && present ? W2L_OK : w2l__fail(err, W2L_NOMEM, "out of memory");
    const uint8_t *p = ev->data;
    while (rc == W2L_OK && p < ev->end) {
        if (ev->rows_kind == BL_ROWS_UPDATE) {
            rc = image_line(o, ev, "UB", ev->bitmap1, &p, vals, present, sc, err);
            if (rc == W2L_OK) rc = image_line(o, ev, "UA", ev->bitmap2, &p, vals, present, sc, err);
        } else
            rc = image_line(o, ev, ev->rows_kind == BL_ROWS_DELETE ? "D" : "I", ev->bitmap1, &p,
                            vals, present, sc, err);
    }
    free(vals);
    free(present);
    return rc;
}

w2l_rc bl_replay_text(unsigned port, char **text, w2l_error *err)
{
    out o = {0};
    puts_(&o, "");
    w2l__my_params mp = {.host = "127.0.0.1", .port = port, .user = "cdc", .pass = "none",
                         .connect_timeout_s = 5, .read_timeout_s = 10};
    w2l__bl_opts bo = {.server_id = 4242, .file = "binlog.000002", .pos = 4, .non_block = 1};
    w2l__my *conn = NULL;
    w2l__bl *bl = NULL;
    w2l__bl_scratch sc = {0};
    seen sn[32];
    size_t nseen = 0;
    uint64_t first_seq = 0;
    int have_seq = 0;
    w2l_rc rc = w2l__my_connect(&mp, &conn, err);
    if (rc == W2L_OK) rc = w2l__bl_open(conn, &bo, &bl, err);
    while (rc == W2L_OK) {
        w2l__bl_event ev;
        rc = w2l__bl_fetch(bl, &ev, err);
        if (rc != W2L_OK) break;
        char line[300];
        switch (ev.kind) {
        case BL_EV_ROTATE:
            puts_(&o, "ROTATE ");
            printable(&o, ev.file, ev.file_len);
            snprintf(line, sizeof line, " %llu\n", (unsigned long long)ev.pos);
            puts_(&o, line);
            break;
        case BL_EV_FDE: puts_(&o, "FDE\n"); break;
        case BL_EV_GTID_LIST:
            snprintf(line, sizeof line, "GTID_LIST %zu\n", ev.ngtids);
            puts_(&o, line);
            break;
        case BL_EV_GTID:
            if (!have_seq) {
                first_seq = ev.gtid.seq;
                have_seq = 1;
            }
            snprintf(line, sizeof line, "GTID %u-%u-+%llu%s%s%s%s", ev.gtid.domain, ev.gtid.server,
                     (unsigned long long)(ev.gtid.seq - first_seq),
                     ev.gflags & BL_GTID_STANDALONE ? " standalone" : "",
                     ev.gflags & BL_GTID_DDL ? " ddl" : "",
                     ev.gflags & BL_GTID_PREPARED_XA ? " xa-prepared" : "",
                     ev.gflags & BL_GTID_COMPLETED_XA ? " xa-completed" : "");
            puts_(&o, line);
            if (ev.xid_len) {
                puts_(&o, " xid ");
                printable(&o, ev.xid, ev.xid_len);
            }
            puts_(&o, "\n");
            break;
        case BL_EV_QUERY:
            puts_(&o, "QUERY ");
            printable(&o, ev.db, ev.db_len);
            puts_(&o, ": ");
            printable(&o, ev.sql, ev.sql_len);
            puts_(&o, "\n");
            break;
        case BL_EV_XID: puts_(&o, "XID\n"); break;
        case BL_EV_XA_PREPARE:
            puts_(&o, "XA_PREPARE ");
            printable(&o, ev.xid, ev.xid_len);
            puts_(&o, "\n");
            break;
        case BL_EV_TABLE_MAP:
            rc = map_types(ev.tmap, err);
            if (rc == W2L_OK) map_line(&o, ev.tmap, sn, &nseen, sizeof sn / sizeof *sn);
            break;
        case BL_EV_ROWS: rc = rows_lines(&o, &ev, &sc, err); break;
        case BL_EV_STOP: puts_(&o, "STOP\n"); break;
        default: break; /* heartbeats, BINLOG_CHECKPOINT and other events we do not use */
        }
    }
    if (rc == W2L_DONE) rc = W2L_OK;
    w2l__bl_close(bl);
    w2l__my_close(conn);
    w2l__bl_scratch_free(&sc);
    for (size_t i = 0; i < nseen; i++) free(sn[i].cols);
    *text = o.p;
    return rc;
}
