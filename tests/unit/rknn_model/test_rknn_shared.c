/*
 * test_rknn_shared.c: the .rknn reader on ../shared/rknn/models (read in place): facts checked by hand
 * against ../shared/docs/rknn-model-format.md section 8, the real files mutated in memory (every
 * truncation, overwritten FlatBuffer words, the JSON and dict sections cut or broken), and the packed conv
 * weights against the float weights of the ONNX model they were built from.
 */
#include "find_named.h"
#include "rd_test.h"
#include "rknn_diag/rknn_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *model_path(const char *rel)
{
    return rd_test_shared_file("rknn/models/%s", rel);
}

static rd_rknn_model *load(const char *rel)
{
    rd_rknn_model *m = NULL;
    rd_error err;
    char *path = model_path(rel);
    rd_status st = rd_rknn_load(path, NULL, &m, &err);
    free(path);
    rd_test_require_ok(st, rel, err.msg);
    return m;
}

static const rd_rknn_node *node_named(const rd_rknn_graph *g, const char *name)
{
    return RD_FIND_NAMED(rd_rknn_node, g->nodes, g->n_nodes, name, name);
}

static const rd_rknn_op_count *ops_of(const rd_rknn_graph *g, const char *op)
{
    return RD_FIND_NAMED(rd_rknn_op_count, g->ops, g->n_ops, op_type, op);
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-5 * fmax(1.0, fabs(b));
}

static void test_multiple_input_rk3566(void)
{
    rd_rknn_model *m = load("multiple_input_demo/RK3566_RK3568.rknn");
    const rd_rknn_info *in = rd_rknn_info_get(m);
    CU_ASSERT(in->format_version == 6 && in->header_bytes == 64 && in->model_bytes == 22592 && in->json_bytes == 1348);
    CU_ASSERT_STRING_EQUAL(in->format, "RKNPU lite");
    CU_ASSERT_STRING_EQUAL(in->target_platform, "rk3566");
    CU_ASSERT_STRING_EQUAL(in->toolkit_version, "1.6.2-source_code");
    CU_ASSERT_STRING_EQUAL(in->compiler_version, "1.6.2b0");
    CU_ASSERT_EQUAL(in->compiler_version_number, 10602);
    CU_ASSERT_EQUAL(rd_rknn_blob_count(m), 9);
    CU_ASSERT_EQUAL(rd_rknn_warning_count(m), 0);
    CU_ASSERT_EQUAL_FATAL(in->n_runtime_io, 3);
    CU_ASSERT(strcmp(in->runtime_io[0].name, "input.1") == 0 && strcmp(in->runtime_io[0].layout, "NHWC") == 0);
    CU_ASSERT(strcmp(in->runtime_io[2].name, "8") == 0 && strcmp(in->runtime_io[2].layout, "NCHW") == 0);
    CU_ASSERT_EQUAL_FATAL(in->n_io_attrs, 3);
    CU_ASSERT(in->io_attrs[1].n_mean == 3 && in->io_attrs[1].mean[2] == 0 && in->io_attrs[1].std[0] == 1);
    CU_ASSERT(in->n_quant_tab == 3 && strcmp(in->quant_tab[2].qtype, "asymmetric_quantized") == 0 &&
              near(in->quant_tab[2].min[0], -612.123));
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    CU_ASSERT(g->n_tensors == 14 && g->n_nodes == 5 && g->n_inputs == 2 && g->n_outputs == 1);
    const rd_rknn_node *add = node_named(g, "Conv:Conv_0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(add);
    CU_ASSERT(strcmp(add->op_type, "ConvAdd") == 0 && add->target == RD_RKNN_TARGET_NPU && add->n_inputs == 4);
    static const char *const ins[] = {"input.1", "conv1.weight", "conv1.bias", "7"};
    for (int i = 0; i < 4; i++)
        CU_ASSERT_STRING_EQUAL(rd_rknn_tensor_name(g, add->inputs[i]), ins[i]);
    CU_ASSERT_STRING_EQUAL(rd_rknn_tensor_name(g, add->outputs[0]), "8");
    CU_ASSERT(add->param_type == 1 && add->n_params == 5 && add->params[3].value.n == 4);
    const rd_rknn_tensor *t7 = rd_rknn_find_tensor(g, "7"), *t8 = rd_rknn_find_tensor(g, "8");
    CU_ASSERT(t7 && near(t7->scale[0], 2.61823) && t7->zero_point[0] == 16 && near(t7->min[0], -376.489));
    CU_ASSERT(t8 && near(t8->scale[0], 4.14237) && t8->zero_point[0] == 20 && t8->role == RD_RKNN_ROLE_OUTPUT);
    CU_ASSERT(t7->producer == 2 && t7->n_consumers == 1 && t7->mem_offset == 65536 && t7->size == 262144);
    const rd_rknn_node *out = &g->nodes[4];
    CU_ASSERT(out->attrs && out->attrs->kind == RD_RKNN_V_BYTES && out->attrs->len == 16 && out->attrs->s[8] == 2);
    CU_ASSERT(out->n_task_counts == 1 && out->task_counts[0] == 8);
    const rd_rknn_op_count *c = ops_of(g, "InputOperator");
    CU_ASSERT(c && c->total == 2 && c->on_cpu == 2 && c->int8 == 2);
    rd_rknn_destroy(m);
}

static void test_pp_human(void)
{
    rd_rknn_model *m = load("pp_human_segv2/RK3566_RK3568.rknn");
    const rd_rknn_info *in = rd_rknn_info_get(m);
    CU_ASSERT_STRING_EQUAL(in->toolkit_version, "2.3.1-source_code");
    CU_ASSERT_STRING_EQUAL(in->compiler_version, "2.3.2");
    CU_ASSERT_EQUAL(in->compiler_version_number, 20302);
    CU_ASSERT_EQUAL(rd_rknn_blob_count(m), 636);
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    CU_ASSERT(g->n_tensors == 766 && g->n_nodes == 102);
    static const struct {
        const char *op;
        size_t total, cpu;
    } want[] = {{"ConvRelu", 32, 0},     {"ConvAddRelu", 22, 0},   {"Resize", 14, 0},
                {"Conv", 12, 0},         {"ConvAdd", 7, 0},        {"AddRelu", 6, 0},
                {"Add", 4, 0},           {"ArgMax", 1, 1},         {"Concat", 1, 0},
                {"InputOperator", 1, 1}, {"OutputOperator", 1, 1}, {"Reshape", 1, 1}};
    CU_ASSERT_EQUAL(g->n_ops, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const rd_rknn_op_count *c = ops_of(g, want[i].op);
        CU_ASSERT(c && c->total == want[i].total && c->on_cpu == want[i].cpu);
    }
    CU_ASSERT_STRING_EQUAL(g->ops[0].op_type, "ConvRelu");
    const rd_rknn_node *n6 = &g->nodes[6];
    CU_ASSERT(strcmp(n6->op_type, "ConvAddRelu") == 0 && strcmp(n6->name, "Conv:Conv.5_ConvAddRelu") == 0);
    const rd_rknn_tensor *res = &g->tensors[n6->inputs[3]], *o = &g->tensors[n6->outputs[0]];
    CU_ASSERT(strcmp(res->name, "batch_norm_4.tmp_2") == 0 && near(res->scale[0], 0.00322756) &&
              res->zero_point[0] == 26);
    CU_ASSERT(strcmp(o->name, "relu_4.tmp_0") == 0 && o->zero_point[0] == -128 && o->min[0] == 0);
    const rd_rknn_node *cat = node_named(g, "Concat:Concat.13");
    CU_ASSERT(cat && cat->param_type == 19 && cat->n_params == 1 && cat->params[0].value.i == 1 && cat->n_inputs == 4);
    CU_ASSERT(cat && rd_rknn_value_get(cat->attrs, "axis")->i == 1);
    const rd_rknn_node *argmax = node_named(g, "ArgMax:ArgMax.0");
    CU_ASSERT(argmax && argmax->target == RD_RKNN_TARGET_CPU && rd_rknn_value_get(argmax->attrs, "keepdims")->i == 1);
    CU_ASSERT(argmax && rd_rknn_node_dtype(g, argmax) == RD_DT_I8);
    const rd_rknn_node *rs = node_named(g, "Resize:Resize.0");
    CU_ASSERT(rs && rs->param_type == 26 && rs->n_params == 3 && rs->params[0].value.kind == RD_RKNN_V_STRING);
    const rd_rknn_tensor *x = rd_rknn_find_tensor(g, "x");
    CU_ASSERT(x && near(x->scale[0], 0.00784314) && x->zero_point[0] == 0);
    CU_ASSERT(in->n_io_attrs == 2 && in->io_attrs[0].n_mean == 3 && in->io_attrs[0].mean[1] == 127.5 &&
              in->io_attrs[0].std[2] == 127.5);
    CU_ASSERT(in->n_quant_tab == 1 && strcmp(in->quant_tab[0].qtype, "asym") == 0);
    const rd_rknn_tensor *out = rd_rknn_find_tensor(g, "argmax_0.tmp_0");
    CU_ASSERT(out && out->dtype == RD_DT_I64 && out->rank == 3 && out->n_scale == 0);
    rd_rknn_destroy(m);
}

static void test_dual_residual(void)
{
    rd_rknn_model *m = load("dual_residual/RK3566_RK3568.rknn");
    const rd_rknn_info *in = rd_rknn_info_get(m);
    CU_ASSERT_STRING_EQUAL(in->toolkit_version, "1.6.1-source_code");
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    CU_ASSERT(g->n_tensors == 11 && g->n_nodes == 7);
    const rd_rknn_node *cst = node_named(g, "cstDualResidual:cstDualResidual_0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cst);
    CU_ASSERT(cst->target == RD_RKNN_TARGET_CPU && rd_rknn_value_get(cst->attrs, "alpha")->f == 0.5);
    CU_ASSERT_EQUAL(rd_rknn_node_dtype(g, cst), RD_DT_F16);
    const rd_rknn_op_count *c = ops_of(g, "Conv");
    CU_ASSERT(c && c->total == 2 && c->float16 == 2 && c->on_npu == 2);
    CU_ASSERT_EQUAL_FATAL(in->n_io_attrs, 4);
    const rd_rknn_io_attr *o = &in->io_attrs[2];
    CU_ASSERT(o->is_output && o->shape && o->shape->n == 4 && o->shape->items[0].kind == RD_RKNN_V_STRING &&
              strcmp(o->shape->items[0].s, "cstDualResidual2_dim_0") == 0);
    CU_ASSERT(in->n_quant_tab == 4 && strcmp(in->quant_tab[3].dtype, "float16") == 0 && in->quant_tab[3].n_min == 0);
    CU_ASSERT(strcmp(in->runtime_io[0].dtype, "float16") == 0);
    rd_rknn_destroy(m);
}

static uint8_t *read_whole(const char *rel, size_t *len)
{
    char *path = model_path(rel);
    uint8_t *buf = rd_test_read_file(path, len);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    return buf;
}

static size_t refused(const uint8_t *buf, size_t len)
{
    rd_rknn_model *m = NULL;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_rknn_parse(buf, len, "mutated.rknn", NULL, &m, &err);
    if (st != RD_OK) {
        CU_ASSERT(err.msg[0] && m == NULL && rd_status_exit_code(st) == 3);
        return 1;
    }
    rd_rknn_destroy(m);
    return 0;
}

static void test_truncated_real_files(void)
{
    size_t len;
    uint8_t *f = read_whole("multiple_input_demo/RK3562.rknn", &len);
    size_t n = 0;
    for (size_t cut = 0; cut < len; cut++)
        n += refused(f, cut);
    CU_ASSERT_EQUAL(n, len); /* every cut is an error */
    free(f);
    f = read_whole("pp_human_segv2/RK3566_RK3568.rknn", &len);
    n = 0;
    size_t tries = 0;
    for (size_t cut = 0; cut < len; cut += 4999, tries++)
        n += refused(f, cut);
    CU_ASSERT_EQUAL(n, tries);
    free(f);
}

static void test_overwritten_words(void)
{
    size_t len;
    uint8_t *f = read_whole("multiple_input_demo/RK3566_RK3568.rknn", &len);
    static const uint32_t evil[] = {0, 0x7fffffffu, 0xfffffff8u};
    size_t n = 0, runs = 0;
    uint8_t *copy = malloc(len);
    for (size_t pos = 64; pos + 4 <= 64 + 22592; pos += 4)
        for (size_t k = 0; k < 3; k++, runs++) {
            memcpy(copy, f, len);
            memcpy(copy + pos, &evil[k], 4);
            n += refused(copy, len);
        }
    CU_ASSERT(n > runs / 10);
    free(copy);
    free(f);
    f = read_whole("pp_human_segv2/RK3566_RK3568.rknn", &len);
    copy = malloc(len);
    for (size_t pos = 64; pos + 4 <= 64 + 200000; pos += 4 * 41) {
        memcpy(copy, f, len);
        memcpy(copy + pos, &evil[1], 4);
        refused(copy, len); /* either outcome; the sanitizers watch */
    }
    free(copy);
    free(f);
}

static void test_sections_broken(void)
{
    size_t len;
    uint8_t *f = read_whole("multiple_input_demo/RK3566_RK3568.rknn", &len);
    rd_rknn_model *m;
    rd_error err;
    uint64_t jlen = 1348 - 200; /* the JSON cut short: its length says less */
    uint8_t *copy = malloc(len);
    memcpy(copy, f, len);
    memcpy(copy + 64 + 22592, &jlen, 8);
    CU_ASSERT_EQUAL(rd_rknn_parse(copy, len - 200, "cutjson.rknn", NULL, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "JSON section: byte"));
    /* the dict string: break it where it is */
    memcpy(copy, f, len);
    uint8_t *dict = memmem(copy, len, "{'attrs'", 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dict);
    uint8_t *quote = memchr(dict + 10, '\'', 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(quote);
    *quote = ' '; /* a key's closing quote removed: the string runs on */
    CU_ASSERT_EQUAL(rd_rknn_parse(copy, len, "dict.rknn", NULL, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Model slot 3 (dict string)"));
    /* input_json */
    memcpy(copy, f, len);
    uint8_t *ij = memmem(copy, len, "{\"input.1\": {", 13);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ij);
    ij[0] = '[';
    CU_ASSERT_EQUAL(rd_rknn_parse(copy, len, "ij.rknn", NULL, &m, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "input_json"));
    /* encrypted */
    memcpy(copy, "CYPTRKNN", 8);
    CU_ASSERT_EQUAL(rd_rknn_parse(copy, len, "enc.rknn", NULL, &m, &err), RD_E_UNSUPPORTED);
    free(copy);
    free(f);
}

/* OIHW float weights of an ONNX initializer. */
static const float *onnx_weight(const rd_model *om, const char *name, const rd_tensor **t)
{
    int v = rd_model_find_value(om, name);
    CU_ASSERT_FATAL(v >= 0);
    *t = rd_model_constant(om, (size_t)v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*t);
    CU_ASSERT_EQUAL_FATAL((*t)->dtype, RD_DT_F32);
    return (*t)->data;
}

/*
 * The finding: every int8 code is the per-output-channel asymmetric quantization of the ONNX weight
 * (range [min(w, 0), max(w, 0)], scale = range / 255, zero point = -128 - round(min / scale)), and the
 * padding lanes of the packed layout hold that zero point.
 */
static void check_weights(const char *rel, const rd_model *om)
{
    rd_rknn_model *m = load(rel);
    const rd_rknn_graph *g = rd_rknn_graph_at(m, 0);
    static const char *const names[] = {"conv1.weight", "conv2.weight"};
    for (int k = 0; k < 2; k++) {
        const rd_rknn_tensor *t = rd_rknn_find_tensor(g, names[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        const rd_tensor *ot;
        const float *w = onnx_weight(om, names[k], &ot);
        int64_t O = t->shape[0], per = t->shape[1] * t->shape[2] * t->shape[3];
        CU_ASSERT(ot->rank == 4 && ot->dims[0] == O && ot->dims[1] * ot->dims[2] * ot->dims[3] == per);
        int8_t *codes = malloc((size_t)(O * per));
        int32_t *pad = malloc((size_t)O * sizeof *pad);
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(rd_rknn_unpack_conv_weight(m, t, codes, (size_t)(O * per), pad, &err), RD_OK);
        int64_t exact = 0, off1 = 0, pad_ok = 0;
        for (int64_t o = 0; o < O; o++) {
            float lo = 0, hi = 0;
            for (int64_t i = 0; i < per; i++) {
                lo = fminf(lo, w[o * per + i]);
                hi = fmaxf(hi, w[o * per + i]);
            }
            double scale = ((double)hi - lo) / 255.0;
            long zp = -128 - lround(lo / scale);
            pad_ok += pad[o] == zp;
            for (int64_t i = 0; i < per; i++) {
                long q = lround(w[o * per + i] / scale) + zp;
                q = q < -128 ? -128 : q > 127 ? 127 : q;
                exact += q == codes[o * per + i];
                off1 += labs(q - codes[o * per + i]) <= 1;
            }
        }
        fprintf(stderr,
                "%s %s: %lld of %lld codes exact, %lld within 1; padding lane = zero point on %lld of %lld "
                "channels\n",
                rel, names[k], (long long)exact, (long long)(O * per), (long long)off1, (long long)pad_ok,
                (long long)O);
        CU_ASSERT_EQUAL(off1, O * per);
        CU_ASSERT(exact * 100 >= O * per * 99);
        CU_ASSERT_EQUAL(pad_ok, O);
        free(codes);
        free(pad);
    }
    rd_rknn_destroy(m);
}

static void test_weights_match_onnx(void)
{
    char *onnx = model_path("multiple_input_demo/test.onnx");
    rd_model *om = NULL;
    rd_error err;
    rd_status st = rd_model_load(onnx, NULL, &om, &err);
    free(onnx);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    check_weights("multiple_input_demo/RK3566_RK3568.rknn", om);
    check_weights("multiple_input_demo/RK3562.rknn", om);
    rd_model_destroy(om);
}

RD_TEST_REGISTER(reg_rknn_shared)
{
    RD_SUITE("rknn_shared", {"multiple_input_demo RK3566: facts", test_multiple_input_rk3566},
             {"pp_human_segv2: facts", test_pp_human}, {"dual_residual: facts", test_dual_residual},
             {"real files truncated", test_truncated_real_files},
             {"real files with FlatBuffer words overwritten", test_overwritten_words},
             {"real files with JSON, dict and input_json broken", test_sections_broken},
             {"packed conv weights match the ONNX weights per channel", test_weights_match_onnx});
}
