/* sample_result.h: a realistic rd_result for report tests (sample_result.c). */
#ifndef RD_SAMPLE_RESULT_H
#define RD_SAMPLE_RESULT_H

#include "rknn_diag/reports.h"

/** The name of the hostile layer the sample contains (HTML/JS/JSON metacharacters). */
#define RD_SAMPLE_EVIL_NAME "</script><script>alert(\"x&y\")</script>'<b>"

/**
 * Fills r (initialised here) with n_layers layers (at least 8) of a made-up detector: an input, an
 * exDataConvert, Conv layers with varied and deterministic metrics, ReLUs fused away (blank rows), a
 * NaN cell, degenerate classes, a layer named RD_SAMPLE_EVIL_NAME, histograms and channel cosines for
 * a few layers, findings and config. runtime adds the board groups; n_samples > 1 fills min/p5.
 */
rd_status rd_sample_result(rd_result *r, size_t n_layers, bool runtime, int n_samples, rd_error *err);

#endif
