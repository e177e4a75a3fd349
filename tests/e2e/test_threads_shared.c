/*
 * test_threads_shared.c: every tensor of the shared models is bit-identical at 1, 2, 3 and 8 threads, for the
 * float32 reference (rd_model_run, fused kernels) and the float16, int8 and int16 simulators (rd_sim_run).
 *
 * The one-thread run records, per observed tensor, its name, byte count and a 64-bit FNV-1a hash of its bytes;
 * the runs on pools of 2, 3 and 8 threads must report the same tensors in the same order with the same hashes.
 * Those three runs share one rd_run_buffers, so each computes into the blocks the previous one left (stale
 * values included); a fourth run at 8 threads must find every block it needs among those kept.
 * The float32 reference is also run unfused (through empty executor hooks, which turn the fusion of
 * Conv + BatchNormalization + activation off): the fused run must give the same bits. So are the simulators
 * (through their hooks without rounding a large float16 elementwise node slice by slice): the same bits, and the
 * same per-layer counts of saturation, underflow and float16 overflow.
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include "internal.h"
#include "sim_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen {
    char name[128];
    size_t bytes;
    uint64_t hash;
} seen;

typedef struct record {
    seen *v;
    size_t n, cap;
    bool failed;
    uint64_t stats_hash; /* a simulator's per-layer stats after the run */
} record;

static uint64_t fnv1a(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static rd_status keep(void *user, const rd_observed *ev, rd_error *err)
{
    (void)err;
    record *r = user;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        seen *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            r->failed = true;
            return RD_OK;
        }
        r->v = v;
        r->cap = cap;
    }
    seen *s = &r->v[r->n++];
    snprintf(s->name, sizeof s->name, "%s", ev->name);
    s->bytes = rd_tensor_nbytes(ev->tensor);
    s->hash = ev->tensor->data ? fnv1a(ev->tensor->data, s->bytes) : 0;
    return RD_OK;
}

/* A hash of every value's per-layer stats (the counts the report shows). */
static uint64_t stats_hash(const rd_sim *s)
{
    uint64_t h = 0;
    const size_t n_values = rd_model_value_count(rd_sim_model(s));
    for (size_t v = 0; v < n_values; v++) {
        rd_sim_layer_stats st;
        rd_sim_layer_stats_get(s, (int)v, &st);
        const int64_t f[] = {st.count, st.saturated, st.rounded_to_zero, st.fp16_overflow, st.fp16_first_index};
        h = h * 31 + fnv1a(f, sizeof f) + fnv1a(&st.fp16_max_abs, sizeof st.fp16_max_abs);
    }
    return h;
}

/* Runs once on pool (NULL: one thread) with buffers kept from earlier runs (may be NULL) and records every
   tensor; the simulator s when not NULL, else m. plain: node by node, each output rounded whole (the float32
   reference through empty hooks, the simulator through its hooks without rounding in slices). */
static void run_recorded(rd_model *m, rd_sim *s, const rd_tensor *in, rd_pool *pool, rd_run_buffers *buffers,
                         bool plain, record *r)
{
    rd_error err;
    rd_run_options ro = {.observer = keep, .user = r, .observe_inputs = true, .pool = pool, .buffers = buffers};
    size_t n_out = rd_model_output_count(s ? rd_sim_model(s) : m);
    rd_tensor *outs = calloc(n_out, sizeof *outs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(outs);
    const sim_exec_hooks none = {0};
    sim_exec_hooks whole = {0};
    if (s) {
        whole = sim_entire_hooks(s);
        whole.round_in_slices = NULL;
    }
    rd_status st = s && plain
                       ? sim_execute((rd_model *)rd_sim_model(s), &whole, rd_sim_pool(s), in, 1, &ro, outs, n_out, &err)
                   : s     ? rd_sim_run(s, in, 1, &ro, outs, n_out, &err)
                   : plain ? sim_execute(m, &none, NULL, in, 1, &ro, outs, n_out, &err)
                           : rd_model_run(m, in, 1, &ro, outs, n_out, &err);
    if (st != RD_OK)
        fprintf(stderr, "run failed: %s\n", err.msg);
    if (s)
        r->stats_hash = stats_hash(s);
    CU_ASSERT_EQUAL(st, RD_OK);
    CU_ASSERT_FALSE(r->failed);
    for (size_t k = 0; k < n_out; k++)
        rd_tensor_fini(&outs[k]);
    free(outs);
}

/* The first tensor of got that differs from want, or -1 when they agree. */
static long first_difference(const record *want, const record *got)
{
    size_t n = want->n < got->n ? want->n : got->n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(want->v[i].name, got->v[i].name) != 0 || want->v[i].bytes != got->v[i].bytes ||
            want->v[i].hash != got->v[i].hash)
            return (long)i;
    return want->n == got->n ? -1 : (long)n;
}

static rd_status one_sample(void *user, size_t k, rd_tensor *inputs, rd_error *err)
{
    (void)k;
    return rd_tensor_clone(&inputs[0], user, err);
}

typedef enum { REF_F32, SIM_F16, SIM_I8, SIM_I16, N_KINDS } run_kind;
static const char *const kind_names[N_KINDS] = {"float32 reference", "float16 simulator", "int8 simulator",
                                                "int16 simulator"};

static rd_sim *make_sim(rd_model *m, run_kind kind, rd_tensor *in)
{
    rd_error err;
    rd_sim_options so = {.optimization_level = 3};
    if (kind == SIM_F16)
        so.precision = RD_PREC_FP16;
    else if (kind == SIM_I8)
        so.precision = RD_PREC_INT8;
    else
        CU_ASSERT_EQUAL(rd_sim_options_for_dtype(RD_QDT_W16A16I, &so, &err), RD_OK);
    rd_sim *s = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    if (kind != SIM_F16) {
        rd_calib_options co = {.method = RD_CALIB_NORMAL, .threads = 1};
        CU_ASSERT_EQUAL_FATAL(rd_calibrate(s, one_sample, in, 1, &co, &err), RD_OK);
    }
    return s;
}

static void check_model(const char *model, const char *input)
{
    const char *shared = rd_test_shared_dir();
    char path[4200];
    rd_error err;
    rd_tensor in;
    snprintf(path, sizeof path, "%s/models/%s/inputs/%s", shared, model, input);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &in, &err), RD_OK);
    snprintf(path, sizeof path, "%s/models/%s/model.onnx", shared, model);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    static const int counts[] = {2, 3, 8};
    rd_pool *pools[3] = {NULL};
    for (int c = 0; c < 3; c++)
        CU_ASSERT_EQUAL_FATAL(rd_pool_create(counts[c], &pools[c], &err), RD_OK);
    for (int kind = 0; kind < N_KINDS; kind++) {
        rd_sim *s = kind == REF_F32 ? NULL : make_sim(m, (run_kind)kind, &in);
        record one = {0};
        run_recorded(m, s, &in, NULL, NULL, false, &one);
        CU_ASSERT(one.n > 2);
        /* against node by node with whole roundings, on one thread and on three */
        for (int c = -1; c < 2; c += 2) {
            record usual = {0}, plain = {0};
            run_recorded(m, s, &in, c < 0 ? NULL : pools[c], NULL, false, &usual);
            run_recorded(m, s, &in, c < 0 ? NULL : pools[c], NULL, true, &plain);
            long d = first_difference(&usual, &plain);
            if (d >= 0)
                fprintf(stderr, "%s, %s: tensor %ld ('%s') differs from the node-by-node run\n", model,
                        kind_names[kind], d, (size_t)d < usual.n ? usual.v[d].name : "(missing)");
            CU_ASSERT_EQUAL(d, -1);
            CU_ASSERT_EQUAL(usual.stats_hash, plain.stats_hash);
            free(usual.v);
            free(plain.v);
        }
        /* the pools' runs share kept buffers: each starts on the blocks (and stale values) of the one before */
        rd_run_buffers *kept = NULL;
        CU_ASSERT_EQUAL_FATAL(rd_run_buffers_create(&kept, &err), RD_OK);
        size_t held[3];
        for (int c = 0; c < 3; c++) {
            record many = {0};
            run_recorded(m, s, &in, pools[c], kept, false, &many);
            held[c] = rd_run_buffers_bytes(kept);
            long d = first_difference(&one, &many);
            if (d >= 0)
                fprintf(stderr, "%s, %s: tensor %ld ('%s') differs between 1 and %d threads\n", model, kind_names[kind],
                        d, (size_t)d < one.n ? one.v[d].name : "(missing)", counts[c]);
            CU_ASSERT_EQUAL(d, -1);
            free(many.v);
        }
        /* the same shapes and threads again: what the last run kept serves this one without a new block */
        record again = {0};
        run_recorded(m, s, &in, pools[2], kept, false, &again);
        CU_ASSERT_EQUAL(first_difference(&one, &again), -1);
        CU_ASSERT(held[0] > 0);
        CU_ASSERT_EQUAL(rd_run_buffers_bytes(kept), held[2]);
        free(again.v);
        rd_run_buffers_destroy(kept);
        fprintf(stderr, "%s, %s: %zu tensors identical at 1, 2, 3 and 8 threads (%zu bytes kept between runs)\n", model,
                kind_names[kind], one.n, held[2]);
        free(one.v);
        rd_sim_destroy(s);
    }
    for (int c = 0; c < 3; c++)
        rd_pool_destroy(pools[c]);
    rd_model_destroy(m);
    rd_tensor_fini(&in);
}

static void test_mnist8(void)
{
    check_model("mnist8", "set0.npy");
}

static void test_mobilenet_v2(void)
{
    check_model("mobilenet_v2", "chelsea.npy");
}

static void test_ultraface(void)
{
    check_model("ultraface_rfb320", "astronaut.npy");
}

static void test_super_resolution(void)
{
    check_model("super_resolution", "set0.npy");
}

RD_TEST_REGISTER(register_threads_shared)
{
    /* the small models alone are what the ThreadSanitizer configuration runs (tests.cmake) */
    RD_SUITE("threads_shared_small", {"mnist8: every tensor at 1, 2, 3, 8 threads", test_mnist8},
             {"ultraface_rfb320: every tensor at 1, 2, 3, 8 threads", test_ultraface});
    RD_SUITE("threads_shared_large", {"mobilenet_v2: every tensor at 1, 2, 3, 8 threads", test_mobilenet_v2},
             {"super_resolution: every tensor at 1, 2, 3, 8 threads", test_super_resolution});
}
