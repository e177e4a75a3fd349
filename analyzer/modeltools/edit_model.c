/*
 * edit_model.c: rewriting a model for onnx-edit.
 *
 * An edited input x gets the new layout; the inverse plan takes it back to the original layout and is
 * extended forward through the Reshape/Transpose layers that alone consume it (while they fold into one
 * plan and do not produce a graph output). An edited output y likewise: the plan is extended backward
 * through the layout layers that alone produce it. Each merged chain is written as at most three layers
 * (an_layout_ops), so an inserted Transpose that undoes the model's own disappears. Layers go before
 * the copied model (inputs) or after it (outputs), which keeps the node list topologically sorted.
 */
#include "edit_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_layout_op(const rd_node_info *ni)
{
    return ni->domain[0] == '\0' && !ni->folded &&
           (strcmp(ni->op_type, "Reshape") == 0 || strcmp(ni->op_type, "Transpose") == 0);
}

int an_layout_layer_count(const rd_model *m)
{
    int n = 0;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        n += is_layout_op(&ni);
    }
    return n;
}

/* Index of the graph input or output called name, -1 if none. */
static int find_io(const rd_model *m, const char *name, bool output)
{
    size_t n = output ? rd_model_output_count(m) : rd_model_input_count(m);
    for (size_t i = 0; i < n; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)(output ? rd_model_output(m, i) : rd_model_input(m, i)), &vi);
        if (strcmp(vi.name, name) == 0)
            return (int)i;
    }
    return -1;
}

static void list_io(const rd_model *m, bool output, char *buf, size_t len)
{
    size_t n = output ? rd_model_output_count(m) : rd_model_input_count(m), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)(output ? rd_model_output(m, i) : rd_model_input(m, i)), &vi);
        int w = snprintf(buf + used, len - used, "%s'%s'", i ? ", " : "", vi.name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

rd_status an_edit_plan_io(const rd_model *m, const char *name, const char *formula, bool output, an_edit_io *io,
                          rd_error *err)
{
    const char *what = output ? "output" : "input";
    int k = find_io(m, name, output);
    if (k < 0) {
        char names[512];
        list_io(m, output, names, sizeof names);
        return rd_errorf(err, RD_E_NOTFOUND, "the model has no %s '%s' (its %ss: %s)", what, name, what, names);
    }
    if (io[k].edited)
        return rd_errorf(err, RD_E_INVAL, "%s '%s' is given two formulas", what, name);
    rd_value_info vi;
    rd_model_value(m, (size_t)(output ? rd_model_output(m, (size_t)k) : rd_model_input(m, (size_t)k)), &vi);
    an_formula f;
    rd_status st = an_formula_parse(formula, &f, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s '%s': formula '%s'", what, name, formula);
    if (vi.rank < 0)
        return rd_errorf(err, RD_E_INVAL, "%s '%s' has no known shape: give --input-shape", what, name);
    for (int d = 0; d < vi.rank; d++)
        if (vi.dims[d] < 0)
            return rd_errorf(err, RD_E_INVAL, "%s '%s': dim %d is %s, not fixed: give --input-shape", what, name, d,
                             vi.dim_params[d] ? vi.dim_params[d] : "unknown");
    if ((output && vi.producer < 0) || (!output && find_io(m, name, true) >= 0))
        return rd_errorf(err, RD_E_UNSUPPORTED, "'%s' is both a graph input and a graph output: nothing to edit around",
                         name);
    st = an_formula_plan(&f, vi.rank, vi.dims, &io[k].plan, err);
    if (st != RD_OK) {
        rd_tensor shape = {.rank = vi.rank};
        memcpy(shape.dims, vi.dims, sizeof shape.dims);
        char buf[128];
        return rd_error_prefix(err, "%s '%s' (%s): formula '%s'", what, name, rd_shape_str(&shape, buf, sizeof buf),
                               formula);
    }
    io[k].edited = true;
    return RD_OK;
}

/* ---- the edit ---------------------------------------------------------------------------------------- */

typedef struct chain {
    int from, to; /* value indices: the chain reads from, writes to (-1: a graph name) */
    an_layout plan;
    int n_ops;
    an_layout_op ops[3];
} chain;

typedef struct editor {
    const rd_model *m;
    rd_onnx_builder *b;
    int n_values, n_nodes;
    int *uses;       /* per value: how many node inputs read it */
    bool *graph_out; /* per value */
    bool *drop;      /* per node */
    char **names;    /* per value: the name it is written under (NULL: its own) */
    int counter;     /* suffix of generated names */
    an_edit_stats stats;
} editor;

static const char *name_of(const editor *e, int v)
{
    if (e->names[v])
        return e->names[v];
    rd_value_info vi;
    rd_model_value(e->m, (size_t)v, &vi);
    return vi.name;
}

/* A new name "base<tag>N" used nowhere in the model; malloc'ed, NULL when out of memory. */
static char *fresh_name(editor *e, const char *base, const char *tag)
{
    size_t len = strlen(base) + strlen(tag) + 16;
    char *s = malloc(len);
    if (!s)
        return NULL;
    do
        snprintf(s, len, "%s%s%d", base, tag, e->counter++);
    while (rd_model_find_value(e->m, s) >= 0);
    return s;
}

/* The plan of node's layout op on top of plan (a copy is changed only on success). */
static bool append_node(const editor *e, int node, an_layout *plan)
{
    rd_node_info ni;
    rd_model_node(e->m, (size_t)node, &ni);
    rd_value_info out;
    rd_model_value(e->m, (size_t)ni.outputs[0], &out);
    an_layout t = *plan;
    if (strcmp(ni.op_type, "Transpose") == 0) {
        const int64_t *perm;
        size_t n;
        int64_t rev[AN_LAYOUT_MAX_ATOMS];
        if (!rd_model_node_attr_ints(e->m, (size_t)node, "perm", &perm, &n)) {
            n = (size_t)t.out_rank; /* no perm: reverse the dims */
            for (size_t d = 0; d < n; d++)
                rev[d] = (int64_t)(n - 1 - d);
            perm = rev;
        }
        if (an_layout_transpose(&t, perm, (int)n, NULL) != RD_OK)
            return false;
    } else {
        if (out.rank < 0)
            return false;
        for (int d = 0; d < out.rank; d++)
            if (out.dims[d] < 1)
                return false;
        if (an_layout_reshape(&t, out.rank, out.dims, NULL) != RD_OK)
            return false;
    }
    /* the result must have the output's known dims (a check on our reading of the node) */
    if (out.rank != t.out_rank || memcmp(out.dims, t.out_dims, (size_t)out.rank * sizeof *out.dims) != 0)
        return false;
    *plan = t;
    return true;
}

/* The single node reading v (through one input), or -1. */
static int sole_consumer(const editor *e, int v)
{
    if (e->uses[v] != 1 || e->graph_out[v])
        return -1;
    for (int i = 0; i < e->n_nodes; i++) {
        rd_node_info ni;
        rd_model_node(e->m, (size_t)i, &ni);
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] == v)
                return i;
    }
    return -1;
}

/* Input side: the inverse plan, extended through the layout layers that alone consume x. */
static rd_status plan_input(editor *e, int x, const an_edit_io *io, chain *c, rd_error *err)
{
    c->from = x;
    an_layout_inverse(&io->plan, &c->plan);
    int v = x;
    for (;;) {
        int n = sole_consumer(e, v);
        if (n < 0 || e->drop[n])
            break;
        rd_node_info ni;
        rd_model_node(e->m, (size_t)n, &ni);
        if (!is_layout_op(&ni) || ni.n_outputs != 1 || ni.inputs[0] != v || e->graph_out[ni.outputs[0]])
            break;
        if (!append_node(e, n, &c->plan))
            break;
        e->drop[n] = true;
        e->stats.absorbed++;
        v = ni.outputs[0];
    }
    c->to = v;
    return an_layout_ops(&c->plan, c->ops, &c->n_ops, err);
}

/* Output side: the plan, extended backward through the layout layers that alone produce y. */
static rd_status plan_output(editor *e, int y, const an_edit_io *io, chain *c, rd_error *err)
{
    c->to = y;
    c->plan = io->plan;
    int v = y;
    for (;;) {
        rd_value_info vi;
        rd_model_value(e->m, (size_t)v, &vi);
        int n = vi.producer;
        if (n < 0 || e->drop[n] || (v != y && (e->graph_out[v] || e->uses[v] != 1)) || (v == y && e->uses[v] != 0))
            break;
        rd_node_info ni;
        rd_model_node(e->m, (size_t)n, &ni);
        if (!is_layout_op(&ni) || ni.n_outputs != 1 || ni.inputs[0] < 0)
            break;
        int u = ni.inputs[0];
        rd_value_info ui;
        rd_model_value(e->m, (size_t)u, &ui);
        if (ui.producer < 0 || ui.rank < 0)
            break; /* a graph input or a constant: keep the layer */
        /* plan' = the node's op, then the plan so far (replayed through its layers) */
        an_layout p;
        if (an_layout_init(&p, ui.rank, ui.dims, NULL) != RD_OK || !append_node(e, n, &p))
            break;
        an_layout_op ops[3];
        int n_ops;
        if (an_layout_ops(&c->plan, ops, &n_ops, NULL) != RD_OK)
            break;
        bool ok = true;
        for (int k = 0; k < n_ops && ok; k++)
            ok = (ops[k].transpose ? an_layout_transpose(&p, ops[k].v, ops[k].rank, NULL)
                                   : an_layout_reshape(&p, ops[k].rank, ops[k].v, NULL)) == RD_OK;
        if (!ok)
            break;
        c->plan = p;
        e->drop[n] = true;
        e->stats.absorbed++;
        v = u;
    }
    c->from = v;
    return an_layout_ops(&c->plan, c->ops, &c->n_ops, err);
}

/* Writes a chain's layers from name `from` to name `to` (an Identity when there are none). */
static rd_status emit_chain(editor *e, const chain *c, const char *from, const char *to, int opset, rd_error *err)
{
    if (c->n_ops == 0) {
        rd_onnx_add_node(e->b, "Identity", NULL, (const char *const[]){from}, 1, (const char *const[]){to}, 1);
        return rd_onnx_builder_status(e->b, err);
    }
    char *prev = NULL;
    rd_status st = RD_OK;
    for (int k = 0; k < c->n_ops && st == RD_OK; k++) {
        const an_layout_op *op = &c->ops[k];
        const char *in = k ? prev : from;
        char *tmp = k + 1 < c->n_ops ? fresh_name(e, to, "/edit_") : NULL;
        char *node_name = fresh_name(e, to, op->transpose ? "/edit_Transpose_" : "/edit_Reshape_");
        if ((k + 1 < c->n_ops && !tmp) || !node_name) {
            free(tmp);
            free(node_name);
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        const char *out = tmp ? tmp : to;
        if (op->transpose) {
            rd_onnx_node *n = rd_onnx_add_node(e->b, "Transpose", node_name, (const char *const[]){in}, 1,
                                               (const char *const[]){out}, 1);
            rd_onnx_attr_ints(n, "perm", op->v, (size_t)op->rank);
        } else if (opset > 0 && opset < 5) {
            rd_onnx_node *n = rd_onnx_add_node(e->b, "Reshape", node_name, (const char *const[]){in}, 1,
                                               (const char *const[]){out}, 1);
            rd_onnx_attr_ints(n, "shape", op->v, (size_t)op->rank);
        } else {
            char *shape_name = fresh_name(e, to, "/edit_shape_");
            rd_tensor shape;
            const int64_t len = op->rank;
            if (!shape_name || rd_tensor_alloc(&shape, RD_DT_I64, 1, &len, err) != RD_OK) {
                free(shape_name);
                free(tmp);
                free(node_name);
                st = err && err->code != RD_OK ? err->code : rd_errorf(err, RD_E_NOMEM, "out of memory");
                break;
            }
            if (op->rank)
                memcpy(shape.data, op->v, (size_t)op->rank * sizeof(int64_t));
            rd_onnx_add_initializer(e->b, shape_name, &shape, RD_ONNX_RAW);
            rd_onnx_add_node(e->b, "Reshape", node_name, (const char *const[]){in, shape_name}, 2,
                             (const char *const[]){out}, 1);
            rd_tensor_fini(&shape);
            free(shape_name);
        }
        free(node_name);
        free(prev);
        prev = tmp;
        e->stats.inserted++;
        st = rd_onnx_builder_status(e->b, err);
    }
    free(prev);
    return st;
}

static rd_status declare_io(editor *e, int v, const an_edit_io *io, bool output)
{
    rd_value_info vi;
    rd_model_value(e->m, (size_t)v, &vi);
    const int64_t *dims = vi.dims;
    const char *const *params = vi.dim_params;
    int rank = vi.rank;
    int64_t nd[RD_MAX_RANK];
    if (io->edited) {
        rank = io->plan.out_rank;
        memcpy(nd, io->plan.out_dims, (size_t)rank * sizeof *nd);
        dims = nd;
        params = NULL;
    }
    return output ? rd_onnx_add_output(e->b, vi.name, vi.dtype, rank, dims, params)
                  : rd_onnx_add_input(e->b, vi.name, vi.dtype, rank, dims, params);
}

static rd_status count_uses(editor *e, rd_error *err)
{
    e->n_values = (int)rd_model_value_count(e->m);
    e->n_nodes = (int)rd_model_node_count(e->m);
    e->uses = calloc((size_t)e->n_values + 1, sizeof *e->uses);
    e->graph_out = calloc((size_t)e->n_values + 1, sizeof *e->graph_out);
    e->names = calloc((size_t)e->n_values + 1, sizeof *e->names);
    e->drop = calloc((size_t)e->n_nodes + 1, sizeof *e->drop);
    if (!e->uses || !e->graph_out || !e->names || !e->drop)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (int i = 0; i < e->n_nodes; i++) {
        rd_node_info ni;
        rd_model_node(e->m, (size_t)i, &ni);
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] >= 0)
                e->uses[ni.inputs[k]]++;
    }
    for (size_t i = 0; i < rd_model_output_count(e->m); i++)
        e->graph_out[rd_model_output(e->m, i)] = true;
    return RD_OK;
}

static void editor_fini(editor *e)
{
    if (e->names)
        for (int v = 0; v < e->n_values; v++)
            free(e->names[v]);
    free(e->names);
    free(e->uses);
    free(e->graph_out);
    free(e->drop);
    rd_onnx_builder_destroy(e->b);
}

/* Decides every chain (and so which model layers are dropped and which values renamed). */
static rd_status plan_chains(editor *e, const an_edit_io *ins, const an_edit_io *outs, chain *cin, chain *cout,
                             rd_error *err)
{
    rd_status st = RD_OK;
    for (size_t i = 0; i < rd_model_input_count(e->m) && st == RD_OK; i++) {
        if (!ins[i].edited)
            continue;
        int x = rd_model_input(e->m, i);
        st = plan_input(e, x, &ins[i], &cin[i], err);
        if (st != RD_OK)
            return rd_error_prefix(err, "input '%s'", name_of(e, x));
        if (cin[i].to == x) {
            /* nothing merged: the model's readers of x read the restored tensor under a new name */
            if (!(e->names[x] = fresh_name(e, name_of(e, x), "/orig_")))
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
        } else if (cin[i].n_ops == 0) {
            /* the inverse cancelled the model's layers: their readers read the graph input itself */
            rd_value_info vi;
            rd_model_value(e->m, (size_t)x, &vi);
            size_t len = strlen(vi.name) + 1;
            if (!(e->names[cin[i].to] = malloc(len)))
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
            memcpy(e->names[cin[i].to], vi.name, len);
        }
    }
    for (size_t i = 0; i < rd_model_output_count(e->m) && st == RD_OK; i++) {
        if (!outs[i].edited)
            continue;
        int y = rd_model_output(e->m, i);
        st = plan_output(e, y, &outs[i], &cout[i], err);
        if (st != RD_OK)
            return rd_error_prefix(err, "output '%s'", name_of(e, y));
        if (cout[i].from == y && !(e->names[y] = fresh_name(e, name_of(e, y), "/orig_")))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return st;
}

rd_status an_edit_write(const rd_model *m, const an_edit_io *ins, const an_edit_io *outs, void **out_buf,
                        size_t *out_len, an_edit_stats *stats, rd_error *err)
{
    editor e = {.m = m};
    size_t n_in = rd_model_input_count(m), n_out = rd_model_output_count(m);
    chain *cin = calloc(n_in + 1, sizeof *cin), *cout = calloc(n_out + 1, sizeof *cout);
    rd_status st = cin && cout ? count_uses(&e, err) : rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        st = plan_chains(&e, ins, outs, cin, cout, err);
    if (st == RD_OK && !(e.b = rd_onnx_builder_create(rd_model_ir_version(m), 0)))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    int opset = rd_model_opset(m, "");
    for (size_t i = 0; i < n_in && st == RD_OK; i++) {
        int x = rd_model_input(m, i);
        st = declare_io(&e, x, &ins[i], false);
        if (st == RD_OK && ins[i].edited && !(cin[i].to != x && cin[i].n_ops == 0)) {
            rd_value_info vi;
            rd_model_value(m, (size_t)x, &vi);
            st = emit_chain(&e, &cin[i], vi.name, name_of(&e, cin[i].to), opset, err);
        }
    }
    rd_onnx_copy_options copt = {.drop_node = e.drop, .value_names = (const char *const *)e.names, .no_io = true};
    if (st == RD_OK)
        st = rd_onnx_builder_add_model(e.b, m, &copt, err);
    for (size_t i = 0; i < n_out && st == RD_OK; i++) {
        int y = rd_model_output(m, i);
        if (outs[i].edited) {
            rd_value_info vi;
            rd_model_value(m, (size_t)y, &vi);
            st = emit_chain(&e, &cout[i], name_of(&e, cout[i].from), vi.name, opset, err);
        }
        if (st == RD_OK)
            st = declare_io(&e, y, &outs[i], true);
    }
    if (st == RD_OK)
        st = rd_onnx_builder_write(e.b, out_buf, out_len, err);
    if (stats)
        *stats = e.stats;
    editor_fini(&e);
    free(cin);
    free(cout);
    return st;
}
