/*
 * pull.c: rd_adb_pull. Two phases: the remote tree is listed first (LIS2 "dir/" as adb does, links
 * followed with STA2), then folders are created and files received one by one.
 *
 * A hostile or broken board is bounded at every step: each folder is visited once (device and inode
 * from stat_v2/ls_v2, so `l1 -> .` loops end), depth <= 64, entries <= 1,000,000, and the listing
 * as a whole within the handle's timeout. Listed names that would leave the destination stop the
 * pull. A file must arrive with exactly the size the board announced; it is written through
 * rd_atomic_file (unique temporary name that fits, renamed when complete), so a short or long file
 * never appears under its name. Problems of one file alone (a name the local file system refuses, a
 * short file) are logged and counted, the other files are still pulled, and the pull then fails
 * with the first.
 */
#include "adb_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PULL_MAX_DEPTH 64
#define PULL_MAX_ENTRIES 1000000u
/* what a 32-bit size can describe: the bound for a file whose size the board did not announce */
#define PULL_UNKNOWN_SIZE_MAX 0xffffffffull

typedef struct pull_item {
    char *remote; /* full remote path */
    char *rel;    /* path below the destination, '/'-separated, every part checked */
    bool is_dir;
    bool size_known; /* false: at most PULL_UNKNOWN_SIZE_MAX bytes */
    uint64_t size;
    uint32_t mode;
} pull_item;

/* folders seen during the listing, by (device, inode) on the board: open addressing */
typedef struct visited_slot {
    uint64_t dev, ino;
    const char *remote; /* where it was first seen (owned by the item list or the caller) */
} visited_slot;

typedef struct pull_ctx {
    rd_adb *dev;
    pull_item *items;
    size_t n, cap;
    visited_slot *seen;
    size_t n_seen, cap_seen;
    int64_t list_deadline;
    unsigned n_folders;
    rd_adb_progress prog;
    rd_adb_progress_fn fn;
    void *user;
    rd_atomic_file *file; /* the file being received, NULL between files */
    unsigned n_failed;    /* files that failed alone */
    rd_error first_failure;
} pull_ctx;

static size_t visited_hash(uint64_t dev, uint64_t ino, size_t cap)
{
    uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Records a folder; returns where it was seen before, or NULL the first time (and on no memory:
 * the depth and entry bounds still hold then). */
static const char *visit(pull_ctx *p, uint64_t dev, uint64_t ino, const char *remote)
{
    if (dev == 0 && ino == 0)
        return NULL; /* the board does not say (no stat_v2) */
    if (2 * (p->n_seen + 1) > p->cap_seen) {
        size_t cap = p->cap_seen ? 2 * p->cap_seen : 64;
        visited_slot *ns = calloc(cap, sizeof *ns);
        if (!ns)
            return NULL;
        for (size_t i = 0; i < p->cap_seen; i++) {
            if (!p->seen[i].remote)
                continue;
            size_t h = visited_hash(p->seen[i].dev, p->seen[i].ino, cap);
            while (ns[h].remote)
                h = (h + 1) & (cap - 1);
            ns[h] = p->seen[i];
        }
        free(p->seen);
        p->seen = ns;
        p->cap_seen = cap;
    }
    size_t h = visited_hash(dev, ino, p->cap_seen);
    for (; p->seen[h].remote; h = (h + 1) & (p->cap_seen - 1))
        if (p->seen[h].dev == dev && p->seen[h].ino == ino)
            return p->seen[h].remote;
    p->seen[h] = (visited_slot){.dev = dev, .ino = ino, .remote = remote};
    p->n_seen++;
    return NULL;
}

static rd_status add_item(pull_ctx *p, const char *remote, const char *rel, bool is_dir, bool size_known, uint64_t size,
                          uint32_t mode, rd_error *err)
{
    if (p->n >= PULL_MAX_ENTRIES)
        return rd_errorf(err, RD_E_LIMIT,
                         "%s: the board listed more than %u files and folders to pull; pull a "
                         "narrower folder",
                         remote, PULL_MAX_ENTRIES);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        pull_item *ni = realloc(p->items, cap * sizeof *ni);
        if (!ni)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        p->items = ni;
        p->cap = cap;
    }
    pull_item *it = &p->items[p->n];
    *it = (pull_item){.remote = strdup(remote),
                      .rel = strdup(rel),
                      .is_dir = is_dir,
                      .size_known = size_known,
                      .size = size,
                      .mode = mode};
    if (!it->remote || !it->rel) {
        free(it->remote);
        free(it->rel);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    p->n++;
    return RD_OK;
}

/* One file (or folder) failed on its own: logged and counted, the pull goes on. */
static void fail_alone(pull_ctx *p, const rd_error *e)
{
    adb_logf(p->dev->log, p->dev->log_user, "%s", e->msg);
    if (p->n_failed++ == 0)
        p->first_failure = *e;
}

static rd_status check_deadline(const pull_ctx *p, const char *remote, rd_error *err)
{
    if (adb_ms_left(p->list_deadline) > 0)
        return RD_OK;
    return rd_errorf(err, RD_E_TIMEOUT,
                     "%s: listing the board's folders took longer than the timeout (%d s; %u "
                     "folders and %zu entries so far): a very large tree or a loop the board hides; "
                     "pull a narrower folder or give a larger --timeout",
                     remote, p->dev->timeout_ms / 1000, p->n_folders, p->n);
}

static rd_status walk(pull_ctx *p, const char *remote, const char *rel, int depth, rd_error *err);

/* One listed entry: refused, followed, skipped, or added (and walked into when a folder). */
static rd_status walk_entry(pull_ctx *p, const char *remote, const char *rel, int depth, const rd_adb_dirent *d,
                            rd_error *err)
{
    if (!adb_safe_name(d->name, strlen(d->name)))
        return rd_errorf(err, RD_E_DEVICE,
                         "%s: the board listed an entry named '%.200s'; refusing to write outside "
                         "the destination folder",
                         remote, d->name);
    char child[RD_ADB_PATH_MAX + 300], crel[ADB_LOCAL_PATH_MAX];
    int w1 = snprintf(child, sizeof child, "%s/%s", strcmp(remote, "/") == 0 ? "" : remote, d->name);
    int w2 = snprintf(crel, sizeof crel, "%s%s%s", rel, rel[0] ? "/" : "", d->name);
    if (w1 < 0 || (size_t)w1 > RD_ADB_PATH_MAX || w2 < 0 || (size_t)w2 >= sizeof crel) {
        rd_error e;
        rd_errorf(&e, RD_E_LIMIT, "%s/%.200s: path too long (board paths up to %u bytes, local %d)", remote, d->name,
                  RD_ADB_PATH_MAX, ADB_LOCAL_PATH_MAX - 1);
        fail_alone(p, &e);
        return RD_OK;
    }
    uint32_t mode = d->mode;
    uint64_t size = d->size, dev = d->dev, ino = d->ino;
    if (S_ISLNK(mode)) { /* follow, as adb pull does */
        rd_status st = check_deadline(p, child, err);
        rd_adb_stat sb;
        if (st == RD_OK)
            st = rd_adb_stat_path(p->dev, child, &sb, err);
        if (st != RD_OK)
            return st;
        if (!sb.exists)
            return RD_OK;       /* a dangling link */
        if (S_ISLNK(sb.mode)) { /* an old board's STAT is lstat: the target is unknown */
            adb_logf(p->dev->log, p->dev->log_user,
                     "skipping %s: a link, and this board (no stat_v2) does not say what it "
                     "points to",
                     child);
            return RD_OK;
        }
        mode = sb.mode;
        size = sb.size;
        dev = sb.dev;
        ino = sb.ino;
    }
    if (S_ISDIR(mode)) {
        rd_status st = add_item(p, child, crel, true, true, 0, mode, err);
        if (st != RD_OK)
            return st;
        const char *before = visit(p, dev, ino, p->items[p->n - 1].remote);
        if (before) {
            adb_logf(p->dev->log, p->dev->log_user,
                     "skipping %s: it leads to %s, a folder already pulled (a link loop on the "
                     "board)",
                     child, before);
            free(p->items[p->n - 1].remote);
            free(p->items[p->n - 1].rel);
            p->n--;
            return RD_OK;
        }
        return walk(p, child, crel, depth + 1, err);
    }
    if (!S_ISREG(mode))
        return RD_OK; /* devices, sockets, FIFOs: not copied, as adb */
    rd_status st = add_item(p, child, crel, false, true, size, mode, err);
    if (st == RD_OK) {
        p->prog.all_total += size;
        p->prog.files_total++;
    }
    return st;
}

static rd_status walk(pull_ctx *p, const char *remote, const char *rel, int depth, rd_error *err)
{
    if (depth > PULL_MAX_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "%s: folders nested deeper than %d levels", remote, PULL_MAX_DEPTH);
    rd_status st = check_deadline(p, remote, err);
    if (st != RD_OK)
        return st;
    p->n_folders++;
    rd_adb_dirent *list = NULL;
    size_t n = 0;
    char dirpath[RD_ADB_PATH_MAX + 2];
    snprintf(dirpath, sizeof dirpath, "%s/", remote); /* as adb: LIS2 "dir/" */
    st = rd_adb_list(p->dev, dirpath, &list, &n, err);
    for (size_t i = 0; i < n && st == RD_OK; i++)
        st = walk_entry(p, remote, rel, depth, &list[i], err);
    rd_adb_dirents_free(list, n);
    return st;
}

static rd_status write_chunk(void *user, const uint8_t *data, size_t n, rd_error *err)
{
    pull_ctx *p = user;
    rd_status st = rd_atomic_file_write(p->file, data, n, err);
    if (st != RD_OK)
        return st;
    p->prog.file_done += n;
    p->prog.all_done += n;
    if (p->fn)
        p->fn(p->user, &p->prog);
    return RD_OK;
}

/* Whether this name can be stored here at all: longer names fail alone, before anything is
 * received. */
static bool name_fits(pull_ctx *p, const pull_item *it, const char *local, rd_error *err)
{
    const char *slash = strrchr(local, '/');
    size_t len = strlen(slash ? slash + 1 : local);
    if (len <= ADB_NAME_MAX)
        return true;
    rd_errorf(err, RD_E_IO, "%s: its name is %zu bytes, longer than file names here can be (%d); skipped", it->remote,
              len, ADB_NAME_MAX);
    fail_alone(p, err);
    return false;
}

/* A file system error that concerns this name alone (the name is refused here, or something else
 * is in the way), as opposed to one every file would meet (no space, no permission). The helpers
 * report the failing call's errno last, so errno still holds it when they return. */
static bool name_refused(int e)
{
    return e == ENAMETOOLONG || e == EILSEQ || e == EINVAL || e == EISDIR || e == ENOTDIR || e == EEXIST ||
           e == ENOTEMPTY;
}

/*
 * Receives one file. A failure of this file alone (short, or a name refused here) is logged and
 * counted and gives RD_OK; any other status stops the pull.
 */
static rd_status pull_file(pull_ctx *p, const pull_item *it, const char *local, rd_error *err)
{
    if (!name_fits(p, it, local, err))
        return RD_OK;
    uint64_t base_all = p->prog.all_done;
    uint64_t limit = it->size_known ? it->size : PULL_UNKNOWN_SIZE_MAX;
    const rd_write_options wo = {.mode = 0644 | (it->mode & 0111)};
    rd_status st = RD_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        st = rd_atomic_file_open(local, &wo, &p->file, err);
        if (st != RD_OK)
            return st;
        p->prog.path = it->remote;
        p->prog.file_done = 0;
        p->prog.file_total = it->size;
        p->prog.file_finished = false;
        p->prog.all_done = base_all;
        adb_stream *s = NULL;
        bool failed = false;
        uint64_t got = 0;
        st = adb_sync_get(p->dev, &s, err);
        if (st == RD_OK)
            st = adb_sync_recv(s, it->remote, limit, write_chunk, p, &got, &failed, err);
        if (st == RD_OK && it->size_known && got != it->size) {
            rd_errorf(err, RD_E_DEVICE,
                      "%s: the board sent %llu of the %llu bytes it announced (the file shrank "
                      "while it was pulled, or the board cut it short); not kept",
                      it->remote, (unsigned long long)got, (unsigned long long)it->size);
            rd_atomic_file_abort(p->file);
            p->file = NULL;
            fail_alone(p, err);
            return RD_OK;
        }
        if (st == RD_OK)
            break;
        rd_atomic_file_abort(p->file);
        p->file = NULL;
        adb_sync_drop(p->dev); /* after FAIL the board ended the service; after anything else its
                                  state is unknown */
        if (!failed)
            return st;
        if (attempt == 0)
            adb_logf(p->dev->log, p->dev->log_user, "%s; retrying once on a new sync service",
                     err ? err->msg : "RECV failed");
    }
    if (st != RD_OK)
        return st;
    rd_atomic_file *f = p->file;
    p->file = NULL;
    errno = 0;
    st = rd_atomic_file_commit(f, err);
    if (st != RD_OK) {
        int e = errno;
        if (!name_refused(e))
            return st;
        rd_errorf(err, RD_E_IO, "%s: cannot be stored as %s here (%s); skipped", it->remote, local, strerror(e));
        fail_alone(p, err);
        return RD_OK;
    }
    p->prog.files_done++;
    p->prog.file_finished = true;
    if (p->fn)
        p->fn(p->user, &p->prog);
    return RD_OK;
}

/* Creates a folder of the copy; *alone when this folder (and so its content) fails on its own
 * (logged and counted, RD_OK). */
static rd_status make_folder(pull_ctx *p, const pull_item *it, const char *local, bool *alone, rd_error *err)
{
    *alone = !name_fits(p, it, local, err);
    if (*alone)
        return RD_OK;
    errno = 0;
    /* RD_DIR_OWN: a link in its place is refused, never followed out of the destination */
    if (rd_dir_make(local, RD_DIR_OWN, err) != RD_OK) {
        int e = errno;
        struct stat ls;
        bool in_the_way = lstat(local, &ls) == 0 && !S_ISDIR(ls.st_mode);
        if (!name_refused(e) && !in_the_way)
            return err ? err->code : RD_E_IO;
        rd_error_prefix(err, "%s: skipped with its content", it->remote);
        fail_alone(p, err);
        *alone = true;
    }
    return RD_OK;
}

static bool is_local_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static rd_status missing_remote(const char *remote, rd_error *err)
{
    char base[512];
    if (strstr(adb_base_name(remote, base, sizeof base), "dumps"))
        return rd_errorf(err, RD_E_NOTFOUND,
                         "remote folder '%s' does not exist on the board: the runtime writes per-layer dumps "
                         "there only if it exists; create it on the board with `mkdir -p %s && chmod 777 %s` "
                         "(rknn-diag shell 'mkdir -p %s && chmod 777 %s'), then run the model again",
                         remote, remote, remote, remote, remote);
    return rd_errorf(err, RD_E_NOTFOUND, "remote object '%s' does not exist on the board", remote);
}

/* Folders and files of the listing, in order; a failed folder's content is skipped. */
static rd_status copy_items(pull_ctx *p, const char *dest, rd_error *err)
{
    const char *skip = NULL; /* rel of a folder that failed */
    size_t skip_len = 0;
    rd_status st = RD_OK;
    for (size_t i = 0; i < p->n && st == RD_OK; i++) {
        const pull_item *it = &p->items[i];
        if (skip && strncmp(it->rel, skip, skip_len) == 0 && it->rel[skip_len] == '/')
            continue;
        char lp[ADB_LOCAL_PATH_MAX];
        if ((size_t)snprintf(lp, sizeof lp, "%s/%s", dest, it->rel) >= sizeof lp) {
            rd_error e;
            rd_errorf(&e, RD_E_LIMIT, "%s: local path %s/%.100s... is too long; skipped", it->remote, dest, it->rel);
            fail_alone(p, &e);
            if (it->is_dir)
                skip = it->rel, skip_len = strlen(skip);
            continue;
        }
        if (it->is_dir) {
            bool alone = false;
            st = make_folder(p, it, lp, &alone, err);
            if (alone)
                skip = it->rel, skip_len = strlen(skip);
        } else {
            st = pull_file(p, it, lp, err);
        }
    }
    return st;
}

rd_status rd_adb_pull(rd_adb *dev, const char *remote_in, const char *local, rd_adb_progress_fn progress, void *user,
                      rd_error *err)
{
    if (!remote_in || !*remote_in)
        remote_in = RD_ADB_DEFAULT_DUMP_DIR;
    if (!local || !*local)
        local = ".";
    char remote[RD_ADB_PATH_MAX + 1];
    if (strlen(remote_in) > RD_ADB_PATH_MAX)
        return rd_errorf(err, RD_E_LIMIT, "remote path is longer than %u bytes", RD_ADB_PATH_MAX);
    snprintf(remote, sizeof remote, "%s", remote_in);
    size_t rl = strlen(remote);
    while (rl > 1 && remote[rl - 1] == '/')
        remote[--rl] = '\0';
    rd_error own;
    if (!err)
        err = &own; /* failures of single files are collected in it */
    rd_adb_stat sb;
    rd_status st = rd_adb_stat_path(dev, remote, &sb, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s", remote);
        return st;
    }
    if (!sb.exists)
        return missing_remote(remote, err);
    char dest[ADB_LOCAL_PATH_MAX];
    if (is_local_dir(local)) {
        char name[512];
        adb_base_name(remote, name, sizeof name);
        if (!adb_safe_name(name, strlen(name)))
            return rd_errorf(err, RD_E_INVAL, "cannot pull '%s' into a folder: it has no usable name", remote);
        if ((size_t)snprintf(dest, sizeof dest, "%s/%s", local, name) >= sizeof dest)
            return rd_errorf(err, RD_E_LIMIT, "%s: local path too long", local);
    } else if ((size_t)snprintf(dest, sizeof dest, "%s", local) >= sizeof dest) {
        return rd_errorf(err, RD_E_LIMIT, "%.200s...: local path too long", local);
    }
    pull_ctx p = {.dev = dev, .fn = progress, .user = user};
    p.list_deadline = adb_now_ms() + dev->timeout_ms;
    if (!S_ISDIR(sb.mode)) {
        /* a single file; an old board's STAT does not follow a link, so its size is unknown */
        pull_item it = {.remote = remote,
                        .size_known = !S_ISLNK(sb.mode),
                        .size = S_ISLNK(sb.mode) ? 0 : sb.size,
                        .mode = S_ISLNK(sb.mode) ? 0644 : sb.mode};
        p.prog.all_total = it.size;
        p.prog.files_total = 1;
        st = pull_file(&p, &it, dest, err);
    } else {
        visit(&p, sb.dev, sb.ino, remote);
        st = walk(&p, remote, "", 0, err);
        if (st == RD_OK)
            st = rd_dir_make(dest, 0, err); /* the destination the user named */
        if (st == RD_OK)
            st = copy_items(&p, dest, err);
    }
    rd_atomic_file_abort(p.file);
    for (size_t i = 0; i < p.n; i++) {
        free(p.items[i].remote);
        free(p.items[i].rel);
    }
    free(p.items);
    free(p.seen);
    if (st == RD_OK && p.n_failed) {
        *err = p.first_failure;
        rd_error_prefix(err, "%u file%s or folder%s of the board could not be pulled (each is logged); the first",
                        p.n_failed, p.n_failed == 1 ? "" : "s", p.n_failed == 1 ? "" : "s");
        return p.first_failure.code;
    }
    return st;
}
