/*
 * test_snapshot_format.c: the snapshot files' fast number format is byte for byte the snprintf/strtof
 * one it replaced (kept here as the reference), on the values where they could part: neighbourhoods of
 * every power of ten and of every p-digit rounding boundary (9.99999500 10^k ...), subnormals, the float
 * range's ends, decimal ties, short decimals, and random bit patterns of every exponent.
 */
#include "snapshot_format.h"
#include "rd_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The format as snapshot.c wrote it before snapshot_format.c. */
static int reference_format(float x, char *buf, size_t len)
{
    if (isnan(x))
        return snprintf(buf, len, "nan");
    if (isinf(x))
        return snprintf(buf, len, x < 0 ? "-inf" : "inf");
    int n = snprintf(buf, len, "%.6g", (double)x);
    if (strtof(buf, NULL) != x)
        n = snprintf(buf, len, "%.8g", (double)x);
    if (strtof(buf, NULL) != x)
        n = snprintf(buf, len, "%.9g", (double)x);
    return n;
}

typedef struct tally {
    long checked, failed;
} tally;

static void check(float x, tally *t)
{
    char want[64], got[REP_SNAPSHOT_VALUE_MAX + 1];
    int nw = reference_format(x, want, sizeof want);
    int ng = rep_snapshot_format_f32(x, got);
    t->checked++;
    if (ng != nw || ng < 0 || ng > REP_SNAPSHOT_VALUE_MAX || memcmp(got, want, (size_t)nw) != 0) {
        if (t->failed++ < 10) {
            got[ng >= 0 && ng <= REP_SNAPSHOT_VALUE_MAX ? ng : 0] = '\0';
            uint32_t bits;
            memcpy(&bits, &x, sizeof bits);
            fprintf(stderr, "0x%08x: want '%s', got '%s'\n", (unsigned)bits, want, got);
        }
    }
}

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* x and the r floats on each side of it, both signs. */
static void check_around(float x, int r, tally *t)
{
    uint32_t b = to_bits(fabsf(x));
    for (int d = -r; d <= r; d++) {
        int64_t c = (int64_t)b + d;
        if (c < 0 || c > 0x7f800000)
            continue;
        check(from_bits((uint32_t)c), t);
        check(from_bits((uint32_t)c | 0x80000000u), t);
    }
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_special_values(void)
{
    tally t = {0};
    const float v[] = {0.0f,      -0.0f,   INFINITY,       -INFINITY, NAN,    -NAN,       FLT_MAX,
                       -FLT_MAX,  FLT_MIN, FLT_TRUE_MIN,   0.1f,      -1e-5f, 0.3333333f, 16777216.0f,
                       12345.25f, 0.0001f, 0.00009999999f, 1e-45f};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        check(v[i], &t);
    check(from_bits(0x7fc00001u), &t); /* NaN payloads print as nan */
    check(from_bits(0xffffffffu), &t);
    char buf[REP_SNAPSHOT_VALUE_MAX];
    CU_ASSERT_EQUAL(rep_snapshot_format_f32(0.33333331f, buf), 10);
    CU_ASSERT_EQUAL(memcmp(buf, "0.33333331", 10), 0);
    CU_ASSERT_EQUAL(t.failed, 0);
}

static void test_boundaries(void)
{
    tally t = {0};
    for (int e = -46; e <= 39; e++) {
        /* the power of ten, and the values that round up to it with 6, 8 and 9 digits */
        const double pow_e = pow(10.0, e);
        const double edges[4] = {pow_e, pow_e * 0.9999995, pow_e * 0.999999995, pow_e * 0.9999999995};
        for (int i = 0; i < 4; i++)
            if (edges[i] < FLT_MAX)
                check_around((float)edges[i], 40, &t);
    }
    for (uint32_t b = 0; b < 3000; b++) /* the smallest subnormals, where few digits suffice */
        check(from_bits(b), &t);
    check_around(FLT_MIN, 300, &t); /* subnormal to normal */
    check_around(FLT_MAX, 300, &t);
    CU_ASSERT_EQUAL(t.failed, 0);
    CU_ASSERT(t.checked > 50000);
}

static void test_ties_and_short_decimals(void)
{
    tally t = {0};
    /* exact decimal ties at 6, 8 and 9 digits: printf rounds them to even */
    for (int32_t i = 100000; i < 100000 + 4000; i++) {
        check((float)i + 0.5f, &t);
        check(((float)i + 0.5f) / 1024.0f, &t);
        check((float)(i * 100 + 50), &t);
    }
    for (int i = 0; i < 20000; i++) { /* what sensors and quantized tensors hold: short decimals */
        check((float)i * 0.001f, &t);
        check((float)i / 255.0f, &t);
        check((float)(i - 10000) * 0.0078125f, &t);
    }
    CU_ASSERT_EQUAL(t.failed, 0);
}

static void test_random_patterns(void)
{
    tally t = {0};
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++)
        check(from_bits((uint32_t)next_random(&s)), &t);
    for (int i = 0; i < 100000; i++) { /* activations' range: |x| in [1e-4, 1e4) */
        double u = (double)(next_random(&s) >> 11) / 9007199254740992.0;
        float x = (float)pow(10.0, -4.0 + 8.0 * u);
        check(i % 2 ? -x : x, &t);
    }
    CU_ASSERT_EQUAL(t.failed, 0);
}

RD_TEST_REGISTER(register_snapshot_format)
{
    RD_SUITE("snapshot format", {"special values", test_special_values}, {"boundaries", test_boundaries},
             {"ties and short decimals", test_ties_and_short_decimals}, {"random patterns", test_random_patterns});
}
