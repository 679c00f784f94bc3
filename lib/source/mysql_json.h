/*
 * MySQL's binary JSON (the value of a JSON column in a MySQL row event, and the diffs of
 * PARTIAL_UPDATE_ROWS) as JSON text (mysql_json.c, whose head comment gives the byte
 * grammar and the text format: what `SELECT json_col` prints on MySQL 8, e.g.
 * `{"a": 1, "b": [1, 2]}`). MariaDB's JSON columns are text and never come here.
 */
#ifndef W2L_MYSQL_JSON_H
#define W2L_MYSQL_JSON_H

#include "../common/common.h"

/* The document p..p+n as JSON text, appended to out. An empty value (n 0) is JSON null, as
 * the server writes it. W2L_CORRUPT naming what is malformed and its byte offset (also for
 * nesting deeper than MySQL's 100 levels); W2L_NOMEM. On failure out keeps its length. */
w2l_rc w2l__myjson_text(const uint8_t *p, size_t n, w2l_buf *out, w2l_error *err);
/* Applies the JSON diffs of one column of a PARTIAL_UPDATE_ROWS after image (diffs..+dlen:
 * the column's bytes after its length, as the event writes them; dlen 0: no change) to the
 * document before..+blen (binary, the column of the before image), appending the result as
 * JSON text to out, rendered as w2l__myjson_text renders. W2L_CORRUPT for malformed diffs,
 * a path with wildcards or ranges, or a path the document lacks; W2L_NOMEM. On failure out
 * keeps its length. */
w2l_rc w2l__myjson_apply_diffs(const uint8_t *before, size_t blen, const uint8_t *diffs,
                               size_t dlen, w2l_buf *out, w2l_error *err);

#endif
