/* cli_adb.c: board selection options and progress lines shared by the board commands. */
#include "term_text.h"
#include "cli_adb.h"
#include "cmd_spec.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool an_adb_option(const an_cmd_ctx *ctx, rd_adb_options *opt, int id, const char *value, int *code)
{
    long v = 0;
    switch (id) {
    case AN_OPT_USB:
        opt->transport = RD_ADB_USB;
        return true;
    case AN_OPT_CONNECT:
        opt->transport = RD_ADB_TCP;
        opt->connect = value;
        return true;
    case AN_OPT_SERVER:
        opt->transport = RD_ADB_SERVER;
        return true;
    case AN_OPT_SERIAL:
        opt->serial = value;
        return true;
    case AN_OPT_TIMEOUT:
        if (!an_parse_int(ctx->argv[0], "--timeout", value, 1, 86400, &v, ctx->errs)) {
            *code = AN_EXIT_USAGE;
            return false;
        }
        opt->timeout_ms = (int)(v * 1000);
        return true;
    default:
        *code = AN_EXIT_USAGE;
        return false;
    }
}

void an_adb_log(void *user, const char *msg)
{
    const an_cmd_ctx *ctx = user;
    fprintf(ctx->errs, "rknn-diag %s: ", ctx->argv[0]);
    an_put_text(ctx->errs, msg); /* the board's own words: file names, banners */
    fputc('\n', ctx->errs);
    fflush(ctx->errs);
}

void an_xfer_init(an_xfer *p, const an_cmd_ctx *ctx, const char *verb)
{
    p->ctx = ctx;
    p->start_ms = now_ms();
    p->last_ms = 0;
    p->tty = isatty(fileno(ctx->errs));
    p->verb = verb;
    p->files = 0;
    p->bytes = 0;
}

static void rate(char *buf, size_t cap, uint64_t bytes, int64_t ms)
{
    double s = ms > 0 ? ms / 1000.0 : 0.001;
    snprintf(buf, cap, "%.1f MB/s", bytes / 1e6 / s);
}

void an_xfer_cb(void *user, const rd_adb_progress *pr)
{
    an_xfer *p = user;
    int64_t t = now_ms();
    p->files = pr->files_done;
    p->bytes = pr->all_done;
    char r[32];
    rate(r, sizeof r, pr->all_done, t - p->start_ms);
    if (p->tty) {
        if (!pr->file_finished && t - p->last_ms < 100)
            return;
        p->last_ms = t;
        fprintf(p->ctx->errs, "\r[%u/%u] %llu / %llu bytes, %s  %.60s\033[K", pr->files_done, pr->files_total,
                (unsigned long long)pr->all_done, (unsigned long long)pr->all_total, r,
                RD_TEXT_SHOWN(pr->path)); /* the board names its files */
        fflush(p->ctx->errs);
        return;
    }
    /* not a terminal: one line per finished file, plus one every 2 s inside a big file */
    if (!pr->file_finished && t - p->last_ms < 2000)
        return;
    p->last_ms = t;
    if (pr->file_finished)
        fprintf(p->ctx->errs, "%s %s (%llu bytes) [%u/%u, %llu bytes, %s]\n", p->verb, RD_TEXT_SHOWN(pr->path),
                (unsigned long long)pr->file_total, pr->files_done, pr->files_total, (unsigned long long)pr->all_done,
                r);
    else
        fprintf(p->ctx->errs, "... %s: %llu / %llu bytes [%s]\n", RD_TEXT_SHOWN(pr->path),
                (unsigned long long)pr->file_done, (unsigned long long)pr->file_total, r);
}

void an_xfer_done(an_xfer *p)
{
    unsigned files = p->files;
    uint64_t bytes = p->bytes;
    int64_t ms = now_ms() - p->start_ms;
    char r[32];
    rate(r, sizeof r, bytes, ms);
    if (p->tty)
        fprintf(p->ctx->errs, "\r\033[K");
    fprintf(p->ctx->errs, "%u file%s %s, %llu bytes in %.3f s (%s)\n", files, files == 1 ? "" : "s", p->verb,
            (unsigned long long)bytes, ms / 1000.0, r);
}

int an_adb_copy_command(an_cmd_ctx *ctx, const struct an_cmd_args *cmd, const char *verb, an_adb_copy_fn copy,
                        const char *from, const char *to, const char *missing)
{
    from = cmd->n_pos > 0 ? cmd->pos[0] : from;
    to = cmd->n_pos > 1 ? cmd->pos[1] : to;
    if (!from || !to)
        return an_usage(ctx, "%s", missing);
    rd_error err;
    rd_adb *dev = NULL;
    if (rd_adb_open(&cmd->adb, &dev, &err) != RD_OK)
        return an_fail(ctx, &err);
    an_xfer prog;
    an_xfer_init(&prog, ctx, verb);
    rd_status st = copy(dev, from, to, an_xfer_cb, &prog, &err);
    rd_adb_close(dev);
    if (st != RD_OK)
        return an_fail(ctx, &err);
    an_xfer_done(&prog);
    return AN_EXIT_OK;
}
