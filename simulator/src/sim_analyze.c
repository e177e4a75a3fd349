/*
 * sim_analyze.c: golden, simulator-entire and simulator-single in one pass over the optimised graph.
 *
 * Three computations advance node by node in lockstep: the float32 golden, the simulation end to end
 * ("entire") and, for each layer, the simulation of that layer alone on the golden values of its inputs
 * held at their precision ("single": the error the layer adds by itself, as RKNN defines it). A fused
 * group (Conv then Relu) is one layer: its inner value comes from the single computation of the group,
 * its outer inputs from the golden. Each tensor is handed to the callback the moment all three exist and
 * is freed after its last consumer, so memory stays at about three times the live set of one run. The
 * computations of a node run one after the other, so they share one kernel scratch (not one each).
 */
#include "sim_internal.h"

typedef struct single_state {
    rd_tensor *vals; /* per value: a fused group's inner value, kept for the group's next node */
} single_state;

static rd_status single_materialize(void *user, int value, rd_tensor *t, rd_error *err)
{
    rd_sim *s = user;
    rd_sim_layer_stats unused;
    return sim_materialize(s, value, t, &unused, err);
}

/* Where a layer's outer inputs come from: the golden run, or the board. */
typedef struct input_source {
    const sim_run_state *golden;
    rd_runtime_fn runtime; /* non-NULL: the board's tensors */
    void *runtime_user;
} input_source;

static const rd_tensor *outer_input(const input_source *src, int v)
{
    if (!src->runtime)
        return &src->golden->vals[v];
    const rd_tensor *t = src->runtime(src->runtime_user, v);
    if (t && t->dtype != RD_DT_F32)
        return NULL;
    return t;
}

/*
 * Computes node idx alone: outer inputs from src held at their precision, a fused group's inner values
 * from ss. *computed false (outs untouched) when the board did not dump an input.
 */
static rd_status compute_single(rd_sim *s, int idx, const input_source *src, single_state *ss, sim_scratch *work,
                                rd_tensor *outs, bool *computed, rd_error *err)
{
    *computed = false;
    const sim_node *n = &s->m->nodes[idx];
    const rd_tensor *in[SIM_MAX_NODE_IO];
    rd_tensor held[SIM_MAX_NODE_IO];
    memset(held, 0, sizeof held);
    rd_status st = RD_OK;
    bool inputs_known = true;
    for (int k = 0; k < n->n_in && st == RD_OK && inputs_known; k++) {
        int v = n->in[k];
        in[k] = NULL;
        if (v < 0)
            continue;
        const sim_value *val = &s->m->values[v];
        if (val->konst) {
            in[k] = &src->golden->vals[v];
        } else if (val->virtual_out) {
            if (!ss->vals[v].data && rd_tensor_numel(&src->golden->vals[v]) > 0)
                inputs_known = false; /* the group's first node could not run */
            in[k] = &ss->vals[v];
        } else {
            const rd_tensor *from = outer_input(src, v);
            if (!from) {
                inputs_known = false;
                break;
            }
            st = rd_tensor_clone(&held[k], from, err);
            if (st == RD_OK)
                st = single_materialize(s, v, &held[k], err);
            in[k] = &held[k];
        }
    }
    sim_exec_hooks hooks = {.user = s, .eval = sim_hook_eval, .materialize = single_materialize};
    if (st == RD_OK && inputs_known) {
        st = sim_node_compute(s->m, idx, &hooks, in, outs, work, s->pool, err);
        *computed = st == RD_OK;
    }
    for (int k = 0; k < n->n_in; k++)
        rd_tensor_fini(&held[k]);
    return st;
}

/* A lockstep state computes node idx on the analysis' one scratch (its own holds none between nodes). */
static rd_status state_compute(sim_run_state *st, sim_scratch *work, int idx, rd_pool *pool, rd_error *err)
{
    st->scratch = *work;
    rd_status rc = sim_state_compute(st, idx, pool, err);
    *work = st->scratch;
    st->scratch = (sim_scratch){0};
    return rc;
}

static bool is_materialized(const rd_model *m, int v)
{
    const sim_value *val = &m->values[v];
    return !val->virtual_out && val->dtype == RD_DT_F32;
}

rd_status rd_sim_analyze(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, rd_sim_event_fn fn, void *user,
                         rd_error *err)
{
    return rd_sim_analyze_ex(s, inputs, n_inputs, fn, user, NULL, NULL, err);
}

rd_status rd_sim_analyze_ex(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, rd_sim_event_fn fn, void *user,
                            rd_runtime_fn runtime, void *runtime_user, rd_error *err)
{
    rd_model *m = s->m;
    for (int v = 0; v < m->n_values; v++) {
        memset(&s->stats[v], 0, sizeof s->stats[v]);
        s->stats[v].fp16_first_index = -1;
    }
    /* the entire run materialises through sim.c's hook, which records the per-layer stats */
    const sim_exec_hooks entire_hooks = sim_entire_hooks(s);
    sim_run_state golden, entire;
    single_state ss = {0}, rs = {0}; /* inner values of fused groups: single, single_sim */
    rd_status st = sim_state_init(&golden, m, NULL, err);
    rd_status st2 = sim_state_init(&entire, m, &entire_hooks, err);
    if (st == RD_OK)
        st = st2;
    ss.vals = calloc((size_t)m->n_values + 1, sizeof *ss.vals);
    rs.vals = calloc((size_t)m->n_values + 1, sizeof *rs.vals);
    if (st == RD_OK && (!ss.vals || !rs.vals))
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    sim_scratch work = {0};
    input_source from_golden = {.golden = &golden};
    input_source from_board = {.golden = &golden, .runtime = runtime, .runtime_user = runtime_user};
    if (st == RD_OK)
        st = sim_state_bind_inputs(&golden, inputs, n_inputs, err);
    if (st == RD_OK)
        st = sim_state_bind_inputs(&entire, inputs, n_inputs, err);
    for (int k = 0; k < m->n_inputs && st == RD_OK; k++) {
        int v = m->inputs[k];
        rd_sim_event ev = {.name = m->values[v].name,
                           .value = v,
                           .node = -1,
                           .op_type = "",
                           .materialized = is_materialized(m, v),
                           .golden = &golden.vals[v],
                           .entire = &entire.vals[v],
                           .single = &entire.vals[v],
                           .runtime = runtime ? runtime(runtime_user, v) : NULL};
        st = fn(user, &ev, err);
    }
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++) {
        const sim_node *n = &m->nodes[i];
        if (n->folded)
            continue;
        rd_tensor single_out[SIM_MAX_NODE_IO], board_out[SIM_MAX_NODE_IO];
        memset(single_out, 0, sizeof single_out);
        memset(board_out, 0, sizeof board_out);
        bool have_single, have_board = false;
        st = compute_single(s, i, &from_golden, &ss, &work, single_out, &have_single, err);
        if (st == RD_OK && !have_single)
            st = rd_errorf(err, RD_E_INVAL, "%s: node '%s' (#%d): an input has no golden value", m->path, n->name, i);
        if (st == RD_OK && runtime)
            st = compute_single(s, i, &from_board, &rs, &work, board_out, &have_board, err);
        if (st == RD_OK)
            st = state_compute(&golden, &work, i, s->pool, err);
        if (st == RD_OK)
            st = state_compute(&entire, &work, i, s->pool, err);
        for (int k = 0; k < n->n_out && st == RD_OK; k++) {
            int v = n->out[k];
            if (v < 0)
                continue;
            rd_sim_event ev = {.name = m->values[v].name,
                               .value = v,
                               .node = i,
                               .op_type = n->op_type,
                               .materialized = is_materialized(m, v),
                               .golden = &golden.vals[v],
                               .entire = &entire.vals[v],
                               .single = &single_out[k],
                               .runtime = runtime ? runtime(runtime_user, v) : NULL,
                               .single_sim = have_board ? &board_out[k] : NULL};
            st = fn(user, &ev, err);
        }
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (st == RD_OK && v >= 0 && m->values[v].virtual_out) {
                ss.vals[v] = single_out[k]; /* the next node of the fused group reads it */
                memset(&single_out[k], 0, sizeof single_out[k]);
                if (have_board) {
                    rs.vals[v] = board_out[k];
                    memset(&board_out[k], 0, sizeof board_out[k]);
                }
            }
            rd_tensor_fini(&single_out[k]);
            rd_tensor_fini(&board_out[k]);
        }
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v >= 0 && m->values[v].last_use == i) {
                rd_tensor_fini(&ss.vals[v]);
                rd_tensor_fini(&rs.vals[v]);
            }
        }
        sim_state_release(&golden, i);
        sim_state_release(&entire, i);
    }
    for (int v = 0; v < m->n_values; v++) {
        if (ss.vals)
            rd_tensor_fini(&ss.vals[v]);
        if (rs.vals)
            rd_tensor_fini(&rs.vals[v]);
    }
    free(ss.vals);
    free(rs.vals);
    sim_state_fini(&golden);
    sim_state_fini(&entire);
    sim_scratch_fini(&work);
    return st;
}
