/* test_sim_prefix_shared.c: prefix reuse on ultraface_rfb320 gives the bits of full runs (random float16 sets). */
#include "prefix_check.h"

#include <stdio.h>

typedef struct samples {
    rd_tensor t[2];
} samples;

static rd_status sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    const samples *s = user;
    return rd_tensor_clone(&inputs[0], &s->t[k % 2], err);
}

static void test_ultraface(void)
{
    const char *shared = rd_test_shared_dir();
    char path[4200];
    rd_error err;
    samples in;
    const char *files[2] = {"astronaut.npy", "chelsea.npy"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/models/ultraface_rfb320/inputs/%s", shared, files[k]);
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &in.t[k], &err), RD_OK);
    }
    snprintf(path, sizeof path, "%s/models/ultraface_rfb320/model.onnx", shared);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    rd_sim_options so = {.precision = RD_PREC_INT8, .optimization_level = 3};
    rd_sim *s = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    rd_calib_options co = {.method = RD_CALIB_NORMAL, .threads = 2};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, sample, &in, 2, &co, &err), RD_OK);
    const char **names;
    size_t n = prefix_candidates(s, &names);
    CU_ASSERT(n > 50);
    rd_sim_prefix *p = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_sim_prefix_create((size_t)256 << 20, &p, &err), RD_OK);
    uint32_t seed = 2026;
    prefix_check_run(s, p, RD_PREFIX_RECORD, &in.t[0], 1, 2);
    rd_sim_prefix_stats ps;
    rd_sim_prefix_stats_get(p, &ps);
    uint64_t full = ps.nodes_computed;
    CU_ASSERT_EQUAL((size_t)ps.nodes_recorded, rd_model_node_count(rd_sim_model(s))); /* folded nodes included */
    fprintf(stderr, "ultraface: %zu candidates, %llu nodes, recording %.1f MB\n", n, (unsigned long long)full,
            (double)ps.bytes / 1e6);
    uint64_t reused = 0;
    /* a baseline with a few float16 tensors, then candidates one more or one less, then wholly random sets */
    for (int k = 0; k < 6; k++) {
        if (k == 3) {
            prefix_random_set(s, names, n, &seed, 20);
            prefix_check_run(s, p, RD_PREFIX_RECORD, &in.t[0], 1, 2);
        }
        const char *flip = names[prefix_rand(&seed) % n];
        rd_sim_tensor t;
        CU_ASSERT_EQUAL(rd_sim_tensor_get(s, flip, &t, &err), RD_OK);
        rd_prec other = t.precision == RD_PREC_FP16 ? RD_PREC_INT8 : RD_PREC_FP16;
        CU_ASSERT_EQUAL(rd_sim_set_precision(s, flip, other, &err), RD_OK);
        reused += prefix_check_run(s, p, RD_PREFIX_USE, &in.t[0], 1, 2);
        CU_ASSERT_EQUAL(rd_sim_set_precision(s, flip, t.precision, &err), RD_OK);
    }
    for (int k = 0; k < 3; k++) {
        prefix_random_set(s, names, n, &seed, 8);
        reused += prefix_check_run(s, p, RD_PREFIX_USE, &in.t[0], 1, 2);
    }
    /* a cap of 4 MB: the first nodes only */
    rd_sim_prefix *small = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_sim_prefix_create((size_t)4 << 20, &small, &err), RD_OK);
    prefix_check_run(s, small, RD_PREFIX_RECORD, &in.t[0], 1, 2);
    rd_sim_prefix_stats_get(small, &ps);
    CU_ASSERT(ps.bytes <= (size_t)4 << 20);
    CU_ASSERT(ps.nodes_recorded > 0 && (uint64_t)ps.nodes_recorded < full);
    CU_ASSERT_EQUAL(rd_sim_set_precision(s, names[n - 1], RD_PREC_FP16, &err), RD_OK);
    CU_ASSERT(prefix_check_run(s, small, RD_PREFIX_USE, &in.t[0], 1, 2) > 0);
    rd_sim_prefix_stats_get(p, &ps);
    fprintf(stderr, "ultraface: %llu runs, %llu nodes computed, %llu reused\n", (unsigned long long)ps.runs,
            (unsigned long long)ps.nodes_computed, (unsigned long long)ps.nodes_reused);
    CU_ASSERT(reused > 0);
    rd_sim_prefix_destroy(small);
    rd_sim_prefix_destroy(p);
    free(names);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    rd_tensor_fini(&in.t[0]);
    rd_tensor_fini(&in.t[1]);
}

RD_TEST_REGISTER(register_sim_prefix_shared)
{
    RD_SUITE("sim_prefix_shared", {"ultraface_rfb320: random float16 sets", test_ultraface});
}
