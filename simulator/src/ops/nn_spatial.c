/* nn_spatial.c: window attributes and output sizes for Conv, ConvTranspose and the pools. */
#include "nn_spatial.h"

#include <stdio.h>

/* Copies an INTS attribute into dst (max entries), checking each value >= min. */
static rd_status read_ints(const sim_node *n, const char *name, int64_t *dst, int max, int64_t min, int *count,
                           rd_error *err)
{
    size_t cnt = 0;
    const int64_t *v = sim_attr_ints(n, name, &cnt);
    if (cnt > (size_t)max)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): attribute %s has %zu values, at most %d supported", n->name,
                         n->op_type, name, cnt, max);
    for (size_t i = 0; i < cnt; i++) {
        if (v[i] < min || v[i] > ((int64_t)1 << 40))
            return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): attribute %s[%zu] = %lld is out of range", n->name,
                             n->op_type, name, i, (long long)v[i]);
        dst[i] = v[i];
    }
    *count = (int)cnt;
    return RD_OK;
}

rd_status nn_spatial_parse(const sim_node *n, nn_spatial *s, rd_error *err)
{
    memset(s, 0, sizeof *s);
    const char *ap = sim_attr_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0 || ap[0] == '\0')
        s->auto_pad = NN_PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        s->auto_pad = NN_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        s->auto_pad = NN_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0)
        s->auto_pad = NN_PAD_VALID;
    else
        return rd_errorf(err, RD_E_PARSE,
                         "node '%s' (%s): auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", n->name,
                         n->op_type, ap);
    rd_status st = read_ints(n, "kernel_shape", s->kernel, CONV_MAX_SP, 1, &s->n_kernel, err);
    if (st == RD_OK)
        st = read_ints(n, "strides", s->strides, CONV_MAX_SP, 1, &s->n_strides, err);
    if (st == RD_OK)
        st = read_ints(n, "dilations", s->dil, CONV_MAX_SP, 1, &s->n_dil, err);
    if (st == RD_OK)
        st = read_ints(n, "pads", s->pads, 2 * CONV_MAX_SP, 0, &s->n_pads, err);
    if (st == RD_OK && s->n_pads % 2)
        return rd_errorf(err, RD_E_PARSE, "node '%s' (%s): pads has %d values, expected an even count", n->name,
                         n->op_type, s->n_pads);
    return st;
}

rd_status nn_check_len(const sim_op_ctx *ctx, const char *attr, int len, int nsp, rd_error *err)
{
    if (len != 0 && len != nsp)
        return rd_errorf(err, RD_E_INVAL, "node '%s' (%s): attribute %s has %d values for %d spatial dims",
                         ctx->node->name, ctx->node->op_type, attr, len, nsp);
    return RD_OK;
}

rd_status nn_window_geom(const sim_op_ctx *ctx, const nn_spatial *s, int nsp, const int64_t *in, const int64_t *k,
                         bool ceil_mode, conv_geom *g, rd_error *err)
{
    if (nsp < 1 || nsp > CONV_MAX_SP)
        return rd_errorf(err, RD_E_UNSUPPORTED, "node '%s' (%s): %d spatial dims (1..%d supported)", ctx->node->name,
                         ctx->node->op_type, nsp, CONV_MAX_SP);
    rd_status st = nn_check_len(ctx, "strides", s->n_strides, nsp, err);
    if (st == RD_OK)
        st = nn_check_len(ctx, "dilations", s->n_dil, nsp, err);
    if (st == RD_OK && s->n_pads != 0 && s->n_pads != 2 * nsp)
        st = rd_errorf(err, RD_E_INVAL, "node '%s' (%s): pads has %d values for %d spatial dims", ctx->node->name,
                       ctx->node->op_type, s->n_pads, nsp);
    if (st != RD_OK)
        return st;
    g->nsp = nsp;
    for (int d = 0; d < nsp; d++) {
        g->in[d] = in[d];
        g->k[d] = k[d];
        g->stride[d] = s->n_strides ? s->strides[d] : 1;
        g->dil[d] = s->n_dil ? s->dil[d] : 1;
        const int64_t ek = (k[d] - 1) * g->dil[d] + 1; /* effective kernel extent */
        int64_t pb = 0, pe = 0, out;
        switch (s->auto_pad) {
        case NN_PAD_SAME_UPPER:
        case NN_PAD_SAME_LOWER: {
            out = (in[d] + g->stride[d] - 1) / g->stride[d];
            int64_t total = (out - 1) * g->stride[d] + ek - in[d];
            if (total < 0)
                total = 0;
            pb = s->auto_pad == NN_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            pe = total - pb;
            break;
        }
        case NN_PAD_VALID:
            out = in[d] >= ek ? (in[d] - ek) / g->stride[d] + 1 : 0;
            break;
        default:
            pb = s->n_pads ? s->pads[d] : 0;
            pe = s->n_pads ? s->pads[nsp + d] : 0;
            if (in[d] + pb + pe < ek) {
                out = 0;
            } else if (ceil_mode) {
                out = (in[d] + pb + pe - ek + g->stride[d] - 1) / g->stride[d] + 1;
                if ((out - 1) * g->stride[d] >= in[d] + pb)
                    out--; /* the last window must start inside the input or its begin pad */
            } else {
                out = (in[d] + pb + pe - ek) / g->stride[d] + 1;
            }
            break;
        }
        if (out < 1 && in[d] > 0)
            return rd_errorf(err, RD_E_INVAL,
                             "node '%s' (%s): spatial dim %d: input %lld with pads %lld+%lld is smaller than the "
                             "window %lld",
                             ctx->node->name, ctx->node->op_type, d, (long long)in[d], (long long)pb, (long long)pe,
                             (long long)ek);
        g->out[d] = out < 0 ? 0 : out;
        g->pad[d] = pb;
        g->pad_end[d] = pe;
    }
    return RD_OK;
}
