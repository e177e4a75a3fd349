/*
 * conn.c: an ADB connection over a packet transport: the CNXN/AUTH handshake (version, max payload,
 * checksums for 0x01000000, RSA keys) and service streams (OPEN/OKAY/WRTE/CLSE, one WRTE in flight
 * per direction). One stream is used at a time; packets for other stream ids are ignored.
 */
#include "adb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_BUF_CAP (8u * 1024u * 1024u) /* bound on data buffered while we are writing */

static void *xmalloc(size_t n)
{
    return malloc(n ? n : 1);
}

rd_status adb_conn_send(adb_conn *c, uint32_t cmd, uint32_t arg0, uint32_t arg1, const uint8_t *data, size_t n,
                        rd_error *err)
{
    char name[12];
    /* CNXN and AUTH may exceed max_send only up to the V1 limit (they are sent before negotiation).
     */
    uint32_t limit = (cmd == A_CNXN || cmd == A_AUTH) ? ADB_MAX_PAYLOAD_V1 : c->max_send;
    if (n > limit)
        return rd_errorf(err, RD_E_LIMIT, "packet %s of %zu bytes exceeds the negotiated limit %u",
                         adb_command_name(cmd, name), n, limit);
    adb_header h = {.command = cmd, .arg0 = arg0, .arg1 = arg1, .data_length = (uint32_t)n, .magic = cmd ^ 0xffffffffu};
    if (c->version < ADB_VERSION || cmd == A_CNXN || cmd == A_AUTH)
        h.data_check = adb_checksum(data, n);
    uint8_t hdr[ADB_HEADER_SIZE];
    adb_header_encode(&h, hdr);
    return c->t->ops->write_packet(c->t, hdr, data, n, c->timeout_ms, err);
}

rd_status adb_conn_recv(adb_conn *c, adb_header *h, rd_error *err)
{
    uint8_t hdr[ADB_HEADER_SIZE];
    rd_status st = c->t->ops->read_exact(c->t, hdr, ADB_HEADER_SIZE, c->timeout_ms, err);
    if (st != RD_OK)
        return st;
    st = adb_header_decode(hdr, c->max_recv, h, err);
    if (st != RD_OK)
        return st;
    if (h->data_length)
        st = c->t->ops->read_exact(c->t, c->rx, h->data_length, c->timeout_ms, err);
    return st;
}

void adb_banner_parse(const char *banner, char *features, size_t fcap, char *desc, size_t dcap)
{
    features[0] = '\0';
    desc[0] = '\0';
    const char *p = strchr(banner, ':');
    p = p ? strchr(p + 1, ':') : NULL;
    if (!p)
        return;
    p++;
    size_t dl = 0;
    while (*p) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        static const struct {
            const char *key, *label;
        } keys[] = {
            {"ro.product.name=", "product:"}, {"ro.product.model=", "model:"}, {"ro.product.device=", "device:"}};
        if (len > 9 && strncmp(p, "features=", 9) == 0)
            snprintf(features, fcap, "%.*s", (int)(len - 9), p + 9);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t kl = strlen(keys[k].key);
            if (len > kl && strncmp(p, keys[k].key, kl) == 0 && dl < dcap) {
                int w =
                    snprintf(desc + dl, dcap - dl, "%s%s%.*s", dl ? " " : "", keys[k].label, (int)(len - kl), p + kl);
                if (w > 0)
                    dl += (size_t)w;
                if (dl >= dcap)
                    dl = dcap - 1;
            }
        }
        p += len;
        if (*p == ';')
            p++;
    }
}

void adb_conn_destroy(adb_conn *c)
{
    if (!c)
        return;
    if (c->t)
        c->t->ops->destroy(c->t);
    free(c->banner);
    free(c->rx);
    free(c);
}

/* Answers AUTH TOKENs: each key signs once, then the public key is offered and we wait for the
 * user. */
typedef struct auth_state {
    int wait_ms; /* how long we wait for the user, for the message */
    adb_keys *keys;
    size_t next_key;
    bool pubkey_sent;
    bool loaded;
} auth_state;

static rd_status answer_token(adb_conn *c, const rd_adb_options *opt, auth_state *a, const uint8_t *token, size_t n,
                              rd_error *err)
{
    if (!a->loaded) {
        rd_status st = adb_keys_load(opt ? opt->home : NULL, c->log, c->log_user, &a->keys, err);
        if (st != RD_OK)
            return rd_error_prefix(err, "the board asks for authentication");
        a->loaded = true;
    }
    if (a->next_key < adb_keys_count(a->keys)) {
        uint8_t sig[512];
        size_t sl = 0;
        rd_status st = adb_keys_sign(a->keys, a->next_key++, token, n, sig, &sl, err);
        if (st != RD_OK)
            return st;
        return adb_conn_send(c, A_AUTH, ADB_AUTH_SIGNATURE, 0, sig, sl, err);
    }
    if (a->pubkey_sent)
        return RD_OK;
    char *pub = NULL;
    rd_status st = adb_keys_public_text(a->keys, &pub, err);
    if (st != RD_OK)
        return st;
    st = adb_conn_send(c, A_AUTH, ADB_AUTH_RSAPUBLICKEY, 0, (const uint8_t *)pub, strlen(pub) + 1, err);
    free(pub);
    if (st != RD_OK)
        return st;
    a->pubkey_sent = true;
    adb_logf(c->log, c->log_user,
             "the board does not know this computer's key yet: accept it on the board (\"Allow USB "
             "debugging?\"); "
             "waiting up to %d s",
             a->wait_ms / 1000);
    return RD_OK;
}

rd_status adb_conn_connect(adb_ptransport *t, const rd_adb_options *opt, int timeout_ms, adb_conn **out, rd_error *err)
{
    adb_conn *c = calloc(1, sizeof *c);
    if (!c) {
        t->ops->destroy(t);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    c->t = t;
    c->version = ADB_VERSION_MIN; /* checksums until the peer says otherwise */
    c->max_send = ADB_MAX_PAYLOAD_V1;
    c->max_recv = RD_ADB_MAX_PAYLOAD;
    c->timeout_ms = timeout_ms;
    c->next_id = 1;
    c->log = opt ? opt->log : NULL;
    c->log_user = opt ? opt->log_user : NULL;
    c->rx = xmalloc(c->max_recv);
    if (!c->rx) {
        adb_conn_destroy(c);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    static const char banner[] = "host::features=" ADB_HOST_FEATURES;
    rd_status st =
        adb_conn_send(c, A_CNXN, ADB_VERSION, RD_ADB_MAX_PAYLOAD, (const uint8_t *)banner, sizeof banner - 1, err);
    auth_state a = {.wait_ms = timeout_ms};
    int64_t deadline = adb_now_ms() + timeout_ms;
    while (st == RD_OK) {
        adb_header h;
        c->timeout_ms = adb_ms_left(deadline);
        if (c->timeout_ms == 0) {
            st = a.pubkey_sent ? rd_errorf(err, RD_E_AUTH,
                                           "the board did not accept this computer's key within %d s: accept it "
                                           "on the board (\"Allow USB debugging?\") and run the command again",
                                           timeout_ms / 1000)
                               : rd_errorf(err, RD_E_TIMEOUT, "the board did not answer CNXN within %d ms", timeout_ms);
            break;
        }
        st = adb_conn_recv(c, &h, err);
        if (st == RD_E_TIMEOUT && a.pubkey_sent)
            st = rd_errorf(err, RD_E_AUTH,
                           "the board did not accept this computer's key within %d s: accept it on the board "
                           "(\"Allow USB debugging?\") and run the command again",
                           timeout_ms / 1000);
        if (st != RD_OK)
            break;
        if (h.command == A_CNXN) {
            if (h.arg0 < ADB_VERSION_MIN) {
                st = rd_errorf(err, RD_E_DEVICE, "the board speaks protocol version 0x%08x, older than 0x%08x", h.arg0,
                               ADB_VERSION_MIN);
                break;
            }
            if (h.arg1 < 64) {
                st = rd_errorf(err, RD_E_DEVICE, "the board announced a maximum payload of %u bytes", h.arg1);
                break;
            }
            c->version = h.arg0 < ADB_VERSION ? h.arg0 : ADB_VERSION;
            c->max_send = h.arg1 < RD_ADB_MAX_PAYLOAD ? h.arg1 : RD_ADB_MAX_PAYLOAD;
            c->banner = xmalloc(h.data_length + 1);
            if (!c->banner) {
                st = rd_errorf(err, RD_E_NOMEM, "out of memory");
                break;
            }
            memcpy(c->banner, c->rx, h.data_length);
            c->banner[h.data_length] = '\0';
            for (size_t i = 0; i < h.data_length; i++) /* a NUL-terminated banner is allowed */
                if (c->banner[i] == '\0')
                    break;
            c->timeout_ms = timeout_ms;
            adb_keys_free(a.keys);
            *out = c;
            return RD_OK;
        }
        if (h.command == A_AUTH && h.arg0 == ADB_AUTH_TOKEN) {
            bool had_keys = a.loaded, had_offered = a.pubkey_sent;
            st = answer_token(c, opt, &a, c->rx, h.data_length, err);
            /* creating a key takes time that is ours, not the board's; the wait for the user starts
             * when the key is offered. Both happen once, so the handshake stays bounded. */
            if (a.loaded != had_keys || a.pubkey_sent != had_offered)
                deadline = adb_now_ms() + timeout_ms;
        } else if (h.command == A_STLS) {
            st = rd_errorf(err, RD_E_UNSUPPORTED,
                           "the board wants TLS (Android 11 wireless debugging), which rknn-diag "
                           "does not speak; "
                           "use `adb tcpip 5555` mode or USB");
        }
        /* anything else before CNXN is ignored, as the protocol asks */
    }
    adb_keys_free(a.keys);
    adb_conn_destroy(c);
    return st;
}

/* ---- packet streams ---- */

typedef struct pstream {
    adb_stream base;
    adb_conn *c;
    uint32_t lid, rid;
    uint8_t *buf; /* data received while we were writing (copied: c->rx is reused) */
    size_t len, off, cap;
    const uint8_t *view; /* the last WRTE, read in place from c->rx until the next receive */
    size_t view_len, view_off;
    bool eof;
} pstream;

static rd_status stash(pstream *s, const uint8_t *data, size_t n, rd_error *err)
{
    if (n == 0)
        return RD_OK; /* an empty WRTE: nothing to keep (and s->buf may be NULL) */
    /* at most STREAM_BUF_CAP bytes kept unread (the queue's capacity then stays within it) */
    if (s->len - s->off + n > STREAM_BUF_CAP)
        return rd_errorf(err, RD_E_DEVICE, "the board sent more than %u bytes without being asked", STREAM_BUF_CAP);
    uint8_t *end = adb_queue_room(&s->buf, &s->off, &s->len, &s->cap, n, 65536);
    if (!end)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(end, data, n);
    s->len += n;
    return RD_OK;
}

/* Handles one packet for this stream; sets *okayed when it is the OKAY we wait for. */
static rd_status pstream_handle(pstream *s, const adb_header *h, bool *okayed, rd_error *err)
{
    if (h->arg1 != s->lid)
        return RD_OK; /* another (old) stream */
    if (h->command == A_WRTE) {
        rd_status st = stash(s, s->c->rx, h->data_length, err);
        if (st != RD_OK)
            return st;
        return adb_conn_send(s->c, A_OKAY, s->lid, s->rid, NULL, 0, err);
    }
    if (h->command == A_CLSE) {
        s->eof = true;
        return RD_OK;
    }
    if (h->command == A_OKAY && okayed)
        *okayed = true;
    return RD_OK;
}

/* Copies the unread part of the in-place view into buf, before c->rx is overwritten. */
static rd_status materialize(pstream *s, rd_error *err)
{
    if (s->view_off == s->view_len)
        return RD_OK;
    rd_status st = stash(s, s->view + s->view_off, s->view_len - s->view_off, err);
    s->view = NULL;
    s->view_len = s->view_off = 0;
    return st;
}

static rd_status pstream_read(adb_stream *base, uint8_t *buf, size_t cap, size_t *got, rd_error *err)
{
    pstream *s = (pstream *)base;
    while (s->off == s->len && s->view_off == s->view_len && !s->eof) {
        adb_header h;
        rd_status st = adb_conn_recv(s->c, &h, err);
        if (st != RD_OK)
            return st;
        if (h.command == A_WRTE && h.arg1 == s->lid) {
            /* read in place: the next receive happens only once this view is consumed (or copied
             * away by a write); the OKAY goes out now so the board prepares the next payload */
            s->view = s->c->rx;
            s->view_len = h.data_length;
            s->view_off = 0;
            st = adb_conn_send(s->c, A_OKAY, s->lid, s->rid, NULL, 0, err);
            if (st != RD_OK)
                return st;
            continue;
        }
        st = pstream_handle(s, &h, NULL, err);
        if (st != RD_OK)
            return st;
    }
    size_t n;
    if (s->off < s->len) {
        n = s->len - s->off < cap ? s->len - s->off : cap;
        memcpy(buf, s->buf + s->off, n);
        s->off += n;
    } else {
        n = s->view_len - s->view_off < cap ? s->view_len - s->view_off : cap;
        if (n)
            memcpy(buf, s->view + s->view_off, n);
        s->view_off += n;
    }
    *got = n;
    return RD_OK;
}

static rd_status pstream_write(adb_stream *base, const uint8_t *data, size_t n, rd_error *err)
{
    pstream *s = (pstream *)base;
    size_t done = 0;
    rd_status st0 = materialize(s, err);
    if (st0 != RD_OK)
        return st0;
    while (done < n) {
        if (s->eof)
            return rd_errorf(err, RD_E_DEVICE, "the board closed the service");
        size_t chunk = n - done < s->c->max_send ? n - done : s->c->max_send;
        rd_status st = adb_conn_send(s->c, A_WRTE, s->lid, s->rid, data + done, chunk, err);
        if (st != RD_OK)
            return st;
        bool okayed = false;
        while (!okayed) {
            if (s->eof)
                return rd_errorf(err, RD_E_DEVICE, "the board closed the service");
            adb_header h;
            st = adb_conn_recv(s->c, &h, err);
            if (st == RD_OK)
                st = pstream_handle(s, &h, &okayed, err);
            if (st != RD_OK)
                return st;
        }
        done += chunk;
    }
    return RD_OK;
}

static void pstream_close(adb_stream *base)
{
    pstream *s = (pstream *)base;
    if (!s)
        return;
    if (!s->eof) {
        rd_error ignored;
        adb_conn_send(s->c, A_CLSE, s->lid, s->rid, NULL, 0, &ignored);
    }
    free(s->buf);
    free(s);
}

static const adb_stream_ops pstream_ops = {.read = pstream_read, .write = pstream_write, .close = pstream_close};

rd_status adb_conn_open(adb_conn *c, const char *service, adb_stream **out, rd_error *err)
{
    size_t sl = strlen(service) + 1; /* the NUL is sent, as adb does */
    if (sl > c->max_send || sl > ADB_MAX_PAYLOAD_V1)
        return rd_errorf(err, RD_E_LIMIT, "service name of %zu bytes is too long for the board", sl);
    pstream *s = calloc(1, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    s->base.ops = &pstream_ops;
    s->c = c;
    s->lid = c->next_id++;
    if (c->next_id == 0)
        c->next_id = 1;
    rd_status st = adb_conn_send(c, A_OPEN, s->lid, 0, (const uint8_t *)service, sl, err);
    while (st == RD_OK) {
        adb_header h;
        st = adb_conn_recv(c, &h, err);
        if (st != RD_OK)
            break;
        if (h.arg1 != s->lid)
            continue;
        if (h.command == A_OKAY) {
            s->rid = h.arg0;
            *out = &s->base;
            return RD_OK;
        }
        if (h.command == A_CLSE) {
            st = rd_errorf(err, RD_E_UNSUPPORTED, "the board refused service '%.60s'", service);
            break;
        }
    }
    free(s);
    return st;
}
