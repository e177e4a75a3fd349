/*
 * gap_conv.h: GlobalAveragePool as RKNN's NPU computes it once the compiler lowered it to depthwise
 * convolutions (convert_global_avgpool_to_conv, ../shared/docs/rknn-compiler.md section 1; level 3,
 * docs/numerics.md). Graph-free: planes of h x w values in, one value per plane out.
 *
 * The plan: one conv whose kernel is the whole map [log: RV1106 MobileNetV1, weight (1,C,7,7)], or, for a
 * map above 7 in a dimension, two convs: a first kernel of the largest divisor in 2..7 of each dimension
 * (stride = kernel), then the rest (a 2.x FP16 model's "_2conv_0" 7x7 then 5x5 [log]). Where that rule
 * comes from one layer table only, it is our guess, and so is the fallback (one conv) for a dimension with
 * no such divisor.
 */
#ifndef RD_KERNELS_GAP_CONV_H
#define RD_KERNELS_GAP_CONV_H

#include <stdint.h>

#define GAP_CONV_MAX_KERNEL 7

typedef struct gap_plan {
    int n_stages;         /* 1 or 2 */
    int64_t kh[2], kw[2]; /* kernel (= stride) of each stage */
} gap_plan;

/** The lowering of an h x w map (h, w >= 1). */
void gap_plan_make(int64_t h, int64_t w, gap_plan *p);

/**
 * The integer conv stages on centred codes (q - zp as doubles): x holds planes of h*w codes; each stage
 * sums its windows exactly, multiplies by the stage's weight code w_code[s] and scales back,
 * (float)(sum * w_code * in_scale * w_scale[s]) in double as the integer layers do (quant.h). Between two
 * stages the intermediate is requantized to requant (a function of the float value giving its centred
 * code). mid holds (h / kh[0]) * (w / kw[0]) doubles. y receives planes floats.
 */
typedef double (*gap_requant_fn)(float v, const void *user);
void gap_conv_int(const double *x, int64_t planes, int64_t h, int64_t w, const gap_plan *p, const double *w_code,
                  const float *w_scale, float in_scale, gap_requant_fn requant, const void *user, double *mid,
                  float *y);

#endif
