/*
 * model.c: the rd_model object: loading (ONNX bytes -> values and nodes -> prepared graph), the value
 * table, the read-only accessors of the public header, and freeing.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

int sim_model_find(const rd_model *m, const char *name)
{
    return sim_name_index_find(&m->names, m->values, name);
}

int sim_model_intern(rd_model *m, const char *name)
{
    int found = sim_model_find(m, name);
    if (found >= 0)
        return found;
    if ((size_t)m->n_values >= (m->max_values ? m->max_values : (size_t)RD_MAX_VALUES))
        return -2;
    if (m->n_values == m->cap_values) {
        int cap = m->cap_values ? m->cap_values * 2 : 64;
        sim_value *grown = realloc(m->values, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        m->values = grown;
        m->cap_values = cap;
    }
    sim_value *v = &m->values[m->n_values];
    memset(v, 0, sizeof *v);
    v->name = sim_strdup(name);
    if (!v->name)
        return -1;
    v->rank = -1;
    v->producer = -1;
    v->last_use = -1;
    v->fused_into = -1;
    if (!sim_name_index_add(&m->names, m->values, m->n_values)) {
        free(v->name);
        return -1;
    }
    return m->n_values++;
}

rd_status sim_model_intern_err(rd_model *m, const char *name, int *out, rd_error *err)
{
    *out = sim_model_intern(m, name);
    if (*out == -2)
        return rd_errorf(err, RD_E_LIMIT,
                         "tensor '%s' is one name too many: a model may name at most %zu tensors "
                         "(RD_MAX_VALUES, docs/user-guide.md)",
                         name, m->max_values ? m->max_values : (size_t)RD_MAX_VALUES);
    if (*out < 0)
        return rd_errorf(err, RD_E_NOMEM, "out of memory adding tensor '%s'", name);
    return RD_OK;
}

void sim_attr_fini(sim_attr *a)
{
    free(a->name);
    free(a->s);
    free(a->ints);
    free(a->floats);
    for (size_t i = 0; i < a->n_strings; i++)
        free(a->strings[i]);
    free(a->strings);
    rd_tensor_fini(&a->t);
}

void sim_node_fini(sim_node *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    free(n->in);
    free(n->out);
    for (int a = 0; a < n->n_attr; a++)
        sim_attr_fini(&n->attrs[a]);
    free(n->attrs);
    free(n->params);
    free(n->npu_op);
    free(n->row_op);
    memset(n, 0, sizeof *n);
}

void sim_model_free_contents(rd_model *m)
{
    for (int i = 0; i < m->n_values; i++) {
        sim_value *v = &m->values[i];
        free(v->name);
        for (int d = 0; d < RD_MAX_RANK; d++)
            free(v->dim_params[d]);
        if (v->konst) {
            rd_tensor_fini(v->konst);
            free(v->konst);
        }
    }
    free(m->values);
    sim_name_index_fini(&m->names);
    for (int i = 0; i < m->n_nodes; i++)
        sim_node_fini(&m->nodes[i]);
    free(m->nodes);
    for (int i = 0; i < m->n_opsets; i++)
        free(m->opsets[i].domain);
    free(m->opsets);
    free(m->inputs);
    free(m->outputs);
    free(m->producer);
    free(m->path);
    free(m->base_dir);
    memset(m, 0, sizeof *m);
}

void rd_model_destroy(rd_model *m)
{
    if (!m)
        return;
    sim_model_free_contents(m);
    free(m);
}

rd_status rd_model_load_mem(const void *buf, size_t len, const char *name, const char *base_dir,
                            const rd_load_options *opt, rd_model **out, rd_error *err)
{
    *out = NULL;
    rd_model *m = calloc(1, sizeof *m);
    if (!m)
        return rd_errorf(err, RD_E_NOMEM, "cannot allocate a model");
    m->path = sim_strdup(name ? name : "(memory)");
    m->base_dir = sim_strdup(base_dir ? base_dir : ".");
    if (!m->path || !m->base_dir) {
        rd_model_destroy(m);
        return rd_errorf(err, RD_E_NOMEM, "cannot allocate a model");
    }
    if (opt && opt->max_nodes < (size_t)RD_MAX_NODES) /* options only lower the limits */
        m->max_nodes = opt->max_nodes;
    if (opt && opt->max_values < (size_t)RD_MAX_VALUES)
        m->max_values = opt->max_values;
    rd_status st = sim_onnx_parse(m, buf, len, err);
    if (st == RD_OK)
        st = sim_graph_prepare(m, opt, err);
    if (st != RD_OK) {
        rd_model_destroy(m);
        return st;
    }
    *out = m;
    return RD_OK;
}

rd_status rd_model_load(const char *path, const rd_load_options *opt, rd_model **out, rd_error *err)
{
    *out = NULL;
    sim_file_bytes f; /* external data is relative to the model's folder */
    rd_status st = sim_file_bytes_read(path, RD_MAX_MODEL_BYTES, &f, err);
    if (st == RD_OK)
        st = rd_model_load_mem(f.buf, f.len, path, f.dir, opt, out, err);
    sim_file_bytes_free(&f);
    return st;
}

int rd_model_ir_version(const rd_model *m)
{
    return m->ir_version;
}

int rd_model_opset(const rd_model *m, const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        domain = "";
    for (int i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0)
            return m->opsets[i].version;
    return 0;
}

const char *rd_model_producer(const rd_model *m)
{
    return m->producer ? m->producer : "";
}

size_t rd_model_input_count(const rd_model *m)
{
    return (size_t)m->n_inputs;
}

size_t rd_model_output_count(const rd_model *m)
{
    return (size_t)m->n_outputs;
}

int rd_model_input(const rd_model *m, size_t i)
{
    return i < (size_t)m->n_inputs ? m->inputs[i] : -1;
}

int rd_model_output(const rd_model *m, size_t i)
{
    return i < (size_t)m->n_outputs ? m->outputs[i] : -1;
}

size_t rd_model_value_count(const rd_model *m)
{
    return (size_t)m->n_values;
}

size_t rd_model_node_count(const rd_model *m)
{
    return (size_t)m->n_nodes;
}

void rd_model_value(const rd_model *m, size_t i, rd_value_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= (size_t)m->n_values)
        return;
    const sim_value *v = &m->values[i];
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->rank;
    for (int d = 0; d < RD_MAX_RANK; d++) {
        out->dims[d] = v->rank > d ? v->dims[d] : 0;
        out->dim_params[d] = v->dim_params[d];
    }
    out->is_constant = v->konst != NULL;
    out->producer = v->producer;
}

void rd_model_node(const rd_model *m, size_t i, rd_node_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= (size_t)m->n_nodes)
        return;
    const sim_node *n = &m->nodes[i];
    out->name = n->name;
    out->op_type = n->op_type;
    out->domain = n->domain;
    out->opset = n->opset;
    out->n_inputs = n->n_in;
    out->n_outputs = n->n_out;
    out->inputs = n->in;
    out->outputs = n->out;
    out->supported = n->def != NULL;
    out->folded = n->folded;
    out->macs = n->macs;
}

bool rd_model_node_attr_ints(const rd_model *m, size_t node, const char *name, const int64_t **out_v, size_t *out_n)
{
    *out_v = NULL;
    *out_n = 0;
    if (node >= (size_t)m->n_nodes || !name)
        return false;
    const sim_attr *a = sim_attr_find(&m->nodes[node], name);
    if (!a || a->type != SIM_ATTR_INTS)
        return false;
    *out_v = a->ints;
    *out_n = a->n_ints;
    return true;
}

int rd_model_find_value(const rd_model *m, const char *name)
{
    return sim_model_find(m, name);
}

int64_t rd_model_param_count(const rd_model *m)
{
    int64_t total = 0;
    for (int i = 0; i < m->n_values; i++) {
        const sim_value *v = &m->values[i];
        if (v->konst && v->producer < 0)
            total += rd_tensor_numel(v->konst);
    }
    return total;
}

const rd_tensor *rd_model_constant(const rd_model *m, size_t value)
{
    return value < (size_t)m->n_values ? m->values[value].konst : NULL;
}

bool rd_model_node_attr_int(const rd_model *m, size_t node, const char *name, int64_t *out)
{
    const sim_attr *a = node < (size_t)m->n_nodes ? sim_attr_find(&m->nodes[node], name) : NULL;
    if (!a || a->type != SIM_ATTR_INT)
        return false;
    *out = a->i;
    return true;
}

bool rd_model_node_attr_float(const rd_model *m, size_t node, const char *name, float *out)
{
    const sim_attr *a = node < (size_t)m->n_nodes ? sim_attr_find(&m->nodes[node], name) : NULL;
    if (!a || a->type != SIM_ATTR_FLOAT)
        return false;
    *out = a->f;
    return true;
}
