/*
 * cmd_quantize.c: `rknn-diag quantize MODEL [quant options] -o OUT.quantization.cfg [--rknn-cfg STEP1]`:
 * calibrates the INT8 simulation and writes its parameters in RKNN's .quantization.cfg layout, under
 * ONNX names, or under the toolkit's names where a step-1 cfg of the same model matches our tensors.
 */
#include "cli_internal.h"
#include "cli_model_args.h"
#include "quant_setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_HELP = 1, OPT_OUTPUT, OPT_RKNN_CFG, OPT_INPUT_SHAPE };

static const an_optspec quantize_opts[] = {
    {OPT_OUTPUT, "output", 'o', "FILE", "the .quantization.cfg to write (required)"},
    {OPT_RKNN_CFG, "rknn-cfg", 0, "FILE", "a cfg RKNN-Toolkit2's hybrid_quantization_step1 wrote for this model: "
                                          "write under its tensor names"},
    {OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
    AN_QUANT_OPTSPECS,
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_QUANTIZE_OPTS ((int)(sizeof quantize_opts / sizeof quantize_opts[0]))

typedef struct quantize_args {
    const char *model_path, *out_path, *rknn_cfg;
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    size_t n_shapes;
    an_quant_opts q;
} quantize_args;

static int parse_args(an_cmd_ctx *ctx, quantize_args *a)
{
    rd_error err = {0};
    an_opts p;
    an_opts_init(&p, ctx, quantize_opts, N_QUANTIZE_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        if (an_quant_take(&a->q, id, v))
            continue;
        switch (id) {
        case -2:
            return AN_EXIT_USAGE;
        case 0:
            if (a->model_path)
                return an_usage(ctx, "one model only (got '%s' and '%s')", a->model_path, v);
            a->model_path = v;
            break;
        case OPT_HELP:
            an_print_help(ctx->out,
                          "rknn-diag quantize MODEL.onnx --dataset FILE [quant options] -o OUT.quantization.cfg "
                          "[--rknn-cfg STEP1.cfg]",
                          "Calibrates the INT8 (w8a8) simulation and writes its parameters in RKNN's hybrid\n"
                          "quantization file layout: every materialised activation (scale, zero point, range) and\n"
                          "the weights of Conv, ConvTranspose, Gemm and MatMul (symmetric, per channel or per\n"
                          "tensor), plus the float16 tensors of a hybrid --cfg in custom_quantize_layers. Names are\n"
                          "ONNX tensor names of the optimised graph unless --rknn-cfg gives the toolkit's. The file\n"
                          "can be read back with --cfg by run, accuracy, eval and export-qdq.",
                          quantize_opts, N_QUANTIZE_OPTS);
            return AN_EXIT_OK;
        case OPT_OUTPUT:
            a->out_path = v;
            break;
        case OPT_RKNN_CFG:
            a->rknn_cfg = v;
            break;
        case OPT_INPUT_SHAPE:
            if (an_parse_input_shape(v, a->shape_names, a->shapes, &a->n_shapes, &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            break;
        }
    }
    if (!a->model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    if (!a->out_path)
        return an_usage(ctx, "missing -o OUT.quantization.cfg");
    return -1;
}

/* max|w| per output channel, with the channel map of the weight quantizer. */
static rd_status weight_max_abs(const rd_tensor *w, const rd_sim_weights *sw, float *out, rd_error *err)
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
        rd_status st = weight_max_abs(rd_model_constant(m, (size_t)sw.value), &sw, mx, err);
        for (size_t c = 0; c < n; c++) {
            mn[c] = -mx[c];
            scale[c] = sw.scale[c];
        }
        rd_qcfg_param p = {.name = (char *)vi.name, .qtype = "asymmetric_quantized",
                           .method = n > 1 ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER, .dtype = RD_DT_I8,
                           .has = RD_QCFG_HAS_MIN | RD_QCFG_HAS_MAX | RD_QCFG_HAS_SCALE | RD_QCFG_HAS_ZERO_POINT |
                                  RD_QCFG_HAS_ORI_MIN | RD_QCFG_HAS_ORI_MAX,
                           .n = n, .min = mn, .max = mx, .scale = scale, .zero_point = zp, .ori_min = mn, .ori_max = mx};
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

/* Our parameters under ONNX names: activations in graph order, then weights, then float16 layers. */
static rd_status collect_params(rd_sim *s, rd_qcfg *cfg, FILE *errs, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    size_t n_act = 0, n_w = 0, n_half = 0;
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
                st = rd_qcfg_add_param(cfg, &(rd_qcfg_param){.name = (char *)vi.name, .method = RD_QMETHOD_LAYER,
                                                             .dtype = RD_DT_F16}, err);
            continue;
        }
        float mn = t.min, mx = t.max;
        rd_qcfg_param p = {.name = (char *)vi.name, .qtype = "asymmetric_quantized", .method = RD_QMETHOD_LAYER,
                           .dtype = RD_DT_I8,
                           .has = RD_QCFG_HAS_MIN | RD_QCFG_HAS_MAX | RD_QCFG_HAS_SCALE | RD_QCFG_HAS_ZERO_POINT |
                                  RD_QCFG_HAS_ORI_MIN | RD_QCFG_HAS_ORI_MAX,
                           .n = 1, .min = &mn, .max = &mx, .scale = &t.scale, .zero_point = &t.zero_point,
                           .ori_min = &mn, .ori_max = &mx};
        st = rd_qcfg_add_param(cfg, &p, err);
        n_act++;
    }
    if (st == RD_OK)
        st = add_weights(s, cfg, &n_w, err);
    for (size_t v = 0; v < rd_model_value_count(m) && st == RD_OK; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (rd_sim_tensor_get(s, vi.name, &t, NULL) == RD_OK && t.materialized && t.precision == RD_PREC_FP16)
            st = rd_qcfg_add_layer(cfg, vi.name, RD_DT_F16, err);
    }
    if (st == RD_OK)
        fprintf(errs, "quantize: %zu activations, %zu weights, %zu float16 tensors\n", n_act, n_w, n_half);
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
        fprintf(errs, " %s", names[i]);
    fprintf(errs, "%s\n", n > 12 ? " ..." : "");
}

/*
 * The toolkit's file with our parameters under its names where they match (by name and parameter
 * count); its other entries as they were. Reports matches on errs.
 */
static rd_status merge_rknn_cfg(const rd_sim *s, const rd_qcfg *ours, const char *path, rd_qcfg *out, FILE *errs,
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
    /* float16 layers: ours under the toolkit's names, the file's own where we have nothing to say */
    for (size_t i = 0; i < ours->n_layers && st == RD_OK; i++) {
        const rd_qcfg_param *mine = rd_qcfg_find(ours, ours->layers[i].name);
        size_t k = mine ? (size_t)(mine - ours->params) : 0;
        if (mine && used[k])
            st = rd_qcfg_add_layer(out, tk_name_of[k], ours->layers[i].dtype, err);
        else
            fprintf(errs, "warning: float16 tensor '%s' has no entry in %s: left out of custom_quantize_layers\n",
                    ours->layers[i].name, path);
    }
    for (size_t i = 0; i < tk.n_layers && st == RD_OK; i++)
        if (!rd_qcfg_find_layer(out, tk.layers[i].name)) {
            const char *name = an_quant_match_name(s, tk.layers[i].name);
            const rd_qcfg_param *mine = name ? rd_qcfg_find(ours, name) : NULL;
            if (!mine || !used[mine - ours->params])
                st = rd_qcfg_add_layer(out, tk.layers[i].name, tk.layers[i].dtype, err);
        }
    if (st == RD_OK) {
        fprintf(errs, "rknn-cfg: %s: %zu of %zu entries matched our tensors (by name, ':0' and '/'->'_' forms, and "
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

int an_cmd_quantize(an_cmd_ctx *ctx)
{
    quantize_args *a = calloc(1, sizeof *a);
    if (!a)
        return AN_EXIT_INPUT;
    an_quant_opts_init(&a->q);
    int rc = parse_args(ctx, a);
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    rd_qcfg ours, merged;
    rd_qcfg_init(&ours);
    rd_qcfg_init(&merged);
    if (rc >= 0)
        goto out;
    rd_load_options lopt = {.input_shapes = a->shapes, .n_input_shapes = a->n_shapes};
    rd_status st = rd_model_load(a->model_path, &lopt, &m, &err);
    if (st == RD_OK)
        st = an_quant_finish(&a->q, m, &err);
    if (st == RD_OK && a->q.cfg.dtype != RD_QDT_W8A8)
        st = rd_errorf(&err, RD_E_INVAL, "quantize writes int8 parameters: --dtype must be w8a8 (got %s)",
                       rd_qdtype_name(a->q.cfg.dtype));
    if (st == RD_OK)
        st = an_quant_build_sim(&a->q, m, NULL, ctx->errs, ctx->color, &s, &err);
    if (st == RD_OK)
        st = collect_params(s, &ours, ctx->errs, &err);
    const rd_qcfg *result = &ours;
    if (st == RD_OK && a->rknn_cfg) {
        st = merge_rknn_cfg(s, &ours, a->rknn_cfg, &merged, ctx->errs, &err);
        result = &merged;
    }
    if (st == RD_OK)
        st = rd_qcfg_save(a->out_path, result, &err);
    if (st != RD_OK) {
        rc = err.code == RD_E_INVAL ? an_usage(ctx, "%s", err.msg) : an_fail(ctx, &err);
        goto out;
    }
    if (!a->rknn_cfg)
        fprintf(ctx->errs, "note: tensors are named as in the ONNX model after the compiler passes; RKNN-Toolkit2 may "
                           "name them differently (Conv__350:0, ..._before_conv): give --rknn-cfg STEP1.cfg to write "
                           "under the toolkit's names\n");
    fprintf(ctx->errs, "wrote %s\n", a->out_path);
    rc = AN_EXIT_OK;
out:
    rd_qcfg_fini(&ours);
    rd_qcfg_fini(&merged);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    an_quant_opts_fini(&a->q);
    free(a);
    return rc;
}
