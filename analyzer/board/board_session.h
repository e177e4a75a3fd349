/*
 * board_session.h: `accuracy --target T --run CMD`: one run of the user's application on the board with
 * librknnrt's per-layer dumps switched on, and the dumps pulled back (docs/runtime.md).
 */
#ifndef RD_AN_BOARD_SESSION_H
#define RD_AN_BOARD_SESSION_H

#include "cli_internal.h"
#include "rknn_diag/adb.h"

typedef struct an_board_run {
    rd_adb_options adb;       /* which board; timeout_ms bounds connection and file waits */
    int run_timeout_ms;       /* silence allowed while CMD runs (a model run can take long) */
    const char *dump_dir;     /* the board's RKNN_DUMP_DIR */
    const char *work_dir;     /* where the inputs go */
    const char *command;      /* CMD with {input0}, {input0_preprocessed}, ..., {work_dir}, {dump_dir} */
    const char *local_inputs; /* local folder holding input<i>.npy and input<i>_preprocessed.npy */
    size_t n_inputs;
    const char *local_dumps; /* where the dumps are pulled to: removed whole first (links inside removed, not
                                followed; the folder itself a link is refused), then made afresh by the pull */
    FILE *log;               /* progress lines ("rknn-diag accuracy: ...") */
} an_board_run;

/**
 * Opens the board, makes sure the dump folder exists and is writable (creating it, and saying so),
 * removes the previous run's dumps (only .npy/.txt files named as librknnrt names them), pushes the
 * inputs, runs the command with RKNN_LOG_LEVEL=5 and RKNN_DUMP_DIR set, and pulls the dumps. A failing
 * command is RD_E_DEVICE with its exit status and the end of its output in the message.
 */
rd_status an_board_run_dumps(const an_board_run *r, rd_error *err);

/**
 * Replaces {input<i>}, {input<i>_preprocessed}, {work_dir} and {dump_dir} in cmd. RD_E_USAGE for an
 * unknown placeholder or an input index out of range; out is malloc'ed.
 */
rd_status an_board_expand(const char *cmd, const char *work_dir, const char *dump_dir, size_t n_inputs, char **out,
                          rd_error *err);

#endif
