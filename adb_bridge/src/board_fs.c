/*
 * board_fs.c: the fake board's file system for its sync service. Board paths are resolved inside
 * the served folder as if it were '/': with openat2(RESOLVE_IN_ROOT) an absolute link, a relative
 * link or ".." never leaves it, as in a chroot, and links inside it work as on a board. Kernels
 * without openat2 (before 5.6, or where a seccomp filter hides it) get no link following at all,
 * and ".." is refused. The service writes only regular files with a single link, and hands the
 * files it creates to the shell's user (board_sandbox.c), so commands can change them.
 */
#include "board_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int openat2_in_root(int root_fd, const char *path, int flags, unsigned mode)
{
    struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC,
                           .mode = (flags & O_CREAT) ? mode : 0,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    while (*path == '/')
        path++;
    long fd = syscall(SYS_openat2, root_fd, *path ? path : ".", &how, sizeof how);
    return (int)fd;
}

/* Without openat2: component by component, never following a link, ".." refused. */
static int open_nofollow(int root_fd, const char *path, int flags, unsigned mode)
{
    int dir = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *p = path;
    while (dir >= 0) {
        while (*p == '/')
            p++;
        size_t len = strcspn(p, "/");
        const char *rest = p + len;
        while (*rest == '/')
            rest++;
        char name[256];
        if (len >= sizeof name || (len == 2 && p[0] == '.' && p[1] == '.')) {
            close(dir);
            errno = len >= sizeof name ? ENAMETOOLONG : EPERM;
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (*rest == '\0') { /* the last component (or the root itself) */
            int fd = openat(dir, len ? name : ".", flags | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
            int e = errno;
            close(dir);
            errno = e;
            return fd;
        }
        int next = len == 0 || (len == 1 && name[0] == '.')
                       ? dup(dir)
                       : openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dir);
        errno = e;
        dir = next;
        p = rest;
    }
    return -1;
}

bool board_fs_init(rd_board *b, rd_error *err)
{
    b->root_fd = open(b->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (b->root_fd < 0) {
        rd_errorf(err, RD_E_IO, "cannot open the board root %s: %s", b->root, strerror(errno));
        return false;
    }
    int fd = openat2_in_root(b->root_fd, "/", O_PATH, 0);
    b->in_root = fd >= 0;
    if (fd >= 0)
        close(fd);
    else
        board_log(b,
                  "this kernel has no openat2 (%s): links in %s are not followed and '..' is "
                  "refused",
                  strerror(errno), b->root);
    return true;
}

int board_fs_open(const rd_board *b, const char *path, int flags, unsigned mode)
{
    return b->in_root ? openat2_in_root(b->root_fd, path, flags, mode) : open_nofollow(b->root_fd, path, flags, mode);
}

int board_fs_stat(const rd_board *b, const char *path, bool follow, struct stat *st)
{
    int fd = board_fs_open(b, path, O_PATH | (follow ? 0 : O_NOFOLLOW), 0);
    if (fd < 0)
        return -1;
    int rc = fstat(fd, st);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* The folder part of path ("" for "/x") and its last component. */
static bool split_last(const char *path, char *dir, size_t dcap, const char **base)
{
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 0;
    if (dl >= dcap)
        return false;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    *base = slash ? slash + 1 : path;
    return **base != '\0';
}

int board_fs_create(const rd_board *b, const char *path, unsigned mode)
{
    char dir[RD_ADB_PATH_MAX + 1];
    const char *base = NULL;
    if (!split_last(path, dir, sizeof dir, &base)) {
        errno = EINVAL;
        return -1;
    }
    /* the parents, one by one, each created inside the root */
    for (size_t i = 1; i <= strlen(dir); i++) {
        if (dir[i] != '/' && dir[i] != '\0')
            continue;
        char saved = dir[i];
        dir[i] = '\0';
        char parent[RD_ADB_PATH_MAX + 1];
        const char *name = NULL;
        if (split_last(dir, parent, sizeof parent, &name)) {
            int pfd = board_fs_open(b, parent, O_PATH | O_DIRECTORY, 0);
            if (pfd >= 0) {
                if (mkdirat(pfd, name, 0755) == 0)
                    board_sandbox_adopt_at(&b->sandbox, pfd, name);
                close(pfd);
            }
        }
        dir[i] = saved;
    }
    /* not O_TRUNC yet: a FIFO must not block, and a file with other hard links (a system file
     * linked in) must not be written */
    int fd = board_fs_open(b, path, O_WRONLY | O_CREAT | O_NONBLOCK, mode);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = fstat(fd, &st) != 0     ? errno
            : !S_ISREG(st.st_mode)  ? EINVAL
            : st.st_nlink > 1       ? EMLINK
            : ftruncate(fd, 0) != 0 ? errno
                                    : 0;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    board_sandbox_adopt(&b->sandbox, fd);
    return fd;
}
