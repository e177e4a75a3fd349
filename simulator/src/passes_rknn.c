/*
 * passes_rknn.c: level 3, what RKNN's compiler makes of the graph (docs/numerics.md "RKNN's fusions";
 * the evidence: ../shared/docs/rknn-compiler.md). Three steps, all driven by the operator table:
 *
 * 1. replace_exswish: a Sigmoid whose only reader is a Mul(x, sigmoid(x)) of the same x becomes one exSwish
 *    unit: the sigmoid's output is not materialised.
 * 2. Labels: each node gets the op type RKNN's accuracy_analysis prints for its tensors (row_op: Conv for a
 *    Gemm, Reshape for a Squeeze, exSoftmax13, exSwish, ...) and its NPU op; an op whose kernels compute a
 *    lowered NPU form (GlobalAveragePool as a depthwise Conv) is marked lowered.
 * 3. Fusion groups, by the rules below (longest first): each inner tensor of a group becomes virtual_out
 *    with fused_into = the group's output, and every member node gets the group's NPU op type: the head's
 *    NPU op followed by each member's, capitalised (Conv + Add + Relu = ConvAddRelu).
 *
 * A step fuses only when the tensor it consumes is read by that one unit and is not a graph output (RKNN's
 * rule for a Conv read elsewhere is not public: our guess). Nodes stay in place and the FP32 result is
 * unchanged; what changes is which tensors are materialised (rounded to int8 / float16).
 */
#include "passes.h"

#include <ctype.h>
#include <stdio.h>

/* One step of a rule: the role its unit must have; residual: the unit is the Add of a residual shortcut. */
typedef struct fuse_step {
    unsigned role;
    bool residual;
} fuse_step;

typedef struct fuse_rule {
    unsigned head; /* role of the group's first node */
    fuse_step steps[2];
    int n_steps;
} fuse_rule;

/* In order of preference. Evidence (rknn-compiler.md section 2): ConvAddRelu [file pp_human], ConvReluAdd
   [log LubanCat yolov5], ConvAdd [file multiple_input_demo], ConvRelu/ConvClip/ConvLeakyRelu/ConvSigmoid/
   ConvExSwish/ConvExGelu [log], ConvTranspose + Relu/LeakyRelu/Sigmoid [doc, changelog], AddRelu [file]. */
static const fuse_rule rules[] = {
    {SIM_FUSE_CONV, {{SIM_FUSE_ADD, true}, {SIM_FUSE_ADD_ACT, false}}, 2},
    {SIM_FUSE_CONV, {{SIM_FUSE_ADD_ACT, false}, {SIM_FUSE_ADD, true}}, 2},
    {SIM_FUSE_CONV, {{SIM_FUSE_ADD, true}, {0, false}}, 1},
    {SIM_FUSE_CONV, {{SIM_FUSE_CONV_ACT, false}, {0, false}}, 1},
    {SIM_FUSE_DECONV, {{SIM_FUSE_DECONV_ACT, false}, {0, false}}, 1},
    {SIM_FUSE_ADD, {{SIM_FUSE_ADD_ACT, false}, {0, false}}, 1},
};

#define MAX_GROUP_NODES 6 /* head + two steps, an exSwish step being two nodes */

typedef struct rknn_pass {
    sim_pass *p;
    int *unit;         /* per node: the last node of its unit (itself, or an exSwish's Mul) */
    bool *grouped;     /* per node: already a member of a fused group */
    int n_values;      /* values when the pass began (it adds none) */
    int *reader_start; /* per value v: its readers are reader_node[reader_start[v] .. reader_start[v+1]) */
    int *reader_node;  /* one entry per input slot, so a lookup costs the readers, not the graph */
} rknn_pass;

/* Lists the readers of every value once, so that finding a tensor's readers stays linear in the graph. */
static rd_status index_readers(rknn_pass *r, rd_error *err)
{
    const rd_model *m = r->p->m;
    r->n_values = m->n_values;
    r->reader_start = sim_calloc_array((size_t)m->n_values + 1, sizeof *r->reader_start);
    size_t total = 0;
    for (int i = 0; r->reader_start && i < m->n_nodes; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] >= 0) {
                r->reader_start[m->nodes[i].in[k] + 1]++;
                total++;
            }
    r->reader_node = sim_malloc_array(total + 1, sizeof *r->reader_node);
    int *fill = sim_calloc_array((size_t)m->n_values + 1, sizeof *fill);
    if (!r->reader_start || !r->reader_node || !fill) {
        free(fill);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory for RKNN's fusions", m->path);
    }
    for (int v = 0; v < m->n_values; v++)
        r->reader_start[v + 1] += r->reader_start[v];
    for (int i = 0; i < m->n_nodes; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++) {
            int v = m->nodes[i].in[k];
            if (v >= 0)
                r->reader_node[r->reader_start[v] + fill[v]++] = i;
        }
    free(fill);
    return RD_OK;
}

static bool live(const sim_pass *p, int i)
{
    const sim_node *n = &p->m->nodes[i];
    return !p->removed[i] && !n->folded && n->domain[0] == '\0' && n->def;
}

static unsigned roles(const sim_pass *p, int i)
{
    return live(p, i) ? p->m->nodes[i].def->fuse : 0;
}

static bool is_const(const rd_model *m, int v)
{
    return v >= 0 && m->values[v].konst != NULL;
}

/* ---- replace_exswish ------------------------------------------------------------------------- */

/* Sigmoid node s whose output's only reader is Mul(x, sigmoid(x)) on the sigmoid's own input: that Mul. */
static int swish_mul(const rknn_pass *r, int s)
{
    const sim_pass *p = r->p;
    const rd_model *m = p->m;
    const sim_node *sn = &m->nodes[s];
    if (!(roles(p, s) & SIM_FUSE_SWISH_GATE) || sn->n_in < 1 || sn->n_out != 1)
        return -1;
    int x = sn->in[0], g = sn->out[0];
    if (x < 0 || g < 0 || m->values[g].is_graph_output || sim_pass_uses(p, g) != 1)
        return -1;
    for (int i = s + 1; i < m->n_nodes; i++) {
        const sim_node *n = &m->nodes[i];
        if (p->removed[i] || n->n_in != 2 || (n->in[0] != g && n->in[1] != g))
            continue;
        bool pair = (n->in[0] == x && n->in[1] == g) || (n->in[0] == g && n->in[1] == x);
        return pair && (roles(p, i) & SIM_FUSE_SWISH_MUL) ? i : -1;
    }
    return -1;
}

static bool is_swish_unit(const rknn_pass *r, int last)
{
    return r->unit[last] == last && r->p->m->nodes[last].row_op && strcmp(r->p->m->nodes[last].row_op, "exSwish") == 0;
}

/* ---- labels ------------------------------------------------------------------------------------ */

static rd_status set_label(char **slot, const char *name, const rd_model *m, rd_error *err)
{
    char *copy = sim_strdup(name);
    if (!copy)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory naming RKNN's ops", m->path);
    free(*slot);
    *slot = copy;
    return RD_OK;
}

/* The NPU op a single node stands for: its table entry's, computed for this node where that depends on it. */
static const char *own_npu_op(const rd_model *m, const sim_node *n)
{
    if (!n->def)
        return n->op_type;
    if (n->def->npu_op_of)
        return n->def->npu_op_of(n, m);
    return n->def->npu_op ? n->def->npu_op : n->op_type;
}

static rd_status label_nodes(rknn_pass *r, rd_error *err)
{
    sim_pass *p = r->p;
    rd_model *m = p->m;
    for (int i = 0; i < m->n_nodes; i++) {
        if (!live(p, i))
            continue;
        int mul = swish_mul(r, i);
        if (mul >= 0) { /* replace_exswish: Sigmoid + Mul -> exSwish (<Sigmoid>_2swish) */
            int g = m->nodes[i].out[0];
            m->values[g].virtual_out = true;
            m->values[g].fused_into = m->nodes[mul].out[0];
            r->unit[i] = mul;
            rd_status st = RD_OK;
            for (int k = 0; k < 2 && st == RD_OK; k++) {
                sim_node *n = &m->nodes[k ? mul : i];
                st = set_label(&n->row_op, "exSwish", m, err);
                if (st == RD_OK)
                    st = set_label(&n->npu_op, "exSwish", m, err);
            }
            if (st != RD_OK)
                return st;
            continue;
        }
        sim_node *n = &m->nodes[i];
        if (n->row_op) /* the Mul of an exSwish labelled above */
            continue;
        const char *own = own_npu_op(m, n);
        rd_status st = set_label(&n->row_op, own, m, err);
        if (st == RD_OK)
            st = set_label(&n->npu_op, own, m, err);
        if (st != RD_OK)
            return st;
        n->lowered = (n->def->flags & SIM_OP_LOWERED_KERNELS) != 0;
    }
    return RD_OK;
}

/* ---- fusion groups ----------------------------------------------------------------------------- */

/* The unit reading v: the one unit all of v's readers belong to, when v is a float activation that is not
   a graph output; -1 otherwise. */
static int sole_reader_unit(const rknn_pass *r, int v)
{
    const sim_pass *p = r->p;
    const rd_model *m = p->m;
    if (v < 0 || m->values[v].is_graph_output || m->values[v].konst || m->values[v].virtual_out)
        return -1;
    if (v >= r->n_values)
        return -1;
    int unit = -1;
    for (int j = r->reader_start[v]; j < r->reader_start[v + 1]; j++) {
        int i = r->reader_node[j];
        if (p->removed[i])
            continue;
        if (unit >= 0 && r->unit[i] != unit)
            return -1;
        unit = r->unit[i];
    }
    return unit;
}

static unsigned unit_roles(const rknn_pass *r, int last)
{
    return is_swish_unit(r, last) ? SIM_FUSE_CONV_ACT : roles(r->p, last);
}

/* A head: a live node with the role whose weights are constant (a MatMul of two activations is no conv). */
static bool head_ok(const rknn_pass *r, int h, unsigned role)
{
    const sim_pass *p = r->p;
    const sim_node *n = &p->m->nodes[h];
    if (r->grouped[h] || r->unit[h] != h || !(roles(p, h) & role) || n->n_out < 1 || n->out[0] < 0)
        return false;
    if (!(role & (SIM_FUSE_CONV | SIM_FUSE_DECONV)))
        return true;
    const int wi = n->def->weight_in;
    return wi > 0 && wi < n->n_in && is_const(p->m, n->in[wi]);
}

/* Same rank and dims; a dim unknown on both sides (a symbolic batch) counts as the same. */
static bool same_shape(const sim_value *a, const sim_value *b)
{
    if (a->rank < 0 || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return true;
}

/* v, the output of a conv head, can be fused into the Add `add` by a ConvAdd rule. */
static bool conv_feeds_add(const rknn_pass *r, int v, int add)
{
    const rd_model *m = r->p->m;
    int prod = v >= 0 ? m->values[v].producer : -1;
    return prod >= 0 && sole_reader_unit(r, v) == add && head_ok(r, prod, SIM_FUSE_CONV) && m->nodes[prod].out[0] == v;
}

/* The Add node u as the residual step of a group reaching it through v: one reading of v, the other
   input an activation of the Add's own shape (the shortcut, materialised by its producer). When both
   inputs are conv outputs, the conv on input 0 is the one fused (multiple_input_demo's ConvAdd; a guess
   beyond that file). */
static bool residual_ok(const rknn_pass *r, int u, int v)
{
    const rd_model *m = r->p->m;
    const sim_node *n = &m->nodes[u];
    if (n->n_in != 2 || n->n_out != 1 || n->out[0] < 0 || (n->in[0] == v) == (n->in[1] == v))
        return false;
    int other = n->in[0] == v ? n->in[1] : n->in[0];
    const sim_value *y = &m->values[n->out[0]];
    if (other < 0 || is_const(m, other) || !same_shape(&m->values[v], y) || !same_shape(&m->values[other], y))
        return false;
    return !(n->in[1] == v && conv_feeds_add(r, other, u));
}

/* The activation unit u after v: its inputs other than the data are constants (Clip's bounds). */
static bool act_ok(const rknn_pass *r, int u, int v)
{
    if (is_swish_unit(r, u))
        return true;
    const sim_node *n = &r->p->m->nodes[u];
    if (n->n_in < 1 || n->in[0] != v || n->n_out != 1)
        return false;
    for (int k = 1; k < n->n_in; k++)
        if (n->in[k] >= 0 && !is_const(r->p->m, n->in[k]))
            return false;
    return true;
}

/* Nodes of unit `last` (an exSwish is its Sigmoid and its Mul). */
static int unit_nodes(const rknn_pass *r, int last, int *out)
{
    int n = 0;
    for (int i = 0; i < last && n < 1; i++)
        if (r->unit[i] == last && i != last)
            out[n++] = i;
    out[n++] = last;
    return n;
}

/* Composes the group's NPU op type: each unit's NPU op, the ones after the first capitalised. */
static void group_name(const rd_model *m, const int *units, int n_units, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < n_units && used + 1 < len; k++) {
        const char *part = m->nodes[units[k]].npu_op ? m->nodes[units[k]].npu_op : m->nodes[units[k]].op_type;
        int w = snprintf(buf + used, len - used, "%s", part);
        if (w < 0)
            break;
        if (k > 0)
            buf[used] = (char)toupper((unsigned char)buf[used]);
        used += (size_t)w < len - used ? (size_t)w : len - used - 1;
    }
}

/* Tries rule `rule` from head h; on a match marks the group (inner tensors virtual, members labelled). */
static rd_status try_rule(rknn_pass *r, int h, const fuse_rule *rule, bool *matched, rd_error *err)
{
    rd_model *m = r->p->m;
    *matched = false;
    if (!head_ok(r, h, rule->head))
        return RD_OK;
    int units[1 + 2], inner[2];
    units[0] = h;
    int v = m->nodes[h].out[0];
    for (int s = 0; s < rule->n_steps; s++) {
        int u = sole_reader_unit(r, v);
        if (u < 0 || r->grouped[u] || !(unit_roles(r, u) & rule->steps[s].role))
            return RD_OK;
        if (rule->steps[s].residual ? !residual_ok(r, u, v) : !act_ok(r, u, v))
            return RD_OK;
        inner[s] = v;
        units[s + 1] = u;
        v = m->nodes[u].out[0];
        if (v < 0)
            return RD_OK;
    }
    char name[128];
    group_name(m, units, rule->n_steps + 1, name, sizeof name);
    for (int k = 0; k <= rule->n_steps; k++) {
        int nodes[2];
        int cnt = unit_nodes(r, units[k], nodes);
        for (int j = 0; j < cnt; j++) {
            rd_status st = set_label(&m->nodes[nodes[j]].npu_op, name, m, err);
            if (st != RD_OK)
                return st;
            r->grouped[nodes[j]] = true;
            for (int o = 0; o < m->nodes[nodes[j]].n_out; o++) /* an exSwish's sigmoid follows the group */
                if (m->nodes[nodes[j]].out[o] >= 0 && m->values[m->nodes[nodes[j]].out[o]].virtual_out)
                    m->values[m->nodes[nodes[j]].out[o]].fused_into = v;
        }
    }
    for (int s = 0; s < rule->n_steps; s++) {
        m->values[inner[s]].virtual_out = true;
        m->values[inner[s]].fused_into = v;
    }
    *matched = true;
    return RD_OK;
}

static rd_status form_groups(rknn_pass *r, rd_error *err)
{
    const rd_model *m = r->p->m;
    for (int h = 0; h < m->n_nodes; h++) {
        if (!live(r->p, h))
            continue;
        for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
            bool matched = false;
            rd_status st = try_rule(r, h, &rules[k], &matched, err);
            if (st != RD_OK)
                return st;
            if (matched)
                break;
        }
    }
    return RD_OK;
}

rd_status sim_pass_rknn(sim_pass *p, rd_error *err)
{
    rd_model *m = p->m;
    rknn_pass r = {.p = p};
    r.unit = sim_malloc_array((size_t)m->n_nodes + 1, sizeof *r.unit);
    r.grouped = sim_calloc_array((size_t)m->n_nodes + 1, sizeof *r.grouped);
    rd_status st = RD_OK;
    if (!r.unit || !r.grouped)
        st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory for RKNN's fusions", m->path);
    for (int i = 0; st == RD_OK && i < m->n_nodes; i++)
        r.unit[i] = i;
    if (st == RD_OK)
        st = index_readers(&r, err);
    if (st == RD_OK)
        st = label_nodes(&r, err);
    if (st == RD_OK)
        st = form_groups(&r, err);
    free(r.unit);
    free(r.grouped);
    free(r.reader_start);
    free(r.reader_node);
    return st;
}
