/*
 * inspect_rknn_json.c: `rknn-diag inspect MODEL.rknn --json`, schema "rknn-diag/inspect-rknn/1"
 * (docs/rknn-model.md lists every key). Everything the reader decodes is there; nothing is cut.
 */
#include "inspect_rknn.h"
#include "json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static cJSON *str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* An array of n numbers of type int64 ('l'), int32 ('i'), float ('f') or double ('d'). */
static cJSON *nums_json(const void *v, size_t n, char kind, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        double x = kind == 'l'   ? (double)((const int64_t *)v)[i]
                   : kind == 'i' ? (double)((const int32_t *)v)[i]
                   : kind == 'f' ? (double)((const float *)v)[i]
                                 : ((const double *)v)[i];
        an_json_push(a, an_json_number_or_null(x), ok);
    }
    return a;
}

cJSON *an_rk_value_json(const rd_rknn_value *v, bool *ok)
{
    if (!v)
        return cJSON_CreateNull();
    switch (v->kind) {
    case RD_RKNN_V_BOOL:
        return cJSON_CreateBool(v->b);
    case RD_RKNN_V_INT:
        return cJSON_CreateNumber((double)v->i);
    case RD_RKNN_V_FLOAT:
        return an_json_number_or_null(v->f);
    case RD_RKNN_V_STRING:
        return cJSON_CreateString(v->s);
    case RD_RKNN_V_BYTES: {
        cJSON *o = cJSON_CreateObject();
        char *hex = malloc(2 * v->len + 1);
        for (size_t i = 0; hex && i < v->len; i++)
            snprintf(hex + 2 * i, 3, "%02x", (unsigned char)v->s[i]);
        if (hex)
            hex[2 * v->len] = '\0';
        if (hex)
            an_json_add_str(o, "bytes_hex", hex, ok);
        else
            *ok = false;
        free(hex);
        return o;
    }
    case RD_RKNN_V_LIST:
    case RD_RKNN_V_TUPLE: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < v->n; i++)
            an_json_push(a, an_rk_value_json(&v->items[i], ok), ok);
        return a;
    }
    case RD_RKNN_V_MAP: {
        cJSON *o = cJSON_CreateObject();
        for (size_t i = 0; i < v->n; i++)
            an_json_add(o, v->keys[i], an_rk_value_json(&v->items[i], ok), ok);
        return o;
    }
    default:
        return cJSON_CreateNull();
    }
}

static cJSON *tensor_json(const rd_rknn_model *m, const rd_rknn_tensor *t, bool *ok)
{
    char buf[32];
    cJSON *o = cJSON_CreateObject();
    an_json_add_num(o, "index", t->index, ok);
    an_json_add_str(o, "name", t->name, ok);
    an_json_add_str(o, "dtype", rd_rknn_dtype_name(t->dtype, buf, sizeof buf), ok);
    an_json_add_num(o, "dtype_code", t->dtype, ok);
    an_json_add_str(o, "layout", rd_rknn_layout_name(t->layout, buf, sizeof buf), ok);
    an_json_add_num(o, "layout_code", t->layout, ok);
    an_json_add_str(o, "role", rd_rknn_role_name(t->role, buf, sizeof buf), ok);
    an_json_add_num(o, "role_code", t->role, ok);
    an_json_add(o, "shape", nums_json(t->shape, t->rank, 'l', ok), ok);
    an_json_add(o, "native_shape", nums_json(t->native_shape, t->native_rank, 'l', ok), ok);
    an_json_add_str(o, "qmethod", t->qmethod, ok);
    an_json_add_str(o, "qtype", t->qtype, ok);
    an_json_add(o, "min", nums_json(t->min, t->n_min, 'f', ok), ok);
    an_json_add(o, "max", nums_json(t->max, t->n_max, 'f', ok), ok);
    an_json_add(o, "scale", nums_json(t->scale, t->n_scale, 'f', ok), ok);
    an_json_add(o, "zero_point", nums_json(t->zero_point, t->n_zero_point, 'i', ok), ok);
    an_json_add_num(o, "size", (double)t->size, ok);
    an_json_add_num(o, "mem_offset", (double)t->mem_offset, ok);
    if (t->blob >= 0) {
        const uint8_t *data;
        size_t len = 0;
        rd_rknn_blob(m, (size_t)t->blob, &data, &len, NULL);
        an_json_add_num(o, "blob", t->blob, ok);
        an_json_add_num(o, "blob_bytes", (double)len, ok);
    } else {
        an_json_add_null(o, "blob", ok);
        an_json_add_null(o, "blob_bytes", ok);
    }
    an_json_add_num(o, "producer", t->producer, ok);
    an_json_add_num(o, "consumers", (double)t->n_consumers, ok);
    return o;
}

static cJSON *names_json(const rd_rknn_graph *g, const int32_t *idx, size_t n, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        an_json_push(a, cJSON_CreateString(rd_rknn_tensor_name(g, idx[i])), ok);
    return a;
}

static cJSON *node_json(const rd_rknn_graph *g, const rd_rknn_node *n, bool *ok)
{
    char buf[32];
    cJSON *o = cJSON_CreateObject();
    an_json_add_num(o, "index", n->index, ok);
    an_json_add_str(o, "op_type", n->op_type, ok);
    an_json_add_str(o, "name", n->name, ok);
    an_json_add_str(o, "target", rd_rknn_target_name(n->target), ok);
    if (n->has_target_code)
        an_json_add_num(o, "target_code", n->target_code, ok);
    else
        an_json_add_null(o, "target_code", ok);
    an_json_add_str(o, "dtype", rd_rknn_dtype_name(rd_rknn_node_dtype(g, n), buf, sizeof buf), ok);
    an_json_add(o, "inputs", nums_json(n->inputs, n->n_inputs, 'i', ok), ok);
    an_json_add(o, "outputs", nums_json(n->outputs, n->n_outputs, 'i', ok), ok);
    an_json_add(o, "input_names", names_json(g, n->inputs, n->n_inputs, ok), ok);
    an_json_add(o, "output_names", names_json(g, n->outputs, n->n_outputs, ok), ok);
    if (n->param_type) {
        cJSON *p = an_json_add_object(o, "params", ok);
        an_json_add_num(p, "type", n->param_type, ok);
        an_json_add(p, "type_name", str_or_null(n->param_type_name), ok);
        cJSON *fields = an_json_add_array(p, "fields", ok);
        for (size_t i = 0; i < n->n_params; i++) {
            cJSON *f = cJSON_CreateObject();
            an_json_add_num(f, "slot", n->params[i].slot, ok);
            an_json_add(f, "name", str_or_null(n->params[i].name), ok);
            an_json_add_bool(f, "guessed", n->params[i].guessed, ok);
            an_json_add(f, "value", an_rk_value_json(&n->params[i].value, ok), ok);
            an_json_push(fields, f, ok);
        }
    } else {
        an_json_add_null(o, "params", ok);
    }
    an_json_add(o, "attrs", an_rk_value_json(n->attrs, ok), ok);
    an_json_add_bool(o, "attrs_partial", n->attrs_partial, ok);
    an_json_add(o, "task_counts", nums_json(n->task_counts, n->n_task_counts, 'i', ok), ok);
    return o;
}

/* Per-op-type counts (also used for the layer tables of build logs). */
cJSON *an_rk_ops_json(const rd_rknn_op_count *ops, size_t n, bool *ok)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "op_type", ops[i].op_type, ok);
        an_json_add_num(o, "total", (double)ops[i].total, ok);
        an_json_add_num(o, "npu", (double)ops[i].on_npu, ok);
        an_json_add_num(o, "cpu", (double)ops[i].on_cpu, ok);
        an_json_add_num(o, "float16", (double)ops[i].float16, ok);
        an_json_add_num(o, "int8", (double)ops[i].int8, ok);
        an_json_push(a, o, ok);
    }
    return a;
}

static cJSON *graph_json(const rd_rknn_model *m, const rd_rknn_graph *g, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    an_json_add(o, "inputs", nums_json(g->inputs, g->n_inputs, 'i', ok), ok);
    an_json_add(o, "outputs", nums_json(g->outputs, g->n_outputs, 'i', ok), ok);
    an_json_add(o, "input_names", names_json(g, g->inputs, g->n_inputs, ok), ok);
    an_json_add(o, "output_names", names_json(g, g->outputs, g->n_outputs, ok), ok);
    an_json_add(o, "op_summary", an_rk_ops_json(g->ops, g->n_ops, ok), ok);
    cJSON *nodes = an_json_add_array(o, "nodes", ok);
    for (size_t i = 0; i < g->n_nodes; i++)
        an_json_push(nodes, node_json(g, &g->nodes[i], ok), ok);
    cJSON *tensors = an_json_add_array(o, "tensors", ok);
    for (size_t i = 0; i < g->n_tensors; i++)
        an_json_push(tensors, tensor_json(m, &g->tensors[i], ok), ok);
    return o;
}

static void add_io(cJSON *root, const rd_rknn_info *in, bool *ok)
{
    cJSON *rio = an_json_add_array(root, "runtime_io", ok);
    for (size_t i = 0; i < in->n_runtime_io; i++) {
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "name", in->runtime_io[i].name, ok);
        an_json_add_bool(o, "is_output", in->runtime_io[i].is_output, ok);
        an_json_add_str(o, "dtype", in->runtime_io[i].dtype, ok);
        an_json_add_str(o, "layout", in->runtime_io[i].layout, ok);
        an_json_push(rio, o, ok);
    }
    cJSON *attrs = an_json_add_array(root, "attrs", ok);
    for (size_t i = 0; i < in->n_io_attrs; i++) {
        const rd_rknn_io_attr *a = &in->io_attrs[i];
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "name", a->name, ok);
        an_json_add_bool(o, "is_output", a->is_output, ok);
        an_json_add_num(o, "idx", a->idx, ok);
        an_json_add(o, "shape", an_rk_value_json(a->shape, ok), ok);
        an_json_add_str(o, "layout", a->layout, ok);
        an_json_add_str(o, "dtype", a->dtype, ok);
        an_json_add(o, "mean", nums_json(a->mean, a->n_mean, 'd', ok), ok);
        an_json_add(o, "std", nums_json(a->std, a->n_std, 'd', ok), ok);
        an_json_add(o, "reorder", an_rk_value_json(a->reorder, ok), ok);
        an_json_add(o, "raw", an_rk_value_json(a->raw, ok), ok);
        an_json_push(attrs, o, ok);
    }
    cJSON *qt = an_json_add_array(root, "quant_tab", ok);
    for (size_t i = 0; i < in->n_quant_tab; i++) {
        const rd_rknn_quant_entry *q = &in->quant_tab[i];
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "name", q->name, ok);
        an_json_add_str(o, "dtype", q->dtype, ok);
        an_json_add_str(o, "qmethod", q->qmethod, ok);
        an_json_add_str(o, "qtype", q->qtype, ok);
        an_json_add(o, "min", nums_json(q->min, q->n_min, 'd', ok), ok);
        an_json_add(o, "max", nums_json(q->max, q->n_max, 'd', ok), ok);
        an_json_add(o, "scale", nums_json(q->scale, q->n_scale, 'd', ok), ok);
        cJSON *zp = an_json_add_array(o, "zero_point", ok);
        for (size_t k = 0; k < q->n_zero_point; k++)
            an_json_push(zp, cJSON_CreateNumber((double)q->zero_point[k]), ok);
        an_json_add(o, "raw", an_rk_value_json(q->raw, ok), ok);
        an_json_push(qt, o, ok);
    }
    an_json_add(root, "dynamic_shapes", an_rk_value_json(in->dynamic_shapes, ok), ok);
}

static void add_envelope(cJSON *root, const rd_rknn_info *in, bool *ok)
{
    cJSON *j = an_json_add_object(root, "json", ok);
    an_json_add_bool(j, "present", in->has_json, ok);
    an_json_add(j, "name", str_or_null(in->json_name), ok);
    an_json_add(j, "network_platform", str_or_null(in->network_platform), ok);
    an_json_add(j, "ori_network_platform", str_or_null(in->ori_network_platform), ok);
    cJSON *tp = an_json_add_array(j, "target_platform", ok);
    for (size_t i = 0; i < in->n_json_targets; i++)
        an_json_push(tp, cJSON_CreateString(in->json_targets[i]), ok);
    cJSON *io = an_json_add_array(j, "io", ok);
    for (size_t i = 0; i < in->n_json_io; i++) {
        const rd_rknn_json_io *x = &in->json_io[i];
        cJSON *o = cJSON_CreateObject();
        an_json_add_str(o, "name", x->name, ok);
        an_json_add_bool(o, "is_output", x->is_output, ok);
        an_json_add_num(o, "index", x->index, ok);
        an_json_add(o, "shape", nums_json(x->shape, x->rank, 'l', ok), ok);
        an_json_add_str(o, "qnt_method", x->qnt_method, ok);
        an_json_add_str(o, "qnt_type", x->qnt_type, ok);
        an_json_add_str(o, "vx_type", x->vx_type, ok);
        an_json_push(io, o, ok);
    }
}

cJSON *an_rk_model_json(const rd_rknn_model *m)
{
    bool ok = true;
    const rd_rknn_info *in = rd_rknn_info_get(m);
    cJSON *root = cJSON_CreateObject();
    an_json_add_str(root, "schema", "rknn-diag/inspect-rknn/1", &ok);
    an_json_add_str(root, "model", in->path, &ok);
    an_json_add_num(root, "file_bytes", (double)in->file_bytes, &ok);
    cJSON *h = an_json_add_object(root, "header", &ok);
    an_json_add_num(h, "format_version", (double)in->format_version, &ok);
    an_json_add_num(h, "header_bytes", (double)in->header_bytes, &ok);
    an_json_add_num(h, "model_bytes", (double)in->model_bytes, &ok);
    an_json_add_num(h, "json_offset", (double)in->json_offset, &ok);
    an_json_add_num(h, "json_bytes", (double)in->json_bytes, &ok);
    an_json_add_num(root, "schema_version", in->schema_version, &ok);
    an_json_add_str(root, "format", in->format, &ok);
    an_json_add_str(root, "target_platform", in->target_platform, &ok);
    an_json_add_str(root, "toolkit_version", in->toolkit_version, &ok);
    cJSON *c = an_json_add_object(root, "compiler", &ok);
    an_json_add_str(c, "text", in->compiler, &ok);
    an_json_add_str(c, "version", in->compiler_version, &ok);
    an_json_add_num(c, "number", in->compiler_version_number, &ok);
    an_json_add_str(root, "source_framework", in->source_framework, &ok);
    an_json_add_str(root, "shape_mode", in->shape_mode, &ok);
    an_json_add(root, "generator", str_or_null(in->generator), &ok);
    add_envelope(root, in, &ok);
    add_io(root, in, &ok);
    an_json_add_num(root, "blobs", (double)rd_rknn_blob_count(m), &ok);
    cJSON *graphs = an_json_add_array(root, "graphs", &ok);
    for (size_t i = 0; i < rd_rknn_graph_count(m); i++)
        an_json_push(graphs, graph_json(m, rd_rknn_graph_at(m, i), &ok), &ok);
    cJSON *w = an_json_add_array(root, "warnings", &ok);
    for (size_t i = 0; i < rd_rknn_warning_count(m); i++)
        an_json_push(w, cJSON_CreateString(rd_rknn_warning(m, i)), &ok);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
