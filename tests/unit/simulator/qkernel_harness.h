/*
 * qkernel_harness.h: what the integer kernel tests (test_qkernels.c at int8, test_q16kernels.c at int16)
 * share: the seeded generator, an op's integer eval run by hand (parse, infer, allocate, as op_harness.h
 * does for float), random convolution geometries and the bit-exact comparison of outputs.
 */
#ifndef RD_TEST_QKERNEL_HARNESS_H
#define RD_TEST_QKERNEL_HARNESS_H

#include "op_harness.h"

#include <stdio.h>

static inline uint32_t qk_rng(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static inline int64_t qk_rr(uint32_t *s, int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(qk_rng(s) % (uint32_t)(hi - lo + 1));
}

/** Float weights of magnitude up to amp. */
static inline void qk_make_f32(uint32_t *s, int64_t n, float amp, float *w)
{
    for (int64_t i = 0; i < n; i++)
        w[i] = amp * ((float)qk_rr(s, -10000, 10000) / 10000.0f);
}

/** 0 when got and want hold the same bits, else 1 after naming the first element that differs. */
static inline int qk_compare_out(const float *got, const float *want, int64_t n, const char *what, int case_no)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            fprintf(stderr, "%s case %d: element %lld is %.9g, reference %.9g\n", what, case_no, (long long)i,
                    (double)got[i], (double)want[i]);
            return 1;
        }
    return 0;
}

/* ------------------------------------------------------------------------------------------------- */
/* An op's integer eval by hand: qk_setup parses, infers and allocates output 0; the test calls the kernel
   on r.ctx. */

typedef struct qk_run {
    sim_node node;
    void *params;
    sim_scratch scratch;
    bool present[1];
    sim_op_ctx ctx;
    rd_tensor out;
    rd_error err;
} qk_run;

static inline rd_status qk_setup(qk_run *r, const char *op, const sim_attr *attrs, int n_attr,
                                 const rd_tensor *const *in, int n_in)
{
    memset(r, 0, sizeof *r);
    const sim_op_def *d = sim_op_find("", op);
    r->node = (sim_node){.name = "q",
                         .op_type = (char *)op,
                         .domain = "",
                         .opset = 13,
                         .n_in = n_in,
                         .n_out = 1,
                         .n_attr = n_attr,
                         .attrs = (sim_attr *)attrs,
                         .def = d};
    r->params = d->params_size ? calloc(1, d->params_size) : NULL;
    r->present[0] = true;
    r->ctx = (sim_op_ctx){.node = &r->node,
                          .params = r->params,
                          .opset = 13,
                          .n_in = n_in,
                          .in = in,
                          .n_out = 1,
                          .out = &r->out,
                          .out_present = r->present,
                          .scratch = &r->scratch};
    rd_status st = d->parse ? d->parse(&r->node, r->params, &r->err) : RD_OK;
    if (st == RD_OK)
        st = d->infer(&r->ctx, &r->err);
    if (st == RD_OK && r->ctx.deferred) /* every input has its data: nothing may wait for run time */
        st = RD_E_INVAL;
    if (st == RD_OK) {
        rd_tensor shape = r->out;
        st = rd_tensor_alloc(&r->out, RD_DT_F32, shape.rank, shape.dims, &r->err);
    }
    return st;
}

static inline void qk_fini(qk_run *r)
{
    sim_scratch_fini(&r->scratch);
    free(r->params);
    rd_tensor_fini(&r->out);
}

/* ------------------------------------------------------------------------------------------------- */
/* Conv and ConvTranspose */

typedef struct qk_conv_case {
    int nsp;
    int64_t batch, c, m, group;
    int64_t in[3], k[3], stride[3], dil[3], pads[6];
    const char *auto_pad; /* NULL: explicit pads */
    bool bias, per_tensor;
    int32_t zp;          /* int8: the input's zero point */
    bool asym;           /* int8: asymmetric weights, a zero point per channel (the eval's correction) */
    int in_bits, w_bits; /* int16 layers: the input's and the weights' widths */
} qk_conv_case;

/** A random geometry (groups, depthwise, dilations, pads, strides, auto_pad, 1-D to 3-D), bias and per-tensor
    choice; the precision's own fields stay zero for the caller to draw. */
static inline void qk_random_conv_geometry(uint32_t *s, bool transpose, qk_conv_case *cc)
{
    memset(cc, 0, sizeof *cc);
    cc->nsp = (int)qk_rr(s, 1, 10) <= 4 ? 1 : (qk_rr(s, 1, 10) <= 8 ? 2 : 3);
    cc->batch = qk_rr(s, 1, 2);
    const int kind = (int)qk_rr(s, 0, 3);
    if (kind == 0 && !transpose) { /* depthwise, maybe with a channel multiplier */
        cc->group = qk_rr(s, 2, 5);
        cc->c = cc->group;
        cc->m = cc->group * qk_rr(s, 1, 2);
    } else {
        cc->group = kind == 1 ? qk_rr(s, 2, 3) : 1;
        cc->c = cc->group * qk_rr(s, 1, 4);
        cc->m = cc->group * qk_rr(s, 1, 4);
    }
    for (int d = 0; d < cc->nsp; d++) {
        cc->k[d] = qk_rr(s, 1, 3);
        cc->stride[d] = qk_rr(s, 1, 3);
        cc->dil[d] = qk_rr(s, 1, 2);
        cc->in[d] = qk_rr(s, 1, cc->nsp == 3 ? 5 : 11);
        cc->pads[d] = qk_rr(s, 0, 2);
        cc->pads[cc->nsp + d] = qk_rr(s, 0, 2);
        const int64_t ek = (cc->k[d] - 1) * cc->dil[d] + 1;
        if (!transpose && cc->in[d] + cc->pads[d] + cc->pads[cc->nsp + d] < ek)
            cc->in[d] = ek;
        if (transpose) { /* keep the output positive: total pad below the natural size */
            cc->pads[d] = qk_rr(s, 0, 1);
            cc->pads[cc->nsp + d] = 0;
        }
    }
    const int ap = (int)qk_rr(s, 0, 5);
    if (ap == 0)
        cc->auto_pad = "SAME_UPPER";
    else if (ap == 1)
        cc->auto_pad = "SAME_LOWER";
    else if (ap == 2 && !transpose) {
        cc->auto_pad = "VALID";
        for (int d = 0; d < cc->nsp; d++)
            if (cc->in[d] < (cc->k[d] - 1) * cc->dil[d] + 1)
                cc->in[d] = (cc->k[d] - 1) * cc->dil[d] + 1;
    }
    cc->bias = qk_rng(s) & 1;
    cc->per_tensor = (qk_rng(s) % 4) == 0;
}

/** A 2-D pointwise conv (a straight GEMM) with bias: c -> m channels in groups on h x w. */
static inline qk_conv_case qk_pointwise_case(int64_t batch, int64_t c, int64_t m, int64_t group, int64_t h, int64_t w)
{
    qk_conv_case cc = {.nsp = 2, .batch = batch, .c = c, .m = m, .group = group, .bias = true};
    cc.in[0] = h;
    cc.in[1] = w;
    for (int d = 0; d < 2; d++)
        cc.k[d] = cc.stride[d] = cc.dil[d] = 1;
    return cc;
}

/** A 2-D 3 x 3 conv with pads 1 and bias: c -> m channels in groups on h x w, stride 1 or 2. */
static inline qk_conv_case qk_conv3x3_case(int64_t c, int64_t m, int64_t group, int64_t h, int64_t w, int64_t stride)
{
    qk_conv_case cc = {.nsp = 2, .batch = 1, .c = c, .m = m, .group = group, .bias = true};
    cc.in[0] = h;
    cc.in[1] = w;
    for (int d = 0; d < 2; d++) {
        cc.k[d] = 3;
        cc.stride[d] = stride;
        cc.dil[d] = 1;
    }
    for (int d = 0; d < 4; d++)
        cc.pads[d] = 1;
    return cc;
}

/** The input's and the weight's dims (nsp + 2 each) and element counts. */
static inline void qk_conv_dims(const qk_conv_case *cc, bool transpose, int64_t xd[5], int64_t wd[5], int64_t *nx,
                                int64_t *nw)
{
    xd[0] = cc->batch;
    xd[1] = cc->c;
    wd[0] = transpose ? cc->c : cc->m;
    wd[1] = transpose ? cc->m / cc->group : cc->c / cc->group;
    for (int d = 0; d < cc->nsp; d++) {
        xd[2 + d] = cc->in[d];
        wd[2 + d] = cc->k[d];
    }
    *nx = *nw = 1;
    for (int d = 0; d < cc->nsp + 2; d++) {
        *nx *= xd[d];
        *nw *= wd[d];
    }
}

/** The node's attributes into attrs (room for 4); their count. */
static inline int qk_conv_attrs(const qk_conv_case *cc, sim_attr *attrs)
{
    int na = 0;
    attrs[na++] = h_int("group", cc->group);
    attrs[na++] = h_ints("strides", cc->stride, (size_t)cc->nsp);
    attrs[na++] = h_ints("dilations", cc->dil, (size_t)cc->nsp);
    if (cc->auto_pad)
        attrs[na++] = h_str("auto_pad", cc->auto_pad);
    else
        attrs[na++] = h_ints("pads", cc->pads, (size_t)(2 * cc->nsp));
    return na;
}

/** Walks a multi-index over dims (nsp entries); false after the last. */
static inline bool qk_next_index(int64_t *idx, const int64_t *dims, int nsp)
{
    for (int d = nsp - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/** Row-major offset of idx in dims. */
static inline int64_t qk_flat(const int64_t *idx, const int64_t *dims, int nsp)
{
    int64_t f = 0;
    for (int d = 0; d < nsp; d++)
        f = f * dims[d] + idx[d];
    return f;
}

/* ------------------------------------------------------------------------------------------------- */
/* MatMul */

typedef struct qk_mm_case {
    int ra, rb;
    int64_t ad[4], bd[4];
    bool act_b;
} qk_mm_case;

#endif
