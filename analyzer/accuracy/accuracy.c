/*
 * accuracy.c: the per-layer accuracy analysis.
 *
 * For each sample, rd_sim_analyze streams every tensor with its golden, entire and single values; the
 * metrics of each comparison are folded into per-layer accumulators at once, and for the dump sample
 * the golden and simulator tensors are written to the snapshot as they come (.npy at once, text through
 * the writer thread of txt_writer.c, which formats while the analysis goes on). Layers are
 * the tensors of the optimised graph in execution order: the graph inputs first (with an exDataConvert
 * row for int8 inputs, as RKNN prints), then each layer, with a blank row for every tensor the compiler
 * passes fused away, placed just before the tensor it was fused into.
 *
 * With the board (o->runtime), the dump sample runs through rd_sim_analyze_ex: each tensor the board
 * dumped adds runtime_error entire (golden against the board) and single_sim (the simulator's layer on
 * the board's inputs as reference, the board's output tested), and how well the layer's inputs on the
 * board agree with the simulator's, which tells a layer that departs by itself from one fed bad inputs.
 */
#include "array_grow.h"
#include "accuracy.h"
#include "metrics.h"
#include "progress.h"
#include "tensor_dump.h"
#include "txt_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What one row accumulates over the samples. */
typedef struct row_acc {
    size_t layer;                        /* index in the result */
    an_group_acc groups[RD_GROUP_COUNT]; /* indexed by rd_group_id */
    double rank_cos;                     /* lowest effective single cosine seen: picks the worst layers */
    an_layer_runtime rt;
} row_acc;

typedef struct analysis {
    rd_sim *s;
    const an_accuracy_opts *o;
    rd_result *r;
    int sample;
    size_t n_values;
    int *row_of_value;      /* value -> row_acc index (-1 none) */
    int *int8_row_of_value; /* graph input value -> its exDataConvert row (-1 none) */
    int *f16_row_of_value;  /* value -> its exDataConvert row to float16 for float16 readers (-1 none) */
    int *i8_row_of_value;   /* value -> its exDataConvert row to int8 for int8 readers (-1 none) */
    unsigned char *read_at; /* value -> READ_BY_FP16 | READ_BY_INT8: the precisions its readers compute in */
    row_acc *rows;
    size_t n_rows, cap_rows;
    rd_name_map names;  /* map_name_to_file.txt */
    rd_stem_set *stems; /* the snapshot's file stems, unique (tensors x/y and x_y) */
    an_txt_writer *txt; /* the text files (NULL with no_txt or no output folder) */
    bool dumping;
    bool with_board;        /* this sample runs with the board's tensors */
    double *agree_of_value; /* value -> cosine of the board's tensor against the simulator's entire (NaN) */
    size_t *removed_start;  /* the tensors removed into value v: removed[removed_start[v]..[v+1]) */
    int *removed;
} analysis;

static rd_status add_row(analysis *a, const char *name, const char *op_type, const char *fused_into,
                         const char *precision, const rd_tensor *shape, int *out_row, rd_error *err)
{
    rd_layer_result *l = NULL;
    rd_status st = rd_result_add_layer(a->r, name, op_type, &l, err);
    if (st != RD_OK)
        return st;
    rd_sim_tensor t; /* the NPU op of the group computing the tensor (none for inputs and their conversions) */
    if (rd_sim_tensor_get(a->s, name, &t, NULL) == RD_OK && t.npu_op &&
        (st = rd_result_set_string(&l->npu_op, t.npu_op, err)) != RD_OK)
        return st;
    if (fused_into && (st = rd_result_set_string(&l->fused_into, fused_into, err)) != RD_OK)
        return st;
    if (precision && (st = rd_result_set_string(&l->precision, precision, err)) != RD_OK)
        return st;
    if (shape) {
        l->rank = shape->rank < 8 ? shape->rank : 8;
        for (int d = 0; d < l->rank; d++)
            l->dims[d] = shape->dims[d];
    }
    st = an_array_grow(&a->rows, &a->cap_rows, a->n_rows, sizeof *a->rows, 64, err);
    if (st != RD_OK)
        return st;
    row_acc *ra = &a->rows[a->n_rows];
    memset(ra, 0, sizeof *ra);
    ra->layer = a->r->n_layers - 1;
    ra->rank_cos = INFINITY;
    ra->rt.inputs_cos = NAN;
    ra->rt.off_grid = NAN;
    for (int g = 0; g < RD_GROUP_COUNT; g++)
        an_group_acc_init(&ra->groups[g]);
    *out_row = (int)a->n_rows++;
    return RD_OK;
}

/*
 * Which tensors the passes removed into which value, as lists per value built once (the rows are made
 * as tensors show up; scanning every value for each would make the analysis quadratic in the layers).
 * A removed tensor has no producer left, is no constant, and is absent from the optimised graph.
 */
static rd_status index_removed(analysis *a, rd_error *err)
{
    const rd_model *m = rd_sim_model(a->s);
    a->removed_start = calloc(a->n_values + 2, sizeof *a->removed_start);
    int *target = malloc((a->n_values + 1) * sizeof *target);
    if (!a->removed_start || !target) {
        free(target);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    size_t total = 0;
    for (size_t i = 0; i < a->n_values; i++) {
        rd_value_info vi;
        rd_model_value(m, i, &vi);
        rd_sim_tensor t;
        target[i] = -1;
        if (vi.producer >= 0 || vi.is_constant || rd_sim_tensor_get(a->s, vi.name, &t, NULL) != RD_OK ||
            t.fused_into < 0 || (size_t)t.fused_into >= a->n_values || t.value >= 0)
            continue;
        target[i] = t.fused_into;
        a->removed_start[(size_t)t.fused_into + 2]++;
        total++;
    }
    for (size_t v = 2; v < a->n_values + 2; v++)
        a->removed_start[v] += a->removed_start[v - 1];
    a->removed = malloc((total + 1) * sizeof *a->removed);
    if (!a->removed) {
        free(target);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < a->n_values; i++) /* ascending, so each list keeps the graph's value order */
        if (target[i] >= 0)
            a->removed[a->removed_start[(size_t)target[i] + 1]++] = (int)i;
    free(target);
    return RD_OK;
}

/* Blank rows for the tensors the passes removed into value v (a folded conv output before its BN). */
static rd_status add_removed_rows(analysis *a, int v, rd_error *err)
{
    const rd_model *m = rd_sim_model(a->s);
    rd_value_info target;
    rd_model_value(m, (size_t)v, &target);
    for (size_t k = a->removed_start[v]; k < a->removed_start[v + 1]; k++) {
        rd_value_info vi;
        rd_model_value(m, (size_t)a->removed[k], &vi);
        int row;
        rd_status st = add_row(a, vi.name, "Removed", target.name, NULL, NULL, &row, err);
        if (st != RD_OK)
            return st;
    }
    return RD_OK;
}

static const char *precision_name(const rd_sim_tensor *t)
{
    return rd_prec_name(t->precision);
}

/* RKNN's exDataConvert rows after a tensor, one per precision its readers compute in that differs from the
   one it is held in: int8 read by a float16 layer (X__float16), float16 read by an int8 layer (X__int8), as
   accuracy_analysis prints them around float16 islands. */
enum { READ_BY_FP16 = 1, READ_BY_INT8 = 2 };

/* a->read_at for the precisions of this run (one pass over the nodes: a row must not scan the graph). */
static void note_readers(analysis *a)
{
    const rd_model *m = rd_sim_model(a->s);
    for (size_t i = 0; i < rd_model_node_count(m); i++) {
        rd_node_info ni;
        rd_model_node(m, i, &ni);
        if (ni.folded)
            continue;
        rd_prec p = rd_sim_node_precision(a->s, (int)i);
        unsigned char bit = p == RD_PREC_FP16 ? READ_BY_FP16 : p == RD_PREC_INT8 ? READ_BY_INT8 : 0;
        for (int k = 0; k < ni.n_inputs; k++)
            if (ni.inputs[k] >= 0 && (size_t)ni.inputs[k] < a->n_values)
                a->read_at[ni.inputs[k]] |= bit;
    }
}

static rd_status add_convert_rows(analysis *a, const rd_sim_event *ev, const rd_sim_tensor *t, rd_error *err)
{
    const unsigned char readers = a->read_at[ev->value];
    const bool to_f16 = (readers & READ_BY_FP16) && t->precision == RD_PREC_INT8;
    const bool to_i8 = (readers & READ_BY_INT8) && t->precision == RD_PREC_FP16 && !t->via_float16 && t->quantized;
    rd_status st = RD_OK;
    char name[1100];
    int row;
    if (to_f16) {
        snprintf(name, sizeof name, "%s__float16", ev->name);
        st = add_row(a, name, "exDataConvert", NULL, "float16", ev->golden, &row, err);
        a->f16_row_of_value[ev->value] = row;
    }
    if (st == RD_OK && to_i8) {
        snprintf(name, sizeof name, "%s__int8", ev->name);
        st = add_row(a, name, "exDataConvert", NULL, "int8", ev->golden, &row, err);
        a->i8_row_of_value[ev->value] = row;
    }
    return st;
}

/* The first time a tensor shows up: its row (and, for an int8 graph input, the exDataConvert row). */
static rd_status create_rows(analysis *a, const rd_sim_event *ev, rd_error *err)
{
    rd_sim_tensor t;
    rd_status st = rd_sim_tensor_get(a->s, ev->name, &t, err);
    if (st != RD_OK)
        return st;
    st = add_removed_rows(a, ev->value, err);
    if (st != RD_OK)
        return st;
    int row;
    if (ev->node < 0) {
        st = add_row(a, ev->name, "Input", NULL, "float32", ev->golden, &row, err);
        a->row_of_value[ev->value] = row;
        if (st == RD_OK && t.precision != RD_PREC_FP32) {
            char name[1024];
            snprintf(name, sizeof name, "%s_%s", ev->name, rd_prec_name(t.precision));
            st = add_row(a, name, "exDataConvert", NULL, precision_name(&t), ev->golden, &row, err);
            a->int8_row_of_value[ev->value] = row;
        }
        if (st == RD_OK && ev->golden->dtype == RD_DT_F32)
            st = add_convert_rows(a, ev, &t, err);
        return st;
    }
    const rd_model *m = rd_sim_model(a->s);
    const char *fused = NULL;
    if (!ev->materialized && t.fused_into >= 0) {
        rd_value_info into;
        rd_model_value(m, (size_t)t.fused_into, &into);
        fused = into.name;
    }
    /* the row is labelled as RKNN's accuracy_analysis prints it: the op after the compiler's rewrites */
    st = add_row(a, ev->name, t.row_op ? t.row_op : ev->op_type, fused, ev->materialized ? precision_name(&t) : NULL,
                 ev->golden, &row, err);
    a->row_of_value[ev->value] = row;
    if (st == RD_OK && ev->materialized && ev->golden->dtype == RD_DT_F32)
        st = add_convert_rows(a, ev, &t, err);
    return st;
}

static void metrics_ctx(const analysis *a, const rd_sim_event *ev, an_metrics_ctx *q)
{
    memset(q, 0, sizeof *q);
    rd_sim_tensor t;
    if (rd_sim_tensor_get(a->s, ev->name, &t, NULL) == RD_OK && t.quantized &&
        (t.precision == RD_PREC_INT8 || t.precision == RD_PREC_INT16)) {
        q->quantized = true;
        q->scale = t.scale;
        q->zero_point = t.zero_point;
        if (t.precision == RD_PREC_INT16) {
            q->qmin = -32768;
            q->qmax = 32767;
        }
    }
    rd_sim_layer_stats ls;
    rd_sim_layer_stats_get(a->s, ev->value, &ls);
    q->fp16_overflow = ls.fp16_overflow;
    q->fp16_max_abs = ls.fp16_max_abs;
}

static void compare(const rd_tensor *ref, const rd_tensor *tested, const an_metrics_ctx *q, rd_metrics *mt)
{
    if (rd_tensor_numel(ref) != rd_tensor_numel(tested) || tested->dtype != RD_DT_F32)
        an_metrics_shape_mismatch(rd_tensor_numel(ref), rd_tensor_numel(tested), mt);
    else
        an_metrics_compute(ref->data, tested->data, rd_tensor_numel(ref), q, mt);
}

/* One comparison into one group of a row. */
static rd_status fold_group(analysis *a, int row, rd_group_id g, const rd_tensor *ref, const rd_tensor *tested,
                            const an_metrics_ctx *q, rd_error *err)
{
    row_acc *ra = &a->rows[row];
    rd_metrics mt;
    compare(ref, tested, q, &mt);
    rd_status st = an_metric_group_add(&ra->groups[g], &mt, a->sample, err);
    if (st == RD_OK && g == RD_GROUP_SIM_SINGLE) {
        double c = an_cos_effective(&mt);
        if (!(c >= ra->rank_cos))
            ra->rank_cos = isnan(c) ? -INFINITY : c;
    }
    return st;
}

static rd_status fold(analysis *a, int row, const rd_tensor *ref, const rd_tensor *entire, const rd_tensor *single,
                      const an_metrics_ctx *q, rd_error *err)
{
    rd_status st = fold_group(a, row, RD_GROUP_SIM_ENTIRE, ref, entire, q, err);
    if (st == RD_OK)
        st = fold_group(a, row, RD_GROUP_SIM_SINGLE, ref, single, q, err);
    return st;
}

/* For the dump sample: channel cosines and a histogram, kept for the worst layers at the end. */
static rd_status detail(analysis *a, int row, const rd_tensor *ref, const rd_tensor *test, rd_error *err)
{
    rd_layer_result *l = &a->r->layers[a->rows[row].layer];
    rd_status st = RD_OK;
    if (ref->rank >= 2 && l->channels.n == 0)
        st = an_channel_cos(ref->data, test->data, ref->rank, ref->dims, &l->channels, err);
    if (st == RD_OK && l->hist.n_bins == 0)
        st = an_histogram(ref->data, test->data, rd_tensor_numel(ref), 64, &l->hist, err);
    return st;
}

/* Writes one tensor into the snapshot: folder/<stem>.txt (unless no_txt) and folder/<stem>.npy. */
static rd_status snapshot_write(const analysis *a, const char *folder, const char *stem, const rd_tensor *t, char *file,
                                size_t file_len, rd_error *err)
{
    char path[4800];
    snprintf(file, file_len, "%s/%s.txt", folder, stem);
    rd_status st = RD_OK;
    if (a->txt) {
        snprintf(path, sizeof path, "%s/%s/%s.txt", a->o->output_dir, folder, stem);
        st = an_txt_writer_add(a->txt, path, t->data, rd_tensor_numel(t), err);
    }
    if (st == RD_OK) {
        snprintf(path, sizeof path, "%s/%s/%s.npy", a->o->output_dir, folder, stem);
        st = rd_npy_save(path, t, err);
    }
    return st;
}

static rd_status dump(analysis *a, const char *name, const rd_tensor *golden, const rd_tensor *sim,
                      const rd_tensor *board, rd_error *err)
{
    char stem[RD_SNAPSHOT_STEM_MAX + 32], gfile[600], sfile[600], rfile[600];
    rd_status st = rd_stem_set_take(a->stems, name, stem, sizeof stem, err);
    if (st == RD_OK)
        st = snapshot_write(a, "golden", stem, golden, gfile, sizeof gfile, err);
    if (st == RD_OK)
        st = snapshot_write(a, "simulator", stem, sim, sfile, sizeof sfile, err);
    if (st == RD_OK && board)
        st = snapshot_write(a, "runtime", stem, board, rfile, sizeof rfile, err);
    if (st == RD_OK)
        st = rd_name_map_add(&a->names, name, gfile, sfile, board ? rfile : NULL, err);
    return st;
}

/* Lowest agreement (board against simulator entire) over the outer inputs of node, through fused groups. */
static void inputs_agreement(const analysis *a, int node, int depth, an_layer_runtime *rt)
{
    const rd_model *m = rd_sim_model(a->s);
    rd_node_info ni;
    rd_model_node(m, (size_t)node, &ni);
    for (int k = 0; k < ni.n_inputs; k++) {
        int v = ni.inputs[k];
        if (v < 0)
            continue;
        rd_value_info vi;
        rd_model_value(m, (size_t)v, &vi);
        if (vi.is_constant)
            continue;
        rd_sim_tensor t;
        bool inner = rd_sim_tensor_get(a->s, vi.name, &t, NULL) == RD_OK && !t.materialized && vi.producer >= 0;
        if (inner) {
            if (depth < 8)
                inputs_agreement(a, vi.producer, depth + 1, rt);
            continue;
        }
        double c = a->agree_of_value[v];
        if (isnan(c)) {
            if (isnan(rt->inputs_cos) && !rt->worst_input[0]) /* an input the board did not dump */
                snprintf(rt->worst_input, sizeof rt->worst_input, "%s (not dumped)", vi.name);
            continue;
        }
        if (isnan(rt->inputs_cos) || c < rt->inputs_cos) {
            rt->inputs_cos = c;
            snprintf(rt->worst_input, sizeof rt->worst_input, "%s", vi.name);
        }
    }
}

/* Share of t's non-zero values that are not on the int8 grid of scale (a layer the board did not run in
   int8). The grid is k * scale: a dequantized value is (q - zero_point) * scale. */
static double off_grid_share(const rd_tensor *t, float scale)
{
    int64_t n = rd_tensor_numel(t), off = 0, nonzero = 0;
    const float *v = t->data;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == 0.0f)
            continue; /* zero is on every grid (Relu outputs are mostly zeros) */
        double c = (double)v[i] / scale;
        nonzero++;
        off += fabs(c - nearbyint(c)) > 1e-3; /* float32 dequantization stays within 1e-5 codes */
    }
    return nonzero ? (double)off / (double)nonzero : NAN;
}

/* The runtime_error cells of a row, and what the findings need. */
static rd_status fold_board(analysis *a, const rd_sim_event *ev, int row, const an_metrics_ctx *q, rd_error *err)
{
    const rd_tensor *board = ev->runtime;
    rd_metrics mt;
    compare(ev->entire, board, q, &mt);
    a->agree_of_value[ev->value] = an_cos_effective(&mt);
    row_acc *ra = &a->rows[row];
    ra->rt.dumped = true;
    rd_status st = fold_group(a, row, RD_GROUP_RT_ENTIRE, ev->golden, board, q, err);
    if (ev->node < 0) {
        /* RKNN fills both cells of the input row with the golden input against the board's */
        if (st == RD_OK)
            st = fold_group(a, row, RD_GROUP_RT_SINGLE_SIM, ev->golden, board, q, err);
        return st; /* the exDataConvert row: the board dumps no int8 input, so only the simulator group */
    }
    if (st == RD_OK && ev->single_sim)
        st = fold_group(a, row, RD_GROUP_RT_SINGLE_SIM, ev->single_sim, board, q, err);
    if (q->quantized && q->scale > 0 && board->dtype == RD_DT_F32 &&
        rd_tensor_numel(board) == rd_tensor_numel(ev->golden))
        ra->rt.off_grid = off_grid_share(board, q->scale);
    inputs_agreement(a, ev->node, 0, &ra->rt);
    return st;
}

/* An exDataConvert row: entire converts the simulator's tensor; single the golden one held at the tensor's
   own precision first (the conversion alone on its golden input, quantized as that input is). */
static rd_status fold_convert(analysis *a, const rd_sim_event *ev, rd_prec to, int row, rd_error *err)
{
    rd_sim_tensor t;
    rd_status st = rd_sim_tensor_get(a->s, ev->name, &t, err);
    rd_tensor e = {0}, g = {0};
    if (st == RD_OK)
        st = rd_tensor_clone(&e, ev->entire, err);
    if (st == RD_OK)
        st = rd_tensor_clone(&g, ev->golden, err);
    const int64_t n = rd_tensor_numel(ev->golden);
    if (st == RD_OK)
        st = rd_sim_convert(a->s, ev->name, to, e.data, n, err);
    if (st == RD_OK)
        st = rd_sim_convert(a->s, ev->name, t.precision, g.data, n, err);
    if (st == RD_OK)
        st = rd_sim_convert(a->s, ev->name, to, g.data, n, err);
    an_metrics_ctx q = {0};
    if (st == RD_OK && to == RD_PREC_INT8) {
        q.quantized = true;
        q.scale = t.scale;
        q.zero_point = t.zero_point;
    }
    if (st == RD_OK)
        st = fold(a, row, ev->golden, &e, &g, &q, err);
    rd_tensor_fini(&e);
    rd_tensor_fini(&g);
    return st;
}

/* The exDataConvert rows after the tensor of ev, if any. */
static rd_status fold_converts(analysis *a, const rd_sim_event *ev, rd_error *err)
{
    rd_status st = RD_OK;
    if (a->f16_row_of_value[ev->value] >= 0)
        st = fold_convert(a, ev, RD_PREC_FP16, a->f16_row_of_value[ev->value], err);
    if (st == RD_OK && a->i8_row_of_value[ev->value] >= 0)
        st = fold_convert(a, ev, RD_PREC_INT8, a->i8_row_of_value[ev->value], err);
    return st;
}

static rd_status on_event(void *user, const rd_sim_event *ev, rd_error *err)
{
    analysis *a = user;
    rd_status st = RD_OK;
    if (a->row_of_value[ev->value] < 0 && (st = create_rows(a, ev, err)) != RD_OK)
        return st;
    if (!ev->materialized || ev->golden->dtype != RD_DT_F32)
        return RD_OK; /* a blank row (fused) or not a float tensor */
    int row = a->row_of_value[ev->value];
    an_metrics_ctx q;
    metrics_ctx(a, ev, &q);
    bool dumping = a->dumping && a->sample == a->o->dump_sample;
    const rd_tensor *board = a->with_board ? ev->runtime : NULL;
    if (ev->node < 0) {
        an_metrics_ctx none = {0};
        st = fold(a, row, ev->golden, ev->golden, ev->golden, &none, err);
        int conv = a->int8_row_of_value[ev->value];
        if (st == RD_OK && conv >= 0)
            st = fold(a, conv, ev->golden, ev->entire, ev->single, &q, err);
        if (st == RD_OK)
            st = fold_converts(a, ev, err);
        if (st == RD_OK && board)
            st = fold_board(a, ev, row, &none, err);
        if (st == RD_OK && dumping)
            st = dump(a, ev->name, ev->golden, ev->entire, board, err);
        return st;
    }
    st = fold(a, row, ev->golden, ev->entire, ev->single, &q, err);
    if (st == RD_OK)
        st = fold_converts(a, ev, err);
    if (st == RD_OK && board)
        st = fold_board(a, ev, row, &q, err);
    if (st == RD_OK && a->sample == a->o->dump_sample)
        st = detail(a, row, ev->golden, ev->single, err);
    if (st == RD_OK && dumping)
        st = dump(a, ev->name, ev->golden, ev->entire, board, err);
    return st;
}

/* The sharding hook (an_acc_rows_fn) on one row; what it added is put in sample order and ranked. */
static rd_status rows_hook(analysis *a, row_acc *ra, rd_error *err)
{
    rd_status st = a->o->rows(a->o->rows_user, a->r, ra->layer, ra->groups, err);
    for (int g = 0; st == RD_OK && g < RD_GROUP_COUNT; g++)
        an_group_acc_sort(&ra->groups[g]);
    const an_group_acc *single = &ra->groups[RD_GROUP_SIM_SINGLE];
    ra->rank_cos = INFINITY; /* as fold_group ranks, over every sample */
    for (size_t k = 0; k < single->n; k++) {
        double c = an_cos_effective(&single->samples[k]);
        if (!(c >= ra->rank_cos))
            ra->rank_cos = isnan(c) ? -INFINITY : c;
    }
    return st;
}

/*
 * Keeps channel cosines and histograms for the o->worst_layers layers with the lowest single cosine (ties:
 * the earlier row), found by one sort. A row never ranked (NaN) keeps its details, as no row is worse.
 */
static rd_status keep_worst_details(analysis *a, rd_error *err)
{
    an_ranked *keys = malloc((a->n_rows + 1) * sizeof *keys); /* .layer: the row */
    bool *worst = calloc(a->n_rows + 1, sizeof *worst);
    if (!keys || !worst) {
        free(keys);
        free(worst);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < a->n_rows; i++) {
        if (isnan(a->rows[i].rank_cos))
            worst[i] = a->o->worst_layers > 0;
        else
            keys[n++] = (an_ranked){i, a->rows[i].rank_cos};
    }
    qsort(keys, n, sizeof *keys, an_ranked_by_cos);
    for (size_t k = 0; k < n && k < a->o->worst_layers; k++)
        worst[keys[k].layer] = true;
    for (size_t i = 0; i < a->n_rows; i++) {
        rd_layer_result *l = &a->r->layers[a->rows[i].layer];
        if (!worst[i] || isinf(a->rows[i].rank_cos)) {
            free(l->channels.cos);
            memset(&l->channels, 0, sizeof l->channels);
            free(l->hist.golden);
            free(l->hist.tested);
            memset(&l->hist, 0, sizeof l->hist);
        }
    }
    free(keys);
    free(worst);
    return RD_OK;
}

static rd_status prepare_folders(const an_accuracy_opts *o, rd_error *err)
{
    char path[4200];
    rd_status st = an_mkdirs(o->output_dir, err);
    /* our own folders inside the user's: never a link that would take the files elsewhere */
    snprintf(path, sizeof path, "%s/golden", o->output_dir);
    if (st == RD_OK)
        st = rd_dir_make(path, RD_DIR_OWN, err);
    snprintf(path, sizeof path, "%s/simulator", o->output_dir);
    if (st == RD_OK)
        st = rd_dir_make(path, RD_DIR_OWN, err);
    snprintf(path, sizeof path, "%s/runtime", o->output_dir);
    if (st == RD_OK && o->runtime)
        st = rd_dir_make(path, RD_DIR_OWN, err);
    return st;
}

rd_status an_accuracy_run(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, size_t n_samples,
                          const an_accuracy_opts *o, rd_result *out, rd_error *err)
{
    return an_accuracy_run_rt(s, inputs, n_inputs, n_samples, o, out, NULL, err);
}

rd_status an_accuracy_run_rt(rd_sim *s, const rd_tensor *inputs, size_t n_inputs, size_t n_samples,
                             const an_accuracy_opts *o, rd_result *out, an_layer_runtime **rt_out, rd_error *err)
{
    const rd_model *m = rd_sim_model(s);
    analysis a = {.s = s, .o = o, .r = out, .n_values = rd_model_value_count(m), .dumping = o->output_dir != NULL};
    a.row_of_value = malloc((a.n_values + 1) * sizeof(int));
    a.int8_row_of_value = malloc((a.n_values + 1) * sizeof(int));
    a.f16_row_of_value = malloc((a.n_values + 1) * sizeof(int));
    a.i8_row_of_value = malloc((a.n_values + 1) * sizeof(int));
    a.read_at = calloc(a.n_values + 1, 1);
    a.agree_of_value = malloc((a.n_values + 1) * sizeof(double));
    rd_status st = RD_OK;
    if (rt_out)
        *rt_out = NULL;
    if (!a.row_of_value || !a.int8_row_of_value || !a.f16_row_of_value || !a.i8_row_of_value || !a.read_at ||
        !a.agree_of_value)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK)
        note_readers(&a);
    for (size_t v = 0; st == RD_OK && v < a.n_values; v++) {
        a.row_of_value[v] = a.int8_row_of_value[v] = a.f16_row_of_value[v] = a.i8_row_of_value[v] = -1;
        a.agree_of_value[v] = NAN;
    }
    if (st == RD_OK)
        st = index_removed(&a, err);
    if (st == RD_OK && a.dumping)
        st = prepare_folders(o, err);
    if (st == RD_OK && a.dumping)
        st = rd_stem_set_create(&a.stems, err);
    if (st == RD_OK && a.dumping && !o->no_txt)
        st = an_txt_writer_create(!o->txt_inline, AN_TXT_WRITER_CAP, &a.txt, err);
    an_progress bar;
    an_progress_init(&bar, o->progress, o->progress_tty, "analysing");
    for (size_t k = 0; k < n_samples && st == RD_OK; k++) {
        a.sample = o->sample_base + (int)k;
        a.with_board = o->runtime && a.sample == o->dump_sample;
        if (a.with_board)
            st = rd_sim_analyze_ex(s, inputs + k * n_inputs, n_inputs, on_event, &a, o->runtime, o->runtime_user, err);
        else
            st = rd_sim_analyze(s, inputs + k * n_inputs, n_inputs, on_event, &a, err);
        if (st != RD_OK)
            rd_error_prefix(err, "sample %d", a.sample);
        an_progress_update(&bar, k + 1, n_samples);
    }
    an_progress_done(&bar);
    size_t n_folded = n_samples; /* with a merge's hook, the samples of every shard */
    for (size_t i = 0; st == RD_OK && o->rows && i < a.n_rows; i++) {
        st = rows_hook(&a, &a.rows[i], err);
        if (a.rows[i].groups[RD_GROUP_SIM_ENTIRE].n > n_folded)
            n_folded = a.rows[i].groups[RD_GROUP_SIM_ENTIRE].n;
    }
    if (st == RD_OK && a.txt)
        st = an_txt_writer_finish(a.txt, err); /* every text file in place before map_name_to_file.txt */
    if (st == RD_OK) {
        out->n_samples = (int)n_folded;
        out->has_runtime = o->runtime != NULL;
        for (size_t i = 0; i < a.n_rows && st == RD_OK; i++) {
            rd_layer_result *l = &out->layers[a.rows[i].layer];
            for (int g = 0; g < RD_GROUP_COUNT && st == RD_OK; g++)
                if (a.rows[i].groups[g].n && !an_metric_group_finish(&a.rows[i].groups[g], &l->groups[g]))
                    st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
        if (st == RD_OK)
            st = keep_worst_details(&a, err);
    }
    if (st == RD_OK && rt_out) {
        an_layer_runtime *rt = calloc(out->n_layers + 1, sizeof *rt);
        if (!rt)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        for (size_t i = 0; rt && i < out->n_layers; i++)
            rt[i].inputs_cos = rt[i].off_grid = NAN;
        for (size_t i = 0; rt && i < a.n_rows; i++)
            rt[a.rows[i].layer] = a.rows[i].rt;
        *rt_out = rt;
    }
    if (st == RD_OK && a.dumping) {
        char path[4200];
        snprintf(path, sizeof path, "%s/map_name_to_file.txt", o->output_dir);
        st = rd_name_map_save(&a.names, path, err);
    }
    for (size_t i = 0; i < a.n_rows; i++)
        for (int g = 0; g < RD_GROUP_COUNT; g++)
            an_group_acc_fini(&a.rows[i].groups[g]);
    an_txt_writer_destroy(a.txt);
    free(a.agree_of_value);
    free(a.removed_start);
    free(a.removed);
    free(a.rows);
    free(a.row_of_value);
    free(a.int8_row_of_value);
    free(a.f16_row_of_value);
    free(a.i8_row_of_value);
    free(a.read_at);
    rd_name_map_fini(&a.names);
    rd_stem_set_destroy(a.stems);
    return st;
}
