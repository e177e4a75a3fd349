/*
 * onnx_save.c: writes a loaded rd_model back as ONNX through the builder (for the model tools).
 *
 * Initializers stay initializers (raw_data); the values of Constant nodes, which the loader turned
 * into constants, become Constant nodes again, placed first; values folded at load are dropped as
 * constants because the nodes that compute them are still in the node list.
 */
#include "onnx_pb.h"

/* The declared type and shape of a value; rank -1 when unknown. */
static rd_status add_io(rd_onnx_builder *b, const sim_value *v, bool output)
{
    const char *const *params = (const char *const *)v->dim_params;
    int rank = v->rank > RD_MAX_RANK ? -1 : v->rank;
    return output ? rd_onnx_add_output(b, v->name, v->dtype, rank, v->dims, params)
                  : rd_onnx_add_input(b, v->name, v->dtype, rank, v->dims, params);
}

static void add_attr(rd_onnx_node *n, const sim_attr *a)
{
    switch (a->type) {
    case SIM_ATTR_FLOAT: rd_onnx_attr_float(n, a->name, a->f); break;
    case SIM_ATTR_INT: rd_onnx_attr_int(n, a->name, a->i); break;
    case SIM_ATTR_STRING: rd_onnx_attr_string(n, a->name, a->s); break;
    case SIM_ATTR_TENSOR: rd_onnx_attr_tensor(n, a->name, &a->t, RD_ONNX_RAW); break;
    case SIM_ATTR_FLOATS: rd_onnx_attr_floats(n, a->name, a->floats, a->n_floats); break;
    case SIM_ATTR_INTS: rd_onnx_attr_ints(n, a->name, a->ints, a->n_ints); break;
    case SIM_ATTR_STRINGS: rd_onnx_attr_strings(n, a->name, (const char *const *)a->strings, a->n_strings); break;
    default: break; /* the loader refuses every other type */
    }
}

/* Names of a node's inputs or outputs, NULL for omitted ones; caller frees the array. */
static const char **value_names(const rd_model *m, const int *idx, int n)
{
    const char **names = sim_calloc_array(n > 0 ? (size_t)n : 0, sizeof *names);
    if (names)
        for (int k = 0; k < n; k++)
            names[k] = idx[k] >= 0 ? m->values[idx[k]].name : NULL;
    return names;
}

/* false only when out of memory before the builder could record it */
static bool add_node(rd_onnx_builder *b, const rd_model *m, const sim_node *sn)
{
    const char **in = value_names(m, sn->in, sn->n_in);
    const char **out = value_names(m, sn->out, sn->n_out);
    rd_onnx_node *n = NULL;
    bool ok = in && out;
    if (ok)
        n = rd_onnx_add_node(b, sn->op_type, sn->name, in, sn->n_in, out, sn->n_out);
    free(in);
    free(out);
    if (!n)
        return ok;
    if (*sn->domain)
        rd_onnx_node_set_domain(n, sn->domain);
    for (int k = 0; k < sn->n_attr; k++)
        add_attr(n, &sn->attrs[k]);
    return true;
}

rd_status rd_onnx_model_write(const rd_model *m, void **out_buf, size_t *out_len, rd_error *err)
{
    rd_onnx_builder *b = rd_onnx_builder_create(m->ir_version, 0);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path ? m->path : "model");
    rd_onnx_set_producer(b, m->producer, "");
    for (int i = 0; i < m->n_opsets; i++)
        rd_onnx_add_opset(b, m->opsets[i].domain, m->opsets[i].version);
    for (int i = 0; i < m->n_inputs; i++)
        add_io(b, &m->values[m->inputs[i]], false);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst)
            continue;
        if (sv->is_initializer) {
            rd_onnx_add_initializer(b, sv->name, sv->konst, RD_ONNX_RAW);
            if (m->ir_version < 4) /* IR 3 requires initializers to be listed as inputs */
                add_io(b, sv, false);
        } else if (sv->producer < 0) {
            const char *outs[1] = {sv->name};
            rd_onnx_attr_tensor(rd_onnx_add_node(b, "Constant", sv->name, NULL, 0, outs, 1), "value", sv->konst,
                                RD_ONNX_RAW);
        }
    }
    bool ok = true;
    for (int i = 0; i < m->n_nodes; i++)
        ok = add_node(b, m, &m->nodes[i]) && ok;
    for (int i = 0; i < m->n_outputs; i++)
        add_io(b, &m->values[m->outputs[i]], true);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst && !sv->is_graph_input && !sv->is_graph_output && sv->rank >= 0 &&
            sv->dtype != RD_DT_UNDEFINED)
            rd_onnx_add_value_info(b, sv->name, sv->dtype, sv->rank, sv->dims,
                                   (const char *const *)sv->dim_params);
    }
    rd_status st = ok ? rd_onnx_builder_write(b, out_buf, out_len, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_onnx_builder_destroy(b);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", m->path ? m->path : "model");
    return st;
}

rd_status rd_onnx_model_save(const rd_model *m, const char *path, rd_error *err)
{
    void *buf;
    size_t len;
    rd_status st = rd_onnx_model_write(m, &buf, &len, err);
    if (st != RD_OK)
        return st;
    st = sim_onnx_save_bytes(path, buf, len, err);
    free(buf);
    return st;
}
