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

/**
 * Which API the application feeds its input with, which decides what the board's InputOperator dump
 * holds (docs/runtime.md, "The input-dump rule"): with the normal API (rknn_inputs_set) the runtime
 * converts and normalises the data on the CPU and the dump holds the result of the normalisation; with
 * zero-copy (rknn_create_mem / rknn_set_io_mem) the buffer goes to the NPU as it is and the dump holds
 * the data before the normalisation.
 */
typedef enum an_app_api {
    AN_API_NORMAL = 0, /* rknn_inputs_set: the dump is the normalised input (the default) */
    AN_API_ZERO_COPY,  /* rknn_set_io_mem: the dump is the application's buffer */
} an_app_api;

/** "normal" or "zero-copy". */
const char *an_app_api_name(an_app_api api);
/** RD_E_USAGE naming the valid values. */
rd_status an_app_api_parse(const char *text, an_app_api *out, rd_error *err);

/** What the input check found. */
typedef enum an_input_verdict {
    AN_IN_OK = 0,
    AN_IN_SIZE,         /* element count differs, or resized from another size */
    AN_IN_BGR,          /* colour channels 0 and 2 swapped */
    AN_IN_NORM_TWICE,   /* the application normalised too (mean/std applied twice) */
    AN_IN_NORM_MISSING, /* not normalised where the model expects normalised values */
    AN_IN_NHWC,         /* NHWC data read as NCHW */
    AN_IN_INT8_CLAMP,   /* uint8 values above 127 clamped (or wrapped) into int8 */
    AN_IN_OTHER,        /* differs in another way */
} an_input_verdict;

/** What the board's InputOperator dump of one graph input should hold. */
typedef struct an_input_expect {
    const rd_tensor *raw;      /* the analysed input before mean/std and RGB2BGR: float32 NCHW */
    const rd_input_spec *spec; /* the model's normalisation (mean/std, RGB2BGR) */
    bool is_image;             /* RGB2BGR applies (image files only) */
    an_app_api api;            /* which side of the normalisation the dump holds */
    float scale;               /* normal API: the graph input's int8 scale (the dump is on its grid); 0: float */
    int32_t zero_point;
} an_input_expect;

/**
 * Compares the board's InputOperator dump (any dtype; with the normal API dequantized to float32 by
 * the caller) with what x says it should hold, and names the mistake that explains a difference: each
 * known mistake is made on x->raw and taken to the dump's side of the normalisation (x->api), the first
 * that matches within rounding wins. Sets *verdict and writes a one-line explanation into why; fails only
 * when memory runs out (a check cut short would name the wrong mistake).
 */
rd_status an_check_input(const rd_tensor *board, const an_input_expect *x, an_input_verdict *verdict, char *why,
                         size_t why_len, rd_error *err);

/**
 * Compares what the application received for a graph output (app, any dtype) with the board's output
 * (board_out, float32): the same, or read as int8/uint8 codes, with a scale, or with the wrong dtype.
 * q_scale/q_zp: the output's int8 parameters (scale 0: float output). *mismatch true on a mismatch (why says
 * which); fails only when memory runs out.
 */
rd_status an_check_output(const rd_tensor *app, const rd_tensor *board_out, float q_scale, int32_t q_zp, bool *mismatch,
                          char *why, size_t why_len, rd_error *err);

/** The mistake a verdict names: "RGB/BGR swapped", "normalisation applied twice", ...; "" for AN_IN_OK. */
const char *an_input_verdict_name(an_input_verdict v);

/** Adds an RD_FIND_INPUT_MISMATCH / RD_FIND_OUTPUT_MISMATCH finding; mistake (may be NULL) goes into its title. */
rd_status an_io_finding(rd_result *r, rd_finding_kind kind, const char *tensor, const char *mistake, const char *why,
                        rd_error *err);

#endif
