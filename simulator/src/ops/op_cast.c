/*
 * op_cast.c: Cast and CastLike between float32, float64, float16, bfloat16, the eight integer types
 * and bool. Strings and float8/int4 targets are reported unsupported.
 *
 * Conversions: float to float rounds to nearest even (float64 to float16 goes through float32, which
 * can differ from a direct rounding only on exact double ties); float to integer truncates toward
 * zero and saturates to the target's range, NaN giving 0 (the spec leaves out-of-range values
 * undefined; C would be undefined behaviour); integer to integer wraps modulo 2^bits (numpy astype);
 * anything to bool is "!= 0". The `saturate` attribute (opset 19) only concerns float8 and is ignored.
 */
#include "elem_common.h"

struct cast_params {
    rd_dtype to; /* Cast: target; CastLike: from input 1 */
};

static bool cast_dtype_ok(rd_dtype dt)
{
    return ec_is_float(dt) || ec_is_int(dt) || dt == RD_DT_BOOL;
}

static rd_status cast_parse(const sim_node *n, void *params, rd_error *err)
{
    struct cast_params *p = params;
    if (strcmp(n->op_type, "CastLike") == 0)
        return RD_OK;
    const sim_attr *a = sim_attr_find(n, "to");
    if (!a || a->type != SIM_ATTR_INT)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (Cast): the integer attribute 'to' is required", n->name);
    if (a->i < 0 || a->i >= RD_DT_COUNT || !cast_dtype_ok((rd_dtype)a->i))
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (Cast): target dtype %lld (%s) is not supported", n->name,
                         (long long)a->i, rd_dtype_name((rd_dtype)a->i));
    p->to = (rd_dtype)a->i;
    return RD_OK;
}

static rd_status cast_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct cast_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    if (!cast_dtype_ok(x->dtype))
        return sim_err_dtype(ctx, 0, err);
    rd_dtype to = p->to;
    if (ctx->n_in > 1 && ctx->in[1]) { /* CastLike */
        to = ctx->in[1]->dtype;
        if (!cast_dtype_ok(to))
            return sim_err_dtype(ctx, 1, err);
    }
    sim_set_shape(&ctx->out[0], to, x->rank, x->dims);
    return RD_OK;
}

/** Converts n elements of src (dtype ts) into dst (dtype td). */
static void cast_buffer(const void *src, rd_dtype ts, void *dst, rd_dtype td, int64_t n)
{
    if (ts == td) {
        memcpy(dst, src, (size_t)n * rd_dtype_get(ts)->size);
    } else if (ts == RD_DT_F32 && td == RD_DT_F16) {
        const float *s = src;
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = rd_f32_to_f16(s[i]);
    } else if (ts == RD_DT_F16 && td == RD_DT_F32) {
        const uint16_t *s = src;
        float *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = rd_f16_to_f32(s[i]);
    } else if (ts == RD_DT_F32 && td == RD_DT_F64) {
        const float *s = src;
        double *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i];
    } else if (ec_is_float(ts)) {
        for (int64_t i = 0; i < n; i++)
            ec_st_f64(dst, td, i, ec_ld_f64(src, ts, i));
    } else if (ec_is_float(td)) { /* integer or bool to float */
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ec_ld_i64(src, ts, i);
            ec_st_f64(dst, td, i, ts == RD_DT_U64 ? (double)(uint64_t)v : (double)v);
        }
    } else { /* integer/bool to integer/bool: wrap */
        for (int64_t i = 0; i < n; i++)
            ec_st_i64(dst, td, i, ec_ld_i64(src, ts, i));
    }
}

static rd_status cast_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const rd_tensor *x = ctx->in[0];
    rd_tensor *y = &ctx->out[0];
    int64_t n = rd_tensor_numel(x);
    if (n > 0 && y->data)
        cast_buffer(x->data, x->dtype, y->data, y->dtype, n);
    return RD_OK;
}

/* CastLike (15) is Cast with the target dtype taken from input 1. */
#define CAST_OP(sym, nm, since_, n_in, ...)                            \
    const sim_op_def sym = {.name = nm,                                \
                            .domain = "",                              \
                            .since = since_,                           \
                            .min_in = n_in,                            \
                            .max_in = n_in,                            \
                            .min_out = 1,                              \
                            .max_out = 1,                              \
                            .params_size = sizeof(struct cast_params), \
                            .parse = cast_parse,                       \
                            .infer = cast_infer,                       \
                            .eval = {[SIM_PREC_F32] = cast_eval},      \
                            __VA_ARGS__}
CAST_OP(op_cast, "Cast", 6, 1, .same_from = 6);
CAST_OP(op_cast_like, "CastLike", 15, 2);
