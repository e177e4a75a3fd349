/*
 * built_internal.h: the state of an_built (built.h), shared by built.c (loading, checks, names),
 * built_rknn.c (a .rknn's groups, precisions, parameters and weights), built_log.c (a build log's groups
 * and precisions) and built_report.c (the mapping report and the fidelity notes).
 */
#ifndef RD_AN_BUILT_INTERNAL_H
#define RD_AN_BUILT_INTERNAL_H

#include "built.h"

#include <stdint.h>

/* What a tensor name of the built model is to the ONNX model. */
typedef enum bt_kind {
    BT_NONE = 0,  /* a constant, the register commands, the placeholder 0: not an activation */
    BT_ONNX,      /* the ONNX tensor of that name */
    BT_VARIANT,   /* another form of an ONNX tensor: X__float16, X_int8, X#1, X_rs, ... */
    BT_AUX,       /* a compiler buffer of an ONNX tensor: X_exSecondary (ignored) */
    BT_COMPILER,  /* a compiler-made tensor: X_BScfgTensor, X_weight_0, tempMC*, fenceConv* (ignored) */
    BT_UNMATCHED, /* an activation name the model does not have */
} bt_kind;

/* One .rknn tensor as mapped (indices into the .rknn graph). */
typedef struct bt_tensor {
    bt_kind kind;
    char base[512]; /* the ONNX name it stands for (BT_ONNX, BT_VARIANT, BT_AUX) */
} bt_tensor;

/* One NPU op of the built model (a .rknn node or a layer-table row) as our graph computes it. */
typedef struct bt_group {
    int src;            /* .rknn node index or log row index */
    int line;           /* log line, 0 for a .rknn node */
    const char *op;     /* RKNN op type (owned by the model or the log) */
    const char *name;   /* FullName */
    const char *target; /* "NPU", "CPU", ... */
    int out;            /* value it materialises, -1 when none (I/O operators, conversions) */
    int *inner;         /* values fused inside (malloc'ed) */
    size_t n_inner;
    bool applied;   /* rd_sim_set_group accepted it (or nothing to fuse) */
    char note[400]; /* why it was not applied, or what is notable */
} bt_group;

/* What the built model decided for one ONNX tensor (by name: stable across simulations). */
typedef struct bt_decision {
    char *name;
    rd_prec prec;         /* held precision */
    bool via_f16;         /* computed in float16, then converted (exDataConvert) */
    bool has_q8, has_q16; /* parameters from the .rknn */
    float scale;
    int32_t zp;
    char why[200]; /* where it came from */
} bt_decision;

/* One conversion (an exDataConvert node or row). */
typedef struct bt_convert {
    int src, line;
    const char *name; /* its FullName or output name */
    char value[512];  /* the ONNX tensor converted */
    rd_prec from, to;
} bt_convert;

/* One weight tensor of the .rknn against ours. */
typedef struct bt_weight {
    char name[256], node[256];
    int64_t n_codes, n_equal, n_off1, n_far;
    int n_pad, n_pad_equal; /* channels with a padding lane, and those whose lane = our zero point */
    bool used_file_codes;
    char note[256];
} bt_weight;

struct an_built {
    an_built_request req;
    char *rknn_path, *log_path, *model_path;
    rd_rknn_model *rknn; /* NULL without --rknn */
    const rd_rknn_graph *g;
    rd_rknn_log *log; /* NULL without --rknn-build-log */
    const rd_rknn_build_log *bl;
    const char *target, *toolkit, *compiler; /* of the .rknn, else of the log ("" when not printed) */
    bt_tensor *tensors;                      /* per .rknn tensor */
    bt_group *groups;
    size_t n_groups;
    bt_decision *decisions;
    size_t n_decisions;
    bt_convert *converts;
    size_t n_converts;
    bt_weight *weights;
    size_t n_weights;
    char **notes; /* shown on stderr once and in the report */
    size_t n_notes;
    char **calibrated; /* tensors calibration covered (no parameters from the file) */
    size_t n_calibrated;
    size_t n_mean_from_attrs; /* inputs whose mean/std came from the .rknn's attrs */
    bool dtype_from_file;
    rd_qdtype dtype;
    size_t n_io_ops; /* InputOperator / OutputOperator nodes or rows */
    size_t table;    /* the log's layer table used */
};

/* built.c */
bt_kind an_bt_classify(const rd_model *m, const char *name, int role, char *base, size_t len);
rd_status an_bt_note(an_built *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bt_decision *an_bt_decision(an_built *b, const char *name, rd_error *err);
rd_prec an_bt_prec_of_dtype(int onnx_dtype, bool *known);
rd_prec an_bt_prec_of_text(const char *data_type, bool *known);
/** The group value set by a backward search from out to the tensors the op reads (reads[0..n_reads)). */
rd_status an_bt_inner_of(const rd_model *m, int out, const int *reads, size_t n_reads, const bool *stored, int **inner,
                         size_t *n_inner, char *why, size_t why_len, rd_error *err);
/** Declares every collected group on s (inner sets shared by two groups are dropped from both first). */
rd_status an_bt_apply_groups(an_built *b, rd_sim *s, rd_error *err);
/** Precisions and parameters of every decision on s. */
rd_status an_bt_apply_decisions(an_built *b, rd_sim *s, bool params, rd_error *err);
void an_bt_clear_mapping(an_built *b);
/** Appends a conversion of ONNX value `value` named `name` (zeroed otherwise); NULL when out of memory. */
bt_convert *an_bt_add_convert(an_built *b, const rd_model *m, int value, const char *name, rd_error *err);

/* built_rknn.c / built_log.c */
rd_status an_bt_rknn_check(an_built *b, const rd_model *m, rd_error *err);
rd_status an_bt_rknn_map(an_built *b, rd_sim *s, rd_error *err);
rd_status an_bt_rknn_weights(an_built *b, rd_sim *s, rd_error *err);
rd_status an_bt_log_check(an_built *b, const rd_model *m, rd_error *err);
rd_status an_bt_log_map(an_built *b, rd_sim *s, rd_error *err);

#endif
