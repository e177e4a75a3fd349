/*
 * qdq_internal.h: the writer shared by the QDQ export (qdq_export.c) and its integer form
 * (qdq_integer.c): names made unique, renamed values, and which nodes are written in integer form.
 */
#ifndef RD_SIM_QDQ_INTERNAL_H
#define RD_SIM_QDQ_INTERNAL_H

#include "sim_internal.h"

typedef struct qdq_writer {
    rd_sim *s;
    const rd_model *m;
    rd_onnx_builder *b;
    char **src;          /* per value: the name its producer writes (NULL: its own) */
    char **use;          /* per value: the name its readers use (NULL: its own) */
    char **w_in;         /* per node: replacement of input 1 (dequantized weights), NULL: none */
    char **b_in;         /* per node: replacement of input 2 (dequantized int32 bias), NULL: none */
    int *replaced_reads; /* per value: reads taken over by w_in/b_in or by an integer node */
    char **made;         /* names created here, to keep them unique */
    size_t n_made, cap_made;
    const struct rd_warn_sink *notes;
    rd_qdq_form form;
    bool *integer; /* per node: written as ConvInteger/MatMulInteger (integer form only) */
    char **u8;     /* per value: its uint8 codes, once an integer node has made them */
    char **u8_zp;  /* per value: their zero point (the int8 one + 128) */
    char **half;   /* per value: a float constant (or an int8 activation) rounded to half for float16
                      layers, or a float16 activation put on its int8 grid for int8 layers; NULL: none */
    int opset;     /* the default domain's opset written (set before the graph is) */
} qdq_writer;

void qdq_note(const qdq_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** A new name base+suffix (then base+suffix_2, ...) that no value of the model and no earlier one has;
    NULL when out of memory. Owned by the writer. */
char *qdq_fresh_name(qdq_writer *w, const char *base, const char *suffix);

/** The name readers of value v use (its dequantized side when it is a graph input). */
const char *qdq_value_use(const qdq_writer *w, int v);
/** The name the producer of value v writes (NAME_prequant when it is requantized after). */
const char *qdq_value_src(const qdq_writer *w, int v);

/** Value v is an int8 activation as the simulation's integer layers read it (materialised, quantized). */
bool qdq_int8_activation(const qdq_writer *w, int v);

/** A scalar initializer (float32, float64, int8, uint8 or int32) named name. */
rd_status qdq_scalar_init(qdq_writer *w, const char *name, rd_dtype dt, double v, rd_error *err);

/**
 * Integer form: marks in w->integer the nodes the simulation computes in int32 that can be written as
 * ConvInteger/MatMulInteger, counts the reads those nodes take over in w->replaced_reads, and notes each
 * one that stays in QDQ form and why.
 */
rd_status qdq_integer_plan(qdq_writer *w, rd_error *err);

/** Writes node i (marked by qdq_integer_plan) in integer form; its output is qdq_value_src of out[0]. */
rd_status qdq_integer_write(qdq_writer *w, int i, rd_error *err);

#endif /* RD_SIM_QDQ_INTERNAL_H */
