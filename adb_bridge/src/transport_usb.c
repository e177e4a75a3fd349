/*
 * transport_usb.c: the packet transport over USB with libusb-1.0. Finds interfaces of class 0xff,
 * subclass 0x42, protocol 0x01 and their bulk endpoints; reads a header as exactly 24 bytes and a
 * payload as exactly data_length bytes (the device never sends zero-length packets); writes header
 * and payload as separate transfers and, when the payload is a non-empty multiple of
 * wMaxPacketSize, a zero-length packet, because adbd reads fixed 16 KiB transfers and would
 * otherwise wait (docs/internals/adb.md). A claim that fails with LIBUSB_ERROR_BUSY means an adb
 * server holds the board: the caller then goes through the server.
 */
#include "usb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const adb_usb_api adb_usb_libusb = {
    .init = libusb_init,
    .exit = libusb_exit,
    .get_device_list = libusb_get_device_list,
    .free_device_list = libusb_free_device_list,
    .get_device_descriptor = libusb_get_device_descriptor,
    .get_active_config_descriptor = libusb_get_active_config_descriptor,
    .free_config_descriptor = libusb_free_config_descriptor,
    .open = libusb_open,
    .close = libusb_close,
    .claim_interface = libusb_claim_interface,
    .release_interface = libusb_release_interface,
    .get_string_descriptor_ascii = libusb_get_string_descriptor_ascii,
    .bulk_transfer = libusb_bulk_transfer,
    .clear_halt = libusb_clear_halt,
    .get_bus_number = libusb_get_bus_number,
    .get_port_numbers = libusb_get_port_numbers,
};

bool adb_usb_find_iface(const struct libusb_config_descriptor *cfg, adb_usb_iface *out)
{
    for (int i = 0; cfg && i < cfg->bNumInterfaces; i++) {
        const struct libusb_interface *itf = &cfg->interface[i];
        if (itf->num_altsetting < 1)
            continue;
        const struct libusb_interface_descriptor *alt = &itf->altsetting[0];
        bool adb =
            alt->bInterfaceProtocol == 0x01 && ((alt->bInterfaceClass == 0xff && alt->bInterfaceSubClass == 0x42) ||
                                                (alt->bInterfaceClass == 0xdc && alt->bInterfaceSubClass == 0x02));
        if (!adb)
            continue;
        int in = -1, outp = -1;
        uint16_t in_size = 0, out_size = 0;
        for (int e = 0; e < alt->bNumEndpoints; e++) {
            const struct libusb_endpoint_descriptor *ep = &alt->endpoint[e];
            if ((ep->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_BULK)
                continue;
            if (ep->bEndpointAddress & LIBUSB_ENDPOINT_IN) {
                if (in < 0) {
                    in = ep->bEndpointAddress;
                    in_size = ep->wMaxPacketSize;
                }
            } else if (outp < 0) {
                outp = ep->bEndpointAddress;
                out_size = ep->wMaxPacketSize;
            }
        }
        if (in < 0 || outp < 0 || out_size == 0 || in_size != out_size)
            continue;
        out->ifnum = alt->bInterfaceNumber;
        out->ep_in = (uint8_t)in;
        out->ep_out = (uint8_t)outp;
        out->max_packet = out_size;
        return true;
    }
    return false;
}

static void usb_path(const adb_usb_api *api, libusb_device *d, char *buf, size_t cap)
{
    uint8_t ports[8];
    int np = api->get_port_numbers(d, ports, 8);
    int w = snprintf(buf, cap, "usb:%u-", api->get_bus_number(d));
    for (int i = 0; i < np && w > 0 && (size_t)w < cap; i++)
        w += snprintf(buf + w, cap - (size_t)w, i ? ".%u" : "%u", ports[i]);
}

/* Checks one device; on success (an ADB interface) fills iface, serial and the open handle if
 * wanted. */
static bool probe(const adb_usb_api *api, libusb_device *d, adb_usb_iface *iface, char *serial, size_t scap,
                  libusb_device_handle **handle_out)
{
    struct libusb_device_descriptor dd;
    if (api->get_device_descriptor(d, &dd) != 0)
        return false;
    if (dd.bDeviceClass != 0 && dd.bDeviceClass != 0xef && dd.bDeviceClass != 0xff)
        return false;
    struct libusb_config_descriptor *cfg = NULL;
    if (api->get_active_config_descriptor(d, &cfg) != 0)
        return false;
    bool found = adb_usb_find_iface(cfg, iface);
    api->free_config_descriptor(cfg);
    if (!found)
        return false;
    serial[0] = '\0';
    libusb_device_handle *h = NULL;
    if (api->open(d, &h) != 0)
        return true; /* no permission: listed without a serial */
    if (dd.iSerialNumber) {
        unsigned char buf[128];
        int n = api->get_string_descriptor_ascii(h, dd.iSerialNumber, buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = '\0';
            snprintf(serial, scap, "%s", (char *)buf);
        }
    }
    if (handle_out)
        *handle_out = h;
    else
        api->close(h);
    return true;
}

rd_status adb_usb_list_with(const adb_usb_api *api, adb_usb_found **out, size_t *n, rd_error *err)
{
    *out = NULL;
    *n = 0;
    libusb_context *ctx = NULL;
    if (api->init(&ctx) != 0)
        return RD_OK; /* no USB on this machine */
    libusb_device **list = NULL;
    ssize_t cnt = api->get_device_list(ctx, &list);
    rd_status st = RD_OK;
    adb_usb_found *v = cnt > 0 ? calloc((size_t)cnt, sizeof *v) : NULL;
    if (cnt > 0 && !v)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (ssize_t i = 0; st == RD_OK && i < cnt; i++) {
        adb_usb_iface itf;
        libusb_device_handle *h = NULL;
        adb_usb_found *f = &v[*n];
        if (!probe(api, list[i], &itf, f->serial, sizeof f->serial, &h))
            continue;
        usb_path(api, list[i], f->path, sizeof f->path);
        if (h) {
            int rc = api->claim_interface(h, itf.ifnum);
            if (rc == LIBUSB_ERROR_BUSY)
                f->busy = true;
            else if (rc == 0)
                api->release_interface(h, itf.ifnum);
            api->close(h);
        }
        (*n)++;
    }
    if (cnt >= 0)
        api->free_device_list(list, 1);
    api->exit(ctx);
    if (st != RD_OK) {
        free(v);
        *n = 0;
        return st;
    }
    *out = v;
    return RD_OK;
}

rd_status adb_usb_list(adb_usb_found **out, size_t *n, rd_error *err)
{
    return adb_usb_list_with(&adb_usb_libusb, out, n, err);
}

typedef struct usb_transport {
    adb_ptransport base;
    const adb_usb_api *api;
    libusb_context *ctx;
    libusb_device_handle *h;
    adb_usb_iface itf;
} usb_transport;

static rd_status usb_error(int rc, const char *what, int timeout_ms, rd_error *err)
{
    if (rc == LIBUSB_ERROR_TIMEOUT)
        return rd_errorf(err, RD_E_TIMEOUT, "USB %s: no answer within %d ms", what, timeout_ms);
    if (rc == LIBUSB_ERROR_NO_DEVICE)
        return rd_errorf(err, RD_E_DEVICE, "USB %s: the board was disconnected", what);
    return rd_errorf(err, RD_E_DEVICE, "USB %s: %s", what, libusb_error_name(rc));
}

static rd_status bulk_out(usb_transport *u, const uint8_t *data, size_t n, int timeout_ms, rd_error *err)
{
    int done = 0;
    int rc = u->api->bulk_transfer(u->h, u->itf.ep_out, (unsigned char *)data, (int)n, &done, (unsigned)timeout_ms);
    if (rc != 0)
        return usb_error(rc, "write", timeout_ms, err);
    if ((size_t)done != n)
        return rd_errorf(err, RD_E_DEVICE, "USB write: %d of %zu bytes sent", done, n);
    return RD_OK;
}

static rd_status usb_write_packet(adb_ptransport *t, const uint8_t hdr[ADB_HEADER_SIZE], const uint8_t *payload,
                                  size_t n, int timeout_ms, rd_error *err)
{
    usb_transport *u = (usb_transport *)t;
    rd_status st = bulk_out(u, hdr, ADB_HEADER_SIZE, timeout_ms, err);
    if (st != RD_OK || n == 0)
        return st;
    st = bulk_out(u, payload, n, timeout_ms, err);
    if (st == RD_OK && (n & (size_t)(u->itf.max_packet - 1)) == 0)
        st = bulk_out(u, payload, 0, timeout_ms, err); /* the zero-length packet ends the transfer */
    return st;
}

static rd_status usb_read_exact(adb_ptransport *t, uint8_t *buf, size_t n, int timeout_ms, rd_error *err)
{
    usb_transport *u = (usb_transport *)t;
    size_t done = 0;
    while (done < n) {
        int got = 0;
        int rc = u->api->bulk_transfer(u->h, u->itf.ep_in, buf + done, (int)(n - done), &got, (unsigned)timeout_ms);
        if (rc == LIBUSB_ERROR_OVERFLOW)
            return rd_errorf(err, RD_E_DEVICE, "USB read: the board sent more than the %zu bytes expected", n - done);
        if (rc != 0)
            return usb_error(rc, "read", timeout_ms, err);
        if (got <= 0)
            return rd_errorf(err, RD_E_DEVICE, "USB read: empty transfer while %zu bytes are expected", n - done);
        done += (size_t)got;
    }
    return RD_OK;
}

static void usb_destroy(adb_ptransport *t)
{
    usb_transport *u = (usb_transport *)t;
    if (!u)
        return;
    u->api->release_interface(u->h, u->itf.ifnum);
    u->api->close(u->h);
    u->api->exit(u->ctx);
    free(u);
}

static const adb_ptransport_ops usb_ops = {
    .name = "usb", .write_packet = usb_write_packet, .read_exact = usb_read_exact, .destroy = usb_destroy};

rd_status adb_usb_transport_create_with(const adb_usb_api *api, const char *serial, int timeout_ms,
                                        adb_ptransport **out, bool *busy, char *serial_out, size_t serial_cap,
                                        rd_error *err)
{
    *busy = false;
    libusb_context *ctx = NULL;
    if (api->init(&ctx) != 0)
        return rd_errorf(err, RD_E_NOTFOUND, "libusb cannot start (no USB on this machine)");
    libusb_device **list = NULL;
    ssize_t cnt = api->get_device_list(ctx, &list);
    rd_status st = rd_errorf(err, RD_E_NOTFOUND, serial ? "no USB board with serial '%s'" : "no USB board%s",
                             serial ? serial : "");
    usb_transport *u = NULL;
    int matches = 0;
    for (ssize_t i = 0; i < cnt; i++) {
        adb_usb_iface itf;
        char ser[128], path[64];
        libusb_device_handle *h = NULL;
        if (!probe(api, list[i], &itf, ser, sizeof ser, &h))
            continue;
        usb_path(api, list[i], path, sizeof path);
        if (serial && strcmp(serial, ser) != 0 && strcmp(serial, path) != 0) {
            if (h)
                api->close(h);
            continue;
        }
        matches++;
        if (u) { /* a second board and no serial asked for */
            if (h)
                api->close(h);
            continue;
        }
        if (!h) {
            st = rd_errorf(err, RD_E_DEVICE,
                           "cannot open USB board %s: no permission (install Debian's "
                           "android-sdk-platform-tools-common udev rules or run as root)",
                           path);
            continue;
        }
        int rc = api->claim_interface(h, itf.ifnum);
        if (rc != 0) {
            api->close(h);
            if (rc == LIBUSB_ERROR_BUSY)
                *busy = true;
            st = rd_errorf(err, RD_E_DEVICE,
                           rc == LIBUSB_ERROR_BUSY ? "USB board %s is claimed by another program (an adb server?): "
                                                     "use --server, or stop it with `adb kill-server`"
                                                   : "cannot claim USB board %s",
                           ser[0] ? ser : path);
            continue;
        }
        api->clear_halt(h, itf.ep_in);
        api->clear_halt(h, itf.ep_out);
        u = calloc(1, sizeof *u);
        if (!u) {
            api->release_interface(h, itf.ifnum);
            api->close(h);
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        u->base.ops = &usb_ops;
        u->api = api;
        u->h = h;
        u->itf = itf;
        snprintf(serial_out, serial_cap, "%s", ser[0] ? ser : path);
    }
    if (cnt >= 0)
        api->free_device_list(list, 1);
    if (u && matches > 1 && !serial) {
        api->release_interface(u->h, u->itf.ifnum);
        api->close(u->h);
        free(u);
        api->exit(ctx);
        return rd_errorf(err, RD_E_INVAL, "%d USB boards are connected: pick one with --serial", matches);
    }
    if (!u) {
        api->exit(ctx);
        return st;
    }
    u->ctx = ctx;
    *out = &u->base;
    return RD_OK;
}

rd_status adb_usb_transport_create(const char *serial, int timeout_ms, adb_ptransport **out, bool *busy,
                                   char *serial_out, size_t serial_cap, rd_error *err)
{
    return adb_usb_transport_create_with(&adb_usb_libusb, serial, timeout_ms, out, busy, serial_out, serial_cap, err);
}
