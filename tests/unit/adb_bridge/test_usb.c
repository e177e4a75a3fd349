/*
 * test_usb.c: the USB transport without hardware, through the libusb seam (usb_internal.h): a
 * scripted device checks interface discovery (class 0xff/0x42/0x01, bulk endpoints), the serial
 * number, exact-size reads, the zero-length-packet rule on writes, and a busy claim (an adb server
 * holds the board).
 */
#include "adb_test_util.h"
#include "rd_test.h"
#include "usb_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the scripted device (test-only state) ---- */

#define MAX_XFER 64
static struct {
    struct libusb_endpoint_descriptor eps[2];
    struct libusb_interface_descriptor alts[2];
    struct libusb_interface itfs[2];
    struct libusb_config_descriptor cfg;
    struct libusb_interface_descriptor other_alt;
    struct libusb_interface other_itf;
    struct libusb_config_descriptor other_cfg;
    int claim_rc;
    int out_len[MAX_XFER];
    int n_out;
    const uint8_t *in;
    size_t in_len, in_off;
    int in_piece; /* the device delivers at most this many bytes per transfer (0: all requested) */
    int opened, closed, claimed, released;
    const char *serial; /* NULL: "RK3588EVB01" */
} m;

static int dev_adb, dev_other; /* addresses stand for libusb_device pointers */
static libusb_device *devs[3];

static int mk_init(libusb_context **ctx)
{
    *ctx = NULL;
    return 0;
}
static void mk_exit(libusb_context *ctx) {}
static ssize_t mk_list(libusb_context *ctx, libusb_device ***list)
{
    devs[0] = (libusb_device *)&dev_other;
    devs[1] = (libusb_device *)&dev_adb;
    devs[2] = NULL;
    *list = devs;
    return 2;
}
static void mk_free_list(libusb_device **list, int unref) {}
static int mk_desc(libusb_device *d, struct libusb_device_descriptor *dd)
{
    memset(dd, 0, sizeof *dd);
    dd->bDeviceClass = 0;
    dd->iSerialNumber = (void *)d == (void *)&dev_adb ? 3 : 0;
    return 0;
}
static int mk_cfg(libusb_device *d, struct libusb_config_descriptor **cfg)
{
    *cfg = (void *)d == (void *)&dev_adb ? &m.cfg : &m.other_cfg;
    return 0;
}
static void mk_free_cfg(struct libusb_config_descriptor *cfg) {}
static int mk_open(libusb_device *d, libusb_device_handle **h)
{
    m.opened++;
    *h = (libusb_device_handle *)d;
    return 0;
}
static void mk_close(libusb_device_handle *h)
{
    m.closed++;
}
static int mk_claim(libusb_device_handle *h, int ifnum)
{
    if (m.claim_rc == 0)
        m.claimed++;
    return m.claim_rc;
}
static int mk_release(libusb_device_handle *h, int ifnum)
{
    m.released++;
    return 0;
}
static int mk_string(libusb_device_handle *h, uint8_t idx, unsigned char *data, int len)
{
    const char *serial = m.serial ? m.serial : "RK3588EVB01";
    int n = (int)strlen(serial);
    memcpy(data, serial, (size_t)n);
    return n;
}
static int mk_bulk(libusb_device_handle *h, unsigned char ep, unsigned char *data, int len, int *done, unsigned timeout)
{
    if (!(ep & 0x80)) {
        if (ep != 0x01)
            return LIBUSB_ERROR_IO;
        if (m.n_out < MAX_XFER)
            m.out_len[m.n_out++] = len;
        *done = len;
        return 0;
    }
    if (ep != 0x82)
        return LIBUSB_ERROR_IO;
    if (m.in_off == m.in_len)
        return LIBUSB_ERROR_TIMEOUT;
    size_t n = m.in_len - m.in_off;
    if (m.in_piece && n > (size_t)m.in_piece)
        n = (size_t)m.in_piece;
    if (n > (size_t)len)
        n = (size_t)len;
    memcpy(data, m.in + m.in_off, n);
    m.in_off += n;
    *done = (int)n;
    return 0;
}
static int mk_clear_halt(libusb_device_handle *h, unsigned char ep)
{
    return 0;
}
static uint8_t mk_bus(libusb_device *d)
{
    return 1;
}
static int mk_ports(libusb_device *d, uint8_t *ports, int len)
{
    ports[0] = 2;
    ports[1] = 3;
    return 2;
}

static const adb_usb_api mock = {
    .init = mk_init,
    .exit = mk_exit,
    .get_device_list = mk_list,
    .free_device_list = mk_free_list,
    .get_device_descriptor = mk_desc,
    .get_active_config_descriptor = mk_cfg,
    .free_config_descriptor = mk_free_cfg,
    .open = mk_open,
    .close = mk_close,
    .claim_interface = mk_claim,
    .release_interface = mk_release,
    .get_string_descriptor_ascii = mk_string,
    .bulk_transfer = mk_bulk,
    .clear_halt = mk_clear_halt,
    .get_bus_number = mk_bus,
    .get_port_numbers = mk_ports,
};

static void mock_reset(void)
{
    memset(&m, 0, sizeof m);
    m.eps[0] = (struct libusb_endpoint_descriptor){.bEndpointAddress = 0x01, .bmAttributes = 2, .wMaxPacketSize = 512};
    m.eps[1] = (struct libusb_endpoint_descriptor){.bEndpointAddress = 0x82, .bmAttributes = 2, .wMaxPacketSize = 512};
    /* interface 0: mass storage, interface 1: ADB */
    m.alts[0] = (struct libusb_interface_descriptor){.bInterfaceNumber = 0,
                                                     .bInterfaceClass = 8,
                                                     .bInterfaceSubClass = 6,
                                                     .bInterfaceProtocol = 0x50,
                                                     .bNumEndpoints = 2,
                                                     .endpoint = m.eps};
    m.alts[1] = (struct libusb_interface_descriptor){.bInterfaceNumber = 1,
                                                     .bInterfaceClass = 0xff,
                                                     .bInterfaceSubClass = 0x42,
                                                     .bInterfaceProtocol = 1,
                                                     .bNumEndpoints = 2,
                                                     .endpoint = m.eps};
    m.itfs[0] = (struct libusb_interface){.altsetting = &m.alts[0], .num_altsetting = 1};
    m.itfs[1] = (struct libusb_interface){.altsetting = &m.alts[1], .num_altsetting = 1};
    m.cfg = (struct libusb_config_descriptor){.bNumInterfaces = 2, .interface = m.itfs};
    m.other_alt = m.alts[0];
    m.other_itf = (struct libusb_interface){.altsetting = &m.other_alt, .num_altsetting = 1};
    m.other_cfg = (struct libusb_config_descriptor){.bNumInterfaces = 1, .interface = &m.other_itf};
}

static void test_find_iface(void)
{
    mock_reset();
    adb_usb_iface itf;
    CU_ASSERT_TRUE(adb_usb_find_iface(&m.cfg, &itf));
    CU_ASSERT_EQUAL(itf.ifnum, 1);
    CU_ASSERT_EQUAL(itf.ep_in, 0x82);
    CU_ASSERT_EQUAL(itf.ep_out, 0x01);
    CU_ASSERT_EQUAL(itf.max_packet, 512);
    CU_ASSERT_FALSE(adb_usb_find_iface(&m.other_cfg, &itf));
    /* interrupt endpoints are not ADB's */
    m.eps[0].bmAttributes = 3;
    CU_ASSERT_FALSE(adb_usb_find_iface(&m.cfg, &itf));
    m.eps[0].bmAttributes = 2;
    /* IN and OUT must agree on the packet size */
    m.eps[1].wMaxPacketSize = 64;
    CU_ASSERT_FALSE(adb_usb_find_iface(&m.cfg, &itf));
    m.eps[1].wMaxPacketSize = 512;
    /* protocol 2 is not ADB; DbC 0xdc/0x02/0x01 is */
    m.alts[1].bInterfaceProtocol = 2;
    CU_ASSERT_FALSE(adb_usb_find_iface(&m.cfg, &itf));
    m.alts[1] = (struct libusb_interface_descriptor){.bInterfaceNumber = 1,
                                                     .bInterfaceClass = 0xdc,
                                                     .bInterfaceSubClass = 0x02,
                                                     .bInterfaceProtocol = 1,
                                                     .bNumEndpoints = 2,
                                                     .endpoint = m.eps};
    CU_ASSERT_TRUE(adb_usb_find_iface(&m.cfg, &itf));
    CU_ASSERT_FALSE(adb_usb_find_iface(NULL, &itf));
}

static void test_list(void)
{
    mock_reset();
    adb_usb_found *f = NULL;
    size_t n = 0;
    rd_error err;
    CU_ASSERT_EQUAL(adb_usb_list_with(&mock, &f, &n, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(n, 1u);
    CU_ASSERT_STRING_EQUAL(f[0].serial, "RK3588EVB01");
    CU_ASSERT_STRING_EQUAL(f[0].path, "usb:1-2.3");
    CU_ASSERT_FALSE(f[0].busy);
    CU_ASSERT_EQUAL(m.claimed, m.released);
    CU_ASSERT_EQUAL(m.opened, m.closed);
    free(f);
    m.claim_rc = LIBUSB_ERROR_BUSY;
    CU_ASSERT_EQUAL(adb_usb_list_with(&mock, &f, &n, &err), RD_OK);
    CU_ASSERT_TRUE(n == 1 && f[0].busy);
    free(f);
}

static void test_busy_claim(void)
{
    mock_reset();
    m.claim_rc = LIBUSB_ERROR_BUSY;
    adb_ptransport *t = NULL;
    bool busy = false;
    char serial[64];
    rd_error err;
    CU_ASSERT_EQUAL(adb_usb_transport_create_with(&mock, NULL, 1000, &t, &busy, serial, sizeof serial, &err),
                    RD_E_DEVICE);
    CU_ASSERT_TRUE(busy);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adb kill-server"));
    CU_ASSERT_EQUAL(m.opened, m.closed);
    mock_reset();
    CU_ASSERT_EQUAL(adb_usb_transport_create_with(&mock, "nope", 1000, &t, &busy, serial, sizeof serial, &err),
                    RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nope"));
}

static void test_zlp_and_exact_reads(void)
{
    mock_reset();
    /* the device's CNXN reply, delivered in pieces of 10 bytes: reads must ask for exact sizes */
    static const char banner[] = "device::features=shell_v2";
    uint8_t script[64 + sizeof banner];
    adb_header h = {.command = A_CNXN,
                    .arg0 = 0x01000001,
                    .arg1 = 4096,
                    .data_length = sizeof banner - 1,
                    .magic = A_CNXN ^ 0xffffffffu};
    adb_header_encode(&h, script);
    memcpy(script + 24, banner, sizeof banner - 1);
    m.in = script;
    m.in_len = 24 + sizeof banner - 1;
    m.in_piece = 10;
    adb_ptransport *t = NULL;
    bool busy = false;
    char serial[64];
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(
        adb_usb_transport_create_with(&mock, "RK3588EVB01", 1000, &t, &busy, serial, sizeof serial, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(serial, "RK3588EVB01");
    CU_ASSERT_EQUAL(m.claimed, 1);
    adb_conn *c = NULL;
    CU_ASSERT_EQUAL_FATAL(adb_conn_connect(t, NULL, 1000, &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c->max_send, 4096u);
    /* CNXN went out as header + payload, no ZLP (payload is not a multiple of 512) */
    CU_ASSERT_EQUAL(m.n_out, 2);
    CU_ASSERT_EQUAL(m.out_len[0], 24);
    static uint8_t payload[4096];
    m.n_out = 0;
    CU_ASSERT_EQUAL(adb_conn_send(c, A_WRTE, 1, 2, payload, 512, &err), RD_OK);
    CU_ASSERT_EQUAL(m.n_out, 3);
    CU_ASSERT_EQUAL(m.out_len[1], 512);
    CU_ASSERT_EQUAL(m.out_len[2], 0); /* the zero-length packet */
    m.n_out = 0;
    CU_ASSERT_EQUAL(adb_conn_send(c, A_WRTE, 1, 2, payload, 4096, &err), RD_OK);
    CU_ASSERT_EQUAL(m.n_out, 3);
    CU_ASSERT_EQUAL(m.out_len[2], 0);
    m.n_out = 0;
    CU_ASSERT_EQUAL(adb_conn_send(c, A_WRTE, 1, 2, payload, 513, &err), RD_OK);
    CU_ASSERT_EQUAL(m.n_out, 2);
    m.n_out = 0;
    CU_ASSERT_EQUAL(adb_conn_send(c, A_OKAY, 1, 2, NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(m.n_out, 1); /* header only: no payload, no ZLP */
    /* nothing more from the device: a timeout, not a hang */
    adb_header got;
    CU_ASSERT_EQUAL(adb_conn_recv(c, &got, &err), RD_E_TIMEOUT);
    adb_conn_destroy(c);
    CU_ASSERT_EQUAL(m.released, 1);
    CU_ASSERT_EQUAL(m.opened, m.closed);
}

static void note(void *user, const char *msg)
{
    snprintf(user, 512, "%s", msg);
}

static void test_busy_falls_back_to_server(void)
{
    mock_reset();
    m.claim_rc = LIBUSB_ERROR_BUSY; /* an adb server holds the board */
    m.serial = "board-1";
    at_server srv;
    CU_ASSERT_FATAL(at_server_start(&srv, 2)); /* features, get-state */
    char log[512] = "";
    rd_adb_options o = {.serial = "board-1", .server_port = srv.port, .timeout_ms = 2000, .log = note, .log_user = log};
    rd_adb *dev = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(adb_open_with(&mock, &o, &dev, &err), RD_OK);
    if (dev) {
        CU_ASSERT_STRING_EQUAL(rd_adb_transport_name(dev), "server");
        CU_ASSERT_STRING_EQUAL(rd_adb_features(dev), "shell_v2");
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "held by an adb server"));
    rd_adb_close(dev);
    at_server_stop(&srv);
    /* explicit --usb does not fall back: the busy claim is the error */
    mock_reset();
    m.claim_rc = LIBUSB_ERROR_BUSY;
    m.serial = "board-1";
    o.transport = RD_ADB_USB;
    CU_ASSERT_EQUAL(adb_open_with(&mock, &o, &dev, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "claimed by another program"));
}

RD_TEST_REGISTER(register_usb)
{
    RD_SUITE("adb_usb", {"interface discovery", test_find_iface}, {"list", test_list}, {"busy claim", test_busy_claim},
             {"zero-length packets, exact reads", test_zlp_and_exact_reads},
             {"busy board: fallback to the server", test_busy_falls_back_to_server});
}
