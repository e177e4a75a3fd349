/* test_dtype.c: the dtype table, status names and IEEE half rounding. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <math.h>
#include <string.h>

static void test_status_names(void)
{
    for (int s = 0; s < RD_STATUS_COUNT; s++)
        CU_ASSERT_STRING_NOT_EQUAL(rd_status_str((rd_status)s), "unknown status");
    CU_ASSERT_STRING_EQUAL(rd_status_str((rd_status)999), "unknown status");
    CU_ASSERT_EQUAL(rd_status_exit_code(RD_OK), 0);
    CU_ASSERT_EQUAL(rd_status_exit_code(RD_E_GATE), 1);
    CU_ASSERT_EQUAL(rd_status_exit_code(RD_E_USAGE), 2); /* only the command line itself */
    for (int s = RD_E_INVAL; s < RD_STATUS_COUNT; s++)   /* every other failure is an input's or a board's */
        if (s != RD_E_GATE && s != RD_E_USAGE)
            CU_ASSERT_EQUAL(rd_status_exit_code((rd_status)s), 3);
}

static void test_dtype_table(void)
{
    CU_ASSERT_EQUAL(rd_dtype_get(RD_DT_F32)->size, 4);
    CU_ASSERT_EQUAL(rd_dtype_get(RD_DT_F16)->size, 2);
    CU_ASSERT_STRING_EQUAL(rd_dtype_get(RD_DT_I8)->npy, "|i1");
    CU_ASSERT_FALSE(rd_dtype_get((rd_dtype)17)->supported); /* float8 */
    CU_ASSERT_FALSE(rd_dtype_get((rd_dtype)22)->supported); /* int4 */
    CU_ASSERT_FALSE(rd_dtype_get((rd_dtype)1000)->supported);
}

static void test_f16_known_values(void)
{
    CU_ASSERT_EQUAL(rd_f32_to_f16(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(rd_f32_to_f16(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(rd_f32_to_f16(65504.0f), 0x7bff);
    CU_ASSERT_EQUAL(rd_f32_to_f16(65519.0f), 0x7bff); /* below the tie to 65536 */
    CU_ASSERT_EQUAL(rd_f32_to_f16(65520.0f), 0x7c00); /* the tie rounds to even: inf */
    CU_ASSERT_EQUAL(rd_f32_to_f16(1e9f), 0x7c00);
    CU_ASSERT_EQUAL(rd_f32_to_f16(5.9604645e-8f), 0x0001); /* smallest subnormal */
    CU_ASSERT_EQUAL(rd_f32_to_f16(2.9802322e-8f), 0x0000); /* half of it: tie to even zero */
    CU_ASSERT_EQUAL(rd_f32_to_f16(6.1035156e-5f), 0x0400); /* smallest normal */
    CU_ASSERT_EQUAL(rd_f16_to_f32(0x0001), 5.9604645e-8f);
    CU_ASSERT_TRUE(isinf(rd_f16_to_f32(0x7c00)));
    CU_ASSERT_TRUE(isnan(rd_f16_to_f32(rd_f32_to_f16(NAN))));
    /* 1 + 2^-11 is a tie between 1 and 1+2^-10: even is 1 */
    CU_ASSERT_EQUAL(rd_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);
    CU_ASSERT_EQUAL(rd_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
}

static void test_f16_roundtrip_all_halves(void)
{
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue; /* NaN payloads are only kept as quiet NaNs */
        if (rd_f32_to_f16(rd_f16_to_f32((uint16_t)h)) != h) {
            CU_FAIL("half round trip");
            return;
        }
    }
}

static void test_tensor_limits(void)
{
    rd_tensor t;
    rd_error err;
    int64_t huge[2] = {1 << 30, 1 << 30};
    CU_ASSERT_EQUAL(rd_tensor_alloc(&t, RD_DT_F32, 2, huge, &err), RD_E_LIMIT);
    int64_t neg[1] = {-3};
    CU_ASSERT_EQUAL(rd_tensor_alloc(&t, RD_DT_F32, 1, neg, &err), RD_E_PARSE);
    int64_t ok[2] = {2, 3};
    CU_ASSERT_EQUAL(rd_tensor_alloc(&t, RD_DT_I64, 2, ok, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_tensor_numel(&t), 6);
    CU_ASSERT_EQUAL(rd_tensor_nbytes(&t), 48);
    rd_tensor f;
    ((int64_t *)t.data)[5] = -7;
    CU_ASSERT_EQUAL(rd_tensor_to_f32(&f, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(((float *)f.data)[5], -7.0f);
    char buf[64];
    CU_ASSERT_STRING_EQUAL(rd_shape_str(&f, buf, sizeof buf), "2x3");
    rd_tensor_fini(&f);
    rd_tensor_fini(&t);
    int64_t empty[2] = {0, 5};
    CU_ASSERT_EQUAL(rd_tensor_alloc(&t, RD_DT_F32, 2, empty, &err), RD_OK);
    CU_ASSERT_PTR_NULL(t.data);
    rd_tensor_fini(&t);
}

static void test_error_prefix(void)
{
    rd_error err;
    rd_errorf(&err, RD_E_PARSE, "byte %d: bad", 7);
    rd_error_prefix(&err, "%s", "model.onnx");
    CU_ASSERT_STRING_EQUAL(err.msg, "model.onnx: byte 7: bad");
    CU_ASSERT_EQUAL(err.code, RD_E_PARSE);
    /* without an error object a failure stays a failure: a save into a missing folder must not say RD_OK */
    CU_ASSERT_NOT_EQUAL(rd_error_prefix(NULL, "%s", "model.onnx"), RD_OK);
    float v = 1.0f;
    rd_tensor t = {.dtype = RD_DT_F32, .rank = 1, .dims = {1}, .data = &v};
    CU_ASSERT_NOT_EQUAL(rd_npy_save("/nonexistent-folder-of-rknn-diag/x.npy", &t, NULL), RD_OK);
}

RD_TEST_REGISTER(register_dtype)
{
    RD_SUITE("dtype", {"status names", test_status_names}, {"dtype table", test_dtype_table},
             {"f16 known values", test_f16_known_values}, {"f16 round trip", test_f16_roundtrip_all_halves},
             {"tensor limits", test_tensor_limits}, {"error prefix", test_error_prefix});
}
