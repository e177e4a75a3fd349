/* test_quant_ops.c: the quant family on the ONNX spec's worked examples and malformed inputs. */
#include "op_harness.h"
#include "rd_test.h"

#include <math.h>

static void test_quantize(void)
{
    const float x[6] = {0, 2, 3, 1000, -254, -1000}, s = 2;
    const uint8_t zp = 128;
    rd_tensor tx = H_T(RD_DT_F32, x, 6), ts = H_SCALAR(RD_DT_F32, &s), tz = H_SCALAR(RD_DT_U8, &zp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QuantizeLinear", 13, NULL, 0, (const rd_tensor *[]){&tx, &ts, &tz}, 3, 1), RD_OK);
    const uint8_t *y = r.out[0].data;
    const uint8_t want[6] = {128, 129, 130, 255, 1, 0}; /* 3/2 = 1.5 rounds to even 2 */
    CU_ASSERT_EQUAL(memcmp(y, want, 6), 0);
    h_fini(&r);
    /* no zero point: uint8 with zp 0 */
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QuantizeLinear", 13, NULL, 0, (const rd_tensor *[]){&tx, &ts}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dtype, RD_DT_U8);
    CU_ASSERT_EQUAL(((const uint8_t *)r.out[0].data)[4], 0);
    h_fini(&r);
    /* per-axis int8 */
    const float xa[4] = {10, -10, 10, -10}, sa[2] = {1, 2};
    const int8_t za[2] = {0, 10};
    rd_tensor txa = H_T(RD_DT_F32, xa, 2, 2), tsa = H_T(RD_DT_F32, sa, 2), tza = H_T(RD_DT_I8, za, 2);
    sim_attr ax = h_int("axis", 0);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QuantizeLinear", 13, &ax, 1, (const rd_tensor *[]){&txa, &tsa, &tza}, 3, 1),
                          RD_OK);
    const int8_t *yi = r.out[0].data;
    CU_ASSERT(yi[0] == 10 && yi[1] == -10 && yi[2] == 15 && yi[3] == 5);
    h_fini(&r);
    /* a scale that matches neither per-tensor nor the axis */
    const float s3[3] = {1, 1, 1};
    rd_tensor ts3 = H_T(RD_DT_F32, s3, 3);
    CU_ASSERT_EQUAL(h_exec(&r, "QuantizeLinear", 13, &ax, 1, (const rd_tensor *[]){&txa, &ts3}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

static void test_dequantize(void)
{
    const uint8_t x[4] = {0, 3, 128, 255}, zp = 128;
    const float s = 2;
    rd_tensor tx = H_T(RD_DT_U8, x, 4), ts = H_SCALAR(RD_DT_F32, &s), tz = H_SCALAR(RD_DT_U8, &zp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "DequantizeLinear", 13, NULL, 0, (const rd_tensor *[]){&tx, &ts, &tz}, 3, 1),
                          RD_OK);
    const float *y = r.out[0].data;
    CU_ASSERT(y[0] == -256 && y[1] == -250 && y[2] == 0 && y[3] == 254);
    h_fini(&r);
    const int8_t zbad = 0;
    rd_tensor tzb = H_SCALAR(RD_DT_I8, &zbad);
    CU_ASSERT_EQUAL(h_exec(&r, "DequantizeLinear", 13, NULL, 0, (const rd_tensor *[]){&tx, &ts, &tzb}, 3, 1),
                    RD_E_INVAL);
    h_fini(&r);
    /* blocked (opset 21): blocks of 2 along axis 1 */
    const int8_t xb[4] = {1, 2, 3, 4};
    const float sb[2] = {1, 10};
    rd_tensor txb = H_T(RD_DT_I8, xb, 1, 4), tsb = H_T(RD_DT_F32, sb, 1, 2);
    sim_attr at[2] = {h_int("axis", 1), h_int("block_size", 2)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "DequantizeLinear", 21, at, 2, (const rd_tensor *[]){&txb, &tsb}, 2, 1), RD_OK);
    y = r.out[0].data;
    CU_ASSERT(y[0] == 1 && y[1] == 2 && y[2] == 30 && y[3] == 40);
    h_fini(&r);
}

static void test_dynamic_quantize(void)
{
    const float x[6] = {0, 2, -3, -2.5f, 1.34f, 0.5f};
    rd_tensor tx = H_T(RD_DT_F32, x, 6);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "DynamicQuantizeLinear", 11, NULL, 0, (const rd_tensor *[]){&tx}, 1, 3), RD_OK);
    const uint8_t want[6] = {153, 255, 0, 26, 221, 179};
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, want, 6), 0);
    CU_ASSERT_DOUBLE_EQUAL(*(const float *)r.out[1].data, 5.0 / 255, 1e-7);
    CU_ASSERT_EQUAL(*(const uint8_t *)r.out[2].data, 153);
    h_fini(&r);
}

static void test_matmul_integer(void)
{
    const uint8_t a[12] = {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, b[6] = {1, 4, 2, 5, 3, 6}, azp = 12, bzp = 0;
    rd_tensor ta = H_T(RD_DT_U8, a, 4, 3), tb = H_T(RD_DT_U8, b, 3, 2);
    rd_tensor tazp = H_SCALAR(RD_DT_U8, &azp), tbzp = H_SCALAR(RD_DT_U8, &bzp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "MatMulInteger", 10, NULL, 0, (const rd_tensor *[]){&ta, &tb, &tazp, &tbzp}, 4, 1),
                          RD_OK);
    const int32_t want[8] = {-38, -83, -44, -98, -50, -113, -56, -128};
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, want, sizeof want), 0);
    h_fini(&r);
    rd_tensor bad = H_T(RD_DT_U8, b, 2, 3);
    CU_ASSERT_EQUAL(h_exec(&r, "MatMulInteger", 10, NULL, 0, (const rd_tensor *[]){&ta, &bad}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

static void test_qlinear_matmul(void)
{
    const uint8_t a[8] = {208, 236, 0, 238, 3, 214, 255, 29};
    const uint8_t b[12] = {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247};
    const float as = 0.0066f, bs = 0.00705f, ys = 0.0107f;
    const uint8_t azp = 113, bzp = 114, yzp = 118;
    rd_tensor ta = H_T(RD_DT_U8, a, 2, 4), tb = H_T(RD_DT_U8, b, 4, 3);
    rd_tensor tas = H_SCALAR(RD_DT_F32, &as), tbs = H_SCALAR(RD_DT_F32, &bs), tys = H_SCALAR(RD_DT_F32, &ys);
    rd_tensor tazp = H_SCALAR(RD_DT_U8, &azp), tbzp = H_SCALAR(RD_DT_U8, &bzp), tyzp = H_SCALAR(RD_DT_U8, &yzp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QLinearMatMul", 10, NULL, 0,
                                 (const rd_tensor *[]){&ta, &tas, &tazp, &tb, &tbs, &tbzp, &tys, &tyzp}, 8, 1),
                          RD_OK);
    const uint8_t want[6] = {168, 115, 255, 1, 66, 151};
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, want, 6), 0);
    h_fini(&r);
}

static void test_conv_integer(void)
{
    const uint8_t x[9] = {2, 3, 4, 5, 6, 7, 8, 9, 10}, w[4] = {1, 1, 1, 1}, xzp = 1;
    rd_tensor tx = H_T(RD_DT_U8, x, 1, 1, 3, 3), tw = H_T(RD_DT_U8, w, 1, 1, 2, 2), tz = H_SCALAR(RD_DT_U8, &xzp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ConvInteger", 10, NULL, 0, (const rd_tensor *[]){&tx, &tw, &tz}, 3, 1), RD_OK);
    const int32_t want[4] = {12, 16, 24, 28};
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, want, sizeof want), 0);
    h_fini(&r);
    const int64_t pads[4] = {1, 1, 1, 1};
    sim_attr ap = h_ints("pads", pads, 4);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ConvInteger", 10, &ap, 1, (const rd_tensor *[]){&tx, &tw, &tz}, 3, 1), RD_OK);
    const int32_t wantp[16] = {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9};
    CU_ASSERT(r.out[0].dims[2] == 4 && r.out[0].dims[3] == 4);
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, wantp, sizeof wantp), 0);
    h_fini(&r);
    sim_attr same = h_str("auto_pad", "SAME_UPPER");
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ConvInteger", 10, &same, 1, (const rd_tensor *[]){&tx, &tw, &tz}, 3, 1), RD_OK);
    CU_ASSERT(r.out[0].dims[2] == 3 && ((const int32_t *)r.out[0].data)[8] == 9);
    h_fini(&r);
    sim_attr badp = h_str("auto_pad", "BOTH");
    CU_ASSERT_EQUAL(h_exec(&r, "ConvInteger", 10, &badp, 1, (const rd_tensor *[]){&tx, &tw}, 2, 1), RD_E_PARSE);
    h_fini(&r);
    sim_attr grp = h_int("group", 2);
    CU_ASSERT_EQUAL(h_exec(&r, "ConvInteger", 10, &grp, 1, (const rd_tensor *[]){&tx, &tw}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

/* ConvInteger with groups, stride and padding against a plain loop: weights whose w - w_zp fit int8 take
   the int8 simulator kernels, others the int32 loops; both must give the same sums. */
static void test_conv_integer_paths(void)
{
    enum { C = 4, M = 6, G = 2, H = 7, K = 3, S = 2, P = 1, O = (H + 2 * P - K) / S + 1 };
    uint8_t x[C * H * H], w[M * (C / G) * K * K];
    uint32_t r = 7;
    for (int i = 0; i < C * H * H; i++)
        x[i] = (uint8_t)((r = r * 1103515245u + 12345u) >> 24);
    for (int i = 0; i < M * (C / G) * K * K; i++)
        w[i] = (uint8_t)((r = r * 1103515245u + 12345u) >> 24);
    const uint8_t xzp = 3;
    const int64_t strides[2] = {S, S}, pads[4] = {P, P, P, P};
    sim_attr attrs[3] = {h_int("group", G), h_ints("strides", strides, 2), h_ints("pads", pads, 4)};
    for (int wzp_v = 0; wzp_v <= 128; wzp_v += 128) { /* 128: fast path; 0: w up to 255, the int32 loops */
        const uint8_t wzp = (uint8_t)wzp_v;
        rd_tensor tx = H_T(RD_DT_U8, x, 1, C, H, H), tw = H_T(RD_DT_U8, w, M, C / G, K, K);
        rd_tensor txz = H_SCALAR(RD_DT_U8, &xzp), twz = H_SCALAR(RD_DT_U8, &wzp);
        h_run run;
        const rd_tensor *in[4] = {&tx, &tw, &txz, &twz};
        CU_ASSERT_EQUAL_FATAL(h_exec(&run, "ConvInteger", 10, attrs, 3, in, 4, 1), RD_OK);
        CU_ASSERT_FATAL(run.out[0].dims[1] == M && run.out[0].dims[2] == O && run.out[0].dims[3] == O);
        const int32_t *y = run.out[0].data;
        int bad = 0;
        for (int m = 0; m < M; m++)
            for (int oy = 0; oy < O; oy++)
                for (int ox = 0; ox < O; ox++) {
                    int32_t acc = 0;
                    int g = m / (M / G);
                    for (int c = 0; c < C / G; c++)
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++) {
                                int iy = oy * S + ky - P, ix = ox * S + kx - P;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= H)
                                    continue;
                                acc += ((int32_t)x[((g * (C / G) + c) * H + iy) * H + ix] - xzp) *
                                       ((int32_t)w[((m * (C / G) + c) * K + ky) * K + kx] - wzp);
                            }
                    bad += y[(m * O + oy) * O + ox] != acc;
                }
        CU_ASSERT_EQUAL(bad, 0);
        h_fini(&run);
    }
}

static void test_qlinear_conv(void)
{
    const uint8_t x[4] = {10, 20, 30, 40}, xzp = 10, yzp = 0;
    const int8_t w[1] = {2}, wzp = 0;
    const float xs = 0.5f, ws = 0.25f, ys = 1.0f;
    const int32_t bias[1] = {4};
    rd_tensor tx = H_T(RD_DT_U8, x, 1, 1, 2, 2), tw = H_T(RD_DT_I8, w, 1, 1, 1, 1), tb = H_T(RD_DT_I32, bias, 1);
    rd_tensor txs = H_SCALAR(RD_DT_F32, &xs), tws = H_SCALAR(RD_DT_F32, &ws), tys = H_SCALAR(RD_DT_F32, &ys);
    rd_tensor txz = H_SCALAR(RD_DT_U8, &xzp), twz = H_SCALAR(RD_DT_I8, &wzp), tyz = H_SCALAR(RD_DT_U8, &yzp);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QLinearConv", 10, NULL, 0,
                                 (const rd_tensor *[]){&tx, &txs, &txz, &tw, &tws, &twz, &tys, &tyz}, 8, 1),
                          RD_OK);
    const uint8_t want[4] = {0, 2, 5, 8}; /* 0, 2.5, 5, 7.5 rounded half to even */
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, want, 4), 0);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "QLinearConv", 10, NULL, 0,
                                 (const rd_tensor *[]){&tx, &txs, &txz, &tw, &tws, &twz, &tys, &tyz, &tb}, 9, 1),
                          RD_OK);
    const uint8_t wantb[4] = {0, 3, 6, 8}; /* 0.5, 3, 5.5, 8 */
    CU_ASSERT_EQUAL(memcmp(r.out[0].data, wantb, 4), 0);
    h_fini(&r);
}

RD_TEST_REGISTER(register_quant_ops)
{
    RD_SUITE("quant_ops", {"quantize", test_quantize}, {"dequantize", test_dequantize},
             {"dynamic quantize", test_dynamic_quantize}, {"matmul integer", test_matmul_integer},
             {"qlinear matmul", test_qlinear_matmul}, {"conv integer", test_conv_integer},
             {"conv integer: int8 kernels and int32 loops", test_conv_integer_paths},
             {"qlinear conv", test_qlinear_conv});
}
