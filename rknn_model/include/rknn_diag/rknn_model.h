/*
 * rknn_diag/rknn_model.h: reading what RKNN-Toolkit2 built: `.rknn` model files and verbose build logs.
 *
 * A `.rknn` file holds the graph the NPU runs (fused ops such as ConvExSwish or ConvAdd), every stored
 * tensor with the int8 range, scale and zero point the toolkit chose (under the ONNX tensor names), the
 * weights, and a Python-dict string with the input normalisation (`attrs`) and `quant_tab`. The layout is
 * undocumented; docs/rknn-model.md says what is read, what is not, and what is guessed.
 *
 *     rd_error err;
 *     rd_rknn_model *m = NULL;
 *     if (rd_rknn_load("model.rknn", NULL, &m, &err) != RD_OK) { puts(err.msg); return 3; }
 *     const rd_rknn_info *info = rd_rknn_info_get(m);
 *     const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
 *     for (size_t i = 0; i < g->n_nodes; i++) {
 *         const rd_rknn_node *n = &g->nodes[i];
 *         printf("%s %s on %s\n", n->op_type, n->name, rd_rknn_target_name(n->target));
 *         for (size_t k = 0; k < n->n_outputs; k++) {
 *             const rd_rknn_tensor *t = &g->tensors[n->outputs[k]];
 *             printf("  -> %s scale %g zp %d\n", t->name, t->n_scale ? t->scale[0] : 0.0,
 *                    t->n_zero_point ? t->zero_point[0] : 0);
 *         }
 *     }
 *     rd_rknn_destroy(m);
 *
 * Ownership: the model owns everything reachable from it (strings, arrays, values); pointers stay valid
 * until rd_rknn_destroy. Node input/output indices are checked to be valid tensor indices of the same
 * graph; blob indices are checked against the model's blob list. Nothing prints or aborts; errors name
 * the file, the byte offset, the tensor or node and what was expected. No global state.
 */
#ifndef RKNN_DIAG_RKNN_MODEL_H
#define RKNN_DIAG_RKNN_MODEL_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * What a file is, by its first bytes
 */

typedef enum rd_rknn_file_kind {
    RD_RKNN_FILE_UNKNOWN = 0,
    RD_RKNN_FILE_RKNN,          /* "RKNN" container (toolkit2; toolkit1 too): read */
    RD_RKNN_FILE_ENCRYPTED,     /* "CYPTRKNN": encrypted, refused */
    RD_RKNN_FILE_RKNX,          /* "RKNX": rknn3 / LLM container, refused */
    RD_RKNN_FILE_OPENVX,        /* "VPMN": OpenVX NBG (toolkit1 pre-compiled), refused */
    RD_RKNN_FILE_BARE_FB,       /* FlatBuffer with identifier "RKNN" and no header (.mini.rknn), refused */
    RD_RKNN_FILE_TOOLKIT1_JSON, /* a toolkit1 JSON model description alone, refused */
} rd_rknn_file_kind;

/** Tells a file's kind from its first bytes (len may be short; 16 bytes are enough). */
rd_rknn_file_kind rd_rknn_detect(const void *buf, size_t len);

/** "RKNN model", "encrypted RKNN model (CYPTRKNN)", ...; never NULL. */
const char *rd_rknn_file_kind_name(rd_rknn_file_kind kind);

/* ---------------------------------------------------------------------------------------------------
 * Limits (what one file may make the reader do). NULL options give the defaults; fuzzers lower them.
 */

typedef struct rd_rknn_limits {
    uint64_t max_file_bytes;  /* default RD_MAX_MODEL_BYTES */
    size_t max_graphs;        /* default 64 */
    size_t max_tensors;       /* per graph, default 1 << 20 */
    size_t max_nodes;         /* per graph, default 1 << 20 */
    size_t max_node_io;       /* inputs or outputs of one node, default 4096 */
    size_t max_vector;        /* shape rank bound is RD_RKNN_MAX_RANK; quant vectors, default 1 << 20 */
    size_t max_text_bytes;    /* JSON, dict string, one attribute blob; default 64 MiB */
    unsigned max_depth;       /* nesting of dict values, attribute maps and FlatBuffer tables; 64 */
    size_t max_decoded_bytes; /* everything the model allocates besides the file; default 256 MiB */
} rd_rknn_limits;

/** Fills lim with the defaults. */
void rd_rknn_limits_default(rd_rknn_limits *lim);

#define RD_RKNN_MAX_RANK 16

/* ---------------------------------------------------------------------------------------------------
 * Values: the decoded attribute blobs, parameter tables and the Python dict string share one tree.
 */

typedef enum rd_rknn_vkind {
    RD_RKNN_V_NONE = 0, /* Python None, or absent */
    RD_RKNN_V_BOOL,
    RD_RKNN_V_INT,
    RD_RKNN_V_FLOAT,
    RD_RKNN_V_STRING,
    RD_RKNN_V_BYTES, /* raw bytes (an attribute blob that is not a record list) */
    RD_RKNN_V_LIST,  /* list (also an attribute list record) */
    RD_RKNN_V_TUPLE, /* Python tuple */
    RD_RKNN_V_MAP,   /* dict / attribute map: keys[i] names items[i], in file order */
} rd_rknn_vkind;

typedef struct rd_rknn_value rd_rknn_value;
struct rd_rknn_value {
    rd_rknn_vkind kind;
    bool b;        /* BOOL */
    int64_t i;     /* INT */
    double f;      /* FLOAT (also set, as a double, for INT and BOOL) */
    const char *s; /* STRING (NUL-terminated), BYTES (not terminated) */
    size_t len;    /* bytes of s */
    size_t n;      /* LIST, TUPLE, MAP: items */
    const rd_rknn_value *items;
    const char *const *keys; /* MAP: keys (a non-string Python key is kept as its literal text) */
};

/** Item of a MAP by key, NULL when v is not a map or has no such key. */
const rd_rknn_value *rd_rknn_value_get(const rd_rknn_value *v, const char *key);

/** True for INT, FLOAT and BOOL. */
bool rd_rknn_value_is_number(const rd_rknn_value *v);

/**
 * Parses text (len bytes) as a Python literal (what repr() prints for dicts, lists, tuples, strings,
 * numbers, True/False/None, inf/nan; np.float32(x)-style wrappers around one number are unwrapped).
 * *out is allocated (free with rd_rknn_value_free). max_depth bounds nesting; RD_E_PARSE names the byte
 * and what was expected, RD_E_LIMIT when nesting or size passes a bound.
 */
rd_status rd_rknn_pylit_parse(const char *text, size_t len, const char *what, unsigned max_depth, rd_rknn_value **out,
                              rd_error *err);
void rd_rknn_value_free(rd_rknn_value *v);

/* ---------------------------------------------------------------------------------------------------
 * The model
 */

typedef struct rd_rknn_model rd_rknn_model;

/** Tensor slot 2 of the FlatBuffer ("kind" in the format notes). Unknown codes keep their number. */
typedef enum rd_rknn_role {
    RD_RKNN_ROLE_NONE = 0,
    RD_RKNN_ROLE_INPUT = 1,
    RD_RKNN_ROLE_OUTPUT = 2,
    RD_RKNN_ROLE_INTERNAL = 3,       /* activation in the internal buffer */
    RD_RKNN_ROLE_CONST = 4,          /* weight or bias */
    RD_RKNN_ROLE_CONST_OTHER = 5,    /* other constant (Netron treats it as an initializer) */
    RD_RKNN_ROLE_COMPILER_CONST = 8, /* constant the compiler made (helper weights, ...) */
    RD_RKNN_ROLE_REGCMD = 9,         /* the register command blob */
    RD_RKNN_ROLE_TASK = 10,          /* the task descriptor blob */
} rd_rknn_role;

/** Tensor slot 1: layout code. */
enum {
    RD_RKNN_LAYOUT_PLAIN = 0,
    RD_RKNN_LAYOUT_NHWC = 1,
    RD_RKNN_LAYOUT_NCHW = 2,
    RD_RKNN_LAYOUT_NC1HWC2 = 64,     /* native activation layout */
    RD_RKNN_LAYOUT_CONV_WEIGHT = 65, /* packed conv weight [Ot, It, kh, kw, o, i] */
};

/** Where a node runs (node slot 3: 2 = NPU, absent = CPU). */
typedef enum rd_rknn_target {
    RD_RKNN_TARGET_CPU = 0,
    RD_RKNN_TARGET_NPU,
    RD_RKNN_TARGET_OTHER, /* a code this reader has not seen (see rd_rknn_node.target_code) */
} rd_rknn_target;

typedef struct rd_rknn_tensor {
    int index;        /* in its graph (0 is an empty placeholder in real files) */
    const char *name; /* ONNX tensor name or a compiler-made one; "" when absent */
    int dtype;        /* ONNX TensorProto number: 1 float32, 3 int8, 10 float16, ... (rd_dtype) */
    int layout;       /* RD_RKNN_LAYOUT_* or another code */
    int role;         /* rd_rknn_role or another code */
    size_t rank;      /* logical shape (NCHW) */
    const int64_t *shape;
    size_t native_rank; /* shape in the NPU's layout, e.g. [1, C1, H, W, C2] */
    const int64_t *native_shape;
    const char *qmethod;                        /* "layer", "channel", "" for float and constants */
    const char *qtype;                          /* "int8", "" ... */
    size_t n_min, n_max, n_scale, n_zero_point; /* 1 per tensor, C per channel, 0 when not quantized */
    const float *min, *max, *scale;
    const int32_t *zero_point;
    uint64_t size;       /* allocated bytes (native layout) */
    uint64_t mem_offset; /* offset in the internal activation buffer */
    int blob;            /* index into the weight blobs (rd_rknn_blob), -1 when none */
    int producer;        /* node writing it, -1 for none (inputs, constants) */
    size_t n_consumers;  /* nodes reading it */
} rd_rknn_tensor;

/** One field of a node's parameter table (the union in node slots 7/8). */
typedef struct rd_rknn_param {
    unsigned slot;    /* FlatBuffer slot in the parameter table */
    const char *name; /* "kernel_shape", ... for known (type, slot) pairs; NULL when unknown */
    bool guessed;     /* unknown slot: its type was guessed from its width and content */
    rd_rknn_value value;
} rd_rknn_param;

typedef struct rd_rknn_node {
    int index;           /* execution order */
    const char *op_type; /* runtime OpType: "ConvExSwish", "InputOperator", ... */
    const char *name;    /* FullName as the layer table prints it, e.g. "Conv:Conv_0" ("" if absent) */
    rd_rknn_target target;
    bool has_target_code;
    uint8_t target_code; /* node slot 3 as stored */
    size_t n_inputs, n_outputs;
    const int32_t *inputs; /* tensor indices into the graph (Conv: data, weight, bias[, residual]) */
    const int32_t *outputs;
    uint8_t param_type;          /* union type: 1 Conv, 2 ConvTranspose, 3 MaxPool, 19 Concat, 20 Split,
                                    26 Resize, 51 ArgMax; 0 none */
    const char *param_type_name; /* name for a known type, NULL otherwise */
    size_t n_params;
    const rd_rknn_param *params;
    const rd_rknn_value *attrs; /* decoded attribute blob: a MAP, or BYTES when the blob is not a record
                                   list (OutputOperator's 16 bytes); NULL when absent or empty */
    bool attrs_partial;         /* an unknown record tag stopped decoding (see rd_rknn_warning) */
    size_t n_task_counts;
    const int32_t *task_counts; /* NPU tasks per core configuration (node slot 10) */
} rd_rknn_node;

/** Per-op-type counts of a graph (rd_rknn_graph.ops), most frequent first, then by name. */
typedef struct rd_rknn_op_count {
    const char *op_type;
    size_t total;
    size_t on_cpu; /* target CPU */
    size_t on_npu;
    size_t float16; /* rd_rknn_node_dtype is float16 */
    size_t int8;    /* ... int8 or uint8 */
} rd_rknn_op_count;

typedef struct rd_rknn_graph {
    size_t n_tensors;
    const rd_rknn_tensor *tensors;
    size_t n_nodes;
    const rd_rknn_node *nodes;
    size_t n_inputs, n_outputs;
    const int32_t *inputs; /* tensor indices of the graph inputs */
    const int32_t *outputs;
    size_t n_ops;
    const rd_rknn_op_count *ops;
    const int32_t *by_name; /* tensor indices sorted by name (rd_rknn_find_tensor) */
} rd_rknn_graph;

/** An `attrs` entry of the dict string: one graph input or output as the toolkit was configured. */
typedef struct rd_rknn_io_attr {
    const char *name;
    bool is_output;
    int idx;                    /* position among the inputs or outputs; -1 when absent */
    const rd_rknn_value *shape; /* LIST of INT, or of STRING for symbolic dims; NULL when absent */
    const char *layout;         /* "nchw", ...; "" when absent */
    const char *dtype;          /* "float32", ... */
    size_t n_mean, n_std;
    const double *mean, *std;     /* per channel (normalised = (x - mean) / std) */
    const rd_rknn_value *reorder; /* 'reorder' / 'reorder_channel' / 'rgb2bgr' as stored; NULL if none */
    const rd_rknn_value *raw;     /* the whole entry */
} rd_rknn_io_attr;

/** A `quant_tab` entry of the dict string (only the graph inputs and outputs in the files seen). */
typedef struct rd_rknn_quant_entry {
    const char *name;
    const char *dtype, *qmethod, *qtype;
    size_t n_min, n_max, n_scale, n_zero_point;
    const double *min, *max, *scale;
    const int64_t *zero_point;
    const rd_rknn_value *raw;
} rd_rknn_quant_entry;

/** The runtime-facing dtype and layout of an input or output (Model slots 12/13). */
typedef struct rd_rknn_runtime_io {
    const char *name;
    bool is_output;
    const char *dtype;  /* "int8", "float16", "int64", ... */
    const char *layout; /* "NHWC", "NCHW", ... */
} rd_rknn_runtime_io;

/** An input or output of the trailing JSON envelope (`norm_tensor` reached through `graph`). */
typedef struct rd_rknn_json_io {
    const char *name; /* url: the ONNX tensor name */
    bool is_output;
    int index; /* left_tensor_id */
    size_t rank;
    const int64_t *shape;
    const char *qnt_method, *qnt_type, *vx_type;
} rd_rknn_json_io;

typedef struct rd_rknn_info {
    const char *path; /* as given to rd_rknn_load, or the name given to rd_rknn_parse */
    uint64_t file_bytes;
    /* header */
    uint64_t format_version; /* u64 at byte 8: 6 (toolkit2 1.6 - 2.3), 2 (1.3.0), ... */
    uint64_t header_bytes;   /* 64, or 24 for version <= 1 */
    uint64_t model_bytes;    /* FlatBuffer section (D) */
    uint64_t json_offset;    /* of the u64 JSON length */
    uint64_t json_bytes;
    /* FlatBuffer root (Model) */
    int32_t schema_version;               /* slot 0: 6 in format-6 files, 1 in the 1.3.0 file */
    const char *format;                   /* slot 1: "RKNPU lite", "RKNPU v2", ... */
    const char *target_platform;          /* slot 8: "rk3566", ... */
    const char *source_framework;         /* slot 9: "ONNX" */
    const char *compiler;                 /* slot 7 as stored: "1.6.2-source_code(compiler version: 1.6.2b0 (...))" */
    const char *compiler_version;         /* from it: "1.6.2b0" ("" when not found) */
    int32_t compiler_version_number;      /* slot 6: 10602 = major * 10000 + minor * 100 + patch [guess] */
    const char *toolkit_version;          /* JSON "version", else the part of slot 7 before '(': "1.6.2-source_code" */
    const char *shape_mode;               /* slot 16: "static_shape" */
    const char *generator;                /* slot 3 when it is not the dict string (1.3.0: "Generated from ...") */
    const char *input_json, *output_json; /* slots 12/13 as stored */
    /* trailing JSON */
    bool has_json;
    const char *json_name, *network_platform, *ori_network_platform;
    size_t n_json_targets;
    const char *const *json_targets; /* target_platform list */
    size_t n_json_io;
    const rd_rknn_json_io *json_io;
    /* slots 12 / 13 */
    size_t n_runtime_io;
    const rd_rknn_runtime_io *runtime_io;
    /* the dict string (slot 3) */
    bool has_dict;
    const rd_rknn_value *dict; /* the whole dict; NULL when slot 3 is not one */
    size_t n_io_attrs;
    const rd_rknn_io_attr *io_attrs;
    size_t n_quant_tab;
    const rd_rknn_quant_entry *quant_tab;
    const rd_rknn_value *dynamic_shapes; /* NULL when absent */
} rd_rknn_info;

/**
 * Loads a `.rknn` file (read whole with rd_file_read_all: a FIFO, a device or a file above
 * lim->max_file_bytes is refused).
 * lim may be NULL. Statuses: RD_E_UNSUPPORTED for an encrypted model and for the containers this reader
 * does not read (RKNX, OpenVX, bare FlatBuffer, toolkit1 JSON), each named; RD_E_PARSE for a truncated or
 * corrupt file (naming the byte offset and what was expected); RD_E_LIMIT; RD_E_IO; RD_E_NOTFOUND;
 * RD_E_NOMEM. All map to exit code 3.
 */
rd_status rd_rknn_load(const char *path, const rd_rknn_limits *lim, rd_rknn_model **out, rd_error *err);

/** As rd_rknn_load on len bytes in memory (copied); name is used in messages. */
rd_status rd_rknn_parse(const void *buf, size_t len, const char *name, const rd_rknn_limits *lim, rd_rknn_model **out,
                        rd_error *err);

void rd_rknn_destroy(rd_rknn_model *m);

const rd_rknn_info *rd_rknn_info_get(const rd_rknn_model *m);
size_t rd_rknn_graph_count(const rd_rknn_model *m);                      /* 1 in every file seen */
const rd_rknn_graph *rd_rknn_graph_at(const rd_rknn_model *m, size_t i); /* NULL when i is out of range */

/** Things read but doubtful (a trailing byte, an unknown attribute tag, ...); index < count. */
size_t rd_rknn_warning_count(const rd_rknn_model *m);
const char *rd_rknn_warning(const rd_rknn_model *m, size_t i);

/** Tensor of g by name (binary search over g->by_name; the lowest index of equal names). NULL when absent. */
const rd_rknn_tensor *rd_rknn_find_tensor(const rd_rknn_graph *g, const char *name);

/** Name of a tensor index of g ("" for an index out of range). */
const char *rd_rknn_tensor_name(const rd_rknn_graph *g, int32_t index);

/**
 * The precision a node computes in, as the layer tables' DataType column shows it [guess that fits every
 * table seen]: the dtype of its first input, or of its first output when it has no input.
 * RD_DT_UNDEFINED when it has neither.
 */
int rd_rknn_node_dtype(const rd_rknn_graph *g, const rd_rknn_node *n);

/** Named codes: "NC1HWC2", "input", "NPU", ...; unknown codes give "layout(7)"-style text in buf. */
const char *rd_rknn_layout_name(int layout, char *buf, size_t len);
const char *rd_rknn_role_name(int role, char *buf, size_t len);
const char *rd_rknn_target_name(rd_rknn_target target);
/** ONNX dtype name ("float16") or "dtype(N)" in buf. */
const char *rd_rknn_dtype_name(int dtype, char *buf, size_t len);

/* ---------------------------------------------------------------------------------------------------
 * Weights
 */

/** Number of weight blobs (Model slot 20; slot 4 in format <= 5). Blob 0 is empty in real files. */
size_t rd_rknn_blob_count(const rd_rknn_model *m);

/** Blob i: *out points into the model's copy of the file (len bytes). RD_E_INVAL for i out of range. */
rd_status rd_rknn_blob(const rd_rknn_model *m, size_t i, const uint8_t **out, size_t *out_len, rd_error *err);

/** The blob of a constant tensor: RD_E_NOTFOUND naming the tensor when it has none. */
rd_status rd_rknn_tensor_data(const rd_rknn_model *m, const rd_rknn_tensor *t, const uint8_t **out, size_t *out_len,
                              rd_error *err);

/**
 * Unpacks a packed conv weight (layout 65, native shape [Ot, It, kh, kw, o, i], logical [O, I, kh, kw])
 * into OIHW order: out receives O*I*kh*kw elements of the tensor's dtype size (int8 codes, or float16
 * bits); the padding lanes (o >= O, i >= I) are dropped. out_pad_code (may be NULL; O entries) receives,
 * for int8 weights whose I is padded, the value stored in the first padding lane of each output channel
 * (the channel's weight zero point in every file seen), or INT32_MIN when there is no padding lane.
 * RD_E_UNSUPPORTED for another layout, RD_E_PARSE when shapes and blob size disagree, RD_E_INVAL when
 * out_len (bytes) is too small.
 */
rd_status rd_rknn_unpack_conv_weight(const rd_rknn_model *m, const rd_rknn_tensor *t, void *out, size_t out_len,
                                     int32_t *out_pad_code, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Build logs: the verbose output of RKNN-Toolkit2's build and the board's per-layer tables
 */

/** One `fuse_ops` (or post-quantization `fuse_ops with passes`) rewrite. */
typedef struct rd_rknn_fuse {
    int line;         /* 1-based line of the log where it starts */
    const char *rule; /* "replace_exswish", ... */
    bool with_passes; /* printed under "fuse_ops with passes results:" */
    size_t n_removed, n_added;
    const char *const *removed; /* node names */
    const char *const *added;
} rd_rknn_fuse;

/** One `quant_optimizer results:` line: a rule and the names it lists. */
typedef struct rd_rknn_quant_opt {
    int line;
    const char *rule; /* "adjust_relu" */
    size_t n_names;
    const char *const *names;
} rd_rknn_quant_opt;

/** A `Meet hybrid type, dtype: float16, tensor: X` line. */
typedef struct rd_rknn_hybrid {
    int line;
    const char *dtype;
    const char *tensor;
} rd_rknn_hybrid;

/** A shape cell "(1,3,224,224),(32,3,3,3),(32)": up to 8 shapes are kept; "..." sets truncated. */
typedef struct rd_rknn_shape_list {
    const char *text; /* as printed ("\" for none) */
    size_t n;
    size_t rank[8];
    int64_t dims[8][RD_RKNN_MAX_RANK];
    bool truncated; /* the cell ended with ",..." */
} rd_rknn_shape_list;

typedef enum rd_rknn_table_kind {
    RD_RKNN_TABLE_UNKNOWN = 0, /* rows without a header that says which */
    RD_RKNN_TABLE_BUILD,       /* librknnc's build-time table (IDs from 0) */
    RD_RKNN_TABLE_RUNTIME,     /* the board's eval_perf / perf_debug table (IDs from 1) */
} rd_rknn_table_kind;

typedef struct rd_rknn_layer_row {
    int line;
    size_t table; /* index into rd_rknn_build_log.tables */
    long id;
    const char *op_type, *data_type, *target; /* as printed: "ConvClip", "INT8", "NPU" */
    rd_rknn_shape_list input_shape, output_shape;
    bool has_time;
    double time_us;        /* Time(us), when the table has that column */
    const char *full_name; /* "Conv:MobilenetV1/.../Relu6"; "" when the row has none */
} rd_rknn_layer_row;

typedef struct rd_rknn_layer_table {
    int header_line; /* 0 when the rows came without a header */
    rd_rknn_table_kind kind;
    size_t first_row, n_rows;    /* rows[first_row .. first_row + n_rows) */
    bool elided;                 /* a "..." line inside the table: rows are missing */
    size_t n_ops;                /* per-op-type counts of its rows (on_cpu: Target CPU; float16: DataType */
    const rd_rknn_op_count *ops; /* FLOAT16; int8: INT8 or UINT8), most frequent first */
} rd_rknn_layer_table;

/** A row of the "Operator Time Consuming Ranking Table". */
typedef struct rd_rknn_rank_row {
    int line;
    const char *op_type;
    long calls;
    double cpu_us, gpu_us, npu_us, total_us, ratio_pct; /* -1 when the column is absent */
} rd_rknn_rank_row;

/** A `key = value` of librknnc's option line. */
typedef struct rd_rknn_option {
    const char *key, *value;
} rd_rknn_option;

typedef struct rd_rknn_build_log {
    const char *what;             /* the name given to the parser */
    const char *toolkit_version;  /* "rknn-toolkit2 version: X" ("" when not printed) */
    const char *librknnc_version; /* "librknnc version: X (...)": the X */
    const char *runtime_version;  /* "librknnrt version: X" or "rknnrt: X" */
    const char *target_platform;  /* 'target_platform': 'rk3588' where printed */
    int option_line;              /* 0 when absent */
    const char *option_text;      /* librknnc's option line as printed */
    size_t n_options;
    const rd_rknn_option *options;
    size_t n_fold_constant;
    const char *const *fold_constant; /* `fold_constant remove nodes = [...]`, all such lines joined */
    size_t n_fuses;
    const rd_rknn_fuse *fuses; /* in log order, both kinds */
    size_t n_quant_opts;
    const rd_rknn_quant_opt *quant_opts;
    size_t n_hybrid;
    const rd_rknn_hybrid *hybrid;
    size_t n_tables;
    const rd_rknn_layer_table *tables;
    size_t n_rows;
    const rd_rknn_layer_row *rows;
    size_t n_rank_rows;
    const rd_rknn_rank_row *rank_rows;
} rd_rknn_build_log;

typedef struct rd_rknn_log rd_rknn_log;

/** Largest log read and longest logical line (a wrapped line joined). */
#define RD_RKNN_LOG_MAX_BYTES ((size_t)256 << 20)
#define RD_RKNN_LOG_MAX_LINE ((size_t)4 << 20)

/**
 * Reads a build log or a board log from text (len bytes; ANSI colour codes, `I `/`W `/`D ` prefixes,
 * `RKNN: [hh:mm:ss.mmm]` stamps and wrapped `fuse_ops` lines are handled). RD_E_PARSE when the text is
 * binary (a NUL byte) or when nothing at all could be read (naming what was looked for); RD_E_LIMIT.
 */
rd_status rd_rknn_log_parse(const char *text, size_t len, const char *what, rd_rknn_log **out, rd_error *err);

/** rd_rknn_log_parse on a file (a FIFO or a file above RD_RKNN_LOG_MAX_BYTES is refused). */
rd_status rd_rknn_log_load(const char *path, rd_rknn_log **out, rd_error *err);

void rd_rknn_log_destroy(rd_rknn_log *log);

const rd_rknn_build_log *rd_rknn_log_get(const rd_rknn_log *log);

/**
 * Copies a log line (n bytes) to out without '\r' and ANSI escape sequences (CSI "ESC [ ... final byte",
 * or ESC and one byte), NUL-terminated; out needs n + 1 bytes. Returns the new length.
 */
size_t rd_rknn_log_strip_escapes(const char *line, size_t n, char *out);

#ifdef __cplusplus
}
#endif

#endif
