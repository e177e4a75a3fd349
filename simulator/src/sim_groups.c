/*
 * sim_groups.c: fusion groups set from outside the passes (rd_sim_set_group, rd_sim_clear_groups,
 * rd_sim_set_row_op): a built model's own decisions (a .rknn's nodes, a build log) replacing ours.
 *
 * A group is what the passes make at level 3 (passes_rknn.c): its inner tensors are virtual_out with
 * fused_into = the group's output, and each member node's npu_op names the group. The executor, the
 * simulators and the analysis need nothing else: a node computes at the precision of the tensor its group
 * materialises (sim_node_precision), and inner tensors are never rounded.
 */
#include "sim_internal.h"

#include <stdio.h>

static rd_status set_string(char **slot, const char *v, rd_error *err)
{
    char *copy = sim_strdup(v);
    if (!copy)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    free(*slot);
    *slot = copy;
    return RD_OK;
}

/* The tensor named name, which a node of the optimised graph must compute (not a constant or a graph input). */
static rd_status find_produced(const rd_sim *s, const char *name, const char *what, int *v, rd_error *err)
{
    *v = -1;
    rd_status st = sim_find_value(s, name, v, err);
    if (st != RD_OK)
        return st;
    const sim_value *val = &s->m->values[*v];
    if (val->producer < 0 || val->konst || val->is_graph_input)
        return rd_errorf(err, RD_E_INVAL, "%s: %s '%s' is %s, not a tensor a node computes", s->m->path, what,
                         val->name,
                         val->is_graph_input ? "a graph input"
                         : val->konst        ? "a constant"
                                             : "no longer computed");
    return RD_OK;
}

static bool is_member(const rd_model *m, int node, int out, const int *inner, size_t n_inner)
{
    if (m->values[out].producer == node)
        return true;
    for (size_t k = 0; k < n_inner; k++)
        if (m->values[inner[k]].producer == node)
            return true;
    return false;
}

/* Every reader of inner tensor v is a member of the group. */
static rd_status closed(const rd_sim *s, int v, int out, const int *inner, size_t n_inner, rd_error *err)
{
    const rd_model *m = s->m;
    for (int i = 0; i < m->n_nodes; i++)
        for (int k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] == v && !is_member(m, i, out, inner, n_inner))
                return rd_errorf(err, RD_E_INVAL,
                                 "%s: tensor '%s' cannot be inside the group of '%s': node '%s' (%s) outside the "
                                 "group reads it",
                                 m->path, m->values[v].name, m->values[out].name, m->nodes[i].name,
                                 m->nodes[i].op_type);
    return RD_OK;
}

rd_status rd_sim_set_group(rd_sim *s, const char *npu_op, const char *out, const char *const *inner, size_t n_inner,
                           rd_error *err)
{
    if (!npu_op || !npu_op[0] || !out || (n_inner && !inner))
        return rd_errorf(err, RD_E_INVAL, "a group needs an NPU op type, an output tensor and its inner tensors");
    rd_model *m = s->m;
    int o;
    rd_status st = find_produced(s, out, "group output", &o, err);
    if (st != RD_OK)
        return st;
    if (m->values[o].virtual_out)
        return rd_errorf(err, RD_E_INVAL, "%s: group output '%s' is inside the group of '%s': clear the groups first",
                         m->path, out, m->values[sim_value_holder(m, o)].name);
    int *vs = sim_calloc_array(n_inner + 1, sizeof *vs);
    if (!vs)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t k = 0; k < n_inner && st == RD_OK; k++) {
        st = find_produced(s, inner[k], "inner tensor", &vs[k], err);
        if (st != RD_OK)
            break;
        const sim_value *val = &m->values[vs[k]];
        if (vs[k] == o)
            st = rd_errorf(err, RD_E_INVAL, "%s: tensor '%s' is both the output and inside its group", m->path, out);
        else if (val->is_graph_output)
            st = rd_errorf(err, RD_E_INVAL, "%s: tensor '%s' is a graph output: it cannot be inside a group", m->path,
                           val->name);
        else if (val->virtual_out && sim_value_holder(m, vs[k]) != o)
            st = rd_errorf(err, RD_E_INVAL, "%s: tensor '%s' is inside the group of '%s': clear the groups first",
                           m->path, val->name, m->values[sim_value_holder(m, vs[k])].name);
    }
    for (size_t k = 0; k < n_inner && st == RD_OK; k++)
        st = closed(s, vs[k], o, vs, n_inner, err);
    /* members' labels first (the only step that can fail: out of memory), then the tensors */
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++)
        if (is_member(m, i, o, vs, n_inner))
            st = set_string(&m->nodes[i].npu_op, npu_op, err);
    if (st == RD_OK) {
        for (size_t k = 0; k < n_inner; k++) {
            m->values[vs[k]].virtual_out = true;
            m->values[vs[k]].fused_into = o;
        }
        s->epoch++;
    }
    free(vs);
    return st;
}

rd_status rd_sim_clear_groups(rd_sim *s, rd_error *err)
{
    rd_model *m = s->m;
    for (int i = 0; i < m->n_nodes; i++) {
        sim_node *n = &m->nodes[i];
        rd_status st = set_string(&n->npu_op, n->row_op ? n->row_op : n->op_type, err);
        if (st != RD_OK)
            return st;
    }
    for (int v = 0; v < m->n_values; v++) {
        if (!m->values[v].virtual_out)
            continue;
        m->values[v].virtual_out = false;
        m->values[v].fused_into = -1;
    }
    s->epoch++;
    return RD_OK;
}

rd_status rd_sim_set_row_op(rd_sim *s, const char *tensor, const char *op_type, rd_error *err)
{
    if (!op_type || !op_type[0])
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': an empty op type", tensor ? tensor : "");
    int v;
    rd_status st = find_produced(s, tensor, "tensor", &v, err);
    if (st != RD_OK)
        return st;
    return set_string(&s->m->nodes[s->m->values[v].producer].row_op, op_type, err);
}
