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

void sim_onnx_add_attr(rd_onnx_node *n, const sim_attr *a)
{
    switch (a->type) {
    case SIM_ATTR_FLOAT:
        rd_onnx_attr_float(n, a->name, a->f);
        break;
    case SIM_ATTR_INT:
        rd_onnx_attr_int(n, a->name, a->i);
        break;
    case SIM_ATTR_STRING:
        rd_onnx_attr_string(n, a->name, a->s);
        break;
    case SIM_ATTR_TENSOR:
        rd_onnx_attr_tensor(n, a->name, &a->t, RD_ONNX_RAW);
        break;
    case SIM_ATTR_FLOATS:
        rd_onnx_attr_floats(n, a->name, a->floats, a->n_floats);
        break;
    case SIM_ATTR_INTS:
        rd_onnx_attr_ints(n, a->name, a->ints, a->n_ints);
        break;
    case SIM_ATTR_STRINGS:
        rd_onnx_attr_strings(n, a->name, (const char *const *)a->strings, a->n_strings);
        break;
    default:
        break; /* the loader refuses every other type */
    }
}

/* The name value v is written under: renamed[v] when given, else its own. */
static const char *value_name(const rd_model *m, const char *const *renamed, int v)
{
    return renamed && renamed[v] ? renamed[v] : m->values[v].name;
}

/* Names of a node's inputs or outputs, NULL for omitted ones; caller frees the array. */
static const char **value_names(const rd_model *m, const char *const *renamed, const int *idx, int n)
{
    const char **names = sim_calloc_array(n > 0 ? (size_t)n : 0, sizeof *names);
    if (names)
        for (int k = 0; k < n; k++)
            names[k] = idx[k] >= 0 ? value_name(m, renamed, idx[k]) : NULL;
    return names;
}

/* false only when out of memory before the builder could record it; renamed may be NULL */
static bool add_node(rd_onnx_builder *b, const rd_model *m, const char *const *renamed, const sim_node *sn)
{
    const char **in = value_names(m, renamed, sn->in, sn->n_in);
    const char **out = value_names(m, renamed, sn->out, sn->n_out);
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
        sim_onnx_add_attr(n, &sn->attrs[k]);
    return true;
}

/* What a rewrite keeps: per value and per node flags, from the cut (everything without one). */
typedef struct rewrite_plan {
    bool cut;
    bool *keep_value; /* constants written, value_info written */
    bool *keep_node;
    bool *is_input;  /* graph inputs of the result */
    bool *is_output; /* cut outputs (no value_info for them) */
} rewrite_plan;

static void plan_fini(rewrite_plan *p)
{
    free(p->keep_value);
    free(p->keep_node);
    free(p->is_input);
    free(p->is_output);
}

static rd_status find_named(const rd_model *m, const char *what, const char *name, int *out, rd_error *err)
{
    *out = name ? sim_model_find(m, name) : -1;
    if (*out < 0)
        return rd_errorf(err, RD_E_NOTFOUND, "cut %s '%s' is not a tensor of the model", what, name ? name : "(null)");
    return RD_OK;
}

/* Marks what the outputs need, walking nodes backwards from them and stopping at the cut's inputs. */
static rd_status plan_cut(const rd_model *m, const rd_onnx_rewrite *rw, rewrite_plan *p, rd_error *err)
{
    bool *needed = p->keep_value;
    for (size_t i = 0; i < rw->n_inputs; i++) {
        int v;
        rd_status st = find_named(m, "input", rw->inputs[i], &v, err);
        if (st != RD_OK)
            return st;
        if (m->values[v].konst)
            return rd_errorf(err, RD_E_INVAL, "cut input '%s' is a constant, not a tensor computed by the graph",
                             rw->inputs[i]);
        p->is_input[v] = true;
    }
    if (rw->n_outputs)
        for (size_t i = 0; i < rw->n_outputs; i++) {
            int v;
            rd_status st = find_named(m, "output", rw->outputs[i], &v, err);
            if (st != RD_OK)
                return st;
            needed[v] = true;
            p->is_output[v] = true;
        }
    else
        for (int i = 0; i < m->n_outputs; i++)
            needed[m->outputs[i]] = true;
    for (int i = m->n_nodes - 1; i >= 0; i--) {
        const sim_node *n = &m->nodes[i];
        bool keep = false;
        for (int k = 0; k < n->n_out; k++)
            keep = keep || (n->out[k] >= 0 && needed[n->out[k]] && !p->is_input[n->out[k]]);
        if (!keep)
            continue;
        p->keep_node[i] = true;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0) {
                if (p->is_input[n->out[k]])
                    return rd_errorf(err, RD_E_INVAL,
                                     "cut input '%s' is also an output of node '%s', which the cut keeps",
                                     m->values[n->out[k]].name, n->name);
                needed[n->out[k]] = true;
            }
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                needed[n->in[k]] = true;
    }
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!needed[v] || p->is_input[v] || (sv->konst && sv->producer < 0) || sv->producer >= 0)
            continue;
        if (sv->is_graph_input && !rw->n_inputs) {
            p->is_input[v] = true;
            continue;
        }
        return rd_errorf(err, RD_E_INVAL,
                         "the cut needs tensor '%s', which is neither a cut input nor computed from them", sv->name);
    }
    return RD_OK;
}

static rd_status plan_make(const rd_model *m, const rd_onnx_rewrite *rw, rewrite_plan *p, rd_error *err)
{
    memset(p, 0, sizeof *p);
    size_t nv = (size_t)m->n_values, nn = (size_t)m->n_nodes;
    p->keep_value = sim_calloc_array(nv + 1, sizeof *p->keep_value);
    p->keep_node = sim_calloc_array(nn + 1, sizeof *p->keep_node);
    p->is_input = sim_calloc_array(nv + 1, sizeof *p->is_input);
    p->is_output = sim_calloc_array(nv + 1, sizeof *p->is_output);
    if (!p->keep_value || !p->keep_node || !p->is_input || !p->is_output)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    p->cut = rw && (rw->n_inputs || rw->n_outputs);
    if (p->cut)
        return plan_cut(m, rw, p, err);
    for (size_t v = 0; v < nv; v++)
        p->keep_value[v] = true;
    for (size_t i = 0; i < nn; i++)
        p->keep_node[i] = true;
    for (int i = 0; i < m->n_inputs; i++)
        p->is_input[m->inputs[i]] = true;
    return RD_OK;
}

/* The replacement data of a constant, or its own. */
static const rd_tensor *constant_data(const rd_onnx_rewrite *rw, const sim_value *sv)
{
    for (size_t i = 0; rw && i < rw->n_replace; i++)
        if (rw->replace_names[i] && strcmp(rw->replace_names[i], sv->name) == 0)
            return &rw->replace_tensors[i];
    return sv->konst;
}

static rd_status check_replacements(const rd_model *m, const rd_onnx_rewrite *rw, rd_error *err)
{
    for (size_t i = 0; rw && i < rw->n_replace; i++) {
        int v = rw->replace_names[i] ? sim_model_find(m, rw->replace_names[i]) : -1;
        if (v < 0 || !m->values[v].konst || m->values[v].producer >= 0)
            return rd_errorf(err, RD_E_NOTFOUND, "replacement '%s' is not an initializer or Constant of the model",
                             rw->replace_names[i] ? rw->replace_names[i] : "(null)");
    }
    return RD_OK;
}

static void add_cut_io(rd_onnx_builder *b, const rd_model *m, const rd_onnx_rewrite *rw, const rewrite_plan *p,
                       bool output)
{
    size_t n = output ? rw->n_outputs : rw->n_inputs;
    const char *const *names = output ? rw->outputs : rw->inputs;
    if (n)
        for (size_t i = 0; i < n; i++)
            add_io(b, &m->values[sim_model_find(m, names[i])], output);
    else if (output)
        for (int i = 0; i < m->n_outputs; i++)
            add_io(b, &m->values[m->outputs[i]], true);
    else
        for (int i = 0; i < m->n_inputs; i++)
            if (p->is_input[m->inputs[i]])
                add_io(b, &m->values[m->inputs[i]], false);
}

rd_status rd_onnx_model_rewrite(const rd_model *m, const rd_onnx_rewrite *rw, void **out_buf, size_t *out_len,
                                rd_error *err)
{
    const char *path = m->path ? m->path : "model";
    rewrite_plan p;
    rd_status st = plan_make(m, rw, &p, err);
    if (st == RD_OK)
        st = check_replacements(m, rw, err);
    if (st != RD_OK) {
        plan_fini(&p);
        return rd_error_prefix(err, "%s", path);
    }
    rd_onnx_builder *b = rd_onnx_builder_create(m->ir_version, 0);
    if (!b) {
        plan_fini(&p);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    }
    rd_onnx_set_producer(b, m->producer, "");
    for (int i = 0; i < m->n_opsets; i++)
        rd_onnx_add_opset(b, m->opsets[i].domain, m->opsets[i].version);
    if (p.cut)
        add_cut_io(b, m, rw, &p, false);
    else
        for (int i = 0; i < m->n_inputs; i++)
            add_io(b, &m->values[m->inputs[i]], false);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst || !p.keep_value[v])
            continue;
        if (sv->is_initializer) {
            const rd_tensor *t = constant_data(rw, sv);
            rd_onnx_add_initializer(b, sv->name, t, RD_ONNX_RAW);
            if (m->ir_version < 4) { /* IR 3 requires initializers to be listed as inputs */
                sim_value listed = *sv;
                listed.rank = t->rank;
                memcpy(listed.dims, t->dims, sizeof listed.dims);
                add_io(b, &listed, false);
            }
        } else if (sv->producer < 0) {
            const char *outs[1] = {sv->name};
            rd_onnx_attr_tensor(rd_onnx_add_node(b, "Constant", sv->name, NULL, 0, outs, 1), "value",
                                constant_data(rw, sv), RD_ONNX_RAW);
        }
    }
    bool ok = true;
    for (int i = 0; i < m->n_nodes; i++)
        if (p.keep_node[i])
            ok = add_node(b, m, NULL, &m->nodes[i]) && ok;
    if (p.cut)
        add_cut_io(b, m, rw, &p, true);
    else
        for (int i = 0; i < m->n_outputs; i++)
            add_io(b, &m->values[m->outputs[i]], true);
    for (int v = 0; v < m->n_values && !(rw && rw->drop_shapes); v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst && !sv->is_graph_input && !sv->is_graph_output && sv->rank >= 0 &&
            sv->dtype != RD_DT_UNDEFINED && p.keep_value[v] && !p.is_output[v] && !(p.cut && p.is_input[v]))
            rd_onnx_add_value_info(b, sv->name, sv->dtype, sv->rank, sv->dims, (const char *const *)sv->dim_params);
    }
    plan_fini(&p);
    st = ok ? rd_onnx_builder_write(b, out_buf, out_len, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_onnx_builder_destroy(b);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", path);
    return st;
}

rd_status rd_onnx_model_write(const rd_model *m, void **out_buf, size_t *out_len, rd_error *err)
{
    return rd_onnx_model_rewrite(m, NULL, out_buf, out_len, err);
}

rd_status rd_onnx_model_save(const rd_model *m, const char *path, rd_error *err)
{
    void *buf;
    size_t len;
    rd_status st = rd_onnx_model_write(m, &buf, &len, err);
    return sim_save_written(st, path, buf, len, false, err);
}

static bool node_dropped(const rd_onnx_copy_options *opt, int node)
{
    return opt && opt->drop_node && node >= 0 && opt->drop_node[node];
}

rd_status rd_onnx_builder_add_model(rd_onnx_builder *b, const rd_model *m, const rd_onnx_copy_options *opt,
                                    rd_error *err)
{
    if (!b || !m)
        return rd_errorf(err, RD_E_INVAL, "rd_onnx_builder_add_model: NULL builder or model");
    bool io = !(opt && opt->no_io);
    const char *const *renamed = opt ? opt->value_names : NULL;
    rd_onnx_set_producer(b, m->producer, "");
    for (int i = 0; i < m->n_opsets; i++)
        rd_onnx_add_opset(b, m->opsets[i].domain, m->opsets[i].version);
    for (int i = 0; io && i < m->n_inputs; i++)
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
        if (!node_dropped(opt, i))
            ok = add_node(b, m, renamed, &m->nodes[i]) && ok;
    for (int i = 0; io && i < m->n_outputs; i++)
        add_io(b, &m->values[m->outputs[i]], true);
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *sv = &m->values[v];
        if (!sv->konst && !sv->is_graph_input && !sv->is_graph_output && sv->rank >= 0 &&
            sv->dtype != RD_DT_UNDEFINED && !node_dropped(opt, sv->producer))
            rd_onnx_add_value_info(b, value_name(m, renamed, v), sv->dtype, sv->rank, sv->dims,
                                   (const char *const *)sv->dim_params);
    }
    if (!ok)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", m->path ? m->path : "model");
    rd_status st = rd_onnx_builder_status(b, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", m->path ? m->path : "model");
    return st;
}
