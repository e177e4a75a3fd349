/*
 * fs_read.c: the one way rknn-diag opens outside files for reading (docs/security.md).
 *
 * Open with O_NONBLOCK so that a FIFO (or a device) never blocks the open, fstat the descriptor and
 * refuse anything but a regular file, then clear O_NONBLOCK; sizes are capped per caller before anything
 * is allocated. Paths that come from data (external data, index.json, the name map) are opened one
 * component at a time below their folder with O_NOFOLLOW, so they cannot leave it. Workload: a few
 * hundred opens per run; nothing here is on a hot path.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a non-regular file is, for messages. */
static const char *file_kind(mode_t m)
{
    static const struct {
        mode_t type;
        const char *name;
    } kinds[] = {{S_IFIFO, "a FIFO (named pipe)"}, {S_IFDIR, "a folder"},  {S_IFCHR, "a character device"},
                 {S_IFBLK, "a block device"},      {S_IFSOCK, "a socket"}, {S_IFLNK, "a symbolic link"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((m & S_IFMT) == kinds[i].type)
            return kinds[i].name;
    return "not a regular file";
}

static rd_status not_regular(const char *path, mode_t m, rd_error *err)
{
    return rd_errorf(err, RD_E_IO, "%s: is %s, not a regular file; rknn-diag reads inputs from regular files only",
                     path, file_kind(m));
}

static rd_status open_failed(const char *path, int e, rd_error *err)
{
    if (e == ELOOP)
        return rd_errorf(err, RD_E_IO, "%s: is a symbolic link, which is not followed here (give the file itself)",
                         path);
    return rd_errorf(err, e == ENOENT || e == ENOTDIR ? RD_E_NOTFOUND : RD_E_IO, "%s: cannot open: %s", path,
                     strerror(e));
}

/* Checks that fd is a regular file of at most max_bytes and makes it blocking; closes fd on failure. */
static rd_status check_opened(int fd, const char *path, uint64_t max_bytes, int *out_fd, uint64_t *out_size,
                              rd_error *err)
{
    struct stat sb;
    rd_status st = RD_OK;
    int fl;
    if (fstat(fd, &sb) != 0)
        st = rd_errorf(err, RD_E_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = not_regular(path, sb.st_mode, err);
    else if ((uint64_t)sb.st_size > max_bytes)
        st = rd_errorf(err, RD_E_LIMIT, "%s: %lld bytes is above the limit of %llu bytes for this kind of file", path,
                       (long long)sb.st_size, (unsigned long long)max_bytes);
    else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        st = rd_errorf(err, RD_E_IO, "%s: %s", path, strerror(errno));
    if (st != RD_OK) {
        close(fd);
        return st;
    }
    *out_fd = fd;
    if (out_size)
        *out_size = (uint64_t)sb.st_size;
    return RD_OK;
}

rd_status rd_file_open_read(const char *path, unsigned flags, uint64_t max_bytes, int *out_fd, uint64_t *out_size,
                            rd_error *err)
{
    int oflags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    if (flags & RD_FILE_NOFOLLOW)
        oflags |= O_NOFOLLOW;
    /* a stat first names a device without opening it (opening some devices has effects) */
    struct stat sb;
    int rc = (flags & RD_FILE_NOFOLLOW) ? lstat(path, &sb) : stat(path, &sb);
    if (rc == 0 && S_ISLNK(sb.st_mode))
        return open_failed(path, ELOOP, err);
    if (rc == 0 && !S_ISREG(sb.st_mode))
        return not_regular(path, sb.st_mode, err);
    int fd = open(path, oflags);
    if (fd < 0)
        return open_failed(path, errno, err);
    return check_opened(fd, path, max_bytes, out_fd, out_size, err);
}

/* One component of a confined path: not empty (a//b, a/) and not "..". */
static bool component_ok(const char *p, size_t n)
{
    return n > 0 && !(n == 2 && p[0] == '.' && p[1] == '.');
}

rd_status rd_file_open_within(const char *dir, const char *rel, uint64_t max_bytes, int *out_fd, uint64_t *out_size,
                              rd_error *err)
{
    if (!rel[0] || rel[0] == '/')
        return rd_errorf(err, RD_E_PARSE, "'%s' is not a relative path inside %s (absolute paths are refused)", rel,
                         dir);
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (!component_ok(p, n))
            return rd_errorf(err, RD_E_PARSE,
                             "'%s' is not a relative path inside %s ('..' and empty components are refused)", rel, dir);
        p += n;
        p += *p == '/';
    }
    int at = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (at < 0)
        return open_failed(dir, errno, err);
    char *full = sim_path_join(dir, rel);
    if (!full) {
        close(at);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    rd_status st = RD_OK;
    const char *p = rel;
    int fd = -1;
    for (;;) {
        size_t n = strcspn(p, "/");
        char part[256];
        if (n >= sizeof part) {
            st = rd_errorf(err, RD_E_IO, "%s: a path component is longer than 255 bytes", full);
            break;
        }
        memcpy(part, p, n);
        part[n] = '\0';
        p += n;
        while (*p == '/')
            p++;
        bool last = *p == '\0';
        if (n == 1 && part[0] == '.' && !last)
            continue;
        struct stat sb;
        if (fstatat(at, part, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
            st = rd_errorf(err, RD_E_IO,
                           "%s: '%s' is a symbolic link; paths read from data must stay inside %s and links are not "
                           "followed there (replace the link by the file)",
                           full, part, dir);
            break;
        }
        int next =
            openat(at, part, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | (last ? 0 : O_DIRECTORY));
        if (next < 0) {
            st = open_failed(full, errno, err);
            break;
        }
        close(at);
        at = -1;
        if (last) {
            fd = next;
            break;
        }
        at = next;
    }
    if (at >= 0)
        close(at);
    if (st == RD_OK)
        st = check_opened(fd, full, max_bytes, out_fd, out_size, err);
    free(full);
    return st;
}

rd_status rd_file_fopen_read(const char *path, unsigned flags, uint64_t max_bytes, FILE **out, rd_error *err)
{
    int fd;
    rd_status st = rd_file_open_read(path, flags, max_bytes, &fd, NULL, err);
    if (st != RD_OK)
        return st;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot open a stream: %s", path, strerror(errno));
    }
    *out = f;
    return RD_OK;
}

rd_status rd_file_read_all(const char *dir, const char *path, uint64_t max_bytes, char **out_buf, size_t *out_len,
                           rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    int fd;
    uint64_t size;
    rd_status st = dir ? rd_file_open_within(dir, path, max_bytes, &fd, &size, err)
                       : rd_file_open_read(path, 0, max_bytes, &fd, &size, err);
    if (st != RD_OK)
        return st;
    if (size >= SIZE_MAX) {
        close(fd);
        return rd_errorf(err, RD_E_LIMIT, "%s: too large to hold in memory", path);
    }
    size_t len = (size_t)size, got = 0;
    char *buf = malloc(len + 1);
    if (!buf) {
        close(fd);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot allocate %zu bytes to read it", path, len + 1);
    }
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            st = rd_errorf(err, RD_E_IO, "%s: short read (%zu of %zu bytes)%s%s", path, got, len, r < 0 ? ": " : "",
                           r < 0 ? strerror(errno) : "");
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (st != RD_OK) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *out_buf = buf;
    *out_len = len;
    return RD_OK;
}

rd_status sim_file_bytes_read(const char *path, uint64_t max_bytes, sim_file_bytes *f, rd_error *err)
{
    f->dir = NULL;
    rd_status st = rd_file_read_all(NULL, path, max_bytes, &f->buf, &f->len, err);
    if (st == RD_OK && !(f->dir = sim_path_dir(path)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    return st;
}

void sim_file_bytes_free(sim_file_bytes *f)
{
    free(f->dir);
    free(f->buf);
    f->dir = NULL;
    f->buf = NULL;
}
