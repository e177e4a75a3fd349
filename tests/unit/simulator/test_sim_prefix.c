/* test_sim_prefix.c: runs resumed from a recording (rd_sim_run_prefix) give rd_sim_run's bits. */
#include "calibrated_sim.h"
#include "onnx_test_util.h"
#include "prefix_check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>

static void add_conv(rd_onnx_builder *b, const char *name, const char *in, const char *out, int cin, int cout,
                     float phase)
{
    rd_tensor w, bias;
    rd_tensor_alloc(&w, RD_DT_F32, 4, (const int64_t[]){cout, cin, 3, 3}, NULL);
    rd_tensor_alloc(&bias, RD_DT_F32, 1, (const int64_t[]){cout}, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(&w); i++)
        ((float *)w.data)[i] = 0.3f * sinf(phase + 0.71f * (float)i);
    for (int i = 0; i < cout; i++)
        ((float *)bias.data)[i] = 0.05f * (float)(i - 1);
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(bn, sizeof bn, "%s_b", name);
    rd_onnx_add_initializer(b, wn, &w, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, bn, &bias, RD_ONNX_RAW);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", name, (const char *const[]){in, wn, bn}, 3, (const char *const[]){out}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_tensor_fini(&w);
    rd_tensor_fini(&bias);
}

/*
 * x -> conv1 -> relu1 -> conv2 -> c2 ; relu1 + c2 -> sum -> conv3 -> y1 (output)
 *                                      c2 -> sigmoid -> y2 (output, done early)
 */
static rd_model *build_branchy(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    add_conv(b, "conv1", "x", "c1", 2, 4, 0.1f);
    rd_onnx_add_node(b, "Relu", "relu1", (const char *const[]){"c1"}, 1, (const char *const[]){"r1"}, 1);
    add_conv(b, "conv2", "r1", "c2", 4, 4, 1.3f);
    rd_onnx_add_node(b, "Sigmoid", "sig", (const char *const[]){"c2"}, 1, (const char *const[]){"y2"}, 1);
    rd_onnx_add_node(b, "Add", "sum", (const char *const[]){"r1", "c2"}, 2, (const char *const[]){"a"}, 1);
    add_conv(b, "conv3", "a", "c3", 4, 3, 2.9f);
    rd_onnx_add_node(b, "Tanh", "tanh", (const char *const[]){"c3"}, 1, (const char *const[]){"y1"}, 1);
    rd_onnx_add_output(b, "y1", RD_DT_F32, -1, NULL, NULL);
    rd_onnx_add_output(b, "y2", RD_DT_F32, -1, NULL, NULL);
    rd_model *m = ot_model_load(b, "prefix_test.onnx");
    return m;
}

static void make_input(rd_tensor *x, float phase)
{
    rd_tensor_alloc(x, RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    for (int i = 0; i < 72; i++)
        ((float *)x->data)[i] = sinf(phase + 0.37f * (float)i) * 3.0f;
}

static rd_status sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)user;
    (void)err;
    make_input(&inputs[0], 0.5f * (float)k);
    return RD_OK;
}

/* The model, an int8 simulation calibrated on four samples, and its candidate tensors. */
static rd_sim *calibrated(rd_model **m, const char ***names, size_t *n)
{
    *m = build_branchy();
    CU_ASSERT_PTR_NOT_NULL_FATAL(*m);
    rd_sim *s = rd_test_sim(*m, RD_PREC_INT8);
    rd_error err;
    rd_calib_options co = {.method = RD_CALIB_NORMAL, .threads = 1};
    CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, sample, NULL, 4, &co, &err), RD_OK);
    *n = prefix_candidates(s, names);
    CU_ASSERT(*n >= 4);
    return s;
}

/* What the tests start from: the calibrated simulation and its candidate tensors, an input and a recording of
   64 MiB. */
typedef struct fixture {
    rd_model *m;
    rd_sim *s;
    const char **names;
    size_t n;
    rd_tensor x;
    rd_sim_prefix *p;
} fixture;

static void fixture_open(fixture *fx, float input_phase)
{
    fx->s = calibrated(&fx->m, &fx->names, &fx->n);
    make_input(&fx->x, input_phase);
    fx->p = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_prefix_create(64u << 20, &fx->p, &err), RD_OK);
}

static void fixture_close(fixture *fx)
{
    rd_sim_prefix_destroy(fx->p);
    rd_tensor_fini(&fx->x);
    free(fx->names);
    rd_sim_destroy(fx->s);
    rd_model_destroy(fx->m);
}

static void test_random_sets(void)
{
    fixture fx;
    fixture_open(&fx, 0.2f);
    rd_error err;
    uint32_t seed = 12345;
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1), 0); /* nothing recorded yet */
    rd_sim_prefix_stats ps;
    rd_sim_prefix_stats_get(fx.p, &ps);
    uint64_t full = ps.nodes_computed;
    CU_ASSERT(full >= 5);
    CU_ASSERT(ps.bytes > 0);
    uint64_t reused = 0;
    for (int k = 0; k < 40; k++) {
        prefix_random_set(fx.s, fx.names, fx.n, &seed, 3);
        reused += prefix_check_run(fx.s, fx.p, k % 4 == 3 ? RD_PREFIX_RECORD : RD_PREFIX_USE, &fx.x, 1, 1);
    }
    rd_sim_prefix_stats_get(fx.p, &ps);
    CU_ASSERT_EQUAL(ps.nodes_computed + ps.nodes_reused, full * 41);
    CU_ASSERT(reused > 0);
    /* the same configuration again: everything from the recording */
    prefix_random_set(fx.s, fx.names, fx.n, &seed, 2);
    prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), full);
    /* only the last candidate changed: only its producer on is computed */
    rd_sim_tensor t;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(fx.s, fx.names[fx.n - 1], &t, &err), RD_OK);
    CU_ASSERT_EQUAL(
        rd_sim_set_precision(fx.s, fx.names[fx.n - 1], t.precision == RD_PREC_FP16 ? RD_PREC_INT8 : RD_PREC_FP16, &err),
        RD_OK);
    CU_ASSERT(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1) >= full - 2);
    fixture_close(&fx);
}

/* Sets with int16 tensors (and their parameters changed) resume to the same bits as full runs. */
static void test_random_int16_sets(void)
{
    fixture fx;
    fixture_open(&fx, 0.7f);
    rd_error err;
    uint32_t seed = 777;
    prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
    uint64_t reused = 0;
    for (int k = 0; k < 30; k++) {
        for (size_t i = 0; i < fx.n; i++) {
            const uint32_t r = prefix_rand(&seed) % 4;
            const rd_prec pr = r == 0 ? RD_PREC_INT16 : r == 1 ? RD_PREC_FP16 : RD_PREC_INT8;
            CU_ASSERT_EQUAL(rd_sim_set_precision(fx.s, fx.names[i], pr, NULL), RD_OK);
        }
        if (k % 5 == 4) { /* new int16 parameters on one tensor: its readers and producer compute again */
            rd_sim_tensor t;
            const char *nm = fx.names[prefix_rand(&seed) % fx.n];
            CU_ASSERT_EQUAL(rd_sim_set_precision(fx.s, nm, RD_PREC_INT16, NULL), RD_OK);
            CU_ASSERT_EQUAL(rd_sim_tensor_get(fx.s, nm, &t, &err), RD_OK);
            CU_ASSERT_EQUAL(rd_sim_set_qparams16(fx.s, nm, t.scale * 1.5f, t.zero_point / 2, &err), RD_OK);
        }
        reused += prefix_check_run(fx.s, fx.p, k % 3 == 2 ? RD_PREFIX_RECORD : RD_PREFIX_USE, &fx.x, 1, 1);
    }
    CU_ASSERT(reused > 0);
    fixture_close(&fx);
}

/* Tentative runs: kept by a commit (the next run of the same set reuses everything), dropped otherwise. */
static void test_try_and_commit(void)
{
    fixture fx;
    fixture_open(&fx, 0.2f);
    rd_error err;
    CU_ASSERT_FALSE(rd_sim_prefix_commit(fx.p)); /* nothing run yet */
    /* a TRY without a recording records */
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_TRY, &fx.x, 1, 1), 0);
    CU_ASSERT_FALSE(rd_sim_prefix_commit(fx.p));
    rd_sim_prefix_stats ps;
    rd_sim_prefix_stats_get(fx.p, &ps);
    uint64_t full = ps.nodes_computed;
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), full);
    uint32_t seed = 99;
    for (int k = 0; k < 30; k++) {
        /* flip one or two candidates, try, keep every other one */
        for (int f = 0; f < 1 + k % 2; f++) {
            const char *flip = fx.names[prefix_rand(&seed) % fx.n];
            rd_sim_tensor t;
            CU_ASSERT_EQUAL(rd_sim_tensor_get(fx.s, flip, &t, &err), RD_OK);
            CU_ASSERT_EQUAL(
                rd_sim_set_precision(fx.s, flip, t.precision == RD_PREC_FP16 ? RD_PREC_INT8 : RD_PREC_FP16, &err),
                RD_OK);
        }
        prefix_check_run(fx.s, fx.p, RD_PREFIX_TRY, &fx.x, 1, 1);
        if (k % 2 == 0) {
            CU_ASSERT_TRUE(rd_sim_prefix_commit(fx.p));
            CU_ASSERT_FALSE(rd_sim_prefix_commit(fx.p));
            /* the kept set is the baseline now: all of it from the recording */
            CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), full);
        } else {
            /* not kept: the baseline is the previous set, and a USE run drops the tentative one */
            prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1);
            CU_ASSERT_FALSE(rd_sim_prefix_commit(fx.p));
            prefix_random_set(fx.s, fx.names, fx.n, &seed, 3);
            prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
        }
    }
    /* a graph input'fx.s parameters changed: a tentative full run, kept, then reused whole */
    rd_sim_tensor xt;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(fx.s, "x", &xt, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_sim_set_qparams(fx.s, "x", xt.scale * 1.5f, xt.zero_point, &err), RD_OK);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_TRY, &fx.x, 1, 1), 0);
    CU_ASSERT_TRUE(rd_sim_prefix_commit(fx.p));
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), full);
    CU_ASSERT_EQUAL(rd_sim_run_prefix(fx.s, fx.p, (rd_prefix_mode)7, &fx.x, 1, NULL, NULL, 0, &err), RD_E_INVAL);
    CU_ASSERT_FALSE(rd_sim_prefix_commit(NULL));
    fixture_close(&fx);
}

/* What voids a recording: other inputs, threads, weight scales, faults; a cap that holds part of a run. */
static void test_invalidation_and_cap(void)
{
    fixture fx;
    fixture_open(&fx, 0.2f);
    rd_tensor x2;
    make_input(&x2, 0.9f);
    rd_error err;
    prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
    rd_sim_prefix_stats ps;
    rd_sim_prefix_stats_get(fx.p, &ps);
    uint64_t full = ps.nodes_computed;
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &x2, 1, 1), 0); /* another sample */
    /* another thread count gives the same bits: the recording still serves */
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 2), full);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), full);
    /* new weight scales on conv3: a full run, then a fresh recording is used again */
    float scales[3] = {0.01f, 0.02f, 0.03f};
    CU_ASSERT_EQUAL(rd_sim_set_weight_scales(fx.s, "conv3_w", scales, 3, &err), RD_OK);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), 0);
    prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
    CU_ASSERT_EQUAL(rd_sim_add_fault(fx.s, fx.names[0], RD_FAULT_GAIN, &err), RD_OK);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), 0);

    /* a cap below one run'fx.s activations: a prefix of the nodes, later resumes stop where it ends */
    size_t caps[] = {0, 200, 700, 1500};
    uint32_t seed = 777;
    rd_sim_prefix *capped = NULL;
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        CU_ASSERT_EQUAL_FATAL(rd_sim_prefix_create(caps[c], &capped, &err), RD_OK);
        prefix_random_set(fx.s, fx.names, fx.n, &seed, 3);
        prefix_check_run(fx.s, capped, RD_PREFIX_RECORD, &fx.x, 1, 1);
        rd_sim_prefix_stats_get(capped, &ps);
        CU_ASSERT(ps.bytes <= caps[c]);
        for (int k = 0; k < 8; k++) {
            prefix_random_set(fx.s, fx.names, fx.n, &seed, 3);
            uint64_t r = prefix_check_run(fx.s, capped,
                                          k == 4  ? RD_PREFIX_RECORD
                                          : k % 2 ? RD_PREFIX_TRY
                                                  : RD_PREFIX_USE,
                                          &fx.x, 1, 1);
            if (caps[c] == 0)
                CU_ASSERT_EQUAL(r, 0);
            if (k == 3 || k == 5) { /* keep a tentative run: still within the cap */
                rd_sim_prefix_commit(capped);
                rd_sim_prefix_stats_get(capped, &ps);
                CU_ASSERT(ps.bytes <= caps[c]);
            }
        }
        rd_sim_prefix_destroy(capped);
    }
    rd_tensor_fini(&x2);
    fixture_close(&fx);
}

static rd_status count_events(void *user, const rd_observed *ev, rd_error *err)
{
    (void)ev;
    (void)err;
    (*(int *)user)++;
    return RD_OK;
}

/* An observer sees every node (a plain run), and errors leave nothing behind. */
static void test_observer_and_errors(void)
{
    fixture fx;
    fixture_open(&fx, 0.2f);
    rd_tensor bad;
    rd_tensor_alloc(&bad, RD_DT_F32, 4, (const int64_t[]){1, 3, 6, 6}, NULL);
    rd_error err;
    prefix_check_run(fx.s, fx.p, RD_PREFIX_RECORD, &fx.x, 1, 1);
    CU_ASSERT_EQUAL(rd_sim_set_precision(fx.s, fx.names[fx.n - 1], RD_PREC_FP16, &err), RD_OK);
    prefix_check_run(fx.s, fx.p, RD_PREFIX_TRY, &fx.x, 1, 1);
    int events = 0;
    rd_run_options ro = {.observer = count_events, .user = &events};
    rd_tensor y[2];
    CU_ASSERT_EQUAL(rd_sim_run_prefix(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, &ro, y, 2, &err), RD_OK);
    CU_ASSERT(events >= 5);
    CU_ASSERT_FALSE(rd_sim_prefix_commit(fx.p)); /* the observed run was not a tentative one */
    rd_tensor_fini(&y[0]);
    rd_tensor_fini(&y[1]);
    /* a wrong input shape: an error naming the input, the recording dropped, then a full run again */
    CU_ASSERT_EQUAL(rd_sim_run_prefix(fx.s, fx.p, RD_PREFIX_RECORD, &bad, 1, NULL, y, 2, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'x'"));
    CU_ASSERT_EQUAL(rd_sim_run_prefix(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, NULL, y, 3, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(prefix_check_run(fx.s, fx.p, RD_PREFIX_USE, &fx.x, 1, 1), 0);
    rd_sim_prefix_stats ps;
    rd_sim_prefix_stats_get(fx.p, &ps);
    CU_ASSERT_EQUAL(ps.bytes, 0);
    CU_ASSERT_EQUAL(ps.nodes_recorded, 0);
    rd_sim_prefix_destroy(NULL);
    rd_tensor_fini(&bad);
    fixture_close(&fx);
}

typedef struct worker {
    rd_sim *s;
    rd_sim_prefix *p;
    rd_tensor x, y[2];
    rd_status st;
    int rounds;
} worker;

/* Tentative runs of the same configuration, kept every other time, on this worker's own sample. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    rd_error err;
    for (int r = 0; r < w->rounds && w->st == RD_OK; r++) {
        rd_tensor_fini(&w->y[0]);
        rd_tensor_fini(&w->y[1]);
        w->st = rd_sim_run_prefix(w->s, w->p, RD_PREFIX_TRY | RD_PREFIX_CONCURRENT, &w->x, 1, NULL, w->y, 2, &err);
        if (r % 2)
            rd_sim_prefix_commit(w->p);
    }
    return NULL;
}

/* Two threads run one prepared simulation through their own recordings: the bits of sequential runs. */
static void test_concurrent(void)
{
    rd_model *m;
    const char **names;
    size_t n;
    rd_sim *s = calibrated(&m, &names, &n);
    uint32_t seed = 4242;
    rd_error err;
    worker w[2];
    memset(w, 0, sizeof w);
    for (int t = 0; t < 2; t++) {
        w[t].s = s;
        w[t].rounds = 6;
        make_input(&w[t].x, 0.3f + (float)t);
        CU_ASSERT_EQUAL_FATAL(rd_sim_prefix_create(64u << 20, &w[t].p, &err), RD_OK);
    }
    for (int k = 0; k < 5; k++) {
        prefix_random_set(s, names, n, &seed, 3);
        CU_ASSERT_EQUAL_FATAL(rd_sim_prepare(s, &err), RD_OK);
        pthread_t th[2];
        for (int t = 0; t < 2; t++)
            CU_ASSERT_EQUAL_FATAL(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < 2; t++) {
            CU_ASSERT_EQUAL(w[t].st, RD_OK);
            rd_sim_layer_stats *mine = calloc(rd_model_value_count(rd_sim_model(s)) + 1, sizeof *mine);
            CU_ASSERT_PTR_NOT_NULL_FATAL(mine);
            for (size_t v = 0; v < rd_model_value_count(rd_sim_model(s)); v++)
                rd_sim_prefix_layer_stats_get(w[t].p, (int)v, &mine[v]);
            rd_tensor ref[2];
            CU_ASSERT_EQUAL_FATAL(rd_sim_run(s, &w[t].x, 1, NULL, ref, 2, &err), RD_OK);
            for (int o = 0; o < 2; o++) {
                CU_ASSERT(prefix_same_bits(&w[t].y[o], &ref[o]));
                rd_tensor_fini(&ref[o]);
            }
            rd_sim_layer_stats *theirs = prefix_stats_copy(s);
            size_t differ = 0;
            for (size_t v = 0; v < rd_model_value_count(rd_sim_model(s)); v++)
                differ += memcmp(&mine[v], &theirs[v], sizeof mine[v]) != 0;
            CU_ASSERT_EQUAL(differ, 0);
            free(mine);
            free(theirs);
        }
    }
    for (int t = 0; t < 2; t++) {
        rd_tensor_fini(&w[t].x);
        rd_tensor_fini(&w[t].y[0]);
        rd_tensor_fini(&w[t].y[1]);
        rd_sim_prefix_destroy(w[t].p);
    }
    free(names);
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

RD_TEST_REGISTER(register_sim_prefix)
{
    RD_SUITE("sim_prefix", {"random float16 sets: bits of a full run", test_random_sets},
             {"random int8/int16/float16 sets and int16 parameters", test_random_int16_sets},
             {"tentative runs and commits", test_try_and_commit},
             {"invalidation and memory caps", test_invalidation_and_cap},
             {"observer and errors", test_observer_and_errors},
             {"concurrent runs on a prepared simulation", test_concurrent});
}
