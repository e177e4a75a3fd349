/* tensor_check.h: comparisons and measures of tensors that tests (and fuzz oracles) assert on. */
#ifndef RD_TEST_TENSOR_CHECK_H
#define RD_TEST_TENSOR_CHECK_H

#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdbool.h>

/** True when a and b have the same dtype and the same shape. */
static inline bool rd_test_same_shape(const rd_tensor *a, const rd_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/** The cosine similarity of two float32 tensors of the same size, accumulated in double. */
static inline double rd_test_cosine(const rd_tensor *a, const rd_tensor *b)
{
    double d = 0, x = 0, y = 0;
    for (int64_t i = 0; i < rd_tensor_numel(a); i++) {
        double p = ((const float *)a->data)[i], q = ((const float *)b->data)[i];
        d += p * q;
        x += p * p;
        y += q * q;
    }
    return d / sqrt(x * y);
}

#endif
