/*
 * rknn_diag/analyzer.h: the diagnosis library behind the rknn-diag command line.
 *
 *     return rd_cli_main(argc, argv);   // the whole program
 *
 * Each command is also callable as a function taking argv-style arguments, so tests drive the
 * command line without spawning processes. Output goes to the given streams.
 */
#ifndef RKNN_DIAG_ANALYZER_H
#define RKNN_DIAG_ANALYZER_H

#include "rknn_diag/simulator.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Runs the command line; returns the process exit code (0 ok, 1 gate failed, 2 usage, 3 input/device). */
int rd_cli_main(int argc, char **argv);

/** Same with explicit streams (stdout for results, stderr for progress and errors). */
int rd_cli_run(int argc, char **argv, FILE *out, FILE *errs);

#ifdef __cplusplus
}
#endif
#endif
