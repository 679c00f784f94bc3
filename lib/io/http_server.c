/*
 * The operations endpoint's HTTP server (http_server.h): the one file that includes
 * libmicrohttpd. The listening socket is made here (so that an address in use fails with
 * its errno and address, before anything serves) and handed over; libmicrohttpd runs its
 * own polling thread (epoll or poll, never select, so descriptor numbers above FD_SETSIZE
 * do not matter), answers one request per handler call, limits connections and times idle
 * ones out. Only GET and HEAD reach the handler.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>
#include <microhttpd.h>

#include "http_server.h"

struct w2l__http_server {
    struct MHD_Daemon *d;
    int fd; /* until handed to libmicrohttpd */
    int port;
    w2l__http_handler fn;
    void *ctx;
};

/* Splits "HOST:PORT" / "[V6]:PORT" into host and port; 0 when malformed. */
static int split_listen(const char *s, char *host, size_t hsz, char *port, size_t psz)
{
    const char *colon;
    size_t hl;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':') return 0;
        hl = (size_t)(end - s - 1);
        memcpy(host, s + 1, hl < hsz ? hl : 0);
        colon = end + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || strchr(s, ':') != colon) return 0;
        hl = (size_t)(colon - s);
        memcpy(host, s, hl < hsz ? hl : 0);
    }
    if (hl == 0 || hl >= hsz) return 0;
    host[hl] = '\0';
    const char *p = colon + 1;
    size_t pl = strlen(p);
    if (pl == 0 || pl >= psz || strspn(p, "0123456789") != pl) return 0;
    long v = strtol(p, NULL, 10);
    if (v < 0 || v > 65535) return 0;
    memcpy(port, p, pl + 1);
    return 1;
}

static w2l_rc bind_listen(const char *addr, const char *key, int *out_fd, int *out_port,
                          w2l_error *err)
{
    char host[256], port[8];
    if (!split_listen(addr, host, sizeof host, port, sizeof port))
        return w2l__fail(err, W2L_CONFIG,
                         "%s: '%s' is not HOST:PORT (e.g. 127.0.0.1:9464, [::1]:9464)", key,
                         addr);
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0)
        return w2l__fail(err, W2L_CONFIG, "%s: '%s': %s", key, addr, gai_strerror(g));
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* TIME_WAIT only */
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) return w2l__fail_errno(err, W2L_IO, e, "%s: cannot listen on %s", key, addr);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int bound = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        bound = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                         : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    *out_fd = fd;
    *out_port = bound;
    return W2L_OK;
}

/* The request's query arguments (MHD parses them off the URL) back as ?k=v&..., each
 * percent-encoded again, so the handler sees the path as it was sent. */
static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    w2l_buf *b = cls;
    const char *parts[2] = {key, value};
    if (w2l_buf_append(b, b->len && memchr(b->data, '?', b->len) ? "&" : "?", 1, NULL) != W2L_OK)
        return MHD_NO;
    for (int k = 0; k < 2; k++) {
        if (k && !value) break;
        if (k && w2l_buf_append(b, "=", 1, NULL) != W2L_OK) return MHD_NO;
        for (const unsigned char *c = (const unsigned char *)parts[k]; *c; c++) {
            int plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                        (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
            if ((plain ? w2l_buf_append(b, c, 1, NULL) : w2l__buf_printf(b, NULL, "%%%02X", *c)) !=
                W2L_OK)
                return MHD_NO;
        }
    }
    return MHD_YES;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version, (void)upload;
    w2l__http_server *s = cls;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    int head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (!*con_cls) { /* the first call sees the headers only */
        *con_cls = s;
        if (get || head || post) return MHD_YES;
    }
    if (*upload_size) { /* a body is ignored */
        *upload_size = 0;
        return MHD_YES;
    }
    w2l__http_reply r = {0};
    if (!get && !head && !post) {
        r.status = 405;
        r.content_type = "text/plain; charset=utf-8";
        w2l__buf_printf(&r.body, NULL, "method %s not allowed: GET, HEAD or POST\n", method);
    } else {
        r.status = 500;
        r.content_type = "text/plain; charset=utf-8";
        w2l_buf full = {0};
        w2l_buf_append(&full, url, strlen(url), NULL);
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &full);
        if (w2l__buf_cstr(&full, NULL) == W2L_OK)
            s->fn(s->ctx, method, (const char *)full.data, &r);
        else w2l__buf_printf(&r.body, NULL, "out of memory\n");
        w2l_buf_release(&full);
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r.body.len, r.body.data, MHD_RESPMEM_MUST_COPY);
    w2l_buf_release(&r.body);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (r.status == 405) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD, POST");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r.status, resp);
    MHD_destroy_response(resp);
    return ok;
}

w2l_rc w2l__http_server_start(const char *addr, const char *key, w2l__http_handler fn,
                              void *ctx, w2l__http_server **out, w2l_error *err)
{
    *out = NULL;
    w2l__http_server *s = w2l__calloc(1, sizeof *s);
    W2L_NOMEM_IF(!s, err);
    s->fn = fn;
    s->ctx = ctx;
    w2l_rc rc = bind_listen(addr, key, &s->fd, &s->port, err);
    if (rc != W2L_OK) {
        w2l__free(s);
        return rc;
    }
    s->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL, NULL, answer, s,
                            MHD_OPTION_LISTEN_SOCKET, s->fd, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)32, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                            MHD_OPTION_END);
    if (!s->d) {
        close(s->fd);
        w2l__free(s);
        return w2l__fail(err, W2L_IO, "%s: cannot serve on %s", key, addr);
    }
    *out = s;
    return W2L_OK;
}

int w2l__http_server_port(const w2l__http_server *s) { return s ? s->port : 0; }

void w2l__http_server_stop(w2l__http_server *s)
{
    if (!s) return;
    MHD_stop_daemon(s->d); /* closes the listening socket too */
    w2l__free(s);
}
