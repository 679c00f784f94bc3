/*
 * A small HTTP/1.1 server for the operations endpoint (metrics.listen: /metrics, /healthz,
 * /readyz, /status; lib/pipeline/endpoint.c). http_server.c is the one file that includes
 * libmicrohttpd. The server answers GET and HEAD on its own thread (libmicrohttpd's internal
 * polling thread, epoll or poll): each request becomes one call of the handler, whose reply
 * is copied out. No TLS, no authentication: bind it to a loopback or pod address.
 */
#ifndef W2L_HTTP_SERVER_H
#define W2L_HTTP_SERVER_H

#include "../common/common.h"

typedef struct w2l__http_server w2l__http_server;

/* What the handler answers: status, a static content type, and a body it fills (the
 * server releases it). */
typedef struct w2l__http_reply {
    int status;
    const char *content_type;
    w2l_buf body;
} w2l__http_reply;

/* Called on the server's thread for every GET or HEAD (other methods get 405 without a
 * call); path is the request path without its query string. */
typedef void (*w2l__http_handler)(void *ctx, const char *method, const char *path,
                                  w2l__http_reply *out);

/* Listens on listen ("HOST:PORT", "[V6]:PORT"; port 0 picks a free one) and serves.
 * key names the configuration key listen came from, for errors: a malformed address is
 * W2L_CONFIG naming key; one that cannot be bound (in use, not local) is W2L_IO naming
 * the address. */
w2l_rc w2l__http_server_start(const char *listen, const char *key, w2l__http_handler fn,
                              void *ctx, w2l__http_server **out, w2l_error *err);
/* The bound port (useful after port 0). */
int w2l__http_server_port(const w2l__http_server *s);
/* Stops serving, waits for requests in progress, frees. NULL is a no-op. */
void w2l__http_server_stop(w2l__http_server *s);

#endif
