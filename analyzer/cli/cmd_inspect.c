/*
 * cmd_inspect.c: `rknn-diag inspect MODEL`: inputs and outputs with shapes, opsets, an op histogram,
 * every unsupported op with its nodes, parameter count and MACs (text or --json).
 */
#include "json_out.h"
#include "cmd_spec.h"
#include "config_model.h"
#include "edit_model.h"
#include "cmd_inspect_rknn.h"
#include "prune.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_count {
    const char *op_type;
    const char *domain;
    int count;
    bool supported;
} op_count;

/* One input or output as JSON; clears *ok when memory ran out (an_json_add). */
static cJSON *value_json(const rd_model *m, int value, bool *ok)
{
    rd_value_info vi;
    rd_model_value(m, (size_t)value, &vi);
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        *ok = false;
        return NULL;
    }
    an_json_add(o, "name", cJSON_CreateString(vi.name), ok);
    an_json_add(o, "dtype", cJSON_CreateString(rd_dtype_name(vi.dtype)), ok);
    cJSON *shape = vi.rank >= 0 ? cJSON_CreateArray() : cJSON_CreateNull();
    if (!an_json_add(o, "shape", shape, ok))
        return o;
    for (int d = 0; d < vi.rank; d++)
        an_json_push(shape,
                     vi.dim_params[d] ? cJSON_CreateString(vi.dim_params[d])
                     : vi.dims[d] < 0 ? cJSON_CreateNull()
                                      : cJSON_CreateNumber((double)vi.dims[d]),
                     ok);
    return o;
}

#define MAX_OP_TYPES 512

/* What inspect prints about the nodes, from one pass over them. */
typedef struct node_summary {
    op_count ops[MAX_OP_TYPES]; /* by count, then name */
    int n_ops;
    int64_t macs;
    bool macs_unknown; /* a weighted layer's MACs need shapes fixed only at run time */
} node_summary;

static int cmp_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->op_type, y->op_type);
}

static void summarize(const rd_model *m, node_summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        int k;
        for (k = 0; k < s->n_ops; k++)
            if (strcmp(s->ops[k].op_type, ni.op_type) == 0 && strcmp(s->ops[k].domain, ni.domain) == 0)
                break;
        if (k == s->n_ops && k < MAX_OP_TYPES)
            s->ops[s->n_ops++] = (op_count){ni.op_type, ni.domain, 0, ni.supported};
        if (k < MAX_OP_TYPES)
            s->ops[k].count++;
        if (ni.folded)
            continue;
        s->macs += ni.macs;
        rd_op_info op;
        if (ni.macs == 0 && rd_op_find(ni.domain, ni.op_type, &op) && op.has_macs && op.weight_input)
            s->macs_unknown = true;
    }
    qsort(s->ops, (size_t)s->n_ops, sizeof s->ops[0], cmp_count);
}

/* The next node from *i on that the reference cannot run, into *ni (*i then past it); false after the last. */
static bool next_unsupported(const rd_model *m, size_t *i, rd_node_info *ni)
{
    while (*i < rd_model_node_count(m)) {
        rd_model_node(m, (*i)++, ni);
        if (!ni->supported)
            return true;
    }
    return false;
}

/* The prunable channels (an_prune_analyze): RD_OK with *have false for a model the pruner cannot rewrite
   (no line, no key), an error only when memory ran out. */
static rd_status prune_summary(const rd_model *m, an_prune_plan *plan, bool *have, rd_error *err)
{
    rd_error why = {0};
    rd_status st = an_prune_analyze(m, plan, &why);
    *have = st == RD_OK;
    if (st == RD_E_NOMEM) {
        *err = why;
        return st;
    }
    return RD_OK;
}

/* The graph's inputs (outputs) as rows: name, dtype, shape. */
static void print_values(FILE *out, const rd_model *m, bool outputs)
{
    size_t n = outputs ? rd_model_output_count(m) : rd_model_input_count(m);
    for (size_t i = 0; i < n; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)(outputs ? rd_model_output(m, i) : rd_model_input(m, i)), &vi);
        char shape[128];
        rd_dims_str(vi.rank, vi.dims, vi.dim_params, shape, sizeof shape);
        fprintf(out, "  %-32s %-8s %s\n", RD_TEXT_SHOWN(vi.name), rd_dtype_name(vi.dtype), shape);
    }
}

static rd_status print_text(FILE *out, const char *path, const rd_frontend_info *info, const rd_model *m,
                            const node_summary *sum, rd_error *err)
{
    an_prune_plan plan; /* first: nothing is printed when memory runs out */
    bool have_plan;
    if (prune_summary(m, &plan, &have_plan, err) != RD_OK)
        return err->code;
    fprintf(out, "model      %s\nformat     %s: %s\nIR         %d\nopset      %d\nproducer   %s\n", RD_TEXT_SHOWN(path),
            rd_model_format_name(info->format), RD_TEXT_SHOWN(info->detail), rd_model_ir_version(m),
            rd_model_opset(m, ""), RD_TEXT_SHOWN(rd_model_producer(m)));
    fprintf(out, "\ninputs:\n");
    print_values(out, m, false);
    fprintf(out, "outputs:\n");
    print_values(out, m, true);
    fprintf(out, "\n%zu nodes, ops:\n", rd_model_node_count(m));
    for (int k = 0; k < sum->n_ops; k++)
        fprintf(out, "  %-24s %5d%s\n", RD_TEXT_SHOWN(sum->ops[k].op_type), sum->ops[k].count,
                sum->ops[k].supported ? "" : "   UNSUPPORTED");
    fprintf(out, "\nparameters %lld\nMACs       %lld%s\n", (long long)rd_model_param_count(m), (long long)sum->macs,
            sum->macs_unknown ? " (some layers unknown until the input shapes are fixed: --input-shape)" : "");
    fprintf(out, "layout layers (Reshape/Transpose) %d\n", an_layout_layer_count(m));

    if (have_plan) {
        fprintf(out, "prunable:  %zu channels, %.5f MB, %.5f GFLOPs (rknn-diag prune)\n", plan.n_channels,
                an_prune_mb(plan.weight_bytes_removed), an_prune_gflops(plan.macs_removed));
        an_prune_plan_fini(&plan);
    }
    rd_node_info ni;
    for (size_t i = 0, shown = 0; next_unsupported(m, &i, &ni); shown++) {
        if (shown == 0)
            fprintf(out, "\nunsupported ops (the FP32 reference cannot run this model yet):\n");
        fprintf(out, "  %s%s%s  node '%s'\n", RD_TEXT_SHOWN(ni.domain), ni.domain[0] ? "." : "",
                RD_TEXT_SHOWN(ni.op_type), RD_TEXT_SHOWN(ni.name));
    }
    return RD_OK;
}

/* The JSON of inspect, built with an_json_add/an_json_push: printed whole or not at all. */
static rd_status print_json(FILE *out, const char *path, const rd_frontend_info *info, const rd_model *m,
                            const node_summary *sum, rd_error *err)
{
    bool ok = true;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    an_json_add(root, "model", cJSON_CreateString(path), &ok);
    an_json_add(root, "format", cJSON_CreateString(rd_model_format_name(info->format)), &ok);
    an_json_add(root, "format_detail", cJSON_CreateString(info->detail), &ok);
    an_json_add(root, "quantized", cJSON_CreateBool(info->quantized), &ok);
    an_json_add(root, "ir_version", cJSON_CreateNumber((double)rd_model_ir_version(m)), &ok);
    an_json_add(root, "opset", cJSON_CreateNumber((double)rd_model_opset(m, "")), &ok);
    an_json_add(root, "producer", cJSON_CreateString(rd_model_producer(m)), &ok);
    for (int k = 0; k < 2; k++) { /* "inputs", then "outputs" */
        cJSON *list = cJSON_CreateArray();
        size_t n = k ? rd_model_output_count(m) : rd_model_input_count(m);
        if (an_json_add(root, k ? "outputs" : "inputs", list, &ok))
            for (size_t i = 0; i < n; i++)
                an_json_push(list, value_json(m, k ? rd_model_output(m, i) : rd_model_input(m, i), &ok), &ok);
    }
    an_json_add(root, "nodes", cJSON_CreateNumber((double)rd_model_node_count(m)), &ok);
    cJSON *hist = cJSON_CreateObject();
    if (an_json_add(root, "ops", hist, &ok))
        for (int k = 0; k < sum->n_ops; k++)
            an_json_add(hist, sum->ops[k].op_type, cJSON_CreateNumber(sum->ops[k].count), &ok);
    cJSON *uns = cJSON_CreateArray();
    if (an_json_add(root, "unsupported", uns, &ok)) {
        rd_node_info ni;
        for (size_t i = 0; ok && next_unsupported(m, &i, &ni);) {
            cJSON *o = cJSON_CreateObject();
            if (!an_json_push(uns, o, &ok))
                break;
            an_json_add(o, "op_type", cJSON_CreateString(ni.op_type), &ok);
            an_json_add(o, "domain", cJSON_CreateString(ni.domain), &ok);
            an_json_add(o, "node", cJSON_CreateString(ni.name), &ok);
        }
    }
    an_json_add(root, "parameters", cJSON_CreateNumber((double)rd_model_param_count(m)), &ok);
    an_json_add(root, "macs", cJSON_CreateNumber((double)sum->macs), &ok);
    an_json_add(root, "macs_complete", cJSON_CreateBool(!sum->macs_unknown), &ok);
    an_json_add(root, "layout_layers", cJSON_CreateNumber(an_layout_layer_count(m)), &ok);

    an_prune_plan plan;
    bool have_plan;
    rd_status st = prune_summary(m, &plan, &have_plan, err);
    if (st == RD_OK && have_plan) {
        cJSON *pr = cJSON_CreateObject();
        if (an_json_add(root, "prunable", pr, &ok)) {
            an_json_add(pr, "channels", cJSON_CreateNumber((double)plan.n_channels), &ok);
            an_json_add(pr, "weight_bytes", cJSON_CreateNumber((double)plan.weight_bytes_removed), &ok);
            an_json_add(pr, "macs", cJSON_CreateNumber((double)plan.macs_removed), &ok);
        }
        an_prune_plan_fini(&plan);
    }
    if (st == RD_OK && ok)
        return an_json_print(out, root) ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
    cJSON_Delete(root);
    return st != RD_OK ? st : rd_errorf(err, RD_E_NOMEM, "out of memory");
}

static int inspect_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    (void)args;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_frontend_info info;
    int rc = AN_GO;
    if (an_cmd_open_model(ctx, cmd, true, &info, &m, &err) != RD_OK)
        rc = an_fail(ctx, &err);
    if (rc == AN_GO) {
        node_summary sum;
        summarize(m, &sum);
        rd_status st = cmd->json ? print_json(ctx->out, cmd->model, &info, m, &sum, &err)
                                 : print_text(ctx->out, cmd->model, &info, m, &sum, &err);
        rc = st == RD_OK ? AN_EXIT_OK : an_fail(ctx, &err);
    }
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_inspect = {
    .usage = "rknn-diag inspect MODEL [--json] [--graph-inputs NAME,..] [--graph-outputs NAME,..]",
    .about = "Shows the model's format, inputs and outputs, opsets, op histogram, unsupported ops\n"
             "(all of them, with node names), parameter count and multiply-accumulates. MODEL is\n"
             "any format rknn-diag reads, recognised by content (docs/frontends.md): MODEL.onnx, .tflite,\n"
             "a TensorFlow frozen .pb, a Darknet .cfg or Caffe .prototxt with its weights beside it, a\n"
             "TorchScript .pt (with --input-shape for every argument of forward). --graph-inputs and\n"
             "--graph-outputs show the subgraph between those tensors, as the other commands cut it.",
    .groups = AN_OG_SHAPE | AN_OG_CUT | AN_OG_JSON,
    .model = "MODEL.onnx",
    .more_help = an_inspect_rknn_help,
    .main = inspect_main,
    .form = an_inspect_rknn_form, /* a .rknn model or --build-log: cmd_inspect_rknn.c */
};
