/*
 * hybrid_diagnose.c: `rknn-diag hybrid diagnose`: the usual configuration mistakes of RKNN's guide,
 * each tried on the simulation (the output cosine it reaches, int8 against FP32 on that variant's
 * inputs), and the direct evidence that names a mistake where the cosine cannot see it
 * (docs/hybrid.md).
 */
#include "term_text.h"
#include "json_out.h"
#include "cli_internal.h"
#include "diagnose_evidence.h"
#include "hybrid.h"
#include "config_model.h"
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
    bool self_calibration; /* calibrate on the analysed samples */
    bool keep;             /* keep the simulation and measure clipping (evidence) */
    an_hyb_score score;
    bool ok;
    char error[200];
    rd_sim *sim; /* kept */
    an_diag_clip clip;
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
    if (st == RD_OK && v->keep)
        st = an_diag_clip_measure(s, x, n, n_in, threads, &v->clip, err);
    an_hyb_fini(&hc);
    if (st == RD_OK && v->keep)
        v->sim = s;
    else
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

/* ImageNet's mean/std in pixels (RGB order), the other usual setting of 3-channel models. */
static void set_imagenet(an_quant_opts *q, const rd_model *m)
{
    static const float mean[3] = {123.675f, 116.28f, 103.53f}, std[3] = {58.395f, 57.12f, 57.375f};
    set_mean_std(q, m, 0.0f, 1.0f);
    for (size_t i = 0; i < rd_model_input_count(m); i++)
        if (q->cfg.mean[i].n == 3)
            for (size_t c = 0; c < 3; c++) {
                q->cfg.mean[i].v[c] = mean[c];
                q->cfg.std[i].v[c] = std[c];
            }
}

static void toggle_rgb2bgr(an_quant_opts *q, const an_quant_opts *given, size_t n_in)
{
    q->cfg.n_rgb2bgr = n_in;
    q->cfg.rgb2bgr_all = false;
    for (size_t i = 0; i < n_in; i++)
        q->cfg.rgb2bgr[i] = !given->cfg.rgb2bgr[i];
}

/* "127,127,127" (one value when all channels agree) */
static void values_str(const rd_channel_values *v, char *buf, size_t len)
{
    bool same = true;
    for (size_t c = 1; c < v->n; c++)
        same = same && v->v[c] == v->v[0];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t c = 0; c < (same ? 1 : v->n) && used < len; c++) {
        int k = snprintf(buf + used, len - used, "%s%g", c ? "," : "", (double)v->v[c]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* Preprocessing candidates judged by the first BatchNormalization (golden-independent evidence). */
#define PREP_MAX 8
typedef struct prep_cand {
    an_quant_opts q;
    bool given_ms;                   /* the given mean/std */
    char ms[96];                     /* "mean 127, std 128" */
    double fit[RD_MAX_MODEL_INPUTS]; /* median KL per channel, NaN: no site for that input */
} prep_cand;

typedef struct prep_eval {
    prep_cand c[PREP_MAX];
    size_t n;
    bool any_site;
    an_diag_bn_site site[RD_MAX_MODEL_INPUTS];
    bool has_site[RD_MAX_MODEL_INPUTS];
    size_t best[RD_MAX_MODEL_INPUTS];
    /* RGB/BGR over every BatchNormalization, with the best mean/std: as given and swapped */
    bool rgb_checked;
    double rgb_fit[2];
    size_t rgb_layers;
    char rgb_ms[96];
} prep_eval;

static void ms_label(const an_quant_opts *q, char *buf, size_t len)
{
    char m[48], s[48];
    values_str(&q->cfg.mean[0], m, sizeof m);
    values_str(&q->cfg.std[0], s, sizeof s);
    snprintf(buf, len, "mean %s, std %s", q->cfg.n_mean ? m : "0", q->cfg.n_std ? s : "1");
}

/* The analysed samples prepared with q: the first-layer fit of every input with a site, or the fit
 * of every BatchNormalization (all_fit non-NULL). */
static rd_status load_and_fit(rd_model *m, const an_quant_opts *q, const char *const *inputs, size_t n_inputs,
                              size_t samples, const prep_eval *pe, double *fit, double *all_fit, size_t *n_layers,
                              rd_error *err)
{
    size_t n_in = rd_model_input_count(m), n = 0;
    rd_tensor *x = NULL;
    rd_status st = an_quant_load_samples(q, m, inputs, n_inputs, samples, NULL, &x, &n, err);
    for (size_t i = 0; !all_fit && i < n_in && i < RD_MAX_MODEL_INPUTS; i++) {
        fit[i] = NAN;
        if (st == RD_OK && pe->has_site[i])
            st = an_diag_bn_fit(m, &pe->site[i], x, n, &fit[i], err);
    }
    if (st == RD_OK && all_fit)
        st = an_diag_bn_fit_all(m, x, n, all_fit, n_layers, err);
    for (size_t j = 0; x && j < n * n_in; j++)
        rd_tensor_fini(&x[j]);
    free(x);
    return st;
}

static rd_status prep_evaluate(rd_model *m, const an_quant_opts *q, const char *const *inputs, size_t n_inputs,
                               size_t samples, prep_eval *pe, rd_error *err)
{
    size_t n_in = rd_model_input_count(m), first = 0;
    bool three = false; /* a 3-channel input with a site: ImageNet's values and RGB/BGR apply */
    for (size_t i = n_in < RD_MAX_MODEL_INPUTS ? n_in : RD_MAX_MODEL_INPUTS; i-- > 0;) {
        pe->has_site[i] = an_diag_bn_find(m, i, &pe->site[i]);
        if (!pe->has_site[i])
            continue;
        pe->any_site = true;
        first = i;
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        three = three || (vi.rank >= 2 && vi.dims[1] == 3);
    }
    if (!pe->any_site)
        return RD_OK;
    static const float ms[][2] = {{0.0f, 1.0f}, {0.0f, 255.0f}, {127.5f, 127.5f}, {127.5f, 1.0f}};
    for (size_t k = 0; k < 2 + sizeof ms / sizeof ms[0] && pe->n < PREP_MAX; k++) {
        if (k == 1 && !three)
            continue;
        prep_cand *c = &pe->c[pe->n];
        c->q = *q;
        c->given_ms = k == 0;
        if (k == 1)
            set_imagenet(&c->q, m);
        else if (k >= 2)
            set_mean_std(&c->q, m, ms[k - 2][0], ms[k - 2][1]);
        ms_label(&c->q, c->ms, sizeof c->ms);
        if (k > 0 && strcmp(c->ms, pe->c[0].ms) == 0)
            continue; /* the given values are already row 0 */
        if (load_and_fit(m, &c->q, inputs, n_inputs, samples, pe, c->fit, NULL, NULL, err) != RD_OK)
            return rd_error_prefix(err, "preprocessing check (%s)", c->ms);
        pe->n++;
    }
    for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++) {
        pe->best[i] = 0;
        for (size_t k = 1; k < pe->n; k++)
            if (pe->c[k].fit[i] < pe->c[pe->best[i]].fit[i])
                pe->best[i] = k;
    }
    if (!three)
        return RD_OK;
    /* the first layer hardly tells R from B (its filters are mostly luminance): every
     * BatchNormalization can */
    const prep_cand *ms_best = &pe->c[pe->best[first]];
    snprintf(pe->rgb_ms, sizeof pe->rgb_ms, "%s", ms_best->ms);
    for (int swap = 0; swap <= 1; swap++) {
        an_quant_opts qq = ms_best->q;
        if (swap)
            toggle_rgb2bgr(&qq, q, n_in);
        if (load_and_fit(m, &qq, inputs, n_inputs, samples, pe, NULL, &pe->rgb_fit[swap], &pe->rgb_layers, err) !=
            RD_OK)
            return rd_error_prefix(err, "RGB/BGR check");
    }
    pe->rgb_checked = true;
    return RD_OK;
}

/* One named mistake: what, the evidence, the fix. */
typedef struct finding {
    char what[64];
    char evidence[400];
    char fix[160];
} finding;

/*
 * A preprocessing that fits the trained statistics this many times better (KL) is the one the model
 * was trained with: a right setting gives a fit of a fraction of a nat per channel, a wrong scale
 * or offset tens to thousands; RGB against BGR moves it by a smaller factor, so both are judged by
 * the same ratio.
 */
#define PREP_FIT_RATIO 2.0

static size_t prep_findings(const prep_eval *pe, const rd_model *m, const an_quant_opts *q, finding *f, size_t nf)
{
    size_t n = 0;
    for (size_t i = 0; i < rd_model_input_count(m) && i < RD_MAX_MODEL_INPUTS && n < nf; i++) {
        if (!pe->has_site[i] || pe->n == 0)
            continue;
        const prep_cand *given = &pe->c[0], *best = &pe->c[pe->best[i]];
        if (!(best->fit[i] * PREP_FIT_RATIO < given->fit[i]))
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        snprintf(f[n].what, sizeof f[n].what, "mean/std");
        snprintf(f[n].evidence, sizeof f[n].evidence,
                 "input '%s' with %s fits the BatchNormalization after '%s' at %.3g nats (median "
                 "KL per channel); "
                 "with %s at %.3g",
                 vi.name, given->ms, pe->site[i].conv_name, given->fit[i], best->ms, best->fit[i]);
        snprintf(f[n].fix, sizeof f[n].fix, "%s (mean_values/std_values)", best->ms);
        n++;
    }
    if (pe->rgb_checked && n < nf && pe->rgb_fit[1] * PREP_FIT_RATIO < pe->rgb_fit[0]) {
        bool on = q->cfg.rgb2bgr[0];
        snprintf(f[n].what, sizeof f[n].what, "RGB/BGR swapped");
        snprintf(f[n].evidence, sizeof f[n].evidence,
                 "with %s the %zu BatchNormalizations fit at %.3g nats (mean of their median KL) "
                 "with the channels as "
                 "given (--rgb2bgr %s), at %.3g with R and B swapped",
                 pe->rgb_ms, pe->rgb_layers, pe->rgb_fit[0], on ? "on" : "off", pe->rgb_fit[1]);
        snprintf(f[n].fix, sizeof f[n].fix, "%s (quant_img_RGB2BGR: %s)", on ? "drop --rgb2bgr" : "--rgb2bgr",
                 on ? "false" : "true");
        n++;
    }
    return n;
}

/* The cosine rule, for the variants whose golden is the given one: the fix removes half of the
 * error. */
static bool removes_half(const variant *given, const variant *v)
{
    double e0 = 1.0 - given->score.cos, e1 = 1.0 - v->score.cos;
    return v->ok && e0 > 1e-4 && e1 <= 0.5 * e0;
}

int an_hybrid_diagnose(an_cmd_ctx *ctx, const char *model_path, an_quant_opts *q, const rd_load_options *lopt,
                       const char *const *inputs, size_t n_inputs, size_t samples, bool json, int threads)
{
    rd_error err = {0};
    rd_model *m = NULL;
    an_model_request req = {.command = "hybrid diagnose",
                            .path = model_path,
                            .shapes = lopt->input_shapes,
                            .n_shapes = lopt->n_input_shapes,
                            .errs = ctx->errs,
                            .dynamic_refusal = "the diagnosis analyses one input shape: give it with --input-shape "
                                               "(or subgraphs.input_size_list)"};
    rd_status st = an_model_load_configured(q, &req, &m, &err);
    if (st != RD_OK) {
        int rc = an_fail(ctx, &err);
        rd_model_destroy(m);
        return rc;
    }
    size_t n_in = rd_model_input_count(m);
    variant *v = calloc(16, sizeof *v);
    prep_eval *pe = calloc(1, sizeof *pe);
    finding *fd = calloc(8, sizeof *fd);
    if (!v || !pe || !fd) {
        free(v);
        free(pe);
        free(fd);
        rd_model_destroy(m);
        return an_fail_nomem(ctx, "the variants to diagnose");
    }
    size_t nv = 0;
    v[nv].q = *q;
    v[nv].keep = true;
    snprintf(v[nv++].name, sizeof v->name, "as given");
    /* RGB/BGR: only images are swapped */
    v[nv].q = *q;
    toggle_rgb2bgr(&v[nv].q, q, n_in);
    snprintf(v[nv++].name, sizeof v->name, "RGB/BGR swapped (--rgb2bgr %s) *", q->cfg.rgb2bgr[0] ? "off" : "on");
    static const float ms[][2] = {{0.0f, 1.0f}, {0.0f, 255.0f}, {127.5f, 127.5f}, {127.5f, 1.0f}};
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
        v[nv].q = *q;
        set_mean_std(&v[nv].q, m, ms[k][0], ms[k][1]);
        snprintf(v[nv++].name, sizeof v->name, "mean %g, std %g *", ms[k][0], ms[k][1]);
    }
    const size_t golden_same = nv; /* variants from here on keep the given inputs, hence the given golden */
    size_t v_self = nv;
    v[nv].q = *q;
    v[nv].self_calibration = true;
    v[nv].keep = true;
    snprintf(v[nv++].name, sizeof v->name, "calibrated on the analysed inputs themselves");
    size_t v_method = nv;
    v[nv].q = *q;
    v[nv].q.cfg.method = q->cfg.method == RD_QMETHOD_LAYER ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER;
    bool per_tensor = v[nv].q.cfg.method == RD_QMETHOD_LAYER;
    snprintf(v[nv].name, sizeof v->name, "weights per %s (--method %s)", per_tensor ? "tensor" : "channel",
             per_tensor ? "layer" : "channel");
    nv++;
    size_t v_algo = nv;
    static const rd_qalgo algos[] = {RD_QALGO_NORMAL, RD_QALGO_KL_DIVERGENCE, RD_QALGO_MMSE};
    for (size_t k = 0; k < 3; k++) {
        if (algos[k] == q->cfg.algorithm)
            continue;
        v[nv].q = *q;
        v[nv].q.cfg.algorithm = algos[k];
        v[nv].keep = true;
        snprintf(v[nv++].name, sizeof v->name, "--algorithm %s", rd_qalgo_name(algos[k]));
    }
    for (size_t i = 0; i < nv; i++) {
        if (ctx->errs && !json)
            fprintf(ctx->errs, "diagnose: %zu/%zu %s\n", i + 1, nv, RD_TEXT_SHOWN(v[i].name));
        rd_error e = {0};
        v[i].ok = measure_variant(m, &v[i], inputs, n_inputs, samples, threads, &e) == RD_OK;
        if (!v[i].ok)
            snprintf(v[i].error, sizeof v[i].error, "%s", e.msg);
        if (i == 0 && !v[i].ok)
            break; /* the configuration as given fails: nothing to compare with */
    }
    int rc = AN_EXIT_OK;
    if (!v[0].ok) {
        fputs("rknn-diag hybrid: error: ", ctx->errs);
        an_put_text(ctx->errs, v[0].error);
        fputc('\n', ctx->errs);
        rc = AN_EXIT_INPUT;
        goto out;
    }
    if (ctx->errs && !json)
        fprintf(ctx->errs, "diagnose: preprocessing against the first BatchNormalization\n");
    st = prep_evaluate(m, q, inputs, n_inputs, samples, pe, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    size_t nf = prep_findings(pe, m, q, fd, 8);

    /* the algorithm: only the outputs can tell whether clipping the tails pays (the golden is the
     * given one) */
    size_t algo_best = 0;
    for (size_t i = v_algo; i < nv; i++)
        if (removes_half(&v[0], &v[i]) && (algo_best == 0 || v[i].score.cos > v[algo_best].score.cos))
            algo_best = i;
    size_t algo_finding = nf;
    if (algo_best && nf < 8) {
        double ratio = an_diag_range_log2_ratio(v[algo_best].sim, v[0].sim);
        snprintf(fd[nf].what, sizeof fd[nf].what, "calibration algorithm %s", rd_qalgo_name(q->cfg.algorithm));
        snprintf(fd[nf].evidence, sizeof fd[nf].evidence,
                 "%s's ranges are %.3gx %s's at the median tensor; output cosine %.5f -> %.5f "
                 "(SQNR %.1f -> %.1f dB)",
                 rd_qalgo_name(v[algo_best].q.cfg.algorithm), exp2(ratio), rd_qalgo_name(q->cfg.algorithm),
                 v[0].score.cos, v[algo_best].score.cos, v[0].score.sqnr_db, v[algo_best].score.sqnr_db);
        snprintf(fd[nf].fix, sizeof fd[nf].fix, "--algorithm %s (quantized_algorithm)",
                 rd_qalgo_name(v[algo_best].q.cfg.algorithm));
        nf++;
    }

    /* calibration set: clipping of the analysed values and range widths, against calibrating on
     * them */
    double range_log2 = v[v_self].ok ? an_diag_range_log2_ratio(v[0].sim, v[v_self].sim) : NAN;
    if (v[v_self].ok && nf < 8) {
        bool clips = v[0].clip.share >= 1e-3 && v[0].clip.share >= 10 * v[v_self].clip.share;
        /* ranges only wider than the samples need, and another algorithm fixes it: the set is fine,
         * its tails are not (outlier samples), which is what kl_divergence/mmse are for: named
         * above, not here */
        bool wide = fabs(range_log2) >= 1.0 && !(algo_finding < nf && range_log2 > 0);
        if ((clips || wide) && v[v_self].score.cos >= v[0].score.cos) {
            snprintf(fd[nf].what, sizeof fd[nf].what, "calibration set unlike the analysed inputs");
            snprintf(fd[nf].evidence, sizeof fd[nf].evidence,
                     "the calibrated ranges clip %.3g%% of the analysed activation values (worst "
                     "'%s' %.3g%%), "
                     "against %.3g%% when calibrated on them; the median tensor's range is %.3gx "
                     "theirs; output "
                     "cosine %.5f -> %.5f",
                     100 * v[0].clip.share, v[0].clip.worst, 100 * v[0].clip.worst_share, 100 * v[v_self].clip.share,
                     exp2(range_log2), v[0].score.cos, v[v_self].score.cos);
            snprintf(fd[nf].fix, sizeof fd[nf].fix,
                     "a --dataset of samples like the analysed ones (same source, lighting, "
                     "preprocessing)");
            nf++;
        }
    }
    /* per-tensor weights: the channel spread the single scale has to cover */
    an_diag_wspread ws;
    an_diag_weight_spread(v[0].sim, &ws);
    if (q->cfg.method == RD_QMETHOD_LAYER && nf < 8 && (ws.n_over > 0 || removes_half(&v[0], &v[v_method]))) {
        snprintf(fd[nf].what, sizeof fd[nf].what, "weights per tensor");
        snprintf(fd[nf].evidence, sizeof fd[nf].evidence,
                 "%zu of %zu layers have a weight channel above %gx the median channel's range "
                 "(worst '%s' %.3gx): "
                 "one scale per tensor leaves their small channels few codes; output cosine %.5f "
                 "-> %.5f per "
                 "channel",
                 ws.n_over, ws.n_layers, AN_DIAG_WSPREAD_HIGH, ws.layer, ws.worst, v[0].score.cos,
                 v[v_method].score.cos);
        snprintf(fd[nf].fix, sizeof fd[nf].fix, "--method channel (quantized_method: channel)");
        nf++;
    }
    if (json) {
        cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray();
        cJSON_AddItemToObject(root, "variants", arr);
        for (size_t i = 0; i < nv; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "variant", v[i].name);
            cJSON_AddBoolToObject(o, "golden_changes", i > 0 && i < golden_same);
            if (v[i].ok) {
                cJSON_AddNumberToObject(o, "output_cos", v[i].score.cos);
                cJSON_AddNumberToObject(o, "output_sqnr_db", isfinite(v[i].score.sqnr_db) ? v[i].score.sqnr_db : 999);
            } else
                cJSON_AddStringToObject(o, "error", v[i].error);
            cJSON_AddItemToArray(arr, o);
        }
        cJSON *pre = cJSON_CreateArray();
        cJSON_AddItemToObject(root, "preprocessing_fit", pre);
        for (size_t k = 0; k < pe->n; k++)
            for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++) {
                if (!pe->has_site[i])
                    continue;
                cJSON *o = cJSON_CreateObject();
                rd_value_info vi;
                rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
                cJSON_AddStringToObject(o, "input", vi.name);
                cJSON_AddStringToObject(o, "mean_std", pe->c[k].ms);
                cJSON_AddNumberToObject(o, "kl_nats", pe->c[k].fit[i]);
                cJSON_AddItemToArray(pre, o);
            }
        if (pe->rgb_checked) {
            cJSON *rgb = cJSON_AddObjectToObject(root, "rgb_bgr_fit");
            cJSON_AddStringToObject(rgb, "mean_std", pe->rgb_ms);
            cJSON_AddNumberToObject(rgb, "batchnorm_layers", (double)pe->rgb_layers);
            cJSON_AddNumberToObject(rgb, "kl_as_given", pe->rgb_fit[0]);
            cJSON_AddNumberToObject(rgb, "kl_swapped", pe->rgb_fit[1]);
        }
        cJSON *cal = cJSON_AddObjectToObject(root, "calibration");
        cJSON_AddNumberToObject(cal, "clipped_share", v[0].clip.share);
        cJSON_AddNumberToObject(cal, "clipped_share_worst_tensor", v[0].clip.worst_share);
        cJSON_AddStringToObject(cal, "worst_tensor", v[0].clip.worst);
        if (v[v_self].ok)
            cJSON_AddNumberToObject(cal, "clipped_share_self_calibrated", v[v_self].clip.share);
        if (isfinite(range_log2))
            cJSON_AddNumberToObject(cal, "range_ratio_median", exp2(range_log2));
        cJSON *wj = cJSON_AddObjectToObject(root, "weight_spread");
        if (isfinite(ws.worst)) {
            cJSON_AddNumberToObject(wj, "worst", ws.worst);
            cJSON_AddStringToObject(wj, "layer", ws.layer);
        }
        cJSON_AddNumberToObject(wj, "layers_over", (double)ws.n_over);
        cJSON *mk = cJSON_AddArrayToObject(root, "likely_mistakes");
        for (size_t k = 0; k < nf; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "mistake", fd[k].what);
            cJSON_AddStringToObject(o, "evidence", fd[k].evidence);
            cJSON_AddStringToObject(o, "fix", fd[k].fix);
            cJSON_AddItemToArray(mk, o);
        }
        an_json_print(ctx->out, root);
        goto out;
    }
    fprintf(ctx->out, "%-52s %10s %9s\n", "variant", "out_cos", "sqnr_dB");
    for (size_t i = 0; i < nv; i++) {
        if (v[i].ok)
            fprintf(ctx->out, "%-52s %10.5f %9.2f\n", RD_TEXT_SHOWN(v[i].name), v[i].score.cos, v[i].score.sqnr_db);
        else
            fprintf(ctx->out, "%-52s %10s %9s  (%s)\n", RD_TEXT_SHOWN(v[i].name), "-", "-", RD_TEXT_SHOWN(v[i].error));
    }
    fprintf(ctx->out, "\nout_cos: int8 outputs against FP32 on that variant's own inputs (minimum "
                      "over outputs and "
                      "samples).\n* changes the inputs, so the FP32 golden too: the cosine cannot "
                      "show this mistake; "
                      "the BatchNormalization fit below can.\n");
    if (pe->any_site) {
        fprintf(ctx->out, "\npreprocessing against the first BatchNormalization (median KL per "
                          "channel, nats; lower "
                          "fits the training data better):\n");
        for (size_t k = 0; k < pe->n; k++)
            for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++)
                if (pe->has_site[i])
                    fprintf(ctx->out, "  %-60s %10.4g%s\n", pe->c[k].ms, pe->c[k].fit[i], k == 0 ? "  (as given)" : "");
        if (pe->rgb_checked)
            fprintf(ctx->out,
                    "  every BatchNormalization (%zu, mean of their median KL) with %s: %.4g "
                    "channels as "
                    "given, %.4g R and B swapped\n",
                    pe->rgb_layers, pe->rgb_ms, pe->rgb_fit[0], pe->rgb_fit[1]);
    } else
        fprintf(ctx->out, "\npreprocessing: no Conv + BatchNormalization right after an input, so mean/std and "
                          "RGB/BGR cannot be checked\n");
    fprintf(ctx->out, "\ncalibration: %.3g%% of the analysed int8 activation values clipped", 100 * v[0].clip.share);
    if (v[0].clip.worst[0])
        fprintf(ctx->out, " (worst '%s' %.3g%%)", RD_TEXT_SHOWN(v[0].clip.worst), 100 * v[0].clip.worst_share);
    fprintf(ctx->out, "; %.3g%% when calibrated on them; median range %.3gx theirs\n",
            v[v_self].ok ? 100 * v[v_self].clip.share : NAN, exp2(range_log2));
    if (isfinite(ws.worst))
        fprintf(ctx->out, "weights: widest channel spread %.3gx (%s); %zu of %zu layers above %gx\n", ws.worst,
                RD_TEXT_SHOWN(ws.layer), ws.n_over, ws.n_layers, AN_DIAG_WSPREAD_HIGH);
    fprintf(ctx->out, "\n");
    for (size_t k = 0; k < nf; k++)
        fprintf(ctx->out, "likely mistake: %s: %s. Fix: %s\n", fd[k].what, RD_TEXT_SHOWN(fd[k].evidence), fd[k].fix);
    if (nf == 0)
        fprintf(ctx->out,
                "no likely configuration mistake: look at the layers (hybrid suggest) and where the error builds up "
                "(hybrid sweep)\n");
out:
    for (size_t i = 0; i < nv; i++)
        rd_sim_destroy(v[i].sim);
    free(v);
    free(pe);
    free(fd);
    rd_model_destroy(m);
    return rc;
}
