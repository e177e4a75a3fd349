/*
 * edit_formula.h: RKNN's onnx_edit transform formulas ('ab,c,d,qk[a=2,k=8]->aq,cd,1,kb') and the layout
 * plans they become.
 *
 * A formula is parsed once (an_formula_parse: syntax only) and applied to a tensor shape
 * (an_formula_plan: sizes, inference, rank). A plan (an_layout) describes any chain of Reshape and
 * Transpose layers as one index map: the tensor is cut into "atoms" (factors of its dims, in the input's
 * index order) which the output visits in another order. Plans grow by appending Reshape/Transpose
 * layers (an_layout_reshape, _transpose), which is how onnx-edit cancels inserted layers against the
 * model's own, and turn back into at most three ONNX layers (an_layout_ops).
 */
#ifndef RD_AN_EDIT_FORMULA_H
#define RD_AN_EDIT_FORMULA_H

#include "rknn_diag/simulator.h"

#define AN_FORMULA_MAX_LEN 256                 /* characters of one formula */
#define AN_FORMULA_LETTERS 26                  /* a..z */
#define AN_FORMULA_MAX_SIZE ((int64_t)1 << 40) /* largest size in brackets */
#define AN_LAYOUT_MAX_ATOMS 64                 /* factors a plan tracks; a chain needing more is not merged */

/** One comma-separated group of a side: its letters (outermost first), or a '1' when n_letters is 0. */
typedef struct an_formula_group {
    int n_letters;
    int letter[AN_FORMULA_LETTERS]; /* 0..25 for a..z */
    int pos[AN_FORMULA_LETTERS];    /* byte offset of each letter in the text */
    int start;                      /* byte offset of the group's first character */
} an_formula_group;

typedef struct an_formula {
    char text[AN_FORMULA_MAX_LEN + 1]; /* as given, for error carets */
    int n_left, n_right;               /* groups on each side, each <= RD_MAX_RANK */
    an_formula_group left[RD_MAX_RANK], right[RD_MAX_RANK];
    int64_t assigned[AN_FORMULA_LETTERS]; /* size given in brackets, 0 when not given */
    int assign_pos[AN_FORMULA_LETTERS];   /* byte offset of the assignment's letter */
    int arrow;                            /* byte offset of "->" */
} an_formula;

/**
 * Parses a formula. Spaces are ignored. RD_E_PARSE for every malformed formula, with a message that
 * says why and shows the formula with a caret under the offending character (several lines; the caller
 * prefixes its context).
 */
rd_status an_formula_parse(const char *text, an_formula *out, rd_error *err);

/** A chain of Reshape/Transpose layers as one index map (see the file comment). */
typedef struct an_layout {
    int in_rank;
    int64_t in_dims[AN_LAYOUT_MAX_ATOMS];
    int n_atoms;
    int64_t atom[AN_LAYOUT_MAX_ATOMS]; /* sizes > 1, in the input's index order (outermost first) */
    int order[AN_LAYOUT_MAX_ATOMS];    /* the output's index order: its j-th atom is atom[order[j]] */
    int out_rank;
    int64_t out_dims[AN_LAYOUT_MAX_ATOMS]; /* the current (output) dims */
} an_layout;

/**
 * The plan of f on a tensor of the given shape: Reshape (split into letters) -> Transpose -> Reshape
 * (merge). RD_E_PARSE with a caret for a formula that does not fit the shape (group count, a '1' on a
 * dim that is not 1, sizes that do not multiply or divide); RD_E_INVAL for unknown or zero dims.
 */
rd_status an_formula_plan(const an_formula *f, int rank, const int64_t *dims, an_layout *out, rd_error *err);

/** The identity plan of a shape (dims >= 1). RD_E_INVAL for a zero or unknown dim. */
rd_status an_layout_init(an_layout *l, int rank, const int64_t *dims, rd_error *err);

/**
 * Appends a Reshape to dims (every dim >= 1). RD_E_INVAL when the element count differs;
 * RD_E_UNSUPPORTED when the new dims cut an atom in a way no factorisation allows (6 then 4x... after a
 * transpose) or more than AN_LAYOUT_MAX_ATOMS atoms would be needed: the chain cannot be one plan.
 */
rd_status an_layout_reshape(an_layout *l, int rank, const int64_t *dims, rd_error *err);

/** Appends a Transpose (perm[i]: the input dim that output dim i takes). RD_E_INVAL for a bad perm. */
rd_status an_layout_transpose(an_layout *l, const int64_t *perm, int rank, rd_error *err);

/** The plan that undoes l: from l's output dims back to its input dims. */
void an_layout_inverse(const an_layout *l, an_layout *out);

/** True when the plan moves no element (a pure Reshape or nothing). */
bool an_layout_is_reshape(const an_layout *l);

/** One ONNX layer of a plan. */
typedef struct an_layout_op {
    bool transpose; /* Transpose with perm v[0..rank-1]; else Reshape to dims v[0..rank-1] */
    int rank;
    int64_t v[RD_MAX_RANK];
} an_layout_op;

/**
 * The fewest layers (0 to 3) that compute the plan: nothing, one Reshape, one Transpose, a Reshape and a
 * Transpose in either order, or Reshape -> Transpose -> Reshape. RD_E_UNSUPPORTED when a layer would
 * need a rank above RD_MAX_RANK.
 */
rd_status an_layout_ops(const an_layout *l, an_layout_op ops[3], int *n_ops, rd_error *err);

/** Moves the elements of src (the input dims, row-major, esize bytes each) into dst (the output dims). */
void an_layout_apply(const an_layout *l, const void *src, void *dst, size_t esize);

/** Number of elements of the plan's tensor. */
int64_t an_layout_numel(const an_layout *l);

#endif
