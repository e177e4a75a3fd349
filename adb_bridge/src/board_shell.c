/*
 * board_shell.c: shell commands on the fake board: /bin/sh -c CMD in the served folder, with the
 * board paths of CMD mapped under it (board_paths.c), stdin from /dev/null, confined as
 * board_sandbox.c decided (never root, no new privileges, where possible a read-only file system
 * but for the folder), in a session of its own so that stopping the board ends everything it
 * started. shell,v2 frames stdout (1), stderr (2) and the exit status (3, one byte); shell: and
 * exec: merge both streams.
 */
#include "board_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void child_write(const char *text)
{
    ssize_t w = write(2, text, strlen(text));
    (void)w;
}

/* The child between fork and exec: system calls only (the board has threads). */
static void child_exec(const rd_board *b, int in, int out, int err, char *const argv[])
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the CLI blocks SIGINT/SIGTERM to sigwait for them */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGPIPE, &dfl, NULL);
    setsid();
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(126);
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    int rc = board_sandbox_enter(&b->sandbox, b->root);
    if (rc != 0) {
        child_write("board-emulate: cannot confine the shell command; not running it\n");
        _exit(126);
    }
    execve("/bin/sh", argv, environ);
    child_write("board-emulate: cannot run /bin/sh\n");
    _exit(127);
}

bool board_shell_start(bconn *c, bstream *s, const char *cmd, bool v2)
{
    char *mapped = board_map_command(c->b->root, *cmd ? cmd : "exit 0");
    if (!mapped)
        return false;
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    bool ok = in >= 0 && pipe2(out, O_CLOEXEC) == 0 && (!v2 || pipe2(errp, O_CLOEXEC) == 0);
    pid_t pid = -1;
    if (ok) {
        char *argv[] = {"/bin/sh", "-c", mapped, NULL};
        pid = fork();
        if (pid == 0)
            child_exec(c->b, in, out[1], v2 ? errp[1] : out[1], argv);
        ok = pid > 0;
    }
    free(mapped);
    if (in >= 0)
        close(in);
    if (out[1] >= 0)
        close(out[1]);
    if (errp[1] >= 0)
        close(errp[1]);
    if (!ok) {
        if (out[0] >= 0)
            close(out[0]);
        if (errp[0] >= 0)
            close(errp[0]);
        return false;
    }
    s->pid = pid;
    s->out_fd = out[0];
    s->err_fd = errp[0];
    s->v2 = v2;
    return true;
}

static void read_pipe(bstream *s, int *fd, int id)
{
    uint8_t buf[5 + 32768];
    ssize_t r = read(*fd, buf + 5, sizeof buf - 5);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
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
    if (out_ready && s->out_fd >= 0)
        read_pipe(s, &s->out_fd, 1);
    if (err_ready && s->err_fd >= 0)
        read_pipe(s, &s->err_fd, 2);
    if (s->out_fd >= 0 || s->err_fd >= 0 || s->exited || s->pid < 0)
        return;
    int status = 0;
    pid_t r = waitpid(s->pid, &status, WNOHANG);
    if (r == 0)
        return;
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
    if (s->out_fd >= 0)
        close(s->out_fd);
    if (s->err_fd >= 0)
        close(s->err_fd);
    s->out_fd = s->err_fd = -1;
    if (s->pid > 0) {
        kill(-s->pid, SIGKILL); /* its session: the command and what it started */
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = -1;
    }
}
