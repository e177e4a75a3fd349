/*
 * tflite_synth.h: writes small .tflite files for tests and fuzz seeds (schema.fbs version 3, through the
 * FlatBuffer builder of flatbuf/). Tensors, operators and options are recorded, then laid out by tfs_finish.
 *
 *     tfs_model *m = tfs_create();
 *     int x = tfs_tensor(m, "x", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 8, 3}, NULL, 0);
 *     int w = tfs_tensor(m, "w", TFS_FLOAT32, 4, (const int32_t[]){4, 3, 3, 3}, weights, sizeof weights);
 *     int y = tfs_tensor(m, "y", TFS_FLOAT32, 4, (const int32_t[]){1, 8, 8, 4}, NULL, 0);
 *     tfs_op(m, 3, (const int[]){x, w, -1}, 3, &y, 1, 1, (const tfs_field[]){{0, 1, 0}, {1, 4, 1}, {2, 4, 1}}, 3);
 *     tfs_io(m, &x, 1, &y, 1);
 *     tfs_finish(m, &buf, &len, &err);
 */
#ifndef RD_TESTS_TFLITE_SYNTH_H
#define RD_TESTS_TFLITE_SYNTH_H

#include "rknn_diag/flatbuf.h"

enum { TFS_FLOAT32 = 0, TFS_FLOAT16 = 1, TFS_INT32 = 2, TFS_UINT8 = 3, TFS_INT64 = 4, TFS_INT16 = 7, TFS_INT8 = 9 };

/** One scalar field of an options table: slot, size in bytes (1, 4), value (an int, or float bits). */
typedef struct tfs_field {
    unsigned slot;
    unsigned size;
    int64_t value;
} tfs_field;

typedef struct tfs_model tfs_model;

tfs_model *tfs_create(void);
void tfs_destroy(tfs_model *m);

/** A tensor (data NULL for an activation); returns its index. */
int tfs_tensor(tfs_model *m, const char *name, int type, int rank, const int32_t *dims, const void *data, size_t len);
/** Quantization of tensor t: n scales and zero points along qdim. */
void tfs_quant(tfs_model *m, int t, const float *scales, const int64_t *zero_points, int n, int qdim);
/** An operator of builtin code (custom: its custom_code, or NULL) with an options table of union type opt_type
    (0: none) holding fields (float fields: the bits of a float in value). Returns its index. */
int tfs_op(tfs_model *m, int code, const int *in, int n_in, const int *out, int n_out, int opt_type,
           const tfs_field *fields, int n_fields);
int tfs_custom_op(tfs_model *m, const char *custom, const int *in, int n_in, const int *out, int n_out);
/** A float option's value for tfs_field.value. */
int64_t tfs_f32(float f);
void tfs_io(tfs_model *m, const int *in, int n_in, const int *out, int n_out);
/** Serializes (buf malloc'ed: free it). The model is left as it was (finish may be called again). */
rd_status tfs_finish(tfs_model *m, uint8_t **buf, size_t *len, rd_error *err);

#endif

/* Example models shared by the unit tests and the fuzz seeds (tests/fuzz/gen_corpus_tflite.c). */

/** float32: PAD, CONCATENATION, RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR, TRANSPOSE, STRIDED_SLICE,
    MEAN, LEAKY_RELU, HARD_SWISH, LOGISTIC, SOFTMAX with beta, SPLIT, GATHER, DEPTH_TO_SPACE, ADD/SUB/MUL
    with fused activations, AVERAGE_POOL_2D: input "x" [1, 4, 4, 4], outputs "out_a" .. "out_d". */
tfs_model *tfs_example_zoo(void);

/** int16x8: input "x" int16 [1, 5, 6, 3] -> CONV_2D (per-channel int8 weights, int64 bias, VALID, stride 1,
    dilation 2 x 1) -> "y" int16 -> DEPTHWISE_CONV_2D (SAME, stride 2) -> "z" int16 -> AVERAGE_POOL_2D ->
    RESHAPE -> FULLY_CONNECTED -> "fc" int16 -> DEQUANTIZE -> "out" float32. */
tfs_model *tfs_example_int16(void);
