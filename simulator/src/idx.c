/*
 * idx.c: IDX files (the MNIST format: big-endian magic 0x0000TTRR with type TT and rank RR, then RR
 * big-endian u32 dims, then the data), plain or gzip-compressed (zlib reads both transparently).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

static rd_dtype idx_dtype(unsigned code, size_t *size)
{
    switch (code) {
    case 0x08:
        *size = 1;
        return RD_DT_U8;
    case 0x09:
        *size = 1;
        return RD_DT_I8;
    case 0x0B:
        *size = 2;
        return RD_DT_I16;
    case 0x0C:
        *size = 4;
        return RD_DT_I32;
    case 0x0D:
        *size = 4;
        return RD_DT_F32;
    case 0x0E:
        *size = 8;
        return RD_DT_F64;
    default:
        *size = 0;
        return RD_DT_UNDEFINED;
    }
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Data arrives big-endian; the host is little-endian (as every supported target). */
static void swap_to_host(void *data, size_t n, size_t size)
{
    unsigned char *b = data;
    for (size_t i = 0; i < n && size > 1; i++, b += size)
        for (size_t k = 0; k < size / 2; k++) {
            unsigned char t = b[k];
            b[k] = b[size - 1 - k];
            b[size - 1 - k] = t;
        }
}

rd_status rd_idx_load(const char *path, rd_tensor *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    int fd;
    rd_status opened = rd_file_open_read(path, 0, RD_MAX_TENSOR_BYTES, &fd, NULL, err);
    if (opened != RD_OK)
        return opened;
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        close(fd);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot start decompressing: out of memory", path);
    }
    unsigned char head[4];
    rd_status st = RD_OK;
    if (gzread(f, head, 4) != 4) {
        st = rd_errorf(err, RD_E_PARSE, "%s: shorter than the 4-byte IDX magic", path);
        goto out;
    }
    size_t size;
    rd_dtype dt = idx_dtype(head[2], &size);
    int rank = head[3];
    if (head[0] != 0 || head[1] != 0 || dt == RD_DT_UNDEFINED) {
        st = rd_errorf(err, RD_E_PARSE, "%s: byte 0: not an IDX file (magic %02x%02x%02x%02x)", path, head[0], head[1],
                       head[2], head[3]);
        goto out;
    }
    if (rank < 1 || rank > RD_MAX_RANK) {
        st = rd_errorf(err, RD_E_LIMIT, "%s: byte 3: rank %d is outside 1..%d", path, rank, RD_MAX_RANK);
        goto out;
    }
    int64_t dims[RD_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        unsigned char b[4];
        if (gzread(f, b, 4) != 4) {
            st = rd_errorf(err, RD_E_PARSE, "%s: byte %d: truncated in the dimensions", path, 4 + 4 * d);
            goto out;
        }
        dims[d] = be32(b);
    }
    size_t bytes;
    st = rd_shape_bytes(dt, rank, dims, &bytes, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s", path);
        goto out;
    }
    st = rd_tensor_alloc(out, dt, rank, dims, err);
    if (st != RD_OK)
        goto out;
    size_t got = 0;
    while (got < bytes) {
        unsigned chunk = bytes - got > (1u << 30) ? (1u << 30) : (unsigned)(bytes - got);
        int r = gzread(f, (char *)out->data + got, chunk);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got != bytes) {
        st = rd_errorf(err, RD_E_PARSE, "%s: data truncated: %zu of %zu bytes", path, got, bytes);
        rd_tensor_fini(out);
        goto out;
    }
    swap_to_host(out->data, bytes / size, size);
out:
    gzclose(f);
    return st;
}
