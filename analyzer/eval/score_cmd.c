/*
 * score_cmd.c: the contract of score_cmd.h: writing the outputs folder, running the scorer under a
 * timeout in its own process group, reading its one number. `eval --score-cmd` and `hybrid search
 * --score-cmd` (hybrid_score.c) both go through it.
 */
#include "score_cmd.h"
#include "json_out.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define EXCERPT_CHARS 240 /* of the scorer's stdout quoted in an error */
#define EXIT_GRACE_S 1.0  /* after the shell exits, how long what it started may keep its pipes open */

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

/* CMD with {outputs} replaced by "$1", or "$1" appended: the folder never goes through the shell's parser. */
static char *make_script(const char *cmd)
{
    static const char mark[] = "{outputs}", arg[] = "\"$1\"";
    size_t n = 0;
    for (const char *p = cmd; (p = strstr(p, mark)); p += sizeof mark - 1)
        n++;
    char *s = malloc(strlen(cmd) + (n + 1) * sizeof arg + 2), *w = s;
    if (!s)
        return NULL;
    for (const char *p = cmd; *p;) {
        if (strncmp(p, mark, sizeof mark - 1) == 0) {
            memcpy(w, arg, sizeof arg - 1);
            w += sizeof arg - 1;
            p += sizeof mark - 1;
        } else {
            *w++ = *p++;
        }
    }
    if (!n) {
        *w++ = ' ';
        memcpy(w, arg, sizeof arg - 1);
        w += sizeof arg - 1;
    }
    *w = '\0';
    return s;
}

/* The command's environment: ours with RD_OUTPUTS and its older alias RKNN_DIAG_OUTPUTS (hybrid search's
   first scorers read that one) set to the folder. A copy: setenv would change the whole process. */
static char **make_env(const char *dir, char **vars)
{
    static const char *const names[] = {"RD_OUTPUTS=", "RKNN_DIAG_OUTPUTS="};
    size_t n_env = 0;
    while (environ[n_env])
        n_env++;
    char **envp = calloc(n_env + 3, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(environ[i], names[0], strlen(names[0])) != 0 &&
            strncmp(environ[i], names[1], strlen(names[1])) != 0)
            envp[k++] = environ[i];
    for (size_t v = 0; v < 2; v++) {
        size_t len = strlen(names[v]) + strlen(dir) + 1;
        if (!(vars[v] = malloc(len))) {
            free(envp);
            return NULL;
        }
        snprintf(vars[v], len, "%s%s", names[v], dir);
        envp[k++] = vars[v];
    }
    return envp;
}

/* The last EXCERPT_CHARS of what the command printed on stdout, on one line, for error messages. */
static void stdout_excerpt(const char *buf, size_t len, char *out, size_t out_len)
{
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    size_t from = len > EXCERPT_CHARS ? len - EXCERPT_CHARS : 0;
    int w = snprintf(out, out_len, "%s", from ? "..." : "");
    size_t j = w > 0 ? (size_t)w : 0;
    for (size_t i = from; i < len && j + 1 < out_len; i++)
        out[j++] = buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t' || buf[i] == '\0' ? ' ' : buf[i];
    out[j] = '\0';
    if (!len)
        snprintf(out, out_len, "(nothing)");
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
    char *vars[2] = {NULL, NULL};
    char **envp = make_env(dir, vars);
    char *script = envp ? make_script(cmd) : NULL;
    if (!script) {
        free(envp);
        free(vars[0]);
        free(vars[1]);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
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
    char *argv[] = {"/bin/sh", "-c", script, "rknn-diag-score", (char *)dir, NULL};
    pid_t pid = -1;
    int sp = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(script);
    free(envp);
    free(vars[0]);
    free(vars[1]);
    close(po[1]);
    close(pe[1]);
    if (sp != 0) {
        close(po[0]);
        close(pe[0]);
        return rd_errorf(err, RD_E_IO, "--score-cmd '%s': cannot start /bin/sh: %s", cmd, strerror(sp));
    }
    char *buf = malloc(AN_SCORE_MAX_STDOUT + 1);
    size_t len = 0;
    bool out_open = true, err_open = true, too_much = false, timed_out = false, exited = false;
    int status = 0;
    const double t0 = now_s();
    double exited_at = 0;
    while ((out_open || err_open || !exited) && buf) {
        double now = now_s();
        if (timeout_s > 0 && now - t0 >= timeout_s) {
            timed_out = !exited;
            break;
        }
        if (exited && now - exited_at > EXIT_GRACE_S)
            break; /* the shell is gone; what it left running holds the pipes open */
        struct pollfd fds[2] = {{.fd = out_open ? po[0] : -1, .events = POLLIN},
                                {.fd = err_open ? pe[0] : -1, .events = POLLIN}};
        int wait_ms = 100;
        if (timeout_s > 0 && timeout_s - (now - t0) < 0.1)
            wait_ms = (int)((timeout_s - (now - t0)) * 1000) + 1;
        int r = poll(fds, 2, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && fds[0].revents) {
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
        if (r > 0 && fds[1].revents)
            pass_through(pe[0], errs, &err_open);
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            exited_at = now_s();
        }
    }
    close(po[0]);
    close(pe[0]);
    /* what is left of its group: everything on a timeout, or what the shell started that still holds the
       pipes (the group then still exists, so its id cannot have been reused) */
    if (!exited)
        kill_group(pid);
    else if (out_open || err_open)
        kill(-pid, SIGKILL);
    char said[EXCERPT_CHARS + 16];
    stdout_excerpt(buf ? buf : "", buf ? len : 0, said, sizeof said);
    rd_status st = RD_OK;
    if (!buf)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    else if (timed_out)
        st = rd_errorf(err, RD_E_TIMEOUT,
                       "--score-cmd '%s' on %s did not finish within %g s (--score-timeout); it was stopped; "
                       "its last output: %s",
                       cmd, dir, timeout_s, said);
    else if (too_much)
        st = rd_errorf(err, RD_E_LIMIT,
                       "--score-cmd '%s' printed more than %zu bytes on stdout; it was stopped (print the score only, "
                       "logs to stderr)",
                       cmd, AN_SCORE_MAX_STDOUT);
    else if (!exited)
        st = rd_errorf(err, RD_E_IO, "--score-cmd '%s': waiting for it failed: %s", cmd, strerror(errno));
    else if (WIFSIGNALED(status))
        st = rd_errorf(err, RD_E_INVAL, "--score-cmd '%s' was killed by signal %d; its last output: %s", cmd,
                       WTERMSIG(status), said);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        st = rd_errorf(err, RD_E_INVAL,
                       "--score-cmd '%s' on %s exited with status %d (expected 0 and one number on stdout); its last "
                       "output: %s",
                       cmd, dir, WIFEXITED(status) ? WEXITSTATUS(status) : -1, said);
    else
        st = an_score_parse_output(buf, len, cmd, out, err);
    free(buf);
    return st;
}

/* ---- the outputs folder ------------------------------------------------------------------------------ */

typedef struct sample_entry {
    size_t sample;
    cJSON *json;
} sample_entry;

struct an_outputs_dir {
    char *dir;
    size_t n_outputs;
    cJSON *root;
    pthread_mutex_t lock; /* entries: samples may be added from several threads */
    sample_entry *entries;
    size_t n_entries, cap_entries;
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
    if (pthread_mutex_init(&d->lock, NULL) != 0) {
        free(d);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    size_t n = strlen(dir);
    d->dir = malloc(n + 1);
    d->root = cJSON_CreateObject();
    if (!d->dir || !d->root) {
        an_outputs_dir_destroy(d);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    memcpy(d->dir, dir, n + 1);
    d->n_outputs = n_outputs;
    bool ok = true;
    an_json_add_str(d->root, "format", "rknn-diag-outputs/1", &ok);
    an_json_add_str(d->root, "precision", precision, &ok);
    cJSON *o = an_json_add_array(d->root, "outputs", &ok);
    for (size_t i = 0; ok && i < n_outputs; i++)
        an_json_push(o, cJSON_CreateString(names[i]), &ok);
    if (!ok) {
        an_outputs_dir_destroy(d);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    *out = d;
    return RD_OK;
}

rd_status an_outputs_dir_note(an_outputs_dir *d, const char *key, cJSON *value, rd_error *err)
{
    if (!value || !cJSON_AddItemToObject(d->root, key, value)) {
        cJSON_Delete(value);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return RD_OK;
}

/* The index.json entry of one sample (docs/score-cmd.md). */
static cJSON *sample_json(size_t sample, const char *const *inputs, size_t n_inputs, const rd_tensor *outs,
                          size_t n_outputs)
{
    bool ok = true; /* the an_json_* calls clear it on any failure: one check at the end */
    cJSON *s = cJSON_CreateObject();
    ok = s != NULL;
    an_json_add_num(s, "sample", (double)sample, &ok);
    an_json_add_str(s, "input", n_inputs && inputs[0] ? inputs[0] : "", &ok);
    cJSON *in = an_json_add_array(s, "inputs", &ok), *files = an_json_add_array(s, "files", &ok),
          *shapes = an_json_add_array(s, "shapes", &ok);
    for (size_t i = 0; ok && i < n_inputs; i++)
        an_json_push(in, inputs[i] ? cJSON_CreateString(inputs[i]) : cJSON_CreateNull(), &ok);
    for (size_t i = 0; ok && i < n_outputs; i++) {
        char name[64];
        snprintf(name, sizeof name, "s%06zu_o%zu.npy", sample, i);
        an_json_push(files, cJSON_CreateString(name), &ok);
        cJSON *dims = an_json_push_array(shapes, &ok);
        for (int r = 0; ok && r < outs[i].rank; r++)
            an_json_push(dims, cJSON_CreateNumber((double)outs[i].dims[r]), &ok);
    }
    if (!ok) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

rd_status an_outputs_dir_add(an_outputs_dir *d, size_t sample, const char *const *inputs, size_t n_inputs,
                             const rd_tensor *outs, rd_error *err)
{
    for (size_t i = 0; i < d->n_outputs; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/s%06zu_o%zu.npy", d->dir, sample, i) >= sizeof path)
            return rd_errorf(err, RD_E_INVAL, "%s: path too long", d->dir);
        rd_status st = rd_npy_save(path, &outs[i], err);
        if (st != RD_OK)
            return st;
    }
    cJSON *s = sample_json(sample, inputs, n_inputs, outs, d->n_outputs);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    pthread_mutex_lock(&d->lock);
    bool room = d->n_entries < d->cap_entries;
    if (!room) {
        size_t cap = d->cap_entries ? 2 * d->cap_entries : 64;
        sample_entry *e = realloc(d->entries, cap * sizeof *e);
        if (e) {
            d->entries = e;
            d->cap_entries = cap;
            room = true;
        }
    }
    if (room)
        d->entries[d->n_entries++] = (sample_entry){sample, s};
    pthread_mutex_unlock(&d->lock);
    if (!room) {
        cJSON_Delete(s);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return RD_OK;
}

static int by_sample(const void *a, const void *b)
{
    size_t x = ((const sample_entry *)a)->sample, y = ((const sample_entry *)b)->sample;
    return (x > y) - (x < y);
}

rd_status an_outputs_dir_finish(an_outputs_dir *d, rd_error *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/index.json", d->dir) >= sizeof path)
        return rd_errorf(err, RD_E_INVAL, "%s: path too long", d->dir);
    /* the samples in order, whichever thread wrote them first */
    qsort(d->entries, d->n_entries, sizeof *d->entries, by_sample);
    cJSON *samples = cJSON_CreateArray();
    if (!samples || !cJSON_AddItemToObject(d->root, "samples", samples)) {
        cJSON_Delete(samples);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < d->n_entries; i++)
        cJSON_AddItemToArray(samples, d->entries[i].json);
    d->n_entries = 0; /* the tree owns them now */
    char *text = an_json_text(d->root);
    cJSON_DeleteItemFromObject(d->root, "samples");
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
    for (size_t i = 0; i < d->n_entries; i++)
        cJSON_Delete(d->entries[i].json);
    free(d->entries);
    pthread_mutex_destroy(&d->lock);
    free(d->dir);
    cJSON_Delete(d->root);
    free(d);
}
