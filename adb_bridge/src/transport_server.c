/*
 * transport_server.c: the adb server's smart-socket protocol (127.0.0.1:5037 or
 * ANDROID_ADB_SERVER_PORT): a request is 4 hex digits of length plus the service name; the answer
 * is OKAY or FAIL + hex4 + reason. host queries answer hex4 + text; host:transport:SERIAL keeps the
 * socket and switches it to the device, after which the next service ("sync:", "shell,v2,raw:...")
 * carries raw service bytes.
 */
#include "adb_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SERVER_REPLY_MAX (1u << 20)

int adb_server_port(const rd_adb_options *opt)
{
    if (opt && opt->server_port > 0)
        return opt->server_port;
    const char *env = getenv("ANDROID_ADB_SERVER_PORT");
    if (env && *env) {
        char *end = NULL;
        errno = 0;
        long p = strtol(env, &end, 10);
        if (!errno && end && !*end && p > 0 && p < 65536)
            return (int)p;
    }
    return RD_ADB_DEFAULT_SERVER_PORT;
}

static rd_status send_request(int fd, const char *service, int timeout_ms, rd_error *err)
{
    size_t n = strlen(service);
    if (n > 0xffff)
        return rd_errorf(err, RD_E_LIMIT, "adb server request too long");
    char buf[8 + 4096];
    if (n > 4096)
        return rd_errorf(err, RD_E_LIMIT, "adb server request of %zu bytes is too long", n);
    snprintf(buf, sizeof buf, "%04x", (unsigned)n);
    memcpy(buf + 4, service, n);
    return adb_fd_write_all(fd, buf, 4 + n, timeout_ms, "writing to the adb server", err);
}

static rd_status read_hex4(int fd, int timeout_ms, uint32_t *out, rd_error *err)
{
    char h[5] = {0};
    rd_status st = adb_fd_read_exact(fd, h, 4, timeout_ms, "reading from the adb server", err);
    if (st != RD_OK)
        return st;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = h[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return rd_errorf(err, RD_E_DEVICE, "the adb server sent a bad length '%.4s'", h);
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return RD_OK;
}

/* Reads OKAY, or FAIL + message turned into an error naming the request. */
static rd_status read_status(int fd, const char *service, int timeout_ms, rd_error *err)
{
    char s[4];
    rd_status st = adb_fd_read_exact(fd, s, 4, timeout_ms, "reading from the adb server", err);
    if (st != RD_OK)
        return st;
    if (memcmp(s, "OKAY", 4) == 0)
        return RD_OK;
    if (memcmp(s, "FAIL", 4) != 0)
        return rd_errorf(err, RD_E_DEVICE, "the adb server answered '%.4s' to %s", s, service);
    uint32_t n = 0;
    st = read_hex4(fd, timeout_ms, &n, err);
    if (st != RD_OK)
        return st;
    char msg[1024];
    size_t keep = n < sizeof msg - 1 ? n : sizeof msg - 1;
    st = adb_fd_read_exact(fd, msg, keep, timeout_ms, "reading from the adb server", err);
    if (st != RD_OK)
        return st;
    msg[keep] = '\0';
    rd_status code = strstr(msg, "not found") || strstr(msg, "no devices") ? RD_E_NOTFOUND
                     : strstr(msg, "unauthorized")                         ? RD_E_AUTH
                     : strstr(msg, "more than one")                        ? RD_E_INVAL
                                                                           : RD_E_DEVICE;
    return rd_errorf(err, code, "adb server: %s", msg);
}

static rd_status server_connect(int port, int timeout_ms, int *fd, rd_error *err)
{
    rd_status st = adb_tcp_connect("127.0.0.1", port, timeout_ms, fd, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "no adb server on port %d", port);
    return RD_OK;
}

rd_status adb_server_query(int port, const char *service, int timeout_ms, char **out, rd_error *err)
{
    int fd = -1;
    rd_status st = server_connect(port, timeout_ms, &fd, err);
    if (st != RD_OK)
        return st;
    uint32_t n = 0;
    st = send_request(fd, service, timeout_ms, err);
    if (st == RD_OK)
        st = read_status(fd, service, timeout_ms, err);
    if (st == RD_OK)
        st = read_hex4(fd, timeout_ms, &n, err);
    char *text = NULL;
    if (st == RD_OK) {
        text = malloc((size_t)n + 1);
        if (!text)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    if (st == RD_OK)
        st = adb_fd_read_exact(fd, text, n, timeout_ms, "reading from the adb server", err);
    close(fd);
    if (st != RD_OK) {
        free(text);
        return st;
    }
    text[n] = '\0';
    *out = text;
    return RD_OK;
}

rd_status adb_server_open(int port, const char *serial, const char *service, int timeout_ms, adb_stream **out,
                          rd_error *err)
{
    int fd = -1;
    rd_status st = server_connect(port, timeout_ms, &fd, err);
    if (st != RD_OK)
        return st;
    char sw[256];
    if (serial && *serial)
        snprintf(sw, sizeof sw, "host:transport:%s", serial);
    else
        snprintf(sw, sizeof sw, "host:transport-any");
    st = send_request(fd, sw, timeout_ms, err);
    if (st == RD_OK)
        st = read_status(fd, sw, timeout_ms, err);
    if (st == RD_OK)
        st = send_request(fd, service, timeout_ms, err);
    if (st == RD_OK) {
        st = read_status(fd, service, timeout_ms, err);
        if (st == RD_E_DEVICE && strstr(err ? err->msg : "", "closed"))
            st = rd_errorf(err, RD_E_UNSUPPORTED, "the board refused service '%.60s'", service);
    }
    if (st != RD_OK) {
        close(fd);
        return st;
    }
    *out = adb_fd_stream_create(fd, timeout_ms);
    if (!*out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    return RD_OK;
}
