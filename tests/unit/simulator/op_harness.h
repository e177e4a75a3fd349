/*
 * op_harness.h: runs one operator by hand (parse, infer, allocate, eval) on tensors built in the test,
 * without a model. Shared by the operator unit tests (elementwise, nn, quant) and qkernel_harness.h.
 */
#ifndef RD_TEST_OP_HARNESS_H
#define RD_TEST_OP_HARNESS_H

#include "internal.h"

#include <math.h>

#define H_MAX_IO 10

typedef struct h_run {
    rd_tensor out[H_MAX_IO];
    int n_out;
    int64_t macs; /* the op's MAC count on these shapes after a successful eval (0: it has no macs) */
    rd_error err;
} h_run;

static inline sim_attr h_int(const char *name, int64_t v)
{
    return (sim_attr){.name = (char *)name, .type = SIM_ATTR_INT, .i = v};
}
static inline sim_attr h_float(const char *name, float v)
{
    return (sim_attr){.name = (char *)name, .type = SIM_ATTR_FLOAT, .f = v};
}
static inline sim_attr h_str(const char *name, const char *v)
{
    return (sim_attr){.name = (char *)name, .type = SIM_ATTR_STRING, .s = (char *)v, .s_len = strlen(v)};
}
static inline sim_attr h_ints(const char *name, const int64_t *v, size_t n)
{
    return (sim_attr){.name = (char *)name, .type = SIM_ATTR_INTS, .ints = (int64_t *)v, .n_ints = n};
}

/** A tensor over caller memory (not owned): H_T(RD_DT_F32, data, 2, 3) has shape 2x3. */
static inline rd_tensor h_t(rd_dtype dt, const void *data, int rank, const int64_t *dims)
{
    rd_tensor t = {.dtype = dt, .rank = rank, .data = (void *)data};
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    return t;
}
#define H_T(dt, data, ...)                                                          \
    h_t(dt, data, (int)(sizeof((int64_t[]){0, __VA_ARGS__}) / sizeof(int64_t)) - 1, \
        (const int64_t[]){0, __VA_ARGS__} + 1)
#define H_SCALAR(dt, data) h_t(dt, data, 0, NULL)

/** Runs op; in[k] may be NULL for omitted optional inputs. Returns the status; outputs in r->out. */
static inline rd_status h_exec(h_run *r, const char *op, int opset, const sim_attr *attrs, int n_attr,
                               const rd_tensor *const *in, int n_in, int n_out)
{
    memset(r, 0, sizeof *r);
    r->n_out = n_out;
    const sim_op_def *d = sim_op_find("", op);
    if (!d)
        return rd_errorf(&r->err, RD_E_UNSUPPORTED, "no op %s", op);
    sim_node node = {.name = "t",
                     .op_type = (char *)op,
                     .domain = "",
                     .opset = opset,
                     .n_in = n_in,
                     .n_out = n_out,
                     .n_attr = n_attr,
                     .attrs = (sim_attr *)attrs,
                     .def = d};
    void *params = d->params_size ? calloc(1, d->params_size) : NULL;
    rd_status st = d->parse ? d->parse(&node, params, &r->err) : RD_OK;
    bool present[H_MAX_IO];
    for (int k = 0; k < H_MAX_IO; k++)
        present[k] = true;
    sim_scratch scratch = {0};
    sim_op_ctx ctx = {.node = &node,
                      .params = params,
                      .opset = opset,
                      .n_in = n_in,
                      .in = in,
                      .n_out = n_out,
                      .out = r->out,
                      .out_present = present,
                      .scratch = &scratch};
    if (st == RD_OK)
        st = d->infer(&ctx, &r->err);
    if (st == RD_OK && ctx.deferred) /* every input has its data: nothing may wait for run time */
        st = RD_E_INVAL;
    for (int k = 0; k < n_out && st == RD_OK; k++) {
        rd_tensor shape = r->out[k];
        st = rd_tensor_alloc(&r->out[k], shape.dtype, shape.rank, shape.dims, &r->err);
    }
    if (st == RD_OK)
        st = d->eval[SIM_PREC_F32](&ctx, &r->err);
    if (st == RD_OK && d->macs)
        r->macs = d->macs(&ctx);
    sim_scratch_fini(&scratch);
    free(params);
    return st;
}

/**
 * Runs op's region kernel (region_f32) over output 0 cut in regions of 2 channels x 8 positions (and whole
 * planes), into a buffer of NaN, and compares each bit with eval's output in r (a successful h_exec of the
 * same op and inputs). Returns the elements that differ, or -1 when the op has no region kernel or it refused.
 */
static inline int64_t h_region_mismatches(const h_run *r, const char *op, int opset, const sim_attr *attrs, int n_attr,
                                          const rd_tensor *const *in, int n_in)
{
    const sim_op_def *d = sim_op_find("", op);
    const rd_tensor *y = &r->out[0];
    if (!d || !d->region_f32 || y->rank < 2)
        return -1;
    sim_node node = {.name = "t",
                     .op_type = (char *)op,
                     .domain = "",
                     .opset = opset,
                     .n_in = n_in,
                     .n_out = 1,
                     .n_attr = n_attr,
                     .attrs = (sim_attr *)attrs,
                     .def = d};
    void *params = d->params_size ? calloc(1, d->params_size) : NULL;
    node.params = params;
    rd_error err;
    int64_t bad = d->parse && d->parse(&node, params, &err) != RD_OK ? -1 : 0;
    const int64_t numel = rd_tensor_numel(y), nb = y->dims[0], nc = y->dims[1], np = numel / (nb * nc);
    rd_tensor got = *y;
    got.data = malloc((size_t)numel * sizeof(float));
    for (int pass = 0; pass < 2 && bad >= 0; pass++) { /* regions of 8 positions, then whole planes */
        for (int64_t i = 0; i < numel; i++)
            ((float *)got.data)[i] = NAN;
        const int64_t step = pass == 0 ? 8 : np;
        for (int64_t b = 0; b < nb && bad >= 0; b++)
            for (int64_t c0 = 0; c0 < nc && bad >= 0; c0 += 2)
                for (int64_t p0 = 0; p0 < np && bad >= 0; p0 += step) {
                    const sim_region reg = {.b = b,
                                            .c0 = c0,
                                            .c1 = c0 + 2 < nc ? c0 + 2 : nc,
                                            .p0 = p0,
                                            .p1 = p0 + step < np ? p0 + step : np,
                                            .view_c = nc,
                                            .view_p = np};
                    if (!d->region_f32(&node, in, &got, &reg))
                        bad = -1;
                }
        for (int64_t i = 0; i < numel && bad >= 0; i++)
            bad += memcmp((const float *)got.data + i, (const float *)y->data + i, sizeof(float)) != 0;
    }
    free(got.data);
    free(params);
    return bad;
}

static inline void h_fini(h_run *r)
{
    for (int k = 0; k < r->n_out; k++)
        if (r->out[k].data)
            rd_tensor_fini(&r->out[k]);
}

#endif
