/*
 * sim_layers.c: how one layer computes at float16 or int8 inside a simulation.
 *
 * float16: the operator's float16 kernel if the op table gives one, else its float32 kernel, on inputs
 * that are already half values; float constants (weights, biases, scales) are rounded to half once, on
 * first use. int8: the ops whose table entry has an int8 kernel (Conv, ConvTranspose, Gemm, MatMul)
 * accumulate int8 codes in int32 (quant.h); other operators run their float32 kernel on the dequantized
 * inputs and are requantized where their output materialises (sim.c). int16: the ops with an int16
 * kernel accumulate exactly in double (quant16_eval.c) on int16 (or int8) input codes and int16 (or, for
 * w8a16, int8) weight codes. Which input is the weight and where its channels lie: the table's weight_in
 * and weight rule.
 */
#include "sim_internal.h"

/* Frees the node's int8 weight codes, scales and zero points (quantized again on the next prepare). */
static void drop_q8_weights(sim_node_data *d)
{
    free(d->w_q);
    free(d->w_scale);
    free(d->w_zp);
    d->w_q = NULL;
    d->w_scale = NULL;
    d->w_zp = NULL;
}

/* The same for the wide (int16) weights. */
static void drop_q16_weights(sim_node_data *d)
{
    free(d->w_q16);
    free(d->w_c);
    free(d->w_scale16);
    d->w_q16 = NULL;
    d->w_c = NULL;
    d->w_scale16 = NULL;
}

/* Frees the float16 constants (also those of a first attempt that ran out of memory half way). */
static void drop_half_consts(sim_node_data *d)
{
    for (int k = 0; d->half_consts && k < d->n_half; k++)
        rd_tensor_fini(&d->half_consts[k]);
    free(d->half_consts);
    d->half_consts = NULL;
    d->n_half = 0;
    d->any_half = false;
}

void sim_node_data_fini(sim_node_data *d)
{
    drop_q8_weights(d);
    drop_q16_weights(d);
    free(d->imported_scale);
    free(d->imported_zp);
    free(d->imported_codes);
    drop_half_consts(d);
    memset(d, 0, sizeof *d);
}

/* Whether node's precision kernels apply to it: an op whose kernels compute its lowered NPU form
   (SIM_OP_LOWERED_KERNELS) only when the passes lowered it. */
static bool kernels_apply(const sim_node *n)
{
    return n->def && (!(n->def->flags & SIM_OP_LOWERED_KERNELS) || n->lowered);
}

/* Runs kernel fn of the node with some inputs replaced. */
static rd_status eval_with(sim_eval_fn fn, sim_op_ctx *ctx, const rd_tensor *const *in, rd_error *err)
{
    sim_op_ctx c = *ctx;
    c.in = in;
    return fn(&c, err);
}

/* ---- float16 ------------------------------------------------------------------------------------- */

static rd_status prepare_half_consts(rd_sim *s, int node, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    drop_half_consts(d);
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

/* An activation held on an integer grid (int8 or int16): a float16 layer reads it converted to half, as
   RKNN's exDataConvert (int8 -> float16) before a float16 op does. */
static bool held_on_grid(const rd_sim *s, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    const rd_prec p = s->vals[v].prec;
    return !val->konst && !val->virtual_out && val->dtype == RD_DT_F32 && (p == RD_PREC_INT8 || p == RD_PREC_INT16);
}

rd_status sim_eval_fp16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    sim_node_data *d = &s->nodes[node];
    if (!d->half_ready) {
        rd_status st = prepare_half_consts(s, node, err);
        if (st != RD_OK)
            return st;
    }
    const sim_node *n = &s->m->nodes[node];
    sim_eval_fn f16 = kernels_apply(n) ? n->def->eval[SIM_PREC_F16] : NULL;
    rd_tensor half_in[SIM_MAX_NODE_IO]; /* int8/int16 activations converted to half for this layer */
    memset(half_in, 0, sizeof half_in);
    bool converted = false;
    rd_status st = RD_OK;
    for (int k = 0; k < ctx->n_in && k < SIM_MAX_NODE_IO && st == RD_OK; k++) {
        if (d->half_consts[k].data || !ctx->in[k] || !ctx->in[k]->data || !held_on_grid(s, n->in[k]))
            continue;
        st = rd_tensor_clone(&half_in[k], ctx->in[k], err);
        if (st == RD_OK)
            sim_round_f16(half_in[k].data, rd_tensor_numel(&half_in[k]), NULL, NULL, NULL);
        converted = true;
    }
    if (st == RD_OK && !d->any_half && !f16 && !converted) {
        sim_defer(ctx);
    } else if (st == RD_OK) {
        const rd_tensor *in[SIM_MAX_NODE_IO];
        for (int k = 0; k < ctx->n_in && k < SIM_MAX_NODE_IO; k++)
            in[k] = d->half_consts[k].data ? &d->half_consts[k] : half_in[k].data ? &half_in[k] : ctx->in[k];
        /* the float32 eval through sim_eval_f32, which splits a large elementwise node over the pool */
        st = eval_with(f16 ? f16 : sim_eval_f32, ctx, in, err);
    }
    for (int k = 0; k < SIM_MAX_NODE_IO; k++)
        rd_tensor_fini(&half_in[k]);
    return st;
}

bool sim_fp16_layer_is_float(rd_sim *s, int node, const rd_tensor **in)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    if (kernels_apply(n) && n->def->eval[SIM_PREC_F16])
        return false;
    if (!d->half_ready && prepare_half_consts(s, node, NULL) != RD_OK)
        return false;
    for (int k = 0; k < n->n_in && k < d->n_half; k++) {
        if (d->half_consts[k].data)
            in[k] = &d->half_consts[k];
        else if (in[k] && held_on_grid(s, n->in[k]))
            return false; /* sim_eval_fp16 would convert it */
    }
    return true;
}

/* ---- integer layers: the op table's kernels -------------------------------------------------------- */

const rd_tensor *sim_const_weight(const rd_sim *s, int node)
{
    const sim_node *n = &s->m->nodes[node];
    const int wi = n->def ? n->def->weight_in : 0;
    if (wi <= 0 || wi >= n->n_in || n->in[wi] < 0)
        return NULL;
    const rd_tensor *w = s->m->values[n->in[wi]].konst;
    return w && w->dtype == RD_DT_F32 ? w : NULL;
}

/* An int8 activation input: materialised at int8 with parameters. */
static bool is_q8_activation(const rd_sim *s, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    const sim_val_data *d = &s->vals[v];
    return !val->konst && !val->virtual_out && d->prec == RD_PREC_INT8 && d->quantized && val->dtype == RD_DT_F32;
}

void sim_q8_weight_axis(const sim_node *n, const rd_tensor *w, int *axis, int64_t *group, bool *force_per_tensor)
{
    *axis = 0;
    *group = 1;
    *force_per_tensor = false;
    switch (n->def ? n->def->weight : RD_OP_WEIGHT_NONE) {
    case RD_OP_WEIGHT_CONV_T:
        *axis = 1;
        *group = sim_attr_int(n, "group", 1);
        break;
    case RD_OP_WEIGHT_GEMM:
        *axis = sim_attr_int(n, "transB", 0) ? 0 : 1;
        break;
    case RD_OP_WEIGHT_MATMUL:
        *axis = w->rank - 1;
        *force_per_tensor = w->rank < 2;
        break;
    case RD_OP_WEIGHT_CONV:
    case RD_OP_WEIGHT_NONE:
        break;
    }
}

/* The constant weight node quantizes, its output-channel axis and groups, and whether it takes one scale (the
   op's rule or per_tensor_weights); NULL (err set) when the node has none: callers check sim_const_weight. */
static const rd_tensor *weight_layout(const rd_sim *s, int node, int *axis, int64_t *group, bool *per_tensor,
                                      rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    const rd_tensor *w = sim_const_weight(s, node);
    if (!w) {
        rd_errorf(err, RD_E_INVAL, "%s: node '%s' (%s) has no constant float32 weight", s->m->path, n->name,
                  n->op_type);
        return NULL;
    }
    sim_q8_weight_axis(n, w, axis, group, per_tensor);
    *per_tensor = *per_tensor || s->opt.per_tensor_weights;
    return w;
}

rd_status sim_q8_prepare_weights(rd_sim *s, int node, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    int axis;
    int64_t group;
    bool per_tensor;
    const rd_tensor *w = weight_layout(s, node, &axis, &group, &per_tensor, err);
    if (!w)
        return err ? err->code : RD_E_INVAL;
    drop_q8_weights(d);
    rd_status st;
    if (d->imported_scale && d->imported_bits == 8) {
        const size_t n_chan = (size_t)d->n_imported_scale;
        d->w_scale = sim_malloc_array(n_chan, sizeof *d->w_scale);
        d->w_zp = d->imported_zp ? sim_malloc_array(n_chan, sizeof *d->w_zp) : NULL;
        if (!d->w_scale || (d->imported_zp && !d->w_zp))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        memcpy(d->w_scale, d->imported_scale, n_chan * sizeof *d->w_scale);
        if (d->w_zp)
            memcpy(d->w_zp, d->imported_zp, n_chan * sizeof *d->w_zp);
        d->n_w_scale = d->n_imported_scale;
        st = sim_quant_weights_i8_scaled_zp(w, axis, group, d->w_scale, d->w_zp, d->n_w_scale, &d->w_q, NULL, err);
        if (st == RD_OK && d->imported_codes) /* a built model's own codes replace ours */
            memcpy(d->w_q, d->imported_codes, (size_t)rd_tensor_numel(w));
    } else if (s->opt.asymmetric_weights) {
        st = sim_quant_weights_i8_asym(w, axis, group, per_tensor, &d->w_q, &d->w_scale, &d->w_zp, &d->n_w_scale, err);
    } else {
        st = sim_quant_weights_i8_grouped(w, axis, group, per_tensor, &d->w_q, &d->w_scale, &d->n_w_scale, err);
    }
    if (st != RD_OK)
        return rd_error_prefix(err, "%s: node '%s' (%s): quantizing weights '%s'", s->m->path, n->name, n->op_type,
                               s->m->values[n->in[n->def->weight_in]].name);
    d->q8_ready = true;
    return RD_OK;
}

/* The bias (input 2) is a constant the integer kernel may fold into its accumulator. */
static bool bias_const(const rd_sim *s, const sim_node *n)
{
    return n->n_in > 2 && n->in[2] >= 0 && s->m->values[n->in[2]].konst != NULL;
}

/* A float16 activation with int8 parameters: an int8 layer reads it through RKNN's exDataConvert
   (float16 -> int8), i.e. fake-quantized to its own int8 grid. */
static bool f16_to_int8(const rd_sim *s, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    const sim_val_data *d = &s->vals[v];
    return !val->konst && !val->virtual_out && val->dtype == RD_DT_F32 && d->prec == RD_PREC_FP16 && !d->via_f16 &&
           d->quantized;
}

static rd_status eval_int8_layer(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err);

rd_status sim_eval_int8(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    rd_tensor conv_in[SIM_MAX_NODE_IO]; /* float16 inputs converted to int8 for this layer */
    const rd_tensor *in[SIM_MAX_NODE_IO];
    bool converted = false;
    rd_status st = RD_OK;
    for (int k = 0; k < ctx->n_in && k < SIM_MAX_NODE_IO; k++) {
        memset(&conv_in[k], 0, sizeof conv_in[k]);
        in[k] = ctx->in[k];
        if (st != RD_OK || !ctx->in[k] || !ctx->in[k]->data || !f16_to_int8(s, n->in[k]))
            continue;
        st = rd_tensor_clone(&conv_in[k], ctx->in[k], err);
        if (st == RD_OK) {
            const sim_val_data *d = &s->vals[n->in[k]];
            sim_fake_quant_i8(conv_in[k].data, rd_tensor_numel(&conv_in[k]), d->scale, d->zero_point, NULL, NULL);
            in[k] = &conv_in[k];
            converted = true;
        }
    }
    if (st == RD_OK && converted) {
        sim_op_ctx c = *ctx;
        c.in = in;
        st = eval_int8_layer(s, node, &c, err);
        if (st == RD_OK && c.deferred) /* the float kernel, on the converted inputs */
            st = sim_eval_f32(&c, err);
    } else if (st == RD_OK) {
        st = eval_int8_layer(s, node, ctx, err);
    }
    for (int k = 0; k < ctx->n_in && k < SIM_MAX_NODE_IO; k++)
        rd_tensor_fini(&conv_in[k]);
    return st;
}

/* The int8 layer proper: its integer kernel when it has one and reads an int8 activation, else sim_defer. */
static rd_status eval_int8_layer(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    const sim_op_def *def = n->def;
    if (!kernels_apply(n) || !def->eval_i8 || n->n_in <= def->weight_in ||
        !(is_q8_activation(s, n->in[0]) || f16_to_int8(s, n->in[0])))
        return sim_defer(ctx); /* float kernel on dequantized values; requantized where it materialises */
    const sim_val_data *x = &s->vals[n->in[0]];
    sim_q8_layer q = {.in_scale = x->scale, .in_zp = x->zero_point};
    if (def->weight_in == 0)
        return def->eval_i8(ctx, &q, err); /* a lowered op's own constant weights (GlobalAveragePool) */
    const int wv = n->in[def->weight_in];
    if (!sim_const_weight(s, node)) {
        /* weights computed at run time: an integer product of two int8 activations where the op allows it */
        if (def->weight != RD_OP_WEIGHT_MATMUL || !(is_q8_activation(s, wv) || f16_to_int8(s, wv)))
            return sim_defer(ctx);
        q.b_scale = s->vals[wv].scale;
        q.b_zp = s->vals[wv].zero_point;
        return def->eval_i8(ctx, &q, err);
    }
    sim_node_data *d = &s->nodes[node];
    if (!d->q8_ready) {
        rd_status st = sim_q8_prepare_weights(s, node, err);
        if (st != RD_OK)
            return st;
    }
    q.w_q = d->w_q;
    q.w_scale = d->w_scale;
    q.w_zp = d->w_zp;
    q.n_w_scale = d->n_w_scale;
    q.c_const = bias_const(s, n);
    return def->eval_i8(ctx, &q, err);
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

rd_status sim_q16_prepare_weights(rd_sim *s, int node, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    sim_node_data *d = &s->nodes[node];
    int axis;
    int64_t group;
    bool per_tensor;
    const rd_tensor *w = weight_layout(s, node, &axis, &group, &per_tensor, err);
    if (!w)
        return err ? err->code : RD_E_INVAL;
    drop_q16_weights(d);
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
                               s->m->values[n->in[n->def->weight_in]].name);
    for (int64_t i = 0; i < numel; i++)
        d->w_c[i] = d->w_q16[i];
    d->q16_ready = true;
    return RD_OK;
}

rd_status sim_eval_int16(rd_sim *s, int node, sim_op_ctx *ctx, rd_error *err)
{
    const sim_node *n = &s->m->nodes[node];
    const sim_op_def *def = n->def;
    sim_q16_layer q = {0};
    if (!kernels_apply(n) || !def->eval_i16 || n->n_in <= def->weight_in ||
        !wide_activation(s, n->in[0], &q.in_scale, &q.in_zp, &q.in_bits))
        return sim_defer(ctx); /* float kernel on dequantized values; requantized where it materialises */
    if (def->weight_in == 0) { /* a lowered op's own constant weights (GlobalAveragePool) */
        q.w_bits = sim_weight_bits(s);
        q.w_pow2 = s->opt.dfp;
        return def->eval_i16(ctx, &q, err);
    }
    if (!sim_const_weight(s, node)) {
        if (def->weight != RD_OP_WEIGHT_MATMUL ||
            !wide_activation(s, n->in[def->weight_in], &q.b_scale, &q.b_zp, &q.b_bits))
            return sim_defer(ctx);
        return def->eval_i16(ctx, &q, err);
    }
    sim_node_data *d = &s->nodes[node];
    if (!d->q16_ready) {
        rd_status st = sim_q16_prepare_weights(s, node, err);
        if (st != RD_OK)
            return st;
    }
    q.w_c = d->w_c;
    q.w_scale = d->w_scale16;
    q.n_w_scale = d->n_w_scale16;
    q.c_const = bias_const(s, n);
    return def->eval_i16(ctx, &q, err);
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
        case RD_PREC_INT8:
            if (n->def && n->def->eval_i8 && sim_const_weight(s, i) && !d->q8_ready)
                st = sim_q8_prepare_weights(s, i, err);
            break;
        case RD_PREC_INT16:
            if (n->def && n->def->eval_i16 && sim_const_weight(s, i) && !d->q16_ready)
                st = sim_q16_prepare_weights(s, i, err);
            break;
        default:
            break;
        }
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}
