/*
 * fe_check.c: fe_check_equivalent (fe_check.h).
 */
#include "fe_check.h"

#include "rd_test.h"
#include "rknn_diag/frontends.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FE_CHECK_MAX_OUT 8

static bool run(rd_model *m, const rd_tensor *x, rd_tensor *out, int n_out)
{
    rd_error err;
    memset(out, 0, (size_t)n_out * sizeof *out);
    rd_status st = rd_model_run(m, x, 1, NULL, out, (size_t)n_out, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    return st == RD_OK;
}

void fe_check_equivalent(rd_model *m, rd_onnx_builder *b, const rd_tensor *x, int n_out, const float *golden,
                         double tol, const char *tag, const char *onnx_name, const char *npy_name)
{
    CU_ASSERT_FATAL(n_out <= FE_CHECK_MAX_OUT);
    rd_error err;
    void *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_write(b, &buf, &len, &err), RD_OK);
    char *dir = rd_test_tmpdir(tag);
    char *path = rd_test_join(dir, onnx_name), *xpath = rd_test_join(dir, npy_name);
    CU_ASSERT_EQUAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_npy_save(xpath, x, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_model *e = NULL;
    rd_status st = rd_model_load_mem(buf, len, onnx_name, NULL, NULL, &e, &err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL(st, RD_OK);
    rd_tensor got[FE_CHECK_MAX_OUT], ref[FE_CHECK_MAX_OUT];
    if (st == RD_OK && run(m, x, got, n_out) && run(e, x, ref, n_out)) {
        double max_ref = 0.0, max_ort = 0.0;
        for (int o = 0, k = 0; o < n_out; o++) {
            CU_ASSERT_EQUAL_FATAL(rd_tensor_numel(&got[o]), rd_tensor_numel(&ref[o]));
            for (int64_t i = 0; i < rd_tensor_numel(&got[o]); i++, k++) {
                float g = ((float *)got[o].data)[i];
                max_ref = fmax(max_ref, fabs(g - ((float *)ref[o].data)[i]));
                max_ort = fmax(max_ort, fabs(g - golden[k]));
            }
            rd_tensor_fini(&got[o]);
            rd_tensor_fini(&ref[o]);
        }
        CU_ASSERT(max_ref < tol);
        CU_ASSERT(max_ort < tol);
        if (max_ort >= tol || max_ref >= tol)
            fprintf(stderr, "\n%s: max |diff| %g against ONNX Runtime, %g against our run of %s (files in %s)\n", tag,
                    max_ort, max_ref, onnx_name, dir);
    }
    rd_model_destroy(e);
    free(buf);
    free(path);
    free(xpath);
    free(dir);
}

void fe_check_shapes(const rd_model *m, const fe_shape *expect, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int v = rd_model_find_value(m, expect[i].name);
        if (v < 0)
            fprintf(stderr, "\nno value %s\n", expect[i].name);
        CU_ASSERT_FATAL(v >= 0);
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        bool same = vi.rank == expect[i].rank &&
                    !memcmp(vi.dims, expect[i].dims, (size_t)(vi.rank > 0 ? vi.rank : 0) * sizeof(int64_t));
        if (!same)
            fprintf(stderr, "\n%s: rank %d, dims %lld %lld %lld %lld\n", expect[i].name, vi.rank, (long long)vi.dims[0],
                    (long long)vi.dims[1], (long long)vi.dims[2], (long long)vi.dims[3]);
        CU_ASSERT(same);
    }
}

void fe_add_f32(rd_onnx_builder *b, const char *name, int rank, const int64_t *dims, const float *v)
{
    rd_tensor t = {.dtype = RD_DT_F32, .rank = rank, .data = (void *)v};
    if (rank)
        memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    CU_ASSERT_EQUAL(rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW), RD_OK);
}

void fe_add_i64(rd_onnx_builder *b, const char *name, int n, const int64_t *v)
{
    rd_tensor t = {.dtype = RD_DT_I64, .rank = 1, .dims = {n}, .data = (void *)v};
    CU_ASSERT_EQUAL(rd_onnx_add_initializer(b, name, &t, RD_ONNX_RAW), RD_OK);
}

void fe_assert_ok(rd_status st, const rd_error *err)
{
    if (st != RD_OK)
        fprintf(stderr, "\n%s\n", err->msg);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
}

void fe_check_alone(const char *tag, const char *name, const char *text, const char *says, const char *weights)
{
    char *dir = rd_test_tmpdir(tag);
    char *path = rd_test_join(dir, name);
    rd_test_write_text(path, text);
    rd_model *m = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(rd_frontend_load(path, NULL, NULL, &m, NULL, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, says));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, weights));
    free(path);
    free(dir);
}
