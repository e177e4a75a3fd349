/*
 * dump_read.h: reading one board dump file into float32 (dump_set.c's helper): .npy as written, .txt
 * (RKNN_LOG_LEVEL=6) as whitespace-separated numbers in NC1HWC2, and quantized codes dequantized.
 */
#ifndef RD_AN_DUMP_READ_H
#define RD_AN_DUMP_READ_H

#include "dumps.h"

/**
 * Reads path, whose parsed name is dn, into out in dn's dtype and dims (a .txt converted from NC1HWC2
 * with c2 to NCHW). The data must agree with the name (dtype, dims, number count). RD_E_PARSE / RD_E_IO
 * naming the file otherwise.
 */
rd_status an_dump_read_raw(const char *path, const an_dump_name *dn, int c2, rd_tensor *out, rd_error *err);

/**
 * Converts a raw dump to float32: float16 widened, int8 codes dequantized with info's scale and zero
 * point ((q - zp) * scale); other integer dtypes, or int8 without parameters, are RD_E_UNSUPPORTED.
 */
rd_status an_dump_dequantize(const rd_tensor *raw, const rd_sim_tensor *info, const char *tensor, rd_tensor *out,
                             rd_error *err);

#endif
