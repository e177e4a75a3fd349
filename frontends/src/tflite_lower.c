/*
 * tflite_lower.c: a read .tflite model (tfl_model) written as ONNX for the simulator: the driver, constants,
 * names and the model-precision graph.
 *
 * Two graphs can be made of one quantized model:
 *  - float32 (the golden): constants dequantized (scale * (q - zero_point), per channel where the model has it),
 *    float16 constants kept and Cast, QUANTIZE and DEQUANTIZE of activations become Identity, every
 *    activation float32;
 *  - the model's own arithmetic (`--precision model`): tensors hold the model's codes (int8, int16, int32);
 *    CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED become the "tflite" domain's integer operators
 *    (simulator/src/ops/op_tflite.c, TFLite's reference arithmetic bit for bit); RESHAPE, SQUEEZE,
 *    EXPAND_DIMS and TRANSPOSE move the codes; QUANTIZE is TFLiteQuantize and DEQUANTIZE DequantizeLinear;
 *    every other operator reads its quantized inputs through DequantizeLinear, computes in float32 and writes
 *    its output through TFLiteQuantize (TFLite's rounding, half away from zero): the same values where TFLite's
 *    integer kernel is exact (pools, concatenation, activations of one scale), within one code elsewhere.
 */
#include "tflite_lower.h"

#include <math.h>
#include <stdio.h>

const char *tl_fresh(tl_ctx *L, const char *base, const char *suffix)
{
    const char *s = fe_names_fresh(&L->names, base, suffix);
    if (!s)
        tl_fail(L, RD_E_NOMEM, "out of memory");
    return s;
}

const char *tl_where(tl_ctx *L, const tfl_op *o, char *buf, size_t len)
{
    char code[32];
    const char *out = o->n_out ? L->tname[o->out[0]] : "";
    snprintf(buf, len, "operator #%zu '%s' (%s%s%s%s, offset %zu)", L->op_index, out,
             tfl_op_name(o->code, code, sizeof code), o->custom ? " '" : "", o->custom ? o->custom : "",
             o->custom ? "'" : "", o->offset);
    return buf;
}

/* ---- constants -------------------------------------------------------------------------------------------- */

static bool is_qtype(rd_dtype dt)
{
    return dt == RD_DT_I8 || dt == RD_DT_U8 || dt == RD_DT_I16 || dt == RD_DT_I32 || dt == RD_DT_I64;
}

/* The name a constant's first initializer takes: the tensor's own, later forms a suffixed one. */
static const char *const_name(tl_ctx *L, int t, const char *suffix)
{
    if (!L->tname_taken[t]) {
        L->tname_taken[t] = true;
        return L->tname[t];
    }
    return tl_fresh(L, L->tname[t], suffix);
}

static rd_status add_init(tl_ctx *L, const char *name, rd_tensor *x)
{
    rd_error e;
    rd_status st = rd_onnx_add_initializer(L->b, name, x, RD_ONNX_RAW);
    rd_tensor_fini(x);
    if (st != RD_OK) {
        rd_onnx_builder_status(L->b, &e);
        return tl_fail(L, st, "%s", e.msg);
    }
    return RD_OK;
}

/* A constant as stored (shape tensors, integer indices, the integer graph's weights and biases). */
const char *tl_const_raw(tl_ctx *L, int t)
{
    if (L->c_raw[t])
        return L->c_raw[t];
    const tfl_tensor *tt = &L->m->tensors[t];
    rd_tensor x = {0};
    rd_error e;
    if (rd_tensor_alloc(&x, tt->dtype, tt->rank, tt->dims, &e) != RD_OK) {
        tl_fail(L, e.code, "tensor '%s': %s", tt->name, e.msg);
        return NULL;
    }
    if (tt->data_len)
        memcpy(x.data, tt->data, tt->data_len);
    const char *name = const_name(L, t, ":raw");
    if (!name || add_init(L, name, &x) != RD_OK)
        return NULL;
    return L->c_raw[t] = name;
}

const char *tl_const_f32(tl_ctx *L, int t, const int *perm)
{
    if (!perm && L->m->tensors[t].dtype == RD_DT_F32 && !L->m->tensors[t].n_q)
        return tl_const_raw(L, t);
    if (!perm && L->c_f32[t])
        return L->c_f32[t];
    const tfl_tensor *tt = &L->m->tensors[t];
    rd_tensor x = {0};
    rd_error e;
    if (rd_tensor_alloc(&x, RD_DT_F32, tt->rank, tt->dims, &e) != RD_OK) {
        tl_fail(L, e.code, "tensor '%s': %s", tt->name, e.msg);
        return NULL;
    }
    int64_t n = rd_tensor_numel(&x);
    float *f = x.data;
    const rd_dtype_info *di = rd_dtype_get(tt->dtype);
    int64_t inner = 1, len = 1;
    if (tt->n_q > 1) {
        len = tt->dims[tt->qdim];
        for (int d = tt->qdim + 1; d < tt->rank; d++)
            inner *= tt->dims[d];
    }
    for (int64_t i = 0; i < n; i++) {
        if (di->is_float) {
            f[i] = fe_load_float(tt->dtype, tt->data, i);
            continue;
        }
        int64_t q = 0;
        switch (tt->dtype) {
        case RD_DT_I8:
            q = (int8_t)tt->data[i];
            break;
        case RD_DT_U8:
            q = tt->data[i];
            break;
        case RD_DT_I16: {
            int16_t v;
            memcpy(&v, tt->data + 2 * i, 2);
            q = v;
            break;
        }
        case RD_DT_I32: {
            int32_t v;
            memcpy(&v, tt->data + 4 * i, 4);
            q = v;
            break;
        }
        case RD_DT_I64: {
            int64_t v;
            memcpy(&v, tt->data + 8 * i, 8);
            q = v;
            break;
        }
        default:
            break;
        }
        size_t c = tt->n_q > 1 ? (size_t)((i / inner) % len) : 0;
        f[i] = tt->n_q ? (float)((double)tt->scale[c] * (double)(q - tt->zero_point[c])) : (float)q;
    }
    if (perm) { /* a transposed copy (conv weights to OIHW) */
        rd_tensor y = {0};
        int64_t dims[RD_MAX_RANK];
        for (int d = 0; d < tt->rank; d++)
            dims[d] = tt->dims[perm[d]];
        if (rd_tensor_alloc(&y, RD_DT_F32, tt->rank, dims, &e) != RD_OK) {
            rd_tensor_fini(&x);
            tl_fail(L, e.code, "tensor '%s': %s", tt->name, e.msg);
            return NULL;
        }
        int64_t stride[RD_MAX_RANK], idx[RD_MAX_RANK] = {0};
        for (int d = tt->rank - 1, s = 1; d >= 0; s *= (int)tt->dims[d], d--)
            stride[d] = s;
        float *g = y.data;
        for (int64_t i = 0; i < n; i++) {
            int64_t src = 0;
            for (int d = 0; d < tt->rank; d++)
                src += idx[d] * stride[perm[d]];
            g[i] = f[src];
            for (int d = tt->rank - 1; d >= 0 && ++idx[d] == dims[d]; d--)
                idx[d] = 0;
        }
        rd_tensor_fini(&x);
        x = y;
    }
    const char *name = const_name(L, t, perm ? ":t" : ":f32");
    if (!name || add_init(L, name, &x) != RD_OK)
        return NULL;
    if (!perm)
        L->c_f32[t] = name;
    return name;
}

const char *tl_const_i64(tl_ctx *L, const char *base, const char *suffix, const int64_t *v, int n)
{
    const char *name = tl_fresh(L, base, suffix);
    rd_tensor x = {0};
    rd_error e;
    if (!name)
        return NULL;
    if (rd_tensor_alloc(&x, RD_DT_I64, 1, (const int64_t[]){n}, &e) != RD_OK) {
        tl_fail(L, e.code, "%s", e.msg);
        return NULL;
    }
    if (n)
        memcpy(x.data, v, (size_t)n * sizeof *v);
    return add_init(L, name, &x) == RD_OK ? name : NULL;
}

const char *tl_const_scalar(tl_ctx *L, const char *base, const char *suffix, float v)
{
    const char *name = tl_fresh(L, base, suffix);
    rd_tensor x = {0};
    rd_error e;
    if (!name)
        return NULL;
    if (rd_tensor_alloc(&x, RD_DT_F32, 0, NULL, &e) != RD_OK) {
        tl_fail(L, e.code, "%s", e.msg);
        return NULL;
    }
    *(float *)x.data = v;
    return add_init(L, name, &x) == RD_OK ? name : NULL;
}

/* A scalar zero point of dtype dt (DequantizeLinear's third input). */
static const char *const_zp(tl_ctx *L, const char *base, rd_dtype dt, int64_t zp)
{
    const char *name = tl_fresh(L, base, ":zero_point");
    rd_tensor x = {0};
    rd_error e;
    if (!name)
        return NULL;
    if (rd_tensor_alloc(&x, dt, 0, NULL, &e) != RD_OK) {
        tl_fail(L, e.code, "%s", e.msg);
        return NULL;
    }
    if (dt == RD_DT_I8)
        *(int8_t *)x.data = (int8_t)zp;
    else if (dt == RD_DT_U8)
        *(uint8_t *)x.data = (uint8_t)zp;
    else
        *(int16_t *)x.data = (int16_t)zp;
    return add_init(L, name, &x) == RD_OK ? name : NULL;
}

bool tl_const_ints(tl_ctx *L, const tfl_op *o, int k, int64_t *out, int max, int *n)
{
    char w[200];
    int t = k < o->n_in ? o->in[k] : -1;
    const tfl_tensor *tt = t >= 0 ? &L->m->tensors[t] : NULL;
    if (!tt || !tt->data || (tt->dtype != RD_DT_I32 && tt->dtype != RD_DT_I64) || tt->rank > 2) {
        tl_fail(L, RD_E_UNSUPPORTED, "%s: input %d must be a constant int32 tensor (a computed one is not supported)",
                tl_where(L, o, w, sizeof w), k);
        return false;
    }
    size_t count = tt->data_len / (tt->dtype == RD_DT_I32 ? 4 : 8);
    if (count > (size_t)max) {
        tl_fail(L, RD_E_PARSE, "%s: input %d holds %zu values (at most %d)", tl_where(L, o, w, sizeof w), k, count,
                max);
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        if (tt->dtype == RD_DT_I32) {
            int32_t v;
            memcpy(&v, tt->data + 4 * i, 4);
            out[i] = v;
        } else {
            memcpy(&out[i], tt->data + 8 * i, 8);
        }
    }
    *n = (int)count;
    return true;
}

const char *tl_in(tl_ctx *L, const tfl_op *o, int k)
{
    if (k >= o->n_in || o->in[k] < 0)
        return NULL;
    if (L->in_override[k])
        return L->in_override[k];
    int t = o->in[k];
    const tfl_tensor *tt = &L->m->tensors[t];
    if (!tt->data)
        return L->tname[t];
    if (rd_dtype_get(tt->dtype)->is_float || (tt->n_q && is_qtype(tt->dtype)))
        return tl_const_f32(L, t, NULL);
    return tl_const_raw(L, t);
}

/* ---- nodes ---------------------------------------------------------------------------------------------- */

rd_onnx_node *tl_node(tl_ctx *L, const char *op_type, const char *out_base, const char *const *in, int n_in,
                      const char *const *out, int n_out)
{
    if (L->st != RD_OK)
        return NULL;
    for (int i = 0; i < n_out; i++)
        if (!out[i])
            return NULL;
    rd_onnx_node *n = rd_onnx_add_node(L->b, op_type, out_base, in, n_in, out, n_out);
    if (!n) {
        rd_error e;
        rd_onnx_builder_status(L->b, &e);
        tl_fail(L, e.code ? e.code : RD_E_NOMEM, "%s", e.msg);
    }
    return n;
}

const char *tl_nchw(tl_ctx *L, const char *nhwc)
{
    if (!nhwc)
        return NULL;
    fe_map_slot *s = fe_map_get(&L->nchw, nhwc);
    if (s)
        return s->val;
    const char *y = tl_fresh(L, nhwc, ":nchw");
    rd_onnx_node *n = tl_node(L, "Transpose", y, (const char *const[]){nhwc}, 1, (const char *const[]){y}, 1);
    if (!n)
        return NULL;
    rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 3, 1, 2}, 4);
    if (!fe_map_put(&L->nchw, nhwc, (void *)y, NULL)) {
        tl_fail(L, RD_E_NOMEM, "out of memory");
        return NULL;
    }
    return y;
}

void tl_to_nhwc(tl_ctx *L, const char *nchw, const char *out)
{
    rd_onnx_node *n = tl_node(L, "Transpose", out, (const char *const[]){nchw}, 1, (const char *const[]){out}, 1);
    if (n)
        rd_onnx_attr_ints(n, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
    /* the next NCHW operator reads nchw itself: no Transpose pair between two convolutions */
    if (n && !fe_map_put(&L->nchw, out, (void *)nchw, NULL))
        tl_fail(L, RD_E_NOMEM, "out of memory");
}

void tl_activation(tl_ctx *L, int act, const char *x, const char *out)
{
    if (!x || !out)
        return;
    switch (act) {
    case TFL_ACT_NONE:
        tl_node(L, "Identity", out, (const char *const[]){x}, 1, (const char *const[]){out}, 1);
        return;
    case TFL_ACT_RELU:
        tl_node(L, "Relu", out, (const char *const[]){x}, 1, (const char *const[]){out}, 1);
        return;
    case TFL_ACT_TANH:
        tl_node(L, "Tanh", out, (const char *const[]){x}, 1, (const char *const[]){out}, 1);
        return;
    case TFL_ACT_RELU6:
    case TFL_ACT_RELU_N1_TO_1: {
        const char *lo = tl_const_scalar(L, out, ":min", act == TFL_ACT_RELU6 ? 0.0f : -1.0f);
        const char *hi = tl_const_scalar(L, out, ":max", act == TFL_ACT_RELU6 ? 6.0f : 1.0f);
        tl_node(L, "Clip", out, (const char *const[]){x, lo, hi}, 3, (const char *const[]){out}, 1);
        return;
    }
    default:
        tl_fail(L, RD_E_UNSUPPORTED, "fused activation %d (before '%s') is not supported", act, out);
    }
}

/* ---- options ----------------------------------------------------------------------------------------- */

bool tl_opts(tl_ctx *L, const tfl_op *o, int expected_type)
{
    if (!o->has_opt)
        return false;
    if (o->opt_type != expected_type) {
        char w[200];
        tl_fail(L, RD_E_PARSE, "%s: options of type %u, expected %d", tl_where(L, o, w, sizeof w), o->opt_type,
                expected_type);
        return false;
    }
    return true;
}

static void opt_fail(tl_ctx *L, const tfl_op *o, rd_error *e)
{
    char w[200];
    tl_fail(L, e->code, "%s: options: %s", tl_where(L, o, w, sizeof w), e->msg);
}

int32_t tl_opt_i32(tl_ctx *L, const tfl_op *o, unsigned slot, int32_t def)
{
    int32_t v = def;
    rd_error e;
    if (o->has_opt && rd_fb_i32(&o->opt, slot, def, &v, &e) != RD_OK)
        opt_fail(L, o, &e);
    return v;
}

float tl_opt_f32(tl_ctx *L, const tfl_op *o, unsigned slot, float def)
{
    float v = def;
    rd_error e;
    if (o->has_opt && rd_fb_f32(&o->opt, slot, def, &v, &e) != RD_OK)
        opt_fail(L, o, &e);
    return v;
}

int tl_opt_u8(tl_ctx *L, const tfl_op *o, unsigned slot, int def)
{
    uint8_t v = (uint8_t)def;
    rd_error e;
    if (o->has_opt && rd_fb_u8(&o->opt, slot, (uint8_t)def, &v, &e) != RD_OK)
        opt_fail(L, o, &e);
    return v;
}

bool tl_opt_bool(tl_ctx *L, const tfl_op *o, unsigned slot, bool def)
{
    bool v = def;
    rd_error e;
    if (o->has_opt && rd_fb_bool(&o->opt, slot, def, &v, &e) != RD_OK)
        opt_fail(L, o, &e);
    return v;
}

/* ---- the model-precision graph ---------------------------------------------------------------------- */

static bool quantized_act(const tfl_tensor *t)
{
    return t->n_q == 1 && (t->dtype == RD_DT_I8 || t->dtype == RD_DT_U8 || t->dtype == RD_DT_I16);
}

/* zp + round(v / scale), clamped to [lo, hi] before any conversion (a hostile scale may be tiny). */
static int64_t code_of(double v, double scale, int64_t zp, int64_t lo, int64_t hi)
{
    double q = (double)zp + round(v / scale);
    return !(q > (double)lo) ? lo : q > (double)hi ? hi : (int64_t)q;
}

/* Fused activation range in output codes (TFLite's CalculateActivationRangeQuantized). */
static void act_range(const tfl_tensor *y, int act, int64_t *lo, int64_t *hi)
{
    *lo = y->dtype == RD_DT_I16 ? INT16_MIN : y->dtype == RD_DT_U8 ? 0 : INT8_MIN;
    *hi = y->dtype == RD_DT_I16 ? INT16_MAX : y->dtype == RD_DT_U8 ? UINT8_MAX : INT8_MAX;
    double s = y->scale[0];
    int64_t zp = y->zero_point[0], l = *lo, h = *hi;
    if (!(s > 0.0))
        return;
    if (act == TFL_ACT_RELU || act == TFL_ACT_RELU6)
        *lo = code_of(0.0, s, zp, l, h) > l ? code_of(0.0, s, zp, l, h) : l;
    if (act == TFL_ACT_RELU_N1_TO_1) {
        *lo = code_of(-1.0, s, zp, l, h);
        *hi = code_of(1.0, s, zp, l, h);
    }
    if (act == TFL_ACT_RELU6)
        *hi = code_of(6.0, s, zp, l, h);
}

/* CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED on codes; false when the operator does not fit (then the
   quantized fallback takes it). */
static bool lower_int_conv(tl_ctx *L, const tfl_op *o)
{
    if (o->n_in < 2 || o->n_out != 1 || o->in[0] < 0 || o->in[1] < 0)
        return false;
    const tfl_tensor *x = &L->m->tensors[o->in[0]], *w = &L->m->tensors[o->in[1]], *y = &L->m->tensors[o->out[0]];
    const tfl_tensor *b = o->n_in > 2 && o->in[2] >= 0 ? &L->m->tensors[o->in[2]] : NULL;
    if (!quantized_act(x) || !quantized_act(y) || x->dtype == RD_DT_U8 || y->dtype != x->dtype ||
        w->dtype != RD_DT_I8 || !w->data || !w->n_q ||
        (b && (!b->data || (b->dtype != RD_DT_I32 && b->dtype != RD_DT_I64))))
        return false;
    bool dw = o->code == TFL_DEPTHWISE_CONV_2D, fc = o->code == TFL_FULLY_CONNECTED;
    int opt_type = dw ? 2 : fc ? 8 : 1;
    tl_opts(L, o, opt_type);
    int act = tl_opt_u8(L, o, fc ? 0 : dw ? 4 : 3, 0);
    if (fc && tl_opt_u8(L, o, 1, 0) != 0)
        return false; /* shuffled weights */
    if (act == TFL_ACT_TANH)
        return false;
    for (size_t i = 0; i < w->n_q; i++)
        if (w->zero_point[i] != 0)
            return false;
    const char *in[3] = {L->tname[o->in[0]], tl_const_raw(L, o->in[1]), b ? tl_const_raw(L, o->in[2]) : NULL};
    const char *out = L->tname[o->out[0]];
    rd_onnx_node *n = tl_node(L,
                              dw   ? "TFLiteDepthwiseConv2D"
                              : fc ? "TFLiteFullyConnected"
                                   : "TFLiteConv2D",
                              out, in, b ? 3 : 2, &out, 1);
    if (!n)
        return true;
    rd_onnx_node_set_domain(n, "tflite");
    if (!fc) {
        int pad = tl_opt_u8(L, o, 0, 0);
        rd_onnx_attr_string(n, "padding", pad == 0 ? "SAME" : "VALID");
        rd_onnx_attr_ints(n, "strides", (const int64_t[]){tl_opt_i32(L, o, 2, 1), tl_opt_i32(L, o, 1, 1)}, 2);
        rd_onnx_attr_ints(n, "dilations",
                          (const int64_t[]){tl_opt_i32(L, o, dw ? 6 : 5, 1), tl_opt_i32(L, o, dw ? 5 : 4, 1)}, 2);
        if (dw)
            rd_onnx_attr_int(n, "depth_multiplier", x->rank == 4 && x->dims[3] ? w->dims[3] / x->dims[3] : 1);
    } else {
        rd_onnx_attr_int(n, "keep_num_dims", tl_opt_bool(L, o, 2, false));
    }
    rd_onnx_attr_float(n, "x_scale", x->scale[0]);
    rd_onnx_attr_int(n, "x_zero_point", x->zero_point[0]);
    rd_onnx_attr_floats(n, "w_scales", w->scale, w->n_q);
    rd_onnx_attr_float(n, "y_scale", y->scale[0]);
    rd_onnx_attr_int(n, "y_zero_point", y->zero_point[0]);
    int64_t lo, hi;
    act_range(y, act, &lo, &hi);
    rd_onnx_attr_int(n, "act_min", lo);
    rd_onnx_attr_int(n, "act_max", hi);
    return true;
}

static void quantize_node(tl_ctx *L, const char *x, const tfl_tensor *xt, const tfl_tensor *y, const char *out)
{
    rd_onnx_node *n = tl_node(L, "TFLiteQuantize", out, &x, 1, &out, 1);
    if (!n)
        return;
    rd_onnx_node_set_domain(n, "tflite");
    if (xt && quantized_act(xt)) {
        rd_onnx_attr_float(n, "x_scale", xt->scale[0]);
        rd_onnx_attr_int(n, "x_zero_point", xt->zero_point[0]);
    }
    rd_onnx_attr_float(n, "y_scale", y->scale[0]);
    rd_onnx_attr_int(n, "y_zero_point", y->zero_point[0]);
    rd_onnx_attr_int(n, "to", y->dtype);
}

static const char *dequantize_node(tl_ctx *L, const char *x, const tfl_tensor *xt, const char *out)
{
    const char *sc = tl_const_scalar(L, x, ":scale", xt->scale[0]);
    const char *zp = const_zp(L, x, xt->dtype, xt->zero_point[0]);
    tl_node(L, "DequantizeLinear", out, (const char *const[]){x, sc, zp}, 3, &out, 1);
    return out;
}

/* Operators that only move codes: exact on the codes when input and output share their quantization. */
static bool moves_codes(int code)
{
    return code == TFL_RESHAPE || code == TFL_SQUEEZE || code == TFL_EXPAND_DIMS || code == TFL_TRANSPOSE;
}

static bool same_quant(const tfl_tensor *a, const tfl_tensor *b)
{
    return a->dtype == b->dtype && a->n_q == b->n_q && a->n_q == 1 && a->scale[0] == b->scale[0] &&
           a->zero_point[0] == b->zero_point[0];
}

/* One operator of the model-precision graph. false: its kind is not supported. */
/* The float lowering of o into its own output names, in o's order (an operator's outputs are any tensors, not
   consecutive ones: Split's are looked up one by one; n_out is at most RD_FE_MAX_OP_IO, tflite_read.c). */
static bool lower_float_named(tl_ctx *L, const tfl_op *o)
{
    const char *outs[RD_FE_MAX_OP_IO];
    for (int k = 0; k < o->n_out; k++)
        outs[k] = L->tname[o->out[k]];
    return tl_lower_float(L, o, outs);
}

static bool lower_quantized(tl_ctx *L, const tfl_op *o)
{
    const tfl_model *m = L->m;
    const tfl_tensor *y = o->n_out ? &m->tensors[o->out[0]] : NULL;
    const tfl_tensor *x = o->n_in && o->in[0] >= 0 ? &m->tensors[o->in[0]] : NULL;
    if ((o->code == TFL_CONV_2D || o->code == TFL_DEPTHWISE_CONV_2D || o->code == TFL_FULLY_CONNECTED) &&
        lower_int_conv(L, o))
        return true;
    if (o->code == TFL_QUANTIZE && x && y && quantized_act(y)) {
        quantize_node(L, tl_in(L, o, 0), x, y, L->tname[o->out[0]]);
        return true;
    }
    if (o->code == TFL_DEQUANTIZE && x && !x->data && quantized_act(x)) {
        dequantize_node(L, L->tname[o->in[0]], x, L->tname[o->out[0]]);
        return true;
    }
    if (moves_codes(o->code) && x && y && !x->data && quantized_act(x) && same_quant(x, y))
        return lower_float_named(L, o);
    /* the fallback: float32 between DequantizeLinear and TFLiteQuantize */
    for (int k = 0; k < o->n_in && k < RD_FE_MAX_OP_IO; k++) {
        int t = o->in[k];
        if (t >= 0 && !m->tensors[t].data && quantized_act(&m->tensors[t]))
            L->in_override[k] = dequantize_node(L, L->tname[t], &m->tensors[t], tl_fresh(L, L->tname[t], ":dq"));
    }
    const char *outs[RD_FE_MAX_OP_IO];
    for (int k = 0; k < o->n_out; k++)
        outs[k] =
            quantized_act(&m->tensors[o->out[k]]) ? tl_fresh(L, L->tname[o->out[k]], ":float") : L->tname[o->out[k]];
    if (!tl_lower_float(L, o, outs))
        return false;
    for (int k = 0; k < o->n_out; k++)
        if (quantized_act(&m->tensors[o->out[k]]))
            quantize_node(L, outs[k], NULL, &m->tensors[o->out[k]], L->tname[o->out[k]]);
    return true;
}

/* ---- the driver --------------------------------------------------------------------------------------- */

static rd_status name_tensors(tl_ctx *L)
{
    const tfl_model *m = L->m;
    bool nomem = false;
    for (size_t i = 0; i < m->n_tensors; i++) /* the model's own names first, as given */
        if (m->tensors[i].name[0] && fe_names_claim(&L->names, m->tensors[i].name, &nomem))
            L->tname[i] = m->tensors[i].name;
    if (nomem)
        return tl_fail(L, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (L->tname[i])
            continue;
        char base[32];
        snprintf(base, sizeof base, "tensor_%zu", i);
        L->tname[i] = tl_fresh(L, m->tensors[i].name[0] ? m->tensors[i].name : base, "");
        if (!L->tname[i])
            return L->st;
    }
    return RD_OK;
}

static rd_dtype io_dtype(const tl_ctx *L, const tfl_tensor *t)
{
    return !L->qmode && t->n_q && is_qtype(t->dtype) ? RD_DT_F32 : t->dtype;
}

static void declare_io(tl_ctx *L)
{
    const tfl_model *m = L->m;
    for (size_t i = 0; i < m->n_inputs && L->st == RD_OK; i++) {
        const tfl_tensor *t = &m->tensors[m->inputs[i]];
        if (t->data)
            continue; /* a constant listed as input: its data is the value */
        if (t->dtype == RD_DT_UNDEFINED) {
            tl_fail(L, RD_E_UNSUPPORTED, "input '%s' has TensorType %d", t->name, t->type);
            return;
        }
        if (rd_onnx_add_input(L->b, L->tname[m->inputs[i]], io_dtype(L, t), t->rank, t->dims, NULL) != RD_OK)
            tl_fail(L, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < m->n_outputs && L->st == RD_OK; i++) {
        const tfl_tensor *t = &m->tensors[m->outputs[i]];
        if (rd_onnx_add_output(L->b, L->tname[m->outputs[i]], io_dtype(L, t), -1, NULL, NULL) != RD_OK)
            tl_fail(L, RD_E_NOMEM, "out of memory");
    }
}

static void lower_ops(tl_ctx *L)
{
    const tfl_model *m = L->m;
    for (size_t i = 0; i < m->n_ops && L->st == RD_OK; i++) {
        const tfl_op *o = &m->ops[i];
        L->op_index = i;
        if (o->n_out == 0) {
            char w[200];
            tl_fail(L, RD_E_PARSE, "%s has no output", tl_where(L, o, w, sizeof w));
            break;
        }
        memset(L->in_override, 0, sizeof L->in_override);
        bool quantized = false;
        for (int k = 0; k < o->n_in && !quantized; k++)
            quantized = o->in[k] >= 0 && quantized_act(&m->tensors[o->in[k]]) && !m->tensors[o->in[k]].data;
        for (int k = 0; k < o->n_out && !quantized; k++)
            quantized = quantized_act(&m->tensors[o->out[k]]);
        bool ok =
            L->qmode && (quantized || o->code == TFL_DEQUANTIZE) ? lower_quantized(L, o) : lower_float_named(L, o);
        if (!ok) {
            char code[32], where[160];
            const char *kind = tfl_op_name(o->code, code, sizeof code);
            char kind_buf[160];
            if (o->code == TFL_CUSTOM) {
                snprintf(kind_buf, sizeof kind_buf, "CUSTOM '%s'", o->custom ? o->custom : "");
                kind = kind_buf;
            }
            snprintf(where, sizeof where, "operator #%zu '%s'", i, o->n_out ? L->tname[o->out[0]] : "");
            fe_unsupported_add(&L->unsup, kind, where);
        }
    }
}

rd_status tfl_lower(const tfl_model *m, bool model_precision, void **out_buf, size_t *out_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    tl_ctx L = {.m = m, .qmode = model_precision, .err = err};
    size_t n = m->n_tensors ? m->n_tensors : 1;
    L.tname = calloc(n, sizeof *L.tname);
    L.c_f32 = calloc(n, sizeof *L.c_f32);
    L.c_raw = calloc(n, sizeof *L.c_raw);
    L.tname_taken = calloc(n, sizeof *L.tname_taken);
    L.b = rd_onnx_builder_create(8, 14);
    if (!L.tname || !L.c_f32 || !L.c_raw || !L.tname_taken || !L.b)
        tl_fail(&L, RD_E_NOMEM, "out of memory");
    if (L.st == RD_OK) {
        rd_onnx_add_opset(L.b, "tflite", 1);
        rd_onnx_set_producer(L.b, "rknn-diag tflite frontend", model_precision ? "model precision" : "float32");
        name_tensors(&L);
    }
    if (L.st == RD_OK)
        declare_io(&L);
    if (L.st == RD_OK)
        lower_ops(&L);
    rd_status unsup = fe_unsupported_finish(&L.unsup, m->path, "operator", L.st == RD_OK ? err : NULL);
    if (L.st == RD_OK && unsup != RD_OK)
        L.st = unsup;
    if (L.st == RD_OK && rd_onnx_builder_write(L.b, out_buf, out_len, err) != RD_OK)
        L.st = err ? err->code : RD_E_NOMEM;
    rd_onnx_builder_destroy(L.b);
    fe_names_fini(&L.names);
    fe_map_fini(&L.nchw);
    free(L.tname);
    free(L.c_f32);
    free(L.c_raw);
    free(L.tname_taken);
    return L.st;
}
