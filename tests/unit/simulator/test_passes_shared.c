/*
 * test_passes_shared.c: the compiler passes on the real models of ../shared/models. At every
 * optimization level the outputs still match ONNX Runtime's golden ones (cosine >= 0.99999 and
 * max|a-b| <= 1e-4 * max|golden|, as tests/e2e/test_real_models.c); levels 1 and 3 change no arithmetic,
 * so they equal levels 0 and 2 bit for bit. The rewrites the models call for happen: ultraface's
 * BatchNormalization nodes are folded away at level 2, mobilenet_v2's Conv + Clip chains fused at 3, and
 * its groups at 3 are those of RKNN's public layer table for MobileNetV2 (ConvClip, ConvAdd, Conv).
 */
#include "passes_test_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

/* The tensor called name in the golden folder dir (an index.json of {name, file}); false if absent. */
static bool load_golden(const char *dir, const char *name, rd_tensor *out)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/index.json", dir);
    size_t len = 0;
    char *text = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    bool found = false;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(item, "name"));
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(item, "file"));
        if (!n || !file || strcmp(n, name) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        rd_error err;
        found = rd_npy_load(path, out, &err) == RD_OK;
        break;
    }
    cJSON_Delete(root);
    return found;
}

/* cos >= 0.99999 and max|a-b| <= 1e-4 * max|golden|, both float32 of the same shape. */
static bool close_to_golden(const rd_tensor *got, const rd_tensor *want, char *why, size_t why_len)
{
    if (got->dtype != RD_DT_F32 || want->dtype != RD_DT_F32 || rd_tensor_numel(got) != rd_tensor_numel(want)) {
        snprintf(why, why_len, "dtype or size differs");
        return false;
    }
    const float *a = got->data, *b = want->data;
    double dot = 0, na = 0, nb = 0, maxdiff = 0, maxref = 0;
    for (int64_t i = 0; i < rd_tensor_numel(got); i++) {
        double x = a[i], y = b[i];
        dot += x * y;
        na += x * x;
        nb += y * y;
        maxdiff = isnan(x - y) ? INFINITY : fmax(maxdiff, fabs(x - y));
        maxref = fmax(maxref, fabs(y));
    }
    double cos = (na == 0 && nb == 0) ? 1.0 : dot / sqrt(na * nb);
    snprintf(why, why_len, "cos %.7f, max|diff| %.3g vs max|golden| %.3g", cos, maxdiff, maxref);
    return cos >= 0.99999 && maxdiff <= 1e-4 * maxref;
}

/* Values produced by op_from and fused into the output of op_into (virtual_out set). */
static int count_fused(const rd_model *m, const char *op_from, const char *op_into)
{
    int n = 0;
    for (int v = 0; v < m->n_values; v++) {
        const sim_value *val = &m->values[v];
        if (!val->virtual_out || val->producer < 0 || val->fused_into < 0)
            continue;
        int into = m->values[val->fused_into].producer;
        n += strcmp(m->nodes[val->producer].op_type, op_from) == 0 && into >= 0 &&
             strcmp(m->nodes[into].op_type, op_into) == 0;
    }
    return n;
}

typedef struct model_case {
    const char *dir;       /* under models/ */
    const char *inputs[3]; /* names of inputs/<name>.npy with a golden/<name>/ folder */
} model_case;

#define MAX_OUT 4

/* Loads the model at `level`, runs every input, compares with the golden outputs; keeps the outputs of
   the first input in outs (caller finalises) for the cross-level comparison. */
static rd_model *run_level(const model_case *mc, int level, rd_tensor outs[MAX_OUT], size_t *n_out)
{
    const char *shared = rd_test_shared_dir();
    char path[4400];
    snprintf(path, sizeof path, "%s/models/%s/model.onnx", shared, mc->dir);
    rd_error err;
    rd_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rd_model_load(path, NULL, &m, &err), RD_OK);
    rd_status st = sim_passes_apply(m, level, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s level %d: %s\n", mc->dir, level, err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    *n_out = rd_model_output_count(m);
    CU_ASSERT_FATAL(*n_out <= MAX_OUT);
    for (int k = 0; k < 3 && mc->inputs[k]; k++) {
        rd_tensor in, got[MAX_OUT];
        snprintf(path, sizeof path, "%s/models/%s/inputs/%s.npy", shared, mc->dir, mc->inputs[k]);
        CU_ASSERT_EQUAL_FATAL(rd_npy_load(path, &in, &err), RD_OK);
        st = rd_model_run(m, &in, 1, NULL, got, *n_out, &err);
        rd_tensor_fini(&in);
        if (st != RD_OK)
            fprintf(stderr, "\n%s level %d: %s\n", mc->dir, level, err.msg);
        CU_ASSERT_EQUAL_FATAL(st, RD_OK);
        snprintf(path, sizeof path, "%s/models/%s/golden/%s", shared, mc->dir, mc->inputs[k]);
        for (size_t o = 0; o < *n_out; o++) {
            rd_value_info vi;
            rd_model_value(m, (size_t)rd_model_output(m, o), &vi);
            rd_tensor want;
            CU_ASSERT_FATAL(load_golden(path, vi.name, &want));
            char why[200];
            bool ok = close_to_golden(&got[o], &want, why, sizeof why);
            if (!ok)
                fprintf(stderr, "\n%s level %d, %s, output %s: %s\n", mc->dir, level, mc->inputs[k], vi.name, why);
            CU_ASSERT(ok);
            rd_tensor_fini(&want);
            if (k == 0)
                outs[o] = got[o];
            else
                rd_tensor_fini(&got[o]);
        }
    }
    return m;
}

static void same_bits(const rd_tensor *a, const rd_tensor *b, size_t n)
{
    for (size_t o = 0; o < n; o++) {
        CU_ASSERT_EQUAL(rd_tensor_nbytes(&a[o]), rd_tensor_nbytes(&b[o]));
        if (rd_tensor_nbytes(&a[o]) == rd_tensor_nbytes(&b[o]))
            CU_ASSERT_EQUAL(memcmp(a[o].data, b[o].data, rd_tensor_nbytes(&a[o])), 0);
    }
}

/* NPU op types whose groups are counted at level 3 (the ops RKNN's public layer tables show). */
static const char *const npu_ops[] = {"ConvRelu", "ConvClip", "ConvAdd",     "ConvAddRelu", "ConvReluAdd",
                                      "AddRelu",  "Conv",     "ConvSigmoid", "ConvExSwish", "Add",
                                      "Concat",   "MaxPool",  "Reshape",     "exSoftmax13", "Softmax"};
#define N_NPU_OPS (sizeof npu_ops / sizeof npu_ops[0])

/* Runs levels 0..3; per level: nodes, BatchNormalization nodes and Conv outputs fused into an `act`; the groups
   of each of npu_ops at level 3. */
static void check_model(const model_case *mc, const char *act, int node_counts[4], int bn_counts[4], int fused[4],
                        int groups[N_NPU_OPS])
{
    rd_tensor outs[4][MAX_OUT];
    size_t n_out = 0;
    for (int level = 0; level <= 3; level++) {
        rd_model *m = run_level(mc, level, outs[level], &n_out);
        node_counts[level] = m->n_nodes;
        bn_counts[level] = count_op(m, "BatchNormalization");
        fused[level] = count_fused(m, "Conv", act);
        for (size_t k = 0; level == 3 && k < N_NPU_OPS; k++)
            groups[k] = groups_of(m, npu_ops[k]);
        rd_model_destroy(m);
    }
    same_bits(outs[0], outs[1], n_out);
    same_bits(outs[2], outs[3], n_out);
    for (int level = 0; level <= 3; level++)
        for (size_t o = 0; o < n_out; o++)
            rd_tensor_fini(&outs[level][o]);
    fprintf(stderr,
            "\n%s: nodes per level %d %d %d %d, BatchNormalization %d %d %d %d, Conv + %s fused at 3: %d; "
            "groups at 3:",
            mc->dir, node_counts[0], node_counts[1], node_counts[2], node_counts[3], bn_counts[0], bn_counts[1],
            bn_counts[2], bn_counts[3], act, fused[3]);
    for (size_t k = 0; k < N_NPU_OPS; k++)
        if (groups[k])
            fprintf(stderr, " %s %d", npu_ops[k], groups[k]);
    fputc(' ', stderr);
}

static int group_count(const int groups[N_NPU_OPS], const char *npu)
{
    for (size_t k = 0; k < N_NPU_OPS; k++)
        if (strcmp(npu_ops[k], npu) == 0)
            return groups[k];
    return -1;
}

static void test_ultraface(void)
{
    static const model_case mc = {"ultraface_rfb320", {"astronaut", "chelsea", NULL}};
    int nodes[4], bns[4], relus[4], groups[N_NPU_OPS];
    check_model(&mc, "Relu", nodes, bns, relus, groups);
    CU_ASSERT(bns[0] > 0);
    CU_ASSERT_EQUAL(bns[1], bns[0]);
    CU_ASSERT_EQUAL(bns[2], 0);
    CU_ASSERT_EQUAL(bns[3], 0);
    CU_ASSERT_EQUAL(nodes[2], nodes[1] - bns[0]);
    CU_ASSERT_EQUAL(nodes[3], nodes[2]);
    CU_ASSERT_EQUAL(relus[2], 0);
    CU_ASSERT(relus[3] > 0);
    /* every conv with its ReLU: ConvRelu, or ConvAddRelu where an RFB block's shortcut Add comes between */
    CU_ASSERT_EQUAL(group_count(groups, "ConvRelu") + group_count(groups, "ConvAddRelu"), relus[3]);
    CU_ASSERT(group_count(groups, "ConvAddRelu") > 0);
    CU_ASSERT_EQUAL(group_count(groups, "exSoftmax13"), 1); /* the scores: a softmax over the last axis */
}

/* MobileNetV2 as the official npu_device_test table shows it (Caffe's, with ReLU6 as Relu there, Clip here):
   every expand and depthwise conv with its activation, ConvAdd for the 10 inverted-residual shortcuts, and
   Conv for the 7 projections without a shortcut, the pooling (a conv) and the classifier. */
static void test_mobilenet(void)
{
    static const model_case mc = {"mobilenet_v2", {"chelsea", "coffee", NULL}};
    int nodes[4], bns[4], clips[4], groups[N_NPU_OPS];
    check_model(&mc, "Clip", nodes, bns, clips, groups);
    CU_ASSERT_EQUAL(clips[2], 0);
    CU_ASSERT(clips[3] > 0);
    CU_ASSERT_EQUAL(group_count(groups, "ConvClip"), clips[3]);
    CU_ASSERT_EQUAL(group_count(groups, "ConvAdd"), 10);
    CU_ASSERT_EQUAL(group_count(groups, "Conv"), 9);
    CU_ASSERT_EQUAL(group_count(groups, "Add"), 0);
}

static void test_mnist8(void)
{
    static const model_case mc = {"mnist8", {"set0", NULL, NULL}};
    int nodes[4], bns[4], relus[4], groups[N_NPU_OPS];
    check_model(&mc, "Relu", nodes, bns, relus, groups);
}

RD_TEST_REGISTER(register_passes_shared)
{
    RD_SUITE("passes on shared models", {"ultraface_rfb320", test_ultraface}, {"mobilenet_v2", test_mobilenet},
             {"mnist8", test_mnist8});
}
