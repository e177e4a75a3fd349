/*
 * qdq_export.c: a simulation written as an ONNX model with QuantizeLinear/DequantizeLinear pairs, so
 * that any ONNX runtime reproduces its INT8 numerics (docs/numerics.md, "QDQ export").
 *
 * The optimised graph is written (BatchNorm folded, activations fused), so that Q/DQ sit only on the
 * tensors the simulation materialises: a Conv and its fused Relu run on float values in between, as
 * our integer Conv hands its unrequantized result to the activation. A materialised tensor keeps its
 * name on the dequantized side (the producer writes NAME_prequant), so consumers and graph outputs are
 * untouched; graph inputs keep theirs and consumers read NAME_dequantized. The integer form
 * (qdq_integer.c) writes the layers the simulation accumulates in int32 as ConvInteger/MatMulInteger.
 */
#include "onnx_pb.h"
#include "qdq_internal.h"

#include <stdarg.h>
#include <stdio.h>

void qdq_note(const qdq_writer *w, const char *fmt, ...)
{
    if (!w->notes || !w->notes->fn)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->notes->fn(w->notes->user, msg);
}

static bool name_taken(const qdq_writer *w, const char *name)
{
    if (sim_model_find(w->m, name) >= 0)
        return true;
    for (size_t i = 0; i < w->n_made; i++)
        if (strcmp(w->made[i], name) == 0)
            return true;
    return false;
}

/* A new name base+suffix (then base+suffix_2, ...) that no value of the model and no earlier one has. */
char *qdq_fresh_name(qdq_writer *w, const char *base, const char *suffix)
{
    if (w->n_made == w->cap_made) {
        size_t cap = w->cap_made ? w->cap_made * 2 : 256;
        char **grown = realloc(w->made, cap * sizeof *grown);
        if (!grown)
            return NULL;
        w->made = grown;
        w->cap_made = cap;
    }
    size_t len = strlen(base) + strlen(suffix) + 24;
    char *name = malloc(len);
    if (!name)
        return NULL;
    snprintf(name, len, "%s%s", base, suffix);
    for (int k = 2; name_taken(w, name); k++)
        snprintf(name, len, "%s%s_%d", base, suffix, k);
    w->made[w->n_made++] = name; /* owned by made[] */
    return name;
}

const char *qdq_value_use(const qdq_writer *w, int v)
{
    return w->use[v] ? w->use[v] : w->m->values[v].name;
}

const char *qdq_value_src(const qdq_writer *w, int v)
{
    return w->src[v] ? w->src[v] : w->m->values[v].name;
}

/* ---- opset -------------------------------------------------------------------------------------- */

/* The attributes of node n that are inputs at opset `to` (its table entry's attrs_to_inputs), or NULL when
   raising it to `to` moves none. */
static const char *const *moved_attrs(const sim_node *n, int to)
{
    const sim_op_def *d = n->def;
    if (n->domain[0] || !d || !d->attrs_to_inputs_at || n->opset >= d->attrs_to_inputs_at || to < d->attrs_to_inputs_at)
        return NULL;
    return d->attrs_to_inputs;
}

/* Whether node n (of opset `opset`) means at opset 13 what it meant, by its table entry's opset history. */
static bool same_at_13(const rd_model *m, const sim_node *n, int opset)
{
    const sim_op_def *d = n->def;
    if (!d || (d->until && d->until < 13))
        return false; /* unknown here, or gone by opset 13 (Upsample) */
    if (!d->same_from || opset >= d->same_from)
        return true;
    if (!d->same_on_last_axis)
        return false;
    /* the Softmax family before 13 flattens to 2-D at axis: the same as 13 only on the last axis */
    int rank = n->in[0] >= 0 ? m->values[n->in[0]].rank : -1;
    int64_t axis = sim_attr_int(n, "axis", 1);
    return rank >= 0 && (axis == -1 || axis == rank - 1);
}

/* Checks that every default-domain node keeps its meaning at opset 13 (those below 13 are raised). */
static rd_status check_raise(const rd_model *m, int opset, const char *why, rd_error *err)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        if (n->domain[0] || n->folded || same_at_13(m, n, opset))
            continue;
        if (n->def && n->def->same_on_last_axis)
            return rd_errorf(err, RD_E_UNSUPPORTED,
                             "%s: %s needs opset 13, and node '%s' (%s) on an axis other than the last means something "
                             "else at opset 13 than at the model's opset %d: not exported (re-export the model at "
                             "opset 13)",
                             m->path, why, n->name, n->op_type, opset);
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: %s needs opset 13, and node '%s' (%s) means something else at opset 13 than at "
                         "the model's opset %d: not exported (re-export the model at opset 13%s)",
                         m->path, why, n->name, n->op_type, opset,
                         strcmp(why, "QuantizeLinear") ? ", or quantize weights per tensor: --method layer" : "");
    }
    return RD_OK;
}

/* ---- the Q/DQ nodes ----------------------------------------------------------------------------- */

rd_status qdq_scalar_init(qdq_writer *w, const char *name, rd_dtype dt, double v, rd_error *err)
{
    rd_tensor t;
    rd_status st = rd_tensor_alloc(&t, dt, 0, NULL, err);
    if (st != RD_OK)
        return st;
    if (dt == RD_DT_F32)
        *(float *)t.data = (float)v;
    else if (dt == RD_DT_F64)
        *(double *)t.data = v;
    else if (dt == RD_DT_I8)
        *(int8_t *)t.data = (int8_t)v;
    else if (dt == RD_DT_U8)
        *(uint8_t *)t.data = (uint8_t)v;
    else
        *(int32_t *)t.data = (int32_t)v;
    st = rd_onnx_add_initializer(w->b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
    return st;
}

/* A DequantizeLinear node dqn of codes qn with scale sn and zero point zn into out: per channel along axis, per
   tensor when axis < 0. */
static void add_dequantize(qdq_writer *w, const char *dqn, const char *qn, const char *sn, const char *zn,
                           const char *out, int64_t axis)
{
    rd_onnx_node *dq = rd_onnx_add_node(w->b, "DequantizeLinear", dqn, (const char *const[]){qn, sn, zn}, 3,
                                        (const char *const[]){out}, 1);
    if (axis >= 0)
        rd_onnx_attr_int(dq, "axis", axis);
}

/* from -> QuantizeLinear -> DequantizeLinear -> to, with one activation's parameters. */
static rd_status add_qdq(qdq_writer *w, const char *base, const char *from, const char *to, float scale, int32_t zp,
                         rd_error *err)
{
    char *sn = qdq_fresh_name(w, base, "_scale"), *zn = qdq_fresh_name(w, base, "_zero_point");
    char *qn = qdq_fresh_name(w, base, "_quantized");
    char *qnode = qdq_fresh_name(w, base, "_QuantizeLinear"), *dqnode = qdq_fresh_name(w, base, "_DequantizeLinear");
    if (!sn || !zn || !qn || !qnode || !dqnode)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = qdq_scalar_init(w, sn, RD_DT_F32, scale, err);
    if (st == RD_OK)
        st = qdq_scalar_init(w, zn, RD_DT_I8, zp, err);
    if (st != RD_OK)
        return st;
    rd_onnx_add_node(w->b, "QuantizeLinear", qnode, (const char *const[]){from, sn, zn}, 3, (const char *const[]){qn},
                     1);
    add_dequantize(w, dqnode, qn, sn, zn, to, -1);
    return RD_OK;
}

/* from -> Cast(float16) -> Cast(float) -> to: a float16 tensor of a hybrid model. */
static rd_status add_half(qdq_writer *w, const char *base, const char *from, const char *to, rd_error *err)
{
    char *hn = qdq_fresh_name(w, base, "_float16"), *c1 = qdq_fresh_name(w, base, "_CastToFloat16"),
         *c2 = qdq_fresh_name(w, base, "_CastToFloat");
    if (!hn || !c1 || !c2)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_onnx_attr_int(rd_onnx_add_node(w->b, "Cast", c1, (const char *const[]){from}, 1, (const char *const[]){hn}, 1),
                     "to", RD_DT_F16);
    rd_onnx_attr_int(rd_onnx_add_node(w->b, "Cast", c2, (const char *const[]){hn}, 1, (const char *const[]){to}, 1),
                     "to", RD_DT_F32);
    return RD_OK;
}

/* What a materialised float tensor needs: 0 nothing, 1 Q/DQ, 2 float16 Casts, 3 float16 Casts then Q/DQ (the
   output of one of RKNN's float16 ops in an int8 model, converted back for its readers). */
static int tensor_kind(const qdq_writer *w, int v, rd_error *err, rd_status *st)
{
    const sim_value *val = &w->m->values[v];
    if (val->konst || val->virtual_out || val->dtype != RD_DT_F32)
        return 0;
    const sim_val_data *d = &w->s->vals[v];
    if (d->prec == RD_PREC_FP16)
        return 2;
    const int int8_kind = d->via_f16 ? 3 : 1;
    if (d->prec == RD_PREC_INT16) {
        *st = rd_errorf(err, RD_E_UNSUPPORTED,
                        "tensor '%s' is int16: the QDQ export writes int8 and float16 tensors only (not yet int16)",
                        val->name);
        return -1;
    }
    if (d->prec != RD_PREC_INT8)
        return 0;
    if (!d->quantized) {
        *st = rd_errorf(err, RD_E_INVAL, "tensor '%s' has no int8 parameters: calibrate or import a cfg first",
                        val->name);
        return -1;
    }
    return int8_kind;
}

static rd_status add_conversion(qdq_writer *w, int v, int kind, const char *from, const char *to, rd_error *err)
{
    const sim_val_data *d = &w->s->vals[v];
    const char *base = w->m->values[v].name;
    if (kind == 2)
        return add_half(w, base, from, to, err);
    if (kind == 3) { /* computed in float16 (rounded to half), then exDataConvert to int8 */
        const char *half = qdq_fresh_name(w, base, "_as_float16");
        rd_status st = half ? add_half(w, base, from, half, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
        if (st != RD_OK)
            return st;
        from = half;
    }
    return add_qdq(w, base, from, to, d->scale, d->zero_point, err);
}

/* ---- weights and biases ------------------------------------------------------------------------- */

bool qdq_int8_activation(const qdq_writer *w, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &w->m->values[v];
    const sim_val_data *d = &w->s->vals[v];
    return !val->konst && !val->virtual_out && d->prec == RD_PREC_INT8 && d->quantized && val->dtype == RD_DT_F32;
}

/* A float16 activation with int8 parameters: what an int8 layer reads of it is on its int8 grid. */
static bool half_on_int8_grid(const qdq_writer *w, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &w->m->values[v];
    const sim_val_data *d = &w->s->vals[v];
    return !val->konst && !val->virtual_out && val->dtype == RD_DT_F32 && d->prec == RD_PREC_FP16 && !d->via_f16 &&
           d->quantized;
}

/* Node i reads an int8 activation (or a float16 one converted to int8) and runs at int8 (not a float16 layer
   of a hybrid model): the simulation computes it with int8 weights. */
static bool runs_int8(const qdq_writer *w, int i)
{
    const int x = w->m->nodes[i].in[0];
    return (qdq_int8_activation(w, x) || half_on_int8_grid(w, x)) && sim_node_precision(w->s, i) == RD_PREC_INT8;
}

/* Int8 weights of node i as initializer + DequantizeLinear, and a Conv's bias as int32. */
static rd_status add_weights(qdq_writer *w, int i, bool *fake_quant_note, rd_error *err)
{
    const sim_node *n = &w->m->nodes[i];
    rd_sim_weights sw;
    if (w->integer[i] || !runs_int8(w, i) || rd_sim_weights_get(w->s, i, &sw, NULL) != RD_OK)
        return RD_OK;
    const sim_value *wv = &w->m->values[sw.value];
    const rd_tensor *wf = wv->konst;
    int64_t numel = rd_tensor_numel(wf);
    rd_status st;
    char *dq_out = qdq_fresh_name(w, wv->name, "_dequantized");
    if (!dq_out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    bool per_channel = sw.n_scale > 1;
    if (per_channel && (sw.group != 1 || wf->dims[sw.axis] != sw.n_scale)) {
        /* grouped ConvTranspose: its channels do not follow one axis, which DequantizeLinear needs */
        rd_tensor t;
        if ((st = rd_tensor_alloc(&t, RD_DT_F32, wf->rank, wf->dims, err)) != RD_OK)
            return st;
        int64_t inner = 1;
        for (int d = 2; d < wf->rank; d++)
            inner *= wf->dims[d];
        int64_t per_g_in = wf->dims[0] / sw.group, m_per_g = wf->dims[1];
        for (int64_t k = 0; k < numel; k++) {
            int64_t c = k / (m_per_g * inner), mm = (k / inner) % m_per_g;
            int64_t ch = (c / per_g_in) * m_per_g + mm;
            ((float *)t.data)[k] = (float)(sw.q[k] - (sw.zero_point ? sw.zero_point[ch] : 0)) * sw.scale[ch];
        }
        st = rd_onnx_add_initializer(w->b, dq_out, &t, RD_ONNX_RAW);
        rd_tensor_fini(&t);
        *fake_quant_note = true;
    } else {
        rd_tensor q = {.dtype = RD_DT_I8, .rank = wf->rank, .data = (void *)sw.q};
        memcpy(q.dims, wf->dims, sizeof q.dims);
        char *qn = qdq_fresh_name(w, wv->name, "_quantized"), *sn = qdq_fresh_name(w, wv->name, "_scale"),
             *zn = qdq_fresh_name(w, wv->name, "_zero_point"), *dqn = qdq_fresh_name(w, wv->name, "_DequantizeLinear");
        if (!qn || !sn || !zn || !dqn)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        st = rd_onnx_add_initializer(w->b, qn, &q, RD_ONNX_RAW);
        rd_tensor scale, zp;
        int64_t nd = sw.n_scale;
        if (st == RD_OK && (st = rd_tensor_alloc(&scale, RD_DT_F32, per_channel ? 1 : 0, &nd, err)) == RD_OK) {
            if ((st = rd_tensor_alloc(&zp, RD_DT_I8, per_channel ? 1 : 0, &nd, err)) == RD_OK) {
                memcpy(scale.data, sw.scale, (size_t)sw.n_scale * sizeof(float));
                for (int c = 0; sw.zero_point && c < sw.n_scale; c++) /* asymmetric weights */
                    ((int8_t *)zp.data)[c] = (int8_t)sw.zero_point[c];
                st = rd_onnx_add_initializer(w->b, sn, &scale, RD_ONNX_RAW);
                if (st == RD_OK)
                    st = rd_onnx_add_initializer(w->b, zn, &zp, RD_ONNX_RAW);
                rd_tensor_fini(&zp);
            }
            rd_tensor_fini(&scale);
        }
        if (st != RD_OK)
            return st;
        add_dequantize(w, dqn, qn, sn, zn, dq_out, per_channel ? sw.axis : -1);
    }
    if (st != RD_OK)
        return st;
    w->w_in[i] = dq_out;
    w->replaced_reads[sw.value]++;
    /* Conv bias: int32 at in_scale * w_scale, as the integer Conv adds it into its accumulator */
    if (strcmp(n->op_type, "Conv") != 0 || n->n_in < 3 || n->in[2] < 0)
        return RD_OK;
    const sim_value *bv = &w->m->values[n->in[2]];
    if (!bv->konst || bv->konst->dtype != RD_DT_F32 || bv->konst->rank != 1 ||
        (sw.n_scale > 1 && bv->konst->dims[0] != sw.n_scale))
        return RD_OK;
    float in_scale = w->s->vals[n->in[0]].scale;
    int64_t nb = bv->konst->dims[0];
    int64_t ns = sw.n_scale > 1 ? nb : 0;
    rd_tensor bq, bs, bz;
    if ((st = rd_tensor_alloc(&bq, RD_DT_I32, 1, &nb, err)) != RD_OK)
        return st;
    if ((st = rd_tensor_alloc(&bs, RD_DT_F32, ns ? 1 : 0, &ns, err)) != RD_OK) {
        rd_tensor_fini(&bq);
        return st;
    }
    if ((st = rd_tensor_alloc(&bz, RD_DT_I32, ns ? 1 : 0, &ns, err)) != RD_OK) {
        rd_tensor_fini(&bq);
        rd_tensor_fini(&bs);
        return st;
    }
    for (int64_t c = 0; c < nb; c++) {
        double sc = (double)in_scale * (double)sw.scale[sw.n_scale > 1 ? c : 0];
        ((int32_t *)bq.data)[c] = sim_quant_bias_i32(((const float *)bv->konst->data)[c], sc);
        if (ns || c == 0)
            ((float *)bs.data)[ns ? c : 0] = (float)sc;
    }
    char *qn = qdq_fresh_name(w, bv->name, "_quantized"), *sn = qdq_fresh_name(w, bv->name, "_scale"),
         *zn = qdq_fresh_name(w, bv->name, "_zero_point"), *dqn = qdq_fresh_name(w, bv->name, "_DequantizeLinear"),
         *out = qdq_fresh_name(w, bv->name, "_dequantized");
    if (!qn || !sn || !zn || !dqn || !out)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        st = rd_onnx_add_initializer(w->b, qn, &bq, RD_ONNX_RAW);
    if (st == RD_OK)
        st = rd_onnx_add_initializer(w->b, sn, &bs, RD_ONNX_RAW);
    if (st == RD_OK)
        st = rd_onnx_add_initializer(w->b, zn, &bz, RD_ONNX_RAW);
    rd_tensor_fini(&bq);
    rd_tensor_fini(&bs);
    rd_tensor_fini(&bz);
    if (st != RD_OK)
        return st;
    add_dequantize(w, dqn, qn, sn, zn, out, ns ? 0 : -1);
    w->b_in[i] = out;
    w->replaced_reads[n->in[2]]++;
    return RD_OK;
}

/* ---- float16 layers' constants ------------------------------------------------------------------ */

/* A float16 layer of a hybrid model reads a float32 constant (weights, bias, ...) rounded to half, as the
   simulation does: written as a float16 initializer + Cast to float, once per constant. */
static bool reads_half(const qdq_writer *w, int i, int k)
{
    const sim_node *n = &w->m->nodes[i];
    int v = n->in[k];
    return v >= 0 && !n->folded && w->m->values[v].konst && w->m->values[v].konst->dtype == RD_DT_F32 &&
           sim_node_precision(w->s, i) == RD_PREC_FP16;
}

/* A float16 layer reads an int8 activation converted to half, as the simulation does (exDataConvert int8 ->
   float16, sim_layers.c): Cast to float16 and back, once per activation, written before its first such reader. */
static bool reads_half_activation(const qdq_writer *w, int i, int k)
{
    const sim_node *n = &w->m->nodes[i];
    int v = n->in[k];
    return v >= 0 && !n->folded && qdq_int8_activation(w, v) && sim_node_precision(w->s, i) == RD_PREC_FP16;
}

/* An int8 layer reads a float16 activation with int8 parameters converted to int8 on its own grid, as the
   simulation does (exDataConvert float16 -> int8, sim_layers.c): Q/DQ, once per activation. */
static bool reads_int8_of_half(const qdq_writer *w, int i, int k)
{
    const sim_node *n = &w->m->nodes[i];
    return !n->folded && sim_node_precision(w->s, i) == RD_PREC_INT8 && half_on_int8_grid(w, n->in[k]);
}

/* The conversions node i's activation inputs need before it: to half for a float16 layer, to the int8 grid
   for an int8 layer reading a float16 tensor (w->half holds either: a value is int8 or float16, not both). */
static rd_status add_half_activations(qdq_writer *w, int i, rd_error *err)
{
    const sim_node *n = &w->m->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        bool to_half = reads_half_activation(w, i, k);
        if ((!to_half && !reads_int8_of_half(w, i, k)) || w->half[v])
            continue;
        const char *base = w->m->values[v].name;
        char *out = qdq_fresh_name(w, base, to_half ? "_as_float16" : "_as_int8");
        rd_status st =
            !out      ? rd_errorf(err, RD_E_NOMEM, "out of memory")
            : to_half ? add_half(w, base, qdq_value_use(w, v), out, err)
                      : add_qdq(w, base, qdq_value_use(w, v), out, w->s->vals[v].scale, w->s->vals[v].zero_point, err);
        if (st != RD_OK)
            return st;
        w->half[v] = out;
    }
    return RD_OK;
}

static rd_status add_half_consts(qdq_writer *w, int i, rd_error *err)
{
    const sim_node *n = &w->m->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
        if (!reads_half(w, i, k))
            continue;
        int v = n->in[k];
        w->replaced_reads[v]++;
        if (w->half[v])
            continue;
        const sim_value *val = &w->m->values[v];
        rd_tensor t;
        rd_status st = rd_tensor_alloc(&t, RD_DT_F16, val->konst->rank, val->konst->dims, err);
        if (st != RD_OK)
            return st;
        int64_t count = rd_tensor_numel(&t);
        for (int64_t j = 0; j < count; j++)
            ((uint16_t *)t.data)[j] = rd_f32_to_f16(((const float *)val->konst->data)[j]);
        char *hn = qdq_fresh_name(w, val->name, "_float16"), *cn = qdq_fresh_name(w, val->name, "_CastToFloat"),
             *out = qdq_fresh_name(w, val->name, "_float16_as_float");
        st = hn && cn && out ? rd_onnx_add_initializer(w->b, hn, &t, RD_ONNX_RAW)
                             : rd_errorf(err, RD_E_NOMEM, "out of memory");
        rd_tensor_fini(&t);
        if (st != RD_OK)
            return st;
        rd_onnx_attr_int(
            rd_onnx_add_node(w->b, "Cast", cn, (const char *const[]){hn}, 1, (const char *const[]){out}, 1), "to",
            RD_DT_F32);
        w->half[v] = out;
    }
    return RD_OK;
}

/* ---- the model ---------------------------------------------------------------------------------- */

static rd_status add_io(rd_onnx_builder *b, const sim_value *v, bool output)
{
    const char *const *params = (const char *const *)v->dim_params;
    int rank = v->rank > RD_MAX_RANK ? -1 : v->rank;
    return output ? rd_onnx_add_output(b, v->name, v->dtype, rank, v->dims, params)
                  : rd_onnx_add_input(b, v->name, v->dtype, rank, v->dims, params);
}

/* The model's opset for the default domain, raised when the Q/DQ nodes need more. */
static rd_status choose_opset(qdq_writer *w, bool per_channel, int *out, rd_error *err)
{
    int opset = 1;
    for (int i = 0; i < w->m->n_opsets; i++)
        if (!w->m->opsets[i].domain[0] || strcmp(w->m->opsets[i].domain, "ai.onnx") == 0)
            opset = w->m->opsets[i].version;
    int need = per_channel ? 13 : 10;
    *out = opset;
    if (opset >= need)
        return RD_OK;
    rd_status st = check_raise(w->m, opset,
                               per_channel ? "DequantizeLinear with per-channel scales (axis)" : "QuantizeLinear", err);
    if (st != RD_OK)
        return st;
    qdq_note(w,
             "opset raised from %d to 13 for the QuantizeLinear/DequantizeLinear nodes (attributes that became "
             "inputs were moved; no other operator of this model changed meaning in between)",
             opset);
    *out = 13;
    return RD_OK;
}

/* Reads of each value by nodes (weights whose every read is replaced are not written). */
static void count_reads(const rd_model *m, int *reads)
{
    for (int i = 0; i < m->n_nodes; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] >= 0)
                reads[m->nodes[i].in[k]]++;
}

/* One node of the optimised graph, its inputs renamed; attributes that became inputs converted. */
static rd_status write_node(qdq_writer *w, int i, int opset, rd_error *err)
{
    const rd_model *m = w->m;
    const sim_node *n = &m->nodes[i];
    const char *const *moved = n->opset >= opset ? NULL : moved_attrs(n, opset); /* raised: attributes move */
    int n_in = n->n_in, extra = 0;
    const char *extra_names[3] = {NULL, NULL, NULL};
    if (moved) {
        for (int k = 0; k < 3 && moved[k]; k++) {
            size_t count = 0;
            const int64_t *vals = sim_attr_ints(n, moved[k], &count);
            if (!vals)
                continue; /* absent: the input is omitted (or trailing and left out) */
            char suffix[32];
            snprintf(suffix, sizeof suffix, "_%s", moved[k]);
            char *full = qdq_fresh_name(w, n->name[0] ? n->name : m->values[n->out[0]].name, suffix);
            if (!full)
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            rd_tensor t;
            int64_t d = (int64_t)count;
            rd_status st = rd_tensor_alloc(&t, RD_DT_I64, 1, &d, err);
            if (st != RD_OK)
                return st;
            if (count)
                memcpy(t.data, vals, count * sizeof *vals);
            st = rd_onnx_add_initializer(w->b, full, &t, RD_ONNX_RAW);
            rd_tensor_fini(&t);
            if (st != RD_OK)
                return st;
            extra_names[k] = full;
            extra = k + 1;
        }
    }
    n_in = n->n_in + extra;
    const char **in = sim_calloc_array((size_t)n_in + 1, sizeof *in);
    const char **out = sim_calloc_array((size_t)n->n_out + 1, sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (int k = 0; k < n->n_in; k++)
        in[k] = n->in[k] < 0           ? NULL
                : k == 1 && w->w_in[i] ? w->w_in[i]
                : k == 2 && w->b_in[i] ? w->b_in[i]
                : reads_half(w, i, k) || reads_half_activation(w, i, k) || reads_int8_of_half(w, i, k)
                    ? w->half[n->in[k]]
                    : qdq_value_use(w, n->in[k]);
    for (int k = 0; k < extra; k++)
        in[n->n_in + k] = extra_names[k];
    for (int k = 0; k < n->n_out; k++)
        out[k] = n->out[k] < 0 ? NULL : qdq_value_src(w, n->out[k]);
    rd_onnx_node *nn = rd_onnx_add_node(w->b, n->op_type, n->name, in, n_in, out, n->n_out);
    free(in);
    free(out);
    if (*n->domain)
        rd_onnx_node_set_domain(nn, n->domain);
    for (int k = 0; k < n->n_attr; k++) {
        bool is_input = false;
        for (int j = 0; moved && j < 3 && moved[j]; j++)
            is_input = is_input || strcmp(n->attrs[k].name, moved[j]) == 0;
        if (!is_input)
            sim_onnx_add_attr(nn, &n->attrs[k]);
    }
    return RD_OK;
}

static rd_status write_graph(qdq_writer *w, int opset, const int *reads, rd_error *err)
{
    const rd_model *m = w->m;
    rd_onnx_set_producer(w->b, "rknn-diag export-qdq", rd_version());
    rd_onnx_add_opset(w->b, "", opset);
    for (int i = 0; i < m->n_opsets; i++)
        if (m->opsets[i].domain[0] && strcmp(m->opsets[i].domain, "ai.onnx") != 0)
            rd_onnx_add_opset(w->b, m->opsets[i].domain, m->opsets[i].version);
    for (int i = 0; i < m->n_inputs; i++)
        add_io(w->b, &m->values[m->inputs[i]], false);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst || sv->is_graph_input)
            continue;
        if (sv->producer >= 0 && !m->nodes[sv->producer].folded)
            continue;
        if (reads[v] > 0 && reads[v] == w->replaced_reads[v] && !sv->is_graph_output)
            continue;                                  /* float weights replaced by their int8 codes everywhere */
        if (sv->is_initializer || sv->producer >= 0) { /* values folded at load are written as constants */
            rd_onnx_add_initializer(w->b, sv->name, sv->konst, RD_ONNX_RAW);
        } else {
            const char *outs[1] = {sv->name};
            rd_onnx_attr_tensor(rd_onnx_add_node(w->b, "Constant", sv->name, NULL, 0, outs, 1), "value", sv->konst,
                                RD_ONNX_RAW);
        }
    }
    rd_status st = RD_OK;
    for (int i = 0; i < m->n_inputs && st == RD_OK; i++) {
        int v = m->inputs[i];
        int kind = tensor_kind(w, v, err, &st);
        if (kind > 0) {
            if (!(w->use[v] = qdq_fresh_name(w, m->values[v].name, "_dequantized")))
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            st = add_conversion(w, v, kind, m->values[v].name, w->use[v], err);
        }
    }
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++) {
        const sim_node *n = &m->nodes[i];
        if (n->folded)
            continue;
        st = add_half_activations(w, i, err);
        if (st == RD_OK)
            st = w->integer[i] ? qdq_integer_write(w, i, err) : write_node(w, i, opset, err);
        for (int k = 0; k < n->n_out && st == RD_OK; k++) {
            int v = n->out[k];
            if (v < 0 || !w->src[v])
                continue;
            int kind = tensor_kind(w, v, err, &st);
            if (kind > 0)
                st = add_conversion(w, v, kind, w->src[v], m->values[v].name, err);
        }
    }
    if (st != RD_OK)
        return st;
    for (int i = 0; i < m->n_outputs; i++)
        add_io(w->b, &m->values[m->outputs[i]], true);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst && !sv->is_graph_input && !sv->is_graph_output && sv->producer >= 0 && sv->rank >= 0 &&
            sv->rank <= RD_MAX_RANK && sv->dtype != RD_DT_UNDEFINED)
            rd_onnx_add_value_info(w->b, sv->name, sv->dtype, sv->rank, sv->dims, (const char *const *)sv->dim_params);
    }
    return RD_OK;
}

rd_status rd_sim_export_qdq(rd_sim *s, void **out_buf, size_t *out_len, const struct rd_warn_sink *notes, rd_error *err)
{
    return rd_sim_export_qdq_form(s, RD_QDQ_FORM_QDQ, out_buf, out_len, notes, err);
}

rd_status rd_sim_export_qdq_form(rd_sim *s, rd_qdq_form form, void **out_buf, size_t *out_len,
                                 const struct rd_warn_sink *notes, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    const rd_model *m = s->m;
    size_t nv = (size_t)m->n_values + 1, nn = (size_t)m->n_nodes + 1;
    qdq_writer w = {.s = s, .m = m, .notes = notes, .form = form};
    w.src = sim_calloc_array(nv, sizeof *w.src);
    w.use = sim_calloc_array(nv, sizeof *w.use);
    w.w_in = sim_calloc_array(nn, sizeof *w.w_in);
    w.b_in = sim_calloc_array(nn, sizeof *w.b_in);
    w.replaced_reads = sim_calloc_array(nv, sizeof *w.replaced_reads);
    w.integer = sim_calloc_array(nn, sizeof *w.integer);
    w.u8 = sim_calloc_array(nv, sizeof *w.u8);
    w.u8_zp = sim_calloc_array(nv, sizeof *w.u8_zp);
    w.half = sim_calloc_array(nv, sizeof *w.half);
    int *reads = sim_calloc_array(nv, sizeof *reads);
    rd_status st = RD_OK;
    if (!w.src || !w.use || !w.w_in || !w.b_in || !w.replaced_reads || !w.integer || !w.u8 || !w.u8_zp || !w.half ||
        !reads)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK && form == RD_QDQ_FORM_INTEGER)
        st = qdq_integer_plan(&w, err);
    /* producers of materialised tensors write NAME_prequant; the conversion then gives back NAME */
    for (int v = 0; v < m->n_values && st == RD_OK; v++) {
        const sim_value *val = &m->values[v];
        if (val->producer < 0 || m->nodes[val->producer].folded)
            continue;
        int kind = tensor_kind(&w, v, err, &st);
        if (kind > 0 && !(w.src[v] = qdq_fresh_name(&w, val->name, kind == 2 ? "_float32" : "_prequant")))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    bool per_channel = false, fake_quant = false;
    if (st == RD_OK) {
        rd_sim_weights sw;
        for (int i = 0; i < m->n_nodes; i++)
            if (!w.integer[i] && runs_int8(&w, i) && rd_sim_weights_get(s, i, &sw, NULL) == RD_OK && sw.n_scale > 1 &&
                sw.group == 1)
                per_channel = true;
    }
    int opset = 0;
    if (st == RD_OK)
        st = choose_opset(&w, per_channel, &opset, err);
    w.opset = opset;
    if (st == RD_OK && !(w.b = rd_onnx_builder_create(m->ir_version > 7 ? m->ir_version : 7, 0)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    /* weights first: their DequantizeLinear nodes and initializers precede every reader */
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++)
        st = add_weights(&w, i, &fake_quant, err);
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++)
        st = add_half_consts(&w, i, err);
    if (st == RD_OK) {
        count_reads(m, reads);
        st = write_graph(&w, opset, reads, err);
    }
    if (st == RD_OK && fake_quant)
        qdq_note(&w, "grouped ConvTranspose weights are written as float values of their int8 codes (their channels do "
                     "not follow one axis, which DequantizeLinear needs)");
    if (st == RD_OK)
        st = rd_onnx_builder_write(w.b, out_buf, out_len, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s: QDQ export", m->path);
    rd_onnx_builder_destroy(w.b);
    for (size_t i = 0; i < w.n_made; i++)
        free(w.made[i]);
    free(w.made);
    free(w.src);
    free(w.use);
    free(w.w_in);
    free(w.b_in);
    free(w.replaced_reads);
    free(w.integer);
    free(w.u8);
    free(w.u8_zp);
    free(w.half);
    free(reads);
    return st;
}
