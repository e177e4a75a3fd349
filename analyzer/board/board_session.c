/*
 * board_session.c: driving the board for `accuracy --target`: dump folder ready and empty of the last
 * run's dumps, inputs pushed, the user's command run with librknnrt's dump switches, dumps pulled.
 *
 * Every remote path goes into shell commands single-quoted (a quote inside becomes '\''), so a folder
 * name never becomes shell syntax. Only files named as librknnrt names dumps are ever deleted.
 */
#include "board_session.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- growing strings ------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = true;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* 'text' with every ' written as '\'' */
static void sb_quoted(sbuf *b, const char *s)
{
    sb_add(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'')
            sb_str(b, "'\\''");
        else
            sb_add(b, s, 1);
    }
    sb_add(b, "'", 1);
}

static rd_status sb_done(sbuf *b, char **out, rd_error *err)
{
    if (b->oom || !b->p) {
        free(b->p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    *out = b->p;
    return RD_OK;
}

/* ---- placeholders ----------------------------------------------------------------------------- */

rd_status an_board_expand(const char *cmd, const char *work_dir, const char *dump_dir, size_t n_inputs, char **out,
                          rd_error *err)
{
    sbuf b = {0};
    sb_str(&b, "");
    for (const char *p = cmd; *p;) {
        if (*p != '{') {
            sb_add(&b, p++, 1);
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end) {
            free(b.p);
            return rd_errorf(err, RD_E_USAGE, "--run: '{' without '}' at offset %zu of \"%s\"", (size_t)(p - cmd), cmd);
        }
        char key[64];
        size_t kn = (size_t)(end - p - 1);
        if (kn >= sizeof key)
            kn = sizeof key - 1;
        memcpy(key, p + 1, kn);
        key[kn] = '\0';
        char path[2200];
        if (strcmp(key, "work_dir") == 0) {
            snprintf(path, sizeof path, "%s", work_dir);
        } else if (strcmp(key, "dump_dir") == 0) {
            snprintf(path, sizeof path, "%s", dump_dir);
        } else if (strncmp(key, "input", 5) == 0 && isdigit((unsigned char)key[5])) {
            char *rest = NULL;
            long i = strtol(key + 5, &rest, 10);
            bool pre = strcmp(rest, "_preprocessed") == 0;
            if ((*rest && !pre) || i < 0 || (size_t)i >= n_inputs) {
                free(b.p);
                return rd_errorf(err, RD_E_USAGE,
                                 "--run: {%s}: the model has %zu input(s): {input0}..{input%zu} "
                                 "(raw) and {input0_preprocessed}.. (after mean/std)",
                                 key, n_inputs, n_inputs ? n_inputs - 1 : 0);
            }
            snprintf(path, sizeof path, "%s/input%ld%s.npy", work_dir, i, pre ? "_preprocessed" : "");
        } else {
            free(b.p);
            return rd_errorf(err, RD_E_USAGE,
                             "--run: unknown placeholder {%s} (known: {input0}, {input0_preprocessed}, "
                             "..., {work_dir}, {dump_dir})",
                             key);
        }
        sb_quoted(&b, path);
        p = end + 1;
    }
    return sb_done(&b, out, err);
}

/* ---- board steps ------------------------------------------------------------------------------ */

static void say(const an_board_run *r, const char *fmt, const char *a, const char *b)
{
    if (!r->log)
        return;
    fprintf(r->log, "rknn-diag accuracy: ");
    fprintf(r->log, fmt, a, b);
    fputc('\n', r->log);
    fflush(r->log);
}

/* Runs a short command; RD_E_DEVICE with its output when its status is not 0. */
static rd_status shell_ok(rd_adb *dev, const char *cmd, const char *what, rd_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int code = 0;
    rd_status st = rd_adb_shell_capture(dev, cmd, &text, &len, &code, err);
    if (st == RD_OK && code != 0)
        st = rd_errorf(err, RD_E_DEVICE, "%s failed on the board (exit status %d): %.400s", what, code,
                       text && len ? text : "(no output)");
    free(text);
    return st;
}

/* librknnrt's dump names: NNN_<op>_<name>_shape_<dims>_<dtype>.npy|.txt */
static bool is_dump_name(const char *name)
{
    size_t n = strlen(name), digits = 0;
    while (isdigit((unsigned char)name[digits]))
        digits++;
    if (digits < 3 || name[digits] != '_' || n < 8 || !strstr(name, "_shape_"))
        return false;
    if (strcmp(name + n - 4, ".npy") != 0 && strcmp(name + n - 4, ".txt") != 0)
        return false;
    static const char *types[] = {"_float.", "_uint8.", "_int8.", "_float16.", "_int16.", "_int32."};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t tn = strlen(types[i]);
        if (n >= tn + 3 && strncmp(name + n - 3 - tn, types[i], tn) == 0)
            return true;
    }
    return false;
}

static rd_status prepare_dump_dir(const an_board_run *r, rd_adb *dev, rd_error *err)
{
    rd_adb_stat stt;
    rd_status st = rd_adb_stat_path(dev, r->dump_dir, &stt, err);
    if (st != RD_OK)
        return st;
    sbuf c = {0};
    char *cmd = NULL;
    if (!stt.exists) {
        say(r, "the dump folder %s does not exist on the board: creating it (mkdir -p, chmod 777)%s", r->dump_dir, "");
        sb_str(&c, "mkdir -p ");
        sb_quoted(&c, r->dump_dir);
        sb_str(&c, " && chmod 777 ");
        sb_quoted(&c, r->dump_dir);
        if ((st = sb_done(&c, &cmd, err)) != RD_OK)
            return st;
        st = shell_ok(dev, cmd, "creating the dump folder", err);
        free(cmd);
        if (st != RD_OK)
            return rd_error_prefix(err,
                                   "cannot create %s (run `mkdir -p %s && chmod 777 %s` on the board as root, "
                                   "e.g. with `adb root` or su, or give --board-dump-dir)",
                                   r->dump_dir, r->dump_dir, r->dump_dir);
    }
    memset(&c, 0, sizeof c);
    sb_str(&c, "touch ");
    sb_quoted(&c, r->dump_dir);
    sb_str(&c, "/.rknn-diag-write-test && rm -f ");
    sb_quoted(&c, r->dump_dir);
    sb_str(&c, "/.rknn-diag-write-test");
    if ((st = sb_done(&c, &cmd, err)) != RD_OK)
        return st;
    st = shell_ok(dev, cmd, "writing into the dump folder", err);
    free(cmd);
    if (st != RD_OK)
        return rd_error_prefix(err,
                               "%s is not writable: librknnrt would fail with 'failed open dump path' (run "
                               "`chmod 777 %s` on the board as root, or give --board-dump-dir)",
                               r->dump_dir, r->dump_dir);
    return RD_OK;
}

/* Removes the previous run's dumps: only files named as librknnrt names them. */
static rd_status clear_old_dumps(const an_board_run *r, rd_adb *dev, rd_error *err)
{
    rd_adb_dirent *list = NULL;
    size_t n = 0;
    rd_status st = rd_adb_list(dev, r->dump_dir, &list, &n, err);
    if (st != RD_OK)
        return st;
    size_t removed = 0;
    for (size_t i = 0; i < n && st == RD_OK; i += 64) {
        sbuf c = {0};
        sb_str(&c, "rm -f");
        size_t batch = 0;
        for (size_t k = i; k < n && k < i + 64; k++) {
            if (!is_dump_name(list[k].name) || strchr(list[k].name, '/'))
                continue;
            sb_str(&c, " ");
            char path[2200];
            snprintf(path, sizeof path, "%s/%s", r->dump_dir, list[k].name);
            sb_quoted(&c, path);
            batch++;
        }
        char *cmd = NULL;
        if ((st = sb_done(&c, &cmd, err)) != RD_OK)
            break;
        if (batch)
            st = shell_ok(dev, cmd, "removing the previous dumps", err);
        removed += batch;
        free(cmd);
    }
    rd_adb_dirents_free(list, n);
    if (st == RD_OK && removed) {
        char num[32];
        snprintf(num, sizeof num, "%zu", removed);
        say(r, "removed %s dump file(s) of the previous run from %s", num, r->dump_dir);
    }
    return st;
}

static rd_status push_inputs(const an_board_run *r, rd_adb *dev, rd_error *err)
{
    sbuf c = {0};
    char *cmd = NULL;
    sb_str(&c, "mkdir -p ");
    sb_quoted(&c, r->work_dir);
    rd_status st = sb_done(&c, &cmd, err);
    if (st == RD_OK)
        st = shell_ok(dev, cmd, "creating the work folder", err);
    free(cmd);
    if (st != RD_OK)
        return rd_error_prefix(err, "work folder %s (give --board-work-dir)", r->work_dir);
    for (size_t i = 0; i < r->n_inputs && st == RD_OK; i++)
        for (int pre = 0; pre < 2 && st == RD_OK; pre++) {
            char local[4400], remote[2200];
            snprintf(local, sizeof local, "%s/input%zu%s.npy", r->local_inputs, i, pre ? "_preprocessed" : "");
            snprintf(remote, sizeof remote, "%s/input%zu%s.npy", r->work_dir, i, pre ? "_preprocessed" : "");
            st = rd_adb_push(dev, local, remote, NULL, NULL, err);
        }
    return st;
}

typedef struct tail_buf {
    char text[2048];
    size_t n;
} tail_buf;

/* The board's lines as continuation lines of a message (each after a newline and four spaces: the only line
   break an_put_text shows as one), without the final newline. */
static void indent_lines(const char *in, char *out, size_t cap)
{
    size_t o = 0, n = strlen(in);
    while (n && (in[n - 1] == '\n' || in[n - 1] == '\r'))
        n--;
    for (size_t i = 0; i < n && o + 6 < cap; i++) {
        out[o++] = in[i];
        if (in[i] == '\n') {
            memcpy(out + o, "    ", 4);
            o += 4;
        }
    }
    out[o] = '\0';
}

static void keep_tail(void *user, int stream, const char *data, size_t n)
{
    (void)stream;
    tail_buf *t = user;
    if (n >= sizeof t->text - 1) {
        data += n - (sizeof t->text - 1);
        n = sizeof t->text - 1;
    }
    if (t->n + n > sizeof t->text - 1) {
        size_t drop = t->n + n - (sizeof t->text - 1);
        memmove(t->text, t->text + drop, t->n - drop);
        t->n -= drop;
    }
    memcpy(t->text + t->n, data, n);
    t->n += n;
    t->text[t->n] = '\0';
}

static rd_status run_command(const an_board_run *r, rd_error *err)
{
    char *expanded = NULL;
    rd_status st = an_board_expand(r->command, r->work_dir, r->dump_dir, r->n_inputs, &expanded, err);
    if (st != RD_OK)
        return st;
    sbuf c = {0};
    sb_str(&c, "cd ");
    sb_quoted(&c, r->work_dir);
    sb_str(&c, " && RKNN_LOG_LEVEL=5 RKNN_DUMP_DIR=");
    sb_quoted(&c, r->dump_dir);
    sb_str(&c, " && export RKNN_LOG_LEVEL RKNN_DUMP_DIR && ");
    sb_str(&c, expanded);
    char *cmd = NULL;
    st = sb_done(&c, &cmd, err);
    say(r, "running on the board: %s%s", expanded, "");
    free(expanded);
    if (st != RD_OK)
        return st;
    /* a model run prints nothing for long: its own connection with the run's (longer) silence bound */
    rd_adb_options o = r->adb;
    o.timeout_ms = r->run_timeout_ms;
    rd_adb *dev = NULL;
    st = rd_adb_open(&o, &dev, err);
    tail_buf tail = {.n = 0};
    tail.text[0] = '\0';
    int code = 0;
    bool known = false;
    if (st == RD_OK)
        st = rd_adb_shell_ex(dev, cmd, keep_tail, &tail, &code, &known, err);
    rd_adb_close(dev);
    free(cmd);
    if (st != RD_OK)
        return rd_error_prefix(err, "--run command (bound: --run-timeout %d s)", r->run_timeout_ms / 1000);
    if (known && code != 0) {
        char shown[sizeof tail.text * 2];
        indent_lines(tail.n ? tail.text : "(no output)", shown, sizeof shown);
        return rd_errorf(err, RD_E_DEVICE,
                         "the --run command failed on the board with exit status %d; its output "
                         "ends with:\n    %s",
                         code, shown);
    }
    return RD_OK;
}

rd_status an_board_run_dumps(const an_board_run *r, rd_error *err)
{
    rd_adb *dev = NULL;
    rd_status st = rd_adb_open(&r->adb, &dev, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "opening the board");
    say(r, "board %s (%s)", rd_adb_serial(dev), rd_adb_transport_name(dev));
    st = prepare_dump_dir(r, dev, err);
    if (st == RD_OK)
        st = clear_old_dumps(r, dev, err);
    if (st == RD_OK)
        st = push_inputs(r, dev, err);
    rd_adb_close(dev);
    dev = NULL;
    if (st == RD_OK)
        st = run_command(r, err);
    if (st == RD_OK)
        st = rd_adb_open(&r->adb, &dev, err);
    /* the old dumps go, whole and without following links, so a rerun never mixes two runs and the pull
       makes the folder afresh (into an existing one it would land a level down) */
    if (st == RD_OK && (st = rd_dir_remove_tree(r->local_dumps, err)) != RD_OK)
        rd_error_prefix(err, "clearing the local dump folder");
    if (st == RD_OK) {
        st = rd_adb_pull(dev, r->dump_dir, r->local_dumps, NULL, NULL, err);
        if (st != RD_OK)
            rd_error_prefix(err, "pulling the dumps");
        else
            say(r, "pulled the dumps of %s into %s", r->dump_dir, r->local_dumps);
    }
    rd_adb_close(dev);
    return st;
}
