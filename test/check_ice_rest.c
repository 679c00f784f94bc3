/*
 * The rest catalog's pieces without a catalog server: lib/iceberg/rest_update.c (a commit's
 * requirements and updates from two table metadata documents: a create, an append, a
 * schema change, an expiry, a first snapshot, another table) and the error mapping
 * (ErrorModel, OAuth2 errors, bodies that are neither); then lib/iceberg/catalog_rest.c
 * against canned answers (test/support/http_stub.c): /v1/config's prefix and endpoints, a
 * multi-level namespace's path, the OAuth2 token and its refresh on a 401, an endpoint the
 * server does not list, a config error naming the endpoint and status, SigV4 signing (the
 * signature of what was sent), and commits whose answer is refused or lost, settled by
 * reloading the table: sent again when it did not move, done when it holds the snapshot,
 * a conflict when another writer moved it, outcome unknown when the reload fails; the same
 * for multi-table commits (POST transactions/commit: the CommitTransactionRequest body, the
 * answers' meaning, a 503 sent again, a lost answer that landed, a 409, a failed reload, the
 * endpoint refused or not listed). Commits against a catalog that writes metadata, with
 * lost answers, are test/interop/rest.test.mjs and rest_txn.test.mjs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/rest.h"
#include "io/s3.h"
#include "support/http_stub.h"
#include "support/support.h"

/* ---- metadata fixtures ---- */

#define SCHEMA0                                                                            \
    "{\"type\":\"struct\",\"schema-id\":0,\"identifier-field-ids\":[1],\"fields\":["        \
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"                      \
    "{\"id\":2,\"name\":\"v\",\"required\":false,\"type\":\"string\"}]}"
#define SCHEMA1                                                                            \
    "{\"type\":\"struct\",\"schema-id\":1,\"identifier-field-ids\":[1],\"fields\":["        \
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"                      \
    "{\"id\":2,\"name\":\"v\",\"required\":false,\"type\":\"string\"},"                    \
    "{\"id\":3,\"name\":\"w\",\"required\":false,\"type\":\"int\"}]}"
#define SNAP(id, parent, seq)                                                              \
    "{\"snapshot-id\":" #id parent ",\"sequence-number\":" #seq ",\"timestamp-ms\":1,"     \
    "\"manifest-list\":\"/wh/db/t/metadata/snap-" #id ".avro\",\"summary\":{\"operation\":" \
    "\"append\",\"w2l.checkpoint-id\":\"" #seq "\"},\"schema-id\":0}"
#define SNAP1 SNAP(8000000000000000001, "", 1)
#define SNAP2 SNAP(8000000000000000002, ",\"parent-snapshot-id\":8000000000000000001", 2)

/* A v2 table: schemas, current schema, snapshots (JSON array text), main (or -1), props. */
static w2l__json *meta(const char *schemas, int cur_schema, int last_col, const char *snaps,
                       const char *main, const char *props)
{
    char text[8192];
    int n = snprintf(
        text, sizeof text,
        "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
        "\"location\":\"/wh/db/t\",\"last-sequence-number\":2,\"last-updated-ms\":5,"
        "\"last-column-id\":%d,\"schemas\":[%s],\"current-schema-id\":%d,"
        "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],\"default-spec-id\":0,"
        "\"last-partition-id\":999,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
        "\"default-sort-order-id\":0,\"properties\":{%s},\"current-snapshot-id\":%s,"
        "\"snapshots\":[%s],\"snapshot-log\":[],\"metadata-log\":[],\"refs\":{%s%s%s}}",
        last_col, schemas, cur_schema, props, main, snaps,
        strcmp(main, "-1") ? "\"main\":{\"snapshot-id\":" : "", strcmp(main, "-1") ? main : "",
        strcmp(main, "-1") ? ",\"type\":\"branch\"}" : "");
    ck_assert_int_lt(n, (int)sizeof text);
    w2l__json *j;
    w2l_error err;
    ck_assert_ok(w2l__json_parse(text, strlen(text), &j, &err), err);
    return j;
}

/* The diff's two lists, printed compactly. */
static void diff(const w2l__json *base, const w2l__json *next, char **req, char **upd)
{
    w2l__json *r, *u;
    w2l_error err;
    ck_assert_ok(w2l__rest_diff(base, next, &r, &u, &err), err);
    *req = w2l__json_print(r, 0);
    *upd = w2l__json_print(u, 0);
    w2l__json_free(r);
    w2l__json_free(u);
}

/* The "action" values of an updates text, in order, joined by ' '. */
static void actions(const char *upd, char *out, size_t size)
{
    w2l__json *j;
    w2l_error err;
    ck_assert_ok(w2l__json_parse(upd, strlen(upd), &j, &err), err);
    out[0] = '\0';
    for (const w2l__json *e = w2l__json_first(j); e; e = w2l__json_next(e)) {
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s", n ? " " : "",
                 w2l__json_str(w2l__json_get(e, "action")));
    }
    w2l__json_free(j);
}

START_TEST(create_is_every_update_after_assert_create)
{
    w2l__json *next = meta(SCHEMA0, 0, 2, "", "-1", "\"write.format.default\":\"parquet\"");
    char *req, *upd, acts[1024];
    diff(NULL, next, &req, &upd);
    ck_assert_str_eq(req, "[{\"type\":\"assert-create\"}]");
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "assign-uuid upgrade-format-version add-schema set-current-schema "
                           "add-spec set-default-spec add-sort-order set-default-sort-order "
                           "set-location set-properties");
    /* the schema whole, the ids of what was just added as -1 ("the last added") */
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"assign-uuid\",\"uuid\":\"9c12d441-03fe-"
                                      "4693-9a96-a0705ddf69c1\"}"));
    ck_assert_ptr_nonnull(strstr(upd, "\"identifier-field-ids\":[1]"));
    ck_assert_ptr_nonnull(strstr(upd, "\"last-column-id\":2}"));
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"set-current-schema\",\"schema-id\":-1}"));
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"set-default-spec\",\"spec-id\":-1}"));
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"set-location\",\"location\":\"/wh/db/t\"}"));
    ck_assert_ptr_nonnull(
        strstr(upd, "{\"action\":\"set-properties\",\"updates\":{\"write.format.default\":"
                    "\"parquet\"}}"));
    free(req), free(upd);
    w2l__json_free(next);
}
END_TEST

START_TEST(append_asserts_the_base_and_adds_the_snapshot)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, SNAP1, "8000000000000000001", "\"a\":\"1\"");
    w2l__json *next = meta(SCHEMA0, 0, 2, SNAP1 "," SNAP2, "8000000000000000002",
                           "\"a\":\"2\",\"b\":\"x\"");
    char *req, *upd, acts[512];
    diff(base, next, &req, &upd);
    ck_assert_str_eq(req,
                     "[{\"type\":\"assert-table-uuid\",\"uuid\":\"9c12d441-03fe-4693-9a96-"
                     "a0705ddf69c1\"},{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\","
                     "\"snapshot-id\":8000000000000000001},{\"type\":\"assert-current-schema-id\","
                     "\"current-schema-id\":0},{\"type\":\"assert-last-assigned-field-id\","
                     "\"last-assigned-field-id\":2},{\"type\":\"assert-default-spec-id\","
                     "\"default-spec-id\":0}]");
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "set-properties add-snapshot set-snapshot-ref");
    ck_assert_ptr_nonnull(strstr(upd, "\"updates\":{\"a\":\"2\",\"b\":\"x\"}"));
    /* the snapshot as it is, the 63-bit ids exact */
    ck_assert_ptr_nonnull(strstr(upd, "\"snapshot-id\":8000000000000000002,\"parent-snapshot-id\":"
                                      "8000000000000000001,\"sequence-number\":2"));
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\","
                                      "\"snapshot-id\":8000000000000000002,\"type\":\"branch\"}"));
    ck_assert_int_eq(w2l__rest_added_snapshot(base, next), 8000000000000000002LL);
    ck_assert_int_eq(w2l__rest_added_snapshot(next, next), -1);
    ck_assert(w2l__rest_has_snapshot(next, 8000000000000000002LL));
    ck_assert(!w2l__rest_has_snapshot(base, 8000000000000000002LL));
    free(req), free(upd);
    w2l__json_free(base);
    w2l__json_free(next);
}
END_TEST

START_TEST(first_snapshot_asserts_main_is_absent)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, "", "-1", "");
    w2l__json *next = meta(SCHEMA0, 0, 2, SNAP1, "8000000000000000001", "");
    char *req, *upd, acts[256];
    diff(base, next, &req, &upd);
    ck_assert_ptr_nonnull(
        strstr(req, "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":null}"));
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "add-snapshot set-snapshot-ref");
    free(req), free(upd);
    w2l__json_free(base);
    w2l__json_free(next);
}
END_TEST

START_TEST(schema_change_adds_the_schema_and_makes_it_current)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, SNAP1, "8000000000000000001", "");
    w2l__json *next = meta(SCHEMA0 "," SCHEMA1, 1, 3, SNAP1, "8000000000000000001", "");
    char *req, *upd, acts[256];
    diff(base, next, &req, &upd);
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "add-schema set-current-schema");
    ck_assert_ptr_nonnull(strstr(upd, "\"name\":\"w\""));
    ck_assert_ptr_nonnull(strstr(upd, "\"last-column-id\":3}"));
    ck_assert_ptr_nonnull(strstr(upd, "{\"action\":\"set-current-schema\",\"schema-id\":-1}"));
    ck_assert_ptr_nonnull(strstr(req, "\"current-schema-id\":0}"));
    free(req), free(upd);
    /* back to an older schema: no add, its own id */
    w2l__json *back = meta(SCHEMA0 "," SCHEMA1, 0, 3, SNAP1, "8000000000000000001", "");
    diff(next, back, &req, &upd);
    ck_assert_str_eq(upd, "[{\"action\":\"set-current-schema\",\"schema-id\":0}]");
    free(req), free(upd);
    w2l__json_free(back);
    w2l__json_free(base);
    w2l__json_free(next);
}
END_TEST

START_TEST(expiry_removes_snapshots_and_properties)
{
    w2l__json *base =
        meta(SCHEMA0, 0, 2, SNAP1 "," SNAP2, "8000000000000000002", "\"a\":\"1\",\"gone\":\"x\"");
    w2l__json *next = meta(SCHEMA0, 0, 2, SNAP2, "8000000000000000002", "\"a\":\"1\"");
    char *req, *upd;
    diff(base, next, &req, &upd);
    ck_assert_str_eq(upd, "[{\"action\":\"remove-properties\",\"removals\":[\"gone\"]},"
                          "{\"action\":\"remove-snapshots\",\"snapshot-ids\":"
                          "[8000000000000000001]}]");
    free(req), free(upd);
    /* nothing changed: no update, the requirements still */
    diff(next, next, &req, &upd);
    ck_assert_str_eq(upd, "[]");
    ck_assert_ptr_nonnull(strstr(req, "assert-table-uuid"));
    free(req), free(upd);
    w2l__json_free(base);
    w2l__json_free(next);
}
END_TEST

START_TEST(another_table_or_bad_metadata_is_refused)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, "", "-1", "");
    w2l__json *other, *bad, *r, *u;
    w2l_error err;
    const char *o = "{\"format-version\":2,\"table-uuid\":\"00000000-0000-4000-8000-000000000000\","
                    "\"location\":\"/wh/db/t\",\"schemas\":[]}";
    ck_assert_ok(w2l__json_parse(o, strlen(o), &other, &err), err);
    ck_assert_int_eq(w2l__rest_diff(base, other, &r, &u, &err), W2L_MISUSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "is not table"));
    ck_assert_ptr_null(r);
    const char *b = "{\"format-version\":2,\"location\":\"/wh/db/t\"}";
    ck_assert_ok(w2l__json_parse(b, strlen(b), &bad, &err), err);
    ck_assert_int_eq(w2l__rest_diff(NULL, bad, &r, &u, &err), W2L_CORRUPT);
    w2l__json_free(base);
    w2l__json_free(other);
    w2l__json_free(bad);
}
END_TEST

/* ---- error mapping ---- */

START_TEST(errors_name_endpoint_status_type_and_message)
{
    w2l_error err;
    const char *e404 = "{\"error\":{\"message\":\"Table does not exist: db.t\","
                       "\"type\":\"NoSuchTableException\",\"code\":404}}";
    ck_assert_int_eq(w2l__rest_fail(&err, "GET", "/v1/ns/tables/t", 404, e404, strlen(e404)),
                     W2L_NOTFOUND);
    ck_assert_str_eq(err.msg, "rest catalog: GET /v1/ns/tables/t: HTTP 404 NoSuchTableException: "
                              "Table does not exist: db.t");
    ck_assert_int_eq(err.code, W2L_NOTFOUND);
    const char *e409 = "{\"error\":{\"message\":\"Requirement failed: branch main has changed\","
                       "\"type\":\"CommitFailedException\",\"code\":409}}";
    ck_assert_int_eq(w2l__rest_fail(&err, "POST", "p", 409, e409, strlen(e409)), W2L_CONFLICT);
    ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 409 CommitFailedException: Requirement failed"));
    ck_assert_int_eq(w2l__rest_fail(&err, "GET", "p", 503, "", 0), W2L_UNAVAILABLE);
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_str_eq(err.msg, "rest catalog: GET p: HTTP 503");
    ck_assert_int_eq(w2l__rest_fail(&err, "GET", "p", 429, NULL, 0), W2L_UNAVAILABLE);
    ck_assert_int_eq(w2l__rest_fail(&err, "GET", "p", 403, "nope", 4), W2L_CONFIG);
    ck_assert_str_eq(err.msg, "rest catalog: GET p: HTTP 403: nope");
    ck_assert(!(err.flags & W2L_ERR_RETRIABLE));
    const char *oauth = "{\"error\":\"invalid_client\",\"error_description\":\"bad secret\"}";
    ck_assert_int_eq(w2l__rest_fail(&err, "POST", "tok", 401, oauth, strlen(oauth)), W2L_CONFIG);
    ck_assert_str_eq(err.msg, "rest catalog: POST tok: HTTP 401 invalid_client: bad secret");
    const char *html = "<html>\n<b>Bad Gateway</b></html>";
    ck_assert_int_eq(w2l__rest_fail(&err, "POST", "p", 502, html, strlen(html)),
                     W2L_UNAVAILABLE);
    ck_assert_str_eq(err.msg, "rest catalog: POST p: HTTP 502: <html> <b>Bad Gateway</b></html>");
    ck_assert_int_eq(w2l__rest_fail(&err, "GET", "p", 418, NULL, 0), W2L_ERROR);
}
END_TEST

/* ---- the catalog against canned answers ---- */

#define CONFIG_BODY                                                                        \
    "{\"defaults\":{},\"overrides\":{\"prefix\":\"wh1/\"},\"endpoints\":["                \
    "\"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}\"]}"
#define TABLE_BODY "{\"metadata-location\":\"/lake/a/b/t/metadata/00001-x.metadata.json\"}"
#define TOKEN_BODY "{\"access_token\":\"tok-1\",\"token_type\":\"bearer\",\"expires_in\":3600}"

static w2l_catalog *open_rest(http_stub *s, w2l_fileio **io, const char *cred)
{
    w2l_error err;
    w2l_conf *conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(conf, "catalog.warehouse", "my wh", &err), err);
    ck_assert_ok(w2l_conf_set(conf, "catalog.headers", "X-Tenant: t1; X-Other:  two ", &err),
                 err);
    if (cred) ck_assert_ok(w2l_conf_set(conf, "catalog.credential", cred, &err), err);
    ck_assert_ok(w2l_fileio_open("mem", NULL, io, &err), err);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s/", http_stub_url(s));
    w2l_catalog *c;
    ck_assert_ok(w2l__catalog_open(uri, conf, "/lake", *io, &c, &err), err);
    w2l_conf_free(conf);
    return c;
}

START_TEST(config_prefix_endpoints_and_namespace_paths)
{
    http_stub_route routes[] = {
        {"GET", "/v1/config?warehouse=my%20wh", 200, NULL, CONFIG_BODY, 0, 0, 0, 0},
        {"GET", "/v1/wh1/namespaces/a%1Fb/tables/t", 200, NULL, TABLE_BODY, 0, 0, 0, 0},
    };
    http_stub *s = http_stub_start(routes, 2);
    w2l_fileio *io;
    w2l_catalog *c = open_rest(s, &io, NULL);
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_ok(w2l__catalog_load(c, "a.b", "t", &loc, &err), err);
    ck_assert_str_eq((const char *)loc.data, "/lake/a/b/t/metadata/00001-x.metadata.json");
    ck_assert_int_eq(http_stub_hits(s, 1), 1);
    const http_stub_request *r = http_stub_get(s, http_stub_nrequests(s) - 1);
    char v[64];
    ck_assert_str_eq(http_stub_header(r, "X-Tenant", v, sizeof v), "t1");
    ck_assert_str_eq(http_stub_header(r, "X-Other", v, sizeof v), "two");
    ck_assert_ptr_null(http_stub_header(r, "Authorization", v, sizeof v));
    /* what the server does not list is not called */
    size_t before = http_stub_nrequests(s);
    ck_assert_int_eq(w2l__catalog_rename(c, "a", "t", "a", "u", &err), W2L_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not offer POST /v1/{prefix}/tables/rename"));
    ck_assert_int_eq(w2l__catalog_drop(c, "a", "t", 0, &err), W2L_CONFIG);
    ck_assert_uint_eq(http_stub_nrequests(s), before);
    w2l_buf_release(&loc);
    w2l__catalog_close(c);
    w2l_fileio_close(io);
    http_stub_stop(s);
}
END_TEST

START_TEST(oauth_token_sent_and_fetched_again_on_401)
{
    http_stub_route routes[] = {
        {"POST", "/v1/oauth/tokens", 200, NULL, TOKEN_BODY, 0, 0, 0, 0},
        {"GET", "/v1/config", 200, NULL, "{\"defaults\":{},\"overrides\":{}}", 0, 0, 0, 0},
        {"GET", "/v1/namespaces/db/tables/t", 401, NULL,
         "{\"error\":{\"message\":\"expired\",\"type\":\"NotAuthorizedException\",\"code\":401}}",
         0, 1, 0, 0},
        {"GET", "/v1/namespaces/db/tables/t", 200, NULL, TABLE_BODY, 0, 0, 0, 0},
    };
    http_stub *s = http_stub_start(routes, 4);
    w2l_fileio *io;
    w2l_catalog *c = open_rest(s, &io, "client-1:p@ss w0rd");
    ck_assert_int_eq(http_stub_hits(s, 0), 1);
    const http_stub_request *tr = http_stub_get(s, 0);
    ck_assert_ptr_nonnull(strstr(tr->body, "grant_type=client_credentials"));
    ck_assert_ptr_nonnull(strstr(tr->body, "client_id=client-1"));
    ck_assert_ptr_nonnull(strstr(tr->body, "client_secret=p%40ss%20w0rd"));
    ck_assert_ptr_nonnull(strstr(tr->body, "scope=PRINCIPAL_ROLE%3AALL"));
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_ok(w2l__catalog_load(c, "db", "t", &loc, &err), err);
    ck_assert_int_eq(http_stub_hits(s, 2), 1);
    ck_assert_int_eq(http_stub_hits(s, 0), 2); /* a new token after the 401 */
    const http_stub_request *r = http_stub_get(s, http_stub_nrequests(s) - 1);
    char v[64];
    ck_assert_str_eq(http_stub_header(r, "Authorization", v, sizeof v), "Bearer tok-1");
    w2l_buf_release(&loc);
    w2l__catalog_close(c);
    w2l_fileio_close(io);
    http_stub_stop(s);
}
END_TEST

START_TEST(open_errors_name_the_catalog_and_status)
{
    http_stub_route routes[] = {
        {"GET", "/v1/config", 400, NULL,
         "{\"error\":{\"message\":\"unknown warehouse\",\"type\":\"BadRequestException\","
         "\"code\":400}}",
         0, 0, 0, 0},
    };
    http_stub *s = http_stub_start(routes, 1);
    w2l_fileio *io;
    w2l_error err;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s", http_stub_url(s));
    w2l_catalog *c = NULL;
    ck_assert_int_eq(w2l__catalog_open(uri, NULL, "/lake", io, &c, &err), W2L_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "GET /v1/config: HTTP 400 BadRequestException: "
                                          "unknown warehouse"));
    ck_assert_ptr_nonnull(strstr(err.msg, http_stub_url(s)));
    ck_assert_int_eq(w2l__catalog_open("rest:ftp://x", NULL, "/lake", io, &c, &err), W2L_CONFIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "rest:http[s]://HOST"));
    w2l_fileio_close(io);
    http_stub_stop(s);
}
END_TEST

/* ---- commits whose answer is refused or lost: settled by reloading the table ---- */

#define BASE_LOC "/lake/db/t/metadata/00000-a.metadata.json"
#define TABLE_AT(loc, meta) "{\"metadata-location\":\"" loc "\",\"metadata\":" meta "}"

typedef struct settle_case {
    http_stub *s;
    w2l_fileio *io;
    w2l_catalog *c;
    char *next; /* the next metadata's text */
    char base_text[4096], landed_text[4096], moved_text[4096];
} settle_case;

/* A catalog whose table db.t is at BASE_LOC (its file in the mem file IO); the next
 * metadata adds snapshot 8000000000000000002. The texts of the table's LoadTableResult at
 * the base, after our commit, and moved on by another writer, for the routes. */
static void settle_setup(settle_case *k)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, SNAP1, "8000000000000000001", "");
    w2l__json *next = meta(SCHEMA0, 0, 2, SNAP1 "," SNAP2, "8000000000000000002", "");
    w2l__json *other = meta(SCHEMA0, 0, 2, SNAP1 "," SNAP(8000000000000000009, "", 2),
                            "8000000000000000009", "");
    char *bt = w2l__json_print(base, 0), *ot = w2l__json_print(other, 0);
    k->next = w2l__json_print(next, 0);
    snprintf(k->base_text, sizeof k->base_text, TABLE_AT(BASE_LOC, "%s"), bt);
    snprintf(k->landed_text, sizeof k->landed_text,
             TABLE_AT("/lake/db/t/metadata/00001-ours.metadata.json", "%s"), k->next);
    snprintf(k->moved_text, sizeof k->moved_text,
             TABLE_AT("/lake/db/t/metadata/00001-other.metadata.json", "%s"), ot);
    w2l_error err;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &k->io, &err), err);
    ck_assert_ok(w2l_fileio_write_all(k->io, BASE_LOC, 0, bt, strlen(bt), &err), err);
    w2l__free(bt);
    w2l__free(ot);
    w2l__json_free(base);
    w2l__json_free(next);
    w2l__json_free(other);
}

static w2l_rc settle_commit(settle_case *k, http_stub_route *routes, size_t n, w2l_buf *loc,
                            w2l_error *err)
{
    k->s = http_stub_start(routes, n);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s", http_stub_url(k->s));
    ck_assert_ok(w2l__catalog_open(uri, NULL, "/lake", k->io, &k->c, err), *err);
    return w2l__catalog_commit(k->c, "db", "t", BASE_LOC, k->next, strlen(k->next), loc, err);
}

static void settle_teardown(settle_case *k)
{
    w2l__catalog_close(k->c);
    w2l_fileio_close(k->io);
    http_stub_stop(k->s);
    w2l__free(k->next);
}

#define CONFIG_ROUTE {"GET", "/v1/config", 200, NULL, "{}", 0, 0, 0, 0}
#define POST_T "/v1/namespaces/db/tables/t"
#define COMMITTED TABLE_AT("/lake/db/t/metadata/00001-ours.metadata.json", "{}")

START_TEST(commit_503_before_applying_is_sent_again)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        CONFIG_ROUTE,
        {"POST", POST_T, 503, NULL, "{\"error\":{\"message\":\"busy\",\"type\":\"X\"}}", 0, 1,
         0, 0},
        {"POST", POST_T, 200, NULL, COMMITTED, 0, 0, 0, 0},
        {"GET", POST_T, 200, NULL, k.base_text, 0, 0, 0, 0},
    };
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_ok(settle_commit(&k, routes, 4, &loc, &err), err);
    ck_assert_str_eq((const char *)loc.data, "/lake/db/t/metadata/00001-ours.metadata.json");
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    ck_assert_int_eq(http_stub_hits(k.s, 2), 1); /* sent again: the table had not moved */
    ck_assert_int_eq(http_stub_hits(k.s, 3), 1);
    const http_stub_request *r = http_stub_get(k.s, http_stub_nrequests(k.s) - 1);
    ck_assert_ptr_nonnull(
        strstr(r->body, "\"identifier\":{\"namespace\":[\"db\"],\"name\":\"t\"}"));
    ck_assert_ptr_nonnull(strstr(r->body, "\"type\":\"assert-ref-snapshot-id\""));
    w2l_buf_release(&loc);
    settle_teardown(&k);
}
END_TEST

START_TEST(commit_lost_answer_that_landed_is_not_sent_again)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        CONFIG_ROUTE,
        {"POST", POST_T, 0, NULL, NULL, 0, 1, 0, 0}, /* applied, the answer lost */
        /* a resend by the HTTP layer on a fresh connection meets the moved table */
        {"POST", POST_T, 409, NULL, "{\"error\":{\"message\":\"branch main has changed\"}}", 0,
         0, 0, 0},
        {"GET", POST_T, 200, NULL, k.landed_text, 0, 0, 0, 0},
    };
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_ok(settle_commit(&k, routes, 4, &loc, &err), err);
    ck_assert_str_eq((const char *)loc.data, "/lake/db/t/metadata/00001-ours.metadata.json");
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    ck_assert_int_le(http_stub_hits(k.s, 2), 1);
    ck_assert_int_eq(http_stub_hits(k.s, 3), 1);
    w2l_buf_release(&loc);
    settle_teardown(&k);
}
END_TEST

START_TEST(commit_409_after_another_writer_is_a_conflict)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        CONFIG_ROUTE,
        {"POST", POST_T, 409, NULL,
         "{\"error\":{\"message\":\"branch main has changed\",\"type\":"
         "\"CommitFailedException\"}}",
         0, 0, 0, 0},
        {"GET", POST_T, 200, NULL, k.moved_text, 0, 0, 0, 0},
    };
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_int_eq(settle_commit(&k, routes, 3, &loc, &err), W2L_CONFLICT);
    ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 409 CommitFailedException: branch main has "
                                          "changed; another writer committed first"));
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    w2l_buf_release(&loc);
    settle_teardown(&k);
}
END_TEST

START_TEST(commit_outcome_unknown_when_the_reload_fails)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        CONFIG_ROUTE,
        {"POST", POST_T, 502, NULL, "bad gateway", 0, 0, 0, 0},
        {"GET", POST_T, 500, NULL, "{\"error\":{\"message\":\"down\",\"type\":\"E\"}}", 0, 0,
         0, 0},
    };
    w2l_buf loc = {0};
    w2l_error err;
    ck_assert_int_eq(settle_commit(&k, routes, 3, &loc, &err), W2L_UNAVAILABLE);
    ck_assert_ptr_nonnull(strstr(err.msg, "outcome unknown (rest catalog: POST " POST_T
                                          ": HTTP 502: bad gateway)"));
    ck_assert(err.flags & W2L_ERR_RETRIABLE);
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1); /* never sent twice blind */
    w2l_buf_release(&loc);
    settle_teardown(&k);
}
END_TEST

/* ---- multi-table commits (POST /v1/{prefix}/transactions/commit) ---- */

START_TEST(txn_body_holds_each_tables_change)
{
    w2l__json *base = meta(SCHEMA0, 0, 2, SNAP1, "8000000000000000001", "");
    w2l__json *next = meta(SCHEMA0, 0, 2, SNAP1 "," SNAP2, "8000000000000000002", "");
    w2l__json *wider = meta(SCHEMA0 "," SCHEMA1, 1, 3, SNAP1, "8000000000000000001", "");
    w2l__rest_change ch[2] = {{"db", "t", base, next}, {"a.b", "u", base, wider}};
    char *text = NULL;
    w2l_error err;
    ck_assert_ok(w2l__rest_txn_body(ch, 2, &text, &err), err);
    w2l__json *j;
    ck_assert_ok(w2l__json_parse(text, strlen(text), &j, &err), err);
    const w2l__json *list = w2l__json_get(j, "table-changes");
    ck_assert_uint_eq(w2l__json_size(list), 2);
    const w2l__json *t = w2l__json_first(list), *u = w2l__json_next(t);
    char *id = w2l__json_print(w2l__json_get(t, "identifier"), 0);
    ck_assert_str_eq(id, "{\"namespace\":[\"db\"],\"name\":\"t\"}");
    w2l__free(id);
    id = w2l__json_print(w2l__json_get(u, "identifier"), 0);
    ck_assert_str_eq(id, "{\"namespace\":[\"a\",\"b\"],\"name\":\"u\"}");
    w2l__free(id);
    /* each its own requirements and updates: the append adds a snapshot, the other a schema */
    char acts[256];
    char *upd = w2l__json_print(w2l__json_get(t, "updates"), 0);
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "add-snapshot set-snapshot-ref");
    w2l__free(upd);
    upd = w2l__json_print(w2l__json_get(u, "updates"), 0);
    actions(upd, acts, sizeof acts);
    ck_assert_str_eq(acts, "add-schema set-current-schema");
    w2l__free(upd);
    char *req = w2l__json_print(w2l__json_get(t, "requirements"), 0);
    ck_assert_ptr_nonnull(strstr(req, "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\","
                                      "\"snapshot-id\":8000000000000000001}"));
    w2l__free(req);
    w2l__json_free(j);
    w2l__free(text);
    /* a transaction never creates a table */
    w2l__rest_change create = {"db", "n", NULL, next};
    ck_assert_int_eq(w2l__rest_txn_body(&create, 1, &text, &err), W2L_MISUSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "db.n"));
    ck_assert_ptr_null(text);
    w2l__json_free(base);
    w2l__json_free(next);
    w2l__json_free(wider);
}
END_TEST

START_TEST(txn_answers_map_to_outcomes)
{
    const char *nst = "{\"error\":{\"message\":\"Table does not exist: db.t\","
                      "\"type\":\"NoSuchTableException\",\"code\":404}}";
    const char *route = "{\"error\":{\"message\":\"no route\",\"type\":\"NotFoundException\"}}";
    ck_assert_int_eq(w2l__rest_txn_answer(204, NULL, 0), W2L__REST_TXN_DONE);
    ck_assert_int_eq(w2l__rest_txn_answer(200, "{}", 2), W2L__REST_TXN_DONE);
    ck_assert_int_eq(w2l__rest_txn_answer(404, nst, strlen(nst)), W2L__REST_TXN_CONFLICT);
    ck_assert_int_eq(w2l__rest_txn_answer(404, route, strlen(route)), W2L__REST_TXN_REFUSED);
    ck_assert_int_eq(w2l__rest_txn_answer(404, "<html>", 6), W2L__REST_TXN_REFUSED);
    ck_assert_int_eq(w2l__rest_txn_answer(405, NULL, 0), W2L__REST_TXN_REFUSED);
    ck_assert_int_eq(w2l__rest_txn_answer(501, NULL, 0), W2L__REST_TXN_REFUSED);
    ck_assert_int_eq(w2l__rest_txn_answer(409, NULL, 0), W2L__REST_TXN_CONFLICT);
    ck_assert_int_eq(w2l__rest_txn_answer(0, NULL, 0), W2L__REST_TXN_UNKNOWN);
    ck_assert_int_eq(w2l__rest_txn_answer(500, NULL, 0), W2L__REST_TXN_UNKNOWN);
    ck_assert_int_eq(w2l__rest_txn_answer(503, NULL, 0), W2L__REST_TXN_UNKNOWN);
    ck_assert_int_eq(w2l__rest_txn_answer(504, NULL, 0), W2L__REST_TXN_UNKNOWN);
    ck_assert_int_eq(w2l__rest_txn_answer(400, NULL, 0), W2L__REST_TXN_FAILED);
    ck_assert_int_eq(w2l__rest_txn_answer(403, NULL, 0), W2L__REST_TXN_FAILED);
}
END_TEST

#define POST_TXN "/v1/transactions/commit"
#define TXN_CONFIG                                                                        \
    "{\"endpoints\":[\"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}\","        \
    "\"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}\","                       \
    "\"POST /v1/{prefix}/transactions/commit\"]}"

/* A transaction of db.t alone (settle_setup's table and change) against routes; the
 * item's outcome in *it (new_location released by the caller). */
static w2l_rc txn_commit(settle_case *k, http_stub_route *routes, size_t n,
                         w2l_catalog_commit *it, w2l_error *err)
{
    k->s = http_stub_start(routes, n);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s", http_stub_url(k->s));
    ck_assert_ok(w2l__catalog_open(uri, NULL, "/lake", k->io, &k->c, err), *err);
    ck_assert(w2l__catalog_has_batch(k->c));
    *it = (w2l_catalog_commit){.ns = "db", .table = "t", .base = BASE_LOC, .metadata = k->next,
                               .len = strlen(k->next)};
    return w2l__catalog_commit_tables(k->c, it, 1, err);
}

START_TEST(txn_503_before_applying_is_sent_again_then_loaded)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 503, NULL, "{\"error\":{\"message\":\"busy\",\"type\":\"X\"}}", 0, 1,
         0, 0},
        {"POST", POST_TXN, 204, NULL, NULL, 0, 0, 0, 0},
        {"GET", POST_T, 200, NULL, k.base_text, 0, 1, 0, 0},
        {"GET", POST_T, 200, NULL, k.landed_text, 0, 0, 0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_ok(txn_commit(&k, routes, 5, &it, &err), err);
    ck_assert_ok(it.rc, it.err);
    ck_assert_str_eq((const char *)it.new_location.data,
                     "/lake/db/t/metadata/00001-ours.metadata.json");
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    ck_assert_int_eq(http_stub_hits(k.s, 2), 1); /* sent again: the table had not moved */
    ck_assert_int_eq(http_stub_hits(k.s, 4), 1); /* the location, after the 204 */
    const http_stub_request *r = http_stub_get(k.s, 3); /* config, POST, GET, POST, GET */
    ck_assert_str_eq(r->target, POST_TXN);
    ck_assert_ptr_nonnull(strstr(r->body, "{\"table-changes\":[{\"identifier\":{\"namespace\":"
                                          "[\"db\"],\"name\":\"t\"},\"requirements\":["));
    w2l_buf_release(&it.new_location);
    settle_teardown(&k);
}
END_TEST

START_TEST(txn_lost_answer_that_landed_is_not_sent_again)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 0, NULL, NULL, 0, 1, 0, 0}, /* applied, the answer lost */
        {"POST", POST_TXN, 409, NULL, "{\"error\":{\"message\":\"branch main has changed\"}}", 0,
         0, 0, 0},
        {"GET", POST_T, 200, NULL, k.landed_text, 0, 0, 0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_ok(txn_commit(&k, routes, 4, &it, &err), err);
    ck_assert_ok(it.rc, it.err);
    ck_assert_str_eq((const char *)it.new_location.data,
                     "/lake/db/t/metadata/00001-ours.metadata.json");
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    ck_assert_int_le(http_stub_hits(k.s, 2), 1);
    w2l_buf_release(&it.new_location);
    settle_teardown(&k);
}
END_TEST

START_TEST(txn_409_is_a_conflict_of_every_table)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 409, NULL,
         "{\"error\":{\"message\":\"Requirement failed: branch main has changed\",\"type\":"
         "\"CommitFailedException\"}}",
         0, 0, 0, 0},
        {"GET", POST_T, 200, NULL, k.base_text, 0, 0, 0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_ok(txn_commit(&k, routes, 3, &it, &err), err);
    ck_assert_int_eq(it.rc, W2L_CONFLICT);
    ck_assert(it.err.flags & W2L_ERR_RETRIABLE);
    ck_assert_ptr_nonnull(strstr(it.err.msg, "commit db.t in a transaction of 1 tables: "
                                             "rest catalog: POST " POST_TXN ": HTTP 409"));
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1); /* never sent again */
    w2l_buf_release(&it.new_location);
    settle_teardown(&k);
}
END_TEST

START_TEST(txn_unknown_when_the_reload_fails)
{
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 502, NULL, "bad gateway", 0, 0, 0, 0},
        {"GET", POST_T, 500, NULL, "{\"error\":{\"message\":\"down\",\"type\":\"E\"}}", 0, 0,
         0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_ok(txn_commit(&k, routes, 3, &it, &err), err);
    ck_assert_int_eq(it.rc, W2L_UNAVAILABLE);
    ck_assert_ptr_nonnull(strstr(it.err.msg, "outcome unknown (rest catalog: POST " POST_TXN
                                             ": HTTP 502: bad gateway)"));
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1); /* never sent twice blind */
    w2l_buf_release(&it.new_location);
    settle_teardown(&k);
}
END_TEST

START_TEST(txn_204_then_moved_on_is_unknown)
{
    /* committed, but another writer committed on top before the location was read: the
     * location would not be the commit's, so the outcome is left to a reload */
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 204, NULL, NULL, 0, 0, 0, 0},
        {"GET", POST_T, 200, NULL, k.moved_text, 0, 0, 0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_ok(txn_commit(&k, routes, 3, &it, &err), err);
    ck_assert_int_eq(it.rc, W2L_UNAVAILABLE);
    ck_assert_ptr_nonnull(strstr(it.err.msg, "table moved on before its new location was read"));
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    w2l_buf_release(&it.new_location);
    settle_teardown(&k);
}
END_TEST

START_TEST(txn_refused_or_not_listed_is_notfound)
{
    /* listed, but the server answers 501: nothing applied */
    settle_case k;
    settle_setup(&k);
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, TXN_CONFIG, 0, 0, 0, 0},
        {"POST", POST_TXN, 501, NULL, "{\"error\":{\"message\":\"no\",\"type\":\"N\"}}", 0, 0,
         0, 0},
    };
    w2l_catalog_commit it;
    w2l_error err;
    ck_assert_int_eq(txn_commit(&k, routes, 2, &it, &err), W2L_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 501"));
    ck_assert_int_eq(http_stub_hits(k.s, 1), 1);
    settle_teardown(&k);
    /* not among the endpoints the server lists: not called */
    settle_setup(&k);
    http_stub_route unlisted[] = {
        {"GET", "/v1/config", 200, NULL, CONFIG_BODY, 0, 0, 0, 0},
        {"POST", POST_TXN, 204, NULL, NULL, 0, 0, 0, 0},
    };
    ck_assert_int_eq(txn_commit(&k, unlisted, 2, &it, &err), W2L_NOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not offer POST /v1/{prefix}/transactions/commit"));
    ck_assert_int_eq(http_stub_hits(k.s, 1), 0);
    settle_teardown(&k);
}
END_TEST

START_TEST(sigv4_signs_every_request)
{
    http_stub_route routes[] = {
        {"GET", "/iceberg/v1/config", 200, NULL, "{\"defaults\":{},\"overrides\":{}}", 0, 0, 0,
         0},
        {"GET", "/iceberg/v1/namespaces/a%1Fb/tables/t", 200, NULL, TABLE_BODY, 0, 0, 0, 0},
    };
    http_stub *s = http_stub_start(routes, 2);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
    setenv("AWS_SESSION_TOKEN", "session-token-1", 1);
    w2l_error err;
    w2l_conf *conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(conf, "catalog.rest.sigv4-enabled", "true", &err), err);
    ck_assert_ok(w2l_conf_set(conf, "catalog.rest.signing-region", "us-west-2", &err), err);
    ck_assert_ok(w2l_conf_set(conf, "catalog.rest.signing-name", "glue", &err), err);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s/iceberg", http_stub_url(s));
    w2l_catalog *c;
    ck_assert_ok(w2l__catalog_open(uri, conf, "/lake", io, &c, &err), err);
    w2l_buf loc = {0};
    ck_assert_ok(w2l__catalog_load(c, "a.b", "t", &loc, &err), err);
    ck_assert_int_eq(http_stub_hits(s, 1), 1);
    const http_stub_request *r = http_stub_get(s, http_stub_nrequests(s) - 1);
    char host[64], date[32], sha[80], tok[64], auth[512];
    ck_assert_ptr_nonnull(http_stub_header(r, "host", host, sizeof host));
    ck_assert_ptr_nonnull(http_stub_header(r, "x-amz-date", date, sizeof date));
    ck_assert_ptr_nonnull(http_stub_header(r, "x-amz-content-sha256", sha, sizeof sha));
    ck_assert_str_eq(sha, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ck_assert_str_eq(http_stub_header(r, "x-amz-security-token", tok, sizeof tok),
                     "session-token-1");
    ck_assert_ptr_nonnull(http_stub_header(r, "Authorization", auth, sizeof auth));
    ck_assert_ptr_nonnull(strstr(auth, "Credential=AKIDEXAMPLE/"));
    ck_assert_ptr_nonnull(strstr(auth, "/us-west-2/glue/aws4_request, SignedHeaders=host;"
                                       "x-amz-content-sha256;x-amz-date;x-amz-security-token, "));
    /* the signature of what was sent: the path encoded once more (%1F -> %251F), as AWS
     * services other than S3 sign it (the signer itself: check_sigv4) */
    w2l__http_header hs[] = {{"host", host}, {"x-amz-date", date}, {"x-amz-content-sha256", sha},
                             {"x-amz-security-token", tok}};
    w2l__sigv4_req sr = {.method = "GET",
                         .canonical_uri = "/iceberg/v1/namespaces/a%251Fb/tables/t",
                         .canonical_query = "", .headers = hs, .nheaders = 4,
                         .payload_hash = sha, .region = "us-west-2", .service = "glue",
                         .amz_date = date};
    w2l__aws_cred cred = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                          "session-token-1", 0};
    w2l_buf want = {0};
    ck_assert_ok(w2l__sigv4_sign(&sr, &cred, &want, NULL, NULL, &err), err);
    ck_assert_ok(w2l__buf_cstr(&want, &err), err);
    ck_assert_str_eq(auth, (const char *)want.data);
    w2l_buf_release(&want);
    w2l_buf_release(&loc);
    w2l__catalog_close(c);
    w2l_fileio_close(io);
    w2l_conf_free(conf);
    http_stub_stop(s);
}
END_TEST

/* ---- vended credentials ---- */

#define VENDED_BODY                                                                        \
    "{\"metadata-location\":\"s3://bkt/wh/db/t/metadata/00001-x.metadata.json\","         \
    "\"metadata\":{\"location\":\"s3://bkt/wh/db/t\"},"                                   \
    "\"config\":{\"s3.access-key-id\":\"AK-TABLE\",\"s3.secret-access-key\":\"SK-TABLE\","  \
    "\"s3.session-token\":\"TOK-TABLE\",\"s3.session-token-expires-at-ms\":\"1\"},"       \
    "\"storage-credentials\":[{\"prefix\":\"s3://bkt/wh/db/t/data\",\"config\":{"         \
    "\"s3.access-key-id\":\"AK-DATA\",\"s3.secret-access-key\":\"SK-DATA\","              \
    "\"s3.region\":\"eu-west-1\"}}]}"

static w2l_rc vend_key(const char *key, char *ak, size_t size, w2l_error *err)
{
    w2l__vend_use u;
    w2l_rc rc = w2l__vend_get("bkt", key, 0, &u, err);
    snprintf(ak, size, "%s", rc == W2L_OK && u.found ? u.cred.access_key : "");
    w2l__aws_cred_clear(&u.cred);
    return rc;
}

START_TEST(vended_credentials_registered_and_refreshed)
{
    http_stub_route routes[] = {
        {"GET", "/v1/config", 200, NULL, "{}", 0, 0, 0, 0},
        {"GET", "/v1/namespaces/db/tables/t", 200, NULL, VENDED_BODY, 0, 2, 0, 0},
        {"GET", "/v1/namespaces/db/tables/t", 403, NULL,
         "{\"error\":{\"message\":\"no longer yours\",\"type\":\"ForbiddenException\","
         "\"code\":403}}", 0, 0, 0, 0},
    };
    http_stub *s = http_stub_start(routes, 3);
    w2l_error err;
    w2l_conf *conf = w2l_conf_new();
    ck_assert_ok(w2l_conf_set(conf, "catalog.access-delegation", "vended-credentials", &err),
                 err);
    w2l_fileio *io;
    ck_assert_ok(w2l_fileio_open("mem", NULL, &io, &err), err);
    char uri[128];
    snprintf(uri, sizeof uri, "rest:%s", http_stub_url(s));
    w2l_catalog *c;
    ck_assert_ok(w2l__catalog_open(uri, conf, "s3://bkt/wh", io, &c, &err), err);
    w2l_buf loc = {0};
    ck_assert_ok(w2l__catalog_load(c, "db", "t", &loc, &err), err);
    char v[64], ak[32];
    ck_assert_str_eq(http_stub_header(http_stub_get(s, 1), "X-Iceberg-Access-Delegation", v,
                                      sizeof v), "vended-credentials");
    ck_assert_uint_eq(w2l__vend_count(), 2);
    /* the data prefix (longest) has its own, which do not expire */
    ck_assert_ok(vend_key("wh/db/t/data/f.parquet", ak, sizeof ak, &err), err);
    ck_assert_str_eq(ak, "AK-DATA");
    ck_assert_int_eq(http_stub_hits(s, 1), 1);
    /* the table's expired: loaded again first */
    ck_assert_ok(vend_key("wh/db/t/metadata/m.json", ak, sizeof ak, &err), err);
    ck_assert_str_eq(ak, "AK-TABLE");
    ck_assert_int_eq(http_stub_hits(s, 1), 2);
    ck_assert_ok(vend_key("wh/other/x", ak, sizeof ak, &err), err);
    ck_assert_str_eq(ak, "");
    /* a refresh refused by the catalog: named with the table, the catalog and the status */
    ck_assert_int_eq(vend_key("wh/db/t/metadata/m.json", ak, sizeof ak, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "table db.t") && strstr(err.msg, http_stub_url(s)) &&
                      strstr(err.msg, "HTTP 403 ForbiddenException: no longer yours"),
                  "%s", err.msg);
    ck_assert_ptr_null(strstr(err.msg, "SK-TABLE"));
    w2l_buf_release(&loc);
    w2l__catalog_close(c);
    /* no catalog open to refresh them: expired ones are an error */
    ck_assert_int_eq(vend_key("wh/db/t/metadata/m.json", ak, sizeof ak, &err), W2L_UNAVAILABLE);
    w2l__vend_reset();
    /* remote signing is not offered; an unknown mode is named */
    ck_assert_ok(w2l_conf_set(conf, "catalog.access-delegation", "remote-signing", &err), err);
    ck_assert_int_eq(w2l__catalog_open(uri, conf, "s3://bkt/wh", io, &c, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "remote-signing is not supported"), "%s", err.msg);
    ck_assert_ok(w2l_conf_set(conf, "catalog.access-delegation", "sometimes", &err), err);
    ck_assert_int_eq(w2l__catalog_open(uri, conf, "s3://bkt/wh", io, &c, &err), W2L_CONFIG);
    ck_assert_msg(strstr(err.msg, "'sometimes'"), "%s", err.msg);
    w2l_conf_free(conf);
    w2l_fileio_close(io);
    http_stub_stop(s);
}
END_TEST

Suite *suite_ice_rest(void)
{
    Suite *s = suite_create("ice_rest");
    TCase *d = tcase_create("diff");
    tcase_add_test(d, create_is_every_update_after_assert_create);
    tcase_add_test(d, append_asserts_the_base_and_adds_the_snapshot);
    tcase_add_test(d, first_snapshot_asserts_main_is_absent);
    tcase_add_test(d, schema_change_adds_the_schema_and_makes_it_current);
    tcase_add_test(d, expiry_removes_snapshots_and_properties);
    tcase_add_test(d, another_table_or_bad_metadata_is_refused);
    tcase_add_test(d, txn_body_holds_each_tables_change);
    tcase_add_test(d, txn_answers_map_to_outcomes);
    suite_add_tcase(s, d);
    TCase *e = tcase_create("errors");
    tcase_add_test(e, errors_name_endpoint_status_type_and_message);
    suite_add_tcase(s, e);
    TCase *h = tcase_create("http");
    tcase_add_test(h, config_prefix_endpoints_and_namespace_paths);
    tcase_add_test(h, oauth_token_sent_and_fetched_again_on_401);
    tcase_add_test(h, open_errors_name_the_catalog_and_status);
    tcase_add_test(h, sigv4_signs_every_request);
    tcase_add_test(h, vended_credentials_registered_and_refreshed);
    tcase_add_test(h, commit_503_before_applying_is_sent_again);
    tcase_add_test(h, commit_lost_answer_that_landed_is_not_sent_again);
    tcase_add_test(h, commit_409_after_another_writer_is_a_conflict);
    tcase_add_test(h, commit_outcome_unknown_when_the_reload_fails);
    tcase_add_test(h, txn_503_before_applying_is_sent_again_then_loaded);
    tcase_add_test(h, txn_lost_answer_that_landed_is_not_sent_again);
    tcase_add_test(h, txn_409_is_a_conflict_of_every_table);
    tcase_add_test(h, txn_unknown_when_the_reload_fails);
    tcase_add_test(h, txn_204_then_moved_on_is_unknown);
    tcase_add_test(h, txn_refused_or_not_listed_is_notfound);
    suite_add_tcase(s, h);
    return s;
}
