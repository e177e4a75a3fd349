/*
 * op_binary.c: numpy-broadcasting binary operators (Add, Sub, Mul, Div, Mod, Pow, PRelu, comparisons,
 * logical And/Or/Xor), the variadic Max, Min, Sum and Mean, and Where.
 *
 * One function table per operator gives a row kernel per dtype (onnx2c elementwise.h style); a
 * broadcast plan (kernels/broadcast.h) walks the output and calls the kernel per innermost row, with
 * separate loops for the same-shape and scalar-operand cases so that float32 rows vectorise.
 * Arithmetic: float32 in float, float64 in double, float16 in float rounded once per result
 * (rd_f32_to_f16), integers in 64-bit with wrap-around (as numpy); integer division and modulo by 0
 * give 0 instead of trapping. Single-threaded, so results do not depend on the thread count.
 */
#include "../kernels/broadcast.h"
#include "elem_common.h"

#include <math.h>

typedef struct bin_aux {
    rd_dtype ta, tb, ty;
    bool fmod; /* Mod: C fmod (sign of the dividend) instead of Python's sign of the divisor */
} bin_aux;

/* y[i] = f(a[i*sa], b[i*sb]) for i < n; sa and sb are 0 (broadcast) or 1. y may alias a. */
typedef void (*bin_row_fn)(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                           const bin_aux *aux);

#define ID(v) (v)
#define TO_BOOL(v) ((uint8_t)((v) ? 1 : 0))

#define DEF_ROW(fname, T, C, TY, LD, ST, EXPR)                                                                         \
    static void fname(int64_t n, const void *pa, int64_t sa, const void *pb, int64_t sb, void *py, const bin_aux *aux) \
    {                                                                                                                  \
        const T *a = pa;                                                                                               \
        const T *b = pb;                                                                                               \
        TY *y = py;                                                                                                    \
        (void)aux;                                                                                                     \
        if (sa && sb) {                                                                                                \
            for (int64_t i = 0; i < n; i++) {                                                                          \
                C x = LD(a[i]), w = LD(b[i]);                                                                          \
                y[i] = ST(EXPR);                                                                                       \
            }                                                                                                          \
        } else if (sa) {                                                                                               \
            C w = LD(b[0]);                                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                                          \
                C x = LD(a[i]);                                                                                        \
                y[i] = ST(EXPR);                                                                                       \
            }                                                                                                          \
        } else if (sb) {                                                                                               \
            C x = LD(a[0]);                                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                                          \
                C w = LD(b[i]);                                                                                        \
                y[i] = ST(EXPR);                                                                                       \
            }                                                                                                          \
        } else {                                                                                                       \
            C x = LD(a[0]), w = LD(b[0]);                                                                              \
            TY r = ST(EXPR);                                                                                           \
            for (int64_t i = 0; i < n; i++)                                                                            \
                y[i] = r;                                                                                              \
        }                                                                                                              \
    }

/* Float kinds: f32 and f64 compute in their own type, f16 through float. */
#define DEF_F(op, EXPR)                                     \
    DEF_ROW(op##_f32, float, float, float, ID, ID, EXPR)    \
    DEF_ROW(op##_f64, double, double, double, ID, ID, EXPR) \
    DEF_ROW(op##_f16, uint16_t, float, uint16_t, rd_f16_to_f32, rd_f32_to_f16, EXPR)
#define DEF_CMP_F(op, EXPR)                                       \
    DEF_ROW(op##_f32, float, float, uint8_t, ID, TO_BOOL, EXPR)   \
    DEF_ROW(op##_f64, double, double, uint8_t, ID, TO_BOOL, EXPR) \
    DEF_ROW(op##_f16, uint16_t, float, uint8_t, rd_f16_to_f32, TO_BOOL, EXPR)
/* Integer kinds compute in int64_t (signed) or uint64_t (unsigned); stores wrap. */
#define DEF_I_(op, EXPR, TY_S, TY_U, ST)                                \
    DEF_ROW(op##_i8, int8_t, int64_t, TY_S(int8_t), ID, ST, EXPR)       \
    DEF_ROW(op##_i16, int16_t, int64_t, TY_S(int16_t), ID, ST, EXPR)    \
    DEF_ROW(op##_i32, int32_t, int64_t, TY_S(int32_t), ID, ST, EXPR)    \
    DEF_ROW(op##_i64, int64_t, int64_t, TY_S(int64_t), ID, ST, EXPR)    \
    DEF_ROW(op##_u8, uint8_t, uint64_t, TY_U(uint8_t), ID, ST, EXPR)    \
    DEF_ROW(op##_u16, uint16_t, uint64_t, TY_U(uint16_t), ID, ST, EXPR) \
    DEF_ROW(op##_u32, uint32_t, uint64_t, TY_U(uint32_t), ID, ST, EXPR) \
    DEF_ROW(op##_u64, uint64_t, uint64_t, TY_U(uint64_t), ID, ST, EXPR)
#define SAME_T(t) t
#define BOOL_T(t) uint8_t
#define DEF_I(op, EXPR) DEF_I_(op, EXPR, SAME_T, SAME_T, ID)
#define DEF_CMP_I(op, EXPR) DEF_I_(op, EXPR, BOOL_T, BOOL_T, TO_BOOL)

#define TBL_F(op) [RD_DT_F32] = op##_f32, [RD_DT_F64] = op##_f64, [RD_DT_F16] = op##_f16
#define TBL_I(op)                                                                                 \
    [RD_DT_I8] = op##_i8, [RD_DT_I16] = op##_i16, [RD_DT_I32] = op##_i32, [RD_DT_I64] = op##_i64, \
    [RD_DT_U8] = op##_u8, [RD_DT_U16] = op##_u16, [RD_DT_U32] = op##_u32, [RD_DT_U64] = op##_u64

/* Integer helpers: wrap-around add/sub/mul, and division/modulo that never trap. */
#define WRAP(x, op, w) _Generic((x), int64_t : (int64_t)((uint64_t)(x)op(uint64_t)(w)), default : (x)op(w))
static inline int64_t sdiv(int64_t x, int64_t w)
{
    return w == 0 ? 0 : w == -1 ? (int64_t)(0 - (uint64_t)x) : x / w;
}
static inline uint64_t udiv(uint64_t x, uint64_t w)
{
    return w == 0 ? 0 : x / w;
}
static inline int64_t smod(int64_t x, int64_t w, bool c_fmod)
{
    if (w == 0 || w == -1)
        return 0;
    int64_t r = x % w;
    if (!c_fmod && r != 0 && ((r < 0) != (w < 0)))
        r += w;
    return r;
}
static inline uint64_t umod(uint64_t x, uint64_t w, bool c_fmod)
{
    (void)c_fmod;
    return w == 0 ? 0 : x % w;
}
#define IDIV(x, w) _Generic((x), int64_t : sdiv, default : udiv)(x, w)
#define IMOD(x, w, f) _Generic((x), int64_t : smod, default : umod)(x, w, f)
#define FMOD_(x, w) _Generic((x), float : fmodf, default : fmod)(x, w)
#define FPOW(x, w) _Generic((x), float : powf, default : pow)(x, w)
/* Python-style float modulo (numpy.mod) unless fmod: result takes the divisor's sign. */
#define PYMOD(x, w) _Generic((x), float : pymodf, default : pymod)(x, w)
static inline float pymodf(float x, float w)
{
    float r = fmodf(x, w);
    return r != 0 && ((r < 0) != (w < 0)) ? r + w : r;
}
static inline double pymod(double x, double w)
{
    double r = fmod(x, w);
    return r != 0 && ((r < 0) != (w < 0)) ? r + w : r;
}
/* numpy.maximum/minimum: a NaN operand gives NaN. */
#define FMAX(x, w) ((x) >= (w) || (x) != (x) ? (x) : (w))
#define FMIN(x, w) ((x) <= (w) || (x) != (x) ? (x) : (w))

DEF_F(add, x + w)
DEF_I(add, WRAP(x, +, w))
DEF_F(sub, x - w)
DEF_I(sub, WRAP(x, -, w))
DEF_F(mul, x *w)
DEF_I(mul, WRAP(x, *, w))
DEF_F(div, x / w)
DEF_I(div, IDIV(x, w))
DEF_F(mod, aux->fmod ? FMOD_(x, w) : PYMOD(x, w))
DEF_I(mod, IMOD(x, w, aux->fmod))
DEF_F(max, FMAX(x, w))
DEF_I(max, x > w ? x : w)
DEF_F(min, FMIN(x, w))
DEF_I(min, x < w ? x : w)
DEF_F(pow, FPOW(x, w))
DEF_F(prelu, x < 0 ? x * w : x)
DEF_ROW(prelu_i8, int8_t, int64_t, int8_t, ID, ID, x < 0 ? x * w : x)
DEF_ROW(prelu_i16, int16_t, int64_t, int16_t, ID, ID, x < 0 ? x * w : x)
DEF_ROW(prelu_i32, int32_t, int64_t, int32_t, ID, ID, x < 0 ? x * w : x)
DEF_ROW(prelu_i64, int64_t, int64_t, int64_t, ID, ID, x < 0 ? WRAP(x, *, w) : x)
DEF_CMP_F(eq, x == w)
DEF_CMP_I(eq, x == w)
DEF_CMP_F(gt, x > w)
DEF_CMP_I(gt, x > w)
DEF_CMP_F(ge, x >= w)
DEF_CMP_I(ge, x >= w)
DEF_CMP_F(lt, x < w)
DEF_CMP_I(lt, x < w)
DEF_CMP_F(le, x <= w)
DEF_CMP_I(le, x <= w)
DEF_ROW(eq_b, uint8_t, int, uint8_t, ID, TO_BOOL, (x != 0) == (w != 0))
DEF_ROW(and_b, uint8_t, int, uint8_t, ID, TO_BOOL, x &&w)
DEF_ROW(or_b, uint8_t, int, uint8_t, ID, TO_BOOL, x || w)
DEF_ROW(xor_b, uint8_t, int, uint8_t, ID, TO_BOOL, (x != 0) != (w != 0))

/* Pow with base and exponent of any numeric dtypes (opset 12+): through double, result in the
 * base's dtype (integers truncate, as numpy's power followed by astype). */
static void pow_mixed(int64_t n, const void *a, int64_t sa, const void *b, int64_t sb, void *y, const bin_aux *aux)
{
    for (int64_t i = 0; i < n; i++) {
        double v = pow(ec_ld_f64(a, aux->ta, i * sa), ec_ld_f64(b, aux->tb, i * sb));
        ec_st_f64(y, aux->ty, i, v);
    }
}

typedef enum bin_kind {
    BK_ARITH,    /* output dtype = input dtype, both inputs the same dtype */
    BK_COMPARE,  /* output bool */
    BK_LOGIC,    /* bool in, bool out */
    BK_POW,      /* mixed dtypes allowed */
    BK_PRELU,    /* slope broadcasts to X (unidirectional) */
    BK_VARIADIC, /* Max, Min, Sum, Mean: 1..N inputs */
    BK_MEAN,
} bin_kind;

typedef struct bin_desc {
    const char *name;
    bin_kind kind;
    bin_row_fn rows[RD_DT_COUNT];
} bin_desc;

static const bin_desc bin_table[] = {
    {"Add", BK_ARITH, {TBL_F(add), TBL_I(add)}},
    {"Sub", BK_ARITH, {TBL_F(sub), TBL_I(sub)}},
    {"Mul", BK_ARITH, {TBL_F(mul), TBL_I(mul)}},
    {"Div", BK_ARITH, {TBL_F(div), TBL_I(div)}},
    {"Mod", BK_ARITH, {TBL_F(mod), TBL_I(mod)}},
    {"Pow", BK_POW, {TBL_F(pow)}},
    {"PRelu",
     BK_PRELU,
     {TBL_F(prelu), [RD_DT_I8] = prelu_i8, [RD_DT_I16] = prelu_i16, [RD_DT_I32] = prelu_i32, [RD_DT_I64] = prelu_i64}},
    {"Equal", BK_COMPARE, {TBL_F(eq), TBL_I(eq), [RD_DT_BOOL] = eq_b}},
    {"Greater", BK_COMPARE, {TBL_F(gt), TBL_I(gt)}},
    {"GreaterOrEqual", BK_COMPARE, {TBL_F(ge), TBL_I(ge)}},
    {"Less", BK_COMPARE, {TBL_F(lt), TBL_I(lt)}},
    {"LessOrEqual", BK_COMPARE, {TBL_F(le), TBL_I(le)}},
    {"And", BK_LOGIC, {[RD_DT_BOOL] = and_b}},
    {"Or", BK_LOGIC, {[RD_DT_BOOL] = or_b}},
    {"Xor", BK_LOGIC, {[RD_DT_BOOL] = xor_b}},
    {"Max", BK_VARIADIC, {TBL_F(max), TBL_I(max)}},
    {"Min", BK_VARIADIC, {TBL_F(min), TBL_I(min)}},
    {"Sum", BK_VARIADIC, {TBL_F(add), TBL_I(add)}},
    {"Mean", BK_MEAN, {TBL_F(add)}},
};

struct bin_params {
    const bin_desc *desc;
    bool fmod;
    bool legacy; /* opset < 7: broadcast attribute (B only, aligned at `axis`) */
    bool has_axis;
    int64_t axis;
};

static rd_status bin_parse(const sim_node *n, void *params, rd_error *err)
{
    struct bin_params *p = params;
    for (size_t i = 0; i < sizeof bin_table / sizeof bin_table[0]; i++)
        if (strcmp(bin_table[i].name, n->op_type) == 0)
            p->desc = &bin_table[i];
    if (!p->desc)
        return rd_errorf(err, RD_E_INVAL, "node '%s': op %s is not a binary operator", n->name, n->op_type);
    int64_t f = sim_attr_int(n, "fmod", 0);
    if (f != 0 && f != 1)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): fmod must be 0 or 1, got %lld", n->name, n->op_type,
                         (long long)f);
    p->fmod = f != 0;
    p->legacy = n->opset < 7;
    p->has_axis = sim_attr_find(n, "axis") != NULL;
    p->axis = sim_attr_int(n, "axis", 0);
    return RD_OK;
}

/*
 * Input 1 as the numpy rules should see it. Before opset 7, B broadcast to A from position `axis`
 * (suffix-aligned without it, which numpy already does), so B gets trailing 1s; and PRelu took a
 * per-channel slope of shape [C] for X of shape [N, C, ...], which becomes [C, 1, ...].
 */
static const rd_tensor *legacy_view(const struct bin_params *p, const rd_tensor *a, const rd_tensor *b, rd_tensor *tmp)
{
    if (!p->legacy || !b || !a)
        return b;
    int rank = -1;
    if (p->desc->kind == BK_PRELU && b->rank == 1 && a->rank > 2 && b->dims[0] == a->dims[1] && b->dims[0] != 1)
        rank = a->rank - 1;
    else if (p->has_axis && p->axis >= 0 && p->axis < a->rank && a->rank - p->axis >= b->rank)
        rank = (int)(a->rank - p->axis);
    if (rank < 0)
        return b;
    *tmp = *b;
    for (int d = b->rank; d < rank; d++)
        tmp->dims[d] = 1;
    tmp->rank = rank;
    return tmp;
}

static rd_status err_shapes(const sim_op_ctx *ctx, int k, rd_error *err)
{
    char a[96], b[96];
    return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d shape %s does not broadcast with %s", ctx->node->name,
                     ctx->node->op_type, k, rd_shape_str(ctx->in[k], b, sizeof b),
                     rd_shape_str(&ctx->out[0], a, sizeof a));
}

static rd_status bin_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct bin_params *p = ctx->params;
    const bin_desc *d = p->desc;
    const rd_tensor *x = ctx->in[0];
    if (!x)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input 0 is missing", ctx->node->name, ctx->node->op_type);
    if ((unsigned)x->dtype >= RD_DT_COUNT || !d->rows[x->dtype])
        if (!(d->kind == BK_POW && (ec_is_float(x->dtype) || ec_is_int(x->dtype)) && x->dtype != RD_DT_BF16))
            return sim_err_dtype(ctx, 0, err);
    rd_dtype ty = d->kind == BK_COMPARE || d->kind == BK_LOGIC ? RD_DT_BOOL : x->dtype;
    int rank = x->rank;
    int64_t dims[RD_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    sim_set_shape(&ctx->out[0], ty, rank, dims);
    for (int k = 1; k < ctx->n_in; k++) {
        rd_tensor view;
        const rd_tensor *b = k == 1 ? legacy_view(p, x, ctx->in[k], &view) : ctx->in[k];
        if (!b)
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d is missing", ctx->node->name,
                             ctx->node->op_type, k);
        if (d->kind == BK_POW) {
            if (!(ec_is_float(b->dtype) || ec_is_int(b->dtype)) || b->dtype == RD_DT_BF16)
                return sim_err_dtype(ctx, k, err);
        } else if (b->dtype != x->dtype) {
            return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): input %d has dtype %s but input 0 has %s",
                             ctx->node->name, ctx->node->op_type, k, rd_dtype_name(b->dtype), rd_dtype_name(x->dtype));
        }
        int64_t prev[RD_MAX_RANK];
        memcpy(prev, dims, sizeof prev); /* sim_broadcast_shape must not alias its input */
        if (sim_broadcast_shape(rank, prev, b->rank, b->dims, &rank, dims) != RD_OK)
            return err_shapes(ctx, k, err);
        if (d->kind == BK_PRELU && (rank != x->rank || memcmp(dims, x->dims, (size_t)rank * sizeof dims[0]) != 0))
            return rd_errorf(err, RD_E_INVAL, "node '%s' (PRelu): slope does not broadcast to the shape of X",
                             ctx->node->name);
        sim_set_shape(&ctx->out[0], ty, rank, dims);
    }
    return RD_OK;
}

typedef struct bin_run_state {
    bin_row_fn fn;
    const bin_aux *aux;
    const char *a, *b;
    char *y;
    size_t sa, sb, sy; /* element sizes */
} bin_run_state;

static void bin_row(void *user, int64_t n, const int64_t *off, const int64_t *inner)
{
    const bin_run_state *s = user;
    s->fn(n, s->a + off[1] * (int64_t)s->sa, inner[1], s->b + off[2] * (int64_t)s->sb, inner[2],
          s->y + off[0] * (int64_t)s->sy, s->aux);
}

/* y = fn(a, b) with a and b broadcast to y's shape. */
static void bin_apply(bin_row_fn fn, const bin_aux *aux, const rd_tensor *a, const rd_tensor *b, rd_tensor *y)
{
    bc_plan plan;
    int ranks[2] = {a->rank, b->rank};
    const int64_t *dims[2] = {a->dims, b->dims};
    bc_plan_broadcast(&plan, y->rank, y->dims, 2, ranks, dims);
    bin_run_state s = {.fn = fn,
                       .aux = aux,
                       .a = a->data,
                       .b = b->data,
                       .y = y->data,
                       .sa = rd_dtype_get(a->dtype)->size,
                       .sb = rd_dtype_get(b->dtype)->size,
                       .sy = rd_dtype_get(y->dtype)->size};
    bc_run(&plan, bin_row, &s);
}

typedef struct copy_state {
    const char *x;
    char *y;
    size_t size;
} copy_state;

static void copy_row(void *user, int64_t n, const int64_t *off, const int64_t *inner)
{
    const copy_state *s = user;
    char *y = s->y + off[0] * (int64_t)s->size;
    const char *x = s->x + off[1] * (int64_t)s->size;
    if (inner[1])
        memcpy(y, x, (size_t)n * s->size);
    else
        for (int64_t i = 0; i < n; i++)
            memcpy(y + i * (int64_t)s->size, x, s->size);
}

/* y = x broadcast to y's shape (any dtype, by bytes). */
static void broadcast_copy(const rd_tensor *x, rd_tensor *y)
{
    bc_plan plan;
    int rank = x->rank;
    const int64_t *dims = x->dims;
    bc_plan_broadcast(&plan, y->rank, y->dims, 1, &rank, &dims);
    copy_state s = {.x = x->data, .y = y->data, .size = rd_dtype_get(x->dtype)->size};
    bc_run(&plan, copy_row, &s);
}

static rd_status bin_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct bin_params *p = ctx->params;
    const bin_desc *d = p->desc;
    rd_tensor *y = &ctx->out[0];
    if (!y->data)
        return RD_OK; /* empty output */
    bin_aux aux = {.ta = ctx->in[0]->dtype,
                   .tb = ctx->n_in > 1 ? ctx->in[1]->dtype : ctx->in[0]->dtype,
                   .ty = y->dtype,
                   .fmod = p->fmod};
    if (d->kind == BK_VARIADIC || d->kind == BK_MEAN) {
        broadcast_copy(ctx->in[0], y);
        for (int k = 1; k < ctx->n_in; k++)
            bin_apply(d->rows[y->dtype], &aux, y, ctx->in[k], y);
        if (d->kind == BK_MEAN && ctx->n_in > 1) {
            int64_t n = rd_tensor_numel(y);
            if (y->dtype == RD_DT_F32) {
                float *v = y->data, inv = (float)ctx->n_in;
                for (int64_t i = 0; i < n; i++)
                    v[i] /= inv;
            } else {
                for (int64_t i = 0; i < n; i++)
                    ec_st_f64(y->data, y->dtype, i, ec_ld_f64(y->data, y->dtype, i) / ctx->n_in);
            }
        }
        return RD_OK;
    }
    bin_row_fn fn = d->rows[aux.ta];
    if (d->kind == BK_POW && (aux.ta != aux.tb || !fn))
        fn = pow_mixed;
    rd_tensor view;
    bin_apply(fn, &aux, ctx->in[0], legacy_view(p, ctx->in[0], ctx->in[1], &view), y);
    return RD_OK;
}

/* One binary (BIN_OP) or variadic (VAR_OP) operator; the trailing arguments are its table traits
   (docs/internals/ops.md). Before opset 7 (8 for the variadic ones) broadcasting was the legacy form. */
#define ELTWISE_OP(sym, nm, since_, min_in_, max_in_, ...)                   \
    const sim_op_def sym = {.name = nm,                                      \
                            .domain = "",                                    \
                            .since = since_,                                 \
                            .min_in = min_in_,                               \
                            .max_in = max_in_,                               \
                            .min_out = 1,                                    \
                            .max_out = 1,                                    \
                            .params_size = sizeof(struct bin_params),        \
                            .parse = bin_parse,                              \
                            .infer = bin_infer,                              \
                            .eval = {[SIM_PREC_F32] = bin_eval},             \
                            .flags = SIM_OP_ELEMENTWISE | SIM_OP_FULL_WRITE, \
                            __VA_ARGS__};
#define BIN_OP(sym, nm, since_, ...) ELTWISE_OP(sym, nm, since_, 2, 2, __VA_ARGS__)
#define VAR_OP(sym, nm, since_, ...) ELTWISE_OP(sym, nm, since_, 1, 2147483647, .same_from = 8, __VA_ARGS__)

BIN_OP(op_add, "Add", 1, .prune = RD_OP_PRUNE_ADD, .fuse = SIM_FUSE_ADD, .same_from = 7)
BIN_OP(op_sub, "Sub", 1, .same_from = 7)
BIN_OP(op_mul, "Mul", 1, .fuse = SIM_FUSE_SWISH_MUL, .same_from = 7)
BIN_OP(op_div, "Div", 1, .same_from = 7)
BIN_OP(op_mod, "Mod", 10)
BIN_OP(op_pow, "Pow", 1, .same_from = 7)
BIN_OP(op_prelu, "PRelu", 1, .same_from = 7)
BIN_OP(op_equal, "Equal", 1, .qrule = RD_OP_Q_NONE)
BIN_OP(op_greater, "Greater", 1, .qrule = RD_OP_Q_NONE)
BIN_OP(op_greater_or_equal, "GreaterOrEqual", 12, .qrule = RD_OP_Q_NONE)
BIN_OP(op_less, "Less", 1, .qrule = RD_OP_Q_NONE)
BIN_OP(op_less_or_equal, "LessOrEqual", 12, .qrule = RD_OP_Q_NONE)
BIN_OP(op_and, "And", 1, .qrule = RD_OP_Q_NONE)
BIN_OP(op_or, "Or", 1, .qrule = RD_OP_Q_NONE)
BIN_OP(op_xor, "Xor", 1, .qrule = RD_OP_Q_NONE)
VAR_OP(op_max, "Max", 6)
VAR_OP(op_min, "Min", 6)
VAR_OP(op_sum, "Sum", 6)
VAR_OP(op_mean, "Mean", 6)

/* ---------------------------------------------------------------------------------------------------
 * Where(condition, X, Y): three-way broadcast, dtype-generic by element size.
 */

typedef struct where_state {
    const uint8_t *c;
    const char *x, *y;
    char *out;
    size_t size;
} where_state;

static void where_row(void *user, int64_t n, const int64_t *off, const int64_t *inner)
{
    const where_state *s = user;
    int64_t sz = (int64_t)s->size;
    const uint8_t *c = s->c + off[1];
    const char *x = s->x + off[2] * sz, *y = s->y + off[3] * sz;
    char *o = s->out + off[0] * sz;
    if (sz == 4 && inner[1] && inner[2] && inner[3]) {
        const uint32_t *xf = (const uint32_t *)x, *yf = (const uint32_t *)y; /* bits, any 4-byte dtype */
        uint32_t *of = (uint32_t *)o;
        for (int64_t i = 0; i < n; i++)
            of[i] = c[i] ? xf[i] : yf[i];
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(o + i * sz, c[i * inner[1]] ? x + i * inner[2] * sz : y + i * inner[3] * sz, s->size);
}

static rd_status where_infer(sim_op_ctx *ctx, rd_error *err)
{
    for (int k = 0; k < 3; k++)
        if (!ctx->in[k])
            return rd_errorf(err, RD_E_INVAL, "node '%s' (Where): input %d is missing", ctx->node->name, k);
    if (ctx->in[0]->dtype != RD_DT_BOOL)
        return sim_err_dtype(ctx, 0, err);
    const rd_tensor *x = ctx->in[1];
    if (!rd_dtype_get(x->dtype)->supported || rd_dtype_get(x->dtype)->size == 0)
        return sim_err_dtype(ctx, 1, err);
    if (ctx->in[2]->dtype != x->dtype)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (Where): X is %s but Y is %s", ctx->node->name,
                         rd_dtype_name(x->dtype), rd_dtype_name(ctx->in[2]->dtype));
    int rank = ctx->in[0]->rank;
    int64_t dims[RD_MAX_RANK];
    memcpy(dims, ctx->in[0]->dims, sizeof dims);
    sim_set_shape(&ctx->out[0], x->dtype, rank, dims);
    for (int k = 1; k < 3; k++) {
        int64_t prev[RD_MAX_RANK];
        memcpy(prev, dims, sizeof prev); /* sim_broadcast_shape must not alias its input */
        if (sim_broadcast_shape(rank, prev, ctx->in[k]->rank, ctx->in[k]->dims, &rank, dims) != RD_OK)
            return err_shapes(ctx, k, err);
        sim_set_shape(&ctx->out[0], x->dtype, rank, dims);
    }
    return RD_OK;
}

static rd_status where_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    rd_tensor *o = &ctx->out[0];
    if (!o->data)
        return RD_OK;
    bc_plan plan;
    int ranks[3];
    const int64_t *dims[3];
    for (int k = 0; k < 3; k++) {
        ranks[k] = ctx->in[k]->rank;
        dims[k] = ctx->in[k]->dims;
    }
    bc_plan_broadcast(&plan, o->rank, o->dims, 3, ranks, dims);
    where_state s = {.c = ctx->in[0]->data,
                     .x = ctx->in[1]->data,
                     .y = ctx->in[2]->data,
                     .out = o->data,
                     .size = rd_dtype_get(o->dtype)->size};
    bc_run(&plan, where_row, &s);
    return RD_OK;
}

const sim_op_def op_where = {.name = "Where",
                             .domain = "",
                             .since = 9,
                             .min_in = 3,
                             .max_in = 3,
                             .min_out = 1,
                             .max_out = 1,
                             .infer = where_infer,
                             .eval = {[SIM_PREC_F32] = where_eval}};
