/*
 * edit_model.h: onnx-edit's model rewriting: graph inputs and outputs take new layouts (edit_formula.h),
 * the inverse layouts are inserted at the boundary and merged with the Reshape/Transpose layers already
 * next to it, so that the edited model computes exactly what the original did.
 */
#ifndef RD_AN_EDIT_MODEL_H
#define RD_AN_EDIT_MODEL_H

#include "edit_formula.h"

/** The new layout of one graph input or output. */
typedef struct an_edit_io {
    bool edited;
    an_layout plan; /* original layout -> edited layout */
} an_edit_io;

/**
 * Parses formula and plans it on the graph input (output false) or output named name, filling
 * io[index of that input/output]. RD_E_NOTFOUND for an unknown name (listing the valid ones),
 * RD_E_INVAL for a tensor edited twice or without static dims, RD_E_PARSE with a caret for the formula.
 */
rd_status an_edit_plan_io(const rd_model *m, const char *name, const char *formula, bool output, an_edit_io *io,
                          rd_error *err);

/** What an_edit_write did. */
typedef struct an_edit_stats {
    int inserted; /* layers inserted at the boundary (after merging) */
    int absorbed; /* the model's own Reshape/Transpose layers merged into them */
} an_edit_stats;

/**
 * Writes the edited model: ins[rd_model_input_count] and outs[rd_model_output_count] (entries with
 * edited false are kept as they are). The buffer is malloc'ed, owned by the caller.
 */
rd_status an_edit_write(const rd_model *m, const an_edit_io *ins, const an_edit_io *outs, void **out_buf,
                        size_t *out_len, an_edit_stats *stats, rd_error *err);

/** Reshape and Transpose layers the model runs (not those folded at load). */
int an_layout_layer_count(const rd_model *m);

#endif
