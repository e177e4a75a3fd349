/*
 * test_op_counts.c: the operation counts (MACs) of Conv, ConvTranspose, MatMul, ConvInteger and TFLite's
 * conv saturate at INT64_MAX on a hostile model's shapes instead of overflowing (UBSan would report it),
 * and stay exact on ordinary ones. Counts read shapes only, so the tensors here carry no data.
 */
#include "rd_test.h"

#include "internal.h"

#include <string.h>

#define BIG ((int64_t)1 << 31)

static rd_tensor shape(int rank, const int64_t *dims)
{
    rd_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = RD_DT_F32;
    t.rank = rank;
    memcpy(t.dims, dims, (size_t)rank * sizeof(int64_t));
    return t;
}

/* MACs of op (domain, op_type) with inputs in[0..n_in) and output y. */
static int64_t macs_of(const char *domain, const char *op, const rd_tensor *const *in, int n_in, rd_tensor *y)
{
    const sim_op_def *def = sim_op_find(domain, op);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def->macs);
    const sim_node node = {.name = "t", .op_type = (char *)op, .domain = (char *)domain, .def = def};
    static char params[4096];
    const sim_op_ctx ctx = {.node = &node, .params = params, .n_in = n_in, .in = in, .n_out = 1, .out = y};
    return def->macs(&ctx);
}

static void test_conv_counts(void)
{
    rd_tensor x = shape(4, (int64_t[]){1, 3, 8, 8}), w = shape(4, (int64_t[]){4, 3, 3, 3});
    rd_tensor y = shape(4, (int64_t[]){1, 4, 6, 6});
    const rd_tensor *in[] = {&x, &w};
    CU_ASSERT_EQUAL(macs_of("", "Conv", in, 2, &y), 4 * 36 * 27);
    w = shape(4, (int64_t[]){1, BIG, BIG, 4});
    y = shape(4, (int64_t[]){1, 1, BIG, BIG});
    CU_ASSERT_EQUAL(macs_of("", "Conv", in, 2, &y), INT64_MAX);
    CU_ASSERT_EQUAL(macs_of("", "ConvTranspose", in, 2, &y), INT64_MAX);
}

static void test_matmul_counts(void)
{
    rd_tensor a = shape(2, (int64_t[]){BIG, BIG}), b = shape(2, (int64_t[]){BIG, BIG});
    rd_tensor y = shape(2, (int64_t[]){BIG, BIG});
    const rd_tensor *in[] = {&a, &b};
    CU_ASSERT_EQUAL(macs_of("", "MatMul", in, 2, &y), INT64_MAX);
    a = shape(2, (int64_t[]){3, 5});
    y = shape(2, (int64_t[]){3, 7});
    CU_ASSERT_EQUAL(macs_of("", "MatMul", in, 2, &y), 3 * 7 * 5);
}

static void test_integer_conv_counts(void)
{
    rd_tensor x = shape(4, (int64_t[]){1, 1, 1, 1}), w = shape(4, (int64_t[]){1, BIG, BIG, 4});
    rd_tensor y = shape(4, (int64_t[]){1, 1, BIG, BIG});
    const rd_tensor *in[] = {&x, &w};
    CU_ASSERT_EQUAL(macs_of("", "ConvInteger", in, 2, &y), INT64_MAX);
    /* TFLite's weights are [oc, kh, kw, ic]: products per output = kh * kw * ic */
    rd_tensor tw = shape(4, (int64_t[]){2, BIG / 2, BIG / 2, 2});
    const rd_tensor *tin[] = {&x, &tw};
    CU_ASSERT_EQUAL(macs_of("tflite", "TFLiteConv2D", tin, 2, &y), INT64_MAX);
    tw = shape(4, (int64_t[]){2, 3, 3, 5});
    y = shape(4, (int64_t[]){1, 4, 4, 2});
    CU_ASSERT_EQUAL(macs_of("tflite", "TFLiteConv2D", tin, 2, &y), 32 * 45);
}

RD_TEST_REGISTER(register_op_counts)
{
    RD_SUITE("op_counts", {"Conv and ConvTranspose counts saturate", test_conv_counts},
             {"MatMul counts saturate", test_matmul_counts},
             {"ConvInteger and TFLite conv counts saturate", test_integer_conv_counts});
}
