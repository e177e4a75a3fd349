/* sim_internal.h: the simulator's state, shared by sim.c and sim_layers.c. */
#ifndef RD_SIM_SIM_INTERNAL_H
#define RD_SIM_SIM_INTERNAL_H

#include "internal.h"
#include "quant.h"

#include <math.h>

/* What the simulation knows about one value of its optimised graph. */
typedef struct sim_val_data {
    rd_prec prec;   /* precision when materialised */
    bool quantized; /* int8 parameters set */
    float scale;
    int32_t zero_point;
    float min, max;   /* the range the parameters came from */
    bool quantized16; /* int16 parameters set (from the same range, or imported) */
    float scale16;
    int32_t zero_point16;
    bool via_f16; /* output of a float16 op inside an int8 model (rd_op_qrule FLOAT16): computed in
                     float16, rounded to half, then held at prec (int8 for its readers: exDataConvert;
                     float16 for a graph output) */
} sim_val_data;

/* Per node data prepared on first use (weights quantized or rounded once, not at every run). */
typedef struct sim_node_data {
    bool q8_ready; /* w_q/w_scale hold this node's quantized weights */
    int8_t *w_q;
    float *w_scale;
    int32_t *w_zp; /* n_w_scale weight zero points (asymmetric weights), NULL when all 0 */
    int n_w_scale;
    float *imported_scale; /* weight scales from a .quantization.cfg (rd_sim_set_weight_scales), or NULL */
    int n_imported_scale;
    int32_t *imported_zp;   /* their zero points (rd_sim_set_weight_quant), NULL: symmetric */
    int8_t *imported_codes; /* the codes themselves (a built model's), in the weight's layout, or NULL */
    bool q16_ready;         /* w_q16/w_c/w_scale16 hold the wide layer's weights */
    int16_t *w_q16;         /* weight codes of an int16 layer (16 or 8 bits, sim_weight_bits) */
    double *w_c;            /* the same codes as doubles, for the exact double accumulation */
    float *w_scale16;
    int n_w_scale16;
    int imported_bits;      /* width the imported scales were written for (8 or 16) */
    bool half_ready;        /* half_consts prepared */
    bool any_half;          /* some input was replaced */
    rd_tensor *half_consts; /* float16-rounded copies of float constant inputs (data NULL: not constant) */
    int n_half;
} sim_node_data;

/* A fault injected into one materialised value (rd_sim_add_fault, sim_fault.c). */
typedef struct sim_fault {
    int value;
    rd_sim_fault_kind kind;
} sim_fault;

struct rd_sim {
    rd_model *m; /* owned copy, after the passes */
    rd_sim_options opt;
    sim_val_data *vals;        /* per value */
    rd_sim_layer_stats *stats; /* per value, from the last run */
    sim_node_data *nodes;      /* per node */
    sim_fault *faults;         /* emulated board faults, usually none */
    size_t n_faults;
    unsigned long epoch; /* bumped by changes a value's sim_val_data does not show (weights, faults):
                            voids every rd_sim_prefix recording */
    rd_pool *pool;       /* threads of runs that name none (rd_sim_set_pool), not owned */
};

void sim_node_data_fini(sim_node_data *d);

/** Holds t at value's precision (in place), counting into st: the materialize step of every run. */
rd_status sim_materialize(rd_sim *s, int value, rd_tensor *t, rd_sim_layer_stats *st, rd_error *err);
/** The materialize hook of a simulation run: sim_materialize into the run's per-layer stats. */
rd_status sim_entire_materialize(void *user, int value, rd_tensor *t, rd_error *err);
/** The eval hook: the node at its precision, sim_defer for the float32 operator. user is the rd_sim. */
rd_status sim_hook_eval(void *user, int node, sim_op_ctx *ctx, rd_error *err);
/** The hooks of a whole simulation run (rd_sim_run, the analysis' entire run): eval, materialize into the run's
    per-layer stats, and a large float16 elementwise node rounded slice by slice (counts into the same stats). */
sim_exec_hooks sim_entire_hooks(rd_sim *s);
rd_prec sim_node_precision(const rd_sim *s, int node);
/** Value index of a tensor name, or RD_E_NOTFOUND naming the closest names. */
rd_status sim_find_value(const rd_sim *s, const char *name, int *out, rd_error *err);
/** The value holding v's data: v itself, or the tensor its fused group (or a fold) materialises. */
int sim_value_holder(const rd_model *m, int v);

/* sim_fault.c: the precision value is held in with its faults (RD_FAULT_FP16 turns int8 into float16),
   and the faults applied to a materialised tensor. */
rd_prec sim_fault_precision(const rd_sim *s, int value, rd_prec p);
rd_status sim_fault_apply(const rd_sim *s, int value, rd_tensor *t, rd_error *err);

/* sim_layers.c: evals at a precision (ctx->deferred: run the float32 operator on the inputs as they are). */
rd_status sim_eval_fp16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err);
rd_status sim_eval_int8(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err);
rd_status sim_eval_int16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err);
/** Whether sim_eval_fp16 computes the node as its float32 eval on in[] with its float constants replaced by
    their half copies (put in in[]); false when the op has a float16 kernel or an input is converted. */
bool sim_fp16_layer_is_float(rd_sim *s, int node, const rd_tensor **in);
/** Weight width of the int16 layers: opt.weight_bits, 16 when 0. */
int sim_weight_bits(const rd_sim *s);

/* Weights of the integer layers (sim_layers.c): the op table's weight input and channel rule. */
/** The node's weight (its table entry's weight_in) when it is a float32 constant, else NULL. */
const rd_tensor *sim_const_weight(const rd_sim *s, int node);
/** The output-channel axis and groups of node's weight w; per_tensor when it has one scale. */
void sim_q8_weight_axis(const sim_node *n, const rd_tensor *w, int *axis, int64_t *group, bool *force_per_tensor);
/** Quantizes node's constant weights once (imported scales if any, else per channel or tensor); RD_E_INVAL
    when the node has none (callers check sim_const_weight first). */
rd_status sim_q8_prepare_weights(rd_sim *s, int node, rd_error *err);
/** Quantizes an int16 layer's constant weights once (imported scales of the same width if any); RD_E_INVAL
    when the node has none. */
rd_status sim_q16_prepare_weights(rd_sim *s, int node, rd_error *err);

#endif
