/*
 * board_dump.c: dump files of the emulated board, named and laid out as librknnrt does
 * (rknn-formats.md section 4). Names come from dumps.h (an_dump_name_format, an_dump_sanitise), so the
 * board side and the host side share one definition of the format.
 */
#include "board_dump.h"
#include "dumps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rd_status an_board_encode(const rd_tensor *values, const an_held *held, bool quant, rd_tensor *out, rd_error *err)
{
    if (!quant || held->prec == RD_PREC_FP32)
        return rd_tensor_clone(out, values, err);
    if (held->prec == RD_PREC_INT16)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "int16 tensors are not emulated in board dumps yet (their dump layout is not documented)");
    rd_dtype dt = held->prec == RD_PREC_INT8 ? RD_DT_I8 : RD_DT_F16;
    rd_status st = rd_tensor_alloc(out, dt, values->rank, values->dims, err);
    if (st != RD_OK)
        return st;
    const float *x = values->data;
    int64_t n = rd_tensor_numel(values);
    for (int64_t i = 0; i < n; i++) {
        if (dt == RD_DT_F16) {
            ((uint16_t *)out->data)[i] = rd_f32_to_f16(x[i]);
            continue;
        }
        /* the values are scale * (q - zp) already: this recovers q exactly */
        float q = isfinite(x[i]) ? nearbyintf(x[i] / held->scale) + (float)held->zero_point : (float)held->zero_point;
        ((int8_t *)out->data)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
    }
    return RD_OK;
}

rd_status an_board_dump_path(const an_board_dumper *d, int index, const char *op_type, const char *tensor_name,
                             const rd_tensor *file_tensor, bool txt, char *path, size_t len, rd_error *err)
{
    an_dump_name dn;
    memset(&dn, 0, sizeof dn);
    dn.index = index;
    snprintf(dn.op_type, sizeof dn.op_type, "%s", op_type);
    an_dump_sanitise(tensor_name, dn.name, sizeof dn.name);
    /* a scalar is dumped as one element: the name always carries dims */
    dn.rank = file_tensor->rank > 0 ? file_tensor->rank : 1;
    for (int k = 0; k < dn.rank; k++)
        dn.dims[k] = file_tensor->rank > 0 ? file_tensor->dims[k] : 1;
    dn.dtype = file_tensor->dtype;
    dn.is_txt = txt;
    char file[1400];
    int w = an_dump_name_format(&dn, file, sizeof file);
    if (w < 0 || (size_t)w >= sizeof file)
        return rd_errorf(err, RD_E_INVAL, "tensor '%s' (%s): no dump name can be formed for it", tensor_name, op_type);
    int pw = snprintf(path, len, "%s/%s", d->dir, file);
    if (pw < 0 || (size_t)pw >= len)
        return rd_errorf(err, RD_E_LIMIT, "dump path too long: %s/%s", d->dir, file);
    return RD_OK;
}

/* The .txt dump: the values in NC1HWC2 order, one per line. */
static rd_status write_txt(const char *path, const rd_tensor *t, int c2, rd_error *err)
{
    int64_t nchw[4] = {1, 1, 1, 1};
    for (int k = 0; k < t->rank; k++)
        nchw[k] = t->dims[k];
    rd_tensor f = {0};
    rd_status st = rd_tensor_to_f32(&f, t, err);
    if (st != RD_OK)
        return st;
    int64_t c1 = (nchw[1] + c2 - 1) / c2;
    size_t n = (size_t)(nchw[0] * c1 * nchw[2] * nchw[3] * c2);
    float *native = malloc((n ? n : 1) * sizeof *native);
    if (!native) {
        rd_tensor_fini(&f);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    st = an_nchw_to_nc1hwc2(f.data, nchw, c2, native, err);
    rd_tensor_fini(&f);
    rd_atomic_file *out = NULL;
    if (st == RD_OK && rd_atomic_file_open(path, NULL, &out, err) != RD_OK)
        st = rd_error_prefix(err, "failed open dump path");
    for (size_t i = 0; out && i < n; i++)
        fprintf(rd_atomic_file_stream(out), "%.9g\n", (double)native[i]);
    if (out)
        st = rd_atomic_file_commit(out, err);
    free(native);
    return st;
}

rd_status an_board_dump_write(an_board_dumper *d, int index, const char *op_type, const char *tensor_name,
                              const rd_tensor *file_tensor, int c2, FILE *errs, rd_error *err)
{
    char path[4400];
    rd_status st = an_board_dump_path(d, index, op_type, tensor_name, file_tensor, false, path, sizeof path, err);
    if (st != RD_OK)
        return st;
    st = rd_npy_save(path, file_tensor, err);
    if (st != RD_OK)
        return rd_errorf(err, RD_E_IO, "failed open dump path: %s", path);
    d->n_written++;
    if (d->log_level < 6)
        return RD_OK;
    if (c2 <= 0 || file_tensor->rank > 4) {
        if (!d->warned_txt && errs)
            fprintf(errs, "W RKNN: no .txt dump for %s%s (%s)\n", RD_TEXT_SHOWN(tensor_name), " and others like it",
                    c2 <= 0 ? "C2 of this target is not documented" : "rank above 4");
        d->warned_txt = true;
        return RD_OK;
    }
    st = an_board_dump_path(d, index, op_type, tensor_name, file_tensor, true, path, sizeof path, err);
    if (st == RD_OK)
        st = write_txt(path, file_tensor, c2, err);
    if (st == RD_OK)
        d->n_written++;
    return st;
}
