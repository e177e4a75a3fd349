/* test_elementwise_ops.c: the elementwise family (binary, variadic, Where, unary, Clip, Cast, Reduce*,
 * ArgMax/ArgMin) and the broadcast plan, on hand-computed cases and malformed inputs. */
#include "op_harness.h"
#include "rd_test.h"
#include "kernels/broadcast.h"

#include <math.h>

#define F(r, k) ((const float *)(r).out[k].data)
#define ASSERT_F(got, want) CU_ASSERT_DOUBLE_EQUAL(got, want, 1e-5 + 1e-5 * fabs((double)(want)))

static void test_broadcast_plan(void)
{
    /* [2,3,4] + [4]: the two leading dims merge into rows of 4 */
    bc_plan p;
    int ranks[2] = {3, 1};
    const int64_t da[3] = {2, 3, 4}, db[1] = {4}, dc[2] = {3, 1};
    const int64_t *dims[2] = {da, db};
    bc_plan_broadcast(&p, 3, da, 2, ranks, dims);
    CU_ASSERT_EQUAL(p.rank, 2);
    CU_ASSERT_EQUAL(p.dims[0], 6);
    CU_ASSERT_EQUAL(p.dims[1], 4);
    CU_ASSERT_EQUAL(p.st[2][0], 0);
    CU_ASSERT_EQUAL(p.st[2][1], 1);
    /* [2,3,4] + [3,1]: nothing merges; operand 2 is at stride 0 along the row */
    const int64_t *dims2[2] = {da, dc};
    int ranks2[2] = {3, 2};
    bc_plan_broadcast(&p, 3, da, 2, ranks2, dims2);
    CU_ASSERT_EQUAL(p.rank, 3);
    CU_ASSERT_EQUAL(p.st[2][1], 1);
    CU_ASSERT_EQUAL(p.st[2][2], 0);
    /* same shapes merge into one row */
    const int64_t *same[2] = {da, da};
    int r3[2] = {3, 3};
    bc_plan_broadcast(&p, 3, da, 2, r3, same);
    CU_ASSERT_EQUAL(p.rank, 1);
    CU_ASSERT_EQUAL(p.dims[0], 24);
}

static void test_add_broadcast(void)
{
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, c[2] = {100, 200}, s = 0.5f;
    rd_tensor ta = H_T(RD_DT_F32, a, 2, 3), tb = H_T(RD_DT_F32, b, 3), tc = H_T(RD_DT_F32, c, 2, 1);
    rd_tensor ts = H_SCALAR(RD_DT_F32, &s);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Add", 14, NULL, 0, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].rank, 2);
    ASSERT_F(F(r, 0)[0], 11);
    ASSERT_F(F(r, 0)[5], 36);
    h_fini(&r);
    /* column + row vector -> 2x3 */
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Sub", 14, NULL, 0, (const rd_tensor *[]){&tc, &tb}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dims[0], 2);
    CU_ASSERT_EQUAL(r.out[0].dims[1], 3);
    ASSERT_F(F(r, 0)[2], 70);
    ASSERT_F(F(r, 0)[3], 190);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Mul", 14, NULL, 0, (const rd_tensor *[]){&ts, &ta}, 2, 1), RD_OK);
    ASSERT_F(F(r, 0)[5], 3);
    h_fini(&r);
    /* incompatible shapes: a clear error, no crash */
    rd_tensor bad = H_T(RD_DT_F32, a, 2);
    CU_ASSERT_EQUAL(h_exec(&r, "Add", 14, NULL, 0, (const rd_tensor *[]){&ta, &bad}, 2, 1), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "does not broadcast"));
    h_fini(&r);
    /* mixed dtypes are refused */
    const int32_t ib[3] = {1, 2, 3};
    rd_tensor ti = H_T(RD_DT_I32, ib, 3);
    CU_ASSERT_EQUAL(h_exec(&r, "Add", 14, NULL, 0, (const rd_tensor *[]){&ta, &ti}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

static void test_legacy_broadcast(void)
{
    /* opset 6: B [3] aligned at axis 1 of A [2,3,2] */
    const float a[12] = {0}, b[3] = {1, 2, 3};
    rd_tensor ta = H_T(RD_DT_F32, a, 2, 3, 2), tb = H_T(RD_DT_F32, b, 3);
    sim_attr at[2] = {h_int("broadcast", 1), h_int("axis", 1)};
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Add", 6, at, 2, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    CU_ASSERT(r.out[0].rank == 3 && F(r, 0)[1] == 1 && F(r, 0)[2] == 2 && F(r, 0)[11] == 3);
    h_fini(&r);
}

static void test_integer_div_mod(void)
{
    const int32_t a[4] = {7, -7, 7, 5}, b[4] = {2, 2, -2, 0};
    rd_tensor ta = H_T(RD_DT_I32, a, 4), tb = H_T(RD_DT_I32, b, 4);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Div", 14, NULL, 0, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    const int32_t *y = r.out[0].data;
    CU_ASSERT(y[0] == 3 && y[1] == -3 && y[2] == -3 && y[3] == 0); /* truncation; /0 gives 0 */
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Mod", 13, NULL, 0, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    y = r.out[0].data;
    CU_ASSERT(y[0] == 1 && y[1] == 1 && y[2] == -1 && y[3] == 0); /* sign of the divisor */
    h_fini(&r);
    sim_attr fm = h_int("fmod", 1);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Mod", 13, &fm, 1, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    y = r.out[0].data;
    CU_ASSERT(y[0] == 1 && y[1] == -1 && y[2] == 1); /* sign of the dividend */
    h_fini(&r);
    const float fa[2] = {-4.3f, 4.3f}, fb[2] = {2.1f, -2.1f};
    rd_tensor tfa = H_T(RD_DT_F32, fa, 2), tfb = H_T(RD_DT_F32, fb, 2);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Mod", 13, &fm, 1, (const rd_tensor *[]){&tfa, &tfb}, 2, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], fmodf(-4.3f, 2.1f));
    h_fini(&r);
    sim_attr bad = h_int("fmod", 2);
    CU_ASSERT_EQUAL(h_exec(&r, "Mod", 13, &bad, 1, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_E_PARSE);
    h_fini(&r);
}

static void test_pow_mixed(void)
{
    const int32_t base[3] = {1, 2, 3};
    const float e[3] = {4, 5, 6};
    rd_tensor tb = H_T(RD_DT_I32, base, 3), te = H_T(RD_DT_F32, e, 3);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Pow", 15, NULL, 0, (const rd_tensor *[]){&tb, &te}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dtype, RD_DT_I32);
    const int32_t *y = r.out[0].data;
    CU_ASSERT(y[0] == 1 && y[1] == 32 && y[2] == 729);
    h_fini(&r);
    const float fb[2] = {2, 9}, fe = 0.5f;
    rd_tensor tfb = H_T(RD_DT_F32, fb, 2), tfe = H_SCALAR(RD_DT_F32, &fe);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Pow", 15, NULL, 0, (const rd_tensor *[]){&tfb, &tfe}, 2, 1), RD_OK);
    ASSERT_F(F(r, 0)[1], 3);
    h_fini(&r);
}

static void test_variadic_and_where(void)
{
    const float a[3] = {1, 5, 3}, b[1] = {4}, c[2] = {0, 10};
    rd_tensor ta = H_T(RD_DT_F32, a, 3), tb = H_T(RD_DT_F32, b, 1), tc = H_T(RD_DT_F32, c, 2, 1);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Max", 13, NULL, 0, (const rd_tensor *[]){&ta, &tb, &tc}, 3, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].rank, 2);
    ASSERT_F(F(r, 0)[0], 4);
    ASSERT_F(F(r, 0)[1], 5);
    ASSERT_F(F(r, 0)[3], 10);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Mean", 13, NULL, 0, (const rd_tensor *[]){&ta, &tb, &tc}, 3, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], 5.0 / 3);
    ASSERT_F(F(r, 0)[5], 17.0 / 3);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Sum", 13, NULL, 0, (const rd_tensor *[]){&ta}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[1], 5);
    h_fini(&r);
    const uint8_t cond[2] = {1, 0};
    const int64_t x[3] = {1, 2, 3}, yv = -1;
    rd_tensor tcond = H_T(RD_DT_BOOL, cond, 2, 1), tx = H_T(RD_DT_I64, x, 3), ty = H_SCALAR(RD_DT_I64, &yv);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Where", 16, NULL, 0, (const rd_tensor *[]){&tcond, &tx, &ty}, 3, 1), RD_OK);
    const int64_t *w = r.out[0].data;
    CU_ASSERT(w[0] == 1 && w[2] == 3 && w[3] == -1 && w[5] == -1);
    h_fini(&r);
}

static void test_compare_logic_prelu(void)
{
    const float a[4] = {1, 2, 3, NAN}, b = 2;
    rd_tensor ta = H_T(RD_DT_F32, a, 4), tb = H_SCALAR(RD_DT_F32, &b);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "GreaterOrEqual", 16, NULL, 0, (const rd_tensor *[]){&ta, &tb}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dtype, RD_DT_BOOL);
    const uint8_t *y = r.out[0].data;
    CU_ASSERT(y[0] == 0 && y[1] == 1 && y[2] == 1 && y[3] == 0);
    h_fini(&r);
    const uint8_t p[4] = {0, 1, 0, 1}, q[2] = {0, 1};
    rd_tensor tp = H_T(RD_DT_BOOL, p, 2, 2), tq = H_T(RD_DT_BOOL, q, 2);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Xor", 7, NULL, 0, (const rd_tensor *[]){&tp, &tq}, 2, 1), RD_OK);
    y = r.out[0].data;
    CU_ASSERT(y[0] == 0 && y[1] == 0 && y[2] == 0 && y[3] == 0);
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "And", 7, NULL, 0, (const rd_tensor *[]){&ta, &ta}, 2, 1), RD_E_UNSUPPORTED);
    h_fini(&r);
    /* PRelu: slope [2,1,1] per channel of [1,2,1,2] */
    const float x[4] = {-1, 2, -3, 4}, s[2] = {0.5f, 0.25f};
    rd_tensor tx = H_T(RD_DT_F32, x, 1, 2, 1, 2), ts = H_T(RD_DT_F32, s, 2, 1, 1);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "PRelu", 16, NULL, 0, (const rd_tensor *[]){&tx, &ts}, 2, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], -0.5);
    ASSERT_F(F(r, 0)[1], 2);
    ASSERT_F(F(r, 0)[2], -0.75);
    h_fini(&r);
    /* a slope that would grow the output is refused (unidirectional broadcast) */
    rd_tensor big = H_T(RD_DT_F32, x, 2, 1, 2, 1, 2);
    CU_ASSERT_EQUAL(h_exec(&r, "PRelu", 16, NULL, 0, (const rd_tensor *[]){&ts, &big}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

static void test_unary(void)
{
    const float x[5] = {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f};
    rd_tensor tx = H_T(RD_DT_F32, x, 5);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Round", 11, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], -2);
    ASSERT_F(F(r, 0)[2], 0);
    ASSERT_F(F(r, 0)[3], 2);
    ASSERT_F(F(r, 0)[4], 2);
    h_fini(&r);
    sim_attr al = h_float("alpha", 0.1f);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "LeakyRelu", 16, &al, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], -0.25);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "HardSwish", 14, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[3], 1.5 * (1.5 / 6 + 0.5));
    h_fini(&r);
    sim_attr ap = h_str("approximate", "tanh");
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Gelu", 20, &ap, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    double v = 1.5;
    ASSERT_F(F(r, 0)[3], 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Gelu", 20, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[3], 0.5 * v * (1 + erf(v / sqrt(2))));
    h_fini(&r);
    sim_attr badap = h_str("approximate", "fast");
    CU_ASSERT_EQUAL(h_exec(&r, "Gelu", 20, &badap, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_E_PARSE);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Softplus", 1, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[4], log(1 + exp(2.5)));
    h_fini(&r);
    /* float16 through float, rounded once */
    const uint16_t h[2] = {rd_f32_to_f16(1.0f), rd_f32_to_f16(-1.0f)};
    rd_tensor th = H_T(RD_DT_F16, h, 2);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Exp", 13, NULL, 0, (const rd_tensor *[]){&th}, 1, 1), RD_OK);
    CU_ASSERT_EQUAL(((const uint16_t *)r.out[0].data)[0], rd_f32_to_f16(expf(1.0f)));
    h_fini(&r);
    /* integer Abs/Neg; Exp of an integer is refused */
    const int8_t i8[3] = {-128, -5, 7};
    rd_tensor ti = H_T(RD_DT_I8, i8, 3);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Abs", 13, NULL, 0, (const rd_tensor *[]){&ti}, 1, 1), RD_OK);
    const int8_t *yi = r.out[0].data;
    CU_ASSERT(yi[0] == -128 && yi[1] == 5 && yi[2] == 7); /* numpy wraps abs(-128) */
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "Exp", 13, NULL, 0, (const rd_tensor *[]){&ti}, 1, 1), RD_E_UNSUPPORTED);
    h_fini(&r);
    const float inf[3] = {INFINITY, -INFINITY, NAN};
    rd_tensor tinf = H_T(RD_DT_F32, inf, 3);
    sim_attr dn = h_int("detect_negative", 0);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "IsInf", 10, &dn, 1, (const rd_tensor *[]){&tinf}, 1, 1), RD_OK);
    const uint8_t *b = r.out[0].data;
    CU_ASSERT(b[0] == 1 && b[1] == 0 && b[2] == 0);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "IsNaN", 13, NULL, 0, (const rd_tensor *[]){&tinf}, 1, 1), RD_OK);
    b = r.out[0].data;
    CU_ASSERT(b[0] == 0 && b[2] == 1);
    h_fini(&r);
}

static void test_clip(void)
{
    const float x[4] = {-3, -1, 1, 3};
    rd_tensor tx = H_T(RD_DT_F32, x, 4);
    h_run r;
    sim_attr at[2] = {h_float("min", -2), h_float("max", 2)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Clip", 6, at, 2, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], -2);
    ASSERT_F(F(r, 0)[3], 2);
    h_fini(&r);
    const float hi = 0;
    rd_tensor thi = H_SCALAR(RD_DT_F32, &hi);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Clip", 13, NULL, 0, (const rd_tensor *[]){&tx, NULL, &thi}, 3, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], -3);
    ASSERT_F(F(r, 0)[2], 0);
    h_fini(&r);
    const int8_t xi[3] = {-100, 0, 100}, lo8 = -10;
    rd_tensor txi = H_T(RD_DT_I8, xi, 3), tlo = H_SCALAR(RD_DT_I8, &lo8);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Clip", 13, NULL, 0, (const rd_tensor *[]){&txi, &tlo}, 2, 1), RD_OK);
    const int8_t *y = r.out[0].data;
    CU_ASSERT(y[0] == -10 && y[1] == 0 && y[2] == 100);
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "Clip", 13, NULL, 0, (const rd_tensor *[]){&tx, &tx}, 2, 1), RD_E_INVAL);
    h_fini(&r);
}

/* Values for the region checks: signs, zeros, NaN and infinities among ordinary ones. */
static void region_values(float *v, int64_t n)
{
    const float special[] = {-0.0f, 0.0f, NAN, INFINITY, -INFINITY, 6.0f, -6.0f, 1e-40f};
    for (int64_t i = 0; i < n; i++)
        v[i] = i % 7 == 3 ? special[(i / 7) % 8] : (float)((i * 7919) % 2001 - 1000) / 97.0f;
}

/* A fused follower's region kernel gives the bits of its eval, in any region of the output. */
static void test_region_kernels(void)
{
    enum { N = 2, C = 5, P = 21 };
    float x[N * C * P], ch[4][C];
    region_values(x, N * C * P);
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < C; c++)
            ch[k][c] = k == 3 ? 0.25f + (float)c : (float)(c * (k + 1)) / 3.0f - 1.0f; /* var > 0 */
    rd_tensor tx = H_T(RD_DT_F32, x, N, C, 7, 3);
    rd_tensor tc[4];
    for (int k = 0; k < 4; k++)
        tc[k] = H_T(RD_DT_F32, ch[k], C);
    const float lo = -1.5f, hi = 6.0f;
    rd_tensor tlo = H_SCALAR(RD_DT_F32, &lo), thi = H_SCALAR(RD_DT_F32, &hi);
    sim_attr alpha = h_float("alpha", 0.1f), clip6[2] = {h_float("min", 0), h_float("max", 6)},
             eps = h_float("epsilon", 1e-3f);
    const struct {
        const char *op;
        int opset;
        const sim_attr *attrs;
        int n_attr;
        const rd_tensor *in[5];
        int n_in;
    } cases[] = {
        {"Relu", 14, NULL, 0, {&tx}, 1},
        {"LeakyRelu", 16, &alpha, 1, {&tx}, 1},
        {"Sigmoid", 13, NULL, 0, {&tx}, 1},
        {"HardSwish", 14, NULL, 0, {&tx}, 1},
        {"Clip", 6, clip6, 2, {&tx}, 1},
        {"Clip", 13, NULL, 0, {&tx, &tlo, &thi}, 3},
        {"Clip", 13, NULL, 0, {&tx, NULL, &thi}, 3},
        {"BatchNormalization", 15, &eps, 1, {&tx, &tc[0], &tc[1], &tc[2], &tc[3]}, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        h_run r;
        CU_ASSERT_EQUAL_FATAL(
            h_exec(&r, cases[i].op, cases[i].opset, cases[i].attrs, cases[i].n_attr, cases[i].in, cases[i].n_in, 1),
            RD_OK);
        const int64_t bad = h_region_mismatches(&r, cases[i].op, cases[i].opset, cases[i].attrs, cases[i].n_attr,
                                                cases[i].in, cases[i].n_in);
        if (bad != 0)
            fprintf(stderr, "region kernel of %s (opset %d, case %zu): %lld elements differ from eval (-1: refused)\n",
                    cases[i].op, cases[i].opset, i, (long long)bad);
        CU_ASSERT_EQUAL(bad, 0);
        h_fini(&r);
    }
    /* an integer Clip has no float region: refused, nothing written */
    const int8_t xi[4] = {-100, 0, 100, 5};
    rd_tensor txi = H_T(RD_DT_I8, xi, 1, 1, 4);
    h_run r;
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Clip", 13, NULL, 0, (const rd_tensor *[]){&txi}, 1, 1), RD_OK);
    CU_ASSERT_EQUAL(h_region_mismatches(&r, "Clip", 13, NULL, 0, (const rd_tensor *[]){&txi}, 1), -1);
    h_fini(&r);
}

static void test_cast(void)
{
    const float x[5] = {1.9f, -1.9f, 300.0f, NAN, -1e10f};
    rd_tensor tx = H_T(RD_DT_F32, x, 5);
    h_run r;
    sim_attr to = h_int("to", RD_DT_I8);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Cast", 13, &to, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    const int8_t *y = r.out[0].data;
    CU_ASSERT(y[0] == 1 && y[1] == -1 && y[2] == 127 && y[3] == 0 && y[4] == -128);
    h_fini(&r);
    sim_attr toh = h_int("to", RD_DT_F16);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Cast", 13, &toh, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    CU_ASSERT_EQUAL(((const uint16_t *)r.out[0].data)[2], rd_f32_to_f16(300.0f));
    h_fini(&r);
    const int64_t big = -1;
    rd_tensor tb = H_SCALAR(RD_DT_I64, &big);
    sim_attr tou = h_int("to", RD_DT_U8);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "Cast", 13, &tou, 1, (const rd_tensor *[]){&tb}, 1, 1), RD_OK);
    CU_ASSERT_EQUAL(*(const uint8_t *)r.out[0].data, 255); /* integer casts wrap */
    h_fini(&r);
    const double like = 0;
    rd_tensor tl = H_SCALAR(RD_DT_F64, &like);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "CastLike", 15, NULL, 0, (const rd_tensor *[]){&tx, &tl}, 2, 1), RD_OK);
    CU_ASSERT_EQUAL(r.out[0].dtype, RD_DT_F64);
    CU_ASSERT_DOUBLE_EQUAL(((const double *)r.out[0].data)[0], (double)1.9f, 0);
    h_fini(&r);
    sim_attr tos = h_int("to", RD_DT_STRING);
    CU_ASSERT_EQUAL(h_exec(&r, "Cast", 13, &tos, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_E_UNSUPPORTED);
    h_fini(&r);
    CU_ASSERT_EQUAL(h_exec(&r, "Cast", 13, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_E_PARSE);
    h_fini(&r);
}

static void test_reduce(void)
{
    const float x[6] = {1, 2, 3, 4, 5, 6};
    rd_tensor tx = H_T(RD_DT_F32, x, 2, 3);
    h_run r;
    const int64_t ax1[1] = {1}, axm[1] = {-2};
    sim_attr a1 = h_ints("axes", ax1, 1);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceMean", 13, &a1, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    CU_ASSERT(r.out[0].rank == 2 && r.out[0].dims[1] == 1);
    ASSERT_F(F(r, 0)[0], 2);
    ASSERT_F(F(r, 0)[1], 5);
    h_fini(&r);
    /* ReduceSum 13: axes as input; keepdims 0 */
    rd_tensor tax = H_T(RD_DT_I64, axm, 1);
    sim_attr kd = h_int("keepdims", 0);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceSum", 13, &kd, 1, (const rd_tensor *[]){&tx, &tax}, 2, 1), RD_OK);
    CU_ASSERT(r.out[0].rank == 1 && r.out[0].dims[0] == 3);
    ASSERT_F(F(r, 0)[2], 9);
    h_fini(&r);
    /* empty axes: all, or a no-op with noop_with_empty_axes */
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceSum", 13, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], 21);
    h_fini(&r);
    sim_attr noop = h_int("noop_with_empty_axes", 1);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceSum", 13, &noop, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    CU_ASSERT(r.out[0].rank == 2);
    ASSERT_F(F(r, 0)[4], 5);
    h_fini(&r);
    /* LogSumExp stays finite for large inputs */
    const float big[2] = {1000, 1000};
    rd_tensor tbig = H_T(RD_DT_F32, big, 2);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceLogSumExp", 13, NULL, 0, (const rd_tensor *[]){&tbig}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], 1000 + log(2.0));
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceL2", 18, NULL, 0, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[0], sqrt(91.0));
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ReduceProd", 13, &a1, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    ASSERT_F(F(r, 0)[1], 120);
    h_fini(&r);
    /* axes attribute at opset 18 is an error; an axis out of range too */
    CU_ASSERT_EQUAL(h_exec(&r, "ReduceMax", 18, &a1, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_E_PARSE);
    h_fini(&r);
    const int64_t ax5[1] = {5};
    sim_attr a5 = h_ints("axes", ax5, 1);
    CU_ASSERT_EQUAL(h_exec(&r, "ReduceMax", 13, &a5, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_E_INVAL);
    h_fini(&r);
}

static void test_argmax(void)
{
    const float x[6] = {1, 3, 3, 0, -1, 0};
    rd_tensor tx = H_T(RD_DT_F32, x, 2, 3);
    h_run r;
    sim_attr at[2] = {h_int("axis", 1), h_int("select_last_index", 1)};
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ArgMax", 13, at, 2, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    const int64_t *y = r.out[0].data;
    CU_ASSERT(r.out[0].dtype == RD_DT_I64 && r.out[0].dims[1] == 1);
    CU_ASSERT(y[0] == 2 && y[1] == 2);
    h_fini(&r);
    CU_ASSERT_EQUAL_FATAL(h_exec(&r, "ArgMin", 13, at, 1, (const rd_tensor *[]){&tx}, 1, 1), RD_OK);
    y = r.out[0].data;
    CU_ASSERT(y[0] == 0 && y[1] == 1);
    h_fini(&r);
}

RD_TEST_REGISTER(register_elementwise_ops)
{
    RD_SUITE("elementwise_ops", {"broadcast plan", test_broadcast_plan}, {"add broadcast", test_add_broadcast},
             {"legacy broadcast", test_legacy_broadcast}, {"integer div mod", test_integer_div_mod},
             {"pow mixed", test_pow_mixed}, {"variadic and where", test_variadic_and_where},
             {"compare logic prelu", test_compare_logic_prelu}, {"unary", test_unary}, {"clip", test_clip},
             {"region kernels give eval's bits", test_region_kernels}, {"cast", test_cast}, {"reduce", test_reduce},
             {"argmax", test_argmax});
}
