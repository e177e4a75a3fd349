/*
 * cmd_inspect_rknn.h: `rknn-diag inspect` for what RKNN-Toolkit2 built: a `.rknn` model (told by its first
 * bytes, not its name) and `--build-log FILE` (cmd_inspect_rknn.c). cmd_inspect.c hands over to
 * an_inspect_rknn when an_inspect_rknn_wanted says so. The printing and JSON: modeltools/inspect_rknn.h.
 */
#ifndef RD_AN_CMD_INSPECT_RKNN_H
#define RD_AN_CMD_INSPECT_RKNN_H

#include "cli_internal.h"

/** True when the arguments name a file of the RKNN family (by magic or a .rknn name) or --build-log. */
bool an_inspect_rknn_wanted(const an_cmd_ctx *ctx);

/** The command for those arguments. */
int an_inspect_rknn(an_cmd_ctx *ctx);

/** The RKNN part of `inspect --help` (printed after the ONNX one). */
void an_inspect_rknn_help(FILE *out);

#endif
