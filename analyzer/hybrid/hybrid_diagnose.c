/*
 * hybrid_diagnose.c: `rknn-diag hybrid diagnose`: the usual configuration mistakes of RKNN's guide,
 * each tried on the simulation (the output cosine it reaches, int8 against FP32 on that variant's
 * inputs), and the direct evidence that names a mistake where the cosine cannot see it
 * (docs/hybrid.md).
 */
#include "diagnose.h"
#include "config_model.h"
#include "term_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void an_diagnosis_destroy(an_diagnosis *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nv; i++)
        rd_sim_destroy(d->v[i].sim);
    rd_model_destroy(d->m);
    free(d);
}

/* The variants: the configuration as given, then each usual mistake fixed. */
static void make_variants(an_diagnosis *d, const an_quant_opts *q, size_t *v_method, size_t *v_algo)
{
    variant *v = d->v;
    const rd_model *m = d->m;
    size_t nv = 0, n_in = d->n_in;
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
    d->golden_same = nv;
    d->v_self = nv;
    v[nv].q = *q;
    v[nv].self_calibration = true;
    v[nv].keep = true;
    snprintf(v[nv++].name, sizeof v->name, "calibrated on the analysed inputs themselves");
    *v_method = nv;
    v[nv].q = *q;
    v[nv].q.cfg.method = q->cfg.method == RD_QMETHOD_LAYER ? RD_QMETHOD_CHANNEL : RD_QMETHOD_LAYER;
    bool per_tensor = v[nv].q.cfg.method == RD_QMETHOD_LAYER;
    snprintf(v[nv].name, sizeof v->name, "weights per %s (--method %s)", per_tensor ? "tensor" : "channel",
             per_tensor ? "layer" : "channel");
    nv++;
    *v_algo = nv;
    static const rd_qalgo algos[] = {RD_QALGO_NORMAL, RD_QALGO_KL_DIVERGENCE, RD_QALGO_MMSE};
    for (size_t k = 0; k < 3; k++) {
        if (algos[k] == q->cfg.algorithm)
            continue;
        v[nv].q = *q;
        v[nv].q.cfg.algorithm = algos[k];
        v[nv].keep = true;
        snprintf(v[nv++].name, sizeof v->name, "--algorithm %s", rd_qalgo_name(algos[k]));
    }
    d->nv = nv;
}

/* The mistakes only the outputs and the simulations show: algorithm, calibration set, per-tensor weights. */
/* The findings the variants' evidence supports; RD_E_NOMEM when memory runs out (no finding is added then). */
static rd_status judge_evidence(an_diagnosis *d, const an_quant_opts *q, size_t v_method, size_t v_algo, rd_error *err)
{
    variant *v = d->v;
    finding *fd = d->fd;
    size_t nv = d->nv, nf = d->nf, v_self = d->v_self;

    /* the algorithm: only the outputs can tell whether clipping the tails pays (the golden is the
     * given one) */
    size_t algo_best = 0;
    for (size_t i = v_algo; i < nv; i++)
        if (removes_half(&v[0], &v[i]) && (algo_best == 0 || v[i].score.cos > v[algo_best].score.cos))
            algo_best = i;
    double ratio = NAN, range_log2 = NAN; /* the measures before any finding is written */
    an_diag_wspread ws;
    rd_status st = algo_best ? an_diag_range_log2_ratio(v[algo_best].sim, v[0].sim, &ratio, err) : RD_OK;
    if (st == RD_OK && v[v_self].ok)
        st = an_diag_range_log2_ratio(v[0].sim, v[v_self].sim, &range_log2, err);
    if (st == RD_OK) /* per-tensor weights: the channel spread the single scale has to cover */
        st = an_diag_weight_spread(v[0].sim, &ws, err);
    if (st != RD_OK)
        return st;
    size_t algo_finding = nf;
    if (algo_best && nf < AN_DIAG_MAX_FINDINGS) {
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
    d->range_log2 = range_log2;
    if (v[v_self].ok && nf < AN_DIAG_MAX_FINDINGS) {
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
    d->ws = ws;
    if (q->cfg.method == RD_QMETHOD_LAYER && nf < AN_DIAG_MAX_FINDINGS &&
        (ws.n_over > 0 || removes_half(&v[0], &v[v_method]))) {
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
    d->nf = nf;
    return RD_OK;
}

rd_status an_diagnose(const an_diag_request *req, an_diagnosis **out, rd_error *err)
{
    *out = NULL;
    an_diagnosis *d = calloc(1, sizeof *d);
    if (!d)
        return rd_errorf(err, RD_E_NOMEM, "out of memory (the variants to diagnose)");
    an_model_request mreq = {.command = "hybrid diagnose",
                             .path = req->model_path,
                             .shapes = req->lopt->input_shapes,
                             .n_shapes = req->lopt->n_input_shapes,
                             .errs = req->errs,
                             .dynamic_refusal = "the diagnosis analyses one input shape: give it with --input-shape "
                                                "(or subgraphs.input_size_list)"};
    rd_status st = an_model_load_configured(req->q, &mreq, &d->m, err);
    if (st != RD_OK) {
        an_diagnosis_destroy(d);
        return st;
    }
    d->n_in = rd_model_input_count(d->m);
    size_t v_method = 0, v_algo = 0;
    make_variants(d, req->q, &v_method, &v_algo);
    for (size_t i = 0; i < d->nv; i++) {
        variant *v = &d->v[i];
        if (req->progress)
            fprintf(req->progress, "diagnose: %zu/%zu %s\n", i + 1, d->nv, RD_TEXT_SHOWN(v->name));
        rd_error e = {0};
        v->ok = measure_variant(d->m, v, req->inputs, req->n_inputs, req->samples, req->threads, &e) == RD_OK;
        if (!v->ok && e.code == RD_E_NOMEM) { /* the command's failure, not the variant's result */
            if (err)
                *err = e;
            an_diagnosis_destroy(d);
            return RD_E_NOMEM;
        }
        if (!v->ok)
            snprintf(v->error, sizeof v->error, "%s", e.msg);
        if (i == 0 && !v->ok) { /* the configuration as given fails: nothing to compare with */
            d->given_failed = true;
            *out = d;
            return RD_OK;
        }
    }
    if (req->progress)
        fprintf(req->progress, "diagnose: preprocessing against the first BatchNormalization\n");
    st = prep_evaluate(d->m, req->q, req->inputs, req->n_inputs, req->samples, &d->pe, err);
    if (st != RD_OK) {
        an_diagnosis_destroy(d);
        return st;
    }
    d->nf = prep_findings(&d->pe, d->m, req->q, d->fd, AN_DIAG_MAX_FINDINGS);
    st = judge_evidence(d, req->q, v_method, v_algo, err);
    if (st != RD_OK) {
        an_diagnosis_destroy(d);
        return st;
    }
    *out = d;
    return RD_OK;
}
