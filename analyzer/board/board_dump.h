/*
 * board_dump.h: the emulated board's per-layer dumps, written as librknnrt writes them
 * (RKNN_LOG_LEVEL=5: NNN_<OpType>_<name>_shape_<dims>_<dtype>.npy; 6: also .txt in NC1HWC2;
 * RKNN_DUMP_QUANT=1: the layer's own dtype instead of float32). docs/board.md.
 */
#ifndef RD_AN_BOARD_DUMP_H
#define RD_AN_BOARD_DUMP_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct an_board_dumper {
    const char *dir;              /* the dump folder */
    int log_level;                /* 5: .npy, 6: .npy and .txt */
    bool quant;                   /* RKNN_DUMP_QUANT=1 */
    const rd_platform_info *plat; /* C2 of the .txt files */
    size_t n_written;             /* files written */
    bool warned_txt;              /* the "no .txt for this tensor" note was printed */
} an_board_dumper;

/** How a tensor is held on the NPU: its dtype there and int8 parameters. */
typedef struct an_held {
    rd_prec prec; /* RD_PREC_INT8, RD_PREC_FP16 or RD_PREC_FP32 */
    float scale;  /* int8 only */
    int32_t zero_point;
} an_held;

/**
 * The file's tensor for simulated values (float32, exact at their precision): float32 when !quant,
 * else int8 codes or float16 as held. New tensor.
 */
rd_status an_board_encode(const rd_tensor *values, const an_held *held, bool quant, rd_tensor *out, rd_error *err);

/**
 * The full path of a dump into path (for messages as much as for writing). RD_E_INVAL when the name
 * cannot be formed (an empty op type, a rank above RD_MAX_RANK).
 */
rd_status an_board_dump_path(const an_board_dumper *d, int index, const char *op_type, const char *tensor_name,
                             const rd_tensor *file_tensor, bool txt, char *path, size_t len, rd_error *err);

/**
 * Writes one dump: file_tensor (from an_board_encode, or a raw input) as .npy and, at level 6, as .txt
 * in NC1HWC2 with c2 (0: no .txt, noted once on errs). Tensors below rank 4 are padded to NCHW with
 * trailing 1s ([N, C] is [N, C, 1, 1]) for the .txt layout; above rank 4 they get no .txt.
 */
rd_status an_board_dump_write(an_board_dumper *d, int index, const char *op_type, const char *tensor_name,
                              const rd_tensor *file_tensor, int c2, FILE *errs, rd_error *err);

#endif
