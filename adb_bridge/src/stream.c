/* stream.c: byte streams that are not packet streams: a socket (adb server) and memory (fuzzing).
 */
#include "adb_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rd_status adb_stream_read_exact(adb_stream *s, void *buf, size_t n, const char *what, rd_error *err)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        size_t got = 0;
        rd_status st = s->ops->read(s, p + done, n - done, &got, err);
        if (st != RD_OK)
            return st;
        if (got == 0)
            return rd_errorf(err, RD_E_DEVICE, "%s: the board closed the service", what);
        done += got;
    }
    return RD_OK;
}

#define FD_STREAM_BUF (256u * 1024u)

typedef struct fd_stream {
    adb_stream base;
    int fd;
    int timeout_ms;
    uint8_t *buf; /* read-ahead: small reads (sync headers) are served without a system call each */
    size_t len, off;
} fd_stream;

static rd_status fd_read(adb_stream *s, uint8_t *buf, size_t cap, size_t *got, rd_error *err)
{
    fd_stream *f = (fd_stream *)s;
    if (f->off == f->len) {
        f->off = f->len = 0;
        if (cap >= FD_STREAM_BUF / 4 || !f->buf) /* big reads go straight to the caller */
            return adb_fd_read_some(f->fd, buf, cap, got, f->timeout_ms, "reading from the adb server", err);
        rd_status st =
            adb_fd_read_some(f->fd, f->buf, FD_STREAM_BUF, &f->len, f->timeout_ms, "reading from the adb server", err);
        if (st != RD_OK || f->len == 0) {
            *got = 0;
            return st;
        }
    }
    size_t n = f->len - f->off < cap ? f->len - f->off : cap;
    memcpy(buf, f->buf + f->off, n);
    f->off += n;
    *got = n;
    return RD_OK;
}

static rd_status fd_write(adb_stream *s, const uint8_t *buf, size_t n, rd_error *err)
{
    fd_stream *f = (fd_stream *)s;
    return adb_fd_write_all(f->fd, buf, n, f->timeout_ms, "writing to the adb server", err);
}

static void fd_close(adb_stream *s)
{
    fd_stream *f = (fd_stream *)s;
    if (!f)
        return;
    close(f->fd);
    free(f->buf);
    free(f);
}

static const adb_stream_ops fd_ops = {.read = fd_read, .write = fd_write, .close = fd_close};

adb_stream *adb_fd_stream_create(int fd, int timeout_ms)
{
    fd_stream *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        return NULL;
    }
    f->base.ops = &fd_ops;
    f->buf = malloc(FD_STREAM_BUF); /* NULL is fine: unbuffered reads */
    f->fd = fd;
    f->timeout_ms = timeout_ms;
    return &f->base;
}

typedef struct mem_stream {
    adb_stream base;
    const uint8_t *data;
    size_t len, off;
} mem_stream;

static rd_status mem_read(adb_stream *s, uint8_t *buf, size_t cap, size_t *got, rd_error *err)
{
    mem_stream *m = (mem_stream *)s;
    size_t n = m->len - m->off < cap ? m->len - m->off : cap;
    if (n)
        memcpy(buf, m->data + m->off, n);
    m->off += n;
    *got = n;
    return RD_OK;
}

static rd_status mem_write(adb_stream *s, const uint8_t *buf, size_t n, rd_error *err)
{
    return RD_OK;
}

static void mem_close(adb_stream *s)
{
    free(s);
}

static const adb_stream_ops mem_ops = {.read = mem_read, .write = mem_write, .close = mem_close};

adb_stream *adb_mem_stream_create(const uint8_t *data, size_t n)
{
    mem_stream *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.ops = &mem_ops;
    m->data = data;
    m->len = n;
    return &m->base;
}
