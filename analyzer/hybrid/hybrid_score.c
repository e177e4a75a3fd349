/*
 * hybrid_score.c: the external scorer of `hybrid search --score-cmd CMD` (docs/hybrid.md, "Objectives").
 *
 * Every measured float16 set gets a folder inside the work folder (`candidates/NNNN/` of the search's
 * output folder): one float32 .npy per graph output per sample (s<sample>_o<output>.npy) and index.json
 * naming them, the samples' input files, the golden outputs (written once to candidates/golden/) and the
 * set. CMD runs under /bin/sh with the folder as "$1" ({outputs} in CMD marks where; otherwise the folder
 * is appended) and RKNN_DIAG_OUTPUTS set to it; it prints one number, higher is better, on the last
 * line of its standard output. A command that exits non-zero, runs past the timeout (its process group is
 * killed) or prints no number is an error naming the candidate and its last output; the folder is then
 * kept for the user to look at, otherwise removed.
 *
 * Thread safety: an_hyb_scorer_put is called by the measuring threads, each for its own sample (own files,
 * own slots); begin and finish run on the caller's thread.
 */
#include "json_out.h"
#include "hybrid.h"
#include "tensor_dump.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TAIL_BYTES 4096   /* of each stream kept for the number and the error message */
#define EXCERPT_CHARS 240 /* of the last output quoted in an error */
#define EXIT_GRACE_S 1.0  /* after the shell exits, how long its pipes may stay open */

typedef struct out_shape {
    int rank;
    int64_t dims[RD_MAX_RANK];
} out_shape;

struct an_hyb_scorer {
    char *script; /* what /bin/sh -c runs: CMD with "$1" for the folder */
    char *cmd;    /* as given, for messages */
    double timeout_s;
    char work_dir[4096]; /* <out>/candidates */
    char **out_names;    /* graph outputs */
    size_t n_samples, n_out, n_in;
    char **inputs;     /* n_samples * n_in input files (entries may be NULL) */
    out_shape *shapes; /* n_samples * n_out: the outputs' shapes of the set being measured */
    size_t candidate;  /* number of the set being measured (1, 2, ...) */
    char dir[4200];    /* its folder */
    char **set;        /* its tensor names (copies) */
    size_t n_set;
    size_t calls;
    double seconds; /* spent in the command */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void free_set(an_hyb_scorer *sc)
{
    for (size_t i = 0; sc->set && i < sc->n_set; i++)
        free(sc->set[i]);
    free(sc->set);
    sc->set = NULL;
    sc->n_set = 0;
}

void an_hyb_scorer_destroy(an_hyb_scorer *sc)
{
    if (!sc)
        return;
    free_set(sc);
    for (size_t i = 0; sc->out_names && i < sc->n_out; i++)
        free(sc->out_names[i]);
    free(sc->out_names);
    for (size_t i = 0; sc->inputs && i < sc->n_samples * sc->n_in; i++)
        free(sc->inputs[i]);
    free(sc->inputs);
    free(sc->shapes);
    free(sc->script);
    free(sc->cmd);
    free(sc);
}

/* CMD with {outputs} replaced by "$1", or "$1" appended: the folder never goes through the shell's parser. */
static char *make_script(const char *cmd)
{
    static const char mark[] = "{outputs}", arg[] = "\"$1\"";
    size_t n = 0;
    for (const char *p = cmd; (p = strstr(p, mark)); p += sizeof mark - 1)
        n++;
    size_t len = strlen(cmd) + (n ? n * sizeof arg : sizeof arg + 1) + 1;
    char *s = malloc(len), *w = s;
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

static rd_status write_outputs(const an_hyb_scorer *sc, const char *dir, size_t sample, const rd_tensor *outs,
                               rd_error *err)
{
    for (size_t o = 0; o < sc->n_out; o++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/s%zu_o%zu.npy", dir, sample, o);
        rd_status st = rd_npy_save(path, &outs[o], err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

rd_status an_hyb_scorer_create(const an_hyb_scorer_opts *o, an_hyb_scorer **out, rd_error *err)
{
    *out = NULL;
    an_hyb_scorer *sc = calloc(1, sizeof *sc);
    if (!sc)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    sc->n_samples = o->n_samples;
    sc->n_out = rd_model_output_count(o->model);
    sc->n_in = o->n_in;
    sc->timeout_s = o->timeout_s;
    snprintf(sc->work_dir, sizeof sc->work_dir, "%s", o->work_dir);
    sc->script = make_script(o->cmd);
    sc->cmd = strdup(o->cmd);
    sc->out_names = calloc(sc->n_out + 1, sizeof *sc->out_names);
    sc->inputs = calloc(sc->n_samples * sc->n_in + 1, sizeof *sc->inputs);
    sc->shapes = calloc(sc->n_samples * sc->n_out + 1, sizeof *sc->shapes);
    rd_status st = sc->script && sc->cmd && sc->out_names && sc->inputs && sc->shapes
                       ? RD_OK
                       : rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < sc->n_out && st == RD_OK; i++) {
        rd_value_info vi;
        rd_model_value(o->model, (size_t)rd_model_output(o->model, i), &vi);
        if (!(sc->out_names[i] = strdup(vi.name)))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; o->inputs && i < sc->n_samples * sc->n_in && st == RD_OK; i++)
        if (o->inputs[i] && !(sc->inputs[i] = strdup(o->inputs[i])))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    /* a fresh candidates/ folder with the golden outputs, which every candidate's index.json points at */
    char golden[4200];
    snprintf(golden, sizeof golden, "%s/golden", sc->work_dir);
    if (st == RD_OK)
        st = rd_dir_remove_tree(sc->work_dir, err);
    if (st == RD_OK)
        st = rd_dir_make(sc->work_dir, RD_DIR_OWN, err);
    if (st == RD_OK)
        st = rd_dir_make(golden, RD_DIR_OWN, err);
    for (size_t k = 0; k < sc->n_samples && st == RD_OK; k++)
        st = write_outputs(sc, golden, k, &o->golden[k * sc->n_out], err);
    if (st != RD_OK) {
        an_hyb_scorer_destroy(sc);
        return rd_error_prefix(err, "--score-cmd");
    }
    *out = sc;
    return RD_OK;
}

/* "candidate 7 (3 float16 tensors: a, b, c)" */
static void describe(const an_hyb_scorer *sc, char *buf, size_t len)
{
    int w =
        snprintf(buf, len, "candidate %zu (%zu float16 tensor%s", sc->candidate, sc->n_set, sc->n_set == 1 ? "" : "s");
    for (size_t i = 0; i < sc->n_set && w > 0 && (size_t)w < len; i++) {
        if (i == 4 && sc->n_set > 5) {
            w += snprintf(buf + w, len - (size_t)w, ", ... %s", sc->set[sc->n_set - 1]);
            break;
        }
        w += snprintf(buf + w, len - (size_t)w, "%s%.60s", i ? ", " : ": ", sc->set[i]);
    }
    if (w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ")");
}

rd_status an_hyb_scorer_begin(an_hyb_scorer *sc, const char *const *names, size_t n, rd_error *err)
{
    free_set(sc);
    sc->candidate++;
    sc->set = calloc(n + 1, sizeof *sc->set);
    if (!sc->set)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!(sc->set[i] = strdup(names[i])))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        sc->n_set = i + 1;
    }
    memset(sc->shapes, 0, sc->n_samples * sc->n_out * sizeof *sc->shapes);
    snprintf(sc->dir, sizeof sc->dir, "%s/%04zu", sc->work_dir, sc->candidate);
    rd_status st = rd_dir_remove_tree(sc->dir, err);
    return st == RD_OK ? rd_dir_make(sc->dir, RD_DIR_OWN, err) : st;
}

rd_status an_hyb_scorer_put(an_hyb_scorer *sc, size_t sample, const rd_tensor *outs, size_t n_out, rd_error *err)
{
    if (sample >= sc->n_samples || n_out != sc->n_out)
        return rd_errorf(err, RD_E_INVAL, "scorer: sample %zu with %zu outputs (expected < %zu, %zu)", sample, n_out,
                         sc->n_samples, sc->n_out);
    for (size_t o = 0; o < n_out; o++) {
        out_shape *sh = &sc->shapes[sample * sc->n_out + o];
        sh->rank = outs[o].rank;
        memcpy(sh->dims, outs[o].dims, sizeof sh->dims);
    }
    return write_outputs(sc, sc->dir, sample, outs, err);
}

static cJSON *shape_json(const out_shape *sh)
{
    cJSON *a = cJSON_CreateArray();
    for (int d = 0; a && d < sh->rank && d < RD_MAX_RANK; d++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)sh->dims[d]));
    return a;
}

/* index.json of the candidate's folder (docs/hybrid.md). */
static rd_status write_index(const an_hyb_scorer *sc, rd_error *err)
{
    cJSON *root = cJSON_CreateObject(), *set = cJSON_CreateArray(), *outs = cJSON_CreateArray(),
          *samples = cJSON_CreateArray();
    cJSON_AddNumberToObject(root, "candidate", (double)sc->candidate);
    cJSON_AddItemToObject(root, "float16", set);
    cJSON_AddItemToObject(root, "outputs", outs);
    cJSON_AddItemToObject(root, "samples", samples);
    for (size_t i = 0; i < sc->n_set; i++)
        cJSON_AddItemToArray(set, cJSON_CreateString(sc->set[i]));
    for (size_t o = 0; o < sc->n_out; o++)
        cJSON_AddItemToArray(outs, cJSON_CreateString(sc->out_names[o]));
    for (size_t k = 0; k < sc->n_samples; k++) {
        cJSON *s = cJSON_CreateObject(), *in = cJSON_CreateArray(), *files = cJSON_CreateArray();
        cJSON_AddNumberToObject(s, "sample", (double)k);
        cJSON_AddItemToObject(s, "inputs", in);
        cJSON_AddItemToObject(s, "outputs", files);
        for (size_t i = 0; i < sc->n_in; i++) {
            const char *p = sc->inputs[k * sc->n_in + i];
            cJSON_AddItemToArray(in, p ? cJSON_CreateString(p) : cJSON_CreateNull());
        }
        for (size_t o = 0; o < sc->n_out; o++) {
            char file[64], golden[80];
            snprintf(file, sizeof file, "s%zu_o%zu.npy", k, o);
            snprintf(golden, sizeof golden, "../golden/s%zu_o%zu.npy", k, o);
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "name", sc->out_names[o]);
            cJSON_AddStringToObject(f, "file", file);
            cJSON_AddStringToObject(f, "golden", golden);
            cJSON_AddStringToObject(f, "dtype", "float32");
            cJSON_AddItemToObject(f, "shape", shape_json(&sc->shapes[k * sc->n_out + o]));
            cJSON_AddItemToArray(files, f);
        }
        cJSON_AddItemToArray(samples, s);
    }
    return an_json_save_in(root, sc->dir, "index.json", err);
}

/* The last TAIL_BYTES of a stream. */
typedef struct tail {
    char buf[TAIL_BYTES + 1];
    size_t len;
    size_t total;
} tail;

static void tail_add(tail *t, const char *p, size_t n)
{
    t->total += n;
    if (n >= TAIL_BYTES) {
        memcpy(t->buf, p + n - TAIL_BYTES, TAIL_BYTES);
        t->len = TAIL_BYTES;
    } else {
        size_t keep = t->len + n > TAIL_BYTES ? TAIL_BYTES - n : t->len;
        memmove(t->buf, t->buf + t->len - keep, keep);
        memcpy(t->buf + keep, p, n);
        t->len = keep + n;
    }
    t->buf[t->len] = '\0';
}

/* Reads what is there; at end of file (or an error) the fd is closed and set to -1. */
static void drain(int *fd, tail *t)
{
    char buf[8192];
    ssize_t r = read(*fd, buf, sizeof buf);
    if (r > 0) {
        tail_add(t, buf, (size_t)r);
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
}

typedef struct run_result {
    tail out, errs;
    int status; /* exit status, 128 + signal, or -1 */
    bool timed_out;
} run_result;

/* Runs the script on the candidate's folder in its own process group, bounded by the timeout. */
static rd_status run_command(const an_hyb_scorer *sc, run_result *rr, rd_error *err)
{
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (out[i] >= 0)
                close(out[i]);
            if (errp[i] >= 0)
                close(errp[i]);
        }
        return rd_errorf(err, RD_E_IO, "--score-cmd: cannot make a pipe: %s", strerror(e));
    }
    char envvar[4300];
    snprintf(envvar, sizeof envvar, "RKNN_DIAG_OUTPUTS=%s", sc->dir);
    size_t n_env = 0;
    while (environ && environ[n_env])
        n_env++;
    char **env = calloc(n_env + 2, sizeof *env);
    if (!env) {
        close(out[0]), close(out[1]), close(errp[0]), close(errp[1]);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++)
        if (strncmp(environ[i], "RKNN_DIAG_OUTPUTS=", 18) != 0)
            env[k++] = environ[i];
    env[k++] = envvar;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
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
    posix_spawnattr_setpgroup(&attr, 0); /* its own group: a timeout kills what it started too */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    char *argv[] = {"/bin/sh", "-c", sc->script, "rknn-diag-score", (char *)sc->dir, NULL};
    pid_t pid = -1;
    int e = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, env);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(out[1]);
    close(errp[1]);
    if (e != 0) {
        close(out[0]);
        close(errp[0]);
        return rd_errorf(err, RD_E_IO, "--score-cmd: cannot start /bin/sh: %s", strerror(e));
    }
    int fds[2] = {out[0], errp[0]};
    double deadline = now_s() + sc->timeout_s, exited_at = -1;
    bool exited = false;
    int status = 0;
    while (fds[0] >= 0 || fds[1] >= 0 || !exited) {
        double now = now_s();
        if (now >= deadline || (exited && now - exited_at > EXIT_GRACE_S)) {
            rr->timed_out = !exited;
            break;
        }
        struct pollfd p[2];
        int np = 0;
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                p[np++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        int wait_ms = (int)fmin(100.0, (deadline - now) * 1000.0) + 1;
        if (np > 0 && poll(p, (nfds_t)np, wait_ms) > 0) {
            for (int i = 0; i < np; i++)
                if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                    int which = p[i].fd == fds[0] ? 0 : 1;
                    drain(&fds[which], which == 0 ? &rr->out : &rr->errs);
                }
        } else if (np == 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            exited_at = now_s();
        }
    }
    /* what is left of its group: the shell on a timeout, or what it started that still holds the pipes (the
       group then still exists, so its id cannot have been reused) */
    if (!exited || fds[0] >= 0 || fds[1] >= 0)
        kill(-pid, SIGKILL);
    if (!exited)
        waitpid(pid, &status, 0);
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    rr->status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    return RD_OK;
}

/* The last non-blank line of text, trimmed, into buf. */
static void last_line(const char *text, char *buf, size_t len)
{
    const char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    const char *start = end;
    while (start > text && start[-1] != '\n')
        start--;
    while (start < end && (*start == ' ' || *start == '\t' || *start == '\r'))
        start++;
    size_t n = (size_t)(end - start);
    if (n >= len)
        n = len - 1;
    memcpy(buf, start, n);
    buf[n] = '\0';
}

/* The last EXCERPT_CHARS of what the command printed (stdout, then stderr), on one line. */
static void excerpt(const run_result *rr, char *buf, size_t len)
{
    char joined[2 * TAIL_BYTES + 8];
    snprintf(joined, sizeof joined, "%s%s%s", rr->out.buf, rr->out.len && rr->errs.len ? " | " : "", rr->errs.buf);
    size_t n = strlen(joined);
    while (n > 0 && (joined[n - 1] == '\n' || joined[n - 1] == ' '))
        joined[--n] = '\0';
    const char *p = n > EXCERPT_CHARS ? joined + n - EXCERPT_CHARS : joined;
    snprintf(buf, len, "%s%s", n > EXCERPT_CHARS ? "..." : "", n ? p : "(nothing)");
    for (char *q = buf; *q; q++)
        if (*q == '\n' || *q == '\r' || *q == '\t')
            *q = ' ';
}

rd_status an_hyb_scorer_finish(an_hyb_scorer *sc, double *score, rd_error *err)
{
    *score = NAN;
    rd_status st = write_index(sc, err);
    run_result rr;
    memset(&rr, 0, sizeof rr);
    double t0 = now_s();
    if (st == RD_OK)
        st = run_command(sc, &rr, err);
    sc->seconds += now_s() - t0;
    sc->calls++;
    if (st != RD_OK)
        return st;
    char who[400], said[EXCERPT_CHARS + 8], line[256];
    describe(sc, who, sizeof who);
    excerpt(&rr, said, sizeof said);
    if (rr.timed_out)
        return rd_errorf(err, RD_E_TIMEOUT,
                         "--score-cmd ran past --score-timeout %g s on %s and was killed ('%.80s'); "
                         "its last output: %s; the candidate's outputs stay in %s",
                         sc->timeout_s, who, sc->cmd, said, sc->dir);
    if (rr.status != 0)
        return rd_errorf(err, RD_E_IO,
                         "--score-cmd failed (exit status %d) on %s ('%.80s'); its last output: %s; the "
                         "candidate's outputs stay in %s",
                         rr.status, who, sc->cmd, said, sc->dir);
    last_line(rr.out.buf, line, sizeof line);
    char *end = NULL;
    double v = strtod(line, &end);
    if (!line[0] || !end || end == line || *end || !isfinite(v))
        return rd_errorf(err, RD_E_PARSE,
                         "--score-cmd printed no number on %s ('%.80s'; the last line of its output "
                         "must be one number, higher is better); its last output: %s; the candidate's outputs stay in "
                         "%s",
                         who, sc->cmd, said, sc->dir);
    *score = v;
    return rd_dir_remove_tree(sc->dir, err);
}

void an_hyb_scorer_stats(const an_hyb_scorer *sc, size_t *calls, double *seconds)
{
    *calls = sc ? sc->calls : 0;
    *seconds = sc ? sc->seconds : 0;
}
