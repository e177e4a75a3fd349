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
 *
 * A tentative run (RD_PREFIX_TRY) keeps what it computed in a second slot: rd_sim_prefix_commit moves it
 * over the recording's nodes from where the run started, so a search that keeps a candidate set pays no
 * extra run to make it the baseline.
 */
#include "sim_internal.h"

/* Activations of the nodes before `upto`, held by a recording or by a tentative run. */
typedef struct prefix_slot {
    rd_tensor *vals; /* per value: an activation (owned), data NULL if none */
    bool *has;
    int upto;             /* the outputs of every node before this one are held (-1: none at all) */
    size_t bytes, budget; /* held in vals; the most it may hold */
} prefix_slot;

struct rd_sim_prefix {
    size_t max_bytes;
    bool valid;        /* base, cfg and stats describe one complete run */
    const rd_sim *sim; /* the simulation recorded: p must not outlive it */
    const rd_model *m; /* its model */
    unsigned long epoch;
    int n_values, n_nodes;
    rd_tensor *inputs; /* the raw inputs of the recorded run */
    size_t n_inputs;
    prefix_slot base;          /* the recording */
    sim_val_data *cfg;         /* per value: the configuration of the recorded run */
    rd_sim_layer_stats *stats; /* per value: the stats of the recorded run */
    prefix_slot try_;          /* the last tentative run: its nodes from try_start on */
    bool try_valid;
    int try_start;
    sim_val_data *try_cfg;
    rd_sim_layer_stats *try_stats;
    rd_sim_layer_stats *run_stats; /* per value: the stats of the last run (its own, for concurrent runs) */
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

static void slot_drop(prefix_slot *sl, int v)
{
    if (sl->has[v]) {
        sl->bytes -= rd_tensor_nbytes(&sl->vals[v]);
        rd_tensor_fini(&sl->vals[v]);
        sl->has[v] = false;
    }
}

static void slot_clear(prefix_slot *sl, int n_values)
{
    for (int v = 0; sl->has && v < n_values; v++)
        slot_drop(sl, v);
    sl->bytes = 0;
    sl->upto = 0;
}

/* Forgets the tentative run. */
static void try_clear(rd_sim_prefix *p)
{
    slot_clear(&p->try_, p->n_values);
    p->try_valid = false;
}

/* Forgets the recording (and the tentative run); the arrays stay for the next one. */
static void prefix_clear(rd_sim_prefix *p)
{
    slot_clear(&p->base, p->n_values);
    try_clear(p);
    for (size_t k = 0; k < p->n_inputs; k++)
        rd_tensor_fini(&p->inputs[k]);
    free(p->inputs);
    p->inputs = NULL;
    p->n_inputs = 0;
    p->valid = false;
}

static void slot_free(prefix_slot *sl)
{
    free(sl->vals);
    free(sl->has);
    sl->vals = NULL;
    sl->has = NULL;
}

static void prefix_free_arrays(rd_sim_prefix *p)
{
    prefix_clear(p);
    slot_free(&p->base);
    slot_free(&p->try_);
    free(p->cfg);
    free(p->stats);
    free(p->try_cfg);
    free(p->try_stats);
    free(p->run_stats);
    p->cfg = p->try_cfg = NULL;
    p->stats = p->try_stats = p->run_stats = NULL;
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
    out->bytes = p->base.bytes + p->try_.bytes;
    out->nodes_recorded = p->valid && p->base.upto > 0 ? p->base.upto : 0;
}

/* Arrays sized for s's model (a recording of another simulation is dropped). */
static rd_status prefix_fit(rd_sim_prefix *p, const rd_sim *s, rd_error *err)
{
    if (p->cfg && p->sim == s && p->n_values == s->m->n_values && p->n_nodes == s->m->n_nodes)
        return RD_OK;
    prefix_free_arrays(p);
    size_t nv = (size_t)s->m->n_values + 1;
    p->base.vals = calloc(nv, sizeof *p->base.vals);
    p->base.has = calloc(nv, sizeof *p->base.has);
    p->try_.vals = calloc(nv, sizeof *p->try_.vals);
    p->try_.has = calloc(nv, sizeof *p->try_.has);
    p->cfg = calloc(nv, sizeof *p->cfg);
    p->stats = calloc(nv, sizeof *p->stats);
    p->try_cfg = calloc(nv, sizeof *p->try_cfg);
    p->try_stats = calloc(nv, sizeof *p->try_stats);
    p->run_stats = calloc(nv, sizeof *p->run_stats);
    if (!p->base.vals || !p->base.has || !p->try_.vals || !p->try_.has || !p->cfg || !p->stats || !p->try_cfg ||
        !p->try_stats || !p->run_stats) {
        prefix_free_arrays(p);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    p->n_values = s->m->n_values;
    p->n_nodes = s->m->n_nodes;
    p->sim = s;
    p->m = s->m;
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

/* The recording was made by s in its present epoch, on these inputs (any thread count gives the same bits). */
static bool recording_matches(const rd_sim_prefix *p, const rd_sim *s, const rd_tensor *inputs, size_t n_inputs)
{
    if (!p->valid || p->sim != s || p->epoch != s->epoch || p->n_inputs != n_inputs || p->n_values != s->m->n_values ||
        p->n_nodes != s->m->n_nodes)
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
           a->zero_point != b->zero_point || a->quantized16 != b->quantized16 ||
           memcmp(&a->scale16, &b->scale16, sizeof a->scale16) != 0 || a->zero_point16 != b->zero_point16 ||
           a->via_f16 != b->via_f16;
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
    while (i < m->n_nodes && i < p->base.upto && (m->nodes[i].folded || !node_changed(p, s, i)))
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

/* Keeps a copy of value v in the slot if it may be needed later and the budget allows. */
static rd_status record_value(prefix_slot *sl, const sim_run_state *st, int v, bool *fits, rd_error *err)
{
    const rd_model *m = st->m;
    if (!m->values[v].is_graph_output && m->values[v].last_use < 0)
        return RD_OK; /* read by nobody: never seeded */
    size_t nb = rd_tensor_nbytes(&st->vals[v]);
    if (nb > sl->budget - sl->bytes) {
        *fits = false;
        return RD_OK;
    }
    rd_status rc = rd_tensor_clone(&sl->vals[v], &st->vals[v], err);
    if (rc != RD_OK)
        return rc;
    sl->has[v] = true;
    sl->bytes += nb;
    return RD_OK;
}

/* Records node idx's outputs while every earlier node's are held (a prefix, so any earlier node can resume). */
static rd_status record_node(prefix_slot *sl, const sim_run_state *st, int idx, rd_error *err)
{
    if (sl->upto != idx)
        return RD_OK;
    const sim_node *n = &st->m->nodes[idx];
    bool fits = true;
    for (int k = 0; k < n->n_out && fits; k++)
        if (n->out[k] >= 0) {
            rd_status rc = record_value(sl, st, n->out[k], &fits, err);
            if (rc != RD_OK)
                return rc;
        }
    if (!fits) { /* all of a node or none of it */
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                slot_drop(sl, n->out[k]);
        return RD_OK;
    }
    sl->upto = idx + 1;
    return RD_OK;
}

/* What nodes from start on produced (recomputed by the run, or replaced by a commit). */
static void drop_from(prefix_slot *sl, const rd_model *m, int start)
{
    for (int v = 0; v < m->n_values; v++)
        if (sl->has[v] && !produced_before(m, v, start))
            slot_drop(sl, v);
    if (sl->upto > start)
        sl->upto = start;
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
        rd_status rc = record_value(&p->base, st, st->m->inputs[k], &fits, err);
        if (rc != RD_OK)
            return rc;
    }
    if (!fits) /* not even the inputs fit: nothing can resume */
        drop_from(&p->base, st->m, 0);
    p->base.upto = fits ? 0 : -1;
    return RD_OK;
}

/* Runs nodes start..end of the state, keeping their outputs in sl when it is not NULL. */
static rd_status run_from(rd_sim *s, sim_run_state *st, int start, rd_pool *pool, prefix_slot *sl,
                          rd_sim_prefix_stats *counters, rd_error *err)
{
    for (int i = start; i < s->m->n_nodes; i++) {
        if (s->m->nodes[i].folded) { /* computed at load time: nothing to hold */
            if (sl && sl->upto == i)
                sl->upto = i + 1;
            continue;
        }
        rd_status rc = sim_state_compute(st, i, pool, err);
        if (rc == RD_OK && sl)
            rc = record_node(sl, st, i, err);
        if (rc != RD_OK)
            return rc;
        sim_state_release(st, i);
        counters->nodes_computed++;
    }
    return RD_OK;
}

/* The run's hooks: the simulation's, with the layer stats going to the recording's own array. */
typedef struct prefix_hook {
    rd_sim *s;
    rd_sim_layer_stats *stats;
} prefix_hook;

static rd_status prefix_materialize(void *user, int value, rd_tensor *t, rd_error *err)
{
    prefix_hook *h = user;
    return sim_materialize(h->s, value, t, &h->stats[value], err);
}

static rd_status prefix_eval(void *user, int node, sim_op_ctx *ctx, rd_error *err)
{
    prefix_hook *h = user;
    return sim_hook_eval(h->s, node, ctx, err);
}

void rd_sim_prefix_layer_stats_get(const rd_sim_prefix *p, int value, rd_sim_layer_stats *out)
{
    memset(out, 0, sizeof *out);
    out->fp16_first_index = -1;
    if (p->run_stats && value >= 0 && value < p->n_values)
        *out = p->run_stats[value];
}

/* Bytes of the recording's activations produced before start (what a commit from start keeps). */
static size_t bytes_before(const rd_sim_prefix *p, const rd_model *m, int start)
{
    size_t b = 0;
    for (int v = 0; v < p->n_values; v++)
        if (p->base.has[v] && produced_before(m, v, start))
            b += rd_tensor_nbytes(&p->base.vals[v]);
    return b;
}

rd_status rd_sim_run_prefix(rd_sim *s, rd_sim_prefix *p, rd_prefix_mode mode, const rd_tensor *inputs, size_t n_inputs,
                            const rd_run_options *opt, rd_tensor *outputs, size_t n_outputs, rd_error *err)
{
    if (p)
        try_clear(p);
    bool concurrent = (mode & RD_PREFIX_CONCURRENT) != 0;
    mode &= ~RD_PREFIX_CONCURRENT;
    if (!p || (opt && (opt->observer || opt->observe_inputs)))
        return rd_sim_run(s, inputs, n_inputs, opt, outputs, n_outputs, err); /* every node must be shown */
    rd_model *m = s->m;
    if (n_outputs > (size_t)m->n_outputs)
        return rd_errorf(err, RD_E_INVAL, "%s: %zu outputs requested, the model has %d", m->path, n_outputs,
                         m->n_outputs);
    for (size_t o = 0; o < n_outputs; o++)
        memset(&outputs[o], 0, sizeof outputs[o]);
    if (mode != RD_PREFIX_USE && mode != RD_PREFIX_RECORD && mode != RD_PREFIX_TRY)
        return rd_errorf(err, RD_E_INVAL, "prefix mode %d is not one of USE, RECORD, TRY", (int)mode);
    rd_status rc = prefix_fit(p, s, err);
    if (rc != RD_OK)
        return rc;
    bool usable = recording_matches(p, s, inputs, n_inputs);
    int start = usable ? resume_point(p, s) : 0;
    if (mode == RD_PREFIX_TRY && !usable)
        mode = RD_PREFIX_RECORD; /* nothing to keep: this run may as well be the recording */
    prefix_slot *sl = NULL;
    if (mode == RD_PREFIX_RECORD) {
        if (!usable || start == 0)
            prefix_clear(p);
        p->valid = false; /* until this run completes */
        drop_from(&p->base, m, start);
        p->base.budget = p->max_bytes;
        sl = &p->base;
    } else if (mode == RD_PREFIX_TRY) {
        size_t kept = bytes_before(p, m, start);
        p->try_.budget = kept < p->max_bytes ? p->max_bytes - kept : 0;
        p->try_.upto = start;
        p->try_start = start;
        sl = &p->try_;
    }
    for (int v = 0; v < m->n_values; v++) {
        if (start > 0 && produced_before(m, v, start)) {
            p->run_stats[v] = p->stats[v];
        } else {
            memset(&p->run_stats[v], 0, sizeof p->run_stats[v]);
            p->run_stats[v].fp16_first_index = -1;
        }
    }
    prefix_hook hk = {.s = s, .stats = p->run_stats};
    sim_exec_hooks hooks = {.user = &hk, .eval = prefix_eval, .materialize = prefix_materialize};
    sim_run_state st;
    rc = sim_state_init(&st, m, &hooks, err);
    if (rc == RD_OK && start == 0) {
        rc = sim_state_bind_inputs(&st, inputs, n_inputs, err);
        if (rc == RD_OK && mode == RD_PREFIX_RECORD)
            rc = record_inputs(p, &st, inputs, n_inputs, err);
        bool fits = true; /* a graph input's configuration changed: the tentative run holds the inputs too */
        for (int k = 0; rc == RD_OK && mode == RD_PREFIX_TRY && k < m->n_inputs && fits; k++)
            rc = record_value(&p->try_, &st, m->inputs[k], &fits, err);
        if (!fits)
            p->try_.upto = -1;
    } else if (rc == RD_OK) {
        for (int v = 0; v < m->n_values; v++)
            if (p->base.has[v] && produced_before(m, v, start) && needed_from(m, v, start)) {
                st.vals[v] = p->base.vals[v]; /* borrowed: the state does not own it */
                st.ready[v] = true;
            }
    }
    p->counters.runs++;
    for (int i = 0; i < start; i++)
        p->counters.nodes_reused += !m->nodes[i].folded;
    rd_pool *pool = NULL, *owned = NULL;
    if (rc == RD_OK)
        rc = sim_run_pool(opt, s->pool, &pool, &owned, err);
    if (rc == RD_OK)
        rc = run_from(s, &st, start, pool, sl, &p->counters, err);
    rd_pool_destroy(owned);
    if (rc == RD_OK)
        rc = sim_state_take_outputs(&st, outputs, n_outputs, err);
    sim_state_fini(&st);
    if (!concurrent) /* what rd_sim_layer_stats_get shows, as after rd_sim_run */
        memcpy(s->stats, p->run_stats, (size_t)m->n_values * sizeof *s->stats);
    if (rc != RD_OK) {
        try_clear(p);
        return rc;
    }
    if (mode == RD_PREFIX_RECORD) {
        memcpy(p->cfg, s->vals, (size_t)m->n_values * sizeof *p->cfg);
        memcpy(p->stats, p->run_stats, (size_t)m->n_values * sizeof *p->stats);
        p->epoch = s->epoch;
        p->valid = p->base.upto >= 0;
    } else if (mode == RD_PREFIX_TRY) {
        memcpy(p->try_cfg, s->vals, (size_t)m->n_values * sizeof *p->try_cfg);
        memcpy(p->try_stats, p->run_stats, (size_t)m->n_values * sizeof *p->try_stats);
        p->try_valid = true;
    }
    return RD_OK;
}

bool rd_sim_prefix_commit(rd_sim_prefix *p)
{
    if (!p || !p->try_valid || !p->valid)
        return false;
    const rd_model *m = p->m;
    int start = p->try_start;
    if (start == 0)
        slot_clear(&p->base, p->n_values); /* the graph inputs were held again too */
    else
        drop_from(&p->base, m, start);
    for (int v = 0; v < p->n_values; v++)
        if (p->try_.has[v]) { /* moved, not copied */
            p->base.vals[v] = p->try_.vals[v];
            p->base.has[v] = true;
            p->base.bytes += rd_tensor_nbytes(&p->try_.vals[v]);
            p->try_.has[v] = false;
            memset(&p->try_.vals[v], 0, sizeof p->try_.vals[v]);
        }
    p->try_.bytes = 0;
    p->base.upto = p->try_.upto;
    p->valid = p->base.upto >= 0;
    memcpy(p->cfg, p->try_cfg, (size_t)p->n_values * sizeof *p->cfg);
    memcpy(p->stats, p->try_stats, (size_t)p->n_values * sizeof *p->stats);
    p->try_valid = false;
    return true;
}
