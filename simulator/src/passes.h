/*
 * passes.h: what the compiler passes (passes*.c) share: a per-pass context that marks removed nodes
 * and counts each value's readers, and the passes themselves. Private to passes*.c.
 */
#ifndef RD_SIM_PASSES_H
#define RD_SIM_PASSES_H

#include "internal.h"

typedef struct sim_pass {
    rd_model *m;
    bool *removed; /* per node: dropped when the pass ends */
    int *uses;     /* per value existing when the pass began: node input slots reading it */
    int n_uses;
} sim_pass;

/* Counts readers; RD_E_NOMEM on failure. */
rd_status sim_pass_begin(sim_pass *p, rd_model *m, rd_error *err);
/* Drops the removed nodes (freeing them), renumbers producers, frees the context. */
void sim_pass_end(sim_pass *p);

/* Node input slots reading v (0 for values created during the pass). */
int sim_pass_uses(const sim_pass *p, int v);
/* True when n is the default-domain operator op_type, still in the graph and not folded at load. */
bool sim_pass_is_live_op(const sim_pass *p, int node, const char *op_type);
/* The weight rule of a live default-domain node (sim_pass_is_live_op), RD_OP_WEIGHT_NONE for any other. */
rd_op_weight sim_pass_weight_rule(const sim_pass *p, int node);
/* The node producing v when v has exactly one reader and is not a graph output; -1 otherwise. */
int sim_pass_fusable_producer(const sim_pass *p, int v);

/* One reader fewer for v (values created by this pass are not counted). */
void sim_pass_drop_use(sim_pass *p, int v);
/* Makes room for a bias input in n->in (n_in itself grows only when a fold commits: sim_pass_absorb). */
rd_status sim_pass_room_for_bias(sim_node *n, rd_error *err);
/* Commits the fold of node into prod, its producer (the caller has dropped the uses prod no longer makes):
   prod reads bias as input 2 (prod's inputs have room for 3) and writes node's output 0, its own output
   fused into that one; node goes. */
void sim_pass_absorb(sim_pass *p, int prod, int node, int bias);
/* Adds a float32 constant named base + suffix (made unique); takes t. *out is the value index. */
rd_status sim_pass_add_constant(rd_model *m, const char *base, const char *suffix, rd_tensor *t, int *out,
                                rd_error *err);

/* Level 2: a constant Add/Sub folded into the bias of the Conv, ConvTranspose or Gemm before it, and
   MatMul + Add made a Gemm (passes_bias.c). */
rd_status sim_pass_fold_biases(sim_pass *p, rd_error *err);

/* Level 3: RKNN's rewrites and fusion groups (passes_rknn.c). */
rd_status sim_pass_rknn(sim_pass *p, rd_error *err);

/* Level 2: BatchNormalization folded into the preceding Conv or Gemm (passes_bn.c). */
rd_status sim_pass_fold_batchnorms(sim_pass *p, rd_error *err);

#endif /* RD_SIM_PASSES_H */
