/*
 * report_html.c: writes report.html, one self-contained page: summary, findings, charts (PNG drawn by
 * png_chart.c, embedded as base64 data: URIs), the layer table, histograms and per-channel cosines of
 * the worst layers, and the run configuration.
 *
 * The layer table is rendered here, server side, one <tr> per layer with sort keys in data-v
 * attributes; the inline script only sorts and filters existing rows. Why: the table reads without
 * JavaScript (and in any viewer), the browser's find works on it, and every model-supplied string
 * takes one path into the page, rep_buf_html(), instead of a second JSON-in-script escaping path.
 * A Content-Security-Policy meta tag forbids all network access (only data: images load).
 */
#include "html_assets.h"
#include "png_chart.h"
#include "report_out.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define CHART_W 1400
#define CHART_H 380
#define SMALL_W 720
#define SMALL_H 320
#define MAX_DETAIL_LAYERS 6 /* histograms and channel charts shown */

static const uint32_t group_rgb[RD_GROUP_COUNT] = {
    [RD_GROUP_SIM_ENTIRE] = 0x1f63b4u,
    [RD_GROUP_SIM_SINGLE] = 0xe8740cu,
    [RD_GROUP_RT_ENTIRE] = 0x2a9d3fu,
    [RD_GROUP_RT_SINGLE_SIM] = 0x8e44ad,
};

static const char *const group_title[RD_GROUP_COUNT] = {
    [RD_GROUP_SIM_ENTIRE] = "Simulator entire",
    [RD_GROUP_SIM_SINGLE] = "Simulator single",
    [RD_GROUP_RT_ENTIRE] = "Board entire",
    [RD_GROUP_RT_SINGLE_SIM] = "Board vs simulator (single)",
};

/* ASCII-only chart legend labels (the bitmap font has ASCII only) */
static const char *const group_label[RD_GROUP_COUNT] = {
    [RD_GROUP_SIM_ENTIRE] = "sim entire",
    [RD_GROUP_SIM_SINGLE] = "sim single",
    [RD_GROUP_RT_ENTIRE] = "board entire",
    [RD_GROUP_RT_SINGLE_SIM] = "board vs sim single",
};

/* The simulator groups always get their columns; the board groups when measured (or present anyway). */
static bool group_used(const rd_result *r, int g)
{
    if (g == RD_GROUP_SIM_ENTIRE || g == RD_GROUP_SIM_SINGLE || r->has_runtime)
        return true;
    for (size_t i = 0; i < r->n_layers; i++)
        if (r->layers[i].groups[g].present)
            return true;
    return false;
}

static const char *cos_class(double c)
{
    if (isnan(c))
        return "c-nan";
    return c < RD_REPORT_COS_ERROR ? "c-red" : c < RD_REPORT_COS_WARN ? "c-amber" : "c-green";
}

/* Appends a data: URI of the PNG bytes (base64 by OpenSSL's EVP_EncodeBlock). */
static void put_png_uri(rep_buf *b, const unsigned char *png, size_t len)
{
    if (len > (size_t)INT32_MAX / 2) {
        b->failed = true;
        return;
    }
    size_t n64 = 4 * ((len + 2) / 3) + 1;
    unsigned char *tmp = malloc(n64);
    if (!tmp) {
        b->failed = true;
        return;
    }
    int w = EVP_EncodeBlock(tmp, png, (int)len);
    rep_buf_puts(b, "data:image/png;base64,");
    rep_buf_put(b, tmp, (size_t)(w > 0 ? w : 0));
    free(tmp);
}

static rd_status put_chart(rep_buf *b, const rep_chart *ch, const char *alt, rd_error *err)
{
    unsigned char *png;
    size_t len;
    rd_status st = rep_chart_png(ch, &png, &len, err);
    if (st != RD_OK)
        return st;
    rep_buf_printf(b, "<img width=\"%d\" height=\"%d\" alt=\"", ch->width, ch->height);
    rep_buf_html(b, alt);
    rep_buf_puts(b, "\" src=\"");
    put_png_uri(b, png, len);
    rep_buf_puts(b, "\">\n");
    free(png);
    return RD_OK;
}

/* A number cell: text and sort key; NaN gives "nan" with an empty key (sorted last). */
static void num_cell(rep_buf *b, double v, const char *fmt, const char *cls, bool first)
{
    rep_buf_printf(b, "<td class=\"num%s%s%s\" data-v=\"", first ? " first" : "", cls ? " " : "", cls ? cls : "");
    if (isnan(v)) {
        rep_buf_puts(b, "\">nan</td>");
        return;
    }
    if (isinf(v))
        rep_buf_puts(b, v > 0 ? "Infinity" : "-Infinity");
    else
        rep_buf_printf(b, "%.17g", v);
    rep_buf_puts(b, "\">");
    if (isinf(v))
        rep_buf_puts(b, v > 0 ? "inf" : "-inf");
    else
        rep_buf_printf(b, fmt, v);
    rep_buf_puts(b, "</td>");
}

static void blank_cells(rep_buf *b, int n, bool first)
{
    for (int i = 0; i < n; i++)
        rep_buf_printf(b, "<td class=\"num%s\" data-v=\"\"></td>", i == 0 && first ? " first" : "");
}

/* The cosine cell, coloured by threshold, with every other metric of the group in its tooltip. */
static void cos_cell(rep_buf *b, const rd_metric_group *g)
{
    const rd_metrics *m = &g->mean;
    rep_buf_printf(b, "<td class=\"num first %s\" data-v=\"", cos_class(m->cos));
    if (!isnan(m->cos))
        rep_buf_printf(b, "%.17g", m->cos);
    rep_buf_printf(b,
                   "\" title=\"euc_rel %.4g, max_abs %.4g, mean_abs %.4g, gain %.5g, offset %.4g, "
                   "affine SQNR %.1f dB, err %.3g steps, saturated %.2f%%, zeroed %.2f%%, fp16 overflow "
                   "%lld (max %.4g), %lld values, %d samples",
                   m->euc_rel, m->max_abs, m->mean_abs, m->gain, m->offset, m->sqnr_affine_db, m->err_steps,
                   100 * m->saturated_share, 100 * m->zero_share, (long long)m->fp16_overflow, m->fp16_max_abs,
                   (long long)m->count, g->n_samples);
    if (g->n_samples > 1)
        rep_buf_printf(b, ", min %.5f, p5 %.5f, worst sample %d", g->cos_min, g->cos_p5, g->worst_sample);
    if (m->nan || m->inf || m->ref_nan || m->ref_inf)
        rep_buf_printf(b,
                       "; %lld NaN and %lld Inf tested, %lld NaN and %lld Inf in the reference: the metrics "
                       "above are not numbers of the tensor",
                       (long long)m->nan, (long long)m->inf, (long long)m->ref_nan, (long long)m->ref_inf);
    rep_buf_puts(b, "\">");
    if (isnan(m->cos))
        rep_buf_puts(b, "nan");
    else
        rep_buf_printf(b, "%.5f", m->cos);
    if (m->degenerate != RD_DEG_NONE)
        rep_buf_printf(b, "<span class=\"deg\">%s</span>", rd_degenerate_name(m->degenerate));
    rep_buf_puts(b, "</td>");
}

static void put_shape(rep_buf *b, const rd_layer_result *l)
{
    for (int d = 0; d < l->rank && d < 8; d++)
        rep_buf_printf(b, "%s%lld", d ? "&times;" : "", (long long)l->dims[d]);
}

static bool layer_below(const rd_layer_result *l)
{
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        if (l->groups[g].present && (l->groups[g].mean.cos < RD_REPORT_COS_WARN ||
                                     (l->groups[g].n_samples > 1 && l->groups[g].cos_min < RD_REPORT_COS_WARN)))
            return true;
    return false;
}

/* Columns per group: cos, euc, SQNR, then min cos with several samples, then gain and steps (single). */
static int group_cols(const rd_result *r, int g)
{
    return 3 + (r->n_samples > 1) + (g == RD_GROUP_SIM_SINGLE ? 2 : 0);
}

static void put_table(rep_buf *b, const rd_result *r, const bool used[RD_GROUP_COUNT])
{
    rep_buf_printf(b,
                   "<div class=\"tablewrap\"><table class=\"layers\" id=\"layer-table\" data-n-layers=\"%zu\">\n"
                   "<thead><tr><th colspan=\"5\"></th>",
                   r->n_layers);
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        if (used[g])
            rep_buf_printf(b, "<th class=\"grp\" colspan=\"%d\">%s</th>", group_cols(r, g), group_title[g]);
    rep_buf_puts(b, "</tr>\n<tr>");
    int col = 0;
    static const char *const base[] = {"#", "Layer", "Op", "Precision", "Shape"};
    for (int i = 0; i < 5; i++, col++)
        rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"%s\">%s</th>", col, i == 0 ? "num" : "str", base[i]);
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        if (!used[g])
            continue;
        rep_buf_printf(b, "<th class=\"first\" data-col=\"%d\" data-type=\"num\">cos</th>", col++);
        rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"num\">euc</th>", col++);
        rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"num\">SQNR dB</th>", col++);
        if (r->n_samples > 1)
            rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"num\">min cos</th>", col++);
        if (g == RD_GROUP_SIM_SINGLE) {
            rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"num\">gain</th>", col++);
            rep_buf_printf(b, "<th data-col=\"%d\" data-type=\"num\">err steps</th>", col++);
        }
    }
    rep_buf_puts(b, "</tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        rep_buf_printf(b, "<tr data-i=\"%zu\" data-below=\"%d\"%s><td class=\"num\" data-v=\"%zu\">%zu</td>", i,
                       layer_below(l) ? 1 : 0, l->fused_into ? " class=\"fused\"" : "", i, i);
        rep_buf_html_in(b, "<td class=\"name\" title=\"", l->name, "\">");
        rep_buf_html(b, l->name);
        rep_buf_puts(b, "</td><td>");
        rep_buf_html(b, l->op_type);
        if (l->npu_op && (!l->op_type || strcmp(l->npu_op, l->op_type) != 0))
            rep_buf_html_in(b, " <span class=\"note\">NPU ", l->npu_op, "</span>");
        if (l->fused_into)
            rep_buf_html_in(b, " <span class=\"note\">fused into ", l->fused_into, "</span>");
        rep_buf_html_in(b, "</td><td>", l->precision, "</td><td>");
        put_shape(b, l);
        rep_buf_puts(b, "</td>");
        for (int g = 0; g < RD_GROUP_COUNT; g++) {
            if (!used[g])
                continue;
            const rd_metric_group *mg = &l->groups[g];
            if (!mg->present) {
                blank_cells(b, group_cols(r, g), true);
                continue;
            }
            cos_cell(b, mg);
            num_cell(b, mg->mean.euc, "%.5g", NULL, false);
            num_cell(b, mg->mean.sqnr_db, "%.1f", NULL, false);
            if (r->n_samples > 1)
                num_cell(b, mg->cos_min, "%.5f", cos_class(mg->cos_min), false);
            if (g == RD_GROUP_SIM_SINGLE) {
                num_cell(b, mg->mean.gain, "%.4f", NULL, false);
                num_cell(b, mg->mean.err_steps, "%.3f", NULL, false);
            }
        }
        rep_buf_puts(b, "</tr>\n");
    }
    rep_buf_puts(b, "</tbody></table></div>\n");
}

typedef enum metric_sel { SEL_COS, SEL_EUC, SEL_SQNR } metric_sel;

static double pick(const rd_metric_group *g, metric_sel s)
{
    if (!g->present)
        return NAN;
    return s == SEL_COS ? g->mean.cos : s == SEL_EUC ? g->mean.euc : g->mean.sqnr_db;
}

static rd_status put_metric_chart(rep_buf *b, const rd_result *r, const bool used[RD_GROUP_COUNT], metric_sel s,
                                  rd_error *err)
{
    rep_series series[RD_GROUP_COUNT];
    double *ys[RD_GROUP_COUNT] = {0};
    size_t ns = 0;
    rd_status st = RD_OK;
    double lo = 1;
    bool any_positive = false;
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        if (!used[g])
            continue;
        ys[g] = malloc((r->n_layers ? r->n_layers : 1) * sizeof(double));
        if (!ys[g]) {
            st = rd_errorf(err, RD_E_NOMEM, "report.html: out of memory for a chart");
            goto out;
        }
        for (size_t i = 0; i < r->n_layers; i++) {
            ys[g][i] = pick(&r->layers[i].groups[g], s);
            if (isfinite(ys[g][i]) && ys[g][i] < lo)
                lo = ys[g][i];
            if (isfinite(ys[g][i]) && ys[g][i] > 0)
                any_positive = true;
        }
        series[ns++] = (rep_series){.label = group_label[g], .y = ys[g], .n = r->n_layers, .rgb = group_rgb[g]};
    }
    static const rep_hline thresholds[] = {
        {RD_REPORT_COS_WARN, 0xd4a72cu, "cos 0.99"},
        {RD_REPORT_COS_ERROR, 0xd1242fu, "cos 0.98"},
    };
    rep_chart ch = {.width = CHART_W,
                    .height = CHART_H,
                    .series = series,
                    .n_series = ns,
                    .x_integer = true,
                    .x_title = "layer index"};
    if (s == SEL_COS) {
        ch.title = "Cosine similarity per layer (higher is better)";
        ch.y_title = "cos";
        ch.hlines = thresholds;
        ch.n_hlines = 2;
        ch.has_y_range = true;
        ch.y_lo = lo < 0.97 ? lo - (1 - lo) * 0.05 : 0.97;
        ch.y_hi = 1 + (1 - ch.y_lo) * 0.04;
    } else if (s == SEL_EUC) {
        ch.title = "Euclidean distance per layer (log scale, lower is better)";
        ch.y_title = "euc";
        ch.log_y = any_positive;
    } else {
        ch.title = "SQNR per layer (higher is better; inf drawn at the top)";
        ch.y_title = "SQNR dB";
    }
    st = put_chart(b, &ch, ch.title, err);
out:
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        free(ys[g]);
    return st;
}

/* Worst cosine of a layer over its simulator groups (for picking detail layers). */
static double layer_worst(const rd_layer_result *l)
{
    double w = INFINITY;
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        if (l->groups[g].present && !isnan(l->groups[g].mean.cos) && l->groups[g].mean.cos < w)
            w = l->groups[g].mean.cos;
    return w;
}

/* Indices of up to MAX_DETAIL_LAYERS layers with a histogram (want_hist) or channel cosines, worst first. */
static size_t pick_detail(const rd_result *r, bool want_hist, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        const rd_layer_result *l = &r->layers[i];
        bool has = want_hist ? (l->hist.n_bins > 0 && l->hist.golden && l->hist.tested) : (l->channels.n > 0);
        if (!has)
            continue;
        /* insertion into a small sorted list */
        size_t k = n < MAX_DETAIL_LAYERS ? n++ : MAX_DETAIL_LAYERS;
        while (k > 0 && layer_worst(&r->layers[out[k - 1]]) > layer_worst(l)) {
            if (k < MAX_DETAIL_LAYERS)
                out[k] = out[k - 1];
            k--;
        }
        if (k < MAX_DETAIL_LAYERS)
            out[k] = i;
    }
    return n;
}

static rd_status put_histograms(rep_buf *b, const rd_result *r, rd_error *err)
{
    size_t idx[MAX_DETAIL_LAYERS];
    size_t n = pick_detail(r, true, idx);
    if (n == 0)
        return RD_OK;
    rep_buf_puts(b, "<section id=\"histograms\"><h2>Value histograms of the worst layers</h2>\n"
                    "<p class=\"note\">Golden (FP32) values as bars, the tested values as a line, over the same "
                    "bins.</p><div class=\"grid2\">\n");
    for (size_t k = 0; k < n; k++) {
        const rd_layer_result *l = &r->layers[idx[k]];
        const rd_histogram *h = &l->hist;
        double *x = malloc(h->n_bins * sizeof *x), *yg = malloc(h->n_bins * sizeof *yg),
               *yt = malloc(h->n_bins * sizeof *yt);
        if (!x || !yg || !yt) {
            free(x), free(yg), free(yt);
            return rd_errorf(err, RD_E_NOMEM, "report.html: out of memory for a histogram");
        }
        double w = (h->hi - h->lo) / (double)h->n_bins;
        if (!(w > 0) || !isfinite(w))
            w = 1;
        for (size_t i = 0; i < h->n_bins; i++) {
            x[i] = h->lo + (isfinite(h->lo) ? (i + 0.5) * w : (double)i);
            yg[i] = (double)h->golden[i];
            yt[i] = (double)h->tested[i];
        }
        rep_series s[2] = {
            {.label = "golden", .x = x, .y = yg, .n = h->n_bins, .rgb = 0xb8c7d9u, .style = REP_BARS},
            {.label = "tested", .x = x, .y = yt, .n = h->n_bins, .rgb = 0xe8740cu},
        };
        char title[64];
        snprintf(title, sizeof title, "layer %zu: value histogram", idx[k]);
        rep_chart ch = {.width = SMALL_W,
                        .height = SMALL_H,
                        .title = title,
                        .x_title = "value",
                        .y_title = "count",
                        .series = s,
                        .n_series = 2,
                        .bar_width = w * 0.9};
        rep_buf_puts(b, "<figure>");
        rd_status st = put_chart(b, &ch, title, err);
        free(x), free(yg), free(yt);
        if (st != RD_OK)
            return st;
        rep_buf_printf(b, "<figcaption>#%zu ", idx[k]);
        rep_buf_html(b, l->name);
        rep_buf_puts(b, " (");
        rep_buf_html(b, l->op_type);
        rep_buf_printf(b, "), worst cos %.5f</figcaption></figure>\n", layer_worst(l));
    }
    rep_buf_puts(b, "</div></section>\n");
    return RD_OK;
}

static rd_status put_channels(rep_buf *b, const rd_result *r, rd_error *err)
{
    size_t idx[MAX_DETAIL_LAYERS];
    size_t n = pick_detail(r, false, idx);
    if (n == 0)
        return RD_OK;
    rep_buf_puts(b, "<section id=\"channels\"><h2>Cosine per output channel of the worst layers</h2>\n"
                    "<p class=\"note\">One dead channel hides in a per-tensor cosine.</p><div class=\"grid2\">\n");
    static const rep_hline thr[] = {{RD_REPORT_COS_WARN, 0xd4a72cu, NULL}, {RD_REPORT_COS_ERROR, 0xd1242fu, NULL}};
    for (size_t k = 0; k < n; k++) {
        const rd_layer_result *l = &r->layers[idx[k]];
        rep_series s = {.label = NULL, .y = l->channels.cos, .n = l->channels.n, .rgb = 0x1f63b4u, .style = REP_BARS};
        char title[64];
        snprintf(title, sizeof title, "layer %zu: cosine per channel", idx[k]);
        rep_chart ch = {.width = SMALL_W,
                        .height = SMALL_H,
                        .title = title,
                        .x_title = "channel",
                        .y_title = "cos",
                        .series = &s,
                        .n_series = 1,
                        .hlines = thr,
                        .n_hlines = 2,
                        .x_integer = true,
                        .bar_width = 0.8};
        rep_buf_puts(b, "<figure>");
        rd_status st = put_chart(b, &ch, title, err);
        if (st != RD_OK)
            return st;
        rep_buf_printf(b, "<figcaption>#%zu ", idx[k]);
        rep_buf_html(b, l->name);
        rep_buf_puts(b, "</figcaption></figure>\n");
    }
    rep_buf_puts(b, "</div></section>\n");
    return RD_OK;
}

/* The float16 sweep (accuracy --sweep): output cosine and float16 MAC share against k, the block, the points. */
static rd_status put_sweep(rep_buf *b, const rd_result *r, rd_error *err)
{
    const rd_sweep *sw = &r->sweep;
    if (sw->n_candidates <= 0 || sw->n_points < 2)
        return RD_OK;
    size_t n = sw->n_points;
    double *x = malloc(n * sizeof *x), *pc = malloc(n * sizeof *pc), *sc = malloc(n * sizeof *sc),
           *pm = malloc(n * sizeof *pm), *sm = malloc(n * sizeof *sm);
    rd_status st =
        x && pc && sc && pm && sm ? RD_OK : rd_errorf(err, RD_E_NOMEM, "report.html: out of memory for the sweep");
    double lo = 1;
    for (size_t i = 0; st == RD_OK && i < n; i++) {
        const rd_sweep_point *p = &sw->points[i];
        x[i] = p->k;
        pc[i] = p->prefix_cos;
        sc[i] = p->suffix_cos;
        pm[i] = 100.0 * p->prefix_mac_share;
        sm[i] = 100.0 * p->suffix_mac_share;
        lo = fmin(lo, fmin(isfinite(pc[i]) ? pc[i] : 1, isfinite(sc[i]) ? sc[i] : 1));
    }
    if (st == RD_OK) {
        rep_buf_printf(b,
                       "<section id=\"sweep\"><h2>Float16 sweep</h2>\n<p class=\"note\">Output cosine (objective "
                       "%s, worst sample) with float16 on the first k of the %d int8 tensors in execution order "
                       "(prefix) and on the others (suffix); below, the share of the int8 layers' MACs that runs "
                       "in float16. A prefix curve that climbs over a short range of k shows where the error "
                       "builds up.</p>\n",
                       sw->objective ? sw->objective : "?", sw->n_candidates);
        rep_series cs[2] = {{.label = "float16 on tensors 0..k-1", .x = x, .y = pc, .n = n, .rgb = 0x1f63b4u},
                            {.label = "float16 on tensors k..end", .x = x, .y = sc, .n = n, .rgb = 0xe8740cu}};
        static const rep_hline thr[] = {{RD_REPORT_COS_WARN, 0xd4a72cu, "cos 0.99"}};
        rep_chart ch = {.width = CHART_W,
                        .height = CHART_H,
                        .series = cs,
                        .n_series = 2,
                        .x_integer = true,
                        .x_title = "k (int8 tensors in execution order)",
                        .y_title = "output cos",
                        .title = "Output cosine with float16 on a prefix or a suffix of the int8 tensors",
                        .hlines = thr,
                        .n_hlines = 1,
                        .has_y_range = true};
        ch.y_lo = lo < 0.97 ? lo - (1 - lo) * 0.05 : 0.97;
        ch.y_hi = 1 + (1 - ch.y_lo) * 0.04;
        st = put_chart(b, &ch, ch.title, err);
    }
    if (st == RD_OK) {
        rep_series ms[2] = {{.label = "prefix", .x = x, .y = pm, .n = n, .rgb = 0x1f63b4u},
                            {.label = "suffix", .x = x, .y = sm, .n = n, .rgb = 0xe8740cu}};
        rep_chart ch = {.width = CHART_W,
                        .height = SMALL_H,
                        .series = ms,
                        .n_series = 2,
                        .x_integer = true,
                        .x_title = "k (int8 tensors in execution order)",
                        .y_title = "% MACs",
                        .title = "Share of the int8 layers' MACs in float16",
                        .has_y_range = true,
                        .y_lo = 0,
                        .y_hi = 100};
        st = put_chart(b, &ch, ch.title, err);
    }
    if (st == RD_OK && sw->block_end > sw->block_start && sw->block_first_layer >= 0 &&
        (size_t)sw->block_last_layer < r->n_layers) {
        rep_buf_printf(b, "<p class=\"f-evidence\">Block: float16 on layers %d..%d (<code>", sw->block_first_layer,
                       sw->block_last_layer);
        rep_buf_html(b, r->layers[sw->block_first_layer].name);
        rep_buf_puts(b, "</code> .. <code>");
        rep_buf_html(b, r->layers[sw->block_last_layer].name);
        rep_buf_printf(b, "</code>, %d tensors, %.1f %% of the MACs) gives an output cosine of %.5f.</p>\n",
                       sw->block_end - sw->block_start, 100.0 * sw->block_mac_share, sw->block_cos);
    }
    if (st == RD_OK) {
        rep_buf_puts(b, "<details><summary>The sweep's points</summary><table class=\"config\"><tr><th>k</th>"
                        "<th>first tensor of the suffix</th><th>prefix cos</th><th>prefix % MACs</th><th>suffix cos"
                        "</th><th>suffix % MACs</th></tr>\n");
        for (size_t i = 0; i < n; i++) {
            const rd_sweep_point *p = &sw->points[i];
            rep_buf_printf(b, "<tr><td>%d</td><td>", p->k);
            if (p->layer >= 0 && (size_t)p->layer < r->n_layers)
                rep_buf_html(b, r->layers[p->layer].name);
            rep_buf_printf(b, "</td><td>%.5f</td><td>%.1f</td><td>%.5f</td><td>%.1f</td></tr>\n", p->prefix_cos,
                           100.0 * p->prefix_mac_share, p->suffix_cos, 100.0 * p->suffix_mac_share);
        }
        rep_buf_puts(b, "</table></details></section>\n");
    }
    free(x), free(pc), free(sc), free(pm), free(sm);
    return st;
}

static void put_findings(rep_buf *b, const rd_result *r)
{
    rep_buf_printf(b, "<section id=\"findings\"><h2>Findings (%zu)</h2>\n", r->n_findings);
    if (r->n_findings == 0) {
        rep_buf_puts(b, "<p class=\"note\">No findings: every layer is above the thresholds.</p></section>\n");
        return;
    }
    rep_buf_puts(b, "<ol class=\"findings\">\n");
    for (size_t i = 0; i < r->n_findings; i++) {
        const rd_finding *f = &r->findings[i];
        const char *sev = rd_severity_name(f->severity);
        rep_buf_printf(b,
                       "<li class=\"sev-%s\" data-kind=\"%s\"><span class=\"badge\">%s</span>"
                       "<span class=\"f-title\">",
                       sev, rd_finding_kind_name(f->kind), sev);
        rep_buf_html(b, f->title);
        rep_buf_puts(b, "</span>");
        if (f->layer)
            rep_buf_html_in(b, "<span class=\"f-layer\">layer <code>", f->layer, "</code></span>");
        if (f->evidence)
            rep_buf_html_in(b, "<div class=\"f-evidence\">", f->evidence, "</div>");
        if (f->advice)
            rep_buf_html_in(b, "<div class=\"f-advice\">", f->advice, "</div>");
        rep_buf_puts(b, "</li>\n");
    }
    rep_buf_puts(b, "</ol></section>\n");
}

static void put_summary(rep_buf *b, const rd_result *r)
{
    size_t below = 0, fused = 0;
    for (size_t i = 0; i < r->n_layers; i++) {
        below += layer_below(&r->layers[i]);
        fused += r->layers[i].fused_into != NULL;
    }
    rep_buf_puts(b, "<section id=\"summary\"><h2>Summary</h2><dl class=\"summary\">\n<div><dt>Model</dt><dd>");
    rep_buf_html(b, r->model ? r->model : "(unnamed)");
    if (r->custom_string) { /* model_config.yml's custom_string, as the .rknn file would carry it */
        rep_buf_puts(b, "</dd></div>\n<div><dt>Custom string</dt><dd>");
        rep_buf_html(b, r->custom_string);
    }
    rep_buf_puts(b, "</dd></div>\n<div><dt>Tool</dt><dd>");
    rep_buf_html(b, r->tool ? r->tool : "(unknown)");
    rep_buf_printf(b,
                   "</dd></div>\n<div><dt>Samples</dt><dd>%d</dd></div>\n"
                   "<div><dt>Layers</dt><dd>%zu (%zu fused)</dd></div>\n"
                   "<div><dt>Below %.2f</dt><dd>%zu layers</dd></div>\n"
                   "<div><dt>Board data</dt><dd>%s</dd></div>\n"
                   "<div><dt>Thresholds</dt><dd><span class=\"legend-chip\" style=\"background:var(--red);"
                   "color:var(--red-ink)\">cos &lt; %.2f</span><span class=\"legend-chip\" "
                   "style=\"background:var(--amber);color:var(--amber-ink)\">&lt; %.2f</span>"
                   "<span class=\"legend-chip\" style=\"background:var(--green);color:var(--green-ink)\">"
                   "&ge; %.2f</span></dd></div>\n</dl></section>\n",
                   r->n_samples, r->n_layers, fused, RD_REPORT_COS_WARN, below,
                   r->has_runtime ? "yes (runtime groups)" : "no", RD_REPORT_COS_ERROR, RD_REPORT_COS_WARN,
                   RD_REPORT_COS_WARN);
}

/* One table row of text cells, escaped. */
static void put_cells(rep_buf *b, const char *const *cells, size_t n)
{
    rep_buf_puts(b, "<tr>");
    for (size_t k = 0; k < n; k++)
        rep_buf_html_in(b, "<td>", cells[k], "</td>");
    rep_buf_puts(b, "</tr>\n");
}

static void put_config(rep_buf *b, const rd_result *r)
{
    rep_buf_puts(b, "<section id=\"config\"><h2>Run configuration</h2>\n");
    if (r->n_config == 0) {
        rep_buf_puts(b, "<p class=\"note\">No configuration recorded.</p></section>\n");
        return;
    }
    rep_buf_puts(b, "<table class=\"config\">\n");
    for (size_t i = 0; i < r->n_config; i++)
        put_cells(b, (const char *const[]){r->config[i].key, r->config[i].value}, 2);
    rep_buf_puts(b, "</table></section>\n");
}

/* Which decisions of a built-model run came from the built model and which from our passes or guesses. */
static void put_fidelity(rep_buf *b, const rd_result *r)
{
    if (r->n_fidelity == 0)
        return;
    rep_buf_puts(b, "<section id=\"fidelity\"><h2>Fidelity: what came from the built model</h2>\n"
                    "<table class=\"config\">\n");
    for (size_t i = 0; i < r->n_fidelity; i++) {
        const rd_fidelity_item *f = &r->fidelity[i];
        put_cells(b, (const char *const[]){f->decision, f->source, f->detail ? f->detail : ""}, 3);
    }
    rep_buf_puts(b, "</table></section>\n");
}

rd_status rd_report_html_write(const rd_result *r, char **out_html, size_t *out_len, rd_error *err)
{
    *out_html = NULL;
    *out_len = 0;
    rep_buf b = {0};
    bool used[RD_GROUP_COUNT];
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        used[g] = group_used(r, g);
    rep_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
                     "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    rep_buf_html(&b, r->model ? r->model : "model");
    rep_buf_puts(&b, " - rknn-diag accuracy report</title>\n<style>\n");
    rep_buf_puts(&b, rep_html_css);
    rep_buf_puts(&b, "</style>\n<script>\n");
    rep_buf_puts(&b, rep_html_js_head);
    rep_buf_html_in(&b, "</script></head><body>\n<header><h1>Accuracy report</h1><div class=\"sub\">",
                    r->model ? r->model : "(unnamed model)", " &middot; ");
    rep_buf_html(&b, r->tool ? r->tool : "");
    rep_buf_puts(&b, "</div></header>\n<main>\n<pre id=\"selftest\" hidden></pre>\n");
    put_summary(&b, r);
    put_findings(&b, r);
    rd_status st = RD_OK;
    rep_buf_puts(&b, "<section id=\"charts\" class=\"charts\"><h2>Metrics along the layer index</h2>\n");
    for (int s = SEL_COS; s <= SEL_SQNR && st == RD_OK; s++)
        st = put_metric_chart(&b, r, used, (metric_sel)s, err);
    rep_buf_puts(&b, "</section>\n");
    if (st == RD_OK)
        st = put_sweep(&b, r, err);
    if (st == RD_OK) {
        rep_buf_printf(&b,
                       "<section id=\"layers\"><h2>Layers</h2>\n<div class=\"controls\">"
                       "<input type=\"search\" id=\"filter\" placeholder=\"Filter by layer name or op\" "
                       "aria-label=\"filter\">"
                       "<label><input type=\"checkbox\" id=\"below\"> only layers below cos %.2f</label>"
                       "<span class=\"count\" id=\"count\"></span></div>\n"
                       "<p class=\"note\">Click a column header to sort (again to reverse). Cells: mean "
                       "over the samples; hover a cosine for every metric. Blank rows: tensors fused away, "
                       "as in RKNN's table.</p>\n",
                       RD_REPORT_COS_WARN);
        put_table(&b, r, used);
        rep_buf_puts(&b, "</section>\n");
        st = put_histograms(&b, r, err);
    }
    if (st == RD_OK)
        st = put_channels(&b, r, err);
    if (st != RD_OK) {
        rep_buf_fini(&b);
        return st;
    }
    put_config(&b, r);
    put_fidelity(&b, r);
    rep_buf_puts(&b, "</main>\n<script>\n");
    rep_buf_puts(&b, rep_html_js_body);
    rep_buf_puts(&b, "</script>\n</body></html>\n");
    if (b.failed) {
        rep_buf_fini(&b);
        return rd_errorf(err, RD_E_NOMEM, "report.html: out of memory (or above %zu bytes)", REP_OUT_MAX_BYTES);
    }
    *out_html = b.data;
    *out_len = b.len;
    return RD_OK;
}

rd_status rd_report_html_save(const rd_result *r, const char *path, rd_error *err)
{
    return rep_save(r, rd_report_html_write, path, err);
}
