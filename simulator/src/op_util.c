/* op_util.c: helpers every operator uses: attribute lookup, broadcasting, axes, error wording. */
#include "internal.h"

const sim_attr *sim_attr_find(const sim_node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t sim_attr_int(const sim_node *n, const char *name, int64_t def)
{
    const sim_attr *a = sim_attr_find(n, name);
    return a && a->type == SIM_ATTR_INT ? a->i : def;
}

float sim_attr_float(const sim_node *n, const char *name, float def)
{
    const sim_attr *a = sim_attr_find(n, name);
    if (!a)
        return def;
    if (a->type == SIM_ATTR_FLOAT)
        return a->f;
    if (a->type == SIM_ATTR_INT)
        return (float)a->i;
    return def;
}

const char *sim_attr_str(const sim_node *n, const char *name, const char *def)
{
    const sim_attr *a = sim_attr_find(n, name);
    return a && a->type == SIM_ATTR_STRING ? a->s : def;
}

const int64_t *sim_attr_ints(const sim_node *n, const char *name, size_t *count)
{
    const sim_attr *a = sim_attr_find(n, name);
    if (!a || a->type != SIM_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_ints;
    return a->ints;
}

const float *sim_attr_floats(const sim_node *n, const char *name, size_t *count)
{
    const sim_attr *a = sim_attr_find(n, name);
    if (!a || a->type != SIM_ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_floats;
    return a->floats;
}

rd_status sim_err_dtype(const sim_op_ctx *ctx, int input, rd_error *err)
{
    const rd_tensor *t = ctx->in[input];
    return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): input %d has dtype %s, not supported by this operator",
                     ctx->node->name, ctx->node->op_type, input, t ? rd_dtype_name(t->dtype) : "(absent)");
}

rd_status sim_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db, int *out_rank, int64_t *out_dims)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t a = i - (r - ra) >= 0 ? da[i - (r - ra)] : 1;
        int64_t b = i - (r - rb) >= 0 ? db[i - (r - rb)] : 1;
        if (a == b || b == 1)
            out_dims[i] = a;
        else if (a == 1)
            out_dims[i] = b;
        else
            return RD_E_INVAL;
    }
    *out_rank = r;
    return RD_OK;
}

rd_status sim_norm_axis(const sim_op_ctx *ctx, int64_t axis, int rank, int *out, rd_error *err)
{
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= (rank > 0 ? rank : 1))
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): axis %lld is out of range for rank %d", ctx->node->name,
                         ctx->node->op_type, (long long)axis, rank);
    *out = (int)a;
    return RD_OK;
}

void *sim_scratch_get(sim_op_ctx *ctx, size_t bytes, rd_error *err)
{
    sim_scratch *s = ctx->scratch;
    if (!s) {
        rd_errorf(err, RD_E_INVAL, "node '%s' (%s): no scratch area", ctx->node->name, ctx->node->op_type);
        return NULL;
    }
    if (bytes > RD_MAX_TENSOR_BYTES) {
        rd_errorf(err, RD_E_LIMIT, "node '%s' (%s): scratch of %zu bytes exceeds the limit", ctx->node->name,
                  ctx->node->op_type, bytes);
        return NULL;
    }
    if (bytes > s->cap) {
        void *p = NULL;
        if (posix_memalign(&p, 64, bytes) != 0) {
            rd_errorf(err, RD_E_NOMEM, "node '%s' (%s): cannot allocate %zu bytes of scratch", ctx->node->name,
                      ctx->node->op_type, bytes);
            return NULL;
        }
        free(s->buf);
        s->buf = p;
        s->cap = bytes;
    }
    return s->buf;
}

void sim_scratch_fini(sim_scratch *s)
{
    if (s->buffers) {
        sim_buffers_end_run(s->buffers, s);
        return;
    }
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}
