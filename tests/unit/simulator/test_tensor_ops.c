/*
 * test_tensor_ops.c: the tensor operator family (ops/op_tensor_*.c) on hand-computed cases, driven
 * directly through sim_op_def parse/infer/eval as the executor does, including malformed index data
 * that must fail with a clear RD_E_INVAL naming the node.
 */
#include "rd_test.h"
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#define MAX_T 6

/* A hand-built node with up to 4 attributes and its run state. */
typedef struct op_run {
    sim_node node;
    sim_attr attrs[4];
    char params[512];
    const rd_tensor *in[MAX_T];
    rd_tensor out[MAX_T];
    bool present[MAX_T];
    sim_scratch scratch;
    sim_op_ctx ctx;
    rd_error err;
} op_run;

static void run_initv(op_run *r, const char *op, int opset, int n_in, int n_out, va_list ap)
{
    memset(r, 0, sizeof *r);
    for (int k = 0; k < n_in; k++)
        r->in[k] = va_arg(ap, const rd_tensor *);
    r->node.name = "n0";
    r->node.op_type = (char *)op;
    r->node.domain = "";
    r->node.opset = opset;
    r->node.n_in = n_in;
    r->node.n_out = n_out;
    r->node.attrs = r->attrs;
    for (int k = 0; k < MAX_T; k++)
        r->present[k] = true;
}

/* Starts a run of op with its n_in inputs (const rd_tensor *, in order; NULL for an absent optional one). */
static void run_init(op_run *r, const char *op, int opset, int n_in, int n_out, ...)
{
    va_list ap;
    va_start(ap, n_out);
    run_initv(r, op, opset, n_in, n_out, ap);
    va_end(ap);
}

static void attr_int(op_run *r, const char *name, int64_t v)
{
    sim_attr *a = &r->attrs[r->node.n_attr++];
    a->name = (char *)name;
    a->type = SIM_ATTR_INT;
    a->i = v;
}

static void attr_ints(op_run *r, const char *name, int64_t *v, size_t n)
{
    sim_attr *a = &r->attrs[r->node.n_attr++];
    a->name = (char *)name;
    a->type = SIM_ATTR_INTS;
    a->ints = v;
    a->n_ints = n;
}

static void attr_str(op_run *r, const char *name, const char *s)
{
    sim_attr *a = &r->attrs[r->node.n_attr++];
    a->name = (char *)name;
    a->type = SIM_ATTR_STRING;
    a->s = (char *)s;
    a->s_len = strlen(s);
}

/* Parses, infers and evaluates like the executor; returns the first failing status. */
static rd_status run(op_run *r)
{
    const sim_op_def *def = sim_op_find("", r->node.op_type);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    CU_ASSERT_FATAL(def->params_size <= sizeof r->params);
    r->node.def = def;
    if (def->parse) {
        rd_status st = def->parse(&r->node, r->params, &r->err);
        if (st != RD_OK)
            return st;
    }
    r->ctx = (sim_op_ctx){.node = &r->node,
                          .params = r->params,
                          .opset = r->node.opset,
                          .n_in = r->node.n_in,
                          .in = r->in,
                          .n_out = r->node.n_out,
                          .out = r->out,
                          .out_present = r->present,
                          .scratch = &r->scratch};
    rd_status st = def->infer(&r->ctx, &r->err);
    if (st != RD_OK || r->ctx.deferred) /* deferred: the shape waits for run time (callers read r->ctx) */
        return st;
    for (int k = 0; k < r->node.n_out; k++) {
        if (!r->present[k])
            continue;
        rd_tensor shape = r->out[k];
        st = rd_tensor_alloc(&r->out[k], shape.dtype, shape.rank, shape.dims, &r->err);
        if (st != RD_OK)
            return st;
    }
    return def->eval[SIM_PREC_F32](&r->ctx, &r->err);
}

static void run_fini(op_run *r)
{
    for (int k = 0; k < MAX_T; k++)
        rd_tensor_fini(&r->out[k]);
    sim_scratch_fini(&r->scratch);
}

/* One run of op without attributes, as run_init takes it: its status, with what it allocated freed. */
static rd_status run_status(const char *op, int opset, int n_in, int n_out, ...)
{
    op_run r;
    va_list ap;
    va_start(ap, n_out);
    run_initv(&r, op, opset, n_in, n_out, ap);
    va_end(ap);
    rd_status st = run(&r);
    run_fini(&r);
    return st;
}

/* A tensor view over caller data. */
static rd_tensor tens(rd_dtype dt, int rank, const int64_t *dims, void *data)
{
    rd_tensor t = {.dtype = dt, .rank = rank, .data = data};
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    return t;
}

static void test_reshape(void)
{
    op_run r;
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i;
    int64_t xd[3] = {2, 3, 4}, sd[1] = {3}, shape[3] = {0, -1, 2};
    rd_tensor tx = tens(RD_DT_F32, 3, xd, x), ts = tens(RD_DT_I64, 1, sd, shape);
    run_init(&r, "Reshape", 14, 2, 1, &tx, &ts);
    CU_ASSERT_EQUAL(run(&r), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].rank, 3);
    CU_ASSERT_EQUAL(r.out[0].dims[0], 2);
    CU_ASSERT_EQUAL(r.out[0].dims[1], 6);
    CU_ASSERT_EQUAL(r.out[0].dims[2], 2);
    CU_ASSERT_EQUAL(((float *)r.out[0].data)[23], 23.0f);
    run_fini(&r);

    int64_t bad[3] = {-1, -1, 2};
    ts.data = bad;
    run_init(&r, "Reshape", 14, 2, 1, &tx, &ts);
    CU_ASSERT_EQUAL(run(&r), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "node 'n0' (Reshape)"));
    run_fini(&r);

    /* allowzero: a literal 0 with 24 elements cannot fit */
    int64_t zero[3] = {0, 6, 4};
    ts.data = zero;
    run_init(&r, "Reshape", 14, 2, 1, &tx, &ts);
    attr_int(&r, "allowzero", 1);
    CU_ASSERT_EQUAL(run(&r), RD_E_INVAL);
    run_fini(&r);

    /* unknown shape data at load time defers */
    ts.data = NULL;
    run_init(&r, "Reshape", 14, 2, 1, &tx, &ts);
    CU_ASSERT_EQUAL(run(&r), RD_OK);
    CU_ASSERT_TRUE(r.ctx.deferred);
    run_fini(&r);
}

static void test_slice_negative_steps(void)
{
    op_run r;
    int32_t x[10];
    for (int i = 0; i < 10; i++)
        x[i] = i;
    int64_t xd[1] = {10}, one[1] = {1};
    int64_t starts[1] = {-1}, ends[1] = {INT64_MIN}, steps[1] = {-3}, axes[1] = {-1};
    rd_tensor tx = tens(RD_DT_I32, 1, xd, x), ts = tens(RD_DT_I64, 1, one, starts), te = tens(RD_DT_I64, 1, one, ends),
              ta = tens(RD_DT_I64, 1, one, axes), tp = tens(RD_DT_I64, 1, one, steps);
    run_init(&r, "Slice", 13, 5, 1, &tx, &ts, &te, &ta, &tp);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    CU_ASSERT_EQUAL_FATAL(r.out[0].dims[0], 4);
    int32_t *o = r.out[0].data;
    CU_ASSERT(o[0] == 9 && o[1] == 6 && o[2] == 3 && o[3] == 0);
    run_fini(&r);

    /* clamped starts past the end give an empty slice */
    starts[0] = 100;
    ends[0] = 200;
    steps[0] = 1;
    run_init(&r, "Slice", 13, 5, 1, &tx, &ts, &te, &ta, &tp);
    CU_ASSERT_EQUAL(run(&r), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dims[0], 0);
    run_fini(&r);

    steps[0] = 0;
    CU_ASSERT_EQUAL(run_status("Slice", 13, 5, 1, &tx, &ts, &te, &ta, &tp), RD_E_INVAL);
}

static void test_gather_bounds(void)
{
    op_run r;
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {3, 2}, id[1] = {2}, idx[2] = {-1, 0};
    rd_tensor tx = tens(RD_DT_F32, 2, xd, x), ti = tens(RD_DT_I64, 1, id, idx);
    run_init(&r, "Gather", 13, 2, 1, &tx, &ti);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    float *o = r.out[0].data;
    CU_ASSERT(o[0] == 5 && o[1] == 6 && o[2] == 1 && o[3] == 2);
    run_fini(&r);

    idx[0] = 3;
    run_init(&r, "Gather", 13, 2, 1, &tx, &ti);
    CU_ASSERT_EQUAL(run(&r), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "index 3"));
    run_fini(&r);

    /* GatherElements with an index past the axis */
    int64_t ge[6] = {0, 1, 2, 0, 1, 5};
    rd_tensor tg = tens(RD_DT_I64, 2, xd, ge);
    CU_ASSERT_EQUAL(run_status("GatherElements", 13, 2, 1, &tx, &tg), RD_E_INVAL);
}

static void test_pad_modes(void)
{
    static const struct {
        const char *mode;
        int64_t pads[2];
        int n;
        float want[8];
    } cases[] = {
        {"reflect", {2, 2}, 7, {3, 2, 1, 2, 3, 2, 1}},
        {"edge", {2, 2}, 7, {1, 1, 1, 2, 3, 3, 3}},
        {"wrap", {2, 2}, 7, {2, 3, 1, 2, 3, 1, 2}},
        {"constant", {1, -2}, 2, {0, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        op_run r;
        float x[3] = {1, 2, 3};
        int64_t xd[1] = {3}, pd[1] = {2}, pads[2] = {cases[c].pads[0], cases[c].pads[1]};
        rd_tensor tx = tens(RD_DT_F32, 1, xd, x), tp = tens(RD_DT_I64, 1, pd, pads);
        run_init(&r, "Pad", 19, 2, 1, &tx, &tp);
        attr_str(&r, "mode", cases[c].mode);
        CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
        CU_ASSERT_EQUAL_FATAL(r.out[0].dims[0], cases[c].n);
        CU_ASSERT_EQUAL(memcmp(r.out[0].data, cases[c].want, (size_t)cases[c].n * sizeof(float)), 0);
        run_fini(&r);
    }
    /* pads that crop past the axis are rejected */
    float x[3] = {1, 2, 3};
    int64_t xd[1] = {3}, pd[1] = {2}, pads[2] = {-2, -2};
    rd_tensor tx = tens(RD_DT_F32, 1, xd, x), tp = tens(RD_DT_I64, 1, pd, pads);
    CU_ASSERT_EQUAL(run_status("Pad", 13, 2, 1, &tx, &tp), RD_E_INVAL);
}

static void test_split_uneven(void)
{
    op_run r;
    uint8_t x[7] = {0, 1, 2, 3, 4, 5, 6};
    int64_t xd[1] = {7};
    rd_tensor tx = tens(RD_DT_U8, 1, xd, x);
    run_init(&r, "Split", 18, 1, 3, &tx);
    attr_int(&r, "num_outputs", 3);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    CU_ASSERT(r.out[0].dims[0] == 3 && r.out[1].dims[0] == 3 && r.out[2].dims[0] == 1);
    CU_ASSERT_EQUAL(((uint8_t *)r.out[2].data)[0], 6);
    CU_ASSERT_EQUAL(((uint8_t *)r.out[1].data)[0], 3);
    run_fini(&r);

    /* before 18 the parts must be equal */
    CU_ASSERT_EQUAL(run_status("Split", 13, 1, 3, &tx), RD_E_INVAL);
}

static void test_topk_ties(void)
{
    op_run r;
    float x[4] = {1, 3, 3, 2};
    int64_t xd[1] = {4}, kd[1] = {1}, k[1] = {2};
    rd_tensor tx = tens(RD_DT_F32, 1, xd, x), tk = tens(RD_DT_I64, 1, kd, k);
    run_init(&r, "TopK", 11, 2, 2, &tx, &tk);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    int64_t *ix = r.out[1].data;
    CU_ASSERT(ix[0] == 1 && ix[1] == 2);
    run_fini(&r);

    run_init(&r, "TopK", 11, 2, 2, &tx, &tk);
    attr_int(&r, "largest", 0);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    ix = r.out[1].data;
    float *v = r.out[0].data;
    CU_ASSERT(ix[0] == 0 && ix[1] == 3 && v[0] == 1 && v[1] == 2);
    run_fini(&r);

    k[0] = 5;
    CU_ASSERT_EQUAL(run_status("TopK", 11, 2, 2, &tx, &tk), RD_E_INVAL);
}

static void test_transpose_tile_expand(void)
{
    op_run r;
    int8_t x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {2, 3};
    rd_tensor tx = tens(RD_DT_I8, 2, xd, x);
    run_init(&r, "Transpose", 13, 1, 1, &tx);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    int8_t want_t[6] = {1, 4, 2, 5, 3, 6};
    CU_ASSERT(r.out[0].dims[0] == 3 && memcmp(r.out[0].data, want_t, 6) == 0);
    run_fini(&r);

    int64_t rd_[1] = {2}, rep[2] = {1, 2};
    rd_tensor trep = tens(RD_DT_I64, 1, rd_, rep);
    run_init(&r, "Tile", 13, 2, 1, &tx, &trep);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    int8_t want_tile[12] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
    CU_ASSERT(r.out[0].dims[1] == 6 && memcmp(r.out[0].data, want_tile, 12) == 0);
    run_fini(&r);

    /* an absurd Expand shape fails before anything is allocated */
    int64_t sd[1] = {4}, shape[4] = {1 << 30, 1 << 30, 2, 3};
    rd_tensor ts = tens(RD_DT_I64, 1, sd, shape);
    run_init(&r, "Expand", 13, 2, 1, &tx, &ts);
    CU_ASSERT_EQUAL(run(&r), RD_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "Expand"));
    run_fini(&r);
}

static void test_depth_to_space_crd(void)
{
    op_run r;
    float x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (float)i;
    int64_t xd[4] = {1, 8, 1, 1};
    rd_tensor tx = tens(RD_DT_F32, 4, xd, x);
    run_init(&r, "DepthToSpace", 13, 1, 1, &tx);
    attr_int(&r, "blocksize", 2);
    attr_str(&r, "mode", "CRD");
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    /* CRD: channel c*4 + i*2 + j goes to (c, i, j) */
    float *o = r.out[0].data;
    CU_ASSERT(r.out[0].dims[1] == 2 && r.out[0].dims[2] == 2 && o[0] == 0 && o[1] == 1 && o[2] == 2 && o[4] == 4);
    run_fini(&r);
}

static void test_range_and_shape(void)
{
    op_run r;
    int32_t s = 10, l = 4, d = -3, zero = 0;
    rd_tensor ts = tens(RD_DT_I32, 0, NULL, &s), tl = tens(RD_DT_I32, 0, NULL, &l), td = tens(RD_DT_I32, 0, NULL, &d);
    run_init(&r, "Range", 11, 3, 1, &ts, &tl, &td);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    int32_t *o = r.out[0].data;
    CU_ASSERT(r.out[0].dims[0] == 2 && o[0] == 10 && o[1] == 7);
    run_fini(&r);

    td.data = &zero;
    CU_ASSERT_EQUAL(run_status("Range", 11, 3, 1, &ts, &tl, &td), RD_E_INVAL);

    int64_t xd[4] = {2, 3, 4, 5};
    rd_tensor tx = tens(RD_DT_F32, 4, xd, NULL); /* Shape needs no data */
    run_init(&r, "Shape", 15, 1, 1, &tx);
    attr_int(&r, "start", -3);
    attr_int(&r, "end", -1);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    int64_t *sh = r.out[0].data;
    CU_ASSERT(r.out[0].dims[0] == 2 && sh[0] == 3 && sh[1] == 4);
    CU_ASSERT(sim_op_find("", "Shape")->flags & SIM_OP_SHAPE_ONLY);
    run_fini(&r);
}

static void test_resize(void)
{
    op_run r;
    /* linear, half_pixel, 1-D x2: [1, 2] -> [1, 1.25, 1.75, 2] */
    float x[2] = {1, 2}, sc[1] = {2};
    int64_t xd[1] = {2}, sd[1] = {1};
    rd_tensor tx = tens(RD_DT_F32, 1, xd, x), tsc = tens(RD_DT_F32, 1, sd, sc);
    run_init(&r, "Resize", 13, 3, 1, &tx, NULL, &tsc);
    attr_str(&r, "mode", "linear");
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    float *o = r.out[0].data;
    CU_ASSERT(r.out[0].dims[0] == 4 && o[0] == 1.0f && o[1] == 1.25f && o[2] == 1.75f && o[3] == 2.0f);
    run_fini(&r);

    /* nearest with sizes and keep_aspect_ratio_policy not_larger (18): 2x4 -> at most 4x4 -> 2x4 scale 1 */
    float y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t yd[2] = {2, 4}, zd[1] = {2}, sizes[2] = {4, 4};
    rd_tensor ty = tens(RD_DT_F32, 2, yd, y), tsz = tens(RD_DT_I64, 1, zd, sizes);
    run_init(&r, "Resize", 18, 4, 1, &ty, NULL, NULL, &tsz);
    attr_str(&r, "keep_aspect_ratio_policy", "not_larger");
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    CU_ASSERT(r.out[0].dims[0] == 2 && r.out[0].dims[1] == 4);
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, y, sizeof y), 0);
    run_fini(&r);

    /* both scales and sizes: rejected */
    float sc2[2] = {2, 2};
    rd_tensor tsc2 = tens(RD_DT_F32, 1, zd, sc2);
    CU_ASSERT_EQUAL(run_status("Resize", 13, 4, 1, &ty, NULL, &tsc2, &tsz), RD_E_INVAL);

    /* linear on integers is not claimed */
    int32_t iy[8] = {0};
    rd_tensor tiy = tens(RD_DT_I32, 2, yd, iy);
    run_init(&r, "Resize", 13, 3, 1, &tiy, NULL, &tsc2);
    attr_str(&r, "mode", "linear");
    CU_ASSERT_EQUAL(run(&r), RD_E_UNSUPPORTED);
    run_fini(&r);

    /* Upsample-7: nearest floors: [1, 2] x3 -> [1, 1, 1, 2, 2, 2] */
    sim_attr scales_attr = {.name = "scales", .type = SIM_ATTR_FLOATS, .floats = sc, .n_floats = 1};
    float three = 3;
    scales_attr.floats = &three;
    run_init(&r, "Upsample", 7, 1, 1, &tx);
    r.attrs[r.node.n_attr++] = scales_attr;
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    o = r.out[0].data;
    CU_ASSERT(r.out[0].dims[0] == 6 && o[2] == 1 && o[3] == 2);
    run_fini(&r);
}

static void test_unsqueeze_squeeze(void)
{
    op_run r;
    float x[3] = {1, 2, 3};
    int64_t xd[1] = {3}, axes[2] = {0, -1};
    rd_tensor tx = tens(RD_DT_F32, 1, xd, x);
    run_init(&r, "Unsqueeze", 11, 1, 1, &tx);
    attr_ints(&r, "axes", axes, 2);
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    CU_ASSERT(r.out[0].rank == 3 && r.out[0].dims[0] == 1 && r.out[0].dims[1] == 3 && r.out[0].dims[2] == 1);
    run_fini(&r);

    int64_t sq[1] = {0};
    run_init(&r, "Squeeze", 11, 1, 1, &tx);
    attr_ints(&r, "axes", sq, 1);
    CU_ASSERT_EQUAL(run(&r), RD_E_INVAL); /* axis 0 has size 3 */
    run_fini(&r);
}

static void test_einsum(void)
{
    op_run r;
    /* implicit output of "ij,jk" is "ik": a matrix product */
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    int64_t d[2] = {2, 2};
    rd_tensor ta = tens(RD_DT_F32, 2, d, a), tb = tens(RD_DT_F32, 2, d, b);
    run_init(&r, "Einsum", 12, 2, 1, &ta, &tb);
    attr_str(&r, "equation", "ij,jk");
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    float *o = r.out[0].data;
    CU_ASSERT(o[0] == 19 && o[1] == 22 && o[2] == 43 && o[3] == 50);
    run_fini(&r);

    /* trace through a repeated label */
    run_init(&r, "Einsum", 12, 1, 1, &ta);
    attr_str(&r, "equation", "ii->");
    CU_ASSERT_EQUAL_FATAL(run(&r), RD_OK);
    CU_ASSERT_EQUAL(((float *)r.out[0].data)[0], 5.0f);
    run_fini(&r);

    /* more labels than the operand has dims */
    run_init(&r, "Einsum", 12, 1, 1, &ta);
    attr_str(&r, "equation", "ijk->i");
    CU_ASSERT_EQUAL(run(&r), RD_E_INVAL);
    run_fini(&r);
}

RD_TEST_REGISTER(register_tensor_ops)
{
    RD_SUITE("tensor_ops", {"reshape", test_reshape}, {"slice negative steps", test_slice_negative_steps},
             {"gather bounds", test_gather_bounds}, {"pad modes", test_pad_modes}, {"split uneven", test_split_uneven},
             {"topk ties", test_topk_ties}, {"transpose tile expand", test_transpose_tile_expand},
             {"depth to space crd", test_depth_to_space_crd}, {"range and shape", test_range_and_shape},
             {"resize", test_resize}, {"unsqueeze squeeze", test_unsqueeze_squeeze}, {"einsum", test_einsum});
}
