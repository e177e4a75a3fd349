/*
 * shell.c: the shell service. With the board's shell_v2 feature: "shell,v2,raw:CMD", packets of
 * id (1 byte) + length (u32 LE) + data, stdout 1, stderr 2, exit 3 (1 byte); we send close-stdin
 * (4) first. Without it (or when the board refuses v2): "shell:CMD", one merged stream and no exit
 * status.
 */
#include "adb_internal.h"

#include <stdlib.h>
#include <string.h>

#define SHELL_ID_STDOUT 1
#define SHELL_ID_STDERR 2
#define SHELL_ID_EXIT 3
#define SHELL_ID_CLOSE_STDIN 4
#define SHELL_PACKET_MAX (1u << 20)

static rd_status shell_v2(adb_stream *s, rd_adb_output_fn out_fn, void *user, int *exit_code, rd_error *err)
{
    uint8_t close_stdin[5] = {SHELL_ID_CLOSE_STDIN, 0, 0, 0, 0};
    rd_status st = s->ops->write(s, close_stdin, sizeof close_stdin, err);
    if (st != RD_OK)
        return st;
    char *buf = malloc(65536);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (;;) {
        uint8_t h[5];
        size_t got = 0;
        st = s->ops->read(s, h, 1, &got, err);
        if (st != RD_OK)
            break;
        if (got == 0) {
            st = rd_errorf(err, RD_E_DEVICE, "the board ended the shell without an exit status");
            break;
        }
        st = adb_stream_read_exact(s, h + 1, 4, "shell packet", err);
        if (st != RD_OK)
            break;
        uint32_t len = adb_get_u32(h + 1);
        if (len > SHELL_PACKET_MAX) {
            st = rd_errorf(err, RD_E_DEVICE, "shell packet of %u bytes", len);
            break;
        }
        if (h[0] == SHELL_ID_EXIT) {
            uint8_t code = 0;
            if (len >= 1)
                st = adb_stream_read_exact(s, &code, 1, "shell exit", err);
            for (uint32_t i = 1; st == RD_OK && i < len; i++) {
                uint8_t skip;
                st = adb_stream_read_exact(s, &skip, 1, "shell exit", err);
            }
            *exit_code = code;
            break;
        }
        while (len > 0 && st == RD_OK) {
            uint32_t n = len < 65536 ? len : 65536;
            st = adb_stream_read_exact(s, buf, n, "shell output", err);
            if (st == RD_OK && out_fn && (h[0] == SHELL_ID_STDOUT || h[0] == SHELL_ID_STDERR))
                out_fn(user, h[0], buf, n);
            len -= n;
        }
        if (st != RD_OK)
            break;
    }
    free(buf);
    return st;
}

static rd_status shell_v1(adb_stream *s, rd_adb_output_fn out_fn, void *user, rd_error *err)
{
    char buf[16384];
    for (;;) {
        size_t got = 0;
        rd_status st = s->ops->read(s, (uint8_t *)buf, sizeof buf, &got, err);
        if (st != RD_OK)
            return st;
        if (got == 0)
            return RD_OK;
        if (out_fn)
            out_fn(user, SHELL_ID_STDOUT, buf, got);
    }
}

rd_status rd_adb_shell_ex(rd_adb *dev, const char *cmd, rd_adb_output_fn out_fn, void *user, int *exit_code,
                          bool *exit_known, rd_error *err)
{
    int dummy;
    if (!exit_code)
        exit_code = &dummy;
    *exit_code = 0;
    if (exit_known)
        *exit_known = false;
    size_t cl = strlen(cmd);
    if (cl > 3800)
        return rd_errorf(err, RD_E_LIMIT, "shell command of %zu bytes is too long (limit 3800)", cl);
    char *service = malloc(cl + 32);
    if (!service)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    adb_stream *s = NULL;
    rd_status st = RD_E_UNSUPPORTED;
    if (adb_has_feature(dev->features, "shell_v2")) {
        memcpy(service, "shell,v2,raw:", 13);
        memcpy(service + 13, cmd, cl + 1);
        st = adb_open_service(dev, service, &s, err);
        if (st == RD_OK) {
            st = shell_v2(s, out_fn, user, exit_code, err);
            if (st == RD_OK && exit_known)
                *exit_known = true;
            s->ops->close(s);
            free(service);
            return st;
        }
    }
    if (st == RD_E_UNSUPPORTED) {
        memcpy(service, "shell:", 6);
        memcpy(service + 6, cmd, cl + 1);
        st = adb_open_service(dev, service, &s, err);
        if (st == RD_OK) {
            st = shell_v1(s, out_fn, user, err);
            s->ops->close(s);
        }
    }
    free(service);
    return st;
}

rd_status rd_adb_shell(rd_adb *dev, const char *cmd, rd_adb_output_fn out_fn, void *user, int *exit_code, rd_error *err)
{
    return rd_adb_shell_ex(dev, cmd, out_fn, user, exit_code, NULL, err);
}

#define CAPTURE_MAX (64u << 20)

static void capture_out(void *user, int stream, const char *data, size_t n)
{
    adb_text_add(user, data, n, CAPTURE_MAX);
}

rd_status rd_adb_shell_capture(rd_adb *dev, const char *cmd, char **out_text, size_t *out_len, int *exit_code,
                               rd_error *err)
{
    adb_text c = {0};
    rd_status st = rd_adb_shell(dev, cmd, capture_out, &c, exit_code, err);
    if (st == RD_OK && c.oom)
        st = rd_errorf(err, RD_E_LIMIT, "shell output larger than 64 MiB");
    if (st != RD_OK) {
        free(c.buf);
        return st;
    }
    if (!c.buf) {
        c.buf = calloc(1, 1);
        if (!c.buf)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    *out_text = c.buf;
    if (out_len)
        *out_len = c.len;
    return RD_OK;
}
