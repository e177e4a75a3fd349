/*
 * fs_dir.c: making and clearing the folders rknn-diag writes into (docs/security.md). A folder it makes
 * inside an output folder must be a real folder, never a planted link, and clearing one works relative
 * to open folder descriptors (openat, unlinkat, O_NOFOLLOW), so it removes links themselves and never
 * what they point to. Workload: a few folders per run; a cleared dump folder holds up to thousands of
 * files.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define TREE_MAX_ENTRIES ((size_t)1 << 22) /* names read from one folder before giving up */

/* path without its trailing slashes ("/" stays), malloc'ed. */
static char *strip_slashes(const char *path)
{
    char *p = sim_strdup(path);
    if (!p)
        return NULL;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    return p;
}

/* mkdir that accepts what exists already when it is a folder (a link to one only when follow is set). */
static rd_status make_one(const char *path, bool follow, rd_error *err)
{
    if (mkdir(path, 0777) == 0)
        return RD_OK;
    int e = errno;
    struct stat sb;
    if (e != EEXIST)
        return rd_errorf(err, RD_E_IO, "cannot create folder %s: %s", path, strerror(e));
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (!follow)
            return rd_errorf(err, RD_E_IO,
                             "%s: is a symbolic link where rknn-diag makes a folder of its own; links are not followed "
                             "out of an output folder (remove the link)",
                             path);
        if (stat(path, &sb) != 0)
            return rd_errorf(err, RD_E_IO, "%s: is a symbolic link to nothing: %s", path, strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode))
        return rd_errorf(err, RD_E_IO, "%s: exists and is not a folder", path);
    return RD_OK;
}

rd_status rd_dir_make(const char *path, unsigned flags, rd_error *err)
{
    if (!path || !*path)
        return rd_errorf(err, RD_E_INVAL, "an empty folder name");
    char *p = strip_slashes(path);
    if (!p)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    if (flags & RD_DIR_PARENTS) {
        for (char *s = p + 1; *s && st == RD_OK; s++) {
            if (*s != '/' || s[-1] == '/')
                continue;
            *s = '\0';
            st = make_one(p, true, err);
            *s = '/';
        }
    }
    if (st == RD_OK)
        st = make_one(p, !(flags & RD_DIR_OWN), err);
    free(p);
    return st;
}

/* The names in the folder open as fd (not . and ..), malloc'ed; NULL with err set on failure. */
static char **list_names(int fd, const char *path, size_t *out_n, rd_error *err)
{
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        rd_errorf(err, RD_E_IO, "%s: cannot list: %s", path, strerror(errno));
        return NULL;
    }
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *de;
    while (names && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            char **g = cap < TREE_MAX_ENTRIES ? realloc(names, 2 * cap * sizeof *names) : NULL;
            if (!g) {
                for (size_t i = 0; i < n; i++)
                    free(names[i]);
                free(names);
                names = NULL;
                break;
            }
            names = g;
            cap *= 2;
        }
        if (!(names[n] = sim_strdup(de->d_name))) {
            for (size_t i = 0; i < n; i++)
                free(names[i]);
            free(names);
            names = NULL;
            break;
        }
        n++;
    }
    closedir(d);
    if (!names)
        rd_errorf(err, RD_E_NOMEM, "%s: out of memory listing the folder", path);
    *out_n = n;
    return names;
}

/* Empties the folder open as fd (named path in messages), depth levels below the top. */
static rd_status clear_at(int fd, const char *path, int depth, rd_error *err)
{
    if (depth > RD_MAX_TREE_DEPTH)
        return rd_errorf(err, RD_E_LIMIT, "%s: more than %d folders deep; not removed", path, RD_MAX_TREE_DEPTH);
    size_t n = 0;
    char **names = list_names(fd, path, &n, err);
    if (!names)
        return err ? err->code : RD_E_IO;
    rd_status st = RD_OK;
    for (size_t i = 0; i < n && st == RD_OK; i++) {
        char *sub = sim_path_join(path, names[i]);
        if (!sub) {
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        struct stat sb;
        bool is_dir = fstatat(fd, names[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
        if (is_dir) {
            int sub_fd = openat(fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub_fd < 0)
                st = rd_errorf(err, RD_E_IO, "%s: cannot open: %s", sub, strerror(errno));
            else {
                st = clear_at(sub_fd, sub, depth + 1, err);
                close(sub_fd);
            }
        }
        if (st == RD_OK && unlinkat(fd, names[i], is_dir ? AT_REMOVEDIR : 0) != 0 && errno != ENOENT)
            st = rd_errorf(err, RD_E_IO, "cannot remove %s: %s", sub, strerror(errno));
        free(sub);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return st;
}

rd_status rd_dir_remove_tree(const char *path, rd_error *err)
{
    char *p = strip_slashes(path);
    if (!p)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    struct stat sb;
    rd_status st = RD_OK;
    if (lstat(p, &sb) != 0) {
        if (errno != ENOENT)
            st = rd_errorf(err, RD_E_IO, "%s: %s", p, strerror(errno));
    } else if (S_ISLNK(sb.st_mode)) {
        st = rd_errorf(err, RD_E_IO,
                       "%s: is a symbolic link; rknn-diag clears and refills this folder and does not follow a link "
                       "there (remove the link, or choose another output folder)",
                       p);
    } else if (!S_ISDIR(sb.st_mode)) {
        if (unlink(p) != 0)
            st = rd_errorf(err, RD_E_IO, "cannot remove %s: %s", p, strerror(errno));
    } else {
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            st = rd_errorf(err, RD_E_IO, "%s: cannot open: %s", p, strerror(errno));
        else {
            st = clear_at(fd, p, 1, err);
            close(fd);
        }
        if (st == RD_OK && rmdir(p) != 0 && errno != ENOENT)
            st = rd_errorf(err, RD_E_IO, "cannot remove %s: %s", p, strerror(errno));
    }
    free(p);
    return st;
}

rd_status rd_dir_remove_named(const char *path, size_t n, void (*name_of)(void *user, size_t k, char *buf, size_t len),
                              void *user, rd_error *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? RD_OK : rd_dir_remove_tree(path, err);
    char name[256];
    for (size_t k = 0; k < n; k++) {
        name_of(user, k, name, sizeof name);
        unlinkat(fd, name, 0);
    }
    close(fd);
    if (rmdir(path) == 0 || errno == ENOENT)
        return RD_OK;
    return rd_dir_remove_tree(path, err); /* what else is there */
}
