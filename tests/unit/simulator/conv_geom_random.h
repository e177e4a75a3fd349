/*
 * conv_geom_random.h: what the float convolution tests (test_nn_ops.c, test_kernels_parallel.c) share to draw
 * random geometries: one spatial dimension's kernel, stride, dilation and pads, and the sizes that fit them.
 */
#ifndef RD_TEST_CONV_GEOM_RANDOM_H
#define RD_TEST_CONV_GEOM_RANDOM_H

#include "kernels/conv_geom.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * Draws dimension d's kernel (1..k_max), stride (1..3), dilation (1..2) and pads (0..2 each) with pick, in that
 * order (pointwise: 1, 1, 1, 0, 0, nothing drawn); then grows g->in[d] until the dilated kernel fits the padded
 * input and sets g->out[d].
 */
static inline void conv_geom_random_dim(conv_geom *g, int d, bool pointwise, int64_t k_max,
                                        int64_t (*pick)(int64_t lo, int64_t hi))
{
    g->k[d] = pointwise ? 1 : pick(1, k_max);
    g->stride[d] = pointwise ? 1 : pick(1, 3);
    g->dil[d] = pointwise ? 1 : pick(1, 2);
    g->pad[d] = pointwise ? 0 : pick(0, 2);
    g->pad_end[d] = pointwise ? 0 : pick(0, 2);
    const int64_t ek = (g->k[d] - 1) * g->dil[d] + 1;
    while (g->in[d] + g->pad[d] + g->pad_end[d] < ek)
        g->in[d]++;
    g->out[d] = (g->in[d] + g->pad[d] + g->pad_end[d] - ek) / g->stride[d] + 1;
}

#endif
