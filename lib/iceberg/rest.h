/*
 * The "rest" catalog (Iceberg REST catalog protocol), internal side:
 *   rest_update.c   a commit's requirements and updates, from two table metadata documents
 *   rest_call.c     requests to the server: OAuth2 tokens, SigV4 signing, retries, paths
 *   rest_commit.c   commits: one table's, and several tables' in one transaction
 *   catalog_rest.c  the catalog plug-in: configuration, namespaces, loads and vended
 *                   credentials, drop, rename, lists
 * Described for users in w2l-catalogs(7).
 */
#ifndef W2L_ICE_REST_H
#define W2L_ICE_REST_H

#include "../common/thread.h"
#include "../io/s3.h"
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

/* ------------------------------------------------ the plug-in's own parts ---- */

#define W2L__REST_MAX_HEADERS 16 /* catalog.headers */

/* A rest catalog handle (the plug-in's instance, catalog_rest.c); its token is read and
 * renewed under mu, everything else is set at open. */
typedef struct w2l__rest_catalog {
    w2l_catalog base;
    w2l_fileio *io;
    w2l__http *http;
    char *uri;        /* without a trailing '/' */
    char *warehouse;  /* catalog.warehouse, NULL when none */
    char *prefix;     /* path prefix from the config ("" none), ends without '/' */
    char *credential; /* ID:SECRET */
    char *oauth_uri, *scope;
    char *headers_text; /* catalog.headers, split in place */
    w2l__http_header extra[W2L__REST_MAX_HEADERS];
    size_t nextra;
    char **endpoints; /* "METHOD /v1/{prefix}/..." the server lists; NULL: all */
    size_t nendpoints;
    int listed;
    mtx_t mu; /* the token */
    int have_mu;
    char *token;
    int64_t token_expires_ms; /* 0: no expiry known */
    /* SigV4 (catalog.rest.sigv4-enabled): credentials of the AWS chain */
    w2l__cred_chain *aws;
    char *sign_region, *sign_name;
    char *delegation; /* catalog.access-delegation: "vended-credentials", NULL none */
    char *group;      /* "URI warehouse": whose credentials, in lib/io/s3_vend.c */
    int attached;     /* a refresher of the group's credentials */
    char *host;      /* of uri: "glue.us-east-1.amazonaws.com" */
    char *base_path; /* of uri, "" or "/iceberg" */
} w2l__rest_catalog;

/* One request to the catalog server and its answer (w2l__rest_do). */
typedef struct w2l__rest_call {
    const char *method;
    const char *path;  /* after the base URI: "/v1/config" */
    const char *query; /* without '?', NULL none */
    const char *body;  /* JSON, NULL none */
    int idempotent;    /* retried on 429/503 and transport errors */
    int delegate;      /* a table load or create: X-Iceberg-Access-Delegation when asked */
    /* out */
    long status;     /* 0: no answer */
    int unknown;     /* no answer, and the request may have reached the server */
    w2l_buf answer;
} w2l__rest_call;

/* One request with its retries. W2L_OK when an answer came (any status: k->status);
 * W2L_UNAVAILABLE (retriable) when none did (k->unknown tells whether it may have been
 * acted on). k->answer is the caller's to release. */
w2l_rc w2l__rest_do(w2l__rest_catalog *c, w2l__rest_call *k, w2l_error *err);
/* w2l__rest_do, then any status but 2xx as an error naming the call. *j (optional)
 * receives the parsed answer. */
w2l_rc w2l__rest_do_ok(w2l__rest_catalog *c, w2l__rest_call *k, w2l__json **j, w2l_error *err);
/* May the endpoint ("POST /v1/{prefix}/tables/rename") be called? W2L_CONFIG when the
 * server lists its endpoints and not this one. */
w2l_rc w2l__rest_need(w2l__rest_catalog *c, const char *endpoint, w2l_error *err);
/* "/v1/PREFIX/namespaces[/NS[/tables[/TABLE]]]" (the part after the base URI) into b
 * (emptied first, NUL-terminated). */
w2l_rc w2l__rest_path(w2l__rest_catalog *c, w2l_buf *b, const char *ns, const char *table,
                      int tables, w2l_error *err);
/* Appends s form- or path-encoded (everything but A-Z a-z 0-9 - . _ ~ as %XX). */
w2l_rc w2l__rest_enc(w2l_buf *b, const char *s, w2l_error *err);
/* Appends the path form of a namespace: its '.'-separated levels encoded, joined by %1F. */
w2l_rc w2l__rest_enc_ns(w2l_buf *b, const char *ns, w2l_error *err);
/* A JSON array of the namespace's levels (NULL when out of memory). */
w2l__json *w2l__rest_ns_array(const char *ns);
/* {"namespace":[..],"name":table} (NULL when out of memory). */
w2l__json *w2l__rest_identifier(const char *ns, const char *table);
/* Sleeps ms milliseconds (a retry's backoff). */
void w2l__rest_pause_ms(long ms);
/* Frees *p, overwritten first (it may be a secret), and sets it NULL. */
void w2l__rest_free_secret(char **p);

/* GET the table: its metadata-location appended to location (when not NULL; kept
 * NUL-terminated) and, when answer is not NULL, its parsed answer (LoadTableResult). The
 * storage credentials it carries go to the registry. */
w2l_rc w2l__rest_load(w2l__rest_catalog *c, const char *ns, const char *table,
                      w2l_buf *location, w2l__json **answer, w2l_error *err);
/* Makes ns and each level above it (an existing one is fine). */
w2l_rc w2l__rest_ensure_namespace(w2l__rest_catalog *c, const char *ns, w2l_error *err);

/* The plug-in's commit_table and commit_tables (rest_commit.c). */
w2l_rc w2l__rest_commit_table(w2l_catalog *self, const char *ns, const char *table,
                              const char *base, const char *metadata, size_t len,
                              w2l_buf *new_location, w2l_error *err);
w2l_rc w2l__rest_commit_tables(w2l_catalog *self, w2l_catalog_commit *items, size_t n,
                               w2l_error *err);

#endif
