/*
 * op_tensor_shape.c: operators that change only the shape or metadata of their input, or make small
 * tensors from shapes: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference), Shape, Size,
 * Constant, ConstantOfShape, Range. Data moves by memcpy, so every fixed-size dtype works.
 */
#include "tensor_common.h"

#include <math.h>

/* Copies input 0 into output 0 byte for byte (shape set by infer). */
static rd_status copy_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    size_t n = rd_tensor_nbytes(ctx->in[0]);
    if (n && ctx->out[0].data && ctx->out[0].data != ctx->in[0]->data)
        memcpy(ctx->out[0].data, ctx->in[0]->data, n);
    return RD_OK;
}

/* ---------------------------------------------------------------------------------------------------
 * Reshape (5, 13, 14 allowzero, 19, 21)
 */

struct reshape_params {
    bool allowzero;
};

static rd_status reshape_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct reshape_params *p = params;
    p->allowzero = n->opset >= 14 && sim_attr_int(n, "allowzero", 0) != 0;
    return RD_OK;
}

static rd_status reshape_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct reshape_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    if (!ctx->in[1]->data && rd_tensor_numel(ctx->in[1]) > 0)
        return sim_defer(ctx);
    int64_t shape[RD_MAX_RANK];
    size_t n;
    st = tc_read_ints(ctx, 1, shape, RD_MAX_RANK, &n, err);
    if (st != RD_OK)
        return st;
    int infer_at = -1;
    int64_t known = 1;
    for (size_t i = 0; i < n; i++) {
        if (shape[i] == 0 && !p->allowzero) {
            if ((int)i >= x->rank)
                return tc_err(ctx, err, RD_E_INVAL, "shape[%zu] = 0 copies a dimension the rank-%d input lacks", i,
                              x->rank);
            shape[i] = x->dims[i];
        } else if (shape[i] == -1) {
            if (infer_at >= 0)
                return tc_err(ctx, err, RD_E_INVAL, "shape has more than one -1");
            infer_at = (int)i;
            continue;
        } else if (shape[i] < -1) {
            return tc_err(ctx, err, RD_E_INVAL, "shape[%zu] = %lld is negative", i, (long long)shape[i]);
        }
        if (shape[i] != 0 && known > INT64_MAX / shape[i])
            return tc_err(ctx, err, RD_E_INVAL, "shape overflows");
        known *= shape[i];
    }
    int64_t total = rd_tensor_numel(x);
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return tc_err(ctx, err, RD_E_INVAL, "cannot infer the -1 dimension: %lld elements into a product of %lld",
                          (long long)total, (long long)known);
        shape[infer_at] = total / known;
    } else if (known != total) {
        return tc_err(ctx, err, RD_E_INVAL, "shape holds %lld elements, the input %lld", (long long)known,
                      (long long)total);
    }
    sim_set_shape(&ctx->out[0], x->dtype, (int)n, shape);
    return RD_OK;
}

const sim_op_def op_reshape = {.name = "Reshape",
                               .domain = "",
                               .since = 5,
                               .min_in = 2,
                               .max_in = 2,
                               .min_out = 1,
                               .max_out = 1,
                               .params_size = sizeof(struct reshape_params),
                               .parse = reshape_parse,
                               .infer = reshape_infer,
                               .eval = {[SIM_PREC_F32] = copy_eval},
                               .qrule = RD_OP_Q_PASS,
                               .same_from = 5};

/* ---------------------------------------------------------------------------------------------------
 * Flatten (1, 9, 11 negative axis, 13, 21)
 */

static rd_status flatten_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct tc_axis_params *p = ctx->params;
    const rd_tensor *x = ctx->in[0];
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    int64_t axis = p->axis < 0 ? p->axis + x->rank : p->axis;
    if (axis < 0 || axis > x->rank)
        return tc_err(ctx, err, RD_E_INVAL, "axis %lld is out of range for rank %d", (long long)p->axis, x->rank);
    int64_t d[2] = {1, 1};
    for (int i = 0; i < x->rank; i++)
        d[i < axis ? 0 : 1] *= x->dims[i];
    sim_set_shape(&ctx->out[0], x->dtype, 2, d);
    return RD_OK;
}

const sim_op_def op_flatten = {.name = "Flatten",
                               .domain = "",
                               .since = 1,
                               .min_in = 1,
                               .max_in = 1,
                               .min_out = 1,
                               .max_out = 1,
                               .params_size = sizeof(struct tc_axis_params),
                               .parse = tc_axis1_parse,
                               .infer = flatten_infer,
                               .eval = {[SIM_PREC_F32] = copy_eval},
                               .qrule = RD_OP_Q_PASS};

/* ---------------------------------------------------------------------------------------------------
 * Squeeze and Unsqueeze: axes attribute before 13, second input from 13.
 */

struct axes_params {
    bool from_input;
    size_t n_axes;
    int64_t axes[RD_MAX_RANK];
    bool has_axes;
};

static rd_status axes_parse(const sim_node *n, void *params, rd_error *err)
{
    struct axes_params *p = params;
    p->from_input = n->opset >= 13;
    if (p->from_input)
        return RD_OK;
    size_t cnt;
    const int64_t *a = sim_attr_ints(n, "axes", &cnt);
    if (cnt > RD_MAX_RANK)
        return tc_node_err(n, err, RD_E_INVAL, "%zu axes, at most %d allowed", cnt, RD_MAX_RANK);
    p->has_axes = a != NULL;
    p->n_axes = cnt;
    if (cnt)
        memcpy(p->axes, a, cnt * sizeof *a);
    return RD_OK;
}

/* The node's axes (attribute or input 1); sim_defer when the input's data is not known yet. */
static rd_status get_axes(sim_op_ctx *ctx, int64_t *axes, size_t *n, bool *has, rd_error *err)
{
    const struct axes_params *p = ctx->params;
    if (!p->from_input) {
        *n = p->n_axes;
        *has = p->has_axes;
        memcpy(axes, p->axes, sizeof p->axes);
        return RD_OK;
    }
    *has = tc_has(ctx, 1);
    *n = 0;
    if (!*has)
        return RD_OK;
    if (!ctx->in[1]->data && rd_tensor_numel(ctx->in[1]) > 0)
        return sim_defer(ctx);
    return tc_read_ints(ctx, 1, axes, RD_MAX_RANK, n, err);
}

static rd_status squeeze_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    int64_t axes[RD_MAX_RANK];
    size_t n;
    bool has;
    st = get_axes(ctx, axes, &n, &has, err);
    if (st != RD_OK || ctx->deferred)
        return st;
    bool drop[RD_MAX_RANK] = {false};
    if (!has || n == 0) {
        for (int i = 0; i < x->rank; i++)
            drop[i] = x->dims[i] == 1;
    } else {
        for (size_t i = 0; i < n; i++) {
            int a;
            st = sim_norm_axis(ctx, axes[i], x->rank, &a, err);
            if (st != RD_OK)
                return st;
            if (x->rank == 0 || x->dims[a] != 1)
                return tc_err(ctx, err, RD_E_INVAL, "cannot squeeze axis %lld of size %lld", (long long)axes[i],
                              (long long)(x->rank ? x->dims[a] : 0));
            drop[a] = true;
        }
    }
    int64_t d[RD_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i])
            d[r++] = x->dims[i];
    sim_set_shape(&ctx->out[0], x->dtype, r, d);
    return RD_OK;
}

const sim_op_def op_squeeze = {.name = "Squeeze",
                               .domain = "",
                               .since = 1,
                               .min_in = 1,
                               .max_in = 2,
                               .min_out = 1,
                               .max_out = 1,
                               .params_size = sizeof(struct axes_params),
                               .parse = axes_parse,
                               .infer = squeeze_infer,
                               .eval = {[SIM_PREC_F32] = copy_eval},
                               .qrule = RD_OP_Q_PASS,
                               .npu_op = "Reshape",
                               .attrs_to_inputs_at = 13,
                               .attrs_to_inputs = {"axes"}};

static rd_status unsqueeze_infer(sim_op_ctx *ctx, rd_error *err)
{
    const rd_tensor *x = ctx->in[0];
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    int64_t axes[RD_MAX_RANK];
    size_t n;
    bool has;
    st = get_axes(ctx, axes, &n, &has, err);
    if (st != RD_OK || ctx->deferred)
        return st;
    if (!has || n == 0)
        return tc_err(ctx, err, RD_E_INVAL, "axes are required");
    if (x->rank + (int)n > RD_MAX_RANK)
        return tc_err(ctx, err, RD_E_LIMIT, "output rank %d exceeds %d", x->rank + (int)n, RD_MAX_RANK);
    int r = x->rank + (int)n;
    bool ins[RD_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int a;
        st = sim_norm_axis(ctx, axes[i], r, &a, err);
        if (st != RD_OK)
            return st;
        if (ins[a])
            return tc_err(ctx, err, RD_E_INVAL, "axis %lld appears twice", (long long)axes[i]);
        ins[a] = true;
    }
    int64_t d[RD_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++)
        d[i] = ins[i] ? 1 : x->dims[j++];
    sim_set_shape(&ctx->out[0], x->dtype, r, d);
    return RD_OK;
}

const sim_op_def op_unsqueeze = {.name = "Unsqueeze",
                                 .domain = "",
                                 .since = 1,
                                 .min_in = 1,
                                 .max_in = 2,
                                 .min_out = 1,
                                 .max_out = 1,
                                 .params_size = sizeof(struct axes_params),
                                 .parse = axes_parse,
                                 .infer = unsqueeze_infer,
                                 .eval = {[SIM_PREC_F32] = copy_eval},
                                 .qrule = RD_OP_Q_PASS,
                                 .attrs_to_inputs_at = 13,
                                 .attrs_to_inputs = {"axes"}};

/* ---------------------------------------------------------------------------------------------------
 * Identity and Dropout (inference: the output is the input; the mask, when asked for, is all true).
 */

static rd_status identity_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = tc_check_movable(ctx, 0, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, ctx->in[0]->rank, ctx->in[0]->dims);
    return RD_OK;
}

const sim_op_def op_identity = {.name = "Identity",
                                .domain = "",
                                .since = 1,
                                .min_in = 1,
                                .max_in = 1,
                                .min_out = 1,
                                .max_out = 1,
                                .infer = identity_infer,
                                .eval = {[SIM_PREC_F32] = copy_eval},
                                .qrule = RD_OP_Q_PASS,
                                .prune = RD_OP_PRUNE_CHANNELWISE};

struct dropout_params {
    float ratio; /* attribute before 12 */
};

static rd_status dropout_parse(const sim_node *n, void *params, rd_error *err)
{
    struct dropout_params *p = params;
    p->ratio = n->opset < 12 ? sim_attr_float(n, "ratio", 0.5f) : 0.5f;
    if (!(p->ratio >= 0.0f && p->ratio < 1.0f))
        return tc_node_err(n, err, RD_E_INVAL, "ratio %g is outside [0, 1)", (double)p->ratio);
    return RD_OK;
}

static rd_status dropout_infer(sim_op_ctx *ctx, rd_error *err)
{
    rd_status st = identity_infer(ctx, err);
    if (st != RD_OK)
        return st;
    const rd_tensor *x = ctx->in[0];
    if (tc_has(ctx, 2)) {
        /* training_mode: random dropping cannot be reproduced, except with ratio 0 */
        if (!ctx->in[2]->data)
            return sim_defer(ctx);
        if (sim_get_int(ctx->in[2], 0) != 0) {
            double ratio = 0.5;
            if (tc_has(ctx, 1)) {
                if (!ctx->in[1]->data)
                    return sim_defer(ctx);
                ratio = sim_get_f64(ctx->in[1], 0);
            }
            if (ratio != 0.0)
                return tc_err(ctx, err, RD_E_UNSUPPORTED, "training mode with ratio %g is random", ratio);
        }
    }
    if (ctx->n_out > 1 && ctx->out_present[1])
        sim_set_shape(&ctx->out[1], ctx->opset < 10 ? x->dtype : RD_DT_BOOL, x->rank, x->dims);
    return RD_OK;
}

static rd_status dropout_eval(sim_op_ctx *ctx, rd_error *err)
{
    copy_eval(ctx, err);
    if (ctx->n_out > 1 && ctx->out_present[1]) {
        int64_t n = rd_tensor_numel(&ctx->out[1]);
        for (int64_t i = 0; i < n; i++)
            sim_set_f64(&ctx->out[1], i, 1.0);
    }
    return RD_OK;
}

const sim_op_def op_dropout = {.name = "Dropout",
                               .domain = "",
                               .since = 7,
                               .min_in = 1,
                               .max_in = 3,
                               .min_out = 1,
                               .max_out = 2,
                               .params_size = sizeof(struct dropout_params),
                               .parse = dropout_parse,
                               .infer = dropout_infer,
                               .eval = {[SIM_PREC_F32] = dropout_eval},
                               .qrule = RD_OP_Q_PASS};

/* ---------------------------------------------------------------------------------------------------
 * Shape (1, 13, 15 start/end, 19, 21) and Size: need only the input's shape.
 */

struct shape_params {
    int64_t start, end;
    bool has_end;
};

static rd_status shape_parse(const sim_node *n, void *params, rd_error *err)
{
    (void)err;
    struct shape_params *p = params;
    p->start = n->opset >= 15 ? sim_attr_int(n, "start", 0) : 0;
    p->has_end = n->opset >= 15 && sim_attr_find(n, "end") != NULL;
    p->end = p->has_end ? sim_attr_int(n, "end", 0) : 0;
    return RD_OK;
}

/* The clamped [start, end) range of dims Shape reports. */
static void shape_range(const struct shape_params *p, int rank, int64_t *s, int64_t *e)
{
    int64_t start = p->start < 0 ? p->start + rank : p->start;
    int64_t end = p->has_end ? (p->end < 0 ? p->end + rank : p->end) : rank;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    *s = start;
    *e = end < start ? start : end;
}

static rd_status shape_infer(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    int64_t s, e;
    shape_range(ctx->params, ctx->in[0]->rank, &s, &e);
    int64_t n = e - s;
    sim_set_shape(&ctx->out[0], RD_DT_I64, 1, &n);
    return RD_OK;
}

static rd_status shape_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    int64_t s, e;
    shape_range(ctx->params, ctx->in[0]->rank, &s, &e);
    int64_t *o = ctx->out[0].data;
    for (int64_t i = s; i < e; i++)
        o[i - s] = ctx->in[0]->dims[i];
    return RD_OK;
}

const sim_op_def op_shape = {.name = "Shape",
                             .domain = "",
                             .since = 1,
                             .min_in = 1,
                             .max_in = 1,
                             .min_out = 1,
                             .max_out = 1,
                             .params_size = sizeof(struct shape_params),
                             .parse = shape_parse,
                             .infer = shape_infer,
                             .eval = {[SIM_PREC_F32] = shape_eval},
                             .flags = SIM_OP_SHAPE_ONLY,
                             .qrule = RD_OP_Q_NONE};

static rd_status size_infer(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    sim_set_shape(&ctx->out[0], RD_DT_I64, 0, NULL);
    return RD_OK;
}

static rd_status size_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    *(int64_t *)ctx->out[0].data = rd_tensor_numel(ctx->in[0]);
    return RD_OK;
}

const sim_op_def op_size = {.name = "Size",
                            .domain = "",
                            .since = 1,
                            .min_in = 1,
                            .max_in = 1,
                            .min_out = 1,
                            .max_out = 1,
                            .infer = size_infer,
                            .eval = {[SIM_PREC_F32] = size_eval},
                            .flags = SIM_OP_SHAPE_ONLY,
                            .qrule = RD_OP_Q_NONE};

/* ---------------------------------------------------------------------------------------------------
 * Constant (1, 9, 11 sparse_value, 12 value_float(s)/value_int(s)/value_string(s), 13, 19, 21)
 */

enum const_kind { CONST_TENSOR, CONST_FLOAT, CONST_FLOATS, CONST_INT, CONST_INTS };

struct constant_params {
    enum const_kind kind;
    const sim_attr *attr; /* owned by the node, which outlives the params */
};

static rd_status constant_parse(const sim_node *n, void *params, rd_error *err)
{
    struct constant_params *p = params;
    static const struct {
        const char *name;
        enum const_kind kind;
        sim_attr_type type;
    } forms[] = {{"value", CONST_TENSOR, SIM_ATTR_TENSOR},
                 {"value_float", CONST_FLOAT, SIM_ATTR_FLOAT},
                 {"value_floats", CONST_FLOATS, SIM_ATTR_FLOATS},
                 {"value_int", CONST_INT, SIM_ATTR_INT},
                 {"value_ints", CONST_INTS, SIM_ATTR_INTS}};
    int found = 0;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const sim_attr *a = sim_attr_find(n, forms[i].name);
        if (!a)
            continue;
        if (a->type != forms[i].type)
            return tc_node_err(n, err, RD_E_PARSE, "attribute '%s' has the wrong type", forms[i].name);
        p->kind = forms[i].kind;
        p->attr = a;
        found++;
    }
    if (found == 0) {
        if (sim_attr_find(n, "sparse_value") || sim_attr_find(n, "value_string") || sim_attr_find(n, "value_strings"))
            return tc_node_err(n, err, RD_E_UNSUPPORTED, "sparse and string constants are not supported");
        return tc_node_err(n, err, RD_E_PARSE, "no value attribute");
    }
    if (found > 1)
        return tc_node_err(n, err, RD_E_PARSE, "more than one value attribute");
    if (p->kind == CONST_TENSOR && tc_elem_size(p->attr->t.dtype) == 0)
        return tc_node_err(n, err, RD_E_UNSUPPORTED, "value has dtype %s", rd_dtype_name(p->attr->t.dtype));
    return RD_OK;
}

static rd_status constant_infer(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct constant_params *p = ctx->params;
    const sim_attr *a = p->attr;
    int64_t n;
    switch (p->kind) {
    case CONST_TENSOR:
        sim_set_shape(&ctx->out[0], a->t.dtype, a->t.rank, a->t.dims);
        break;
    case CONST_FLOAT:
        sim_set_shape(&ctx->out[0], RD_DT_F32, 0, NULL);
        break;
    case CONST_INT:
        sim_set_shape(&ctx->out[0], RD_DT_I64, 0, NULL);
        break;
    case CONST_FLOATS:
        n = (int64_t)a->n_floats;
        sim_set_shape(&ctx->out[0], RD_DT_F32, 1, &n);
        break;
    case CONST_INTS:
        n = (int64_t)a->n_ints;
        sim_set_shape(&ctx->out[0], RD_DT_I64, 1, &n);
        break;
    }
    return RD_OK;
}

static rd_status constant_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct constant_params *p = ctx->params;
    const sim_attr *a = p->attr;
    void *o = ctx->out[0].data;
    switch (p->kind) {
    case CONST_TENSOR:
        if (rd_tensor_nbytes(&a->t) && a->t.data)
            memcpy(o, a->t.data, rd_tensor_nbytes(&a->t));
        break;
    case CONST_FLOAT:
        *(float *)o = a->f;
        break;
    case CONST_INT:
        *(int64_t *)o = a->i;
        break;
    case CONST_FLOATS:
        if (a->n_floats)
            memcpy(o, a->floats, a->n_floats * sizeof(float));
        break;
    case CONST_INTS:
        if (a->n_ints)
            memcpy(o, a->ints, a->n_ints * sizeof(int64_t));
        break;
    }
    return RD_OK;
}

const sim_op_def op_constant = {.name = "Constant",
                                .domain = "",
                                .since = 1,
                                .min_in = 0,
                                .max_in = 0,
                                .min_out = 1,
                                .max_out = 1,
                                .params_size = sizeof(struct constant_params),
                                .parse = constant_parse,
                                .infer = constant_infer,
                                .eval = {[SIM_PREC_F32] = constant_eval}};

/* ---------------------------------------------------------------------------------------------------
 * ConstantOfShape (9, 20, 21): a tensor of the given shape filled with the one-element value.
 */

struct cos_params {
    const rd_tensor *value; /* NULL: float32 zero */
};

static rd_status cos_parse(const sim_node *n, void *params, rd_error *err)
{
    struct cos_params *p = params;
    const sim_attr *a = sim_attr_find(n, "value");
    if (!a)
        return RD_OK;
    if (a->type != SIM_ATTR_TENSOR || rd_tensor_numel(&a->t) != 1 || !a->t.data)
        return tc_node_err(n, err, RD_E_PARSE, "value must be a one-element tensor");
    if (tc_elem_size(a->t.dtype) == 0)
        return tc_node_err(n, err, RD_E_UNSUPPORTED, "value has dtype %s", rd_dtype_name(a->t.dtype));
    p->value = &a->t;
    return RD_OK;
}

static rd_status cos_infer(sim_op_ctx *ctx, rd_error *err)
{
    const struct cos_params *p = ctx->params;
    if (!ctx->in[0]->data && rd_tensor_numel(ctx->in[0]) > 0)
        return sim_defer(ctx);
    int64_t d[RD_MAX_RANK];
    size_t n;
    rd_status st = tc_read_ints(ctx, 0, d, RD_MAX_RANK, &n, err);
    if (st != RD_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        if (d[i] < 0)
            return tc_err(ctx, err, RD_E_INVAL, "shape[%zu] = %lld is negative", i, (long long)d[i]);
    rd_dtype dt = p->value ? p->value->dtype : RD_DT_F32;
    st = tc_check_shape(ctx, dt, (int)n, d, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], dt, (int)n, d);
    return RD_OK;
}

static rd_status cos_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    const struct cos_params *p = ctx->params;
    if (!p->value)
        return RD_OK; /* the executor zeroed the output */
    size_t es = tc_elem_size(p->value->dtype);
    int64_t n = rd_tensor_numel(&ctx->out[0]);
    char *o = ctx->out[0].data;
    for (int64_t i = 0; i < n; i++)
        memcpy(o + i * (int64_t)es, p->value->data, es);
    return RD_OK;
}

const sim_op_def op_constant_of_shape = {.name = "ConstantOfShape",
                                         .domain = "",
                                         .since = 9,
                                         .min_in = 1,
                                         .max_in = 1,
                                         .min_out = 1,
                                         .max_out = 1,
                                         .params_size = sizeof(struct cos_params),
                                         .parse = cos_parse,
                                         .infer = cos_infer,
                                         .eval = {[SIM_PREC_F32] = cos_eval}};

/* ---------------------------------------------------------------------------------------------------
 * Range (11): start + i*delta for i < max(ceil((limit - start) / delta), 0). Integers are computed
 * exactly in int64; floats in double and rounded once to the output dtype.
 */

static bool range_dtype_ok(rd_dtype dt)
{
    return dt == RD_DT_F32 || dt == RD_DT_F64 || dt == RD_DT_F16 || dt == RD_DT_I16 || dt == RD_DT_I32 ||
           dt == RD_DT_I64;
}

/* Element count; RD_E_INVAL for a zero delta or a count that is not finite. */
static rd_status range_count(sim_op_ctx *ctx, int64_t *count, rd_error *err)
{
    rd_dtype dt = ctx->in[0]->dtype;
    if (rd_dtype_get(dt)->is_float) {
        double s = sim_get_f64(ctx->in[0], 0), l = sim_get_f64(ctx->in[1], 0), d = sim_get_f64(ctx->in[2], 0);
        if (d == 0.0)
            return tc_err(ctx, err, RD_E_INVAL, "delta is zero");
        double c = ceil((l - s) / d);
        if (!(c < 9.0e18))
            return tc_err(ctx, err, RD_E_INVAL, "range of %g..%g by %g has no finite size", s, l, d);
        *count = c > 0 ? (int64_t)c : 0;
        return RD_OK;
    }
    int64_t s = sim_get_int(ctx->in[0], 0), l = sim_get_int(ctx->in[1], 0), d = sim_get_int(ctx->in[2], 0);
    if (d == 0)
        return tc_err(ctx, err, RD_E_INVAL, "delta is zero");
    /* |l - s| fits in int64 for the int16/int32 inputs; int64 extremes are clamped by the division */
    __int128 diff = (__int128)l - s;
    __int128 c = diff / d + ((diff % d) != 0 && ((diff < 0) == (d < 0)) ? 1 : 0);
    *count = c > 0 ? (c > INT64_MAX ? INT64_MAX : (int64_t)c) : 0;
    return RD_OK;
}

static rd_status range_infer(sim_op_ctx *ctx, rd_error *err)
{
    for (int k = 0; k < 3; k++) {
        if (ctx->in[k]->dtype != ctx->in[0]->dtype || !range_dtype_ok(ctx->in[k]->dtype))
            return sim_err_dtype(ctx, k, err);
        if (rd_tensor_numel(ctx->in[k]) != 1)
            return tc_err(ctx, err, RD_E_INVAL, "input %d must be a scalar", k);
    }
    for (int k = 0; k < 3; k++)
        if (!ctx->in[k]->data)
            return sim_defer(ctx);
    int64_t n;
    rd_status st = range_count(ctx, &n, err);
    if (st != RD_OK)
        return st;
    st = tc_check_shape(ctx, ctx->in[0]->dtype, 1, &n, err);
    if (st != RD_OK)
        return st;
    sim_set_shape(&ctx->out[0], ctx->in[0]->dtype, 1, &n);
    return RD_OK;
}

static rd_status range_eval(sim_op_ctx *ctx, rd_error *err)
{
    (void)err;
    rd_tensor *o = &ctx->out[0];
    int64_t n = rd_tensor_numel(o);
    if (rd_dtype_get(o->dtype)->is_float) {
        /* start + i*delta in double, rounded once to the output dtype (no accumulated error) */
        double s = sim_get_f64(ctx->in[0], 0), d = sim_get_f64(ctx->in[2], 0);
        for (int64_t i = 0; i < n; i++)
            sim_set_f64(o, i, s + (double)i * d);
        return RD_OK;
    }
    int64_t s = sim_get_int(ctx->in[0], 0), d = sim_get_int(ctx->in[2], 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
        switch (o->dtype) {
        case RD_DT_I64:
            ((int64_t *)o->data)[i] = v;
            break;
        case RD_DT_I32:
            ((int32_t *)o->data)[i] = (int32_t)v;
            break;
        default:
            ((int16_t *)o->data)[i] = (int16_t)v;
            break;
        }
    }
    return RD_OK;
}

const sim_op_def op_range = {.name = "Range",
                             .domain = "",
                             .since = 11,
                             .min_in = 3,
                             .max_in = 3,
                             .min_out = 1,
                             .max_out = 1,
                             .infer = range_infer,
                             .eval = {[SIM_PREC_F32] = range_eval}};
