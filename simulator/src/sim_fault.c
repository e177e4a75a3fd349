/*
 * sim_fault.c: faults of an emulated board (rknn-diag board-run). One materialised tensor is computed
 * wrongly, as a board whose NPU runtime gets that one layer wrong: the fault is applied where the tensor
 * materialises (sim.c), so later layers compute on the faulty values.
 */
#include "sim_internal.h"

#include <stdio.h>

#define GAIN_FACTOR 1.25f

static const char *const fault_names[RD_FAULT_COUNT] = {
    [RD_FAULT_GAIN] = "gain",
    [RD_FAULT_SATURATE] = "saturate",
    [RD_FAULT_SWAP_CHANNELS] = "swap-channels",
    [RD_FAULT_FP16] = "fp16",
};

const char *rd_sim_fault_name(rd_sim_fault_kind k)
{
    return (unsigned)k < RD_FAULT_COUNT ? fault_names[k] : "unknown";
}

rd_status rd_sim_fault_parse(const char *name, rd_sim_fault_kind *out, rd_error *err)
{
    for (int k = 0; k < RD_FAULT_COUNT; k++)
        if (strcmp(name, fault_names[k]) == 0) {
            *out = (rd_sim_fault_kind)k;
            return RD_OK;
        }
    return rd_errorf(err, RD_E_INVAL, "unknown fault '%s' (expected gain, saturate, swap-channels or fp16)", name);
}

rd_status rd_sim_add_fault(rd_sim *s, const char *tensor, rd_sim_fault_kind kind, rd_error *err)
{
    if ((unsigned)kind >= RD_FAULT_COUNT)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s': fault kind %d is not one of the known faults", tensor,
                         (int)kind);
    rd_sim_tensor t;
    rd_status st = rd_sim_tensor_get(s, tensor, &t, err);
    if (st != RD_OK)
        return st;
    if (t.value < 0)
        return rd_errorf(err, RD_E_INVAL, "%s: tensor '%s' was removed by the compiler passes: no layer produces it",
                         s->m->path, tensor);
    if (!t.materialized) {
        if (t.fused_into >= 0)
            return rd_errorf(err, RD_E_INVAL,
                             "%s: tensor '%s' was fused into '%s' (never held in memory): put the fault on '%s'",
                             s->m->path, tensor, s->m->values[t.fused_into].name, s->m->values[t.fused_into].name);
        return rd_errorf(err, RD_E_INVAL,
                         "%s: tensor '%s' is not a float activation (a constant, shape or index tensor)", s->m->path,
                         tensor);
    }
    sim_fault *grown = realloc(s->faults, (s->n_faults + 1) * sizeof *grown);
    if (!grown)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    s->faults = grown;
    s->faults[s->n_faults++] = (sim_fault){.value = t.value, .kind = kind};
    s->epoch++;
    return RD_OK;
}

bool rd_sim_has_fault(const rd_sim *s, int value, rd_sim_fault_kind kind)
{
    for (size_t i = 0; i < s->n_faults; i++)
        if (s->faults[i].value == value && s->faults[i].kind == kind)
            return true;
    return false;
}

rd_prec sim_fault_precision(const rd_sim *s, int value, rd_prec p)
{
    return p == RD_PREC_INT8 && rd_sim_has_fault(s, value, RD_FAULT_FP16) ? RD_PREC_FP16 : p;
}

/* Rounds x again to the precision the tensor is held in (no statistics: the fault is not the model's). */
static void hold_again(const rd_sim *s, int value, float *x, int64_t n)
{
    const sim_val_data *d = &s->vals[value];
    switch (sim_fault_precision(s, value, d->prec)) {
    case RD_PREC_INT8:
        if (d->quantized)
            sim_fake_quant_i8(x, n, d->scale, d->zero_point, NULL, NULL);
        break;
    case RD_PREC_INT16:
        if (d->quantized16)
            sim_fake_quant_i16(x, n, d->scale16, d->zero_point16, NULL, NULL);
        break;
    case RD_PREC_FP16:
        sim_round_f16(x, n, NULL, NULL, NULL);
        break;
    default:
        break;
    }
}

/*
 * An accumulator saturating early clamps the real value around 0: int8 tensors keep half their range on
 * each side of 0 (a Relu output [0, max] becomes [0, max/2]), back on their grid; others half their
 * largest magnitude.
 */
static void saturate(const rd_sim *s, int value, float *x, int64_t n)
{
    const sim_val_data *d = &s->vals[value];
    float lo, hi;
    if (d->prec == RD_PREC_INT16 && d->quantized16) {
        lo = d->scale16 * (float)(-32768 - d->zero_point16) / 2;
        hi = d->scale16 * (float)(32767 - d->zero_point16) / 2;
    } else if (d->quantized) {
        lo = d->scale * (float)(-128 - d->zero_point) / 2;
        hi = d->scale * (float)(127 - d->zero_point) / 2;
    } else {
        float amax = 0;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(x[i]) && fabsf(x[i]) > amax)
                amax = fabsf(x[i]);
        hi = amax / 2;
        lo = -hi;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
    hold_again(s, value, x, n);
}

static rd_status swap_channels(const rd_sim *s, int value, rd_tensor *t, rd_error *err)
{
    if (t->rank < 2 || t->dims[1] < 2) {
        char shape[128];
        rd_shape_str(t, shape, sizeof shape);
        return rd_errorf(err, RD_E_INVAL,
                         "%s: fault swap-channels on tensor '%s' of shape %s: needs 2 channels on axis 1", s->m->path,
                         s->m->values[value].name, shape);
    }
    int64_t inner = 1;
    for (int i = 2; i < t->rank; i++)
        inner *= t->dims[i];
    float *x = t->data;
    for (int64_t b = 0; b < t->dims[0]; b++) {
        float *c0 = x + b * t->dims[1] * inner, *c1 = c0 + inner;
        for (int64_t i = 0; i < inner; i++) {
            float tmp = c0[i];
            c0[i] = c1[i];
            c1[i] = tmp;
        }
    }
    return RD_OK;
}

rd_status sim_fault_apply(const rd_sim *s, int value, rd_tensor *t, rd_error *err)
{
    float *x = t->data;
    int64_t n = rd_tensor_numel(t);
    for (size_t i = 0; i < s->n_faults; i++) {
        if (s->faults[i].value != value)
            continue;
        switch (s->faults[i].kind) {
        case RD_FAULT_GAIN:
            for (int64_t k = 0; k < n; k++)
                x[k] *= GAIN_FACTOR;
            hold_again(s, value, x, n);
            break;
        case RD_FAULT_SATURATE:
            saturate(s, value, x, n);
            break;
        case RD_FAULT_SWAP_CHANNELS: {
            rd_status st = swap_channels(s, value, t, err);
            if (st != RD_OK)
                return st;
            break;
        }
        case RD_FAULT_FP16: /* already held in float16 (sim_fault_precision) */
        case RD_FAULT_COUNT:
            break;
        }
    }
    return RD_OK;
}
