/* net.c: monotonic time, TCP connect with a timeout, and socket reads/writes whose every wait is
 * bounded. */
#include "adb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int64_t adb_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int adb_ms_left(int64_t deadline)
{
    int64_t left = deadline - adb_now_ms();
    if (left < 0)
        return 0;
    return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

void adb_vlogf(rd_adb_log_fn log, void *user, const char *fmt, va_list ap)
{
    if (!log)
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    log(user, msg);
}

void adb_logf(rd_adb_log_fn log, void *user, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    adb_vlogf(log, user, fmt, ap);
    va_end(ap);
}

rd_status adb_split_host_port(const char *text, char *host_buf, size_t host_cap, int *port, rd_error *err)
{
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || colon == text)
        return rd_errorf(err, RD_E_USAGE, "'%s' is not HOST:PORT", text ? text : "");
    size_t hl = (size_t)(colon - text);
    if (hl >= host_cap)
        return rd_errorf(err, RD_E_USAGE, "host name in '%s' is too long", text);
    char *end = NULL;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
        return rd_errorf(err, RD_E_USAGE, "'%s': port must be 1..65535", text);
    memcpy(host_buf, text, hl);
    host_buf[hl] = '\0';
    *port = (int)p;
    return RD_OK;
}

rd_status adb_tcp_connect(const char *host, int port, int timeout_ms, int *out_fd, rd_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int rc = getaddrinfo(host, ports, &hints, &res);
    if (rc != 0)
        return rd_errorf(err, RD_E_IO, "cannot resolve '%s': %s", host, gai_strerror(rc));
    int last_errno = ECONNREFUSED;
    bool timed_out = false;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last_errno = errno;
            close(fd);
            continue;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int pr;
        do
            pr = poll(&pfd, 1, timeout_ms);
        while (pr < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (pr == 0) {
            timed_out = true;
            close(fd);
            continue;
        }
        if (pr < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            last_errno = soerr ? soerr : errno;
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        freeaddrinfo(res);
        *out_fd = fd;
        return RD_OK;
    }
    freeaddrinfo(res);
    if (timed_out)
        return rd_errorf(err, RD_E_TIMEOUT, "connecting to %s:%d timed out after %d ms", host, port, timeout_ms);
    return rd_errorf(err, RD_E_IO, "cannot connect to %s:%d: %s", host, port, strerror(last_errno));
}

static rd_status wait_fd(int fd, short events, int timeout_ms, const char *what, rd_error *err)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    for (;;) {
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr > 0)
            return RD_OK;
        if (pr == 0)
            return rd_errorf(err, RD_E_TIMEOUT, "%s: no answer within %d ms", what, timeout_ms);
        if (errno != EINTR)
            return rd_errorf(err, RD_E_IO, "%s: poll: %s", what, strerror(errno));
    }
}

rd_status adb_fd_read_some(int fd, void *buf, size_t cap, size_t *got, int timeout_ms, const char *what, rd_error *err)
{
    for (;;) {
        ssize_t r = recv(fd, buf, cap, MSG_DONTWAIT);
        if (r >= 0) {
            *got = (size_t)r;
            return RD_OK;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            if (errno == ECONNRESET) {
                *got = 0;
                return RD_OK;
            }
            return rd_errorf(err, RD_E_IO, "%s: %s", what, strerror(errno));
        }
        rd_status st = wait_fd(fd, POLLIN, timeout_ms, what, err);
        if (st != RD_OK)
            return st;
    }
}

rd_status adb_fd_read_exact(int fd, void *buf, size_t n, int timeout_ms, const char *what, rd_error *err)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        size_t got = 0;
        rd_status st = adb_fd_read_some(fd, p + done, n - done, &got, timeout_ms, what, err);
        if (st != RD_OK)
            return st;
        if (got == 0)
            return rd_errorf(err, RD_E_DEVICE, "%s: connection closed by the other side", what);
        done += got;
    }
    return RD_OK;
}

rd_status adb_fd_write_all(int fd, const void *buf, size_t n, int timeout_ms, const char *what, rd_error *err)
{
    const uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t w = send(fd, p + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return rd_errorf(err, RD_E_DEVICE, "%s: connection lost (%s)", what, strerror(errno));
        rd_status st = wait_fd(fd, POLLOUT, timeout_ms, what, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}
