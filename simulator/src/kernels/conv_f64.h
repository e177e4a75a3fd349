/*
 * conv_f64.h: Conv and ConvTranspose in double on OpenBLAS dgemm, for the int16 layers of the simulator.
 *
 * The int16 layers feed integer-valued doubles (centred codes and weight codes), for which every product
 * and partial sum is exact (quant.h, SIM_ACC16_MAX_K): the result is the exact integer sum whatever the
 * blocking or summation order of dgemm, so the work splits over the run's threads in any way: tasks of
 * (batch, group, positions) for Conv, each a dgemm (pointwise) or an im2col tile (double, pad value 0 = the
 * zero point once codes are centred) and a dgemm; ConvTranspose per block of output channels, dgemm into a
 * column tile, then col2im. Scratch: plan->scratch bytes per worker (sim_pool_width).
 */
#ifndef RD_KERNELS_CONV_F64_H
#define RD_KERNELS_CONV_F64_H

#include "conv_f32.h"

/** Strategy and scratch bytes for Conv with geometry g (double elements). */
void conv_plan_f64(const conv_geom *g, conv_plan *out);
/** Y = conv(X, W) + B (b may be NULL) on pool's threads; scratch has plan->scratch bytes per worker. */
void conv_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b, double *y,
              double *scratch, struct rd_pool *pool);

/** Strategy and scratch bytes for ConvTranspose with geometry g (double elements). */
void conv_transpose_plan_f64(const conv_geom *g, conv_plan *out);
/** Y = conv_transpose(X, W) + B (b may be NULL) on pool's threads; scratch has plan->scratch bytes per worker. */
void conv_transpose_f64(const conv_geom *g, const conv_plan *plan, const double *x, const double *w, const double *b,
                        double *y, double *scratch, struct rd_pool *pool);

#endif
