/*
 * transport_fake.c: the in-memory member of the packet-transport vtable. Reads come from a fixed
 * byte string (a scripted board), writes are checked for framing and dropped. Drives the session
 * fuzzer and unit tests of the connection layer without sockets.
 */
#include "adb_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct fake_transport {
    adb_ptransport base;
    const uint8_t *data;
    size_t len, off;
} fake_transport;

static rd_status fake_write_packet(adb_ptransport *t, const uint8_t hdr[ADB_HEADER_SIZE], const uint8_t *payload,
                                   size_t n, int timeout_ms, rd_error *err)
{
    if (adb_get_u32(hdr + 12) != n)
        return rd_errorf(err, RD_E_INVAL, "fake transport: header says %u bytes, payload has %zu",
                         adb_get_u32(hdr + 12), n);
    return RD_OK;
}

static rd_status fake_read_exact(adb_ptransport *t, uint8_t *buf, size_t n, int timeout_ms, rd_error *err)
{
    fake_transport *f = (fake_transport *)t;
    if (f->len - f->off < n)
        return rd_errorf(err, RD_E_DEVICE, "reading from the board: connection closed by the other side");
    memcpy(buf, f->data + f->off, n);
    f->off += n;
    return RD_OK;
}

static void fake_destroy(adb_ptransport *t)
{
    free(t);
}

static const adb_ptransport_ops fake_ops = {
    .name = "fake", .write_packet = fake_write_packet, .read_exact = fake_read_exact, .destroy = fake_destroy};

adb_ptransport *adb_fake_transport_create(const uint8_t *replies, size_t n)
{
    fake_transport *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->base.ops = &fake_ops;
    f->data = replies;
    f->len = n;
    return &f->base;
}
