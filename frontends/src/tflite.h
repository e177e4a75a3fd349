/*
 * tflite.h: a .tflite model read into plain arrays (tflite_read.c) and written as ONNX (tflite_lower*.c).
 *
 * Schema facts come from TensorFlow's tensorflow/lite/schema/schema.fbs (version 3, "TFL3"): table slots are
 * the fields' declaration order, a union takes two slots (its type, then its value). Only subgraph 0 is read
 * (the model's main graph; control flow subgraphs are refused with the operators that call them).
 */
#ifndef RD_FE_TFLITE_H
#define RD_FE_TFLITE_H

#include "fe_internal.h"
#include "rknn_diag/flatbuf.h"

/* BuiltinOperator codes used by name in the frontend. */
enum {
    TFL_ADD = 0,
    TFL_AVERAGE_POOL_2D = 1,
    TFL_CONCATENATION = 2,
    TFL_CONV_2D = 3,
    TFL_DEPTHWISE_CONV_2D = 4,
    TFL_DEPTH_TO_SPACE = 5,
    TFL_DEQUANTIZE = 6,
    TFL_FLOOR = 8,
    TFL_FULLY_CONNECTED = 9,
    TFL_LOGISTIC = 14,
    TFL_MAX_POOL_2D = 17,
    TFL_MUL = 18,
    TFL_RELU = 19,
    TFL_RELU_N1_TO_1 = 20,
    TFL_RELU6 = 21,
    TFL_RESHAPE = 22,
    TFL_RESIZE_BILINEAR = 23,
    TFL_SOFTMAX = 25,
    TFL_SPACE_TO_DEPTH = 26,
    TFL_TANH = 28,
    TFL_CUSTOM = 32,
    TFL_PAD = 34,
    TFL_GATHER = 36,
    TFL_TRANSPOSE = 39,
    TFL_MEAN = 40,
    TFL_SUB = 41,
    TFL_DIV = 42,
    TFL_SQUEEZE = 43,
    TFL_STRIDED_SLICE = 45,
    TFL_EXP = 47,
    TFL_SPLIT = 49,
    TFL_CAST = 53,
    TFL_PRELU = 54,
    TFL_MAXIMUM = 55,
    TFL_MINIMUM = 57,
    TFL_NEG = 59,
    TFL_PADV2 = 60,
    TFL_SLICE = 65,
    TFL_EXPAND_DIMS = 70,
    TFL_LOG = 73,
    TFL_SUM = 74,
    TFL_SQRT = 75,
    TFL_RSQRT = 76,
    TFL_POW = 78,
    TFL_REDUCE_MAX = 82,
    TFL_REDUCE_MIN = 89,
    TFL_SQUARE = 92,
    TFL_RESIZE_NEAREST_NEIGHBOR = 97,
    TFL_LEAKY_RELU = 98,
    TFL_MIRROR_PAD = 100,
    TFL_ABS = 101,
    TFL_CEIL = 104,
    TFL_ELU = 111,
    TFL_QUANTIZE = 114,
    TFL_HARD_SWISH = 117,
    TFL_GELU = 150,
};

/* ActivationFunctionType */
enum { TFL_ACT_NONE = 0, TFL_ACT_RELU = 1, TFL_ACT_RELU_N1_TO_1 = 2, TFL_ACT_RELU6 = 3, TFL_ACT_TANH = 4 };

typedef struct tfl_tensor {
    const char *name; /* the model's name, into the buffer (may be "") */
    int type;         /* TensorType */
    rd_dtype dtype;   /* RD_DT_UNDEFINED for types rknn-diag does not hold */
    int rank;
    int64_t dims[RD_MAX_RANK];
    const uint8_t *data; /* constant data (buffer bytes), NULL for activations */
    size_t data_len;
    size_t n_q;          /* quantization: scales (0: not quantized) */
    float *scale;        /* n_q, owned */
    int64_t *zero_point; /* n_q, owned (zeros when the file gives none) */
    int qdim;            /* quantized_dimension */
    size_t offset;       /* file offset of the Tensor table, for messages */
} tfl_tensor;

typedef struct tfl_op {
    int code;           /* BuiltinOperator */
    const char *custom; /* custom_code of a CUSTOM operator, or NULL */
    int version;
    int n_in, n_out;
    int *in;          /* n_in tensor indices, -1 for an omitted optional input (owned) */
    int *out;         /* n_out tensor indices (owned) */
    uint8_t opt_type; /* BuiltinOptions union type */
    bool has_opt;
    rd_fb_table opt; /* the options table when has_opt */
    size_t offset;   /* file offset of the Operator table */
} tfl_op;

typedef struct tfl_model {
    const char *path;
    rd_fb fb;
    uint32_t version;
    size_t n_tensors;
    tfl_tensor *tensors;
    size_t n_ops;
    tfl_op *ops;
    size_t n_inputs, n_outputs;
    int *inputs, *outputs;
    bool quantized; /* some tensor carries int8/int16/uint8 quantization */
} tfl_model;

/** Reads buf (kept, not copied: it must outlive m). RD_E_PARSE naming name and the byte offset. */
rd_status tfl_model_parse(const void *buf, size_t len, const char *name, tfl_model *m, rd_error *err);
void tfl_model_fini(tfl_model *m);

/** "CONV_2D", ..., or "BUILTIN_<n>" written into buf for codes without a name here. */
const char *tfl_op_name(int code, char *buf, size_t len);

/** Writes m as ONNX (tflite_lower.c): float32 (quantized tensors dequantized), or the model's integer
    arithmetic when model_precision. */
rd_status tfl_lower(const tfl_model *m, bool model_precision, void **out_buf, size_t *out_len, rd_error *err);

#endif
