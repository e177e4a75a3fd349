/*
 * sim_prefix.c: runs of a simulation that start where the configuration changed (rd_sim_prefix).
 *
 * A recording keeps, for one input, every activation the nodes 0..K-1 produced (as the following nodes
 * read them: float32 tensors already held at their precision), the per-value configuration it was
 * made with and the layer stats. A later run compares the simulation's configuration with the
 * recorded one, finds the first node that reads or writes a changed value, seeds the values live at
 * that node from the recording (borrowed, not copied) and computes only from there. Nodes before the
 * first change see the same inputs, parameters and precisions, so their outputs are the same bits.
 * What a value's configuration does not cover (weight scales, faults) bumps the simulation's epoch,
 * which voids every recording; a different input, thread count or simulation does too.
 */
#include "sim_internal.h"

struct rd_sim_prefix {
    size_t max_bytes;
    bool valid;                 /* vals/cfg/stats describe one complete run */
    const rd_sim *sim;          /* the simulation recorded (compared, never dereferenced) */
    unsigned long epoch;
    int threads;
    int n_values, n_nodes;
    rd_tensor *inputs;          /* the raw inputs of the recorded run */
    size_t n_inputs;
    rd_tensor *vals;            /* per value: recorded activation (owned), data NULL if none */
    bool *has;
    sim_val_data *cfg;          /* per value: the configuration of the recorded run */
    rd_sim_layer_stats *stats;  /* per value: the stats of the recorded run */
    int recorded_upto;          /* the outputs of every node before this one are held */
    size_t bytes;               /* held in vals */
    rd_sim_prefix_stats counters;
};

rd_status rd_sim_prefix_create(size_t max_bytes, rd_sim_prefix **out, rd_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    (*out)->max_bytes = max_bytes;
    return RD_OK;
}

/* Forgets the recording; the arrays stay for the next one. */
static void prefix_clear(rd_sim_prefix *p)
{
    for (int v = 0; p->vals && v < p->n_values; v++)
        if (p->has[v]) {
            rd_tensor_fini(&p->vals[v]);
            p->has[v] = false;
        }
    for (size_t k = 0; k < p->n_inputs; k++)
        rd_tensor_fini(&p->inputs[k]);
    free(p->inputs);
    p->inputs = NULL;
    p->n_inputs = 0;
    p->bytes = 0;
    p->recorded_upto = 0;
    p->valid = false;
}

static void prefix_free_arrays(rd_sim_prefix *p)
{
    prefix_clear(p);
    free(p->vals);
    free(p->has);
    free(p->cfg);
    free(p->stats);
    p->vals = NULL;
    p->has = NULL;
    p->cfg = NULL;
    p->stats = NULL;
    p->n_values = p->n_nodes = 0;
}

void rd_sim_prefix_destroy(rd_sim_prefix *p)
{
    if (!p)
        return;
    prefix_free_arrays(p);
    free(p);
}

void rd_sim_prefix_stats_get(const rd_sim_prefix *p, rd_sim_prefix_stats *out)
{
    *out = p->counters;
    out->bytes = p->bytes;
    out->nodes_recorded = p->valid ? p->recorded_upto : 0;
}

/* Arrays sized for s's model (a recording of another simulation is dropped). */
static rd_status prefix_fit(rd_sim_prefix *p, const rd_sim *s, rd_error *err)
{
    if (p->vals && p->sim == s && p->n_values == s->m->n_values && p->n_nodes == s->m->n_nodes)
        return RD_OK;
    prefix_free_arrays(p);
    size_t nv = (size_t)s->m->n_values + 1;
    p->vals = calloc(nv, sizeof *p->vals);
    p->has = calloc(nv, sizeof *p->has);
    p->cfg = calloc(nv, sizeof *p->cfg);
    p->stats = calloc(nv, sizeof *p->stats);
    if (!p->vals || !p->has || !p->cfg || !p->stats) {
        prefix_free_arrays(p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    p->n_values = s->m->n_values;
    p->n_nodes = s->m->n_nodes;
    p->sim = s;
    return RD_OK;
}

static bool same_tensor(const rd_tensor *a, const rd_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    size_t n = rd_tensor_nbytes(a);
    return n == 0 || (a->data && b->data && memcmp(a->data, b->data, n) == 0);
}

/* The recording was made by s in its present epoch, on these inputs, with this thread count. */
static bool recording_matches(const rd_sim_prefix *p, const rd_sim *s, const rd_tensor *inputs, size_t n_inputs,
                              int threads)
{
    if (!p->valid || p->sim != s || p->epoch != s->epoch || p->threads != threads || p->n_inputs != n_inputs ||
        p->n_values != s->m->n_values || p->n_nodes != s->m->n_nodes)
        return false;
    for (size_t k = 0; k < n_inputs; k++)
        if (!same_tensor(&p->inputs[k], &inputs[k]))
            return false;
    return true;
}

/* What the computation of a value reads of its configuration (min/max are only its provenance). */
static bool cfg_differs(const sim_val_data *a, const sim_val_data *b)
{
    return a->prec != b->prec || a->quantized != b->quantized || memcmp(&a->scale, &b->scale, sizeof a->scale) != 0 ||
           a->zero_point != b->zero_point;
}

static bool value_changed(const rd_sim_prefix *p, const rd_sim *s, int v)
{
    return v >= 0 && cfg_differs(&p->cfg[v], &s->vals[v]);
}

/*
 * A node depends on the configuration of what it reads (int8 layers use their inputs' parameters), of
 * what it writes (materialisation) and of the tensor its fused group materialises (its precision).
 */
static bool node_changed(const rd_sim_prefix *p, const rd_sim *s, int idx)
{
    const sim_node *n = &s->m->nodes[idx];
    for (int k = 0; k < n->n_in; k++)
        if (value_changed(p, s, n->in[k]))
            return true;
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        for (int hops = 0; v >= 0 && hops <= s->m->n_values; hops++) {
            if (value_changed(p, s, v))
                return true;
            const sim_value *val = &s->m->values[v];
            if (!val->virtual_out || val->fused_into < 0)
                break;
            v = val->fused_into;
        }
    }
    return false;
}

/* The first node to compute: the first whose configuration changed, but no later than the recording reaches. */
static int resume_point(const rd_sim_prefix *p, const rd_sim *s)
{
    const rd_model *m = s->m;
    for (int k = 0; k < m->n_inputs; k++)
        if (value_changed(p, s, m->inputs[k]))
            return 0;
    int i = 0;
    while (i < m->n_nodes && i < p->recorded_upto && (m->nodes[i].folded || !node_changed(p, s, i)))
        i++;
    return i;
}

/* Produced before node `start` (graph inputs: before every node); constants are not activations. */
static bool produced_before(const rd_model *m, int v, int start)
{
    const sim_value *val = &m->values[v];
    if (val->konst)
        return false;
    return val->is_graph_input ? true : val->producer >= 0 && val->producer < start;
}

/* Read by a node from `start` on, or a graph output. */
static bool needed_from(const rd_model *m, int v, int start)
{
    return m->values[v].is_graph_output || m->values[v].last_use >= start;
}

/* Keeps a copy of value v in the recording if it may be needed later and the budget allows. */
static rd_status record_value(rd_sim_prefix *p, const sim_run_state *st, int v, bool *fits, rd_error *err)
{
    const rd_model *m = st->m;
    if (!m->values[v].is_graph_output && m->values[v].last_use < 0)
        return RD_OK; /* read by nobody: never seeded */
    size_t nb = rd_tensor_nbytes(&st->vals[v]);
    if (nb > p->max_bytes - p->bytes) {
        *fits = false;
        return RD_OK;
    }
    rd_status rc = rd_tensor_clone(&p->vals[v], &st->vals[v], err);
    if (rc != RD_OK)
        return rc;
    p->has[v] = true;
    p->bytes += nb;
    return RD_OK;
}

/* Records node idx's outputs while every earlier node's are held (a prefix, so any earlier node can resume). */
static rd_status record_node(rd_sim_prefix *p, const sim_run_state *st, int idx, rd_error *err)
{
    if (p->recorded_upto != idx)
        return RD_OK;
    const sim_node *n = &st->m->nodes[idx];
    bool fits = true;
    for (int k = 0; k < n->n_out && fits; k++)
        if (n->out[k] >= 0) {
            rd_status rc = record_value(p, st, n->out[k], &fits, err);
            if (rc != RD_OK)
                return rc;
        }
    if (!fits) { /* all of a node or none of it */
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v >= 0 && p->has[v]) {
                p->bytes -= rd_tensor_nbytes(&p->vals[v]);
                rd_tensor_fini(&p->vals[v]);
                p->has[v] = false;
            }
        }
        return RD_OK;
    }
    p->recorded_upto = idx + 1;
    return RD_OK;
}

/* Before a recording run resumed at start: what nodes from start on produced is recomputed. */
static void drop_from(rd_sim_prefix *p, const rd_model *m, int start)
{
    for (int v = 0; v < p->n_values; v++)
        if (p->has[v] && !produced_before(m, v, start)) {
            p->bytes -= rd_tensor_nbytes(&p->vals[v]);
            rd_tensor_fini(&p->vals[v]);
            p->has[v] = false;
        }
    if (p->recorded_upto > start)
        p->recorded_upto = start;
}

/* A fresh recording: the raw inputs and the materialised graph inputs. */
static rd_status record_inputs(rd_sim_prefix *p, const sim_run_state *st, const rd_tensor *inputs, size_t n_inputs,
                               rd_error *err)
{
    p->inputs = calloc(n_inputs + 1, sizeof *p->inputs);
    if (!p->inputs)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    p->n_inputs = n_inputs;
    for (size_t k = 0; k < n_inputs; k++) {
        rd_status rc = rd_tensor_clone(&p->inputs[k], &inputs[k], err);
        if (rc != RD_OK)
            return rc;
    }
    bool fits = true;
    for (int k = 0; k < st->m->n_inputs && fits; k++) {
        rd_status rc = record_value(p, st, st->m->inputs[k], &fits, err);
        if (rc != RD_OK)
            return rc;
    }
    if (!fits) /* not even the inputs fit: nothing can resume */
        drop_from(p, st->m, 0);
    p->recorded_upto = fits ? 0 : -1;
    return RD_OK;
}

/* Runs nodes start..end of the state, recording when rec is not NULL. */
static rd_status run_from(rd_sim *s, sim_run_state *st, int start, int threads, rd_sim_prefix *rec,
                          rd_sim_prefix_stats *counters, rd_error *err)
{
    for (int i = start; i < s->m->n_nodes; i++) {
        if (s->m->nodes[i].folded)
            continue;
        rd_status rc = sim_state_compute(st, i, threads, err);
        if (rc == RD_OK && rec)
            rc = record_node(rec, st, i, err);
        if (rc != RD_OK)
            return rc;
        sim_state_release(st, i);
        counters->nodes_computed++;
    }
    return RD_OK;
}

rd_status rd_sim_run_prefix(rd_sim *s, rd_sim_prefix *p, bool record, const rd_tensor *inputs, size_t n_inputs,
                            const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err)
{
    if (!p || (opt && (opt->observer || opt->observe_inputs)))
        return rd_sim_run(s, inputs, n_inputs, opt, outputs, n_outputs, err); /* every node must be shown */
    rd_model *m = s->m;
    if (n_outputs > (size_t)m->n_outputs)
        return rd_errorf(err, RD_E_INVAL, "%s: %zu outputs requested, the model has %d", m->path, n_outputs,
                         m->n_outputs);
    for (size_t o = 0; o < n_outputs; o++)
        memset(&outputs[o], 0, sizeof outputs[o]);
    int threads = opt && opt->threads > 0 ? opt->threads : 1;
    bool usable = recording_matches(p, s, inputs, n_inputs, threads);
    int start = usable ? resume_point(p, s) : 0;
    rd_status rc = RD_OK;
    if (record) {
        if (!usable || start == 0)
            prefix_clear(p);
        rc = prefix_fit(p, s, err);
        if (rc != RD_OK)
            return rc;
        p->valid = false; /* until this run completes */
        drop_from(p, m, start);
    }
    for (int v = 0; v < m->n_values; v++) {
        if (start > 0 && produced_before(m, v, start)) {
            s->stats[v] = p->stats[v];
        } else {
            memset(&s->stats[v], 0, sizeof s->stats[v]);
            s->stats[v].fp16_first_index = -1;
        }
    }
    sim_exec_hooks hooks = {.user = s, .eval = sim_hook_eval, .materialize = sim_entire_materialize};
    sim_run_state st;
    rc = sim_state_init(&st, m, &hooks, err);
    if (rc == RD_OK && start == 0) {
        rc = sim_state_bind_inputs(&st, inputs, n_inputs, err);
        if (rc == RD_OK && record)
            rc = record_inputs(p, &st, inputs, n_inputs, err);
    } else if (rc == RD_OK) {
        for (int v = 0; v < m->n_values; v++)
            if (p->has[v] && produced_before(m, v, start) && needed_from(m, v, start)) {
                st.vals[v] = p->vals[v]; /* borrowed: the state does not own it */
                st.ready[v] = true;
            }
    }
    p->counters.runs++;
    for (int i = 0; i < start; i++)
        p->counters.nodes_reused += !m->nodes[i].folded;
    if (rc == RD_OK)
        rc = run_from(s, &st, start, threads, record ? p : NULL, &p->counters, err);
    if (rc == RD_OK)
        rc = sim_state_take_outputs(&st, outputs, n_outputs, err);
    sim_state_fini(&st);
    if (rc == RD_OK && record) {
        memcpy(p->cfg, s->vals, (size_t)m->n_values * sizeof *p->cfg);
        memcpy(p->stats, s->stats, (size_t)m->n_values * sizeof *p->stats);
        p->epoch = s->epoch;
        p->threads = threads;
        p->valid = p->recorded_upto >= 0;
    }
    return rc;
}
