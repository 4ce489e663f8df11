/* http_get.c: one HTTP GET over POSIX sockets (http_client.h), for nom (net/'s sockets) and
 * the host alike. Non-blocking socket, every wait a poll() against the exchange's single
 * deadline, so a dead or stalling provider costs at most timeout_ms per poll of priced. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until deadline_ms: 1 ready, 0 deadline passed, -1 poll failed. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

__attribute__((format(printf, 4, 5)))
static enum http_failure failed(enum http_failure kind, char *why, size_t whylen,
                                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return kind;
}

static enum http_failure connect_by(int fd, const struct http_url *url, int64_t deadline,
                                    char *why, size_t whylen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(url->port)};
    int err = 0;
    socklen_t len = sizeof err;
    sa.sin_addr.s_addr = url->ip;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return HTTP_OK;
    if (errno != EINPROGRESS)
        return failed(HTTP_FAIL_UNREACHABLE, why, whylen, "connect to %s: %s", url->host,
                      strerror(errno));
    int ready = wait_fd(fd, POLLOUT, deadline);
    if (ready == 0)
        return failed(HTTP_FAIL_TIMEOUT, why, whylen, "no connection to %s in time", url->host);
    if (ready < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0)
        return failed(HTTP_FAIL_UNREACHABLE, why, whylen, "connect to %s: %s", url->host,
                      strerror(err));
    return HTTP_OK;
}

static enum http_failure send_request(int fd, const struct http_url *url, int64_t deadline,
                                      char *why, size_t whylen)
{
    char req[HTTP_MAX_PATH + 160];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: nom-priced/1\r\n"
                     "Accept: text/plain\r\nConnection: close\r\n\r\n",
                     url->path, url->host);
    for (int off = 0; off < n;) {
        ssize_t w = send(fd, req + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w > 0) {
            off += (int)w;
        } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return failed(HTTP_FAIL_UNREACHABLE, why, whylen, "sending to %s: %s", url->host,
                          strerror(errno));
        } else if (wait_fd(fd, POLLOUT, deadline) <= 0) {
            return failed(HTTP_FAIL_TIMEOUT, why, whylen, "%s took the request too slowly",
                          url->host);
        }
    }
    return HTTP_OK;
}

/* Reads until the parser is done, fails, or the deadline passes. */
static enum http_failure read_response(int fd, const struct http_url *url, int64_t deadline,
                                       struct http_response *r, char *why, size_t whylen)
{
    char buf[1024];
    int res = HTTP_MORE;
    while (res == HTTP_MORE) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            res = http_response_feed(r, buf, (size_t)n);
        } else if (n == 0) {
            res = http_response_eof(r);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return failed(HTTP_FAIL_UNREACHABLE, why, whylen, "receiving from %s: %s",
                          url->host, strerror(errno));
        } else if (wait_fd(fd, POLLIN, deadline) <= 0) {
            return failed(HTTP_FAIL_TIMEOUT, why, whylen, "no complete answer from %s in time",
                          url->host);
        }
    }
    if (res == HTTP_ERROR)
        return failed(HTTP_FAIL_PROTOCOL, why, whylen, "%s: %s", url->host,
                      r->error);
    if (r->status != 200)
        return failed(HTTP_FAIL_STATUS, why, whylen, "%s answered %d %s", url->host, r->status,
                      r->reason);
    return HTTP_OK;
}

enum http_failure http_get(const struct http_url *url, uint32_t timeout_ms,
                           struct http_response *r, char *why, size_t whylen)
{
    int64_t deadline = now_ms() + timeout_ms;
    http_response_init(r);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return failed(HTTP_FAIL_UNREACHABLE, why, whylen, "socket for %s: %s", url->host,
                      strerror(errno));
    enum http_failure f;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) != 0)
        f = failed(HTTP_FAIL_UNREACHABLE, why, whylen, "socket for %s: %s", url->host,
                   strerror(errno));
    else if ((f = connect_by(fd, url, deadline, why, whylen)) == HTTP_OK &&
             (f = send_request(fd, url, deadline, why, whylen)) == HTTP_OK)
        f = read_response(fd, url, deadline, r, why, whylen);
    close(fd);
    return f;
}
