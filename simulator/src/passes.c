/*
 * passes.c: the compiler passes applied to a simulation's copy of a model before quantization
 * (docs/numerics.md, "Compiler passes"; docs/internals/passes.md).
 *
 * Level 0 is what loading did (constant folding); 1 removes Identity and inference Dropout; 2 also
 * folds BatchNormalization into the Conv or Gemm before it (passes_bn.c) and constant bias Adds into the
 * Conv, ConvTranspose, Gemm or MatMul before them (passes_bias.c); 3 also applies RKNN's rewrites and
 * fusions (passes_rknn.c: exSwish, ConvRelu, ConvAdd, ... groups). Each rewrite keeps the FP32 result:
 * removed and folded tensors record, in fused_into, the tensor that now carries their value; fusions
 * leave every node in place and only mark the inner tensors of a group virtual_out. Every pass works on
 * node indices of the topological order, marks the nodes it drops, and compacts the node list once at its
 * end.
 */
#include "passes.h"

#include <stdio.h>

rd_status sim_pass_begin(sim_pass *p, rd_model *m, rd_error *err)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->removed = sim_calloc_array((size_t)m->n_nodes, sizeof *p->removed);
    p->uses = sim_calloc_array((size_t)m->n_values, sizeof *p->uses);
    if (!p->removed || !p->uses) {
        free(p->removed);
        free(p->uses);
        memset(p, 0, sizeof *p);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory for the compiler passes", m->path);
    }
    p->n_uses = m->n_values;
    for (int i = 0; i < m->n_nodes; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] >= 0)
                p->uses[m->nodes[i].in[k]]++;
    return RD_OK;
}

void sim_pass_end(sim_pass *p)
{
    rd_model *m = p->m;
    if (m && p->removed) {
        int kept = 0;
        for (int i = 0; i < m->n_nodes; i++) {
            if (p->removed[i])
                sim_node_fini(&m->nodes[i]);
            else
                m->nodes[kept++] = m->nodes[i];
        }
        m->n_nodes = kept;
        /* removed nodes' outputs end with no producer; everything else is renumbered */
        sim_graph_producers(m);
    }
    free(p->removed);
    free(p->uses);
    memset(p, 0, sizeof *p);
}

int sim_pass_uses(const sim_pass *p, int v)
{
    return v >= 0 && v < p->n_uses ? p->uses[v] : 0;
}

bool sim_pass_is_live_op(const sim_pass *p, int node, const char *op_type)
{
    if (node < 0 || node >= p->m->n_nodes || p->removed[node])
        return false;
    const sim_node *n = &p->m->nodes[node];
    return !n->folded && n->domain[0] == '\0' && strcmp(n->op_type, op_type) == 0;
}

rd_op_weight sim_pass_weight_rule(const sim_pass *p, int node)
{
    if (node < 0 || node >= p->m->n_nodes || p->removed[node])
        return RD_OP_WEIGHT_NONE;
    const sim_node *n = &p->m->nodes[node];
    return !n->folded && n->domain[0] == '\0' && n->def ? n->def->weight : RD_OP_WEIGHT_NONE;
}

int sim_pass_fusable_producer(const sim_pass *p, int v)
{
    if (v < 0 || v >= p->m->n_values)
        return -1;
    const sim_value *val = &p->m->values[v];
    if (val->is_graph_output || val->konst || sim_pass_uses(p, v) != 1)
        return -1;
    int prod = val->producer;
    if (prod < 0 || p->removed[prod] || p->m->nodes[prod].folded)
        return -1;
    return prod;
}

/* One reader fewer for v (values created by this pass are not counted). */
void sim_pass_drop_use(sim_pass *p, int v)
{
    if (v >= 0 && v < p->n_uses)
        p->uses[v]--;
}

/* Adds a float32 constant named base + suffix (made unique); takes t. *out is the value index. */
rd_status sim_pass_room_for_bias(sim_node *n, rd_error *err)
{
    if (n->n_in >= 3)
        return RD_OK;
    int *grown = realloc(n->in, 3 * sizeof *grown);
    if (!grown)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    n->in = grown;
    return RD_OK;
}

void sim_pass_absorb(sim_pass *p, int prod, int node, int bias)
{
    rd_model *m = p->m;
    sim_node *n = &m->nodes[prod];
    const int x = n->out[0], y = m->nodes[node].out[0];
    n->in[2] = bias;
    if (n->n_in < 3)
        n->n_in = 3;
    n->out[0] = y;
    m->values[y].producer = prod;
    m->values[x].producer = -1;
    m->values[x].fused_into = y;
    p->uses[x] = 0;
    p->removed[node] = true;
}

rd_status sim_pass_add_constant(rd_model *m, const char *base, const char *suffix, rd_tensor *t, int *out,
                                rd_error *err)
{
    size_t len = strlen(base) + strlen(suffix) + 16;
    char *name = malloc(len);
    rd_tensor *keep = malloc(sizeof *keep);
    int v = -1;
    if (name && keep) {
        snprintf(name, len, "%s%s", base, suffix);
        for (int n = 2; sim_model_find(m, name) >= 0 && n < 1000000; n++)
            snprintf(name, len, "%s%s_%d", base, suffix, n);
        v = sim_model_find(m, name) < 0 ? sim_model_intern(m, name) : -1;
    }
    free(name);
    if (v < 0) {
        free(keep);
        rd_tensor_fini(t);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory adding the folded constant %s%s", m->path, base, suffix);
    }
    *keep = *t;
    memset(t, 0, sizeof *t);
    sim_value *val = &m->values[v];
    val->konst = keep;
    val->is_initializer = true;
    val->dtype = keep->dtype;
    val->rank = keep->rank;
    for (int d = 0; d < keep->rank; d++)
        val->dims[d] = keep->dims[d];
    *out = v;
    return RD_OK;
}

/* ---- level 1: Identity and inference Dropout -------------------------------------------------- */

/* A Dropout that is the identity and whose removal loses nothing: training_mode absent or a constant
   false (opset 12+; ratio is irrelevant then), and the mask output absent or unread. */
static bool dropout_removable(const sim_pass *p, const sim_node *n)
{
    const rd_model *m = p->m;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const rd_tensor *t = m->values[n->in[2]].konst;
        if (!t || rd_tensor_numel(t) != 1 || sim_get_int(t, 0) != 0)
            return false;
    }
    if (n->n_out > 1 && n->out[1] >= 0) {
        int mask = n->out[1];
        if (sim_pass_uses(p, mask) != 0 || m->values[mask].is_graph_output)
            return false;
    }
    return true;
}

/* Drops node i, a passthrough, recording that its output now lives in its input; the readers are
   rewired as the sweep of remove_identities reaches them. Graph outputs keep their producer (the name
   is the model's interface), so such a node stays. */
static void remove_passthrough(sim_pass *p, int i)
{
    rd_model *m = p->m;
    sim_node *n = &m->nodes[i];
    int x = n->in[0], y = n->out[0];
    if (x < 0 || y < 0 || m->values[y].is_graph_output)
        return;
    p->uses[x] += p->uses[y] - 1;
    p->uses[y] = 0;
    m->values[y].fused_into = x;
    m->values[y].producer = -1;
    if (n->n_out > 1 && n->out[1] >= 0) /* Dropout's unread mask */
        m->values[n->out[1]].producer = -1;
    p->removed[i] = true;
}

/* Points node i's inputs that a removed passthrough wrote at the tensor it passed through. That tensor
   is final: its own producer came earlier in the sweep and was resolved then. */
static void follow_passthroughs(sim_pass *p, int i)
{
    rd_model *m = p->m;
    sim_node *n = &m->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v >= 0 && m->values[v].fused_into >= 0 && m->values[v].producer < 0 && !m->values[v].konst &&
            !m->values[v].is_graph_input)
            n->in[k] = m->values[v].fused_into;
    }
}

/* One sweep in topological order (a scan of the later nodes per removal made chains quadratic). */
static void remove_identities(sim_pass *p)
{
    for (int i = 0; i < p->m->n_nodes; i++) {
        if (p->removed[i])
            continue;
        follow_passthroughs(p, i);
        if (sim_pass_is_live_op(p, i, "Identity") ||
            (sim_pass_is_live_op(p, i, "Dropout") && dropout_removable(p, &p->m->nodes[i])))
            remove_passthrough(p, i);
    }
}

/* ---- driver ---------------------------------------------------------------------------------- */

rd_status sim_passes_apply(rd_model *m, int level, rd_error *err)
{
    if (level < 0 || level > 3)
        return rd_errorf(err, RD_E_INVAL, "%s: optimization level %d is not 0, 1, 2 or 3", m->path, level);
    sim_pass p;
    rd_status st = RD_OK;
    if (level >= 1) {
        st = sim_pass_begin(&p, m, err);
        if (st != RD_OK)
            return st;
        remove_identities(&p);
        sim_pass_end(&p);
    }
    if (level >= 2) {
        st = sim_pass_begin(&p, m, err);
        if (st != RD_OK)
            return st;
        /* a bias Add may come before or after a BatchNormalization */
        st = sim_pass_fold_biases(&p, err);
        if (st == RD_OK)
            st = sim_pass_fold_batchnorms(&p, err);
        if (st == RD_OK)
            st = sim_pass_fold_biases(&p, err);
        sim_pass_end(&p);
    }
    if (level >= 3 && st == RD_OK) {
        st = sim_pass_begin(&p, m, err);
        if (st != RD_OK)
            return st;
        st = sim_pass_rknn(&p, err);
        sim_pass_end(&p);
    }
    sim_graph_liveness(m);
    return st;
}
