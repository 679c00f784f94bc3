/*
 * canal-json's fast path against its tree path (canal_diff.c), for the cdc_json suite and
 * fuzz/fuzz_canal.c.
 */
#ifndef W2L_TEST_CANAL_DIFF_H
#define W2L_TEST_CANAL_DIFF_H

#include <stddef.h>

#include "source/cdc_json.h"

/* Decodes the len bytes of text, one message per line, with two canal-json decoders made
 * with opts (NULL: defaults), one of them without the fast path (replay: both replay).
 * NULL when after every message both said and held the same; else what differed first
 * (static text, valid until the next call). *taken (when not NULL): the messages the fast
 * path decoded. */
const char *canal_diff(const char *text, size_t len, const w2l__cdc_opts *opts, int replay,
                       size_t *taken);

#endif
