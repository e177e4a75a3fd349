/*
 * board_conn.c: one fake-board connection: the device side of CNXN/AUTH, OPEN/OKAY/WRTE/CLSE with
 * one WRTE in flight per stream, services sync: and shell:, and fault injection on the way out.
 */
#include "board_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define BOARD_IO_TIMEOUT_MS 30000
#define SHELL_OUT_HIGH (256u * 1024u)

static void raw_write(bconn *c, const uint8_t *p, size_t n)
{
    if (c->dead)
        return;
    const board_faults *f = &c->b->faults;
    bool drop = false;
    if (f->drop_after >= 0 && c->bytes_sent + n >= (uint64_t)f->drop_after) {
        n = (size_t)((uint64_t)f->drop_after - c->bytes_sent);
        drop = true;
    }
    rd_error err;
    if (n && adb_fd_write_all(c->fd, p, n, BOARD_IO_TIMEOUT_MS, "board", &err) != RD_OK) {
        board_log(c->b, "%s: %s", c->peer, err.msg);
        c->dead = true;
        return;
    }
    c->bytes_sent += n;
    if (drop) {
        board_log(c->b, "%s: fault: dropping the connection after %llu bytes", c->peer,
                  (unsigned long long)c->bytes_sent);
        c->dead = true;
    }
}

void board_send(bconn *c, uint32_t cmd, uint32_t arg0, uint32_t arg1, const uint8_t *data, size_t n)
{
    if (c->dead)
        return;
    const board_faults *f = &c->b->faults;
    adb_header h = {.command = cmd, .arg0 = arg0, .arg1 = arg1, .data_length = (uint32_t)n, .magic = cmd ^ 0xffffffffu};
    if (c->version < ADB_VERSION || cmd == A_CNXN || cmd == A_AUTH)
        h.data_check = adb_checksum(data, n);
    uint8_t *pad = NULL;
    if (cmd == A_WRTE) {
        c->wrte_count++;
        if (f->corrupt_wrte == c->wrte_count) {
            board_log(c->b, "%s: fault: corrupting the header of WRTE #%d", c->peer, c->wrte_count);
            h.magic ^= 0x00010000u;
        }
        if (f->oversize_wrte == c->wrte_count) {
            board_log(c->b, "%s: fault: oversized WRTE #%d", c->peer, c->wrte_count);
            size_t big = (size_t)c->own_max + 1;
            pad = calloc(1, big);
            if (pad) {
                memcpy(pad, data, n);
                data = pad;
                n = big;
                h.data_length = (uint32_t)big;
                h.data_check = adb_checksum(pad, big);
            }
        }
    }
    /* header and payload in one write: two small writes would meet Nagle and delayed ACKs (40 ms
     * each) */
    uint8_t small[ADB_HEADER_SIZE + 8192];
    if (n <= sizeof small - ADB_HEADER_SIZE) {
        adb_header_encode(&h, small);
        if (n)
            memcpy(small + ADB_HEADER_SIZE, data, n);
        raw_write(c, small, ADB_HEADER_SIZE + n);
    } else {
        uint8_t hdr[ADB_HEADER_SIZE];
        adb_header_encode(&h, hdr);
        raw_write(c, hdr, sizeof hdr);
        raw_write(c, data, n);
    }
    free(pad);
}

uint8_t *bstream_reserve(bstream *s, size_t n)
{
    return adb_queue_room(&s->out, &s->out_off, &s->out_len, &s->out_cap, n, 65536 + 64);
}

bool bstream_out(bstream *s, const void *data, size_t n)
{
    if (n == 0)
        return true;
    uint8_t *p = bstream_reserve(s, n);
    if (!p)
        return false;
    memcpy(p, data, n);
    s->out_len += n;
    return true;
}

void bstream_free(bstream *s)
{
    if (!s)
        return;
    if (s->recv_fd >= 0)
        close(s->recv_fd);
    if (s->send_fd >= 0)
        close(s->send_fd);
    board_shell_kill(s);
    free(s->out);
    free(s->in);
    free(s);
}

static void send_cnxn(bconn *c)
{
    char banner[768];
    int w = snprintf(banner, sizeof banner,
                     "device::ro.product.name=rknn_emulator;ro.product.model=rknn_diag_board_emulate;"
                     "ro.product.device=emulator;features=%s",
                     c->b->features);
    board_send(c, A_CNXN, c->b->version, c->own_max, (const uint8_t *)banner, (size_t)w);
    c->online = true;
    board_log(c->b, "%s: connected (version 0x%08x, max payload %u)", c->peer, c->version, c->max_send);
}

static void send_token(bconn *c)
{
    if (getrandom(c->token, sizeof c->token, 0) != (ssize_t)sizeof c->token)
        for (size_t i = 0; i < sizeof c->token; i++)
            c->token[i] = (uint8_t)(adb_now_ms() * 131 + i * 7);
    board_send(c, A_AUTH, ADB_AUTH_TOKEN, 0, c->token, sizeof c->token);
}

static bool key_trusted(bconn *c, const uint8_t *sig, size_t n)
{
    rd_board *b = c->b;
    bool ok = false;
    pthread_mutex_lock(&b->lock);
    for (size_t i = 0; i < b->n_trusted && !ok; i++)
        ok = adb_pubkey_verify(b->trusted[i], c->token, sizeof c->token, sig, n);
    pthread_mutex_unlock(&b->lock);
    return ok;
}

static void trust_key(rd_board *b, char *key)
{
    key[strcspn(key, " \t\r\n")] = '\0'; /* the base64 word, as the accepted keys are kept */
    pthread_mutex_lock(&b->lock);
    char **nt = realloc(b->trusted, (b->n_trusted + 1) * sizeof *nt);
    if (nt) {
        b->trusted = nt;
        b->trusted[b->n_trusted++] = key;
    } else {
        free(key);
    }
    pthread_mutex_unlock(&b->lock);
}

static bstream *find_stream(bconn *c, uint32_t lid)
{
    for (int i = 0; i < BOARD_MAX_STREAMS; i++)
        if (c->streams[i] && c->streams[i]->lid == lid)
            return c->streams[i];
    return NULL;
}

static void drop_stream(bconn *c, bstream *s)
{
    for (int i = 0; i < BOARD_MAX_STREAMS; i++)
        if (c->streams[i] == s)
            c->streams[i] = NULL;
    bstream_free(s);
}

static void handle_open(bconn *c, uint32_t rid, const uint8_t *data, size_t n)
{
    char service[ADB_MAX_PAYLOAD_V1 + 1];
    while (n > 0 && data[n - 1] == '\0')
        n--;
    if (n > ADB_MAX_PAYLOAD_V1 || rid == 0) {
        board_send(c, A_CLSE, 0, rid, NULL, 0);
        return;
    }
    memcpy(service, data, n);
    service[n] = '\0';
    int slot = -1;
    for (int i = 0; i < BOARD_MAX_STREAMS && slot < 0; i++)
        if (!c->streams[i])
            slot = i;
    bstream *s = slot >= 0 ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        board_send(c, A_CLSE, 0, rid, NULL, 0);
        return;
    }
    s->lid = c->next_id++;
    s->rid = rid;
    s->recv_fd = s->send_fd = -1;
    s->out_fd = s->err_fd = -1;
    s->pid = -1;
    bool ok = false;
    if (strcmp(service, "sync:") == 0) {
        s->kind = BS_SYNC;
        ok = true;
    } else if (strncmp(service, "shell", 5) == 0 && (service[5] == ':' || service[5] == ',')) {
        const char *colon = strchr(service, ':');
        bool v2 = false;
        for (const char *a = service + 5; a < colon; a++)
            if (a[0] == ',' && strncmp(a + 1, "v2", 2) == 0 && (a[3] == ',' || a[3] == ':'))
                v2 = true;
        s->kind = BS_SHELL;
        ok = board_shell_start(c, s, colon + 1, v2);
    } else if (strncmp(service, "exec:", 5) == 0) {
        s->kind = BS_SHELL;
        ok = board_shell_start(c, s, service + 5, false);
    }
    board_log(c->b, "%s: OPEN %s%s", c->peer, service, ok ? "" : " (refused)");
    if (!ok) {
        bstream_free(s);
        board_send(c, A_CLSE, 0, rid, NULL, 0);
        return;
    }
    c->streams[slot] = s;
    board_send(c, A_OKAY, s->lid, s->rid, NULL, 0);
}

static void handle_packet(bconn *c, const adb_header *h)
{
    rd_board *b = c->b;
    const uint8_t *data = c->rx;
    if (c->version < ADB_VERSION && h->data_length && h->data_check != adb_checksum(data, h->data_length)) {
        /* an old adbd checks sums: a host that skips them is refused */
        board_log(b, "%s: bad checksum on a packet (version 0x%08x needs them): closing", c->peer, c->version);
        c->dead = true;
        return;
    }
    switch (h->command) {
    case A_CNXN:
        c->version = h->arg0 < b->version ? h->arg0 : b->version;
        c->max_send = h->arg1 < c->own_max ? h->arg1 : c->own_max;
        if (c->max_send < 64) {
            c->dead = true;
            return;
        }
        if (b->auth)
            send_token(c);
        else
            send_cnxn(c);
        return;
    case A_AUTH:
        if (c->online || !b->auth)
            return;
        if (h->arg0 == ADB_AUTH_SIGNATURE) {
            if (!b->faults.unauthorized && key_trusted(c, data, h->data_length)) {
                board_log(b, "%s: signature accepted", c->peer);
                send_cnxn(c);
            } else {
                send_token(c);
            }
        } else if (h->arg0 == ADB_AUTH_RSAPUBLICKEY) {
            free(c->offered_key);
            c->offered_key = malloc(h->data_length + 1);
            if (!c->offered_key)
                return;
            memcpy(c->offered_key, data, h->data_length);
            c->offered_key[h->data_length] = '\0';
            if (b->faults.unauthorized) {
                board_log(b, "%s: public key offered; fault: never accepting it", c->peer);
                return;
            }
            if (!b->accept_new_keys_ms) { /* nobody at this board taps "Allow" */
                board_log(b,
                          "%s: refused: the host signed with no accepted key and offered a new "
                          "one; to let it in, add its adbkey.pub line to the file given with "
                          "--adb-keys",
                          c->peer);
                return;
            }
            c->accept_at = adb_now_ms() + b->accept_new_keys_ms;
            board_log(b, "%s: public key offered; the \"user\" accepts it in %d ms", c->peer, b->accept_new_keys_ms);
        }
        return;
    default:
        break;
    }
    if (!c->online)
        return;
    bstream *s;
    switch (h->command) {
    case A_OPEN:
        handle_open(c, h->arg0, data, h->data_length);
        break;
    case A_OKAY:
        if ((s = find_stream(c, h->arg1)))
            s->awaiting_okay = false;
        break;
    case A_WRTE:
        s = find_stream(c, h->arg1);
        if (!s) {
            board_send(c, A_CLSE, 0, h->arg0, NULL, 0);
            break;
        }
        if (s->kind == BS_SYNC)
            board_sync_feed(c, s, data, h->data_length);
        board_send(c, A_OKAY, s->lid, s->rid, NULL, 0);
        break;
    case A_CLSE:
        if ((s = find_stream(c, h->arg1)))
            drop_stream(c, s);
        break;
    default:
        break;
    }
}

/* Sends what streams have ready, one WRTE in flight each; closes finished streams. */
static void pump(bconn *c)
{
    for (int i = 0; i < BOARD_MAX_STREAMS && !c->dead && !c->stalled; i++) {
        bstream *s = c->streams[i];
        if (!s || s->awaiting_okay)
            continue;
        if (s->kind == BS_SYNC && s->out_off == s->out_len)
            board_sync_produce(c, s);
        if (c->stalled)
            return;
        if (s->out_off < s->out_len) {
            size_t chunk = s->out_len - s->out_off;
            if (chunk > c->max_send)
                chunk = c->max_send;
            board_send(c, A_WRTE, s->lid, s->rid, s->out + s->out_off, chunk);
            s->out_off += chunk;
            s->awaiting_okay = true;
            continue;
        }
        if (s->closing) {
            board_send(c, A_CLSE, s->lid, s->rid, NULL, 0);
            drop_stream(c, s);
        }
    }
}

static void read_packet(bconn *c)
{
    uint8_t hdr[ADB_HEADER_SIZE];
    rd_error err;
    if (adb_fd_read_exact(c->fd, hdr, sizeof hdr, BOARD_IO_TIMEOUT_MS, "board", &err) != RD_OK) {
        c->dead = true;
        return;
    }
    adb_header h;
    uint32_t limit = c->online ? c->own_max : RD_ADB_MAX_PAYLOAD;
    if (adb_header_decode(hdr, limit, &h, &err) != RD_OK) {
        board_log(c->b, "%s: %s: closing", c->peer, err.msg);
        c->dead = true;
        return;
    }
    if (h.data_length && adb_fd_read_exact(c->fd, c->rx, h.data_length, BOARD_IO_TIMEOUT_MS, "board", &err) != RD_OK) {
        c->dead = true;
        return;
    }
    if (c->stalled)
        return; /* fault: swallow everything */
    handle_packet(c, &h);
}

void *board_conn_main(void *arg)
{
    bconn *c = arg;
    rd_board *b = c->b;
    snprintf(c->peer, sizeof c->peer, "connection %d", c->fd);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->own_max = b->max_payload;
    c->max_send = b->max_payload;
    c->version = ADB_VERSION_MIN;
    c->next_id = 1;
    c->rx = malloc(RD_ADB_MAX_PAYLOAD);
    if (!c->rx)
        c->dead = true;
    while (!c->dead) {
        pump(c);
        if (c->dead)
            break;
        struct pollfd pf[2 + 2 * BOARD_MAX_STREAMS];
        bstream *owner[2 + 2 * BOARD_MAX_STREAMS];
        int np = 0;
        pf[np++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        pf[np++] = (struct pollfd){.fd = b->stop_pipe[0], .events = POLLIN};
        int timeout = 1000;
        for (int i = 0; i < BOARD_MAX_STREAMS && !c->stalled; i++) {
            bstream *s = c->streams[i];
            if (!s || s->kind != BS_SHELL)
                continue;
            if (s->out_len - s->out_off < SHELL_OUT_HIGH) {
                if (s->out_fd >= 0) {
                    owner[np] = s;
                    pf[np++] = (struct pollfd){.fd = s->out_fd, .events = POLLIN};
                }
                if (s->err_fd >= 0) {
                    owner[np] = s;
                    pf[np++] = (struct pollfd){.fd = s->err_fd, .events = POLLIN};
                }
            }
            if (s->out_fd < 0 && s->err_fd < 0 && !s->exited)
                timeout = 20; /* pipes closed: poll for the exit status */
        }
        if (c->accept_at) {
            int left = adb_ms_left(c->accept_at);
            if (left < timeout)
                timeout = left;
        }
        int pr = poll(pf, (nfds_t)np, timeout);
        if (pr < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        if (c->accept_at && adb_ms_left(c->accept_at) == 0 && !c->online) {
            c->accept_at = 0;
            trust_key(b, c->offered_key);
            c->offered_key = NULL;
            board_log(b, "%s: key accepted", c->peer);
            send_cnxn(c);
        }
        if (pf[0].revents)
            read_packet(c);
        for (int i = 2; i < np && !c->dead; i++) {
            bstream *s = owner[i];
            if (pf[i].revents && find_stream(c, s->lid) == s)
                board_shell_poll(c, s, pf[i].fd == s->out_fd, pf[i].fd == s->err_fd);
        }
        for (int i = 0; i < BOARD_MAX_STREAMS; i++) {
            bstream *s = c->streams[i];
            if (s && s->kind == BS_SHELL && s->out_fd < 0 && s->err_fd < 0 && !s->exited)
                board_shell_poll(c, s, false, false);
        }
    }
    for (int i = 0; i < BOARD_MAX_STREAMS; i++)
        bstream_free(c->streams[i]);
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    free(c->rx);
    free(c->offered_key);
    board_log(b, "%s: closed", c->peer);
    board_thread_done(b, pthread_self());
    free(c);
    return NULL;
}
