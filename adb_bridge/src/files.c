/*
 * files.c: stat, list, pull and push on top of the sync service. Pull writes <name>.part and
 * renames it when complete, refuses listed names that would leave the destination ('/', "..",
 * empty), retries a RECV the board FAILed once on a fresh sync service, and checks the bytes
 * received against the size the board announced.
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

#define PULL_MAX_DEPTH 64
#define LOCAL_PATH_MAX 4096

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
    if (st == RD_OK) st = adb_sync_stat(s, use_stat_v2(dev), path, out, err);
    if (st != RD_OK) adb_sync_drop(dev);
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
        if (!nv) return rd_errorf(err, RD_E_NOMEM, "out of memory");
        vec->v = nv;
        vec->cap = cap;
    }
    rd_adb_dirent *e = &vec->v[vec->n];
    *e = *d;
    e->name = strdup(d->name);
    if (!e->name) return rd_errorf(err, RD_E_NOMEM, "out of memory");
    vec->n++;
    return RD_OK;
}

void rd_adb_dirents_free(rd_adb_dirent *list, size_t n)
{
    if (!list) return;
    for (size_t i = 0; i < n; i++)
        free(list[i].name);
    free(list);
}

rd_status rd_adb_list(rd_adb *dev, const char *path, rd_adb_dirent **out, size_t *n, rd_error *err)
{
    adb_stream *s = NULL;
    dirent_vec vec = {0};
    rd_status st = adb_sync_get(dev, &s, err);
    if (st == RD_OK) st = adb_sync_list(s, use_ls_v2(dev), path, collect_dirent, &vec, err);
    if (st != RD_OK) {
        adb_sync_drop(dev);
        rd_adb_dirents_free(vec.v, vec.n);
        return st;
    }
    *out = vec.v;
    *n = vec.n;
    return RD_OK;
}

/* ---- pull ---- */

typedef struct pull_item {
    char *remote; /* full remote path */
    char *rel;    /* path below the destination, '/'-separated, every part checked */
    bool is_dir;
    uint64_t size;
    uint32_t mode;
} pull_item;

typedef struct pull_ctx {
    rd_adb *dev;
    pull_item *items;
    size_t n, cap;
    rd_adb_progress prog;
    rd_adb_progress_fn fn;
    void *user;
    int fd;
} pull_ctx;

static rd_status add_item(pull_ctx *p, const char *remote, const char *rel, bool is_dir,
                          uint64_t size, uint32_t mode, rd_error *err)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        if (cap > (1u << 22))
            return rd_errorf(err, RD_E_LIMIT, "more than 4 million files to pull");
        pull_item *ni = realloc(p->items, cap * sizeof *ni);
        if (!ni) return rd_errorf(err, RD_E_NOMEM, "out of memory");
        p->items = ni;
        p->cap = cap;
    }
    pull_item *it = &p->items[p->n];
    it->remote = strdup(remote);
    it->rel = strdup(rel);
    it->is_dir = is_dir;
    it->size = size;
    it->mode = mode;
    if (!it->remote || !it->rel) {
        free(it->remote);
        free(it->rel);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    p->n++;
    return RD_OK;
}

static rd_status walk(pull_ctx *p, const char *remote, const char *rel, int depth, rd_error *err)
{
    if (depth > PULL_MAX_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "%s: folders nested deeper than %d levels", remote,
                         PULL_MAX_DEPTH);
    rd_adb_dirent *list = NULL;
    size_t n = 0;
    char dirpath[RD_ADB_PATH_MAX + 2];
    snprintf(dirpath, sizeof dirpath, "%s/", remote); /* as adb: LIS2 "dir/" */
    rd_status st = rd_adb_list(p->dev, dirpath, &list, &n, err);
    if (st != RD_OK) return st;
    for (size_t i = 0; i < n && st == RD_OK; i++) {
        rd_adb_dirent *d = &list[i];
        if (!adb_safe_name(d->name, strlen(d->name))) {
            st = rd_errorf(
                err, RD_E_DEVICE,
                "%s: the board listed an entry named '%.200s'; refusing to write outside the "
                "destination folder",
                remote, d->name);
            break;
        }
        char child[RD_ADB_PATH_MAX + 300], crel[LOCAL_PATH_MAX];
        int w1 =
            snprintf(child, sizeof child, "%s/%s", strcmp(remote, "/") == 0 ? "" : remote, d->name);
        int w2 = snprintf(crel, sizeof crel, "%s%s%s", rel, rel[0] ? "/" : "", d->name);
        if (w1 < 0 || (size_t)w1 > RD_ADB_PATH_MAX || w2 < 0 || (size_t)w2 >= sizeof crel) {
            st = rd_errorf(err, RD_E_LIMIT, "%s/%s: path too long", remote, d->name);
            break;
        }
        uint32_t mode = d->mode;
        uint64_t size = d->size;
        if (S_ISLNK(mode)) { /* follow, as adb pull does */
            rd_adb_stat sb;
            st = rd_adb_stat_path(p->dev, child, &sb, err);
            if (st != RD_OK) break;
            if (!sb.exists) continue;
            mode = sb.mode;
            size = sb.size;
        }
        if (S_ISDIR(mode)) {
            st = add_item(p, child, crel, true, 0, mode, err);
            if (st == RD_OK) st = walk(p, child, crel, depth + 1, err);
        } else if (S_ISREG(mode)) {
            st = add_item(p, child, crel, false, size, mode, err);
            if (st == RD_OK) {
                p->prog.all_total += size;
                p->prog.files_total++;
            }
        }
    }
    rd_adb_dirents_free(list, n);
    return st;
}

static rd_status write_chunk(void *user, const uint8_t *data, size_t n, rd_error *err)
{
    pull_ctx *p = user;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(p->fd, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return rd_errorf(err, RD_E_IO, "writing %s: %s", p->prog.path, strerror(errno));
        done += (size_t)w;
    }
    p->prog.file_done += n;
    p->prog.all_done += n;
    if (p->fn) p->fn(p->user, &p->prog);
    return RD_OK;
}

static rd_status pull_file(pull_ctx *p, const char *remote, const char *local, uint64_t size,
                           uint32_t mode, bool size_known, rd_error *err)
{
    char part[LOCAL_PATH_MAX + 8];
    if ((size_t)snprintf(part, sizeof part, "%s.part", local) >= sizeof part)
        return rd_errorf(err, RD_E_LIMIT, "%s: local path too long", local);
    uint64_t base_all = p->prog.all_done;
    rd_status st = RD_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        p->fd =
            open(part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644 | (mode & 0111));
        if (p->fd < 0)
            return rd_errorf(err, RD_E_IO, "cannot create %s: %s", part, strerror(errno));
        p->prog.path = remote;
        p->prog.file_done = 0;
        p->prog.file_total = size;
        p->prog.file_finished = false;
        p->prog.all_done = base_all;
        adb_stream *s = NULL;
        bool failed = false;
        uint64_t got = 0;
        st = adb_sync_get(p->dev, &s, err);
        if (st == RD_OK)
            st = adb_sync_recv(s, remote, size_known ? size : UINT64_MAX, write_chunk, p, &got,
                               &failed, err);
        if (close(p->fd) != 0 && st == RD_OK)
            st = rd_errorf(err, RD_E_IO, "writing %s: %s", part, strerror(errno));
        p->fd = -1;
        if (st == RD_OK) break;
        adb_sync_drop(p->dev); /* after FAIL the board ended the service; after anything else its
                                  state is unknown */
        if (!failed) break;
        adb_logf(p->dev->log, p->dev->log_user, "%s: %s; retrying once on a new sync service",
                 remote, err ? err->msg : "RECV failed");
    }
    if (st != RD_OK) {
        unlink(part);
        return st;
    }
    if (rename(part, local) != 0) {
        int e = errno;
        unlink(part);
        return rd_errorf(err, RD_E_IO, "cannot rename %s to %s: %s", part, local, strerror(e));
    }
    p->prog.files_done++;
    p->prog.file_finished = true;
    if (p->fn) p->fn(p->user, &p->prog);
    return RD_OK;
}

static const char *base_name(const char *path, char *buf, size_t cap)
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

static bool is_local_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static rd_status missing_remote(const char *remote, rd_error *err)
{
    if (strstr(remote, "dumps"))
        return rd_errorf(
            err, RD_E_NOTFOUND,
            "remote folder '%s' does not exist on the board: the runtime writes per-layer dumps "
            "there only if it exists; create it on the board with `mkdir -p %s && chmod 777 %s` "
            "(rknn-diag shell 'mkdir -p %s && chmod 777 %s'), then run the model again",
            remote, remote, remote, remote, remote);
    return rd_errorf(err, RD_E_NOTFOUND, "remote object '%s' does not exist on the board", remote);
}

rd_status rd_adb_pull(rd_adb *dev, const char *remote_in, const char *local,
                      rd_adb_progress_fn progress, void *user, rd_error *err)
{
    if (!remote_in || !*remote_in) remote_in = RD_ADB_DEFAULT_DUMP_DIR;
    if (!local || !*local) local = ".";
    char remote[RD_ADB_PATH_MAX + 1];
    if (strlen(remote_in) > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_LIMIT, "remote path is longer than %u bytes", RD_ADB_PATH_MAX);
    snprintf(remote, sizeof remote, "%s", remote_in);
    size_t rl = strlen(remote);
    while (rl > 1 && remote[rl - 1] == '/')
        remote[--rl] = '\0';
    rd_adb_stat sb;
    rd_status st = rd_adb_stat_path(dev, remote, &sb, err);
    if (st != RD_OK) return rd_error_prefix(err, "%s", remote);
    if (!sb.exists) return missing_remote(remote, err);
    char dest[LOCAL_PATH_MAX];
    if (is_local_dir(local)) {
        char name[512];
        base_name(remote, name, sizeof name);
        if (!adb_safe_name(name, strlen(name)))
            return rd_errorf(err, RD_E_INVAL,
                             "cannot pull '%s' into a folder: it has no usable name", remote);
        if ((size_t)snprintf(dest, sizeof dest, "%s/%s", local, name) >= sizeof dest)
            return rd_errorf(err, RD_E_LIMIT, "%s: local path too long", local);
    } else {
        snprintf(dest, sizeof dest, "%s", local);
    }
    pull_ctx p = {.dev = dev, .fn = progress, .user = user, .fd = -1};
    bool v2 = use_stat_v2(dev);
    if (!S_ISDIR(sb.mode)) {
        p.prog.all_total = sb.size;
        p.prog.files_total = 1;
        return pull_file(&p, remote, dest, sb.size, sb.mode, v2, err);
    }
    st = walk(&p, remote, "", 0, err);
    if (st == RD_OK && mkdir(dest, 0755) != 0 && errno != EEXIST)
        st = rd_errorf(err, RD_E_IO, "cannot create %s: %s", dest, strerror(errno));
    if (st == RD_OK && !is_local_dir(dest))
        st = rd_errorf(err, RD_E_IO, "%s exists and is not a folder", dest);
    for (size_t i = 0; i < p.n && st == RD_OK; i++) {
        char lp[LOCAL_PATH_MAX];
        if ((size_t)snprintf(lp, sizeof lp, "%s/%s", dest, p.items[i].rel) >= sizeof lp) {
            st = rd_errorf(err, RD_E_LIMIT, "%s/%s: local path too long", dest, p.items[i].rel);
            break;
        }
        if (p.items[i].is_dir) {
            struct stat ls;
            if (mkdir(lp, 0755) != 0 && errno != EEXIST)
                st = rd_errorf(err, RD_E_IO, "cannot create %s: %s", lp, strerror(errno));
            else if (lstat(lp, &ls) != 0 ||
                     !S_ISDIR(ls.st_mode)) /* a symlink here could lead outside */
                st = rd_errorf(err, RD_E_IO, "%s exists and is not a folder", lp);
        } else {
            st = pull_file(&p, p.items[i].remote, lp, p.items[i].size, p.items[i].mode,
                           v2 || p.items[i].size > 0, err);
        }
    }
    for (size_t i = 0; i < p.n; i++) {
        free(p.items[i].remote);
        free(p.items[i].rel);
    }
    free(p.items);
    return st;
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
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return rd_errorf(err, RD_E_IO, "reading %s: %s", s->path, strerror(errno));
        *got = (size_t)r;
        s->prog->file_done += (size_t)r;
        s->prog->all_done += (size_t)r;
        if (s->fn && r > 0) s->fn(s->user, s->prog);
        return RD_OK;
    }
}

static rd_status push_file(rd_adb *dev, const char *local, const char *remote,
                           rd_adb_progress *prog, rd_adb_progress_fn fn, void *user, rd_error *err)
{
    int fd = open(local, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rd_errorf(err, RD_E_IO, "cannot open %s: %s", local, strerror(errno));
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
        st = adb_sync_send(s, remote, (uint32_t)st_.st_mode, (int64_t)st_.st_mtime, fill_from_fd,
                           &src, err);
    close(fd);
    if (st != RD_OK) {
        adb_sync_drop(dev);
        return st;
    }
    prog->files_done++;
    prog->file_finished = true;
    if (fn) fn(user, prog);
    return RD_OK;
}

static rd_status push_tree(rd_adb *dev, const char *local, const char *remote, int depth,
                           rd_adb_progress *prog, rd_adb_progress_fn fn, void *user, rd_error *err)
{
    if (depth > PULL_MAX_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "%s: folders nested deeper than %d levels", local,
                         PULL_MAX_DEPTH);
    DIR *d = opendir(local);
    if (!d) return rd_errorf(err, RD_E_IO, "cannot open %s: %s", local, strerror(errno));
    rd_status st = RD_OK;
    struct dirent *e;
    while (st == RD_OK && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char lp[LOCAL_PATH_MAX], rp[RD_ADB_PATH_MAX + 300];
        if ((size_t)snprintf(lp, sizeof lp, "%s/%s", local, e->d_name) >= sizeof lp ||
            (size_t)snprintf(rp, sizeof rp, "%s/%s", remote, e->d_name) > RD_ADB_PATH_MAX) {
            st = rd_errorf(err, RD_E_LIMIT, "%s/%s: path too long", local, e->d_name);
            break;
        }
        struct stat sb;
        if (stat(lp, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode))
            st = push_tree(dev, lp, rp, depth + 1, prog, fn, user, err);
        else if (S_ISREG(sb.st_mode))
            st = push_file(dev, lp, rp, prog, fn, user, err);
    }
    closedir(d);
    return st;
}

rd_status rd_adb_push(rd_adb *dev, const char *local, const char *remote_in,
                      rd_adb_progress_fn progress, void *user, rd_error *err)
{
    struct stat lst;
    if (!local || stat(local, &lst) != 0)
        return rd_errorf(err, RD_E_NOTFOUND, "%s: %s", local ? local : "(null)", strerror(errno));
    char remote[RD_ADB_PATH_MAX + 1];
    if (!remote_in || !*remote_in || strlen(remote_in) > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_INVAL, "push needs a remote path of 1..%u bytes",
                         RD_ADB_PATH_MAX);
    snprintf(remote, sizeof remote, "%s", remote_in);
    size_t rl = strlen(remote);
    while (rl > 1 && remote[rl - 1] == '/')
        remote[--rl] = '\0';
    rd_adb_stat sb;
    rd_status st = rd_adb_stat_path(dev, remote, &sb, err);
    if (st != RD_OK) return st;
    char dest[RD_ADB_PATH_MAX + 300];
    if (sb.exists && S_ISDIR(sb.mode)) {
        char name[512];
        base_name(local, name, sizeof name);
        if (!adb_safe_name(name, strlen(name)))
            return rd_errorf(err, RD_E_INVAL,
                             "cannot push '%s' into a folder: it has no usable name", local);
        if ((size_t)snprintf(dest, sizeof dest, "%s/%s", strcmp(remote, "/") ? remote : "", name) >
            RD_ADB_PATH_MAX)
            return rd_errorf(err, RD_E_LIMIT, "remote path too long");
    } else {
        snprintf(dest, sizeof dest, "%s", remote);
    }
    rd_adb_progress prog = {0};
    if (S_ISDIR(lst.st_mode)) return push_tree(dev, local, dest, 0, &prog, progress, user, err);
    prog.files_total = 1;
    prog.all_total = (uint64_t)lst.st_size;
    return push_file(dev, local, dest, &prog, progress, user, err);
}
