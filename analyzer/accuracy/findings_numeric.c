/*
 * findings_numeric.c: the findings about numbers that stop being numbers (docs/metrics.md, "NaN and Inf").
 *
 * - float16 constants and weights beyond 65504: the simulator (and the NPU) rounds a float16 layer's
 *   constants to half, so such a constant is inf before the layer computes anything. Named with the
 *   constant, the first float16 node reading it and its largest magnitude.
 * - NaN or Inf in any analysed tensor (golden, simulator entire or single, the board): one finding per
 *   source, naming the first tensor in execution order, how many values, how far it spreads, and the
 *   likely cause read from that layer (an input that holds them, a division, float16 overflow of a
 *   value or a constant, ...). A table of nan cells is never "findings: none".
 */
#include "accuracy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FP16_MAX 65504.0

/* A float16 constant beyond the half range, and who reads it. */
typedef struct fp16_const {
    int value;
    int node;          /* the first float16 node reading it */
    size_t n_readers;  /* float16 nodes reading it */
    double max_abs;    /* largest magnitude (inf for an infinite value) */
    int64_t n_over, n; /* values beyond 65504, all values */
} fp16_const;

/* The precision node i computes in: that of the tensor its output is held as (through fused groups). */
static rd_prec node_precision(const rd_sim *s, const rd_node_info *ni)
{
    const rd_model *g = rd_sim_model(s);
    for (int k = 0; k < ni->n_outputs; k++) {
        int v = ni->outputs[k];
        for (int step = 0; v >= 0 && step < 16; step++) {
            rd_value_info vi;
            rd_model_value(g, (size_t)v, &vi);
            rd_sim_tensor t;
            if (rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK)
                break;
            if (t.materialized || t.fused_into < 0)
                return t.precision;
            v = t.fused_into;
        }
    }
    return RD_PREC_FP32;
}

static void measure(const rd_tensor *c, fp16_const *f)
{
    const float *x = c->data;
    f->n = rd_tensor_numel(c);
    for (int64_t i = 0; i < f->n; i++) {
        double a = fabs((double)x[i]);
        if (a > FP16_MAX) {
            f->n_over++;
            if (a > f->max_abs)
                f->max_abs = a;
        }
    }
}

/* Every float constant read by a float16 node with a value beyond 65504, in node order. */
static rd_status scan_fp16_constants(const rd_sim *s, fp16_const **out, size_t *n_out, rd_error *err)
{
    const rd_model *g = rd_sim_model(s);
    size_t nv = rd_model_value_count(g), n = 0;
    fp16_const *list = NULL;
    int *slot = malloc((nv + 1) * sizeof *slot);
    if (!slot)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t v = 0; v < nv; v++)
        slot[v] = -1;
    for (size_t i = 0; i < rd_model_node_count(g); i++) {
        rd_node_info ni;
        rd_model_node(g, i, &ni);
        if (ni.folded || node_precision(s, &ni) != RD_PREC_FP16)
            continue;
        for (int k = 0; k < ni.n_inputs; k++) {
            int v = ni.inputs[k];
            const rd_tensor *c = v >= 0 ? rd_model_constant(g, (size_t)v) : NULL;
            if (!c || c->dtype != RD_DT_F32)
                continue;
            if (slot[v] >= 0) {
                list[slot[v]].n_readers++;
                continue;
            }
            fp16_const f = {.value = v, .node = (int)i, .n_readers = 1};
            measure(c, &f);
            if (!f.n_over)
                continue;
            fp16_const *grown = realloc(list, (n + 1) * sizeof *grown);
            if (!grown) {
                free(list);
                free(slot);
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            }
            list = grown;
            slot[v] = (int)n;
            list[n++] = f;
        }
    }
    free(slot);
    *out = list;
    *n_out = n;
    return RD_OK;
}

/* The float16 constant read by the layer producing tensor `name` (directly or through its fused group). */
static const fp16_const *constant_of_layer(const rd_sim *s, const fp16_const *list, size_t n, const char *name)
{
    const rd_model *g = rd_sim_model(s);
    for (size_t k = 0; k < n; k++) {
        rd_node_info ni;
        rd_model_node(g, (size_t)list[k].node, &ni);
        for (int o = 0; o < ni.n_outputs; o++) {
            int v = ni.outputs[o];
            for (int step = 0; v >= 0 && step < 16; step++) {
                rd_value_info vi;
                rd_model_value(g, (size_t)v, &vi);
                if (strcmp(vi.name, name) == 0)
                    return &list[k];
                rd_sim_tensor t;
                if (rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || t.materialized || t.fused_into < 0)
                    break;
                v = t.fused_into;
            }
        }
    }
    return NULL;
}

static rd_status constant_findings(rd_result *r, const rd_sim *s, const fp16_const *list, size_t n, rd_error *err)
{
    const rd_model *g = rd_sim_model(s);
    rd_status st = RD_OK;
    for (size_t k = 0; k < n && st == RD_OK; k++) {
        const fp16_const *f = &list[k];
        rd_value_info ci, oi;
        rd_node_info ni;
        rd_model_value(g, (size_t)f->value, &ci);
        rd_model_node(g, (size_t)f->node, &ni);
        rd_model_value(g, (size_t)ni.outputs[0], &oi);
        char title[800], evidence[800], others[96] = "";
        snprintf(title, sizeof title, "FP16 overflow in constant '%s', read by '%s' (%s)", ci.name,
                 ni.name[0] ? ni.name : oi.name, ni.op_type);
        if (f->n_readers > 1)
            snprintf(others, sizeof others, " (and %zu other float16 layer%s)", f->n_readers - 1,
                     f->n_readers > 2 ? "s" : "");
        snprintf(evidence, sizeof evidence,
                 "max |value| %.6g > 65504: %lld of %lld values become inf when the float16 layer%s rounds it to "
                 "half, before it computes anything; its output '%s' then holds inf or NaN",
                 f->max_abs, (long long)f->n_over, (long long)f->n, others, oi.name);
        st = an_finding_add(r, RD_FIND_FP16_OVERFLOW, RD_SEV_ERROR, oi.name, (double)(r->n_layers + n - k), title,
                            evidence,
                            "rescale the constant (fold the gain into a neighbouring layer's weights so every constant "
                            "stays below 65504), keep this layer in float32 on the CPU, or quantize it to int8",
                            err);
    }
    return st;
}

/* ---- NaN and Inf -------------------------------------------------------------------------------------- */

typedef enum nf_source { NF_GOLDEN, NF_SIMULATOR, NF_BOARD, NF_COUNT } nf_source;

/* Where the NaN/Inf of one source start. */
typedef struct nf_first {
    size_t layer;            /* first layer holding them, in execution order */
    int64_t nan, inf, count; /* there */
    size_t n_layers;         /* layers holding them */
    bool found;
    rd_group_id group; /* the group it was seen in */
} nf_first;

/* Counts of the tested tensor of group g of layer l; the golden reference's when golden. */
static bool nonfinite_in(const rd_layer_result *l, rd_group_id g, bool golden, int64_t *nan, int64_t *inf)
{
    const rd_metric_group *m = &l->groups[g];
    if (!m->present)
        return false;
    *nan = golden ? m->mean.ref_nan : m->mean.nan;
    *inf = golden ? m->mean.ref_inf : m->mean.inf;
    return *nan > 0 || *inf > 0;
}

static void scan_source(const rd_result *r, nf_source src, nf_first *out)
{
    static const rd_group_id groups[NF_COUNT][2] = {
        [NF_GOLDEN] = {RD_GROUP_SIM_ENTIRE, RD_GROUP_SIM_ENTIRE},
        [NF_SIMULATOR] = {RD_GROUP_SIM_ENTIRE, RD_GROUP_SIM_SINGLE},
        [NF_BOARD] = {RD_GROUP_RT_ENTIRE, RD_GROUP_RT_ENTIRE},
    };
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->n_layers; i++) {
        bool here = false;
        for (int k = 0; k < 2 && !here; k++) {
            int64_t nan = 0, inf = 0;
            rd_group_id g = groups[src][k];
            if (!nonfinite_in(&r->layers[i], g, src == NF_GOLDEN, &nan, &inf))
                continue;
            here = true;
            if (!out->found) {
                *out = (nf_first){.layer = i,
                                  .nan = nan,
                                  .inf = inf,
                                  .count = r->layers[i].groups[g].mean.count,
                                  .found = true,
                                  .group = g};
            }
        }
        out->n_layers += here;
    }
}

static bool op_is(const rd_layer_result *l, const char *op)
{
    return l->op_type && strstr(l->op_type, op) != NULL;
}

/* The likely cause at the first layer holding NaN/Inf. */
static void nf_cause(const rd_result *r, nf_source src, const nf_first *f, const fp16_const *konst, char *buf,
                     size_t len)
{
    const rd_layer_result *l = &r->layers[f->layer];
    const rd_metrics *sim = l->groups[RD_GROUP_SIM_ENTIRE].present ? &l->groups[RD_GROUP_SIM_ENTIRE].mean : NULL;
    bool is_input = op_is(l, "Input");
    if (src == NF_GOLDEN && is_input)
        snprintf(buf, len, "the input itself holds them: the sample file, or a std of 0 in the normalisation");
    else if (src == NF_GOLDEN && op_is(l, "Div"))
        snprintf(buf, len, "a division by zero in the float32 model itself");
    else if (src == NF_GOLDEN && (op_is(l, "Log") || op_is(l, "Sqrt") || op_is(l, "Pow") || op_is(l, "Reciprocal")))
        snprintf(buf, len, "%s of a value outside its domain (0 or a negative) in the float32 model itself",
                 l->op_type);
    else if (src == NF_GOLDEN)
        snprintf(buf, len,
                 "the float32 model itself computes them (an overflow beyond 3.4e38, or an operation "
                 "undefined for its input): not the NPU's numerics");
    else if (konst)
        snprintf(buf, len,
                 "float16 overflow of a constant: this layer reads a constant with |value| up to %.6g, "
                 "which is inf in float16 (see the FP16 overflow finding)",
                 konst->max_abs);
    else if (sim && sim->fp16_overflow > 0)
        snprintf(buf, len,
                 "float16 overflow: %lld values of this layer exceed 65504 (largest %.6g) and become inf; "
                 "NaN follows from inf - inf or 0 x inf",
                 (long long)sim->fp16_overflow, sim->fp16_max_abs);
    else if (is_input)
        snprintf(buf, len,
                 "the input as the %s holds it: a value beyond the input's float16 range, or NaN in the "
                 "sample",
                 src == NF_BOARD ? "board" : "simulator");
    else if (op_is(l, "Div") || op_is(l, "Reciprocal"))
        snprintf(buf, len, "a division by zero: the divisor rounds to 0 at this layer's precision (%s)",
                 l->precision ? l->precision : "?");
    else if (src == NF_BOARD)
        snprintf(buf, len,
                 "the board computes them where the simulator does not: a float16 overflow in a layer the "
                 "board runs in float16, or a runtime fault in this layer");
    else
        snprintf(buf, len, "an overflow at this layer's precision (%s), or inf - inf / 0 x inf after one upstream",
                 l->precision ? l->precision : "?");
}

static const char *const nf_where[NF_COUNT] = {
    [NF_GOLDEN] = "the float32 reference (golden)",
    [NF_SIMULATOR] = "the simulator",
    [NF_BOARD] = "the board's dumps",
};

static rd_status nonfinite_finding(rd_result *r, nf_source src, const nf_first *f, const rd_sim *s,
                                   const fp16_const *list, size_t n_list, rd_error *err)
{
    const rd_layer_result *l = &r->layers[f->layer];
    const fp16_const *konst = s && src != NF_GOLDEN ? constant_of_layer(s, list, n_list, l->name) : NULL;
    char title[800], evidence[1600], cause[600];
    nf_cause(r, src, f, konst, cause, sizeof cause);
    snprintf(title, sizeof title, "NaN/Inf in %s from '%s' (layer %zu)", nf_where[src], l->name, f->layer);
    int w = snprintf(evidence, sizeof evidence,
                     "%lld NaN and %lld Inf of %lld values in '%s' (%s), the first tensor in execution order; %zu "
                     "layer%s hold NaN/Inf from there on. Likely cause: %s. Cosine and euclidean distance print nan "
                     "or inf on these rows: they are not measurements of the layer",
                     (long long)f->nan, (long long)f->inf, (long long)f->count, l->name,
                     f->group == RD_GROUP_SIM_SINGLE ? "simulator single" : rd_group_name(f->group), f->n_layers,
                     f->n_layers == 1 ? "" : "s", cause);
    if (src == NF_SIMULATOR && w > 0 && (size_t)w < sizeof evidence) {
        nf_first single;
        memset(&single, 0, sizeof single);
        for (size_t i = 0; i < r->n_layers && !single.found; i++) {
            int64_t nan = 0, inf = 0;
            if (nonfinite_in(&r->layers[i], RD_GROUP_SIM_SINGLE, false, &nan, &inf))
                single = (nf_first){.layer = i, .found = true};
        }
        if (single.found && single.layer != f->layer)
            snprintf(evidence + w, sizeof evidence - (size_t)w,
                     "; fed golden inputs (single), the first layer to "
                     "produce them by itself is '%s'",
                     r->layers[single.layer].name);
    }
    return an_finding_add(r, RD_FIND_NONFINITE, RD_SEV_ERROR, l->name,
                          (double)(r->n_layers - f->layer) + 2.0 * (NF_COUNT - src), title, evidence,
                          src == NF_GOLDEN
                              ? "fix the input or the model: every comparison downstream is meaningless"
                              : "remove the cause at this layer (rescale, keep it in float32, or quantize it): every "
                                "cosine downstream is nan, and a gate on it fails",
                          err);
}

rd_status an_findings_numeric(rd_result *r, const rd_sim *s, rd_error *err)
{
    fp16_const *list = NULL;
    size_t n_list = 0;
    rd_status st = s ? scan_fp16_constants(s, &list, &n_list, err) : RD_OK;
    if (st == RD_OK && s)
        st = constant_findings(r, s, list, n_list, err);
    nf_first first[NF_COUNT];
    for (int src = 0; src < NF_COUNT; src++)
        scan_source(r, (nf_source)src, &first[src]);
    /* a later source's NaN/Inf that an earlier one already holds at or before the same layer is inherited */
    for (int src = 0; st == RD_OK && src < NF_COUNT; src++) {
        if (!first[src].found)
            continue;
        bool inherited = false;
        for (int prev = 0; prev < src; prev++)
            inherited |= first[prev].found && first[prev].layer <= first[src].layer;
        if (!inherited)
            st = nonfinite_finding(r, (nf_source)src, &first[src], s, list, n_list, err);
    }
    free(list);
    return st;
}
