/*
 * MySQL GTID sets ("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,...:tag:1-3"): the position of
 * a MySQL source, the set COM_BINLOG_DUMP_GTID sends and a PREVIOUS_GTIDS event holds
 * (mysql_gtid.c). MariaDB's GTID state is another model (w2l__gtid_* in mysql_int.h).
 */
#ifndef W2L_MYSQL_GTID_H
#define W2L_MYSQL_GTID_H

#include "../common/common.h"

typedef struct w2l__mygtids w2l__mygtids;

w2l__mygtids *w2l__mygtids_new(void); /* NULL when out of memory */
void w2l__mygtids_free(w2l__mygtids *s); /* NULL is a no-op */
/* Adds the set written as text (MySQL's gtid_executed syntax: UUID[:TAG]:N[-M][:...], sets
 * joined by ","; a tag applies to the intervals after it; white space and newlines allowed,
 * as the server prints them; "" is the empty set). W2L_CONFIG naming the text and the
 * offending part; what was parsed before the error stays added. */
w2l_rc w2l__mygtids_parse(w2l__mygtids *s, const char *text, w2l_error *err);
/* Adds one transaction: source UUID sid, tag (tag_len 0: untagged; any case, kept in lower
 * case), number gno in 1..2^63-2. W2L_CORRUPT for a bad tag or number (they come from
 * events), W2L_NOMEM. Adding the next number of a UUID is O(1). */
w2l_rc w2l__mygtids_add(w2l__mygtids *s, const uint8_t sid[16], const char *tag, size_t tag_len,
                        int64_t gno, w2l_error *err);
/* 1 when the set holds that transaction (tag compared without case). */
int w2l__mygtids_contains(const w2l__mygtids *s, const uint8_t sid[16], const char *tag,
                          size_t tag_len, int64_t gno);
int w2l__mygtids_empty(const w2l__mygtids *s);
/* The canonical text (UUIDs lower case and sorted, tags sorted, intervals merged), as
 * MySQL prints gtid_executed without newlines; from w2l__malloc, NULL when out of memory. */
char *w2l__mygtids_format(const w2l__mygtids *s);
/* The binary form COM_BINLOG_DUMP_GTID sends and PREVIOUS_GTIDS holds (the tagged format
 * of 8.3+ when a tag is present, else the classic one), appended to out. */
w2l_rc w2l__mygtids_encode(const w2l__mygtids *s, w2l_buf *out, w2l_error *err);
/* Adds the set of a binary form (either format). W2L_CORRUPT when malformed (truncated,
 * bytes left over, an empty or out-of-range interval, a bad tag). */
w2l_rc w2l__mygtids_decode(w2l__mygtids *s, const uint8_t *p, size_t n, w2l_error *err);

#endif
