/* diagnose_print.c: an_diagnosis (diagnose.h) as text and as JSON. */
#include "diagnose.h"
#include "json_out.h"
#include "term_text.h"

#include <cjson/cJSON.h>
#include <math.h>

bool an_diagnosis_print_json(FILE *f, const an_diagnosis *d)
{
    const variant *v = d->v;
    const prep_eval *pe = &d->pe;
    const finding *fd = d->fd;
    const an_diag_wspread *ws = &d->ws;
    const rd_model *m = d->m;
    size_t nv = d->nv, nf = d->nf, n_in = d->n_in, v_self = d->v_self, golden_same = d->golden_same;
    double range_log2 = d->range_log2;
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = an_json_add_array(root, "variants", &ok);
    for (size_t i = 0; i < nv; i++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "variant", v[i].name, &ok);
        an_json_add_bool(o, "golden_changes", i > 0 && i < golden_same, &ok);
        if (v[i].ok) {
            an_json_add_num(o, "output_cos", v[i].score.cos, &ok);
            an_json_add_num(o, "output_sqnr_db", isfinite(v[i].score.sqnr_db) ? v[i].score.sqnr_db : 999, &ok);
        } else
            an_json_add_str(o, "error", v[i].error, &ok);
        an_json_push(arr, o, &ok);
    }
    cJSON *pre = an_json_add_array(root, "preprocessing_fit", &ok);
    for (size_t k = 0; k < pe->n; k++)
        for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++) {
            if (!pe->has_site[i])
                continue;
            cJSON *o = cJSON_CreateObject();
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
            an_json_add_str(o, "input", vi.name, &ok);
            an_json_add_str(o, "mean_std", pe->c[k].ms, &ok);
            an_json_add_num(o, "kl_nats", pe->c[k].fit[i], &ok);
            an_json_push(pre, o, &ok);
        }
    if (pe->rgb_checked) {
        cJSON *rgb = an_json_add_object(root, "rgb_bgr_fit", &ok);
        an_json_add_str(rgb, "mean_std", pe->rgb_ms, &ok);
        an_json_add_num(rgb, "batchnorm_layers", (double)pe->rgb_layers, &ok);
        an_json_add_num(rgb, "kl_as_given", pe->rgb_fit[0], &ok);
        an_json_add_num(rgb, "kl_swapped", pe->rgb_fit[1], &ok);
    }
    cJSON *cal = an_json_add_object(root, "calibration", &ok);
    an_json_add_num(cal, "clipped_share", v[0].clip.share, &ok);
    an_json_add_num(cal, "clipped_share_worst_tensor", v[0].clip.worst_share, &ok);
    an_json_add_str(cal, "worst_tensor", v[0].clip.worst, &ok);
    if (v[v_self].ok)
        an_json_add_num(cal, "clipped_share_self_calibrated", v[v_self].clip.share, &ok);
    if (isfinite(range_log2))
        an_json_add_num(cal, "range_ratio_median", exp2(range_log2), &ok);
    cJSON *wj = an_json_add_object(root, "weight_spread", &ok);
    if (isfinite(ws->worst)) {
        an_json_add_num(wj, "worst", ws->worst, &ok);
        an_json_add_str(wj, "layer", ws->layer, &ok);
    }
    an_json_add_num(wj, "layers_over", (double)ws->n_over, &ok);
    cJSON *mk = an_json_add_array(root, "likely_mistakes", &ok);
    for (size_t k = 0; k < nf; k++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "mistake", fd[k].what, &ok);
        an_json_add_str(o, "evidence", fd[k].evidence, &ok);
        an_json_add_str(o, "fix", fd[k].fix, &ok);
        an_json_push(mk, o, &ok);
    }
    if (!ok) {
        cJSON_Delete(root);
        return false;
    }
    return an_json_print(f, root);
}

void an_diagnosis_print_text(FILE *f, const an_diagnosis *d)
{
    const variant *v = d->v;
    const prep_eval *pe = &d->pe;
    const finding *fd = d->fd;
    const an_diag_wspread *ws = &d->ws;
    size_t nv = d->nv, nf = d->nf, n_in = d->n_in, v_self = d->v_self;
    double range_log2 = d->range_log2;
    fprintf(f, "%-52s %10s %9s\n", "variant", "out_cos", "sqnr_dB");
    for (size_t i = 0; i < nv; i++) {
        if (v[i].ok)
            fprintf(f, "%-52s %10.5f %9.2f\n", RD_TEXT_SHOWN(v[i].name), v[i].score.cos, v[i].score.sqnr_db);
        else
            fprintf(f, "%-52s %10s %9s  (%s)\n", RD_TEXT_SHOWN(v[i].name), "-", "-", RD_TEXT_SHOWN(v[i].error));
    }
    fprintf(f, "\nout_cos: int8 outputs against FP32 on that variant's own inputs (minimum "
               "over outputs and "
               "samples).\n* changes the inputs, so the FP32 golden too: the cosine cannot "
               "show this mistake; "
               "the BatchNormalization fit below can.\n");
    if (pe->any_site) {
        fprintf(f, "\npreprocessing against the first BatchNormalization (median KL per "
                   "channel, nats; lower "
                   "fits the training data better):\n");
        for (size_t k = 0; k < pe->n; k++)
            for (size_t i = 0; i < n_in && i < RD_MAX_MODEL_INPUTS; i++)
                if (pe->has_site[i])
                    fprintf(f, "  %-60s %10.4g%s\n", pe->c[k].ms, pe->c[k].fit[i], k == 0 ? "  (as given)" : "");
        if (pe->rgb_checked)
            fprintf(f,
                    "  every BatchNormalization (%zu, mean of their median KL) with %s: %.4g "
                    "channels as "
                    "given, %.4g R and B swapped\n",
                    pe->rgb_layers, pe->rgb_ms, pe->rgb_fit[0], pe->rgb_fit[1]);
    } else
        fprintf(f, "\npreprocessing: no Conv + BatchNormalization right after an input, so mean/std and "
                   "RGB/BGR cannot be checked\n");
    fprintf(f, "\ncalibration: %.3g%% of the analysed int8 activation values clipped", 100 * v[0].clip.share);
    if (v[0].clip.worst[0])
        fprintf(f, " (worst '%s' %.3g%%)", RD_TEXT_SHOWN(v[0].clip.worst), 100 * v[0].clip.worst_share);
    fprintf(f, "; %.3g%% when calibrated on them; median range %.3gx theirs\n",
            v[v_self].ok ? 100 * v[v_self].clip.share : NAN, exp2(range_log2));
    if (isfinite(ws->worst))
        fprintf(f, "weights: widest channel spread %.3gx (%s); %zu of %zu layers above %gx\n", ws->worst,
                RD_TEXT_SHOWN(ws->layer), ws->n_over, ws->n_layers, AN_DIAG_WSPREAD_HIGH);
    fprintf(f, "\n");
    for (size_t k = 0; k < nf; k++)
        fprintf(f, "likely mistake: %s: %s. Fix: %s\n", fd[k].what, RD_TEXT_SHOWN(fd[k].evidence), fd[k].fix);
    if (nf == 0)
        fprintf(f, "no likely configuration mistake: look at the layers (hybrid suggest) and where the error builds up "
                   "(hybrid sweep)\n");
}
