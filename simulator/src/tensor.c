/* tensor.c: checked allocation (arrays, their growth), tensor copies and conversion to float32. */
#include "internal.h"

#include <stdio.h>

void *sim_malloc_array(size_t n, size_t size)
{
    size_t bytes;
    if (!sim_mul_ok(n, size, &bytes) || bytes > RD_MAX_TENSOR_BYTES * 2)
        return NULL;
    return malloc(bytes ? bytes : 1);
}

void *sim_calloc_array(size_t n, size_t size)
{
    size_t bytes;
    if (!sim_mul_ok(n, size, &bytes) || bytes > RD_MAX_TENSOR_BYTES * 2)
        return NULL;
    return calloc(bytes ? bytes : 1, 1);
}

bool sim_grow_for(void *arr_ptr, size_t n, size_t elem)
{
    void **arr = arr_ptr;
    if (n && (n & (n - 1)))
        return true; /* not a power of two: there is room */
    void *grown = sim_malloc_array(n ? 2 * n : 1, elem);
    if (!grown)
        return false;
    if (n)
        memcpy(grown, *arr, n * elem);
    free(*arr);
    *arr = grown;
    return true;
}

char *sim_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A zero dim is looked for first: an empty tensor may have other dims whose product overflows. */
int64_t rd_tensor_numel(const rd_tensor *t)
{
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] == 0)
            return 0;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

size_t rd_tensor_nbytes(const rd_tensor *t)
{
    return (size_t)rd_tensor_numel(t) * rd_dtype_get(t->dtype)->size;
}

rd_status rd_shape_bytes(rd_dtype dt, int rank, const int64_t *dims, size_t *out_bytes, rd_error *err)
{
    const rd_dtype_info *info = rd_dtype_get(dt);
    if (!info->supported)
        return rd_errorf(err, RD_E_UNSUPPORTED, "unsupported dtype %s (%d)", info->name, (int)dt);
    if (rank < 0 || rank > RD_MAX_RANK)
        return rd_errorf(err, RD_E_LIMIT, "rank %d is outside 0..%d", rank, RD_MAX_RANK);
    uint64_t bytes = info->size;
    bool zero = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return rd_errorf(err, RD_E_PARSE, "dimension %d is negative (%lld)", i, (long long)dims[i]);
        if (dims[i] == 0)
            zero = true;
    }
    if (zero) {
        /* empty, but strides (products of trailing dims) must still fit in int64, as numpy demands */
        int64_t prod = 1;
        for (int i = 0; i < rank; i++)
            if (dims[i] && __builtin_mul_overflow(prod, dims[i], &prod))
                return rd_errorf(err, RD_E_LIMIT,
                                 "empty tensor whose non-zero dims multiply past "
                                 "2^63 (dim %d = %lld)",
                                 i, (long long)dims[i]);
        *out_bytes = 0;
        return RD_OK;
    }
    for (int i = 0; i < rank; i++) {
        if (__builtin_mul_overflow(bytes, (uint64_t)dims[i], &bytes) || bytes > RD_MAX_TENSOR_BYTES)
            return rd_errorf(err, RD_E_LIMIT, "tensor of shape with dim %d = %lld exceeds the %llu-byte limit", i,
                             (long long)dims[i], (unsigned long long)RD_MAX_TENSOR_BYTES);
    }
    *out_bytes = (size_t)bytes;
    return RD_OK;
}

rd_status rd_tensor_alloc(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, rd_error *err)
{
    return sim_tensor_alloc(t, dt, rank, dims, true, err);
}

rd_status sim_tensor_alloc(rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, bool zero, rd_error *err)
{
    return sim_tensor_alloc_from(NULL, t, dt, rank, dims, zero, err);
}

rd_status sim_tensor_alloc_from(rd_run_buffers *b, rd_tensor *t, rd_dtype dt, int rank, const int64_t *dims, bool zero,
                                rd_error *err)
{
    size_t bytes;
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    rd_status st = rd_shape_bytes(dt, rank, dims, &bytes, err);
    if (st != RD_OK)
        return st;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    if (bytes) {
        t->data = sim_buffers_take(b, bytes, zero);
        if (!t->data)
            return rd_errorf(err, RD_E_NOMEM, "cannot allocate %zu bytes for a tensor", bytes);
    }
    return RD_OK;
}

rd_status rd_tensor_clone(rd_tensor *dst, const rd_tensor *src, rd_error *err)
{
    rd_status st = rd_tensor_alloc(dst, src->dtype, src->rank, src->dims, err);
    if (st == RD_OK && dst->data)
        memcpy(dst->data, src->data, rd_tensor_nbytes(src));
    return st;
}

void rd_tensor_fini(rd_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    memset(t, 0, sizeof *t);
    t->dtype = RD_DT_F32;
}

int64_t sim_get_int(const rd_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case RD_DT_I64:
        return ((const int64_t *)t->data)[i];
    case RD_DT_I32:
        return ((const int32_t *)t->data)[i];
    case RD_DT_I16:
        return ((const int16_t *)t->data)[i];
    case RD_DT_I8:
        return ((const int8_t *)t->data)[i];
    case RD_DT_U8:
        return ((const uint8_t *)t->data)[i];
    case RD_DT_U16:
        return ((const uint16_t *)t->data)[i];
    case RD_DT_U32:
        return ((const uint32_t *)t->data)[i];
    case RD_DT_U64:
        return (int64_t)((const uint64_t *)t->data)[i];
    case RD_DT_BOOL:
        return ((const uint8_t *)t->data)[i] != 0;
    default:
        return (int64_t)sim_get_f64(t, i);
    }
}

double sim_get_f64(const rd_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case RD_DT_F32:
        return ((const float *)t->data)[i];
    case RD_DT_F64:
        return ((const double *)t->data)[i];
    case RD_DT_F16:
        return rd_f16_to_f32(((const uint16_t *)t->data)[i]);
    case RD_DT_BF16:
        return rd_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case RD_DT_I64:
        return (double)((const int64_t *)t->data)[i];
    case RD_DT_U64:
        return (double)((const uint64_t *)t->data)[i];
    case RD_DT_I32:
        return ((const int32_t *)t->data)[i];
    case RD_DT_U32:
        return ((const uint32_t *)t->data)[i];
    case RD_DT_I16:
        return ((const int16_t *)t->data)[i];
    case RD_DT_U16:
        return ((const uint16_t *)t->data)[i];
    case RD_DT_I8:
        return ((const int8_t *)t->data)[i];
    case RD_DT_U8:
        return ((const uint8_t *)t->data)[i];
    case RD_DT_BOOL:
        return ((const uint8_t *)t->data)[i] != 0;
    default:
        return 0.0;
    }
}

/* Integer targets take C's conversion of the truncated value; callers that need saturation do it. */
void sim_set_f64(rd_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case RD_DT_F32:
        ((float *)t->data)[i] = (float)v;
        break;
    case RD_DT_F64:
        ((double *)t->data)[i] = v;
        break;
    case RD_DT_F16:
        ((uint16_t *)t->data)[i] = rd_f32_to_f16((float)v);
        break;
    case RD_DT_BF16:
        ((uint16_t *)t->data)[i] = rd_f32_to_bf16((float)v);
        break;
    case RD_DT_I64:
        ((int64_t *)t->data)[i] = (int64_t)v;
        break;
    case RD_DT_U64:
        ((uint64_t *)t->data)[i] = (uint64_t)v;
        break;
    case RD_DT_I32:
        ((int32_t *)t->data)[i] = (int32_t)(int64_t)v;
        break;
    case RD_DT_U32:
        ((uint32_t *)t->data)[i] = (uint32_t)(int64_t)v;
        break;
    case RD_DT_I16:
        ((int16_t *)t->data)[i] = (int16_t)(int64_t)v;
        break;
    case RD_DT_U16:
        ((uint16_t *)t->data)[i] = (uint16_t)(int64_t)v;
        break;
    case RD_DT_I8:
        ((int8_t *)t->data)[i] = (int8_t)(int64_t)v;
        break;
    case RD_DT_U8:
        ((uint8_t *)t->data)[i] = (uint8_t)(int64_t)v;
        break;
    case RD_DT_BOOL:
        ((uint8_t *)t->data)[i] = v != 0.0;
        break;
    default:
        break;
    }
}

rd_status rd_tensor_to_f32(rd_tensor *dst, const rd_tensor *src, rd_error *err)
{
    if (!rd_dtype_get(src->dtype)->supported || src->dtype == RD_DT_STRING)
        return rd_errorf(err, RD_E_UNSUPPORTED, "cannot convert %s to float32", rd_dtype_name(src->dtype));
    rd_status st = rd_tensor_alloc(dst, RD_DT_F32, src->rank, src->dims, err);
    if (st != RD_OK)
        return st;
    int64_t n = rd_tensor_numel(src);
    float *d = dst->data;
    if (src->dtype == RD_DT_F32) {
        if (n)
            memcpy(d, src->data, (size_t)n * 4);
        return RD_OK;
    }
    for (int64_t i = 0; i < n; i++)
        d[i] = (float)sim_get_f64(src, i);
    return RD_OK;
}

const char *rd_dims_str(int rank, const int64_t *dims, const char *const *dim_params, char *buf, size_t len)
{
    if (!len)
        return buf;
    buf[0] = '\0';
    if (rank <= 0) {
        snprintf(buf, len, "%s", rank == 0 ? "scalar" : "?");
        return buf;
    }
    size_t used = 0;
    for (int d = 0; d < rank && used < len; d++) {
        const char *x = d ? "x" : "";
        int w = dim_params && dim_params[d] ? snprintf(buf + used, len - used, "%s%s", x, dim_params[d])
                : dims[d] < 0               ? snprintf(buf + used, len - used, "%s?", x)
                                            : snprintf(buf + used, len - used, "%s%lld", x, (long long)dims[d]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

const char *rd_shape_str(const rd_tensor *t, char *buf, size_t len)
{
    return rd_dims_str(t->rank, t->dims, NULL, buf, len);
}

void sim_set_shape(rd_tensor *out, rd_dtype dt, int rank, const int64_t *dims)
{
    out->dtype = dt;
    out->rank = rank;
    for (int i = 0; i < rank; i++)
        out->dims[i] = dims[i];
}
