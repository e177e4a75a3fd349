/*
 * usb_internal.h: the seam between the USB transport and libusb. The transport calls libusb only
 * through this table of functions, so tests can replace the few calls it makes with a scripted
 * device (tests/unit/adb_bridge/test_usb.c) while the product uses adb_usb_libusb, the real library.
 */
#ifndef RD_ADB_USB_INTERNAL_H
#define RD_ADB_USB_INTERNAL_H

#include "adb_internal.h"

#include <libusb.h>
#include <sys/types.h>

typedef struct adb_usb_api {
    int (*init)(libusb_context **ctx);
    void (*exit)(libusb_context *ctx);
    ssize_t (*get_device_list)(libusb_context *ctx, libusb_device ***list);
    void (*free_device_list)(libusb_device **list, int unref);
    int (*get_device_descriptor)(libusb_device *dev, struct libusb_device_descriptor *desc);
    int (*get_active_config_descriptor)(libusb_device *dev, struct libusb_config_descriptor **config);
    void (*free_config_descriptor)(struct libusb_config_descriptor *config);
    int (*open)(libusb_device *dev, libusb_device_handle **handle);
    void (*close)(libusb_device_handle *handle);
    int (*claim_interface)(libusb_device_handle *handle, int ifnum);
    int (*release_interface)(libusb_device_handle *handle, int ifnum);
    int (*get_string_descriptor_ascii)(libusb_device_handle *handle, uint8_t index, unsigned char *data, int length);
    int (*bulk_transfer)(libusb_device_handle *handle, unsigned char endpoint, unsigned char *data, int length,
                         int *transferred, unsigned int timeout);
    int (*clear_halt)(libusb_device_handle *handle, unsigned char endpoint);
    uint8_t (*get_bus_number)(libusb_device *dev);
    int (*get_port_numbers)(libusb_device *dev, uint8_t *ports, int len);
} adb_usb_api;

extern const adb_usb_api adb_usb_libusb;

/** Where the ADB function of a device lives. */
typedef struct adb_usb_iface {
    int ifnum;
    uint8_t ep_in, ep_out;
    uint16_t max_packet; /* wMaxPacketSize of the OUT endpoint: the zero-length-packet rule uses it */
} adb_usb_iface;

/** Finds the ADB interface (class 0xff/0x42/0x01 or DbC 0xdc/0x02/0x01) with one bulk IN and one
 * bulk OUT. */
bool adb_usb_find_iface(const struct libusb_config_descriptor *cfg, adb_usb_iface *out);

rd_status adb_usb_list_with(const adb_usb_api *api, adb_usb_found **out, size_t *n, rd_error *err);
rd_status adb_usb_transport_create_with(const adb_usb_api *api, const char *serial, int timeout_ms,
                                        adb_ptransport **out, bool *busy, char *serial_out, size_t serial_cap,
                                        rd_error *err);

/** rd_adb_open with the given libusb table (tests: a busy USB board falls back to the adb server).
 */
rd_status adb_open_with(const adb_usb_api *usb, const rd_adb_options *opt, rd_adb **out, rd_error *err);

#endif
