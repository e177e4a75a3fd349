/*
 * sim.c: the FP16 / INT8 / INT16 / hybrid simulator (docs/numerics.md).
 *
 * A simulation owns a copy of the model to which the compiler passes were applied. It runs through
 * the ordinary executor with two hooks: `materialize` rounds every materialised float tensor to its
 * precision (float16, or int8/int16 codes kept as their dequantized float values) and counts overflow and
 * saturation; `eval` computes INT8 and INT16 Conv/ConvTranspose/Gemm/MatMul with integer accumulation and feeds
 * float16 layers their weights rounded to half. Everything else is the float32 reference operator
 * working on values that are already exactly representable at the layer's precision.
 */
#include "sim_internal.h"

#include <stdio.h>

const char *rd_prec_name(rd_prec p)
{
    switch (p) {
    case RD_PREC_FP32:
        return "float32";
    case RD_PREC_FP16:
        return "float16";
    case RD_PREC_INT8:
        return "int8";
    case RD_PREC_INT16:
        return "int16";
    }
    return "unknown";
}

/* A private copy of a loaded model: written back to ONNX bytes and loaded again. */
static rd_status clone_model(const rd_model *m, rd_model **out, rd_error *err)
{
    void *buf = NULL;
    size_t len = 0;
    rd_status st = rd_onnx_model_write(m, &buf, &len, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s: copying the model for simulation", m->path);
    st = rd_model_load_mem(buf, len, m->path, m->base_dir, NULL, out, err);
    free(buf);
    return st;
}

/* RKNN's float16 ops inside an int8 model (rd_op_qrule FLOAT16: Softmax, LayerNormalization) compute in
   float16 with exDataConvert around them: their outputs are rounded to half and converted back to int8 for
   their readers, except a graph output, which stays float16 ("softmax fp16 out do not need fpToint").
   docs/numerics.md gives the evidence. */
static void mark_float16_ops(rd_sim *s)
{
    if (s->opt.precision != RD_PREC_INT8)
        return;
    for (int i = 0; i < s->m->n_nodes; i++) {
        const sim_node *n = &s->m->nodes[i];
        if (n->folded || !n->def || n->def->qrule != RD_OP_Q_FLOAT16)
            continue;
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0 || s->m->values[v].virtual_out || s->m->values[v].dtype != RD_DT_F32)
                continue;
            s->vals[v].via_f16 = true;
            if (s->m->values[v].is_graph_output)
                s->vals[v].prec = RD_PREC_FP16;
        }
    }
}

void rd_sim_destroy(rd_sim *s)
{
    if (!s)
        return;
    if (s->nodes)
        for (int i = 0; i < s->m->n_nodes; i++)
            sim_node_data_fini(&s->nodes[i]);
    free(s->nodes);
    free(s->vals);
    free(s->stats);
    free(s->faults);
    rd_model_destroy(s->m);
    free(s);
}

rd_status rd_sim_create(const rd_model *m, const rd_sim_options *opt, rd_sim **out, rd_error *err)
{
    *out = NULL;
    rd_sim_options o = opt ? *opt : (rd_sim_options){.precision = RD_PREC_INT8, .optimization_level = 3};
    if (o.optimization_level < 0 || o.optimization_level > 3)
        return rd_errorf(err, RD_E_INVAL, "optimization level %d is outside 0..3", o.optimization_level);
    if (o.weight_bits != 0 && o.weight_bits != 4 && o.weight_bits != 8 && o.weight_bits != 16)
        return rd_errorf(err, RD_E_UNSUPPORTED, "int16 layers with %d-bit weights are not simulated (4, 8 or 16)",
                         o.weight_bits);
    if ((unsigned)o.precision > RD_PREC_INT16)
        return rd_errorf(err, RD_E_INVAL, "precision %d is not one of rd_prec", (int)o.precision);
    rd_sim *s = calloc(1, sizeof *s);
    if (!s)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    s->opt = o;
    rd_status st = clone_model(m, &s->m, err);
    if (st == RD_OK)
        st = sim_passes_apply(s->m, o.optimization_level, err);
    if (st != RD_OK) {
        rd_sim_destroy(s);
        return st;
    }
    s->vals = calloc((size_t)s->m->n_values + 1, sizeof *s->vals);
    s->stats = calloc((size_t)s->m->n_values + 1, sizeof *s->stats);
    s->nodes = calloc((size_t)s->m->n_nodes + 1, sizeof *s->nodes);
    if (!s->vals || !s->stats || !s->nodes) {
        rd_sim_destroy(s);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (int v = 0; v < s->m->n_values; v++)
        s->vals[v].prec = o.precision;
    mark_float16_ops(s);
    *out = s;
    return RD_OK;
}

const rd_model *rd_sim_model(const rd_sim *s)
{
    return s->m;
}

const rd_sim_options *rd_sim_get_options(const rd_sim *s)
{
    return &s->opt;
}

rd_status rd_sim_options_for_dtype(rd_qdtype dt, rd_sim_options *o, rd_error *err)
{
    o->weight_bits = 0;
    o->dfp = false;
    switch (dt) {
    case RD_QDT_FLOAT32:
        o->precision = RD_PREC_FP32;
        return RD_OK;
    case RD_QDT_FLOAT16:
        o->precision = RD_PREC_FP16;
        return RD_OK;
    case RD_QDT_W8A8:
        o->precision = RD_PREC_INT8;
        return RD_OK;
    case RD_QDT_W16A16I:
        o->precision = RD_PREC_INT16;
        o->weight_bits = 16;
        return RD_OK;
    case RD_QDT_W8A16:
        o->precision = RD_PREC_INT16;
        o->weight_bits = 8;
        return RD_OK;
    case RD_QDT_W4A16:
        o->precision = RD_PREC_INT16;
        o->weight_bits = 4;
        return RD_OK;
    case RD_QDT_W16A16I_DFP:
        o->precision = RD_PREC_INT16;
        o->weight_bits = 16;
        o->dfp = true;
        return RD_OK;
    default:
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "dtype %s is not simulated: rknn-diag simulates float16, w8a8, w8a16, w4a16, w16a16i and "
                         "w16a16i_dfp (docs/numerics.md)",
                         rd_qdtype_name(dt));
    }
}

/* Value index of a tensor name, or an error listing a few names that look alike. */
rd_status sim_find_value(const rd_sim *s, const char *name, int *out, rd_error *err)
{
    int v = sim_model_find(s->m, name);
    if (v >= 0) {
        *out = v;
        return RD_OK;
    }
    char hints[512] = "";
    size_t used = 0;
    int shown = 0;
    size_t name_len = strlen(name);
    /* names sharing the longest prefix are the likeliest typos or RKNN-style suffix variants */
    for (size_t want = name_len; want > 0 && shown < 5; want--) {
        for (int i = 0; i < s->m->n_values && shown < 5; i++) {
            const char *cand = s->m->values[i].name;
            if (strncmp(cand, name, want) != 0 || (want < name_len && strncmp(cand, name, want + 1) == 0))
                continue;
            int w = snprintf(hints + used, sizeof hints - used, "%s'%s'", shown ? ", " : "", cand);
            if (w > 0 && (size_t)w < sizeof hints - used)
                used += (size_t)w;
            shown++;
        }
        if (want + 3 < name_len)
            break; /* beyond a few characters the prefix says nothing */
    }
    return rd_errorf(err, RD_E_NOTFOUND, "%s: no tensor named '%s'%s%s", s->m->path, name, shown ? "; closest: " : "",
                     hints);
}

/* The value holding v's data: v, or what the passes fused or folded it into (through a group's inner values). */
int sim_value_holder(const rd_model *m, int v)
{
    for (int hops = 0; hops < m->n_values; hops++) {
        const sim_value *val = &m->values[v];
        const bool gone = val->producer < 0 && !val->is_graph_input && !val->konst;
        if (!(val->virtual_out || gone) || val->fused_into < 0 || val->fused_into == v)
            break;
        v = val->fused_into;
    }
    return v;
}

rd_status rd_sim_tensor_get(const rd_sim *s, const char *name, rd_sim_tensor *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    const sim_value *val = &s->m->values[v];
    const sim_val_data *d = &s->vals[v];
    bool exists = val->producer >= 0 || val->is_graph_input || val->konst;
    out->value = exists ? v : -1;
    out->fused_into = val->fused_into;
    out->materialized = exists && !val->virtual_out && !val->konst && rd_dtype_get(val->dtype)->is_float;
    out->precision = d->prec;
    out->quantized = d->prec == RD_PREC_INT16 ? d->quantized16 : d->quantized;
    out->scale = d->prec == RD_PREC_INT16 ? d->scale16 : d->scale;
    out->zero_point = d->prec == RD_PREC_INT16 ? d->zero_point16 : d->zero_point;
    out->min = d->min;
    out->max = d->max;
    out->via_float16 = d->via_f16;
    const int holder = sim_value_holder(s->m, v);
    const int prod = s->m->values[holder].producer;
    out->group_out = exists || holder != v ? holder : -1;
    if (prod >= 0) {
        const sim_node *gn = &s->m->nodes[prod];
        out->npu_op = gn->npu_op ? gn->npu_op : gn->op_type;
    }
    if (val->producer >= 0) {
        const sim_node *n = &s->m->nodes[val->producer];
        out->row_op = n->row_op ? n->row_op : n->op_type;
    }
    return RD_OK;
}

rd_status rd_sim_set_qparams(rd_sim *s, const char *name, float scale, int32_t zero_point, rd_error *err)
{
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    if (!(scale > 0) || !isfinite(scale) || zero_point < -128 || zero_point > 127)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': scale %g and zero point %d are not valid int8 parameters", name,
                         (double)scale, (int)zero_point);
    sim_val_data *d = &s->vals[v];
    d->quantized = true;
    d->scale = scale;
    d->zero_point = zero_point;
    d->min = scale * (float)(-128 - zero_point);
    d->max = scale * (float)(127 - zero_point);
    d->quantized16 = true;
    sim_qparams16_from_range(d->min, d->max, s->opt.dfp, &d->scale16, &d->zero_point16);
    return RD_OK;
}

rd_status rd_sim_set_qparams16(rd_sim *s, const char *name, float scale, int32_t zero_point, rd_error *err)
{
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    if (!(scale > 0) || !isfinite(scale) || zero_point < -32768 || zero_point > 32767)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': scale %g and zero point %d are not valid int16 parameters",
                         name, (double)scale, (int)zero_point);
    sim_val_data *d = &s->vals[v];
    d->quantized16 = true;
    d->scale16 = scale;
    d->zero_point16 = zero_point;
    d->min = scale * (float)(-32768 - zero_point);
    d->max = scale * (float)(32767 - zero_point);
    d->quantized = true;
    sim_qparams_from_range(d->min, d->max, &d->scale, &d->zero_point);
    return RD_OK;
}

rd_status rd_sim_set_range(rd_sim *s, const char *name, float min, float max, rd_error *err)
{
    if (!(min <= max) || !isfinite(min) || !isfinite(max))
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': range [%g, %g] is not a finite interval", name, (double)min,
                         (double)max);
    float scale;
    int32_t zp;
    sim_qparams_from_range(min, max, &scale, &zp);
    rd_status st = rd_sim_set_qparams(s, name, scale, zp, err);
    if (st == RD_OK) {
        sim_val_data *d = &s->vals[sim_model_find(s->m, name)];
        d->min = min;
        d->max = max;
        sim_qparams16_from_range(min, max, s->opt.dfp, &d->scale16, &d->zero_point16);
    }
    return st;
}

/* A calibrated activation: materialised, float32, with parameters. */
static bool calibrated(const rd_sim *s, int v)
{
    if (v < 0)
        return false;
    const sim_value *val = &s->m->values[v];
    return !val->konst && !val->virtual_out && val->dtype == RD_DT_F32 && s->vals[v].quantized;
}

/* Concat (RD_OP_Q_UNION): the union of the activation inputs' ranges, when every one of them has parameters. */
static bool union_range(const rd_sim *s, const sim_node *n, float *lo, float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    int seen = 0;
    for (int k = 0; k < n->n_in; k++) {
        const int x = n->in[k];
        if (x < 0 || s->m->values[x].konst)
            continue;
        if (!calibrated(s, x))
            return false;
        *lo = fminf(*lo, s->vals[x].min);
        *hi = fmaxf(*hi, s->vals[x].max);
        seen++;
    }
    return seen > 0;
}

rd_status sim_qrules_apply(rd_sim *s, rd_error *err)
{
    for (int i = 0; i < s->m->n_nodes; i++) { /* in order: a chain sees its inputs' final parameters */
        const sim_node *n = &s->m->nodes[i];
        if (n->folded || !n->def || (n->def->qrule != RD_OP_Q_PASS && n->def->qrule != RD_OP_Q_UNION))
            continue;
        for (int k = 0; k < n->n_out; k++) {
            const int v = n->out[k];
            if (v < 0 || !calibrated(s, v))
                continue;
            if (n->def->qrule == RD_OP_Q_PASS) {
                const int x = n->in[0];
                if (x < 0 || !calibrated(s, x))
                    continue;
                const bool f16 = s->vals[v].via_f16;
                const rd_prec p = s->vals[v].prec;
                s->vals[v] = s->vals[x]; /* input 0's grid, both widths, and its range */
                s->vals[v].via_f16 = f16;
                s->vals[v].prec = p;
                continue;
            }
            float lo, hi;
            if (!union_range(s, n, &lo, &hi))
                continue;
            rd_status st = rd_sim_set_range(s, s->m->values[v].name, lo, hi, err);
            if (st != RD_OK)
                return st;
        }
    }
    return RD_OK;
}

rd_status rd_sim_set_precision(rd_sim *s, const char *name, rd_prec p, rd_error *err)
{
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    if ((unsigned)p > RD_PREC_INT16)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': precision %d is not one of rd_prec", name, (int)p);
    const sim_value *val = &s->m->values[v];
    if (val->fused_into >= 0)
        return rd_errorf(err, RD_E_INVAL,
                         "tensor '%s' was fused into '%s' by the compiler passes: set the precision of '%s'", name,
                         s->m->values[val->fused_into].name, s->m->values[val->fused_into].name);
    s->vals[v].prec = p;
    s->vals[v].via_f16 = false; /* the user's choice replaces RKNN's float16 op */
    return RD_OK;
}

rd_status rd_sim_set_via_float16(rd_sim *s, const char *name, bool on, rd_error *err)
{
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    const sim_value *val = &s->m->values[v];
    if (val->virtual_out || val->konst || val->producer < 0)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s' is not a materialised tensor a node computes", name);
    s->vals[v].via_f16 = on;
    return RD_OK;
}

void rd_sim_layer_stats_get(const rd_sim *s, int value, rd_sim_layer_stats *out)
{
    memset(out, 0, sizeof *out);
    out->fp16_first_index = -1;
    if (value >= 0 && value < s->m->n_values)
        *out = s->stats[value];
}

/* The precision a node computes at: that of the tensor its fused group materialises. */
rd_prec sim_node_precision(const rd_sim *s, int node)
{
    const sim_node *n = &s->m->nodes[node];
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0)
            continue;
        while (s->m->values[v].virtual_out && s->m->values[v].fused_into >= 0)
            v = s->m->values[v].fused_into;
        return s->vals[v].via_f16 ? RD_PREC_FP16 : s->vals[v].prec;
    }
    return s->opt.precision;
}

rd_prec rd_sim_node_precision(const rd_sim *s, int node)
{
    return node >= 0 && node < s->m->n_nodes ? sim_node_precision(s, node) : s->opt.precision;
}

rd_status rd_sim_convert(const rd_sim *s, const char *name, rd_prec p, float *x, int64_t n, rd_error *err)
{
    int v = -1;
    rd_status st = sim_find_value(s, name, &v, err);
    if (st != RD_OK)
        return st;
    const sim_val_data *d = &s->vals[v];
    if (p == RD_PREC_FP16) {
        sim_round_f16(x, n, NULL, NULL, NULL);
    } else if (p == RD_PREC_INT8) {
        if (!d->quantized)
            return rd_errorf(err, RD_E_INVAL, "tensor '%s' has no int8 parameters to convert to", name);
        sim_fake_quant_i8(x, n, d->scale, d->zero_point, NULL, NULL);
    }
    return RD_OK;
}

/* ---- run hooks ------------------------------------------------------------------------------------ */

/* ---- holding a tensor at its precision, in chunks over the pool ------------------------------------- */

#define HOLD_CHUNK 65536 /* values per task */

typedef struct hold_job {
    rd_prec prec;
    float scale;
    int32_t zp;
    float *x;
    int64_t n;
    sim_round_counts *part; /* per worker */
} hold_job;

static void hold_chunk(const hold_job *j, int64_t i0, int64_t len, sim_round_counts *p)
{
    float *x = j->x + i0;
    int64_t a = 0, b = 0, first = -1;
    double m = 0;
    switch (j->prec) {
    case RD_PREC_FP16:
        sim_round_f16(x, len, &a, &first, &m);
        if (first >= 0 && (p->first < 0 || i0 + first < p->first))
            p->first = i0 + first;
        p->overflow += a;
        p->max_abs = m > p->max_abs ? m : p->max_abs;
        return;
    case RD_PREC_INT8:
        sim_fake_quant_i8(x, len, j->scale, j->zp, &a, &b);
        break;
    case RD_PREC_INT16:
        sim_fake_quant_i16(x, len, j->scale, j->zp, &a, &b);
        break;
    default:
        return;
    }
    p->saturated += a;
    p->rounded_to_zero += b;
}

static void hold_task(void *arg, int64_t task, int worker)
{
    const hold_job *j = arg;
    const int64_t i0 = task * HOLD_CHUNK;
    hold_chunk(j, i0, j->n - i0 < HOLD_CHUNK ? j->n - i0 : HOLD_CHUNK, &j->part[worker]);
}

/* The rounding of one precision over x[0..n) with its counts into *sum (which starts empty): sums, the smallest
   overflow index and the largest magnitude do not depend on how the chunks were shared out. */
static void hold_values(rd_pool *pool, rd_prec prec, float scale, int32_t zp, float *x, int64_t n,
                        sim_round_counts *sum)
{
    const int width = sim_pool_width(pool);
    sim_round_counts one = {.first = -1}, *part = &one;
    if (width > 1 && n >= 2 * HOLD_CHUNK) {
        part = calloc((size_t)width, sizeof *part);
        if (!part)
            part = &one;
    }
    const int used = part == &one ? 1 : width;
    for (int w = 0; w < used; w++)
        part[w].first = -1;
    hold_job j = {.prec = prec, .scale = scale, .zp = zp, .x = x, .n = n, .part = part};
    if (part == &one)
        hold_chunk(&j, 0, n, &one);
    else
        sim_parallel(pool, sim_blocks(n, HOLD_CHUNK), hold_task, &j);
    for (int w = 0; w < used; w++)
        sim_round_counts_add(sum, &part[w]);
    if (part != &one)
        free(part);
}

/* The counts of a rounding to prec into st's fields for that precision (the others are left as they are: a
   float16 step before int8 records both). */
static void stats_record(rd_prec prec, const sim_round_counts *c, rd_sim_layer_stats *st)
{
    switch (prec) {
    case RD_PREC_FP16:
        st->fp16_overflow = c->overflow;
        st->fp16_first_index = c->first;
        st->fp16_max_abs = c->max_abs;
        break;
    case RD_PREC_INT8:
    case RD_PREC_INT16:
        st->saturated = c->saturated;
        st->rounded_to_zero = c->rounded_to_zero;
        break;
    case RD_PREC_FP32:
        break;
    }
}

/* Rounds t to prec, counting into st. */
static rd_status hold_at(const rd_sim *s, int value, rd_prec prec, rd_tensor *t, rd_sim_layer_stats *st, rd_error *err)
{
    const sim_value *val = &s->m->values[value];
    const sim_val_data *d = &s->vals[value];
    if ((unsigned)prec > RD_PREC_INT16)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': precision %d is unknown", val->name, (int)prec);
    if ((prec == RD_PREC_INT8 && !d->quantized) || (prec == RD_PREC_INT16 && !d->quantized16))
        return rd_errorf(err, RD_E_INVAL,
                         "tensor '%s' has no %s parameters: calibrate with a dataset or import a .quantization.cfg",
                         val->name, prec == RD_PREC_INT8 ? "int8" : "int16");
    if (prec == RD_PREC_FP32)
        return RD_OK;
    const bool wide = prec == RD_PREC_INT16;
    sim_round_counts c = {.first = -1};
    hold_values(s->pool, prec, wide ? d->scale16 : d->scale, wide ? d->zero_point16 : d->zero_point, t->data,
                rd_tensor_numel(t), &c);
    stats_record(prec, &c, st);
    return RD_OK;
}

rd_status sim_materialize(rd_sim *s, int value, rd_tensor *t, rd_sim_layer_stats *st, rd_error *err)
{
    const sim_value *val = &s->m->values[value];
    if (val->virtual_out || t->dtype != RD_DT_F32)
        return RD_OK; /* fused away, or not a float activation (shapes, indices, masks) */
    memset(st, 0, sizeof *st);
    st->fp16_first_index = -1;
    st->count = rd_tensor_numel(t);
    rd_status rc = RD_OK;
    if (s->vals[value].via_f16) /* computed in float16, then exDataConvert to the tensor's precision */
        rc = hold_at(s, value, RD_PREC_FP16, t, st, err);
    if (rc != RD_OK)
        return rc;
    if (!s->n_faults)
        return hold_at(s, value, s->vals[value].prec, t, st, err);
    /* an emulated board's faulty layer: its own rounding, then the fault on top */
    rc = hold_at(s, value, sim_fault_precision(s, value, s->vals[value].prec), t, st, err);
    return rc == RD_OK ? sim_fault_apply(s, value, t, err) : rc;
}

rd_status sim_entire_materialize(void *user, int value, rd_tensor *t, rd_error *err)
{
    rd_sim *s = user;
    return sim_materialize(s, value, t, &s->stats[value], err);
}

/* ---- float16 rounded slice by slice (sim_eval_f32_rounded) ------------------------------------------- */

/*
 * A large elementwise float16 node (the Relu after a convolution) computed in slices, each rounded to half
 * while in cache: that rounding is cheap, so the pass of its own was bound by memory. Not int8: its
 * requantization, done the same way, gained nothing (docs/benchmarks.md). Not with faults to emulate (they
 * act on the whole tensor) nor a float16 step before another precision (two roundings).
 */
static bool round_in_slices_hook(void *user, int node, const rd_tensor **in)
{
    rd_sim *s = user;
    const sim_node *n = &s->m->nodes[node];
    if (s->n_faults || n->n_out < 1 || n->out[0] < 0)
        return false;
    const int v = n->out[0];
    const sim_val_data *d = &s->vals[v];
    if (s->m->values[v].virtual_out || d->via_f16 || d->prec != RD_PREC_FP16 ||
        sim_node_precision(s, node) != RD_PREC_FP16)
        return false;
    return sim_fp16_layer_is_float(s, node, in);
}

static void round_part_hook(void *user, int value, float *x, int64_t at, int64_t n, sim_round_counts *c)
{
    const rd_sim *s = user;
    const sim_val_data *d = &s->vals[value];
    const bool wide = d->prec == RD_PREC_INT16;
    hold_job j = {.prec = d->prec,
                  .scale = wide ? d->scale16 : d->scale,
                  .zp = wide ? d->zero_point16 : d->zero_point,
                  .x = x,
                  .n = at + n};
    hold_chunk(&j, at, n, c);
}

/* The stats sim_materialize records, from the counts of every part. */
static void round_done_hook(void *user, int value, const rd_tensor *t, const sim_round_counts *c)
{
    rd_sim *s = user;
    rd_sim_layer_stats *st = &s->stats[value];
    memset(st, 0, sizeof *st);
    st->fp16_first_index = -1;
    st->count = rd_tensor_numel(t);
    stats_record(s->vals[value].prec, c, st);
}

sim_exec_hooks sim_entire_hooks(rd_sim *s)
{
    return (sim_exec_hooks){.user = s,
                            .eval = sim_hook_eval,
                            .materialize = sim_entire_materialize,
                            .round_in_slices = round_in_slices_hook,
                            .round_part = round_part_hook,
                            .round_done = round_done_hook};
}

rd_status sim_hook_eval(void *user, int node, sim_op_ctx *ctx, rd_error *err)
{
    rd_sim *s = user;
    switch (sim_node_precision(s, node)) {
    case RD_PREC_INT8:
        return sim_eval_int8(s, node, ctx, err);
    case RD_PREC_FP16:
        return sim_eval_fp16(s, node, ctx, err);
    case RD_PREC_INT16:
        return sim_eval_int16(s, node, ctx, err);
    default:
        return sim_defer(ctx);
    }
}

void rd_sim_set_pool(rd_sim *s, rd_pool *pool)
{
    s->pool = pool;
}

rd_pool *rd_sim_pool(const rd_sim *s)
{
    return s->pool;
}

rd_status rd_sim_run(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, const rd_run_options *opt, rd_tensor *outputs,
                     size_t n_outputs, rd_error *err)
{
    for (int v = 0; v < s->m->n_values; v++) {
        memset(&s->stats[v], 0, sizeof s->stats[v]);
        s->stats[v].fp16_first_index = -1;
    }
    const sim_exec_hooks hooks = sim_entire_hooks(s);
    return sim_execute(s->m, &hooks, s->pool, inputs, n_inputs, opt, outputs, n_outputs, err);
}
