/*
 * op_harness.h: runs one operator by hand (parse, infer, allocate, eval) on tensors built in the test,
 * without a model. Shared by the operator unit tests (elementwise, nn, quant) and qkernel_harness.h.
 */
#ifndef RD_TEST_OP_HARNESS_H
#define RD_TEST_OP_HARNESS_H

#include "internal.h"

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

static inline void h_fini(h_run *r)
{
    for (int k = 0; k < r->n_out; k++)
        if (r->out[k].data)
            rd_tensor_fini(&r->out[k]);
}

#endif
