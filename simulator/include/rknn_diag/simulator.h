/*
 * rknn_diag/simulator.h: the numerics library of rknn-diag.
 *
 * Tensors and dtypes, .npy I/O, ONNX loading, the graph and the layer-by-layer executor whose observer
 * sees every tensor the moment it is produced.
 *
 *     rd_error err;
 *     rd_model *m = NULL;
 *     if (rd_model_load("model.onnx", NULL, &m, &err) != RD_OK) { puts(err.msg); return 3; }
 *     rd_tensor in;
 *     rd_npy_load("input.npy", &in, &err);
 *     rd_run_options opt = { .observer = print_layer, .user = NULL };
 *     rd_tensor out[4];
 *     rd_model_run(m, &in, 1, &opt, out, 4, &err);
 *
 * Conventions: every function that can fail returns an rd_status and fills the rd_error given as its
 * last argument (which may be NULL). Messages name the file, node, tensor or byte offset concerned and
 * carry no trailing newline. Nothing here prints, aborts or exits, and there is no global mutable state.
 */
#ifndef RKNN_DIAG_SIMULATOR_H
#define RKNN_DIAG_SIMULATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Status and errors
 */

typedef enum rd_status {
    RD_OK = 0,
    RD_E_INVAL,       /* invalid argument or usage */
    RD_E_PARSE,       /* malformed outside data (model, .npy, YAML, packet, ...) */
    RD_E_UNSUPPORTED, /* valid input that this version does not implement (op, dtype, feature) */
    RD_E_NOMEM,       /* allocation failed */
    RD_E_IO,          /* file system or socket error */
    RD_E_DEVICE,      /* the board or transport misbehaved */
    RD_E_TIMEOUT,     /* a wait ran past its bound */
    RD_E_LIMIT,       /* a size limit (RD_MAX_*) would be exceeded */
    RD_E_AUTH,        /* the board refused our key */
    RD_E_NOTFOUND,    /* a named thing (file, tensor, device) does not exist */
    RD_E_GATE,        /* an accuracy gate failed (exit code 1) */
    RD_STATUS_COUNT
} rd_status;

#define RD_ERROR_MSG_MAX 1024

typedef struct rd_error {
    rd_status code;
    char msg[RD_ERROR_MSG_MAX];
} rd_error;

/** Short stable name of a status ("ok", "parse error", ...). Never NULL. */
const char *rd_status_str(rd_status code);

/** Sets err (if not NULL) to code and the formatted message; returns code. */
rd_status rd_errorf(rd_error *err, rd_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Prefixes err->msg with formatted context and ": "; returns err->code (RD_OK if err is NULL). */
rd_status rd_error_prefix(rd_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Clears err to RD_OK and an empty message. */
void rd_error_clear(rd_error *err);

/** The process exit code the design gives a status: 0 ok, 1 gate, 2 usage, 3 input or device. */
int rd_status_exit_code(rd_status code);

/* ---------------------------------------------------------------------------------------------------
 * Limits: named so that fuzzers and tests can reason about them. Sizes from outside data are checked
 * against these before any allocation.
 */

#define RD_MAX_RANK 8
#define RD_MAX_TENSOR_BYTES ((uint64_t)4 << 30) /* 4 GiB for one tensor */
#define RD_MAX_MODEL_BYTES ((uint64_t)4 << 30)  /* 4 GiB for one .onnx file */

/* ---------------------------------------------------------------------------------------------------
 * Dtypes. Values are ONNX's TensorProto.DataType numbers so that they map one to one.
 */

typedef enum rd_dtype {
    RD_DT_UNDEFINED = 0,
    RD_DT_F32 = 1,
    RD_DT_U8 = 2,
    RD_DT_I8 = 3,
    RD_DT_U16 = 4,
    RD_DT_I16 = 5,
    RD_DT_I32 = 6,
    RD_DT_I64 = 7,
    RD_DT_STRING = 8,
    RD_DT_BOOL = 9,
    RD_DT_F16 = 10,
    RD_DT_F64 = 11,
    RD_DT_U32 = 12,
    RD_DT_U64 = 13,
    RD_DT_BF16 = 16,
    RD_DT_COUNT = 24 /* table size: ONNX numbers 17..23 (float8, int4, ...) are known but unsupported */
} rd_dtype;

typedef struct rd_dtype_info {
    const char *name;  /* ONNX-style name: "float32", "float16", "int8", ... */
    const char *npy;   /* numpy descr in little-endian form ("<f4", "|i1"), NULL if none */
    size_t size;       /* bytes per element, 0 if not a fixed-size numeric type */
    bool is_float;     /* floating point */
    bool is_signed;    /* signed integer or float */
    bool supported;    /* tensors of this dtype can be held and computed on */
} rd_dtype_info;

/** Facts about a dtype. Never NULL: unknown values get an entry with supported == false. */
const rd_dtype_info *rd_dtype_get(rd_dtype dt);

/** Convenience: the name of a dtype ("float32"); "dtype(N)" style names are not produced. */
const char *rd_dtype_name(rd_dtype dt);

/* IEEE half precision conversion, round to nearest even, overflow to inf, NaN kept. */
uint16_t rd_f32_to_f16(float f);
float rd_f16_to_f32(uint16_t h);
uint16_t rd_f32_to_bf16(float f);
float rd_bf16_to_f32(uint16_t h);

/* ---------------------------------------------------------------------------------------------------
 * Tensors: a plain struct. A tensor owns its data when it was allocated by rd_tensor_alloc (or
 * returned by a function documented to give ownership); rd_tensor_fini frees it.
 */

typedef struct rd_tensor {
    rd_dtype dtype;
    int rank;                    /* 0 for a scalar */
    int64_t dims[RD_MAX_RANK];   /* dims[0..rank-1], each >= 0 */
    void *data;                  /* numel * dtype size bytes, row-major; NULL when numel == 0 */
} rd_tensor;

/** Number of elements (1 for a scalar, 0 if any dim is 0). */
int64_t rd_tensor_numel(const rd_tensor *t);

/** Bytes of data. */
size_t rd_tensor_nbytes(const rd_tensor *t);

/** Checks dims and computes numel*size against RD_MAX_TENSOR_BYTES without overflow. */
rd_status rd_shape_bytes(rd_dtype dt, int rank, const int64_t *dims, size_t *out_bytes, rd_error *err);

/** Allocates zeroed data for the given shape; t is overwritten (not freed first). */
rd_status rd_tensor_alloc(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, rd_error *err);

/** Deep copy of src into dst (dst overwritten). */
rd_status rd_tensor_clone(rd_tensor *dst, const rd_tensor *src, rd_error *err);

/** Converts any numeric tensor to a new float32 tensor (dst overwritten). */
rd_status rd_tensor_to_f32(rd_tensor *dst, const rd_tensor *src, rd_error *err);

/** Frees data and resets t to an empty float32 scalar with no data. NULL is allowed. */
void rd_tensor_fini(rd_tensor *t);

/** Formats the shape as "1x3x224x224" ("scalar" for rank 0) into buf. Returns buf. */
const char *rd_shape_str(const rd_tensor *t, char *buf, size_t len);

/* ---------------------------------------------------------------------------------------------------
 * .npy files: versions 1.0, 2.0 and 3.0; dtypes <f4 <f2 <f8 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1
 * ('>' byte order converted); C and Fortran order (Fortran is transposed to C order on load);
 * 0-d and empty arrays.
 */

/** Parses an .npy image in memory. On success out owns new data. name is used in messages. */
rd_status rd_npy_parse(const void *buf, size_t len, const char *name, rd_tensor *out, rd_error *err);

/** Loads an .npy file. On success out owns new data. */
rd_status rd_npy_load(const char *path, rd_tensor *out, rd_error *err);

/** Serialises t as an .npy (version 1.0, C order) into a new malloc'ed buffer owned by the caller. */
rd_status rd_npy_write(const rd_tensor *t, void **out_buf, size_t *out_len, rd_error *err);

/** Saves t to path, through a temporary file renamed into place. */
rd_status rd_npy_save(const char *path, const rd_tensor *t, rd_error *err);

/** Parses a serialized ONNX TensorProto (a test_data_set_*.pb file). out owns new data. */
rd_status rd_tensorproto_parse(const void *buf, size_t len, const char *name, rd_tensor *out,
                               char **out_name, rd_error *err);

/** Loads a TensorProto file; out_name (may be NULL) receives a malloc'ed tensor name. */
rd_status rd_tensorproto_load(const char *path, rd_tensor *out, char **out_name, rd_error *err);

/** Loads an IDX file (MNIST's format), plain or gzip-compressed. out owns new data. */
rd_status rd_idx_load(const char *path, rd_tensor *out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Models: an ONNX graph, loaded, checked, topologically ordered, shape-inferred and constant-folded.
 */

typedef struct rd_model rd_model;

typedef struct rd_input_shape {
    const char *name;          /* graph input name */
    int rank;
    int64_t dims[RD_MAX_RANK];
} rd_input_shape;

typedef struct rd_load_options {
    const rd_input_shape *input_shapes; /* overrides for symbolic or fixed input dims (may be NULL) */
    size_t n_input_shapes;
    bool allow_unsupported_ops;         /* load even if some ops are unknown (for inspect) */
} rd_load_options;

/** Loads an ONNX model file; external data is read relative to the file's folder. */
rd_status rd_model_load(const char *path, const rd_load_options *opt, rd_model **out, rd_error *err);

/** Loads an ONNX model from memory; base_dir (may be NULL) is where external data is looked up. */
rd_status rd_model_load_mem(const void *buf, size_t len, const char *name, const char *base_dir,
                            const rd_load_options *opt, rd_model **out, rd_error *err);

void rd_model_destroy(rd_model *m);

/** A value (tensor) of the graph as known after loading. */
typedef struct rd_value_info {
    const char *name;
    rd_dtype dtype;
    int rank;                   /* -1 when unknown */
    int64_t dims[RD_MAX_RANK];  /* -1 for a dim not known before running */
    const char *dim_params[RD_MAX_RANK]; /* symbolic names of graph input dims, else NULL */
    bool is_constant;           /* initializer, Constant node or folded at load */
    int producer;               /* node index, -1 for graph inputs and initializers */
} rd_value_info;

typedef struct rd_node_info {
    const char *name;           /* node name (may be "" in the model; never NULL) */
    const char *op_type;
    const char *domain;         /* "" for the default domain */
    int opset;                  /* opset version of the node's domain */
    int n_inputs, n_outputs;
    const int *inputs;          /* value indices, -1 for an omitted optional input */
    const int *outputs;         /* value indices */
    bool supported;             /* an operator implementation exists */
    bool folded;                /* computed at load time (all inputs constant) */
    int64_t macs;               /* multiply-accumulates, 0 where not meaningful or unknown */
} rd_node_info;

int rd_model_ir_version(const rd_model *m);
int rd_model_opset(const rd_model *m, const char *domain); /* "" for the default domain; 0 if absent */
const char *rd_model_producer(const rd_model *m);
size_t rd_model_input_count(const rd_model *m);
size_t rd_model_output_count(const rd_model *m);
int rd_model_input(const rd_model *m, size_t i);   /* value index of real graph input i */
int rd_model_output(const rd_model *m, size_t i);  /* value index of graph output i */
size_t rd_model_value_count(const rd_model *m);
size_t rd_model_node_count(const rd_model *m);     /* nodes in execution (topological) order */
void rd_model_value(const rd_model *m, size_t i, rd_value_info *out);
void rd_model_node(const rd_model *m, size_t i, rd_node_info *out);
int rd_model_find_value(const rd_model *m, const char *name); /* -1 if absent */
/** Total number of weight elements (initializers and Constant nodes). */
int64_t rd_model_param_count(const rd_model *m);
/** The constant data of a value, or NULL when it is not constant. */
const rd_tensor *rd_model_constant(const rd_model *m, size_t value);

/* ---------------------------------------------------------------------------------------------------
 * ONNX writer: builds a model in memory and serialises it (fixtures, the demo model, QDQ export,
 * onnx-edit). It writes what it is given without validating the graph, so tests can build broken
 * models on purpose; rd_model_load is the checker.
 *
 *     rd_onnx_builder *b = rd_onnx_builder_create(8, 17);
 *     const int64_t xdims[4] = {-1, 3, 224, 224};
 *     const char *const xparams[4] = {"batch", NULL, NULL, NULL};
 *     rd_onnx_add_input(b, "x", RD_DT_F32, 4, xdims, xparams);
 *     rd_onnx_add_initializer(b, "w", &w, RD_ONNX_RAW);
 *     rd_onnx_node *n = rd_onnx_add_node(b, "Conv", "conv1", (const char *const[]){"x", "w"}, 2,
 *                                        (const char *const[]){"y"}, 1);
 *     rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
 *     rd_onnx_add_output(b, "y", RD_DT_F32, -1, NULL, NULL);
 *     rd_status st = rd_onnx_builder_save(b, "model.onnx", &err);
 *     rd_onnx_builder_destroy(b);
 *
 * Errors are sticky: every add/attr/set function returns a status and the builder keeps the first
 * failure (out of memory, a NULL name, an unsupported dtype), which rd_onnx_builder_write and
 * rd_onnx_builder_save report. Callers may check once, at the end. Functions accept a NULL builder or
 * node (after a failed add) and then do nothing but return an error.
 */

typedef struct rd_onnx_builder rd_onnx_builder;
typedef struct rd_onnx_node rd_onnx_node; /* a node of a builder, owned by it */

/** Where tensor data is written. */
typedef enum rd_onnx_storage {
    RD_ONNX_RAW = 0,   /* raw_data, little-endian (what exporters write) */
    RD_ONNX_TYPED = 1, /* the typed field the spec assigns: float_data, int32_data (also int8/16, uint8/16,
                          bool, float16 and bfloat16 bits), int64_data, double_data, uint64_data */
} rd_onnx_storage;

/**
 * A new empty model with the given IR version and default-domain opset (0: no opset_import entry,
 * as in IR 1/2 files). Producer is "rknn-diag". NULL when out of memory. Free with _destroy.
 */
rd_onnx_builder *rd_onnx_builder_create(int ir_version, int opset);
void rd_onnx_builder_destroy(rd_onnx_builder *b);

rd_status rd_onnx_set_producer(rd_onnx_builder *b, const char *name, const char *version);
rd_status rd_onnx_set_graph_name(rd_onnx_builder *b, const char *name);
/** Imports another operator set ("com.microsoft", 1). */
rd_status rd_onnx_add_opset(rd_onnx_builder *b, const char *domain, int version);

/**
 * Declares a graph input, output or intermediate value. rank -1 writes no shape; otherwise dims[i]
 * >= 0 is a fixed dim, and a negative dims[i] is symbolic when dim_params[i] names it, unknown when
 * not. dtype is written as its ONNX number. dim_params may be NULL; dims may be NULL when rank <= 0.
 */
rd_status rd_onnx_add_input(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank, const int64_t *dims,
                            const char *const *dim_params);
rd_status rd_onnx_add_output(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank,
                             const int64_t *dims, const char *const *dim_params);
rd_status rd_onnx_add_value_info(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank,
                                 const int64_t *dims, const char *const *dim_params);

/** Adds an initializer holding a copy of t (any supported dtype but string). */
rd_status rd_onnx_add_initializer(rd_onnx_builder *b, const char *name, const rd_tensor *t,
                                  rd_onnx_storage storage);

/**
 * Adds an initializer written exactly as given: any ONNX data_type number (int4, float8, ...), any
 * dims (negative ones included) and len bytes of raw_data (data may be NULL when len is 0). For dtypes
 * rd_tensor cannot hold, and for deliberately malformed test models.
 */
rd_status rd_onnx_add_initializer_raw(rd_onnx_builder *b, const char *name, int data_type, int rank,
                                      const int64_t *dims, const void *data, size_t len);

/**
 * Adds an initializer whose data lives in an external file (data_location EXTERNAL). Only the
 * reference is written; the caller writes the file. offset or length < 0 leaves that key out.
 */
rd_status rd_onnx_add_initializer_external(rd_onnx_builder *b, const char *name, rd_dtype dtype, int rank,
                                           const int64_t *dims, const char *location, int64_t offset,
                                           int64_t length);

/**
 * Appends a node. NULL entries of inputs/outputs are written as "" (an omitted optional input or
 * output); name may be NULL. Returns the node for attributes, or NULL on failure (sticky).
 */
rd_onnx_node *rd_onnx_add_node(rd_onnx_builder *b, const char *op_type, const char *name,
                               const char *const *inputs, int n_inputs, const char *const *outputs,
                               int n_outputs);
rd_status rd_onnx_node_set_domain(rd_onnx_node *n, const char *domain);

rd_status rd_onnx_attr_int(rd_onnx_node *n, const char *name, int64_t v);
rd_status rd_onnx_attr_float(rd_onnx_node *n, const char *name, float v);
rd_status rd_onnx_attr_string(rd_onnx_node *n, const char *name, const char *v);
rd_status rd_onnx_attr_ints(rd_onnx_node *n, const char *name, const int64_t *v, size_t count);
rd_status rd_onnx_attr_floats(rd_onnx_node *n, const char *name, const float *v, size_t count);
rd_status rd_onnx_attr_strings(rd_onnx_node *n, const char *name, const char *const *v, size_t count);
rd_status rd_onnx_attr_tensor(rd_onnx_node *n, const char *name, const rd_tensor *t, rd_onnx_storage storage);

/** The builder's sticky status, with its message copied into err. */
rd_status rd_onnx_builder_status(const rd_onnx_builder *b, rd_error *err);

/** Serialises the model into a new malloc'ed buffer owned by the caller. */
rd_status rd_onnx_builder_write(const rd_onnx_builder *b, void **out_buf, size_t *out_len, rd_error *err);

/** Saves the model to path, through a temporary file renamed into place. */
rd_status rd_onnx_builder_save(const rd_onnx_builder *b, const char *path, rd_error *err);

/**
 * Writes a loaded model back as ONNX: opsets, inputs, outputs and known value shapes, initializers,
 * Constant-node values (as Constant nodes) and every node with its attributes, in execution order.
 * Values folded at load are not written as constants: the nodes that compute them are kept.
 */
rd_status rd_onnx_model_write(const rd_model *m, void **out_buf, size_t *out_len, rd_error *err);
rd_status rd_onnx_model_save(const rd_model *m, const char *path, rd_error *err);

/** Serialises t as a TensorProto (raw_data) named name: the test_data_set_*.pb format. */
rd_status rd_tensorproto_write(const rd_tensor *t, const char *name, void **out_buf, size_t *out_len,
                               rd_error *err);
rd_status rd_tensorproto_save(const char *path, const rd_tensor *t, const char *name, rd_error *err);

/* End of the ONNX writer section.
 * --------------------------------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------------------------------
 * Running. The observer is called for every tensor the moment it exists: first for every constant
 * value that a node produced or that was folded at load (node index of its producer, or -1 for
 * initializers when report_initializers is set), then for each node output in execution order. The
 * tensor passed is valid during the call only: copy what you keep. Returning an error stops the run.
 */

typedef struct rd_observed {
    const char *name;           /* the raw ONNX tensor name */
    int value;                  /* value index */
    int node;                   /* producing node index, -1 for inputs and initializers */
    const char *node_name;
    const char *op_type;        /* "" for inputs and initializers */
    const rd_tensor *tensor;
} rd_observed;

typedef rd_status (*rd_observer_fn)(void *user, const rd_observed *ev, rd_error *err);

typedef struct rd_run_options {
    rd_observer_fn observer;    /* may be NULL */
    void *user;
    bool observe_inputs;        /* also report the graph inputs */
    bool report_initializers;   /* also report initializers (weights) */
    int threads;                /* 0 = default (one thread) */
} rd_run_options;

/**
 * Runs the model on n_inputs tensors given in graph input order (as rd_model_input). Graph outputs
 * are written to outputs[0..n_outputs-1] (n_outputs may be less than the model's output count, or 0
 * with outputs NULL); the caller finalises them with rd_tensor_fini.
 */
rd_status rd_model_run(rd_model *m, const rd_tensor *inputs, size_t n_inputs,
                       const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Operators known to this build (for docs and `inspect`).
 */

typedef struct rd_op_info {
    const char *name;
    const char *domain;
    int since;                  /* first opset version covered */
} rd_op_info;

size_t rd_op_count(void);
void rd_op_get(size_t i, rd_op_info *out);
bool rd_op_supported(const char *domain, const char *op_type);

/** The library version string ("0.1.0"). */
const char *rd_version(void);

#ifdef __cplusplus
}
#endif
#endif /* RKNN_DIAG_SIMULATOR_H */
