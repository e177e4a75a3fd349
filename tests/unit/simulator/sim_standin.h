/*
 * sim_standin.h: TEMPORARY test double for the four rd_sim functions calibration uses, over a plain
 * rd_model (no passes: every non-constant value is materialised). Included by test_calib.c and
 * bench/calib_bench.c only, never linked into the library. Delete once sim.c lands on main.
 */
#ifndef RD_SIM_STANDIN_H
#define RD_SIM_STANDIN_H

#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rd_sim {
    const rd_model *m;
    rd_sim_tensor *t; /* per value */
};

rd_status rd_sim_create(const rd_model *m, const rd_sim_options *opt, rd_sim **out, rd_error *err)
{
    (void)opt;
    rd_sim *s = calloc(1, sizeof *s);
    size_t nv = rd_model_value_count(m);
    if (s)
        s->t = calloc(nv + 1, sizeof *s->t);
    if (!s || !s->t) {
        free(s);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    s->m = m;
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        s->t[v] = (rd_sim_tensor){.value = (int)v, .fused_into = -1, .materialized = !vi.is_constant,
                                  .precision = RD_PREC_INT8};
    }
    *out = s;
    return RD_OK;
}

void rd_sim_destroy(rd_sim *s)
{
    if (s)
        free(s->t);
    free(s);
}

const rd_model *rd_sim_model(const rd_sim *s)
{
    return s->m;
}

rd_status rd_sim_tensor_get(const rd_sim *s, const char *name, rd_sim_tensor *out, rd_error *err)
{
    int v = rd_model_find_value(s->m, name);
    if (v < 0)
        return rd_errorf(err, RD_E_NOTFOUND, "no tensor '%s'", name);
    *out = s->t[v];
    return RD_OK;
}

rd_status rd_sim_set_range(rd_sim *s, const char *name, float min, float max, rd_error *err)
{
    int v = rd_model_find_value(s->m, name);
    if (v < 0)
        return rd_errorf(err, RD_E_NOTFOUND, "no tensor '%s'", name);
    if (!(min <= max) || !isfinite(min) || !isfinite(max))
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': bad range [%g, %g]", name, min, max);
    rd_sim_tensor *t = &s->t[v];
    t->quantized = true;
    t->min = min;
    t->max = max;
    float lo = min < 0 ? min : 0, hi = max > 0 ? max : 0;
    t->scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    t->zero_point = (int32_t)rint(-128.0 - lo / t->scale);
    return RD_OK;
}

#endif
