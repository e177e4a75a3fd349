/* test_hybrid.c: hybrid suggest/search/diagnose on a small model with layers that quantize badly. */
#include "rd_test.h"
#include "text_check.h"
#include "paths_in.h"
#include "cli_capture.h"
#include "cli_expect.h"
#include "latency_fixtures.h"
#include "rknn_diag/analyzer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t rng = 777;
static float rnd(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void weights(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, float amp, int outlier)
{
    rd_tensor t;
    rd_tensor_alloc(&t, RD_DT_F32, rank, dims, NULL);
    int64_t per = rd_tensor_numel(&t) / dims[0];
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        ((float *)t.data)[i] = amp * rnd() * (i / per == outlier ? 300.0f : 1.0f);
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

static void conv(rd_onnx_builder *b, const char *x, const char *w, const char *y)
{
    rd_onnx_node *n = rd_onnx_add_node(b, "Conv", y, (const char *const[]){x, w}, 2, (const char *const[]){y}, 1);
    rd_onnx_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
}

/*
 * x [1,3,8,8] -> c1 -> relu1 -> c_outlier (one output channel 300x: bad with per-tensor weights) -> relu2
 * -> wide (Mul by a per-channel 1..1000 gain: a wide-range activation) -> narrow (Div it back) -> c3 -> y
 */
static bool with_wide = true; /* false: only the outlier channel is wrong */

static void write_model(const char *path)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    weights(b, "w1", 4, (const int64_t[]){8, 3, 3, 3}, 0.5f, -1);
    weights(b, "w2", 4, (const int64_t[]){8, 8, 3, 3}, 0.2f, 2);
    weights(b, "w3", 4, (const int64_t[]){4, 8, 3, 3}, 0.3f, -1);
    rd_tensor g;
    rd_tensor_alloc(&g, RD_DT_F32, 4, (const int64_t[]){1, 8, 1, 1}, NULL);
    for (int c = 0; c < 8; c++)
        ((float *)g.data)[c] = c == 5 && with_wide ? 2000.0f : 1.0f;
    rd_onnx_add_initializer(b, "gain", &g, RD_ONNX_RAW);
    ((float *)g.data)[2] = 300.0f; /* the Div also brings the outlier channel back to the others' scale */
    rd_onnx_add_initializer(b, "gain_back", &g, RD_ONNX_RAW);
    rd_tensor_fini(&g);
    conv(b, "x", "w1", "c1");
    rd_onnx_add_node(b, "Relu", "relu1", (const char *const[]){"c1"}, 1, (const char *const[]){"relu1"}, 1);
    conv(b, "relu1", "w2", "c_outlier");
    rd_onnx_add_node(b, "Relu", "relu2", (const char *const[]){"c_outlier"}, 1, (const char *const[]){"relu2"}, 1);
    rd_onnx_add_node(b, "Mul", "wide", (const char *const[]){"relu2", "gain"}, 2, (const char *const[]){"wide"}, 1);
    rd_onnx_add_node(b, "Div", "narrow", (const char *const[]){"wide", "gain_back"}, 2, (const char *const[]){"narrow"},
                     1);
    conv(b, "narrow", "w3", "y");
    rd_onnx_add_output(b, "y", RD_DT_F32, 4, (const int64_t[]){1, 4, 8, 8}, NULL);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, NULL), RD_OK);
    rd_onnx_builder_destroy(b);
}

static char dir[256], model[300], data[300], ds[300], out[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rd_test_hybrid_%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    rd_test_paths_in(dir, sizeof ds, model, "m.onnx", ds, "dataset.txt", out, "out/h.quantization.cfg", NULL);
    write_model(model);
    FILE *f = fopen(ds, "w");
    for (int k = 0; k < 3; k++) {
        rd_tensor t;
        rd_tensor_alloc(&t, RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
        for (int64_t i = 0; i < 192; i++)
            ((float *)t.data)[i] = rnd();
        snprintf(data, sizeof data, "%s/s%d.npy", dir, k);
        CU_ASSERT_EQUAL(rd_npy_save(data, &t, NULL), RD_OK);
        rd_tensor_fini(&t);
        fprintf(f, "s%d.npy\n", k);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/out", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Output cosine "result: ... output cosine X" of a search. */
static double result_cos(const char *text)
{
    const char *p = strstr(text, "output cosine ");
    return p ? strtod(p + 14, NULL) : NAN;
}

static void test_suggest_and_search(void)
{
    setup();
    RD_CLI_EXPECT(0, RD_TEXTS("relu2"), NULL, "hybrid", "suggest", model, "--dataset", ds, "--input-layout", "nchw",
                  "--samples", "3", "--method", "layer");

    rd_cli_result r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples",
                                  "3", "--method", "layer", "--target-cos", "0.999", "-o", out, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    RD_ASSERT_HAS_TEXTS(r.out, "float16: relu2", "note: keys are ONNX");
    double promised = result_cos(r.out);
    CU_ASSERT(promised >= 0.999);
    /* no more than needed: every float16 tensor kept survived the backward pass; here at most two */
    size_t n_float = 0;
    for (const char *p = r.out; (p = strstr(p, "  float16: ")); p++)
        n_float++;
    CU_ASSERT(n_float >= 1 && n_float <= 3);
    rd_test_cli_free(&r);

    /* the cfg reloads and reaches the promised cosine */
    rd_qcfg q;
    CU_ASSERT_EQUAL(rd_qcfg_load(out, &q, NULL), RD_OK);
    CU_ASSERT_PTR_NOT_NULL(rd_qcfg_find_layer(&q, "relu2"));
    CU_ASSERT_EQUAL(q.n_layers, n_float);
    rd_qcfg_fini(&q);
    char report[400];
    snprintf(report, sizeof report, "%s/out/error_analysis.txt", dir);
    CU_ASSERT_EQUAL(access(report, R_OK), 0);
    char snap[400];
    snprintf(snap, sizeof snap, "%s/snap", dir);
    RD_CLI_EXPECT(0, NULL, NULL, "accuracy", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "3",
                  "--method", "layer", "--cfg", out, "-o", snap, "-q", "--no-txt", "--fail-under-cos", "0.999");
    char run_in[400];
    snprintf(run_in, sizeof run_in, "x=%s/s0.npy", dir);
    r = rd_test_cli("run", model, "--precision", "int8", "--cfg", out, "--input", run_in, NULL);
    if (r.code != 0)
        fprintf(stderr, "run: %s\n", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    cleanup();
}

/* stdout without the timing line: the trade-off table, the result and the chosen set */
static char *without_timing(const char *text)
{
    char *copy = strdup(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    char *line = strstr(copy, "\nsearch: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    char *end = strchr(line + 1, '\n');
    memmove(line, end ? end : line + strlen(line), strlen(end ? end : line) + 1);
    return copy;
}

/* Prefix reuse (the default), full runs (--reuse-mb 0) and samples in turn make the same search, step by step. */
static void test_search_reuse_same_result(void)
{
    setup();
    rd_cli_result full =
        rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "3", "--method",
                    "layer", "--target-cos", "0.9999", "--reuse-mb", "0", "-o", out, NULL);
    rd_cli_result reuse = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples",
                                      "3", "--method", "layer", "--target-cos", "0.9999", "-o", out, NULL);
    CU_ASSERT_EQUAL(full.code, reuse.code);
    CU_ASSERT_PTR_NULL(strstr(full.out, "prefix reuse"));
    const char *line = strstr(reuse.out, "prefix reuse: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    unsigned long long computed = 0, total = 0;
    char *end = NULL;
    computed = strtoull(line + 14, &end, 10);
    CU_ASSERT(end && strncmp(end, " of ", 4) == 0);
    if (end)
        total = strtoull(end + 4, NULL, 10);
    CU_ASSERT(computed > 0 && computed < total);
    /* and the samples one after another (--threads 1; two threads measure two samples at once) */
    rd_cli_result serial =
        rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "3", "--method",
                    "layer", "--target-cos", "0.9999", "--threads", "1", "-o", out, NULL);
    CU_ASSERT_EQUAL(serial.code, reuse.code);
    char *a = without_timing(full.out), *b = without_timing(reuse.out), *c = without_timing(serial.out);
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_STRING_EQUAL(a, c);
    if (strcmp(a, b) != 0 || strcmp(a, c) != 0)
        fprintf(stderr, "full runs:\n%s\nwith reuse:\n%s\none thread:\n%s\n", a, b, c);
    free(a);
    free(b);
    free(c);
    rd_test_cli_free(&full);
    rd_test_cli_free(&reuse);
    rd_test_cli_free(&serial);
    /* a negative or absurd cap is a usage error */
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--target-cos",
                  "0.99", "--reuse-mb", "-1", "-o", out);
    cleanup();
}

static void test_bad_input(void)
{
    setup();
    /* a target above what float16 reaches */
    RD_CLI_EXPECT(3, RD_TEXTS("target not reachable"), NULL, "hybrid", "search", model, "--dataset", ds,
                  "--input-layout", "nchw", "--target-cos", "1", "--target-sqnr", "200", "-o", out);
    /* an empty search space */
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("empty search space"), "hybrid", "search", model, "--dataset", ds, "--input-layout",
                  "nchw", "--dtype", "float16", "--target-cos", "0.9", "-o", out);
    /* a latency table naming an unknown tensor */
    char lat[400];
    snprintf(lat, sizeof lat, "%s/lat.csv", dir);
    FILE *f = fopen(lat, "w");
    fputs("tensor,milliseconds_int8,milliseconds_float16\nc1,0.1,0.2\nno_such_tensor,0.1,0.3\n", f);
    fclose(f);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("no_such_tensor"), "hybrid", "search", model, "--dataset", ds, "--input-layout",
                  "nchw", "--target-cos", "0.99", "--latency-table", lat, "-o", out);
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "-o", out);
    cleanup();
}

/* Float16 cost of each candidate in the logs below, in ms: float16 time - int8 time. */
static double log_cost(const char *name)
{
    static const char *const names[] = {"relu1", "relu2", "wide", "narrow", "y"};
    static const double ms[] = {0.05, 1.5, 0.02, 0.02, 0.04};
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0)
            return ms[i];
    return NAN;
}

/* search --latency-table with the board logs of the int8 and the float16 build: costs are the logs' times. */
static void test_search_latency_log(void)
{
    setup();
    static const lat_fx_row int8_rows[] = {
        {"InputOperator", "INT8", "CPU", "\\", "(1,3,8,8)", 12, "InputOperator:x"},
        {"ConvRelu", "INT8", "NPU", "(1,3,8,8),(8,3,3,3),(8)", "(1,8,8,8)", 100, "Conv:c1"},
        {"ConvRelu", "INT8", "NPU", "(1,8,8,8),(8,8,3,3),(8)", "(1,8,8,8)", 200, "Conv:c_outlier"},
        {"Mul", "INT8", "NPU", "(1,8,8,8),(1,8,1,1)", "(1,8,8,8)", 10, "Mul:wide"},
        {"Div", "INT8", "NPU", "(1,8,8,8),(1,8,1,1)", "(1,8,8,8)", 10, "Div:narrow"},
        {"Conv", "INT8", "NPU", "(1,8,8,8),(4,8,3,3),(4)", "(1,4,8,8)", 50, "Conv:y"},
        {"OutputOperator", "INT8", "CPU", "(1,4,8,8)", "\\", 3, "OutputOperator:y"},
    };
    static const double fp16_us[] = {12, 150, 1700, 30, 30, 90, 3};
    lat_fx_row fp16_rows[7];
    for (int i = 0; i < 7; i++) {
        fp16_rows[i] = int8_rows[i];
        fp16_rows[i].dtype = "FLOAT16";
        fp16_rows[i].us = fp16_us[i];
    }
    char log8[400], log16[400];
    snprintf(log8, sizeof log8, "%s/int8_run.log", dir);
    snprintf(log16, sizeof log16, "%s/fp16_run.log", dir);
    FILE *f = fopen(log8, "w");
    lat_fx_write_v2(f, int8_rows, 7);
    fclose(f);
    f = fopen(log16, "w");
    lat_fx_write_old(f, fp16_rows, 7);
    fclose(f);
    rd_cli_result r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples",
                                  "3", "--method", "layer", "--target-cos", "0.999", "--latency-table", log8,
                                  "--latency-table", log16, "-o", out, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    if (r.code != 0)
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ms added"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "rows matched"));
    /* every candidate in float16 costs the sum of the logs' differences */
    const char *all = strstr(r.out, "(every candidate in float16)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    char *after_count = NULL;
    strtol(all + strlen("(every candidate in float16)"), &after_count, 10); /* the float count */
    double all_cost = strtod(after_count, NULL);
    CU_ASSERT_DOUBLE_EQUAL(all_cost, 0.05 + 1.5 + 0.02 + 0.02 + 0.04, 1e-6);
    /* the chosen set's cost is the sum of its tensors' */
    double want = 0;
    for (const char *p = r.out; (p = strstr(p, "  float16: ")); p++) {
        char name[64] = "";
        size_t k = 0;
        for (const char *q = p + 11; *q && *q != '\n' && *q != ' ' && k + 1 < sizeof name; q++)
            name[k++] = *q;
        name[k] = '\0';
        want += log_cost(name);
    }
    const char *cost = strstr(r.out, "cost: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cost);
    CU_ASSERT(want >= 1.5); /* relu2 is in the set */
    CU_ASSERT_DOUBLE_EQUAL(strtod(cost + 6, NULL), want, 1e-3);
    RD_ASSERT_HAS_TEXTS(cost, "ms added (latency tables ", "fp16_run.log");
    CU_ASSERT_PTR_NULL(strstr(r.out, "estimated"));
    rd_test_cli_free(&r);

    /* the float16 log without relu2's group: its cost is estimated (median float16/int8 ratio of the others,
       1.5, 1.8, 3, 3 -> 2.4: 0.2 ms x 1.4) and the result says so */
    fp16_rows[2].op = "Reshape";
    fp16_rows[2].full_name = "Reshape:relu2_rs_sw"; /* a compiler-made op instead: ignored */
    f = fopen(log16, "w");
    lat_fx_write_old(f, fp16_rows, 7);
    fclose(f);
    r = rd_test_cli("hybrid", "search", model, "--dataset", ds, "--input-layout", "nchw", "--samples", "3", "--method",
                    "layer", "--target-cos", "0.999", "--latency-table", log8, "--latency-table", log16, "-o", out,
                    NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    RD_ASSERT_HAS_TEXTS(r.out, "float16: relu2 (cost estimated: timed one way only)", "; 1 of these costs estimated)");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "estimated cost of 1 candidates timed one way only (relu2)"));
    /* relu2 alone: its step line (found by the singles phase) carries its cost */
    const char *add = strstr(r.out, "\nsingle  relu2 ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(add);
    char *after = NULL;
    strtol(add + strlen("\nsingle  relu2 "), &after, 10);
    CU_ASSERT_DOUBLE_EQUAL(strtod(after, NULL), 0.2 * 1.4, 1e-6);
    rd_test_cli_free(&r);

    /* the int8 log alone: exit 3, asking for the float16 build's log */
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("run the float16 (do_quantization=False) build"), "hybrid", "search", model,
                  "--dataset", ds, "--input-layout", "nchw", "--samples", "3", "--method", "layer", "--target-cos",
                  "0.999", "--latency-table", log8, "-o", out);
    cleanup();
}

static void test_diagnose_per_tensor(void)
{
    with_wide = false;
    setup();
    with_wide = true;
    rd_cli_result r = rd_test_cli("hybrid", "diagnose", model, "--dataset", ds, "--input-layout", "nchw", "--samples",
                                  "2", "--method", "layer", NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "weights per channel (--method channel)"));
    if (!strstr(r.out, "weights per channel (--method channel)"))
        fprintf(stderr, "%s\n%s\n", r.out, r.errs);
    rd_test_cli_free(&r);
    cleanup();
}

RD_TEST_REGISTER(hybrid)
{
    RD_SUITE("hybrid", {"suggest and search find the bad layers, the cfg reloads", test_suggest_and_search},
             {"search with prefix reuse: the same steps as full runs", test_search_reuse_same_result},
             {"bad input: unreachable target, empty space, latency table", test_bad_input},
             {"search --latency-table with the int8 and float16 builds' board logs", test_search_latency_log},
             {"diagnose names per-tensor weights", test_diagnose_per_tensor});
}
