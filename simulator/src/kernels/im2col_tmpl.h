/*
 * im2col_tmpl.h: im2col (Conv) and col2im (ConvTranspose) over a tile of positions, for one element
 * type. Include with IM2COL_T (element type), IM2COL_NAME and COL2IM_NAME defined; each inclusion
 * defines two static functions. The float kernels use it today; the integer conv of the INT8 simulator
 * includes it again with int8_t and its zero point as the pad value.
 *
 * Tiles are ranges of flattened positions [p0, p0 + np) so that scratch stays bounded whatever the
 * image size (conv_tile_cols). Rows of the column matrix are (channel, kernel taps) in W's order.
 * The inner loop runs over the last spatial dim: contiguous copies when its stride is 1.
 */
#if !defined(IM2COL_T) || !defined(IM2COL_NAME) || !defined(COL2IM_NAME)
#error "define IM2COL_T, IM2COL_NAME and COL2IM_NAME before including im2col_tmpl.h"
#endif

/*
 * col[r * np + j] for rows r = (c < cg, tap) and output positions p0 + j (j < np) of the group input
 * xg [cg, in...]; taps outside the input read pad_value.
 */
static void IM2COL_NAME(const conv_geom *g, const IM2COL_T *xg, int64_t cg, int64_t p0, int64_t np, IM2COL_T pad_value,
                        IM2COL_T *col)
{
    const int nsp = g->nsp, last = nsp - 1;
    const int64_t in_plane = conv_prod(g->in, nsp), ksz = conv_prod(g->k, nsp);
    const int64_t in_l = g->in[last], out_l = g->out[last], s_l = g->stride[last];
    int64_t o0[CONV_MAX_SP];
    int64_t rem = p0;
    for (int d = last; d >= 0; d--) {
        o0[d] = rem % g->out[d];
        rem /= g->out[d];
    }
    int64_t k[CONV_MAX_SP] = {0};
    for (int64_t kp = 0; kp < ksz; kp++) {
        const int64_t koff = k[last] * g->dil[last] - g->pad[last];
        /* output positions o of the last dim whose input o*s + koff lies in [0, in_l) */
        int64_t lo = koff >= 0 ? 0 : (-koff + s_l - 1) / s_l;
        int64_t hi = in_l - koff <= 0 ? 0 : (in_l - koff - 1) / s_l + 1;
        if (hi > out_l)
            hi = out_l;
        if (lo > hi)
            lo = hi;
        for (int64_t c = 0; c < cg; c++) {
            const IM2COL_T *xc = xg + c * in_plane;
            IM2COL_T *dst = col + (c * ksz + kp) * np;
            int64_t o[CONV_MAX_SP];
            for (int d = 0; d < nsp; d++)
                o[d] = o0[d];
            for (int64_t j = 0; j < np;) {
                int64_t seg = out_l - o[last];
                if (seg > np - j)
                    seg = np - j;
                int64_t off = 0;
                bool inside = true;
                for (int d = 0; d < last; d++) {
                    int64_t i = o[d] * g->stride[d] + k[d] * g->dil[d] - g->pad[d];
                    if (i < 0 || i >= g->in[d]) {
                        inside = false;
                        break;
                    }
                    off = off * g->in[d] + i;
                }
                IM2COL_T *dd = dst + j;
                int64_t t = o[last];
                const int64_t e = t + seg;
                if (inside) {
                    const IM2COL_T *row = xc + off * in_l;
                    for (; t < lo && t < e; t++)
                        *dd++ = pad_value;
                    const int64_t ve = hi < e ? hi : e;
                    if (s_l == 1) {
                        for (; t < ve; t++)
                            *dd++ = row[t + koff];
                    } else {
                        for (; t < ve; t++)
                            *dd++ = row[t * s_l + koff];
                    }
                }
                for (; t < e; t++)
                    *dd++ = pad_value;
                j += seg;
                o[last] += seg;
                if (o[last] == out_l) {
                    o[last] = 0;
                    for (int d = last - 1; d >= 0; d--) {
                        if (++o[d] < g->out[d])
                            break;
                        o[d] = 0;
                    }
                }
            }
        }
        for (int d = last; d >= 0; d--) {
            if (++k[d] < g->k[d])
                break;
            k[d] = 0;
        }
    }
}

/*
 * Transposed convolution scatter: yg[m, o] += col[(m, tap) * np + j] for input positions p0 + j
 * (j < np), m < mg, where o = i * stride + tap * dilation - pad lies inside the output. Deterministic:
 * a fixed order (m, tap, position).
 */
static void COL2IM_NAME(const conv_geom *g, const IM2COL_T *col, int64_t mg, int64_t p0, int64_t np, IM2COL_T *yg)
{
    const int nsp = g->nsp, last = nsp - 1;
    const int64_t out_plane = conv_prod(g->out, nsp), ksz = conv_prod(g->k, nsp);
    const int64_t in_l = g->in[last], out_l = g->out[last], s_l = g->stride[last];
    int64_t i0[CONV_MAX_SP];
    int64_t rem = p0;
    for (int d = last; d >= 0; d--) {
        i0[d] = rem % g->in[d];
        rem /= g->in[d];
    }
    int64_t k[CONV_MAX_SP] = {0};
    for (int64_t kp = 0; kp < ksz; kp++) {
        const int64_t koff = k[last] * g->dil[last] - g->pad[last];
        /* input positions i of the last dim whose output i*s + koff lies in [0, out_l) */
        int64_t lo = koff >= 0 ? 0 : (-koff + s_l - 1) / s_l;
        int64_t hi = out_l - koff <= 0 ? 0 : (out_l - koff - 1) / s_l + 1;
        if (hi > in_l)
            hi = in_l;
        if (lo > hi)
            lo = hi;
        for (int64_t m = 0; m < mg; m++) {
            const IM2COL_T *src = col + (m * ksz + kp) * np;
            IM2COL_T *ym = yg + m * out_plane;
            int64_t i[CONV_MAX_SP];
            for (int d = 0; d < nsp; d++)
                i[d] = i0[d];
            for (int64_t j = 0; j < np;) {
                int64_t seg = in_l - i[last];
                if (seg > np - j)
                    seg = np - j;
                int64_t off = 0;
                bool inside = true;
                for (int d = 0; d < last; d++) {
                    int64_t o = i[d] * g->stride[d] + k[d] * g->dil[d] - g->pad[d];
                    if (o < 0 || o >= g->out[d]) {
                        inside = false;
                        break;
                    }
                    off = off * g->out[d] + o;
                }
                if (inside) {
                    IM2COL_T *row = ym + off * out_l;
                    const int64_t a = i[last], e = a + seg;
                    const int64_t vs = lo > a ? lo : a, ve = hi < e ? hi : e;
                    for (int64_t t = vs; t < ve; t++)
                        row[t * s_l + koff] += src[j + t - a];
                }
                j += seg;
                i[last] += seg;
                if (i[last] == in_l) {
                    i[last] = 0;
                    for (int d = last - 1; d >= 0; d--) {
                        if (++i[d] < g->in[d])
                            break;
                        i[d] = 0;
                    }
                }
            }
        }
        for (int d = last; d >= 0; d--) {
            if (++k[d] < g->k[d])
                break;
            k[d] = 0;
        }
    }
}
