/* det_model.c: see det_model.h. */
#include "det_model.h"
#include "rd_test.h"

#include <png.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rd_status det_model_write(const char *path, int in_h, int in_w, const det_out *outs, int n_outs, rd_error *err)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    if (!b)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    rd_onnx_add_input(b, "images", RD_DT_F32, 4, (const int64_t[]){1, 3, in_h, in_w}, NULL);
    rd_onnx_add_node(b, "GlobalAveragePool", "gap", (const char *const[]){"images"}, 1, (const char *const[]){"pooled"},
                     1);
    rd_onnx_node *fl =
        rd_onnx_add_node(b, "Flatten", "flat", (const char *const[]){"pooled"}, 1, (const char *const[]){"feat"}, 1);
    rd_onnx_attr_int(fl, "axis", 1);
    rd_status st = RD_OK;
    for (int i = 0; i < n_outs && st == RD_OK; i++) {
        const det_out *o = &outs[i];
        int64_t k = 1;
        for (int d = 0; d < o->rank; d++)
            k *= o->dims[d];
        char w[64], c[64], s[64], mm[64], add[64];
        snprintf(w, sizeof w, "%s.w", o->name);
        snprintf(c, sizeof c, "%s.base", o->name);
        snprintf(s, sizeof s, "%s.shape", o->name);
        snprintf(mm, sizeof mm, "%s.mm", o->name);
        snprintf(add, sizeof add, "%s.flat", o->name);
        rd_tensor wt, ct, shape;
        st = rd_tensor_alloc(&wt, RD_DT_F32, 2, (const int64_t[]){3, k}, err);
        if (st != RD_OK)
            break;
        memset(wt.data, 0, (size_t)(3 * k) * sizeof(float));
        for (int64_t j = 0; j < k; j++)
            ((float *)wt.data)[j] = o->gain;
        st = rd_tensor_alloc(&ct, RD_DT_F32, 2, (const int64_t[]){1, k}, err);
        if (st == RD_OK) {
            memcpy(ct.data, o->base, (size_t)k * sizeof(float));
            st = rd_tensor_alloc(&shape, RD_DT_I64, 1, (const int64_t[]){o->rank}, err);
        }
        if (st == RD_OK) {
            memcpy(shape.data, o->dims, (size_t)o->rank * sizeof(int64_t));
            rd_onnx_add_initializer(b, w, &wt, RD_ONNX_RAW);
            rd_onnx_add_initializer(b, c, &ct, RD_ONNX_RAW);
            rd_onnx_add_initializer(b, s, &shape, RD_ONNX_RAW);
            rd_tensor_fini(&shape);
        }
        rd_tensor_fini(&wt);
        rd_tensor_fini(&ct);
        rd_onnx_add_node(b, "MatMul", mm, (const char *const[]){"feat", w}, 2, (const char *const[]){mm}, 1);
        rd_onnx_add_node(b, "Add", add, (const char *const[]){mm, c}, 2, (const char *const[]){add}, 1);
        rd_onnx_add_node(b, "Reshape", o->name, (const char *const[]){add, s}, 2, (const char *const[]){o->name}, 1);
        rd_onnx_add_output(b, o->name, RD_DT_F32, o->rank, o->dims, NULL);
    }
    if (st == RD_OK)
        st = rd_onnx_builder_status(b, err);
    if (st == RD_OK)
        st = rd_onnx_builder_save(b, path, err);
    rd_onnx_builder_destroy(b);
    return st;
}

void write_grey_png(const char *path, const uint8_t *px, int w, int h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    img.format = PNG_FORMAT_GRAY;
    png_alloc_size_t len = 0;
    CU_ASSERT_FATAL(png_image_write_to_memory(&img, NULL, &len, 0, px, 0, NULL));
    void *buf = malloc(len);
    CU_ASSERT_FATAL(png_image_write_to_memory(&img, buf, &len, 0, px, 0, NULL));
    rd_error err = {0};
    CU_ASSERT_EQUAL(rd_file_write_atomic(path, buf, len, NULL, &err), RD_OK);
    free(buf);
}
