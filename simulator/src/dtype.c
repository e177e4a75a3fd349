/* dtype.c: the one table of dtype facts, and IEEE half / bfloat16 conversions. */
#include "internal.h"

static const rd_dtype_info dtype_table[RD_DT_COUNT] = {
    [RD_DT_UNDEFINED] = {.name = "undefined"},
    [RD_DT_F32] = {.name = "float32", .npy = "<f4", .size = 4, .is_float = true, .is_signed = true, .supported = true},
    [RD_DT_U8] = {.name = "uint8", .npy = "|u1", .size = 1, .supported = true},
    [RD_DT_I8] = {.name = "int8", .npy = "|i1", .size = 1, .is_signed = true, .supported = true},
    [RD_DT_U16] = {.name = "uint16", .npy = "<u2", .size = 2, .supported = true},
    [RD_DT_I16] = {.name = "int16", .npy = "<i2", .size = 2, .is_signed = true, .supported = true},
    [RD_DT_I32] = {.name = "int32", .npy = "<i4", .size = 4, .is_signed = true, .supported = true},
    [RD_DT_I64] = {.name = "int64", .npy = "<i8", .size = 8, .is_signed = true, .supported = true},
    [RD_DT_STRING] = {.name = "string"},
    [RD_DT_BOOL] = {.name = "bool", .npy = "|b1", .size = 1, .supported = true},
    [RD_DT_F16] = {.name = "float16", .npy = "<f2", .size = 2, .is_float = true, .is_signed = true, .supported = true},
    [RD_DT_F64] = {.name = "float64", .npy = "<f8", .size = 8, .is_float = true, .is_signed = true, .supported = true},
    [RD_DT_U32] = {.name = "uint32", .npy = "<u4", .size = 4, .supported = true},
    [RD_DT_U64] = {.name = "uint64", .npy = "<u8", .size = 8, .supported = true},
    [14] = {.name = "complex64"},
    [15] = {.name = "complex128"},
    [RD_DT_BF16] = {.name = "bfloat16", .size = 2, .is_float = true, .is_signed = true, .supported = true},
    [17] = {.name = "float8e4m3fn"},
    [18] = {.name = "float8e4m3fnuz"},
    [19] = {.name = "float8e5m2"},
    [20] = {.name = "float8e5m2fnuz"},
    [21] = {.name = "uint4"},
    [22] = {.name = "int4"},
    [23] = {.name = "float4e2m1"},
};

static const rd_dtype_info unknown_dtype = {.name = "unknown"};

const rd_dtype_info *rd_dtype_get(rd_dtype dt)
{
    if ((unsigned)dt < RD_DT_COUNT && dtype_table[dt].name)
        return &dtype_table[dt];
    return &unknown_dtype;
}

const char *rd_dtype_name(rd_dtype dt)
{
    return rd_dtype_get(dt)->name;
}

/* Round to nearest even on the bit pattern: exact for normals, subnormals, overflow and NaN. */
uint16_t rd_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u) /* NaN: keep a quiet NaN with the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    if (absx >= 0x47800000u) /* >= 65536 (after rounding anything >= 65520 overflows too, below) */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) {   /* below the smallest normal half (2^-14): subnormal or zero */
        if (absx < 0x33000000u) /* < 2^-25: rounds to zero (2^-25 exactly is a tie to even 0) */
            return (uint16_t)sign;
        /* v = mant * 2^(e-150) and the half subnormal unit is 2^-24, so q = mant >> (126 - e) */
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        int sh = 126 - (int)(absx >> 23);
        uint32_t q = mant >> sh;
        uint32_t rem = mant & ((1u << sh) - 1u);
        uint32_t half = 1u << (sh - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    /* normal half range; rounding may carry into the exponent and up to inf, which is right */
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    if (h >= 0x7c00u)
        h = 0x7c00u;
    return (uint16_t)(sign | h);
}

float rd_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                mant <<= 1;
            } while (!(mant & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t rd_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return (uint16_t)(x >> 16);
}

float rd_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}
