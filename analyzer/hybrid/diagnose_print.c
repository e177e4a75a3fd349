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
    if (isfinite(ws->worst)) {
        cJSON_AddNumberToObject(wj, "worst", ws->worst);
        cJSON_AddStringToObject(wj, "layer", ws->layer);
    }
    cJSON_AddNumberToObject(wj, "layers_over", (double)ws->n_over);
    cJSON *mk = cJSON_AddArrayToObject(root, "likely_mistakes");
    for (size_t k = 0; k < nf; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "mistake", fd[k].what);
        cJSON_AddStringToObject(o, "evidence", fd[k].evidence);
        cJSON_AddStringToObject(o, "fix", fd[k].fix);
        cJSON_AddItemToArray(mk, o);
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
