/*
 * test_f16c_exhaustive.c: rd_f32_to_f16 agrees with the hardware conversion (F16C vcvtps2ph, round
 * to nearest even) on every one of the 2^32 float bit patterns. NaNs only need to stay NaNs of the
 * same sign: payload handling is not part of our contract. Skips (exit 77) on CPUs without F16C.
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only this function is compiled for F16C, so the binary still starts on CPUs without it. */
__attribute__((target("f16c"))) static uint16_t hw_f32_to_f16(float f)
{
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}

/*
 * F16C is usable when CPUID says so and the OS saves the AVX state (VEX instructions fault
 * otherwise). Spelled out with cpuid because clang 14's __builtin_cpu_supports does not know
 * "f16c".
 */
static bool cpu_has_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return false;
    if (!(c & bit_F16C) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
        return false;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u; /* XMM and YMM state enabled */
}

static int is_half_nan(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

static void test_all_floats_match_f16c(void)
{
    /* the reference itself first: a broken comparison would pass everything */
    CU_ASSERT_EQUAL(hw_f32_to_f16(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(hw_f32_to_f16(65520.0f), 0x7c00);
    CU_ASSERT_EQUAL(hw_f32_to_f16(5.9604645e-8f), 0x0001);
    uint64_t mismatches = 0;
    for (uint64_t i = 0; i <= UINT32_MAX; i++) {
        uint32_t bits = (uint32_t)i;
        float f;
        memcpy(&f, &bits, sizeof f);
        uint16_t ours = rd_f32_to_f16(f);
        uint16_t hw = hw_f32_to_f16(f);
        if (ours == hw)
            continue;
        if (is_half_nan(ours) && is_half_nan(hw) && (ours & 0x8000u) == (hw & 0x8000u))
            continue;
        if (mismatches++ < 10)
            fprintf(stderr, "mismatch: float 0x%08x (%g): rd_f32_to_f16 0x%04x, F16C 0x%04x\n", (unsigned)bits,
                    (double)f, ours, hw);
    }
    if (mismatches)
        fprintf(stderr, "%llu of 2^32 float patterns differ\n", (unsigned long long)mismatches);
    CU_ASSERT_EQUAL(mismatches, 0);
}

RD_TEST_REGISTER(register_fp16_exhaustive)
{
    if (!cpu_has_f16c()) {
        /* not a missing prerequisite CI could provide: a plain skip, even when CI is set */
        fprintf(stderr, "SKIP: this CPU has no F16C instructions to compare against\n");
        exit(77);
    }
    RD_SUITE("fp16_exhaustive", {"all 2^32 floats match F16C", test_all_floats_match_f16c});
}
