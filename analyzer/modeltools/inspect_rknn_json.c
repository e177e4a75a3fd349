/*
 * inspect_rknn_json.c: `rknn-diag inspect MODEL.rknn --json`, schema "rknn-diag/inspect-rknn/1"
 * (docs/rknn-model.md lists every key). Everything the reader decodes is there; nothing is cut.
 */
#include "inspect_rknn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static cJSON *str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* A number, or null for NaN and infinities (not JSON). */
static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* An array of n numbers of type int64 ('l'), int32 ('i'), float ('f') or double ('d'). */
static cJSON *nums_json(const void *v, size_t n, char kind)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        double x = kind == 'l'   ? (double)((const int64_t *)v)[i]
                   : kind == 'i' ? (double)((const int32_t *)v)[i]
                   : kind == 'f' ? (double)((const float *)v)[i]
                                 : ((const double *)v)[i];
        cJSON_AddItemToArray(a, num(x));
    }
    return a;
}

cJSON *an_rk_value_json(const rd_rknn_value *v)
{
    if (!v)
        return cJSON_CreateNull();
    switch (v->kind) {
    case RD_RKNN_V_BOOL:
        return cJSON_CreateBool(v->b);
    case RD_RKNN_V_INT:
        return cJSON_CreateNumber((double)v->i);
    case RD_RKNN_V_FLOAT:
        return num(v->f);
    case RD_RKNN_V_STRING:
        return cJSON_CreateString(v->s);
    case RD_RKNN_V_BYTES: {
        cJSON *o = cJSON_CreateObject();
        char *hex = malloc(2 * v->len + 1);
        for (size_t i = 0; hex && i < v->len; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)v->s[i]);
        if (hex)
            hex[2 * v->len] = '\0';
        cJSON_AddStringToObject(o, "bytes_hex", hex ? hex : "");
        free(hex);
        return o;
    }
    case RD_RKNN_V_LIST:
    case RD_RKNN_V_TUPLE: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < v->n; i++)
            cJSON_AddItemToArray(a, an_rk_value_json(&v->items[i]));
        return a;
    }
    case RD_RKNN_V_MAP: {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; i < v->n; i++)
            cJSON_AddItemToObject(o, v->keys[i], an_rk_value_json(&v->items[i]));
        return o;
    }
    default:
        return cJSON_CreateNull();
    }
}

static cJSON *tensor_json(const rd_rknn_model *m, const rd_rknn_tensor *t)
{
    char buf[32];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", t->index);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "dtype", rd_rknn_dtype_name(t->dtype, buf, sizeof buf));
    cJSON_AddNumberToObject(o, "dtype_code", t->dtype);
    cJSON_AddStringToObject(o, "layout", rd_rknn_layout_name(t->layout, buf, sizeof buf));
    cJSON_AddNumberToObject(o, "layout_code", t->layout);
    cJSON_AddStringToObject(o, "role", rd_rknn_role_name(t->role, buf, sizeof buf));
    cJSON_AddNumberToObject(o, "role_code", t->role);
    cJSON_AddItemToObject(o, "shape", nums_json(t->shape, t->rank, 'l'));
    cJSON_AddItemToObject(o, "native_shape", nums_json(t->native_shape, t->native_rank, 'l'));
    cJSON_AddStringToObject(o, "qmethod", t->qmethod);
    cJSON_AddStringToObject(o, "qtype", t->qtype);
    cJSON_AddItemToObject(o, "min", nums_json(t->min, t->n_min, 'f'));
    cJSON_AddItemToObject(o, "max", nums_json(t->max, t->n_max, 'f'));
    cJSON_AddItemToObject(o, "scale", nums_json(t->scale, t->n_scale, 'f'));
    cJSON_AddItemToObject(o, "zero_point", nums_json(t->zero_point, t->n_zero_point, 'i'));
    cJSON_AddNumberToObject(o, "size", (double)t->size);
    cJSON_AddNumberToObject(o, "mem_offset", (double)t->mem_offset);
    if (t->blob >= 0) {
        const uint8_t *data;
        size_t len = 0;
        rd_rknn_blob(m, (size_t)t->blob, &data, &len, NULL);
        cJSON_AddNumberToObject(o, "blob", t->blob);
        cJSON_AddNumberToObject(o, "blob_bytes", (double)len);
    } else {
        cJSON_AddNullToObject(o, "blob");
        cJSON_AddNullToObject(o, "blob_bytes");
    }
    cJSON_AddNumberToObject(o, "producer", t->producer);
    cJSON_AddNumberToObject(o, "consumers", (double)t->n_consumers);
    return o;
}

static cJSON *names_json(const rd_rknn_graph *g, const int32_t *idx, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(rd_rknn_tensor_name(g, idx[i])));
    return a;
}

static cJSON *node_json(const rd_rknn_graph *g, const rd_rknn_node *n)
{
    char buf[32];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", n->index);
    cJSON_AddStringToObject(o, "op_type", n->op_type);
    cJSON_AddStringToObject(o, "name", n->name);
    cJSON_AddStringToObject(o, "target", rd_rknn_target_name(n->target));
    if (n->has_target_code)
        cJSON_AddNumberToObject(o, "target_code", n->target_code);
    else
        cJSON_AddNullToObject(o, "target_code");
    cJSON_AddStringToObject(o, "dtype", rd_rknn_dtype_name(rd_rknn_node_dtype(g, n), buf, sizeof buf));
    cJSON_AddItemToObject(o, "inputs", nums_json(n->inputs, n->n_inputs, 'i'));
    cJSON_AddItemToObject(o, "outputs", nums_json(n->outputs, n->n_outputs, 'i'));
    cJSON_AddItemToObject(o, "input_names", names_json(g, n->inputs, n->n_inputs));
    cJSON_AddItemToObject(o, "output_names", names_json(g, n->outputs, n->n_outputs));
    if (n->param_type) {
        cJSON *p = cJSON_AddObjectToObject(o, "params");
        cJSON_AddNumberToObject(p, "type", n->param_type);
        cJSON_AddItemToObject(p, "type_name", str_or_null(n->param_type_name));
        cJSON *fields = cJSON_AddArrayToObject(p, "fields");
        for (size_t i = 0; i < n->n_params; i++) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddNumberToObject(f, "slot", n->params[i].slot);
            cJSON_AddItemToObject(f, "name", str_or_null(n->params[i].name));
            cJSON_AddBoolToObject(f, "guessed", n->params[i].guessed);
            cJSON_AddItemToObject(f, "value", an_rk_value_json(&n->params[i].value));
            cJSON_AddItemToArray(fields, f);
        }
    } else {
        cJSON_AddNullToObject(o, "params");
    }
    cJSON_AddItemToObject(o, "attrs", an_rk_value_json(n->attrs));
    cJSON_AddBoolToObject(o, "attrs_partial", n->attrs_partial);
    cJSON_AddItemToObject(o, "task_counts", nums_json(n->task_counts, n->n_task_counts, 'i'));
    return o;
}

/* Per-op-type counts (also used for the layer tables of build logs). */
cJSON *an_rk_ops_json(const rd_rknn_op_count *ops, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op_type", ops[i].op_type);
        cJSON_AddNumberToObject(o, "total", (double)ops[i].total);
        cJSON_AddNumberToObject(o, "npu", (double)ops[i].on_npu);
        cJSON_AddNumberToObject(o, "cpu", (double)ops[i].on_cpu);
        cJSON_AddNumberToObject(o, "float16", (double)ops[i].float16);
        cJSON_AddNumberToObject(o, "int8", (double)ops[i].int8);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *graph_json(const rd_rknn_model *m, const rd_rknn_graph *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "inputs", nums_json(g->inputs, g->n_inputs, 'i'));
    cJSON_AddItemToObject(o, "outputs", nums_json(g->outputs, g->n_outputs, 'i'));
    cJSON_AddItemToObject(o, "input_names", names_json(g, g->inputs, g->n_inputs));
    cJSON_AddItemToObject(o, "output_names", names_json(g, g->outputs, g->n_outputs));
    cJSON_AddItemToObject(o, "op_summary", an_rk_ops_json(g->ops, g->n_ops));
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (size_t i = 0; i < g->n_nodes; i++)
        cJSON_AddItemToArray(nodes, node_json(g, &g->nodes[i]));
    cJSON *tensors = cJSON_AddArrayToObject(o, "tensors");
    for (size_t i = 0; i < g->n_tensors; i++)
        cJSON_AddItemToArray(tensors, tensor_json(m, &g->tensors[i]));
    return o;
}

static void add_io(cJSON *root, const rd_rknn_info *in)
{
    cJSON *rio = cJSON_AddArrayToObject(root, "runtime_io");
    for (size_t i = 0; i < in->n_runtime_io; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", in->runtime_io[i].name);
        cJSON_AddBoolToObject(o, "is_output", in->runtime_io[i].is_output);
        cJSON_AddStringToObject(o, "dtype", in->runtime_io[i].dtype);
        cJSON_AddStringToObject(o, "layout", in->runtime_io[i].layout);
        cJSON_AddItemToArray(rio, o);
    }
    cJSON *attrs = cJSON_AddArrayToObject(root, "attrs");
    for (size_t i = 0; i < in->n_io_attrs; i++) {
        const rd_rknn_io_attr *a = &in->io_attrs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", a->name);
        cJSON_AddBoolToObject(o, "is_output", a->is_output);
        cJSON_AddNumberToObject(o, "idx", a->idx);
        cJSON_AddItemToObject(o, "shape", an_rk_value_json(a->shape));
        cJSON_AddStringToObject(o, "layout", a->layout);
        cJSON_AddStringToObject(o, "dtype", a->dtype);
        cJSON_AddItemToObject(o, "mean", nums_json(a->mean, a->n_mean, 'd'));
        cJSON_AddItemToObject(o, "std", nums_json(a->std, a->n_std, 'd'));
        cJSON_AddItemToObject(o, "reorder", an_rk_value_json(a->reorder));
        cJSON_AddItemToObject(o, "raw", an_rk_value_json(a->raw));
        cJSON_AddItemToArray(attrs, o);
    }
    cJSON *qt = cJSON_AddArrayToObject(root, "quant_tab");
    for (size_t i = 0; i < in->n_quant_tab; i++) {
        const rd_rknn_quant_entry *q = &in->quant_tab[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", q->name);
        cJSON_AddStringToObject(o, "dtype", q->dtype);
        cJSON_AddStringToObject(o, "qmethod", q->qmethod);
        cJSON_AddStringToObject(o, "qtype", q->qtype);
        cJSON_AddItemToObject(o, "min", nums_json(q->min, q->n_min, 'd'));
        cJSON_AddItemToObject(o, "max", nums_json(q->max, q->n_max, 'd'));
        cJSON_AddItemToObject(o, "scale", nums_json(q->scale, q->n_scale, 'd'));
        cJSON *zp = cJSON_AddArrayToObject(o, "zero_point");
        for (size_t k = 0; k < q->n_zero_point; k++)
            cJSON_AddItemToArray(zp, cJSON_CreateNumber((double)q->zero_point[k]));
        cJSON_AddItemToObject(o, "raw", an_rk_value_json(q->raw));
        cJSON_AddItemToArray(qt, o);
    }
    cJSON_AddItemToObject(root, "dynamic_shapes", an_rk_value_json(in->dynamic_shapes));
}

static void add_envelope(cJSON *root, const rd_rknn_info *in)
{
    cJSON *j = cJSON_AddObjectToObject(root, "json");
    cJSON_AddBoolToObject(j, "present", in->has_json);
    cJSON_AddItemToObject(j, "name", str_or_null(in->json_name));
    cJSON_AddItemToObject(j, "network_platform", str_or_null(in->network_platform));
    cJSON_AddItemToObject(j, "ori_network_platform", str_or_null(in->ori_network_platform));
    cJSON *tp = cJSON_AddArrayToObject(j, "target_platform");
    for (size_t i = 0; i < in->n_json_targets; i++)
        cJSON_AddItemToArray(tp, cJSON_CreateString(in->json_targets[i]));
    cJSON *io = cJSON_AddArrayToObject(j, "io");
    for (size_t i = 0; i < in->n_json_io; i++) {
        const rd_rknn_json_io *x = &in->json_io[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", x->name);
        cJSON_AddBoolToObject(o, "is_output", x->is_output);
        cJSON_AddNumberToObject(o, "index", x->index);
        cJSON_AddItemToObject(o, "shape", nums_json(x->shape, x->rank, 'l'));
        cJSON_AddStringToObject(o, "qnt_method", x->qnt_method);
        cJSON_AddStringToObject(o, "qnt_type", x->qnt_type);
        cJSON_AddStringToObject(o, "vx_type", x->vx_type);
        cJSON_AddItemToArray(io, o);
    }
}

cJSON *an_rk_model_json(const rd_rknn_model *m)
{
    const rd_rknn_info *in = rd_rknn_info_get(m);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "rknn-diag/inspect-rknn/1");
    cJSON_AddStringToObject(root, "model", in->path);
    cJSON_AddNumberToObject(root, "file_bytes", (double)in->file_bytes);
    cJSON *h = cJSON_AddObjectToObject(root, "header");
    cJSON_AddNumberToObject(h, "format_version", (double)in->format_version);
    cJSON_AddNumberToObject(h, "header_bytes", (double)in->header_bytes);
    cJSON_AddNumberToObject(h, "model_bytes", (double)in->model_bytes);
    cJSON_AddNumberToObject(h, "json_offset", (double)in->json_offset);
    cJSON_AddNumberToObject(h, "json_bytes", (double)in->json_bytes);
    cJSON_AddNumberToObject(root, "schema_version", in->schema_version);
    cJSON_AddStringToObject(root, "format", in->format);
    cJSON_AddStringToObject(root, "target_platform", in->target_platform);
    cJSON_AddStringToObject(root, "toolkit_version", in->toolkit_version);
    cJSON *c = cJSON_AddObjectToObject(root, "compiler");
    cJSON_AddStringToObject(c, "text", in->compiler);
    cJSON_AddStringToObject(c, "version", in->compiler_version);
    cJSON_AddNumberToObject(c, "number", in->compiler_version_number);
    cJSON_AddStringToObject(root, "source_framework", in->source_framework);
    cJSON_AddStringToObject(root, "shape_mode", in->shape_mode);
    cJSON_AddItemToObject(root, "generator", str_or_null(in->generator));
    add_envelope(root, in);
    add_io(root, in);
    cJSON_AddNumberToObject(root, "blobs", (double)rd_rknn_blob_count(m));
    cJSON *graphs = cJSON_AddArrayToObject(root, "graphs");
    for (size_t i = 0; i < rd_rknn_graph_count(m); i++)
        cJSON_AddItemToArray(graphs, graph_json(m, rd_rknn_graph_at(m, i)));
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < rd_rknn_warning_count(m); i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(rd_rknn_warning(m, i)));
    return root;
}
