/*
 * test_real_models.c: the FP32 reference against ONNX Runtime on the real models of ../shared/models.
 * Every tensor listed in a golden index.json must reach cosine >= 0.99999 and
 * max|a-b| <= 1e-4 * max|golden|; ONNX test-layout references (output_0.pb) the same.
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct golden_entry {
    char *name;
    rd_tensor t;
    bool seen;
} golden_entry;

typedef struct golden_set {
    golden_entry *e;
    int n;
    int failures;
    char first_failure[512];
} golden_set;

static void compare_tensor(golden_set *g, const char *name, const rd_tensor *got, const rd_tensor *want)
{
    char why[256] = "";
    if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)got->rank) != 0) {
        /* ONNX Runtime keeps scalar shapes and so do we; any other difference is a failure */
        snprintf(why, sizeof why, "shape differs");
    } else {
        rd_tensor a, b;
        CU_ASSERT_EQUAL_FATAL(rd_tensor_to_f32(&a, got, NULL), RD_OK);
        CU_ASSERT_EQUAL_FATAL(rd_tensor_to_f32(&b, want, NULL), RD_OK);
        int64_t n = rd_tensor_numel(&a);
        double dot = 0, na = 0, nb = 0, maxdiff = 0, maxref = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = ((float *)a.data)[i], y = ((float *)b.data)[i];
            dot += x * y;
            na += x * x;
            nb += y * y;
            if (fabs(x - y) > maxdiff || isnan(x - y))
                maxdiff = isnan(x - y) ? INFINITY : fabs(x - y);
            if (fabs(y) > maxref)
                maxref = fabs(y);
        }
        double cos = (na == 0 && nb == 0) ? 1.0 : dot / sqrt(na * nb);
        if (!(cos >= 0.99999) || !(maxdiff <= 1e-4 * maxref))
            snprintf(why, sizeof why, "cos %.7f, max|diff| %.3g vs max|golden| %.3g", cos, maxdiff, maxref);
        rd_tensor_fini(&a);
        rd_tensor_fini(&b);
    }
    if (why[0]) {
        if (g->failures++ == 0)
            snprintf(g->first_failure, sizeof g->first_failure, "%s: %s", name, why);
    }
}

static rd_status check_observed(void *user, const rd_observed *ev, rd_error *err)
{
    golden_set *g = user;
    for (int i = 0; i < g->n; i++)
        if (!g->e[i].seen && strcmp(g->e[i].name, ev->name) == 0) {
            g->e[i].seen = true;
            compare_tensor(g, ev->name, ev->tensor, &g->e[i].t);
        }
    return RD_OK;
}

static void load_golden(const char *dir, golden_set *g)
{
    memset(g, 0, sizeof *g);
    char path[4096];
    snprintf(path, sizeof path, "%s/index.json", dir);
    size_t len;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    g->n = cJSON_GetArraySize(root);
    g->e = calloc((size_t)g->n, sizeof *g->e);
    for (int i = 0; i < g->n; i++) {
        cJSON *item = cJSON_GetArrayItem(root, i);
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(item, "name"));
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(item, "file"));
        g->e[i].name = strdup(name);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        rd_error err;
        CU_ASSERT_EQUAL(rd_npy_load(path, &g->e[i].t, &err), RD_OK);
    }
    cJSON_Delete(root);
}

static void free_golden(golden_set *g)
{
    for (int i = 0; i < g->n; i++) {
        free(g->e[i].name);
        rd_tensor_fini(&g->e[i].t);
    }
    free(g->e);
}

/* ../shared/models/rel into path (4096 bytes). */
static void shared_model_path(char *path, const char *rel)
{
    snprintf(path, 4096, "%s/models/%s", rd_test_shared_dir(), rel);
}

/* Loads the shared model model_rel and its input input_rel (a .npy); a fatal failure when either cannot be. */
static void load_model_and_input(const char *model_rel, const char *input_rel, rd_model **m, rd_tensor *in)
{
    char model[4096], input[4096];
    shared_model_path(model, model_rel);
    shared_model_path(input, input_rel);
    rd_error err = {0};
    *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(model, NULL, m, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(rd_npy_load(input, in, &err), RD_OK);
}

/* Runs m on in, printing the error with the model's name when it fails. */
static rd_status run_model(const char *model_rel, rd_model *m, const rd_tensor *in, const rd_run_options *opt,
                           rd_tensor *out, size_t n_out)
{
    rd_error err = {0};
    rd_status st = rd_model_run(m, in, 1, opt, out, n_out, &err);
    if (st != RD_OK)
        fprintf(stderr, "%s: %s\n", model_rel, err.msg);
    return st;
}

/* Runs model on input.npy and checks every tensor of the golden folder. */
static void check_against_golden(const char *model_rel, const char *input_rel, const char *golden_rel)
{
    rd_model *m;
    rd_tensor in;
    load_model_and_input(model_rel, input_rel, &m, &in);
    char golden[4096];
    shared_model_path(golden, golden_rel);
    golden_set g;
    load_golden(golden, &g);
    rd_run_options opt = {.observer = check_observed, .user = &g};
    rd_status st = run_model(model_rel, m, &in, &opt, NULL, 0);
    CU_ASSERT_EQUAL(st, RD_OK);
    int missing = 0;
    for (int i = 0; i < g.n; i++)
        if (!g.e[i].seen) {
            if (missing++ == 0)
                fprintf(stderr, "%s: golden tensor '%s' was never produced\n", model_rel, g.e[i].name);
        }
    if (g.failures)
        fprintf(stderr, "%s: %d of %d tensors differ; first: %s\n", model_rel, g.failures, g.n, g.first_failure);
    CU_ASSERT_EQUAL(missing, 0);
    CU_ASSERT_EQUAL(g.failures, 0);
    fprintf(stderr, "%s: %d golden tensors checked\n", golden_rel, g.n);
    free_golden(&g);
    rd_tensor_fini(&in);
    rd_model_destroy(m);
}

/* Runs model on a test_data_set input .pb (or .npy) and compares output 0 with output_0.pb. */
static void check_against_pb(const char *model_rel, const char *input_npy_rel, const char *output_pb_rel)
{
    rd_model *m;
    rd_tensor in, want, got;
    load_model_and_input(model_rel, input_npy_rel, &m, &in);
    char output[4096];
    shared_model_path(output, output_pb_rel);
    rd_error err = {0};
    CU_ASSERT_EQUAL_FATAL(rd_tensorproto_load(output, &want, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(run_model(model_rel, m, &in, NULL, &got, 1), RD_OK);
    golden_set g = {0};
    /* the stored reference may keep a different rank for the same data (super_resolution) */
    if (rd_tensor_numel(&got) == rd_tensor_numel(&want)) {
        want.rank = got.rank;
        memcpy(want.dims, got.dims, sizeof want.dims);
    }
    compare_tensor(&g, output_pb_rel, &got, &want);
    if (g.failures)
        fprintf(stderr, "%s\n", g.first_failure);
    CU_ASSERT_EQUAL(g.failures, 0);
    rd_tensor_fini(&in);
    rd_tensor_fini(&want);
    rd_tensor_fini(&got);
    rd_model_destroy(m);
}

static void test_mnist8_layers(void)
{
    check_against_golden("mnist8/model.onnx", "mnist8/inputs/set0.npy", "mnist8/golden/set0");
}

static void test_mnist8_sets(void)
{
    check_against_pb("mnist8/model.onnx", "mnist8/inputs/set1.npy", "mnist8/test_data_set_1/output_0.pb");
    check_against_pb("mnist8/model.onnx", "mnist8/inputs/set2.npy", "mnist8/test_data_set_2/output_0.pb");
}

static void test_ultraface_layers(void)
{
    check_against_golden("ultraface_rfb320/model.onnx", "ultraface_rfb320/inputs/astronaut.npy",
                         "ultraface_rfb320/golden/astronaut");
    check_against_golden("ultraface_rfb320/model.onnx", "ultraface_rfb320/inputs/chelsea.npy",
                         "ultraface_rfb320/golden/chelsea");
}

static void test_mobilenet(void)
{
    check_against_golden("mobilenet_v2/model.onnx", "mobilenet_v2/inputs/chelsea.npy", "mobilenet_v2/golden/chelsea");
    check_against_golden("mobilenet_v2/model.onnx", "mobilenet_v2/inputs/coffee.npy", "mobilenet_v2/golden/coffee");
}

static void test_super_resolution(void)
{
    check_against_pb("super_resolution/model.onnx", "super_resolution/inputs/set0.npy",
                     "super_resolution/test_data_set_0/output_0.pb");
}

RD_TEST_REGISTER(register_real_models)
{
    RD_SUITE("real_models", {"mnist8 every layer", test_mnist8_layers}, {"mnist8 sets 1 and 2", test_mnist8_sets},
             {"ultraface every layer", test_ultraface_layers}, {"mobilenet_v2", test_mobilenet},
             {"super_resolution", test_super_resolution});
}
