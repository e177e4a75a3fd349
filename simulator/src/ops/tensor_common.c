/* tensor_common.c: shared helpers of the tensor operator family (see tensor_common.h). */
#include "tensor_common.h"

#include <stdarg.h>
#include <stdio.h>

rd_status tc_node_err(const sim_node *n, rd_error *err, rd_status code, const char *fmt, ...)
{
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rd_errorf(err, code, "node '%s' (%s): %s", n->name, n->op_type, msg);
}

size_t tc_elem_size(rd_dtype dt)
{
    const rd_dtype_info *info = rd_dtype_get(dt);
    if (!info->supported || dt == RD_DT_STRING)
        return 0;
    return info->size;
}

rd_status tc_axis0_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct tc_axis_params *p = params;
    p->axis = sim_attr_int(n, "axis", 0);
    return RD_OK;
}

rd_status tc_axis1_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct tc_axis_params *p = params;
    p->axis = sim_attr_int(n, "axis", 1);
    return RD_OK;
}

rd_status tc_check_movable(const sim_op_ctx *ctx, int k, rd_error *err)
{
    if (!tc_has(ctx, k) || tc_elem_size(ctx->in[k]->dtype) == 0)
        return sim_err_dtype(ctx, k, err);
    return RD_OK;
}

rd_status tc_read_ints(const sim_op_ctx *ctx, int k, int64_t *out, size_t max, size_t *n, rd_error *err)
{
    const rd_tensor *t = ctx->in[k];
    const rd_dtype_info *info = rd_dtype_get(t->dtype);
    if (info->is_float || !info->supported || t->dtype == RD_DT_STRING || t->dtype == RD_DT_BOOL)
        return tc_err(ctx, err, RD_E_INVAL, "input %d must be an integer tensor, got %s", k, rd_dtype_name(t->dtype));
    if (t->rank > 1)
        return tc_err(ctx, err, RD_E_INVAL, "input %d must be 1-D, got rank %d", k, t->rank);
    int64_t cnt = rd_tensor_numel(t);
    if ((uint64_t)cnt > max)
        return tc_err(ctx, err, RD_E_INVAL, "input %d has %lld values, at most %zu allowed", k, (long long)cnt, max);
    if (cnt > 0 && !t->data)
        return tc_err(ctx, err, RD_E_INVAL, "input %d has no data", k);
    for (int64_t i = 0; i < cnt; i++)
        out[i] = sim_get_int(t, i);
    *n = (size_t)cnt;
    return RD_OK;
}

rd_status tc_check_shape(const sim_op_ctx *ctx, rd_dtype dt, int rank, const int64_t *dims, rd_error *err)
{
    size_t bytes;
    rd_status st = rd_shape_bytes(dt, rank, dims, &bytes, err);
    if (st != RD_OK) {
        char msg[RD_ERROR_MSG_MAX];
        memcpy(msg, err ? err->msg : "", err ? sizeof msg : 1);
        return tc_err(ctx, err, st, "output shape rejected: %s", msg);
    }
    return RD_OK;
}

void tc_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* Merges axes where one contiguous run continues the next so that the inner loop is as long as possible. */
static int view_simplify(int rank, const int64_t *dims, const int64_t *step, int64_t *d, int64_t *s)
{
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 1)
            continue;
        if (r > 0 && s[r - 1] == step[k] * dims[k]) {
            d[r - 1] *= dims[k];
            s[r - 1] = step[k];
            continue;
        }
        d[r] = dims[k];
        s[r] = step[k];
        r++;
    }
    return r;
}

void tc_view_copy(size_t esize, int rank, const int64_t *dims, const void *src, int64_t base, const int64_t *step,
                  void *dst)
{
    for (int k = 0; k < rank; k++)
        if (dims[k] == 0)
            return;
    int64_t d[TC_MAX_VIEW_RANK], s[TC_MAX_VIEW_RANK], idx[TC_MAX_VIEW_RANK] = {0};
    int r = view_simplify(rank, dims, step, d, s);
    const char *in = src;
    char *out = dst;
    if (r == 0) {
        memcpy(out, in + base * (int64_t)esize, esize);
        return;
    }
    int64_t inner = d[r - 1], istep = s[r - 1];
    int64_t off = base;
    for (;;) {
        if (istep == 1) {
            memcpy(out, in + off * (int64_t)esize, (size_t)inner * esize);
            out += inner * (int64_t)esize;
        } else {
            for (int64_t j = 0; j < inner; j++) {
                memcpy(out, in + (off + j * istep) * (int64_t)esize, esize);
                out += esize;
            }
        }
        int k = r - 2;
        for (; k >= 0; k--) {
            idx[k]++;
            off += s[k];
            if (idx[k] < d[k])
                break;
            off -= s[k] * d[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}
