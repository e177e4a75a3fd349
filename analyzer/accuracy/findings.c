/*
 * findings.c: what the accuracy table means, in sentences that name the layer and the evidence.
 *
 * Kinds, most important first: FP16 overflow (values above 65504 become inf); lossy layers (single
 * cosine below the warning/error thresholds: the error the layer adds by itself), ranked by the error
 * they add; the layer where the entire error jumps; with a float16 sweep (accuracy --sweep), the block the
 * output error builds up in; and an entire drop that neither a layer nor such a block explains, which points
 * at configuration (RKNN's checklist). With the board: the first layer where the board
 * departs from the simulator although the board's inputs of that layer agree with the simulator's (its
 * single_sim cosine drops by itself: a runtime fault there, nothing upstream), and lossy layers told
 * apart: lossy in the simulator and the same on the board is quantization. NaN/Inf and float16
 * constants beyond 65504: findings_numeric.c.
 */
#include "accuracy.h"
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOSSY_FINDINGS 10
/* below this the board's layer is not the simulator's, even when the cosine holds (a gain error); a real
   board differs from the simulator by rounding only, far above it */
#define RUNTIME_MIN_SQNR_DB 20.0

static const rd_metric_group *group(const rd_layer_result *l, rd_group_id g)
{
    return l->groups[g].present ? &l->groups[g] : NULL;
}

static double single_cos(const rd_layer_result *l)
{
    const rd_metric_group *g = group(l, RD_GROUP_SIM_SINGLE);
    return g ? g->cos_min : NAN;
}

rd_status an_finding_add(rd_result *r, rd_finding_kind kind, rd_severity sev, const char *layer, double score,
                         const char *title, const char *evidence, const char *advice, rd_error *err)
{
    rd_finding f = {.kind = kind,
                    .severity = sev,
                    .layer = (char *)layer,
                    .title = (char *)title,
                    .evidence = (char *)evidence,
                    .advice = (char *)advice,
                    .score = score};
    return rd_result_add_finding(r, &f, err);
}

static rd_status fp16_overflow(rd_result *r, rd_error *err)
{
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        const rd_metric_group *g = group(l, RD_GROUP_SIM_ENTIRE);
        if (!g || g->mean.fp16_overflow <= 0)
            continue;
        char title[600], evidence[600];
        snprintf(title, sizeof title, "FP16 overflow in '%s' (layer %zu)", l->name, i);
        snprintf(evidence, sizeof evidence,
                 "%lld of %lld values exceed 65504 and become inf in float16; largest |x| %.6g before rounding",
                 (long long)g->mean.fp16_overflow, (long long)g->mean.count, g->mean.fp16_max_abs);
        rd_status st = an_finding_add(
            r, RD_FIND_FP16_OVERFLOW, RD_SEV_ERROR, l->name, (double)(r->n_layers - i), title, evidence,
            "keep this layer in float32 on the CPU, rescale it (fold a constant gain into the next layer), "
            "or quantize it to int8, whose range is calibrated",
            err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static double cos_eff(const rd_metric_group *g)
{
    if (!g)
        return NAN;
    if (isnan(g->cos_min) && g->mean.degenerate == RD_DEG_BOTH_ZERO)
        return 1.0;
    return g->cos_min;
}

/* ", and the board computes it as the simulator does (...): quantization, not the runtime" */
static void board_verdict(const rd_layer_result *l, const an_accuracy_opts *o, char *buf, size_t len)
{
    const rd_metric_group *ss = group(l, RD_GROUP_RT_SINGLE_SIM);
    buf[0] = '\0';
    if (!ss)
        return;
    double c = cos_eff(ss);
    if (!isnan(c) && c >= o->warn_cos)
        snprintf(buf, len,
                 "; the board loses the same (single_sim %.5f: it computes this layer as the simulator "
                 "does): quantization, not the runtime",
                 c);
    else
        snprintf(buf, len,
                 "; the board also departs from the simulator here (single_sim %.5f): see the runtime "
                 "finding",
                 c);
}

static rd_status lossy_layers(rd_result *r, const an_accuracy_opts *o, size_t *n_lossy, rd_error *err)
{
    an_ranked *list = calloc(r->n_layers + 1, sizeof *list);
    if (!list)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        double c = single_cos(&r->layers[i]);
        if (!isnan(c) && c < o->warn_cos && strcmp(r->layers[i].op_type, "Input") != 0)
            list[n++] = (an_ranked){i, c};
    }
    *n_lossy = n;
    qsort(list, n, sizeof *list, an_ranked_by_cos);
    rd_status st = RD_OK;
    for (size_t k = 0; k < n && k < MAX_LOSSY_FINDINGS && st == RD_OK; k++) {
        const rd_layer_result *l = &r->layers[list[k].layer];
        const rd_metric_group *s = group(l, RD_GROUP_SIM_SINGLE);
        char title[600], evidence[900];
        snprintf(title, sizeof title, "Lossy layer '%s' (layer %zu of %zu, %s)", l->name, list[k].layer, r->n_layers,
                 l->precision ? l->precision : "?");
        int w = snprintf(evidence, sizeof evidence,
                         "single cosine %.5f (the error this layer adds by itself), SQNR %.1f dB", list[k].cos,
                         s->mean.sqnr_db);
        if (w > 0 && (size_t)w < sizeof evidence && !isnan(s->mean.err_steps))
            w += snprintf(evidence + w, sizeof evidence - (size_t)w, ", %.2f quantization steps RMS (0.29 is ideal)",
                          s->mean.err_steps);
        if (w > 0 && (size_t)w < sizeof evidence && s->mean.saturated_share > 0.001)
            w += snprintf(evidence + w, sizeof evidence - (size_t)w, ", %.1f%% of values saturated",
                          100.0 * s->mean.saturated_share);
        char verdict[300];
        board_verdict(l, o, verdict, sizeof verdict);
        if (w > 0 && (size_t)w < sizeof evidence)
            snprintf(evidence + w, sizeof evidence - (size_t)w, "%s", verdict);
        st = an_finding_add(
            r, RD_FIND_LOSSY_LAYER, list[k].cos < o->error_cos ? RD_SEV_ERROR : RD_SEV_WARNING, l->name,
            1.0 - list[k].cos, title, evidence,
            "candidate for float16 in a hybrid quantization config (custom_quantize_layers); earlier layers "
            "matter more, as their error reaches every later layer",
            err);
    }
    free(list);
    return st;
}

/* The layer whose entire cosine drops most below the previous materialised layer's. */
static rd_status entire_jump(rd_result *r, const an_accuracy_opts *o, rd_error *err)
{
    double prev = NAN, best_drop = 0;
    size_t best = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_metric_group *g = group(&r->layers[i], RD_GROUP_SIM_ENTIRE);
        if (!g || isnan(g->cos_min))
            continue;
        if (!isnan(prev) && prev - g->cos_min > best_drop) {
            best_drop = prev - g->cos_min;
            best = i;
        }
        prev = g->cos_min;
    }
    if (best_drop < 1.0 - o->warn_cos)
        return RD_OK;
    const rd_layer_result *l = &r->layers[best];
    char title[600], evidence[600];
    snprintf(title, sizeof title, "Entire error jumps at '%s' (layer %zu)", l->name, best);
    snprintf(evidence, sizeof evidence, "entire cosine falls by %.5f at this layer, to %.5f; single cosine %.5f",
             best_drop, group(l, RD_GROUP_SIM_ENTIRE)->cos_min, single_cos(l));
    return an_finding_add(r, RD_FIND_ENTIRE_JUMP, RD_SEV_WARNING, l->name, best_drop, title, evidence,
                          "look at this layer and the ones just before it", err);
}

/* The sweep's two ends: int8 everywhere and float16 on every int8 tensor. */
static bool sweep_ends(const rd_sweep *sw, double *int8_cos, double *fp16_cos)
{
    if (sw->n_candidates <= 0 || sw->n_points < 2)
        return false;
    *int8_cos = sw->points[0].prefix_cos;
    *fp16_cos = sw->points[sw->n_points - 1].prefix_cos;
    return true;
}

/* The lowest single cosine over the rows first..last (NaN when none). */
static double lowest_single(const rd_result *r, int first, int last)
{
    double lo = NAN;
    for (int i = first; i >= 0 && i <= last && (size_t)i < r->n_layers; i++) {
        double c = single_cos(&r->layers[i]);
        if (!isnan(c) && !(c >= lo))
            lo = c;
    }
    return lo;
}

/*
 * The block of the sweep (hybrid_sweep.c), when it explains the output loss: float16 everywhere recovers at
 * least half of it and the outputs lose more than the warning allows. *explained tells the configuration
 * finding to stay away.
 */
static rd_status error_block(rd_result *r, const an_accuracy_opts *o, bool *explained, rd_error *err)
{
    *explained = false;
    const rd_sweep *sw = &r->sweep;
    double i8, all;
    if (!sweep_ends(sw, &i8, &all) || sw->block_end <= sw->block_start || !(i8 < o->warn_cos) ||
        !(all - i8 >= 0.5 * (1.0 - i8)))
        return RD_OK;
    *explained = true;
    int first = sw->block_first_layer, last = sw->block_last_layer;
    if (first < 0 || last < first || (size_t)last >= r->n_layers)
        return RD_OK;
    const char *a = r->layers[first].name, *b = r->layers[last].name;
    int n = sw->block_end - sw->block_start;
    char title[700], evidence[1400], share[64] = "";
    if (!isnan(sw->block_mac_share))
        snprintf(share, sizeof share, ", %.1f %% of the int8 layers' MACs,", 100.0 * sw->block_mac_share);
    snprintf(title, sizeof title, "The error builds up in a block: layers %d..%d ('%s' .. '%s')", first, last, a, b);
    double lo = lowest_single(r, first, last);
    snprintf(evidence, sizeof evidence,
             "float16 on layers %d..%d (%d of the %d int8 tensors, '%s' to '%s')%s lifts the output cosine from "
             "%.5f to %.5f (float16 on every int8 tensor: %.5f): the error builds up in this block, each layer "
             "adding a little (lowest single cosine in it %.5f); float16 on one tensor alone saves little, as the "
             "next int8 layer quantizes its values again",
             first, last, n, sw->n_candidates, a, b, share, i8, sw->block_cos, all, lo);
    return an_finding_add(
        r, RD_FIND_ERROR_BLOCK, RD_SEV_WARNING, a, 1.0 - i8, title, evidence,
        "keep a window of this block in float16 (custom_quantize_layers): `rknn-diag hybrid search "
        "--target-cos X` finds the smallest such set for a target; `hybrid sweep` prints the whole sweep",
        err);
}

/* An output far from the golden while no layer loses much by itself: configuration, not layers. */
static rd_status configuration(rd_result *r, const an_accuracy_opts *o, size_t n_lossy, bool block_explains,
                               rd_error *err)
{
    if (n_lossy > 0 || r->n_layers == 0 || block_explains)
        return RD_OK;
    double worst = 1.0;
    const char *where = NULL;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_metric_group *g = group(&r->layers[i], RD_GROUP_SIM_ENTIRE);
        if (g && !isnan(g->cos_min) && g->cos_min < worst) {
            worst = g->cos_min;
            where = r->layers[i].name;
        }
    }
    if (worst >= o->warn_cos)
        return RD_OK;
    /* small single losses that add up also look like this: count them so the reader can tell */
    size_t n_small = 0;
    double lowest = 1.0;
    const char *lowest_name = NULL;
    for (size_t i = 0; i < r->n_layers; i++) {
        double c = single_cos(&r->layers[i]);
        if (!isnan(c) && c < 0.999)
            n_small++;
        if (!isnan(c) && c < lowest) {
            lowest = c;
            lowest_name = r->layers[i].name;
        }
    }
    char evidence[1200];
    int w =
        snprintf(evidence, sizeof evidence,
                 "entire cosine reaches %.5f at '%s' while every layer's single cosine stays above %.2f; %zu layers "
                 "lose a little each (single cosine below 0.999), the most '%s' (%.5f): small losses that compound "
                 "also look like this",
                 worst, where, o->warn_cos, n_small, lowest_name ? lowest_name : "-", lowest);
    double i8, all;
    if (w > 0 && (size_t)w < sizeof evidence) {
        if (sweep_ends(&r->sweep, &i8, &all))
            snprintf(evidence + w, sizeof evidence - (size_t)w,
                     "; the float16 sweep rules that out: float16 on every int8 tensor only moves the outputs from "
                     "%.5f to %.5f",
                     i8, all);
        else
            snprintf(evidence + w, sizeof evidence - (size_t)w,
                     " (`accuracy --sweep` or `hybrid sweep` tell the two apart)");
    }
    return an_finding_add(
        r, RD_FIND_CONFIG, RD_SEV_WARNING, NULL, 1.0 - worst, "Accuracy lost with no lossy layer: likely configuration",
        evidence,
        "check, as RKNN's guide lists: mean_values/std_values match the model's training, RGB/BGR order "
        "(quant_img_RGB2BGR), a calibration set like the real inputs (20 to 100 images), quantized_method "
        "channel, and quantized_algorithm kl_divergence or mmse instead of normal",
        err);
}

static bool is_input_row(const rd_layer_result *l)
{
    return strcmp(l->op_type, "Input") == 0 || strcmp(l->op_type, "exDataConvert") == 0;
}

/*
 * The layers where the board departs from the simulator by itself: single_sim below the warning while
 * every input of the layer on the board agrees with the simulator's (so the departure starts here). The
 * first is the fault; later ones whose inputs agree too are independent faults; a layer fed bad inputs
 * by an earlier departure is never named.
 */
static rd_status runtime_departures(rd_result *r, const an_accuracy_opts *o, const an_layer_runtime *rt, rd_error *err)
{
    int named = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        const rd_metric_group *ss = group(l, RD_GROUP_RT_SINGLE_SIM);
        double c = cos_eff(ss);
        /* a gain error keeps the cosine: the board's output far from the simulator's (SQNR) counts too */
        /* values off the int8 grid: the board ran this layer in another precision, however close */
        bool off_grid = rt[i].off_grid > 0.5;
        bool departs = ss && (isnan(c) || c < o->warn_cos || ss->mean.sqnr_db < RUNTIME_MIN_SQNR_DB || off_grid);
        if (!departs || is_input_row(l))
            continue;
        double in_cos = rt[i].inputs_cos;
        if (!(in_cos >= o->warn_cos))
            continue; /* fed inputs that already differ: an earlier layer's doing */
        const rd_metric_group *sim = group(l, RD_GROUP_SIM_SINGLE), *ent = group(l, RD_GROUP_RT_ENTIRE);
        char title[700], evidence[1200];
        snprintf(title, sizeof title, "%s: the board departs from the simulator at '%s' (layer %zu of %zu)",
                 named ? "Runtime fault" : "Runtime fault, first departure", l->name, i, r->n_layers);
        int w = snprintf(
            evidence, sizeof evidence,
            "single_sim cosine %.5f, SQNR %.1f dB (the simulator's layer on the board's own inputs against "
            "the board's output) while the board's inputs of this layer agree with the simulator's (cosine %.5f, "
            "'%s'); simulator single cosine %.5f, so quantization alone does not lose this",
            c, ss->mean.sqnr_db, in_cos, rt[i].worst_input, cos_eff(sim));
        const rd_metrics *mm = &ss->mean;
        if (w > 0 && (size_t)w < sizeof evidence && isfinite(mm->gain))
            w += snprintf(evidence + w, sizeof evidence - (size_t)w,
                          "; board = %.4f x simulator %+.4g (least squares), %.1f dB left after that fit", mm->gain,
                          mm->offset, mm->sqnr_affine_db);
        if (w > 0 && (size_t)w < sizeof evidence && off_grid)
            w += snprintf(evidence + w, sizeof evidence - (size_t)w,
                          "; %.0f%% of the board's values are off this int8 layer's grid: the board ran it in another "
                          "precision (float16?) where the model has int8",
                          100.0 * rt[i].off_grid);
        if (w > 0 && (size_t)w < sizeof evidence && ent)
            snprintf(evidence + w, sizeof evidence - (size_t)w, "; runtime entire cosine %.5f here", cos_eff(ent));
        rd_status st = an_finding_add(
            r, RD_FIND_RUNTIME_DEPARTURE, RD_SEV_ERROR, l->name, (double)(r->n_layers - i), title, evidence,
            "a runtime (NPU driver/librknnrt) problem in this layer, not quantization: update librknnrt "
            "and the driver to the toolkit's version, try another optimization_level, or run this layer "
            "on the CPU / in float16 (custom_quantize_layers) and report it to Rockchip with the dumps",
            err);
        if (st != RD_OK)
            return st;
        named++;
    }
    return RD_OK;
}

static int finding_order(const void *pa, const void *pb)
{
    const rd_finding *a = pa, *b = pb;
    if (a->severity != b->severity)
        return a->severity > b->severity ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return 0;
}

rd_status an_findings_add(rd_result *r, const an_accuracy_opts *o, rd_error *err)
{
    return an_findings_add_rt(r, o, NULL, err);
}

rd_status an_findings_add_rt(rd_result *r, const an_accuracy_opts *o, const an_layer_runtime *rt, rd_error *err)
{
    return an_findings_add_sim(r, o, rt, NULL, err);
}

rd_status an_findings_add_sim(rd_result *r, const an_accuracy_opts *o, const an_layer_runtime *rt, const rd_sim *s,
                              rd_error *err)
{
    size_t n_lossy = 0;
    rd_status st = rt ? runtime_departures(r, o, rt, err) : RD_OK;
    if (st == RD_OK)
        st = an_findings_numeric(r, s, err);
    if (st == RD_OK)
        st = fp16_overflow(r, err);
    if (st == RD_OK)
        st = lossy_layers(r, o, &n_lossy, err);
    if (st == RD_OK)
        st = entire_jump(r, o, err);
    bool block_explains = false;
    if (st == RD_OK)
        st = error_block(r, o, &block_explains, err);
    if (st == RD_OK)
        st = configuration(r, o, n_lossy, block_explains, err);
    if (st == RD_OK && r->n_findings > 1)
        qsort(r->findings, r->n_findings, sizeof *r->findings, finding_order);
    return st;
}
