/* test_rknn_config.c: RKNN's model_config.yml (the shared sample and variants), the platform and
 * dtype tables, and the errors naming file, line and key. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdio.h>
#include <string.h>

static void test_shared_sample(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rknn/model_config.yml", rd_test_shared_dir());
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_rknn_config_load(path, &c, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(c.name, "resnet50v2");
    CU_ASSERT_STRING_EQUAL(c.framework, "onnx");
    char want[4300];
    snprintf(want, sizeof want, "%s/rknn/resnet50v2.onnx", rd_test_shared_dir());
    CU_ASSERT_STRING_EQUAL(c.model_file_path, want);
    snprintf(want, sizeof want, "%s/rknn/dataset.txt", rd_test_shared_dir());
    CU_ASSERT_STRING_EQUAL(c.dataset, want);
    CU_ASSERT_TRUE(c.quantize);
    CU_ASSERT_EQUAL(c.dtype, RD_QDT_W8A8); /* asymmetric_quantized-8 */
    CU_ASSERT_EQUAL(c.line_dtype, 8);
    CU_ASSERT_EQUAL(c.n_mean, 1);
    CU_ASSERT_EQUAL(c.mean[0].n, 3);
    CU_ASSERT_DOUBLE_EQUAL(c.mean[0].v[0], 123.675, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(c.mean[0].v[2], 103.53, 1e-4);
    CU_ASSERT_EQUAL(c.n_std, 1);
    CU_ASSERT_DOUBLE_EQUAL(c.std[0].v[1], 58.82, 1e-4);
    CU_ASSERT_EQUAL(c.n_rgb2bgr, 1);
    CU_ASSERT_FALSE(c.rgb2bgr[0]);
    CU_ASSERT_EQUAL(c.algorithm, RD_QALGO_NORMAL);
    CU_ASSERT_EQUAL(c.method, RD_QMETHOD_CHANNEL);
    CU_ASSERT_EQUAL(c.optimization_level, 3);

    int64_t three = 3, one = 1;
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3588", &three, 1, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "RK3566", NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, NULL, &one, 1, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err.msg, "model_config.yml:9: mean_values for input 0 has 3 values, the input has 1 channel"));
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk9999", NULL, 0, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown target platform 'rk9999' (expected one of rv1103,"));
    int64_t two[2] = {3, 3};
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, NULL, two, 2, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mean_values lists 1 input, the model has 2"));

    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    CU_ASSERT_EQUAL(rd_rknn_config_input_spec(&c, 0, &spec, &err), RD_OK);
    CU_ASSERT_EQUAL(spec.n_mean, 3);
    CU_ASSERT_DOUBLE_EQUAL(spec.std[2], 58.82, 1e-4);
    CU_ASSERT_FALSE(spec.rgb2bgr);
    rd_rknn_config_fini(&c);
}

static const char *const base_head = "models:\n"
                                     "  name: m\n"
                                     "  platform: onnx\n"
                                     "  model_file_path: m.onnx\n"
                                     "  quantize: true\n";

static rd_status parse(const char *configs, rd_rknn_config *c, rd_error *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", base_head, configs);
    return rd_rknn_config_parse(text, strlen(text), "dir/bad.yml", c, err);
}

static void expect(const char *configs, rd_status code, const char *substr)
{
    rd_rknn_config c;
    rd_error err = {0};
    CU_ASSERT_EQUAL(parse(configs, &c, &err), code);
    if (!strstr(err.msg, substr)) {
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, substr);
        CU_FAIL("message");
    }
    rd_rknn_config_fini(&c);
}

static void test_errors(void)
{
    expect("  configs:\n    mean_values: [1, 2\n", RD_E_PARSE,
           "dir/bad.yml:8:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence at "
           "line 7)");
    expect("  configs: {\n", RD_E_PARSE, "YAML syntax error");
    expect("  dataset: [a]\n", RD_E_PARSE, "dir/bad.yml:6: dataset must be a string, not a list");
    expect("  configs:\n    quant_img_RGB2BGR: maybe\n", RD_E_PARSE,
           "dir/bad.yml:7: quant_img_RGB2BGR must be true or false, not 'maybe'");
    expect("  configs:\n    mean_values: [1, x, 3]\n", RD_E_PARSE,
           "dir/bad.yml:7: mean_values for input 0: value 1 is not a number ('x')");
    expect("  configs:\n    mean_values: ['1']\n", RD_E_PARSE, "is not a number ('1')");
    expect("  configs:\n    mean_values: 5\n", RD_E_PARSE, "mean_values must be a list");
    expect("  configs:\n    quantized_dtype: int4\n", RD_E_PARSE,
           "dir/bad.yml:7: quantized_dtype: unknown quantized dtype 'int4'");
    expect("  configs:\n    quantized_algorithm: best\n", RD_E_PARSE, "dir/bad.yml:7: quantized_algorithm: unknown");
    expect("  configs:\n    quantized_method: group\n", RD_E_PARSE, "group{SIZE}");
    expect("  configs:\n    optimization_level: 7\n", RD_E_PARSE, "optimization_level must be an integer from 0 to 3");
    expect("  quantize: yes please\n", RD_E_PARSE, "quantize must be true or false");
    expect("  configs:\n    mean_values: &a [1]\n    std_values: *a\n", RD_E_PARSE, "aliases");
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL(rd_rknn_config_parse("- a\n", 4, "list.yml", &c, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "list.yml:1: expected a mapping with the key 'models'"));
    CU_ASSERT_EQUAL(rd_rknn_config_parse("", 0, "empty.yml", &c, &err), RD_E_PARSE);
    CU_ASSERT_EQUAL(rd_rknn_config_parse("x: 1\n", 5, "top.yml", &c, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the key 'models' is missing"));
    CU_ASSERT_EQUAL(rd_rknn_config_load("/nonexistent.yml", &c, &err), RD_E_NOTFOUND);
}

/* The note of c holding substr, or NULL. */
static const char *note_with(const rd_rknn_config *c, const char *substr)
{
    for (size_t i = 0; i < c->n_notes; i++)
        if (strstr(c->notes[i], substr))
            return c->notes[i];
    return NULL;
}

/* Unknown keys are noted (ignored, with the closest known key), never silently dropped. */
static void test_unknown_keys_noted(void)
{
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(parse("  foo: 1\n  configs:\n    quantized_dtype: w8a8\n    mean_value: [1]\n"
                                "  subgraphs:\n    input_shapes: []\n",
                                &c, &err),
                          RD_OK);
    CU_ASSERT_EQUAL(c.n_notes, 3);
    CU_ASSERT_PTR_NOT_NULL(note_with(&c, "dir/bad.yml:6: unknown key 'foo' in models: ignored"));
    CU_ASSERT_PTR_NOT_NULL(note_with(&c, "dir/bad.yml:9: unknown key 'mean_value' in configs: ignored; did you mean "
                                         "'mean_values'?"));
    CU_ASSERT_PTR_NOT_NULL(note_with(&c, "dir/bad.yml:11: unknown key 'input_shapes' in subgraphs: ignored"));
    CU_ASSERT_EQUAL(c.n_mean, 0); /* the misspelt key applied nothing */
    rd_rknn_config_fini(&c);
    const char top[] = "models:\n  name: m\nextra: 1\n";
    CU_ASSERT_EQUAL_FATAL(rd_rknn_config_parse(top, sizeof top - 1, "t.yml", &c, &err), RD_OK);
    CU_ASSERT_PTR_NOT_NULL(note_with(&c, "t.yml:3: unknown key 'extra' in the top level: ignored"));
    rd_rknn_config_fini(&c);
}

/* Every other rknn.config() option: a note when it cannot change a result, a refusal when set to something
   not simulated, nothing at its default. */
static void test_other_options(void)
{
    static const char *const no_effect[] = {"remove_weight: true",          "compress_weight: true",
                                            "single_core_mode: true",       "enable_flash_attention: true",
                                            "auto_hybrid_cos_thresh: 0.98", "auto_hybrid_euc_thresh: 3.0"};
    static const struct {
        const char *line, *why;
    } refused[] = {{"quantized_hybrid_level: 3", "hybrid suggest"},
                   {"quantize_weight: true", "weight-only quantization"},
                   {"remove_reshape: true", "onnx-edit"},
                   {"inputs_yuv_fmt: [nv12]", "YUV inputs"},
                   {"op_target: {Conv_0: cpu}", "CPU or the NPU"},
                   {"sparse_infer: true", "sparse inference"},
                   {"float_dtype: bfloat16", "float_dtype 'bfloat16' is not simulated"}};
    static const char *const defaults[] = {
        "quantized_hybrid_level: 0", "quantize_weight: false", "remove_reshape: false",
        "inputs_yuv_fmt: null",      "op_target: {}",          "sparse_infer: false",
        "float_dtype: float16",      "model_pruning: false"};
    char text[512];
    rd_rknn_config c;
    rd_error err;
    for (size_t i = 0; i < sizeof no_effect / sizeof no_effect[0]; i++) {
        snprintf(text, sizeof text, "  configs:\n    %s\n", no_effect[i]);
        CU_ASSERT_EQUAL_FATAL(parse(text, &c, &err), RD_OK);
        CU_ASSERT_EQUAL(c.n_notes, 1);
        CU_ASSERT_PTR_NOT_NULL(note_with(&c, "dir/bad.yml:7: configs."));
        CU_ASSERT_PTR_NOT_NULL(note_with(&c, ": accepted, no effect on the analysis: "));
        rd_rknn_config_fini(&c);
    }
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(text, sizeof text, "  configs:\n    %s\n", refused[i].line);
        expect(text, RD_E_UNSUPPORTED, refused[i].why);
        expect(text, RD_E_UNSUPPORTED, "dir/bad.yml:7:");
    }
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        snprintf(text, sizeof text, "  configs:\n    %s\n", defaults[i]);
        CU_ASSERT_EQUAL_FATAL(parse(text, &c, &err), RD_OK);
        CU_ASSERT_EQUAL(c.n_notes, 0);
        CU_ASSERT_FALSE(c.model_pruning);
        rd_rknn_config_fini(&c);
    }
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    model_pruning: true\n", &c, &err), RD_OK);
    CU_ASSERT_TRUE(c.model_pruning);
    CU_ASSERT_EQUAL(c.line_model_pruning, 7);
    rd_rknn_config_fini(&c);
    expect("  configs:\n    model_pruning: sometimes\n", RD_E_PARSE, "model_pruning must be true or false");
}

/* input_size_list as the guide writes it: one string per input. */
static void test_input_size_list_forms(void)
{
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(
        parse("  subgraphs:\n    input_size_list:\n      - 1,3,512,512\n      - 1, 1, 8, 8\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.n_input_size_list, 2);
    CU_ASSERT_EQUAL(c.input_size_list[0].rank, 4);
    CU_ASSERT_EQUAL(c.input_size_list[0].dims[3], 512);
    CU_ASSERT_EQUAL(c.input_size_list[1].dims[1], 1);
    CU_ASSERT_EQUAL(c.line_input_size_list, 8);
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  subgraphs:\n    input_size_list: ['1,3,224,224']\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.input_size_list[0].dims[2], 224);
    rd_rknn_config_fini(&c);
    /* dynamic_input takes the same string shapes */
    CU_ASSERT_EQUAL_FATAL(
        parse("  configs:\n    dynamic_input:\n      - ['1,3,224,224']\n      - ['1,3,160,160']\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.n_dynamic_sets, 2);
    CU_ASSERT_EQUAL(c.dynamic_input[1].dims[3], 160);
    rd_rknn_config_fini(&c);
    /* given twice, the last wins (as PyYAML reads it) and the first is freed (it leaked: fuzz_yaml_config); a
       null one clears it */
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    dynamic_input: [[[1,3,8,8]], [[1,3,4,4]]]\n"
                                "    dynamic_input: [[[1,3,2,2]]]\n",
                                &c, &err),
                          RD_OK);
    CU_ASSERT_EQUAL(c.n_dynamic_sets, 1);
    CU_ASSERT_EQUAL(c.dynamic_input[0].dims[3], 2);
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    dynamic_input: [[[1,3,8,8]]]\n    dynamic_input:\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.n_dynamic_sets, 0);
    CU_ASSERT_PTR_NULL(c.dynamic_input);
    rd_rknn_config_fini(&c);
    expect("  subgraphs:\n    input_size_list: [1, 3, 224, 224]\n", RD_E_PARSE,
           "'1' is not a shape: give a list of shapes, one per input");
    expect("  subgraphs:\n    input_size_list:\n      - 1,3,x,224\n", RD_E_PARSE, "'1,3,x,224' is not a shape");
    expect("  subgraphs:\n    input_size_list:\n      - 1,3,,224\n", RD_E_PARSE, "is not a shape");
    expect("  subgraphs:\n    input_size_list:\n      - 1,-3,4\n", RD_E_PARSE, "is not a shape");
    expect("  subgraphs:\n    input_size_list:\n      - 1,1,1,1,1,1,1,1,1\n", RD_E_LIMIT, "rank above the limit");
}

static void test_platform_dtype_checks(void)
{
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    quantized_dtype: w4a16\n    quantized_method: group32\n", &c, &err),
                          RD_OK);
    CU_ASSERT_EQUAL(c.group_size, 32);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3576", NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rv1126b", NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3588", NULL, 0, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err.msg, "dir/bad.yml:7: target platform rk3588 does not support quantized_dtype w4a16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(it supports w8a8, float16)"));
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    target_platform: rk3562\n    quantized_dtype: w8a16\n"
                                "    quantized_algorithm: gdq\n",
                                &c, &err),
                          RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, NULL, NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3568", NULL, 0, &err), RD_E_UNSUPPORTED);
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    quantized_algorithm: gdq\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, NULL, NULL, 0, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err.msg, "dir/bad.yml:7: quantized_algorithm gdq needs quantized_dtype w4a16 or w8a16"));
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    quantized_method: group64\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, NULL, NULL, 0, &err), RD_E_UNSUPPORTED);
    rd_rknn_config_fini(&c);
    CU_ASSERT_EQUAL_FATAL(parse("  configs:\n    quantized_dtype: w16a16i_dfp\n", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rv1106", NULL, 0, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3588", NULL, 0, &err), RD_E_UNSUPPORTED);
    rd_rknn_config_fini(&c);
}

static void test_multi_input_and_plain_fields(void)
{
    rd_rknn_config c;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(parse("  dataset: /abs/list.txt\n"
                                "  configs:\n"
                                "    mean_values: [[0, 0, 0], [127.5]]\n"
                                "    std_values: [[1, 2, 3], [127.5]]\n"
                                "    quant_img_RGB2BGR: [true, false]\n"
                                "    custom_string: hello\n"
                                "    dynamic_input: [[[1,3,224,224],[1,1,8,8]], [[1,3,192,192],[1,1,4,4]]]\n"
                                "  subgraphs:\n"
                                "    input_size_list:\n"
                                "      - [1, 3, 224, 224]\n"
                                "      - [1, 1, 8, 8]\n"
                                "    inputs: [x, y]\n"
                                "    outputs: [z]\n",
                                &c, &err),
                          RD_OK);
    CU_ASSERT_STRING_EQUAL(c.dataset, "/abs/list.txt");
    CU_ASSERT_STRING_EQUAL(c.model_file_path, "dir/m.onnx");
    CU_ASSERT_EQUAL(c.n_mean, 2);
    CU_ASSERT_EQUAL(c.mean[1].n, 1);
    CU_ASSERT_DOUBLE_EQUAL(c.std[1].v[0], 127.5, 1e-6);
    CU_ASSERT_EQUAL(c.n_rgb2bgr, 2);
    CU_ASSERT_TRUE(c.rgb2bgr[0]);
    CU_ASSERT_FALSE(c.rgb2bgr[1]);
    CU_ASSERT_STRING_EQUAL(c.custom_string, "hello");
    CU_ASSERT_EQUAL(c.n_dynamic_sets, 2);
    CU_ASSERT_EQUAL(c.n_dynamic_per_set, 2);
    CU_ASSERT_EQUAL(c.dynamic_input[3].dims[3], 4);
    CU_ASSERT_EQUAL(c.n_input_size_list, 2);
    CU_ASSERT_EQUAL(c.input_size_list[0].rank, 4);
    CU_ASSERT_EQUAL(c.input_size_list[0].dims[2], 224);
    CU_ASSERT_EQUAL(c.n_sub_inputs, 2);
    CU_ASSERT_STRING_EQUAL(c.sub_outputs[0], "z");
    int64_t ch[2] = {3, 1};
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3588", ch, 2, &err), RD_OK);
    int64_t wrong[2] = {3, 3};
    CU_ASSERT_EQUAL(rd_rknn_config_validate(&c, "rk3588", wrong, 2, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(err.msg, "dir/bad.yml:8: mean_values for input 1 has 1 value, the input has 3 channels"));
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    CU_ASSERT_EQUAL(rd_rknn_config_input_spec(&c, 0, &spec, &err), RD_OK);
    CU_ASSERT_TRUE(spec.rgb2bgr);
    CU_ASSERT_EQUAL(rd_rknn_config_input_spec(&c, 1, &spec, &err), RD_OK);
    CU_ASSERT_FALSE(spec.rgb2bgr);
    CU_ASSERT_EQUAL(spec.n_mean, 1);
    CU_ASSERT_EQUAL(rd_rknn_config_input_spec(&c, 2, &spec, &err), RD_E_PARSE);
    rd_rknn_config_fini(&c);

    /* unquantized: float16 by default; a single RGB2BGR bool covers every input */
    const char text[] = "models:\n  name: m\n  quantize: false\n  configs:\n    quant_img_RGB2BGR: true\n";
    CU_ASSERT_EQUAL_FATAL(rd_rknn_config_parse(text, sizeof text - 1, "f.yml", &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c.dtype, RD_QDT_FLOAT16);
    CU_ASSERT_EQUAL(rd_rknn_config_input_spec(&c, 5, &spec, &err), RD_OK);
    CU_ASSERT_TRUE(spec.rgb2bgr);
    rd_rknn_config_fini(&c);
}

static void test_tables_and_names(void)
{
    CU_ASSERT_EQUAL(rd_platform_count(), 11);
    for (size_t i = 0; i < rd_platform_count(); i++) {
        const rd_platform_info *p = rd_platform_get(i);
        CU_ASSERT_TRUE(rd_platform_supports(p, RD_QDT_W8A8));
        CU_ASSERT_TRUE(rd_platform_supports(p, RD_QDT_FLOAT16));
        CU_ASSERT_PTR_NOT_NULL(p->dump_dir);
        CU_ASSERT_PTR_EQUAL(rd_platform_find(p->name), p);
    }
    CU_ASSERT_PTR_NULL(rd_platform_get(11));
    CU_ASSERT_EQUAL(rd_platform_find("rk3566")->c2_int8, 8);
    CU_ASSERT_EQUAL(rd_platform_find("rk3588")->c2_f16, 8);
    CU_ASSERT_STRING_EQUAL(rd_platform_find("rv1106")->dump_dir, "/tmp/dumps");
    CU_ASSERT_TRUE(rd_platform_supports(rd_platform_find("rk3562"), RD_QDT_W8A16));
    CU_ASSERT_FALSE(rd_platform_supports(rd_platform_find("rk3588"), RD_QDT_W8A16));

    rd_qdtype dt;
    rd_error err;
    CU_ASSERT_EQUAL(rd_qdtype_parse("asymmetric_quantized-8", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(dt, RD_QDT_W8A8);
    CU_ASSERT_EQUAL(rd_qdtype_parse("fp16", &dt, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_precision_parse("fp16", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(dt, RD_QDT_FLOAT16);
    CU_ASSERT_EQUAL(rd_precision_parse("int8", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(dt, RD_QDT_W8A8);
    CU_ASSERT_EQUAL(rd_precision_parse("fp32", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(dt, RD_QDT_FLOAT32);
    CU_ASSERT_EQUAL(rd_precision_parse("w16a16i", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_precision_parse("int16", &dt, &err), RD_OK);
    CU_ASSERT_EQUAL(dt, RD_QDT_W16A16I);
    CU_ASSERT_EQUAL(rd_precision_parse("int4", &dt, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "expected fp32, fp16, int8"));
    rd_qmethod m;
    int g;
    CU_ASSERT_EQUAL(rd_qmethod_parse("group128", &m, &g, &err), RD_OK);
    CU_ASSERT_EQUAL(g, 128);
    CU_ASSERT_EQUAL(rd_qmethod_parse("group0", &m, &g, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_qmethod_parse("group12x", &m, &g, &err), RD_E_INVAL);
    for (int i = 0; i < RD_QDT_COUNT; i++) {
        if (i == RD_QDT_FLOAT32)
            continue;
        CU_ASSERT_EQUAL(rd_qdtype_parse(rd_qdtype_name((rd_qdtype)i), &dt, &err), RD_OK);
        CU_ASSERT_EQUAL(dt, (rd_qdtype)i);
    }
    rd_qalgo a;
    for (int i = 0; i < RD_QALGO_COUNT; i++) {
        CU_ASSERT_EQUAL(rd_qalgo_parse(rd_qalgo_name((rd_qalgo)i), &a, &err), RD_OK);
        CU_ASSERT_EQUAL(a, (rd_qalgo)i);
    }
}

RD_TEST_REGISTER(register_rknn_config_tests)
{
    RD_SUITE("rknn_config", {"shared model_config.yml", test_shared_sample}, {"errors", test_errors},
             {"platform and dtype checks", test_platform_dtype_checks},
             {"multi-input and plain fields", test_multi_input_and_plain_fields},
             {"tables and names", test_tables_and_names}, {"unknown keys are noted", test_unknown_keys_noted},
             {"other rknn.config options", test_other_options},
             {"input_size_list as the guide writes it", test_input_size_list_forms});
}
