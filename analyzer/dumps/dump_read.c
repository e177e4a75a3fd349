/*
 * dump_read.c: one board dump file into a tensor (docs/dumps.md, "Reading").
 *
 * The .txt files of RKNN_LOG_LEVEL=6 are documented by their layout only (NC1HWC2), not by their text
 * format. Assumed here: the whole native buffer, padding channels included, as numbers separated by
 * whitespace (commas, brackets and semicolons are accepted as separators too), in the dump's dtype
 * domain (int8 codes for an int8 dump). Anything else in the file is an error naming its offset.
 */
#include "dump_read.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TXT_MAX_CHARS_PER_NUMBER 64 /* bounds the file size read for a given element count */

static int64_t numel_of(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == ',' || c == '[' ||
           c == ']' || c == ';';
}

/* Parses exactly n numbers from text into vals. */
static rd_status parse_numbers(const char *file, const char *text, float *vals, size_t n, rd_error *err)
{
    const char *p = text;
    size_t k = 0;
    for (;;) {
        while (*p && is_sep(*p))
            p++;
        if (!*p)
            break;
        char *end = NULL;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || (*end && !is_sep(*end)))
            return rd_errorf(err, RD_E_PARSE, "%s: offset %zu: '%.16s' is not a number", file, (size_t)(p - text), p);
        if (k == n)
            return rd_errorf(err, RD_E_PARSE, "%s: more than the %zu numbers the NC1HWC2 layout of its shape holds",
                             file, n);
        vals[k++] = (float)v;
        p = end;
    }
    if (k != n)
        return rd_errorf(err, RD_E_PARSE, "%s: %zu numbers, the NC1HWC2 layout of its shape holds %zu (truncated?)",
                         file, k, n);
    return RD_OK;
}

/* Stores float values as dtype dt (integers must be whole and in range). */
static rd_status store_as(const char *file, const float *vals, rd_tensor *t, rd_error *err)
{
    int64_t n = rd_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        float v = vals[i];
        double lo = 0, hi = 0;
        switch (t->dtype) {
        case RD_DT_F32:
            ((float *)t->data)[i] = v;
            continue;
        case RD_DT_F16:
            ((uint16_t *)t->data)[i] = rd_f32_to_f16(v);
            continue;
        case RD_DT_U8:
            lo = 0, hi = 255;
            break;
        case RD_DT_I8:
            lo = -128, hi = 127;
            break;
        case RD_DT_I16:
            lo = -32768, hi = 32767;
            break;
        default:
            lo = -2147483648.0, hi = 2147483647.0;
            break;
        }
        if (!(v >= lo && v <= hi) || v != floorf(v))
            return rd_errorf(err, RD_E_PARSE, "%s: element %lld is %g, not a %s value", file, (long long)i, (double)v,
                             rd_dtype_get(t->dtype)->name);
        switch (t->dtype) {
        case RD_DT_U8:
            ((uint8_t *)t->data)[i] = (uint8_t)v;
            break;
        case RD_DT_I8:
            ((int8_t *)t->data)[i] = (int8_t)v;
            break;
        case RD_DT_I16:
            ((int16_t *)t->data)[i] = (int16_t)v;
            break;
        default:
            ((int32_t *)t->data)[i] = (int32_t)v;
            break;
        }
    }
    return RD_OK;
}

static rd_status read_txt(const char *path, const char *file, const an_dump_name *dn, int c2, rd_tensor *out,
                          rd_error *err)
{
    if (c2 <= 0)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: the target's NC1HWC2 C2 for %s is not documented, so the .txt cannot be converted (use "
                         "the .npy dumps of RKNN_LOG_LEVEL=5)",
                         file, rd_dtype_get(dn->dtype)->name);
    if (dn->rank > 4)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: a rank-%d .txt dump has no NCHW layout", file, dn->rank);
    int64_t nchw[4] = {1, 1, 1, 1};
    for (int i = 0; i < dn->rank; i++)
        nchw[i] = dn->dims[i];
    int64_t padded_dims[4] = {nchw[0], (nchw[1] + c2 - 1) / c2, nchw[2] * nchw[3], c2};
    size_t n_padded = 0, n_bytes = 0;
    rd_status st = rd_shape_bytes(RD_DT_F32, 4, padded_dims, &n_padded, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", file);
    n_padded /= sizeof(float);
    st = rd_shape_bytes(dn->dtype, dn->rank, dn->dims, &n_bytes, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "%s", file);
    if (n_padded > SIZE_MAX / TXT_MAX_CHARS_PER_NUMBER - 4096)
        return rd_errorf(err, RD_E_LIMIT, "%s: shape too large", file);

    char *text = NULL;
    size_t text_len;
    st = rd_file_read_all(NULL, path, n_padded * TXT_MAX_CHARS_PER_NUMBER + 4096, &text, &text_len, err);
    if (st != RD_OK)
        return st;
    size_t n = (size_t)numel_of(4, nchw);
    float *padded = malloc((n_padded ? n_padded : 1) * sizeof *padded);
    float *plain = malloc((n ? n : 1) * sizeof *plain);
    if (!padded || !plain)
        st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory", file);
    if (st == RD_OK)
        st = parse_numbers(file, text, padded, n_padded, err);
    free(text);
    if (st == RD_OK)
        st = an_nc1hwc2_to_nchw(padded, nchw, c2, plain, err);
    if (st == RD_OK)
        st = rd_tensor_alloc(out, dn->dtype, dn->rank, dn->dims, err);
    if (st == RD_OK) {
        st = store_as(file, plain, out, err);
        if (st != RD_OK)
            rd_tensor_fini(out);
    }
    free(padded);
    free(plain);
    return st;
}

rd_status an_dump_read_raw(const char *path, const an_dump_name *dn, int c2, rd_tensor *out, rd_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *file = slash ? slash + 1 : path;
    memset(out, 0, sizeof *out);
    if (dn->is_txt)
        return read_txt(path, file, dn, c2, out, err);
    /* the name gives dtype and shape: a file holding others is refused on its header, before its data is read */
    rd_npy_expect want = {.dtype = dn->dtype, .rank = dn->rank, .what = "the dump's name"};
    memcpy(want.dims, dn->dims, sizeof want.dims);
    return rd_npy_load_expect(path, &want, out, err);
}

rd_status an_dump_dequantize(const rd_tensor *raw, const rd_sim_tensor *info, const char *tensor, rd_tensor *out,
                             rd_error *err)
{
    switch (raw->dtype) {
    case RD_DT_F32:
        return rd_tensor_clone(out, raw, err);
    case RD_DT_F16:
        return rd_tensor_to_f32(out, raw, err);
    case RD_DT_I8:
        break;
    default:
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "a %s dump of tensor '%s' cannot be dequantized: the simulation holds only int8 parameters",
                         rd_dtype_get(raw->dtype)->name, tensor);
    }
    if (!info || !info->quantized)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "an int8 dump of tensor '%s', which the simulation holds in %s without int8 parameters "
                         "(dumps from a build with another dtype or hybrid config?)",
                         tensor, info ? rd_prec_name(info->precision) : "float");
    rd_status st = rd_tensor_alloc(out, RD_DT_F32, raw->rank, raw->dims, err);
    if (st != RD_OK)
        return st;
    const int8_t *q = raw->data;
    float *f = out->data;
    int64_t n = rd_tensor_numel(raw);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)((int32_t)q[i] - info->zero_point) * info->scale;
    return RD_OK;
}
