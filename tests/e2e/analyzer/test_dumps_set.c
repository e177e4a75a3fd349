/*
 * test_dumps_set.c: a dump folder written here the way librknnrt would (an_dump_name_format, .npy,
 * NC1HWC2 .txt, fused op names, suffixes, quantized codes) plus bad files, loaded with an_dump_set_load
 * against a small INT8 simulation, every mapping and value checked.
 *
 * x -> Conv -> /blk/conv_out -> Relu -> /blk/relu_out -> Conv 1x1 -> c2 -> Mul 0.5 -> half
 *   -> Reshape [1,108] -> flat -> MatMul [108,5] -> out
 */
#include "dumps.h"
#include "rd_test.h"
#include "files_in.h"
#include "text_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_const(rd_onnx_builder *b, const char *name, rd_dtype dt, int rank, const int64_t *dims, float scale)
{
    rd_tensor t;
    rd_tensor_alloc(&t, dt, rank, dims, NULL);
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++) {
        if (dt == RD_DT_F32)
            ((float *)t.data)[i] = scale * (float)((i * 37 % 17) - 8) / 16.0f;
    }
    rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW);
    rd_tensor_fini(&t);
}

static rd_model *build_model(void)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 2, 6, 6}, NULL);
    add_const(b, "w1", RD_DT_F32, 4, (const int64_t[]){4, 2, 3, 3}, 1.0f);
    add_const(b, "w2", RD_DT_F32, 4, (const int64_t[]){3, 4, 1, 1}, 1.0f);
    add_const(b, "w3", RD_DT_F32, 2, (const int64_t[]){108, 5}, 0.1f);
    add_const(b, "k", RD_DT_F32, 0, NULL, -8.0f); /* 0.5 */
    rd_tensor shape;
    rd_tensor_alloc(&shape, RD_DT_I64, 1, (const int64_t[]){2}, NULL);
    ((int64_t *)shape.data)[0] = 1;
    ((int64_t *)shape.data)[1] = 108;
    rd_onnx_add_initializer(b, "shape", &shape, RD_ONNX_RAW);
    rd_tensor_fini(&shape);
    rd_onnx_node *c = rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w1"}, 2,
                                       (const char *const[]){"/blk/conv_out"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"/blk/conv_out"}, 1,
                     (const char *const[]){"/blk/relu_out"}, 1);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"/blk/relu_out", "w2"}, 2, (const char *const[]){"c2"},
                     1);
    rd_onnx_add_node(b, "Mul", "mul", (const char *const[]){"c2", "k"}, 2, (const char *const[]){"half"}, 1);
    rd_onnx_add_node(b, "Reshape", "reshape", (const char *const[]){"half", "shape"}, 2, (const char *const[]){"flat"},
                     1);
    rd_onnx_add_node(b, "MatMul", "fc", (const char *const[]){"flat", "w3"}, 2, (const char *const[]){"out"}, 1);
    rd_onnx_add_output(b, "out", RD_DT_F32, -1, NULL, NULL);
    void *buf = NULL;
    size_t len = 0;
    rd_error err;
    CU_ASSERT_EQUAL(rd_onnx_builder_write(b, &buf, &len, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_model *m = NULL;
    CU_ASSERT_EQUAL(rd_model_load_mem(buf, len, "dumps_test.onnx", NULL, NULL, &m, &err), RD_OK);
    free(buf);
    return m;
}

static rd_sim *make_sim(const rd_model *m, rd_prec prec)
{
    rd_sim_options so = {.precision = prec, .optimization_level = 3};
    rd_sim *s = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_sim_create(m, &so, &s, &err), RD_OK);
    if (prec == RD_PREC_INT8) {
        const char *names[] = {"x", "/blk/relu_out", "c2", "half", "flat", "out"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            CU_ASSERT_EQUAL(rd_sim_set_range(s, names[i], -3.0f - (float)i, 4.0f + (float)i, &err), RD_OK);
    }
    return s;
}

/* The test model in *m and its simulation at prec; sim_and_model_destroy frees both. */
static rd_sim *model_and_sim(rd_model **m, rd_prec prec)
{
    *m = build_model();
    CU_ASSERT_PTR_NOT_NULL_FATAL(*m);
    return make_sim(*m, prec);
}

static void sim_and_model_destroy(rd_sim *s, rd_model *m)
{
    rd_sim_destroy(s);
    rd_model_destroy(m);
}

static an_dump_name dname(int index, const char *op, const char *name, int rank, const int64_t *dims, rd_dtype dt,
                          bool txt)
{
    an_dump_name d = {.index = index, .rank = rank, .dtype = dt, .is_txt = txt};
    snprintf(d.op_type, sizeof d.op_type, "%s", op);
    snprintf(d.name, sizeof d.name, "%s", name);
    memcpy(d.dims, dims, (size_t)rank * sizeof *dims);
    return d;
}

static char *dump_path(const char *dir, const an_dump_name *d)
{
    char file[1200];
    CU_ASSERT(an_dump_name_format(d, file, sizeof file) > 0);
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* Values a dump holds: deterministic, float16-exact. */
static float value_at(int64_t i, int seed)
{
    return (float)((i * 7 + seed) % 23 - 11) * 0.25f;
}

/* Writes a .npy of d's shape and dtype from value_at (int8: quantized with scale/zp). */
static void write_npy(const char *dir, const an_dump_name *d, int seed, float scale, int zp)
{
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, d->dtype, d->rank, d->dims, NULL), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++) {
        float v = value_at(i, seed);
        if (d->dtype == RD_DT_F32)
            ((float *)t.data)[i] = v;
        else if (d->dtype == RD_DT_U8)
            ((uint8_t *)t.data)[i] = (uint8_t)(i % 251);
        else if (d->dtype == RD_DT_I8)
            ((int8_t *)t.data)[i] = (int8_t)fmaxf(-128.0f, fminf(127.0f, roundf(v / scale) + (float)zp));
    }
    char *p = dump_path(dir, d);
    rd_error err;
    CU_ASSERT_EQUAL(rd_npy_save(p, &t, &err), RD_OK);
    free(p);
    rd_tensor_fini(&t);
}

/* Writes a .txt: d's NCHW values (int8 codes when int8) in NC1HWC2 with c2, whitespace-separated. */
static void write_txt(const char *dir, const an_dump_name *d, int seed, int c2, float scale, int zp)
{
    int64_t nchw[4] = {1, 1, 1, 1};
    for (int i = 0; i < d->rank; i++)
        nchw[i] = d->dims[i];
    int64_t n = nchw[0] * nchw[1] * nchw[2] * nchw[3];
    int64_t np = nchw[0] * ((nchw[1] + c2 - 1) / c2) * c2 * nchw[2] * nchw[3];
    float *src = malloc((size_t)n * sizeof *src), *nat = malloc((size_t)np * sizeof *nat);
    for (int64_t i = 0; i < n; i++) {
        float v = value_at(i, seed);
        src[i] = d->dtype == RD_DT_I8 ? fmaxf(-128.0f, fminf(127.0f, roundf(v / scale) + (float)zp)) : v;
    }
    rd_error err;
    CU_ASSERT_EQUAL(an_nchw_to_nc1hwc2(src, nchw, c2, nat, &err), RD_OK);
    char *p = dump_path(dir, d);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int64_t i = 0; i < np; i++)
        fprintf(f, "%g%s", (double)nat[i], (i + 1) % c2 ? " " : "\n");
    fclose(f);
    free(p);
    free(src);
    free(nat);
}

static rd_sim_tensor tinfo(const rd_sim *s, const char *name)
{
    rd_sim_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL(rd_sim_tensor_get(s, name, &t, &err), RD_OK);
    return t;
}

/* The loaded tensor holds value_at (int8: dequantized codes), in shape rank/dims. */
static void check_values(const rd_tensor *t, int seed, rd_dtype dt, const rd_sim_tensor *q, int rank,
                         const int64_t *dims)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->dtype, RD_DT_F32);
    CU_ASSERT_EQUAL_FATAL(t->rank, rank);
    for (int i = 0; i < rank; i++)
        CU_ASSERT_EQUAL(t->dims[i], dims[i]);
    int64_t bad = 0;
    for (int64_t i = 0; i < rd_tensor_numel(t); i++) {
        float v = value_at(i, seed), want = v;
        if (dt == RD_DT_I8) {
            float code = fmaxf(-128.0f, fminf(127.0f, roundf(v / q->scale) + (float)q->zero_point));
            want = (code - (float)q->zero_point) * q->scale;
        }
        bad += ((const float *)t->data)[i] != want;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static bool report_has(const char *report, const char *line_start, const char *words)
{
    for (const char *p = report; (p = strstr(p, line_start)) != NULL; p++) {
        if (p != report && p[-1] != '\n')
            continue;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strstr(line, words))
            return true;
    }
    fprintf(stderr, "\nno report line '%s ...%s...' in:\n%s\n", line_start, words, report);
    return false;
}

static char *report_text(const an_dump_set *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rd_error err;
    CU_ASSERT_EQUAL(an_dump_set_report(d, f, &err), RD_OK);
    fclose(f);
    return buf;
}

static void test_load_and_map(void)
{
    rd_model *m;
    rd_sim *s = model_and_sim(&m, RD_PREC_INT8);
    const rd_platform_info *plat = rd_platform_find("rk3566");
    CU_ASSERT_PTR_NOT_NULL_FATAL(plat);
    CU_ASSERT_EQUAL(plat->c2_int8, 8);
    CU_ASSERT_EQUAL(plat->c2_f16, 4);
    char *dir = rd_test_tmpdir("dumps_map");
    rd_sim_tensor q_c2 = tinfo(s, "c2"), q_flat = tinfo(s, "flat");
    CU_ASSERT_TRUE(q_c2.quantized);
    CU_ASSERT_TRUE(q_flat.quantized);

    an_dump_name in = dname(0, "InputOperator", "x", 4, (const int64_t[]){1, 2, 6, 6}, RD_DT_U8, false);
    write_npy(dir, &in, 0, 1, 0);
    an_dump_name fused = dname(1, "ConvRelu", "_blk_conv_out", 4, (const int64_t[]){1, 4, 6, 6}, RD_DT_F32, false);
    write_npy(dir, &fused, 1, 1, 0);
    an_dump_name c2txt = dname(2, "Conv", "c2", 4, (const int64_t[]){1, 3, 6, 6}, RD_DT_I8, true);
    write_txt(dir, &c2txt, 2, plat->c2_int8, q_c2.scale, q_c2.zero_point);
    an_dump_name c2npy = dname(2, "Conv", "c2_conv", 4, (const int64_t[]){1, 3, 6, 6}, RD_DT_F32, false);
    write_npy(dir, &c2npy, 9, 1, 0);
    an_dump_name half = dname(3, "Mul", "half", 4, (const int64_t[]){1, 3, 6, 6}, RD_DT_F32, false);
    char *half_path = dump_path(dir, &half);
    rd_test_write_in(dir, strrchr(half_path, '/') + 1,
                     "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 6, 6), }");
    free(half_path);
    an_dump_name flat = dname(4, "Reshape", "flat", 4, (const int64_t[]){1, 108, 1, 1}, RD_DT_I8, false);
    write_npy(dir, &flat, 4, q_flat.scale, q_flat.zero_point);
    an_dump_name outtxt = dname(5, "Conv", "out_mm", 4, (const int64_t[]){1, 5, 1, 1}, RD_DT_F16, true);
    write_txt(dir, &outtxt, 5, plat->c2_f16, 1, 0);
    an_dump_name outop = dname(6, "OutputOperator", "out", 2, (const int64_t[]){1, 5}, RD_DT_F32, false);
    write_npy(dir, &outop, 6, 1, 0);
    an_dump_name ghost = dname(7, "Conv", "ghost", 2, (const int64_t[]){1, 4}, RD_DT_F32, false);
    write_npy(dir, &ghost, 7, 1, 0);
    an_dump_name wrong = dname(8, "Conv", "c2", 4, (const int64_t[]){1, 9, 6, 6}, RD_DT_F32, false);
    write_npy(dir, &wrong, 8, 1, 0);
    rd_test_write_in(dir, "009_garbage.npy", "not a dump");
    rd_test_write_in(dir, "notes.log", "ignored");

    an_dump_set *d = NULL;
    rd_error err;
    rd_status st = an_dump_set_load(dir, plat, s, &d, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_EQUAL(an_dump_set_count(d), 9);
    CU_ASSERT_EQUAL(an_dump_set_mapped(d), 4);

    const rd_model *om = rd_sim_model(s);
    check_values(an_dump_set_tensor(d, rd_model_find_value(om, "/blk/relu_out")), 1, RD_DT_F32, NULL, 4,
                 (const int64_t[]){1, 4, 6, 6});
    CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, rd_model_find_value(om, "/blk/conv_out")));
    check_values(an_dump_set_tensor(d, rd_model_find_value(om, "c2")), 2, RD_DT_I8, &q_c2, 4,
                 (const int64_t[]){1, 3, 6, 6});
    CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, rd_model_find_value(om, "half")));
    check_values(an_dump_set_tensor(d, rd_model_find_value(om, "flat")), 4, RD_DT_I8, &q_flat, 2,
                 (const int64_t[]){1, 108});
    check_values(an_dump_set_tensor(d, rd_model_find_value(om, "out")), 5, RD_DT_F32, NULL, 2, (const int64_t[]){1, 5});
    CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, rd_model_find_value(om, "x")));
    CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, -1));
    CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, 100000));

    const rd_tensor *xi = an_dump_set_input(d, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xi);
    CU_ASSERT_EQUAL(xi->dtype, RD_DT_U8);
    CU_ASSERT_EQUAL(((const uint8_t *)xi->data)[70], 70);
    CU_ASSERT_PTR_NULL(an_dump_set_input(d, 1));
    check_values(an_dump_set_output(d, 0), 6, RD_DT_F32, NULL, 2, (const int64_t[]){1, 5});
    CU_ASSERT_PTR_NULL(an_dump_set_output(d, 1));

    char *rep = report_text(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rep);
    CU_ASSERT(report_has(rep, "# ", "11 files, 9 read, 4 mapped"));
    CU_ASSERT(report_has(rep, "000_InputOperator_x_shape_1_2_6_6_uint8.npy", "-> graph input 0 'x' (raw)"));
    CU_ASSERT(report_has(rep, "001_ConvRelu__blk_conv_out_", "-> /blk/relu_out (named '/blk/conv_out', fused"));
    CU_ASSERT(report_has(rep, "002_Conv_c2_shape_1_3_6_6_int8.txt", "-> c2"));
    CU_ASSERT(report_has(rep, "002_Conv_c2_conv_",
                         "another dump of the same tensor is used: 002_Conv_c2_shape_1_3_6_6_int8.txt"));
    CU_ASSERT(report_has(rep, "003_Mul_half_", "-> none: 003_Mul_half_shape_1_3_6_6_float.npy"));
    CU_ASSERT(report_has(rep, "004_Reshape_flat_", "-> flat"));
    CU_ASSERT(report_has(rep, "005_Conv_out_mm_", "-> out (compiler suffix stripped)"));
    CU_ASSERT(report_has(rep, "006_OutputOperator_out_", "-> graph output 0 'out'"));
    CU_ASSERT(report_has(rep, "007_Conv_ghost_", "no tensor of the model is named 'ghost'"));
    CU_ASSERT(report_has(rep, "008_Conv_c2_", "shape 1x9x6x6 in the name, but tensor 'c2' is 1x3x6x6"));
    CU_ASSERT(report_has(rep, "009_garbage.npy", "-> none: 009_garbage.npy: dtype 'garbage' is not float"));
    CU_ASSERT(report_has(rep, "half", "-> none: its dump 003_Mul_half_shape_1_3_6_6_float.npy was rejected"));
    CU_ASSERT_PTR_NULL(strstr(rep, "notes.log"));
    CU_ASSERT_PTR_NULL(strstr(rep, "\n/blk/conv_out -> none"));
    free(rep);
    an_dump_set_destroy(d);

    /* without the target, the .txt dumps cannot be converted and say so; the rest still maps */
    CU_ASSERT_EQUAL_FATAL(an_dump_set_load(dir, NULL, s, &d, &err), RD_OK);
    check_values(an_dump_set_tensor(d, rd_model_find_value(om, "c2")), 9, RD_DT_F32, NULL, 4,
                 (const int64_t[]){1, 3, 6, 6}); /* the .npy with a suffix takes over */
    CU_ASSERT_PTR_NOT_NULL(an_dump_set_tensor(d, rd_model_find_value(om, "flat")));
    rep = report_text(d);
    CU_ASSERT(report_has(rep, "002_Conv_c2_shape_1_3_6_6_int8.txt", "needs the target"));
    CU_ASSERT(report_has(rep, "002_Conv_c2_conv_", "-> c2 (compiler suffix stripped)"));
    free(rep);
    an_dump_set_destroy(d);

    /* a target whose C2 is not documented */
    rd_platform_info undocumented = *plat;
    undocumented.c2_int8 = 0;
    CU_ASSERT_EQUAL_FATAL(an_dump_set_load(dir, &undocumented, s, &d, &err), RD_OK);
    rep = report_text(d);
    CU_ASSERT(report_has(rep, "002_Conv_c2_shape_1_3_6_6_int8.txt", "C2 of rk3566 for int8 dumps is not documented"));
    free(rep);
    an_dump_set_destroy(d);

    sim_and_model_destroy(s, m);
    free(dir);
}

/* Every target's C2 through the loader: a float16 .txt with an odd channel count. */
static void test_txt_every_target(void)
{
    rd_model *m;
    rd_sim *s = model_and_sim(&m, RD_PREC_FP16);
    const rd_model *om = rd_sim_model(s);
    for (size_t i = 0; i < rd_platform_count(); i++) {
        const rd_platform_info *p = rd_platform_get(i);
        char *dir = rd_test_tmpdir("dumps_txt");
        an_dump_name c2 = dname(2, "Conv", "c2", 4, (const int64_t[]){1, 3, 6, 6}, RD_DT_F16, true);
        if (p->c2_f16 > 0)
            write_txt(dir, &c2, 3, p->c2_f16, 1, 0);
        else
            rd_test_write_in(dir, "002_Conv_c2_shape_1_3_6_6_float16.txt", "1 2 3");
        an_dump_name fused = dname(1, "ConvRelu", "_blk_relu_out", 4, (const int64_t[]){1, 4, 6, 6}, RD_DT_F32, false);
        write_npy(dir, &fused, 1, 1, 0);
        an_dump_set *d = NULL;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(an_dump_set_load(dir, p, s, &d, &err), RD_OK);
        if (p->c2_f16 > 0)
            check_values(an_dump_set_tensor(d, rd_model_find_value(om, "c2")), 3, RD_DT_F32, NULL, 4,
                         (const int64_t[]){1, 3, 6, 6});
        else
            CU_ASSERT_PTR_NULL(an_dump_set_tensor(d, rd_model_find_value(om, "c2")));
        an_dump_set_destroy(d);
        free(dir);
    }
    sim_and_model_destroy(s, m);
}

/* An int8 dump of a tensor the simulation holds in float16: reported, not guessed. */
static void test_int8_dump_of_fp16_model(void)
{
    rd_model *m;
    rd_sim *s = model_and_sim(&m, RD_PREC_FP16);
    char *dir = rd_test_tmpdir("dumps_fp16");
    an_dump_name flat = dname(4, "Reshape", "flat", 2, (const int64_t[]){1, 108}, RD_DT_I8, false);
    write_npy(dir, &flat, 4, 0.1f, 0);
    an_dump_set *d = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(an_dump_set_load(dir, NULL, s, &d, &err), RD_OK);
    CU_ASSERT_EQUAL(an_dump_set_count(d), 1);
    CU_ASSERT_EQUAL(an_dump_set_mapped(d), 0);
    char *rep = report_text(d);
    CU_ASSERT(report_has(rep, "004_Reshape_flat_", "without int8 parameters"));
    CU_ASSERT(report_has(rep, "flat", "-> none: its dump 004_Reshape_flat_shape_1_108_int8.npy was rejected"));
    free(rep);
    an_dump_set_destroy(d);
    sim_and_model_destroy(s, m);
    free(dir);
}

static void test_folder_errors(void)
{
    rd_model *m;
    rd_sim *s = model_and_sim(&m, RD_PREC_INT8);
    an_dump_set *d = NULL;
    rd_error err;
    char *dir = rd_test_tmpdir("dumps_err");
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    CU_ASSERT_EQUAL(an_dump_set_load(missing, rd_platform_find("rv1106"), s, &d, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NULL(d);
    RD_ASSERT_HAS_TEXTS(err.msg, "no such folder", "RKNN_DUMP_DIR=/tmp/dumps",
                        "mkdir -p /tmp/dumps && chmod 777 /tmp/dumps");

    CU_ASSERT_EQUAL(an_dump_set_load(dir, NULL, s, &d, &err), RD_E_NOTFOUND);
    RD_ASSERT_HAS_TEXTS(err.msg, "no .npy or .txt dumps", "mkdir -p /userdata/dumps && chmod 777 /userdata/dumps");

    rd_test_write_in(dir, "readme.txt", "hello");
    rd_test_write_in(dir, "001_Conv_c2_shape_1_3_6_6_float.npy", "\x93NUMPY");
    CU_ASSERT_EQUAL(an_dump_set_load(dir, NULL, s, &d, &err), RD_E_PARSE);
    CU_ASSERT_PTR_NULL(d);
    RD_ASSERT_HAS_TEXTS(err.msg, "none of the 2 dump files could be read", "001_Conv_c2_shape_1_3_6_6_float.npy");

    /* dumps from another model: read, but nothing maps */
    an_dump_name other = dname(3, "Conv", "backbone_0", 2, (const int64_t[]){1, 4}, RD_DT_F32, false);
    write_npy(dir, &other, 0, 1, 0);
    CU_ASSERT_EQUAL_FATAL(an_dump_set_load(dir, NULL, s, &d, &err), RD_OK);
    CU_ASSERT_EQUAL(an_dump_set_count(d), 1);
    CU_ASSERT_EQUAL(an_dump_set_mapped(d), 0);
    char *rep = report_text(d);
    CU_ASSERT(report_has(rep, "003_Conv_backbone_0_", "different model"));
    CU_ASSERT(report_has(rep, "c2", "-> none: its dump 001_Conv_c2_shape_1_3_6_6_float.npy was rejected"));
    CU_ASSERT(report_has(rep, "flat", "-> none: no dump names it"));
    free(rep);
    an_dump_set_destroy(d);
    an_dump_set_destroy(NULL);
    sim_and_model_destroy(s, m);
    free(dir);
}

RD_TEST_REGISTER(register_dump_set)
{
    RD_SUITE("dump_set", {"load and map", test_load_and_map}, {"txt on every target", test_txt_every_target},
             {"int8 dump of a float16 model", test_int8_dump_of_fp16_model}, {"folder errors", test_folder_errors});
}
