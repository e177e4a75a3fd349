/*
 * pyfloat.c: Python's repr() of floats, which the toolkit's f-strings print (str(float(x)) == repr): the
 * shortest digits that read back to the same value, fixed notation for 1e-4 <= |x| < 1e16 with ".0" for
 * integers, else "d.ddde[+-]XX". The float32 variant uses the shortest digits that read back to the float32.
 */
#include "rknn_diag/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest "%.*e" rendering of v that reads back (as double or float): digits without the point, and the
 * decimal exponent of the first digit. */
static void shortest_digits(double v, bool as_float, char digits[24], int *exp10)
{
    char tmp[40];
    int max_prec = as_float ? 9 : 17;
    for (int prec = 1; prec <= max_prec; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        bool same = as_float ? strtof(tmp, NULL) == (float)v : strtod(tmp, NULL) == v;
        if (same || prec == max_prec)
            break;
    }
    /* tmp is "d[.ddd]e[+-]XX" */
    size_t n = 0;
    const char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n < 23)
            digits[n++] = *p;
    /* drop trailing zeros ("1.50e+00" cannot come out of the loop, but "1e+00" style zero digits can) */
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exp10 = (*p == 'e') ? (int)strtol(p + 1, NULL, 10) : 0;
}

static const char *repr(double v, bool as_float, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return buf;
    }
    const char *sign = signbit(v) ? "-" : "";
    if (v == 0) {
        snprintf(buf, len, "%s0.0", sign);
        return buf;
    }
    char d[24];
    int e;
    shortest_digits(fabs(v), as_float, d, &e);
    int nd = (int)strlen(d);
    int decpt = e + 1; /* value = 0.DIGITS * 10^decpt */
    if (decpt <= -4 || decpt > 16) {
        snprintf(buf, len, "%s%c%s%s%se%c%02d", sign, d[0], nd > 1 ? "." : "", d + 1, "", e < 0 ? '-' : '+',
                 e < 0 ? -e : e);
    } else if (decpt <= 0) {
        snprintf(buf, len, "%s0.%.*s%s", sign, -decpt, "0000", d);
    } else if (decpt >= nd) {
        snprintf(buf, len, "%s%s%.*s.0", sign, d, decpt - nd, "0000000000000000");
    } else {
        snprintf(buf, len, "%s%.*s.%s", sign, decpt, d, d + decpt);
    }
    return buf;
}

const char *rd_py_float_repr(double v, char *buf, size_t len)
{
    return repr(v, false, buf, len);
}

const char *rd_float32_repr(float v, char *buf, size_t len)
{
    return repr((double)v, true, buf, len);
}
