/*
 * sample_result.c: builds a realistic, deterministic rd_result for the report tests: the kind of
 * table a small detector gives, with blank fused rows, NaN cells, degenerate classes and a layer
 * whose name tries to break out of HTML and JSON.
 */
#include "sample_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double frand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static void metrics_for(rd_metrics *m, double cos, double scale, uint64_t *seed)
{
    rd_metrics_unknown(m);
    m->cos = cos;
    m->euc_rel = sqrt(fmax(0, 2 * (1 - cos)));
    m->euc = m->euc_rel * scale;
    m->sqnr_db = m->euc_rel > 0 ? -20 * log10(m->euc_rel) : INFINITY;
    m->max_abs = m->euc_rel * scale * 0.1;
    m->mean_abs = m->max_abs * 0.2;
    m->gain = 1 + (frand(seed) - 0.5) * 0.02;
    m->offset = (frand(seed) - 0.5) * 0.01;
    m->sqnr_affine_db = m->sqnr_db + 0.5;
    m->err_steps = 0.289 + frand(seed);
    m->saturated_share = frand(seed) * 0.01;
    m->zero_share = frand(seed) * 0.05;
    m->count = 1 * 16 * 40 * 40;
    m->fp16_max_abs = scale;
}

static void group_for(rd_metric_group *g, double cos, double scale, int n_samples, uint64_t *seed)
{
    rd_metrics m;
    metrics_for(&m, cos, scale, seed);
    rd_metric_group_single(g, &m);
    if (n_samples > 1) {
        g->n_samples = n_samples;
        g->cos_min = cos - (1 - cos) * 2 - 0.001;
        g->cos_p5 = cos - (1 - cos);
        g->worst_sample = (int)(frand(seed) * n_samples);
    }
}

rd_status rd_sample_result(rd_result *r, size_t n_layers, bool runtime, int n_samples, rd_error *err)
{
    rd_result_init(r);
    uint64_t seed = 42;
    rd_status st;
    if ((st = rd_result_set_string(&r->tool, "rknn-diag 0.1.0", err)) != RD_OK ||
        (st = rd_result_set_string(&r->model, "models/yolo_tiny<&>\"demo\".onnx", err)) != RD_OK ||
        (st = rd_result_set_config(r, "dtype", "w8a8", err)) != RD_OK ||
        (st = rd_result_set_config(r, "quantized_algorithm", "normal", err)) != RD_OK ||
        (st = rd_result_set_config(r, "mean_values", "[[0, 0, 0]]", err)) != RD_OK ||
        (st = rd_result_set_config(r, "std_values", "[[255, 255, 255]]", err)) != RD_OK ||
        (st = rd_result_set_config(r, "dataset", "calib/<dataset>.txt", err)) != RD_OK)
        goto fail;
    r->n_samples = n_samples;
    r->has_runtime = runtime;
    double entire = 1.0;
    for (size_t i = 0; i < n_layers; i++) {
        char name[96];
        const char *op;
        bool fused = false;
        if (i == 0) {
            op = "Input";
            snprintf(name, sizeof name, "images");
        } else if (i == 1) {
            op = "exDataConvert";
            snprintf(name, sizeof name, "images_int8");
        } else if (i % 3 == 0) {
            op = "Relu";
            fused = true;
            snprintf(name, sizeof name, "/model.%zu/act/Relu_output_0", i);
        } else if (i == 7) {
            op = "Conv";
            snprintf(name, sizeof name, "%s", RD_SAMPLE_EVIL_NAME);
        } else {
            op = i % 5 == 4 ? "Add" : "Conv";
            snprintf(name, sizeof name, "/model.%zu/%s_output_0", i, op);
        }
        rd_layer_result *l;
        if ((st = rd_result_add_layer(r, name, op, &l, err)) != RD_OK)
            goto fail;
        if ((st = rd_result_set_string(&l->precision, i == 0 ? "float32" : "int8", err)) != RD_OK)
            goto fail;
        l->rank = 4;
        l->dims[0] = 1;
        l->dims[1] = 16 << (i / 8 < 3 ? i / 8 : 3);
        l->dims[2] = l->dims[3] = 80 >> (i / 8 < 3 ? i / 8 : 3);
        if (fused) {
            char into[96];
            snprintf(into, sizeof into, "/model.%zu/Conv_output_0", i - 1);
            if ((st = rd_result_set_string(&l->fused_into, into, err)) != RD_OK)
                goto fail;
            continue;
        }
        double single = 1 - 0.002 * frand(&seed);
        if (i == 5)
            single = 0.962; /* a lossy layer */
        if (i == 11)
            single = 0.985;
        if (i == 0)
            single = 1;
        entire *= single;
        double scale = 10 + 40 * frand(&seed);
        group_for(&l->groups[RD_GROUP_SIM_ENTIRE], entire, scale, n_samples, &seed);
        group_for(&l->groups[RD_GROUP_SIM_SINGLE], single, scale, n_samples, &seed);
        if (i == 0) {
            l->groups[RD_GROUP_SIM_SINGLE].mean.degenerate = RD_DEG_NONE;
            l->groups[RD_GROUP_SIM_ENTIRE].mean.sqnr_db = INFINITY;
        }
        if (i == 13) { /* a NaN cell: the tested tensor held NaN */
            l->groups[RD_GROUP_SIM_SINGLE].mean.cos = NAN;
            l->groups[RD_GROUP_SIM_SINGLE].mean.euc = NAN;
            l->groups[RD_GROUP_SIM_SINGLE].mean.sqnr_db = NAN;
            l->groups[RD_GROUP_SIM_SINGLE].mean.degenerate = RD_DEG_NONFINITE;
        }
        if (i == 10) {
            l->groups[RD_GROUP_SIM_SINGLE].mean.cos = 1;
            l->groups[RD_GROUP_SIM_SINGLE].mean.degenerate = RD_DEG_BOTH_ZERO;
        }
        if (runtime) {
            group_for(&l->groups[RD_GROUP_RT_ENTIRE], entire - 0.001 * frand(&seed), scale, n_samples, &seed);
            group_for(&l->groups[RD_GROUP_RT_SINGLE_SIM], i == 17 ? 0.93 : 1 - 0.0005 * frand(&seed), scale, n_samples,
                      &seed);
        }
        if (i == 5 || i == 11 || i == 7) {
            size_t nb = 48;
            l->hist.n_bins = nb;
            l->hist.lo = -4;
            l->hist.hi = 8;
            l->hist.golden = calloc(nb, sizeof *l->hist.golden);
            l->hist.tested = calloc(nb, sizeof *l->hist.tested);
            if (!l->hist.golden || !l->hist.tested) {
                st = rd_errorf(err, RD_E_NOMEM, "sample: out of memory");
                goto fail;
            }
            for (size_t b = 0; b < nb; b++) {
                double x = -4 + 12.0 * ((double)b + 0.5) / (double)nb;
                l->hist.golden[b] = (uint64_t)(4000 * exp(-(x - 1) * (x - 1) / 3));
                l->hist.tested[b] = (uint64_t)(4000 * exp(-(x - 1.3) * (x - 1.3) / 2.6) * (b % 4 == 0 ? 1.2 : 0.95));
            }
            size_t nc = (size_t)l->dims[1];
            l->channels.cos = calloc(nc, sizeof *l->channels.cos);
            if (!l->channels.cos) {
                st = rd_errorf(err, RD_E_NOMEM, "sample: out of memory");
                goto fail;
            }
            l->channels.n = nc;
            for (size_t c = 0; c < nc; c++)
                l->channels.cos[c] = c == 3 ? 0.41 : 1 - 0.01 * frand(&seed);
        }
    }
    const rd_finding findings[] = {
        {RD_FIND_LOSSY_LAYER, RD_SEV_ERROR, "/model.5/Conv_output_0", "Lossy layer '/model.5/Conv_output_0'",
         "single cos 0.96200 < 0.98; SQNR 22.2 dB; 1.1 quantization steps RMS",
         "try float16 for this layer (hybrid quantization) or the kl_divergence algorithm", 0.038},
        {RD_FIND_ENTIRE_JUMP, RD_SEV_WARNING, "/model.5/Conv_output_0", "Entire error jumps at layer 5",
         "entire cos 0.99811 -> 0.96019", NULL, 0.037},
        {RD_FIND_OTHER, RD_SEV_WARNING, RD_SAMPLE_EVIL_NAME, "Name with <markup> & \"quotes\" in layer 7",
         "evidence <i>not italic</i> & 'quoted'", "advice </li></ol><script>alert(1)</script>", 0.01},
        {RD_FIND_CONFIG, RD_SEV_INFO, NULL, "Model-wide: check mean/std values",
         "entire drop 0.02 with no single drop above 0.01", "check mean_values, std_values, RGB/BGR", 0.0},
    };
    for (size_t i = 0; i < sizeof findings / sizeof findings[0]; i++)
        if ((st = rd_result_add_finding(r, &findings[i], err)) != RD_OK)
            goto fail;
    return RD_OK;
fail:
    rd_result_fini(r);
    return st;
}
