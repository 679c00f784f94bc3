/*
 * The test HTTP server (http_stub.h): an accept thread on 127.0.0.1:0 starts one thread per
 * connection; each reads requests (header block, then a Content-Length body), records them
 * under the stub's mutex before answering, and answers from the first route that matches.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_stub.h"

#define MAX_ROUTES 32
#define MAX_CONNS 64
#define MAX_HEAD (64 * 1024)
#define W_MIN_(a, b) ((a) < (b) ? (a) : (b))

typedef struct conn {
    http_stub *s;
    int fd;
    pthread_t th;
} conn;

struct http_stub {
    int lfd;
    unsigned port;
    char url[64];
    pthread_t accept_th;
    pthread_mutex_t mu;
    int stopping;
    http_stub_route routes[MAX_ROUTES];
    int hits[MAX_ROUTES];
    size_t nroutes;
    conn *conns[MAX_CONNS];
    size_t nconns;
    http_stub_request **reqs; /* each its own allocation: pointers stay valid */
    size_t nreqs, capreqs;
};

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 412: return "Precondition Failed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

const char *http_stub_header(const http_stub_request *r, const char *name, char *out,
                             size_t size)
{
    size_t nl = strlen(name);
    for (const char *p = r->headers; p && *p;) {
        const char *eol = strstr(p, "\r\n");
        if (!eol) eol = p + strlen(p);
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            snprintf(out, size, "%.*s", (int)(eol - v), v);
            return out;
        }
        p = *eol ? eol + 2 : eol;
    }
    return NULL;
}

/* Answers one request; returns 0 to keep the connection, -1 to close it. */
static int answer(http_stub *s, int fd, http_stub_request *rq)
{
    pthread_mutex_lock(&s->mu);
    int ri = -1;
    for (size_t i = 0; i < s->nroutes; i++) {
        const http_stub_route *r = &s->routes[i];
        if (r->method && strcmp(r->method, rq->method) != 0) continue;
        if (r->prefix && strncmp(rq->target, r->prefix, strlen(r->prefix)) != 0) continue;
        if (r->count > 0 && s->hits[i] >= r->count) continue;
        s->hits[i]++;
        ri = (int)i;
        break;
    }
    rq->route = ri;
    if (s->nreqs == s->capreqs) {
        s->capreqs = s->capreqs ? 2 * s->capreqs : 16;
        s->reqs = realloc(s->reqs, s->capreqs * sizeof *s->reqs);
        if (!s->reqs) abort();
    }
    http_stub_request *copy = malloc(sizeof *copy);
    if (!copy) abort();
    *copy = *rq;
    s->reqs[s->nreqs++] = copy;
    http_stub_route r = ri >= 0 ? s->routes[ri]
                                : (http_stub_route){.status = 404, .body = "no route"};
    pthread_mutex_unlock(&s->mu);

    if (r.status == 0) return -1;
    const char *body = r.body ? r.body : "";
    size_t blen = r.body_len ? r.body_len : strlen(body);
    int has_len = 0;
    for (const char *h = r.headers; h && *h && !has_len; h++)
        has_len = strncasecmp(h, "content-length:", 15) == 0;
    char head[4096];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\n", r.status, reason(r.status));
    if (!has_len) n += snprintf(head + n, sizeof head - (size_t)n, "Content-Length: %zu\r\n", blen);
    n += snprintf(head + n, sizeof head - (size_t)n, "%s\r\n", r.headers ? r.headers : "");
    if ((size_t)n >= sizeof head) abort();
    if (send_all(fd, head, (size_t)n) != 0) return -1;
    if (strcmp(rq->method, "HEAD") == 0) return r.cut ? -1 : 0;
    size_t send_n = r.cut ? (r.cut_at < blen ? r.cut_at : blen) : blen;
    if (send_all(fd, body, send_n) != 0) return -1;
    return r.cut ? -1 : 0;
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    char *buf = malloc(MAX_HEAD);
    size_t have = 0;
    if (!buf) abort();
    for (;;) {
        char *hend;
        buf[have] = '\0';
        while (!(hend = strstr(buf, "\r\n\r\n"))) {
            if (have >= MAX_HEAD - 1) goto done;
            ssize_t r = recv(c->fd, buf + have, MAX_HEAD - 1 - have, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) goto done;
            have += (size_t)r;
            buf[have] = '\0';
        }
        http_stub_request rq;
        memset(&rq, 0, sizeof rq);
        char *line_end = strstr(buf, "\r\n");
        if (sscanf(buf, "%15s %2047s", rq.method, rq.target) != 2) goto done;
        size_t hlen = (size_t)(hend + 2 - (line_end + 2));
        rq.headers = malloc(hlen + 1);
        if (!rq.headers) abort();
        memcpy(rq.headers, line_end + 2, hlen);
        rq.headers[hlen] = '\0';
        char v[32];
        size_t blen =
            http_stub_header(&rq, "Content-Length", v, sizeof v) ? strtoul(v, NULL, 10) : 0;
        size_t used = (size_t)(hend + 4 - buf);
        rq.body = malloc(blen + 1);
        if (!rq.body) abort();
        size_t got = W_MIN_(have - used, blen);
        memcpy(rq.body, buf + used, got);
        while (got < blen) {
            ssize_t r = recv(c->fd, rq.body + got, blen - got, 0);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                free(rq.headers);
                free(rq.body);
                goto done;
            }
            got += (size_t)r;
        }
        rq.body[blen] = '\0';
        rq.body_len = blen;
        size_t consumed = used + W_MIN_(have - used, blen);
        memmove(buf, buf + consumed, have - consumed);
        have -= consumed;
        if (answer(c->s, c->fd, &rq) != 0) goto done;
    }
done:
    free(buf);
    shutdown(c->fd, SHUT_RDWR);
    return NULL;
}

static void *accept_main(void *arg)
{
    http_stub *s = arg;
    for (;;) {
        int fd = accept(s->lfd, NULL, NULL);
        pthread_mutex_lock(&s->mu);
        int stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stop) {
            if (fd >= 0) close(fd);
            return NULL;
        }
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL;
        }
        conn *c = calloc(1, sizeof *c);
        if (!c) abort();
        c->s = s;
        c->fd = fd;
        pthread_mutex_lock(&s->mu);
        if (s->nconns == MAX_CONNS) {
            pthread_mutex_unlock(&s->mu);
            close(fd);
            free(c);
            continue;
        }
        s->conns[s->nconns++] = c;
        pthread_mutex_unlock(&s->mu);
        if (pthread_create(&c->th, NULL, conn_main, c) != 0) abort();
    }
}

http_stub *http_stub_start(const http_stub_route *routes, size_t n)
{
    ck_assert_msg(n <= MAX_ROUTES, "http_stub: at most %d routes", MAX_ROUTES);
    http_stub *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    memcpy(s->routes, routes, n * sizeof *routes);
    s->nroutes = n;
    pthread_mutex_init(&s->mu, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_msg(s->lfd >= 0, "http_stub: socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(bind(s->lfd, (struct sockaddr *)&a, sizeof a) == 0, "http_stub: bind: %s",
                  strerror(errno));
    ck_assert_msg(listen(s->lfd, 16) == 0, "http_stub: listen: %s", strerror(errno));
    socklen_t al = sizeof a;
    getsockname(s->lfd, (struct sockaddr *)&a, &al);
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u", s->port);
    ck_assert_int_eq(pthread_create(&s->accept_th, NULL, accept_main, s), 0);
    return s;
}

void http_stub_stop(http_stub *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_mutex_unlock(&s->mu);
    /* wakes accept() */
    shutdown(s->lfd, SHUT_RDWR);
    pthread_join(s->accept_th, NULL);
    close(s->lfd);
    for (size_t i = 0; i < s->nconns; i++) {
        shutdown(s->conns[i]->fd, SHUT_RDWR);
        pthread_join(s->conns[i]->th, NULL);
        close(s->conns[i]->fd);
        free(s->conns[i]);
    }
    for (size_t i = 0; i < s->nreqs; i++) {
        free(s->reqs[i]->headers);
        free(s->reqs[i]->body);
        free(s->reqs[i]);
    }
    free(s->reqs);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

unsigned http_stub_port(const http_stub *s) { return s->port; }
const char *http_stub_url(const http_stub *s) { return s->url; }

size_t http_stub_nrequests(http_stub *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->nreqs;
    pthread_mutex_unlock(&s->mu);
    return n;
}

const http_stub_request *http_stub_get(http_stub *s, size_t i)
{
    pthread_mutex_lock(&s->mu);
    const http_stub_request *r = i < s->nreqs ? s->reqs[i] : NULL;
    pthread_mutex_unlock(&s->mu);
    return r;
}

int http_stub_hits(http_stub *s, size_t i)
{
    pthread_mutex_lock(&s->mu);
    int h = i < s->nroutes ? s->hits[i] : 0;
    pthread_mutex_unlock(&s->mu);
    return h;
}
