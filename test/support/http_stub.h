/*
 * A tiny HTTP/1.1 server for tests: bound to 127.0.0.1 on a free port, one thread per
 * connection (keep-alive honoured), answering from a table of canned routes and recording
 * every request it read (method, target, headers, body) for tests to assert on.
 */
#ifndef W2L_HTTP_STUB_H
#define W2L_HTTP_STUB_H

#include <stddef.h>

typedef struct http_stub_route {
    const char *method;  /* "GET", ...; NULL: any */
    const char *prefix;  /* the request target (path and query) starts with it; NULL: any */
    int status;          /* 0: close the connection without answering */
    const char *headers; /* extra header lines, each ending "\r\n"; NULL: none */
    const char *body;    /* NULL: empty */
    size_t body_len;     /* 0: strlen(body) */
    int count;           /* answers the first count matching requests, then is skipped so a
                          * later route answers (a 503 the first N times); 0: always */
    int cut;             /* 1: announce the whole body, send cut_at bytes of it, close */
    size_t cut_at;
} http_stub_route;

typedef struct http_stub_request {
    char method[16];
    char target[2048]; /* "/bucket/key?x=1" */
    char *headers;     /* the header lines as received, "Name: value\r\n" each */
    char *body;        /* NUL-terminated copy; body_len bytes */
    size_t body_len;
    int route;         /* index of the route that answered, -1: none (404) */
} http_stub_request;

typedef struct http_stub http_stub;

/* Starts a server answering from routes[0..n) (first match wins; the table is copied, its
 * strings borrowed: they must outlive the stub). Aborts the test on failure. */
http_stub *http_stub_start(const http_stub_route *routes, size_t n);
/* Stops the server, closes its connections, frees the records. NULL is a no-op. */
void http_stub_stop(http_stub *s);
unsigned http_stub_port(const http_stub *s);
/* "http://127.0.0.1:PORT" (static storage of the stub). */
const char *http_stub_url(const http_stub *s);
/* Requests recorded so far, and the ith (a copy, valid until http_stub_stop). */
size_t http_stub_nrequests(http_stub *s);
const http_stub_request *http_stub_get(http_stub *s, size_t i);
/* How many times route i answered. */
int http_stub_hits(http_stub *s, size_t i);
/* The value of header name (case-insensitive) in r into out[size]; NULL when absent. */
const char *http_stub_header(const http_stub_request *r, const char *name, char *out,
                             size_t size);

#endif
