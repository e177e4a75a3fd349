/*
 * score_cmd.c: the contract of score_cmd.h: writing the outputs folder, running the scorer under a
 * timeout in its own process group, reading its one number.
 */
#include "score_cmd.h"
#include "json_out.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

rd_status an_score_parse_output(const char *buf, size_t len, const char *cmd, double *out, rd_error *err)
{
    /* the last non-empty line */
    size_t end = len;
    while (end > 0 && (buf[end - 1] == '\n' || buf[end - 1] == '\r' || buf[end - 1] == ' ' || buf[end - 1] == '\t'))
        end--;
    size_t start = end;
    while (start > 0 && buf[start - 1] != '\n')
        start--;
    char line[128];
    size_t n = end - start;
    if (n == 0)
        return rd_errorf(err, RD_E_PARSE,
                         "--score-cmd '%s' printed no score: its last line of stdout must be one "
                         "number",
                         cmd);
    if (n >= sizeof line || memchr(buf + start, '\0', n))
        return rd_errorf(err, RD_E_PARSE, "--score-cmd '%s': the last line of stdout is not one number (%zu bytes)",
                         cmd, n);
    memcpy(line, buf + start, n);
    line[n] = '\0';
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    char *e = NULL;
    errno = 0;
    double v = strtod(p, &e);
    if (e == p || errno == ERANGE || !isfinite(v))
        return rd_errorf(err, RD_E_PARSE, "--score-cmd '%s': the last line of stdout \"%s\" is not a finite number",
                         cmd, line);
    while (*e == ' ' || *e == '\t')
        e++;
    if (*e)
        return rd_errorf(err, RD_E_PARSE,
                         "--score-cmd '%s': the last line of stdout \"%s\" has text after the "
                         "number",
                         cmd, line);
    *out = v;
    return RD_OK;
}

/* Copies what the command writes on fd (its stderr) to errs. */
static void pass_through(int fd, FILE *errs, bool *open_)
{
    char buf[4096];
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        *open_ = false;
        return;
    }
    if (errs)
        fwrite(buf, 1, (size_t)r, errs);
}

static void kill_group(pid_t pid)
{
    kill(-pid, SIGTERM);
    for (int i = 0; i < 20; i++) {
        if (waitpid(pid, NULL, WNOHANG) != 0)
            break;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

rd_status an_score_cmd_run(const char *cmd, const char *dir, double timeout_s, FILE *errs, double *out, rd_error *err)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
        int e = errno;
        if (po[0] >= 0) {
            close(po[0]);
            close(po[1]);
        }
        return rd_errorf(err, RD_E_IO, "--score-cmd: cannot make a pipe: %s", strerror(e));
    }
    /* the command's environment: ours plus RD_OUTPUTS (a copy: setenv would change the whole process) */
    size_t n_env = 0;
    while (environ[n_env])
        n_env++;
    char **envp = calloc(n_env + 2, sizeof *envp);
    size_t vl = strlen(dir) + sizeof "RD_OUTPUTS=";
    char *var = malloc(vl);
    if (!envp || !var) {
        free(envp);
        free(var);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    snprintf(var, vl, "RD_OUTPUTS=%s", dir);
    size_t k_env = 0;
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(environ[i], "RD_OUTPUTS=", 11) != 0)
            envp[k_env++] = environ[i];
    envp[k_env] = var;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
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
    posix_spawnattr_setpgroup(&attr, 0); /* its own group: the timeout ends everything it started */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    /* the command sees the folder as $1 (sh -c 'CMD "$1"' would re-quote it; this keeps CMD as typed) */
    char *script = NULL;
    size_t sl = strlen(cmd) + 16;
    script = malloc(sl);
    if (script)
        snprintf(script, sl, "%s \"$1\"", cmd);
    char *argv[] = {"/bin/sh", "-c", script, "rknn-diag-score", (char *)dir, NULL};
    pid_t pid = -1;
    int sp = script ? posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp) : ENOMEM;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(script);
    free(envp);
    free(var);
    close(po[1]);
    close(pe[1]);
    if (sp != 0) {
        close(po[0]);
        close(pe[0]);
        return rd_errorf(err, RD_E_IO, "--score-cmd '%s': cannot start /bin/sh: %s", cmd, strerror(sp));
    }
    char *buf = malloc(AN_SCORE_MAX_STDOUT + 1);
    size_t len = 0;
    bool out_open = true, err_open = true, too_much = false, timed_out = false;
    const double t0 = now_s();
    while ((out_open || err_open) && buf) {
        struct pollfd fds[2] = {{.fd = out_open ? po[0] : -1, .events = POLLIN},
                                {.fd = err_open ? pe[0] : -1, .events = POLLIN}};
        int wait_ms = 1000;
        if (timeout_s > 0) {
            double left = timeout_s - (now_s() - t0);
            if (left <= 0) {
                timed_out = true;
                break;
            }
            wait_ms = left < 1 ? (int)(left * 1000) + 1 : 1000;
        }
        int r = poll(fds, 2, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (fds[0].revents) {
            ssize_t k = read(po[0], buf + len, AN_SCORE_MAX_STDOUT - len);
            if (k > 0)
                len += (size_t)k;
            else if (k == 0 || (errno != EINTR && errno != EAGAIN))
                out_open = false;
            if (len == AN_SCORE_MAX_STDOUT) {
                too_much = true;
                break;
            }
        }
        if (fds[1].revents)
            pass_through(pe[0], errs, &err_open);
    }
    close(po[0]);
    close(pe[0]);
    rd_status st = RD_OK;
    int status = 0;
    if (!buf) {
        kill_group(pid);
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    } else if (timed_out || too_much) {
        kill_group(pid);
        st = timed_out ? rd_errorf(err, RD_E_TIMEOUT,
                                   "--score-cmd '%s' on %s did not finish within %g s "
                                   "(--score-timeout); it was stopped",
                                   cmd, dir, timeout_s)
                       : rd_errorf(err, RD_E_LIMIT,
                                   "--score-cmd '%s' printed more than %zu bytes on stdout; it was "
                                   "stopped (print the score only, logs to stderr)",
                                   cmd, AN_SCORE_MAX_STDOUT);
    } else {
        /* both pipes closed: wait for the exit, still bounded by the timeout */
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            if (w < 0 && errno != EINTR) {
                status = -1;
                break;
            }
            if (timeout_s > 0 && now_s() - t0 > timeout_s) {
                kill_group(pid);
                st = rd_errorf(err, RD_E_TIMEOUT, "--score-cmd '%s' on %s did not exit within %g s (--score-timeout)",
                               cmd, dir, timeout_s);
                break;
            }
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (st == RD_OK) {
        if (WIFSIGNALED(status))
            st = rd_errorf(err, RD_E_INVAL, "--score-cmd '%s' was killed by signal %d", cmd, WTERMSIG(status));
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            st = rd_errorf(err, RD_E_INVAL,
                           "--score-cmd '%s' on %s exited with status %d (expected 0 and one number "
                           "on stdout)",
                           cmd, dir, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        else
            st = an_score_parse_output(buf, len, cmd, out, err);
    }
    free(buf);
    return st;
}

/* ---- the outputs folder ------------------------------------------------------------------------------ */

struct an_outputs_dir {
    char *dir;
    size_t n_outputs;
    cJSON *root, *samples;
};

rd_status an_outputs_dir_create(const char *dir, const char *precision, const char *const *names, size_t n_outputs,
                                an_outputs_dir **out, rd_error *err)
{
    *out = NULL;
    rd_status st = rd_dir_make(dir, RD_DIR_PARENTS, err);
    if (st != RD_OK)
        return st;
    an_outputs_dir *d = calloc(1, sizeof *d);
    if (!d)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n = strlen(dir);
    d->dir = malloc(n + 1);
    d->root = cJSON_CreateObject();
    if (!d->dir || !d->root) {
        an_outputs_dir_destroy(d);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    memcpy(d->dir, dir, n + 1);
    d->n_outputs = n_outputs;
    cJSON_AddStringToObject(d->root, "format", "rknn-diag-outputs/1");
    cJSON_AddStringToObject(d->root, "precision", precision);
    cJSON *o = cJSON_AddArrayToObject(d->root, "outputs");
    for (size_t i = 0; o && i < n_outputs; i++)
        cJSON_AddItemToArray(o, cJSON_CreateString(names[i]));
    d->samples = cJSON_AddArrayToObject(d->root, "samples");
    if (!o || !d->samples) {
        an_outputs_dir_destroy(d);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    *out = d;
    return RD_OK;
}

rd_status an_outputs_dir_add(an_outputs_dir *d, size_t sample, const char *input, const rd_tensor *outs, rd_error *err)
{
    cJSON *s = cJSON_CreateObject();
    cJSON *files = s ? cJSON_AddArrayToObject(s, "files") : NULL;
    if (!files) {
        cJSON_Delete(s);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    cJSON_AddNumberToObject(s, "sample", (double)sample);
    cJSON_AddStringToObject(s, "input", input ? input : "");
    cJSON_AddItemToArray(d->samples, s);
    for (size_t i = 0; i < d->n_outputs; i++) {
        char name[64], path[4096];
        snprintf(name, sizeof name, "s%06zu_o%zu.npy", sample, i);
        if ((size_t)snprintf(path, sizeof path, "%s/%s", d->dir, name) >= sizeof path)
            return rd_errorf(err, RD_E_INVAL, "%s: path too long", d->dir);
        rd_status st = rd_npy_save(path, &outs[i], err);
        if (st != RD_OK)
            return st;
        cJSON_AddItemToArray(files, cJSON_CreateString(name));
    }
    return RD_OK;
}

rd_status an_outputs_dir_finish(an_outputs_dir *d, rd_error *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/index.json", d->dir) >= sizeof path)
        return rd_errorf(err, RD_E_INVAL, "%s: path too long", d->dir);
    char *text = an_json_text(d->root);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n = strlen(text);
    text[n] = '\n'; /* cJSON leaves room for the NUL only: write the newline in its place */
    rd_status st = rd_file_write_atomic(path, text, n + 1, NULL, err);
    free(text);
    return st;
}

void an_outputs_dir_destroy(an_outputs_dir *d)
{
    if (!d)
        return;
    free(d->dir);
    cJSON_Delete(d->root);
    free(d);
}
