/*
 * rknn_diag/frontends.h: models of every framework RKNN-Toolkit2 loads, read into the graph rknn-diag runs.
 *
 * A frontend reads a model file of its framework and writes the equivalent ONNX graph with the ONNX writer of
 * the simulator (rd_onnx_builder), keeping the model's own tensor names; rd_model_load_mem then turns it into
 * the same internal graph an .onnx file gives (values and nodes bound to the operator table), so every command
 * that takes a model takes every format. docs/frontends.md says what each frontend reads and
 * how (layouts, quantization, names).
 *
 *     rd_frontend_info info;
 *     rd_model *m;
 *     if (rd_frontend_load("person_detect.tflite", NULL, NULL, &m, &info, &err) != RD_OK) { puts(err.msg); ... }
 *     printf("%s\n", rd_model_format_name(info.format));              // "tflite"
 *
 * The format is recognised by content (rd_model_format_detect), never by the file name; a caller that knows
 * which format it expects (a model_config.yml's `platform:`) says so and a file of another format is refused
 * naming both. Errors name the file and the byte offset, line, layer or node; every unsupported operator or
 * layer of a model is listed in one message. Inputs are bounded (RD_MAX_MODEL_BYTES, RD_FE_MAX_* below).
 */
#ifndef RKNN_DIAG_FRONTENDS_H
#define RKNN_DIAG_FRONTENDS_H

#include "rknn_diag/simulator.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rd_model_format {
    RD_FORMAT_UNKNOWN = 0,
    RD_FORMAT_ONNX,       /* .onnx (protobuf ModelProto) */
    RD_FORMAT_TFLITE,     /* .tflite (FlatBuffer, identifier "TFL3") */
    RD_FORMAT_DARKNET,    /* .cfg text (first section [net]) + .weights */
    RD_FORMAT_CAFFE,      /* .prototxt (protobuf text) + .caffemodel */
    RD_FORMAT_PYTORCH,    /* TorchScript .pt (a ZIP archive), exported to ONNX by the user's PyTorch */
    RD_FORMAT_TENSORFLOW, /* frozen GraphDef .pb (protobuf) */
    RD_FORMAT_COUNT
} rd_model_format;

#define RD_FE_MAX_TENSORS (1u << 20) /* tensors, operators or layers of one model */
#define RD_FE_MAX_OP_IO 4096         /* inputs or outputs of one operator, graph inputs or outputs */

/** "onnx", "tflite", ...: the names of RKNN's model_config.yml `platform:` key. "unknown" for others. */
const char *rd_model_format_name(rd_model_format f);

/** The inverse of rd_model_format_name (any case); RD_E_INVAL listing the known names. */
rd_status rd_model_format_parse(const char *name, rd_model_format *out, rd_error *err);

/** The format of a model file's first bytes (len may be short: what was read); RD_FORMAT_UNKNOWN when none
    matches (an ONNX protobuf has no magic: callers treat unknown bytes as ONNX and let its parser judge). */
rd_model_format rd_model_format_detect(const void *buf, size_t len);

typedef struct rd_frontend_options {
    rd_model_format expect; /* RD_FORMAT_UNKNOWN: any; else a file of another format but ONNX is RD_E_PARSE */
    bool model_precision;   /* a quantized model (TFLite int8, int16x8) as its own integer arithmetic
                               (`--precision model`) instead of its dequantized float32 form */
    const char *weights;    /* the weights file of a two-file format (Darknet .weights, Caffe .caffemodel);
                               NULL: beside the model, the same name with the weights' extension
                               (yolov3.cfg -> yolov3.weights, net.prototxt -> net.caffemodel) */
    const char *python;     /* the Python whose torch exports a TorchScript model; NULL: $RKNN_DIAG_PYTHON,
                               else python3 from PATH */
    /* TensorFlow (RKNN's load_tensorflow inputs / outputs): tensors named "node" or "node:K". inputs may name
       internal tensors: the graph is cut there and they become its inputs (in this order, shapes from
       --input-shape); outputs are the tensors kept (in this order), and only the nodes they need are read.
       n == 0: every Placeholder / every node nothing reads. */
    const char *const *inputs;
    size_t n_inputs;
    const char *const *outputs;
    size_t n_outputs;
    /* PyTorch: RKNN's input_size_list, the shapes of forward's arguments: entries without a name in argument
       order, entries with one for that argument (they win); the load options' input shapes come on top. */
    const rd_input_shape *input_sizes;
    size_t n_input_sizes;
} rd_frontend_options;

typedef struct rd_frontend_info {
    rd_model_format format;
    bool quantized;       /* the model carries its own quantization (int8 / int16 tensors with scales) */
    bool model_precision; /* the graph loaded is the model's integer arithmetic (rd_frontend_options) */
    char detail[160];     /* one line for `inspect`: "TFLite schema 3, 31 operators, int8 quantized" */
} rd_frontend_info;

/**
 * Loads a model of any supported format (fo may be NULL: detect, float form), with lo applied as rd_model_load
 * applies it (input shapes, unsupported ops for inspect). info (may be NULL) says what was read. *out is NULL
 * on failure. RD_E_UNSUPPORTED for a valid model with operators not supported (all of them named), or
 * model_precision asked of a float model; RD_E_PARSE for a malformed one (file and offset named).
 */
rd_status rd_frontend_load(const char *path, const rd_frontend_options *fo, const rd_load_options *lo, rd_model **out,
                           rd_frontend_info *info, rd_error *err);

/**
 * A .tflite model in memory as ONNX bytes (malloc'ed, the caller frees *out_buf): what rd_frontend_load
 * loads. name is used in messages. For tests and fuzzers.
 */
rd_status rd_tflite_to_onnx(const void *buf, size_t len, const char *name, const rd_frontend_options *fo,
                            void **out_buf, size_t *out_len, rd_frontend_info *info, rd_error *err);

/**
 * A Darknet .cfg and its .weights in memory as ONNX bytes (malloc'ed, the caller frees *out_buf). cfg_name and
 * weights_name are used in messages. For tests and fuzzers.
 */
rd_status rd_darknet_to_onnx(const void *cfg, size_t cfg_len, const char *cfg_name, const void *weights,
                             size_t weights_len, const char *weights_name, void **out_buf, size_t *out_len,
                             rd_frontend_info *info, rd_error *err);

/** A Caffe .prototxt and .caffemodel in memory as ONNX bytes, as rd_darknet_to_onnx. */
rd_status rd_caffe_to_onnx(const void *prototxt, size_t prototxt_len, const char *prototxt_name, const void *caffemodel,
                           size_t caffemodel_len, const char *caffemodel_name, void **out_buf, size_t *out_len,
                           rd_frontend_info *info, rd_error *err);

/** A frozen TensorFlow GraphDef (.pb) in memory as ONNX bytes, as rd_tflite_to_onnx; fo (may be NULL) gives
    the inputs and outputs to cut at. */
rd_status rd_tf_to_onnx(const void *buf, size_t len, const char *name, const rd_frontend_options *fo, void **out_buf,
                        size_t *out_len, rd_frontend_info *info, rd_error *err);

/**
 * A TorchScript .pt file exported to ONNX bytes by PyTorch (`python3 -c`, in a temporary folder; opset 13):
 * shapes give every argument of forward, by name, or in argument order for entries without a name (RKNN's
 * input_size_list); a later entry for an argument wins (float32 zeros are traced). RD_E_UNSUPPORTED when Python cannot
 * import torch (the message says what to install) or the export fails, RD_E_PARSE when torch.jit.load refuses
 * the file, RD_E_INVAL for missing or unknown shapes (forward's arguments named), RD_E_LIMIT after a timeout.
 */
rd_status rd_pytorch_to_onnx(const char *path, const rd_frontend_options *fo, const rd_input_shape *shapes,
                             size_t n_shapes, void **out_buf, size_t *out_len, rd_frontend_info *info, rd_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RKNN_DIAG_FRONTENDS_H */
