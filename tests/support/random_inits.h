/* random_inits.h: float32 initializers of random values added to a model being built (tests only). */
#ifndef RD_TEST_RANDOM_INITS_H
#define RD_TEST_RANDOM_INITS_H

#include "rknn_diag/simulator.h"

#include <CUnit/CUnit.h>
#include <stddef.h>

/** One initializer: its name, shape and the amplitude of its values (amp * rnd(), rnd in [-1, 1)). */
typedef struct rd_test_init {
    const char *name;
    int rank;
    int64_t dims[4];
    float amp;
} rd_test_init;

/** Adds the n initializers to b in order, drawing their values from rnd in that order. */
static inline void rd_test_add_random_inits(rd_onnx_builder *b, const rd_test_init *inits, size_t n, float (*rnd)(void))
{
    for (size_t k = 0; k < n; k++) {
        rd_tensor t;
        CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, inits[k].rank, inits[k].dims, NULL), RD_OK);
        for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
            ((float *)t.data)[i] = inits[k].amp * rnd();
        CU_ASSERT_EQUAL(rd_onnx_add_initializer(b, inits[k].name, &t, RD_ONNX_RAW), RD_OK);
        rd_tensor_fini(&t);
    }
}

#endif
