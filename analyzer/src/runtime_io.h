/*
 * runtime_io.h: the application's own input and output, checked as the runtime chapter of Rockchip's
 * guide asks users to check them by hand: the board's InputOperator dump against the input the
 * simulator used, and the OutputOperator dumps against the simulator's outputs and what the
 * application received (--app-outputs).
 */
#ifndef RD_AN_RUNTIME_IO_H
#define RD_AN_RUNTIME_IO_H

#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

/** What the input check found. */
typedef enum an_input_verdict {
    AN_IN_OK = 0,
    AN_IN_SIZE,          /* element count differs */
    AN_IN_BGR,           /* colour channels 0 and 2 swapped */
    AN_IN_NORM_TWICE,    /* the application normalised too (mean/std applied twice) */
    AN_IN_NORM_MISSING,  /* not normalised where the model expects normalised values */
    AN_IN_NHWC,          /* NHWC data read as NCHW */
    AN_IN_INT8_CLAMP,    /* uint8 values above 127 clamped (or wrapped) into int8 */
    AN_IN_OTHER,         /* differs in another way */
} an_input_verdict;

/**
 * Compares the board's raw input dump (any dtype) with the raw input the simulator used (float32 NCHW,
 * before mean/std) given the spec's mean/std. Writes a one-line explanation into why.
 */
an_input_verdict an_check_input(const rd_tensor *board, const rd_tensor *raw, const rd_input_spec *spec, char *why,
                                size_t why_len);

/**
 * Compares what the application received for a graph output (app, any dtype) with the board's output
 * (board_out, float32): the same, or read as int8/uint8 codes, with a scale, or with the wrong dtype.
 * q_scale/q_zp: the output's int8 parameters (scale 0: float output). Returns true on a mismatch.
 */
bool an_check_output(const rd_tensor *app, const rd_tensor *board_out, float q_scale, int32_t q_zp, char *why,
                     size_t why_len);

/** Adds an RD_FIND_INPUT_MISMATCH / RD_FIND_OUTPUT_MISMATCH finding. */
rd_status an_io_finding(rd_result *r, rd_finding_kind kind, const char *tensor, const char *why, rd_error *err);

#endif
