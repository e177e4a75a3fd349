/* calibrated_sim.h: a simulation created, and an int8 one calibrated on one input, as the suites start from. */
#ifndef RD_TEST_CALIBRATED_SIM_H
#define RD_TEST_CALIBRATED_SIM_H

#include "rd_test.h"
#include "rknn_diag/simulator.h"

/** An rd_sample_fn handing out user (an rd_tensor) as the only input of every sample. */
static inline rd_status rd_test_one_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)k;
    return rd_tensor_clone(&inputs[0], user, err);
}

/** A simulation of m at precision with optimization level 3 (every pass, as the suites run it); asserts it is
    created. */
static inline rd_sim *rd_test_sim(const rd_model *m, rd_prec precision)
{
    rd_error err;
    rd_sim *s = NULL;
    rd_sim_options so = {.precision = precision, .optimization_level = 3};
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    return s;
}

/** An int8 simulation of m (optimization level 3) calibrated on input alone, on one thread; asserts it works. */
static inline rd_sim *rd_test_int8_sim(const rd_model *m, const rd_tensor *input)
{
    rd_error err;
    rd_sim *s = rd_test_sim(m, RD_PREC_INT8);
    rd_calib_options co = {.threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, rd_test_one_sample, (void *)input, 1, &co, &err), RD_OK);
    return s;
}

#endif
