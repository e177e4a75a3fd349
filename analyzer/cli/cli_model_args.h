/* cli_model_args.h: parsing of the model-related options several commands share. */
#ifndef RD_AN_CLI_MODEL_ARGS_H
#define RD_AN_CLI_MODEL_ARGS_H

#include "rknn_diag/simulator.h"

#define AN_MAX_INPUTS 32

/** Storage for an input name taken from an option (the option text itself is left untouched). */
typedef struct an_name_buf {
    char name[256];
} an_name_buf;

/** --input-shape NAME=D0,D1,... into shapes[*n]; the name is copied into names[*n]. */
rd_status an_parse_input_shape(const char *text, an_name_buf *names, rd_input_shape *shapes, size_t *n, rd_error *err);

/** --input NAME=FILE (or FILE alone); the name is copied into name_buf, file points into text. */
rd_status an_parse_named_file(const char *text, an_name_buf *name_buf, const char **name, const char **file,
                              rd_error *err);

/**
 * Loads the .npy given for each graph input (by name, or positionally when names are omitted) into
 * tensors[0..n_inputs-1] in graph input order. Message says which input is missing.
 */
rd_status an_load_graph_inputs(const rd_model *m, const char *const *names, const char *const *files, size_t n_given,
                               rd_tensor *tensors, rd_error *err);

/** Per-tensor statistics in double precision (NaN and Inf counted apart). */
typedef struct an_tensor_stats {
    double min, max, mean;
    int64_t n, n_nan, n_inf;
} an_tensor_stats;
/** min, max and mean (NaN and Inf counted apart); a large tensor over pool's threads, the same figures for any count.
 */
void an_tensor_stats_compute(const rd_tensor *t, rd_pool *pool, an_tensor_stats *s);
/** One span's smallest, largest and sum (NaN ignored by the comparisons), through the vector path when vector
    and the CPU has one, else the portable one: the same bits either way (exposed for that test). */
void an_stats_span(const float *v, int64_t n, bool vector, float *lo, float *hi, double *sum);

#endif
