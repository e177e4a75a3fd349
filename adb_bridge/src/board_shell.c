/*
 * board_shell.c: shell commands on the fake board: /bin/sh -c CMD with the served folder as working
 * directory, absolute board paths (/userdata/...) mapped under it, stdin from /dev/null. shell,v2
 * frames stdout (1), stderr (2) and the exit status (3, one byte); shell: and exec: merge both
 * streams.
 */
#include "board_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

bool board_shell_start(bconn *c, bstream *s, const char *cmd, bool v2)
{
    char *mapped = board_map_command(c->b->root, *cmd ? cmd : "exit 0");
    if (!mapped) return false;
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    bool ok = pipe2(out, O_CLOEXEC) == 0 && (!v2 || pipe2(errp, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (ok) {
        posix_spawn_file_actions_addchdir_np(&fa, c->b->root);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, v2 ? errp[1] : out[1], 2);
        char *argv[] = {"/bin/sh", "-c", mapped, NULL};
        pid_t pid;
        /* the CLI blocks SIGINT/SIGTERM in its threads to sigwait for them: the command gets a
         * clean mask */
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t none, dfl;
        sigemptyset(&none);
        sigemptyset(&dfl);
        sigaddset(&dfl, SIGINT);
        sigaddset(&dfl, SIGTERM);
        sigaddset(&dfl, SIGPIPE);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &dfl);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        ok = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ) == 0;
        posix_spawnattr_destroy(&attr);
        if (ok) s->pid = pid;
    }
    posix_spawn_file_actions_destroy(&fa);
    free(mapped);
    if (out[1] >= 0) close(out[1]);
    if (errp[1] >= 0) close(errp[1]);
    if (!ok) {
        if (out[0] >= 0) close(out[0]);
        if (errp[0] >= 0) close(errp[0]);
        return false;
    }
    s->out_fd = out[0];
    s->err_fd = errp[0];
    s->v2 = v2;
    return true;
}

static void read_pipe(bstream *s, int *fd, int id)
{
    uint8_t buf[5 + 32768];
    ssize_t r = read(*fd, buf + 5, sizeof buf - 5);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    if (s->v2) {
        buf[0] = (uint8_t)id;
        adb_put_u32(buf + 1, (uint32_t)r);
        bstream_out(s, buf, 5 + (size_t)r);
    } else {
        bstream_out(s, buf + 5, (size_t)r);
    }
}

void board_shell_poll(bconn *c, bstream *s, bool out_ready, bool err_ready)
{
    if (out_ready && s->out_fd >= 0) read_pipe(s, &s->out_fd, 1);
    if (err_ready && s->err_fd >= 0) read_pipe(s, &s->err_fd, 2);
    if (s->out_fd >= 0 || s->err_fd >= 0 || s->exited || s->pid < 0) return;
    int status = 0;
    pid_t r = waitpid(s->pid, &status, WNOHANG);
    if (r == 0) return;
    s->exited = true;
    s->pid = -1;
    int code = r < 0               ? 126
               : WIFEXITED(status) ? WEXITSTATUS(status)
                                   : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    board_log(c->b, "%s: shell command exited with %d", c->peer, code);
    if (s->v2) {
        uint8_t ex[6] = {3, 1, 0, 0, 0, (uint8_t)code};
        bstream_out(s, ex, sizeof ex);
    }
    s->closing = true;
}

void board_shell_kill(bstream *s)
{
    if (s->out_fd >= 0) close(s->out_fd);
    if (s->err_fd >= 0) close(s->err_fd);
    s->out_fd = s->err_fd = -1;
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = -1;
    }
}
