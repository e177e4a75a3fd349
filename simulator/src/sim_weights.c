/*
 * sim_weights.c: the int8 weights of a simulation's integer layers, read (quantize, export-qdq) and
 * imported from a .quantization.cfg (rd_sim_set_weight_scales).
 */
#include "sim_internal.h"

/* True when node computes with integer accumulation on a constant float weight at int8 or int16. */
static bool has_q8_weights(const rd_sim *s, int node)
{
    const sim_node *n = &s->m->nodes[node];
    if (n->folded || !n->def || !sim_const_weight(s, node))
        return false;
    const rd_prec p = sim_node_precision(s, node);
    return (p == RD_PREC_INT8 && n->def->eval_i8) || (p == RD_PREC_INT16 && n->def->eval_i16);
}

rd_status rd_sim_weights_get(rd_sim *s, int node, rd_sim_weights *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    if (node < 0 || node >= s->m->n_nodes || !has_q8_weights(s, node))
        return rd_errorf(err, RD_E_NOTFOUND, "%s: node %d is not an int8 or int16 layer with constant weights",
                         s->m->path, node);
    sim_node_data *d = &s->nodes[node];
    const sim_node *n = &s->m->nodes[node];
    bool force_pt;
    if (sim_node_precision(s, node) == RD_PREC_INT16) {
        if (!d->q16_ready) {
            rd_status st = sim_q16_prepare_weights(s, node, err);
            if (st != RD_OK)
                return st;
        }
        sim_q8_weight_axis(n, sim_const_weight(s, node), &out->axis, &out->group, &force_pt);
        out->value = n->in[n->def->weight_in];
        out->n_scale = d->n_w_scale16;
        out->scale = d->w_scale16;
        out->bits = sim_weight_bits(s);
        out->q16 = d->w_q16;
        return RD_OK;
    }
    if (!d->q8_ready) {
        rd_status st = sim_q8_prepare_weights(s, node, err);
        if (st != RD_OK)
            return st;
    }
    sim_q8_weight_axis(n, sim_const_weight(s, node), &out->axis, &out->group, &force_pt);
    out->value = n->in[n->def->weight_in];
    out->n_scale = d->n_w_scale;
    out->scale = d->w_scale;
    out->q = d->w_q;
    out->bits = 8;
    return RD_OK;
}

/* Stores scales for one node after checking them against its weight; quantized again on next use. */
static rd_status import_for_node(rd_sim *s, int node, const char *name, const float *scales, int n, int bits,
                                 rd_error *err)
{
    const sim_node *nd = &s->m->nodes[node];
    const rd_tensor *w = sim_const_weight(s, node);
    int axis;
    int64_t group;
    bool force_pt;
    sim_q8_weight_axis(nd, w, &axis, &group, &force_pt);
    /* a trial quantization checks the count and every scale, with the message of the quantizer */
    int16_t *q = NULL;
    rd_status st = sim_quant_weights_wide_scaled(w, axis, group, bits, scales, n, &q, NULL, err);
    free(q);
    if (st != RD_OK)
        return rd_error_prefix(err, "weights '%s' of node '%s'", name, nd->name);
    sim_node_data *d = &s->nodes[node];
    float *copy = sim_malloc_array((size_t)n, sizeof *copy);
    if (!copy)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    memcpy(copy, scales, (size_t)n * sizeof *copy);
    free(d->imported_scale);
    d->imported_scale = copy;
    d->n_imported_scale = n;
    d->imported_bits = bits;
    d->q8_ready = false;
    d->q16_ready = false;
    s->epoch++;
    return RD_OK;
}

rd_status rd_sim_set_weight_scales(rd_sim *s, const char *name, const float *scales, int n, rd_error *err)
{
    return rd_sim_set_weight_scales_bits(s, name, scales, n, 8, err);
}

rd_status rd_sim_set_weight_scales_bits(rd_sim *s, const char *name, const float *scales, int n, int bits,
                                        rd_error *err)
{
    if (bits != 8 && bits != 16)
        return rd_errorf(err, RD_E_UNSUPPORTED, "weights '%s': %d-bit weights are not simulated (8 or 16)", name, bits);
    if (n < 1 || !scales)
        return rd_errorf(err, RD_E_INVAL, "weights '%s': no scales given", name);
    int v = sim_model_find(s->m, name);
    int found = 0;
    for (int i = 0; i < s->m->n_nodes; i++) {
        const sim_node *nd = &s->m->nodes[i];
        bool named = strcmp(nd->name, name) == 0 && nd->name[0];
        bool reads = v >= 0 && nd->def && nd->def->weight_in > 0 && nd->n_in > nd->def->weight_in &&
                     nd->in[nd->def->weight_in] == v;
        if (!(named || reads) || !has_q8_weights(s, i))
            continue;
        rd_status st = import_for_node(s, i, name, scales, n, bits, err);
        if (st != RD_OK)
            return st;
        found++;
    }
    if (found)
        return RD_OK;
    if (v >= 0)
        return rd_errorf(err, RD_E_NOTFOUND, "%s: '%s' is not the weight of an int8 Conv, ConvTranspose, Gemm or MatMul",
                         s->m->path, name);
    rd_sim_tensor t;
    return rd_sim_tensor_get(s, name, &t, err); /* the closest names */
}
