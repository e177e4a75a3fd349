/* test_dumps_names.c: board dump file names (parse, format, sanitise) and the NC1HWC2 layout. */
#include "dumps.h"
#include "rd_test.h"

#include <stdlib.h>
#include <string.h>

static an_dump_name parse_ok(const char *file)
{
    an_dump_name d;
    rd_error err;
    rd_status st = an_dump_name_parse(file, &d, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    return d;
}

static void test_parse_fields(void)
{
    an_dump_name d = parse_ok("/userdata/dumps/012_ConvRelu___backbone_Conv_output_0_shape_1_64_56_56_int8.txt");
    CU_ASSERT_EQUAL(d.index, 12);
    CU_ASSERT_STRING_EQUAL(d.op_type, "ConvRelu");
    CU_ASSERT_STRING_EQUAL(d.name, "__backbone_Conv_output_0");
    CU_ASSERT_EQUAL(d.rank, 4);
    CU_ASSERT_EQUAL(d.dims[1], 64);
    CU_ASSERT_EQUAL(d.dims[3], 56);
    CU_ASSERT_EQUAL(d.dtype, RD_DT_I8);
    CU_ASSERT_TRUE(d.is_txt);

    /* a name containing "shape", even "_shape_": split at the last one */
    d = parse_ok("031_Slice_output_slice_shape4_shape_1_4_float16.npy");
    CU_ASSERT_STRING_EQUAL(d.name, "output_slice_shape4");
    CU_ASSERT_EQUAL(d.rank, 2);
    CU_ASSERT_EQUAL(d.dtype, RD_DT_F16);
    d = parse_ok("007_Add_x_shape_1_y_shape_2_3_int16.npy");
    CU_ASSERT_STRING_EQUAL(d.name, "x_shape_1_y");
    CU_ASSERT_EQUAL(d.rank, 2);
    CU_ASSERT_EQUAL(d.dims[0], 2);
    CU_ASSERT_EQUAL(d.dtype, RD_DT_I16);
    d = parse_ok("1234_MatMul_fc#1_shape_1_8_int32.npy");
    CU_ASSERT_EQUAL(d.index, 1234);
    CU_ASSERT_STRING_EQUAL(d.name, "fc#1");
    CU_ASSERT_EQUAL(d.dtype, RD_DT_I32);
    d = parse_ok("002_Conv_a_shape_1_uint8.npy");
    CU_ASSERT_EQUAL(d.dtype, RD_DT_U8);
    CU_ASSERT_EQUAL(d.rank, 1);
}

static void expect_parse_error(const char *file, const char *words)
{
    an_dump_name d;
    rd_error err;
    rd_error_clear(&err);
    CU_ASSERT_EQUAL(an_dump_name_parse(file, &d, &err), RD_E_PARSE);
    if (!strstr(err.msg, words))
        fprintf(stderr, "\n'%s' gives '%s', expected '%s'\n", file, err.msg, words);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
}

static void test_parse_errors(void)
{
    expect_parse_error("dir/readme.md", "not a dump file name");
    expect_parse_error("003_Conv_a_shape_1_2_bfloat.npy", "dtype 'bfloat'");
    expect_parse_error("003_Conv_a_1_2_float.npy", "no '_shape_'");
    expect_parse_error("003_Conv_a_shape_1__2_float.npy", "dim 1 after '_shape_' is ''");
    expect_parse_error("003_Conv_a_shape_1_x_float.npy", "'x', not a number");
    expect_parse_error("003_Conv_a_shape_1_2_3_4_5_6_7_8_9_float.npy", "more than 8 dims");
    expect_parse_error("003_Conv_a_shape_99999999999999999999_float.npy", "not a number");
    expect_parse_error("x03_Conv_a_shape_1_float.npy", "op index");
    expect_parse_error("003_Conv_shape_1_float.npy", "no '<OpType>_<name>'");
    expect_parse_error("003__a_shape_1_float.npy", "no '<OpType>_<name>'");
    expect_parse_error("003_Co-nv_a_shape_1_float.npy", "not an identifier");
    expect_parse_error("003_Conv__shape_1_float.npy", "empty tensor name");
    expect_parse_error("003_Conv_a_shape_1_float.npy.npy", "dtype");
    expect_parse_error(".npy", "not a dump file name");
    expect_parse_error("float.npy", "'_<dtype>'");
}

static void test_format_round_trip(void)
{
    an_dump_name d = {.index = 5,
                      .op_type = "ConvAdd",
                      .name = "__layer1_add_output_0-rs",
                      .rank = 3,
                      .dims = {1, 7, 3},
                      .dtype = RD_DT_F16,
                      .is_txt = true};
    char buf[1200];
    int n = an_dump_name_format(&d, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "005_ConvAdd___layer1_add_output_0-rs_shape_1_7_3_float16.txt");
    CU_ASSERT_EQUAL(n, (int)strlen(buf));
    an_dump_name back = parse_ok(buf);
    CU_ASSERT_STRING_EQUAL(back.name, d.name);
    CU_ASSERT_STRING_EQUAL(back.op_type, d.op_type);
    CU_ASSERT_EQUAL(back.dims[2], 3);
    /* small buffers: the needed length, as snprintf */
    char small[8];
    CU_ASSERT_EQUAL(an_dump_name_format(&d, small, sizeof small), n);
    /* what a file name cannot say */
    an_dump_name bad = d;
    snprintf(bad.name, sizeof bad.name, "a/b");
    CU_ASSERT_EQUAL(an_dump_name_format(&bad, buf, sizeof buf), -1);
    bad = d;
    bad.rank = 0;
    CU_ASSERT_EQUAL(an_dump_name_format(&bad, buf, sizeof buf), -1);
    bad = d;
    snprintf(bad.op_type, sizeof bad.op_type, "Conv_Relu");
    CU_ASSERT_EQUAL(an_dump_name_format(&bad, buf, sizeof buf), -1);
    bad = d;
    bad.dtype = RD_DT_F64;
    CU_ASSERT_EQUAL(an_dump_name_format(&bad, buf, sizeof buf), -1);
}

static void test_sanitise(void)
{
    /* a name, the room given, the file-safe name */
    static const struct {
        const char *name;
        size_t room;
        const char *want;
    } cases[] = {{"/backbone/Conv_output_0", 64, "_backbone_Conv_output_0"}, {"385", 64, "385"}, {"/a/b/c", 4, "_a_"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        an_dump_sanitise(cases[i].name, buf, cases[i].room);
        CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
    }
}

/* Every target's C2 (and 1, 3) with odd channel counts: NCHW -> NC1HWC2 -> NCHW is exact and the
   documented index formula holds. */
static void test_nc1hwc2_round_trip(void)
{
    const int c2s[] = {1, 3, 4, 8, 16};
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {1, 3, 2, 5}, {2, 5, 3, 3}, {1, 17, 4, 1}, {1, 16, 2, 2}, {1, 33, 1, 3}};
    for (size_t k = 0; k < sizeof c2s / sizeof c2s[0]; k++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t *d = shapes[s];
            int c2 = c2s[k];
            int64_t c1 = (d[1] + c2 - 1) / c2, n = d[0] * d[1] * d[2] * d[3], np = d[0] * c1 * d[2] * d[3] * c2;
            float *src = malloc((size_t)n * sizeof *src), *nat = malloc((size_t)np * sizeof *nat),
                  *back = malloc((size_t)n * sizeof *back);
            for (int64_t i = 0; i < n; i++)
                src[i] = (float)i + 0.5f;
            rd_error err;
            CU_ASSERT_EQUAL(an_nchw_to_nc1hwc2(src, d, c2, nat, &err), RD_OK);
            for (int64_t b = 0; b < d[0]; b++)
                for (int64_t c = 0; c < c1 * c2; c++)
                    for (int64_t h = 0; h < d[2]; h++)
                        for (int64_t w = 0; w < d[3]; w++) {
                            float got = nat[b * c1 * d[2] * d[3] * c2 + (c / c2) * d[2] * d[3] * c2 +
                                            (h * d[3] + w) * c2 + c % c2];
                            float want = c < d[1] ? src[((b * d[1] + c) * d[2] + h) * d[3] + w] : 0.0f;
                            CU_ASSERT_EQUAL(got, want);
                        }
            memset(back, 0, (size_t)n * sizeof *back);
            CU_ASSERT_EQUAL(an_nc1hwc2_to_nchw(nat, d, c2, back, &err), RD_OK);
            CU_ASSERT_EQUAL(memcmp(src, back, (size_t)n * sizeof *src), 0);
            free(src);
            free(nat);
            free(back);
        }
    }
    /* every documented target C2 is among those tested */
    for (size_t i = 0; i < rd_platform_count(); i++) {
        const rd_platform_info *p = rd_platform_get(i);
        CU_ASSERT(p->c2_int8 == 0 || p->c2_int8 == 8 || p->c2_int8 == 16);
        CU_ASSERT(p->c2_f16 == 0 || p->c2_f16 == 4 || p->c2_f16 == 8);
    }
}

static void test_nc1hwc2_errors(void)
{
    float x = 0, y = 0;
    rd_error err;
    CU_ASSERT_EQUAL(an_nc1hwc2_to_nchw(&x, (const int64_t[]){1, 1, 1, 1}, 0, &y, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not documented"));
    CU_ASSERT_EQUAL(an_nchw_to_nc1hwc2(&x, (const int64_t[]){1, -1, 1, 1}, 8, &y, &err), RD_E_INVAL);
}

RD_TEST_REGISTER(register_dump_names)
{
    RD_SUITE("dump_names", {"parse fields", test_parse_fields}, {"parse errors", test_parse_errors},
             {"format round trip", test_format_round_trip}, {"sanitise", test_sanitise},
             {"NC1HWC2 round trip, every C2", test_nc1hwc2_round_trip}, {"NC1HWC2 errors", test_nc1hwc2_errors});
}
