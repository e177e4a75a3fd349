/*
 * qcfg_build.c: a simulation's INT8 parameters as RKNN's .quantization.cfg (what `quantize` and
 * `hybrid search` write), under ONNX names or merged into the toolkit's step-1 file.
 */
#include "term_text.h"
#include "qcfg_build.h"
#include "quant_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* max|w| per output channel, with the channel map of the weight quantizer. */
rd_status an_weight_channel_max_abs(const rd_tensor *w, const rd_sim_weights *sw, float *out, rd_error *err)
{
    for (int c = 0; c < sw->n_scale; c++)
        out[c] = 0.0f;
    int64_t n = rd_tensor_numel(w), inner = 1;
    for (int d = sw->axis + 1; d < w->rank; d++)
        inner *= w->dims[d];
    int64_t dim = w->rank > 0 ? w->dims[sw->axis] : 1;
    if (sw->n_scale > 1 && dim * sw->group != sw->n_scale)
        return rd_errorf(err, RD_E_INVAL, "weights: %d scales for axis %d of size %lld", sw->n_scale, sw->axis,
                         (long long)dim);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = 0;
        if (sw->n_scale > 1) {
            c = (i / inner) % dim;
            if (sw->group > 1) /* ConvTranspose W [C, M/group, ...]: channel = (c_in / (C/group)) * M/group + m */
                c += (i / (inner * dim) / (w->dims[0] / sw->group)) * dim;
        }
        float a = fabsf(((const float *)w->data)[i]);
        if (a > out[c])
            out[c] = a;
    }
    return RD_OK;
}

static rd_status add_weights(rd_sim *s, rd_qcfg *cfg, size_t *n_w, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_sim_weights sw;
        if (rd_sim_weights_get(s, (int)i, &sw, NULL) != RD_OK)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)sw.value, &vi);
        if (sw.bits != 8 && sw.bits != 16)
            return rd_errorf(err, RD_E_UNSUPPORTED,
                             "weights '%s' are %d-bit: a .quantization.cfg has no dtype for them (int8 or int16 only)",
                             vi.name, sw.bits);
        if (rd_qcfg_find(cfg, vi.name))
            continue; /* a weight shared by several layers */
        size_t n = (size_t)sw.n_scale;
        float *lists = calloc(4 * n, sizeof *lists);
        int32_t *zp = calloc(n, sizeof *zp);
        if (!lists || !zp) {
            free(lists);
            free(zp);
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
        float *mn = lists, *mx = lists + n, *scale = lists + 2 * n;
        rd_status st = an_weight_channel_max_abs(rd_model_constant(m, (size_t)sw.value), &sw, mx, err);
        for (size_t c = 0; c < n; c++) {
            mn[c] = -mx[c];
            scale[c] = sw.scale[c];
            if (sw.zero_point) { /* asymmetric weights: the grid's own range */
                zp[c] = sw.zero_point[c];
                mn[c] = sw.scale[c] * (float)(-128 - zp[c]);
                mx[c] = sw.scale[c] * (float)(127 - zp[c]);
            }
        }
        const bool dfp = rd_sim_get_options(s)->dfp && sw.bits == 16;
        rd_qcfg_param p = {.name = (char *)vi.name,
                           .qtype = dfp ? "dynamic_fixed_point" : "asymmetric_quantized",
                           .method = n > 1 ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER,
                           .dtype = sw.bits == 16 ? RD_DT_I16 : RD_DT_I8,
                           .has = RD_QCFG_HAS_MIN | RD_QCFG_HAS_MAX | RD_QCFG_HAS_SCALE | RD_QCFG_HAS_ZERO_POINT |
                                  RD_QCFG_HAS_ORI_MIN | RD_QCFG_HAS_ORI_MAX,
                           .n = n,
                           .min = mn,
                           .max = mx,
                           .scale = scale,
                           .zero_point = zp,
                           .ori_min = mn,
                           .ori_max = mx};
        if (st == RD_OK)
            st = rd_qcfg_add_param(cfg, &p, err);
        free(lists);
        free(zp);
        if (st != RD_OK)
            return rd_error_prefix(err, "weights '%s'", vi.name);
        (*n_w)++;
    }
    return RD_OK;
}

/* A tensor RKNN lists in custom_quantize_layers: float16 ones, and int8/int16 ones that differ from the dtype's. */
static bool custom_layer(const rd_sim *s, const rd_sim_tensor *t)
{
    if (!t->materialized || t->via_float16) /* RKNN's own float16 ops are no choice of the user's */
        return false;
    if (t->precision == RD_PREC_FP16)
        return true;
    const rd_prec base = rd_sim_get_options(s)->precision;
    return (t->precision == RD_PREC_INT16 || t->precision == RD_PREC_INT8) && t->precision != base &&
           (base == RD_PREC_INT8 || base == RD_PREC_INT16);
}

/* Our parameters under ONNX names: activations in graph order, then weights, then the custom layers. */
rd_status an_qcfg_collect(rd_sim *s, rd_qcfg *cfg, FILE *errs, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    size_t n_act = 0, n_w = 0, n_half = 0, n_int16 = 0;
    const bool dfp = rd_sim_get_options(s)->dfp;
    rd_status st = RD_OK;
    for (size_t v = 0; v < rd_model_value_count(m) && st == RD_OK; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || !t.materialized)
            continue;
        if (t.precision == RD_PREC_FP16)
            n_half++;
        if (!t.quantized) {
            if (t.precision == RD_PREC_FP16) /* a float16 layer of an imported cfg, never calibrated */
                st = rd_qcfg_add_param(
                    cfg, &(rd_qcfg_param){.name = (char *)vi.name, .method = RD_QMETHOD_LAYER, .dtype = RD_DT_F16},
                    err);
            continue;
        }
        float mn = t.min, mx = t.max;
        const bool wide = t.precision == RD_PREC_INT16;
        n_int16 += wide;
        rd_qcfg_param p = {.name = (char *)vi.name,
                           .qtype = wide && dfp ? "dynamic_fixed_point" : "asymmetric_quantized",
                           .method = RD_QMETHOD_LAYER,
                           .dtype = wide ? RD_DT_I16 : RD_DT_I8,
                           .has = RD_QCFG_HAS_MIN | RD_QCFG_HAS_MAX | RD_QCFG_HAS_SCALE | RD_QCFG_HAS_ZERO_POINT |
                                  RD_QCFG_HAS_ORI_MIN | RD_QCFG_HAS_ORI_MAX,
                           .n = 1,
                           .min = &mn,
                           .max = &mx,
                           .scale = &t.scale,
                           .zero_point = &t.zero_point,
                           .ori_min = &mn,
                           .ori_max = &mx};
        st = rd_qcfg_add_param(cfg, &p, err);
        n_act++;
    }
    if (st == RD_OK)
        st = add_weights(s, cfg, &n_w, err);
    for (size_t v = 0; v < rd_model_value_count(m) && st == RD_OK; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, vi.name, &t, NULL) == RD_OK && custom_layer(s, &t))
            st = rd_qcfg_add_layer(cfg, vi.name,
                                   t.precision == RD_PREC_FP16    ? RD_DT_F16
                                   : t.precision == RD_PREC_INT16 ? RD_DT_I16
                                                                  : RD_DT_I8,
                                   err);
    }
    if (st == RD_OK)
        fprintf(errs, "quantize: %zu activations (%zu int16), %zu weights, %zu float16 tensors\n", n_act, n_int16, n_w,
                n_half);
    return st;
}

/* A copy of p named name. */
static rd_status add_renamed(rd_qcfg *out, const rd_qcfg_param *p, const char *name, rd_error *err)
{
    rd_qcfg_param copy = *p;
    copy.name = (char *)name;
    return rd_qcfg_add_param(out, &copy, err);
}

static void list_names(FILE *errs, const char *what, char **names, size_t n)
{
    if (!n)
        return;
    fprintf(errs, "  %s (%zu):", what, n);
    for (size_t i = 0; i < n && i < 12; i++)
        fprintf(errs, " %s", RD_TEXT_SHOWN(names[i]));
    fprintf(errs, "%s\n", n > 12 ? " ..." : "");
}

/*
 * The toolkit's file with our parameters under its names where they match (by name and parameter
 * count); its other entries as they were. Reports matches on errs.
 */
rd_status an_qcfg_merge_rknn(const rd_sim *s, const rd_qcfg *ours, const char *path, rd_qcfg *out, FILE *errs,
                             rd_error *err)
{
    rd_qcfg tk;
    rd_status st = rd_qcfg_load(path, &tk, err);
    if (st != RD_OK)
        return st;
    bool *used = calloc(ours->n_params + 1, sizeof *used);
    char **kept = calloc(tk.n_params + 1, sizeof *kept), **missing = calloc(ours->n_params + 1, sizeof *missing);
    const char **tk_name_of = calloc(ours->n_params + 1, sizeof *tk_name_of);
    size_t n_kept = 0, n_missing = 0, n_matched = 0;
    if (!used || !kept || !missing || !tk_name_of)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < tk.n_params && st == RD_OK; i++) {
        const rd_qcfg_param *p = &tk.params[i];
        const char *name = an_quant_match_name(s, p->name);
        const rd_qcfg_param *mine = name ? rd_qcfg_find(ours, name) : NULL;
        size_t k = mine ? (size_t)(mine - ours->params) : 0;
        bool counts_fit = mine && (p->n == mine->n || p->has == 0 || mine->has == 0);
        if (counts_fit && !used[k]) {
            used[k] = true;
            tk_name_of[k] = p->name;
            st = add_renamed(out, mine, p->name, err);
            n_matched++;
        } else {
            st = rd_qcfg_add_param(out, p, err);
            kept[n_kept++] = p->name;
        }
        if (st != RD_OK)
            rd_error_prefix(err, "%s:%d", path, p->line);
    }
    for (size_t k = 0; k < ours->n_params && st == RD_OK; k++)
        if (!used[k])
            missing[n_missing++] = ours->params[k].name;
    /* custom layers: ours under the toolkit's names, the file's own where we have nothing to say */
    for (size_t i = 0; i < ours->n_layers && st == RD_OK; i++) {
        const rd_qcfg_param *mine = rd_qcfg_find(ours, ours->layers[i].name);
        size_t k = mine ? (size_t)(mine - ours->params) : 0;
        if (mine && used[k])
            st = rd_qcfg_add_layer(out, tk_name_of[k], ours->layers[i].dtype, err);
        else
            fprintf(errs, "warning: %s tensor '%s' has no entry in %s: left out of custom_quantize_layers\n",
                    ours->layers[i].dtype == RD_DT_F16   ? "float16"
                    : ours->layers[i].dtype == RD_DT_I16 ? "int16"
                                                         : "int8",
                    RD_TEXT_SHOWN(ours->layers[i].name), path);
    }
    for (size_t i = 0; i < tk.n_layers && st == RD_OK; i++)
        if (!rd_qcfg_find_layer(out, tk.layers[i].name)) {
            const char *name = an_quant_match_name(s, tk.layers[i].name);
            const rd_qcfg_param *mine = name ? rd_qcfg_find(ours, name) : NULL;
            if (!mine || !used[mine - ours->params])
                st = rd_qcfg_add_layer(out, tk.layers[i].name, tk.layers[i].dtype, err);
        }
    if (st == RD_OK) {
        fprintf(errs,
                "rknn-cfg: %s: %zu of %zu entries matched our tensors (by name, ':0' and '/'->'_' forms, and "
                "parameter count) and carry our parameters\n",
                path, n_matched, tk.n_params);
        list_names(errs, "kept as the toolkit wrote them", kept, n_kept);
        list_names(errs, "our tensors without a toolkit entry (not written)", missing, n_missing);
    }
    free(used);
    free(kept);
    free(missing);
    free(tk_name_of);
    rd_qcfg_fini(&tk);
    return st;
}
