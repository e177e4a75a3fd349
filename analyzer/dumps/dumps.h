/*
 * dumps.h: the board's per-layer dumps (librknnrt with RKNN_LOG_LEVEL=5/6, docs/dumps.md): file names
 * parsed and formatted, the native NC1HWC2 layout, and a dump folder loaded, dequantized and mapped to
 * the simulation's optimised-graph values (the runtime_error group's input).
 */
#ifndef RD_AN_DUMPS_H
#define RD_AN_DUMPS_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** One dump file name: NNN_<RuntimeOpType>_<sanitised name>_shape_<dims>_<dtype>.npy (or .txt). */
typedef struct an_dump_name {
    int index;        /* NNN: the runtime op index */
    char op_type[64]; /* fused runtime op type: ConvClip, InputOperator, ... */
    char name[1024];  /* sanitised tensor name, compiler suffixes kept */
    int rank;
    int64_t dims[RD_MAX_RANK]; /* NCHW as in the name */
    rd_dtype dtype;            /* RD_DT_F32 (float), U8, I8, F16, I16, I32 */
    bool is_txt;               /* .txt (RKNN_LOG_LEVEL=6, NC1HWC2) rather than .npy */
} an_dump_name;

/** Parses a file name (a directory part is ignored); RD_E_PARSE naming the file and what is wrong. */
rd_status an_dump_name_parse(const char *file_name, an_dump_name *out, rd_error *err);

/**
 * The inverse of an_dump_name_parse (the board side): writes the file name into buf. Returns the length
 * it needs (as snprintf), or -1 when d cannot be written (a field out of range).
 */
int an_dump_name_format(const an_dump_name *d, char *buf, size_t len);

/** How librknnrt sanitises tensor names in dump files ('/' becomes '_'); always NUL-terminates buf. */
void an_dump_sanitise(const char *tensor_name, char *buf, size_t len);

/**
 * NC1HWC2 <-> NCHW (N may be > 1; padding channels of the last C1 block are ignored on the way in and
 * written as 0 on the way out). dst holds N*C*H*W (to NCHW) or N*ceil(C/c2)*H*W*c2 (to NC1HWC2) floats.
 */
rd_status an_nc1hwc2_to_nchw(const float *src, const int64_t nchw[4], int c2, float *dst, rd_error *err);
rd_status an_nchw_to_nc1hwc2(const float *src, const int64_t nchw[4], int c2, float *dst, rd_error *err);

typedef struct an_dump_set an_dump_set; /* opaque */

/**
 * Loads every dump of dir: each name parsed, each file read (.npy, or .txt converted with plat's C2),
 * dequantized with the tensor's parameters from s, and mapped to s's optimised-graph values. A bad file
 * is recorded in the report and skipped; RD_E_NOTFOUND / RD_E_PARSE only when nothing could be read.
 * plat may be NULL (then .txt dumps are reported as unreadable). s must outlive the set.
 */
rd_status an_dump_set_load(const char *dir, const rd_platform_info *plat, rd_sim *s, an_dump_set **out, rd_error *err);

/** An rd_runtime_fn: the board's float32 tensor for an optimised-graph value, NULL when not dumped. */
const rd_tensor *an_dump_set_tensor(void *dump_set, int value);
/** The InputOperator dump for a graph input (raw: the user's data, e.g. uint8), NULL if none. */
const rd_tensor *an_dump_set_input(const an_dump_set *d, size_t graph_input);
/** The OutputOperator dump for a graph output (dequantized to float32), NULL if none. */
const rd_tensor *an_dump_set_output(const an_dump_set *d, size_t graph_output);
/** The name of the dump chosen for value (its dtype: RKNN_DUMP_QUANT=1 keeps the type the layer ran in) and
 *  its file name (may be NULL), or NULL when value has no dump. */
const an_dump_name *an_dump_set_name(const an_dump_set *d, int value, const char **file);
/** Number of dumps read successfully. */
size_t an_dump_set_count(const an_dump_set *d);
/** Number of layer dumps mapped to a tensor (0: nothing to compare, e.g. dumps from another model). */
size_t an_dump_set_mapped(const an_dump_set *d);
/** The mapping report (map_name_to_file.txt): one line per dump and per unmatched tensor. */
rd_status an_dump_set_report(const an_dump_set *d, FILE *f, rd_error *err);
void an_dump_set_destroy(an_dump_set *d);

#endif
