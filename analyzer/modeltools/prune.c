/*
 * prune.c: lossless channel pruning. Channels live on axis 1 of float tensors of rank >= 2.
 *
 * Two passes over the graph. Forward, zero[v][c] says channel c of value v is identically 0: a Conv or
 * Gemm output channel whose weights and bias are all 0, carried through ops that map 0 to 0 channel by
 * channel (Relu, Clip around 0, pools, BatchNormalization whose beta and mean are 0, ...), Add (zero on
 * both sides) and Concat on axis 1. Then cut[v][c], the channels actually removed, starts as zero and
 * shrinks until every node agrees: a one-to-one op removes the same channels on both sides, Add the same
 * on its inputs and output, Concat the matching ones; a Conv or Gemm consumer can drop any input channel
 * (its weight column goes); any other reader, graph inputs and outputs keep every channel. No value loses
 * all its channels. Each op's role comes from the op table (rd_op_info.prune); everything is conservative: an
 * op with no channel rule stops pruning (docs/prune.md).
 */
#include "prune.h"

#include <stdlib.h>
#include <string.h>

typedef enum node_kind {
    K_OTHER = 0, /* stops pruning: keeps all channels of its inputs and outputs */
    K_CONV,      /* Conv with group 1 or Gemm: produces zero channels, drops input channels freely */
    K_GEMM,
    K_ONE_TO_ONE, /* channel c of the output depends on channel c of input 0 only, 0 -> 0 */
    K_BN,
    K_ADD,
    K_CONCAT,
} node_kind;

typedef struct pruner {
    const rd_model *m;
    size_t nv, nn;
    int64_t *channels; /* per value: channel count, 0 when the value carries no prunable channels */
    bool **zero;       /* per value: channels identically 0 (NULL when channels is 0) */
    bool **cut;        /* per value: channels removed */
    node_kind *kind;
    int *uses; /* per value: node inputs reading it */
} pruner;

static const float *f32_const(const rd_model *m, int value, int rank)
{
    const rd_tensor *t = value >= 0 ? rd_model_constant(m, (size_t)value) : NULL;
    return t && t->dtype == RD_DT_F32 && (rank < 0 || t->rank == rank) ? t->data : NULL;
}

/* A weight or parameter that only this node reads, float32, of the given rank. */
static const rd_tensor *own_const(const pruner *p, int value, int rank)
{
    if (value < 0 || p->uses[value] != 1 || !f32_const(p->m, value, rank))
        return NULL;
    rd_value_info vi;
    rd_model_value(p->m, (size_t)value, &vi);
    return vi.producer < 0 ? rd_model_constant(p->m, (size_t)value) : NULL; /* not a folded value */
}

static int64_t chans(const pruner *p, int value)
{
    return value >= 0 ? p->channels[value] : 0;
}

/* A bounded channelwise op (Clip) keeps 0 at 0 when min <= 0 <= max (attributes below opset 11, scalar
   constant inputs from 11). */
static bool clip_keeps_zero(const pruner *p, size_t i, const rd_node_info *ni)
{
    float lo = -1.0f, hi = 1.0f;
    if (ni->opset < 11) {
        rd_model_node_attr_float(p->m, i, "min", &lo);
        rd_model_node_attr_float(p->m, i, "max", &hi);
    } else {
        for (int k = 1; k < ni->n_inputs && k < 3; k++) {
            if (ni->inputs[k] < 0)
                continue;
            const rd_tensor *t = rd_model_constant(p->m, (size_t)ni->inputs[k]);
            if (!t || t->dtype != RD_DT_F32 || rd_tensor_numel(t) != 1)
                return false;
            *(k == 1 ? &lo : &hi) = ((const float *)t->data)[0];
        }
    }
    return lo <= 0.0f && hi >= 0.0f;
}

static node_kind classify_conv(const pruner *p, size_t i, const rd_node_info *ni)
{
    int64_t group = 1;
    rd_model_node_attr_int(p->m, i, "group", &group);
    int x = ni->inputs[0], y = ni->outputs[0];
    const rd_tensor *w = ni->n_inputs >= 2 ? own_const(p, ni->inputs[1], -1) : NULL;
    if (group != 1 || ni->n_outputs != 1 || !w || w->rank < 3 || !chans(p, x) || !chans(p, y) ||
        w->dims[0] != chans(p, y) || w->dims[1] != chans(p, x))
        return K_OTHER;
    if (ni->n_inputs >= 3 && ni->inputs[2] >= 0) {
        const rd_tensor *b = own_const(p, ni->inputs[2], 1);
        if (!b || b->dims[0] != w->dims[0])
            return K_OTHER;
    }
    return K_CONV;
}

static node_kind classify_gemm(const pruner *p, size_t i, const rd_node_info *ni)
{
    int64_t trans_a = 0, trans_b = 0;
    rd_model_node_attr_int(p->m, i, "transA", &trans_a);
    rd_model_node_attr_int(p->m, i, "transB", &trans_b);
    const rd_tensor *w = ni->n_inputs >= 2 ? own_const(p, ni->inputs[1], 2) : NULL;
    int a = ni->inputs[0], y = ni->outputs[0];
    if (trans_a || ni->n_outputs != 1 || !w || !chans(p, a) || !chans(p, y))
        return K_OTHER;
    int64_t k = w->dims[trans_b ? 1 : 0], n = w->dims[trans_b ? 0 : 1];
    if (k != chans(p, a) || n != chans(p, y))
        return K_OTHER;
    if (ni->n_inputs >= 3 && ni->inputs[2] >= 0) {
        const rd_tensor *c = own_const(p, ni->inputs[2], -1);
        if (!c || rd_tensor_numel(c) != n || !(c->rank == 1 || (c->rank == 2 && c->dims[0] == 1)))
            return K_OTHER;
    }
    return K_GEMM;
}

static node_kind classify_bn(const pruner *p, const rd_node_info *ni)
{
    int64_t c = chans(p, ni->inputs[0]);
    if (ni->n_inputs != 5 || ni->n_outputs != 1 || !c || chans(p, ni->outputs[0]) != c)
        return K_OTHER;
    for (int k = 1; k < 5; k++) {
        const rd_tensor *t = own_const(p, ni->inputs[k], 1);
        if (!t || t->dims[0] != c)
            return K_OTHER;
    }
    return K_BN;
}

static node_kind classify_add(const pruner *p, const rd_node_info *ni)
{
    int64_t c = chans(p, ni->outputs[0]);
    rd_value_info a, b, y;
    if (ni->n_inputs != 2 || ni->inputs[1] < 0 || !c || chans(p, ni->inputs[0]) != c || chans(p, ni->inputs[1]) != c)
        return K_OTHER;
    rd_model_value(p->m, (size_t)ni->inputs[0], &a);
    rd_model_value(p->m, (size_t)ni->inputs[1], &b);
    rd_model_value(p->m, (size_t)ni->outputs[0], &y);
    return a.rank == y.rank && b.rank == y.rank ? K_ADD : K_OTHER; /* no broadcast onto the channel axis */
}

static node_kind classify_concat(const pruner *p, size_t i, const rd_node_info *ni)
{
    rd_value_info y;
    rd_model_value(p->m, (size_t)ni->outputs[0], &y);
    int64_t axis = 0, sum = 0;
    bool all = true;
    rd_model_node_attr_int(p->m, i, "axis", &axis);
    if (axis < 0)
        axis += y.rank;
    for (int k = 0; k < ni->n_inputs; k++) {
        all = all && chans(p, ni->inputs[k]) > 0;
        sum += chans(p, ni->inputs[k]);
    }
    return all && axis == 1 && chans(p, ni->outputs[0]) && sum == chans(p, ni->outputs[0]) ? K_CONCAT : K_OTHER;
}

/* What node i is for pruning: its operator's channel rule (the op table, rd_op_find), checked on the node. */
static node_kind classify(const pruner *p, size_t i)
{
    rd_node_info ni;
    rd_model_node(p->m, i, &ni);
    rd_op_info op;
    if (ni.folded || ni.n_inputs < 1 || ni.n_outputs < 1 || ni.inputs[0] < 0 || !rd_op_find(ni.domain, ni.op_type, &op))
        return K_OTHER;
    switch (op.prune) {
    case RD_OP_PRUNE_WEIGHTS:
        if (op.weight == RD_OP_WEIGHT_CONV)
            return classify_conv(p, i, &ni);
        return op.weight == RD_OP_WEIGHT_GEMM ? classify_gemm(p, i, &ni) : K_OTHER;
    case RD_OP_PRUNE_AFFINE:
        return classify_bn(p, &ni);
    case RD_OP_PRUNE_ADD:
        return classify_add(p, &ni);
    case RD_OP_PRUNE_CONCAT:
        return classify_concat(p, i, &ni);
    case RD_OP_PRUNE_CHANNELWISE:
    case RD_OP_PRUNE_CHANNELWISE_BOUNDED: {
        int64_t c = chans(p, ni.inputs[0]);
        if (ni.n_outputs != 1 || !c || chans(p, ni.outputs[0]) != c)
            return K_OTHER;
        return op.prune == RD_OP_PRUNE_CHANNELWISE || clip_keeps_zero(p, i, &ni) ? K_ONE_TO_ONE : K_OTHER;
    }
    case RD_OP_PRUNE_STOP:
        break;
    }
    return K_OTHER;
}

static void pruner_fini(pruner *p)
{
    for (size_t v = 0; v < p->nv && p->zero; v++) {
        free(p->zero[v]);
        if (p->cut)
            free(p->cut[v]);
    }
    free(p->channels);
    free(p->zero);
    free(p->cut);
    free(p->kind);
    free(p->uses);
}

static rd_status pruner_init(pruner *p, const rd_model *m, rd_error *err)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->nv = rd_model_value_count(m);
    p->nn = rd_model_node_count(m);
    p->channels = calloc(p->nv + 1, sizeof *p->channels);
    p->zero = calloc(p->nv + 1, sizeof *p->zero);
    p->cut = calloc(p->nv + 1, sizeof *p->cut);
    p->kind = calloc(p->nn + 1, sizeof *p->kind);
    p->uses = calloc(p->nv + 1, sizeof *p->uses);
    if (!p->channels || !p->zero || !p->cut || !p->kind || !p->uses)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t v = 0; v < p->nv; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        if (vi.is_constant || vi.dtype != RD_DT_F32 || vi.rank < 2 || vi.dims[1] <= 0)
            continue;
        p->channels[v] = vi.dims[1];
        p->zero[v] = calloc((size_t)vi.dims[1], sizeof **p->zero);
        p->cut[v] = calloc((size_t)vi.dims[1], sizeof **p->cut);
        if (!p->zero[v] || !p->cut[v])
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < p->nn; i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] >= 0)
                p->uses[ni.inputs[k]]++;
    }
    for (size_t i = 0; i < p->nn; i++)
        p->kind[i] = classify(p, i);
    return RD_OK;
}

/* True when every element of slice c of axis `axis` of t is 0. */
static bool slice_is_zero(const rd_tensor *t, int axis, int64_t c)
{
    int64_t outer = 1, inner = 1, dim = t->dims[axis];
    for (int d = 0; d < axis; d++)
        outer *= t->dims[d];
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->dims[d];
    const float *x = t->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            if (x[(o * dim + c) * inner + i] != 0.0f)
                return false;
    return true;
}

static bool bias_zero(const rd_model *m, const rd_node_info *ni, int64_t c)
{
    if (ni->n_inputs < 3 || ni->inputs[2] < 0)
        return true;
    return ((const float *)rd_model_constant(m, (size_t)ni->inputs[2])->data)[c] == 0.0f;
}

/* Forward: which channels are identically 0. */
static void find_zero(pruner *p)
{
    for (size_t i = 0; i < p->nn; i++) {
        if (p->kind[i] == K_OTHER)
            continue;
        rd_node_info ni;
        rd_model_node(p->m, i, &ni);
        int y = ni.outputs[0];
        bool *zy = p->zero[y];
        const bool *zx = p->zero[ni.inputs[0]];
        for (int64_t c = 0; c < p->channels[y]; c++) {
            switch (p->kind[i]) {
            case K_CONV:
                zy[c] = slice_is_zero(rd_model_constant(p->m, (size_t)ni.inputs[1]), 0, c) && bias_zero(p->m, &ni, c);
                break;
            case K_GEMM: {
                int64_t trans_b = 0;
                rd_model_node_attr_int(p->m, i, "transB", &trans_b);
                zy[c] = slice_is_zero(rd_model_constant(p->m, (size_t)ni.inputs[1]), trans_b ? 0 : 1, c) &&
                        bias_zero(p->m, &ni, c);
                break;
            }
            case K_ONE_TO_ONE:
                zy[c] = zx[c];
                break;
            case K_BN: { /* (0 - mean) * scale / sqrt(var + eps) + beta */
                const float *scale = f32_const(p->m, ni.inputs[1], 1), *beta = f32_const(p->m, ni.inputs[2], 1);
                const float *mean = f32_const(p->m, ni.inputs[3], 1), *var = f32_const(p->m, ni.inputs[4], 1);
                zy[c] = zx[c] && beta[c] == 0.0f && (mean[c] == 0.0f || scale[c] == 0.0f) && var[c] >= 0.0f;
                break;
            }
            case K_ADD:
                zy[c] = zx[c] && p->zero[ni.inputs[1]][c];
                break;
            case K_CONCAT:
            case K_OTHER:
                break;
            }
        }
        if (p->kind[i] == K_CONCAT)
            for (int k = 0, off = 0; k < ni.n_inputs; off += (int)p->channels[ni.inputs[k]], k++)
                memcpy(zy + off, p->zero[ni.inputs[k]], (size_t)p->channels[ni.inputs[k]] * sizeof *zy);
    }
}

/* a[c] = b[c] = a[c] && b[c]; true if anything changed. */
static bool meet(bool *a, bool *b, int64_t n)
{
    bool changed = false;
    for (int64_t c = 0; c < n; c++)
        if (a[c] != b[c]) {
            a[c] = b[c] = false;
            changed = true;
        }
    return changed;
}

static bool clear(bool *a, int64_t n)
{
    bool changed = false;
    for (int64_t c = 0; c < n; c++) {
        changed = changed || a[c];
        a[c] = false;
    }
    return changed;
}

/* One round of agreement between the nodes; true if a cut shrank. */
static bool agree(pruner *p)
{
    bool changed = false;
    for (size_t i = 0; i < p->nn; i++) {
        rd_node_info ni;
        rd_model_node(p->m, i, &ni);
        node_kind k = p->kind[i];
        if (k == K_OTHER) {
            for (int j = 0; j < ni.n_inputs; j++)
                if (chans(p, ni.inputs[j]))
                    changed = clear(p->cut[ni.inputs[j]], p->channels[ni.inputs[j]]) || changed;
            for (int j = 0; j < ni.n_outputs; j++)
                if (chans(p, ni.outputs[j]))
                    changed = clear(p->cut[ni.outputs[j]], p->channels[ni.outputs[j]]) || changed;
        } else if (k == K_ONE_TO_ONE || k == K_BN || k == K_ADD) {
            int y = ni.outputs[0];
            for (int j = 0; j < (k == K_ADD ? 2 : 1); j++)
                changed = meet(p->cut[ni.inputs[j]], p->cut[y], p->channels[y]) || changed;
            if (k == K_ADD)
                changed = meet(p->cut[ni.inputs[0]], p->cut[y], p->channels[y]) || changed;
        } else if (k == K_CONCAT) {
            for (int j = 0, off = 0; j < ni.n_inputs; off += (int)p->channels[ni.inputs[j]], j++)
                changed = meet(p->cut[ni.inputs[j]], p->cut[ni.outputs[0]] + off, p->channels[ni.inputs[j]]) || changed;
        }
    }
    for (size_t v = 0; v < p->nv; v++) {
        if (!p->channels[v])
            continue;
        rd_value_info vi;
        rd_model_value(p->m, v, &vi);
        bool outside = vi.producer < 0; /* graph inputs */
        for (size_t o = 0; o < rd_model_output_count(p->m) && !outside; o++)
            outside = rd_model_output(p->m, o) == (int)v;
        if (outside) {
            changed = clear(p->cut[v], p->channels[v]) || changed;
            continue;
        }
        int64_t n_cut = 0, last = -1;
        for (int64_t c = 0; c < p->channels[v]; c++)
            if (p->cut[v][c]) {
                n_cut++;
                last = c;
            }
        if (n_cut == p->channels[v]) { /* keep one channel: an empty tensor is not a model */
            p->cut[v][last] = false;
            changed = true;
        }
    }
    return changed;
}

/* A copy of t without the slices of axis `axis` where drop[c] (drop NULL: plain copy). */
static rd_status slice_copy(const rd_tensor *t, int axis, const bool *drop, rd_tensor *out, rd_error *err)
{
    int64_t dims[RD_MAX_RANK], dim = t->dims[axis], kept = 0, outer = 1, inner = 1;
    memcpy(dims, t->dims, sizeof dims);
    for (int64_t c = 0; c < dim; c++)
        kept += !(drop && drop[c]);
    dims[axis] = kept;
    rd_status st = rd_tensor_alloc(out, t->dtype, t->rank, dims, err);
    if (st != RD_OK)
        return st;
    for (int d = 0; d < axis; d++)
        outer *= t->dims[d];
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->dims[d];
    const float *x = t->data;
    float *y = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < dim; c++)
            if (!(drop && drop[c])) {
                memcpy(y, x + (o * dim + c) * inner, (size_t)inner * sizeof *y);
                y += inner;
            }
    return RD_OK;
}

static bool any(const bool *a, int64_t n)
{
    for (int64_t c = 0; c < n; c++)
        if (a[c])
            return true;
    return false;
}

/* Appends constant `value` sliced on up to two axes (drop NULL: axis untouched). */
static rd_status add_replacement(an_prune_plan *plan, const rd_model *m, int value, int axis0, const bool *drop0,
                                 int axis1, const bool *drop1, rd_error *err)
{
    rd_tensor tmp;
    const rd_tensor *t = rd_model_constant(m, (size_t)value);
    rd_status st = slice_copy(t, axis0, drop0, &tmp, err);
    if (st != RD_OK)
        return st;
    rd_tensor *dst = &plan->tensors[plan->n_replace];
    if (axis1 >= 0) {
        st = slice_copy(&tmp, axis1, drop1, dst, err);
        rd_tensor_fini(&tmp);
        if (st != RD_OK)
            return st;
    } else {
        *dst = tmp;
    }
    rd_value_info vi;
    rd_model_value(m, (size_t)value, &vi);
    plan->names[plan->n_replace] = strdup(vi.name);
    plan->n_replace++; /* counted before the check so that fini frees the tensor */
    return plan->names[plan->n_replace - 1] ? RD_OK : rd_errorf(err, RD_E_NOMEM, "out of memory");
}

/* The sliced constants of every node touching a cut channel. */
static rd_status build_replacements(const pruner *p, an_prune_plan *plan, rd_error *err)
{
    plan->names = calloc(4 * p->nn + 1, sizeof *plan->names);
    plan->tensors = calloc(4 * p->nn + 1, sizeof *plan->tensors);
    if (!plan->names || !plan->tensors)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_status st = RD_OK;
    for (size_t i = 0; i < p->nn && st == RD_OK; i++) {
        rd_node_info ni;
        rd_model_node(p->m, i, &ni);
        int x = ni.inputs[0], y = ni.n_outputs > 0 ? ni.outputs[0] : -1;
        if (p->kind[i] == K_CONV || p->kind[i] == K_GEMM) {
            bool cut_out = any(p->cut[y], p->channels[y]), cut_in = any(p->cut[x], p->channels[x]);
            if (!cut_out && !cut_in)
                continue;
            int64_t trans_b = 0;
            if (p->kind[i] == K_GEMM)
                rd_model_node_attr_int(p->m, i, "transB", &trans_b);
            int out_axis = p->kind[i] == K_CONV || trans_b ? 0 : 1;
            st = add_replacement(plan, p->m, ni.inputs[1], out_axis, p->cut[y], 1 - out_axis, p->cut[x], err);
            if (st == RD_OK && cut_out && ni.n_inputs >= 3 && ni.inputs[2] >= 0) {
                const rd_tensor *b = rd_model_constant(p->m, (size_t)ni.inputs[2]);
                st = add_replacement(plan, p->m, ni.inputs[2], b->rank - 1, p->cut[y], -1, NULL, err);
            }
            for (int64_t c = 0; c < p->channels[y]; c++)
                plan->n_channels += p->cut[y][c];
        } else if (p->kind[i] == K_BN && any(p->cut[y], p->channels[y])) {
            for (int k = 1; k < 5 && st == RD_OK; k++)
                st = add_replacement(plan, p->m, ni.inputs[k], 0, p->cut[y], -1, NULL, err);
        }
    }
    return st;
}

static int64_t constant_bytes(const rd_model *m)
{
    int64_t total = 0;
    for (size_t v = 0; v < rd_model_value_count(m); v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        const rd_tensor *t = rd_model_constant(m, v);
        if (t && vi.producer < 0)
            total += (int64_t)rd_tensor_nbytes(t);
    }
    return total;
}

static int64_t total_macs(const rd_model *m)
{
    int64_t total = 0;
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        total += ni.folded ? 0 : ni.macs; /* as inspect counts them */
    }
    return total;
}

/* Savings measured on the pruned model itself, which also proves that it loads. */
static rd_status measure(const rd_model *m, an_prune_plan *plan, rd_error *err)
{
    plan->weight_bytes = constant_bytes(m);
    plan->macs = total_macs(m);
    if (!plan->n_channels)
        return RD_OK;
    void *buf = NULL;
    size_t len = 0;
    rd_model *pruned = NULL;
    rd_status st = an_prune_write(m, plan, &buf, &len, err);
    rd_load_options lopt = {.allow_unsupported_ops = true};
    if (st == RD_OK)
        st = rd_model_load_mem(buf, len, "pruned model", NULL, &lopt, &pruned, err);
    if (st == RD_OK) {
        plan->weight_bytes_removed = plan->weight_bytes - constant_bytes(pruned);
        plan->macs_removed = plan->macs - total_macs(pruned);
    }
    rd_model_destroy(pruned);
    free(buf);
    return st;
}

rd_status an_prune_analyze(const rd_model *m, an_prune_plan *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    pruner p;
    rd_status st = pruner_init(&p, m, err);
    if (st == RD_OK) {
        find_zero(&p);
        for (size_t v = 0; v < p.nv; v++)
            if (p.channels[v])
                memcpy(p.cut[v], p.zero[v], (size_t)p.channels[v] * sizeof **p.cut);
        while (agree(&p))
            ; /* cuts only shrink: this ends */
        st = build_replacements(&p, out, err);
    }
    pruner_fini(&p);
    if (st == RD_OK)
        st = measure(m, out, err);
    if (st != RD_OK)
        an_prune_plan_fini(out);
    return st;
}

rd_status an_prune_write(const rd_model *m, const an_prune_plan *p, void **out_buf, size_t *out_len, rd_error *err)
{
    if (!p->n_replace)
        return rd_onnx_model_write(m, out_buf, out_len, err);
    rd_onnx_rewrite rw = {.replace_names = (const char *const *)p->names,
                          .replace_tensors = p->tensors,
                          .n_replace = p->n_replace,
                          .drop_shapes = true};
    return rd_onnx_model_rewrite(m, &rw, out_buf, out_len, err);
}

void an_prune_plan_fini(an_prune_plan *p)
{
    for (size_t i = 0; i < p->n_replace; i++) {
        free(p->names[i]);
        rd_tensor_fini(&p->tensors[i]);
    }
    free(p->names);
    free(p->tensors);
    memset(p, 0, sizeof *p);
}

double an_prune_mb(int64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

double an_prune_gflops(int64_t macs)
{
    return 2.0 * (double)macs / 1e9;
}

void an_prune_print_summary(FILE *out, const an_prune_plan *p)
{
    fprintf(out, "Weight: -%.5f MB (-%.1f%%)\n", an_prune_mb(p->weight_bytes_removed),
            p->weight_bytes ? 100.0 * (double)p->weight_bytes_removed / (double)p->weight_bytes : 0.0);
    fprintf(out, "GFLOPs: -%.5f (-%.1f%%)\n", an_prune_gflops(p->macs_removed),
            p->macs ? 100.0 * (double)p->macs_removed / (double)p->macs : 0.0);
}
