/*
 * cmd_inspect.c: `rknn-diag inspect MODEL`: inputs and outputs with shapes, opsets, an op histogram,
 * every unsupported op with its nodes, parameter count and MACs (text or --json).
 */
#include "json_out.h"
#include "cli_internal.h"
#include "cli_model_args.h"
#include "edit_model.h"
#include "inspect_rknn.h"
#include "prune.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_HELP = 1, OPT_JSON, OPT_INPUT_SHAPE };

static const an_optspec inspect_opts[] = {
    {OPT_INPUT_SHAPE, "input-shape", 0, "NAME=D0,D1,..", "fix symbolic input dims (repeat per input)"},
    {OPT_JSON, "json", 0, NULL, "print JSON"},
    {OPT_HELP, "help", 'h', NULL, "show this help"},
};
#define N_INSPECT_OPTS ((int)(sizeof inspect_opts / sizeof inspect_opts[0]))

typedef struct op_count {
    const char *op_type;
    const char *domain;
    int count;
    bool supported;
} op_count;

static void value_shape(const rd_value_info *vi, char *buf, size_t len)
{
    if (vi->rank < 0) {
        snprintf(buf, len, "?");
        return;
    }
    if (vi->rank == 0) {
        snprintf(buf, len, "scalar");
        return;
    }
    size_t used = 0;
    for (int d = 0; d < vi->rank && used < len; d++) {
        int w = vi->dim_params[d] ? snprintf(buf + used, len - used, "%s%s", d ? "x" : "", vi->dim_params[d])
                : vi->dims[d] < 0 ? snprintf(buf + used, len - used, "%s?", d ? "x" : "")
                                  : snprintf(buf + used, len - used, "%s%lld", d ? "x" : "", (long long)vi->dims[d]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static cJSON *value_json(const rd_model *m, int value)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)value, &vi);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", vi.name);
    cJSON_AddStringToObject(o, "dtype", rd_dtype_name(vi.dtype));
    if (vi.rank >= 0) {
        cJSON *shape = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < vi.rank; d++)
            cJSON_AddItemToArray(shape, vi.dim_params[d] ? cJSON_CreateString(vi.dim_params[d])
                                        : vi.dims[d] < 0 ? cJSON_CreateNull()
                                                         : cJSON_CreateNumber((double)vi.dims[d]));
    } else {
        cJSON_AddNullToObject(o, "shape");
    }
    return o;
}

static int collect_ops(const rd_model *m, op_count *ops, int max)
{
    int n = 0;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        int k;
        for (k = 0; k < n; k++)
            if (strcmp(ops[k].op_type, ni.op_type) == 0 && strcmp(ops[k].domain, ni.domain) == 0)
                break;
        if (k == n) {
            if (n == max)
                continue;
            ops[n] = (op_count){ni.op_type, ni.domain, 0, ni.supported};
            n++;
        }
        ops[k].count++;
    }
    return n;
}

static int cmp_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->op_type, y->op_type);
}

static int64_t total_macs(const rd_model *m, bool *unknown)
{
    int64_t total = 0;
    *unknown = false;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (ni.folded)
            continue;
        total += ni.macs;
        rd_op_info op;
        if (ni.macs == 0 && rd_op_find(ni.domain, ni.op_type, &op) && op.has_macs && op.weight_input)
            *unknown = true; /* a weighted layer's MACs need shapes fixed only at run time */
    }
    return total;
}

static void print_text(FILE *out, const char *path, const rd_model *m, op_count *ops, int n_ops)
{
    fprintf(out, "model      %s\nIR         %d\nopset      %d\nproducer   %s\n", RD_TEXT_SHOWN(path),
            rd_model_ir_version(m), rd_model_opset(m, ""), RD_TEXT_SHOWN(rd_model_producer(m)));
    fprintf(out, "\ninputs:\n");
    for (size_t i = 0; i < rd_model_input_count(m); i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_input(m, i), &vi);
        char shape[128];
        value_shape(&vi, shape, sizeof shape);
        fprintf(out, "  %-32s %-8s %s\n", RD_TEXT_SHOWN(vi.name), rd_dtype_name(vi.dtype), shape);
    }
    fprintf(out, "outputs:\n");
    for (size_t i = 0; i < rd_model_output_count(m); i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)rd_model_output(m, i), &vi);
        char shape[128];
        value_shape(&vi, shape, sizeof shape);
        fprintf(out, "  %-32s %-8s %s\n", RD_TEXT_SHOWN(vi.name), rd_dtype_name(vi.dtype), shape);
    }
    fprintf(out, "\n%zu nodes, ops:\n", rd_model_node_count(m));
    for (int k = 0; k < n_ops; k++)
        fprintf(out, "  %-24s %5d%s\n", RD_TEXT_SHOWN(ops[k].op_type), ops[k].count,
                ops[k].supported ? "" : "   UNSUPPORTED");
    bool unknown;
    int64_t macs = total_macs(m, &unknown);
    fprintf(out, "\nparameters %lld\nMACs       %lld%s\n", (long long)rd_model_param_count(m), (long long)macs,
            unknown ? " (some layers unknown until the input shapes are fixed: --input-shape)" : "");
    fprintf(out, "layout layers (Reshape/Transpose) %d\n", an_layout_layer_count(m));

    an_prune_plan plan;
    if (an_prune_analyze(m, &plan, NULL) == RD_OK) { /* a model the pruner cannot rewrite just gets no line */
        fprintf(out, "prunable:  %zu channels, %.5f MB, %.5f GFLOPs (rknn-diag prune)\n", plan.n_channels,
                an_prune_mb(plan.weight_bytes_removed), an_prune_gflops(plan.macs_removed));
        an_prune_plan_fini(&plan);
    }
    int n_unsupported = 0;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (ni.supported)
            continue;
        if (n_unsupported++ == 0)
            fprintf(out, "\nunsupported ops (the FP32 reference cannot run this model yet):\n");
        fprintf(out, "  %s%s%s  node '%s'\n", RD_TEXT_SHOWN(ni.domain), ni.domain[0] ? "." : "", RD_TEXT_SHOWN(ni.op_type),
                RD_TEXT_SHOWN(ni.name));
    }
}

static void print_json(FILE *out, const char *path, const rd_model *m, op_count *ops, int n_ops)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", path);
    cJSON_AddNumberToObject(root, "ir_version", rd_model_ir_version(m));
    cJSON_AddNumberToObject(root, "opset", rd_model_opset(m, ""));
    cJSON_AddStringToObject(root, "producer", rd_model_producer(m));
    cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
    for (size_t i = 0; i < rd_model_input_count(m); i++)
        cJSON_AddItemToArray(ins, value_json(m, rd_model_input(m, i)));
    cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
    for (size_t i = 0; i < rd_model_output_count(m); i++)
        cJSON_AddItemToArray(outs, value_json(m, rd_model_output(m, i)));
    cJSON_AddNumberToObject(root, "nodes", (double)rd_model_node_count(m));
    cJSON *hist = cJSON_AddObjectToObject(root, "ops");
    for (int k = 0; k < n_ops; k++)
        cJSON_AddNumberToObject(hist, ops[k].op_type, ops[k].count);
    cJSON *uns = cJSON_AddArrayToObject(root, "unsupported");
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (ni.supported)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op_type", ni.op_type);
        cJSON_AddStringToObject(o, "domain", ni.domain);
        cJSON_AddStringToObject(o, "node", ni.name);
        cJSON_AddItemToArray(uns, o);
    }
    bool unknown;
    cJSON_AddNumberToObject(root, "parameters", (double)rd_model_param_count(m));
    cJSON_AddNumberToObject(root, "macs", (double)total_macs(m, &unknown));
    cJSON_AddBoolToObject(root, "macs_complete", !unknown);
    cJSON_AddNumberToObject(root, "layout_layers", an_layout_layer_count(m));

    an_prune_plan plan;
    if (an_prune_analyze(m, &plan, NULL) == RD_OK) {
        cJSON *pr = cJSON_AddObjectToObject(root, "prunable");
        cJSON_AddNumberToObject(pr, "channels", (double)plan.n_channels);
        cJSON_AddNumberToObject(pr, "weight_bytes", (double)plan.weight_bytes_removed);
        cJSON_AddNumberToObject(pr, "macs", (double)plan.macs_removed);
        an_prune_plan_fini(&plan);
    }
    an_json_print(out, root);
}

int an_cmd_inspect(an_cmd_ctx *ctx)
{
    if (an_inspect_rknn_wanted(ctx)) /* a .rknn model or --build-log: inspect_rknn.h */
        return an_inspect_rknn(ctx);
    const char *model_path = NULL;
    bool json = false;
    rd_input_shape shapes[AN_MAX_INPUTS];
    an_name_buf shape_names[AN_MAX_INPUTS];
    size_t n_shapes = 0;
    rd_error err = {0};
    an_opts p;
    an_opts_init(&p, ctx, inspect_opts, N_INSPECT_OPTS);
    const char *v;
    int id;
    while ((id = an_opts_next(&p, &v)) != -1) {
        switch (id) {
        case -2:
            return AN_EXIT_USAGE;
        case 0:
            if (model_path)
                return an_usage(ctx, "one model only");
            model_path = v;
            break;
        case OPT_HELP:
            an_print_help(ctx->out, "rknn-diag inspect MODEL.onnx [--json]",
                          "Shows the model's inputs and outputs, opsets, op histogram, unsupported ops (all of\n"
                          "them, with node names), parameter count and multiply-accumulates.",
                          inspect_opts, N_INSPECT_OPTS);
            fputc('\n', ctx->out);
            an_inspect_rknn_help(ctx->out);
            return AN_EXIT_OK;
        case OPT_JSON:
            json = true;
            break;
        case OPT_INPUT_SHAPE:
            if (an_parse_input_shape(v, shape_names, shapes, &n_shapes, &err) != RD_OK)
                return an_usage(ctx, "%s", err.msg);
            break;
        }
    }
    if (!model_path)
        return an_usage(ctx, "missing MODEL.onnx");
    rd_load_options lopt = {.input_shapes = shapes, .n_input_shapes = n_shapes, .allow_unsupported_ops = true};
    rd_model *m = NULL;
    if (rd_model_load(model_path, &lopt, &m, &err) != RD_OK)
        return an_fail(ctx, &err);
    op_count ops[512];
    int n_ops = collect_ops(m, ops, 512);
    qsort(ops, (size_t)n_ops, sizeof ops[0], cmp_count);
    if (json)
        print_json(ctx->out, model_path, m, ops, n_ops);
    else
        print_text(ctx->out, model_path, m, ops, n_ops);
    rd_model_destroy(m);
    return AN_EXIT_OK;
}
