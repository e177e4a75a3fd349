/*
 * cmd_board_emulate.c: `rknn-diag board-emulate --port P --root DIR`: the fake board in the
 * foreground until SIGINT or SIGTERM (or --duration). Prints "listening on ADDRESS:PORT" on stdout
 * once ready. Safe by default (docs/board.md): loopback, keys checked, commands confined; whatever
 * weakens that is said on stderr even with --quiet.
 */
#include "term_text.h"
#include "cli_adb.h"
#include "cmd_spec.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    OPT_PORT = 1,
    OPT_ROOT,
    OPT_NO_AUTH,
    OPT_FAULT,
    OPT_ACCEPT_NEW_KEYS,
    OPT_ADB_KEYS,
    OPT_BIND,
    OPT_MAX_PAYLOAD,
    OPT_V1,
    OPT_DURATION,
    OPT_QUIET,
    OPT_FEATURES
};

static const an_optspec board_opts[] = {
    {OPT_PORT, "port", 'p', "P", "TCP port (0: a free one; avoid 5555, adb servers probe it)"},
    {OPT_ROOT, "root", 'r', "DIR", "folder served as the board's / (remote /userdata/dumps is DIR/userdata/dumps)"},
    {OPT_BIND, "bind", 0, "ADDR", "address to listen on (default 127.0.0.1; another lets other machines in)"},
    {OPT_ADB_KEYS, "adb-keys", 0, "FILE",
     "public keys accepted, one per line as in adbkey.pub (default ~/.android/adbkey.pub)"},
    {OPT_NO_AUTH, "no-auth", 0, NULL,
     "DANGEROUS: accept any host without a key (anyone reaching the port runs commands)"},
    {OPT_ACCEPT_NEW_KEYS, "accept-new-keys", 0, "MS",
     "DANGEROUS, for tests: accept a key a host offers after MS ms, as a user tapping Allow"},
    {OPT_MAX_PAYLOAD, "max-payload", 0, "N", "announce a maximum payload of N bytes (256..1048576)"},
    {OPT_V1, "v1", 0, NULL, "speak protocol version 0x01000000 (checksums)"},
    {OPT_FEATURES, "features", 0, "LIST", "features announced (default shell_v2,cmd,stat_v2,ls_v2; \"\" for none)"},
    {OPT_FAULT, "fault", 'f', "F", "inject a fault (repeatable, or comma-separated); see below"},
    {OPT_DURATION, "duration", 0, "S", "stop by itself after S seconds"},
    {OPT_QUIET, "quiet", 'q', NULL, "no connection log on stderr (warnings stay)"},
};

static void print_faults(FILE *f)
{
    fprintf(f, "faults:\n%s", rd_board_fault_help());
}

static void board_log(void *user, const char *msg)
{
    FILE *f = user;
    fputs("board-emulate: ", f);
    an_put_text(f, msg); /* what a peer sent can show up in it */
    fputc('\n', f);
    fflush(f);
}

typedef struct emulate_args {
    rd_board_options bo;
    char faults[1024];
    size_t fl;
    long port, duration;
} emulate_args;

/* In the order of board_opts. */
static const an_optset board_sets[] = {
    AN_SET_RANGE(OPT_PORT, emulate_args, port, 0, 65535),
    AN_SET(OPT_ROOT, AN_SET_STR, emulate_args, bo.root),
    AN_SET(OPT_BIND, AN_SET_STR, emulate_args, bo.bind),
    AN_SET(OPT_ADB_KEYS, AN_SET_STR, emulate_args, bo.adb_keys),
    AN_SET(OPT_NO_AUTH, AN_SET_FLAG, emulate_args, bo.no_auth),
    AN_SET_INT_RANGE(OPT_ACCEPT_NEW_KEYS, emulate_args, bo.accept_new_keys_ms, 1, 3600000),
    AN_SET(OPT_FEATURES, AN_SET_STR, emulate_args, bo.features),
    AN_SET_RANGE(OPT_DURATION, emulate_args, duration, 1, 86400 * 365),
};

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    emulate_args *a = user;
    long lv = 0;
    switch (id) {
    case OPT_MAX_PAYLOAD:
        if (!an_parse_int(ctx->argv[0], "--max-payload", v, 256, RD_ADB_MAX_PAYLOAD, &lv, ctx->errs))
            return AN_EXIT_USAGE;
        a->bo.max_payload = (uint32_t)lv;
        break;
    case OPT_V1:
        a->bo.version = 0x01000000u;
        break;
    case OPT_FAULT: {
        size_t vl = strlen(v);
        if (a->fl + vl + 2 > sizeof a->faults)
            return an_usage(ctx, "too many faults");
        if (a->fl)
            a->faults[a->fl++] = ',';
        memcpy(a->faults + a->fl, v, vl + 1);
        a->fl += vl;
        break;
    }
    case OPT_QUIET:
        a->bo.log = NULL;
        break;
    default:
        return an_usage(ctx, "unexpected argument '%s'", v);
    }
    return AN_GO;
}

static const emulate_args emulate_defaults = {.bo = {.log = board_log}, .port = -1};

static int board_emulate_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)cmd;
    const emulate_args *a = args;
    rd_board_options bo = a->bo;
    bo.log_user = ctx->errs; /* board_log's, unless --quiet */
    const char *faults = a->faults;
    long port = a->port, duration = a->duration;
    if (!bo.root || port < 0)
        return an_usage(ctx, "board-emulate needs --port P and --root DIR");
    if (bo.no_auth && (bo.adb_keys || bo.accept_new_keys_ms))
        return an_usage(ctx, "--no-auth accepts every host: --adb-keys and --accept-new-keys "
                             "make no sense with it");
    bo.port = (int)port;
    bo.faults = faults;
    rd_error err;
    if (rd_board_faults_check(faults, &err) != RD_OK) {
        err.code = RD_E_USAGE; /* --fault is the command line */
        return an_fail(ctx, &err);
    }
    /* block the stop signals in every thread the board starts, then wait for them here */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    rd_board *b = NULL;
    if (rd_board_start(&bo, &b, &err) != RD_OK) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return an_fail(ctx, &err);
    }
    if (!bo.log) { /* --quiet: what weakens the board is still said */
        if (bo.no_auth)
            fprintf(ctx->errs,
                    "board-emulate: WARNING: --no-auth: any program that can reach "
                    "%s runs shell commands on this computer\n",
                    rd_board_address(b));
        if (bo.accept_new_keys_ms)
            fprintf(ctx->errs,
                    "board-emulate: WARNING: --accept-new-keys: any program that can "
                    "reach %s gets in\n",
                    rd_board_address(b));
        if (bo.bind && strncmp(bo.bind, "127.", 4) != 0 && strcmp(bo.bind, "::1") != 0)
            fprintf(ctx->errs,
                    "board-emulate: WARNING: listening on %s: other machines can "
                    "reach this board\n",
                    rd_board_address(b));
    }
    fprintf(ctx->out, "listening on %s\n", rd_board_address(b));
    fflush(ctx->out);
    if (duration > 0) {
        struct timespec ts = {.tv_sec = duration};
        int64_t end = (int64_t)time(NULL) + duration;
        for (;;) { /* sigtimedwait returns early on EINTR */
            int sig = sigtimedwait(&set, NULL, &ts);
            if (sig > 0 || time(NULL) >= end)
                break;
            ts.tv_sec = end - time(NULL);
        }
    } else {
        int sig;
        sigwait(&set, &sig);
    }
    rd_board_stop(b);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return AN_EXIT_OK;
}

const an_cmd_spec an_cmd_board_emulate = {
    .usage = "rknn-diag board-emulate --port P --root DIR [--adb-keys FILE] [--fault F]...",
    .about = "Runs a fake Rockchip board: an ADB device over TCP (use `adb connect "
             "127.0.0.1:P` or `rknn-diag ... --connect 127.0.0.1:P`) serving DIR as "
             "its file system. It accepts only hosts that sign with a key it was "
             "given (as adbd's adb_keys; by default this user's own key, so adb and "
             "rknn-diag of this user get in). Shell commands run in DIR with /bin/sh "
             "on this computer, never as root, without new privileges, and where "
             "the system allows with DIR as the only writable place; the start log "
             "says how they are confined (docs/board.md, Security).",
    AN_SPEC_OPTS(board_opts),
    AN_SPEC_SETS(board_sets),
    .more_help = print_faults,
    AN_SPEC_ARGS(emulate_args, &emulate_defaults),
    .take = take_option,
    .main = board_emulate_main,
};
