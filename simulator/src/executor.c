/*
 * executor.c: runs a prepared model node by node in topological order.
 *
 * Each node's outputs are shaped by its op's infer (now with every input's data), allocated, computed
 * by eval and shown to the observer at once. An activation is freed right after its last consumer
 * (liveness from graph.c), so peak memory is the largest set of simultaneously live tensors, not the
 * sum of all activations. Graph outputs are kept for the caller.
 */
#include "internal.h"

#include <stdio.h>

typedef sim_run_state run_state;

rd_status sim_state_init(sim_run_state *s, rd_model *m, const sim_exec_hooks *hooks, rd_error *err)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->hooks = hooks;
    s->fused_head = s->fused_last = -1;
    s->vals = calloc((size_t)m->n_values + 1, sizeof *s->vals);
    s->owned = calloc((size_t)m->n_values + 1, sizeof *s->owned);
    s->ready = calloc((size_t)m->n_values + 1, sizeof *s->ready);
    if (!s->vals || !s->owned || !s->ready)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (int v = 0; v < m->n_values; v++)
        if (m->values[v].konst) {
            s->vals[v] = *m->values[v].konst;
            s->ready[v] = true;
        }
    return RD_OK;
}

/* Frees value v's data, or gives it back to the run's buffers to be taken again. */
static void drop_value(sim_run_state *s, int v)
{
    void *block = s->vals[v].data;
    size_t bytes = rd_tensor_nbytes(&s->vals[v]);
    s->vals[v].data = NULL;
    rd_tensor_fini(&s->vals[v]);
    sim_buffers_give(s->scratch.buffers, block, bytes);
}

void sim_state_fini(sim_run_state *s)
{
    if (s->vals && s->owned) {
        for (int v = 0; v < s->m->n_values; v++)
            if (s->owned[v])
                drop_value(s, v);
    }
    free(s->vals);
    free(s->owned);
    free(s->ready);
    sim_scratch_fini(&s->scratch);
}

static rd_status observe(const rd_run_options *opt, const rd_model *m, int value, int node, const rd_tensor *t,
                         rd_error *err)
{
    if (!opt || !opt->observer)
        return RD_OK;
    const sim_node *n = node >= 0 ? &m->nodes[node] : NULL;
    rd_observed ev = {.name = m->values[value].name,
                      .value = value,
                      .node = node,
                      .node_name = n ? n->name : "",
                      .op_type = n ? n->op_type : "",
                      .tensor = t};
    return opt->observer(opt->user, &ev, err);
}

static bool shape_matches(const sim_value *decl, const rd_tensor *t)
{
    if (decl->rank < 0)
        return true;
    if (decl->rank != t->rank)
        return false;
    for (int d = 0; d < t->rank; d++)
        if (decl->dims[d] >= 0 && !decl->dim_params[d] && decl->dims[d] != t->dims[d])
            return false;
    return true;
}

rd_status sim_state_bind_inputs(sim_run_state *s, const rd_tensor *inputs, size_t n_inputs, rd_error *err)
{
    rd_model *m = s->m;
    if (n_inputs != (size_t)m->n_inputs)
        return rd_errorf(err, RD_E_INVAL, "%s: the model has %d input%s, %zu given", m->path, m->n_inputs,
                         m->n_inputs == 1 ? "" : "s", n_inputs);
    for (int k = 0; k < m->n_inputs; k++) {
        int v = m->inputs[k];
        const sim_value *decl = &m->values[v];
        const rd_tensor *t = &inputs[k];
        if (decl->dtype != RD_DT_UNDEFINED && decl->dtype != t->dtype)
            return rd_errorf(err, RD_E_PARSE, "%s: input '%s' must be %s, got %s", m->path, decl->name,
                             rd_dtype_name(decl->dtype), rd_dtype_name(t->dtype));
        if (!shape_matches(decl, t)) {
            char want[256], got[256];
            rd_dims_str(decl->rank, decl->dims, (const char *const *)decl->dim_params, want, sizeof want);
            rd_shape_str(t, got, sizeof got);
            return rd_errorf(err, RD_E_PARSE, "%s: input '%s' must have shape %s, got %s", m->path, decl->name, want,
                             got);
        }
        if (s->hooks && s->hooks->materialize) { /* the hook changes values: work on a copy */
            rd_status st =
                sim_tensor_alloc_from(s->scratch.buffers, &s->vals[v], t->dtype, t->rank, t->dims, false, err);
            if (st == RD_OK && t->data)
                memcpy(s->vals[v].data, t->data, rd_tensor_nbytes(t));
            if (st == RD_OK)
                st = s->hooks->materialize(s->hooks->user, v, &s->vals[v], err);
            s->owned[v] = true;
            if (st != RD_OK)
                return st;
        } else {
            s->vals[v] = *t;
        }
        s->ready[v] = true;
    }
    return RD_OK;
}

rd_status sim_node_begin(rd_model *m, int idx, const rd_tensor *const *in, rd_tensor *outs, sim_scratch *scratch,
                         rd_pool *pool, sim_node_call *call, rd_error *err)
{
    sim_node *n = &m->nodes[idx];
    const sim_op_def *d = n->def;
    if (!d)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: node '%s' (#%d): operator %s is not implemented", m->path, n->name,
                         idx, n->op_type);
    if (!d->eval[SIM_PREC_F32])
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: node '%s' (%s) has no float32 implementation", m->path, n->name,
                         n->op_type);
    if (n->n_in > SIM_MAX_NODE_IO || n->n_out > SIM_MAX_NODE_IO)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: node '%s' has more than %d inputs or outputs", m->path, n->name,
                         SIM_MAX_NODE_IO);
    memset(outs, 0, sizeof *outs * (size_t)n->n_out);
    for (int k = 0; k < n->n_out; k++)
        call->present[k] = n->out[k] >= 0;
    call->ctx = sim_node_ctx(n, in, outs, call->present, scratch);
    call->ctx.pool = pool;
    rd_status st = d->infer(&call->ctx, err);
    if (st == RD_OK && call->ctx.deferred)
        st = rd_errorf(err, RD_E_INVAL, "node '%s' (%s): output shape still unknown with all inputs present", n->name,
                       n->op_type);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", m->path);
    for (int k = 0; k < n->n_out && st == RD_OK; k++) {
        if (!call->present[k])
            continue;
        rd_tensor shape = outs[k];
        st = sim_tensor_alloc_from(scratch ? scratch->buffers : NULL, &outs[k], shape.dtype, shape.rank, shape.dims,
                                   !(d->flags & SIM_OP_FULL_WRITE), err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s: node '%s' (%s), output '%s'", m->path, n->name, n->op_type,
                            m->values[n->out[k]].name);
    }
    if (st != RD_OK)
        for (int k = 0; k < n->n_out; k++)
            rd_tensor_fini(&outs[k]);
    return st;
}

sim_op_ctx sim_node_ctx(const sim_node *n, const rd_tensor *const *in, rd_tensor *out, const bool *present,
                        sim_scratch *scratch)
{
    return (sim_op_ctx){.node = n,
                        .params = n->params,
                        .opset = n->opset,
                        .n_in = n->n_in,
                        .in = in,
                        .n_out = n->n_out,
                        .out = out,
                        .out_present = present,
                        .scratch = scratch};
}

rd_status sim_node_compute(rd_model *m, int idx, const sim_exec_hooks *hooks, const rd_tensor *const *in,
                           rd_tensor *outs, sim_scratch *scratch, rd_pool *pool, rd_error *err)
{
    const sim_node *n = &m->nodes[idx];
    sim_node_call call;
    rd_status st = sim_node_begin(m, idx, in, outs, scratch, pool, &call, err);
    if (st != RD_OK)
        return st;
    bool rounded = false; /* output 0 computed and rounded slice by slice */
    if (hooks && hooks->round_in_slices && n->n_in <= SIM_MAX_NODE_IO) {
        const rd_tensor *own[SIM_MAX_NODE_IO];
        memcpy(own, in, (size_t)n->n_in * sizeof *own);
        if (hooks->round_in_slices(hooks->user, idx, own)) {
            sim_op_ctx c = call.ctx;
            c.in = own;
            st = sim_eval_f32_rounded(&c, hooks, n->out[0], &rounded, err);
        }
    }
    if (st == RD_OK && !rounded && hooks && hooks->eval)
        st = hooks->eval(hooks->user, idx, &call.ctx, err);
    if (st == RD_OK && !rounded && (!hooks || !hooks->eval || call.ctx.deferred))
        st = sim_eval_f32(&call.ctx, err);
    if (st != RD_OK)
        rd_error_prefix(err, "%s", m->path);
    for (int k = rounded ? 1 : 0; k < n->n_out && st == RD_OK && hooks && hooks->materialize; k++)
        if (call.present[k])
            st = hooks->materialize(hooks->user, n->out[k], &outs[k], err);
    if (st != RD_OK)
        for (int k = 0; k < n->n_out; k++)
            rd_tensor_fini(&outs[k]);
    return st;
}

rd_status sim_state_inputs(const sim_run_state *s, int idx, const rd_tensor **in, rd_error *err)
{
    const rd_model *m = s->m;
    const sim_node *n = &m->nodes[idx];
    if (n->n_in > SIM_MAX_NODE_IO)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: node '%s' has more than %d inputs", m->path, n->name,
                         SIM_MAX_NODE_IO);
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        in[k] = NULL;
        if (v < 0)
            continue;
        if (!s->ready[v])
            return rd_errorf(err, RD_E_PARSE, "%s: node '%s' (#%d): input '%s' has no value", m->path, n->name, idx,
                             m->values[v].name);
        in[k] = &s->vals[v];
    }
    return RD_OK;
}

void sim_state_store(sim_run_state *s, int idx, rd_tensor *outs)
{
    const sim_node *n = &s->m->nodes[idx];
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0)
            continue;
        s->vals[v] = outs[k];
        s->owned[v] = true;
        s->ready[v] = true;
    }
}

rd_status sim_state_compute(sim_run_state *s, int idx, rd_pool *pool, rd_error *err)
{
    if (idx > s->fused_head && idx <= s->fused_last)
        return RD_OK; /* computed with its head (sim_fused_compute) */
    const sim_node *n = &s->m->nodes[idx];
    if (!s->hooks && n->def && (n->def->flags & SIM_OP_TILE_DONE)) {
        bool computed;
        rd_status st = sim_fused_compute(s, idx, pool, &computed, err);
        if (st != RD_OK || computed)
            return st;
    }
    const rd_tensor *in[SIM_MAX_NODE_IO];
    rd_tensor outs[SIM_MAX_NODE_IO];
    rd_status st = sim_state_inputs(s, idx, in, err);
    if (st == RD_OK)
        st = sim_node_compute(s->m, idx, s->hooks, in, outs, &s->scratch, pool, err);
    if (st == RD_OK)
        sim_state_store(s, idx, outs);
    return st;
}

void sim_state_release(sim_run_state *s, int idx)
{
    rd_model *m = s->m;
    const sim_node *n = &m->nodes[idx];
    /* activations whose last consumer was this node */
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v >= 0 && s->owned[v] && m->values[v].last_use == idx && !m->values[v].is_graph_output) {
            drop_value(s, v);
            s->owned[v] = false;
            s->ready[v] = false;
        }
    }
    /* outputs nobody reads, once observed */
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v >= 0 && m->values[v].last_use < 0 && !m->values[v].is_graph_output) {
            drop_value(s, v);
            s->owned[v] = false;
            s->ready[v] = false;
        }
    }
}

static rd_status run_node(run_state *s, int idx, const rd_run_options *opt, rd_pool *pool, rd_error *err)
{
    rd_status st = sim_state_compute(s, idx, pool, err);
    const sim_node *n = &s->m->nodes[idx];
    for (int k = 0; k < n->n_out && st == RD_OK; k++)
        if (n->out[k] >= 0)
            st = observe(opt, s->m, n->out[k], idx, &s->vals[n->out[k]], err);
    if (st == RD_OK)
        sim_state_release(s, idx);
    return st;
}

static rd_status observe_constants(run_state *s, const rd_run_options *opt, rd_error *err)
{
    rd_model *m = s->m;
    if (!opt || !opt->observer)
        return RD_OK;
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *val = &m->values[v];
        if (!val->konst)
            continue;
        if (val->is_initializer && !opt->report_initializers)
            continue;
        rd_status st = observe(opt, m, v, val->producer, val->konst, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

rd_status sim_state_take_outputs(sim_run_state *s, rd_tensor *outputs, size_t n_outputs, rd_error *err)
{
    rd_model *m = s->m;
    rd_status st = RD_OK;
    for (size_t o = 0; o < n_outputs && st == RD_OK; o++) {
        int v = m->outputs[o];
        if (s->owned[v]) { /* hand the buffer over */
            outputs[o] = s->vals[v];
            s->owned[v] = false;
            /* the same tensor may be listed twice as an output: copy for the second */
            for (size_t p = o + 1; p < n_outputs; p++)
                if (m->outputs[p] == v) {
                    st = rd_tensor_clone(&outputs[p], &outputs[o], err);
                    if (st != RD_OK)
                        break;
                }
        } else if (!outputs[o].data && outputs[o].rank == 0 && outputs[o].dtype == 0) {
            st = rd_tensor_clone(&outputs[o], &s->vals[v], err);
        }
    }
    if (st != RD_OK)
        for (size_t o = 0; o < n_outputs; o++)
            rd_tensor_fini(&outputs[o]);
    return st;
}

rd_status rd_model_run(rd_model *m, const rd_tensor *inputs, size_t n_inputs, const rd_run_options *opt,
                       rd_tensor *outputs, size_t n_outputs, rd_error *err)
{
    return sim_execute(m, NULL, NULL, inputs, n_inputs, opt, outputs, n_outputs, err);
}

rd_status sim_execute(rd_model *m, const sim_exec_hooks *hooks, rd_pool *fallback, const rd_tensor *inputs,
                      size_t n_inputs, const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err)
{
    if (n_outputs > (size_t)m->n_outputs)
        return rd_errorf(err, RD_E_INVAL, "%s: %zu outputs requested, the model has %d", m->path, n_outputs,
                         m->n_outputs);
    for (size_t o = 0; o < n_outputs; o++)
        memset(&outputs[o], 0, sizeof outputs[o]);
    rd_pool *pool = NULL, *owned = NULL;
    rd_status st = sim_run_pool(opt, fallback, &pool, &owned, err);
    if (st != RD_OK)
        return st;
    run_state s;
    st = sim_state_init(&s, m, hooks, err);
    if (st != RD_OK)
        goto out;
    sim_buffers_begin_run(opt ? opt->buffers : NULL, &s.scratch);
    st = sim_state_bind_inputs(&s, inputs, n_inputs, err);
    if (st != RD_OK)
        goto out;
    if (opt && opt->observe_inputs)
        for (int k = 0; k < m->n_inputs && st == RD_OK; k++)
            st = observe(opt, m, m->inputs[k], -1, &s.vals[m->inputs[k]], err);
    if (st == RD_OK)
        st = observe_constants(&s, opt, err);
    for (int i = 0; i < m->n_nodes && st == RD_OK; i++)
        if (!m->nodes[i].folded)
            st = run_node(&s, i, opt, pool, err);
    if (st == RD_OK)
        st = sim_state_take_outputs(&s, outputs, n_outputs, err);
out:
    sim_state_fini(&s);
    rd_pool_destroy(owned);
    return st;
}
