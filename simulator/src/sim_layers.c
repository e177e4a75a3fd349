/*
 * sim_layers.c: how one layer computes at float16 or int8 inside a simulation.
 *
 * float16: the operator's float32 kernel on inputs that are already half values; float constants
 * (weights, biases, scales) are rounded to half once, on first use. int8: Conv, ConvTranspose, Gemm and
 * MatMul accumulate int8 codes in int32 (quant.h); other operators run their float32 kernel on the
 * dequantized inputs and are requantized where their output materialises (sim.c). int16: the same
 * four ops accumulate exactly in double (quant16_eval.c) on int16 (or int8) input codes and int16 (or,
 * for w8a16, int8) weight codes.
 */
#include "sim_internal.h"

void sim_node_data_fini(sim_node_data *d)
{
    free(d->w_q);
    free(d->w_scale);
    free(d->imported_scale);
    free(d->w_q16);
    free(d->w_c);
    free(d->w_scale16);
    if (d->half_consts) {
        for (int k = 0; k < d->n_half; k++)
            rd_tensor_fini(&d->half_consts[k]);
        free(d->half_consts);
    }
    memset(d, 0, sizeof *d);
}

/* Runs the node's float32 operator with some inputs replaced. */
static rd_status eval_with(const sim_node *n, sim_op_ctx *ctx, const rd_tensor *const *in, rd_error *err)
{
    sim_op_ctx c = *ctx;
    c.in = in;
    return n->def->eval[SIM_PREC_F32](&c, err);
}

/* ---- float16 ------------------------------------------------------------------------------------- */

static rd_status prepare_half_consts(rd_sim *s, int node, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    d->half_consts = calloc((size_t)n->n_in + 1, sizeof *d->half_consts);
    if (!d->half_consts)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    d->n_half = n->n_in;
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v < 0 || !s->m->values[v].konst || s->m->values[v].konst->dtype != RD_DT_F32)
            continue;
        rd_status st = rd_tensor_clone(&d->half_consts[k], s->m->values[v].konst, err);
        if (st != RD_OK)
            return st;
        sim_round_f16(d->half_consts[k].data, rd_tensor_numel(&d->half_consts[k]), NULL, NULL, NULL);
        d->any_half = true;
    }
    d->half_ready = true;
    return RD_OK;
}

rd_status sim_eval_fp16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    sim_node_data *d = &s->nodes[node];
    if (!d->half_ready) {
        rd_status st = prepare_half_consts(s, node, err);
        if (st != RD_OK)
            return st;
    }
    if (!d->any_half)
        return SIM_DEFER;
    const rd_tensor *in[16];
    for (int k = 0; k < ctx->n_in && k < 16; k++)
        in[k] = d->half_consts[k].data ? &d->half_consts[k] : ctx->in[k];
    return eval_with(&s->m->nodes[node], ctx, in, err);
}

/* ---- int8 ------------------------------------------------------------------------------------------ */

q8_kind sim_q8_kind(const sim_node *n)
{
    if (n->domain[0])
        return Q8_NONE;
    if (strcmp(n->op_type, "Conv") == 0)
        return Q8_CONV;
    if (strcmp(n->op_type, "ConvTranspose") == 0)
        return Q8_CONV_T;
    if (strcmp(n->op_type, "Gemm") == 0)
        return Q8_GEMM;
    if (strcmp(n->op_type, "MatMul") == 0)
        return Q8_MATMUL;
    return Q8_NONE;
}

/* An int8 activation input: materialised at int8 with parameters. */
static bool is_q8_activation(const rd_sim *s, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    const sim_val_data *d = &s->vals[v];
    return !val->konst && !val->virtual_out && d->prec == RD_PREC_INT8 && d->quantized &&
           val->dtype == RD_DT_F32;
}

void sim_q8_weight_axis(const sim_node *n, q8_kind kind, const rd_tensor *w, int *axis, int64_t *group,
                        bool *force_per_tensor)
{
    *group = 1;
    *force_per_tensor = false;
    switch (kind) {
    case Q8_CONV_T:
        *axis = 1;
        *group = sim_attr_int(n, "group", 1);
        break;
    case Q8_GEMM:
        *axis = sim_attr_int(n, "transB", 0) ? 0 : 1;
        break;
    case Q8_MATMUL:
        *axis = w->rank - 1;
        *force_per_tensor = w->rank < 2;
        break;
    default:
        *axis = 0;
        break;
    }
}

rd_status sim_q8_prepare_weights(rd_sim *s, int node, q8_kind kind, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    if (kind == Q8_NONE)
        return SIM_DEFER;
    const rd_tensor *w = s->m->values[n->in[1]].konst;
    int axis;
    int64_t group;
    bool per_tensor;
    sim_q8_weight_axis(n, kind, w, &axis, &group, &per_tensor);
    per_tensor = per_tensor || s->opt.per_tensor_weights;
    free(d->w_q);
    free(d->w_scale);
    d->w_q = NULL;
    d->w_scale = NULL;
    rd_status st;
    if (d->imported_scale && d->imported_bits == 8) {
        d->w_scale = sim_malloc_array((size_t)d->n_imported_scale, sizeof *d->w_scale);
        if (!d->w_scale)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        memcpy(d->w_scale, d->imported_scale, (size_t)d->n_imported_scale * sizeof *d->w_scale);
        d->n_w_scale = d->n_imported_scale;
        st = sim_quant_weights_i8_scaled(w, axis, group, d->w_scale, d->n_w_scale, &d->w_q, NULL, err);
    } else {
        st = sim_quant_weights_i8_grouped(w, axis, group, per_tensor, &d->w_q, &d->w_scale, &d->n_w_scale, err);
    }
    if (st != RD_OK)
        return rd_error_prefix(err, "%s: node '%s' (%s): quantizing weights '%s'", s->m->path, n->name, n->op_type,
                               s->m->values[n->in[1]].name);
    d->q8_ready = true;
    return RD_OK;
}

rd_status sim_eval_int8(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    q8_kind kind = sim_q8_kind(n);
    if (kind == Q8_NONE || n->n_in < 2 || !is_q8_activation(s, n->in[0]))
        return SIM_DEFER; /* float kernel on dequantized values; requantized where it materialises */
    const sim_val_data *x = &s->vals[n->in[0]];
    sim_q8_layer q = {.in_scale = x->scale, .in_zp = x->zero_point};
    const sim_value *wv = &s->m->values[n->in[1]];
    bool w_const = wv->konst && wv->konst->dtype == RD_DT_F32;
    if (kind == Q8_MATMUL && !w_const) {
        if (!is_q8_activation(s, n->in[1]))
            return SIM_DEFER;
        q.b_scale = s->vals[n->in[1]].scale;
        q.b_zp = s->vals[n->in[1]].zero_point;
        return sim_q8_matmul_eval(ctx, &q, err);
    }
    if (!w_const)
        return SIM_DEFER; /* weights computed at run time: float kernel */
    sim_node_data *d = &s->nodes[node];
    if (!d->q8_ready) {
        rd_status st = sim_q8_prepare_weights(s, node, kind, err);
        if (st != RD_OK)
            return st;
    }
    q.w_q = d->w_q;
    q.w_scale = d->w_scale;
    q.n_w_scale = d->n_w_scale;
    q.c_const = n->n_in > 2 && n->in[2] >= 0 && s->m->values[n->in[2]].konst != NULL;
    switch (kind) {
    case Q8_CONV:
        return sim_q8_conv_eval(ctx, &q, err);
    case Q8_CONV_T:
        return sim_q8_conv_transpose_eval(ctx, &q, err);
    case Q8_GEMM:
        return sim_q8_gemm_eval(ctx, &q, err);
    case Q8_MATMUL:
        return sim_q8_matmul_eval(ctx, &q, err);
    default:
        return SIM_DEFER;
    }
}

/* ---- int16 --------------------------------------------------------------------------------------- */

int sim_weight_bits(const rd_sim *s)
{
    return s->opt.weight_bits ? s->opt.weight_bits : 16;
}

/* An activation input of an int16 layer: held at int16 or int8 with parameters; *bits its grid. */
static bool wide_activation(const rd_sim *s, int v, float *scale, int32_t *zp, int *bits)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    const sim_val_data *d = &s->vals[v];
    if (val->konst || val->virtual_out || val->dtype != RD_DT_F32)
        return false;
    if (d->prec == RD_PREC_INT16 && d->quantized16) {
        *scale = d->scale16;
        *zp = d->zero_point16;
        *bits = 16;
        return true;
    }
    if (d->prec == RD_PREC_INT8 && d->quantized) {
        *scale = d->scale;
        *zp = d->zero_point;
        *bits = 8;
        return true;
    }
    return false;
}

rd_status sim_q16_prepare_weights(rd_sim *s, int node, q8_kind kind, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    if (kind == Q8_NONE)
        return SIM_DEFER;
    const rd_tensor *w = s->m->values[n->in[1]].konst;
    int axis;
    int64_t group;
    bool per_tensor;
    sim_q8_weight_axis(n, kind, w, &axis, &group, &per_tensor);
    per_tensor = per_tensor || s->opt.per_tensor_weights;
    free(d->w_q16);
    free(d->w_c);
    free(d->w_scale16);
    d->w_q16 = NULL;
    d->w_c = NULL;
    d->w_scale16 = NULL;
    const int bits = sim_weight_bits(s);
    rd_status st;
    if (d->imported_scale && d->imported_bits == bits) {
        d->w_scale16 = sim_malloc_array((size_t)d->n_imported_scale, sizeof *d->w_scale16);
        if (!d->w_scale16)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        memcpy(d->w_scale16, d->imported_scale, (size_t)d->n_imported_scale * sizeof *d->w_scale16);
        d->n_w_scale16 = d->n_imported_scale;
        st = sim_quant_weights_wide_scaled(w, axis, group, bits, d->w_scale16, d->n_w_scale16, &d->w_q16, NULL, err);
    } else {
        st = sim_quant_weights_wide(w, axis, group, per_tensor, bits, s->opt.dfp, &d->w_q16, &d->w_scale16,
                                    &d->n_w_scale16, err);
    }
    const int64_t numel = rd_tensor_numel(w);
    if (st == RD_OK) {
        d->w_c = sim_malloc_array((size_t)numel, sizeof *d->w_c);
        if (!d->w_c)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    if (st != RD_OK)
        return rd_error_prefix(err, "%s: node '%s' (%s): quantizing weights '%s'", s->m->path, n->name, n->op_type,
                               s->m->values[n->in[1]].name);
    for (int64_t i = 0; i < numel; i++)
        d->w_c[i] = d->w_q16[i];
    d->q16_ready = true;
    return RD_OK;
}

rd_status sim_eval_int16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    q8_kind kind = sim_q8_kind(n);
    sim_q16_layer q = {0};
    if (kind == Q8_NONE || n->n_in < 2 || !wide_activation(s, n->in[0], &q.in_scale, &q.in_zp, &q.in_bits))
        return SIM_DEFER; /* float kernel on dequantized values; requantized where it materialises */
    const sim_value *wv = &s->m->values[n->in[1]];
    bool w_const = wv->konst && wv->konst->dtype == RD_DT_F32;
    if (kind == Q8_MATMUL && !w_const) {
        if (!wide_activation(s, n->in[1], &q.b_scale, &q.b_zp, &q.b_bits))
            return SIM_DEFER;
        return sim_q16_matmul_eval(ctx, &q, err);
    }
    if (!w_const)
        return SIM_DEFER;
    sim_node_data *d = &s->nodes[node];
    if (!d->q16_ready) {
        rd_status st = sim_q16_prepare_weights(s, node, kind, err);
        if (st != RD_OK)
            return st;
    }
    q.w_c = d->w_c;
    q.w_scale = d->w_scale16;
    q.n_w_scale = d->n_w_scale16;
    q.c_const = n->n_in > 2 && n->in[2] >= 0 && s->m->values[n->in[2]].konst != NULL;
    switch (kind) {
    case Q8_CONV:
        return sim_q16_conv_eval(ctx, &q, err);
    case Q8_CONV_T:
        return sim_q16_conv_transpose_eval(ctx, &q, err);
    case Q8_GEMM:
        return sim_q16_gemm_eval(ctx, &q, err);
    case Q8_MATMUL:
        return sim_q16_matmul_eval(ctx, &q, err);
    default:
        return SIM_DEFER;
    }
}

/* ---- preparing every node at once (concurrent runs) ----------------------------------------------- */

rd_status rd_sim_prepare(rd_sim *s, rd_error *err)
{
    for (int i = 0; i < s->m->n_nodes; i++) {
        const sim_node *n = &s->m->nodes[i];
        if (n->folded)
            continue;
        sim_node_data *d = &s->nodes[i];
        rd_status st = RD_OK;
        switch (sim_node_precision(s, i)) {
        case RD_PREC_FP16:
            if (!d->half_ready)
                st = prepare_half_consts(s, i, err);
            break;
        case RD_PREC_INT8: {
            q8_kind kind = sim_q8_kind(n);
            bool w_const = n->n_in >= 2 && n->in[1] >= 0 && s->m->values[n->in[1]].konst &&
                           s->m->values[n->in[1]].konst->dtype == RD_DT_F32;
            if (kind != Q8_NONE && w_const && !d->q8_ready)
                st = sim_q8_prepare_weights(s, i, kind, err);
            break;
        }
        case RD_PREC_INT16: {
            q8_kind kind = sim_q8_kind(n);
            bool w_const = n->n_in >= 2 && n->in[1] >= 0 && s->m->values[n->in[1]].konst &&
                           s->m->values[n->in[1]].konst->dtype == RD_DT_F32;
            if (kind != Q8_NONE && w_const && !d->q16_ready)
                st = sim_q16_prepare_weights(s, i, kind, err);
            break;
        }
        default:
            break;
        }
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}
