/* cli_adb.h: what the board commands (devices, pull, push, shell, board-emulate) share: the options
 * that choose a board, as adb has them, and progress printing. */
#ifndef RD_AN_CLI_ADB_H
#define RD_AN_CLI_ADB_H

#include "cli_internal.h"
#include "rknn_diag/adb.h"

/* Ids from 200: a command's own options stay below 100 and the quantization options (quant_setup.h) use
   100 and up, so one command can take all three sets without remapping. */
enum { AN_OPT_USB = 200, AN_OPT_CONNECT, AN_OPT_SERVER, AN_OPT_SERIAL, AN_OPT_TIMEOUT };

#define AN_ADB_OPTSPECS                                                                                           \
    {AN_OPT_USB, "usb", 'd', NULL, "use the board on USB (libusb)"},                                              \
        {AN_OPT_CONNECT, "connect", 0, "HOST:PORT", "use a board with network adb at HOST:PORT"},                 \
        {AN_OPT_SERVER, "server", 0, NULL, "go through the adb server (ANDROID_ADB_SERVER_PORT or 5037)"},        \
        {AN_OPT_SERIAL, "serial", 's', "SERIAL", "pick this board (default: ANDROID_SERIAL, else the only one)"}, \
    {                                                                                                             \
        AN_OPT_TIMEOUT, "timeout", 0, "S", "bound every wait to S seconds (default 10)"                           \
    }

/** Handles one of the AN_ADB_OPTSPECS options; false (with *code set) on a usage error. */
bool an_adb_option(const an_cmd_ctx *ctx, rd_adb_options *opt, int id, const char *value, int *code);

/** Logs library notes ("accept the key on the board") on the error stream; user is the an_cmd_ctx.
 */
void an_adb_log(void *user, const char *msg);

/** rd_adb_pull or rd_adb_push. */
typedef rd_status (*an_adb_copy_fn)(rd_adb *dev, const char *from, const char *to, rd_adb_progress_fn progress,
                                    void *user, rd_error *err);

struct an_cmd_args;
/**
 * pull and push, after the parse (the board options and at most two positionals in cmd): opens the board and
 * copies the first positional (else from) to the second (else to) with copy, printing progress as "VERB ...".
 * A positional missing without a default is the usage error missing. Returns the exit code.
 */
int an_adb_copy_command(an_cmd_ctx *ctx, const struct an_cmd_args *cmd, const char *verb, an_adb_copy_fn copy,
                        const char *from, const char *to, const char *missing);

/** Byte progress (files, bytes, rate) for pull and push. */
typedef struct an_xfer {
    const an_cmd_ctx *ctx;
    int64_t start_ms;
    int64_t last_ms;
    bool tty;
    const char *verb; /* "pulled", "pushed" */
    unsigned files;   /* finished so far */
    uint64_t bytes;   /* copied so far */
} an_xfer;
void an_xfer_init(an_xfer *p, const an_cmd_ctx *ctx, const char *verb);
void an_xfer_cb(void *user, const rd_adb_progress *pr);
/** Final line: files, bytes, seconds and rate. */
void an_xfer_done(an_xfer *p);

#endif
