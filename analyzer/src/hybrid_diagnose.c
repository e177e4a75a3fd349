/*
 * hybrid_diagnose.c: `rknn-diag hybrid diagnose`: the usual configuration mistakes of RKNN's guide, each
 * tried on the simulation: the output cosine (int8 against FP32, both on that variant's inputs) it reaches.
 */
#include "cli_internal.h"
#include "hybrid.h"
#include "quant_setup.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int an_hybrid_diagnose(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                       const char *const *inputs, size_t n_inputs, size_t samples, bool json, int threads);

typedef struct variant {
    char name[160];
    an_quant_opts q;
    bool self_calibration;  /* calibrate on the analysed samples */
    an_hyb_score score;
    bool ok;
    char error[200];
} variant;

typedef struct calib_src {
    const rd_tensor *samples;
    size_t n_in;
} calib_src;

static rd_status copy_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    const calib_src *c = user;
    for (size_t i = 0; i < c->n_in; i++) {
        const rd_tensor *t = &c->samples[k * c->n_in + i];
        rd_status st = rd_tensor_alloc(&inputs[i], t->dtype, t->rank, t->dims, err);
        if (st != RD_OK)
            return st;
        size_t bytes = 0;
        if (rd_shape_bytes(t->dtype, t->rank, t->dims, &bytes, err) != RD_OK)
            return RD_E_LIMIT;
        memcpy(inputs[i].data, t->data, bytes);
    }
    return RD_OK;
}

/* Output accuracy of one variant: its own inputs, calibration and golden. */
static rd_status measure_variant(rd_model *m, variant *v, const char *const *inputs, size_t n_inputs, size_t samples,
                                 int threads, rd_error *err)
{
    rd_tensor *x = NULL;
    size_t n = 0, n_in = rd_model_input_count(m);
    rd_sim *s = NULL;
    an_hyb_ctx hc;
    memset(&hc, 0, sizeof hc);
    rd_status st = an_quant_load_samples(&v->q, m, inputs, n_inputs, samples, NULL, &x, &n, err);
    calib_src src = {x, n_in};
    if (st == RD_OK && v->self_calibration)
        st = an_quant_build_sim_from(&v->q, m, x, copy_sample, &src, n, NULL, false, &s, err);
    else if (st == RD_OK)
        st = an_quant_build_sim(&v->q, m, x, NULL, false, &s, err);
    if (st == RD_OK)
        st = an_hyb_init(&hc, m, s, x, n, threads, err);
    hc.reuse_bytes = 0; /* one measurement per variant: nothing to resume from */
    if (st == RD_OK)
        st = an_hyb_measure(&hc, NULL, 0, &v->score, err);
    an_hyb_fini(&hc);
    rd_sim_destroy(s);
    for (size_t k = 0; x && k < n * n_in; k++)
        rd_tensor_fini(&x[k]);
    free(x);
    return st;
}

/* One mean and std for every channel of every input (channels: axis 1 of the model input). */
static void set_mean_std(an_quant_opts *q, const rd_model *m, float mean, float std)
{
    size_t n_in = rd_model_input_count(m);
    q->cfg.n_mean = q->cfg.n_std = n_in;
    for (size_t i = 0; i < n_in; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        size_t ch = vi.rank >= 2 && vi.dims[1] >= 1 && vi.dims[1] <= RD_MAX_INPUT_CHANNELS ? (size_t)vi.dims[1] : 1;
        q->cfg.mean[i].n = q->cfg.std[i].n = ch;
        for (size_t c = 0; c < ch; c++) {
            q->cfg.mean[i].v[c] = mean;
            q->cfg.std[i].v[c] = std;
        }
    }
}

int an_hybrid_diagnose(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                       const char *const *inputs, size_t n_inputs, size_t samples, bool json, int threads)
{
    rd_error err = {0};
    rd_model *m = NULL;
    rd_status st = rd_model_load(model_path, lopt, &m, &err);
    if (st == RD_OK)
        st = an_quant_finish(q, m, &err);
    if (st != RD_OK) {
        int rc = err.code == RD_E_INVAL ? an_usage(ctx, "%s", err.msg) : an_fail(ctx, &err);
        rd_model_destroy(m);
        return rc;
    }
    size_t n_in = rd_model_input_count(m);
    variant *v = calloc(16, sizeof *v);
    if (!v) {
        rd_model_destroy(m);
        return AN_EXIT_INPUT;
    }
    size_t nv = 0;
    v[nv].q = *q;
    snprintf(v[nv++].name, sizeof v->name, "as given");
    /* RGB/BGR: only images are swapped */
    v[nv].q = *q;
    v[nv].q.cfg.n_rgb2bgr = n_in;
    v[nv].q.cfg.rgb2bgr_all = false;
    for (size_t i = 0; i < n_in; i++)
        v[nv].q.cfg.rgb2bgr[i] = !q->cfg.rgb2bgr[i];
    snprintf(v[nv++].name, sizeof v->name, "RGB/BGR swapped (--rgb2bgr %s)", q->cfg.rgb2bgr[0] ? "off" : "on");
    static const float ms[][2] = {{0.0f, 1.0f}, {0.0f, 255.0f}, {127.5f, 127.5f}, {127.5f, 1.0f}};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        v[nv].q = *q;
        set_mean_std(&v[nv].q, m, ms[k][0], ms[k][1]);
        snprintf(v[nv++].name, sizeof v->name, "mean %g, std %g", ms[k][0], ms[k][1]);
    }
    v[nv].q = *q;
    v[nv].self_calibration = true;
    snprintf(v[nv++].name, sizeof v->name, "calibrated on the analysed inputs themselves");
    v[nv].q = *q;
    v[nv].q.cfg.method = q->cfg.method == RD_QMETHOD_LAYER ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER;
    bool per_tensor = v[nv].q.cfg.method == RD_QMETHOD_LAYER;
    snprintf(v[nv].name, sizeof v->name, "weights per %s (--method %s)", per_tensor ? "tensor" : "channel",
             per_tensor ? "layer" : "channel");
    nv++;
    static const rd_qalgo algos[] = {RD_QALGO_NORMAL, RD_QALGO_KL_DIVERGENCE, RD_QALGO_MMSE};
    for (size_t k = 0; k < 3; k++) {
        if (algos[k] == q->cfg.algorithm)
            continue;
        v[nv].q = *q;
        v[nv].q.cfg.algorithm = algos[k];
        snprintf(v[nv++].name, sizeof v->name, "--algorithm %s", rd_qalgo_name(algos[k]));
    }
    for (size_t i = 0; i < nv; i++) {
        if (ctx->errs && !json)
            fprintf(ctx->errs, "diagnose: %zu/%zu %s\n", i + 1, nv, v[i].name);
        rd_error e = {0};
        v[i].ok = measure_variant(m, &v[i], inputs, n_inputs, samples, threads, &e) == RD_OK;
        if (!v[i].ok)
            snprintf(v[i].error, sizeof v[i].error, "%s", e.msg);
    }
    if (!v[0].ok) {
        fprintf(ctx->errs, "rknn-diag hybrid: error: %s\n", v[0].error);
        free(v);
        rd_model_destroy(m);
        return AN_EXIT_INPUT;
    }
    /* the fix: the best variant, if it removes at least half of the error */
    size_t best = 0;
    for (size_t i = 1; i < nv; i++)
        if (v[i].ok && v[i].score.cos > v[best].score.cos)
            best = i;
    double e0 = 1.0 - v[0].score.cos, eb = 1.0 - v[best].score.cos;
    bool named = best != 0 && eb <= 0.5 * e0 && e0 > 1e-4;
    if (json) {
        cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
        cJSON_AddItemToObject(root, "variants", arr);
        for (size_t i = 0; i < nv; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "variant", v[i].name);
            if (v[i].ok) {
                cJSON_AddNumberToObject(o, "output_cos", v[i].score.cos);
                cJSON_AddNumberToObject(o, "output_sqnr_db", isfinite(v[i].score.sqnr_db) ? v[i].score.sqnr_db : 999);
            } else
                cJSON_AddStringToObject(o, "error", v[i].error);
            cJSON_AddItemToArray(arr, o);
        }
        if (named)
            cJSON_AddStringToObject(root, "likely_mistake", v[best].name);
        else
            cJSON_AddNullToObject(root, "likely_mistake");
        char *text = cJSON_Print(root);
        if (text)
            fprintf(ctx->out, "%s\n", text);
        free(text);
        cJSON_Delete(root);
    } else {
        fprintf(ctx->out, "%-52s %10s %9s\n", "variant", "out_cos", "sqnr_dB");
        for (size_t i = 0; i < nv; i++) {
            if (v[i].ok)
                fprintf(ctx->out, "%-52s %10.5f %9.2f%s\n", v[i].name, v[i].score.cos, v[i].score.sqnr_db,
                        named && i == best ? "  <- fixes it" : "");
            else
                fprintf(ctx->out, "%-52s %10s %9s  (%s)\n", v[i].name, "-", "-", v[i].error);
        }
        fprintf(ctx->out, "\nout_cos: int8 outputs against FP32 on that variant's own inputs (minimum over outputs and "
                          "samples).\n");
        if (named)
            fprintf(ctx->out, "likely mistake: %s (output cosine %.5f -> %.5f)\n", v[best].name, v[0].score.cos,
                    v[best].score.cos);
        else
            fprintf(ctx->out, "no configuration variant removes half of the error: look at the layers (hybrid "
                              "suggest)\n");
    }
    free(v);
    rd_model_destroy(m);
    return AN_EXIT_OK;
}
