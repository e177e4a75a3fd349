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
    const bool wide = sim_node_precision(s, node) == RD_PREC_INT16;
    if (!(wide ? d->q16_ready : d->q8_ready)) {
        rd_status st = wide ? sim_q16_prepare_weights(s, node, err) : sim_q8_prepare_weights(s, node, err);
        if (st != RD_OK)
            return st;
    }
    bool force_pt;
    sim_q8_weight_axis(n, sim_const_weight(s, node), &out->axis, &out->group, &force_pt);
    out->value = n->in[n->def->weight_in];
    if (wide) {
        out->n_scale = d->n_w_scale16;
        out->scale = d->w_scale16;
        out->bits = sim_weight_bits(s);
        out->q16 = d->w_q16;
    } else {
        out->n_scale = d->n_w_scale;
        out->scale = d->w_scale;
        out->zero_point = d->w_zp;
        out->q = d->w_q;
        out->bits = 8;
    }
    return RD_OK;
}

/* What one import gives a node: scales of `bits`-bit weights, and for int8 ones maybe zero points and codes. */
typedef struct weight_import {
    const float *scales;
    const int32_t *zps;  /* NULL: symmetric */
    const int8_t *codes; /* NULL: quantized from the float weight */
    size_t n_codes;
    int n, bits;
} weight_import;

static void *copy_of(const void *src, size_t n, size_t size, bool *failed)
{
    if (!src)
        return NULL;
    void *p = sim_malloc_array(n, size);
    if (p)
        memcpy(p, src, n * size);
    else
        *failed = true;
    return p;
}

/* Stores an import for one node after checking it against its weight; quantized again on next use. */
static rd_status import_for_node(rd_sim *s, int node, const char *name, const weight_import *im, rd_error *err)
{
    const sim_node *nd = &s->m->nodes[node];
    const rd_tensor *w = sim_const_weight(s, node);
    int axis;
    int64_t group;
    bool force_pt;
    sim_q8_weight_axis(nd, w, &axis, &group, &force_pt);
    /* a trial quantization checks the count and every scale and zero point, with the quantizer's message */
    rd_status st;
    if (im->zps) {
        int8_t *q = NULL;
        st = sim_quant_weights_i8_scaled_zp(w, axis, group, im->scales, im->zps, im->n, &q, NULL, err);
        free(q);
    } else {
        int16_t *q = NULL;
        st = sim_quant_weights_wide_scaled(w, axis, group, im->bits, im->scales, im->n, &q, NULL, err);
        free(q);
    }
    if (st == RD_OK && im->codes && im->n_codes != (size_t)rd_tensor_numel(w))
        st = rd_errorf(err, RD_E_INVAL, "%zu codes given for %lld weights", im->n_codes, (long long)rd_tensor_numel(w));
    if (st != RD_OK)
        return rd_error_prefix(err, "weights '%s' of node '%s'", name, nd->name);
    bool failed = false;
    float *scales = copy_of(im->scales, (size_t)im->n, sizeof *scales, &failed);
    int32_t *zps = copy_of(im->zps, (size_t)im->n, sizeof *zps, &failed);
    int8_t *codes = copy_of(im->codes, im->n_codes, 1, &failed);
    if (failed) {
        free(scales);
        free(zps);
        free(codes);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    sim_node_data *d = &s->nodes[node];
    free(d->imported_scale);
    free(d->imported_zp);
    free(d->imported_codes);
    d->imported_scale = scales;
    d->imported_zp = zps;
    d->imported_codes = codes;
    d->n_imported_scale = im->n;
    d->imported_bits = im->bits;
    d->q8_ready = false;
    d->q16_ready = false;
    s->epoch++;
    return RD_OK;
}

/* Every integer layer named name or reading the weight named name takes the import. */
static rd_status import_weights(rd_sim *s, const char *name, const weight_import *im, rd_error *err)
{
    int v = sim_model_find(s->m, name);
    int found = 0;
    for (int i = 0; i < s->m->n_nodes; i++) {
        const sim_node *nd = &s->m->nodes[i];
        bool named = strcmp(nd->name, name) == 0 && nd->name[0];
        bool reads = v >= 0 && nd->def && nd->def->weight_in > 0 && nd->n_in > nd->def->weight_in &&
                     nd->in[nd->def->weight_in] == v;
        if (!(named || reads) || !has_q8_weights(s, i))
            continue;
        rd_status st = import_for_node(s, i, name, im, err);
        if (st != RD_OK)
            return st;
        found++;
    }
    if (found)
        return RD_OK;
    if (v >= 0)
        return rd_errorf(err, RD_E_NOTFOUND,
                         "%s: '%s' is not the weight of an int8 Conv, ConvTranspose, Gemm or MatMul", s->m->path, name);
    rd_sim_tensor t;
    return rd_sim_tensor_get(s, name, &t, err); /* the closest names */
}

rd_status rd_sim_set_weight_quant(rd_sim *s, const char *name, const float *scales, const int32_t *zero_points, int n,
                                  const int8_t *codes, size_t n_codes, rd_error *err)
{
    if (n < 1 || !scales || !zero_points)
        return rd_errorf(err, RD_E_INVAL, "weights '%s': no scales and zero points given", name);
    const weight_import im = {
        .scales = scales, .zps = zero_points, .codes = codes, .n_codes = n_codes, .n = n, .bits = 8};
    return import_weights(s, name, &im, err);
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
    const weight_import im = {.scales = scales, .n = n, .bits = bits};
    return import_weights(s, name, &im, err);
}
