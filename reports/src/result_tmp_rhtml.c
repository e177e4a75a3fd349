/*
 * result_tmp_rhtml.c: TEMPORARY stand-in for rtext's reports/src/result.c (rd_result_init/fini and
 * rd_degenerate_name) so that the rhtml branch builds on its own. Deleted when rtext is merged.
 */
#include "rknn_diag/reports.h"

#include <stdlib.h>
#include <string.h>

void rd_result_init(rd_result *r) { memset(r, 0, sizeof *r); }

void rd_result_fini(rd_result *r)
{
    if (!r)
        return;
    free(r->tool);
    free(r->model);
    for (size_t i = 0; i < r->n_config; i++) {
        free(r->config[i].key);
        free(r->config[i].value);
    }
    free(r->config);
    for (size_t i = 0; i < r->n_layers; i++) {
        rd_layer_result *l = &r->layers[i];
        free(l->name);
        free(l->op_type);
        free(l->fused_into);
        free(l->precision);
        free(l->channels.cos);
        free(l->hist.golden);
        free(l->hist.tested);
    }
    free(r->layers);
    for (size_t i = 0; i < r->n_findings; i++) {
        rd_finding *f = &r->findings[i];
        free(f->layer);
        free(f->title);
        free(f->evidence);
        free(f->advice);
    }
    free(r->findings);
    memset(r, 0, sizeof *r);
}

const char *rd_degenerate_name(rd_degenerate d)
{
    static const char *const names[] = {
        [RD_DEG_NONE] = "none",           [RD_DEG_BOTH_ZERO] = "both_zero", [RD_DEG_REF_ZERO] = "ref_zero",
        [RD_DEG_TEST_ZERO] = "test_zero", [RD_DEG_CONSTANT] = "constant",   [RD_DEG_NONFINITE] = "nonfinite",
        [RD_DEG_SHAPE] = "shape",
    };
    return (unsigned)d < sizeof names / sizeof names[0] ? names[d] : "unknown";
}
