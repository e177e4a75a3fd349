/*
 * qdq_integer.c: the integer form of the QDQ export (RD_QDQ_FORM_INTEGER, docs/numerics.md). Each
 * Conv/Gemm/MatMul that the INT8 simulator accumulates in int32 is written as
 *
 *     QuantizeLinear(x, s_x, zp_x + 128) -> uint8 codes           (once per activation)
 *     ConvInteger / MatMulInteger(x codes, w codes + 128, zp_x + 128, 128) -> int32
 *     Add(int32 bias)                                             (Conv bias, Gemm's folded C)
 *     Cast(double) -> Mul(s_x) -> Mul(s_w per channel) [-> Mul(alpha) -> Add(beta * C)] -> Cast(float)
 *
 * which is quant_eval.c's arithmetic step by step: the same int32 sum, then
 * (float)((double)acc * in_scale * w_scale[c]) with the products in that order. The fused activation
 * and the requantization that follow are the QDQ form's (float32, QuantizeLinear), as in the simulator.
 * Everything is uint8 because ONNX Runtime's CPU ConvInteger takes nothing else; shifting codes and zero
 * points by 128 leaves every (x - zp_x) and (w - 128) unchanged, so the sum is exact and identical.
 */
#include "kernels/gap_conv.h"
#include "onnx_pb.h"
#include "qdq_internal.h"

#include <math.h>
#include <stdio.h>

/* ---- the plan ---------------------------------------------------------------------------------- */

typedef enum int_kind { INT_NONE, INT_WEIGHTS, INT_ACT_MATMUL, INT_LOWERED_GAP } int_kind;

static bool const_f32(const qdq_writer *w, int v)
{
    return v >= 0 && w->m->values[v].konst && w->m->values[v].konst->dtype == RD_DT_F32;
}

/* How the simulation computes node i in int32 (INT_NONE: in float, or not an integer layer). */
static int_kind int_kind_of(const qdq_writer *w, int i)
{
    const sim_node *n = &w->m->nodes[i];
    if (n->folded || !n->def || !n->def->eval_i8 || n->n_in < 1 || n->n_out < 1 || n->out[0] < 0 ||
        !qdq_int8_activation(w, n->in[0]) || sim_node_precision(w->s, i) != RD_PREC_INT8)
        return INT_NONE;
    if (n->def->weight_in == 0) /* GlobalAveragePool that RKNN's passes lowered to a depthwise conv */
        return n->lowered && w->m->values[n->in[0]].rank == 4 ? INT_LOWERED_GAP : INT_NONE;
    if (n->def->weight_in != 1 || n->n_in < 2 || n->in[1] < 0)
        return INT_NONE;
    if (const_f32(w, n->in[1]))
        return INT_WEIGHTS;
    if (n->def->weight == RD_OP_WEIGHT_MATMUL && qdq_int8_activation(w, n->in[1]))
        return INT_ACT_MATMUL;
    return INT_NONE;
}

/* Why node i (computed in int32) cannot be written with ConvInteger/MatMulInteger; NULL when it can. */
static const char *refusal(const qdq_writer *w, int i, int_kind ik, const rd_sim_weights *sw)
{
    if (ik == INT_WEIGHTS && sw->zero_point)
        return "its weights are asymmetric (zero points): the integer form is written for symmetric weights";
    const rd_model *m = w->m;
    const sim_node *n = &m->nodes[i];
    int xr = m->values[n->in[0]].rank;
    if (ik == INT_LOWERED_GAP) {
        gap_plan plan;
        const sim_value *x = &m->values[n->in[0]];
        if (x->dims[2] <= 0 || x->dims[3] <= 0)
            return "its map size is not known";
        gap_plan_make(x->dims[2], x->dims[3], &plan);
        return plan.n_stages == 1 ? NULL : "a GlobalAveragePool lowered to two convs is not rewritten";
    }
    const rd_tensor *wt = ik == INT_WEIGHTS ? m->values[n->in[1]].konst : NULL;
    switch (n->def->weight) {
    case RD_OP_WEIGHT_CONV_T:
        return "ONNX has no integer ConvTranspose";
    case RD_OP_WEIGHT_CONV:
        if (wt->rank < 3 || wt->rank > 5)
            return "ConvInteger is written for 1 to 3 spatial dims only";
        if (n->n_in > 2 && n->in[2] >= 0 &&
            (!const_f32(w, n->in[2]) || m->values[n->in[2]].konst->rank != 1 ||
             m->values[n->in[2]].konst->dims[0] != wt->dims[0]))
            return "its bias is not a constant vector of one value per output channel";
        return NULL;
    case RD_OP_WEIGHT_GEMM:
        if (sim_attr_int(n, "transA", 0))
            return "Gemm with transA is not rewritten";
        if (wt->rank != 2)
            return "its weight is not 2-D";
        return NULL;
    case RD_OP_WEIGHT_MATMUL:
        if (xr < 2 || (wt ? wt->rank : m->values[n->in[1]].rank) < 2)
            return "a 1-D (or unknown-rank) MatMul operand is not rewritten";
        return NULL;
    case RD_OP_WEIGHT_NONE:
        break;
    }
    return "not an integer layer";
}

rd_status qdq_integer_plan(qdq_writer *w, rd_error *err)
{
    const rd_model *m = w->m;
    for (int i = 0; i < m->n_nodes; i++) {
        int_kind ik = int_kind_of(w, i);
        if (ik == INT_NONE)
            continue;
        const sim_node *n = &m->nodes[i];
        rd_sim_weights sw = {0};
        if (ik == INT_WEIGHTS) {
            rd_status st = rd_sim_weights_get(w->s, i, &sw, err);
            if (st != RD_OK)
                return st;
        }
        const char *why = refusal(w, i, ik, &sw);
        if (why) {
            qdq_note(w, "node '%s' (%s) stays in QDQ form (the runtime accumulates it in float): %s", n->name,
                     n->op_type, why);
            continue;
        }
        w->integer[i] = true;
        if (ik == INT_WEIGHTS)
            w->replaced_reads[n->in[1]]++;
        if (n->n_in > 2 && n->in[2] >= 0 && const_f32(w, n->in[2]))
            w->replaced_reads[n->in[2]]++;
    }
    return RD_OK;
}

/* ---- writing ----------------------------------------------------------------------------------- */

static rd_status nomem(rd_error *err)
{
    return rd_errorf(err, RD_E_NOMEM, "out of memory");
}

/* Adds t as an initializer named base+suffix (made unique) and frees t; *name receives the name. */
static rd_status add_init(qdq_writer *w, const char *base, const char *suffix, rd_tensor *t, const char **name,
                          rd_error *err)
{
    char *nm = qdq_fresh_name(w, base, suffix);
    rd_status st = nm ? rd_onnx_add_initializer(w->b, nm, t, RD_ONNX_RAW) : nomem(err);
    rd_tensor_fini(t);
    *name = nm;
    return st;
}

static rd_status add_scalar(qdq_writer *w, const char *base, const char *suffix, rd_dtype dt, double v,
                            const char **name, rd_error *err)
{
    char *nm = qdq_fresh_name(w, base, suffix);
    *name = nm;
    return nm ? qdq_scalar_init(w, nm, dt, v, err) : nomem(err);
}

/* One node with one output; the output is base+suffix (made unique) unless out is given. */
static rd_onnx_node *add_op(qdq_writer *w, const char *op, const char *base, const char *suffix, const char *const *in,
                            int n_in, const char **out)
{
    char node_suffix[64];
    snprintf(node_suffix, sizeof node_suffix, "_%s", op);
    const char *nn = qdq_fresh_name(w, base, node_suffix);
    if (!*out)
        *out = qdq_fresh_name(w, base, suffix);
    if (!nn || !*out)
        return NULL;
    return rd_onnx_add_node(w->b, op, nn, in, n_in, out, 1);
}

/* The uint8 codes of int8 activation v (QuantizeLinear with zero point + 128: q + 128 exactly). */
static rd_status codes_of(qdq_writer *w, int v, rd_error *err)
{
    if (w->u8[v])
        return RD_OK;
    const sim_value *val = &w->m->values[v];
    const sim_val_data *d = &w->s->vals[v];
    const char *sn, *zn, *out = NULL;
    rd_status st = add_scalar(w, val->name, "_uint8_scale", RD_DT_F32, d->scale, &sn, err);
    if (st == RD_OK)
        st = add_scalar(w, val->name, "_uint8_zero_point", RD_DT_U8, d->zero_point + 128, &zn, err);
    if (st != RD_OK)
        return st;
    if (!add_op(w, "QuantizeLinear", val->name, "_uint8", (const char *const[]){qdq_value_use(w, v), sn, zn}, 3, &out))
        return nomem(err);
    w->u8[v] = (char *)out;
    w->u8_zp[v] = (char *)zn;
    return RD_OK;
}

/* The weight codes + 128 as uint8, Gemm's transB=1 [N, K] transposed to MatMulInteger's [K, N]. */
static rd_status weight_codes(qdq_writer *w, int i, const rd_sim_weights *sw, const char **name, rd_error *err)
{
    const sim_node *n = &w->m->nodes[i];
    const sim_value *wv = &w->m->values[sw->value];
    const rd_tensor *wf = wv->konst;
    bool transpose = n->def->weight == RD_OP_WEIGHT_GEMM && sim_attr_int(n, "transB", 0);
    int64_t dims[RD_MAX_RANK];
    memcpy(dims, wf->dims, sizeof dims);
    if (transpose) {
        dims[0] = wf->dims[1];
        dims[1] = wf->dims[0];
    }
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, RD_DT_U8, wf->rank, dims, err);
    if (st != RD_OK)
        return st;
    uint8_t *q = t.data;
    int64_t numel = rd_tensor_numel(wf);
    for (int64_t k = 0; k < numel; k++) {
        int64_t to = transpose ? (k % wf->dims[1]) * wf->dims[0] + k / wf->dims[1] : k;
        q[to] = (uint8_t)(sw->q[k] + 128);
    }
    return add_init(w, wv->name, "_uint8", &t, name, err);
}

/* A tensor of c per-channel values that broadcasts along the output channels: [c, 1, ...] of the given
   rank (a Conv's output rank - 1), [c] for rank 1. */
static rd_status channel_tensor(rd_tensor *t, rd_dtype dt, int64_t c, int rank, rd_error *err)
{
    int64_t dims[RD_MAX_RANK];
    int r = rank > 0 ? rank : 1;
    dims[0] = c;
    for (int d = 1; d < r; d++)
        dims[d] = 1;
    return rd_tensor_alloc(t, dt, r, dims, err);
}

/* Conv bias as int32 at in_scale * w_scale[c], shaped to add onto [N, M, spatial...]. */
static rd_status conv_bias(qdq_writer *w, const sim_node *n, const rd_sim_weights *sw, float in_scale,
                           const char **name, rd_error *err)
{
    const sim_value *bv = &w->m->values[n->in[2]];
    const rd_tensor *wf = w->m->values[sw->value].konst;
    int64_t mch = wf->dims[0];
    rd_tensor t;
    rd_status st = channel_tensor(&t, RD_DT_I32, mch, wf->rank - 1, err);
    if (st != RD_OK)
        return st;
    for (int64_t c = 0; c < mch; c++)
        ((int32_t *)t.data)[c] = sim_quant_bias_i32(((const float *)bv->konst->data)[c],
                                                    (double)in_scale * (double)sw->scale[sw->n_scale > 1 ? c : 0]);
    return add_init(w, bv->name, "_int32", &t, name, err);
}

/* Gemm: C folded into the accumulator exactly when quant_eval.c folds it (constant, one row, alpha != 0). */
static bool gemm_folds_c(const qdq_writer *w, const sim_node *n)
{
    if (n->n_in < 3 || n->in[2] < 0 || !w->m->values[n->in[2]].konst)
        return false;
    const rd_tensor *c = w->m->values[n->in[2]].konst;
    return (c->rank < 2 || c->dims[0] == 1) && sim_attr_float(n, "alpha", 1.0f) != 0.0f;
}

/* Gemm's folded C: bq[j] = bias(beta * C[j] / alpha, in_scale * w_scale[j]), as quant_eval.c computes it. */
static rd_status gemm_bias(qdq_writer *w, const sim_node *n, const rd_sim_weights *sw, float in_scale, int64_t nn,
                           const char **name, rd_error *err)
{
    const rd_tensor *c = w->m->values[n->in[2]].konst;
    const float *cd = c->data;
    float alpha = sim_attr_float(n, "alpha", 1.0f), beta = sim_attr_float(n, "beta", 1.0f);
    int64_t cs_col = c->rank >= 1 && c->dims[c->rank - 1] == nn ? 1 : 0;
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, RD_DT_I32, 1, &nn, err);
    if (st != RD_OK)
        return st;
    for (int64_t j = 0; j < nn; j++)
        ((int32_t *)t.data)[j] = sim_quant_bias_i32((double)beta * cd[j * cs_col] / alpha,
                                                    (double)in_scale * (double)sw->scale[sw->n_scale > 1 ? j : 0]);
    return add_init(w, w->m->values[n->in[2]].name, "_int32", &t, name, err);
}

/* Gemm's C added after scaling (not folded): beta * C in double, constant or computed at run time. */
static rd_status gemm_add_c(qdq_writer *w, const sim_node *n, const char *base, const char **cur, rd_error *err)
{
    int cv = n->in[2];
    const sim_value *val = &w->m->values[cv];
    float beta = sim_attr_float(n, "beta", 1.0f);
    const char *bc = NULL;
    rd_status st = RD_OK;
    if (val->konst) {
        rd_tensor t;
        if ((st = rd_tensor_alloc(&t, RD_DT_F64, val->konst->rank, val->konst->dims, err)) != RD_OK)
            return st;
        int64_t k = rd_tensor_numel(&t);
        for (int64_t j = 0; j < k; j++)
            ((double *)t.data)[j] = (double)beta * ((const float *)val->konst->data)[j]; /* exact in double */
        if ((st = add_init(w, val->name, "_times_beta_float64", &t, &bc, err)) != RD_OK)
            return st;
    } else {
        const char *cd = NULL, *bn;
        rd_onnx_node *cast =
            add_op(w, "Cast", val->name, "_float64", (const char *const[]){qdq_value_use(w, cv)}, 1, &cd);
        if (!cast || rd_onnx_attr_int(cast, "to", RD_DT_F64) != RD_OK)
            return nomem(err);
        if ((st = add_scalar(w, base, "_beta", RD_DT_F64, beta, &bn, err)) != RD_OK)
            return st;
        if (!add_op(w, "Mul", base, "_beta_times_c", (const char *const[]){cd, bn}, 2, &bc))
            return nomem(err);
    }
    const char *out = NULL;
    if (!add_op(w, "Add", base, "_plus_c", (const char *const[]){*cur, bc}, 2, &out))
        return nomem(err);
    *cur = out;
    return RD_OK;
}

/* cur * scale (double tensor or scalar) -> the new cur. */
static rd_status mul_by(qdq_writer *w, const char *base, const char *suffix, const char *scale, const char **cur,
                        rd_error *err)
{
    const char *out = NULL;
    if (!add_op(w, "Mul", base, suffix, (const char *const[]){*cur, scale}, 2, &out))
        return nomem(err);
    *cur = out;
    return RD_OK;
}

/* The weight scales in double, [C, 1, ...] for a Conv, [N] for Gemm/MatMul, a scalar per tensor. */
static rd_status weight_scales(qdq_writer *w, const sim_node *n, const rd_sim_weights *sw, const char **name,
                               rd_error *err)
{
    const rd_tensor *wf = w->m->values[sw->value].konst;
    const char *base = w->m->values[sw->value].name;
    if (sw->n_scale == 1)
        return add_scalar(w, base, "_scale_float64", RD_DT_F64, sw->scale[0], name, err);
    rd_tensor t;
    const int rank = n->def->weight == RD_OP_WEIGHT_CONV ? wf->rank - 1 : 1;
    rd_status st = channel_tensor(&t, RD_DT_F64, sw->n_scale, rank, err);
    if (st != RD_OK)
        return st;
    for (int c = 0; c < sw->n_scale; c++)
        ((double *)t.data)[c] = sw->scale[c];
    return add_init(w, base, "_scale_float64", &t, name, err);
}

/* The float64 result cur written, as float, under the name node n's output is produced as. */
static rd_status cast_to_output(qdq_writer *w, const sim_node *n, const char *base, const char *cur, rd_error *err)
{
    const char *y = qdq_value_src(w, n->out[0]);
    rd_onnx_node *back = add_op(w, "Cast", base, "", (const char *const[]){cur}, 1, &y);
    if (!back || rd_onnx_attr_int(back, "to", RD_DT_F32) != RD_OK)
        return nomem(err);
    return RD_OK;
}

/* A lowered GlobalAveragePool (one stage) as the simulation computes it (quant_eval.c, kernels/gap_conv.c):
   the centred codes summed over the map in double (exact), times the weight code, times the input scale,
   times the weight scale, then float. */
static rd_status gap_write(qdq_writer *w, int i, rd_error *err)
{
    const rd_model *m = w->m;
    const sim_node *n = &m->nodes[i];
    const char *base = n->name[0] ? n->name : m->values[n->out[0]].name;
    const int x = n->in[0];
    const sim_value *xv = &m->values[x];
    float w_scale;
    int32_t w_code;
    sim_quant_weight_one(1.0f / (float)(xv->dims[2] * xv->dims[3]), 8, false, &w_scale, &w_code);
    rd_status st = codes_of(w, x, err);
    if (st != RD_OK)
        return st;
    const char *dbl = NULL, *zp, *cur = NULL, *sum = NULL, *code, *sx, *sw;
    rd_onnx_node *cast =
        add_op(w, "Cast", m->values[x].name, "_uint8_float64", (const char *const[]){w->u8[x]}, 1, &dbl);
    if (!cast || rd_onnx_attr_int(cast, "to", RD_DT_F64) != RD_OK)
        return nomem(err);
    if ((st = add_scalar(w, m->values[x].name, "_uint8_zero_point_float64", RD_DT_F64, w->s->vals[x].zero_point + 128,
                         &zp, err)) != RD_OK)
        return st;
    if (!add_op(w, "Sub", base, "_centred", (const char *const[]){dbl, zp}, 2, &cur))
        return nomem(err);
    rd_onnx_node *red;
    if (w->opset >= 13) { /* axes became an input of ReduceSum at opset 13 */
        rd_tensor axes;
        const int64_t two = 2;
        const char *an = NULL;
        if ((st = rd_tensor_alloc(&axes, RD_DT_I64, 1, &two, err)) != RD_OK)
            return st;
        ((int64_t *)axes.data)[0] = 2;
        ((int64_t *)axes.data)[1] = 3;
        if ((st = add_init(w, base, "_axes", &axes, &an, err)) != RD_OK)
            return st;
        red = add_op(w, "ReduceSum", base, "_sum", (const char *const[]){cur, an}, 2, &sum);
    } else {
        red = add_op(w, "ReduceSum", base, "_sum", (const char *const[]){cur}, 1, &sum);
        if (red && rd_onnx_attr_ints(red, "axes", (const int64_t[]){2, 3}, 2) != RD_OK)
            return nomem(err);
    }
    if (!red || rd_onnx_attr_int(red, "keepdims", 1) != RD_OK)
        return nomem(err);
    cur = sum;
    if ((st = add_scalar(w, base, "_weight_code", RD_DT_F64, w_code, &code, err)) != RD_OK ||
        (st = mul_by(w, base, "_weighted", code, &cur, err)) != RD_OK ||
        (st = add_scalar(w, m->values[x].name, "_scale_float64", RD_DT_F64, w->s->vals[x].scale, &sx, err)) != RD_OK ||
        (st = mul_by(w, base, "_float64_in_scaled", sx, &cur, err)) != RD_OK ||
        (st = add_scalar(w, base, "_weight_scale_float64", RD_DT_F64, w_scale, &sw, err)) != RD_OK ||
        (st = mul_by(w, base, "_float64_scaled", sw, &cur, err)) != RD_OK)
        return st;
    return cast_to_output(w, n, base, cur, err);
}

rd_status qdq_integer_write(qdq_writer *w, int i, rd_error *err)
{
    if (w->m->nodes[i].def->weight_in == 0)
        return gap_write(w, i, err);
    const rd_model *m = w->m;
    const sim_node *n = &m->nodes[i];
    const char *base = n->name[0] ? n->name : m->values[n->out[0]].name;
    int x = n->in[0];
    const rd_op_weight kind = n->def->weight;
    float in_scale = w->s->vals[x].scale;
    rd_status st = codes_of(w, x, err);
    if (st != RD_OK)
        return st;
    rd_sim_weights sw = {0};
    const char *b_codes, *b_zp, *w_scales = NULL;
    bool act_b = int_kind_of(w, i) == INT_ACT_MATMUL;
    if (act_b) {
        if ((st = codes_of(w, n->in[1], err)) != RD_OK)
            return st;
        b_codes = w->u8[n->in[1]];
        b_zp = w->u8_zp[n->in[1]];
        st = add_scalar(w, m->values[n->in[1]].name, "_scale_float64", RD_DT_F64, w->s->vals[n->in[1]].scale, &w_scales,
                        err);
    } else {
        if ((st = rd_sim_weights_get(w->s, i, &sw, err)) != RD_OK)
            return st;
        if ((st = weight_codes(w, i, &sw, &b_codes, err)) == RD_OK &&
            (st = add_scalar(w, m->values[sw.value].name, "_uint8_zero_point", RD_DT_U8, 128, &b_zp, err)) == RD_OK)
            st = weight_scales(w, n, &sw, &w_scales, err);
    }
    if (st != RD_OK)
        return st;
    /* the int32 accumulator */
    const char *cur = NULL;
    const char *const ops_in[4] = {w->u8[x], b_codes, w->u8_zp[x], b_zp};
    const char *int_op = kind == RD_OP_WEIGHT_CONV ? "ConvInteger" : "MatMulInteger";
    rd_onnx_node *core = add_op(w, int_op, base, "_int32", ops_in, 4, &cur);
    if (!core)
        return nomem(err);
    if (kind == RD_OP_WEIGHT_CONV)
        for (int k = 0; k < n->n_attr; k++)
            sim_onnx_add_attr(core, &n->attrs[k]);
    const char *bias = NULL;
    bool fold = kind == RD_OP_WEIGHT_GEMM && gemm_folds_c(w, n);
    int64_t nn = 0;
    if (kind == RD_OP_WEIGHT_GEMM) {
        const rd_tensor *wf = m->values[sw.value].konst;
        nn = sim_attr_int(n, "transB", 0) ? wf->dims[0] : wf->dims[1];
    }
    if (kind == RD_OP_WEIGHT_CONV && n->n_in > 2 && n->in[2] >= 0)
        st = conv_bias(w, n, &sw, in_scale, &bias, err);
    else if (fold)
        st = gemm_bias(w, n, &sw, in_scale, nn, &bias, err);
    if (st != RD_OK)
        return st;
    if (bias) {
        const char *out = NULL;
        if (!add_op(w, "Add", base, "_int32_biased", (const char *const[]){cur, bias}, 2, &out))
            return nomem(err);
        cur = out;
    }
    /* (float)((double)acc * in_scale * w_scale[c]): each product rounded in double, in that order */
    const char *dbl = NULL, *sx;
    rd_onnx_node *cast = add_op(w, "Cast", base, "_float64", (const char *const[]){cur}, 1, &dbl);
    if (!cast || rd_onnx_attr_int(cast, "to", RD_DT_F64) != RD_OK)
        return nomem(err);
    cur = dbl;
    if ((st = add_scalar(w, m->values[x].name, "_scale_float64", RD_DT_F64, in_scale, &sx, err)) != RD_OK ||
        (st = mul_by(w, base, "_float64_in_scaled", sx, &cur, err)) != RD_OK ||
        (st = mul_by(w, base, "_float64_scaled", w_scales, &cur, err)) != RD_OK)
        return st;
    if (kind == RD_OP_WEIGHT_GEMM) {
        float alpha = sim_attr_float(n, "alpha", 1.0f);
        const char *an;
        if (alpha != 1.0f && ((st = add_scalar(w, base, "_alpha", RD_DT_F64, alpha, &an, err)) != RD_OK ||
                              (st = mul_by(w, base, "_float64_alpha", an, &cur, err)) != RD_OK))
            return st;
        if (!fold && n->n_in > 2 && n->in[2] >= 0 && (st = gemm_add_c(w, n, base, &cur, err)) != RD_OK)
            return st;
    }
    return cast_to_output(w, n, base, cur, err);
}
