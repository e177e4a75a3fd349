/*
 * fs_write.c: the one way rknn-diag writes a file (docs/security.md): a unique temporary file in the
 * target's folder, opened relative to that folder with O_CREAT | O_EXCL | O_NOFOLLOW (a planted link is
 * never followed, two runs never share a temporary), written, fsync'ed and renamed over the final name
 * in the same folder. On any failure the temporary file is removed and the final name is untouched.
 *
 * Invariant: between open and commit/abort, f->dir_fd is the folder the temporary file was created in,
 * and the rename (or link, for exclusive files) happens in that same folder whatever happens to its path.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_RANDOM_CHARS 8
#define TMP_TRIES 64
#define NAME_BYTES_MAX 255 /* NAME_MAX on Linux file systems */

struct rd_atomic_file {
    FILE *stream;
    int dir_fd;
    rd_write_options opt;
    char *path; /* the final path, for messages */
    char *base; /* its last component, renamed to relative to dir_fd */
    char tmp[NAME_BYTES_MAX + 1];
};

/* Fills out with n random characters of [A-Za-z0-9]; getrandom, or a clock-and-address mix without it. */
static void random_chars(char *out, size_t n, unsigned attempt)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[TMP_RANDOM_CHARS];
    if (getrandom(r, n, GRND_NONBLOCK) != (ssize_t)n) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 32) ^
                     (uint64_t)(uintptr_t)out ^ ((uint64_t)attempt * 0x9e3779b97f4a7c15u);
        for (size_t i = 0; i < n; i++) {
            x ^= x >> 33;
            x *= 0xff51afd7ed558ccdu;
            r[i] = (unsigned char)(x >> 56);
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[r[i] % (sizeof alphabet - 1)];
}

/* Splits path into a malloc'ed folder ("." when none) and points *base at the last component. */
static rd_status split_path(const char *path, char **dir, const char **base, rd_error *err)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return rd_errorf(err, RD_E_INVAL, "%s: names a folder, not a file to write", path);
    if (strlen(*base) > NAME_BYTES_MAX)
        return rd_errorf(err, RD_E_IO, "%s: the file name is longer than %d bytes", path, NAME_BYTES_MAX);
    *dir = slash ? (slash == path ? sim_strdup("/") : sim_path_dir(path)) : sim_strdup(".");
    return *dir ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
}

/* Creates ".BASE.XXXXXXXX.tmp" in f->dir_fd (BASE shortened to fit a file name); returns the fd or -1. */
static int create_tmp(rd_atomic_file *f, const char *base, int *out_errno)
{
    size_t fixed = 1 + 1 + TMP_RANDOM_CHARS + 4; /* the dot, the separator, the random part, ".tmp" */
    size_t keep = strlen(base);
    if (keep > NAME_BYTES_MAX - fixed)
        keep = NAME_BYTES_MAX - fixed;
    mode_t mode = f->opt.mode ? (mode_t)f->opt.mode : 0644;
    for (unsigned attempt = 0; attempt < TMP_TRIES; attempt++) {
        char rnd[TMP_RANDOM_CHARS];
        random_chars(rnd, sizeof rnd, attempt);
        snprintf(f->tmp, sizeof f->tmp, ".%.*s.%.*s.tmp", (int)keep, base, TMP_RANDOM_CHARS, rnd);
        int fd = openat(f->dir_fd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            *out_errno = errno;
            return -1;
        }
    }
    *out_errno = EEXIST;
    return -1;
}

static void free_file(rd_atomic_file *f)
{
    if (f->dir_fd >= 0)
        close(f->dir_fd);
    free(f->path);
    free(f->base);
    free(f);
}

rd_status rd_atomic_file_open(const char *path, const rd_write_options *opt, rd_atomic_file **out, rd_error *err)
{
    *out = NULL;
    char *dir = NULL;
    const char *base;
    rd_status st = split_path(path, &dir, &base, err);
    if (st != RD_OK)
        return st;
    rd_atomic_file *f = calloc(1, sizeof *f);
    if (!f) {
        free(dir);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    f->dir_fd = -1;
    if (opt)
        f->opt = *opt;
    f->path = sim_strdup(path);
    f->base = sim_strdup(base);
    if (!f->path || !f->base) {
        free(dir);
        free_file(f);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    /* the folder is the caller's (the output folder may be reached through a link); what we create in it
       is never a link */
    f->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (f->dir_fd < 0) {
        st = rd_errorf(err, RD_E_IO, "%s: cannot write into the folder %s: %s", path, dir, strerror(errno));
        free(dir);
        free_file(f);
        return st;
    }
    free(dir);
    int e = 0;
    int fd = create_tmp(f, base, &e);
    if (fd < 0) {
        st = rd_errorf(err, RD_E_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
        free_file(f);
        return st;
    }
    f->stream = fdopen(fd, "wb");
    if (!f->stream) {
        close(fd);
        unlinkat(f->dir_fd, f->tmp, 0);
        free_file(f);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot open a stream: out of memory", path);
    }
    *out = f;
    return RD_OK;
}

FILE *rd_atomic_file_stream(rd_atomic_file *f)
{
    return f->stream;
}

rd_status rd_atomic_file_write(rd_atomic_file *f, const void *buf, size_t len, rd_error *err)
{
    if (len && fwrite(buf, 1, len, f->stream) != len)
        return rd_errorf(err, RD_E_IO, "%s: write failed: %s", f->path, strerror(errno));
    return RD_OK;
}

void rd_atomic_file_abort(rd_atomic_file *f)
{
    if (!f)
        return;
    if (f->stream)
        fclose(f->stream);
    unlinkat(f->dir_fd, f->tmp, 0);
    free_file(f);
}

/* Moves the finished temporary file to its final name in the same folder. */
static int publish(rd_atomic_file *f)
{
    if (!f->opt.exclusive)
        return renameat(f->dir_fd, f->tmp, f->dir_fd, f->base);
    /* link() fails with EEXIST instead of replacing, which rename() cannot */
    if (linkat(f->dir_fd, f->tmp, f->dir_fd, f->base, 0) != 0)
        return -1;
    unlinkat(f->dir_fd, f->tmp, 0);
    return 0;
}

rd_status rd_atomic_file_commit(rd_atomic_file *f, rd_error *err)
{
    rd_status st = RD_OK;
    const char *step = NULL;
    int e = 0;
    if (fflush(f->stream) != 0 || ferror(f->stream))
        step = "write failed";
    else if (fsync(fileno(f->stream)) != 0 && errno != EINVAL && errno != ENOTSUP)
        step = "cannot sync it to disk"; /* EINVAL, ENOTSUP: a file system without fsync */
    e = errno;
    if (fclose(f->stream) != 0 && !step) {
        step = "write failed";
        e = errno;
    }
    f->stream = NULL;
    if (!step && publish(f) != 0) {
        step = f->opt.exclusive && errno == EEXIST ? "exists already; not replaced" : "cannot rename into place";
        e = errno;
    }
    if (step) {
        st = rd_errorf(err, RD_E_IO, "%s: %s%s%s", f->path, step, e && e != EEXIST ? ": " : "",
                       e && e != EEXIST ? strerror(e) : "");
        unlinkat(f->dir_fd, f->tmp, 0);
    } else if (f->opt.durable && fsync(f->dir_fd) != 0 && errno != EINVAL) {
        /* the file is in place; only its durability across a power loss is in doubt */
        st = rd_errorf(err, RD_E_IO, "%s: written, but its folder cannot be synced to disk: %s", f->path,
                       strerror(errno));
    }
    free_file(f);
    return st;
}

rd_status rd_file_write_atomic(const char *path, const void *buf, size_t len, const rd_write_options *opt,
                               rd_error *err)
{
    rd_atomic_file *f;
    rd_status st = rd_atomic_file_open(path, opt, &f, err);
    if (st != RD_OK)
        return st;
    st = rd_atomic_file_write(f, buf, len, err);
    if (st != RD_OK) {
        rd_atomic_file_abort(f);
        return st;
    }
    return rd_atomic_file_commit(f, err);
}

rd_status sim_save_written(rd_status written, const char *path, void *buf, size_t len, bool name_path, rd_error *err)
{
    if (written != RD_OK)
        return name_path ? rd_error_prefix(err, "%s", path) : written;
    rd_status st = rd_file_write_atomic(path, buf, len, NULL, err);
    free(buf);
    return st;
}
