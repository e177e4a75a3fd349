/*
 * fuzz_image.c: libFuzzer target for image decoding (rd_image_parse: PNG, JPEG, BMP) and the input
 * preparation that follows (resize, channel conversion, mean/std). Pixels are capped at 1 M so that
 * decoding stays fast; a decoded image must have the shape it claims, and failures must name the
 * file. Inputs are capped at 1 MiB.
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)1 << 20)
#define FUZZ_MAX_PIXELS ((uint64_t)1 << 20)
#define FUZZ_NAME "fuzz.img"

/* rd_image_parse under the pixel cap. */
static rd_status parse_image(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    return rd_image_parse(buf, size, name, FUZZ_MAX_PIXELS, out, err);
}

static void check_image(void *parsed)
{
    rd_tensor *img = parsed;
    rd_error err;
    if (img->dtype != RD_DT_U8 || img->rank != 3 || (img->dims[2] != 1 && img->dims[2] != 3) ||
        (uint64_t)(img->dims[0] * img->dims[1]) > FUZZ_MAX_PIXELS)
        __builtin_trap();
    rd_input_spec spec = RD_INPUT_SPEC_DEFAULT;
    spec.rgb2bgr = true;
    spec.n_std = 3;
    spec.std[0] = spec.std[1] = spec.std[2] = 58.8f;
    int64_t dims[4] = {1, 3, 7, 5};
    rd_tensor x;
    if (rd_input_prepare_tensor(img, true, FUZZ_NAME, &spec, 4, dims, NULL, &x, &err) != RD_OK)
        __builtin_trap();
    rd_tensor_fini(&x);
    int64_t grey[4] = {1, 1, 3, 3};
    if (rd_input_prepare_tensor(img, true, FUZZ_NAME, NULL, 4, grey, NULL, &x, &err) != RD_OK)
        __builtin_trap();
    rd_tensor_fini(&x);
    rd_tensor_fini(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_tensor img;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_image, check_image, &img);
}
