/*
 * snapshot_format.c: the snapshot text files' number format without snprintf/strtof per value (they took
 * 85 % of an accuracy run with text files: three trial formattings and two strtof calls per value).
 *
 * A float32 times a power of ten is computed in double: the power is a correctly rounded literal and the
 * product rounds once, so the scaled value is within 2^-52 relative of the exact one (under 3e-7 for the
 * at most 10^9 it reaches). The digits are then the exact ones unless the scaled value lies within 1e-5 of
 * a half: an exact tie (found with integers; printf rounds it to even, and dyadic inputs such as k/128
 * are full of them) or too close to call, which goes to snprintf. The
 * round-trip check compares the decimal with the midpoints between the float and its neighbours (exact in
 * double); within 1e-13 relative of a midpoint, strtof decides.
 */
#include "snapshot_format.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P10(e) 1e##e
#define P10N(e) 1e-##e
/* 10^-60 .. 10^60, index e + 60 */
static const double pow10_table[121] = {
    P10N(60), P10N(59), P10N(58), P10N(57), P10N(56), P10N(55), P10N(54), P10N(53), P10N(52), P10N(51), P10N(50),
    P10N(49), P10N(48), P10N(47), P10N(46), P10N(45), P10N(44), P10N(43), P10N(42), P10N(41), P10N(40), P10N(39),
    P10N(38), P10N(37), P10N(36), P10N(35), P10N(34), P10N(33), P10N(32), P10N(31), P10N(30), P10N(29), P10N(28),
    P10N(27), P10N(26), P10N(25), P10N(24), P10N(23), P10N(22), P10N(21), P10N(20), P10N(19), P10N(18), P10N(17),
    P10N(16), P10N(15), P10N(14), P10N(13), P10N(12), P10N(11), P10N(10), P10N(9),  P10N(8),  P10N(7),  P10N(6),
    P10N(5),  P10N(4),  P10N(3),  P10N(2),  P10N(1),  P10(0),   P10(1),   P10(2),   P10(3),   P10(4),   P10(5),
    P10(6),   P10(7),   P10(8),   P10(9),   P10(10),  P10(11),  P10(12),  P10(13),  P10(14),  P10(15),  P10(16),
    P10(17),  P10(18),  P10(19),  P10(20),  P10(21),  P10(22),  P10(23),  P10(24),  P10(25),  P10(26),  P10(27),
    P10(28),  P10(29),  P10(30),  P10(31),  P10(32),  P10(33),  P10(34),  P10(35),  P10(36),  P10(37),  P10(38),
    P10(39),  P10(40),  P10(41),  P10(42),  P10(43),  P10(44),  P10(45),  P10(46),  P10(47),  P10(48),  P10(49),
    P10(50),  P10(51),  P10(52),  P10(53),  P10(54),  P10(55),  P10(56),  P10(57),  P10(58),  P10(59),  P10(60),
};

static const uint32_t pow10_u32[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

static bool pow10_of(int e, double *out)
{
    if (e < -60 || e > 60)
        return false;
    *out = pow10_table[e + 60];
    return true;
}

/* A positive finite float as m * 2^e with m odd, and its binary exponent (a in [2^e2, 2^(e2+1))). */
typedef struct binary_parts {
    uint32_t bits;
    uint32_t m;
    int e;
    int e2;
} binary_parts;

static binary_parts split(uint32_t bits)
{
    binary_parts b = {.bits = bits, .m = bits & 0x7fffffu, .e = -149};
    uint32_t biased = bits >> 23;
    if (biased) {
        b.m |= 0x800000u;
        b.e = (int)biased - 150;
    }
    b.e2 = b.e + 23;
    for (uint32_t top = b.m; top < 0x800000u; top <<= 1)
        b.e2--; /* subnormals */
    return b;
}

/* Whether a = m * 2^e is such that a * 10^n is exactly w + 1/2: m * 2^(e+1) * 10^n == 2w + 1. */
static bool exact_tie(const binary_parts *parts, int n, uint32_t w)
{
    binary_parts odd_m = *parts, *b = &odd_m;
    while (!(b->m & 1)) {
        b->m >>= 1;
        b->e++;
    }
    uint64_t odd = 2 * (uint64_t)w + 1, five = 1;
    if (n >= 0) {                        /* m * 5^n * 2^(e+n+1) is odd only when e + n + 1 == 0 */
        if (b->e + n + 1 != 0 || n > 13) /* 5^14 > 2w + 1 */
            return false;
        for (int i = 0; i < n; i++)
            five *= 5;
        return (uint64_t)b->m * five == odd;
    }
    /* m * 2^(e+1) == (2w + 1) * 5^q * 2^q with q = -n: e + 1 == q and m == (2w + 1) * 5^q */
    if (b->e + 1 != -n || -n > 10) /* 5^11 > 2^24 > m */
        return false;
    for (int i = 0; i < -n; i++)
        five *= 5;
    return odd * five == b->m;
}

/*
 * The digits of a = (double)f (positive, finite) rounded to p significant digits as printf does: *n in
 * [10^(p-1), 10^p) and the decimal exponent *x of its first digit. k is floor(log10(a)) or one less.
 * False when too close to call.
 */
static bool round_digits(double a, const binary_parts *b, int p, int k, uint32_t *n, int *x)
{
    double lo = (double)pow10_u32[p - 1], hi = (double)pow10_u32[p];
    double s = 0;
    for (int tries = 0;; tries++) {
        double m;
        if (tries == 3 || !pow10_of(p - 1 - k, &m))
            return false;
        s = a * m;
        if (s < lo)
            k--;
        else if (s >= hi)
            k++;
        else
            break;
    }
    uint32_t d = (uint32_t)s; /* s is positive: the floor */
    double frac = s - (double)d;
    if (fabs(frac - 0.5) >= 1e-5)
        d += frac > 0.5;
    else if (exact_tie(b, p - 1 - k, d))
        d += d & 1; /* printf rounds a tie to even */
    else
        return false; /* too close to tell */
    if (d == pow10_u32[p]) {
        d = pow10_u32[p - 1];
        k++;
    }
    *n = d;
    *x = k;
    return true;
}

static float from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* 1: n * 10^(x-p+1) reads back as the float (positive) of bits, 0: it does not, -1: too close to tell. */
static int reads_back(uint32_t bits, uint32_t n, int x, int p)
{
    double m;
    if (!pow10_of(x - p + 1, &m))
        return -1;
    double d = (double)n * m, a = (double)from_bits(bits);
    double below = (double)from_bits(bits - 1); /* bits > 0: zero is printed before */
    double lo = (a + below) / 2;
    /* above FLT_MAX, strtof gives inf from 2^128 - 2^103 on */
    double hi = bits + 1 == 0x7f800000u ? a + (a - below) / 2 : (a + (double)from_bits(bits + 1)) / 2;
    double tol = d * 1e-13;
    if (d > lo + tol && d < hi - tol)
        return 1;
    if (d < lo - tol || d > hi + tol)
        return 0;
    return -1;
}

/*
 * %.{p}g of n * 10^(x-p+1), n having exactly p digits, after the sign. Copies are of fixed sizes (no
 * memcpy call per value): out may be written up to 20 bytes past its start, beyond the length returned.
 */
static int print_g(uint32_t n, int x, int p, char *out)
{
    char dig[20] = {0};
    for (int i = p - 1; i >= 0; i--) {
        dig[i] = (char)('0' + n % 10);
        n /= 10;
    }
    int nd = p; /* significant digits without trailing zeros */
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    if (x < -4 || x >= p) {
        out[0] = dig[0];
        out[1] = '.';
        memcpy(out + 2, dig + 1, 8);
        int o = nd > 1 ? nd + 1 : 1;
        out[o++] = 'e';
        out[o++] = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        out[o++] = (char)('0' + ax / 10); /* float exponents have two digits */
        out[o++] = (char)('0' + ax % 10);
        return o;
    }
    if (x >= 0) {
        memcpy(out, dig, 10);
        if (nd <= x + 1)
            return x + 1;
        out[x + 1] = '.';
        memcpy(out + x + 2, dig + x + 1, 9);
        return nd + 1;
    }
    memcpy(out, "0.0000", 6);
    memcpy(out + 1 - x, dig, 10);
    return 1 - x + nd;
}

/* What the format always did, for the values the fast path cannot settle. */
static int format_slow(float x, char *buf)
{
    char t[40];
    int n = snprintf(t, sizeof t, "%.6g", (double)x);
    if (strtof(t, NULL) != x)
        n = snprintf(t, sizeof t, "%.8g", (double)x);
    if (strtof(t, NULL) != x)
        n = snprintf(t, sizeof t, "%.9g", (double)x);
    if (n < 0 || n > REP_SNAPSHOT_VALUE_MAX)
        n = 0; /* cannot happen: a float's %.9g is at most 15 characters */
    memcpy(buf, t, (size_t)n);
    return n;
}

int rep_snapshot_format_f32(float x, char *buf)
{
    if (isnan(x)) {
        memcpy(buf, "nan", 3);
        return 3;
    }
    int o = 0;
    if (signbit(x)) {
        buf[o++] = '-';
        x = -x;
    }
    if (isinf(x)) {
        memcpy(buf + o, "inf", 3);
        return o + 3;
    }
    if (x == 0) {
        buf[o++] = '0';
        return o;
    }
    double a = (double)x;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    binary_parts b = split(bits);
    int k = (b.e2 * 78913 - (b.e2 < 0 ? 262143 : 0)) / 262144; /* floor(e2 log10(2)): floor(log10(a)) or one less */
    static const int precisions[3] = {6, 8, 9};
    for (int i = 0; i < 3; i++) {
        int p = precisions[i], e;
        uint32_t n;
        if (!round_digits(a, &b, p, k, &n, &e))
            break;
        int back = p == 9 ? 1 : reads_back(b.bits, n, e, p);
        if (back < 0)
            break;
        if (back == 1)
            return o + print_g(n, e, p, buf + o);
    }
    return o + format_slow(x, buf + o);
}
