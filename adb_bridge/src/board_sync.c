/*
 * board_sync.c: the device side of the sync service for the fake board: STAT/STA2/LST2, LIST/LIS2
 * (with "." and "..", as adbd sends them), RECV (DATA <= 64 KiB, produced as the host OKAYs), SEND,
 * QUIT. Requests may be split across or packed into WRTEs, so input is reassembled in s->in. Paths
 * are resolved inside the served folder by board_fs.c; only regular files are sent (a FIFO there
 * never blocks the board).
 */
#include "board_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#define SYNC_IN_CAP (4u * 1024u * 1024u)

static void sync_fail(bconn *c, bstream *s, const char *fmt, const char *arg)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, fmt, arg);
    uint8_t h[8];
    adb_put_u32(h, SYNC_FAIL);
    adb_put_u32(h + 4, (uint32_t)n);
    bstream_out(s, h, 8);
    bstream_out(s, msg, (size_t)n);
    s->closing = true; /* adbd ends the whole service after a FAIL */
    board_log(c->b, "%s: sync FAIL: %s", c->peer, msg);
}

static void put_stat_v2(const board_faults *f, uint8_t *r, uint32_t id, int error, const struct stat *st)
{
    memset(r, 0, 72);
    adb_put_u32(r, id);
    adb_put_u32(r + 4, (uint32_t)error);
    if (error)
        return;
    if (!f->no_inode) {
        adb_put_u64(r + 8, (uint64_t)st->st_dev);
        adb_put_u64(r + 16, (uint64_t)st->st_ino);
    }
    adb_put_u32(r + 24, (uint32_t)st->st_mode);
    adb_put_u32(r + 28, (uint32_t)st->st_nlink);
    adb_put_u32(r + 32, (uint32_t)st->st_uid);
    adb_put_u32(r + 36, (uint32_t)st->st_gid);
    adb_put_u64(r + 40, f->zero_size ? 0 : (uint64_t)st->st_size);
    adb_put_u64(r + 48, (uint64_t)st->st_atime);
    adb_put_u64(r + 56, (uint64_t)st->st_mtime);
    adb_put_u64(r + 64, (uint64_t)st->st_ctime);
}

static void do_stat(bconn *c, bstream *s, uint32_t id, const char *path)
{
    const board_faults *f = &c->b->faults;
    struct stat st;
    int rc = board_fs_stat(c->b, path, id == SYNC_STA2, &st);
    if (id == SYNC_STAT) {
        uint8_t r[16] = {0};
        adb_put_u32(r, SYNC_STAT);
        if (rc == 0) {
            adb_put_u32(r + 4, (uint32_t)st.st_mode);
            adb_put_u32(r + 8, f->zero_size ? 0 : (uint32_t)st.st_size);
            adb_put_u32(r + 12, (uint32_t)st.st_mtime);
        }
        bstream_out(s, r, sizeof r);
        return;
    }
    uint8_t r[72];
    put_stat_v2(f, r, id, rc == 0 ? 0 : errno, &st);
    bstream_out(s, r, sizeof r);
}

static void dent(const board_faults *f, bstream *s, bool v2, const char *name, const struct stat *st, int error)
{
    size_t nl = strlen(name);
    if (v2) {
        uint8_t r[76];
        put_stat_v2(f, r, SYNC_DNT2, error, st);
        adb_put_u32(r + 72, (uint32_t)nl);
        bstream_out(s, r, sizeof r);
    } else {
        uint8_t r[20];
        adb_put_u32(r, SYNC_DENT);
        adb_put_u32(r + 4, (uint32_t)st->st_mode);
        adb_put_u32(r + 8, f->zero_size ? 0 : (uint32_t)st->st_size);
        adb_put_u32(r + 12, (uint32_t)st->st_mtime);
        adb_put_u32(r + 16, (uint32_t)nl);
        bstream_out(s, r, sizeof r);
    }
    bstream_out(s, name, nl);
}

static void do_list(bconn *c, bstream *s, bool v2, const char *path)
{
    const board_faults *f = &c->b->faults;
    if (f->slow_list_ms) {
        struct timespec ts = {.tv_sec = f->slow_list_ms / 1000, .tv_nsec = (long)(f->slow_list_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL); /* this connection's thread only */
    }
    int fd = board_fs_open(c->b, path, O_RDONLY | O_DIRECTORY, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            struct stat st;
            int rc = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW);
            if (rc != 0 && !v2)
                continue;
            dent(f, s, v2, e->d_name, &st, rc == 0 ? 0 : errno);
        }
        closedir(d);
        for (int i = 0; i < f->n_evil; i++) {
            struct stat st = {.st_mode = S_IFREG | 0644, .st_size = 5};
            board_log(c->b, "%s: fault: listing an extra entry (%zu bytes) named '%.60s'", c->peer, strlen(f->evil[i]),
                      f->evil[i]);
            dent(f, s, v2, f->evil[i], &st, 0);
        }
    }
    uint8_t done[76] = {0};
    adb_put_u32(done, SYNC_DONE);
    bstream_out(s, done, v2 ? 76 : 20);
}

/* A RECV of an entry the evil-name or long-name fault listed: its 5 bytes. */
static bool recv_evil(bconn *c, bstream *s, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    for (int i = 0; i < c->b->faults.n_evil; i++) {
        if (strcmp(base, c->b->faults.evil[i]) != 0)
            continue;
        uint8_t r[8 + 5 + 8];
        adb_put_u32(r, SYNC_DATA);
        adb_put_u32(r + 4, 5);
        memcpy(r + 8, "evil\n", 5);
        adb_put_u32(r + 13, SYNC_DONE);
        adb_put_u32(r + 17, 0);
        bstream_out(s, r, sizeof r);
        return true;
    }
    return false;
}

static void do_recv(bconn *c, bstream *s, const char *path)
{
    rd_board *b = c->b;
    if (b->faults.stall) {
        board_log(b, "%s: fault: stalling at RECV %s", c->peer, path);
        c->stalled = true;
        return;
    }
    bool fail = false;
    pthread_mutex_lock(&b->lock);
    if (b->recv_failed < b->faults.recv_fail) {
        b->recv_failed++;
        fail = true;
    }
    pthread_mutex_unlock(&b->lock);
    if (fail) {
        sync_fail(c, s, "open failed: %s (fault injected)", "Permission denied");
        return;
    }
    if (recv_evil(c, s, path))
        return;
    int fd = board_fs_open(b, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    struct stat st;
    if (fd < 0) {
        sync_fail(c, s, "open failed: %s", strerror(errno));
        return;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        sync_fail(c, s, "open failed: %s", "not a regular file");
        return;
    }
    s->recv_fd = fd;
    s->recv_sent = 0;
}

static void do_send(bconn *c, bstream *s, const char *spec)
{
    const char *comma = strrchr(spec, ',');
    char path[RD_ADB_PATH_MAX + 1];
    size_t pl = comma ? (size_t)(comma - spec) : strlen(spec);
    unsigned long mode = comma ? strtoul(comma + 1, NULL, 10) : 0644;
    snprintf(path, sizeof path, "%.*s", (int)pl, spec);
    int fd = board_fs_create(c->b, path, (unsigned)(mode & 0777 ? mode & 0777 : 0644));
    if (fd < 0) {
        sync_fail(c, s, "cannot open for writing: %s", strerror(errno));
        return;
    }
    s->send_fd = fd;
}

/* Handles one DATA/DONE record of a SEND; returns bytes consumed or 0 when more input is needed. */
static size_t send_record(bconn *c, bstream *s, const uint8_t *p, size_t n)
{
    if (n < 8)
        return 0;
    uint32_t id = adb_get_u32(p), len = adb_get_u32(p + 4);
    if (id == SYNC_DATA) {
        if (len > RD_ADB_SYNC_DATA_MAX) {
            sync_fail(c, s, "%s", "DATA chunk too large");
            return n;
        }
        if (n < 8 + (size_t)len)
            return 0;
        if (write(s->send_fd, p + 8, len) != (ssize_t)len) {
            sync_fail(c, s, "write failed: %s", strerror(errno));
            return n;
        }
        return 8 + (size_t)len;
    }
    if (id == SYNC_DONE) {
        struct timespec ts[2] = {{.tv_sec = (time_t)len}, {.tv_sec = (time_t)len}};
        futimens(s->send_fd, ts);
        close(s->send_fd);
        s->send_fd = -1;
        uint8_t ok[8];
        adb_put_u32(ok, SYNC_OKAY);
        adb_put_u32(ok + 4, 0);
        bstream_out(s, ok, 8);
        return 8;
    }
    sync_fail(c, s, "%s", "unexpected record during SEND");
    return n;
}

static void process(bconn *c, bstream *s)
{
    size_t off = 0;
    while (!s->closing && s->recv_fd < 0 && !c->stalled && !c->dead) {
        const uint8_t *p = s->in + off;
        size_t n = s->in_len - off;
        if (s->send_fd >= 0) {
            size_t used = send_record(c, s, p, n);
            if (!used)
                break;
            off += used;
            continue;
        }
        if (n < 8)
            break;
        uint32_t id = adb_get_u32(p), len = adb_get_u32(p + 4);
        if (id == SYNC_QUIT) {
            s->closing = true;
            off += 8;
            break;
        }
        bool known = id == SYNC_STAT || id == SYNC_STA2 || id == SYNC_LST2 || id == SYNC_LIST || id == SYNC_LIS2 ||
                     id == SYNC_RECV || id == SYNC_SEND;
        if (!known) {
            char name[12], msg[64];
            snprintf(msg, sizeof msg, "unknown command %s", adb_command_name(id, name));
            sync_fail(c, s, "%s", msg);
            break;
        }
        if (len > RD_ADB_PATH_MAX) {
            sync_fail(c, s, "%s", "path too long");
            break;
        }
        if (n < 8 + (size_t)len)
            break;
        char path[RD_ADB_PATH_MAX + 1];
        memcpy(path, p + 8, len);
        path[len] = '\0';
        off += 8 + len;
        if (id == SYNC_SEND)
            do_send(c, s, path);
        else if (id == SYNC_STAT || id == SYNC_STA2 || id == SYNC_LST2)
            do_stat(c, s, id, path);
        else if (id == SYNC_LIST || id == SYNC_LIS2)
            do_list(c, s, id == SYNC_LIS2, path);
        else
            do_recv(c, s, path);
    }
    if (off) {
        memmove(s->in, s->in + off, s->in_len - off);
        s->in_len -= off;
    }
}

void board_sync_feed(bconn *c, bstream *s, const uint8_t *data, size_t n)
{
    if (s->in_len + n > s->in_cap) {
        size_t cap = s->in_cap ? s->in_cap : 65536;
        while (cap < s->in_len + n)
            cap *= 2;
        uint8_t *ni = cap <= SYNC_IN_CAP ? realloc(s->in, cap) : NULL;
        if (!ni) {
            board_log(c->b, "%s: sync input beyond %u bytes: closing", c->peer, SYNC_IN_CAP);
            c->dead = true;
            return;
        }
        s->in = ni;
        s->in_cap = cap;
    }
    memcpy(s->in + s->in_len, data, n);
    s->in_len += n;
    process(c, s);
}

void board_sync_produce(bconn *c, bstream *s)
{
    if (s->recv_fd < 0) {
        if (s->in_len && !s->closing)
            process(c, s);
        return;
    }
    /* fill up to one payload with DATA records, read straight into the output buffer */
    size_t target = c->max_send > RD_ADB_SYNC_DATA_MAX + 8 ? c->max_send : RD_ADB_SYNC_DATA_MAX + 8;
    while (s->recv_fd >= 0 && s->out_len - s->out_off < target) {
        size_t room = target - (s->out_len - s->out_off);
        size_t want = room > 8 + RD_ADB_SYNC_DATA_MAX ? RD_ADB_SYNC_DATA_MAX : room > 8 ? room - 8 : 0;
        int64_t short_after = c->b->faults.short_after;
        if (short_after >= 0 && (uint64_t)short_after - s->recv_sent < want)
            want = (size_t)((uint64_t)short_after - s->recv_sent);
        uint8_t *p = want ? bstream_reserve(s, 8 + want) : NULL;
        if (want && !p) {
            c->dead = true;
            return;
        }
        ssize_t r = want ? read(s->recv_fd, p + 8, want) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r > 0) {
            adb_put_u32(p, SYNC_DATA);
            adb_put_u32(p + 4, (uint32_t)r);
            s->out_len += 8 + (size_t)r;
            s->recv_sent += (uint64_t)r;
            continue;
        }
        if (want == 0 && room <= 8)
            break; /* no room for a record: the next WRTE */
        if (want == 0 && short_after >= 0)
            board_log(c->b, "%s: fault: cutting a file short after %lld bytes", c->peer, (long long)short_after);
        close(s->recv_fd);
        s->recv_fd = -1;
        if (r < 0) {
            sync_fail(c, s, "read failed: %s", strerror(errno));
            break;
        }
        uint8_t tail[108];
        if (c->b->faults.grow) {
            adb_put_u32(tail, SYNC_DATA);
            adb_put_u32(tail + 4, 100);
            memset(tail + 8, 'X', 100);
            bstream_out(s, tail, 108);
        }
        adb_put_u32(tail, SYNC_DONE);
        adb_put_u32(tail + 4, 0);
        bstream_out(s, tail, 8);
        process(c, s); /* requests that arrived while the file was being sent */
    }
}
