/*
 * board_sandbox.c: what the fake board's shell commands may do. They run on the host, so they are
 * confined as far as the system allows, and the board says at start how far that is:
 *
 * - never as root: started as root, the board runs commands as the served folder's owner, or, when
 *   root owns it, as a throwaway id (65100 or the next free one) to which the folder's root-owned
 *   entries are handed over; supplementary groups are dropped;
 * - without new privileges (PR_SET_NO_NEW_PRIVS: set-user-id programs do not raise them);
 * - where the kernel allows a private mount namespace (as root, or in a user namespace otherwise),
 *   the whole file system except the served folder is read-only for them;
 * - in their own session, so stopping the board ends their children too.
 *
 * When the served folder or this program lies under a folder the dropped id cannot enter (such as
 * /root, mode 0700), commands keep one capability, CAP_DAC_READ_SEARCH (read and search any file),
 * and the board says so. Each choice is made by a probe at start: a child applies the confinement
 * and checks that it can enter and write the folder and run this program.
 *
 * board_sandbox_enter runs between fork and exec in a multi-threaded process: system calls only,
 * everything it needs is prepared beforehand.
 */
#include "board_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define THROWAWAY_ID 65100u /* Debian reserves 65000-65533: no package or person has it */
#define THROWAWAY_TRIES 100u
#define NOBODY_ID 65534u /* when every id tried is taken */
#define ADOPT_MAX_ENTRIES 1000000u
#define ADOPT_MAX_DEPTH 64

/* Writes text to a /proc file (user namespace maps); system calls only. */
static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t n = strlen(text);
    int rc = write(fd, text, n) == (ssize_t)n ? 0 : errno;
    close(fd);
    return rc;
}

/* The file system read-only except root, in a private mount namespace. */
static int enter_mount_ns(const board_sandbox *sb, const char *root)
{
    if (unshare(sb->user_ns ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS) != 0)
        return errno;
    int rc;
    if (sb->user_ns &&
        ((rc = write_proc("/proc/self/setgroups", "deny")) || (rc = write_proc("/proc/self/uid_map", sb->uid_map)) ||
         (rc = write_proc("/proc/self/gid_map", sb->gid_map))))
        return rc;
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY}, rw = {.attr_clr = MOUNT_ATTR_RDONLY};
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(root, root, NULL, MS_BIND | MS_REC, NULL) != 0 ||
        mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0 ||
        mount_setattr(AT_FDCWD, root, AT_RECURSIVE, &rw, sizeof rw) != 0)
        return errno;
    return 0;
}

/* setuid to a non-root id, keeping CAP_DAC_READ_SEARCH as an ambient capability when asked. */
static int drop_root(const board_sandbox *sb)
{
    if (sb->read_search && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
        return errno;
    if (setgroups(0, NULL) != 0 || setresgid(sb->gid, sb->gid, sb->gid) != 0 ||
        setresuid(sb->uid, sb->uid, sb->uid) != 0)
        return errno;
    if (getuid() == 0 || geteuid() == 0)
        return EPERM;
    if (!sb->read_search)
        return 0;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2] = {{0}};
    uint32_t bit = 1u << CAP_DAC_READ_SEARCH; /* capability 2: in the first word */
    d[0].effective = d[0].permitted = d[0].inheritable = bit;
    if (syscall(SYS_capset, &h, d) != 0)
        return errno;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_READ_SEARCH, 0, 0) != 0)
        return errno;
    return 0;
}

int board_sandbox_enter(const board_sandbox *sb, const char *root)
{
    int rc;
    if (sb->mount_ns && (rc = enter_mount_ns(sb, root)))
        return rc;
    if (sb->drop && (rc = drop_root(sb)))
        return rc;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return errno;
    if (chdir(root) != 0)
        return errno;
    return 0;
}

/* ---- at start ---- */

/* Whether a file can be created (and is removed again) in the current folder; system calls only
 * (access() would check without the capabilities commands may keep). */
static int can_create_here(void)
{
    char name[32] = ".rd-sandbox-probe-";
    size_t n = strlen(name);
    for (unsigned v = (unsigned)getpid(); n < sizeof name - 1; v /= 10) {
        name[n++] = (char)('0' + v % 10);
        if (v < 10)
            break;
    }
    name[n] = '\0';
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    close(fd);
    return unlink(name) == 0 ? 0 : errno;
}

/* A child that confines itself and checks it can still work: 0 when it can. */
static int probe(const board_sandbox *sb, const char *root, const char *self)
{
    pid_t pid = fork();
    if (pid < 0)
        return errno;
    if (pid == 0) {
        int rc = board_sandbox_enter(sb, root);
        if (!rc)
            rc = can_create_here();
        if (!rc && self[0]) { /* this program, which commands run, is reachable */
            int fd = open(self, O_PATH | O_CLOEXEC);
            if (fd < 0)
                rc = errno;
            else
                close(fd);
        }
        if (!rc && sb->mount_ns && sb->probe_outside[0] && access(sb->probe_outside, W_OK) == 0)
            rc = EEXIST; /* the namespace did not make the outside read-only */
        _exit(rc & 0xff);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

static bool id_is_free(unsigned id)
{
    return getpwuid((uid_t)id) == NULL && getgrgid((gid_t)id) == NULL;
}

/* Hands root-owned entries of the served tree to the shell's user (no link followed, one file
 * system, bounded; files with several hard links stay root's). */
static void adopt_tree(const board_sandbox *sb, int dir, dev_t dev, int depth, unsigned *count)
{
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && *count < ADOPT_MAX_ENTRIES) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
            continue;
        (*count)++;
        /* a file with other links may be a system file linked in: never handed over */
        if (st.st_uid == 0 && (S_ISDIR(st.st_mode) || st.st_nlink == 1))
            if (fchownat(dirfd(d), e->d_name, sb->uid, st.st_gid == 0 ? sb->gid : (gid_t)-1, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
        if (S_ISDIR(st.st_mode) && depth < ADOPT_MAX_DEPTH) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                adopt_tree(sb, sub, dev, depth + 1, count);
        }
    }
    closedir(d);
}

void board_sandbox_adopt(const board_sandbox *sb, int fd)
{
    if (sb->drop && fchown(fd, sb->uid, sb->gid) != 0) { /* best effort */
    }
}

void board_sandbox_adopt_at(const board_sandbox *sb, int dir, const char *name)
{
    if (sb->drop && fchownat(dir, name, sb->uid, sb->gid, AT_SYMLINK_NOFOLLOW) != 0) {
        /* best effort */
    }
}

/* The id commands run as when started as root; hands the tree over when it is a throwaway id. */
static rd_status choose_user(board_sandbox *sb, const char *root, rd_error *err)
{
    struct stat st;
    if (stat(root, &st) != 0)
        return rd_errorf(err, RD_E_IO, "%s: %s", root, strerror(errno));
    sb->drop = true;
    if (st.st_uid != 0) { /* someone's folder: their commands run as them */
        sb->uid = st.st_uid;
        sb->gid = st.st_gid;
        return RD_OK;
    }
    unsigned id = THROWAWAY_ID;
    while (id < THROWAWAY_ID + THROWAWAY_TRIES && !id_is_free(id))
        id++;
    sb->uid = sb->gid = id < THROWAWAY_ID + THROWAWAY_TRIES ? id : NOBODY_ID;
    sb->adopt = true;
    int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    unsigned count = 0;
    if (dir >= 0) {
        if (fchown(dir, sb->uid, sb->gid) != 0)
            return rd_errorf(err, RD_E_IO, "cannot hand %s to the board's user %u: %s", root, (unsigned)sb->uid,
                             strerror(errno));
        adopt_tree(sb, dir, st.st_dev, 0, &count);
    }
    return RD_OK;
}

rd_status board_sandbox_init(board_sandbox *sb, const char *root, rd_error *err)
{
    memset(sb, 0, sizeof *sb);
    char self[4096] = "";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(sb->uid_map, sizeof sb->uid_map, "%u %u 1", (unsigned)geteuid(), (unsigned)geteuid());
    snprintf(sb->gid_map, sizeof sb->gid_map, "%u %u 1", (unsigned)getegid(), (unsigned)getegid());
    /* this program must not be writable for commands once the namespace is made (it is, for a
     * user who built it, without one) */
    snprintf(sb->probe_outside, sizeof sb->probe_outside, "%s", self);
    if (geteuid() == 0) {
        rd_status st = choose_user(sb, root, err);
        if (st != RD_OK)
            return st;
    } else {
        sb->user_ns = true;
    }
    /* the strongest confinement with which commands still work */
    int rc = 0;
    for (int read_search = 0; read_search <= (sb->drop ? 1 : 0); read_search++) {
        sb->read_search = read_search;
        for (int ns = 1; ns >= 0; ns--) {
            sb->mount_ns = ns;
            if ((rc = probe(sb, root, self)) == 0)
                break;
        }
        if (rc == 0)
            break;
    }
    if (rc != 0)
        return rd_errorf(err, RD_E_IO, "the board's shell commands, run as uid %u, cannot work in %s (%s)%s",
                         (unsigned)(sb->drop ? sb->uid : geteuid()), root, strerror(rc),
                         sb->drop ? ": started as root, the board never runs them as root; serve "
                                    "a folder owned by an ordinary user, or start it as one"
                                  : "");
    snprintf(sb->note, sizeof sb->note, "shell commands run as uid %u%s, without new privileges%s%s",
             (unsigned)(sb->drop ? sb->uid : geteuid()), sb->drop ? " (not root)" : "",
             sb->mount_ns ? "; the file system outside the served folder is read-only for them"
                          : "; the system allows no private mount namespace, so they can write "
                            "wherever that user can (world-writable folders such as /tmp too)",
             sb->read_search ? "; they can read every file (CAP_DAC_READ_SEARCH) because the "
                               "served folder or this program is inside a folder that user "
                               "cannot enter"
                             : "");
    return RD_OK;
}
