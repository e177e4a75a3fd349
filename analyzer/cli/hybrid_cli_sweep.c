/*
 * hybrid_cli_sweep.c: `rknn-diag hybrid sweep`: the float16 sweep (hybrid_sweep.c) as a table, or as the
 * JSON object report.json holds (--json), with the block finding or the configuration finding it leaves.
 * docs/hybrid.md.
 */
#include "accuracy.h"
#include "hybrid_cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rd_status an_hyb_allowed(const hyb_run *r, an_hyb_cand **out, size_t *n, rd_error *err)
{
    *n = 0;
    *out = calloc(r->n_cands + 1, sizeof **out);
    if (!*out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n_cands; i++)
        if (r->cands[i].allowed)
            (*out)[(*n)++] = r->cands[i];
    return RD_OK;
}

static void print_table(an_cmd_ctx *ctx, const hyb_run *r, const rd_sweep *sw)
{
    FILE *f = ctx->out;
    fprintf(f,
            "float16 sweep (objective %s, worst of %zu sample%s): prefix = float16 on int8 tensors 0..k-1, suffix = "
            "on k..%d, in execution order\n\n",
            sw->objective, r->n_samples, r->n_samples == 1 ? "" : "s", sw->n_candidates - 1);
    fprintf(f, "%5s %5s  %-44s | %7s %9s %8s | %7s %9s %8s\n", "k", "row", "tensor k (first of the suffix)", "pre%MAC",
            "pre_cos", "pre_dB", "suf%MAC", "suf_cos", "suf_dB");
    for (size_t i = 0; i < sw->n_points; i++) {
        const rd_sweep_point *p = &sw->points[i];
        const char *name =
            p->layer >= 0 && (size_t)p->layer < r->result.n_layers ? r->result.layers[p->layer].name : "(end)";
        fprintf(f, "%5d %5d  %-44s | %7.1f %9.5f %8.2f | %7.1f %9.5f %8.2f\n", p->k, p->layer, name,
                100.0 * p->prefix_mac_share, p->prefix_cos, p->prefix_sqnr_db, 100.0 * p->suffix_mac_share,
                p->suffix_cos, p->suffix_sqnr_db);
    }
    if (sw->block_end > sw->block_start)
        fprintf(f,
                "\nblock: float16 on tensors %d..%d (rows %d..%d, '%s' .. '%s'), %.1f%% of the MACs: output cosine "
                "%.5f, SQNR %.2f dB (int8 %.5f, float16 everywhere %.5f)\n",
                sw->block_start, sw->block_end - 1, sw->block_first_layer, sw->block_last_layer,
                RD_TEXT_SHOWN(r->result.layers[sw->block_first_layer].name),
                RD_TEXT_SHOWN(r->result.layers[sw->block_last_layer].name), 100.0 * sw->block_mac_share, sw->block_cos,
                sw->block_sqnr_db, sw->points[0].prefix_cos, sw->points[sw->n_points - 1].prefix_cos);
    else
        fprintf(f, "\nno block: float16 everywhere gains nothing on the outputs\n");
    for (size_t i = 0; i < r->result.n_findings; i++) {
        const rd_finding *fd = &r->result.findings[i];
        if (fd->kind == RD_FIND_ERROR_BLOCK || fd->kind == RD_FIND_CONFIG)
            fprintf(f, "\n%s\n  %s\n  -> %s\n", fd->title, fd->evidence, fd->advice ? fd->advice : "");
    }
}

int an_hyb_cli_sweep(an_cmd_ctx *ctx, hyb_args *a, hyb_run *r, rd_error *err)
{
    an_hyb_cand *cands = NULL;
    size_t n = 0;
    rd_status st = an_hyb_allowed(r, &cands, &n, err);
    an_hyb_sweep_opts so = {.max_points = (size_t)a->sweep_points, .progress = ctx->errs};
    if (st == RD_OK)
        st = an_hyb_sweep(&r->hc, cands, n, &so, &r->result.sweep, err);
    an_accuracy_opts ao = {.warn_cos = 0.99, .error_cos = 0.98};
    if (st == RD_OK)
        st = an_findings_add_sim(&r->result, &ao, NULL, r->s, err);
    free(cands);
    if (st != RD_OK)
        return an_fail(ctx, err);
    if (!a->json) {
        print_table(ctx, r, &r->result.sweep);
        return AN_EXIT_OK;
    }
    char *text;
    size_t len;
    if (rd_report_json_sweep_write(&r->result, &text, &len, err) != RD_OK)
        return an_fail(ctx, err);
    fprintf(ctx->out, "%s\n", text);
    free(text);
    return AN_EXIT_OK;
}
