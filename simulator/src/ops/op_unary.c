/*
 * op_unary.c: elementwise unary operators (activations, math functions, rounding, IsNaN/IsInf, Not)
 * and Clip.
 *
 * Each operator is one expression written once (with <tgmath.h>, so the same text gives a float and
 * a double function) in a function table: float32 runs a tight loop in float, float64 in double,
 * float16 through float with the result rounded once (rd_f32_to_f16). Integer inputs, where the spec
 * allows them (Abs, Neg, Sign, Relu, Clip), go through int64.
 */
#include "elem_common.h"

#include <tgmath.h>

typedef struct un_params un_params;
typedef void (*un_f32_fn)(const float *x, float *y, int64_t n, const un_params *p);
typedef double (*un_f64_fn)(double x, const un_params *p);
typedef float (*un_sf_fn)(float x, const un_params *p);
typedef int64_t (*un_int_fn)(int64_t x);

typedef struct un_desc {
    const char *name;
    int since;
    un_f32_fn vf;             /* float32 rows */
    un_sf_fn sf;              /* one float (float16 path) */
    un_f64_fn sd;             /* one double (float64 path) */
    un_int_fn si;             /* integers, NULL if the op takes floats only */
    bool is_bool_out;         /* IsNaN, IsInf: sd's result != 0 is the answer */
    float alpha, beta, gamma; /* attribute defaults */
} un_desc;

struct un_params {
    const un_desc *desc;
    float alpha, beta, gamma;
    bool tanh_approx;      /* Gelu approximate="tanh" */
    bool det_neg, det_pos; /* IsInf */
};

#define UNARY(op, EXPR)                                                          \
    static float op##_sf(float x, const un_params *p)                            \
    {                                                                            \
        typedef float T;                                                         \
        (void)sizeof(T);                                                         \
        (void)p;                                                                 \
        return EXPR;                                                             \
    }                                                                            \
    static double op##_sd(double x, const un_params *p)                          \
    {                                                                            \
        typedef double T;                                                        \
        (void)sizeof(T);                                                         \
        (void)p;                                                                 \
        return EXPR;                                                             \
    }                                                                            \
    static void op##_vf(const float *x, float *y, int64_t n, const un_params *p) \
    {                                                                            \
        for (int64_t i = 0; i < n; i++)                                          \
            y[i] = op##_sf(x[i], p);                                             \
    }

#define K(c) ((T)(c))
#define A ((T)p->alpha)
#define B ((T)p->beta)
#define G ((T)p->gamma)

static inline double softplus_d(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
static inline float softplus_f(float x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
#define SOFTPLUS(x) _Generic((x), float : softplus_f, default : softplus_d)(x)

UNARY(relu, x < 0 ? K(0) : x)
UNARY(leakyrelu, x < 0 ? A * x : x)
UNARY(sigmoid, K(1) / (K(1) + exp(-x)))
UNARY(hardsigmoid, fmax(K(0), fmin(K(1), A *x + B)))
UNARY(hardswish, x *fmax(K(0), fmin(K(1), x / K(6) + K(0.5))))
UNARY(tanh_, tanh(x))
UNARY(elu, x < 0 ? A * (exp(x) - K(1)) : x)
UNARY(selu, x <= 0 ? G * (A * exp(x) - A) : G * x)
UNARY(celu, fmax(K(0), x) + fmin(K(0), A *(exp(x / A) - K(1))))
UNARY(thresholdedrelu, x > A ? x : K(0))
UNARY(softplus, SOFTPLUS(x))
UNARY(softsign, x / (K(1) + fabs(x)))
UNARY(mish, x *tanh(SOFTPLUS(x)))
UNARY(gelu, p->tanh_approx ? K(0.5) * x *(K(1) + tanh(K(0.7978845608028654) * (x + K(0.044715) * x * x * x)))
                           : K(0.5) * x * (K(1) + erf(x * K(0.7071067811865476))))
UNARY(erf_, erf(x))
UNARY(exp_, exp(x))
UNARY(log_, log(x))
UNARY(sqrt_, sqrt(x))
UNARY(neg, -x)
UNARY(abs_, fabs(x))
UNARY(reciprocal, K(1) / x)
UNARY(floor_, floor(x))
UNARY(ceil_, ceil(x))
UNARY(round_, rint(x)) /* half to even in the default rounding mode, as the spec asks */
UNARY(sign, x > 0 ? K(1) : x < 0 ? K(-1) : x)
UNARY(sin_, sin(x))
UNARY(cos_, cos(x))
UNARY(tan_, tan(x))
UNARY(asin_, asin(x))
UNARY(acos_, acos(x))
UNARY(atan_, atan(x))
UNARY(sinh_, sinh(x))
UNARY(cosh_, cosh(x))
UNARY(asinh_, asinh(x))
UNARY(acosh_, acosh(x))
UNARY(atanh_, atanh(x))
UNARY(isnan_, isnan(x) ? K(1) : K(0))
UNARY(isinf_, isinf(x) && ((x > 0 && p->det_pos) || (x < 0 && p->det_neg)) ? K(1) : K(0))

static int64_t relu_i(int64_t x)
{
    return x < 0 ? 0 : x;
}
static int64_t neg_i(int64_t x)
{
    return (int64_t)(0 - (uint64_t)x);
}
static int64_t abs_i(int64_t x)
{
    return x < 0 ? neg_i(x) : x;
}
static int64_t sign_i(int64_t x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

#define U(nm, since_, op, ...)                                                                \
    {                                                                                         \
        .name = nm, .since = since_, .vf = op##_vf, .sf = op##_sf, .sd = op##_sd, __VA_ARGS__ \
    }
static const un_desc un_table[] = {
    U("Relu", 6, relu, .si = relu_i),
    U("LeakyRelu", 6, leakyrelu, .alpha = 0.01f),
    U("Sigmoid", 6, sigmoid),
    U("HardSigmoid", 6, hardsigmoid, .alpha = 0.2f, .beta = 0.5f),
    U("HardSwish", 14, hardswish),
    U("Tanh", 6, tanh_),
    U("Elu", 6, elu, .alpha = 1.0f),
    U("Selu", 6, selu, .alpha = 1.67326319217681884765625f, .gamma = 1.05070102214813232421875f),
    U("Celu", 12, celu, .alpha = 1.0f),
    U("ThresholdedRelu", 10, thresholdedrelu, .alpha = 1.0f),
    U("Softplus", 1, softplus),
    U("Softsign", 1, softsign),
    U("Mish", 18, mish),
    U("Gelu", 20, gelu),
    U("Erf", 9, erf_),
    U("Exp", 6, exp_),
    U("Log", 6, log_),
    U("Sqrt", 6, sqrt_),
    U("Neg", 6, neg, .si = neg_i),
    U("Abs", 6, abs_, .si = abs_i),
    U("Reciprocal", 6, reciprocal),
    U("Floor", 6, floor_),
    U("Ceil", 6, ceil_),
    U("Round", 11, round_),
    U("Sign", 9, sign, .si = sign_i),
    U("Sin", 7, sin_),
    U("Cos", 7, cos_),
    U("Tan", 7, tan_),
    U("Asin", 7, asin_),
    U("Acos", 7, acos_),
    U("Atan", 7, atan_),
    U("Sinh", 9, sinh_),
    U("Cosh", 9, cosh_),
    U("Asinh", 9, asinh_),
    U("Acosh", 9, acosh_),
    U("Atanh", 9, atanh_),
    U("IsNaN", 9, isnan_, .is_bool_out = true),
    U("IsInf", 10, isinf_, .is_bool_out = true),
};

static rd_status un_parse(const sim_node *n, void *params, rd_error *err)
{
    un_params *p = params;
    for (size_t i = 0; i < sizeof un_table / sizeof un_table[0]; i++)
        if (strcmp(un_table[i].name, n->op_type) == 0)
            p->desc = &un_table[i];
    if (!p->desc)
        return rd_errorf(err, RD_E_INVAL, "node '%s': op %s is not a unary operator", n->name, n->op_type);
    p->alpha = sim_attr_float(n, "alpha", p->desc->alpha);
    p->beta = sim_attr_float(n, "beta", p->desc->beta);
    p->gamma = sim_attr_float(n, "gamma", p->desc->gamma);
    p->det_neg = sim_attr_int(n, "detect_negative", 1) != 0;
    p->det_pos = sim_attr_int(n, "detect_positive", 1) != 0;
    const char *approx = sim_attr_str(n, "approximate", "none");
    if (strcmp(approx, "tanh") == 0)
        p->tanh_approx = true;
    else if (strcmp(approx, "none") != 0)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): approximate must be \"none\" or \"tanh\", got \"%s\"",
                         n->name, n->op_type, approx);
    if (strcmp(n->op_type, "Celu") == 0 && p->alpha == 0.0f)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (Celu): alpha must not be 0", n->name);
    return RD_OK;
}

static rd_status un_infer(sim_op_ctx *ctx, rd_error *err)
{
    const un_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    bool ok =
        x->dtype == RD_DT_F32 || x->dtype == RD_DT_F64 || x->dtype == RD_DT_F16 || (p->desc->si && ec_is_int(x->dtype));
    if (!ok)
        return sim_err_dtype(ctx, 0, err);
    sim_set_shape(&ctx->out[0], p->desc->is_bool_out ? RD_DT_BOOL : x->dtype, x->rank, x->dims);
    return RD_OK;
}

static rd_status un_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const un_params *p = ctx->params;
    const un_desc *d = p->desc;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *y = &ctx->out[0];
    int64_t n = rd_tensor_numel(x);
    if (!y->data || n == 0)
        return RD_OK;
    if (d->is_bool_out) {
        uint8_t *o = y->data;
        for (int64_t i = 0; i < n; i++)
            o[i] = d->sd(ec_ld_f64(x->data, x->dtype, i), p) != 0.0;
    } else if (x->dtype == RD_DT_F32) {
        d->vf(x->data, y->data, n, p);
    } else if (x->dtype == RD_DT_F16) {
        const uint16_t *xi = x->data;
        uint16_t *o = y->data;
        for (int64_t i = 0; i < n; i++)
            o[i] = rd_f32_to_f16(d->sf(rd_f16_to_f32(xi[i]), p));
    } else if (x->dtype == RD_DT_F64) {
        const double *xi = x->data;
        double *o = y->data;
        for (int64_t i = 0; i < n; i++)
            o[i] = d->sd(xi[i], p);
    } else {
        for (int64_t i = 0; i < n; i++)
            ec_st_i64(y->data, y->dtype, i, d->si(ec_ld_i64(x->data, x->dtype, i)));
    }
    return RD_OK;
}

/* The float32 rows of a region: the same vf as un_eval, one row per channel. */
static bool un_region(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const sim_region *r)
{
    const un_params *p = n->params;
    if (p->desc->is_bool_out || in[0]->dtype != RD_DT_F32 || out->dtype != RD_DT_F32)
        return false;
    for (int64_t c = r->c0; c < r->c1; c++) {
        const int64_t off = sim_region_offset(r, c);
        p->desc->vf((const float *)in[0]->data + off, (float *)out->data + off, r->p1 - r->p0, p);
    }
    return true;
}

/* One unary operator; the optional trailing arguments are its table traits (docs/internals/ops.md). */
#define UN_OP(sym, nm, since_, ...)                                          \
    const sim_op_def sym = {.name = nm,                                      \
                            .domain = "",                                    \
                            .since = since_,                                 \
                            .min_in = 1,                                     \
                            .max_in = 1,                                     \
                            .min_out = 1,                                    \
                            .max_out = 1,                                    \
                            .params_size = sizeof(un_params),                \
                            .parse = un_parse,                               \
                            .infer = un_infer,                               \
                            .eval = {[SIM_PREC_F32] = un_eval},              \
                            .flags = SIM_OP_ELEMENTWISE | SIM_OP_FULL_WRITE, \
                            .region_f32 = un_region,                         \
                            __VA_ARGS__};
UN_OP(op_relu, "Relu", 6, .prune = RD_OP_PRUNE_CHANNELWISE,
      .fuse = SIM_FUSE_CONV_ACT | SIM_FUSE_DECONV_ACT | SIM_FUSE_ADD_ACT)
UN_OP(op_leaky_relu, "LeakyRelu", 6, .prune = RD_OP_PRUNE_CHANNELWISE, .fuse = SIM_FUSE_CONV_ACT | SIM_FUSE_DECONV_ACT)
UN_OP(op_sigmoid, "Sigmoid", 6, .fuse = SIM_FUSE_CONV_ACT | SIM_FUSE_DECONV_ACT | SIM_FUSE_SWISH_GATE)
UN_OP(op_hard_sigmoid, "HardSigmoid", 6, .fuse = SIM_FUSE_CONV_ACT)
UN_OP(op_hard_swish, "HardSwish", 14, .prune = RD_OP_PRUNE_CHANNELWISE, .fuse = SIM_FUSE_CONV_ACT)
UN_OP(op_tanh, "Tanh", 6, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_elu, "Elu", 6, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_selu, "Selu", 6, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_celu, "Celu", 12)
UN_OP(op_thresholded_relu, "ThresholdedRelu", 10)
UN_OP(op_softplus, "Softplus", 1)
UN_OP(op_softsign, "Softsign", 1, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_mish, "Mish", 18)
UN_OP(op_gelu, "Gelu", 20, .npu_op = "exGelu", .fuse = SIM_FUSE_CONV_ACT)
UN_OP(op_erf, "Erf", 9)
UN_OP(op_exp, "Exp", 6)
UN_OP(op_log, "Log", 6)
UN_OP(op_sqrt, "Sqrt", 6)
UN_OP(op_neg, "Neg", 6, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_abs, "Abs", 6, .prune = RD_OP_PRUNE_CHANNELWISE)
UN_OP(op_reciprocal, "Reciprocal", 6)
UN_OP(op_floor, "Floor", 6)
UN_OP(op_ceil, "Ceil", 6)
UN_OP(op_round, "Round", 11)
UN_OP(op_sign, "Sign", 9)
UN_OP(op_sin, "Sin", 7)
UN_OP(op_cos, "Cos", 7)
UN_OP(op_tan, "Tan", 7)
UN_OP(op_asin, "Asin", 7)
UN_OP(op_acos, "Acos", 7)
UN_OP(op_atan, "Atan", 7)
UN_OP(op_sinh, "Sinh", 9)
UN_OP(op_cosh, "Cosh", 9)
UN_OP(op_asinh, "Asinh", 9)
UN_OP(op_acosh, "Acosh", 9)
UN_OP(op_atanh, "Atanh", 9)
UN_OP(op_isnan, "IsNaN", 9, .qrule = RD_OP_Q_NONE)
UN_OP(op_isinf, "IsInf", 10, .qrule = RD_OP_Q_NONE)

/* ---------------------------------------------------------------------------------------------------
 * Not: bool only.
 */

static rd_status not_infer(sim_op_ctx *ctx, rd_error *err)
{
    if (ctx->in[0]->dtype != RD_DT_BOOL)
        return sim_err_dtype(ctx, 0, err);
    sim_set_shape(&ctx->out[0], RD_DT_BOOL, ctx->in[0]->rank, ctx->in[0]->dims);
    return RD_OK;
}

static rd_status not_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    int64_t n = rd_tensor_numel(ctx->in[0]);
    const uint8_t *x = ctx->in[0]->data;
    uint8_t *y = ctx->out[0].data;
    for (int64_t i = 0; i < n; i++)
        y[i] = !x[i];
    return RD_OK;
}

const sim_op_def op_not = {.name = "Not",
                           .domain = "",
                           .since = 1,
                           .min_in = 1,
                           .max_in = 1,
                           .min_out = 1,
                           .max_out = 1,
                           .infer = not_infer,
                           .eval = {[SIM_PREC_F32] = not_eval},
                           .qrule = RD_OP_Q_NONE};

/* ---------------------------------------------------------------------------------------------------
 * Clip: min/max attributes before opset 11, optional scalar inputs from 11 (integers from 12).
 * y = min(max(x, lo), hi), so lo > hi gives hi everywhere (numpy.clip); NaN passes through.
 */

struct clip_params {
    float attr_min, attr_max; /* opset < 11 */
};

static rd_status clip_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct clip_params *p = params;
    p->attr_min = sim_attr_float(n, "min", -INFINITY);
    p->attr_max = sim_attr_float(n, "max", INFINITY);
    return RD_OK;
}

static rd_status clip_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    if (!(x->dtype == RD_DT_F32 || x->dtype == RD_DT_F64 || x->dtype == RD_DT_F16 || ec_is_int(x->dtype)))
        return sim_err_dtype(ctx, 0, err);
    for (int k = 1; k < 3 && k < ctx->n_in; k++) {
        const rd_tensor *b = ctx->in[k];
        if (!b)
            continue;
        if (b->dtype != x->dtype)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (Clip): input %d is %s but input 0 is %s", ctx->node->name, k,
                             rd_dtype_name(b->dtype), rd_dtype_name(x->dtype));
        if (rd_tensor_numel(b) != 1)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (Clip): input %d must be a scalar, it has %lld elements",
                             ctx->node->name, k, (long long)rd_tensor_numel(b));
    }
    sim_set_shape(&ctx->out[0], x->dtype, x->rank, x->dims);
    return RD_OK;
}

/* The bounds of a float Clip: its attributes before opset 11, its optional inputs from 11. */
static void clip_bounds(const struct clip_params *p, int opset, const rd_tensor *tmin, const rd_tensor *tmax,
                        rd_dtype dt, double *lo, double *hi)
{
    *lo = p->attr_min;
    *hi = p->attr_max;
    if (opset >= 11) {
        *lo = tmin ? ec_ld_f64(tmin->data, dt, 0) : -INFINITY;
        *hi = tmax ? ec_ld_f64(tmax->data, dt, 0) : INFINITY;
    }
}

static void clip_row_f32(const float *x, float *y, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

/* A float32 Clip's region: the rows of clip_eval, the bounds read once. */
static bool clip_region(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const sim_region *r)
{
    if (in[0]->dtype != RD_DT_F32 || out->dtype != RD_DT_F32)
        return false;
    double lo, hi;
    clip_bounds(n->params, n->opset, n->n_in > 1 ? in[1] : NULL, n->n_in > 2 ? in[2] : NULL, RD_DT_F32, &lo, &hi);
    for (int64_t c = r->c0; c < r->c1; c++) {
        const int64_t off = sim_region_offset(r, c);
        clip_row_f32((const float *)in[0]->data + off, (float *)out->data + off, r->p1 - r->p0, (float)lo, (float)hi);
    }
    return true;
}

static rd_status clip_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct clip_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    const rd_tensor *tmin = ctx->n_in > 1 ? ctx->in[1] : NULL, *tmax = ctx->n_in > 2 ? ctx->in[2] : NULL;
    int64_t n = rd_tensor_numel(x);
    if (n == 0)
        return RD_OK;
    if (ec_is_int(x->dtype)) {
        int64_t lo = tmin ? ec_ld_i64(tmin->data, x->dtype, 0) : INT64_MIN;
        int64_t hi = tmax ? ec_ld_i64(tmax->data, x->dtype, 0) : INT64_MAX;
        bool uns = x->dtype == RD_DT_U64;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ec_ld_i64(x->data, x->dtype, i);
            if (uns) { /* compare as unsigned */
                if (tmin && (uint64_t)v < (uint64_t)lo)
                    v = lo;
                if (tmax && (uint64_t)v > (uint64_t)hi)
                    v = hi;
            } else {
                v = v < lo ? lo : v;
                v = v > hi ? hi : v;
            }
            ec_st_i64(ctx->out[0].data, x->dtype, i, v);
        }
        return RD_OK;
    }
    double lo, hi;
    clip_bounds(p, ctx->opset, tmin, tmax, x->dtype, &lo, &hi);
    if (x->dtype == RD_DT_F32) {
        clip_row_f32(x->data, ctx->out[0].data, n, (float)lo, (float)hi);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = ec_ld_f64(x->data, x->dtype, i);
            v = v < lo ? lo : v;
            ec_st_f64(ctx->out[0].data, x->dtype, i, v > hi ? hi : v);
        }
    }
    return RD_OK;
}

const sim_op_def op_clip = {.name = "Clip",
                            .domain = "",
                            .since = 6,
                            .min_in = 1,
                            .max_in = 3,
                            .min_out = 1,
                            .max_out = 1,
                            .params_size = sizeof(struct clip_params),
                            .parse = clip_parse,
                            .infer = clip_infer,
                            .eval = {[SIM_PREC_F32] = clip_eval},
                            .flags = SIM_OP_ELEMENTWISE | SIM_OP_FULL_WRITE,
                            .region_f32 = clip_region,
                            .prune = RD_OP_PRUNE_CHANNELWISE_BOUNDED,
                            .fuse = SIM_FUSE_CONV_ACT,
                            .same_from = 11};
