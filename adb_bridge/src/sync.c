/*
 * sync.c: the client side of the sync service over any byte stream: STAT/STA2, LIST/LIS2, RECV,
 * SEND, QUIT. Replies are parsed with every length checked before use (names <= 4096 bytes, DATA <=
 * 64 KiB, FAIL messages <= 4096 bytes); see docs/internals/adb.md.
 */
#include "adb_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SYNC_NAME_MAX 4096u
#define SYNC_FAIL_MAX 4096u

bool adb_safe_name(const char *name, size_t len)
{
    if (len == 0)
        return false;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (name[i] == '/' || name[i] == '\0' || name[i] == '\\')
            return false;
    return true;
}

rd_status adb_sync_request(adb_stream *s, uint32_t id, const char *path, rd_error *err)
{
    size_t pl = strlen(path);
    if (pl > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_LIMIT, "remote path of %zu bytes is longer than the board accepts (%u)", pl,
                         RD_ADB_PATH_MAX);
    uint8_t buf[8 + RD_ADB_PATH_MAX];
    adb_put_u32(buf, id);
    adb_put_u32(buf + 4, (uint32_t)pl);
    memcpy(buf + 8, path, pl);
    return s->ops->write(s, buf, 8 + pl, err);
}

/* Reads a FAIL message (after the 8-byte header) into an error. */
static rd_status read_fail(adb_stream *s, uint32_t len, const char *path, rd_error *err)
{
    if (len > SYNC_FAIL_MAX)
        return rd_errorf(err, RD_E_DEVICE, "%s: the board sent a FAIL message of %u bytes", path, len);
    char msg[SYNC_FAIL_MAX + 1];
    rd_status st = adb_stream_read_exact(s, msg, len, "sync FAIL", err);
    if (st != RD_OK)
        return st;
    msg[len] = '\0';
    for (uint32_t i = 0; i < len; i++)
        if ((unsigned char)msg[i] < 0x20)
            msg[i] = ' ';
    return rd_errorf(err, RD_E_DEVICE, "%s: the board says: %s", path, msg);
}

rd_status adb_sync_stat(adb_stream *s, bool v2, const char *path, rd_adb_stat *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    rd_status st = adb_sync_request(s, v2 ? SYNC_STA2 : SYNC_STAT, path, err);
    if (st != RD_OK)
        return st;
    if (!v2) {
        uint8_t r[16];
        st = adb_stream_read_exact(s, r, sizeof r, "sync STAT reply", err);
        if (st != RD_OK)
            return st;
        if (adb_get_u32(r) != SYNC_STAT)
            return rd_errorf(err, RD_E_DEVICE, "%s: STAT answered with id 0x%08x", path, adb_get_u32(r));
        out->mode = adb_get_u32(r + 4);
        out->size = adb_get_u32(r + 8);
        out->mtime = adb_get_u32(r + 12);
        out->exists = out->mode != 0 || out->size != 0 || out->mtime != 0;
        return RD_OK;
    }
    uint8_t r[72];
    st = adb_stream_read_exact(s, r, 8, "sync STA2 reply", err);
    if (st != RD_OK)
        return st;
    if (adb_get_u32(r) == SYNC_FAIL)
        return read_fail(s, adb_get_u32(r + 4), path, err);
    if (adb_get_u32(r) != SYNC_STA2)
        return rd_errorf(err, RD_E_DEVICE, "%s: STA2 answered with id 0x%08x", path, adb_get_u32(r));
    st = adb_stream_read_exact(s, r + 8, sizeof r - 8, "sync STA2 reply", err);
    if (st != RD_OK)
        return st;
    uint32_t error = adb_get_u32(r + 4);
    if (error)
        return RD_OK; /* exists stays false */
    out->exists = true;
    out->dev = adb_get_u64(r + 8);
    out->ino = adb_get_u64(r + 16);
    out->mode = adb_get_u32(r + 24);
    out->size = adb_get_u64(r + 40);
    out->mtime = (int64_t)adb_get_u64(r + 56);
    return RD_OK;
}

rd_status adb_sync_list(adb_stream *s, bool v2, const char *path, adb_dirent_fn fn, void *user, rd_error *err)
{
    rd_status st = adb_sync_request(s, v2 ? SYNC_LIS2 : SYNC_LIST, path, err);
    if (st != RD_OK)
        return st;
    const size_t rec = v2 ? 76 : 20;
    const uint32_t want = v2 ? SYNC_DNT2 : SYNC_DENT;
    char *name = malloc(SYNC_NAME_MAX + 1);
    if (!name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (;;) {
        uint8_t r[76];
        st = adb_stream_read_exact(s, r, 8, "sync LIST reply", err);
        if (st != RD_OK)
            break;
        uint32_t id = adb_get_u32(r);
        if (id == SYNC_FAIL) {
            st = read_fail(s, adb_get_u32(r + 4), path, err);
            break;
        }
        if (id != want && id != SYNC_DONE) {
            st = rd_errorf(err, RD_E_DEVICE, "%s: LIST answered with id 0x%08x", path, id);
            break;
        }
        st = adb_stream_read_exact(s, r + 8, rec - 8, "sync LIST reply", err);
        if (st != RD_OK || id == SYNC_DONE)
            break;
        uint32_t namelen = adb_get_u32(r + rec - 4);
        if (namelen > SYNC_NAME_MAX) {
            st = rd_errorf(err, RD_E_DEVICE, "%s: the board listed a name of %u bytes", path, namelen);
            break;
        }
        st = adb_stream_read_exact(s, name, namelen, "sync LIST name", err);
        if (st != RD_OK)
            break;
        name[namelen] = '\0';
        if ((namelen == 1 && name[0] == '.') || (namelen == 2 && name[0] == '.' && name[1] == '.'))
            continue;
        if (strlen(name) != namelen) {
            st = rd_errorf(err, RD_E_DEVICE, "%s: the board listed a name with a NUL byte", path);
            break;
        }
        rd_adb_dirent d = {.name = name};
        if (v2) {
            if (adb_get_u32(r + 4) != 0)
                continue; /* lstat failed on the board */
            d.dev = adb_get_u64(r + 8);
            d.ino = adb_get_u64(r + 16);
            d.mode = adb_get_u32(r + 24);
            d.size = adb_get_u64(r + 40);
            d.mtime = (int64_t)adb_get_u64(r + 56);
        } else {
            d.mode = adb_get_u32(r + 4);
            d.size = adb_get_u32(r + 8);
            d.mtime = adb_get_u32(r + 12);
        }
        st = fn(user, &d, err);
        if (st != RD_OK)
            break;
    }
    free(name);
    return st;
}

rd_status adb_sync_recv(adb_stream *s, const char *path, uint64_t max_size, adb_chunk_fn fn, void *user,
                        uint64_t *out_bytes, bool *failed_by_board, rd_error *err)
{
    if (failed_by_board)
        *failed_by_board = false;
    *out_bytes = 0;
    rd_status st = adb_sync_request(s, SYNC_RECV, path, err);
    if (st != RD_OK)
        return st;
    uint8_t *buf = malloc(RD_ADB_SYNC_DATA_MAX);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    uint64_t total = 0;
    for (;;) {
        uint8_t h[8];
        st = adb_stream_read_exact(s, h, 8, "sync RECV", err);
        if (st != RD_OK)
            break;
        uint32_t id = adb_get_u32(h), len = adb_get_u32(h + 4);
        if (id == SYNC_DONE)
            break;
        if (id == SYNC_FAIL) {
            if (failed_by_board)
                *failed_by_board = true;
            st = read_fail(s, len, path, err);
            break;
        }
        if (id != SYNC_DATA) {
            char name[12];
            st = rd_errorf(err, RD_E_DEVICE, "%s: RECV answered with id %s after %llu bytes", path,
                           adb_command_name(id, name), (unsigned long long)total);
            break;
        }
        if (len > RD_ADB_SYNC_DATA_MAX) {
            st = rd_errorf(err, RD_E_DEVICE, "%s: the board sent a DATA chunk of %u bytes (limit %u)", path, len,
                           RD_ADB_SYNC_DATA_MAX);
            break;
        }
        if (total + len > max_size) {
            st = rd_errorf(err, RD_E_DEVICE, "%s: the board sent more than the %llu bytes it announced", path,
                           (unsigned long long)max_size);
            break;
        }
        st = adb_stream_read_exact(s, buf, len, "sync RECV data", err);
        if (st == RD_OK && fn)
            st = fn(user, buf, len, err);
        if (st != RD_OK)
            break;
        total += len;
    }
    free(buf);
    *out_bytes = total;
    return st;
}

rd_status adb_sync_send(adb_stream *s, const char *path, uint32_t mode, int64_t mtime, adb_fill_fn fill, void *user,
                        rd_error *err)
{
    char spec[RD_ADB_PATH_MAX + 16];
    int w = snprintf(spec, sizeof spec, "%s,%u", path, mode & 07777 ? (unsigned)(mode & 0177777) : 0100644u);
    if (w < 0 || (size_t)w >= sizeof spec || (size_t)w > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_LIMIT, "remote path '%.80s...' is too long", path);
    rd_status st = adb_sync_request(s, SYNC_SEND, spec, err);
    if (st != RD_OK)
        return st;
    uint8_t *buf = malloc(8 + RD_ADB_SYNC_DATA_MAX);
    if (!buf)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (;;) {
        size_t got = 0;
        st = fill(user, buf + 8, RD_ADB_SYNC_DATA_MAX, &got, err);
        if (st != RD_OK || got == 0)
            break;
        adb_put_u32(buf, SYNC_DATA);
        adb_put_u32(buf + 4, (uint32_t)got);
        st = s->ops->write(s, buf, 8 + got, err);
        if (st != RD_OK)
            break;
    }
    if (st == RD_OK) {
        adb_put_u32(buf, SYNC_DONE);
        adb_put_u32(buf + 4, (uint32_t)mtime);
        st = s->ops->write(s, buf, 8, err);
    }
    if (st == RD_OK) {
        st = adb_stream_read_exact(s, buf, 8, "sync SEND reply", err);
        if (st == RD_OK) {
            uint32_t id = adb_get_u32(buf);
            if (id == SYNC_FAIL)
                st = read_fail(s, adb_get_u32(buf + 4), path, err);
            else if (id != SYNC_OKAY)
                st = rd_errorf(err, RD_E_DEVICE, "%s: SEND answered with id 0x%08x", path, id);
        }
    }
    free(buf);
    return st;
}

rd_status adb_sync_quit(adb_stream *s, rd_error *err)
{
    uint8_t q[8];
    adb_put_u32(q, SYNC_QUIT);
    adb_put_u32(q + 4, 0);
    return s->ops->write(s, q, 8, err);
}
