/*
 * device.c: opening a board (automatic choice of USB, TCP or the adb server), the handle, services,
 * and the device list over every transport.
 */
#include "usb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool adb_has_feature(const char *features, const char *name)
{
    size_t nl = strlen(name);
    const char *p = features;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == nl && strncmp(p, name, nl) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static const char *pick_serial(const rd_adb_options *opt)
{
    if (opt->serial && *opt->serial)
        return opt->serial;
    const char *env = getenv("ANDROID_SERIAL");
    return env && *env ? env : NULL;
}

static rd_status open_packet(rd_adb *dev, adb_ptransport *t, const rd_adb_options *opt, rd_error *err)
{
    rd_status st = adb_conn_connect(t, opt, dev->timeout_ms, &dev->conn, err);
    if (st != RD_OK)
        return st;
    char desc[256];
    adb_banner_parse(dev->conn->banner, dev->features, sizeof dev->features, desc, sizeof desc);
    return RD_OK;
}

/* The server's view of the device: serial (if one device and none asked for) and its features. */
static rd_status open_server(rd_adb *dev, const char *serial, rd_error *err)
{
    if (!serial) {
        char *list = NULL;
        rd_status st = adb_server_query(dev->server_port, "host:devices", dev->timeout_ms, &list, err);
        if (st != RD_OK)
            return st;
        int count = 0;
        char first[128] = "";
        for (char *line = list; line && *line;) {
            char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            char *tab = memchr(line, '\t', len);
            if (tab && tab > line) {
                if (count == 0)
                    snprintf(first, sizeof first, "%.*s", (int)(tab - line), line);
                count++;
            }
            line = nl ? nl + 1 : NULL;
        }
        free(list);
        if (count == 0)
            return rd_errorf(err, RD_E_NOTFOUND, "the adb server on port %d knows no board", dev->server_port);
        if (count > 1)
            return rd_errorf(err, RD_E_INVAL,
                             "the adb server on port %d has %d boards: pick one with --serial (see "
                             "rknn-diag devices)",
                             dev->server_port, count);
        snprintf(dev->serial, sizeof dev->serial, "%s", first);
    } else {
        snprintf(dev->serial, sizeof dev->serial, "%s", serial);
    }
    char q[256];
    snprintf(q, sizeof q, "host-serial:%s:features", dev->serial);
    char *features = NULL;
    rd_status st = adb_server_query(dev->server_port, q, dev->timeout_ms, &features, err);
    if (st != RD_OK)
        return st;
    snprintf(dev->features, sizeof dev->features, "%s", features);
    free(features);
    /* state check: an unauthorized board fails here with a clear message */
    snprintf(q, sizeof q, "host-serial:%s:get-state", dev->serial);
    char *state = NULL;
    st = adb_server_query(dev->server_port, q, dev->timeout_ms, &state, err);
    if (st != RD_OK)
        return st;
    if (strcmp(state, "device") != 0) {
        st = rd_errorf(err, strcmp(state, "unauthorized") == 0 ? RD_E_AUTH : RD_E_DEVICE, "board %s is %s%s",
                       dev->serial, state,
                       strcmp(state, "unauthorized") == 0 ? ": accept this computer's key on the board" : "");
    }
    free(state);
    return st;
}

rd_status adb_open_with(const adb_usb_api *usb, const rd_adb_options *opt, rd_adb **out, rd_error *err)
{
    rd_adb_options defaults = {0};
    if (!opt)
        opt = &defaults;
    if (!out)
        return rd_errorf(err, RD_E_INVAL, "rd_adb_open: out is NULL");
    *out = NULL;
    rd_adb *dev = calloc(1, sizeof *dev);
    if (!dev)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    dev->timeout_ms = opt->timeout_ms > 0 ? opt->timeout_ms : RD_ADB_DEFAULT_TIMEOUT_MS;
    dev->server_port = adb_server_port(opt);
    dev->log = opt->log;
    dev->log_user = opt->log_user;
    const char *serial = pick_serial(opt);
    rd_adb_transport kind = opt->transport;
    rd_status st = RD_OK;
    if (kind == RD_ADB_TCP || (kind == RD_ADB_AUTO && opt->connect && *opt->connect)) {
        if (!opt->connect || !*opt->connect) {
            free(dev);
            return rd_errorf(err, RD_E_USAGE, "the TCP transport needs --connect HOST:PORT");
        }
        dev->kind = RD_ADB_TCP;
        snprintf(dev->serial, sizeof dev->serial, "%s", opt->connect);
        adb_ptransport *t = NULL;
        st = adb_tcp_transport_create(opt->connect, dev->timeout_ms, &t, err);
        if (st == RD_OK)
            st = open_packet(dev, t, opt, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s", opt->connect);
    } else if (kind == RD_ADB_USB || kind == RD_ADB_AUTO) {
        adb_ptransport *t = NULL;
        bool busy = false;
        rd_error uerr;
        st = adb_usb_transport_create_with(usb, serial, dev->timeout_ms, &t, &busy, dev->serial, sizeof dev->serial,
                                           &uerr);
        if (st == RD_OK) {
            dev->kind = RD_ADB_USB;
            st = open_packet(dev, t, opt, err);
        } else if (kind == RD_ADB_USB) {
            if (err)
                *err = uerr;
        } else {
            /* USB held by a server, or no USB board: the adb server is the way */
            if (busy)
                adb_logf(dev->log, dev->log_user, "the USB board is held by an adb server; going through it");
            dev->kind = RD_ADB_SERVER;
            st = open_server(dev, serial, err);
            if (st != RD_OK && !busy && st == RD_E_IO)
                st = rd_errorf(err, RD_E_NOTFOUND,
                               "no board found: none on USB (%s) and no adb server on port %d; "
                               "connect a board, "
                               "use --connect HOST:PORT, or start one with `adb start-server`",
                               uerr.msg, dev->server_port);
        }
    } else {
        dev->kind = RD_ADB_SERVER;
        st = open_server(dev, serial, err);
    }
    if (st != RD_OK) {
        rd_adb_close(dev);
        return st;
    }
    *out = dev;
    return RD_OK;
}

rd_status rd_adb_open(const rd_adb_options *opt, rd_adb **out, rd_error *err)
{
    return adb_open_with(&adb_usb_libusb, opt, out, err);
}

void rd_adb_close(rd_adb *dev)
{
    if (!dev)
        return;
    if (dev->sync) {
        rd_error ignored;
        adb_sync_quit(dev->sync, &ignored);
        dev->sync->ops->close(dev->sync);
    }
    adb_conn_destroy(dev->conn);
    free(dev);
}

const char *rd_adb_transport_name(const rd_adb *dev)
{
    switch (dev->kind) {
    case RD_ADB_USB:
        return "usb";
    case RD_ADB_TCP:
        return "tcp";
    default:
        return "server";
    }
}

const char *rd_adb_serial(const rd_adb *dev)
{
    return dev->serial;
}

const char *rd_adb_features(const rd_adb *dev)
{
    return dev->features;
}

rd_status adb_open_service(rd_adb *dev, const char *service, adb_stream **out, rd_error *err)
{
    if (dev->conn)
        return adb_conn_open(dev->conn, service, out, err);
    return adb_server_open(dev->server_port, dev->serial, service, dev->timeout_ms, out, err);
}

rd_status adb_sync_get(rd_adb *dev, adb_stream **out, rd_error *err)
{
    if (!dev->sync) {
        rd_status st = adb_open_service(dev, "sync:", &dev->sync, err);
        if (st != RD_OK) {
            dev->sync = NULL;
            return st;
        }
    }
    *out = dev->sync;
    return RD_OK;
}

void adb_sync_drop(rd_adb *dev)
{
    if (dev->sync) {
        dev->sync->ops->close(dev->sync);
        dev->sync = NULL;
    }
}

/* ---- devices ---- */

typedef struct dev_list {
    rd_adb_device_info *v;
    size_t n, cap;
} dev_list;

static rd_adb_device_info *dev_add(dev_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        rd_adb_device_info *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v = nv;
        l->cap = cap;
    }
    rd_adb_device_info *d = &l->v[l->n++];
    memset(d, 0, sizeof *d);
    return d;
}

rd_status rd_adb_devices(const rd_adb_options *opt, rd_adb_device_info **out, size_t *n_out, rd_error *err)
{
    rd_adb_options defaults = {0};
    if (!opt)
        opt = &defaults;
    int timeout = opt->timeout_ms > 0 ? opt->timeout_ms : RD_ADB_DEFAULT_TIMEOUT_MS;
    dev_list l = {0};
    rd_error ignored;
    adb_usb_found *usb = NULL;
    size_t n_usb = 0;
    if ((opt->transport == RD_ADB_AUTO || opt->transport == RD_ADB_USB) &&
        adb_usb_list(&usb, &n_usb, &ignored) == RD_OK) {
        for (size_t i = 0; i < n_usb; i++) {
            rd_adb_device_info *d = dev_add(&l);
            if (!d)
                goto nomem;
            snprintf(d->serial, sizeof d->serial, "%s", usb[i].serial[0] ? usb[i].serial : usb[i].path);
            snprintf(d->state, sizeof d->state, "%s", usb[i].busy ? "busy" : "device");
            snprintf(d->transport, sizeof d->transport, "usb");
            snprintf(d->description, sizeof d->description, "%s%s", usb[i].path,
                     usb[i].busy ? " (claimed by another program, e.g. an adb server)" : "");
        }
    }
    free(usb);
    char *list = NULL;
    if ((opt->transport == RD_ADB_AUTO || opt->transport == RD_ADB_SERVER) &&
        adb_server_query(adb_server_port(opt), "host:devices-l", timeout, &list, &ignored) == RD_OK) {
        for (char *line = list; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            char serial[128], state[32];
            size_t sl = strcspn(line, " \t");
            const char *rest = line + sl + strspn(line + sl, " \t");
            size_t stl = strcspn(rest, " \t");
            const char *desc = rest + stl + strspn(rest + stl, " \t");
            if (sl > 0 && sl < sizeof serial && stl > 0 && stl < sizeof state) {
                snprintf(serial, sizeof serial, "%.*s", (int)sl, line);
                snprintf(state, sizeof state, "%.*s", (int)stl, rest);
                rd_adb_device_info *d = dev_add(&l);
                if (!d) {
                    free(list);
                    goto nomem;
                }
                snprintf(d->serial, sizeof d->serial, "%s", serial);
                snprintf(d->state, sizeof d->state, "%s", state);
                snprintf(d->transport, sizeof d->transport, "server");
                snprintf(d->description, sizeof d->description, "%s", desc);
            }
            line = nl ? nl + 1 : NULL;
        }
        free(list);
    }
    if (opt->connect && *opt->connect) {
        rd_adb_options o = *opt;
        o.transport = RD_ADB_TCP;
        rd_adb *dev = NULL;
        rd_error e;
        rd_status st = rd_adb_open(&o, &dev, &e);
        rd_adb_device_info *d = dev_add(&l);
        if (!d) {
            rd_adb_close(dev);
            goto nomem;
        }
        snprintf(d->serial, sizeof d->serial, "%s", opt->connect);
        snprintf(d->transport, sizeof d->transport, "tcp");
        if (st == RD_OK) {
            char feats[512];
            adb_banner_parse(dev->conn->banner, feats, sizeof feats, d->description, sizeof d->description);
            snprintf(d->state, sizeof d->state, "device");
        } else {
            snprintf(d->state, sizeof d->state, "%s", st == RD_E_AUTH ? "unauthorized" : "offline");
            snprintf(d->description, sizeof d->description, "%s", e.msg);
        }
        rd_adb_close(dev);
    }
    *out = l.v;
    *n_out = l.n;
    return RD_OK;
nomem:
    free(l.v);
    return rd_errorf(err, RD_E_NOMEM, "out of memory");
}
