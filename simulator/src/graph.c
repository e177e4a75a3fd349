/*
 * graph.c: turns freshly parsed values and nodes into a runnable graph.
 *
 * Steps: bind each node to its operator and parse its attributes; order the nodes topologically
 * (keeping the file's order wherever it is already valid, so tables list layers as the model does);
 * check that every input is produced exactly once; apply input shape overrides; infer shapes and
 * dtypes statically, folding every node whose inputs are all constant (this folds the Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape chains that exporters emit); compute liveness.
 */
#include "internal.h"

#include <stdio.h>

/* ---- operator binding -------------------------------------------------------------------------- */

static int count_present(const int *ids, int n)
{
    int last = -1;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0)
            last = i;
    return last + 1;
}

static rd_status bind_ops(rd_model *m, const rd_load_options *opt, rd_error *err)
{
    char missing[700] = "";
    size_t used = 0;
    int n_missing = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        sim_node *n = &m->nodes[i];
        n->def = sim_op_find(n->domain, n->op_type);
        if (!n->def) {
            n_missing++;
            if (used < sizeof missing - 1) {
                int w = snprintf(missing + used, sizeof missing - used, "%s%s%s%s (node '%s')", used ? ", " : "",
                                 n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, n->name);
                if (w > 0)
                    used += (size_t)w;
            }
            continue;
        }
        const sim_op_def *d = n->def;
        int n_in = count_present(n->in, n->n_in);
        if (n_in < d->min_in || n->n_in > d->max_in) {
            return rd_errorf(err, RD_E_PARSE, "%s: node '%s' (#%d, %s) has %d inputs, the operator takes %d to %d",
                             m->path, n->name, i, n->op_type, n->n_in, d->min_in, d->max_in);
        }
        for (int k = 0; k < d->min_in && k < n->n_in; k++)
            if (n->in[k] < 0)
                return rd_errorf(err, RD_E_PARSE, "%s: node '%s' (#%d, %s): required input %d is empty", m->path,
                                 n->name, i, n->op_type, k);
        if (n->n_out < d->min_out || n->n_out > d->max_out)
            return rd_errorf(err, RD_E_PARSE, "%s: node '%s' (#%d, %s) has %d outputs, the operator gives %d to %d",
                             m->path, n->name, i, n->op_type, n->n_out, d->min_out, d->max_out);
        if (n->opset && n->opset < d->since)
            return rd_errorf(err, RD_E_UNSUPPORTED,
                             "%s: node '%s' (%s) uses opset %d; versions before %d are not supported", m->path, n->name,
                             n->op_type, n->opset, d->since);
        if (n->opset && d->until && n->opset > d->until)
            return rd_errorf(err, RD_E_PARSE, "%s: node '%s' (%s) uses opset %d, but ONNX dropped %s after opset %d",
                             m->path, n->name, n->op_type, n->opset, n->op_type, d->until);
        if (d->params_size) {
            n->params = calloc(1, d->params_size);
            if (!n->params)
                return rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
        if (d->parse) {
            rd_status st = d->parse(n, n->params, err);
            if (st != RD_OK)
                return rd_error_prefix(err, "%s", m->path);
        }
    }
    if (n_missing && !(opt && opt->allow_unsupported_ops))
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: %d node%s use%s operators this build does not implement: %s",
                         m->path, n_missing, n_missing == 1 ? "" : "s", n_missing == 1 ? "s" : "", missing);
    return RD_OK;
}

/* ---- topological order (Kahn's algorithm, smallest file index first) ----------------------------- */

typedef struct heap {
    int *a;
    int n;
} heap;

static void heap_push(heap *h, int v)
{
    int i = h->n++;
    h->a[i] = v;
    while (i > 0 && h->a[(i - 1) / 2] > h->a[i]) {
        int p = (i - 1) / 2, t = h->a[p];
        h->a[p] = h->a[i];
        h->a[i] = t;
        i = p;
    }
}

static int heap_pop(heap *h)
{
    int top = h->a[0];
    h->a[0] = h->a[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, s = i;
        if (l < h->n && h->a[l] < h->a[s])
            s = l;
        if (r < h->n && h->a[r] < h->a[s])
            s = r;
        if (s == i)
            break;
        int t = h->a[s];
        h->a[s] = h->a[i];
        h->a[i] = t;
        i = s;
    }
    return top;
}

static rd_status check_producers(rd_model *m, rd_error *err)
{
    for (int v = 0; v < m->n_values; v++)
        m->values[v].producer = -1;
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0)
                continue;
            sim_value *val = &m->values[v];
            if (val->producer >= 0 || val->is_graph_input || val->konst)
                return rd_errorf(err, RD_E_PARSE, "%s: tensor '%s' is produced twice (node '%s' #%d and %s)", m->path,
                                 val->name, n->name, i,
                                 val->producer >= 0 ? m->nodes[val->producer].name : "a graph input or initializer");
            val->producer = i;
        }
    }
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v < 0)
                continue;
            const sim_value *val = &m->values[v];
            if (val->producer < 0 && !val->is_graph_input && !val->konst)
                return rd_errorf(err, RD_E_PARSE,
                                 "%s: node '%s' (#%d, %s): input '%s' is not a graph input, an initializer or the "
                                 "output of any node",
                                 m->path, n->name, i, n->op_type, val->name);
        }
    }
    for (int o = 0; o < m->n_outputs; o++) {
        const sim_value *val = &m->values[m->outputs[o]];
        if (val->producer < 0 && !val->is_graph_input && !val->konst)
            return rd_errorf(err, RD_E_PARSE, "%s: graph output '%s' is not produced by any node", m->path, val->name);
    }
    return RD_OK;
}

static rd_status topo_sort(rd_model *m, rd_error *err)
{
    int n = m->n_nodes;
    if (n == 0)
        return RD_OK;
    int *pending = calloc((size_t)n, sizeof *pending); /* inputs not yet produced, per node */
    int *order = malloc((size_t)n * sizeof *order);
    heap h = {malloc((size_t)n * sizeof(int)), 0};
    /* consumers of each value as a CSR list */
    int *cons_start = calloc((size_t)m->n_values + 1, sizeof(int));
    rd_status st = RD_OK;
    if (!pending || !order || !h.a || !cons_start) {
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    size_t total = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] >= 0) {
                cons_start[m->nodes[i].in[k] + 1]++;
                total++;
            }
    for (int v = 0; v < m->n_values; v++)
        cons_start[v + 1] += cons_start[v];
    int *cons = malloc((total ? total : 1) * sizeof(int));
    int *fill = calloc((size_t)m->n_values, sizeof(int));
    if (!cons || !fill) {
        free(cons);
        free(fill);
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const sim_node *nd = &m->nodes[i];
        for (int k = 0; k < nd->n_in; k++) {
            int v = nd->in[k];
            if (v < 0)
                continue;
            cons[cons_start[v] + fill[v]++] = i;
            if (m->values[v].producer >= 0)
                pending[i]++;
        }
    }
    free(fill);
    for (int i = 0; i < n; i++)
        if (pending[i] == 0)
            heap_push(&h, i);
    int done = 0;
    while (h.n) {
        int i = heap_pop(&h);
        order[done++] = i;
        const sim_node *nd = &m->nodes[i];
        for (int k = 0; k < nd->n_out; k++) {
            int v = nd->out[k];
            if (v < 0)
                continue;
            for (int c = cons_start[v]; c < cons_start[v + 1]; c++)
                if (--pending[cons[c]] == 0)
                    heap_push(&h, cons[c]);
        }
    }
    free(cons);
    if (done != n) {
        int stuck = -1;
        for (int i = 0; i < n && stuck < 0; i++)
            if (pending[i] > 0)
                stuck = i;
        st = rd_errorf(err, RD_E_PARSE, "%s: the graph has a cycle (node '%s' #%d, %s, depends on its own output)",
                       m->path, m->nodes[stuck].name, stuck, m->nodes[stuck].op_type);
        goto out;
    }
    sim_node *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        sorted[i] = m->nodes[order[i]];
    free(m->nodes);
    m->nodes = sorted;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m->nodes[i].n_out; k++)
            if (m->nodes[i].out[k] >= 0)
                m->values[m->nodes[i].out[k]].producer = i;
out:
    free(pending);
    free(order);
    free(h.a);
    free(cons_start);
    return st;
}

/* ---- input shape overrides ---------------------------------------------------------------------- */

/* Applies the caller's input shapes. Errors name the shapes as the caller calls them (opt->input_shapes_from):
   the command line's --input-shape is a usage error, a config file's list an input error. */
static rd_status apply_input_shapes(rd_model *m, const rd_load_options *opt, rd_error *err)
{
    if (!opt)
        return RD_OK;
    const char *from = opt->input_shapes_from ? opt->input_shapes_from : "--input-shape";
    rd_status code = opt->input_shapes_from ? RD_E_INVAL : RD_E_USAGE;
    for (size_t i = 0; i < opt->n_input_shapes; i++) {
        const rd_input_shape *s = &opt->input_shapes[i];
        int found = -1;
        for (int k = 0; k < m->n_inputs; k++)
            if (strcmp(m->values[m->inputs[k]].name, s->name) == 0)
                found = m->inputs[k];
        if (found < 0) {
            char names[512] = "";
            size_t used = 0;
            for (int k = 0; k < m->n_inputs && used < sizeof names; k++) {
                int w =
                    snprintf(names + used, sizeof names - used, "%s'%s'", k ? ", " : "", m->values[m->inputs[k]].name);
                if (w > 0)
                    used += (size_t)w;
            }
            return rd_errorf(err, code, "%s: %s names '%s', which is not a graph input (inputs: %s)", m->path, from,
                             s->name, names);
        }
        sim_value *v = &m->values[found];
        if (v->rank >= 0 && v->rank != s->rank)
            return rd_errorf(err, code, "%s: %s %s has %d dims, the model declares %d", m->path, from, s->name, s->rank,
                             v->rank);
        for (int d = 0; d < s->rank; d++) {
            if (s->dims[d] < 0)
                return rd_errorf(err, code, "%s: %s %s: dim %d is negative", m->path, from, s->name, d);
            if (v->rank >= 0 && v->dims[d] >= 0 && v->dims[d] != s->dims[d] && !v->dim_params[d] &&
                !opt->replace_fixed_dims)
                return rd_errorf(err, code, "%s: %s %s: dim %d is %lld but the model fixes it to %lld", m->path, from,
                                 s->name, d, (long long)s->dims[d], (long long)v->dims[d]);
            v->dims[d] = s->dims[d];
        }
        v->rank = s->rank;
    }
    return RD_OK;
}

/* ---- static inference and folding -------------------------------------------------------------- */

static bool value_shape_known(const sim_value *v)
{
    if (v->konst)
        return true;
    if (v->rank < 0 || v->dtype == RD_DT_UNDEFINED)
        return false;
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] < 0)
            return false;
    return true;
}

/* Infers node n's output types and ranks on a probe where each unknown input dim is `fill`. */
static bool probe_outputs(const rd_model *m, sim_node *n, int64_t fill, sim_scratch *scratch, rd_tensor *outs)
{
    rd_tensor views[SIM_MAX_NODE_IO];
    const rd_tensor *in[SIM_MAX_NODE_IO];
    bool present[SIM_MAX_NODE_IO];
    for (int k = 0; k < n->n_in; k++) {
        in[k] = NULL;
        if (n->in[k] < 0)
            continue;
        const sim_value *v = &m->values[n->in[k]];
        if (v->konst) {
            views[k] = *v->konst;
        } else {
            if (v->rank < 0 || v->dtype == RD_DT_UNDEFINED)
                return false;
            int64_t dims[RD_MAX_RANK];
            for (int d = 0; d < v->rank; d++)
                dims[d] = v->dims[d] < 0 ? fill : v->dims[d];
            memset(&views[k], 0, sizeof views[k]);
            sim_set_shape(&views[k], v->dtype, v->rank, dims);
        }
        in[k] = &views[k];
    }
    for (int k = 0; k < n->n_out; k++) {
        memset(&outs[k], 0, sizeof outs[k]);
        present[k] = n->out[k] >= 0;
    }
    sim_op_ctx ctx = sim_node_ctx(n, in, outs, present, scratch);
    rd_error ignored;
    return n->def->infer(&ctx, &ignored) == RD_OK && !ctx.deferred;
}

/*
 * A node whose input dims are not all known (a symbolic batch size) still has known output types and
 * ranks: they are inferred on two probes where each unknown dim is 1, then 2, and kept where both agree
 * (a rank that depends on the dims, as Squeeze without axes, stays unknown). The dims stay unknown until
 * run time. Without the types the simulators would not know which tensors are float activations.
 */
static void infer_types_only(rd_model *m, sim_node *n, sim_scratch *scratch)
{
    rd_tensor a[SIM_MAX_NODE_IO], b[SIM_MAX_NODE_IO];
    if (!probe_outputs(m, n, 1, scratch, a) || !probe_outputs(m, n, 2, scratch, b))
        return; /* the probe's dims did not fit: the types stay unknown until run time */
    for (int k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0 || a[k].dtype != b[k].dtype || a[k].rank != b[k].rank)
            continue;
        sim_value *v = &m->values[n->out[k]];
        if (v->dtype == RD_DT_UNDEFINED)
            v->dtype = a[k].dtype;
        if (v->rank < 0) {
            v->rank = a[k].rank;
            for (int d = 0; d < v->rank; d++)
                v->dims[d] = a[k].dims[d] == b[k].dims[d] ? a[k].dims[d] : -1;
        }
    }
}

/* Infers one node's outputs from what is known at load time and folds it when it can. */
static rd_status infer_node(rd_model *m, int idx, sim_scratch *scratch, rd_error *err)
{
    sim_node *n = &m->nodes[idx];
    const sim_op_def *d = n->def;
    if (!d)
        return RD_OK;
    rd_tensor views[SIM_MAX_NODE_IO];
    const rd_tensor *in[SIM_MAX_NODE_IO];
    rd_tensor outs[SIM_MAX_NODE_IO];
    bool present[SIM_MAX_NODE_IO];
    if (n->n_in > SIM_MAX_NODE_IO || n->n_out > SIM_MAX_NODE_IO)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: node '%s' (%s) has %d inputs and %d outputs; at most %d of each are "
                         "supported",
                         m->path, n->name, n->op_type, n->n_in, n->n_out, SIM_MAX_NODE_IO);
    bool all_const = true;
    for (int k = 0; k < n->n_in; k++) {
        in[k] = NULL;
        if (n->in[k] < 0)
            continue;
        const sim_value *v = &m->values[n->in[k]];
        if (!value_shape_known(v)) {
            infer_types_only(m, n, scratch);
            return RD_OK; /* dims stay unknown until run time */
        }
        if (v->konst) {
            views[k] = *v->konst;
        } else {
            memset(&views[k], 0, sizeof views[k]);
            sim_set_shape(&views[k], v->dtype, v->rank, v->dims);
            all_const = false;
        }
        in[k] = &views[k];
    }
    memset(outs, 0, sizeof *outs * (size_t)n->n_out);
    for (int k = 0; k < n->n_out; k++)
        present[k] = n->out[k] >= 0;
    sim_op_ctx ctx = sim_node_ctx(n, in, outs, present, scratch);
    rd_status st = d->infer(&ctx, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", m->path);
    if (ctx.deferred)
        return RD_OK; /* dims stay unknown until run time */
    for (int k = 0; k < n->n_out; k++) {
        if (!present[k])
            continue;
        sim_value *v = &m->values[n->out[k]];
        v->dtype = outs[k].dtype;
        v->rank = outs[k].rank;
        for (int i = 0; i < outs[k].rank; i++)
            v->dims[i] = outs[k].dims[i];
    }
    if (d->macs)
        n->macs = d->macs(&ctx);
    bool foldable = all_const || (d->flags & SIM_OP_SHAPE_ONLY);
    if (!foldable || (d->flags & SIM_OP_NO_FOLD) || !d->eval[SIM_PREC_F32])
        return RD_OK;
    /* Fold: compute the outputs now and keep them as constants. */
    for (int k = 0; k < n->n_out; k++) {
        if (!present[k])
            continue;
        rd_tensor shape = outs[k];
        st = rd_tensor_alloc(&outs[k], shape.dtype, shape.rank, shape.dims, err);
        if (st != RD_OK)
            goto fail;
    }
    st = d->eval[SIM_PREC_F32](&ctx, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "%s: folding node '%s' (%s)", m->path, n->name, n->op_type);
        goto fail;
    }
    for (int k = 0; k < n->n_out; k++) {
        if (!present[k])
            continue;
        rd_tensor *keep = malloc(sizeof *keep);
        if (!keep) {
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            goto fail;
        }
        *keep = outs[k];
        memset(&outs[k], 0, sizeof outs[k]);
        m->values[n->out[k]].konst = keep;
    }
    n->folded = true;
    return RD_OK;
fail:
    for (int k = 0; k < n->n_out; k++)
        rd_tensor_fini(&outs[k]);
    return st;
}

static int *mark_of(sim_value *v, bool outputs)
{
    return outputs ? &v->producer : &v->last_use;
}

/* For every value, the last node listing it among its outputs (producer) or its inputs (last_use); -1 for none. */
static void mark_last_lister(rd_model *m, bool outputs)
{
    for (int v = 0; v < m->n_values; v++)
        *mark_of(&m->values[v], outputs) = -1;
    for (int i = 0; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        const int *vals = outputs ? n->out : n->in;
        const int count = outputs ? n->n_out : n->n_in;
        for (int k = 0; k < count; k++)
            if (vals[k] >= 0)
                *mark_of(&m->values[vals[k]], outputs) = i;
    }
}

void sim_graph_liveness(rd_model *m)
{
    mark_last_lister(m, false);
}

void sim_graph_producers(rd_model *m)
{
    mark_last_lister(m, true);
}

rd_status sim_graph_prepare(rd_model *m, const rd_load_options *opt, rd_error *err)
{
    for (int o = 0; o < m->n_outputs; o++)
        m->values[m->outputs[o]].is_graph_output = true;
    for (int k = 0; k < m->n_inputs; k++)
        m->values[m->inputs[k]].is_graph_input = true;
    rd_status st = bind_ops(m, opt, err);
    if (st == RD_OK)
        st = check_producers(m, err);
    if (st == RD_OK)
        st = topo_sort(m, err);
    if (st == RD_OK)
        st = apply_input_shapes(m, opt, err);
    if (st != RD_OK)
        return st;
    sim_scratch scratch = {0};
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++)
        st = infer_node(m, i, &scratch, err);
    sim_scratch_fini(&scratch);
    sim_graph_liveness(m);
    return st;
}
