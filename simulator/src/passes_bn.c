/*
 * passes_bn.c: level 2, BatchNormalization folded into the Conv or Gemm that feeds it.
 *
 * y = (x - mean) * s + beta with s = gamma / sqrt(var + eps), per channel. When x = W * in + b comes
 * from a Conv (channel = output channel, any group count) or a Gemm (channel = column N of the output),
 * y = (W * s) * in + ((b - mean) * s + beta). The factors are computed in double and the new weights and
 * bias stored as float32 in new constants "<producer out>_folded_w" / "_folded_b": the original
 * initializers may be shared with other nodes and are never changed. The producer then writes the BN's
 * output; its own output is recorded as fused into it and the BN node is dropped.
 *
 * Folds only what is exactly the inference form: five constant float32 operands of one value per
 * channel, no training mode or running-statistics outputs, a producer whose output has the BN as its
 * only reader and is not a graph output, and a Gemm with beta = 1 and C absent or of shape [N].
 */
#include "passes.h"

#include <math.h>
#include <stdio.h>

/* Constant float32 operand with exactly `count` values, or NULL. */
static const rd_tensor *f32_const(const rd_model *m, int v, int64_t count)
{
    if (v < 0)
        return NULL;
    const rd_tensor *t = m->values[v].konst;
    if (!t || t->dtype != RD_DT_F32 || rd_tensor_numel(t) != count || count <= 0)
        return NULL;
    return t;
}

/* Channel count of an inference-form BN with constant operands, or 0 when it cannot be folded. */
static int64_t bn_channels(const sim_pass *p, int i)
{
    const rd_model *m = p->m;
    const sim_node *n = &m->nodes[i];
    if (n->n_in != 5 || n->in[0] < 0)
        return 0;
    if (n->opset >= 14 && sim_attr_int(n, "training_mode", 0) != 0)
        return 0;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0)
            return 0;
    const rd_tensor *gamma = n->in[1] >= 0 ? m->values[n->in[1]].konst : NULL;
    if (!gamma)
        return 0;
    int64_t c = rd_tensor_numel(gamma);
    for (int k = 1; k < 5; k++)
        if (!f32_const(m, n->in[k], c))
            return 0;
    return c;
}

/* True when node `prod` (Conv or Gemm) can absorb a BN of `c` channels into constant weights. */
static bool producer_accepts(const sim_pass *p, int prod, int64_t c)
{
    const rd_model *m = p->m;
    const sim_node *n = &m->nodes[prod];
    if (n->n_in < 2 || n->in[1] < 0 || !m->values[n->in[1]].konst)
        return false;
    const rd_tensor *w = m->values[n->in[1]].konst;
    if (w->dtype != RD_DT_F32 || w->rank < 1)
        return false;
    bool has_bias = n->n_in > 2 && n->in[2] >= 0;
    const rd_op_weight rule = sim_pass_weight_rule(p, prod);
    if (rule == RD_OP_WEIGHT_CONV) {
        if (w->dims[0] != c || !f32_const(m, n->in[1], rd_tensor_numel(w)))
            return false;
        return !has_bias || f32_const(m, n->in[2], c);
    }
    if (rule == RD_OP_WEIGHT_GEMM) {
        if (w->rank != 2 || sim_attr_float(n, "beta", 1.0f) != 1.0f)
            return false;
        int64_t cols = sim_attr_int(n, "transB", 0) ? w->dims[0] : w->dims[1];
        if (cols != c)
            return false;
        return !has_bias ||
               (m->values[n->in[2]].konst && m->values[n->in[2]].konst->rank == 1 && f32_const(m, n->in[2], c));
    }
    return false;
}

/* Folds BN node `bn` (c channels) into node `prod`. Leaves the model unchanged on failure. */
static rd_status fold_one(sim_pass *p, int prod, int bn, int64_t c, rd_error *err)
{
    rd_model *m = p->m;
    const sim_node *b = &m->nodes[bn];
    sim_node *n = &m->nodes[prod];
    const float *gamma = m->values[b->in[1]].konst->data, *beta = m->values[b->in[2]].konst->data,
                *mean = m->values[b->in[3]].konst->data, *var = m->values[b->in[4]].konst->data;
    const double eps = (double)sim_attr_float(b, "epsilon", 1e-5f);
    const rd_tensor *w = m->values[n->in[1]].konst;
    const float *bias = n->n_in > 2 && n->in[2] >= 0 ? m->values[n->in[2]].konst->data : NULL;
    /* rows of W hold one channel each (Conv, Gemm transB = 1) or columns do (Gemm transB = 0) */
    const bool per_column = strcmp(n->op_type, "Gemm") == 0 && sim_attr_int(n, "transB", 0) == 0;

    double *s = sim_malloc_array((size_t)c, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory folding node '%s'", m->path, b->name);
    for (int64_t ch = 0; ch < c; ch++) {
        s[ch] = (double)gamma[ch] / sqrt((double)var[ch] + eps);
        if (!isfinite(s[ch])) { /* var + eps <= 0: leave the BN to produce its NaN or inf itself */
            free(s);
            return RD_OK;
        }
    }
    rd_tensor nw = {0}, nb = {0};
    const int64_t bdims[1] = {c};
    rd_status st = rd_tensor_alloc(&nw, RD_DT_F32, w->rank, w->dims, err);
    if (st == RD_OK)
        st = rd_tensor_alloc(&nb, RD_DT_F32, 1, bdims, err);
    if (st == RD_OK)
        st = sim_pass_room_for_bias(n, err);
    if (st != RD_OK) {
        free(s);
        rd_tensor_fini(&nw);
        rd_tensor_fini(&nb);
        return rd_error_prefix(err, "%s: folding node '%s' into '%s'", m->path, b->name, n->name);
    }
    const int64_t total = rd_tensor_numel(w), per = total / c;
    const float *wd = w->data;
    float *nwd = nw.data, *nbd = nb.data;
    for (int64_t i = 0; i < total; i++)
        nwd[i] = (float)((double)wd[i] * s[per_column ? i % c : i / per]);
    for (int64_t ch = 0; ch < c; ch++)
        nbd[ch] = (float)(((bias ? (double)bias[ch] : 0.0) - (double)mean[ch]) * s[ch] + (double)beta[ch]);
    free(s);

    const int x = n->out[0];
    char *base = sim_strdup(m->values[x].name);
    int wv = -1, bv = -1;
    st = base ? sim_pass_add_constant(m, base, "_folded_w", &nw, &wv, err)
              : rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path);
    if (st == RD_OK)
        st = sim_pass_add_constant(m, base, "_folded_b", &nb, &bv, err);
    free(base);
    rd_tensor_fini(&nw);
    rd_tensor_fini(&nb);
    if (st != RD_OK)
        return st; /* at worst an unread constant was added */

    /* commit: the producer reads the new constants and writes the BN's output */
    for (int k = 1; k < 3 && k < n->n_in; k++)
        sim_pass_drop_use(p, n->in[k]);
    for (int k = 1; k < 5; k++)
        sim_pass_drop_use(p, b->in[k]);
    n->in[1] = wv;
    sim_pass_absorb(p, prod, bn, bv);
    return RD_OK;
}

rd_status sim_pass_fold_batchnorms(sim_pass *p, rd_error *err)
{
    rd_model *m = p->m;
    for (int i = 0; i < m->n_nodes; i++) {
        if (!sim_pass_is_live_op(p, i, "BatchNormalization"))
            continue;
        int64_t c = bn_channels(p, i);
        int prod = c > 0 ? sim_pass_fusable_producer(p, m->nodes[i].in[0]) : -1;
        if (prod < 0 || m->nodes[prod].out[0] != m->nodes[i].in[0] || !producer_accepts(p, prod, c))
            continue;
        rd_status st = fold_one(p, prod, i, c, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}
