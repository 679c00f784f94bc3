/*
 * The "rest" catalog (Iceberg REST catalog protocol), internal side:
 *   rest_update.c   a commit's requirements and updates, from two table metadata documents
 *   catalog_rest.c  the catalog plug-in: configuration, OAuth2, requests, commits
 * Described for users in w2l-catalogs(7).
 */
#ifndef W2L_ICE_REST_H
#define W2L_ICE_REST_H

#include "../json/json.h"
#include "iceberg.h"

extern const w2l_catalog_methods w2l__catalog_rest;

/* The requirements and updates of a CommitTableRequest that turn table metadata base into
 * next (both parsed metadata documents; base NULL: the table is created, requirement
 * assert-create and every update from an empty table). Requirements guard everything the
 * updates build on: assert-table-uuid, assert-ref-snapshot-id of main, assert-current-
 * schema-id, assert-last-assigned-field-id, assert-default-spec-id. Updates, in the order
 * servers apply them: assign-uuid, upgrade-format-version, add-schema, set-current-schema,
 * add-spec, set-default-spec, add-sort-order, set-default-sort-order, set-location,
 * set-properties, remove-properties, add-snapshot, remove-snapshot-ref, set-snapshot-ref,
 * remove-snapshots. *requirements and *updates are fresh JSON arrays. W2L_MISUSE when the
 * two are different tables (table-uuid), W2L_CORRUPT when next lacks what a table needs. */
w2l_rc w2l__rest_diff(const w2l__json *base, const w2l__json *next, w2l__json **requirements,
                      w2l__json **updates, w2l_error *err);

/* When cat is a rest catalog asking for vended credentials (catalog.access-delegation):
 * stages table ns.table (a CreateTableRequest with stage-create from its first metadata, the
 * namespace made when missing) so that the credentials for its location are registered
 * before its files are written; the create itself is the commit. Otherwise nothing. */
w2l_rc w2l__rest_stage_create(w2l_catalog *cat, const char *ns, const char *table,
                              const char *metadata, size_t len, w2l_error *err);

/* 1 when table metadata m has the snapshot id. */
int w2l__rest_has_snapshot(const w2l__json *m, int64_t id);
/* The newest snapshot next adds over base (by snapshot id), or -1 when it adds none. */
int64_t w2l__rest_added_snapshot(const w2l__json *base, const w2l__json *next);

/* One table of a multi-table commit: base and next parsed metadata documents (base of an
 * existing table: transactions never create). */
typedef struct w2l__rest_change {
    const char *ns, *table;
    const w2l__json *base, *next;
} w2l__rest_change;

/* The CommitTransactionRequest text {"table-changes":[CommitTableRequest, ...]}: each with
 * its identifier, requirements and updates (w2l__rest_diff). W2L_MISUSE for a create. */
w2l_rc w2l__rest_txn_body(const w2l__rest_change *ch, size_t n, char **text, w2l_error *err);

/* What an answer to POST /v1/{prefix}/transactions/commit means (status 0: none came). */
typedef enum w2l__rest_txn_outcome {
    W2L__REST_TXN_DONE = 1, /* 2xx: every table committed */
    W2L__REST_TXN_REFUSED,  /* 404 (not a table's), 405, 501: no such endpoint, nothing applied */
    W2L__REST_TXN_CONFLICT, /* 409, or 404 naming a table: nothing applied */
    W2L__REST_TXN_UNKNOWN,  /* 5xx or no answer: reload and decide */
    W2L__REST_TXN_FAILED    /* another status: an error, nothing applied */
} w2l__rest_txn_outcome;
w2l__rest_txn_outcome w2l__rest_txn_answer(long status, const char *body, size_t len);

/* A catalog's error answer as a library error: "rest catalog: METHOD PATH: HTTP STATUS
 * TYPE: MESSAGE" (type and message from the ErrorModel {"error":{"message","type","code"}}
 * or error and error_description of an OAuth2 error, when the body is one, else the body's
 * start). Codes: 404 W2L_NOTFOUND, 409 W2L_CONFLICT,
 * 401/403 and 400 W2L_CONFIG, 429 and 5xx W2L_UNAVAILABLE (retriable), others W2L_ERROR. */
w2l_rc w2l__rest_fail(w2l_error *err, const char *method, const char *path, long status,
                      const char *body, size_t len);

#endif
