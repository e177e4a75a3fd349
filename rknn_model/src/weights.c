/*
 * weights.c: the weight blobs of constant tensors (Model slot 20; slot 4 in format <= 5) and the packed
 * conv-weight layout (tensor layout code 65).
 *
 * Packed layout: native shape [Ot, It, kh, kw, o, i] for a logical [O, I, kh, kw] weight, element
 * (oc, ic, y, x) at ((((ot * It + it) * kh + y) * kw + x) * o + oi) * i + ii with oc = ot * o + oi and
 * ic = it * i + ii. Verified against the ONNX weights of multiple_input_demo (Ot = It = 1, on RK3566 and
 * RK3562: every code matches a per-output-channel asymmetric quantization of the float weight, and the
 * padding lanes ii >= I hold that channel's zero point); the order of the Ot/It blocks is [guess].
 */
#include "internal.h"

size_t rd_rknn_blob_count(const rd_rknn_model *m)
{
    return m->n_blobs;
}

rd_status rd_rknn_blob(const rd_rknn_model *m, size_t i, const uint8_t **out, size_t *out_len, rd_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (i >= m->n_blobs)
        return rd_errorf(err, RD_E_INVAL, "%s: weight blob %zu, the model has %zu", m->info.path, i, m->n_blobs);
    *out = m->file + m->blobs[i].off;
    *out_len = m->blobs[i].len;
    return RD_OK;
}

rd_status rd_rknn_tensor_data(const rd_rknn_model *m, const rd_rknn_tensor *t, const uint8_t **out, size_t *out_len,
                              rd_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (t->blob < 0)
        return rd_errorf(err, RD_E_NOTFOUND, "%s: tensor #%d '%s' has no weight blob (role %d)", m->info.path, t->index,
                         t->name, t->role);
    return rd_rknn_blob(m, (size_t)t->blob, out, out_len, err);
}

/* Product of n dims (each checked > 0) times es, bounded by RD_MAX_TENSOR_BYTES; false on overflow. */
static bool checked_bytes(const int64_t *d, size_t n, size_t es, uint64_t *out)
{
    uint64_t p = es;
    for (size_t i = 0; i < n; i++) {
        if (d[i] <= 0 || (uint64_t)d[i] > RD_MAX_TENSOR_BYTES || p > RD_MAX_TENSOR_BYTES / (uint64_t)d[i])
            return false;
        p *= (uint64_t)d[i];
    }
    *out = p;
    return true;
}

rd_status rd_rknn_unpack_conv_weight(const rd_rknn_model *m, const rd_rknn_tensor *t, void *out, size_t out_len,
                                     int32_t *out_pad_code, rd_error *err)
{
    const char *path = m->info.path;
    if (t->layout != RD_RKNN_LAYOUT_CONV_WEIGHT)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: tensor '%s': layout code %d, expected %d (packed conv weight)",
                         path, t->name, t->layout, RD_RKNN_LAYOUT_CONV_WEIGHT);
    size_t es = rd_dtype_get((rd_dtype)(t->dtype > 0 && t->dtype < RD_DT_COUNT ? t->dtype : 0))->size;
    if (es != 1 && es != 2)
        return rd_errorf(err, RD_E_UNSUPPORTED, "%s: tensor '%s': dtype %d, expected int8, uint8 or float16", path,
                         t->name, t->dtype);
    if (t->rank != 4 || t->native_rank != 6)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: tensor '%s': shape of rank %zu and native shape of rank %zu, expected "
                         "[O, I, kh, kw] and [Ot, It, kh, kw, o, i]",
                         path, t->name, t->rank, t->native_rank);
    const int64_t *s = t->shape, *ns = t->native_shape;
    uint64_t logical, packed;
    if (!checked_bytes(s, 4, es, &logical) || !checked_bytes(ns, 6, es, &packed))
        return rd_errorf(err, RD_E_PARSE, "%s: tensor '%s': a dimension <= 0 or a size above %llu bytes", path, t->name,
                         (unsigned long long)RD_MAX_TENSOR_BYTES);
    if (ns[2] != s[2] || ns[3] != s[3] || ns[0] * ns[4] < s[0] || ns[1] * ns[5] < s[1])
        return rd_errorf(err, RD_E_PARSE,
                         "%s: tensor '%s': native shape [%lld, %lld, %lld, %lld, %lld, %lld] does not "
                         "hold shape [%lld, %lld, %lld, %lld]",
                         path, t->name, (long long)ns[0], (long long)ns[1], (long long)ns[2], (long long)ns[3],
                         (long long)ns[4], (long long)ns[5], (long long)s[0], (long long)s[1], (long long)s[2],
                         (long long)s[3]);
    const uint8_t *blob;
    size_t blob_len;
    rd_status st = rd_rknn_tensor_data(m, t, &blob, &blob_len, err);
    if (st != RD_OK)
        return st;
    if (blob_len < packed)
        return rd_errorf(err, RD_E_PARSE, "%s: tensor '%s': weight blob %d has %zu bytes, the native shape needs %llu",
                         path, t->name, t->blob, blob_len, (unsigned long long)packed);
    if (out_len < logical)
        return rd_errorf(err, RD_E_INVAL, "%s: tensor '%s': %zu bytes given for %llu", path, t->name, out_len,
                         (unsigned long long)logical);
    int64_t O = s[0], I = s[1], KH = s[2], KW = s[3], It = ns[1], OB = ns[4], IB = ns[5];
    uint8_t *dst = out;
    for (int64_t oc = 0; oc < O; oc++) {
        int64_t ot = oc / OB, oi = oc % OB;
        for (int64_t ic = 0; ic < I; ic++) {
            int64_t it = ic / IB, ii = ic % IB;
            for (int64_t y = 0; y < KH; y++)
                for (int64_t x = 0; x < KW; x++) {
                    size_t src = (size_t)((((((ot * It + it) * KH + y) * KW + x) * OB + oi) * IB + ii));
                    size_t at = (size_t)(((oc * I + ic) * KH + y) * KW + x);
                    memcpy(dst + at * es, blob + src * es, es);
                }
        }
        if (out_pad_code) {
            int64_t it = I / IB, ii = I % IB;
            bool lane = es == 1 && ii != 0 && it < It;
            size_t src = (size_t)(((ot * It + it) * KH * KW * OB + oi) * IB + ii);
            out_pad_code[oc] = !lane                  ? INT32_MIN
                               : t->dtype == RD_DT_U8 ? (int32_t)blob[src]
                                                      : (int32_t)(int8_t)blob[src];
        }
    }
    return RD_OK;
}
