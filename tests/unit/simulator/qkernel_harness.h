/*
 * qkernel_harness.h: what the integer kernel tests (test_qkernels.c at int8, test_q16kernels.c at int16)
 * share: the seeded generator, an op's integer eval run by hand (parse, infer, allocate, as op_harness.h
 * does for float), random convolution geometries, the naive int64 references of Conv, ConvTranspose and
 * MatMul and the bit-exact comparison of outputs.
 *
 * The references take codes widened to int32 (qk_widen_s8, qk_widen_s16) and return exact int64 sums, so
 * that one loop serves both precisions: the int8 tests wrap the sums to int32 as the kernels' accumulators do.
 */
#ifndef RD_TEST_QKERNEL_HARNESS_H
#define RD_TEST_QKERNEL_HARNESS_H

#include "op_harness.h"
#include "kernels/conv_geom.h"
#include "ops/linear_shapes.h"

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

/** The Conv the invalid-layer tests start from, set up on r: x [1, 4, 3, 3] and W [2, 4, 3, 3], all zeros (the
    node reads them through in until qk_fini). */
typedef struct qk_zero_conv {
    float x[4 * 9], w[2 * 4 * 9];
    rd_tensor tx, tw;
    const rd_tensor *in[2];
    qk_run r;
} qk_zero_conv;

static inline void qk_zero_conv_setup(qk_zero_conv *zc)
{
    memset(zc, 0, sizeof *zc);
    zc->tx = H_T(RD_DT_F32, zc->x, 1, 4, 3, 3);
    zc->tw = H_T(RD_DT_F32, zc->w, 2, 4, 3, 3);
    zc->in[0] = &zc->tx;
    zc->in[1] = &zc->tw;
    CU_ASSERT_EQUAL_FATAL(qk_setup(&zc->r, "Conv", NULL, 0, zc->in, 2), RD_OK);
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

/** Row-major offset of idx in dims. */
static inline int64_t qk_flat(const int64_t *idx, const int64_t *dims, int nsp)
{
    int64_t f = 0;
    for (int d = 0; d < nsp; d++)
        f = f * dims[d] + idx[d];
    return f;
}

/** v wrapped to int32 as an int32 register wraps (the int8 kernels' accumulators). */
static inline int32_t qk_wrap32(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

/** How a layer's sums become floats: (float)(acc * in_scale * w_scale[ch]) for the element's channel ch, acc
    first wrapped to int32 when wrap32 (the int8 kernels' accumulators). */
typedef struct qk_scales {
    float in_scale;
    const float *w_scale;
    int n_w_scale; /* 1, or one a channel */
    bool wrap32;
} qk_scales;

static inline double qk_scaled(const qk_scales *sc, int64_t acc, int64_t ch)
{
    return (double)(sc->wrap32 ? qk_wrap32(acc) : acc) * sc->in_scale * sc->w_scale[sc->n_w_scale == 1 ? 0 : ch];
}

/** Whether the eval failed (st is not RD_OK), after naming the case and the error. */
static inline bool qk_eval_failed(const char *op, const qk_run *r, rd_status st, int case_no)
{
    if (st == RD_OK)
        return false;
    fprintf(stderr, "%s case %d: eval: %s\n", op, case_no, r->err.msg);
    return true;
}

/** The eval's output in r against the reference's n sums acc as floats (qk_scaled; plane elements a channel,
    n_ch channels); the number of failures, each named. */
static inline int qk_check_sums(const char *op, const qk_run *r, const int64_t *acc, int64_t n, int64_t plane,
                                int64_t n_ch, const qk_scales *sc, int case_no)
{
    float *want = malloc((size_t)n * 4 + 4);
    for (int64_t i = 0; i < n; i++)
        want[i] = (float)qk_scaled(sc, acc[i], (i / plane) % n_ch);
    const int fails = qk_compare_out(r->out.data, want, n, op, case_no);
    free(want);
    return fails;
}

/** Integer codes of an int8 tensor as int32, for the references (a new block the caller frees). */
static inline int32_t *qk_widen_s8(const int8_t *q, int64_t n)
{
    int32_t *w = malloc((size_t)n * sizeof *w + sizeof *w);
    for (int64_t i = 0; i < n; i++)
        w[i] = q[i];
    return w;
}

/** The same for int16 codes. */
static inline int32_t *qk_widen_s16(const int16_t *q, int64_t n)
{
    int32_t *w = malloc((size_t)n * sizeof *w + sizeof *w);
    for (int64_t i = 0; i < n; i++)
        w[i] = q[i];
    return w;
}

/** What a reference convolution reads: integer codes, their zero points and the integer bias. */
typedef struct qk_conv_ref {
    const int32_t *x;    /* input codes */
    int32_t x_zp;        /* the input's zero point */
    const int32_t *w;    /* weight codes in the op's layout */
    const int32_t *w_zp; /* weight zero points per output channel (n_w_zp 1 or out_c); NULL for none */
    int n_w_zp;
    const int64_t *bias; /* integer bias per output channel; NULL for none */
} qk_conv_ref;

static inline int64_t qk_w_zp_of(const qk_conv_ref *r, int64_t m)
{
    return r->w_zp ? r->w_zp[r->n_w_zp == 1 ? 0 : m] : 0;
}

/** Where tap kk of position from lands: to[d] = from[d] * stride + kk[d] * dilation - pad (Conv: output to
    input; ConvTranspose: input to output); whether it lies inside dims. */
static inline bool qk_tap(const conv_geom *g, const int64_t *from, const int64_t *kk, int64_t *to, const int64_t *dims)
{
    bool inside = true;
    for (int d = 0; d < g->nsp; d++) {
        to[d] = from[d] * g->stride[d] + kk[d] * g->dil[d] - g->pad[d];
        inside = inside && to[d] >= 0 && to[d] < dims[d];
    }
    return inside;
}

/** Conv by the definition: acc[n, m, o] = bias[m] + sum of (x - x_zp) * (w - w_zp[m]) over the taps inside. */
static inline void qk_ref_conv(const conv_geom *g, const qk_conv_ref *r, int64_t *acc)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp), ksz = conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t m = 0; m < g->out_c; m++) {
            const int64_t grp = m / mg;
            int64_t o[CONV_MAX_SP] = {0};
            do {
                int64_t sum = r->bias ? r->bias[m] : 0;
                for (int64_t c = 0; c < cg; c++) {
                    int64_t kk[CONV_MAX_SP] = {0};
                    do {
                        int64_t i[CONV_MAX_SP];
                        if (qk_tap(g, o, kk, i, g->in))
                            sum += (int64_t)(r->x[(n * g->in_c + grp * cg + c) * in_plane + qk_flat(i, g->in, nsp)] -
                                             r->x_zp) *
                                   (r->w[(m * cg + c) * ksz + qk_flat(kk, g->k, nsp)] - qk_w_zp_of(r, m));
                    } while (conv_odo_next(kk, g->k, nsp));
                }
                acc[(n * g->out_c + m) * out_plane + qk_flat(o, g->out, nsp)] = sum;
            } while (out_plane > 0 && conv_odo_next(o, g->out, nsp));
        }
}

/** ConvTranspose by the definition: every input position scatters (x - x_zp) * (w - w_zp[m]) to the outputs
    its taps reach, on top of the bias. */
static inline void qk_ref_conv_transpose(const conv_geom *g, const qk_conv_ref *r, int64_t *acc)
{
    const int nsp = g->nsp;
    const int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
    const int64_t in_plane = conv_prod(g->in, nsp), out_plane = conv_prod(g->out, nsp), ksz = conv_prod(g->k, nsp);
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t m = 0; m < g->out_c; m++)
            for (int64_t p = 0; p < out_plane; p++)
                acc[(n * g->out_c + m) * out_plane + p] = r->bias ? r->bias[m] : 0;
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t c = 0; c < g->in_c; c++) {
            const int64_t grp = c / cg;
            int64_t i[CONV_MAX_SP] = {0};
            do {
                const int64_t xv = r->x[(n * g->in_c + c) * in_plane + qk_flat(i, g->in, nsp)] - r->x_zp;
                for (int64_t m = 0; m < mg; m++) {
                    int64_t kk[CONV_MAX_SP] = {0};
                    do {
                        int64_t o[CONV_MAX_SP];
                        if (qk_tap(g, i, kk, o, g->out))
                            acc[(n * g->out_c + grp * mg + m) * out_plane + qk_flat(o, g->out, nsp)] +=
                                xv * (r->w[(c * mg + m) * ksz + qk_flat(kk, g->k, nsp)] - qk_w_zp_of(r, grp * mg + m));
                    } while (conv_odo_next(kk, g->k, nsp));
                }
            } while (in_plane > 0 && conv_odo_next(i, g->in, nsp));
        }
}

/** A Conv or ConvTranspose case ready for its eval: the float inputs, the node run by hand, its geometry. */
typedef struct qk_conv_io {
    const char *op;
    bool transpose;
    int64_t nx, nw;   /* elements of the input and of the weights */
    float *x, *w, *b; /* the input (the caller's to draw), weights and bias */
    rd_tensor tx, tw, tb;
    const rd_tensor *in[3]; /* the node reads its inputs and attributes through these until the end */
    sim_attr attrs[4];
    qk_run r;
    conv_geom g;
    int64_t ny, out_plane; /* the output's elements and spatial size */
} qk_conv_io;

/** The dims and float buffers of cc: the caller then draws its activations into io->x (io->nx of them) and
    calls qk_conv_setup. */
static inline void qk_conv_begin(const qk_conv_case *cc, bool transpose, qk_conv_io *io)
{
    memset(io, 0, sizeof *io);
    io->op = transpose ? "ConvTranspose" : "Conv";
    io->transpose = transpose;
    int64_t xd[5], wd[5];
    qk_conv_dims(cc, transpose, xd, wd, &io->nx, &io->nw);
    io->x = malloc((size_t)io->nx * 4 + 4);
    io->w = malloc((size_t)io->nw * 4 + 4);
    io->b = malloc((size_t)cc->m * 4);
    io->tx = h_t(RD_DT_F32, io->x, cc->nsp + 2, xd);
    io->tw = h_t(RD_DT_F32, io->w, cc->nsp + 2, wd);
    io->tb = H_T(RD_DT_F32, io->b, cc->m);
}

/** Random weights and bias, then the node parsed, inferred and allocated and its geometry; false, after
    naming the case, when the op refuses it. */
static inline bool qk_conv_setup(const qk_conv_case *cc, uint32_t *s, qk_conv_io *io, int case_no)
{
    qk_make_f32(s, io->nw, 0.5f, io->w);
    qk_make_f32(s, cc->m, 3.0f, io->b);
    io->in[0] = &io->tx;
    io->in[1] = &io->tw;
    io->in[2] = &io->tb;
    const int na = qk_conv_attrs(cc, io->attrs);
    if (qk_setup(&io->r, io->op, io->attrs, na, io->in, cc->bias ? 3 : 2) != RD_OK) {
        fprintf(stderr, "%s case %d: setup: %s\n", io->op, case_no, io->r.err.msg);
        return false;
    }
    rd_error err;
    const rd_status st = io->transpose ? sim_conv_transpose_geometry(&io->r.ctx, &io->g, &err)
                                       : sim_conv_geometry(&io->r.ctx, &io->g, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    io->ny = rd_tensor_numel(&io->r.out);
    io->out_plane = conv_prod(io->g.out, io->g.nsp);
    return true;
}

/** The reference of the case's op into acc (io->ny sums). */
static inline void qk_conv_reference(const qk_conv_io *io, const qk_conv_ref *ref, int64_t *acc)
{
    if (io->transpose)
        qk_ref_conv_transpose(&io->g, ref, acc);
    else
        qk_ref_conv(&io->g, ref, acc);
}

/** The eval's outcome st and output against the reference's sums acc (io->ny of them, qk_check_sums); the
    number of failures. */
static inline int qk_conv_check(const qk_conv_io *io, rd_status st, const int64_t *acc, const qk_scales *sc,
                                int case_no)
{
    if (qk_eval_failed(io->op, &io->r, st, case_no))
        return 1;
    return qk_check_sums(io->op, &io->r, acc, io->ny, io->out_plane, io->g.out_c, sc, case_no);
}

static inline void qk_conv_end(qk_conv_io *io)
{
    qk_fini(&io->r);
    free(io->x);
    free(io->w);
    free(io->b);
}

/* ------------------------------------------------------------------------------------------------- */
/* Gemm */

typedef struct qk_gemm_case {
    int64_t m, n, k;
    bool ta, tb;
    int c_kind; /* none, const [N], const [1, N], matrix [M, N], activation [N] */
    float alpha, beta;
    float *a, *w, *c;        /* A (M x K, the caller's to draw), B (K x N) and C (room for M x N) */
    rd_tensor t_a, t_b, t_c; /* over a, w and c, laid out as the case says */
    const rd_tensor *in[3];  /* the node reads its inputs and attributes through these until the end */
    sim_attr attrs[4];
    qk_run r;
} qk_gemm_case;

/** A random Gemm (sizes, transposes, the kind of C, alpha and beta) and its float buffers: the caller then draws
    its activations into gc->a (M x K of them) and calls qk_gemm_setup. */
static inline void qk_gemm_begin(uint32_t *s, qk_gemm_case *gc)
{
    memset(gc, 0, sizeof *gc);
    gc->m = qk_rr(s, 1, 9);
    gc->n = qk_rr(s, 1, 40);
    gc->k = qk_rr(s, 1, 300);
    gc->ta = qk_rng(s) & 1;
    gc->tb = qk_rng(s) & 1;
    gc->c_kind = (int)qk_rr(s, 0, 4);
    gc->alpha = (qk_rng(s) & 1) ? 1.0f : 0.75f;
    gc->beta = (qk_rng(s) & 1) ? 1.0f : -1.5f;
    gc->a = malloc((size_t)(gc->m * gc->k) * 4);
    gc->w = malloc((size_t)(gc->k * gc->n) * 4);
    gc->c = malloc((size_t)(gc->m * gc->n) * 4);
}

/** Random B and C, the node's tensors and attributes, then the node parsed, inferred and allocated. */
static inline void qk_gemm_setup(uint32_t *s, qk_gemm_case *gc)
{
    const int64_t m = gc->m, n = gc->n, k = gc->k;
    qk_make_f32(s, k * n, 1.0f, gc->w);
    qk_make_f32(s, m * n, 2.0f, gc->c);
    gc->t_a = gc->ta ? H_T(RD_DT_F32, gc->a, k, m) : H_T(RD_DT_F32, gc->a, m, k);
    gc->t_b = gc->tb ? H_T(RD_DT_F32, gc->w, n, k) : H_T(RD_DT_F32, gc->w, k, n);
    gc->t_c = gc->c_kind == 2   ? H_T(RD_DT_F32, gc->c, 1, n)
              : gc->c_kind == 3 ? H_T(RD_DT_F32, gc->c, m, n)
                                : H_T(RD_DT_F32, gc->c, n);
    gc->in[0] = &gc->t_a;
    gc->in[1] = &gc->t_b;
    gc->in[2] = &gc->t_c;
    gc->attrs[0] = h_float("alpha", gc->alpha);
    gc->attrs[1] = h_float("beta", gc->beta);
    gc->attrs[2] = h_int("transA", gc->ta);
    gc->attrs[3] = h_int("transB", gc->tb);
    CU_ASSERT_EQUAL_FATAL(qk_setup(&gc->r, "Gemm", gc->attrs, 4, gc->in, gc->c_kind ? 3 : 2), RD_OK);
}

static inline void qk_gemm_end(qk_gemm_case *gc)
{
    qk_fini(&gc->r);
    free(gc->a);
    free(gc->w);
    free(gc->c);
}

/** The exact sum over p < k of (a[p * a_step] - a_zp) * (b[p * b_step] - b_zp): a row times a column. */
static inline int64_t qk_ref_dot(int64_t k, const int32_t *a, int64_t a_step, int64_t a_zp, const int32_t *b,
                                 int64_t b_step, int64_t b_zp)
{
    int64_t sum = 0;
    for (int64_t p = 0; p < k; p++)
        sum += (a[p * a_step] - a_zp) * (b[p * b_step] - b_zp);
    return sum;
}

/** Gemm's product by the definition on codes: acc[i, j] = sum over p of (a - a_zp) * (b - b_col_zp[j]) with
    A and B laid out as the case says; b_col_zp (n_b_col_zp 1 or N) may be NULL. */
static inline void qk_ref_gemm(const qk_gemm_case *gc, const int32_t *a, int32_t a_zp, const int32_t *b,
                               const int32_t *b_col_zp, int n_b_col_zp, int64_t *acc)
{
    const int64_t m = gc->m, n = gc->n, k = gc->k;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const int64_t col_zp = b_col_zp ? b_col_zp[n_b_col_zp == 1 ? 0 : j] : 0;
            acc[i * n + j] = qk_ref_dot(k, gc->ta ? a + i : a + i * k, gc->ta ? m : 1, a_zp, gc->tb ? b + j * k : b + j,
                                        gc->tb ? 1 : n, col_zp);
        }
}

/** A precision's integer bias: b at the given scale (sim_quant_bias_i32, sim_quant_bias_wide). */
typedef int64_t (*qk_bias_fn)(double b, double scale);

/** The eval's outcome st and output against the floats Gemm must produce from the product acc (qk_ref_gemm):
    alpha * (acc as qk_scaled gives it, channel j) + beta * C, where a constant C that is one row (kinds 1 and 2,
    or 3 when M is 1) is folded into acc as an integer bias (quant_bias) first, as the evals do. The number of
    failures, each named. */
static inline int qk_gemm_check(const qk_gemm_case *gc, rd_status st, const int64_t *acc, const qk_scales *sc,
                                qk_bias_fn quant_bias, int case_no)
{
    if (qk_eval_failed("Gemm", &gc->r, st, case_no))
        return 1;
    const int64_t m = gc->m, n = gc->n;
    const float alpha = gc->alpha, beta = gc->beta;
    const bool fold = (gc->c_kind == 1 || gc->c_kind == 2 || (gc->c_kind == 3 && m == 1)) && alpha != 0;
    float *want = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const double sn = sc->w_scale[sc->n_w_scale == 1 ? 0 : j];
            int64_t sum = acc[i * n + j];
            const double cv = gc->c_kind == 3 ? gc->c[i * n + j] : gc->c[j];
            if (fold)
                sum += quant_bias((double)beta * cv / alpha, (double)sc->in_scale * sn);
            double v = (double)alpha * qk_scaled(sc, sum, j);
            if (gc->c_kind && !fold)
                v += (double)beta * cv;
            want[i * n + j] = (float)v;
        }
    const int fails = qk_compare_out(gc->r.out.data, want, m * n, "Gemm", case_no);
    free(want);
    return fails;
}

/** A suite's runner of one Conv or ConvTranspose case, and how it draws its precision's fields of a case. */
typedef int (*qk_conv_run_fn)(const qk_conv_case *cc, bool transpose, uint32_t *s, int case_no);
typedef void (*qk_conv_draw_fn)(uint32_t *s, int case_no, qk_conv_case *cc);

/** Runs n random cases 0 to n - 1 (qk_random_conv_geometry, then draw) through run, drawing from s; the number
    of failures. */
static inline int qk_run_random_convs(qk_conv_run_fn run, qk_conv_draw_fn draw, bool transpose, uint32_t *s, int n)
{
    int fails = 0;
    for (int t = 0; t < n; t++) {
        qk_conv_case cc;
        qk_random_conv_geometry(s, transpose, &cc);
        draw(s, t, &cc);
        fails += run(&cc, transpose, s, t);
    }
    return fails;
}

/** Runs cases 0 to n - 1 of run, drawing from the generator s; the number of failures. */
static inline int qk_run_cases(int (*run)(uint32_t *s, int case_no), uint32_t *s, int n)
{
    int fails = 0;
    for (int t = 0; t < n; t++)
        fails += run(s, t);
    return fails;
}

/* ------------------------------------------------------------------------------------------------- */
/* MatMul */

typedef struct qk_mm_case {
    int ra, rb;
    int64_t ad[4], bd[4];
    bool act_b;
} qk_mm_case;

/** What the MatMul reference reads: codes of A and B and their zero points. */
typedef struct qk_mm_ref {
    const int32_t *a;
    int32_t a_zp;
    const int32_t *b;
    int32_t b_zp;            /* B's zero point when B is an activation, else 0 */
    const int32_t *b_col_zp; /* constant B: a zero point per column (n_b_col_zp 1 or N); NULL for none */
    int n_b_col_zp;
} qk_mm_ref;

/** MatMul by the definition (numpy matmul over right-aligned broadcast batch dims) on codes:
    acc[b, i, j] = sum over p of (a - a_zp) * (b - b_zp - b_col_zp[j]); acc holds sh->n_batch * sh->m * sh->n
    sums. */
static inline void qk_ref_matmul(const qk_mm_case *mc, const sim_matmul_shape *sh, const qk_mm_ref *r, int64_t *acc)
{
    const int rba = mc->ra > 2 ? mc->ra - 2 : 0, rbb = mc->rb > 2 ? mc->rb - 2 : 0;
    for (int64_t bi = 0; bi < sh->n_batch; bi++) {
        int64_t rem = bi, oa = 0, ob = 0, sa = 1, sb = 1;
        for (int d = sh->nb - 1; d >= 0; d--) {
            const int64_t id = rem % sh->batch[d];
            rem /= sh->batch[d];
            const int da = d - (sh->nb - rba), db = d - (sh->nb - rbb);
            if (da >= 0) {
                oa += (mc->ad[da] == 1 ? 0 : id) * sa;
                sa *= mc->ad[da];
            }
            if (db >= 0) {
                ob += (mc->bd[db] == 1 ? 0 : id) * sb;
                sb *= mc->bd[db];
            }
        }
        for (int64_t i = 0; i < sh->m; i++)
            for (int64_t j = 0; j < sh->n; j++) {
                const int64_t col_zp = r->b_col_zp ? r->b_col_zp[r->n_b_col_zp == 1 ? 0 : j] : 0;
                acc[(bi * sh->m + i) * sh->n + j] = qk_ref_dot(sh->k, r->a + (oa * sh->m + i) * sh->k, 1, r->a_zp,
                                                               r->b + ob * sh->k * sh->n + j, sh->n, r->b_zp + col_zp);
            }
    }
}

/** A MatMul case's float inputs (A the caller's to draw, B the caller's to draw or quantize) and its node. */
typedef struct qk_mm_io {
    int64_t na, nb; /* elements of A and B */
    float *a, *b;
    rd_tensor ta, tb;
    const rd_tensor *in[2]; /* the node reads its inputs through these until the end */
    qk_run r;
} qk_mm_io;

static inline void qk_mm_begin(const qk_mm_case *mc, qk_mm_io *io)
{
    memset(io, 0, sizeof *io);
    io->ta = (rd_tensor){.dtype = RD_DT_F32, .rank = mc->ra};
    io->tb = (rd_tensor){.dtype = RD_DT_F32, .rank = mc->rb};
    memcpy(io->ta.dims, mc->ad, sizeof mc->ad);
    memcpy(io->tb.dims, mc->bd, sizeof mc->bd);
    io->na = rd_tensor_numel(&io->ta);
    io->nb = rd_tensor_numel(&io->tb);
    io->ta.data = io->a = malloc((size_t)io->na * 4);
    io->tb.data = io->b = malloc((size_t)io->nb * 4);
}

/** The node parsed, inferred and allocated, once A and B hold their values. */
static inline void qk_mm_setup(qk_mm_io *io)
{
    io->in[0] = &io->ta;
    io->in[1] = &io->tb;
    CU_ASSERT_EQUAL_FATAL(qk_setup(&io->r, "MatMul", NULL, 0, io->in, 2), RD_OK);
}

/** The eval's outcome st and output against the reference on ref's codes (qk_check_sums, a channel per column);
    the number of failures. */
static inline int qk_mm_check(const qk_mm_case *mc, const qk_mm_io *io, rd_status st, const qk_mm_ref *ref,
                              const qk_scales *sc, int case_no)
{
    if (qk_eval_failed("MatMul", &io->r, st, case_no))
        return 1;
    sim_matmul_shape sh;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(sim_matmul_shape_of(&io->r.ctx, &sh, &err), RD_OK);
    const int64_t ny = sh.n_batch * sh.m * sh.n;
    int64_t *acc = malloc((size_t)ny * 8 + 8);
    qk_ref_matmul(mc, &sh, ref, acc);
    const int fails = qk_check_sums("MatMul", &io->r, acc, ny, 1, sh.n, sc, case_no);
    free(acc);
    return fails;
}

static inline void qk_mm_end(qk_mm_io *io)
{
    qk_fini(&io->r);
    free(io->a);
    free(io->b);
}

#endif
