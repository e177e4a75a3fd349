/*
 * files.c: stat, list and push on top of the sync service (pull is pull.c).
 */
#include "adb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PUSH_MAX_DEPTH 64

static bool use_stat_v2(const rd_adb *dev)
{
    return adb_has_feature(dev->features, "stat_v2");
}

static bool use_ls_v2(const rd_adb *dev)
{
    return adb_has_feature(dev->features, "ls_v2");
}

/* Runs one sync operation; a failure other than a clean FAIL leaves the service unusable, so drop
 * it. */
rd_status rd_adb_stat_path(rd_adb *dev, const char *path, rd_adb_stat *out, rd_error *err)
{
    adb_stream *s = NULL;
    rd_status st = adb_sync_get(dev, &s, err);
    if (st == RD_OK)
        st = adb_sync_stat(s, use_stat_v2(dev), path, out, err);
    if (st != RD_OK)
        adb_sync_drop(dev);
    return st;
}

typedef struct dirent_vec {
    rd_adb_dirent *v;
    size_t n, cap;
} dirent_vec;

static rd_status collect_dirent(void *user, const rd_adb_dirent *d, rd_error *err)
{
    dirent_vec *vec = user;
    if (vec->n == vec->cap) {
        size_t cap = vec->cap ? vec->cap * 2 : 16;
        if (cap > (1u << 20))
            return rd_errorf(err, RD_E_LIMIT, "the board listed more than a million entries");
        rd_adb_dirent *nv = realloc(vec->v, cap * sizeof *nv);
        if (!nv)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        vec->v = nv;
        vec->cap = cap;
    }
    rd_adb_dirent *e = &vec->v[vec->n];
    *e = *d;
    e->name = strdup(d->name);
    if (!e->name)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    vec->n++;
    return RD_OK;
}

void rd_adb_dirents_free(rd_adb_dirent *list, size_t n)
{
    if (!list)
        return;
    for (size_t i = 0; i < n; i++)
        free(list[i].name);
    free(list);
}

rd_status rd_adb_list(rd_adb *dev, const char *path, rd_adb_dirent **out, size_t *n, rd_error *err)
{
    adb_stream *s = NULL;
    dirent_vec vec = {0};
    rd_status st = adb_sync_get(dev, &s, err);
    if (st == RD_OK)
        st = adb_sync_list(s, use_ls_v2(dev), path, collect_dirent, &vec, err);
    if (st != RD_OK) {
        adb_sync_drop(dev);
        rd_adb_dirents_free(vec.v, vec.n);
        return st;
    }
    *out = vec.v;
    *n = vec.n;
    return RD_OK;
}

const char *adb_base_name(const char *path, char *buf, size_t cap)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/')
        start--;
    snprintf(buf, cap, "%.*s", (int)(len - start), path + start);
    return buf;
}

/* ---- push ---- */

typedef struct push_src {
    int fd;
    const char *path;
    rd_adb_progress *prog;
    rd_adb_progress_fn fn;
    void *user;
} push_src;

static rd_status fill_from_fd(void *user, uint8_t *buf, size_t cap, size_t *got, rd_error *err)
{
    push_src *s = user;
    for (;;) {
        ssize_t r = read(s->fd, buf, cap);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return rd_errorf(err, RD_E_IO, "reading %s: %s", s->path, strerror(errno));
        *got = (size_t)r;
        s->prog->file_done += (size_t)r;
        s->prog->all_done += (size_t)r;
        if (s->fn && r > 0)
            s->fn(s->user, s->prog);
        return RD_OK;
    }
}

static rd_status push_file(rd_adb *dev, const char *local, const char *remote, rd_adb_progress *prog,
                           rd_adb_progress_fn fn, void *user, rd_error *err)
{
    int fd = -1; /* a regular file only: a FIFO would block the push */
    rd_status st0 = rd_file_open_read(local, 0, UINT64_MAX, &fd, NULL, err);
    if (st0 != RD_OK)
        return st0;
    struct stat st_;
    if (fstat(fd, &st_) != 0) {
        close(fd);
        return rd_errorf(err, RD_E_IO, "cannot stat %s: %s", local, strerror(errno));
    }
    prog->path = remote;
    prog->file_done = 0;
    prog->file_total = (uint64_t)st_.st_size;
    prog->file_finished = false;
    push_src src = {.fd = fd, .path = local, .prog = prog, .fn = fn, .user = user};
    adb_stream *s = NULL;
    rd_status st = adb_sync_get(dev, &s, err);
    if (st == RD_OK)
        st = adb_sync_send(s, remote, (uint32_t)st_.st_mode, (int64_t)st_.st_mtime, fill_from_fd, &src, err);
    close(fd);
    if (st != RD_OK) {
        adb_sync_drop(dev);
        return st;
    }
    prog->files_done++;
    prog->file_finished = true;
    if (fn)
        fn(user, prog);
    return RD_OK;
}

static rd_status push_tree(rd_adb *dev, const char *local, const char *remote, int depth, rd_adb_progress *prog,
                           rd_adb_progress_fn fn, void *user, rd_error *err)
{
    if (depth > PUSH_MAX_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "%s: folders nested deeper than %d levels", local, PUSH_MAX_DEPTH);
    DIR *d = opendir(local);
    if (!d)
        return rd_errorf(err, RD_E_IO, "cannot open %s: %s", local, strerror(errno));
    rd_status st = RD_OK;
    struct dirent *e;
    while (st == RD_OK && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char lp[ADB_LOCAL_PATH_MAX], rp[RD_ADB_PATH_MAX + 300];
        if ((size_t)snprintf(lp, sizeof lp, "%s/%s", local, e->d_name) >= sizeof lp ||
            (size_t)snprintf(rp, sizeof rp, "%s/%s", remote, e->d_name) > RD_ADB_PATH_MAX) {
            st = rd_errorf(err, RD_E_LIMIT, "%s/%s: path too long", local, e->d_name);
            break;
        }
        struct stat sb;
        if (stat(lp, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            st = push_tree(dev, lp, rp, depth + 1, prog, fn, user, err);
        else if (S_ISREG(sb.st_mode))
            st = push_file(dev, lp, rp, prog, fn, user, err);
    }
    closedir(d);
    return st;
}

rd_status rd_adb_push(rd_adb *dev, const char *local, const char *remote_in, rd_adb_progress_fn progress, void *user,
                      rd_error *err)
{
    struct stat lst;
    if (!local || stat(local, &lst) != 0)
        return rd_errorf(err, RD_E_NOTFOUND, "%s: %s", local ? local : "(null)", strerror(errno));
    char remote[RD_ADB_PATH_MAX + 1];
    if (!remote_in || !*remote_in || strlen(remote_in) > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_INVAL, "push needs a remote path of 1..%u bytes", RD_ADB_PATH_MAX);
    snprintf(remote, sizeof remote, "%s", remote_in);
    size_t rl = strlen(remote);
    while (rl > 1 && remote[rl - 1] == '/')
        remote[--rl] = '\0';
    rd_adb_stat sb;
    rd_status st = rd_adb_stat_path(dev, remote, &sb, err);
    if (st != RD_OK)
        return st;
    char dest[RD_ADB_PATH_MAX + 300];
    if (sb.exists && S_ISDIR(sb.mode)) {
        char name[512];
        adb_base_name(local, name, sizeof name);
        if (!adb_safe_name(name, strlen(name)))
            return rd_errorf(err, RD_E_INVAL, "cannot push '%s' into a folder: it has no usable name", local);
        if ((size_t)snprintf(dest, sizeof dest, "%s/%s", strcmp(remote, "/") ? remote : "", name) > RD_ADB_PATH_MAX)
            return rd_errorf(err, RD_E_LIMIT, "remote path too long");
    } else {
        snprintf(dest, sizeof dest, "%s", remote);
    }
    rd_adb_progress prog = {0};
    if (S_ISDIR(lst.st_mode))
        return push_tree(dev, local, dest, 0, &prog, progress, user, err);
    prog.files_total = 1;
    prog.all_total = (uint64_t)lst.st_size;
    return push_file(dev, local, dest, &prog, progress, user, err);
}
