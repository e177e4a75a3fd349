/* transport_tcp.c: the packet transport over TCP (boards with network adb, `adb connect` style). */
#include "adb_internal.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct tcp_transport {
    adb_ptransport base;
    int fd;
} tcp_transport;

static rd_status tcp_write_packet(adb_ptransport *t, const uint8_t hdr[ADB_HEADER_SIZE], const uint8_t *payload,
                                  size_t n, int timeout_ms, rd_error *err)
{
    tcp_transport *tt = (tcp_transport *)t;
    /* Header and small payloads in one segment; a large payload is written straight from its
     * buffer. */
    if (n <= 4096) {
        uint8_t buf[ADB_HEADER_SIZE + 4096];
        for (size_t i = 0; i < ADB_HEADER_SIZE; i++)
            buf[i] = hdr[i];
        for (size_t i = 0; i < n; i++)
            buf[ADB_HEADER_SIZE + i] = payload[i];
        return adb_fd_write_all(tt->fd, buf, ADB_HEADER_SIZE + n, timeout_ms, "sending to the board", err);
    }
    rd_status st = adb_fd_write_all(tt->fd, hdr, ADB_HEADER_SIZE, timeout_ms, "sending to the board", err);
    if (st == RD_OK)
        st = adb_fd_write_all(tt->fd, payload, n, timeout_ms, "sending to the board", err);
    return st;
}

static rd_status tcp_read_exact(adb_ptransport *t, uint8_t *buf, size_t n, int timeout_ms, rd_error *err)
{
    tcp_transport *tt = (tcp_transport *)t;
    return adb_fd_read_exact(tt->fd, buf, n, timeout_ms, "reading from the board", err);
}

static void tcp_destroy(adb_ptransport *t)
{
    tcp_transport *tt = (tcp_transport *)t;
    if (!tt)
        return;
    close(tt->fd);
    free(tt);
}

static const adb_ptransport_ops tcp_ops = {
    .name = "tcp", .write_packet = tcp_write_packet, .read_exact = tcp_read_exact, .destroy = tcp_destroy};

rd_status adb_tcp_transport_create(const char *host_port, int timeout_ms, adb_ptransport **out, rd_error *err)
{
    char host[256];
    int port = 0;
    rd_status st = adb_split_host_port(host_port, host, sizeof host, &port, err);
    if (st != RD_OK)
        return st;
    int fd = -1;
    st = adb_tcp_connect(host, port, timeout_ms, &fd, err);
    if (st != RD_OK)
        return st;
    tcp_transport *tt = calloc(1, sizeof *tt);
    if (!tt) {
        close(fd);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    tt->base.ops = &tcp_ops;
    tt->fd = fd;
    *out = &tt->base;
    return RD_OK;
}
