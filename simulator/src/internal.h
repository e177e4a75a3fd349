/*
 * internal.h: types shared by the simulator's own .c files (never included from outside simulator/).
 *
 * The model is held in plain arrays: values (every tensor name of the graph) and nodes (in
 * topological order once loading finishes). Operators see nodes only through sim_op_ctx and the
 * attribute helpers below, never through protobuf structs.
 */
#ifndef RD_SIM_INTERNAL_H
#define RD_SIM_INTERNAL_H

#include "kernels/parallel.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------
 * Checked arithmetic and allocation.
 */

/** a*b into *out; false on overflow. */
static inline bool sim_mul_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/** a*b for operation counts (MACs) from a model's attributes: saturates at INT64_MAX instead of overflowing
    (a hostile pooling kernel of 3e18, found by fuzz_tflite), so a count is too large, never undefined. */
static inline int64_t sim_count_mul(int64_t a, int64_t b)
{
    int64_t r;
    return a < 0 || b < 0 ? 0 : __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/** malloc(n*size) with overflow check; NULL on failure or overflow (zero size gives a 1-byte block). */
void *sim_malloc_array(size_t n, size_t size);
/** calloc with the same rules. */
void *sim_calloc_array(size_t n, size_t size);
/**
 * Makes room for element n of the array *arr_ptr (a pointer to the array's pointer) of n elements of elem
 * bytes that only this function grows: the capacity is implied, the smallest power of two >= n, and doubles
 * when n reaches it (O(N) copying for N appends). False, the array untouched, when out of memory.
 */
bool sim_grow_for(void *arr_ptr, size_t n, size_t elem);
/** strdup that returns NULL on NULL. */
char *sim_strdup(const char *s);

/* ---------------------------------------------------------------------------------------------------
 * Attributes, as loaded from ONNX (AttributeProto), independent of protobuf.
 */

typedef enum sim_attr_type {
    SIM_ATTR_UNDEFINED = 0,
    SIM_ATTR_FLOAT = 1,
    SIM_ATTR_INT = 2,
    SIM_ATTR_STRING = 3,
    SIM_ATTR_TENSOR = 4,
    SIM_ATTR_GRAPH = 5,
    SIM_ATTR_FLOATS = 6,
    SIM_ATTR_INTS = 7,
    SIM_ATTR_STRINGS = 8,
    SIM_ATTR_TENSORS = 9,
    SIM_ATTR_GRAPHS = 10,
    SIM_ATTR_SPARSE_TENSOR = 11,
    SIM_ATTR_TYPE_PROTOS = 13,
} sim_attr_type;

typedef struct sim_attr {
    char *name;
    sim_attr_type type;
    int64_t i;
    float f;
    char *s; /* NUL-terminated copy of the bytes (s_len excludes the NUL) */
    size_t s_len;
    int64_t *ints;
    size_t n_ints;
    float *floats;
    size_t n_floats;
    char **strings;
    size_t n_strings;
    rd_tensor t; /* SIM_ATTR_TENSOR: owned */
} sim_attr;

/* ---------------------------------------------------------------------------------------------------
 * Values and nodes.
 */

typedef struct sim_value {
    char *name;
    rd_dtype dtype;                /* RD_DT_UNDEFINED until inferred */
    int rank;                      /* -1 unknown */
    int64_t dims[RD_MAX_RANK];     /* -1 for an unknown dim */
    char *dim_params[RD_MAX_RANK]; /* symbolic names (graph inputs/outputs), owned, may be NULL */
    rd_tensor *konst;              /* constant data (initializer, Constant node, folded), owned; or NULL */
    bool is_initializer;
    bool is_graph_input; /* a real input (not an initializer) */
    bool is_graph_output;
    int producer; /* node index, -1 none */
    int last_use; /* index of the last node that reads it, -1 none (set by graph pass) */
    /* set by the compiler passes (passes.c) on a simulation's copy of the model: */
    int fused_into;   /* value this one was fused into (no longer produced), -1 none */
    bool virtual_out; /* produced but not materialised: a fused activation's input */
} sim_value;

struct sim_op_def;

typedef struct sim_node {
    char *name; /* never NULL ("" if the model gave none) */
    char *op_type;
    char *domain; /* "" for the default domain ("ai.onnx" is normalised to "") */
    int opset;    /* opset version imported for the node's domain */
    int n_in, n_out;
    int *in;  /* value indices; -1 for an omitted optional input */
    int *out; /* value indices; -1 for an omitted optional output */
    int n_attr;
    sim_attr *attrs;
    const struct sim_op_def *def; /* NULL when unsupported */
    void *params;                 /* def->params_size bytes filled by def->parse, owned */
    bool folded;                  /* all outputs computed at load time */
    int64_t macs;
    /* set by RKNN's passes (passes_rknn.c) or rd_sim_set_group on a simulation's copy of the model
       (NULL: the node's own op_type): */
    char *npu_op; /* NPU op type of the fused group the node belongs to ("ConvExSwish"), owned */
    char *row_op; /* op type of its output's row in RKNN's accuracy table ("exSwish"), owned */
    bool lowered; /* computed in the NPU form its op lowers to (GlobalAveragePool as a Conv) */
} sim_node;

typedef struct sim_opset {
    char *domain;
    int version;
} sim_opset;

/* The value-name hash table of a model (name_index.c); zeroed means empty (created on first add). */
typedef struct sim_name_index {
    uint64_t *slots; /* 0 empty, else (32-bit hash << 32) | (value index + 1) */
    size_t mask;     /* capacity - 1 (a power of two, at least twice the entries) */
    uint64_t key[2]; /* SipHash key, random per table */
} sim_name_index;

/** Index of the value named name, -1 if absent (values: the model's value array). */
int sim_name_index_find(const sim_name_index *ix, const sim_value *values, const char *name);
/** Adds values[value] (whose name must be absent); false on allocation failure. */
bool sim_name_index_add(sim_name_index *ix, const sim_value *values, int value);
void sim_name_index_fini(sim_name_index *ix);

struct rd_model {
    char *path;     /* for messages */
    char *base_dir; /* for external data */
    int ir_version;
    char *producer;
    int n_opsets;
    sim_opset *opsets;
    int n_values, cap_values; /* n_values <= RD_MAX_VALUES */
    sim_value *values;
    sim_name_index names;         /* every value by name: only sim_model_intern adds to it */
    size_t max_nodes, max_values; /* load limits (0: RD_MAX_NODES, RD_MAX_VALUES) */
    int n_nodes;
    sim_node *nodes; /* topological order after sim_graph_prepare */
    int n_inputs;
    int *inputs; /* real graph inputs (value indices) */
    int n_outputs;
    int *outputs;
};

/** Index of a value by name, -1 if absent (a hash lookup). */
int sim_model_find(const rd_model *m, const char *name);
/** Index of a value by name, created (unknown shape) if absent; -1 on allocation failure, -2 when the
    model already holds its limit of values (m->max_values, else RD_MAX_VALUES). */
int sim_model_intern(rd_model *m, const char *name);
/** sim_model_intern with the failure as a message naming the tensor (callers add the file); *out is the index. */
rd_status sim_model_intern_err(rd_model *m, const char *name, int *out, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Attribute lookup helpers for op parse functions.
 */

const sim_attr *sim_attr_find(const sim_node *n, const char *name);
int64_t sim_attr_int(const sim_node *n, const char *name, int64_t def);
float sim_attr_float(const sim_node *n, const char *name, float def);
/** The string value, or def. */
const char *sim_attr_str(const sim_node *n, const char *name, const char *def);
/** The ints of an INTS attribute; *count set to 0 and NULL returned when absent. */
const int64_t *sim_attr_ints(const sim_node *n, const char *name, size_t *count);
const float *sim_attr_floats(const sim_node *n, const char *name, size_t *count);

/* ---------------------------------------------------------------------------------------------------
 * Operators.
 *
 * parse: once at load, fills params from attributes and validates them.
 * infer: sets dtype, rank and dims of each present output from the inputs. Called at load time
 *        with in[k]->data == NULL for inputs not known before running (return sim_defer(ctx) if a
 *        value is needed), and again at run time with every input's data present.
 * eval:  computes outputs whose data the executor allocated after infer. No allocation except
 *        through sim_scratch.
 */

/* Float kernels by precision: eval[SIM_PREC_F32] always; eval[SIM_PREC_F16] where float16 computes
   differently from float32 on half values (otherwise the simulator runs the float32 kernel on them). */
enum { SIM_PREC_F32 = 0, SIM_PREC_F16 = 1, SIM_PREC_COUNT = 2 };

enum sim_op_flags {
    SIM_OP_SHAPE_ONLY = 1u << 0,      /* eval needs input shapes only (Shape, Size): foldable early */
    SIM_OP_NO_FOLD = 1u << 1,         /* never constant-fold (random ops and the like) */
    SIM_OP_LOWERED_KERNELS = 1u << 2, /* its fp16/int8/int16 kernels compute the NPU form RKNN's passes lower it
                                         to (npu_op): used only on nodes those passes lowered (sim_node.lowered) */
    SIM_OP_TILE_DONE = 1u << 3,       /* its float32 eval calls ctx->tile_done for each finished region of output 0
                                         (a fusion head: the executor computes the following nodes on the region) */
    SIM_OP_ELEMENTWISE = 1u << 4,     /* output element i is computed from element i of every input shaped like it,
                                         and from inputs of one element: any slice computes alone */
    SIM_OP_CHANNELWISE = 1u << 5,     /* elementwise along axis 1 with inputs 1.. holding one value per channel
                                         (BatchNormalization): any block of channels computes alone */
    SIM_OP_FULL_WRITE = 1u << 6,      /* its float32 eval writes every element of its outputs: they are not zeroed */
};

/* Roles in RKNN's fusions (passes_rknn.c, docs/numerics.md): the group's NPU op type is the head's npu_op
   followed by each member's, capitalised (Conv + Add + Relu = ConvAddRelu). */
enum sim_fuse_role {
    SIM_FUSE_CONV = 1u << 0,       /* a convolution on the NPU (Conv, Gemm, MatMul of a constant weight) */
    SIM_FUSE_DECONV = 1u << 1,     /* ConvTranspose */
    SIM_FUSE_ADD = 1u << 2,        /* the element-wise Add of ConvAdd / AddRelu */
    SIM_FUSE_CONV_ACT = 1u << 3,   /* an activation that fuses into a conv (ConvRelu, ConvClip, ConvSigmoid...) */
    SIM_FUSE_DECONV_ACT = 1u << 4, /* an activation that fuses into a ConvTranspose */
    SIM_FUSE_ADD_ACT = 1u << 5,    /* an activation that fuses with an Add (ConvAddRelu, ConvReluAdd, AddRelu) */
    SIM_FUSE_SWISH_GATE = 1u << 6, /* Sigmoid: with a Mul(x, sigmoid(x)) it is one exSwish (replace_exswish) */
    SIM_FUSE_SWISH_MUL = 1u << 7,  /* Mul: the product of an exSwish */
};
#define SIM_FUSE_HEADS (SIM_FUSE_CONV | SIM_FUSE_DECONV | SIM_FUSE_ADD)
#define SIM_FUSE_ACTS (SIM_FUSE_CONV_ACT | SIM_FUSE_DECONV_ACT | SIM_FUSE_ADD_ACT)

typedef struct sim_op_ctx {
    const sim_node *node;
    const void *params;
    int opset;
    int n_in;
    const rd_tensor *const *in; /* in[k] is NULL for an omitted optional input */
    int n_out;
    rd_tensor *out;          /* out[k].data allocated by the executor before eval */
    const bool *out_present; /* out_present[k] false for an omitted optional output */
    struct sim_scratch *scratch;
    rd_pool *pool;         /* threads for the kernels' tiles (kernels/parallel.h); NULL: this thread */
    sim_tile_fn tile_done; /* SIM_OP_TILE_DONE ops: called per finished region of output 0 (may be NULL) */
    void *tile_user;
    bool deferred; /* set by sim_defer: the step left the node to its fallback (starts false) */
} sim_op_ctx;

/**
 * Leaves the node to the caller's fallback and returns RD_OK, so that a status only ever carries success or a
 * failure: an infer whose output shapes depend on data not known yet (they stay unknown until run time), an
 * integer kernel or an eval hook that does not compute this node (the float32 kernel runs instead). Whoever
 * calls such a step reads ctx->deferred when it returns RD_OK.
 */
static inline rd_status sim_defer(sim_op_ctx *ctx)
{
    ctx->deferred = true;
    return RD_OK;
}

struct sim_q8_layer;
struct sim_q16_layer;

typedef rd_status (*sim_parse_fn)(const sim_node *n, void *params, rd_error *err);
typedef rd_status (*sim_infer_fn)(sim_op_ctx *ctx, rd_error *err);
typedef rd_status (*sim_eval_fn)(sim_op_ctx *ctx, rd_error *err);
/** MACs of one node given its inputs' and outputs' shapes (data may be NULL). */
typedef int64_t (*sim_macs_fn)(const sim_op_ctx *ctx);
/** Integer kernels (contracts in quant.h): the layer's quantization comes with the context. */
typedef rd_status (*sim_q8_eval_fn)(sim_op_ctx *ctx, const struct sim_q8_layer *q, rd_error *err);
typedef rd_status (*sim_q16_eval_fn)(sim_op_ctx *ctx, const struct sim_q16_layer *q, rd_error *err);
/**
 * A region of output 0 of an elementwise or channelwise node (a fused follower or a slice, exec_fuse.c):
 * batch b, channels [c0, c1) and positions [p0, p1) of the output viewed as [N, C, P] (view_c, view_p).
 */
typedef struct sim_region {
    int64_t b, c0, c1, p0, p1;
    int64_t view_c, view_p;
} sim_region;
/** Where channel c's run of a region starts in the whole tensor: element (b, c, p0) of the [N, C, P] view. */
static inline int64_t sim_region_offset(const sim_region *r, int64_t c)
{
    return (r->b * r->view_c + c) * r->view_p + r->p0;
}
/**
 * The float32 kernel on a region, from the node's whole inputs and output (input 0 shaped like the output,
 * the shapes checked by its infer): exactly the bits eval[SIM_PREC_F32] gives there, in one call where the
 * executor would otherwise eval a view per channel of the region. Returns false, having written nothing,
 * for inputs it does not compute by region (the executor then evals the views).
 */
typedef bool (*sim_region_fn)(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const sim_region *r);
/** The NPU op type of one node when it depends on the node (MatMul: Conv only for a constant weight). */
typedef const char *(*sim_npu_op_fn)(const sim_node *n, const rd_model *m);

/*
 * One operator: everything the simulator, the passes and the tools know about it (docs/internals/ops.md).
 * Listed once in ops/ops.def, sorted by name; registry.c checks nothing at run time, the registry test
 * checks the table (sorted, unique, traits consistent).
 */
typedef struct sim_op_def {
    const char *name;   /* ONNX op_type */
    const char *domain; /* "" default domain, "com.microsoft", ... */
    int since;          /* first opset version implemented */
    int until;          /* last opset version the op exists in (removed or deprecated after); 0: current */
    int min_in, max_in;
    int min_out, max_out;
    size_t params_size;
    sim_parse_fn parse; /* may be NULL when params_size == 0 */
    sim_infer_fn infer;
    sim_eval_fn eval[SIM_PREC_COUNT];
    sim_macs_fn macs; /* may be NULL */
    unsigned flags;
    sim_region_fn region_f32; /* an elementwise or channelwise op's float32 kernel on a region; may be NULL */
    /* quantization (sim_layers.c, calib.c, sim_weights.c) */
    sim_q8_eval_fn eval_i8;   /* integer kernel at int8; NULL: float kernel on dequantized values */
    sim_q16_eval_fn eval_i16; /* integer kernel at int16 (int16 or int8 inputs, exact accumulation) */
    int weight_in;            /* input holding the weight the integer kernels quantize; 0: none */
    rd_op_weight weight;      /* its output-channel rule */
    rd_op_qrule qrule;        /* int8 boundary rule of the outputs */
    /* lossless pruning (analyzer/modeltools/prune.c, through rd_op_find) */
    rd_op_prune prune;
    /* RKNN's compiler (passes_rknn.c) */
    const char *npu_op;      /* its NPU op type and accuracy-row op type (NULL: name) */
    sim_npu_op_fn npu_op_of; /* when that depends on the node (NULL: npu_op) */
    unsigned fuse;           /* enum sim_fuse_role */
    /* opset history, for raising a model to opset 13 (qdq_export.c) */
    int same_from;          /* first opset whose meaning is that of opset 13 (0: every version) */
    bool same_on_last_axis; /* before same_from, the same when its axis is the last one (Softmax) */
    int attrs_to_inputs_at; /* opset where attrs_to_inputs became inputs 1, 2, ... (0: none) */
    const char *attrs_to_inputs[3];
} sim_op_def;

/** Looks up an operator by bsearch in the sorted table; NULL if unknown. */
const sim_op_def *sim_op_find(const char *domain, const char *op_type);
/** Entry i of the table (sorted by name; rd_op_count entries) and its ops.def key (may be NULL); NULL past
    the end. For the registry test. */
const sim_op_def *sim_op_table_entry(size_t i, const char **key);

/** One growable buffer reused by every eval of a run (ops that need two areas ask for the sum). */
typedef struct sim_scratch {
    void *buf;
    size_t cap;
    rd_run_buffers *buffers; /* where the run's outputs come from and the scratch goes back to (may be NULL) */
} sim_scratch;
/** Frees the scratch, or with buffers set, hands it back to them and ends their run (run_buffers.c). */
void sim_scratch_fini(sim_scratch *s);

/* run_buffers.c: the blocks kept between runs (rd_run_buffers). b may be NULL: malloc and free. */
/** Starts a run on b: its kept scratch becomes scratch's, and scratch->buffers = b. */
void sim_buffers_begin_run(rd_run_buffers *b, sim_scratch *scratch);
/** Ends the run of sim_buffers_begin_run: keeps scratch's buffer, trims b to its bound. */
void sim_buffers_end_run(rd_run_buffers *b, sim_scratch *scratch);
/** A kept block of exactly `bytes` (zeroed when zero), else a new one; NULL when out of memory. */
void *sim_buffers_take(rd_run_buffers *b, size_t bytes, bool zero);
/** Gives back a block of at least `bytes` that came from malloc (kept, or freed). NULL is ignored. */
void sim_buffers_give(rd_run_buffers *b, void *block, size_t bytes);

/** Scratch memory valid during one eval (16-byte aligned); NULL (with err set) on failure. */
void *sim_scratch_get(sim_op_ctx *ctx, size_t bytes, rd_error *err);

/** rd_tensor_alloc, leaving the data uninitialised unless zero (outputs of SIM_OP_FULL_WRITE ops). */
rd_status sim_tensor_alloc(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, bool zero, rd_error *err);
/** sim_tensor_alloc taking the data from b (sim_buffers_take; NULL: malloc). */
rd_status sim_tensor_alloc_from(rd_run_buffers *b, rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, bool zero,
                                rd_error *err);

/** Sets out's dtype and shape (no data). */
void sim_set_shape(rd_tensor *out, rd_dtype dt, int rank, const int64_t *dims);

/** Standard error for an unsupported input dtype of an op. */
rd_status sim_err_dtype(const sim_op_ctx *ctx, int input, rd_error *err);

/** Numpy-style broadcast of two shapes into out (rank and dims); RD_E_INVAL if incompatible. */
rd_status sim_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db, int *out_rank, int64_t *out_dims);

/** Normalises a possibly negative axis against rank; RD_E_INVAL (with message) when out of range. */
rd_status sim_norm_axis(const sim_op_ctx *ctx, int64_t axis, int rank, int *out, rd_error *err);

/** Reads element i of an integer tensor (any int dtype) as int64. */
int64_t sim_get_int(const rd_tensor *t, int64_t i);
/** Reads element i of any numeric tensor as double. */
double sim_get_f64(const rd_tensor *t, int64_t i);
/** Writes v into element i of any numeric tensor, converting. */
void sim_set_f64(rd_tensor *t, int64_t i, double v);

/* ---------------------------------------------------------------------------------------------------
 * Graph preparation (graph.c): topological order, liveness, static shape inference and folding.
 */
rd_status sim_graph_prepare(rd_model *m, const rd_load_options *opt, rd_error *err);
/** Recomputes each value's last consumer (after passes changed the node list). */
void sim_graph_liveness(rd_model *m);
/** Recomputes each value's producer from the node list (after a pass removed nodes). */
void sim_graph_producers(rd_model *m);

/* ---------------------------------------------------------------------------------------------------
 * Executor (executor.c) with hooks for the simulators.
 */
/* What rounding some values to their precision counted; sums (and the smallest first overflow, the largest
   magnitude) do not depend on how the values were split into parts. */
typedef struct sim_round_counts {
    int64_t saturated, rounded_to_zero, overflow;
    int64_t first; /* index in the tensor of the first float16 overflow, -1 if none */
    double max_abs;
} sim_round_counts;

/** Adds part's counts to sum (the smallest first overflow, the largest magnitude). */
static inline void sim_round_counts_add(sim_round_counts *sum, const sim_round_counts *part)
{
    sum->saturated += part->saturated;
    sum->rounded_to_zero += part->rounded_to_zero;
    sum->overflow += part->overflow;
    if (part->first >= 0 && (sum->first < 0 || part->first < sum->first))
        sum->first = part->first;
    sum->max_abs = part->max_abs > sum->max_abs ? part->max_abs : sum->max_abs;
}

typedef struct sim_exec_hooks {
    void *user;
    /* Computes node `node` instead of its float32 eval; return sim_defer(ctx) to use the float32 eval. */
    rd_status (*eval)(void *user, int node, sim_op_ctx *ctx, rd_error *err);
    /* Transforms a graph input or a freshly produced tensor in place, before consumers and the observer
       see it (rounding to float16, requantization). Not called for constants. */
    rd_status (*materialize)(void *user, int value, rd_tensor *t, rd_error *err);
    /* Optional, all three or none: a large elementwise node computed in slices with its output rounded slice by
       slice while in cache, instead of by materialize in a pass of its own (sim_eval_f32_rounded).
       round_in_slices: whether eval computes node as its float32 eval on in (some of in[] replaced by the
       hooks' own tensors: float16 constants) and its output 0 may be rounded in parts. */
    bool (*round_in_slices)(void *user, int node, const rd_tensor **in);
    /* Rounds elements [at, at + n) of value's tensor x as materialize would, adding the counts to c. */
    void (*round_part)(void *user, int value, float *x, int64_t at, int64_t n, sim_round_counts *c);
    /* Every part of value's tensor t was rounded: records the summed counts as materialize would have. */
    void (*round_done)(void *user, int value, const rd_tensor *t, const sim_round_counts *c);
} sim_exec_hooks;

#define SIM_MAX_NODE_IO 256 /* inputs or outputs of one node (a Concat of many branches); checked at load */

/** The values of one run in progress: views of constants and inputs, owned activations. */
typedef struct sim_run_state {
    rd_model *m;
    const sim_exec_hooks *hooks; /* may be NULL */
    rd_tensor *vals;             /* per value */
    bool *owned;                 /* vals[v].data is ours to free */
    bool *ready;                 /* vals[v] holds a value */
    sim_scratch scratch;
    int fused_head, fused_last; /* nodes fused_head + 1 .. fused_last were computed with fused_head (-1: none) */
} sim_run_state;

rd_status sim_state_init(sim_run_state *s, rd_model *m, const sim_exec_hooks *hooks, rd_error *err);
/** Binds (and, with a materialize hook, converts copies of) the graph inputs, checking dtype and shape. */
rd_status sim_state_bind_inputs(sim_run_state *s, const rd_tensor *inputs, size_t n_inputs, rd_error *err);
/** Computes node idx from the state's values and stores its outputs in the state (kernels split over pool). */
rd_status sim_state_compute(sim_run_state *s, int idx, rd_pool *pool, rd_error *err);
/** The state's values of node idx's inputs into in[] (NULL for omitted ones); an error when one has none. */
rd_status sim_state_inputs(const sim_run_state *s, int idx, const rd_tensor **in, rd_error *err);
/** Stores node idx's computed outputs outs[] in the state (owned, ready). */
void sim_state_store(sim_run_state *s, int idx, rd_tensor *outs);
/**
 * The float32 reference's fusion (exec_fuse.c): computes node idx, a SIM_OP_TILE_DONE head, together with
 * the elementwise and channelwise nodes that follow it, each on the head's finished regions while they are
 * in cache; every tensor is still written whole (the observer sees them all). The followers are marked in
 * s (fused_head, fused_last). *computed false (nothing stored) when the head's output is not a float32
 * tensor with data: the caller computes the node the usual way.
 */
rd_status sim_fused_compute(sim_run_state *s, int idx, rd_pool *pool, bool *computed, rd_error *err);
/** Frees the activations whose last consumer is node idx, and idx's outputs that nobody reads. */
void sim_state_release(sim_run_state *s, int idx);
void sim_state_fini(sim_run_state *s);
/**
 * Moves the graph outputs 0..n_outputs-1 to outputs (copies of values the state does not own, and of a
 * tensor listed twice). On failure every outputs[o] is freed. outputs must start zeroed.
 */
rd_status sim_state_take_outputs(sim_run_state *s, rd_tensor *outputs, size_t n_outputs, rd_error *err);

/** A node being computed: its context and which outputs it has (sim_node_begin). */
typedef struct sim_node_call {
    sim_op_ctx ctx;
    bool present[SIM_MAX_NODE_IO];
} sim_node_call;

/** The context of node n (its params and opset) over in and out, present[k] saying whether output k is wanted;
    no pool and no tile callback. */
sim_op_ctx sim_node_ctx(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const bool *present,
                        sim_scratch *scratch);

/**
 * Sets up call for node idx over inputs in: checks the node, runs its infer and allocates its present outputs
 * into outs[0..n_out-1] (freed again on failure).
 */
rd_status sim_node_begin(rd_model *m, int idx, const rd_tensor *const *in, rd_tensor *outs, sim_scratch *scratch,
                         rd_pool *pool, sim_node_call *call, rd_error *err);

/** The node's float32 eval; an elementwise or channelwise op on a large tensor runs in slices over ctx->pool. */
rd_status sim_eval_f32(sim_op_ctx *ctx, rd_error *err);

/**
 * The node's float32 eval in slices at any pool width, each slice of output 0 (value) rounded by
 * hooks->round_part right after it is computed, the summed counts then given to hooks->round_done. *done
 * false (nothing computed) when the node does not go in slices (not elementwise, too small, no memory for
 * the workers): the caller computes it whole and materializes it.
 */
rd_status sim_eval_f32_rounded(sim_op_ctx *ctx, const sim_exec_hooks *hooks, int value, bool *done, rd_error *err);

/**
 * Computes node idx from explicit inputs (in[k] NULL for an omitted one) into outs[0..n_out-1]
 * (allocated here; outs[k] of an omitted output stays empty), through the hooks (may be NULL).
 */
rd_status sim_node_compute(rd_model *m, int idx, const sim_exec_hooks *hooks, const rd_tensor *const *in,
                           rd_tensor *outs, sim_scratch *scratch, rd_pool *pool, rd_error *err);

/**
 * The pool of a run: opt->pool, else fallback, else (opt->threads > 1) a new pool put in *owned for the
 * caller to destroy after the run. NULL (one thread) when none applies.
 */
rd_status sim_run_pool(const rd_run_options *opt, rd_pool *fallback, rd_pool **pool, rd_pool **owned, rd_error *err);

/** rd_model_run with hooks (NULL hooks: the plain float32 reference); fallback: the pool when opt names none. */
rd_status sim_execute(rd_model *m, const sim_exec_hooks *hooks, rd_pool *fallback, const rd_tensor *inputs,
                      size_t n_inputs, const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * Compiler passes (passes*.c, docs/internals/passes.md).
 */
/* Applies the passes of optimization level 0..3 (docs/numerics.md) to m in place. */
rd_status sim_passes_apply(rd_model *m, int level, rd_error *err);

/* The op table's int8 boundary rules applied after calibration (sim.c, docs/numerics.md): outputs of ops that
   pass their input's scale take input 0's parameters; a union op's output covers its inputs' ranges. */
rd_status sim_qrules_apply(rd_sim *s, rd_error *err);

/* Loader entry (onnx_load.c): fills an empty model from protobuf bytes. */
rd_status sim_onnx_parse(rd_model *m, const void *buf, size_t len, rd_error *err);

/* Frees everything a model owns (model.c). */
void sim_model_free_contents(rd_model *m);
void sim_attr_fini(sim_attr *a);
/* Frees what one node owns and zeroes it (the node struct itself is the caller's). */
void sim_node_fini(sim_node *n);

/* ---------------------------------------------------------------------------------------------------
 * Paths (file_io.c). Files are read and written through the public rd_file_* and rd_atomic_file_*.
 */

/** An input that may be an .npy (by its first bytes, not its name): an .npy is loaded as rd_npy_load_expect
 *  does (want may be NULL) into npy (*is_npy true); an image (sim_image_signature) is read whole (at most
 *  max_other bytes) into *other for its decoder, NUL-terminated; anything else is refused on its first
 *  bytes, before it is read (rd_image_parse's message). One open of the file (npy.c). */
/** True when the first len bytes of a file can start a PNG, JPEG or BMP image (what rd_image_parse decodes). */
bool sim_image_signature(const uint8_t *b, size_t len);

rd_status sim_input_file_load(const char *path, size_t max_other, const rd_npy_expect *want, bool *is_npy,
                              rd_tensor *npy, char **other, size_t *other_len, rd_error *err);

/** The folder of path ("." when it has none), malloc'ed; NULL on allocation failure. */
char *sim_path_dir(const char *path);

/** dir + "/" + rel, or a copy of rel when rel is absolute or dir is NULL/""; malloc'ed or NULL. */
char *sim_path_join(const char *dir, const char *rel);

/** A file read whole, with its folder (names inside the file are relative to it); what the loaders parse. */
typedef struct sim_file_bytes {
    char *buf;
    size_t len;
    char *dir;
} sim_file_bytes;

/** Reads path (at most max_bytes, fs_read.c's checks) and finds its folder; free with sim_file_bytes_free
 *  whatever it returns. */
rd_status sim_file_bytes_read(const char *path, uint64_t max_bytes, sim_file_bytes *f, rd_error *err);
void sim_file_bytes_free(sim_file_bytes *f);

/**
 * The end of every *_save: written is the status of the *_write call that made buf (len bytes, malloc'd). On
 * RD_OK, writes buf to path with rd_file_write_atomic and frees it; otherwise returns written, its message
 * starting with the path when name_path.
 */
rd_status sim_save_written(rd_status written, const char *path, void *buf, size_t len, bool name_path, rd_error *err);

/* ---------------------------------------------------------------------------------------------------
 * A small YAML tree (yaml_tree.c) built from libyaml's events, with the line and column of every node.
 * Aliases are refused (no exponential expansion) and depth and node counts are bounded.
 */

typedef enum sim_ynode_kind { SIM_Y_SCALAR, SIM_Y_SEQ, SIM_Y_MAP } sim_ynode_kind;

typedef struct sim_ynode {
    sim_ynode_kind kind;
    int line, col; /* 1-based position of the node's start */
    char *str;     /* SIM_Y_SCALAR: the text (NUL-terminated, may contain NULs: see len) */
    size_t len;
    bool plain; /* scalar written without quotes (so "1.0" quoted is a string) */
    size_t n;   /* SEQ: items; MAP: pairs (keys in items[2i], values in items[2i+1]) */
    struct sim_ynode **items;
    size_t n_items; /* entries of items[] (2n for a mapping) */
    bool flow;      /* sequence or mapping written in flow form ([..] or {..}) */
} sim_ynode;

#define SIM_YAML_MAX_DEPTH 32
#define SIM_YAML_MAX_NODES (1u << 24)

/** Parses one YAML document from buf; name is used in messages ("name:line:col: ..."). An empty
 *  document gives *out == NULL and RD_OK. The tree is freed with sim_ynode_free. */
rd_status sim_yaml_parse(const char *buf, size_t len, const char *name, sim_ynode **out, rd_error *err);
void sim_ynode_free(sim_ynode *n);
/** Human name of a node's kind for messages ("a mapping", "a list", "a scalar"). */
const char *sim_ynode_kind_name(const sim_ynode *n);
/** Scalar readers: false when the scalar does not have that type (YAML 1.1 / PyYAML rules for plain
 *  scalars: true/false/yes/no/on/off, decimal integers, floats with . or exponent, .inf, .nan). */
bool sim_yscalar_bool(const sim_ynode *n, bool *out);
bool sim_yscalar_int(const sim_ynode *n, int64_t *out);
bool sim_yscalar_double(const sim_ynode *n, double *out);
/** The scalar as a string: any scalar except YAML null (~, null, empty plain). */
bool sim_yscalar_str(const sim_ynode *n, const char **out);
/** True for a null scalar (empty plain, ~, null, Null, NULL). */
bool sim_ynode_is_null(const sim_ynode *n);
/** Sets err to "file:line: <message>" with the line of node at (0 when NULL) and returns code: the wording of
 *  the errors of readers of YAML files. */
rd_status sim_yaml_err(rd_error *err, rd_status code, const char *file, const sim_ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* RD_E_LIMIT naming the image and how to raise the bound when w x h pixels exceed max_pixels (image.c). */
rd_status sim_image_check_size(uint64_t w, uint64_t h, uint64_t max_pixels, const char *name, const char *fmt,
                               rd_error *err);

/* BMP decoding (image_bmp.c), called by rd_image_parse after the "BM" magic. */
rd_status sim_bmp_parse(const unsigned char *buf, size_t len, const char *name, uint64_t max_pixels, rd_tensor *out,
                        rd_error *err);

#endif /* RD_SIM_INTERNAL_H */
