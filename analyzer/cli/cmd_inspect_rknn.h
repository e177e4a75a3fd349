/*
 * cmd_inspect_rknn.h: `rknn-diag inspect` for what RKNN-Toolkit2 built: a `.rknn` model (told by its first
 * bytes, not its name) and `--build-log FILE` (cmd_inspect_rknn.c), the form of inspect that
 * an_inspect_rknn_form picks for those arguments. The printing and JSON: modeltools/inspect_rknn.h.
 */
#ifndef RD_AN_CMD_INSPECT_RKNN_H
#define RD_AN_CMD_INSPECT_RKNN_H

#include "cmd_spec.h"

/** inspect's spec for arguments that name a file of the RKNN family (by magic or a .rknn name) or
    --build-log, else NULL (an_cmd_spec.form). */
const an_cmd_spec *an_inspect_rknn_form(const an_cmd_ctx *ctx);

/** The RKNN part of `inspect --help` (printed after the ONNX one). */
void an_inspect_rknn_help(FILE *out);

#endif
