/*
 * summary.c: what a graph offers besides its tables: producers and consumer counts of tensors, the name
 * index behind rd_rknn_find_tensor, per-op-type counts, and the names of the codes.
 */
#include "internal.h"

/* qsort context is not portable: sort (name, index) pairs instead. */
typedef struct named {
    const char *name;
    int32_t index;
} named;

static int cmp_named(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int cmp_ops(const void *x, const void *y)
{
    const rd_rknn_op_count *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return strcmp(a->op_type, b->op_type);
}

static int cmp_op_name(const void *x, const void *y)
{
    return strcmp(((const rd_rknn_op_count *)x)->op_type, ((const rd_rknn_op_count *)y)->op_type);
}

rd_status rk_index_graph(rd_rknn_model *m, rd_rknn_graph *g, rd_error *err)
{
    rd_rknn_tensor *ts = (rd_rknn_tensor *)g->tensors;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const rd_rknn_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_outputs; k++)
            if (ts[n->outputs[k]].producer < 0)
                ts[n->outputs[k]].producer = (int)i;
        for (size_t k = 0; k < n->n_inputs; k++)
            ts[n->inputs[k]].n_consumers++;
    }
    named *byname = rk_alloc_array(&m->arena, g->n_tensors, sizeof *byname, "tensor index", err);
    int32_t *idx = rk_alloc_array(&m->arena, g->n_tensors, sizeof *idx, "tensor index", err);
    if (!byname || !idx)
        return err->code;
    for (size_t i = 0; i < g->n_tensors; i++)
        byname[i] = (named){ts[i].name, (int32_t)i};
    qsort(byname, g->n_tensors, sizeof *byname, cmp_named);
    for (size_t i = 0; i < g->n_tensors; i++)
        idx[i] = byname[i].index;
    g->by_name = idx;

    rk_op_sample *samples = rk_alloc_array(&m->arena, g->n_nodes, sizeof *samples, "op summary", err);
    if (!samples)
        return err->code;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const rd_rknn_node *n = &g->nodes[i];
        int dt = rd_rknn_node_dtype(g, n);
        samples[i] = (rk_op_sample){n->op_type, n->target, dt == RD_DT_F16, dt == RD_DT_I8 || dt == RD_DT_U8};
    }
    rd_rknn_op_count *ops;
    rd_status st = rk_count_ops(&m->arena, samples, g->n_nodes, &ops, &g->n_ops, err);
    g->ops = ops;
    return st;
}

rd_status rk_count_ops(rk_arena *a, const rk_op_sample *s, size_t n, rd_rknn_op_count **out, size_t *n_out,
                       rd_error *err)
{
    *out = NULL;
    *n_out = 0;
    /* sort the names, merge runs, count each sample by binary search, then order by count */
    rd_rknn_op_count *ops = rk_alloc_array(a, n, sizeof *ops, "op summary", err);
    if (!ops)
        return err->code;
    for (size_t i = 0; i < n; i++)
        ops[i].op_type = s[i].op_type;
    qsort(ops, n, sizeof *ops, cmp_op_name);
    size_t n_ops = 0;
    for (size_t i = 0; i < n; i++)
        if (n_ops == 0 || strcmp(ops[n_ops - 1].op_type, ops[i].op_type) != 0)
            ops[n_ops++].op_type = ops[i].op_type;
    for (size_t i = 0; i < n; i++) {
        rd_rknn_op_count key = {.op_type = s[i].op_type};
        rd_rknn_op_count *c = bsearch(&key, ops, n_ops, sizeof *ops, cmp_op_name);
        c->total++;
        c->on_cpu += s[i].target == RD_RKNN_TARGET_CPU;
        c->on_npu += s[i].target == RD_RKNN_TARGET_NPU;
        c->float16 += s[i].float16;
        c->int8 += s[i].int8;
    }
    qsort(ops, n_ops, sizeof *ops, cmp_ops);
    *out = ops;
    *n_out = n_ops;
    return RD_OK;
}

const rd_rknn_tensor *rd_rknn_find_tensor(const rd_rknn_graph *g, const char *name)
{
    if (!g || !name || !g->by_name)
        return NULL;
    size_t lo = 0, hi = g->n_tensors;
    while (lo < hi) { /* first index whose name is >= name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(g->tensors[g->by_name[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n_tensors && strcmp(g->tensors[g->by_name[lo]].name, name) == 0)
        return &g->tensors[g->by_name[lo]];
    return NULL;
}

const char *rd_rknn_tensor_name(const rd_rknn_graph *g, int32_t index)
{
    return g && index >= 0 && (size_t)index < g->n_tensors ? g->tensors[index].name : "";
}

int rd_rknn_node_dtype(const rd_rknn_graph *g, const rd_rknn_node *n)
{
    if (n->n_inputs)
        return g->tensors[n->inputs[0]].dtype;
    if (n->n_outputs)
        return g->tensors[n->outputs[0]].dtype;
    return RD_DT_UNDEFINED;
}

const char *rd_rknn_layout_name(int layout, char *buf, size_t len)
{
    switch (layout) {
    case RD_RKNN_LAYOUT_PLAIN:
        return "plain";
    case RD_RKNN_LAYOUT_NHWC:
        return "NHWC";
    case RD_RKNN_LAYOUT_NCHW:
        return "NCHW";
    case RD_RKNN_LAYOUT_NC1HWC2:
        return "NC1HWC2";
    case RD_RKNN_LAYOUT_CONV_WEIGHT:
        return "conv_weight_packed";
    default:
        snprintf(buf, len, "layout(%d)", layout);
        return buf;
    }
}

const char *rd_rknn_role_name(int role, char *buf, size_t len)
{
    static const char *const names[] = {
        [RD_RKNN_ROLE_NONE] = "none",
        [RD_RKNN_ROLE_INPUT] = "input",
        [RD_RKNN_ROLE_OUTPUT] = "output",
        [RD_RKNN_ROLE_INTERNAL] = "internal",
        [RD_RKNN_ROLE_CONST] = "const",
        [RD_RKNN_ROLE_CONST_OTHER] = "const_other",
        [RD_RKNN_ROLE_COMPILER_CONST] = "compiler_const",
        [RD_RKNN_ROLE_REGCMD] = "regcmd",
        [RD_RKNN_ROLE_TASK] = "task",
    };
    if (role >= 0 && (size_t)role < sizeof names / sizeof names[0] && names[role])
        return names[role];
    snprintf(buf, len, "role(%d)", role);
    return buf;
}

const char *rd_rknn_target_name(rd_rknn_target target)
{
    return target == RD_RKNN_TARGET_NPU ? "NPU" : target == RD_RKNN_TARGET_CPU ? "CPU" : "other";
}

const char *rd_rknn_dtype_name(int dtype, char *buf, size_t len)
{
    if (dtype >= 0 && dtype < RD_DT_COUNT && strcmp(rd_dtype_name((rd_dtype)dtype), "unknown") != 0)
        return rd_dtype_name((rd_dtype)dtype);
    snprintf(buf, len, "dtype(%d)", dtype);
    return buf;
}
