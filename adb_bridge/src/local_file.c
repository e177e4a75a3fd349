/*
 * local_file.c: the one place adb_bridge creates files on the host (pulled files, ~/.android/adbkey
 * and adbkey.pub). A file is written under a short unique temporary name in its own folder (so the
 * name always fits, whatever the length of the final one), created with O_EXCL|O_NOFOLLOW (a
 * planted link is never followed, two writers never share a file), fsync'ed, and renamed to its
 * name only when complete: a name never holds a partial file.
 */
#include "adb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define TMP_TRIES 16

/* ".rd-" + 10 random characters + ".part": 19 bytes */
static void tmp_name(char *out, size_t cap, unsigned attempt)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint8_t r[10];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        uint64_t x = (uint64_t)adb_now_ms() * 6364136223846793005ull +
                     (uint64_t)getpid() * 1442695040888963407ull + attempt;
        for (size_t i = 0; i < sizeof r; i++, x >>= 6)
            r[i] = (uint8_t)x;
    }
    char s[sizeof r + 1];
    for (size_t i = 0; i < sizeof r; i++)
        s[i] = alphabet[r[i] % (sizeof alphabet - 1)];
    s[sizeof r] = '\0';
    snprintf(out, cap, ".rd-%s.part", s);
}

rd_status adb_local_begin(adb_local_file *f, const char *path, unsigned mode, rd_error *err)
{
    f->fd = -1;
    f->tmp[0] = '\0';
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path)
        return rd_errorf(err, RD_E_LIMIT, "%.200s...: local path longer than %zu bytes", path,
                         sizeof f->path - 1);
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0; /* folder part with its '/' */
    for (unsigned attempt = 0; attempt < TMP_TRIES; attempt++) {
        char name[32];
        tmp_name(name, sizeof name, attempt);
        if (dl + strlen(name) >= sizeof f->tmp)
            return rd_errorf(err, RD_E_LIMIT, "%.200s...: local path longer than %zu bytes", path,
                             sizeof f->tmp - 1);
        memcpy(f->tmp, path, dl);
        snprintf(f->tmp + dl, sizeof f->tmp - dl, "%s", name);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (f->fd >= 0) return RD_OK;
        if (errno != EEXIST) break;
    }
    int e = errno;
    f->tmp[0] = '\0';
    return rd_errorf(err, RD_E_IO, "cannot create a file in %.*s: %s", dl ? (int)dl - 1 : 1,
                     dl ? path : ".", strerror(e));
}

rd_status adb_local_write(adb_local_file *f, const void *data, size_t n, rd_error *err)
{
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return rd_errorf(err, RD_E_IO, "writing %s: %s", f->path,
                             w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return RD_OK;
}

/* renameat2(RENAME_NOREPLACE), or link + unlink where the file system lacks it */
static int rename_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(from, to) != 0) return -1;
    unlink(from);
    return 0;
}

rd_status adb_local_commit(adb_local_file *f, bool replace, int *sys_errno, rd_error *err)
{
    if (sys_errno) *sys_errno = 0;
    int e = 0;
    if (fsync(f->fd) != 0 && errno != EINVAL) e = errno; /* EINVAL: a file system without fsync */
    if (close(f->fd) != 0 && !e) e = errno;
    f->fd = -1;
    if (e) {
        adb_local_abort(f);
        if (sys_errno) *sys_errno = e;
        return rd_errorf(err, RD_E_IO, "writing %s: %s", f->path, strerror(e));
    }
    if ((replace ? rename(f->tmp, f->path) : rename_noreplace(f->tmp, f->path)) != 0) {
        e = errno;
        adb_local_abort(f);
        if (sys_errno) *sys_errno = e;
        return rd_errorf(err, e == EEXIST ? RD_E_INVAL : RD_E_IO, "cannot store %s: %s", f->path,
                         strerror(e));
    }
    f->tmp[0] = '\0';
    return RD_OK;
}

void adb_local_abort(adb_local_file *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp[0]) unlink(f->tmp);
    f->tmp[0] = '\0';
}

rd_status adb_local_write_file(const char *path, const void *data, size_t n, unsigned mode,
                               bool replace, int *sys_errno, rd_error *err)
{
    adb_local_file f;
    if (sys_errno) *sys_errno = 0;
    rd_status st = adb_local_begin(&f, path, mode, err);
    if (st == RD_OK) st = adb_local_write(&f, data, n, err);
    if (st != RD_OK) {
        adb_local_abort(&f);
        return st;
    }
    return adb_local_commit(&f, replace, sys_errno, err);
}
