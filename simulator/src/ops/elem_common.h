/*
 * elem_common.h: typed element access shared by the elementwise, reduction, cast and quant operators
 * for their generic (non-float32) paths. float32 hot paths index float arrays directly instead.
 */
#ifndef RD_OPS_ELEM_COMMON_H
#define RD_OPS_ELEM_COMMON_H

#include "../internal.h"

#include <math.h>

/** Element i of a buffer of dtype dt as double (float16/bfloat16 widened exactly). */
static inline double ec_ld_f64(const void *p, rd_dtype dt, int64_t i)
{
    rd_tensor t = {.dtype = dt, .data = (void *)(uintptr_t)p};
    return sim_get_f64(&t, i);
}

/** Element i of an integer or bool buffer as int64 (uint64 above INT64_MAX wraps). */
static inline int64_t ec_ld_i64(const void *p, rd_dtype dt, int64_t i)
{
    rd_tensor t = {.dtype = dt, .data = (void *)(uintptr_t)p};
    return sim_get_int(&t, i);
}

/** Stores v (already in range, or wrapped modulo 2^bits) into element i of an integer/bool buffer. */
static inline void ec_st_i64(void *p, rd_dtype dt, int64_t i, int64_t v)
{
    switch (dt) {
    case RD_DT_I64:
        ((int64_t *)p)[i] = v;
        break;
    case RD_DT_U64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case RD_DT_I32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case RD_DT_U32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case RD_DT_I16:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case RD_DT_U16:
        ((uint16_t *)p)[i] = (uint16_t)v;
        break;
    case RD_DT_I8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case RD_DT_U8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case RD_DT_BOOL:
        ((uint8_t *)p)[i] = v != 0;
        break;
    default:
        break;
    }
}

static inline bool ec_is_int(rd_dtype dt)
{
    return dt == RD_DT_I8 || dt == RD_DT_I16 || dt == RD_DT_I32 || dt == RD_DT_I64 || dt == RD_DT_U8 ||
           dt == RD_DT_U16 || dt == RD_DT_U32 || dt == RD_DT_U64;
}

static inline bool ec_is_float(rd_dtype dt)
{
    return dt == RD_DT_F32 || dt == RD_DT_F64 || dt == RD_DT_F16 || dt == RD_DT_BF16;
}

/** Range of an integer dtype as doubles (for saturating conversions). */
static inline void ec_int_range(rd_dtype dt, double *lo, double *hi)
{
    switch (dt) {
    case RD_DT_I8:
        *lo = -128.0;
        *hi = 127.0;
        break;
    case RD_DT_U8:
        *lo = 0.0;
        *hi = 255.0;
        break;
    case RD_DT_I16:
        *lo = -32768.0;
        *hi = 32767.0;
        break;
    case RD_DT_U16:
        *lo = 0.0;
        *hi = 65535.0;
        break;
    case RD_DT_I32:
        *lo = -2147483648.0;
        *hi = 2147483647.0;
        break;
    case RD_DT_U32:
        *lo = 0.0;
        *hi = 4294967295.0;
        break;
    case RD_DT_U64:
        *lo = 0.0;
        *hi = 18446744073709549568.0;
        break; /* largest double below 2^64 */
    case RD_DT_BOOL:
        *lo = 0.0;
        *hi = 1.0;
        break;
    default:
        *lo = -9223372036854775808.0;
        *hi = 9223372036854774784.0;
        break; /* below 2^63 */
    }
}

/**
 * Stores double v into element i of any numeric buffer. Integer targets truncate toward zero and
 * saturate to the type's range (NaN gives 0): C leaves out-of-range conversions undefined.
 */
static inline void ec_st_f64(void *p, rd_dtype dt, int64_t i, double v)
{
    switch (dt) {
    case RD_DT_F32:
        ((float *)p)[i] = (float)v;
        return;
    case RD_DT_F64:
        ((double *)p)[i] = v;
        return;
    case RD_DT_F16:
        ((uint16_t *)p)[i] = rd_f32_to_f16((float)v);
        return;
    case RD_DT_BF16:
        ((uint16_t *)p)[i] = rd_f32_to_bf16((float)v);
        return;
    case RD_DT_BOOL:
        ((uint8_t *)p)[i] = v != 0.0;
        return;
    default:
        break;
    }
    double lo, hi;
    ec_int_range(dt, &lo, &hi);
    if (isnan(v))
        v = 0.0;
    v = v < lo ? lo : v > hi ? hi : trunc(v);
    if (dt == RD_DT_U64)
        ((uint64_t *)p)[i] = (uint64_t)v;
    else
        ec_st_i64(p, dt, i, (int64_t)v);
}

#endif
