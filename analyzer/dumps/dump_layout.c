/*
 * dump_layout.c: the NPU's native NC1HWC2 layout (rknn-formats.md section 4): C split into C1 =
 * ceil(C/C2) blocks of C2 channels, memory order C2 fastest, then W, H, C1, N. Element (n,c,h,w) is at
 * n*C1*H*W*C2 + (c/C2)*H*W*C2 + (h*W+w)*C2 + c%C2; the last block's channels past C are padding.
 */
#include "dumps.h"

#include <string.h>

/* Checks the shape and C2; *out_hw = H*W, *out_c1 = ceil(C/C2). Sizes must fit in memory already
   (the caller holds both buffers), so the checks only guard against nonsense. */
static rd_status check_shape(const int64_t nchw[4], int c2, int64_t *out_c1, int64_t *out_hw, rd_error *err)
{
    if (c2 <= 0)
        return rd_errorf(err, RD_E_INVAL, "NC1HWC2: C2 is %d (not documented for this target)", c2);
    for (int i = 0; i < 4; i++)
        if (nchw[i] < 0 || nchw[i] > ((int64_t)1 << 40))
            return rd_errorf(err, RD_E_INVAL, "NC1HWC2: dim %d is %lld", i, (long long)nchw[i]);
    *out_c1 = (nchw[1] + c2 - 1) / c2;
    *out_hw = nchw[2] * nchw[3];
    return RD_OK;
}

/* Copies between the two layouts, each element of NCHW with its place in NC1HWC2 (to_nchw: from NC1HWC2),
   the padding channels of an NC1HWC2 destination zeroed. */
static rd_status convert(const float *src, const int64_t nchw[4], int c2, float *dst, bool to_nchw, rd_error *err)
{
    int64_t c1 = 0, hw = 0;
    rd_status st = check_shape(nchw, c2, &c1, &hw, err);
    if (st != RD_OK)
        return st;
    int64_t c = nchw[1];
    size_t block = (size_t)(c1 * hw * c2);
    for (int64_t n = 0; n < nchw[0]; n++) {
        int64_t packed = n * (int64_t)block, planar = n * c * hw; /* the sample's first element in each */
        if (!to_nchw)
            memset(dst + packed, 0, block * sizeof *dst);
        for (int64_t ch = 0; ch < c; ch++) {
            int64_t p = packed + (ch / c2) * hw * c2 + ch % c2, q = planar + ch * hw;
            for (int64_t i = 0; i < hw; i++) {
                if (to_nchw)
                    dst[q + i] = src[p + i * c2];
                else
                    dst[p + i * c2] = src[q + i];
            }
        }
    }
    return RD_OK;
}

rd_status an_nc1hwc2_to_nchw(const float *src, const int64_t nchw[4], int c2, float *dst, rd_error *err)
{
    return convert(src, nchw, c2, dst, true, err);
}

rd_status an_nchw_to_nc1hwc2(const float *src, const int64_t nchw[4], int c2, float *dst, rd_error *err)
{
    return convert(src, nchw, c2, dst, false, err);
}
