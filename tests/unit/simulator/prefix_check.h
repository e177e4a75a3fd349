/*
 * prefix_check.h: the oracle of rd_sim_run_prefix: a run resumed from a recording must give the same bits
 * (outputs and layer stats) as rd_sim_run with the same configuration. Shared by test_sim_prefix.c and
 * tests/e2e/test_sim_prefix_shared.c (the real models).
 */
#ifndef RD_TEST_PREFIX_CHECK_H
#define RD_TEST_PREFIX_CHECK_H

#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The tensors whose precision may change: materialised, produced by a node, not fused away. */
static size_t prefix_candidates(rd_sim *s, const char ***out)
{
    const rd_model *m = rd_sim_model(s);
    size_t nv = rd_model_value_count(m), n = 0;
    const char **names = calloc(nv + 1, sizeof *names);
    CU_ASSERT_PTR_NOT_NULL_FATAL(names);
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        rd_model_value(m, v, &vi);
        rd_sim_tensor t;
        if (vi.producer < 0 || rd_sim_tensor_get(s, vi.name, &t, NULL) != RD_OK || !t.materialized || t.fused_into >= 0)
            continue;
        names[n++] = vi.name;
    }
    *out = names;
    return n;
}

/* A deterministic generator (xorshift), so a failure replays. */
static uint32_t prefix_rand(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* Every candidate int8, then about one in `one_in` of them float16. */
static void prefix_random_set(rd_sim *s, const char **names, size_t n, uint32_t *seed, uint32_t one_in)
{
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(rd_sim_set_precision(s, names[i], RD_PREC_INT8, NULL), RD_OK);
    for (size_t i = 0; i < n; i++)
        if (prefix_rand(seed) % one_in == 0)
            CU_ASSERT_EQUAL(rd_sim_set_precision(s, names[i], RD_PREC_FP16, NULL), RD_OK);
}

static rd_sim_layer_stats *prefix_stats_copy(const rd_sim *s)
{
    size_t nv = rd_model_value_count(rd_sim_model(s));
    rd_sim_layer_stats *st = calloc(nv + 1, sizeof *st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    for (size_t v = 0; v < nv; v++)
        rd_sim_layer_stats_get(s, (int)v, &st[v]);
    return st;
}

static bool prefix_same_bits(const rd_tensor *a, const rd_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || rd_tensor_nbytes(a) != rd_tensor_nbytes(b))
        return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return false;
    return rd_tensor_nbytes(a) == 0 || memcmp(a->data, b->data, rd_tensor_nbytes(a)) == 0;
}

/*
 * Runs s on the inputs through p (in mode) and with rd_sim_run, and asserts both give the same
 * outputs and stats. Returns how many nodes the prefix run took from the recording.
 */
static uint64_t prefix_check_run(rd_sim *s, rd_sim_prefix *p, rd_prefix_mode mode, const rd_tensor *in, size_t n_in,
                                 int threads)
{
    const rd_model *m = rd_sim_model(s);
    size_t n_out = rd_model_output_count(m), nv = rd_model_value_count(m);
    rd_tensor *a = calloc(n_out + 1, sizeof *a), *b = calloc(n_out + 1, sizeof *b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    rd_run_options ro = {.threads = threads};
    rd_error err;
    rd_sim_prefix_stats before, after;
    rd_sim_prefix_stats_get(p, &before);
    rd_status st = rd_sim_run_prefix(s, p, mode, in, n_in, &ro, a, n_out, &err);
    if (st != RD_OK)
        fprintf(stderr, "prefix run: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    rd_sim_prefix_stats_get(p, &after);
    rd_sim_layer_stats *sa = prefix_stats_copy(s);
    CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, in, n_in, &ro, b, n_out, &err), RD_OK); /* does not touch p */
    rd_sim_layer_stats *sb = prefix_stats_copy(s);
    for (size_t o = 0; o < n_out; o++) {
        CU_ASSERT(prefix_same_bits(&a[o], &b[o]));
        rd_tensor_fini(&a[o]);
        rd_tensor_fini(&b[o]);
    }
    size_t stats_differ = 0;
    for (size_t v = 0; v < nv; v++)
        stats_differ += memcmp(&sa[v], &sb[v], sizeof sa[v]) != 0;
    CU_ASSERT_EQUAL(stats_differ, 0);
    free(sa);
    free(sb);
    free(a);
    free(b);
    CU_ASSERT_EQUAL(after.runs, before.runs + 1);
    return after.nodes_reused - before.nodes_reused;
}

#endif
