/*
 * onnx_load.c: ONNX ModelProto bytes to an rd_model (values, nodes, constants, graph inputs and
 * outputs), before the graph pass orders and checks it.
 *
 * Nodes keep the file's order; initializers and Constant nodes become constant values (the Constant
 * nodes themselves are dropped). Inputs that have an initializer are not real inputs (the IR <= 3
 * convention, which later exporters still use for overridable weights). On failure the model may hold
 * partial contents, which sim_model_free_contents releases.
 */
#include "onnx_pb.h"

#include <stdio.h>

typedef struct load_ctx {
    rd_model *m;
    const Onnx__ModelProto *mp;
    const Onnx__GraphProto *g;
} load_ctx;

static rd_status nomem(rd_error *err)
{
    return rd_errorf(err, RD_E_NOMEM, "out of memory");
}

/* "ai.onnx" and "" both name the default domain. */
static const char *norm_domain(const char *d)
{
    return (!d || !strcmp(d, "ai.onnx")) ? "" : d;
}

static rd_status load_opsets(load_ctx *c, rd_error *err)
{
    rd_model *m = c->m;
    size_t n = c->mp->n_opset_import;
    m->opsets = sim_calloc_array(n ? n : 1, sizeof(sim_opset));
    if (!m->opsets)
        return nomem(err);
    if (!n) { /* IR 1/2 files have no opset_import: they mean opset 1 */
        m->opsets[0].domain = sim_strdup("");
        m->opsets[0].version = 1;
        m->n_opsets = 1;
        return m->opsets[0].domain ? RD_OK : nomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        const Onnx__OperatorSetIdProto *op = c->mp->opset_import[i];
        const char *dom = norm_domain(op->domain);
        if (op->version < 1 || op->version > INT32_MAX)
            return rd_errorf(err, RD_E_PARSE, "opset_import: domain '%s' has version %lld", dom,
                             (long long)op->version);
        for (int k = 0; k < m->n_opsets; k++) {
            if (!strcmp(m->opsets[k].domain, dom) && m->opsets[k].version != (int)op->version)
                return rd_errorf(err, RD_E_PARSE, "opset_import lists domain '%s' twice (versions %d and %lld)", dom,
                                 m->opsets[k].version, (long long)op->version);
        }
        m->opsets[m->n_opsets].domain = sim_strdup(dom);
        m->opsets[m->n_opsets].version = (int)op->version;
        m->n_opsets++;
        if (!m->opsets[m->n_opsets - 1].domain)
            return nomem(err);
    }
    return RD_OK;
}

static int opset_of(const rd_model *m, const char *domain)
{
    for (int k = 0; k < m->n_opsets; k++)
        if (!strcmp(m->opsets[k].domain, domain))
            return m->opsets[k].version;
    return 0;
}

/* Interns name (a constant-to-be) and gives it the tensor; fails if it already had one. */
static rd_status add_constant(rd_model *m, const char *name, rd_tensor *t, bool is_initializer, rd_error *err)
{
    int v;
    rd_status st = sim_model_intern_err(m, name, &v, err);
    if (st != RD_OK)
        return st;
    sim_value *sv = &m->values[v];
    if (sv->konst)
        return rd_errorf(err, RD_E_PARSE, "'%s' is defined twice (initializer or Constant)", name);
    sv->konst = malloc(sizeof *sv->konst);
    if (!sv->konst)
        return nomem(err);
    *sv->konst = *t;
    memset(t, 0, sizeof *t);
    sv->is_initializer = is_initializer;
    sv->dtype = sv->konst->dtype;
    sv->rank = sv->konst->rank;
    for (int i = 0; i < sv->rank; i++)
        sv->dims[i] = sv->konst->dims[i];
    return RD_OK;
}

static rd_status load_initializers(load_ctx *c, rd_error *err)
{
    if (c->g->n_sparse_initializer)
        return rd_errorf(err, RD_E_UNSUPPORTED, "sparse initializers are not supported (%zu found)",
                         c->g->n_sparse_initializer);
    for (size_t i = 0; i < c->g->n_initializer; i++) {
        const Onnx__TensorProto *tp = c->g->initializer[i];
        if (!tp->name || !*tp->name)
            return rd_errorf(err, RD_E_PARSE, "initializer #%zu has no name", i);
        rd_tensor t;
        rd_status st = sim_onnx_tensor(tp, c->m->base_dir, &t, err);
        if (st == RD_OK) {
            st = add_constant(c->m, tp->name, &t, true, err);
            rd_tensor_fini(&t);
        }
        if (st != RD_OK) {
            rd_error_prefix(err, "initializer '%s'", tp->name);
            return st;
        }
    }
    return RD_OK;
}

static bool is_constant_node(const Onnx__NodeProto *np)
{
    return np->op_type && !strcmp(np->op_type, "Constant") && !*norm_domain(np->domain);
}

static rd_status load_constant_node(load_ctx *c, const Onnx__NodeProto *np, rd_error *err)
{
    if (np->n_output != 1 || !np->output[0] || !*np->output[0])
        return rd_errorf(err, RD_E_PARSE, "a Constant needs exactly one named output, found %zu outputs", np->n_output);
    rd_tensor t;
    rd_status st = sim_onnx_constant(np, c->m->base_dir, &t, err);
    if (st != RD_OK)
        return st;
    st = add_constant(c->m, np->output[0], &t, false, err);
    rd_tensor_fini(&t);
    return st;
}

/* Value indices of a node's inputs or outputs; -1 for the empty names of omitted optional ones. */
static rd_status intern_names(rd_model *m, char **names, size_t n, int **out, rd_error *err)
{
    *out = sim_malloc_array(n, sizeof(int));
    if (!*out)
        return nomem(err);
    for (size_t k = 0; k < n; k++) {
        (*out)[k] = -1;
        rd_status st = names[k] && *names[k] ? sim_model_intern_err(m, names[k], &(*out)[k], err) : RD_OK;
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status load_node(load_ctx *c, const Onnx__NodeProto *np, sim_node *n, rd_error *err)
{
    rd_model *m = c->m;
    n->name = sim_strdup(np->name ? np->name : "");
    n->op_type = sim_strdup(np->op_type);
    n->domain = sim_strdup(norm_domain(np->domain));
    if (!n->name || !n->op_type || !n->domain)
        return nomem(err);
    n->opset = opset_of(m, n->domain);
    if (np->n_input > INT32_MAX || np->n_output > INT32_MAX || np->n_attribute > INT32_MAX)
        return rd_errorf(err, RD_E_LIMIT, "too many inputs, outputs or attributes");
    rd_status st = intern_names(m, np->input, np->n_input, &n->in, err);
    if (st != RD_OK)
        return st;
    n->n_in = (int)np->n_input;
    st = intern_names(m, np->output, np->n_output, &n->out, err);
    if (st != RD_OK)
        return st;
    n->n_out = (int)np->n_output;
    n->attrs = sim_calloc_array(np->n_attribute, sizeof(sim_attr));
    if (!n->attrs)
        return nomem(err);
    for (size_t k = 0; k < np->n_attribute; k++) {
        n->n_attr = (int)k + 1; /* counted before filling so that a partial attribute is freed too */
        st = sim_onnx_attr(np->attribute[k], m->base_dir, &n->attrs[k], err);
        if (st != RD_OK)
            return st;
        for (size_t j = 0; j < k; j++)
            if (!strcmp(n->attrs[j].name, n->attrs[k].name))
                return rd_errorf(err, RD_E_PARSE, "attribute '%s' is given twice", n->attrs[k].name);
    }
    return RD_OK;
}

static rd_status load_nodes(load_ctx *c, rd_error *err)
{
    rd_model *m = c->m;
    const Onnx__GraphProto *g = c->g;
    size_t max_nodes = m->max_nodes ? m->max_nodes : (size_t)RD_MAX_NODES;
    if (g->n_node > max_nodes)
        return rd_errorf(err, RD_E_LIMIT,
                         "the graph has %zu nodes; at most %zu are loaded (RD_MAX_NODES, "
                         "docs/user-guide.md)",
                         g->n_node, max_nodes);
    m->nodes = sim_calloc_array(g->n_node, sizeof(sim_node));
    if (!m->nodes)
        return nomem(err);
    char label[256];
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        rd_status st;
        if (!np->op_type || !*np->op_type) {
            st = rd_errorf(err, RD_E_PARSE, "has no op_type");
        } else if (is_constant_node(np)) {
            st = load_constant_node(c, np, err);
        } else {
            m->n_nodes++;
            st = load_node(c, np, &m->nodes[m->n_nodes - 1], err);
        }
        if (st != RD_OK) {
            rd_error_prefix(err, "%s", sim_node_label(np->name, (int)i, np->op_type, label, sizeof label));
            return st;
        }
    }
    /* a name written by a node cannot also be a constant */
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && m->values[n->out[k]].konst)
                return rd_errorf(err, RD_E_PARSE, "%s: output '%s' is also an initializer or a Constant",
                                 sim_node_label(n->name, i, n->op_type, label, sizeof label),
                                 m->values[n->out[k]].name);
    }
    return RD_OK;
}

/*
 * Copies a ValueInfoProto's tensor type into the value. Shapes of constants come from their data and
 * are left alone. Negative dim_values (written by some exporters for dynamic dims) mean unknown.
 */
static rd_status apply_value_info(rd_model *m, int v, const Onnx__ValueInfoProto *vi, bool strict, rd_error *err)
{
    sim_value *sv = &m->values[v];
    /* graph inputs and outputs must be tensors of a dtype we hold: say so rather than misread data */
    if (strict && vi->type && vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        vi->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "'%s' is a sequence, optional, map or sparse type; only tensors are supported", sv->name);
    if (sv->konst || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type)
        return RD_OK;
    const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
    if (strict && tt->has_elem_type && tt->elem_type > 0 && !rd_dtype_get((rd_dtype)tt->elem_type)->supported)
        return rd_errorf(err, RD_E_UNSUPPORTED, "'%s' has unsupported dtype %s (%d)", sv->name,
                         rd_dtype_name((rd_dtype)tt->elem_type), (int)tt->elem_type);
    if (tt->has_elem_type && tt->elem_type > 0 && tt->elem_type < RD_DT_COUNT)
        sv->dtype = (rd_dtype)tt->elem_type;
    if (!tt->shape)
        return RD_OK;
    if (tt->shape->n_dim > RD_MAX_RANK) {
        if (strict)
            return rd_errorf(err, RD_E_LIMIT, "rank %zu exceeds the maximum of %d", tt->shape->n_dim, RD_MAX_RANK);
        return RD_OK;
    }
    sv->rank = (int)tt->shape->n_dim;
    for (int i = 0; i < sv->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        sv->dims[i] = -1;
        free(sv->dim_params[i]);
        sv->dim_params[i] = NULL;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0) {
            sv->dims[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                   *d->dim_param) {
            if (!(sv->dim_params[i] = sim_strdup(d->dim_param)))
                return nomem(err);
        }
    }
    return RD_OK;
}

/* The graph's inputs or its outputs (list of n): each named value is marked and takes its declared type and shape.
   An input that names an initializer only declares it. */
static rd_status load_io_list(rd_model *m, Onnx__ValueInfoProto *const *list, size_t n, bool outputs, rd_error *err)
{
    const char *what = outputs ? "output" : "input";
    for (size_t i = 0; i < n; i++) {
        const Onnx__ValueInfoProto *vi = list[i];
        if (!vi->name || !*vi->name)
            return rd_errorf(err, RD_E_PARSE, "graph %s #%zu has no name", what, i);
        int v;
        rd_status st = sim_model_intern_err(m, vi->name, &v, err);
        if (st != RD_OK)
            return st;
        sim_value *val = &m->values[v];
        if (outputs) {
            val->is_graph_output = true;
            m->outputs[m->n_outputs++] = v;
        } else {
            if (val->is_graph_input)
                return rd_errorf(err, RD_E_PARSE, "graph input '%s' is listed twice", vi->name);
            if (val->konst)
                continue; /* an initializer's declaration, not a real input */
            val->is_graph_input = true;
            m->inputs[m->n_inputs++] = v;
        }
        st = apply_value_info(m, v, vi, true, err);
        if (st != RD_OK) {
            rd_error_prefix(err, "graph %s '%s'", what, vi->name);
            return st;
        }
    }
    return RD_OK;
}

static rd_status load_io(load_ctx *c, rd_error *err)
{
    rd_model *m = c->m;
    const Onnx__GraphProto *g = c->g;
    m->inputs = sim_malloc_array(g->n_input, sizeof(int));
    m->outputs = sim_malloc_array(g->n_output, sizeof(int));
    if (!m->inputs || !m->outputs)
        return nomem(err);
    rd_status st = load_io_list(m, g->input, g->n_input, false, err);
    if (st == RD_OK)
        st = load_io_list(m, g->output, g->n_output, true, err);
    if (st != RD_OK)
        return st;
    for (size_t i = 0; i < g->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = g->value_info[i];
        if (!vi->name || !*vi->name)
            continue;
        int v;
        st = sim_model_intern_err(m, vi->name, &v, err);
        if (st == RD_OK)
            st = apply_value_info(m, v, vi, false, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static rd_status load_model(load_ctx *c, rd_error *err)
{
    rd_model *m = c->m;
    const Onnx__ModelProto *mp = c->mp;
    if (mp->ir_version < 0 || mp->ir_version > INT32_MAX)
        return rd_errorf(err, RD_E_PARSE, "ir_version %lld is invalid", (long long)mp->ir_version);
    m->ir_version = (int)mp->ir_version;
    const char *pn = mp->producer_name ? mp->producer_name : "";
    const char *pv = mp->producer_version ? mp->producer_version : "";
    size_t plen = strlen(pn) + strlen(pv) + 2;
    if (!(m->producer = malloc(plen)))
        return nomem(err);
    snprintf(m->producer, plen, "%s%s%s", pn, *pn && *pv ? " " : "", pv);
    rd_status st = load_opsets(c, err);
    if (st != RD_OK)
        return st;
    if (!(c->g = mp->graph))
        return rd_errorf(err, RD_E_PARSE, "the model has no graph");
    if ((st = load_initializers(c, err)) != RD_OK)
        return st;
    if ((st = load_nodes(c, err)) != RD_OK)
        return st;
    return load_io(c, err);
}

rd_status sim_onnx_parse(rd_model *m, const void *buf, size_t len, rd_error *err)
{
    const char *path = m->path ? m->path : "<memory>";
    sim_pb_budget budget;
    sim_pb_budget_init(&budget, SIM_PB_BUDGET(len));
    ProtobufCMessage *msg;
    rd_status st = sim_pb_unpack(&onnx__model_proto__descriptor, buf ? buf : "", buf ? len : 0, &budget, &msg, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s", path);
        return st;
    }
    load_ctx c = {.m = m, .mp = (const Onnx__ModelProto *)msg};
    st = load_model(&c, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", path);
    protobuf_c_message_free_unpacked(msg, &budget.alloc);
    return st;
}
