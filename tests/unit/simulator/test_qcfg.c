/* test_qcfg.c: RKNN's .quantization.cfg: the manual's sample, block and flow forms, RKNN's written
 * layout, exact write-then-read over random parameters, and errors naming file, line and tensor. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_shared_example(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rknn/example.quantization.cfg", rd_test_shared_dir());
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(path, &q, &err), RD_OK);
    CU_ASSERT_EQUAL(q.n_layers, 0);
    CU_ASSERT_EQUAL_FATAL(q.n_params, 1);
    const rd_qcfg_param *p = rd_qcfg_find(&q, "Preprocessor/sub:0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_STRING_EQUAL(p->qtype, "asymmetric_quantized");
    CU_ASSERT_EQUAL(p->method, RD_QMETHOD_LAYER);
    CU_ASSERT_EQUAL(p->dtype, RD_DT_I8);
    CU_ASSERT_EQUAL(p->n, 1);
    CU_ASSERT_EQUAL(p->line, 3);
    CU_ASSERT_EQUAL(p->has, 0x3fu);
    CU_ASSERT_EQUAL(p->min[0], -1.0f);
    CU_ASSERT_EQUAL(p->max[0], 1.0f);
    CU_ASSERT_EQUAL(p->scale[0], 0.00784313725490196f);
    CU_ASSERT_EQUAL(p->zero_point[0], 0);
    CU_ASSERT_EQUAL(p->ori_max[0], 1.0f);
    CU_ASSERT_PTR_NULL(rd_qcfg_find(&q, "nope"));

    /* written back in RKNN's layout: the file minus its elision line, except the float formatting */
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_write(&q, &buf, &len, &err), RD_OK);
    const char *want = "custom_quantize_layers: {}\n"
                       "quantize_parameters:\n"
                       "     Preprocessor/sub:0:\n"
                       "          qtype: asymmetric_quantized\n"
                       "          qmethod: layer\n"
                       "          dtype: int8\n"
                       "          min:\n"
                       "          -    -1.0\n"
                       "          max:\n"
                       "          -    1.0\n"
                       "          scale:\n"
                       "          -    0.007843138\n"
                       "          zero_point:\n"
                       "          -    0\n"
                       "          ori_min:\n"
                       "          -    -1.0\n"
                       "          ori_max:\n"
                       "          -    1.0\n";
    CU_ASSERT_STRING_EQUAL(buf, want);
    CU_ASSERT_EQUAL(len, strlen(want));
    free(buf);
    rd_qcfg_fini(&q);
}

static void test_flow_and_block_forms(void)
{
    const char text[] = "custom_quantize_layers: {conv1: float16, 'add:0': int16}\n"
                        "quantize_parameters:\n"
                        "  conv1: {qtype: asymmetric_quantized, qmethod: channel, dtype: int8,\n"
                        "          min: [-1, -2.5], max: [1, 2.5], scale: [0.1, 0.2], zero_point: [0, -3]}\n"
                        "  'add:0':\n"
                        "    qmethod: layer\n"
                        "    dtype: int16\n"
                        "    scale:\n"
                        "    - 1.0e-05\n"
                        "  f16_out:\n"
                        "    qtype: float16\n"
                        "    qmethod: layer\n"
                        "    dtype: float16\n";
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_parse(text, sizeof text - 1, "flow.cfg", &q, &err), RD_OK);
    CU_ASSERT_EQUAL(q.n_layers, 2);
    CU_ASSERT_EQUAL(rd_qcfg_find_layer(&q, "add:0")->dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(rd_qcfg_find_layer(&q, "conv1")->dtype, RD_DT_F16);
    const rd_qcfg_param *p = rd_qcfg_find(&q, "conv1");
    CU_ASSERT_EQUAL(p->method, RD_QMETHOD_CHANNEL);
    CU_ASSERT_EQUAL(p->n, 2);
    CU_ASSERT_EQUAL(p->min[1], -2.5f);
    CU_ASSERT_EQUAL(p->zero_point[1], -3);
    CU_ASSERT_EQUAL(p->has & RD_QCFG_HAS_ORI_MIN, 0);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "add:0")->scale[0], 1.0e-05f);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "f16_out")->dtype, RD_DT_F16);
    CU_ASSERT_EQUAL(rd_qcfg_find(&q, "f16_out")->has, 0);
    /* and back: block form, quoted where a name needs it */
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_write(&q, &buf, &len, &err), RD_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "custom_quantize_layers:\n     conv1: float16\n     add:0: int16\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "          scale:\n          -    1.0e-05\n"));
    rd_qcfg q2;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_parse(buf, len, "again.cfg", &q2, &err), RD_OK);
    CU_ASSERT_EQUAL(q2.n_params, 3);
    CU_ASSERT_EQUAL(q2.n_layers, 2);
    rd_qcfg_fini(&q2);
    free(buf);
    rd_qcfg_fini(&q);
}

static uint32_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static float random_float(uint64_t *s)
{
    for (;;) {
        uint32_t bits = rng(s) ^ (rng(s) << 16);
        float f;
        memcpy(&f, &bits, sizeof f);
        if (isfinite(f))
            return f;
    }
}

static bool same_floats(const float *a, const float *b, size_t n)
{
    if (!a || !b)
        return a == b;
    return memcmp(a, b, n * sizeof *a) == 0; /* bit-exact, -0.0 included */
}

static void test_random_round_trip(void)
{
    static const char *const names[] = {
        "Conv__350:0", "concat:0_before_conv", "x_sw", "y-rs", "z#1", "true", "1.5", "-lead", "a: b", "it's",
        "/backbone/Conv_output_0", "null", "tab\there", "#c",
        /* characters YAML does not allow raw in a stream, written escaped (fuzz_qcfg: U+0087): C1 controls,
           U+0085 (a line break), U+FFFE, U+FFFF; and U+00A0 and U+2028 beside them */
        "c1\xc2\x87x", "\xc2\x80\xc2\x9f", "nel\xc2\x85", "nonchar\xef\xbf\xbe\xef\xbf\xbf",
        "nbsp\xc2\xa0\xe2\x80\xa8"};
    uint64_t seed = 12345;
    rd_qcfg q;
    rd_qcfg_init(&q);
    rd_error err;
    for (int t = 0; t < 60; t++) {
        char name[64];
        if (t < (int)(sizeof names / sizeof names[0]))
            snprintf(name, sizeof name, "%s", names[t]);
        else
            snprintf(name, sizeof name, "tensor_%d:0", t);
        size_t n = (rng(&seed) % 2) ? 1 : 1 + rng(&seed) % 64;
        float f[5][64];
        int32_t z[64];
        for (size_t i = 0; i < n; i++) {
            for (int k = 0; k < 5; k++)
                f[k][i] = random_float(&seed);
            z[i] = (int32_t)rng(&seed) - (int32_t)(rng(&seed) % 3);
        }
        f[0][0] = (t == 3) ? -0.0f : f[0][0];
        rd_qcfg_param p = {.name = name,
                           .qtype = "asymmetric_quantized",
                           .method = n == 1 && (t % 3) ? RD_QMETHOD_LAYER : RD_QMETHOD_CHANNEL,
                           .dtype = t % 4 ? RD_DT_I8 : RD_DT_I16,
                           .has = (t % 5) ? 0x3fu : 0x0fu,
                           .n = n,
                           .min = f[0],
                           .max = f[1],
                           .scale = f[2],
                           .ori_min = f[3],
                           .ori_max = f[4],
                           .zero_point = z};
        CU_ASSERT_EQUAL_FATAL(rd_qcfg_add_param(&q, &p, &err), RD_OK);
        if (t % 7 == 0)
            CU_ASSERT_EQUAL(rd_qcfg_add_layer(&q, name, t % 2 ? RD_DT_F16 : RD_DT_I16, &err), RD_OK);
    }
    CU_ASSERT_EQUAL(rd_qcfg_add_param(&q, &q.params[0], &err), RD_E_INVAL); /* a name twice */
    char *dir = rd_test_tmpdir("qcfg");
    char path[4200];
    snprintf(path, sizeof path, "%s/model.quantization.cfg", dir);
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_save(path, &q, &err), RD_OK);
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_NOT_EQUAL(access(tmp, F_OK), 0); /* renamed into place */
    rd_qcfg r;
    rd_status st = rd_qcfg_load(path, &r, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL_FATAL(r.n_params, q.n_params);
    CU_ASSERT_EQUAL(r.n_layers, q.n_layers);
    for (size_t i = 0; i < q.n_params; i++) {
        const rd_qcfg_param *a = &q.params[i], *b = rd_qcfg_find(&r, a->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_STRING_EQUAL(a->qtype, b->qtype);
        CU_ASSERT_EQUAL(a->method, b->method);
        CU_ASSERT_EQUAL(a->dtype, b->dtype);
        CU_ASSERT_EQUAL(a->has, b->has);
        CU_ASSERT_EQUAL(a->n, b->n);
        CU_ASSERT_TRUE(same_floats(a->min, b->min, a->n));
        CU_ASSERT_TRUE(same_floats(a->max, b->max, a->n));
        CU_ASSERT_TRUE(same_floats(a->scale, b->scale, a->n));
        CU_ASSERT_TRUE(same_floats(a->ori_min, b->ori_min, a->n));
        CU_ASSERT_TRUE(same_floats(a->ori_max, b->ori_max, a->n));
        CU_ASSERT_EQUAL(memcmp(a->zero_point, b->zero_point, a->n * sizeof *a->zero_point), 0);
    }
    for (size_t i = 0; i < q.n_layers; i++) {
        const rd_qcfg_layer *b = rd_qcfg_find_layer(&r, q.layers[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_EQUAL(b->dtype, q.layers[i].dtype);
    }
    rd_qcfg_fini(&r);
    rd_qcfg_fini(&q);
    free(dir);
}

static void expect(const char *text, rd_status code, const char *substr)
{
    rd_qcfg q;
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_qcfg_parse(text, strlen(text), "m.cfg", &q, &err), code);
    if (!strstr(err.msg, substr)) {
        fprintf(stderr, "\n  message '%s' lacks '%s'\n", err.msg, substr);
        CU_FAIL("message");
    }
    CU_ASSERT_EQUAL(q.n_params, 0);
    rd_qcfg_fini(&q);
}

static void test_errors(void)
{
    expect("quantize_parameters:\n  a:\n    dtype: int8\n  b:\n    dtype: int8\n  a:\n    dtype: int8\n", RD_E_PARSE,
           "m.cfg:6: quantize_parameters names tensor 'a' twice (first at line 2)");
    expect("custom_quantize_layers:\n  a: float16\n  a: int8\nquantize_parameters:\n  a: {dtype: int8}\n", RD_E_PARSE,
           "m.cfg:3: custom_quantize_layers names tensor 'a' twice (first at line 2)");
    expect("custom_quantize_layers: {b: float16}\nquantize_parameters:\n  a: {dtype: int8}\n", RD_E_PARSE,
           "m.cfg:1: custom_quantize_layers names tensor 'b', which is not in quantize_parameters");
    expect("custom_quantize_layers: {a: float32}\n", RD_E_PARSE,
           "m.cfg:1: custom_quantize_layers: tensor 'a': 'float32'");
    expect("quantize_parameters:\n  a:\n    scales: [1.0]\n", RD_E_PARSE, "m.cfg:3: tensor 'a': unknown key 'scales'");
    expect("quantize_parameters:\n  a:\n    min: -1.0\n", RD_E_PARSE,
           "m.cfg:3: tensor 'a': min must be a list of numbers, not a scalar");
    expect("quantize_parameters:\n  a:\n    min: [x]\n", RD_E_PARSE,
           "m.cfg:3: tensor 'a': min[0] is not a float32 number ('x')");
    expect("quantize_parameters:\n  a:\n    min: [1e39]\n", RD_E_PARSE, "is not a float32 number");
    expect("quantize_parameters:\n  a:\n    zero_point: [0.5]\n", RD_E_PARSE, "zero_point[0] is not a 32-bit integer");
    expect("quantize_parameters:\n  a:\n    min: [1, 2]\n    max: [1]\n", RD_E_PARSE,
           "m.cfg:4: tensor 'a': max has 1 entries where the lists before it have 2");
    expect("quantize_parameters:\n  a:\n    qmethod: layer\n    min: [1, 2]\n", RD_E_PARSE,
           "m.cfg:2: tensor 'a': qmethod layer takes one entry per list, found 2");
    expect("quantize_parameters:\n  a:\n    qmethod: group\n", RD_E_PARSE, "qmethod 'group' is not layer or channel");
    expect("quantize_parameters:\n  a:\n    dtype: int4\n", RD_E_PARSE, "dtype 'int4' is not one of");
    expect("quantize_parameters:\n  a:\n    min: []\n", RD_E_PARSE, "min is an empty list");
    expect("quantize_parameters:\n  a: [1]\n", RD_E_PARSE, "m.cfg:2: tensor 'a': expected a mapping");
    expect("quantize_parameters: [a]\n", RD_E_PARSE, "quantize_parameters must be a mapping");
    expect("other: 1\n", RD_E_PARSE, "m.cfg:1: unknown key 'other'");
    expect("quantize_parameters:\n  a:\n    min: [1\n", RD_E_PARSE, "m.cfg:4:1: YAML syntax error");
    expect("", RD_E_PARSE, "m.cfg: empty file");
    expect("quantize_parameters:\n  a: {min: [1]}\n---\nquantize_parameters: {}\n", RD_E_PARSE, "second YAML document");
    rd_qcfg q;
    rd_error err;
    CU_ASSERT_EQUAL(rd_qcfg_load("/nonexistent/x.cfg", &q, &err), RD_E_NOTFOUND);
    rd_qcfg_fini(&q);
    /* writing refuses what RKNN's format cannot say */
    rd_qcfg_init(&q);
    rd_qcfg_param p = {.name = "g", .method = RD_QMETHOD_GROUP, .dtype = RD_DT_I8};
    CU_ASSERT_EQUAL(rd_qcfg_add_param(&q, &p, &err), RD_OK);
    char *buf;
    size_t len;
    CU_ASSERT_EQUAL(rd_qcfg_write(&q, &buf, &len, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_qcfg_add_layer(&q, "g", RD_DT_F32, &err), RD_E_INVAL);
    rd_qcfg_fini(&q);
    /* a name with an invalid UTF-8 byte: YAML cannot hold it, so no unreadable file is written */
    rd_qcfg_init(&q);
    CU_ASSERT_EQUAL(rd_qcfg_add_layer(&q, "bad\xffname", RD_DT_F16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_qcfg_write(&q, &buf, &len, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tensor 'bad\\xffname' has a name that is not valid UTF-8"));
    rd_qcfg_fini(&q);
}

RD_TEST_REGISTER(register_qcfg_tests)
{
    RD_SUITE("qcfg", {"shared example", test_shared_example}, {"flow and block forms", test_flow_and_block_forms},
             {"random write-then-read", test_random_round_trip}, {"errors", test_errors});
}
